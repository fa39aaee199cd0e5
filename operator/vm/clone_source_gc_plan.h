/* clone_source_gc_plan.h: which image cache templates (clone_source.h) are garbage: the pure
 * decision of the collector (clone_source_gc.h does the I/O).
 *
 * Owns: the rule. Given the VMs found in one cache folder and the (item id, content version)
 * pairs the libraries in scope of that folder's users offer now, a VM is garbage only when it is
 * one of vmop's cache templates: its name starts with "vmop-image-", its annotation is exactly
 * vmop's marker (clone_source.h) and the name is the one the marker's item and version give, and it
 * carries no mark of a VirtualMachine resource (a tenant VM cloned from a template inherits the
 * annotation; its own name and extraConfig tell it apart). Anything else is foreign and kept,
 * whatever its name. A cache template is garbage when
 *   - the folder is no longer used by any binding (CSGC_UNBOUND);
 *   - its item is in no library in scope (CSGC_REMOVED);
 *   - its content version is not the item's current one (CSGC_SUPERSEDED);
 *   - another cache template of the same name in the folder is kept (CSGC_DUPLICATE: a crash
 *     between two deploys; the one with the smallest moref stays).
 * Whether a garbage template may be destroyed now (in use, busy in vCenter, grace) is
 * clone_source_gc.c's.
 */
#ifndef VMOP_CLONE_SOURCE_GC_PLAN_H
#define VMOP_CLONE_SOURCE_GC_PLAN_H

#include <stddef.h>

#include "vimclient.h"

/* One VM of the folder, as read (strings borrowed). */
struct csgc_vm {
    const char *name;
    const char *annotation; /* NULL: none */
    struct vim_moref ref;
    int resource_marks; /* it carries vmop.uid or vmservice.namespacedName (ownership.h) */
};

/* An item the folder's users can deploy, at its current content version (borrowed). */
struct csgc_live {
    const char *item_id;
    const char *content_version; /* NULL or "": none */
};

enum csgc_verdict {
    CSGC_FOREIGN = 0, /* not a vmop cache template: never touched */
    CSGC_KEEP,        /* a current cache template */
    CSGC_SUPERSEDED,
    CSGC_REMOVED,
    CSGC_UNBOUND,
    CSGC_DUPLICATE,
};
const char *csgc_verdict_str(enum csgc_verdict v); /* "superseded", ... */
int csgc_is_garbage(enum csgc_verdict v);

/* Fills verdicts[0..n_vms). bound: 0 = no binding uses the folder any more (live is then
 * ignored). */
void csgc_decide(const struct csgc_vm *vms, size_t n_vms, const struct csgc_live *live,
                 size_t n_live, int bound, enum csgc_verdict *verdicts);

#endif
