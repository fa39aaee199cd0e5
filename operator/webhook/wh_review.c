/* wh_review.c: AdmissionReview and ConversionReview parsing and building (see wh_review.h).
 * Pure: no I/O. Every field read is type-checked: a present field of the wrong type is
 * VMOP_E_INVALID (the API server never sends one, so it is a client we should not trust).
 */
#include "wh_review.h"
#include "vmop_base64.h"

#include <stdlib.h>
#include <string.h>

/* Reads obj.name as a string: absent or null -> "" (an error when required). */
static vmop_rc get_str(const cJSON *obj, const char *name, int required, const char **ret,
                       struct vmop_err *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, name);
    *ret = "";
    if (!it || cJSON_IsNull(it)) {
        if (required)
            return vmop_fail(err, VMOP_E_INVALID, "review: %s is missing", name);
        return VMOP_OK;
    }
    if (!cJSON_IsString(it) || !it->valuestring)
        return vmop_fail(err, VMOP_E_INVALID, "review: %s is not a string", name);
    if (required && !it->valuestring[0])
        return vmop_fail(err, VMOP_E_INVALID, "review: %s is empty", name);
    *ret = it->valuestring;
    return VMOP_OK;
}

/* Reads obj.name as an object: absent or null -> NULL. */
static vmop_rc get_obj(const cJSON *obj, const char *name, const cJSON **ret, struct vmop_err *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, name);
    *ret = NULL;
    if (!it || cJSON_IsNull(it))
        return VMOP_OK;
    if (!cJSON_IsObject(it))
        return vmop_fail(err, VMOP_E_INVALID, "review: %s is not an object", name);
    *ret = it;
    return VMOP_OK;
}

/* Parses buf, checks apiVersion and kind, and returns the "request" object (borrowed). */
static vmop_rc parse_envelope(const char *buf, size_t len, const char *api_version,
                              const char *kind, cJSON **ret_doc, const cJSON **ret_request,
                              struct vmop_err *err)
{
    cJSON *doc;
    const char *av, *k;
    const cJSON *request;
    vmop_rc rc;

    if (len > WH_MAX_BODY)
        return vmop_fail(err, VMOP_E_TOOBIG, "review of %zu bytes (limit %zu)", len, WH_MAX_BODY);
    if (!buf || !len)
        return vmop_fail(err, VMOP_E_INVALID, "review: empty body");
    /* cJSON_ParseWithLength stops at len (buf need not be NUL-terminated); never use
     * cJSON_GetErrorPtr (a process global). */
    doc = cJSON_ParseWithLength(buf, len);
    if (!doc)
        return vmop_fail(err, VMOP_E_INVALID, "%s: body is not JSON", kind);
    if (!cJSON_IsObject(doc)) {
        rc = vmop_fail(err, VMOP_E_INVALID, "%s: body is not a JSON object", kind);
        goto fail;
    }
    if ((rc = get_str(doc, "apiVersion", 1, &av, err)) || (rc = get_str(doc, "kind", 1, &k, err)))
        goto fail;
    if (strcmp(av, api_version) || strcmp(k, kind)) {
        rc = vmop_fail(err, VMOP_E_INVALID, "review: expected %s %s", api_version, kind);
        goto fail;
    }
    if ((rc = get_obj(doc, "request", &request, err)))
        goto fail;
    if (!request) {
        rc = vmop_fail(err, VMOP_E_INVALID, "%s: request is missing", kind);
        goto fail;
    }
    *ret_doc = doc;
    *ret_request = request;
    return VMOP_OK;
fail:
    cJSON_Delete(doc);
    return rc;
}

static vmop_rc parse_op(const char *s, enum wh_operation *ret, struct vmop_err *err)
{
    static const struct {
        const char *name;
        enum wh_operation op;
    } ops[] = {{"CREATE", WH_OP_CREATE},
               {"UPDATE", WH_OP_UPDATE},
               {"DELETE", WH_OP_DELETE},
               {"CONNECT", WH_OP_CONNECT}};
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (!strcmp(s, ops[i].name)) {
            *ret = ops[i].op;
            return VMOP_OK;
        }
    return vmop_fail(err, VMOP_E_INVALID, "AdmissionReview: unknown operation");
}

static vmop_rc parse_user(struct wh_admission_request *r, const cJSON *user, struct vmop_err *err)
{
    const cJSON *groups, *g;
    vmop_rc rc;
    size_t n = 0;

    if ((rc = get_str(user, "username", 0, &r->username, err)) ||
        (rc = get_str(user, "uid", 0, &r->user_uid, err)))
        return rc;
    groups = cJSON_GetObjectItemCaseSensitive(user, "groups");
    if (!groups || cJSON_IsNull(groups))
        return VMOP_OK;
    if (!cJSON_IsArray(groups))
        return vmop_fail(err, VMOP_E_INVALID, "AdmissionReview: userInfo.groups is not a list");
    cJSON_ArrayForEach(g, groups)
    {
        if (!cJSON_IsString(g) || !g->valuestring)
            return vmop_fail(err, VMOP_E_INVALID,
                             "AdmissionReview: userInfo.groups has a non-string");
        if (++n > WH_MAX_GROUPS)
            return vmop_fail(err, VMOP_E_TOOBIG, "AdmissionReview: more than %d groups",
                             WH_MAX_GROUPS);
    }
    if (!n)
        return VMOP_OK;
    r->groups = calloc(n, sizeof(*r->groups));
    if (!r->groups)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    cJSON_ArrayForEach(g, groups) r->groups[r->n_groups++] = g->valuestring;
    return VMOP_OK;
}

vmop_rc wh_admission_parse(const char *buf, size_t len, struct wh_admission_request **ret,
                           struct vmop_err *err)
{
    struct wh_admission_request *r;
    const cJSON *request, *kind, *res, *user, *dry;
    cJSON *doc = NULL;
    vmop_rc rc;

    rc = parse_envelope(buf, len, WH_ADMISSION_API_VERSION, "AdmissionReview", &doc, &request, err);
    if (rc)
        return rc;
    r = calloc(1, sizeof(*r));
    if (!r) {
        cJSON_Delete(doc);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    }
    r->doc = doc;
    if ((rc = get_str(request, "uid", 1, &r->uid, err)) ||
        (rc = get_str(request, "operation", 1, &r->operation, err)) ||
        (rc = parse_op(r->operation, &r->op, err)) ||
        (rc = get_str(request, "subResource", 0, &r->sub_resource, err)) ||
        (rc = get_str(request, "namespace", 0, &r->namespace_, err)) ||
        (rc = get_str(request, "name", 0, &r->name, err)) ||
        (rc = get_obj(request, "kind", &kind, err)) ||
        (rc = get_obj(request, "resource", &res, err)) ||
        (rc = get_obj(request, "userInfo", &user, err)) ||
        (rc = get_obj(request, "object", &r->object, err)) ||
        (rc = get_obj(request, "oldObject", &r->old_object, err)))
        goto fail;
    if ((rc = get_str(kind, "group", 0, &r->kind_group, err)) ||
        (rc = get_str(kind, "version", 0, &r->kind_version, err)) ||
        (rc = get_str(kind, "kind", 0, &r->kind, err)) ||
        (rc = get_str(res, "group", 0, &r->res_group, err)) ||
        (rc = get_str(res, "version", 0, &r->res_version, err)) ||
        (rc = get_str(res, "resource", 0, &r->resource, err)) || (rc = parse_user(r, user, err)))
        goto fail;
    dry = cJSON_GetObjectItemCaseSensitive(request, "dryRun");
    if (dry && !cJSON_IsNull(dry) && !cJSON_IsBool(dry)) {
        rc = vmop_fail(err, VMOP_E_INVALID, "AdmissionReview: dryRun is not a boolean");
        goto fail;
    }
    r->dry_run = cJSON_IsTrue(dry);
    *ret = r;
    return VMOP_OK;
fail:
    wh_admission_request_free(r);
    return rc;
}

void wh_admission_request_free(struct wh_admission_request *req)
{
    if (!req)
        return;
    free(req->groups);
    cJSON_Delete(req->doc);
    free(req);
}

void wh_admission_response_init(struct wh_admission_response *resp)
{
    memset(resp, 0, sizeof(*resp));
    resp->allowed = 1;
}

void wh_admission_response_deinit(struct wh_admission_response *resp)
{
    if (!resp)
        return;
    free(resp->reason);
    free(resp->message);
    cJSON_Delete(resp->details);
    cJSON_Delete(resp->patch);
    for (size_t i = 0; i < resp->n_warnings; i++)
        free(resp->warnings[i]);
    memset(resp, 0, sizeof(*resp));
}

/* A copy of s of at most max bytes, cut at a UTF-8 character boundary. */
static char *dup_cut(const char *s, size_t max)
{
    size_t n = strlen(s);
    char *d;
    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    d = malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

vmop_rc wh_admission_deny(struct wh_admission_response *resp, int code, const char *reason,
                          const char *message)
{
    char *r = reason ? dup_cut(reason, 256) : NULL;
    char *m = message ? dup_cut(message, WH_MAX_MESSAGE) : NULL;
    if ((reason && !r) || (message && !m)) {
        free(r);
        free(m);
        return VMOP_E_NOMEM;
    }
    free(resp->reason);
    free(resp->message);
    resp->allowed = 0;
    resp->code = code;
    resp->reason = r;
    resp->message = m;
    return VMOP_OK;
}

vmop_rc wh_admission_warn(struct wh_admission_response *resp, const char *warning)
{
    char *w;
    if (resp->n_warnings >= WH_MAX_WARNINGS)
        return VMOP_OK;
    w = dup_cut(warning, WH_MAX_WARNING_LEN);
    if (!w)
        return VMOP_E_NOMEM;
    resp->warnings[resp->n_warnings++] = w;
    return VMOP_OK;
}

void wh_admission_set_patch(struct wh_admission_response *resp, cJSON *patch)
{
    cJSON_Delete(resp->patch);
    resp->patch = patch;
}

/* Prints doc into *ret_json (owned by the caller), checking the response cap. */
static vmop_rc print_doc(cJSON *doc, int ok, char **ret_json, size_t *ret_len, struct vmop_err *err)
{
    char *s = ok ? cJSON_PrintUnformatted(doc) : NULL;
    size_t n;
    if (!s)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory building a review");
    n = strlen(s);
    if (n > WH_MAX_RESPONSE) {
        free(s);
        return vmop_fail(err, VMOP_E_TOOBIG, "review response of %zu bytes (limit %zu)", n,
                         WH_MAX_RESPONSE);
    }
    *ret_json = s;
    *ret_len = n;
    return VMOP_OK;
}

/* base64 (standard alphabet, padded) of the printed patch, added as response.patch. */
static int add_patch(cJSON *response, const cJSON *patch)
{
    char *s = cJSON_PrintUnformatted(patch);
    size_t n = s ? strlen(s) : 0;
    char *b64 = NULL;
    int ok;
    if (!s || n > WH_MAX_RESPONSE / 2 || vmop_base64_encode(s, n, &b64, NULL) != VMOP_OK) {
        free(s);
        return 0;
    }
    ok = cJSON_AddStringToObject(response, "patchType", "JSONPatch") &&
         cJSON_AddStringToObject(response, "patch", b64);
    free(b64);
    free(s);
    return ok;
}

vmop_rc wh_admission_build(const char *uid, const struct wh_admission_response *resp,
                           char **ret_json, size_t *ret_len, struct vmop_err *err)
{
    cJSON *doc = cJSON_CreateObject(), *response = NULL, *status, *warnings;
    vmop_rc rc;
    int ok = doc && cJSON_AddStringToObject(doc, "apiVersion", WH_ADMISSION_API_VERSION) &&
             cJSON_AddStringToObject(doc, "kind", "AdmissionReview") &&
             (response = cJSON_AddObjectToObject(doc, "response")) &&
             cJSON_AddStringToObject(response, "uid", uid) &&
             cJSON_AddBoolToObject(response, "allowed", resp->allowed != 0);
    if (ok && (!resp->allowed || resp->message || resp->code)) {
        ok = (status = cJSON_AddObjectToObject(response, "status")) &&
             (resp->allowed || cJSON_AddStringToObject(status, "status", "Failure")) &&
             (!resp->code || cJSON_AddNumberToObject(status, "code", resp->code)) &&
             (!resp->reason || cJSON_AddStringToObject(status, "reason", resp->reason)) &&
             (!resp->message || cJSON_AddStringToObject(status, "message", resp->message));
        if (ok && resp->details) {
            cJSON *d = cJSON_Duplicate(resp->details, 1);
            ok = d && cJSON_AddItemToObject(status, "details", d);
            if (!ok)
                cJSON_Delete(d);
        }
    }
    /* A patch only makes sense on an allowed request; an empty one is not sent. */
    if (ok && resp->allowed && resp->patch && cJSON_GetArraySize(resp->patch) > 0)
        ok = add_patch(response, resp->patch);
    if (ok && resp->n_warnings) {
        ok = (warnings = cJSON_AddArrayToObject(response, "warnings")) != NULL;
        for (size_t i = 0; ok && i < resp->n_warnings; i++) {
            cJSON *w = cJSON_CreateString(resp->warnings[i]);
            ok = w && cJSON_AddItemToArray(warnings, w);
        }
    }
    rc = print_doc(doc, ok, ret_json, ret_len, err);
    cJSON_Delete(doc);
    return rc;
}

vmop_rc wh_conversion_parse(const char *buf, size_t len, struct wh_conversion_request **ret,
                            struct vmop_err *err)
{
    struct wh_conversion_request *r;
    const cJSON *request, *objs, *o;
    cJSON *doc = NULL;
    vmop_rc rc;

    rc = parse_envelope(buf, len, WH_CONVERSION_API_VERSION, "ConversionReview", &doc, &request,
                        err);
    if (rc)
        return rc;
    r = calloc(1, sizeof(*r));
    if (!r) {
        cJSON_Delete(doc);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    }
    r->doc = doc;
    if ((rc = get_str(request, "uid", 1, &r->uid, err)) ||
        (rc = get_str(request, "desiredAPIVersion", 1, &r->desired_api_version, err)))
        goto fail;
    if (!strchr(r->desired_api_version, '/')) {
        rc = vmop_fail(err, VMOP_E_INVALID,
                       "ConversionReview: desiredAPIVersion is not "
                       "group/version");
        goto fail;
    }
    objs = cJSON_GetObjectItemCaseSensitive(request, "objects");
    if (objs && !cJSON_IsNull(objs) && !cJSON_IsArray(objs)) {
        rc = vmop_fail(err, VMOP_E_INVALID, "ConversionReview: objects is not a list");
        goto fail;
    }
    r->objects = cJSON_IsArray(objs) ? objs : NULL;
    cJSON_ArrayForEach(o, r->objects)
    {
        if (!cJSON_IsObject(o)) {
            rc = vmop_fail(err, VMOP_E_INVALID, "ConversionReview: objects[%zu] is not an object",
                           r->n_objects);
            goto fail;
        }
        r->n_objects++;
    }
    *ret = r;
    return VMOP_OK;
fail:
    wh_conversion_request_free(r);
    return rc;
}

void wh_conversion_request_free(struct wh_conversion_request *req)
{
    if (!req)
        return;
    cJSON_Delete(req->doc);
    free(req);
}

vmop_rc wh_conversion_build(const char *uid, const cJSON *converted, const char *message,
                            char **ret_json, size_t *ret_len, struct vmop_err *err)
{
    cJSON *doc = cJSON_CreateObject(), *response = NULL, *result = NULL;
    char *m = NULL;
    vmop_rc rc;
    int ok = doc && cJSON_AddStringToObject(doc, "apiVersion", WH_CONVERSION_API_VERSION) &&
             cJSON_AddStringToObject(doc, "kind", "ConversionReview") &&
             (response = cJSON_AddObjectToObject(doc, "response")) &&
             cJSON_AddStringToObject(response, "uid", uid);
    if (ok && converted) {
        /* a reference: the caller keeps the array, cJSON_Delete(doc) leaves it alone */
        ok = cJSON_AddItemReferenceToObject(response, "convertedObjects", (cJSON *)converted) &&
             (result = cJSON_AddObjectToObject(response, "result")) &&
             cJSON_AddStringToObject(result, "status", "Success");
    } else if (ok) {
        m = dup_cut(message ? message : "conversion failed", WH_MAX_MESSAGE);
        ok = m && cJSON_AddArrayToObject(response, "convertedObjects") &&
             (result = cJSON_AddObjectToObject(response, "result")) &&
             cJSON_AddStringToObject(result, "status", "Failure") &&
             cJSON_AddStringToObject(result, "message", m);
    }
    rc = print_doc(doc, ok, ret_json, ret_len, err);
    cJSON_Delete(doc);
    free(m);
    return rc;
}
