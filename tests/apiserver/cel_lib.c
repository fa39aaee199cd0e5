/* cel_lib.c: the functions of the CEL subset (cel.h): standard conversions and string functions,
 * Kubernetes' list and quantity libraries, and resource.Quantity parsing/comparison. */
#include "cel_int.h"
#include "schema_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fdef {
    const char *name;
    int method; /* 1 method, 0 global */
    int min, max;
};

static const struct fdef fns[] = {
    {"size", 0, 1, 1},          {"int", 0, 1, 1},        {"uint", 0, 1, 1},
    {"double", 0, 1, 1},        {"string", 0, 1, 1},     {"bool", 0, 1, 1},
    {"dyn", 0, 1, 1},           {"matches", 0, 2, 2},    {"quantity", 0, 1, 1},
    {"isQuantity", 0, 1, 1},    {"size", 1, 0, 0},       {"matches", 1, 1, 1},
    {"startsWith", 1, 1, 1},    {"endsWith", 1, 1, 1},   {"contains", 1, 1, 1},
    {"lowerAscii", 1, 0, 0},    {"upperAscii", 1, 0, 0}, {"trim", 1, 0, 0},
    {"split", 1, 1, 1},         {"join", 1, 0, 1},       {"indexOf", 1, 1, 1},
    {"lastIndexOf", 1, 1, 1},   {"replace", 1, 2, 2},    {"substring", 1, 1, 2},
    {"charAt", 1, 1, 1},        {"isSorted", 1, 0, 0},   {"sum", 1, 0, 0},
    {"min", 1, 0, 0},           {"max", 1, 0, 0},        {"isLessThan", 1, 1, 1},
    {"isGreaterThan", 1, 1, 1}, {"compareTo", 1, 1, 1},  {"add", 1, 1, 1},
    {"sub", 1, 1, 1},           {"asInteger", 1, 0, 0},  {"asApproximateFloat", 1, 0, 0},
    {"sign", 1, 0, 0},          {"isInteger", 1, 0, 0},  {NULL, 0, 0, 0},
};

int cel_known_function(const char *name, int is_method, int nargs)
{
    for (int i = 0; fns[i].name; i++)
        if (fns[i].method == is_method && !strcmp(fns[i].name, name) && nargs >= fns[i].min &&
            nargs <= fns[i].max)
            return 1;
    return 0;
}

/* ---- resource.Quantity ---- */

static int mul_pow10(long long *m, int k)
{
    while (k-- > 0)
        if (__builtin_mul_overflow(*m, 10LL, m))
            return -1;
    return 0;
}

int cel_quantity_parse(const char *s, struct cel_quantity *ret_q)
{
    long long mant = 0;
    int exp10 = 0, neg = 0, digits = 0, frac = 0;
    const char *p = s;

    if (!s || !*s)
        return -1;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    for (; isdigit((unsigned char)*p) || (*p == '.' && !frac); p++) {
        if (*p == '.') {
            frac = 1;
            continue;
        }
        digits++;
        if (mant > 99999999999999999LL) { /* keep 17 significant digits; scale the rest */
            if (!frac)
                exp10++;
            continue;
        }
        mant = mant * 10 + (*p - '0');
        if (frac)
            exp10--;
    }
    if (!digits)
        return -1;
    if (*p == 'e' || *p == 'E') {
        char *end;
        long e;
        errno = 0;
        e = strtol(p + 1, &end, 10);
        if (end == p + 1 || *end || errno || e > 300 || e < -300)
            return -1;
        exp10 += (int)e;
    } else if (*p) {
        static const struct {
            const char *suf;
            int bin; /* power of 1024 */
            int dec; /* power of 10 */
        } sufs[] = {{"Ki", 1, 0}, {"Mi", 2, 0}, {"Gi", 3, 0}, {"Ti", 4, 0}, {"Pi", 5, 0},
                    {"Ei", 6, 0}, {"n", 0, -9}, {"u", 0, -6}, {"m", 0, -3}, {"k", 0, 3},
                    {"M", 0, 6},  {"G", 0, 9},  {"T", 0, 12}, {"P", 0, 15}, {"E", 0, 18}};
        size_t i;
        for (i = 0; i < sizeof(sufs) / sizeof(sufs[0]); i++)
            if (!strcmp(p, sufs[i].suf))
                break;
        if (i == sizeof(sufs) / sizeof(sufs[0]))
            return -1;
        for (int k = 0; k < sufs[i].bin; k++)
            if (__builtin_mul_overflow(mant, 1024LL, &mant))
                return -1;
        exp10 += sufs[i].dec;
    }
    ret_q->mant = neg ? -mant : mant;
    ret_q->exp10 = exp10;
    return 0;
}

static void q_norm(struct cel_quantity *q)
{
    if (q->mant == 0) {
        q->exp10 = 0;
        return;
    }
    while (q->mant % 10 == 0) {
        q->mant /= 10;
        q->exp10++;
    }
}

int cel_quantity_cmp(const struct cel_quantity *a0, const struct cel_quantity *b0)
{
    struct cel_quantity a = *a0, b = *b0;
    int sa, sb;
    q_norm(&a);
    q_norm(&b);
    sa = (a.mant > 0) - (a.mant < 0);
    sb = (b.mant > 0) - (b.mant < 0);
    if (sa != sb || sa == 0)
        return sa < sb ? -1 : sa > sb;
    /* Same sign: bring the larger exponent down to the smaller one. */
    __int128 x = a.mant, y = b.mant;
    int d = a.exp10 - b.exp10;
    __int128 *big = d > 0 ? &x : &y;
    for (int k = d > 0 ? d : -d; k > 0; k--) {
        if (__builtin_mul_overflow(*big, (__int128)10, big))
            return (big == &x) == (sa > 0) ? 1 : -1; /* magnitude beyond the other */
    }
    return x < y ? -1 : x > y;
}

static int q_to_int(const struct cel_quantity *q0, long long *ret)
{
    struct cel_quantity q = *q0;
    q_norm(&q);
    if (q.exp10 < 0)
        return -1;
    if (mul_pow10(&q.mant, q.exp10))
        return -1;
    *ret = q.mant;
    return 0;
}

static double q_to_double(const struct cel_quantity *q)
{
    return (double)q->mant * pow(10.0, q->exp10);
}

static struct cel_val q_addsub(struct cel_eval *e, struct cel_quantity a, struct cel_quantity b,
                               int sub)
{
    struct cel_val r = {.k = CV_QUANTITY};
    q_norm(&a);
    q_norm(&b);
    int target = a.exp10 < b.exp10 ? a.exp10 : b.exp10;
    if (mul_pow10(&a.mant, a.exp10 - target) || mul_pow10(&b.mant, b.exp10 - target))
        return cel_err(e, "quantity overflow");
    if (sub)
        b.mant = -b.mant;
    if (__builtin_add_overflow(a.mant, b.mant, &r.q.mant))
        return cel_err(e, "quantity overflow");
    r.q.exp10 = target;
    return r;
}

static int as_quantity(struct cel_eval *e, const struct cel_val *v, struct cel_quantity *q,
                       struct cel_val *ret_err)
{
    if (v->k == CV_QUANTITY) {
        *q = v->q;
        return 1;
    }
    if (v->k == CV_INT) { /* extension: int-or-string fields hold plain integers */
        q->mant = v->i;
        q->exp10 = 0;
        return 1;
    }
    *ret_err =
        cel_err(e, "no such overload: expected kubernetes.Quantity, got %s", cel_type_name(v));
    return 0;
}

/* ---- strings ---- */

static struct cel_val need_str(struct cel_eval *e, const struct cel_val *v, const char *fn)
{
    if (v->k == CV_STRING)
        return *v;
    return cel_err(e, "no such overload: %s(%s)", fn, cel_type_name(v));
}

static long long utf8_index_to_byte(const struct cel_val *s, long long cp)
{
    size_t i = 0;
    long long k = 0;
    while (i < s->n && k < cp) {
        i++;
        while (i < s->n && ((unsigned char)s->s[i] & 0xc0) == 0x80)
            i++;
        k++;
    }
    return k == cp ? (long long)i : -1;
}

static long long byte_to_cp(const struct cel_val *s, size_t b)
{
    long long k = 0;
    for (size_t i = 0; i < b && i < s->n; i++)
        if (((unsigned char)s->s[i] & 0xc0) != 0x80)
            k++;
    return k;
}

static const char *find_sub(const char *h, size_t hn, const char *n, size_t nn, int last)
{
    const char *found = NULL;
    if (nn == 0)
        return last ? h + hn : h;
    for (size_t i = 0; i + nn <= hn; i++) {
        if (memcmp(h + i, n, nn) == 0) {
            found = h + i;
            if (!last)
                break;
        }
    }
    return found;
}

static struct cel_val to_string(struct cel_eval *e, const struct cel_val *v)
{
    char buf[64];
    struct vbuf b;
    switch (v->k) {
    case CV_STRING:
        return *v;
    case CV_INT:
        snprintf(buf, sizeof(buf), "%lld", v->i);
        break;
    case CV_UINT:
        snprintf(buf, sizeof(buf), "%llu", v->u);
        break;
    case CV_BOOL:
        snprintf(buf, sizeof(buf), "%s", v->b ? "true" : "false");
        break;
    case CV_DOUBLE:
        vbuf_init(&b, 64);
        as_go_float(&b, v->d);
        snprintf(buf, sizeof(buf), "%s", vbuf_str(&b));
        vbuf_free(&b);
        break;
    default:
        return cel_err(e, "no such overload: string(%s)", cel_type_name(v));
    }
    return cel_str(e, buf, strlen(buf));
}

static struct cel_val to_int(struct cel_eval *e, const struct cel_val *v)
{
    switch (v->k) {
    case CV_INT:
        return *v;
    case CV_UINT:
        if (v->u > 0x7fffffffffffffffULL)
            return cel_err(e, "integer overflow");
        return cel_int((long long)v->u);
    case CV_DOUBLE:
        if (!(v->d > -9223372036854775808.0 && v->d < 9223372036854775808.0))
            return cel_err(e, "integer overflow");
        return cel_int((long long)v->d);
    case CV_STRING: {
        char *end;
        errno = 0;
        long long i = strtoll(v->s, &end, 10);
        if (!v->n || *end || errno || isspace((unsigned char)v->s[0]))
            return cel_err(e, "strconv.ParseInt: parsing %s: invalid syntax", v->s);
        return cel_int(i);
    }
    case CV_BOOL:
        return cel_int(v->b);
    default:
        return cel_err(e, "no such overload: int(%s)", cel_type_name(v));
    }
}

static struct cel_val to_double(struct cel_eval *e, const struct cel_val *v)
{
    struct cel_val r = {.k = CV_DOUBLE};
    switch (v->k) {
    case CV_DOUBLE:
        return *v;
    case CV_INT:
        r.d = (double)v->i;
        return r;
    case CV_UINT:
        r.d = (double)v->u;
        return r;
    case CV_STRING: {
        char *end;
        r.d = strtod(v->s, &end);
        if (!v->n || *end)
            return cel_err(e, "strconv.ParseFloat: parsing %s: invalid syntax", v->s);
        return r;
    }
    default:
        return cel_err(e, "no such overload: double(%s)", cel_type_name(v));
    }
}

static struct cel_val list_fold(struct cel_eval *e, const struct cel_val *l, const char *fn)
{
    struct cel_val acc = {.k = CV_INT}, err;
    int c;
    if (l->k != CV_LIST)
        return cel_err(e, "no such overload: %s.%s()", cel_type_name(l), fn);
    if (!strcmp(fn, "sum")) {
        for (size_t i = 0; i < l->n; i++) {
            struct cel_val x = cel_list_at(e, l, i);
            if (i == 0) {
                acc = x;
                continue;
            }
            if (acc.k == CV_INT && x.k == CV_INT) {
                if (__builtin_add_overflow(acc.i, x.i, &acc.i))
                    return cel_err(e, "integer overflow");
            } else if (acc.k == CV_DOUBLE && x.k == CV_DOUBLE) {
                acc.d += x.d;
            } else {
                return cel_err(e, "no such overload: sum of %s", cel_type_name(&x));
            }
        }
        return acc;
    }
    if (!strcmp(fn, "isSorted")) {
        for (size_t i = 1; i < l->n; i++) {
            struct cel_val a = cel_list_at(e, l, i - 1), b = cel_list_at(e, l, i);
            if (!cel_compare(e, &a, &b, &c, &err))
                return err;
            if (c > 0)
                return cel_bool(0);
        }
        return cel_bool(1);
    }
    /* min / max */
    if (l->n == 0)
        return cel_err(e, "%s(list) argument must not be empty", fn);
    acc = cel_list_at(e, l, 0);
    for (size_t i = 1; i < l->n; i++) {
        struct cel_val x = cel_list_at(e, l, i);
        if (!cel_compare(e, &x, &acc, &c, &err))
            return err;
        if ((!strcmp(fn, "min") && c < 0) || (!strcmp(fn, "max") && c > 0))
            acc = x;
    }
    return acc;
}

static struct cel_val str_method(struct cel_eval *e, const char *name, const struct cel_val *s,
                                 struct cel_val *args, int nargs)
{
    struct cel_val r;
    if (!strcmp(name, "lowerAscii") || !strcmp(name, "upperAscii")) {
        r = cel_str(e, s->s, s->n);
        if (r.k == CV_ERR)
            return r;
        for (size_t i = 0; i < r.n; i++)
            ((char *)r.s)[i] = (char)(name[0] == 'l' ? tolower((unsigned char)r.s[i])
                                                     : toupper((unsigned char)r.s[i]));
        return r;
    }
    if (!strcmp(name, "trim")) {
        size_t a = 0, b = s->n;
        while (a < b && isspace((unsigned char)s->s[a]))
            a++;
        while (b > a && isspace((unsigned char)s->s[b - 1]))
            b--;
        return cel_str(e, s->s + a, b - a);
    }
    for (int i = 0; i < nargs; i++)
        if (strcmp(name, "substring") && strcmp(name, "charAt") && args[i].k != CV_STRING)
            return cel_err(e, "no such overload: string.%s(%s)", name, cel_type_name(&args[i]));
    if (!strcmp(name, "startsWith"))
        return cel_bool(args[0].n <= s->n && !memcmp(s->s, args[0].s, args[0].n));
    if (!strcmp(name, "endsWith"))
        return cel_bool(args[0].n <= s->n &&
                        !memcmp(s->s + s->n - args[0].n, args[0].s, args[0].n));
    if (!strcmp(name, "contains"))
        return cel_bool(find_sub(s->s, s->n, args[0].s, args[0].n, 0) != NULL);
    if (!strcmp(name, "matches")) {
        struct vmop_err err = {0};
        int m = as_regex_match(args[0].s, s->s, &err);
        if (m < 0)
            return cel_err(e, "%s", err.msg);
        return cel_bool(m);
    }
    if (!strcmp(name, "indexOf") || !strcmp(name, "lastIndexOf")) {
        const char *f = find_sub(s->s, s->n, args[0].s, args[0].n, name[0] == 'l');
        return cel_int(f ? byte_to_cp(s, (size_t)(f - s->s)) : -1);
    }
    if (!strcmp(name, "replace")) {
        struct vbuf b;
        size_t i = 0;
        vbuf_init(&b, CEL_MAX_MEMORY);
        while (i <= s->n) {
            const char *f =
                args[0].n ? find_sub(s->s + i, s->n - i, args[0].s, args[0].n, 0) : NULL;
            if (!f) {
                vbuf_add(&b, s->s + i, s->n - i);
                break;
            }
            vbuf_add(&b, s->s + i, (size_t)(f - (s->s + i)));
            vbuf_add(&b, args[1].s, args[1].n);
            i = (size_t)(f - s->s) + args[0].n;
        }
        r = vbuf_error(&b) ? cel_err(e, "operation cancelled: actual cost limit exceeded")
                           : cel_str(e, vbuf_str(&b), b.len);
        vbuf_free(&b);
        return r;
    }
    if (!strcmp(name, "split")) {
        struct cel_val l = {.k = CV_LIST};
        size_t i = 0, cap = s->n + 2;
        l.items = cel_alloc(&e->arena, sizeof(*l.items) * cap);
        if (!l.items)
            return cel_err(e, "operation cancelled: actual cost limit exceeded");
        if (args[0].n == 0) {
            while (i < s->n) {
                size_t j = i + 1;
                while (j < s->n && ((unsigned char)s->s[j] & 0xc0) == 0x80)
                    j++;
                l.items[l.n++] = cel_str(e, s->s + i, j - i);
                i = j;
            }
            return l;
        }
        for (;;) {
            const char *f = find_sub(s->s + i, s->n - i, args[0].s, args[0].n, 0);
            size_t end = f ? (size_t)(f - s->s) : s->n;
            l.items[l.n++] = cel_str(e, s->s + i, end - i);
            if (!f)
                break;
            i = end + args[0].n;
        }
        return l;
    }
    if (!strcmp(name, "substring") || !strcmp(name, "charAt")) {
        long long cps = byte_to_cp(s, s->n), a, b;
        for (int i = 0; i < nargs; i++)
            if (args[i].k != CV_INT)
                return cel_err(e, "no such overload: string.%s(%s)", name, cel_type_name(&args[i]));
        a = args[0].i;
        b = !strcmp(name, "charAt") ? (a == cps ? a : a + 1) : nargs > 1 ? args[1].i : cps;
        if (a < 0 || a > cps || b < a || b > cps)
            return cel_err(e, "index out of range: %lld", a < 0 || a > cps ? a : b);
        long long ba = utf8_index_to_byte(s, a), bb = utf8_index_to_byte(s, b);
        return cel_str(e, s->s + ba, (size_t)(bb - ba));
    }
    return cel_err(e, "no such overload: string.%s", name);
}

struct cel_val cel_call(struct cel_eval *e, const char *name, struct cel_val *target,
                        struct cel_val *args, int nargs)
{
    struct cel_val r, err;
    struct cel_quantity qa, qb;

    if (!target) {
        if (!strcmp(name, "size")) {
            if (args[0].k == CV_STRING)
                return cel_int((long long)as_utf8_len(args[0].s));
            if (args[0].k == CV_LIST || args[0].k == CV_MAP)
                return cel_int((long long)args[0].n);
            return cel_err(e, "no such overload: size(%s)", cel_type_name(&args[0]));
        }
        if (!strcmp(name, "int"))
            return to_int(e, &args[0]);
        if (!strcmp(name, "uint")) {
            r = to_int(e, &args[0]);
            if (r.k == CV_ERR)
                return r;
            if (r.i < 0)
                return cel_err(e, "unsigned integer overflow");
            r.k = CV_UINT;
            r.u = (unsigned long long)r.i;
            return r;
        }
        if (!strcmp(name, "double"))
            return to_double(e, &args[0]);
        if (!strcmp(name, "string"))
            return to_string(e, &args[0]);
        if (!strcmp(name, "dyn"))
            return args[0];
        if (!strcmp(name, "bool")) {
            if (args[0].k == CV_BOOL)
                return args[0];
            if (args[0].k == CV_STRING &&
                (!strcmp(args[0].s, "true") || !strcmp(args[0].s, "false")))
                return cel_bool(args[0].s[0] == 't');
            return cel_err(e, "no such overload: bool(%s)", cel_type_name(&args[0]));
        }
        if (!strcmp(name, "matches")) {
            r = need_str(e, &args[0], "matches");
            if (r.k == CV_ERR)
                return r;
            return str_method(e, "matches", &args[0], args + 1, 1);
        }
        if (!strcmp(name, "isQuantity"))
            return cel_bool(args[0].k == CV_STRING && cel_quantity_parse(args[0].s, &qa) == 0);
        if (!strcmp(name, "quantity")) {
            r.k = CV_QUANTITY;
            if (args[0].k == CV_INT || args[0].k == CV_QUANTITY) {
                if (!as_quantity(e, &args[0], &r.q, &err))
                    return err;
                return r;
            }
            if (args[0].k != CV_STRING)
                return cel_err(e, "no such overload: quantity(%s)", cel_type_name(&args[0]));
            if (cel_quantity_parse(args[0].s, &r.q))
                return cel_err(e, "quantities must match the regular expression "
                                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
            return r;
        }
        return cel_err(e, "no such overload: %s", name);
    }

    if (!strcmp(name, "size") && nargs == 0) {
        if (target->k == CV_STRING)
            return cel_int((long long)as_utf8_len(target->s));
        if (target->k == CV_LIST || target->k == CV_MAP)
            return cel_int((long long)target->n);
        return cel_err(e, "no such overload: %s.size()", cel_type_name(target));
    }
    if (target->k == CV_STRING)
        return str_method(e, name, target, args, nargs);
    if (target->k == CV_LIST) {
        if (!strcmp(name, "join")) {
            struct vbuf b;
            if (nargs && args[0].k != CV_STRING)
                return cel_err(e, "no such overload: list.join(%s)", cel_type_name(&args[0]));
            vbuf_init(&b, CEL_MAX_MEMORY);
            for (size_t i = 0; i < target->n; i++) {
                struct cel_val x = cel_list_at(e, target, i);
                if (x.k != CV_STRING) {
                    vbuf_free(&b);
                    return cel_err(e, "no such overload: join on list of %s", cel_type_name(&x));
                }
                if (i && nargs)
                    vbuf_add(&b, args[0].s, args[0].n);
                vbuf_add(&b, x.s, x.n);
            }
            r = vbuf_error(&b) ? cel_err(e, "operation cancelled: actual cost limit exceeded")
                               : cel_str(e, vbuf_str(&b), b.len);
            vbuf_free(&b);
            return r;
        }
        if (!strcmp(name, "indexOf") || !strcmp(name, "lastIndexOf")) {
            long long found = -1;
            for (size_t i = 0; i < target->n; i++) {
                struct cel_val x = cel_list_at(e, target, i);
                if (cel_equal(e, &x, &args[0])) {
                    found = (long long)i;
                    if (name[0] == 'i')
                        break;
                }
            }
            return cel_int(found);
        }
        return list_fold(e, target, name);
    }
    if (target->k == CV_QUANTITY) {
        qa = target->q;
        if (!strcmp(name, "asInteger")) {
            long long i;
            if (q_to_int(&qa, &i))
                return cel_err(e, "cannot convert value to integer");
            return cel_int(i);
        }
        if (!strcmp(name, "asApproximateFloat")) {
            r.k = CV_DOUBLE;
            r.d = q_to_double(&qa);
            return r;
        }
        if (!strcmp(name, "sign"))
            return cel_int((qa.mant > 0) - (qa.mant < 0));
        if (!strcmp(name, "isInteger")) {
            long long i;
            return cel_bool(q_to_int(&qa, &i) == 0);
        }
        if (nargs == 1) {
            if (!as_quantity(e, &args[0], &qb, &err))
                return err;
            if (!strcmp(name, "isLessThan"))
                return cel_bool(cel_quantity_cmp(&qa, &qb) < 0);
            if (!strcmp(name, "isGreaterThan"))
                return cel_bool(cel_quantity_cmp(&qa, &qb) > 0);
            if (!strcmp(name, "compareTo"))
                return cel_int(cel_quantity_cmp(&qa, &qb));
            if (!strcmp(name, "add") || !strcmp(name, "sub"))
                return q_addsub(e, qa, qb, name[0] == 's');
        }
    }
    return cel_err(e, "no such overload: %s.%s()", cel_type_name(target), name);
}
