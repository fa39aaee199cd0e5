/* api_vm.h: the VirtualMachine (vmoperator.vmware.com/v1alpha5) model: parse, default, validate,
 * serialize. Pure: no I/O; randomness, clock and image lookup come in through api_vm_default_ctx.
 *
 * Model: struct api_vm owns a private copy of the whole object (`obj`) and a typed view whose
 * string pointers are BORROWED from obj. Every mutation goes through obj and is followed by a
 * re-parse, so the view never dangles; serialization is a copy of obj, so fields vmop does not know
 * (newer API fields, annotations, anything) are preserved byte for byte. Parsing is tolerant:
 * members of the wrong JSON type are recorded in `parse_errs` (reported again by validation) and
 * treated as absent. Only a non-object, a size over API_VM_MAX_BYTES or NOMEM fail. Admission
 * defaults (where they live is documented in docs/api-compat.md): the operator applies
 * api_vm_default() on first sight and writes the result back before any vCenter call.
 */
#ifndef VMOP_API_VM_H
#define VMOP_API_VM_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <time.h>

#include "api_ferr.h"
#include "vmop_err.h"

#define API_VM_MAX_BYTES   (2u << 20) /* largest JSON text api_vm_parse_text() accepts */
#define API_VM_MAX_NICS    10         /* VM Operator's limit */
#define API_VM_MAX_VOLUMES 64
#define API_NAME_MAX       254 /* DNS-1123 subdomain + NUL */

enum api_power_state { API_POWER_UNSET, API_POWER_ON, API_POWER_OFF, API_POWER_SUSPENDED };
enum api_power_mode { API_MODE_UNSET, API_MODE_HARD, API_MODE_SOFT, API_MODE_TRYSOFT };

/* Bits of api_vm.bootstrap. */
#define API_BOOT_CLOUDINIT 0x1u
#define API_BOOT_LINUXPREP 0x2u
#define API_BOOT_SYSPREP   0x4u
#define API_BOOT_VAPP      0x8u

struct api_vm_nic {
    const char *name;         /* spec.network.interfaces[i].name */
    const char *network_name; /* .network.name (NULL: namespace default) */
    const char *network_kind;
    const char *mac_addr, *guest_device_name, *gateway4, *gateway6;
    int dhcp4, dhcp6;                                               /* 0 when absent */
    long long mtu;                                                  /* 0 when absent */
    const cJSON *addresses, *nameservers, *routes, *search_domains; /* borrowed arrays or NULL */
};

struct api_vm_volume {
    const char *name, *claim_name;
    int removable; /* default 1 */
    int has_instance_claim;
};

struct api_vm {
    cJSON *obj; /* owned: the whole object */

    /* metadata */
    const char *name, *namespace_, *uid, *resource_version, *deletion_timestamp;
    long long generation;
    const cJSON *labels, *annotations; /* borrowed objects or NULL */

    /* spec */
    const char *image_name, *image_kind, *image_ref; /* imageName, image.kind, image.name */
    const char *class_name, *storage_class, *bios_uuid, *instance_uuid, *guest_id;
    const char *next_restart_time, *resource_policy_name, *boot_disk_capacity;
    enum api_power_state power_state;
    enum api_power_mode power_off_mode, suspend_mode, restart_mode;
    long long min_hw_version; /* 0 when absent */
    unsigned bootstrap;       /* API_BOOT_* bits */
    const char *cloudinit_instance_id;
    int has_cloud_config, has_raw_cloud_config, has_sysprep_typed, has_raw_sysprep;
    int has_vapp_properties, has_vapp_raw;
    int has_network, network_disabled;
    const char *host_name, *domain_name;
    struct api_vm_nic nics[API_VM_MAX_NICS];
    size_t n_nics;       /* kept entries */
    size_t n_nics_total; /* entries in the JSON (may exceed the cap: a validation error) */
    struct api_vm_volume volumes[API_VM_MAX_VOLUMES];
    size_t n_volumes, n_volumes_total;
    int probe_actions; /* readinessProbe actions set (tcpSocket, guestHeartbeat, guestInfo) */
    long long probe_timeout, probe_period;

    /* status */
    enum api_power_state status_power_state;
    const char *status_unique_id, *status_bios_uuid, *status_instance_uuid;
    const char *status_primary_ip4, *status_primary_ip6, *status_last_restart_time;

    struct api_ferrs parse_errs; /* JSON type mismatches found while parsing */
};

/* Parses a VirtualMachine from a cJSON object (copied; json stays the caller's).
 * *ret_vm: new object on success, free with api_vm_free(). */
vmop_rc api_vm_parse(const cJSON *json, struct api_vm **ret_vm, struct vmop_err *err);
/* Same from JSON text of len bytes (len <= API_VM_MAX_BYTES, else VMOP_E_TOOBIG). */
vmop_rc api_vm_parse_text(const char *text, size_t len, struct api_vm **ret_vm,
                          struct vmop_err *err);
void api_vm_free(struct api_vm *vm); /* NULL-safe */

/* Re-reads the typed view after obj was changed directly (e.g. through api_vm_status()). */
vmop_rc api_vm_reparse(struct api_vm *vm, struct vmop_err *err);

/* A copy of the whole object (caller frees with cJSON_Delete). */
vmop_rc api_vm_to_json(const struct api_vm *vm, cJSON **ret_json, struct vmop_err *err);
/* Borrowed spec / status objects inside vm->obj, created when absent (NULL on NOMEM). Call
 * api_vm_reparse() after changing them. */
cJSON *api_vm_spec(struct api_vm *vm);
cJSON *api_vm_status(struct api_vm *vm);
/* Sets status.conditions-friendly array (created when absent). NULL on NOMEM. */
cJSON *api_vm_conditions(struct api_vm *vm);

const char *api_power_state_str(enum api_power_state s);   /* "" for UNSET */
enum api_power_state api_power_state_parse(const char *s); /* UNSET for NULL/unknown */

/* ---- defaults ---- */
struct api_vm_default_ctx {
    /* Fills buf with n cryptographically random bytes. Required. */
    vmop_rc (*random_bytes)(void *arg, unsigned char *buf, size_t n, struct vmop_err *err);
    void *random_arg;
    /* Resolves spec.imageName to image{kind,name} (see api_image_resolve()). Returns VMOP_OK,
     * VMOP_E_NOT_FOUND or VMOP_E_EXISTS (ambiguous display name). May be NULL: image stays unset.
     */
    vmop_rc (*lookup_image)(void *arg, const char *ns, const char *image_name,
                            char ret_kind[API_NAME_MAX], char ret_name[API_NAME_MAX],
                            struct vmop_err *err);
    void *image_arg;
    const char *default_network; /* the namespace binding's defaultNetwork, or NULL */
    struct timespec now;         /* the clock for nextRestartTime "now" */
    /* Also resolve a spec.image that names no kind (v1alpha2's conversion writes
     * image{name: imageName}) by imageName, or by image.name when imageName is empty. Only for a
     * create: afterwards spec.image is immutable. */
    int resolve_kindless_image;
};

/* Flags in *ret_changed telling what api_vm_default() filled in. */
#define API_VM_DEF_POWER   0x01u
#define API_VM_DEF_UUIDS   0x02u
#define API_VM_DEF_INSTID  0x04u
#define API_VM_DEF_NIC     0x08u
#define API_VM_DEF_IMAGE   0x10u
#define API_VM_DEF_RESTART 0x20u
#define API_VM_DEF_MODES   0x40u

/* Applies VM Operator's mutating-webhook defaults in place: powerState PoweredOn, the TrySoft
 * modes, random v4 biosUUID/instanceUUID, cloudInit.instanceID = biosUUID, a default eth0 on
 * ctx->default_network, image{kind,name} from imageName, nextRestartTime "now" -> RFC 3339 UTC with
 * nanoseconds (only when the VM's powerState, or old's when old != NULL, is PoweredOn).
 * Image lookup failures are not errors here: image stays unset and validation/conditions report it
 * (*ret_image_rc, may be NULL, receives the lookup's result). */
vmop_rc api_vm_default(struct api_vm *vm, const struct api_vm *old,
                       const struct api_vm_default_ctx *ctx, unsigned *ret_changed,
                       vmop_rc *ret_image_rc, struct vmop_err *err);

/* A random v4 UUID string (37 bytes with NUL) from 16 random bytes (pure). */
void api_uuid_v4_format(const unsigned char rnd[16], char out[37]);
/* RFC 3339 UTC with up to 9 fraction digits, trailing zeros trimmed (Go's RFC3339Nano). */
void api_time_rfc3339nano(const struct timespec *ts, char *buf, size_t n);

/* ---- validation ---- */
/* Validates vm as a create (old == NULL) or an update of old. Appends to fe (starting with the
 * parse errors of vm). The VM is acceptable when fe->n == 0 afterwards. */
void api_vm_validate(const struct api_vm *vm, const struct api_vm *old, struct api_ferrs *fe);
/* The rules on the object alone (no create-only or old-vs-new rules): what api_vm_validate() checks
 * first. The admission layer (api_admit.h) adds its own create/update rules on top. */
void api_vm_validate_object(const struct api_vm *vm, struct api_ferrs *fe);

#endif
