/* clone_source_gc_scope.h: the image cache collector's controller side: which cache folders exist
 * and what their users can deploy, from the NamespaceBindings and VCenterEndpoints, then
 * csgc_collect_folder() (clone_source_gc.h) on each. Run by the image controller after each sync.
 *
 * Owns: grouping bindings by vCenter (its instance UUID: two endpoints of one vCenter are one
 * scope), the cache folder of a binding (the vmsync cache folder option, else its vmFolder), the
 * live items of a folder (the items of every binding using it plus every endpoint's cluster
 * libraries, at their current content version, read from vCenter now), the folders seen bound
 * since the process started (a folder no binding uses any more is collected whole, then
 * forgotten), logs, and the counters behind vmop_image_cache_templates_collected_total.
 *
 * Never collects on a partial view: a library read that fails skips that vCenter for the sweep; a
 * binding that cannot be parsed or connected, or a cluster library read that fails, skips every
 * unbound folder (the binding's folder might be one) and, for the cluster libraries, the whole
 * sweep. A folder unbound while the process was down is not known and not collected.
 *
 * Threads: one (the image sync thread); csgcs_metrics() from any.
 */
#ifndef VMOP_CLONE_SOURCE_GC_SCOPE_H
#define VMOP_CLONE_SOURCE_GC_SCOPE_H

#include "vbuf.h"
#include "connections.h"
#include "metrics.h"
#include "vm_controller.h"
#include "vmop_err.h"

struct csgcs_opts {
    const char *system_ns; /* credentials Secrets; default vmop-system */
    long grace_s;          /* clone_source_gc.h; 0: CSGC_GRACE_DEFAULT_S, negative: none (tests) */
};

struct igcs;
/* vcs and vmc are borrowed and must outlive it. */
vmop_rc csgcs_new(struct vcenters *vcs, struct vmc *vmc, const struct csgcs_opts *o,
                  struct igcs **ret, struct vmop_err *err);
void csgcs_free(struct igcs *g); /* NULL is fine */
/* One sweep over every vCenter in use. Failures are logged; nothing is returned. */
void csgcs_run(struct igcs *g);
/* Registers the collector's numbers in m (sweeps, templates collected, failures, skips), with
 * collector key key. */
vmop_rc csgcs_metrics_register(struct igcs *g, struct metrics *m, const void *key,
                               struct vmop_err *err);

#endif
