/* kube_informer.c: list+watch into a refcounted, indexed cache with ordered handler dispatch.
 * Semantics in kube_informer.h.
 *
 * Locks: store_lock (rwlock) guards the store and the indexes; dispatch_lock serialises "change the
 * store + call the handlers" between the watch thread and the resync thread, so handlers see
 * events in order and never concurrently; state_lock guards last_rv. Order: dispatch_lock, then
 * store_lock (never held while a handler runs), then state_lock.
 */
#include "kube_informer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_util.h"

struct kube_obj {
    int refs; /* atomic */
    cJSON *json;
    char *key;
    const char *rv; /* into json, or "" */
};

const cJSON *kube_obj_json(const struct kube_obj *o)
{
    return o->json;
}

const char *kube_obj_key(const struct kube_obj *o)
{
    return o->key;
}

const char *kube_obj_get_rv(const struct kube_obj *o)
{
    return o->rv;
}

struct kube_obj *kube_obj_ref(const struct kube_obj *o)
{
    struct kube_obj *m = (struct kube_obj *)o; /* the count is the only mutable part */
    __atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
    return m;
}

void kube_obj_unref(struct kube_obj *o)
{
    if (o && __atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        cJSON_Delete(o->json);
        free(o->key);
        free(o);
    }
}

static void obj_unref_v(void *o)
{
    kube_obj_unref(o);
}

void kube_objs_free(struct kube_obj **objs, size_t n)
{
    for (size_t i = 0; objs && i < n; i++)
        kube_obj_unref(objs[i]);
    free(objs);
}

int kube_key_of(const cJSON *obj, char *buf, size_t buf_len)
{
    const char *name = kube_obj_name(obj), *ns = kube_obj_namespace(obj);
    if (!name || !*name)
        return -1;
    int n =
        ns && *ns ? snprintf(buf, buf_len, "%s/%s", ns, name) : snprintf(buf, buf_len, "%s", name);
    return n < 0 || (size_t)n >= buf_len ? -1 : 0;
}

/* Takes json (also on failure). metadata.managedFields is dropped (kube_informer.h). */
static struct kube_obj *obj_new(cJSON *json, const char *key)
{
    struct kube_obj *o = calloc(1, sizeof(*o));
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(json, "metadata"),
                                            "managedFields");
    if (!o || !(o->key = strdup(key))) {
        free(o);
        cJSON_Delete(json);
        return NULL;
    }
    o->refs = 1;
    o->json = json;
    const char *rv = kube_obj_rv(json);
    o->rv = rv ? rv : "";
    return o;
}

struct index {
    char *name;
    kube_index_fn fn;
    void *ud;
    struct vmop_map values; /* value -> struct vmop_map * (set of keys) */
};

struct kube_informer {
    /* read-only after new / add_index */
    struct kube_client *c;
    struct kube_informer_opts o; /* strings below are our copies */
    char *ns, *label_selector, *field_selector;
    struct kube_informer_handlers h;
    struct index idx[KUBE_INFORMER_MAX_INDEXES];
    size_t n_idx;

    pthread_rwlock_t store_lock;
    struct vmop_map store; /* guarded by store_lock: key -> struct kube_obj * (one ref) */

    pthread_mutex_t dispatch_lock;

    pthread_mutex_t state_lock;
    char last_rv[128]; /* guarded by state_lock */

    int stop;                         /* atomic */
    int synced;                       /* atomic */
    unsigned long n_lists, n_watches; /* atomic */
    long backoff_ms;                  /* informer thread only */

    int started;
    pthread_t thread, resync_thread;
    int have_resync_thread;
};

static void set_free_v(void *m)
{
    vmop_map_clear(m);
    free(m);
}

vmop_rc kube_informer_new(struct kube_client *c, const struct kube_informer_opts *opts,
                          const struct kube_informer_handlers *h, struct kube_informer **ret_inf,
                          struct vmop_err *err)
{
    if (!c || !opts || !opts->resource)
        return vmop_fail(err, VMOP_E_INVALID, "kube_informer_new: client and resource required");
    struct kube_informer *inf = calloc(1, sizeof(*inf));
    if (!inf)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory creating an informer");
    inf->c = c;
    inf->o = *opts;
    if (h)
        inf->h = *h;
    if (inf->o.page_size <= 0)
        inf->o.page_size = 500;
    if (inf->o.backoff_min_ms <= 0)
        inf->o.backoff_min_ms = 100;
    if (inf->o.backoff_max_ms <= 0)
        inf->o.backoff_max_ms = 30000;
    int bad = (opts->ns && !(inf->ns = strdup(opts->ns))) ||
              (opts->label_selector && !(inf->label_selector = strdup(opts->label_selector))) ||
              (opts->field_selector && !(inf->field_selector = strdup(opts->field_selector)));
    inf->o.ns = inf->ns;
    inf->o.label_selector = inf->label_selector;
    inf->o.field_selector = inf->field_selector;
    pthread_rwlock_init(&inf->store_lock, NULL);
    pthread_mutex_init(&inf->dispatch_lock, NULL);
    pthread_mutex_init(&inf->state_lock, NULL);
    vmop_map_init(&inf->store, obj_unref_v);
    inf->backoff_ms = inf->o.backoff_min_ms;
    if (bad) {
        kube_informer_free(inf);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory creating an informer");
    }
    *ret_inf = inf;
    return VMOP_OK;
}

vmop_rc kube_informer_add_index(struct kube_informer *inf, const char *name, kube_index_fn fn,
                                void *ud, struct vmop_err *err)
{
    if (inf->started)
        return vmop_fail(err, VMOP_E_INVALID, "indexes must be added before the informer starts");
    if (inf->n_idx == KUBE_INFORMER_MAX_INDEXES)
        return vmop_fail(err, VMOP_E_TOOBIG, "more than %d indexes", KUBE_INFORMER_MAX_INDEXES);
    for (size_t i = 0; i < inf->n_idx; i++)
        if (!strcmp(inf->idx[i].name, name))
            return vmop_fail(err, VMOP_E_EXISTS, "index '%s' already exists", name);
    struct index *x = &inf->idx[inf->n_idx];
    if (!(x->name = strdup(name)))
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory adding an index");
    x->fn = fn;
    x->ud = ud;
    vmop_map_init(&x->values, set_free_v);
    inf->n_idx++;
    return VMOP_OK;
}

/* ---- store + indexes (store_lock held for writing) ---- */

struct emit_ctx {
    char *vals[KUBE_INFORMER_MAX_INDEX_VALUES];
    size_t n;
};

static void emit_cb(void *ctx, const char *value)
{
    struct emit_ctx *e = ctx;
    if (value && e->n < KUBE_INFORMER_MAX_INDEX_VALUES) {
        char *v = strdup(value);
        if (v)
            e->vals[e->n++] = v;
    }
}

static void index_update_locked(struct kube_informer *inf, const struct kube_obj *o, int add)
{
    for (size_t i = 0; i < inf->n_idx; i++) {
        struct index *x = &inf->idx[i];
        struct emit_ctx e = {.n = 0};
        x->fn(o->json, x->ud, emit_cb, &e);
        for (size_t k = 0; k < e.n; k++) {
            struct vmop_map *set = vmop_map_get(&x->values, e.vals[k]);
            if (add) {
                if (!set) {
                    set = calloc(1, sizeof(*set));
                    if (set) {
                        vmop_map_init(set, NULL);
                        if (vmop_map_put(&x->values, e.vals[k], set) != VMOP_OK) {
                            free(set);
                            set = NULL;
                        }
                    }
                }
                if (set)
                    (void)vmop_map_put(set, o->key, NULL); /* NOMEM: index misses it */
            } else if (set) {
                vmop_map_del(set, o->key);
                if (!set->len)
                    vmop_map_del(&x->values, e.vals[k]);
            }
            free(e.vals[k]);
        }
    }
}

/* Puts nobj (takes its ref); returns the replaced object (its store ref handed to the caller),
 * or NULL. On NOMEM the store is unchanged and nobj is released. */
static struct kube_obj *store_put(struct kube_informer *inf, struct kube_obj *nobj, int *ret_failed)
{
    pthread_rwlock_wrlock(&inf->store_lock);
    struct kube_obj *old = vmop_map_get(&inf->store, nobj->key);
    *ret_failed = 0;
    if (old) {
        index_update_locked(inf, old, 0);
        kube_obj_ref(old); /* survives the replacement for the caller */
    }
    if (vmop_map_put(&inf->store, nobj->key, nobj) != VMOP_OK) {
        if (old)
            index_update_locked(inf, old, 1);
        kube_obj_unref(old);
        kube_obj_unref(nobj);
        *ret_failed = 1;
        old = NULL;
    } else {
        index_update_locked(inf, nobj, 1);
    }
    pthread_rwlock_unlock(&inf->store_lock);
    return old;
}

static struct kube_obj *store_del(struct kube_informer *inf, const char *key)
{
    pthread_rwlock_wrlock(&inf->store_lock);
    struct kube_obj *old = vmop_map_take(&inf->store, key);
    if (old)
        index_update_locked(inf, old, 0);
    pthread_rwlock_unlock(&inf->store_lock);
    return old;
}

static void set_last_rv(struct kube_informer *inf, const char *rv)
{
    if (!rv || !*rv)
        return;
    pthread_mutex_lock(&inf->state_lock);
    snprintf(inf->last_rv, sizeof(inf->last_rv), "%s", rv);
    pthread_mutex_unlock(&inf->state_lock);
}

/* Upserts json (taken) and dispatches add/update. dispatch_lock held. */
static void upsert_dispatch(struct kube_informer *inf, cJSON *json, const char *key)
{
    struct kube_obj *nobj = obj_new(json, key);
    if (!nobj)
        return;
    int failed;
    kube_obj_ref(nobj); /* ours, for the handler call */
    struct kube_obj *old = store_put(inf, nobj, &failed);
    if (!failed) {
        if (old && inf->h.on_update)
            inf->h.on_update(inf->h.ud, old, nobj);
        else if (!old && inf->h.on_add)
            inf->h.on_add(inf->h.ud, nobj);
    }
    kube_obj_unref(old);
    kube_obj_unref(nobj);
}

/* ---- watch events ---- */

static int on_event(void *ud, enum kube_event_type type, cJSON *obj)
{
    struct kube_informer *inf = ud;
    char key[1024];
    if (__atomic_load_n(&inf->stop, __ATOMIC_ACQUIRE)) {
        cJSON_Delete(obj);
        return 1;
    }
    inf->backoff_ms = inf->o.backoff_min_ms; /* the stream works */
    const char *rv = kube_obj_rv(obj);
    if (type == KUBE_EV_BOOKMARK || kube_key_of(obj, key, sizeof(key)) != 0) {
        set_last_rv(inf, rv);
        cJSON_Delete(obj);
        return 0;
    }
    pthread_mutex_lock(&inf->dispatch_lock);
    if (type == KUBE_EV_DELETED) {
        struct kube_obj *old = store_del(inf, key);
        set_last_rv(inf, rv);
        if (old) {
            struct kube_obj *last = obj_new(obj, key); /* the final state from the event */
            if (inf->h.on_delete)
                inf->h.on_delete(inf->h.ud, last ? last : old);
            kube_obj_unref(last);
            kube_obj_unref(old);
        } else {
            cJSON_Delete(obj);
        }
    } else {
        pthread_rwlock_rdlock(&inf->store_lock);
        struct kube_obj *cur = vmop_map_get(&inf->store, key);
        int cmp = cur ? kube_rv_cmp(rv, cur->rv) : 1;
        pthread_rwlock_unlock(&inf->store_lock);
        set_last_rv(inf, rv);
        if (cur && (cmp == 0 || cmp == -1))
            cJSON_Delete(obj); /* already seen (replayed after a reconnect) */
        else
            upsert_dispatch(inf, obj, key);
    }
    pthread_mutex_unlock(&inf->dispatch_lock);
    return 0;
}

/* ---- list ---- */

static vmop_rc relist(struct kube_informer *inf, struct vmop_err *err)
{
    struct kube_opts lo = {.label_selector = inf->o.label_selector,
                           .field_selector = inf->o.field_selector,
                           .limit = inf->o.page_size,
                           .cancel = &inf->stop};
    cJSON *list = NULL;
    struct vmop_map seen;
    char key[1024];
    vmop_map_init(&seen, NULL);
    __atomic_add_fetch(&inf->n_lists, 1, __ATOMIC_RELAXED);
    vmop_rc rc = kube_list_all(inf->c, inf->o.resource, inf->o.ns, &lo, &list, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&inf->dispatch_lock);
    cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    while (items && items->child) {
        cJSON *it = cJSON_DetachItemViaPointer(items, items->child);
        if (kube_key_of(it, key, sizeof(key)) != 0) {
            cJSON_Delete(it);
            continue;
        }
        if (vmop_map_put(&seen, key, NULL) != VMOP_OK) {
            cJSON_Delete(it);
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory relisting");
            goto out;
        }
        pthread_rwlock_rdlock(&inf->store_lock);
        struct kube_obj *cur = vmop_map_get(&inf->store, key);
        int same = cur && kube_rv_cmp(kube_obj_rv(it), cur->rv) == 0;
        pthread_rwlock_unlock(&inf->store_lock);
        if (same)
            cJSON_Delete(it);
        else
            upsert_dispatch(inf, it, key);
    }
    /* objects that vanished while we were not watching */
    size_t n_gone = 0;
    char **gone = NULL;
    pthread_rwlock_rdlock(&inf->store_lock);
    if (inf->store.len)
        gone = calloc(inf->store.len, sizeof(*gone));
    struct vmop_map_iter iter;
    for (struct vmop_map_entry *e = vmop_map_first(&inf->store, &iter); e && gone;
         e = vmop_map_next(&inf->store, &iter))
        if (!vmop_map_has(&seen, e->key) && (gone[n_gone] = strdup(e->key)))
            n_gone++;
    pthread_rwlock_unlock(&inf->store_lock);
    for (size_t i = 0; i < n_gone; i++) {
        struct kube_obj *old = store_del(inf, gone[i]);
        if (old && inf->h.on_delete)
            inf->h.on_delete(inf->h.ud, old);
        kube_obj_unref(old);
        free(gone[i]);
    }
    free(gone);
    set_last_rv(inf, kube_json_path_str(list, "metadata", "resourceVersion"));
    __atomic_store_n(&inf->synced, 1, __ATOMIC_RELEASE);
out:
    pthread_mutex_unlock(&inf->dispatch_lock);
    vmop_map_clear(&seen);
    cJSON_Delete(list);
    return rc;
}

static void backoff(struct kube_informer *inf)
{
    vmop_sleep_ms(vmop_jitter_ms(inf->backoff_ms, 0.2), &inf->stop);
    inf->backoff_ms *= 2;
    if (inf->backoff_ms > inf->o.backoff_max_ms)
        inf->backoff_ms = inf->o.backoff_max_ms;
}

static void *informer_main(void *arg)
{
    struct kube_informer *inf = arg;
    int need_list = 1;
    while (!__atomic_load_n(&inf->stop, __ATOMIC_ACQUIRE)) {
        struct vmop_err err = {0};
        if (need_list) {
            if (relist(inf, &err) != VMOP_OK) {
                backoff(inf);
                continue;
            }
            need_list = 0;
            inf->backoff_ms = inf->o.backoff_min_ms;
        }
        char rv[128];
        kube_informer_last_rv(inf, rv, sizeof(rv));
        struct kube_opts wo = {.label_selector = inf->o.label_selector,
                               .field_selector = inf->o.field_selector,
                               .resource_version = rv[0] ? rv : NULL,
                               .allow_bookmarks = 1,
                               .timeout_seconds = inf->o.watch_timeout_s
                                                      ? inf->o.watch_timeout_s
                                                      : 300 + (int)vmop_rand(301),
                               .cancel = &inf->stop};
        __atomic_add_fetch(&inf->n_watches, 1, __ATOMIC_RELAXED);
        vmop_rc rc = kube_watch(inf->c, inf->o.resource, inf->o.ns, &wo, on_event, inf, &err);
        if (__atomic_load_n(&inf->stop, __ATOMIC_ACQUIRE))
            break;
        switch (rc) {
        case VMOP_OK: /* the server's timeout: resume */
            break;
        case VMOP_E_GONE: /* too old: the cache must be rebuilt */
            need_list = 1;
            break;
        case VMOP_E_TRANSPORT:
        case VMOP_E_TIMEOUT:
        case VMOP_E_RATELIMIT:
            backoff(inf); /* resume from the last RV */
            break;
        default: /* a Status error, undecodable stream, ...: start over */
            need_list = 1;
            backoff(inf);
            break;
        }
    }
    return NULL;
}

static void *resync_main(void *arg)
{
    struct kube_informer *inf = arg;
    while (!__atomic_load_n(&inf->stop, __ATOMIC_ACQUIRE)) {
        vmop_sleep_ms(inf->o.resync_ms, &inf->stop);
        if (__atomic_load_n(&inf->stop, __ATOMIC_ACQUIRE))
            break;
        if (!kube_informer_has_synced(inf) || !inf->h.on_update)
            continue;
        struct kube_obj **objs = NULL;
        size_t n = 0;
        pthread_mutex_lock(&inf->dispatch_lock);
        if (kube_informer_list(inf, &objs, &n, NULL) == VMOP_OK) {
            for (size_t i = 0; i < n; i++)
                inf->h.on_update(inf->h.ud, objs[i], objs[i]);
            kube_objs_free(objs, n);
        }
        pthread_mutex_unlock(&inf->dispatch_lock);
    }
    return NULL;
}

vmop_rc kube_informer_start(struct kube_informer *inf, struct vmop_err *err)
{
    if (inf->started)
        return vmop_fail(err, VMOP_E_INVALID, "informer already started");
    int e = pthread_create(&inf->thread, NULL, informer_main, inf);
    if (e)
        return vmop_fail(err, VMOP_E_INTERNAL, "pthread_create: %s", strerror(e));
    inf->started = 1;
    if (inf->o.resync_ms > 0) {
        e = pthread_create(&inf->resync_thread, NULL, resync_main, inf);
        if (e) {
            kube_informer_stop(inf);
            return vmop_fail(err, VMOP_E_INTERNAL, "pthread_create: %s", strerror(e));
        }
        inf->have_resync_thread = 1;
    }
    return VMOP_OK;
}

void kube_informer_stop(struct kube_informer *inf)
{
    if (!inf || !inf->started)
        return;
    __atomic_store_n(&inf->stop, 1, __ATOMIC_RELEASE);
    pthread_join(inf->thread, NULL);
    if (inf->have_resync_thread)
        pthread_join(inf->resync_thread, NULL);
    inf->have_resync_thread = 0;
    inf->started = 0;
}

void kube_informer_free(struct kube_informer *inf)
{
    if (!inf)
        return;
    kube_informer_stop(inf);
    for (size_t i = 0; i < inf->n_idx; i++) {
        vmop_map_clear(&inf->idx[i].values);
        free(inf->idx[i].name);
    }
    vmop_map_clear(&inf->store);
    pthread_rwlock_destroy(&inf->store_lock);
    pthread_mutex_destroy(&inf->dispatch_lock);
    pthread_mutex_destroy(&inf->state_lock);
    free(inf->ns);
    free(inf->label_selector);
    free(inf->field_selector);
    free(inf);
}

int kube_informer_has_synced(struct kube_informer *inf)
{
    return __atomic_load_n(&inf->synced, __ATOMIC_ACQUIRE);
}

vmop_rc kube_informer_wait_synced(struct kube_informer *inf, long timeout_ms)
{
    int64_t end = vmop_mono_ms() + timeout_ms;
    while (!kube_informer_has_synced(inf)) {
        if (vmop_mono_ms() >= end)
            return VMOP_E_TIMEOUT;
        vmop_sleep_ms(5, NULL);
    }
    return VMOP_OK;
}

struct kube_obj *kube_informer_get(struct kube_informer *inf, const char *key)
{
    pthread_rwlock_rdlock(&inf->store_lock);
    struct kube_obj *o = vmop_map_get(&inf->store, key);
    if (o)
        kube_obj_ref(o);
    pthread_rwlock_unlock(&inf->store_lock);
    return o;
}

vmop_rc kube_informer_list(struct kube_informer *inf, struct kube_obj ***ret_objs, size_t *ret_n,
                           struct vmop_err *err)
{
    pthread_rwlock_rdlock(&inf->store_lock);
    size_t n = 0;
    struct kube_obj **arr = calloc(inf->store.len + 1, sizeof(*arr));
    if (!arr) {
        pthread_rwlock_unlock(&inf->store_lock);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory listing the cache");
    }
    struct vmop_map_iter it;
    for (struct vmop_map_entry *e = vmop_map_first(&inf->store, &it); e;
         e = vmop_map_next(&inf->store, &it))
        arr[n++] = kube_obj_ref(e->val);
    pthread_rwlock_unlock(&inf->store_lock);
    *ret_objs = arr;
    *ret_n = n;
    return VMOP_OK;
}

vmop_rc kube_informer_by_index(struct kube_informer *inf, const char *index, const char *value,
                               struct kube_obj ***ret_objs, size_t *ret_n, struct vmop_err *err)
{
    struct index *x = NULL;
    for (size_t i = 0; i < inf->n_idx; i++)
        if (!strcmp(inf->idx[i].name, index))
            x = &inf->idx[i];
    if (!x)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "no index '%s'", index);
    pthread_rwlock_rdlock(&inf->store_lock);
    struct vmop_map *set = vmop_map_get(&x->values, value);
    size_t n = 0, cap = set ? set->len : 0;
    struct kube_obj **arr = calloc(cap + 1, sizeof(*arr));
    if (!arr) {
        pthread_rwlock_unlock(&inf->store_lock);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory reading an index");
    }
    struct vmop_map_iter it;
    for (struct vmop_map_entry *e = set ? vmop_map_first(set, &it) : NULL; e;
         e = vmop_map_next(set, &it)) {
        struct kube_obj *o = vmop_map_get(&inf->store, e->key);
        if (o)
            arr[n++] = kube_obj_ref(o);
    }
    pthread_rwlock_unlock(&inf->store_lock);
    *ret_objs = arr;
    *ret_n = n;
    return VMOP_OK;
}

size_t kube_informer_len(struct kube_informer *inf)
{
    pthread_rwlock_rdlock(&inf->store_lock);
    size_t n = inf->store.len;
    pthread_rwlock_unlock(&inf->store_lock);
    return n;
}

void kube_informer_last_rv(struct kube_informer *inf, char *buf, size_t buf_len)
{
    pthread_mutex_lock(&inf->state_lock);
    snprintf(buf, buf_len, "%s", inf->last_rv);
    pthread_mutex_unlock(&inf->state_lock);
}

unsigned long kube_informer_lists(struct kube_informer *inf)
{
    return __atomic_load_n(&inf->n_lists, __ATOMIC_RELAXED);
}

unsigned long kube_informer_watches(struct kube_informer *inf)
{
    return __atomic_load_n(&inf->n_watches, __ATOMIC_RELAXED);
}
