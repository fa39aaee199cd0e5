/* ta_crd.c: CustomResourceDefinitions in kube-testapi: checks and status on write (names defaulted,
 * NamesAccepted/Established set at once, storedVersions), registering the served type so that
 * discovery, OpenAPI and Table columns change immediately, unserving it (and deleting its objects)
 * when the CRD goes, and the resource descriptor handed to apischema's OpenAPI builder.
 * All functions run with the store lock held. */
#include "ta.h"

#include "ta_as.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_cause(cJSON *causes, const char *reason, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#include <stdarg.h>

static void add_cause(cJSON *causes, const char *reason, const char *field, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    cJSON *c = cJSON_CreateObject();
    if (!c)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cJSON_AddStringToObject(c, "reason", reason);
    cJSON_AddStringToObject(c, "message", msg);
    cJSON_AddStringToObject(c, "field", field);
    cJSON_AddItemToArray(causes, c);
}

static cJSON *condition(const char *type, const char *reason, const char *msg, const char *ts)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "type", type);
    cJSON_AddStringToObject(c, "status", "True");
    cJSON_AddStringToObject(c, "lastTransitionTime", ts);
    cJSON_AddStringToObject(c, "reason", reason);
    cJSON_AddStringToObject(c, "message", msg);
    return c;
}

vmop_rc ta_crd_prepare(struct ta_server *s, cJSON *crd, const struct ta_obj *old, cJSON *causes,
                       struct vmop_err *err)
{
    cJSON *spec = ta_jobj(crd, "spec", 0), *names = ta_jobj(spec, "names", 0), *versions, *v,
          *status, *conds, *stored;
    const char *group = ta_jstr(spec, "group"), *plural = ta_jstr(names, "plural"),
               *kind = ta_jstr(names, "kind"), *scope = ta_jstr(spec, "scope"),
               *name = ta_meta_str(crd, "name");
    char buf[600], ts[32];
    int n_storage = 0, idx = 0;
    vmop_rc rc;
    if (!group || !*group)
        add_cause(causes, "FieldValueRequired", "spec.group", "Required value");
    else if (!strchr(group, '.'))
        add_cause(causes, "FieldValueInvalid", "spec.group",
                  "Invalid value: \"%.253s\": should be a domain with at least one dot", group);
    if (!plural || !*plural)
        add_cause(causes, "FieldValueRequired", "spec.names.plural", "Required value");
    else if (!ta_valid_dns_label(plural))
        add_cause(
            causes, "FieldValueInvalid", "spec.names.plural",
            "Invalid value: \"%.253s\": a lowercase RFC 1123 label must consist of lower case "
            "alphanumeric characters or '-'",
            plural);
    if (!kind || !*kind)
        add_cause(causes, "FieldValueRequired", "spec.names.kind", "Required value");
    if (!scope || (strcmp(scope, "Namespaced") != 0 && strcmp(scope, "Cluster") != 0))
        add_cause(causes, "FieldValueNotSupported", "spec.scope",
                  "Unsupported value: \"%.100s\": supported values: \"Cluster\", \"Namespaced\"",
                  scope ? scope : "");
    if (group && plural && name) {
        snprintf(buf, sizeof(buf), "%s.%s", plural, group);
        if (strcmp(buf, name) != 0)
            add_cause(causes, "FieldValueInvalid", "metadata.name",
                      "Invalid value: \"%.253s\": must be spec.names.plural+\".\"+spec.group",
                      name);
    }
    versions = cJSON_GetObjectItemCaseSensitive(spec, "versions");
    if (!cJSON_IsArray(versions) || cJSON_GetArraySize(versions) == 0)
        add_cause(causes, "FieldValueRequired", "spec.versions",
                  "Required value: must have exactly one version marked as storage version");
    cJSON_ArrayForEach(v, versions)
    {
        if (!ta_jstr(v, "name")) {
            snprintf(buf, sizeof(buf), "spec.versions[%d].name", idx);
            add_cause(causes, "FieldValueRequired", buf, "Required value");
        }
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage")))
            n_storage++;
        idx++;
    }
    if (cJSON_GetArraySize(versions) > 0 && n_storage != 1)
        add_cause(causes, "FieldValueInvalid", "spec.versions",
                  "Invalid value: []apiextensions.CustomResourceDefinitionVersion{...}: must have "
                  "exactly one version marked as storage version");
    if (old) {
        const cJSON *os = cJSON_GetObjectItemCaseSensitive(old->json, "spec");
        const char *og = ta_jstr(os, "group"), *oscope = ta_jstr(os, "scope");
        if (og && group && strcmp(og, group) != 0)
            add_cause(causes, "FieldValueInvalid", "spec.group",
                      "Invalid value: \"%.253s\": field is immutable", group);
        if (oscope && scope && strcmp(oscope, scope) != 0)
            add_cause(causes, "FieldValueInvalid", "spec.scope",
                      "Invalid value: \"%.32s\": field is immutable", scope);
    }
    if (group && plural && !old) {
        struct ta_rtype *rt = ta_store_find_type(&s->st, group, plural);
        if (rt && rt->builtin)
            add_cause(causes, "FieldValueInvalid", "spec.names.plural",
                      "Invalid value: \"%.253s\": the group/resource is served by a built-in type",
                      plural);
    }
    rc = as_crd_check(crd, causes, err);
    if (rc == VMOP_E_UNSUPPORTED) {
        vmop_err_clear(err);
        rc = VMOP_OK;
    }
    if (rc || cJSON_GetArraySize(causes) > 0)
        return rc;
    /* defaults in names */
    if (!ta_jstr(names, "singular")) {
        size_t i;
        snprintf(buf, sizeof(buf), "%s", kind);
        for (i = 0; buf[i]; i++)
            buf[i] = (char)tolower((unsigned char)buf[i]);
        ta_jset_str(names, "singular", buf);
    }
    if (!ta_jstr(names, "listKind")) {
        snprintf(buf, sizeof(buf), "%sList", kind);
        ta_jset_str(names, "listKind", buf);
    }
    /* status: accepted and established at once */
    cJSON_DeleteItemFromObjectCaseSensitive(crd, "status");
    status = cJSON_AddObjectToObject(crd, "status");
    ta_now_rfc3339(ts);
    conds = cJSON_AddArrayToObject(status, "conditions");
    cJSON_AddItemToArray(conds,
                         condition("NamesAccepted", "NoConflicts", "no conflicts found", ts));
    cJSON_AddItemToArray(conds, condition("Established", "InitialNamesAccepted",
                                          "the initial names have been accepted", ts));
    cJSON_AddItemToObject(status, "acceptedNames", cJSON_Duplicate(names, 1));
    stored = cJSON_AddArrayToObject(status, "storedVersions");
    if (old) {
        const cJSON *os = cJSON_GetObjectItemCaseSensitive(
                        cJSON_GetObjectItemCaseSensitive(old->json, "status"), "storedVersions"),
                    *it;
        cJSON_ArrayForEach(it, os) cJSON_AddItemToArray(stored, cJSON_Duplicate(it, 1));
    }
    cJSON_ArrayForEach(v, versions)
    {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage"))) {
            const cJSON *it;
            int seen = 0;
            cJSON_ArrayForEach(it, stored) if (cJSON_IsString(it) &&
                                               strcmp(it->valuestring, ta_jstr(v, "name")) == 0)
                seen = 1;
            if (!seen)
                cJSON_AddItemToArray(stored, cJSON_CreateString(ta_jstr(v, "name")));
        }
    }
    return VMOP_OK;
}

static cJSON *dup_or_null(const cJSON *v)
{
    return v ? cJSON_Duplicate(v, 1) : NULL;
}

static void free_versions(struct ta_rtype *rt)
{
    size_t i;
    for (i = 0; i < rt->n_versions; i++) {
        free(rt->versions[i].name);
        cJSON_Delete(rt->versions[i].schema);
        cJSON_Delete(rt->versions[i].columns);
        cJSON_Delete(rt->versions[i].selectable);
    }
    free(rt->versions);
    rt->versions = NULL;
    rt->n_versions = 0;
}

static int replace_str(char **dst, const char *src)
{
    char *n = strdup(src ? src : "");
    if (!n)
        return -1;
    free(*dst);
    *dst = n;
    return 0;
}

vmop_rc ta_crd_apply(struct ta_server *s, const cJSON *crd, struct vmop_err *err)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(crd, "spec");
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(spec, "names");
    const cJSON *versions = cJSON_GetObjectItemCaseSensitive(spec, "versions"), *v;
    const char *group = ta_jstr(spec, "group"), *plural = ta_jstr(names, "plural");
    struct ta_rtype *rt;
    size_t n = 0;
    if (!group || !plural)
        return vmop_fail(err, VMOP_E_INTERNAL, "CRD without group or plural after checks");
    rt = ta_store_add_type(&s->st, group, plural);
    if (!rt)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory registering a CRD");
    free_versions(rt);
    rt->versions = calloc((size_t)cJSON_GetArraySize(versions) + 1, sizeof(*rt->versions));
    if (!rt->versions)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory registering a CRD");
    cJSON_ArrayForEach(v, versions)
    {
        struct ta_version *tv = &rt->versions[n];
        const cJSON *subs = cJSON_GetObjectItemCaseSensitive(v, "subresources");
        tv->name = strdup(ta_jstr(v, "name") ? ta_jstr(v, "name") : "");
        if (!tv->name)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory registering a CRD");
        tv->served = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "served"));
        tv->storage = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage"));
        tv->has_status = cJSON_GetObjectItemCaseSensitive(subs, "status") != NULL;
        tv->has_scale = cJSON_GetObjectItemCaseSensitive(subs, "scale") != NULL;
        tv->schema = dup_or_null(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(v, "schema"), "openAPIV3Schema"));
        tv->columns = dup_or_null(cJSON_GetObjectItemCaseSensitive(v, "additionalPrinterColumns"));
        tv->selectable = dup_or_null(cJSON_GetObjectItemCaseSensitive(v, "selectableFields"));
        n++;
    }
    rt->n_versions = n;
    if (replace_str(&rt->singular, ta_jstr(names, "singular")) ||
        replace_str(&rt->kind, ta_jstr(names, "kind")) ||
        replace_str(&rt->list_kind, ta_jstr(names, "listKind")))
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory registering a CRD");
    cJSON_Delete(rt->short_names);
    rt->short_names = dup_or_null(cJSON_GetObjectItemCaseSensitive(names, "shortNames"));
    cJSON_Delete(rt->categories);
    rt->categories = dup_or_null(cJSON_GetObjectItemCaseSensitive(names, "categories"));
    rt->namespaced = !ta_jstr(spec, "scope") || strcmp(ta_jstr(spec, "scope"), "Cluster") != 0;
    rt->builtin = 0;
    rt->served = 1;
    s->st.reg_gen++;
    return VMOP_OK;
}

void ta_crd_removed(struct ta_server *s, const cJSON *crd)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(crd, "spec");
    const char *group = ta_jstr(spec, "group");
    const char *plural = ta_jstr(cJSON_GetObjectItemCaseSensitive(spec, "names"), "plural");
    struct ta_rtype *rt = group && plural ? ta_store_find_type(&s->st, group, plural) : NULL;
    if (!rt || rt->builtin)
        return;
    while (rt->n_objs > 0) {
        struct vmop_err e = {0};
        if (ta_store_remove(&s->st, rt, rt->objs[rt->n_objs - 1]->key, NULL, &e))
            break;
    }
    rt->served = 0;
    s->st.reg_gen++;
}

cJSON *ta_rtype_descriptor(const struct ta_rtype *rt, const struct ta_version *v)
{
    cJSON *d = cJSON_CreateObject();
    if (!d)
        return NULL;
    cJSON_AddStringToObject(d, "group", rt->group);
    cJSON_AddStringToObject(d, "version", v->name);
    cJSON_AddStringToObject(d, "kind", rt->kind);
    cJSON_AddStringToObject(d, "listKind", rt->list_kind);
    cJSON_AddStringToObject(d, "plural", rt->plural);
    cJSON_AddStringToObject(d, "singular", rt->singular);
    cJSON_AddBoolToObject(d, "namespaced", rt->namespaced);
    cJSON_AddBoolToObject(d, "builtin", rt->builtin);
    if (v->schema)
        cJSON_AddItemToObject(d, "schema", cJSON_Duplicate(v->schema, 1));
    if (v->has_status || v->has_scale) {
        cJSON *subs = cJSON_AddObjectToObject(d, "subresources");
        if (v->has_status)
            cJSON_AddObjectToObject(subs, "status");
        if (v->has_scale)
            cJSON_AddObjectToObject(subs, "scale");
    }
    if (v->columns)
        cJSON_AddItemToObject(d, "printerColumns", cJSON_Duplicate(v->columns, 1));
    if (rt->short_names)
        cJSON_AddItemToObject(d, "shortNames", cJSON_Duplicate(rt->short_names, 1));
    if (rt->categories)
        cJSON_AddItemToObject(d, "categories", cJSON_Duplicate(rt->categories, 1));
    return d;
}
