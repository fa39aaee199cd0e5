/* cel.h: a subset of the Common Expression Language as Kubernetes uses it in CRD
 * x-kubernetes-validations: parse once (cel_compile), evaluate against `self` / `oldSelf` JSON
 * values typed by their structural schema. The supported subset is listed in README-schema.md;
 * anything else fails at compile time with a message, never at run time with a crash. Pure code: a
 * compiled program is immutable and may be evaluated from several threads at once. Limits: source
 * length, AST size and nesting, evaluation steps and memory are capped (CEL_MAX_*); exceeding one
 * is a compile error or the runtime error "operation cancelled: actual cost limit exceeded". */
#ifndef AS_CEL_H
#define AS_CEL_H

#include <cjson/cJSON.h>

#include "vmop_err.h"

#define CEL_MAX_SOURCE  16384     /* bytes of one rule */
#define CEL_MAX_NODES   4096      /* AST nodes of one rule */
#define CEL_MAX_NESTING 64        /* parser recursion */
#define CEL_MAX_STEPS   1000000   /* evaluation steps of one rule on one value */
#define CEL_MAX_MEMORY  (8 << 20) /* bytes one evaluation may allocate */

struct cel_prog;

/* Parses and checks src. On failure returns VMOP_E_INVALID (or NOMEM/TOOBIG) with err->msg like
 * "ERROR: <input>:1:6: Syntax error: ..." or "ERROR: <input>:1:1: undeclared reference to 'x' (in
 * container '')". *ret_prog: caller frees with cel_prog_free. */
vmop_rc cel_compile(const char *src, struct cel_prog **ret_prog, struct vmop_err *err);
void cel_prog_free(struct cel_prog *p); /* NULL-safe */

/* True when the program refers to oldSelf (a transition rule). */
int cel_prog_uses_oldself(const struct cel_prog *p);

/* Checks field selections on self/oldSelf chains against schema (the schema node the rule is
 * attached to): "undefined field 'x'" as a compile error. VMOP_OK when nothing is wrong. */
vmop_rc cel_check_fields(const struct cel_prog *p, const cJSON *schema, struct vmop_err *err);

/* The variables of one evaluation: self (and oldSelf, NULL when absent) with the schema node that
 * types them (numbers of type "number" are doubles, of type "integer" ints). All borrowed. */
struct cel_env {
    const cJSON *self;
    const cJSON *old_self;
    const cJSON *schema;
};

/* Evaluates to a bool. A runtime error (no such key, overflow, a non-bool result...) returns
 * VMOP_E_INVALID with the CEL error text in err->msg (e.g. "no such key: cpu"). */
vmop_rc cel_eval_bool(const struct cel_prog *p, const struct cel_env *env, int *ret_bool,
                      struct vmop_err *err);
/* Evaluates to a string (messageExpression). *ret_str: malloc'd, caller frees. */
vmop_rc cel_eval_string(const struct cel_prog *p, const struct cel_env *env, char **ret_str,
                        struct vmop_err *err);

/* Kubernetes resource.Quantity: parses s ("500m", "1Gi", "2e3", "1.5") into a comparable value.
 * Returns 0 on success, -1 when s is not a quantity. Compare with cel_quantity_cmp. */
struct cel_quantity {
    long long mant; /* value = mant * 10^exp10 exactly (binary suffixes are expanded) */
    int exp10;
};
int cel_quantity_parse(const char *s, struct cel_quantity *ret_q);
int cel_quantity_cmp(const struct cel_quantity *a, const struct cel_quantity *b);

#endif
