/* change_feed.h: the event-driven vCenter change feed (owner: vcfeed).
 *
 * A feed watches every VirtualMachine under a set of containers (namespace folders) with one
 * vim_watch (ContainerView + own PropertyCollector + WaitForUpdatesEx) per container, each on its
 * own background thread. Every change is compared with a small per-VM cache of value hashes (no-op
 * changes and resyncs after a session expiry are dropped), mapped to a "namespace/name" key and
 * handed to an enqueue callback. A VM that leaves (destroyed, moved away, or missing from a full
 * resync) is enqueued too.
 *
 * Mapping: the map callback gets the VM's moref and, when the feed knows it, the VM's
 * vmservice.namespacedName ExtraConfig value. The default properties watch that value itself
 * (VCFEED_NSNAME_PATH, a keyed ExtraConfig path), so a VM's ENTER says its name or that it has
 * none, and no read is needed. With properties that leave the path out, the feed learns the value
 * lazily: only when the map callback returns NULL for a VM it has not read yet does it read the VM
 * (vim_vm_get) once, and again only after the VM's config.changeVersion or config.instanceUuid
 * changes. Without a map callback the key is the namespacedName itself.
 *
 * Robustness: a failed watch (vCenter down, connection refused, protocol error) is dropped and
 * rebuilt after an exponential backoff (capped, jittered, interruptible); session expiry is handled
 * by vimclient, whose next batch is a full ENTER set: the feed treats that as a resync (VMs
 * missing from it are enqueued as gone). Every wait is bounded: a WaitForUpdatesEx by max_wait_s,
 * other vCenter calls by the client's timeout.
 *
 * Threads: callbacks run on the feed's threads, one per container, so they may run concurrently
 * and must be thread-safe; they must not call vcfeed_stop/vcfeed_set_containers/vcfeed_free. The
 * vcfeed_* functions may be called from any thread (not from the callbacks except vcfeed_stats).
 * Each waiting watch holds one of the client's pooled connections: size the client's
 * max_connections above the number of containers plus what other users need, or give the feed its
 * own client.
 */
#ifndef VMOP_CHANGE_FEED_H
#define VMOP_CHANGE_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "vimclient.h"
#include "vmop_err.h"
#include "vmop_map.h"

#define VCFEED_MAX_CONTAINERS 256
#define VCFEED_MAX_PROPS      64
#define VCFEED_MAX_MATCH      16  /* match_props: see vcfeed_vm_matches */
#define VCFEED_NSNAME_MAX     320 /* "namespace/name": 63 + 1 + 253, with room */
#define VCFEED_EXTRA_KEY      "vmservice.namespacedName"
/* The watched property path that carries it (an OptionValue, given by its value) */
#define VCFEED_NSNAME_PATH "config.extraConfig[\"" VCFEED_EXTRA_KEY "\"]"

/* Returns a malloc'd "namespace/name" key for a changed VM (the feed frees it), or NULL when the
 * VM is none of ours. nsname: the VM's vmservice.namespacedName if known, else NULL. */
typedef char *(*vcfeed_map_fn)(const struct vim_moref *vm, const char *nsname, void *user);
/* Queues key (borrowed for the call). */
typedef void (*vcfeed_enqueue_fn)(const char *key, void *user);

struct vcfeed_opts {
    struct vim_client *client;     /* borrowed; must outlive the feed */
    const char *const *containers; /* NULL-terminated; copied. Each: an inventory path
                                    * ("/DC0/vm/ns1"), "Type:value" ("Folder:group-v3") or a
                                    * bare Folder moref value ("group-v3"). May be empty. */
    const char *const *props;      /* NULL-terminated VM property paths; NULL = the defaults */
    vcfeed_map_fn map;             /* NULL: key = the namespacedName */
    vcfeed_enqueue_fn enqueue;     /* required */
    /* NULL, or called instead of enqueue for a change that was news a caller expected with
     * VCFEED_EXPECT_QUEUE (vcfeed_expect): the caller waits for it, so it may be queued without
     * the delay the caller gives other changes */
    vcfeed_enqueue_fn enqueue_expected;
    void *user;              /* passed to both callbacks */
    int max_wait_s;          /* WaitForUpdatesEx bound; 0 = 30 */
    long backoff_initial_ms; /* first retry delay after a failure; 0 = 500 */
    long backoff_max_ms;     /* cap; 0 = 30000 */
    int skip_initial;        /* 1: a new container's first ENTER set only fills the cache */
    /* After an answer with changes, the next WaitForUpdatesEx goes out no sooner than this many ms
     * after the previous one did: changes in between come in one answer (bounds the long polls of
     * a busy container to 1000 / coalesce_ms a second). 0 = 200; < 0 = none. */
    long coalesce_ms;
    /* NULL-terminated, at most VCFEED_MAX_MATCH, each one of props (or of the defaults): the
     * paths vcfeed_vm_matches() compares. NULL: none (it never matches). Copied. */
    const char *const *match_props;
};

/* The default watched paths (NULL-terminated, static): VM Operator's list without the noisy
 * guest.net, with config.changeVersion standing in for config.extraConfig, and
 * config.instanceUuid to notice a moref that now names another VM. */
const char *const *vcfeed_default_props(void);

struct vcfeed;

/* Validates opts, copies what it keeps and starts one thread per container. No vCenter call
 * happens here: a watch that cannot be built is retried in the background (see stats). *ret_feed:
 * release with vcfeed_free(). */
vmop_rc vcfeed_new(const struct vcfeed_opts *opts, struct vcfeed **ret_feed, struct vmop_err *err);

/* Replaces the watched containers (NULL-terminated list, copied). Containers in both lists keep
 * their watch and cache; removed ones are stopped; added ones start (their first ENTER set is
 * enqueued unless skip_initial). After vcfeed_stop() this only records the list. */
vmop_rc vcfeed_set_containers(struct vcfeed *f, const char *const *containers,
                              struct vmop_err *err);

/* Cancels every wait (vim_watch_cancel) and joins the threads. Prompt unless a thread is inside
 * another vCenter call (bounded by the client's timeout). Idempotent. */
void vcfeed_stop(struct vcfeed *f);
/* Stops, and frees once no vcfeed_hold() reference is left. NULL is fine. */
void vcfeed_free(struct vcfeed *f);

/* Counters for /metrics (monotonic except watches and last_error). */
struct vcfeed_stats {
    uint64_t updates;    /* object updates received from vCenter */
    uint64_t dropped;    /* updates that changed nothing we watch (or unmapped VMs) */
    uint64_t enqueued;   /* keys handed to the enqueue callback */
    uint64_t batches;    /* non-empty update batches */
    uint64_t waits;      /* WaitForUpdatesEx rounds completed (empty or not) */
    uint64_t resyncs;    /* full ENTER sets (first per watch, and after a session expiry) */
    uint64_t restarts;   /* watches rebuilt after a failure */
    uint64_t errors;     /* failed watch builds and waits, and failed name reads */
    uint64_t name_reads; /* vim_vm_get calls made to learn a namespacedName */
    unsigned watches;    /* containers with a live watch right now */
    unsigned containers; /* containers configured */
    vmop_rc last_rc;     /* VMOP_OK if no error yet */
    char last_error[VMOP_ERR_MSG_MAX]; /* message of the last error ("" if none); no secrets */
};
void vcfeed_stats(struct vcfeed *f, struct vcfeed_stats *ret_stats);

/* 1 when a watch of the feed holds the VM (moref value) right now: its ENTER was seen and no LEAVE
 * since. A VM created and destroyed between two WaitForUpdatesEx rounds is never reported by
 * vCenter (the property collector sends net changes only), so a caller that just created a VM
 * asks this before relying on the feed to tell it when the VM goes. */
int vcfeed_watching(struct vcfeed *f, const char *moref_value);

/* Asks for news of a VM soon: a caller has put something off until the feed tells it about the VM
 * (the VM controller holding a new VM's status write for the guest's IP). Until the feed hears a
 * change of the VM at path (a watched property path; NULL or not watched: at any path), or
 * within_ms pass, its pause after an answer with changes is VCFEED_EXPECT_COALESCE_MS per VM
 * whose news is expected, when that is less than coalesce_ms (one VM: 20 ms; a burst of ten
 * or more keeps the usual pace), and a pause under way is cut short. within_ms <= 0: the caller no
 * longer waits (it heard the news another way): the VM's expectation is dropped. vcfeed_wait_power
 * drops it when it hears the power state it waits for. A VM no watch holds yet (just created) may
 * be expected: its entry into the feed is news of every path. Returns 1 when a watch holds the VM.
 */
#define VCFEED_EXPECT_COALESCE_MS 20L
/* flags: the news goes to vcfeed_opts.enqueue_expected (a reconcile waits for it) instead of
 * enqueue (a waiter of vcfeed_wait_power hears it anyway) */
#define VCFEED_EXPECT_QUEUE 1u
int vcfeed_expect(struct vcfeed *f, const char *moref_value, const char *path, long within_ms,
                  unsigned flags);

/* Waiting for a change the caller made (vmsync's TrySoft delete: the guest's shutdown), without
 * reading the VM: vcfeed_mark_vm() right before the change, then vcfeed_wait_power(). The feed
 * counts what it hears; a power state heard after the mark is newer than the call that caused it
 * (the property collector reports the state at its answer, never an older one).
 * vcfeed_mark_vm: 1 when every watch of the feed is live and one holds the VM (*ret_mark: now);
 * else 0 (do not wait on the feed). */
int vcfeed_mark_vm(struct vcfeed *f, const char *moref_value, uint64_t *ret_mark);
/* Waits, at most timeout_ms, until the feed heard after mark that the VM's runtime.powerState is
 * want: 1. 0: not within timeout_ms. -1: the feed can no longer tell (a watch went down, the feed
 * stopped, the VM left it): the caller reads vCenter instead. */
int vcfeed_wait_power(struct vcfeed *f, const char *moref_value, uint64_t mark,
                      enum vim_power_state want, long timeout_ms);
/* Waits, at most timeout_ms, until the VM is no longer in any watch of the feed (vCenter reported
 * it left: destroyed, or moved out of every watched folder): 1. 0: not within timeout_ms. -1: the
 * feed can no longer tell (a watch went down, the feed stopped). mark as for vcfeed_wait_power:
 * taken while the feed held the VM, so a VM that left is one that left after the mark. */
int vcfeed_wait_gone(struct vcfeed *f, const char *moref_value, uint64_t mark, long timeout_ms);
/* 1 when the feed can vouch for the VM (moref value) without a read: every watch of it is live,
 * one holds the VM, the values it last heard at the match_props paths are values[0..n) (n: the
 * number of match_props; each value as vimclient gives it as text, never NULL), and it heard the
 * VM's runtime.powerState (*ret_power). Else 0: read vCenter. The values are what vCenter
 * reported at its last answer; a change made since then is not known yet (the same as a read
 * made just before the change). Values are compared by 64-bit hash. */
int vcfeed_vm_matches(struct vcfeed *f, const char *moref_value, const char *const *values,
                      size_t n, enum vim_power_state *ret_power);
/* A waiter's reference: vcfeed_hold() (while whoever frees the feed cannot free it yet, e.g.
 * under the lock that guards the pointer), vcfeed_release() after the last vcfeed_* call.
 * vcfeed_free() stops the feed at once (waiters get -1) and frees it at the last release. */
void vcfeed_hold(struct vcfeed *f);
void vcfeed_release(struct vcfeed *f);

/* ---- pure parts (exposed for unit tests) ----------------------------------------------------- */

/* Delay before retry number `attempt` (0-based): min(cap, initial * 2^attempt), then jittered
 * into [d/2, d] with rnd. Never below 1 ms. */
long vcfeed_backoff_ms(unsigned attempt, long initial_ms, long cap_ms, unsigned rnd);

/* Checks a vmservice.namespacedName value: "<namespace>/<name>", both non-empty, lower-case DNS
 * characters ([a-z0-9.-]), namespace at most 63, name at most 253. 1 if valid. */
int vcfeed_nsname_valid(const char *v);

/* Parses a container spec (see vcfeed_opts.containers) that is not an inventory path into a
 * moref. VMOP_E_INVALID if it does not parse. */
vmop_rc vcfeed_parse_container(const char *spec, struct vim_moref *ret_ref, struct vmop_err *err);

/* The per-container cache of last seen values (one entry per VM moref). */
struct vcfeed_entry;
struct vcfeed_cache {
    struct vmop_map map;      /* moref value -> struct vcfeed_entry *, owned by the map (freed
                               * through its val_free); map.len = number of VMs cached */
    size_t max_entries;       /* cap on map.len (0 at init = 1 << 20) */
    uint64_t epoch;           /* mark of the current full set */
    const char *const *props; /* borrowed; n_props of them */
    size_t n_props;
    int i_change_version;          /* index of config.changeVersion in props, or -1 */
    int i_instance_uuid;           /* index of config.instanceUuid in props, or -1 */
    int i_nsname;                  /* index of VCFEED_NSNAME_PATH in props, or -1 */
    int i_match[VCFEED_MAX_MATCH]; /* indexes in props of the match paths (vcfeed_cache_set_match)
                                    */
    size_t n_match;
};

/* What one update meant. */
struct vcfeed_change {
    int changed;      /* something we watch changed (or a new VM, or LEAVE) */
    int entered;      /* a VM new to the cache: an entry was added */
    int left;         /* LEAVE: the VM is gone (removed is 1 when it had an entry) */
    int removed;      /* an entry was removed */
    int replaced;     /* same moref, other VM (instanceUuid changed): old_nsname is the old VM's */
    char *old_nsname; /* for left/replaced: the name cached for the old VM (owned; free it) */
};

vmop_rc vcfeed_cache_init(struct vcfeed_cache *c, const char *const *props, size_t max_entries,
                          struct vmop_err *err);
void vcfeed_cache_free(struct vcfeed_cache *c);
/* Starts a full set: entries not seen until vcfeed_cache_sweep() are gone. */
void vcfeed_cache_begin_full(struct vcfeed_cache *c);
/* Applies one update. ret_change filled on success (free old_nsname). */
vmop_rc vcfeed_cache_apply(struct vcfeed_cache *c, const struct vim_update *u,
                           struct vcfeed_change *ret_change, struct vmop_err *err);
/* Removes the entries missing from the full set begun last: calls gone(moref value, cached name,
 * user) for each before removing it. Returns how many were removed. */
size_t vcfeed_cache_sweep(struct vcfeed_cache *c,
                          void (*gone)(const char *ref, const char *nsname, void *user),
                          void *user);
/* Cached name state of a VM: 1 = name looked up (*ret_nsname borrowed, may be NULL), 0 = not yet
 * looked up since its last identity/changeVersion change, -1 = unknown VM. */
int vcfeed_cache_name(const struct vcfeed_cache *c, const char *ref, const char **ret_nsname);
/* Sets the paths whose values vcfeed_cache_match() combines (NULL-terminated, each one of the
 * cache's props, at most VCFEED_MAX_MATCH; borrowed only for the call). */
vmop_rc vcfeed_cache_set_match(struct vcfeed_cache *c, const char *const *paths,
                               struct vmop_err *err);
/* The combined hash of the VM's last values at the match paths: 1 and *ret_hash, or 0 when the
 * VM is unknown, no match paths are set, or one of them was never heard or was heard unset or as
 * a complex value (such a VM matches no texts). */
int vcfeed_cache_match(const struct vcfeed_cache *c, const char *ref, uint64_t *ret_hash);
/* The same combination of values[0..n) (texts, never NULL). */
uint64_t vcfeed_match_hash(const char *const *values, size_t n);
/* Records a lookup result (nsname NULL = the VM has none). */
vmop_rc vcfeed_cache_set_name(struct vcfeed_cache *c, const char *ref, const char *nsname,
                              struct vmop_err *err);

#endif
