/* clone_source_gc.h: the image cache collector's vSphere side: destroys the garbage cache templates
 * (clone_source_gc_plan.h) of one cache folder, never a clone's source.
 *
 * Owns: listing the folder's vmop-image-* VMs, the grace bookkeeping (a garbage template is
 * destroyed only once this process has seen it garbage for opts.grace_s), the in-flight checks and
 * Destroy_Task. Knows nothing of Kubernetes; logs nothing (opts.note hears every action).
 *
 * A clone never loses its source:
 *  - in this process, csrc_get() holds a use of the template until the clone task ended
 *    (clone_source.h); the collector takes the item's lock and skips a template with a use, and
 *    csrc_get() cannot take a new one while the lock is held;
 *  - across processes (another replica, a restart, a retired client whose clone still runs):
 *    a template whose recentTask shows a queued or running task is skipped (vim_entity_busy), and
 *    the grace covers what that cannot see (only the leader runs the collector; a replica that
 *    lost the lease stops; a clone starts from the template csrc_get() just returned, which is the
 *    current one, so only a clone started before the version changed can still need an old one,
 *    and it ends long before the grace does).
 *
 * Threads: an csgc_state is used by one thread (the image sync thread).
 */
#ifndef VMOP_CLONE_SOURCE_GC_H
#define VMOP_CLONE_SOURCE_GC_H

#include <stddef.h>

#include "clone_source_gc_plan.h"
#include "clone_source.h"
#include "vimclient.h"
#include "vmop_err.h"

#define CSGC_GRACE_DEFAULT_S 600

/* What happened to one garbage template (what: "collected", "waiting", "in use", "busy",
 * "failed"; err set for "failed"). */
typedef void (*csgc_note_fn)(void *ud, const char *name, const char *moref, enum csgc_verdict v,
                             const char *what, const struct vmop_err *err);

struct csgc_opts {
    long grace_s; /* seconds a template must have been garbage before it is destroyed; 0: at once */
    csgc_note_fn note; /* may be NULL */
    void *note_ud;
};

struct csgc_state;
vmop_rc csgc_state_new(const struct csgc_opts *o, struct csgc_state **ret, struct vmop_err *err);
void csgc_state_free(struct csgc_state *s); /* NULL is fine */
/* A sweep: begin, collect every folder, end. end forgets the templates not seen garbage in the
 * sweep (their grace starts again when they are). */
void csgc_sweep_begin(struct csgc_state *s);
void csgc_sweep_end(struct csgc_state *s);

struct csgc_result {
    unsigned templates; /* vmop cache templates found */
    unsigned garbage;
    unsigned collected; /* destroyed */
    unsigned waiting;   /* garbage, inside the grace */
    unsigned in_use;    /* garbage, a clone of this process runs from it */
    unsigned busy;      /* garbage, a task runs on it in vCenter */
    unsigned failed;
};

/* Collects in folder (its VMs directly in it). live: what the folder's users can deploy now;
 * bound = 0: no binding uses the folder (every cache template in it is garbage). ic: the image
 * cache the clones of this vCenter use (NULL: none in this process). Adds to *res. Fails only
 * when the folder cannot be listed; a template that cannot be destroyed counts in res->failed. */
vmop_rc csgc_collect_folder(struct csgc_state *s, struct csrc_cache *ic, struct vim_client *c,
                            const struct vim_moref *folder, const struct csgc_live *live,
                            size_t n_live, int bound, struct csgc_result *res,
                            struct vmop_err *err);

#endif
