/* vmop_err.h: the one error-reporting discipline used by every vmop module.
 *
 * Every fallible function returns a vmop_rc and, on failure, fills a caller-owned struct vmop_err
 * with a human message. The first message recorded sticks (like curl's failf): an outer layer adds
 * nothing over the innermost cause unless it clears the error first. The struct is fixed-size and
 * holds no pointers, so there is nothing to free and it can live on the stack.
 *
 * Numbers are stable: new codes go last; a retired code keeps its number.
 * Messages never contain secrets: callers must not format passwords, tokens or user data into them.
 */
#ifndef VMOP_ERR_H
#define VMOP_ERR_H

#include <stdarg.h>
#include <stddef.h>

typedef enum vmop_rc {
    VMOP_OK = 0,
    VMOP_E_INVALID = 1,      /* bad argument or input that does not parse */
    VMOP_E_NOMEM = 2,        /* allocation failed */
    VMOP_E_TOOBIG = 3,       /* input over a documented size cap */
    VMOP_E_NOT_FOUND = 4,    /* expected outcome: the thing asked for does not exist */
    VMOP_E_EXISTS = 5,       /* expected outcome: it already exists */
    VMOP_E_CONFLICT = 6,     /* optimistic concurrency failure (HTTP 409, resourceVersion) */
    VMOP_E_TIMEOUT = 7,      /* a bounded wait ran out */
    VMOP_E_TRANSPORT = 8,    /* connection, DNS, reset, HTTP transport failure */
    VMOP_E_TLS = 9,          /* certificate or thumbprint verification failed */
    VMOP_E_AUTH = 10,        /* credentials refused (InvalidLogin, 401 on login) */
    VMOP_E_PROTO = 11,       /* the peer answered something we cannot understand */
    VMOP_E_FAULT = 12,       /* a vSphere fault or task error: see err->fault */
    VMOP_E_HTTP = 13,        /* an HTTP error status: see err->http_status and err->fault */
    VMOP_E_KUBE = 14,        /* a Kubernetes Status error: see err->fault (Status reason) */
    VMOP_E_INTERNAL = 15,    /* a bug: an invariant did not hold */
    VMOP_E_CANCELED = 16,    /* the operation was canceled (shutdown, CancelWaitForUpdates) */
    VMOP_E_UNSUPPORTED = 17, /* the peer or this build does not support the request */
    VMOP_E_GONE = 18,        /* the resource version is too old (HTTP 410) */
    VMOP_E_RATELIMIT = 19,   /* the peer asked us to slow down (HTTP 429) */
} vmop_rc;

#define VMOP_ERR_MSG_MAX   512
#define VMOP_ERR_FAULT_MAX 96

struct vmop_err {
    vmop_rc rc;                     /* VMOP_OK while nothing failed */
    int http_status;                /* HTTP status that carried the error, or 0 */
    char fault[VMOP_ERR_FAULT_MAX]; /* vSphere fault type ("InvalidPowerState"), Kubernetes Status
                                     * reason ("AlreadyExists"), or "" */
    char msg[VMOP_ERR_MSG_MAX];     /* one line, no trailing newline, never a secret */
};

/* Static text for a code; never NULL. */
const char *vmop_rc_str(vmop_rc rc);

/* Records rc and a formatted message in err unless err already holds a failure (then only the
 * return value is rc). err may be NULL. Returns rc so callers can `return vmop_fail(...)`. */
vmop_rc vmop_fail(struct vmop_err *err, vmop_rc rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
vmop_rc vmop_failv(struct vmop_err *err, vmop_rc rc, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Same, and also records a fault type / Status reason and HTTP status. */
vmop_rc vmop_fail_fault(struct vmop_err *err, vmop_rc rc, const char *fault, int http_status,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Resets err to "no error" (before a retry whose failure must be reported afresh). */
void vmop_err_clear(struct vmop_err *err);

/* True when err holds a failure with this fault type (exact match). */
int vmop_err_is_fault(const struct vmop_err *err, const char *fault);

#endif
