/* kube_watch.h: the pure parts of watch streams: an incremental NDJSON line splitter and the
 * watch event decoder. kube_watch() itself is declared in kube_client.h.
 *
 * The splitter scans each chunk once for '\n' (no re-parsing of earlier bytes), hands complete
 * lines to a callback without copying when a line lies inside one chunk, and buffers only the
 * unfinished tail, which is capped (VMOP_E_TOOBIG beyond max_line).
 */
#ifndef KUBE_WATCH_H
#define KUBE_WATCH_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "kube_client.h"
#include "vbuf.h"

/* Called per complete line (without the '\n'; a trailing '\r' is removed; empty lines are
 * skipped). Return 0 to go on, non-zero to stop (kube_ndjson_feed returns VMOP_E_CANCELED). */
typedef int (*kube_line_fn)(void *ud, const char *line, size_t len);

struct kube_ndjson {
    struct vbuf tail; /* the unfinished line; capped at max_line */
    size_t max_line;
};

void kube_ndjson_init(struct kube_ndjson *p, size_t max_line);
void kube_ndjson_free(struct kube_ndjson *p);
vmop_rc kube_ndjson_feed(struct kube_ndjson *p, const char *data, size_t n, kube_line_fn fn,
                         void *ud, struct vmop_err *err);
/* End of stream: a last line without '\n' is delivered too. */
vmop_rc kube_ndjson_finish(struct kube_ndjson *p, kube_line_fn fn, void *ud, struct vmop_err *err);

/* Decodes one line {"type":..., "object":{...}}. On VMOP_OK, *ret_type and *ret_obj (owned by the
 * caller) are set. An ERROR event is returned as its Status failure (VMOP_E_GONE for 410 Expired
 * or Gone, else per kube_status.h) with details in ret_st when non-NULL. VMOP_E_PROTO for garbage
 * or unknown types. */
vmop_rc kube_watch_event_parse(const char *line, size_t len, enum kube_event_type *ret_type,
                               cJSON **ret_obj, struct kube_status *ret_st, struct vmop_err *err);

#endif
