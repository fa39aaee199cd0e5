/* imgcache.h: the clone sources of vmop VMs: one template per content library item (and content
 * version), deployed once from the item and found again by inventory path.
 *
 * Owns: the cache template's name ("vmop-image-<item id>[-<content version>]"), its marker
 * annotation, deploying it (OVF or VM-template item via vim_library_deploy), finishing it
 * (power off, annotation, MarkAsTemplate), and serializing concurrent creates of one item inside
 * the process (a mutex stripe per item id).
 *
 * Crash safety: a crash between the deploy and MarkAsTemplate leaves a VM with the cache name
 * that is not a template yet; the next call finds it by path and finishes it. Names starting
 * with "vmop-image-" in the cache folder belong to vmop: a TEMPLATE with such a name but without
 * vmop's marker annotation was not made by vmop and is refused (VMOP_E_EXISTS), never adopted.
 * A duplicate after a crash (two deploys) is harmless: the path lookup picks one.
 */
#ifndef VMOP_IMGCACHE_H
#define VMOP_IMGCACHE_H

#include <stddef.h>

#include "vimclient.h"
#include "vmop_err.h"

#define IC_NAME_PREFIX "vmop-image-"
#define IC_NAME_MAX    80 /* vSphere's entity name limit */

struct ic_cache;

vmop_rc ic_new(struct ic_cache **ret_ic, struct vmop_err *err);
void ic_free(struct ic_cache *ic); /* NULL is fine */

/* The cache template name for an item (content_version may be NULL). buf of IC_NAME_MAX + 1. */
vmop_rc ic_template_name(const char *item_id, const char *content_version, char *buf, size_t size,
                         struct vmop_err *err);

struct ic_target {
    const char *item_id;               /* content library item */
    const char *folder_path;           /* inventory path of the cache folder */
    const struct vim_moref *folder;    /* the same folder */
    const struct vim_moref *pool;      /* where the deploy places it (required by the deploy) */
    const struct vim_moref *datastore; /* optional */
};

/* Finds or makes the cache template for t->item_id; ret_template: a template VM to clone. */
vmop_rc ic_get(struct ic_cache *ic, struct vim_client *c, const struct ic_target *t,
               struct vim_moref *ret_template, struct vmop_err *err);

#endif
