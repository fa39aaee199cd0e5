/* api_convert_int.h: what the per-kind conversion files share with the dispatcher (api_convert.c).
 * Internal to api/.
 *
 * A kind's conversion is a chain of steps: step N turns a v1alpha(N+1)-shaped object into a
 * v1alphaN one (down) and back (up), both in place on an object the caller owns. Down-converting
 * the hub to vK runs the steps 5 .. K; up-converting runs K .. 5. Each step's down(up(x)) must give
 * x back for every valid vK object x; what down drops is kept by the dispatcher's annotation.
 * Helpers never fail loudly: allocation failures set cv->rc (sticky) and the dispatcher checks it.
 */
#ifndef VMOP_API_CONVERT_INT_H
#define VMOP_API_CONVERT_INT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "vmop_err.h"

struct cv {
    vmop_rc rc;   /* VMOP_OK, or VMOP_E_NOMEM after a failed allocation */
    int has_data; /* up-conversion of an object carrying API_CONVERT_ANNOTATION: what a step
                   * would only guess (v1alpha2's spec.image) is left to the stored hub data */
};

typedef void (*cv_step_fn)(struct cv *cv, cJSON *obj);

struct cv_step {
    cv_step_fn down;         /* v(N+1) -> vN; NULL: nothing to do */
    cv_step_fn up;           /* vN -> v(N+1); NULL: nothing to do */
    const char *const *drop; /* NULL-terminated hub-shaped paths vN lacks (removed before down) */
};

struct cv_kind {
    const char *kind;
    struct cv_step steps[6]; /* steps[N] for N = 1..5: between vN and v(N+1); [0] unused */
};

extern const struct cv_kind cv_kind_vm;
extern const struct cv_kind cv_kind_class;
extern const struct cv_kind cv_kind_image;
extern const struct cv_kind cv_kind_cimage;
extern const struct cv_kind cv_kind_service;
extern const struct cv_kind cv_kind_respolicy;

/* The VirtualMachine v1alpha2 <-> v1alpha1 step (api_convert_vm_a1.c). */
void cv_vm_a1_down(struct cv *cv, cJSON *obj);
void cv_vm_a1_up(struct cv *cv, cJSON *obj);

/* ---- tree helpers (api_convert_util.c) ---- */
/* o[k] when o is an object, else NULL. */
cJSON *cv_get(const cJSON *o, const char *k);
/* A dotted path of object members ("spec.network.interfaces"), NULL when any part is missing. */
cJSON *cv_at(const cJSON *root, const char *path);
/* o[k] as a string, or NULL. */
const char *cv_str(const cJSON *o, const char *k);
/* Detaches and returns o[k] (NULL when absent). */
cJSON *cv_take(cJSON *o, const char *k);
/* o[k] = v (takes v; replaces an existing member). v NULL: nothing. */
void cv_put(struct cv *cv, cJSON *o, const char *k, cJSON *v);
void cv_put_str(struct cv *cv, cJSON *o, const char *k, const char *s);
/* o[k], created as {} when absent or not an object. NULL when o is not an object or on NOMEM. */
cJSON *cv_ensure(struct cv *cv, cJSON *o, const char *k);
/* Removes the member at path; a segment "name[]" walks every element of the array "name". */
void cv_drop(cJSON *root, const char *path);
/* Moves the subtree at dotted path from to dotted path to (parents created). 1 when moved. */
int cv_move(struct cv *cv, cJSON *root, const char *from, const char *to);
/* Deletes o[k] when it is an empty object. */
void cv_prune_empty(cJSON *o, const char *k);
/* A deep copy (NULL in, NULL out; NOMEM recorded). */
cJSON *cv_dup(struct cv *cv, const cJSON *j);
/* Looks for an object member name given twice in one object anywhere in j (JSON allows it; the
 * steps would not agree on which one counts: lookups take the first, copies walk both). Returns
 * 0 when there is none; 1 with the duplicate's path ("spec.network.interfaces[0].name") in path
 * (n bytes, truncated to fit); -1 when j nests deeper than max_depth (j itself is level 1;
 * recursion is bounded by it); -2 when out of memory. */
int cv_find_dup_key(const cJSON *j, int max_depth, char *path, size_t n);
/* Renames string values: when o[k] equals from[i], it becomes to[i] (n pairs). */
void cv_map_str(struct cv *cv, cJSON *o, const char *k, const char *const *from,
                const char *const *to, int n);

#endif
