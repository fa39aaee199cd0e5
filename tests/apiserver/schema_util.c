/* schema_util.c: field paths, Kubernetes field errors as Status causes, Go-style value printing,
 * JSON equality and RE2-to-POSIX regex matching for apischema. See schema_int.h. */
#include "schema_int.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AS_REGEX_MAX 4096 /* longest pattern accepted (CRD authors control it) */

static size_t path_append(struct as_path *p, const char *s, size_t n)
{
    size_t old = p->len;
    if (p->len + n + 4 >= sizeof(p->buf)) {
        /* Too deep: mark the cut once and keep the length (pop restores it). */
        if (p->len + 4 < sizeof(p->buf) && (p->len < 3 || strcmp(p->buf + p->len - 3, "...")))
            memcpy(p->buf + p->len, "...", 4), p->len += 3;
        return old;
    }
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    p->buf[p->len] = '\0';
    return old;
}

size_t as_path_child(struct as_path *p, const char *name)
{
    size_t old = p->len;
    if (p->len)
        path_append(p, ".", 1);
    path_append(p, name, strlen(name));
    return old;
}

size_t as_path_index(struct as_path *p, long i)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "[%ld]", i);
    size_t old = p->len;
    path_append(p, tmp, (size_t)n);
    return old;
}

size_t as_path_key(struct as_path *p, const char *key)
{
    size_t old = p->len;
    path_append(p, "[", 1);
    path_append(p, key, strlen(key));
    path_append(p, "]", 1);
    return old;
}

void as_path_pop(struct as_path *p, size_t old)
{
    if (old <= p->len) {
        p->len = old;
        p->buf[old] = '\0';
    }
}

const char *as_path_str(const struct as_path *p)
{
    return p->len ? p->buf : "<nil>";
}

const char *as_ftype_reason(enum as_ftype t)
{
    switch (t) {
    case AS_F_NOT_FOUND:
        return "FieldValueNotFound";
    case AS_F_REQUIRED:
        return "FieldValueRequired";
    case AS_F_DUPLICATE:
        return "FieldValueDuplicate";
    case AS_F_INVALID:
        return "FieldValueInvalid";
    case AS_F_NOT_SUPPORTED:
        return "FieldValueNotSupported";
    case AS_F_FORBIDDEN:
        return "FieldValueForbidden";
    case AS_F_TOO_LONG:
        return "FieldValueTooLong";
    case AS_F_TOO_MANY:
        return "FieldValueTooMany";
    case AS_F_INTERNAL:
        return "InternalError";
    case AS_F_TYPE_INVALID:
        return "FieldValueTypeInvalid";
    }
    return "FieldValueInvalid";
}

const char *as_ftype_text(enum as_ftype t)
{
    switch (t) {
    case AS_F_NOT_FOUND:
        return "Not found";
    case AS_F_REQUIRED:
        return "Required value";
    case AS_F_DUPLICATE:
        return "Duplicate value";
    case AS_F_INVALID:
        return "Invalid value";
    case AS_F_NOT_SUPPORTED:
        return "Unsupported value";
    case AS_F_FORBIDDEN:
        return "Forbidden";
    case AS_F_TOO_LONG:
        return "Too long";
    case AS_F_TOO_MANY:
        return "Too many";
    case AS_F_INTERNAL:
        return "Internal error";
    case AS_F_TYPE_INVALID:
        return "Invalid value";
    }
    return "Invalid value";
}

vmop_rc as_cause_add(cJSON *causes, enum as_ftype t, const char *field, const char *value_go,
                     const char *detail)
{
    struct vbuf b;
    cJSON *c = NULL;
    vmop_rc rc = VMOP_E_NOMEM;

    vbuf_init(&b, 64 * 1024);
    vbuf_adds(&b, as_ftype_text(t));
    /* field.Error.ErrorBody: these types never print the bad value. */
    if (value_go && t != AS_F_REQUIRED && t != AS_F_FORBIDDEN && t != AS_F_TOO_LONG &&
        t != AS_F_INTERNAL)
        vbuf_addf(&b, ": %s", value_go);
    if (detail && *detail)
        vbuf_addf(&b, ": %s", detail);
    if (vbuf_error(&b))
        goto out;
    c = cJSON_CreateObject();
    if (!c || !cJSON_AddStringToObject(c, "reason", as_ftype_reason(t)) ||
        !cJSON_AddStringToObject(c, "message", vbuf_str(&b)) ||
        !cJSON_AddStringToObject(c, "field", field && *field ? field : "<nil>"))
        goto out;
    cJSON_AddItemToArray(causes, c);
    c = NULL;
    rc = VMOP_OK;
out:
    cJSON_Delete(c);
    vbuf_free(&b);
    return rc;
}

vmop_rc as_cause_addf(cJSON *causes, enum as_ftype t, const char *field, const char *value_go,
                      const char *fmt, ...)
{
    char detail[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    return as_cause_add(causes, t, field, value_go, detail);
}

void as_go_quote(struct vbuf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    vbuf_add(b, "\"", 1);
    while (*p) {
        unsigned char c = *p;
        switch (c) {
        case '"':
            vbuf_adds(b, "\\\"");
            p++;
            continue;
        case '\\':
            vbuf_adds(b, "\\\\");
            p++;
            continue;
        case '\a':
            vbuf_adds(b, "\\a");
            p++;
            continue;
        case '\b':
            vbuf_adds(b, "\\b");
            p++;
            continue;
        case '\f':
            vbuf_adds(b, "\\f");
            p++;
            continue;
        case '\n':
            vbuf_adds(b, "\\n");
            p++;
            continue;
        case '\r':
            vbuf_adds(b, "\\r");
            p++;
            continue;
        case '\t':
            vbuf_adds(b, "\\t");
            p++;
            continue;
        case '\v':
            vbuf_adds(b, "\\v");
            p++;
            continue;
        default:
            break;
        }
        if (c < 0x20 || c == 0x7f) {
            vbuf_addf(b, "\\x%02x", c);
            p++;
            continue;
        }
        if (c < 0x80) {
            vbuf_add(b, p, 1);
            p++;
            continue;
        }
        /* Multi-byte: keep a well-formed sequence, escape a stray byte as Go does. */
        size_t n = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        size_t k = 1;
        while (n && k < n && (p[k] & 0xc0) == 0x80)
            k++;
        if (n && k == n) {
            vbuf_add(b, p, n);
            p += n;
        } else {
            vbuf_addf(b, "\\x%02x", c);
            p++;
        }
    }
    vbuf_add(b, "\"", 1);
}

void as_go_float(struct vbuf *b, double d)
{
    char tmp[64], digits[32];
    int prec, exp, nd = 0;

    if (isnan(d)) {
        vbuf_adds(b, "NaN");
        return;
    }
    if (isinf(d)) {
        vbuf_adds(b, d > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (d == 0) {
        vbuf_adds(b, signbit(d) ? "-0" : "0");
        return;
    }
    /* Shortest digits that read back to the same double (strconv 'g', precision -1). */
    for (prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, d);
        if (strtod(tmp, NULL) == d)
            break;
    }
    const char *q = tmp;
    int neg = 0;
    if (*q == '-')
        neg = 1, q++;
    for (; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9' && nd < (int)sizeof(digits) - 1)
            digits[nd++] = *q;
    digits[nd] = '\0';
    while (nd > 1 && digits[nd - 1] == '0')
        digits[--nd] = '\0';
    exp = *q == 'e' ? atoi(q + 1) : 0; /* NOLINT: our own snprintf output */
    if (neg)
        vbuf_add(b, "-", 1);
    if (exp < -4 || exp >= 6) { /* fmt %v: shortest digits, %e from 1e+06 */
        /* %e form with at least two exponent digits. */
        vbuf_add(b, digits, 1);
        if (nd > 1) {
            vbuf_add(b, ".", 1);
            vbuf_add(b, digits + 1, (size_t)nd - 1);
        }
        vbuf_addf(b, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    } else if (exp < 0) {
        vbuf_adds(b, "0.");
        for (int i = -1; i > exp; i--)
            vbuf_add(b, "0", 1);
        vbuf_add(b, digits, (size_t)nd);
    } else if (nd <= exp + 1) {
        vbuf_add(b, digits, (size_t)nd);
        for (int i = nd; i <= exp; i++)
            vbuf_add(b, "0", 1);
    } else {
        vbuf_add(b, digits, (size_t)exp + 1);
        vbuf_add(b, ".", 1);
        vbuf_add(b, digits + exp + 1, (size_t)(nd - exp - 1));
    }
}

int as_json_is_int(const cJSON *v, long long *ret_i)
{
    if (!cJSON_IsNumber(v))
        return 0;
    double d = v->valuedouble;
    if (d != floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
        return 0;
    if (ret_i)
        *ret_i = (long long)d;
    return 1;
}

/* %#v of a value inside a map[string]interface{} / []interface{}. */
static void go_sharp_value(struct vbuf *b, const cJSON *v, int depth);

static int key_cmp(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

static void go_sharp_map(struct vbuf *b, const cJSON *v, int depth)
{
    int n = cJSON_GetArraySize(v), i = 0;
    const cJSON **keys = n ? calloc((size_t)n, sizeof(*keys)) : NULL;
    const cJSON *c;
    vbuf_adds(b, "map[string]interface {}{");
    if (n && !keys) {
        vbuf_adds(b, "...}");
        return;
    }
    cJSON_ArrayForEach(c, v) keys[i++] = c;
    qsort(keys, (size_t)n, sizeof(*keys), key_cmp);
    for (i = 0; i < n; i++) {
        if (i)
            vbuf_adds(b, ", ");
        as_go_quote(b, keys[i]->string);
        vbuf_add(b, ":", 1);
        go_sharp_value(b, keys[i], depth + 1);
    }
    vbuf_add(b, "}", 1);
    free(keys);
}

static void go_sharp_value(struct vbuf *b, const cJSON *v, int depth)
{
    long long i;
    if (depth > AS_MAX_DEPTH) {
        vbuf_adds(b, "...");
        return;
    }
    if (!v || cJSON_IsNull(v)) {
        vbuf_adds(b, "interface {}(nil)");
    } else if (cJSON_IsString(v)) {
        as_go_quote(b, v->valuestring);
    } else if (cJSON_IsBool(v)) {
        vbuf_adds(b, cJSON_IsTrue(v) ? "true" : "false");
    } else if (as_json_is_int(v, &i)) {
        vbuf_addf(b, "%lld", i);
    } else if (cJSON_IsNumber(v)) {
        as_go_float(b, v->valuedouble);
    } else if (cJSON_IsArray(v)) {
        const cJSON *c;
        int first = 1;
        vbuf_adds(b, "[]interface {}{");
        cJSON_ArrayForEach(c, v)
        {
            if (!first)
                vbuf_adds(b, ", ");
            first = 0;
            go_sharp_value(b, c, depth + 1);
        }
        vbuf_add(b, "}", 1);
    } else if (cJSON_IsObject(v)) {
        go_sharp_map(b, v, depth);
    }
}

void as_go_value(struct vbuf *b, const cJSON *v)
{
    long long i;
    if (!v || cJSON_IsNull(v))
        as_go_quote(b, "null");
    else if (cJSON_IsString(v))
        as_go_quote(b, v->valuestring);
    else if (cJSON_IsBool(v))
        vbuf_adds(b, cJSON_IsTrue(v) ? "true" : "false");
    else if (as_json_is_int(v, &i))
        vbuf_addf(b, "%lld", i);
    else if (cJSON_IsNumber(v))
        as_go_float(b, v->valuedouble);
    else
        go_sharp_value(b, v, 0);
}

char *as_go_value_str(const cJSON *v)
{
    struct vbuf b;
    vbuf_init(&b, 64 * 1024);
    as_go_value(&b, v);
    if (vbuf_error(&b)) {
        vbuf_free(&b);
        return NULL;
    }
    if (!b.data)
        return strdup("");
    return vbuf_take(&b);
}

char *as_go_quote_str(const char *s)
{
    struct vbuf b;
    vbuf_init(&b, 64 * 1024);
    as_go_quote(&b, s);
    if (vbuf_error(&b)) {
        vbuf_free(&b);
        return NULL;
    }
    return vbuf_take(&b);
}

size_t as_utf8_len(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xc0) != 0x80)
            n++;
    return n;
}

int as_json_equal(const cJSON *a, const cJSON *b)
{
    if (!a || !b)
        return a == b;
    if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
        return a->valuedouble == b->valuedouble;
    if ((a->type & 0xff) != (b->type & 0xff))
        return 0;
    if (cJSON_IsString(a))
        return strcmp(a->valuestring, b->valuestring) == 0;
    if (cJSON_IsArray(a)) {
        const cJSON *x = a->child, *y = b->child;
        for (; x && y; x = x->next, y = y->next)
            if (!as_json_equal(x, y))
                return 0;
        return !x && !y;
    }
    if (cJSON_IsObject(a)) {
        const cJSON *x;
        if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
            return 0;
        cJSON_ArrayForEach(x, a)
        {
            const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);
            if (!y || !as_json_equal(x, y))
                return 0;
        }
        return 1;
    }
    return 1; /* null, true, false: same type */
}

/* Rewrites RE2 syntax that POSIX ERE lacks. Greediness does not matter: only match/no match is
 * used. */
static int regex_translate(const char *in, struct vbuf *out, int *ret_icase, struct vmop_err *err)
{
    const char *p = in;
    *ret_icase = 0;
    if (strncmp(p, "(?i)", 4) == 0) {
        *ret_icase = 1;
        p += 4;
    }
    while (*p) {
        if (*p == '\\') {
            char c = p[1];
            switch (c) {
            case 'd':
                vbuf_adds(out, "[0-9]");
                break;
            case 'D':
                vbuf_adds(out, "[^0-9]");
                break;
            case 'w':
                vbuf_adds(out, "[A-Za-z0-9_]");
                break;
            case 'W':
                vbuf_adds(out, "[^A-Za-z0-9_]");
                break;
            case 's':
                vbuf_adds(out, "[[:space:]]");
                break;
            case 'S':
                vbuf_adds(out, "[^[:space:]]");
                break;
            case 'A':
                vbuf_adds(out, "^");
                break;
            case 'z':
                vbuf_adds(out, "$");
                break;
            case 't':
                vbuf_adds(out, "\t");
                break;
            case 'n':
                vbuf_adds(out, "\n");
                break;
            case '\0':
                return vmop_fail(err, VMOP_E_INVALID, "error parsing regexp: trailing backslash");
            case 'b':
            case 'B':
            case 'p':
            case 'P':
            case 'Q':
            case 'E':
                return vmop_fail(err, VMOP_E_UNSUPPORTED,
                                 "regexp escape \\%c is not supported by this server", c);
            default:
                if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
                    return vmop_fail(err, VMOP_E_INVALID,
                                     "error parsing regexp: invalid escape sequence: `\\%c`", c);
                vbuf_add(out, "\\", 1);
                vbuf_add(out, &c, 1);
            }
            p += 2;
            continue;
        }
        if (*p == '[') {
            /* Bracket expression: escapes are not special in POSIX, so rewrite them. */
            int dash = 0, close_first = 0;
            struct vbuf set;
            vbuf_init(&set, AS_REGEX_MAX * 4);
            p++;
            vbuf_add(out, "[", 1);
            if (*p == '^')
                vbuf_add(out, "^", 1), p++;
            if (*p == ']')
                close_first = 1, p++;
            while (*p && *p != ']') {
                if (*p == '[' && p[1] == ':') {
                    const char *e = strstr(p, ":]");
                    if (!e)
                        break;
                    vbuf_add(&set, p, (size_t)(e + 2 - p));
                    p = e + 2;
                    continue;
                }
                if (*p == '\\' && p[1]) {
                    char c = p[1];
                    switch (c) {
                    case 'd':
                        vbuf_adds(&set, "0-9");
                        break;
                    case 'w':
                        vbuf_adds(&set, "A-Za-z0-9_");
                        break;
                    case 's':
                        vbuf_adds(&set, "[:space:]");
                        break;
                    case 't':
                        vbuf_adds(&set, "\t");
                        break;
                    case 'n':
                        vbuf_adds(&set, "\n");
                        break;
                    case '-':
                        dash = 1;
                        break;
                    case ']':
                        close_first = 1;
                        break;
                    case 'D':
                    case 'W':
                    case 'S':
                        vbuf_free(&set);
                        return vmop_fail(err, VMOP_E_UNSUPPORTED,
                                         "regexp \\%c inside [] is not supported by this server",
                                         c);
                    default:
                        vbuf_add(&set, &c, 1);
                    }
                    p += 2;
                    continue;
                }
                vbuf_add(&set, p, 1);
                p++;
            }
            if (*p != ']') {
                vbuf_free(&set);
                return vmop_fail(err, VMOP_E_INVALID,
                                 "error parsing regexp: missing closing ]: `%.40s`", in);
            }
            p++;
            if (close_first)
                vbuf_add(out, "]", 1);
            vbuf_adds(out, vbuf_str(&set));
            if (dash)
                vbuf_add(out, "-", 1);
            vbuf_add(out, "]", 1);
            vbuf_free(&set);
            continue;
        }
        if (p[0] == '(' && p[1] == '?') {
            if (p[2] == ':') {
                vbuf_add(out, "(", 1);
                p += 3;
                continue;
            }
            return vmop_fail(err, VMOP_E_UNSUPPORTED,
                             "regexp group flags (?...) are not supported by this server");
        }
        if ((p[0] == '*' || p[0] == '+' || p[0] == '?' || p[0] == '}') && p[1] == '?') {
            vbuf_add(out, p, 1); /* lazy quantifier: same match/no-match answer as greedy */
            p += 2;
            continue;
        }
        vbuf_add(out, p, 1);
        p++;
    }
    if (vbuf_error(out))
        return vmop_fail(err, vbuf_error(out), "regexp too large");
    return VMOP_OK;
}

int as_regex_match(const char *pattern, const char *s, struct vmop_err *err)
{
    struct vbuf tr;
    regex_t re;
    int icase, r;

    if (strlen(pattern) > AS_REGEX_MAX) {
        vmop_fail(err, VMOP_E_TOOBIG, "regexp longer than %d bytes", AS_REGEX_MAX);
        return -1;
    }
    vbuf_init(&tr, AS_REGEX_MAX * 8);
    if (regex_translate(pattern, &tr, &icase, err) != VMOP_OK) {
        vbuf_free(&tr);
        return -1;
    }
    r = regcomp(&re, vbuf_str(&tr), REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
    vbuf_free(&tr);
    if (r != 0) {
        char msg[128];
        regerror(r, &re, msg, sizeof(msg));
        vmop_fail(err, VMOP_E_INVALID, "error parsing regexp: %s", msg);
        return -1;
    }
    r = regexec(&re, s, 0, NULL, 0);
    regfree(&re);
    return r == 0 ? 1 : 0;
}

const char *as_schema_type(const cJSON *schema)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(schema, "type");
    return cJSON_IsString(t) ? t->valuestring : "";
}

int as_schema_flag(const cJSON *schema, const char *name)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(schema, name));
}
