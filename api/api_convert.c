/* api_convert.c: api_convert() (see api_convert.h): input checks, the kind table, running a
 * kind's step chain down from and up to the hub, and the conversion-data annotation (written on
 * down-conversion when needed, merged back on up-conversion). Per-kind steps live in
 * api_convert_vm.c, api_convert_vm_a1.c and api_convert_misc.c. */
#include "api_convert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_convert_int.h"

static const struct cv_kind *const kinds[] = {
    &cv_kind_vm,     &cv_kind_class,   &cv_kind_image,
    &cv_kind_cimage, &cv_kind_service, &cv_kind_respolicy,
};

static const struct cv_kind *find_kind(const char *kind)
{
    size_t i;
    for (i = 0; kind && i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(kinds[i]->kind, kind) == 0)
            return kinds[i];
    return NULL;
}

/* "v1alphaN" -> N (1..6), else 0. */
static int version_num(const char *v)
{
    if (!v || strncmp(v, "v1alpha", 7) != 0 || v[7] < '1' || v[7] > '0' + API_CONVERT_MAX_VERSION ||
        v[8] != '\0')
        return 0;
    return v[7] - '0';
}

/* "vmoperator.vmware.com/v1alphaN" -> N, else 0. */
static int gv_num(const char *gv)
{
    size_t g = strlen(API_CONVERT_GROUP);
    if (!gv || strncmp(gv, API_CONVERT_GROUP, g) != 0 || gv[g] != '/')
        return 0;
    return version_num(gv + g + 1);
}

int api_convert_served(const char *kind, const char *version)
{
    return find_kind(kind) && version_num(version);
}

static void set_version(struct cv *cv, cJSON *obj, int v)
{
    char gv[64];
    snprintf(gv, sizeof(gv), "%s/v1alpha%d", API_CONVERT_GROUP, v);
    cv_put_str(cv, obj, "apiVersion", gv);
}

static void run_down(struct cv *cv, const struct cv_kind *k, cJSON *obj, int to)
{
    int n;
    for (n = API_CONVERT_MAX_VERSION - 1; n >= to && cv->rc == VMOP_OK; n--) {
        const struct cv_step *s = &k->steps[n];
        const char *const *d;
        for (d = s->drop; d && *d; d++)
            cv_drop(obj, *d);
        if (s->down)
            s->down(cv, obj);
    }
    set_version(cv, obj, to);
}

static void run_up(struct cv *cv, const struct cv_kind *k, cJSON *obj, int from)
{
    int n;
    for (n = from; n < API_CONVERT_MAX_VERSION && cv->rc == VMOP_OK; n++)
        if (k->steps[n].up)
            k->steps[n].up(cv, obj);
    set_version(cv, obj, API_CONVERT_MAX_VERSION);
}

static int same(const cJSON *a, const cJSON *b)
{
    if (!a || !b)
        return a == b;
    return cJSON_Compare(a, b, 1);
}

static int has_key(const cJSON *o, const char *k)
{
    return cv_get(o, k) != NULL;
}

/* Three-way merge: base is what the stored hub data looks like after a trip through the older
 * version, theirs is the stored hub data, mine is the older object converted up. Where mine did
 * not change base, theirs wins (the data the older version cannot hold comes back); where it did,
 * mine wins. Returns a new tree, or NULL for "absent". */
static cJSON *merge3(struct cv *cv, const cJSON *b, const cJSON *t, const cJSON *m)
{
    const cJSON *srcs[3] = {m, t, b}, *it;
    cJSON *out;
    int i;

    if (same(b, m))
        return cv_dup(cv, t);
    if (same(b, t))
        return cv_dup(cv, m);
    if (cJSON_IsObject(b) && cJSON_IsObject(t) && cJSON_IsObject(m)) {
        if (!(out = cJSON_CreateObject())) {
            cv->rc = VMOP_E_NOMEM;
            return NULL;
        }
        for (i = 0; i < 3; i++) {
            cJSON_ArrayForEach(it, srcs[i])
            {
                if ((i >= 1 && has_key(m, it->string)) || (i == 2 && has_key(t, it->string)))
                    continue;
                cv_put(cv, out, it->string,
                       merge3(cv, cv_get(b, it->string), cv_get(t, it->string),
                              cv_get(m, it->string)));
            }
        }
        return out;
    }
    if (cJSON_IsArray(b) && cJSON_IsArray(t) && cJSON_IsArray(m) &&
        cJSON_GetArraySize(b) == cJSON_GetArraySize(t) &&
        cJSON_GetArraySize(b) == cJSON_GetArraySize(m)) {
        const cJSON *bi = b->child, *ti = t->child, *mi;
        if (!(out = cJSON_CreateArray())) {
            cv->rc = VMOP_E_NOMEM;
            return NULL;
        }
        cJSON_ArrayForEach(mi, m)
        {
            cJSON *r = merge3(cv, bi, ti, mi);
            if (r && !cJSON_AddItemToArray(out, r)) {
                cJSON_Delete(r);
                cv->rc = VMOP_E_NOMEM;
            }
            bi = bi->next;
            ti = ti->next;
        }
        return out;
    }
    return cv_dup(cv, m);
}

static int is_meta_key(const char *k)
{
    return strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0 || strcmp(k, "metadata") == 0;
}

/* Removes metadata.annotations[API_CONVERT_ANNOTATION] and returns it (or NULL). */
static cJSON *take_data(cJSON *obj)
{
    cJSON *md = cv_get(obj, "metadata");
    cJSON *v = cv_take(cv_get(md, "annotations"), API_CONVERT_ANNOTATION);
    cv_prune_empty(md, "annotations");
    return v;
}

/* 1 when j nests no deeper than max levels (j itself is level 1). Recursion is bounded by max. */
static int depth_within(const cJSON *j, int max)
{
    const cJSON *it;
    if (!cJSON_IsObject(j) && !cJSON_IsArray(j))
        return 1;
    if (max < 1)
        return 0;
    cJSON_ArrayForEach(it, j)
    {
        if (!depth_within(it, max - 1))
            return 0;
    }
    return 1;
}

/* Fails when j (what: "the object" or the annotation) gives one member name twice in an object. */
static vmop_rc check_dup_keys(const cJSON *j, int max_depth, const char *kind, const char *what,
                              struct vmop_err *err)
{
    char path[256];
    switch (cv_find_dup_key(j, max_depth, path, sizeof(path))) {
    case 0:
        return VMOP_OK;
    case 1:
        return vmop_fail(err, VMOP_E_INVALID,
                         "%s of the %s to convert gives member %.200s more than once", what, kind,
                         path);
    case -1:
        return vmop_fail(err, VMOP_E_INVALID,
                         "%s of the %s to convert is nested deeper than %d levels", what, kind,
                         max_depth);
    default:
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory checking a %s", kind);
    }
}

static vmop_rc parse_data(const cJSON *v, cJSON **ret, struct vmop_err *err)
{
    cJSON *d;
    if (!cJSON_IsString(v))
        return vmop_fail(err, VMOP_E_INVALID, "annotation %s must be a string",
                         API_CONVERT_ANNOTATION);
    if (strlen(v->valuestring) > API_CONVERT_MAX_DATA)
        return vmop_fail(err, VMOP_E_INVALID, "annotation %s is over %u bytes",
                         API_CONVERT_ANNOTATION, API_CONVERT_MAX_DATA);
    d = cJSON_Parse(v->valuestring);
    if (!cJSON_IsObject(d)) {
        cJSON_Delete(d);
        return vmop_fail(err, VMOP_E_INVALID, "annotation %s is not a JSON object",
                         API_CONVERT_ANNOTATION);
    }
    *ret = d;
    return VMOP_OK;
}

/* obj (owned, version from) becomes the hub object. */
static vmop_rc to_hub(const struct cv_kind *k, cJSON *obj, int from, struct vmop_err *err)
{
    struct cv cv = {VMOP_OK};
    cJSON *raw = take_data(obj), *data = NULL, *base = NULL, *theirs = NULL, *it;
    vmop_rc rc = VMOP_OK;

    if (raw && (rc = parse_data(raw, &data, err)) != VMOP_OK)
        goto out;
    if (data && (rc = check_dup_keys(data, API_CONVERT_MAX_DEPTH, k->kind,
                                     "annotation " API_CONVERT_ANNOTATION, err)) != VMOP_OK)
        goto out;
    cv.has_data = data != NULL;
    run_up(&cv, k, obj, from);
    if (data && cv.rc == VMOP_OK) {
        /* theirs: the stored hub data with this object's identity; base: it after a round trip */
        theirs = cv_dup(&cv, data);
        cJSON_ArrayForEach(it, obj)
        {
            if (is_meta_key(it->string) && theirs)
                cv_put(&cv, theirs, it->string, cv_dup(&cv, it));
        }
        base = cv_dup(&cv, theirs);
        if (base) {
            run_down(&cv, k, base, from);
            run_up(&cv, k, base, from);
        }
        if (cv.rc == VMOP_OK && theirs && base) {
            const cJSON *srcs[3] = {obj, theirs, base};
            cJSON *merged = cJSON_CreateObject();
            int i;
            if (!merged)
                cv.rc = VMOP_E_NOMEM;
            for (i = 0; merged && i < 3; i++) {
                cJSON_ArrayForEach(it, srcs[i])
                {
                    const char *key = it->string;
                    if (is_meta_key(key) || (i >= 1 && has_key(obj, key)) ||
                        (i == 2 && has_key(theirs, key)))
                        continue;
                    cv_put(&cv, merged, key,
                           merge3(&cv, cv_get(base, key), cv_get(theirs, key), cv_get(obj, key)));
                }
            }
            /* replace obj's non-metadata members with the merged ones */
            for (it = obj->child; it;) {
                cJSON *next = it->next;
                if (!is_meta_key(it->string))
                    cJSON_Delete(cJSON_DetachItemViaPointer(obj, it));
                it = next;
            }
            while (merged && merged->child) {
                cJSON *m = cJSON_DetachItemViaPointer(merged, merged->child);
                cv_put(&cv, obj, m->string, m);
            }
            cJSON_Delete(merged);
        }
    }
    if (cv.rc != VMOP_OK)
        rc = vmop_fail(err, cv.rc, "out of memory converting a %s", k->kind);
out:
    cJSON_Delete(raw);
    cJSON_Delete(data);
    cJSON_Delete(base);
    cJSON_Delete(theirs);
    return rc;
}

/* hub (owned, a hub object) becomes a version-to object. */
static vmop_rc from_hub(const struct cv_kind *k, cJSON *hub, int to, struct vmop_err *err)
{
    struct cv cv = {VMOP_OK};
    cJSON *orig = NULL, *check = NULL, *it;

    cJSON_Delete(take_data(hub)); /* the hub never carries conversion data */
    orig = cv_dup(&cv, hub);
    run_down(&cv, k, hub, to);
    check = cv_dup(&cv, hub);
    if (check)
        run_up(&cv, k, check, to);
    if (cv.rc == VMOP_OK && orig && !same(check, orig)) {
        cJSON *data = cJSON_CreateObject(), *md, *ann;
        char *text = NULL;
        cJSON_ArrayForEach(it, orig)
        {
            if (data && !is_meta_key(it->string))
                cv_put(&cv, data, it->string, cv_dup(&cv, it));
        }
        if (data && cv.rc == VMOP_OK)
            text = cJSON_PrintUnformatted(data);
        md = cv_ensure(&cv, hub, "metadata");
        ann = cv_ensure(&cv, md, "annotations");
        if (!text || !ann)
            cv.rc = VMOP_E_NOMEM;
        else
            cv_put_str(&cv, ann, API_CONVERT_ANNOTATION, text);
        free(text);
        cJSON_Delete(data);
    }
    cJSON_Delete(orig);
    cJSON_Delete(check);
    if (cv.rc != VMOP_OK)
        return vmop_fail(err, cv.rc, "out of memory converting a %s", k->kind);
    return VMOP_OK;
}

static vmop_rc check_input(const cJSON *obj, const struct cv_kind **ret_kind, int *ret_from,
                           struct vmop_err *err)
{
    const char *kind = cv_str(obj, "kind"), *gv = cv_str(obj, "apiVersion");
    static const char *const objs[] = {"metadata", "spec", "status"};
    const cJSON *md = cv_get(obj, "metadata"), *ann = cv_get(md, "annotations");
    size_t i;

    if (!cJSON_IsObject(obj))
        return vmop_fail(err, VMOP_E_INVALID, "the object to convert must be a JSON object");
    if (!kind)
        return vmop_fail(err, VMOP_E_INVALID, "the object to convert has no kind (string)");
    if (!(*ret_kind = find_kind(kind)))
        return vmop_fail(err, VMOP_E_INVALID,
                         "kind %.64s is not converted (not a %s kind vmop "
                         "serves)",
                         kind, API_CONVERT_GROUP);
    if (!gv)
        return vmop_fail(err, VMOP_E_INVALID, "the %s to convert has no apiVersion (string)", kind);
    if (!(*ret_from = gv_num(gv)))
        return vmop_fail(err, VMOP_E_INVALID,
                         "apiVersion %.80s of %s is not served (want %s/"
                         "v1alpha1 .. v1alpha%d)",
                         gv, kind, API_CONVERT_GROUP, API_CONVERT_MAX_VERSION);
    for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
        const cJSON *v = cv_get(obj, objs[i]);
        if (v && !cJSON_IsNull(v) && !cJSON_IsObject(v))
            return vmop_fail(err, VMOP_E_INVALID, "%s of the %s to convert must be an object",
                             objs[i], kind);
    }
    if (ann && !cJSON_IsNull(ann) && !cJSON_IsObject(ann))
        return vmop_fail(err, VMOP_E_INVALID,
                         "metadata.annotations of the %s to convert must "
                         "be an object",
                         kind);
    /* a version's own form is at most two levels deeper than its hub form (checked later) */
    return check_dup_keys(obj, API_CONVERT_MAX_DEPTH + 2, kind, "the object", err);
}

/* The depth is checked in the hub form, the one every conversion passes through: a version's
 * own form may be a level or two deeper, and its conversion data is hub form. */
static vmop_rc check_depth(const struct cv_kind *k, const cJSON *hub, struct vmop_err *err)
{
    if (depth_within(hub, API_CONVERT_MAX_DEPTH))
        return VMOP_OK;
    return vmop_fail(err, VMOP_E_INVALID,
                     "the %s to convert is nested deeper than %d levels (in its %s form)", k->kind,
                     API_CONVERT_MAX_DEPTH, API_CONVERT_HUB);
}

vmop_rc api_convert(const cJSON *obj, const char *desired_api_version, cJSON **ret,
                    struct vmop_err *err)
{
    const struct cv_kind *k = NULL;
    int from = 0, to = gv_num(desired_api_version);
    cJSON *work;
    vmop_rc rc;

    *ret = NULL;
    if ((rc = check_input(obj, &k, &from, err)) != VMOP_OK)
        return rc;
    if (!to)
        return vmop_fail(err, VMOP_E_INVALID,
                         "desired apiVersion %.80s is not served (want %s/"
                         "v1alpha1 .. v1alpha%d)",
                         desired_api_version ? desired_api_version : "", API_CONVERT_GROUP,
                         API_CONVERT_MAX_VERSION);
    if (!(work = cJSON_Duplicate(obj, 1)))
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory copying a %s", k->kind);
    if (from == to) {
        /* nothing to convert, but what is returned must convert on: check its hub form */
        cJSON *hub = NULL;
        if (from != API_CONVERT_MAX_VERSION && !(hub = cJSON_Duplicate(obj, 1)))
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory copying a %s", k->kind);
        else if (hub)
            rc = to_hub(k, hub, from, err);
        if (rc == VMOP_OK)
            rc = check_depth(k, hub ? hub : work, err);
        cJSON_Delete(hub);
    } else {
        if (from != API_CONVERT_MAX_VERSION)
            rc = to_hub(k, work, from, err);
        if (rc == VMOP_OK)
            rc = check_depth(k, work, err);
        if (rc == VMOP_OK && to != API_CONVERT_MAX_VERSION)
            rc = from_hub(k, work, to, err);
    }
    if (rc != VMOP_OK) {
        cJSON_Delete(work);
        return rc;
    }
    *ret = work;
    return VMOP_OK;
}
