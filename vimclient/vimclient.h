/* vimclient.h: a C client for vCenter: SOAP vim25 (libxml2) and REST vAPI (cJSON), over libcurl.
 *
 * vimclient knows nothing of Kubernetes. It is what the operator (and the `vimc` command-line tool)
 * use to find, create, change and destroy VMs and to read Content Libraries.
 *
 * Errors: every call returns a vmop_rc and fills a caller-owned struct vmop_err
 * (api/base/vmop_err.h). A SOAP fault or a task error is VMOP_E_FAULT with err->fault set to the
 * vSphere fault type
 * ("InvalidPowerState", "ManagedObjectNotFound", "DuplicateName", ...). Wrong credentials are
 * VMOP_E_AUTH (never retried). Lookups that find nothing return VMOP_E_NOT_FOUND.
 *
 * Ownership: out-parameters are named ret_*; they are set only on success, and each type says how
 * it is freed (every *_free accepts NULL). Strings passed in are copied when kept.
 *
 * Threads: one struct vim_client may be used from several threads at once. Each call borrows a
 * connection (a libcurl easy handle) from the client's pool; cookies (the session) are shared
 * between the pool's handles. A session that expires (NotAuthenticated, or a RetrieveProperties
 * missingSet with NotAuthenticated, or REST 401) is re-established once, under a lock, and the call
 * retried. A struct vim_watch (WaitForUpdatesEx) uses its own PropertyCollector and connection so a
 * long wait never blocks other calls. Results (struct vim_vm, ...) are plain data: use them from
 * any thread, free them once.
 */
#ifndef VIMCLIENT_H
#define VIMCLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "vmop_err.h"

/* ---- connection ------------------------------------------------------------------------------ */

struct vim_client;

enum vim_fault { VIM_FAULT_NONE, VIM_FAULT_BEFORE, VIM_FAULT_AFTER };

struct vim_config {
    const char *url; /* "https://vc.example.com" (path /sdk is added for SOAP, /rest for REST);
                      * "http://" only for tests */
    const char *username;
    const char *password;   /* copied into the client; zeroed when the client is freed */
    const char *ca_file;    /* PEM bundle to verify the server; NULL = system CAs */
    const char *thumbprint; /* pin the leaf certificate instead of CA verification: SHA-1 as vCenter
                             * shows it ("AB:CD:..", 20 bytes) or SHA-256 (32 bytes); case and ':'
                             * are ignored. NULL = no pinning */
    int insecure;           /* 1 = no verification at all; only when asked for explicitly */
    long timeout_ms;        /* bound on every call; 0 = 60000 */
    long connect_timeout_ms; /* 0 = 10000 */
    int max_connections;     /* pool size; 0 = 8 */
    /* Fault injection, for tests in the style of curl's torture tests; NULL in production.
     * Called before every HTTP request (SOAP, REST, login included) with its number on this
     * client (1, 2, ...): VIM_FAULT_BEFORE fails it with VMOP_E_TRANSPORT before anything is
     * sent; VIM_FAULT_AFTER sends it, then fails it as if the response were lost (vCenter did
     * the work, the caller does not know). */
    enum vim_fault (*fault)(void *ud, unsigned long n, const char *method, const char *path);
    void *fault_ud;
};

/* Validates cfg and builds a client; does no I/O (the first call logs in). */
vmop_rc vim_client_new(const struct vim_config *cfg, struct vim_client **ret_client,
                       struct vmop_err *err);
/* Logs out (best effort, bounded) and frees. NULL is fine. */
void vim_client_free(struct vim_client *c);

/* Logs in now (SOAP and, lazily, REST). Calls log in on demand, so this is only needed to check
 * credentials early. Wrong credentials: VMOP_E_AUTH with fault "InvalidLogin". */
vmop_rc vim_login(struct vim_client *c, struct vmop_err *err);
vmop_rc vim_logout(struct vim_client *c, struct vmop_err *err);

/* Server facts from ServiceContent.about. Strings owned by the client, valid until it is freed;
 * NULL before the first successful call. */
const char *vim_about_api_version(struct vim_client *c);
const char *vim_about_full_name(struct vim_client *c);
const char *vim_about_instance_uuid(struct vim_client *c);

/* Counters for benchmarks and metrics (monotonic, thread-safe reads). */
struct vim_stats {
    uint64_t soap_calls;
    uint64_t rest_calls;
    uint64_t logins;
    uint64_t relogins; /* logins caused by an expired session */
};
void vim_client_stats(struct vim_client *c, struct vim_stats *ret_stats);

/* Per-method call counters for metrics: SOAP calls by method ("RetrievePropertiesEx"), REST calls
 * by route template ("GET /rest/com/vmware/content/library/item/{id}", ids never appear; each
 * attempt of a call counts; logins count in vim_stats only). fn is called once per method called so
 * far (at most VIM_METHOD_STATS_MAX; later methods add up under "other"), in first-call order, on a
 * snapshot (fn runs without the client's locks; s->method is valid during the call only). errors
 * counts calls that failed for any reason (transport, HTTP, fault); seconds is the time spent,
 * including WaitForUpdatesEx long polls. */
#define VIM_METHOD_STATS_MAX 64
#define VIM_METHOD_NAME_MAX  128
struct vim_method_stat {
    const char *method;
    uint64_t calls, errors;
    double seconds;
};
void vim_client_method_stats(struct vim_client *c,
                             void (*fn)(void *ud, const struct vim_method_stat *s), void *ud);

/* ---- managed object references --------------------------------------------------------------- */

#define VIM_MOREF_TYPE_MAX  64
#define VIM_MOREF_VALUE_MAX 192

struct vim_moref {
    char type[VIM_MOREF_TYPE_MAX];   /* "VirtualMachine", "Folder", ... ; "" = unset */
    char value[VIM_MOREF_VALUE_MAX]; /* "vm-63" */
};

/* Fills ref; VMOP_E_INVALID if a part is too long or empty. */
vmop_rc vim_moref_set(struct vim_moref *ref, const char *type, const char *value);
int vim_moref_is_set(const struct vim_moref *ref);
int vim_moref_eq(const struct vim_moref *a, const struct vim_moref *b);

/* ---- inventory ---------------------------------------------------------------------------------
 */

/* SearchIndex.FindByInventoryPath ("/DC0/host/DC0_C0/Resources"). VMOP_E_NOT_FOUND if absent.
 * If want_type is non-NULL the object must be of that type (else VMOP_E_INVALID). */
vmop_rc vim_find_by_path(struct vim_client *c, const char *path, const char *want_type,
                         struct vim_moref *ret_ref, struct vmop_err *err);

/* SearchIndex.FindByUuid for VMs: by BIOS UUID (instance_uuid = 0) or instance UUID (1).
 * The UUID is matched case-insensitively (it is lower-cased before the call). */
vmop_rc vim_find_vm_by_uuid(struct vim_client *c, const char *uuid, int instance_uuid,
                            struct vim_moref *ret_vm, struct vmop_err *err);

/* A resolved placement/network object. Strings are owned by the struct. */
struct vim_network {
    struct vim_moref ref; /* Network, DistributedVirtualPortgroup or OpaqueNetwork */
    char *name;
    int is_dvpg;         /* 1 for a distributed port group */
    char *portgroup_key; /* DVPG key (NULL unless is_dvpg) */
    char *switch_uuid;   /* uuid of the DVPG's DistributedVirtualSwitch (NULL unless is_dvpg) */
};
/* Resolves a network by inventory path ("/DC0/network/DC0_DVPG0") or, if `path` does not start
 * with '/', by name inside datacenter `dc` (may be NULL when path is absolute). */
vmop_rc vim_network_lookup(struct vim_client *c, const struct vim_moref *dc, const char *path,
                           struct vim_network **ret_net, struct vmop_err *err);
void vim_network_free(struct vim_network *n);

/* Lowest CPU MHz of the connected hosts of a cluster (ClusterComputeResource or ComputeResource):
 * milli-CPU to MHz conversion for reservations uses it. */
vmop_rc vim_cluster_min_cpu_mhz(struct vim_client *c, const struct vim_moref *cluster, int *ret_mhz,
                                struct vmop_err *err);
/* ResourcePool.owner: the ComputeResource or ClusterComputeResource a pool belongs to. */
vmop_rc vim_pool_owner(struct vim_client *c, const struct vim_moref *pool,
                       struct vim_moref *ret_owner, struct vmop_err *err);

/* One inventory entry as listed by vim_list(). */
struct vim_entity {
    struct vim_moref ref;
    char *name;
    char *path; /* inventory path when known, else NULL */
};
struct vim_entity_list {
    struct vim_entity *items;
    size_t n;
};
void vim_entity_list_free(struct vim_entity_list *l);
/* Every object of `type` ("VirtualMachine", "Datastore", "Network", "ResourcePool", ...) under
 * container `root` (NULL = root folder), recursively, via a ContainerView. */
vmop_rc vim_list(struct vim_client *c, const struct vim_moref *root, const char *type,
                 struct vim_entity_list *ret_list, struct vmop_err *err);

/* ---- virtual machines: typed read ------------------------------------------------------------ */

enum vim_power_state {
    VIM_POWER_UNKNOWN = 0,
    VIM_POWER_ON,        /* poweredOn */
    VIM_POWER_OFF,       /* poweredOff */
    VIM_POWER_SUSPENDED, /* suspended */
};
const char *vim_power_state_str(enum vim_power_state s); /* vSphere spelling: "poweredOn", ... */

enum vim_shares_level {
    VIM_SHARES_UNSET = 0,
    VIM_SHARES_LOW,
    VIM_SHARES_NORMAL,
    VIM_SHARES_HIGH,
    VIM_SHARES_CUSTOM,
};
/* vSphere spelling: "low", "normal", "high", "custom"; NULL for VIM_SHARES_UNSET. */
const char *vim_shares_level_str(enum vim_shares_level l);

/* ResourceAllocationInfo. Absent numbers are -2 in a read (VIM_ALLOC_UNSET); limit -1 = unlimited.
 */
#define VIM_ALLOC_UNSET (-2LL)
struct vim_alloc {
    long long reservation; /* MHz for CPU, MB for memory */
    long long limit;       /* -1 = unlimited */
    enum vim_shares_level shares_level;
    int shares;     /* used with VIM_SHARES_CUSTOM */
    int expandable; /* -1 unset, 0, 1 (expandableReservation) */
};

struct vim_nic {
    int key;           /* device key (4000, ...) */
    char *device_type; /* "VirtualVmxnet3", "VirtualE1000", ... */
    char *label;       /* deviceInfo.label */
    char *mac;
    char *portgroup_key; /* DVPG backing: port.portgroupKey, else NULL */
    char *switch_uuid;   /* DVPG backing: port.switchUuid, else NULL */
    char *network_name;  /* standard backing: deviceName, else NULL */
    int connected;
    int start_connected;
    int controller_key; /* controllerKey, -1 unknown (sent back on edits) */
    int unit_number;    /* unitNumber, -1 unknown */
};

struct vim_disk {
    int key;               /* device key (2000, ...) */
    long long capacity_kb; /* capacityInKB, 0 unknown */
    char *file_name;       /* backing.fileName, "[datastore] dir/name.vmdk", or NULL */
    /* what an edit sends back (vim_cs_disk_capacity): the device as read */
    long long capacity_bytes;        /* capacityInBytes, 0 unknown */
    char *backing_type;              /* xsi:type of backing ("VirtualDiskFlatVer2BackingInfo") */
    char *label;                     /* deviceInfo.label ("Hard disk 1"), or NULL */
    char *disk_mode;                 /* backing.diskMode ("persistent"), or NULL */
    int thin;                        /* backing.thinProvisioned: -1 unknown, 0, 1 */
    int controller_key, unit_number; /* -1 unknown */
};

/* One entry of config.bootOptions.bootOrder. */
struct vim_boot_dev {
    char *type; /* xsi:type: VirtualMachineBootOptionsBootable{Disk,Ethernet,Cdrom,Floppy}Device */
    int device_key; /* disk and ethernet entries: the device key; -1 otherwise */
};

/* config.bootOptions as read (unset members: -1 / NULL). */
struct vim_boot_options {
    long long delay_ms;       /* bootDelay */
    int enter_setup;          /* enterBIOSSetup */
    int efi_secure_boot;      /* efiSecureBootEnabled */
    int retry;                /* bootRetryEnabled */
    long long retry_delay_ms; /* bootRetryDelay */
    char *network_protocol;   /* networkBootProtocol: "ipv4" / "ipv6" */
    struct vim_boot_dev *order;
    size_t n_order;
};

struct vim_guest_nic {
    char *mac;
    char *network; /* guest.net[].network (port group name), may be NULL */
    char **ips;    /* guest.net[].ipAddress[] */
    size_t n_ips;
    int connected;
};

struct vim_option {
    char *key;
    char *value; /* NULL when the value was not a string */
};

struct vim_vm {
    struct vim_moref ref;
    char *name;
    char *bios_uuid;     /* config.uuid */
    char *instance_uuid; /* config.instanceUuid */
    char *guest_id;
    char *hw_version;             /* config.version ("vmx-13") */
    char *firmware;               /* config.firmware ("bios", "efi") */
    int change_tracking;          /* config.changeTrackingEnabled: -1 unset, 0, 1 */
    struct vim_boot_options boot; /* config.bootOptions */
    char *annotation;
    char *managed_by_ext;  /* config.managedBy.extensionKey */
    char *managed_by_type; /* config.managedBy.type */
    int template;
    enum vim_power_state power_state;
    char *boot_time; /* summary.runtime.bootTime (xsd:dateTime) or NULL */
    char *guest_ip;  /* guest.ipAddress or NULL */
    char *guest_hostname;
    char *tools_running;   /* guest.toolsRunningStatus */
    char *guest_heartbeat; /* guestHeartbeatStatus: gray/green/yellow/red */
    struct vim_guest_nic *guest_nics;
    size_t n_guest_nics;
    int num_cpu;
    long memory_mb;
    struct vim_alloc cpu_alloc;
    struct vim_alloc mem_alloc;
    struct vim_nic *nics;
    size_t n_nics;
    struct vim_disk *disks; /* the VirtualDisk devices */
    size_t n_disks;
    struct vim_option *extra_config; /* one entry per key: the last value read wins */
    size_t n_extra_config;
    struct vim_moref host;
    struct vim_moref resource_pool;
    struct vim_moref parent;    /* folder */
    struct vim_moref datastore; /* first of `datastore` */
};

/* Reads every field above in one RetrievePropertiesEx. ManagedObjectNotFound becomes
 * VMOP_E_NOT_FOUND (with err->fault still set). */
vmop_rc vim_vm_get(struct vim_client *c, const struct vim_moref *vm, struct vim_vm **ret_vm,
                   struct vmop_err *err);
/* Reads runtime.powerState alone (one RetrievePropertiesEx of that one path): for a caller waiting
 * for a power change, not the 28 paths of vim_vm_get. Errors as vim_vm_get's. */
vmop_rc vim_vm_get_power(struct vim_client *c, const struct vim_moref *vm,
                         enum vim_power_state *ret_power, struct vmop_err *err);
void vim_vm_free(struct vim_vm *vm);
/* Value of an extraConfig key in a read VM, or NULL. */
const char *vim_vm_extra_config(const struct vim_vm *vm, const char *key);

/* ---- virtual machines: changes --------------------------------------------------------------- */

/* A VM that no longer exists gives VMOP_E_NOT_FOUND (err->fault "ManagedObjectNotFound") from
 * every VM call below, as from vim_vm_get. */

/* A ConfigSpec under construction. Only what is set is sent. Build it, pass it, free it. */
struct vim_config_spec;
vmop_rc vim_config_spec_new(struct vim_config_spec **ret_spec);
void vim_config_spec_free(struct vim_config_spec *s); /* zeroes extraConfig values (guestinfo) */
void vim_cs_num_cpus(struct vim_config_spec *s, int n);
void vim_cs_memory_mb(struct vim_config_spec *s, long mb);
/* The whole allocation is sent (vcsim and VC replace it wholesale). */
void vim_cs_cpu_alloc(struct vim_config_spec *s, const struct vim_alloc *a);
void vim_cs_mem_alloc(struct vim_config_spec *s, const struct vim_alloc *a);
vmop_rc vim_cs_annotation(struct vim_config_spec *s, const char *text);
vmop_rc vim_cs_managed_by(struct vim_config_spec *s, const char *extension_key, const char *type);
vmop_rc vim_cs_bios_uuid(struct vim_config_spec *s, const char *uuid);
vmop_rc vim_cs_instance_uuid(struct vim_config_spec *s, const char *uuid);
/* Sets (value != NULL) or removes (value == NULL: sent as an empty value) an extraConfig key. */
vmop_rc vim_cs_extra_config(struct vim_config_spec *s, const char *key, const char *value);
/* Adds a VMXNet3 (device_type NULL) or other NIC backed by a distributed port group. */
vmop_rc vim_cs_nic_add_dvpg(struct vim_config_spec *s, const char *device_type,
                            const char *switch_uuid, const char *portgroup_key, const char *mac);
/* Re-backs an existing NIC (as read by vim_vm_get, whose key/type/label/mac are reused) to a DVPG.
 */
vmop_rc vim_cs_nic_edit_dvpg(struct vim_config_spec *s, const struct vim_nic *nic,
                             const char *switch_uuid, const char *portgroup_key);
vmop_rc vim_cs_nic_remove(struct vim_config_spec *s, const struct vim_nic *nic);
/* guestId (a GuestOsIdentifier such as "ubuntu64Guest"; letters and digits only). */
vmop_rc vim_cs_guest_id(struct vim_config_spec *s, const char *guest_id);
/* firmware: "bios" or "efi". */
vmop_rc vim_cs_firmware(struct vim_config_spec *s, const char *firmware);
/* changeTrackingEnabled (changed block tracking). */
void vim_cs_change_tracking(struct vim_config_spec *s, int enabled);

/* bootOptions. Members below 0 (NULL) are not sent; bootOrder is sent when set_order is 1 (an
 * empty list then clears it). */
enum vim_boot_kind { VIM_BOOT_DISK, VIM_BOOT_ETHERNET, VIM_BOOT_CDROM };
struct vim_boot_entry {
    enum vim_boot_kind kind;
    int device_key; /* disk / ethernet: the device key */
};
#define VIM_BOOT_MAX_ORDER 16
struct vim_boot_spec {
    long long delay_ms, retry_delay_ms;
    int enter_setup, efi_secure_boot, retry;
    const char *network_protocol; /* "ipv4" / "ipv6" */
    int set_order;
    const struct vim_boot_entry *order;
    size_t n_order; /* at most VIM_BOOT_MAX_ORDER */
};
vmop_rc vim_cs_boot_options(struct vim_config_spec *s, const struct vim_boot_spec *b);
/* Edits a disk as read by vim_vm_get (key, backing, controller, unit) to capacity_kb: vSphere
 * grows disks, it never shrinks them (the caller checks). */
vmop_rc vim_cs_disk_capacity(struct vim_config_spec *s, const struct vim_disk *disk,
                             long long capacity_kb);
/* Serializes the spec's inner XML (for tests and for CloneVM's spec.config). The caller frees. */
vmop_rc vim_config_spec_xml(const struct vim_config_spec *s, char **ret_xml, struct vmop_err *err);

struct vim_clone_spec {
    const struct vim_moref *source; /* VM or template to clone */
    const struct vim_moref *folder; /* destination folder */
    const char *name;
    const struct vim_moref *pool;         /* required when source is a template */
    const struct vim_moref *datastore;    /* optional */
    const struct vim_moref *host;         /* optional */
    const struct vim_config_spec *config; /* optional: identity (instanceUuid, extraConfig) travels
                                           * with the create; hardware changes need a reconfigure */
    int template;                         /* make the clone a template */
    int power_on;
    const char *profile_id; /* optional: a vSphere storage policy (SPBM profile) ID for the VM
                             * home (RelocateSpec.profile, a VirtualMachineDefinedProfileSpec) */
    const int *disk_keys;   /* optional, with datastore: the source's disks (device keys) that get
                             * a locator placing them there, with profile_id if set */
    size_t n_disk_keys;     /* at most VIM_MAX_CLONE_DISKS */
};
#define VIM_MAX_CLONE_DISKS 64
/* The CloneVM_Task parameters (folder, name, spec) vim_vm_clone sends, as XML, in WSDL order
 * (exposed for unit tests). The caller frees *ret_xml; it may hold guestinfo: zero it first. */
vmop_rc vim_clone_params_xml(const struct vim_clone_spec *spec, char **ret_xml,
                             struct vmop_err *err);
/* CloneVM_Task, awaited. */
vmop_rc vim_vm_clone(struct vim_client *c, const struct vim_clone_spec *spec,
                     struct vim_moref *ret_vm, struct vmop_err *err);
/* ReconfigVM_Task, awaited. */
vmop_rc vim_vm_reconfigure(struct vim_client *c, const struct vim_moref *vm,
                           const struct vim_config_spec *spec, struct vmop_err *err);

enum vim_power_op {
    VIM_OP_POWER_ON,       /* PowerOnVM_Task */
    VIM_OP_POWER_OFF,      /* PowerOffVM_Task */
    VIM_OP_SUSPEND,        /* SuspendVM_Task */
    VIM_OP_RESET,          /* ResetVM_Task */
    VIM_OP_SHUTDOWN_GUEST, /* ShutdownGuest (not a task: returns once requested) */
    VIM_OP_STANDBY_GUEST,  /* StandbyGuest */
    VIM_OP_REBOOT_GUEST,   /* RebootGuest */
};
const char *vim_power_op_method(enum vim_power_op op);
/* Runs the operation; tasks are awaited. A VM already in the wanted state gives VMOP_E_FAULT with
 * fault "InvalidPowerState" (callers decide whether that is success). */
vmop_rc vim_vm_power(struct vim_client *c, const struct vim_moref *vm, enum vim_power_op op,
                     struct vmop_err *err);
/* A task operation (power on/off, suspend, reset), not awaited: *ret_task is the task
 * (vim_task_poll, vim_task_wait). A guest operation is VMOP_E_INVALID; a VM already gone is
 * VMOP_E_NOT_FOUND. "Already in that state" comes from the task, as InvalidPowerState. */
vmop_rc vim_vm_power_start(struct vim_client *c, const struct vim_moref *vm, enum vim_power_op op,
                           struct vim_moref *ret_task, struct vmop_err *err);
/* UpgradeVM_Task(version), awaited: raises the virtual hardware version to `version` ("vmx-19";
 * NULL = the newest the host supports). The VM must be powered off (else fault
 * InvalidPowerState); a VM already at that version or newer gives fault AlreadyUpgraded, a
 * version the host cannot run NotSupported. */
vmop_rc vim_vm_upgrade(struct vim_client *c, const struct vim_moref *vm, const char *version,
                       struct vmop_err *err);
/* Destroy_Task, awaited. A powered-on VM fails with InvalidPowerState: power it off first. */
vmop_rc vim_vm_destroy(struct vim_client *c, const struct vim_moref *vm, struct vmop_err *err);
/* Destroy_Task, not awaited: *ret_task is the task (vim_task_wait, vim_task_poll). A VM already
 * gone is VMOP_E_NOT_FOUND here; one that goes while the task runs fails the task with the
 * ManagedObjectNotFound fault (VMOP_E_FAULT from the wait or poll: vim_vm_destroy maps it). */
vmop_rc vim_vm_destroy_start(struct vim_client *c, const struct vim_moref *vm,
                             struct vim_moref *ret_task, struct vmop_err *err);
/* MarkAsVirtualMachine (turn a template into a VM in `pool`). */
vmop_rc vim_vm_mark_as_vm(struct vim_client *c, const struct vim_moref *vm,
                          const struct vim_moref *pool, struct vmop_err *err);
/* MarkAsTemplate (the VM must be powered off). Added for the operator's image cache. */
vmop_rc vim_vm_mark_as_template(struct vim_client *c, const struct vim_moref *vm,
                                struct vmop_err *err);

/* ---- tasks ------------------------------------------------------------------------------------
 */

/* Waits for a Task to end, at most timeout_ms (0 = the client's call timeout x 10). Success gives
 * the task's result moref in ret_result (may be NULL). A task error is VMOP_E_FAULT with the fault
 * type of info.error.fault and its message; running past the bound is VMOP_E_TIMEOUT. */
vmop_rc vim_task_wait(struct vim_client *c, const struct vim_moref *task, long timeout_ms,
                      struct vim_moref *ret_result, struct vmop_err *err);
/* One read of the task: *ret_done 1 when it succeeded (ret_result as for vim_task_wait), 0 while
 * it is queued or running; a failed task is VMOP_E_FAULT as for vim_task_wait. For a caller that
 * hears of the task's end another way (the change feed) and reads only as a backstop. */
vmop_rc vim_task_poll(struct vim_client *c, const struct vim_moref *task, int *ret_done,
                      struct vim_moref *ret_result, struct vmop_err *err);
/* *ret_busy = 1 when a task of the entity's recentTask is queued or running (one read of
 * recentTask, then info.state of each task, newest first, at most VIM_BUSY_MAX_TASKS; a task the
 * server no longer has counts as ended). vCenter keeps a task there for minutes after it ended and
 * lists the tasks started on the entity: a CloneVM_Task on the source VM or template. Added for
 * the operator's image cache collector. */
#define VIM_BUSY_MAX_TASKS 64
vmop_rc vim_entity_busy(struct vim_client *c, const struct vim_moref *entity, int *ret_busy,
                        struct vmop_err *err);

/* ---- change feed (PropertyCollector WaitForUpdatesEx) -----------------------------------------
 */

/* A watch streams property changes of every VirtualMachine under a container (a folder, a resource
 * pool, a datacenter) using a ContainerView and its own PropertyCollector. */
struct vim_watch;

enum vim_update_kind { VIM_UPDATE_ENTER, VIM_UPDATE_MODIFY, VIM_UPDATE_LEAVE };

struct vim_update {
    enum vim_update_kind kind;
    struct vim_moref ref;
    /* Changed property paths and their values as text (primitive values, and the value of an
     * OptionValue such as config.extraConfig["key"] selects; NULL for other complex values or
     * removals). Owned by the update. */
    char **paths;
    char **values;
    size_t n;
};
struct vim_update_batch {
    struct vim_update *items;
    size_t n;
    /* The server holds more of this change set (UpdateSet.truncated): vCenter pages a large set,
     * such as the first full state of a container with more than about 100 VMs, over several
     * answers, each given at once by the next vim_watch_next. */
    int truncated;
};
void vim_update_batch_free(struct vim_update_batch *b);

/* props: NULL-terminated list of VM property paths to watch ("runtime.powerState",
 * "guest.ipAddress"). */
vmop_rc vim_watch_new(struct vim_client *c, const struct vim_moref *container,
                      const char *const *props, struct vim_watch **ret_watch, struct vmop_err *err);
/* Waits up to max_wait_s seconds (bounded by the client's timeout) for changes. No change is
 * VMOP_OK with an empty batch. The first call returns the current state as ENTER updates.
 * Session expiry is handled (the filter is re-created and the next batch is a full ENTER set).
 * A full set may span several batches: every one but the last has truncated set. */
vmop_rc vim_watch_next(struct vim_watch *w, int max_wait_s, struct vim_update_batch *ret_batch,
                       struct vmop_err *err);
/* From another thread: makes a blocked vim_watch_next return VMOP_E_CANCELED soon. */
void vim_watch_cancel(struct vim_watch *w);
void vim_watch_free(struct vim_watch *w);

/* ---- Content Library (REST) -------------------------------------------------------------------
 */

/* These calls use vCenter's /rest vAPI with its own session (POST /rest/com/vmware/cis/session with
 * HTTP Basic, then the vmware-api-session-id header; a 401 re-logs in once and retries; logins
 * count in vim_stats.logins, REST requests in rest_calls). vAPI errors map to struct vmop_err as:
 * err->fault = the last dotted part of the vAPI error type ("not_found", "invalid_argument",
 * "already_exists", ...); rc VMOP_E_NOT_FOUND for not_found and for a plain-text HTTP 404,
 * VMOP_E_AUTH for unauthenticated/unauthorized, VMOP_E_EXISTS for already_exists, VMOP_E_FAULT for
 * other typed errors, VMOP_E_HTTP for an untyped HTTP error. Quirks handled: answers may be
 * labelled text/plain; an empty list may come without a "value"; library `~action=find` may match
 * names case-insensitively (the exact name is checked here); the OVF deploy reports failures
 * inside an HTTP 200; the VM-template resource uses `action=` and a bare id where the others use
 * `~action=` and `id:<id>`. Ids are percent-encoded into paths. */

struct vim_library {
    char *id;
    char *name;
    char *type; /* "LOCAL" / "SUBSCRIBED" */
};
struct vim_library_list {
    struct vim_library *items;
    size_t n;
};
void vim_library_list_free(struct vim_library_list *l);
vmop_rc vim_library_list(struct vim_client *c, struct vim_library_list *ret_list,
                         struct vmop_err *err);
/* Finds a library by exact name. VMOP_E_NOT_FOUND if none. */
vmop_rc vim_library_find(struct vim_client *c, const char *name, char **ret_id,
                         struct vmop_err *err);

enum vim_item_type { VIM_ITEM_OTHER = 0, VIM_ITEM_OVF, VIM_ITEM_VM_TEMPLATE };

struct vim_library_item {
    char *id;
    char *library_id;
    char *name;
    char *description;
    enum vim_item_type type;
    char *type_str; /* "ovf", "vm-template", ... as the server said */
    char *content_version;
    char *creation_time;
    char *last_modified_time;
    long long size; /* -1 unknown */
};
void vim_library_item_free(struct vim_library_item *it);
struct vim_library_item_list {
    struct vim_library_item *items;
    size_t n;
};
void vim_library_item_list_free(struct vim_library_item_list *l);
/* All items of a library, with details. */
vmop_rc vim_library_items(struct vim_client *c, const char *library_id,
                          struct vim_library_item_list *ret_list, struct vmop_err *err);
vmop_rc vim_library_item_get(struct vim_client *c, const char *item_id,
                             struct vim_library_item **ret_item, struct vmop_err *err);

struct vim_net_mapping {
    const char *ovf_network; /* the network name in the OVF ("nic0", "VM Network") */
    const char *network_id;  /* moref value of the target network / DVPG */
};
struct vim_deploy_spec {
    const char *name;
    const char *resource_pool_id; /* moref value, required */
    const char *folder_id;        /* moref value, required */
    const char *datastore_id;     /* moref value, optional */
    const char *host_id;          /* optional */
    const struct vim_net_mapping *net_mappings;
    size_t n_net_mappings;
    int power_on; /* VM templates only; OVF deploys are always powered off */
};
/* Deploys an OVF or VM-template item (type read from the item) and returns the new VM.
 * Errors reported inside an HTTP 200 are still errors (VMOP_E_FAULT, fault = vAPI error type).
 * OVF: POST .../ovf/library-item/id:<item>?~action=deploy with accept_all_EULA, the network
 * mappings and default_datastore_id; power_on is ignored (the VM is powered off).
 * VM template: POST /rest/vcenter/vm-template/library-items/<item>?action=deploy with placement
 * (folder, resource_pool, host), powered_on and disk_storage.datastore; network mappings are
 * refused (VMOP_E_UNSUPPORTED: re-back the NICs with a reconfigure). Post-condition, checked with
 * vim25 reads: the result is a VM, not a template (MarkAsVirtualMachine into resource_pool_id if
 * it reads back config.template=true), and powered on when power_on is set (PowerOnVM_Task if not).
 * If that fix-up fails, the message names the deployed VM and ret_vm is not set.
 * Not idempotent: a retry after an unknown outcome can create a second VM with the same name. */
vmop_rc vim_library_deploy(struct vim_client *c, const char *item_id,
                           const struct vim_deploy_spec *spec, struct vim_moref *ret_vm,
                           struct vmop_err *err);

/* ---- Content Library: OVF descriptors and template facts (vim_library_ovf.c, owner: catalog) ---
 */

#define VIM_OVF_MAX_DEFAULT ((size_t)2 << 20)

/* Downloads the .ovf descriptor of an OVF item through a download session: lists the item's
 * files (GET .../library/item/file?library_item_id=), creates a session (POST
 * .../library/item/download-session), prepares the .ovf file (POST
 * .../downloadsession/file/id:<session>?~action=prepare), polls ~action=get until it is PREPARED
 * (bounded by the client's call timeout), GETs the download endpoint with the REST session, and
 * deletes the session (also after a failure). The endpoint's path is fetched from the configured
 * server (vCenter may name itself differently than we reach it). max_bytes (0 =
 * VIM_OVF_MAX_DEFAULT) caps the file: a listed size or a body over it is VMOP_E_TOOBIG. No .ovf
 * file: VMOP_E_NOT_FOUND; a file that fails to prepare: VMOP_E_FAULT. On success *ret_data is the
 * descriptor, NUL-terminated (free() it), and *ret_len its length. */
vmop_rc vim_library_item_ovf(struct vim_client *c, const char *item_id, size_t max_bytes,
                             char **ret_data, size_t *ret_len, struct vmop_err *err);

/* Facts of a VM-template item's template VM. Strings owned by the struct, NULL when unknown. */
struct vim_template_info {
    struct vim_moref vm; /* the template VM; unset when the server does not name it */
    char *guest_os;      /* REST guest_OS ("UBUNTU_64") */
    char *guest_id;      /* the VM's config.guestId ("ubuntu64Guest") */
    char *hw_version;    /* config.version ("vmx-13") */
    char *firmware;      /* config.firmware ("bios", "efi") */
};
void vim_template_info_free(struct vim_template_info *t);
/* GET /rest/vcenter/vm-template/library-items/<item> and, when the answer names the template VM
 * (vm_template), a vim25 read of its config.guestId, config.version and config.firmware. A server
 * that does not expose the VM (the simulator answers an empty object, or refuses a GET without a
 * body) gives VMOP_OK with nothing set; only transport, TLS, authentication, timeout and memory
 * failures are errors. *ret_info: free with vim_template_info_free(). */
vmop_rc vim_library_item_template(struct vim_client *c, const char *item_id,
                                  struct vim_template_info **ret_info, struct vmop_err *err);

/* ---- storage policies (SPBM, vim_pbm.c) ------------------------------------------------------
 */

/* The Storage Policy Based Management service of the same vCenter (SOAP, namespace urn:pbm, at
 * /pbm as govmomi's pbm client uses it), with the vim25 session: its cookie vmware_soap_session
 * and the same value in a vcSessionCookie SOAP header. A NotAuthenticated fault logs in again
 * once (vim25 Login) and retries, like vim25 calls. Faults are typed as for vim25 calls. */
struct vim_pbm;

/* PbmRetrieveServiceContent: the profile manager and placement solver, kept in the handle.
 * *ret_pbm: free with vim_pbm_free(); it borrows c (free it before c). Thread-safe (read-only). */
vmop_rc vim_pbm_new(struct vim_client *c, struct vim_pbm **ret_pbm, struct vmop_err *err);
void vim_pbm_free(struct vim_pbm *p); /* NULL is fine */

#define VIM_PBM_ID_MAX   256  /* longest profile ID we send */
#define VIM_PBM_MAX_HUBS 4096 /* most placement results we read */

struct vim_pbm_profile {
    char *id;   /* profileId.uniqueId */
    char *name; /* may be "" */
};
void vim_pbm_profile_free(struct vim_pbm_profile *p); /* NULL is fine */
/* PbmRetrieveContent([id]). An unknown ID (the server's InvalidArgument fault, or an answer
 * without it) is VMOP_E_NOT_FOUND with a message naming the ID. *ret_profile: caller frees. */
vmop_rc vim_pbm_profile_get(struct vim_pbm *p, const char *profile_id,
                            struct vim_pbm_profile **ret_profile, struct vmop_err *err);

/* PbmCheckRequirements(hubsToSearch = hubs, placementSubjectRequirement = the profile): the hubs
 * of type Datastore the server finds compatible (no `error`), in the server's order. A server may
 * answer hubs it was not asked about: callers that care intersect. n_hubs <= VIM_PBM_MAX_HUBS.
 * *ret_ds (NULL when *ret_n is 0): free() it. */
vmop_rc vim_pbm_compatible_datastores(struct vim_pbm *p, const char *profile_id,
                                      const struct vim_moref *hubs, size_t n_hubs,
                                      struct vim_moref **ret_ds, size_t *ret_n,
                                      struct vmop_err *err);

/* The `datastore` property of a ComputeResource / ClusterComputeResource (the datastores its
 * hosts see), in vCenter's order. *ret_ds (NULL when *ret_n is 0): free() it. */
vmop_rc vim_compute_datastores(struct vim_client *c, const struct vim_moref *compute,
                               struct vim_moref **ret_ds, size_t *ret_n, struct vmop_err *err);

#endif
