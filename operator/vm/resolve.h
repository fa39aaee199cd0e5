/* resolve.h: from a VirtualMachine and everything it references to one desired vSphere
 * configuration, or to the conditions that say exactly why not.
 *
 * Pure: the caller (the VM controller) reads every referenced object from its caches and passes
 * them in; nothing here does I/O. Each prerequisite condition is decided here and only here:
 *   VirtualMachineClassReady      NotFound / Forbidden / Invalid
 *   VirtualMachineImageReady      NotSet / UnknownKind / NotFound / NotReady
 *   VirtualMachineStorageReady    StorageClassRequired / NotFound / Forbidden
 *   VirtualMachineBootstrapReady  NotFound / RequiredKeyNotFound / Invalid      (absent: no
 * bootstrap) VirtualMachineNetworkReady    NotReady                                      (absent:
 * no NICs) VirtualMachineConditionPlacementReady  NotReady (namespace not bound) / Invalid (binding
 * invalid) / MultipleBindings (more than one binding: no arbitrary pick, nothing is created)
 * A catalog problem (class, image), a schema problem (spec fails validation: reason Invalid) and a
 * tenant-permission problem (Forbidden) read differently in `kubectl describe`; capacity problems
 * come later, from vCenter, on VirtualMachineCreated.
 *
 * Fields vmop accepts but does not act on (issue 11: nothing accepted is silently ignored) are
 * named by vmop's own condition VirtualMachineFieldsSupported (VM Operator has no such type): True
 * when every field set is acted on; False, reason NotSupported, listing the fields (spec.volumes,
 * spec.reserved.resourcePolicyName, spec.crypto, spec.affinity, class devices, instance storage,
 * class configSpec parts, ...), or reason CloudInitRequired when the only ones are guest network
 * settings a VM without a cloud-init bootstrap cannot receive (static addresses, a network's
 * static IPv4 pool: no pool address is then allocated, operator/vm/ippool.h). It never blocks the
 * create and does not change Ready: the VM runs without what is listed.
 *
 * Class changes (VM Operator's resize rule): a className change resizes the VM; an edit of the
 * class it already has (annotation vmoperator.vmware.com/last-resized-vm-class names the same
 * class with another uid or generation) resizes only a VM with annotation
 * vmoperator.vmware.com/same-vm-class-resize; on the others rs_desired.class_held is set and
 * nothing that comes from the class (sizing, configSpec) is enforced on the existing VM
 * (plan.h); status says so (VirtualMachineClassConfigurationSynced False, ClassUpdated).
 *
 * Ownership: a struct rs_result borrows strings from the inputs (valid while they live), except
 * user data, which it owns and zeroes in rs_result_free().
 */
#ifndef VMOP_RESOLVE_H
#define VMOP_RESOLVE_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "api_admin.h"
#include "api_class.h"
#include "api_cond.h"
#include "api_image.h"
#include "api_vm.h"
#include "vmop_err.h"

/* Condition types (VM Operator's exact strings). */
#define COND_READY               "Ready"
#define COND_CLASS_READY         "VirtualMachineClassReady"
#define COND_IMAGE_READY         "VirtualMachineImageReady"
#define COND_STORAGE_READY       "VirtualMachineStorageReady"
#define COND_BOOTSTRAP_READY     "VirtualMachineBootstrapReady"
#define COND_NETWORK_READY       "VirtualMachineNetworkReady"
#define COND_PLACEMENT_READY     "VirtualMachineConditionPlacementReady"
#define COND_CREATED             "VirtualMachineCreated"
#define COND_POWER_SYNCED        "VirtualMachinePowerStateSynced"
#define COND_RECONCILE_READY     "VirtualMachineReconcileReady"
#define COND_CLASS_CONFIG_SYNCED "VirtualMachineClassConfigurationSynced"
#define COND_TOOLS               "VirtualMachineTools"
#define COND_FIELDS_SUPPORTED    "VirtualMachineFieldsSupported" /* vmop's own (see above) */

#define RS_REASON_NOT_SUPPORTED      "NotSupported"
#define RS_REASON_CLOUDINIT_REQUIRED "CloudInitRequired"
#define RS_ANNOT_LAST_RESIZED        "vmoperator.vmware.com/last-resized-vm-class"
#define RS_ANNOT_SAME_CLASS_RESIZE   "vmoperator.vmware.com/same-vm-class-resize"
/* set by the v1alpha1 conversion when vmMetadata names a ConfigMap (api/api_convert_vm_a1.c) */
#define RS_V1A1_CONFIGMAP_ANNOTATION "vmoperator.vmware.com/v1a1-configmap-md-transport"

#define RS_MAX_CONDS  12
#define RS_REASON_MAX 64
#define RS_MSG_MAX    1024

struct rs_cond {
    const char *type;
    int present; /* 0: the condition must be removed (e.g. no bootstrap) */
    enum api_cond_status status;
    char reason[RS_REASON_MAX]; /* "" for True (api_cond uses "True") */
    char message[RS_MSG_MAX];
};

struct rs_nic {
    const char *name;              /* spec interface name */
    const char *network;           /* tenant-facing network name */
    const char *port_group;        /* admin mapping: inventory path or name of the port group */
    const struct api_vm_nic *spec; /* borrowed from the VM */
    const char *device_type;       /* adapter type from the class configSpec ("VirtualE1000e"),
                                    * by position; NULL: VMXNet3 for new NICs, any type kept */
    /* static IPv4 pool address (rs_inputs.pool_addrs of this interface); NULL/0 = none.
     * Borrowed. plan.c puts them in the cloud-init network config. */
    const char *pool_cidr, *pool_gateway4;
    const char *const *pool_nameservers;
    size_t n_pool_nameservers;
    const char *const *pool_search;
    size_t n_pool_search;
};

enum rs_image_type { RS_IMAGE_OVF, RS_IMAGE_VM_TEMPLATE };

enum rs_tri { RS_UNSET = 0, RS_NO, RS_YES };

/* spec.bootOptions -> ConfigSpec.bootOptions (durations in ms; -1 / RS_UNSET / NULL: not given). */
enum rs_boot_kind { RS_BOOT_DISK, RS_BOOT_NETWORK, RS_BOOT_CDROM };
#define RS_MAX_BOOT_ORDER 8
struct rs_boot {
    int set; /* spec.bootOptions is given */
    long long delay_ms, retry_delay_ms;
    enum rs_tri retry, efi_secure_boot;
    const char *network_protocol; /* "ipv4" / "ipv6" */
    int has_order;
    struct {
        enum rs_boot_kind kind;
        size_t nic; /* RS_BOOT_NETWORK: index into rs_desired.nics; DISK: the first disk */
    } order[RS_MAX_BOOT_ORDER];
    size_t n_order;
};

/* What of the desired configuration came from the class (rs_desired.from_class bits). */
#define RS_FROM_CLASS_GUEST_ID 0x1u
#define RS_FROM_CLASS_FIRMWARE 0x2u
#define RS_FROM_CLASS_CBT      0x4u

struct rs_kv {
    const char *key, *value;
};
#define RS_MAX_EXTRA 64

struct rs_desired {
    /* placement (borrowed from the binding) */
    const char *endpoint, *datacenter, *resource_pool, *folder, *datastore;
    const char *storage_class, *storage_policy_id;
    /* image */
    const char *library_item_id;
    enum rs_image_type image_type;
    const char *image_name; /* display name */
    /* sizing from the class (milli-CPU converted with the lowest host MHz) */
    const char *class_name;
    struct api_class_sizing size;
    /* identity */
    const char *bios_uuid, *instance_uuid;
    char namespaced_name[2 * API_NAME_MAX]; /* "ns/name": ExtraConfig vmservice.namespacedName */
    const char *resource_uid; /* metadata.uid: ExtraConfig vmop.uid (operator/vm/ownership.h) */
    /* network */
    struct rs_nic nics[API_VM_MAX_NICS];
    size_t n_nics;
    /* bootstrap (cloud-init) */
    int cloud_init;
    const char *instance_id; /* cloud-init instance-id */
    char hostname[256];      /* host[.domain] */
    const cJSON *ssh_keys;   /* borrowed string array or NULL */
    char *userdata;          /* owned, plain text, zeroed on free; NULL = none */
    size_t userdata_len;
    /* power */
    enum api_power_state power;
    enum api_power_mode power_off_mode, suspend_mode, restart_mode;
    /* spec.nextRestartTime when it asks for a restart not done yet (it differs from
     * status.lastRestartTime; "now" is written as a time before resolving), else NULL. The
     * planner restarts a VM that is and stays powered on unless vCenter's restart marker
     * (PL_KEY_LAST_RESTART) already names it. Borrowed from the VM. */
    const char *restart_for;
    /* configuration beyond sizing; zero values leave what vCenter has */
    const char *guest_id; /* spec.guestID, else the class configSpec guestId */
    int hw_version;       /* spec.minHardwareVersion: at least this hardware version; 0 none */
    int class_hw_version; /* the class configSpec version (vmx-N): at least this too; 0 none */
    const char *firmware; /* spec.bootOptions.firmware, else the class configSpec firmware */
    struct rs_boot boot;  /* spec.bootOptions */
    enum rs_tri cbt;      /* spec.advanced.changeBlockTracking, else the class configSpec */
    int64_t boot_disk_mb; /* spec.advanced.bootDiskCapacity in MiB (grow only); 0 = none */
    struct rs_kv extra[RS_MAX_EXTRA]; /* class configSpec extraConfig (borrowed) */
    size_t n_extra;
    unsigned from_class; /* RS_FROM_CLASS_* */
    int class_held;      /* the class changed under the VM, no same-vm-class-resize: nothing
                          * from the class is enforced on the existing VM */
    /* cloud-init extras */
    const cJSON *global_nameservers, *global_search; /* spec.network defaults, NULL = none */
    enum rs_tri wait_on_network4, wait_on_network6;
};

struct rs_result {
    struct rs_cond conds[RS_MAX_CONDS];
    size_t n_conds;
    int ready; /* every prerequisite holds: desired is complete */
    struct rs_desired desired;
    char class_held_msg[RS_MSG_MAX]; /* desired.class_held: what changed, for the condition */
};

/* Names of what a VM references, for the controller to fetch (borrowed from vm). */
struct rs_refs {
    const char *class_name;
    const char *image_kind, *image_name; /* image_kind defaults to VirtualMachineImage */
    const char *storage_class;
    const char *secret_names[8]; /* bootstrap Secrets (raw cloud-config, cloudConfig refs) */
    size_t n_secrets;
};
void rs_references(const struct api_vm *vm, struct rs_refs *ret_refs);

/* A static IPv4 pool address allocated to one interface (operator/vm/ippool.h), as the
 * controller read it from the VM's allocation annotation. Every pointer borrowed. */
struct rs_pool_addr {
    const char *iface;    /* spec interface name */
    const char *cidr;     /* "192.168.10.101/24" */
    const char *gateway4; /* the pool's gateway, NULL if none */
    const char *const *nameservers;
    size_t n_nameservers;
    const char *const *search;
    size_t n_search;
};

struct rs_inputs {
    const struct api_vm *vm;           /* defaulted already (UUIDs set) */
    const struct api_binding *binding; /* the namespace's binding, NULL if none */
    /* Set when the namespace has more than one NamespaceBinding: their names ("a, b"); binding is
     * then NULL and placement is refused (VM Operator has one binding per namespace by design). */
    const char *binding_conflict;
    const struct api_class *cls;   /* NULL: not found */
    const struct api_image *image; /* NULL: not found */
    const cJSON *storage_class;    /* the StorageClass object, NULL: not found */
    /* Bootstrap Secrets by name (NULL: not found); the Secret objects as the API returns them
     * (base64 `data`, or `stringData`). */
    const cJSON *(*get_secret)(void *arg, const char *name);
    void *secret_arg;
    int64_t min_host_mhz; /* lowest host CPU MHz of the placement cluster, when known; the
                           * controller passes a stand-in and sizes with rs_size() once it has
                           * reached vCenter */
    /* Static IPv4 pools, allocated by the controller before resolving: the addresses go on the
     * desired NICs by interface name. pool_reason set: the allocation failed (pool exhausted,
     * bad annotation) and VirtualMachineNetworkReady is False with that reason and
     * pool_message. */
    const struct rs_pool_addr *pool_addrs;
    size_t n_pool_addrs;
    const char *pool_reason, *pool_message;
};

/* Resolves. Returns VMOP_OK whenever it could decide (ret->ready tells whether the VM can be
 * created); an error only for NOMEM/internal failures. ret must be rs_result_free()d. */
vmop_rc rs_resolve(const struct rs_inputs *in, struct rs_result *ret, struct vmop_err *err);

/* Sizes a ready result's class by the placement cluster's lowest host CPU MHz, observed in
 * vCenter after rs_resolve() (the one MHz-dependent part of the resolution): r->desired.size.
 * A class that cannot be applied with it turns VirtualMachineClassReady False (Invalid), an
 * unknown MHz (<= 0) Unknown (HostInfoUnavailable); either leaves r->ready 0. */
void rs_size(const struct rs_inputs *in, struct rs_result *r, int64_t host_mhz);
void rs_result_free(struct rs_result *r);

/* The condition of type `type` in r, or NULL. */
const struct rs_cond *rs_result_cond(const struct rs_result *r, const char *type);

#endif
