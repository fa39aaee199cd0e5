/* cel_eval.c: evaluation of a compiled CEL rule (cel.h): values over JSON typed by the structural
 * schema, operators with CEL's semantics (heterogeneous equality, error absorption by && and ||,
 * overflow checks), macros (has, all, exists, exists_one, map, filter). Functions are in cel_lib.c.
 */
#include "cel_int.h"
#include "schema_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cel_scope {
    const char *name;
    struct cel_val v;
    struct cel_scope *up;
};

static const char cost_msg[] = "operation cancelled: actual cost limit exceeded";

struct cel_val cel_err(struct cel_eval *e, const char *fmt, ...)
{
    struct cel_val v = {.k = CV_ERR, .s = cost_msg};
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        return v;
    if ((size_t)n >= sizeof(buf))
        n = sizeof(buf) - 1;
    char *s = cel_alloc(&e->arena, (size_t)n + 1);
    if (s) {
        memcpy(s, buf, (size_t)n);
        v.s = s;
    }
    return v;
}

struct cel_val cel_bool(int b)
{
    struct cel_val v = {.k = CV_BOOL, .b = !!b};
    return v;
}

struct cel_val cel_int(long long i)
{
    struct cel_val v = {.k = CV_INT, .i = i};
    return v;
}

struct cel_val cel_str(struct cel_eval *e, const char *s, size_t n)
{
    struct cel_val v = {.k = CV_STRING};
    char *c = cel_alloc(&e->arena, n + 1);
    if (!c)
        return cel_err(e, "%s", cost_msg);
    memcpy(c, s, n);
    v.s = c;
    v.n = n;
    return v;
}

struct cel_val cel_from_json(const cJSON *j, const cJSON *sch)
{
    struct cel_val v = {.k = CV_NULL};
    long long i;
    const char *t = as_schema_type(sch);
    if (!j || cJSON_IsNull(j))
        return v;
    if (cJSON_IsBool(j)) {
        v.k = CV_BOOL;
        v.b = cJSON_IsTrue(j);
    } else if (cJSON_IsNumber(j)) {
        if (strcmp(t, "number") != 0 && as_json_is_int(j, &i)) {
            v.k = CV_INT;
            v.i = i;
        } else {
            v.k = CV_DOUBLE;
            v.d = j->valuedouble;
        }
    } else if (cJSON_IsString(j)) {
        v.k = CV_STRING;
        v.s = j->valuestring;
        v.n = strlen(j->valuestring);
    } else if (cJSON_IsArray(j)) {
        v.k = CV_LIST;
        v.j = j;
        v.sch = sch;
        v.n = (size_t)cJSON_GetArraySize(j);
    } else if (cJSON_IsObject(j)) {
        v.k = CV_MAP;
        v.j = j;
        v.sch = sch;
        v.n = (size_t)cJSON_GetArraySize(j);
    }
    return v;
}

size_t cel_len(const struct cel_val *v)
{
    return v->n;
}

static const cJSON *child_schema(const cJSON *sch, const char *key)
{
    const cJSON *p =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sch, "properties"), key);
    if (p)
        return p;
    p = cJSON_GetObjectItemCaseSensitive(sch, "additionalProperties");
    return cJSON_IsObject(p) ? p : NULL;
}

struct cel_val cel_list_at(struct cel_eval *e, const struct cel_val *l, size_t i)
{
    (void)e;
    if (l->j)
        return cel_from_json(cJSON_GetArrayItem(l->j, (int)i),
                             cJSON_GetObjectItemCaseSensitive(l->sch, "items"));
    return l->items[i];
}

struct cel_val cel_map_key(struct cel_eval *e, const struct cel_val *m, size_t i)
{
    if (m->j) {
        const cJSON *c = cJSON_GetArrayItem(m->j, (int)i);
        struct cel_val v = {
            .k = CV_STRING, .s = c ? c->string : "", .n = c ? strlen(c->string) : 0};
        (void)e;
        return v;
    }
    return m->items[i];
}

int cel_map_get(struct cel_eval *e, const struct cel_val *m, const struct cel_val *key,
                struct cel_val *ret)
{
    if (m->j) {
        const cJSON *c;
        if (key->k != CV_STRING)
            return 0;
        c = cJSON_GetObjectItemCaseSensitive(m->j, key->s);
        if (!c)
            return 0;
        *ret = cel_from_json(c, child_schema(m->sch, key->s));
        return 1;
    }
    for (size_t i = 0; i < m->n; i++) {
        if (cel_equal(e, &m->items[i], key)) {
            *ret = m->vals[i];
            return 1;
        }
    }
    return 0;
}

const char *cel_type_name(const struct cel_val *v)
{
    switch (v->k) {
    case CV_ERR:
        return "error";
    case CV_NULL:
        return "null_type";
    case CV_BOOL:
        return "bool";
    case CV_INT:
        return "int";
    case CV_UINT:
        return "uint";
    case CV_DOUBLE:
        return "double";
    case CV_STRING:
        return "string";
    case CV_LIST:
        return "list";
    case CV_MAP:
        return "map";
    case CV_QUANTITY:
        return "kubernetes.Quantity";
    case CV_TYPE:
        return "type";
    }
    return "dyn";
}

static int is_num(const struct cel_val *v)
{
    return v->k == CV_INT || v->k == CV_UINT || v->k == CV_DOUBLE;
}

/* Numeric comparison across int/uint/double. */
static int num_cmp(const struct cel_val *a, const struct cel_val *b)
{
    if (a->k == CV_INT && b->k == CV_INT)
        return a->i < b->i ? -1 : a->i > b->i;
    if (a->k == CV_UINT && b->k == CV_UINT)
        return a->u < b->u ? -1 : a->u > b->u;
    if (a->k == CV_INT && b->k == CV_UINT)
        return a->i < 0 ? -1
                        : ((unsigned long long)a->i < b->u ? -1 : (unsigned long long)a->i > b->u);
    if (a->k == CV_UINT && b->k == CV_INT)
        return -num_cmp(b, a);
    double x = a->k == CV_INT ? (double)a->i : a->k == CV_UINT ? (double)a->u : a->d;
    double y = b->k == CV_INT ? (double)b->i : b->k == CV_UINT ? (double)b->u : b->d;
    return x < y ? -1 : x > y;
}

int cel_equal(struct cel_eval *e, const struct cel_val *a, const struct cel_val *b)
{
    if (is_num(a) && is_num(b)) {
        if ((a->k == CV_DOUBLE && isnan(a->d)) || (b->k == CV_DOUBLE && isnan(b->d)))
            return 0;
        return num_cmp(a, b) == 0;
    }
    if (a->k != b->k)
        return 0;
    switch (a->k) {
    case CV_NULL:
        return 1;
    case CV_BOOL:
        return a->b == b->b;
    case CV_STRING:
    case CV_TYPE:
        return a->n == b->n && memcmp(a->s, b->s, a->n) == 0;
    case CV_QUANTITY:
        return cel_quantity_cmp(&a->q, &b->q) == 0;
    case CV_LIST:
        if (a->n != b->n)
            return 0;
        for (size_t i = 0; i < a->n; i++) {
            struct cel_val x = cel_list_at(e, a, i), y = cel_list_at(e, b, i);
            if (!cel_equal(e, &x, &y))
                return 0;
        }
        return 1;
    case CV_MAP:
        if (a->n != b->n)
            return 0;
        for (size_t i = 0; i < a->n; i++) {
            struct cel_val k = cel_map_key(e, a, i), x, y;
            if (cel_map_get(e, a, &k, &x) != 1 || cel_map_get(e, b, &k, &y) != 1 ||
                !cel_equal(e, &x, &y))
                return 0;
        }
        return 1;
    default:
        return 0;
    }
}

int cel_compare(struct cel_eval *e, const struct cel_val *a, const struct cel_val *b, int *ret,
                struct cel_val *ret_err)
{
    if (is_num(a) && is_num(b)) {
        *ret = num_cmp(a, b);
        return 1;
    }
    if (a->k == CV_STRING && b->k == CV_STRING) {
        size_t n = a->n < b->n ? a->n : b->n;
        int c = memcmp(a->s, b->s, n);
        *ret = c ? (c < 0 ? -1 : 1) : (a->n < b->n ? -1 : a->n > b->n);
        return 1;
    }
    if (a->k == CV_BOOL && b->k == CV_BOOL) {
        *ret = a->b - b->b;
        return 1;
    }
    if (a->k == CV_QUANTITY && b->k == CV_QUANTITY) {
        *ret = cel_quantity_cmp(&a->q, &b->q);
        return 1;
    }
    *ret_err = cel_err(e, "no such overload: %s < %s", cel_type_name(a), cel_type_name(b));
    return 0;
}

static struct cel_val ev(struct cel_eval *e, const struct cel_node *n);

static struct cel_val arith(struct cel_eval *e, const char *op, struct cel_val a, struct cel_val b)
{
    struct cel_val r = {.k = a.k};
    if (a.k == CV_INT && b.k == CV_INT) {
        switch (*op) {
        case '+':
            if (__builtin_add_overflow(a.i, b.i, &r.i))
                goto ovf;
            return r;
        case '-':
            if (__builtin_sub_overflow(a.i, b.i, &r.i))
                goto ovf;
            return r;
        case '*':
            if (__builtin_mul_overflow(a.i, b.i, &r.i))
                goto ovf;
            return r;
        case '/':
            if (b.i == 0)
                return cel_err(e, "division by zero");
            if (a.i == (-9223372036854775807LL - 1) && b.i == -1)
                goto ovf;
            r.i = a.i / b.i;
            return r;
        case '%':
            if (b.i == 0)
                return cel_err(e, "modulus by zero");
            if (b.i == -1)
                r.i = 0;
            else
                r.i = a.i % b.i;
            return r;
        }
    }
    if (a.k == CV_UINT && b.k == CV_UINT) {
        switch (*op) {
        case '+':
            if (__builtin_add_overflow(a.u, b.u, &r.u))
                goto ovf;
            return r;
        case '-':
            if (__builtin_sub_overflow(a.u, b.u, &r.u))
                goto ovf;
            return r;
        case '*':
            if (__builtin_mul_overflow(a.u, b.u, &r.u))
                goto ovf;
            return r;
        case '/':
            if (b.u == 0)
                return cel_err(e, "division by zero");
            r.u = a.u / b.u;
            return r;
        case '%':
            if (b.u == 0)
                return cel_err(e, "modulus by zero");
            r.u = a.u % b.u;
            return r;
        }
    }
    if (a.k == CV_DOUBLE && b.k == CV_DOUBLE) {
        switch (*op) {
        case '+':
            r.d = a.d + b.d;
            return r;
        case '-':
            r.d = a.d - b.d;
            return r;
        case '*':
            r.d = a.d * b.d;
            return r;
        case '/':
            r.d = a.d / b.d;
            return r;
        }
    }
    if (*op == '+' && a.k == CV_STRING && b.k == CV_STRING) {
        if (a.n + b.n > CEL_MAX_MEMORY)
            return cel_err(e, "%s", cost_msg);
        char *s = cel_alloc(&e->arena, a.n + b.n + 1);
        if (!s)
            return cel_err(e, "%s", cost_msg);
        memcpy(s, a.s, a.n);
        memcpy(s + a.n, b.s, b.n);
        r.s = s;
        r.n = a.n + b.n;
        return r;
    }
    if (*op == '+' && a.k == CV_LIST && b.k == CV_LIST) {
        r.j = NULL;
        r.n = a.n + b.n;
        r.items = cel_alloc(&e->arena, sizeof(*r.items) * (r.n ? r.n : 1));
        if (!r.items)
            return cel_err(e, "%s", cost_msg);
        for (size_t i = 0; i < a.n; i++)
            r.items[i] = cel_list_at(e, &a, i);
        for (size_t i = 0; i < b.n; i++)
            r.items[a.n + i] = cel_list_at(e, &b, i);
        return r;
    }
    return cel_err(e, "no such overload: %s %s %s", cel_type_name(&a), op, cel_type_name(&b));
ovf:
    return cel_err(e, "integer overflow");
}

static struct cel_val binop(struct cel_eval *e, const struct cel_node *n)
{
    struct cel_val a = ev(e, n->a), b, r;
    const char *op = n->op;
    int c;
    if (a.k == CV_ERR)
        return a;
    b = ev(e, n->b);
    if (b.k == CV_ERR)
        return b;
    if (!strcmp(op, "=="))
        return cel_bool(cel_equal(e, &a, &b));
    if (!strcmp(op, "!="))
        return cel_bool(!cel_equal(e, &a, &b));
    if (!strcmp(op, "in")) {
        if (b.k == CV_LIST) {
            for (size_t i = 0; i < b.n; i++) {
                struct cel_val x = cel_list_at(e, &b, i);
                if (cel_equal(e, &a, &x))
                    return cel_bool(1);
            }
            return cel_bool(0);
        }
        if (b.k == CV_MAP)
            return cel_bool(cel_map_get(e, &b, &a, &r) == 1);
        return cel_err(e, "no such overload: %s in %s", cel_type_name(&a), cel_type_name(&b));
    }
    if (op[0] == '<' || op[0] == '>') {
        if (!cel_compare(e, &a, &b, &c, &r))
            return r;
        if (!strcmp(op, "<"))
            return cel_bool(c < 0);
        if (!strcmp(op, "<="))
            return cel_bool(c <= 0);
        if (!strcmp(op, ">"))
            return cel_bool(c > 0);
        return cel_bool(c >= 0);
    }
    return arith(e, op, a, b);
}

static struct cel_val select_field(struct cel_eval *e, struct cel_val m, const char *f, int test)
{
    struct cel_val key = {.k = CV_STRING, .s = f, .n = strlen(f)}, r;
    if (m.k == CV_ERR)
        return m;
    if (m.k != CV_MAP) {
        if (test)
            return cel_err(e, "invalid type for field selection.");
        return cel_err(e, "no such key: %s", f);
    }
    int found = cel_map_get(e, &m, &key, &r);
    if (test)
        return cel_bool(found == 1);
    if (found != 1)
        return cel_err(e, "no such key: %s", f);
    return r;
}

static struct cel_val index_val(struct cel_eval *e, const struct cel_node *n)
{
    struct cel_val a = ev(e, n->a), k, r;
    if (a.k == CV_ERR)
        return a;
    k = ev(e, n->b);
    if (k.k == CV_ERR)
        return k;
    if (a.k == CV_LIST) {
        long long i;
        if (k.k == CV_INT)
            i = k.i;
        else if (k.k == CV_UINT && k.u <= 0x7fffffffffffffffULL)
            i = (long long)k.u;
        else if (k.k == CV_DOUBLE && k.d == floor(k.d) && fabs(k.d) < 9e18)
            i = (long long)k.d;
        else
            return cel_err(e, "unsupported index type '%s' in list", cel_type_name(&k));
        if (i < 0 || (size_t)i >= a.n)
            return cel_err(e, "index out of bounds: %lld", i);
        return cel_list_at(e, &a, (size_t)i);
    }
    if (a.k == CV_MAP) {
        if (cel_map_get(e, &a, &k, &r) == 1)
            return r;
        if (k.k == CV_STRING)
            return cel_err(e, "no such key: %s", k.s);
        return cel_err(e, "no such key");
    }
    return cel_err(e, "no such overload: %s[%s]", cel_type_name(&a), cel_type_name(&k));
}

static struct cel_val comprehension(struct cel_eval *e, const struct cel_node *n)
{
    struct cel_val range = ev(e, n->a), err = {.k = CV_NULL}, out = {.k = CV_LIST};
    struct cel_scope sc = {.name = n->var, .up = e->scope};
    const char *m = n->str;
    int is_all = !strcmp(m, "all"), is_exists = !strcmp(m, "exists");
    int is_one = !strcmp(m, "exists_one"), is_map = !strcmp(m, "map"),
        is_filter = !strcmp(m, "filter");
    size_t count = 0, len;

    if (range.k == CV_ERR)
        return range;
    if (range.k != CV_LIST && range.k != CV_MAP)
        return cel_err(e, "no such overload: %s.%s()", cel_type_name(&range), m);
    len = range.n;
    if (is_map || is_filter) {
        out.items = cel_alloc(&e->arena, sizeof(*out.items) * (len ? len : 1));
        if (!out.items)
            return cel_err(e, "%s", cost_msg);
    }
    e->scope = &sc;
    for (size_t i = 0; i < len; i++) {
        sc.v = range.k == CV_LIST ? cel_list_at(e, &range, i) : cel_map_key(e, &range, i);
        struct cel_val p = ev(e, n->args[0]);
        if (is_map) {
            if (n->nargs == 2) { /* map(x, filter, transform) */
                if (p.k == CV_ERR) {
                    e->scope = sc.up;
                    return p;
                }
                if (p.k != CV_BOOL || !p.b)
                    continue;
                p = ev(e, n->args[1]);
            }
            if (p.k == CV_ERR) {
                e->scope = sc.up;
                return p;
            }
            out.items[out.n++] = p;
            continue;
        }
        if (p.k == CV_ERR) {
            if (is_filter || is_one) {
                e->scope = sc.up;
                return p;
            }
            if (err.k != CV_ERR)
                err = p;
            continue;
        }
        if (p.k != CV_BOOL) {
            e->scope = sc.up;
            return cel_err(e, "no such overload: %s() predicate is %s", m, cel_type_name(&p));
        }
        if (is_all && !p.b) {
            e->scope = sc.up;
            return cel_bool(0);
        }
        if (is_exists && p.b) {
            e->scope = sc.up;
            return cel_bool(1);
        }
        if (is_one && p.b)
            count++;
        if (is_filter && p.b)
            out.items[out.n++] = sc.v;
    }
    e->scope = sc.up;
    if (is_map || is_filter)
        return out;
    if (err.k == CV_ERR)
        return err;
    if (is_one)
        return cel_bool(count == 1);
    return cel_bool(is_all);
}

static struct cel_val ev(struct cel_eval *e, const struct cel_node *n)
{
    struct cel_val v = {.k = CV_NULL};
    if (++e->steps > CEL_MAX_STEPS)
        return cel_err(e, "%s", cost_msg);
    switch (n->k) {
    case CN_NULL:
        return v;
    case CN_BOOL:
        return cel_bool((int)n->i);
    case CN_INT:
        return cel_int(n->i);
    case CN_UINT:
        v.k = CV_UINT;
        v.u = n->u;
        return v;
    case CN_DOUBLE:
        v.k = CV_DOUBLE;
        v.d = n->d;
        return v;
    case CN_STRING:
        v.k = CV_STRING;
        v.s = n->str;
        v.n = n->slen;
        return v;
    case CN_IDENT:
        for (struct cel_scope *s = e->scope; s; s = s->up)
            if (!strcmp(s->name, n->str))
                return s->v;
        if (!strcmp(n->str, "self"))
            return cel_from_json(e->env->self, e->env->schema);
        if (!strcmp(n->str, "oldSelf")) {
            if (!e->env->old_self)
                return cel_err(e, "no such attribute: oldSelf");
            return cel_from_json(e->env->old_self, e->env->schema);
        }
        return cel_err(e, "no such attribute: %s", n->str);
    case CN_SELECT:
        return select_field(e, ev(e, n->a), n->str, 0);
    case CN_HAS:
        return select_field(e, ev(e, n->a), n->str, 1);
    case CN_INDEX:
        return index_val(e, n);
    case CN_COND: {
        struct cel_val c = ev(e, n->a);
        if (c.k == CV_ERR)
            return c;
        if (c.k != CV_BOOL)
            return cel_err(e, "no such overload: ternary on %s", cel_type_name(&c));
        return ev(e, c.b ? n->b : n->c);
    }
    case CN_AND:
    case CN_OR: {
        int want = n->k == CN_OR; /* the value that decides */
        struct cel_val a = ev(e, n->a), b;
        if (a.k == CV_BOOL && a.b == want)
            return a;
        b = ev(e, n->b);
        if (b.k == CV_BOOL && b.b == want)
            return b;
        if (a.k == CV_ERR)
            return a;
        if (b.k == CV_ERR)
            return b;
        if (a.k != CV_BOOL || b.k != CV_BOOL)
            return cel_err(e, "no such overload: %s %s %s", cel_type_name(&a), want ? "||" : "&&",
                           cel_type_name(&b));
        return cel_bool(!want ? 1 : 0);
    }
    case CN_NOT: {
        struct cel_val a = ev(e, n->a);
        if (a.k == CV_ERR)
            return a;
        if (a.k != CV_BOOL)
            return cel_err(e, "no such overload: !%s", cel_type_name(&a));
        return cel_bool(!a.b);
    }
    case CN_NEG: {
        struct cel_val a = ev(e, n->a);
        if (a.k == CV_INT) {
            if (a.i == (-9223372036854775807LL - 1))
                return cel_err(e, "integer overflow");
            a.i = -a.i;
            return a;
        }
        if (a.k == CV_DOUBLE) {
            a.d = -a.d;
            return a;
        }
        if (a.k == CV_ERR)
            return a;
        return cel_err(e, "no such overload: -%s", cel_type_name(&a));
    }
    case CN_BIN:
        return binop(e, n);
    case CN_LIST: {
        v.k = CV_LIST;
        v.n = (size_t)n->nargs;
        v.items = cel_alloc(&e->arena, sizeof(*v.items) * (v.n ? v.n : 1));
        if (!v.items)
            return cel_err(e, "%s", cost_msg);
        for (int i = 0; i < n->nargs; i++) {
            v.items[i] = ev(e, n->args[i]);
            if (v.items[i].k == CV_ERR)
                return v.items[i];
        }
        return v;
    }
    case CN_MAP: {
        size_t pairs = (size_t)n->nargs / 2;
        v.k = CV_MAP;
        v.items = cel_alloc(&e->arena, sizeof(*v.items) * (pairs ? pairs : 1));
        v.vals = cel_alloc(&e->arena, sizeof(*v.vals) * (pairs ? pairs : 1));
        if (!v.items || !v.vals)
            return cel_err(e, "%s", cost_msg);
        for (size_t i = 0; i < pairs; i++) {
            struct cel_val k = ev(e, n->args[2 * i]), x = ev(e, n->args[2 * i + 1]), old;
            if (k.k == CV_ERR)
                return k;
            if (x.k == CV_ERR)
                return x;
            if (k.k != CV_STRING && k.k != CV_INT && k.k != CV_UINT && k.k != CV_BOOL)
                return cel_err(e, "unsupported key type: %s", cel_type_name(&k));
            if (cel_map_get(e, &v, &k, &old) == 1)
                return cel_err(e, "Failed with repeated key");
            v.items[v.n] = k;
            v.vals[v.n] = x;
            v.n++;
        }
        return v;
    }
    case CN_CALL: {
        struct cel_val target, *args = NULL;
        if (n->nargs) {
            args = cel_alloc(&e->arena, sizeof(*args) * (size_t)n->nargs);
            if (!args)
                return cel_err(e, "%s", cost_msg);
        }
        if (n->a) {
            target = ev(e, n->a);
            if (target.k == CV_ERR)
                return target;
        }
        for (int i = 0; i < n->nargs; i++) {
            args[i] = ev(e, n->args[i]);
            if (args[i].k == CV_ERR)
                return args[i];
        }
        return cel_call(e, n->str, n->a ? &target : NULL, args, n->nargs);
    }
    case CN_COMPR:
        return comprehension(e, n);
    }
    return cel_err(e, "unsupported expression");
}

static vmop_rc run(const struct cel_prog *p, const struct cel_env *env, struct cel_eval *e,
                   struct cel_val *ret, struct vmop_err *err)
{
    memset(e, 0, sizeof(*e));
    e->arena.cap = CEL_MAX_MEMORY;
    e->env = env;
    *ret = ev(e, p->root);
    if (ret->k == CV_ERR)
        return vmop_fail(err, VMOP_E_INVALID, "%s", ret->s);
    return VMOP_OK;
}

vmop_rc cel_eval_bool(const struct cel_prog *p, const struct cel_env *env, int *ret_bool,
                      struct vmop_err *err)
{
    struct cel_eval e;
    struct cel_val v;
    vmop_rc rc = run(p, env, &e, &v, err);
    if (rc == VMOP_OK && v.k != CV_BOOL)
        rc = vmop_fail(err, VMOP_E_INVALID, "rule evaluated to %s, not a bool", cel_type_name(&v));
    if (rc == VMOP_OK)
        *ret_bool = v.b;
    cel_arena_free(&e.arena);
    return rc;
}

vmop_rc cel_eval_string(const struct cel_prog *p, const struct cel_env *env, char **ret_str,
                        struct vmop_err *err)
{
    struct cel_eval e;
    struct cel_val v;
    vmop_rc rc = run(p, env, &e, &v, err);
    if (rc == VMOP_OK && v.k != CV_STRING)
        rc = vmop_fail(err, VMOP_E_INVALID, "messageExpression evaluated to %s, not a string",
                       cel_type_name(&v));
    if (rc == VMOP_OK) {
        char *s = malloc(v.n + 1);
        if (!s) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        } else {
            memcpy(s, v.s, v.n);
            s[v.n] = '\0';
            *ret_str = s;
        }
    }
    cel_arena_free(&e.arena);
    return rc;
}
