/* vm_step.h: the steps of a VirtualMachine reconcile, as one enum that vmsync reports (which
 * actions it did, where it failed) and status and events read, without parsing text.
 * vm_step_str() gives the words users see in messages ("create failed: ...").
 * Pure; no dependencies.
 */
#ifndef VMOP_VM_STEP_H
#define VMOP_VM_STEP_H

enum vm_step {
    VM_STEP_NONE = 0,  /* nothing failed / unknown: shown as "reconcile" */
    VM_STEP_CONNECT,   /* reaching vCenter */
    VM_STEP_LOOKUP,    /* resolving port groups and other inventory paths */
    VM_STEP_OBSERVE,   /* reading the VM */
    VM_STEP_OWNERSHIP, /* a VM that is not the resource's holds its identity */
    VM_STEP_STORAGE,   /* the storage policy cannot be satisfied (before a create) */
    VM_STEP_ADOPT,     /* marking a VM an earlier vmop release created */
    VM_STEP_PLAN,      /* planning the actions */
    VM_STEP_CREATE,    /* the plan's actions (plan.h pl_kind, see vm_step_of_kind()) ... */
    VM_STEP_REOBSERVE,
    VM_STEP_RECONFIGURE,
    VM_STEP_POWER_ON,
    VM_STEP_POWER_OFF,
    VM_STEP_SUSPEND,
    VM_STEP_DESTROY,
    VM_STEP_UPGRADE, /* ... */
    VM_STEP_RESTART, /* nextRestartTime */
    VM_STEP_N
};

/* A bit per step, for sets of steps done (vs_outcome.did). */
#define VM_DID(step) (1u << (step))

/* "reconcile", "connect", "lookup", "observe", "ownership", "storage", "adopt", "plan",
 * "create", "re-observe", "reconfigure", "power-on", "power-off", "suspend", "destroy",
 * "upgrade", "restart". */
const char *vm_step_str(enum vm_step s);

#endif
