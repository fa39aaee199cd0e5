/* vim_internal.h: what vimclient's own files share. Not for the operator, not installed.
 *
 * Layers, bottom to top (one file each):
 *   vim_http.c      libcurl transport: connection pool, TLS (CA / thumbprint pin / insecure),
 *                   timeouts, shared cookie jar. No knowledge of SOAP or REST.
 *   vim_xml.c       libxml2 reading helpers (namespace-aware, xsi:type by URI) and XML writing
 *                   helpers on struct vbuf (escaped text, morefs, typed values).
 *   vim_soap.c      envelopes, one call (POST /sdk), fault parsing into struct vmop_err, the
 *                   result-count check, transparent re-login on NotAuthenticated.
 *   vim_session.c   ServiceContent, Login/Logout, the session generation counter.
 *   vim_pc.c        PropertyCollector: RetrievePropertiesEx (+Continue), ContainerView,
 *                   missingSet handling, WaitForUpdatesEx watches.
 *   vim_task.c      bounded task waits.
 *   vim_types.c     the table-driven description of the vSphere data objects we read
 *                   (VirtualMachine view, NICs, allocations) and their decoders.
 *   vim_inventory.c SearchIndex lookups, networks, clusters, listing.
 *   vim_spec.c      the ConfigSpec builder and its serializer.
 *   vim_vm.c        VM operations (clone, reconfigure, power, destroy).
 *   vim_rest.c      REST (vAPI) session and calls; vim_library.c: Content Library.
 */
#ifndef VIM_INTERNAL_H
#define VIM_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include <curl/curl.h>
#include <libxml/tree.h>
#include <cjson/cJSON.h>

#include "vimclient.h"
#include "vbuf.h"

#define VIM25_NS "urn:vim25"
#define XSI_NS   "http://www.w3.org/2001/XMLSchema-instance"

/* Caps on what a peer can make us hold. */
#define VIM_MAX_RESPONSE ((size_t)64 << 20) /* one SOAP or REST response body */
#define VIM_MAX_REQUEST  ((size_t)16 << 20) /* one request body we build */

/* ---- the client (vim_client.c) ----------------------------------------------------------------
 */

struct vim_rest_state; /* owned by vim_rest.c */

struct vim_client {
    /* read-only after vim_client_new() */
    enum vim_fault (*fault)(void *ud, unsigned long n, const char *method, const char *path);
    void *fault_ud;
    unsigned long n_http; /* atomic: HTTP requests started (the fault hook's numbering) */
    char *base_url;       /* scheme://host[:port], no trailing slash */
    char *username;
    char *password; /* zeroed before free */
    char *ca_file;
    unsigned char pin[32]; /* thumbprint to pin, raw bytes */
    size_t pin_len;        /* 0 = no pin, 20 = SHA-1, 32 = SHA-256 */
    int insecure;
    long timeout_ms;
    long connect_timeout_ms;
    int max_connections;

    /* connection pool (vim_http.c) */
    pthread_mutex_t pool_lock;
    pthread_cond_t pool_cond;
    CURL **idle;   /* guarded by pool_lock */
    int n_idle;    /* guarded by pool_lock */
    int n_busy;    /* guarded by pool_lock */
    CURLSH *share; /* shares cookies between pool handles */
    pthread_mutex_t share_lock;

    /* SOAP session (vim_session.c) */
    pthread_mutex_t session_lock;
    uint64_t session_gen; /* guarded by session_lock: bumped by every successful login */
    int logged_in;        /* guarded by session_lock */
    int have_sc;          /* guarded by session_lock: ServiceContent read */
    struct vim_moref sc_root_folder, sc_property_collector, sc_view_manager, sc_search_index,
        sc_session_manager, sc_task_manager; /* written once under session_lock, then read-only */
    char *about_api_version, *about_full_name, *about_instance_uuid;

    /* REST session (vim_rest.c) */
    struct vim_rest_state *rest;

    /* counters: updated with __atomic builtins */
    uint64_t n_soap_calls, n_rest_calls, n_logins, n_relogins;

    /* per-method SOAP counters (vim_client_method_stats); methods past the cap count as "other" */
    pthread_mutex_t stats_lock;
    struct vim_method_slot {
        char name[VIM_METHOD_NAME_MAX];
        uint64_t calls, errors;
        double seconds;
    } method_stats[VIM_METHOD_STATS_MAX]; /* guarded by stats_lock */
    size_t n_method_stats;                /* guarded by stats_lock */
};
/* strdup(s), NULL for a NULL s; on allocation failure NULL and *nomem = 1 (free() the copy). */
char *vim_dup_opt(const char *s, int *nomem);
/* Counts one call (vim_soap.c: a SOAP method; vim_rest.c: a REST route from vim_rest_route). */
void vim_client_count_method(struct vim_client *c, const char *method, int failed, double seconds);
/* The route template of a REST request into out (always NUL-terminated): "GET " + the path with
 * every segment that is not a route word (api, rest, library, item, ...) as "{id}", query values
 * as "{id}" but for the value of ~action/action ("?library_id={id}", "?~action=find"); an absolute
 * URL counts by its path. A template longer than out is "<method> other". Returns its length. */
size_t vim_rest_route(const char *method, const char *path, char *out, size_t out_len);

/* ---- transport (vim_http.c) -------------------------------------------------------------------
 */

struct vim_http_req {
    const char *method;       /* "GET", "POST", "PUT", "DELETE" */
    const char *path;         /* appended to base_url: "/sdk", "/rest/com/vmware/..." */
    const char *content_type; /* NULL = none */
    const char *body;         /* may be NULL */
    size_t body_len;
    const char *const *headers; /* NULL-terminated "Name: value" list, or NULL */
    const char *basic_user;     /* HTTP Basic auth, or NULL */
    const char *basic_password;
    long timeout_ms;   /* 0 = client default */
    const int *cancel; /* optional: when *cancel becomes non-zero (read atomically)
                        * the transfer is aborted within about a second:
                        * VMOP_E_CANCELED (used by vim_watch_cancel) */
    size_t max_body;   /* cap on the response body; 0 = VIM_MAX_RESPONSE (larger
                        * values are clamped to it). Over it: VMOP_E_TOOBIG */
};
struct vim_http_resp {
    long status;      /* HTTP status, 0 if none */
    struct vbuf body; /* caller vbuf_free()s it; capped at VIM_MAX_RESPONSE */
};
/* One request on a pooled connection. Transport failures: VMOP_E_TRANSPORT, VMOP_E_TLS,
 * VMOP_E_TIMEOUT. Any HTTP status is success here: callers interpret it. */
vmop_rc vim_http_do(struct vim_client *c, const struct vim_http_req *req,
                    struct vim_http_resp *resp, struct vmop_err *err);
/* Drops every cookie (before a SOAP re-login: vcsim refuses Login with a live session cookie). */
void vim_http_clear_cookies(struct vim_client *c);
vmop_rc vim_http_init(struct vim_client *c, struct vmop_err *err);
void vim_http_cleanup(struct vim_client *c);

/* ---- XML (vim_xml.c) --------------------------------------------------------------------------
 */

/* First element child of parent whose local name is `name` (any namespace); NULL = none. */
xmlNodePtr vim_xml_child(xmlNodePtr parent, const char *name);
/* Next element sibling after node with the same local name as `name` (NULL name: any element). */
xmlNodePtr vim_xml_next(xmlNodePtr node, const char *name);
/* First element child, any name. */
xmlNodePtr vim_xml_first(xmlNodePtr parent);
/* Text content, malloc'd (free()); NULL if node is NULL. */
char *vim_xml_text(xmlNodePtr node);
/* Text content of child `name`, malloc'd, or NULL. */
char *vim_xml_child_text(xmlNodePtr parent, const char *name);
/* xsi:type (read by namespace URI, prefix stripped: "xsd:string" -> "string"), malloc'd or NULL. */
char *vim_xml_xsi_type(xmlNodePtr node);
/* Integer / boolean content of child `name`; dflt when absent or unparsable. */
long long vim_xml_child_ll(xmlNodePtr parent, const char *name, long long dflt);
int vim_xml_child_bool(xmlNodePtr parent, const char *name, int dflt);
/* Reads a ManagedObjectReference element (type attribute + text). */
vmop_rc vim_xml_moref(xmlNodePtr node, struct vim_moref *ret_ref);
/* Parses a document (no network, no entities, no DTD); NULL if not well-formed. */
xmlDocPtr vim_xml_parse(const char *data, size_t len);

/* Writing: <elem type="T">value</elem> */
vmop_rc vim_xml_add_moref(struct vbuf *b, const char *elem, const struct vim_moref *ref);
/* <elem xsi:type="xsd:string">escaped</elem> (anyType values need the xsi:type) */
vmop_rc vim_xml_add_typed(struct vbuf *b, const char *elem, const char *xsd_type,
                          const char *value);

/* ---- SOAP (vim_soap.c) ------------------------------------------------------------------------
 */

struct vim_resp {
    xmlDocPtr doc;       /* owned */
    xmlNodePtr response; /* the <MethodResponse> element, borrowed from doc */
};
void vim_resp_free(struct vim_resp *r);

enum vim_occurs {
    VIM_RET_NONE,     /* no returnval expected */
    VIM_RET_OPTIONAL, /* zero or one */
    VIM_RET_REQUIRED, /* exactly one */
    VIM_RET_LIST,     /* zero or more */
};
/* Calls `method` on this_ref with extra parameters params_xml (already escaped; may be NULL).
 * Checks the returnval count against `occurs` (VMOP_E_PROTO when it does not match). A fault is
 * VMOP_E_FAULT (VMOP_E_AUTH for InvalidLogin) with err->fault = fault type. NotAuthenticated leads
 * to one re-login and one retry. Logs in first if needed (not for RetrieveServiceContent/Login). */
vmop_rc vim_soap_call(struct vim_client *c, const char *method, const struct vim_moref *this_ref,
                      const char *params_xml, enum vim_occurs occurs, struct vim_resp **ret_resp,
                      struct vmop_err *err);
/* Per-call options (vimcore refinement): a longer or shorter bound than the client's timeout, and
 * a cancel flag (see struct vim_http_req). NULL opts = defaults. */
struct vim_call_opts {
    long timeout_ms;   /* 0 = client default */
    const int *cancel; /* may be NULL */
};
vmop_rc vim_soap_call_ex(struct vim_client *c, const char *method, const struct vim_moref *this_ref,
                         const char *params_xml, enum vim_occurs occurs,
                         const struct vim_call_opts *opts, struct vim_resp **ret_resp,
                         struct vmop_err *err);
/* Same without login handling (used by vim_session.c itself). */
vmop_rc vim_soap_call_raw(struct vim_client *c, const char *method,
                          const struct vim_moref *this_ref, const char *params_xml,
                          enum vim_occurs occurs, struct vim_resp **ret_resp, struct vmop_err *err);
/* Parses an HTTP 500 body's Fault into err (exposed for unit tests and the fuzzer). Always returns
 * a failure code. */
vmop_rc vim_soap_parse_fault(const char *body, size_t len, int http_status, struct vmop_err *err);
/* Parses a 200 body; returns the response element (exposed for unit tests and the fuzzer). */
vmop_rc vim_soap_parse_response(const char *body, size_t len, const char *method,
                                enum vim_occurs occurs, struct vim_resp **ret_resp,
                                struct vmop_err *err);
/* Appends a one-line summary of a fault object's simple fields to out: " (requestedState=poweredOn,
 * existingState=poweredOn)" or " (obj=VirtualMachine:vm-9)"; nothing when it has none. fault is
 * the element carrying xsi:type (detail child, LocalizedMethodFault.fault). Used by vim_task.c. */
void vim_soap_fault_details(xmlNodePtr fault, struct vbuf *out);
/* 1 when a storage policy (SPBM profile) ID is one we send: 1..VIM_PBM_ID_MAX bytes, no control
 * characters (vim_pbm.c; also checked by the clone). */
int vim_pbm_id_valid(const char *id);
/* The same for another SOAP service of vCenter (e.g. PBM): its namespace, and the vim25 session
 * cookie carried as a vcSessionCookie header (NULL: no header). A secret: wipe the buffer. */
vmop_rc vim_soap_envelope_ns(struct vbuf *out, const char *ns, const char *session_cookie,
                             const char *method, const struct vim_moref *this_ref,
                             const char *params_xml);
/* Builds the envelope for a call (exposed for unit tests). out is initialized by the caller
 * (vbuf_init) or zeroed (then it is capped at VIM_MAX_REQUEST); caller vbuf_free()s it. */
vmop_rc vim_soap_envelope(struct vbuf *out, const char *method, const struct vim_moref *this_ref,
                          const char *params_xml);

/* ---- session (vim_session.c) ------------------------------------------------------------------
 */

/* Reads ServiceContent if not read yet. */
vmop_rc vim_session_service_content(struct vim_client *c, struct vmop_err *err);
/* Logs in unless a login newer than `seen_gen` already happened (then it returns at once). */
vmop_rc vim_session_login(struct vim_client *c, uint64_t seen_gen, struct vmop_err *err);
uint64_t vim_session_gen(struct vim_client *c);

/* ---- PropertyCollector (vim_pc.c) -------------------------------------------------------------
 */

struct vim_prop {
    const char *path; /* borrowed from the document */
    xmlNodePtr val;   /* the <val> element, borrowed */
};
struct vim_object {
    struct vim_moref ref;
    struct vim_prop *props; /* owned array */
    size_t n_props;
};
struct vim_objects {
    struct vim_resp **pages; /* owned: every response page (nodes point into them) */
    size_t n_pages;
    struct vim_object *items; /* owned array */
    size_t n;
};
void vim_objects_free(struct vim_objects *o);
/* The <val> of `path` in obj, or NULL when absent (absent = unset in vSphere). */
xmlNodePtr vim_object_prop(const struct vim_object *obj, const char *path);

/* RetrievePropertiesEx on one object (obj) or, if via_view, every object of `type` that the
 * ContainerView `obj` shows. paths NULL-terminated; NULL = all properties. Pages through
 * ContinueRetrievePropertiesEx. A missingSet entry with NotAuthenticated triggers re-login and a
 * retry; other missingSet faults for a single object are VMOP_E_FAULT (ManagedObjectNotFound ->
 * VMOP_E_NOT_FOUND). */
vmop_rc vim_retrieve(struct vim_client *c, const struct vim_moref *obj, const char *type,
                     const char *const *paths, int via_view, struct vim_objects *ret_objs,
                     struct vmop_err *err);
/* Convenience (vimcore refinement): every object of `type` under `container` (recursive), with
 * paths (NULL = all). Creates a ContainerView, retrieves through it and destroys it; if the session
 * was re-established meanwhile (the view died with the old one) it does all of it once more. */
vmop_rc vim_retrieve_in(struct vim_client *c, const struct vim_moref *container, const char *type,
                        const char *const *paths, struct vim_objects *ret_objs,
                        struct vmop_err *err);
vmop_rc vim_view_create(struct vim_client *c, const struct vim_moref *container, const char *type,
                        struct vim_moref *ret_view, struct vmop_err *err);
vmop_rc vim_view_destroy(struct vim_client *c, const struct vim_moref *view, struct vmop_err *err);

/* ---- typed decoders (vim_types.c) -------------------------------------------------------------
 */

/* Property paths vim_vm_get() asks for (NULL-terminated) and the decoder that fills a vim_vm. */
extern const char *const vim_vm_props[];
vmop_rc vim_vm_decode(const struct vim_object *obj, struct vim_vm **ret_vm, struct vmop_err *err);

/* ---- REST (vim_rest.c) ------------------------------------------------------------------------
 */

/* One vAPI call: logs in (POST /rest/com/vmware/cis/session) when needed, sends the session id
 * header, re-logs in once on 401. body may be NULL. On 2xx, *ret_value (may be NULL) gets the
 * detached "value" member (cJSON_Delete it; NULL when absent). A non-2xx answer or an error object
 * inside a 200 is VMOP_E_HTTP / VMOP_E_FAULT / VMOP_E_NOT_FOUND with the vAPI error type in
 * err->fault. */
vmop_rc vim_rest_call(struct vim_client *c, const char *method, const char *path, const cJSON *body,
                      cJSON **ret_value, struct vmop_err *err);
/* One vAPI call whose bodies are bytes, not JSON (Content Library file transfers: the download
 * endpoint of a download session, an upload endpoint). Same session handling as vim_rest_call
 * (login when needed, the session header, one re-login on 401). body may be NULL; content_type
 * NULL = none. 2xx: VMOP_OK and *ret_body (may be NULL; free() it; NUL-terminated) with *ret_len.
 * 404: VMOP_E_NOT_FOUND, 401: VMOP_E_AUTH, else non-2xx: VMOP_E_HTTP (a vAPI error object in the
 * body is decoded as by vim_rest_parse_reply). A body over max_resp bytes (0 = VIM_MAX_RESPONSE):
 * VMOP_E_TOOBIG. (catalog addition, used by vim_library_ovf.c.) */
vmop_rc vim_rest_raw(struct vim_client *c, const char *method, const char *path,
                     const char *content_type, const void *body, size_t body_len, size_t max_resp,
                     char **ret_body, size_t *ret_len, struct vmop_err *err);
/* Deletes the REST session (if any) and forgets it; a session that already expired is fine. */
vmop_rc vim_rest_logout(struct vim_client *c, struct vmop_err *err);
/* Frees the REST state (called by vim_client_free after vim_rest_logout). NULL is fine. */
void vim_rest_state_free(struct vim_rest_state *r);

/* Largest REST answer we parse as JSON. */
#define VIM_REST_MAX_JSON ((size_t)16 << 20)
/* Interprets one vAPI answer (exposed for unit tests). 2xx: *ret_value (may be NULL) gets the
 * detached "value" (cJSON_Delete it; NULL when absent or the body is empty), unless the body is a
 * vAPI error object. Errors: a vAPI error object {"type": "...errors.not_found", "value":
 * {"messages": [{"default_message": ..}]}} gives err->fault = the last dotted part of the type
 * and VMOP_E_NOT_FOUND (not_found), VMOP_E_AUTH (unauthenticated, unauthorized), VMOP_E_EXISTS
 * (already_exists) or VMOP_E_FAULT; a non-2xx without one (plain text "404 page not found", empty
 * 401) gives VMOP_E_NOT_FOUND (404), VMOP_E_AUTH (401) or VMOP_E_HTTP. `what` ("GET /rest/..")
 * prefixes the message. */
vmop_rc vim_rest_parse_reply(long status, const char *body, size_t len, const char *what,
                             cJSON **ret_value, struct vmop_err *err);
/* Content Library ids and paths (vim_library.c; used by vim_library_ovf.c too). An id must be
 * 1..256 bytes with no path character ('/', '\\', control) and not "." or "..": else
 * VMOP_E_INVALID naming `what`. */
vmop_rc vim_lib_check_id(const char *what, const char *id, struct vmop_err *err);
/* *b = prefix + percent-encoded(id) + suffix (suffix may be NULL), capped at max bytes (over it:
 * the vbuf error). b is initialised here either way: the caller vbuf_free()s it. */
vmop_rc vim_lib_path(struct vbuf *b, size_t max, const char *prefix, const char *id,
                     const char *suffix, struct vmop_err *err);
/* Reads the value of an OVF deploy answer (vim_library.c; exposed for unit tests): succeeded must
 * be true and resource_id set, else VMOP_E_FAULT with the messages of error.errors[] (the vAPI
 * reports deploy failures inside an HTTP 200) and err->fault = the last dotted part of the error
 * class ("error" when there is none). */
vmop_rc vim_rest_parse_ovf_deploy(const cJSON *value, struct vim_moref *ret_vm,
                                  struct vmop_err *err);

#endif
