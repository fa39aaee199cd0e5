/* schema_crd.c: checks of a CustomResourceDefinition at create/update (as_crd_check, schema.h): the
 * fields the server relies on (group, names, scope, versions, one storage version), structural
 * schema rules, defaults that validate, patterns that compile, and CEL rules that compile within
 * the supported subset, so a CRD author sees an unsupported construct when registering, not later.
 */
#include "cel.h"
#include "schema.h"
#include "schema_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct crdctx {
    cJSON *causes;
    struct as_path path;
    vmop_rc rc;
};

static void add(struct crdctx *c, enum as_ftype t, const char *val, const char *detail)
{
    if (as_cause_add(c->causes, t, as_path_str(&c->path), val, detail) != VMOP_OK)
        c->rc = VMOP_E_NOMEM;
}

static void add_at(struct crdctx *c, const char *child, enum as_ftype t, const char *val,
                   const char *detail)
{
    size_t o = as_path_child(&c->path, child);
    add(c, t, val, detail);
    as_path_pop(&c->path, o);
}

static void add_quoted(struct crdctx *c, const char *child, enum as_ftype t, const char *v,
                       const char *detail)
{
    char *q = as_go_quote_str(v);
    if (!q) {
        c->rc = VMOP_E_NOMEM;
        return;
    }
    if (child)
        add_at(c, child, t, q, detail);
    else
        add(c, t, q, detail);
    free(q);
}

static const char *str_field(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* %#v of an apiextensions.ValidationRule, as the real message shows it. */
static void rule_gosyntax(struct vbuf *b, const cJSON *rule)
{
    const char *reason = str_field(rule, "reason");
    const cJSON *opt = cJSON_GetObjectItemCaseSensitive(rule, "optionalOldSelf");
    vbuf_adds(b, "apiextensions.ValidationRule{Rule:");
    as_go_quote(b, str_field(rule, "rule") ? str_field(rule, "rule") : "");
    vbuf_adds(b, ", Message:");
    as_go_quote(b, str_field(rule, "message") ? str_field(rule, "message") : "");
    vbuf_adds(b, ", MessageExpression:");
    as_go_quote(b,
                str_field(rule, "messageExpression") ? str_field(rule, "messageExpression") : "");
    vbuf_adds(b, ", Reason:(*apiextensions.FieldValueErrorReason)(");
    if (reason)
        as_go_quote(b, reason);
    else
        vbuf_adds(b, "nil");
    vbuf_adds(b, "), FieldPath:");
    as_go_quote(b, str_field(rule, "fieldPath") ? str_field(rule, "fieldPath") : "");
    vbuf_addf(b, ", OptionalOldSelf:(*bool)(%s)}",
              cJSON_IsBool(opt) ? (cJSON_IsTrue(opt) ? "true" : "false") : "nil");
}

static void check_rules(struct crdctx *c, const cJSON *s)
{
    const cJSON *rules = cJSON_GetObjectItemCaseSensitive(s, "x-kubernetes-validations"), *r;
    long i = 0;
    if (!rules)
        return;
    if (!cJSON_IsArray(rules)) {
        add_at(c, "x-kubernetes-validations", AS_F_INVALID, "\"\"", "must be a list of rules");
        return;
    }
    cJSON_ArrayForEach(r, rules)
    {
        size_t o = as_path_child(&c->path, "x-kubernetes-validations");
        struct cel_prog *p = NULL;
        struct vmop_err e = {0};
        const char *src = str_field(r, "rule");
        const char *mexpr = str_field(r, "messageExpression");
        const char *reason = str_field(r, "reason");
        as_path_index(&c->path, i++);
        if (!src || !*src) {
            add_at(c, "rule", AS_F_REQUIRED, NULL, "rule is not specified");
        } else if (cel_compile(src, &p, &e) != VMOP_OK || cel_check_fields(p, s, &e) != VMOP_OK) {
            struct vbuf b;
            vbuf_init(&b, 256 * 1024);
            rule_gosyntax(&b, r);
            if (!vbuf_error(&b)) {
                char d[800];
                snprintf(d, sizeof(d), "compilation failed: %s", e.msg);
                add_at(c, "rule", AS_F_INVALID, vbuf_str(&b), d);
            }
            vbuf_free(&b);
        }
        cel_prog_free(p);
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "optionalOldSelf")))
            add_at(c, "optionalOldSelf", AS_F_FORBIDDEN, NULL,
                   "optionalOldSelf is not supported by this test API server");
        if (mexpr && *mexpr) {
            struct vmop_err me = {0};
            p = NULL;
            if (cel_compile(mexpr, &p, &me) != VMOP_OK) {
                char d[800];
                snprintf(d, sizeof(d), "messageExpression compilation failed: %s", me.msg);
                add_quoted(c, "messageExpression", AS_F_INVALID, mexpr, d);
            }
            cel_prog_free(p);
        }
        if (reason && strcmp(reason, "FieldValueInvalid") &&
            strcmp(reason, "FieldValueForbidden") && strcmp(reason, "FieldValueRequired") &&
            strcmp(reason, "FieldValueDuplicate"))
            add_quoted(c, "reason", AS_F_NOT_SUPPORTED, reason,
                       "supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", "
                       "\"FieldValueInvalid\", \"FieldValueRequired\"");
        as_path_pop(&c->path, o);
    }
}

static void check_default(struct crdctx *c, const cJSON *s)
{
    const cJSON *def = cJSON_GetObjectItemCaseSensitive(s, "default");
    cJSON *wrap, *schema, *props, *causes, *cause;
    struct vmop_err e = {0};
    if (!def)
        return;
    /* Validate {"default": value} against {"properties": {"default": node}}, rules excluded. */
    wrap = cJSON_CreateObject();
    schema = cJSON_CreateObject();
    props = cJSON_AddObjectToObject(schema, "properties");
    causes = cJSON_CreateArray();
    if (!wrap || !props || !causes) {
        c->rc = VMOP_E_NOMEM;
        goto out;
    }
    cJSON *copy = cJSON_Duplicate(s, 1);
    if (!copy) {
        c->rc = VMOP_E_NOMEM;
        goto out;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(copy, "x-kubernetes-validations");
    cJSON_AddItemToObject(props, "default", copy);
    cJSON_AddItemToObject(wrap, "default", cJSON_Duplicate(def, 1));
    if (as_schema_validate(schema, wrap, NULL, causes, &e) != VMOP_OK) {
        c->rc = e.rc;
        goto out;
    }
    cJSON_ArrayForEach(cause, causes)
    {
        const char *f = str_field(cause, "field");
        /* "default.x" -> "<schema path>.default.x"; reason and message stay. */
        size_t o = as_path_child(&c->path, "default");
        const char *rest = f && !strncmp(f, "default", 7) ? f + 7 : "";
        cJSON *copy2;
        if (*rest == '.')
            as_path_child(&c->path, rest + 1);
        else if (*rest)
            as_path_key(&c->path, rest);
        copy2 = cJSON_Duplicate(cause, 1);
        if (!copy2 || !cJSON_ReplaceItemInObjectCaseSensitive(
                          copy2, "field", cJSON_CreateString(as_path_str(&c->path))))
            c->rc = VMOP_E_NOMEM;
        else
            cJSON_AddItemToArray(c->causes, copy2);
        as_path_pop(&c->path, o);
    }
out:
    cJSON_Delete(wrap);
    cJSON_Delete(schema);
    cJSON_Delete(causes);
}

static void check_node(struct crdctx *c, const cJSON *s, int depth, int root)
{
    const char *type = as_schema_type(s);
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
    const cJSON *ap = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
    const char *pattern = str_field(s, "pattern");
    const char *lt = str_field(s, "x-kubernetes-list-type");
    const cJSON *p;

    if (depth > AS_MAX_DEPTH) {
        add(c, AS_F_FORBIDDEN, NULL, "schema nested too deeply");
        return;
    }
    if (!cJSON_IsObject(s)) {
        add(c, AS_F_INVALID, "\"\"", "must be a schema object");
        return;
    }
    if (!*type && !as_schema_flag(s, "x-kubernetes-preserve-unknown-fields") &&
        !as_schema_flag(s, "x-kubernetes-int-or-string"))
        add_at(c, "type", AS_F_REQUIRED, NULL, "must not be empty for specified object fields");
    else if (*type && strcmp(type, "object") && strcmp(type, "array") && strcmp(type, "string") &&
             strcmp(type, "integer") && strcmp(type, "number") && strcmp(type, "boolean"))
        add_quoted(c, "type", AS_F_NOT_SUPPORTED, type,
                   "supported values: \"array\", \"boolean\", \"integer\", \"number\", "
                   "\"object\", \"string\"");
    if (root && strcmp(type, "object"))
        add_quoted(c, "type", AS_F_INVALID, type, "must be object at the root");
    if (props && ap && !cJSON_IsFalse(ap))
        add_at(c, "additionalProperties", AS_F_FORBIDDEN, NULL,
               "additionalProperties and properties are mutual exclusive");
    if (as_schema_flag(s, "uniqueItems"))
        add_at(c, "uniqueItems", AS_F_FORBIDDEN, NULL,
               "uniqueItems cannot be set to true since the runtime complexity becomes quadratic");
    if (!strcmp(type, "array") && !cJSON_IsObject(items))
        add_at(c, "items", AS_F_REQUIRED, NULL, "must be specified");
    if (pattern) {
        struct vmop_err e = {0};
        if (as_regex_match(pattern, "", &e) < 0) {
            char d[700];
            snprintf(d, sizeof(d), "must be a valid regular expression, but isn't: %s", e.msg);
            add_quoted(c, "pattern", AS_F_INVALID, pattern, d);
        }
    }
    if (lt) {
        if (strcmp(lt, "atomic") && strcmp(lt, "set") && strcmp(lt, "map"))
            add_quoted(c, "x-kubernetes-list-type", AS_F_NOT_SUPPORTED, lt,
                       "supported values: \"atomic\", \"map\", \"set\"");
        else if (!strcmp(lt, "map") && cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
                                           s, "x-kubernetes-list-map-keys")) == 0)
            add_at(c, "x-kubernetes-list-map-keys", AS_F_REQUIRED, NULL,
                   "must not be empty if x-kubernetes-list-type is map");
    }
    check_default(c, s);
    check_rules(c, s);
    cJSON_ArrayForEach(p, props)
    {
        size_t o = as_path_child(&c->path, "properties");
        as_path_key(&c->path, p->string);
        if (root && !strcmp(p->string, "metadata")) {
            const cJSON *mp = cJSON_GetObjectItemCaseSensitive(p, "properties"), *k;
            cJSON_ArrayForEach(k, mp) if (strcmp(k->string, "name") &&
                                          strcmp(k->string, "generateName"))
            {
                add(c, AS_F_FORBIDDEN, NULL,
                    "must not specify anything other than name and generateName, but metadata is "
                    "implicitly specified");
                break;
            }
        }
        check_node(c, p, depth + 1, 0);
        as_path_pop(&c->path, o);
    }
    if (cJSON_IsObject(ap)) {
        size_t o = as_path_child(&c->path, "additionalProperties");
        check_node(c, ap, depth + 1, 0);
        as_path_pop(&c->path, o);
    }
    if (cJSON_IsObject(items)) {
        size_t o = as_path_child(&c->path, "items");
        check_node(c, items, depth + 1, 0);
        as_path_pop(&c->path, o);
    }
}

vmop_rc as_crd_check(const cJSON *crd, cJSON *causes, struct vmop_err *err)
{
    struct crdctx *c;
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(crd, "spec");
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(spec, "names");
    const cJSON *versions = cJSON_GetObjectItemCaseSensitive(spec, "versions"), *v;
    const char *group = str_field(spec, "group"), *plural = str_field(names, "plural");
    const char *kind = str_field(names, "kind"), *scope = str_field(spec, "scope");
    const char *name = str_field(cJSON_GetObjectItemCaseSensitive(crd, "metadata"), "name");
    int storage = 0;
    long i = 0;
    vmop_rc rc;

    if (!cJSON_IsObject(crd) || !cJSON_IsArray(causes))
        return vmop_fail(err, VMOP_E_INVALID, "as_crd_check needs an object and an array");
    c = calloc(1, sizeof(*c));
    if (!c)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory checking a CRD");
    c->causes = causes;
    if (!group || !*group) {
        as_path_child(&c->path, "spec.group");
        add(c, AS_F_REQUIRED, NULL, NULL);
        as_path_pop(&c->path, 0);
    }
    if (!plural || !*plural) {
        as_path_child(&c->path, "spec.names.plural");
        add(c, AS_F_REQUIRED, NULL, NULL);
        as_path_pop(&c->path, 0);
    }
    if (!kind || !*kind) {
        as_path_child(&c->path, "spec.names.kind");
        add(c, AS_F_REQUIRED, NULL, NULL);
        as_path_pop(&c->path, 0);
    }
    if (group && plural && name) {
        char want[600];
        snprintf(want, sizeof(want), "%s.%s", plural, group);
        if (strcmp(want, name)) {
            as_path_child(&c->path, "metadata.name");
            add_quoted(c, NULL, AS_F_INVALID, name, "must be spec.names.plural+\".\"+spec.group");
            as_path_pop(&c->path, 0);
        }
    }
    if (!scope || (strcmp(scope, "Namespaced") && strcmp(scope, "Cluster"))) {
        as_path_child(&c->path, "spec.scope");
        if (!scope)
            add(c, AS_F_REQUIRED, NULL, NULL);
        else
            add_quoted(c, NULL, AS_F_NOT_SUPPORTED, scope,
                       "supported values: \"Cluster\", \"Namespaced\"");
        as_path_pop(&c->path, 0);
    }
    if (!cJSON_IsArray(versions) || !versions->child) {
        as_path_child(&c->path, "spec.versions");
        add(c, AS_F_REQUIRED, NULL, "must have exactly one version marked as storage version");
        as_path_pop(&c->path, 0);
    }
    cJSON_ArrayForEach(v, versions)
    {
        const cJSON *schema = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(v, "schema"), "openAPIV3Schema");
        as_path_child(&c->path, "spec.versions");
        as_path_index(&c->path, i++);
        storage += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage"));
        if (!str_field(v, "name") || !*str_field(v, "name"))
            add_at(c, "name", AS_F_REQUIRED, NULL, NULL);
        as_path_child(&c->path, "schema.openAPIV3Schema");
        if (!cJSON_IsObject(schema))
            add(c, AS_F_REQUIRED, NULL, "schemas are required");
        else
            check_node(c, schema, 0, 1);
        as_path_pop(&c->path, 0);
    }
    if (cJSON_IsArray(versions) && versions->child && storage != 1) {
        char val[64];
        snprintf(val, sizeof(val), "[]apiextensions.CustomResourceDefinitionVersion{...}");
        as_path_child(&c->path, "spec.versions");
        add(c, AS_F_INVALID, val, "must have exactly one version marked as storage version");
        as_path_pop(&c->path, 0);
    }
    rc = c->rc;
    free(c);
    if (rc != VMOP_OK)
        return vmop_fail(err, rc, "out of memory checking a CRD");
    return VMOP_OK;
}
