/* kube_watch.c: watch streams: NDJSON splitting across chunk boundaries, event decoding, and
 * kube_watch() (one streaming GET ?watch=1, events handed to a callback in order).
 * Not here: resuming, relisting and caching (kube_informer.c).
 */
#include "kube_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_internal.h"
#include "kube_util.h"

void kube_ndjson_init(struct kube_ndjson *p, size_t max_line)
{
    p->max_line = max_line ? max_line : KUBE_WATCH_MAX_LINE;
    vbuf_init(&p->tail, p->max_line);
}

void kube_ndjson_free(struct kube_ndjson *p)
{
    vbuf_free(&p->tail);
}

static int deliver(const char *line, size_t len, kube_line_fn fn, void *ud)
{
    if (len && line[len - 1] == '\r')
        len--;
    if (!len)
        return 0;
    return fn(ud, line, len);
}

vmop_rc kube_ndjson_feed(struct kube_ndjson *p, const char *data, size_t n, kube_line_fn fn,
                         void *ud, struct vmop_err *err)
{
    while (n) {
        const char *nl = memchr(data, '\n', n);
        if (!nl) {
            if (vbuf_add(&p->tail, data, n))
                return vmop_fail(err, VMOP_E_TOOBIG, "watch event larger than %zu bytes",
                                 p->max_line);
            return VMOP_OK;
        }
        size_t k = (size_t)(nl - data);
        int stop;
        if (p->tail.len) {
            if (vbuf_add(&p->tail, data, k))
                return vmop_fail(err, VMOP_E_TOOBIG, "watch event larger than %zu bytes",
                                 p->max_line);
            stop = deliver(p->tail.data, p->tail.len, fn, ud);
            vbuf_reset(&p->tail);
        } else {
            if (k > p->max_line)
                return vmop_fail(err, VMOP_E_TOOBIG, "watch event larger than %zu bytes",
                                 p->max_line);
            stop = deliver(data, k, fn, ud);
        }
        if (stop)
            return VMOP_E_CANCELED;
        data += k + 1;
        n -= k + 1;
    }
    return VMOP_OK;
}

vmop_rc kube_ndjson_finish(struct kube_ndjson *p, kube_line_fn fn, void *ud, struct vmop_err *err)
{
    if (!p->tail.len)
        return VMOP_OK;
    int stop = deliver(p->tail.data, p->tail.len, fn, ud);
    vbuf_reset(&p->tail);
    return stop ? VMOP_E_CANCELED : VMOP_OK;
}

const char *kube_event_type_str(enum kube_event_type t)
{
    switch (t) {
    case KUBE_EV_ADDED:
        return "ADDED";
    case KUBE_EV_MODIFIED:
        return "MODIFIED";
    case KUBE_EV_DELETED:
        return "DELETED";
    case KUBE_EV_BOOKMARK:
        return "BOOKMARK";
    }
    return "?";
}

vmop_rc kube_watch_event_parse(const char *line, size_t len, enum kube_event_type *ret_type,
                               cJSON **ret_obj, struct kube_status *ret_st, struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;
    cJSON *ev = cJSON_ParseWithLength(line, len);
    if (!cJSON_IsObject(ev)) {
        rc = vmop_fail(err, VMOP_E_PROTO, "watch event is not a JSON object");
        goto out;
    }
    const char *type = kube_json_str(ev, "type");
    cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
    if (!type || !cJSON_IsObject(obj)) {
        rc = vmop_fail(err, VMOP_E_PROTO, "watch event without type or object");
        goto out;
    }
    enum kube_event_type t;
    if (!strcmp(type, "ADDED")) {
        t = KUBE_EV_ADDED;
    } else if (!strcmp(type, "MODIFIED")) {
        t = KUBE_EV_MODIFIED;
    } else if (!strcmp(type, "DELETED")) {
        t = KUBE_EV_DELETED;
    } else if (!strcmp(type, "BOOKMARK")) {
        t = KUBE_EV_BOOKMARK;
    } else if (!strcmp(type, "ERROR")) {
        struct kube_status st;
        if (kube_status_from_json(obj, &st) != VMOP_OK) {
            rc = vmop_fail(err, VMOP_E_PROTO, "watch ERROR event without a Status");
            goto out;
        }
        int code = st.code ? st.code : 500;
        rc = kube_status_rc(code, st.reason);
        vmop_fail_fault(err, rc, st.reason, code, "watch: %s",
                        st.message[0] ? st.message : "ERROR event");
        if (ret_st)
            *ret_st = st;
        goto out;
    } else {
        rc = vmop_fail(err, VMOP_E_PROTO, "unknown watch event type '%.32s'", type);
        goto out;
    }
    *ret_type = t;
    *ret_obj = cJSON_DetachItemViaPointer(ev, obj);
out:
    cJSON_Delete(ev);
    return rc;
}

/* ---- the streaming call ---- */

struct wstate {
    struct kube_ndjson nd;
    kube_watch_fn fn;
    void *ud;
    struct vbuf errbody; /* a non-200 answer is collected here */
    long status;
    vmop_rc rc;          /* first failure inside the callbacks */
    struct vmop_err err; /* its message */
    struct kube_status *ret_st;
    int user_stop;
};

static int on_line(void *ud, const char *line, size_t len)
{
    struct wstate *w = ud;
    enum kube_event_type t;
    cJSON *obj = NULL;
    vmop_rc rc = kube_watch_event_parse(line, len, &t, &obj, w->ret_st, &w->err);
    if (rc) {
        w->rc = rc;
        return 1;
    }
    if (w->fn(w->ud, t, obj)) {
        w->user_stop = 1;
        return 1;
    }
    return 0;
}

static int on_data(void *ud, long status, const char *data, size_t n)
{
    struct wstate *w = ud;
    w->status = status;
    if (status != 200) {
        if (vbuf_add(&w->errbody, data, n)) {
            w->rc = vmop_fail(&w->err, VMOP_E_TOOBIG, "watch error body too large");
            return 1;
        }
        return 0;
    }
    vmop_rc rc = kube_ndjson_feed(&w->nd, data, n, on_line, w, &w->err);
    if (rc == VMOP_E_CANCELED)
        return 1; /* w->rc or user_stop says why */
    if (rc) {
        w->rc = rc;
        return 1;
    }
    return 0;
}

vmop_rc kube_watch(struct kube_client *c, const struct kube_resource *r, const char *ns,
                   const struct kube_opts *o, kube_watch_fn fn, void *ud, struct vmop_err *err)
{
    struct kube_opts none = {0};
    struct wstate w = {.fn = fn, .ud = ud};
    struct vbuf url;
    char *path = NULL;
    vmop_rc rc;
    long status = 0;
    if (!o)
        o = &none;
    w.ret_st = o->ret_status;
    kube_ndjson_init(&w.nd, KUBE_WATCH_MAX_LINE);
    vbuf_init(&w.errbody, 1 << 20);
    vbuf_init(&url, 64 * 1024);
    rc = kube_resource_path(r, r->namespaced ? ns : NULL, NULL, NULL, &path, err);
    if (rc)
        goto out;
    /* the same query rules as kube_list, plus the watch ones */
    vbuf_addf(&url, "%s?watch=1", path);
    if (o->allow_bookmarks)
        vbuf_adds(&url, "&allowWatchBookmarks=true");
    if (o->timeout_seconds > 0)
        vbuf_addf(&url, "&timeoutSeconds=%d", o->timeout_seconds);
    const char *qk[] = {"resourceVersion", "labelSelector", "fieldSelector",
                        "resourceVersionMatch"};
    const char *qv[] = {o->resource_version, o->label_selector, o->field_selector,
                        o->resource_version_match};
    for (size_t i = 0; i < sizeof(qk) / sizeof(qk[0]); i++) {
        if (!qv[i])
            continue;
        vbuf_addf(&url, "&%s=", qk[i]);
        kube_url_escape(&url, qv[i]);
    }
    if (vbuf_error(&url)) {
        rc = vmop_fail(err, VMOP_E_TOOBIG, "watch URL too long");
        goto out;
    }
    /* bound the whole stream a little beyond the server's own timeout; without one, only
     * cancellation ends it */
    long tmo = o->timeout_seconds > 0 ? (long)o->timeout_seconds * 1000 + 30000 : -1;
    struct kube_http_req req = {.method = "GET",
                                .path = vbuf_str(&url),
                                .timeout_ms = tmo,
                                .cancel = o->cancel,
                                .no_retry = 1};
    struct kube_sink sink = {.fn = on_data, .ud = &w};
    rc = kube_http(c, &req, &sink, &status, NULL, err);
    if (rc == VMOP_E_CANCELED && (w.rc || w.user_stop)) {
        if (w.rc) {
            rc = vmop_fail_fault(err, w.rc, w.err.fault, w.err.http_status, "%s", w.err.msg);
        } else {
            rc = vmop_fail(err, VMOP_E_CANCELED, "watch of %s stopped by its handler", r->resource);
        }
        goto out;
    }
    if (rc)
        goto out;
    if (status != 200) {
        char what[160];
        snprintf(what, sizeof(what), "watch %.120s", r->resource);
        rc = kube_status_fail((int)status, w.errbody.data, w.errbody.len, what, o->ret_status, err);
        goto out;
    }
    rc = kube_ndjson_finish(&w.nd, on_line, &w, &w.err);
    if (rc) {
        rc = w.rc ? vmop_fail_fault(err, w.rc, w.err.fault, w.err.http_status, "%s", w.err.msg)
                  : vmop_fail(err, VMOP_E_CANCELED, "watch stopped by its handler");
        goto out;
    }
out:
    free(path);
    vbuf_free(&url);
    vbuf_free(&w.errbody);
    kube_ndjson_free(&w.nd);
    return rc;
}
