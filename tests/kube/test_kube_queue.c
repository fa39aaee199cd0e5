/* test_kube_queue.c: unit tests for the work queue: dedup, dirty/processing, no concurrent
 * processing of a key, backoff growth and token bucket (fake clock), delays, shutdown, workers
 * with retry and drain deadlines. Suite: unit.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "kube_queue.h"
#include "kube_util.h"

static struct kube_queue *new_q(const struct kube_queue_opts *o)
{
    struct kube_queue *q = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(kube_queue_new(o, &q, &err), VMOP_OK);
    return q;
}

static char *get_now(struct kube_queue *q)
{
    char *k = NULL;
    ck_assert_int_eq(kube_queue_get(q, 1000, &k), VMOP_OK);
    return k;
}

START_TEST(dedup_and_dirty)
{
    struct kube_queue *q = new_q(NULL);
    ck_assert_int_eq(kube_queue_add(q, "ns/a"), VMOP_OK);
    ck_assert_int_eq(kube_queue_add(q, "ns/b"), VMOP_OK);
    ck_assert_int_eq(kube_queue_add(q, "ns/a"), VMOP_OK);
    ck_assert_uint_eq(kube_queue_len(q), 2);
    char *k = get_now(q);
    ck_assert_str_eq(k, "ns/a"); /* FIFO */
    /* re-added while processing: not handed out again until done */
    ck_assert_int_eq(kube_queue_add(q, "ns/a"), VMOP_OK);
    ck_assert_int_eq(kube_queue_add(q, "ns/a"), VMOP_OK);
    ck_assert_uint_eq(kube_queue_len(q), 1);
    char *k2 = get_now(q);
    ck_assert_str_eq(k2, "ns/b");
    char *k3 = NULL;
    ck_assert_int_eq(kube_queue_get(q, 20, &k3), VMOP_E_TIMEOUT);
    kube_queue_done(q, k);
    ck_assert_uint_eq(kube_queue_len(q), 1);
    k3 = get_now(q);
    ck_assert_str_eq(k3, "ns/a");
    kube_queue_done(q, k3);
    kube_queue_done(q, k2);
    ck_assert_uint_eq(kube_queue_len(q), 0);
    ck_assert_int_eq(kube_queue_add(q, ""), VMOP_E_INVALID);
    free(k);
    free(k2);
    free(k3);
    kube_queue_free(q);
}
END_TEST

struct fake_clock {
    int64_t now;
};

static int64_t fake_now(void *ud)
{
    return ((struct fake_clock *)ud)->now;
}

START_TEST(backoff_growth)
{
    struct fake_clock fc = {.now = 1000};
    struct kube_queue_opts o = {.qps = -1, .now_ms = fake_now, .clock_ud = &fc};
    struct kube_queue *q = new_q(&o);
    long expect = 5;
    for (int i = 0; i < 30; i++) {
        long d = kube_queue_when(q, "k");
        ck_assert_int_eq(d, expect > 1000000 ? 1000000 : expect);
        expect *= 2;
    }
    ck_assert_uint_eq(kube_queue_num_requeues(q, "k"), 30);
    ck_assert_int_eq(kube_queue_when(q, "other"), 5); /* per key */
    kube_queue_forget(q, "k");
    ck_assert_uint_eq(kube_queue_num_requeues(q, "k"), 0);
    ck_assert_int_eq(kube_queue_when(q, "k"), 5);
    kube_queue_free(q);

    /* overall token bucket: 1 qps, burst 2 */
    struct kube_queue_opts ob = {.qps = 1, .burst = 2, .now_ms = fake_now, .clock_ud = &fc};
    q = new_q(&ob);
    ck_assert_int_eq(kube_queue_when(q, "a"), 5);
    ck_assert_int_eq(kube_queue_when(q, "b"), 5);
    ck_assert_int_eq(kube_queue_when(q, "c"), 1000); /* bucket empty: 1 s per token */
    ck_assert_int_eq(kube_queue_when(q, "d"), 2000);
    fc.now += 10000; /* refills, capped at burst */
    ck_assert_int_eq(kube_queue_when(q, "e"), 5);
    ck_assert_int_eq(kube_queue_when(q, "f"), 5);
    ck_assert_int_eq(kube_queue_when(q, "g"), 1000);
    kube_queue_free(q);
}
END_TEST

/* The next key handed out (bounded wait) is want; it is done and freed. */
static void take(struct kube_queue *q, const char *want)
{
    char *k = NULL;
    ck_assert_int_eq(kube_queue_get(q, 5000, &k), VMOP_OK);
    ck_assert_str_eq(k, want);
    kube_queue_done(q, k);
    free(k);
}

START_TEST(delays)
{
    struct kube_queue *q = new_q(NULL);
    char *k = NULL;
    int64_t t0 = vmop_mono_ms();
    ck_assert_int_eq(kube_queue_add_after(q, "late", 60), VMOP_OK);
    ck_assert_uint_eq(kube_queue_delayed_len(q), 1);
    ck_assert_int_eq(kube_queue_get(q, 10, &k), VMOP_E_TIMEOUT);
    ck_assert_int_eq(kube_queue_get(q, 5000, &k), VMOP_OK);
    ck_assert_str_eq(k, "late");
    ck_assert_int_ge(vmop_mono_ms() - t0, 55);
    kube_queue_done(q, k);
    free(k);

    /* the earliest pending time per key wins; a later one does not postpone it */
    t0 = vmop_mono_ms();
    ck_assert_int_eq(kube_queue_add_after(q, "x", 60000), VMOP_OK);
    ck_assert_int_eq(kube_queue_add_after(q, "x", 20), VMOP_OK);
    ck_assert_int_eq(kube_queue_add_after(q, "x", 30000), VMOP_OK);
    ck_assert_int_eq(kube_queue_get(q, 5000, &k), VMOP_OK);
    ck_assert_str_eq(k, "x");
    ck_assert_int_lt(vmop_mono_ms() - t0, 5000);
    kube_queue_done(q, k);
    free(k);
    /* the stale heap entries do not hand x out again */
    ck_assert_int_eq(kube_queue_get(q, 50, &k), VMOP_E_TIMEOUT);

    /* a delay asked for before the cancel's time never hands the key out; a ready key is not
     * affected */
    ck_assert_int_eq(kube_queue_add_after(q, "c", 30), VMOP_OK);
    kube_queue_cancel_after(q, "c", vmop_mono_ms() + 1);
    ck_assert_uint_eq(kube_queue_delayed_len(q), 0);
    ck_assert_int_eq(kube_queue_get(q, 100, &k), VMOP_E_TIMEOUT);
    ck_assert_int_eq(kube_queue_add(q, "c"), VMOP_OK);
    kube_queue_cancel_after(q, "c", vmop_mono_ms() + 1);
    kube_queue_cancel_after(q, "never-added", vmop_mono_ms() + 1);
    ck_assert_int_eq(kube_queue_get(q, 5000, &k), VMOP_OK);
    ck_assert_str_eq(k, "c");
    kube_queue_done(q, k);
    free(k);
    /* asked for at or after the cancel's time: kept, also when merged into an earlier wake-up */
    {
        int64_t t = vmop_mono_ms(), a;
        ck_assert_int_eq(kube_queue_add_after(q, "m", 20), VMOP_OK);
        kube_queue_cancel_after(q, "m", t);
        ck_assert_uint_eq(kube_queue_delayed_len(q), 1);
        take(q, "m");
        a = vmop_mono_ms();
        ck_assert_int_eq(kube_queue_add_after(q, "m", 40), VMOP_OK);
        while (vmop_mono_ms() < a + 2)
            ; /* the clock moves on: the next request is asked after the first one's time */
        t = vmop_mono_ms();
        ck_assert_int_eq(kube_queue_add_after(q, "m", 60000), VMOP_OK); /* merged into the first */
        kube_queue_cancel_after(q, "m", t);
        ck_assert_uint_eq(kube_queue_delayed_len(q), 1);
        take(q, "m");
    }
    /* a wake-up that came due while the key was being processed: dropped by a cancel past the
     * time it was asked for; a direct add while processing is never dropped */
    {
        char *p = NULL, *none = NULL;
        int64_t t;
        ck_assert_int_eq(kube_queue_add(q, "p"), VMOP_OK);
        p = get_now(q);
        ck_assert_int_eq(kube_queue_add_after(q, "p", 5), VMOP_OK);
        ck_assert_int_eq(kube_queue_get(q, 60, &none), VMOP_E_TIMEOUT); /* came due: p re-runs */
        ck_assert_uint_eq(kube_queue_delayed_len(q), 0);
        t = vmop_mono_ms() + 1;
        kube_queue_cancel_after(q, "p", t); /* the pass saw everything up to t */
        kube_queue_done(q, p);
        free(p);
        ck_assert_int_eq(kube_queue_get(q, 60, &none), VMOP_E_TIMEOUT); /* not again */
        /* the same with a direct add behind the re-run as well: kept */
        ck_assert_int_eq(kube_queue_add(q, "p"), VMOP_OK);
        p = get_now(q);
        ck_assert_int_eq(kube_queue_add_after(q, "p", 5), VMOP_OK);
        ck_assert_int_eq(kube_queue_add(q, "p"), VMOP_OK); /* an informer's event */
        ck_assert_int_eq(kube_queue_get(q, 60, &none), VMOP_E_TIMEOUT);
        kube_queue_cancel_after(q, "p", vmop_mono_ms() + 1);
        kube_queue_done(q, p);
        free(p);
        take(q, "p");
        /* a wake-up asked for after the cancel's time: kept */
        ck_assert_int_eq(kube_queue_add(q, "p"), VMOP_OK);
        p = get_now(q);
        t = vmop_mono_ms();
        while (vmop_mono_ms() < t + 2)
            ; /* the clock moves on */
        ck_assert_int_eq(kube_queue_add_after(q, "p", 5), VMOP_OK);
        ck_assert_int_eq(kube_queue_get(q, 60, &none), VMOP_E_TIMEOUT);
        kube_queue_cancel_after(q, "p", t);
        kube_queue_done(q, p);
        free(p);
        take(q, "p");
    }
    /* a delay asked for after the cancel still works */
    kube_queue_cancel_after(q, "c", vmop_mono_ms() + 1);
    ck_assert_int_eq(kube_queue_add_after(q, "c", 20), VMOP_OK);
    ck_assert_int_eq(kube_queue_get(q, 5000, &k), VMOP_OK);
    ck_assert_str_eq(k, "c");
    kube_queue_done(q, k);
    free(k);

    /* a rate-limited add is delayed by the backoff (5 ms first) */
    ck_assert_int_eq(kube_queue_add_rate_limited(q, "r"), VMOP_OK);
    ck_assert_int_eq(kube_queue_get(q, 5000, &k), VMOP_OK);
    ck_assert_str_eq(k, "r");
    kube_queue_done(q, k);
    free(k);
    kube_queue_free(q);
}
END_TEST

START_TEST(shutdown_semantics)
{
    struct kube_queue *q = new_q(NULL);
    ck_assert_int_eq(kube_queue_add(q, "a"), VMOP_OK);
    ck_assert_int_eq(kube_queue_add(q, "b"), VMOP_OK);
    ck_assert_int_eq(kube_queue_add_after(q, "delayed", 10), VMOP_OK);
    kube_queue_shutdown(q);
    ck_assert(kube_queue_shutting_down(q));
    ck_assert_int_eq(kube_queue_add(q, "c"), VMOP_OK); /* ignored */
    char *k = get_now(q);
    ck_assert_str_eq(k, "a");
    kube_queue_done(q, k);
    free(k);
    k = get_now(q);
    ck_assert_str_eq(k, "b");
    kube_queue_done(q, k);
    free(k);
    ck_assert_int_eq(kube_queue_get(q, 100, &k), VMOP_E_CANCELED);
    kube_queue_free(q);
}
END_TEST

/* ---- concurrency ---- */

#define NKEYS 5

struct conc {
    struct kube_queue *q;
    int active[NKEYS]; /* guarded by lock */
    int processed[NKEYS];
    int violations;
    int fail_left[NKEYS];
    long sleep_us;
    pthread_mutex_t lock;
};

static int key_index(const char *key)
{
    return key[1] - '0';
}

static vmop_rc reconcile(void *ud, const char *key, struct vmop_err *err)
{
    struct conc *c = ud;
    int i = key_index(key);
    pthread_mutex_lock(&c->lock);
    if (c->active[i]++)
        c->violations++;
    int fail = c->fail_left[i] > 0 ? c->fail_left[i]-- : 0;
    pthread_mutex_unlock(&c->lock);
    struct timespec ts = {.tv_sec = 0, .tv_nsec = c->sleep_us * 1000};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&c->lock);
    c->active[i]--;
    c->processed[i]++;
    pthread_mutex_unlock(&c->lock);
    return fail ? vmop_fail(err, VMOP_E_CONFLICT, "injected") : VMOP_OK;
}

static int total_processed(struct conc *c)
{
    pthread_mutex_lock(&c->lock);
    int t = 0;
    for (int i = 0; i < NKEYS; i++)
        t += c->processed[i];
    pthread_mutex_unlock(&c->lock);
    return t;
}

START_TEST(no_concurrent_same_key)
{
    struct conc c = {.sleep_us = 300};
    pthread_mutex_init(&c.lock, NULL);
    c.q = new_q(NULL);
    struct kube_workers *w = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(kube_workers_start(c.q, 4, reconcile, &c, &w, &err), VMOP_OK);
    char key[8];
    for (int round = 0; round < 400; round++) {
        snprintf(key, sizeof(key), "k%d", round % NKEYS);
        ck_assert_int_eq(kube_queue_add(c.q, key), VMOP_OK);
        if (round % 20 == 0) {
            struct timespec ts = {.tv_sec = 0, .tv_nsec = 200000};
            nanosleep(&ts, NULL);
        }
    }
    ck_assert_int_eq(kube_workers_stop(w, 10000, &err), VMOP_OK);
    ck_assert_int_eq(c.violations, 0);
    for (int i = 0; i < NKEYS; i++)
        ck_assert_int_ge(c.processed[i], 1);
    ck_assert_int_le(total_processed(&c), 400); /* dedup merged some adds */
    kube_queue_free(c.q);
    pthread_mutex_destroy(&c.lock);
}
END_TEST

START_TEST(failures_are_retried)
{
    struct conc c = {.sleep_us = 10, .fail_left = {3, 0, 1, 0, 0}};
    pthread_mutex_init(&c.lock, NULL);
    c.q = new_q(NULL);
    struct kube_workers *w = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(kube_workers_start(c.q, 2, reconcile, &c, &w, &err), VMOP_OK);
    ck_assert_int_eq(kube_queue_add(c.q, "k0"), VMOP_OK);
    ck_assert_int_eq(kube_queue_add(c.q, "k2"), VMOP_OK);
    /* bounded polling: 3 failures of k0 back off 5+10+20 ms */
    int64_t end = vmop_mono_ms() + 10000;
    for (;;) {
        pthread_mutex_lock(&c.lock);
        int done = c.processed[0] == 4 && c.processed[2] == 2;
        pthread_mutex_unlock(&c.lock);
        if (done || vmop_mono_ms() > end)
            break;
        vmop_sleep_ms(5, NULL);
    }
    ck_assert_int_eq(c.processed[0], 4);
    ck_assert_int_eq(c.processed[2], 2);
    ck_assert_uint_eq(kube_queue_num_requeues(c.q, "k0"), 0); /* forgotten on success */
    ck_assert_int_eq(kube_workers_stop(w, 5000, &err), VMOP_OK);
    kube_queue_free(c.q);
    pthread_mutex_destroy(&c.lock);
}
END_TEST

START_TEST(drain_deadline)
{
    /* drains everything within the deadline */
    struct conc c = {.sleep_us = 2000};
    pthread_mutex_init(&c.lock, NULL);
    c.q = new_q(NULL);
    struct kube_workers *w = NULL;
    struct vmop_err err = {0};
    char key[8];
    for (int i = 0; i < NKEYS; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        kube_queue_add(c.q, key);
    }
    ck_assert_int_eq(kube_workers_start(c.q, 2, reconcile, &c, &w, &err), VMOP_OK);
    ck_assert_int_eq(kube_workers_stop(w, 10000, &err), VMOP_OK);
    ck_assert_int_eq(total_processed(&c), NKEYS);
    kube_queue_free(c.q);

    /* the deadline cuts a slow drain short; the call still returns (after joining) */
    struct conc s = {.sleep_us = 150000};
    pthread_mutex_init(&s.lock, NULL);
    s.q = new_q(NULL);
    for (int i = 0; i < NKEYS; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        kube_queue_add(s.q, key);
    }
    ck_assert_int_eq(kube_workers_start(s.q, 1, reconcile, &s, &w, &err), VMOP_OK);
    int64_t t0 = vmop_mono_ms();
    ck_assert_int_eq(kube_workers_stop(w, 100, &err), VMOP_E_TIMEOUT);
    ck_assert_int_lt(vmop_mono_ms() - t0, 2000);
    ck_assert_int_lt(total_processed(&s), NKEYS);
    ck_assert_int_ge(total_processed(&s), 1);
    kube_queue_free(s.q);
    pthread_mutex_destroy(&c.lock);
    pthread_mutex_destroy(&s.lock);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kube_queue");
    TCase *tc = tcase_create("queue");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, dedup_and_dirty);
    tcase_add_test(tc, backoff_growth);
    tcase_add_test(tc, delays);
    tcase_add_test(tc, shutdown_semantics);
    tcase_add_test(tc, no_concurrent_same_key);
    tcase_add_test(tc, failures_are_retried);
    tcase_add_test(tc, drain_deadline);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return vmop_check_run(suite());
}
