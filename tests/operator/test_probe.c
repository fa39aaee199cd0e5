/* test_probe.c: unit tests of operator/service/probe.c: readiness evaluation (tcpSocket,
 * guestHeartbeat, guestInfo and its Go/RE2 patterns through PCRE2, power), the Ready condition it
 * writes, and the TCP prober against real sockets on 127.0.0.1: a listener (ready), a closed port
 * (not ready), a full accept queue (timeout), the transition callback, and 1,000 registered keys
 * under a concurrency cap of 8. Suite: unit. */
#include <check.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "check_main.h"
#include "wait.h"
#include "clock.h"
#include "probe.h"

static struct api_vm *vm_with_probe(const char *probe_json)
{
    char buf[1024];
    struct api_vm *vm = NULL;
    struct vmop_err err = {0};
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachine\","
             "\"metadata\":{\"name\":\"v\",\"namespace\":\"n\"},\"spec\":{%s%s}}",
             probe_json ? "\"readinessProbe\":" : "", probe_json ? probe_json : "");
    ck_assert_msg(api_vm_parse_text(buf, strlen(buf), &vm, &err) == VMOP_OK, "%s", err.msg);
    return vm;
}

static const char *gi_lookup(void *ud, const char *key)
{
    (void)ud;
    if (strcmp(key, "guestinfo.app.ready") == 0)
        return "yes-42";
    if (strcmp(key, "guestinfo.secret") == 0)
        return "hunter2";
    return NULL;
}

static struct probe_result eval(struct api_vm *vm, enum api_power_state pw, const char *hb,
                                enum probe_tcp tcp)
{
    struct probe_facts f = {
        .power = pw, .primary_ip = "10.0.0.5", .heartbeat = hb, .extra_config = gi_lookup};
    struct probe_result r;
    struct vmop_err err = {0};
    ck_assert_int_eq(probe_evaluate(vm, &f, tcp, &r, &err), VMOP_OK);
    return r;
}

START_TEST(eval_no_probe)
{
    struct api_vm *vm = vm_with_probe(NULL);
    struct probe_result r = eval(vm, API_POWER_ON, "green", PROBE_TCP_OK);
    ck_assert_int_eq(r.has_probe, 0);
    struct vmop_err err = {0};
    ck_assert_int_eq(probe_evaluate(NULL, NULL, PROBE_TCP_OK, &r, &err), VMOP_E_INVALID);
    api_vm_free(vm);
}
END_TEST

START_TEST(eval_tcp)
{
    struct api_vm *vm = vm_with_probe("{\"tcpSocket\":{\"port\":\"22\"},\"periodSeconds\":3}");
    const char *host = "x";
    ck_assert_int_eq(probe_tcp_target(vm, &host), 22);
    ck_assert_ptr_null(host);
    struct probe_result r = eval(vm, API_POWER_ON, NULL, PROBE_TCP_OK);
    ck_assert_int_eq(r.has_probe, 1);
    ck_assert_int_eq(r.status, API_COND_TRUE);
    ck_assert_str_eq(r.reason, "Ready");
    r = eval(vm, API_POWER_ON, NULL, PROBE_TCP_FAIL);
    ck_assert_int_eq(r.status, API_COND_FALSE);
    ck_assert_str_eq(r.reason, "NotReady");
    ck_assert_ptr_nonnull(strstr(r.message, "22"));
    r = eval(vm, API_POWER_ON, NULL, PROBE_TCP_UNKNOWN);
    ck_assert_int_eq(r.status, API_COND_UNKNOWN);
    ck_assert_str_eq(r.reason, "Unknown");
    /* powered off: never ready, whatever the cached result */
    r = eval(vm, API_POWER_OFF, NULL, PROBE_TCP_OK);
    ck_assert_int_eq(r.status, API_COND_FALSE);
    r = eval(vm, API_POWER_SUSPENDED, NULL, PROBE_TCP_OK);
    ck_assert_int_eq(r.status, API_COND_FALSE);
    api_vm_free(vm);

    vm = vm_with_probe("{\"tcpSocket\":{\"port\":8080,\"host\":\"db.local\"}}");
    ck_assert_int_eq(probe_tcp_target(vm, &host), 8080);
    ck_assert_str_eq(host, "db.local");
    api_vm_free(vm);
    vm = vm_with_probe("{\"tcpSocket\":{\"port\":\"ssh\"}}"); /* named ports cannot be resolved */
    ck_assert_int_eq(probe_tcp_target(vm, NULL), 0);
    api_vm_free(vm);
}
END_TEST

START_TEST(eval_heartbeat)
{
    struct api_vm *g = vm_with_probe("{\"guestHeartbeat\":{}}"); /* threshold defaults green */
    struct api_vm *y = vm_with_probe("{\"guestHeartbeat\":{\"thresholdStatus\":\"yellow\"}}");
    ck_assert_int_eq(eval(g, API_POWER_ON, "green", PROBE_TCP_UNKNOWN).status, API_COND_TRUE);
    ck_assert_int_eq(eval(g, API_POWER_ON, "yellow", PROBE_TCP_UNKNOWN).status, API_COND_FALSE);
    ck_assert_int_eq(eval(y, API_POWER_ON, "yellow", PROBE_TCP_UNKNOWN).status, API_COND_TRUE);
    ck_assert_int_eq(eval(y, API_POWER_ON, "green", PROBE_TCP_UNKNOWN).status, API_COND_TRUE);
    ck_assert_int_eq(eval(y, API_POWER_ON, "red", PROBE_TCP_UNKNOWN).status, API_COND_FALSE);
    ck_assert_int_eq(eval(y, API_POWER_ON, "gray", PROBE_TCP_UNKNOWN).status, API_COND_FALSE);
    ck_assert_int_eq(eval(y, API_POWER_ON, NULL, PROBE_TCP_UNKNOWN).status, API_COND_UNKNOWN);
    ck_assert_int_eq(eval(g, API_POWER_OFF, "green", PROBE_TCP_UNKNOWN).status, API_COND_FALSE);
    api_vm_free(g);
    api_vm_free(y);
}
END_TEST

START_TEST(eval_guestinfo)
{
    struct api_vm *m =
        vm_with_probe("{\"guestInfo\":[{\"key\":\"app.ready\",\"value\":\"^yes-[0-9]+$\"}]}");
    struct api_vm *nm = vm_with_probe("{\"guestInfo\":[{\"key\":\"app.ready\"},{\"key\":\"secret\","
                                      "\"value\":\"^nope$\"}]}");
    struct api_vm *missing = vm_with_probe("{\"guestInfo\":[{\"key\":\"absent\"}]}");
    struct api_vm *bad = vm_with_probe("{\"guestInfo\":[{\"key\":\"app.ready\",\"value\":\"(\"}]}");
    ck_assert_int_eq(eval(m, API_POWER_ON, NULL, PROBE_TCP_UNKNOWN).status, API_COND_TRUE);
    struct probe_result r = eval(nm, API_POWER_ON, NULL, PROBE_TCP_UNKNOWN);
    ck_assert_int_eq(r.status, API_COND_FALSE);
    ck_assert_ptr_nonnull(strstr(r.message, "guestinfo.secret"));
    ck_assert_ptr_null(strstr(r.message, "hunter2")); /* values never in messages */
    r = eval(missing, API_POWER_ON, NULL, PROBE_TCP_UNKNOWN);
    ck_assert_int_eq(r.status, API_COND_FALSE);
    ck_assert_ptr_nonnull(strstr(r.message, "guestinfo.absent"));
    ck_assert_int_eq(eval(bad, API_POWER_ON, NULL, PROBE_TCP_UNKNOWN).status, API_COND_FALSE);
    api_vm_free(m);
    api_vm_free(nm);
    api_vm_free(missing);
    api_vm_free(bad);
}
END_TEST

/* guestInfo with one key, guestinfo.t = value, and pattern (NULL: no "value" field). */
static const char *one_lookup(void *ud, const char *key)
{
    return strcmp(key, "guestinfo.t") == 0 ? ud : NULL;
}

static struct probe_result eval_re(const char *pattern, const char *value)
{
    cJSON *gi = cJSON_CreateArray(), *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "key", "t");
    if (pattern)
        cJSON_AddStringToObject(e, "value", pattern);
    cJSON_AddItemToArray(gi, e);
    cJSON *p = cJSON_CreateObject();
    cJSON_AddItemToObject(p, "guestInfo", gi);
    char *json = cJSON_PrintUnformatted(p);
    struct api_vm *vm = vm_with_probe(json);
    struct probe_facts f = {.power = API_POWER_ON, .extra_config = one_lookup, .ud = (void *)value};
    struct probe_result r;
    struct vmop_err err = {0};
    ck_assert_int_eq(probe_evaluate(vm, &f, PROBE_TCP_UNKNOWN, &r, &err), VMOP_OK);
    ck_assert_int_eq(r.has_probe, 1);
    api_vm_free(vm);
    free(json);
    cJSON_Delete(p);
    return r;
}

#define RE_TRUE(pat, val)                                                                          \
    ck_assert_msg(eval_re(pat, val).status == API_COND_TRUE, "%s on %s", pat, val)
#define RE_FALSE(pat, val)                                                                         \
    ck_assert_msg(eval_re(pat, val).status == API_COND_FALSE, "%s on %s", pat, val)

/* Patterns are Go (RE2) syntax, as in VM Operator, searched unanchored like regexp.MatchString.
 * The RE2-only assertions fail under POSIX regcomp (glibc reads \d as 'd' and [\w] as {\, w},
 * rejects (?i) (?: (?s) \p{..}, lets . match a newline). glibc happens to accept \w and \s outside
 * brackets and reads *? as * then ?, so `^\w+$` and `a.*?b` also pass there: `^[\w-]+$` and
 * `^a\d+?b$` are the ones that tell the two apart. */
START_TEST(eval_guestinfo_re2)
{
    RE_TRUE("\\d+", "abc123"); /* unanchored; \d is a digit */
    RE_FALSE("\\d", "abcd");
    RE_TRUE("^\\w+$", "a_b9");
    RE_FALSE("^\\w+$", "a-b");
    RE_TRUE("^[\\w-]+$", "a-b_9"); /* \w inside a bracket expression */
    RE_TRUE("(?i)ready", "READY");
    RE_FALSE("ready", "READY");
    RE_TRUE("a.*?b", "xaXbYb"); /* lazy */
    RE_TRUE("^a\\d+?b$", "a12b");
    RE_TRUE("^(?:ok|ready)$", "ready");
    RE_TRUE("^\\s*ready\\s*$", " ready\t");
    RE_TRUE("^\\p{Greek}+$", "\xce\xb1\xce\xb2"); /* UTF-8 */
    RE_TRUE("\\d+", "\37742"); /* an invalid UTF-8 byte (0xff) in the value is no error */
    /* RE2's $ is the end of the text only, . never a newline */
    RE_FALSE("^ready$", "ready\n");
    RE_FALSE("^a.b$", "a\nb");
    RE_TRUE("(?s)^a.b$", "a\nb");

    /* a pattern that does not compile: False, naming the key, the error and its offset */
    struct probe_result r = eval_re("(", "x");
    ck_assert_int_eq(r.status, API_COND_FALSE);
    ck_assert_str_eq(r.reason, "NotReady");
    ck_assert_ptr_nonnull(strstr(r.message, "invalid regular expression for guestinfo.t"));
    ck_assert_msg(strstr(r.message, "at offset 1: missing closing parenthesis"), "%s", r.message);
    r = eval_re("a{2,1}", "aa");
    ck_assert_int_eq(r.status, API_COND_FALSE);
    ck_assert_msg(strstr(r.message, "at offset 5: "), "%s", r.message);

    /* catastrophic backtracking stops at the match limit instead of hanging the worker */
    long long t0 = vmop_test_now_ms();
    r = eval_re("^(a+)+$", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!");
    ck_assert_int_eq(r.status, API_COND_FALSE);
    ck_assert_msg(strstr(r.message, "guestinfo.t reached the match limit"), "%s", r.message);
    ck_assert_ptr_null(strstr(r.message, "aaaa")); /* values never in messages */
    ck_assert_int_lt(vmop_test_now_ms() - t0, 2000);

    /* no value (or an empty one): the key only has to be present */
    ck_assert_int_eq(eval_re(NULL, "anything").status, API_COND_TRUE);
    ck_assert_int_eq(eval_re("", "anything").status, API_COND_TRUE);
    ck_assert_int_eq(eval_re("", "").status, API_COND_TRUE);
    r = eval_re("", NULL);
    ck_assert_int_eq(r.status, API_COND_FALSE);
    ck_assert_ptr_nonnull(strstr(r.message, "guestinfo.t is not set"));
}
END_TEST

START_TEST(apply_condition)
{
    struct api_vm *vm = vm_with_probe("{\"tcpSocket\":{\"port\":22}}");
    cJSON *conds = cJSON_CreateArray();
    struct vmop_err err = {0};
    int changed = -1;
    struct probe_result r = eval(vm, API_POWER_ON, NULL, PROBE_TCP_FAIL);
    ck_assert_int_eq(probe_apply(conds, &r, 3, 1000, &changed, &err), VMOP_OK);
    ck_assert_int_eq(changed, 1);
    const cJSON *c = api_cond_get(conds, "Ready");
    ck_assert_str_eq(cJSON_GetObjectItem(c, "status")->valuestring, "False");
    ck_assert_str_eq(cJSON_GetObjectItem(c, "reason")->valuestring, "NotReady");
    ck_assert_int_eq(probe_apply(conds, &r, 3, 2000, &changed, &err), VMOP_OK);
    ck_assert_int_eq(changed, 0);
    r = eval(vm, API_POWER_ON, NULL, PROBE_TCP_OK);
    ck_assert_int_eq(probe_apply(conds, &r, 3, 3000, &changed, &err), VMOP_OK);
    ck_assert_int_eq(changed, 1);
    ck_assert_int_eq(api_cond_is_true(conds, "Ready"), 1);
    struct probe_result none = {0};
    ck_assert_int_eq(probe_apply(conds, &none, 3, 4000, &changed, &err), VMOP_OK);
    ck_assert_int_eq(changed, 0);
    cJSON_Delete(conds);
    api_vm_free(vm);
}
END_TEST

/* ---- the TCP prober ---- */

static int listener(int backlog, int *ret_port)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t l = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(fd, backlog), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &l), 0);
    *ret_port = ntohs(a.sin_port);
    return fd;
}

/* A port nothing listens on: bound (so nobody else gets it while the test runs), never listening.
 */
static int closed_port(int *ret_port)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t l = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &l), 0);
    *ret_port = ntohs(a.sin_port);
    return fd;
}

struct transitions {
    pthread_mutex_t mu;
    int n_ok, n_fail;
    char last_key[64];
};

static void on_transition(void *ud, const char *key, enum probe_tcp r)
{
    struct transitions *t = ud;
    pthread_mutex_lock(&t->mu);
    if (r == PROBE_TCP_OK)
        t->n_ok++;
    else if (r == PROBE_TCP_FAIL)
        t->n_fail++;
    snprintf(t->last_key, sizeof(t->last_key), "%s", key);
    pthread_mutex_unlock(&t->mu);
}

static int count_of(struct transitions *t, int ok)
{
    pthread_mutex_lock(&t->mu);
    int n = ok ? t->n_ok : t->n_fail;
    pthread_mutex_unlock(&t->mu);
    return n;
}

START_TEST(prober_listen_and_closed)
{
    struct transitions t = {.mu = PTHREAD_MUTEX_INITIALIZER};
    struct prober *p = NULL;
    struct vmop_err err = {0};
    int lport, cport;
    int lfd = listener(16, &lport), cfd = closed_port(&cport);
    ck_assert_int_eq(prober_new(4, on_transition, &t, &p, &err), VMOP_OK);
    ck_assert_int_eq(prober_result(p, "ns/up"), PROBE_TCP_UNKNOWN);
    ck_assert_int_eq(prober_set(p, "ns/up", "127.0.0.1", lport, 1, 2, &err), VMOP_OK);
    ck_assert_int_eq(prober_set(p, "ns/down", "127.0.0.1", cport, 1, 2, &err), VMOP_OK);
    WAIT_UNTIL(prober_result(p, "ns/up") == PROBE_TCP_OK, 5000);
    WAIT_UNTIL(prober_result(p, "ns/down") == PROBE_TCP_FAIL, 5000);
    WAIT_UNTIL(count_of(&t, 1) == 1 && count_of(&t, 0) == 1, 2000);

    /* the listener goes away: a transition to FAIL within a period or two */
    close(lfd);
    WAIT_UNTIL(prober_result(p, "ns/up") == PROBE_TCP_FAIL, 5000);
    WAIT_UNTIL(count_of(&t, 0) == 2, 2000);
    pthread_mutex_lock(&t.mu);
    ck_assert_str_eq(t.last_key, "ns/up");
    pthread_mutex_unlock(&t.mu);
    /* a steady result is not a transition */
    vmop_test_sleep_ms(1200);
    ck_assert_int_eq(count_of(&t, 0), 2);
    ck_assert_int_eq(count_of(&t, 1), 1);

    /* retargeting resets to UNKNOWN, then probes the new target */
    lfd = listener(16, &lport);
    ck_assert_int_eq(prober_set(p, "ns/down", "127.0.0.1", lport, 1, 2, &err), VMOP_OK);
    WAIT_UNTIL(prober_result(p, "ns/down") == PROBE_TCP_OK, 5000);
    prober_remove(p, "ns/down");
    ck_assert_int_eq(prober_result(p, "ns/down"), PROBE_TCP_UNKNOWN);
    prober_remove(p, "ns/never");

    ck_assert_int_eq(prober_set(p, "k", "127.0.0.1", 0, 1, 1, &err), VMOP_E_INVALID);
    ck_assert_int_eq(prober_set(p, "k", "127.0.0.1", 80, 0, 1, &err), VMOP_E_INVALID);
    ck_assert_int_ne(prober_new(0, NULL, NULL, &(struct prober *){NULL}, &err), VMOP_OK);
    prober_free(p);
    close(lfd);
    close(cfd);
}
END_TEST

START_TEST(prober_timeout)
{
    struct prober *p = NULL;
    struct vmop_err err = {0};
    int port, fill[4], n_fill = 0;
    /* backlog 0 never accepted: once the accept queue is full the kernel drops SYNs, so the
     * prober's connect hangs until its 1 s timeout */
    int lfd = listener(0, &port);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < 4; i++) {
        fill[n_fill] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(fill[n_fill], 0);
        (void)connect(fill[n_fill], (struct sockaddr *)&a, sizeof(a));
        n_fill++;
    }
    /* the first filler's handshake completes (bounded wait); it fills the accept queue */
    struct pollfd pfd = {.fd = fill[0], .events = POLLOUT};
    ck_assert_int_eq(poll(&pfd, 1, 2000), 1);
    ck_assert_int_eq(prober_new(2, NULL, NULL, &p, &err), VMOP_OK);
    int64_t t0 = vmop_test_now_ms();
    ck_assert_int_eq(prober_set(p, "ns/slow", "127.0.0.1", port, 30, 1, &err), VMOP_OK);
    WAIT_UNTIL(prober_result(p, "ns/slow") == PROBE_TCP_FAIL, 5000);
    int64_t took = vmop_test_now_ms() - t0;
    ck_assert_msg(took >= 900 && took < 4000, "timeout after %lld ms", (long long)took);
    struct prober_stats st;
    prober_get_stats(p, &st);
    ck_assert_uint_eq(st.in_flight, 0);
    prober_free(p);
    for (int i = 0; i < n_fill; i++)
        close(fill[i]);
    close(lfd);
}
END_TEST

START_TEST(prober_bounded_1000)
{
    struct prober *p = NULL;
    struct vmop_err err = {0};
    struct prober_stats st;
    int port, n_ok = 0;
    int lfd = listener(4096, &port);
    char key[32];
    ck_assert_int_eq(prober_new(8, NULL, NULL, &p, &err), VMOP_OK);
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "ns/vm-%04d", i);
        ck_assert_int_eq(prober_set(p, key, "127.0.0.1", port, 60, 5, &err), VMOP_OK);
    }
    int64_t end = vmop_test_now_ms() + 20000;
    while (n_ok < 1000 && vmop_test_now_ms() < end) {
        n_ok = 0;
        for (int i = 0; i < 1000; i++) {
            snprintf(key, sizeof(key), "ns/vm-%04d", i);
            n_ok += prober_result(p, key) == PROBE_TCP_OK;
        }
        if (n_ok < 1000)
            vmop_test_sleep_ms(20);
    }
    ck_assert_int_eq(n_ok, 1000);
    prober_get_stats(p, &st);
    ck_assert_uint_eq(st.keys, 1000);
    ck_assert_uint_le(st.max_in_flight, 8);
    ck_assert_uint_ge(st.started, 1000);
    prober_free(p);
    close(lfd);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("probe");
    TCase *ev = tcase_create("evaluate");
    tcase_add_test(ev, eval_no_probe);
    tcase_add_test(ev, eval_tcp);
    tcase_add_test(ev, eval_heartbeat);
    tcase_add_test(ev, eval_guestinfo);
    tcase_add_test(ev, eval_guestinfo_re2);
    tcase_add_test(ev, apply_condition);
    suite_add_tcase(s, ev);
    TCase *pr = tcase_create("prober");
    tcase_add_test(pr, prober_listen_and_closed);
    tcase_add_test(pr, prober_timeout);
    tcase_add_test(pr, prober_bounded_1000);
    suite_add_tcase(s, pr);
    return vmop_check_run(s);
}
