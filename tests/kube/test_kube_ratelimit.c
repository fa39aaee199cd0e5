/* test_kube_ratelimit.c: unit tests of the client-side rate limit: the token bucket arithmetic
 * with a fake clock (burst, 1/qps spacing, refill capped at burst, unlimited, rounding, a clock
 * going backwards), then the client against the loopback server (mock_http.c): attempts paced and
 * counted as throttled, a watch's stream not paced, cancellation while waiting, several threads
 * sharing one bucket. Suite: unit.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "kube_client.h"
#include "kube_ratelimit.h"
#include "kube_util.h"
#include "mock_http.h"

/* ---- the bucket (fake clock) ---- */

START_TEST(burst_then_spacing)
{
    struct kube_bucket b;
    kube_bucket_init(&b, 10, 3, 1000);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(kube_bucket_take(&b, 1000), 0); /* the burst */
    /* owed tokens queue up 1/qps apart */
    ck_assert_int_eq(kube_bucket_take(&b, 1000), 100);
    ck_assert_int_eq(kube_bucket_take(&b, 1000), 200);
    ck_assert_int_eq(kube_bucket_take(&b, 1000), 300);
    /* at 1300 the three owed tokens are paid: the next waits one interval */
    ck_assert_int_eq(kube_bucket_take(&b, 1300), 100);
    /* a caller taking as soon as it may waits 1/qps each time */
    int64_t t = 1400;
    for (int i = 0; i < 5; i++) {
        int64_t w = kube_bucket_take(&b, t);
        ck_assert_int_eq(w, 100);
        t += w;
    }
    /* part of an interval elapsed: the rest of it */
    ck_assert_int_eq(kube_bucket_take(&b, t + 30), 70);
}
END_TEST

START_TEST(refill_capped_at_burst)
{
    struct kube_bucket b;
    kube_bucket_init(&b, 10, 3, 0);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(kube_bucket_take(&b, 0), 0);
    /* an hour idle refills 36000 tokens' worth: only burst are kept */
    int64_t t = 3600 * 1000;
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(kube_bucket_take(&b, t), 0);
    ck_assert_int_eq(kube_bucket_take(&b, t), 100);
    ck_assert(b.tokens <= b.burst);
    /* partial refill: 150 ms gives 1.5 tokens back */
    kube_bucket_init(&b, 10, 3, 0);
    for (int i = 0; i < 3; i++)
        kube_bucket_take(&b, 0);
    ck_assert_int_eq(kube_bucket_take(&b, 150), 0);  /* 1.5 -> 0.5 */
    ck_assert_int_eq(kube_bucket_take(&b, 150), 50); /* owes 0.5 */
}
END_TEST

START_TEST(unlimited)
{
    struct kube_bucket b;
    kube_bucket_init(&b, 0, 0, 0);
    for (int i = 0; i < 100000; i++)
        ck_assert_int_eq(kube_bucket_take(&b, 0), 0);
    kube_bucket_init(&b, -5, 10, 0);
    for (int i = 0; i < 1000; i++)
        ck_assert_int_eq(kube_bucket_take(&b, i), 0);
}
END_TEST

START_TEST(rounding_and_edges)
{
    struct kube_bucket b;
    /* burst < 1 is 1 */
    kube_bucket_init(&b, 100, 0, 0);
    ck_assert(b.burst == 1);
    ck_assert_int_eq(kube_bucket_take(&b, 0), 0);
    ck_assert_int_eq(kube_bucket_take(&b, 0), 10); /* exactly 10, not 11 */
    ck_assert_int_eq(kube_bucket_take(&b, 0), 20);
    /* 1/3 s is rounded up: never early */
    kube_bucket_init(&b, 3, 1, 0);
    kube_bucket_take(&b, 0);
    ck_assert_int_eq(kube_bucket_take(&b, 0), 334);
    /* a clock going backwards refills nothing and keeps the later time */
    kube_bucket_init(&b, 10, 1, 5000);
    kube_bucket_take(&b, 5000);
    ck_assert_int_eq(kube_bucket_take(&b, 4000), 100);
    ck_assert_int_eq(b.at_ms, 5000);
    /* a high rate: sub-millisecond debts wait 1 ms */
    kube_bucket_init(&b, 100000, 1, 0);
    kube_bucket_take(&b, 0);
    ck_assert_int_eq(kube_bucket_take(&b, 0), 1);
    /* no wait is longer than the tokens owed imply: n owed at qps q is n/q s */
    kube_bucket_init(&b, 200, 5, 0);
    for (int i = 0; i < 5; i++)
        kube_bucket_take(&b, 0);
    for (int n = 1; n <= 1000; n++)
        ck_assert_int_eq(kube_bucket_take(&b, 0), n * 5);
}
END_TEST

/* ---- the client ---- */

static struct kube_client *client_for(struct mock_server *m, double qps, int burst)
{
    struct kube_config cfg = {.server = m->url, .namespace = "ns1"};
    struct kube_client_opts o = {.qps = qps, .burst = burst};
    struct kube_client *c = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(kube_client_new(&cfg, &o, &c, &err), VMOP_OK);
    return c;
}

static const struct kube_resource VMS = {"example.com", "v1", "virtualmachines", 1};

static int h_ok(void *ud, const struct mock_req *r, int fd)
{
    (void)ud;
    (void)r;
    mock_reply(fd, 200, NULL, "{\"kind\":\"VirtualMachine\",\"metadata\":{\"name\":\"vm1\"}}");
    return 0;
}

static int h_ok_close(void *ud, const struct mock_req *r, int fd)
{
    h_ok(ud, r, fd);
    return 1; /* one connection per request, so threads take turns on the one-connection server */
}

static vmop_rc get1(struct kube_client *c, const struct kube_opts *o)
{
    cJSON *obj = NULL;
    struct vmop_err err = {0};
    vmop_rc rc = kube_get(c, &VMS, NULL, "vm1", o, &obj, &err);
    cJSON_Delete(obj);
    return rc;
}

START_TEST(client_paced_and_counted)
{
    struct mock_server m;
    ck_assert_int_eq(mock_start(&m, h_ok, NULL), 0);
    struct kube_client *c = client_for(&m, 5, 2);
    int64_t t0 = vmop_mono_ms();
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(get1(c, NULL), VMOP_OK);
    int64_t took = vmop_mono_ms() - t0;
    /* two from the burst, two more 200 ms apart (each request's own time overlaps the refill) */
    ck_assert_msg(took >= 395, "4 requests at 5 qps, burst 2, took %lld ms", (long long)took);
    ck_assert_uint_eq(kube_client_requests(c), 4);
    ck_assert_uint_eq(kube_client_throttled(c), 2);
    ck_assert_uint_ge(kube_client_throttled_ms(c), 200);
    ck_assert_uint_le(kube_client_throttled_ms(c), (unsigned long)took);
    kube_client_free(c);

    /* qps 0: unlimited, nothing throttled */
    c = client_for(&m, 0, 0);
    for (int i = 0; i < 20; i++)
        ck_assert_int_eq(get1(c, NULL), VMOP_OK);
    ck_assert_uint_eq(kube_client_throttled(c), 0);
    ck_assert_uint_eq(kube_client_throttled_ms(c), 0);
    kube_client_free(c);
    mock_stop(&m);
}
END_TEST

/* retries take tokens too */
static int h_503_once(void *ud, const struct mock_req *r, int fd)
{
    if (r->index == 0) {
        mock_reply(fd, 503, "Retry-After: 0\r\n", "{\"kind\":\"Status\",\"code\":503}");
        return 0;
    }
    return h_ok(ud, r, fd);
}

START_TEST(retries_take_tokens)
{
    struct mock_server m;
    ck_assert_int_eq(mock_start(&m, h_503_once, NULL), 0);
    struct kube_config cfg = {.server = m.url, .namespace = "ns1"};
    struct kube_client_opts o = {.qps = 5, .burst = 1, .retry_base_ms = 1, .retry_max_ms = 1};
    struct kube_client *c = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(kube_client_new(&cfg, &o, &c, &err), VMOP_OK);
    int64_t t0 = vmop_mono_ms();
    ck_assert_int_eq(get1(c, NULL), VMOP_OK);
    int64_t took = vmop_mono_ms() - t0;
    ck_assert_uint_eq(kube_client_requests(c), 2);
    ck_assert_uint_eq(kube_client_retries(c), 1);
    ck_assert_uint_eq(kube_client_throttled(c), 1); /* the retry waited for its token */
    ck_assert_msg(took >= 190, "retry at 5 qps after %lld ms", (long long)took);
    kube_client_free(c);
    mock_stop(&m);
}
END_TEST

static const char *EVENTS =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"11\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"12\"}}}"
    "\n";

static int h_watch(void *ud, const struct mock_req *r, int fd)
{
    if (!strstr(r->path, "watch=")) /* the GET after the watch */
        return h_ok(ud, r, fd);
    mock_chunked_start(fd);
    for (int i = 0; i < 10; i++)
        mock_chunk(fd, EVENTS, strlen(EVENTS));
    mock_chunk_end(fd);
    return 0;
}

static int count_ev(void *ud, enum kube_event_type type, cJSON *obj)
{
    (void)type;
    (*(int *)ud)++;
    cJSON_Delete(obj);
    return 0;
}

START_TEST(watch_stream_not_paced)
{
    struct mock_server m;
    ck_assert_int_eq(mock_start(&m, h_watch, NULL), 0);
    struct kube_client *c = client_for(&m, 1, 1);
    struct vmop_err err = {0};
    int n = 0;
    int64_t t0 = vmop_mono_ms();
    ck_assert_msg(kube_watch(c, &VMS, "ns", NULL, count_ev, &n, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_int_eq(n, 20);
    ck_assert_int_lt(vmop_mono_ms() - t0, 800); /* 20 events, one token (not 20 s' worth) */
    ck_assert_uint_eq(kube_client_throttled(c), 0);
    /* the watch took the only token: the next request waits for a refill */
    ck_assert_int_eq(get1(c, NULL), VMOP_OK);
    ck_assert_uint_eq(kube_client_throttled(c), 1);
    kube_client_free(c);
    mock_stop(&m);
}
END_TEST

static void *set_later(void *ud)
{
    vmop_sleep_ms(100, NULL);
    __atomic_store_n((int *)ud, 1, __ATOMIC_RELEASE);
    return NULL;
}

START_TEST(cancel_while_waiting)
{
    struct mock_server m;
    ck_assert_int_eq(mock_start(&m, h_ok, NULL), 0);
    struct kube_client *c = client_for(&m, 0.1, 1); /* one token per 10 s */
    int cancel = 0;
    struct kube_opts o = {.cancel = &cancel};
    ck_assert_int_eq(get1(c, &o), VMOP_OK);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, set_later, &cancel), 0);
    int64_t t0 = vmop_mono_ms();
    ck_assert_int_eq(get1(c, &o), VMOP_E_CANCELED);
    int64_t took = vmop_mono_ms() - t0;
    pthread_join(th, NULL);
    ck_assert_msg(took >= 90 && took < 2000, "canceled after %lld ms", (long long)took);
    ck_assert_int_eq(mock_reqs(&m), 1); /* the canceled one was never sent */
    ck_assert_uint_eq(kube_client_requests(c), 1);
    ck_assert_uint_eq(kube_client_throttled(c), 1);
    kube_client_free(c);
    mock_stop(&m);
}
END_TEST

#define N_THREADS  4
#define PER_THREAD 3

static void *getter(void *ud)
{
    long bad = 0;
    for (int i = 0; i < PER_THREAD; i++)
        bad += get1(ud, NULL) != VMOP_OK;
    return (void *)bad;
}

START_TEST(threads_share_the_bucket)
{
    struct mock_server m;
    ck_assert_int_eq(mock_start(&m, h_ok_close, NULL), 0);
    struct kube_client *c = client_for(&m, 50, 2);
    pthread_t th[N_THREADS];
    int64_t t0 = vmop_mono_ms();
    for (int i = 0; i < N_THREADS; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, getter, c), 0);
    for (int i = 0; i < N_THREADS; i++) {
        void *bad = NULL;
        pthread_join(th[i], &bad);
        ck_assert_ptr_null(bad);
    }
    int64_t took = vmop_mono_ms() - t0;
    /* 12 tokens, 2 in the bucket, 10 at 50 a second: at least 200 ms however they interleave */
    ck_assert_msg(took >= 195, "12 requests from 4 threads at 50 qps took %lld ms",
                  (long long)took);
    ck_assert_uint_eq(kube_client_requests(c), N_THREADS * PER_THREAD);
    ck_assert_uint_ge(kube_client_throttled(c), 1);
    kube_client_free(c);
    mock_stop(&m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kube_ratelimit");
    TCase *tb = tcase_create("bucket");
    tcase_add_test(tb, burst_then_spacing);
    tcase_add_test(tb, refill_capped_at_burst);
    tcase_add_test(tb, unlimited);
    tcase_add_test(tb, rounding_and_edges);
    suite_add_tcase(s, tb);
    TCase *tc = tcase_create("client");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, client_paced_and_counted);
    tcase_add_test(tc, retries_take_tokens);
    tcase_add_test(tc, watch_stream_not_paced);
    tcase_add_test(tc, cancel_while_waiting);
    tcase_add_test(tc, threads_share_the_bucket);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return vmop_check_run(suite());
}
