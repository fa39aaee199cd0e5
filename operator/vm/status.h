/* status.h: pure: what was observed in vCenter + what the reconcile did -> the VirtualMachine's
 * status (fields and conditions), and whether it differs from the stored one.
 *
 * Owns: every status field the VM controller writes (uniqueID, biosUUID, instanceUUID,
 * powerState, network.primaryIP4 / hostName / interfaces, hardwareVersion, class) and the
 * conditions VirtualMachineCreated, VirtualMachinePowerStateSynced, VirtualMachineReconcileReady,
 * Ready, plus the resolver's prerequisite conditions copied in. Status is derived only from the
 * observation: a VM that is not found has no uniqueID / powerState / network.
 *
 * Ready (vmop's rule, docs/user-guide.md): with a readiness probe, the probe's verdict; without
 * one, True once the VM exists, its power state matches spec and, when it is powered on with
 * networking, it has a primary IPv4 address. kubectl wait --for=condition=Ready is then meaningful.
 *
 * Ownership: inputs are borrowed; *ret_status is the caller's (cJSON_Delete). No I/O, no clock
 * (now comes in), no secrets (messages come from the resolver, vCenter faults and fixed text).
 */
#ifndef VMOP_STATUS_H
#define VMOP_STATUS_H

#include <stddef.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "api_vm.h"
#include "resolve.h"
#include "vm_step.h"
#include "vmop_err.h"

#define ST_MAX_NICS 16

#define ST_REASON_PAUSED "VirtualMachineReconcilePaused"
#define ST_MSG_PAUSED    "Virtual Machine reconcile has been paused by DevOps"
#define ST_API_VERSION   "vmoperator.vmware.com/v1alpha6"
#define ST_CLASS_KIND    "VirtualMachineClass"

struct st_nic {
    const char *name; /* spec interface name (by position), or NULL */
    int device_key;
    const char *mac;
    const char *const *ips; /* guest-reported addresses of this MAC */
    size_t n_ips;
};

/* What vCenter shows (all borrowed). */
struct st_obs {
    int present;
    const char *unique_id, *bios_uuid, *instance_uuid;
    enum api_power_state power;
    const char *primary_ip4, *host_name;
    int hw_version; /* 0 unknown */
    struct st_nic nics[ST_MAX_NICS];
    size_t n_nics;
};

enum st_kind {
    ST_PAUSED,    /* only VirtualMachineReconcileReady changes */
    ST_NOT_READY, /* prerequisites missing: no vCenter change was attempted */
    ST_SYNCED,    /* vCenter was made to match (obs is the result) */
    ST_FAILED,    /* a vCenter or Kubernetes step failed: fail_* say which */
};

enum st_probe { ST_PROBE_NONE = 0, ST_PROBE_READY, ST_PROBE_NOT_READY, ST_PROBE_UNKNOWN };

struct st_input {
    const struct api_vm *vm; /* the VM as read (spec and the old status) */
    enum st_kind kind;
    const struct rs_result *rs; /* resolver result (prerequisite conditions); NULL: leave them */
    const struct st_obs *obs;   /* NULL: not observed (the old observed fields stay) */
    enum vm_step fail_step;     /* where it failed (VM_STEP_NONE: "reconcile"); messages say
                                 * vm_step_str(). VM_STEP_STORAGE (the storage policy cannot be
                                 * satisfied) also sets VirtualMachineStorageReady False with
                                 * fail_reason; VM_STEP_OWNERSHIP (a VM that is not the
                                 * resource's holds its identity) sets VirtualMachineCreated and
                                 * Ready False with fail_reason and fail_message as they are
                                 * (pass obs NULL) */
    const char *fail_reason;    /* fault name or rc name, used as the condition reason */
    const char *fail_message;
    int needs_power_cycle;
    int power_unreachable;
    /* other changes waiting for the VM to be off ("guestId,version"): ReconcileReady False
     * PowerCyclePending names them; NULL / "" = none */
    const char *pending_fields;
    /* what the reconcile found it cannot do with a field the resolver accepted (a boot disk it
     * will not shrink): joins VirtualMachineFieldsSupported (False, NotSupported); NULL: none */
    const char *field_note;
    enum st_probe probe;
    const char *probe_message;
    const char *last_restart_time; /* set: status.lastRestartTime (a restart was just done) */
};

/* VirtualMachineClassConfigurationSynced (resize): with the VM present, False with
 * ST_REASON_CLASS_UPDATED and the resolver's message when the class changed under a VM without the
 * same-class-resize annotation (rs->desired.class_held: nothing of the class is applied); else
 * True when the class's CPU/memory are applied; False when they wait for a power cycle, reason
 * ST_REASON_CLASS_CHANGED (spec.className differs from status.class), ST_REASON_SAME_CLASS_RESIZE
 * (the same-class-resize annotation is set) or ST_REASON_CLASS_UPDATED (the class itself
 * changed). */
#define ST_ANNOT_SAME_CLASS_RESIZE  "vmoperator.vmware.com/same-vm-class-resize"
#define ST_REASON_CLASS_CHANGED     "ClassNameChanged"
#define ST_REASON_CLASS_UPDATED     "ClassUpdated"
#define ST_REASON_SAME_CLASS_RESIZE "SameClassResize"

/* Builds the new status from vm's current status and in. *ret_changed = 1 when it differs from
 * the stored status (so a PATCH is needed). */
vmop_rc st_build(const struct st_input *in, time_t now, cJSON **ret_status, int *ret_changed,
                 struct vmop_err *err);

/* A merge patch {"status": new} that also removes (null) the top-level status fields the old
 * status had and the new one lacks. *ret_patch: caller's. */
vmop_rc st_patch(const cJSON *old_status, const cJSON *new_status, cJSON **ret_patch,
                 struct vmop_err *err);

/* Maps a vmop_rc and fault to a condition reason (CamelCase, no spaces): the fault when set
 * (sanitized), else a name for the code ("Timeout", "ConnectionError", ...). */
void st_reason_for(vmop_rc rc, const char *fault, char *buf, size_t size);

#endif
