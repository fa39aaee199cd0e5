/* ta_http.h: one HTTP request of kube-testapi as the handlers see it: the parsed route, the body,
 * the answer being built (status code, JSON text, headers), and helpers to fail with a Kubernetes
 * Status. A handler fills rq->code/rq->out (or rq->watch) or returns a vmop_rc whose err carries
 * the HTTP code (err->http_status) and the Status reason (err->fault); ta_http.c turns that into a
 * Status body with the details (name/group/kind/causes) recorded in rq. */
#ifndef TA_HTTP_H
#define TA_HTTP_H

#include <microhttpd.h>

#include "ta.h"

struct ta_watch;

struct ta_req {
    struct ta_server *s;
    struct MHD_Connection *conn;
    const char *method; /* borrowed from MHD */
    char *path;         /* owned copy of the URL path */
    struct vbuf body;
    /* route (strings point into seg_buf) */
    char *seg_buf;
    const char *group, *version, *plural, *ns, *name, *sub;
    int watch_path; /* the deprecated /watch/ prefix was used */
    struct ta_rtype *rt;
    const struct ta_version *ver;
    /* Status details for errors */
    char d_name[TA_MAX_NAME + 1], d_group[TA_MAX_NAME + 1], d_kind[TA_MAX_NAME + 1];
    cJSON *causes;  /* owned or NULL */
    char *long_msg; /* owned or NULL: overrides err->msg (422 messages can exceed it) */
    /* answer */
    int code;
    char *out;         /* owned JSON text */
    const char *ctype; /* static; NULL = application/json */
    cJSON *warnings;   /* owned array of strings or NULL: "Warning: 299 - ..." headers */
    int retry_after;
    struct ta_watch *watch; /* owned: a streaming answer */
};

/* Records a Kubernetes error: err gets rc VMOP_E_KUBE, fault = reason, http_status = code. */
vmop_rc ta_fail(struct vmop_err *err, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Sets the Status details (name may be NULL). */
void ta_req_details(struct ta_req *rq, const struct ta_rtype *rt, const char *name);
const char *ta_query(const struct ta_req *rq, const char *key); /* decoded query value or NULL */
const char *ta_header(const struct ta_req *rq, const char *key);
/* Answers code with doc printed (doc is freed). */
void ta_reply_json(struct ta_req *rq, int code, cJSON *doc);
/* Answers code with text (taken). */
void ta_reply_text(struct ta_req *rq, int code, char *text);
void ta_add_warning(struct ta_req *rq, const char *text);
/* 1 when Accept asks for a meta.k8s.io Table (first acceptable type wins). *ret_v1beta1 set. */
int ta_accept_table(const struct ta_req *rq, int *ret_v1beta1);
/* Builds a Status JSON text (malloc'd). */
char *ta_status_text(int code, const char *reason, const char *msg, const char *name,
                     const char *group, const char *kind, const cJSON *causes);

/* MHD callbacks (cls = struct ta_server *) */
enum MHD_Result ta_http_access(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload_data,
                               size_t *upload_data_size, void **con_cls);
void ta_http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                       enum MHD_RequestTerminationCode toe);
size_t ta_http_unescape(void *cls, struct MHD_Connection *conn, char *uri);

/* handlers */
vmop_rc ta_handle_version(struct ta_req *rq, struct vmop_err *err);
vmop_rc ta_handle_discovery(struct ta_req *rq, struct vmop_err *err); /* /api, /apis, /api/v1 ... */
vmop_rc ta_handle_openapi(struct ta_req *rq, struct vmop_err *err);
vmop_rc ta_handle_resource(struct ta_req *rq, struct vmop_err *err);
vmop_rc ta_handle_faults(struct ta_req *rq, struct vmop_err *err);
/* Checks the fault rules for this request (lock not held); 1 when the request was answered. */
int ta_faults_apply(struct ta_req *rq);
vmop_rc ta_fault_add_spec(struct ta_server *s, const char *spec, struct vmop_err *err);

/* ta_watch.c */
vmop_rc ta_watch_start(struct ta_req *rq, struct vmop_err *err);
struct MHD_Response *ta_watch_response(struct ta_req *rq);

/* ta_crud.c helpers shared with the GC */
/* Deletes (or marks deleting) one object as a DELETE request would; lock held. */
vmop_rc ta_delete_locked(struct ta_server *s, struct ta_rtype *rt, struct ta_obj *cur,
                         const char *policy, struct ta_obj **ret_obj, struct vmop_err *err);
/* Applies the write chain to a new state of an existing object and stores it; lock held. */
vmop_rc ta_update_locked(struct ta_server *s, struct ta_req *rq, struct ta_rtype *rt,
                         const struct ta_version *ver, struct ta_obj *old, cJSON *obj,
                         int is_status, int check_rv, struct ta_obj **ret_obj,
                         struct vmop_err *err);

/* ta_gc.c */
vmop_rc ta_gc_start(struct ta_server *s, pthread_t *ret_thread, struct vmop_err *err);

/* ta_tls.c: a fresh CA + server certificate for 127.0.0.1/localhost, PEM (malloc'd). */
vmop_rc ta_tls_generate(char **ret_ca_pem, char **ret_cert_pem, char **ret_key_pem,
                        struct vmop_err *err);

#endif
