/* openapi.c: the OpenAPI v3 document of one group/version (as_openapi_gv_doc, openapi.h): paths
 * with operations tagged by x-kubernetes-group-version-kind (PATCH lists fieldValidation), and
 * components.schemas for every kind and list plus the shared meta.k8s.io types. */
#include "openapi.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define SCHEMAS "#/components/schemas/"
#define METAREF SCHEMAS "io.k8s.apimachinery.pkg.apis.meta.v1."

void as_openapi_schema_name(const char *group, const char *version, const char *kind, int builtin,
                            char *buf, size_t size)
{
    char g[256] = "";
    const char *p;
    size_t n = 0;

    group = group ? group : "";
    if (builtin) {
        if (!*group) {
            snprintf(buf, size, "io.k8s.api.core.%s.%s", version, kind);
        } else if (!strcmp(group, "apiextensions.k8s.io")) {
            snprintf(buf, size, "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.%s.%s",
                     version, kind);
        } else {
            const char *dot = strchr(group, '.');
            int len = dot ? (int)(dot - group) : (int)strlen(group);
            snprintf(buf, size, "io.k8s.api.%.*s.%s.%s", len, group, version, kind);
        }
        return;
    }
    /* Reverse the DNS labels of the group: example.com -> com.example. */
    p = group + strlen(group);
    while (p > group && n + 2 < sizeof(g)) {
        const char *start = p;
        while (start > group && start[-1] != '.')
            start--;
        size_t l = (size_t)(p - start);
        if (n + l + 2 >= sizeof(g))
            break;
        if (n)
            g[n++] = '.';
        memcpy(g + n, start, l);
        n += l;
        g[n] = '\0';
        p = start > group ? start - 1 : group;
    }
    snprintf(buf, size, "%s%s%s.%s", g, *g ? "." : "", version, kind);
}

static const char *sfield(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static cJSON *ref_schema(const char *ref)
{
    cJSON *s = cJSON_CreateObject();
    if (s && !cJSON_AddStringToObject(s, "$ref", ref)) {
        cJSON_Delete(s);
        return NULL;
    }
    return s;
}

static cJSON *gvk_obj(const char *group, const char *version, const char *kind)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "group", group);
    cJSON_AddStringToObject(o, "version", version);
    cJSON_AddStringToObject(o, "kind", kind);
    return o;
}

static cJSON *param(const char *name, const char *in, const char *desc)
{
    cJSON *p = cJSON_CreateObject(), *s;
    cJSON_AddStringToObject(p, "name", name);
    cJSON_AddStringToObject(p, "in", in);
    cJSON_AddStringToObject(p, "description", desc);
    if (!strcmp(in, "path"))
        cJSON_AddBoolToObject(p, "required", 1);
    s = cJSON_AddObjectToObject(p, "schema");
    if (!strcmp(name, "limit") || !strcmp(name, "timeoutSeconds")) {
        cJSON_AddStringToObject(s, "type", "integer");
    } else if (!strcmp(name, "watch") || !strcmp(name, "allowWatchBookmarks") ||
               !strcmp(name, "force")) {
        cJSON_AddStringToObject(s, "type", "boolean");
    } else {
        cJSON_AddStringToObject(s, "type", "string");
    }
    cJSON_AddBoolToObject(s, "uniqueItems", 1);
    return p;
}

static const char *param_desc(const char *name)
{
    if (!strcmp(name, "fieldValidation"))
        return "fieldValidation instructs the server on how to handle objects in the request "
               "(POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - "
               "Ignore: "
               "This will ignore any unknown fields that are silently dropped from the object, and "
               "will ignore all but the last duplicate field that the decoder encounters. - Warn: "
               "This will send a warning via the standard warning response header for each unknown "
               "field that is dropped from the object, and for each duplicate field that is "
               "encountered. - Strict: This will fail the request with a BadRequest error if any "
               "unknown fields would be dropped from the object, or if any duplicate fields are "
               "present. The error returned from the server will contain all unknown and duplicate "
               "fields encountered.";
    if (!strcmp(name, "dryRun"))
        return "When present, indicates that modifications should not be persisted. Valid values: "
               "All";
    if (!strcmp(name, "fieldManager"))
        return "fieldManager is a name associated with the actor or entity that is making these "
               "changes.";
    if (!strcmp(name, "force"))
        return "Force is going to \"force\" Apply requests. It means user will re-acquire "
               "conflicting fields owned by other people.";
    if (!strcmp(name, "labelSelector"))
        return "A selector to restrict the list of returned objects by their labels.";
    if (!strcmp(name, "fieldSelector"))
        return "A selector to restrict the list of returned objects by their fields.";
    if (!strcmp(name, "limit"))
        return "limit is a maximum number of responses to return for a list call.";
    if (!strcmp(name, "continue"))
        return "The continue option should be set when retrieving more results from the server.";
    if (!strcmp(name, "resourceVersion"))
        return "resourceVersion sets a constraint on what resource versions a request may be "
               "served "
               "from.";
    if (!strcmp(name, "watch"))
        return "Watch for changes to the described resources and return them as a stream of add, "
               "update, and remove notifications.";
    if (!strcmp(name, "timeoutSeconds"))
        return "Timeout for the list/watch call.";
    if (!strcmp(name, "allowWatchBookmarks"))
        return "allowWatchBookmarks requests watch events with type \"BOOKMARK\".";
    if (!strcmp(name, "namespace"))
        return "object name and auth scope, such as for teams and projects";
    if (!strcmp(name, "name"))
        return "name of the resource";
    return "";
}

struct opdef {
    const char *method; /* get put post patch delete */
    const char *action; /* x-kubernetes-action */
    const char *verb;   /* operationId prefix */
    const char *params; /* space separated query parameters */
    const char *body;   /* "object" / "patch" / "delete" / NULL */
    const char *resp;   /* "object" / "list" / "status" */
};

static const struct opdef collection_ops[] = {
    {"get", "list", "list",
     "allowWatchBookmarks continue fieldSelector labelSelector limit resourceVersion "
     "timeoutSeconds watch",
     NULL, "list"},
    {"post", "post", "create", "dryRun fieldManager fieldValidation", "object", "object"},
    {"delete", "deletecollection", "deleteCollection",
     "continue dryRun fieldSelector labelSelector limit resourceVersion timeoutSeconds", "delete",
     "status"},
    {NULL, NULL, NULL, NULL, NULL, NULL},
};

static const struct opdef item_ops[] = {
    {"get", "get", "read", "", NULL, "object"},
    {"put", "put", "replace", "dryRun fieldManager fieldValidation", "object", "object"},
    {"patch", "patch", "patch", "dryRun fieldManager fieldValidation force", "patch", "object"},
    {"delete", "delete", "delete", "dryRun", "delete", "object"},
    {NULL, NULL, NULL, NULL, NULL, NULL},
};

static const struct opdef status_ops[] = {
    {"get", "get", "read", "", NULL, "object"},
    {"put", "put", "replace", "dryRun fieldManager fieldValidation", "object", "object"},
    {"patch", "patch", "patch", "dryRun fieldManager fieldValidation force", "patch", "object"},
    {NULL, NULL, NULL, NULL, NULL, NULL},
};

static cJSON *json_content(const char *ref, int patch, int builtin)
{
    cJSON *c = cJSON_CreateObject();
    if (patch) {
        const char *types[] = {"application/apply-patch+yaml", "application/json-patch+json",
                               "application/merge-patch+json",
                               builtin ? "application/strategic-merge-patch+json" : NULL};
        for (int i = 0; i < 4 && types[i]; i++) {
            cJSON *t = cJSON_AddObjectToObject(c, types[i]);
            cJSON_AddItemToObject(t, "schema", ref_schema(METAREF "Patch"));
        }
        return c;
    }
    cJSON *t = cJSON_AddObjectToObject(c, "application/json");
    cJSON_AddItemToObject(t, "schema", ref_schema(ref));
    t = cJSON_AddObjectToObject(c, "application/yaml");
    cJSON_AddItemToObject(t, "schema", ref_schema(ref));
    return c;
}

/* "exampleComV1" from group + version. */
static void camel(const char *group, const char *version, char *buf, size_t size)
{
    size_t n = 0;
    int up = 0;
    const char *src = *group ? group : "core";
    for (const char *p = src; *p && n + 1 < size; p++) {
        if (*p == '.' || *p == '-') {
            up = 1;
            continue;
        }
        buf[n++] = (char)(up ? toupper((unsigned char)*p) : *p);
        up = 0;
    }
    if (n + 1 < size)
        buf[n++] = (char)toupper((unsigned char)version[0]);
    for (const char *p = version + 1; *p && n + 1 < size; p++)
        buf[n++] = *p;
    buf[n] = '\0';
}

static void add_ops(cJSON *path_item, const struct opdef *ops, const char *group,
                    const char *version, const char *kind, int builtin, int namespaced,
                    const char *sub, const char *kind_ref, const char *list_ref)
{
    char tag[160], opid[512];
    camel(group, version, tag, sizeof(tag));
    for (int i = 0; ops[i].method; i++) {
        const struct opdef *d = &ops[i];
        cJSON *op = cJSON_AddObjectToObject(path_item, d->method), *params, *resp, *ok, *content;
        char plist[256], *save = NULL, *tokn;
        snprintf(opid, sizeof(opid), "%s%c%s%s%s%s%s", d->verb, toupper((unsigned char)tag[0]),
                 tag + 1, namespaced ? "Namespaced" : "", kind, sub ? "Status" : "",
                 !strcmp(d->action, "list") && !namespaced ? "" : "");
        cJSON *tags = cJSON_AddArrayToObject(op, "tags");
        cJSON_AddItemToArray(tags, cJSON_CreateString(tag));
        cJSON_AddStringToObject(op, "description", d->action);
        cJSON_AddStringToObject(op, "operationId", opid);
        params = cJSON_AddArrayToObject(op, "parameters");
        snprintf(plist, sizeof(plist), "%s", d->params);
        for (tokn = strtok_r(plist, " ", &save); tokn; tokn = strtok_r(NULL, " ", &save))
            cJSON_AddItemToArray(params, param(tokn, "query", param_desc(tokn)));
        if (d->body) {
            cJSON *rb = cJSON_AddObjectToObject(op, "requestBody");
            if (!strcmp(d->body, "delete"))
                cJSON_AddItemToObject(rb, "content",
                                      json_content(METAREF "DeleteOptions", 0, builtin));
            else
                cJSON_AddItemToObject(rb, "content",
                                      json_content(kind_ref, !strcmp(d->body, "patch"), builtin));
            if (strcmp(d->body, "delete"))
                cJSON_AddBoolToObject(rb, "required", 1);
        }
        resp = cJSON_AddObjectToObject(op, "responses");
        ok = cJSON_AddObjectToObject(resp, "200");
        cJSON_AddStringToObject(ok, "description", "OK");
        content = cJSON_AddObjectToObject(ok, "content");
        cJSON *ct = cJSON_AddObjectToObject(content, "application/json");
        cJSON_AddItemToObject(ct, "schema",
                              ref_schema(!strcmp(d->resp, "list")     ? list_ref
                                         : !strcmp(d->resp, "status") ? METAREF "Status"
                                                                      : kind_ref));
        if (!strcmp(d->method, "post") || !strcmp(d->method, "put") ||
            !strcmp(d->method, "patch")) {
            cJSON *created = cJSON_AddObjectToObject(resp, "201");
            cJSON_AddStringToObject(created, "description", "Created");
            cJSON *cc = cJSON_AddObjectToObject(cJSON_AddObjectToObject(created, "content"),
                                                "application/json");
            cJSON_AddItemToObject(cc, "schema", ref_schema(kind_ref));
        }
        cJSON *unauth = cJSON_AddObjectToObject(resp, "401");
        cJSON_AddStringToObject(unauth, "description", "Unauthorized");
        cJSON_AddStringToObject(op, "x-kubernetes-action", d->action);
        cJSON_AddItemToObject(op, "x-kubernetes-group-version-kind", gvk_obj(group, version, kind));
    }
}

static cJSON *path_params(int namespaced, int named)
{
    cJSON *a = cJSON_CreateArray();
    if (named)
        cJSON_AddItemToArray(a, param("name", "path", param_desc("name")));
    if (namespaced)
        cJSON_AddItemToArray(a, param("namespace", "path", param_desc("namespace")));
    return a;
}

static const char *const typemeta_desc[2] = {
    "APIVersion defines the versioned schema of this representation of an object. Servers should "
    "convert recognized schemas to the latest internal value, and may reject unrecognized values. "
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#resources",
    "Kind is a string value representing the REST resource this object represents. Servers may "
    "infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. "
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#types-kinds",
};

static void set_prop(cJSON *props, const char *name, cJSON *v)
{
    if (cJSON_GetObjectItemCaseSensitive(props, name))
        cJSON_ReplaceItemInObjectCaseSensitive(props, name, v);
    else
        cJSON_AddItemToObject(props, name, v);
}

static cJSON *typed_string(const char *desc)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "description", desc);
    cJSON_AddStringToObject(s, "type", "string");
    return s;
}

static cJSON *meta_prop(const char *which, const char *desc)
{
    cJSON *m = cJSON_CreateObject();
    char ref[160];
    cJSON *all = cJSON_AddArrayToObject(m, "allOf");
    snprintf(ref, sizeof(ref), METAREF "%s", which);
    cJSON_AddItemToArray(all, ref_schema(ref));
    cJSON_AddItemToObject(m, "default", cJSON_CreateObject());
    cJSON_AddStringToObject(m, "description", desc);
    return m;
}

/* The kind's schema as published: the CRD schema (or built-in) plus apiVersion/kind/metadata. */
static cJSON *kind_schema(const cJSON *r, const char *group, const char *version, const char *kind,
                          int builtin)
{
    cJSON *s = NULL, *props, *gvks;
    const cJSON *crd = cJSON_GetObjectItemCaseSensitive(r, "schema");
    if (builtin)
        s = as_openapi_builtin_schema(group, kind);
    else if (cJSON_IsObject(crd))
        s = cJSON_Duplicate(crd, 1);
    if (!s) {
        s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "type", "object");
        cJSON_AddBoolToObject(s, "x-kubernetes-preserve-unknown-fields", 1);
    }
    if (!cJSON_GetObjectItemCaseSensitive(s, "type"))
        cJSON_AddStringToObject(s, "type", "object");
    props = cJSON_GetObjectItemCaseSensitive(s, "properties");
    if (!props)
        props = cJSON_AddObjectToObject(s, "properties");
    set_prop(props, "apiVersion", typed_string(typemeta_desc[0]));
    set_prop(props, "kind", typed_string(typemeta_desc[1]));
    set_prop(props, "metadata",
             meta_prop("ObjectMeta", "Standard object's metadata. More info: "
                                     "https://git.k8s.io/community/contributors/devel/"
                                     "sig-architecture/api-conventions.md#metadata"));
    cJSON_DeleteItemFromObjectCaseSensitive(s, "x-kubernetes-group-version-kind");
    gvks = cJSON_AddArrayToObject(s, "x-kubernetes-group-version-kind");
    cJSON_AddItemToArray(gvks, gvk_obj(group, version, kind));
    return s;
}

static cJSON *list_schema(const char *group, const char *version, const char *list_kind,
                          const char *kind, const char *kind_ref)
{
    cJSON *s = cJSON_CreateObject(), *props, *items, *gvks, *req;
    char desc[300];
    snprintf(desc, sizeof(desc), "%s is a list of %s", list_kind, kind);
    cJSON_AddStringToObject(s, "description", desc);
    cJSON_AddStringToObject(s, "type", "object");
    req = cJSON_AddArrayToObject(s, "required");
    cJSON_AddItemToArray(req, cJSON_CreateString("items"));
    props = cJSON_AddObjectToObject(s, "properties");
    cJSON_AddItemToObject(props, "apiVersion", typed_string(typemeta_desc[0]));
    items = cJSON_AddObjectToObject(props, "items");
    snprintf(desc, sizeof(desc), "List of %s objects.", kind);
    cJSON_AddStringToObject(items, "description", desc);
    cJSON_AddStringToObject(items, "type", "array");
    cJSON_AddItemToObject(items, "items", ref_schema(kind_ref));
    cJSON_AddItemToObject(props, "kind", typed_string(typemeta_desc[1]));
    cJSON_AddItemToObject(props, "metadata", meta_prop("ListMeta", "Standard list metadata."));
    gvks = cJSON_AddArrayToObject(s, "x-kubernetes-group-version-kind");
    cJSON_AddItemToArray(gvks, gvk_obj(group, version, list_kind));
    return s;
}

vmop_rc as_openapi_gv_doc(const char *group, const char *version, const cJSON *resources,
                          cJSON **ret_doc, struct vmop_err *err)
{
    cJSON *doc = cJSON_CreateObject(), *info, *paths, *comps, *schemas;
    const cJSON *r;
    char prefix[300];
    char *probe;

    group = group ? group : "";
    if (!doc || !version || !*version)
        goto nomem;
    cJSON_AddStringToObject(doc, "openapi", "3.0.0");
    info = cJSON_AddObjectToObject(doc, "info");
    cJSON_AddStringToObject(info, "title", "Kubernetes");
    cJSON_AddStringToObject(info, "version", "v1.32.0");
    paths = cJSON_AddObjectToObject(doc, "paths");
    comps = cJSON_AddObjectToObject(doc, "components");
    schemas = cJSON_AddObjectToObject(comps, "schemas");
    if (*group)
        snprintf(prefix, sizeof(prefix), "/apis/%s/%s", group, version);
    else
        snprintf(prefix, sizeof(prefix), "/api/%s", version);

    cJSON_ArrayForEach(r, resources)
    {
        const char *kind = sfield(r, "kind"), *plural = sfield(r, "plural");
        const char *list_kind = sfield(r, "listKind");
        int builtin = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "builtin"));
        int ns = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "namespaced"));
        int status = cJSON_GetObjectItemCaseSensitive(
                         cJSON_GetObjectItemCaseSensitive(r, "subresources"), "status") != NULL;
        char name[300], lname[320], kref[400], lref[420], lk[200], p[700];
        cJSON *item;

        if (!*kind || !*plural)
            continue;
        if (!*list_kind) {
            snprintf(lk, sizeof(lk), "%sList", kind);
            list_kind = lk;
        }
        as_openapi_schema_name(group, version, kind, builtin, name, sizeof(name));
        as_openapi_schema_name(group, version, list_kind, builtin, lname, sizeof(lname));
        snprintf(kref, sizeof(kref), SCHEMAS "%s", name);
        snprintf(lref, sizeof(lref), SCHEMAS "%s", lname);
        cJSON_DeleteItemFromObjectCaseSensitive(schemas, name);
        cJSON_DeleteItemFromObjectCaseSensitive(schemas, lname);
        cJSON_AddItemToObject(schemas, name, kind_schema(r, group, version, kind, builtin));
        cJSON_AddItemToObject(schemas, lname, list_schema(group, version, list_kind, kind, kref));

        /* Collection, item and status paths; namespaced kinds also get the all-namespaces list. */
        snprintf(p, sizeof(p), "%s%s/%s", prefix, ns ? "/namespaces/{namespace}" : "", plural);
        item = cJSON_AddObjectToObject(paths, p);
        add_ops(item, collection_ops, group, version, kind, builtin, ns, NULL, kref, lref);
        cJSON_AddItemToObject(item, "parameters", path_params(ns, 0));
        snprintf(p, sizeof(p), "%s%s/%s/{name}", prefix, ns ? "/namespaces/{namespace}" : "",
                 plural);
        item = cJSON_AddObjectToObject(paths, p);
        add_ops(item, item_ops, group, version, kind, builtin, ns, NULL, kref, lref);
        cJSON_AddItemToObject(item, "parameters", path_params(ns, 1));
        if (status) {
            snprintf(p, sizeof(p), "%s%s/%s/{name}/status", prefix,
                     ns ? "/namespaces/{namespace}" : "", plural);
            item = cJSON_AddObjectToObject(paths, p);
            add_ops(item, status_ops, group, version, kind, builtin, ns, "status", kref, lref);
            cJSON_AddItemToObject(item, "parameters", path_params(ns, 1));
        }
        if (ns) {
            static const struct opdef all_ops[] = {
                {"get", "list", "list",
                 "allowWatchBookmarks continue fieldSelector labelSelector limit resourceVersion "
                 "timeoutSeconds watch",
                 NULL, "list"},
                {NULL, NULL, NULL, NULL, NULL, NULL},
            };
            char k2[220];
            snprintf(p, sizeof(p), "%s/%s", prefix, plural);
            snprintf(k2, sizeof(k2), "%sForAllNamespaces", kind);
            item = cJSON_AddObjectToObject(paths, p);
            add_ops(item, all_ops, group, version, kind, builtin, 0, NULL, kref, lref);
            /* operationId says ForAllNamespaces; the GVK stays the kind's */
            cJSON *op = cJSON_GetObjectItemCaseSensitive(item, "get");
            char opid[400], tag[160];
            camel(group, version, tag, sizeof(tag));
            snprintf(opid, sizeof(opid), "list%c%s%s", toupper((unsigned char)tag[0]), tag + 1, k2);
            cJSON_ReplaceItemInObjectCaseSensitive(op, "operationId", cJSON_CreateString(opid));
        }
    }
    if (as_openapi_add_meta_components(schemas))
        goto nomem;
    /* cJSON's adders fail silently on NOMEM: a document that does not print is incomplete. */
    probe = cJSON_PrintUnformatted(doc);
    if (!probe)
        goto nomem;
    cJSON_free(probe);
    *ret_doc = doc;
    return VMOP_OK;
nomem:
    cJSON_Delete(doc);
    return vmop_fail(err, VMOP_E_NOMEM, "out of memory building the OpenAPI document of %s/%s",
                     group, version ? version : "");
}
