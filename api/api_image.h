/* api_image.h: VirtualMachineImage / ClusterVirtualMachineImage model and imageName resolution.
 *
 * Owns: parsing an image object into a borrowed view (like api_vm.h: the struct owns a private copy
 * of the JSON), and the pure resolution rule VM Operator's mutating webhook applies to
 * spec.imageName:
 *   - a name starting with "vmi-" is an object name: the namespaced image first, then the cluster
 * one;
 *   - anything else is a display name (status.name) that must match exactly one image across the
 *     namespace and cluster scopes (none: VMOP_E_NOT_FOUND; several: VMOP_E_EXISTS).
 */
#ifndef VMOP_API_IMAGE_H
#define VMOP_API_IMAGE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "api_ferr.h"
#include "vmop_err.h"

#define API_KIND_VMI  "VirtualMachineImage"
#define API_KIND_CVMI "ClusterVirtualMachineImage"

struct api_image {
    cJSON *obj;  /* owned */
    int cluster; /* 1 for ClusterVirtualMachineImage */
    const char *name, *namespace_;
    const char *provider_kind, *provider_name;                     /* spec.providerRef */
    const char *display_name, *type, *provider_item_id, *firmware; /* status */
    const char *os_type, *product_version, *content_version;
    long long hardware_version;
    struct api_ferrs parse_errs;
};

/* *ret_image: new object, free with api_image_free(). Fails only on a non-object or NOMEM. */
vmop_rc api_image_parse(const cJSON *json, struct api_image **ret_image, struct vmop_err *err);
void api_image_free(struct api_image *img);
void api_image_validate(const struct api_image *img, struct api_ferrs *fe);

/* One candidate for resolution (borrowed strings). */
struct api_image_entry {
    const char *name;         /* object name (vmi-...) */
    const char *display_name; /* status.name, may be NULL */
};

/* Resolves image_name against the namespace's images and the cluster images. On VMOP_OK,
 * *ret_cluster says which scope matched and *ret_entry points into the given arrays. */
vmop_rc api_image_resolve(const struct api_image_entry *ns_images, size_t n_ns,
                          const struct api_image_entry *cluster_images, size_t n_cluster,
                          const char *image_name, const struct api_image_entry **ret_entry,
                          int *ret_cluster, struct vmop_err *err);

#endif
