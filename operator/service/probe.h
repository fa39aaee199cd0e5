/* probe.h: VirtualMachine readiness (spec.readinessProbe, vm-operator.md §2 and §4).
 *
 * Owns two things:
 *  1. probe_evaluate(): pure evaluation of a VM's probe from facts the caller read from vCenter
 *     (power state, primary IP, guest heartbeat, guestinfo.* ExtraConfig) and the TCP prober's
 *     cached result, giving the Ready condition {status, reason Ready/NotReady/Unknown, message}.
 *     probe_apply() writes it into a status.conditions array (api_cond rules).
 *  2. struct prober: TCP probes run by ONE thread with a poll()-based non-blocking connect loop,
 *     at most max_concurrent connects in flight, each VM probed every periodSeconds with a
 *     timeoutSeconds deadline. Results are cached per key; on_transition(key) is called when a
 *     key's result changes (so the caller can requeue the VM). 1,000 registered VMs cost one
 *     thread and max_concurrent sockets; nothing else is ever blocked by a slow VM.
 *
 * Wiring (VM controller): create one prober at start (prober_new(64, cb, queue)), with cb doing
 * kube_queue_add(queue, key). During a VM's status sync: if spec.readinessProbe.tcpSocket is set
 * and the VM is powered on with an IP, call prober_set(key, host or primaryIP4, port, period,
 * timeout), else prober_remove(key); then probe_evaluate(vm, facts, prober_result(key)) and
 * probe_apply() into status.conditions; emit an event when the status changed. On VM deletion
 * prober_remove(key).
 *
 * Messages never carry ExtraConfig values (they may be user data), only key names.
 */
#ifndef VMOP_PROBE_H
#define VMOP_PROBE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <time.h>

#include "api_cond.h"
#include "api_vm.h"
#include "vmop_err.h"

#define PROBE_MSG_MAX          256
#define PROBE_MAX_KEYS         100000 /* registered keys; more is VMOP_E_TOOBIG */
#define PROBE_MAX_CONCURRENT   1024   /* cap on max_concurrent */
#define PROBE_GUESTINFO_PREFIX "guestinfo."
#define PROBE_COND_READY       "Ready"

/* Result of a TCP probe as cached by the prober. */
enum probe_tcp {
    PROBE_TCP_UNKNOWN, /* not probed yet (or not registered) */
    PROBE_TCP_OK,      /* the last connect succeeded */
    PROBE_TCP_FAIL,    /* the last connect was refused, failed or timed out */
};

/* What the caller knows from vCenter. Strings are borrowed for the call. */
struct probe_facts {
    enum api_power_state power; /* runtime power state */
    const char *primary_ip;     /* may be NULL */
    const char *heartbeat; /* guestHeartbeatStatus: "green", "yellow", "red", "gray", or NULL */
    /* Value of an ExtraConfig key ("guestinfo.<key>"), or NULL when absent. May be NULL itself
     * (then every key is absent). The returned string is borrowed for the call. */
    const char *(*extra_config)(void *ud, const char *key);
    void *ud;
};

struct probe_result {
    int has_probe;               /* 0: the VM has no readinessProbe (nothing else is set) */
    enum api_cond_status status; /* API_COND_TRUE / FALSE / UNKNOWN */
    const char *reason;          /* static: "Ready", "NotReady" or "Unknown" */
    char message[PROBE_MSG_MAX]; /* user visible; never a secret */
};

/* Evaluates vm's readinessProbe (tcpSocket, guestHeartbeat, guestInfo; the first set one, as only
 * one is allowed). Rules: not powered on -> False; tcpSocket: tcp OK -> True, FAIL -> False,
 * UNKNOWN -> Unknown; guestHeartbeat: heartbeat at or above thresholdStatus (green > yellow) ->
 * True, red/gray/below -> False, no heartbeat -> Unknown; guestInfo: every guestinfo.<key> present
 * and (when value is set) matching the value as a POSIX extended regex -> True, else False.
 * VMOP_E_INVALID for a NULL vm/facts/ret. */
vmop_rc probe_evaluate(const struct api_vm *vm, const struct probe_facts *facts, enum probe_tcp tcp,
                       struct probe_result *ret, struct vmop_err *err);

/* Sets the Ready condition in conds (a status.conditions array) from r (no-op when !has_probe).
 * *ret_changed (may be NULL): 1 when the condition's status changed (emit an event then). */
vmop_rc probe_apply(cJSON *conds, const struct probe_result *r, long long generation, time_t now,
                    int *ret_changed, struct vmop_err *err);

/* The TCP port of vm's readinessProbe.tcpSocket: a number, or a numeric string. 0 when absent or
 * a named port (names are not resolvable for a VM). *ret_host: the probe's host, borrowed from
 * vm->obj, or NULL (then use the primary IP). */
int probe_tcp_target(const struct api_vm *vm, const char **ret_host);

/* ---- the TCP prober ---- */

/* Called from the prober thread, without its lock held, when key's result changed (including the
 * first result after UNKNOWN). key is borrowed for the call. Must be quick (enqueue). */
typedef void (*prober_transition_fn)(void *ud, const char *key, enum probe_tcp result);

struct prober;

/* Starts the prober thread. max_concurrent in 1..PROBE_MAX_CONCURRENT. cb may be NULL; ud is
 * borrowed for the prober's life. *ret_p: prober_free(). */
vmop_rc prober_new(unsigned max_concurrent, prober_transition_fn cb, void *ud,
                   struct prober **ret_p, struct vmop_err *err);
/* Stops the thread, closes every socket, frees. NULL-safe. No callback runs after it returns. */
void prober_free(struct prober *p);

/* Registers or updates key (copied): probe host:port every period_s seconds (>= 1), each connect
 * bounded by timeout_s (>= 1). host is an IPv4/IPv6 literal, or a name resolved here, in the
 * caller's thread (getaddrinfo). A changed target resets the result to UNKNOWN and probes at once;
 * an unchanged one keeps result and schedule. */
vmop_rc prober_set(struct prober *p, const char *key, const char *host, int port, int period_s,
                   int timeout_s, struct vmop_err *err);
/* Unregisters key (an in-flight connect is abandoned). No-op when absent. */
void prober_remove(struct prober *p, const char *key);
/* The cached result; UNKNOWN when key is not registered. */
enum probe_tcp prober_result(struct prober *p, const char *key);
/* Counters for tests and metrics: registered keys, connects in flight now, the most ever in
 * flight at once, connects started in total. */
struct prober_stats {
    size_t keys, in_flight, max_in_flight;
    unsigned long started;
};
void prober_get_stats(struct prober *p, struct prober_stats *ret);

#endif
