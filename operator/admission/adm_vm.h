/* adm_vm.h: the VirtualMachine admission webhooks' decisions over vmop's caches.
 *
 * Owns: the validating webhook of every kind vmop checks (api_admit_validate(), api/api_admit.h:
 * immutable fields, power transitions, privileged-only fields and metadata, the namespace
 * binding's storage classes and networks; denials as VM Operator words them), and the mutating
 * webhook for VirtualMachine: first the request as sent is checked (api_vm_admit_request():
 * spec.instanceUUID / spec.biosUUID on create only for privileged users, nextRestartTime), then
 * VM Operator's visible defaults at apply time (
 * powerState and the power modes, instanceUUID, biosUUID, cloudInit.instanceID, the default eth0
 * on the binding's default network, spec.image from imageName, nextRestartTime "now" -> the
 * current time), and on create the controller's finalizer and the last-resized-vm-class
 * annotation (add_controller_metadata: the first reconcile then creates at once instead of
 * writing them itself), answered as a JSON Patch. The defaults themselves are api_vm_default()
 * (pure, api/api_vm.h): the VM controller applies the same ones on reconcile, so a cluster without
 * the webhook still works.
 *
 * Reads only caches (the images, cluster images and bindings informers: handlers run on every
 * replica and are bounded in time); no side effects, so dry runs need no special case.
 * Thread-safe: handlers run on the webhook server's connection threads.
 */
#ifndef VMOP_ADM_VM_H
#define VMOP_ADM_VM_H

#include "api_admit.h"
#include "kube_informer.h"
#include "vmop_err.h"
#include "wh_server.h"

/* The webhook paths, VM Operator's (the storage version's kind names them), and vmop's own for
 * its admin kinds in the same pattern. The VirtualMachine webhooks are registered at every served
 * version (adm_hub.h) at paths without a version, which a release that expects the hub alone does
 * not serve (during a rolling upgrade it answers 404: the request is refused, never mis-read); the
 * handlers behind the versioned paths are the same, for webhook configurations written before. */
#define ADM_VM_MUTATE_PATH       "/default-mutate-vmoperator-vmware-com-v1alpha6-virtualmachine"
#define ADM_VM_VALIDATE_PATH     "/default-validate-vmoperator-vmware-com-v1alpha6-virtualmachine"
#define ADM_VM_MUTATE_ALL_PATH   "/default-mutate-vmoperator-vmware-com-virtualmachine"
#define ADM_VM_VALIDATE_ALL_PATH "/default-validate-vmoperator-vmware-com-virtualmachine"
#define ADM_CLS_VALIDATE_PATH    "/default-validate-vmoperator-vmware-com-v1alpha6-virtualmachineclass"
#define ADM_SVC_VALIDATE_PATH                                                                      \
    "/default-validate-vmoperator-vmware-com-v1alpha6-virtualmachineservice"
#define ADM_NSB_VALIDATE_PATH "/default-validate-infra-vmop-io-v1alpha1-namespacebinding"
#define ADM_VCE_VALIDATE_PATH "/default-validate-infra-vmop-io-v1alpha1-vcenterendpoint"

/* The VM controller's finalizer, and the annotation under which it leaves a VM alone. */
#define ADM_VM_FINALIZER    "vmoperator.vmware.com/virtualmachine"
#define ADM_VM_PAUSED_ANNOT "vmoperator.vmware.com/paused"

struct adm_vm {
    struct kube_informer *classes;  /* VirtualMachineClasses (the resized-class annotation) */
    struct kube_informer *images;   /* VirtualMachineImages, "ns" index */
    struct kube_informer *cimages;  /* ClusterVirtualMachineImages */
    struct kube_informer *bindings; /* NamespaceBindings, "ns" index */
    struct api_privileged_cfg priv; /* who may set privileged-only fields (borrowed strings) */
};

/* wh_admit_fn for ADM_VM_MUTATE_PATH and ADM_VM_MUTATE_ALL_PATH; ud is a struct adm_vm
 * (borrowed). A request in any served version (adm_hub.h). */
vmop_rc adm_vm_mutate(void *ud, const struct wh_admission_request *req,
                      struct wh_admission_response *resp, struct vmop_err *err);

/* wh_admit_fn for every ADM_*_VALIDATE*_PATH (the kind comes from the request); ud as above. A
 * request in any served version (adm_hub.h). */
vmop_rc adm_validate(void *ud, const struct wh_admission_request *req,
                     struct wh_admission_response *resp, struct vmop_err *err);

#endif
