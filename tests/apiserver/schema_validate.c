/* schema_validate.c: validation of a custom resource against its structural schema with the causes
 * kube-apiserver gives: kube-openapi keyword checks (messages "<path> in body should ..."),
 * converted to field errors as apiextensions does, then x-kubernetes-list-type set/map checks, then
 * the CEL rules (schema_cel.c). Entry point: as_schema_validate (schema.h). */
#include "schema.h"
#include "schema_cel.h"
#include "schema_fmt.h"
#include "schema_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vctx {
    cJSON *causes;
    struct as_path path;
    vmop_rc rc; /* first internal failure (NOMEM) */
};

static void add(struct vctx *c, enum as_ftype t, const char *value_go, const char *detail)
{
    if (as_cause_add(c->causes, t, as_path_str(&c->path), value_go, detail) != VMOP_OK)
        c->rc = VMOP_E_NOMEM;
}

/* A cause whose bad value is the JSON value x and whose detail is "<path> in body <text>". */
static void add_body(struct vctx *c, enum as_ftype t, const cJSON *x, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add_body(struct vctx *c, enum as_ftype t, const cJSON *x, const char *fmt, ...)
{
    char text[1024];
    struct vbuf d;
    char *val = as_go_value_str(x);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    vbuf_init(&d, 64 * 1024);
    vbuf_addf(&d, "%s in body %s", as_path_str(&c->path), text);
    if (!val || vbuf_error(&d))
        c->rc = VMOP_E_NOMEM;
    else
        add(c, t, val, vbuf_str(&d));
    vbuf_free(&d);
    free(val);
}

/* The JSON type of a decoded value, as kube-openapi names it. */
static const char *data_type(const cJSON *x)
{
    if (cJSON_IsString(x))
        return "string";
    if (cJSON_IsBool(x))
        return "boolean";
    if (as_json_is_int(x, NULL))
        return "integer";
    if (cJSON_IsNumber(x))
        return "number";
    if (cJSON_IsArray(x))
        return "array";
    if (cJSON_IsObject(x))
        return "object";
    return "null";
}

/* typeValidator: returns 0 when the value does not have the schema's type. */
static int check_type(struct vctx *c, const cJSON *x, const cJSON *s)
{
    const char *want = as_schema_type(s);
    const char *have = data_type(x);
    int ios = as_schema_flag(s, "x-kubernetes-int-or-string");
    char types[32];
    char *q;
    struct vbuf d;

    if (ios)
        want = "integer,string";
    if (!*want)
        return 1;
    if (cJSON_IsNull(x)) {
        if (as_schema_flag(s, "nullable"))
            return 1;
    } else if (ios) {
        if (strcmp(have, "integer") == 0 || strcmp(have, "string") == 0)
            return 1;
    } else if (strcmp(want, have) == 0 ||
               (strcmp(want, "number") == 0 && !strcmp(have, "integer"))) {
        return 1;
    }
    snprintf(types, sizeof(types), "%s", want);
    q = as_go_quote_str(have);
    vbuf_init(&d, 64 * 1024);
    vbuf_addf(&d, "%s in body must be of type %s: %s", as_path_str(&c->path), types, q ? q : "");
    if (!q || vbuf_error(&d))
        c->rc = VMOP_E_NOMEM;
    else
        add(c, AS_F_TYPE_INVALID, q, vbuf_str(&d));
    vbuf_free(&d);
    free(q);
    return 0;
}

static void node(struct vctx *c, const cJSON *x, const cJSON *s, int depth);

static int num_kw(const cJSON *s, const char *kw, double *ret)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, kw);
    if (!cJSON_IsNumber(v))
        return 0;
    *ret = v->valuedouble;
    return 1;
}

static void check_string(struct vctx *c, const cJSON *x, const cJSON *s)
{
    double lim;
    const cJSON *pat = cJSON_GetObjectItemCaseSensitive(s, "pattern");
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(s, "format");
    size_t len = as_utf8_len(x->valuestring);

    if (num_kw(s, "maxLength", &lim) && (double)len > lim) {
        char detail[64];
        snprintf(detail, sizeof(detail), "may not be more than %lld bytes", (long long)lim);
        add(c, AS_F_TOO_LONG, NULL, detail);
    }
    if (num_kw(s, "minLength", &lim) && (double)len < lim)
        add_body(c, AS_F_INVALID, x, "should be at least %lld chars long", (long long)lim);
    if (cJSON_IsString(pat)) {
        struct vmop_err e = {0};
        int m = as_regex_match(pat->valuestring, x->valuestring, &e);
        if (m == 0)
            add_body(c, AS_F_INVALID, x, "should match '%s'", pat->valuestring);
        else if (m < 0)
            add_body(c, AS_F_INVALID, x, "pattern '%s' cannot be used: %s", pat->valuestring,
                     e.msg);
    }
    if (cJSON_IsString(fmt) && !as_format_ok(fmt->valuestring, x->valuestring)) {
        char *q = as_go_quote_str(x->valuestring);
        struct vbuf d;
        vbuf_init(&d, 64 * 1024);
        vbuf_addf(&d, "%s in body must be of type %s: %s", as_path_str(&c->path), fmt->valuestring,
                  q ? q : "");
        if (!q || vbuf_error(&d))
            c->rc = VMOP_E_NOMEM;
        else
            add(c, AS_F_TYPE_INVALID, q, vbuf_str(&d));
        vbuf_free(&d);
        free(q);
    }
}

static void bound_text(char *buf, size_t n, double v)
{
    struct vbuf b;
    vbuf_init(&b, 64);
    as_go_float(&b, v);
    snprintf(buf, n, "%s", vbuf_str(&b));
    vbuf_free(&b);
}

static void check_number(struct vctx *c, const cJSON *x, const cJSON *s)
{
    double v = x->valuedouble, lim;
    char t[64];
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(s, "format");

    if (cJSON_IsString(fmt) && strcmp(fmt->valuestring, "int32") == 0 &&
        (v < -2147483648.0 || v > 2147483647.0))
        add_body(c, AS_F_INVALID, x, "should be less than or equal to 2147483647 (int32)");
    if (num_kw(s, "multipleOf", &lim) && lim > 0) {
        double q = v / lim;
        if (fabs(q - nearbyint(q)) > 1e-9) {
            bound_text(t, sizeof(t), lim);
            add_body(c, AS_F_INVALID, x, "should be a multiple of %s", t);
        }
    }
    if (num_kw(s, "maximum", &lim)) {
        int excl = as_schema_flag(s, "exclusiveMaximum");
        if (excl ? v >= lim : v > lim) {
            bound_text(t, sizeof(t), lim);
            add_body(c, AS_F_INVALID, x, "should be less than %s%s", excl ? "" : "or equal to ", t);
        }
    }
    if (num_kw(s, "minimum", &lim)) {
        int excl = as_schema_flag(s, "exclusiveMinimum");
        if (excl ? v <= lim : v < lim) {
            bound_text(t, sizeof(t), lim);
            add_body(c, AS_F_INVALID, x, "should be greater than %s%s", excl ? "" : "or equal to ",
                     t);
        }
    }
}

static void check_array(struct vctx *c, const cJSON *x, const cJSON *s, int depth)
{
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
    const cJSON *e;
    long i = 0, n = cJSON_GetArraySize(x);
    double lim;

    if (cJSON_IsObject(items)) {
        cJSON_ArrayForEach(e, x)
        {
            size_t old = as_path_index(&c->path, i++);
            node(c, e, items, depth + 1);
            as_path_pop(&c->path, old);
        }
    }
    if (num_kw(s, "minItems", &lim) && (double)n < lim) {
        cJSON *cnt = cJSON_CreateNumber((double)n);
        add_body(c, AS_F_INVALID, cnt, "should have at least %lld items", (long long)lim);
        cJSON_Delete(cnt);
    }
    if (num_kw(s, "maxItems", &lim) && (double)n > lim) {
        char v[32], detail[64];
        snprintf(v, sizeof(v), "%ld", n);
        snprintf(detail, sizeof(detail), "must have at most %lld item%s", (long long)lim,
                 lim == 1 ? "" : "s");
        add(c, AS_F_TOO_MANY, v, detail);
    }
    if (as_schema_flag(s, "uniqueItems")) {
        const cJSON *a, *b;
        int dup = 0;
        for (a = x->child; a && !dup; a = a->next)
            for (b = a->next; b && !dup; b = b->next)
                dup = as_json_equal(a, b);
        if (dup)
            add_body(c, AS_F_INVALID, x, "shouldn't contain duplicates");
    }
}

static void check_enum(struct vctx *c, const cJSON *x, const cJSON *s)
{
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(s, "enum"), *e;
    struct vbuf d;
    char *val;
    int first = 1;

    if (!cJSON_IsArray(en) || !en->child)
        return;
    cJSON_ArrayForEach(e, en) if (as_json_equal(e, x)) return;
    vbuf_init(&d, 256 * 1024);
    vbuf_adds(&d, "supported values: ");
    cJSON_ArrayForEach(e, en)
    {
        if (!first)
            vbuf_adds(&d, ", ");
        first = 0;
        if (cJSON_IsString(e)) {
            as_go_quote(&d, e->valuestring);
        } else {
            char *j = cJSON_PrintUnformatted(e);
            if (j)
                as_go_quote(&d, j);
            free(j);
        }
    }
    val = as_go_value_str(x);
    if (!val || vbuf_error(&d))
        c->rc = VMOP_E_NOMEM;
    else
        add(c, AS_F_NOT_SUPPORTED, val, vbuf_str(&d));
    free(val);
    vbuf_free(&d);
}

static void check_object(struct vctx *c, const cJSON *x, const cJSON *s, int depth)
{
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
    const cJSON *ap = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(s, "required");
    const cJSON *k, *p;
    long n = cJSON_GetArraySize(x);
    double lim;

    if (num_kw(s, "minProperties", &lim) && (double)n < lim) {
        cJSON *cnt = cJSON_CreateNumber((double)n);
        add_body(c, AS_F_INVALID, cnt, "should have at least %lld properties", (long long)lim);
        cJSON_Delete(cnt);
        return;
    }
    if (num_kw(s, "maxProperties", &lim) && (double)n > lim) {
        char v[32], detail[64];
        snprintf(v, sizeof(v), "%ld", n);
        snprintf(detail, sizeof(detail), "must have at most %lld item%s", (long long)lim,
                 lim == 1 ? "" : "s");
        add(c, AS_F_TOO_MANY, v, detail);
        return;
    }
    cJSON_ArrayForEach(k, x)
    {
        if (cJSON_GetObjectItemCaseSensitive(props, k->string))
            continue;
        if (cJSON_IsFalse(ap)) {
            char detail[1024];
            snprintf(detail, sizeof(detail), "%.500s.%.400s in body is a forbidden property",
                     c->path.len ? c->path.buf : "", k->string);
            add(c, AS_F_INVALID, "\"\"", detail);
        } else if (cJSON_IsObject(ap)) {
            size_t old = as_path_child(&c->path, k->string);
            node(c, k, ap, depth + 1);
            as_path_pop(&c->path, old);
        }
    }
    cJSON_ArrayForEach(p, props)
    {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(x, p->string);
        size_t old;
        if (!v)
            continue;
        /* The root's metadata is the server's business (ObjectMeta validation). */
        if (depth == 0 && strcmp(p->string, "metadata") == 0)
            continue;
        old = as_path_child(&c->path, p->string);
        node(c, v, p, depth + 1);
        as_path_pop(&c->path, old);
    }
    cJSON_ArrayForEach(k, req)
    {
        if (!cJSON_IsString(k) || cJSON_GetObjectItemCaseSensitive(x, k->valuestring))
            continue;
        size_t old = as_path_child(&c->path, k->valuestring);
        add(c, AS_F_REQUIRED, NULL, NULL);
        as_path_pop(&c->path, old);
    }
    if (as_schema_flag(s, "x-kubernetes-embedded-resource") && depth > 0) {
        static const char *const need[] = {"apiVersion", "kind"};
        for (int i = 0; i < 2; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(x, need[i]);
            if (cJSON_IsString(v) && *v->valuestring)
                continue;
            size_t old = as_path_child(&c->path, need[i]);
            add(c, AS_F_REQUIRED, NULL, "must not be empty");
            as_path_pop(&c->path, old);
        }
    }
}

/* Runs the composition keywords on a throw-away context: 1 when x validates against sub. */
static int validates(const cJSON *x, const cJSON *sub, const struct as_path *path, int depth)
{
    struct vctx *t = calloc(1, sizeof(*t));
    int ok = 0;
    if (!t)
        return 0;
    t->causes = cJSON_CreateArray();
    t->path = *path;
    if (t->causes) {
        node(t, x, sub, depth);
        ok = cJSON_GetArraySize(t->causes) == 0;
    }
    cJSON_Delete(t->causes);
    free(t);
    return ok;
}

static void check_composition(struct vctx *c, const cJSON *x, const cJSON *s, int depth)
{
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(s, "allOf");
    const cJSON *any = cJSON_GetObjectItemCaseSensitive(s, "anyOf");
    const cJSON *one = cJSON_GetObjectItemCaseSensitive(s, "oneOf");
    const cJSON *not = cJSON_GetObjectItemCaseSensitive(s, "not");
    const cJSON *e;
    char detail[1200];

    cJSON_ArrayForEach(e, all) node(c, x, e, depth);
    if (cJSON_IsArray(any) && any->child) {
        int ok = 0;
        cJSON_ArrayForEach(e, any) if (!ok) ok = validates(x, e, &c->path, depth);
        if (!ok) {
            snprintf(detail, sizeof(detail), "%s must validate at least one schema (anyOf)",
                     c->path.len ? c->path.buf : "");
            if (as_cause_add(c->causes, AS_F_INVALID, NULL, "\"\"", detail) != VMOP_OK)
                c->rc = VMOP_E_NOMEM;
            node(c, x, any->child, depth);
        }
    }
    if (cJSON_IsArray(one) && one->child) {
        int n = 0;
        cJSON_ArrayForEach(e, one) n += validates(x, e, &c->path, depth);
        if (n != 1) {
            snprintf(detail, sizeof(detail), "%s must validate one and only one schema (oneOf)",
                     c->path.len ? c->path.buf : "");
            if (as_cause_add(c->causes, AS_F_INVALID, NULL, "\"\"", detail) != VMOP_OK)
                c->rc = VMOP_E_NOMEM;
        }
    }
    if (cJSON_IsObject(not ) && validates(x, not, &c->path, depth)) {
        snprintf(detail, sizeof(detail), "%s in body must not validate the schema (not)",
                 c->path.len ? c->path.buf : "");
        add(c, AS_F_INVALID, "\"\"", detail);
    }
}

static void node(struct vctx *c, const cJSON *x, const cJSON *s, int depth)
{
    if (depth > AS_MAX_DEPTH || c->rc != VMOP_OK || !cJSON_IsObject(s))
        return;
    if (!check_type(c, x, s) || cJSON_IsNull(x)) {
        if (cJSON_IsNull(x))
            check_enum(c, x, s);
        return;
    }
    check_composition(c, x, s, depth);
    if (cJSON_IsString(x))
        check_string(c, x, s);
    else if (cJSON_IsNumber(x))
        check_number(c, x, s);
    else if (cJSON_IsArray(x))
        check_array(c, x, s, depth);
    check_enum(c, x, s);
    if (cJSON_IsObject(x))
        check_object(c, x, s, depth);
}

/* --- x-kubernetes-list-type: set / map (structurallisttype.ValidateListSetsAndMaps) --- */

static void list_types(struct vctx *c, const cJSON *x, const cJSON *s, int depth)
{
    if (depth > AS_MAX_DEPTH || !cJSON_IsObject(s) || c->rc != VMOP_OK)
        return;
    if (cJSON_IsObject(x)) {
        const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
        const cJSON *ap = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
        const cJSON *k;
        cJSON_ArrayForEach(k, x)
        {
            const cJSON *ps = cJSON_GetObjectItemCaseSensitive(props, k->string);
            size_t old;
            if (!ps && cJSON_IsObject(ap)) {
                old = as_path_key(&c->path, k->string);
                list_types(c, k, ap, depth + 1);
                as_path_pop(&c->path, old);
            } else if (ps) {
                old = as_path_child(&c->path, k->string);
                list_types(c, k, ps, depth + 1);
                as_path_pop(&c->path, old);
            }
        }
        return;
    }
    if (!cJSON_IsArray(x))
        return;
    const cJSON *lt = cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-list-type");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
    const cJSON *a, *b;
    long i = 0;
    if (cJSON_IsString(lt) && strcmp(lt->valuestring, "set") == 0) {
        for (a = x->child; a; a = a->next, i++) {
            for (b = x->child; b != a; b = b->next)
                if (as_json_equal(a, b))
                    break;
            if (b != a) {
                char *v = as_go_value_str(a);
                size_t old = as_path_index(&c->path, i);
                if (v)
                    add(c, AS_F_DUPLICATE, v, NULL);
                else
                    c->rc = VMOP_E_NOMEM;
                as_path_pop(&c->path, old);
                free(v);
            }
        }
    } else if (cJSON_IsString(lt) && strcmp(lt->valuestring, "map") == 0) {
        const cJSON *keys = cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-list-map-keys");
        for (a = x->child; a; a = a->next, i++) {
            const cJSON *key;
            int missing = 0, dup = 0;
            if (!cJSON_IsObject(a))
                continue;
            cJSON_ArrayForEach(key, keys)
            {
                if (cJSON_IsString(key) && !cJSON_GetObjectItemCaseSensitive(a, key->valuestring)) {
                    size_t old = as_path_index(&c->path, i);
                    as_path_child(&c->path, key->valuestring);
                    add(c, AS_F_REQUIRED, NULL, NULL);
                    as_path_pop(&c->path, old);
                    missing = 1;
                }
            }
            if (missing)
                continue;
            for (b = x->child; b != a && !dup; b = b->next) {
                int same = cJSON_IsObject(b);
                cJSON_ArrayForEach(key, keys)
                {
                    if (!same || !cJSON_IsString(key))
                        continue;
                    same = as_json_equal(cJSON_GetObjectItemCaseSensitive(a, key->valuestring),
                                         cJSON_GetObjectItemCaseSensitive(b, key->valuestring));
                }
                dup = same;
            }
            if (dup) {
                cJSON *km = cJSON_CreateObject();
                char *v;
                cJSON_ArrayForEach(key, keys)
                {
                    const cJSON *kv;
                    if (km && cJSON_IsString(key) &&
                        (kv = cJSON_GetObjectItemCaseSensitive(a, key->valuestring)))
                        cJSON_AddItemToObject(km, key->valuestring, cJSON_Duplicate(kv, 1));
                }
                v = km ? as_go_value_str(km) : NULL;
                size_t old = as_path_index(&c->path, i);
                if (v)
                    add(c, AS_F_DUPLICATE, v, NULL);
                else
                    c->rc = VMOP_E_NOMEM;
                as_path_pop(&c->path, old);
                free(v);
                cJSON_Delete(km);
            }
        }
    }
    i = 0;
    cJSON_ArrayForEach(a, x)
    {
        size_t old = as_path_index(&c->path, i++);
        list_types(c, a, items, depth + 1);
        as_path_pop(&c->path, old);
    }
}

static int blocking(const cJSON *causes)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, causes)
    {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "reason");
        if (!cJSON_IsString(r))
            continue;
        if (!strcmp(r->valuestring, "FieldValueNotSupported") ||
            !strcmp(r->valuestring, "FieldValueRequired") ||
            !strcmp(r->valuestring, "FieldValueTooLong") ||
            !strcmp(r->valuestring, "FieldValueTooMany") ||
            !strcmp(r->valuestring, "FieldValueTypeInvalid"))
            return 1;
    }
    return 0;
}

vmop_rc as_schema_validate(const cJSON *schema, const cJSON *obj, const cJSON *old, cJSON *causes,
                           struct vmop_err *err)
{
    struct vctx *c;
    vmop_rc rc = VMOP_OK;
    cJSON *mine;

    if (!cJSON_IsObject(obj) || !cJSON_IsArray(causes))
        return vmop_fail(err, VMOP_E_INVALID, "as_schema_validate needs an object and an array");
    if (!cJSON_IsObject(schema))
        return VMOP_OK;
    c = calloc(1, sizeof(*c));
    mine = cJSON_CreateArray();
    if (!c || !mine) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory validating an object");
        goto out;
    }
    c->causes = mine;
    node(c, obj, schema, 0);
    list_types(c, obj, schema, 0);
    if (c->rc == VMOP_OK && as_schema_has_rules(schema, 0)) {
        if (blocking(mine)) {
            if (as_cause_add(mine, AS_F_INVALID, NULL, "\"null\"",
                             "some validation rules were not checked because the object was "
                             "invalid; correct the existing errors to complete validation") !=
                VMOP_OK)
                c->rc = VMOP_E_NOMEM;
        } else {
            c->rc = as_schema_cel_validate(schema, obj, old, mine, err);
        }
    }
    if (c->rc != VMOP_OK) {
        rc = vmop_fail(err, c->rc, "out of memory validating an object");
        goto out;
    }
    while (mine->child)
        cJSON_AddItemToArray(causes, cJSON_DetachItemViaPointer(mine, mine->child));
out:
    cJSON_Delete(mine);
    free(c);
    return rc;
}

char *as_invalid_message(const char *kind, const char *group, const char *name, const cJSON *causes)
{
    struct vbuf b, one;
    const cJSON *e;
    int n = cJSON_GetArraySize(causes), uniq = 0, i;
    char **texts = calloc((size_t)n + 1, sizeof(*texts));
    char *ret = NULL;

    if (!texts)
        return NULL;
    vbuf_init(&b, 4 << 20);
    vbuf_init(&one, 1 << 20);
    /* field.ErrorList.ToAggregate: "<field>: <message>", identical texts listed once. */
    cJSON_ArrayForEach(e, causes)
    {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(e, "field");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "message");
        vbuf_reset(&one);
        vbuf_addf(&one, "%s: %s", cJSON_IsString(f) ? f->valuestring : "<nil>",
                  cJSON_IsString(m) ? m->valuestring : "");
        if (vbuf_error(&one))
            goto out;
        for (i = 0; i < uniq; i++)
            if (strcmp(texts[i], vbuf_str(&one)) == 0)
                break;
        if (i < uniq)
            continue;
        if (!(texts[uniq] = strdup(vbuf_str(&one))))
            goto out;
        uniq++;
    }
    /* errors.NewInvalid: `<Kind>.<group> "<name>" is invalid[: <aggregate>]`. */
    vbuf_adds(&b, kind ? kind : "");
    if (group && *group)
        vbuf_addf(&b, ".%s", group);
    vbuf_add(&b, " ", 1);
    as_go_quote(&b, name ? name : "");
    vbuf_adds(&b, " is invalid");
    if (uniq == 1)
        vbuf_addf(&b, ": %s", texts[0]);
    for (i = 0; uniq > 1 && i < uniq; i++)
        vbuf_addf(&b, "%s%s", i ? ", " : ": [", texts[i]);
    if (uniq > 1)
        vbuf_add(&b, "]", 1);
    if (!vbuf_error(&b))
        ret = vbuf_take(&b);
out:
    for (i = 0; i < uniq; i++)
        free(texts[i]);
    free(texts);
    vbuf_free(&one);
    vbuf_free(&b);
    return ret;
}

/* k8s.io/apimachinery/pkg/util/validation IsDNS1123Subdomain. */
vmop_rc as_validate_object_name(const char *name, cJSON *causes)
{
    size_t n = name ? strlen(name) : 0;
    int ok = n > 0 && n <= 253;
    char *q;
    vmop_rc rc;

    for (size_t i = 0; ok && i < n; i++) {
        char ch = name[i];
        int alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
        if (ch == '.') {
            ok = i > 0 && i + 1 < n && name[i - 1] != '.' && name[i - 1] != '-' &&
                 name[i + 1] != '-' && name[i + 1] != '.';
        } else if (ch == '-') {
            ok = i > 0 && i + 1 < n;
        } else {
            ok = alnum;
        }
    }
    if (ok)
        return VMOP_OK;
    if (n == 0)
        return as_cause_add(causes, AS_F_REQUIRED, "metadata.name", NULL,
                            "name or generateName is required");
    q = as_go_quote_str(name);
    if (!q)
        return VMOP_E_NOMEM;
    if (n > 253)
        rc = as_cause_add(causes, AS_F_INVALID, "metadata.name", q,
                          "must be no more than 253 characters");
    else
        rc = as_cause_add(causes, AS_F_INVALID, "metadata.name", q,
                          "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                          "characters, '-' or '.', and must start and end with an alphanumeric "
                          "character (e.g. 'example.com', regex used for validation is "
                          "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
    free(q);
    return rc;
}
