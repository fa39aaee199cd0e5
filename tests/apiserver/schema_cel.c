/* schema_cel.c: runs x-kubernetes-validations rules over an object (schema_cel.h), with the field
 * paths, values and messages of apiextensions-apiserver's CEL validator: "failed rule: <rule>" or
 * the rule's message / messageExpression, reason and fieldPath honoured, transition rules only
 * where the old object has a correlatable value (same key; list-type map items by their keys). */
#include "schema_cel.h"
#include "cel.h"
#include "schema_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cctx {
    cJSON *causes;
    struct as_path path;
    vmop_rc rc;
    int stop; /* the cost budget ran out: no further rules */
};

int as_schema_has_rules(const cJSON *s, int depth)
{
    const cJSON *p;
    if (!cJSON_IsObject(s) || depth > AS_MAX_DEPTH)
        return 0;
    p = cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-validations");
    if (cJSON_IsArray(p) && p->child)
        return 1;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(s, "properties"))
    {
        if (as_schema_has_rules(p, depth + 1))
            return 1;
    }
    return as_schema_has_rules(cJSON_GetObjectItemCaseSensitive(s, "items"), depth + 1) ||
           as_schema_has_rules(cJSON_GetObjectItemCaseSensitive(s, "additionalProperties"),
                               depth + 1);
}

static void add(struct cctx *c, enum as_ftype t, const char *field, const char *val,
                const char *detail)
{
    if (as_cause_add(c->causes, t, field, val, detail) != VMOP_OK)
        c->rc = VMOP_E_NOMEM;
}

static char *trim_dup(const char *s)
{
    size_t n;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    return strndup(s, n);
}

static void run_rule(struct cctx *c, const cJSON *rule, const cJSON *x, const cJSON *old,
                     const cJSON *s, const char *type_q)
{
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(rule, "rule");
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(rule, "message");
    const cJSON *mexpr = cJSON_GetObjectItemCaseSensitive(rule, "messageExpression");
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(rule, "reason");
    const cJSON *fpath = cJSON_GetObjectItemCaseSensitive(rule, "fieldPath");
    struct cel_prog *prog = NULL;
    struct vmop_err e = {0};
    struct cel_env env = {.self = x, .old_self = old, .schema = s};
    char *rule_text = NULL, *detail = NULL, *dyn = NULL;
    int ok = 0;
    size_t oldlen;

    if (!cJSON_IsString(src))
        return;
    rule_text =
        trim_dup(cJSON_IsString(msg) && *msg->valuestring ? msg->valuestring : src->valuestring);
    if (!rule_text) {
        c->rc = VMOP_E_NOMEM;
        return;
    }
    if (cel_compile(src->valuestring, &prog, &e) != VMOP_OK) {
        char d[800];
        snprintf(d, sizeof(d), "rule compile error: %s", e.msg);
        add(c, AS_F_INVALID, as_path_str(&c->path), type_q, d);
        goto out;
    }
    if (cel_prog_uses_oldself(prog) && !old)
        goto out; /* transition rule without a comparable old value */
    if (cel_eval_bool(prog, &env, &ok, &e) != VMOP_OK) {
        char d[1200];
        if (strncmp(e.msg, "operation cancelled", 19) == 0) {
            snprintf(d, sizeof(d),
                     "'%s': no further validation rules will be run due to call cost exceeds limit "
                     "for rule: %s",
                     e.msg, rule_text);
            c->stop = 1;
        } else if (strncmp(e.msg, "no such overload", 16) == 0) {
            snprintf(d, sizeof(d),
                     "'%s': call arguments did not match a supported operator, function or macro "
                     "signature for rule: %s",
                     e.msg, rule_text);
        } else {
            snprintf(d, sizeof(d), "%s evaluating rule: %s", e.msg, rule_text);
        }
        add(c, AS_F_INVALID, as_path_str(&c->path), type_q, d);
        goto out;
    }
    if (ok)
        goto out;
    /* The rule failed: message from messageExpression, message, or "failed rule: <rule>". */
    if (cJSON_IsString(mexpr) && *mexpr->valuestring) {
        struct cel_prog *mp = NULL;
        struct vmop_err me = {0};
        if (cel_compile(mexpr->valuestring, &mp, &me) == VMOP_OK &&
            cel_eval_string(mp, &env, &dyn, &me) == VMOP_OK && (!*dyn || strchr(dyn, '\n'))) {
            free(dyn);
            dyn = NULL;
        }
        cel_prog_free(mp);
    }
    if (dyn) {
        detail = trim_dup(dyn);
    } else if (cJSON_IsString(msg) && *msg->valuestring) {
        detail = trim_dup(msg->valuestring);
    } else {
        size_t n = strlen(rule_text) + 16;
        detail = malloc(n);
        if (detail)
            snprintf(detail, n, "failed rule: %s", rule_text);
    }
    if (!detail) {
        c->rc = VMOP_E_NOMEM;
        goto out;
    }
    oldlen = c->path.len;
    if (cJSON_IsString(fpath) && *fpath->valuestring) {
        const char *fp = fpath->valuestring;
        if (*fp == '.')
            fp++;
        as_path_child(&c->path, fp);
    }
    {
        const char *r = cJSON_IsString(reason) ? reason->valuestring : "";
        const char *f = as_path_str(&c->path);
        if (!strcmp(r, "FieldValueForbidden"))
            add(c, AS_F_FORBIDDEN, f, NULL, detail);
        else if (!strcmp(r, "FieldValueRequired"))
            add(c, AS_F_REQUIRED, f, NULL, detail);
        else if (!strcmp(r, "FieldValueDuplicate"))
            add(c, AS_F_DUPLICATE, f, type_q, NULL);
        else
            add(c, AS_F_INVALID, f, type_q, detail);
    }
    as_path_pop(&c->path, oldlen);
out:
    free(dyn);
    free(detail);
    free(rule_text);
    cel_prog_free(prog);
}

/* The old item of a list-type map that has the same keys as item, or NULL. */
static const cJSON *correlate(const cJSON *s, const cJSON *item, const cJSON *old)
{
    const cJSON *lt = cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-list-type");
    const cJSON *keys = cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-list-map-keys");
    const cJSON *o, *k;
    if (!cJSON_IsArray(old) || !cJSON_IsString(lt) || strcmp(lt->valuestring, "map") ||
        !cJSON_IsArray(keys) || !cJSON_IsObject(item))
        return NULL;
    cJSON_ArrayForEach(o, old)
    {
        int same = cJSON_IsObject(o);
        cJSON_ArrayForEach(k, keys)
        {
            if (same && cJSON_IsString(k))
                same = as_json_equal(cJSON_GetObjectItemCaseSensitive(item, k->valuestring),
                                     cJSON_GetObjectItemCaseSensitive(o, k->valuestring));
        }
        if (same)
            return o;
    }
    return NULL;
}

static void walk(struct cctx *c, const cJSON *x, const cJSON *old, const cJSON *s, int depth)
{
    const cJSON *rules, *r;
    char *type_q;
    if (!cJSON_IsObject(s) || !x || cJSON_IsNull(x) || depth > AS_MAX_DEPTH || c->rc || c->stop)
        return;
    if (old && cJSON_IsNull(old))
        old = NULL;
    rules = cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-validations");
    if (cJSON_IsArray(rules) && rules->child) {
        type_q = as_go_quote_str(as_schema_type(s));
        if (!type_q) {
            c->rc = VMOP_E_NOMEM;
            return;
        }
        cJSON_ArrayForEach(r, rules)
        {
            if (c->rc || c->stop)
                break;
            run_rule(c, r, x, old, s, type_q);
        }
        free(type_q);
    }
    if (cJSON_IsObject(x)) {
        const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
        const cJSON *ap = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
        const cJSON *k;
        cJSON_ArrayForEach(k, x)
        {
            const cJSON *ps = cJSON_GetObjectItemCaseSensitive(props, k->string);
            const cJSON *ov =
                cJSON_IsObject(old) ? cJSON_GetObjectItemCaseSensitive(old, k->string) : NULL;
            size_t o;
            if (depth == 0 && !strcmp(k->string, "metadata"))
                continue;
            if (ps) {
                o = as_path_child(&c->path, k->string);
                walk(c, k, ov, ps, depth + 1);
            } else if (cJSON_IsObject(ap)) {
                o = as_path_key(&c->path, k->string);
                walk(c, k, ov, ap, depth + 1);
            } else {
                continue;
            }
            as_path_pop(&c->path, o);
        }
    } else if (cJSON_IsArray(x)) {
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
        const cJSON *e;
        long i = 0;
        cJSON_ArrayForEach(e, x)
        {
            size_t o = as_path_index(&c->path, i++);
            walk(c, e, correlate(s, e, old), items, depth + 1);
            as_path_pop(&c->path, o);
        }
    }
}

vmop_rc as_schema_cel_validate(const cJSON *schema, const cJSON *obj, const cJSON *old,
                               cJSON *causes, struct vmop_err *err)
{
    struct cctx *c = calloc(1, sizeof(*c));
    vmop_rc rc;
    if (!c)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory evaluating rules");
    c->causes = causes;
    walk(c, obj, old, schema, 0);
    rc = c->rc;
    free(c);
    if (rc != VMOP_OK)
        return vmop_fail(err, rc, "out of memory evaluating rules");
    return VMOP_OK;
}
