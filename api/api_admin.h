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

struct api_binding_network {
    const char *name, *port_group;
    int has_ipv4_pool;
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
/* 1 when the binding allows this StorageClass (an absent list allows none). */
int api_binding_allows_storage_class(const struct api_binding *b, const char *sc);
/* 1 when the binding offers this class (an absent or empty list offers every class). */
int api_binding_offers_class(const struct api_binding *b, const char *cls);

#endif
