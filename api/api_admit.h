/* api_admit.h: admission decisions as pure functions: who is privileged, the validating-webhook
 * rules per kind (VM Operator's messages and field paths), the checks VM Operator makes in its
 * mutating webhook on the request as sent, the opt-in deletion checks, and the denial message.
 *
 * Owns: nothing past a call. Objects come in as cJSON (borrowed, never changed) and results go
 * into a caller's struct api_ferrs. No I/O: what a rule needs from the cluster (the user's
 * identity, the namespace binding) comes in through struct api_admit_ctx. Files:
 * api_admit_priv.c (privilege, labels and annotations), api_admit_vm.c (VirtualMachine),
 * api_admit_misc.c (class, service, admin kinds, the dispatcher, the denial message).
 *
 * Order of a webhook call (as VM Operator's): the mutating handler first calls
 * api_vm_admit_request() on the object as the user sent it and refuses the request when it reports
 * errors, then applies api_vm_default(); the validating handler calls api_admit_validate() on the
 * object after mutation. The split matters for spec.instanceUUID / spec.biosUUID on create: the
 * mutating webhook fills them for everyone, so only the request as sent tells a user's value from
 * a default (VM Operator checks them in SetDefaultInstanceUUID, before it generates one), and for
 * spec.nextRestartTime: the user writes "now", the validator sees the timestamp mutation put there.
 */
#ifndef VMOP_API_ADMIT_H
#define VMOP_API_ADMIT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "api_admin.h"
#include "api_ferr.h"
#include "vbuf.h"

enum api_admit_op { API_ADMIT_CREATE, API_ADMIT_UPDATE, API_ADMIT_DELETE };

enum api_admit_kind {
    API_KIND_UNKNOWN,
    API_KIND_VM,         /* vmoperator.vmware.com VirtualMachine */
    API_KIND_VM_CLASS,   /* vmoperator.vmware.com VirtualMachineClass */
    API_KIND_VM_SERVICE, /* vmoperator.vmware.com VirtualMachineService */
    API_KIND_NS_BINDING, /* infra.vmop.io NamespaceBinding */
    API_KIND_VC_ENDPOINT /* infra.vmop.io VCenterEndpoint */
};

/* ---- privilege (api_admit_priv.c) ---- */

/* The requesting user (AdmissionReview request.userInfo). Strings borrowed. */
struct api_user {
    const char *username;
    const char *const *groups;
    size_t n_groups;
};

/* Fills u from an AdmissionReview request.userInfo object ({username, groups[]}): the strings are
 * borrowed from user_info, the group pointers go into groups[0..max) (u->groups = groups). Groups
 * that are not strings are skipped. Returns how many string groups there are (may exceed max: the
 * extra ones are not seen, so pass a max above any realistic count, e.g. 64). */
size_t api_user_from_json(const cJSON *user_info, struct api_user *u, const char **groups,
                          size_t max);

/* Who counts as privileged besides system:masters and "kubernetes-admin" (VM Operator's fixed
 * set): the operator's own ServiceAccount (it writes defaults such as instanceUUID and removes
 * check annotations) and configured extra users and groups. All borrowed; NULL / 0 = none. */
struct api_privileged_cfg {
    const char *sa_namespace, *sa_name; /* system:serviceaccount:<ns>:<name> */
    const char *const *users;
    size_t n_users;
    const char *const *groups;
    size_t n_groups;
};

/* 1 when u is privileged: a member of system:masters or of a configured group, the user
 * "kubernetes-admin" or the operator's ServiceAccount (both case-insensitive, as VM Operator), or a
 * configured user (exact). u or cfg NULL: not privileged (cfg NULL still honours the fixed set). */
int api_admit_is_privileged(const struct api_user *u, const struct api_privileged_cfg *cfg);

/* What a rule may know about the request beyond the objects. */
struct api_admit_ctx {
    int privileged; /* api_admit_is_privileged() of the requesting user */
    /* The NamespaceBinding of the object's namespace, or NULL: then the storage-class and network
     * checks are skipped (a namespace without a binding is reported by the controller). */
    const struct api_binding *binding;
};

/* Well-known keys. */
#define API_LABEL_PAUSED         "vmoperator.vmware.com/paused"
#define API_LABEL_ZONE           "topology.kubernetes.io/zone"
#define API_ANNO_CHECK_POWERON   "poweron.check.vmoperator.vmware.com"
#define API_ANNO_CHECK_DELETE    "delete.check.vmoperator.vmware.com"
#define API_ANNO_INSTANCE_ID     "vmoperator.vmware.com/cloud-init-instance-id"
#define API_ANNO_FIRST_BOOT_DONE "virtualmachine.vmoperator.vmware.com/first-boot-done"
#define API_MSG_PRIV_ONLY        "only privileged users may set this field"
#define API_MSG_WHEN_POWERED_ON  "updates to this field is not allowed when VM power is on"
#define API_MSG_IMMUTABLE        "field is immutable"

/* 1 when key matches ^.+\.protected(/.*)?$ (e.g. vmoperator.vmware.com.protected/x). */
int api_admit_is_protected_key(const char *key);

/* The metadata rules for VirtualMachines (old NULL on create), skipped for privileged users: the
 * paused label, the protected annotations, the cloud-init instance-id and first-boot-done
 * annotations, and the check annotations (poweron checks may be added on create by anyone;
 * delete checks only by privileged users; neither may later be added, changed or removed). */
void api_admit_vm_metadata(const cJSON *old, const cJSON *vm, const struct api_admit_ctx *ctx,
                           struct api_ferrs *fe);

/* ---- VirtualMachine (api_admit_vm.c) ---- */

/* Mutating-webhook stage, on the request as sent (before api_vm_default()): on create,
 * spec.instanceUUID and spec.biosUUID set by a non-privileged user (Forbidden, "only privileged
 * users may set this field"); on update (old != NULL), spec.nextRestartTime other than empty, the
 * old value or "now" (any case) ("may only be set to \"now\""), and "now" when the old powerState
 * is not PoweredOn ("can only restart powered on vm"). */
void api_vm_admit_request(const cJSON *old, const cJSON *req, const struct api_admit_ctx *ctx,
                          struct api_ferrs *fe);

/* Validating-webhook stage (after mutation). Create: the object rules of api_vm_validate_object(),
 * the metadata rules, powerState Suspended, nextRestartTime set, instance storage volumes, the
 * binding's storage classes and networks. Update: the same object and metadata rules plus the
 * immutable fields, the power-state transitions, the powered-on restrictions, nextRestartTime,
 * minHardwareVersion, volumes that may not be removed. An update of a VM under deletion
 * (metadata.deletionTimestamp set) gets only the metadata rules, so finalizers can always come off
 * while a tenant still cannot lift a delete check. A body that does not parse as an object
 * gives one error on "" ("must be a JSON object"). */
void api_vm_validate_create(const cJSON *vm, const struct api_admit_ctx *ctx, struct api_ferrs *fe);
void api_vm_validate_update(const cJSON *old, const cJSON *vm, const struct api_admit_ctx *ctx,
                            struct api_ferrs *fe);

/* The present delete.check.vmoperator.vmware.com/<component> annotations of vm: up to max keys
 * (borrowed from vm) into keys (may be NULL when max is 0). Returns how many are present (may
 * exceed max). While any is present the operator does not delete the VM from vCenter. */
size_t api_vm_delete_checks(const cJSON *vm, const char **keys, size_t max);
/* "deletion held by delete.check.vmoperator.vmware.com/a, .../b" into out (nothing when none);
 * returns the number of checks. For the resource's condition message and events. */
size_t api_vm_delete_checks_format(const cJSON *vm, struct vbuf *out);

/* ---- the other kinds (api_admit_misc.c) ---- */

/* VirtualMachineClass: api_class_validate() (cpus, memory, requests <= limits) and, on update, a
 * controllerName that was set may not be cleared. */
void api_class_admit_validate(const cJSON *old, const cJSON *cls, struct api_ferrs *fe);
/* VirtualMachineService: api_service_validate() plus VM Operator's checks: metadata.name a
 * DNS-1123 label, port names DNS-1123 labels, (protocol, port) unique, selector labels,
 * clusterIp / loadBalancerIP IP addresses, clusterIp "None" not for LoadBalancer and no clusterIp
 * for ExternalName, externalName a DNS-1123 subdomain, loadBalancerSourceRanges CIDRs. */
void api_service_admit_validate(const cJSON *old, const cJSON *svc, struct api_ferrs *fe);
/* NamespaceBinding / VCenterEndpoint: api_binding_validate() / api_endpoint_validate(). */
void api_binding_admit_validate(const cJSON *old, const cJSON *nb, struct api_ferrs *fe);
void api_endpoint_admit_validate(const cJSON *old, const cJSON *ep, struct api_ferrs *fe);

/* The kind of an AdmissionReview request.kind {group, kind}; UNKNOWN for anything else. */
enum api_admit_kind api_admit_kind_parse(const char *group, const char *kind);

/* One entry point for the validating webhook: dispatches on kind and op (old is NULL on create;
 * DELETE and UNKNOWN admit everything, and so does an update of a non-VM object under deletion).
 * Appends to fe; allowed when fe->n == 0 afterwards. */
void api_admit_validate(enum api_admit_kind kind, enum api_admit_op op, const cJSON *old,
                        const cJSON *obj, const struct api_admit_ctx *ctx, struct api_ferrs *fe);

/* The denial message, as VM Operator's webhook builds it: every error as Kubernetes' field.Error
 * ("spec.imageName: Invalid value: \"x\": field is immutable"), joined by ", ". Appends to out;
 * nothing when fe is empty. */
void api_admit_denial(const struct api_ferrs *fe, struct vbuf *out);

#endif
