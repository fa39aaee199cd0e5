/* schema_prune.c: pruning of unknown fields and defaulting for custom resources, following
 * apiextensions-apiserver's structural pruning and structural defaulting (schema.h). */
#include "schema.h"
#include "schema_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const objectmeta_fields[] = {
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
    NULL,
};

struct prune_ctx {
    struct as_path path;
    cJSON *found; /* unsorted unknown paths, or NULL when nobody asked */
    vmop_rc rc;
};

static void record(struct prune_ctx *c, const char *key)
{
    size_t old;
    cJSON *s;
    if (!c->found)
        return;
    old = as_path_child(&c->path, key);
    s = cJSON_CreateString(c->path.buf);
    as_path_pop(&c->path, old);
    if (!s) {
        c->rc = VMOP_E_NOMEM;
        return;
    }
    cJSON_AddItemToArray(c->found, s);
}

static int is_objectmeta_field(const char *k)
{
    for (int i = 0; objectmeta_fields[i]; i++)
        if (strcmp(objectmeta_fields[i], k) == 0)
            return 1;
    return 0;
}

/* ObjectMeta of the root or of an embedded resource: only unknown top-level keys go. */
static void prune_meta(struct prune_ctx *c, cJSON *meta)
{
    cJSON *k = meta->child, *next;
    size_t old = as_path_child(&c->path, "metadata");
    for (; k; k = next) {
        next = k->next;
        if (!is_objectmeta_field(k->string)) {
            record(c, k->string);
            cJSON_Delete(cJSON_DetachItemViaPointer(meta, k));
        }
    }
    as_path_pop(&c->path, old);
}

static const cJSON *additional_schema(const cJSON *s, int *ret_allow_all)
{
    const cJSON *ap = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
    *ret_allow_all = cJSON_IsTrue(ap);
    return cJSON_IsObject(ap) ? ap : NULL;
}

static void prune(struct prune_ctx *c, cJSON *x, const cJSON *s, int embedded, int depth);

/* Under x-kubernetes-preserve-unknown-fields: keep unknown keys, still prune inside known ones. */
static void skip_prune(struct prune_ctx *c, cJSON *x, const cJSON *s, int depth)
{
    int allow_all;
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
    const cJSON *ap = additional_schema(s, &allow_all);
    if (cJSON_IsObject(x)) {
        cJSON *k;
        cJSON_ArrayForEach(k, x)
        {
            const cJSON *ps = cJSON_GetObjectItemCaseSensitive(props, k->string);
            size_t old;
            if (!ps)
                ps = ap;
            if (!ps)
                continue;
            old = as_path_child(&c->path, k->string);
            prune(c, k, ps, 0, depth + 1);
            as_path_pop(&c->path, old);
        }
    } else if (cJSON_IsArray(x)) {
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
        cJSON *e;
        long i = 0;
        if (!cJSON_IsObject(items))
            return;
        cJSON_ArrayForEach(e, x)
        {
            size_t old = as_path_index(&c->path, i++);
            prune(c, e, items, 0, depth + 1);
            as_path_pop(&c->path, old);
        }
    }
}

static void prune(struct prune_ctx *c, cJSON *x, const cJSON *s, int embedded, int depth)
{
    if (depth > AS_MAX_DEPTH)
        return; /* validation reports nothing deeper; the server caps body sizes */
    if (s && as_schema_flag(s, "x-kubernetes-preserve-unknown-fields")) {
        if (embedded || as_schema_flag(s, "x-kubernetes-embedded-resource")) {
            cJSON *m = cJSON_GetObjectItemCaseSensitive(x, "metadata");
            if (cJSON_IsObject(m))
                prune_meta(c, m);
        }
        skip_prune(c, x, s, depth);
        return;
    }
    if (cJSON_IsObject(x)) {
        cJSON *k, *next;
        int allow_all = 0;
        const cJSON *props = s ? cJSON_GetObjectItemCaseSensitive(s, "properties") : NULL;
        const cJSON *ap = s ? additional_schema(s, &allow_all) : NULL;
        int emb = embedded || (s && as_schema_flag(s, "x-kubernetes-embedded-resource"));
        for (k = x->child; k; k = next) {
            const cJSON *ps;
            next = k->next;
            if (emb) {
                if ((strcmp(k->string, "apiVersion") == 0 || strcmp(k->string, "kind") == 0) &&
                    cJSON_IsString(k))
                    continue;
                if (strcmp(k->string, "metadata") == 0 && cJSON_IsObject(k)) {
                    prune_meta(c, k);
                    continue;
                }
            }
            ps = s ? cJSON_GetObjectItemCaseSensitive(props, k->string) : NULL;
            if (!ps)
                ps = ap;
            if (ps) {
                size_t old = as_path_child(&c->path, k->string);
                prune(c, k, ps, 0, depth + 1);
                as_path_pop(&c->path, old);
            } else if (!allow_all) {
                record(c, k->string);
                cJSON_Delete(cJSON_DetachItemViaPointer(x, k));
            }
        }
    } else if (cJSON_IsArray(x)) {
        const cJSON *items = s ? cJSON_GetObjectItemCaseSensitive(s, "items") : NULL;
        cJSON *e;
        long i = 0;
        cJSON_ArrayForEach(e, x)
        {
            size_t old = as_path_index(&c->path, i++);
            prune(c, e, cJSON_IsObject(items) ? items : NULL, 0, depth + 1);
            as_path_pop(&c->path, old);
        }
    }
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

vmop_rc as_schema_prune(const cJSON *schema, cJSON *obj, cJSON *unknown, struct vmop_err *err)
{
    struct prune_ctx *c;
    vmop_rc rc = VMOP_OK;
    const char **v = NULL;
    int n, i = 0;
    cJSON *e;

    if (!cJSON_IsObject(obj))
        return vmop_fail(err, VMOP_E_INVALID, "object to prune is not a JSON object");
    c = calloc(1, sizeof(*c));
    if (!c)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory pruning an object");
    if (unknown && !(c->found = cJSON_CreateArray())) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory pruning an object");
        goto out;
    }
    /* The root is a resource: apiVersion/kind/metadata are the server's. A schema-less CRD
     * version (no schema) preserves everything. */
    if (!cJSON_IsObject(schema))
        goto out;
    prune(c, obj, schema, 1, 0);
    if (c->rc != VMOP_OK) {
        rc = vmop_fail(err, c->rc, "out of memory pruning an object");
        goto out;
    }
    if (!unknown)
        goto out;
    n = cJSON_GetArraySize(c->found);
    if (n == 0)
        goto out;
    v = calloc((size_t)n, sizeof(*v));
    if (!v) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory pruning an object");
        goto out;
    }
    cJSON_ArrayForEach(e, c->found) v[i++] = e->valuestring;
    qsort(v, (size_t)n, sizeof(*v), str_cmp);
    for (i = 0; i < n; i++) {
        cJSON *s = cJSON_CreateString(v[i]);
        if (!s) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory pruning an object");
            goto out;
        }
        cJSON_AddItemToArray(unknown, s);
    }
out:
    free(v);
    cJSON_Delete(c->found);
    free(c);
    return rc;
}

/* structuraldefaulting.Default + PruneNonNullableNullsWithoutDefaults. */
static vmop_rc apply_defaults(cJSON *x, const cJSON *s, int depth)
{
    vmop_rc rc;
    if (!s || depth > AS_MAX_DEPTH)
        return VMOP_OK;
    if (cJSON_IsObject(x)) {
        const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
        int allow_all;
        const cJSON *ap = additional_schema(s, &allow_all);
        const cJSON *p;
        cJSON *k, *next;
        cJSON_ArrayForEach(p, props)
        {
            const cJSON *def = cJSON_GetObjectItemCaseSensitive(p, "default");
            cJSON *cur = cJSON_GetObjectItemCaseSensitive(x, p->string);
            if (!def)
                continue;
            if (!cur || (cJSON_IsNull(cur) && !as_schema_flag(p, "nullable"))) {
                cJSON *copy = cJSON_Duplicate(def, 1);
                if (!copy)
                    return VMOP_E_NOMEM;
                if (cur)
                    cJSON_ReplaceItemInObjectCaseSensitive(x, p->string, copy);
                else
                    cJSON_AddItemToObject(x, p->string, copy);
            }
        }
        for (k = x->child; k; k = next) {
            const cJSON *ps = cJSON_GetObjectItemCaseSensitive(props, k->string);
            next = k->next;
            if (ps && cJSON_IsNull(k) && !cJSON_GetObjectItemCaseSensitive(ps, "default") &&
                !as_schema_flag(ps, "nullable")) {
                cJSON_Delete(cJSON_DetachItemViaPointer(x, k));
                continue;
            }
            if (!ps)
                ps = ap;
            if (ps && (rc = apply_defaults(k, ps, depth + 1)) != VMOP_OK)
                return rc;
        }
    } else if (cJSON_IsArray(x)) {
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
        cJSON *e;
        if (!cJSON_IsObject(items))
            return VMOP_OK;
        cJSON_ArrayForEach(e, x)
        {
            if ((rc = apply_defaults(e, items, depth + 1)) != VMOP_OK)
                return rc;
        }
    }
    return VMOP_OK;
}

vmop_rc as_schema_default(const cJSON *schema, cJSON *obj, struct vmop_err *err)
{
    const cJSON *props, *p;
    if (!cJSON_IsObject(obj))
        return vmop_fail(err, VMOP_E_INVALID, "object to default is not a JSON object");
    if (!cJSON_IsObject(schema))
        return VMOP_OK;
    /* The root's metadata belongs to the server: default every other root property. */
    props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
    cJSON_ArrayForEach(p, props)
    {
        const cJSON *def = cJSON_GetObjectItemCaseSensitive(p, "default");
        cJSON *cur = cJSON_GetObjectItemCaseSensitive(obj, p->string);
        if (strcmp(p->string, "metadata") == 0 || strcmp(p->string, "apiVersion") == 0 ||
            strcmp(p->string, "kind") == 0)
            continue;
        if (def && (!cur || (cJSON_IsNull(cur) && !as_schema_flag(p, "nullable")))) {
            cJSON *copy = cJSON_Duplicate(def, 1);
            if (!copy)
                return vmop_fail(err, VMOP_E_NOMEM, "out of memory applying defaults");
            if (cur)
                cJSON_ReplaceItemInObjectCaseSensitive(obj, p->string, copy);
            else
                cJSON_AddItemToObject(obj, p->string, copy);
            cur = copy;
        }
        if (cur && cJSON_IsNull(cur) && !def && !as_schema_flag(p, "nullable")) {
            cJSON_Delete(cJSON_DetachItemViaPointer(obj, cur));
            continue;
        }
        if (cur && apply_defaults(cur, p, 1) != VMOP_OK)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory applying defaults");
    }
    return VMOP_OK;
}
