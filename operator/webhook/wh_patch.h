/* wh_patch.h: RFC 6902 JSON Patch for mutating admission handlers (pure, no I/O).
 *
 * Owns: JSON Pointer (RFC 6901) escaping, single operations, and the diff of an original object
 * against its mutated copy. Not here: sending the patch (wh_review.h does the base64 and
 * patchType).
 *
 * Typical use in a handler: mutated = cJSON_Duplicate(req->object, 1); change it;
 * wh_patch_diff(req->object, mutated, &patch, err); wh_admission_set_patch(resp, patch).
 */
#ifndef VMOP_WH_PATCH_H
#define VMOP_WH_PATCH_H

#include <cjson/cJSON.h>

#include "vbuf.h"
#include "vmop_err.h"

/* Appends "/" and token escaped as a JSON Pointer reference token ("~" -> "~0", "/" -> "~1"). */
void wh_patch_pointer_add(struct vbuf *path, const char *token);

/* Appends {"op":op,"path":path[,"value":copy of value]} to patch (a JSON array). op is "add",
 * "replace" or "remove" (value NULL). value is borrowed (copied). */
vmop_rc wh_patch_op(cJSON *patch, const char *op, const char *path, const cJSON *value,
                    struct vmop_err *err);

/* The operations that turn orig into mutated, both borrowed: object members are compared key by
 * key ("add" for new ones, "remove" for gone ones, recursion into objects on both sides);
 * anything else that differs (scalars, arrays, a type change) is one "replace" of the whole
 * value. Equal documents give an empty array. *ret_patch (a JSON array, owned: cJSON_Delete) is
 * set on VMOP_OK only. Failures: VMOP_E_NOMEM, VMOP_E_TOOBIG (nesting past WH_MAX_PATCH_DEPTH or a
 * path past WH_MAX_BODY). */
vmop_rc wh_patch_diff(const cJSON *orig, const cJSON *mutated, cJSON **ret_patch,
                      struct vmop_err *err);

#endif
