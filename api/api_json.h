/* api_json.h: typed, tolerant access to cJSON trees for the api/ parsers.
 *
 * Owns nothing. Getters return values borrowed from the tree (valid while the tree lives and that
 * member is not replaced). A member with the wrong JSON type is recorded in `fe` as a type error on
 * path "<parent>.<key>" and treated as absent; JSON null is treated as absent (as Kubernetes does).
 */
#ifndef VMOP_API_JSON_H
#define VMOP_API_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "api_ferr.h"
#include "vmop_err.h"

/* "<parent>.<key>" (or "<key>" when parent is "") into buf; truncated to fit. Returns buf. */
const char *api_path(char *buf, size_t n, const char *parent, const char *key);
/* "<parent>[<i>]" into buf. Returns buf. */
const char *api_path_index(char *buf, size_t n, const char *parent, size_t i);

const char *api_json_str(const cJSON *obj, const char *key, const char *parent,
                         struct api_ferrs *fe);
/* 1 and *ret when present with the right type, else 0. */
int api_json_bool(const cJSON *obj, const char *key, const char *parent, struct api_ferrs *fe,
                  int *ret);
int api_json_int(const cJSON *obj, const char *key, const char *parent, struct api_ferrs *fe,
                 long long *ret);
const cJSON *api_json_obj(const cJSON *obj, const char *key, const char *parent,
                          struct api_ferrs *fe);
const cJSON *api_json_arr(const cJSON *obj, const char *key, const char *parent,
                          struct api_ferrs *fe);
/* A quantity member: a string or an integer number. Writes its text into buf (n >= 64). */
int api_json_qty_text(const cJSON *obj, const char *key, const char *parent, struct api_ferrs *fe,
                      char *buf, size_t n);

/* Returns obj[key], creating (or replacing a non-object with) an empty object. NULL on NOMEM. */
cJSON *api_json_ensure_obj(cJSON *obj, const char *key);
/* obj[key] = val (a copy); val NULL deletes the member. */
vmop_rc api_json_set_str(cJSON *obj, const char *key, const char *val, struct vmop_err *err);

/* Plain lookups for code that only reads (no type errors recorded), NULL-safe all the way:
 * member key of object o (NULL when o is not an object); o.a.b.c.d, stopping at the first NULL
 * key; the string value of o itself (key NULL) or of its member key. */
const cJSON *api_jget(const cJSON *o, const char *key);
const cJSON *api_jpath(const cJSON *o, const char *a, const char *b, const char *c, const char *d);
const char *api_jstr(const cJSON *o, const char *key);

#endif
