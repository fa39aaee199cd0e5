/* kube_ops.c: the REST verbs of the Kubernetes client: URL and query building, get, list (pages),
 * create, update, patch, delete, status subresource. Unstructured: cJSON in and out.
 * Not here: the transport (kube_client.c), watch streams (kube_watch.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_internal.h"
#include "kube_util.h"

#define KUBE_MAX_NAME 253 * 2 /* DNS subdomains are 253; generous for other name forms */

static int name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n > 0 && n <= KUBE_MAX_NAME && !strchr(s, '/') && strcmp(s, ".") != 0 &&
           strcmp(s, "..") != 0;
}

vmop_rc kube_resource_path(const struct kube_resource *r, const char *ns, const char *name,
                           const char *sub, char **ret, struct vmop_err *err)
{
    struct vbuf b;
    if (!r || !r->version || !r->resource || !name_ok(r->resource) || !name_ok(r->version) ||
        (r->group && *r->group && !name_ok(r->group)))
        return vmop_fail(err, VMOP_E_INVALID, "invalid resource");
    if (name && !name_ok(name))
        return vmop_fail(err, VMOP_E_INVALID, "invalid object name '%.64s'", name);
    if (ns && r->namespaced && !name_ok(ns))
        return vmop_fail(err, VMOP_E_INVALID, "invalid namespace '%.64s'", ns);
    if (sub && !name_ok(sub))
        return vmop_fail(err, VMOP_E_INVALID, "invalid subresource");
    vbuf_init(&b, 8192);
    if (r->group && *r->group)
        vbuf_addf(&b, "/apis/%s/%s", r->group, r->version);
    else
        vbuf_addf(&b, "/api/%s", r->version);
    if (r->namespaced && ns) {
        vbuf_adds(&b, "/namespaces/");
        kube_url_escape(&b, ns);
    }
    vbuf_addf(&b, "/%s", r->resource);
    if (name) {
        vbuf_adds(&b, "/");
        kube_url_escape(&b, name);
    }
    if (sub)
        vbuf_addf(&b, "/%s", sub);
    if (vbuf_error(&b)) {
        vbuf_free(&b);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory building a path");
    }
    *ret = vbuf_take(&b);
    return VMOP_OK;
}

static void add_q(struct vbuf *b, const char *k, const char *v)
{
    if (!v)
        return;
    vbuf_adds(b, strchr(vbuf_str(b), '?') ? "&" : "?");
    vbuf_adds(b, k);
    vbuf_adds(b, "=");
    kube_url_escape(b, v);
}

static void add_ql(struct vbuf *b, const char *k, long v)
{
    char num[32];
    snprintf(num, sizeof(num), "%ld", v);
    add_q(b, k, num);
}

enum qkind { Q_READ, Q_LIST, Q_WATCH, Q_WRITE, Q_APPLY, Q_DELETE };

/* path + query for the call. *ret malloc'd. */
static vmop_rc build_url(const struct kube_resource *r, const char *ns, const char *name,
                         const char *sub, const struct kube_opts *o, enum qkind k, char **ret,
                         struct vmop_err *err)
{
    char *path = NULL;
    vmop_rc rc = kube_resource_path(r, ns, name, sub, &path, err);
    if (rc)
        return rc;
    struct vbuf b;
    vbuf_init(&b, 64 * 1024);
    vbuf_adds(&b, path);
    free(path);
    if (k == Q_WATCH)
        add_q(&b, "watch", "1");
    if (o && (k == Q_LIST || k == Q_WATCH)) {
        add_q(&b, "labelSelector", o->label_selector);
        add_q(&b, "fieldSelector", o->field_selector);
        add_q(&b, "resourceVersion", o->resource_version);
        add_q(&b, "resourceVersionMatch", o->resource_version_match);
    }
    if (o && k == Q_LIST) {
        if (o->limit > 0)
            add_ql(&b, "limit", o->limit);
        add_q(&b, "continue", o->continue_token);
    }
    if (o && k == Q_WATCH) {
        if (o->timeout_seconds > 0)
            add_ql(&b, "timeoutSeconds", o->timeout_seconds);
        if (o->allow_bookmarks)
            add_q(&b, "allowWatchBookmarks", "true");
    }
    if (o && (k == Q_WRITE || k == Q_APPLY)) {
        add_q(&b, "fieldManager", o->field_manager);
        add_q(&b, "fieldValidation", o->field_validation);
    }
    if (o && k == Q_APPLY && o->force)
        add_q(&b, "force", "true");
    if (o && (k == Q_WRITE || k == Q_APPLY || k == Q_DELETE) && o->dry_run)
        add_q(&b, "dryRun", "All");
    if (vbuf_error(&b)) {
        vbuf_free(&b);
        return vmop_fail(err, VMOP_E_TOOBIG, "request URL too long");
    }
    *ret = vbuf_take(&b);
    return VMOP_OK;
}

/* Sends and decodes: 2xx -> *ret_json (NULL for an empty body), else a Status error. */
static vmop_rc call(struct kube_client *c, const char *method, const char *url, const char *ctype,
                    const char *body, size_t body_len, const struct kube_opts *o, int *ret_http,
                    cJSON **ret_json, struct vmop_err *err)
{
    struct vbuf resp;
    long status = 0;
    vmop_rc rc;
    struct kube_http_req req = {.method = method,
                                .path = url,
                                .ctype = ctype,
                                .body = body,
                                .body_len = body_len,
                                .cancel = o ? o->cancel : NULL};
    vbuf_init(&resp, kube_client_max_response(c));
    rc = kube_http(c, &req, NULL, &status, &resp, err);
    if (rc)
        goto out;
    if (status < 200 || status > 299) {
        char what[160];
        snprintf(what, sizeof(what), "%s %.120s", method, url);
        rc =
            kube_status_fail((int)status, resp.data, resp.len, what, o ? o->ret_status : NULL, err);
        goto out;
    }
    cJSON *j = NULL;
    if (resp.len) {
        j = cJSON_ParseWithLength(resp.data, resp.len);
        if (!j) {
            rc = vmop_fail(err, VMOP_E_PROTO, "%s %.120s: response is not JSON", method, url);
            goto out;
        }
    }
    if (ret_http)
        *ret_http = (int)status;
    if (ret_json)
        *ret_json = j;
    else
        cJSON_Delete(j);
out:
    vbuf_free(&resp);
    return rc;
}

vmop_rc kube_request(struct kube_client *c, const char *method, const char *path_query,
                     const char *content_type, const char *body, size_t body_len,
                     const struct kube_opts *o, int *ret_http, cJSON **ret_json,
                     struct vmop_err *err)
{
    if (!path_query || path_query[0] != '/')
        return vmop_fail(err, VMOP_E_INVALID, "request path must start with '/'");
    return call(c, method, path_query, content_type, body, body_len, o, ret_http, ret_json, err);
}

static const char *obj_ns(struct kube_client *c, const struct kube_resource *r, const char *ns,
                          const cJSON *obj)
{
    if (!r->namespaced)
        return NULL;
    if (ns)
        return ns;
    const char *ons = obj ? kube_obj_namespace(obj) : NULL;
    return ons && *ons ? ons : kube_client_namespace(c);
}

static vmop_rc simple(struct kube_client *c, const char *method, const struct kube_resource *r,
                      const char *ns, const char *name, const char *sub, enum qkind k,
                      const char *ctype, const cJSON *body_json, const struct kube_opts *o,
                      cJSON **ret_json, struct vmop_err *err)
{
    char *url = NULL, *body = NULL;
    vmop_rc rc = build_url(r, ns, name, sub, o, k, &url, err);
    if (rc)
        return rc;
    if (body_json) {
        body = cJSON_PrintUnformatted(body_json);
        if (!body) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory serialising a request");
            goto out;
        }
    }
    rc = call(c, method, url, ctype, body, body ? strlen(body) : 0, o, NULL, ret_json, err);
    if (!rc && ret_json && !*ret_json && strcmp(method, "DELETE") != 0)
        rc = vmop_fail(err, VMOP_E_PROTO, "%s %.120s: empty response", method, url);
out:
    free(url);
    free(body);
    return rc;
}

vmop_rc kube_get(struct kube_client *c, const struct kube_resource *r, const char *ns,
                 const char *name, const struct kube_opts *o, cJSON **ret_obj, struct vmop_err *err)
{
    return simple(c, "GET", r, obj_ns(c, r, ns, NULL), name, NULL, Q_READ, NULL, NULL, o, ret_obj,
                  err);
}

vmop_rc kube_list(struct kube_client *c, const struct kube_resource *r, const char *ns,
                  const struct kube_opts *o, cJSON **ret_list, struct vmop_err *err)
{
    cJSON *l = NULL;
    vmop_rc rc =
        simple(c, "GET", r, r->namespaced ? ns : NULL, NULL, NULL, Q_LIST, NULL, NULL, o, &l, err);
    if (rc)
        return rc;
    cJSON *items = cJSON_GetObjectItemCaseSensitive(l, "items");
    if (cJSON_IsNull(items) || !items) {
        /* tolerate "items": null (not valid, but cheap to accept) */
        cJSON_DeleteItemFromObjectCaseSensitive(l, "items");
        cJSON_AddItemToObject(l, "items", cJSON_CreateArray());
        items = cJSON_GetObjectItemCaseSensitive(l, "items");
    }
    if (!cJSON_IsArray(items)) {
        cJSON_Delete(l);
        return vmop_fail(err, VMOP_E_PROTO, "list of %s: items is not an array", r->resource);
    }
    *ret_list = l;
    return VMOP_OK;
}

vmop_rc kube_list_all(struct kube_client *c, const struct kube_resource *r, const char *ns,
                      const struct kube_opts *o, cJSON **ret_list, struct vmop_err *err)
{
    struct kube_opts po = o ? *o : (struct kube_opts){0};
    cJSON *all = NULL, *page = NULL;
    char *cont = NULL;
    vmop_rc rc;
    int n_items = 0;
    if (po.limit <= 0)
        po.limit = 500;
    po.continue_token = NULL;
    for (;;) {
        rc = kube_list(c, r, ns, &po, &page, err);
        if (rc)
            goto out;
        cJSON *items = cJSON_GetObjectItemCaseSensitive(page, "items");
        n_items += cJSON_GetArraySize(items);
        if (n_items > KUBE_LIST_MAX_ITEMS) {
            rc = vmop_fail(err, VMOP_E_TOOBIG, "list of %s has more than %d items", r->resource,
                           KUBE_LIST_MAX_ITEMS);
            goto out;
        }
        free(cont);
        cont = NULL;
        const char *ct = kube_json_path_str(page, "metadata", "continue");
        if (ct && *ct && !(cont = strdup(ct))) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory listing %s", r->resource);
            goto out;
        }
        if (!all) {
            all = page;
        } else {
            cJSON *dst = cJSON_GetObjectItemCaseSensitive(all, "items");
            cJSON *it = cJSON_DetachItemFromObjectCaseSensitive(page, "items");
            while (it && it->child) {
                cJSON *first = cJSON_DetachItemViaPointer(it, it->child);
                cJSON_AddItemToArray(dst, first);
            }
            cJSON_Delete(it);
            cJSON_Delete(page);
        }
        page = NULL;
        if (!cont)
            break;
        /* the continue token carries the RV; resourceVersion must not be sent with it */
        po.continue_token = cont;
        po.resource_version = NULL;
        po.resource_version_match = NULL;
    }
    cJSON *md = cJSON_GetObjectItemCaseSensitive(all, "metadata");
    if (md)
        cJSON_DeleteItemFromObjectCaseSensitive(md, "continue");
    *ret_list = all;
    all = NULL;
out:
    free(cont);
    cJSON_Delete(page);
    cJSON_Delete(all);
    return rc;
}

vmop_rc kube_create(struct kube_client *c, const struct kube_resource *r, const char *ns,
                    const cJSON *obj, const struct kube_opts *o, cJSON **ret_obj,
                    struct vmop_err *err)
{
    if (!cJSON_IsObject(obj))
        return vmop_fail(err, VMOP_E_INVALID, "create: object expected");
    return simple(c, "POST", r, obj_ns(c, r, ns, obj), NULL, NULL, Q_WRITE, "application/json", obj,
                  o, ret_obj, err);
}

static vmop_rc put(struct kube_client *c, const struct kube_resource *r, const char *ns,
                   const cJSON *obj, const char *sub, const struct kube_opts *o, cJSON **ret_obj,
                   struct vmop_err *err)
{
    const char *name = kube_obj_name(obj);
    if (!cJSON_IsObject(obj) || !name)
        return vmop_fail(err, VMOP_E_INVALID, "update: object without metadata.name");
    return simple(c, "PUT", r, obj_ns(c, r, ns, obj), name, sub, Q_WRITE, "application/json", obj,
                  o, ret_obj, err);
}

vmop_rc kube_update(struct kube_client *c, const struct kube_resource *r, const char *ns,
                    const cJSON *obj, const struct kube_opts *o, cJSON **ret_obj,
                    struct vmop_err *err)
{
    return put(c, r, ns, obj, NULL, o, ret_obj, err);
}

vmop_rc kube_update_status(struct kube_client *c, const struct kube_resource *r, const char *ns,
                           const cJSON *obj, const struct kube_opts *o, cJSON **ret_obj,
                           struct vmop_err *err)
{
    return put(c, r, ns, obj, "status", o, ret_obj, err);
}

static vmop_rc patch(struct kube_client *c, const struct kube_resource *r, const char *ns,
                     const char *name, const char *sub, enum kube_patch_type type, const cJSON *p,
                     const struct kube_opts *o, cJSON **ret_obj, struct vmop_err *err)
{
    const char *ctype;
    switch (type) {
    case KUBE_PATCH_MERGE:
        ctype = "application/merge-patch+json";
        break;
    case KUBE_PATCH_JSON:
        ctype = "application/json-patch+json";
        break;
    case KUBE_PATCH_STRATEGIC:
        ctype = "application/strategic-merge-patch+json";
        break;
    case KUBE_PATCH_APPLY:
        ctype = "application/apply-patch+yaml"; /* JSON is YAML */
        if (!o || !o->field_manager)
            return vmop_fail(err, VMOP_E_INVALID, "server-side apply needs a field manager");
        break;
    default:
        return vmop_fail(err, VMOP_E_INVALID, "unknown patch type %d", (int)type);
    }
    if (type == KUBE_PATCH_JSON ? !cJSON_IsArray(p) : !cJSON_IsObject(p))
        return vmop_fail(err, VMOP_E_INVALID, "patch of the wrong JSON type for its patch type");
    return simple(c, "PATCH", r, obj_ns(c, r, ns, type == KUBE_PATCH_JSON ? NULL : p), name, sub,
                  type == KUBE_PATCH_APPLY ? Q_APPLY : Q_WRITE, ctype, p, o, ret_obj, err);
}

vmop_rc kube_patch(struct kube_client *c, const struct kube_resource *r, const char *ns,
                   const char *name, enum kube_patch_type type, const cJSON *p,
                   const struct kube_opts *o, cJSON **ret_obj, struct vmop_err *err)
{
    return patch(c, r, ns, name, NULL, type, p, o, ret_obj, err);
}

vmop_rc kube_patch_status(struct kube_client *c, const struct kube_resource *r, const char *ns,
                          const char *name, enum kube_patch_type type, const cJSON *p,
                          const struct kube_opts *o, cJSON **ret_obj, struct vmop_err *err)
{
    return patch(c, r, ns, name, "status", type, p, o, ret_obj, err);
}

vmop_rc kube_delete(struct kube_client *c, const struct kube_resource *r, const char *ns,
                    const char *name, const struct kube_opts *o, cJSON **ret_obj,
                    struct vmop_err *err)
{
    cJSON *opts = cJSON_CreateObject();
    vmop_rc rc;
    if (!opts)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory building DeleteOptions");
    cJSON_AddStringToObject(opts, "apiVersion", "v1");
    cJSON_AddStringToObject(opts, "kind", "DeleteOptions");
    if (o && o->propagation_policy)
        cJSON_AddStringToObject(opts, "propagationPolicy", o->propagation_policy);
    if (o && o->grace_period_set)
        cJSON_AddNumberToObject(opts, "gracePeriodSeconds", (double)o->grace_period_seconds);
    if (o && (o->precondition_uid || o->precondition_rv)) {
        cJSON *pre = cJSON_AddObjectToObject(opts, "preconditions");
        if (pre && o->precondition_uid)
            cJSON_AddStringToObject(pre, "uid", o->precondition_uid);
        if (pre && o->precondition_rv)
            cJSON_AddStringToObject(pre, "resourceVersion", o->precondition_rv);
    }
    cJSON *res = NULL;
    rc = simple(c, "DELETE", r, obj_ns(c, r, ns, NULL), name, NULL, Q_DELETE, "application/json",
                opts, o, &res, err);
    cJSON_Delete(opts);
    if (rc)
        return rc;
    if (ret_obj)
        *ret_obj = res;
    else
        cJSON_Delete(res);
    return VMOP_OK;
}
