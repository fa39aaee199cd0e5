/* kube_lease.c: client-go style leader election on a coordination.k8s.io/v1 Lease.
 * Owns: the observed record (spec text, local observed time, the Lease object with its RV) and the
 * leading state. Semantics in kube_lease.h.
 *
 * Locking: `lock` guards every mutable field; it is never held during an API call or a callback.
 * Only one thread runs try/step at a time (the elector thread, or the test driving step()).
 */
#include "kube_lease.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_util.h"

struct kube_elector {
    /* read-only after new */
    struct kube_client *c;
    char *ns, *name, *identity;
    struct kube_elector_opts o; /* strings point to the copies above */
    struct kube_clock clock;
    struct kube_lease_api api;

    pthread_mutex_t lock;
    /* guarded by lock */
    cJSON *lease;        /* last Lease object read or written (its RV is used for PUT) */
    char *observed_spec; /* serialised spec of that Lease */
    int64_t observed_ms; /* local monotonic time the spec last changed */
    char holder[256];
    int leading;
    int64_t last_renew_ms; /* last successful try while leading */
    int done;

    int stop; /* atomic */
    int started;
    pthread_t thread;
};

/* ---- defaults: real clock, the Kubernetes client ---- */

static int64_t real_mono(void *ud)
{
    return vmop_mono_ms();
}

static int64_t real_wall(void *ud)
{
    return vmop_wall_us();
}

static vmop_rc api_get(void *ud, const char *ns, const char *name, cJSON **ret,
                       struct vmop_err *err)
{
    return kube_get(ud, &kube_res_leases, ns, name, NULL, ret, err);
}

static vmop_rc api_create(void *ud, const char *ns, const cJSON *lease, cJSON **ret,
                          struct vmop_err *err)
{
    return kube_create(ud, &kube_res_leases, ns, lease, NULL, ret, err);
}

static vmop_rc api_update(void *ud, const char *ns, const cJSON *lease, cJSON **ret,
                          struct vmop_err *err)
{
    return kube_update(ud, &kube_res_leases, ns, lease, NULL, ret, err);
}

vmop_rc kube_elector_new(struct kube_client *c, const struct kube_elector_opts *o,
                         struct kube_elector **ret_el, struct vmop_err *err)
{
    if (!o || !o->ns || !o->name || !o->identity || !*o->identity || (!c && !o->api))
        return vmop_fail(err, VMOP_E_INVALID,
                         "elector needs a namespace, a name, an identity and a client");
    struct kube_elector *el = calloc(1, sizeof(*el));
    if (!el)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory creating an elector");
    el->c = c;
    el->o = *o;
    if (!el->o.lease_duration_ms)
        el->o.lease_duration_ms = 15000;
    if (!el->o.renew_deadline_ms)
        el->o.renew_deadline_ms = 10000;
    if (!el->o.retry_period_ms)
        el->o.retry_period_ms = 2000;
    pthread_mutex_init(&el->lock, NULL);
    el->ns = strdup(o->ns);
    el->name = strdup(o->name);
    el->identity = strdup(o->identity);
    el->o.ns = el->ns;
    el->o.name = el->name;
    el->o.identity = el->identity;
    el->clock =
        o->clock ? *o->clock : (struct kube_clock){.mono_ms = real_mono, .wall_us = real_wall};
    el->api = o->api ? *o->api
                     : (struct kube_lease_api){
                           .get = api_get, .create = api_create, .update = api_update, .ud = c};
    el->o.clock = NULL;
    el->o.api = NULL;
    if (!el->ns || !el->name || !el->identity) {
        kube_elector_free(el);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory creating an elector");
    }
    if (el->o.lease_duration_ms <= el->o.renew_deadline_ms ||
        (double)el->o.renew_deadline_ms <= 1.2 * (double)el->o.retry_period_ms ||
        el->o.lease_duration_ms < 1000) {
        kube_elector_free(el);
        return vmop_fail(err, VMOP_E_INVALID,
                         "elector timing: need leaseDuration > renewDeadline > 1.2 x retryPeriod "
                         "and leaseDuration >= 1s");
    }
    *ret_el = el;
    return VMOP_OK;
}

void kube_elector_free(struct kube_elector *el)
{
    if (!el)
        return;
    kube_elector_stop(el);
    cJSON_Delete(el->lease);
    free(el->observed_spec);
    pthread_mutex_destroy(&el->lock);
    free(el->ns);
    free(el->name);
    free(el->identity);
    free(el);
}

/* ---- the record ---- */

static int64_t now_ms(struct kube_elector *el)
{
    return el->clock.mono_ms(el->clock.ud);
}

static void micro_now(struct kube_elector *el, char *buf, size_t len)
{
    kube_format_time(el->clock.wall_us(el->clock.ud), 1, buf, len);
}

static long spec_num(const cJSON *spec, const char *f)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, f);
    return cJSON_IsNumber(v) ? (long)v->valuedouble : 0;
}

/* Builds a new spec. acquire may be NULL (now). */
static cJSON *make_spec(struct kube_elector *el, const char *holder, long duration_s,
                        const char *acquire, long transitions)
{
    char now[40];
    micro_now(el, now, sizeof(now));
    cJSON *spec = cJSON_CreateObject();
    if (!spec)
        return NULL;
    if (!cJSON_AddStringToObject(spec, "holderIdentity", holder) ||
        !cJSON_AddNumberToObject(spec, "leaseDurationSeconds", (double)duration_s) ||
        !cJSON_AddStringToObject(spec, "acquireTime", acquire ? acquire : now) ||
        !cJSON_AddStringToObject(spec, "renewTime", now) ||
        !cJSON_AddNumberToObject(spec, "leaseTransitions", (double)transitions)) {
        cJSON_Delete(spec);
        return NULL;
    }
    return spec;
}

/* A copy of base (or a fresh Lease) with spec replaced. */
static cJSON *with_spec(struct kube_elector *el, const cJSON *base, cJSON *spec)
{
    cJSON *l = base ? cJSON_Duplicate(base, 1) : cJSON_CreateObject();
    if (!l) {
        cJSON_Delete(spec);
        return NULL;
    }
    if (!base) {
        cJSON_AddStringToObject(l, "apiVersion", "coordination.k8s.io/v1");
        cJSON_AddStringToObject(l, "kind", "Lease");
        cJSON *md = cJSON_AddObjectToObject(l, "metadata");
        cJSON_AddStringToObject(md, "name", el->name);
        cJSON_AddStringToObject(md, "namespace", el->ns);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(l, "spec");
    cJSON_AddItemToObject(l, "spec", spec);
    return l;
}

/* Records lease as observed (takes it). Returns the new holder if it changed, for on_new_leader. */
static void observe(struct kube_elector *el, cJSON *lease, int64_t now, char *changed_holder,
                    size_t ch_len)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
    char *txt = spec ? cJSON_PrintUnformatted(spec) : strdup("");
    const char *holder = kube_json_str(spec, "holderIdentity");
    changed_holder[0] = '\0';
    pthread_mutex_lock(&el->lock);
    if (!el->observed_spec || !txt || strcmp(el->observed_spec, txt) != 0) {
        free(el->observed_spec);
        el->observed_spec = txt;
        txt = NULL;
        el->observed_ms = now;
    }
    if (strcmp(el->holder, holder ? holder : "") != 0) {
        snprintf(el->holder, sizeof(el->holder), "%s", holder ? holder : "");
        snprintf(changed_holder, ch_len, "%s", el->holder);
        if (!changed_holder[0])
            snprintf(changed_holder, ch_len, "%s", "\x01"); /* marker: changed to none */
    }
    cJSON_Delete(el->lease);
    el->lease = lease;
    pthread_mutex_unlock(&el->lock);
    free(txt);
}

static void notify_holder(struct kube_elector *el, const char *changed)
{
    if (changed[0] && changed[0] != '\x01' && el->o.on_new_leader)
        el->o.on_new_leader(el->o.cb_ud, changed);
}

vmop_rc kube_elector_try(struct kube_elector *el, struct vmop_err *err)
{
    vmop_rc rc;
    cJSON *got = NULL, *req = NULL, *res = NULL;
    char changed[256];
    int64_t now = now_ms(el);
    long dur_s = (el->o.lease_duration_ms + 999) / 1000;

    /* 1. fast path: renew a lease we hold and still believe valid */
    pthread_mutex_lock(&el->lock);
    int fast = el->leading && el->lease &&
               el->observed_ms + spec_num(cJSON_GetObjectItemCaseSensitive(el->lease, "spec"),
                                          "leaseDurationSeconds") *
                                     1000 >
                   now;
    if (fast) {
        const cJSON *spec = cJSON_GetObjectItemCaseSensitive(el->lease, "spec");
        cJSON *ns = make_spec(el, el->identity, dur_s, kube_json_str(spec, "acquireTime"),
                              spec_num(spec, "leaseTransitions"));
        req = ns ? with_spec(el, el->lease, ns) : NULL;
    }
    pthread_mutex_unlock(&el->lock);
    if (req) {
        struct vmop_err ferr = {0};
        rc = el->api.update(el->api.ud, el->ns, req, &res, &ferr);
        cJSON_Delete(req);
        req = NULL;
        if (rc == VMOP_OK) {
            observe(el, res, now, changed, sizeof(changed));
            notify_holder(el, changed);
            return VMOP_OK;
        }
        /* fall back to the slow path, like client-go */
    }

    /* 2. read the lease; create it when missing */
    rc = el->api.get(el->api.ud, el->ns, el->name, &got, err);
    if (rc == VMOP_E_NOT_FOUND) {
        vmop_err_clear(err);
        cJSON *spec = make_spec(el, el->identity, dur_s, NULL, 0);
        req = spec ? with_spec(el, NULL, spec) : NULL;
        if (!req)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory building a Lease");
        rc = el->api.create(el->api.ud, el->ns, req, &res, err);
        cJSON_Delete(req);
        if (rc == VMOP_E_EXISTS)
            rc = VMOP_E_CONFLICT; /* another candidate created it first */
        if (rc)
            return rc;
        observe(el, res, now, changed, sizeof(changed));
        notify_holder(el, changed);
        return VMOP_OK;
    }
    if (rc)
        return rc;
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(got, "spec");
    /* keep copies of what we need: observe() takes got */
    char holder[256], acquire[64];
    snprintf(holder, sizeof(holder), "%s",
             kube_json_str(spec, "holderIdentity") ? kube_json_str(spec, "holderIdentity") : "");
    snprintf(acquire, sizeof(acquire), "%s",
             kube_json_str(spec, "acquireTime") ? kube_json_str(spec, "acquireTime") : "");
    long got_dur_s = spec_num(spec, "leaseDurationSeconds");
    long transitions = spec_num(spec, "leaseTransitions");
    cJSON *base = cJSON_Duplicate(got, 1);
    if (!base) {
        cJSON_Delete(got);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory reading a Lease");
    }
    /* 3. note when the record last changed, on our clock */
    observe(el, got, now, changed, sizeof(changed));
    notify_holder(el, changed);
    pthread_mutex_lock(&el->lock);
    int64_t observed = el->observed_ms;
    pthread_mutex_unlock(&el->lock);

    /* 4. held by someone else and not expired? */
    int mine = !strcmp(holder, el->identity);
    if (holder[0] && !mine && observed + got_dur_s * 1000 > now) {
        cJSON_Delete(base);
        return vmop_fail(err, VMOP_E_CONFLICT, "lease %s/%s is held by '%s'", el->ns, el->name,
                         holder);
    }

    /* 5. take it over (or renew it through the slow path) */
    cJSON *nspec = make_spec(el, el->identity, dur_s, mine && acquire[0] ? acquire : NULL,
                             mine ? transitions : transitions + 1);
    req = nspec ? with_spec(el, base, nspec) : NULL;
    cJSON_Delete(base);
    if (!req)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory building a Lease");
    rc = el->api.update(el->api.ud, el->ns, req, &res, err);
    cJSON_Delete(req);
    if (rc)
        return rc; /* VMOP_E_CONFLICT: someone else won */
    observe(el, res, now, changed, sizeof(changed));
    notify_holder(el, changed);
    return VMOP_OK;
}

/* Leading, but the last successful renewal is renew_deadline old: leadership is over. */
static int past_deadline(struct kube_elector *el, int64_t now)
{
    return el->leading && now - el->last_renew_ms >= el->o.renew_deadline_ms;
}

long kube_elector_step(struct kube_elector *el)
{
    struct vmop_err err = {0};
    int64_t now = now_ms(el), after;
    vmop_rc rc;
    int late;
    pthread_mutex_lock(&el->lock);
    late = past_deadline(el, now);
    pthread_mutex_unlock(&el->lock);
    /* A leader past its deadline stops without asking the API server again: a renewal that
     * succeeded now would not undo the time in which another replica may have taken over. */
    rc = late ? VMOP_E_TIMEOUT : kube_elector_try(el, &err);
    /* The deadline is judged on the clock after the call: a call that hung must not count as
     * time spent leading. A success counts from before the call (the renewTime it wrote). */
    after = now_ms(el);
    pthread_mutex_lock(&el->lock);
    int was = el->leading, started = 0, lost = 0;
    if (el->done) {
        pthread_mutex_unlock(&el->lock);
        return -1;
    }
    if (rc == VMOP_OK && !late) {
        el->leading = 1;
        el->last_renew_ms = now;
        started = !was;
    } else if (was && after - el->last_renew_ms >= el->o.renew_deadline_ms) {
        el->leading = 0;
        el->done = 1;
        lost = 1;
    }
    int leading = el->leading;
    pthread_mutex_unlock(&el->lock);
    if (started && el->o.on_started_leading)
        el->o.on_started_leading(el->o.cb_ud);
    if (lost) {
        if (el->o.on_stopped_leading)
            el->o.on_stopped_leading(el->o.cb_ud);
        return -1;
    }
    return leading ? el->o.retry_period_ms : vmop_jitter_ms(el->o.retry_period_ms, 1.2);
}

static void *elector_main(void *arg)
{
    struct kube_elector *el = arg;
    while (!__atomic_load_n(&el->stop, __ATOMIC_ACQUIRE)) {
        long wait = kube_elector_step(el);
        if (wait < 0)
            break;
        /* Wake up by the renew deadline at the latest, so leadership ends on time even when the
         * retry period would sleep past it. */
        pthread_mutex_lock(&el->lock);
        if (el->leading) {
            int64_t left = el->last_renew_ms + el->o.renew_deadline_ms - now_ms(el);
            if (left < wait)
                wait = left > 0 ? (long)left : 0;
        }
        pthread_mutex_unlock(&el->lock);
        vmop_sleep_ms(wait, &el->stop);
    }
    return NULL;
}

vmop_rc kube_elector_start(struct kube_elector *el, struct vmop_err *err)
{
    if (el->started)
        return vmop_fail(err, VMOP_E_INVALID, "elector already started");
    int e = pthread_create(&el->thread, NULL, elector_main, el);
    if (e)
        return vmop_fail(err, VMOP_E_INTERNAL, "pthread_create: %s", strerror(e));
    el->started = 1;
    return VMOP_OK;
}

vmop_rc kube_elector_release(struct kube_elector *el, struct vmop_err *err)
{
    cJSON *req = NULL, *res = NULL;
    char changed[256];
    pthread_mutex_lock(&el->lock);
    if (!el->leading || !el->lease) {
        pthread_mutex_unlock(&el->lock);
        return VMOP_OK;
    }
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(el->lease, "spec");
    cJSON *ns = make_spec(el, "", 1, NULL, spec_num(spec, "leaseTransitions"));
    req = ns ? with_spec(el, el->lease, ns) : NULL;
    pthread_mutex_unlock(&el->lock);
    if (!req)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory building a Lease");
    vmop_rc rc = el->api.update(el->api.ud, el->ns, req, &res, err);
    cJSON_Delete(req);
    if (rc)
        return rc;
    observe(el, res, now_ms(el), changed, sizeof(changed));
    pthread_mutex_lock(&el->lock);
    el->leading = 0;
    pthread_mutex_unlock(&el->lock);
    return VMOP_OK;
}

void kube_elector_stop(struct kube_elector *el)
{
    if (!el)
        return;
    __atomic_store_n(&el->stop, 1, __ATOMIC_RELEASE);
    if (el->started) {
        pthread_join(el->thread, NULL);
        el->started = 0;
    }
    pthread_mutex_lock(&el->lock);
    int was = el->leading;
    el->done = 1;
    pthread_mutex_unlock(&el->lock);
    if (!was)
        return;
    if (el->o.release_on_cancel) {
        struct vmop_err ignored = {0};
        (void)kube_elector_release(el, &ignored);
    }
    pthread_mutex_lock(&el->lock);
    el->leading = 0;
    pthread_mutex_unlock(&el->lock);
    if (el->o.on_stopped_leading)
        el->o.on_stopped_leading(el->o.cb_ud);
}

int kube_elector_is_leader(struct kube_elector *el)
{
    pthread_mutex_lock(&el->lock);
    int l = el->leading;
    pthread_mutex_unlock(&el->lock);
    return l;
}

int kube_elector_lease_fresh(struct kube_elector *el)
{
    int64_t now = now_ms(el);
    pthread_mutex_lock(&el->lock);
    int fresh = el->leading && !el->done && now - el->last_renew_ms < el->o.renew_deadline_ms;
    pthread_mutex_unlock(&el->lock);
    return fresh;
}

void kube_elector_holder(struct kube_elector *el, char *buf, size_t buf_len)
{
    pthread_mutex_lock(&el->lock);
    snprintf(buf, buf_len, "%s", el->holder);
    pthread_mutex_unlock(&el->lock);
}

int kube_elector_done(struct kube_elector *el)
{
    pthread_mutex_lock(&el->lock);
    int d = el->done;
    pthread_mutex_unlock(&el->lock);
    return d;
}
