/* test_base.c: unit tests for api/base (vmop_err, vbuf). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "vbuf.h"
#include "vmop_base64.h"
#include "vmop_clock.h"
#include "vmop_err.h"
#include "vmop_map.h"
#include "vmop_rv.h"

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

/* RFC 4648 section 10 vectors, both ways; strict refuses what only looks like base64 */
START_TEST(base64_vectors_and_modes)
{
    static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const enc[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
                                      "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    struct vmop_err err = {0};
    char *out;
    size_t n;
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
        ck_assert_int_eq(vmop_base64_encode(plain[i], strlen(plain[i]), &out, &err), VMOP_OK);
        ck_assert_str_eq(out, enc[i]);
        free(out);
        ck_assert_int_eq(
            vmop_base64_decode(enc[i], strlen(enc[i]), VMOP_B64_LENIENT, &out, &n, &err), VMOP_OK);
        ck_assert_uint_eq(n, strlen(plain[i]));
        ck_assert_str_eq(out, plain[i]);
        vmop_free_secret_n(out, n + 1);
    }
    /* lenient: URL-safe alphabet, no padding, whitespace */
    ck_assert_int_eq(vmop_base64_decode("Zm9v\nYg", 7, VMOP_B64_LENIENT, &out, &n, &err), VMOP_OK);
    ck_assert_str_eq(out, "foob");
    vmop_free_secret(out);
    ck_assert_int_eq(vmop_base64_decode("-_8", 3, VMOP_B64_LENIENT, &out, &n, &err), VMOP_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq((unsigned char)out[0], 0xfb);
    vmop_free_secret(out);
    /* strict: canonical only */
    ck_assert_int_eq(vmop_base64_decode("Zm9vYg==", 8, VMOP_B64_STRICT, &out, &n, &err), VMOP_OK);
    vmop_free_secret(out);
    ck_assert_int_eq(vmop_base64_decode("Zm9vYg", 6, VMOP_B64_STRICT, &out, &n, &err),
                     VMOP_E_INVALID);
    ck_assert_int_eq(vmop_base64_decode("-_8=", 4, VMOP_B64_STRICT, &out, &n, &err),
                     VMOP_E_INVALID);
    ck_assert_int_eq(vmop_base64_decode("", 0, VMOP_B64_STRICT, &out, &n, &err), VMOP_E_INVALID);
    ck_assert_int_eq(vmop_base64_decode("Zm9v=", 5, VMOP_B64_STRICT, &out, &n, &err),
                     VMOP_E_INVALID);
    ck_assert_int_eq(vmop_base64_decode("#cloud-config", 13, VMOP_B64_LENIENT, &out, &n, &err),
                     VMOP_E_INVALID);
    ck_assert_int_eq(vmop_base64_decode("Zg=a", 4, VMOP_B64_LENIENT, &out, &n, &err),
                     VMOP_E_INVALID);
}
END_TEST

START_TEST(resource_versions)
{
    ck_assert_int_eq(vmop_rv_cmp("9", "10"), -1); /* revisions: numbers, not strings */
    ck_assert_int_eq(vmop_rv_cmp("10", "9"), 1);
    ck_assert_int_eq(vmop_rv_cmp("10", "10"), 0);
    ck_assert_int_eq(vmop_rv_cmp("abc", "abd"), -2); /* not revisions: unordered */
    ck_assert_int_eq(vmop_rv_cmp("abc", "abc"), 0);
    ck_assert_int_eq(vmop_rv_cmp("12", "x11"), -2);
    ck_assert_int_eq(vmop_rv_cmp("", ""), 0);
    ck_assert_int_eq(vmop_rv_cmp("", "1"), -2);
    ck_assert_int_eq(vmop_rv_cmp("12345678901234567890", "1"), -2); /* over 19 digits */
    ck_assert_int_eq(vmop_rv_cmp(NULL, NULL), 0);
    ck_assert_int_eq(vmop_rv_cmp(NULL, "1"), -2);
    ck_assert_int_eq(vmop_rv_cmp("1", NULL), -2);
}
END_TEST

START_TEST(mono_timespec)
{
    struct timespec ts;
    vmop_mono_timespec(12345, &ts);
    ck_assert_int_eq((long)ts.tv_sec, 12);
    ck_assert_int_eq(ts.tv_nsec, 345000000L);
    vmop_mono_timespec(0, &ts);
    ck_assert_int_eq((long)ts.tv_sec, 0);
    ck_assert_int_eq(ts.tv_nsec, 0);
}
END_TEST

START_TEST(map_and_clock)
{
    struct vmop_map m;
    struct vmop_map_iter it;
    char key[16];
    size_t seen = 0;
    int64_t t0 = vmop_mono_ms();
    vmop_map_init(&m, free);
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        ck_assert_int_eq(vmop_map_put(&m, key, strdup(key)), VMOP_OK);
    }
    ck_assert_uint_eq(m.len, 1000);
    ck_assert_str_eq(vmop_map_get(&m, "k999"), "k999");
    ck_assert_int_eq(vmop_map_del(&m, "k5"), 1);
    ck_assert(!vmop_map_has(&m, "k5"));
    for (struct vmop_map_entry *e = vmop_map_first(&m, &it); e; e = vmop_map_next(&m, &it))
        seen++;
    ck_assert_uint_eq(seen, 999);
    vmop_map_clear(&m);
    ck_assert_uint_eq(m.len, 0);
    vmop_sleep_ms(5, NULL);
    ck_assert_int_ge(vmop_mono_ms() - t0, 5);
    for (int i = 0; i < 100; i++) {
        int64_t j = vmop_jitter_ms(100, 0.5);
        ck_assert(j >= 100 && j <= 150);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("base");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, first_error_sticks);
    tcase_add_test(tc, vbuf_grows_and_caps);
    tcase_add_test(tc, vbuf_xml_escaping);
    tcase_add_test(tc, base64_vectors_and_modes);
    tcase_add_test(tc, map_and_clock);
    tcase_add_test(tc, resource_versions);
    tcase_add_test(tc, mono_timespec);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
