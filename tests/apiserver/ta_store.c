/* ta_store.c: the in-memory object store of kube-testapi: resource-type registry, per-type sorted
 * object arrays, the global resourceVersion and the watch history ring.
 * Every function here except init/deinit and the ta_obj refcounting requires the store lock. */
#include "ta.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ta_obj *ta_obj_new(cJSON *json, int namespaced)
{
    struct ta_obj *o = calloc(1, sizeof(*o));
    const char *ns, *name, *rv;
    size_t n;
    if (!o) {
        cJSON_Delete(json);
        return NULL;
    }
    o->refs = 1;
    o->json = json;
    ns = namespaced ? ta_meta_str(json, "namespace") : NULL;
    name = ta_meta_str(json, "name");
    o->ns = ns ? ns : "";
    o->name = name ? name : "";
    o->uid = ta_meta_str(json, "uid");
    if (!o->uid)
        o->uid = "";
    rv = ta_meta_str(json, "resourceVersion");
    o->rv = rv ? strtoull(rv, NULL, 10) : 0;
    n = strlen(o->ns) + strlen(o->name) + 2;
    o->key = malloc(n);
    if (!o->key) {
        cJSON_Delete(json);
        free(o);
        return NULL;
    }
    if (namespaced)
        snprintf(o->key, n, "%s/%s", o->ns, o->name);
    else
        snprintf(o->key, n, "%s", o->name);
    return o;
}

struct ta_obj *ta_obj_ref(struct ta_obj *o)
{
    if (o)
        __atomic_add_fetch(&o->refs, 1, __ATOMIC_RELAXED);
    return o;
}

void ta_obj_unref(struct ta_obj *o)
{
    if (!o || __atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    cJSON_Delete(o->json);
    free(o->key);
    free(o->text);
    free(o);
}

const char *ta_obj_text(struct ta_obj *o)
{
    char *t = __atomic_load_n(&o->text, __ATOMIC_ACQUIRE), *expected = NULL;
    if (t)
        return t;
    t = cJSON_PrintUnformatted(o->json);
    if (!t)
        return NULL;
    if (!__atomic_compare_exchange_n(&o->text, &expected, t, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        free(t);
        return expected;
    }
    return t;
}

vmop_rc ta_store_init(struct ta_store *st, size_t window, struct vmop_err *err)
{
    memset(st, 0, sizeof(*st));
    if (window == 0)
        window = TA_DEFAULT_WINDOW;
    st->ring = calloc(window, sizeof(*st->ring));
    st->openapi_cache = cJSON_CreateObject();
    if (!st->ring || !st->openapi_cache) {
        free(st->ring);
        cJSON_Delete(st->openapi_cache);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory for a watch window of %zu", window);
    }
    st->ring_cap = window;
    pthread_mutex_init(&st->lock, NULL);
    pthread_cond_init(&st->changed, NULL);
    pthread_cond_init(&st->gc_wake, NULL);
    st->rv = 1;
    return VMOP_OK;
}

static void rtype_free(struct ta_rtype *rt)
{
    size_t i;
    for (i = 0; i < rt->n_objs; i++)
        ta_obj_unref(rt->objs[i]);
    free(rt->objs);
    for (i = 0; i < rt->n_versions; i++) {
        free(rt->versions[i].name);
        cJSON_Delete(rt->versions[i].schema);
        cJSON_Delete(rt->versions[i].columns);
        cJSON_Delete(rt->versions[i].selectable);
    }
    free(rt->versions);
    cJSON_Delete(rt->short_names);
    cJSON_Delete(rt->categories);
    free(rt->group);
    free(rt->plural);
    free(rt->singular);
    free(rt->kind);
    free(rt->list_kind);
    free(rt);
}

void ta_store_deinit(struct ta_store *st)
{
    size_t i;
    for (i = 0; i < st->ring_len; i++) {
        struct ta_event *e = &st->ring[(st->ring_start + i) % st->ring_cap];
        ta_obj_unref(e->obj);
        ta_obj_unref(e->old);
    }
    free(st->ring);
    for (i = 0; i < st->n_types; i++)
        rtype_free(st->types[i]);
    free(st->types);
    for (i = 0; i < st->n_rules; i++) {
        free(st->rules[i].method);
        free(st->rules[i].pattern);
        if (st->rules[i].regex)
            regfree(st->rules[i].regex);
        free(st->rules[i].regex);
    }
    cJSON_Delete(st->openapi_cache);
    pthread_mutex_destroy(&st->lock);
    pthread_cond_destroy(&st->changed);
    pthread_cond_destroy(&st->gc_wake);
}

struct ta_rtype *ta_store_find_type(struct ta_store *st, const char *group, const char *plural)
{
    size_t i;
    for (i = 0; i < st->n_types; i++) {
        struct ta_rtype *rt = st->types[i];
        if (strcmp(rt->group, group) == 0 && strcmp(rt->plural, plural) == 0)
            return rt;
    }
    return NULL;
}

const struct ta_version *ta_rtype_version(const struct ta_rtype *rt, const char *v)
{
    size_t i;
    for (i = 0; i < rt->n_versions; i++)
        if (strcmp(rt->versions[i].name, v) == 0)
            return &rt->versions[i];
    return NULL;
}

const struct ta_version *ta_rtype_storage_version(const struct ta_rtype *rt)
{
    size_t i;
    for (i = 0; i < rt->n_versions; i++)
        if (rt->versions[i].storage)
            return &rt->versions[i];
    return rt->n_versions ? &rt->versions[0] : NULL;
}

struct ta_rtype *ta_store_find_type_ver(struct ta_store *st, const char *group, const char *version,
                                        const char *plural, const struct ta_version **ret_ver)
{
    struct ta_rtype *rt = ta_store_find_type(st, group, plural);
    const struct ta_version *v;
    if (!rt || !rt->served)
        return NULL;
    v = ta_rtype_version(rt, version);
    if (!v || !v->served)
        return NULL;
    *ret_ver = v;
    return rt;
}

struct ta_rtype *ta_store_find_kind(struct ta_store *st, const char *group, const char *kind)
{
    size_t i;
    for (i = 0; i < st->n_types; i++) {
        struct ta_rtype *rt = st->types[i];
        if (rt->served && strcmp(rt->group, group) == 0 && strcmp(rt->kind, kind) == 0)
            return rt;
    }
    return NULL;
}

struct ta_rtype *ta_store_add_type(struct ta_store *st, const char *group, const char *plural)
{
    struct ta_rtype *rt = ta_store_find_type(st, group, plural), **nt;
    if (rt)
        return rt;
    rt = calloc(1, sizeof(*rt));
    nt = realloc(st->types, (st->n_types + 1) * sizeof(*nt));
    if (!rt || !nt) {
        free(rt);
        if (nt)
            st->types = nt;
        return NULL;
    }
    st->types = nt;
    rt->group = strdup(group);
    rt->plural = strdup(plural);
    if (!rt->group || !rt->plural) {
        free(rt->group);
        free(rt->plural);
        free(rt);
        return NULL;
    }
    rt->creatable = 1;
    st->types[st->n_types++] = rt;
    return rt;
}

size_t ta_rtype_lower_bound(const struct ta_rtype *rt, const char *key)
{
    size_t lo = 0, hi = rt->n_objs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(rt->objs[mid]->key, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct ta_obj *ta_rtype_get(const struct ta_rtype *rt, const char *key)
{
    size_t i = ta_rtype_lower_bound(rt, key);
    if (i < rt->n_objs && strcmp(rt->objs[i]->key, key) == 0)
        return rt->objs[i];
    return NULL;
}

/* Appends an event to the ring (takes the refs), evicting the oldest when full. */
static void ring_push(struct ta_store *st, struct ta_event ev)
{
    if (st->ring_len == st->ring_cap) {
        struct ta_event *old = &st->ring[st->ring_start];
        st->dropped_rv = old->rv;
        ta_obj_unref(old->obj);
        ta_obj_unref(old->old);
        st->ring_start = (st->ring_start + 1) % st->ring_cap;
        st->ring_len--;
    }
    st->ring[(st->ring_start + st->ring_len) % st->ring_cap] = ev;
    st->ring_len++;
    pthread_cond_broadcast(&st->changed);
}

/* Writes rv into metadata.resourceVersion of json. */
static vmop_rc stamp_rv(cJSON *json, unsigned long long rv, struct vmop_err *err)
{
    char buf[32];
    cJSON *m = ta_jobj(json, "metadata", 1);
    if (!m)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory stamping a resourceVersion");
    snprintf(buf, sizeof(buf), "%llu", rv);
    ta_jset_str(m, "resourceVersion", buf);
    return VMOP_OK;
}

vmop_rc ta_store_put(struct ta_store *st, struct ta_rtype *rt, struct ta_obj *obj,
                     enum ta_ev_type type, struct vmop_err *err)
{
    size_t i;
    struct ta_obj *old = NULL;
    struct ta_event ev;
    unsigned long long rv = st->rv + 1;
    vmop_rc rc = stamp_rv(obj->json, rv, err);
    if (rc) {
        ta_obj_unref(obj);
        return rc;
    }
    obj->rv = rv;
    i = ta_rtype_lower_bound(rt, obj->key);
    if (i < rt->n_objs && strcmp(rt->objs[i]->key, obj->key) == 0) {
        old = rt->objs[i];
        rt->objs[i] = obj;
    } else {
        if (rt->n_objs == rt->cap_objs) {
            size_t ncap = rt->cap_objs ? rt->cap_objs * 2 : 16;
            struct ta_obj **n = realloc(rt->objs, ncap * sizeof(*n));
            if (!n) {
                ta_obj_unref(obj);
                return vmop_fail(err, VMOP_E_NOMEM, "out of memory growing %s", rt->plural);
            }
            rt->objs = n;
            rt->cap_objs = ncap;
        }
        memmove(rt->objs + i + 1, rt->objs + i, (rt->n_objs - i) * sizeof(*rt->objs));
        rt->objs[i] = obj;
        rt->n_objs++;
    }
    st->rv = rv;
    ev.rv = rv;
    ev.type = type;
    ev.rt = rt;
    ev.obj = ta_obj_ref(obj);
    ev.old = old; /* the array's ref moves to the event */
    ring_push(st, ev);
    if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj->json, "metadata"),
                                         "ownerReferences") ||
        (old && strcmp(rt->plural, "namespaces") != 0 &&
         cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj->json, "metadata"),
                                          "deletionTimestamp"))) {
        st->gc_dirty = 1;
        pthread_cond_signal(&st->gc_wake);
    }
    return VMOP_OK;
}

vmop_rc ta_store_remove(struct ta_store *st, struct ta_rtype *rt, const char *key,
                        struct ta_obj **ret_last, struct vmop_err *err)
{
    size_t i = ta_rtype_lower_bound(rt, key);
    struct ta_obj *cur, *last;
    cJSON *copy;
    struct ta_event ev;
    vmop_rc rc;
    if (i >= rt->n_objs || strcmp(rt->objs[i]->key, key) != 0)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "%s \"%s\" not found", rt->plural, key);
    cur = rt->objs[i];
    copy = cJSON_Duplicate(cur->json, 1);
    if (!copy)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory deleting from %s", rt->plural);
    rc = stamp_rv(copy, st->rv + 1, err);
    if (rc) {
        cJSON_Delete(copy);
        return rc;
    }
    last = ta_obj_new(copy, rt->namespaced);
    if (!last)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory deleting from %s", rt->plural);
    memmove(rt->objs + i, rt->objs + i + 1, (rt->n_objs - i - 1) * sizeof(*rt->objs));
    rt->n_objs--;
    st->rv++;
    ev.rv = st->rv;
    ev.type = TA_EV_DELETED;
    ev.rt = rt;
    ev.obj = last;
    ev.old = cur;
    if (ret_last)
        *ret_last = ta_obj_ref(last);
    ring_push(st, ev);
    st->gc_dirty = 1;
    pthread_cond_signal(&st->gc_wake);
    return VMOP_OK;
}
