/* fuzz_kube_status.c: libFuzzer target for Kubernetes Status error bodies (kube_status.h).
 *
 * Input: bytes 0-1 pick the HTTP status (0 or 100..599), the rest is the body. kube_status_fail
 * must always report a described failure and fill a kube_status whose strings are NUL-terminated
 * one-liners with at most KUBE_MAX_CAUSES causes kept; kube_status_from_json on the parsed body
 * must agree with it about whether the body is a Status.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "kube_status.h"

static void check_line(const char *s, size_t cap)
{
    FUZZ_REQUIRE(memchr(s, '\0', cap) != NULL);
    FUZZ_REQUIRE(!strchr(s, '\n') && !strchr(s, '\r'));
}

static void check_status(const struct kube_status *st)
{
    check_line(st->status, sizeof(st->status));
    check_line(st->reason, sizeof(st->reason));
    check_line(st->message, sizeof(st->message));
    check_line(st->name, sizeof(st->name));
    check_line(st->group, sizeof(st->group));
    check_line(st->kind, sizeof(st->kind));
    FUZZ_REQUIRE(st->n_causes <= KUBE_MAX_CAUSES);
    FUZZ_REQUIRE(st->n_causes <= st->n_causes_total);
    FUZZ_REQUIRE(st->retry_after_seconds >= 0);
    for (size_t i = 0; i < st->n_causes; i++) {
        check_line(st->causes[i].reason, sizeof(st->causes[i].reason));
        check_line(st->causes[i].field, sizeof(st->causes[i].field));
        check_line(st->causes[i].message, sizeof(st->causes[i].message));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kube_status st, st2;
    struct vmop_err err = {0};
    int http;
    vmop_rc rc;
    cJSON *obj;

    if (size < 2)
        return 0;
    http = (data[0] | data[1] << 8) % 501;
    http = http == 500 ? 0 : http + 100; /* 0 (watch ERROR events) or 100..599 */
    data += 2;
    size -= 2;

    memset(&st, 0xa5, sizeof(st));
    rc = kube_status_fail(http, (const char *)data, size, "GET /api/v1/fuzz", &st, &err);
    FUZZ_REQUIRE(rc != VMOP_OK);
    fuzz_check_err(rc, &err);
    FUZZ_REQUIRE(err.rc == rc);
    check_status(&st);
    FUZZ_REQUIRE(kube_status_rc(http ? http : st.code, st.reason) != VMOP_OK);

    obj = size ? cJSON_ParseWithLength((const char *)data, size) : NULL;
    if (obj && kube_status_from_json(obj, &st2) == VMOP_OK) {
        check_status(&st2);
        FUZZ_REQUIRE(strcmp(st2.message, st.message) == 0);
        FUZZ_REQUIRE(strcmp(st2.reason, err.fault) == 0); /* a reason (< 64) fits in fault */
    }
    cJSON_Delete(obj);
    return 0;
}
