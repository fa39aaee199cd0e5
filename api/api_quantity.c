/* api_quantity.c: Kubernetes resource.Quantity parse/compare/add/format (see api_quantity.h).
 * The parser works on a small decimal digit array so binary suffixes and long fractions stay exact;
 * only the final, rounded nano value is converted to a 128-bit integer. */
#include "api_quantity.h"

#include <stdio.h>
#include <string.h>

/* 10^29 units = 10^38 nano: the value cap. api_i128 holds up to ~1.7 * 10^38. */
static api_i128 qty_max_nano(void)
{
    api_i128 v = 1;
    for (int i = 0; i < 38; i++)
        v *= 10;
    return v;
}

/* Digits of the number being parsed: d[0..n) most significant first, the decimal point sits after
 * `point` digits (point may be negative or beyond n). Room for the text plus growth from * 1024^6.
 */
#define QTY_DIGITS (API_QTY_MAX_TEXT + 32)
struct qty_digits {
    unsigned char d[QTY_DIGITS];
    int n;
    long point;
};

/* d *= m (m small); the array may grow on the left, which moves the point right. */
static void digits_mul(struct qty_digits *q, unsigned m)
{
    unsigned carry = 0;
    for (int i = q->n - 1; i >= 0; i--) {
        unsigned v = q->d[i] * m + carry;
        q->d[i] = (unsigned char)(v % 10);
        carry = v / 10;
    }
    while (carry) {
        memmove(q->d + 1, q->d, (size_t)q->n);
        q->d[0] = (unsigned char)(carry % 10);
        carry /= 10;
        q->n++;
        q->point++;
    }
}

struct qty_suffix {
    const char *s;
    int base;     /* 10 or 2 */
    int exponent; /* power of base */
    enum api_qty_format format;
};

static const struct qty_suffix qty_suffixes[] = {
    {"", 10, 0, API_QTY_DECIMAL_SI},   {"n", 10, -9, API_QTY_DECIMAL_SI},
    {"u", 10, -6, API_QTY_DECIMAL_SI}, {"m", 10, -3, API_QTY_DECIMAL_SI},
    {"k", 10, 3, API_QTY_DECIMAL_SI},  {"M", 10, 6, API_QTY_DECIMAL_SI},
    {"G", 10, 9, API_QTY_DECIMAL_SI},  {"T", 10, 12, API_QTY_DECIMAL_SI},
    {"P", 10, 15, API_QTY_DECIMAL_SI}, {"E", 10, 18, API_QTY_DECIMAL_SI},
    {"Ki", 2, 10, API_QTY_BINARY_SI},  {"Mi", 2, 20, API_QTY_BINARY_SI},
    {"Gi", 2, 30, API_QTY_BINARY_SI},  {"Ti", 2, 40, API_QTY_BINARY_SI},
    {"Pi", 2, 50, API_QTY_BINARY_SI},  {"Ei", 2, 60, API_QTY_BINARY_SI},
};

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Interprets the suffix text [s, s+len). Returns 0 and fills the out values, or -1. */
static int qty_suffix_interpret(const char *s, size_t len, int *base, long *exponent,
                                enum api_qty_format *format)
{
    for (size_t i = 0; i < sizeof(qty_suffixes) / sizeof(qty_suffixes[0]); i++) {
        if (strlen(qty_suffixes[i].s) == len && memcmp(qty_suffixes[i].s, s, len) == 0) {
            *base = qty_suffixes[i].base;
            *exponent = qty_suffixes[i].exponent;
            *format = qty_suffixes[i].format;
            return 0;
        }
    }
    if (len > 1 && (s[0] == 'e' || s[0] == 'E')) {
        size_t i = 1;
        int neg = 0;
        long v = 0;
        if (s[i] == '+' || s[i] == '-')
            neg = s[i++] == '-';
        if (i == len)
            return -1;
        for (; i < len; i++) {
            if (!is_digit(s[i]))
                return -1;
            v = v * 10 + (s[i] - '0');
            if (v > 1000)
                return -1; /* our cap; also keeps v from overflowing */
        }
        *base = 10;
        *exponent = neg ? -v : v;
        *format = API_QTY_DECIMAL_EXPONENT;
        return 0;
    }
    return -1;
}

vmop_rc api_qty_parse(const char *s, struct api_qty *ret, struct vmop_err *err)
{
    struct qty_digits q;
    const char *p, *num, *den = NULL, *suf;
    size_t len, nnum, nden = 0;
    int neg = 0, base;
    long exponent;
    enum api_qty_format format;
    api_i128 nano = 0, cap = qty_max_nano();

    if (!s || !*s)
        return vmop_fail(err, VMOP_E_INVALID,
                         "quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    len = strlen(s);
    if (len > API_QTY_MAX_TEXT)
        return vmop_fail(err, VMOP_E_TOOBIG, "quantity of %zu characters (limit %d)", len,
                         API_QTY_MAX_TEXT);
    p = s;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    num = p;
    while (is_digit(*p))
        p++;
    nnum = (size_t)(p - num);
    if (*p == '.') {
        den = ++p;
        while (is_digit(*p))
            p++;
        nden = (size_t)(p - den);
    }
    if (nnum + nden == 0)
        goto bad;
    /* suffix: letters from the set, then an optional sign, then digits, then the end */
    suf = p;
    while (*p && strchr("eEinumkKMGTP", *p))
        p++;
    if (*p == '+' || *p == '-')
        p++;
    while (is_digit(*p))
        p++;
    if (*p)
        goto bad;
    if (qty_suffix_interpret(suf, (size_t)(p - suf), &base, &exponent, &format))
        goto bad;

    memset(&q, 0, sizeof(q));
    for (size_t i = 0; i < nnum; i++)
        q.d[q.n++] = (unsigned char)(num[i] - '0');
    for (size_t i = 0; i < nden; i++)
        q.d[q.n++] = (unsigned char)(den[i] - '0');
    q.point = (long)nnum;
    if (base == 10) {
        q.point += exponent;
    } else {
        for (long i = 0; i < exponent / 10; i++)
            digits_mul(&q, 1024);
    }
    /* nano = ceil(|value| * 10^9): integer digits up to point+9, anything after rounds up */
    {
        long cut = q.point + 9;
        int rest = 0;
        for (long i = 0; i < cut; i++) {
            int dig = i < q.n ? q.d[i] : 0;
            if (nano == 0 && dig == 0)
                continue;
            if (nano > cap / 10)
                goto toobig;
            nano = nano * 10 + dig;
        }
        for (long i = cut < 0 ? 0 : cut; i < q.n; i++)
            rest |= q.d[i];
        if (rest)
            nano++;
        if (nano >= cap)
            goto toobig;
    }
    if (format == API_QTY_BINARY_SI) {
        api_i128 max = (api_i128)INT64_MAX * API_QTY_NANO;
        if (nano > max)
            nano = max;
        if (nano > 0 && nano < API_QTY_NANO)
            format = API_QTY_DECIMAL_SI;
    }
    ret->nano = neg ? -nano : nano;
    ret->format = format;
    return VMOP_OK;
bad:
    return vmop_fail(err, VMOP_E_INVALID,
                     "quantity '%.64s' must match the regular expression "
                     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                     s);
toobig:
    return vmop_fail(err, VMOP_E_TOOBIG, "quantity '%.64s' is too large", s);
}

/* Appends the decimal digits of v (>= 0) to buf at *pos. */
static int put_i128(char *buf, size_t n, size_t *pos, api_i128 v)
{
    char tmp[48];
    int k = 0;
    do {
        tmp[k++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    if (*pos + (size_t)k >= n)
        return -1;
    while (k)
        buf[(*pos)++] = tmp[--k];
    buf[*pos] = '\0';
    return 0;
}

static int put_str(char *buf, size_t n, size_t *pos, const char *s)
{
    size_t l = strlen(s);
    if (*pos + l >= n)
        return -1;
    memcpy(buf + *pos, s, l + 1);
    *pos += l;
    return 0;
}

vmop_rc api_qty_format(const struct api_qty *q, char *buf, size_t n, struct vmop_err *err)
{
    static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    static const char *const dec[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
    api_i128 m = q->nano < 0 ? -q->nano : q->nano;
    enum api_qty_format format = q->format;
    size_t pos = 0;
    char exp[16];
    int e, r = 0;

    if (n == 0)
        return vmop_fail(err, VMOP_E_TOOBIG, "quantity buffer too small");
    buf[0] = '\0';
    if (m == 0)
        return put_str(buf, n, &pos, "0") ? vmop_fail(err, VMOP_E_TOOBIG, "buffer too small")
                                          : VMOP_OK;
    if (q->nano < 0)
        r |= put_str(buf, n, &pos, "-");
    if (format == API_QTY_BINARY_SI && (m < 1024 * API_QTY_NANO || m % API_QTY_NANO != 0))
        format = API_QTY_DECIMAL_SI;
    if (format == API_QTY_BINARY_SI) {
        m /= API_QTY_NANO;
        for (e = 0; e < 6 && m % 1024 == 0; e++)
            m /= 1024;
        r |= put_i128(buf, n, &pos, m);
        r |= put_str(buf, n, &pos, bin[e]);
    } else {
        e = -9;
        while (m % 10 == 0) {
            m /= 10;
            e++;
        }
        /* exponent to a multiple of 3, moving factors back into the mantissa (e >= -9 here) */
        while (((e % 3) + 3) % 3 != 0) {
            m *= 10;
            e--;
        }
        if (format == API_QTY_DECIMAL_SI && e > 18) {
            while (e > 18) { /* beyond exa: keep the E suffix, grow the mantissa */
                m *= 1000;
                e -= 3;
            }
        }
        r |= put_i128(buf, n, &pos, m);
        if (format == API_QTY_DECIMAL_EXPONENT) {
            if (e != 0) {
                snprintf(exp, sizeof(exp), "e%d", e);
                r |= put_str(buf, n, &pos, exp);
            }
        } else {
            r |= put_str(buf, n, &pos, dec[(e + 9) / 3]);
        }
    }
    if (r) {
        buf[0] = '\0';
        return vmop_fail(err, VMOP_E_TOOBIG, "quantity buffer of %zu bytes too small", n);
    }
    return VMOP_OK;
}

int api_qty_cmp(const struct api_qty *a, const struct api_qty *b)
{
    return a->nano < b->nano ? -1 : a->nano > b->nano ? 1 : 0;
}

int api_qty_sign(const struct api_qty *q)
{
    return q->nano < 0 ? -1 : q->nano > 0 ? 1 : 0;
}

static vmop_rc qty_result(api_i128 v, const struct api_qty *a, const struct api_qty *b,
                          struct api_qty *ret, struct vmop_err *err)
{
    api_i128 cap = qty_max_nano();
    if (v >= cap || v <= -cap)
        return vmop_fail(err, VMOP_E_TOOBIG, "quantity arithmetic overflow");
    ret->nano = v;
    ret->format = a->nano == 0 ? b->format : a->format;
    return VMOP_OK;
}

vmop_rc api_qty_add(const struct api_qty *a, const struct api_qty *b, struct api_qty *ret,
                    struct vmop_err *err)
{
    api_i128 v;
    /* Operands are below the cap (10^38) but two of them can exceed 2^127: check the add. */
    if (__builtin_add_overflow(a->nano, b->nano, &v))
        return vmop_fail(err, VMOP_E_TOOBIG, "quantity arithmetic overflow");
    return qty_result(v, a, b, ret, err);
}

vmop_rc api_qty_sub(const struct api_qty *a, const struct api_qty *b, struct api_qty *ret,
                    struct vmop_err *err)
{
    api_i128 v;
    if (__builtin_sub_overflow(a->nano, b->nano, &v))
        return vmop_fail(err, VMOP_E_TOOBIG, "quantity arithmetic overflow");
    return qty_result(v, a, b, ret, err);
}

struct api_qty api_qty_from_int(int64_t units, enum api_qty_format format)
{
    struct api_qty q = {(api_i128)units * API_QTY_NANO, format};
    return q;
}

struct api_qty api_qty_from_milli(int64_t milli, enum api_qty_format format)
{
    struct api_qty q = {(api_i128)milli * 1000000, format};
    if (format == API_QTY_BINARY_SI && q.nano % API_QTY_NANO != 0)
        q.format = API_QTY_DECIMAL_SI;
    return q;
}

/* ceil(|nano| / div) with the sign restored, checked against int64. */
static vmop_rc qty_scaled(const struct api_qty *q, api_i128 div, int64_t *ret, struct vmop_err *err)
{
    api_i128 m = q->nano < 0 ? -q->nano : q->nano;
    api_i128 v = m / div + (m % div != 0);
    if (v > INT64_MAX)
        return vmop_fail(err, VMOP_E_TOOBIG, "quantity does not fit in 64 bits");
    *ret = q->nano < 0 ? -(int64_t)v : (int64_t)v;
    return VMOP_OK;
}

vmop_rc api_qty_to_int(const struct api_qty *q, int64_t *ret, struct vmop_err *err)
{
    return qty_scaled(q, API_QTY_NANO, ret, err);
}

vmop_rc api_qty_to_milli(const struct api_qty *q, int64_t *ret, struct vmop_err *err)
{
    return qty_scaled(q, 1000000, ret, err);
}

vmop_rc api_qty_to_mib_ceil(const struct api_qty *q, int64_t *ret, struct vmop_err *err)
{
    if (q->nano < 0)
        return vmop_fail(err, VMOP_E_INVALID, "negative quantity has no size in MiB");
    return qty_scaled(q, API_QTY_NANO * API_QTY_MIB, ret, err);
}

int api_qty_is_multiple_of(const struct api_qty *q, int64_t unit)
{
    if (unit <= 0)
        return 0;
    return q->nano % (API_QTY_NANO * unit) == 0;
}
