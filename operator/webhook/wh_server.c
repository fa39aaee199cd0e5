/* wh_server.c: the webhook server's lifecycle, listener thread, handler table and review
 * dispatch (see wh_server.h). Connection I/O is wh_conn.c.
 *
 * The listener accepts only while fewer than max_conns connections are open; beyond that new
 * connections wait in the kernel's accept queue (bounded by listen()'s backlog) instead of
 * costing a thread each.
 */
#include "wh_server.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "log.h"
#include "wh_internal.h"

#define LOGGER "webhook"

/* "HOST:PORT", ":PORT", "[V6]:PORT" -> a listening socket. */
static vmop_rc listen_on(const char *addr, int *ret_fd, int *ret_port, struct vmop_err *err)
{
    char host[128];
    const char *colon = addr ? strrchr(addr, ':') : NULL, *h = addr;
    size_t hl;
    struct addrinfo hints, *ai = NULL;
    int fd, one = 1, gai;
    union {
        struct sockaddr sa;
        struct sockaddr_in in;
        struct sockaddr_in6 in6;
        struct sockaddr_storage ss;
    } bound;
    socklen_t blen = sizeof(bound);

    if (!colon || !colon[1])
        return vmop_fail(err, VMOP_E_INVALID, "webhook address '%s' is not HOST:PORT",
                         addr ? addr : "");
    hl = (size_t)(colon - addr);
    if (hl >= 2 && addr[0] == '[' && addr[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl >= sizeof(host))
        return vmop_fail(err, VMOP_E_INVALID, "webhook address '%s': host too long", addr);
    memcpy(host, h, hl);
    host[hl] = '\0';
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
    gai = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai);
    if (gai || !ai)
        return vmop_fail(err, VMOP_E_INVALID, "webhook address '%s': %s", addr,
                         gai ? gai_strerror(gai) : "no address");
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        freeaddrinfo(ai);
        return vmop_fail(err, VMOP_E_TRANSPORT, "webhook socket: %s", strerror(errno));
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 128) != 0) {
        int e = errno;
        freeaddrinfo(ai);
        close(fd);
        return vmop_fail(err, VMOP_E_TRANSPORT, "cannot listen on %s for webhooks: %s", addr,
                         strerror(e));
    }
    freeaddrinfo(ai);
    if (getsockname(fd, &bound.sa, &blen) != 0) {
        close(fd);
        return vmop_fail(err, VMOP_E_TRANSPORT, "webhook getsockname: %s", strerror(errno));
    }
    *ret_port = ntohs(bound.sa.sa_family == AF_INET6 ? bound.in6.sin6_port : bound.in.sin_port);
    *ret_fd = fd;
    return VMOP_OK;
}

static void start_conn(struct wh_server *s, int fd)
{
    struct vmop_err rerr = {0};
    SSL_CTX *ctx = wh_tls_ctx_get(s->tls, &rerr);
    struct wh_conn *c = calloc(1, sizeof(*c));
    pthread_attr_t attr;
    pthread_t th;
    unsigned slot = 0;

    if (rerr.rc)
        vlog_err(VLOG_WARN, LOGGER, NULL, &rerr,
                 "new webhook certificate does not load, keeping the previous one");
    if (c) {
        c->buf = malloc(WH_MAX_HEAD);
        c->ssl = SSL_new(ctx);
    }
    SSL_CTX_free(ctx); /* the SSL holds its own reference */
    if (!c || !c->buf || !c->ssl || SSL_set_fd(c->ssl, fd) != 1)
        goto fail;
    c->s = s;
    c->fd = fd;
    pthread_mutex_lock(&s->lock);
    while (slot < s->max_conns && s->conn_fds[slot] >= 0)
        slot++;
    /* the listener only accepts below max_conns, and it is the only one adding */
    s->conn_fds[slot] = fd;
    c->slot = slot;
    s->n_active++;
    s->stats.accepted++;
    pthread_mutex_unlock(&s->lock);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, (size_t)256 << 10);
    if (pthread_create(&th, &attr, wh_conn_main, c) != 0) {
        pthread_attr_destroy(&attr);
        pthread_mutex_lock(&s->lock);
        s->conn_fds[slot] = -1;
        s->n_active--;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
        goto fail;
    }
    pthread_attr_destroy(&attr);
    return;
fail:
    vlog(VLOG_WARN, LOGGER, NULL, "cannot serve a webhook connection (out of memory or threads)");
    if (c) {
        SSL_free(c->ssl);
        free(c->buf);
        free(c);
    }
    close(fd);
}

static void *listener_main(void *arg)
{
    struct wh_server *s = arg;
    for (;;) {
        struct pollfd p[2] = {{.fd = s->lfd, .events = POLLIN},
                              {.fd = s->wake[0], .events = POLLIN}};
        int fd, one = 1;
        pthread_mutex_lock(&s->lock);
        while (!s->stopping && s->n_active >= s->max_conns)
            pthread_cond_wait(&s->cond, &s->lock);
        if (s->stopping) {
            pthread_mutex_unlock(&s->lock);
            break;
        }
        pthread_mutex_unlock(&s->lock);
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents)
            break;
        if (!(p[0].revents & POLLIN))
            continue;
        fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                usleep(100 * 1000); /* out of descriptors: let connections end */
            continue;
        }
        /* answers are one write each: send them at once (no Nagle wait) */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        start_conn(s, fd);
    }
    return NULL;
}

vmop_rc wh_server_start(const struct wh_server_config *cfg, struct wh_server **ret,
                        struct vmop_err *err)
{
    struct wh_server *s = calloc(1, sizeof(*s));
    vmop_rc rc;

    if (!s)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    s->lfd = s->wake[0] = s->wake[1] = -1;
    s->max_body = cfg->max_body ? cfg->max_body : WH_MAX_BODY;
    s->max_conns = cfg->max_conns ? cfg->max_conns : WH_MAX_CONNS;
    s->read_ms = cfg->read_timeout_ms > 0 ? cfg->read_timeout_ms : WH_READ_TIMEOUT_MS;
    s->write_ms = cfg->write_timeout_ms > 0 ? cfg->write_timeout_ms : WH_WRITE_TIMEOUT_MS;
    s->idle_ms = cfg->idle_timeout_ms > 0 ? cfg->idle_timeout_ms : WH_IDLE_TIMEOUT_MS;
    if (s->max_body > WH_MAX_BODY) {
        rc = vmop_fail(err, VMOP_E_INVALID, "webhook body limit over %zu bytes", WH_MAX_BODY);
        goto fail;
    }
    s->conn_fds = malloc(s->max_conns * sizeof(*s->conn_fds));
    if (!s->conn_fds) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto fail;
    }
    for (unsigned i = 0; i < s->max_conns; i++)
        s->conn_fds[i] = -1;
    if ((rc = wh_tls_new(cfg->cert_dir, &s->tls, err)) ||
        (rc = listen_on(cfg->addr, &s->lfd, &s->port, err)))
        goto fail;
    if (pipe2(s->wake, O_CLOEXEC) != 0) {
        rc = vmop_fail(err, VMOP_E_INTERNAL, "webhook pipe: %s", strerror(errno));
        goto fail;
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    if (pthread_create(&s->listener, NULL, listener_main, s) != 0) {
        pthread_cond_destroy(&s->cond);
        pthread_mutex_destroy(&s->lock);
        rc = vmop_fail(err, VMOP_E_NOMEM, "cannot start the webhook listener thread");
        goto fail;
    }
    *ret = s;
    return VMOP_OK;
fail:
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->wake[0] >= 0) {
        close(s->wake[0]);
        close(s->wake[1]);
    }
    wh_tls_free(s->tls);
    free(s->conn_fds);
    free(s);
    return rc;
}

static vmop_rc add_handler(struct wh_server *s, const struct wh_handler *h, struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_handlers; i++)
        if (!strcmp(s->handlers[i].path, h->path))
            rc = vmop_fail(err, VMOP_E_EXISTS, "webhook path %s is already served", h->path);
    if (!rc && s->n_handlers >= WH_MAX_HANDLERS)
        rc = vmop_fail(err, VMOP_E_TOOBIG, "more than %d webhook paths", WH_MAX_HANDLERS);
    if (!rc)
        s->handlers[s->n_handlers++] = *h;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static vmop_rc make_handler(struct wh_handler *h, const char *path, struct vmop_err *err)
{
    memset(h, 0, sizeof(*h));
    if (!path || path[0] != '/' || strchr(path, '?'))
        return vmop_fail(err, VMOP_E_INVALID, "webhook path '%s' is not an absolute path",
                         path ? path : "");
    if (strlen(path) >= sizeof(h->path))
        return vmop_fail(err, VMOP_E_TOOBIG, "webhook path longer than %d bytes", WH_MAX_PATH - 1);
    memcpy(h->path, path, strlen(path) + 1);
    return VMOP_OK;
}

vmop_rc wh_server_add_admission(struct wh_server *s, const char *path, wh_admit_fn fn, void *ud,
                                struct vmop_err *err)
{
    struct wh_handler h;
    vmop_rc rc = make_handler(&h, path, err);
    if (rc)
        return rc;
    h.kind = WH_KIND_ADMISSION;
    h.admit = fn;
    h.ud = ud;
    return add_handler(s, &h, err);
}

vmop_rc wh_server_add_conversion(struct wh_server *s, const char *path, wh_convert_fn fn, void *ud,
                                 struct vmop_err *err)
{
    struct wh_handler h;
    vmop_rc rc = make_handler(&h, path, err);
    if (rc)
        return rc;
    h.kind = WH_KIND_CONVERSION;
    h.convert = fn;
    h.ud = ud;
    return add_handler(s, &h, err);
}

int wh_server_lookup(struct wh_server *s, const char *path, struct wh_handler *ret)
{
    int found = 0;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_handlers && !found; i++)
        if (!strcmp(s->handlers[i].path, path)) {
            *ret = s->handlers[i];
            found = 1;
        }
    pthread_mutex_unlock(&s->lock);
    return found;
}

void wh_server_count(struct wh_server *s, int status, int timed_out)
{
    pthread_mutex_lock(&s->lock);
    if (status == 200)
        s->stats.requests++;
    else if (status >= 400)
        s->stats.http_errors++;
    if (timed_out)
        s->stats.timeouts++;
    pthread_mutex_unlock(&s->lock);
}

int wh_server_port(const struct wh_server *s)
{
    return s ? s->port : 0;
}

void wh_server_stats(struct wh_server *s, struct wh_server_stats *ret)
{
    pthread_mutex_lock(&s->lock);
    *ret = s->stats;
    ret->active = s->n_active;
    pthread_mutex_unlock(&s->lock);
    wh_tls_counts(s->tls, &ret->cert_reloads, &ret->cert_reload_failures);
}

void wh_server_stop(struct wh_server *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stopping = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    if (write(s->wake[1], "x", 1) < 0) {
        /* the pipe is empty and ours: cannot fail; the listener also checks stopping */
    }
    pthread_join(s->listener, NULL);
    close(s->lfd);
    pthread_mutex_lock(&s->lock);
    /* wakes connections blocked in poll(); a handler running now finishes first */
    for (unsigned i = 0; i < s->max_conns; i++)
        if (s->conn_fds[i] >= 0)
            shutdown(s->conn_fds[i], SHUT_RDWR);
    while (s->n_active > 0)
        pthread_cond_wait(&s->cond, &s->lock);
    pthread_mutex_unlock(&s->lock);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->lock);
    close(s->wake[0]);
    close(s->wake[1]);
    wh_tls_free(s->tls);
    free(s->conn_fds);
    free(s);
}

/* ---- dispatch ---- */

static void text(struct vbuf *out, int *ret_status, int status, const char *msg)
{
    vbuf_reset(out);
    vbuf_addf(out, "%s\n", msg);
    *ret_status = status;
}

static void admit(const struct wh_handler *h, const char *body, size_t len, int *ret_status,
                  struct vbuf *out)
{
    struct wh_admission_request *req = NULL;
    struct wh_admission_response resp;
    struct vmop_err err = {0}, herr = {0};
    char *json = NULL, key[320];
    size_t jlen = 0;
    vmop_rc rc;

    if (wh_admission_parse(body, len, &req, &err) != VMOP_OK) {
        text(out, ret_status, err.rc == VMOP_E_TOOBIG ? 413 : 400, err.msg);
        return;
    }
    snprintf(key, sizeof(key), "%s/%s", req->namespace_, req->name);
    wh_admission_response_init(&resp);
    rc = h->admit(h->ud, req, &resp, &herr);
    if (rc != VMOP_OK) {
        vlog_err(VLOG_WARN, LOGGER, key, &herr, "admission handler %s failed on %s %s, denying",
                 h->path, req->operation, req->kind);
        wh_admission_response_deinit(&resp);
        wh_admission_response_init(&resp);
        if (wh_admission_deny(&resp, 500, "InternalError",
                              herr.msg[0] ? herr.msg : vmop_rc_str(rc))) {
            text(out, ret_status, 500, "out of memory");
            goto out;
        }
    }
    if (wh_admission_build(req->uid, &resp, &json, &jlen, &err) != VMOP_OK) {
        vlog_err(VLOG_WARN, LOGGER, key, &err, "admission response of %s not built", h->path);
        text(out, ret_status, 500, err.msg);
        goto out;
    }
    vbuf_reset(out);
    vbuf_add(out, json, jlen);
    *ret_status = vbuf_error(out) ? 500 : 200;
out:
    free(json);
    wh_admission_response_deinit(&resp);
    wh_admission_request_free(req);
}

static void convert(const struct wh_handler *h, const char *body, size_t len, int *ret_status,
                    struct vbuf *out)
{
    struct wh_conversion_request *req = NULL;
    struct vmop_err err = {0}, berr = {0};
    cJSON *converted = NULL;
    const cJSON *o, *objs;
    char *json = NULL;
    size_t jlen = 0, i = 0;

    if (wh_conversion_parse(body, len, &req, &err) != VMOP_OK) {
        text(out, ret_status, err.rc == VMOP_E_TOOBIG ? 413 : 400, err.msg);
        return;
    }
    converted = cJSON_CreateArray();
    if (!converted)
        vmop_fail(&err, VMOP_E_NOMEM, "out of memory");
    objs = converted ? req->objects : NULL;
    cJSON_ArrayForEach(o, objs)
    {
        cJSON *r = NULL;
        const char *av;
        if (h->convert(h->ud, o, req->desired_api_version, &r, &err) != VMOP_OK)
            break;
        av = r ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "apiVersion")) : NULL;
        if (!av || strcmp(av, req->desired_api_version)) {
            vmop_fail(&err, VMOP_E_INTERNAL, "objects[%zu] converted to %s, not %s", i,
                      av ? av : "no apiVersion", req->desired_api_version);
            cJSON_Delete(r);
            break;
        }
        if (!cJSON_AddItemToArray(converted, r)) {
            cJSON_Delete(r);
            vmop_fail(&err, VMOP_E_NOMEM, "out of memory");
            break;
        }
        i++;
    }
    if (err.rc)
        vlog_err(VLOG_WARN, LOGGER, NULL, &err, "conversion handler %s failed converting to %s",
                 h->path, req->desired_api_version);
    if (wh_conversion_build(req->uid, err.rc ? NULL : converted, err.msg, &json, &jlen, &berr) !=
        VMOP_OK) {
        text(out, ret_status, 500, berr.msg);
        goto out;
    }
    vbuf_reset(out);
    vbuf_add(out, json, jlen);
    *ret_status = vbuf_error(out) ? 500 : 200;
out:
    free(json);
    cJSON_Delete(converted);
    wh_conversion_request_free(req);
}

void wh_server_dispatch(struct wh_server *s, const struct wh_handler *h, const char *body,
                        size_t len, int *ret_status, struct vbuf *out)
{
    (void)s;
    if (h->kind == WH_KIND_ADMISSION)
        admit(h, body, len, ret_status, out);
    else
        convert(h, body, len, ret_status, out);
}
