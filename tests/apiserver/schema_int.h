/* schema_int.h: helpers shared by the schema, CEL, OpenAPI and Table code of the test API server
 * (internal to apischema_lib; the server includes schema.h, openapi.h and table.h only).
 * Owns: field paths while walking an object, Kubernetes field errors turned into Status causes with
 * the exact texts of k8s.io/apimachinery/pkg/util/validation/field, and Go-style value printing
 * (%v, %q, %#v) used inside those texts. Pure code: no I/O, no globals. */
#ifndef AS_SCHEMA_INT_H
#define AS_SCHEMA_INT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "vbuf.h"
#include "vmop_err.h"

/* Longest field path kept; a deeper path is cut (it still ends in "..."), never overflows. */
#define AS_PATH_MAX 1024
/* Recursion cap when walking objects and schemas (a peer controls the object's depth). */
#define AS_MAX_DEPTH 64

struct as_path {
    char buf[AS_PATH_MAX];
    size_t len;
};

/* Each push returns the old length; as_path_pop(p, old) restores it. */
size_t as_path_child(struct as_path *p, const char *name); /* "a" or "x.a" */
size_t as_path_index(struct as_path *p, long i);           /* "x[3]" */
size_t as_path_key(struct as_path *p, const char *key);    /* "x[key]" (field.Path.Key) */
void as_path_pop(struct as_path *p, size_t old);
/* The path as field.Path.String() prints it: "<nil>" when empty. */
const char *as_path_str(const struct as_path *p);

enum as_ftype {
    AS_F_NOT_FOUND,
    AS_F_REQUIRED,
    AS_F_DUPLICATE,
    AS_F_INVALID,
    AS_F_NOT_SUPPORTED,
    AS_F_FORBIDDEN,
    AS_F_TOO_LONG,
    AS_F_TOO_MANY,
    AS_F_INTERNAL,
    AS_F_TYPE_INVALID,
};

/* Cause reason ("FieldValueInvalid") and the text that starts the message ("Invalid value"). */
const char *as_ftype_reason(enum as_ftype t);
const char *as_ftype_text(enum as_ftype t);

/* Appends {"reason","message","field"} to causes. value_go is the bad value already printed the Go
 * way (as_go_value), or NULL to omit it; Required/Forbidden/TooLong/Internal never show a value.
 * detail may be NULL or "". field NULL or "" prints as "<nil>". */
vmop_rc as_cause_add(cJSON *causes, enum as_ftype t, const char *field, const char *value_go,
                     const char *detail);
/* Same with a printf detail. */
vmop_rc as_cause_addf(cJSON *causes, enum as_ftype t, const char *field, const char *value_go,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Go printing into b. as_go_value prints a JSON value as field.Error prints a BadValue decoded from
 * JSON: strings %q, integers and floats %v, booleans, null as "null" quoted, maps/slices %#v.
 * v NULL is Go nil (prints "null" quoted). */
void as_go_value(struct vbuf *b, const cJSON *v);
void as_go_quote(struct vbuf *b, const char *s); /* strconv.Quote */
void as_go_float(struct vbuf *b, double d);      /* %v of a float64 */
/* JSON numbers: integral values within int64 are Go int64 after decoding; others float64. */
int as_json_is_int(const cJSON *v, long long *ret_i);
/* Convenience: malloc'd as_go_value / as_go_quote (NULL on NOMEM). */
char *as_go_value_str(const cJSON *v);
char *as_go_quote_str(const char *s);

/* UTF-8 code points in s (Go utf8.RuneCountInString; invalid bytes count one each). */
size_t as_utf8_len(const char *s);

/* Deep equality of two JSON values (numbers by value, objects ignoring key order). */
int as_json_equal(const cJSON *a, const cJSON *b);

/* POSIX-extended translation of a Go RE2 pattern (\d \w \s \D \W \S, (?:...) and escapes inside
 * brackets are rewritten); the result is compiled with regcomp(REG_EXTENDED|REG_NOSUB).
 * Returns 1 match, 0 no match, -1 the pattern cannot be used (message in err). */
int as_regex_match(const char *pattern, const char *s, struct vmop_err *err);

/* The type name of a schema node ("object"...), "" when absent. */
const char *as_schema_type(const cJSON *schema);
/* True when the schema node has this boolean extension set to true. */
int as_schema_flag(const cJSON *schema, const char *name);

#endif
