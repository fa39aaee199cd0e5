/* api_convert_util.c: small cJSON tree helpers the conversion steps use (see api_convert_int.h).
 * Owns nothing: every helper works on trees its caller owns. */
#include <stdlib.h>
#include <string.h>

#include "api_convert_int.h"

cJSON *cv_get(const cJSON *o, const char *k)
{
    if (!cJSON_IsObject(o))
        return NULL;
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

cJSON *cv_at(const cJSON *root, const char *path)
{
    char seg[128];
    const char *p = path;
    cJSON *cur = (cJSON *)root;

    while (cur && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof(seg))
            return NULL;
        memcpy(seg, p, n);
        seg[n] = '\0';
        cur = cv_get(cur, seg);
        p += n + (dot ? 1 : 0);
    }
    return cur;
}

const char *cv_str(const cJSON *o, const char *k)
{
    cJSON *v = cv_get(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

cJSON *cv_take(cJSON *o, const char *k)
{
    if (!cJSON_IsObject(o))
        return NULL;
    return cJSON_DetachItemFromObjectCaseSensitive(o, k);
}

void cv_put(struct cv *cv, cJSON *o, const char *k, cJSON *v)
{
    if (!v)
        return;
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(v);
        return;
    }
    if (cJSON_GetObjectItemCaseSensitive(o, k)) {
        cJSON_ReplaceItemInObjectCaseSensitive(o, k, v);
        return;
    }
    if (!cJSON_AddItemToObject(o, k, v)) {
        cJSON_Delete(v);
        cv->rc = VMOP_E_NOMEM;
    }
}

void cv_put_str(struct cv *cv, cJSON *o, const char *k, const char *s)
{
    cJSON *v = cJSON_CreateString(s);
    if (!v) {
        cv->rc = VMOP_E_NOMEM;
        return;
    }
    cv_put(cv, o, k, v);
}

cJSON *cv_ensure(struct cv *cv, cJSON *o, const char *k)
{
    cJSON *v = cv_get(o, k);
    if (cJSON_IsObject(v))
        return v;
    if (!cJSON_IsObject(o))
        return NULL;
    v = cJSON_CreateObject();
    if (!v) {
        cv->rc = VMOP_E_NOMEM;
        return NULL;
    }
    cv_put(cv, o, k, v);
    return cv->rc == VMOP_OK ? v : NULL;
}

static void drop_at(cJSON *cur, const char *p)
{
    char seg[128];
    const char *dot = strchr(p, '.');
    size_t n = dot ? (size_t)(dot - p) : strlen(p);
    int each = 0;

    if (!cJSON_IsObject(cur) || n + 1 > sizeof(seg))
        return;
    memcpy(seg, p, n);
    seg[n] = '\0';
    if (n > 2 && strcmp(seg + n - 2, "[]") == 0) {
        seg[n - 2] = '\0';
        each = 1;
    }
    if (!dot) {
        if (!each)
            cJSON_DeleteItemFromObjectCaseSensitive(cur, seg);
        return;
    }
    if (each) {
        cJSON *it;
        cJSON_ArrayForEach(it, cv_get(cur, seg))
        {
            drop_at(it, dot + 1);
        }
        return;
    }
    drop_at(cv_get(cur, seg), dot + 1);
}

void cv_drop(cJSON *root, const char *path)
{
    drop_at(root, path);
}

/* The parent object of dotted path (created when create), and the last segment in last. */
static cJSON *parent_of(struct cv *cv, cJSON *root, const char *path, int create, char *last,
                        size_t lastn)
{
    char seg[128];
    const char *p = path;
    cJSON *cur = root;

    for (;;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof(seg) || n >= lastn)
            return NULL;
        memcpy(seg, p, n);
        seg[n] = '\0';
        if (!dot) {
            memcpy(last, seg, n + 1);
            return cJSON_IsObject(cur) ? cur : NULL;
        }
        cur = create ? cv_ensure(cv, cur, seg) : cv_get(cur, seg);
        if (!cur)
            return NULL;
        p = dot + 1;
    }
}

int cv_move(struct cv *cv, cJSON *root, const char *from, const char *to)
{
    char k[128];
    cJSON *src = parent_of(cv, root, from, 0, k, sizeof(k));
    cJSON *v, *dst;

    if (!src || !(v = cv_take(src, k)))
        return 0;
    dst = parent_of(cv, root, to, 1, k, sizeof(k));
    if (!dst) {
        cJSON_Delete(v);
        return 0;
    }
    cv_put(cv, dst, k, v);
    return 1;
}

void cv_prune_empty(cJSON *o, const char *k)
{
    cJSON *v = cv_get(o, k);
    if (cJSON_IsObject(v) && !v->child)
        cJSON_DeleteItemFromObjectCaseSensitive(o, k);
}

cJSON *cv_dup(struct cv *cv, const cJSON *j)
{
    cJSON *d;
    if (!j)
        return NULL;
    d = cJSON_Duplicate(j, 1);
    if (!d)
        cv->rc = VMOP_E_NOMEM;
    return d;
}

void cv_map_str(struct cv *cv, cJSON *o, const char *k, const char *const *from,
                const char *const *to, int n)
{
    const char *s = cv_str(o, k);
    int i;

    if (!s)
        return;
    for (i = 0; i < n; i++) {
        if (strcmp(s, from[i]) == 0) {
            cv_put_str(cv, o, k, to[i]);
            return;
        }
    }
}
