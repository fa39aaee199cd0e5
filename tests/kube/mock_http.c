/* mock_http.c: the scripted HTTP/1.1 test server (see mock_http.h). Test code only. */
#include "mock_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

void mock_send(int fd, const char *s)
{
    size_t n = strlen(s), off = 0;
    while (off < n) {
        ssize_t w = send(fd, s + off, n - off, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        off += (size_t)w;
    }
}

void mock_reply(int fd, int status, const char *extra, const char *body)
{
    char head[1024];
    snprintf(head, sizeof(head),
             "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n%s\r\n",
             status, body ? strlen(body) : 0, extra ? extra : "");
    mock_send(fd, head);
    if (body)
        mock_send(fd, body);
}

void mock_chunked_start(int fd)
{
    mock_send(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n");
}

void mock_chunk(int fd, const char *data, size_t n)
{
    char h[32];
    snprintf(h, sizeof(h), "%zx\r\n", n);
    mock_send(fd, h);
    char *copy = strndup(data, n);
    mock_send(fd, copy);
    free(copy);
    mock_send(fd, "\r\n");
}

void mock_chunk_end(int fd)
{
    mock_send(fd, "0\r\n\r\n");
}

/* Reads one request; returns 0, or -1 on EOF/stop/garbage. */
static int read_req(struct mock_server *m, int fd, struct mock_req *r)
{
    char buf[32768];
    size_t len = 0;
    char *end = NULL;
    memset(r, 0, sizeof(*r));
    while (!end) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int pr = poll(&p, 1, 100);
        if (__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE))
            return -1;
        if (pr <= 0)
            continue;
        ssize_t n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
        if (n <= 0)
            return -1;
        len += (size_t)n;
        buf[len] = '\0';
        end = strstr(buf, "\r\n\r\n");
        if (!end && len >= sizeof(buf) - 1)
            return -1;
    }
    sscanf(buf, "%15s %2047s", r->method, r->path);
    size_t clen = 0;
    for (char *line = strstr(buf, "\r\n") + 2; line < end; line = strstr(line, "\r\n") + 2) {
        if (!strncasecmp(line, "Content-Length:", 15))
            clen = strtoul(line + 15, NULL, 10);
        else if (!strncasecmp(line, "Authorization:", 14))
            sscanf(line + 14, " %511[^\r]", r->auth);
        else if (!strncasecmp(line, "Content-Type:", 13))
            sscanf(line + 13, " %127[^\r]", r->ctype);
    }
    size_t have = len - (size_t)(end + 4 - buf);
    if (clen >= sizeof(r->body))
        return -1;
    memcpy(r->body, end + 4, have < clen ? have : clen);
    while (have < clen) {
        ssize_t n = recv(fd, r->body + have, clen - have, 0);
        if (n <= 0)
            return -1;
        have += (size_t)n;
    }
    r->body_len = clen;
    return 0;
}

static void *serve(void *arg)
{
    struct mock_server *m = arg;
    while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
        struct pollfd p = {.fd = m->lfd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0)
            continue;
        int fd = accept(m->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        pthread_mutex_lock(&m->lock);
        m->n_conns++;
        pthread_mutex_unlock(&m->lock);
        for (;;) {
            struct mock_req r;
            if (read_req(m, fd, &r) != 0)
                break;
            pthread_mutex_lock(&m->lock);
            r.index = m->n_reqs++;
            if (r.index < 64)
                m->log[r.index] = r;
            pthread_mutex_unlock(&m->lock);
            if (m->handler(m->ud, &r, fd))
                break;
        }
        close(fd);
    }
    return NULL;
}

int mock_start(struct mock_server *m, mock_handler h, void *ud)
{
    memset(m, 0, sizeof(*m));
    m->handler = h;
    m->ud = ud;
    pthread_mutex_init(&m->lock, NULL);
    m->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m->lfd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof(a);
    if (bind(m->lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(m->lfd, 16) != 0 ||
        getsockname(m->lfd, (struct sockaddr *)&a, &al) != 0)
        return -1;
    m->port = ntohs(a.sin_port);
    snprintf(m->url, sizeof(m->url), "http://127.0.0.1:%d", m->port);
    return pthread_create(&m->th, NULL, serve, m) == 0 ? 0 : -1;
}

void mock_stop(struct mock_server *m)
{
    __atomic_store_n(&m->stop, 1, __ATOMIC_RELEASE);
    pthread_join(m->th, NULL);
    close(m->lfd);
    pthread_mutex_destroy(&m->lock);
}

int mock_conns(struct mock_server *m)
{
    pthread_mutex_lock(&m->lock);
    int n = m->n_conns;
    pthread_mutex_unlock(&m->lock);
    return n;
}

int mock_reqs(struct mock_server *m)
{
    pthread_mutex_lock(&m->lock);
    int n = m->n_reqs;
    pthread_mutex_unlock(&m->lock);
    return n;
}

int mock_req_at(struct mock_server *m, int i, struct mock_req *out)
{
    pthread_mutex_lock(&m->lock);
    int ok = i >= 0 && i < m->n_reqs && i < 64;
    if (ok)
        *out = m->log[i];
    pthread_mutex_unlock(&m->lock);
    return ok ? 0 : -1;
}
