/* change_feed.c: the event-driven vCenter change feed (owner: vcfeed). See change_feed.h.
 *
 * Owns: the per-container worker threads and their watches, the per-container value-hash cache
 * (pure: vcfeed_cache_*), the moref -> vmservice.namespacedName map kept in that cache, the "seen"
 * counts behind vcfeed_watching, the retry backoff and the feed's counters. Both tables are
 * vmop_maps (api/base/vmop_map.h); this file has no hash table of its own. Not here: what a key
 * means (the controller's map and enqueue callbacks) and the WaitForUpdatesEx protocol
 * (vimclient's vim_watch_*).
 *
 * Locks: f->admin serializes vcfeed_set_containers/vcfeed_stop/vcfeed_free. f->lock guards the
 * stats, each worker's `stop` flag and published `watch` pointer, and is the mutex of f->cond
 * (backoff waits). A worker's cache is touched only by its own thread (and by the code that frees
 * the worker after joining it). Callbacks are called without any lock held.
 */
#include "change_feed.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmop_clock.h"
#include "vmop_hash.h"
#include "vmop_map.h"

#define DEFAULT_MAX_WAIT_S      30
#define DEFAULT_BACKOFF_INITIAL 500L
#define DEFAULT_BACKOFF_MAX     30000L
#define DEFAULT_COALESCE_MS     200L
#define DEFAULT_MAX_ENTRIES     ((size_t)1 << 20)
#define SWEEP_CHUNK             64 /* stale entries removed per walk when memory is short */
#define CONTAINER_SPEC_MAX      4096

/* Slot values: 0 = never seen; H_COMPLEX = a complex (or absent) value, which a read cannot
 * compare; string hashes are never 0 or 1. */
#define H_UNSEEN  0ULL
#define H_COMPLEX 1ULL

static const char *const default_props[] = {
    "runtime.powerState",
    "summary.runtime.powerState",
    "summary.runtime.connectionState",
    "summary.runtime.host",
    "guest.ipAddress",
    "guest.toolsRunningStatus",
    "guestHeartbeatStatus",
    "config.hardware.numCPU",
    "config.hardware.memoryMB",
    "config.cpuAllocation",
    "config.memoryAllocation",
    "config.hardware.device",
    "config.changeVersion",
    "config.instanceUuid",
    VCFEED_NSNAME_PATH,
    "name",
    "resourcePool",
    "parent",
    NULL,
};

const char *const *vcfeed_default_props(void)
{
    return default_props;
}

/* ---- pure parts ---------------------------------------------------------------------------- */

long vcfeed_backoff_ms(unsigned attempt, long initial_ms, long cap_ms, unsigned rnd)
{
    long d;

    if (initial_ms < 1)
        initial_ms = 1;
    if (cap_ms < initial_ms)
        cap_ms = initial_ms;
    d = initial_ms;
    for (unsigned i = 0; i < attempt && d < cap_ms; i++)
        d = d > cap_ms / 2 ? cap_ms : d * 2;
    if (d > cap_ms)
        d = cap_ms;
    /* Jitter into [d/2, d] so that many feeds do not retry in lockstep. */
    d = d / 2 + (long)(rnd % (unsigned long)(d - d / 2 + 1));
    return d < 1 ? 1 : d;
}

static int dns_chars_ok(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.'))
            return 0;
    }
    /* Must start and end with an alphanumeric character. */
    return s[0] != '-' && s[0] != '.' && s[n - 1] != '-' && s[n - 1] != '.';
}

int vcfeed_nsname_valid(const char *v)
{
    const char *slash;
    size_t len;

    if (!v)
        return 0;
    len = strnlen(v, VCFEED_NSNAME_MAX + 1);
    if (len > VCFEED_NSNAME_MAX)
        return 0;
    slash = strchr(v, '/');
    if (!slash || strchr(slash + 1, '/'))
        return 0;
    if ((size_t)(slash - v) > 63 || strlen(slash + 1) > 253)
        return 0;
    return dns_chars_ok(v, (size_t)(slash - v)) && dns_chars_ok(slash + 1, strlen(slash + 1));
}

vmop_rc vcfeed_parse_container(const char *spec, struct vim_moref *ret_ref, struct vmop_err *err)
{
    struct vim_moref ref;
    const char *colon;
    char type[VIM_MOREF_TYPE_MAX];

    if (!spec || !*spec || !ret_ref)
        return vmop_fail(err, VMOP_E_INVALID, "vcfeed: empty container");
    if (spec[0] == '/')
        return vmop_fail(err, VMOP_E_INVALID, "vcfeed: container '%.200s' is a path", spec);
    colon = strchr(spec, ':');
    if (!colon) {
        if (vim_moref_set(&ref, "Folder", spec) != VMOP_OK)
            return vmop_fail(err, VMOP_E_INVALID, "vcfeed: bad container '%.200s'", spec);
    } else {
        size_t tl = (size_t)(colon - spec);
        if (tl == 0 || tl >= sizeof(type))
            return vmop_fail(err, VMOP_E_INVALID, "vcfeed: bad container type in '%.200s'", spec);
        memcpy(type, spec, tl);
        type[tl] = '\0';
        if (vim_moref_set(&ref, type, colon + 1) != VMOP_OK)
            return vmop_fail(err, VMOP_E_INVALID, "vcfeed: bad container '%.200s'", spec);
    }
    *ret_ref = ref;
    return VMOP_OK;
}

/* FNV-1a, 64 bit; never H_UNSEEN or H_COMPLEX. Only for hashing property VALUES into a cache
 * entry's slots (a compact fingerprint to compare with the next update); it buckets no table:
 * the tables are vmop_maps, which hash their keys themselves. */
static uint64_t hash_str(const char *s)
{
    uint64_t h = vmop_fnv1a_str(VMOP_FNV_OFFSET, s);
    return h <= H_COMPLEX ? h + 2 : h;
}

/* One VM in a cache: the value of the cache's map under the VM's moref value (owned by the map,
 * freed through entry_free). */
struct vcfeed_entry {
    uint64_t epoch;                /* full set in which it was last seen */
    char *nsname;                  /* owned; NULL = none known */
    int name_known;                /* 1 = nsname is the VM's: from the watched path, else looked
                                    * up since the last identity/changeVersion change */
    uint64_t *slots;               /* owned; one value hash per watched path */
    char ref[VIM_MOREF_VALUE_MAX]; /* its key again: still readable once the map let go of it */
};

static void entry_free(struct vcfeed_entry *e)
{
    if (!e)
        return;
    free(e->nsname);
    free(e->slots);
    free(e);
}

/* The map's val_free. */
static void entry_free_cb(void *v)
{
    entry_free(v);
}

/* Borrowed entry of a VM, or NULL. */
static struct vcfeed_entry *entry_get(const struct vcfeed_cache *c, const char *ref)
{
    return vmop_map_get(&c->map, ref);
}

static int prop_index(const struct vcfeed_cache *c, const char *path)
{
    for (size_t i = 0; i < c->n_props; i++)
        if (strcmp(c->props[i], path) == 0)
            return (int)i;
    return -1;
}

vmop_rc vcfeed_cache_init(struct vcfeed_cache *c, const char *const *props, size_t max_entries,
                          struct vmop_err *err)
{
    size_t n = 0;

    memset(c, 0, sizeof(*c));
    if (!props)
        return vmop_fail(err, VMOP_E_INVALID, "vcfeed: no properties");
    while (props[n])
        n++;
    if (n == 0 || n > VCFEED_MAX_PROPS)
        return vmop_fail(err, VMOP_E_INVALID, "vcfeed: %zu properties (1 to %d allowed)", n,
                         VCFEED_MAX_PROPS);
    vmop_map_init(&c->map, entry_free_cb);
    c->max_entries = max_entries ? max_entries : DEFAULT_MAX_ENTRIES;
    c->props = props;
    c->n_props = n;
    c->epoch = 1;
    c->i_change_version = prop_index(c, "config.changeVersion");
    c->i_instance_uuid = prop_index(c, "config.instanceUuid");
    c->i_nsname = prop_index(c, VCFEED_NSNAME_PATH);
    return VMOP_OK;
}

vmop_rc vcfeed_cache_set_match(struct vcfeed_cache *c, const char *const *paths,
                               struct vmop_err *err)
{
    size_t n = 0;
    int idx[VCFEED_MAX_MATCH];

    for (; paths && paths[n]; n++) {
        if (n >= VCFEED_MAX_MATCH)
            return vmop_fail(err, VMOP_E_INVALID, "vcfeed: over %d match paths", VCFEED_MAX_MATCH);
        if ((idx[n] = prop_index(c, paths[n])) < 0)
            return vmop_fail(err, VMOP_E_INVALID, "vcfeed: match path %s is not watched", paths[n]);
    }
    memcpy(c->i_match, idx, n * sizeof(idx[0]));
    c->n_match = n;
    return VMOP_OK;
}

uint64_t vcfeed_match_hash(const char *const *values, size_t n)
{
    uint64_t h = VMOP_FNV_OFFSET;
    for (size_t i = 0; i < n; i++)
        h = vmop_fnv1a_u64(h, values[i] ? hash_str(values[i]) : H_COMPLEX);
    return h;
}

int vcfeed_cache_match(const struct vcfeed_cache *c, const char *ref, uint64_t *ret_hash)
{
    const struct vcfeed_entry *e = entry_get(c, ref);
    uint64_t h = VMOP_FNV_OFFSET;

    if (!e || c->n_match == 0)
        return 0;
    for (size_t i = 0; i < c->n_match; i++) {
        uint64_t v = e->slots[c->i_match[i]];
        if (v == H_UNSEEN || v == H_COMPLEX)
            return 0;
        h = vmop_fnv1a_u64(h, v);
    }
    *ret_hash = h;
    return 1;
}

void vcfeed_cache_free(struct vcfeed_cache *c)
{
    if (!c)
        return;
    vmop_map_clear(&c->map); /* every entry through entry_free */
    memset(c, 0, sizeof(*c));
}

void vcfeed_cache_begin_full(struct vcfeed_cache *c)
{
    c->epoch++;
}

vmop_rc vcfeed_cache_apply(struct vcfeed_cache *c, const struct vim_update *u,
                           struct vcfeed_change *ret_change, struct vmop_err *err)
{
    struct vcfeed_change ch = {0};
    struct vcfeed_entry *e;
    int is_new = 0, cv_changed = 0, name_given = 0;
    const char *name_val = NULL;

    /* props is set by vcfeed_cache_init and cleared by vcfeed_cache_free. */
    if (!c || !c->props || !u || !ret_change || !u->ref.value[0])
        return vmop_fail(err, VMOP_E_INVALID, "vcfeed: bad update");
    e = entry_get(c, u->ref.value);
    if (u->kind == VIM_UPDATE_LEAVE) {
        ch.changed = 1;
        ch.left = 1;
        if (e) {
            ch.removed = 1;
            vmop_map_take(&c->map, u->ref.value); /* e is ours now */
            ch.old_nsname = e->nsname;
            e->nsname = NULL;
            entry_free(e);
        }
        *ret_change = ch;
        return VMOP_OK;
    }
    if (!e) {
        if (c->map.len >= c->max_entries)
            return vmop_fail(err, VMOP_E_TOOBIG, "vcfeed: more than %zu VMs in one container",
                             c->max_entries);
        e = calloc(1, sizeof(*e));
        if (!e)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        e->slots = calloc(c->n_props, sizeof(*e->slots));
        if (!e->slots) {
            free(e);
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        }
        /* ref.value is NUL-terminated within VIM_MOREF_VALUE_MAX by construction. */
        memcpy(e->ref, u->ref.value, sizeof(e->ref));
        e->ref[sizeof(e->ref) - 1] = '\0';
        if (vmop_map_put(&c->map, e->ref, e) != VMOP_OK) { /* not taken: still ours */
            entry_free(e);
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        }
        is_new = 1;
        ch.changed = 1;
        ch.entered = 1;
    }
    e->epoch = c->epoch;
    for (size_t j = 0; j < u->n; j++) {
        const char *path = u->paths[j], *val = u->values ? u->values[j] : NULL;
        uint64_t h = val ? hash_str(val) : H_COMPLEX, old;
        int idx = path ? prop_index(c, path) : -1;

        if (idx < 0) {
            /* A path we did not ask for (a sub-path on some servers): cannot be compared. */
            if (u->kind == VIM_UPDATE_MODIFY)
                ch.changed = 1;
            continue;
        }
        old = e->slots[idx];
        if (u->kind == VIM_UPDATE_MODIFY && !val)
            ch.changed = 1; /* complex value or removal: the server only reports real changes */
        else if (old != h)
            ch.changed = 1;
        if (!is_new && idx == c->i_instance_uuid && old != H_UNSEEN && old != h)
            ch.replaced = 1;
        if (!is_new && idx == c->i_change_version && old != h)
            cv_changed = 1;
        if (idx == c->i_nsname) {
            name_given = 1;
            name_val = val;
        }
        e->slots[idx] = h;
    }
    if (ch.replaced) {
        ch.changed = 1;
        ch.old_nsname = e->nsname;
        e->nsname = NULL;
        e->name_known = 0;
    } else if (cv_changed && c->i_nsname < 0) {
        e->name_known = 0; /* ExtraConfig may have changed: read again when needed */
    }
    if (c->i_nsname >= 0 && (name_given || u->kind == VIM_UPDATE_ENTER || ch.replaced)) {
        /* the name is watched: the update says it, or (an ENTER, which carries every watched
         * path that is set, or another VM under the moref) that the VM has none */
        char *copy = NULL;
        if (name_given && name_val && vcfeed_nsname_valid(name_val) && !(copy = strdup(name_val))) {
            free(ch.old_nsname);
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        }
        free(e->nsname);
        e->nsname = copy;
        e->name_known = 1;
    }
    *ret_change = ch;
    return VMOP_OK;
}

typedef void (*gone_fn)(const char *ref, const char *nsname, void *user);

/* Removes e from the cache, tells gone, frees e: the order the sweep has always had. */
static void sweep_one(struct vcfeed_cache *c, struct vcfeed_entry *e, gone_fn gone, void *user)
{
    vmop_map_take(&c->map, e->ref); /* returns e, now ours */
    if (gone)
        gone(e->ref, e->nsname, user);
    entry_free(e);
}

/* vmop_map allows no removal while iterating, so the stale entries are collected in one walk and
 * removed after it. The list holds borrowed entry pointers, sized by a counting walk first (at
 * most max_entries of them, owned here and freed before returning). Out of memory for the list:
 * the stale entries are collected SWEEP_CHUNK at a time in a stack array instead, walking the map
 * again after each chunk. Slower (O(entries * stale / SWEEP_CHUNK)) but it needs no memory and
 * still removes exactly the stale entries and reports each through gone; skipping the sweep
 * would lose the VMs that went. */
size_t vcfeed_cache_sweep(struct vcfeed_cache *c, gone_fn gone, void *user)
{
    struct vcfeed_entry *chunk[SWEEP_CHUNK], **buf;
    struct vmop_map_iter it;
    struct vmop_map_entry *me;
    size_t n_stale = 0, removed = 0, cap;

    if (!c)
        return 0;
    for (me = vmop_map_first(&c->map, &it); me; me = vmop_map_next(&c->map, &it))
        if (((const struct vcfeed_entry *)me->val)->epoch != c->epoch)
            n_stale++;
    if (n_stale == 0)
        return 0;
    buf = calloc(n_stale, sizeof(*buf));
    cap = n_stale;
    if (!buf) {
        buf = chunk;
        cap = SWEEP_CHUNK;
    }
    while (removed < n_stale) {
        size_t k = 0;
        for (me = vmop_map_first(&c->map, &it); me && k < cap; me = vmop_map_next(&c->map, &it)) {
            struct vcfeed_entry *e = me->val;
            if (e->epoch != c->epoch)
                buf[k++] = e;
        }
        for (size_t i = 0; i < k; i++)
            sweep_one(c, buf[i], gone, user);
        removed += k;
        if (k == 0) /* cannot happen (nothing else touches the cache meanwhile): no endless loop */
            break;
    }
    if (buf != chunk)
        free(buf);
    return removed;
}

int vcfeed_cache_name(const struct vcfeed_cache *c, const char *ref, const char **ret_nsname)
{
    struct vcfeed_entry *e = entry_get(c, ref);

    if (!e)
        return -1;
    *ret_nsname = e->nsname;
    return e->name_known ? 1 : 0;
}

vmop_rc vcfeed_cache_set_name(struct vcfeed_cache *c, const char *ref, const char *nsname,
                              struct vmop_err *err)
{
    struct vcfeed_entry *e = entry_get(c, ref);
    char *copy = NULL;

    if (!e)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "vcfeed: VM %.100s not in the cache", ref);
    if (nsname) {
        copy = strdup(nsname);
        if (!copy)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    }
    free(e->nsname);
    e->nsname = copy;
    e->name_known = 1;
    return VMOP_OK;
}

/* ---- the feed ------------------------------------------------------------------------------- */

struct vcfeed_worker {
    struct vcfeed *feed;
    struct vcfeed_worker *next;
    char *container; /* owned spec */
    pthread_t thread;
    int started;
    int stop;                /* guarded by feed->lock */
    struct vim_watch *watch; /* guarded by feed->lock; freed only by the worker */
    struct vcfeed_cache cache;
    unsigned seed;   /* jitter */
    int suppressing; /* the current batch's changes are not emitted (worker thread only) */
};

struct vcfeed {
    struct vim_client *client;
    char **props; /* owned, NULL-terminated */
    char **match; /* owned, NULL-terminated: the match paths (vcfeed_vm_matches) */
    size_t n_match;
    vcfeed_map_fn map;
    vcfeed_enqueue_fn enqueue;
    vcfeed_enqueue_fn enqueue_expected; /* NULL: enqueue */
    void *user;
    int max_wait_s;
    long backoff_initial_ms, backoff_max_ms;
    long coalesce_ms; /* 0: none */
    int skip_initial;

    pthread_mutex_t admin;
    pthread_mutex_t lock;
    pthread_cond_t cond;           /* CLOCK_MONOTONIC */
    struct vcfeed_worker *workers; /* guarded by admin */
    int stopped;                   /* guarded by admin */
    struct vcfeed_stats stats;     /* guarded by lock */
    /* The VMs the feed's watches hold: moref value -> malloc'd unsigned, the number of watches
     * holding it (a VM may sit in two watched folders for a moment while it moves); never 0 (the
     * key goes with its last watch). Values owned by the map (val_free = free). Kept in step with
     * the workers' caches; read by vcfeed_watching from other threads. Guarded by seen_mu, a leaf
     * lock: nothing else is locked or called while it is held. */
    pthread_mutex_t seen_mu;
    struct vmop_map seen;
    /* Also under seen_mu, for vcfeed_wait_power and vcfeed_wait_gone: seq counts what the feed
     * heard (a power state, a VM gone, a watch lost, the stop); seen_cv (CLOCK_MONOTONIC) is
     * signalled with each. */
    uint64_t seq;
    uint64_t drop_seq; /* seq at the last seen_drop (a watch went, not a VM) */
    pthread_cond_t seen_cv;
    /* Also under seen_mu: the news callers expect (vcfeed_expect), moref value -> struct expect
     * (owned). Few entries (VMs whose news a reconcile waits for), so it is walked freely; a VM no
     * watch holds yet (just created) may be in it: its entry into the feed is the news. */
    struct vmop_map expects;
    /* Under lock: bumped by vcfeed_expect, so that a worker in its coalescing pause looks again at
     * how long to pause (f->cond is broadcast with it). */
    uint64_t expect_gen;
    int refs; /* atomic: vcfeed_new's reference plus vcfeed_hold's; the last release frees */
};

/* What f->seen holds per VM. */
struct seen_vm {
    unsigned n;                 /* watches holding it; never 0 */
    enum vim_power_state power; /* runtime.powerState last heard (UNKNOWN: not yet) */
    uint64_t power_seq;         /* f->seq when it was heard */
    uint64_t match;             /* vcfeed_cache_match() after the last update heard */
    int match_known;            /* 0: match is not set (a match path not heard, or unset) */
};

/* What f->expects holds per VM: news of it at f->props[prop] (-1: at any path) until until_ms;
 * queue: it goes to enqueue_expected (VCFEED_EXPECT_QUEUE). */
struct expect {
    int64_t until_ms;
    int prop;
    int queue;
};

/* News of the VM at f->props[prop] is expected until `until` (under seen_mu). A later deadline or
 * another path widens the one set. Returns 1 when the VM was not expected before: the caller
 * then wakes the workers (expect_wake, without seen_mu). Out of memory: nothing is recorded (the
 * news then comes after the usual pause). */
static int expect_set_locked(struct vcfeed *f, const char *ref, int prop, int64_t until, int queue)
{
    struct expect *e = vmop_map_get(&f->expects, ref);

    if (e) {
        if (e->prop != prop)
            e->prop = -1;
        if (until > e->until_ms)
            e->until_ms = until;
        e->queue |= queue;
        return 0;
    }
    if (!(e = malloc(sizeof(*e))))
        return 0;
    e->until_ms = until;
    e->prop = prop;
    e->queue = queue;
    if (vmop_map_put(&f->expects, ref, e) != VMOP_OK) {
        free(e);
        return 0;
    }
    return 1;
}

/* Whether update u brings news the VM is expected for; the expectation is met then (under
 * seen_mu). Returns 2 when the news is to be queued at once (VCFEED_EXPECT_QUEUE), 1 when it was
 * only expected, 0 when not. */
static int expect_take_locked(struct vcfeed *f, const struct vim_update *u)
{
    const struct expect *e = vmop_map_get(&f->expects, u->ref.value);
    int met = e && e->prop < 0;

    for (size_t j = 0; e && !met && j < u->n; j++)
        met = u->paths[j] && !strcmp(u->paths[j], f->props[e->prop]);
    if (!met)
        return 0;
    met = e->queue ? 2 : 1;
    vmop_map_del(&f->expects, u->ref.value);
    return met;
}

/* The index of path in f->props (the caches' prop_index, for the feed), or -1. */
static int feed_prop_index(const struct vcfeed *f, const char *path)
{
    for (int i = 0; path && f->props[i]; i++)
        if (!strcmp(f->props[i], path))
            return i;
    return -1;
}

/* Something a waiter may want happened (under seen_mu). */
static void seen_tick_locked(struct vcfeed *f)
{
    f->seq++;
    pthread_cond_broadcast(&f->seen_cv);
}

static void seen_tick(struct vcfeed *f)
{
    pthread_mutex_lock(&f->seen_mu);
    seen_tick_locked(f);
    pthread_mutex_unlock(&f->seen_mu);
}

/* A watch holds the VM now. Out of memory: it is not recorded, so vcfeed_watching says 0 and
 * the caller keeps checking on its own, which is the safe side. */
static void seen_add(struct vcfeed *f, const char *ref)
{
    struct seen_vm *n;

    pthread_mutex_lock(&f->seen_mu);
    n = vmop_map_get(&f->seen, ref);
    if (n) {
        n->n++;
    } else if ((n = calloc(1, sizeof(*n))) != NULL) {
        n->n = 1;
        if (vmop_map_put(&f->seen, ref, n) != VMOP_OK)
            free(n); /* not taken: still ours */
    }
    pthread_mutex_unlock(&f->seen_mu);
}

static void seen_del_locked(struct vcfeed *f, const char *ref)
{
    struct seen_vm *n = vmop_map_get(&f->seen, ref);
    if (n && --n->n == 0) {
        vmop_map_del(&f->expects, ref); /* it left: nothing more will come */
        vmop_map_del(&f->seen, ref);    /* frees n */
        seen_tick_locked(f);
    }
}

/* A watch no longer holds the VM: vCenter said it left. */
static void seen_del(struct vcfeed *f, const char *ref)
{
    pthread_mutex_lock(&f->seen_mu);
    seen_del_locked(f, ref);
    pthread_mutex_unlock(&f->seen_mu);
}

/* A watch no longer holds the VM because the watch itself goes (its container no longer watched,
 * the feed stopping): the VM did not leave. Recorded in drop_seq, so that vcfeed_wait_gone does
 * not take it for a VM that left. */
static void seen_drop(struct vcfeed *f, const char *ref)
{
    pthread_mutex_lock(&f->seen_mu);
    seen_del_locked(f, ref);
    seen_tick_locked(f);
    f->drop_seq = f->seq;
    pthread_mutex_unlock(&f->seen_mu);
}

/* What an update of a VM the feed holds said: its runtime.powerState, when it has one, and the
 * values at the match paths as the worker's cache holds them now (after the update). Returns 1
 * when it was news a caller expected to be queued at once (vcfeed_expect, VCFEED_EXPECT_QUEUE). */
static int seen_heard(struct vcfeed *f, const struct vcfeed_cache *cache,
                      const struct vim_update *u)
{
    enum vim_power_state p = VIM_POWER_UNKNOWN;
    struct seen_vm *n;
    uint64_t match = 0;
    int match_known = vcfeed_cache_match(cache, u->ref.value, &match), met;

    for (size_t j = 0; j < u->n; j++) {
        const char *v = u->values ? u->values[j] : NULL;
        if (!u->paths[j] || strcmp(u->paths[j], "runtime.powerState") != 0 || !v)
            continue;
        p = !strcmp(v, "poweredOn")    ? VIM_POWER_ON
            : !strcmp(v, "poweredOff") ? VIM_POWER_OFF
            : !strcmp(v, "suspended")  ? VIM_POWER_SUSPENDED
                                       : VIM_POWER_UNKNOWN;
        break;
    }
    pthread_mutex_lock(&f->seen_mu);
    met = expect_take_locked(f, u) == 2; /* whoever asked is told at once (enqueue_expected) */
    n = vmop_map_get(&f->seen, u->ref.value);
    if (n) {
        n->match = match;
        n->match_known = match_known;
        if (p != VIM_POWER_UNKNOWN) {
            n->power = p;
            seen_tick_locked(f);
            n->power_seq = f->seq;
        }
    }
    pthread_mutex_unlock(&f->seen_mu);
    return met;
}

/* A worker in its coalescing pause looks again at how long to pause (not under seen_mu). */
static void expect_wake(struct vcfeed *f)
{
    pthread_mutex_lock(&f->lock);
    f->expect_gen++;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
}

/* 1 when the feed is running and every watch of it is live. */
static int feed_live(struct vcfeed *f)
{
    int live;
    pthread_mutex_lock(&f->lock);
    live = f->stats.containers > 0 && f->stats.watches == f->stats.containers;
    pthread_mutex_unlock(&f->lock);
    return live;
}

int vcfeed_mark_vm(struct vcfeed *f, const char *moref_value, uint64_t *ret_mark)
{
    int held;

    if (!f || !moref_value || !moref_value[0] || !ret_mark)
        return 0;
    pthread_mutex_lock(&f->seen_mu);
    held = vmop_map_has(&f->seen, moref_value);
    *ret_mark = f->seq;
    pthread_mutex_unlock(&f->seen_mu);
    return held && feed_live(f);
}

/* The wait behind vcfeed_wait_power (gone 0: for the power state want) and vcfeed_wait_gone
 * (gone 1: for the VM to leave the feed). */
static int wait_heard(struct vcfeed *f, const char *moref_value, uint64_t mark, int gone,
                      enum vim_power_state want, long timeout_ms)
{
    int64_t deadline = vmop_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    int result = 0;

    if (!f || !moref_value || !moref_value[0])
        return -1;
    pthread_mutex_lock(&f->seen_mu);
    for (;;) {
        const struct seen_vm *n = vmop_map_get(&f->seen, moref_value);
        uint64_t seq = f->seq;
        int64_t left = deadline - vmop_mono_ms();
        struct timespec until;
        if (!n) {
            /* it left the feed (destroyed, moved): what a gone wait waits for, unless a watch
             * went since the mark (the VM may only have been dropped with it); a power wait can
             * no longer be told */
            result = gone && f->drop_seq <= mark ? 1 : -1;
            break;
        }
        if (!gone && n->power_seq > mark && n->power == want) {
            /* heard: an expectation of it (vcfeed_expect, perhaps asked after it came) is met */
            vmop_map_del(&f->expects, moref_value);
            result = 1;
            break;
        }
        pthread_mutex_unlock(&f->seen_mu);
        if (!feed_live(f)) { /* f->lock is never taken under seen_mu */
            pthread_mutex_lock(&f->seen_mu);
            result = -1;
            break;
        }
        pthread_mutex_lock(&f->seen_mu);
        if (f->seq != seq)
            continue; /* heard something meanwhile: look again */
        if (left <= 0)
            break;
        vmop_mono_timespec(vmop_mono_ms() + left, &until);
        (void)pthread_cond_timedwait(&f->seen_cv, &f->seen_mu, &until);
    }
    pthread_mutex_unlock(&f->seen_mu);
    return result;
}

int vcfeed_wait_power(struct vcfeed *f, const char *moref_value, uint64_t mark,
                      enum vim_power_state want, long timeout_ms)
{
    return wait_heard(f, moref_value, mark, 0, want, timeout_ms);
}

int vcfeed_wait_gone(struct vcfeed *f, const char *moref_value, uint64_t mark, long timeout_ms)
{
    return wait_heard(f, moref_value, mark, 1, VIM_POWER_UNKNOWN, timeout_ms);
}

int vcfeed_vm_matches(struct vcfeed *f, const char *moref_value, const char *const *values,
                      size_t n, enum vim_power_state *ret_power)
{
    const struct seen_vm *sv;
    uint64_t want;
    int yes = 0;

    if (!f || !moref_value || !moref_value[0] || !values || !ret_power || f->n_match == 0 ||
        n != f->n_match)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!values[i])
            return 0;
    want = vcfeed_match_hash(values, n);
    pthread_mutex_lock(&f->seen_mu);
    sv = vmop_map_get(&f->seen, moref_value);
    if (sv && sv->match_known && sv->match == want && sv->power != VIM_POWER_UNKNOWN) {
        *ret_power = sv->power;
        yes = 1;
    }
    pthread_mutex_unlock(&f->seen_mu);
    return yes && feed_live(f); /* f->lock is never taken under seen_mu */
}

int vcfeed_expect(struct vcfeed *f, const char *moref_value, const char *path, long within_ms,
                  unsigned flags)
{
    int held, wake;

    if (!f || !moref_value || !moref_value[0])
        return 0;
    pthread_mutex_lock(&f->seen_mu);
    held = vmop_map_has(&f->seen, moref_value);
    if (within_ms <= 0)
        vmop_map_del(&f->expects, moref_value);
    wake = within_ms > 0 &&
           expect_set_locked(f, moref_value, feed_prop_index(f, path), vmop_mono_ms() + within_ms,
                             (flags & VCFEED_EXPECT_QUEUE) != 0);
    pthread_mutex_unlock(&f->seen_mu);
    if (wake)
        expect_wake(f);
    return held;
}

/* How many VMs' news is expected (vcfeed_expect) and not overdue; the lapsed expectations are
 * dropped on the way. */
static size_t expecting(struct vcfeed *f)
{
    int64_t now = vmop_mono_ms();
    size_t n_expected;

    pthread_mutex_lock(&f->seen_mu);
    for (;;) { /* no removal while walking: up to 8 lapsed entries a walk */
        char lapsed[8][VIM_MOREF_VALUE_MAX];
        size_t n = 0;
        struct vmop_map_iter it;
        for (struct vmop_map_entry *e = vmop_map_first(&f->expects, &it); e && n < 8;
             e = vmop_map_next(&f->expects, &it))
            if (((const struct expect *)e->val)->until_ms <= now)
                snprintf(lapsed[n++], sizeof(lapsed[0]), "%s", e->key);
        for (size_t i = 0; i < n; i++)
            vmop_map_del(&f->expects, lapsed[i]);
        if (n < 8)
            break;
    }
    n_expected = f->expects.len;
    pthread_mutex_unlock(&f->seen_mu);
    return n_expected;
}

int vcfeed_watching(struct vcfeed *f, const char *moref_value)
{
    int yes;

    if (!f || !moref_value || !moref_value[0])
        return 0;
    pthread_mutex_lock(&f->seen_mu);
    yes = vmop_map_has(&f->seen, moref_value);
    pthread_mutex_unlock(&f->seen_mu);
    return yes;
}

static void stat_add(struct vcfeed *f, uint64_t *field, uint64_t n)
{
    pthread_mutex_lock(&f->lock);
    *field += n;
    pthread_mutex_unlock(&f->lock);
}

static void stat_error(struct vcfeed *f, const struct vmop_err *e)
{
    pthread_mutex_lock(&f->lock);
    f->stats.errors++;
    f->stats.last_rc = e->rc ? e->rc : VMOP_E_INTERNAL;
    snprintf(f->stats.last_error, sizeof(f->stats.last_error), "%s", e->msg);
    pthread_mutex_unlock(&f->lock);
}

static int worker_stopping(struct vcfeed_worker *wk)
{
    int s;

    pthread_mutex_lock(&wk->feed->lock);
    s = wk->stop;
    pthread_mutex_unlock(&wk->feed->lock);
    return s;
}

/* Sleeps the backoff for `attempt`; returns 1 when the worker was told to stop. */
/* Waits ms or until the worker is told to stop; returns the stop flag. */
static int stoppable_wait(struct vcfeed_worker *wk, long ms)
{
    struct vcfeed *f = wk->feed;
    struct timespec until;
    int stop;

    vmop_mono_timespec(vmop_mono_ms() + ms, &until);
    pthread_mutex_lock(&f->lock);
    while (!wk->stop) {
        if (pthread_cond_timedwait(&f->cond, &f->lock, &until) == ETIMEDOUT)
            break;
    }
    stop = wk->stop;
    pthread_mutex_unlock(&f->lock);
    return stop;
}

/* The pause after an answer with changes (t0: when that WaitForUpdatesEx went out): until
 * coalesce_ms after t0; while news of n VMs is expected, until VCFEED_EXPECT_COALESCE_MS * n
 * after it, if that is sooner. One VM waited for is asked about at once; a burst (many VMs
 * waited for, their changes coming in every answer) keeps the usual pace, since asking sooner
 * would cost a WaitForUpdatesEx per change and each answer serves every waiter. A
 * vcfeed_expect meanwhile makes it look again. Returns 1 when the worker was told to stop. */
static int coalesce_wait(struct vcfeed_worker *wk, int64_t t0)
{
    struct vcfeed *f = wk->feed;
    uint64_t gen;
    int stop;

    pthread_mutex_lock(&f->lock);
    gen = f->expect_gen;
    pthread_mutex_unlock(&f->lock);
    for (;;) {
        size_t n = expecting(f);
        long pause = n && n < (size_t)(f->coalesce_ms / VCFEED_EXPECT_COALESCE_MS)
                         ? VCFEED_EXPECT_COALESCE_MS * (long)n
                         : f->coalesce_ms;
        int64_t until_ms = t0 + pause;
        struct timespec until;

        if (vmop_mono_ms() >= until_ms)
            return worker_stopping(wk);
        vmop_mono_timespec(until_ms, &until);
        pthread_mutex_lock(&f->lock);
        while (!wk->stop && f->expect_gen == gen) {
            if (pthread_cond_timedwait(&f->cond, &f->lock, &until) == ETIMEDOUT)
                break;
        }
        stop = wk->stop;
        gen = f->expect_gen;
        pthread_mutex_unlock(&f->lock);
        if (stop)
            return 1;
    }
}

static int backoff_wait(struct vcfeed_worker *wk, unsigned attempt)
{
    struct vcfeed *f = wk->feed;

    return stoppable_wait(wk, vcfeed_backoff_ms(attempt, f->backoff_initial_ms, f->backoff_max_ms,
                                                (unsigned)rand_r(&wk->seed)));
}

static char *map_key(struct vcfeed *f, const struct vim_moref *ref, const char *nsname)
{
    if (f->map)
        return f->map(ref, nsname, f->user);
    return nsname ? strdup(nsname) : NULL;
}

/* Hands key (freed here) to the caller; expected: the change was news a caller waited for
 * (vcfeed_expect with VCFEED_EXPECT_QUEUE), handed to enqueue_expected when there is one. */
static void emit_as(struct vcfeed *f, char *key, int expected)
{
    if (!key) {
        stat_add(f, &f->stats.dropped, 1);
        return;
    }
    if (expected && f->enqueue_expected)
        f->enqueue_expected(key, f->user);
    else
        f->enqueue(key, f->user);
    free(key);
    stat_add(f, &f->stats.enqueued, 1);
}

static void emit(struct vcfeed *f, char *key)
{
    emit_as(f, key, 0);
}

/* Reads the VM's vmservice.namespacedName and records it (NULL when it has none or is gone). */
static void learn_name(struct vcfeed_worker *wk, const struct vim_moref *ref)
{
    struct vcfeed *f = wk->feed;
    struct vmop_err err = {0};
    struct vim_vm *vm = NULL;
    const char *v = NULL;
    vmop_rc rc;

    stat_add(f, &f->stats.name_reads, 1);
    rc = vim_vm_get(f->client, ref, &vm, &err);
    if (rc == VMOP_OK) {
        v = vim_vm_extra_config(vm, VCFEED_EXTRA_KEY);
        if (v && !vcfeed_nsname_valid(v))
            v = NULL;
    } else if (rc != VMOP_E_NOT_FOUND) {
        stat_error(f, &err); /* stays unknown: tried again on its next change */
        goto out;
    }
    vmop_err_clear(&err);
    if (vcfeed_cache_set_name(&wk->cache, ref->value, v, &err) != VMOP_OK)
        stat_error(f, &err);
out:
    vim_vm_free(vm);
}

/* A VM that changed and still exists: map it (reading its name if the map needs it). */
static void emit_current(struct vcfeed_worker *wk, const struct vim_moref *ref, int expected)
{
    struct vcfeed *f = wk->feed;
    const char *name = NULL;
    int state = vcfeed_cache_name(&wk->cache, ref->value, &name);
    char *key = map_key(f, ref, name);

    if (!key && state == 0) {
        learn_name(wk, ref);
        if (vcfeed_cache_name(&wk->cache, ref->value, &name) == 1)
            key = map_key(f, ref, name);
    }
    emit_as(f, key, expected);
}

static void gone_cb(const char *refval, const char *nsname, void *user)
{
    struct vcfeed_worker *wk = user;
    struct vim_moref ref;

    seen_del(wk->feed, refval);
    if (wk->suppressing || vim_moref_set(&ref, "VirtualMachine", refval) != VMOP_OK)
        return;
    emit(wk->feed, map_key(wk->feed, &ref, nsname));
}

/* One batch. A full set (the state of every VM in the container) starts with begin and, as a
 * large set comes in pages, may end in a later batch (end): only then are the VMs it did not name
 * gone. suppress: the set's changes are not enqueued (skip_initial). */
static void process_batch(struct vcfeed_worker *wk, const struct vim_update_batch *b, int begin,
                          int end, int suppress)
{
    struct vcfeed *f = wk->feed;

    if (begin) {
        vcfeed_cache_begin_full(&wk->cache);
        stat_add(f, &f->stats.resyncs, 1);
    }
    if (b->n)
        stat_add(f, &f->stats.batches, 1);
    stat_add(f, &f->stats.updates, b->n);
    for (size_t i = 0; i < b->n; i++) {
        const struct vim_update *u = &b->items[i];
        struct vcfeed_change ch = {0};
        struct vmop_err err = {0};
        int expected = 0;

        if (vcfeed_cache_apply(&wk->cache, u, &ch, &err) != VMOP_OK) {
            stat_error(f, &err);
            continue;
        }
        if (ch.entered)
            seen_add(f, u->ref.value);
        else if (ch.removed)
            seen_del(f, u->ref.value);
        if (!ch.left)
            expected = seen_heard(f, &wk->cache, u);
        if (!ch.changed || suppress) {
            stat_add(f, &f->stats.dropped, 1);
        } else if (ch.left) {
            emit(f, map_key(f, &u->ref, ch.old_nsname));
        } else {
            if (ch.replaced && ch.old_nsname)
                emit(f, map_key(f, &u->ref, ch.old_nsname));
            emit_current(wk, &u->ref, expected);
        }
        free(ch.old_nsname);
    }
    if (end) {
        wk->suppressing = suppress;
        vcfeed_cache_sweep(&wk->cache, gone_cb, wk);
        wk->suppressing = 0;
    }
}

static int all_enter(const struct vim_update_batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->items[i].kind != VIM_UPDATE_ENTER)
            return 0;
    return 1;
}

static uint64_t client_logins(struct vim_client *c)
{
    struct vim_stats st;

    vim_client_stats(c, &st);
    return st.logins;
}

static vmop_rc open_watch(struct vcfeed_worker *wk, struct vim_watch **ret_watch,
                          struct vmop_err *err)
{
    struct vcfeed *f = wk->feed;
    struct vim_moref ref;
    vmop_rc rc;

    if (wk->container[0] == '/')
        rc = vim_find_by_path(f->client, wk->container, NULL, &ref, err);
    else
        rc = vcfeed_parse_container(wk->container, &ref, err);
    if (rc != VMOP_OK)
        return rc;
    return vim_watch_new(f->client, &ref, (const char *const *)f->props, ret_watch, err);
}

static void *worker_main(void *arg)
{
    struct vcfeed_worker *wk = arg;
    struct vcfeed *f = wk->feed;
    unsigned attempt = 0;
    int failed_before = 0, first_set = 1;

    while (!worker_stopping(wk)) {
        struct vmop_err err = {0};
        struct vim_watch *w = NULL;
        uint64_t logins_seen;
        int full = 1, in_set = 0, set_suppress = 0, stop;

        if (open_watch(wk, &w, &err) != VMOP_OK) {
            stat_error(f, &err);
            failed_before = 1;
            if (backoff_wait(wk, attempt++))
                break;
            continue;
        }
        pthread_mutex_lock(&f->lock);
        stop = wk->stop;
        if (!stop) {
            wk->watch = w;
            f->stats.watches++;
            if (failed_before)
                f->stats.restarts++;
        }
        pthread_mutex_unlock(&f->lock);
        if (stop) {
            vim_watch_free(w);
            break;
        }
        failed_before = 0;
        logins_seen = client_logins(f->client);
        for (;;) {
            struct vim_update_batch b = {0};
            uint64_t logins;
            int64_t t0 = vmop_mono_ms();
            vmop_rc rc;

            vmop_err_clear(&err);
            rc = vim_watch_next(w, f->max_wait_s, &b, &err);
            if (rc == VMOP_E_CANCELED) {
                if (worker_stopping(wk) || backoff_wait(wk, 0))
                    break;
                continue;
            }
            if (rc != VMOP_OK) {
                stat_error(f, &err);
                failed_before = 1;
                break;
            }
            attempt = 0;
            stat_add(f, &f->stats.waits, 1);
            /* vimclient rebuilds the watch after a re-login and then answers the full state: an
             * all-ENTER batch after a login is taken as a resync. */
            logins = client_logins(f->client);
            if (!full && logins != logins_seen && b.n && all_enter(&b))
                full = 1;
            logins_seen = logins;
            if (full) {
                in_set = 1;
                set_suppress = first_set && f->skip_initial;
            }
            /* The set ends with its first batch that is not truncated. */
            if (b.n || full || in_set)
                process_batch(wk, &b, full, in_set && !b.truncated, in_set && set_suppress);
            if (in_set && !b.truncated) {
                in_set = 0;
                first_set = 0;
            }
            /* A server that answers "nothing" at once instead of waiting must not make this a
             * busy loop. */
            if (!b.n && !full && f->max_wait_s >= 2 && vmop_mono_ms() - t0 < 1000 &&
                backoff_wait(wk, 0)) {
                vim_update_batch_free(&b);
                break;
            }
            /* Changes come in bursts (a create is about 25 of them): let the next ones gather. */
            if (b.n && !b.truncated && f->coalesce_ms > 0 && coalesce_wait(wk, t0)) {
                vim_update_batch_free(&b);
                break;
            }
            full = 0;
            vim_update_batch_free(&b);
        }
        pthread_mutex_lock(&f->lock);
        wk->watch = NULL;
        f->stats.watches--;
        pthread_mutex_unlock(&f->lock);
        seen_tick(f); /* a waiter on this watch's VMs stops trusting it */
        vim_watch_free(w);
        if (worker_stopping(wk) || backoff_wait(wk, attempt++))
            break;
    }
    return NULL;
}

static void worker_free(struct vcfeed_worker *wk)
{
    struct vmop_map_iter it;

    if (!wk)
        return;
    /* Its watch is gone. (seen_del changes f->seen, not the map walked here.) A worker whose
     * cache was never initialised has a zeroed, empty map. */
    for (struct vmop_map_entry *me = vmop_map_first(&wk->cache.map, &it); me;
         me = vmop_map_next(&wk->cache.map, &it))
        seen_drop(wk->feed, me->key);
    vcfeed_cache_free(&wk->cache);
    free(wk->container);
    free(wk);
}

static vmop_rc worker_new(struct vcfeed *f, const char *spec, struct vcfeed_worker **ret_wk,
                          struct vmop_err *err)
{
    struct vcfeed_worker *wk = calloc(1, sizeof(*wk));
    vmop_rc rc;

    if (!wk)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    wk->feed = f;
    wk->seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)wk;
    wk->container = strdup(spec);
    if (!wk->container) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    rc = vcfeed_cache_init(&wk->cache, (const char *const *)f->props, 0, err);
    if (rc == VMOP_OK)
        rc = vcfeed_cache_set_match(&wk->cache, (const char *const *)f->match, err);
    if (rc != VMOP_OK)
        goto out;
    *ret_wk = wk;
    wk = NULL;
out:
    worker_free(wk);
    return rc;
}

/* Tells every worker in the list to stop (cancelling its wait), then joins and frees them. */
static void workers_stop(struct vcfeed *f, struct vcfeed_worker *list)
{
    pthread_mutex_lock(&f->lock);
    for (struct vcfeed_worker *wk = list; wk; wk = wk->next) {
        wk->stop = 1;
        if (wk->watch)
            vim_watch_cancel(wk->watch);
    }
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->lock);
    while (list) {
        struct vcfeed_worker *next = list->next;
        if (list->started)
            pthread_join(list->thread, NULL);
        worker_free(list);
        list = next;
    }
}

static vmop_rc check_containers(const char *const *containers, size_t *ret_n, struct vmop_err *err)
{
    size_t n = 0;

    for (; containers && containers[n]; n++) {
        struct vim_moref ref;
        if (n >= VCFEED_MAX_CONTAINERS)
            return vmop_fail(err, VMOP_E_TOOBIG, "vcfeed: more than %d containers",
                             VCFEED_MAX_CONTAINERS);
        if (!containers[n][0] || strnlen(containers[n], CONTAINER_SPEC_MAX) >= CONTAINER_SPEC_MAX)
            return vmop_fail(err, VMOP_E_INVALID, "vcfeed: empty or too long container");
        if (containers[n][0] != '/' && vcfeed_parse_container(containers[n], &ref, err) != VMOP_OK)
            return VMOP_E_INVALID;
    }
    *ret_n = n;
    return VMOP_OK;
}

vmop_rc vcfeed_set_containers(struct vcfeed *f, const char *const *containers, struct vmop_err *err)
{
    struct vcfeed_worker *keep = NULL, *added = NULL, *old, **tail;
    size_t n;
    vmop_rc rc;

    if (!f)
        return vmop_fail(err, VMOP_E_INVALID, "vcfeed_set_containers: no feed");
    rc = check_containers(containers, &n, err);
    if (rc != VMOP_OK)
        return rc;
    pthread_mutex_lock(&f->admin);
    if (f->stopped)
        goto out;
    old = f->workers;
    f->workers = NULL;
    /* Move the workers that stay to `keep`; build new ones for the rest. */
    for (size_t i = 0; i < n; i++) {
        struct vcfeed_worker **pp = &old, *wk = NULL;
        int dup = 0;
        for (struct vcfeed_worker *k = keep; k; k = k->next)
            dup |= strcmp(k->container, containers[i]) == 0;
        for (struct vcfeed_worker *k = added; k; k = k->next)
            dup |= strcmp(k->container, containers[i]) == 0;
        if (dup)
            continue;
        while (*pp && strcmp((*pp)->container, containers[i]) != 0)
            pp = &(*pp)->next;
        if (*pp) {
            wk = *pp;
            *pp = wk->next;
            wk->next = keep;
            keep = wk;
            continue;
        }
        rc = worker_new(f, containers[i], &wk, err);
        if (rc != VMOP_OK)
            break;
        wk->next = added;
        added = wk;
    }
    if (rc != VMOP_OK) {
        /* Nothing changes: put the old list back together. */
        tail = &keep;
        while (*tail)
            tail = &(*tail)->next;
        *tail = old;
        f->workers = keep;
        workers_stop(f, added);
        goto out;
    }
    workers_stop(f, old);
    for (struct vcfeed_worker *wk = added; wk; wk = wk->next) {
        if (pthread_create(&wk->thread, NULL, worker_main, wk) != 0) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "vcfeed: cannot start a thread");
            break;
        }
        wk->started = 1;
    }
    /* Workers that could not start are dropped; the rest run. */
    tail = &keep;
    while (*tail)
        tail = &(*tail)->next;
    *tail = added;
    for (struct vcfeed_worker **pp = &keep; *pp;) {
        struct vcfeed_worker *wk = *pp;
        if (!wk->started) {
            *pp = wk->next;
            worker_free(wk);
        } else {
            pp = &wk->next;
        }
    }
    f->workers = keep;
    n = 0;
    for (struct vcfeed_worker *wk = keep; wk; wk = wk->next)
        n++;
    pthread_mutex_lock(&f->lock);
    f->stats.containers = (unsigned)n;
    pthread_mutex_unlock(&f->lock);
out:
    pthread_mutex_unlock(&f->admin);
    return rc;
}

void vcfeed_stop(struct vcfeed *f)
{
    struct vcfeed_worker *list;

    if (!f)
        return;
    pthread_mutex_lock(&f->admin);
    f->stopped = 1;
    list = f->workers;
    f->workers = NULL;
    workers_stop(f, list);
    pthread_mutex_lock(&f->lock);
    f->stats.containers = 0;
    pthread_mutex_unlock(&f->lock);
    pthread_mutex_unlock(&f->admin);
    seen_tick(f);
}

void vcfeed_hold(struct vcfeed *f)
{
    if (f)
        __atomic_add_fetch(&f->refs, 1, __ATOMIC_ACQ_REL);
}

void vcfeed_release(struct vcfeed *f)
{
    if (!f || __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    vcfeed_stop(f); /* stopped already unless vcfeed_free was never called */
    for (size_t i = 0; f->props && f->props[i]; i++)
        free(f->props[i]);
    free(f->props);
    for (size_t i = 0; f->match && f->match[i]; i++)
        free(f->match[i]);
    free(f->match);
    vmop_map_clear(&f->seen); /* normally empty: every worker is freed */
    vmop_map_clear(&f->expects);
    pthread_cond_destroy(&f->cond);
    pthread_cond_destroy(&f->seen_cv);
    pthread_mutex_destroy(&f->seen_mu);
    pthread_mutex_destroy(&f->lock);
    pthread_mutex_destroy(&f->admin);
    free(f);
}

void vcfeed_free(struct vcfeed *f)
{
    if (!f)
        return;
    vcfeed_stop(f);
    vcfeed_release(f);
}

/* f->match from opts.match_props: each one of f->props, at most VCFEED_MAX_MATCH. */
static vmop_rc copy_match(struct vcfeed *f, const char *const *match, struct vmop_err *err)
{
    size_t n = 0;

    for (; match && match[n]; n++) {
        size_t i = 0;
        while (f->props[i] && strcmp(f->props[i], match[n]) != 0)
            i++;
        if (n >= VCFEED_MAX_MATCH || !f->props[i])
            return vmop_fail(err, VMOP_E_INVALID,
                             "vcfeed_new: match path %s is not watched, or over %d of them",
                             match[n], VCFEED_MAX_MATCH);
    }
    f->match = calloc(n + 1, sizeof(*f->match));
    if (!f->match)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (!(f->match[i] = strdup(match[i])))
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    f->n_match = n;
    return VMOP_OK;
}

vmop_rc vcfeed_new(const struct vcfeed_opts *o, struct vcfeed **ret_feed, struct vmop_err *err)
{
    const char *const *props;
    struct vcfeed *f = NULL;
    pthread_condattr_t ca;
    size_t n = 0, nc;
    vmop_rc rc;

    if (!o || !o->client || !o->enqueue || !ret_feed)
        return vmop_fail(err, VMOP_E_INVALID, "vcfeed_new: client and enqueue callback needed");
    rc = check_containers(o->containers, &nc, err);
    if (rc != VMOP_OK)
        return rc;
    props = o->props ? o->props : default_props;
    for (; props[n]; n++)
        if (n >= VCFEED_MAX_PROPS || !props[n][0])
            return vmop_fail(err, VMOP_E_INVALID, "vcfeed_new: empty path or over %d paths",
                             VCFEED_MAX_PROPS);
    if (n == 0)
        return vmop_fail(err, VMOP_E_INVALID, "vcfeed_new: no property paths");
    f = calloc(1, sizeof(*f));
    if (!f)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    pthread_mutex_init(&f->admin, NULL);
    pthread_mutex_init(&f->lock, NULL);
    pthread_mutex_init(&f->seen_mu, NULL);
    vmop_map_init(&f->seen, free);
    vmop_map_init(&f->expects, free);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&f->cond, &ca);
    pthread_cond_init(&f->seen_cv, &ca);
    pthread_condattr_destroy(&ca);
    f->refs = 1;
    f->client = o->client;
    f->map = o->map;
    f->enqueue = o->enqueue;
    f->enqueue_expected = o->enqueue_expected;
    f->user = o->user;
    f->max_wait_s = o->max_wait_s > 0 ? o->max_wait_s : DEFAULT_MAX_WAIT_S;
    f->backoff_initial_ms =
        o->backoff_initial_ms > 0 ? o->backoff_initial_ms : DEFAULT_BACKOFF_INITIAL;
    f->backoff_max_ms = o->backoff_max_ms > 0 ? o->backoff_max_ms : DEFAULT_BACKOFF_MAX;
    f->coalesce_ms = o->coalesce_ms == 0  ? DEFAULT_COALESCE_MS
                     : o->coalesce_ms < 0 ? 0
                                          : o->coalesce_ms;
    f->skip_initial = o->skip_initial;
    f->props = calloc(n + 1, sizeof(*f->props));
    if (!f->props) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        f->props[i] = strdup(props[i]);
        if (!f->props[i]) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
            goto out;
        }
    }
    rc = copy_match(f, o->match_props, err);
    if (rc == VMOP_OK)
        rc = vcfeed_set_containers(f, o->containers, err);
    if (rc != VMOP_OK)
        goto out;
    *ret_feed = f;
    f = NULL;
out:
    vcfeed_free(f);
    return rc;
}

void vcfeed_stats(struct vcfeed *f, struct vcfeed_stats *ret_stats)
{
    if (!f || !ret_stats)
        return;
    pthread_mutex_lock(&f->lock);
    *ret_stats = f->stats;
    pthread_mutex_unlock(&f->lock);
}
