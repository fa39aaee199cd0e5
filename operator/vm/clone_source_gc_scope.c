/* clone_source_gc_scope.c: bindings and endpoints -> cache folders and their live items -> the
 * collector (see clone_source_gc_scope.h). */
#include "clone_source_gc_scope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_admin.h"
#include "clone_source.h"
#include "clone_source_gc.h"
#include "kube_informer.h"
#include "vmop_clock.h"
#include "vmop_hash.h"
#include "log.h"

#define LOGGER    "image-gc"
#define KEY_MAX   256
#define PATH_MAX_ 1024

struct known_folder {
    char vc[KEY_MAX];     /* the vCenter's instance UUID */
    char path[PATH_MAX_]; /* the folder's inventory path */
};

/* One library read the image sync offered (csgcs_offer): owned copies. */
struct offer {
    const struct vim_client *c;
    char *vc;  /* c's vCenter instance UUID then: a client freed and another at its address is not
                  taken for it */
    char *key; /* "id:<id>" or "name:<name>" */
    int missing;
    struct csgc_live *items; /* its strings owned */
    size_t n;
};

struct igcs {
    struct vcenters *vcs;
    struct vmc *vmc;
    char system_ns[254];
    struct csgc_state *st;
    struct known_folder *known; /* folders seen bound since start */
    size_t n_known;
    struct offer *offers; /* for the next sweep */
    size_t n_offers;
    uint64_t last_sig;    /* what the last full sweep looked at (sweep_signature) */
    int64_t last_full_ms; /* when it ran; 0: never */
    int dirty;            /* the running sweep left something (grace, in use, failure) */
    int clean;            /* the last full sweep left nothing to come back for */
    unsigned long sweeps, idle, collected, failed, skipped; /* atomics */
};

/* ---- a sweep's data ---------------------------------------------------------------------------
 */

struct folder {
    char path[PATH_MAX_];
    struct csgc_live *live;
    size_t n_live;
};

struct group {
    char vc[KEY_MAX];
    struct vc_conn *conn; /* a reference */
    int unsafe;           /* a library read failed: collect nothing here */
    struct folder *folders;
    size_t n_folders;
};

struct sweep {
    struct group *groups; /* owned; group_of() may move it */
    size_t n_groups;
    struct vim_library_item_list *lists; /* owned: every item list read (live points into them) */
    size_t n_lists;
    struct csgc_live *cluster; /* every endpoint's cluster library items */
    size_t n_cluster;
    int no_unbound; /* some binding's folder is unknown: collect no unbound folder */
};

static void sweep_free(struct sweep *s)
{
    for (size_t i = 0; i < s->n_groups; i++) {
        for (size_t k = 0; k < s->groups[i].n_folders; k++)
            free(s->groups[i].folders[k].live);
        free(s->groups[i].folders);
        vc_conn_put(s->groups[i].conn);
    }
    free(s->groups);
    for (size_t i = 0; i < s->n_lists; i++)
        vim_library_item_list_free(&s->lists[i]);
    free(s->lists);
    free(s->cluster);
}

static void note(void *ud, const char *name, const char *moref, enum csgc_verdict v,
                 const char *what, const struct vmop_err *err);

vmop_rc csgcs_new(struct vcenters *vcs, struct vmc *vmc, const struct csgcs_opts *o,
                  struct igcs **ret, struct vmop_err *err)
{
    struct igcs *g = calloc(1, sizeof(*g));
    struct csgc_opts io = {0};
    vmop_rc rc;
    if (!g)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    g->vcs = vcs;
    g->vmc = vmc;
    snprintf(g->system_ns, sizeof(g->system_ns), "%s",
             o && o->system_ns && *o->system_ns ? o->system_ns : "vmop-system");
    io.note = note;
    io.grace_s = !o || o->grace_s == 0 ? CSGC_GRACE_DEFAULT_S : o->grace_s < 0 ? 0 : o->grace_s;
    rc = csgc_state_new(&io, &g->st, err);
    if (rc) {
        free(g);
        return rc;
    }
    *ret = g;
    return VMOP_OK;
}

static void offer_free(struct offer *o)
{
    for (size_t k = 0; k < o->n; k++) {
        free((char *)o->items[k].item_id);
        free((char *)o->items[k].content_version);
    }
    free(o->items);
    free(o->key);
    free(o->vc);
}

static void offers_clear(struct igcs *g)
{
    for (size_t i = 0; i < g->n_offers; i++)
        offer_free(&g->offers[i]);
    free(g->offers);
    g->offers = NULL;
    g->n_offers = 0;
}

void csgcs_drop_offers(struct igcs *g)
{
    if (g)
        offers_clear(g);
}

/* strdup of s (NULL stays NULL); sets *oom when a copy fails. */
static char *dup_opt(const char *s, int *oom)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        *oom = 1;
    return d;
}

/* "id:<id>" / "name:<name>" of a reference (malloc'd), NULL for one with neither. */
static char *ref_key(const struct api_library_ref *ref)
{
    struct vbuf b;
    vbuf_init(&b, 4096);
    if (ref->id && *ref->id)
        vbuf_addf(&b, "id:%s", ref->id);
    else if (ref->name && *ref->name)
        vbuf_addf(&b, "name:%s", ref->name);
    else
        return NULL;
    if (vbuf_error(&b)) {
        vbuf_free(&b);
        return NULL;
    }
    return vbuf_take(&b);
}

vmop_rc csgcs_offer(struct igcs *g, const struct vim_client *c, const struct api_library_ref *ref,
                    const struct vim_library_item_list *items, struct vmop_err *err)
{
    struct offer o = {.c = c, .missing = items == NULL}, *no;
    int oom = 0;

    if (!g || !c || !ref)
        return vmop_fail(err, VMOP_E_INVALID, "csgcs_offer: bad arguments");
    if (!(o.key = ref_key(ref)))
        return VMOP_OK; /* nothing the sweep could look up */
    o.vc = dup_opt(vim_about_instance_uuid((struct vim_client *)c), &oom);
    if (items && items->n && !(o.items = calloc(items->n, sizeof(*o.items))))
        oom = 1;
    for (size_t k = 0; items && !oom && k < items->n; k++, o.n++) {
        o.items[k].item_id = dup_opt(items->items[k].id, &oom);
        o.items[k].content_version = dup_opt(items->items[k].content_version, &oom);
    }
    no = oom ? NULL : realloc(g->offers, (g->n_offers + 1) * sizeof(*no));
    if (!no) {
        offer_free(&o);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    }
    g->offers = no;
    g->offers[g->n_offers++] = o;
    return VMOP_OK;
}

/* The offer for ref on c, or NULL. */
static const struct offer *offer_of(const struct igcs *g, const struct vim_client *c,
                                    const struct api_library_ref *ref)
{
    char *key = ref_key(ref);
    const struct offer *found = NULL;
    for (size_t i = 0; key && !found && i < g->n_offers; i++)
        if (g->offers[i].c == c && !strcmp(g->offers[i].key, key) &&
            !strcmp(g->offers[i].vc ? g->offers[i].vc : "",
                    vim_about_instance_uuid((struct vim_client *)c) ?: ""))
            found = &g->offers[i];
    free(key);
    return found;
}

void csgcs_free(struct igcs *g)
{
    if (!g)
        return;
    offers_clear(g);
    csgc_state_free(g->st);
    free(g->known);
    free(g);
}

/* ---- reading ----------------------------------------------------------------------------------
 */

static vmop_rc connect_endpoint(struct igcs *g, const char *name, struct vc_conn **ret_conn,
                                struct vmop_err *err)
{
    vmop_rc rc = vcenters_get_named(g->vcs, vmc_informer(g->vmc, "vcenterendpoints"),
                                    vmc_informer(g->vmc, "secrets"), g->system_ns, name, NULL,
                                    ret_conn, err);
    if (rc == VMOP_OK && (rc = vim_login(vc_conn_client(*ret_conn), err)) != VMOP_OK) {
        vc_conn_put(*ret_conn);
        *ret_conn = NULL;
    }
    return rc;
}

/* The group of endpoint `name` (connecting it on first use), or NULL. The pointer is valid until
 * the next call. */
static struct group *group_of(struct igcs *g, struct sweep *s, const char *name,
                              struct vmop_err *err)
{
    struct vc_conn *conn = NULL;
    const char *vc;
    if (connect_endpoint(g, name, &conn, err) != VMOP_OK)
        return NULL;
    vc = vim_about_instance_uuid(vc_conn_client(conn));
    if (!vc || !*vc)
        vc = name;
    for (size_t i = 0; i < s->n_groups; i++)
        if (strcmp(s->groups[i].vc, vc) == 0) {
            vc_conn_put(conn);
            return &s->groups[i];
        }
    {
        struct group *ng = realloc(s->groups, (s->n_groups + 1) * sizeof(*ng));
        if (!ng) {
            vc_conn_put(conn);
            vmop_fail(err, VMOP_E_NOMEM, "out of memory");
            return NULL;
        }
        s->groups = ng;
        memset(&ng[s->n_groups], 0, sizeof(*ng));
    }
    snprintf(s->groups[s->n_groups].vc, KEY_MAX, "%s", vc);
    s->groups[s->n_groups].conn = conn;
    return &s->groups[s->n_groups++];
}

/* Appends the current items of libs to *live (pointing into lists kept by s, or into g's offers),
 * reading from vCenter only the libraries the image sync did not offer. */
static vmop_rc read_items(const struct igcs *g, struct sweep *s, struct vim_client *c,
                          const struct api_library_ref *libs, size_t n_libs,
                          struct csgc_live **live, size_t *n_live, struct vmop_err *err)
{
    for (size_t i = 0; i < n_libs; i++) {
        struct vim_library_item_list l = {0}, *nl;
        struct csgc_live *nv;
        char *found = NULL;
        const char *id = libs[i].id && *libs[i].id ? libs[i].id : NULL;
        const struct offer *o = offer_of(g, c, &libs[i]);
        vmop_rc rc = VMOP_OK;
        if (o) { /* the image sync read it just now */
            if (o->missing)
                continue;
            nv = realloc(*live, (*n_live + o->n + 1) * sizeof(*nv));
            if (!nv)
                return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
            *live = nv;
            for (size_t k = 0; k < o->n; k++)
                nv[(*n_live)++] = o->items[k];
            continue;
        }
        if (!id) {
            if (!libs[i].name || !*libs[i].name)
                continue;
            rc = vim_library_find(c, libs[i].name, &found, err);
            id = found;
        }
        if (rc == VMOP_OK)
            rc = vim_library_items(c, id, &l, err);
        free(found);
        if (rc == VMOP_E_NOT_FOUND) { /* a library that is gone offers nothing */
            vmop_err_clear(err);
            continue;
        }
        if (rc)
            return rc;
        nl = realloc(s->lists, (s->n_lists + 1) * sizeof(*nl));
        if (!nl) {
            vim_library_item_list_free(&l);
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        }
        s->lists = nl;
        s->lists[s->n_lists++] = l;
        nv = realloc(*live, (*n_live + l.n + 1) * sizeof(*nv));
        if (!nv)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        *live = nv;
        for (size_t k = 0; k < l.n; k++)
            nv[(*n_live)++] = (struct csgc_live){l.items[k].id, l.items[k].content_version};
    }
    return VMOP_OK;
}

static struct folder *folder_of(struct group *gr, const char *path)
{
    struct folder *nf;
    for (size_t i = 0; i < gr->n_folders; i++)
        if (strcmp(gr->folders[i].path, path) == 0)
            return &gr->folders[i];
    nf = realloc(gr->folders, (gr->n_folders + 1) * sizeof(*nf));
    if (!nf)
        return NULL;
    gr->folders = nf;
    memset(&nf[gr->n_folders], 0, sizeof(*nf));
    snprintf(nf[gr->n_folders].path, PATH_MAX_, "%s", path);
    return &nf[gr->n_folders++];
}

static void remember(struct igcs *g, const char *vc, const char *path)
{
    struct known_folder *nk;
    for (size_t i = 0; i < g->n_known; i++)
        if (!strcmp(g->known[i].vc, vc) && !strcmp(g->known[i].path, path))
            return;
    nk = realloc(g->known, (g->n_known + 1) * sizeof(*nk));
    if (!nk)
        return;
    g->known = nk;
    snprintf(nk[g->n_known].vc, KEY_MAX, "%s", vc);
    snprintf(nk[g->n_known].path, PATH_MAX_, "%s", path);
    g->n_known++;
}

static void forget(struct igcs *g, size_t i)
{
    g->known[i] = g->known[--g->n_known];
}

/* Bindings -> groups and folders with their own items; 0 on a failure that stops the sweep. */
static int read_bindings(struct igcs *g, struct sweep *s)
{
    struct kube_obj **bs = NULL;
    size_t nb = 0;
    struct vmop_err err = {0};
    if (kube_informer_list(vmc_informer(g->vmc, "namespacebindings"), &bs, &nb, &err) != VMOP_OK) {
        vlog_err(VLOG_WARN, LOGGER, NULL, &err, "image cache collection skipped");
        return 0;
    }
    for (size_t i = 0; i < nb; i++) {
        struct api_binding *b = NULL;
        struct group *gr = NULL;
        struct folder *f;
        struct vmop_err e = {0};
        const char *path;
        if (api_binding_parse(kube_obj_json(bs[i]), &b, &e) != VMOP_OK || !b->endpoint ||
            !(gr = group_of(g, s, b->endpoint, &e))) {
            s->no_unbound = 1;
            vlog_err(VLOG_DEBUG, LOGGER, kube_obj_key(bs[i]), &e,
                     "binding not usable: no unbound cache folder is collected now");
            api_binding_free(b);
            continue;
        }
        path = vs_cache_folder(vmc_conn_sync(gr->conn));
        if (!path)
            path = b->vm_folder;
        if (!path || !*path) {
            api_binding_free(b);
            continue;
        }
        f = folder_of(gr, path);
        if (!f || read_items(g, s, vc_conn_client(gr->conn), b->libraries, b->n_libraries, &f->live,
                             &f->n_live, &e) != VMOP_OK) {
            gr->unsafe = 1;
            vlog_err(VLOG_DEBUG, LOGGER, kube_obj_key(bs[i]), &e,
                     "libraries not read: no cache template is collected on this vCenter now");
        } else {
            remember(g, gr->vc, path);
        }
        api_binding_free(b);
    }
    kube_objs_free(bs, nb);
    return 1;
}

/* Every endpoint's cluster libraries; 0 when one cannot be read. */
static int read_cluster(struct igcs *g, struct sweep *s)
{
    struct kube_obj **es = NULL;
    size_t ne = 0;
    int ok = 1;
    struct vmop_err err = {0};
    if (kube_informer_list(vmc_informer(g->vmc, "vcenterendpoints"), &es, &ne, &err) != VMOP_OK)
        return 0;
    for (size_t i = 0; i < ne && ok; i++) {
        struct api_endpoint *ep = NULL;
        struct group *gr;
        struct vmop_err e = {0};
        if (api_endpoint_parse(kube_obj_json(es[i]), &ep, &e) != VMOP_OK) {
            ok = 0;
        } else if (ep->n_libraries > 0) {
            gr = group_of(g, s, ep->name, &e);
            ok = gr && read_items(g, s, vc_conn_client(gr->conn), ep->libraries, ep->n_libraries,
                                  &s->cluster, &s->n_cluster, &e) == VMOP_OK;
        }
        if (!ok)
            vlog_err(VLOG_DEBUG, LOGGER, kube_obj_key(es[i]), &e,
                     "cluster libraries not read: no cache template is collected now");
        api_endpoint_free(ep);
    }
    kube_objs_free(es, ne);
    return ok;
}

/* ---- collecting -------------------------------------------------------------------------------
 */

static void note(void *ud, const char *name, const char *moref, enum csgc_verdict v,
                 const char *what, const struct vmop_err *err)
{
    (void)ud;
    if (!strcmp(what, "collected"))
        vlog(VLOG_INFO, LOGGER, name, "image cache template %s destroyed (%s)", moref,
             csgc_verdict_str(v));
    else if (!strcmp(what, "failed"))
        vlog_err(VLOG_WARN, LOGGER, name, err, "image cache template %s (%s) not destroyed", moref,
                 csgc_verdict_str(v));
    else
        vlog(VLOG_DEBUG, LOGGER, name, "image cache template %s (%s) kept for now: %s", moref,
             csgc_verdict_str(v), what);
}

static void collect(struct igcs *g, struct group *gr, const char *path,
                    const struct csgc_live *live, size_t n_live, int bound, int *ret_gone)
{
    struct vim_client *c = vc_conn_client(gr->conn);
    struct csgc_result r = {0};
    struct vim_moref folder;
    struct vmop_err e = {0};
    vmop_rc rc = vim_find_by_path(c, path, "Folder", &folder, &e);
    if (ret_gone)
        *ret_gone = rc == VMOP_E_NOT_FOUND;
    if (rc == VMOP_OK)
        rc = csgc_collect_folder(g->st, vs_images(vmc_conn_sync(gr->conn)), c, &folder, live,
                                 n_live, bound, &r, &e);
    if ((rc != VMOP_OK && rc != VMOP_E_NOT_FOUND) ||
        (rc == VMOP_OK && (r.garbage != r.collected || r.failed)))
        g->dirty = 1; /* come back: a template in grace, in use, busy, or not destroyed */
    if (rc != VMOP_OK && rc != VMOP_E_NOT_FOUND) {
        vlog_err(VLOG_WARN, LOGGER, path, &e, "image cache folder not collected");
        __atomic_add_fetch(&g->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    if (ret_gone && rc == VMOP_OK && r.garbage == r.collected)
        *ret_gone = 1; /* an unbound folder with nothing left: forget it */
    __atomic_add_fetch(&g->collected, r.collected, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g->failed, r.failed, __ATOMIC_RELAXED);
    if (r.garbage)
        vlog(VLOG_INFO, LOGGER, path,
             "image cache: %u templates, %u garbage: %u destroyed, %u in grace, %u in use, "
             "%u busy, %u failed",
             r.templates, r.garbage, r.collected, r.waiting, r.in_use, r.busy, r.failed);
}

/* FNV-1a over s, continuing from h (s NULL counts as "\x01"). */
static uint64_t fnv(uint64_t h, const char *s)
{
    h = vmop_fnv1a_str(h, s ? s : "\x01");
    return vmop_fnv1a_byte(h, 0xff); /* field separator */
}

/* A hash of everything a sweep decides on that it read without listing a folder: the vCenters,
 * their folders and each folder's live items, the cluster items, the folders known from before,
 * and clone-source activity in this process (a template deployed or used). */
static uint64_t sweep_signature(const struct igcs *g, const struct sweep *s)
{
    uint64_t h = VMOP_FNV_OFFSET;
    char num[32];
    snprintf(num, sizeof(num), "%lu/%d", csrc_activity(), s->no_unbound);
    h = fnv(h, num);
    for (size_t i = 0; i < s->n_groups; i++) {
        const struct group *gr = &s->groups[i];
        h = fnv(h, gr->vc);
        h = fnv(h, gr->unsafe ? "unsafe" : "safe");
        for (size_t k = 0; k < gr->n_folders; k++) {
            h = fnv(h, gr->folders[k].path);
            for (size_t j = 0; j < gr->folders[k].n_live; j++) {
                h = fnv(h, gr->folders[k].live[j].item_id);
                h = fnv(h, gr->folders[k].live[j].content_version);
            }
        }
    }
    for (size_t j = 0; j < s->n_cluster; j++) {
        h = fnv(h, s->cluster[j].item_id);
        h = fnv(h, s->cluster[j].content_version);
    }
    for (size_t k = 0; k < g->n_known; k++) {
        h = fnv(h, g->known[k].vc);
        h = fnv(h, g->known[k].path);
    }
    return h;
}

void csgcs_run(struct igcs *g)
{
    struct sweep s;
    memset(&s, 0, sizeof(s));
    __atomic_add_fetch(&g->sweeps, 1, __ATOMIC_RELAXED);
    /* the folders are listed after the libraries are read: a template made from a newer version
     * meanwhile is seen as superseded, and the use csrc_get() holds during its clone (then the
     * grace) keeps it */
    if (!read_bindings(g, &s) || !read_cluster(g, &s)) {
        __atomic_add_fetch(&g->skipped, 1, __ATOMIC_RELAXED);
        goto out;
    }
    {
        uint64_t sig = sweep_signature(g, &s);
        int64_t now = vmop_mono_ms();
        if (g->clean && sig == g->last_sig && g->last_full_ms &&
            now - g->last_full_ms < CSGCS_FULL_SWEEP_MS) {
            /* nothing it looks at changed and the last sweep left nothing: no folder listed */
            __atomic_add_fetch(&g->idle, 1, __ATOMIC_RELAXED);
            goto out;
        }
        g->last_sig = sig;
        g->last_full_ms = now;
        g->dirty = s.no_unbound; /* unbound folders are not looked at in this sweep */
    }
    csgc_sweep_begin(g->st);
    for (size_t i = 0; i < s.n_groups; i++) {
        struct group *gr = &s.groups[i];
        if (gr->unsafe) {
            g->dirty = 1; /* nothing collected here: the next sweep tries again */
            __atomic_add_fetch(&g->skipped, 1, __ATOMIC_RELAXED);
            continue;
        }
        for (size_t k = 0; k < gr->n_folders; k++) {
            struct folder *f = &gr->folders[k];
            struct csgc_live *all = calloc(f->n_live + s.n_cluster + 1, sizeof(*all));
            if (!all)
                continue;
            if (f->n_live) /* memcpy's pointers must be valid even for 0 bytes */
                memcpy(all, f->live, f->n_live * sizeof(*all));
            if (s.n_cluster)
                memcpy(all + f->n_live, s.cluster, s.n_cluster * sizeof(*all));
            collect(g, gr, f->path, all, f->n_live + s.n_cluster, 1, NULL);
            free(all);
        }
        /* folders bound before and by no binding now */
        for (size_t k = 0; !s.no_unbound && k < g->n_known;) {
            int bound = 0, gone = 0;
            if (strcmp(g->known[k].vc, gr->vc) != 0) {
                k++;
                continue;
            }
            for (size_t j = 0; j < gr->n_folders && !bound; j++)
                bound = !strcmp(gr->folders[j].path, g->known[k].path);
            if (!bound)
                collect(g, gr, g->known[k].path, NULL, 0, 0, &gone);
            if (gone)
                forget(g, k);
            else
                k++;
        }
    }
    csgc_sweep_end(g->st);
    /* a folder forgotten or remembered in this sweep changes the signature: the next one runs */
    g->clean = !g->dirty && g->last_sig == sweep_signature(g, &s);
out:
    sweep_free(&s);
    offers_clear(g); /* the next sweep gets the next sync's reads */
}

#define CSGCS_ATOMIC(field)                                                                        \
    static double read_##field(void *ud)                                                           \
    {                                                                                              \
        return (double)__atomic_load_n(&((struct igcs *)ud)->field, __ATOMIC_RELAXED);             \
    }
CSGCS_ATOMIC(sweeps)
CSGCS_ATOMIC(collected)
CSGCS_ATOMIC(failed)
CSGCS_ATOMIC(skipped)
CSGCS_ATOMIC(idle)

static const struct metrics_plain csgcs_plain[] = {
    {"vmop_image_cache_sweeps_total", "Image cache garbage-collection sweeps.", read_sweeps},
    {"vmop_image_cache_templates_collected_total", "Image cache templates destroyed.",
     read_collected},
    {"vmop_image_cache_collect_failures_total",
     "Image cache templates or folders that could not be collected.", read_failed},
    {"vmop_image_cache_sweeps_skipped_total",
     "Image cache sweeps, or one vCenter's part of one, skipped: a library could not be read.",
     read_skipped},
    {"vmop_image_cache_sweeps_idle_total",
     "Image cache sweeps that listed no folder: the libraries' items, the bindings and "
     "clone-source "
     "use had not changed since a sweep that left nothing to collect.",
     read_idle},
};

vmop_rc csgcs_metrics_register(struct igcs *g, struct metrics *m, const void *key,
                               struct vmop_err *err)
{
    return metrics_add_plain(m, csgcs_plain, sizeof(csgcs_plain) / sizeof(csgcs_plain[0]), g, key,
                             err);
}
