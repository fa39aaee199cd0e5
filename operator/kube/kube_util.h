/* kube_util.h: small helpers shared by the Kubernetes client files (not a public API).
 * Owns: a string-keyed hash map, monotonic/wall clocks, RFC 3339 formatting, percent-encoding,
 * jitter, bounded file reading and cJSON field getters. Nothing here does network I/O.
 */
#ifndef KUBE_UTIL_H
#define KUBE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube_meta.h"
#include "vbuf.h"
#include "vmop_base64.h"
#include "vmop_clock.h"
#include "vmop_err.h"
#include "vmop_map.h"

/* ---- RFC 3339 times ---- */
/* "2025-01-01T10:00:00Z" (seconds) or "2025-01-01T10:00:00.000000Z" (micro=1) into out (>= 32). */
void kube_format_time(int64_t wall_us, int micro, char *out, size_t out_len);
/* Parses RFC 3339 (Z or ±hh:mm offset, optional fraction). Returns 0 and *ret_us on success. */
int kube_parse_time(const char *s, int64_t *ret_us);

/* ---- encoding ---- */
/* Percent-encodes everything but RFC 3986 unreserved characters. */
vmop_rc kube_url_escape(struct vbuf *b, const char *s);
/* Reads a whole file (at most max bytes) into a NUL-terminated malloc'd buffer. */
vmop_rc kube_read_file(const char *path, size_t max, char **ret, size_t *ret_len,
                       struct vmop_err *err);

#endif
