/* api_convert_util.c: small cJSON tree helpers the conversion steps use (see api_convert_int.h).
 * Owns nothing: every helper works on trees its caller owns. */
#include <stdio.h>
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

static const char *key_of(const cJSON *m)
{
    return m->string ? m->string : "";
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A member name o holds twice, or NULL (*nomem set when the scan could not allocate): a pairwise
 * scan for small objects, a sort of the names for large ones (an object may carry thousands). */
static const char *dup_among_members(const cJSON *o, int *nomem)
{
    const cJSON *a, *b;
    const char **names, *dup = NULL;
    size_t n = 0, i;

    cJSON_ArrayForEach(a, o) n++;
    if (n <= 16) {
        for (a = o->child; a && !dup; a = a->next)
            for (b = a->next; b && !dup; b = b->next)
                if (strcmp(key_of(a), key_of(b)) == 0)
                    dup = key_of(a);
        return dup;
    }
    if (!(names = malloc(n * sizeof(*names)))) {
        *nomem = 1;
        return NULL;
    }
    i = 0;
    cJSON_ArrayForEach(a, o) names[i++] = key_of(a);
    qsort(names, n, sizeof(*names), cmp_key);
    for (i = 1; i < n && !dup; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            dup = names[i];
    free(names);
    return dup;
}

/* path[0..len) is j's own path; members append ".name" or "[i]" after it. */
static int find_dup(const cJSON *j, int max_depth, char *path, size_t n, size_t len)
{
    const cJSON *it;
    const char *dup;
    size_t i = 0;
    int nomem = 0, r;

    if (!cJSON_IsObject(j) && !cJSON_IsArray(j))
        return 0;
    if (max_depth < 1)
        return -1;
    if (cJSON_IsObject(j) && (dup = dup_among_members(j, &nomem)) != NULL) {
        snprintf(path + len, n - len, "%s%s", len ? "." : "", dup);
        return 1;
    }
    if (nomem)
        return -2;
    cJSON_ArrayForEach(it, j)
    {
        int w = cJSON_IsObject(j)
                    ? snprintf(path + len, n - len, "%s%s", len ? "." : "", key_of(it))
                    : snprintf(path + len, n - len, "[%zu]", i);
        size_t sub = len + (w > 0 ? (size_t)w : 0);
        if (sub >= n)
            sub = n - 1;
        if ((r = find_dup(it, max_depth - 1, path, n, sub)) != 0)
            return r;
        i++;
    }
    path[len] = '\0';
    return 0;
}

int cv_find_dup_key(const cJSON *j, int max_depth, char *path, size_t n)
{
    if (!path || n == 0)
        return -2;
    path[0] = '\0';
    return find_dup(j, max_depth, path, n, 0);
}
