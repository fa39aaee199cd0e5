/* adm_hub.h: an admission request in any served version, seen in the hub version.
 *
 * The VirtualMachine webhooks are registered at every served version (manifests/webhook), so the
 * API server sends a request in the version it came in, with no conversion round trip of its own
 * (before, matchPolicy Equivalent made it convert a v1alpha5 create to v1alpha6 and back through
 * the conversion webhook for the mutating webhook, and again for the validating one). The
 * handlers decide on the hub (v1alpha6): adm_hub_request() converts the object and the old object
 * in-process with api_convert(), the function the conversion webhook runs, and adm_hub_patch()
 * turns a mutation of the hub object into a JSON Patch of the object as sent, which is what the
 * API server did with the hub's patch (apply it to the hub object, convert that back). So what is
 * admitted is the same as before, for every version.
 *
 * Pure apart from allocation; thread-safe.
 */
#ifndef VMOP_ADM_HUB_H
#define VMOP_ADM_HUB_H

#include <cjson/cJSON.h>

#include "vmop_err.h"
#include "wh_review.h"

struct adm_hub {
    struct wh_admission_request view; /* the request, object and old_object in the hub version */
    const char *api_version; /* the version the request came in (borrowed); NULL when the hub */
    cJSON *obj, *old;        /* the owned conversions (NULL when none was needed) */
};

/* Fills h from req (borrowed: req must outlive h): a vmoperator.vmware.com object of another
 * served version is converted to v1alpha6; anything else (the hub, vmop's own admin kinds, no
 * object) is viewed as it is. A conversion that fails is VMOP_E_INVALID with api_convert()'s
 * message (the caller denies the request). adm_hub_free() h in every case. */
vmop_rc adm_hub_request(const struct wh_admission_request *req, struct adm_hub *h,
                        struct vmop_err *err);
void adm_hub_free(struct adm_hub *h);

/* The JSON Patch (*ret_patch, a new array; empty when nothing changes) that turns the object as
 * sent (req->object) into mutated, a hub object: mutated converted to the request's version
 * first when it came in another one. */
vmop_rc adm_hub_patch(const struct adm_hub *h, const struct wh_admission_request *req,
                      const cJSON *mutated, cJSON **ret_patch, struct vmop_err *err);

#endif
