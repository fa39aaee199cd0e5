/* vmop_map.c: the string-keyed hash map (see vmop_map.h). */
#include "vmop_map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

void vmop_map_init(struct vmop_map *m, void (*val_free)(void *))
{
    memset(m, 0, sizeof(*m));
    m->val_free = val_free;
}

void vmop_map_clear(struct vmop_map *m)
{
    for (size_t i = 0; i < m->n_buckets; i++) {
        struct vmop_map_entry *e = m->buckets[i];
        while (e) {
            struct vmop_map_entry *next = e->next;
            if (m->val_free)
                m->val_free(e->val);
            free(e->key);
            free(e);
            e = next;
        }
    }
    free(m->buckets);
    m->buckets = NULL;
    m->n_buckets = 0;
    m->len = 0;
}

static struct vmop_map_entry **find_slot(const struct vmop_map *m, const char *key)
{
    if (!m->n_buckets)
        return NULL;
    struct vmop_map_entry **p = &m->buckets[hash_str(key) & (m->n_buckets - 1)];
    while (*p && strcmp((*p)->key, key) != 0)
        p = &(*p)->next;
    return p;
}

void *vmop_map_get(const struct vmop_map *m, const char *key)
{
    struct vmop_map_entry **p = find_slot(m, key);
    return p && *p ? (*p)->val : NULL;
}

int vmop_map_has(const struct vmop_map *m, const char *key)
{
    struct vmop_map_entry **p = find_slot(m, key);
    return p && *p;
}

/* Starts at 2 buckets: many maps hold one or two keys (an informer index's set of keys per
 * value: one per VM for a unique value such as a uid), and 16 empty buckets cost 128 bytes each. */
#define MAP_MIN_BUCKETS 2

static int grow(struct vmop_map *m)
{
    size_t n = m->n_buckets ? m->n_buckets * 2 : MAP_MIN_BUCKETS;
    struct vmop_map_entry **nb = calloc(n, sizeof(*nb));
    if (!nb)
        return -1;
    for (size_t i = 0; i < m->n_buckets; i++) {
        struct vmop_map_entry *e = m->buckets[i];
        while (e) {
            struct vmop_map_entry *next = e->next;
            size_t b = hash_str(e->key) & (n - 1);
            e->next = nb[b];
            nb[b] = e;
            e = next;
        }
    }
    free(m->buckets);
    m->buckets = nb;
    m->n_buckets = n;
    return 0;
}

vmop_rc vmop_map_put(struct vmop_map *m, const char *key, void *val)
{
    struct vmop_map_entry **p = find_slot(m, key);
    if (p && *p) {
        if (m->val_free && (*p)->val != val)
            m->val_free((*p)->val);
        (*p)->val = val;
        return VMOP_OK;
    }
    if (m->len + 1 > m->n_buckets * 3 / 4 && grow(m) != 0)
        return VMOP_E_NOMEM;
    struct vmop_map_entry *e = calloc(1, sizeof(*e));
    char *k = strdup(key);
    if (!e || !k) {
        free(e);
        free(k);
        return VMOP_E_NOMEM;
    }
    e->key = k;
    e->val = val;
    size_t b = hash_str(key) & (m->n_buckets - 1);
    e->next = m->buckets[b];
    m->buckets[b] = e;
    m->len++;
    return VMOP_OK;
}

void *vmop_map_take(struct vmop_map *m, const char *key)
{
    struct vmop_map_entry **p = find_slot(m, key);
    if (!p || !*p)
        return NULL;
    struct vmop_map_entry *e = *p;
    void *val = e->val;
    *p = e->next;
    free(e->key);
    free(e);
    m->len--;
    return val;
}

int vmop_map_del(struct vmop_map *m, const char *key)
{
    struct vmop_map_entry **p = find_slot(m, key);
    if (!p || !*p)
        return 0;
    void *val = vmop_map_take(m, key);
    if (m->val_free)
        m->val_free(val);
    return 1;
}

struct vmop_map_entry *vmop_map_first(const struct vmop_map *m, struct vmop_map_iter *it)
{
    it->bucket = 0;
    it->e = NULL;
    return vmop_map_next(m, it);
}

struct vmop_map_entry *vmop_map_next(const struct vmop_map *m, struct vmop_map_iter *it)
{
    if (it->e && it->e->next) {
        it->e = it->e->next;
        return it->e;
    }
    size_t b = it->e ? it->bucket + 1 : it->bucket;
    for (; b < m->n_buckets; b++) {
        if (m->buckets[b]) {
            it->bucket = b;
            it->e = m->buckets[b];
            return it->e;
        }
    }
    it->bucket = m->n_buckets;
    it->e = NULL;
    return NULL;
}
