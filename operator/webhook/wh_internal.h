/* wh_internal.h: what wh_server.c and wh_conn.c share (not a public API).
 *
 * Owns: the server and connection structs and their locking rules.
 */
#ifndef VMOP_WH_INTERNAL_H
#define VMOP_WH_INTERNAL_H

#include <pthread.h>
#include <stddef.h>

#include <openssl/ssl.h>

#include "vbuf.h"
#include "wh_limits.h"
#include "wh_server.h"
#include "wh_tls.h"

enum wh_kind { WH_KIND_ADMISSION = 1, WH_KIND_CONVERSION = 2 };

struct wh_handler {
    char path[WH_MAX_PATH];
    enum wh_kind kind;
    wh_admit_fn admit;
    wh_convert_fn convert;
    void *ud;
};

struct wh_server {
    /* immutable after wh_server_start */
    size_t max_body;
    unsigned max_conns;
    int read_ms, write_ms, idle_ms;
    struct wh_tls *tls;
    int lfd, port;
    int wake[2]; /* a pipe: written once by wh_server_stop to wake the listener */
    pthread_t listener;

    pthread_mutex_t lock;
    pthread_cond_t cond;                         /* signalled when a connection ends */
    struct wh_handler handlers[WH_MAX_HANDLERS]; /* guarded by lock */
    size_t n_handlers;                           /* guarded */
    int *conn_fds;     /* guarded: max_conns slots, -1 when free (stop shuts them down) */
    unsigned n_active; /* guarded: connection threads alive */
    int stopping;      /* guarded */
    struct wh_server_stats stats; /* guarded (active and cert_* filled in by wh_server_stats) */
};

/* One accepted connection, owned by its thread. */
struct wh_conn {
    struct wh_server *s;
    int fd;
    unsigned slot; /* index in s->conn_fds */
    SSL *ssl;      /* owned */
    char *buf;     /* owned: WH_MAX_HEAD bytes; holds a head and what came after it */
    size_t len;
};

/* The connection thread's body (arg: struct wh_conn *); frees the connection. */
void *wh_conn_main(void *arg);

/* Copies the handler for path into *ret; 0 when none. */
int wh_server_lookup(struct wh_server *s, const char *path, struct wh_handler *ret);
/* Runs a review through handler h: *ret_status is 200 with a JSON review in out, or an HTTP
 * error status with a text body in out. */
void wh_server_dispatch(struct wh_server *s, const struct wh_handler *h, const char *body,
                        size_t len, int *ret_status, struct vbuf *out);
void wh_server_count(struct wh_server *s, int status, int timed_out);

#endif
