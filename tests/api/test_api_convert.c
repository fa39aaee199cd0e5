/* test_api_convert.c: api_convert() (api/api_convert.h): the round-trip property test over random
 * valid objects of every kind and version (conv_gen.c), the VM Operator-shaped corpus in
 * testdata/conversion/, and bad input. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_convert.h"
#include "check_main.h"
#include "conv_gen.h"
#include "test_file.h"

#define PER_VERSION 2000
static const uint64_t seeds[] = {0x9e3779b97f4a7c15ull, 42, 20260201};

static char *show(const cJSON *j)
{
    return cJSON_PrintUnformatted(j);
}

static void fail_diff(const char *what, const cJSON *a, const cJSON *b)
{
    char *x = show(a), *y = show(b);
    ck_abort_msg("%s\n before: %s\n after:  %s", what, x, y);
    free(x);
    free(y);
}

static cJSON *conv(const cJSON *o, int v)
{
    char gv[64];
    cJSON *out = NULL;
    struct vmop_err err = {0};
    vmop_rc rc;
    snprintf(gv, sizeof(gv), "vmoperator.vmware.com/v1alpha%d", v);
    rc = api_convert(o, gv, &out, &err);
    if (rc != VMOP_OK) {
        char *t = show(o);
        ck_abort_msg("convert to %s: %s (%s)", gv, err.msg, t);
        free(t);
    }
    return out;
}

static int has_data(const cJSON *o)
{
    return cJSON_GetObjectItem(
               cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "annotations"),
               API_CONVERT_ANNOTATION) != NULL;
}

/* version -> hub -> version, and version-generated hub -> every version -> hub */
START_TEST(property_roundtrip)
{
    const char *kind = conv_gen_kinds[_i];
    size_t si;
    int v, i, w;
    long annotated = 0, total = 0;

    for (si = 0; si < sizeof(seeds) / sizeof(seeds[0]); si++) {
        struct conv_rng r = {seeds[si] + (uint64_t)_i * 7919};
        for (v = 1; v <= API_CONVERT_MAX_VERSION; v++) {
            for (i = 0; i < PER_VERSION / 3 + 1; i++) {
                cJSON *o = conv_gen(&r, kind, v), *hub = conv(o, 6), *back = conv(hub, v);
                if (!cJSON_Compare(o, back, 1))
                    fail_diff("spoke -> hub -> spoke changed the object", o, back);
                ck_assert(!has_data(hub));
                if (v == API_CONVERT_MAX_VERSION) {
                    for (w = 1; w < API_CONVERT_MAX_VERSION; w++) {
                        cJSON *sp = conv(o, w), *h2 = conv(sp, 6);
                        if (!cJSON_Compare(o, h2, 1))
                            fail_diff("hub -> spoke -> hub changed the object", o, h2);
                        annotated += has_data(sp);
                        total++;
                        cJSON_Delete(sp);
                        cJSON_Delete(h2);
                    }
                } else if (has_data(back)) {
                    fail_diff("a spoke round trip added conversion data", o, back);
                }
                cJSON_Delete(o);
                cJSON_Delete(hub);
                cJSON_Delete(back);
            }
        }
    }
    fprintf(stderr, "%s: %ld hub -> spoke conversions, %ld needed conversion data\n", kind, total,
            annotated);
}
END_TEST

static cJSON *load(const char *name)
{
    char *t = vmop_test_slurpf(NULL, "%s/%s", getenv("VMOP_TESTDATA"), name);
    cJSON *j = cJSON_Parse(t);
    free(t);
    ck_assert_msg(j != NULL, "%s is not JSON", name);
    return j;
}

/* Each corpus entry: input manifest; when an expected hub form exists, the input converts to
 * exactly it; always input -> hub -> input is the identity and hub -> every version -> hub. */
static const struct {
    const char *in, *hub;
} corpus[] = {
    {"vm-v1alpha1-cloudinit.json", "vm-v1alpha1-cloudinit.hub.json"},
    {"vm-v1alpha2-capv.json", "vm-v1alpha2-capv.hub.json"},
    {"vm-v1alpha3.json", NULL},
    {"vm-v1alpha4.json", NULL},
    {"vm-v1alpha5.json", "vm-v1alpha5.hub.json"},
    {"vm-v1alpha6.json", NULL},
    {"vmclass-v1alpha1.json", NULL},
    {"vmimage-v1alpha1.json", "vmimage-v1alpha1.hub.json"},
    {"cvmi-v1alpha2.json", NULL},
    {"vmservice-v1alpha2-capv.json", NULL},
    {"respolicy-v1alpha1.json", "respolicy-v1alpha1.hub.json"},
    {"respolicy-v1alpha2-capv.json", NULL},
};

START_TEST(corpus_manifests)
{
    cJSON *in = load(corpus[_i].in), *hub = conv(in, 6), *back;
    const char *gv = cJSON_GetStringValue(cJSON_GetObjectItem(in, "apiVersion"));
    int v = gv[strlen(gv) - 1] - '0', w;

    if (corpus[_i].hub) {
        cJSON *want = load(corpus[_i].hub);
        if (!cJSON_Compare(hub, want, 1))
            fail_diff(corpus[_i].in, want, hub);
        cJSON_Delete(want);
    }
    back = conv(hub, v);
    if (!cJSON_Compare(in, back, 1))
        fail_diff("corpus spoke -> hub -> spoke", in, back);
    for (w = 1; w <= API_CONVERT_MAX_VERSION; w++) {
        cJSON *sp = conv(hub, w), *h2 = conv(sp, 6);
        if (!cJSON_Compare(hub, h2, 1))
            fail_diff("corpus hub -> spoke -> hub", hub, h2);
        cJSON_Delete(sp);
        cJSON_Delete(h2);
    }
    cJSON_Delete(back);
    cJSON_Delete(hub);
    cJSON_Delete(in);
}
END_TEST

/* A hub-only field survives a write in an older version, and edits made there win. */
START_TEST(annotation_keeps_hub_fields)
{
    cJSON *hub = cJSON_Parse(
        "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha6\",\"kind\":\"VirtualMachine\","
        "\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"generation\":2},\"spec\":{"
        "\"imageName\":\"ubuntu\",\"className\":\"small\",\"powerState\":\"PoweredOn\","
        "\"volumeAttributesClassName\":\"fast\",\"network\":{\"interfaces\":[{\"name\":\"eth0\","
        "\"network\":{\"name\":\"n1\",\"kind\":\"Network\",\"apiVersion\":"
        "\"netoperator.vmware.com/v1alpha1\"},\"addresses\":[\"10.0.0.2/24\"]}]}}}");
    cJSON *a1 = conv(hub, 1), *spec = cJSON_GetObjectItem(a1, "spec"), *h2;
    ck_assert(has_data(a1));
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(spec, "powerState")), "poweredOn");
    cJSON_ReplaceItemInObject(spec, "powerState", cJSON_CreateString("poweredOff"));
    h2 = conv(a1, 6);
    spec = cJSON_GetObjectItem(h2, "spec");
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(spec, "powerState")), "PoweredOff");
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(spec, "volumeAttributesClassName")),
                     "fast");
    ck_assert(cJSON_GetObjectItem(
                  cJSON_GetArrayItem(
                      cJSON_GetObjectItem(cJSON_GetObjectItem(spec, "network"), "interfaces"), 0),
                  "addresses") != NULL);
    ck_assert(!has_data(h2));
    cJSON_Delete(h2);
    cJSON_Delete(a1);
    cJSON_Delete(hub);
}
END_TEST

/* A v1alpha2 create, as the API server runs it: the mutating webhook resolves spec.image on the
 * hub (generation 0), the result goes down to v1alpha2 (spec.image into status.image and the
 * conversion data), the create drops status and sets generation 1, and the object goes up for
 * storage: the resolved image survives (not {name: <display name>}). */
START_TEST(v1alpha2_create_keeps_resolved_image)
{
    cJSON *hub = cJSON_Parse(
        "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha6\",\"kind\":\"VirtualMachine\","
        "\"metadata\":{\"name\":\"a\",\"namespace\":\"n\"},\"spec\":{"
        "\"imageName\":\"ubuntu\",\"image\":{\"kind\":\"VirtualMachineImage\","
        "\"name\":\"vmi-0123456789abcdef0\"},\"className\":\"small\","
        "\"instanceUUID\":\"7c2e9b4e-0d3b-4b8f-9a1e-3f1c2d4e5f60\"}}");
    cJSON *a2 = conv(hub, 2), *md, *h2, *img;
    ck_assert(has_data(a2));
    cJSON_DeleteItemFromObject(a2, "status");
    md = cJSON_GetObjectItem(a2, "metadata");
    cJSON_AddNumberToObject(md, "generation", 1);
    h2 = conv(a2, 6);
    img = cJSON_GetObjectItem(cJSON_GetObjectItem(h2, "spec"), "image");
    ck_assert_ptr_nonnull(img);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(img, "name")),
                     "vmi-0123456789abcdef0");
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(img, "kind")), "VirtualMachineImage");
    ck_assert(!has_data(h2));
    cJSON_Delete(h2);
    cJSON_Delete(a2);
    cJSON_Delete(hub);
}
END_TEST

static void expect_invalid(const char *json, const char *gv, const char *needle)
{
    cJSON *o = json ? cJSON_Parse(json) : NULL, *out = (cJSON *)1;
    struct vmop_err err = {0};
    ck_assert(json == NULL || o != NULL);
    ck_assert_int_eq(api_convert(o, gv, &out, &err), VMOP_E_INVALID);
    ck_assert_ptr_null(out);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "message \"%s\" lacks \"%s\"", err.msg, needle);
    cJSON_Delete(o);
}

START_TEST(bad_input)
{
    const char *a6 = "vmoperator.vmware.com/v1alpha6";
    expect_invalid(NULL, a6, "must be a JSON object");
    expect_invalid("[1]", a6, "must be a JSON object");
    expect_invalid("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha2\"}", a6, "no kind");
    expect_invalid("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha2\",\"kind\":7}", a6, "no kind");
    expect_invalid("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha2\",\"kind\":\"Pod\"}", a6,
                   "kind Pod is not converted");
    expect_invalid("{\"kind\":\"VirtualMachine\"}", a6, "no apiVersion");
    expect_invalid("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha7\",\"kind\":"
                   "\"VirtualMachine\"}",
                   a6, "apiVersion vmoperator.vmware.com/v1alpha7 of VirtualMachine is not served");
    expect_invalid("{\"apiVersion\":\"v1alpha2\",\"kind\":\"VirtualMachine\"}", a6,
                   "is not served");
    expect_invalid("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha2\",\"kind\":"
                   "\"VirtualMachine\"}",
                   "vmoperator.vmware.com/v2", "desired apiVersion vmoperator.vmware.com/v2");
    expect_invalid("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha2\",\"kind\":"
                   "\"VirtualMachine\"}",
                   NULL, "desired apiVersion");
    expect_invalid("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha2\",\"kind\":"
                   "\"VirtualMachine\",\"spec\":[]}",
                   a6, "spec of the VirtualMachine to convert must be an object");
    expect_invalid("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha2\",\"kind\":"
                   "\"VirtualMachine\",\"metadata\":\"x\"}",
                   a6, "metadata of the VirtualMachine");
    expect_invalid("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha2\",\"kind\":"
                   "\"VirtualMachine\",\"metadata\":{\"annotations\":[]}}",
                   a6, "metadata.annotations");
    expect_invalid("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha2\",\"kind\":"
                   "\"VirtualMachine\",\"metadata\":{\"annotations\":{\"" API_CONVERT_ANNOTATION
                   "\":\"{not json\"}}}",
                   a6, "is not a JSON object");
    expect_invalid("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha2\",\"kind\":"
                   "\"VirtualMachine\",\"metadata\":{\"annotations\":{\"" API_CONVERT_ANNOTATION
                   "\":5}}}",
                   a6, "must be a string");
}
END_TEST

/* A member name given twice in one object (valid JSON, never sent by the API server) is refused
 * with its path: lookups would take the first and the conversion data would keep the second, so
 * what converts down would not convert back (found by the fuzzer). */
START_TEST(duplicate_members)
{
    const char *a1 = "vmoperator.vmware.com/v1alpha1", *a6 = "vmoperator.vmware.com/v1alpha6";
    char big[4096];
    size_t n;
    int i;

    expect_invalid("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha2\",\"kind\":"
                   "\"VirtualMachineImage\",\"spec\":{\"type\":\"ovf\"},\"spec\":\"x\"}",
                   a1, "gives member spec more than once");
    expect_invalid("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha2\",\"kind\":"
                   "\"VirtualMachine\",\"spec\":{\"network\":{\"interfaces\":[{\"name\":\"a\"},"
                   "{\"name\":\"b\",\"name\":\"c\"}]}}}",
                   a6, "gives member spec.network.interfaces[1].name more than once");
    /* a large object (the sorted scan) */
    n = (size_t)snprintf(big, sizeof(big),
                         "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha2\",\"kind\":"
                         "\"VirtualMachine\",\"metadata\":{\"labels\":{");
    for (i = 0; i < 40; i++)
        n += (size_t)snprintf(big + n, sizeof(big) - n, "\"k%02d\":\"v\",", i);
    snprintf(big + n, sizeof(big) - n, "\"k17\":\"w\"}}}");
    expect_invalid(big, a6, "gives member metadata.labels.k17 more than once");
    /* in the stored hub data */
    expect_invalid("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha2\",\"kind\":"
                   "\"VirtualMachine\",\"metadata\":{\"annotations\":{\"" API_CONVERT_ANNOTATION
                   "\":\"{\\\"spec\\\":{},\\\"spec\\\":1}\"}}}",
                   a6,
                   "annotation " API_CONVERT_ANNOTATION
                   " of the VirtualMachine to convert gives member spec more than once");
}
END_TEST

/* Wrong types below spec/status are not errors: they pass through (the API server's schema
 * rejects them), and nothing crashes. */
START_TEST(wrong_types_pass)
{
    static const char *const docs[] = {
        "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha1\",\"kind\":\"VirtualMachine\","
        "\"spec\":{\"vmMetadata\":5,\"networkInterfaces\":{\"a\":1},\"powerState\":3,"
        "\"volumes\":\"x\",\"advancedOptions\":[]},\"status\":{\"networkInterfaces\":[1,\"x\"],"
        "\"volumes\":[null]}}",
        "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha2\",\"kind\":\"VirtualMachine\","
        "\"metadata\":{\"generation\":\"x\"},\"spec\":{\"network\":[],\"bootstrap\":{\"sysprep\":"
        "{\"sysprep\":{\"identification\":{\"joinDomain\":4}}}}},\"status\":{\"image\":[]}}",
        "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha1\",\"kind\":"
        "\"VirtualMachineSetResourcePolicy\",\"spec\":{\"folder\":3,\"clustermodules\":[1,[]]}}",
        "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha1\",\"kind\":\"VirtualMachineImage\","
        "\"spec\":{\"osInfo\":\"x\"},\"status\":7}",
    };
    size_t i;
    int w;
    for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        cJSON *o = cJSON_Parse(docs[i]), *out = NULL;
        struct vmop_err err = {0};
        ck_assert_ptr_nonnull(o);
        for (w = 1; w <= API_CONVERT_MAX_VERSION; w++) {
            char gv[64];
            snprintf(gv, sizeof(gv), "vmoperator.vmware.com/v1alpha%d", w);
            out = NULL;
            (void)api_convert(o, gv, &out, &err);
            cJSON_Delete(out);
        }
        cJSON_Delete(o);
    }
}
END_TEST

/* A VirtualMachine whose spec.cdrom nests so that the object is depth levels deep in all. */
static cJSON *deep_vm(int version, int depth)
{
    char *buf = malloc((size_t)depth * 2 + 256);
    int i, n, inner = depth - 2; /* arrays below the object and its spec */
    cJSON *o;
    ck_assert_ptr_nonnull(buf);
    n = sprintf(buf,
                "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha%d\",\"kind\":\"VirtualMachine\","
                "\"spec\":{\"cdrom\":[",
                version);
    for (i = 1; i < inner; i++)
        buf[n++] = '[';
    for (i = 0; i < inner; i++)
        buf[n++] = ']';
    strcpy(buf + n, "}}");
    o = cJSON_Parse(buf);
    free(buf);
    ck_assert_ptr_nonnull(o);
    return o;
}

/* Conversion moves v1alpha4's spec.cdrom a level deeper (the hub's spec.hardware.cdrom) and keeps
 * the hub object as JSON text in an annotation: an object at the limit in hub form converts down
 * and back, one level more is refused (before, a deep cdrom converted but its annotation no longer
 * parsed, so the stored object could not be read back). */
START_TEST(depth_limit)
{
    struct vmop_err err = {0};
    cJSON *ok = deep_vm(4, API_CONVERT_MAX_DEPTH - 1), *deep = deep_vm(4, API_CONVERT_MAX_DEPTH);
    cJSON *a1 = NULL, *hub = NULL, *back = NULL, *out = NULL;

    ck_assert_int_eq(api_convert(ok, "vmoperator.vmware.com/v1alpha1", &a1, &err), VMOP_OK);
    ck_assert_int_eq(api_convert(a1, API_CONVERT_HUB_GV, &hub, &err), VMOP_OK);
    ck_assert_int_eq(api_convert(hub, "vmoperator.vmware.com/v1alpha4", &back, &err), VMOP_OK);
    ck_assert_ptr_nonnull(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(back, "spec"), "cdrom"));
    ck_assert_int_eq(api_convert(deep, API_CONVERT_HUB_GV, &out, &err), VMOP_E_INVALID);
    ck_assert_ptr_null(out);
    ck_assert_ptr_nonnull(strstr(err.msg, "nested deeper than 128 levels (in its v1alpha6 form)"));
    /* the same object asked for in its own version: nothing to convert, still refused, since
     * what is returned must convert on */
    ck_assert_int_eq(api_convert(deep, "vmoperator.vmware.com/v1alpha4", &out, &err),
                     VMOP_E_INVALID);
    ck_assert_ptr_null(out);
    cJSON_Delete(back);
    cJSON_Delete(hub);
    cJSON_Delete(a1);
    cJSON_Delete(deep);
    cJSON_Delete(ok);
}
END_TEST

START_TEST(served)
{
    ck_assert(api_convert_served("VirtualMachine", "v1alpha1"));
    ck_assert(api_convert_served("VirtualMachineSetResourcePolicy", "v1alpha6"));
    ck_assert(!api_convert_served("VirtualMachine", "v1alpha7"));
    ck_assert(!api_convert_served("VirtualMachineSnapshot", "v1alpha5"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_convert");
    TCase *tc = tcase_create("convert");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, property_roundtrip, 0, 6);
    tcase_add_loop_test(tc, corpus_manifests, 0, (int)(sizeof(corpus) / sizeof(corpus[0])));
    tcase_add_test(tc, annotation_keeps_hub_fields);
    tcase_add_test(tc, v1alpha2_create_keeps_resolved_image);
    tcase_add_test(tc, bad_input);
    tcase_add_test(tc, duplicate_members);
    tcase_add_test(tc, wrong_types_pass);
    tcase_add_test(tc, depth_limit);
    tcase_add_test(tc, served);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
