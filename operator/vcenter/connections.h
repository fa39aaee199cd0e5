/* connections.h: one shared vim_client per VCenterEndpoint, built from the endpoint and its
 * credentials Secret, and rebuilt when either changes.
 *
 * Owns: the connection cache (a vim_client and its users' attached state per endpoint) keyed by
 * endpoint name. Each entry remembers a SHA-256 fingerprint of what built it (server, TLS settings,
 * username, password); a lookup with different inputs retires the old client (freed when its last
 * user puts it back) and builds a new one. A caBundle is written to a private temporary file for
 * libcurl and removed with the client. Credentials are never logged; the fingerprint is not
 * reversible.
 *
 * Threads: thread-safe. Ownership: vcenters_get() hands out a reference (vc_conn_put() it).
 */
#ifndef VMOP_CONNECTIONS_H
#define VMOP_CONNECTIONS_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "api_admin.h"
#include "kube_informer.h"
#include "vimclient.h"
#include "vmop_err.h"

struct vcenters;
struct vc_conn;

/* State that the users of the connections keep per client (the VM reconcile's vmsync context),
 * without this module knowing what it is: attach() runs once when a client is built (its failure
 * fails the build), detach() when the client is freed. */
struct vc_attachment {
    vmop_rc (*attach)(struct vim_client *client, void *arg, void **ret, struct vmop_err *err);
    void (*detach)(void *state);
    void *arg; /* borrowed: outlives every connection */
};

struct vcenters_opts {
    long timeout_ms;                 /* per vCenter call; 0: 60000 */
    int max_connections;             /* per endpoint; 0: 8 */
    struct vc_attachment attachment; /* attach NULL: nothing attached */
};

vmop_rc vcenters_new(const struct vcenters_opts *o, struct vcenters **ret, struct vmop_err *err);
void vcenters_free(struct vcenters *v); /* NULL-safe; no connection may be in use */

/* The client for endpoint ep, whose credentials Secret is secret (the JSON object as the API
 * returns it; NULL: not found -> VMOP_E_NOT_FOUND). VMOP_E_INVALID when the Secret lacks the keys.
 * *ret: a reference, release with vc_conn_put(). */
vmop_rc vcenters_get(struct vcenters *v, const struct api_endpoint *ep, const cJSON *secret,
                     struct vc_conn **ret, struct vmop_err *err);

/* The client for the VCenterEndpoint named name, read from the informer caches: the endpoint
 * from endpoints, its credentials Secret (system_ns/<secret>) from secrets, then vcenters_get().
 * VMOP_E_NOT_FOUND when the endpoint is not cached. *ret_ep (may be NULL: not wanted) receives
 * the parsed endpoint on VMOP_OK (api_endpoint_free() it); *ret_conn as vcenters_get(). */
vmop_rc vcenters_get_named(struct vcenters *v, struct kube_informer *endpoints,
                           struct kube_informer *secrets, const char *system_ns, const char *name,
                           struct api_endpoint **ret_ep, struct vc_conn **ret_conn,
                           struct vmop_err *err);
/* Drops the cached client of an endpoint (deleted endpoint, or after VMOP_E_AUTH so the next
 * lookup logs in afresh). */
void vcenters_forget(struct vcenters *v, const char *endpoint);

struct vim_client *vc_conn_client(const struct vc_conn *c);
/* What the attachment made for this client (shared by every worker); NULL without one. */
void *vc_conn_attached(const struct vc_conn *c);
const char *vc_conn_endpoint(const struct vc_conn *c);
void vc_conn_put(struct vc_conn *c); /* NULL-safe */

/* Sum of vim_client_stats() over every client ever built (live and retired), and the count of
 * clients built. */
void vcenters_stats(struct vcenters *v, struct vim_stats *ret, uint64_t *ret_clients);

#endif
