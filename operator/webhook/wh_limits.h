/* wh_limits.h: every cap of the webhook server, with its reason (one place, tested both sides).
 *
 * Owns: sizes, counts and timeouts of operator/webhook/. Not here: the values chosen at run time
 * (struct wh_server_config), which default to these.
 */
#ifndef VMOP_WH_LIMITS_H
#define VMOP_WH_LIMITS_H

/* A request body. The API server refuses objects over ~3 MiB (etcd's 1.5 MiB value limit plus
 * its own request limit); an AdmissionReview carries object and oldObject, a ConversionReview a
 * list, so 3 MiB covers what a single-object review needs; larger is HTTP 413. */
#define WH_MAX_BODY ((size_t)3 << 20)
/* The request line plus headers (the API server sends a dozen short ones); larger is HTTP 431. */
#define WH_MAX_HEAD ((size_t)16 << 10)
/* Header lines in one request head. */
#define WH_MAX_HEADERS 64
/* A registered path or a request target (query included); longer is HTTP 414. */
#define WH_MAX_PATH 256
/* A response body we build (converted objects may grow: annotations keep fields an older
 * version cannot hold). */
#define WH_MAX_RESPONSE ((size_t)16 << 20)
/* Concurrent connections (each has a thread and up to WH_MAX_BODY of buffers). */
#define WH_MAX_CONNS 64
/* Handlers registered on one server (admission + conversion paths). */
#define WH_MAX_HANDLERS 32
/* Reading one request (TLS handshake or head and body), from its first byte: a total deadline,
 * so a client that trickles bytes is cut (the API server's own webhook timeout is 10 s by
 * default, 30 s at most). */
#define WH_READ_TIMEOUT_MS 10000
/* Writing one response. */
#define WH_WRITE_TIMEOUT_MS 10000
/* A kept-alive connection waiting for its next request. */
#define WH_IDLE_TIMEOUT_MS 60000
/* After refusing a request (413, 4xx) we read and drop what the client still sends for at most
 * this long before closing, so it sees our answer instead of a reset. */
#define WH_LINGER_MS 1000
/* tls.crt / tls.key larger than this are refused (a chain of a few certificates is ~10 KiB). */
#define WH_MAX_CERT_FILE ((size_t)1 << 20)
/* AdmissionReview fields: userInfo.groups entries kept, warnings kept, and their length. */
#define WH_MAX_GROUPS      256
#define WH_MAX_WARNINGS    16
#define WH_MAX_WARNING_LEN 256
/* A status message in a response (the API server shows it to kubectl users). */
#define WH_MAX_MESSAGE ((size_t)8 << 10)
/* Nesting depth the JSON Patch differ descends. */
#define WH_MAX_PATCH_DEPTH 128

#endif
