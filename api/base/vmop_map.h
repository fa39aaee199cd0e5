/* vmop_map.h: the one string-keyed hash map (chained, grows by doubling) every module uses.
 * Not thread-safe: callers hold their own lock. Keys are copied; values are owned as val_free says.
 */
#ifndef VMOP_MAP_H
#define VMOP_MAP_H

#include <stddef.h>

#include "vmop_err.h"

struct vmop_map_entry {
    char *key; /* owned by the map */
    void *val; /* owned as the map's val_free says */
    struct vmop_map_entry *next;
};

struct vmop_map {
    struct vmop_map_entry **buckets;
    size_t n_buckets; /* a power of two, or 0 before the first insert */
    size_t len;
    void (*val_free)(void *val); /* called on replace/remove/clear; NULL = values not owned */
};

void vmop_map_init(struct vmop_map *m, void (*val_free)(void *));
/* Frees every entry (values through val_free) and the table; the map stays usable and empty. */
void vmop_map_clear(struct vmop_map *m);
/* Borrowed value, or NULL. */
void *vmop_map_get(const struct vmop_map *m, const char *key);
int vmop_map_has(const struct vmop_map *m, const char *key);
/* Inserts or replaces (the old value goes through val_free). Copies key. On failure (NOMEM) the
 * value is NOT taken: the caller still owns it. */
vmop_rc vmop_map_put(struct vmop_map *m, const char *key, void *val);
/* Removes key; returns the value WITHOUT calling val_free (caller owns it), or NULL. */
void *vmop_map_take(struct vmop_map *m, const char *key);
/* Removes key, freeing the value through val_free. Returns 1 if it was there. */
int vmop_map_del(struct vmop_map *m, const char *key);
/* Iteration: for (e = vmop_map_first(m, &it); e; e = vmop_map_next(m, &it)); no insert/remove
 * while iterating. */
struct vmop_map_iter {
    size_t bucket;
    struct vmop_map_entry *e;
};
struct vmop_map_entry *vmop_map_first(const struct vmop_map *m, struct vmop_map_iter *it);
struct vmop_map_entry *vmop_map_next(const struct vmop_map *m, struct vmop_map_iter *it);

#endif
