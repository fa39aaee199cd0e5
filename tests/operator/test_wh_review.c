/* test_wh_review.c: unit tests of operator/webhook/wh_review.c: AdmissionReview parsing (every
 * field, absent and null fields, wrong types, wrong apiVersion/kind, the group and size caps),
 * response building (allowed, denied with status, patch as base64 JSONPatch, warnings, cut
 * messages), and ConversionReview parsing and building (Success, Failure). Suite: unit. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "check_main.h"
#include "wh_patch.h"
#include "wh_review.h"

static const char *full_review =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
    "\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\","
    "\"kind\":{\"group\":\"vmoperator.vmware.com\",\"version\":\"v1alpha5\","
    "\"kind\":\"VirtualMachine\"},"
    "\"resource\":{\"group\":\"vmoperator.vmware.com\",\"version\":\"v1alpha5\","
    "\"resource\":\"virtualmachines\"},"
    "\"subResource\":\"status\",\"requestKind\":{\"group\":\"x\",\"version\":\"y\",\"kind\":\"z\"},"
    "\"name\":\"web-0\",\"namespace\":\"team-a\",\"operation\":\"UPDATE\","
    "\"userInfo\":{\"username\":\"alice\",\"uid\":\"014fbff9\","
    "\"groups\":[\"system:authenticated\",\"team-a-admins\"]},"
    "\"object\":{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachine\","
    "\"spec\":{\"className\":\"small\"}},"
    "\"oldObject\":{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\"},"
    "\"dryRun\":true,\"options\":{\"kind\":\"UpdateOptions\"}}}";

START_TEST(admission_parse_full)
{
    struct wh_admission_request *r = NULL;
    struct vmop_err err = {0};
    ck_assert_msg(wh_admission_parse(full_review, strlen(full_review), &r, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_str_eq(r->uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
    ck_assert_str_eq(r->kind_group, "vmoperator.vmware.com");
    ck_assert_str_eq(r->kind_version, "v1alpha5");
    ck_assert_str_eq(r->kind, "VirtualMachine");
    ck_assert_str_eq(r->resource, "virtualmachines");
    ck_assert_str_eq(r->res_version, "v1alpha5");
    ck_assert_str_eq(r->sub_resource, "status");
    ck_assert_str_eq(r->operation, "UPDATE");
    ck_assert_int_eq(r->op, WH_OP_UPDATE);
    ck_assert_str_eq(r->namespace_, "team-a");
    ck_assert_str_eq(r->name, "web-0");
    ck_assert_str_eq(r->username, "alice");
    ck_assert_str_eq(r->user_uid, "014fbff9");
    ck_assert_uint_eq(r->n_groups, 2);
    ck_assert_str_eq(r->groups[1], "team-a-admins");
    ck_assert_str_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(r->object, "spec"), "className")->valuestring,
        "small");
    ck_assert_ptr_nonnull(r->old_object);
    ck_assert_int_eq(r->dry_run, 1);
    wh_admission_request_free(r);
}
END_TEST

START_TEST(admission_parse_minimal)
{
    /* a CREATE with generateName: no name, no oldObject (null), no groups, no dryRun */
    const char *s = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                    "\"request\":{\"uid\":\"u1\",\"operation\":\"CREATE\",\"oldObject\":null,"
                    "\"object\":{\"kind\":\"VirtualMachine\"},\"userInfo\":{}}}";
    struct wh_admission_request *r = NULL;
    struct vmop_err err = {0};
    /* not NUL-terminated: the parser stops at len */
    char *copy = malloc(strlen(s));
    memcpy(copy, s, strlen(s));
    ck_assert_msg(wh_admission_parse(copy, strlen(s), &r, &err) == VMOP_OK, "%s", err.msg);
    free(copy);
    ck_assert_int_eq(r->op, WH_OP_CREATE);
    ck_assert_str_eq(r->name, "");
    ck_assert_str_eq(r->namespace_, "");
    ck_assert_str_eq(r->sub_resource, "");
    ck_assert_str_eq(r->kind, "");
    ck_assert_str_eq(r->username, "");
    ck_assert_uint_eq(r->n_groups, 0);
    ck_assert_ptr_null(r->old_object);
    ck_assert_ptr_nonnull(r->object);
    ck_assert_int_eq(r->dry_run, 0);
    wh_admission_request_free(r);
}
END_TEST

static void parse_fails(const char *s, vmop_rc want)
{
    struct wh_admission_request *r = (void *)1;
    struct vmop_err err = {0};
    ck_assert_int_eq(wh_admission_parse(s, strlen(s), &r, &err), want);
    ck_assert_ptr_eq(r, (void *)1); /* untouched on failure */
    ck_assert_int_eq(err.rc, want);
    ck_assert(err.msg[0] != '\0');
}

#define REVIEW(req)                                                                                \
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","                        \
    "\"request\":" req "}"

START_TEST(admission_parse_errors)
{
    parse_fails("", VMOP_E_INVALID);
    parse_fails("not json", VMOP_E_INVALID);
    parse_fails("[]", VMOP_E_INVALID);
    parse_fails("{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
                "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\"}}",
                VMOP_E_INVALID);
    parse_fails("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"ConversionReview\","
                "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\"}}",
                VMOP_E_INVALID);
    parse_fails("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
                VMOP_E_INVALID);
    parse_fails(REVIEW("{\"operation\":\"CREATE\"}"), VMOP_E_INVALID);              /* uid */
    parse_fails(REVIEW("{\"uid\":\"\",\"operation\":\"CREATE\"}"), VMOP_E_INVALID); /* "" */
    parse_fails(REVIEW("{\"uid\":7,\"operation\":\"CREATE\"}"), VMOP_E_INVALID);    /* type */
    parse_fails(REVIEW("{\"uid\":\"u\",\"operation\":\"PATCH\"}"), VMOP_E_INVALID); /* op */
    parse_fails(REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":[]}"), VMOP_E_INVALID);
    parse_fails(REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"dryRun\":\"yes\"}"),
                VMOP_E_INVALID);
    parse_fails(REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"userInfo\":{\"groups\":[1]}}"),
                VMOP_E_INVALID);
    parse_fails(REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"kind\":{\"kind\":false}}"),
                VMOP_E_INVALID);
}
END_TEST

START_TEST(admission_parse_caps)
{
    struct vbuf b;
    struct wh_admission_request *r = NULL;
    struct vmop_err err = {0};
    vbuf_init(&b, WH_MAX_BODY * 2);
    vbuf_adds(&b, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                  "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\",\"userInfo\":{\"groups\":[");
    for (int i = 0; i <= WH_MAX_GROUPS; i++)
        vbuf_addf(&b, "%s\"g%d\"", i ? "," : "", i);
    vbuf_adds(&b, "]}}}");
    ck_assert_int_eq(wh_admission_parse(b.data, b.len, &r, &err), VMOP_E_TOOBIG);
    vbuf_reset(&b);
    vmop_err_clear(&err);
    vbuf_adds(&b, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                  "\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":{\"pad\":\"");
    while (b.len <= WH_MAX_BODY)
        vbuf_adds(&b, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    vbuf_adds(&b, "\"}}}");
    ck_assert_int_eq(wh_admission_parse(b.data, b.len, &r, &err), VMOP_E_TOOBIG);
    vbuf_free(&b);
}
END_TEST

static cJSON *build(const char *uid, const struct wh_admission_response *resp)
{
    char *json = NULL;
    size_t len = 0;
    struct vmop_err err = {0};
    cJSON *doc;
    ck_assert_msg(wh_admission_build(uid, resp, &json, &len, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_uint_eq(len, strlen(json));
    doc = cJSON_Parse(json);
    ck_assert_ptr_nonnull(doc);
    free(json);
    ck_assert_str_eq(cJSON_GetObjectItem(doc, "apiVersion")->valuestring, "admission.k8s.io/v1");
    ck_assert_str_eq(cJSON_GetObjectItem(doc, "kind")->valuestring, "AdmissionReview");
    return doc;
}

START_TEST(admission_build_allowed)
{
    struct wh_admission_response resp;
    cJSON *doc, *r;
    wh_admission_response_init(&resp);
    doc = build("u-1", &resp);
    r = cJSON_GetObjectItem(doc, "response");
    ck_assert_str_eq(cJSON_GetObjectItem(r, "uid")->valuestring, "u-1");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(r, "allowed")));
    ck_assert_ptr_null(cJSON_GetObjectItem(r, "status"));
    ck_assert_ptr_null(cJSON_GetObjectItem(r, "patch"));
    ck_assert_ptr_null(cJSON_GetObjectItem(r, "warnings"));
    cJSON_Delete(doc);
    /* an empty patch is not sent */
    wh_admission_set_patch(&resp, cJSON_CreateArray());
    doc = build("u-1", &resp);
    ck_assert_ptr_null(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "response"), "patchType"));
    cJSON_Delete(doc);
    wh_admission_response_deinit(&resp);
}
END_TEST

START_TEST(admission_build_denied)
{
    struct wh_admission_response resp;
    cJSON *doc, *st;
    char big[WH_MAX_MESSAGE + 100];
    wh_admission_response_init(&resp);
    ck_assert_int_eq(wh_admission_deny(&resp, 422, "Invalid",
                                       "spec.imageName: Invalid value: \"nope\": no such image"),
                     VMOP_OK);
    resp.details = cJSON_Parse("{\"causes\":[{\"field\":\"spec.imageName\"}]}");
    doc = build("u-2", &resp);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "response"), "allowed")));
    st = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "response"), "status");
    ck_assert_int_eq(cJSON_GetObjectItem(st, "code")->valueint, 422);
    ck_assert_str_eq(cJSON_GetObjectItem(st, "reason")->valuestring, "Invalid");
    ck_assert_str_eq(cJSON_GetObjectItem(st, "status")->valuestring, "Failure");
    ck_assert_ptr_nonnull(
        strstr(cJSON_GetObjectItem(st, "message")->valuestring, "spec.imageName"));
    ck_assert_str_eq(cJSON_GetObjectItem(
                         cJSON_GetArrayItem(
                             cJSON_GetObjectItem(cJSON_GetObjectItem(st, "details"), "causes"), 0),
                         "field")
                         ->valuestring,
                     "spec.imageName");
    cJSON_Delete(doc);
    /* a message over the cap is cut, at a UTF-8 boundary */
    memset(big, 'a', sizeof(big));
    memcpy(big + WH_MAX_MESSAGE - 1, "\xc3\xa9", 2); /* é straddles the cut */
    big[sizeof(big) - 1] = '\0';
    ck_assert_int_eq(wh_admission_deny(&resp, 403, NULL, big), VMOP_OK);
    ck_assert_uint_eq(strlen(resp.message), WH_MAX_MESSAGE - 1);
    ck_assert_ptr_null(resp.reason);
    wh_admission_response_deinit(&resp);
}
END_TEST

START_TEST(admission_build_patch_warnings)
{
    struct wh_admission_response resp;
    struct vmop_err err = {0};
    cJSON *doc, *r, *orig = cJSON_Parse("{\"spec\":{}}"),
                    *mut = cJSON_Parse("{\"spec\":{\"a\":1}}");
    cJSON *patch = NULL, *decoded;
    unsigned char raw[256];
    const char *b64;
    int n;
    char warn[WH_MAX_WARNING_LEN + 50];

    wh_admission_response_init(&resp);
    ck_assert_int_eq(wh_patch_diff(orig, mut, &patch, &err), VMOP_OK);
    wh_admission_set_patch(&resp, patch);
    memset(warn, 'w', sizeof(warn));
    warn[sizeof(warn) - 1] = '\0';
    for (int i = 0; i < WH_MAX_WARNINGS + 3; i++)
        ck_assert_int_eq(wh_admission_warn(&resp, i ? warn : "v1alpha1 is deprecated"), VMOP_OK);
    ck_assert_uint_eq(resp.n_warnings, WH_MAX_WARNINGS);
    doc = build("u-3", &resp);
    r = cJSON_GetObjectItem(doc, "response");
    ck_assert_str_eq(cJSON_GetObjectItem(r, "patchType")->valuestring, "JSONPatch");
    b64 = cJSON_GetObjectItem(r, "patch")->valuestring;
    n = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)strlen(b64));
    ck_assert_int_gt(n, 0);
    while (n > 0 && raw[n - 1] == '\0') /* EVP_DecodeBlock keeps padding as NULs */
        n--;
    raw[n] = '\0';
    decoded = cJSON_Parse((const char *)raw);
    ck_assert_ptr_nonnull(decoded);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(decoded, 0), "path")->valuestring,
                     "/spec/a");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r, "warnings")), WH_MAX_WARNINGS);
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "warnings"), 0)->valuestring,
                     "v1alpha1 is deprecated");
    ck_assert_uint_eq(
        strlen(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "warnings"), 1)->valuestring),
        WH_MAX_WARNING_LEN);
    cJSON_Delete(decoded);
    cJSON_Delete(doc);
    /* no patch on a denial */
    ck_assert_int_eq(wh_admission_deny(&resp, 403, "Forbidden", "no"), VMOP_OK);
    doc = build("u-3", &resp);
    ck_assert_ptr_null(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "response"), "patch"));
    cJSON_Delete(doc);
    wh_admission_response_deinit(&resp);
    cJSON_Delete(orig);
    cJSON_Delete(mut);
}
END_TEST

START_TEST(conversion_parse)
{
    const char *s =
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\","
        "\"request\":{\"uid\":\"c-1\",\"desiredAPIVersion\":"
        "\"vmoperator.vmware.com/v1alpha2\",\"objects\":["
        "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachine\"},"
        "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachine\"}"
        "]}}";
    struct wh_conversion_request *r = NULL;
    struct vmop_err err = {0};
    ck_assert_msg(wh_conversion_parse(s, strlen(s), &r, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_str_eq(r->uid, "c-1");
    ck_assert_str_eq(r->desired_api_version, "vmoperator.vmware.com/v1alpha2");
    ck_assert_uint_eq(r->n_objects, 2);
    ck_assert_int_eq(cJSON_GetArraySize(r->objects), 2);
    wh_conversion_request_free(r);
}
END_TEST

static void conv_fails(const char *req)
{
    char buf[1024];
    struct wh_conversion_request *r = NULL;
    struct vmop_err err = {0};
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\","
             "\"request\":%s}",
             req);
    ck_assert_int_eq(wh_conversion_parse(buf, strlen(buf), &r, &err), VMOP_E_INVALID);
    ck_assert_ptr_null(r);
}

START_TEST(conversion_parse_errors)
{
    conv_fails("{\"desiredAPIVersion\":\"g/v\",\"objects\":[]}");
    conv_fails("{\"uid\":\"u\",\"objects\":[]}");
    conv_fails("{\"uid\":\"u\",\"desiredAPIVersion\":\"v1\",\"objects\":[]}");
    conv_fails("{\"uid\":\"u\",\"desiredAPIVersion\":\"g/v\",\"objects\":{}}");
    conv_fails("{\"uid\":\"u\",\"desiredAPIVersion\":\"g/v\",\"objects\":[{},3]}");
    conv_fails("[]");
}
END_TEST

START_TEST(conversion_build)
{
    cJSON *converted = cJSON_Parse("[{\"apiVersion\":\"g/v2\",\"kind\":\"K\"}]"), *doc, *r;
    char *json = NULL;
    size_t len;
    struct vmop_err err = {0};
    ck_assert_int_eq(wh_conversion_build("c-2", converted, NULL, &json, &len, &err), VMOP_OK);
    doc = cJSON_Parse(json);
    free(json);
    r = cJSON_GetObjectItem(doc, "response");
    ck_assert_str_eq(cJSON_GetObjectItem(doc, "kind")->valuestring, "ConversionReview");
    ck_assert_str_eq(cJSON_GetObjectItem(r, "uid")->valuestring, "c-2");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "result"), "status")->valuestring,
                     "Success");
    ck_assert_str_eq(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "convertedObjects"), 0),
                            "apiVersion")
            ->valuestring,
        "g/v2");
    cJSON_Delete(doc);
    cJSON_Delete(converted); /* still ours: the review only referenced it */
    ck_assert_int_eq(wh_conversion_build("c-3", NULL, "v1alpha9 is unknown", &json, &len, &err),
                     VMOP_OK);
    doc = cJSON_Parse(json);
    free(json);
    r = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "response"), "result");
    ck_assert_str_eq(cJSON_GetObjectItem(r, "status")->valuestring, "Failure");
    ck_assert_str_eq(cJSON_GetObjectItem(r, "message")->valuestring, "v1alpha9 is unknown");
    cJSON_Delete(doc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("wh_review");
    TCase *a = tcase_create("admission"), *c = tcase_create("conversion");
    tcase_add_test(a, admission_parse_full);
    tcase_add_test(a, admission_parse_minimal);
    tcase_add_test(a, admission_parse_errors);
    tcase_add_test(a, admission_parse_caps);
    tcase_add_test(a, admission_build_allowed);
    tcase_add_test(a, admission_build_denied);
    tcase_add_test(a, admission_build_patch_warnings);
    tcase_add_test(c, conversion_parse);
    tcase_add_test(c, conversion_parse_errors);
    tcase_add_test(c, conversion_build);
    suite_add_tcase(s, a);
    suite_add_tcase(s, c);
    return vmop_check_run(s);
}
