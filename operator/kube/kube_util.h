/* kube_util.h: small helpers shared by the Kubernetes client files (not a public API).
 * Owns: a string-keyed hash map, monotonic/wall clocks, RFC 3339 formatting, percent-encoding,
 * jitter, bounded file reading and cJSON field getters. Nothing here does network I/O.
 */
#ifndef KUBE_UTIL_H
#define KUBE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "vbuf.h"
#include "vmop_err.h"

/* ---- string-keyed hash map (chained, grows by doubling). Not thread-safe. ---- */
struct kube_map_entry {
    char *key; /* owned by the map */
    void *val; /* owned as the map's val_free says */
    struct kube_map_entry *next;
};

struct kube_map {
    struct kube_map_entry **buckets;
    size_t n_buckets; /* a power of two, or 0 before the first insert */
    size_t len;
    void (*val_free)(void *val); /* called on replace/remove/clear; NULL = values not owned */
};

void kube_map_init(struct kube_map *m, void (*val_free)(void *));
/* Frees every entry (values through val_free) and the table; the map stays usable and empty. */
void kube_map_clear(struct kube_map *m);
/* Borrowed value, or NULL. */
void *kube_map_get(const struct kube_map *m, const char *key);
int kube_map_has(const struct kube_map *m, const char *key);
/* Inserts or replaces (the old value goes through val_free). Copies key. On failure (NOMEM) the
 * value is NOT taken: the caller still owns it. */
vmop_rc kube_map_put(struct kube_map *m, const char *key, void *val);
/* Removes key; returns the value WITHOUT calling val_free (caller owns it), or NULL. */
void *kube_map_take(struct kube_map *m, const char *key);
/* Removes key, freeing the value through val_free. Returns 1 if it was there. */
int kube_map_del(struct kube_map *m, const char *key);
/* Iteration: for (e = kube_map_first(m, &it); e; e = kube_map_next(m, &it)); no insert/remove
 * while iterating. */
struct kube_map_iter {
    size_t bucket;
    struct kube_map_entry *e;
};
struct kube_map_entry *kube_map_first(const struct kube_map *m, struct kube_map_iter *it);
struct kube_map_entry *kube_map_next(const struct kube_map *m, struct kube_map_iter *it);

/* ---- clocks ---- */
int64_t kube_mono_ms(void); /* CLOCK_MONOTONIC in ms */
int64_t kube_wall_us(void); /* CLOCK_REALTIME in µs since the epoch */
/* "2025-01-01T10:00:00Z" (seconds) or "2025-01-01T10:00:00.000000Z" (micro=1) into out (>= 32). */
void kube_format_time(int64_t wall_us, int micro, char *out, size_t out_len);
/* Parses RFC 3339 (Z or ±hh:mm offset, optional fraction). Returns 0 and *ret_us on success. */
int kube_parse_time(const char *s, int64_t *ret_us);

/* Uniform random in [0, n) (thread-safe, not cryptographic). */
uint64_t kube_rand(uint64_t n);
/* d + random in [0, d*factor): client-go wait.Jitter. */
int64_t kube_jitter_ms(int64_t d, double factor);

/* Sleeps up to ms, in small slices, returning early when *stop becomes non-zero (atomic read). */
void kube_sleep_ms(int64_t ms, const int *stop);

/* ---- encoding ---- */
/* Percent-encodes everything but RFC 3986 unreserved characters. */
vmop_rc kube_url_escape(struct vbuf *b, const char *s);
/* Base64 decode (standard alphabet, padding optional, whitespace ignored). *ret is malloc'd and
 * NUL-terminated; *ret_len excludes the NUL. */
vmop_rc kube_base64_decode(const char *in, char **ret, size_t *ret_len, struct vmop_err *err);

/* Reads a whole file (at most max bytes) into a NUL-terminated malloc'd buffer. */
vmop_rc kube_read_file(const char *path, size_t max, char **ret, size_t *ret_len,
                       struct vmop_err *err);

/* ---- cJSON getters (NULL-safe, no allocation) ---- */
const char *kube_json_str(const cJSON *obj, const char *field);                 /* string or NULL */
const char *kube_json_path_str(const cJSON *obj, const char *a, const char *b); /* obj.a.b */
/* metadata.namespace, metadata.name, metadata.resourceVersion, metadata.uid: borrowed or NULL */
const char *kube_obj_namespace(const cJSON *obj);
const char *kube_obj_name(const cJSON *obj);
const char *kube_obj_rv(const cJSON *obj);
const char *kube_obj_uid(const cJSON *obj);
/* Compares two resourceVersions: numerically when both are decimal, else -2 when unequal
 * (unordered), 0 when equal. Returns -1, 0, 1 or -2. */
int kube_rv_cmp(const char *a, const char *b);

/* Zeroes and frees a NUL-terminated secret. NULL-safe. */
void kube_free_secret(char *s);
/* Frees a secret of known length. */
void kube_free_secret_n(void *p, size_t n);

#endif
