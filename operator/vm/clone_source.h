/* clone_source.h: the clone sources of vmop VMs: one template per content library item (and content
 * version), deployed once from the item and found again by inventory path.
 *
 * Owns: the cache template's name ("vmop-image-<item id>[-<content version>]"), its marker
 * annotation, deploying it (OVF or VM-template item via vim_library_deploy), finishing it
 * (power off, annotation, MarkAsTemplate), and serializing concurrent creates of one item inside
 * the process (a mutex stripe per item id), and counting the clones in flight from each template
 * (csrc_get() holds a use of the template it returns until csrc_put()) so that the collector
 * (clone_source_gc.h) never destroys a clone's source.
 *
 * Crash safety: a crash between the deploy and MarkAsTemplate leaves a VM with the cache name
 * that is not a template yet; the next call finds it by path and finishes it. Names starting
 * with "vmop-image-" in the cache folder belong to vmop: a TEMPLATE with such a name but without
 * vmop's marker annotation was not made by vmop and is refused (VMOP_E_EXISTS), never adopted.
 * A duplicate after a crash (two deploys) is harmless: the path lookup picks one (the collector,
 * clone_source_gc.h, destroys the other).
 */
#ifndef VMOP_CLONE_SOURCE_H
#define VMOP_CLONE_SOURCE_H

#include <stddef.h>

#include "vimclient.h"
#include "vmop_err.h"

#define CSRC_NAME_PREFIX "vmop-image-"
#define CSRC_NAME_MAX    80 /* vSphere's entity name limit */
/* The marker annotation: CSRC_MARKER_PREFIX "<item id>" CSRC_MARKER_MID "<content version>". */
#define CSRC_MARKER_PREFIX "vmop image cache: library item "
#define CSRC_MARKER_MID    ", content version "

struct csrc_cache;

vmop_rc csrc_new(struct csrc_cache **ret_ic, struct vmop_err *err);
void csrc_free(struct csrc_cache *ic); /* NULL is fine */

/* The cache template name for an item (content_version may be NULL). buf of CSRC_NAME_MAX + 1. */
vmop_rc csrc_template_name(const char *item_id, const char *content_version, char *buf, size_t size,
                           struct vmop_err *err);

struct csrc_target {
    const char *item_id;               /* content library item */
    const char *folder_path;           /* inventory path of the cache folder */
    const struct vim_moref *folder;    /* the same folder */
    const struct vim_moref *pool;      /* where the deploy places it (required by the deploy) */
    const struct vim_moref *datastore; /* optional */
};

/* Parses a marker annotation (pure): 1 and the item id / content version (NUL-terminated, into
 * buffers of the given sizes) when text is exactly vmop's marker, else 0. */
int csrc_marker_parse(const char *text, char *item_id, size_t item_size, char *version,
                      size_t version_size);

/* One use of a cache template (a clone in flight from it). Empty ({0}) = none. */
struct csrc_hold {
    struct csrc_cache *ic;
    char name[CSRC_NAME_MAX + 1];
};

/* Finds or makes the cache template for t->item_id; ret_template: a template VM to clone. On
 * success *ret_hold holds a use of the template (taken under the item's lock, so the collector
 * cannot destroy it between the lookup and the clone): release it with csrc_put() once the clone
 * task has ended, whatever its outcome. On failure *ret_hold is empty. */
vmop_rc csrc_get(struct csrc_cache *ic, struct vim_client *c, const struct csrc_target *t,
                 struct vim_moref *ret_template, struct csrc_hold *ret_hold, struct vmop_err *err);
/* Releases a use (NULL or empty is fine; the hold is emptied, so a second put does nothing). */
void csrc_put(struct csrc_hold *h);
/* A process-wide count of clone-source activity (uses taken by csrc_get, put by csrc_put): the
 * collector skips a sweep only when it did not move since the last full one
 * (clone_source_gc_scope.h). */
unsigned long csrc_activity(void);

/* A template found or made is remembered per (cache folder, item) for CSRC_KNOWN_TTL_MS: the
 * creates in that time clone it without asking the library for the item's content version or
 * vCenter for the path (a new content version is used within that time). csrc_forget() drops what
 * is remembered for an item: the collector calls it when it destroys one of the item's
 * templates, vmsync when a clone finds its source gone. */
#define CSRC_KNOWN_TTL_MS 60000
void csrc_forget(struct csrc_cache *ic, const char *item_id);
/* Forgets every remembered template (the vCenter session was renewed). */
void csrc_forget_all(struct csrc_cache *ic);
/* The device keys of a remembered template's disks (what a clone under a storage policy places
 * disk by disk), kept with t's entry and forgotten with it: vmop's templates do not change, a
 * new content version is another template. get: 1 and *ret_n keys (at most VIM_MAX_CLONE_DISKS)
 * when t's entry is fresh, is tmpl and has them; else 0. put: best effort (no entry, no change). */
int csrc_disks_get(struct csrc_cache *ic, const struct csrc_target *t, const struct vim_moref *tmpl,
                   int *keys, size_t *ret_n);
void csrc_disks_put(struct csrc_cache *ic, const struct csrc_target *t,
                    const struct vim_moref *tmpl, const int *keys, size_t n);

/* The collector's side: the item's lock (the one csrc_get() holds while it finds or deploys and
 * takes a use), and the uses of a template name. A template with no use while its item's lock is
 * held can get none until the lock is released. */
void csrc_lock_item(struct csrc_cache *ic, const char *item_id);
void csrc_unlock_item(struct csrc_cache *ic, const char *item_id);
unsigned csrc_uses(struct csrc_cache *ic, const char *name);

#endif
