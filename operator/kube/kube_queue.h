/* kube_queue.h: a controller work queue (client-go workqueue semantics) and worker threads.
 *
 * - Keys are deduplicated: a key added several times before a worker takes it is processed once.
 * - A key is never processed by two workers at once: a key added while it is being processed is
 *   marked dirty and handed out again only after kube_queue_done().
 * - Rate limiting (kube_queue_add_rate_limited) = max(per-key exponential backoff base*2^failures
 *   capped at max, an overall token bucket of qps/burst), like client-go's
 *   DefaultControllerRateLimiter (5 ms .. 1000 s, 10 qps, burst 100). kube_queue_forget() resets a
 *   key's failures.
 * - kube_queue_add_after() delays a key; the earliest pending time per key wins;
 *   kube_queue_cancel_after() drops it if nobody asked for it since a given time.
 * - Shutdown: further adds are ignored; keys already queued are still handed out; kube_queue_get()
 *   returns VMOP_E_CANCELED once the queue is empty (delayed keys are dropped).
 *
 * Threads: every function is thread-safe. Keys are copied in; keys handed out are malloc'd.
 */
#ifndef KUBE_QUEUE_H
#define KUBE_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "vmop_err.h"

#define KUBE_QUEUE_MAX_KEY 1024 /* namespace/name is at most 253+1+253 */

struct kube_queue_opts {
    long base_delay_ms; /* 0: 5 */
    long max_delay_ms;  /* 0: 1000 s */
    double qps;         /* overall bucket refill; 0: 10; < 0: no bucket */
    int burst;          /* 0: 100 */
    /* clock for the rate limiter (ms, monotonic); NULL: the real one. Delays of add_after and of
     * rate-limited adds are always waited on the real clock. */
    int64_t (*now_ms)(void *ud);
    void *clock_ud;
};

struct kube_queue;

/* o may be NULL. *ret_q owned: kube_queue_free(). */
vmop_rc kube_queue_new(const struct kube_queue_opts *o, struct kube_queue **ret_q,
                       struct vmop_err *err);
/* NULL-safe. No thread may still use q. */
void kube_queue_free(struct kube_queue *q);

/* VMOP_OK (also when deduplicated or ignored after shutdown), VMOP_E_INVALID (empty or too long
 * key), VMOP_E_NOMEM. */
vmop_rc kube_queue_add(struct kube_queue *q, const char *key);
vmop_rc kube_queue_add_after(struct kube_queue *q, const char *key, long delay_ms);
/* Drops key's pending delayed add when every add_after merged into it was asked before
 * asked_before_ms (vmop_mono_ms() clock), and, for a key being processed, its pending re-run when
 * only delayed adds that came due are behind it and each was asked before then (a direct
 * kube_queue_add is never dropped); a key that is ready (not being processed) is still handed
 * out. For a
 * controller whose successful pass decides when to look again and has seen everything up to
 * that time: the wake-ups asked for earlier are superseded, those asked for since are kept. */
void kube_queue_cancel_after(struct kube_queue *q, const char *key, int64_t asked_before_ms);
/* add_after(key, kube_queue_when(q, key)). */
vmop_rc kube_queue_add_rate_limited(struct kube_queue *q, const char *key);
/* The rate limiter alone: records a failure of key and returns the delay it earns. */
long kube_queue_when(struct kube_queue *q, const char *key);
void kube_queue_forget(struct kube_queue *q, const char *key);
unsigned kube_queue_num_requeues(struct kube_queue *q, const char *key);

/* Takes the next ready key: waits up to timeout_ms (< 0: forever). *ret_key is malloc'd: pass it
 * to kube_queue_done() and free() it. VMOP_E_TIMEOUT, or VMOP_E_CANCELED after shutdown. */
vmop_rc kube_queue_get(struct kube_queue *q, long timeout_ms, char **ret_key);
/* Ends processing of key (re-queues it if it was added meanwhile). */
void kube_queue_done(struct kube_queue *q, const char *key);
void kube_queue_shutdown(struct kube_queue *q);
int kube_queue_shutting_down(struct kube_queue *q);
/* Keys ready now (not processing, not delayed). */
size_t kube_queue_len(struct kube_queue *q);
/* Keys waiting for a delay. */
size_t kube_queue_delayed_len(struct kube_queue *q);

/* ---- workers ---- */

/* A reconcile: VMOP_OK forgets the key's failures; any failure re-adds it rate-limited.
 * Must be thread-safe (n workers call it, never with the same key at once). */
typedef vmop_rc (*kube_reconcile_fn)(void *ud, const char *key, struct vmop_err *err);

struct kube_workers;

/* Starts n threads taking keys from q. *ret_w: kube_workers_stop() ends and frees it. */
vmop_rc kube_workers_start(struct kube_queue *q, unsigned n, kube_reconcile_fn fn, void *ud,
                           struct kube_workers **ret_w, struct vmop_err *err);
/* Shuts the queue down and lets the workers finish the queued keys for up to drain_ms; then the
 * keys not yet started are dropped, keys in progress are waited for, and the threads are joined.
 * Returns VMOP_E_TIMEOUT (after joining) when the deadline cut the drain short. Frees w. */
vmop_rc kube_workers_stop(struct kube_workers *w, long drain_ms, struct vmop_err *err);

#endif
