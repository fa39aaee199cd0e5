/* catalog_vc.h: the image catalog's vCenter side: read the assigned Content Libraries, their
 * items, and each item's facts (OVF descriptor or template VM), with a descriptor cache.
 *
 * Owns: turning library references (api_admin.h: name or id) into library items, downloading and
 * parsing OVF descriptors (vim_library_item_ovf + ovf_parse), reading VM-template facts
 * (vim_library_item_template), and the cache keyed by (item id, content version, last modified
 * time) so a resync of an unchanged item downloads nothing and reads no template VM. The cache
 * also remembers the id each library name was found as (by a search and a read of the library,
 * which checks the exact name): within CAT_LIBRARY_RECHECK_MS a reference by name is listed by
 * that id with no search; a remembered id vCenter no longer knows is searched by name again in
 * the same scan. So a library deleted or replaced is seen at the next scan, and a library renamed
 * away (or another given the name) within the recheck period.
 *
 * What an unchanged library costs per scan (vCenter's documented REST behaviour, docs/design.md
 * "Image catalog: what a resync reads"): the item id list and one read per item (at least hourly,
 * for a reference by name, its search and library read too). Nothing cheaper tells a library's
 * items changed: a library's `version` and `last_modified_time` do not move when items are added,
 * removed or changed. The result feeds cat_build_images() (catalog.h); nothing here touches
 * Kubernetes.
 *
 * Failure policy (so that a transient problem never deletes images):
 *  - listing a library, or any transport / TLS / authentication / timeout / memory failure while
 *    reading an item, fails the whole scan (the controller retries; no partial result exists);
 *  - a library reference that vCenter says does not exist is reported in scan->missing and
 *    contributes no items (its images are then deleted by the diff, as for a removed library);
 *  - a descriptor that cannot be read for a reason of its own (no .ovf file, too big, not
 *    well-formed, not an OVF envelope) gives that item a sync_error: its image is kept, Ready False
 *    with VirtualMachineImageNotSynced and the reason;
 *  - VM-template items whose server does not expose the template VM get empty facts (not an error).
 *
 * Threads: a struct cat_cache may be shared by concurrent scans (it has its own lock). A scan
 * result is plain data owned by the caller.
 */
#ifndef VMOP_CATALOG_VC_H
#define VMOP_CATALOG_VC_H

#include <stddef.h>
#include <stdint.h>

#include "api_admin.h"
#include "catalog.h"
#include "ovf.h"
#include "vimclient.h"
#include "vmop_err.h"

#define CAT_CACHE_MAX_ENTRIES 1024
#define CAT_CACHE_MAX_BYTES   ((size_t)64 << 20)
#define CAT_SCAN_MAX_ITEMS    CAT_MAX_IMAGES /* over all scanned libraries */
#define CAT_KNOWN_LIBS_MAX    256            /* library names whose id is remembered */
/* a library remembered by name is searched and read again (its name checked) this often */
#define CAT_LIBRARY_RECHECK_MS (3600 * 1000L)

struct cat_cache;
/* *ret: new empty cache, free with cat_cache_free(). */
vmop_rc cat_cache_new(struct cat_cache **ret_cache, struct vmop_err *err);
void cat_cache_free(struct cat_cache *cache); /* NULL is fine */
/* How long a library name's id is trusted without a search (default CAT_LIBRARY_RECHECK_MS; 0:
 * search at every scan). Before the cache is shared. */
void cat_cache_set_name_recheck_ms(struct cat_cache *cache, int64_t ms);

struct cat_cache_stats {
    uint64_t hits;      /* descriptors served from the cache */
    uint64_t downloads; /* descriptors downloaded */
    size_t entries, bytes;
};
void cat_cache_stats(struct cat_cache *cache, struct cat_cache_stats *ret_stats);

/* One scanned item. Everything is owned by the scan. */
struct cat_scan_entry {
    const struct vim_library_item *item; /* points into the scan's item lists */
    struct ovf_desc *ovf;                /* OVF items whose descriptor was read, else NULL */
    struct vim_template_info *tmpl;      /* VM-template items, else NULL */
    struct cat_vm_facts vm;              /* borrows from tmpl */
    char *sync_error;                    /* why the facts could not be read, or NULL */
};

struct cat_scan {
    struct cat_scan_entry *entries; /* one per item of every library found, in library order */
    struct cat_item *items;         /* n views over entries for cat_build_images() */
    size_t n;
    char **missing; /* library references vCenter does not know (name or id) */
    size_t n_missing;
    struct vim_library_item_list *lists; /* owned item lists, one per library read */
    char **library_ids;                  /* the id of each list's library */
    size_t n_lists;
    long *ref_list; /* per library reference scanned: its index in lists, -1 when missing */
    size_t n_refs;
};
void cat_scan_free(struct cat_scan *scan); /* zeroes it; NULL is fine */

/* Reads libs[0..n_libs) (a reference with an id uses it, else the name is looked up) and every
 * item's facts. cache may be NULL (then every descriptor is downloaded). *ret_scan is filled on
 * success only; cat_scan_free() it. */
vmop_rc cat_vc_scan(struct vim_client *c, struct cat_cache *cache,
                    const struct api_library_ref *libs, size_t n_libs, struct cat_scan *ret_scan,
                    struct vmop_err *err);

#endif
