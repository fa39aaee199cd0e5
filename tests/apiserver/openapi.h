/* openapi.h: OpenAPI v3 documents of the test API server, one per group/version, built from the
 * server's resource descriptors: what `kubectl apply` probes (the PATCH operation of a kind lists
 * the query parameter fieldValidation, so kubectl validates on the server) and what `kubectl
 * explain` walks (components.schemas with x-kubernetes-group-version-kind, descriptions, $ref to
 * ObjectMeta). Pure functions; the server builds the /openapi/v3 index and the ?hash= itself.
 *
 * A resource descriptor (borrowed cJSON the server builds):
 *   {"group":"example.com","version":"v1","kind":"VirtualMachine","listKind":"VirtualMachineList",
 *    "plural":"virtualmachines","singular":"virtualmachine","namespaced":true,"builtin":false,
 *    "schema":{openAPIV3Schema, CRDs only},"subresources":{"status":{}},
 *    "printerColumns":[...],"shortNames":["vm"],"categories":["all"]}
 * Built-ins ("builtin":true, no schema) get a compact schema by group+kind (Namespace, Secret,
 * ConfigMap, Event, Lease, Service, Endpoints, EndpointSlice, StorageClass, ServiceAccount,
 * CustomResourceDefinition); other kinds an object that preserves unknown fields. */
#ifndef AS_OPENAPI_H
#define AS_OPENAPI_H

#include <cjson/cJSON.h>

#include "vmop_err.h"

/* The document for group/version ("" group = core, paths under /api/v1) from the descriptors of
 * every resource served in it (array, borrowed). *ret_doc: new cJSON, caller frees with
 * cJSON_Delete. */
vmop_rc as_openapi_gv_doc(const char *group, const char *version, const cJSON *resources,
                          cJSON **ret_doc, struct vmop_err *err);

/* The compact schema of a built-in kind (new cJSON, caller frees), or NULL when unknown. Its $refs
 * point to "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" etc. */
cJSON *as_openapi_builtin_schema(const char *group, const char *kind);

/* The component name of a kind: "io.k8s.api.core.v1.ConfigMap", "com.example.v1.VirtualMachine".
 * Writes into buf (NUL-terminated, cut to size). */
void as_openapi_schema_name(const char *group, const char *version, const char *kind, int builtin,
                            char *buf, size_t size);

/* The shared meta.k8s.io components (ObjectMeta, ListMeta, Status, OwnerReference,
 * ManagedFieldsEntry, Patch, DeleteOptions...) added to components.schemas. NOMEM -> -1. */
int as_openapi_add_meta_components(cJSON *schemas);

#endif
