/* wh_server.h: the webhook server: HTTPS (OpenSSL) with a certificate reloaded from files,
 * HTTP/1.1 with keep-alive, and POST paths routed to admission or conversion handlers.
 *
 * Owns: the listening socket, one thread per connection (at most max_conns), the per-request
 * deadlines and size caps, the handler table, and turning handler results into review
 * responses. Not here: certificates (wh_tls.c), HTTP heads (wh_http.c), review envelopes
 * (wh_review.c), what a handler decides (the VM mutation/validation and conversion modules).
 *
 * Every replica runs one (webhooks are not leader-only): handlers must read only caches and
 * their own state, and be bounded in time (the API server gives up after the webhook's
 * timeoutSeconds, 10 s by default).
 *
 * Threads: handlers run on connection threads, several at once: they must be thread-safe.
 * wh_server_add_*() may be called at any time (a request sees the table of its arrival).
 * The process must ignore SIGPIPE (vmop_run does).
 *
 * Failures: a handler returning a failure becomes a denial with status code 500 (reason
 * InternalError) for admission, result Failure for conversion, and one warning log line; a body
 * that is not the expected review is HTTP 400, so the API server applies the webhook's
 * failurePolicy.
 */
#ifndef VMOP_WH_SERVER_H
#define VMOP_WH_SERVER_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "vmop_err.h"
#include "wh_review.h"

/* An admission handler. req and everything it points to are borrowed for the call. resp comes
 * initialised as "allowed" (wh_admission_response_init); the handler denies, warns or sets a
 * patch with the wh_admission_* helpers (the server then owns and frees what it put there).
 * On a failure return the server discards resp and denies with err->msg. */
typedef vmop_rc (*wh_admit_fn)(void *ud, const struct wh_admission_request *req,
                               struct wh_admission_response *resp, struct vmop_err *err);

/* A conversion handler, called once per object of a ConversionReview. obj (borrowed, do not
 * modify) is one object; *ret must be set on VMOP_OK to a new object (owned by the server, which
 * frees it) whose apiVersion is desired_api_version (the server checks). A failure fails the
 * whole review with err->msg. */
typedef vmop_rc (*wh_convert_fn)(void *ud, const cJSON *obj, const char *desired_api_version,
                                 cJSON **ret, struct vmop_err *err);

struct wh_server_config {
    const char *addr;     /* "HOST:PORT", ":PORT" (all addresses), "[::]:PORT"; port 0: any */
    const char *cert_dir; /* holds tls.crt and tls.key */
    size_t max_body;      /* 0: WH_MAX_BODY; larger bodies get HTTP 413 */
    unsigned max_conns;   /* 0: WH_MAX_CONNS; more wait in the kernel's accept queue */
    int read_timeout_ms;  /* 0: WH_READ_TIMEOUT_MS (handshake, or head + body of a request) */
    int write_timeout_ms; /* 0: WH_WRITE_TIMEOUT_MS */
    int idle_timeout_ms;  /* 0: WH_IDLE_TIMEOUT_MS (kept-alive connection between requests) */
};

struct wh_server_stats {
    unsigned long requests;    /* answered with a review (any outcome) */
    unsigned long http_errors; /* answered with a 4xx/5xx status */
    unsigned long timeouts;    /* connections cut at a deadline */
    unsigned long accepted;    /* connections accepted (each one TLS handshake) */
    unsigned long cert_reloads, cert_reload_failures;
    unsigned active; /* connections open now */
};

struct wh_server;

/* Loads the certificate, binds addr and starts serving (no handlers yet: every path is 404).
 * *ret (stop with wh_server_stop) is set on VMOP_OK only. Fails when the certificate does not
 * load or the address cannot be bound. */
vmop_rc wh_server_start(const struct wh_server_config *cfg, struct wh_server **ret,
                        struct vmop_err *err);

/* Routes POST path (exact match, query ignored; at most WH_MAX_PATH - 1 bytes) to a handler. ud
 * is borrowed and must outlive the server. VMOP_E_EXISTS when the path is taken, VMOP_E_TOOBIG
 * past WH_MAX_HANDLERS. */
vmop_rc wh_server_add_admission(struct wh_server *s, const char *path, wh_admit_fn fn, void *ud,
                                struct vmop_err *err);
vmop_rc wh_server_add_conversion(struct wh_server *s, const char *path, wh_convert_fn fn, void *ud,
                                 struct vmop_err *err);

int wh_server_port(const struct wh_server *s); /* the bound port */
void wh_server_stats(struct wh_server *s, struct wh_server_stats *ret);

/* Stops accepting, cuts open connections, waits for running handlers to return, frees.
 * NULL-safe. */
void wh_server_stop(struct wh_server *s);

#endif
