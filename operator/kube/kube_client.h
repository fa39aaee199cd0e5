/* kube_client.h: a lean Kubernetes REST client over libcurl, with unstructured (cJSON) objects.
 *
 * Transport: a pool of curl easy handles, each keeping its HTTP/1.1 (TLS) connection alive; a
 * timeout on every request; bearer token (re-read from a token file at most once a minute and after
 * a 401), client certificates and CA from memory. Requests answered 429, 5xx or that could not
 * connect are retried with exponential backoff (Retry-After honoured, both bounded); POST is
 * retried only on 429/503 and connection failures, and other transport failures only for GET.
 * Every error body is parsed as a Status (kube_status.h gives the rc mapping). An optional
 * client-side rate limit (opts.qps/burst, a token bucket: kube_ratelimit.h) paces the attempts.
 *
 * Threads: one kube_client may be used by any number of threads at once (each request takes its
 * own handle from the pool). Call kube_global_init() once in main() before starting threads.
 *
 * Ownership: cJSON objects passed in are borrowed; every cJSON returned through ret_* is owned by
 * the caller (cJSON_Delete). ret_* outputs are set only on VMOP_OK.
 *
 * Namespaces: for single-object calls, ns NULL means the object's metadata.namespace, else the
 * client's default namespace (from the kubeconfig context / in-cluster). For list and watch, ns
 * NULL means all namespaces. ns is ignored for cluster-scoped resources.
 */
#ifndef KUBE_CLIENT_H
#define KUBE_CLIENT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "kube_config.h"
#include "kube_status.h"
#include "vmop_err.h"

#define KUBE_DEFAULT_MAX_RESPONSE ((size_t)64 << 20)
#define KUBE_WATCH_MAX_LINE                                                                        \
    ((size_t)16 << 20)              /* one watch event (objects are <= 1.5 MiB in                  \
                                     * etcd; 16 MiB leaves room for big lists) */
#define KUBE_LIST_MAX_ITEMS 1000000 /* kube_list_all() over all pages */
#define KUBE_NO_RETRIES     ((unsigned)-1)

/* Call once in main() before any thread starts (curl_global_init). */
vmop_rc kube_global_init(struct vmop_err *err);
void kube_global_cleanup(void);

struct kube_client_opts {
    long timeout_ms;         /* whole request, not watches; 0: 30000 */
    long connect_timeout_ms; /* 0: 10000 */
    unsigned max_retries;    /* 0: 4; KUBE_NO_RETRIES: none */
    long retry_base_ms;      /* first backoff; 0: 200 */
    long retry_max_ms;       /* cap on one wait, Retry-After included; 0: 10000 */
    size_t max_response;     /* body cap; 0: KUBE_DEFAULT_MAX_RESPONSE */
    const char *user_agent;  /* NULL: "vmop-kubeclient/0.1" */
    unsigned pool_size;      /* idle handles kept; 0: 8 */
    /* Client-side rate limit (client-go's QPS/Burst): a token bucket of burst tokens refilled at
     * qps a second; every attempt (retries too) takes one, waiting when none is left; a watch
     * takes one for its initial request only. qps <= 0: unlimited. burst < 1: 1. */
    double qps;
    int burst;
};

struct kube_client;

/* Copies what it needs from cfg (cfg may be freed afterwards). opts may be NULL. *ret_c: owned,
 * kube_client_free(). */
vmop_rc kube_client_new(const struct kube_config *cfg, const struct kube_client_opts *opts,
                        struct kube_client **ret_c, struct vmop_err *err);
/* NULL-safe. No request may be in flight. */
void kube_client_free(struct kube_client *c);
/* The default namespace; borrowed, valid while c lives. */
const char *kube_client_namespace(const struct kube_client *c);
/* Number of requests sent (every attempt counts) and retries, for tests and metrics. */
unsigned long kube_client_requests(const struct kube_client *c);
unsigned long kube_client_retries(const struct kube_client *c);
/* Requests that waited for a rate-limit token, and the milliseconds they waited in all. */
unsigned long kube_client_throttled(const struct kube_client *c);
unsigned long kube_client_throttled_ms(const struct kube_client *c);

/* An API resource. All strings borrowed (usually literals). group "" is the core API. */
struct kube_resource {
    const char *group;
    const char *version;
    const char *resource; /* plural, lower-case: "virtualmachines" */
    int namespaced;
};

extern const struct kube_resource kube_res_namespaces, kube_res_configmaps, kube_res_secrets,
    kube_res_events, kube_res_leases, kube_res_crds;

enum kube_patch_type {
    KUBE_PATCH_MERGE,     /* application/merge-patch+json (RFC 7386) */
    KUBE_PATCH_JSON,      /* application/json-patch+json (RFC 6902); the patch is an array */
    KUBE_PATCH_STRATEGIC, /* application/strategic-merge-patch+json (built-in types only) */
    KUBE_PATCH_APPLY, /* application/apply-patch+yaml (server-side apply; needs field_manager) */
};

/* Per-call options; zero-initialise and set what applies. Every field is optional. */
struct kube_opts {
    /* list and watch */
    const char *label_selector;
    const char *field_selector;
    const char *resource_version;       /* list: "0" = any (cache); watch: start after this */
    const char *resource_version_match; /* "NotOlderThan" / "Exact" */
    const char *continue_token;         /* list: the previous page's metadata.continue */
    long limit;                         /* list: page size; 0: server default (everything) */
    int timeout_seconds;                /* watch: server-side timeoutSeconds; 0: none */
    int allow_bookmarks;                /* watch: allowWatchBookmarks=true */
    /* writes */
    const char *field_manager;
    const char *field_validation; /* "Strict" / "Warn" / "Ignore" */
    int dry_run;                  /* dryRun=All */
    int force;                    /* apply: force=true */
    /* delete */
    const char *propagation_policy; /* "Background" / "Foreground" / "Orphan" */
    const char *precondition_uid;
    const char *precondition_rv;
    int grace_period_set;
    long grace_period_seconds;
    /* any call */
    const int *cancel; /* when *cancel becomes non-zero (atomic), the request is aborted
                        * within about a second: VMOP_E_CANCELED */
    struct kube_status *ret_status; /* when a Status error comes back: its details (causes...) */
};

/* ---- raw requests ---- */

/* method + path with query ("/api/v1/namespaces?limit=5"). body may be NULL. On 2xx, *ret_json
 * (may be NULL) receives the parsed body (NULL for an empty body); ret_http (may be NULL) the
 * status. Retries as described above. */
vmop_rc kube_request(struct kube_client *c, const char *method, const char *path_query,
                     const char *content_type, const char *body, size_t body_len,
                     const struct kube_opts *o, int *ret_http, cJSON **ret_json,
                     struct vmop_err *err);

/* ---- typed-less CRUD ---- */

/* GET one object. VMOP_E_NOT_FOUND is an expected outcome. */
vmop_rc kube_get(struct kube_client *c, const struct kube_resource *r, const char *ns,
                 const char *name, const struct kube_opts *o, cJSON **ret_obj,
                 struct vmop_err *err);
/* One page (o->limit, o->continue_token); the List object: items, metadata.resourceVersion,
 * metadata.continue. */
vmop_rc kube_list(struct kube_client *c, const struct kube_resource *r, const char *ns,
                  const struct kube_opts *o, cJSON **ret_list, struct vmop_err *err);
/* Every page (page size o->limit, default 500) merged into one List whose resourceVersion is the
 * first page's. VMOP_E_GONE when a continue token expired (list again). */
vmop_rc kube_list_all(struct kube_client *c, const struct kube_resource *r, const char *ns,
                      const struct kube_opts *o, cJSON **ret_list, struct vmop_err *err);
/* POST. VMOP_E_EXISTS when the name is taken. */
vmop_rc kube_create(struct kube_client *c, const struct kube_resource *r, const char *ns,
                    const cJSON *obj, const struct kube_opts *o, cJSON **ret_obj,
                    struct vmop_err *err);
/* PUT of obj (name from metadata.name; metadata.resourceVersion is the precondition: a stale one
 * gives VMOP_E_CONFLICT). */
vmop_rc kube_update(struct kube_client *c, const struct kube_resource *r, const char *ns,
                    const cJSON *obj, const struct kube_opts *o, cJSON **ret_obj,
                    struct vmop_err *err);
/* PUT .../status (only status changes). */
vmop_rc kube_update_status(struct kube_client *c, const struct kube_resource *r, const char *ns,
                           const cJSON *obj, const struct kube_opts *o, cJSON **ret_obj,
                           struct vmop_err *err);
/* PATCH with the given type; patch is an object (merge, strategic, apply) or an array (JSON
 * patch). KUBE_PATCH_APPLY requires o->field_manager. */
vmop_rc kube_patch(struct kube_client *c, const struct kube_resource *r, const char *ns,
                   const char *name, enum kube_patch_type type, const cJSON *patch,
                   const struct kube_opts *o, cJSON **ret_obj, struct vmop_err *err);
/* PATCH .../status. */
vmop_rc kube_patch_status(struct kube_client *c, const struct kube_resource *r, const char *ns,
                          const char *name, enum kube_patch_type type, const cJSON *patch,
                          const struct kube_opts *o, cJSON **ret_obj, struct vmop_err *err);
/* DELETE with DeleteOptions from o (preconditions, propagation policy, grace period). ret_obj (may
 * be NULL): the object (still there with deletionTimestamp when finalizers remain) or a Status. */
vmop_rc kube_delete(struct kube_client *c, const struct kube_resource *r, const char *ns,
                    const char *name, const struct kube_opts *o, cJSON **ret_obj,
                    struct vmop_err *err);

/* ---- watch ---- */

enum kube_event_type {
    KUBE_EV_ADDED,
    KUBE_EV_MODIFIED,
    KUBE_EV_DELETED,
    KUBE_EV_BOOKMARK,
};

const char *kube_event_type_str(enum kube_event_type t);

/* Called for each event in order. obj is owned by the callback (cJSON_Delete it or keep it).
 * Return 0 to go on, non-zero to end the watch (kube_watch then returns VMOP_E_CANCELED). */
typedef int (*kube_watch_fn)(void *ud, enum kube_event_type type, cJSON *obj);

/* Streams a watch (o: resource_version, selectors, timeout_seconds, allow_bookmarks, cancel) and
 * calls fn per event from this thread. Returns VMOP_OK when the server ended the stream cleanly
 * (timeoutSeconds), VMOP_E_GONE for 410 (HTTP or an ERROR event: list again), VMOP_E_CANCELED,
 * VMOP_E_TRANSPORT when the stream dropped, VMOP_E_TOOBIG for an event over KUBE_WATCH_MAX_LINE,
 * VMOP_E_PROTO for an undecodable event, or the Status of another ERROR event. Not retried. */
vmop_rc kube_watch(struct kube_client *c, const struct kube_resource *r, const char *ns,
                   const struct kube_opts *o, kube_watch_fn fn, void *ud, struct vmop_err *err);

/* ---- helpers ---- */

/* Builds "/api/v1/namespaces/NS/pods/NAME/SUB" or "/apis/G/V/..." into *ret (malloc'd). ns NULL or
 * cluster-scoped: no namespace part; name/sub may be NULL. Names are validated (no "/", not ".",
 * not "..", not empty) and percent-encoded. */
vmop_rc kube_resource_path(const struct kube_resource *r, const char *ns, const char *name,
                           const char *sub, char **ret, struct vmop_err *err);

#endif
