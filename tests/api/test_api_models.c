/* test_api_models.c: VirtualMachineClass (validation, sizing), image resolution,
 * VirtualMachineService and the admin kinds (VCenterEndpoint, NamespaceBinding). */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "api_secret.h"
#include "api_admin.h"
#include "api_class.h"
#include "api_image.h"
#include "api_service.h"

static cJSON *J(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    ck_assert_ptr_nonnull(j);
    return j;
}

START_TEST(class_sizing)
{
    cJSON *j =
        J("{\"metadata\":{\"name\":\"guaranteed-medium\"},\"spec\":{\"hardware\":{\"cpus\":2,"
          "\"memory\":\"8Gi\"},\"policies\":{\"resources\":{\"requests\":{\"cpu\":\"2000m\","
          "\"memory\":\"8Gi\"}}}}}");
    struct api_class *c = NULL;
    struct api_class_sizing s;
    struct api_ferrs fe = {0};
    struct vmop_err err = {0};
    ck_assert_int_eq(api_class_parse(j, &c, &err), VMOP_OK);
    api_class_validate(c, &fe);
    ck_assert_uint_eq(fe.n, 0);
    ck_assert_int_eq(api_class_sizing(c, 2100, &s, &err), VMOP_OK);
    ck_assert_int_eq(s.num_cpus, 2);
    ck_assert_int_eq(s.memory_mb, 8192);
    ck_assert_int_eq(s.cpu_reservation_mhz, 4200);
    ck_assert_int_eq(s.cpu_limit_mhz, -1);
    ck_assert_int_eq(s.mem_reservation_mb, 8192);
    ck_assert_int_eq(s.mem_limit_mb, -1);
    api_class_free(c);
    cJSON_Delete(j);
}
END_TEST

START_TEST(class_invalid)
{
    cJSON *j = J("{\"metadata\":{\"name\":\"bad\"},\"spec\":{\"hardware\":{\"cpus\":0,"
                 "\"memory\":\"lots\"},\"policies\":{\"resources\":{\"requests\":{\"cpu\":\"3\"},"
                 "\"limits\":{\"cpu\":\"2500m\"}}}}}");
    struct api_class *c = NULL;
    struct api_ferrs fe = {0};
    struct vmop_err err = {0};
    ck_assert_int_eq(api_class_parse(j, &c, &err), VMOP_OK);
    api_class_validate(c, &fe);
    ck_assert_int_ge(api_ferrs_find(&fe, "spec.hardware.cpus"), 0);
    ck_assert_int_ge(api_ferrs_find(&fe, "spec.hardware.memory"), 0);
    ck_assert_int_ge(api_ferrs_find(&fe, "spec.policies.resources.requests.cpu"), 0);
    ck_assert_int_eq(api_class_sizing(c, 2000, &(struct api_class_sizing){0}, &err),
                     VMOP_E_INVALID);
    api_class_free(c);
    cJSON_Delete(j);
}
END_TEST

START_TEST(image_resolution)
{
    const struct api_image_entry ns[] = {{"vmi-aaa", "ubuntu-22.04"}, {"vmi-bbb", "photon-5"}};
    const struct api_image_entry cl[] = {
        {"vmi-ccc", "ubuntu-22.04"}, {"vmi-ddd", "debian-12"}, {"vmi-aaa", "shadowed"}};
    const struct api_image_entry *hit = NULL;
    int cluster = -1;
    struct vmop_err err = {0};
    ck_assert_int_eq(api_image_resolve(ns, 2, cl, 3, "vmi-aaa", &hit, &cluster, &err), VMOP_OK);
    ck_assert_ptr_eq(hit, &ns[0]); /* namespaced first */
    ck_assert_int_eq(cluster, 0);
    ck_assert_int_eq(api_image_resolve(ns, 2, cl, 3, "vmi-ddd", &hit, &cluster, &err), VMOP_OK);
    ck_assert_int_eq(cluster, 1);
    ck_assert_int_eq(api_image_resolve(ns, 2, cl, 3, "debian-12", &hit, &cluster, &err), VMOP_OK);
    ck_assert_str_eq(hit->name, "vmi-ddd");
    ck_assert_int_eq(api_image_resolve(ns, 2, cl, 3, "ubuntu-22.04", &hit, &cluster, &err),
                     VMOP_E_EXISTS);
    vmop_err_clear(&err);
    ck_assert_int_eq(api_image_resolve(ns, 2, cl, 3, "vmi-zzz", &hit, &cluster, &err),
                     VMOP_E_NOT_FOUND);
    vmop_err_clear(&err);
    ck_assert_int_eq(api_image_resolve(ns, 2, cl, 3, "centos", &hit, &cluster, &err),
                     VMOP_E_NOT_FOUND);

    cJSON *j = J("{\"kind\":\"ClusterVirtualMachineImage\",\"metadata\":{\"name\":\"vmi-ccc\"},"
                 "\"status\":{\"name\":\"ubuntu-22.04\",\"type\":\"OVF\",\"hardwareVersion\":19,"
                 "\"osInfo\":{\"type\":\"ubuntu64Guest\"}}}");
    struct api_image *img = NULL;
    struct api_ferrs fe = {0};
    ck_assert_int_eq(api_image_parse(j, &img, &err), VMOP_OK);
    ck_assert(img->cluster);
    ck_assert_str_eq(img->os_type, "ubuntu64Guest");
    ck_assert_int_eq(img->hardware_version, 19);
    api_image_validate(img, &fe);
    ck_assert_uint_eq(fe.n, 0);
    api_image_free(img);
    cJSON_Delete(j);
}
END_TEST

START_TEST(service_rules)
{
    cJSON *a =
        J("{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"LoadBalancer\","
          "\"selector\":{\"app\":\"web\"},\"ports\":[{\"name\":\"http\",\"protocol\":\"TCP\","
          "\"port\":80,\"targetPort\":8080}],\"loadBalancerSourceRanges\":[\"10.0.0.0/8\"]}}");
    cJSON *b =
        J("{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"ClusterIP\","
          "\"ports\":[{\"name\":\"http\",\"protocol\":\"QUIC\",\"port\":0,\"targetPort\":8080},"
          "{\"name\":\"http\",\"protocol\":\"TCP\",\"port\":81,\"targetPort\":8081}],"
          "\"loadBalancerSourceRanges\":[\"10.0.0.0/8\"]}}");
    struct api_service *sa = NULL, *sb = NULL;
    struct api_ferrs fe = {0};
    struct vmop_err err = {0};
    ck_assert_int_eq(api_service_parse(a, &sa, &err), VMOP_OK);
    ck_assert_int_eq(api_service_parse(b, &sb, &err), VMOP_OK);
    api_service_validate(sa, NULL, &fe);
    ck_assert_uint_eq(fe.n, 0);
    api_service_validate(sb, sa, &fe);
    ck_assert_int_ge(api_ferrs_find(&fe, "spec.type"), 0);
    ck_assert_int_ge(api_ferrs_find(&fe, "spec.ports[0].protocol"), 0);
    ck_assert_int_ge(api_ferrs_find(&fe, "spec.ports[0].port"), 0);
    ck_assert_int_ge(api_ferrs_find(&fe, "spec.ports[1].name"), 0);
    ck_assert_int_ge(api_ferrs_find(&fe, "spec.loadBalancerSourceRanges"), 0);
    api_service_free(sa);
    api_service_free(sb);
    cJSON_Delete(a);
    cJSON_Delete(b);
}
END_TEST

START_TEST(admin_kinds)
{
    cJSON *e =
        J("{\"metadata\":{\"name\":\"vc1\"},\"spec\":{\"server\":\"https://vc1.example.com\","
          "\"tls\":{\"thumbprint\":\"AB:CD\",\"caBundle\":\"-----BEGIN\"},"
          "\"credentialsSecretRef\":{\"name\":\"vc1-credentials\"},"
          "\"clusterContentLibraries\":[{\"name\":\"public\"},{}]}}");
    cJSON *b = J("{\"metadata\":{\"name\":\"vsphere\",\"namespace\":\"tenant-a\"},\"spec\":{"
                 "\"endpointRef\":{\"name\":\"vc1\"},\"resourcePool\":\"/DC0/host/C0/Resources\","
                 "\"vmFolder\":\"/DC0/vm/tenant-a\",\"networks\":[{\"name\":\"tenant-net\","
                 "\"portGroup\":\"DC0_DVPG0\"}],\"defaultNetwork\":\"tenant-net\","
                 "\"storageClasses\":[\"wcp-default\"],\"vmClasses\":[\"best-effort-small\"]}}");
    struct api_endpoint *ep = NULL;
    struct api_binding *nb = NULL;
    struct api_ferrs fe = {0};
    struct vmop_err err = {0};
    ck_assert_int_eq(api_endpoint_parse(e, &ep, &err), VMOP_OK);
    ck_assert_str_eq(ep->username_key, "username");
    api_endpoint_validate(ep, &fe);
    ck_assert_int_ge(api_ferrs_find(&fe, "spec.tls.thumbprint"), 0);
    ck_assert_int_ge(api_ferrs_find(&fe, "spec.clusterContentLibraries[1]"), 0);
    memset(&fe, 0, sizeof(fe));
    ck_assert_int_eq(api_binding_parse(b, &nb, &err), VMOP_OK);
    api_binding_validate(nb, &fe);
    ck_assert_uint_eq(fe.n, 0);
    ck_assert_str_eq(api_binding_port_group(nb, NULL), "DC0_DVPG0");
    ck_assert_ptr_null(api_binding_port_group(nb, "other"));
    ck_assert(api_binding_allows_storage_class(nb, "wcp-default"));
    ck_assert(!api_binding_allows_storage_class(nb, "gold"));
    ck_assert(api_binding_offers_class(nb, "best-effort-small"));
    ck_assert(!api_binding_offers_class(nb, "guaranteed-8xlarge"));
    api_endpoint_free(ep);
    api_binding_free(nb);
    cJSON_Delete(e);
    cJSON_Delete(b);
}
END_TEST

START_TEST(admin_ipv4_pool)
{
    cJSON *b = J("{\"metadata\":{\"name\":\"vsphere\",\"namespace\":\"tenant-a\"},\"spec\":{"
                 "\"endpointRef\":{\"name\":\"vc1\"},\"resourcePool\":\"/DC0/host/C0/Resources\","
                 "\"vmFolder\":\"/DC0/vm/tenant-a\",\"networks\":[{\"name\":\"tenant-net\","
                 "\"portGroup\":\"DC0_DVPG0\",\"ipv4Pool\":{\"ranges\":[{\"start\":"
                 "\"192.168.10.100\",\"end\":\"192.168.10.199\"}],\"prefix\":24,"
                 "\"gateway\":\"192.168.10.1\",\"nameservers\":[\"192.168.10.2\"],"
                 "\"searchDomains\":[\"corp.example\"]}},{\"name\":\"bad\",\"portGroup\":\"pg\","
                 "\"ipv4Pool\":{\"ranges\":[{\"start\":\"10.0.0.9\",\"end\":\"10.0.0.1\"}],"
                 "\"prefix\":40,\"gateway\":\"10.0.0.x\"}}],\"defaultNetwork\":\"tenant-net\"}}");
    struct api_binding *nb = NULL;
    struct api_ferrs fe = {0};
    struct vmop_err err = {0};
    const struct api_ipv4_pool *p;
    char buf[16];
    ck_assert_int_eq(api_binding_parse(b, &nb, &err), VMOP_OK);
    p = api_binding_ipv4_pool(nb, NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(nb->networks[0].has_ipv4_pool, 1);
    ck_assert_uint_eq(p->n_ranges, 1);
    ck_assert_str_eq(api_ipv4_format(p->ranges[0].end, buf, sizeof(buf)), "192.168.10.199");
    ck_assert_int_eq(p->prefix, 24);
    ck_assert_str_eq(p->gateway_s, "192.168.10.1");
    ck_assert_str_eq(p->nameservers[0], "192.168.10.2");
    ck_assert_str_eq(p->search_domains[0], "corp.example");
    api_binding_validate(nb, &fe);
    ck_assert_int_lt(api_ferrs_find(&fe, "spec.networks[0].ipv4Pool.ranges[0]"), 0);
    ck_assert_int_ge(api_ferrs_find(&fe, "spec.networks[1].ipv4Pool.prefix"), 0);
    ck_assert_int_ge(api_ferrs_find(&fe, "spec.networks[1].ipv4Pool.gateway"), 0);
    ck_assert_int_ge(api_ferrs_find(&fe, "spec.networks[1].ipv4Pool.ranges[0]"), 0);
    ck_assert_uint_eq(fe.n, 3);
    ck_assert_uint_eq(api_ipv4_mask(24), 0xffffff00u);
    ck_assert_uint_eq(api_ipv4_mask(32), 0xffffffffu);
    api_binding_free(nb);
    cJSON_Delete(b);
}
END_TEST

/* One Secret value: stringData wins over data, data is base64 (lenient), empty is "", absent is
 * NOT_FOUND, bad base64 INVALID without the value in the message, a bound is TOOBIG. */
START_TEST(secret_values)
{
    const char *json = "{\"data\":{\"a\":\"aGVsbG8=\",\"b\":\"aGVsbG8\",\"e\":\"\","
                       "\"bad\":\"c2VjcmV0!!\",\"s\":\"ZnJvbS1kYXRh\"},"
                       "\"stringData\":{\"s\":\"from-stringData\"}}";
    cJSON *sec = cJSON_Parse(json);
    struct vmop_err err = {0};
    char *v = NULL;
    size_t n = 0;
    ck_assert_int_eq(api_secret_value(sec, "a", 0, &v, &n, &err), VMOP_OK);
    ck_assert_str_eq(v, "hello");
    ck_assert_uint_eq(n, 5);
    vmop_free_secret_n(v, n + 1);
    ck_assert_int_eq(api_secret_value(sec, "b", 0, &v, &n, &err), VMOP_OK); /* unpadded */
    ck_assert_str_eq(v, "hello");
    vmop_free_secret_n(v, n + 1);
    ck_assert_int_eq(api_secret_value(sec, "s", 0, &v, &n, &err), VMOP_OK);
    ck_assert_str_eq(v, "from-stringData");
    vmop_free_secret_n(v, n + 1);
    ck_assert_int_eq(api_secret_value(sec, "e", 0, &v, &n, &err), VMOP_OK);
    ck_assert_str_eq(v, "");
    vmop_free_secret_n(v, n + 1);
    ck_assert_int_eq(api_secret_value(sec, "missing", 0, &v, &n, &err), VMOP_E_NOT_FOUND);
    ck_assert_ptr_null(v);
    ck_assert_int_eq(api_secret_value(sec, "bad", 0, &v, &n, &err), VMOP_E_INVALID);
    ck_assert_ptr_null(strstr(err.msg, "c2VjcmV0"));
    vmop_err_clear(&err);
    ck_assert_int_eq(api_secret_value(sec, "a", 4, &v, &n, &err), VMOP_E_TOOBIG);
    ck_assert_ptr_null(v);
    vmop_err_clear(&err);
    ck_assert_int_eq(api_secret_value(sec, "s", 4, &v, &n, &err), VMOP_E_TOOBIG);
    vmop_err_clear(&err);
    ck_assert_int_eq(api_secret_value(NULL, "a", 0, &v, &n, &err), VMOP_E_NOT_FOUND);
    cJSON_Delete(sec);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_models");
    TCase *tc = tcase_create("models");
    tcase_add_test(tc, class_sizing);
    tcase_add_test(tc, secret_values);
    tcase_add_test(tc, class_invalid);
    tcase_add_test(tc, image_resolution);
    tcase_add_test(tc, service_rules);
    tcase_add_test(tc, admin_kinds);
    tcase_add_test(tc, admin_ipv4_pool);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
