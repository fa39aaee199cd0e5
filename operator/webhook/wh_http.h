/* wh_http.h: HTTP/1.1 request heads, the pure part of the webhook server (no I/O).
 *
 * Owns: finding the end of a head, parsing the request line and the headers the server acts on
 * (Content-Length, Transfer-Encoding, Connection, Expect, Content-Type), and formatting response
 * heads. Not here: sockets, TLS, bodies (wh_server.c).
 * Parses network input: fuzzed by tests/fuzz/fuzz_wh_http.c.
 */
#ifndef VMOP_WH_HTTP_H
#define VMOP_WH_HTTP_H

#include <stddef.h>

#include "vbuf.h"
#include "vmop_err.h"
#include "wh_limits.h"

struct wh_http_req {
    char method[16];          /* "POST" */
    char path[WH_MAX_PATH];   /* the request target without its query ("?timeout=10s") */
    int minor;                /* HTTP/1.<minor>: 0 or 1 */
    long long content_length; /* -1 when absent */
    int chunked;              /* a Transfer-Encoding header was present (we do not take it) */
    int keep_alive;           /* 1.1 without "Connection: close", or 1.0 with keep-alive */
    int expect_continue;      /* "Expect: 100-continue" */
    char content_type[128];   /* media type, lower case, parameters dropped; "" when absent */
};

/* Length of the head (through the blank line) when buf holds a complete one, else 0.
 * Accepts CRLF CRLF and, leniently, LF LF. */
size_t wh_http_head_len(const char *buf, size_t len);

/* Parses a complete head (len from wh_http_head_len). On failure *ret_status is the HTTP status
 * to answer with (400, 414, 431, 501, 505) and err says why; *ret is then partly filled. */
vmop_rc wh_http_parse(const char *buf, size_t len, struct wh_http_req *ret, int *ret_status,
                      struct vmop_err *err);

/* Reason phrase for a status ("OK", "Payload Too Large"); "Unknown" for others. */
const char *wh_http_reason(int status);

/* Appends a response head: status line, Content-Type (when ctype), Content-Length, Connection
 * (close unless keep_alive) and the blank line. */
void wh_http_head_add(struct vbuf *b, int status, const char *ctype, size_t body_len,
                      int keep_alive);

#endif
