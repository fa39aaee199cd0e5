/* plan.c: desired (resolver output) + observed (vCenter) -> ordered vCenter actions (pure).
 *
 * Owns: field comparison, NIC matching, power-state transitions and the guestinfo metadata
 * document with the observed MACs. The rules are in plan.h. No I/O, no logging; user data is
 * compared in place and never copied.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "guestinfo.h"
#include "plan.h"
#include "vbuf.h"

#define PL_MAX_LIST 256 /* entries of one address / nameserver / route list we accept */

enum vm_step vm_step_of_kind(enum pl_kind k)
{
    switch (k) {
    case PL_CREATE:
        return VM_STEP_CREATE;
    case PL_REOBSERVE:
        return VM_STEP_REOBSERVE;
    case PL_RECONFIGURE:
        return VM_STEP_RECONFIGURE;
    case PL_POWER_ON:
        return VM_STEP_POWER_ON;
    case PL_POWER_OFF:
        return VM_STEP_POWER_OFF;
    case PL_SUSPEND:
        return VM_STEP_SUSPEND;
    case PL_DESTROY:
        return VM_STEP_DESTROY;
    case PL_UPGRADE:
        return VM_STEP_UPGRADE;
    case PL_RESTART:
        return VM_STEP_RESTART;
    }
    return VM_STEP_NONE;
}

const char *pl_kind_str(enum pl_kind k)
{
    switch (k) {
    case PL_CREATE:
        return "create";
    case PL_REOBSERVE:
        return "re-observe";
    case PL_RECONFIGURE:
        return "reconfigure";
    case PL_POWER_ON:
        return "power-on";
    case PL_POWER_OFF:
        return "power-off";
    case PL_SUSPEND:
        return "suspend";
    case PL_DESTROY:
        return "destroy";
    case PL_UPGRADE:
        return "upgrade";
    case PL_RESTART:
        return "restart";
    }
    return "?";
}

const char *pl_mode_str(enum pl_mode m)
{
    switch (m) {
    case PL_MODE_HARD:
        return "Hard";
    case PL_MODE_SOFT:
        return "Soft";
    case PL_MODE_TRYSOFT:
        return "TrySoft";
    }
    return "?";
}

enum pl_mode pl_mode_from_api(enum api_power_mode m)
{
    switch (m) {
    case API_MODE_HARD:
        return PL_MODE_HARD;
    case API_MODE_SOFT:
        return PL_MODE_SOFT;
    case API_MODE_TRYSOFT:
    case API_MODE_UNSET:
        break;
    }
    return PL_MODE_TRYSOFT;
}

long pl_soft_poll_ms(unsigned attempt)
{
    long ms = PL_SOFT_POLL_MIN_MS;
    for (unsigned i = 0; i < attempt && ms < PL_SOFT_POLL_MAX_MS; i++)
        ms *= 2;
    return ms > PL_SOFT_POLL_MAX_MS ? PL_SOFT_POLL_MAX_MS : ms;
}

long pl_feed_backstop_ms(unsigned attempt)
{
    long ms = PL_FEED_BACKSTOP_MIN_MS;
    for (unsigned i = 0; i < attempt && ms < PL_FEED_BACKSTOP_MAX_MS; i++)
        ms *= 2;
    return ms > PL_FEED_BACKSTOP_MAX_MS ? PL_FEED_BACKSTOP_MAX_MS : ms;
}

void pl_fields_str(unsigned f, char *buf, size_t size)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {
        {PL_F_NUM_CPUS, "numCPUs"},
        {PL_F_MEMORY, "memoryMB"},
        {PL_F_CPU_RESERVATION, "cpuAllocation.reservation"},
        {PL_F_CPU_LIMIT, "cpuAllocation.limit"},
        {PL_F_MEM_RESERVATION, "memoryAllocation.reservation"},
        {PL_F_MEM_LIMIT, "memoryAllocation.limit"},
        {PL_F_NICS, "NICs"},
        {PL_F_MANAGED_BY, "managedBy"},
        {PL_F_BIOS_UUID, "uuid"},
        {PL_F_NAMESPACED_NAME, PL_KEY_NAMESPACED},
        {PL_F_METADATA, GI_KEY_METADATA},
        {PL_F_USERDATA, GI_KEY_USERDATA},
        {PL_F_GUEST_ID, "guestId"},
        {PL_F_FIRMWARE, "firmware"},
        {PL_F_BOOT_OPTIONS, "bootOptions"},
        {PL_F_CBT, "changeTrackingEnabled"},
        {PL_F_EXTRA_CONFIG, "extraConfig"},
        {PL_F_BOOT_DISK, "bootDisk"},
        {PL_F_HW_VERSION, "version"},
    };
    struct vbuf b;
    if (!buf || size == 0)
        return;
    vbuf_init(&b, size - 1);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (f & names[i].bit)
            vbuf_addf(&b, "%s%s", b.len ? "," : "", names[i].name);
    snprintf(buf, size, "%s", vbuf_error(&b) ? "many fields" : vbuf_str(&b));
    vbuf_free(&b);
}

static int streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static int nonempty(const char *s)
{
    return s && *s;
}

/* ---- guestinfo metadata ---------------------------------------------------------------------- */

/* The strings of a JSON string array (borrowed), into a malloc'd array. Non-strings: invalid. */
static vmop_rc json_strings(const cJSON *arr, const char *what, const char ***ret, size_t *ret_n,
                            struct vmop_err *err)
{
    const cJSON *it;
    const char **v;
    size_t n = 0;
    int size = arr ? cJSON_GetArraySize(arr) : 0;

    *ret = NULL;
    *ret_n = 0;
    if (size <= 0)
        return VMOP_OK;
    if ((size_t)size > PL_MAX_LIST)
        return vmop_fail(err, VMOP_E_TOOBIG, "%s: more than %d entries", what, PL_MAX_LIST);
    v = calloc((size_t)size, sizeof(*v));
    if (!v)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    cJSON_ArrayForEach(it, arr)
    {
        if (!cJSON_IsString(it) || !it->valuestring) {
            free(v);
            return vmop_fail(err, VMOP_E_INVALID, "%s: entries must be strings", what);
        }
        v[n++] = it->valuestring;
    }
    *ret = v;
    *ret_n = n;
    return VMOP_OK;
}

static vmop_rc json_routes(const cJSON *arr, const char *what, struct gi_route **ret, size_t *ret_n,
                           struct vmop_err *err)
{
    const cJSON *it;
    struct gi_route *v;
    size_t n = 0;
    int size = arr ? cJSON_GetArraySize(arr) : 0;

    *ret = NULL;
    *ret_n = 0;
    if (size <= 0)
        return VMOP_OK;
    if ((size_t)size > PL_MAX_LIST)
        return vmop_fail(err, VMOP_E_TOOBIG, "%s: more than %d entries", what, PL_MAX_LIST);
    v = calloc((size_t)size, sizeof(*v));
    if (!v)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    cJSON_ArrayForEach(it, arr)
    {
        const cJSON *to = cJSON_GetObjectItemCaseSensitive(it, "to");
        const cJSON *via = cJSON_GetObjectItemCaseSensitive(it, "via");
        const cJSON *metric = cJSON_GetObjectItemCaseSensitive(it, "metric");
        if (!cJSON_IsString(to) || !cJSON_IsString(via)) {
            free(v);
            return vmop_fail(err, VMOP_E_INVALID, "%s: each route needs to and via", what);
        }
        v[n].to = to->valuestring;
        v[n].via = via->valuestring;
        v[n].metric = cJSON_IsNumber(metric) ? metric->valueint : 0;
        n++;
    }
    *ret = v;
    *ret_n = n;
    return VMOP_OK;
}

static int has_ipv4(const char *const *addrs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (addrs[i] && strchr(addrs[i], '.'))
            return 1;
    return 0;
}

/* A malloc'd copy of n pointers (borrowed strings), or NULL when n is 0 / out of memory. */
static const char **ptrs_dup(const char *const *v, size_t n)
{
    const char **c = n ? calloc(n, sizeof(*c)) : NULL;
    for (size_t i = 0; c && i < n; i++)
        c[i] = v[i];
    return c;
}

/* Adds the pool address (and the pool's gateway, nameservers, search domains where the spec has
 * none) to an interface. The arrays stay malloc'd (freed with the others). */
static vmop_rc add_pool(struct gi_iface *f, const struct rs_nic *n, struct vmop_err *err)
{
    const char **a = calloc(f->n_addresses + 1, sizeof(*a));
    if (!a)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    for (size_t i = 0; i < f->n_addresses; i++)
        a[i] = f->addresses[i];
    a[f->n_addresses] = n->pool_cidr;
    free((void *)f->addresses);
    f->addresses = a;
    f->n_addresses++;
    if (!f->gateway4 && nonempty(n->pool_gateway4))
        f->gateway4 = n->pool_gateway4;
    if (f->n_nameservers == 0 && n->n_pool_nameservers) {
        free((void *)f->nameservers);
        f->nameservers = ptrs_dup(n->pool_nameservers, n->n_pool_nameservers);
        if (!f->nameservers)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        f->n_nameservers = n->n_pool_nameservers;
    }
    if (f->n_search == 0 && n->n_pool_search) {
        free((void *)f->search);
        f->search = ptrs_dup(n->pool_search, n->n_pool_search);
        if (!f->search)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        f->n_search = n->n_pool_search;
    }
    return VMOP_OK;
}

vmop_rc pl_metadata_json(const struct rs_desired *d, const struct pl_obs *obs, char **ret_json,
                         struct vmop_err *err)
{
    struct gi_iface ifaces[API_VM_MAX_NICS];
    struct gi_meta m = {0};
    const char **keys = NULL;
    size_t n_keys = 0;
    vmop_rc rc = VMOP_OK;

    memset(ifaces, 0, sizeof(ifaces));
    if (!d || !ret_json)
        return vmop_fail(err, VMOP_E_INVALID, "pl_metadata_json: missing argument");
    if (d->n_nics > API_VM_MAX_NICS)
        return vmop_fail(err, VMOP_E_INVALID, "more than %d interfaces", API_VM_MAX_NICS);
    for (size_t i = 0; i < d->n_nics && rc == VMOP_OK; i++) {
        const struct rs_nic *n = &d->nics[i];
        const struct api_vm_nic *s = n->spec;
        struct gi_iface *f = &ifaces[i];
        f->name = n->name;
        f->mac = obs && obs->present && i < obs->n_nics ? obs->nics[i].mac : NULL;
        if (!s) {
            f->dhcp4 = 1;
            continue;
        }
        f->set_name = nonempty(s->guest_device_name) ? s->guest_device_name : NULL;
        f->gateway4 = nonempty(s->gateway4) ? s->gateway4 : NULL;
        f->gateway6 = nonempty(s->gateway6) ? s->gateway6 : NULL;
        f->mtu = (long)s->mtu;
        f->dhcp6 = s->dhcp6;
        rc = json_strings(s->addresses, "addresses", (const char ***)&f->addresses, &f->n_addresses,
                          err);
        if (!rc)
            rc = json_strings(s->nameservers, "nameservers", (const char ***)&f->nameservers,
                              &f->n_nameservers, err);
        if (!rc)
            rc = json_strings(s->search_domains, "searchDomains", (const char ***)&f->search,
                              &f->n_search, err);
        if (!rc)
            rc =
                json_routes(s->routes, "routes", (struct gi_route **)&f->routes, &f->n_routes, err);
        /* No IPv4 address given: the static pool's address when one was allocated, else DHCP.
         * The interface's own gateway4 / nameservers / searchDomains win over the pool's. */
        if (!rc && !s->dhcp4 && !has_ipv4(f->addresses, f->n_addresses) && nonempty(n->pool_cidr))
            rc = add_pool(f, n, err);
        /* then spec.network.nameservers / searchDomains, as VM Operator's per-interface
         * defaults (useGlobal*AsDefault; the resolver leaves them NULL when turned off) */
        if (!rc && f->n_nameservers == 0 && d->global_nameservers)
            rc = json_strings(d->global_nameservers, "spec.network.nameservers",
                              (const char ***)&f->nameservers, &f->n_nameservers, err);
        if (!rc && f->n_search == 0 && d->global_search)
            rc = json_strings(d->global_search, "spec.network.searchDomains",
                              (const char ***)&f->search, &f->n_search, err);
        f->dhcp4 = s->dhcp4 || !has_ipv4(f->addresses, f->n_addresses);
    }
    if (rc)
        goto out;
    rc = json_strings(d->ssh_keys, "sshAuthorizedKeys", &keys, &n_keys, err);
    if (rc)
        goto out;
    m.instance_id = d->instance_id;
    m.hostname = d->hostname;
    m.public_keys = keys;
    m.n_public_keys = n_keys;
    m.wait_on_network4 = d->wait_on_network4 == RS_UNSET ? -1 : d->wait_on_network4 == RS_YES;
    m.wait_on_network6 = d->wait_on_network6 == RS_UNSET ? -1 : d->wait_on_network6 == RS_YES;
    m.ifaces = ifaces;
    m.n_ifaces = d->n_nics;
    rc = gi_metadata_json(&m, ret_json, err);
out:
    for (size_t i = 0; i < API_VM_MAX_NICS; i++) {
        free((void *)ifaces[i].addresses);
        free((void *)ifaces[i].nameservers);
        free((void *)ifaces[i].search);
        free((void *)ifaces[i].routes);
    }
    free(keys);
    return rc;
}

/* ---- comparison ------------------------------------------------------------------------------ */

/* Allocation values as they read: unset reservation = 0, unset limit = unlimited. */
static long long res_of(long long v)
{
    return v == PL_ALLOC_UNSET ? 0 : v;
}
static long long lim_of(long long v)
{
    return v == PL_ALLOC_UNSET ? -1 : v;
}

static unsigned diff_hardware(const struct rs_desired *d, const struct pl_obs *o)
{
    unsigned f = 0;
    if (o->num_cpus != d->size.num_cpus)
        f |= PL_F_NUM_CPUS;
    if (o->memory_mb != d->size.memory_mb)
        f |= PL_F_MEMORY;
    if (res_of(o->cpu_reservation) != d->size.cpu_reservation_mhz)
        f |= PL_F_CPU_RESERVATION;
    if (lim_of(o->cpu_limit) != d->size.cpu_limit_mhz)
        f |= PL_F_CPU_LIMIT;
    if (res_of(o->mem_reservation) != d->size.mem_reservation_mb)
        f |= PL_F_MEM_RESERVATION;
    if (lim_of(o->mem_limit) != d->size.mem_limit_mb)
        f |= PL_F_MEM_LIMIT;
    return f;
}

static unsigned diff_identity(const struct rs_desired *d, const struct pl_obs *o)
{
    unsigned f = 0;
    if (!streq(o->managed_by_ext, PL_MANAGED_BY_EXT) ||
        !streq(o->managed_by_type, PL_MANAGED_BY_TYPE))
        f |= PL_F_MANAGED_BY;
    if (nonempty(d->bios_uuid) && (!o->bios_uuid || strcasecmp(o->bios_uuid, d->bios_uuid) != 0))
        f |= PL_F_BIOS_UUID;
    if (!streq(o->namespaced_name, d->namespaced_name))
        f |= PL_F_NAMESPACED_NAME;
    return f;
}

/* The class is held (resolve.h) on a VM this apply did not create. */
static int held(const struct pl_input *in)
{
    return in->desired->class_held && !in->created;
}

/* Desired NIC i has an adapter type (from the class) that observed NIC i does not have. */
static int nic_type_differs(const struct pl_input *in, size_t i)
{
    const char *t = in->desired->nics[i].device_type;
    return !held(in) && nonempty(t) && i < in->obs->n_nics &&
           !streq(in->obs->nics[i].device_type, t);
}

static void diff_nics(const struct pl_input *in, struct pl_action *a)
{
    const struct rs_desired *d = in->desired;
    const struct pl_obs *o = in->obs;
    size_t n = d->n_nics > o->n_nics ? d->n_nics : o->n_nics, retype = n;

    a->n_nic_ops = 0;
    /* from the first NIC of the wrong type on, every NIC is removed and added again in order, so
     * that positions (device key order) stay what the spec says */
    for (size_t i = 0; i < d->n_nics && i < o->n_nics && retype == n; i++)
        if (nic_type_differs(in, i))
            retype = i;
    for (size_t i = retype; i < o->n_nics; i++)
        a->nic_ops[a->n_nic_ops++] = (struct pl_nic_op){PL_NIC_REMOVE, i, i};
    for (size_t i = retype; i < d->n_nics; i++)
        a->nic_ops[a->n_nic_ops++] = (struct pl_nic_op){PL_NIC_ADD, i, i};
    if (retype < n)
        n = retype;
    for (size_t i = 0; i < n && a->n_nic_ops < 2 * PL_MAX_OBS_NICS; i++) {
        struct pl_nic_op *op = &a->nic_ops[a->n_nic_ops];
        if (i < d->n_nics && i < o->n_nics) {
            const struct pl_backing *b = &in->backings[i];
            if (streq(o->nics[i].switch_uuid, b->switch_uuid) &&
                streq(o->nics[i].portgroup_key, b->portgroup_key))
                continue;
            op->op = PL_NIC_EDIT;
        } else if (i < d->n_nics) {
            op->op = PL_NIC_ADD;
        } else {
            op->op = PL_NIC_REMOVE;
        }
        op->desired = i;
        op->obs = i;
        a->n_nic_ops++;
    }
}

static int encoding_ok(const char *enc)
{
    return streq(enc, GI_ENCODING_GZIP_BASE64);
}

static unsigned diff_guestinfo(const struct rs_desired *d, const struct pl_obs *o,
                               const char *metadata)
{
    unsigned f = 0;
    if (!d->cloud_init)
        return 0;
    if (!o->metadata || !streq(o->metadata, metadata) || !encoding_ok(o->metadata_encoding))
        f |= PL_F_METADATA;
    if (d->userdata) {
        if (!o->userdata || o->userdata_len != d->userdata_len ||
            memcmp(o->userdata, d->userdata, d->userdata_len) != 0 ||
            !encoding_ok(o->userdata_encoding))
            f |= PL_F_USERDATA;
    } else if (o->userdata && o->userdata_len > 0) {
        f |= PL_F_USERDATA; /* remove what an earlier spec put there */
    }
    return f;
}

/* ---- configuration beyond sizing ------------------------------------------------------------- */

size_t pl_boot_order(const struct rs_desired *d, const struct pl_obs *o, struct pl_boot_entry *ret,
                     int *ret_waits)
{
    size_t n = 0;
    *ret_waits = 0;
    for (size_t i = 0; i < d->boot.n_order && i < RS_MAX_BOOT_ORDER; i++) {
        int key = 0;
        switch (d->boot.order[i].kind) {
        case RS_BOOT_NETWORK:
            if (d->boot.order[i].nic >= o->n_nics) {
                *ret_waits = 1;
                continue;
            }
            key = o->nics[d->boot.order[i].nic].key;
            break;
        case RS_BOOT_DISK:
            if (o->disk_key <= 0)
                continue;
            key = o->disk_key;
            break;
        case RS_BOOT_CDROM:
            key = -1;
            break;
        }
        ret[n].kind = (int)d->boot.order[i].kind;
        ret[n++].device_key = key;
    }
    return n;
}

int pl_hw_version_wanted(const struct pl_input *in)
{
    const struct rs_desired *d = in->desired;
    int cls = held(in) ? 0 : d->class_hw_version;
    return d->hw_version > cls ? d->hw_version : cls;
}

static long long or_zero(long long v)
{
    return v < 0 ? 0 : v;
}

static int boot_differs(const struct rs_desired *d, const struct pl_obs *o, int *ret_waits)
{
    const struct rs_boot *b = &d->boot;
    struct pl_boot_entry want[RS_MAX_BOOT_ORDER];
    size_t n;
    *ret_waits = 0;
    if (!b->set)
        return 0;
    if ((b->delay_ms >= 0 && b->delay_ms != or_zero(o->boot.delay_ms)) ||
        (b->retry_delay_ms >= 0 && b->retry_delay_ms != or_zero(o->boot.retry_delay_ms)) ||
        (b->retry != RS_UNSET && (b->retry == RS_YES) != (o->boot.retry == 1)) ||
        (b->efi_secure_boot != RS_UNSET &&
         (b->efi_secure_boot == RS_YES) != (o->boot.efi_secure_boot == 1)) ||
        (b->network_protocol && !streq(b->network_protocol, o->boot.network_protocol)))
        return 1;
    if (!b->has_order)
        return 0;
    n = pl_boot_order(d, o, want, ret_waits);
    if (n != o->boot.n_order)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (want[i].kind != o->boot.order[i].kind ||
            (want[i].kind != RS_BOOT_CDROM && want[i].device_key != o->boot.order[i].device_key))
            return 1;
    return 0;
}

/* The boot order names a NIC. */
static int boot_names_nic(const struct rs_desired *d)
{
    for (size_t i = 0; d->boot.set && d->boot.has_order && i < d->boot.n_order; i++)
        if (d->boot.order[i].kind == RS_BOOT_NETWORK)
            return 1;
    return 0;
}

/* guestId, firmware, bootOptions, changeTrackingEnabled, the class's extraConfig, the boot disk.
 * *ret_boot_waits: a bootOrder NIC does not exist yet. */
static unsigned diff_config(const struct pl_input *in, struct pl_plan *p, int *ret_boot_waits)
{
    const struct rs_desired *d = in->desired;
    const struct pl_obs *o = in->obs;
    unsigned f = 0, skip = held(in) ? d->from_class : 0;

    if (d->guest_id && !(skip & RS_FROM_CLASS_GUEST_ID) && !streq(o->guest_id, d->guest_id))
        f |= PL_F_GUEST_ID;
    if (d->firmware && !(skip & RS_FROM_CLASS_FIRMWARE) && !streq(o->firmware, d->firmware))
        f |= PL_F_FIRMWARE;
    if (d->cbt != RS_UNSET && !(skip & RS_FROM_CLASS_CBT) && (d->cbt == RS_YES) != (o->cbt == 1))
        f |= PL_F_CBT;
    if (boot_differs(d, o, ret_boot_waits))
        f |= PL_F_BOOT_OPTIONS;
    for (size_t i = 0; !held(in) && i < d->n_extra; i++) {
        const char *v = o->extra_get ? o->extra_get(o->extra_ud, d->extra[i].key) : NULL;
        if (!streq(v, d->extra[i].value))
            f |= PL_F_EXTRA_CONFIG;
    }
    if (d->boot_disk_mb > 0 && o->disk_key > 0) {
        long long want_kb = (long long)d->boot_disk_mb * 1024;
        if (o->disk_kb < want_kb)
            f |= PL_F_BOOT_DISK;
        else if (o->disk_kb > want_kb) {
            p->disk_not_shrunk = 1;
            p->disk_kb = o->disk_kb;
        }
    }
    return f;
}

/* ---- plans ----------------------------------------------------------------------------------- */

static struct pl_action *add(struct pl_plan *p, enum pl_kind kind, int deferred)
{
    struct pl_action *a;
    if (p->n >= PL_MAX_ACTIONS)
        return NULL; /* cannot happen: the longest plan has 8 actions */
    a = &p->actions[p->n++];
    memset(a, 0, sizeof(*a));
    a->kind = kind;
    a->deferred = deferred;
    return a;
}

static void add_power(struct pl_plan *p, enum pl_kind kind, enum pl_mode mode, int deferred)
{
    struct pl_action *a = add(p, kind, deferred);
    if (a)
        a->mode = mode;
}

/* A restart is due: asked for, and not marked in vCenter as started (see PL_KEY_LAST_RESTART). */
static int restart_due(const struct rs_desired *d, const struct pl_obs *o)
{
    return d->restart_for && *d->restart_for &&
           !(o->present && o->restart_marker && !strcmp(o->restart_marker, d->restart_for));
}

static void add_restart(struct pl_plan *p, const struct rs_desired *d, int deferred)
{
    add_power(p, PL_RESTART, pl_mode_from_api(d->restart_mode), deferred);
}

static void plan_create(const struct pl_input *in, struct pl_plan *p)
{
    const struct rs_desired *d = in->desired;
    struct pl_action *a;

    add(p, PL_CREATE, 0);
    add(p, PL_REOBSERVE, 0);
    if (d->hw_version > 0 || d->class_hw_version > 0)
        add(p, PL_UPGRADE, 1); /* when the image's version is lower */
    a = add(p, PL_RECONFIGURE, 1);
    if (a)
        a->fields = PL_F_HARDWARE | PL_F_CPU_ALLOC | PL_F_MEM_ALLOC | PL_F_MANAGED_BY |
                    (nonempty(d->bios_uuid) ? PL_F_BIOS_UUID : 0) | PL_F_NICS |
                    (d->guest_id ? PL_F_GUEST_ID : 0) | (d->firmware ? PL_F_FIRMWARE : 0) |
                    (d->boot.set ? PL_F_BOOT_OPTIONS : 0) | (d->cbt ? PL_F_CBT : 0) |
                    (d->n_extra ? PL_F_EXTRA_CONFIG : 0) | (d->boot_disk_mb ? PL_F_BOOT_DISK : 0);
    if (d->cloud_init) {
        add(p, PL_REOBSERVE, 1);
        a = add(p, PL_RECONFIGURE, 1);
        if (a)
            a->fields = PL_F_METADATA | (d->userdata ? PL_F_USERDATA : 0);
    }
    if (d->power == API_POWER_ON || d->power == API_POWER_UNSET) {
        add_power(p, PL_POWER_ON, PL_MODE_HARD, 1);
        if (restart_due(d, in->obs))
            add_restart(p, d, 1);
    } else if (d->power == API_POWER_SUSPENDED)
        p->power_unreachable = 1; /* a new VM is off; off cannot be suspended */
}

vmop_rc pl_plan(const struct pl_input *in, struct pl_plan *ret, struct vmop_err *err)
{
    const struct rs_desired *d;
    const struct pl_obs *o;
    enum pl_kind before = PL_CREATE, after = PL_CREATE; /* PL_CREATE = none */
    enum pl_mode before_mode = PL_MODE_HARD;
    enum pl_power cur;
    struct pl_action tmp;
    unsigned fields, gi_fields;
    int live, boot_waits = 0, upgrade_to = 0, hw, macs_move = 0, later;
    vmop_rc rc;

    memset(ret, 0, sizeof(*ret));
    if (!in || !in->desired || !in->obs || (in->desired->n_nics && !in->backings))
        return vmop_fail(err, VMOP_E_INVALID, "pl_plan: missing argument");
    d = in->desired;
    o = in->obs;
    if (d->n_nics > API_VM_MAX_NICS || o->n_nics > PL_MAX_OBS_NICS)
        return vmop_fail(err, VMOP_E_INVALID, "pl_plan: too many NICs");
    if (!o->present) {
        plan_create(in, ret);
        return VMOP_OK;
    }
    if (o->is_template)
        return vmop_fail(err, VMOP_E_INVALID,
                         "the VM with instance UUID %s is a template: vmop does not manage it",
                         d->instance_uuid ? d->instance_uuid : "");

    /* Power transitions that must happen before the reconfigure (off, suspend) or after it (on). */
    cur = o->power;
    switch (d->power) {
    case API_POWER_UNSET:
    case API_POWER_ON:
        if (cur != PL_STATE_ON)
            after = PL_POWER_ON;
        break;
    case API_POWER_OFF:
        if (cur == PL_STATE_ON) {
            before = PL_POWER_OFF;
            before_mode = pl_mode_from_api(d->power_off_mode);
        } else if (cur == PL_STATE_SUSPENDED) {
            if (pl_mode_from_api(d->power_off_mode) == PL_MODE_SOFT)
                ret->power_unreachable = 1;
            else
                before = PL_POWER_OFF; /* hard: a suspended guest cannot shut itself down */
        }
        break;
    case API_POWER_SUSPENDED:
        if (cur == PL_STATE_ON) {
            before = PL_SUSPEND;
            before_mode = pl_mode_from_api(d->suspend_mode);
        } else if (cur == PL_STATE_OFF) {
            ret->power_unreachable = 1;
        }
        break;
    }
    /* Is the VM running (or suspended) while it is reconfigured? Then numCPUs/memoryMB wait. */
    live = before == PL_CREATE ? cur != PL_STATE_OFF : before == PL_SUSPEND;

    fields = (held(in) ? 0 : diff_hardware(d, o)) | diff_identity(d, o) |
             diff_config(in, ret, &boot_waits);
    hw = pl_hw_version_wanted(in);
    if (hw > 0 && o->hw_version > 0 && o->hw_version < hw)
        upgrade_to = hw;
    if (live && (fields & PL_F_HARDWARE))
        ret->needs_power_cycle = 1;
    if (live && ((fields & PL_F_OFFLINE) || upgrade_to)) {
        ret->deferred_fields = (fields & PL_F_OFFLINE) | (upgrade_to ? PL_F_HW_VERSION : 0);
        fields &= ~PL_F_OFFLINE;
        upgrade_to = 0;
    }
    memset(&tmp, 0, sizeof(tmp));
    diff_nics(in, &tmp);
    if (tmp.n_nic_ops)
        fields |= PL_F_NICS;
    if (boot_waits && !tmp.n_nic_ops)
        boot_waits = 0; /* the NIC will not come: the entries left out stay out */
    /* a NIC added or replaced gets its device key from vCenter: a boot order naming NICs is
     * written after the REOBSERVE that shows the keys */
    for (size_t i = 0; i < tmp.n_nic_ops && !boot_waits; i++)
        if (tmp.nic_ops[i].op != PL_NIC_EDIT && boot_names_nic(d) &&
            !(ret->deferred_fields & PL_F_BOOT_OPTIONS))
            boot_waits = 1;
    if (boot_waits)
        fields &= ~PL_F_BOOT_OPTIONS; /* after the NICs exist (the REOBSERVE below) */

    if (d->cloud_init) {
        rc = pl_metadata_json(d, o, &ret->metadata_json, err);
        if (rc) {
            pl_plan_free(ret);
            return rc;
        }
    }
    gi_fields = diff_guestinfo(d, o, ret->metadata_json);

    if (before != PL_CREATE)
        add_power(ret, before, before_mode, 0);
    if (upgrade_to) {
        struct pl_action *a = add(ret, PL_UPGRADE, 0);
        if (a)
            a->hw_version = upgrade_to;
    }
    /* A NIC added or removed changes the MACs: the guestinfo (whose network config names them) is
     * written after the NICs, from a new observation (and a bootOrder naming a new NIC once it has
     * a device key). A NIC whose backing is edited keeps its MAC: one reconfigure does it all. */
    if (fields & PL_F_NICS)
        for (size_t i = 0; i < tmp.n_nic_ops; i++)
            if (tmp.nic_ops[i].op != PL_NIC_EDIT)
                macs_move = 1;
    later = (fields & PL_F_NICS) && (boot_waits || (d->cloud_init && macs_move));
    if (fields | gi_fields) {
        struct pl_action *a = add(ret, PL_RECONFIGURE, 0);
        if (a && (fields & PL_F_NICS)) {
            *a = tmp;
            a->kind = PL_RECONFIGURE;
        }
        if (a)
            a->fields = fields | (later ? 0 : gi_fields);
    }
    if (later) {
        struct pl_action *a;
        add(ret, PL_REOBSERVE, 0);
        a = add(ret, PL_RECONFIGURE, 1);
        if (a)
            a->fields = (d->cloud_init ? PL_F_METADATA | gi_fields : 0) |
                        (boot_waits ? PL_F_BOOT_OPTIONS : 0);
    }
    if (after != PL_CREATE)
        add_power(ret, after, PL_MODE_HARD, later);
    if ((d->power == API_POWER_ON || d->power == API_POWER_UNSET) && before == PL_CREATE &&
        restart_due(d, o))
        add_restart(ret, d, later);
    return VMOP_OK;
}

void pl_plan_delete(const struct pl_obs *obs, enum api_power_mode mode, struct pl_plan *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (!obs || !obs->present)
        return;
    if (obs->power == PL_STATE_ON)
        add_power(ret, PL_POWER_OFF, pl_mode_from_api(mode), 0);
    else if (obs->power == PL_STATE_SUSPENDED)
        add_power(ret, PL_POWER_OFF, PL_MODE_HARD, 0);
    add(ret, PL_DESTROY, 0);
}

void pl_plan_free(struct pl_plan *p)
{
    if (!p)
        return;
    free(p->metadata_json);
    p->metadata_json = NULL;
}
