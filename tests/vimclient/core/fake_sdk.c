/* fake_sdk.c: the scripted SOAP endpoint of fake_sdk.h (HTTP/1.1 keep-alive, Content-Length
 * bodies only, poll() over the listening socket and up to 8 connections). Test code only. */
#include "fake_sdk.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNS   8
#define MAX_REQUEST (1 << 20)

struct conn {
    int fd;
    char *buf;
    size_t len;
};

static const char envelope_head[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\" "
    "xmlns:xsd=\"http://www.w3.org/2001/XMLSchema\" "
    "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"><soapenv:Body>";
static const char envelope_tail[] = "</soapenv:Body></soapenv:Envelope>";

static void send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

static void reply(int fd, int status, const char *body, size_t len, const char *cookie)
{
    char head[512];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d X\r\nContent-Type: text/xml; charset=utf-8\r\n"
                     "Content-Length: %zu\r\n%s%s%s\r\n",
                     status, len, cookie ? "Set-Cookie: " : "", cookie ? cookie : "",
                     cookie ? "; Path=/\r\n" : "");
    send_all(fd, head, (size_t)n);
    send_all(fd, body, len);
}

/* The local name of the first element inside soapenv:Body. */
static void body_method(const char *req, char *out, size_t outlen)
{
    const char *p = strstr(req, "Body>");
    size_t n = 0;
    out[0] = '\0';
    if (!p || !(p = strchr(p, '<')))
        return;
    p++;
    const char *colon = p;
    while (*colon && *colon != ' ' && *colon != '>' && *colon != ':')
        colon++;
    if (*colon == ':')
        p = colon + 1;
    while (p[n] && p[n] != ' ' && p[n] != '>' && p[n] != '/' && n + 1 < outlen)
        n++;
    memcpy(out, p, n);
    out[n] = '\0';
}

static void handle_request(struct fake_sdk *f, int fd, const char *req)
{
    char method[128];
    const struct fake_reply *r = NULL;

    if (f->n_requests < FAKE_MAX_REQS)
        f->requests[f->n_requests++] = strdup(req);
    body_method(req, method, sizeof(method));
    if (f->next < f->n_script && strcmp(f->script[f->next].method, method) == 0)
        r = &f->script[f->next++];
    if (!r) {
        static const char fault[] =
            "<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>unexpected "
            "request</faultstring><detail><InvalidRequestFault xmlns=\"urn:vim25\" "
            "xsi:type=\"InvalidRequest\"/></detail></soapenv:Fault>";
        char buf[1024];
        int n = snprintf(buf, sizeof(buf), "%s%s%s", envelope_head, fault, envelope_tail);
        f->mismatches++;
        reply(fd, 500, buf, (size_t)n, NULL);
        return;
    }
    if (r->raw) {
        reply(fd, r->status, r->body, strlen(r->body), r->set_cookie);
        return;
    }
    size_t len = strlen(envelope_head) + strlen(r->body) + strlen(envelope_tail);
    char *buf = malloc(len + 1);
    if (!buf)
        return;
    snprintf(buf, len + 1, "%s%s%s", envelope_head, r->body, envelope_tail);
    reply(fd, r->status, buf, len, r->set_cookie);
    free(buf);
}

/* Handles every complete request in c->buf; returns -1 when the connection must close. */
static int drain(struct fake_sdk *f, struct conn *c)
{
    for (;;) {
        char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
        const char *cl;
        size_t body_len = 0, total;
        if (!end)
            return 0;
        *end = '\0';
        cl = strcasestr(c->buf, "\r\nContent-Length:");
        if (cl)
            body_len = strtoul(cl + 17, NULL, 10);
        *end = '\r';
        total = (size_t)(end - c->buf) + 4 + body_len;
        if (total > MAX_REQUEST)
            return -1;
        if (c->len < total)
            return 0;
        char saved = c->buf[total];
        c->buf[total] = '\0';
        handle_request(f, c->fd, c->buf);
        c->buf[total] = saved;
        memmove(c->buf, c->buf + total, c->len - total);
        c->len -= total;
    }
}

static void *serve(void *arg)
{
    struct fake_sdk *f = arg;
    struct conn conns[MAX_CONNS];
    int n = 0;

    while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
        struct pollfd pfd[MAX_CONNS + 1];
        pfd[0] = (struct pollfd){.fd = f->listen_fd, .events = POLLIN};
        for (int i = 0; i < n; i++)
            pfd[i + 1] = (struct pollfd){.fd = conns[i].fd, .events = POLLIN};
        if (poll(pfd, (nfds_t)n + 1, 50) <= 0)
            continue;
        if ((pfd[0].revents & POLLIN) && n < MAX_CONNS) {
            int fd = accept(f->listen_fd, NULL, NULL);
            if (fd >= 0) {
                conns[n].fd = fd;
                conns[n].buf = malloc(MAX_REQUEST + 1);
                conns[n].len = 0;
                n++;
            }
        }
        for (int i = 0; i < n; i++) {
            ssize_t r;
            if (!(pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            r = recv(conns[i].fd, conns[i].buf + conns[i].len, MAX_REQUEST - conns[i].len, 0);
            if (r > 0) {
                conns[i].len += (size_t)r;
                if (drain(f, &conns[i]) == 0 && conns[i].len < MAX_REQUEST)
                    continue;
            }
            close(conns[i].fd);
            free(conns[i].buf);
            conns[i] = conns[--n];
            pfd[i + 1] = pfd[n + 1];
            i--;
        }
    }
    for (int i = 0; i < n; i++) {
        close(conns[i].fd);
        free(conns[i].buf);
    }
    return NULL;
}

int fake_sdk_start(struct fake_sdk *f, const struct fake_reply *script, size_t n)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    socklen_t sl = sizeof(sa);
    pthread_t *th;

    memset(f, 0, sizeof(*f));
    f->script = script;
    f->n_script = n;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    f->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (f->listen_fd < 0 || bind(f->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(f->listen_fd, 16) != 0 || getsockname(f->listen_fd, (struct sockaddr *)&sa, &sl))
        return -1;
    snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%u", ntohs(sa.sin_port));
    th = malloc(sizeof(*th));
    if (!th || pthread_create(th, NULL, serve, f) != 0) {
        free(th);
        return -1;
    }
    f->thread = th;
    return 0;
}

void fake_sdk_stop(struct fake_sdk *f)
{
    if (!f->thread)
        return;
    __atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
    pthread_join(*(pthread_t *)f->thread, NULL);
    free(f->thread);
    f->thread = NULL;
    close(f->listen_fd);
}

void fake_sdk_free(struct fake_sdk *f)
{
    fake_sdk_stop(f);
    for (size_t i = 0; i < f->n_requests; i++)
        free(f->requests[i]);
    f->n_requests = 0;
}
