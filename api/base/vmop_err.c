/* vmop_err.c: error codes, their fixed texts, and the sticky-first-message recorder. */
#include "vmop_err.h"

#include <stdio.h>
#include <string.h>

const char *vmop_rc_str(vmop_rc rc)
{
    switch (rc) {
    case VMOP_OK:
        return "no error";
    case VMOP_E_INVALID:
        return "invalid argument or input";
    case VMOP_E_NOMEM:
        return "out of memory";
    case VMOP_E_TOOBIG:
        return "input too large";
    case VMOP_E_NOT_FOUND:
        return "not found";
    case VMOP_E_EXISTS:
        return "already exists";
    case VMOP_E_CONFLICT:
        return "conflict";
    case VMOP_E_TIMEOUT:
        return "timed out";
    case VMOP_E_TRANSPORT:
        return "transport error";
    case VMOP_E_TLS:
        return "TLS verification failed";
    case VMOP_E_AUTH:
        return "authentication failed";
    case VMOP_E_PROTO:
        return "protocol error";
    case VMOP_E_FAULT:
        return "vSphere fault";
    case VMOP_E_HTTP:
        return "HTTP error";
    case VMOP_E_KUBE:
        return "Kubernetes API error";
    case VMOP_E_INTERNAL:
        return "internal error";
    case VMOP_E_CANCELED:
        return "canceled";
    case VMOP_E_UNSUPPORTED:
        return "unsupported";
    case VMOP_E_GONE:
        return "resource version too old";
    case VMOP_E_RATELIMIT:
        return "rate limited";
    }
    return "unknown error code";
}

vmop_rc vmop_failv(struct vmop_err *err, vmop_rc rc, const char *fmt, va_list ap)
{
    if (!err || err->rc != VMOP_OK)
        return rc;
    err->rc = rc;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    /* One line only: a peer-supplied newline must not forge log lines. */
    for (char *p = err->msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return rc;
}

vmop_rc vmop_fail(struct vmop_err *err, vmop_rc rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmop_failv(err, rc, fmt, ap);
    va_end(ap);
    return rc;
}

vmop_rc vmop_fail_fault(struct vmop_err *err, vmop_rc rc, const char *fault, int http_status,
                        const char *fmt, ...)
{
    va_list ap;
    if (!err || err->rc != VMOP_OK)
        return rc;
    va_start(ap, fmt);
    vmop_failv(err, rc, fmt, ap);
    va_end(ap);
    err->http_status = http_status;
    snprintf(err->fault, sizeof(err->fault), "%s", fault ? fault : "");
    return rc;
}

void vmop_err_clear(struct vmop_err *err)
{
    if (err)
        memset(err, 0, sizeof(*err));
}

int vmop_err_is_fault(const struct vmop_err *err, const char *fault)
{
    return err && err->rc != VMOP_OK && fault && strcmp(err->fault, fault) == 0;
}
