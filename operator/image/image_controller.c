/* image_controller.c: Content Library items -> VirtualMachineImages / ClusterVirtualMachineImages
 * (see image_controller.h). The pure part (objects, diff) is catalog.c; this file reads the
 * libraries through vimclient and writes the diff through the Kubernetes client.
 */
#include "image_controller.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_admin.h"
#include "api_cond.h"
#include "catalog.h"
#include "catalog_vc.h"
#include "clone_source_gc_scope.h"
#include "kube_informer.h"
#include "kube_meta.h"
#include "vmop_clock.h"
#include "vmop_hash.h"
#include "log.h"
#include "status.h"

#define LOGGER       "image-controller"
#define IMGC_POLL_MS 1000 /* how often the thread looks for changed bindings / endpoints */

struct imgc {
    struct kube_client *kc;
    struct kube_recorder *rec;
    struct vcenters *vcs;
    struct vmc *vmc;
    char system_ns[254];
    long period_ms;
    pthread_t th;
    int started;
    int stop;                                                 /* atomic */
    int kick;                                                 /* atomic */
    unsigned long syncs, failures, creates, updates, deletes; /* atomics */
    uint64_t last_sig;
    struct cat_cache *cache;
    struct igcs *gc; /* the image cache collector, run after each sync */
};

vmop_rc imgc_new(struct kube_client *kc, struct kube_recorder *rec, struct vcenters *vcs,
                 struct vmc *vmc, const struct imgc_opts *o, struct imgc **ret,
                 struct vmop_err *err)
{
    struct imgc *c = calloc(1, sizeof(*c));
    if (!c)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    c->kc = kc;
    c->rec = rec;
    c->vcs = vcs;
    c->vmc = vmc;
    snprintf(c->system_ns, sizeof(c->system_ns), "%s",
             o && o->system_ns && *o->system_ns ? o->system_ns : "vmop-system");
    c->period_ms = o && o->period_ms > 0 ? o->period_ms : 300000;
    if (cat_cache_new(&c->cache, err) != VMOP_OK) {
        free(c);
        return err ? err->rc : VMOP_E_NOMEM;
    }
    {
        struct csgcs_opts go = {.system_ns = c->system_ns, .grace_s = o ? o->cache_grace_s : 0};
        if (csgcs_new(vcs, vmc, &go, &c->gc, err) != VMOP_OK) {
            cat_cache_free(c->cache);
            free(c);
            return err ? err->rc : VMOP_E_NOMEM;
        }
    }
    *ret = c;
    return VMOP_OK;
}

/* ---- one scope --------------------------------------------------------------------------------
 */

static vmop_rc write_status(struct imgc *c, const struct kube_resource *res, const cJSON *obj,
                            struct vmop_err *err)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(obj, "status");
    cJSON *patch;
    vmop_rc rc;
    if (!st)
        return VMOP_OK;
    patch = cJSON_CreateObject();
    if (!patch || !cJSON_AddItemToObject(patch, "status", cJSON_Duplicate(st, 1))) {
        cJSON_Delete(patch);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    }
    rc = kube_patch_status(c->kc, res, kube_obj_namespace(obj), kube_obj_name(obj),
                           KUBE_PATCH_MERGE, patch, NULL, NULL, err);
    cJSON_Delete(patch);
    return rc;
}

static vmop_rc apply_plan(struct imgc *c, const struct kube_resource *res, const struct cat_plan *p,
                          struct vmop_err *err)
{
    vmop_rc first = VMOP_OK;
    for (size_t i = 0; i < p->n; i++) {
        const struct cat_change *ch = &p->changes[i];
        struct vmop_err e = {0};
        vmop_rc rc = VMOP_OK;
        const char *name = kube_obj_name(ch->obj), *ns = kube_obj_namespace(ch->obj);
        switch (ch->op) {
        case CAT_CREATE: {
            cJSON *copy = cJSON_Duplicate(ch->obj, 1);
            if (!copy) {
                rc = vmop_fail(&e, VMOP_E_NOMEM, "out of memory");
                break;
            }
            cJSON_DeleteItemFromObjectCaseSensitive(copy, "status");
            rc = kube_create(c->kc, res, ns, copy, NULL, NULL, &e);
            cJSON_Delete(copy);
            if (rc == VMOP_OK || rc == VMOP_E_EXISTS) {
                vmop_err_clear(&e);
                rc = write_status(c, res, ch->obj, &e);
            }
            if (rc == VMOP_OK)
                __atomic_add_fetch(&c->creates, 1, __ATOMIC_RELAXED);
            break;
        }
        case CAT_UPDATE:
            if (ch->main_changed) {
                cJSON *copy = cJSON_Duplicate(ch->obj, 1);
                if (!copy) {
                    rc = vmop_fail(&e, VMOP_E_NOMEM, "out of memory");
                    break;
                }
                cJSON_DeleteItemFromObjectCaseSensitive(copy, "status");
                rc = kube_update(c->kc, res, ns, copy, NULL, NULL, &e);
                cJSON_Delete(copy);
            }
            if (rc == VMOP_OK && ch->status_changed)
                rc = write_status(c, res, ch->obj, &e);
            if (rc == VMOP_OK)
                __atomic_add_fetch(&c->updates, 1, __ATOMIC_RELAXED);
            break;
        case CAT_DELETE: {
            struct kube_opts ko = {.precondition_uid = kube_obj_uid(ch->obj)};
            rc = kube_delete(c->kc, res, ns, name, &ko, NULL, &e);
            if (rc == VMOP_E_NOT_FOUND)
                rc = VMOP_OK;
            if (rc == VMOP_OK)
                __atomic_add_fetch(&c->deletes, 1, __ATOMIC_RELAXED);
            break;
        }
        case CAT_FOREIGN:
            vlog(VLOG_WARN, LOGGER, name,
                 "an image object of this name exists and is not "
                 "managed by vmop: left alone");
            break;
        }
        if (rc != VMOP_OK) {
            vlog_err(VLOG_WARN, LOGGER, name, &e, "%s failed", cat_op_str(ch->op));
            if (first == VMOP_OK) {
                first = rc;
                *err = e;
            }
        } else if (ch->op != CAT_FOREIGN) {
            vlog(VLOG_INFO, LOGGER, name, "image %s%s%s", cat_op_str(ch->op), ns ? " in " : "",
                 ns ? ns : "");
        }
    }
    return first;
}

/* Existing objects of the scope as a JSON array (copies). */
static vmop_rc existing_of(struct kube_informer *inf, const char *ns, cJSON **ret,
                           struct vmop_err *err)
{
    struct kube_obj **objs = NULL;
    size_t n = 0;
    cJSON *arr;
    vmop_rc rc = ns ? kube_informer_by_index(inf, "ns", ns, &objs, &n, err)
                    : kube_informer_list(inf, &objs, &n, err);
    if (rc != VMOP_OK)
        return rc;
    arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < n; i++) {
        cJSON *d = cJSON_Duplicate(kube_obj_json(objs[i]), 1);
        if (!d || !cJSON_AddItemToArray(arr, d)) {
            cJSON_Delete(d);
            cJSON_Delete(arr);
            arr = NULL;
        }
    }
    kube_objs_free(objs, n);
    if (!arr)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    *ret = arr;
    return VMOP_OK;
}

static vmop_rc sync_scope(struct imgc *c, const char *ns, const struct cat_item *items, size_t n,
                          struct vmop_err *err)
{
    const struct kube_resource *res = ns ? &vmc_res_images : &vmc_res_cimages;
    struct kube_informer *inf = vmc_informer(c->vmc, res->resource);
    cJSON *desired = NULL, *existing = NULL;
    struct cat_plan plan;
    vmop_rc rc;
    memset(&plan, 0, sizeof(plan));
    rc = cat_build_images(items, n, ns, time(NULL), &desired, err);
    if (rc == VMOP_OK)
        rc = existing_of(inf, ns, &existing, err);
    if (rc == VMOP_OK)
        rc = cat_diff(desired, existing, ns, &plan, err);
    if (rc == VMOP_OK)
        rc = apply_plan(c, res, &plan, err);
    cat_plan_free(&plan);
    cJSON_Delete(desired);
    cJSON_Delete(existing);
    return rc;
}

static vmop_rc connect_endpoint(struct imgc *c, const char *name, struct api_endpoint **ret_ep,
                                struct vc_conn **ret_conn, struct vmop_err *err)
{
    return vcenters_get_named(c->vcs, vmc_informer(c->vmc, "vcenterendpoints"),
                              vmc_informer(c->vmc, "secrets"), c->system_ns, name, ret_ep, ret_conn,
                              err);
}

/* ---- admin object status ----------------------------------------------------------------------
 */

/* Sets Ready (True, or False with reason/message) and the given string fields in obj's status and
 * patches the status subresource when anything changed. fields: NULL-terminated key, value pairs
 * (a NULL value removes the key). */
static void admin_status(struct imgc *c, const struct kube_resource *res, const cJSON *obj,
                         vmop_rc rc, const struct vmop_err *why, const char *const *fields)
{
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(obj, "status");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "generation");
    cJSON *st = cJSON_IsObject(old) ? cJSON_Duplicate(old, 1) : cJSON_CreateObject(), *conds,
          *patch;
    struct vmop_err err = {0};
    char reason[64];
    long long g = cJSON_IsNumber(gen) ? (long long)gen->valuedouble : -1;
    if (!st)
        return;
    conds = cJSON_GetObjectItemCaseSensitive(st, "conditions");
    if (!cJSON_IsArray(conds)) {
        cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
        conds = cJSON_AddArrayToObject(st, "conditions");
    }
    if (!conds)
        goto out;
    if (rc == VMOP_OK) {
        api_cond_mark_true(conds, "Ready", g, time(NULL), NULL, &err);
    } else {
        st_reason_for(rc, why ? why->fault : NULL, reason, sizeof(reason));
        if (rc == VMOP_E_CONFLICT && why && !why->fault[0])
            snprintf(reason, sizeof(reason), "Conflict");
        api_cond_set(conds, "Ready", API_COND_FALSE, reason, why ? why->msg : "", g, time(NULL),
                     NULL, &err);
    }
    for (size_t i = 0; fields && fields[i]; i += 2) {
        cJSON_DeleteItemFromObjectCaseSensitive(st, fields[i]);
        if (fields[i + 1])
            cJSON_AddStringToObject(st, fields[i], fields[i + 1]);
    }
    if (old && cJSON_Compare(old, st, 1))
        goto out;
    patch = NULL;
    if (st_patch(old, st, &patch, &err) == VMOP_OK) {
        if (kube_patch_status(c->kc, res, kube_obj_namespace(obj), kube_obj_name(obj),
                              KUBE_PATCH_MERGE, patch, NULL, NULL, &err) != VMOP_OK)
            vlog_err(VLOG_WARN, LOGGER, kube_obj_name(obj), &err, "status not written");
        cJSON_Delete(patch);
    }
out:
    cJSON_Delete(st);
}

/* Logs in to every endpoint (once per client) and reports Ready, instanceUUID and version. */
static void endpoints_status(struct imgc *c, struct kube_obj **es, size_t ne)
{
    for (size_t i = 0; i < ne; i++) {
        const cJSON *j = kube_obj_json(es[i]);
        struct api_endpoint *ep = NULL;
        struct vc_conn *conn = NULL;
        struct vmop_err e = {0};
        vmop_rc rc = connect_endpoint(c, kube_obj_name(j), &ep, &conn, &e);
        if (rc == VMOP_OK) /* no I/O beyond ServiceContent when the session exists */
            rc = vim_login(vc_conn_client(conn), &e);
        vlog_err(VLOG_DEBUG, LOGGER, kube_obj_name(j), &e, "endpoint login: %s", vmop_rc_str(rc));
        if (rc == VMOP_OK) {
            const char *f[] = {"instanceUUID",
                               vim_about_instance_uuid(vc_conn_client(conn)),
                               "version",
                               vim_about_full_name(vc_conn_client(conn)),
                               "apiVersion",
                               vim_about_api_version(vc_conn_client(conn)),
                               NULL};
            admin_status(c, &vmc_res_endpoints, j, rc, NULL, f);
        } else {
            vlog_err(VLOG_WARN, LOGGER, kube_obj_name(j), &e, "cannot log in to vCenter");
            admin_status(c, &vmc_res_endpoints, j, rc, &e, NULL);
        }
        vc_conn_put(conn);
        api_endpoint_free(ep);
    }
}

/* 1 when another binding than b exists in b's namespace. */
static int binding_conflict(struct kube_obj **bs, size_t nb, size_t self)
{
    const char *ns = kube_obj_namespace(kube_obj_json(bs[self]));
    for (size_t i = 0; i < nb; i++) {
        const char *o = kube_obj_namespace(kube_obj_json(bs[i]));
        if (i != self && ns && o && !strcmp(ns, o))
            return 1;
    }
    return 0;
}

/* Hands the item lists a scan read to the collector that runs after this sync, so that it does
 * not read the same libraries again (csgcs_offer). */
static vmop_rc offer_reads(struct imgc *c, struct vim_client *vc,
                           const struct api_library_ref *libs, const struct cat_scan *s,
                           struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;
    for (size_t i = 0; i < s->n_refs && rc == VMOP_OK; i++)
        rc = csgcs_offer(c->gc, vc, &libs[i],
                         s->ref_list[i] >= 0 ? &s->lists[s->ref_list[i]] : NULL, err);
    return rc;
}

vmop_rc imgc_sync_once(struct imgc *c, struct vmop_err *err)
{
    struct kube_obj **bs = NULL, **es = NULL;
    size_t nb = 0, ne = 0;
    vmop_rc rc, first = VMOP_OK;
    int cluster_ok = 1;

    __atomic_add_fetch(&c->syncs, 1, __ATOMIC_RELAXED);
    csgcs_drop_offers(c->gc); /* what an earlier sync that stopped short offered */
    rc = kube_informer_list(vmc_informer(c->vmc, "namespacebindings"), &bs, &nb, err);
    if (rc == VMOP_OK)
        rc = kube_informer_list(vmc_informer(c->vmc, "vcenterendpoints"), &es, &ne, err);
    if (rc != VMOP_OK)
        goto out;
    endpoints_status(c, es, ne);

    /* namespaced images: one binding per namespace (the first one seen) */
    for (size_t i = 0; i < nb; i++) {
        struct api_binding *b = NULL;
        struct api_endpoint *ep = NULL;
        struct vc_conn *conn = NULL;
        struct cat_scan it;
        struct vmop_err e = {0};
        memset(&it, 0, sizeof(it));
        if (binding_conflict(bs, nb, i)) {
            /* no arbitrary pick: the namespace's images stay as they are (neither synced nor
             * removed) and its VMs are not created (resolve.h, MultipleBindings) */
            vmop_fail(&e, VMOP_E_CONFLICT,
                      "namespace %s has more than one NamespaceBinding: vmop uses none of them "
                      "(no images are synced, no virtual machines created) until all but one "
                      "are deleted",
                      kube_obj_namespace(kube_obj_json(bs[i])));
            admin_status(c, &vmc_res_bindings, kube_obj_json(bs[i]), VMOP_E_CONFLICT, &e, NULL);
            vlog_err(VLOG_WARN, LOGGER, kube_obj_key(bs[i]), &e, "binding conflict");
            continue;
        }
        rc = api_binding_parse(kube_obj_json(bs[i]), &b, &e);
        if (rc == VMOP_OK && b->endpoint)
            rc = connect_endpoint(c, b->endpoint, &ep, &conn, &e);
        if (rc == VMOP_OK)
            rc = cat_vc_scan(vc_conn_client(conn), c->cache, b->libraries, b->n_libraries, &it, &e);
        if (rc == VMOP_OK)
            rc = offer_reads(c, vc_conn_client(conn), b->libraries, &it, &e);
        if (rc == VMOP_OK)
            rc = sync_scope(c, b->namespace_, it.items, it.n, &e);
        admin_status(c, &vmc_res_bindings, kube_obj_json(bs[i]), rc, &e, NULL);
        if (rc != VMOP_OK) {
            vlog_err(VLOG_WARN, LOGGER, kube_obj_key(bs[i]), &e, "image sync failed");
            if (first == VMOP_OK) {
                first = rc;
                *err = e;
            }
        }
        cat_scan_free(&it);
        vc_conn_put(conn);
        api_endpoint_free(ep);
        api_binding_free(b);
    }

    /* namespaces whose binding is gone: their managed images go too */
    {
        struct kube_obj **imgs = NULL;
        size_t ni = 0;
        if (kube_informer_list(vmc_informer(c->vmc, "virtualmachineimages"), &imgs, &ni, NULL) ==
            VMOP_OK) {
            for (size_t i = 0; i < ni; i++) {
                const cJSON *j = kube_obj_json(imgs[i]);
                const char *ns = kube_obj_namespace(j);
                int bound = 0, seen = 0;
                struct vmop_err e = {0};
                if (!ns || !cat_is_managed(j))
                    continue;
                for (size_t k = 0; k < nb && !bound; k++)
                    bound = !strcmp(ns, kube_obj_namespace(kube_obj_json(bs[k])) ?: "");
                for (size_t k = 0; k < i && !seen; k++)
                    seen = !strcmp(ns, kube_obj_namespace(kube_obj_json(imgs[k])) ?: "");
                if (bound || seen)
                    continue;
                if (sync_scope(c, ns, NULL, 0, &e) != VMOP_OK)
                    vlog_err(VLOG_WARN, LOGGER, ns, &e,
                             "removing the images of an unbound "
                             "namespace failed");
            }
            kube_objs_free(imgs, ni);
        }
    }

    /* cluster images: the union over every endpoint (no cap: one scan per endpoint) */
    {
        struct cat_scan *per = calloc(ne + 1, sizeof(*per));
        size_t n_per = 0, total = 0;
        struct cat_item *merged = NULL;
        if (!per) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < ne; i++) {
            struct api_endpoint *ep = NULL, *ep2 = NULL;
            struct vc_conn *conn = NULL;
            struct vmop_err e = {0};
            rc = api_endpoint_parse(kube_obj_json(es[i]), &ep, &e);
            if (rc == VMOP_OK && ep->n_libraries > 0) {
                rc = connect_endpoint(c, ep->name, &ep2, &conn, &e);
                if (rc == VMOP_OK)
                    rc = cat_vc_scan(vc_conn_client(conn), c->cache, ep->libraries, ep->n_libraries,
                                     &per[n_per], &e);
                if (rc == VMOP_OK)
                    rc = offer_reads(c, vc_conn_client(conn), ep->libraries, &per[n_per], &e);
                n_per++;
            }
            if (rc != VMOP_OK) {
                cluster_ok = 0;
                vlog_err(VLOG_WARN, LOGGER, kube_obj_key(es[i]), &e, "cluster image sync failed");
                if (first == VMOP_OK) {
                    first = rc;
                    *err = e;
                }
            }
            vc_conn_put(conn);
            api_endpoint_free(ep2);
            api_endpoint_free(ep);
        }
        for (size_t i = 0; i < n_per; i++)
            total += per[i].n;
        merged = calloc(total + 1, sizeof(*merged));
        if (merged && cluster_ok) {
            size_t k = 0;
            struct vmop_err e = {0};
            for (size_t i = 0; i < n_per; i++)
                for (size_t j = 0; j < per[i].n; j++)
                    merged[k++] = per[i].items[j];
            rc = sync_scope(c, NULL, merged, k, &e);
            if (rc != VMOP_OK && first == VMOP_OK) {
                first = rc;
                *err = e;
            }
        }
        free(merged);
        for (size_t i = 0; i < n_per; i++)
            cat_scan_free(&per[i]);
        free(per);
    }
    csgcs_run(c->gc); /* image cache templates no one can clone from any more */
    rc = first;
out:
    if (rc != VMOP_OK)
        __atomic_add_fetch(&c->failures, 1, __ATOMIC_RELAXED);
    kube_objs_free(bs, nb);
    kube_objs_free(es, ne);
    return rc;
}

/* FNV-1a over s, continuing from h. */
static uint64_t fnv1a(uint64_t h, const char *s)
{
    return vmop_fnv1a_str(h, s);
}

static uint64_t sig_add(uint64_t h, struct kube_obj **objs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h = fnv1a(h, kube_obj_key(objs[i]));
        h = fnv1a(h, "=");
        h = fnv1a(h, kube_obj_get_rv(objs[i]));
        h = fnv1a(h, ";");
    }
    return h;
}

/* A hash of the keys and resourceVersions of the bindings, the endpoints and the system
 * namespace's Secrets (credentials): a change means a sync is due now. A hash, not a string, so
 * that no number of objects overflows it (a changed binding past a fixed buffer would go unseen
 * until the next period). */
static uint64_t signature(struct imgc *c)
{
    static const char *const infs[] = {"namespacebindings", "vcenterendpoints"};
    uint64_t h = VMOP_FNV_OFFSET;
    for (size_t k = 0; k < 2; k++) {
        struct kube_obj **objs = NULL;
        size_t n = 0;
        if (kube_informer_list(vmc_informer(c->vmc, infs[k]), &objs, &n, NULL) != VMOP_OK)
            continue;
        h = sig_add(h, objs, n);
        kube_objs_free(objs, n);
    }
    {
        struct kube_obj **objs = NULL;
        size_t n = 0;
        if (kube_informer_by_index(vmc_informer(c->vmc, "secrets"), "ns", c->system_ns, &objs, &n,
                                   NULL) == VMOP_OK) {
            h = sig_add(h, objs, n);
            kube_objs_free(objs, n);
        }
    }
    return h;
}

static void *sync_thread(void *arg)
{
    struct imgc *c = arg;
    int64_t next = 0;
    uint64_t sig;
    while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
        int64_t now = vmop_mono_ms();
        sig = signature(c);
        if (now >= next || sig != c->last_sig ||
            __atomic_exchange_n(&c->kick, 0, __ATOMIC_ACQ_REL)) {
            struct vmop_err err = {0};
            vmop_rc rc = imgc_sync_once(c, &err);
            c->last_sig = sig;
            /* failed syncs are retried sooner than the period */
            next = vmop_mono_ms() +
                   (rc == VMOP_OK ? c->period_ms : (c->period_ms < 15000 ? c->period_ms : 15000));
        }
        vmop_sleep_ms(IMGC_POLL_MS, &c->stop);
    }
    return NULL;
}

vmop_rc imgc_start(struct imgc *c, struct vmop_err *err)
{
    if (c->started)
        return VMOP_OK;
    if (pthread_create(&c->th, NULL, sync_thread, c) != 0)
        return vmop_fail(err, VMOP_E_INTERNAL, "cannot start the image sync thread");
    c->started = 1;
    return VMOP_OK;
}

void imgc_kick(struct imgc *c)
{
    __atomic_store_n(&c->kick, 1, __ATOMIC_RELEASE);
}

void imgc_stop(struct imgc *c)
{
    if (!c || !c->started)
        return;
    __atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
    pthread_join(c->th, NULL);
    c->started = 0;
}

void imgc_free(struct imgc *c)
{
    if (!c)
        return;
    imgc_stop(c);
    cat_cache_free(c->cache);
    csgcs_free(c->gc);
    free(c);
}

#define IMGC_ATOMIC(field)                                                                         \
    static double read_##field(void *ud)                                                           \
    {                                                                                              \
        return (double)__atomic_load_n(&((struct imgc *)ud)->field, __ATOMIC_RELAXED);             \
    }
IMGC_ATOMIC(syncs)
IMGC_ATOMIC(failures)
IMGC_ATOMIC(creates)
IMGC_ATOMIC(updates)
IMGC_ATOMIC(deletes)

static const struct metrics_plain imgc_plain[] = {
    {"vmop_image_syncs_total", "Content library sync passes.", read_syncs},
    {"vmop_image_sync_failures_total", "Content library sync passes with a failure.",
     read_failures},
    {"vmop_image_creates_total", "VirtualMachineImage and ClusterVirtualMachineImage creates.",
     read_creates},
    {"vmop_image_updates_total", "VirtualMachineImage and ClusterVirtualMachineImage updates.",
     read_updates},
    {"vmop_image_deletes_total", "VirtualMachineImage and ClusterVirtualMachineImage deletes.",
     read_deletes},
};

vmop_rc imgc_metrics_register(struct imgc *c, struct metrics *m, struct vmop_err *err)
{
    vmop_rc rc =
        metrics_add_plain(m, imgc_plain, sizeof(imgc_plain) / sizeof(imgc_plain[0]), c, c, err);
    return rc == VMOP_OK ? csgcs_metrics_register(c->gc, m, c, err) : rc;
}
