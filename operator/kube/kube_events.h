/* kube_events.h: a core/v1 Event recorder (what `kubectl describe` shows).
 *
 * Each kube_event() POSTs an Event named "<object>.<hex unix nanos>" in the object's namespace
 * ("default" for cluster-scoped objects) with involvedObject {apiVersion, kind, name, namespace,
 * uid, resourceVersion}, source.component/host, reportingComponent/Instance, count 1 and
 * first/lastTimestamp. A repeat (same object uid, type, reason and message) within the cache
 * becomes a merge PATCH of count+1 and lastTimestamp on the earlier Event (client-go's
 * EventCorrelator); if that Event is gone, a new one is created.
 *
 * Messages: the caller must never format secrets (passwords, tokens, user data) into a message;
 * messages are cut at 1024 bytes, reasons at 128.
 *
 * Threads: thread-safe. The cache lock is not held during HTTP requests, so two threads
 * recording the very same event at once may create two Events (harmless).
 */
#ifndef KUBE_EVENTS_H
#define KUBE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube_client.h"
#include "vmop_err.h"

#define KUBE_EVENT_MAX_MESSAGE 1024
#define KUBE_EVENT_MAX_REASON  128

struct kube_recorder_opts {
    const char *component;          /* source.component, e.g. "vm-operator" (required) */
    const char *host;               /* source.host; may be NULL */
    const char *reporting_instance; /* NULL: component */
    size_t cache_size;              /* aggregated events remembered; 0: 4096 */
    int64_t (*wall_us)(void *ud);   /* clock for timestamps; NULL: the real one */
    void *clock_ud;
};

struct kube_recorder;

/* c is borrowed for the recorder's life; strings are copied. */
vmop_rc kube_recorder_new(struct kube_client *c, const struct kube_recorder_opts *o,
                          struct kube_recorder **ret_rec, struct vmop_err *err);
void kube_recorder_free(struct kube_recorder *rec);

/* Records an event about obj (needs apiVersion, kind, metadata.name; uid strongly advised, since
 * describe filters on it). type: "Normal" or "Warning". */
vmop_rc kube_event(struct kube_recorder *rec, const cJSON *obj, const char *type,
                   const char *reason, struct vmop_err *err, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

#endif
