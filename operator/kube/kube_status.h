/* kube_status.h: Kubernetes meta/v1 Status error objects -> struct vmop_err (+ optional details).
 *
 * Mapping of the error code (err->rc): 404 -> VMOP_E_NOT_FOUND, 409 AlreadyExists -> VMOP_E_EXISTS,
 * other 409 -> VMOP_E_CONFLICT, 410 -> VMOP_E_GONE, 429 -> VMOP_E_RATELIMIT, 401 -> VMOP_E_AUTH,
 * any other Status -> VMOP_E_KUBE; a non-Status error body -> VMOP_E_HTTP. err->fault is the Status
 * reason ("NotFound", "Invalid", ...), err->http_status the HTTP status, err->msg the Status
 * message.
 */
#ifndef KUBE_STATUS_H
#define KUBE_STATUS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "vmop_err.h"

#define KUBE_MAX_CAUSES 16

struct kube_status_cause {
    char reason[64]; /* "FieldValueInvalid", ... */
    char field[256]; /* "spec.cpu" */
    char message[256];
};

/* Fixed size, no pointers: lives on the stack, nothing to free. Strings are truncated to fit. */
struct kube_status {
    int code;        /* Status.code, or the HTTP status when absent */
    char status[16]; /* "Failure" / "Success" */
    char reason[64];
    char message[512];
    char name[256];          /* details.name */
    char group[256];         /* details.group */
    char kind[64];           /* details.kind */
    int retry_after_seconds; /* details.retryAfterSeconds */
    size_t n_causes;         /* causes kept (<= KUBE_MAX_CAUSES) */
    size_t n_causes_total;   /* causes the server sent */
    struct kube_status_cause causes[KUBE_MAX_CAUSES];
};

/* Fills st from a parsed object. VMOP_E_PROTO when obj is not kind Status. */
vmop_rc kube_status_from_json(const cJSON *obj, struct kube_status *st);

/* The rc for an HTTP code and Status reason (reason may be NULL). */
vmop_rc kube_status_rc(int http_status, const char *reason);

/* Records the failure of a request answered with http_status and body (maybe not a Status) in err
 * and, when ret_st is non-NULL, the details in *ret_st. what names the request for the message
 * when the body is not a Status ("GET /api/v1/..."). Returns the rc. */
vmop_rc kube_status_fail(int http_status, const char *body, size_t len, const char *what,
                         struct kube_status *ret_st, struct vmop_err *err);

#endif
