/* vmsync.h: the vSphere side of the VirtualMachine reconcile: observe, apply a plan, delete.
 *
 * Owns: finding a VM by identity (status.uniqueID, then instance UUID; never by name), turning a
 * vimclient read into the planner's observation, executing plans (plan.h) with vimclient, the
 * image cache used as clone source (imgcache.h), and the lowest host MHz of a placement cluster.
 * Knows nothing of Kubernetes beyond struct rs_desired (resolve.h) and what it returns.
 *
 * Crash safety: every VM is created by CloneVM_Task whose clone spec carries
 * config.instanceUuid and extraConfig vmservice.namespacedName, so a VM exists only with its
 * identity; before any create the VM is looked up by that identity. A crash at any point followed
 * by vs_apply() again finds and finishes the VM instead of creating a second one.
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

/* client is borrowed: it must outlive the context. opts may be NULL (defaults). */
vmop_rc vs_ctx_new(struct vim_client *client, const struct vs_options *opts,
                   struct vs_ctx **ret_ctx, struct vmop_err *err);
void vs_ctx_free(struct vs_ctx *ctx); /* NULL is fine */

/* ---- observation ------------------------------------------------------------------------------
 */

struct vs_obs {
    int present;       /* 0: no VM with this identity */
    struct vim_vm *vm; /* owned; NULL when absent. Everything vCenter showed */
    char *metadata;    /* decoded guestinfo.metadata, NULL when absent / not decodable */
    size_t metadata_len;
    char *userdata; /* decoded guestinfo.userdata: SECRET, compared only; zeroed on free */
    size_t userdata_len;
};
/* Zeroes user data and frees; the struct is left absent. NULL is fine. */
void vs_obs_free(struct vs_obs *o);

/* Finds the VM: unique_id (a VM moref value such as "vm-63", may be NULL/"") is used when it
 * exists and its instanceUuid equals instance_uuid (case-insensitive); else SearchIndex
 * FindByUuid(instance_uuid, instanceUuid=true). Absent is VMOP_OK with ret->present = 0.
 * ret is always initialized; free it with vs_obs_free() (also on failure). */
vmop_rc vs_observe(struct vs_ctx *ctx, const char *unique_id, const char *instance_uuid,
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
    char done[VS_DONE_MAX];   /* what was done, for an event: "create, reconfigure(numCPUs),
                               * power-on"; "" when nothing */
    int failed;               /* a step failed: err has it; the same facts are copied here */
    char failed_step[32];     /* pl_kind_str() of the failed step, or "lookup" */
    char fault[VMOP_ERR_FAULT_MAX]; /* vSphere fault type ("InsufficientResourcesFault",
                                     * "NotFound") or "" */
    char message[VMOP_ERR_MSG_MAX];
    struct vs_obs obs; /* the final observation, always re-read after changes */
};
/* Zeroes and frees the observation in it. */
void vs_outcome_free(struct vs_outcome *o);

/* Makes vCenter match d: observe (unique_id, then d->instance_uuid), plan, execute, re-observe
 * and re-plan at each PL_REOBSERVE (bounded), stop at the first failure. Port groups are
 * resolved first (a bad one fails before anything is created). ret is always initialized (free
 * with vs_outcome_free), on failure too: it then says what was done before the failure and holds
 * the last observation. Returns VMOP_OK when the VM now matches d (apart from deferred
 * CPU/memory and unreachable power states, flagged in ret); else the failure (err and ret). */
vmop_rc vs_apply(struct vs_ctx *ctx, const struct rs_desired *d, const char *unique_id,
                 struct vs_outcome *ret, struct vmop_err *err);

/* Storage policies (rs_desired.storage_policy_id, an SPBM profile ID): the create places the VM
 * on a datastore of the pool's cluster that the policy allows (the binding's datastore when it
 * is one of them, else the first in vCenter's order) and the clone carries the policy. Failures,
 * before anything is created: fault VS_REASON_POLICY_NOT_FOUND (the ID is unknown to vCenter) or
 * VS_REASON_NO_DATASTORE (no compatible datastore), both VMOP_E_NOT_FOUND, and
 * vs_outcome.failed_step VS_STEP_STORAGE; the messages name the policy ID and StorageClass. */
#define VS_REASON_POLICY_NOT_FOUND "StoragePolicyNotFound"
#define VS_REASON_NO_DATASTORE     "DatastoreNotFound"
#define VS_STEP_STORAGE            "storage"

/* The CREATE step alone (image cache lookup/deploy, then the clone with identity): what
 * vs_apply() does for an absent VM before it reconfigures. Exposed so tests can simulate a crash
 * right after the clone. It does NOT check that the VM is absent. ret_vm: the new VM. */
vmop_rc vs_clone(struct vs_ctx *ctx, const struct rs_desired *d, struct vim_moref *ret_vm,
                 struct vmop_err *err);

/* ---- delete -----------------------------------------------------------------------------------
 */

/* Finds the VM by identity; absent = done. Else powers it off (mode: UNSET = Hard; suspended
 * VMs are powered off hard) and destroys it. *ret_gone = 1 when no VM with this identity remains.
 * Idempotent. */
vmop_rc vs_delete(struct vs_ctx *ctx, const char *unique_id, const char *instance_uuid,
                  enum api_power_mode mode, int *ret_gone, struct vmop_err *err);

/* ---- placement facts --------------------------------------------------------------------------
 */

/* The lowest CPU MHz of the connected hosts of the cluster (or standalone compute resource)
 * that owns the resource pool at pool_path (a resource pool or a cluster inventory path).
 * Cached per path for opts.mhz_ttl_s. For the resolver's milli-CPU -> MHz conversion. */
vmop_rc vs_min_host_mhz(struct vs_ctx *ctx, const char *pool_path, int64_t *ret_mhz,
                        struct vmop_err *err);

#endif
