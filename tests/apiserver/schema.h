/* schema.h: structural-schema handling of CustomResourceDefinitions for the test API server:
 * pruning of unknown fields, defaulting, validation (OpenAPI v3 keywords, x-kubernetes-*
 * extensions, CEL x-kubernetes-validations) with the exact causes and messages of kube-apiserver,
 * and CRD checks at registration. Pure functions (cJSON in, cJSON out; no I/O, no globals), safe to
 * call from several threads at once. The contract with the server is
 * /work/briefs/apiserver-interface.md; what is supported is listed in
 * tests/apiserver/README-schema.md.
 *
 * `schema` is always one CRD version's spec.versions[i].schema.openAPIV3Schema (borrowed,
 * read-only). Objects are whole objects (apiVersion, kind, metadata, spec, status...). Paths in
 * causes are relative to the object root ("spec.cpu", "spec.disks[0].name"). A cause is
 * {"reason":"FieldValueInvalid","message":"Invalid value: 0: ...","field":"spec.cpu"}. Return
 * values: VMOP_OK unless something internal failed (NOMEM, an unusable schema): then err is filled.
 * Problems with the object are causes, never return codes. */
#ifndef AS_SCHEMA_H
#define AS_SCHEMA_H

#include <cjson/cJSON.h>

#include "vmop_err.h"

/* Checks a CRD object on create/update: structural schema rules, each served version's schema
 * well-formed, defaults valid, patterns compile, CEL rules compile within the supported subset.
 * Appends one cause per problem, with fields such as
 * "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule".
 * The server answers 422 Invalid when causes is non-empty after the call. */
vmop_rc as_crd_check(const cJSON *crd, cJSON *causes, struct vmop_err *err);

/* Removes fields unknown to the schema from obj in place (honours
 * x-kubernetes-preserve-unknown-fields, x-kubernetes-embedded-resource, additionalProperties,
 * int-or-string). apiVersion and kind at the root are kept; in metadata only unknown top-level keys
 * of ObjectMeta are removed (and reported). Each removed field's path is appended as a string to
 * unknown (sorted, e.g. "spec.disks[0].bar"); unknown may be NULL. */
vmop_rc as_schema_prune(const cJSON *schema, cJSON *obj, cJSON *unknown, struct vmop_err *err);

/* Applies `default:` values in place (after pruning), recursively, only inside parents that exist,
 * and replaces null by the default when the field is not nullable; drops a null field that is
 * neither nullable nor defaulted (as apiextensions does). */
vmop_rc as_schema_default(const cJSON *schema, cJSON *obj, struct vmop_err *err);

/* Validates obj against schema: core keywords, x-kubernetes-list-type set/map, then CEL rules
 * (skipped, with the kube-apiserver notice, when a blocking error exists). old is the previous
 * stored object on update (NULL on create): transition rules (those using oldSelf) run only where
 * old has a value. Appends causes; the object is valid when nothing was appended. */
vmop_rc as_schema_validate(const cJSON *schema, const cJSON *obj, const cJSON *old, cJSON *causes,
                           struct vmop_err *err);

/* The Status message for a 422, as kube-apiserver builds it (errors.NewInvalid):
 *   `VirtualMachine.example.com "vm0" is invalid: spec.cpu: Invalid value: 0: ...`
 *   several causes: `... is invalid: [spec.a: Required value, spec.b: Unsupported value: ...]`
 * group "" gives `ConfigMap "x" is invalid: ...`. Identical cause texts are listed once.
 * Returns a malloc'd string (caller frees) or NULL on NOMEM. */
char *as_invalid_message(const char *kind, const char *group, const char *name,
                         const cJSON *causes);

/* Optional helper: checks a metadata.name as a DNS-1123 subdomain and appends the kube cause
 * (field "metadata.name") when it is not one. Returns VMOP_OK or VMOP_E_NOMEM. */
vmop_rc as_validate_object_name(const char *name, cJSON *causes);

#endif
