/* plan.h: what to do in vCenter to make a VM what the resolver wants (pure: no I/O).
 *
 * Owns: the typed observation the planner reads (struct pl_obs, filled by vmsync from vimclient),
 * the comparison of desired vs observed, and the ordered action list (struct pl_plan). vmsync.c
 * executes plans; it re-observes and re-plans at each PL_REOBSERVE, so an action after a
 * REOBSERVE is a preview (flag `deferred`) that is recomputed from what vCenter then shows.
 *
 * Create sequence (VM absent):  CREATE, REOBSERVE, RECONFIGURE(hardware, NICs, managedBy, BIOS
 *   UUID), REOBSERVE, RECONFIGURE(guestinfo: the metadata needs the NIC MACs), POWER_ON.
 * Present VM: power-off / suspend first (so CPU and memory changes can apply), then one
 *   RECONFIGURE with every differing field (NIC changes: REOBSERVE and a separate guestinfo
 *   RECONFIGURE after it), then power-on. numCPUs / memoryMB changes on a VM that is and stays
 *   powered on are not planned: plan->needs_power_cycle is set and plan->deferred_fields says
 *   which (reservations and limits are applied live: vSphere allows that on a running VM).
 * Comparison rules: only fields vmop sets are compared; allocations compare reservation and limit
 *   (unset reads as reservation 0 / limit unlimited), shares are always sent as normal; guestinfo
 *   compares the DECODED content and the encoding key (the simulator's extraConfig is
 *   append-only and last-wins, so comparing raw values would loop); NICs are matched by position
 *   (device key order) and compared by DV switch UUID + port group key; extra NICs are removed,
 *   missing ones added as VMXNet3. managedBy is {com.vmware.vcenter.wcp, VirtualMachine}, as VM
 *   Operator writes it (tools that honour it treat vmop VMs like VM Service VMs).
 * Restart (rs_desired.restart_for): a PL_RESTART, last, when the VM is to be powered on, no
 *   power-off or suspend is planned and the VM's restart marker does not name restart_for yet
 *   (a VM powered on by this plan is restarted after it, as VM Operator does).
 * Power modes: UNSET is TrySoft (the CRD default). A suspended VM cannot be shut down softly:
 *   Soft leaves it suspended, TrySoft powers it off hard. A powered-off VM cannot be suspended.
 *
 * Configuration beyond sizing (rs_desired: guestId, firmware, bootOptions, changeTrackingEnabled,
 *   the class's extraConfig and NIC adapter types, boot disk size, hardware version): compared
 *   only when desired sets it. guestId, firmware and bootOptions, like numCPUs / memoryMB, change
 *   only while the VM is off (on a running VM: deferred_fields, needs_power_cycle stays for the
 *   class's CPU/memory); the hardware version is raised by a PL_UPGRADE (UpgradeVM_Task) while
 *   off, before the reconfigure (on a running VM: deferred, PL_F_HW_VERSION). changeTracking,
 *   extraConfig and the disk apply live. The boot disk (the disk with the lowest device key) only
 *   grows: a smaller bootDiskCapacity is not planned and sets disk_not_shrunk. A NIC whose
 *   adapter type differs from the class's is removed and added again with that type, and so is
 *   every NIC after it (positions follow device keys). A bootOrder entry naming a NIC that does
 *   not exist yet waits for the REOBSERVE after the NIC change.
 * Held class (rs_desired.class_held, and not just created): sizing and everything that came from
 *   the class (from_class, class_hw_version, extra, NIC types) are not compared.
 *
 * Ownership: a struct pl_plan owns metadata_json (free with pl_plan_free); every pointer in a
 * struct pl_obs / pl_input is borrowed by the planner. User data is compared, never copied.
 */
#ifndef VMOP_PLAN_H
#define VMOP_PLAN_H

#include <stddef.h>

#include "api_vm.h"
#include "resolve.h"
#include "vm_step.h"
#include "vmop_err.h"

#define PL_MANAGED_BY_EXT  "com.vmware.vcenter.wcp"
#define PL_MANAGED_BY_TYPE "VirtualMachine"
#define PL_KEY_NAMESPACED  "vmservice.namespacedName"
/* ExtraConfig key that records in vCenter the nextRestartTime a restart was started for (VM
 * Operator's key). PL_RESTART writes it BEFORE the reset: a crash between the two loses that one
 * restart instead of restarting twice (at most once), and the status then takes
 * lastRestartTime from it. */
#define PL_KEY_LAST_RESTART "vmservice.lastRestartTime"

#define PL_MAX_OBS_NICS 16 /* observed NICs (vSphere allows 10 per VM); vmsync refuses more */
#define PL_MAX_ACTIONS  10
#define PL_MAX_BOOT     16     /* observed bootOrder entries kept */
#define PL_ALLOC_UNSET  (-2LL) /* as vimclient's VIM_ALLOC_UNSET */

enum pl_power { PL_STATE_UNKNOWN = 0, PL_STATE_ON, PL_STATE_OFF, PL_STATE_SUSPENDED };

/* A bootOrder entry as planned or observed (kind -1: a device type vmop does not write). */
struct pl_boot_entry {
    int kind;       /* enum rs_boot_kind, or -1 */
    int device_key; /* disk / ethernet */
};

struct pl_obs_nic {
    int key;                 /* device key */
    const char *device_type; /* "VirtualVmxnet3", ... */
    const char *mac;
    const char *switch_uuid, *portgroup_key; /* NULL unless DV port group backed */
};

/* What vCenter shows (vmsync fills it from a vim_vm). present = 0: absent, the rest is ignored. */
struct pl_obs {
    int present;
    int is_template;
    enum pl_power power;
    const char *bios_uuid, *instance_uuid;
    const char *managed_by_ext, *managed_by_type;
    const char *namespaced_name; /* extraConfig vmservice.namespacedName */
    long long num_cpus, memory_mb;
    long long cpu_reservation, cpu_limit; /* MHz; PL_ALLOC_UNSET when absent, limit -1 = none */
    long long mem_reservation, mem_limit; /* MB */
    struct pl_obs_nic nics[PL_MAX_OBS_NICS];
    size_t n_nics;
    /* guestinfo, decoded (NULL: key absent or not decodable) */
    const char *metadata;
    const char *metadata_encoding; /* raw value of guestinfo.metadata.encoding */
    const char *userdata;          /* secret: compared only */
    size_t userdata_len;
    const char *userdata_encoding;
    /* configuration beyond sizing (unknown: NULL / 0 / -1) */
    const char *guest_id, *firmware;
    int hw_version; /* config.version vmx-N, 0 unknown */
    int cbt;        /* changeTrackingEnabled: -1 unknown, 0, 1 */
    struct {
        long long delay_ms, retry_delay_ms; /* -1 unset (reads as 0) */
        int retry, efi_secure_boot;         /* -1 unset (reads as off) */
        const char *network_protocol;
        struct pl_boot_entry order[PL_MAX_BOOT];
        size_t n_order;
    } boot;
    const char *restart_marker; /* extraConfig PL_KEY_LAST_RESTART, or NULL */
    int disk_key;               /* the boot disk (lowest device key), 0 = none */
    long long disk_kb;          /* its capacity */
    const char *(*extra_get)(const void *ud, const char *key); /* extraConfig lookup, or NULL */
    const void *extra_ud;
};

/* The DV port group backing resolved for desired NIC i. */
struct pl_backing {
    const char *switch_uuid, *portgroup_key;
};

struct pl_input {
    const struct rs_desired *desired;
    const struct pl_backing *backings; /* desired->n_nics entries */
    const struct pl_obs *obs;
    int created; /* this apply cloned the VM: a held class is applied in full (a new VM) */
};

enum pl_kind {
    PL_CREATE,      /* clone the image cache template with instanceUuid + namespacedName */
    PL_REOBSERVE,   /* read the VM again and re-plan the rest */
    PL_RECONFIGURE, /* ReconfigVM_Task with `fields` (and `nic_ops`) */
    PL_POWER_ON,
    PL_POWER_OFF, /* mode: Hard PowerOffVM_Task, Soft ShutdownGuest, TrySoft soft then hard */
    PL_SUSPEND,   /* mode: Hard SuspendVM_Task, Soft StandbyGuest, TrySoft soft then hard */
    PL_DESTROY,
    PL_UPGRADE, /* UpgradeVM_Task to vmx-<hw_version> (the VM is off) */
    PL_RESTART, /* mark PL_KEY_LAST_RESTART = desired.restart_for, then by mode: Hard
                 * ResetVM_Task, Soft RebootGuest, TrySoft RebootGuest and ResetVM_Task when
                 * the guest cannot reboot itself */
};
const char *pl_kind_str(enum pl_kind k); /* "create", "reconfigure", "power-on", ... */
/* The reconcile step (vm_step.h) an action is. */
enum vm_step vm_step_of_kind(enum pl_kind k);

enum pl_mode { PL_MODE_HARD, PL_MODE_SOFT, PL_MODE_TRYSOFT };
const char *pl_mode_str(enum pl_mode m); /* "Hard", "Soft", "TrySoft" */

/* Fields of a RECONFIGURE (bits). */
#define PL_F_NUM_CPUS        0x0001u
#define PL_F_MEMORY          0x0002u
#define PL_F_CPU_RESERVATION 0x0004u
#define PL_F_CPU_LIMIT       0x0008u
#define PL_F_MEM_RESERVATION 0x0010u
#define PL_F_MEM_LIMIT       0x0020u
#define PL_F_NICS            0x0040u /* see nic_ops */
#define PL_F_MANAGED_BY      0x0080u
#define PL_F_BIOS_UUID       0x0100u
#define PL_F_NAMESPACED_NAME 0x0200u
#define PL_F_METADATA        0x0400u /* guestinfo.metadata + .encoding */
#define PL_F_USERDATA        0x0800u /* guestinfo.userdata + .encoding (set, or removed) */
#define PL_F_GUEST_ID        0x1000u
#define PL_F_FIRMWARE        0x2000u
#define PL_F_BOOT_OPTIONS    0x4000u
#define PL_F_CBT             0x8000u  /* changeTrackingEnabled */
#define PL_F_EXTRA_CONFIG    0x10000u /* the class's extraConfig keys */
#define PL_F_BOOT_DISK       0x20000u /* grow the boot disk */
#define PL_F_HW_VERSION      0x40000u /* in deferred_fields only (an upgrade waits) */
#define PL_F_OFFLINE         (PL_F_HARDWARE | PL_F_GUEST_ID | PL_F_FIRMWARE | PL_F_BOOT_OPTIONS)
#define PL_F_HARDWARE        (PL_F_NUM_CPUS | PL_F_MEMORY)
#define PL_F_CPU_ALLOC       (PL_F_CPU_RESERVATION | PL_F_CPU_LIMIT)
#define PL_F_MEM_ALLOC       (PL_F_MEM_RESERVATION | PL_F_MEM_LIMIT)
#define PL_F_GUESTINFO       (PL_F_METADATA | PL_F_USERDATA)

/* Writes "numCPUs,memoryMB,..." (the vSphere names) for the bits in f. */
void pl_fields_str(unsigned f, char *buf, size_t size);

enum pl_nic_op_kind { PL_NIC_ADD, PL_NIC_EDIT, PL_NIC_REMOVE };
struct pl_nic_op {
    enum pl_nic_op_kind op;
    size_t desired; /* ADD/EDIT: index into desired->nics / backings */
    size_t obs;     /* EDIT/REMOVE: index into obs->nics */
};

struct pl_action {
    enum pl_kind kind;
    enum pl_mode mode; /* power actions */
    unsigned fields;   /* RECONFIGURE */
    /* a NIC type change is a remove and an add: up to two operations per NIC */
    struct pl_nic_op nic_ops[2 * PL_MAX_OBS_NICS];
    size_t n_nic_ops;
    int hw_version; /* PL_UPGRADE: the version */
    int deferred;   /* after a REOBSERVE: recomputed from the new observation before it runs */
};

struct pl_plan {
    struct pl_action actions[PL_MAX_ACTIONS];
    size_t n;
    int needs_power_cycle;    /* CPU/memory differ on a running VM and were not planned */
    unsigned deferred_fields; /* which ones, and the other PL_F_OFFLINE / PL_F_HW_VERSION
                               * fields that wait for the VM to be off */
    int disk_not_shrunk;      /* bootDiskCapacity is below the boot disk's size (disk_kb) */
    long long disk_kb;        /* the boot disk's capacity in KB */
    int power_unreachable;    /* the wanted power state cannot be reached from the current one
                               * with the given mode (Soft from suspended, suspend from off) */
    char *metadata_json;      /* owned: the metadata document wanted (cloud-init), or NULL */
};

/* Plans. ret is always initialized (free with pl_plan_free); errors only for NOMEM or a desired
 * state that cannot be expressed (e.g. bad cloud-init data: VMOP_E_INVALID). */
vmop_rc pl_plan(const struct pl_input *in, struct pl_plan *ret, struct vmop_err *err);

/* Plans a delete: nothing when absent; else POWER_OFF (mode; UNSET = TrySoft, the CRD's default
 * and what every other power-off uses) when powered on
 * (suspended VMs are powered off hard: Soft cannot), then DESTROY. */
void pl_plan_delete(const struct pl_obs *obs, enum api_power_mode mode, struct pl_plan *ret);

void pl_plan_free(struct pl_plan *p);

/* The guestinfo metadata document for desired with the observed NIC MACs (by position). Used by
 * pl_plan; exposed for tests. ret_json: malloc'd, caller frees. */
vmop_rc pl_metadata_json(const struct rs_desired *d, const struct pl_obs *obs, char **ret_json,
                         struct vmop_err *err);

/* The desired bootOrder with device keys from obs (NICs by position, the boot disk). Entries whose
 * device obs lacks are left out; *ret_waits = 1 when a NIC is among them. ret has
 * RS_MAX_BOOT_ORDER slots; returns the count. */
size_t pl_boot_order(const struct rs_desired *d, const struct pl_obs *o, struct pl_boot_entry *ret,
                     int *ret_waits);

/* The hardware version wanted: max(spec, class unless held); 0 none. */
int pl_hw_version_wanted(const struct pl_input *in);

/* Maps a power mode (UNSET -> TrySoft). */
enum pl_mode pl_mode_from_api(enum api_power_mode m);

/* The wait of a Soft/TrySoft power-off or standby (ShutdownGuest / StandbyGuest return once
 * asked): the delay before read number `attempt` (0-based) of the VM's power state. No guest is
 * down the moment it is asked, so the first read comes after PL_SOFT_POLL_MIN_MS, not at once (at
 * once it nearly always found the VM still on and cost a read per delete); then doubling to
 * PL_SOFT_POLL_MAX_MS. The caller stops at its deadline (--trysoft-timeout). */
#define PL_SOFT_POLL_MIN_MS 200L
#define PL_SOFT_POLL_MAX_MS 2000L
long pl_soft_poll_ms(unsigned attempt);
/* The same wait when the change feed holds the VM (vmsync.h vs_events): the feed's report of the
 * new power state ends it without a read; a read at pl_feed_backstop_ms(attempt) (1 s doubling to
 * 8 s) covers a feed that lags (the simulator's does under bursts) without waiting for it long. */
#define PL_FEED_BACKSTOP_MIN_MS 1000L
#define PL_FEED_BACKSTOP_MAX_MS 8000L
long pl_feed_backstop_ms(unsigned attempt);

#endif
