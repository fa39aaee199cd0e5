/* table.h: server-side printing for the test API server: meta.k8s.io/v1 Table objects (what
 * `kubectl get` shows) from printer columns in the CRD additionalPrinterColumns format, the
 * JSONPath subset those columns use, and kubectl's humanised durations. Pure functions.
 *
 * Columns: [{"name":"Phase","type":"string","format":"","description":"...","priority":0,
 *            "jsonPath":".status.phase"}, ...] with type integer|number|string|boolean|date.
 * JSONPath subset: .a.b  .a[0].b  .a[-1]  .a[*].b  .a['x.y']  .a[?(@.type=="Ready")].status
 * (filters: == and != against a string or number literal). A column's cell is the first match.
 * Built-in columns may use private paths starting with '#' (see table.c); only as_table_build
 * understands them. */
#ifndef AS_TABLE_H
#define AS_TABLE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "vmop_err.h"

enum as_include { AS_INCLUDE_NONE, AS_INCLUDE_METADATA, AS_INCLUDE_OBJECT };

/* The printer columns of a built-in resource, not including Name (implicit first column).
 * NULL/unknown group+plural -> [Age]. *ret_cols: new array, caller frees with cJSON_Delete. */
vmop_rc as_table_builtin_columns(const char *group, const char *plural, cJSON **ret_cols,
                                 struct vmop_err *err);

/* A meta.k8s.io/v1 Table for items (array of full objects, borrowed). cols: printer columns
 * (borrowed; NULL or empty -> a single Age column). with_headers 0 gives "columnDefinitions": null
 * (watch events after the first). now: Unix seconds that `date` cells are humanised against.
 * Rows: cells (Name first), object = PartialObjectMetadata / the full object / absent per include.
 * The caller sets metadata.resourceVersion / continue. *ret_table: new cJSON, caller frees. */
vmop_rc as_table_build(const cJSON *cols, const cJSON *items, enum as_include include,
                       int with_headers, long long now, cJSON **ret_table, struct vmop_err *err);

/* kubectl's duration.HumanDuration for a number of seconds: "45s", "5m12s", "3h", "2d5h", "3y",
 * "<invalid>" below -1 s. Writes into buf (NUL-terminated). */
void as_human_duration(long long seconds, char *buf, size_t size);

/* Parses an RFC 3339 timestamp into Unix seconds. Returns 0, or -1 when it does not parse. */
int as_parse_timestamp(const char *s, long long *ret_secs);

/* Evaluates a JSONPath of the subset on obj: up to max_matches matches (borrowed pointers into obj)
 * go to ret_matches[], their count to *ret_n. Returns VMOP_OK, or VMOP_E_INVALID when the path is
 * outside the subset (err filled). "{.a.b}" (template braces) is accepted too. */
vmop_rc as_jsonpath_eval(const char *path, const cJSON *obj, const cJSON **ret_matches,
                         size_t max_matches, size_t *ret_n, struct vmop_err *err);

#endif
