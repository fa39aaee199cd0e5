/* kube_internal.h: what kube_client.c (transport) shares with kube_ops.c (REST calls) and
 * kube_watch.c (streams). Not a public API.
 */
#ifndef KUBE_INTERNAL_H
#define KUBE_INTERNAL_H

#include "kube_client.h"
#include "vbuf.h"

/* Streaming body consumer: called from the curl write callback with the HTTP status known.
 * Returns 0 to go on; non-zero aborts the transfer (the rc it stored is reported). */
struct kube_sink {
    int (*fn)(void *ud, long http_status, const char *data, size_t n);
    void *ud;
};

struct kube_http_req {
    const char *method; /* "GET", "POST", ... */
    const char *path;   /* path + query, starting with '/' */
    const char *ctype;  /* Content-Type of body, or NULL */
    const char *body;   /* may be NULL */
    size_t body_len;
    long timeout_ms;   /* 0: the client's default; < 0: none (watch: the caller bounds it) */
    const int *cancel; /* abort when *cancel != 0 */
    int no_retry;      /* watches */
};

/* Sends req (with retries, see kube_client.h); each attempt first takes a token of the client's
 * rate limit (a watch: its one attempt; the stream that follows is not paced). On VMOP_OK,
 * *ret_status is the final HTTP status and, without a sink, ret_body holds the body (capped by the
 * client's max_response). Transport failures, cancellation and caps are errors; HTTP error statuses
 * are not (the caller parses the Status). */
vmop_rc kube_http(struct kube_client *c, const struct kube_http_req *req, struct kube_sink *sink,
                  long *ret_status, struct vbuf *ret_body, struct vmop_err *err);

size_t kube_client_max_response(const struct kube_client *c);

#endif
