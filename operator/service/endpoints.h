/* endpoints.h: pure computation of what a VirtualMachineService publishes (vm-operator.md §7).
 *
 * Owns: selector matching on VM labels, the ready / not-ready / left-out rules for a VM, and the
 * three desired objects for one VirtualMachineService:
 *   - a selectorless core/v1 Service of the same name (ownerReference to the VirtualMachineService
 *     with controller=true; type and ports copied, targetPort as an int; labels and annotations
 *     carried over; loadBalancerIP, loadBalancerSourceRanges, clusterIP (from spec.clusterIp),
 *     externalName; allocateLoadBalancerNodePorts=false for LoadBalancer);
 *   - core/v1 Endpoints (one subset: ready VMs in `addresses`, the others in `notReadyAddresses`,
 *     targetRef kind VirtualMachine with name/namespace/uid);
 *   - one discovery.k8s.io/v1 EndpointSlice named like the Service (labels
 *     kubernetes.io/service-name and endpointslice.kubernetes.io/managed-by, addressType IPv4,
 *     conditions ready/serving/terminating, targetRef, ports).
 * and the comparisons/merges that decide whether an object stored in the API server must be
 * rewritten (so unchanged input never causes a write).
 * Not here: any I/O (operator/service/vmservice.c does the GETs and PUTs).
 *
 * VM rules (input is the VM JSON as stored): a VM is left out when it is being deleted, has no
 * status.network.primaryIP4, or is in another namespace. Otherwise it is ready when
 * status.powerState is PoweredOn and either it has no readinessProbe action or its Ready condition
 * is True; every other VM (powered off, suspended, probe not passing) is listed as not ready.
 * Output order is by VM name, so the same input gives byte-identical objects.
 */
#ifndef VMOP_ENDPOINTS_H
#define VMOP_ENDPOINTS_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "vmop_err.h"

#define EP_MAX_VMS          10000 /* VMs considered per service; more is VMOP_E_TOOBIG */
#define EP_MANAGED_BY       "vmop-vmservice-controller"
#define EP_LABEL_SVC_NAME   "kubernetes.io/service-name"
#define EP_LABEL_MANAGED_BY "endpointslice.kubernetes.io/managed-by"
/* On the Endpoints: vmop writes the EndpointSlice itself, so kube-controller-manager's
 * EndpointSlice mirroring controller must not add a second slice mirrored from the Endpoints. */
#define EP_LABEL_SKIP_MIRROR "endpointslice.kubernetes.io/skip-mirror"
#define EP_VMSVC_API         "vmoperator.vmware.com/v1alpha6"
#define EP_VMSVC_KIND        "VirtualMachineService"

enum ep_vm_class {
    EP_VM_SKIP,      /* left out: deleting, no primaryIP4 */
    EP_VM_NOT_READY, /* listed as not ready */
    EP_VM_READY,     /* listed as ready */
};

/* 1 when every key/value of selector (a JSON object of strings) is in labels. An absent or empty
 * selector matches nothing (the Service is selectorless and a VirtualMachineService without a
 * selector has no backends). */
int ep_selector_matches(const cJSON *selector, const cJSON *labels);

/* Classifies one VM (JSON object) by the rules above (namespace is not checked here). */
enum ep_vm_class ep_vm_classify(const cJSON *vm);

/* 1 when the VM has a readinessProbe action (tcpSocket, guestHeartbeat or non-empty guestInfo). */
int ep_vm_has_probe(const cJSON *vm);

/* The desired objects. Each is owned by the struct (ep_desired_free). endpoints and slice are NULL
 * for an ExternalName service (nothing to publish). */
struct ep_desired {
    cJSON *service;
    cJSON *endpoints;
    cJSON *slice;
    size_t n_ready, n_not_ready; /* for logs and tests */
};

/* Computes the desired objects for vmsvc (a VirtualMachineService JSON with metadata.name,
 * namespace and uid) over vms[0..n_vms) (VirtualMachine JSON objects, any order; VMs of other
 * namespaces or not matching the selector are ignored). Borrowed inputs. VMOP_E_INVALID when the
 * service lacks name/namespace/uid; VMOP_E_TOOBIG over EP_MAX_VMS matches. On success *ret is
 * filled (free with ep_desired_free); on failure it is left zeroed. */
vmop_rc ep_compute(const cJSON *vmsvc, const cJSON *const *vms, size_t n_vms,
                   struct ep_desired *ret, struct vmop_err *err);
void ep_desired_free(struct ep_desired *d); /* NULL-safe; leaves *d zeroed */

/* ---- comparing with what the API server has ---- */

/* Given the desired object and the one read from the server (`actual`), returns 1 when actual
 * must be rewritten. Fields the server or other controllers fill in (clusterIP when not asked
 * for, nodePorts, extra labels/annotations, status) do not count. */
int ep_service_differs(const cJSON *desired, const cJSON *actual);
int ep_endpoints_differs(const cJSON *desired, const cJSON *actual);
int ep_slice_differs(const cJSON *desired, const cJSON *actual);

/* The object to PUT: a copy of actual (keeps resourceVersion, server-filled fields) with the
 * desired labels/annotations/ownerReference merged in and the desired spec (Service: type, ports
 * keeping their allocated nodePorts, LB fields; Endpoints: subsets; EndpointSlice: addressType,
 * endpoints, ports) replacing its own. *ret_obj: caller frees (cJSON_Delete). */
vmop_rc ep_merge_for_update(const cJSON *desired, const cJSON *actual, cJSON **ret_obj,
                            struct vmop_err *err);

#endif
