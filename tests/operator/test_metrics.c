/* test_metrics.c: unit tests of operator/metrics.c: the exact Prometheus text of a small registry
 * (golden string), escaping of label values and help, value formatting, histogram bucket math,
 * registration checks, 8 threads updating at once (totals exact), the series cap and its overflow
 * counter, collectors (run at render, removed for good), the standard families with /proc process
 * metrics, the work-queue collector over a real kube_queue, vimclient's per-method SOAP counters,
 * the vcfeed and prober collectors (all against a refused loopback port). Suite: unit. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "kube_queue.h"
#include "metrics.h"
#include "probe.h"
#include "change_feed.h"
#include "vimclient.h"

static struct metrics *new_registry(size_t max_series)
{
    struct metrics_opts o = {.max_series = max_series};
    struct metrics *m = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(metrics_new(&o, &m, &err), VMOP_OK);
    ck_assert_ptr_nonnull(m);
    return m;
}

/* Renders m into a malloc'd string. */
static char *render(struct metrics *m)
{
    struct vbuf b;
    struct vmop_err err = {0};
    vbuf_init(&b, 1 << 20);
    ck_assert_int_eq(metrics_render(m, &b, &err), VMOP_OK);
    char *s = vbuf_take(&b);
    ck_assert_ptr_nonnull(s);
    return s;
}

static double get(struct metrics_family *f, const char *const *values)
{
    double v = -1;
    struct vmop_err err = {0};
    ck_assert_int_eq(metrics_get(f, values, &v, NULL, &err), VMOP_OK);
    return v;
}

START_TEST(golden_text)
{
    static const double bounds[] = {0.1, 1};
    struct metrics *m = new_registry(0);
    struct metrics_family *req, *temp, *lat;
    struct vmop_err err = {0};

    /* Registered out of name order: the output is sorted anyway. */
    ck_assert_int_eq(
        metrics_register(m, METRICS_GAUGE, "t_temp", "Temp.", NULL, NULL, 0, &temp, &err), VMOP_OK);
    ck_assert_int_eq(metrics_register(m, METRICS_COUNTER, "t_requests_total", "Requests.",
                                      METRICS_L("code", "method"), NULL, 0, &req, &err),
                     VMOP_OK);
    ck_assert_int_eq(metrics_register(m, METRICS_HISTOGRAM, "t_lat_seconds", "Lat.",
                                      METRICS_L("path"), bounds, 2, &lat, &err),
                     VMOP_OK);
    ck_assert_int_eq(metrics_add(req, METRICS_L("500", "GET"), 1), VMOP_OK);
    ck_assert_int_eq(metrics_add(req, METRICS_L("200", "GET"), 2), VMOP_OK);
    ck_assert_int_eq(metrics_add(req, METRICS_L("200", "DELETE"), 2), VMOP_OK);
    ck_assert_int_eq(metrics_add(req, METRICS_L("200", "GET"), 1), VMOP_OK);
    ck_assert_int_eq(metrics_set(temp, NULL, 21.5), VMOP_OK);
    ck_assert_int_eq(metrics_observe(lat, METRICS_L("/a"), 0.0625), VMOP_OK);
    ck_assert_int_eq(metrics_observe(lat, METRICS_L("/a"), 2), VMOP_OK);

    char *text = render(m);
    ck_assert_str_eq(text, "# HELP t_lat_seconds Lat.\n"
                           "# TYPE t_lat_seconds histogram\n"
                           "t_lat_seconds_bucket{path=\"/a\",le=\"0.1\"} 1\n"
                           "t_lat_seconds_bucket{path=\"/a\",le=\"1\"} 1\n"
                           "t_lat_seconds_bucket{path=\"/a\",le=\"+Inf\"} 2\n"
                           "t_lat_seconds_sum{path=\"/a\"} 2.0625\n"
                           "t_lat_seconds_count{path=\"/a\"} 2\n"
                           "# HELP t_requests_total Requests.\n"
                           "# TYPE t_requests_total counter\n"
                           "t_requests_total{code=\"200\",method=\"DELETE\"} 2\n"
                           "t_requests_total{code=\"200\",method=\"GET\"} 3\n"
                           "t_requests_total{code=\"500\",method=\"GET\"} 1\n"
                           "# HELP t_temp Temp.\n"
                           "# TYPE t_temp gauge\n"
                           "t_temp 21.5\n"
                           "# HELP vmop_metrics_series_overflow_total Metric updates dropped "
                           "because a family reached its series cap or a label value was too "
                           "long.\n"
                           "# TYPE vmop_metrics_series_overflow_total counter\n"
                           "vmop_metrics_series_overflow_total 0\n");
    free(text);

    /* Rendering twice gives the same text (deterministic, no state consumed). */
    char *a = render(m), *b = render(m);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    metrics_free(m);
}
END_TEST

START_TEST(escaping)
{
    struct metrics *m = new_registry(0);
    struct metrics_family *f;
    struct vmop_err err = {0};

    ck_assert_int_eq(metrics_register(m, METRICS_GAUGE, "t_esc", "Back\\slash and\nnewline \"q\".",
                                      METRICS_L("v"), NULL, 0, &f, &err),
                     VMOP_OK);
    ck_assert_int_eq(metrics_set(f, METRICS_L("a\\b\"c\nd"), 1), VMOP_OK);
    ck_assert_int_eq(metrics_set(f, METRICS_L(""), 2), VMOP_OK);
    char *text = render(m);
    ck_assert_ptr_nonnull(strstr(text, "# HELP t_esc Back\\\\slash and\\nnewline \"q\".\n"));
    ck_assert_ptr_nonnull(strstr(text, "t_esc{v=\"\"} 2\nt_esc{v=\"a\\\\b\\\"c\\nd\"} 1\n"));
    free(text);

    struct vbuf b;
    vbuf_init(&b, 1024);
    ck_assert_int_eq(metrics_add_escaped(&b, "plain ünicode"), VMOP_OK);
    ck_assert_str_eq(vbuf_str(&b), "plain ünicode");
    vbuf_free(&b);
    metrics_free(m);
}
END_TEST

static void check_value(double v, const char *want)
{
    struct vbuf b;
    vbuf_init(&b, 64);
    ck_assert_int_eq(metrics_add_value(&b, v), VMOP_OK);
    ck_assert_str_eq(vbuf_str(&b), want);
    vbuf_free(&b);
}

START_TEST(value_format)
{
    check_value(0, "0");
    check_value(-0.0, "0");
    check_value(1, "1");
    check_value(0.1, "0.1");
    check_value(0.005, "0.005");
    check_value(-2.5, "-2.5");
    check_value(123456789012.0, "123456789012");
    check_value(1e-9, "1e-09");
    check_value(0.1 + 0.2, "0.30000000000000004"); /* needs 17 digits to read back */
    check_value(INFINITY, "+Inf");
    check_value(-INFINITY, "-Inf");
    check_value(NAN, "NaN");
}
END_TEST

START_TEST(histogram_buckets)
{
    struct metrics *m = new_registry(0);
    struct metrics_family *h, *d;
    struct vmop_err err = {0};
    double count = 0, sum = 0;

    ck_assert_int_eq(metrics_register(m, METRICS_HISTOGRAM, "t_h", "H.", NULL,
                                      (const double[]){0.5, 1, 2}, 3, &h, &err),
                     VMOP_OK);
    /* 0.5 and 1 are on bounds: le means <=. 3 is above every bound: only +Inf. */
    static const double obs[] = {0.25, 0.5, 0.75, 1, 1.5, 3, 0};
    for (size_t i = 0; i < sizeof(obs) / sizeof(obs[0]); i++)
        ck_assert_int_eq(metrics_observe(h, NULL, obs[i]), VMOP_OK);
    ck_assert_int_eq(metrics_observe(h, NULL, NAN), VMOP_E_INVALID);
    ck_assert_int_eq(metrics_get(h, NULL, &count, &sum, &err), VMOP_OK);
    ck_assert_double_eq(count, 7);
    ck_assert_double_eq(sum, 7);
    char *text = render(m);
    ck_assert_ptr_nonnull(strstr(text, "t_h_bucket{le=\"0.5\"} 3\n"
                                       "t_h_bucket{le=\"1\"} 5\n"
                                       "t_h_bucket{le=\"2\"} 6\n"
                                       "t_h_bucket{le=\"+Inf\"} 7\n"
                                       "t_h_sum 7\n"
                                       "t_h_count 7\n"));
    free(text);

    /* Default buckets: 0.005 .. 60. */
    ck_assert_int_eq(
        metrics_register(m, METRICS_HISTOGRAM, "t_d", "D.", METRICS_L("c"), NULL, 0, &d, &err),
        VMOP_OK);
    ck_assert_int_eq(metrics_observe(d, METRICS_L("x"), 0.004), VMOP_OK);
    ck_assert_int_eq(metrics_observe(d, METRICS_L("x"), 45), VMOP_OK);
    text = render(m);
    ck_assert_ptr_nonnull(strstr(text, "t_d_bucket{c=\"x\",le=\"0.005\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(text, "t_d_bucket{c=\"x\",le=\"30\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(text, "t_d_bucket{c=\"x\",le=\"60\"} 2\n"));
    ck_assert_ptr_nonnull(strstr(text, "t_d_bucket{c=\"x\",le=\"+Inf\"} 2\n"));
    ck_assert_ptr_nonnull(strstr(text, "t_d_sum{c=\"x\"} 45.004\n"));
    ck_assert_int_eq(metrics_default_nbuckets, 13);
    free(text);
    metrics_free(m);
}
END_TEST

START_TEST(registration_checks)
{
    struct metrics *m = new_registry(0);
    struct metrics_family *f = NULL, *g = NULL;
    struct vmop_err err = {0};

    ck_assert_int_eq(
        metrics_register(m, METRICS_COUNTER, "t_ok:total", "x", METRICS_L("a"), NULL, 0, &f, &err),
        VMOP_OK);
#define BAD(rc, ...)                                                                               \
    do {                                                                                           \
        struct vmop_err e_ = {0};                                                                  \
        g = NULL;                                                                                  \
        ck_assert_int_eq(metrics_register(m, __VA_ARGS__, &g, &e_), rc);                           \
        ck_assert_ptr_null(g);                                                                     \
        ck_assert_str_ne(e_.msg, "");                                                              \
    } while (0)
    BAD(VMOP_E_EXISTS, METRICS_GAUGE, "t_ok:total", "x", NULL, NULL, 0);
    BAD(VMOP_E_INVALID, METRICS_GAUGE, "1bad", "x", NULL, NULL, 0);
    BAD(VMOP_E_INVALID, METRICS_GAUGE, "bad-name", "x", NULL, NULL, 0);
    BAD(VMOP_E_INVALID, METRICS_GAUGE, "", "x", NULL, NULL, 0);
    BAD(VMOP_E_INVALID, METRICS_GAUGE, "t_g", "x", METRICS_L("a:b"), NULL, 0);
    BAD(VMOP_E_INVALID, METRICS_GAUGE, "t_g", "x", METRICS_L("__name"), NULL, 0);
    BAD(VMOP_E_INVALID, METRICS_GAUGE, "t_g", "x", METRICS_L("a", "a"), NULL, 0);
    BAD(VMOP_E_INVALID, METRICS_HISTOGRAM, "t_g", "x", METRICS_L("le"), NULL, 0);
    BAD(VMOP_E_INVALID, METRICS_HISTOGRAM, "t_g", "x", NULL, (const double[]){1, 1}, 2);
    BAD(VMOP_E_INVALID, METRICS_HISTOGRAM, "t_g", "x", NULL, (const double[]){INFINITY}, 1);
    BAD(VMOP_E_INVALID, METRICS_GAUGE, "t_g", "x", NULL, (const double[]){1}, 1);
    BAD(VMOP_E_INVALID, METRICS_GAUGE, "t_g", NULL, NULL, NULL, 0);
    BAD(VMOP_E_INVALID, METRICS_GAUGE, "t_g", "x",
        METRICS_L("a", "b", "c", "d", "e", "f", "g", "h", "i"), NULL, 0);
#undef BAD

    /* Update checks: label count, type, sign, NaN; a NULL family is a no-op. */
    ck_assert_int_eq(metrics_add(f, NULL, 1), VMOP_E_INVALID);
    ck_assert_int_eq(metrics_add(f, METRICS_L("x", "y"), 1), VMOP_E_INVALID);
    ck_assert_int_eq(metrics_add(f, METRICS_L("x"), -1), VMOP_E_INVALID);
    ck_assert_int_eq(metrics_add(f, METRICS_L("x"), NAN), VMOP_E_INVALID);
    ck_assert_int_eq(metrics_observe(f, METRICS_L("x"), 1), VMOP_E_INVALID);
    ck_assert_int_eq(metrics_add(NULL, METRICS_L("x"), 1), VMOP_OK);
    ck_assert_int_eq(metrics_add(f, METRICS_L("x"), 2), VMOP_OK);
    ck_assert_int_eq(metrics_set(f, METRICS_L("x"), 7), VMOP_OK); /* collectors mirror totals */
    ck_assert_double_eq(get(f, METRICS_L("x")), 7);
    ck_assert_int_eq(metrics_remove(f, METRICS_L("x")), VMOP_OK);
    ck_assert_int_eq(metrics_remove(f, METRICS_L("x")), VMOP_E_NOT_FOUND);
    double v;
    ck_assert_int_eq(metrics_get(f, METRICS_L("x"), &v, NULL, &err), VMOP_E_NOT_FOUND);
    metrics_free(m);
}
END_TEST

#define N_THREADS 8
#define N_ITERS   20000

struct worker_arg {
    struct metrics_family *c, *h, *g;
    int id;
};

static void *worker(void *p)
{
    struct worker_arg *a = p;
    const char *lbl = a->id % 2 ? "odd" : "even";
    for (int i = 0; i < N_ITERS; i++) {
        metrics_add(a->c, METRICS_L(lbl), 1);
        metrics_observe(a->h, METRICS_L(lbl), 0.5);
        metrics_add(a->g, NULL, (i % 2) ? -1 : 1);
    }
    return NULL;
}

START_TEST(concurrency_exact)
{
    struct metrics *m = new_registry(0);
    struct worker_arg args[N_THREADS];
    pthread_t th[N_THREADS];
    struct metrics_family *c, *h, *g;
    struct vmop_err err = {0};
    double count = 0, sum = 0;

    ck_assert_int_eq(
        metrics_register(m, METRICS_COUNTER, "t_c_total", "C.", METRICS_L("k"), NULL, 0, &c, &err),
        VMOP_OK);
    ck_assert_int_eq(
        metrics_register(m, METRICS_HISTOGRAM, "t_h", "H.", METRICS_L("k"), NULL, 0, &h, &err),
        VMOP_OK);
    ck_assert_int_eq(metrics_register(m, METRICS_GAUGE, "t_g", "G.", NULL, NULL, 0, &g, &err),
                     VMOP_OK);
    for (int i = 0; i < N_THREADS; i++) {
        args[i] = (struct worker_arg){c, h, g, i};
        ck_assert_int_eq(pthread_create(&th[i], NULL, worker, &args[i]), 0);
    }
    /* Renders race with the updates: they must not crash or tear. */
    for (int i = 0; i < 20; i++)
        free(render(m));
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(th[i], NULL);
    ck_assert_double_eq(get(c, METRICS_L("odd")), N_THREADS / 2 * N_ITERS);
    ck_assert_double_eq(get(c, METRICS_L("even")), N_THREADS / 2 * N_ITERS);
    ck_assert_int_eq(metrics_get(h, METRICS_L("odd"), &count, &sum, &err), VMOP_OK);
    ck_assert_double_eq(count, N_THREADS / 2 * N_ITERS);
    ck_assert_double_eq(sum, 0.5 * N_THREADS / 2 * N_ITERS);
    ck_assert_double_eq(get(g, NULL), 0);
    char *text = render(m);
    char want[128];
    snprintf(want, sizeof(want), "t_c_total{k=\"even\"} %d\nt_c_total{k=\"odd\"} %d\n",
             N_THREADS / 2 * N_ITERS, N_THREADS / 2 * N_ITERS);
    ck_assert_ptr_nonnull(strstr(text, want));
    free(text);
    metrics_free(m);
}
END_TEST

START_TEST(cardinality_cap)
{
    struct metrics *m = new_registry(3);
    struct metrics_family *f, *other;
    struct vmop_err err = {0};
    char name[32];

    ck_assert_int_eq(metrics_register(m, METRICS_COUNTER, "t_vm_total", "V.", METRICS_L("vm"), NULL,
                                      0, &f, &err),
                     VMOP_OK);
    ck_assert_int_eq(
        metrics_register(m, METRICS_GAUGE, "t_other", "O.", METRICS_L("x"), NULL, 0, &other, &err),
        VMOP_OK);
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof(name), "vm-%d", i);
        ck_assert_int_eq(metrics_add(f, METRICS_L(name), 1), i < 3 ? VMOP_OK : VMOP_E_TOOBIG);
    }
    /* Existing series still update at the cap. */
    ck_assert_int_eq(metrics_add(f, METRICS_L("vm-0"), 1), VMOP_OK);
    ck_assert_double_eq(get(f, METRICS_L("vm-0")), 2);
    ck_assert_int_eq(metrics_overflow(m), 2);
    /* The cap is per family. */
    ck_assert_int_eq(metrics_set(other, METRICS_L("a"), 1), VMOP_OK);

    /* An over-long label value is dropped and counted too. */
    char *longv = malloc(METRICS_MAX_LABEL_VALUE + 2);
    ck_assert_ptr_nonnull(longv);
    memset(longv, 'x', METRICS_MAX_LABEL_VALUE + 1);
    longv[METRICS_MAX_LABEL_VALUE + 1] = '\0';
    ck_assert_int_eq(metrics_set(other, METRICS_L(longv), 1), VMOP_E_TOOBIG);
    longv[METRICS_MAX_LABEL_VALUE] = '\0';
    ck_assert_int_eq(metrics_set(other, METRICS_L(longv), 1), VMOP_OK);
    free(longv);
    ck_assert_int_eq(metrics_overflow(m), 3);

    char *text = render(m);
    ck_assert_ptr_null(strstr(text, "vm-3"));
    ck_assert_ptr_null(strstr(text, "vm-4"));
    ck_assert_ptr_nonnull(strstr(text, "vmop_metrics_series_overflow_total 3\n"));
    free(text);

    /* Removing a series frees room for a new one. */
    ck_assert_int_eq(metrics_remove(f, METRICS_L("vm-1")), VMOP_OK);
    ck_assert_int_eq(metrics_add(f, METRICS_L("vm-4"), 1), VMOP_OK);
    metrics_free(m);
}
END_TEST

struct coll {
    struct metrics_family *f;
    int runs;
    int *freed;
};

static void collect_cb(void *ud, struct metrics *m)
{
    struct coll *c = ud;
    (void)m;
    c->runs++;
    metrics_set(c->f, NULL, c->runs * 10);
}

static void coll_free(void *ud)
{
    struct coll *c = ud;
    (*c->freed)++;
}

START_TEST(collectors)
{
    struct metrics *m = new_registry(0);
    struct metrics_family *f;
    struct vmop_err err = {0};
    int freed = 0;
    struct coll c = {0}, c2 = {0};
    int key;

    ck_assert_int_eq(metrics_register(m, METRICS_GAUGE, "t_pulled", "P.", NULL, NULL, 0, &f, &err),
                     VMOP_OK);
    c.f = f;
    c.freed = &freed;
    c2.f = NULL; /* updates of a NULL family are no-ops */
    c2.freed = &freed;
    ck_assert_int_eq(metrics_add_collector(m, collect_cb, &c, coll_free, &key, &err), VMOP_OK);
    ck_assert_int_eq(metrics_add_collector(m, collect_cb, &c2, coll_free, NULL, &err), VMOP_OK);
    ck_assert_int_eq(metrics_add_collector(m, NULL, NULL, NULL, NULL, &err), VMOP_E_INVALID);

    char *text = render(m);
    ck_assert_ptr_nonnull(strstr(text, "t_pulled 10\n"));
    free(text);
    text = render(m);
    ck_assert_ptr_nonnull(strstr(text, "t_pulled 20\n"));
    free(text);
    ck_assert_int_eq(c.runs, 2);
    ck_assert_int_eq(c2.runs, 2);

    metrics_remove_collectors(m, &key);
    ck_assert_int_eq(freed, 1);
    text = render(m);
    ck_assert_ptr_nonnull(strstr(text, "t_pulled 20\n")); /* last value stays */
    free(text);
    ck_assert_int_eq(c.runs, 2);
    ck_assert_int_eq(c2.runs, 3);
    metrics_free(m); /* frees c2's ud */
    ck_assert_int_eq(freed, 2);
}
END_TEST

/* The numeric value of the line that starts with prefix ("name " or "name{...} "). */
static double line_value(const char *text, const char *prefix)
{
    char want[256];
    snprintf(want, sizeof(want), "\n%s", prefix);
    const char *p = strstr(text, want);
    ck_assert_msg(p != NULL, "no line starting with '%s'", prefix);
    return strtod(p + strlen(want), NULL);
}

START_TEST(std_families_and_proc)
{
    struct metrics *m = new_registry(0);
    struct metrics_std std;
    struct metrics_proc pr;
    struct vmop_err err = {0};

    ck_assert_int_eq(metrics_read_proc(&pr, &err), VMOP_OK);
    ck_assert(pr.rss_bytes > 1024 * 1024 && pr.rss_bytes < 64.0 * 1024 * 1024 * 1024);
    ck_assert(pr.cpu_seconds >= 0 && pr.cpu_seconds < 3600);
    ck_assert(pr.open_fds >= 3 && pr.open_fds < 100000);
    double now = (double)time(NULL);
    ck_assert(pr.start_time_seconds > now - 3600 && pr.start_time_seconds <= now + 1);

    ck_assert_int_eq(metrics_std_register(m, &std, &err), VMOP_OK);
    ck_assert_int_eq(metrics_std_register(m, &std, &err), VMOP_E_EXISTS);
    metrics_std_reconcile(&std, "virtualmachine", METRICS_RESULT_SUCCESS, 0.02);
    metrics_std_reconcile(&std, "virtualmachine", METRICS_RESULT_ERROR, 1.5);
    metrics_std_reconcile(&std, "virtualmachine", METRICS_RESULT_ERROR, -1);
    metrics_std_reconcile(NULL, "virtualmachine", METRICS_RESULT_ERROR, 1);
    metrics_std_queue_add(&std, "virtualmachine");
    metrics_std_queue_wait(&std, "virtualmachine", 0.003);
    metrics_std_watch_restart(&std, "kube:virtualmachines");
    metrics_std_set_leader(&std, 1);

    char *text = render(m);
    /* Every family in the brief, with HELP and TYPE. */
    static const char *const types[] = {
        "vmop_reconcile_total counter",
        "vmop_reconcile_errors_total counter",
        "vmop_reconcile_duration_seconds histogram",
        "vmop_workqueue_depth gauge",
        "vmop_workqueue_adds_total counter",
        "vmop_workqueue_queue_duration_seconds histogram",
        "vmop_vcenter_calls_total counter",
        "vmop_vcenter_relogins_total counter",
        "vmop_watch_restarts_total counter",
        "vmop_leader gauge",
        "process_resident_memory_bytes gauge",
        "process_cpu_seconds_total counter",
        "process_start_time_seconds gauge",
    };
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        char want[128];
        snprintf(want, sizeof(want), "# TYPE %s\n", types[i]);
        ck_assert_msg(strstr(text, want) != NULL, "missing %s", want);
    }
    ck_assert_double_eq(
        line_value(text, "vmop_reconcile_total{controller=\"virtualmachine\",result=\"error\"} "),
        2);
    ck_assert_double_eq(
        line_value(text, "vmop_reconcile_total{controller=\"virtualmachine\",result=\"success\"} "),
        1);
    ck_assert_double_eq(
        line_value(text, "vmop_reconcile_errors_total{controller=\"virtualmachine\"} "), 2);
    ck_assert_double_eq(
        line_value(
            text,
            "vmop_reconcile_duration_seconds_bucket{controller=\"virtualmachine\",le=\"0.025\"} "),
        2); /* 0.02 and the clamped -1 */
    ck_assert_double_eq(
        line_value(text, "vmop_reconcile_duration_seconds_count{controller=\"virtualmachine\"} "),
        3);
    ck_assert_double_eq(line_value(text, "vmop_workqueue_adds_total{name=\"virtualmachine\"} "), 1);
    ck_assert_double_eq(
        line_value(
            text,
            "vmop_workqueue_queue_duration_seconds_bucket{name=\"virtualmachine\",le=\"0.005\"} "),
        1);
    ck_assert_double_eq(
        line_value(text, "vmop_watch_restarts_total{source=\"kube:virtualmachines\"} "), 1);
    ck_assert_double_eq(line_value(text, "vmop_leader "), 1);
    ck_assert(line_value(text, "process_resident_memory_bytes ") > 1024 * 1024);
    ck_assert(line_value(text, "process_cpu_seconds_total ") >= 0);
    double start = line_value(text, "process_start_time_seconds ");
    ck_assert(start > now - 3600 && start <= now + 1);
    ck_assert(line_value(text, "process_open_fds ") >= 3);
    free(text);

    /* CPU time is monotonic across renders. */
    double cpu1 = get(std.proc_cpu, NULL);
    volatile double x = 0;
    for (long i = 0; i < 20000000; i++)
        x += (double)i;
    free(render(m));
    ck_assert(get(std.proc_cpu, NULL) >= cpu1);
    metrics_free(m);
}
END_TEST

START_TEST(queue_collector)
{
    struct metrics *m = new_registry(0);
    struct metrics_std std;
    struct kube_queue *q = NULL;
    struct vmop_err err = {0};
    char *key = NULL;

    ck_assert_int_eq(metrics_std_register(m, &std, &err), VMOP_OK);
    ck_assert_int_eq(kube_queue_new(NULL, &q, &err), VMOP_OK);
    ck_assert_int_eq(metrics_collect_queue(&std, "virtualmachine", q, &err), VMOP_OK);
    ck_assert_int_eq(kube_queue_add(q, "ns/a"), VMOP_OK);
    ck_assert_int_eq(kube_queue_add(q, "ns/b"), VMOP_OK);
    ck_assert_int_eq(kube_queue_add(q, "ns/b"), VMOP_OK); /* deduplicated */
    ck_assert_int_eq(kube_queue_add_after(q, "ns/c", 60000), VMOP_OK);
    char *text = render(m);
    ck_assert_double_eq(line_value(text, "vmop_workqueue_depth{name=\"virtualmachine\"} "), 2);
    ck_assert_double_eq(line_value(text, "vmop_workqueue_delayed{name=\"virtualmachine\"} "), 1);
    free(text);
    ck_assert_int_eq(kube_queue_get(q, 1000, &key), VMOP_OK);
    kube_queue_done(q, key);
    free(key);
    text = render(m);
    ck_assert_double_eq(line_value(text, "vmop_workqueue_depth{name=\"virtualmachine\"} "), 1);
    free(text);
    /* After removal the queue may be freed and renders still work. */
    metrics_remove_collectors(m, q);
    kube_queue_free(q);
    free(render(m));
    metrics_free(m);
}
END_TEST

START_TEST(vim_collector_counts_methods)
{
    struct metrics *m = new_registry(0);
    struct metrics_std std;
    struct vim_client *c = NULL;
    struct vmop_err err = {0};
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof(sa);
    char url[64];

    /* A port bound but not listening refuses connections, and stays ours during the test. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(sa.sin_port));

    struct vim_config cfg = {.url = url,
                             .username = "u",
                             .password = "not-a-secret",
                             .timeout_ms = 5000,
                             .connect_timeout_ms = 2000};
    ck_assert_int_eq(vim_client_new(&cfg, &c, &err), VMOP_OK);
    ck_assert_int_eq(metrics_std_register(m, &std, &err), VMOP_OK);
    ck_assert_int_eq(metrics_collect_vim(&std, "vc1", c, &err), VMOP_OK);
    char *text = render(m);
    ck_assert_ptr_null(strstr(text, "vmop_vcenter_calls_total{")); /* no call yet */
    ck_assert_double_eq(line_value(text, "vmop_vcenter_relogins_total{endpoint=\"vc1\"} "), 0);
    free(text);

    ck_assert_int_ne(vim_login(c, &err), VMOP_OK);
    text = render(m);
    double calls = line_value(
        text, "vmop_vcenter_calls_total{endpoint=\"vc1\",method=\"RetrieveServiceContent\"} ");
    ck_assert(calls >= 1);
    ck_assert_double_eq(
        line_value(
            text,
            "vmop_vcenter_call_errors_total{endpoint=\"vc1\",method=\"RetrieveServiceContent\"} "),
        calls);
    ck_assert(line_value(text, "vmop_vcenter_call_seconds_total{endpoint=\"vc1\","
                               "method=\"RetrieveServiceContent\"} ") >= 0);
    ck_assert_ptr_null(strstr(text, "not-a-secret"));
    free(text);

    metrics_remove_collectors(m, c);
    vim_client_free(c);
    close(fd);
    metrics_free(m);
}
END_TEST

static void on_key(const char *key, void *user)
{
    (void)key;
    (void)user;
}

static void on_probe(void *ud, const char *key, enum probe_tcp result)
{
    (void)ud;
    (void)key;
    (void)result;
}

START_TEST(feed_and_prober_collectors)
{
    struct metrics *m = new_registry(0);
    struct metrics_std std;
    struct vim_client *c = NULL;
    struct vcfeed *feed = NULL;
    struct prober *pr = NULL;
    struct vmop_err err = {0};
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof(sa);
    char url[64];

    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(sa.sin_port));

    struct vim_config cfg = {.url = url,
                             .username = "u",
                             .password = "p",
                             .timeout_ms = 5000,
                             .connect_timeout_ms = 2000};
    ck_assert_int_eq(vim_client_new(&cfg, &c, &err), VMOP_OK);
    struct vcfeed_opts fo = {.client = c,
                             .containers = METRICS_L("group-v3"),
                             .enqueue = on_key,
                             .backoff_initial_ms = 50,
                             .backoff_max_ms = 100};
    ck_assert_int_eq(vcfeed_new(&fo, &feed, &err), VMOP_OK);
    ck_assert_int_eq(prober_new(4, on_probe, NULL, &pr, &err), VMOP_OK);
    ck_assert_int_eq(prober_set(pr, "ns/a", "127.0.0.1", ntohs(sa.sin_port), 60, 1, &err), VMOP_OK);

    ck_assert_int_eq(metrics_std_register(m, &std, &err), VMOP_OK);
    ck_assert_int_eq(metrics_collect_vcfeed(&std, "vc1", feed, &err), VMOP_OK);
    ck_assert_int_eq(metrics_collect_prober(&std, pr, &err), VMOP_OK);
    ck_assert_int_eq(metrics_collect_vcfeed(&std, NULL, feed, &err), VMOP_E_INVALID);

    char *text = render(m);
    ck_assert_double_eq(line_value(text, "vmop_vcenter_feed_watches{endpoint=\"vc1\"} "), 0);
    ck_assert(line_value(text, "vmop_vcenter_feed_updates_total{endpoint=\"vc1\"} ") == 0);
    ck_assert(line_value(text, "vmop_watch_restarts_total{source=\"vcenter:vc1\"} ") >= 0);
    ck_assert_double_eq(line_value(text, "vmop_probe_keys "), 1);
    free(text);

    /* The feed keeps failing against the refused port: the mirrored restart counter follows
     * vcfeed_stats exactly. */
    struct vcfeed_stats st;
    vcfeed_stop(feed);
    vcfeed_stats(feed, &st);
    text = render(m);
    ck_assert_double_eq(line_value(text, "vmop_watch_restarts_total{source=\"vcenter:vc1\"} "),
                        (double)st.restarts);
    free(text);

    metrics_remove_collectors(m, feed);
    metrics_remove_collectors(m, pr);
    vcfeed_free(feed);
    prober_free(pr);
    free(render(m)); /* no collector touches the freed objects */
    vim_client_free(c);
    close(fd);
    metrics_free(m);
}
END_TEST

/* A module's own numbers (metrics_add_plain): families of the registry, a counter when the name
 * ends in _total, else a gauge, read at each render; a taken name is refused; removing the
 * collector stops the reads. */
static unsigned long plain_total = 3;
static double read_plain_total(void *ud)
{
    return (double)*(unsigned long *)ud;
}

static double read_plain_gauge(void *ud)
{
    (void)ud;
    return 2;
}

static const struct metrics_plain plain_defs[] = {
    {"vmop_t_things_total", "Things done.", read_plain_total},
    {"vmop_t_queue_length", "Things waiting.", read_plain_gauge},
};

START_TEST(plain_numbers_registered)
{
    struct metrics *m = new_registry(0);
    struct vmop_err err = {0};
    struct vbuf b;
    ck_assert_int_eq(metrics_add_plain(m, plain_defs, 2, &plain_total, NULL, &err), VMOP_OK);
    vbuf_init(&b, 1 << 20);
    ck_assert_int_eq(metrics_render(m, &b, &err), VMOP_OK);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&b), "# HELP vmop_t_things_total Things done.\n"
                                               "# TYPE vmop_t_things_total counter\n"
                                               "vmop_t_things_total 3\n"));
    ck_assert_ptr_nonnull(strstr(vbuf_str(&b), "# TYPE vmop_t_queue_length gauge\n"
                                               "vmop_t_queue_length 2\n"));
    /* read again at the next render */
    plain_total = 5;
    vbuf_free(&b);
    vbuf_init(&b, 1 << 20);
    ck_assert_int_eq(metrics_render(m, &b, &err), VMOP_OK);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&b), "vmop_t_things_total 5\n"));
    /* the same names twice: refused */
    ck_assert_int_eq(metrics_add_plain(m, plain_defs, 2, &plain_total, NULL, &err), VMOP_E_EXISTS);
    vmop_err_clear(&err);
    /* collectors removed: the value stays where it was */
    metrics_remove_collectors(m, &plain_total);
    plain_total = 9;
    vbuf_free(&b);
    vbuf_init(&b, 1 << 20);
    ck_assert_int_eq(metrics_render(m, &b, &err), VMOP_OK);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&b), "vmop_t_things_total 5\n"));
    vbuf_free(&b);
    metrics_free(m);
}
END_TEST

static Suite *metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, golden_text);
    tcase_add_test(tc, escaping);
    tcase_add_test(tc, value_format);
    tcase_add_test(tc, histogram_buckets);
    tcase_add_test(tc, registration_checks);
    tcase_add_test(tc, concurrency_exact);
    tcase_add_test(tc, cardinality_cap);
    tcase_add_test(tc, collectors);
    tcase_add_test(tc, std_families_and_proc);
    tcase_add_test(tc, queue_collector);
    tcase_add_test(tc, vim_collector_counts_methods);
    tcase_add_test(tc, feed_and_prober_collectors);
    tcase_add_test(tc, plain_numbers_registered);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(metrics_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
