/* adm_hub.c: admission requests seen in the hub version (see adm_hub.h). */
#include "adm_hub.h"

#include <string.h>

#include "api_convert.h"
#include "wh_patch.h"

/* The apiVersion of obj when it is a vmoperator.vmware.com version other than the hub, else
 * NULL. */
static const char *spoke_version(const cJSON *obj)
{
    const cJSON *av = cJSON_GetObjectItemCaseSensitive(obj, "apiVersion");
    size_t gl = strlen(API_CONVERT_GROUP);

    if (!cJSON_IsString(av) || !av->valuestring ||
        strncmp(av->valuestring, API_CONVERT_GROUP, gl) || av->valuestring[gl] != '/' ||
        !strcmp(av->valuestring, API_CONVERT_HUB_GV))
        return NULL;
    return av->valuestring;
}

vmop_rc adm_hub_request(const struct wh_admission_request *req, struct adm_hub *h,
                        struct vmop_err *err)
{
    vmop_rc rc;

    memset(h, 0, sizeof(*h));
    h->view = *req;
    h->view.doc = NULL; /* the view owns nothing of req's */
    h->api_version = spoke_version(req->object ? req->object : req->old_object);
    if (!h->api_version)
        return VMOP_OK;
    if (req->object && (rc = api_convert(req->object, API_CONVERT_HUB_GV, &h->obj, err)))
        return rc;
    if (req->old_object && (rc = api_convert(req->old_object, API_CONVERT_HUB_GV, &h->old, err)))
        return rc;
    h->view.object = h->obj ? h->obj : req->object;
    h->view.old_object = h->old ? h->old : req->old_object;
    h->view.kind_version = h->view.res_version = API_CONVERT_HUB;
    return VMOP_OK;
}

void adm_hub_free(struct adm_hub *h)
{
    if (!h)
        return;
    cJSON_Delete(h->obj);
    cJSON_Delete(h->old);
    memset(h, 0, sizeof(*h));
}

vmop_rc adm_hub_patch(const struct adm_hub *h, const struct wh_admission_request *req,
                      const cJSON *mutated, cJSON **ret_patch, struct vmop_err *err)
{
    cJSON *sent_form = NULL;
    vmop_rc rc;

    if (!h->api_version)
        return wh_patch_diff(req->object, mutated, ret_patch, err);
    rc = api_convert(mutated, h->api_version, &sent_form, err);
    if (rc == VMOP_OK)
        rc = wh_patch_diff(req->object, sent_form, ret_patch, err);
    cJSON_Delete(sent_form);
    return rc;
}
