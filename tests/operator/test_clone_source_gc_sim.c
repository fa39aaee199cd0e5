/* test_clone_source_gc_sim.c: the image cache collector (operator/vm/clone_source_gc.c) against the
 * vCenter simulator (suite integration).
 *
 * The simulator cannot change an item's content version (vcsim sets it once, at create), so a new
 * version is played from both sides: an older template (version "0", vmop's marker) is made next
 * to the one csrc_get() deploys for the real version, and the "bump" of the item is a live set that
 * names a newer version than the deployed template.
 * Covers: the superseded template goes, the current one stays (with the clone made from it, which
 * inherits the marker annotation but not the name), a foreign VM named vmop-image-x without the
 * marker stays through every sweep, even of an unbound folder; a template with a clone in flight
 * (an csrc_get() use not yet put) is kept and destroyed after csrc_put(); the grace keeps a garbage
 * template; an unbound folder loses every cache template; csrc_get() deploys a collected template
 * again.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "clone_source_gc.h"
#include "clone_source.h"
#include "sim_fixture.h"

struct world {
    struct vim_client *c;
    struct csrc_cache *ic;
    struct vim_moref folder, pool;
    struct csrc_target t;
    char *version; /* the item's content version */
};

static void world_init(struct world *w)
{
    const struct vcsim_item *item = simfx_item(simfx_sim, "vmop-tiny-ovf", NULL);
    struct vim_library_item *li = NULL;
    struct vmop_err err = {0};

    memset(w, 0, sizeof(*w));
    w->c = simfx_client(NULL);
    CK_OK(csrc_new(&w->ic, &err), err);
    w->folder = simfx_find(w->c, simfx_sim->folder, "Folder");
    w->pool = simfx_find(w->c, simfx_sim->resource_pool, "ResourcePool");
    CK_OK(vim_library_item_get(w->c, item->id, &li, &err), err);
    w->version = strdup(li->content_version ? li->content_version : "");
    vim_library_item_free(li);
    w->t.item_id = item->id;
    w->t.folder_path = simfx_sim->folder;
    w->t.folder = &w->folder;
    w->t.pool = &w->pool;
}

static void world_free(struct world *w)
{
    csrc_free(w->ic);
    vim_client_free(w->c);
    free(w->version);
}

/* 1 when a VM of that name is in the folder. */
static int exists(struct world *w, const char *name)
{
    char path[512];
    struct vim_moref ref;
    struct vmop_err err = {0};
    vmop_rc rc;
    snprintf(path, sizeof(path), "%s/%s", simfx_sim->folder, name);
    rc = vim_find_by_path(w->c, path, "VirtualMachine", &ref, &err);
    ck_assert_msg(rc == VMOP_OK || rc == VMOP_E_NOT_FOUND, "%s", err.msg);
    return rc == VMOP_OK;
}

/* A template named name with the given annotation (NULL: none), deployed from the item. */
static void make_template(struct world *w, const char *name, const char *annotation)
{
    struct vim_deploy_spec ds = {0};
    struct vim_config_spec *cs = NULL;
    struct vim_moref vm;
    struct vmop_err err = {0};
    ds.name = name;
    ds.resource_pool_id = w->pool.value;
    ds.folder_id = w->folder.value;
    CK_OK(vim_library_deploy(w->c, w->t.item_id, &ds, &vm, &err), err);
    if (annotation) {
        ck_assert(vim_config_spec_new(&cs) == VMOP_OK);
        ck_assert(vim_cs_annotation(cs, annotation) == VMOP_OK);
        CK_OK(vim_vm_reconfigure(w->c, &vm, cs, &err), err);
        vim_config_spec_free(cs);
    }
    CK_OK(vim_vm_mark_as_template(w->c, &vm, &err), err);
}

static struct csgc_result sweep(struct world *w, struct csgc_state *st, const char *version,
                                int bound)
{
    struct csgc_live live = {w->t.item_id, version};
    struct csgc_result r = {0};
    struct vmop_err err = {0};
    csgc_sweep_begin(st);
    CK_OK(csgc_collect_folder(st, w->ic, w->c, &w->folder, &live, 1, bound, &r, &err), err);
    csgc_sweep_end(st);
    return r;
}

START_TEST(superseded_in_use_grace_unbound)
{
    struct world w;
    struct csgc_state *st = NULL, *slow = NULL;
    struct csgc_opts now = {.grace_s = 0}, later = {.grace_s = 3600};
    struct vim_moref tmpl, clone;
    struct vim_clone_spec cl = {0};
    struct csrc_hold h = {0};
    struct csgc_result r;
    struct vmop_err err = {0};
    char cur[CSRC_NAME_MAX + 1], old[CSRC_NAME_MAX + 1], marker[256];

    world_init(&w);
    CK_OK(csgc_state_new(&now, &st, &err), err);
    CK_OK(csgc_state_new(&later, &slow, &err), err);
    CK_OK(csrc_template_name(w.t.item_id, w.version, cur, sizeof(cur), &err), err);
    CK_OK(csrc_template_name(w.t.item_id, "0", old, sizeof(old), &err), err);

    /* a clone from the current template, as vs_clone does it: get, clone, put */
    CK_OK(csrc_get(w.ic, w.c, &w.t, &tmpl, &h, &err), err);
    ck_assert_uint_eq(csrc_uses(w.ic, cur), 1);
    cl.source = &tmpl;
    cl.folder = &w.folder;
    cl.name = "gc-web-1";
    cl.pool = &w.pool;
    CK_OK(vim_vm_clone(w.c, &cl, &clone, &err), err);
    csrc_put(&h);
    ck_assert_uint_eq(csrc_uses(w.ic, cur), 0);
    csrc_put(&h); /* a second put does nothing */

    /* the template's disk keys are remembered with it, for that template only, until forgotten */
    {
        int keys[VIM_MAX_CLONE_DISKS], put[2] = {2000, 2001};
        size_t n = 0;
        struct vim_moref other = tmpl;
        ck_assert(!csrc_disks_get(w.ic, &w.t, &tmpl, keys, &n));
        csrc_disks_put(w.ic, &w.t, &tmpl, put, 2);
        ck_assert(csrc_disks_get(w.ic, &w.t, &tmpl, keys, &n));
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(keys[1], 2001);
        snprintf(other.value, sizeof(other.value), "vm-999999");
        ck_assert(!csrc_disks_get(w.ic, &w.t, &other, keys, &n));
        csrc_disks_put(w.ic, &w.t, &other, put, 1); /* not the remembered template: no change */
        ck_assert(csrc_disks_get(w.ic, &w.t, &tmpl, keys, &n) && n == 2);
        csrc_forget(w.ic, w.t.item_id);
        ck_assert(!csrc_disks_get(w.ic, &w.t, &tmpl, keys, &n));
    }

    /* the template of an older version, and a foreign one named like a cache template */
    snprintf(marker, sizeof(marker), CSRC_MARKER_PREFIX "%s" CSRC_MARKER_MID "0", w.t.item_id);
    make_template(&w, old, marker);
    make_template(&w, "vmop-image-x", NULL);
    ck_assert(exists(&w, old) && exists(&w, cur) && exists(&w, "vmop-image-x"));

    /* inside the grace: kept */
    r = sweep(&w, slow, w.version, 1);
    ck_assert_uint_eq(r.garbage, 1);
    ck_assert_uint_eq(r.waiting, 1);
    ck_assert_uint_eq(r.collected, 0);
    ck_assert(exists(&w, old));

    /* superseded: gone; current, foreign and the clone stay */
    r = sweep(&w, st, w.version, 1);
    ck_assert_uint_eq(r.templates, 2);
    ck_assert_uint_eq(r.garbage, 1);
    ck_assert_uint_eq(r.collected, 1);
    ck_assert_uint_eq(r.failed, 0);
    ck_assert(!exists(&w, old));
    ck_assert(exists(&w, cur) && exists(&w, "vmop-image-x") && exists(&w, "gc-web-1"));

    /* the item moves on while a clone from the current template is in flight: kept */
    CK_OK(csrc_get(w.ic, w.c, &w.t, &tmpl, &h, &err), err);
    r = sweep(&w, st, "999", 1);
    ck_assert_uint_eq(r.garbage, 1);
    ck_assert_uint_eq(r.in_use, 1);
    ck_assert_uint_eq(r.collected, 0);
    ck_assert(exists(&w, cur));
    /* the clone ended: now it goes */
    csrc_put(&h);
    r = sweep(&w, st, "999", 1);
    ck_assert_uint_eq(r.collected, 1);
    ck_assert(!exists(&w, cur));
    ck_assert(exists(&w, "vmop-image-x") && exists(&w, "gc-web-1"));

    /* csrc_get deploys it again; an unbound folder loses it, nothing else */
    CK_OK(csrc_get(w.ic, w.c, &w.t, &tmpl, &h, &err), err);
    csrc_put(&h);
    ck_assert(exists(&w, cur));
    r = sweep(&w, st, w.version, 0);
    ck_assert_uint_eq(r.collected, 1);
    ck_assert(!exists(&w, cur));
    ck_assert(exists(&w, "vmop-image-x") && exists(&w, "gc-web-1"));
    r = sweep(&w, st, w.version, 0);
    ck_assert_uint_eq(r.templates, 0);
    ck_assert_uint_eq(r.collected, 0);

    csgc_state_free(st);
    csgc_state_free(slow);
    world_free(&w);
}
END_TEST

START_TEST(busy_reads_recent_tasks)
{
    struct world w;
    struct vim_moref tmpl;
    struct csrc_hold h = {0};
    struct vmop_err err = {0};
    int busy = -1;
    world_init(&w);
    CK_OK(csrc_get(w.ic, w.c, &w.t, &tmpl, &h, &err), err);
    csrc_put(&h);
    /* the simulator ends every task inside the call: recentTask lists only ended ones */
    CK_OK(vim_entity_busy(w.c, &tmpl, &busy, &err), err);
    ck_assert_int_eq(busy, 0);
    world_free(&w);
}
END_TEST

int main(void)
{
    static const struct vcsim_opts opts = {.vms = VCSIM_NONE, .no_autostart = 1};
    Suite *s = suite_create("clone_source_gc_sim");
    TCase *tc = simfx_tcase(s, "collect", &opts, 0);
    tcase_add_test(tc, superseded_in_use_grace_unbound);
    tcase_add_test(tc, busy_reads_recent_tasks);
    return vmop_check_run(s);
}
