/* ta_watch.c: watch streams of kube-testapi: chunked NDJSON of
 * ADDED/MODIFIED/DELETED/BOOKMARK/ERROR events from the store's history ring, with resourceVersion
 * resume (410 Expired as an ERROR event when the RV left the window), resourceVersion ""/"0"
 * synthetic ADDED events, sendInitialEvents, label/field selectors with transitions (leaving the
 * selector is DELETED), timeoutSeconds, bookmarks, one-row Tables, and fault-injected drops. Each
 * stream is driven by MHD's content reader callback in the connection's own thread
 * (thread-per-connection), which blocks on the store's condition variable for at most a second at a
 * time. */
#include "ta_http.h"

#include "ta_as.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WATCH_BATCH        256
#define BOOKMARK_PERIOD_MS 10000
#define DEFAULT_TIMEOUT_S  1800

struct ta_watch {
    struct ta_server *s;
    struct ta_rtype *rt; /* never freed before shutdown */
    char *ns;            /* owned or NULL (all namespaces) */
    struct ta_selector *ls, *fs;
    char api_version[2 * TA_MAX_NAME];
    unsigned long long cursor; /* every event with rv <= cursor was considered */
    int bookmarks;
    int table, v1beta1, headers_sent;
    enum as_include include;
    cJSON *cols; /* owned copy */
    long long deadline_ms, next_bookmark_ms;
    unsigned drop_gen;
    struct ta_obj **initial; /* refs */
    size_t n_initial, i_initial;
    int initial_end_bookmark; /* sendInitialEvents: bookmark after the initial events */
    int expired;              /* send the 410 ERROR event, then end */
    int done, dropped;
    struct vbuf out;
    size_t out_off;
};

cJSON *ta_table_columns(const struct ta_rtype *rt, const struct ta_version *v);

static void watch_free(void *cls)
{
    struct ta_watch *w = cls;
    size_t i;
    if (!w)
        return;
    for (i = w->i_initial; i < w->n_initial; i++)
        ta_obj_unref(w->initial[i]);
    free(w->initial);
    free(w->ns);
    ta_selector_free(w->ls);
    ta_selector_free(w->fs);
    cJSON_Delete(w->cols);
    vbuf_free(&w->out);
    free(w);
}

static int matches(const struct ta_watch *w, const struct ta_obj *o)
{
    if (!o)
        return 0;
    if (w->ns && strcmp(o->ns, w->ns) != 0)
        return 0;
    return ta_selector_match_labels(w->ls, o->json) && ta_selector_match_fields(w->fs, o->json);
}

static void encode(struct ta_watch *w, const char *type, struct ta_obj *o)
{
    struct vbuf *b = &w->out;
    vbuf_addf(b, "{\"type\":\"%s\",\"object\":", type);
    if (w->table) {
        cJSON *items = cJSON_CreateArray(), *t = NULL;
        struct vmop_err e = {0};
        vmop_rc rc;
        cJSON_AddItemReferenceToArray(items, o->json);
        rc = as_table_build(w->cols, items, w->include, !w->headers_sent, (long long)time(NULL), &t,
                            &e);
        cJSON_Delete(items);
        if (rc == VMOP_OK) {
            char *s;
            cJSON *m = ta_jobj(t, "metadata", 1);
            char rv[32];
            snprintf(rv, sizeof(rv), "%llu", o->rv);
            ta_jset_str(m, "resourceVersion", rv);
            if (w->v1beta1)
                ta_jset_str(t, "apiVersion", "meta.k8s.io/v1beta1");
            s = cJSON_PrintUnformatted(t);
            cJSON_Delete(t);
            if (s) {
                vbuf_adds(b, s);
                free(s);
                vbuf_adds(b, "}\n");
                w->headers_sent = 1;
                return;
            }
        }
        cJSON_Delete(t);
        w->table = 0; /* no Table code: plain objects from now on */
    }
    {
        const char *cur = ta_jstr(o->json, "apiVersion");
        if (cur && strcmp(cur, w->api_version) == 0) {
            const char *t = ta_obj_text(o);
            if (t)
                vbuf_adds(b, t);
        } else {
            cJSON *c = cJSON_Duplicate(o->json, 1);
            char *t;
            ta_jset_str(c, "apiVersion", w->api_version);
            t = c ? cJSON_PrintUnformatted(c) : NULL;
            cJSON_Delete(c);
            if (t)
                vbuf_adds(b, t);
            free(t);
        }
    }
    vbuf_adds(b, "}\n");
}

static void encode_bookmark(struct ta_watch *w, int initial_end)
{
    vbuf_addf(&w->out,
              "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s\","
              "\"metadata\":{\"resourceVersion\":\"%llu\"%s}}}\n",
              w->rt->kind, w->api_version, w->cursor,
              initial_end ? ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}" : "");
}

static void encode_expired(struct ta_watch *w, unsigned long long oldest)
{
    vbuf_addf(
        &w->out,
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":"
        "{},\"status\":\"Failure\",\"message\":\"too old resource version: %llu (%llu)\","
        "\"reason\":\"Expired\",\"code\":410}}\n",
        w->cursor, oldest);
}

/* Index in the ring of the first event with rv > cursor (ring_len when none). Lock held. */
static size_t ring_after(const struct ta_store *st, unsigned long long cursor)
{
    size_t lo = 0, hi = st->ring_len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->ring[(st->ring_start + mid) % st->ring_cap].rv <= cursor)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void deadline_ts(struct timespec *ts, long long wait_ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += wait_ms / 1000;
    ts->tv_nsec += (wait_ms % 1000) * 1000000;
    if (ts->tv_nsec >= 1000000000) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000;
    }
}

/* Fills w->out with the next events (blocking up to the deadline). */
static void produce(struct ta_watch *w)
{
    struct ta_store *st = &w->s->st;
    struct ta_event evs[WATCH_BATCH];
    size_t n = 0, i;
    if (w->i_initial < w->n_initial) {
        for (i = 0; i < 64 && w->i_initial < w->n_initial; i++) {
            struct ta_obj *o = w->initial[w->i_initial++];
            encode(w, "ADDED", o);
            ta_obj_unref(o);
        }
        return;
    }
    if (w->initial_end_bookmark) {
        w->initial_end_bookmark = 0;
        encode_bookmark(w, 1);
        return;
    }
    if (w->expired) {
        encode_expired(w, st->dropped_rv);
        w->done = 1;
        return;
    }
    pthread_mutex_lock(&st->lock);
    for (;;) {
        long long now = ta_mono_ms(), wait;
        struct timespec ts;
        size_t start;
        if (st->shutting_down || st->drop_gen != w->drop_gen) {
            w->done = 1;
            w->dropped = st->drop_gen != w->drop_gen;
            break;
        }
        if (w->cursor < st->dropped_rv) {
            encode_expired(w, st->dropped_rv);
            w->done = 1;
            break;
        }
        start = ring_after(st, w->cursor);
        for (i = start; i < st->ring_len && n < WATCH_BATCH; i++) {
            struct ta_event *e = &st->ring[(st->ring_start + i) % st->ring_cap];
            if (e->rt == w->rt) {
                evs[n] = *e;
                ta_obj_ref(evs[n].obj);
                ta_obj_ref(evs[n].old);
                n++;
            }
            w->cursor = e->rv;
        }
        if (n)
            break;
        if (now >= w->deadline_ms) {
            if (w->bookmarks)
                encode_bookmark(w, 0);
            w->done = 1;
            break;
        }
        if (w->bookmarks && now >= w->next_bookmark_ms) {
            w->next_bookmark_ms = now + BOOKMARK_PERIOD_MS;
            encode_bookmark(w, 0);
            break;
        }
        wait = w->deadline_ms - now;
        if (w->bookmarks && w->next_bookmark_ms - now < wait)
            wait = w->next_bookmark_ms - now;
        if (wait > 1000)
            wait = 1000;
        deadline_ts(&ts, wait);
        pthread_cond_timedwait(&st->changed, &st->lock, &ts);
    }
    pthread_mutex_unlock(&st->lock);
    for (i = 0; i < n; i++) {
        struct ta_event *e = &evs[i];
        int now_m = matches(w, e->obj), was_m;
        switch (e->type) {
        case TA_EV_ADDED:
            if (now_m)
                encode(w, "ADDED", e->obj);
            break;
        case TA_EV_MODIFIED:
            was_m = matches(w, e->old);
            if (now_m && was_m)
                encode(w, "MODIFIED", e->obj);
            else if (now_m)
                encode(w, "ADDED", e->obj);
            else if (was_m)
                encode(w, "DELETED", e->obj);
            break;
        case TA_EV_DELETED:
            if (now_m)
                encode(w, "DELETED", e->obj);
            break;
        }
        ta_obj_unref(e->obj);
        ta_obj_unref(e->old);
    }
}

static ssize_t watch_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct ta_watch *w = cls;
    for (;;) {
        if (w->out_off < w->out.len) {
            size_t n = w->out.len - w->out_off;
            if (n > max)
                n = max;
            memcpy(buf, w->out.data + w->out_off, n);
            w->out_off += n;
            return (ssize_t)n;
        }
        vbuf_reset(&w->out);
        w->out_off = 0;
        if (w->done)
            return w->dropped ? MHD_CONTENT_READER_END_WITH_ERROR
                              : MHD_CONTENT_READER_END_OF_STREAM;
        produce(w);
        if (vbuf_error(&w->out)) {
            vbuf_reset(&w->out);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
    }
}

struct MHD_Response *ta_watch_response(struct ta_req *rq)
{
    struct ta_watch *w = rq->watch;
    struct MHD_Response *r;
    rq->watch = NULL;
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, watch_reader, w, watch_free);
    if (!r)
        watch_free(w);
    return r;
}

/* Lock held (called from the collection handler). */
vmop_rc ta_watch_start(struct ta_req *rq, struct vmop_err *err)
{
    struct ta_store *st = &rq->s->st;
    struct ta_watch *w = calloc(1, sizeof(*w));
    const char *q, *rv;
    vmop_rc rc = VMOP_OK;
    int send_initial = 0;
    if (!w)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    w->s = rq->s;
    w->rt = rq->rt;
    vbuf_init(&w->out, (size_t)256 << 20);
    if (rq->rt->group[0])
        snprintf(w->api_version, sizeof(w->api_version), "%s/%s", rq->rt->group, rq->ver->name);
    else
        snprintf(w->api_version, sizeof(w->api_version), "%s", rq->ver->name);
    if (rq->ns && !(w->ns = strdup(rq->ns))) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto fail;
    }
    if ((q = ta_query(rq, "labelSelector")) && *q && (rc = ta_label_selector_parse(q, &w->ls, err)))
        goto fail;
    if ((q = ta_query(rq, "fieldSelector")) && *q &&
        (rc = ta_field_selector_parse(q, rq->rt, rq->ver, &w->fs, err)))
        goto fail;
    q = ta_query(rq, "allowWatchBookmarks");
    w->bookmarks = q && strcmp(q, "true") == 0;
    q = ta_query(rq, "sendInitialEvents");
    send_initial = q && strcmp(q, "true") == 0;
    if (send_initial && !w->bookmarks) {
        rc = ta_fail(err, 422, "Invalid",
                     "sendInitialEvents is forbidden for watch unless allowWatchBookmarks=true");
        goto fail;
    }
    w->deadline_ms = ta_mono_ms() + (long long)DEFAULT_TIMEOUT_S * 1000;
    if ((q = ta_query(rq, "timeoutSeconds")) && *q) {
        char *end;
        long long t = strtoll(q, &end, 10);
        if (*end || t < 0) {
            rc = ta_fail(err, 400, "BadRequest", "invalid timeoutSeconds");
            goto fail;
        }
        if (t > 0)
            w->deadline_ms = ta_mono_ms() + t * 1000;
    }
    w->next_bookmark_ms = ta_mono_ms() + BOOKMARK_PERIOD_MS;
    w->drop_gen = st->drop_gen;
    w->table = ta_accept_table(rq, &w->v1beta1);
    if (w->table) {
        w->cols = ta_table_columns(rq->rt, rq->ver);
        q = ta_query(rq, "includeObject");
        w->include = q && strcmp(q, "None") == 0     ? AS_INCLUDE_NONE
                     : q && strcmp(q, "Object") == 0 ? AS_INCLUDE_OBJECT
                                                     : AS_INCLUDE_METADATA;
    }
    rv = ta_query(rq, "resourceVersion");
    if (send_initial || !rv || !*rv || strcmp(rv, "0") == 0) {
        /* synthetic ADDED for the current state */
        struct ta_rtype *rt = rq->rt;
        size_t i, cap = 0;
        for (i = 0; i < rt->n_objs; i++) {
            struct ta_obj *o = rt->objs[i];
            if (!matches(w, o))
                continue;
            if (w->n_initial == cap) {
                size_t nc = cap ? cap * 2 : 64;
                struct ta_obj **n = realloc(w->initial, nc * sizeof(*n));
                if (!n) {
                    rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
                    goto fail;
                }
                w->initial = n;
                cap = nc;
            }
            w->initial[w->n_initial++] = ta_obj_ref(o);
        }
        w->cursor = st->rv;
        w->initial_end_bookmark = send_initial;
    } else {
        char *end;
        unsigned long long n = strtoull(rv, &end, 10);
        if (*end) {
            rc = ta_fail(err, 400, "BadRequest", "invalid resourceVersion: %.32s", rv);
            goto fail;
        }
        w->cursor = n;
        if (n < st->dropped_rv)
            w->expired = 1;
    }
    rq->watch = w;
    rq->code = 200;
    return VMOP_OK;
fail:
    watch_free(w);
    return rc;
}
