/* vim_rest.c: the REST (vAPI, /rest/...) session and one-call helper of vimclient.
 *
 * Owns: struct vim_rest_state (the vAPI session id, its lock and generation counter), login with
 * HTTP Basic (POST /rest/com/vmware/cis/session), logout, and turning a vAPI answer into a value
 * or a struct vmop_err. Not here: what the calls mean (vim_library.c), the transport (vim_http.c).
 *
 * The session id is a secret: it only ever travels in the `vmware-api-session-id` header, is never
 * formatted into a message, and is zeroed before it is freed. We ask for header authentication
 * (`vmware-use-header-authn: true`), so the server sets no cookie and the REST session stays apart
 * from the SOAP cookie jar.
 *
 * Call metrics: every request (each attempt) counts in the per-method table under its route
 * template, "GET /rest/com/vmware/content/library/item/{id}": path segments and query values that
 * are not route words become "{id}", so the label set is bounded whatever the ids.
 *
 * Re-login: a 401 on a call re-logs in once and retries once. The generation counter makes
 * concurrent callers that all saw the same dead session share one new login.
 */
#include "vim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REST_SESSION_PATH "/rest/com/vmware/cis/session"
#define REST_SESSION_MAX  512 /* longest session id we accept (real ones are ~40 bytes) */
#define REST_ERRMSG_MAX   320 /* how much of a server's error text goes into err->msg */
#define REST_PATH_MAX     2048

struct vim_rest_state {
    pthread_mutex_t lock;
    char *session_id; /* guarded by lock; secret; NULL = not logged in */
    uint64_t gen;     /* guarded by lock; bumped by every successful login */
};

static void free_secret(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

void vim_rest_state_free(struct vim_rest_state *r)
{
    if (!r)
        return;
    free_secret(r->session_id);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* The client's REST state, created on first use. Lock-free: the loser of a creation race frees
 * its copy. */
static vmop_rc rest_state(struct vim_client *c, struct vim_rest_state **ret_r, struct vmop_err *err)
{
    struct vim_rest_state *r = __atomic_load_n(&c->rest, __ATOMIC_ACQUIRE);
    struct vim_rest_state *expected = NULL;

    if (r) {
        *ret_r = r;
        return VMOP_OK;
    }
    r = calloc(1, sizeof(*r));
    if (!r)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory for the REST session");
    if (pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r);
        return vmop_fail(err, VMOP_E_INTERNAL, "cannot initialise the REST session lock");
    }
    if (!__atomic_compare_exchange_n(&c->rest, &expected, r, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        vim_rest_state_free(r);
        r = expected;
    }
    *ret_r = r;
    return VMOP_OK;
}

/* ---- reading answers ----------------------------------------------------------------------- */

/* Appends up to `room` bytes of s to b, replacing control characters with spaces. */
static void add_clean(struct vbuf *b, const char *s, size_t room)
{
    for (size_t i = 0; i < room && s[i]; i++) {
        char ch = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i];
        vbuf_add(b, &ch, 1);
    }
}

/* Collects the default_message texts of a vAPI "messages" array (objects with default_message,
 * or plain strings as some servers send) into b, "; "-separated. */
static void add_messages(struct vbuf *b, const cJSON *messages)
{
    const cJSON *m;

    cJSON_ArrayForEach(m, messages)
    {
        const char *text = NULL;
        if (cJSON_IsString(m))
            text = m->valuestring;
        else
            text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "default_message"));
        if (!text || !*text || b->len >= REST_ERRMSG_MAX)
            continue;
        if (b->len)
            vbuf_adds(b, "; ");
        add_clean(b, text, REST_ERRMSG_MAX - b->len);
    }
}

/* "com.vmware.vapi.std.errors.not_found" -> "not_found"; "*types.InvalidArgument" ->
 * "InvalidArgument"; a type without dots is used whole. A "type" that is not a type name at all
 * (the simulator puts Go error texts there) is the generic "error"; *ret_is_name says which. */
static const char *fault_of_type(const char *type, int *ret_is_name)
{
    const char *dot = strrchr(type, '.');
    for (const char *p = type; *p; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '.' || *p == '*' || *p == '-' || *p == '$')) {
            *ret_is_name = 0;
            return "error";
        }
    }
    *ret_is_name = 1;
    return dot && dot[1] ? dot + 1 : type;
}

static vmop_rc rc_of_fault(const char *fault)
{
    if (!strcmp(fault, "not_found") || !strcmp(fault, "NOT_FOUND"))
        return VMOP_E_NOT_FOUND;
    if (!strcmp(fault, "unauthenticated") || !strcmp(fault, "unauthorized") ||
        !strcmp(fault, "UNAUTHENTICATED") || !strcmp(fault, "UNAUTHORIZED"))
        return VMOP_E_AUTH;
    if (!strcmp(fault, "already_exists") || !strcmp(fault, "ALREADY_EXISTS"))
        return VMOP_E_EXISTS;
    return VMOP_E_FAULT;
}

/* A vAPI error object: {"type": "com.vmware.vapi.std.errors.X", "value": {"messages": [...]}}
 * (the /rest form) or {"error_type": "X", "messages": [...]} (the /api form). Returns 0 when obj
 * is not an error object, else the failure recorded in err. */
static vmop_rc rest_error_object(const cJSON *obj, long status, const char *what,
                                 struct vmop_err *err)
{
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "type"));
    const cJSON *messages;
    struct vbuf msg;
    const char *fault;
    int is_name = 1;
    vmop_rc rc;

    if (type && *type) {
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(obj, "value");
        messages = cJSON_GetObjectItemCaseSensitive(value, "messages");
    } else {
        type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "error_type"));
        if (!type || !*type)
            return VMOP_OK;
        messages = cJSON_GetObjectItemCaseSensitive(obj, "messages");
    }
    fault = fault_of_type(type, &is_name);
    vbuf_init(&msg, REST_ERRMSG_MAX + 64);
    if (!is_name)
        add_clean(&msg, type, REST_ERRMSG_MAX / 2);
    add_messages(&msg, messages);
    rc = rc_of_fault(fault);
    vmop_fail_fault(err, rc, fault, (int)status, "%s: vAPI error %s (HTTP %ld)%s%s", what, fault,
                    status, msg.len ? ": " : "", vbuf_str(&msg));
    vbuf_free(&msg);
    return rc;
}

/* Parses body as one JSON value with nothing but white space after it ("404 page not found"
 * must not read as the number 404). NULL when it is not JSON. */
static cJSON *parse_whole(const char *body, size_t len)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(body, len, &end, 0);

    if (!root)
        return NULL;
    for (; end && end < body + len; end++) {
        if (*end != ' ' && *end != '\n' && *end != '\r' && *end != '\t') {
            cJSON_Delete(root);
            return NULL;
        }
    }
    return root;
}

/* Whether a 2xx answer is really an error object: a vAPI error type at the top, or an /api
 * style error_type without a value. */
static int is_error_object(const cJSON *root)
{
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "type"));
    if (type && !strncmp(type, "com.vmware.vapi.std.errors.", 27))
        return 1;
    return cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "error_type")) &&
           !cJSON_GetObjectItemCaseSensitive(root, "value");
}

vmop_rc vim_rest_parse_reply(long status, const char *body, size_t len, const char *what,
                             cJSON **ret_value, struct vmop_err *err)
{
    cJSON *root = NULL, *value = NULL;
    vmop_rc rc = VMOP_OK;
    int ok = status >= 200 && status < 300;

    if (len > VIM_REST_MAX_JSON)
        return vmop_fail(err, VMOP_E_TOOBIG, "%s: answer of %zu bytes is over the %zu byte cap",
                         what, len, (size_t)VIM_REST_MAX_JSON);
    /* Content-Type is not checked: the simulator says text/plain for JSON. */
    if (len)
        root = parse_whole(body, len);

    if (!ok) {
        if (cJSON_IsObject(root) && (rc = rest_error_object(root, status, what, err)))
            goto out;
        if (len && !root) { /* plain text ("404 page not found") */
            struct vbuf msg;
            vbuf_init(&msg, 256);
            add_clean(&msg, body, len < 160 ? len : 160);
            while (msg.len && msg.data[msg.len - 1] == ' ')
                msg.data[--msg.len] = '\0';
            rc = status == 404 ? VMOP_E_NOT_FOUND : status == 401 ? VMOP_E_AUTH : VMOP_E_HTTP;
            vmop_fail_fault(err, rc, "", (int)status, "%s: HTTP %ld: %s", what, status,
                            vbuf_str(&msg));
            vbuf_free(&msg);
            goto out;
        }
        rc = status == 404 ? VMOP_E_NOT_FOUND : status == 401 ? VMOP_E_AUTH : VMOP_E_HTTP;
        vmop_fail_fault(err, rc, "", (int)status, "%s: HTTP %ld", what, status);
        goto out;
    }

    if (!len)
        goto done; /* 200 with no body: no value */
    if (!root) {
        rc = vmop_fail(err, VMOP_E_PROTO, "%s: HTTP %ld answer is not JSON", what, status);
        goto out;
    }
    /* An error object inside a 2xx is still an error. */
    if (cJSON_IsObject(root) && is_error_object(root) &&
        (rc = rest_error_object(root, status, what, err)))
        goto out;
    if (cJSON_IsObject(root))
        value = cJSON_DetachItemFromObjectCaseSensitive(root, "value");
    if (cJSON_IsNull(value)) { /* {"value": null}: an empty list or no result */
        cJSON_Delete(value);
        value = NULL;
    }
done:
    if (ret_value)
        *ret_value = value;
    else
        cJSON_Delete(value);
    value = NULL;
out:
    cJSON_Delete(value);
    cJSON_Delete(root);
    return rc;
}

/* ---- session ------------------------------------------------------------------------------- */

/* Logs in; caller holds r->lock. */
static vmop_rc rest_login_locked(struct vim_client *c, struct vim_rest_state *r,
                                 struct vmop_err *err)
{
    static const char *const headers[] = {"vmware-use-header-authn: true",
                                          "Accept: application/json", NULL};
    struct vim_http_req req = {
        .method = "POST",
        .path = REST_SESSION_PATH,
        .headers = headers,
        .basic_user = c->username,
        .basic_password = c->password,
    };
    struct vim_http_resp resp = {0};
    cJSON *value = NULL;
    char *id = NULL;
    vmop_rc rc;

    rc = vim_http_do(c, &req, &resp, err);
    if (rc)
        goto out;
    if (resp.status == 401 || resp.status == 403) {
        rc = vmop_fail_fault(err, VMOP_E_AUTH, "InvalidLogin", (int)resp.status,
                             "REST login as '%s' refused (HTTP %ld): check the user name and "
                             "password",
                             c->username ? c->username : "", resp.status);
        goto out;
    }
    rc = vim_rest_parse_reply(resp.status, vbuf_str(&resp.body), resp.body.len,
                              "REST login (POST " REST_SESSION_PATH ")", &value, err);
    if (rc)
        goto out;
    if (!cJSON_IsString(value) || !*value->valuestring ||
        strlen(value->valuestring) > REST_SESSION_MAX) {
        rc = vmop_fail(err, VMOP_E_PROTO, "REST login: the answer holds no usable session id");
        goto out;
    }
    id = strdup(value->valuestring);
    if (!id) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory for the REST session id");
        goto out;
    }
    free_secret(r->session_id);
    r->session_id = id;
    r->gen++;
    __atomic_add_fetch(&c->n_logins, 1, __ATOMIC_RELAXED);
out:
    if (cJSON_IsString(value))
        explicit_bzero(value->valuestring, strlen(value->valuestring));
    cJSON_Delete(value);
    vbuf_free_secure(&resp.body);
    return rc;
}

/* Builds the session header "vmware-api-session-id: <id>" into *hdr (caller frees it with
 * free_secret), logging in first when there is no session (or the one we saw, `seen_gen`, is the
 * current one and `relogin` is set). *ret_gen gets the generation of the session used. */
static vmop_rc rest_session_header(struct vim_client *c, struct vim_rest_state *r, int relogin,
                                   uint64_t seen_gen, char **ret_hdr, uint64_t *ret_gen,
                                   struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;
    struct vbuf h;

    vbuf_init(&h, REST_SESSION_MAX + 64);
    pthread_mutex_lock(&r->lock);
    if (relogin && r->gen == seen_gen && r->session_id) {
        /* Nobody re-logged in since this caller saw the session die: drop it. */
        free_secret(r->session_id);
        r->session_id = NULL;
        __atomic_add_fetch(&c->n_relogins, 1, __ATOMIC_RELAXED);
    }
    if (!r->session_id)
        rc = rest_login_locked(c, r, err);
    if (!rc) {
        vbuf_addf(&h, "vmware-api-session-id: %s", r->session_id);
        *ret_gen = r->gen;
    }
    pthread_mutex_unlock(&r->lock);
    if (rc)
        goto out;
    if (vbuf_error(&h)) {
        rc = vmop_fail(err, vbuf_error(&h), "cannot build the REST session header");
        goto out;
    }
    *ret_hdr = vbuf_take(&h);
out:
    vbuf_free_secure(&h);
    return rc;
}

/* ---- call metrics -------------------------------------------------------------------------- */

/* Path segments and action names that are part of a route; anything else is an id or a name. */
static const char *const route_words[] = {
    "api",
    "rest",
    "com",
    "vmware",
    "cis",
    "cls",
    "data",
    "session",
    "content",
    "library",
    "item",
    "file",
    "download-session",
    "downloadsession",
    "vcenter",
    "ovf",
    "library-item",
    "vm-template",
    "library-items",
    "local-library",
    "subscribed-library",
    "find",
    "deploy",
    "prepare",
    "get",
    "list",
    "filter",
    "keep-alive",
    "cancel",
    "fail",
    NULL,
};

static int is_route_word(const char *s, size_t n)
{
    for (size_t i = 0; route_words[i]; i++)
        if (strlen(route_words[i]) == n && memcmp(route_words[i], s, n) == 0)
            return 1;
    return 0;
}

/* Appends the segment s[0..n) to b as itself when it is a route word, else as "{id}". */
static void add_route_part(struct vbuf *b, const char *s, size_t n)
{
    if (n && is_route_word(s, n))
        vbuf_add(b, s, n);
    else if (n)
        vbuf_adds(b, "{id}");
}

size_t vim_rest_route(const char *method, const char *path, char *out, size_t out_len)
{
    struct vbuf b;
    const char *q, *p;
    size_t n = 0;

    if (!out || !out_len)
        return 0;
    vbuf_init(&b, out_len - 1);
    vbuf_adds(&b, method ? method : "?");
    vbuf_adds(&b, " ");
    if (path && strncmp(path, "http", 4) == 0 && (p = strstr(path, "://")))
        path = strchr(p + 3, '/'); /* an absolute download URL: its path only */
    if (!path)
        path = "/";
    q = strchr(path, '?');
    for (p = path; *p && p != q;) {
        size_t len = strcspn(p + 1, "/?");
        vbuf_adds(&b, "/");
        add_route_part(&b, p + 1, len);
        p += 1 + len;
    }
    /* query: each parameter's name, the value of an action, "{id}" for any other value */
    for (p = q; p && *p;) {
        size_t len = strcspn(p + 1, "&"), name = strcspn(p + 1, "=&");
        vbuf_add(&b, p, 1);
        if (name > 0) {
            int action = (name == 7 && !memcmp(p + 1, "~action", 7)) ||
                         (name == 6 && !memcmp(p + 1, "action", 6));
            int plain = 1;
            for (size_t i = 0; i < name; i++)
                if (!((p[1 + i] >= 'a' && p[1 + i] <= 'z') || p[1 + i] == '_' || p[1 + i] == '~'))
                    plain = 0;
            if (plain && name <= 32)
                vbuf_add(&b, p + 1, name);
            else
                vbuf_adds(&b, "{k}");
            if (name < len) {
                vbuf_adds(&b, "=");
                if (action)
                    add_route_part(&b, p + 2 + name, len - name - 1);
                else
                    vbuf_adds(&b, "{id}");
            }
        }
        p += 1 + len;
    }
    if (!vbuf_error(&b)) {
        n = b.len;
        memcpy(out, vbuf_str(&b), n + 1);
    } else {
        snprintf(out, out_len, "%s other", method ? method : "?");
        n = strlen(out);
    }
    vbuf_free(&b);
    return n;
}

/* Sends req (whose headers must be `headers`, with headers[0] free for the session header),
 * logging in first when needed and once more on a 401. *resp gets the answer (the caller
 * vbuf_free()s its body, also on failure). A 401 after the new login is VMOP_E_AUTH. */
static vmop_rc rest_send(struct vim_client *c, struct vim_rest_state *r,
                         const struct vim_http_req *req, const char **headers, const char *what,
                         struct vim_http_resp *resp, struct vmop_err *err)
{
    char *hdr = NULL, route[VIM_METHOD_NAME_MAX];
    struct timespec t0, t1;
    uint64_t gen = 0;
    vmop_rc rc;

    vim_rest_route(req->method, req->path, route, sizeof(route));
    for (int attempt = 0;; attempt++) {
        free_secret(hdr);
        hdr = NULL;
        rc = rest_session_header(c, r, attempt > 0, gen, &hdr, &gen, err);
        if (rc)
            goto out;
        headers[0] = hdr;
        vbuf_free(&resp->body);
        memset(resp, 0, sizeof(*resp));
        __atomic_add_fetch(&c->n_rest_calls, 1, __ATOMIC_RELAXED);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        rc = vim_http_do(c, req, resp, err);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        vim_client_count_method(c, route,
                                rc != VMOP_OK || resp->status < 200 || resp->status >= 300,
                                (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
        if (rc)
            goto out;
        if (resp->status != 401 || attempt > 0)
            break;
        /* 401: the session expired (idle timeout, server restart): log in again, once. */
    }
    if (resp->status == 401)
        rc = vmop_fail_fault(err, VMOP_E_AUTH, "unauthenticated", 401,
                             "%s: session refused again right after a new login (HTTP 401)", what);
out:
    headers[0] = NULL;
    free_secret(hdr);
    return rc;
}

vmop_rc vim_rest_call(struct vim_client *c, const char *method, const char *path, const cJSON *body,
                      cJSON **ret_value, struct vmop_err *err)
{
    struct vim_rest_state *r = NULL;
    struct vim_http_resp resp = {0};
    char *json = NULL;
    char what[REST_PATH_MAX + 16];
    vmop_rc rc;

    if (!c || !method || !path || path[0] != '/')
        return vmop_fail(err, VMOP_E_INVALID, "vim_rest_call: bad arguments");
    /* The path names only ids and actions, never secrets, so it may go into messages. */
    snprintf(what, sizeof(what), "%s %s", method, path);
    rc = rest_state(c, &r, err);
    if (rc)
        return rc;
    if (body) {
        json = cJSON_PrintUnformatted(body);
        if (!json)
            return vmop_fail(err, VMOP_E_NOMEM, "%s: cannot serialise the request", what);
        if (strlen(json) > VIM_MAX_REQUEST) {
            rc = vmop_fail(err, VMOP_E_TOOBIG, "%s: request over %zu bytes", what,
                           (size_t)VIM_MAX_REQUEST);
            goto out;
        }
    }

    {
        const char *headers[4] = {NULL, "Accept: application/json", NULL, NULL};
        struct vim_http_req req = {
            .method = method,
            .path = path,
            .content_type = json ? "application/json" : NULL,
            .body = json,
            .body_len = json ? strlen(json) : 0,
            .headers = headers,
        };
        rc = rest_send(c, r, &req, headers, what, &resp, err);
        if (rc)
            goto out;
    }
    rc = vim_rest_parse_reply(resp.status, vbuf_str(&resp.body), resp.body.len, what, ret_value,
                              err);
out:
    cJSON_free(json);
    vbuf_free(&resp.body);
    return rc;
}

vmop_rc vim_rest_logout(struct vim_client *c, struct vmop_err *err)
{
    struct vim_rest_state *r = c ? __atomic_load_n(&c->rest, __ATOMIC_ACQUIRE) : NULL;
    struct vim_http_resp resp = {0};
    struct vbuf h;
    vmop_rc rc = VMOP_OK;

    if (!r)
        return VMOP_OK;
    vbuf_init(&h, REST_SESSION_MAX + 64);
    pthread_mutex_lock(&r->lock);
    if (r->session_id) {
        vbuf_addf(&h, "vmware-api-session-id: %s", r->session_id);
        free_secret(r->session_id);
        r->session_id = NULL;
    }
    pthread_mutex_unlock(&r->lock);
    if (h.len && !vbuf_error(&h)) {
        const char *headers[] = {vbuf_str(&h), NULL};
        struct vim_http_req req = {
            .method = "DELETE",
            .path = REST_SESSION_PATH,
            .headers = headers,
        };
        rc = vim_http_do(c, &req, &resp, err);
        /* 401: the session had already expired, which is what logout wants. */
        if (!rc && resp.status != 401 && (resp.status < 200 || resp.status >= 300))
            rc = vim_rest_parse_reply(resp.status, vbuf_str(&resp.body), resp.body.len,
                                      "REST logout (DELETE " REST_SESSION_PATH ")", NULL, err);
    }
    vbuf_free_secure(&h);
    vbuf_free(&resp.body);
    return rc;
}

/* ---- raw transfers (catalog addition) ------------------------------------------------------ */

vmop_rc vim_rest_raw(struct vim_client *c, const char *method, const char *path,
                     const char *content_type, const void *body, size_t body_len, size_t max_resp,
                     char **ret_body, size_t *ret_len, struct vmop_err *err)
{
    struct vim_rest_state *r = NULL;
    struct vim_http_resp resp = {0};
    char what[REST_PATH_MAX + 16];
    vmop_rc rc;

    if (!c || !method || !path || path[0] != '/' || (body_len && !body))
        return vmop_fail(err, VMOP_E_INVALID, "vim_rest_raw: bad arguments");
    if (body_len > VIM_MAX_REQUEST)
        return vmop_fail(err, VMOP_E_TOOBIG, "%s %s: request over %zu bytes", method, path,
                         (size_t)VIM_MAX_REQUEST);
    snprintf(what, sizeof(what), "%s %s", method, path);
    rc = rest_state(c, &r, err);
    if (rc)
        return rc;
    {
        const char *headers[2] = {NULL, NULL};
        struct vim_http_req req = {
            .method = method,
            .path = path,
            .content_type = content_type,
            .body = body ? body : (strcmp(method, "GET") != 0 ? "" : NULL),
            .body_len = body_len,
            .headers = headers,
            .max_body = max_resp,
        };
        rc = rest_send(c, r, &req, headers, what, &resp, err);
        if (rc)
            goto out;
    }
    if (resp.status < 200 || resp.status >= 300) {
        rc =
            vim_rest_parse_reply(resp.status, vbuf_str(&resp.body), resp.body.len, what, NULL, err);
        if (!rc) /* cannot happen for a non-2xx, but never report success for one */
            rc = vmop_fail(err, VMOP_E_HTTP, "%s: HTTP %ld", what, resp.status);
        goto out;
    }
    {
        size_t len = resp.body.len;
        if (ret_body) {
            char *data = len ? vbuf_take(&resp.body) : strdup("");
            if (!data) {
                rc = vmop_fail(err, VMOP_E_NOMEM, "%s: out of memory", what);
                goto out;
            }
            *ret_body = data;
        }
        if (ret_len)
            *ret_len = len;
    }
out:
    vbuf_free(&resp.body);
    return rc;
}
