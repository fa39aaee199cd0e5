/* health.h: the operator's HTTP health endpoint (libmicrohttpd): /healthz (process alive),
 * /readyz (caches synced and, with leader election, either leading or standing by) and /metrics
 * (Prometheus text, written by a callback).
 *
 * Threads: libmicrohttpd's internal thread calls the callbacks; they must be thread-safe.
 * Ownership: health_start() returns a server freed by health_stop().
 */
#ifndef VMOP_HEALTH_H
#define VMOP_HEALTH_H

#include "vbuf.h"
#include "vmop_err.h"

struct health_cbs {
    int (*ready)(void *ud);                      /* 1 = ready; NULL: always ready */
    void (*metrics)(void *ud, struct vbuf *out); /* appends Prometheus text; may be NULL */
    void *ud;
};

struct health;

/* addr "127.0.0.1:PORT" (PORT 0: a free port; see health_port()). */
vmop_rc health_start(const char *addr, const struct health_cbs *cbs, struct health **ret_h,
                     struct vmop_err *err);
int health_port(const struct health *h);
void health_stop(struct health *h); /* NULL-safe */

#endif
