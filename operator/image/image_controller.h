/* image_controller.h: the image catalog controller: VirtualMachineImages per NamespaceBinding
 * (its contentLibraries) and ClusterVirtualMachineImages per VCenterEndpoint (its
 * clusterContentLibraries), synced at start and every period from vCenter's Content Libraries.
 *
 * Owns: the sync thread, reading the libraries through catalog_vc (when built), and applying the
 * catalog's diff (catalog.h) with the Kubernetes client: create + status, update (+ status),
 * delete. Reads bindings, endpoints and existing images from the VM controller's informers.
 * After each sync it runs the image cache collector (clone_source_gc_scope.h).
 *
 * Threads: one sync thread. Ownership: imgc_free() frees; everything passed to imgc_new() is
 * borrowed and must outlive it.
 */
#ifndef VMOP_IMAGE_CONTROLLER_H
#define VMOP_IMAGE_CONTROLLER_H

#include "kube_client.h"
#include "kube_events.h"
#include "vbuf.h"
#include "connections.h"
#include "vm_controller.h"
#include "vmop_err.h"

struct imgc_opts {
    const char *system_ns; /* credentials Secrets; default vmop-system */
    long period_ms;        /* 0: 300000 */
    long
        cache_grace_s; /* image cache collector grace (clone_source_gc.h); 0: 600, negative: none */
};

struct imgc;

vmop_rc imgc_new(struct kube_client *kc, struct kube_recorder *rec, struct vcenters *vcs,
                 struct vmc *vmc, const struct imgc_opts *o, struct imgc **ret,
                 struct vmop_err *err);
/* Starts the sync thread (first sync at once). */
vmop_rc imgc_start(struct imgc *c, struct vmop_err *err);
/* Asks for a sync soon (a binding or endpoint changed). */
void imgc_kick(struct imgc *c);
void imgc_stop(struct imgc *c);
void imgc_free(struct imgc *c); /* NULL-safe */
/* Registers the controller's numbers in m (syncs, image writes, the clone-source collector's
 * sweeps); collector key c (metrics_remove_collectors(m, c) before imgc_free). */
vmop_rc imgc_metrics_register(struct imgc *c, struct metrics *m, struct vmop_err *err);

/* One full sync now, in this thread (tests). */
vmop_rc imgc_sync_once(struct imgc *c, struct vmop_err *err);

#endif
