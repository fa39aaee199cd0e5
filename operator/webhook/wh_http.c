/* wh_http.c: HTTP/1.1 request head parsing and response heads (see wh_http.h). Pure.
 *
 * Strict where a lenient parser would allow request smuggling behind a proxy: conflicting
 * Content-Length values, a Content-Length that is not all digits, obs-fold continuation lines and
 * a Transfer-Encoding (bodies are only taken with a Content-Length) are refused.
 */
#include "wh_http.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

size_t wh_http_head_len(const char *buf, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++) {
        if (buf[i] != '\n')
            continue;
        if (buf[i + 1] == '\n')
            return i + 2;
        if (buf[i + 1] == '\r' && i + 2 < len && buf[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

static int is_tchar(unsigned char c)
{
    return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* [p, end) without leading and trailing blanks */
static void trim(const char **p, const char **end)
{
    while (*p < *end && (**p == ' ' || **p == '\t'))
        (*p)++;
    while (*end > *p && ((*end)[-1] == ' ' || (*end)[-1] == '\t' || (*end)[-1] == '\r'))
        (*end)--;
}

static int token_eq(const char *p, const char *end, const char *s)
{
    size_t n = strlen(s);
    return (size_t)(end - p) == n && strncasecmp(p, s, n) == 0;
}

/* Does the comma-separated list [p, end) contain token s (case-insensitive)? */
static int list_has(const char *p, const char *end, const char *s)
{
    while (p < end) {
        const char *c = memchr(p, ',', (size_t)(end - p));
        const char *e = c ? c : end;
        const char *a = p, *b = e;
        trim(&a, &b);
        if (token_eq(a, b, s))
            return 1;
        p = c ? c + 1 : end;
    }
    return 0;
}

static vmop_rc bad(int *ret_status, int status, struct vmop_err *err, const char *what)
{
    *ret_status = status;
    return vmop_fail(err, VMOP_E_INVALID, "HTTP request: %s", what);
}

static vmop_rc parse_request_line(const char *p, const char *end, struct wh_http_req *r,
                                  int *ret_status, struct vmop_err *err)
{
    const char *sp1 = memchr(p, ' ', (size_t)(end - p)), *sp2, *q, *target_end;
    size_t n;

    if (!sp1 || sp1 == p || (size_t)(sp1 - p) >= sizeof(r->method))
        return bad(ret_status, 400, err, "bad request line");
    for (const char *c = p; c < sp1; c++)
        if (!is_tchar((unsigned char)*c))
            return bad(ret_status, 400, err, "bad method");
    memcpy(r->method, p, (size_t)(sp1 - p));
    r->method[sp1 - p] = '\0';
    sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1));
    if (!sp2 || sp2 == sp1 + 1)
        return bad(ret_status, 400, err, "bad request line");
    if ((size_t)(sp2 - sp1 - 1) >= WH_MAX_PATH)
        return bad(ret_status, 414, err, "request target too long");
    if (sp1[1] != '/')
        return bad(ret_status, 400, err, "request target is not an absolute path");
    for (const char *c = sp1 + 1; c < sp2; c++)
        if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f)
            return bad(ret_status, 400, err, "bad character in request target");
    q = memchr(sp1 + 1, '?', (size_t)(sp2 - sp1 - 1));
    target_end = q ? q : sp2;
    n = (size_t)(target_end - sp1 - 1);
    memcpy(r->path, sp1 + 1, n);
    r->path[n] = '\0';
    if ((size_t)(end - sp2 - 1) != 8 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0)
        return bad(ret_status, 505, err, "not HTTP/1.x");
    if (sp2[8] != '0' && sp2[8] != '1')
        return bad(ret_status, 505, err, "not HTTP/1.0 or HTTP/1.1");
    r->minor = sp2[8] - '0';
    r->keep_alive = r->minor == 1;
    return VMOP_OK;
}

static vmop_rc parse_length(const char *v, const char *vend, struct wh_http_req *r, int *ret_status,
                            struct vmop_err *err)
{
    long long n = 0;
    if (v == vend)
        return bad(ret_status, 400, err, "empty Content-Length");
    for (const char *c = v; c < vend; c++) {
        if (*c < '0' || *c > '9')
            return bad(ret_status, 400, err, "Content-Length is not a number");
        if (n > (1LL << 40))
            return bad(ret_status, 413, err, "Content-Length too large");
        n = n * 10 + (*c - '0');
    }
    if (r->content_length >= 0 && r->content_length != n)
        return bad(ret_status, 400, err, "conflicting Content-Length headers");
    r->content_length = n;
    return VMOP_OK;
}

static void parse_ctype(const char *v, const char *vend, struct wh_http_req *r)
{
    const char *semi = memchr(v, ';', (size_t)(vend - v));
    const char *e = semi ? semi : vend;
    size_t n;
    trim(&v, &e);
    n = (size_t)(e - v);
    if (n >= sizeof(r->content_type))
        n = sizeof(r->content_type) - 1;
    for (size_t i = 0; i < n; i++)
        r->content_type[i] = (char)tolower((unsigned char)v[i]);
    r->content_type[n] = '\0';
}

vmop_rc wh_http_parse(const char *buf, size_t len, struct wh_http_req *ret, int *ret_status,
                      struct vmop_err *err)
{
    const char *p = buf, *end = buf + len;
    unsigned n_headers = 0;
    int conn_close = 0, conn_keep = 0;
    vmop_rc rc;

    memset(ret, 0, sizeof(*ret));
    ret->content_length = -1;
    *ret_status = 400;
    if (len > WH_MAX_HEAD)
        return bad(ret_status, 431, err, "head too large");
    if (memchr(buf, '\0', len))
        return bad(ret_status, 400, err, "NUL byte in head");
    /* RFC 9112 2.2: ignore at least one empty line before the request line */
    while (p < end && (*p == '\r' || *p == '\n'))
        p++;
    for (int first = 1; p < end; first = 0) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end, *colon, *name_end, *v, *vend;
        if (le > p && le[-1] == '\r')
            le--;
        if (le == p)
            break; /* the blank line */
        if (first) {
            rc = parse_request_line(p, le, ret, ret_status, err);
            if (rc)
                return rc;
            p = nl ? nl + 1 : end;
            continue;
        }
        if (++n_headers > WH_MAX_HEADERS)
            return bad(ret_status, 431, err, "too many header lines");
        if (*p == ' ' || *p == '\t')
            return bad(ret_status, 400, err, "obsolete line folding");
        colon = memchr(p, ':', (size_t)(le - p));
        if (!colon || colon == p)
            return bad(ret_status, 400, err, "header line without a name");
        name_end = colon;
        for (const char *c = p; c < name_end; c++)
            if (!is_tchar((unsigned char)*c))
                return bad(ret_status, 400, err, "bad header name");
        v = colon + 1;
        vend = le;
        trim(&v, &vend);
        if (token_eq(p, name_end, "Content-Length")) {
            rc = parse_length(v, vend, ret, ret_status, err);
            if (rc)
                return rc;
        } else if (token_eq(p, name_end, "Transfer-Encoding")) {
            ret->chunked = 1;
        } else if (token_eq(p, name_end, "Connection")) {
            conn_close |= list_has(v, vend, "close");
            conn_keep |= list_has(v, vend, "keep-alive");
        } else if (token_eq(p, name_end, "Expect")) {
            if (!token_eq(v, vend, "100-continue")) {
                *ret_status = 417;
                return vmop_fail(err, VMOP_E_INVALID, "HTTP request: unknown expectation");
            }
            ret->expect_continue = 1;
        } else if (token_eq(p, name_end, "Content-Type")) {
            parse_ctype(v, vend, ret);
        }
        p = nl ? nl + 1 : end;
    }
    if (!ret->method[0])
        return bad(ret_status, 400, err, "no request line");
    if (ret->chunked) {
        *ret_status = 501;
        return vmop_fail(err, VMOP_E_INVALID, "HTTP request: Transfer-Encoding is not supported");
    }
    if (conn_close)
        ret->keep_alive = 0;
    else if (conn_keep)
        ret->keep_alive = 1;
    *ret_status = 200;
    return VMOP_OK;
}

const char *wh_http_reason(int status)
{
    switch (status) {
    case 100:
        return "Continue";
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 411:
        return "Length Required";
    case 413:
        return "Payload Too Large";
    case 414:
        return "URI Too Long";
    case 415:
        return "Unsupported Media Type";
    case 417:
        return "Expectation Failed";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 503:
        return "Service Unavailable";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Unknown";
    }
}

void wh_http_head_add(struct vbuf *b, int status, const char *ctype, size_t body_len,
                      int keep_alive)
{
    vbuf_addf(b, "HTTP/1.1 %d %s\r\n", status, wh_http_reason(status));
    if (ctype)
        vbuf_addf(b, "Content-Type: %s\r\n", ctype);
    vbuf_addf(b, "Content-Length: %zu\r\nConnection: %s\r\n\r\n", body_len,
              keep_alive ? "keep-alive" : "close");
}
