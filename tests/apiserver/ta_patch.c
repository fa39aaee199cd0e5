/* ta_patch.c: the patch formats kube-testapi accepts: RFC 7386 merge patch, RFC 6902 JSON patch and
 * an approximation of strategic merge patch (merge patch where well-known lists of maps merge by
 * their key; $patch/$retainKeys/$setElementOrder directives honoured or dropped). Pure functions.
 */
#include "ta.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

/* ---- merge patch --------------------------------------------------------------------------- */

static vmop_rc merge(cJSON **target, const cJSON *patch, int strategic, const char *field,
                     int depth, struct vmop_err *err);

/* Strategic: the merge key of a list field of a built-in kind, or NULL (replace the list). */
static const char *smp_merge_key(const char *field)
{
    static const char *const keys[][2] = {
        {"containers", "name"},
        {"initContainers", "name"},
        {"env", "name"},
        {"volumes", "name"},
        {"volumeMounts", "mountPath"},
        {"ports", "port"},
        {"conditions", "type"},
        {"ownerReferences", "uid"},
        {"imagePullSecrets", "name"},
        {"secrets", "name"},
        {"tolerations", "key"},
        {"hostAliases", "ip"},
        {"endpoints", "addresses"},
        {"subsets", NULL},
    };
    size_t i;
    if (!field)
        return NULL;
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (strcmp(keys[i][0], field) == 0)
            return keys[i][1];
    return NULL;
}

static int is_directive(const char *k)
{
    return k && k[0] == '$';
}

/* Strips "$..." directive keys recursively (what remains after a strategic patch). */
static void strip_directives(cJSON *v)
{
    cJSON *c, *next;
    if (!cJSON_IsObject(v) && !cJSON_IsArray(v))
        return;
    for (c = v->child; c; c = next) {
        next = c->next;
        if (cJSON_IsObject(v) &&
            (is_directive(c->string) ||
             (c->string && strncmp(c->string, "$setElementOrder/", 17) == 0))) {
            cJSON_Delete(cJSON_DetachItemViaPointer(v, c));
            continue;
        }
        strip_directives(c);
    }
}

static cJSON *find_by_key(cJSON *arr, const char *key, const cJSON *val)
{
    cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, key);
        if (k && cJSON_Compare(k, val, 1))
            return it;
    }
    return NULL;
}

static vmop_rc merge_keyed_list(cJSON *tgt, const cJSON *patch, const char *key, int depth,
                                struct vmop_err *err)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, patch)
    {
        const cJSON *kv = cJSON_GetObjectItemCaseSensitive(p, key);
        const char *directive = ta_jstr(p, "$patch");
        cJSON *cur;
        if (!cJSON_IsObject(p) || !kv) {
            cJSON *dup = cJSON_Duplicate(p, 1);
            if (!dup)
                return vmop_fail(err, VMOP_E_NOMEM, "out of memory in strategic merge");
            strip_directives(dup);
            cJSON_AddItemToArray(tgt, dup);
            continue;
        }
        cur = find_by_key(tgt, key, kv);
        if (directive && strcmp(directive, "delete") == 0) {
            if (cur)
                cJSON_Delete(cJSON_DetachItemViaPointer(tgt, cur));
            continue;
        }
        if (cur) {
            cJSON *tmp = cJSON_Duplicate(cur, 1);
            vmop_rc rc;
            if (!tmp)
                return vmop_fail(err, VMOP_E_NOMEM, "out of memory in strategic merge");
            rc = merge(&tmp, p, 1, NULL, depth + 1, err);
            if (rc) {
                cJSON_Delete(tmp);
                return rc;
            }
            cJSON_ReplaceItemViaPointer(tgt, cur, tmp);
        } else {
            cJSON *dup = cJSON_Duplicate(p, 1);
            if (!dup)
                return vmop_fail(err, VMOP_E_NOMEM, "out of memory in strategic merge");
            strip_directives(dup);
            cJSON_AddItemToArray(tgt, dup);
        }
    }
    return VMOP_OK;
}

static vmop_rc merge(cJSON **target, const cJSON *patch, int strategic, const char *field,
                     int depth, struct vmop_err *err)
{
    const cJSON *p;
    if (depth > MAX_DEPTH)
        return vmop_fail(err, VMOP_E_TOOBIG, "patch nested deeper than %d levels", MAX_DEPTH);
    if (strategic && cJSON_IsArray(patch) && cJSON_IsArray(*target) && smp_merge_key(field)) {
        return merge_keyed_list(*target, patch, smp_merge_key(field), depth, err);
    }
    if (!cJSON_IsObject(patch)) {
        cJSON *dup = cJSON_Duplicate(patch, 1);
        if (!dup)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory applying a patch");
        if (strategic)
            strip_directives(dup);
        cJSON_Delete(*target);
        *target = dup;
        return VMOP_OK;
    }
    if (strategic) {
        const char *d = ta_jstr(patch, "$patch");
        if (d && strcmp(d, "replace") == 0) {
            cJSON *dup = cJSON_Duplicate(patch, 1);
            if (!dup)
                return vmop_fail(err, VMOP_E_NOMEM, "out of memory applying a patch");
            strip_directives(dup);
            cJSON_Delete(*target);
            *target = dup;
            return VMOP_OK;
        }
        if (d && strcmp(d, "delete") == 0) {
            cJSON_Delete(*target);
            *target = cJSON_CreateNull();
            return *target ? VMOP_OK : vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        }
    }
    if (!cJSON_IsObject(*target)) {
        cJSON_Delete(*target);
        *target = cJSON_CreateObject();
        if (!*target)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory applying a patch");
    }
    cJSON_ArrayForEach(p, patch)
    {
        cJSON *cur;
        vmop_rc rc;
        if (strategic && is_directive(p->string)) {
            continue;
        }
        if (strategic && strncmp(p->string, "$setElementOrder/", 17) == 0)
            continue;
        if (strategic && strncmp(p->string, "$deleteFromPrimitiveList/", 25) == 0) {
            cJSON *list = cJSON_GetObjectItemCaseSensitive(*target, p->string + 25);
            const cJSON *del;
            if (cJSON_IsArray(list)) {
                cJSON_ArrayForEach(del, p)
                {
                    cJSON *it, *next;
                    for (it = list->child; it; it = next) {
                        next = it->next;
                        if (cJSON_Compare(it, del, 1))
                            cJSON_Delete(cJSON_DetachItemViaPointer(list, it));
                    }
                }
            }
            continue;
        }
        cur = cJSON_GetObjectItemCaseSensitive(*target, p->string);
        if (cJSON_IsNull(p)) {
            if (cur)
                cJSON_DeleteItemFromObjectCaseSensitive(*target, p->string);
            continue;
        }
        if (cur) {
            cJSON *tmp = cJSON_DetachItemViaPointer(*target, cur);
            rc = merge(&tmp, p, strategic, p->string, depth + 1, err);
            if (rc) {
                cJSON_Delete(tmp);
                return rc;
            }
            if (cJSON_IsNull(tmp) && strategic)
                cJSON_Delete(tmp);
            else
                cJSON_AddItemToObject(*target, p->string, tmp);
        } else {
            cJSON *tmp = NULL;
            if (cJSON_IsObject(p)) {
                tmp = cJSON_CreateObject();
                if (!tmp)
                    return vmop_fail(err, VMOP_E_NOMEM, "out of memory applying a patch");
                rc = merge(&tmp, p, strategic, p->string, depth + 1, err);
                if (rc) {
                    cJSON_Delete(tmp);
                    return rc;
                }
            } else {
                tmp = cJSON_Duplicate(p, 1);
                if (!tmp)
                    return vmop_fail(err, VMOP_E_NOMEM, "out of memory applying a patch");
                if (strategic)
                    strip_directives(tmp);
            }
            cJSON_AddItemToObject(*target, p->string, tmp);
        }
    }
    return VMOP_OK;
}

vmop_rc ta_merge_patch(cJSON **target, const cJSON *patch, struct vmop_err *err)
{
    return merge(target, patch, 0, NULL, 0, err);
}

vmop_rc ta_strategic_patch(cJSON **target, const cJSON *patch, struct vmop_err *err)
{
    if (!cJSON_IsObject(patch))
        return vmop_fail_fault(err, VMOP_E_INVALID, "BadRequest", 400,
                               "a strategic merge patch must be a JSON object");
    return merge(target, patch, 1, NULL, 0, err);
}

/* ---- JSON patch ---------------------------------------------------------------------------- */

/* Decodes one reference token (~1 -> /, ~0 -> ~) from *p into tok; advances *p. */
static int next_token(const char **p, char *tok, size_t size)
{
    size_t n = 0;
    const char *s = *p;
    if (*s != '/')
        return -1;
    s++;
    while (*s && *s != '/') {
        char c = *s++;
        if (c == '~') {
            if (*s == '0')
                c = '~';
            else if (*s == '1')
                c = '/';
            else
                return -1;
            s++;
        }
        if (n + 1 >= size)
            return -1;
        tok[n++] = c;
    }
    tok[n] = '\0';
    *p = s;
    return 0;
}

static int parse_index(const char *tok, int size, int allow_end)
{
    char *end;
    long v;
    if (allow_end && strcmp(tok, "-") == 0)
        return size;
    if (!*tok || (tok[0] == '0' && tok[1]) || tok[0] == '-' || tok[0] == '+')
        return -1;
    v = strtol(tok, &end, 10);
    if (*end || v < 0 || v > size - (allow_end ? 0 : 1))
        return -1;
    return (int)v;
}

/* Resolves path to its parent container and last token. */
static int resolve_parent(cJSON *root, const char *path, cJSON **ret_parent, char *last,
                          size_t size)
{
    const char *p = path;
    cJSON *cur = root;
    char tok[512];
    if (!*path)
        return -1;
    for (;;) {
        if (next_token(&p, tok, sizeof(tok)))
            return -1;
        if (!*p)
            break;
        if (cJSON_IsObject(cur)) {
            cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
        } else if (cJSON_IsArray(cur)) {
            int i = parse_index(tok, cJSON_GetArraySize(cur), 0);
            cur = i < 0 ? NULL : cJSON_GetArrayItem(cur, i);
        } else {
            cur = NULL;
        }
        if (!cur)
            return -1;
    }
    if (strlen(tok) >= size)
        return -1;
    memcpy(last, tok, strlen(tok) + 1);
    *ret_parent = cur;
    return 0;
}

static cJSON *get_at(cJSON *root, const char *path)
{
    cJSON *parent;
    char last[512];
    if (!*path)
        return root;
    if (resolve_parent(root, path, &parent, last, sizeof(last)))
        return NULL;
    if (cJSON_IsObject(parent))
        return cJSON_GetObjectItemCaseSensitive(parent, last);
    if (cJSON_IsArray(parent)) {
        int i = parse_index(last, cJSON_GetArraySize(parent), 0);
        return i < 0 ? NULL : cJSON_GetArrayItem(parent, i);
    }
    return NULL;
}

static cJSON *detach_at(cJSON *root, const char *path)
{
    cJSON *parent;
    char last[512];
    if (resolve_parent(root, path, &parent, last, sizeof(last)))
        return NULL;
    if (cJSON_IsObject(parent))
        return cJSON_DetachItemFromObjectCaseSensitive(parent, last);
    if (cJSON_IsArray(parent)) {
        int i = parse_index(last, cJSON_GetArraySize(parent), 0);
        return i < 0 ? NULL : cJSON_DetachItemFromArray(parent, i);
    }
    return NULL;
}

/* Adds (or, with replace, replaces) val at path; takes val. */
static int put_at(cJSON **root, const char *path, cJSON *val, int replace)
{
    cJSON *parent;
    char last[512];
    if (!*path) {
        cJSON_Delete(*root);
        *root = val;
        return 0;
    }
    if (resolve_parent(*root, path, &parent, last, sizeof(last)))
        goto fail;
    if (cJSON_IsObject(parent)) {
        if (cJSON_GetObjectItemCaseSensitive(parent, last))
            cJSON_ReplaceItemInObjectCaseSensitive(parent, last, val);
        else if (replace)
            goto fail;
        else
            cJSON_AddItemToObject(parent, last, val);
        return 0;
    }
    if (cJSON_IsArray(parent)) {
        int n = cJSON_GetArraySize(parent);
        int i = parse_index(last, n, !replace);
        if (i < 0)
            goto fail;
        if (replace)
            cJSON_ReplaceItemInArray(parent, i, val);
        else if (i == n)
            cJSON_AddItemToArray(parent, val);
        else
            cJSON_InsertItemInArray(parent, i, val);
        return 0;
    }
fail:
    cJSON_Delete(val);
    return -1;
}

vmop_rc ta_json_patch(cJSON **target, const cJSON *ops, struct vmop_err *err)
{
    const cJSON *op;
    int idx = 0;
    if (!cJSON_IsArray(ops))
        return vmop_fail_fault(err, VMOP_E_INVALID, "BadRequest", 400,
                               "json patch must be a JSON array of operations");
    cJSON_ArrayForEach(op, ops)
    {
        const char *name = ta_jstr(op, "op"), *path = ta_jstr(op, "path"),
                   *from = ta_jstr(op, "from");
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(op, "value");
        cJSON *v = NULL;
        if (!name || !path)
            return vmop_fail_fault(err, VMOP_E_INVALID, "Invalid", 422,
                                   "json patch operation %d has no \"op\" or \"path\"", idx);
        if (strcmp(name, "add") == 0 || strcmp(name, "replace") == 0) {
            if (!value)
                return vmop_fail_fault(err, VMOP_E_INVALID, "Invalid", 422,
                                       "json patch %s operation %d has no value", name, idx);
            v = cJSON_Duplicate(value, 1);
            if (!v)
                return vmop_fail(err, VMOP_E_NOMEM, "out of memory applying a json patch");
            if (put_at(target, path, v, name[0] == 'r'))
                return vmop_fail_fault(err, VMOP_E_INVALID, "Invalid", 422,
                                       "json patch %s operation does not apply: doc is missing "
                                       "path: \"%s\"",
                                       name, path);
        } else if (strcmp(name, "remove") == 0) {
            v = detach_at(*target, path);
            if (!v)
                return vmop_fail_fault(
                    err, VMOP_E_INVALID, "Invalid", 422,
                    "json patch remove operation does not apply: doc is missing path: \"%s\"",
                    path);
            cJSON_Delete(v);
        } else if (strcmp(name, "move") == 0 || strcmp(name, "copy") == 0) {
            cJSON *src;
            if (!from)
                return vmop_fail_fault(err, VMOP_E_INVALID, "Invalid", 422,
                                       "json patch %s operation %d has no \"from\"", name, idx);
            if (name[0] == 'm') {
                src = detach_at(*target, from);
            } else {
                src = get_at(*target, from);
                src = src ? cJSON_Duplicate(src, 1) : NULL;
            }
            if (!src)
                return vmop_fail_fault(err, VMOP_E_INVALID, "Invalid", 422,
                                       "json patch %s operation does not apply: doc is missing "
                                       "from path: \"%s\"",
                                       name, from);
            if (put_at(target, path, src, 0))
                return vmop_fail_fault(err, VMOP_E_INVALID, "Invalid", 422,
                                       "json patch %s operation does not apply: doc is missing "
                                       "path: \"%s\"",
                                       name, path);
        } else if (strcmp(name, "test") == 0) {
            cJSON *cur = get_at(*target, path);
            if (!cur || !value || !cJSON_Compare(cur, value, 1))
                return vmop_fail_fault(err, VMOP_E_INVALID, "Invalid", 422,
                                       "testing value %s failed: test failed", path);
        } else {
            return vmop_fail_fault(err, VMOP_E_INVALID, "Invalid", 422, "Unexpected kind: %s",
                                   name);
        }
        idx++;
    }
    return VMOP_OK;
}
