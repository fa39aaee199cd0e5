/* image_gc.h: the image cache collector's vSphere side: destroys the garbage cache templates
 * (image_gc_plan.h) of one cache folder, never a clone's source.
 *
 * Owns: listing the folder's vmop-image-* VMs, the grace bookkeeping (a garbage template is
 * destroyed only once this process has seen it garbage for opts.grace_s), the in-flight checks and
 * Destroy_Task. Knows nothing of Kubernetes; logs nothing (opts.note hears every action).
 *
 * A clone never loses its source:
 *  - in this process, ic_get() holds a use of the template until the clone task ended
 *    (imgcache.h); the collector takes the item's lock and skips a template with a use, and
 *    ic_get() cannot take a new one while the lock is held;
 *  - across processes (another replica, a restart, a retired client whose clone still runs):
 *    a template whose recentTask shows a queued or running task is skipped (vim_entity_busy), and
 *    the grace covers what that cannot see (only the leader runs the collector; a replica that
 *    lost the lease stops; a clone starts from the template ic_get() just returned, which is the
 *    current one, so only a clone started before the version changed can still need an old one,
 *    and it ends long before the grace does).
 *
 * Threads: an igc_state is used by one thread (the image sync thread).
 */
#ifndef VMOP_IMAGE_GC_H
#define VMOP_IMAGE_GC_H

#include <stddef.h>

#include "image_gc_plan.h"
#include "imgcache.h"
#include "vimclient.h"
#include "vmop_err.h"

#define IGC_GRACE_DEFAULT_S 600

/* What happened to one garbage template (what: "collected", "waiting", "in use", "busy",
 * "failed"; err set for "failed"). */
typedef void (*igc_note_fn)(void *ud, const char *name, const char *moref, enum igc_verdict v,
                            const char *what, const struct vmop_err *err);

struct igc_opts {
    long grace_s; /* seconds a template must have been garbage before it is destroyed; 0: at once */
    igc_note_fn note; /* may be NULL */
    void *note_ud;
};

struct igc_state;
vmop_rc igc_state_new(const struct igc_opts *o, struct igc_state **ret, struct vmop_err *err);
void igc_state_free(struct igc_state *s); /* NULL is fine */
/* A sweep: begin, collect every folder, end. end forgets the templates not seen garbage in the
 * sweep (their grace starts again when they are). */
void igc_sweep_begin(struct igc_state *s);
void igc_sweep_end(struct igc_state *s);

struct igc_result {
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
vmop_rc igc_collect_folder(struct igc_state *s, struct ic_cache *ic, struct vim_client *c,
                           const struct vim_moref *folder, const struct igc_live *live,
                           size_t n_live, int bound, struct igc_result *res, struct vmop_err *err);

#endif
