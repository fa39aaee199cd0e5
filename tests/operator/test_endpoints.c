/* test_endpoints.c: unit tests of operator/service/endpoints.c (VirtualMachineService -> Service,
 * Endpoints, EndpointSlice): selection, ready/not-ready rules, LoadBalancer fields, ownership,
 * deterministic output, relabeling, and the differs/merge decisions. Suite: unit. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "endpoints.h"

static cJSON *vmsvc(const char *type)
{
    char buf[2048];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":"
             "\"VirtualMachineService\",\"metadata\":{\"name\":\"web\",\"namespace\":\"ns1\","
             "\"uid\":\"svc-uid-1\",\"labels\":{\"team\":\"a\"},\"annotations\":{\"note\":\"x\","
             "\"kubectl.kubernetes.io/last-applied-configuration\":\"{}\"}},\"spec\":{\"type\":"
             "\"%s\",\"selector\":{\"app\":\"web\"},\"ports\":[{\"name\":\"http\",\"protocol\":"
             "\"TCP\",\"port\":80,\"targetPort\":8080}],\"loadBalancerIP\":\"10.0.0.9\","
             "\"loadBalancerSourceRanges\":[\"10.0.0.0/8\"]}}",
             type);
    cJSON *o = cJSON_Parse(buf);
    ck_assert_ptr_nonnull(o);
    return o;
}

/* power: "PoweredOn"...; ready: -1 no probe, 0 probe + Ready False, 1 probe + Ready True */
static cJSON *vm(const char *name, const char *ns, const char *app, const char *power,
                 const char *ip, int ready, int deleting)
{
    char buf[2048];
    snprintf(
        buf, sizeof(buf),
        "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachine\","
        "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"uid-%s\",\"labels\":{"
        "\"app\":\"%s\"}%s},\"spec\":{%s},\"status\":{\"powerState\":\"%s\",\"network\":{%s%s%s},"
        "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]}}",
        name, ns, name, app, deleting ? ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" : "",
        ready >= 0 ? "\"readinessProbe\":{\"tcpSocket\":{\"port\":22}}" : "", power,
        ip ? "\"primaryIP4\":\"" : "", ip ? ip : "", ip ? "\"" : "", ready == 1 ? "True" : "False");
    cJSON *o = cJSON_Parse(buf);
    ck_assert_ptr_nonnull(o);
    return o;
}

static const cJSON *path(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    return b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
}

static const char *pstr(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = path(o, a, b);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

static void compute(const cJSON *s, cJSON **vms, size_t n, struct ep_desired *d)
{
    struct vmop_err err = {0};
    ck_assert_msg(ep_compute(s, (const cJSON *const *)vms, n, d, &err) == VMOP_OK, "%s", err.msg);
}

static void free_all(cJSON **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(v[i]);
}

/* addresses / notReadyAddresses of the only subset: names joined with ',' */
static void names(const cJSON *ep, const char *which, char *out, size_t n)
{
    const cJSON *a;
    out[0] = 0;
    cJSON_ArrayForEach(a, path(cJSON_GetArrayItem(path(ep, "subsets", NULL), 0), which, NULL))
    {
        if (out[0])
            strncat(out, ",", n - strlen(out) - 1);
        strncat(out, pstr(a, "targetRef", "name"), n - strlen(out) - 1);
    }
}

START_TEST(selector_rules)
{
    cJSON *sel = cJSON_Parse("{\"app\":\"web\",\"tier\":\"1\"}");
    cJSON *l1 = cJSON_Parse("{\"app\":\"web\",\"tier\":\"1\",\"x\":\"y\"}");
    cJSON *l2 = cJSON_Parse("{\"app\":\"web\"}");
    cJSON *empty = cJSON_Parse("{}");
    ck_assert_int_eq(ep_selector_matches(sel, l1), 1);
    ck_assert_int_eq(ep_selector_matches(sel, l2), 0);
    ck_assert_int_eq(ep_selector_matches(sel, NULL), 0);
    ck_assert_int_eq(ep_selector_matches(empty, l1), 0); /* empty selects nothing */
    ck_assert_int_eq(ep_selector_matches(NULL, l1), 0);
    cJSON_Delete(sel);
    cJSON_Delete(l1);
    cJSON_Delete(l2);
    cJSON_Delete(empty);
}
END_TEST

START_TEST(classify_rules)
{
    cJSON *v[] = {
        vm("a", "ns1", "web", "PoweredOn", "10.1.0.1", -1, 0),  /* ready: no probe */
        vm("b", "ns1", "web", "PoweredOff", "10.1.0.2", -1, 0), /* not ready: off */
        vm("c", "ns1", "web", "Suspended", "10.1.0.3", 1, 0),   /* not ready: suspended */
        vm("d", "ns1", "web", "PoweredOn", "10.1.0.4", 0, 0),   /* not ready: probe False */
        vm("e", "ns1", "web", "PoweredOn", "10.1.0.5", 1, 0),   /* ready: probe True */
        vm("f", "ns1", "web", "PoweredOn", NULL, -1, 0),        /* skip: no IP */
        vm("g", "ns1", "web", "PoweredOn", "10.1.0.7", -1, 1),  /* skip: deleting */
    };
    enum ep_vm_class want[] = {EP_VM_READY, EP_VM_NOT_READY, EP_VM_NOT_READY, EP_VM_NOT_READY,
                               EP_VM_READY, EP_VM_SKIP,      EP_VM_SKIP};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        ck_assert_msg(ep_vm_classify(v[i]) == want[i], "vm %zu", i);
    ck_assert_int_eq(ep_vm_has_probe(v[0]), 0);
    ck_assert_int_eq(ep_vm_has_probe(v[3]), 1);
    free_all(v, sizeof(v) / sizeof(v[0]));
}
END_TEST

START_TEST(selection_and_readiness)
{
    cJSON *s = vmsvc("ClusterIP");
    cJSON *v[] = {
        vm("vm-c", "ns1", "web", "PoweredOn", "10.1.0.3", -1, 0),
        vm("vm-a", "ns1", "web", "PoweredOn", "10.1.0.1", -1, 0),
        vm("vm-b", "ns1", "web", "PoweredOff", "10.1.0.2", -1, 0),
        vm("vm-d", "ns1", "db", "PoweredOn", "10.1.0.4", -1, 0),  /* other label */
        vm("vm-e", "ns2", "web", "PoweredOn", "10.1.0.5", -1, 0), /* other namespace */
        vm("vm-f", "ns1", "web", "PoweredOn", "10.1.0.6", 0, 0),  /* probe not passing */
        vm("vm-g", "ns1", "web", "PoweredOn", NULL, -1, 0),       /* no IP: left out */
    };
    struct ep_desired d = {0};
    char buf[256];
    compute(s, v, 7, &d);
    ck_assert_uint_eq(d.n_ready, 2);
    ck_assert_uint_eq(d.n_not_ready, 2);
    names(d.endpoints, "addresses", buf, sizeof(buf));
    ck_assert_str_eq(buf, "vm-a,vm-c");
    names(d.endpoints, "notReadyAddresses", buf, sizeof(buf));
    ck_assert_str_eq(buf, "vm-b,vm-f");
    const cJSON *sub = cJSON_GetArrayItem(path(d.endpoints, "subsets", NULL), 0);
    const cJSON *a0 = cJSON_GetArrayItem(path(sub, "addresses", NULL), 0);
    ck_assert_str_eq(pstr(a0, "ip", NULL), "10.1.0.1");
    ck_assert_str_eq(pstr(a0, "targetRef", "kind"), "VirtualMachine");
    ck_assert_str_eq(pstr(a0, "targetRef", "namespace"), "ns1");
    ck_assert_str_eq(pstr(a0, "targetRef", "uid"), "uid-vm-a");
    const cJSON *p0 = cJSON_GetArrayItem(path(sub, "ports", NULL), 0);
    ck_assert_int_eq(path(p0, "port", NULL)->valueint, 8080);
    ck_assert_str_eq(pstr(p0, "name", NULL), "http");
    /* vmop writes the slice itself: the mirroring controller must leave these Endpoints alone */
    ck_assert_str_eq(pstr(path(d.endpoints, "metadata", "labels"), EP_LABEL_SKIP_MIRROR, NULL),
                     "true");

    /* the slice lists the same four, with conditions */
    const cJSON *eps = path(d.slice, "endpoints", NULL);
    ck_assert_int_eq(cJSON_GetArraySize(eps), 4);
    ck_assert_str_eq(pstr(d.slice, "addressType", NULL), "IPv4");
    ck_assert_str_eq(pstr(path(d.slice, "metadata", "labels"), EP_LABEL_SVC_NAME, NULL), "web");
    ck_assert_str_eq(pstr(path(d.slice, "metadata", "labels"), EP_LABEL_MANAGED_BY, NULL),
                     EP_MANAGED_BY);
    const cJSON *e1 = cJSON_GetArrayItem(eps, 1); /* vm-b, powered off */
    ck_assert_str_eq(pstr(e1, "targetRef", "name"), "vm-b");
    ck_assert(cJSON_IsFalse(path(e1, "conditions", "ready")));
    ck_assert(cJSON_IsFalse(path(e1, "conditions", "serving")));
    ck_assert(cJSON_IsFalse(path(e1, "conditions", "terminating")));
    ck_assert(cJSON_IsTrue(path(cJSON_GetArrayItem(eps, 0), "conditions", "ready")));
    ck_assert_int_eq(
        path(cJSON_GetArrayItem(path(d.slice, "ports", NULL), 0), "port", NULL)->valueint, 8080);
    ep_desired_free(&d);
    free_all(v, 7);
    cJSON_Delete(s);
}
END_TEST

START_TEST(service_fields_and_ownership)
{
    cJSON *s = vmsvc("LoadBalancer");
    struct ep_desired d = {0};
    compute(s, NULL, 0, &d);
    const cJSON *svc = d.service, *sp = path(svc, "spec", NULL);
    ck_assert_str_eq(pstr(svc, "kind", NULL), "Service");
    ck_assert_str_eq(pstr(svc, "metadata", "name"), "web");
    ck_assert_str_eq(pstr(svc, "metadata", "namespace"), "ns1");
    ck_assert_ptr_null(path(sp, "selector", NULL)); /* selectorless */
    ck_assert_str_eq(pstr(sp, "type", NULL), "LoadBalancer");
    ck_assert(cJSON_IsFalse(path(sp, "allocateLoadBalancerNodePorts", NULL)));
    ck_assert_str_eq(pstr(sp, "loadBalancerIP", NULL), "10.0.0.9");
    ck_assert_str_eq(cJSON_GetArrayItem(path(sp, "loadBalancerSourceRanges", NULL), 0)->valuestring,
                     "10.0.0.0/8");
    const cJSON *p = cJSON_GetArrayItem(path(sp, "ports", NULL), 0);
    ck_assert(cJSON_IsNumber(path(p, "targetPort", NULL)));
    ck_assert_int_eq(path(p, "targetPort", NULL)->valueint, 8080);
    ck_assert_int_eq(path(p, "port", NULL)->valueint, 80);
    ck_assert_str_eq(pstr(path(svc, "metadata", "labels"), "team", NULL), "a");
    ck_assert_str_eq(pstr(path(svc, "metadata", "annotations"), "note", NULL), "x");
    ck_assert_ptr_null(path(path(svc, "metadata", "annotations"),
                            "kubectl.kubernetes.io/last-applied-configuration", NULL));
    const cJSON *objs[] = {d.service, d.endpoints, d.slice};
    for (int i = 0; i < 3; i++) {
        const cJSON *r = cJSON_GetArrayItem(path(objs[i], "metadata", "ownerReferences"), 0);
        ck_assert_str_eq(pstr(r, "kind", NULL), "VirtualMachineService");
        ck_assert_str_eq(pstr(r, "uid", NULL), "svc-uid-1");
        ck_assert_str_eq(pstr(r, "name", NULL), "web");
        ck_assert(cJSON_IsTrue(path(r, "controller", NULL)));
    }
    /* no VMs: no subset at all (a subset needs an address) */
    ck_assert_int_eq(cJSON_GetArraySize(path(d.endpoints, "subsets", NULL)), 0);
    ep_desired_free(&d);
    cJSON_Delete(s);

    /* ClusterIP: no LB fields; clusterIp copied as clusterIP */
    s = vmsvc("ClusterIP");
    cJSON_AddStringToObject(cJSON_GetObjectItem(s, "spec"), "clusterIp", "10.96.0.42");
    compute(s, NULL, 0, &d);
    ck_assert_ptr_null(path(path(d.service, "spec", NULL), "allocateLoadBalancerNodePorts", NULL));
    ck_assert_ptr_null(path(path(d.service, "spec", NULL), "loadBalancerIP", NULL));
    ck_assert_str_eq(pstr(path(d.service, "spec", NULL), "clusterIP", NULL), "10.96.0.42");
    ep_desired_free(&d);
    cJSON_Delete(s);

    /* ExternalName: a Service only */
    s = vmsvc("ExternalName");
    cJSON_AddStringToObject(cJSON_GetObjectItem(s, "spec"), "externalName", "db.example.com");
    compute(s, NULL, 0, &d);
    ck_assert_str_eq(pstr(path(d.service, "spec", NULL), "externalName", NULL), "db.example.com");
    ck_assert_ptr_null(d.endpoints);
    ck_assert_ptr_null(d.slice);
    ep_desired_free(&d);
    cJSON_Delete(s);

    /* a service without uid is refused */
    struct vmop_err err = {0};
    s = cJSON_Parse("{\"metadata\":{\"name\":\"x\",\"namespace\":\"n\"}}");
    ck_assert_int_eq(ep_compute(s, NULL, 0, &d, &err), VMOP_E_INVALID);
    ck_assert_ptr_null(d.service);
    cJSON_Delete(s);
}
END_TEST

START_TEST(deterministic_output)
{
    cJSON *s = vmsvc("ClusterIP");
    cJSON *v1[] = {vm("z", "ns1", "web", "PoweredOn", "10.0.0.26", -1, 0),
                   vm("m", "ns1", "web", "PoweredOff", "10.0.0.13", -1, 0),
                   vm("a", "ns1", "web", "PoweredOn", "10.0.0.1", -1, 0)};
    cJSON *v2[] = {v1[2], v1[0], v1[1]};
    struct ep_desired d1 = {0}, d2 = {0};
    compute(s, v1, 3, &d1);
    compute(s, v2, 3, &d2);
    char *t[6] = {cJSON_PrintUnformatted(d1.service),   cJSON_PrintUnformatted(d2.service),
                  cJSON_PrintUnformatted(d1.endpoints), cJSON_PrintUnformatted(d2.endpoints),
                  cJSON_PrintUnformatted(d1.slice),     cJSON_PrintUnformatted(d2.slice)};
    for (int i = 0; i < 6; i += 2)
        ck_assert_str_eq(t[i], t[i + 1]);
    /* an unchanged stored object needs no write */
    ck_assert_int_eq(ep_service_differs(d1.service, d2.service), 0);
    ck_assert_int_eq(ep_endpoints_differs(d1.endpoints, d2.endpoints), 0);
    ck_assert_int_eq(ep_slice_differs(d1.slice, d2.slice), 0);
    for (int i = 0; i < 6; i++)
        free(t[i]);
    ep_desired_free(&d1);
    ep_desired_free(&d2);
    free_all(v1, 3);
    cJSON_Delete(s);
}
END_TEST

START_TEST(relabel_leaves_selection)
{
    cJSON *s = vmsvc("ClusterIP");
    cJSON *v[] = {vm("a", "ns1", "web", "PoweredOn", "10.0.0.1", -1, 0),
                  vm("b", "ns1", "web", "PoweredOn", "10.0.0.2", -1, 0)};
    struct ep_desired before = {0}, after = {0};
    char buf[64];
    compute(s, v, 2, &before);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(cJSON_GetObjectItem(v[1], "metadata"), "labels"),
                              "app", cJSON_CreateString("other"));
    compute(s, v, 2, &after);
    names(after.endpoints, "addresses", buf, sizeof(buf));
    ck_assert_str_eq(buf, "a");
    ck_assert_int_eq(cJSON_GetArraySize(path(after.slice, "endpoints", NULL)), 1);
    /* the stored (before) objects must now be rewritten, the Service need not */
    ck_assert_int_eq(ep_endpoints_differs(after.endpoints, before.endpoints), 1);
    ck_assert_int_eq(ep_slice_differs(after.slice, before.slice), 1);
    ck_assert_int_eq(ep_service_differs(after.service, before.service), 0);
    ep_desired_free(&before);
    ep_desired_free(&after);
    free_all(v, 2);
    cJSON_Delete(s);
}
END_TEST

START_TEST(differs_ignores_server_fields_and_merge_keeps_them)
{
    cJSON *s = vmsvc("LoadBalancer");
    struct ep_desired d = {0};
    struct vmop_err err = {0};
    compute(s, NULL, 0, &d);
    /* what the API server returns: defaults, nodePort, extra labels, resourceVersion, status */
    cJSON *actual = cJSON_Duplicate(d.service, 1);
    cJSON *md = cJSON_GetObjectItem(actual, "metadata"), *sp = cJSON_GetObjectItem(actual, "spec");
    cJSON_AddStringToObject(md, "resourceVersion", "42");
    cJSON_AddStringToObject(cJSON_GetObjectItem(md, "labels"), "extra", "1");
    cJSON_AddStringToObject(sp, "clusterIP", "10.96.1.1");
    cJSON_AddStringToObject(sp, "sessionAffinity", "None");
    cJSON_AddNumberToObject(cJSON_GetArrayItem(cJSON_GetObjectItem(sp, "ports"), 0), "nodePort",
                            31000);
    ck_assert_int_eq(ep_service_differs(d.service, actual), 0);

    /* a changed port must be written; the merge keeps nodePort, clusterIP and resourceVersion */
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(sp, "ports"), 0), "targetPort",
                              cJSON_CreateNumber(9999));
    ck_assert_int_eq(ep_service_differs(d.service, actual), 1);
    cJSON *m = NULL;
    ck_assert_int_eq(ep_merge_for_update(d.service, actual, &m, &err), VMOP_OK);
    ck_assert_int_eq(ep_service_differs(d.service, m), 0);
    const cJSON *mp = cJSON_GetArrayItem(path(m, "spec", "ports"), 0);
    ck_assert_int_eq(path(mp, "nodePort", NULL)->valueint, 31000);
    ck_assert_int_eq(path(mp, "targetPort", NULL)->valueint, 8080);
    ck_assert_str_eq(pstr(m, "spec", "clusterIP"), "10.96.1.1");
    ck_assert_str_eq(pstr(m, "metadata", "resourceVersion"), "42");
    ck_assert_str_eq(pstr(path(m, "metadata", "labels"), "extra", NULL), "1");
    cJSON_Delete(m);

    /* a Service someone gave a selector, or lost our ownerReference, is rewritten */
    cJSON *a2 = cJSON_Duplicate(d.service, 1);
    cJSON_AddItemToObject(cJSON_GetObjectItem(a2, "spec"), "selector",
                          cJSON_Parse("{\"app\":\"web\"}"));
    ck_assert_int_eq(ep_service_differs(d.service, a2), 1);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(a2, "spec"), "selector");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(a2, "metadata"), "ownerReferences");
    ck_assert_int_eq(ep_service_differs(d.service, a2), 1);
    ck_assert_int_eq(ep_merge_for_update(d.service, a2, &m, &err), VMOP_OK);
    ck_assert_int_eq(ep_service_differs(d.service, m), 0);
    cJSON_Delete(m);
    cJSON_Delete(a2);

    /* Endpoints: an absent subsets equals an empty one; merge replaces subsets */
    cJSON *ea = cJSON_Duplicate(d.endpoints, 1);
    cJSON_DeleteItemFromObject(ea, "subsets");
    ck_assert_int_eq(ep_endpoints_differs(d.endpoints, ea), 0);
    cJSON_AddItemToObject(ea, "subsets", cJSON_Parse("[{\"addresses\":[{\"ip\":\"1.2.3.4\"}]}]"));
    ck_assert_int_eq(ep_endpoints_differs(d.endpoints, ea), 1);
    ck_assert_int_eq(ep_merge_for_update(d.endpoints, ea, &m, &err), VMOP_OK);
    ck_assert_int_eq(ep_endpoints_differs(d.endpoints, m), 0);
    cJSON_Delete(m);
    cJSON_Delete(ea);

    ck_assert_int_eq(ep_merge_for_update(s, actual, &m, &err), VMOP_E_INVALID);
    cJSON_Delete(actual);
    ep_desired_free(&d);
    cJSON_Delete(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("endpoints");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, selector_rules);
    tcase_add_test(tc, classify_rules);
    tcase_add_test(tc, selection_and_readiness);
    tcase_add_test(tc, service_fields_and_ownership);
    tcase_add_test(tc, deterministic_output);
    tcase_add_test(tc, relabel_leaves_selection);
    tcase_add_test(tc, differs_ignores_server_fields_and_merge_keeps_them);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
