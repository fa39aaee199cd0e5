/* test_vmservice_int.c: the VirtualMachineService controller (operator/service/vmservice.c) against
 * a real kube-apiserver + etcd + kube-controller-manager (tests/cluster harness) with the project's
 * CRDs (manifests/crd, applied with the pinned kubectl and waited for until Established). VMs get
 * their status written directly through the status subresource (no VM controller). Covers: a
 * LoadBalancer service over three VMs plus a probe VM -> Service, Endpoints, EndpointSlice and
 * finalizer; LB ingress copied back; power off -> not ready; relabel
 * -> out of the selection; probe VM Ready False -> not ready, True -> ready; no writes when nothing
 * changed; delete -> the three objects are garbage collected (kube-controller-manager's garbage
 * collector); the same with a VM informer shared with another owner (opts.vm_informer: refused
 * without an "ns" index, VM events reach vmservice, vmsvc_stop/free leave it to its owner). The
 * cluster runs kube-controller-manager's EndpointSlice mirroring controller too:
 * the only EndpointSlice for the service must stay the one vmop writes. One cluster for the
 * program (main()), the test works in its own namespace. Suite: integration. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "cluster_harness.h"
#include "endpoints.h"
#include "kube_client.h"
#include "kube_util.h"
#include "vmservice.h"
#include "wait.h"

#define NS "vmsvc-it"
/* The real garbage collector learns about a new CRD's resource when it next syncs with discovery
 * (every 30 s in kube-controller-manager) and looks for an owner it has not observed with backoff:
 * dependents of a just-created CRD's objects can take that long to go. */
#define GC_WAIT_MS 90000

static struct cluster *cl;
static struct kube_client *kc;

static cJSON *parse(const char *s)
{
    cJSON *o = cJSON_Parse(s);
    ck_assert_msg(o != NULL, "bad JSON in test: %s", s);
    return o;
}

static int list_ok(const struct kube_resource *r)
{
    cJSON *l = NULL;
    struct vmop_err err = {0};
    vmop_rc rc = kube_list(kc, r, NS, NULL, &l, &err);
    cJSON_Delete(l);
    return rc == VMOP_OK;
}

static void create(const struct kube_resource *r, const char *json)
{
    struct vmop_err err = {0};
    cJSON *o = parse(json);
    ck_assert_msg(kube_create(kc, r, NS, o, NULL, NULL, &err) == VMOP_OK, "create: %s", err.msg);
    cJSON_Delete(o);
}

static void patch(const struct kube_resource *r, const char *name, const char *json, int status)
{
    struct vmop_err err = {0};
    cJSON *p = parse(json);
    vmop_rc rc = status ? kube_patch_status(kc, r, NS, name, KUBE_PATCH_MERGE, p, NULL, NULL, &err)
                        : kube_patch(kc, r, NS, name, KUBE_PATCH_MERGE, p, NULL, NULL, &err);
    ck_assert_msg(rc == VMOP_OK, "patch %s: %s", name, err.msg);
    cJSON_Delete(p);
}

static void make_vm(const char *name, const char *ip, int probe)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha6\",\"kind\":\"VirtualMachine\","
             "\"metadata\":{\"name\":\"%s\",\"labels\":{\"app\":\"web\"}},\"spec\":{"
             "\"className\":\"small\",\"imageName\":\"vmi-0123456789abcdef0\","
             "\"powerState\":\"PoweredOn\"%s}}",
             name, probe ? ",\"readinessProbe\":{\"tcpSocket\":{\"port\":22}}" : "");
    create(&vmsvc_res_vms, buf);
    snprintf(buf, sizeof(buf),
             "{\"status\":{\"powerState\":\"PoweredOn\",\"network\":{\"primaryIP4\":\"%s\"}}}", ip);
    patch(&vmsvc_res_vms, name, buf, 1);
}

static void set_ready(const char *name, int ready)
{
    char buf[512];
    snprintf(buf, sizeof(buf),
             "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\",\"reason\":"
             "\"%s\",\"message\":\"\",\"lastTransitionTime\":\"2026-11-29T00:00:0%dZ\"}]}}",
             ready ? "True" : "False", ready ? "Ready" : "NotReady", ready);
    patch(&vmsvc_res_vms, name, buf, 1);
}

/* "ready=a,b;notready=c" from the stored Endpoints, or "" when absent. */
static void ep_summary(char *out, size_t n)
{
    cJSON *ep = NULL;
    struct vmop_err err = {0};
    out[0] = 0;
    if (kube_get(kc, &vmsvc_res_endpoints, NS, "web", NULL, &ep, &err) != VMOP_OK)
        return;
    const cJSON *sub = cJSON_GetArrayItem(cJSON_GetObjectItem(ep, "subsets"), 0);
    const char *which[] = {"addresses", "notReadyAddresses"};
    for (int w = 0; w < 2; w++) {
        const cJSON *a;
        int first = 1;
        strncat(out, w ? ";notready=" : "ready=", n - strlen(out) - 1);
        cJSON_ArrayForEach(a, cJSON_GetObjectItem(sub, which[w]))
        {
            if (!first)
                strncat(out, ",", n - strlen(out) - 1);
            first = 0;
            strncat(out, kube_json_path_str(a, "targetRef", "name"), n - strlen(out) - 1);
        }
    }
    cJSON_Delete(ep);
}

static int ep_is(const char *want)
{
    char got[256];
    ep_summary(got, sizeof(got));
    return strcmp(got, want) == 0;
}

/* 1 when the stored Endpoints of "web" list VM name (ready or not). */
static int ep_has(const char *name)
{
    char got[256], pat[64];
    ep_summary(got, sizeof(got));
    snprintf(pat, sizeof(pat), "=%s", name);
    if (strstr(got, pat))
        return 1;
    snprintf(pat, sizeof(pat), ",%s", name);
    return strstr(got, pat) != NULL;
}

/* Ready endpoints in the stored EndpointSlice. */
/* 1 once the controller's write count has not moved for 1 s (polled): the writes of the change
 * before have all landed, so what follows is measured alone. *st gets the stats. */
static int writes_settled(struct vmsvc *vs, struct vmsvc_stats *st)
{
    static unsigned long last = (unsigned long)-1;
    static long long since;
    long long now = vmop_test_now_ms();
    vmsvc_get_stats(vs, st);
    if (st->writes != last) {
        last = st->writes;
        since = now;
        return 0;
    }
    return now - since >= 1000;
}

static int slice_ready(void)
{
    cJSON *es = NULL;
    struct vmop_err err = {0};
    const cJSON *e;
    int n = 0;
    if (kube_get(kc, &vmsvc_res_endpointslices, NS, "web", NULL, &es, &err) != VMOP_OK)
        return -1;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(es, "endpoints"))
    {
        n += cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "conditions"), "ready"));
    }
    cJSON_Delete(es);
    return n;
}

static int gone(const struct kube_resource *r, const char *name)
{
    cJSON *o = NULL;
    struct vmop_err err = {0};
    vmop_rc rc = kube_get(kc, r, NS, name, NULL, &o, &err);
    cJSON_Delete(o);
    return rc == VMOP_E_NOT_FOUND;
}

static int ingress_is(const char *ip)
{
    cJSON *o = NULL;
    struct vmop_err err = {0};
    int ok = 0;
    if (kube_get(kc, &vmsvc_res_vmservices, NS, "web", NULL, &o, &err) != VMOP_OK)
        return 0;
    const cJSON *in = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "loadBalancer"),
                            "ingress"),
        0);
    ok = in && kube_json_str(in, "ip") && strcmp(kube_json_str(in, "ip"), ip) == 0;
    cJSON_Delete(o);
    return ok;
}

/* EndpointSlices of service "web" in NS (vmop's and any mirrored one), or -1. */
static int slices_of_web(void)
{
    cJSON *l = NULL;
    struct vmop_err err = {0};
    struct kube_opts lo = {.label_selector = "kubernetes.io/service-name=web"};
    if (kube_list(kc, &vmsvc_res_endpointslices, NS, &lo, &l, &err) != VMOP_OK)
        return -1;
    int n = cJSON_GetArraySize(cJSON_GetObjectItem(l, "items"));
    cJSON_Delete(l);
    return n;
}

static void setup(void)
{
    struct vmop_err err = {0};
    struct kube_config *cfg = NULL;
    ck_assert_msg(kube_config_from_files(cl->kubeconfig, NULL, &cfg, &err) == VMOP_OK, "%s",
                  err.msg);
    free(cfg->namespace);
    cfg->namespace = strdup(NS);
    ck_assert_msg(kube_client_new(cfg, NULL, &kc, &err) == VMOP_OK, "%s", err.msg);
    kube_config_free(cfg);
    WAIT_UNTIL(list_ok(&vmsvc_res_vms) && list_ok(&vmsvc_res_vmservices), 30000);
}

static void teardown(void)
{
    kube_client_free(kc);
    kc = NULL;
}

START_TEST(service_lifecycle)
{
    struct vmop_err err = {0};
    struct vmsvc *vs = NULL;
    struct vmsvc_opts so = {.workers = 2};
    struct vmsvc_stats st0, st1;
    cJSON *o = NULL;

    make_vm("vm-1", "10.20.0.1", 0);
    make_vm("vm-2", "10.20.0.2", 0);
    make_vm("vm-3", "10.20.0.3", 0);
    make_vm("vm-4", "10.20.0.4", 1);
    set_ready("vm-4", 0);
    create(
        &vmsvc_res_vmservices,
        "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha6\",\"kind\":"
        "\"VirtualMachineService\",\"metadata\":{\"name\":\"web\",\"labels\":{\"team\":"
        "\"a\"}},\"spec\":{\"type\":\"LoadBalancer\",\"selector\":{\"app\":\"web\"},"
        "\"ports\":[{\"name\":\"http\",\"protocol\":\"TCP\",\"port\":80,\"targetPort\":8080}]}}");

    ck_assert_msg(vmsvc_new(kc, &so, &vs, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_msg(vmsvc_start(vs, &err) == VMOP_OK, "%s", err.msg);

    WAIT_UNTIL(ep_is("ready=vm-1,vm-2,vm-3;notready=vm-4"), 20000);
    WAIT_UNTIL(slice_ready() == 3, 15000);
    /* kube-controller-manager mirrors selectorless Services' Endpoints into EndpointSlices
     * unless the Endpoints say skip-mirror (checked again, seconds later, before the delete) */
    {
        cJSON *ep = NULL;
        ck_assert_int_eq(kube_get(kc, &vmsvc_res_endpoints, NS, "web", NULL, &ep, &err), VMOP_OK);
        ck_assert_str_eq(
            kube_json_str(cJSON_GetObjectItem(cJSON_GetObjectItem(ep, "metadata"), "labels"),
                          "endpointslice.kubernetes.io/skip-mirror"),
            "true");
        cJSON_Delete(ep);
    }

    /* the Service: selectorless, LB, owned */
    ck_assert_int_eq(kube_get(kc, &vmsvc_res_services, NS, "web", NULL, &o, &err), VMOP_OK);
    const cJSON *sp = cJSON_GetObjectItem(o, "spec");
    ck_assert_ptr_null(cJSON_GetObjectItem(sp, "selector"));
    ck_assert_str_eq(kube_json_str(sp, "type"), "LoadBalancer");
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(sp, "allocateLoadBalancerNodePorts")));
    ck_assert_int_eq(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(sp, "ports"), 0), "targetPort")
            ->valueint,
        8080);
    const cJSON *ref = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "ownerReferences"), 0);
    ck_assert_str_eq(kube_json_str(ref, "kind"), "VirtualMachineService");
    ck_assert_str_eq(
        kube_json_str(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "labels"), "team"),
        "a");
    cJSON_Delete(o);
    o = NULL;

    /* the finalizer */
    ck_assert_int_eq(kube_get(kc, &vmsvc_res_vmservices, NS, "web", NULL, &o, &err), VMOP_OK);
    const cJSON *f = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "finalizers"), 0);
    ck_assert_str_eq(f->valuestring, VMSVC_FINALIZER);
    cJSON_Delete(o);
    o = NULL;

    /* LB ingress from the Service status is copied to the VirtualMachineService */
    patch(&vmsvc_res_services, "web",
          "{\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"192.0.2.10\"}]}}}", 1);
    WAIT_UNTIL(ingress_is("192.0.2.10"), 20000);

    /* power one off: it leaves the ready set */
    patch(&vmsvc_res_vms, "vm-2", "{\"status\":{\"powerState\":\"PoweredOff\"}}", 1);
    WAIT_UNTIL(ep_is("ready=vm-1,vm-3;notready=vm-2,vm-4"), 20000);
    WAIT_UNTIL(slice_ready() == 2, 15000);

    /* relabel one: it leaves the selection */
    patch(&vmsvc_res_vms, "vm-3", "{\"metadata\":{\"labels\":{\"app\":\"other\"}}}", 0);
    WAIT_UNTIL(ep_is("ready=vm-1;notready=vm-2,vm-4"), 20000);

    /* the probe VM becomes Ready: it joins the ready set */
    set_ready("vm-4", 1);
    WAIT_UNTIL(ep_is("ready=vm-1,vm-4;notready=vm-2"), 20000);
    /* and fails again */
    set_ready("vm-4", 0);
    WAIT_UNTIL(ep_is("ready=vm-1;notready=vm-2,vm-4"), 20000);

    /* a change that does not matter: reconciled, nothing written */
    WAIT_UNTIL(slice_ready() == 1, 15000);
    WAIT_UNTIL(writes_settled(vs, &st0), 15000);
    patch(&vmsvc_res_vms, "vm-1", "{\"metadata\":{\"annotations\":{\"touch\":\"1\"}}}", 0);
    WAIT_UNTIL((vmsvc_get_stats(vs, &st1), st1.reconciles > st0.reconciles), 15000);
    ck_assert_uint_eq(st1.writes, st0.writes);

    /* by now the mirroring controller has long seen the Endpoints: still only vmop's slice */
    ck_assert_int_eq(slices_of_web(), 1);

    /* delete the service: the finalizer goes, then Service, Endpoints and EndpointSlice */
    ck_assert_int_eq(kube_delete(kc, &vmsvc_res_vmservices, NS, "web", NULL, NULL, &err), VMOP_OK);
    WAIT_UNTIL(gone(&vmsvc_res_vmservices, "web"), 20000);
    {
        long long t0 = vmop_test_now_ms();
        WAIT_UNTIL(gone(&vmsvc_res_services, "web"), GC_WAIT_MS);
        WAIT_UNTIL(gone(&vmsvc_res_endpoints, "web"), GC_WAIT_MS);
        WAIT_UNTIL(gone(&vmsvc_res_endpointslices, "web"), GC_WAIT_MS);
        fprintf(stderr, "garbage collected in %lld ms\n", vmop_test_now_ms() - t0);
    }

    vmsvc_stop(vs);
    vmsvc_free(vs);
}
END_TEST

/* ---- a VM informer shared with another owner (as operator/vmop.c shares the VM controller's) */

static int owner_updates; /* atomic: the owner's own handler set, registered first */

static void own_upd(void *ud, const struct kube_obj *old, const struct kube_obj *o)
{
    (void)ud;
    (void)old;
    (void)o;
    __atomic_add_fetch(&owner_updates, 1, __ATOMIC_RELAXED);
}

static void idx_ns(const cJSON *obj, void *ud, kube_index_emit_fn emit, void *ctx)
{
    (void)ud;
    if (kube_obj_namespace(obj))
        emit(ctx, kube_obj_namespace(obj));
}

START_TEST(shared_vm_informer)
{
    struct vmop_err err = {0};
    struct vmsvc *vs = NULL;
    struct kube_informer *inf = NULL, *bare = NULL;
    struct kube_informer_opts io = {.resource = &vmsvc_res_vms, .ns = NS, .resync_ms = 300};
    struct kube_informer_handlers own = {NULL, own_upd, NULL, NULL};
    struct vmsvc_opts so = {.workers = 2};

    /* the VMs left by service_lifecycle when run alone: make them; else they are there */
    if (gone(&vmsvc_res_vms, "vm-1")) {
        make_vm("vm-1", "10.20.0.1", 0);
        make_vm("vm-3", "10.20.0.3", 0);
    }
    patch(&vmsvc_res_vms, "vm-3", "{\"metadata\":{\"labels\":{\"app\":\"other\"}}}", 0);

    /* an informer without the "ns" index is refused, and keeps no handlers of ours */
    ck_assert_int_eq(kube_informer_new(kc, &io, &own, &bare, &err), VMOP_OK);
    so.vm_informer = bare;
    ck_assert_int_eq(vmsvc_new(kc, &so, &vs, &err), VMOP_E_INVALID);
    ck_assert_ptr_null(vs);
    kube_informer_free(bare);

    ck_assert_int_eq(kube_informer_new(kc, &io, &own, &inf, &err), VMOP_OK);
    ck_assert_int_eq(kube_informer_add_index(inf, "ns", idx_ns, NULL, &err), VMOP_OK);
    so.vm_informer = inf;
    vmop_err_clear(&err);
    ck_assert_msg(vmsvc_new(kc, &so, &vs, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_msg(kube_informer_start(inf, &err) == VMOP_OK, "%s", err.msg); /* the owner's job */
    ck_assert_msg(vmsvc_start(vs, &err) == VMOP_OK, "%s", err.msg);
    create(&vmsvc_res_vmservices,
           "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha6\",\"kind\":"
           "\"VirtualMachineService\",\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":"
           "\"ClusterIP\",\"selector\":{\"app\":\"web\"},\"ports\":[{\"name\":\"http\","
           "\"protocol\":\"TCP\",\"port\":80,\"targetPort\":8080}]}}");
    WAIT_UNTIL(ep_has("vm-1") && !ep_has("vm-3"), 20000);
    /* a VM event through the shared informer reaches vmservice */
    patch(&vmsvc_res_vms, "vm-3", "{\"metadata\":{\"labels\":{\"app\":\"web\"}}}", 0);
    WAIT_UNTIL(ep_has("vm-3"), 20000);
    /* resyncs (old == new) went to the owner; vmservice's are ignored, nothing breaks */
    WAIT_UNTIL(__atomic_load_n(&owner_updates, __ATOMIC_RELAXED) > 2, 10000);

    ck_assert_int_eq(kube_delete(kc, &vmsvc_res_vmservices, NS, "web", NULL, NULL, &err), VMOP_OK);
    WAIT_UNTIL(gone(&vmsvc_res_vmservices, "web"), 20000); /* the finalizer went */
    /* vmsvc_stop leaves the shared informer running */
    vmsvc_stop(vs);
    int u0 = __atomic_load_n(&owner_updates, __ATOMIC_RELAXED);
    patch(&vmsvc_res_vms, "vm-1", "{\"metadata\":{\"annotations\":{\"shared\":\"1\"}}}", 0);
    WAIT_UNTIL(__atomic_load_n(&owner_updates, __ATOMIC_RELAXED) > u0, 10000);
    /* the owner stops its informer before vmsvc_free; vmsvc_free does not free it */
    kube_informer_stop(inf);
    vmsvc_free(vs);
    ck_assert_int_ge(kube_informer_len(inf), 2);
    kube_informer_free(inf);
}
END_TEST

/* Applies the two CRDs with the pinned kubectl and waits until they are Established. */
static int apply_crds(void)
{
    const char *dir = getenv("VMOP_CRD_DIR");
    char vm[4096], svc[4096];
    struct vmop_err err = {0};
    if (!dir) {
        fprintf(stderr, "VMOP_CRD_DIR not set (meson: the manifests/crd directory)\n");
        return -1;
    }
    snprintf(vm, sizeof(vm), "%s/vmoperator.vmware.com_virtualmachines.yaml", dir);
    snprintf(svc, sizeof(svc), "%s/vmoperator.vmware.com_virtualmachineservices.yaml", dir);
    const char *apply[] = {"apply", "-f", vm, "-f", svc, NULL};
    const char *wait[] = {"wait",
                          "--for=condition=Established",
                          "--timeout=60s",
                          "crd/virtualmachines.vmoperator.vmware.com",
                          "crd/virtualmachineservices.vmoperator.vmware.com",
                          NULL};
    const char *ns[] = {"create", "namespace", NS, NULL};
    vmop_rc rc = cluster_kubectl(cl, apply, 0, &err);
    /* kubectl wait errors out (not waits) on a CRD whose status has no conditions yet: retry */
    for (int i = 0; rc == VMOP_OK && i < 30; i++) {
        vmop_err_clear(&err);
        if ((rc = cluster_kubectl(cl, wait, 90000, &err)) == VMOP_OK)
            break;
        if (i < 29) {
            rc = VMOP_OK;
            vmop_test_sleep_ms(500);
        }
    }
    if (rc != VMOP_OK || cluster_kubectl(cl, ns, 0, &err) != VMOP_OK) {
        fprintf(stderr, "test_vmservice_int: %s\n", err.msg);
        return -1;
    }
    return 0;
}

int main(void)
{
    struct vmop_err err = {0};
    int status = EXIT_FAILURE;
    if (kube_global_init(&err) != VMOP_OK)
        return EXIT_FAILURE;
    cl = cluster_start_or_exit(NULL);
    if (apply_crds() == 0) {
        Suite *s = suite_create("vmservice");
        TCase *tc = tcase_create("integration");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 240);
        tcase_add_test(tc, service_lifecycle);
        tcase_add_test(tc, shared_vm_informer);
        suite_add_tcase(s, tc);
        status = vmop_check_run(s);
    }
    cluster_stop_or_warn(cl);
    kube_global_cleanup();
    return status;
}
