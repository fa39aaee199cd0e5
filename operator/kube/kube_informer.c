/* kube_informer.c: list+watch into an indexed cache of compact JSON texts, objects parsed per
 * lookup, and ordered dispatch to every registered handler set. Semantics in kube_informer.h.
 *
 * Locks: store_lock (rwlock) guards the store and the indexes; dispatch_lock serialises "change the
 * store + call the handlers" between the watch thread and the resync thread, so handlers (every
 * set, in registration order) see events in order and never concurrently; state_lock guards
 * last_rv. Order: dispatch_lock, then store_lock (never held while a handler runs, nor while a
 * text is parsed), then state_lock. The store changes only with both dispatch_lock and store_lock
 * held, so a dispatch_lock holder reads it without store_lock; lookups hold store_lock (read) only
 * to take references on the immutable entries, and parse after dropping it.
 *
 * Ownership: the store owns one reference on each struct entry (text + rv); a lookup takes another
 * for the time it parses. Each struct kube_obj owns its parsed tree and key copy.
 *
 * Texts of ENTRY_DEFLATE_MIN bytes or more are kept deflated (zlib, raw stream): a VirtualMachine
 * with its status is about 4 KB of JSON, deflate keeps well under half of it (0.41-0.60 of the
 * 0.6-1.5 KB VMs in testdata/conversion), and the cache holds every one; a lookup inflates before
 * it parses (3-4 microseconds for those, beside the parse).
 */
#include "kube_informer.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "kube_util.h"
#include "vmop_rv.h"

struct kube_obj {
    int refs;    /* atomic */
    cJSON *json; /* parsed for this holder alone */
    char *key;
    const char *rv; /* into json, or "" */
};

/* Texts shorter than this are kept as they are: deflate gains little on them. */
#define ENTRY_DEFLATE_MIN 512
/* A 4 KiB window and memLevel 4 keep deflate's state near 20 KiB (256 KiB at zlib's defaults);
 * the texts are a few KB, so a larger window would find little more to share. */
#define ENTRY_WBITS    12
#define ENTRY_MEMLEVEL 4

/* One cached object: its compact JSON text (no managedFields), raw or deflated, and its
 * resourceVersion, in one block. Immutable and refcounted, so a lookup can take a reference under
 * the store lock and parse after dropping it. */
struct entry {
    int refs;       /* atomic */
    size_t raw_len; /* the text's length, without its '\0' */
    size_t z_len;   /* bytes of raw deflate stream in data[], or 0: data[] is the text and '\0' */
    const char *rv; /* into data[], after the stored text, '\0'-terminated */
    unsigned char data[];
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

static void drop_managed_fields(cJSON *json)
{
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(json, "metadata"),
                                            "managedFields");
}

/* Takes json (also on failure). */
static struct kube_obj *obj_wrap(cJSON *json, const char *key)
{
    struct kube_obj *o = json ? calloc(1, sizeof(*o)) : NULL;
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

/* The text of e inflated into a new buffer (the caller frees it), or NULL (NOMEM, or a stream
 * that does not inflate to raw_len bytes, which entry_new never stores). */
static char *entry_inflate(const struct entry *e)
{
    char *text = malloc(e->raw_len + 1);
    z_stream zs = {0};
    if (!text || inflateInit2(&zs, -ENTRY_WBITS) != Z_OK) {
        free(text);
        return NULL;
    }
    zs.next_in = (Bytef *)e->data;
    zs.avail_in = (uInt)e->z_len;
    zs.next_out = (Bytef *)text;
    zs.avail_out = (uInt)e->raw_len;
    int zrc = inflate(&zs, Z_FINISH);
    size_t got = e->raw_len - zs.avail_out;
    inflateEnd(&zs);
    if (zrc != Z_STREAM_END || got != e->raw_len) {
        free(text);
        return NULL;
    }
    text[got] = '\0';
    return text;
}

/* A fresh tree of a cached entry, or NULL (NOMEM). */
static struct kube_obj *obj_parse(const struct entry *e, const char *key)
{
    if (!e->z_len)
        return obj_wrap(cJSON_Parse((const char *)e->data), key);
    char *text = entry_inflate(e);
    cJSON *json = text ? cJSON_Parse(text) : NULL;
    free(text);
    return obj_wrap(json, key);
}

/* The stand-in for an old state that could not be parsed (NOMEM): metadata.name/namespace only. */
static struct kube_obj *obj_stub(const char *key)
{
    cJSON *j = cJSON_CreateObject(), *md = cJSON_AddObjectToObject(j, "metadata");
    const char *slash = strchr(key, '/');
    if (md && slash) {
        char ns[512];
        snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
        cJSON_AddStringToObject(md, "namespace", ns);
    }
    if (md)
        cJSON_AddStringToObject(md, "name", slash ? slash + 1 : key);
    return obj_wrap(j, key);
}

/* text (tl bytes) deflated into out (cap bytes): the stream's length, or 0 when it does not fit
 * (it would not be smaller) or deflate fails; then the text is kept raw. */
static size_t entry_deflate(const char *text, size_t tl, unsigned char *out, size_t cap)
{
    z_stream zs = {0};
    if (tl > UINT32_MAX || deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -ENTRY_WBITS,
                                        ENTRY_MEMLEVEL, Z_DEFAULT_STRATEGY) != Z_OK)
        return 0;
    zs.next_in = (Bytef *)text;
    zs.avail_in = (uInt)tl;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    int zrc = deflate(&zs, Z_FINISH);
    size_t n = cap - zs.avail_out;
    deflateEnd(&zs);
    return zrc == Z_STREAM_END ? n : 0;
}

/* The compact text of json (managedFields already dropped), or NULL (NOMEM). */
static struct entry *entry_new(const cJSON *json)
{
    char *text = cJSON_PrintUnformatted(json);
    const char *rv = kube_obj_rv(json);
    if (!text)
        return NULL;
    size_t tl = strlen(text), rl = rv ? strlen(rv) : 0;
    /* deflated only if it saves at least a tenth */
    unsigned char *z = tl >= ENTRY_DEFLATE_MIN ? malloc(tl - tl / 10) : NULL;
    size_t zl = z ? entry_deflate(text, tl, z, tl - tl / 10) : 0;
    size_t stored = zl ? zl : tl + 1;
    struct entry *e = malloc(sizeof(*e) + stored + rl + 1);
    if (e) {
        e->refs = 1;
        e->raw_len = tl;
        e->z_len = zl;
        memcpy(e->data, zl ? (const void *)z : (const void *)text, stored);
        memcpy(e->data + stored, rv ? rv : "", rl + 1);
        e->rv = (const char *)e->data + stored;
    }
    free(z);
    free(text);
    return e;
}

static struct entry *entry_ref(struct entry *e)
{
    __atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
    return e;
}

static void entry_unref(void *p)
{
    struct entry *e = p;
    if (e && __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(e);
}

struct index {
    char *name;
    kube_index_fn fn;
    void *ud;
    struct vmop_map values; /* value -> struct vmop_map * (set of keys) */
};

struct kube_informer {
    /* read-only after new / add_index / add_handlers */
    struct kube_client *c;
    struct kube_informer_opts o; /* strings below are our copies */
    char *ns, *label_selector, *field_selector;
    struct kube_informer_handlers *hs; /* dispatched in this order */
    size_t n_hs;
    struct index idx[KUBE_INFORMER_MAX_INDEXES];
    size_t n_idx;

    pthread_rwlock_t store_lock;
    /* key -> struct entry * (one ref). Changed only with dispatch_lock AND store_lock (write)
     * held, so a dispatch_lock holder may read it without store_lock. */
    struct vmop_map store;

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
    vmop_map_init(&inf->store, entry_unref);
    inf->backoff_ms = inf->o.backoff_min_ms;
    if (bad || (h && kube_informer_add_handlers(inf, h, NULL) != VMOP_OK)) {
        kube_informer_free(inf);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory creating an informer");
    }
    *ret_inf = inf;
    return VMOP_OK;
}

vmop_rc kube_informer_add_handlers(struct kube_informer *inf,
                                   const struct kube_informer_handlers *h, struct vmop_err *err)
{
    if (!inf || !h)
        return vmop_fail(err, VMOP_E_INVALID, "kube_informer_add_handlers: NULL argument");
    if (inf->started)
        return vmop_fail(err, VMOP_E_INVALID, "handlers must be added before the informer starts");
    struct kube_informer_handlers *hs = realloc(inf->hs, (inf->n_hs + 1) * sizeof(*hs));
    if (!hs)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory adding handlers");
    hs[inf->n_hs++] = *h;
    inf->hs = hs;
    return VMOP_OK;
}

vmop_rc kube_informer_add_index(struct kube_informer *inf, const char *name, kube_index_fn fn,
                                void *ud, struct vmop_err *err)
{
    if (inf->started)
        return vmop_fail(err, VMOP_E_INVALID, "indexes must be added before the informer starts");
    if (inf->n_idx == KUBE_INFORMER_MAX_INDEXES)
        return vmop_fail(err, VMOP_E_TOOBIG, "more than %d indexes", KUBE_INFORMER_MAX_INDEXES);
    if (kube_informer_has_index(inf, name))
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

int kube_informer_has_index(struct kube_informer *inf, const char *name)
{
    for (size_t i = 0; i < inf->n_idx; i++)
        if (!strcmp(inf->idx[i].name, name))
            return 1;
    return 0;
}

/* ---- handler dispatch (dispatch_lock held, store_lock not) ---- */

static void dispatch_add(struct kube_informer *inf, const struct kube_obj *o)
{
    for (size_t i = 0; i < inf->n_hs; i++)
        if (inf->hs[i].on_add)
            inf->hs[i].on_add(inf->hs[i].ud, o);
}

static void dispatch_update(struct kube_informer *inf, const struct kube_obj *old,
                            const struct kube_obj *o)
{
    for (size_t i = 0; i < inf->n_hs; i++)
        if (inf->hs[i].on_update)
            inf->hs[i].on_update(inf->hs[i].ud, old, o);
}

static void dispatch_delete(struct kube_informer *inf, const struct kube_obj *o)
{
    for (size_t i = 0; i < inf->n_hs; i++)
        if (inf->hs[i].on_delete)
            inf->hs[i].on_delete(inf->hs[i].ud, o);
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

static void set_add_locked(struct index *x, const char *value, const char *key)
{
    struct vmop_map *set = vmop_map_get(&x->values, value);
    if (!set) {
        set = calloc(1, sizeof(*set));
        if (!set)
            return; /* NOMEM: the index misses it */
        vmop_map_init(set, NULL);
        if (vmop_map_put(&x->values, value, set) != VMOP_OK) {
            free(set);
            return;
        }
    }
    (void)vmop_map_put(set, key, NULL); /* NOMEM: the index misses it */
}

static void set_del_locked(struct index *x, const char *value, const char *key)
{
    struct vmop_map *set = vmop_map_get(&x->values, value);
    if (set) {
        vmop_map_del(set, key);
        if (!set->len)
            vmop_map_del(&x->values, value);
    }
}

/* Adds (add) or removes key under the index values of json (the parsed object stored at key). */
static void index_update_locked(struct kube_informer *inf, const cJSON *json, const char *key,
                                int add)
{
    for (size_t i = 0; i < inf->n_idx; i++) {
        struct index *x = &inf->idx[i];
        struct emit_ctx e = {.n = 0};
        x->fn(json, x->ud, emit_cb, &e);
        for (size_t k = 0; k < e.n; k++) {
            if (add)
                set_add_locked(x, e.vals[k], key);
            else
                set_del_locked(x, e.vals[k], key);
            free(e.vals[k]);
        }
    }
}

/* Removes key from every index, when its stored values cannot be recomputed (the old text could
 * not be parsed: NOMEM). O(index values). */
static void index_purge_locked(struct kube_informer *inf, const char *key)
{
    for (size_t i = 0; i < inf->n_idx; i++) {
        struct vmop_map *vals = &inf->idx[i].values;
        struct vmop_map_iter it;
        for (struct vmop_map_entry *e = vmop_map_first(vals, &it); e; e = vmop_map_next(vals, &it))
            vmop_map_del(e->val, key); /* an emptied set stays, harmless, until reused */
    }
}

/* The state cached at key, parsed (a stub if it cannot be: kube_informer.h), or NULL when key is
 * not cached. dispatch_lock held. */
static struct kube_obj *cached_old(struct kube_informer *inf, const char *key, int *ret_parsed)
{
    struct entry *cur = vmop_map_get(&inf->store, key);
    struct kube_obj *old = cur ? obj_parse(cur, key) : NULL;
    *ret_parsed = old != NULL;
    return cur && !old ? obj_stub(key) : old;
}

/* Stores ne (takes its ref) at key, reindexing from old (the parsed state it replaces, or NULL)
 * to json. -1 (ne released, store unchanged) on NOMEM. dispatch_lock held. */
static int store_put(struct kube_informer *inf, const char *key, struct entry *ne,
                     const cJSON *json, const struct kube_obj *old, int old_parsed)
{
    int replace = vmop_map_has(&inf->store, key);
    pthread_rwlock_wrlock(&inf->store_lock);
    if (vmop_map_put(&inf->store, key, ne) != VMOP_OK) { /* only an insert can fail */
        pthread_rwlock_unlock(&inf->store_lock);
        entry_unref(ne);
        return -1;
    }
    if (replace && old_parsed)
        index_update_locked(inf, kube_obj_json(old), key, 0);
    else if (replace)
        index_purge_locked(inf, key);
    index_update_locked(inf, json, key, 1);
    pthread_rwlock_unlock(&inf->store_lock);
    return 0;
}

/* Removes key; returns its last cached state, parsed (or a stub), or NULL when it was not cached.
 * dispatch_lock held. */
static struct kube_obj *store_del(struct kube_informer *inf, const char *key)
{
    int parsed;
    struct kube_obj *old = cached_old(inf, key, &parsed);
    if (!vmop_map_has(&inf->store, key))
        return NULL;
    pthread_rwlock_wrlock(&inf->store_lock);
    if (parsed)
        index_update_locked(inf, kube_obj_json(old), key, 0);
    else
        index_purge_locked(inf, key);
    vmop_map_del(&inf->store, key);
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

/* The resourceVersion cached at key, or NULL. dispatch_lock held. */
static const char *cached_rv(struct kube_informer *inf, const char *key)
{
    const struct entry *cur = vmop_map_get(&inf->store, key);
    return cur ? cur->rv : NULL;
}

/* Upserts json (taken) and dispatches add/update. dispatch_lock held. */
static void upsert_dispatch(struct kube_informer *inf, cJSON *json, const char *key)
{
    drop_managed_fields(json);
    struct entry *ne = entry_new(json);
    struct kube_obj *nobj = obj_wrap(json, key); /* the handlers' view of the new state */
    int parsed = 0;
    if (!ne || !nobj) {
        entry_unref(ne);
        kube_obj_unref(nobj);
        return;
    }
    struct kube_obj *old = cached_old(inf, key, &parsed);
    if (store_put(inf, key, ne, kube_obj_json(nobj), old, parsed) == 0) {
        if (old)
            dispatch_update(inf, old, nobj);
        else
            dispatch_add(inf, nobj);
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
            drop_managed_fields(obj);
            struct kube_obj *last = obj_wrap(obj, key); /* the final state from the event */
            dispatch_delete(inf, last ? last : old);
            kube_obj_unref(last);
            kube_obj_unref(old);
        } else {
            cJSON_Delete(obj);
        }
    } else {
        const char *cur_rv = cached_rv(inf, key);
        int cmp = cur_rv ? vmop_rv_cmp(rv, cur_rv) : 1;
        set_last_rv(inf, rv);
        if (cur_rv && (cmp == 0 || cmp == -1))
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
        const char *cur_rv = cached_rv(inf, key);
        if (cur_rv && vmop_rv_cmp(kube_obj_rv(it), cur_rv) == 0)
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
        if (old)
            dispatch_delete(inf, old);
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
        int any = 0;
        for (size_t i = 0; i < inf->n_hs; i++)
            any |= inf->hs[i].on_update != NULL;
        if (!kube_informer_has_synced(inf) || !any)
            continue;
        struct kube_obj **objs = NULL;
        size_t n = 0;
        pthread_mutex_lock(&inf->dispatch_lock);
        if (kube_informer_list(inf, &objs, &n, NULL) == VMOP_OK) {
            for (size_t i = 0; i < n; i++)
                dispatch_update(inf, objs[i], objs[i]); /* one tree: old == new */
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
    free(inf->hs);
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

/* Parses the n entries (taking their refs, and the keys) into *ret_objs; NOMEM fails the lot. */
static vmop_rc parse_all(struct entry **es, char **keys, size_t n, struct kube_obj ***ret_objs,
                         size_t *ret_n, struct vmop_err *err)
{
    struct kube_obj **arr = calloc(n + 1, sizeof(*arr));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (arr && !(arr[k] = obj_parse(es[i], keys[i]))) {
            kube_objs_free(arr, k);
            arr = NULL;
        }
        k += arr != NULL;
        entry_unref(es[i]);
        free(keys[i]);
    }
    free(es);
    free(keys);
    if (!arr)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory reading the cache");
    *ret_objs = arr;
    *ret_n = k;
    return VMOP_OK;
}

/* Collects (ref + key copy) the store entries at the keys of set, or every entry (set NULL).
 * store_lock held for reading. */
static vmop_rc collect_locked(struct kube_informer *inf, const struct vmop_map *set,
                              struct entry ***ret_es, char ***ret_keys, size_t *ret_n)
{
    const struct vmop_map *m = set ? set : &inf->store;
    struct entry **es = calloc(m->len + 1, sizeof(*es));
    char **keys = calloc(m->len + 1, sizeof(*keys));
    size_t n = 0;
    int nomem = !es || !keys;
    struct vmop_map_iter it;
    for (struct vmop_map_entry *e = nomem ? NULL : vmop_map_first(m, &it); e;
         e = vmop_map_next(m, &it)) {
        struct entry *se = set ? vmop_map_get(&inf->store, e->key) : e->val;
        if (!se)
            continue;
        if ((nomem = !(keys[n] = strdup(e->key))))
            break;
        es[n++] = entry_ref(se);
    }
    if (nomem) {
        for (size_t i = 0; i < n; i++) {
            entry_unref(es[i]);
            free(keys[i]);
        }
        free(es);
        free(keys);
        return VMOP_E_NOMEM;
    }
    *ret_es = es;
    *ret_keys = keys;
    *ret_n = n;
    return VMOP_OK;
}

struct kube_obj *kube_informer_get(struct kube_informer *inf, const char *key)
{
    pthread_rwlock_rdlock(&inf->store_lock);
    struct entry *e = vmop_map_get(&inf->store, key);
    if (e)
        entry_ref(e);
    pthread_rwlock_unlock(&inf->store_lock);
    if (!e)
        return NULL;
    struct kube_obj *o = obj_parse(e, key); /* outside the lock: O(size) */
    entry_unref(e);
    return o;
}

vmop_rc kube_informer_list(struct kube_informer *inf, struct kube_obj ***ret_objs, size_t *ret_n,
                           struct vmop_err *err)
{
    struct entry **es = NULL;
    char **keys = NULL;
    size_t n = 0;
    pthread_rwlock_rdlock(&inf->store_lock);
    vmop_rc rc = collect_locked(inf, NULL, &es, &keys, &n);
    pthread_rwlock_unlock(&inf->store_lock);
    if (rc != VMOP_OK)
        return vmop_fail(err, rc, "out of memory listing the cache");
    return parse_all(es, keys, n, ret_objs, ret_n, err);
}

vmop_rc kube_informer_by_index(struct kube_informer *inf, const char *index, const char *value,
                               struct kube_obj ***ret_objs, size_t *ret_n, struct vmop_err *err)
{
    struct index *x = NULL;
    struct entry **es = NULL;
    char **keys = NULL;
    size_t n = 0;
    for (size_t i = 0; i < inf->n_idx; i++)
        if (!strcmp(inf->idx[i].name, index))
            x = &inf->idx[i];
    if (!x)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "no index '%s'", index);
    pthread_rwlock_rdlock(&inf->store_lock);
    static const struct vmop_map empty;
    const struct vmop_map *set = vmop_map_get(&x->values, value);
    vmop_rc rc = collect_locked(inf, set ? set : &empty, &es, &keys, &n);
    pthread_rwlock_unlock(&inf->store_lock);
    if (rc != VMOP_OK)
        return vmop_fail(err, rc, "out of memory reading an index");
    return parse_all(es, keys, n, ret_objs, ret_n, err);
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
