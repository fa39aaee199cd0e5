/* mock_http.h: a tiny scripted HTTP/1.1 server on 127.0.0.1 (port 0) for transport unit tests of
 * the Kubernetes client: keep-alive, per-request handler that writes raw responses, a request log
 * and a connection counter. One connection at a time, one thread. Test code only.
 */
#ifndef KUBE_MOCK_HTTP_H
#define KUBE_MOCK_HTTP_H

#include <pthread.h>
#include <stddef.h>

struct mock_req {
    char method[16];
    char path[2048];
    char auth[512];  /* the Authorization header value, or "" */
    char ctype[128]; /* Content-Type, or "" */
    char body[16384];
    size_t body_len;
    int index; /* 0-based request number */
};

/* Writes the response to fd. Returns 0 to keep the connection, 1 to close it. */
typedef int (*mock_handler)(void *ud, const struct mock_req *req, int fd);

struct mock_server {
    int lfd;
    int port;
    char url[64];
    pthread_t th;
    int stop; /* atomic */
    mock_handler handler;
    void *ud;
    pthread_mutex_t lock;
    int n_conns;             /* guarded by lock */
    int n_reqs;              /* guarded by lock */
    struct mock_req log[64]; /* guarded by lock: the first 64 requests */
};

int mock_start(struct mock_server *m, mock_handler h, void *ud);
void mock_stop(struct mock_server *m);
int mock_conns(struct mock_server *m);
int mock_reqs(struct mock_server *m);
/* Copy of request i (0-based); returns 0 if it exists. */
int mock_req_at(struct mock_server *m, int i, struct mock_req *out);

/* Helpers for handlers. */
void mock_send(int fd, const char *s);
void mock_reply(int fd, int status, const char *extra_headers, const char *body);
/* Starts a chunked 200 response; then mock_chunk() per piece; mock_chunk_end() ends it. */
void mock_chunked_start(int fd);
void mock_chunk(int fd, const char *data, size_t n);
void mock_chunk_end(int fd);

#endif
