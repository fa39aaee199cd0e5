/* health.c: /healthz, /readyz and /metrics over libmicrohttpd (see health.h). */
#include "health.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#if MHD_VERSION < 0x00097002
typedef int mhd_result;
#else
typedef enum MHD_Result mhd_result;
#endif

struct health {
    struct MHD_Daemon *d;
    struct health_cbs cbs;
    int port;
};

static mhd_result reply(struct MHD_Connection *conn, unsigned code, const char *ctype,
                        const char *body, size_t len)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    mhd_result ret;
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", ctype);
    ret = MHD_queue_response(conn, code, r);
    MHD_destroy_response(r);
    return ret;
}

static mhd_result handle(void *cls, struct MHD_Connection *conn, const char *url,
                         const char *method, const char *version, const char *upload_data,
                         size_t *upload_data_size, void **con_cls)
{
    struct health *h = cls;
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return reply(conn, 405, "text/plain", "method not allowed\n", 19);
    if (!strcmp(url, "/healthz") || !strcmp(url, "/livez"))
        return reply(conn, 200, "text/plain", "ok\n", 3);
    if (!strcmp(url, "/readyz")) {
        int ok = h->cbs.ready ? h->cbs.ready(h->cbs.ud) : 1;
        return ok ? reply(conn, 200, "text/plain", "ok\n", 3)
                  : reply(conn, 503, "text/plain", "not ready\n", 10);
    }
    if (!strcmp(url, "/metrics")) {
        struct vbuf b;
        mhd_result ret;
        vbuf_init(&b, (size_t)4 << 20);
        if (h->cbs.metrics)
            h->cbs.metrics(h->cbs.ud, &b);
        if (vbuf_error(&b) != VMOP_OK) {
            vbuf_free(&b);
            return reply(conn, 500, "text/plain", "metrics too large\n", 18);
        }
        ret = reply(conn, 200, "text/plain; version=0.0.4", vbuf_str(&b), b.len);
        vbuf_free(&b);
        return ret;
    }
    return reply(conn, 404, "text/plain", "not found\n", 10);
}

vmop_rc health_start(const char *addr, const struct health_cbs *cbs, struct health **ret_h,
                     struct vmop_err *err)
{
    struct sockaddr_in sa;
    char host[64];
    const char *colon = addr ? strrchr(addr, ':') : NULL;
    char *end = NULL;
    long port;
    struct health *h;
    const union MHD_DaemonInfo *info;

    if (!colon || (size_t)(colon - addr) >= sizeof(host))
        return vmop_fail(err, VMOP_E_INVALID, "health address '%s' is not HOST:PORT",
                         addr ? addr : "");
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    port = strtol(colon + 1, &end, 10);
    if (!*(colon + 1) || *end || port < 0 || port > 65535)
        return vmop_fail(err, VMOP_E_INVALID, "health address '%s': bad port", addr);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((unsigned short)port);
    if (inet_pton(AF_INET, host[0] ? host : "0.0.0.0", &sa.sin_addr) != 1)
        return vmop_fail(err, VMOP_E_INVALID, "health address '%s': not an IPv4 address", addr);
    h = calloc(1, sizeof(*h));
    if (!h)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    if (cbs)
        h->cbs = *cbs;
    h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
                            handle, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)32,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
    if (!h->d) {
        free(h);
        return vmop_fail(err, VMOP_E_TRANSPORT, "cannot listen on %s for health checks", addr);
    }
    info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? (int)info->port : (int)port;
    *ret_h = h;
    return VMOP_OK;
}

int health_port(const struct health *h)
{
    return h ? h->port : 0;
}

void health_stop(struct health *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->d);
    free(h);
}
