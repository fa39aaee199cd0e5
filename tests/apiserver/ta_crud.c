/* ta_crud.c: the resource endpoints of kube-testapi: routing of /api/v1/... and /apis/<g>/<v>/...,
 * and create, get, list (selectors, limit/continue, Table), update (RV conflicts, generation,
 * status subresource, finalizers), patch (merge, JSON, strategic for built-ins, apply as upsert),
 * delete (preconditions, propagation policy, finalizers) and deletecollection.
 * Handlers run with the store lock held from routing to the printed answer (objects are immutable,
 * but CRD updates can replace a type's versions). Watches are handed to ta_watch.c. */
#include "ta_http.h"

#include "ta_as.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const known_meta[] = {"name",
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
                                         NULL};

static void api_version_of(const struct ta_rtype *rt, const struct ta_version *v, char *buf,
                           size_t n)
{
    if (rt->group[0])
        snprintf(buf, n, "%s/%s", rt->group, v->name);
    else
        snprintf(buf, n, "%s", v->name);
}

int ta_rtype_is(const struct ta_rtype *rt, const char *group, const char *plural)
{
    return strcmp(rt->group, group) == 0 && strcmp(rt->plural, plural) == 0;
}

static int uses_generation(const struct ta_rtype *rt)
{
    return !rt->builtin || ta_rtype_is(rt, "apiextensions.k8s.io", "customresourcedefinitions");
}

static vmop_rc nomem(struct vmop_err *err)
{
    return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
}

/* ---- routing ------------------------------------------------------------------------------- */

/* Splits the path into route fields; 0 = a resource path, 1 = a discovery path, -1 = not found. */
static int route(struct ta_req *rq)
{
    char *segs[12];
    size_t n = 0, i = 0, rest;
    char *p, *save = NULL;
    rq->seg_buf = strdup(rq->path);
    if (!rq->seg_buf)
        return -1;
    for (p = strtok_r(rq->seg_buf, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
        if (n == sizeof(segs) / sizeof(segs[0]))
            return -1;
        segs[n++] = p;
    }
    if (n == 0)
        return -1;
    if (strcmp(segs[0], "api") == 0) {
        rq->group = "";
        if (n == 1)
            return 1;
        rq->version = segs[1];
        i = 2;
    } else if (strcmp(segs[0], "apis") == 0) {
        if (n == 1)
            return 1;
        rq->group = segs[1];
        if (n == 2)
            return 1;
        rq->version = segs[2];
        i = 3;
    } else {
        return -1;
    }
    if (i == n)
        return 1;
    if (strcmp(segs[i], "watch") == 0) {
        rq->watch_path = 1;
        i++;
    }
    rest = n - i;
    if (rest >= 3 && strcmp(segs[i], "namespaces") == 0 &&
        !(rq->group[0] == '\0' && rest == 3 &&
          (strcmp(segs[i + 2], "status") == 0 || strcmp(segs[i + 2], "finalize") == 0))) {
        rq->ns = segs[i + 1];
        rq->plural = segs[i + 2];
        rq->name = rest > 3 ? segs[i + 3] : NULL;
        rq->sub = rest > 4 ? segs[i + 4] : NULL;
        if (rest > 5)
            return -1;
    } else if (rest >= 1) {
        rq->plural = segs[i];
        rq->name = rest > 1 ? segs[i + 1] : NULL;
        rq->sub = rest > 2 ? segs[i + 2] : NULL;
        if (rest > 3)
            return -1;
    }
    return 0;
}

/* ---- output -------------------------------------------------------------------------------- */

/* Appends the object's JSON as served in version v (apiVersion rewritten when stored in another).
 */
static void add_obj_text(struct vbuf *b, const struct ta_rtype *rt, const struct ta_version *v,
                         struct ta_obj *o)
{
    char av[2 * TA_MAX_NAME];
    const char *cur = ta_jstr(o->json, "apiVersion");
    api_version_of(rt, v, av, sizeof(av));
    if (cur && strcmp(cur, av) == 0) {
        const char *t = ta_obj_text(o);
        if (t)
            vbuf_adds(b, t);
        else
            b->err = VMOP_E_NOMEM;
    } else {
        cJSON *c = cJSON_Duplicate(o->json, 1);
        char *t;
        ta_jset_str(c, "apiVersion", av);
        t = c ? cJSON_PrintUnformatted(c) : NULL;
        cJSON_Delete(c);
        if (t)
            vbuf_adds(b, t);
        else
            b->err = VMOP_E_NOMEM;
        free(t);
    }
}

static enum as_include include_param(const struct ta_req *rq)
{
    const char *inc = ta_query(rq, "includeObject");
    if (inc && strcmp(inc, "None") == 0)
        return AS_INCLUDE_NONE;
    if (inc && strcmp(inc, "Object") == 0)
        return AS_INCLUDE_OBJECT;
    return AS_INCLUDE_METADATA;
}

/* Columns for a Table of this type (new array, caller frees) or NULL. */
cJSON *ta_table_columns(const struct ta_rtype *rt, const struct ta_version *v);
cJSON *ta_table_columns(const struct ta_rtype *rt, const struct ta_version *v)
{
    cJSON *cols = NULL;
    struct vmop_err e = {0};
    if (rt->builtin) {
        if (as_table_builtin_columns(rt->group, rt->plural, &cols, &e))
            return NULL;
        return cols;
    }
    return v->columns ? cJSON_Duplicate(v->columns, 1) : cJSON_CreateArray();
}

/* Answers a Table for objs; returns VMOP_E_UNSUPPORTED when no Table code is linked. */
static vmop_rc reply_table(struct ta_req *rq, struct ta_obj **objs, size_t n, const char *cont,
                           int v1beta1, struct vmop_err *err)
{
    cJSON *items = cJSON_CreateArray(), *cols = ta_table_columns(rq->rt, rq->ver), *table = NULL,
          *meta;
    size_t i;
    char rv[32];
    vmop_rc rc;
    struct vmop_err e = {0};
    if (!items)
        return nomem(err);
    for (i = 0; i < n; i++)
        cJSON_AddItemReferenceToArray(items, objs[i]->json);
    rc = as_table_build(cols, items, include_param(rq), 1, (long long)time(NULL), &table, &e);
    cJSON_Delete(items);
    cJSON_Delete(cols);
    if (rc == VMOP_E_UNSUPPORTED)
        return rc;
    if (rc) {
        *err = e;
        return rc;
    }
    if (v1beta1)
        ta_jset_str(table, "apiVersion", "meta.k8s.io/v1beta1");
    meta = ta_jobj(table, "metadata", 1);
    snprintf(rv, sizeof(rv), "%llu", rq->s->st.rv);
    ta_jset_str(meta, "resourceVersion", rv);
    if (cont)
        ta_jset_str(meta, "continue", cont);
    ta_reply_json(rq, 200, table);
    return VMOP_OK;
}

static vmop_rc reply_obj(struct ta_req *rq, int code, struct ta_obj *o, struct vmop_err *err)
{
    struct vbuf b;
    int v1beta1;
    if (strcmp(rq->method, "GET") == 0 && ta_accept_table(rq, &v1beta1)) {
        vmop_rc rc = reply_table(rq, &o, 1, NULL, v1beta1, err);
        if (rc != VMOP_E_UNSUPPORTED)
            return rc;
    }
    vbuf_init(&b, VBUF_DEFAULT_MAX);
    add_obj_text(&b, rq->rt, rq->ver, o);
    if (vbuf_error(&b)) {
        vbuf_free(&b);
        return nomem(err);
    }
    ta_reply_text(rq, code, vbuf_take(&b));
    return VMOP_OK;
}

/* ---- errors -------------------------------------------------------------------------------- */

static vmop_rc fail_not_found(struct ta_req *rq, const struct ta_rtype *rt, const char *name,
                              struct vmop_err *err)
{
    char *q = ta_qualified(rt);
    vmop_rc rc;
    ta_req_details(rq, rt, name);
    rc = ta_fail(err, 404, "NotFound", "%s \"%s\" not found", q ? q : rt->plural, name);
    free(q);
    return rc;
}

static vmop_rc fail_conflict(struct ta_req *rq, const struct ta_rtype *rt, const char *name,
                             struct vmop_err *err)
{
    char *q = ta_qualified(rt);
    vmop_rc rc;
    ta_req_details(rq, rt, name);
    rc = ta_fail(err, 409, "Conflict",
                 "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please "
                 "apply your changes to the latest version and try again",
                 q ? q : rt->plural, name);
    free(q);
    return rc;
}

/* 422 with causes (taken). */
static vmop_rc fail_invalid(struct ta_req *rq, const struct ta_rtype *rt, const char *name,
                            cJSON *causes, struct vmop_err *err)
{
    if (!rq) {
        cJSON_Delete(causes);
        return ta_fail(err, 422, "Invalid", "%s \"%s\" is invalid", rt->kind, name);
    }
    cJSON_Delete(rq->causes);
    rq->causes = causes;
    free(rq->long_msg);
    rq->long_msg = as_invalid_message(rt->kind, rt->group, name, causes);
    snprintf(rq->d_name, sizeof(rq->d_name), "%s", name);
    snprintf(rq->d_group, sizeof(rq->d_group), "%s", rt->group);
    snprintf(rq->d_kind, sizeof(rq->d_kind), "%s", rt->kind);
    return ta_fail(err, 422, "Invalid", "%s \"%s\" is invalid", rt->kind,
                   name); /* long_msg is what is sent */
}

static void add_cause(cJSON *causes, const char *reason, const char *field, const char *msg)
{
    cJSON *c = cJSON_CreateObject();
    if (!c)
        return;
    cJSON_AddStringToObject(c, "reason", reason);
    cJSON_AddStringToObject(c, "message", msg);
    cJSON_AddStringToObject(c, "field", field);
    cJSON_AddItemToArray(causes, c);
}

/* ---- the write chain ----------------------------------------------------------------------- */

/* Removes unknown metadata keys (reported in unknown when given). */
static void prune_meta(cJSON *obj, cJSON *unknown)
{
    cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata"), *c, *next;
    if (!cJSON_IsObject(m))
        return;
    for (c = m->child; c; c = next) {
        size_t i;
        int known = 0;
        next = c->next;
        for (i = 0; known_meta[i]; i++)
            if (strcmp(c->string, known_meta[i]) == 0)
                known = 1;
        if (!known) {
            char path[300];
            snprintf(path, sizeof(path), "metadata.%s", c->string);
            if (unknown)
                cJSON_AddItemToArray(unknown, cJSON_CreateString(path));
            cJSON_Delete(cJSON_DetachItemViaPointer(m, c));
        }
    }
}

/* Metadata checks every write does; appends causes. */
static void check_meta(const struct ta_rtype *rt, cJSON *obj, cJSON *causes)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata"), *it;
    const char *name = ta_jstr(m, "name");
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(m, "labels");
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(m, "annotations");
    char msg[600];
    if (name && ta_rtype_is(rt, "", "namespaces") && !ta_valid_dns_label(name)) {
        snprintf(msg, sizeof(msg),
                 "Invalid value: \"%.253s\": a lowercase RFC 1123 label must consist of lower case "
                 "alphanumeric characters or '-', and must start and end with an alphanumeric "
                 "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                 name);
        add_cause(causes, "FieldValueInvalid", "metadata.name", msg);
    } else if (name && !ta_rtype_is(rt, "", "namespaces") && !ta_valid_dns_subdomain(name) &&
               !ta_rtype_is(rt, "", "events")) {
        snprintf(msg, sizeof(msg),
                 "Invalid value: \"%.253s\": a lowercase RFC 1123 subdomain must consist of lower "
                 "case alphanumeric characters, '-' or '.', and must start and end with an "
                 "alphanumeric character (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                 name);
        add_cause(causes, "FieldValueInvalid", "metadata.name", msg);
    }
    if (labels && !cJSON_IsObject(labels))
        add_cause(causes, "FieldValueTypeInvalid", "metadata.labels",
                  "Invalid value: must be a map of strings");
    cJSON_ArrayForEach(it, labels)
    {
        if (!cJSON_IsString(it)) {
            snprintf(msg, sizeof(msg), "metadata.labels.%.200s", it->string);
            add_cause(causes, "FieldValueTypeInvalid", msg, "Invalid value: must be a string");
        } else if (strlen(it->valuestring) > 63) {
            char field[300];
            snprintf(field, sizeof(field), "metadata.labels");
            snprintf(msg, sizeof(msg),
                     "Invalid value: \"%.80s\": must be no more than 63 characters",
                     it->valuestring);
            add_cause(causes, "FieldValueInvalid", field, msg);
        }
    }
    if (ann && !cJSON_IsObject(ann))
        add_cause(causes, "FieldValueTypeInvalid", "metadata.annotations",
                  "Invalid value: must be a map of strings");
    cJSON_ArrayForEach(it, ann)
    {
        if (!cJSON_IsString(it)) {
            snprintf(msg, sizeof(msg), "metadata.annotations.%.200s", it->string);
            add_cause(causes, "FieldValueTypeInvalid", msg, "Invalid value: must be a string");
        }
    }
    it = cJSON_GetObjectItemCaseSensitive(m, "finalizers");
    if (it && !cJSON_IsArray(it))
        add_cause(causes, "FieldValueTypeInvalid", "metadata.finalizers",
                  "Invalid value: must be a list of strings");
}

/* fieldValidation + schema chain (prune, default, validate) and kind-specific normalisation.
 * rq may be NULL (internal writes: no field validation). */
static vmop_rc write_chain(struct ta_server *s, struct ta_req *rq, struct ta_rtype *rt,
                           const struct ta_version *ver, cJSON *obj, const cJSON *old,
                           struct vmop_err *err)
{
    cJSON *unknown = cJSON_CreateArray(), *causes = cJSON_CreateArray();
    const char *name = ta_meta_str(obj, "name");
    const char *fv = rq ? ta_query(rq, "fieldValidation") : "Ignore";
    vmop_rc rc = VMOP_OK;
    if (!unknown || !causes) {
        rc = nomem(err);
        goto out;
    }
    if (!fv || !*fv)
        fv = "Warn";
    if (strcmp(fv, "Strict") != 0 && strcmp(fv, "Warn") != 0 && strcmp(fv, "Ignore") != 0) {
        rc = ta_fail(err, 400, "BadRequest",
                     "fieldValidation must be one of \"Ignore\", \"Warn\", or \"Strict\"");
        goto out;
    }
    if (!rt->builtin && ver->schema) {
        rc = as_schema_prune(ver->schema, obj, unknown, err);
        if (rc)
            goto out;
    }
    prune_meta(obj, unknown);
    if (cJSON_GetArraySize(unknown) > 0 && strcmp(fv, "Ignore") != 0) {
        struct vbuf b;
        const cJSON *u;
        vbuf_init(&b, 64 << 10);
        cJSON_ArrayForEach(u, unknown)
        {
            if (strcmp(fv, "Warn") == 0) {
                char w[600];
                snprintf(w, sizeof(w), "unknown field \"%.500s\"", u->valuestring);
                if (rq)
                    ta_add_warning(rq, w);
            } else {
                vbuf_addf(&b, "%sunknown field \"%s\"", b.len ? ", " : "", u->valuestring);
            }
        }
        if (strcmp(fv, "Strict") == 0) {
            char *v = strchr(ver->name, '/') ? NULL : ver->name;
            if (rq) {
                free(rq->long_msg);
                rq->long_msg = NULL;
                if (!vbuf_error(&b)) {
                    struct vbuf m;
                    vbuf_init(&m, 128 << 10);
                    vbuf_addf(&m,
                              "%s in version \"%s\" cannot be handled as a %s: strict decoding "
                              "error: %s",
                              rt->kind, v ? v : "", rt->kind, vbuf_str(&b));
                    rq->long_msg = vbuf_take(&m);
                    vbuf_free(&m);
                }
            }
            vbuf_free(&b);
            rc = ta_fail(err, 400, "BadRequest", "strict decoding error: unknown fields");
            goto out;
        }
        vbuf_free(&b);
    }
    check_meta(rt, obj, causes);
    if (rt->builtin) {
        rc = ta_builtin_normalize(s, rt, obj, old, causes, err);
        if (rc)
            goto out;
    } else if (ver->schema) {
        rc = as_schema_default(ver->schema, obj, err);
        if (!rc)
            rc = as_schema_validate(ver->schema, obj, old, causes, err);
        if (rc == VMOP_E_UNSUPPORTED) {
            vmop_err_clear(err);
            rc = VMOP_OK;
        }
        if (rc)
            goto out;
    }
    if (cJSON_GetArraySize(causes) > 0) {
        rc = fail_invalid(rq, rt, name ? name : "", causes, err);
        causes = NULL;
    }
out:
    cJSON_Delete(unknown);
    cJSON_Delete(causes);
    return rc;
}

static void copy_field(cJSON *dst, const cJSON *src, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, key);
    cJSON_DeleteItemFromObjectCaseSensitive(dst, key);
    if (v)
        cJSON_AddItemToObject(dst, key, cJSON_Duplicate(v, 1));
}

/* 1 when obj differs from old outside metadata (and status when it has a subresource). */
static int spec_changed(const cJSON *obj, const cJSON *old, int skip_status)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, obj)
    {
        const cJSON *o;
        if (strcmp(c->string, "metadata") == 0 || strcmp(c->string, "apiVersion") == 0 ||
            strcmp(c->string, "kind") == 0 || (skip_status && strcmp(c->string, "status") == 0))
            continue;
        o = cJSON_GetObjectItemCaseSensitive(old, c->string);
        if (!o || !cJSON_Compare(c, o, 1))
            return 1;
    }
    cJSON_ArrayForEach(c, old)
    {
        if (strcmp(c->string, "metadata") == 0 || strcmp(c->string, "apiVersion") == 0 ||
            strcmp(c->string, "kind") == 0 || (skip_status && strcmp(c->string, "status") == 0))
            continue;
        if (!cJSON_GetObjectItemCaseSensitive(obj, c->string))
            return 1;
    }
    return 0;
}

static int finalizer_count(const cJSON *obj)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "finalizers");
    return cJSON_IsArray(f) ? cJSON_GetArraySize(f) : 0;
}

static int has_finalizer(const cJSON *obj, const char *name)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "finalizers"),
                *it;
    cJSON_ArrayForEach(it,
                       f) if (cJSON_IsString(it) && strcmp(it->valuestring, name) == 0) return 1;
    return 0;
}

vmop_rc ta_update_locked(struct ta_server *s, struct ta_req *rq, struct ta_rtype *rt,
                         const struct ta_version *ver, struct ta_obj *old, cJSON *obj,
                         int is_status, int check_rv, struct ta_obj **ret_obj, struct vmop_err *err)
{
    struct ta_store *st = &s->st;
    cJSON *meta, *oldmeta = cJSON_GetObjectItemCaseSensitive(old->json, "metadata");
    const char *rv, *uid, *name;
    char av[2 * TA_MAX_NAME];
    struct ta_obj *o;
    vmop_rc rc;
    if (!cJSON_IsObject(obj)) {
        cJSON_Delete(obj);
        return ta_fail(err, 400, "BadRequest", "the body of the request must be a JSON object");
    }
    meta = ta_jobj(obj, "metadata", 1);
    if (!meta) {
        cJSON_Delete(obj);
        return nomem(err);
    }
    name = ta_jstr(meta, "name");
    if (name && strcmp(name, old->name) != 0) {
        rc = ta_fail(err, 400, "BadRequest",
                     "the name of the object (%.253s) does not match the name on the URL (%s)",
                     name, old->name);
        cJSON_Delete(obj);
        return rc;
    }
    if (rt->namespaced) {
        const char *ns = ta_jstr(meta, "namespace");
        if (ns && *ns && strcmp(ns, old->ns) != 0) {
            cJSON_Delete(obj);
            return ta_fail(err, 400, "BadRequest",
                           "the namespace of the provided object does not match the namespace "
                           "sent on the request");
        }
    }
    rv = ta_jstr(meta, "resourceVersion");
    if (check_rv) {
        if ((!rv || !*rv) && !rt->builtin) {
            cJSON *causes = cJSON_CreateArray();
            add_cause(causes, "FieldValueInvalid", "metadata.resourceVersion",
                      "Invalid value: 0x0: must be specified for an update");
            cJSON_Delete(obj);
            return fail_invalid(rq, rt, old->name, causes, err);
        }
        if (rv && *rv && strtoull(rv, NULL, 10) != old->rv) {
            cJSON_Delete(obj);
            return fail_conflict(rq, rt, old->name, err);
        }
    }
    uid = ta_jstr(meta, "uid");
    if (uid && *uid && strcmp(uid, old->uid) != 0) {
        rc = ta_fail(err, 409, "Conflict",
                     "Precondition failed: UID in precondition: %.64s, UID in object meta: %s", uid,
                     old->uid);
        cJSON_Delete(obj);
        return rc;
    }
    if (is_status) {
        /* only status is taken from the request */
        cJSON *n = cJSON_Duplicate(old->json, 1);
        if (!n) {
            cJSON_Delete(obj);
            return nomem(err);
        }
        copy_field(n, obj, "status");
        cJSON_Delete(obj);
        obj = n;
        meta = ta_jobj(obj, "metadata", 1);
    } else if (ver->has_status) {
        copy_field(obj, old->json, "status");
    }
    /* server-owned metadata */
    ta_jset_str(meta, "name", old->name);
    if (rt->namespaced)
        ta_jset_str(meta, "namespace", old->ns);
    copy_field(meta, oldmeta, "uid");
    copy_field(meta, oldmeta, "creationTimestamp");
    copy_field(meta, oldmeta, "deletionTimestamp");
    copy_field(meta, oldmeta, "deletionGracePeriodSeconds");
    copy_field(meta, oldmeta, "generation");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "selfLink");
    api_version_of(rt, ver, av, sizeof(av));
    ta_jset_str(obj, "apiVersion", av);
    ta_jset_str(obj, "kind", rt->kind);
    if (!is_status || !rt->builtin) {
        rc = write_chain(s, rq, rt, ver, obj, old->json, err);
        if (rc) {
            cJSON_Delete(obj);
            return rc;
        }
        meta = ta_jobj(obj, "metadata", 1);
    }
    if (ta_rtype_is(rt, "apiextensions.k8s.io", "customresourcedefinitions") && !is_status) {
        cJSON *causes = cJSON_CreateArray();
        rc = ta_crd_prepare(s, obj, old, causes, err);
        if (!rc && cJSON_GetArraySize(causes) > 0) {
            cJSON_Delete(obj);
            return fail_invalid(rq, rt, old->name, causes, err);
        }
        cJSON_Delete(causes);
        if (rc) {
            cJSON_Delete(obj);
            return rc;
        }
    }
    /* finalizers cannot be added while deleting */
    if (cJSON_GetObjectItemCaseSensitive(oldmeta, "deletionTimestamp")) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(meta, "finalizers"), *it;
        cJSON_ArrayForEach(it, f)
        {
            if (cJSON_IsString(it) && !has_finalizer(old->json, it->valuestring)) {
                cJSON *causes = cJSON_CreateArray();
                char msg[512];
                snprintf(msg, sizeof(msg),
                         "Forbidden: no new finalizers can be added if the object is being "
                         "deleted, found new finalizers []string{\"%.200s\"}",
                         it->valuestring);
                add_cause(causes, "FieldValueForbidden", "metadata.finalizers", msg);
                cJSON_Delete(obj);
                return fail_invalid(rq, rt, old->name, causes, err);
            }
        }
    }
    if (uses_generation(rt) && spec_changed(obj, old->json, ver->has_status)) {
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(oldmeta, "generation");
        ta_jset_num(meta, "generation", (cJSON_IsNumber(g) ? g->valuedouble : 0) + 1);
    }
    /* a no-op write changes nothing, not even the RV */
    {
        char rvb[32];
        snprintf(rvb, sizeof(rvb), "%llu", old->rv);
        ta_jset_str(meta, "resourceVersion", rvb);
        if (cJSON_Compare(obj, old->json, 1)) {
            cJSON_Delete(obj);
            *ret_obj = ta_obj_ref(old);
            return VMOP_OK;
        }
    }
    if (cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp") && finalizer_count(obj) == 0) {
        cJSON_Delete(obj);
        return ta_store_remove(st, rt, old->key, ret_obj, err);
    }
    o = ta_obj_new(obj, rt->namespaced);
    if (!o)
        return nomem(err);
    rc = ta_store_put(st, rt, ta_obj_ref(o), TA_EV_MODIFIED, err);
    if (rc) {
        ta_obj_unref(o);
        return rc;
    }
    if (ta_rtype_is(rt, "apiextensions.k8s.io", "customresourcedefinitions")) {
        rc = ta_crd_apply(s, o->json, err);
        if (rc) {
            ta_obj_unref(o);
            return rc;
        }
    }
    *ret_obj = o;
    return VMOP_OK;
}

/* ---- create -------------------------------------------------------------------------------- */

static vmop_rc create_locked(struct ta_req *rq, cJSON *obj, const char *url_name,
                             struct ta_obj **ret_obj, struct vmop_err *err)
{
    struct ta_server *s = rq->s;
    struct ta_rtype *rt = rq->rt;
    const struct ta_version *ver = rq->ver;
    cJSON *meta;
    const char *name, *gen, *ns;
    char av[2 * TA_MAX_NAME], ts[32], uid[37], namebuf[TA_MAX_NAME + 8];
    struct ta_obj *o;
    vmop_rc rc = VMOP_OK;
    int tries;

    if (!cJSON_IsObject(obj)) {
        rc = ta_fail(err, 400, "BadRequest", "the body of the request must be a JSON object");
        goto fail;
    }
    api_version_of(rt, ver, av, sizeof(av));
    {
        const char *k = ta_jstr(obj, "kind"), *a = ta_jstr(obj, "apiVersion");
        if ((k && strcmp(k, rt->kind) != 0) || (a && strcmp(a, av) != 0)) {
            rc = ta_fail(err, 400, "BadRequest",
                         "the API version in the data (%.100s) does not match the expected API "
                         "version (%s)",
                         a ? a : "", av);
            if (k && strcmp(k, rt->kind) != 0) {
                vmop_err_clear(err);
                rc = ta_fail(err, 400, "BadRequest",
                             "the kind in the data (%.100s) does not match the expected kind (%s)",
                             k, rt->kind);
            }
            goto fail;
        }
    }
    ta_jset_str(obj, "apiVersion", av);
    ta_jset_str(obj, "kind", rt->kind);
    meta = ta_jobj(obj, "metadata", 1);
    if (!meta) {
        rc = nomem(err);
        goto fail;
    }
    if (url_name)
        ta_jset_str(meta, "name", url_name);
    ns = ta_jstr(meta, "namespace");
    if (rt->namespaced) {
        struct ta_rtype *nst = ta_store_find_type(&s->st, "", "namespaces");
        struct ta_obj *nso;
        if (ns && *ns && strcmp(ns, rq->ns) != 0) {
            rc = ta_fail(err, 400, "BadRequest",
                         "the namespace of the provided object does not match the namespace sent "
                         "on the request");
            goto fail;
        }
        ta_jset_str(meta, "namespace", rq->ns);
        nso = nst ? ta_rtype_get(nst, rq->ns) : NULL;
        if (!nso) {
            ta_req_details(rq, nst, rq->ns);
            rc = ta_fail(err, 404, "NotFound", "namespaces \"%.253s\" not found", rq->ns);
            goto fail;
        }
        if (ta_meta_str(nso->json, "deletionTimestamp")) {
            ta_req_details(rq, rt, ta_jstr(meta, "name"));
            rc = ta_fail(err, 403, "Forbidden",
                         "%s \"%s\" is forbidden: unable to create new content in namespace %s "
                         "because it is being terminated",
                         rt->plural, ta_jstr(meta, "name") ? ta_jstr(meta, "name") : "", rq->ns);
            goto fail;
        }
    } else {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "namespace");
    }
    name = ta_jstr(meta, "name");
    gen = ta_jstr(meta, "generateName");
    if ((!name || !*name) && (!gen || !*gen)) {
        cJSON *causes = cJSON_CreateArray();
        add_cause(causes, "FieldValueRequired", "metadata.name",
                  "Required value: name or generateName is required");
        cJSON_Delete(obj);
        return fail_invalid(rq, rt, "", causes, err);
    }
    /* server-owned fields */
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "deletionTimestamp");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "deletionGracePeriodSeconds");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "selfLink");
    ta_uuid(uid);
    ta_jset_str(meta, "uid", uid);
    ta_now_rfc3339(ts);
    ta_jset_str(meta, "creationTimestamp", ts);
    if (uses_generation(rt))
        ta_jset_num(meta, "generation", 1);
    else
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "generation");
    if (ver->has_status && !rt->builtin)
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    for (tries = 0; (!name || !*name) && tries < 8; tries++) {
        char sfx[6];
        ta_random_suffix(sfx, 5);
        snprintf(namebuf, sizeof(namebuf), "%.*s%s", 58, gen, sfx);
        if (rt->namespaced) {
            char key[2 * TA_MAX_NAME + 16];
            snprintf(key, sizeof(key), "%s/%s", rq->ns, namebuf);
            if (ta_rtype_get(rt, key))
                continue;
        } else if (ta_rtype_get(rt, namebuf)) {
            continue;
        }
        ta_jset_str(meta, "name", namebuf);
        name = ta_jstr(meta, "name");
    }
    rc = write_chain(s, rq, rt, ver, obj, NULL, err);
    if (rc)
        goto fail;
    if (ta_rtype_is(rt, "apiextensions.k8s.io", "customresourcedefinitions")) {
        cJSON *causes = cJSON_CreateArray();
        rc = ta_crd_prepare(s, obj, NULL, causes, err);
        if (!rc && cJSON_GetArraySize(causes) > 0) {
            rc = fail_invalid(rq, rt, ta_meta_str(obj, "name"), causes, err);
            causes = NULL;
        }
        cJSON_Delete(causes);
        if (rc)
            goto fail;
    }
    o = ta_obj_new(obj, rt->namespaced);
    obj = NULL;
    if (!o)
        return nomem(err);
    if (ta_rtype_get(rt, o->key)) {
        char *q = ta_qualified(rt);
        ta_req_details(rq, rt, o->name);
        rc = ta_fail(err, 409, "AlreadyExists", "%s \"%s\" already exists", q ? q : rt->plural,
                     o->name);
        free(q);
        ta_obj_unref(o);
        return rc;
    }
    rc = ta_store_put(&s->st, rt, ta_obj_ref(o), TA_EV_ADDED, err);
    if (!rc && ta_rtype_is(rt, "apiextensions.k8s.io", "customresourcedefinitions"))
        rc = ta_crd_apply(s, o->json, err);
    if (rc) {
        ta_obj_unref(o);
        return rc;
    }
    *ret_obj = o;
    return VMOP_OK;
fail:
    cJSON_Delete(obj);
    return rc;
}

cJSON *ta_proto_decode(const unsigned char *data, size_t n); /* ta_proto.c */

static cJSON *parse_body(struct ta_req *rq, struct vmop_err *err)
{
    const char *end = NULL, *ct = ta_header(rq, "Content-Type");
    cJSON *j;
    if (ct && strstr(ct, "protobuf")) {
        /* kubectl's typed generators (create namespace/configmap/secret) send protobuf */
        j = ta_proto_decode((const unsigned char *)vbuf_str(&rq->body), rq->body.len);
        if (j)
            return j;
        ta_fail(err, 415, "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: "
                "application/json, application/yaml");
        return NULL;
    }
    if (rq->body.len == 0) {
        ta_fail(err, 400, "BadRequest", "the request body is empty");
        return NULL;
    }
    j = cJSON_ParseWithLengthOpts(vbuf_str(&rq->body), rq->body.len, &end, 0);
    if (!j)
        ta_fail(err, 400, "BadRequest",
                "the body of the request could not be decoded as JSON (YAML bodies are not "
                "supported by this test server)");
    return j;
}

/* ---- list ---------------------------------------------------------------------------------- */

static char *make_continue(unsigned long long rv, const char *key)
{
    cJSON *c = cJSON_CreateObject();
    char *t, *b = NULL;
    cJSON_AddNumberToObject(c, "rv", (double)rv);
    cJSON_AddStringToObject(c, "start", key);
    t = cJSON_PrintUnformatted(c);
    cJSON_Delete(c);
    if (t)
        b = ta_b64((const unsigned char *)t, strlen(t));
    free(t);
    return b;
}

static vmop_rc handle_list(struct ta_req *rq, struct vmop_err *err)
{
    struct ta_rtype *rt = rq->rt;
    struct ta_store *st = &rq->s->st;
    struct ta_selector *ls = NULL, *fs = NULL;
    const char *q;
    size_t limit = 0, i, n = 0, cap = 0;
    struct ta_obj **objs = NULL;
    char prefix[TA_MAX_NAME + 2] = "", *cont = NULL, *start = NULL;
    const char *name_eq;
    vmop_rc rc = VMOP_OK;
    int table, v1beta1;

    if ((q = ta_query(rq, "labelSelector")) && *q) {
        rc = ta_label_selector_parse(q, &ls, err);
        if (rc)
            goto out;
    }
    if ((q = ta_query(rq, "fieldSelector")) && *q) {
        rc = ta_field_selector_parse(q, rt, rq->ver, &fs, err);
        if (rc)
            goto out;
    }
    if ((q = ta_query(rq, "limit")) && *q) {
        char *end;
        long long l = strtoll(q, &end, 10);
        if (*end || l < 0) {
            rc = ta_fail(err, 400, "BadRequest", "invalid limit");
            goto out;
        }
        limit = l > TA_MAX_LIST_LIMIT ? TA_MAX_LIST_LIMIT : (size_t)l;
    }
    if ((q = ta_query(rq, "continue")) && *q) {
        size_t dn;
        unsigned char *d = ta_unb64(q, &dn);
        cJSON *c = d ? cJSON_ParseWithLength((const char *)d, dn) : NULL;
        const cJSON *crv = cJSON_GetObjectItemCaseSensitive(c, "rv");
        const char *s = ta_jstr(c, "start");
        free(d);
        if (!s || !cJSON_IsNumber(crv)) {
            cJSON_Delete(c);
            rc = ta_fail(err, 400, "BadRequest", "continue key is not valid: illegal base64");
            goto out;
        }
        if ((unsigned long long)crv->valuedouble < st->dropped_rv) {
            cJSON_Delete(c);
            rc = ta_fail(err, 410, "Expired",
                         "The provided continue parameter is too old to display a consistent "
                         "list result. You can start a new list without the continue parameter.");
            goto out;
        }
        start = strdup(s);
        cJSON_Delete(c);
        if (!start) {
            rc = nomem(err);
            goto out;
        }
    }
    if (rq->ns)
        snprintf(prefix, sizeof(prefix), "%s/", rq->ns);
    name_eq = ta_selector_name_eq(fs);
    i = start ? ta_rtype_lower_bound(rt, start) : ta_rtype_lower_bound(rt, prefix);
    if (name_eq && rq->ns && !start) {
        char key[2 * TA_MAX_NAME + 4];
        snprintf(key, sizeof(key), "%s%s", prefix, name_eq);
        i = ta_rtype_lower_bound(rt, key);
    }
    for (; i < rt->n_objs; i++) {
        struct ta_obj *o = rt->objs[i];
        if (prefix[0] && strncmp(o->key, prefix, strlen(prefix)) != 0)
            break;
        if (name_eq && strcmp(o->name, name_eq) != 0) {
            if (rq->ns)
                break;
            continue;
        }
        if (!ta_selector_match_labels(ls, o->json) || !ta_selector_match_fields(fs, o->json))
            continue;
        if (limit && n == limit) {
            cont = make_continue(st->rv, o->key);
            break;
        }
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            struct ta_obj **no = realloc(objs, nc * sizeof(*no));
            if (!no) {
                rc = nomem(err);
                goto out;
            }
            objs = no;
            cap = nc;
        }
        objs[n++] = o;
    }
    table = ta_accept_table(rq, &v1beta1);
    if (table) {
        rc = reply_table(rq, objs, n, cont, v1beta1, err);
        if (rc != VMOP_E_UNSUPPORTED)
            goto out;
        rc = VMOP_OK;
    }
    {
        struct vbuf b;
        char av[2 * TA_MAX_NAME];
        api_version_of(rt, rq->ver, av, sizeof(av));
        vbuf_init(&b, (size_t)1 << 30);
        vbuf_addf(
            &b, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":\"%llu\"",
            rt->list_kind, av, st->rv);
        if (cont)
            vbuf_addf(&b, ",\"continue\":\"%s\"", cont);
        vbuf_adds(&b, "},\"items\":[");
        for (i = 0; i < n; i++) {
            if (i)
                vbuf_add(&b, ",", 1);
            add_obj_text(&b, rt, rq->ver, objs[i]);
        }
        vbuf_adds(&b, "]}");
        if (vbuf_error(&b)) {
            vbuf_free(&b);
            rc = nomem(err);
            goto out;
        }
        ta_reply_text(rq, 200, vbuf_take(&b));
    }
out:
    free(objs);
    free(cont);
    free(start);
    ta_selector_free(ls);
    ta_selector_free(fs);
    return rc;
}

/* ---- delete -------------------------------------------------------------------------------- */

static void add_finalizer(cJSON *obj, const char *f)
{
    cJSON *m = ta_jobj(obj, "metadata", 1), *arr;
    if (has_finalizer(obj, f))
        return;
    arr = cJSON_GetObjectItemCaseSensitive(m, "finalizers");
    if (!cJSON_IsArray(arr)) {
        cJSON_DeleteItemFromObjectCaseSensitive(m, "finalizers");
        arr = cJSON_AddArrayToObject(m, "finalizers");
    }
    cJSON_AddItemToArray(arr, cJSON_CreateString(f));
}

vmop_rc ta_delete_locked(struct ta_server *s, struct ta_rtype *rt, struct ta_obj *cur,
                         const char *policy, struct ta_obj **ret_obj, struct vmop_err *err)
{
    struct ta_store *st = &s->st;
    cJSON *n, *m;
    char ts[32];
    struct ta_obj *o;
    vmop_rc rc;
    int is_ns = ta_rtype_is(rt, "", "namespaces");
    if (ta_meta_str(cur->json, "deletionTimestamp")) {
        *ret_obj = ta_obj_ref(cur);
        return VMOP_OK;
    }
    if (finalizer_count(cur->json) == 0 && !is_ns &&
        (!policy || strcmp(policy, "Background") == 0)) {
        rc = ta_store_remove(st, rt, cur->key, ret_obj, err);
        if (!rc && ta_rtype_is(rt, "apiextensions.k8s.io", "customresourcedefinitions"))
            ta_crd_removed(s, (*ret_obj)->json);
        return rc;
    }
    n = cJSON_Duplicate(cur->json, 1);
    if (!n)
        return nomem(err);
    if (policy && strcmp(policy, "Foreground") == 0)
        add_finalizer(n, "foregroundDeletion");
    else if (policy && strcmp(policy, "Orphan") == 0)
        add_finalizer(n, "orphan");
    m = ta_jobj(n, "metadata", 1);
    ta_now_rfc3339(ts);
    ta_jset_str(m, "deletionTimestamp", ts);
    ta_jset_num(m, "deletionGracePeriodSeconds", 0);
    if (uses_generation(rt)) {
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(m, "generation");
        ta_jset_num(m, "generation", (cJSON_IsNumber(g) ? g->valuedouble : 0) + 1);
    }
    if (is_ns) {
        cJSON *status = ta_jobj(n, "status", 1);
        ta_jset_str(status, "phase", "Terminating");
    }
    o = ta_obj_new(n, rt->namespaced);
    if (!o)
        return nomem(err);
    rc = ta_store_put(st, rt, ta_obj_ref(o), TA_EV_MODIFIED, err);
    if (rc) {
        ta_obj_unref(o);
        return rc;
    }
    st->gc_dirty = 1;
    pthread_cond_signal(&st->gc_wake);
    *ret_obj = o;
    return VMOP_OK;
}

/* DeleteOptions from the body or the query. */
static vmop_rc delete_options(struct ta_req *rq, cJSON **ret_opts, struct vmop_err *err)
{
    cJSON *opts = NULL;
    const char *q;
    if (rq->body.len) {
        opts = cJSON_ParseWithLength(vbuf_str(&rq->body), rq->body.len);
        if (!cJSON_IsObject(opts)) {
            cJSON_Delete(opts);
            return ta_fail(err, 400, "BadRequest", "the DeleteOptions body could not be decoded");
        }
    } else {
        opts = cJSON_CreateObject();
        if (!opts)
            return nomem(err);
    }
    if ((q = ta_query(rq, "propagationPolicy")) && *q)
        ta_jset_str(opts, "propagationPolicy", q);
    if ((q = ta_query(rq, "orphanDependents")) && strcmp(q, "true") == 0 &&
        !ta_jstr(opts, "propagationPolicy"))
        ta_jset_str(opts, "propagationPolicy", "Orphan");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(opts, "orphanDependents")) &&
        !ta_jstr(opts, "propagationPolicy"))
        ta_jset_str(opts, "propagationPolicy", "Orphan");
    q = ta_jstr(opts, "propagationPolicy");
    if (q && strcmp(q, "Background") != 0 && strcmp(q, "Foreground") != 0 &&
        strcmp(q, "Orphan") != 0) {
        cJSON_Delete(opts);
        return ta_fail(err, 400, "BadRequest",
                       "propagationPolicy must be one of Background, "
                       "Foreground or Orphan");
    }
    *ret_opts = opts;
    return VMOP_OK;
}

static vmop_rc check_preconditions(struct ta_req *rq, const cJSON *opts, struct ta_obj *cur,
                                   struct vmop_err *err)
{
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(opts, "preconditions");
    const char *uid = ta_jstr(pre, "uid"), *rv = ta_jstr(pre, "resourceVersion");
    ta_req_details(rq, rq->rt, cur->name);
    if (uid && strcmp(uid, cur->uid) != 0)
        return ta_fail(err, 409, "Conflict",
                       "Operation cannot be fulfilled on %s \"%s\": Precondition failed: UID in "
                       "precondition: %.64s, UID in object meta: %s",
                       rq->rt->plural, cur->name, uid, cur->uid);
    if (rv && strtoull(rv, NULL, 10) != cur->rv)
        return ta_fail(err, 409, "Conflict",
                       "Operation cannot be fulfilled on %s \"%s\": Precondition failed: "
                       "ResourceVersion in precondition: %.32s, ResourceVersion in object meta: "
                       "%llu",
                       rq->rt->plural, cur->name, rv, cur->rv);
    return VMOP_OK;
}

static int protected_namespace(const struct ta_rtype *rt, const char *name)
{
    return ta_rtype_is(rt, "", "namespaces") &&
           (strcmp(name, "default") == 0 || strcmp(name, "kube-system") == 0 ||
            strcmp(name, "kube-public") == 0);
}

static vmop_rc handle_delete(struct ta_req *rq, struct ta_obj *cur, struct vmop_err *err)
{
    cJSON *opts = NULL;
    struct ta_obj *o = NULL;
    vmop_rc rc = delete_options(rq, &opts, err);
    if (rc)
        return rc;
    rc = check_preconditions(rq, opts, cur, err);
    if (rc)
        goto out;
    if (protected_namespace(rq->rt, cur->name)) {
        rc = ta_fail(err, 403, "Forbidden",
                     "namespace %s is forbidden: this namespace may not be "
                     "deleted",
                     cur->name);
        goto out;
    }
    rc = ta_delete_locked(rq->s, rq->rt, cur, ta_jstr(opts, "propagationPolicy"), &o, err);
    if (rc)
        goto out;
    rc = reply_obj(rq, 200, o, err);
out:
    ta_obj_unref(o);
    cJSON_Delete(opts);
    return rc;
}

static vmop_rc handle_deletecollection(struct ta_req *rq, struct vmop_err *err)
{
    struct ta_rtype *rt = rq->rt;
    struct ta_selector *ls = NULL, *fs = NULL;
    cJSON *opts = NULL;
    const char *q;
    char prefix[TA_MAX_NAME + 2] = "";
    struct vbuf b;
    char av[2 * TA_MAX_NAME];
    size_t i, count = 0;
    vmop_rc rc = delete_options(rq, &opts, err);
    vbuf_init(&b, (size_t)1 << 30);
    if (rc)
        goto out;
    if ((q = ta_query(rq, "labelSelector")) && *q && (rc = ta_label_selector_parse(q, &ls, err)))
        goto out;
    if ((q = ta_query(rq, "fieldSelector")) && *q &&
        (rc = ta_field_selector_parse(q, rt, rq->ver, &fs, err)))
        goto out;
    if (rq->ns)
        snprintf(prefix, sizeof(prefix), "%s/", rq->ns);
    api_version_of(rt, rq->ver, av, sizeof(av));
    vbuf_addf(&b, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{},\"items\":[",
              rt->list_kind, av);
    for (i = ta_rtype_lower_bound(rt, prefix); i < rt->n_objs;) {
        struct ta_obj *cur = rt->objs[i], *o = NULL;
        size_t before = rt->n_objs;
        if (prefix[0] && strncmp(cur->key, prefix, strlen(prefix)) != 0)
            break;
        if (!ta_selector_match_labels(ls, cur->json) || !ta_selector_match_fields(fs, cur->json) ||
            protected_namespace(rt, cur->name)) {
            i++;
            continue;
        }
        rc = ta_delete_locked(rq->s, rt, cur, ta_jstr(opts, "propagationPolicy"), &o, err);
        if (rc)
            goto out;
        if (count++)
            vbuf_add(&b, ",", 1);
        add_obj_text(&b, rt, rq->ver, o);
        ta_obj_unref(o);
        if (rt->n_objs == before)
            i++;
    }
    vbuf_adds(&b, "]}");
    if (vbuf_error(&b)) {
        rc = nomem(err);
        goto out;
    }
    ta_reply_text(rq, 200, vbuf_take(&b));
out:
    vbuf_free(&b);
    cJSON_Delete(opts);
    ta_selector_free(ls);
    ta_selector_free(fs);
    return rc;
}

/* ---- patch --------------------------------------------------------------------------------- */

static vmop_rc handle_patch(struct ta_req *rq, struct ta_obj *cur, int is_status,
                            struct vmop_err *err)
{
    const char *ct = ta_header(rq, "Content-Type");
    char media[128];
    size_t n;
    cJSON *patch = NULL, *obj = NULL;
    struct ta_obj *o = NULL;
    vmop_rc rc;
    int apply;
    if (!ct)
        ct = "";
    n = strcspn(ct, ";");
    snprintf(media, sizeof(media), "%.*s", (int)(n < sizeof(media) - 1 ? n : sizeof(media) - 1),
             ct);
    while (n && media[strlen(media) - 1] == ' ')
        media[strlen(media) - 1] = '\0';
    apply = strcmp(media, "application/apply-patch+yaml") == 0;
    if (strcmp(media, "application/merge-patch+json") != 0 &&
        strcmp(media, "application/json-patch+json") != 0 &&
        strcmp(media, "application/strategic-merge-patch+json") != 0 && !apply) {
        return ta_fail(err, 415, "UnsupportedMediaType",
                       "the body of the request was in an unknown format - accepted media types "
                       "include: application/json-patch+json, application/merge-patch+json, "
                       "application/apply-patch+yaml%s",
                       rq->rt->builtin ? ", application/strategic-merge-patch+json" : "");
    }
    if (strcmp(media, "application/strategic-merge-patch+json") == 0 && !rq->rt->builtin)
        return ta_fail(err, 415, "UnsupportedMediaType",
                       "the body of the request was in an unknown format - accepted media types "
                       "include: application/json-patch+json, application/merge-patch+json, "
                       "application/apply-patch+yaml");
    if (apply && !ta_query(rq, "fieldManager"))
        return ta_fail(err, 400, "BadRequest",
                       "PATCH requests with apply patch types require fieldManager");
    patch = parse_body(rq, err);
    if (!patch)
        return err->rc;
    if (!cur) {
        /* server-side apply creates a missing object */
        if (!apply || is_status) {
            cJSON_Delete(patch);
            return fail_not_found(rq, rq->rt, rq->name, err);
        }
        rc = create_locked(rq, patch, rq->name, &o, err);
        if (rc)
            return rc;
        rc = reply_obj(rq, 201, o, err);
        ta_obj_unref(o);
        return rc;
    }
    obj = cJSON_Duplicate(cur->json, 1);
    if (!obj) {
        cJSON_Delete(patch);
        return nomem(err);
    }
    if (strcmp(media, "application/json-patch+json") == 0) {
        rc = ta_json_patch(&obj, patch, err);
        if (!rc) {
            const char *rv = ta_meta_str(obj, "resourceVersion");
            if (rv && strtoull(rv, NULL, 10) != cur->rv)
                rc = fail_conflict(rq, rq->rt, cur->name, err);
        }
    } else {
        const char *prv = ta_meta_str(patch, "resourceVersion");
        if (prv && *prv && strtoull(prv, NULL, 10) != cur->rv) {
            rc = fail_conflict(rq, rq->rt, cur->name, err);
        } else if (strcmp(media, "application/strategic-merge-patch+json") == 0) {
            rc = ta_strategic_patch(&obj, patch, err);
        } else {
            if (!cJSON_IsObject(patch))
                rc = ta_fail(err, 400, "BadRequest", "a merge patch must be a JSON object");
            else
                rc = ta_merge_patch(&obj, patch, err);
        }
    }
    cJSON_Delete(patch);
    if (rc) {
        cJSON_Delete(obj);
        if (err->http_status == 0 && rc == VMOP_E_INVALID)
            err->http_status = 422;
        return rc;
    }
    rc = ta_update_locked(rq->s, rq, rq->rt, rq->ver, cur, obj, is_status, 0, &o, err);
    if (rc)
        return rc;
    rc = reply_obj(rq, 200, o, err);
    ta_obj_unref(o);
    return rc;
}

/* ---- entry --------------------------------------------------------------------------------- */

static vmop_rc handle_item(struct ta_req *rq, struct vmop_err *err)
{
    struct ta_rtype *rt = rq->rt;
    char key[2 * TA_MAX_NAME + 4];
    struct ta_obj *cur, *o = NULL;
    int is_status = 0;
    vmop_rc rc;
    if (rq->sub) {
        if (strcmp(rq->sub, "status") != 0 || !rq->ver->has_status)
            return ta_fail(err, 404, "NotFound",
                           "the server could not find the requested resource");
        is_status = 1;
    }
    if (rt->namespaced)
        snprintf(key, sizeof(key), "%s/%s", rq->ns, rq->name);
    else
        snprintf(key, sizeof(key), "%s", rq->name);
    cur = ta_rtype_get(rt, key);
    if (strcmp(rq->method, "PATCH") == 0)
        return handle_patch(rq, cur, is_status, err);
    if (!cur && strcmp(rq->method, "PUT") == 0 && ta_rtype_is(rt, "", "events")) {
        cJSON *obj = parse_body(rq, err);
        if (!obj)
            return err->rc;
        rc = create_locked(rq, obj, rq->name, &o, err);
        if (rc)
            return rc;
        rc = reply_obj(rq, 201, o, err);
        ta_obj_unref(o);
        return rc;
    }
    if (!cur)
        return fail_not_found(rq, rt, rq->name, err);
    if (strcmp(rq->method, "GET") == 0)
        return reply_obj(rq, 200, cur, err);
    if (strcmp(rq->method, "DELETE") == 0) {
        if (is_status)
            return ta_fail(err, 405, "MethodNotAllowed",
                           "the server does not allow this method on the requested resource");
        return handle_delete(rq, cur, err);
    }
    if (strcmp(rq->method, "PUT") == 0) {
        cJSON *obj = parse_body(rq, err);
        if (!obj)
            return err->rc;
        rc = ta_update_locked(rq->s, rq, rt, rq->ver, cur, obj, is_status, 1, &o, err);
        if (rc)
            return rc;
        rc = reply_obj(rq, 200, o, err);
        ta_obj_unref(o);
        return rc;
    }
    return ta_fail(err, 405, "MethodNotAllowed",
                   "the server does not allow this method on the requested resource");
}

static vmop_rc handle_collection(struct ta_req *rq, struct vmop_err *err)
{
    const char *w = ta_query(rq, "watch");
    if (strcmp(rq->method, "GET") == 0) {
        if (rq->watch_path || (w && (strcmp(w, "true") == 0 || strcmp(w, "1") == 0)))
            return ta_watch_start(rq, err);
        return handle_list(rq, err);
    }
    if (strcmp(rq->method, "POST") == 0) {
        cJSON *obj;
        struct ta_obj *o = NULL;
        vmop_rc rc;
        if (rq->rt->namespaced && !rq->ns)
            return ta_fail(err, 405, "MethodNotAllowed",
                           "the server does not allow this method on the requested resource");
        obj = parse_body(rq, err);
        if (!obj)
            return err->rc;
        rc = create_locked(rq, obj, NULL, &o, err);
        if (rc)
            return rc;
        rc = reply_obj(rq, 201, o, err);
        ta_obj_unref(o);
        return rc;
    }
    if (strcmp(rq->method, "DELETE") == 0)
        return handle_deletecollection(rq, err);
    return ta_fail(err, 405, "MethodNotAllowed",
                   "the server does not allow this method on the requested resource");
}

vmop_rc ta_handle_resource(struct ta_req *rq, struct vmop_err *err)
{
    struct ta_store *st = &rq->s->st;
    vmop_rc rc;
    int r = route(rq);
    if (r < 0)
        return ta_fail(err, 404, "NotFound", "the server could not find the requested resource");
    if (r == 1) {
        if (strcmp(rq->method, "GET") != 0)
            return ta_fail(err, 405, "MethodNotAllowed",
                           "the server does not allow this method on the requested resource");
        return ta_handle_discovery(rq, err);
    }
    pthread_mutex_lock(&st->lock);
    rq->rt = ta_store_find_type_ver(st, rq->group, rq->version, rq->plural, &rq->ver);
    if (!rq->rt || (rq->ns && !rq->rt->namespaced) || (rq->rt->namespaced && !rq->ns && rq->name) ||
        (rq->sub && !rq->name) || (rq->watch_path && rq->name)) {
        rq->rt = NULL;
        rc = ta_fail(err, 404, "NotFound", "the server could not find the requested resource");
    } else if (rq->name) {
        rc = handle_item(rq, err);
    } else {
        rc = handle_collection(rq, err);
    }
    pthread_mutex_unlock(&st->lock);
    return rc;
}
