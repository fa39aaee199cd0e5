/* kube_informer.h: list+watch of one resource into a local cache, with indexes and handlers.
 *
 * A thread lists (paged) and then watches from the list's resourceVersion, resuming from the last
 * resourceVersion seen (events and bookmarks) after a dropped or timed-out stream, and relisting
 * after 410 Gone/Expired. A relist is diffed against the cache: new objects give add, changed
 * resourceVersions update, objects that disappeared delete (with their last known state), and
 * unchanged ones nothing, so no event is lost or delivered twice. Watch events whose
 * resourceVersion is not newer than the cached one are dropped as duplicates.
 *
 * Storage: the cache keeps each object as its compact JSON text (cJSON_PrintUnformatted, without
 * metadata.managedFields: often half an object's size; nothing here reads them, and an update sent
 * without them keeps the server's) with its key and resourceVersion, about a fifth of the memory
 * of a cJSON tree; texts of 512 bytes or more deflated (zlib), under half again for a VM.
 * Index values are computed when an object is inserted, from its parsed tree.
 *
 * Objects handed out (struct kube_obj) are immutable and refcounted, and each carries a tree parsed
 * for it: kube_informer_get / _list / _by_index parse every object they return (O(size) each, and
 * that much memory until the last kube_obj_unref()), so two lookups of one key never return the
 * same pointer and nobody may rely on it; a reference stays valid, unchanged, after the cache
 * replaced or deleted the object. Prefer an index to a full list on hot paths.
 *
 * Handlers are called from the informer's threads, one at a time (never concurrently, in event
 * order), without the cache lock held: they may read the cache. Several handler sets may be
 * registered (kube_informer_new's and kube_informer_add_handlers', before start); each event goes
 * to every set in registration order before the next event. They get borrowed read-only views
 * (take a kube_obj_ref() to keep one), parsed once per event and shared by all sets, and should be
 * quick (enqueue a key). on_update's old and new are distinct objects for a real change; a resync
 * (if configured) calls on_update(obj, obj) (the same pointer) for every cached object every
 * resync_ms. If the cached old state cannot be parsed (out of memory), old (or on_delete's last
 * state after a relist) is a stub carrying only metadata.name and .namespace.
 *
 * Cache keys are "namespace/name", or "name" for cluster-scoped objects.
 */
#ifndef KUBE_INFORMER_H
#define KUBE_INFORMER_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "kube_client.h"
#include "vmop_err.h"

#define KUBE_INFORMER_MAX_INDEXES      16
#define KUBE_INFORMER_MAX_INDEX_VALUES 64 /* per object and index */

struct kube_obj;

const cJSON *kube_obj_json(const struct kube_obj *o);
const char *kube_obj_key(const struct kube_obj *o);    /* borrowed */
const char *kube_obj_get_rv(const struct kube_obj *o); /* borrowed, may be "" */
/* +1 reference (returns o). */
struct kube_obj *kube_obj_ref(const struct kube_obj *o);
/* -1 reference; NULL-safe. */
void kube_obj_unref(struct kube_obj *o);
/* Unrefs every element and frees the array. */
void kube_objs_free(struct kube_obj **objs, size_t n);

/* "namespace/name" or "name" into buf; 0 on success, -1 when metadata.name is missing or the
 * key does not fit. */
int kube_key_of(const cJSON *obj, char *buf, size_t buf_len);

/* An index function calls emit(ctx, value) for each index value of obj (at most
 * KUBE_INFORMER_MAX_INDEX_VALUES). It must be pure (same obj -> same values). */
typedef void (*kube_index_emit_fn)(void *ctx, const char *value);
typedef void (*kube_index_fn)(const cJSON *obj, void *ud, kube_index_emit_fn emit, void *ctx);

struct kube_informer_handlers {
    void (*on_add)(void *ud, const struct kube_obj *obj);
    void (*on_update)(void *ud, const struct kube_obj *old_obj, const struct kube_obj *new_obj);
    void (*on_delete)(void *ud, const struct kube_obj *last);
    void *ud;
};

struct kube_informer_opts {
    const struct kube_resource *resource; /* required; borrowed for the informer's life */
    const char *ns;                       /* NULL: all namespaces */
    const char *label_selector;
    const char *field_selector;
    long resync_ms;      /* 0: no resync */
    long page_size;      /* list page size; 0: 500 */
    int watch_timeout_s; /* 0: random 300..600 like client-go */
    long backoff_min_ms; /* after a failed list/watch; 0: 100 */
    long backoff_max_ms; /* 0: 30000 */
};

struct kube_informer;

/* c, opts->resource and the handlers' ud are borrowed for the informer's life. Strings in opts are
 * copied. h may be NULL (no handlers, or kube_informer_add_handlers() later). */
vmop_rc kube_informer_new(struct kube_client *c, const struct kube_informer_opts *opts,
                          const struct kube_informer_handlers *h, struct kube_informer **ret_inf,
                          struct vmop_err *err);
/* Another handler set (copied; its ud borrowed for the informer's life), dispatched after the
 * sets registered before it. Before start only. */
vmop_rc kube_informer_add_handlers(struct kube_informer *inf,
                                   const struct kube_informer_handlers *h, struct vmop_err *err);
/* Before start only. name is copied. */
vmop_rc kube_informer_add_index(struct kube_informer *inf, const char *name, kube_index_fn fn,
                                void *ud, struct vmop_err *err);
/* 1 when an index of that name was added. */
int kube_informer_has_index(struct kube_informer *inf, const char *name);
vmop_rc kube_informer_start(struct kube_informer *inf, struct vmop_err *err);
/* Stops and joins the threads (a blocked watch is aborted within about a second). Idempotent. */
void kube_informer_stop(struct kube_informer *inf);
/* Stops if needed and frees. NULL-safe. */
void kube_informer_free(struct kube_informer *inf);

/* True once the first list has been delivered to the handlers. */
int kube_informer_has_synced(struct kube_informer *inf);
/* VMOP_OK once synced, VMOP_E_TIMEOUT after timeout_ms. */
vmop_rc kube_informer_wait_synced(struct kube_informer *inf, long timeout_ms);

/* Cached object by key, freshly parsed: +1 reference, or NULL (absent, or out of memory). */
struct kube_obj *kube_informer_get(struct kube_informer *inf, const char *key);
/* Every cached object / those whose index `index` has `value`, each freshly parsed: an array of
 * references (kube_objs_free()). Order unspecified. */
vmop_rc kube_informer_list(struct kube_informer *inf, struct kube_obj ***ret_objs, size_t *ret_n,
                           struct vmop_err *err);
vmop_rc kube_informer_by_index(struct kube_informer *inf, const char *index, const char *value,
                               struct kube_obj ***ret_objs, size_t *ret_n, struct vmop_err *err);
size_t kube_informer_len(struct kube_informer *inf);
/* The last resourceVersion seen (copied into buf; "" before the first list). */
void kube_informer_last_rv(struct kube_informer *inf, char *buf, size_t buf_len);
/* Counters for tests and metrics. */
unsigned long kube_informer_lists(struct kube_informer *inf);
unsigned long kube_informer_watches(struct kube_informer *inf);

#endif
