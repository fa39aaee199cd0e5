/* image_gc_scope.h: the image cache collector's controller side: which cache folders exist and
 * what their users can deploy, from the NamespaceBindings and VCenterEndpoints, then
 * igc_collect_folder() (image_gc.h) on each. Run by the image controller after each sync.
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
 * Threads: one (the image sync thread); igcs_metrics() from any.
 */
#ifndef VMOP_IMAGE_GC_SCOPE_H
#define VMOP_IMAGE_GC_SCOPE_H

#include "vbuf.h"
#include "vcenters.h"
#include "vm_controller.h"
#include "vmop_err.h"

struct igcs_opts {
    const char *system_ns; /* credentials Secrets; default vmop-system */
    long grace_s;          /* image_gc.h; 0: IGC_GRACE_DEFAULT_S, negative: none (tests) */
};

struct igcs;
/* vcs and vmc are borrowed and must outlive it. */
vmop_rc igcs_new(struct vcenters *vcs, struct vmc *vmc, const struct igcs_opts *o,
                 struct igcs **ret, struct vmop_err *err);
void igcs_free(struct igcs *g); /* NULL is fine */
/* One sweep over every vCenter in use. Failures are logged; nothing is returned. */
void igcs_run(struct igcs *g);
void igcs_metrics(struct igcs *g, struct vbuf *out);

#endif
