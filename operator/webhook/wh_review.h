/* wh_review.h: admission.k8s.io/v1 AdmissionReview and apiextensions.k8s.io/v1 ConversionReview
 * envelopes, the pure part of the webhook server (no I/O, no logging).
 *
 * Owns: parsing a review request body into a struct that borrows from the parsed document, the
 * response a handler fills, and serializing the response review. Not here: HTTP, TLS, handler
 * routing (wh_server.c), building patches (wh_patch.h).
 * Parses network input: fuzzed by tests/fuzz/fuzz_wh_admission.c and fuzz_wh_conversion.c.
 *
 * Ownership: a parsed request owns its cJSON document (doc); every const char * and const cJSON *
 * in it points into that document and lives until wh_*_request_free(). A response owns its
 * strings, details and patch (wh_admission_response_deinit() frees them).
 */
#ifndef VMOP_WH_REVIEW_H
#define VMOP_WH_REVIEW_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "vmop_err.h"
#include "wh_limits.h"

#define WH_ADMISSION_API_VERSION  "admission.k8s.io/v1"
#define WH_CONVERSION_API_VERSION "apiextensions.k8s.io/v1"

enum wh_operation { WH_OP_CREATE = 1, WH_OP_UPDATE, WH_OP_DELETE, WH_OP_CONNECT };

/* Strings are never NULL: an absent field is "". */
struct wh_admission_request {
    const char *uid;                              /* required, non-empty: echoed in the response */
    const char *kind_group, *kind_version, *kind; /* request.kind */
    const char *res_group, *res_version, *resource; /* request.resource */
    const char *sub_resource;                       /* "status", "scale" or "" */
    const char *operation;                          /* "CREATE", ... */
    enum wh_operation op;
    const char *namespace_, *name;   /* name "" on generateName */
    const char *username, *user_uid; /* request.userInfo */
    const char **groups;             /* owned array of borrowed strings: userInfo.groups */
    size_t n_groups;                 /* at most WH_MAX_GROUPS (more: refused) */
    const cJSON *object;             /* NULL on DELETE (or JSON null) */
    const cJSON *old_object;         /* NULL on CREATE (or JSON null) */
    int dry_run; /* request.dryRun: a handler must have no side effects when set */
    cJSON *doc;  /* owned: the whole review */
};

/* What a handler answers. wh_admission_response_init() makes "allowed, nothing else". */
struct wh_admission_response {
    int allowed;
    int code;       /* status.code; 0: omitted (the API server uses 403 for a denial) */
    char *reason;   /* owned, status.reason ("Forbidden", "Invalid"), or NULL */
    char *message;  /* owned, status.message, or NULL; at most WH_MAX_MESSAGE bytes are sent */
    cJSON *details; /* owned, status.details (a metav1.StatusDetails object), or NULL */
    cJSON *patch;   /* owned JSON array of RFC 6902 operations (wh_patch.h), or NULL: sent as
                     * patchType JSONPatch + base64; an empty array is not sent */
    char *warnings[WH_MAX_WARNINGS]; /* owned; each at most WH_MAX_WARNING_LEN bytes */
    size_t n_warnings;
};

struct wh_conversion_request {
    const char *uid;                 /* required, non-empty */
    const char *desired_api_version; /* required: "group/version" */
    const cJSON *objects;            /* the request.objects array (borrowed from doc) */
    size_t n_objects;                /* each item is a JSON object (checked) */
    cJSON *doc;                      /* owned */
};

/* Parses an AdmissionReview (apiVersion admission.k8s.io/v1, kind AdmissionReview) of at most
 * WH_MAX_BODY bytes. buf need not be NUL-terminated. *ret is set on VMOP_OK only (free with
 * wh_admission_request_free). Failures: VMOP_E_TOOBIG, VMOP_E_INVALID, VMOP_E_NOMEM. */
vmop_rc wh_admission_parse(const char *buf, size_t len, struct wh_admission_request **ret,
                           struct vmop_err *err);
void wh_admission_request_free(struct wh_admission_request *req); /* NULL-safe */

void wh_admission_response_init(struct wh_admission_response *resp);
void wh_admission_response_deinit(struct wh_admission_response *resp); /* then init again */
/* Denies with a code, a reason and a message (copied; replaces earlier ones). */
vmop_rc wh_admission_deny(struct wh_admission_response *resp, int code, const char *reason,
                          const char *message);
/* Adds a warning (copied, cut to WH_MAX_WARNING_LEN); past WH_MAX_WARNINGS it is dropped. */
vmop_rc wh_admission_warn(struct wh_admission_response *resp, const char *warning);
/* Takes ownership of patch (a JSON array), freeing an earlier one; NULL clears. */
void wh_admission_set_patch(struct wh_admission_response *resp, cJSON *patch);

/* Serializes the response review for request uid. *ret_json is malloc'd (free()), NUL-terminated,
 * *ret_len its length; set on VMOP_OK only. Failures: VMOP_E_NOMEM, VMOP_E_TOOBIG. */
vmop_rc wh_admission_build(const char *uid, const struct wh_admission_response *resp,
                           char **ret_json, size_t *ret_len, struct vmop_err *err);

/* Parses a ConversionReview (apiextensions.k8s.io/v1). Same rules as wh_admission_parse. */
vmop_rc wh_conversion_parse(const char *buf, size_t len, struct wh_conversion_request **ret,
                            struct vmop_err *err);
void wh_conversion_request_free(struct wh_conversion_request *req); /* NULL-safe */

/* The response review. converted (borrowed; a JSON array) with result Success, or, when
 * converted is NULL, result Failure with message (borrowed, cut to WH_MAX_MESSAGE). */
vmop_rc wh_conversion_build(const char *uid, const cJSON *converted, const char *message,
                            char **ret_json, size_t *ret_len, struct vmop_err *err);

#endif
