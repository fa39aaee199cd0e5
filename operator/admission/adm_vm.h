/* adm_vm.h: the VirtualMachine admission webhooks' decisions over vmop's caches.
 *
 * Owns: the mutating webhook for VirtualMachine (VM Operator's visible defaults at apply time:
 * powerState and the power modes, instanceUUID, biosUUID, cloudInit.instanceID, the default eth0
 * on the binding's default network, spec.image from imageName, nextRestartTime "now" -> the
 * current time), answered as a JSON Patch. The defaults themselves are api_vm_default() (pure,
 * api/api_vm.h): the VM controller applies the same ones on reconcile, so a cluster without the
 * webhook still works.
 *
 * Reads only caches (the images, cluster images and bindings informers: handlers run on every
 * replica and are bounded in time); no side effects, so dry runs need no special case.
 * Thread-safe: handlers run on the webhook server's connection threads.
 */
#ifndef VMOP_ADM_VM_H
#define VMOP_ADM_VM_H

#include "kube_informer.h"
#include "vmop_err.h"
#include "wh_server.h"

/* The webhook paths, VM Operator's (the storage version's kind names them). */
#define ADM_VM_MUTATE_PATH "/default-mutate-vmoperator-vmware-com-v1alpha6-virtualmachine"

struct adm_vm {
    struct kube_informer *images;   /* VirtualMachineImages, "ns" index */
    struct kube_informer *cimages;  /* ClusterVirtualMachineImages */
    struct kube_informer *bindings; /* NamespaceBindings, "ns" index */
};

/* wh_admit_fn for ADM_VM_MUTATE_PATH; ud is a struct adm_vm (borrowed). */
vmop_rc adm_vm_mutate(void *ud, const struct wh_admission_request *req,
                      struct wh_admission_response *resp, struct vmop_err *err);

#endif
