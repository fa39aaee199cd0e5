/* test_api_quantity.c: unit tests for api_quantity (parse, canonical form, compare, arithmetic,
 * conversions). Expected values follow k8s.io/apimachinery resource.Quantity behaviour. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "api_quantity.h"

static const char *canon(const char *in)
{
    static char buf[API_QTY_STR_MAX];
    struct api_qty q;
    struct vmop_err err = {0};
    if (api_qty_parse(in, &q, &err) != VMOP_OK)
        return "ERR";
    if (api_qty_format(&q, buf, sizeof(buf), &err) != VMOP_OK)
        return "FMTERR";
    return buf;
}

static const struct {
    const char *in, *out;
} canon_cases[] = {
    {"0", "0"},
    {"0n", "0"},
    {"0Ki", "0"},
    {"-0", "0"},
    {"1", "1"},
    {"1Ki", "1Ki"},
    {"8Ki", "8Ki"},
    {"7Mi", "7Mi"},
    {"6Gi", "6Gi"},
    {"5Ti", "5Ti"},
    {"4Pi", "4Pi"},
    {"3Ei", "3Ei"},
    {"1024Mi", "1Gi"},
    {"300Mi", "300Mi"},
    {"307200Ki", "300Mi"},
    {"1.5Gi", "1536Mi"},
    {"0.5Mi", "512Ki"},
    {"0.5Ki", "512"},
    {"1025", "1025"},
    {"5n", "5n"},
    {"4u", "4u"},
    {"3m", "3m"},
    {"500m", "500m"},
    {"8k", "8k"},
    {"50k", "50k"},
    {"7M", "7M"},
    {"100M", "100M"},
    {"1000M", "1G"},
    {"6G", "6G"},
    {"5T", "5T"},
    {"40T", "40T"},
    {"2P", "2P"},
    {"1E", "1E"},
    {"12E", "12E"},
    {"1e3", "1e3"},
    {"1E-3", "1e-3"},
    {"1E6", "1e6"},
    {"1e9", "1e9"},
    {"80e-3", "80e-3"},
    {"300e6", "300e6"},
    {"1.2e3", "1200"},
    {"1.3E+6", "1300e3"},
    {"1.5", "1500m"},
    {"1.08", "1080m"},
    {"0.001", "1m"},
    {".001", "1m"},
    {".0001k", "100m"},
    {"1.", "1"},
    {"1.G", "1G"},
    {"0.0005k", "500m"},
    {"100.035k", "100035"},
    {"10.035M", "10035k"},
    {"9.01", "9010m"},
    {"-9.01", "-9010m"},
    {"8.1k", "8100"},
    {"2.5P", "2500T"},
    {"3.001n", "4n"},
    {"1.1E-9", "2e-9"},
    {"0.0000000001", "1n"},
    {"0.5e-9", "1e-9"},
    {"0.00000012345", "124n"},
    {".001Ki", "1024m"},
    {".000001Ki", "1024u"},
    {".000000001Ki", "1024n"},
    {".000000000001Ki", "2n"},
    {"100.035Ki", "102435840m"},
    {"9Ei", "9223372036854775807"},
    {"9223372036854775807Ki", "9223372036854775807"},
    {"+2Gi", "2Gi"},
    {"-2Gi", "-2Gi"},
    {"1e21", "1e21"},
    {"1000000000000000000000", "1000E"},
};

START_TEST(canonical_forms)
{
    for (size_t i = 0; i < sizeof(canon_cases) / sizeof(canon_cases[0]); i++)
        ck_assert_msg(strcmp(canon(canon_cases[i].in), canon_cases[i].out) == 0,
                      "%s: expected %s, got %s", canon_cases[i].in, canon_cases[i].out,
                      canon(canon_cases[i].in));
}
END_TEST

START_TEST(invalid_inputs)
{
    static const char *bad[] = {"",     "1.1.M",  "1+1.0M",  "0.1mi", "0.1am", "aoeu", ".5i",
                                "1i",   "-3.01i", "-3.01e-", " 1",    "1 ",    ".",    "-",
                                "+",    "1K",     "1Gib",    "1e",    "e3",    "1.5.", "1-",
                                "0x10", "1e1001", "1m2",     "--1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct api_qty q;
        struct vmop_err err = {0};
        ck_assert_msg(api_qty_parse(bad[i], &q, &err) != VMOP_OK, "'%s' parsed", bad[i]);
        ck_assert_int_ne(err.rc, VMOP_OK);
    }
}
END_TEST

START_TEST(caps)
{
    struct api_qty q;
    struct vmop_err err = {0};
    char longs[API_QTY_MAX_TEXT + 2];
    memset(longs, '1', sizeof(longs) - 1);
    longs[sizeof(longs) - 1] = '\0';
    ck_assert_int_eq(api_qty_parse(longs, &q, &err), VMOP_E_TOOBIG);
    vmop_err_clear(&err);
    ck_assert_int_eq(api_qty_parse("1e30", &q, &err), VMOP_E_TOOBIG);
    vmop_err_clear(&err);
    ck_assert_int_eq(api_qty_parse("1e28", &q, &err), VMOP_OK);
    ck_assert_int_eq(api_qty_parse("1e-1000", &q, &err), VMOP_OK); /* rounds up to 1n */
    ck_assert(q.nano == 1);
    char small[4];
    ck_assert_int_eq(api_qty_parse("1234567", &q, &err), VMOP_OK);
    ck_assert_int_eq(api_qty_format(&q, small, sizeof(small), &err), VMOP_E_TOOBIG);
}
END_TEST

static struct api_qty P(const char *s) {
    struct api_qty q;
    struct vmop_err err = {0};
    ck_assert_int_eq(api_qty_parse(s, &q, &err), VMOP_OK);
    return q;
}

START_TEST(compare)
{
    struct api_qty a = P("1Ki"), b = P("1024"), c = P("100m"), d = P("50m");
    ck_assert_int_eq(api_qty_cmp(&a, &b), 0);
    ck_assert_int_eq(api_qty_cmp(&c, &d), 1);
    ck_assert_int_eq(api_qty_cmp(&d, &c), -1);
    a = P("10000T");
    b = P("100Gi");
    ck_assert_int_eq(api_qty_cmp(&a, &b), 1);
    a = P("2000m");
    b = P("2");
    ck_assert_int_eq(api_qty_cmp(&a, &b), 0);
    a = P("8Gi");
    b = P("8G");
    ck_assert_int_eq(api_qty_cmp(&a, &b), 1);
    ck_assert_int_eq(api_qty_sign(&d), 1);
    a = P("-1");
    ck_assert_int_eq(api_qty_sign(&a), -1);
}
END_TEST

START_TEST(arithmetic)
{
    struct vmop_err err = {0};
    struct api_qty a = P("1Gi"), z = P("0"), r;
    char buf[API_QTY_STR_MAX];
    ck_assert_int_eq(api_qty_add(&a, &z, &r, &err), VMOP_OK);
    api_qty_format(&r, buf, sizeof(buf), &err);
    ck_assert_str_eq(buf, "1Gi");
    ck_assert_int_eq(api_qty_add(&z, &a, &r, &err), VMOP_OK); /* zero takes the other format */
    api_qty_format(&r, buf, sizeof(buf), &err);
    ck_assert_str_eq(buf, "1Gi");
    ck_assert_int_eq(api_qty_sub(&z, &a, &r, &err), VMOP_OK);
    api_qty_format(&r, buf, sizeof(buf), &err);
    ck_assert_str_eq(buf, "-1Gi");
    struct api_qty b = P("100m"), c = P("1");
    ck_assert_int_eq(api_qty_add(&b, &c, &r, &err), VMOP_OK);
    api_qty_format(&r, buf, sizeof(buf), &err);
    ck_assert_str_eq(buf, "1100m");
    struct api_qty big = P("9e28");
    ck_assert_int_eq(api_qty_add(&big, &big, &r, &err), VMOP_E_TOOBIG);
}
END_TEST

START_TEST(conversions)
{
    struct vmop_err err = {0};
    int64_t v;
    struct api_qty q = P("1500m");
    ck_assert_int_eq(api_qty_to_milli(&q, &v, &err), VMOP_OK);
    ck_assert_int_eq(v, 1500);
    ck_assert_int_eq(api_qty_to_int(&q, &v, &err), VMOP_OK);
    ck_assert_int_eq(v, 2); /* rounds up */
    q = P("1n");
    ck_assert_int_eq(api_qty_to_milli(&q, &v, &err), VMOP_OK);
    ck_assert_int_eq(v, 1);
    q = P("2Gi");
    ck_assert_int_eq(api_qty_to_mib_ceil(&q, &v, &err), VMOP_OK);
    ck_assert_int_eq(v, 2048);
    q = P("1G");
    ck_assert_int_eq(api_qty_to_mib_ceil(&q, &v, &err), VMOP_OK);
    ck_assert_int_eq(v, 954); /* 953.67 rounded up */
    ck_assert(api_qty_is_multiple_of(&q, 1000));
    ck_assert(!api_qty_is_multiple_of(&q, API_QTY_MIB));
    q = P("10Gi");
    ck_assert(api_qty_is_multiple_of(&q, API_QTY_MIB));
    q = P("1e20");
    ck_assert_int_eq(api_qty_to_int(&q, &v, &err), VMOP_E_TOOBIG);
    vmop_err_clear(&err);
    q = P("-1");
    ck_assert_int_eq(api_qty_to_mib_ceil(&q, &v, &err), VMOP_E_INVALID);
    char buf[API_QTY_STR_MAX];
    q = api_qty_from_int(1024, API_QTY_BINARY_SI);
    api_qty_format(&q, buf, sizeof(buf), &err);
    ck_assert_str_eq(buf, "1Ki");
    q = api_qty_from_int(1234000, API_QTY_DECIMAL_SI);
    api_qty_format(&q, buf, sizeof(buf), &err);
    ck_assert_str_eq(buf, "1234k");
    q = api_qty_from_int(1000000, API_QTY_DECIMAL_EXPONENT);
    api_qty_format(&q, buf, sizeof(buf), &err);
    ck_assert_str_eq(buf, "1e6");
    q = api_qty_from_milli(1024, API_QTY_BINARY_SI);
    api_qty_format(&q, buf, sizeof(buf), &err);
    ck_assert_str_eq(buf, "1024m");
    q = api_qty_from_milli(1000, API_QTY_DECIMAL_SI);
    api_qty_format(&q, buf, sizeof(buf), &err);
    ck_assert_str_eq(buf, "1");
}
END_TEST

static Suite *quantity_suite(void)
{
    Suite *s = suite_create("api_quantity");
    TCase *tc = tcase_create("quantity");
    tcase_add_test(tc, canonical_forms);
    tcase_add_test(tc, invalid_inputs);
    tcase_add_test(tc, caps);
    tcase_add_test(tc, compare);
    tcase_add_test(tc, arithmetic);
    tcase_add_test(tc, conversions);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return vmop_check_run(quantity_suite());
}
