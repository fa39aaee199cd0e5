/* vm_controller.c: the VirtualMachine controller (see vm_controller.h).
 *
 * reconcile(key): cache read -> paused? -> deleting? -> finalizer -> admission defaults ->
 * resolve (pure) -> vmsync apply (vCenter) -> status (pure) -> one status patch + events.
 */
#include "vm_controller.h"

#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_json.h"
#include "api_admin.h"
#include "api_admit.h"
#include "api_class.h"
#include "api_image.h"
#include "api_vm.h"
#include "image_lookup.h"
#include "ippool.h"
#include "pacing.h"
#include "kube_queue.h"
#include "kube_meta.h"
#include "vmop_clock.h"
#include "log.h"
#include "metrics.h"
#include "ownership.h"
#include "probe.h"
#include "reconcile_rules.h"
#include "resolve.h"
#include "status.h"
#include "change_feed.h"
#include "vmsync.h"

const struct kube_resource vmc_res_vms = {"vmoperator.vmware.com", "v1alpha6", "virtualmachines",
                                          1};
const struct kube_resource vmc_res_classes = {"vmoperator.vmware.com", "v1alpha6",
                                              "virtualmachineclasses", 1};
const struct kube_resource vmc_res_images = {"vmoperator.vmware.com", "v1alpha6",
                                             "virtualmachineimages", 1};
const struct kube_resource vmc_res_cimages = {"vmoperator.vmware.com", "v1alpha6",
                                              "clustervirtualmachineimages", 0};
const struct kube_resource vmc_res_storageclasses = {"storage.k8s.io", "v1", "storageclasses", 0};
const struct kube_resource vmc_res_bindings = {"infra.vmop.io", "v1alpha1", "namespacebindings", 1};
const struct kube_resource vmc_res_endpoints = {"infra.vmop.io", "v1alpha1", "vcenterendpoints", 0};

#define LOGGER "vm-controller"

enum inf_id { I_VM, I_CLASS, I_IMAGE, I_CIMAGE, I_SECRET, I_SC, I_BINDING, I_ENDPOINT, I_N };

struct vmc;

struct inf_slot {
    struct vmc *c;
    enum inf_id id;
    struct kube_informer *inf;
};

#define VMC_FEED_RESYNC_MS 30000 /* re-check bindings/endpoints even without an event */
#define VMC_FEED_RETRY_MS  1000  /* first retry of a feed that could not start (doubles) */
/* the longest wait before looking again at a VM the feed does not hold */
#define VMC_UNWATCHED_MAX_MS 600000L

/* A VM resource version whose finalizer this process removed (see done_delete_seen). */
#define VMC_DONE_DELETES 256
struct done_delete {
    char uid[64]; /* metadata.uid; "" = free */
    char rv[32];  /* metadata.resourceVersion of the version the finalizer came off */
};

/* One vCenter change feed per VCenterEndpoint in use (owned by the feed thread). */
struct feed_slot {
    struct vmc *c;
    char endpoint[254];
    struct vc_conn *conn; /* the connection whose client the feed uses (a reference) */
    struct vcfeed *feed;  /* NULL: slot free */
};

struct vmc {
    struct kube_client *kc;
    struct kube_recorder *rec;
    struct vcenters *vcs;
    struct vmc_opts o;
    char system_ns[254];
    struct inf_slot inf[I_N];
    struct kube_queue *q;
    struct kube_workers *w;
    struct prober *prober;
    struct ippool_registry *pool; /* static IPv4 reservations of this process */
    unsigned long reconciles, failures, status_patches, creates, deletes; /* atomics */
    unsigned long status_held, own_waits;                                 /* atomics */
    unsigned long feed_enqueued, feed_held_back, drifts;                  /* atomics */
    unsigned feed_unwatched_endpoints, feed_unwatched_folders; /* atomics: over the limits */
    /* the vCenter change feeds: feed_mu guards feeds[] and the flags below */
    pthread_mutex_t feed_mu;
    pthread_cond_t feed_cv;
    pthread_t feed_th;
    int feed_started, feed_stop, feed_dirty;
    struct feed_slot feeds[VMC_FEEDS_MAX];
    unsigned feed_passes;                         /* feeds_sync passes done (feed thread only) */
    const char *feed_props[VCFEED_MAX_PROPS + 1]; /* the feeds' paths (feed_props_init) */
    struct pacing pace;                           /* own status writes, create slots (pacing.h) */
    /* deletes finished by this process (done_delete_*): done_mu guards done[] and done_next */
    pthread_mutex_t done_mu;
    struct done_delete done[VMC_DONE_DELETES];
    unsigned done_next;
};

/* ---- keys and indexes ------------------------------------------------------------------------ */

static void emit_ns(kube_index_emit_fn emit, void *ctx, const char *ns, const char *v)
{
    char buf[520];
    if (!ns || !v || !*v)
        return;
    snprintf(buf, sizeof(buf), "%s/%s", ns, v);
    emit(ctx, buf);
}

static void idx_class(const cJSON *obj, void *ud, kube_index_emit_fn emit, void *ctx)
{
    emit_ns(emit, ctx, kube_obj_namespace(obj), api_jstr(api_jget(obj, "spec"), "className"));
}

static void idx_image(const cJSON *obj, void *ud, kube_index_emit_fn emit, void *ctx)
{
    const cJSON *spec = api_jget(obj, "spec");
    const char *a = api_jstr(spec, "imageName"), *b = api_jstr(api_jget(spec, "image"), "name");
    emit_ns(emit, ctx, kube_obj_namespace(obj), a);
    emit_ns(emit, ctx, "*", a);
    if (b && (!a || strcmp(a, b))) {
        emit_ns(emit, ctx, kube_obj_namespace(obj), b);
        emit_ns(emit, ctx, "*", b);
    }
}

static void idx_secret(const cJSON *obj, void *ud, kube_index_emit_fn emit, void *ctx)
{
    struct api_vm *vm = NULL;
    struct rs_refs refs;
    if (api_vm_parse(obj, &vm, NULL) != VMOP_OK)
        return;
    rs_references(vm, &refs);
    for (size_t i = 0; i < refs.n_secrets; i++)
        emit_ns(emit, ctx, vm->namespace_, refs.secret_names[i]);
    api_vm_free(vm);
}

static void idx_sc(const cJSON *obj, void *ud, kube_index_emit_fn emit, void *ctx)
{
    const char *sc = api_jstr(api_jget(obj, "spec"), "storageClass");
    if (sc && *sc)
        emit(ctx, sc);
}

/* 1 when the resource reports an ownership conflict (VirtualMachineCreated False
 * OwnershipConflict): its status.uniqueID may name a VM that is not its own. */
static int in_conflict(const cJSON *obj)
{
    const cJSON *c = api_cond_get(api_jget(api_jget(obj, "status"), "conditions"), COND_CREATED);
    const char *reason = api_jstr(c, "reason");
    return reason && !strcmp(reason, OWN_REASON_CONFLICT);
}

/* status.uniqueID -> the resource, for the change feed's mapping; never for a resource in an
 * ownership conflict, so a foreign VM its status names is not mapped to it */
static void idx_uid(const cJSON *obj, void *ud, kube_index_emit_fn emit, void *ctx)
{
    const char *uid = api_jstr(api_jget(obj, "status"), "uniqueID");
    if (uid && *uid && !in_conflict(obj))
        emit(ctx, uid);
}

static void idx_ns(const cJSON *obj, void *ud, kube_index_emit_fn emit, void *ctx)
{
    const char *ns = kube_obj_namespace(obj);
    if (ns)
        emit(ctx, ns);
}

static void enqueue_index(struct vmc *c, const char *index, const char *value)
{
    struct kube_obj **objs = NULL;
    size_t n = 0;
    if (kube_informer_by_index(c->inf[I_VM].inf, index, value, &objs, &n, NULL) != VMOP_OK)
        return;
    for (size_t i = 0; i < n; i++)
        kube_queue_add(c->q, kube_obj_key(objs[i]));
    kube_objs_free(objs, n);
}

static void enqueue_all(struct vmc *c)
{
    struct kube_obj **objs = NULL;
    size_t n = 0;
    if (kube_informer_list(c->inf[I_VM].inf, &objs, &n, NULL) != VMOP_OK)
        return;
    for (size_t i = 0; i < n; i++)
        kube_queue_add(c->q, kube_obj_key(objs[i]));
    kube_objs_free(objs, n);
}

/* 1 when the object carries any pool annotation. */
static int has_pool_annotation(const cJSON *obj)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, api_jget(api_jget(obj, "metadata"), "annotations"))
    {
        if (it->string &&
            !strncmp(it->string, IPPOOL_ANNOTATION_PREFIX, sizeof(IPPOOL_ANNOTATION_PREFIX) - 1))
            return 1;
    }
    return 0;
}

static void feed_kick(struct vmc *c);

/* A referenced object changed: requeue the VMs that use it. */
static void on_ref(struct inf_slot *s, const struct kube_obj *o)
{
    struct vmc *c = s->c;
    const cJSON *j = kube_obj_json(o);
    const char *ns = kube_obj_namespace(j), *name = kube_obj_name(j);
    char buf[520];
    if (!name)
        return;
    if (s->id == I_BINDING || s->id == I_ENDPOINT ||
        (s->id == I_SECRET && ns && !strcmp(ns, c->system_ns)))
        feed_kick(c); /* the watched folders or the vCenter client may change */
    switch (s->id) {
    case I_VM:
        kube_queue_add(c->q, kube_obj_key(o));
        break;
    case I_CLASS:
        snprintf(buf, sizeof(buf), "%s/%s", ns ? ns : "", name);
        enqueue_index(c, "class", buf);
        break;
    case I_IMAGE:
    case I_CIMAGE: {
        const char *scope = s->id == I_IMAGE ? (ns ? ns : "") : "*";
        const char *disp = api_jstr(api_jget(j, "status"), "name");
        snprintf(buf, sizeof(buf), "%s/%s", scope, name);
        enqueue_index(c, "image", buf);
        if (disp) {
            snprintf(buf, sizeof(buf), "%s/%s", scope, disp);
            enqueue_index(c, "image", buf);
        }
        break;
    }
    case I_SECRET:
        if (ns && !strcmp(ns, c->system_ns)) {
            enqueue_all(c); /* credentials: every VM may depend on them */
            break;
        }
        snprintf(buf, sizeof(buf), "%s/%s", ns ? ns : "", name);
        enqueue_index(c, "secret", buf);
        break;
    case I_SC:
        enqueue_index(c, "sc", name);
        break;
    case I_BINDING:
        if (ns)
            enqueue_index(c, "ns", ns);
        break;
    case I_ENDPOINT:
        enqueue_all(c);
        break;
    case I_N:
        break;
    }
}

/* The cache now shows a VM's pool annotations: the reservations behind them can go. */
static void pool_settle(struct inf_slot *s, const struct kube_obj *o)
{
    struct api_vm *vm = NULL;
    if (s->id != I_VM || !has_pool_annotation(kube_obj_json(o)))
        return;
    if (api_vm_parse(kube_obj_json(o), &vm, NULL) == VMOP_OK)
        ippool_settle(s->c->pool, vm);
    api_vm_free(vm);
}

static void h_add(void *ud, const struct kube_obj *o)
{
    pool_settle(ud, o);
    on_ref(ud, o);
}

/* status.uniqueID equal (both absent counts as equal: cJSON_Compare(NULL, NULL) is false) */
static int same_unique_id(const cJSON *a, const cJSON *b)
{
    const char *x = api_jstr(api_jget(a, "status"), "uniqueID"),
               *y = api_jstr(api_jget(b, "status"), "uniqueID");
    return (!x && !y) || (x && y && !strcmp(x, y));
}

static void h_update(void *ud, const struct kube_obj *old, const struct kube_obj *o)
{
    struct inf_slot *s = ud;
    pool_settle(s, o);
    /* exactly the object vmop's own status patch made (pacing.h): nothing new to reconcile */
    if (s->id == I_VM && old != o &&
        pacing_take_own(&s->c->pace, kube_obj_key(o), kube_obj_rv(kube_obj_json(o))))
        return;
    /* a VM's own status patch comes back as an update: requeue only on spec/metadata change
     * (generation, finalizers, annotations, deletion), or on resync (same object) */
    if (s->id == I_VM && old != o) {
        const cJSON *a = kube_obj_json(old), *b = kube_obj_json(o);
        const cJSON *ma = api_jget(a, "metadata"), *mb = api_jget(b, "metadata");
        /* status.uniqueID too: one written by someone else (an administrator, a restore) is
         * looked at at once (ownership: docs/design.md) */
        if (cJSON_Compare(api_jget(a, "spec"), api_jget(b, "spec"), 1) && same_unique_id(a, b) &&
            cJSON_Compare(api_jget(ma, "finalizers"), api_jget(mb, "finalizers"), 1) &&
            cJSON_Compare(api_jget(ma, "annotations"), api_jget(mb, "annotations"), 1) &&
            cJSON_Compare(api_jget(ma, "labels"), api_jget(mb, "labels"), 1) &&
            !api_jget(mb, "deletionTimestamp") == !api_jget(ma, "deletionTimestamp"))
            return;
    }
    /* admin objects: their status is vmop's own report; only spec changes matter here */
    if ((s->id == I_ENDPOINT || s->id == I_BINDING) && old != o &&
        cJSON_Compare(api_jget(kube_obj_json(old), "spec"), api_jget(kube_obj_json(o), "spec"), 1))
        return;
    on_ref(s, o);
}

static void h_delete(void *ud, const struct kube_obj *o)
{
    struct inf_slot *s = ud;
    if (s->id == I_VM) {
        prober_remove(s->c->prober, kube_obj_key(o)); /* gone from the API */
        pacing_forget(&s->c->pace, kube_obj_key(o));
        ippool_release_vm(s->c->pool, kube_obj_key(o));
        /* its pool addresses are free again: VMs of the namespace may wait for one */
        if (has_pool_annotation(kube_obj_json(o)) && kube_obj_namespace(kube_obj_json(o)))
            enqueue_index(s->c, "ns", kube_obj_namespace(kube_obj_json(o)));
        return;
    }
    on_ref(s, o);
}

/* ---- the vCenter change feeds ------------------------------------------------------------------
 * One vcfeed per VCenterEndpoint that a NamespaceBinding uses, over the vmFolders of those
 * bindings. A change in vCenter maps to the VM resource (vmservice.namespacedName ExtraConfig, else
 * the "uid" index on status.uniqueID) and is queued like any other event. A feed thread keeps the
 * feeds in line with the bindings and endpoints (woken by their informer events, and every
 * VMC_FEED_RESYNC_MS); only it creates or frees feeds.
 */

static char *feed_map(const struct vim_moref *vm, const char *nsname, void *user)
{
    struct feed_slot *s = user;
    struct kube_obj **objs = NULL;
    size_t n = 0;
    char *key = NULL;
    if (nsname && vcfeed_nsname_valid(nsname))
        return strdup(nsname);
    if (!vm || !vm->value[0] ||
        kube_informer_by_index(s->c->inf[I_VM].inf, "uid", vm->value, &objs, &n, NULL) != VMOP_OK)
        return NULL;
    if (n > 0)
        key = strdup(kube_obj_key(objs[0]));
    kube_objs_free(objs, n);
    return key;
}

static void feed_enqueue(const char *key, void *user)
{
    struct feed_slot *s = user;
    __atomic_add_fetch(&s->c->feed_enqueued, 1, __ATOMIC_RELAXED);
    /* a held create waits for its IP (its own event, feed_enqueue_expected) or the hold's end,
     * which reads the VM again anyway: the rest of its creation's news is not looked at on its
     * own (pacing.h) */
    if (pacing_hold_get(&s->c->pace, key, vmop_mono_ms(), NULL, 0) > 0) {
        __atomic_add_fetch(&s->c->feed_held_back, 1, __ATOMIC_RELAXED);
        return;
    }
    kube_queue_add_after(s->c->q, key, VMC_FEED_COALESCE_MS);
}

/* News the reconcile waits for (a held create's IP, vcfeed_expect): queued at once. */
static void feed_enqueue_expected(const char *key, void *user)
{
    struct feed_slot *s = user;
    __atomic_add_fetch(&s->c->feed_enqueued, 1, __ATOMIC_RELAXED);
    kube_queue_add(s->c->q, key);
}

static void feed_kick(struct vmc *c)
{
    pthread_mutex_lock(&c->feed_mu);
    c->feed_dirty = 1;
    pthread_cond_signal(&c->feed_cv);
    pthread_mutex_unlock(&c->feed_mu);
}

/* The change feed for this endpoint, in one look under feed_mu: *ret_live = 1 when it has every
 * watch live (so the guest IP, power changes etc. come as events and no short requeue is
 * needed); *ret_watching = 1 when it also holds the VM moref_value (may be NULL) in a watch, so
 * the VM's disappearance will come as an event too. */
static void feed_state(struct vmc *c, const char *endpoint, const char *moref_value, int *ret_live,
                       int *ret_watching)
{
    *ret_live = *ret_watching = 0;
    if (!endpoint)
        return;
    pthread_mutex_lock(&c->feed_mu);
    for (size_t i = 0; i < VMC_FEEDS_MAX; i++) {
        struct feed_slot *s = &c->feeds[i];
        if (s->feed && !strcmp(s->endpoint, endpoint)) {
            struct vcfeed_stats st;
            vcfeed_stats(s->feed, &st);
            *ret_live = st.containers > 0 && st.watches == st.containers;
            *ret_watching = *ret_live && moref_value && vcfeed_watching(s->feed, moref_value);
            break;
        }
    }
    pthread_mutex_unlock(&c->feed_mu);
}

/* How soon to look again at a VM the feed does not hold although it was not just created (it
 * sits outside the watched folders, or the feed lags): a quarter of the resource's age, between
 * VMC_WAIT_MAX_MS and VMC_UNWATCHED_MAX_MS, so a VM moved out of the watched folders costs a few
 * reads an hour rather than one every 10 s. */
static long unwatched_requeue_ms(const cJSON *obj)
{
    const char *ts = api_jstr(api_jget(obj, "metadata"), "creationTimestamp");
    struct tm tm;
    long long age_ms;
    char z = 0;

    memset(&tm, 0, sizeof(tm));
    if (!ts ||
        sscanf(ts, "%4d-%2d-%2dT%2d:%2d:%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &z) != 7 ||
        z != 'Z')
        return VMC_WAIT_MAX_MS;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    age_ms = ((long long)time(NULL) - (long long)timegm(&tm)) * 1000;
    if (age_ms / 4 < VMC_WAIT_MAX_MS)
        return VMC_WAIT_MAX_MS;
    return age_ms / 4 > VMC_UNWATCHED_MAX_MS ? VMC_UNWATCHED_MAX_MS : (long)(age_ms / 4);
}

/* The folders (deduplicated, malloc'd strings in a NULL-terminated array) of the bindings using
 * endpoint. */
static char **feed_folders(struct kube_obj **bs, size_t n_bs, const char *endpoint, unsigned max,
                           unsigned *ret_dropped)
{
    char **v = calloc(max + 1, sizeof(*v));
    size_t k = 0;
    if (!v)
        return NULL;
    for (size_t i = 0; i < n_bs; i++) {
        struct api_binding *b = NULL;
        int dup = 0;
        if (api_binding_parse(kube_obj_json(bs[i]), &b, NULL) != VMOP_OK)
            continue;
        if (b->endpoint && !strcmp(b->endpoint, endpoint) && b->vm_folder && *b->vm_folder) {
            for (size_t j = 0; j < k; j++)
                dup |= !strcmp(v[j], b->vm_folder);
            if (!dup && k == max)
                (*ret_dropped)++; /* the cap: named, logged and counted by the caller */
            else if (!dup && (v[k] = strdup(b->vm_folder)) != NULL)
                k++;
        }
        api_binding_free(b);
    }
    return v;
}

static void strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* Removes the metrics collectors that read a feed and its client (before either is freed). */
static void feed_uncollect(struct vmc *c, struct vcfeed *f, struct vc_conn *conn)
{
    if (!c->o.metrics)
        return;
    if (f)
        metrics_remove_collectors(c->o.metrics->m, f);
    if (conn)
        metrics_remove_collectors(c->o.metrics->m, vc_conn_client(conn));
}

struct feed_old {
    struct vcfeed *feed;
    struct vc_conn *conn;
};

/* Brings feeds[] in line with the caches. Runs on the feed thread only. Returns 1 when an endpoint
 * in use got no feed (no client yet, vCenter unreachable): the caller retries soon rather than at
 * the next resync, since until then power and IP changes of its VMs go unnoticed. */
static int feeds_sync(struct vmc *c)
{
    int failed = 0;
    struct kube_obj **eps = NULL, **bs = NULL;
    size_t n_eps = 0, n_bs = 0, n_old = 0;
    struct feed_old old[VMC_FEEDS_MAX];
    int keep[VMC_FEEDS_MAX] = {0};
    unsigned unwatched_endpoints = 0, unwatched_folders = 0;
    struct vmop_err err = {0};

    if (kube_informer_list(c->inf[I_ENDPOINT].inf, &eps, &n_eps, &err) != VMOP_OK ||
        kube_informer_list(c->inf[I_BINDING].inf, &bs, &n_bs, &err) != VMOP_OK) {
        vlog_err(VLOG_WARN, LOGGER, NULL, &err, "change feeds: cache read failed");
        failed = 1;
        goto out;
    }
    for (size_t e = 0; e < n_eps; e++) {
        struct api_endpoint *ep = NULL;
        struct vc_conn *conn = NULL;
        char **folders = NULL;
        const cJSON *secret = NULL;
        struct kube_obj *so = NULL;
        char skey[520];
        int slot = -1, fresh = 0;

        if (api_endpoint_parse(kube_obj_json(eps[e]), &ep, NULL) != VMOP_OK || !ep->name)
            goto next;
        {
            unsigned dropped = 0;
            folders = feed_folders(bs, n_bs, ep->name, c->o.feed_max_folders, &dropped);
            if (dropped) {
                vlog(VLOG_WARN, LOGGER, NULL,
                     "change feed for %s: %u VM folders over the limit of %d are not watched; "
                     "changes of their VMs are seen at the periodic resync only",
                     ep->name, dropped, c->o.feed_max_folders);
                unwatched_folders += dropped;
            }
        }
        if (!folders || !folders[0])
            goto next; /* unused endpoint: its feed (if any) goes below */
        snprintf(skey, sizeof(skey), "%s/%s", c->system_ns, ep->secret_name ? ep->secret_name : "");
        so = kube_informer_get(c->inf[I_SECRET].inf, skey);
        secret = so ? kube_obj_json(so) : NULL;
        vmop_err_clear(&err);
        if (vcenters_get(c->vcs, ep, secret, &conn, &err) != VMOP_OK) {
            vlog_err(VLOG_DEBUG, LOGGER, NULL, &err, "change feed for %s: no client", ep->name);
            failed = 1;
            goto next;
        }
        pthread_mutex_lock(&c->feed_mu);
        for (int i = 0; i < VMC_FEEDS_MAX; i++)
            if (c->feeds[i].feed && !strcmp(c->feeds[i].endpoint, ep->name))
                slot = i;
        if (slot >= 0 && vc_conn_client(c->feeds[slot].conn) != vc_conn_client(conn)) {
            /* the endpoint or its credentials changed: a new client, a new feed */
            old[n_old].feed = c->feeds[slot].feed;
            old[n_old++].conn = c->feeds[slot].conn;
            c->feeds[slot].feed = NULL;
            c->feeds[slot].conn = NULL;
            slot = -1;
        }
        if (slot < 0) {
            for (int i = 0; i < (int)c->o.feed_max_endpoints && slot < 0; i++)
                if (!c->feeds[i].feed && !keep[i])
                    slot = i;
            fresh = 1;
        }
        pthread_mutex_unlock(&c->feed_mu);
        if (slot < 0) {
            vlog(VLOG_WARN, LOGGER, NULL,
                 "change feed for %s: over the limit of %d endpoints with a feed; changes of "
                 "its VMs are seen at the periodic resync only",
                 ep->name, c->o.feed_max_endpoints);
            unwatched_endpoints++;
            goto next;
        }
        keep[slot] = 1;
        vmop_err_clear(&err);
        if (fresh) {
            struct feed_slot *s = &c->feeds[slot];
            struct vcfeed *f = NULL;
            struct vcfeed_opts fo = {.client = vc_conn_client(conn),
                                     .containers = (const char *const *)folders,
                                     .map = feed_map,
                                     .enqueue = feed_enqueue,
                                     .enqueue_expected = feed_enqueue_expected,
                                     .user = s,
                                     /* at start every VM is reconciled anyway; a feed that
                                      * starts later may have missed changes: its first full
                                      * set is delivered */
                                     .skip_initial = c->feed_passes == 0,
                                     .props = c->feed_props,
                                     .match_props = own_mark_paths};
            s->c = c;
            if (vcfeed_new(&fo, &f, &err) != VMOP_OK) {
                vlog_err(VLOG_WARN, LOGGER, NULL, &err, "change feed for %s", ep->name);
                keep[slot] = 0;
                failed = 1;
                goto next;
            }
            if (c->o.metrics &&
                (metrics_collect_vim(c->o.metrics, ep->name, vc_conn_client(conn), &err) ||
                 metrics_collect_vcfeed(c->o.metrics, ep->name, f, &err)))
                vlog_err(VLOG_DEBUG, LOGGER, NULL, &err, "no metrics for %s", ep->name);
            pthread_mutex_lock(&c->feed_mu);
            snprintf(s->endpoint, sizeof(s->endpoint), "%s", ep->name);
            s->feed = f;
            s->conn = conn;
            conn = NULL;
            pthread_mutex_unlock(&c->feed_mu);
            vlog(VLOG_INFO, LOGGER, NULL, "change feed for %s started", ep->name);
        } else if (vcfeed_set_containers(c->feeds[slot].feed, (const char *const *)folders, &err) !=
                   VMOP_OK) {
            vlog_err(VLOG_WARN, LOGGER, NULL, &err, "change feed for %s", ep->name);
        }
    next:
        vc_conn_put(conn);
        kube_obj_unref(so);
        strv_free(folders);
        api_endpoint_free(ep);
    }
    /* endpoints no longer used (or gone) */
    pthread_mutex_lock(&c->feed_mu);
    for (int i = 0; i < VMC_FEEDS_MAX; i++) {
        if (c->feeds[i].feed && !keep[i] && n_old < VMC_FEEDS_MAX) {
            old[n_old].feed = c->feeds[i].feed;
            old[n_old++].conn = c->feeds[i].conn;
            c->feeds[i].feed = NULL;
            c->feeds[i].conn = NULL;
        }
    }
    pthread_mutex_unlock(&c->feed_mu);
out:
    for (size_t i = 0; i < n_old; i++) { /* outside the lock: joins the feed's threads */
        feed_uncollect(c, old[i].feed, old[i].conn);
        vcfeed_free(old[i].feed);
        vc_conn_put(old[i].conn);
    }
    kube_objs_free(eps, n_eps);
    kube_objs_free(bs, n_bs);
    if (!failed) {
        __atomic_store_n(&c->feed_unwatched_endpoints, unwatched_endpoints, __ATOMIC_RELAXED);
        __atomic_store_n(&c->feed_unwatched_folders, unwatched_folders, __ATOMIC_RELAXED);
    }
    c->feed_passes++;
    return failed;
}

static void *feed_thread(void *arg)
{
    struct vmc *c = arg;
    long wait_ms = VMC_FEED_RESYNC_MS, retry_ms = VMC_FEED_RETRY_MS;
    pthread_mutex_lock(&c->feed_mu);
    while (!c->feed_stop) {
        if (!c->feed_dirty) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += wait_ms / 1000;
            ts.tv_nsec += (wait_ms % 1000) * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&c->feed_cv, &c->feed_mu, &ts);
            if (c->feed_stop)
                break;
        }
        c->feed_dirty = 0;
        pthread_mutex_unlock(&c->feed_mu);
        if (feeds_sync(c)) { /* retry soon, backing off up to the resync period */
            wait_ms = retry_ms;
            retry_ms = retry_ms * 2 > VMC_FEED_RESYNC_MS ? VMC_FEED_RESYNC_MS : retry_ms * 2;
        } else {
            wait_ms = VMC_FEED_RESYNC_MS;
            retry_ms = VMC_FEED_RETRY_MS;
        }
        pthread_mutex_lock(&c->feed_mu);
    }
    pthread_mutex_unlock(&c->feed_mu);
    return NULL;
}

/* Stops the feed thread and frees every feed. */
static void feeds_stop(struct vmc *c)
{
    pthread_mutex_lock(&c->feed_mu);
    c->feed_stop = 1;
    pthread_cond_signal(&c->feed_cv);
    pthread_mutex_unlock(&c->feed_mu);
    if (c->feed_started) {
        pthread_join(c->feed_th, NULL);
        c->feed_started = 0;
    }
    for (int i = 0; i < VMC_FEEDS_MAX; i++) {
        struct vcfeed *f;
        struct vc_conn *conn;
        pthread_mutex_lock(&c->feed_mu);
        f = c->feeds[i].feed;
        conn = c->feeds[i].conn;
        c->feeds[i].feed = NULL;
        c->feeds[i].conn = NULL;
        pthread_mutex_unlock(&c->feed_mu);
        feed_uncollect(c, f, conn);
        vcfeed_free(f);
        vc_conn_put(conn);
    }
}

/* ---- lifecycle --------------------------------------------------------------------------------
 */

static const struct kube_resource *res_of(enum inf_id id)
{
    static const struct kube_resource *r[I_N] = {
        &vmc_res_vms,      &vmc_res_classes,        &vmc_res_images,   &vmc_res_cimages,
        &kube_res_secrets, &vmc_res_storageclasses, &vmc_res_bindings, &vmc_res_endpoints};
    return r[id];
}

static void on_probe(void *ud, const char *key, enum probe_tcp result)
{
    struct vmc *c = ud;
    kube_queue_add(c->q, key);
}

/* metrics collector: Kubernetes watch restarts of every informer (watches started after the
 * first), as vmop_watch_restarts_total{source="kube:<resource>"}. */
static void collect_informers(void *ud, struct metrics *m)
{
    struct vmc *c = ud;
    for (int i = 0; i < I_N; i++) {
        char src[128];
        unsigned long w = c->inf[i].inf ? kube_informer_watches(c->inf[i].inf) : 0;
        snprintf(src, sizeof(src), "kube:%s", res_of((enum inf_id)i)->resource);
        metrics_set(c->o.metrics->watch_restarts, METRICS_L(src), w > 0 ? (double)(w - 1) : 0);
    }
}

/* The feeds' paths: the feed's defaults and ownership.h's mark paths, so that a feed can vouch
 * for a VM's marks (vs_events.vouch) and a delete need not read the VM first. */
static void feed_props_init(struct vmc *c)
{
    const char *const *dp = vcfeed_default_props();
    size_t n = 0;
    for (; dp[n] && n < VCFEED_MAX_PROPS; n++)
        c->feed_props[n] = dp[n];
    for (size_t i = 0; own_mark_paths[i]; i++) {
        size_t j = 0;
        while (j < n && strcmp(c->feed_props[j], own_mark_paths[i]) != 0)
            j++;
        if (j == n && n < VCFEED_MAX_PROPS)
            c->feed_props[n++] = own_mark_paths[i];
    }
    c->feed_props[n] = NULL;
}

vmop_rc vmc_new(struct kube_client *kc, struct kube_recorder *rec, struct vcenters *vcs,
                const struct vmc_opts *o, struct vmc **ret, struct vmop_err *err)
{
    struct vmc *c = calloc(1, sizeof(*c));
    struct kube_queue_opts qo = {
        .base_delay_ms = 200, .max_delay_ms = 60000, .qps = 50, .burst = 200};
    vmop_rc rc;
    if (!c)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    c->kc = kc;
    c->rec = rec;
    c->vcs = vcs;
    if (o)
        c->o = *o;
    snprintf(c->system_ns, sizeof(c->system_ns), "%s",
             c->o.system_ns && *c->o.system_ns ? c->o.system_ns : "vmop-system");
    c->o.system_ns = c->system_ns;
    if (!c->o.workers)
        c->o.workers = 4;
    if (!c->o.feed_max_endpoints || c->o.feed_max_endpoints > VMC_FEEDS_MAX)
        c->o.feed_max_endpoints = VMC_FEEDS_MAX;
    if (!c->o.feed_max_folders || c->o.feed_max_folders > VMC_FEED_FOLDERS)
        c->o.feed_max_folders = VMC_FEED_FOLDERS;
    feed_props_init(c);
    pthread_mutex_init(&c->feed_mu, NULL);
    pthread_cond_init(&c->feed_cv, NULL);
    pthread_mutex_init(&c->done_mu, NULL);
    pacing_init(&c->pace, c->o.max_creates, c->o.workers, VMC_DEFAULT_CREATES_PCT);
    rc = kube_queue_new(&qo, &c->q, err);
    if (rc != VMOP_OK)
        goto fail;
    rc = prober_new(64, on_probe, c, &c->prober, err);
    if (rc != VMOP_OK)
        goto fail;
    rc = ippool_registry_new(&c->pool, err);
    if (rc != VMOP_OK)
        goto fail;
    if (c->o.metrics) {
        rc = metrics_collect_queue(c->o.metrics, "virtualmachine", c->q, err);
        if (rc == VMOP_OK)
            rc = metrics_collect_prober(c->o.metrics, c->prober, err);
        if (rc != VMOP_OK)
            goto fail;
    }
    for (int i = 0; i < I_N; i++) {
        struct kube_informer_opts io = {.resource = res_of((enum inf_id)i)};
        struct kube_informer_handlers h = {h_add, h_update, h_delete, &c->inf[i]};
        c->inf[i].c = c;
        c->inf[i].id = (enum inf_id)i;
        if (i == I_VM)
            io.resync_ms = c->o.resync_ms;
        rc = kube_informer_new(kc, &io, &h, &c->inf[i].inf, err);
        if (rc != VMOP_OK)
            goto fail;
    }
    if ((rc = kube_informer_add_index(c->inf[I_VM].inf, "class", idx_class, NULL, err)) ||
        (rc = kube_informer_add_index(c->inf[I_VM].inf, "image", idx_image, NULL, err)) ||
        (rc = kube_informer_add_index(c->inf[I_VM].inf, "secret", idx_secret, NULL, err)) ||
        (rc = kube_informer_add_index(c->inf[I_VM].inf, "sc", idx_sc, NULL, err)) ||
        (rc = kube_informer_add_index(c->inf[I_VM].inf, "ns", idx_ns, NULL, err)) ||
        (rc = kube_informer_add_index(c->inf[I_VM].inf, "uid", idx_uid, NULL, err)) ||
        (rc = kube_informer_add_index(c->inf[I_IMAGE].inf, "ns", idx_ns, NULL, err)) ||
        (rc = kube_informer_add_index(c->inf[I_BINDING].inf, "ns", idx_ns, NULL, err)) ||
        (rc = kube_informer_add_index(c->inf[I_SECRET].inf, "ns", idx_ns, NULL, err)))
        goto fail;
    if (c->o.metrics && (rc = metrics_add_collector(c->o.metrics->m, collect_informers, c, NULL, c,
                                                    err)) != VMOP_OK)
        goto fail;
    *ret = c;
    return VMOP_OK;
fail:
    vmc_free(c);
    return rc;
}

vmop_rc vmc_start_informers(struct vmc *c, struct vmop_err *err)
{
    /* referenced objects first, so the first VM reconciles find them cached */
    for (int i = I_N - 1; i >= 0; i--) {
        vmop_rc rc = kube_informer_start(c->inf[i].inf, err);
        if (rc != VMOP_OK)
            return rc;
    }
    return VMOP_OK;
}

int vmc_synced(struct vmc *c)
{
    for (int i = 0; i < I_N; i++)
        if (!kube_informer_has_synced(c->inf[i].inf))
            return 0;
    return 1;
}

static vmop_rc worker_fn(void *ud, const char *key, struct vmop_err *err)
{
    return vmc_reconcile(ud, key, err);
}

vmop_rc vmc_start_workers(struct vmc *c, struct vmop_err *err)
{
    vmop_rc rc;
    if (c->w)
        return VMOP_OK;
    rc = kube_workers_start(c->q, c->o.workers, worker_fn, c, &c->w, err);
    if (rc != VMOP_OK || !c->vcs || c->feed_started)
        return rc;
    /* the change feeds: only while the workers run (the leader) */
    pthread_mutex_lock(&c->feed_mu);
    c->feed_dirty = 1;
    c->feed_stop = 0;
    pthread_mutex_unlock(&c->feed_mu);
    if (pthread_create(&c->feed_th, NULL, feed_thread, c) == 0)
        c->feed_started = 1;
    else
        vlog(VLOG_WARN, LOGGER, NULL, "no change feed thread: relying on the resync period");
    return VMOP_OK;
}

static void *stop_informer(void *arg)
{
    kube_informer_stop(arg);
    return NULL;
}

void vmc_stop(struct vmc *c, long drain_ms)
{
    struct vmop_err err = {0};
    pthread_t th[I_N];
    int started[I_N] = {0};
    if (!c)
        return;
    feeds_stop(c); /* intake from vCenter */
    /* each stop aborts a blocked watch within about a second: stop them in parallel */
    for (int i = 0; i < I_N; i++)
        started[i] =
            c->inf[i].inf && pthread_create(&th[i], NULL, stop_informer, c->inf[i].inf) == 0;
    for (int i = 0; i < I_N; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else if (c->inf[i].inf)
            kube_informer_stop(c->inf[i].inf);
    }
    if (c->w) {
        if (kube_workers_stop(c->w, drain_ms, &err) != VMOP_OK)
            vlog_err(VLOG_WARN, LOGGER, NULL, &err, "workers did not drain in time");
        c->w = NULL;
    } else if (c->q) {
        kube_queue_shutdown(c->q);
    }
}

void vmc_free(struct vmc *c)
{
    if (!c)
        return;
    vmc_stop(c, 0);
    if (c->o.metrics) {
        metrics_remove_collectors(c->o.metrics->m, c);
        metrics_remove_collectors(c->o.metrics->m, c->q);
        metrics_remove_collectors(c->o.metrics->m, c->prober);
    }
    prober_free(c->prober);
    ippool_registry_free(c->pool);
    for (int i = 0; i < I_N; i++)
        kube_informer_free(c->inf[i].inf);
    kube_queue_free(c->q);
    pthread_cond_destroy(&c->feed_cv);
    pthread_mutex_destroy(&c->feed_mu);
    pthread_mutex_destroy(&c->done_mu);
    pacing_free(&c->pace);
    free(c);
}

void vmc_enqueue(struct vmc *c, const char *key)
{
    kube_queue_add(c->q, key);
}

struct kube_informer *vmc_informer(struct vmc *c, const char *resource)
{
    for (int i = 0; i < I_N; i++)
        if (!strcmp(res_of((enum inf_id)i)->resource, resource))
            return c->inf[i].inf;
    return NULL;
}

/* The controller's own numbers (metrics_add_plain). */
#define VMC_ATOMIC(field)                                                                          \
    static double read_##field(void *ud)                                                           \
    {                                                                                              \
        return (double)__atomic_load_n(&((struct vmc *)ud)->field, __ATOMIC_RELAXED);              \
    }
VMC_ATOMIC(reconciles)
VMC_ATOMIC(failures)
VMC_ATOMIC(status_patches)
VMC_ATOMIC(status_held)
VMC_ATOMIC(own_waits)
VMC_ATOMIC(creates)
VMC_ATOMIC(deletes)
VMC_ATOMIC(feed_enqueued)
VMC_ATOMIC(feed_held_back)
VMC_ATOMIC(drifts)
VMC_ATOMIC(feed_unwatched_endpoints)
VMC_ATOMIC(feed_unwatched_folders)

static double read_queue_length(void *ud)
{
    return (double)kube_queue_len(((struct vmc *)ud)->q);
}

static double read_queue_delayed(void *ud)
{
    return (double)kube_queue_delayed_len(((struct vmc *)ud)->q);
}

static double read_create_slots(void *ud)
{
    return (double)pacing_max_creates(&((struct vmc *)ud)->pace);
}

static double read_creates_waited(void *ud)
{
    return (double)pacing_creates_waited(&((struct vmc *)ud)->pace);
}

static double read_creates_waiting(void *ud)
{
    return (double)pacing_waiting(&((struct vmc *)ud)->pace);
}

static double read_cached(void *ud)
{
    return (double)kube_informer_len(((struct vmc *)ud)->inf[I_VM].inf);
}

static const struct metrics_plain vmc_plain[] = {
    {"vmop_vm_reconciles_total", "VirtualMachine reconciles run.", read_reconciles},
    {"vmop_vm_reconcile_failures_total",
     "VirtualMachine reconciles that ended in an error (retried with backoff).", read_failures},
    {"vmop_vm_status_patches_total", "VirtualMachine status patches written.", read_status_patches},
    {"vmop_vm_status_writes_held_total",
     "Status writes of a create that waited for the VM's IP (one write instead of two).",
     read_status_held},
    {"vmop_vm_own_write_waits_total",
     "Reconciles put off because the cache did not hold vmop's own last status write yet.",
     read_own_waits},
    {"vmop_vm_creates_total", "VMs created in vCenter.", read_creates},
    {"vmop_vm_deletes_total",
     "VMs of deleted VirtualMachines destroyed in vCenter (or found gone).", read_deletes},
    {"vmop_vm_queue_length", "VirtualMachine keys ready in the work queue.", read_queue_length},
    {"vmop_vm_queue_delayed", "VirtualMachine keys waiting for a backoff or requeue-after delay.",
     read_queue_delayed},
    {"vmop_vm_cached", "VirtualMachines in the informer cache.", read_cached},
    {"vmop_vm_create_slots", "Creates in vCenter that may run at once (--max-concurrent-creates).",
     read_create_slots},
    {"vmop_vm_creates_waited_total",
     "Reconciles of a VM to create that found every create slot busy (it waits in line).",
     read_creates_waited},
    {"vmop_vm_creates_waiting", "VMs waiting in line for a create slot.", read_creates_waiting},
    {"vmop_vm_feed_enqueued_total", "VirtualMachine keys queued by the vCenter change feeds.",
     read_feed_enqueued},
    {"vmop_vm_feed_held_back_total",
     "Change feed news of a new VM whose status write waits for its IP, not reconciled on its "
     "own (the IP's news or the end of the wait reads the VM).",
     read_feed_held_back},
    {"vmop_vm_drift_repaired_total",
     "Drift set back (PowerStateDrift and ConfigurationDrift events).", read_drifts},
    {"vmop_vm_feed_unwatched_endpoints",
     "VCenterEndpoints in use that get no change feed (over --feed-max-endpoints).",
     read_feed_unwatched_endpoints},
    {"vmop_vm_feed_unwatched_folders",
     "Bound VM folders no change feed watches (over --feed-max-folders).",
     read_feed_unwatched_folders},
};

vmop_rc vmc_metrics_register(struct vmc *c, struct metrics *m, struct vmop_err *err)
{
    return metrics_add_plain(m, vmc_plain, sizeof(vmc_plain) / sizeof(vmc_plain[0]), c, c, err);
}

/* ---- one reconcile ----------------------------------------------------------------------------
 */

#define RC_MAX_HELD 32

/* Everything one reconcile borrowed from the caches or built; released at the end. */
struct rctx {
    struct vmc *c;
    const char *key;
    char ns[254];
    struct kube_obj *held[RC_MAX_HELD];
    size_t n_held;
    struct api_vm *vm;
    struct api_binding *binding;
    char binding_conflict[512]; /* the bindings' names when the namespace has several, else "" */
    struct api_endpoint *endpoint;
    struct api_class *cls;
    struct api_image *image;
    struct vc_conn *conn;
    cJSON *involved;   /* the object events are about */
    long requeue_ms;   /* > 0: requeue after this */
    long hold_left_ms; /* what is left of a held create's hold (pacing.h), when step_apply ran */
    char held_moref[VIM_MOREF_VALUE_MAX]; /* that create's VM ("" when none) */
    int64_t seen_ms; /* > 0: what vCenter reported before this time is in what the pass wrote */
    struct ippool_nic pool_nics[API_VM_MAX_NICS]; /* per interface (pool_ensure) */
    size_t n_pool_nics;
    enum vm_step fail_step; /* the step that failed (status written), for the one log line */
};

static const cJSON *hold(struct rctx *r, struct kube_obj *o)
{
    if (!o)
        return NULL;
    if (r->n_held >= RC_MAX_HELD) {
        kube_obj_unref(o);
        return NULL;
    }
    r->held[r->n_held++] = o;
    return kube_obj_json(o);
}

static const cJSON *cache_get(struct rctx *r, enum inf_id id, const char *ns, const char *name)
{
    char key[520];
    if (!name || !*name)
        return NULL;
    if (ns)
        snprintf(key, sizeof(key), "%s/%s", ns, name);
    else
        snprintf(key, sizeof(key), "%s", name);
    return hold(r, kube_informer_get(r->c->inf[id].inf, key));
}

static const cJSON *get_secret_cb(void *arg, const char *name)
{
    struct rctx *r = arg;
    return cache_get(r, I_SECRET, r->ns, name);
}

static vmop_rc random_cb(void *arg, unsigned char *buf, size_t n, struct vmop_err *err)
{
    if (RAND_bytes(buf, (int)n) != 1)
        return vmop_fail(err, VMOP_E_INTERNAL, "no random bytes");
    return VMOP_OK;
}

static vmop_rc lookup_image_cb(void *arg, const char *ns, const char *image_name,
                               char ret_kind[API_NAME_MAX], char ret_name[API_NAME_MAX],
                               struct vmop_err *err)
{
    struct rctx *r = arg;
    return image_lookup(r->c->inf[I_IMAGE].inf, r->c->inf[I_CIMAGE].inf, ns, image_name, ret_kind,
                        ret_name, err);
}

/* {apiVersion, kind, metadata{name, namespace, uid, resourceVersion}} for events. */
static cJSON *involved_of(const cJSON *vm)
{
    cJSON *o = cJSON_CreateObject(), *m = cJSON_CreateObject();
    const cJSON *md = api_jget(vm, "metadata");
    if (!o || !m || !cJSON_AddItemToObject(o, "metadata", m)) {
        cJSON_Delete(o);
        cJSON_Delete(m);
        return NULL;
    }
    cJSON_AddStringToObject(o, "apiVersion", "vmoperator.vmware.com/v1alpha6");
    cJSON_AddStringToObject(o, "kind", "VirtualMachine");
    static const char *keys[] = {"name", "namespace", "uid", "resourceVersion"};
    for (size_t i = 0; i < 4; i++)
        if (api_jstr(md, keys[i]))
            cJSON_AddStringToObject(m, keys[i], api_jstr(md, keys[i]));
    return o;
}

static void event(struct rctx *r, const char *type, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void event(struct rctx *r, const char *type, const char *reason, const char *fmt, ...)
{
    char msg[KUBE_EVENT_MAX_MESSAGE];
    struct vmop_err err = {0};
    va_list ap;
    if (!r->c->rec || !r->involved)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (kube_event(r->c->rec, r->involved, type, reason, &err, "%s", msg) != VMOP_OK)
        vlog_err(VLOG_DEBUG, LOGGER, r->key, &err, "event %s not recorded", reason);
}

static int has_finalizer(const cJSON *vm)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, api_jget(api_jget(vm, "metadata"), "finalizers"))
    {
        if (cJSON_IsString(it) && !strcmp(it->valuestring, VMC_FINALIZER))
            return 1;
    }
    return 0;
}

/* A VM not created yet gets the last-resized-vm-class annotation with its finalizer, in the same
 * write (the class it will be created with, as VM Operator records it at create); a class not in
 * the cache yet is recorded after the create (record_resized_class). 0 when out of memory. */
static int add_resized_class(struct rctx *r, cJSON *md)
{
    const char *name = r->vm->class_name;
    const cJSON *cls;
    cJSON *ann;
    char val[600];
    if ((r->vm->status_unique_id && *r->vm->status_unique_id) ||
        api_jstr(r->vm->annotations, VMC_LAST_RESIZED_ANNOT))
        return 1;
    cls = cache_get(r, I_CLASS, r->ns, name);
    if (!cls)
        return 1;
    api_class_resized_value(cls, name, val, sizeof(val));
    ann = cJSON_GetObjectItemCaseSensitive(md, "annotations");
    if (!cJSON_IsObject(ann)) {
        cJSON_DeleteItemFromObjectCaseSensitive(md, "annotations");
        ann = cJSON_AddObjectToObject(md, "annotations");
    }
    return ann && cJSON_AddStringToObject(ann, VMC_LAST_RESIZED_ANNOT, val);
}

/* PUT the VM with the finalizer added (add=1; with the resized-class annotation of a VM not
 * created yet) or removed. */
static vmop_rc set_finalizer(struct rctx *r, int add, struct vmop_err *err)
{
    cJSON *obj = NULL, *md, *fins, *it;
    struct kube_opts ko = {.field_manager = VMC_FIELD_MANAGER};
    vmop_rc rc;
    rc = api_vm_to_json(r->vm, &obj, err);
    if (rc != VMOP_OK)
        return rc;
    md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    fins = cJSON_GetObjectItemCaseSensitive(md, "finalizers");
    if (add) {
        if (!cJSON_IsArray(fins)) {
            fins = cJSON_AddArrayToObject(md, "finalizers");
        }
        if (!fins || !cJSON_AddItemToArray(fins, cJSON_CreateString(VMC_FINALIZER)) ||
            !add_resized_class(r, md)) {
            cJSON_Delete(obj);
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        }
    } else {
        int i = 0;
        cJSON *next;
        for (it = fins ? fins->child : NULL; it; it = next, i++) {
            next = it->next;
            if (cJSON_IsString(it) && !strcmp(it->valuestring, VMC_FINALIZER)) {
                cJSON_DeleteItemFromArray(fins, i);
                i--;
            }
        }
    }
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    rc = kube_update(r->c->kc, &vmc_res_vms, r->ns, obj, &ko, NULL, err);
    cJSON_Delete(obj);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names of objs, sorted (a stable message), joined with ", " into buf (cut with "..." when
 * they do not fit). */
static void binding_names(struct kube_obj **objs, size_t n, char *buf, size_t size)
{
    const char **names = calloc(n, sizeof(*names));
    size_t off = 0;
    buf[0] = '\0';
    if (!names) {
        snprintf(buf, size, "%zu bindings", n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        names[i] =
            kube_obj_name(kube_obj_json(objs[i])) ? kube_obj_name(kube_obj_json(objs[i])) : "";
    qsort(names, n, sizeof(*names), cmp_str);
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(buf + off, size - off, "%s\"%s\"", i ? ", " : "", names[i]);
        if (w < 0 || (size_t)w >= size - off) {
            snprintf(buf + (off < size - 4 ? off : size - 4), 4, "...");
            break;
        }
        off += (size_t)w;
    }
    free(names);
}

/* The namespace's binding, its endpoint and a connection. VMOP_E_NOT_FOUND when something is
 * missing (err says what). */
static vmop_rc load_binding(struct rctx *r, struct vmop_err *err)
{
    struct kube_obj **objs = NULL;
    size_t n = 0;
    vmop_rc rc;
    if (r->binding)
        return VMOP_OK;
    rc = kube_informer_by_index(r->c->inf[I_BINDING].inf, "ns", r->ns, &objs, &n, err);
    if (rc != VMOP_OK)
        return rc;
    if (n == 0) {
        kube_objs_free(objs, n);
        return vmop_fail(err, VMOP_E_NOT_FOUND, "namespace %s has no NamespaceBinding", r->ns);
    }
    if (n > 1) { /* no arbitrary pick: the namespace is blocked until one is left */
        binding_names(objs, n, r->binding_conflict, sizeof(r->binding_conflict));
        kube_objs_free(objs, n);
        return vmop_fail(err, VMOP_E_CONFLICT,
                         "namespace %s has more than one NamespaceBinding (%s): an administrator "
                         "must delete all but one",
                         r->ns, r->binding_conflict);
    }
    rc = api_binding_parse(kube_obj_json(objs[0]), &r->binding, err);
    kube_objs_free(objs, n);
    return rc;
}

static vmop_rc connect_vc(struct rctx *r, struct vmop_err *err)
{
    const cJSON *ep, *secret;
    vmop_rc rc;
    if (r->conn)
        return VMOP_OK;
    rc = load_binding(r, err);
    if (rc != VMOP_OK)
        return rc;
    ep = cache_get(r, I_ENDPOINT, NULL, r->binding->endpoint);
    if (!ep)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "VCenterEndpoint '%s' not found",
                         r->binding->endpoint ? r->binding->endpoint : "");
    rc = api_endpoint_parse(ep, &r->endpoint, err);
    if (rc != VMOP_OK)
        return rc;
    secret = cache_get(r, I_SECRET, r->c->system_ns, r->endpoint->secret_name);
    return vcenters_get(r->c->vcs, r->endpoint, secret, &r->conn, err);
}

static void expect_news(struct rctx *r, const char *moref_value, long within_ms);

/* PATCH status when the new one differs. */
static vmop_rc write_status(struct rctx *r, const struct st_input *in, struct vmop_err *err)
{
    cJSON *st = NULL, *patch = NULL, *got = NULL;
    int changed = 0;
    vmop_rc rc = st_build(in, time(NULL), &st, &changed, err);
    if (rc != VMOP_OK || !changed)
        goto out;
    rc = st_patch(cJSON_GetObjectItemCaseSensitive(r->vm->obj, "status"), st, &patch, err);
    if (rc != VMOP_OK)
        goto out;
    rc = kube_patch_status(r->c->kc, &vmc_res_vms, r->ns, r->vm->name, KUBE_PATCH_MERGE, patch,
                           NULL, &got, err);
    if (rc == VMOP_OK) {
        __atomic_add_fetch(&r->c->status_patches, 1, __ATOMIC_RELAXED);
        pacing_note_own(&r->c->pace, r->key, kube_obj_rv(got), vmop_mono_ms());
    } else if (rc == VMOP_E_NOT_FOUND)
        rc = VMOP_OK; /* deleted meanwhile */
out:
    if (rc == VMOP_OK && r->held_moref[0]) { /* written: a held create's hold is over */
        pacing_hold_drop(&r->c->pace, r->key);
        expect_news(r, r->held_moref, 0);
    }
    cJSON_Delete(st);
    cJSON_Delete(patch);
    cJSON_Delete(got);
    return rc;
}

/* vs_obs -> st_obs (strings borrowed from obs; ips from the guest NICs by MAC). */
static void to_st_obs(const struct api_vm *vm, const struct vs_obs *o, struct st_obs *so)
{
    memset(so, 0, sizeof(*so));
    if (!o || !o->present || !o->vm)
        return;
    const struct vim_vm *v = o->vm;
    so->present = 1;
    so->unique_id = v->ref.value;
    so->bios_uuid = v->bios_uuid;
    so->instance_uuid = v->instance_uuid;
    switch (v->power_state) {
    case VIM_POWER_ON:
        so->power = API_POWER_ON;
        break;
    case VIM_POWER_OFF:
        so->power = API_POWER_OFF;
        break;
    case VIM_POWER_SUSPENDED:
        so->power = API_POWER_SUSPENDED;
        break;
    default:
        so->power = API_POWER_UNSET;
    }
    so->primary_ip4 = vs_primary_ip4(o);
    so->host_name = v->guest_hostname;
    so->hw_version = vs_hw_version(o);
    for (size_t i = 0; i < v->n_nics && so->n_nics < ST_MAX_NICS; i++) {
        struct st_nic *n = &so->nics[so->n_nics++];
        n->name = i < vm->n_nics ? vm->nics[i].name : NULL;
        n->device_key = v->nics[i].key;
        n->mac = v->nics[i].mac;
        for (size_t g = 0; g < v->n_guest_nics; g++) {
            if (v->guest_nics[g].mac && n->mac && !strcasecmp(v->guest_nics[g].mac, n->mac)) {
                n->ips = (const char *const *)v->guest_nics[g].ips;
                n->n_ips = v->guest_nics[g].n_ips;
                break;
            }
        }
    }
}

static const char *extra_config_cb(void *ud, const char *key)
{
    return vim_vm_extra_config(ud, key);
}

/* An event when a readiness probe moves the Ready condition (issue: probes "emit events on
 * transitions"): compared with the Ready condition currently in status. */
static void probe_transition_event(struct rctx *r, enum st_probe probe, const char *msg)
{
    const cJSON *old;
    const char *old_status;
    int ready = probe == ST_PROBE_READY;
    if (probe != ST_PROBE_READY && probe != ST_PROBE_NOT_READY)
        return;
    old = api_cond_get(cJSON_GetObjectItemCaseSensitive(
                           cJSON_GetObjectItemCaseSensitive(r->vm->obj, "status"), "conditions"),
                       COND_READY);
    old_status = old ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(old, "status")) : NULL;
    if (old_status && !strcmp(old_status, ready ? "True" : "False"))
        return;
    event(r, ready ? "Normal" : "Warning", ready ? "Ready" : "NotReady", "readiness probe: %s",
          msg && *msg ? msg : (ready ? "ready" : "not ready"));
}

/* Readiness probe (probe.h): heartbeat and guestInfo are evaluated on the observation; tcpSocket
 * results come from the prober thread, which requeues the VM when its result changes. */
static enum st_probe eval_probe(struct rctx *r, const struct st_obs *so, const struct vs_obs *o,
                                char *msg, size_t size)
{
    struct probe_facts f;
    struct probe_result pr;
    struct vmop_err err = {0};
    const char *host = NULL;
    int port = probe_tcp_target(r->vm, &host);
    enum probe_tcp tcp = PROBE_TCP_UNKNOWN;

    if (port > 0 && so->present && so->power == API_POWER_ON && (host || so->primary_ip4)) {
        const cJSON *p = api_jget(api_jget(r->vm->obj, "spec"), "readinessProbe");
        const cJSON *per = api_jget(p, "periodSeconds"), *to = api_jget(p, "timeoutSeconds");
        int period = cJSON_IsNumber(per) && per->valueint > 0 ? per->valueint : 10;
        int timeout = cJSON_IsNumber(to) && to->valueint > 0 ? to->valueint : 10;
        if (prober_set(r->c->prober, r->key, host ? host : so->primary_ip4, port, period, timeout,
                       &err) == VMOP_OK)
            tcp = prober_result(r->c->prober, r->key);
    } else {
        prober_remove(r->c->prober, r->key);
    }
    memset(&f, 0, sizeof(f));
    f.power = so->present ? so->power : API_POWER_UNSET;
    f.primary_ip = so->primary_ip4;
    f.heartbeat = o && o->vm ? o->vm->guest_heartbeat : NULL;
    f.extra_config = o && o->vm ? extra_config_cb : NULL;
    f.ud = o ? o->vm : NULL;
    if (probe_evaluate(r->vm, &f, tcp, &pr, &err) != VMOP_OK || !pr.has_probe)
        return ST_PROBE_NONE;
    snprintf(msg, size, "%s", pr.message);
    if (pr.status == API_COND_TRUE)
        return ST_PROBE_READY;
    if (pr.status == API_COND_FALSE)
        return ST_PROBE_NOT_READY;
    return ST_PROBE_UNKNOWN;
}

static int is_paused(const struct api_vm *vm)
{
    return cJSON_GetObjectItemCaseSensitive(vm->annotations, VMC_PAUSED_ANNOT) != NULL;
}

/* The identity and scope the delete path looks the VM up with (no resolve on delete). */
static void delete_ident(struct rctx *r, struct rs_desired *d)
{
    memset(d, 0, sizeof(*d));
    snprintf(d->namespaced_name, sizeof(d->namespaced_name), "%s/%s", r->ns,
             r->vm->name ? r->vm->name : "");
    d->instance_uuid = r->vm->instance_uuid;
    d->resource_uid = r->vm->uid;
    d->datacenter = r->binding ? r->binding->datacenter : NULL;
    d->folder = r->binding ? r->binding->vm_folder : NULL;
}

/* ---- finished deletes -------------------------------------------------------------------------
 * The finalizer came off version rv of the object with this uid: a reconcile that still finds that
 * very version in the cache (the informer has not delivered the update yet) has nothing to do. The
 * change feed reports the delete's own changes (the guest's power-off, the VM leaving the folder)
 * while the key is being deleted, so the queue runs it once more right after; without this record
 * that run looked the VM up in vCenter again (a read by uniqueID and FindByUuid, finding nothing)
 * and sent a PUT the API server refused. A bounded ring: an entry is needed only for the moments
 * until the informer catches up. A restart forgets it: the lookups then run once, harmlessly. */

static const char *obj_rv(const cJSON *obj)
{
    return api_jstr(api_jget(obj, "metadata"), "resourceVersion");
}

static void done_delete_add(struct vmc *c, const char *uid, const char *rv)
{
    struct done_delete *d;
    if (!uid || !*uid || !rv || !*rv || strlen(uid) >= sizeof(d->uid) ||
        strlen(rv) >= sizeof(d->rv))
        return; /* not recorded: the next run just looks again */
    pthread_mutex_lock(&c->done_mu);
    d = &c->done[c->done_next++ % VMC_DONE_DELETES];
    snprintf(d->uid, sizeof(d->uid), "%s", uid);
    snprintf(d->rv, sizeof(d->rv), "%s", rv);
    pthread_mutex_unlock(&c->done_mu);
}

/* 1 when this process already removed its finalizer from exactly this version of the object. */
static int done_delete_seen(struct vmc *c, const char *uid, const char *rv)
{
    int seen = 0;
    if (!uid || !*uid || !rv || !*rv)
        return 0;
    pthread_mutex_lock(&c->done_mu);
    for (unsigned i = 0; i < VMC_DONE_DELETES && !seen; i++)
        seen = !strcmp(c->done[i].uid, uid) && !strcmp(c->done[i].rv, rv);
    pthread_mutex_unlock(&c->done_mu);
    return seen;
}

/* The ears of an apply and a delete (vmsync.h vs_events): the change feed of the VM's vCenter,
 * held for the call so that the feed thread cannot free it meanwhile (it stops it, and the waits
 * then fall back to reading vCenter). */
static int ev_mark(void *ud, const char *moref, uint64_t *ret_mark)
{
    return vcfeed_mark_vm(ud, moref, ret_mark);
}

static int ev_wait_power(void *ud, const char *moref, uint64_t mark, enum vim_power_state want,
                         long timeout_ms)
{
    return vcfeed_wait_power(ud, moref, mark, want, timeout_ms);
}

static int ev_wait_gone(void *ud, const char *moref, uint64_t mark, long timeout_ms)
{
    return vcfeed_wait_gone(ud, moref, mark, timeout_ms);
}

static int ev_vouch(void *ud, const char *moref, const char *const *values, size_t n,
                    enum vim_power_state *ret_power)
{
    return vcfeed_vm_matches(ud, moref, values, n, ret_power);
}

static void ev_expect(void *ud, const char *moref, const char *path, long within_ms)
{
    vcfeed_expect(ud, moref, path, within_ms, 0); /* the waiter in the pass hears it */
}

/* The endpoint's feed with a reference taken (vcfeed_release it), or NULL. */
static struct vcfeed *feed_hold(struct vmc *c, const char *endpoint)
{
    struct vcfeed *f = NULL;
    if (!endpoint)
        return NULL;
    pthread_mutex_lock(&c->feed_mu);
    for (size_t i = 0; i < VMC_FEEDS_MAX && !f; i++) {
        if (c->feeds[i].feed && !strcmp(c->feeds[i].endpoint, endpoint)) {
            f = c->feeds[i].feed;
            vcfeed_hold(f);
        }
    }
    pthread_mutex_unlock(&c->feed_mu);
    return f;
}

static vmop_rc do_delete(struct rctx *r, struct vmop_err *err)
{
    struct vs_deleted del = {0};
    vmop_rc rc;
    const char *uid = r->vm->status_unique_id, *iu = r->vm->instance_uuid;
    if (!has_finalizer(r->vm->obj))
        return VMOP_OK;
    if (done_delete_seen(r->c, r->vm->uid, obj_rv(r->vm->obj)))
        return VMOP_OK; /* done already; the cache is behind (the update is on its way) */
    {
        /* opt-in deletion protection (VM Operator's delete.check.vmoperator.vmware.com/<component>
         * annotations, which only privileged users may add or remove): nothing is deleted in
         * vCenter while one is present; its removal is an update that brings the key back */
        struct vbuf held;
        vbuf_init(&held, 1024);
        if (api_vm_delete_checks_format(r->vm->obj, &held) > 0) {
            event(r, "Warning", "DeleteHeld",
                  "%s: the virtual machine is not deleted until they are removed",
                  vbuf_error(&held) ? "deletion held by delete checks" : vbuf_str(&held));
            vlog(VLOG_INFO, LOGGER, r->key, "delete held: %s",
                 vbuf_error(&held) ? "delete checks" : vbuf_str(&held));
            vbuf_free(&held);
            return VMOP_OK;
        }
        vbuf_free(&held);
    }
    if ((!uid || !*uid) && (!iu || !*iu)) {
        del.gone = 1; /* never identified: nothing can exist in vCenter */
    } else {
        rc = connect_vc(r, err);
        if (rc == VMOP_E_NOT_FOUND && (!uid || !*uid) && r->binding == NULL) {
            /* no binding and never created: nothing to delete */
            vmop_err_clear(err);
            del.gone = 1;
        } else if (rc == VMOP_E_CONFLICT && r->binding_conflict[0]) {
            event(r, "Warning", "DeleteFailed",
                  "%s; until then the virtual machine is not deleted in vCenter", err->msg);
            return rc;
        } else if (rc != VMOP_OK) {
            event(r, "Warning", "DeleteFailed", "cannot reach vCenter: %s", err->msg);
            return rc;
        } else {
            struct rs_desired d;
            struct vcfeed *f = feed_hold(r->c, r->endpoint ? r->endpoint->name : NULL);
            struct vs_events ev = {ev_mark, ev_wait_power, ev_wait_gone, f, ev_vouch};
            delete_ident(r, &d);
            rc = vs_delete(vmc_conn_sync(r->conn), &d, uid, r->vm->power_off_mode, f ? &ev : NULL,
                           &del, err);
            vcfeed_release(f);
            if (rc != VMOP_OK) {
                event(r, "Warning", "DeleteFailed", "delete failed%s%s: %s",
                      err->fault[0] ? " with " : "", err->fault, err->msg);
                return rc;
            }
            if (del.foreign.found) {
                event(r, "Warning", OWN_REASON_CONFLICT,
                      "VM %s is not this resource's (%s): left untouched in vCenter; the "
                      "VirtualMachine is deleted without it",
                      del.foreign.ref, del.foreign.why);
                vlog(VLOG_WARN, LOGGER, r->key, "delete: %s is not ours (%s): left untouched",
                     del.foreign.ref, del.foreign.why);
            }
            if (del.destroyed || !del.foreign.found) { /* destroyed, or already gone */
                __atomic_add_fetch(&r->c->deletes, 1, __ATOMIC_RELAXED);
                event(r, "Normal", "Deleted", "virtual machine deleted from vCenter");
                vlog(VLOG_INFO, LOGGER, r->key, "deleted from vCenter");
            }
        }
    }
    if (!del.gone)
        return vmop_fail(err, VMOP_E_INTERNAL, "virtual machine still present after delete");
    rc = set_finalizer(r, 0, err);
    if (rc == VMOP_E_NOT_FOUND) {
        vmop_err_clear(err);
        rc = VMOP_OK;
    }
    if (rc == VMOP_OK)
        done_delete_add(r->c, r->vm->uid, obj_rv(r->vm->obj));
    return rc;
}

/* 1 when the reconcile's vmsync outcome did step (vm_step.h). */
static int did(const struct vs_outcome *out, enum vm_step step)
{
    return (out->did & VM_DID(step)) != 0;
}

/* One reconcile's state, threaded through the steps (below). */
struct pass {
    const cJSON *obj; /* the VM as the informer holds it */
    struct rs_inputs in;
    struct rs_result res;
    struct st_input si;
    struct st_obs so;
    struct vs_outcome out;
    vmop_rc arc; /* vs_apply's result */
    int write;   /* write the status (si) at the end: once per reconcile (finish_status) */
    struct rs_pool_addr pool_addrs[API_VM_MAX_NICS]; /* in.pool_addrs (step_pools) */
    char pool_msg[RS_MSG_MAX + VMOP_ERR_MSG_MAX];    /* in.pool_message */
    char reason[RS_REASON_MAX], probe_msg[256], pending[160], field_note[256];
};

/* ---- static IPv4 pools (ippool.h) --------------------------------------------------------------
 * Before the VM is resolved (and so before anything is created in vCenter), every interface on a
 * pool network without an address gets one: reserved in the process-wide registry, then written
 * as an annotation with the VM's resourceVersion; the informer's copy settles the reservation,
 * the VM's deletion releases it. The addresses, or what went wrong, are resolver inputs
 * (rs_inputs.pool_addrs, pool_reason).
 */

/* ippool_collect_fn: the addresses the cache shows on scope's network in its namespace. */
static vmop_rc pool_collect(void *arg, const char *scope, struct ippool_set *in_use,
                            struct vmop_err *err)
{
    struct rctx *r = arg;
    struct kube_obj **objs = NULL;
    size_t n = 0;
    const char *network = strchr(scope, '/');
    vmop_rc rc;
    if (!network)
        return vmop_fail(err, VMOP_E_INVALID, "bad pool scope");
    network++;
    rc = kube_informer_by_index(r->c->inf[I_VM].inf, "ns", r->ns, &objs, &n, err);
    for (size_t i = 0; rc == VMOP_OK && i < n; i++) {
        struct api_vm *vm = NULL;
        if (api_vm_parse(kube_obj_json(objs[i]), &vm, NULL) != VMOP_OK)
            continue;
        rc = ippool_in_use_add_vm(in_use, vm, network, err);
        api_vm_free(vm);
    }
    kube_objs_free(objs, n);
    return rc;
}

/* A pool problem for the resolver to report (VirtualMachineNetworkReady False). */
static void pool_not_ready(struct pass *p, const char *reason, const char *msg)
{
    p->in.pool_reason = reason;
    snprintf(p->pool_msg, sizeof(p->pool_msg), "%s", msg);
    p->in.pool_message = p->pool_msg;
}

/* The assigned addresses as resolver inputs. */
static void pool_inputs(struct rctx *r, struct pass *p)
{
    p->in.n_pool_addrs = 0;
    for (size_t k = 0; k < r->n_pool_nics; k++) {
        const struct ippool_nic *pn = &r->pool_nics[k];
        struct rs_pool_addr *pa = &p->pool_addrs[p->in.n_pool_addrs];
        if (pn->state != IPPOOL_NIC_ASSIGNED || !pn->iface || p->in.n_pool_addrs >= API_VM_MAX_NICS)
            continue;
        pa->iface = pn->iface;
        pa->cidr = pn->cidr;
        pa->gateway4 = pn->gateway4[0] ? pn->gateway4 : NULL;
        pa->nameservers = pn->nameservers;
        pa->n_nameservers = pn->n_nameservers;
        pa->search = pn->search_domains;
        pa->n_search = pn->n_search_domains;
        p->in.n_pool_addrs++;
    }
    p->in.pool_addrs = p->pool_addrs;
}

/* Ensures the pool allocations. *ret_wrote = 1 when the annotations were just written (the
 * reconcile ends: the update comes back through the informer). With every interface assigned,
 * r->pool_nics holds the addresses for the cloud-init network config. A pool problem (exhausted,
 * bad annotation) is put on p for the resolver (pool_not_ready) and is not an error. */
static vmop_rc pool_ensure(struct rctx *r, struct pass *p, int *ret_wrote, struct vmop_err *err)
{
    const char *keys[API_VM_MAX_NICS], *vals[API_VM_MAX_NICS];
    char valbuf[API_VM_MAX_NICS][IPPOOL_VALUE_MAX];
    size_t n_new = 0;
    cJSON *patch = NULL;
    vmop_rc rc;

    *ret_wrote = 0;
    r->n_pool_nics = 0;
    if (!r->binding)
        return VMOP_OK;
    rc = ippool_vm_nics(r->vm, r->binding, r->pool_nics, &r->n_pool_nics, err);
    if (rc == VMOP_E_INVALID) {
        pool_not_ready(p, "InvalidIPAllocation", err->msg);
        vmop_err_clear(err);
        r->n_pool_nics = 0;
        return VMOP_OK;
    }
    if (rc != VMOP_OK)
        return rc;
    for (size_t i = 0; i < r->n_pool_nics; i++) {
        struct ippool_nic *pn = &r->pool_nics[i];
        uint32_t addr = 0;
        if (pn->state != IPPOOL_NIC_NEEDS_ALLOCATION)
            continue;
        rc = ippool_allocate(r->c->pool, pn->scope, pn->pool, pool_collect, r, r->key, pn->iface,
                             &addr, err);
        if (rc == VMOP_OK)
            rc = ippool_annotation_value(pn->network, addr, pn->prefix, valbuf[n_new], err);
        if (rc == VMOP_E_NOT_FOUND && !strcmp(err->fault, IPPOOL_REASON_EXHAUSTED)) {
            char msg[RS_MSG_MAX + VMOP_ERR_MSG_MAX];
            snprintf(msg, sizeof(msg), "network %s: %s", pn->network, err->msg);
            pool_not_ready(p, IPPOOL_REASON_EXHAUSTED, msg);
            vmop_err_clear(err);
            rc = VMOP_OK;
            goto release;
        }
        if (rc != VMOP_OK)
            goto release;
        keys[n_new] = pn->annotation_key;
        vals[n_new] = valbuf[n_new];
        n_new++;
    }
    if (n_new == 0)
        return VMOP_OK;
    rc = ippool_annotation_patch(kube_obj_rv(r->vm->obj), keys, vals, n_new, &patch, err);
    if (rc == VMOP_OK)
        rc = kube_patch(r->c->kc, &vmc_res_vms, r->ns, r->vm->name, KUBE_PATCH_MERGE, patch, NULL,
                        NULL, err);
    cJSON_Delete(patch);
    if (rc == VMOP_OK || rc == VMOP_E_TIMEOUT || rc == VMOP_E_TRANSPORT) {
        /* written, or perhaps written: hold the addresses until the cache shows them */
        for (size_t i = 0; i < r->n_pool_nics; i++)
            if (r->pool_nics[i].state == IPPOOL_NIC_NEEDS_ALLOCATION)
                ippool_confirm(r->c->pool, r->pool_nics[i].scope, r->key, r->pool_nics[i].iface);
        if (rc == VMOP_OK) {
            *ret_wrote = 1;
            for (size_t i = 0; i < n_new; i++)
                vlog(VLOG_INFO, LOGGER, r->key, "pool address %s: %s", keys[i], vals[i]);
            event(r, "Normal", "IPAllocated", "static IPv4 address%s allocated: %s%s%s",
                  n_new > 1 ? "es" : "", vals[0], n_new > 1 ? ", " : "", n_new > 1 ? vals[1] : "");
        }
        return rc;
    }
release:
    for (size_t i = 0; i < r->n_pool_nics; i++)
        if (r->pool_nics[i].state == IPPOOL_NIC_NEEDS_ALLOCATION)
            ippool_release(r->c->pool, r->pool_nics[i].scope, r->key, r->pool_nics[i].iface);
    r->n_pool_nics = 0;
    return rc;
}

/* spec.nextRestartTime "now" becomes the current time in spec (as VM Operator's webhook does), so
 * the request is recorded once and compared with status.lastRestartTime afterwards. */
static vmop_rc restart_now_to_time(struct rctx *r, int *ret_done, struct vmop_err *err)
{
    cJSON *upd = NULL, *spec;
    struct kube_opts ko = {.field_manager = VMC_FIELD_MANAGER};
    struct timespec now;
    char ts[64];
    vmop_rc rc = VMOP_OK;
    *ret_done = 0;
    if (!r->vm->next_restart_time || strcasecmp(r->vm->next_restart_time, "now"))
        return VMOP_OK;
    clock_gettime(CLOCK_REALTIME, &now);
    api_time_rfc3339nano(&now, ts, sizeof(ts));
    upd = cJSON_Duplicate(r->vm->obj, 1);
    spec = upd ? cJSON_GetObjectItemCaseSensitive(upd, "spec") : NULL;
    if (!spec ||
        !cJSON_ReplaceItemInObjectCaseSensitive(spec, "nextRestartTime", cJSON_CreateString(ts))) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(upd, "status");
    rc = kube_update(r->c->kc, &vmc_res_vms, r->ns, upd, &ko, NULL, err);
    if (rc == VMOP_OK) {
        *ret_done = 1;
        vlog(VLOG_INFO, LOGGER, r->key, "nextRestartTime now -> %s", ts);
    }
out:
    cJSON_Delete(upd);
    return rc;
}

/* status.class.name differs from spec.className (a resize was asked for). */
static int class_changed(const struct api_vm *vm)
{
    const char *old = api_jstr(api_jget(api_jget(vm->obj, "status"), "class"), "name");
    return vm->class_name && old && strcmp(old, vm->class_name) != 0;
}

/* The generation the last status was written for (VirtualMachineCreated's observedGeneration),
 * -1 when unknown. */
static long long observed_generation(const struct api_vm *vm)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, api_jget(api_jget(vm->obj, "status"), "conditions"))
    {
        const cJSON *g = api_jget(it, "observedGeneration");
        const char *t = api_jstr(it, "type");
        if (t && !strcmp(t, COND_CREATED) && cJSON_IsNumber(g))
            return (long long)g->valuedouble;
    }
    return -1;
}

/* What the reconcile did that was not asked for by a spec change: drift brought back. */
/* Once the class's CPU and memory are applied, records which class version sized the VM as VM
 * Operator does: annotation vmoperator.vmware.com/last-resized-vm-class =
 * {"name":...,"uid":...,"generation":N}. Written only when it changes. */
static vmop_rc record_resized_class(struct rctx *r, struct vmop_err *err)
{
    const char *old = api_jstr(r->vm->annotations, VMC_LAST_RESIZED_ANNOT);
    char val[600];
    cJSON *patch = NULL, *pm, *pa;
    vmop_rc rc;
    if (!r->cls || !r->cls->name)
        return VMOP_OK;
    api_class_resized_value(r->cls->obj, r->cls->name, val, sizeof(val));
    if (old && !strcmp(old, val))
        return VMOP_OK;
    patch = cJSON_CreateObject();
    pm = cJSON_AddObjectToObject(patch, "metadata");
    pa = pm ? cJSON_AddObjectToObject(pm, "annotations") : NULL;
    if (!pa || !cJSON_AddStringToObject(pa, VMC_LAST_RESIZED_ANNOT, val)) {
        cJSON_Delete(patch);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    }
    rc = kube_patch(r->c->kc, &vmc_res_vms, r->ns, r->vm->name, KUBE_PATCH_MERGE, patch, NULL, NULL,
                    err);
    cJSON_Delete(patch);
    if (rc == VMOP_E_NOT_FOUND) {
        vmop_err_clear(err);
        rc = VMOP_OK;
    }
    return rc;
}

/* A VM that is not this resource's holds its identity (vmsync.h vs_outcome.conflict): nothing
 * was done in vCenter and nothing is created. VirtualMachineCreated False OwnershipConflict, a
 * Warning event when the condition is new, the observed status fields left as they were (nothing
 * of the foreign VM goes into status). Not a failure to retry with backoff (a person resolves
 * it: docs/troubleshooting.md); looked at again now and then. */
static vmop_rc report_conflict(struct rctx *r, struct st_input *si, const struct vs_outcome *out,
                               struct vmop_err *err)
{
    prober_remove(r->c->prober, r->key);
    si->kind = ST_FAILED;
    si->obs = NULL;
    si->fail_step = VM_STEP_OWNERSHIP;
    si->fail_reason = OWN_REASON_CONFLICT;
    si->fail_message = out->message;
    if (!in_conflict(r->vm->obj)) {
        event(r, "Warning", OWN_REASON_CONFLICT, "%s", out->message);
        vlog(VLOG_WARN, LOGGER, r->key, "ownership conflict: %s", out->message);
    }
    vmop_err_clear(err);
    r->requeue_ms = unwatched_requeue_ms(r->vm->obj);
    return VMOP_OK;
}

/* ---- the VM reconcile, step by step ----------------------------------------------------------
 * do_reconcile() runs the steps in order (docs/design.md: resolve -> observe/plan/act -> status):
 *   step_lifecycle  paused, deleting, finalizer
 *   step_defaults   admission defaults and nextRestartTime "now" written into spec
 *   step_pools      static IPv4 pool addresses, allocated and annotated (resolver inputs)
 *   step_resolve    the prerequisites from the caches (resolve.h)
 *   step_connect    vCenter, and the sizing that needs the hosts' CPU MHz
 *   step_apply      vmsync makes vCenter match (vmsync.h), restarts included; its outcome
 *                   into status input
 *   step_events     what was done, as events and log lines
 *   finish_status   the status patch, once (a step that ends the reconcile sets p->write);
 *                   then the resized-class annotation
 *   step_requeue    when to look again
 * A step returns VMOP_OK to go on or the reconcile's result; *stop = 1 ends the reconcile there
 * (with that result). Events are recorded where a step decides them; a failure is logged once,
 * by vmc_reconcile, which decides the retry. */

static vmop_rc step_lifecycle(struct rctx *r, struct pass *p, int *stop, struct vmop_err *err)
{
    *stop = 1;
    if (is_paused(r->vm)) {
        p->si.vm = r->vm;
        p->si.kind = ST_PAUSED;
        p->write = 1;
        return VMOP_OK;
    }
    if (r->vm->deletion_timestamp) {
        prober_remove(r->c->prober, r->key);
        return do_delete(r, err);
    }
    /* The mutating webhook adds the finalizer on create (adm_vm.c); this PUT is for a cluster
     * without the webhook, a VM created paused, or one whose finalizer was taken off. */
    if (!has_finalizer(p->obj))
        return set_finalizer(r, 1, err); /* the update comes back through the informer */
    *stop = 0;
    return VMOP_OK;
}

/* Admission defaults, written to spec before anything exists in vCenter (a cluster without the
 * mutating webhook gets the same), then nextRestartTime "now" as a time. */
static vmop_rc step_defaults(struct rctx *r, int *stop, struct vmop_err *err)
{
    struct api_vm_default_ctx dctx;
    struct timespec now;
    unsigned changed = 0;
    int wrote = 0;
    vmop_rc rc;

    *stop = 1;
    memset(&dctx, 0, sizeof(dctx));
    dctx.random_bytes = random_cb;
    dctx.lookup_image = lookup_image_cb;
    dctx.random_arg = dctx.image_arg = r;
    if (load_binding(r, NULL) == VMOP_OK)
        dctx.default_network = r->binding->default_network;
    clock_gettime(CLOCK_REALTIME, &now);
    dctx.now = now;
    rc = api_vm_default(r->vm, NULL, &dctx, &changed, NULL, err);
    if (rc != VMOP_OK)
        return rc;
    if (changed) {
        cJSON *upd = NULL;
        struct kube_opts ko = {.field_manager = VMC_FIELD_MANAGER};
        rc = api_vm_to_json(r->vm, &upd, err);
        if (rc != VMOP_OK)
            return rc;
        cJSON_DeleteItemFromObjectCaseSensitive(upd, "status");
        rc = kube_update(r->c->kc, &vmc_res_vms, r->ns, upd, &ko, NULL, err);
        cJSON_Delete(upd);
        if (rc == VMOP_OK)
            vlog(VLOG_INFO, LOGGER, r->key, "wrote defaults into spec (flags 0x%x)", changed);
        return rc;
    }
    rc = restart_now_to_time(r, &wrote, err);
    if (rc != VMOP_OK || wrote)
        return rc; /* the update comes back through the informer */
    *stop = 0;
    return VMOP_OK;
}

/* Static IPv4 pools: every interface on a pool network has its address, or the reason it has
 * none, before the resolve; a new allocation is written and the reconcile ends there. */
static vmop_rc step_pools(struct rctx *r, struct pass *p, int *stop, struct vmop_err *err)
{
    int wrote = 0;
    vmop_rc rc = pool_ensure(r, p, &wrote, err);
    *stop = rc != VMOP_OK || wrote;
    if (rc == VMOP_OK)
        pool_inputs(r, p);
    return rc;
}

/* The prerequisites from the caches; a VM that is not ready gets its conditions and stops. */
static vmop_rc step_resolve(struct rctx *r, struct pass *p, int *stop, struct vmop_err *err)
{
    const cJSON *cls_j, *img_j = NULL, *sc_j;
    struct rs_refs refs;
    vmop_rc rc;

    *stop = 1;
    rs_references(r->vm, &refs);
    cls_j = cache_get(r, I_CLASS, r->ns, refs.class_name);
    if (refs.image_name) {
        if (refs.image_kind && !strcmp(refs.image_kind, API_KIND_CVMI))
            img_j = cache_get(r, I_CIMAGE, NULL, refs.image_name);
        else if (!refs.image_kind || !strcmp(refs.image_kind, API_KIND_VMI))
            img_j = cache_get(r, I_IMAGE, r->ns, refs.image_name);
    }
    sc_j = cache_get(r, I_SC, NULL, refs.storage_class);
    if (cls_j && (rc = api_class_parse(cls_j, &r->cls, err)) != VMOP_OK)
        return rc;
    if (img_j && (rc = api_image_parse(img_j, &r->image, err)) != VMOP_OK)
        return rc;
    p->in.vm = r->vm;
    p->in.binding = r->binding;
    p->in.binding_conflict = r->binding_conflict[0] ? r->binding_conflict : NULL;
    p->in.cls = r->cls;
    p->in.image = r->image;
    p->in.storage_class = sc_j;
    p->in.get_secret = get_secret_cb;
    p->in.secret_arg = r;
    p->in.min_host_mhz = 1000; /* a stand-in for the readiness check; step_connect sizes */
    rc = rs_resolve(&p->in, &p->res, err);
    if (rc != VMOP_OK)
        return rc;
    p->si.vm = r->vm;
    p->si.rs = &p->res;
    if (!p->res.ready) {
        p->si.kind = ST_NOT_READY;
        p->write = 1;
        return VMOP_OK;
    }
    *stop = 0;
    return VMOP_OK;
}

/* vCenter, and the class sizing that needs the placement cluster's lowest host CPU MHz. */
static vmop_rc step_connect(struct rctx *r, struct pass *p, int *stop, struct vmop_err *err)
{
    int64_t mhz = 0;
    vmop_rc rc;

    *stop = 1;
    rc = connect_vc(r, err);
    if (rc == VMOP_OK)
        rc = vs_min_host_mhz(vmc_conn_sync(r->conn), r->binding->resource_pool, &mhz, err);
    if (rc == VMOP_OK)
        rs_size(&p->in, &p->res, mhz);
    if (rc != VMOP_OK) {
        st_reason_for(rc, err->fault, p->reason, sizeof(p->reason));
        p->si.kind = ST_FAILED;
        p->si.fail_step = VM_STEP_CONNECT;
        p->si.fail_reason = p->reason;
        p->si.fail_message = err->msg;
        event(r, "Warning", "VCenterUnavailable", "%s%s%s", err->fault, err->fault[0] ? ": " : "",
              err->msg);
        if (rc == VMOP_E_AUTH && r->conn)
            vcenters_forget(r->c->vcs, vc_conn_endpoint(r->conn));
        p->write = 1;
        return rc;
    }
    if (!p->res.ready) {
        p->si.kind = ST_NOT_READY;
        p->write = 1;
        return VMOP_OK;
    }
    *stop = 0;
    return VMOP_OK;
}

/* vmsync makes vCenter match; its outcome becomes the status input. An ownership conflict
 * stops here (reported by report_conflict). */
static vmop_rc step_apply(struct rctx *r, struct pass *p, int *stop, struct vmop_err *err)
{
    struct vs_outcome *out = &p->out;
    struct st_input *si = &p->si;
    const char *marker;
    int slot, untracked;

    *stop = 0;
    /* a VM never created takes a create slot (pacing.h); none free: looked at again soon */
    slot = !r->vm->status_unique_id || !*r->vm->status_unique_id;
    if (slot && !pacing_create_begin(&r->c->pace, r->key, &untracked)) {
        *stop = 1; /* it waits in line: pacing_next_waiter() queues it again */
        r->requeue_ms = untracked ? VMC_CREATE_WAIT_MS : 0;
        return VMOP_OK;
    }
    {
        /* power tasks are heard through the endpoint's feed (held for the call, as a delete's) */
        struct vcfeed *f = feed_hold(r->c, r->endpoint ? r->endpoint->name : NULL);
        struct vs_events ev = {ev_mark, ev_wait_power, ev_wait_gone, f, NULL, ev_expect};
        /* no status.uniqueID yet: the VM a held create made, if any, is where to look (pacing.h) */
        const char *uid = r->vm->status_unique_id;
        r->hold_left_ms = pacing_hold_get(&r->c->pace, r->key, vmop_mono_ms(), r->held_moref,
                                          sizeof(r->held_moref));
        if (!uid || !*uid)
            uid = r->held_moref;
        p->arc = vs_apply(vmc_conn_sync(r->conn), &p->res.desired, uid, f ? &ev : NULL, out, err);
        vcfeed_release(f);
        r->seen_ms = p->arc == VMOP_OK ? out->observed_ms : 0;
    }
    if (slot)
        pacing_create_done(&r->c->pace);
    if (p->arc != VMOP_OK && out->conflict) {
        *stop = 1;
        p->write = 1;
        return report_conflict(r, si, out, err);
    }
    to_st_obs(r->vm, &out->obs, &p->so);
    /* a failed lookup/observe says nothing about the VM: keep the observed fields as they are */
    si->obs = p->arc != VMOP_OK &&
                      (out->failed_step == VM_STEP_LOOKUP || out->failed_step == VM_STEP_OBSERVE)
                  ? NULL
                  : &p->so;
    si->needs_power_cycle = out->needs_power_cycle;
    si->power_unreachable = out->power_unreachable;
    /* nextRestartTime: restarted now, or marked in vCenter by a restart a crash kept from
     * being recorded (plan.h PL_KEY_LAST_RESTART) */
    marker = out->obs.vm ? vim_vm_extra_config(out->obs.vm, PL_KEY_LAST_RESTART) : NULL;
    if (did(out, VM_STEP_RESTART) ||
        (r->vm->next_restart_time && marker && !strcmp(marker, r->vm->next_restart_time)))
        si->last_restart_time = r->vm->next_restart_time;
    if (out->created)
        p->res.desired.class_held = 0; /* a new VM gets the class as it is now */
    pl_fields_str(out->deferred_fields & ~PL_F_HARDWARE, p->pending, sizeof(p->pending));
    si->pending_fields = p->pending;
    if (out->disk_not_shrunk) {
        snprintf(p->field_note, sizeof(p->field_note),
                 "spec.advanced.bootDiskCapacity (%lld MiB) is below the boot disk's %lld MiB "
                 "(disks are never shrunk)",
                 (long long)p->res.desired.boot_disk_mb, out->disk_kb / 1024);
        si->field_note = p->field_note;
    }
    si->probe = eval_probe(r, &p->so, &out->obs, p->probe_msg, sizeof(p->probe_msg));
    si->probe_message = p->probe_msg;
    probe_transition_event(r, si->probe, p->probe_msg);
    return VMOP_OK;
}

/* What vmsync did (or found), as events (reconcile_rules.h) and log lines; a failure also
 * stops the reconcile, with the status written. */
static vmop_rc step_events(struct rctx *r, struct pass *p, int *stop, struct vmop_err *err)
{
    const struct vs_outcome *out = &p->out;
    struct st_input *si = &p->si;
    struct rr_apply_facts f;
    struct rr_event ev[RR_MAX_EVENTS];
    size_t n;

    *stop = 0;
    if (p->arc != VMOP_OK) {
        *stop = 1;
        p->write = 1;
        st_reason_for(p->arc, out->fault[0] ? out->fault : err->fault, p->reason,
                      sizeof(p->reason));
        si->kind = ST_FAILED;
        si->fail_step = out->failed_step;
        si->fail_reason = p->reason;
        si->fail_message = out->message[0] ? out->message : err->msg;
    }
    memset(&f, 0, sizeof(f));
    f.did = out->did;
    f.created = out->created;
    f.adopted = out->adopted;
    f.present = p->so.present;
    f.unique_id = p->so.unique_id;
    f.prior_unique_id = r->vm->status_unique_id;
    f.foreign_ref = out->foreign.found ? out->foreign.ref : NULL;
    f.foreign_why = out->foreign.why;
    f.done = out->done;
    f.restart_how = out->restart_how;
    f.restart_mode = pl_mode_str(pl_mode_from_api(r->vm->restart_mode));
    f.restart_for = r->vm->next_restart_time;
    f.want = r->vm->power_state;
    f.was = r->vm->status_power_state;
    f.spec_unchanged = !class_changed(r->vm) && observed_generation(r->vm) == r->vm->generation;
    f.failed_step = p->arc != VMOP_OK ? si->fail_step : VM_STEP_NONE;
    f.fail_reason = si->fail_reason;
    f.fail_message = si->fail_message;
    n = rr_apply_events(&f, ev, RR_MAX_EVENTS);
    for (size_t i = 0; i < n; i++) {
        event(r, ev[i].type, ev[i].reason, "%s", ev[i].message);
        if (ev[i].drift)
            __atomic_add_fetch(&r->c->drifts, 1, __ATOMIC_RELAXED);
    }
    if (out->adopted)
        vlog(VLOG_INFO, LOGGER, r->key, "adopted %s (added %s)", f.unique_id ? f.unique_id : "",
             OWN_KEY_UID);
    if (out->created) {
        __atomic_add_fetch(&r->c->creates, 1, __ATOMIC_RELAXED);
        vlog(VLOG_INFO, LOGGER, r->key, "created %s", f.unique_id ? f.unique_id : "");
    }
    if (out->done[0])
        vlog(VLOG_INFO, LOGGER, r->key, "done: %s", out->done);
    return p->arc;
}

/* The one status write of a reconcile, from p->si. After a failure the status says what failed
 * and the failure stays the result; a status that cannot be written then is logged. */
static vmop_rc finish_status(struct rctx *r, struct pass *p, vmop_rc rc, struct vmop_err *err)
{
    struct vmop_err e2 = {0};
    if (rc == VMOP_OK)
        return write_status(r, &p->si, err);
    if (write_status(r, &p->si, &e2) != VMOP_OK)
        vlog_err(VLOG_WARN, LOGGER, r->key, &e2, "status not written");
    return rc;
}

/* The facts the requeue and status-hold rules read (reconcile_rules.h). */
static void requeue_facts(struct rctx *r, const struct pass *p, struct rr_requeue_facts *f)
{
    const struct st_obs *so = &p->so;
    int live, watching;

    feed_state(r->c, r->endpoint ? r->endpoint->name : NULL, so->present ? so->unique_id : NULL,
               &live, &watching);
    memset(f, 0, sizeof(*f));
    f->present = so->present;
    f->powered_on = so->power == API_POWER_ON;
    f->network_disabled = r->vm->network_disabled;
    f->has_ip = so->primary_ip4 && *so->primary_ip4;
    f->probe_pending = p->si.probe == ST_PROBE_NOT_READY || p->si.probe == ST_PROBE_UNKNOWN;
    f->feed_live = live;
    f->feed_holds_vm = watching || !so->unique_id;
    f->created = p->out.created;
    f->changed = p->out.changed;
    f->hold_left_ms = r->hold_left_ms;
    f->unwatched_ms = unwatched_requeue_ms(p->obj);
}

/* A status write held for the IP: the feed is asked to tell of the VM soon (vcfeed_expect), so
 * that its coalescing pause does not hold the IP back; within_ms 0: no longer (written). */
static void expect_news(struct rctx *r, const char *moref_value, long within_ms)
{
    struct vcfeed *f = feed_hold(r->c, r->endpoint ? r->endpoint->name : NULL);
    if (f) {
        vcfeed_expect(f, moref_value, "guest.ipAddress", within_ms, VCFEED_EXPECT_QUEUE);
        vcfeed_release(f);
    }
}

/* When to look again: wait (bounded) for what vCenter does on its own, the guest's IP. With a
 * live change feed for this vCenter the IP arrives as an event (guest.ipAddress): no short
 * requeue. A status write held for the IP (hold_ms > 0) is written by then at the latest. */
static void step_requeue(struct rctx *r, const struct rr_requeue_facts *f, long hold_ms)
{
    r->requeue_ms = rr_requeue_ms(f, VMC_WAIT_DELAY_MS, VMC_WAIT_MAX_MS);
    if (hold_ms > 0 && (r->requeue_ms <= 0 || r->requeue_ms > hold_ms))
        r->requeue_ms = hold_ms;
}

static vmop_rc do_reconcile(struct rctx *r, struct vmop_err *err)
{
    static vmop_rc (*const steps[])(struct rctx *, struct pass *, int *, struct vmop_err *) = {
        step_pools, step_resolve, step_connect, step_apply, step_events,
    };
    struct pass p;
    struct rr_requeue_facts facts = {0}; /* set when the steps went through */
    int stop = 0;
    long held_ms = 0;
    vmop_rc rc;

    memset(&p, 0, sizeof(p));
    p.obj = hold(r, kube_informer_get(r->c->inf[I_VM].inf, r->key));
    if (!p.obj)
        return VMOP_OK; /* deleted */
    if (pacing_own_pending(&r->c->pace, r->key, kube_obj_rv(p.obj), vmop_mono_ms(),
                           VMC_OWN_WRITE_WAIT_MS)) {
        /* the cache is older than this process's last status write (pacing.h): in a moment */
        __atomic_add_fetch(&r->c->own_waits, 1, __ATOMIC_RELAXED);
        r->requeue_ms = VMC_OWN_WRITE_RETRY_MS;
        return VMOP_OK;
    }
    rc = api_vm_parse(p.obj, &r->vm, err);
    if (rc != VMOP_OK)
        return rc;
    snprintf(r->ns, sizeof(r->ns), "%s", r->vm->namespace_ ? r->vm->namespace_ : "");
    r->involved = involved_of(p.obj);

    rc = step_lifecycle(r, &p, &stop, err);
    if (rc == VMOP_OK && !stop)
        rc = step_defaults(r, &stop, err);
    for (size_t i = 0; rc == VMOP_OK && !stop && i < sizeof(steps) / sizeof(steps[0]); i++)
        rc = steps[i](r, &p, &stop, err);
    if (rc == VMOP_OK && !stop) {
        p.si.kind = ST_SYNCED;
        p.write = 1;
        requeue_facts(r, &p, &facts);
        held_ms = rr_status_hold_ms(&facts, VMC_STATUS_HOLD_MS);
    }
    if (held_ms > 0) {
        p.write = 0; /* the IP's event, or the requeue after hold ms, writes it (step_requeue) */
        __atomic_add_fetch(&r->c->status_held, 1, __ATOMIC_RELAXED);
        /* the expectation first: news that comes before it is queued as any other, news that
         * comes after it as expected; none is held back before it is expected */
        expect_news(r, p.so.unique_id, held_ms);
        if (facts.created)
            pacing_hold_note(&r->c->pace, r->key, p.so.unique_id, vmop_mono_ms() + held_ms);
    }
    if (p.write)
        rc = finish_status(r, &p, rc, err);
    if (p.si.kind == ST_FAILED)
        r->fail_step = p.si.fail_step;
    /* a class held back (resolve.h) keeps the annotation of the class version that sized it */
    if (rc == VMOP_OK && !stop && p.so.present && !p.out.needs_power_cycle &&
        !p.res.desired.class_held)
        rc = record_resized_class(r, err);
    if (rc == VMOP_OK && !stop)
        step_requeue(r, &facts, held_ms);
    vs_outcome_free(&p.out);
    rs_result_free(&p.res);
    return rc;
}

vmop_rc vmc_reconcile(struct vmc *c, const char *key, struct vmop_err *err)
{
    struct rctx r;
    vmop_rc rc;
    char *next;
    int64_t t0 = vmop_mono_ms();
    if (c->o.may_act && !c->o.may_act(c->o.may_act_ud)) {
        /* paused past the lease renewal: the elector either renews (and this runs again) or the
         * process exits; meanwhile it changes nothing */
        vlog(VLOG_DEBUG, LOGGER, key, "not reconciling: leadership not confirmed");
        kube_queue_add_after(c->q, key, 1000);
        return VMOP_OK;
    }
    memset(&r, 0, sizeof(r));
    r.c = c;
    r.key = key;
    __atomic_add_fetch(&c->reconciles, 1, __ATOMIC_RELAXED);
    rc = do_reconcile(&r, err);
    metrics_std_reconcile(c->o.metrics, "virtualmachine",
                          rc != VMOP_OK      ? METRICS_RESULT_ERROR
                          : r.requeue_ms > 0 ? METRICS_RESULT_REQUEUE
                                             : METRICS_RESULT_SUCCESS,
                          (double)(vmop_mono_ms() - t0) / 1000.0);
    if (rc == VMOP_OK && r.seen_ms > 0)
        /* this pass read the VM and decided when to look again (step_requeue): the wake-ups asked
         * for before that read (3 s after a create the feed had not seen yet, a retry, a change
         * the feed heard) are superseded; those asked for since are kept */
        kube_queue_cancel_after(c->q, key, r.seen_ms);
    if (rc == VMOP_OK && r.requeue_ms > 0)
        kube_queue_add_after(c->q, key, r.requeue_ms);
    if (rc != VMOP_OK) {
        __atomic_add_fetch(&c->failures, 1, __ATOMIC_RELAXED);
        /* the one log line of a failure: where the retry is decided */
        vlog_err(rc == VMOP_E_CONFLICT ? VLOG_DEBUG : VLOG_WARN, LOGGER, key, err,
                 "%s failed; retrying with backoff",
                 r.fail_step != VM_STEP_NONE ? vm_step_str(r.fail_step) : "reconcile");
    }
    next = pacing_next_waiter(&c->pace); /* a slot is free: the first VM waiting for one */
    if (next) {
        kube_queue_add(c->q, next);
        free(next);
    }
    vc_conn_put(r.conn);
    api_class_free(r.cls);
    api_image_free(r.image);
    api_endpoint_free(r.endpoint);
    api_binding_free(r.binding);
    api_vm_free(r.vm);
    cJSON_Delete(r.involved);
    for (size_t i = 0; i < r.n_held; i++)
        kube_obj_unref(r.held[i]);
    return rc;
}

static vmop_rc sync_attach(struct vim_client *client, void *arg, void **ret, struct vmop_err *err)
{
    struct vs_ctx *ctx = NULL;
    vmop_rc rc = vs_ctx_new(client, arg, &ctx, err);
    *ret = ctx;
    return rc;
}

static void sync_detach(void *state)
{
    vs_ctx_free(state);
}

struct vc_attachment vmc_sync_attachment(const struct vs_options *o)
{
    return (struct vc_attachment){.attach = sync_attach, .detach = sync_detach, .arg = (void *)o};
}

struct vs_ctx *vmc_conn_sync(const struct vc_conn *c)
{
    return vc_conn_attached(c);
}
