/* ippool.c: static IPv4 allocation: address sets, the allocator, annotations, the per-VM view
 * and the reservation table (see ippool.h). */
#include "ippool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- address sets ------------------------------------------------------------------------- */

vmop_rc ippool_set_add(struct ippool_set *s, uint32_t addr, struct vmop_err *err)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        uint32_t *v;
        if (cap > ((size_t)16 << 20))
            return vmop_fail(err, VMOP_E_TOOBIG, "address set over %zu entries", cap / 2);
        v = realloc(s->v, cap * sizeof(*v));
        if (!v)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory growing an address set");
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = addr;
    s->sorted = 0;
    return VMOP_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int ippool_set_has(struct ippool_set *s, uint32_t addr)
{
    size_t lo = 0, hi;
    if (!s || s->n == 0)
        return 0;
    if (!s->sorted) {
        qsort(s->v, s->n, sizeof(*s->v), cmp_u32);
        s->sorted = 1;
    }
    hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid] == addr)
            return 1;
        if (s->v[mid] < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

void ippool_set_free(struct ippool_set *s)
{
    if (!s)
        return;
    free(s->v);
    memset(s, 0, sizeof(*s));
}

/* ---- the pure allocator ------------------------------------------------------------------- */

static uint32_t fnv1a(uint32_t h, const char *s)
{
    for (; s && *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

uint32_t ippool_hint(const char *vm_key, const char *iface)
{
    uint32_t h = fnv1a(2166136261u, vm_key);
    h = fnv1a(h, "/");
    return fnv1a(h, iface);
}

static int pool_ok(const struct api_ipv4_pool *pool)
{
    struct api_ferrs fe;
    memset(&fe, 0, sizeof(fe));
    api_ipv4_pool_validate(pool, "ipv4Pool", &fe);
    return fe.n == 0 && fe.dropped == 0;
}

/* 1 when addr may never be handed out: gateway, network or broadcast address. */
static int reserved_addr(const struct api_ipv4_pool *pool, uint32_t addr)
{
    uint32_t mask = api_ipv4_mask(pool->prefix);
    if (pool->gateway_ok && addr == pool->gateway)
        return 1;
    if (pool->prefix <= 30 && ((addr & ~mask) == 0 || (addr & ~mask) == ~mask))
        return 1;
    return 0;
}

static size_t pool_size(const struct api_ipv4_pool *pool)
{
    size_t total = 0;
    for (size_t i = 0; i < pool->n_ranges; i++)
        total += (size_t)(pool->ranges[i].end - pool->ranges[i].start) + 1;
    return total;
}

/* The address at position pos of the ranges taken as one list. */
static uint32_t pool_at(const struct api_ipv4_pool *pool, size_t pos)
{
    for (size_t i = 0; i < pool->n_ranges; i++) {
        size_t len = (size_t)(pool->ranges[i].end - pool->ranges[i].start) + 1;
        if (pos < len)
            return pool->ranges[i].start + (uint32_t)pos;
        pos -= len;
    }
    return 0; /* unreachable for pos < pool_size() */
}

size_t ippool_usable(const struct api_ipv4_pool *pool)
{
    size_t n = 0;
    if (!pool || !pool_ok(pool))
        return 0;
    for (size_t i = 0; i < pool->n_ranges; i++) {
        const struct api_ipv4_range *r = &pool->ranges[i];
        for (uint64_t a = r->start; a <= r->end; a++)
            n += !reserved_addr(pool, (uint32_t)a);
    }
    return n;
}

vmop_rc ippool_pick(const struct api_ipv4_pool *pool, struct ippool_set *in_use, uint32_t hint,
                    uint32_t *ret_addr, struct vmop_err *err)
{
    size_t total, start;

    if (!pool || !ret_addr)
        return vmop_fail(err, VMOP_E_INVALID, "ippool_pick: missing argument");
    if (!pool_ok(pool))
        return vmop_fail(err, VMOP_E_INVALID, "the network's ipv4Pool is invalid");
    total = pool_size(pool);
    start = total ? hint % total : 0;
    for (size_t i = 0; i < total; i++) {
        uint32_t a = pool_at(pool, (start + i) % total);
        if (reserved_addr(pool, a) || ippool_set_has(in_use, a))
            continue;
        *ret_addr = a;
        return VMOP_OK;
    }
    return vmop_fail_fault(err, VMOP_E_NOT_FOUND, IPPOOL_REASON_EXHAUSTED, 0,
                           "IPv4 pool exhausted: all %zu usable addresses are in use",
                           ippool_usable(pool));
}

/* ---- annotations -------------------------------------------------------------------------- */

vmop_rc ippool_annotation_key(const char *iface, char key[IPPOOL_KEY_MAX], struct vmop_err *err)
{
    size_t n = iface ? strlen(iface) : 0;
    if (n == 0 || n > IPPOOL_IFACE_MAX)
        return vmop_fail(err, VMOP_E_INVALID,
                         "interface name must have 1..%d characters for a static address",
                         IPPOOL_IFACE_MAX);
    snprintf(key, IPPOOL_KEY_MAX, "%s%s", IPPOOL_ANNOTATION_PREFIX, iface);
    return VMOP_OK;
}

vmop_rc ippool_annotation_value(const char *network, uint32_t addr, int prefix,
                                char value[IPPOOL_VALUE_MAX], struct vmop_err *err)
{
    char a[IPPOOL_ADDR_MAX];
    if (!network || !*network || strlen(network) >= API_NAME_MAX || strchr(network, ':'))
        return vmop_fail(err, VMOP_E_INVALID, "invalid network name for an ipv4 annotation");
    if (prefix < 1 || prefix > 32)
        return vmop_fail(err, VMOP_E_INVALID, "prefix %d out of range", prefix);
    snprintf(value, IPPOOL_VALUE_MAX, "%s:%s/%d", network, api_ipv4_format(addr, a, sizeof(a)),
             prefix);
    return VMOP_OK;
}

vmop_rc ippool_annotation_parse(const char *value, char ret_network[API_NAME_MAX],
                                uint32_t *ret_addr, int *ret_prefix, struct vmop_err *err)
{
    const char *colon, *slash;
    char a[IPPOOL_ADDR_MAX];
    uint32_t addr;
    long prefix = 0;
    size_t nlen, alen, plen;

    if (!value)
        return vmop_fail(err, VMOP_E_INVALID, "empty ipv4 annotation");
    colon = strrchr(value, ':');
    slash = colon ? strchr(colon, '/') : NULL;
    if (!colon || !slash)
        return vmop_fail(err, VMOP_E_INVALID,
                         "ipv4 annotation must read <network>:<addr>/<prefix>");
    nlen = (size_t)(colon - value);
    alen = (size_t)(slash - colon - 1);
    plen = strlen(slash + 1);
    if (nlen == 0 || nlen >= API_NAME_MAX || alen == 0 || alen >= sizeof(a) || plen == 0 ||
        plen > 2)
        return vmop_fail(err, VMOP_E_INVALID,
                         "ipv4 annotation must read <network>:<addr>/<prefix>");
    for (size_t i = 0; i < plen; i++) {
        char c = slash[1 + i];
        if (c < '0' || c > '9')
            return vmop_fail(err, VMOP_E_INVALID, "ipv4 annotation: prefix is not a number");
        prefix = prefix * 10 + (c - '0');
    }
    memcpy(a, colon + 1, alen);
    a[alen] = '\0';
    if (prefix < 1 || prefix > 32 || !api_ipv4_parse(a, &addr))
        return vmop_fail(err, VMOP_E_INVALID, "ipv4 annotation: invalid address or prefix");
    memcpy(ret_network, value, nlen);
    ret_network[nlen] = '\0';
    *ret_addr = addr;
    *ret_prefix = (int)prefix;
    return VMOP_OK;
}

vmop_rc ippool_annotation_patch(const char *rv, const char *const *keys, const char *const *values,
                                size_t n, cJSON **ret_patch, struct vmop_err *err)
{
    cJSON *patch = NULL, *md, *ann;
    vmop_rc rc = VMOP_OK;

    if (!rv || !*rv || !ret_patch || (n && (!keys || !values)))
        return vmop_fail(err, VMOP_E_INVALID, "ippool_annotation_patch: missing argument");
    patch = cJSON_CreateObject();
    md = patch ? cJSON_AddObjectToObject(patch, "metadata") : NULL;
    ann = md ? cJSON_AddObjectToObject(md, "annotations") : NULL;
    if (!ann || !cJSON_AddStringToObject(md, "resourceVersion", rv)) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory building an annotation patch");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (!keys[i] || !values[i]) {
            rc = vmop_fail(err, VMOP_E_INVALID, "ippool_annotation_patch: missing key or value");
            goto out;
        }
        if (!cJSON_AddStringToObject(ann, keys[i], values[i])) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory building an annotation patch");
            goto out;
        }
    }
    *ret_patch = patch;
    patch = NULL;
out:
    cJSON_Delete(patch);
    return rc;
}

vmop_rc ippool_scope(const char *ns, const char *network, char scope[IPPOOL_SCOPE_MAX],
                     struct vmop_err *err)
{
    int n;
    if (!ns || !network)
        return vmop_fail(err, VMOP_E_INVALID, "ippool_scope: missing namespace or network");
    n = snprintf(scope, IPPOOL_SCOPE_MAX, "%s/%s", ns, network);
    if (n < 0 || (size_t)n >= IPPOOL_SCOPE_MAX)
        return vmop_fail(err, VMOP_E_INVALID, "namespace/network name too long");
    return VMOP_OK;
}

vmop_rc ippool_in_use_add_vm(struct ippool_set *s, const struct api_vm *vm, const char *network,
                             struct vmop_err *err)
{
    const cJSON *it;
    size_t plen = strlen(IPPOOL_ANNOTATION_PREFIX);
    if (!vm || !network)
        return VMOP_OK;
    cJSON_ArrayForEach(it, vm->annotations)
    {
        char net[API_NAME_MAX];
        uint32_t addr;
        int prefix;
        vmop_rc rc;
        if (!it->string || strncmp(it->string, IPPOOL_ANNOTATION_PREFIX, plen) != 0 ||
            !cJSON_IsString(it))
            continue;
        if (ippool_annotation_parse(it->valuestring, net, &addr, &prefix, NULL) != VMOP_OK ||
            strcmp(net, network) != 0)
            continue;
        rc = ippool_set_add(s, addr, err);
        if (rc)
            return rc;
    }
    return VMOP_OK;
}

/* ---- per-VM view -------------------------------------------------------------------------- */

static const char *vm_annotation(const struct api_vm *vm, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(vm->annotations, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int nic_explicit(const struct api_vm_nic *n)
{
    return n->dhcp4 || cJSON_GetArraySize(n->addresses) > 0;
}

vmop_rc ippool_vm_nics(const struct api_vm *vm, const struct api_binding *binding,
                       struct ippool_nic ret_nics[API_VM_MAX_NICS], size_t *ret_n,
                       struct vmop_err *err)
{
    struct ippool_nic nics[API_VM_MAX_NICS];
    size_t n = 0;
    vmop_rc rc = VMOP_OK;

    if (!vm || !ret_nics || !ret_n)
        return vmop_fail(err, VMOP_E_INVALID, "ippool_vm_nics: missing argument");
    memset(nics, 0, sizeof(nics));
    for (size_t i = 0; i < vm->n_nics && n < API_VM_MAX_NICS; i++) {
        const struct api_vm_nic *s = &vm->nics[i];
        struct ippool_nic *o = &nics[n++];
        const char *val;
        char net[API_NAME_MAX];
        uint32_t addr, mask;
        int prefix;

        o->iface = s->name;
        o->network = s->network_name && *s->network_name
                         ? s->network_name
                         : (binding ? binding->default_network : NULL);
        if (!binding || vm->network_disabled || !o->network || nic_explicit(s))
            continue;
        o->pool = api_binding_ipv4_pool(binding, o->network);
        if (!o->pool)
            continue;
        rc = ippool_annotation_key(s->name, o->annotation_key, err);
        if (!rc)
            rc = ippool_scope(vm->namespace_ ? vm->namespace_ : "", o->network, o->scope, err);
        if (rc)
            goto out;
        o->prefix = (int)o->pool->prefix;
        if (o->pool->gateway_ok)
            api_ipv4_format(o->pool->gateway, o->gateway4, sizeof(o->gateway4));
        o->nameservers = o->pool->nameservers;
        o->n_nameservers = o->pool->n_nameservers;
        o->search_domains = o->pool->search_domains;
        o->n_search_domains = o->pool->n_search_domains;
        if (!(vm->bootstrap & API_BOOT_CLOUDINIT)) {
            o->state = IPPOOL_NIC_NO_BOOTSTRAP; /* the address could not reach the guest */
            continue;
        }
        o->state = IPPOOL_NIC_NEEDS_ALLOCATION;
        val = vm_annotation(vm, o->annotation_key);
        if (!val)
            continue;
        rc = ippool_annotation_parse(val, net, &addr, &prefix, NULL);
        if (rc) {
            rc = vmop_fail(err, VMOP_E_INVALID,
                           "annotation %s: must read <network>:<addr>/<prefix>", o->annotation_key);
            goto out;
        }
        if (strcmp(net, o->network) != 0) {
            o->stale = 1;
            continue;
        }
        mask = api_ipv4_mask(o->pool->prefix);
        if (prefix != o->prefix ||
            (o->pool->gateway_ok && (addr & mask) != (o->pool->gateway & mask)) ||
            (!o->pool->gateway_ok && o->pool->n_ranges > 0 &&
             (addr & mask) != (o->pool->ranges[0].start & mask))) {
            rc = vmop_fail(err, VMOP_E_INVALID,
                           "annotation %s: address is outside the subnet of network %.63s",
                           o->annotation_key, o->network);
            goto out;
        }
        o->state = IPPOOL_NIC_ASSIGNED;
        o->addr = addr;
        {
            char a[IPPOOL_ADDR_MAX];
            snprintf(o->cidr, sizeof(o->cidr), "%s/%d", api_ipv4_format(addr, a, sizeof(a)),
                     prefix);
        }
    }
    memcpy(ret_nics, nics, n * sizeof(nics[0]));
    *ret_n = n;
out:
    return rc;
}

/* ---- the reservation table ---------------------------------------------------------------- */

struct ippool_entry {
    char scope[IPPOOL_SCOPE_MAX];
    char vm_key[IPPOOL_SCOPE_MAX];
    char iface[IPPOOL_IFACE_MAX + 1];
    uint32_t addr;
    int confirmed;
};

struct ippool_registry {
    pthread_mutex_t mu;
    struct ippool_entry *e; /* owned */
    size_t n, cap;
};

vmop_rc ippool_registry_new(struct ippool_registry **ret_reg, struct vmop_err *err)
{
    struct ippool_registry *r = calloc(1, sizeof(*r));
    if (!r)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory creating the IP pool registry");
    if (pthread_mutex_init(&r->mu, NULL) != 0) {
        free(r);
        return vmop_fail(err, VMOP_E_INTERNAL, "pthread_mutex_init failed");
    }
    *ret_reg = r;
    return VMOP_OK;
}

void ippool_registry_free(struct ippool_registry *reg)
{
    if (!reg)
        return;
    pthread_mutex_destroy(&reg->mu);
    free(reg->e);
    free(reg);
}

static vmop_rc check_keys(const char *scope, const char *vm_key, const char *iface,
                          struct vmop_err *err)
{
    if (!scope || !vm_key || !iface || strlen(scope) >= IPPOOL_SCOPE_MAX ||
        strlen(vm_key) >= IPPOOL_SCOPE_MAX || !*iface || strlen(iface) > IPPOOL_IFACE_MAX)
        return vmop_fail(err, VMOP_E_INVALID, "ippool: missing or overlong scope, VM or interface");
    return VMOP_OK;
}

static struct ippool_entry *find_owner(struct ippool_registry *r, const char *scope,
                                       const char *vm_key, const char *iface)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->e[i].scope, scope) == 0 && strcmp(r->e[i].vm_key, vm_key) == 0 &&
            strcmp(r->e[i].iface, iface) == 0)
            return &r->e[i];
    return NULL;
}

static void drop(struct ippool_registry *r, size_t i)
{
    r->e[i] = r->e[--r->n];
}

/* Adds or moves vm_key/iface's reservation in scope to addr. Caller holds the lock and has
 * checked that nobody else holds addr. */
static vmop_rc put(struct ippool_registry *r, const char *scope, uint32_t addr, const char *vm_key,
                   const char *iface, struct vmop_err *err)
{
    struct ippool_entry *e = find_owner(r, scope, vm_key, iface);
    if (!e) {
        if (r->n == r->cap) {
            size_t cap = r->cap ? 2 * r->cap : 32;
            struct ippool_entry *v;
            if (r->n >= IPPOOL_REGISTRY_LIMIT)
                return vmop_fail(err, VMOP_E_TOOBIG, "more than %d live IP reservations",
                                 IPPOOL_REGISTRY_LIMIT);
            v = realloc(r->e, cap * sizeof(*v));
            if (!v)
                return vmop_fail(err, VMOP_E_NOMEM, "out of memory reserving an IP address");
            r->e = v;
            r->cap = cap;
        }
        e = &r->e[r->n++];
        memset(e, 0, sizeof(*e));
        snprintf(e->scope, sizeof(e->scope), "%s", scope);
        snprintf(e->vm_key, sizeof(e->vm_key), "%s", vm_key);
        snprintf(e->iface, sizeof(e->iface), "%s", iface);
    }
    e->addr = addr;
    e->confirmed = 0;
    return VMOP_OK;
}

static struct ippool_entry *holder(struct ippool_registry *r, const char *scope, uint32_t addr)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->e[i].addr == addr && strcmp(r->e[i].scope, scope) == 0)
            return &r->e[i];
    return NULL;
}

vmop_rc ippool_reserve(struct ippool_registry *reg, const char *scope, uint32_t addr,
                       const char *vm_key, const char *iface, struct vmop_err *err)
{
    struct ippool_entry *h;
    vmop_rc rc;
    if (!reg)
        return vmop_fail(err, VMOP_E_INVALID, "ippool_reserve: no registry");
    rc = check_keys(scope, vm_key, iface, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&reg->mu);
    h = holder(reg, scope, addr);
    if (h && (strcmp(h->vm_key, vm_key) != 0 || strcmp(h->iface, iface) != 0)) {
        char a[IPPOOL_ADDR_MAX];
        rc = vmop_fail_fault(err, VMOP_E_EXISTS, IPPOOL_FAULT_TAKEN, 0,
                             "%s is reserved for another VM", api_ipv4_format(addr, a, sizeof(a)));
    } else if (!h) {
        rc = put(reg, scope, addr, vm_key, iface, err);
    }
    pthread_mutex_unlock(&reg->mu);
    return rc;
}

vmop_rc ippool_allocate(struct ippool_registry *reg, const char *scope,
                        const struct api_ipv4_pool *pool, ippool_collect_fn collect,
                        void *collect_arg, const char *vm_key, const char *iface,
                        uint32_t *ret_addr, struct vmop_err *err)
{
    struct ippool_set taken = {0};
    struct ippool_entry *own;
    uint32_t addr = 0;
    vmop_rc rc;

    if (!reg || !pool || !ret_addr)
        return vmop_fail(err, VMOP_E_INVALID, "ippool_allocate: missing argument");
    rc = check_keys(scope, vm_key, iface, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&reg->mu);
    own = find_owner(reg, scope, vm_key, iface);
    if (own) {
        addr = own->addr;
        goto out;
    }
    for (size_t i = 0; i < reg->n && rc == VMOP_OK; i++)
        if (strcmp(reg->e[i].scope, scope) == 0)
            rc = ippool_set_add(&taken, reg->e[i].addr, err);
    if (!rc && collect)
        rc = collect(collect_arg, scope, &taken, err);
    if (!rc)
        rc = ippool_pick(pool, &taken, ippool_hint(vm_key, iface), &addr, err);
    if (!rc)
        rc = put(reg, scope, addr, vm_key, iface, err);
out:
    pthread_mutex_unlock(&reg->mu);
    ippool_set_free(&taken);
    if (!rc)
        *ret_addr = addr;
    return rc;
}

void ippool_confirm(struct ippool_registry *reg, const char *scope, const char *vm_key,
                    const char *iface)
{
    struct ippool_entry *e;
    if (!reg || check_keys(scope, vm_key, iface, NULL))
        return;
    pthread_mutex_lock(&reg->mu);
    e = find_owner(reg, scope, vm_key, iface);
    if (e)
        e->confirmed = 1;
    pthread_mutex_unlock(&reg->mu);
}

void ippool_release(struct ippool_registry *reg, const char *scope, const char *vm_key,
                    const char *iface)
{
    if (!reg || check_keys(scope, vm_key, iface, NULL))
        return;
    pthread_mutex_lock(&reg->mu);
    for (size_t i = 0; i < reg->n; i++)
        if (strcmp(reg->e[i].scope, scope) == 0 && strcmp(reg->e[i].vm_key, vm_key) == 0 &&
            strcmp(reg->e[i].iface, iface) == 0) {
            drop(reg, i);
            break;
        }
    pthread_mutex_unlock(&reg->mu);
}

void ippool_release_vm(struct ippool_registry *reg, const char *vm_key)
{
    if (!reg || !vm_key)
        return;
    pthread_mutex_lock(&reg->mu);
    for (size_t i = reg->n; i-- > 0;)
        if (strcmp(reg->e[i].vm_key, vm_key) == 0)
            drop(reg, i);
    pthread_mutex_unlock(&reg->mu);
}

/* 1 when the VM's annotation for e's interface shows e's address in e's scope. */
static int vm_shows(const struct api_vm *vm, const struct ippool_entry *e)
{
    char key[IPPOOL_KEY_MAX], net[API_NAME_MAX], scope[IPPOOL_SCOPE_MAX];
    uint32_t addr;
    int prefix;
    const char *val;
    if (ippool_annotation_key(e->iface, key, NULL) != VMOP_OK)
        return 0;
    val = vm_annotation(vm, key);
    if (!val || ippool_annotation_parse(val, net, &addr, &prefix, NULL) != VMOP_OK)
        return 0;
    if (ippool_scope(vm->namespace_, net, scope, NULL) != VMOP_OK)
        return 0;
    return addr == e->addr && strcmp(scope, e->scope) == 0;
}

void ippool_settle(struct ippool_registry *reg, const struct api_vm *vm)
{
    char vm_key[IPPOOL_SCOPE_MAX];
    int n;
    if (!reg || !vm || !vm->namespace_ || !vm->name)
        return;
    n = snprintf(vm_key, sizeof(vm_key), "%s/%s", vm->namespace_, vm->name);
    if (n < 0 || (size_t)n >= sizeof(vm_key))
        return;
    pthread_mutex_lock(&reg->mu);
    for (size_t i = reg->n; i-- > 0;)
        if (reg->e[i].confirmed && strcmp(reg->e[i].vm_key, vm_key) == 0 &&
            vm_shows(vm, &reg->e[i]))
            drop(reg, i);
    pthread_mutex_unlock(&reg->mu);
}

size_t ippool_registry_count(struct ippool_registry *reg)
{
    size_t n;
    if (!reg)
        return 0;
    pthread_mutex_lock(&reg->mu);
    n = reg->n;
    pthread_mutex_unlock(&reg->mu);
    return n;
}
