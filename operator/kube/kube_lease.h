/* kube_lease.h: leader election on a coordination.k8s.io/v1 Lease, following client-go's
 * leaderelection package (tryAcquireOrRenew).
 *
 * Algorithm per attempt: if leading and the locally observed lease is still valid, PUT a renewal;
 * else GET the Lease (404: create it and lead), note observed_time = local now whenever the spec
 * changed, fail while another holder's lease is valid (observed_time + leaseDurationSeconds > now,
 * judged on the LOCAL clock, never on renewTime), else PUT it with us as holder (transitions+1 when
 * the holder changes). A 409 means someone else won.
 *
 * The loop (kube_elector_start): while not leading, attempt every retry_period (jittered x1.2);
 * once leading, renew every retry_period; if no renewal succeeded for renew_deadline, stop leading
 * (on_stopped_leading) and end the loop, as client-go's Run does (the process should exit or start
 * a new elector). kube_elector_stop() with release_on_cancel clears holderIdentity (and sets
 * leaseDurationSeconds 1) so another candidate takes over at once.
 *
 * Constraint: lease_duration > renew_deadline > 1.2 * retry_period (checked).
 * Threads: callbacks run on the elector thread (or in kube_elector_stop()). kube_elector_step()
 * is for driving the state machine by hand (tests); do not mix it with start().
 */
#ifndef KUBE_LEASE_H
#define KUBE_LEASE_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube_client.h"
#include "vmop_err.h"

/* Injectable time: monotonic ms for the algorithm, wall µs for the timestamps written. */
struct kube_clock {
    int64_t (*mono_ms)(void *ud);
    int64_t (*wall_us)(void *ud);
    void *ud;
};

/* The calls the elector makes; tests replace them with a fake API server. Returned objects are
 * owned by the elector. Expected failures: get -> VMOP_E_NOT_FOUND, create -> VMOP_E_EXISTS,
 * update -> VMOP_E_CONFLICT. */
struct kube_lease_api {
    vmop_rc (*get)(void *ud, const char *ns, const char *name, cJSON **ret, struct vmop_err *err);
    vmop_rc (*create)(void *ud, const char *ns, const cJSON *lease, cJSON **ret,
                      struct vmop_err *err);
    vmop_rc (*update)(void *ud, const char *ns, const cJSON *lease, cJSON **ret,
                      struct vmop_err *err);
    void *ud;
};

struct kube_elector_opts {
    const char *ns;         /* the Lease's namespace (required) */
    const char *name;       /* the Lease's name (required) */
    const char *identity;   /* unique per process, e.g. hostname_<random> (required) */
    long lease_duration_ms; /* 0: 15000 */
    long renew_deadline_ms; /* 0: 10000 */
    long retry_period_ms;   /* 0: 2000 */
    int release_on_cancel;
    void (*on_started_leading)(void *ud);
    void (*on_stopped_leading)(void *ud);
    void (*on_new_leader)(void *ud, const char *identity); /* holder changed (may be us) */
    void *cb_ud;
    const struct kube_clock *clock;   /* NULL: real clocks; borrowed */
    const struct kube_lease_api *api; /* NULL: the client c; borrowed */
};

struct kube_elector;

/* c may be NULL when opts->api is set. Strings are copied. */
vmop_rc kube_elector_new(struct kube_client *c, const struct kube_elector_opts *o,
                         struct kube_elector **ret_el, struct vmop_err *err);
/* Stops (releasing if configured) and frees. NULL-safe. */
void kube_elector_free(struct kube_elector *el);

/* One tryAcquireOrRenew. VMOP_OK: we hold the lease now. VMOP_E_CONFLICT: held by someone else
 * or lost a race. Other failures: the API call failed. Does not change the leading state. */
vmop_rc kube_elector_try(struct kube_elector *el, struct vmop_err *err);
/* One step of the loop at the clock's now (try + leading state + callbacks). Returns the ms to wait
 * before the next step, or -1 when leadership was lost (the loop ends). */
long kube_elector_step(struct kube_elector *el);

vmop_rc kube_elector_start(struct kube_elector *el, struct vmop_err *err);
/* Ends the loop; when leading: release (if release_on_cancel) and on_stopped_leading. */
void kube_elector_stop(struct kube_elector *el);
/* Gives up the lease now if we hold it (holderIdentity ""). */
vmop_rc kube_elector_release(struct kube_elector *el, struct vmop_err *err);

int kube_elector_is_leader(struct kube_elector *el);
/* 1 when leading and the last successful renewal is younger than renew_deadline on the local
 * monotonic clock, so no other replica can have taken over yet: the test to pass before changing
 * the world. A process that was paused (SIGSTOP, a frozen VM) resumes still "leading" until its
 * elector thread runs again; its workers must not act in that gap. */
int kube_elector_lease_fresh(struct kube_elector *el);
/* The observed holder (copied; "" when none). */
void kube_elector_holder(struct kube_elector *el, char *buf, size_t buf_len);
/* True when the loop ended (lost leadership or stopped). */
int kube_elector_done(struct kube_elector *el);

#endif
