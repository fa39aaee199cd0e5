/* vmsync.c: observe a VM in vCenter, execute plans (plan.h) against it, delete it.
 *
 * Owns: identity lookup (uniqueID -> instance UUID), vim_vm -> pl_obs conversion with decoded
 * guestinfo, placement/network lookups (cached with a TTL), the plan executor with its
 * re-observe / re-plan loop, power modes (Soft waits for the guest, bounded; TrySoft falls back
 * to hard), delete, and the min-host-MHz helper. Interfaces and rules: vmsync.h, plan.h.
 *
 * Design notes (where this follows or refines the brief):
 * - Creates are clones of an image cache template (clone_source.h) whose clone spec carries
 *   config.instanceUuid and extraConfig vmservice.namespacedName and vmop.uid, so identity and
 *   vmop's marks are atomic with creation. BIOS UUID and managedBy go in the clone spec too (real
 *   vCenter keeps them, as does the test simulator with tests/vcsim/virtual_machine.patch) and are
 *   checked and fixed by the reconfigure that follows.
 * - Ownership (ownership.h): every VM an identity lookup finds is read once and judged by
 *   own_decide() against the resource (d) and the binding's VM folder (its moref, looked up by
 *   path and cached like the other lookups; the VM's `parent`, read with everything else, must be
 *   it). A foreign VM's data never leaves vs_observe() (only its moref and which mark failed), so
 *   nothing below can act on it. The instance UUID search is vCenter-wide on purpose: a VM with
 *   the UUID in another datacenter or folder is a conflict, and a create with that UUID would
 *   only collide with it.
 * - The instance UUID is lower-cased everywhere vmop writes or searches it (the simulator's
 *   FindByUuid is case-sensitive; vimclient lower-cases its searches).
 * - A plan's actions after a PL_REOBSERVE are recomputed from a fresh read (the guestinfo
 *   metadata needs the MACs vCenter gave the NICs). At most VS_MAX_REPLANS re-plans per call: a VM
 *   that does not converge (vCenter ignored a change) is a failure, not a loop.
 * - A power operation that finds the VM already in the wanted state (InvalidPowerState) counts
 *   as done; a destroy that finds the VM gone (ManagedObjectNotFound) as well.
 * - NIC backings must be distributed port groups (vimclient builds DVPG backings only).
 * - Storage: without a storage policy (StorageClass parameters.storagePolicyID) the binding's
 *   datastore, when set, is the clone's datastore. With one, the datastore is chosen by SPBM
 *   among the datastores of the pool's cluster: the binding's datastore when it is compatible,
 *   else the first compatible one in vCenter's order; the clone carries the policy (its VM home
 *   profile). The choice is cached per (policy, pool) for opts.storage_ttl_s; failures are not.
 *   An unknown policy or no compatible datastore fails the create before anything is deployed,
 *   with fault VS_REASON_POLICY_NOT_FOUND / VS_REASON_NO_DATASTORE and step VM_STEP_STORAGE.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "guestinfo.h"
#include "vmop_clock.h"
#include "clone_source.h"
#include "ownership.h"
#include "vbuf.h"
#include "vmsync.h"

#define VS_MAX_REPLANS 4
#define VS_CACHE_SLOTS 128
#define VS_KEY_MAX     (2 * VS_PATH_MAX + 64)
#define VS_PATH_MAX    4096
#define VS_UUID_MAX    64
#define VS_SWITCH_MAX  128

/* ---- context and lookup cache -----------------------------------------------------------------
 */

struct vs_centry {
    char *key;            /* NULL: free slot */
    struct vim_moref ref; /* the object */
    char *switch_uuid;    /* DVPG: its switch UUID */
    char *portgroup_key;  /* DVPG: its key */
    int is_dvpg;
    long long num; /* min host MHz */
    double at;     /* monotonic seconds when stored */
};

struct vs_ctx {
    struct vim_client *client;
    long soft_wait_ms, lookup_ttl_s, mhz_ttl_s, storage_ttl_s;
    char *cache_folder;
    int (*may_act)(void *ud); /* the fence before a create (vs_options); NULL: always */
    void *may_act_ud;
    struct vim_pbm *pbm; /* SPBM handle, made on first use; guarded by lock until set */
    struct csrc_cache *images;
    pthread_mutex_t lock; /* guards cache[] and seen_relogins */
    struct vs_centry cache[VS_CACHE_SLOTS];
    uint64_t seen_relogins; /* the client's re-logins when the caches were last known good */
};

/* the monotonic clock in seconds (vmop_clock.h) */
static double now_s(void)
{
    return (double)vmop_mono_ms() / 1000.0;
}

static void centry_clear(struct vs_centry *e)
{
    free(e->key);
    free(e->switch_uuid);
    free(e->portgroup_key);
    memset(e, 0, sizeof(*e));
}

/* Copies a fresh entry for key into *out (strings copied into the caller's buffers). */
static int cache_get(struct vs_ctx *ctx, const char *key, long ttl_s, struct vs_centry *out,
                     char *sw, size_t sw_size, char *pg, size_t pg_size)
{
    int hit = 0;
    double t = now_s();
    pthread_mutex_lock(&ctx->lock);
    for (size_t i = 0; i < VS_CACHE_SLOTS; i++) {
        struct vs_centry *e = &ctx->cache[i];
        if (!e->key || strcmp(e->key, key) != 0)
            continue;
        if (t - e->at > (double)ttl_s) {
            centry_clear(e);
            break;
        }
        out->ref = e->ref;
        out->is_dvpg = e->is_dvpg;
        out->num = e->num;
        if (sw)
            snprintf(sw, sw_size, "%s", e->switch_uuid ? e->switch_uuid : "");
        if (pg)
            snprintf(pg, pg_size, "%s", e->portgroup_key ? e->portgroup_key : "");
        hit = 1;
        break;
    }
    pthread_mutex_unlock(&ctx->lock);
    return hit;
}

/* Drops the inventory lookups (datacenter, folders, pools, datastores): one of them named an
 * object vCenter no longer has (ManagedObjectNotFound), so the next call looks them up again. */
static void cache_forget_lookups(struct vs_ctx *ctx)
{
    static const char *const kinds[] = {"dc|", "folder|", "pool|", "ds|"};
    pthread_mutex_lock(&ctx->lock);
    for (size_t i = 0; i < VS_CACHE_SLOTS; i++)
        for (size_t k = 0; ctx->cache[i].key && k < sizeof(kinds) / sizeof(kinds[0]); k++)
            if (!strncmp(ctx->cache[i].key, kinds[k], strlen(kinds[k])))
                centry_clear(&ctx->cache[i]);
    pthread_mutex_unlock(&ctx->lock);
}

/* A re-login (the session expired or was lost: vCenter may have restarted, and a restored or
 * simulated one can hand out old morefs to other objects) drops every cached moref: the lookups
 * here and the clone-source templates. Run before anything reads the caches. */
static void check_session(struct vs_ctx *ctx)
{
    struct vim_stats st;
    int renewed;
    vim_client_stats(ctx->client, &st);
    pthread_mutex_lock(&ctx->lock);
    renewed = st.relogins != ctx->seen_relogins;
    if (renewed) {
        ctx->seen_relogins = st.relogins;
        for (size_t i = 0; i < VS_CACHE_SLOTS; i++)
            centry_clear(&ctx->cache[i]);
    }
    pthread_mutex_unlock(&ctx->lock);
    if (renewed)
        csrc_forget_all(ctx->images);
}

/* Stores (best effort: an allocation failure just means no caching). */
static void cache_put(struct vs_ctx *ctx, const char *key, const struct vim_moref *ref, int is_dvpg,
                      const char *sw, const char *pg, long long num)
{
    struct vs_centry n = {0}, *slot = NULL;
    n.key = strdup(key);
    n.switch_uuid = sw ? strdup(sw) : NULL;
    n.portgroup_key = pg ? strdup(pg) : NULL;
    if (!n.key || (sw && !n.switch_uuid) || (pg && !n.portgroup_key)) {
        centry_clear(&n);
        return;
    }
    if (ref)
        n.ref = *ref;
    n.is_dvpg = is_dvpg;
    n.num = num;
    n.at = now_s();
    pthread_mutex_lock(&ctx->lock);
    for (size_t i = 0; i < VS_CACHE_SLOTS; i++) {
        struct vs_centry *e = &ctx->cache[i];
        if (e->key && strcmp(e->key, key) == 0) {
            slot = e;
            break;
        }
        if (!slot || (slot->key && (!e->key || e->at < slot->at)))
            slot = e; /* a free slot, else the oldest */
    }
    centry_clear(slot);
    *slot = n;
    pthread_mutex_unlock(&ctx->lock);
}

vmop_rc vs_ctx_new(struct vim_client *client, const struct vs_options *opts,
                   struct vs_ctx **ret_ctx, struct vmop_err *err)
{
    struct vs_ctx *ctx;
    vmop_rc rc;

    if (!client || !ret_ctx)
        return vmop_fail(err, VMOP_E_INVALID, "vs_ctx_new: missing argument");
    ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    ctx->client = client;
    ctx->soft_wait_ms = opts && opts->soft_wait_ms > 0 ? opts->soft_wait_ms : 120000;
    ctx->lookup_ttl_s = opts && opts->lookup_ttl_s > 0 ? opts->lookup_ttl_s : 60;
    ctx->mhz_ttl_s = opts && opts->mhz_ttl_s > 0 ? opts->mhz_ttl_s : 300;
    ctx->storage_ttl_s = opts && opts->storage_ttl_s > 0 ? opts->storage_ttl_s : 300;
    ctx->may_act = opts ? opts->may_act : NULL;
    ctx->may_act_ud = opts ? opts->may_act_ud : NULL;
    if (opts && opts->cache_folder && !(ctx->cache_folder = strdup(opts->cache_folder))) {
        free(ctx);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    }
    rc = csrc_new(&ctx->images, err);
    if (rc) {
        free(ctx->cache_folder);
        free(ctx);
        return rc;
    }
    pthread_mutex_init(&ctx->lock, NULL);
    *ret_ctx = ctx;
    return VMOP_OK;
}

void vs_ctx_free(struct vs_ctx *ctx)
{
    if (!ctx)
        return;
    for (size_t i = 0; i < VS_CACHE_SLOTS; i++)
        centry_clear(&ctx->cache[i]);
    pthread_mutex_destroy(&ctx->lock);
    vim_pbm_free(ctx->pbm);
    csrc_free(ctx->images);
    free(ctx->cache_folder);
    free(ctx);
}

/* ---- small helpers ----------------------------------------------------------------------------
 */

static int nonempty(const char *s)
{
    return s && *s;
}

/* A lookup that found nothing: a clear message with fault "NotFound" (replacing vimclient's). */
static vmop_rc fail_not_found(struct vmop_err *err, vmop_rc rc, const char *what, const char *path)
{
    if (rc != VMOP_E_NOT_FOUND && rc != VMOP_E_INVALID)
        return rc; /* transport, auth...: keep the cause */
    vmop_err_clear(err);
    return vmop_fail_fault(err, rc, "NotFound", 0, "%s \"%s\" not found in vCenter", what, path);
}

static void lower_uuid(const char *in, char *out, size_t size)
{
    size_t i = 0;
    for (; in && in[i] && i + 1 < size; i++)
        out[i] = (char)tolower((unsigned char)in[i]);
    out[i] = '\0';
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- lookups ----------------------------------------------------------------------------------
 */

static vmop_rc lookup_datacenter(struct vs_ctx *ctx, const char *dc, struct vim_moref *ret,
                                 struct vmop_err *err)
{
    char key[VS_KEY_MAX], path[VS_PATH_MAX];
    struct vs_centry e = {0};
    vmop_rc rc;

    if (!nonempty(dc))
        return vmop_fail_fault(err, VMOP_E_INVALID, "NotFound", 0, "no datacenter given");
    snprintf(path, sizeof(path), "%s%s", dc[0] == '/' ? "" : "/", dc);
    snprintf(key, sizeof(key), "dc|%s", path);
    if (cache_get(ctx, key, ctx->lookup_ttl_s, &e, NULL, 0, NULL, 0)) {
        *ret = e.ref;
        return VMOP_OK;
    }
    rc = vim_find_by_path(ctx->client, path, "Datacenter", &e.ref, err);
    if (rc)
        return fail_not_found(err, rc, "datacenter", dc);
    cache_put(ctx, key, &e.ref, 0, NULL, NULL, 0);
    *ret = e.ref;
    return VMOP_OK;
}

/* The binding's VM folder by inventory path (cached). */
static vmop_rc lookup_folder(struct vs_ctx *ctx, const char *path, struct vim_moref *ret,
                             struct vmop_err *err)
{
    char key[VS_KEY_MAX];
    struct vs_centry e = {0};
    vmop_rc rc;

    if (!nonempty(path))
        return vmop_fail_fault(err, VMOP_E_INVALID, "NotFound", 0, "no VM folder given");
    snprintf(key, sizeof(key), "folder|%s", path);
    if (cache_get(ctx, key, ctx->lookup_ttl_s, &e, NULL, 0, NULL, 0)) {
        *ret = e.ref;
        return VMOP_OK;
    }
    rc = vim_find_by_path(ctx->client, path, "Folder", &e.ref, err);
    if (rc)
        return fail_not_found(err, rc, "folder", path);
    cache_put(ctx, key, &e.ref, 0, NULL, NULL, 0);
    *ret = e.ref;
    return VMOP_OK;
}

struct vs_backing_buf {
    char switch_uuid[VS_SWITCH_MAX];
    char portgroup_key[VIM_MOREF_VALUE_MAX];
};

/* Resolves every desired NIC's port group to its DV switch UUID and key (cached). */
static vmop_rc lookup_backings(struct vs_ctx *ctx, const struct rs_desired *d,
                               struct vs_backing_buf *bufs, struct pl_backing *ret,
                               struct vmop_err *err)
{
    struct vim_moref dc = {{0}};
    int have_dc = 0;
    vmop_rc rc;

    for (size_t i = 0; i < d->n_nics; i++) {
        const char *pg = d->nics[i].port_group;
        char key[VS_KEY_MAX];
        struct vs_centry e = {0};
        struct vim_network *net = NULL;

        if (!nonempty(pg))
            return vmop_fail_fault(err, VMOP_E_INVALID, "NotFound", 0,
                                   "interface \"%s\" has no port group",
                                   d->nics[i].name ? d->nics[i].name : "");
        snprintf(key, sizeof(key), "net|%s|%s", pg[0] == '/' || !d->datacenter ? "" : d->datacenter,
                 pg);
        if (!cache_get(ctx, key, ctx->lookup_ttl_s, &e, bufs[i].switch_uuid,
                       sizeof(bufs[i].switch_uuid), bufs[i].portgroup_key,
                       sizeof(bufs[i].portgroup_key))) {
            if (pg[0] != '/' && !have_dc) {
                rc = lookup_datacenter(ctx, d->datacenter, &dc, err);
                if (rc)
                    return rc;
                have_dc = 1;
            }
            rc = vim_network_lookup(ctx->client, pg[0] == '/' ? NULL : &dc, pg, &net, err);
            if (rc)
                return fail_not_found(err, rc, "port group", pg);
            e.is_dvpg = net->is_dvpg && net->switch_uuid && net->portgroup_key;
            if (e.is_dvpg) {
                snprintf(bufs[i].switch_uuid, sizeof(bufs[i].switch_uuid), "%s", net->switch_uuid);
                snprintf(bufs[i].portgroup_key, sizeof(bufs[i].portgroup_key), "%s",
                         net->portgroup_key);
                cache_put(ctx, key, &net->ref, 1, net->switch_uuid, net->portgroup_key, 0);
            }
            vim_network_free(net);
        }
        if (!e.is_dvpg)
            return vmop_fail_fault(err, VMOP_E_UNSUPPORTED, "NotSupported", 0,
                                   "network \"%s\" is not a distributed port group", pg);
        ret[i].switch_uuid = bufs[i].switch_uuid;
        ret[i].portgroup_key = bufs[i].portgroup_key;
    }
    return VMOP_OK;
}

/* A resource pool path, or a cluster / compute resource path (its root pool "Resources"). */
static vmop_rc lookup_pool(struct vs_ctx *ctx, const char *path, struct vim_moref *ret,
                           struct vmop_err *err)
{
    char sub[VS_PATH_MAX];
    struct vim_moref ref;
    vmop_rc rc;

    char key[VS_KEY_MAX];
    struct vs_centry e = {0};

    if (!nonempty(path))
        return vmop_fail_fault(err, VMOP_E_INVALID, "NotFound", 0, "no resource pool given");
    snprintf(key, sizeof(key), "pool|%s", path);
    if (cache_get(ctx, key, ctx->lookup_ttl_s, &e, NULL, 0, NULL, 0)) {
        *ret = e.ref;
        return VMOP_OK;
    }
    rc = vim_find_by_path(ctx->client, path, NULL, &ref, err);
    if (rc)
        return fail_not_found(err, rc, "resource pool", path);
    if (strcmp(ref.type, "ResourcePool") != 0 && strcmp(ref.type, "VirtualApp") != 0) {
        if (strcmp(ref.type, "ClusterComputeResource") != 0 && strcmp(ref.type, "ComputeResource"))
            return vmop_fail_fault(err, VMOP_E_INVALID, "NotFound", 0,
                                   "\"%s\" is a %s, not a resource pool or cluster", path,
                                   ref.type);
        snprintf(sub, sizeof(sub), "%s/Resources", path);
        rc = vim_find_by_path(ctx->client, sub, "ResourcePool", &ref, err);
        if (rc)
            return fail_not_found(err, rc, "resource pool", sub);
    }
    cache_put(ctx, key, &ref, 0, NULL, NULL, 0);
    *ret = ref;
    return VMOP_OK;
}

static vmop_rc lookup_datastore(struct vs_ctx *ctx, const struct rs_desired *d,
                                struct vim_moref *ret, struct vmop_err *err)
{
    char path[VS_PATH_MAX], key[VS_KEY_MAX];
    struct vs_centry e = {0};
    vmop_rc rc;
    if (!nonempty(d->datastore))
        return VMOP_OK; /* ret stays unset: the source's datastore */
    if (d->datastore[0] == '/')
        snprintf(path, sizeof(path), "%s", d->datastore);
    else
        snprintf(path, sizeof(path), "%s%s/datastore/%s",
                 nonempty(d->datacenter) && d->datacenter[0] != '/' ? "/" : "",
                 d->datacenter ? d->datacenter : "", d->datastore);
    snprintf(key, sizeof(key), "ds|%s", path);
    if (cache_get(ctx, key, ctx->lookup_ttl_s, &e, NULL, 0, NULL, 0)) {
        *ret = e.ref;
        return VMOP_OK;
    }
    rc = vim_find_by_path(ctx->client, path, "Datastore", ret, err);
    if (rc)
        return fail_not_found(err, rc, "datastore", d->datastore);
    cache_put(ctx, key, ret, 0, NULL, NULL, 0);
    return VMOP_OK;
}

/* ---- storage policy ---------------------------------------------------------------------------
 */

/* The SPBM handle (one per context, made on first use). */
static vmop_rc get_pbm(struct vs_ctx *ctx, struct vim_pbm **ret, struct vmop_err *err)
{
    struct vim_pbm *p = NULL;
    vmop_rc rc;
    pthread_mutex_lock(&ctx->lock);
    p = ctx->pbm;
    pthread_mutex_unlock(&ctx->lock);
    if (p) {
        *ret = p;
        return VMOP_OK;
    }
    rc = vim_pbm_new(ctx->client, &p, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&ctx->lock);
    if (ctx->pbm) { /* another worker got there first */
        vim_pbm_free(p);
        p = ctx->pbm;
    } else {
        ctx->pbm = p;
    }
    pthread_mutex_unlock(&ctx->lock);
    *ret = p;
    return VMOP_OK;
}

static int moref_in(const struct vim_moref *ref, const struct vim_moref *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (vim_moref_eq(ref, &list[i]))
            return 1;
    return 0;
}

/* The datastore for d's storage policy among the datastores of pool's cluster: binding_ds (may be
 * unset) when compatible, else the first compatible one in the cluster's order. */
static vmop_rc choose_datastore(struct vs_ctx *ctx, const struct rs_desired *d,
                                const struct vim_moref *pool, const struct vim_moref *binding_ds,
                                struct vim_moref *ret_ds, struct vmop_err *err)
{
    const char *policy = d->storage_policy_id;
    const char *sc = nonempty(d->storage_class) ? d->storage_class : "";
    char key[VS_KEY_MAX];
    struct vs_centry e = {0};
    struct vim_pbm *pbm = NULL;
    struct vim_pbm_profile *prof = NULL;
    struct vim_moref owner, *cands = NULL, *compat = NULL;
    size_t n_cands = 0, n_compat = 0;
    const struct vim_moref *pick = NULL;
    vmop_rc rc;

    snprintf(key, sizeof(key), "spbm|%.256s|%s|%s", policy, pool->value,
             vim_moref_is_set(binding_ds) ? binding_ds->value : "");
    if (cache_get(ctx, key, ctx->storage_ttl_s, &e, NULL, 0, NULL, 0)) {
        *ret_ds = e.ref;
        return VMOP_OK;
    }
    rc = get_pbm(ctx, &pbm, err);
    if (!rc)
        rc = vim_pbm_profile_get(pbm, policy, &prof, err);
    if (rc == VMOP_E_NOT_FOUND || rc == VMOP_E_INVALID) {
        vmop_err_clear(err);
        rc = vmop_fail_fault(
            err, VMOP_E_NOT_FOUND, VS_REASON_POLICY_NOT_FOUND, 0,
            "storage policy \"%.256s\" of StorageClass \"%s\" not found in vCenter", policy, sc);
    }
    if (rc)
        goto out;
    if (strcmp(pool->type, "ClusterComputeResource") == 0 ||
        strcmp(pool->type, "ComputeResource") == 0)
        owner = *pool;
    else if ((rc = vim_pool_owner(ctx->client, pool, &owner, err)))
        goto out;
    rc = vim_compute_datastores(ctx->client, &owner, &cands, &n_cands, err);
    if (!rc && n_cands)
        rc = vim_pbm_compatible_datastores(pbm, policy, cands, n_cands, &compat, &n_compat, err);
    if (rc)
        goto out;
    if (vim_moref_is_set(binding_ds) && moref_in(binding_ds, cands, n_cands) &&
        moref_in(binding_ds, compat, n_compat))
        pick = binding_ds;
    for (size_t i = 0; !pick && i < n_cands; i++)
        if (moref_in(&cands[i], compat, n_compat))
            pick = &cands[i];
    if (!pick) {
        rc = vmop_fail_fault(err, VMOP_E_NOT_FOUND, VS_REASON_NO_DATASTORE, 0,
                             "no datastore of cluster %s (%zu seen) is compatible with storage "
                             "policy \"%.256s\" (%s) of StorageClass \"%s\"",
                             owner.value, n_cands, policy, prof->name, sc);
        goto out;
    }
    *ret_ds = *pick;
    cache_put(ctx, key, pick, 0, NULL, NULL, 0);
out:
    vim_pbm_profile_free(prof);
    free(cands);
    free(compat);
    return rc;
}

/* ---- observation ------------------------------------------------------------------------------
 */

/* Zeroes the user data a VM read carries (a secret, also of a VM that is not ours) and frees it. */
static void vm_free_zeroed(struct vim_vm *vm)
{
    for (size_t i = 0; vm && i < vm->n_extra_config; i++) {
        struct vim_option *kv = &vm->extra_config[i];
        if (kv->key && kv->value && strcmp(kv->key, GI_KEY_USERDATA) == 0)
            explicit_bzero(kv->value, strlen(kv->value));
    }
    vim_vm_free(vm);
}

void vs_obs_free(struct vs_obs *o)
{
    if (!o)
        return;
    vm_free_zeroed(o->vm); /* the encoded user data read back from vCenter is a secret too */
    free(o->metadata);
    gi_free_secret(o->userdata, o->userdata_len);
    memset(o, 0, sizeof(*o));
}

/* Decodes a guestinfo key; an undecodable value reads as absent (it will be rewritten). */
static void decode_key(const struct vim_vm *vm, const char *key, const char *enc_key, char **ret,
                       size_t *ret_len)
{
    struct vmop_err derr = {0};
    const char *v = vim_vm_extra_config(vm, key);
    *ret = NULL;
    *ret_len = 0;
    if (!v)
        return;
    if (gi_decode(v, vim_vm_extra_config(vm, enc_key), ret, ret_len, &derr) != VMOP_OK) {
        *ret = NULL;
        *ret_len = 0;
    }
}

/* Judges a VM that was read: ours (or legacy), else foreign. */
/* The resource's identity as ownership.h judges it. */
static void ident_of(const struct rs_desired *d, const char *unique_id, struct own_ident *id)
{
    memset(id, 0, sizeof(*id));
    id->instance_uuid = d->instance_uuid;
    id->namespaced_name = d->namespaced_name;
    id->uid = d->resource_uid;
    id->status_unique_id = unique_id;
}

static enum own_verdict judge(const struct rs_desired *d, const char *unique_id,
                              const struct vim_moref *folder, const struct vim_vm *vm, char *why,
                              size_t why_size)
{
    struct own_marks m = {0};
    struct own_ident id;

    m.moref = vm->ref.value;
    m.instance_uuid = vm->instance_uuid;
    m.managed_by_ext = vm->managed_by_ext;
    m.managed_by_type = vm->managed_by_type;
    m.namespaced_name = vim_vm_extra_config(vm, OWN_KEY_NAMESPACED);
    m.uid = vim_vm_extra_config(vm, OWN_KEY_UID);
    m.is_template = vm->template;
    m.in_folder = vim_moref_eq(&vm->parent, folder);
    ident_of(d, unique_id, &id);
    return own_decide(&m, &id, why, why_size);
}

static void note_foreign(struct vs_obs *ret, const struct vim_vm *vm, int by_uuid, const char *why)
{
    if (ret->foreign.found && ret->foreign.by_instance_uuid && !by_uuid)
        return; /* the instance UUID conflict is the one to report */
    ret->foreign.found = 1;
    ret->foreign.by_instance_uuid = by_uuid;
    snprintf(ret->foreign.ref, sizeof(ret->foreign.ref), "%s", vm->ref.value);
    snprintf(ret->foreign.why, sizeof(ret->foreign.why), "%s", why);
}

/* Reads ref and judges it before anything else is done with it: when it is the resource's, ret
 * gets it (present = 1, guestinfo decoded); else ret stays absent (ret->foreign is set for a
 * foreign VM; a VM that is gone is just absent). */
static vmop_rc read_judged(struct vs_ctx *ctx, const struct rs_desired *d, const char *unique_id,
                           const struct vim_moref *folder, const struct vim_moref *ref, int by_uuid,
                           struct vs_obs *ret, struct vmop_err *err)
{
    char why[OWN_WHY_MAX];
    struct vim_vm *vm = NULL;
    enum own_verdict v;
    vmop_rc rc = vim_vm_get(ctx->client, ref, &vm, err);

    if (rc == VMOP_E_NOT_FOUND) { /* gone (destroyed between a search and the read) */
        vmop_err_clear(err);
        return VMOP_OK;
    }
    if (rc)
        return rc;
    v = judge(d, unique_id, folder, vm, why, sizeof(why));
    if (v != OWN_OURS && v != OWN_LEGACY) {
        note_foreign(ret, vm, by_uuid, why);
        vm_free_zeroed(vm); /* nothing of a foreign VM is kept or decoded */
        return VMOP_OK;
    }
    ret->vm = vm;
    ret->present = 1;
    ret->legacy = v == OWN_LEGACY;
    decode_key(ret->vm, GI_KEY_METADATA, GI_KEY_METADATA_ENCODING, &ret->metadata,
               &ret->metadata_len);
    decode_key(ret->vm, GI_KEY_USERDATA, GI_KEY_USERDATA_ENCODING, &ret->userdata,
               &ret->userdata_len);
    return VMOP_OK;
}

vmop_rc vs_observe(struct vs_ctx *ctx, const struct rs_desired *d, const char *unique_id,
                   struct vs_obs *ret, struct vmop_err *err)
{
    struct vim_moref ref, folder;
    vmop_rc rc;

    if (ret)
        memset(ret, 0, sizeof(*ret));
    if (!ctx || !ret || !d || !nonempty(d->instance_uuid))
        return vmop_fail(err, VMOP_E_INVALID, "vs_observe: instance UUID needed");
    if (!nonempty(d->resource_uid) || !nonempty(d->namespaced_name))
        return vmop_fail(err, VMOP_E_INVALID, "vs_observe: the resource's name and uid needed");
    check_session(ctx);
    rc = lookup_folder(ctx, d->folder, &folder, err);
    if (rc)
        return rc;
    if (nonempty(unique_id) && vim_moref_set(&ref, "VirtualMachine", unique_id) == VMOP_OK) {
        rc = read_judged(ctx, d, unique_id, &folder, &ref, 0, ret, err);
        if (rc || ret->present)
            return rc;
        /* gone, or not this resource's VM: the instance UUID decides */
    }
    rc = vim_find_vm_by_uuid(ctx->client, d->instance_uuid, 1, &ref, err);
    if (rc == VMOP_E_NOT_FOUND) {
        vmop_err_clear(err);
        return VMOP_OK;
    }
    if (rc)
        return rc;
    if (ret->foreign.found && !strcmp(ret->foreign.ref, ref.value)) {
        ret->foreign.by_instance_uuid = 1; /* the VM the hint named: judged already */
        return VMOP_OK;
    }
    return read_judged(ctx, d, unique_id, &folder, &ref, 1, ret, err);
}

static int is_ipv4(const char *s)
{
    struct in_addr a;
    return s && inet_pton(AF_INET, s, &a) == 1;
}

const char *vs_primary_ip4(const struct vs_obs *o)
{
    if (!o || !o->present || !o->vm)
        return NULL;
    if (is_ipv4(o->vm->guest_ip))
        return o->vm->guest_ip;
    for (size_t i = 0; i < o->vm->n_guest_nics; i++)
        for (size_t j = 0; j < o->vm->guest_nics[i].n_ips; j++)
            if (is_ipv4(o->vm->guest_nics[i].ips[j]))
                return o->vm->guest_nics[i].ips[j];
    return NULL;
}

int vs_hw_version(const struct vs_obs *o)
{
    const char *v = o && o->present && o->vm ? o->vm->hw_version : NULL;
    char *end = NULL;
    long n;
    if (!v || strncmp(v, "vmx-", 4) != 0)
        return 0;
    n = strtol(v + 4, &end, 10);
    return end != v + 4 && *end == '\0' && n > 0 && n < 1000 ? (int)n : 0;
}

static enum pl_power pl_power_of(enum vim_power_state s)
{
    switch (s) {
    case VIM_POWER_ON:
        return PL_STATE_ON;
    case VIM_POWER_OFF:
        return PL_STATE_OFF;
    case VIM_POWER_SUSPENDED:
        return PL_STATE_SUSPENDED;
    case VIM_POWER_UNKNOWN:
        break;
    }
    return PL_STATE_UNKNOWN;
}

/* Indexes of o->vm->nics sorted by device key (the planner matches NICs by position). */
static void nic_order(const struct vim_vm *vm, size_t *idx, size_t n)
{
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = 1; i < n; i++) /* insertion sort: n <= 16 */
        for (size_t j = i; j > 0 && vm->nics[idx[j - 1]].key > vm->nics[idx[j]].key; j--) {
            size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
}

static const char *extra_get(const void *ud, const char *key)
{
    return vim_vm_extra_config(ud, key);
}

/* The boot disk: the disk with the lowest device key, or NULL. */
static const struct vim_disk *boot_disk(const struct vim_vm *vm)
{
    const struct vim_disk *b = NULL;
    for (size_t i = 0; i < vm->n_disks; i++)
        if (vm->disks[i].key > 0 && (!b || vm->disks[i].key < b->key))
            b = &vm->disks[i];
    return b;
}

/* guestId, firmware, version, CBT, bootOptions, the boot disk, extraConfig for the planner. */
static void obs_config(const struct vim_vm *vm, int hw_version, struct pl_obs *ret)
{
    static const char *const kinds[] = {
        [RS_BOOT_DISK] = "VirtualMachineBootOptionsBootableDiskDevice",
        [RS_BOOT_NETWORK] = "VirtualMachineBootOptionsBootableEthernetDevice",
        [RS_BOOT_CDROM] = "VirtualMachineBootOptionsBootableCdromDevice",
    };
    const struct vim_disk *disk = boot_disk(vm);
    ret->guest_id = vm->guest_id;
    ret->firmware = vm->firmware;
    ret->hw_version = hw_version;
    ret->cbt = vm->change_tracking;
    ret->boot.delay_ms = vm->boot.delay_ms;
    ret->boot.retry_delay_ms = vm->boot.retry_delay_ms;
    ret->boot.retry = vm->boot.retry;
    ret->boot.efi_secure_boot = vm->boot.efi_secure_boot;
    ret->boot.network_protocol = vm->boot.network_protocol;
    for (size_t i = 0; i < vm->boot.n_order && ret->boot.n_order < PL_MAX_BOOT; i++) {
        struct pl_boot_entry *e = &ret->boot.order[ret->boot.n_order++];
        e->kind = -1;
        for (int k = 0; k < 3; k++)
            if (vm->boot.order[i].type && !strcmp(vm->boot.order[i].type, kinds[k]))
                e->kind = k;
        e->device_key = vm->boot.order[i].device_key;
    }
    ret->disk_key = disk ? disk->key : 0;
    ret->disk_kb = disk ? disk->capacity_kb : 0;
    ret->extra_get = extra_get;
    ret->restart_marker = vim_vm_extra_config(vm, PL_KEY_LAST_RESTART);
    ret->extra_ud = vm;
}

vmop_rc vs_obs_to_plan(const struct vs_obs *o, struct pl_obs *ret, struct vmop_err *err)
{
    const struct vim_vm *vm;
    size_t idx[PL_MAX_OBS_NICS];

    memset(ret, 0, sizeof(*ret));
    if (!o || !o->present || !o->vm)
        return VMOP_OK;
    vm = o->vm;
    if (vm->n_nics > PL_MAX_OBS_NICS)
        return vmop_fail(err, VMOP_E_UNSUPPORTED, "VM %s has %zu NICs: at most %d are supported",
                         vm->ref.value, vm->n_nics, PL_MAX_OBS_NICS);
    ret->present = 1;
    ret->is_template = vm->template;
    ret->power = pl_power_of(vm->power_state);
    ret->bios_uuid = vm->bios_uuid;
    ret->instance_uuid = vm->instance_uuid;
    ret->managed_by_ext = vm->managed_by_ext;
    ret->managed_by_type = vm->managed_by_type;
    ret->namespaced_name = vim_vm_extra_config(vm, PL_KEY_NAMESPACED);
    ret->num_cpus = vm->num_cpu;
    ret->memory_mb = vm->memory_mb;
    ret->cpu_reservation = vm->cpu_alloc.reservation;
    ret->cpu_limit = vm->cpu_alloc.limit;
    ret->mem_reservation = vm->mem_alloc.reservation;
    ret->mem_limit = vm->mem_alloc.limit;
    nic_order(vm, idx, vm->n_nics);
    for (size_t i = 0; i < vm->n_nics; i++) {
        const struct vim_nic *n = &vm->nics[idx[i]];
        ret->nics[i].key = n->key;
        ret->nics[i].device_type = n->device_type;
        ret->nics[i].mac = n->mac;
        ret->nics[i].switch_uuid = n->switch_uuid;
        ret->nics[i].portgroup_key = n->portgroup_key;
    }
    ret->n_nics = vm->n_nics;
    ret->metadata = o->metadata;
    ret->metadata_encoding = vim_vm_extra_config(vm, GI_KEY_METADATA_ENCODING);
    ret->userdata = o->userdata;
    ret->userdata_len = o->userdata_len;
    ret->userdata_encoding = vim_vm_extra_config(vm, GI_KEY_USERDATA_ENCODING);
    obs_config(vm, vs_hw_version(o), ret);
    return VMOP_OK;
}

/* The vim_nic behind planner NIC position pos. */
static const struct vim_nic *nic_at(const struct vim_vm *vm, size_t pos)
{
    size_t idx[PL_MAX_OBS_NICS];
    if (vm->n_nics > PL_MAX_OBS_NICS || pos >= vm->n_nics)
        return NULL;
    nic_order(vm, idx, vm->n_nics);
    return &vm->nics[idx[pos]];
}

/* ---- the steps --------------------------------------------------------------------------------
 */

/* The VM name: the resource name, from "ns/name". */
static const char *vm_name(const struct rs_desired *d)
{
    const char *slash = strchr(d->namespaced_name, '/');
    return slash ? slash + 1 : d->namespaced_name;
}

/* The device keys of the template's disks, so each disk can be placed under the storage policy
 * (a clone without disk locators applies the policy to the VM home only): read once per
 * remembered template (csrc_disks_get). */
static vmop_rc template_disks(struct vs_ctx *ctx, const struct csrc_target *t,
                              const struct vim_moref *tmpl, int *keys, size_t *ret_n,
                              struct vmop_err *err)
{
    struct vim_vm *v = NULL;
    vmop_rc rc;
    if (csrc_disks_get(ctx->images, t, tmpl, keys, ret_n))
        return VMOP_OK;
    rc = vim_vm_get(ctx->client, tmpl, &v, err);
    if (rc)
        return rc;
    if (v->n_disks > VIM_MAX_CLONE_DISKS) {
        rc = vmop_fail(err, VMOP_E_TOOBIG, "image template %s has %zu disks (at most %d)",
                       tmpl->value, v->n_disks, VIM_MAX_CLONE_DISKS);
    } else {
        for (size_t i = 0; i < v->n_disks; i++)
            keys[i] = v->disks[i].key;
        *ret_n = v->n_disks;
        csrc_disks_put(ctx->images, t, tmpl, keys, v->n_disks);
    }
    vim_vm_free(v);
    return rc;
}

vmop_rc vs_clone(struct vs_ctx *ctx, const struct rs_desired *d, struct vim_moref *ret_vm,
                 struct vmop_err *err)
{
    int disk_keys[VIM_MAX_CLONE_DISKS];
    size_t n_disks = 0;
    struct vim_moref pool = {{0}}, folder = {{0}}, ds = {{0}}, tmpl = {{0}}, cache_folder;
    struct vim_config_spec *cs = NULL;
    struct vim_clone_spec cl = {0};
    struct csrc_target t = {0};
    struct csrc_hold hold = {0}; /* a use of the template, released once the clone task ended */
    char iuuid[VS_UUID_MAX], buuid[VS_UUID_MAX];
    const char *cf;
    vmop_rc rc;

    if (!ctx || !d || !ret_vm || !nonempty(d->instance_uuid) || !nonempty(d->library_item_id) ||
        !nonempty(vm_name(d)) || !nonempty(d->resource_uid))
        return vmop_fail(err, VMOP_E_INVALID,
                         "vs_clone: instance UUID, image, name and resource uid needed");
    if (!nonempty(d->folder))
        return vmop_fail_fault(err, VMOP_E_INVALID, "NotFound", 0, "no VM folder given");
    check_session(ctx);
    rc = lookup_pool(ctx, d->resource_pool, &pool, err);
    if (!rc)
        rc = lookup_folder(ctx, d->folder, &folder, err);
    if (!rc)
        rc = lookup_datastore(ctx, d, &ds, err);
    if (!rc && nonempty(d->storage_policy_id))
        rc = choose_datastore(ctx, d, &pool, &ds, &ds, err);
    if (rc)
        return rc;
    cf = ctx->cache_folder ? ctx->cache_folder : d->folder;
    cache_folder = folder;
    if (ctx->cache_folder && (rc = lookup_folder(ctx, ctx->cache_folder, &cache_folder, err)))
        return rc;
    t.item_id = d->library_item_id;
    t.folder_path = cf;
    t.folder = &cache_folder;
    t.pool = &pool;
    t.datastore = vim_moref_is_set(&ds) ? &ds : NULL;
    rc = csrc_get(ctx->images, ctx->client, &t, &tmpl, &hold, err);
    if (!rc && nonempty(d->storage_policy_id) && vim_moref_is_set(&ds))
        rc = template_disks(ctx, &t, &tmpl, disk_keys, &n_disks, err);
    if (rc)
        goto out;

    lower_uuid(d->instance_uuid, iuuid, sizeof(iuuid));
    lower_uuid(d->bios_uuid, buuid, sizeof(buuid));
    rc = vim_config_spec_new(&cs);
    if (rc) {
        rc = vmop_fail(err, rc, "out of memory");
        goto out;
    }
    /* identity and vmop's marks (ownership.h), atomic with the create */
    rc = vim_cs_instance_uuid(cs, iuuid);
    if (!rc)
        rc = vim_cs_extra_config(cs, OWN_KEY_NAMESPACED, d->namespaced_name);
    if (!rc)
        rc = vim_cs_extra_config(cs, OWN_KEY_UID, d->resource_uid);
    if (!rc && nonempty(d->bios_uuid))
        rc = vim_cs_bios_uuid(cs, buuid);
    if (!rc)
        rc = vim_cs_managed_by(cs, PL_MANAGED_BY_EXT, PL_MANAGED_BY_TYPE);
    if (rc) {
        rc = vmop_fail(err, rc, "clone spec: %s", vmop_rc_str(rc));
        goto out;
    }
    cl.source = &tmpl;
    cl.folder = &folder;
    cl.name = vm_name(d);
    cl.pool = &pool;
    cl.datastore = vim_moref_is_set(&ds) ? &ds : NULL;
    cl.profile_id = nonempty(d->storage_policy_id) ? d->storage_policy_id : NULL;
    cl.disk_keys = disk_keys;
    cl.n_disk_keys = n_disks;
    cl.config = cs;
    /* the fence: a replica that lost its lease while paused must not create a second VM next to
     * the one the new leader creates */
    if (ctx->may_act && !ctx->may_act(ctx->may_act_ud)) {
        rc = vmop_fail(err, VMOP_E_CANCELED,
                       "not creating the VM: this replica's leadership is not confirmed");
        goto out;
    }
    rc = vim_vm_clone(ctx->client, &cl, ret_vm, err);
    if (rc == VMOP_E_FAULT && vmop_err_is_fault(err, "ManagedObjectNotFound")) {
        cache_forget_lookups(ctx); /* a cached folder, pool or datastore is gone */
        csrc_forget(ctx->images, d->library_item_id); /* or the template */
    }
out:
    csrc_put(&hold); /* a clone that timed out waiting may still run: the grace covers it */
    vim_config_spec_free(cs);
    return rc;
}

struct csrc_cache *vs_images(struct vs_ctx *ctx)
{
    return ctx ? ctx->images : NULL;
}

const char *vs_cache_folder(const struct vs_ctx *ctx)
{
    return ctx ? ctx->cache_folder : NULL;
}

/* Sets a guestinfo key pair from plain text (encoded gzip+base64); NULL text removes both. */
static vmop_rc cs_guestinfo(struct vim_config_spec *cs, const char *key, const char *enc_key,
                            const char *text, size_t len, struct vmop_err *err)
{
    char *enc = NULL;
    vmop_rc rc;
    if (!text) {
        rc = vim_cs_extra_config(cs, key, NULL);
        if (!rc)
            rc = vim_cs_extra_config(cs, enc_key, NULL);
        return rc ? vmop_fail(err, rc, "config spec: %s", vmop_rc_str(rc)) : VMOP_OK;
    }
    rc = gi_encode_gzip_base64(text, len, &enc, err);
    if (rc)
        return rc;
    rc = vim_cs_extra_config(cs, key, enc);
    if (!rc)
        rc = vim_cs_extra_config(cs, enc_key, GI_ENCODING_GZIP_BASE64);
    gi_free_secret(enc, strlen(enc));
    return rc ? vmop_fail(err, rc, "config spec: %s", vmop_rc_str(rc)) : VMOP_OK;
}

/* The adapter type of a NIC vmop adds: the class's (by position), else VMXNet3. */
static const char *nic_type(const struct rs_desired *d, size_t i)
{
    return i < d->n_nics && nonempty(d->nics[i].device_type) ? d->nics[i].device_type : NULL;
}

/* guestId, firmware, bootOptions, changeTrackingEnabled, the class's extraConfig, the boot disk.
 * A bad value (the resolver passes the spec's text) fails the step with a message naming it. */
static vmop_rc cs_config(struct vim_config_spec *cs, const struct rs_desired *d,
                         const struct vs_obs *obs, unsigned f, struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;
    if ((f & PL_F_GUEST_ID) && d->guest_id && vim_cs_guest_id(cs, d->guest_id))
        return vmop_fail_fault(err, VMOP_E_INVALID, "InvalidArgument", 0,
                               "guestId \"%.64s\" is not a guest OS identifier", d->guest_id);
    if ((f & PL_F_FIRMWARE) && d->firmware && vim_cs_firmware(cs, d->firmware))
        return vmop_fail_fault(err, VMOP_E_INVALID, "InvalidArgument", 0,
                               "firmware \"%.16s\" is not bios or efi", d->firmware);
    if ((f & PL_F_CBT) && d->cbt != RS_UNSET)
        vim_cs_change_tracking(cs, d->cbt == RS_YES);
    if ((f & PL_F_BOOT_OPTIONS) && d->boot.set) {
        struct pl_obs po;
        struct pl_boot_entry pe[RS_MAX_BOOT_ORDER];
        struct vim_boot_entry order[RS_MAX_BOOT_ORDER];
        struct vim_boot_spec b = {.delay_ms = d->boot.delay_ms,
                                  .retry_delay_ms = d->boot.retry_delay_ms,
                                  .enter_setup = -1,
                                  .efi_secure_boot = d->boot.efi_secure_boot == RS_UNSET
                                                         ? -1
                                                         : d->boot.efi_secure_boot == RS_YES,
                                  .retry = d->boot.retry == RS_UNSET ? -1 : d->boot.retry == RS_YES,
                                  .network_protocol = d->boot.network_protocol,
                                  .set_order = d->boot.has_order,
                                  .order = order};
        int waits = 0;
        rc = vs_obs_to_plan(obs, &po, err);
        if (rc)
            return rc;
        b.n_order = pl_boot_order(d, &po, pe, &waits);
        for (size_t i = 0; i < b.n_order; i++) {
            order[i].kind = pe[i].kind == RS_BOOT_NETWORK ? VIM_BOOT_ETHERNET
                            : pe[i].kind == RS_BOOT_DISK  ? VIM_BOOT_DISK
                                                          : VIM_BOOT_CDROM;
            order[i].device_key = pe[i].device_key;
        }
        rc = vim_cs_boot_options(cs, &b);
        if (rc)
            return vmop_fail(err, rc, "bootOptions: %s", vmop_rc_str(rc));
    }
    for (size_t i = 0; !rc && (f & PL_F_EXTRA_CONFIG) && i < d->n_extra; i++) {
        rc = vim_cs_extra_config(cs, d->extra[i].key, d->extra[i].value);
        if (rc)
            return vmop_fail(err, rc, "extraConfig %.64s: %s", d->extra[i].key, vmop_rc_str(rc));
    }
    if ((f & PL_F_BOOT_DISK) && d->boot_disk_mb > 0) {
        const struct vim_disk *disk = boot_disk(obs->vm);
        if (!disk)
            return vmop_fail(err, VMOP_E_INTERNAL,
                             "a disk change was planned for a VM without disks");
        rc = vim_cs_disk_capacity(cs, disk, (long long)d->boot_disk_mb * 1024);
        if (rc)
            return vmop_fail(err, rc, "boot disk %d: %s", disk->key, vmop_rc_str(rc));
    }
    return VMOP_OK;
}

/* UpgradeVM_Task to the planned version; a VM already there is done. */
static vmop_rc do_upgrade(struct vs_ctx *ctx, const struct vim_moref *vm, int version,
                          struct vmop_err *err)
{
    char v[16];
    vmop_rc rc;
    snprintf(v, sizeof(v), "vmx-%d", version);
    rc = vim_vm_upgrade(ctx->client, vm, v, err);
    if (rc == VMOP_E_FAULT && vmop_err_is_fault(err, "AlreadyUpgraded")) {
        vmop_err_clear(err);
        return VMOP_OK;
    }
    return rc;
}

static vmop_rc do_reconfigure(struct vs_ctx *ctx, const struct rs_desired *d,
                              const struct pl_backing *bk, const struct vs_obs *obs,
                              const struct pl_plan *plan, const struct pl_action *a,
                              struct vmop_err *err)
{
    struct vim_config_spec *cs = NULL;
    unsigned f = a->fields;
    char buuid[VS_UUID_MAX];
    vmop_rc rc = vim_config_spec_new(&cs);

    if (rc)
        return vmop_fail(err, rc, "out of memory");
    if (f & PL_F_NUM_CPUS)
        vim_cs_num_cpus(cs, (int)d->size.num_cpus);
    if (f & PL_F_MEMORY)
        vim_cs_memory_mb(cs, (long)d->size.memory_mb);
    if (f & PL_F_CPU_ALLOC) {
        struct vim_alloc al = {d->size.cpu_reservation_mhz, d->size.cpu_limit_mhz,
                               VIM_SHARES_NORMAL, 0, -1};
        vim_cs_cpu_alloc(cs, &al);
    }
    if (f & PL_F_MEM_ALLOC) {
        struct vim_alloc al = {d->size.mem_reservation_mb, d->size.mem_limit_mb, VIM_SHARES_NORMAL,
                               0, -1};
        vim_cs_mem_alloc(cs, &al);
    }
    for (size_t i = 0; !rc && (f & PL_F_NICS) && i < a->n_nic_ops; i++) {
        const struct pl_nic_op *op = &a->nic_ops[i];
        const struct vim_nic *n = op->op == PL_NIC_ADD ? NULL : nic_at(obs->vm, op->obs);
        const struct api_vm_nic *spec = op->desired < d->n_nics ? d->nics[op->desired].spec : NULL;
        if (op->op != PL_NIC_ADD && !n) {
            rc =
                vmop_fail(err, VMOP_E_INTERNAL, "plan names NIC %zu the VM does not have", op->obs);
            break;
        }
        if (op->op == PL_NIC_ADD)
            rc = vim_cs_nic_add_dvpg(cs, nic_type(d, op->desired), bk[op->desired].switch_uuid,
                                     bk[op->desired].portgroup_key,
                                     spec && nonempty(spec->mac_addr) ? spec->mac_addr : NULL);
        else if (op->op == PL_NIC_EDIT)
            rc = vim_cs_nic_edit_dvpg(cs, n, bk[op->desired].switch_uuid,
                                      bk[op->desired].portgroup_key);
        else
            rc = vim_cs_nic_remove(cs, n);
        if (rc)
            rc = vmop_fail(err, rc, "NIC change: %s", vmop_rc_str(rc));
    }
    if (!rc && (f & PL_F_MANAGED_BY))
        rc = vim_cs_managed_by(cs, PL_MANAGED_BY_EXT, PL_MANAGED_BY_TYPE);
    if (!rc && (f & PL_F_BIOS_UUID)) {
        lower_uuid(d->bios_uuid, buuid, sizeof(buuid));
        rc = vim_cs_bios_uuid(cs, buuid);
    }
    if (!rc && (f & PL_F_NAMESPACED_NAME))
        rc = vim_cs_extra_config(cs, PL_KEY_NAMESPACED, d->namespaced_name);
    if (!rc)
        rc = cs_config(cs, d, obs, f, err);
    if (rc && err && err->rc == VMOP_OK)
        rc = vmop_fail(err, rc, "config spec: %s", vmop_rc_str(rc));
    if (!rc && (f & PL_F_METADATA)) {
        if (!plan->metadata_json)
            rc = vmop_fail(err, VMOP_E_INTERNAL, "metadata change planned without a document");
        else
            rc = cs_guestinfo(cs, GI_KEY_METADATA, GI_KEY_METADATA_ENCODING, plan->metadata_json,
                              strlen(plan->metadata_json), err);
    }
    if (!rc && (f & PL_F_USERDATA))
        rc = cs_guestinfo(cs, GI_KEY_USERDATA, GI_KEY_USERDATA_ENCODING, d->userdata,
                          d->userdata_len, err);
    if (!rc)
        rc = vim_vm_reconfigure(ctx->client, &obs->vm->ref, cs, err);
    vim_config_spec_free(cs);
    return rc;
}

/* How long a task is followed through the change feed before it is simply awaited. */
#define TASK_FEED_MS 60000L
/* how long a power task's end counts as news wanted soon (vs_events.expect) */
#define EXPECT_POWER_MS 10000L

/* Awaits task, started on vm after ev->mark gave mark, through the change feed: what the feed
 * hears after the mark (the VM in power state want; VIM_POWER_UNKNOWN: the VM leaving it) ends
 * the wait without reading the task; a read of the task at pl_feed_backstop_ms() (1 s doubling to
 * 8 s) catches a task that failed or a feed that is slow. A feed that can no longer tell, or
 * TASK_FEED_MS spent, falls back to vim_task_wait. */
static vmop_rc await_via_feed(struct vs_ctx *ctx, const struct vs_events *ev,
                              const struct vim_moref *vm, const struct vim_moref *task,
                              uint64_t mark, enum vim_power_state want, struct vmop_err *err)
{
    double deadline = now_s() + TASK_FEED_MS / 1000.0;
    vmop_rc rc = VMOP_OK;

    for (unsigned attempt = 0; rc == VMOP_OK; attempt++) {
        double left = deadline - now_s();
        long slice = pl_feed_backstop_ms(attempt), ms;
        int done = 0, h;
        if (left <= 0)
            break;
        ms = slice < left * 1000.0 ? slice : (long)(left * 1000.0);
        h = want == VIM_POWER_UNKNOWN ? ev->wait_gone(ev->ud, vm->value, mark, ms)
                                      : ev->wait_power(ev->ud, vm->value, mark, want, ms);
        if (h > 0)
            return VMOP_OK;
        if (h < 0)
            break;
        rc = vim_task_poll(ctx->client, task, &done, NULL, err); /* the backstop */
        if (rc == VMOP_OK && done)
            return VMOP_OK;
    }
    return rc == VMOP_OK ? vim_task_wait(ctx->client, task, 0, NULL, err) : rc;
}

/* The power state a task operation leads to, for the feed to hear; VIM_POWER_UNKNOWN: none
 * (a reset ends where it began). */
static enum vim_power_state power_target(enum vim_power_op op)
{
    switch (op) {
    case VIM_OP_POWER_ON:
        return VIM_POWER_ON;
    case VIM_OP_POWER_OFF:
        return VIM_POWER_OFF;
    case VIM_OP_SUSPEND:
        return VIM_POWER_SUSPENDED;
    default:
        return VIM_POWER_UNKNOWN;
    }
}

/* The power task, followed through the change feed as a destroy is (await_via_feed; a task that
 * failed with InvalidPowerState: the VM was there already). 0: no feed holds the VM. */
static int power_via_feed(struct vs_ctx *ctx, const struct vs_events *ev,
                          const struct vim_moref *vm, enum vim_power_op op, vmop_rc *ret_rc,
                          struct vmop_err *err)
{
    enum vim_power_state want = power_target(op);
    struct vim_moref task;
    uint64_t mark = 0;
    vmop_rc rc;

    if (want == VIM_POWER_UNKNOWN || !ev || !ev->mark || !ev->wait_power ||
        !ev->mark(ev->ud, vm->value, &mark))
        return 0;
    rc = vim_vm_power_start(ctx->client, vm, op, &task, err);
    if (rc == VMOP_OK && ev->expect) /* a power change the reconcile waits on: heard promptly */
        ev->expect(ev->ud, vm->value, "runtime.powerState", EXPECT_POWER_MS);
    if (rc == VMOP_OK)
        rc = await_via_feed(ctx, ev, vm, &task, mark, want, err);
    if (rc == VMOP_E_FAULT && vmop_err_is_fault(err, "ManagedObjectNotFound"))
        err->rc = rc = VMOP_E_NOT_FOUND;
    *ret_rc = rc;
    return 1;
}

/* Runs a power task (heard through the feed when ev has one); "already in that state" is
 * success. */
static vmop_rc power_hard(struct vs_ctx *ctx, const struct vs_events *ev,
                          const struct vim_moref *vm, enum vim_power_op op, struct vmop_err *err)
{
    vmop_rc rc;
    if (!power_via_feed(ctx, ev, vm, op, &rc, err))
        rc = vim_vm_power(ctx->client, vm, op, err);
    if (rc == VMOP_E_FAULT && vmop_err_is_fault(err, "InvalidPowerState")) {
        vmop_err_clear(err);
        return VMOP_OK;
    }
    return rc;
}

/* Asks the guest (ShutdownGuest / StandbyGuest) and waits, bounded, for the power state: reads at
 * pl_soft_poll_ms() (the first after a delay: no guest is down at once), the last one at the
 * deadline, so a guest that never shuts down costs a timeout, not a hang. */
/* The soft wait with the change feed: 1 reached (rc VMOP_OK), 0 not by the deadline, -1 the feed
 * can no longer tell (poll for the rest); reads only as the backstop. */
static int soft_wait_feed(struct vs_ctx *ctx, const struct vs_events *ev,
                          const struct vim_moref *vm, uint64_t mark, enum vim_power_state want,
                          double deadline, vmop_rc *rc, struct vmop_err *err)
{
    for (unsigned attempt = 0;; attempt++) {
        double left = deadline - now_s();
        long slice = pl_feed_backstop_ms(attempt);
        enum vim_power_state s;
        int h;
        if (left <= 0)
            return 0;
        h = ev->wait_power(ev->ud, vm->value, mark, want,
                           slice < left * 1000.0 ? slice : (long)(left * 1000.0));
        if (h > 0)
            *rc = VMOP_OK;
        if (h != 0)
            return h;
        *rc = vim_vm_get_power(ctx->client, vm, &s, err); /* the backstop */
        if (*rc || s == want)
            return 1;
    }
}

static vmop_rc power_soft(struct vs_ctx *ctx, const struct vs_events *ev,
                          const struct vim_moref *vm, enum vim_power_op op,
                          enum vim_power_state want, struct vmop_err *err)
{
    double deadline;
    enum vim_power_state s;
    uint64_t mark = 0;
    int feed = ev && ev->mark && ev->wait_power && ev->mark(ev->ud, vm->value, &mark);
    vmop_rc rc = vim_vm_power(ctx->client, vm, op, err);

    if (rc == VMOP_E_FAULT && vmop_err_is_fault(err, "InvalidPowerState")) {
        vmop_err_clear(err); /* already there (or cannot be asked): one read decides */
        rc = vim_vm_get_power(ctx->client, vm, &s, err);
        if (rc || s == want)
            return rc;
    } else if (rc) {
        return rc;
    }
    deadline = now_s() + (double)ctx->soft_wait_ms / 1000.0;
    if (feed) {
        int h = soft_wait_feed(ctx, ev, vm, mark, want, deadline, &rc, err);
        if (h > 0)
            return rc;
        if (h == 0)
            goto timeout;
    }
    for (unsigned attempt = 0;; attempt++) {
        double left = deadline - now_s();
        long delay = pl_soft_poll_ms(attempt);
        if (left <= 0)
            break;
        sleep_ms(delay < left * 1000.0 ? delay : (long)(left * 1000.0));
        rc = vim_vm_get_power(ctx->client, vm, &s, err);
        if (rc)
            return rc;
        if (s == want)
            return VMOP_OK;
    }
timeout:
    return vmop_fail_fault(err, VMOP_E_TIMEOUT, "GuestOperationTimeout", 0,
                           "the guest of VM %s did not reach %s within %ld ms (%s)", vm->value,
                           vim_power_state_str(want), ctx->soft_wait_ms, vim_power_op_method(op));
}

static vmop_rc do_power(struct vs_ctx *ctx, const struct vs_events *ev, const struct vim_moref *vm,
                        const struct pl_action *a, struct vmop_err *err)
{
    enum vim_power_op hard, soft;
    enum vim_power_state want;
    vmop_rc rc;

    if (a->kind == PL_POWER_ON)
        return power_hard(ctx, ev, vm, VIM_OP_POWER_ON, err);
    if (a->kind == PL_POWER_OFF) {
        hard = VIM_OP_POWER_OFF;
        soft = VIM_OP_SHUTDOWN_GUEST;
        want = VIM_POWER_OFF;
    } else {
        hard = VIM_OP_SUSPEND;
        soft = VIM_OP_STANDBY_GUEST;
        want = VIM_POWER_SUSPENDED;
    }
    if (a->mode == PL_MODE_HARD)
        return power_hard(ctx, ev, vm, hard, err);
    rc = power_soft(ctx, ev, vm, soft, want, err);
    if (rc == VMOP_OK || a->mode == PL_MODE_SOFT || rc == VMOP_E_NOT_FOUND ||
        rc == VMOP_E_TRANSPORT || rc == VMOP_E_AUTH)
        return rc;
    vmop_err_clear(err); /* TrySoft: the guest could not do it (no tools, timeout): go hard */
    return power_hard(ctx, ev, vm, hard, err);
}

/* Writes the restart marker (PL_KEY_LAST_RESTART = d->restart_for), then restarts by mode (plan.h
 * PL_RESTART). *ret_how: what ran, for events. */
static vmop_rc do_restart(struct vs_ctx *ctx, const struct rs_desired *d,
                          const struct vim_moref *vm, const struct pl_action *a,
                          const char **ret_how, struct vmop_err *err)
{
    struct vim_config_spec *cs = NULL;
    vmop_rc rc = vim_config_spec_new(&cs);
    if (rc)
        return vmop_fail(err, rc, "out of memory");
    rc = vim_cs_extra_config(cs, PL_KEY_LAST_RESTART, d->restart_for);
    if (rc)
        rc = vmop_fail(err, rc, "restart marker '%s' cannot be set", d->restart_for);
    else
        rc = vim_vm_reconfigure(ctx->client, vm, cs, err);
    vim_config_spec_free(cs);
    if (rc)
        return rc;
    if (a->mode == PL_MODE_HARD) {
        *ret_how = "ResetVM_Task";
        return vim_vm_power(ctx->client, vm, VIM_OP_RESET, err);
    }
    *ret_how = "RebootGuest";
    rc = vim_vm_power(ctx->client, vm, VIM_OP_REBOOT_GUEST, err);
    if (rc && a->mode == PL_MODE_TRYSOFT && rc != VMOP_E_TRANSPORT && rc != VMOP_E_AUTH &&
        rc != VMOP_E_NOT_FOUND) {
        vmop_err_clear(err); /* the guest cannot reboot itself (no tools): reset */
        *ret_how = "ResetVM_Task (RebootGuest failed)";
        rc = vim_vm_power(ctx->client, vm, VIM_OP_RESET, err);
    }
    return rc;
}

/* ---- apply ------------------------------------------------------------------------------------
 */

void vs_outcome_free(struct vs_outcome *o)
{
    if (o)
        vs_obs_free(&o->obs);
}

static void note_done(struct vs_outcome *o, const struct pl_action *a)
{
    size_t len = strlen(o->done);
    char fields[160] = "";
    o->did |= VM_DID(vm_step_of_kind(a->kind));
    if (a->kind == PL_RECONFIGURE)
        pl_fields_str(a->fields, fields, sizeof(fields));
    snprintf(o->done + len, sizeof(o->done) - len, "%s%s%s%s%s%s", len ? ", " : "",
             pl_kind_str(a->kind), *fields ? "(" : "", fields, *fields ? ")" : "",
             a->kind == PL_POWER_OFF || a->kind == PL_SUSPEND || a->kind == PL_RESTART
                 ? (a->mode == PL_MODE_HARD   ? ""
                    : a->mode == PL_MODE_SOFT ? "[Soft]"
                                              : "[TrySoft]")
                 : "");
}

static void note_failure(struct vs_outcome *o, enum vm_step step, const struct vmop_err *err)
{
    o->failed = 1;
    o->failed_step = step;
    if (err) {
        snprintf(o->fault, sizeof(o->fault), "%s", err->fault);
        snprintf(o->message, sizeof(o->message), "%s", err->msg);
    }
}

/* Re-reads the VM: by the moref we know (the observed VM's, else known: the one just cloned, or
 * NULL), falling back to the identity search. */
static vmop_rc reobserve_known(struct vs_ctx *ctx, const struct rs_desired *d, struct vs_obs *obs,
                               const char *known, struct vmop_err *err)
{
    char id[VIM_MOREF_VALUE_MAX] = "";
    if (obs->present && obs->vm)
        snprintf(id, sizeof(id), "%s", obs->vm->ref.value);
    else if (known)
        snprintf(id, sizeof(id), "%s", known);
    vs_obs_free(obs);
    return vs_observe(ctx, d, id, obs, err);
}

static vmop_rc reobserve(struct vs_ctx *ctx, const struct rs_desired *d, struct vs_obs *obs,
                         struct vmop_err *err)
{
    return reobserve_known(ctx, d, obs, NULL, err);
}

/* A legacy VM (ownership.h: made before the vmop.uid mark, proven by the resource's status)
 * gets the mark, alone in one reconfigure; then it is read again. */
static vmop_rc adopt(struct vs_ctx *ctx, const struct rs_desired *d, struct vs_obs *obs,
                     struct vmop_err *err)
{
    struct vim_config_spec *cs = NULL;
    vmop_rc rc = vim_config_spec_new(&cs);
    if (rc)
        return vmop_fail(err, rc, "out of memory");
    rc = vim_cs_extra_config(cs, OWN_KEY_UID, d->resource_uid);
    if (rc)
        rc = vmop_fail(err, rc, "config spec: %s", vmop_rc_str(rc));
    else
        rc = vim_vm_reconfigure(ctx->client, &obs->vm->ref, cs, err);
    vim_config_spec_free(cs);
    if (!rc)
        rc = reobserve(ctx, d, obs, err);
    if (!rc && (!obs->present || obs->legacy))
        rc = vmop_fail(err, VMOP_E_INTERNAL, "the %s mark did not stick", OWN_KEY_UID);
    return rc;
}

vmop_rc vs_apply(struct vs_ctx *ctx, const struct rs_desired *d, const char *unique_id,
                 const struct vs_events *ev, struct vs_outcome *ret, struct vmop_err *err)
{
    struct vs_backing_buf bufs[API_VM_MAX_NICS];
    struct pl_backing bk[API_VM_MAX_NICS];
    struct pl_plan plan = {0};
    struct pl_obs po;
    enum vm_step step = VM_STEP_LOOKUP;
    char created[VIM_MOREF_VALUE_MAX] = ""; /* the VM this call cloned: read by its moref */
    int replans = 0, again = 1;
    vmop_rc rc;

    if (ret)
        memset(ret, 0, sizeof(*ret));
    if (!ctx || !d || !ret || d->n_nics > API_VM_MAX_NICS || !nonempty(d->instance_uuid) ||
        !nonempty(d->resource_uid))
        return vmop_fail(err, VMOP_E_INVALID, "vs_apply: missing argument");
    memset(bk, 0, sizeof(bk));
    check_session(ctx);
    rc = lookup_backings(ctx, d, bufs, bk, err);
    if (!rc) {
        step = VM_STEP_OBSERVE;
        ret->observed_ms = vmop_mono_ms();
        rc = vs_observe(ctx, d, unique_id, &ret->obs, err);
        ret->foreign = ret->obs.foreign;
    }
    if (!rc && !ret->obs.present && ret->obs.foreign.found) {
        /* a VM that is not this resource's holds its identity: touch nothing, create nothing */
        const struct vs_foreign *fo = &ret->obs.foreign;
        ret->conflict = 1;
        step = VM_STEP_OWNERSHIP;
        rc = vmop_fail_fault(
            err, VMOP_E_EXISTS, VS_REASON_CONFLICT, 0,
            "VM %s %s but was not created by vmop for this resource: %s; vmop leaves it "
            "untouched and creates nothing in its place",
            fo->ref,
            fo->by_instance_uuid ? "has this resource's spec.instanceUUID"
                                 : "is named by this resource's status.uniqueID",
            fo->why);
    }
    if (!rc && ret->obs.present && ret->obs.legacy) {
        step = VM_STEP_ADOPT;
        ret->observed_ms = vmop_mono_ms();
        rc = adopt(ctx, d, &ret->obs, err);
        if (!rc) {
            ret->adopted = 1;
            ret->changed = 1;
            ret->did |= VM_DID(VM_STEP_ADOPT);
            snprintf(ret->done, sizeof(ret->done), "adopt(%s)", OWN_KEY_UID);
        }
    }
    while (!rc && again) {
        struct pl_input in = {d, bk, &po, ret->created};
        again = 0;
        step = VM_STEP_PLAN;
        pl_plan_free(&plan);
        rc = vs_obs_to_plan(&ret->obs, &po, err);
        if (!rc)
            rc = pl_plan(&in, &plan, err);
        if (rc)
            break;
        ret->needs_power_cycle = plan.needs_power_cycle;
        ret->deferred_fields = plan.deferred_fields;
        ret->power_unreachable = plan.power_unreachable;
        ret->disk_not_shrunk = plan.disk_not_shrunk;
        ret->disk_kb = plan.disk_kb;
        for (size_t i = 0; i < plan.n && !rc; i++) {
            const struct pl_action *a = &plan.actions[i];
            struct vim_moref vm;
            step = vm_step_of_kind(a->kind);
            if (a->deferred) { /* cannot happen: a REOBSERVE always comes first */
                rc =
                    vmop_fail(err, VMOP_E_INTERNAL, "plan: deferred %s reached", vm_step_str(step));
                break;
            }
            if (a->kind == PL_REOBSERVE) {
                if (++replans > VS_MAX_REPLANS) {
                    rc = vmop_fail(err, VMOP_E_INTERNAL,
                                   "VM %s does not converge: vCenter keeps showing a different "
                                   "NIC configuration after %d changes",
                                   ret->obs.vm ? ret->obs.vm->ref.value : "", VS_MAX_REPLANS);
                    break;
                }
                ret->observed_ms = vmop_mono_ms();
                rc = reobserve_known(ctx, d, &ret->obs, created[0] ? created : NULL, err);
                if (!rc && !ret->obs.present)
                    rc = vmop_fail(err, VMOP_E_NOT_FOUND, "the VM vanished while being set up");
                again = 1;
                break;
            }
            switch (a->kind) {
            case PL_CREATE:
                rc = vs_clone(ctx, d, &vm, err);
                if (rc && err &&
                    (vmop_err_is_fault(err, VS_REASON_POLICY_NOT_FOUND) ||
                     vmop_err_is_fault(err, VS_REASON_NO_DATASTORE)))
                    step = VM_STEP_STORAGE;
                if (!rc) {
                    ret->created = 1;
                    snprintf(created, sizeof(created), "%s", vm.value);
                    /* the next action is REOBSERVE: make it read this VM */
                    vs_obs_free(&ret->obs);
                    ret->obs.present = 0;
                }
                break;
            case PL_RECONFIGURE:
                rc = do_reconfigure(ctx, d, bk, &ret->obs, &plan, a, err);
                break;
            case PL_POWER_ON:
            case PL_POWER_OFF:
            case PL_SUSPEND:
                rc = do_power(ctx, ev, &ret->obs.vm->ref, a, err);
                break;
            case PL_UPGRADE:
                rc = do_upgrade(ctx, &ret->obs.vm->ref, a->hw_version, err);
                break;
            case PL_RESTART:
                rc = do_restart(ctx, d, &ret->obs.vm->ref, a, &ret->restart_how, err);
                break;
            case PL_DESTROY:
            case PL_REOBSERVE:
                rc = vmop_fail(err, VMOP_E_INTERNAL, "plan: unexpected %s", vm_step_str(step));
                break;
            }
            if (!rc) {
                ret->changed = 1;
                note_done(ret, a);
            }
        }
    }
    pl_plan_free(&plan);
    if (rc)
        note_failure(ret, step, err);
    if (ret->changed && !again) {
        /* status comes from what vCenter shows: read it again (a failure here is reported
         * unless an earlier one already was) */
        struct vmop_err rerr = {0};
        vmop_rc rrc;
        ret->observed_ms = vmop_mono_ms();
        rrc = reobserve(ctx, d, &ret->obs, &rerr);
        if (rrc && !rc) {
            rc = vmop_fail(err, rrc, "%s", rerr.msg);
            note_failure(ret, VM_STEP_OBSERVE, err);
        }
    }
    return rc;
}

/* ---- delete -----------------------------------------------------------------------------------
 */

/* Destroy_Task, awaited through the change feed when it holds the VM (await_via_feed: the VM
 * leaving the feed ends the wait; a failed task leaves the VM where it was). A VM that is gone
 * is VMOP_E_NOT_FOUND. */
static vmop_rc destroy_vm(struct vs_ctx *ctx, const struct vs_events *ev,
                          const struct vim_moref *vm, struct vmop_err *err)
{
    struct vim_moref task;
    uint64_t mark = 0;
    int feed = ev && ev->mark && ev->wait_gone && ev->mark(ev->ud, vm->value, &mark);
    vmop_rc rc = feed ? vim_vm_destroy_start(ctx->client, vm, &task, err)
                      : vim_vm_destroy(ctx->client, vm, err);

    if (feed && rc == VMOP_OK)
        rc = await_via_feed(ctx, ev, vm, &task, mark, VIM_POWER_UNKNOWN, err);
    if (rc == VMOP_E_FAULT && vmop_err_is_fault(err, "ManagedObjectNotFound"))
        err->rc = rc = VMOP_E_NOT_FOUND;
    return rc;
}

/* 1 when ev vouches for the VM named by unique_id as the resource's (vs_events.vouch: its
 * ownership marks as last heard are the resource's and the VM sits in d's folder), with its
 * power state in *ret_power: it is the VM a read would find and judge OWN_OURS. */
static int vouched(struct vs_ctx *ctx, const struct rs_desired *d, const char *unique_id,
                   const struct vs_events *ev, enum vim_power_state *ret_power)
{
    struct own_ident id;
    struct vim_moref folder;
    struct vmop_err lerr = {0};
    const char *vals[OWN_MARK_PATHS];

    if (!ev || !ev->vouch || !nonempty(unique_id) || !nonempty(d->instance_uuid) ||
        !nonempty(d->namespaced_name) || !nonempty(d->resource_uid))
        return 0;
    check_session(ctx);
    if (lookup_folder(ctx, d->folder, &folder, &lerr) != VMOP_OK) {
        vmop_err_clear(&lerr); /* vs_observe reports it */
        return 0;
    }
    ident_of(d, unique_id, &id);
    own_mark_values(&id, folder.value, vals);
    return ev->vouch(ev->ud, unique_id, vals, OWN_MARK_PATHS, ret_power);
}

vmop_rc vs_delete(struct vs_ctx *ctx, const struct rs_desired *d, const char *unique_id,
                  enum api_power_mode mode, const struct vs_events *ev, struct vs_deleted *ret,
                  struct vmop_err *err)
{
    struct vs_obs obs = {0};
    struct pl_obs po = {0};
    struct pl_plan plan;
    struct vim_moref heard;
    const struct vim_moref *vm = NULL;
    enum vim_power_state power;
    vmop_rc rc = VMOP_OK;

    if (ret)
        memset(ret, 0, sizeof(*ret));
    if (!ctx || !d || !ret)
        return vmop_fail(err, VMOP_E_INVALID, "vs_delete: missing argument");
    if (vouched(ctx, d, unique_id, ev, &power) &&
        vim_moref_set(&heard, "VirtualMachine", unique_id) == VMOP_OK) {
        po.present = 1;
        po.power = pl_power_of(power);
        vm = &heard;
    } else {
        rc = vs_observe(ctx, d, unique_id, &obs, err);
        if (!rc)
            ret->foreign = obs.foreign; /* never touched: only reported */
        if (!rc)
            rc = vs_obs_to_plan(&obs, &po, err);
        if (rc)
            goto out;
        vm = obs.present ? &obs.vm->ref : NULL;
    }
    pl_plan_delete(&po, mode, &plan);
    for (size_t i = 0; i < plan.n && !rc; i++) {
        const struct pl_action *a = &plan.actions[i];
        if (a->kind == PL_DESTROY) {
            rc = destroy_vm(ctx, ev, vm, err);
            if (rc == VMOP_E_NOT_FOUND) {
                vmop_err_clear(err);
                rc = VMOP_OK;
            } else if (!rc) {
                ret->destroyed = 1;
            }
        } else {
            rc = do_power(ctx, ev, vm, a, err);
        }
    }
    pl_plan_free(&plan);
    if (!rc)
        ret->gone = 1;
out:
    vs_obs_free(&obs);
    return rc;
}

/* ---- placement facts --------------------------------------------------------------------------
 */

vmop_rc vs_min_host_mhz(struct vs_ctx *ctx, const char *pool_path, int64_t *ret_mhz,
                        struct vmop_err *err)
{
    char key[VS_KEY_MAX];
    struct vs_centry e = {0};
    struct vim_moref ref, owner;
    int mhz = 0;
    vmop_rc rc;

    if (!ctx || !nonempty(pool_path) || !ret_mhz)
        return vmop_fail(err, VMOP_E_INVALID, "vs_min_host_mhz: missing argument");
    snprintf(key, sizeof(key), "mhz|%s", pool_path);
    if (cache_get(ctx, key, ctx->mhz_ttl_s, &e, NULL, 0, NULL, 0)) {
        *ret_mhz = e.num;
        return VMOP_OK;
    }
    rc = vim_find_by_path(ctx->client, pool_path, NULL, &ref, err);
    if (rc)
        return fail_not_found(err, rc, "resource pool", pool_path);
    if (strcmp(ref.type, "ClusterComputeResource") == 0 || strcmp(ref.type, "ComputeResource") == 0)
        owner = ref;
    else if ((rc = vim_pool_owner(ctx->client, &ref, &owner, err)))
        return rc;
    rc = vim_cluster_min_cpu_mhz(ctx->client, &owner, &mhz, err);
    if (rc)
        return rc;
    if (mhz <= 0)
        return vmop_fail_fault(err, VMOP_E_NOT_FOUND, "NotFound", 0,
                               "no connected host in the cluster of \"%s\"", pool_path);
    cache_put(ctx, key, &owner, 0, NULL, NULL, mhz);
    *ret_mhz = mhz;
    return VMOP_OK;
}
