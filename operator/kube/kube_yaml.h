/* kube_yaml.h: a small, bounded YAML subset parser, enough for kubeconfig files.
 *
 * Supported: one document (optional leading "---"), block mappings, block sequences (also
 * "key:\n- item" at the key's indentation and compact "- key: value" items), plain scalars
 * (multi-line plain continuations are joined with a space), single- and double-quoted scalars,
 * single-line flow collections ({a: b, c: [d, e]}), comments. A document whose first character is
 * '{' is parsed as JSON. Plain scalars resolve like YAML 1.2 core: null/~/"" -> null,
 * true/false -> bool, decimal numbers -> number, anything else -> string.
 * Not supported (VMOP_E_UNSUPPORTED): anchors, aliases, tags, block scalars (| >), multi-line flow
 * collections, multiple documents, tabs in indentation.
 *
 * Error messages name a line number, never the content (kubeconfigs hold tokens and keys).
 */
#ifndef KUBE_YAML_H
#define KUBE_YAML_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "vmop_err.h"

#define KUBE_YAML_MAX_INPUT ((size_t)8 << 20) /* kubeconfigs with inline certs are ~10 KiB */
#define KUBE_YAML_MAX_DEPTH 64
#define KUBE_YAML_MAX_NODES 200000

/* Parses text[0..len) into a cJSON tree. *ret is owned by the caller (cJSON_Delete); an empty
 * document gives a cJSON null. Errors: VMOP_E_INVALID (syntax), VMOP_E_UNSUPPORTED, VMOP_E_TOOBIG,
 * VMOP_E_NOMEM. */
vmop_rc kube_yaml_parse(const char *text, size_t len, cJSON **ret, struct vmop_err *err);

#endif
