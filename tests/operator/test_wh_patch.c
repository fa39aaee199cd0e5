/* test_wh_patch.c: unit tests of operator/webhook/wh_patch.c: JSON Pointer escaping (~0, ~1),
 * single operations, and the object-level diff (add, replace, remove, nested objects, arrays and
 * type changes replaced whole, equal documents, the depth cap). Suite: unit. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "wh_limits.h"
#include "wh_patch.h"

static cJSON *parse(const char *s)
{
    cJSON *j = cJSON_Parse(s);
    ck_assert_msg(j != NULL, "bad test JSON: %s", s);
    return j;
}

/* diff(a, b) printed, compared with the expected patch text */
static void check_diff(const char *a, const char *b, const char *want)
{
    cJSON *ja = parse(a), *jb = parse(b), *patch = NULL, *jw = parse(want);
    struct vmop_err err = {0};
    char *got;
    ck_assert_msg(wh_patch_diff(ja, jb, &patch, &err) == VMOP_OK, "%s", err.msg);
    got = cJSON_PrintUnformatted(patch);
    ck_assert_msg(cJSON_Compare(patch, jw, 1), "diff %s -> %s: got %s, want %s", a, b, got, want);
    free(got);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    cJSON_Delete(jw);
    cJSON_Delete(patch);
}

START_TEST(pointer_escaping)
{
    struct vbuf b;
    vbuf_init(&b, 1024);
    wh_patch_pointer_add(&b, "metadata");
    wh_patch_pointer_add(&b, "annotations");
    wh_patch_pointer_add(&b, "vmoperator.vmware.com/a~b");
    ck_assert_str_eq(vbuf_str(&b), "/metadata/annotations/vmoperator.vmware.com~1a~0b");
    vbuf_reset(&b);
    wh_patch_pointer_add(&b, "~1");
    wh_patch_pointer_add(&b, "");
    wh_patch_pointer_add(&b, "//~~");
    ck_assert_str_eq(vbuf_str(&b), "/~01//~1~1~0~0");
    vbuf_free(&b);
}
END_TEST

START_TEST(single_ops)
{
    cJSON *patch = cJSON_CreateArray(), *v = cJSON_CreateString("x");
    struct vmop_err err = {0};
    char *s;
    ck_assert_int_eq(wh_patch_op(patch, "add", "/spec/a", v, &err), VMOP_OK);
    ck_assert_int_eq(wh_patch_op(patch, "remove", "/spec/b", NULL, &err), VMOP_OK);
    s = cJSON_PrintUnformatted(patch);
    ck_assert_str_eq(s, "[{\"op\":\"add\",\"path\":\"/spec/a\",\"value\":\"x\"},"
                        "{\"op\":\"remove\",\"path\":\"/spec/b\"}]");
    free(s);
    cJSON_Delete(v); /* copied, still ours */
    cJSON_Delete(patch);
}
END_TEST

START_TEST(diff_cases)
{
    check_diff("{\"a\":1}", "{\"a\":1}", "[]");
    check_diff("{}", "{\"spec\":{\"instanceUUID\":\"u\"}}",
               "[{\"op\":\"add\",\"path\":\"/spec\",\"value\":{\"instanceUUID\":\"u\"}}]");
    check_diff("{\"spec\":{\"x\":1}}", "{\"spec\":{\"x\":1,\"biosUUID\":\"b\"}}",
               "[{\"op\":\"add\",\"path\":\"/spec/biosUUID\",\"value\":\"b\"}]");
    check_diff("{\"spec\":{\"x\":1}}", "{\"spec\":{\"x\":2}}",
               "[{\"op\":\"replace\",\"path\":\"/spec/x\",\"value\":2}]");
    check_diff("{\"a\":1,\"b\":2}", "{\"b\":2}", "[{\"op\":\"remove\",\"path\":\"/a\"}]");
    /* arrays and type changes are replaced whole */
    check_diff("{\"l\":[1,2]}", "{\"l\":[1,2,3]}",
               "[{\"op\":\"replace\",\"path\":\"/l\",\"value\":[1,2,3]}]");
    check_diff("{\"l\":[1,2]}", "{\"l\":[1,2]}", "[]");
    check_diff("{\"t\":\"s\"}", "{\"t\":{\"k\":null}}",
               "[{\"op\":\"replace\",\"path\":\"/t\",\"value\":{\"k\":null}}]");
    check_diff("{\"n\":null}", "{\"n\":false}",
               "[{\"op\":\"replace\",\"path\":\"/n\",\"value\":false}]");
    /* keys that need escaping */
    check_diff(
        "{\"metadata\":{\"annotations\":{}}}",
        "{\"metadata\":{\"annotations\":{\"delete.check.vmoperator.vmware.com/x~y\":\"1\"}}}",
        "[{\"op\":\"add\",\"path\":"
        "\"/metadata/annotations/delete.check.vmoperator.vmware.com~1x~0y\",\"value\":\"1\"}]");
    /* the root itself */
    check_diff("[1]", "{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":{\"a\":1}}]");
    /* several changes at several depths, removes first within one object */
    check_diff("{\"a\":{\"b\":{\"c\":1,\"d\":2}},\"e\":3}",
               "{\"a\":{\"b\":{\"c\":5,\"f\":6}},\"e\":3}",
               "[{\"op\":\"remove\",\"path\":\"/a/b/d\"},"
               "{\"op\":\"replace\",\"path\":\"/a/b/c\",\"value\":5},"
               "{\"op\":\"add\",\"path\":\"/a/b/f\",\"value\":6}]");
}
END_TEST

/* {"k":{"k":...{"k":leaf}}} n levels deep */
static cJSON *nested(int n, int leaf)
{
    cJSON *root = cJSON_CreateObject(), *o = root;
    for (int i = 0; i < n; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "k", c);
        o = c;
    }
    cJSON_AddNumberToObject(o, "leaf", leaf);
    return root;
}

START_TEST(depth_cap)
{
    struct vmop_err err = {0};
    cJSON *a = nested(WH_MAX_PATCH_DEPTH - 2, 1), *b = nested(WH_MAX_PATCH_DEPTH - 2, 2);
    cJSON *patch = NULL;
    ck_assert_int_eq(wh_patch_diff(a, b, &patch, &err), VMOP_OK);
    ck_assert_int_eq(cJSON_GetArraySize(patch), 1);
    cJSON_Delete(patch);
    cJSON_Delete(a);
    cJSON_Delete(b);
    patch = NULL;
    a = nested(WH_MAX_PATCH_DEPTH + 5, 1);
    b = nested(WH_MAX_PATCH_DEPTH + 5, 2);
    ck_assert_int_eq(wh_patch_diff(a, b, &patch, &err), VMOP_E_TOOBIG);
    ck_assert_ptr_null(patch);
    cJSON_Delete(a);
    cJSON_Delete(b);
    vmop_err_clear(&err);
    ck_assert_int_eq(wh_patch_diff(NULL, b, &patch, &err), VMOP_E_INVALID);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("wh_patch");
    TCase *tc = tcase_create("patch");
    tcase_add_test(tc, pointer_escaping);
    tcase_add_test(tc, single_ops);
    tcase_add_test(tc, diff_cases);
    tcase_add_test(tc, depth_cap);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
