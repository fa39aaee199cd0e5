/* test_kube_watch.c: unit tests for Status parsing and watch stream parsing (NDJSON split at every
 * possible chunk boundary, random chunkings, the line cap, event decoding, ERROR/410). Suite: unit.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "kube_status.h"
#include "kube_watch.h"

static const char *STREAM =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"2\"},"
    "\"spec\":{\"s\":\"x\\ny\"}}}\r\n"
    "\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"7\"}}}\n"
    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"8\"}}}";

struct collect {
    int n;
    char types[16][12];
    char rvs[16][8];
    int stop_after;
};

static int on_line(void *ud, const char *line, size_t len)
{
    struct collect *c = ud;
    enum kube_event_type t;
    cJSON *obj = NULL;
    struct vmop_err err = {0};
    ck_assert_msg(kube_watch_event_parse(line, len, &t, &obj, NULL, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_int_lt(c->n, 16);
    snprintf(c->types[c->n], sizeof(c->types[0]), "%s", kube_event_type_str(t));
    const cJSON *md = cJSON_GetObjectItem(obj, "metadata");
    snprintf(c->rvs[c->n], sizeof(c->rvs[0]), "%s",
             cJSON_GetObjectItem(md, "resourceVersion")->valuestring);
    cJSON_Delete(obj);
    c->n++;
    return c->stop_after && c->n >= c->stop_after;
}

static void check_all(const struct collect *c)
{
    ck_assert_int_eq(c->n, 4);
    ck_assert_str_eq(c->types[0], "ADDED");
    ck_assert_str_eq(c->types[1], "MODIFIED");
    ck_assert_str_eq(c->types[2], "BOOKMARK");
    ck_assert_str_eq(c->types[3], "DELETED");
    ck_assert_str_eq(c->rvs[3], "8");
}

START_TEST(split_everywhere)
{
    size_t len = strlen(STREAM);
    /* two chunks, split at every offset; then three chunks at many offset pairs */
    for (size_t i = 0; i <= len; i++) {
        struct kube_ndjson p;
        struct collect c = {0};
        struct vmop_err err = {0};
        kube_ndjson_init(&p, 1 << 16);
        ck_assert_int_eq(kube_ndjson_feed(&p, STREAM, i, on_line, &c, &err), VMOP_OK);
        ck_assert_int_eq(kube_ndjson_feed(&p, STREAM + i, len - i, on_line, &c, &err), VMOP_OK);
        ck_assert_int_eq(kube_ndjson_finish(&p, on_line, &c, &err), VMOP_OK);
        check_all(&c);
        kube_ndjson_free(&p);
    }
    for (size_t i = 0; i <= len; i += 3) {
        for (size_t j = i; j <= len; j += 7) {
            struct kube_ndjson p;
            struct collect c = {0};
            struct vmop_err err = {0};
            kube_ndjson_init(&p, 1 << 16);
            ck_assert_int_eq(kube_ndjson_feed(&p, STREAM, i, on_line, &c, &err), VMOP_OK);
            ck_assert_int_eq(kube_ndjson_feed(&p, STREAM + i, j - i, on_line, &c, &err), VMOP_OK);
            ck_assert_int_eq(kube_ndjson_feed(&p, STREAM + j, len - j, on_line, &c, &err), VMOP_OK);
            ck_assert_int_eq(kube_ndjson_finish(&p, on_line, &c, &err), VMOP_OK);
            check_all(&c);
            kube_ndjson_free(&p);
        }
    }
}
END_TEST

START_TEST(byte_by_byte_and_random)
{
    size_t len = strlen(STREAM);
    struct kube_ndjson p;
    struct collect c = {0};
    struct vmop_err err = {0};
    kube_ndjson_init(&p, 1 << 16);
    for (size_t i = 0; i < len; i++)
        ck_assert_int_eq(kube_ndjson_feed(&p, STREAM + i, 1, on_line, &c, &err), VMOP_OK);
    ck_assert_int_eq(kube_ndjson_finish(&p, on_line, &c, &err), VMOP_OK);
    check_all(&c);
    kube_ndjson_free(&p);

    srand(42);
    for (int round = 0; round < 500; round++) {
        struct collect c2 = {0};
        kube_ndjson_init(&p, 1 << 16);
        for (size_t off = 0; off < len;) {
            size_t n = 1 + (size_t)rand() % 40;
            if (n > len - off)
                n = len - off;
            ck_assert_int_eq(kube_ndjson_feed(&p, STREAM + off, n, on_line, &c2, &err), VMOP_OK);
            off += n;
        }
        ck_assert_int_eq(kube_ndjson_finish(&p, on_line, &c2, &err), VMOP_OK);
        check_all(&c2);
        kube_ndjson_free(&p);
    }
}
END_TEST

START_TEST(stop_and_cap)
{
    struct kube_ndjson p;
    struct collect c = {.stop_after = 2};
    struct vmop_err err = {0};
    kube_ndjson_init(&p, 1 << 16);
    ck_assert_int_eq(kube_ndjson_feed(&p, STREAM, strlen(STREAM), on_line, &c, &err),
                     VMOP_E_CANCELED);
    ck_assert_int_eq(c.n, 2);
    kube_ndjson_free(&p);

    /* a line over the cap fails, whether it arrives whole or in pieces */
    char big[300];
    memset(big, 'x', sizeof(big));
    big[sizeof(big) - 1] = '\n';
    kube_ndjson_init(&p, 100);
    ck_assert_int_eq(kube_ndjson_feed(&p, big, sizeof(big), on_line, &c, &err), VMOP_E_TOOBIG);
    kube_ndjson_free(&p);
    vmop_err_clear(&err);
    kube_ndjson_init(&p, 100);
    ck_assert_int_eq(kube_ndjson_feed(&p, big, 60, on_line, &c, &err), VMOP_OK);
    ck_assert_int_eq(kube_ndjson_feed(&p, big, 60, on_line, &c, &err), VMOP_E_TOOBIG);
    kube_ndjson_free(&p);
}
END_TEST

START_TEST(event_decode)
{
    enum kube_event_type t;
    cJSON *obj = NULL;
    struct kube_status st;
    struct vmop_err err = {0};
    const char *gone = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                       "\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource "
                       "version: 5 (100)\",\"reason\":\"Expired\",\"code\":410}}";
    ck_assert_int_eq(kube_watch_event_parse(gone, strlen(gone), &t, &obj, &st, &err), VMOP_E_GONE);
    ck_assert_str_eq(err.fault, "Expired");
    ck_assert_int_eq(err.http_status, 410);
    ck_assert_ptr_nonnull(strstr(err.msg, "too old resource version"));
    ck_assert_int_eq(st.code, 410);
    vmop_err_clear(&err);
    const char *e500 = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":\"Failure\","
                       "\"reason\":\"InternalError\",\"code\":500,\"message\":\"boom\"}}";
    ck_assert_int_eq(kube_watch_event_parse(e500, strlen(e500), &t, &obj, NULL, &err), VMOP_E_KUBE);
    vmop_err_clear(&err);
    ck_assert_int_eq(
        kube_watch_event_parse("{\"type\":\"WHAT\",\"object\":{}}", 29, &t, &obj, NULL, &err),
        VMOP_E_PROTO);
    vmop_err_clear(&err);
    ck_assert_int_eq(kube_watch_event_parse("{\"type\":", 8, &t, &obj, NULL, &err), VMOP_E_PROTO);
    vmop_err_clear(&err);
    ck_assert_int_eq(kube_watch_event_parse("{\"type\":\"ADDED\"}", 16, &t, &obj, NULL, &err),
                     VMOP_E_PROTO);
}
END_TEST

START_TEST(status_parse)
{
    struct kube_status st;
    struct vmop_err err = {0};
    const char *conflict =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"Operation cannot be fulfilled on virtualmachines.example.com \\\"vm1\\\": "
        "the object has been modified\",\"reason\":\"Conflict\",\"details\":{\"name\":\"vm1\","
        "\"group\":\"example.com\",\"kind\":\"virtualmachines\"},\"code\":409}";
    ck_assert_int_eq(kube_status_fail(409, conflict, strlen(conflict), "PUT x", &st, &err),
                     VMOP_E_CONFLICT);
    ck_assert_str_eq(err.fault, "Conflict");
    ck_assert_int_eq(err.http_status, 409);
    ck_assert_ptr_nonnull(strstr(err.msg, "the object has been modified"));
    ck_assert_str_eq(st.name, "vm1");
    ck_assert_str_eq(st.kind, "virtualmachines");

    vmop_err_clear(&err);
    const char *exists = "{\"kind\":\"Status\",\"reason\":\"AlreadyExists\",\"code\":409,"
                         "\"message\":\"x already exists\"}";
    ck_assert_int_eq(kube_status_fail(409, exists, strlen(exists), "POST", NULL, &err),
                     VMOP_E_EXISTS);
    vmop_err_clear(&err);
    const char *nf = "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"code\":404,\"message\":\"m\"}";
    ck_assert_int_eq(kube_status_fail(404, nf, strlen(nf), "GET", NULL, &err), VMOP_E_NOT_FOUND);
    vmop_err_clear(&err);
    const char *tmr = "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"code\":429,"
                      "\"details\":{\"retryAfterSeconds\":3}}";
    ck_assert_int_eq(kube_status_fail(429, tmr, strlen(tmr), "GET", &st, &err), VMOP_E_RATELIMIT);
    ck_assert_int_eq(st.retry_after_seconds, 3);
    ck_assert_ptr_nonnull(strstr(err.msg, "without a message"));

    /* 422 with causes, more than we keep */
    char inv[8192];
    int n = snprintf(inv, sizeof(inv),
                     "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Invalid\",\"code\":"
                     "422,\"message\":\"VirtualMachine.example.com \\\"vm0\\\" is invalid\","
                     "\"details\":{\"causes\":[");
    for (int i = 0; i < 20; i++)
        n += snprintf(inv + n, sizeof(inv) - (size_t)n,
                      "%s{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: %d\","
                      "\"field\":\"spec.f%d\"}",
                      i ? "," : "", i, i);
    snprintf(inv + n, sizeof(inv) - (size_t)n, "]}}");
    vmop_err_clear(&err);
    ck_assert_int_eq(kube_status_fail(422, inv, strlen(inv), "POST", &st, &err), VMOP_E_KUBE);
    ck_assert_str_eq(err.fault, "Invalid");
    ck_assert_uint_eq(st.n_causes, KUBE_MAX_CAUSES);
    ck_assert_uint_eq(st.n_causes_total, 20);
    ck_assert_str_eq(st.causes[3].field, "spec.f3");
    ck_assert_str_eq(st.causes[3].reason, "FieldValueInvalid");

    /* not a Status: a proxy's HTML page */
    vmop_err_clear(&err);
    ck_assert_int_eq(kube_status_fail(502, "<html>bad gateway</html>", 24, "GET /api", &st, &err),
                     VMOP_E_HTTP);
    ck_assert_int_eq(err.http_status, 502);
    ck_assert_ptr_nonnull(strstr(err.msg, "GET /api"));
    vmop_err_clear(&err);
    ck_assert_int_eq(kube_status_fail(404, NULL, 0, "GET /x", NULL, &err), VMOP_E_NOT_FOUND);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kube_watch");
    TCase *tc = tcase_create("watch");
    tcase_add_test(tc, split_everywhere);
    tcase_add_test(tc, byte_by_byte_and_random);
    tcase_add_test(tc, stop_and_cap);
    tcase_add_test(tc, event_decode);
    tcase_add_test(tc, status_parse);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return vmop_check_run(suite());
}
