/* ta.h: internal declarations shared by the kube-testapi sources (the Kubernetes-API test server).
 *
 * Model: one big store lock (struct ta_store.lock) guards the registry of resource types, every
 * object list, the watch history ring and the global resourceVersion. Stored objects (struct
 * ta_obj) are immutable once published and refcounted (atomic), so a handler takes a reference
 * under the lock and reads/prints the cJSON tree after unlocking. Resource types (struct ta_rtype)
 * are never freed before shutdown: deleting a CRD only marks its type "not served", so watchers can
 * keep a pointer. Not here: HTTP plumbing (ta_http.c), the schema/OpenAPI/Table functions
 * (apischema).
 */
#ifndef TA_H
#define TA_H

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stddef.h>

#include "vbuf.h"
#include "vmop_err.h"

/* Caps on anything a peer controls. */
#define TA_MAX_BODY        ((size_t)8 << 20) /* request body (kube-apiserver: 3 MiB objects) */
#define TA_MAX_NAME        253
#define TA_MAX_LIST_LIMIT  100000
#define TA_MAX_SELECTOR    64 /* terms per selector */
#define TA_DEFAULT_WINDOW  10000
#define TA_MAX_FAULT_RULES 64

/* ---- stored objects ------------------------------------------------------------------------ */

struct ta_obj {
    int refs;       /* atomic */
    cJSON *json;    /* owned; immutable after publication */
    char *key;      /* owned: "ns/name" for namespaced types, "name" otherwise */
    const char *ns; /* points into json (metadata.namespace) or "" */
    const char *name;
    const char *uid;
    unsigned long long rv;
    char *text; /* lazily printed JSON (atomic pointer); owned */
};

/* Takes ownership of json (never NULL on success); refs = 1. NULL on NOMEM (json is freed). */
struct ta_obj *ta_obj_new(cJSON *json, int namespaced);
struct ta_obj *ta_obj_ref(struct ta_obj *o);
void ta_obj_unref(struct ta_obj *o); /* NULL-safe */
/* The unformatted JSON text of the object, printed once and cached; NULL on NOMEM. Borrowed. */
const char *ta_obj_text(struct ta_obj *o);

/* ---- resource types ------------------------------------------------------------------------ */

struct ta_version {
    char *name; /* "v1" */
    int served, storage;
    int has_status; /* subresources.status */
    int has_scale;
    cJSON *schema;     /* owned copy of openAPIV3Schema, or NULL (built-ins) */
    cJSON *columns;    /* owned copy of additionalPrinterColumns, or NULL */
    cJSON *selectable; /* owned copy of selectableFields, or NULL */
};

struct ta_rtype {
    char *group; /* "" for core */
    char *plural, *singular, *kind, *list_kind;
    int namespaced;
    int builtin;                     /* built-in types: SMP allowed, no schema chain */
    int served;                      /* 0 once its CRD is deleted (the struct stays) */
    int creatable;                   /* 0 for read-only types */
    cJSON *short_names, *categories; /* owned arrays or NULL */
    struct ta_version *versions;     /* owned, n_versions */
    size_t n_versions;
    /* the objects, sorted by key (strcmp); guarded by the store lock */
    struct ta_obj **objs;
    size_t n_objs, cap_objs;
};

/* ---- watch history -------------------------------------------------------------------------- */

enum ta_ev_type { TA_EV_ADDED, TA_EV_MODIFIED, TA_EV_DELETED };

struct ta_event {
    unsigned long long rv;
    enum ta_ev_type type;
    struct ta_rtype *rt;
    struct ta_obj *obj; /* ref: new state (DELETED: last state, with the deletion RV) */
    struct ta_obj *old; /* ref or NULL: previous state (selector transitions) */
};

/* ---- faults ---------------------------------------------------------------------------------- */

struct ta_fault_rule {
    char *method;  /* owned, "" = any */
    char *pattern; /* owned regex source */
    void *regex;   /* owned regex_t */
    int code;      /* HTTP status to answer */
    int remaining; /* requests left to fail; <0 = forever */
    int latency_ms;
};

/* ---- the store ------------------------------------------------------------------------------- */

struct ta_store {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* broadcast on every event, shutdown, watch drop */
    unsigned long long rv;  /* last assigned resourceVersion */
    struct ta_rtype **types;
    size_t n_types;
    unsigned reg_gen; /* bumped when the set of served types or their schemas change */
    /* ring of the last window events */
    struct ta_event *ring;
    size_t ring_cap, ring_start, ring_len;
    unsigned long long dropped_rv; /* highest RV evicted from the ring (0 = none) */
    /* lifecycle and faults */
    int shutting_down;
    unsigned drop_gen; /* bumped to end every open watch stream */
    int gc_dirty;
    pthread_cond_t gc_wake;
    struct ta_fault_rule rules[TA_MAX_FAULT_RULES];
    size_t n_rules;
    int latency_ms;
    /* cached OpenAPI docs: array of {"gv":..,"gen":..,"text":..,"hash":..} */
    cJSON *openapi_cache;
};

struct ta_server {
    struct ta_store st;
    char *token; /* owned or NULL: bearer token required when set */
    int tls;
    long long start_time;
};

/* ta_store.c */
vmop_rc ta_store_init(struct ta_store *st, size_t window, struct vmop_err *err);
void ta_store_deinit(struct ta_store *st);
/* Lookups below require the lock. */
struct ta_rtype *ta_store_find_type(struct ta_store *st, const char *group, const char *plural);
struct ta_rtype *ta_store_find_type_ver(struct ta_store *st, const char *group, const char *version,
                                        const char *plural, const struct ta_version **ret_ver);
struct ta_rtype *ta_store_find_kind(struct ta_store *st, const char *group, const char *kind);
/* Registers (or returns the existing) type; takes ownership of nothing; NULL on NOMEM. */
struct ta_rtype *ta_store_add_type(struct ta_store *st, const char *group, const char *plural);
/* Index of the first object with key >= key. */
size_t ta_rtype_lower_bound(const struct ta_rtype *rt, const char *key);
struct ta_obj *ta_rtype_get(const struct ta_rtype *rt, const char *key); /* borrowed */
/* Publishes a new version of an object (replacing the one with the same key, if any): assigns the
 * next RV (stamped into obj->json metadata.resourceVersion), records the event. Takes over the
 * caller's reference on obj. */
vmop_rc ta_store_put(struct ta_store *st, struct ta_rtype *rt, struct ta_obj *obj,
                     enum ta_ev_type type, struct vmop_err *err);
/* Removes the object with obj's key: stamps a new RV into a copy, records DELETED.
 * *ret_last (optional) gets a ref on the deleted state. */
vmop_rc ta_store_remove(struct ta_store *st, struct ta_rtype *rt, const char *key,
                        struct ta_obj **ret_last, struct vmop_err *err);
const struct ta_version *ta_rtype_storage_version(const struct ta_rtype *rt);
const struct ta_version *ta_rtype_version(const struct ta_rtype *rt, const char *v);

/* ta_builtin.c: registers the built-in types and the default namespaces. */
vmop_rc ta_builtin_register(struct ta_server *s, struct vmop_err *err);

/* Kind-specific defaulting/normalisation of built-ins on every write (secrets stringData, namespace
 * phase, service clusterIP...); lock held. Appends causes for invalid objects. */
vmop_rc ta_builtin_normalize(struct ta_server *s, struct ta_rtype *rt, cJSON *obj, const cJSON *old,
                             cJSON *causes, struct vmop_err *err);
int ta_rtype_is(const struct ta_rtype *rt, const char *group, const char *plural);

/* ta_crd.c: CRD lifecycle hooks (lock held). */
vmop_rc ta_crd_prepare(struct ta_server *s, cJSON *crd, const struct ta_obj *old, cJSON *causes,
                       struct vmop_err *err);
vmop_rc ta_crd_apply(struct ta_server *s, const cJSON *crd, struct vmop_err *err);
void ta_crd_removed(struct ta_server *s, const cJSON *crd);
cJSON *ta_rtype_descriptor(const struct ta_rtype *rt, const struct ta_version *v);

/* ta_util.c */
void ta_now_rfc3339(char buf[32]);
long long ta_parse_rfc3339(const char *s); /* -1 when unparsable */
void ta_uuid(char buf[37]);
void ta_random_suffix(char *buf, size_t n); /* n chars + NUL */
long long ta_mono_ms(void);
const char *ta_jstr(const cJSON *o, const char *key);         /* NULL unless a string */
cJSON *ta_jobj(cJSON *o, const char *key, int create);        /* object child */
const char *ta_meta_str(const cJSON *obj, const char *field); /* metadata.<field> string */
void ta_jset_str(cJSON *o, const char *key, const char *val); /* replaces; NOMEM ignored */
void ta_jset_num(cJSON *o, const char *key, double val);
const cJSON *ta_jpath(const cJSON *o, const char *path); /* ".a.b" or "a.b" */
int ta_version_cmp(const char *a, const char *b);        /* kube version priority, <0 = a first */
char *ta_qualified(const struct ta_rtype *rt);           /* "plural.group" malloc'd */
int ta_valid_dns_subdomain(const char *s);
int ta_valid_dns_label(const char *s);
char *ta_b64(const unsigned char *data, size_t n);     /* malloc'd */
unsigned char *ta_unb64(const char *s, size_t *ret_n); /* malloc'd or NULL */

/* ta_patch.c */
/* RFC 7386 merge patch applied to *target in place (target may be replaced). */
vmop_rc ta_merge_patch(cJSON **target, const cJSON *patch, struct vmop_err *err);
/* RFC 6902 JSON patch. */
vmop_rc ta_json_patch(cJSON **target, const cJSON *ops, struct vmop_err *err);
/* Strategic merge patch, approximated: merge patch where known lists of maps merge by key. */
vmop_rc ta_strategic_patch(cJSON **target, const cJSON *patch, struct vmop_err *err);

/* ta_select.c */
struct ta_selector;
vmop_rc ta_label_selector_parse(const char *s, struct ta_selector **ret, struct vmop_err *err);
vmop_rc ta_field_selector_parse(const char *s, const struct ta_rtype *rt,
                                const struct ta_version *v, struct ta_selector **ret,
                                struct vmop_err *err);
int ta_selector_match_labels(const struct ta_selector *sel, const cJSON *obj);
int ta_selector_match_fields(const struct ta_selector *sel, const cJSON *obj);
void ta_selector_free(struct ta_selector *sel);
/* The value of a single name= term in a field selector, or NULL (for fast lookups). */
const char *ta_selector_name_eq(const struct ta_selector *sel);

#endif
