/* wh_conn.c: one webhook connection: TLS handshake, HTTP/1.1 requests with keep-alive, and the
 * deadlines (see wh_server.h). Runs on its own thread and frees the connection at the end.
 *
 * Deadlines are totals, not per read: the handshake, and the head and body of each request, must
 * arrive within read_ms of their first byte, so a client sending a byte a second is cut like one
 * sending nothing. The first request must begin within read_ms of the handshake; a kept-alive
 * connection may then sit idle for idle_ms between requests.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/socket.h>

#include <openssl/err.h>

#include "wh_http.h"
#include "vmop_clock.h"
#include "wh_internal.h"

enum io_res { IO_OK = 0, IO_EOF = -1, IO_ERR = -2, IO_TIMEOUT = -3 };

/* Waits for fd to become ready for what OpenSSL asked (ssl_err), until deadline. */
static enum io_res wait_io(struct wh_conn *c, int ssl_err, long long deadline)
{
    struct pollfd p = {.fd = c->fd, .events = ssl_err == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN};
    for (;;) {
        long long left = deadline - vmop_mono_ms();
        int n;
        if (left <= 0)
            return IO_TIMEOUT;
        n = poll(&p, 1, left > 1000 ? 1000 : (int)left);
        if (n > 0)
            return IO_OK; /* readable, or HUP/ERR: the next SSL call reports it */
        if (n < 0 && errno != EINTR)
            return IO_ERR;
    }
}

static enum io_res handshake(struct wh_conn *c, long long deadline)
{
    for (;;) {
        int r = SSL_accept(c->ssl), e;
        enum io_res w;
        if (r == 1)
            return IO_OK;
        e = SSL_get_error(c->ssl, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
            return IO_ERR; /* a client that does not trust us, a port scanner: not logged */
        if ((w = wait_io(c, e, deadline)) != IO_OK)
            return w;
    }
}

/* Reads at most n bytes; *ret_n > 0 on IO_OK. */
static enum io_res conn_read(struct wh_conn *c, char *p, size_t n, size_t *ret_n,
                             long long deadline)
{
    for (;;) {
        int e;
        enum io_res w;
        if (SSL_read_ex(c->ssl, p, n, ret_n) == 1)
            return IO_OK;
        e = SSL_get_error(c->ssl, 0);
        if (e == SSL_ERROR_ZERO_RETURN)
            return IO_EOF;
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
            return IO_ERR;
        if ((w = wait_io(c, e, deadline)) != IO_OK)
            return w;
    }
}

static enum io_res conn_write(struct wh_conn *c, const char *p, size_t n, long long deadline)
{
    while (n > 0) {
        size_t done = 0;
        int e;
        enum io_res w;
        if (SSL_write_ex(c->ssl, p, n, &done) == 1) {
            p += done;
            n -= done;
            continue;
        }
        e = SSL_get_error(c->ssl, 0);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
            return IO_ERR;
        if ((w = wait_io(c, e, deadline)) != IO_OK)
            return w;
    }
    return IO_OK;
}

/* Sends a response (head + body) in one write: a head and a body written apart leave the body's
 * small segment waiting for the client's delayed ACK of the head (Nagle), 40 ms a request. */
static enum io_res respond(struct wh_conn *c, int status, const char *ctype, const char *body,
                           size_t len, int keep_alive)
{
    struct vbuf msg;
    enum io_res r;
    long long deadline = vmop_mono_ms() + c->s->write_ms;
    vbuf_init(&msg, 1024 + len);
    wh_http_head_add(&msg, status, ctype, len, keep_alive);
    if (len)
        vbuf_add(&msg, body, len);
    r = vbuf_error(&msg) ? IO_ERR : conn_write(c, msg.data, msg.len, deadline);
    vbuf_free(&msg);
    return r;
}

/* After refusing a request whose body we did not read: answer, then drop what the client still
 * sends for up to WH_LINGER_MS so that it reads our answer instead of a connection reset. */
static void refuse(struct wh_conn *c, int status, const char *msg)
{
    char junk[4096];
    size_t n;
    long long deadline;
    struct vbuf b;

    vbuf_init(&b, 1024);
    vbuf_addf(&b, "%s\n", msg);
    wh_server_count(c->s, status, status == 408);
    if (respond(c, status, "text/plain; charset=utf-8", vbuf_str(&b), b.len, 0) != IO_OK) {
        vbuf_free(&b);
        return;
    }
    vbuf_free(&b);
    shutdown(c->fd, SHUT_WR);
    deadline = vmop_mono_ms() + WH_LINGER_MS;
    while (conn_read(c, junk, sizeof(junk), &n, deadline) == IO_OK)
        ;
}

/* Reads until buf holds a complete head; returns its length and *ret_deadline (read_ms after
 * the request's first byte), or 0 after answering or on a closed or idle connection. */
static size_t read_head(struct wh_conn *c, long long idle_deadline, long long *ret_deadline)
{
    long long deadline = 0;
    size_t head_len, n;
    enum io_res r;

    while (!(head_len = wh_http_head_len(c->buf, c->len))) {
        if (c->len >= WH_MAX_HEAD) {
            refuse(c, 431, "request head too large");
            return 0;
        }
        if (c->len && !deadline)
            deadline = vmop_mono_ms() + c->s->read_ms; /* a request has started */
        r = conn_read(c, c->buf + c->len, WH_MAX_HEAD - c->len, &n,
                      deadline ? deadline : idle_deadline);
        if (r == IO_TIMEOUT && deadline) {
            refuse(c, 408, "request not received in time");
            return 0;
        }
        if (r != IO_OK)
            return 0; /* closed, or idle past idle_ms: normal for keep-alive */
        if (!deadline)
            deadline = vmop_mono_ms() + c->s->read_ms;
        c->len += n;
    }
    *ret_deadline = deadline ? deadline : vmop_mono_ms() + c->s->read_ms;
    return head_len;
}

/* Serves one request; 1 when the connection may carry another. */
static int serve_one(struct wh_conn *c, long long idle_deadline)
{
    struct wh_server *s = c->s;
    struct vmop_err err = {0};
    struct wh_http_req req;
    struct wh_handler h;
    struct vbuf out;
    long long deadline = 0;
    size_t head_len = read_head(c, idle_deadline, &deadline), have, body_len;
    char *body = NULL;
    int status = 0, keep = 0;

    if (!head_len)
        return 0;
    if (wh_http_parse(c->buf, head_len, &req, &status, &err) != VMOP_OK) {
        refuse(c, status, err.msg);
        return 0;
    }
    if (strcmp(req.method, "POST")) {
        refuse(c, 405, "only POST is served");
        return 0;
    }
    if (!wh_server_lookup(s, req.path, &h)) {
        refuse(c, 404, "no webhook at this path");
        return 0;
    }
    if (req.content_length < 0) {
        refuse(c, 411, "Content-Length is required");
        return 0;
    }
    if ((unsigned long long)req.content_length > s->max_body) {
        refuse(c, 413, "request body over the limit");
        return 0;
    }
    if (req.content_type[0] && strcmp(req.content_type, "application/json")) {
        refuse(c, 415, "the body must be application/json");
        return 0;
    }
    body_len = (size_t)req.content_length;
    if (req.expect_continue && c->len == head_len &&
        conn_write(c, "HTTP/1.1 100 Continue\r\n\r\n", 25, vmop_mono_ms() + s->write_ms) != IO_OK)
        return 0;
    body = malloc(body_len + 1);
    if (!body) {
        refuse(c, 503, "out of memory");
        return 0;
    }
    have = c->len - head_len < body_len ? c->len - head_len : body_len;
    memcpy(body, c->buf + head_len, have);
    /* what follows the body (a pipelined request) stays in buf */
    memmove(c->buf, c->buf + head_len + have, c->len - head_len - have);
    c->len -= head_len + have;
    while (have < body_len) {
        size_t n;
        enum io_res r = conn_read(c, body + have, body_len - have, &n, deadline);
        if (r == IO_TIMEOUT) {
            free(body);
            refuse(c, 408, "request body not received in time");
            return 0;
        }
        if (r != IO_OK) {
            free(body);
            return 0;
        }
        have += n;
    }
    body[body_len] = '\0';
    vbuf_init(&out, WH_MAX_RESPONSE + 64);
    wh_server_dispatch(s, &h, body, body_len, &status, &out);
    free(body);
    wh_server_count(s, status, 0);
    keep = req.keep_alive && status == 200;
    if (respond(c, status, status == 200 ? "application/json" : "text/plain; charset=utf-8",
                vbuf_str(&out), out.len, keep) != IO_OK)
        keep = 0;
    vbuf_free(&out);
    return keep;
}

void *wh_conn_main(void *arg)
{
    struct wh_conn *c = arg;
    struct wh_server *s = c->s;
    enum io_res r = handshake(c, vmop_mono_ms() + s->read_ms);

    if (r == IO_TIMEOUT)
        wh_server_count(s, 0, 1);
    if (r == IO_OK) {
        /* The first request must start within read_ms (the API server sends it at once); only a
         * connection that has carried a request may idle for idle_ms, so clients that connect and
         * say nothing cannot hold the max_conns slots for long. */
        long long wait = s->read_ms;
        while (serve_one(c, vmop_mono_ms() + wait))
            wait = s->idle_ms;
        SSL_shutdown(c->ssl); /* one close_notify, not waiting for the peer's */
    }
    ERR_clear_error(); /* OpenSSL's error queue is per thread: leave it empty */
    pthread_mutex_lock(&s->lock);
    s->conn_fds[c->slot] = -1; /* before close(): stop must never shut down a reused number */
    pthread_mutex_unlock(&s->lock);
    SSL_free(c->ssl);
    close(c->fd);
    free(c->buf);
    free(c);
    pthread_mutex_lock(&s->lock);
    s->n_active--;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    OPENSSL_thread_stop();
    return NULL;
}
