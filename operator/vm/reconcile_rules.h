/* reconcile_rules.h: the decisions of the VM reconcile's steps that need no I/O, so each can be
 * unit tested: which events an apply makes (step_events), when to look at the VM again
 * (step_requeue) and whether a create's status write waits for its IP. The controller
 * (vm_controller.c) gathers the facts from vmsync's outcome, the resource and the change feed,
 * calls these, and does the I/O (events, the work queue).
 *
 * Pure: no I/O, no globals; thread-safe. Every string in the facts is borrowed.
 */
#ifndef VMOP_RECONCILE_RULES_H
#define VMOP_RECONCILE_RULES_H

#include <stddef.h>

#include "api_vm.h"
#include "vm_step.h"

#define RR_MSG_MAX    1536
#define RR_MAX_EVENTS 12

/* What one apply did and found, as the events read it. */
struct rr_apply_facts {
    unsigned did;                /* VM_DID() bits of the actions done (vm_step.h) */
    int created;                 /* the VM was cloned by this apply */
    int adopted;                 /* a legacy VM got vmop's mark */
    int present;                 /* a VM of this resource exists now */
    const char *unique_id;       /* its moref ("" unknown) */
    const char *prior_unique_id; /* status.uniqueID before this reconcile, or NULL */
    const char *foreign_ref;     /* status.uniqueID named a VM not this resource's, or NULL */
    const char *foreign_why;
    const char *done;          /* vmsync's "create, reconfigure(numCPUs), power-on" ("" none) */
    const char *restart_how;   /* with VM_STEP_RESTART: "ResetVM_Task", ... */
    const char *restart_mode;  /* "Hard", "Soft", "TrySoft" */
    const char *restart_for;   /* spec.nextRestartTime */
    enum api_power_state want; /* spec.powerState */
    enum api_power_state was;  /* status.powerState before this reconcile */
    int spec_unchanged;        /* metadata.generation = status.observedGeneration and the class name
                                * unchanged: a reconfigure now can only be drift */
    /* a failed apply (failed_step != VM_STEP_NONE) */
    enum vm_step failed_step;
    const char *fail_reason, *fail_message;
};

struct rr_event {
    const char *type;   /* "Normal" or "Warning" */
    const char *reason; /* PoweredOn, PowerStateDrift, CreateFailed, ... */
    int drift;          /* counts as drift set back (vmop_vm_drift_repaired_total) */
    char message[RR_MSG_MAX];
};

/* The events of one apply, in the order they are recorded, into ret[0..max); returns the count.
 * Recreated (VirtualMachineNotFound), foreign uniqueID (OwnershipConflict), Adopted, Created,
 * PowerStateDrift / ConfigurationDrift, PoweredOn, PowerOff, Suspended, Reconfigured, Restarted,
 * then the failure: CreateFailed (create or storage), RestartFailed, else ReconcileFailed. */
size_t rr_apply_events(const struct rr_apply_facts *f, struct rr_event *ret, size_t max);

/* What decides when to look again after a reconcile that reached vCenter. */
struct rr_requeue_facts {
    int present;          /* the VM exists */
    int powered_on;       /* observed PoweredOn */
    int network_disabled; /* spec.network.disabled */
    int has_ip;           /* status.network.primaryIP4 known */
    int probe_pending;    /* the readiness probe is NotReady or Unknown */
    int feed_live;        /* a live change feed watches this vCenter */
    int feed_holds_vm;    /* and it holds this VM */
    int created;          /* this reconcile created the VM */
    int changed;          /* this reconcile changed something in vCenter */
    long hold_left_ms;    /* a held create's status write (pacing.h): ms left of its hold */
    long unwatched_ms;    /* the back-off for a VM the feed does not hold (age based) */
};

/* Milliseconds until the next look (0: none, events will tell). Waiting for an IP without a
 * live feed or for a probe: short; no live feed otherwise: unwatched_ms; a VM the live feed does
 * not hold yet: short when just created, else unwatched_ms. */
long rr_requeue_ms(const struct rr_requeue_facts *f, long wait_delay_ms, long wait_max_ms);

/* Whether the status write of a reconcile that created a VM waits for the VM's IP, and how long
 * at most (0: write now). It waits when this reconcile created the VM and it is PoweredOn without
 * an IP yet, an IP is expected (network not disabled) and a live change feed will tell when it
 * arrives: the reconcile that event starts writes the status once, with the IP, instead of a
 * write now and another one then. Each status write costs the API server a patch and a conversion
 * for every other served version's watch cache (docs/performance.md). The reconcile is queued
 * again after hold_ms, so the status is written then even when no IP comes. A later reconcile
 * of a create whose hold is not over (hold_left_ms > 0) that changed nothing in vCenter holds on
 * the same terms for what is left of it (a change the feed heard before the IP, such as the
 * create's own, starts one). Uses only present, powered_on, network_disabled, has_ip, feed_live,
 * created, changed and hold_left_ms. */
long rr_status_hold_ms(const struct rr_requeue_facts *f, long hold_ms);

#endif
