/* test_vim_rest.c: unit tests (no network) of the vAPI answer parsing in vim_rest.c and
 * vim_library.c: values, vAPI error objects (non-2xx and inside a 200), plain-text 404, empty 401,
 * and the OVF deploy result with its error-inside-200 form. The fixtures are answers recorded from
 * the govmomi simulator and shaped like vCenter's documented ones. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "vim_internal.h"

static vmop_rc parse(long status, const char *body, cJSON **ret_value, struct vmop_err *err)
{
    return vim_rest_parse_reply(status, body, strlen(body), "GET /rest/x", ret_value, err);
}

START_TEST(value_string)
{
    struct vmop_err err = {0};
    cJSON *v = NULL;
    ck_assert_int_eq(parse(200, "{\"value\":\"5e2a1c7e-sess\"}\n", &v, &err), VMOP_OK);
    ck_assert(cJSON_IsString(v));
    ck_assert_str_eq(v->valuestring, "5e2a1c7e-sess");
    ck_assert_int_eq(err.rc, VMOP_OK);
    cJSON_Delete(v);
}
END_TEST

START_TEST(value_list_and_empty)
{
    struct vmop_err err = {0};
    cJSON *v = NULL;
    ck_assert_int_eq(parse(200, "{\"value\":[\"a\",\"b\"]}", &v, &err), VMOP_OK);
    ck_assert_int_eq(cJSON_GetArraySize(v), 2);
    cJSON_Delete(v);
    /* The simulator omits an empty value ("omitempty"): no value, no error. */
    v = (cJSON *)1;
    ck_assert_int_eq(parse(200, "{}", &v, &err), VMOP_OK);
    ck_assert_ptr_null(v);
    v = (cJSON *)1;
    ck_assert_int_eq(parse(200, "", &v, &err), VMOP_OK);
    ck_assert_ptr_null(v);
    /* ret_value NULL: the value is dropped, not leaked. */
    ck_assert_int_eq(parse(200, "{\"value\":{\"a\":1}}", NULL, &err), VMOP_OK);
    ck_assert_int_eq(err.rc, VMOP_OK);
}
END_TEST

START_TEST(not_json_200)
{
    struct vmop_err err = {0};
    cJSON *v = NULL;
    ck_assert_int_eq(parse(200, "<html>proxy</html>", &v, &err), VMOP_E_PROTO);
    ck_assert_ptr_null(v);
    ck_assert_ptr_nonnull(strstr(err.msg, "not JSON"));
}
END_TEST

START_TEST(not_found_typed)
{
    struct vmop_err err = {0};
    cJSON *v = NULL;
    const char *body = "{\"type\":\"com.vmware.vapi.std.errors.not_found\",\"value\":{\"messages\":"
                       "[{\"args\":[\"lib1\"],\"default_message\":\"Library lib1 not found.\","
                       "\"id\":\"com.vmware.vdcs.cls-main.library_not_found\"}]}}";
    ck_assert_int_eq(parse(404, body, &v, &err), VMOP_E_NOT_FOUND);
    ck_assert_ptr_null(v);
    ck_assert_int_eq(err.rc, VMOP_E_NOT_FOUND);
    ck_assert_str_eq(err.fault, "not_found");
    ck_assert_int_eq(err.http_status, 404);
    ck_assert_ptr_nonnull(strstr(err.msg, "Library lib1 not found."));
    ck_assert_ptr_nonnull(strstr(err.msg, "GET /rest/x"));
}
END_TEST

START_TEST(typed_errors_rc)
{
    static const struct {
        long status;
        const char *type;
        vmop_rc rc;
        const char *fault;
    } cases[] = {
        {401, "com.vmware.vapi.std.errors.unauthenticated", VMOP_E_AUTH, "unauthenticated"},
        {403, "com.vmware.vapi.std.errors.unauthorized", VMOP_E_AUTH, "unauthorized"},
        {400, "com.vmware.vapi.std.errors.already_exists", VMOP_E_EXISTS, "already_exists"},
        {400, "com.vmware.vapi.std.errors.invalid_argument", VMOP_E_FAULT, "invalid_argument"},
        {500, "com.vmware.vapi.std.errors.error", VMOP_E_FAULT, "error"},
        /* the simulator puts Go error types there */
        {400, "*types.InvalidArgument", VMOP_E_FAULT, "InvalidArgument"},
        {400, "plainword", VMOP_E_FAULT, "plainword"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct vmop_err err = {0};
        char body[256];
        snprintf(body, sizeof(body), "{\"type\":\"%s\",\"value\":{}}", cases[i].type);
        ck_assert_int_eq(parse(cases[i].status, body, NULL, &err), cases[i].rc);
        ck_assert_str_eq(err.fault, cases[i].fault);
        ck_assert_int_eq(err.http_status, (int)cases[i].status);
    }
}
END_TEST

START_TEST(messages_as_strings)
{
    /* govmomi's BadRequest writes messages as plain strings */
    struct vmop_err err = {0};
    ck_assert_int_eq(parse(400,
                           "{\"type\":\"com.vmware.vapi.std.errors.invalid_argument\","
                           "\"value\":{\"messages\":[\"bad pool\",\"line\\ntwo\"]}}",
                           NULL, &err),
                     VMOP_E_FAULT);
    ck_assert_ptr_nonnull(strstr(err.msg, "bad pool; line two"));
    ck_assert_ptr_null(strchr(err.msg, '\n'));
}
END_TEST

START_TEST(type_that_is_not_a_type)
{
    /* recorded from the simulator: a VM-template deploy into a pool that does not exist */
    struct vmop_err err = {0};
    ck_assert_int_eq(
        parse(400, "{\"type\":\"Post \\\"http://127.0.0.1:32849/sdk\\\": EOF\",\"value\":{}}\n",
              NULL, &err),
        VMOP_E_FAULT);
    ck_assert_str_eq(err.fault, "error");
    ck_assert_ptr_nonnull(strstr(err.msg, "sdk\": EOF"));
}
END_TEST

START_TEST(value_null)
{
    /* recorded from the simulator: library ~action=find without a match */
    struct vmop_err err = {0};
    cJSON *v = (cJSON *)1;
    ck_assert_int_eq(parse(200, "{\"value\":null}\n", &v, &err), VMOP_OK);
    ck_assert_ptr_null(v);
}
END_TEST

START_TEST(api_style_error)
{
    struct vmop_err err = {0};
    ck_assert_int_eq(parse(404,
                           "{\"error_type\":\"NOT_FOUND\",\"messages\":[{\"default_message\":"
                           "\"gone\",\"id\":\"x\"}]}",
                           NULL, &err),
                     VMOP_E_NOT_FOUND);
    ck_assert_str_eq(err.fault, "NOT_FOUND");
    ck_assert_ptr_nonnull(strstr(err.msg, "gone"));
}
END_TEST

START_TEST(error_inside_200)
{
    struct vmop_err err = {0};
    cJSON *v = NULL;
    ck_assert_int_eq(parse(200,
                           "{\"type\":\"com.vmware.vapi.std.errors.resource_busy\",\"value\":{"
                           "\"messages\":[{\"default_message\":\"busy\"}]}}",
                           &v, &err),
                     VMOP_E_FAULT);
    ck_assert_ptr_null(v);
    ck_assert_str_eq(err.fault, "resource_busy");
    ck_assert_int_eq(err.http_status, 200);
}
END_TEST

START_TEST(plain_text_404)
{
    struct vmop_err err = {0};
    cJSON *v = NULL;
    ck_assert_int_eq(parse(404, "404 page not found\n", &v, &err), VMOP_E_NOT_FOUND);
    ck_assert_ptr_null(v);
    ck_assert_str_eq(err.fault, "");
    ck_assert_int_eq(err.http_status, 404);
    ck_assert_ptr_nonnull(strstr(err.msg, "404 page not found"));
}
END_TEST

START_TEST(empty_401_and_500)
{
    struct vmop_err err = {0};
    ck_assert_int_eq(parse(401, "", NULL, &err), VMOP_E_AUTH);
    ck_assert_int_eq(err.http_status, 401);
    vmop_err_clear(&err);
    ck_assert_int_eq(parse(503, "", NULL, &err), VMOP_E_HTTP);
    ck_assert_int_eq(err.http_status, 503);
    vmop_err_clear(&err);
    ck_assert_int_eq(parse(500, "internal failure: boom", NULL, &err), VMOP_E_HTTP);
    ck_assert_ptr_nonnull(strstr(err.msg, "boom"));
}
END_TEST

START_TEST(too_big)
{
    struct vmop_err err = {0};
    ck_assert_int_eq(
        vim_rest_parse_reply(200, "{}", VIM_REST_MAX_JSON + 1, "GET /rest/x", NULL, &err),
        VMOP_E_TOOBIG);
}
END_TEST

START_TEST(long_message_capped)
{
    struct vmop_err err = {0};
    struct vbuf b;
    vbuf_init(&b, 1 << 20);
    vbuf_adds(&b, "{\"type\":\"com.vmware.vapi.std.errors.error\",\"value\":{\"messages\":[\"");
    for (int i = 0; i < 5000; i++)
        vbuf_adds(&b, "x");
    vbuf_adds(&b, "\"]}}");
    ck_assert_int_eq(vbuf_error(&b), VMOP_OK);
    ck_assert_int_eq(parse(400, vbuf_str(&b), NULL, &err), VMOP_E_FAULT);
    ck_assert_uint_lt(strlen(err.msg), VMOP_ERR_MSG_MAX);
    vbuf_free(&b);
}
END_TEST

/* ---- OVF deploy result ---- */

static cJSON *value_of(const char *json)
{
    cJSON *root = cJSON_Parse(json), *v;
    ck_assert_ptr_nonnull(root);
    v = cJSON_DetachItemFromObject(root, "value");
    cJSON_Delete(root);
    return v;
}

START_TEST(ovf_deploy_ok)
{
    struct vmop_err err = {0};
    struct vim_moref vm = {{0}};
    cJSON *v = value_of("{\"value\":{\"succeeded\":true,\"resource_id\":{\"type\":"
                        "\"VirtualMachine\",\"id\":\"vm-92\"}}}");
    ck_assert_int_eq(vim_rest_parse_ovf_deploy(v, &vm, &err), VMOP_OK);
    ck_assert_str_eq(vm.type, "VirtualMachine");
    ck_assert_str_eq(vm.value, "vm-92");
    cJSON_Delete(v);
}
END_TEST

START_TEST(ovf_deploy_error_in_200)
{
    /* recorded from the simulator: a deploy into a pool that does not exist (HTTP 200) */
    struct vmop_err err = {0};
    struct vim_moref vm = {{0}};
    cJSON *v =
        value_of("{\"value\":{\"error\":{\"errors\":[{\"category\":\"SERVER\",\"error\":{"
                 "\"@class\":\"com.vmware.vapi.std.errors.error\",\"messages\":[{"
                 "\"default_message\":\"Post \\\"http://127.0.0.1:32849/sdk\\\": EOF\"}]}}]}}}");
    ck_assert_int_eq(vim_rest_parse_ovf_deploy(v, &vm, &err), VMOP_E_FAULT);
    ck_assert_str_eq(err.fault, "error");
    ck_assert_int_eq(err.http_status, 200);
    ck_assert_ptr_nonnull(strstr(err.msg, "sdk\": EOF"));
    ck_assert_ptr_nonnull(strstr(err.msg, "inside HTTP 200"));
    ck_assert_str_eq(vm.value, ""); /* untouched on failure */
    cJSON_Delete(v);
}
END_TEST

START_TEST(ovf_deploy_succeeded_false_message_form)
{
    struct vmop_err err = {0};
    cJSON *v = value_of("{\"value\":{\"succeeded\":false,\"error\":{\"errors\":[{\"category\":"
                        "\"INPUT\",\"message\":{\"default_message\":\"EULA not accepted\"}}]}}}");
    ck_assert_int_eq(vim_rest_parse_ovf_deploy(v, NULL, &err), VMOP_E_FAULT);
    ck_assert_ptr_nonnull(strstr(err.msg, "EULA not accepted"));
    cJSON_Delete(v);
}
END_TEST

START_TEST(ovf_deploy_bad_shapes)
{
    struct vmop_err err = {0};
    cJSON *v = value_of("{\"value\":{\"succeeded\":true}}");
    ck_assert_int_eq(vim_rest_parse_ovf_deploy(v, NULL, &err), VMOP_E_PROTO);
    cJSON_Delete(v);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_rest_parse_ovf_deploy(NULL, NULL, &err), VMOP_E_PROTO);
    vmop_err_clear(&err);
    v = value_of("{\"value\":{}}"); /* succeeded absent = failure without a message */
    ck_assert_int_eq(vim_rest_parse_ovf_deploy(v, NULL, &err), VMOP_E_FAULT);
    ck_assert_ptr_nonnull(strstr(err.msg, "no error message"));
    cJSON_Delete(v);
}
END_TEST

/* Route templates (the method label of the call metrics): ids and names never appear. */
static void route_is(const char *method, const char *path, const char *want)
{
    char out[VIM_METHOD_NAME_MAX];
    size_t n = vim_rest_route(method, path, out, sizeof(out));
    ck_assert_str_eq(out, want);
    ck_assert_uint_eq(n, strlen(want));
}

START_TEST(route_templates)
{
    route_is("GET", "/rest/com/vmware/content/library", "GET /rest/com/vmware/content/library");
    route_is("GET", "/rest/com/vmware/content/library/id:5e2a-11",
             "GET /rest/com/vmware/content/library/{id}");
    route_is("GET", "/rest/com/vmware/content/library/item?library_id=5e2a%2D11",
             "GET /rest/com/vmware/content/library/item?library_id={id}");
    route_is("POST", "/rest/com/vmware/content/library?~action=find",
             "POST /rest/com/vmware/content/library?~action=find");
    route_is(
        "POST", "/rest/com/vmware/content/library/item/downloadsession/file/id:abc?~action=prepare",
        "POST /rest/com/vmware/content/library/item/downloadsession/file/{id}?~action=prepare");
    route_is("GET", "/rest/vcenter/vm-template/library-items/abcdef",
             "GET /rest/vcenter/vm-template/library-items/{id}");
    route_is("POST", "/rest/vcenter/vm-template/library-items/x?action=deploy",
             "POST /rest/vcenter/vm-template/library-items/{id}?action=deploy");
    route_is("GET", "https://vc.example:443/cls/data/0f1e/ttylinux.ovf", "GET /cls/data/{id}/{id}");
    route_is("GET", "/api/content/library/item?library_id=a&x=1&~action=Evil%20name",
             "GET /api/content/library/item?library_id={id}&x={id}&~action={id}");
    route_is("GET", "/api/x?Weird-Name=1", "GET /api/{id}?{k}={id}");
}
END_TEST

START_TEST(route_too_long)
{
    char out[24];
    vim_rest_route("GET", "/rest/com/vmware/content/library/item", out, sizeof(out));
    ck_assert_str_eq(out, "GET other");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("vim_rest");
    TCase *t = tcase_create("reply");
    tcase_add_test(t, value_string);
    tcase_add_test(t, value_list_and_empty);
    tcase_add_test(t, not_json_200);
    tcase_add_test(t, not_found_typed);
    tcase_add_test(t, typed_errors_rc);
    tcase_add_test(t, messages_as_strings);
    tcase_add_test(t, api_style_error);
    tcase_add_test(t, type_that_is_not_a_type);
    tcase_add_test(t, value_null);
    tcase_add_test(t, error_inside_200);
    tcase_add_test(t, plain_text_404);
    tcase_add_test(t, empty_401_and_500);
    tcase_add_test(t, too_big);
    tcase_add_test(t, long_message_capped);
    suite_add_tcase(s, t);
    tcase_add_test(t, route_templates);
    tcase_add_test(t, route_too_long);
    t = tcase_create("ovf_deploy");
    tcase_add_test(t, ovf_deploy_ok);
    tcase_add_test(t, ovf_deploy_error_in_200);
    tcase_add_test(t, ovf_deploy_succeeded_false_message_form);
    tcase_add_test(t, ovf_deploy_bad_shapes);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return vmop_check_run(suite());
}
