/* ippool.h: static IPv4 address allocation from a NamespaceBinding network's `ipv4Pool`.
 *
 * Owns: the pure allocator (ippool_pick), the per-VM view of which interfaces get a pool address
 * (ippool_vm_nics), the allocation annotation format, and a process-wide reservation table
 * (struct ippool_registry). No I/O: the VM controller reads caches and writes the annotation.
 * The pool itself is parsed and validated in api/api_admin.h (struct api_ipv4_pool), so a bad pool
 * shows up as a field error on the NamespaceBinding ("spec.networks[0].ipv4Pool.ranges[1].start").
 *
 * Persistence lives in Kubernetes, on the VM object:
 *   metadata.annotations["infra.vmop.io/ipv4.<interface>"] = "<network>:<addr>/<prefix>"
 *   e.g. infra.vmop.io/ipv4.eth0: "tenant-net:192.168.10.101/24"
 * The controller writes it with the VM's resourceVersion (optimistic concurrency: a 409 means
 * somebody else changed the VM, re-read and start over) BEFORE anything is created in vCenter,
 * and hands it to the guest (cloud-init network config); status shows the address only once the
 * guest reports it. A restart recomputes nothing: the annotation is
 * the allocation. The VM's deletion drops it with the object.
 *
 * Which interfaces get a pool address: those on a network whose binding entry has an ipv4Pool and
 * that declare neither `addresses` nor `dhcp4: true`, of a VM with a cloud-init bootstrap: without
 * one the guest could not receive the address, so none is allocated (IPPOOL_NIC_NO_BOOTSTRAP; the
 * resolver names it in VirtualMachineFieldsSupported, reason CloudInitRequired). An annotation for
 * another network (the interface moved) is stale and is replaced by a fresh allocation.
 *
 * Scope: addresses are unique per scope string, ippool_scope() = "<namespace>/<network>". Two
 * bindings that map networks to the same port group must give them disjoint ranges (vmop does not
 * coordinate allocations across namespaces).
 *
 * Concurrent allocation (several workers, informer cache lagging behind writes), vm_key being
 * "<namespace>/<name>":
 *   1. ippool_allocate(reg, scope, pool, collect, arg, vm_key, iface) calls collect() to gather
 *      the addresses in the annotations of every VM of the namespace in the cache on this network
 *      (ippool_in_use_add_vm; deleting VMs included), adds every address reserved in reg by
 *      other interfaces, picks a free one and reserves it, all under the registry's mutex.
 *      Calling it again for the same vm_key+iface returns the same address;
 *   2. write the annotation (ippool_annotation_patch: resourceVersion precondition);
 *        success                      -> ippool_confirm()
 *        definite failure (409, 4xx)  -> ippool_release(), retry later from step 1
 *        unknown outcome (timeout)    -> ippool_confirm() (the write may have landed)
 *   3. when the cache shows the VM with the annotation: ippool_settle(reg, vm) drops the entry;
 *   4. when the VM is deleted: ippool_release_vm(reg, vm_key).
 * collect() runs under the mutex so that no settle can slip between reading the cache and
 * checking the reservations (a settled address is always visible to a later collect()).
 * A restarted operator starts with an empty registry: the cache's annotations are the state.
 *
 * Exhaustion: ippool_pick/ippool_allocate fail with VMOP_E_NOT_FOUND and err->fault
 * IPPOOL_REASON_EXHAUSTED ("IPPoolExhausted"); the controller reports it as
 * VirtualMachineNetworkReady False, reason "IPPoolExhausted", and creates nothing in vCenter.
 *
 * Guest configuration: ippool_vm_nics() gives, per interface, the CIDR address, the gateway and
 * the pool's nameservers / search domains, for the netplan config in the cloud-init metadata
 * (guestinfo.h: gi_iface.addresses / gateway4 / nameservers / search; the interface's own
 * gateway4 / nameservers / searchDomains in the spec win over the pool's).
 */
#ifndef VMOP_IPPOOL_H
#define VMOP_IPPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "api_admin.h"
#include "api_vm.h"
#include "vmop_err.h"

#define IPPOOL_ANNOTATION_PREFIX "infra.vmop.io/ipv4."
#define IPPOOL_REASON_EXHAUSTED  "IPPoolExhausted" /* err->fault and the condition reason */
#define IPPOOL_FAULT_TAKEN       "AddressTaken"    /* err->fault of ippool_reserve() */
/* Longest interface name that still forms a valid annotation key (name part <= 63 chars). */
#define IPPOOL_IFACE_MAX      58
#define IPPOOL_KEY_MAX        (sizeof(IPPOOL_ANNOTATION_PREFIX) + IPPOOL_IFACE_MAX)
#define IPPOOL_CIDR_MAX       19 /* "255.255.255.255/32" + NUL */
#define IPPOOL_ADDR_MAX       16 /* "255.255.255.255" + NUL */
#define IPPOOL_SCOPE_MAX      (2 * API_NAME_MAX)
#define IPPOOL_VALUE_MAX      (API_NAME_MAX + IPPOOL_CIDR_MAX + 1)
#define IPPOOL_REGISTRY_LIMIT 262144 /* live reservations in one process */

/* ---- address sets ------------------------------------------------------------------------- */

/* A set of IPv4 addresses (host byte order). A zeroed struct is an empty set; free with
 * ippool_set_free(). Not thread-safe (lookups sort it in place). */
struct ippool_set {
    uint32_t *v;
    size_t n, cap;
    int sorted;
};
vmop_rc ippool_set_add(struct ippool_set *s, uint32_t addr, struct vmop_err *err);
/* 1 when addr is in the set. */
int ippool_set_has(struct ippool_set *s, uint32_t addr);
void ippool_set_free(struct ippool_set *s);

/* ---- the pure allocator ------------------------------------------------------------------- */

/* Deterministic start offset for a VM's interface (FNV-1a of "vm_key/iface"). */
uint32_t ippool_hint(const char *vm_key, const char *iface);

/* Number of addresses the pool can hand out (ranges minus gateway, network and broadcast). */
size_t ippool_usable(const struct api_ipv4_pool *pool);

/* The first free address of the pool, scanning its ranges in order (as one list) from position
 * hint % size and wrapping around; hint 0 gives the lowest free address. Skips the gateway and,
 * for prefixes up to /30, the network and broadcast addresses, and everything in in_use (may be
 * NULL). The pool must pass api_ipv4_pool_validate (else VMOP_E_INVALID). Exhausted:
 * VMOP_E_NOT_FOUND with fault IPPOOL_REASON_EXHAUSTED. */
vmop_rc ippool_pick(const struct api_ipv4_pool *pool, struct ippool_set *in_use, uint32_t hint,
                    uint32_t *ret_addr, struct vmop_err *err);

/* ---- annotations -------------------------------------------------------------------------- */

/* "<prefix><iface>" into key (IPPOOL_KEY_MAX). VMOP_E_INVALID when iface is empty or longer than
 * IPPOOL_IFACE_MAX. */
vmop_rc ippool_annotation_key(const char *iface, char key[IPPOOL_KEY_MAX], struct vmop_err *err);
/* "<network>:<addr>/<prefix>" into value (IPPOOL_VALUE_MAX). */
vmop_rc ippool_annotation_value(const char *network, uint32_t addr, int prefix,
                                char value[IPPOOL_VALUE_MAX], struct vmop_err *err);
/* Parses a value. ret_network gets the network name (API_NAME_MAX). VMOP_E_INVALID otherwise. */
vmop_rc ippool_annotation_parse(const char *value, char ret_network[API_NAME_MAX],
                                uint32_t *ret_addr, int *ret_prefix, struct vmop_err *err);

/* The merge patch (KUBE_PATCH_MERGE) that writes allocations with an optimistic-concurrency
 * precondition: {"metadata":{"resourceVersion":rv,"annotations":{keys[i]:values[i]...}}}.
 * rv is required (a 409 then means the VM changed since it was read). ret_patch: cJSON_Delete(). */
vmop_rc ippool_annotation_patch(const char *rv, const char *const *keys, const char *const *values,
                                size_t n, cJSON **ret_patch, struct vmop_err *err);

/* "<namespace>/<network>" into scope (IPPOOL_SCOPE_MAX). */
vmop_rc ippool_scope(const char *ns, const char *network, char scope[IPPOOL_SCOPE_MAX],
                     struct vmop_err *err);

/* Adds to s every address the VM's ipv4 annotations hold on `network` (malformed ones are
 * skipped: they hold nothing). */
vmop_rc ippool_in_use_add_vm(struct ippool_set *s, const struct api_vm *vm, const char *network,
                             struct vmop_err *err);

/* ---- per-VM view -------------------------------------------------------------------------- */

enum ippool_nic_state {
    IPPOOL_NIC_UNMANAGED = 0,    /* explicit addresses, dhcp4, or a network without a pool */
    IPPOOL_NIC_ASSIGNED,         /* the annotation holds its address */
    IPPOOL_NIC_NEEDS_ALLOCATION, /* a pool address must be allocated and annotated */
    IPPOOL_NIC_NO_BOOTSTRAP,     /* on a pool network, but the VM has no cloud-init bootstrap:
                                  * no address (an existing annotation is kept, not used) */
};

struct ippool_nic {
    const char *iface;   /* spec interface name (borrowed from the VM) */
    const char *network; /* tenant network name, default resolved (borrowed) */
    enum ippool_nic_state state;
    int stale; /* NEEDS_ALLOCATION replacing an annotation of another network */
    const struct api_ipv4_pool *pool; /* borrowed from the binding; NULL when UNMANAGED */
    char scope[IPPOOL_SCOPE_MAX];     /* when managed */
    char annotation_key[IPPOOL_KEY_MAX];
    uint32_t addr;                  /* ASSIGNED: the address (host byte order) */
    int prefix;                     /* managed: the pool's prefix */
    char cidr[IPPOOL_CIDR_MAX];     /* ASSIGNED: "192.168.10.101/24" */
    char gateway4[IPPOOL_ADDR_MAX]; /* managed: the pool's gateway, "" if none */
    const char *const *nameservers; /* managed: the pool's (borrowed from the binding) */
    size_t n_nameservers;
    const char *const *search_domains;
    size_t n_search_domains;
};

/* One entry per spec interface (ret_nics has API_VM_MAX_NICS slots). binding may be NULL (every
 * interface UNMANAGED). An annotation that does not parse, or whose address is outside the pool's
 * subnet or prefix, fails with VMOP_E_INVALID naming the annotation key (never silently
 * reallocated: the guest may already use the address). Strings borrowed from vm and binding. */
vmop_rc ippool_vm_nics(const struct api_vm *vm, const struct api_binding *binding,
                       struct ippool_nic ret_nics[API_VM_MAX_NICS], size_t *ret_n,
                       struct vmop_err *err);

/* ---- the reservation table ---------------------------------------------------------------- */

struct ippool_registry;

/* ret_reg: free with ippool_registry_free(). */
vmop_rc ippool_registry_new(struct ippool_registry **ret_reg, struct vmop_err *err);
void ippool_registry_free(struct ippool_registry *reg); /* NULL-safe */

/* Reserves addr in scope for vm_key's interface iface: VMOP_OK (also when this interface holds it
 * already), VMOP_E_EXISTS with fault IPPOOL_FAULT_TAKEN when someone else holds it. An interface
 * holds at most one address per scope: a new reservation replaces its old one. */
vmop_rc ippool_reserve(struct ippool_registry *reg, const char *scope, uint32_t addr,
                       const char *vm_key, const char *iface, struct vmop_err *err);

/* Adds to in_use the addresses the informer cache shows in use in scope (ippool_in_use_add_vm
 * for each VM of the namespace). Runs with the registry's mutex held: it must read the live cache
 * (not a snapshot taken before ippool_allocate was called) and must not call the registry. */
typedef vmop_rc (*ippool_collect_fn)(void *arg, const char *scope, struct ippool_set *in_use,
                                     struct vmop_err *err);

/* Atomically: the address vm_key/iface already reserves in scope, or ippool_pick(pool, collected
 * + every other reservation in scope, ippool_hint(vm_key, iface)) reserved for it. collect may be
 * NULL (nothing in the cache). */
vmop_rc ippool_allocate(struct ippool_registry *reg, const char *scope,
                        const struct api_ipv4_pool *pool, ippool_collect_fn collect,
                        void *collect_arg, const char *vm_key, const char *iface,
                        uint32_t *ret_addr, struct vmop_err *err);

/* The annotation write succeeded (or its outcome is unknown): keep holding until settled. */
void ippool_confirm(struct ippool_registry *reg, const char *scope, const char *vm_key,
                    const char *iface);
/* Drops vm_key/iface's reservation in scope (the annotation write definitely failed). */
void ippool_release(struct ippool_registry *reg, const char *scope, const char *vm_key,
                    const char *iface);
/* Drops every reservation of vm_key (the VM was deleted). */
void ippool_release_vm(struct ippool_registry *reg, const char *vm_key);
/* The cache caught up: drops vm's ("<namespace>/<name>") confirmed reservations whose address
 * the VM's annotation for that interface now shows. */
void ippool_settle(struct ippool_registry *reg, const struct api_vm *vm);
/* Live reservations (for tests and metrics). */
size_t ippool_registry_count(struct ippool_registry *reg);

#endif
