/* ta_http.c: the libmicrohttpd side of kube-testapi: per-request context, body collection (capped),
 * bearer-token check, fault rules, routing to the handlers, and turning results into HTTP answers
 * (JSON, Status errors, `Cache-Control: no-cache, private` everywhere, Warning headers). */
#include "ta_http.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

vmop_rc ta_fail(struct vmop_err *err, int code, const char *reason, const char *fmt, ...)
{
    va_list ap;
    vmop_rc rc;
    if (err && err->rc != VMOP_OK)
        return err->rc;
    va_start(ap, fmt);
    rc = vmop_failv(err, VMOP_E_KUBE, fmt, ap);
    va_end(ap);
    if (err) {
        err->http_status = code;
        snprintf(err->fault, sizeof(err->fault), "%s", reason);
    }
    return rc;
}

void ta_req_details(struct ta_req *rq, const struct ta_rtype *rt, const char *name)
{
    snprintf(rq->d_name, sizeof(rq->d_name), "%s", name ? name : "");
    snprintf(rq->d_group, sizeof(rq->d_group), "%s", rt ? rt->group : "");
    snprintf(rq->d_kind, sizeof(rq->d_kind), "%s", rt ? rt->plural : "");
}

const char *ta_query(const struct ta_req *rq, const char *key)
{
    return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *ta_header(const struct ta_req *rq, const char *key)
{
    return MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, key);
}

void ta_reply_text(struct ta_req *rq, int code, char *text)
{
    free(rq->out);
    rq->out = text;
    rq->code = code;
}

void ta_reply_json(struct ta_req *rq, int code, cJSON *doc)
{
    char *t = doc ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    if (!t) {
        ta_reply_text(
            rq, 500, ta_status_text(500, "InternalError", "out of memory", NULL, NULL, NULL, NULL));
        return;
    }
    ta_reply_text(rq, code, t);
}

void ta_add_warning(struct ta_req *rq, const char *text)
{
    if (!rq->warnings)
        rq->warnings = cJSON_CreateArray();
    if (rq->warnings && cJSON_GetArraySize(rq->warnings) < 32)
        cJSON_AddItemToArray(rq->warnings, cJSON_CreateString(text));
}

char *ta_status_text(int code, const char *reason, const char *msg, const char *name,
                     const char *group, const char *kind, const cJSON *causes)
{
    cJSON *st = cJSON_CreateObject(), *d;
    char *t;
    if (!st)
        return NULL;
    cJSON_AddStringToObject(st, "kind", "Status");
    cJSON_AddStringToObject(st, "apiVersion", "v1");
    cJSON_AddObjectToObject(st, "metadata");
    cJSON_AddStringToObject(st, "status", "Failure");
    cJSON_AddStringToObject(st, "message", msg ? msg : "");
    cJSON_AddStringToObject(st, "reason", reason ? reason : "");
    if ((name && *name) || (kind && *kind) || (causes && cJSON_GetArraySize(causes) > 0)) {
        d = cJSON_AddObjectToObject(st, "details");
        if (name && *name)
            cJSON_AddStringToObject(d, "name", name);
        if (group && *group)
            cJSON_AddStringToObject(d, "group", group);
        if (kind && *kind)
            cJSON_AddStringToObject(d, "kind", kind);
        if (causes && cJSON_GetArraySize(causes) > 0)
            cJSON_AddItemToObject(d, "causes", cJSON_Duplicate(causes, 1));
        if (code == 429)
            cJSON_AddNumberToObject(d, "retryAfterSeconds", 1);
    }
    cJSON_AddNumberToObject(st, "code", code);
    t = cJSON_PrintUnformatted(st);
    cJSON_Delete(st);
    return t;
}

static const char *reason_for(int code)
{
    switch (code) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 405:
        return "MethodNotAllowed";
    case 406:
        return "NotAcceptable";
    case 409:
        return "Conflict";
    case 410:
        return "Expired";
    case 413:
        return "RequestEntityTooLarge";
    case 415:
        return "UnsupportedMediaType";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return "InternalError";
    }
}

static void reply_err(struct ta_req *rq, const struct vmop_err *err)
{
    int code = err->http_status ? err->http_status : 500;
    const char *reason = err->fault[0] ? err->fault : reason_for(code);
    const char *msg = rq->long_msg ? rq->long_msg : err->msg;
    if (code == 500 && !err->fault[0]) /* a bug or NOMEM in the server itself */
        fprintf(stderr, "kube-testapi: %s %s: internal error: %s\n", rq->method, rq->path,
                err->msg);
    if (code == 429)
        rq->retry_after = 1;
    ta_reply_text(
        rq, code,
        ta_status_text(code, reason, msg, rq->d_name, rq->d_group, rq->d_kind, rq->causes));
}

int ta_accept_table(const struct ta_req *rq, int *ret_v1beta1)
{
    const char *accept = ta_header(rq, "Accept"), *p;
    *ret_v1beta1 = 0;
    if (!accept)
        return 0;
    for (p = accept; *p;) {
        size_t n = strcspn(p, ",");
        char item[512], *q, *save = NULL;
        int json = 0, table = 0, meta = 0, v1 = 0, v1b = 0;
        if (n < sizeof(item)) {
            memcpy(item, p, n);
            item[n] = '\0';
            for (q = strtok_r(item, ";", &save); q; q = strtok_r(NULL, ";", &save)) {
                while (isspace((unsigned char)*q))
                    q++;
                if (strncmp(q, "application/json", 16) == 0 &&
                    (!q[16] || isspace((unsigned char)q[16])))
                    json = 1;
                else if (strcmp(q, "as=Table") == 0)
                    table = 1;
                else if (strcmp(q, "g=meta.k8s.io") == 0)
                    meta = 1;
                else if (strcmp(q, "v=v1") == 0)
                    v1 = 1;
                else if (strcmp(q, "v=v1beta1") == 0)
                    v1b = 1;
            }
            if (json && table && meta && (v1 || v1b)) {
                *ret_v1beta1 = !v1;
                return 1;
            }
            if (json && !table)
                return 0; /* plain JSON listed first */
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* ---- per-request context ------------------------------------------------------------------- */

static struct ta_req *req_new(struct ta_server *s, struct MHD_Connection *conn, const char *url,
                              const char *method)
{
    struct ta_req *rq = calloc(1, sizeof(*rq));
    if (!rq)
        return NULL;
    rq->s = s;
    rq->conn = conn;
    rq->method = method;
    rq->path = strdup(url);
    if (!rq->path) {
        free(rq);
        return NULL;
    }
    vbuf_init(&rq->body, TA_MAX_BODY);
    return rq;
}

void ta_watch_free(struct ta_watch *w);

static void req_free(struct ta_req *rq)
{
    if (!rq)
        return;
    free(rq->path);
    free(rq->seg_buf);
    vbuf_free(&rq->body);
    cJSON_Delete(rq->causes);
    free(rq->long_msg);
    free(rq->out);
    cJSON_Delete(rq->warnings);
    free(rq);
}

static int path_is(const char *path, const char *p)
{
    size_t n = strlen(p);
    return strncmp(path, p, n) == 0 && (path[n] == '\0' || path[n] == '/' || path[n] == '?');
}

static int is_public(const char *path)
{
    return strcmp(path, "/version") == 0 || strcmp(path, "/healthz") == 0 ||
           strcmp(path, "/livez") == 0 || strcmp(path, "/readyz") == 0;
}

static int token_ok(const struct ta_req *rq)
{
    const char *h = ta_header(rq, "Authorization");
    const char *tok = rq->s->token;
    size_t i, n, diff = 0;
    if (!tok)
        return 1;
    if (!h || strncmp(h, "Bearer ", 7) != 0)
        return 0;
    h += 7;
    n = strlen(tok);
    if (strlen(h) != n)
        return 0;
    for (i = 0; i < n; i++) /* constant time */
        diff |= (unsigned char)(h[i] ^ tok[i]);
    return diff == 0;
}

static void dispatch(struct ta_req *rq)
{
    struct vmop_err err = {0};
    vmop_rc rc = VMOP_OK;
    const char *path = rq->path;

    if (vbuf_error(&rq->body)) {
        rc = ta_fail(&err, 413, "RequestEntityTooLarge",
                     "the request body is larger than the %zu bytes this server accepts",
                     TA_MAX_BODY);
        goto out;
    }
    if (strcmp(path, "/healthz") == 0 || strcmp(path, "/livez") == 0 ||
        strcmp(path, "/readyz") == 0) {
        ta_reply_text(rq, 200, strdup("ok"));
        rq->ctype = "text/plain; charset=utf-8";
        return;
    }
    if (!is_public(path) && !token_ok(rq)) {
        rc = ta_fail(&err, 401, "Unauthorized", "Unauthorized");
        goto out;
    }
    if (path_is(path, "/_testapi/faults")) {
        rc = ta_handle_faults(rq, &err);
        goto out;
    }
    if (ta_faults_apply(rq))
        return;
    if (strcmp(path, "/version") == 0)
        rc = ta_handle_version(rq, &err);
    else if (path_is(path, "/openapi"))
        rc = ta_handle_openapi(rq, &err);
    else if (path_is(path, "/api") || path_is(path, "/apis"))
        rc = ta_handle_resource(rq, &err);
    else
        rc = ta_fail(&err, 404, "NotFound", "the server could not find the requested resource");
out:
    if (rc)
        reply_err(rq, &err);
}

static ssize_t empty_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    return MHD_CONTENT_READER_END_OF_STREAM;
}

static enum MHD_Result send_answer(struct ta_req *rq)
{
    struct MHD_Response *resp;
    enum MHD_Result r;
    int code = rq->code ? rq->code : 500;
    if (rq->watch) {
        resp = ta_watch_response(rq);
        code = 200;
    } else {
        char *body = rq->out;
        if (!body) {
            body = ta_status_text(500, "InternalError", "no answer", NULL, NULL, NULL, NULL);
            code = 500;
        }
        rq->out = NULL;
        resp = body ? MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE)
                    : MHD_create_response_from_callback(0, 64, empty_reader, NULL, NULL);
        if (!resp)
            free(body);
    }
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", rq->ctype ? rq->ctype : "application/json");
    MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
    if (rq->retry_after > 0) {
        char b[16];
        snprintf(b, sizeof(b), "%d", rq->retry_after);
        MHD_add_response_header(resp, "Retry-After", b);
    }
    if (rq->warnings) {
        const cJSON *w;
        cJSON_ArrayForEach(w, rq->warnings)
        {
            struct vbuf b;
            const char *s;
            vbuf_init(&b, 4096);
            vbuf_adds(&b, "299 - \"");
            for (s = w->valuestring; *s; s++) {
                if (*s == '"' || *s == '\\')
                    vbuf_add(&b, "\\", 1);
                if ((unsigned char)*s >= 0x20)
                    vbuf_add(&b, s, 1);
            }
            vbuf_adds(&b, "\"");
            if (!vbuf_error(&b))
                MHD_add_response_header(resp, "Warning", vbuf_str(&b));
            vbuf_free(&b);
        }
    }
    r = MHD_queue_response(rq->conn, (unsigned)code, resp);
    MHD_destroy_response(resp);
    return r;
}

enum MHD_Result ta_http_access(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload_data,
                               size_t *upload_data_size, void **con_cls)
{
    struct ta_req *rq = *con_cls;
    if (!rq) {
        rq = req_new(cls, conn, url, method);
        if (!rq)
            return MHD_NO;
        *con_cls = rq;
        return MHD_YES;
    }
    if (*upload_data_size) {
        vbuf_add(&rq->body, upload_data, *upload_data_size); /* sticky TOOBIG checked later */
        *upload_data_size = 0;
        return MHD_YES;
    }
    dispatch(rq);
    return send_answer(rq);
}

void ta_http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                       enum MHD_RequestTerminationCode toe)
{
    struct ta_req *rq = *con_cls;
    req_free(rq);
    *con_cls = NULL;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Query values as Go's url.QueryUnescape: %XX and '+' as space. */
size_t ta_http_unescape(void *cls, struct MHD_Connection *conn, char *uri)
{
    char *r = uri, *w = uri;
    while (*r) {
        if (*r == '%' && hexval(r[1]) >= 0 && hexval(r[2]) >= 0) {
            *w++ = (char)(hexval(r[1]) * 16 + hexval(r[2]));
            r += 3;
        } else if (*r == '+') {
            *w++ = ' ';
            r++;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
    return (size_t)(w - uri);
}
