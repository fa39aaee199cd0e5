/* test_base.c: unit tests for api/base (vmop_err, vbuf). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "vbuf.h"
#include "vmop_err.h"

START_TEST(first_error_sticks)
{
    struct vmop_err err = {0};
    ck_assert_int_eq(vmop_fail(&err, VMOP_E_FAULT, "inner %d", 1), VMOP_E_FAULT);
    ck_assert_int_eq(vmop_fail(&err, VMOP_E_PROTO, "outer"), VMOP_E_PROTO);
    ck_assert_int_eq(err.rc, VMOP_E_FAULT);
    ck_assert_str_eq(err.msg, "inner 1");
    vmop_err_clear(&err);
    ck_assert_int_eq(err.rc, VMOP_OK);
    vmop_fail_fault(&err, VMOP_E_FAULT, "InvalidPowerState", 500, "line1\nline2");
    ck_assert(vmop_err_is_fault(&err, "InvalidPowerState"));
    ck_assert_int_eq(err.http_status, 500);
    ck_assert_str_eq(err.msg, "line1 line2");
    ck_assert_str_ne(vmop_rc_str(VMOP_E_TIMEOUT), "unknown error code");
    ck_assert_str_eq(vmop_rc_str((vmop_rc)999), "unknown error code");
}
END_TEST

START_TEST(vbuf_grows_and_caps)
{
    struct vbuf b;
    vbuf_init(&b, 10);
    ck_assert_int_eq(vbuf_adds(&b, "12345"), VMOP_OK);
    ck_assert_int_eq(vbuf_addf(&b, "%d", 6789), VMOP_OK);
    ck_assert_str_eq(vbuf_str(&b), "123456789");
    ck_assert_int_eq(vbuf_adds(&b, "ab"), VMOP_E_TOOBIG);
    ck_assert_int_eq(vbuf_error(&b), VMOP_E_TOOBIG);
    ck_assert_str_eq(vbuf_str(&b), "");
    ck_assert_int_eq(vbuf_adds(&b, "x"), VMOP_E_TOOBIG); /* sticky */
    ck_assert_ptr_null(vbuf_take(&b));
    vbuf_reset(&b);
    ck_assert_int_eq(vbuf_adds(&b, "ok"), VMOP_OK);
    char *s = vbuf_take(&b);
    ck_assert_str_eq(s, "ok");
    free(s);
    vbuf_free(&b);
}
END_TEST

START_TEST(vbuf_xml_escaping)
{
    struct vbuf b;
    vbuf_init(&b, 0);
    vbuf_add_xml_elem(&b, "name", "a&b<c>\"d'e\x01\tf");
    ck_assert_str_eq(vbuf_str(&b), "<name>a&amp;b&lt;c&gt;&quot;d&apos;e\tf</name>");
    vbuf_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("base");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, first_error_sticks);
    tcase_add_test(tc, vbuf_grows_and_caps);
    tcase_add_test(tc, vbuf_xml_escaping);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
