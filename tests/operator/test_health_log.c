/* test_health_log.c: unit tests for operator/health.c (/healthz, /readyz, /metrics over loopback)
 * and operator/log.c (one JSON object per line, escaping, levels). */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "health.h"
#include "log.h"

static int g_ready;

static int ready_cb(void *ud)
{
    return g_ready;
}

static void metrics_cb(void *ud, struct vbuf *out)
{
    vbuf_addf(out, "vmop_test_total %d\n", 42);
}

/* GET path on 127.0.0.1:port; returns the status code, body into buf. */
static int http_get(int port, const char *path, char *buf, size_t size)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0), code = -1;
    char req[256];
    size_t off = 0;
    ssize_t n;
    ck_assert_int_ge(fd, 0);
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path);
    ck_assert_int_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
    while (off + 1 < size && (n = read(fd, buf + off, size - off - 1)) > 0)
        off += (size_t)n;
    buf[off] = '\0';
    close(fd);
    sscanf(buf, "HTTP/1.%*d %d", &code);
    return code;
}

START_TEST(health_endpoints)
{
    struct health *h = NULL;
    struct vmop_err err = {0};
    struct health_cbs cbs = {ready_cb, metrics_cb, NULL};
    char buf[4096];
    ck_assert_int_eq(health_start("127.0.0.1:0", &cbs, &h, &err), VMOP_OK);
    ck_assert_int_gt(health_port(h), 0);
    ck_assert_int_eq(http_get(health_port(h), "/healthz", buf, sizeof(buf)), 200);
    g_ready = 0;
    ck_assert_int_eq(http_get(health_port(h), "/readyz", buf, sizeof(buf)), 503);
    g_ready = 1;
    ck_assert_int_eq(http_get(health_port(h), "/readyz", buf, sizeof(buf)), 200);
    ck_assert_int_eq(http_get(health_port(h), "/metrics", buf, sizeof(buf)), 200);
    ck_assert_ptr_nonnull(strstr(buf, "vmop_test_total 42"));
    ck_assert_int_eq(http_get(health_port(h), "/nope", buf, sizeof(buf)), 404);
    health_stop(h);
}
END_TEST

START_TEST(health_bad_address)
{
    struct health *h = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(health_start("localhost", NULL, &h, &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(health_start("127.0.0.1:99999", NULL, &h, &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(health_start("not-an-ip:80", NULL, &h, &err), VMOP_E_INVALID);
    ck_assert_ptr_null(h);
}
END_TEST

static char *read_pipe(int fd)
{
    static char buf[8192];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

START_TEST(log_json_lines)
{
    int p[2];
    struct vmop_err err = {0};
    cJSON *j;
    ck_assert_int_eq(pipe(p), 0);
    vlog_set_fd(p[1]);
    vlog_set_level(VLOG_INFO);
    vlog(VLOG_INFO, "vm-controller", "ns/web-0", "said \"hi\"\nand\tleft %d", 7);
    j = cJSON_Parse(read_pipe(p[0]));
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "level")->valuestring, "info");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "logger")->valuestring, "vm-controller");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "key")->valuestring, "ns/web-0");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "msg")->valuestring, "said \"hi\"\nand\tleft 7");
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(j, "ts"));
    cJSON_Delete(j);

    vmop_fail_fault(&err, VMOP_E_FAULT, "InvalidPowerState", 0, "bad state");
    vlog_err(VLOG_WARN, "x", NULL, &err, "power-on failed");
    j = cJSON_Parse(read_pipe(p[0]));
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "fault")->valuestring, "InvalidPowerState");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "error")->valuestring, "bad state");
    ck_assert_ptr_null(cJSON_GetObjectItem(j, "key"));
    cJSON_Delete(j);

    /* below the level: nothing written */
    vlog(VLOG_DEBUG, "x", NULL, "hidden");
    vlog(VLOG_ERROR, "x", NULL, "shown");
    j = cJSON_Parse(read_pipe(p[0]));
    ck_assert_str_eq(cJSON_GetObjectItem(j, "msg")->valuestring, "shown");
    cJSON_Delete(j);
    vlog_set_fd(-1);
    close(p[0]);
    close(p[1]);
    ck_assert_int_eq(vlog_level_parse("warning"), VLOG_WARN);
    ck_assert_int_eq(vlog_level_parse("loud"), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("health+log");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int nf;
    tcase_add_test(tc, health_endpoints);
    tcase_add_test(tc, health_bad_address);
    tcase_add_test(tc, log_json_lines);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? 0 : 1;
}
