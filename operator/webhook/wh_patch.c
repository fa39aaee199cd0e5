/* wh_patch.c: JSON Patch operations and the object-level diff (see wh_patch.h). Pure.
 *
 * Note that arrays are replaced whole rather than diffed by index: an index-based patch is wrong
 * as soon as the API server's copy differs from ours in order, and mutations of lists (adding
 * eth0 to networkInterfaces) are rare and small.
 */
#include "wh_patch.h"

#include <string.h>

#include "wh_limits.h"

void wh_patch_pointer_add(struct vbuf *path, const char *token)
{
    vbuf_add(path, "/", 1);
    for (const char *p = token; *p; p++) {
        if (*p == '~')
            vbuf_add(path, "~0", 2);
        else if (*p == '/')
            vbuf_add(path, "~1", 2);
        else
            vbuf_add(path, p, 1);
    }
}

vmop_rc wh_patch_op(cJSON *patch, const char *op, const char *path, const cJSON *value,
                    struct vmop_err *err)
{
    cJSON *o = cJSON_CreateObject(), *v = NULL;
    int ok = o && cJSON_AddStringToObject(o, "op", op) && cJSON_AddStringToObject(o, "path", path);
    if (ok && value) {
        v = cJSON_Duplicate(value, 1);
        ok = v && cJSON_AddItemToObject(o, "value", v);
        if (!ok)
            cJSON_Delete(v);
    }
    if (ok)
        ok = cJSON_AddItemToArray(patch, o);
    if (!ok) {
        cJSON_Delete(o);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory building a JSON patch");
    }
    return VMOP_OK;
}

/* Cuts path back to n bytes (undoing wh_patch_pointer_add after a recursion). */
static void path_cut(struct vbuf *path, size_t n)
{
    path->len = n;
    if (path->data)
        path->data[n] = '\0';
}

static vmop_rc diff(const cJSON *a, const cJSON *b, struct vbuf *path, unsigned depth, cJSON *patch,
                    struct vmop_err *err)
{
    const cJSON *it;
    vmop_rc rc;

    if (depth > WH_MAX_PATCH_DEPTH)
        return vmop_fail(err, VMOP_E_TOOBIG, "JSON patch: nesting deeper than %d",
                         WH_MAX_PATCH_DEPTH);
    if (!cJSON_IsObject(a) || !cJSON_IsObject(b)) {
        if (cJSON_Compare(a, b, 1))
            return VMOP_OK;
        return wh_patch_op(patch, "replace", vbuf_str(path), b, err);
    }
    /* members removed from a, in a's order */
    cJSON_ArrayForEach(it, a)
    {
        size_t n = path->len;
        if (!it->string || cJSON_GetObjectItemCaseSensitive(b, it->string))
            continue;
        wh_patch_pointer_add(path, it->string);
        if (vbuf_error(path))
            return vmop_fail(err, vbuf_error(path), "JSON patch: path too long");
        rc = wh_patch_op(patch, "remove", vbuf_str(path), NULL, err);
        path_cut(path, n);
        if (rc)
            return rc;
    }
    /* members of b: added, or compared */
    cJSON_ArrayForEach(it, b)
    {
        size_t n = path->len;
        const cJSON *old;
        if (!it->string)
            continue;
        old = cJSON_GetObjectItemCaseSensitive(a, it->string);
        wh_patch_pointer_add(path, it->string);
        if (vbuf_error(path))
            return vmop_fail(err, vbuf_error(path), "JSON patch: path too long");
        rc = old ? diff(old, it, path, depth + 1, patch, err)
                 : wh_patch_op(patch, "add", vbuf_str(path), it, err);
        path_cut(path, n);
        if (rc)
            return rc;
    }
    return VMOP_OK;
}

vmop_rc wh_patch_diff(const cJSON *orig, const cJSON *mutated, cJSON **ret_patch,
                      struct vmop_err *err)
{
    cJSON *patch = cJSON_CreateArray();
    struct vbuf path;
    vmop_rc rc;

    if (!orig || !mutated) {
        cJSON_Delete(patch);
        return vmop_fail(err, VMOP_E_INVALID, "JSON patch: no document to compare");
    }
    if (!patch)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory building a JSON patch");
    vbuf_init(&path, WH_MAX_BODY);
    rc = diff(orig, mutated, &path, 0, patch, err);
    vbuf_free(&path);
    if (rc) {
        cJSON_Delete(patch);
        return rc;
    }
    *ret_patch = patch;
    return VMOP_OK;
}
