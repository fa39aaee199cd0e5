/* vmsync.h: the vSphere side of the VirtualMachine reconcile: observe, apply a plan, delete.
 *
 * Owns: finding a VM by identity (status.uniqueID, then instance UUID; never by name), turning a
 * vimclient read into the planner's observation, executing plans (plan.h) with vimclient, the
 * image cache used as clone source (clone_source.h), and the lowest host MHz of a placement
 * cluster. Knows nothing of Kubernetes beyond struct rs_desired (resolve.h) and what it returns.
 *
 * Crash safety: every VM is created by CloneVM_Task whose clone spec carries
 * config.instanceUuid and extraConfig vmservice.namespacedName and vmop.uid, so a VM exists only
 * with its identity and vmop's marks; before any create the VM is looked up by that identity. A
 * crash at any point followed by vs_apply() again finds and finishes the VM instead of creating a
 * second one.
 *
 * Ownership (operator/vm/ownership.h): a VM found by an identity (status.uniqueID, the instance
 * UUID) is acted on only when own_decide() says it is this resource's (or a legacy VM the
 * resource's status proves vmop made, which first gets the vmop.uid mark). Any other VM is foreign:
 * it is never returned as the observation, never changed, powered or destroyed, and no VM is
 * created in its place (struct vs_foreign says which VM and why). The identity of the resource, the
 * binding's datacenter and VM folder come from struct rs_desired (instance_uuid, namespaced_name,
 * resource_uid, datacenter, folder), for observe and delete as for apply.
 *
 * Threads: one struct vs_ctx per vCenter client, shared by every worker; calls for different VMs
 * may run in parallel (caches are locked; concurrent image-cache deploys of one item serialize).
 * Calls for the same VM must not run in parallel (the controller's queue gives that).
 *
 * Secrets: user data is read back from vCenter only to compare it; it is never logged or put in
 * messages, and buffers that held it are zeroed. There is no logging in this module at all.
 */
#ifndef VMOP_VMSYNC_H
#define VMOP_VMSYNC_H

#include <stddef.h>
#include <stdint.h>

#include "api_vm.h"
#include "plan.h"
#include "vm_step.h"
#include "resolve.h"
#include "vimclient.h"
#include "vmop_err.h"

struct vs_options {
    long soft_wait_ms;        /* how long Soft/TrySoft waits for the guest to shut down or go to
                               * standby before giving up (Soft) or going hard (TrySoft);
                               * 0 = 120000 */
    long lookup_ttl_s;        /* port group / datacenter lookups are cached this long; 0 = 60 */
    long mhz_ttl_s;           /* vs_min_host_mhz() results are cached this long; 0 = 300 */
    long storage_ttl_s;       /* the datastore chosen for a storage policy in a pool is cached
                               * this long (failures are not cached); 0 = 300 */
    const char *cache_folder; /* inventory path for image cache templates; NULL = the VM's folder.
                               * Copied. Names starting "vmop-image-" there belong to vmop. */
    /* The fence asked right before a VM is created: 0 = this process may not act now (its
     * leadership is not confirmed), and the create fails with VMOP_E_CANCELED. NULL: always. */
    int (*may_act)(void *ud);
    void *may_act_ud;
};

struct vs_ctx;
struct csrc_cache; /* clone_source.h */

/* client is borrowed: it must outlive the context. opts may be NULL (defaults). */
vmop_rc vs_ctx_new(struct vim_client *client, const struct vs_options *opts,
                   struct vs_ctx **ret_ctx, struct vmop_err *err);
void vs_ctx_free(struct vs_ctx *ctx); /* NULL is fine */
/* The context's image cache (borrowed; the collector clone_source_gc.h asks it which templates are
 * in use) and its cache folder option (NULL: each VM's folder). */
struct csrc_cache *vs_images(struct vs_ctx *ctx);
const char *vs_cache_folder(const struct vs_ctx *ctx);

/* ---- observation ------------------------------------------------------------------------------
 */

/* A VM that matched an identity of the resource but is not its own (ownership.h). */
#define VS_REASON_CONFLICT "OwnershipConflict" /* = OWN_REASON_CONFLICT */
struct vs_foreign {
    int found;            /* 1: such a VM exists */
    int by_instance_uuid; /* 1: spec.instanceUUID names it (nothing can be created); 0: only the
                           * status.uniqueID hint names it */
    char ref[VIM_MOREF_VALUE_MAX]; /* its moref value */
    char why[160];                 /* which mark fails (own_decide); never the VM's values */
};

struct vs_obs {
    int present;       /* 0: no VM of this resource (a foreign one may exist: see foreign) */
    int legacy;        /* the VM is ours by the legacy rule: it lacks the vmop.uid mark */
    struct vim_vm *vm; /* owned; NULL when absent. Everything vCenter showed */
    char *metadata;    /* decoded guestinfo.metadata, NULL when absent / not decodable */
    size_t metadata_len;
    char *userdata; /* decoded guestinfo.userdata: SECRET, compared only; zeroed on free */
    size_t userdata_len;
    struct vs_foreign foreign; /* set whether or not a VM of the resource was found */
};
/* Zeroes user data and frees; the struct is left absent. NULL is fine. */
void vs_obs_free(struct vs_obs *o);

/* Finds the VM of the resource d describes (d->instance_uuid, namespaced_name, resource_uid,
 * folder; see ownership.h): unique_id (the resource's status.uniqueID, a VM moref value such as
 * "vm-63", may be NULL/"") is used when it names a VM that is the resource's; else SearchIndex
 * FindByUuid(d->instance_uuid, instanceUuid=true) across vCenter (instance UUIDs are unique
 * there: a VM outside the binding's datacenter and folder is a conflict, not an absence). The VM
 * found must pass own_decide(); one that does not is reported in ret->foreign and not returned.
 * Absent is VMOP_OK with ret->present = 0. Costs: one read per VM looked at, plus the folder's
 * path lookup (cached for opts.lookup_ttl_s). ret is always initialized; free it with
 * vs_obs_free() (also on failure). */
vmop_rc vs_observe(struct vs_ctx *ctx, const struct rs_desired *d, const char *unique_id,
                   struct vs_obs *ret, struct vmop_err *err);

/* guest.ipAddress when it is IPv4, else the first IPv4 address of the guest NICs, else NULL.
 * Borrowed from o. */
const char *vs_primary_ip4(const struct vs_obs *o);
/* config.version "vmx-13" -> 13; 0 when unknown or absent. */
int vs_hw_version(const struct vs_obs *o);
/* Converts to the planner's view (pointers borrowed from o). VMOP_E_UNSUPPORTED when the VM has
 * more NICs than PL_MAX_OBS_NICS. */
vmop_rc vs_obs_to_plan(const struct vs_obs *o, struct pl_obs *ret, struct vmop_err *err);

/* ---- apply ------------------------------------------------------------------------------------
 */

#define VS_DONE_MAX 256

struct vs_outcome {
    int created;              /* this call cloned the VM */
    int changed;              /* this call changed something in vCenter */
    int needs_power_cycle;    /* numCPUs/memoryMB differ on a running VM and were not applied */
    unsigned deferred_fields; /* PL_F_* of those, and of the other fields that wait for the VM
                               * to be off (guestId, firmware, bootOptions, version) */
    int disk_not_shrunk;      /* bootDiskCapacity is below the boot disk (disk_kb): not shrunk */
    long long disk_kb;        /* the boot disk's capacity in KB */
    int power_unreachable;    /* the power state asked for cannot be reached (see plan.h) */
    int conflict;             /* a foreign VM holds the identity (obs.foreign): nothing was done;
                               * failed_step VM_STEP_OWNERSHIP, fault VS_REASON_CONFLICT */
    int adopted;              /* a legacy VM got its vmop.uid mark (ownership.h) */
    const char *restart_how;  /* VM_STEP_RESTART done: "ResetVM_Task", "RebootGuest", ... */
    unsigned did;             /* VM_DID(step) of every action done (vm_step.h): what callers test */
    char done[VS_DONE_MAX];   /* the same for people (events, logs): "create,
                               * reconfigure(numCPUs), power-on"; "" when nothing. Never parsed. */
    int failed;               /* a step failed: err has it; the same facts are copied here */
    enum vm_step failed_step; /* where it failed (VM_STEP_LOOKUP, _OBSERVE, an action's step) */
    char fault[VMOP_ERR_FAULT_MAX]; /* vSphere fault type ("InsufficientResourcesFault",
                                     * "NotFound") or "" */
    char message[VMOP_ERR_MSG_MAX];
    /* of the first observation: a VM that matched an identity but is not the resource's, also
     * when conflict is 0 (the status.uniqueID hint named it and was ignored) */
    struct vs_foreign foreign;
    struct vs_obs obs;     /* the final observation, always re-read after changes */
    long long observed_ms; /* vmop_mono_ms() just before the read behind obs began (0: none):
                            * a change vCenter reported before it is in obs */
};
/* Zeroes and frees the observation in it. */
void vs_outcome_free(struct vs_outcome *o);

/* Makes vCenter match d: observe (unique_id, then d->instance_uuid), plan, execute, re-observe
 * and re-plan at each PL_REOBSERVE (bounded), stop at the first failure. A foreign VM found by
 * the instance UUID, or by unique_id when no VM of the resource exists, stops it before any
 * change: VMOP_E_EXISTS with ret->conflict (and nothing is created). A legacy VM is first given
 * its vmop.uid mark (ret->adopted, "adopt" in done). Port groups are
 * resolved first (a bad one fails before anything is created). ret is always initialized (free
 * with vs_outcome_free), on failure too: it then says what was done before the failure and holds
 * the last observation. Returns VMOP_OK when the VM now matches d (apart from deferred
 * CPU/memory and unreachable power states, flagged in ret); else the failure (err and ret).
 * ev (NULL: none): the change feed, through which power tasks are heard (struct vs_events). */
struct vs_events;
vmop_rc vs_apply(struct vs_ctx *ctx, const struct rs_desired *d, const char *unique_id,
                 const struct vs_events *ev, struct vs_outcome *ret, struct vmop_err *err);

/* Storage policies (rs_desired.storage_policy_id, an SPBM profile ID): the create places the VM
 * on a datastore of the pool's cluster that the policy allows (the binding's datastore when it
 * is one of them, else the first in vCenter's order) and the clone carries the policy. Failures,
 * before anything is created: fault VS_REASON_POLICY_NOT_FOUND (the ID is unknown to vCenter) or
 * VS_REASON_NO_DATASTORE (no compatible datastore), both VMOP_E_NOT_FOUND, and
 * vs_outcome.failed_step VM_STEP_STORAGE; the messages name the policy ID and StorageClass. */
#define VS_REASON_POLICY_NOT_FOUND "StoragePolicyNotFound"
#define VS_REASON_NO_DATASTORE     "DatastoreNotFound"

/* The CREATE step alone (image cache lookup/deploy, then the clone with identity and vmop's
 * marks: instanceUuid, vmservice.namespacedName, vmop.uid = d->resource_uid, managedBy): what
 * vs_apply() does for an absent VM before it reconfigures. Exposed so tests can simulate a crash
 * right after the clone. It does NOT check that the VM is absent. ret_vm: the new VM. */
vmop_rc vs_clone(struct vs_ctx *ctx, const struct rs_desired *d, struct vim_moref *ret_vm,
                 struct vmop_err *err);

/* ---- delete -----------------------------------------------------------------------------------
 */

/* How vs_apply and vs_delete hear of the VM's power state (after a power task or a guest
 * shutdown) and a delete of the VM's end without reading vCenter: the
 * controller's change feed (change_feed.h vcfeed_mark_vm / vcfeed_wait_power / vcfeed_wait_gone).
 * mark: 1 when the feed holds the VM and is live (*ret_mark: now); wait_power: 1 heard, after
 * mark, that the VM is in state want; wait_gone: 1 heard, after mark, that the VM left (destroyed);
 * both: 0 not within timeout_ms, -1 the feed can no longer tell. Either wait may be NULL (that
 * step reads vCenter). vouch (vcfeed_vm_matches; may be NULL): 1 when the VM moref's values at
 * ownership.h own_mark_paths, as last heard, are values[0..n) and its power state is heard
 * (*ret_power): vs_delete then destroys it without reading it first. */
struct vs_events {
    int (*mark)(void *ud, const char *moref, uint64_t *ret_mark);
    int (*wait_power)(void *ud, const char *moref, uint64_t mark, enum vim_power_state want,
                      long timeout_ms);
    int (*wait_gone)(void *ud, const char *moref, uint64_t mark, long timeout_ms);
    void *ud;
    int (*vouch)(void *ud, const char *moref, const char *const *values, size_t n,
                 enum vim_power_state *ret_power);
    /* NULL or: news of the VM at the property path is wanted soon, within within_ms (the feed
     * asks vCenter again sooner than it otherwise would: vcfeed_expect) */
    void (*expect)(void *ud, const char *moref, const char *path, long within_ms);
};

struct vs_deleted {
    int gone;                  /* no VM of the resource remains */
    int destroyed;             /* this call destroyed the resource's VM */
    struct vs_foreign foreign; /* a VM that matched an identity but is not the resource's: left
                                * untouched */
};
/* Finds the VM of the resource as vs_observe() does (or, when ev vouches for the VM named by
 * unique_id as the resource's, takes it and its power state from ev); absent = done. Else powers it
 * off (mode: UNSET = TrySoft, pl_plan_delete(); suspended VMs are powered off hard) and destroys
 * it. TrySoft asks the guest (ShutdownGuest) and waits for it to be off: with ev (may be NULL)
 * holding the VM, ev's report ends the wait (reads at pl_feed_backstop_ms() only back it up); else
 * it reads the power state at pl_soft_poll_ms(). It powers off hard when the guest is not off
 * within opts.soft_wait_ms (or cannot be asked: no VMware Tools). A foreign VM is never touched: it
 * is reported in ret->foreign and the delete is done all the same. ret is always initialized.
 * Idempotent. */
vmop_rc vs_delete(struct vs_ctx *ctx, const struct rs_desired *d, const char *unique_id,
                  enum api_power_mode mode, const struct vs_events *ev, struct vs_deleted *ret,
                  struct vmop_err *err);

/* ---- placement facts --------------------------------------------------------------------------
 */

/* The lowest CPU MHz of the connected hosts of the cluster (or standalone compute resource)
 * that owns the resource pool at pool_path (a resource pool or a cluster inventory path).
 * Cached per path for opts.mhz_ttl_s. For the resolver's milli-CPU -> MHz conversion. */
vmop_rc vs_min_host_mhz(struct vs_ctx *ctx, const char *pool_path, int64_t *ret_mhz,
                        struct vmop_err *err);

#endif
