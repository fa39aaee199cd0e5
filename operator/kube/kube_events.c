/* kube_events.c: the core/v1 Event recorder with client-side aggregation of repeats.
 * Owns: the bounded cache of recent events (name, namespace, count). Semantics in kube_events.h.
 */
#include "kube_events.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_util.h"
#include "vbuf.h"

struct seen_event {
    char name[300];
    char ns[256];
    long count;
    uint64_t used; /* LRU stamp */
};

struct kube_recorder {
    struct kube_client *c;
    char *component, *host, *instance;
    size_t cache_size;
    int64_t (*wall_us)(void *ud);
    void *clock_ud;
    pthread_mutex_t lock;
    struct vmop_map cache; /* guarded by lock: aggregation key -> struct seen_event * */
    uint64_t tick;         /* guarded by lock */
};

vmop_rc kube_recorder_new(struct kube_client *c, const struct kube_recorder_opts *o,
                          struct kube_recorder **ret_rec, struct vmop_err *err)
{
    if (!c || !o || !o->component || !*o->component)
        return vmop_fail(err, VMOP_E_INVALID, "event recorder needs a client and a component");
    struct kube_recorder *r = calloc(1, sizeof(*r));
    if (!r)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory creating an event recorder");
    r->c = c;
    r->component = strdup(o->component);
    r->host = o->host ? strdup(o->host) : NULL;
    r->instance = strdup(o->reporting_instance ? o->reporting_instance : o->component);
    r->cache_size = o->cache_size ? o->cache_size : 4096;
    r->wall_us = o->wall_us;
    r->clock_ud = o->clock_ud;
    pthread_mutex_init(&r->lock, NULL);
    vmop_map_init(&r->cache, free);
    if (!r->component || !r->instance || (o->host && !r->host)) {
        kube_recorder_free(r);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory creating an event recorder");
    }
    *ret_rec = r;
    return VMOP_OK;
}

void kube_recorder_free(struct kube_recorder *r)
{
    if (!r)
        return;
    vmop_map_clear(&r->cache);
    pthread_mutex_destroy(&r->lock);
    free(r->component);
    free(r->host);
    free(r->instance);
    free(r);
}

static void evict_oldest_locked(struct kube_recorder *r)
{
    struct vmop_map_iter it;
    const char *oldest = NULL;
    uint64_t best = UINT64_MAX;
    for (struct vmop_map_entry *e = vmop_map_first(&r->cache, &it); e;
         e = vmop_map_next(&r->cache, &it)) {
        struct seen_event *s = e->val;
        if (s->used < best) {
            best = s->used;
            oldest = e->key;
        }
    }
    if (oldest) {
        char *k = strdup(oldest);
        if (k)
            vmop_map_del(&r->cache, k);
        free(k);
    }
}

static cJSON *build_event(struct kube_recorder *r, const cJSON *obj, const char *name,
                          const char *ns, const char *type, const char *reason, const char *msg,
                          const char *ts)
{
    cJSON *ev = cJSON_CreateObject();
    if (!ev)
        return NULL;
    cJSON_AddStringToObject(ev, "apiVersion", "v1");
    cJSON_AddStringToObject(ev, "kind", "Event");
    cJSON *md = cJSON_AddObjectToObject(ev, "metadata");
    cJSON_AddStringToObject(md, "name", name);
    cJSON_AddStringToObject(md, "namespace", ns);
    cJSON *io = cJSON_AddObjectToObject(ev, "involvedObject");
    cJSON_AddStringToObject(io, "apiVersion", kube_json_str(obj, "apiVersion"));
    cJSON_AddStringToObject(io, "kind", kube_json_str(obj, "kind"));
    cJSON_AddStringToObject(io, "name", kube_obj_name(obj));
    if (kube_obj_namespace(obj))
        cJSON_AddStringToObject(io, "namespace", kube_obj_namespace(obj));
    if (kube_obj_uid(obj))
        cJSON_AddStringToObject(io, "uid", kube_obj_uid(obj));
    if (kube_obj_rv(obj))
        cJSON_AddStringToObject(io, "resourceVersion", kube_obj_rv(obj));
    cJSON_AddStringToObject(ev, "reason", reason);
    cJSON_AddStringToObject(ev, "message", msg);
    cJSON_AddStringToObject(ev, "type", type);
    cJSON *src = cJSON_AddObjectToObject(ev, "source");
    cJSON_AddStringToObject(src, "component", r->component);
    if (r->host)
        cJSON_AddStringToObject(src, "host", r->host);
    cJSON_AddStringToObject(ev, "firstTimestamp", ts);
    cJSON_AddStringToObject(ev, "lastTimestamp", ts);
    cJSON_AddNumberToObject(ev, "count", 1);
    cJSON_AddStringToObject(ev, "reportingComponent", r->component);
    cJSON_AddStringToObject(ev, "reportingInstance", r->instance);
    return ev;
}

vmop_rc kube_event(struct kube_recorder *r, const cJSON *obj, const char *type, const char *reason,
                   struct vmop_err *err, const char *fmt, ...)
{
    vmop_rc rc = VMOP_OK;
    char msg[KUBE_EVENT_MAX_MESSAGE + 1], rsn[KUBE_EVENT_MAX_REASON + 1], ts[40], name[300];
    struct vbuf key;
    cJSON *ev = NULL, *patch = NULL;
    const char *oname = kube_obj_name(obj), *ons = kube_obj_namespace(obj);
    if (!oname || !kube_json_str(obj, "kind") || !kube_json_str(obj, "apiVersion") || !type ||
        !reason)
        return vmop_fail(err, VMOP_E_INVALID,
                         "event: the object needs apiVersion, kind and metadata.name");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(rsn, sizeof(rsn), "%s", reason);
    const char *ns = ons && *ons ? ons : "default";
    int64_t now = r->wall_us ? r->wall_us(r->clock_ud) : vmop_wall_us();
    kube_format_time(now, 0, ts, sizeof(ts));

    vbuf_init(&key, 8192);
    vbuf_addf(&key, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s",
              kube_obj_uid(obj) ? kube_obj_uid(obj) : "", kube_json_str(obj, "kind"), ns, oname,
              type, rsn, msg);
    if (vbuf_error(&key)) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory recording an event");
        goto out;
    }

    /* a repeat? */
    long count = 0;
    char prev_name[300] = "", prev_ns[256] = "";
    pthread_mutex_lock(&r->lock);
    struct seen_event *s = vmop_map_get(&r->cache, vbuf_str(&key));
    if (s) {
        count = ++s->count;
        s->used = ++r->tick;
        snprintf(prev_name, sizeof(prev_name), "%s", s->name);
        snprintf(prev_ns, sizeof(prev_ns), "%s", s->ns);
    }
    pthread_mutex_unlock(&r->lock);

    if (count > 1) {
        patch = cJSON_CreateObject();
        if (!patch || !cJSON_AddNumberToObject(patch, "count", (double)count) ||
            !cJSON_AddStringToObject(patch, "lastTimestamp", ts)) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory recording an event");
            goto out;
        }
        struct vmop_err perr = {0};
        rc = kube_patch(r->c, &kube_res_events, prev_ns, prev_name, KUBE_PATCH_MERGE, patch, NULL,
                        NULL, &perr);
        if (rc == VMOP_OK)
            goto out;
        if (rc != VMOP_E_NOT_FOUND) {
            rc = vmop_fail(err, rc, "%s", perr.msg);
            goto out;
        }
        /* the Event expired or was deleted: start a new one */
    }
    snprintf(name, sizeof(name), "%s.%" PRIx64, oname, (uint64_t)now * 1000 + vmop_rand(1000));
    ev = build_event(r, obj, name, ns, type, rsn, msg, ts);
    if (!ev) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory recording an event");
        goto out;
    }
    rc = kube_create(r->c, &kube_res_events, ns, ev, NULL, NULL, err);
    if (rc)
        goto out;
    pthread_mutex_lock(&r->lock);
    s = vmop_map_get(&r->cache, vbuf_str(&key));
    if (!s) {
        if (r->cache.len >= r->cache_size)
            evict_oldest_locked(r);
        s = calloc(1, sizeof(*s));
        if (s && vmop_map_put(&r->cache, vbuf_str(&key), s) != VMOP_OK) {
            free(s);
            s = NULL;
        }
    }
    if (s) {
        snprintf(s->name, sizeof(s->name), "%s", name);
        snprintf(s->ns, sizeof(s->ns), "%s", ns);
        s->count = 1;
        s->used = ++r->tick;
    }
    pthread_mutex_unlock(&r->lock);
out:
    cJSON_Delete(ev);
    cJSON_Delete(patch);
    vbuf_free(&key);
    return rc;
}
