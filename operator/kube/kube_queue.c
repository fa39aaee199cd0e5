/* kube_queue.c: the work queue (dedup, dirty/processing sets, delays, rate limiting) and the
 * worker threads helper. Semantics in kube_queue.h.
 *
 * One mutex guards everything; one condition variable (on CLOCK_MONOTONIC) wakes getters for new
 * keys, for the earliest delayed key and for shutdown. Delayed keys live in a min-heap with lazy
 * deletion: `waiting` maps a key to its earliest ready time (and when it was last asked for),
 * heap entries that disagree are stale.
 */
#include "kube_queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube_util.h"

struct delayed {
    int64_t at_ms;
    char *key;
};

/* A key's pending wake-up: the earliest time asked for, and the last time any add_after asked for
 * one (a later request merged into an earlier wake-up counts: that wake-up now serves it). */
struct wakeup {
    int64_t at_ms;
    int64_t asked_ms;
};

struct kube_queue {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* all guarded by lock */
    char **fifo; /* ring of ready keys (owned) */
    size_t head, len, cap;
    /* keys wanting processing -> (int64_t *) when the latest delayed add that made or kept it so
     * was asked for (not when it came due); INT64_MAX once a direct add did (owned) */
    struct vmop_map dirty;
    struct vmop_map processing; /* keys a worker holds */
    struct vmop_map waiting;    /* key -> (struct wakeup *) its pending wake-up (owned) */
    struct delayed *heap;
    size_t heap_len, heap_cap;
    struct vmop_map failures; /* key -> (unsigned *) failure count (owned) */
    double tokens;            /* token bucket */
    int64_t tokens_at_ms;
    int shutting_down;
    int drop; /* kube_workers_stop past its deadline: hand out nothing more */
    /* read-only after new */
    struct kube_queue_opts o;
};

static int64_t q_now(struct kube_queue *q)
{
    return q->o.now_ms ? q->o.now_ms(q->o.clock_ud) : vmop_mono_ms();
}

vmop_rc kube_queue_new(const struct kube_queue_opts *o, struct kube_queue **ret_q,
                       struct vmop_err *err)
{
    struct kube_queue *q = calloc(1, sizeof(*q));
    if (!q)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory creating a work queue");
    if (o)
        q->o = *o;
    if (q->o.base_delay_ms <= 0)
        q->o.base_delay_ms = 5;
    if (q->o.max_delay_ms <= 0)
        q->o.max_delay_ms = 1000L * 1000;
    if (q->o.qps == 0)
        q->o.qps = 10;
    if (q->o.burst <= 0)
        q->o.burst = 100;
    pthread_mutex_init(&q->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->cond, &ca);
    pthread_condattr_destroy(&ca);
    vmop_map_init(&q->dirty, free);
    vmop_map_init(&q->processing, NULL);
    vmop_map_init(&q->waiting, free);
    vmop_map_init(&q->failures, free);
    q->tokens = q->o.burst;
    q->tokens_at_ms = q_now(q);
    *ret_q = q;
    return VMOP_OK;
}

void kube_queue_free(struct kube_queue *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->len; i++)
        free(q->fifo[(q->head + i) % q->cap]);
    free(q->fifo);
    for (size_t i = 0; i < q->heap_len; i++)
        free(q->heap[i].key);
    free(q->heap);
    vmop_map_clear(&q->dirty);
    vmop_map_clear(&q->processing);
    vmop_map_clear(&q->waiting);
    vmop_map_clear(&q->failures);
    pthread_cond_destroy(&q->cond);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

static int key_ok(const char *key)
{
    return key && *key && strlen(key) <= KUBE_QUEUE_MAX_KEY;
}

/* ---- ready FIFO ---- */

static vmop_rc fifo_push_locked(struct kube_queue *q, const char *key)
{
    if (q->len == q->cap) {
        size_t ncap = q->cap ? q->cap * 2 : 64;
        char **nf = malloc(ncap * sizeof(*nf));
        if (!nf)
            return VMOP_E_NOMEM;
        for (size_t i = 0; i < q->len; i++)
            nf[i] = q->fifo[(q->head + i) % q->cap];
        free(q->fifo);
        q->fifo = nf;
        q->cap = ncap;
        q->head = 0;
    }
    char *k = strdup(key);
    if (!k)
        return VMOP_E_NOMEM;
    q->fifo[(q->head + q->len) % q->cap] = k;
    q->len++;
    return VMOP_OK;
}

static char *fifo_pop_locked(struct kube_queue *q)
{
    char *k = q->fifo[q->head];
    q->head = (q->head + 1) % q->cap;
    q->len--;
    return k;
}

/* asked_ms: when a delayed add was asked for; INT64_MAX for a direct add, which
 * kube_queue_cancel_after never supersedes (an informer's event may be what the pass did not see)
 */
static vmop_rc add_locked(struct kube_queue *q, const char *key, int64_t asked_ms)
{
    int64_t *asked;
    if (q->shutting_down)
        return VMOP_OK;
    if ((asked = vmop_map_get(&q->dirty, key)) != NULL) {
        if (asked_ms > *asked)
            *asked = asked_ms;
        return VMOP_OK;
    }
    if (!(asked = malloc(sizeof(*asked))))
        return VMOP_E_NOMEM;
    *asked = asked_ms;
    if (vmop_map_put(&q->dirty, key, asked)) {
        free(asked);
        return VMOP_E_NOMEM;
    }
    if (vmop_map_has(&q->processing, key))
        return VMOP_OK; /* handed out again by done() */
    vmop_rc rc = fifo_push_locked(q, key);
    if (rc) {
        vmop_map_del(&q->dirty, key);
        return rc;
    }
    pthread_cond_signal(&q->cond);
    return VMOP_OK;
}

vmop_rc kube_queue_add(struct kube_queue *q, const char *key)
{
    if (!key_ok(key))
        return VMOP_E_INVALID;
    pthread_mutex_lock(&q->lock);
    vmop_rc rc = add_locked(q, key, INT64_MAX);
    pthread_mutex_unlock(&q->lock);
    return rc;
}

/* ---- delayed heap ---- */

static void heap_swap(struct delayed *a, struct delayed *b)
{
    struct delayed t = *a;
    *a = *b;
    *b = t;
}

static vmop_rc heap_push_locked(struct kube_queue *q, int64_t at, const char *key)
{
    if (q->heap_len == q->heap_cap) {
        size_t ncap = q->heap_cap ? q->heap_cap * 2 : 64;
        struct delayed *nh = realloc(q->heap, ncap * sizeof(*nh));
        if (!nh)
            return VMOP_E_NOMEM;
        q->heap = nh;
        q->heap_cap = ncap;
    }
    char *k = strdup(key);
    if (!k)
        return VMOP_E_NOMEM;
    size_t i = q->heap_len++;
    q->heap[i] = (struct delayed){.at_ms = at, .key = k};
    while (i > 0 && q->heap[(i - 1) / 2].at_ms > q->heap[i].at_ms) {
        heap_swap(&q->heap[(i - 1) / 2], &q->heap[i]);
        i = (i - 1) / 2;
    }
    return VMOP_OK;
}

static struct delayed heap_pop_locked(struct kube_queue *q)
{
    struct delayed top = q->heap[0];
    q->heap[0] = q->heap[--q->heap_len];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->heap_len && q->heap[l].at_ms < q->heap[m].at_ms)
            m = l;
        if (r < q->heap_len && q->heap[r].at_ms < q->heap[m].at_ms)
            m = r;
        if (m == i)
            break;
        heap_swap(&q->heap[i], &q->heap[m]);
        i = m;
    }
    return top;
}

/* Moves due delayed keys to the ready FIFO. Returns the ms until the next one (or -1). */
static int64_t promote_due_locked(struct kube_queue *q)
{
    int64_t now = vmop_mono_ms();
    while (q->heap_len) {
        if (q->heap[0].at_ms > now)
            return q->heap[0].at_ms - now;
        struct delayed d = heap_pop_locked(q);
        const struct wakeup *w = vmop_map_get(&q->waiting, d.key);
        if (w && w->at_ms == d.at_ms) { /* else a stale entry */
            int64_t asked = w->asked_ms;
            vmop_map_del(&q->waiting, d.key);
            (void)add_locked(q, d.key, asked);
        }
        free(d.key);
    }
    return -1;
}

vmop_rc kube_queue_add_after(struct kube_queue *q, const char *key, long delay_ms)
{
    if (!key_ok(key))
        return VMOP_E_INVALID;
    if (delay_ms <= 0)
        return kube_queue_add(q, key);
    vmop_rc rc = VMOP_OK;
    pthread_mutex_lock(&q->lock);
    if (q->shutting_down)
        goto out;
    int64_t now = vmop_mono_ms(), at = now + delay_ms;
    struct wakeup *cur = vmop_map_get(&q->waiting, key), *nw;
    if (cur && cur->at_ms <= at) {
        cur->asked_ms = now; /* an earlier wake-up is already pending: it serves this one too */
        goto out;
    }
    nw = malloc(sizeof(*nw));
    if (!nw) {
        rc = VMOP_E_NOMEM;
        goto out;
    }
    nw->at_ms = at;
    nw->asked_ms = now;
    if ((rc = heap_push_locked(q, at, key))) {
        free(nw);
        goto out;
    }
    if ((rc = vmop_map_put(&q->waiting, key, nw))) {
        free(nw);
        goto out;
    }
    pthread_cond_broadcast(&q->cond); /* a getter may need to wake earlier */
out:
    pthread_mutex_unlock(&q->lock);
    return rc;
}

void kube_queue_cancel_after(struct kube_queue *q, const char *key, int64_t asked_before_ms)
{
    const struct wakeup *w;
    if (!q || !key_ok(key))
        return;
    pthread_mutex_lock(&q->lock);
    w = vmop_map_get(&q->waiting, key);
    if (w && w->asked_ms < asked_before_ms)
        vmop_map_del(&q->waiting, key); /* its heap entry is stale now (lazy deletion) */
    if (vmop_map_has(&q->processing, key)) {
        /* a wake-up that came due while the key was being processed: the same rule */
        const int64_t *asked = vmop_map_get(&q->dirty, key);
        if (asked && *asked < asked_before_ms)
            vmop_map_del(&q->dirty, key);
    }
    pthread_mutex_unlock(&q->lock);
}

/* ---- rate limiter ---- */

long kube_queue_when(struct kube_queue *q, const char *key)
{
    pthread_mutex_lock(&q->lock);
    unsigned *f = vmop_map_get(&q->failures, key);
    unsigned n = f ? *f : 0;
    if (!f) {
        f = malloc(sizeof(*f));
        if (f && vmop_map_put(&q->failures, key, f) != VMOP_OK) {
            free(f);
            f = NULL;
        }
    }
    if (f)
        *f = n + 1;
    double exp = (double)q->o.base_delay_ms;
    for (unsigned i = 0; i < n && exp < (double)q->o.max_delay_ms; i++)
        exp *= 2;
    if (exp > (double)q->o.max_delay_ms)
        exp = (double)q->o.max_delay_ms;
    double bucket = 0;
    if (q->o.qps > 0) {
        int64_t now = q_now(q);
        q->tokens += (double)(now - q->tokens_at_ms) * q->o.qps / 1000.0;
        if (q->tokens > q->o.burst)
            q->tokens = q->o.burst;
        q->tokens_at_ms = now;
        q->tokens -= 1;
        if (q->tokens < 0)
            bucket = -q->tokens / q->o.qps * 1000.0;
    }
    pthread_mutex_unlock(&q->lock);
    return (long)(exp > bucket ? exp : bucket);
}

vmop_rc kube_queue_add_rate_limited(struct kube_queue *q, const char *key)
{
    if (!key_ok(key))
        return VMOP_E_INVALID;
    return kube_queue_add_after(q, key, kube_queue_when(q, key));
}

void kube_queue_forget(struct kube_queue *q, const char *key)
{
    pthread_mutex_lock(&q->lock);
    vmop_map_del(&q->failures, key);
    pthread_mutex_unlock(&q->lock);
}

unsigned kube_queue_num_requeues(struct kube_queue *q, const char *key)
{
    pthread_mutex_lock(&q->lock);
    unsigned *f = vmop_map_get(&q->failures, key);
    unsigned n = f ? *f : 0;
    pthread_mutex_unlock(&q->lock);
    return n;
}

/* ---- get / done ---- */

vmop_rc kube_queue_get(struct kube_queue *q, long timeout_ms, char **ret_key)
{
    vmop_rc rc = VMOP_OK;
    int64_t deadline = timeout_ms >= 0 ? vmop_mono_ms() + timeout_ms : -1;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        if (q->drop) {
            rc = VMOP_E_CANCELED;
            break;
        }
        int64_t next = q->shutting_down ? -1 : promote_due_locked(q);
        if (q->len) {
            char *k = fifo_pop_locked(q);
            if (vmop_map_put(&q->processing, k, NULL) != VMOP_OK) {
                /* keep it queued; report the failure */
                q->head = (q->head + q->cap - 1) % q->cap;
                q->fifo[q->head] = k;
                q->len++;
                rc = VMOP_E_NOMEM;
                break;
            }
            vmop_map_del(&q->dirty, k);
            *ret_key = k;
            break;
        }
        if (q->shutting_down) {
            rc = VMOP_E_CANCELED;
            break;
        }
        int64_t now = vmop_mono_ms();
        if (deadline >= 0 && now >= deadline) {
            rc = VMOP_E_TIMEOUT;
            break;
        }
        int64_t wake = deadline;
        if (next >= 0 && (wake < 0 || now + next < wake))
            wake = now + next;
        if (wake < 0) {
            pthread_cond_wait(&q->cond, &q->lock);
        } else {
            struct timespec ts;
            vmop_mono_timespec(wake, &ts);
            pthread_cond_timedwait(&q->cond, &q->lock, &ts);
        }
    }
    pthread_mutex_unlock(&q->lock);
    return rc;
}

void kube_queue_done(struct kube_queue *q, const char *key)
{
    pthread_mutex_lock(&q->lock);
    vmop_map_del(&q->processing, key);
    if (vmop_map_has(&q->dirty, key) && !q->drop) {
        if (fifo_push_locked(q, key) == VMOP_OK)
            pthread_cond_signal(&q->cond);
        else
            vmop_map_del(&q->dirty, key); /* out of memory: the key is lost, like a drop */
    }
    pthread_cond_broadcast(&q->cond); /* kube_workers_stop() may wait for an empty queue */
    pthread_mutex_unlock(&q->lock);
}

void kube_queue_shutdown(struct kube_queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->shutting_down = 1;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
}

int kube_queue_shutting_down(struct kube_queue *q)
{
    pthread_mutex_lock(&q->lock);
    int s = q->shutting_down;
    pthread_mutex_unlock(&q->lock);
    return s;
}

size_t kube_queue_len(struct kube_queue *q)
{
    pthread_mutex_lock(&q->lock);
    size_t n = q->len;
    pthread_mutex_unlock(&q->lock);
    return n;
}

size_t kube_queue_delayed_len(struct kube_queue *q)
{
    pthread_mutex_lock(&q->lock);
    size_t n = q->waiting.len;
    pthread_mutex_unlock(&q->lock);
    return n;
}

/* ---- workers ---- */

struct kube_workers {
    struct kube_queue *q;
    kube_reconcile_fn fn;
    void *ud;
    unsigned n;
    pthread_t *threads;
    unsigned running; /* guarded by q->lock */
};

static void *worker_main(void *arg)
{
    struct kube_workers *w = arg;
    for (;;) {
        char *key = NULL;
        if (kube_queue_get(w->q, -1, &key) != VMOP_OK)
            break;
        struct vmop_err err = {0};
        vmop_rc rc = w->fn(w->ud, key, &err);
        if (rc == VMOP_OK)
            kube_queue_forget(w->q, key);
        else
            (void)kube_queue_add_rate_limited(w->q, key);
        kube_queue_done(w->q, key);
        free(key);
    }
    pthread_mutex_lock(&w->q->lock);
    w->running--;
    pthread_cond_broadcast(&w->q->cond);
    pthread_mutex_unlock(&w->q->lock);
    return NULL;
}

vmop_rc kube_workers_start(struct kube_queue *q, unsigned n, kube_reconcile_fn fn, void *ud,
                           struct kube_workers **ret_w, struct vmop_err *err)
{
    if (n == 0 || n > 1024 || !fn)
        return vmop_fail(err, VMOP_E_INVALID, "kube_workers_start: bad worker count or function");
    struct kube_workers *w = calloc(1, sizeof(*w));
    if (!w || !(w->threads = calloc(n, sizeof(*w->threads)))) {
        free(w);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory starting workers");
    }
    w->q = q;
    w->fn = fn;
    w->ud = ud;
    for (unsigned i = 0; i < n; i++) {
        pthread_mutex_lock(&q->lock);
        w->running++;
        pthread_mutex_unlock(&q->lock);
        int e = pthread_create(&w->threads[i], NULL, worker_main, w);
        if (e) {
            pthread_mutex_lock(&q->lock);
            w->running--;
            pthread_mutex_unlock(&q->lock);
            w->n = i;
            (void)kube_workers_stop(w, 0, NULL);
            return vmop_fail(err, VMOP_E_INTERNAL, "pthread_create: %s", strerror(e));
        }
        w->n = i + 1;
    }
    *ret_w = w;
    return VMOP_OK;
}

vmop_rc kube_workers_stop(struct kube_workers *w, long drain_ms, struct vmop_err *err)
{
    if (!w)
        return VMOP_OK;
    vmop_rc rc = VMOP_OK;
    struct kube_queue *q = w->q;
    kube_queue_shutdown(q);
    int64_t deadline = vmop_mono_ms() + (drain_ms > 0 ? drain_ms : 0);
    pthread_mutex_lock(&q->lock);
    while (w->running > 0) {
        if (vmop_mono_ms() >= deadline) {
            if (q->len || q->processing.len)
                rc = vmop_fail(err, VMOP_E_TIMEOUT,
                               "work queue drain: %zu keys queued, %zu in progress at the deadline",
                               q->len, q->processing.len);
            q->drop = 1; /* no more keys; in-progress ones finish */
            pthread_cond_broadcast(&q->cond);
            break;
        }
        struct timespec ts;
        vmop_mono_timespec(deadline, &ts);
        pthread_cond_timedwait(&q->cond, &q->lock, &ts);
    }
    pthread_mutex_unlock(&q->lock);
    for (unsigned i = 0; i < w->n; i++)
        pthread_join(w->threads[i], NULL);
    free(w->threads);
    free(w);
    return rc;
}
