/* clone_source_gc_scope.h: the image cache collector's controller side: which cache folders exist
 * and what their users can deploy, from the NamespaceBindings and VCenterEndpoints, then
 * csgc_collect_folder() (clone_source_gc.h) on each. Run by the image controller after each sync.
 *
 * Owns: grouping bindings by vCenter (its instance UUID: two endpoints of one vCenter are one
 * scope), the cache folder of a binding (the vmsync cache folder option, else its vmFolder), the
 * live items of a folder (the items of every binding using it plus every endpoint's cluster
 * libraries, at their current content version, read from vCenter now, or just before by the
 * image sync, which offers its reads: csgcs_offer), the folders seen bound
 * since the process started (a folder no binding uses any more is collected whole, then
 * forgotten), logs, and the counters behind vmop_image_cache_templates_collected_total.
 *
 * Never collects on a partial view: a library read that fails skips that vCenter for the sweep; a
 * binding that cannot be parsed or connected, or a cluster library read that fails, skips every
 * unbound folder (the binding's folder might be one) and, for the cluster libraries, the whole
 * sweep. A folder unbound while the process was down is not known and not collected.
 *
 * Idle sweeps: a sweep whose inputs (vCenters, folders, live items, cluster items, folders known
 * from before, and csrc_activity(): templates deployed or used by this process) hash the same as
 * the last full sweep's, when that one left nothing behind (no template in grace, in use, busy or
 * failed, no folder unreadable), lists no folder (no vCenter call) and counts in
 * vmop_image_cache_sweeps_idle_total; a full sweep still runs at least every
 * CSGCS_FULL_SWEEP_MS (templates made by another process, say a previous leader, are found then).
 *
 * Threads: one (the image sync thread); csgcs_metrics() from any.
 */
#ifndef VMOP_CLONE_SOURCE_GC_SCOPE_H
#define VMOP_CLONE_SOURCE_GC_SCOPE_H

#include "api_admin.h"
#include "vbuf.h"
#include "connections.h"
#include "metrics.h"
#include "vm_controller.h"
#include "vmop_err.h"

#define CSGCS_FULL_SWEEP_MS                                                                        \
    (3600 * 1000L) /* the longest an idle collector goes without a sweep                           \
                    */

struct csgcs_opts {
    const char *system_ns; /* credentials Secrets; default vmop-system */
    long grace_s;          /* clone_source_gc.h; 0: CSGC_GRACE_DEFAULT_S, negative: none (tests) */
};

struct igcs;
/* vcs and vmc are borrowed and must outlive it. */
vmop_rc csgcs_new(struct vcenters *vcs, struct vmc *vmc, const struct csgcs_opts *o,
                  struct igcs **ret, struct vmop_err *err);
void csgcs_free(struct igcs *g); /* NULL is fine */
/* Offers the sweep that follows the item list the image sync has just read for library ref on
 * client c (items NULL: vCenter does not know that library), so that the sweep reads no library
 * the sync read: a library costs its vCenter calls once per sync, not twice. The list is copied;
 * offers are used by the next csgcs_run() only and dropped at its end. A library nobody offered
 * is read by the sweep itself, as before. Call from the image sync thread. */
vmop_rc csgcs_offer(struct igcs *g, const struct vim_client *c, const struct api_library_ref *ref,
                    const struct vim_library_item_list *items, struct vmop_err *err);
/* Drops the offers not used yet (a sync that ended before its sweep): a sweep never uses reads
 * of an earlier sync. */
void csgcs_drop_offers(struct igcs *g);
/* One sweep over every vCenter in use. Failures are logged; nothing is returned. */
void csgcs_run(struct igcs *g);
/* Registers the collector's numbers in m (sweeps, templates collected, failures, skips), with
 * collector key key. */
vmop_rc csgcs_metrics_register(struct igcs *g, struct metrics *m, const void *key,
                               struct vmop_err *err);

#endif
