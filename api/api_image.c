/* api_image.c: image objects and imageName resolution (see api_image.h). */
#include "api_image.h"

#include <stdlib.h>
#include <string.h>

#include "api_json.h"

vmop_rc api_image_parse(const cJSON *json, struct api_image **ret_image, struct vmop_err *err)
{
    struct api_image *img;
    struct api_ferrs *fe;
    const cJSON *md, *spec, *status, *ref, *os, *prod;
    const char *kind;

    if (!cJSON_IsObject(json))
        return vmop_fail(err, VMOP_E_INVALID, "an image must be a JSON object");
    img = calloc(1, sizeof(*img));
    if (!img || !(img->obj = cJSON_Duplicate(json, 1))) {
        free(img);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory parsing an image");
    }
    fe = &img->parse_errs;
    kind = api_json_str(img->obj, "kind", "", fe);
    img->cluster = kind && strcmp(kind, API_KIND_CVMI) == 0;
    md = api_json_obj(img->obj, "metadata", "", fe);
    spec = api_json_obj(img->obj, "spec", "", fe);
    status = api_json_obj(img->obj, "status", "", fe);
    ref = api_json_obj(spec, "providerRef", "spec", fe);
    os = api_json_obj(status, "osInfo", "status", fe);
    prod = api_json_obj(status, "productInfo", "status", fe);
    img->name = api_json_str(md, "name", "metadata", fe);
    img->namespace_ = api_json_str(md, "namespace", "metadata", fe);
    img->provider_kind = api_json_str(ref, "kind", "spec.providerRef", fe);
    img->provider_name = api_json_str(ref, "name", "spec.providerRef", fe);
    img->display_name = api_json_str(status, "name", "status", fe);
    img->type = api_json_str(status, "type", "status", fe);
    img->provider_item_id = api_json_str(status, "providerItemID", "status", fe);
    img->content_version = api_json_str(status, "providerContentVersion", "status", fe);
    img->firmware = api_json_str(status, "firmware", "status", fe);
    img->os_type = api_json_str(os, "type", "status.osInfo", fe);
    img->product_version = api_json_str(prod, "version", "status.productInfo", fe);
    api_json_int(status, "hardwareVersion", "status", fe, &img->hardware_version);
    *ret_image = img;
    return VMOP_OK;
}

void api_image_free(struct api_image *img)
{
    if (!img)
        return;
    cJSON_Delete(img->obj);
    free(img);
}

void api_image_validate(const struct api_image *img, struct api_ferrs *fe)
{
    api_ferrs_merge(fe, &img->parse_errs);
    if (!img->name || !*img->name)
        api_ferr_add(fe, API_FERR_REQUIRED, "metadata.name", "%s", "");
    if (!img->cluster && (!img->namespace_ || !*img->namespace_))
        api_ferr_add(fe, API_FERR_REQUIRED, "metadata.namespace", "%s", "");
    if (img->type && strcmp(img->type, "OVF") != 0 && strcmp(img->type, "ISO") != 0 &&
        strcmp(img->type, "VM") != 0)
        api_ferr_add(fe, API_FERR_NOT_SUPPORTED, "status.type",
                     "\"%.63s\": supported values: \"ISO\", \"OVF\", \"VM\"", img->type);
}

static const struct api_image_entry *by_name(const struct api_image_entry *v, size_t n,
                                             const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].name && strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}

vmop_rc api_image_resolve(const struct api_image_entry *ns_images, size_t n_ns,
                          const struct api_image_entry *cluster_images, size_t n_cluster,
                          const char *image_name, const struct api_image_entry **ret_entry,
                          int *ret_cluster, struct vmop_err *err)
{
    const struct api_image_entry *hit = NULL;
    int hit_cluster = 0;
    size_t matches = 0;

    if (!image_name || !*image_name)
        return vmop_fail(err, VMOP_E_INVALID, "imageName is empty");
    if (strncmp(image_name, "vmi-", 4) == 0) {
        if ((hit = by_name(ns_images, n_ns, image_name)))
            hit_cluster = 0;
        else if ((hit = by_name(cluster_images, n_cluster, image_name)))
            hit_cluster = 1;
        if (!hit)
            return vmop_fail(err, VMOP_E_NOT_FOUND,
                             "no VirtualMachineImage or ClusterVirtualMachineImage named '%.253s'",
                             image_name);
    } else {
        for (size_t i = 0; i < n_ns; i++)
            if (ns_images[i].display_name && strcmp(ns_images[i].display_name, image_name) == 0) {
                hit = &ns_images[i];
                hit_cluster = 0;
                matches++;
            }
        for (size_t i = 0; i < n_cluster; i++)
            if (cluster_images[i].display_name &&
                strcmp(cluster_images[i].display_name, image_name) == 0) {
                hit = &cluster_images[i];
                hit_cluster = 1;
                matches++;
            }
        if (matches == 0)
            return vmop_fail(err, VMOP_E_NOT_FOUND, "no image with display name '%.253s'",
                             image_name);
        if (matches > 1)
            return vmop_fail(err, VMOP_E_EXISTS,
                             "display name '%.253s' matches %zu images; use the vmi- name",
                             image_name, matches);
    }
    *ret_entry = hit;
    *ret_cluster = hit_cluster;
    return VMOP_OK;
}
