/* api_admin.h: the admin-side configuration, group infra.vmop.io/v1alpha1 (docs/admin-guide.md):
 * VCenterEndpoint (cluster-scoped: URL, TLS, credentials Secret in the operator's namespace) and
 * NamespaceBinding (per namespace: endpoint, placement, libraries, networks, storage classes,
 * classes). Parse + validate + lookups. Structs own a private copy of the JSON; strings are
 * borrowed from it. The credentials themselves are never read here (the operator reads the Secret).
 */
#ifndef VMOP_API_ADMIN_H
#define VMOP_API_ADMIN_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "api_ferr.h"
#include "vmop_err.h"

#define API_ADMIN_MAX_NETWORKS  64
#define API_ADMIN_MAX_LIBRARIES 32

struct api_library_ref {
    const char *name, *id; /* at least one set */
};

struct api_endpoint {
    cJSON *obj; /* owned */
    const char *name, *server, *ca_bundle, *thumbprint, *datacenter;
    int insecure;
    const char *secret_name, *username_key, *password_key; /* keys default "username"/"password" */
    struct api_library_ref libraries[API_ADMIN_MAX_LIBRARIES];
    size_t n_libraries, n_libraries_total;
    struct api_ferrs parse_errs;
};

/* A network's static IPv4 pool (spec.networks[].ipv4Pool; allocation: operator/ippool.h).
 * Caps: ranges, total addresses over all ranges, nameservers, search domains. */
#define API_IPV4_POOL_MAX_RANGES      16
#define API_IPV4_POOL_MAX_ADDRS       65536
#define API_IPV4_POOL_MAX_NAMESERVERS 8
#define API_IPV4_POOL_MAX_SEARCH      8

struct api_ipv4_range {
    const char *start_s, *end_s; /* as written (borrowed) */
    uint32_t start, end;         /* host byte order; valid when ok */
    int ok;                      /* both parse as IPv4 addresses */
};

struct api_ipv4_pool {
    struct api_ipv4_range ranges[API_IPV4_POOL_MAX_RANGES];
    size_t n_ranges, n_ranges_total;
    long long prefix; /* 0 when absent */
    const char *gateway_s;
    uint32_t gateway; /* host byte order; valid when gateway_ok */
    int gateway_ok;
    const char *nameservers[API_IPV4_POOL_MAX_NAMESERVERS]; /* IPv4 or IPv6 text */
    size_t n_nameservers, n_nameservers_total;
    const char *search_domains[API_IPV4_POOL_MAX_SEARCH];
    size_t n_search_domains, n_search_domains_total;
};

struct api_binding_network {
    const char *name, *port_group;
    int has_ipv4_pool;
    struct api_ipv4_pool ipv4_pool; /* meaningful when has_ipv4_pool */
};

struct api_binding {
    cJSON *obj; /* owned */
    const char *name, *namespace_, *endpoint, *datacenter, *resource_pool, *vm_folder, *datastore;
    const char *default_network;
    struct api_library_ref libraries[API_ADMIN_MAX_LIBRARIES];
    size_t n_libraries, n_libraries_total;
    struct api_binding_network networks[API_ADMIN_MAX_NETWORKS];
    size_t n_networks, n_networks_total;
    const cJSON *storage_classes, *vm_classes; /* borrowed string arrays or NULL */
    struct api_ferrs parse_errs;
};

vmop_rc api_endpoint_parse(const cJSON *json, struct api_endpoint **ret, struct vmop_err *err);
void api_endpoint_free(struct api_endpoint *e);
void api_endpoint_validate(const struct api_endpoint *e, struct api_ferrs *fe);

vmop_rc api_binding_parse(const cJSON *json, struct api_binding **ret, struct vmop_err *err);
void api_binding_free(struct api_binding *b);
void api_binding_validate(const struct api_binding *b, struct api_ferrs *fe);
/* The port group a tenant network name maps to, or NULL (name NULL: the default network). */
const char *api_binding_port_group(const struct api_binding *b, const char *name);
/* The IPv4 pool of a tenant network (name NULL: the default network), or NULL when it has none. */
const struct api_ipv4_pool *api_binding_ipv4_pool(const struct api_binding *b, const char *name);

/* Checks a pool (done by api_binding_validate for every network): IPv4 only, prefix 1..32, at least
 * one range, start <= end, ranges and gateway inside the subnet (gateway/prefix, else the first
 * range's start/prefix), no overlapping ranges, at most API_IPV4_POOL_MAX_ADDRS addresses, the
 * gateway not the network or broadcast address, nameservers IPv4 or IPv6, search domains DNS
 * names. Errors carry paths under `path` ("spec.networks[0].ipv4Pool"). */
void api_ipv4_pool_validate(const struct api_ipv4_pool *p, const char *path, struct api_ferrs *fe);
/* Strict dotted-quad IPv4 text to host byte order: 1 on success, else 0. */
int api_ipv4_parse(const char *s, uint32_t *ret);
/* Host byte order to dotted quad (buf: at least 16 bytes). Returns buf. */
const char *api_ipv4_format(uint32_t a, char *buf, size_t n);
/* Netmask of a prefix length 0..32 (host byte order). */
uint32_t api_ipv4_mask(long long prefix);

/* 1 when the binding allows this StorageClass (an absent list allows none). */
int api_binding_allows_storage_class(const struct api_binding *b, const char *sc);
/* 1 when the binding offers this class (an absent or empty list offers every class). */
int api_binding_offers_class(const struct api_binding *b, const char *cls);

#endif
