/* vmservice.h: the VirtualMachineService controller (vm-operator.md §7).
 *
 * Owns: informers on VirtualMachineServices, VirtualMachines (unless opts.vm_informer lends one)
 * and core Services (all namespaces, or opts.ns), a work queue of VirtualMachineService keys with
 * its workers, and the reconcile that keeps, for each VirtualMachineService, its finalizer, its
 * selectorless Service, its Endpoints and its EndpointSlice (computed by
 * operator/service/endpoints.c, written only when they differ) and copies
 * status.loadBalancer.ingress from the Service. Deletion: the finalizer
 * `vmoperator.vmware.com/virtualmachineservice` is removed; the three objects go by ownerReference
 * garbage collection. A VirtualMachine add/update/delete requeues every VirtualMachineService of
 * its namespace whose selector matched the old labels or matches the new ones (services are
 * indexed by namespace); a Service change requeues its owning VirtualMachineService.
 * Not here: VM readiness (operator/service/probe.h: the VM controller sets the VM's Ready
 * condition, which this controller reads).
 *
 * Wiring (operator/main.c), after the kube client exists:
 *     struct vmsvc_opts so = {.workers = 2};
 *     struct vmsvc *vs = NULL;
 *     if (vmsvc_new(kc, &so, &vs, &err) || vmsvc_start(vs, &err)) ... fail ...
 *     ... run ...
 *     vmsvc_stop(vs);   // before kube_client_free(kc)
 *     vmsvc_free(vs);
 * RBAC: vmservices get/list/watch/update (+ status), virtualmachines get/list/watch, services /
 * endpoints / endpointslices get/list/watch/create/update.
 *
 * Sharing the VM informer (operator/vmop.c: the VM controller's, so VMs are cached once):
 * vmsvc_new() adds vmservice's handlers to opts.vm_informer, which must not be started yet and
 * must have an index "ns" emitting metadata.namespace. Its owner starts it (before vmsvc_start(),
 * which waits for it to sync), stops it, and frees it; vmservice never does. The handlers enqueue
 * into vmservice's queue from the moment the owner starts it, so the owner must stop it before
 * vmsvc_free(). Its resyncs (on_update(o, o)) are ignored here: the services' own resync covers
 * them.
 *
 * Threads: vmsvc_start() starts 3 informer threads (2 with a shared VM informer) and opts.workers
 * worker threads; vmsvc_stop() joins them all. Not for concurrent start/stop calls.
 */
#ifndef VMOP_VMSERVICE_H
#define VMOP_VMSERVICE_H

#include "kube_client.h"
#include "kube_events.h"
#include "kube_informer.h"
#include "vmop_err.h"

#define VMSVC_FINALIZER "vmoperator.vmware.com/virtualmachineservice"

extern const struct kube_resource vmsvc_res_vmservices, vmsvc_res_vms, vmsvc_res_services,
    vmsvc_res_endpoints, vmsvc_res_endpointslices;

struct vmsvc_opts {
    unsigned workers;          /* reconcile threads; 0: 2 */
    const char *ns;            /* watch one namespace; NULL: all (copied) */
    long resync_ms;            /* periodic requeue of every service; 0: none */
    long drain_ms;             /* vmsvc_stop() drain deadline; 0: 5000 */
    struct kube_recorder *rec; /* optional: Warning events on reconcile failures (borrowed) */
    /* optional, borrowed: an informer on virtualmachines (all namespaces, or opts.ns) to share
     * instead of making one; see "Sharing the VM informer" above. */
    struct kube_informer *vm_informer;
};

/* Per-process counters for tests and metrics. */
struct vmsvc_stats {
    unsigned long reconciles, failures, writes; /* reconciles finished; writes: creates and
                                                 * updates of owned objects */
};

struct vmsvc;

/* kc (and opts->rec) are borrowed for the controller's life; opts may be NULL. *ret: vmsvc_free().
 */
vmop_rc vmsvc_new(struct kube_client *kc, const struct vmsvc_opts *opts, struct vmsvc **ret,
                  struct vmop_err *err);
/* Starts informers and workers; returns once the informers have synced (bounded: 30 s). */
vmop_rc vmsvc_start(struct vmsvc *vs, struct vmop_err *err);
/* Stops informers then workers (drain bounded by opts.drain_ms). Idempotent. */
void vmsvc_stop(struct vmsvc *vs);
/* Stops if needed and frees. NULL-safe. */
void vmsvc_free(struct vmsvc *vs);
void vmsvc_get_stats(struct vmsvc *vs, struct vmsvc_stats *ret);

#endif
