/* vm_controller.h: the VirtualMachine controller: informers on VirtualMachines and everything
 * they reference, a work queue with workers, and reconcile(namespace/name).
 *
 * Owns: the informers (VirtualMachines, VirtualMachineClasses, VirtualMachineImages,
 * ClusterVirtualMachineImages, Secrets, StorageClasses, NamespaceBindings, VCenterEndpoints), the
 * indexes that map a referenced object back to the VMs using it, the finalizer, writing the
 * admission defaults into spec, calling the resolver and vmsync, the status patch and the events.
 * Reconcile reads from the caches only; vCenter is touched only when every prerequisite holds.
 *
 * Threads: the informers' threads enqueue keys; N workers reconcile (never the same key twice at
 * once). Ownership: vmc_new() returns a controller freed by vmc_free(); the kube client, recorder
 * and vcenters are borrowed and must outlive it.
 */
#ifndef VMOP_VM_CONTROLLER_H
#define VMOP_VM_CONTROLLER_H

#include "kube_client.h"
#include "kube_events.h"
#include "kube_informer.h"
#include "metrics.h"
#include "vbuf.h"
#include "connections.h"
#include "change_feed.h"
#include "vmsync.h"
#include "vmop_err.h"

#define VMC_FINALIZER     "vmoperator.vmware.com/virtualmachine"
#define VMC_PAUSED_ANNOT  "vmoperator.vmware.com/paused"
#define VMC_FIELD_MANAGER "vmop"
/* {"name","uid","generation"} of the class whose CPU/memory the VM last got (as VM Operator). */
#define VMC_LAST_RESIZED_ANNOT "vmoperator.vmware.com/last-resized-vm-class"
#define VMC_WAIT_DELAY_MS      3000  /* requeue while waiting for create / an IP */
#define VMC_WAIT_MAX_MS        10000 /* the longest such requeue */
#define VMC_CREATE_WAIT_MS     1000  /* a busy create slot, when the wait line is out of memory */
#define VMC_OWN_WRITE_WAIT_MS  1000  /* a reconcile waits this long at most for its own write */
#define VMC_OWN_WRITE_RETRY_MS 20    /* and looks again this often meanwhile */
#define VMC_STATUS_HOLD_MS     3000 /* a create's status write waits this long for the IP, at most */
/* A change the feed hears is reconciled this long after it. The feed itself gathers a burst's
 * changes (vcfeed_opts.coalesce_ms); this delay is what lets a pass that read the VM after the
 * change drop the wake-up (kube_queue_cancel_after) instead of running again at once. */
#define VMC_FEED_COALESCE_MS 20

extern const struct kube_resource vmc_res_vms, vmc_res_classes, vmc_res_images, vmc_res_cimages,
    vmc_res_storageclasses, vmc_res_bindings, vmc_res_endpoints;

struct metrics_std;

struct vmc_opts {
    const char *system_ns; /* where credentials Secrets live; default vmop-system */
    unsigned workers;      /* 0: 4 */
    /* Reconciles that may be creating a VM in vCenter at once (VM Operator's cap: 80% of the
     * workers); a create past it waits, re-queued, while the other workers go on with VMs that
     * exist. 0: VMC_DEFAULT_CREATES_PCT percent of the workers, at least 1. */
    unsigned max_creates;
    long resync_ms; /* periodic re-reconcile of every VM; 0: none */
    /* Change feed limits (0: the most, VMC_FEEDS_MAX / VMC_FEED_FOLDERS): endpoints with a feed,
     * and VM folders each feed watches. Past them vmop logs, counts
     * (vmop_vm_feed_unwatched_endpoints / _folders) and relies on the periodic resync. */
    unsigned feed_max_endpoints, feed_max_folders;
    struct metrics_std *metrics; /* borrowed, may be NULL: reconcile counts and durations, the
                                  * queue, the prober, and per endpoint the vCenter client and
                                  * change feed (operator/metrics.h) */
    /* Asked before each reconcile: 0 = this process may not act now (leadership unconfirmed);
     * the key is looked at again a second later. NULL: always act. */
    int (*may_act)(void *ud);
    void *may_act_ud;
};

#define VMC_DEFAULT_CREATES_PCT 80 /* max_creates 0: this share of the workers */
#define VMC_FEEDS_MAX           64 /* VCenterEndpoints with a change feed, at most */
#define VMC_FEED_FOLDERS        VCFEED_MAX_CONTAINERS /* VM folders one feed watches, at most */

struct vmc;

vmop_rc vmc_new(struct kube_client *kc, struct kube_recorder *rec, struct vcenters *vcs,
                const struct vmc_opts *o, struct vmc **ret, struct vmop_err *err);
/* Starts the informers (intake). */
vmop_rc vmc_start_informers(struct vmc *c, struct vmop_err *err);
/* 1 when every informer has listed once. */
int vmc_synced(struct vmc *c);
/* Starts the workers (call once synced, and when leading). */
vmop_rc vmc_start_workers(struct vmc *c, struct vmop_err *err);
/* Stops intake (informers), then drains the workers for up to drain_ms. */
void vmc_stop(struct vmc *c, long drain_ms);
void vmc_free(struct vmc *c); /* NULL-safe; stops first */

/* Queues "namespace/name" for a reconcile (thread-safe): the hook for an event source such as the
 * vCenter change feed (operator/vcenter/change_feed.h). */
void vmc_enqueue(struct vmc *c, const char *key);

/* Reconciles one key now, in this thread (tests). */
vmop_rc vmc_reconcile(struct vmc *c, const char *key, struct vmop_err *err);

/* Registers the controller's own numbers in m (reconciles, failures, queue length, change feeds,
 * drift); collector key c (metrics_remove_collectors(m, c) before vmc_free). */
vmop_rc vmc_metrics_register(struct vmc *c, struct metrics *m, struct vmop_err *err);

/* The informers, for the image controller and tests (borrowed). */
struct kube_informer *vmc_informer(struct vmc *c, const char *resource);

/* The attachment (connections.h) that gives every vCenter connection its vmsync context, shared
 * by the workers; o is borrowed and must outlive the connections. vmc_conn_sync() reads it back. */
struct vc_attachment vmc_sync_attachment(const struct vs_options *o);
struct vs_ctx *vmc_conn_sync(const struct vc_conn *c);

#endif
