/* vmservice.c: the VirtualMachineService controller: informers (the VirtualMachine one shared
 * with the VM controller when opts.vm_informer is set, else its own), queue, reconcile (finalizer,
 * Service/Endpoints/EndpointSlice written only when they differ, LB ingress copied back).
 * See vmservice.h; the object computation is in endpoints.c. */
#include "api_json.h"
#include "vmservice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoints.h"
#include "kube_informer.h"
#include "kube_queue.h"
#include "kube_meta.h"

#define SYNC_TIMEOUT_MS 30000
#define INDEX_NS        "ns" /* metadata.namespace; the VM controller's VM informer has it too */

const struct kube_resource vmsvc_res_vmservices = {"vmoperator.vmware.com", "v1alpha6",
                                                   "virtualmachineservices", 1};
const struct kube_resource vmsvc_res_vms = {"vmoperator.vmware.com", "v1alpha6", "virtualmachines",
                                            1};
const struct kube_resource vmsvc_res_services = {"", "v1", "services", 1};
const struct kube_resource vmsvc_res_endpoints = {"", "v1", "endpoints", 1};
const struct kube_resource vmsvc_res_endpointslices = {"discovery.k8s.io", "v1", "endpointslices",
                                                       1};

struct vmsvc {
    struct kube_client *kc;
    struct vmsvc_opts o;
    char *ns; /* owned copy of o.ns */
    struct kube_informer *svc_inf, *vm_inf, *core_inf;
    int own_vm_inf; /* 0: vm_inf is opts.vm_informer (borrowed: never started, stopped, freed) */
    struct kube_queue *q;
    struct kube_workers *w;
    int running;
    unsigned long reconciles, failures, writes; /* atomics */
};

static void count(unsigned long *c)
{
    __atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

/* ---- event handlers (informer threads): only enqueue ---- */

static void index_ns(const cJSON *obj, void *ud, kube_index_emit_fn emit, void *ctx)
{
    const char *ns = kube_obj_namespace(obj);
    if (ns)
        emit(ctx, ns);
}

static void on_svc(struct vmsvc *vs, const struct kube_obj *o)
{
    kube_queue_add(vs->q, kube_obj_key(o));
}

static void svc_add(void *ud, const struct kube_obj *o)
{
    on_svc(ud, o);
}

static void svc_update(void *ud, const struct kube_obj *old, const struct kube_obj *o)
{
    on_svc(ud, o);
}

static void svc_delete(void *ud, const struct kube_obj *o)
{
    on_svc(ud, o); /* the reconcile sees it gone and does nothing */
}

/* Requeues the services of the VM's namespace whose selector matches the old or the new labels. */
static void on_vm(struct vmsvc *vs, const struct kube_obj *old, const struct kube_obj *o)
{
    const cJSON *vm = kube_obj_json(o);
    const cJSON *ol = old ? api_jget(api_jget(kube_obj_json(old), "metadata"), "labels") : NULL;
    const cJSON *nl = api_jget(api_jget(vm, "metadata"), "labels");
    const char *ns = kube_obj_namespace(vm);
    struct kube_obj **svcs = NULL;
    size_t n = 0;
    struct vmop_err err = {0};
    if (!ns || kube_informer_by_index(vs->svc_inf, INDEX_NS, ns, &svcs, &n, &err) != VMOP_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        const cJSON *sel = api_jget(api_jget(kube_obj_json(svcs[i]), "spec"), "selector");
        if (ep_selector_matches(sel, nl) || (ol && ep_selector_matches(sel, ol)))
            kube_queue_add(vs->q, kube_obj_key(svcs[i]));
    }
    kube_objs_free(svcs, n);
}

static void vm_add(void *ud, const struct kube_obj *o)
{
    on_vm(ud, NULL, o);
}

static void vm_update(void *ud, const struct kube_obj *old, const struct kube_obj *o)
{
    if (old == o)
        return; /* a resync of a shared VM informer: the services' own resync covers it */
    on_vm(ud, old, o);
}

static void vm_delete(void *ud, const struct kube_obj *o)
{
    on_vm(ud, NULL, o);
}

/* A core Service owned by a VirtualMachineService: requeue the owner (LB ingress, drift). */
static void on_core(struct vmsvc *vs, const struct kube_obj *o)
{
    const cJSON *obj = kube_obj_json(o), *r;
    const char *ns = kube_obj_namespace(obj);
    cJSON_ArrayForEach(r, api_jget(api_jget(obj, "metadata"), "ownerReferences"))
    {
        const char *kind = kube_json_str(r, "kind"), *name = kube_json_str(r, "name");
        char key[KUBE_QUEUE_MAX_KEY];
        if (!ns || !kind || !name || strcmp(kind, EP_VMSVC_KIND) != 0)
            continue;
        if ((size_t)snprintf(key, sizeof(key), "%s/%s", ns, name) < sizeof(key))
            kube_queue_add(vs->q, key);
    }
}

static void core_add(void *ud, const struct kube_obj *o)
{
    on_core(ud, o);
}

static void core_update(void *ud, const struct kube_obj *old, const struct kube_obj *o)
{
    on_core(ud, o);
}

static void core_delete(void *ud, const struct kube_obj *o)
{
    on_core(ud, o);
}

/* ---- reconcile ---- */

static int has_finalizer(const cJSON *obj, int remove)
{
    cJSON *fs = (cJSON *)api_jget(api_jget(obj, "metadata"), "finalizers"), *f;
    int i = 0;
    cJSON_ArrayForEach(f, fs)
    {
        if (cJSON_IsString(f) && strcmp(f->valuestring, VMSVC_FINALIZER) == 0) {
            if (remove)
                cJSON_DeleteItemFromArray(fs, i);
            return 1;
        }
        i++;
    }
    return 0;
}

static vmop_rc add_finalizer(cJSON *obj, struct vmop_err *err)
{
    cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    cJSON *fs = cJSON_GetObjectItemCaseSensitive(md, "finalizers");
    if (!cJSON_IsArray(fs)) {
        cJSON_DeleteItemFromObjectCaseSensitive(md, "finalizers");
        fs = cJSON_AddArrayToObject(md, "finalizers");
    }
    if (!fs || !cJSON_AddItemToArray(fs, cJSON_CreateString(VMSVC_FINALIZER)))
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    return VMOP_OK;
}

/* Creates desired when absent, rewrites the stored object when it differs. *ret_actual (may be
 * NULL): the object as stored afterwards (caller frees). */
static vmop_rc apply(struct vmsvc *vs, const struct kube_resource *res, const cJSON *desired,
                     int (*differs)(const cJSON *, const cJSON *), cJSON **ret_actual,
                     struct vmop_err *err)
{
    const char *ns = kube_obj_namespace(desired), *name = kube_obj_name(desired);
    cJSON *actual = NULL, *upd = NULL, *out = NULL;
    vmop_rc rc = kube_get(vs->kc, res, ns, name, NULL, &actual, err);
    if (rc == VMOP_E_NOT_FOUND) {
        vmop_err_clear(err);
        if ((rc = kube_create(vs->kc, res, ns, desired, NULL, &out, err)) == VMOP_OK)
            count(&vs->writes);
        goto out;
    }
    if (rc != VMOP_OK)
        goto out;
    if (!differs(desired, actual)) {
        out = actual;
        actual = NULL;
        goto out;
    }
    if ((rc = ep_merge_for_update(desired, actual, &upd, err)) != VMOP_OK)
        goto out;
    if ((rc = kube_update(vs->kc, res, ns, upd, NULL, &out, err)) == VMOP_OK)
        count(&vs->writes);
out:
    if (rc == VMOP_OK && ret_actual) {
        *ret_actual = out;
        out = NULL;
    }
    cJSON_Delete(actual);
    cJSON_Delete(upd);
    cJSON_Delete(out);
    return rc;
}

static int ingress_eq(const cJSON *a, const cJSON *b)
{
    int na = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    int nb = cJSON_IsArray(b) ? cJSON_GetArraySize(b) : 0;
    return (na == 0 && nb == 0) || cJSON_Compare(a, b, 1);
}

/* status.loadBalancer.ingress of cur := the Service's. */
static vmop_rc sync_ingress(struct vmsvc *vs, cJSON *cur, const cJSON *svc, struct vmop_err *err)
{
    const cJSON *want = api_jget(api_jget(api_jget(svc, "status"), "loadBalancer"), "ingress");
    cJSON *st, *lb, *c;
    if (ingress_eq(want, api_jget(api_jget(api_jget(cur, "status"), "loadBalancer"), "ingress")))
        return VMOP_OK;
    st = cJSON_GetObjectItemCaseSensitive(cur, "status");
    if (!cJSON_IsObject(st)) {
        cJSON_DeleteItemFromObjectCaseSensitive(cur, "status");
        st = cJSON_AddObjectToObject(cur, "status");
    }
    cJSON_DeleteItemFromObjectCaseSensitive(st, "loadBalancer");
    if (!st || !(lb = cJSON_AddObjectToObject(st, "loadBalancer")))
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    if (cJSON_IsArray(want) && cJSON_GetArraySize(want) > 0) {
        if (!(c = cJSON_Duplicate(want, 1)))
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        cJSON_AddItemToObject(lb, "ingress", c);
    }
    return kube_update_status(vs->kc, &vmsvc_res_vmservices, NULL, cur, NULL, NULL, err);
}

static vmop_rc reconcile(void *ud, const char *key, struct vmop_err *err)
{
    struct vmsvc *vs = ud;
    struct kube_obj *o = kube_informer_get(vs->svc_inf, key), **vms = NULL;
    const cJSON **vj = NULL;
    cJSON *cur = NULL, *upd = NULL, *svc = NULL;
    struct ep_desired d = {0};
    const char *ns, *dt;
    size_t n = 0;
    vmop_rc rc = VMOP_OK;

    if (!o) {
        count(&vs->reconciles);
        return VMOP_OK; /* gone: the owned objects follow by garbage collection */
    }
    if (!(cur = cJSON_Duplicate(kube_obj_json(o), 1))) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    ns = kube_obj_namespace(cur);
    dt = kube_json_path_str(cur, "metadata", "deletionTimestamp");
    if (dt && *dt) {
        if (has_finalizer(cur, 1))
            rc = kube_update(vs->kc, &vmsvc_res_vmservices, NULL, cur, NULL, NULL, err);
        goto out;
    }
    if (!has_finalizer(cur, 0)) {
        if ((rc = add_finalizer(cur, err)) != VMOP_OK ||
            (rc = kube_update(vs->kc, &vmsvc_res_vmservices, NULL, cur, NULL, &upd, err)) !=
                VMOP_OK)
            goto out;
        cJSON_Delete(cur);
        cur = upd;
        upd = NULL;
        ns = kube_obj_namespace(cur); /* the old one pointed into the freed copy */
    }
    if ((rc = kube_informer_by_index(vs->vm_inf, INDEX_NS, ns, &vms, &n, err)) != VMOP_OK)
        goto out;
    if (n && !(vj = calloc(n, sizeof(*vj)))) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        vj[i] = kube_obj_json(vms[i]);
    if ((rc = ep_compute(cur, vj, n, &d, err)) != VMOP_OK)
        goto out;
    if ((rc = apply(vs, &vmsvc_res_services, d.service, ep_service_differs, &svc, err)) != VMOP_OK)
        goto out;
    if (d.endpoints && (rc = apply(vs, &vmsvc_res_endpoints, d.endpoints, ep_endpoints_differs,
                                   NULL, err)) != VMOP_OK)
        goto out;
    if (d.slice && (rc = apply(vs, &vmsvc_res_endpointslices, d.slice, ep_slice_differs, NULL,
                               err)) != VMOP_OK)
        goto out;
    rc = sync_ingress(vs, cur, svc, err);
out:
    count(&vs->reconciles);
    if (rc != VMOP_OK) {
        count(&vs->failures);
        if (vs->o.rec && rc != VMOP_E_CONFLICT && cur) {
            struct vmop_err e2 = {0};
            kube_event(vs->o.rec, cur, "Warning", "ReconcileFailed", &e2, "%s", err->msg);
        }
    }
    ep_desired_free(&d);
    free(vj);
    kube_objs_free(vms, n);
    cJSON_Delete(cur);
    cJSON_Delete(upd);
    cJSON_Delete(svc);
    kube_obj_unref(o);
    return rc;
}

/* ---- lifecycle ---- */

static vmop_rc new_informer(struct vmsvc *vs, const struct kube_resource *r, long resync_ms,
                            const struct kube_informer_handlers *h, int with_ns_index,
                            struct kube_informer **ret, struct vmop_err *err)
{
    struct kube_informer_opts io = {.resource = r, .ns = vs->ns, .resync_ms = resync_ms};
    struct kube_informer *inf = NULL;
    vmop_rc rc = kube_informer_new(vs->kc, &io, h, &inf, err);
    if (rc == VMOP_OK && with_ns_index)
        rc = kube_informer_add_index(inf, INDEX_NS, index_ns, NULL, err);
    if (rc != VMOP_OK) {
        kube_informer_free(inf);
        return rc;
    }
    *ret = inf;
    return VMOP_OK;
}

/* vs->vm_inf: opts.vm_informer with hv added (it must index "ns"), or an informer of our own. */
static vmop_rc vm_informer(struct vmsvc *vs, const struct kube_informer_handlers *hv,
                           struct vmop_err *err)
{
    if (!vs->o.vm_informer) {
        vs->own_vm_inf = 1;
        return new_informer(vs, &vmsvc_res_vms, 0, hv, 1, &vs->vm_inf, err);
    }
    if (!kube_informer_has_index(vs->o.vm_informer, INDEX_NS))
        return vmop_fail(err, VMOP_E_INVALID, "vmsvc_new: the shared VM informer has no '%s' index",
                         INDEX_NS);
    vmop_rc rc = kube_informer_add_handlers(vs->o.vm_informer, hv, err);
    if (rc == VMOP_OK)
        vs->vm_inf = vs->o.vm_informer;
    return rc;
}

vmop_rc vmsvc_new(struct kube_client *kc, const struct vmsvc_opts *opts, struct vmsvc **ret,
                  struct vmop_err *err)
{
    struct vmsvc *vs;
    vmop_rc rc;
    struct kube_informer_handlers hs = {svc_add, svc_update, svc_delete, NULL};
    struct kube_informer_handlers hv = {vm_add, vm_update, vm_delete, NULL};
    struct kube_informer_handlers hc = {core_add, core_update, core_delete, NULL};
    if (!kc || !ret)
        return vmop_fail(err, VMOP_E_INVALID, "vmsvc_new: NULL argument");
    if (!(vs = calloc(1, sizeof(*vs))))
        return vmop_fail(err, VMOP_E_NOMEM, "vmsvc_new: out of memory");
    vs->kc = kc;
    if (opts)
        vs->o = *opts;
    if (!vs->o.workers)
        vs->o.workers = 2;
    if (!vs->o.drain_ms)
        vs->o.drain_ms = 5000;
    if (vs->o.ns && !(vs->ns = strdup(vs->o.ns))) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "vmsvc_new: out of memory");
        goto fail;
    }
    vs->o.ns = vs->ns;
    hs.ud = hv.ud = hc.ud = vs;
    if ((rc = kube_queue_new(NULL, &vs->q, err)) != VMOP_OK ||
        (rc = new_informer(vs, &vmsvc_res_vmservices, vs->o.resync_ms, &hs, 1, &vs->svc_inf,
                           err)) != VMOP_OK ||
        (rc = new_informer(vs, &vmsvc_res_services, 0, &hc, 0, &vs->core_inf, err)) != VMOP_OK ||
        (rc = vm_informer(vs, &hv, err)) != VMOP_OK) /* last: nothing may fail once a shared
                                                      * informer holds our handlers */
        goto fail;
    *ret = vs;
    return VMOP_OK;
fail:
    vmsvc_free(vs);
    return rc;
}

vmop_rc vmsvc_start(struct vmsvc *vs, struct vmop_err *err)
{
    vmop_rc rc;
    if (!vs || vs->running)
        return vmop_fail(err, VMOP_E_INVALID, "vmsvc_start: not startable");
    if ((rc = kube_informer_start(vs->svc_inf, err)) != VMOP_OK ||
        (vs->own_vm_inf && (rc = kube_informer_start(vs->vm_inf, err)) != VMOP_OK) ||
        (rc = kube_informer_start(vs->core_inf, err)) != VMOP_OK)
        goto fail;
    /* no reconcile before the VM cache is complete: it would publish empty endpoints */
    if (kube_informer_wait_synced(vs->svc_inf, SYNC_TIMEOUT_MS) != VMOP_OK ||
        kube_informer_wait_synced(vs->vm_inf, SYNC_TIMEOUT_MS) != VMOP_OK ||
        kube_informer_wait_synced(vs->core_inf, SYNC_TIMEOUT_MS) != VMOP_OK) {
        rc = vmop_fail(err, VMOP_E_TIMEOUT, "vmservice informers did not sync in %d ms",
                       SYNC_TIMEOUT_MS);
        goto fail;
    }
    if ((rc = kube_workers_start(vs->q, vs->o.workers, reconcile, vs, &vs->w, err)) != VMOP_OK)
        goto fail;
    vs->running = 1;
    return VMOP_OK;
fail:
    kube_informer_stop(vs->svc_inf);
    if (vs->own_vm_inf)
        kube_informer_stop(vs->vm_inf);
    kube_informer_stop(vs->core_inf);
    return rc;
}

void vmsvc_stop(struct vmsvc *vs)
{
    struct vmop_err err = {0};
    if (!vs)
        return;
    kube_informer_stop(vs->svc_inf);
    if (vs->own_vm_inf)
        kube_informer_stop(vs->vm_inf);
    kube_informer_stop(vs->core_inf);
    if (vs->w) {
        kube_workers_stop(vs->w, vs->o.drain_ms, &err);
        vs->w = NULL;
    }
    vs->running = 0;
}

void vmsvc_free(struct vmsvc *vs)
{
    if (!vs)
        return;
    vmsvc_stop(vs);
    kube_informer_free(vs->svc_inf);
    if (vs->own_vm_inf)
        kube_informer_free(vs->vm_inf);
    kube_informer_free(vs->core_inf);
    kube_queue_free(vs->q);
    free(vs->ns);
    free(vs);
}

void vmsvc_get_stats(struct vmsvc *vs, struct vmsvc_stats *ret)
{
    ret->reconciles = __atomic_load_n(&vs->reconciles, __ATOMIC_RELAXED);
    ret->failures = __atomic_load_n(&vs->failures, __ATOMIC_RELAXED);
    ret->writes = __atomic_load_n(&vs->writes, __ATOMIC_RELAXED);
}
