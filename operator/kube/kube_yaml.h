/* kube_yaml.h: YAML to cJSON for kubeconfig files and Kubernetes manifests, built on libyaml
 * (its event parser; this module owns the mapping to cJSON and every limit).
 *
 * Read: YAML 1.1/1.2 as libyaml parses it: block and flow mappings and sequences (flow ones may
 * span lines), every scalar style (plain, single- and double-quoted, literal | and folded >
 * block scalars), comments, directives, anchors and aliases (an alias is expanded into a copy;
 * the copies count against KUBE_YAML_MAX_NODES and KUBE_YAML_MAX_DEPTH, so an alias bomb is
 * VMOP_E_TOOBIG; an anchor defined again names the later node), the merge key "<<" (a mapping
 * or a sequence of mappings; explicit keys win).
 * An input that is one JSON object (first non-blank '{') is parsed by cJSON, as before: duplicate
 * keys kept, only cJSON's own nesting limit applies; anything else starting with '{' is YAML.
 * Plain scalars resolve like the YAML 1.2 core schema: null/Null/NULL/~/empty -> null,
 * true/True/TRUE/false/False/FALSE -> bool, decimal ints and floats -> number, anything else
 * (yes/no/on/off, 0x1F, .inf) -> string; an integer with a leading zero (0755: octal in YAML 1.1,
 * decimal in 1.2) stays a string too. Quoted and block scalars are always strings. Tags: !!str
 * and ! make a plain scalar a string, other tag:yaml.org,2002 tags are ignored.
 * Refused: a second document (VMOP_E_UNSUPPORTED: only single-document files are read), other
 * tags, mapping keys that are not scalars or are aliases, NUL in a scalar (VMOP_E_UNSUPPORTED),
 * duplicate mapping keys and aliases to undefined or enclosing anchors (VMOP_E_INVALID).
 *
 * Error messages name a line and column and libyaml's fixed problem text, never the content
 * (kubeconfigs hold tokens and keys).
 */
#ifndef KUBE_YAML_H
#define KUBE_YAML_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "vmop_err.h"

#define KUBE_YAML_MAX_INPUT ((size_t)8 << 20) /* kubeconfigs with inline certs are ~10 KiB */
#define KUBE_YAML_MAX_DEPTH 64
#define KUBE_YAML_MAX_NODES 200000

/* Parses text[0..len) (at most KUBE_YAML_MAX_INPUT bytes) into a cJSON tree. *ret is
 * owned by the caller (cJSON_Delete); an empty document gives a cJSON null. Errors: VMOP_E_INVALID
 * (syntax, duplicate key), VMOP_E_UNSUPPORTED, VMOP_E_TOOBIG (input, depth, nodes), VMOP_E_NOMEM.
 */
vmop_rc kube_yaml_parse(const char *text, size_t len, cJSON **ret, struct vmop_err *err);

#endif
