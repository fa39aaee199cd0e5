/* endpoints.c: VirtualMachineService -> desired Service, Endpoints and EndpointSlice (pure).
 * See endpoints.h for the rules. Everything here works on borrowed cJSON trees and returns new
 * ones; no I/O, no clock, no globals. */
#include "api_json.h"
#include "endpoints.h"

#include <stdlib.h>
#include <string.h>

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

static int str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

int ep_selector_matches(const cJSON *selector, const cJSON *labels)
{
    const cJSON *s;
    int n = 0;
    if (!cJSON_IsObject(selector))
        return 0;
    cJSON_ArrayForEach(s, selector)
    {
        const char *want = cJSON_IsString(s) ? s->valuestring : NULL;
        const char *have = api_jstr(labels, s->string);
        if (!want || !have || strcmp(want, have) != 0)
            return 0;
        n++;
    }
    return n > 0;
}

int ep_vm_has_probe(const cJSON *vm)
{
    const cJSON *p = api_jget(api_jget(vm, "spec"), "readinessProbe");
    const cJSON *gi = api_jget(p, "guestInfo");
    if (!cJSON_IsObject(p))
        return 0;
    return cJSON_IsObject(api_jget(p, "tcpSocket")) ||
           cJSON_IsObject(api_jget(p, "guestHeartbeat")) ||
           (cJSON_IsArray(gi) && cJSON_GetArraySize(gi) > 0);
}

static int ready_condition_true(const cJSON *vm)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, api_jget(api_jget(vm, "status"), "conditions"))
    {
        if (str_eq(api_jstr(c, "type"), "Ready"))
            return str_eq(api_jstr(c, "status"), "True");
    }
    return 0;
}

static const char *vm_ip4(const cJSON *vm)
{
    const char *ip = api_jstr(api_jget(api_jget(vm, "status"), "network"), "primaryIP4");
    return ip && *ip ? ip : NULL;
}

enum ep_vm_class ep_vm_classify(const cJSON *vm)
{
    const cJSON *md = api_jget(vm, "metadata");
    const char *dt = api_jstr(md, "deletionTimestamp");
    if ((dt && *dt) || !vm_ip4(vm) || !api_jstr(md, "name"))
        return EP_VM_SKIP;
    if (!str_eq(api_jstr(api_jget(vm, "status"), "powerState"), "PoweredOn"))
        return EP_VM_NOT_READY;
    if (ep_vm_has_probe(vm) && !ready_condition_true(vm))
        return EP_VM_NOT_READY;
    return EP_VM_READY;
}

void ep_desired_free(struct ep_desired *d)
{
    if (!d)
        return;
    cJSON_Delete(d->service);
    cJSON_Delete(d->endpoints);
    cJSON_Delete(d->slice);
    memset(d, 0, sizeof(*d));
}

/* ---- building ---- */

struct picked {
    const cJSON *vm;
    const char *name;
    enum ep_vm_class cls;
};

static int cmp_picked(const void *a, const void *b)
{
    return strcmp(((const struct picked *)a)->name, ((const struct picked *)b)->name);
}

/* Adds a string member when s is non-NULL and non-empty. */
static int add_str(cJSON *o, const char *k, const char *s)
{
    if (!s || !*s)
        return 0;
    return cJSON_AddStringToObject(o, k, s) ? 0 : -1;
}

/* metadata {name, namespace, labels, annotations?, ownerReferences}. */
static cJSON *make_meta(const cJSON *vmsvc, int with_annotations)
{
    const cJSON *smd = api_jget(vmsvc, "metadata");
    cJSON *md = cJSON_CreateObject(), *labels, *ref, *refs;
    const cJSON *l;
    if (!md)
        return NULL;
    if (add_str(md, "name", api_jstr(smd, "name")) ||
        add_str(md, "namespace", api_jstr(smd, "namespace")))
        goto fail;
    labels = cJSON_AddObjectToObject(md, "labels");
    if (!labels)
        goto fail;
    cJSON_ArrayForEach(l, api_jget(smd, "labels"))
    {
        if (cJSON_IsString(l) && !cJSON_AddStringToObject(labels, l->string, l->valuestring))
            goto fail;
    }
    if (with_annotations) {
        cJSON *ann = NULL;
        cJSON_ArrayForEach(l, api_jget(smd, "annotations"))
        {
            if (!cJSON_IsString(l) || strcmp(l->string, LAST_APPLIED) == 0)
                continue;
            if (!ann && !(ann = cJSON_AddObjectToObject(md, "annotations")))
                goto fail;
            if (!cJSON_AddStringToObject(ann, l->string, l->valuestring))
                goto fail;
        }
    }
    refs = cJSON_AddArrayToObject(md, "ownerReferences");
    ref = cJSON_CreateObject();
    if (!refs || !ref)
        goto fail_ref;
    cJSON_AddItemToArray(refs, ref);
    if (add_str(ref, "apiVersion", EP_VMSVC_API) || add_str(ref, "kind", EP_VMSVC_KIND) ||
        add_str(ref, "name", api_jstr(smd, "name")) || add_str(ref, "uid", api_jstr(smd, "uid")) ||
        !cJSON_AddTrueToObject(ref, "controller") ||
        !cJSON_AddTrueToObject(ref, "blockOwnerDeletion"))
        goto fail;
    return md;
fail_ref:
    cJSON_Delete(ref);
fail:
    cJSON_Delete(md);
    return NULL;
}

static cJSON *new_obj(const char *api, const char *kind, cJSON *md)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !md)
        goto fail;
    if (!cJSON_AddStringToObject(o, "apiVersion", api) || !cJSON_AddStringToObject(o, "kind", kind))
        goto fail;
    cJSON_AddItemToObject(o, "metadata", md);
    return o;
fail:
    cJSON_Delete(o);
    cJSON_Delete(md);
    return NULL;
}

static double num_or(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = api_jget(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static cJSON *build_service(const cJSON *vmsvc)
{
    const cJSON *spec = api_jget(vmsvc, "spec"), *p, *ranges;
    const char *type = api_jstr(spec, "type");
    cJSON *svc = new_obj("v1", "Service", make_meta(vmsvc, 1)), *s, *ports;
    if (!svc || !(s = cJSON_AddObjectToObject(svc, "spec")))
        goto fail;
    if (add_str(s, "type", type && *type ? type : "ClusterIP"))
        goto fail;
    if (!(ports = cJSON_AddArrayToObject(s, "ports")))
        goto fail;
    cJSON_ArrayForEach(p, api_jget(spec, "ports"))
    {
        cJSON *np = cJSON_CreateObject();
        double port = num_or(p, "port", 0);
        if (!np)
            goto fail;
        cJSON_AddItemToArray(ports, np);
        if (add_str(np, "name", api_jstr(p, "name")) ||
            add_str(np, "protocol", api_jstr(p, "protocol") ? api_jstr(p, "protocol") : "TCP") ||
            !cJSON_AddNumberToObject(np, "port", port) ||
            !cJSON_AddNumberToObject(np, "targetPort", num_or(p, "targetPort", port)))
            goto fail;
    }
    if (str_eq(type, "LoadBalancer")) {
        if (!cJSON_AddFalseToObject(s, "allocateLoadBalancerNodePorts") ||
            add_str(s, "loadBalancerIP", api_jstr(spec, "loadBalancerIP")))
            goto fail;
        ranges = api_jget(spec, "loadBalancerSourceRanges");
        if (cJSON_IsArray(ranges) && cJSON_GetArraySize(ranges) > 0) {
            cJSON *r = cJSON_Duplicate(ranges, 1);
            if (!r)
                goto fail;
            cJSON_AddItemToObject(s, "loadBalancerSourceRanges", r);
        }
    }
    if (add_str(s, "clusterIP", api_jstr(spec, "clusterIp")) ||
        add_str(s, "externalName", api_jstr(spec, "externalName")))
        goto fail;
    return svc;
fail:
    cJSON_Delete(svc);
    return NULL;
}

static cJSON *target_ref(const cJSON *vm)
{
    const cJSON *md = api_jget(vm, "metadata");
    cJSON *r = cJSON_CreateObject();
    if (!r || add_str(r, "kind", "VirtualMachine") || add_str(r, "name", api_jstr(md, "name")) ||
        add_str(r, "namespace", api_jstr(md, "namespace")) ||
        add_str(r, "uid", api_jstr(md, "uid"))) {
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

/* [{name, port, protocol}] from the VirtualMachineService's ports (targetPort, else port). */
static cJSON *endpoint_ports(const cJSON *vmsvc)
{
    const cJSON *p;
    cJSON *arr = cJSON_CreateArray();
    if (!arr)
        return NULL;
    cJSON_ArrayForEach(p, api_jget(api_jget(vmsvc, "spec"), "ports"))
    {
        cJSON *np = cJSON_CreateObject();
        double port = num_or(p, "port", 0);
        if (!np)
            goto fail;
        cJSON_AddItemToArray(arr, np);
        if (add_str(np, "name", api_jstr(p, "name")) ||
            !cJSON_AddNumberToObject(np, "port", num_or(p, "targetPort", port)) ||
            add_str(np, "protocol", api_jstr(p, "protocol") ? api_jstr(p, "protocol") : "TCP"))
            goto fail;
    }
    return arr;
fail:
    cJSON_Delete(arr);
    return NULL;
}

static cJSON *build_endpoints(const cJSON *vmsvc, const struct picked *pk, size_t n)
{
    cJSON *ep = new_obj("v1", "Endpoints", make_meta(vmsvc, 0)), *subsets, *sub, *ports;
    cJSON *ready = NULL, *not_ready = NULL;
    if (!ep || !(subsets = cJSON_AddArrayToObject(ep, "subsets")))
        goto fail;
    if (add_str(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ep, "metadata"),
                                                 "labels"),
                EP_LABEL_SKIP_MIRROR, "true"))
        goto fail;
    if (n == 0)
        return ep; /* a subset needs at least one address */
    if (!(sub = cJSON_CreateObject()))
        goto fail;
    cJSON_AddItemToArray(subsets, sub);
    for (size_t i = 0; i < n; i++) {
        cJSON **list = pk[i].cls == EP_VM_READY ? &ready : &not_ready;
        cJSON *a = cJSON_CreateObject(), *tr = target_ref(pk[i].vm);
        if (!a || !tr || add_str(a, "ip", vm_ip4(pk[i].vm))) {
            cJSON_Delete(a);
            cJSON_Delete(tr);
            goto fail;
        }
        cJSON_AddItemToObject(a, "targetRef", tr);
        if (!*list && !(*list = cJSON_AddArrayToObject(
                            sub, pk[i].cls == EP_VM_READY ? "addresses" : "notReadyAddresses"))) {
            cJSON_Delete(a);
            goto fail;
        }
        cJSON_AddItemToArray(*list, a);
    }
    if (!(ports = endpoint_ports(vmsvc)))
        goto fail;
    cJSON_AddItemToObject(sub, "ports", ports);
    return ep;
fail:
    cJSON_Delete(ep);
    return NULL;
}

static cJSON *build_slice(const cJSON *vmsvc, const struct picked *pk, size_t n)
{
    const char *name = api_jstr(api_jget(vmsvc, "metadata"), "name");
    cJSON *es = new_obj("discovery.k8s.io/v1", "EndpointSlice", make_meta(vmsvc, 0));
    cJSON *labels, *eps, *ports;
    if (!es)
        return NULL;
    labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(es, "metadata"),
                                              "labels");
    cJSON_DeleteItemFromObjectCaseSensitive(labels, EP_LABEL_SVC_NAME);
    cJSON_DeleteItemFromObjectCaseSensitive(labels, EP_LABEL_MANAGED_BY);
    if (add_str(labels, EP_LABEL_SVC_NAME, name) ||
        add_str(labels, EP_LABEL_MANAGED_BY, EP_MANAGED_BY) || add_str(es, "addressType", "IPv4") ||
        !(eps = cJSON_AddArrayToObject(es, "endpoints")))
        goto fail;
    for (size_t i = 0; i < n; i++) {
        int r = pk[i].cls == EP_VM_READY;
        cJSON *e = cJSON_CreateObject(), *addrs, *cond, *tr;
        if (!e)
            goto fail;
        cJSON_AddItemToArray(eps, e);
        if (!(addrs = cJSON_AddArrayToObject(e, "addresses")) ||
            !cJSON_AddItemToArray(addrs, cJSON_CreateString(vm_ip4(pk[i].vm))) ||
            !(cond = cJSON_AddObjectToObject(e, "conditions")) ||
            !cJSON_AddBoolToObject(cond, "ready", r) ||
            !cJSON_AddBoolToObject(cond, "serving", r) ||
            !cJSON_AddFalseToObject(cond, "terminating") || !(tr = target_ref(pk[i].vm)))
            goto fail;
        cJSON_AddItemToObject(e, "targetRef", tr);
    }
    if (!(ports = endpoint_ports(vmsvc)))
        goto fail;
    cJSON_AddItemToObject(es, "ports", ports);
    return es;
fail:
    cJSON_Delete(es);
    return NULL;
}

vmop_rc ep_compute(const cJSON *vmsvc, const cJSON *const *vms, size_t n_vms,
                   struct ep_desired *ret, struct vmop_err *err)
{
    const cJSON *md = api_jget(vmsvc, "metadata");
    const char *ns = api_jstr(md, "namespace");
    const cJSON *selector = api_jget(api_jget(vmsvc, "spec"), "selector");
    struct ep_desired d = {0};
    struct picked *pk = NULL;
    size_t n = 0;
    vmop_rc rc = VMOP_OK;

    if (!ret)
        return vmop_fail(err, VMOP_E_INVALID, "ep_compute: no output");
    memset(ret, 0, sizeof(*ret));
    if (!api_jstr(md, "name") || !ns || !api_jstr(md, "uid"))
        return vmop_fail(err, VMOP_E_INVALID,
                         "VirtualMachineService without metadata.name, namespace or uid");
    if (n_vms && !(pk = calloc(n_vms, sizeof(*pk))))
        return vmop_fail(err, VMOP_E_NOMEM, "ep_compute: out of memory");
    for (size_t i = 0; i < n_vms; i++) {
        const cJSON *vmd = api_jget(vms[i], "metadata");
        enum ep_vm_class cls;
        if (!str_eq(api_jstr(vmd, "namespace"), ns) ||
            !ep_selector_matches(selector, api_jget(vmd, "labels")))
            continue;
        if ((cls = ep_vm_classify(vms[i])) == EP_VM_SKIP)
            continue;
        if (n >= EP_MAX_VMS) {
            rc = vmop_fail(err, VMOP_E_TOOBIG, "VirtualMachineService %s/%s selects over %d VMs",
                           ns, api_jstr(md, "name"), EP_MAX_VMS);
            goto out;
        }
        pk[n].vm = vms[i];
        pk[n].name = api_jstr(vmd, "name");
        pk[n].cls = cls;
        if (cls == EP_VM_READY)
            d.n_ready++;
        else
            d.n_not_ready++;
        n++;
    }
    if (n > 1)
        qsort(pk, n, sizeof(*pk), cmp_picked);
    if (!(d.service = build_service(vmsvc)))
        goto nomem;
    if (!str_eq(api_jstr(api_jget(vmsvc, "spec"), "type"), "ExternalName")) {
        if (!(d.endpoints = build_endpoints(vmsvc, pk, n)) ||
            !(d.slice = build_slice(vmsvc, pk, n)))
            goto nomem;
    }
    *ret = d;
    memset(&d, 0, sizeof(d));
    goto out;
nomem:
    rc = vmop_fail(err, VMOP_E_NOMEM, "ep_compute: out of memory");
out:
    ep_desired_free(&d);
    free(pk);
    return rc;
}

/* ---- comparing ---- */

/* Every string member of want is in have with the same value. */
static int map_subset(const cJSON *want, const cJSON *have)
{
    const cJSON *w;
    cJSON_ArrayForEach(w, want)
    {
        const char *h = api_jstr(have, w->string);
        if (cJSON_IsString(w) && (!h || strcmp(h, w->valuestring) != 0))
            return 0;
    }
    return 1;
}

static const cJSON *controller_ref(const cJSON *desired)
{
    return cJSON_GetArrayItem(api_jget(api_jget(desired, "metadata"), "ownerReferences"), 0);
}

static int has_owner(const cJSON *actual, const char *uid)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, api_jget(api_jget(actual, "metadata"), "ownerReferences"))
    {
        if (str_eq(api_jstr(r, "uid"), uid))
            return 1;
    }
    return 0;
}

static int meta_differs(const cJSON *desired, const cJSON *actual)
{
    const cJSON *dm = api_jget(desired, "metadata"), *am = api_jget(actual, "metadata");
    return !map_subset(api_jget(dm, "labels"), api_jget(am, "labels")) ||
           !map_subset(api_jget(dm, "annotations"), api_jget(am, "annotations")) ||
           !has_owner(actual, api_jstr(controller_ref(desired), "uid"));
}

/* Equal JSON, where an absent member equals an empty array. */
static int arr_eq(const cJSON *a, const cJSON *b)
{
    int na = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    int nb = cJSON_IsArray(b) ? cJSON_GetArraySize(b) : 0;
    if (na == 0 && nb == 0)
        return 1;
    return cJSON_Compare(a, b, 1);
}

static int port_eq(const cJSON *d, const cJSON *a)
{
    const cJSON *dt = api_jget(d, "targetPort"), *at = api_jget(a, "targetPort");
    return str_eq(api_jstr(d, "name"), api_jstr(a, "name")) &&
           str_eq(api_jstr(d, "protocol"),
                  api_jstr(a, "protocol") ? api_jstr(a, "protocol") : "TCP") &&
           num_or(d, "port", -1) == num_or(a, "port", -2) && cJSON_IsNumber(at) &&
           cJSON_IsNumber(dt) && dt->valuedouble == at->valuedouble;
}

int ep_service_differs(const cJSON *desired, const cJSON *actual)
{
    const cJSON *ds = api_jget(desired, "spec"), *as = api_jget(actual, "spec");
    const cJSON *dp = api_jget(ds, "ports"), *ap = api_jget(as, "ports"), *d;
    const cJSON *dalloc = api_jget(ds, "allocateLoadBalancerNodePorts");
    int i = 0;
    if (meta_differs(desired, actual))
        return 1;
    if (!str_eq(api_jstr(ds, "type"), api_jstr(as, "type") ? api_jstr(as, "type") : "ClusterIP"))
        return 1;
    if (api_jget(as, "selector") && cJSON_GetArraySize(api_jget(as, "selector")) > 0)
        return 1;
    if (cJSON_GetArraySize(dp) != cJSON_GetArraySize(ap))
        return 1;
    cJSON_ArrayForEach(d, dp)
    {
        if (!port_eq(d, cJSON_GetArrayItem(ap, i++)))
            return 1;
    }
    if (dalloc && !cJSON_Compare(dalloc, api_jget(as, "allocateLoadBalancerNodePorts"), 1))
        return 1;
    if (!str_eq(api_jstr(ds, "loadBalancerIP"), api_jstr(as, "loadBalancerIP")) ||
        !str_eq(api_jstr(ds, "externalName"), api_jstr(as, "externalName")))
        return 1;
    if (!arr_eq(api_jget(ds, "loadBalancerSourceRanges"), api_jget(as, "loadBalancerSourceRanges")))
        return 1;
    return 0;
}

int ep_endpoints_differs(const cJSON *desired, const cJSON *actual)
{
    return meta_differs(desired, actual) ||
           !arr_eq(api_jget(desired, "subsets"), api_jget(actual, "subsets"));
}

int ep_slice_differs(const cJSON *desired, const cJSON *actual)
{
    return meta_differs(desired, actual) ||
           !str_eq(api_jstr(desired, "addressType"), api_jstr(actual, "addressType")) ||
           !arr_eq(api_jget(desired, "endpoints"), api_jget(actual, "endpoints")) ||
           !arr_eq(api_jget(desired, "ports"), api_jget(actual, "ports"));
}

/* ---- merging ---- */

/* Replaces (or adds) member k of o with a deep copy of v; removes it when v is NULL. */
static int put_copy(cJSON *o, const char *k, const cJSON *v)
{
    cJSON *c;
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    if (!v)
        return 0;
    if (!(c = cJSON_Duplicate(v, 1)))
        return -1;
    cJSON_AddItemToObject(o, k, c);
    return 0;
}

static cJSON *obj_member(cJSON *o, const char *k)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsObject(v))
        return v;
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    return cJSON_AddObjectToObject(o, k);
}

static int merge_map(cJSON *dst_parent, const char *k, const cJSON *want)
{
    const cJSON *w;
    cJSON *dst;
    if (!cJSON_IsObject(want) || !want->child)
        return 0;
    if (!(dst = obj_member(dst_parent, k)))
        return -1;
    cJSON_ArrayForEach(w, want)
    {
        if (put_copy(dst, w->string, w))
            return -1;
    }
    return 0;
}

static int merge_meta(cJSON *out, const cJSON *desired)
{
    const cJSON *dm = api_jget(desired, "metadata"), *ref = controller_ref(desired);
    cJSON *md = obj_member(out, "metadata"), *refs, *c;
    if (!md || merge_map(md, "labels", api_jget(dm, "labels")) ||
        merge_map(md, "annotations", api_jget(dm, "annotations")))
        return -1;
    if (!ref || has_owner(out, api_jstr(ref, "uid")))
        return 0;
    refs = cJSON_GetObjectItemCaseSensitive(md, "ownerReferences");
    if (!cJSON_IsArray(refs)) {
        cJSON_DeleteItemFromObjectCaseSensitive(md, "ownerReferences");
        if (!(refs = cJSON_AddArrayToObject(md, "ownerReferences")))
            return -1;
    }
    if (!(c = cJSON_Duplicate(ref, 1)))
        return -1;
    cJSON_AddItemToArray(refs, c);
    return 0;
}

/* Desired ports, each keeping the nodePort the server allocated to the same-named port. */
static int merge_ports(cJSON *as, const cJSON *ds)
{
    const cJSON *old = api_jget(as, "ports"), *d;
    cJSON *ports = cJSON_CreateArray();
    if (!ports)
        return -1;
    cJSON_ArrayForEach(d, api_jget(ds, "ports"))
    {
        const cJSON *o, *np;
        cJSON *c = cJSON_Duplicate(d, 1);
        if (!c)
            goto fail;
        cJSON_AddItemToArray(ports, c);
        cJSON_ArrayForEach(o, old)
        {
            if (!str_eq(api_jstr(o, "name"), api_jstr(d, "name")))
                continue;
            np = api_jget(o, "nodePort");
            if (cJSON_IsNumber(np) && !cJSON_AddNumberToObject(c, "nodePort", np->valuedouble))
                goto fail;
            break;
        }
    }
    cJSON_DeleteItemFromObjectCaseSensitive(as, "ports");
    cJSON_AddItemToObject(as, "ports", ports);
    return 0;
fail:
    cJSON_Delete(ports);
    return -1;
}

vmop_rc ep_merge_for_update(const cJSON *desired, const cJSON *actual, cJSON **ret_obj,
                            struct vmop_err *err)
{
    const char *kind = api_jstr(desired, "kind");
    cJSON *out = cJSON_Duplicate(actual, 1);
    if (!out || merge_meta(out, desired))
        goto nomem;
    if (str_eq(kind, "Service")) {
        const cJSON *ds = api_jget(desired, "spec");
        cJSON *as = obj_member(out, "spec");
        if (!as || put_copy(as, "type", api_jget(ds, "type")) || merge_ports(as, ds) ||
            put_copy(as, "allocateLoadBalancerNodePorts",
                     api_jget(ds, "allocateLoadBalancerNodePorts")) ||
            put_copy(as, "loadBalancerIP", api_jget(ds, "loadBalancerIP")) ||
            put_copy(as, "loadBalancerSourceRanges", api_jget(ds, "loadBalancerSourceRanges")) ||
            put_copy(as, "externalName", api_jget(ds, "externalName")) ||
            put_copy(as, "selector", NULL))
            goto nomem;
        if (api_jget(ds, "clusterIP") && !api_jget(as, "clusterIP") &&
            put_copy(as, "clusterIP", api_jget(ds, "clusterIP")))
            goto nomem;
    } else if (str_eq(kind, "Endpoints")) {
        if (put_copy(out, "subsets", api_jget(desired, "subsets")))
            goto nomem;
    } else if (str_eq(kind, "EndpointSlice")) {
        if (put_copy(out, "addressType", api_jget(desired, "addressType")) ||
            put_copy(out, "endpoints", api_jget(desired, "endpoints")) ||
            put_copy(out, "ports", api_jget(desired, "ports")))
            goto nomem;
    } else {
        cJSON_Delete(out);
        return vmop_fail(err, VMOP_E_INVALID, "ep_merge_for_update: unexpected kind '%s'",
                         kind ? kind : "");
    }
    *ret_obj = out;
    return VMOP_OK;
nomem:
    cJSON_Delete(out);
    return vmop_fail(err, VMOP_E_NOMEM, "ep_merge_for_update: out of memory");
}
