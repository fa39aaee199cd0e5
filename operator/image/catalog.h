/* catalog.h: the image catalog, pure part: library items (+ their OVF facts) -> image objects, and
 * the plan that brings the existing image objects in line with them.
 *
 * Owns: image naming, the full VirtualMachineImage / ClusterVirtualMachineImage object (cJSON,
 * v1alpha6 (the storage version), the shape
 * manifests/crd/vmoperator.vmware.com_*virtualmachineimages.yaml accepts), and the diff desired vs
 * existing. No I/O: catalog_vc.h reads vCenter, the controller writes Kubernetes.
 *
 * Naming (VM Operator's pkg/util.VMIName): "vmi-" + the first 17 hex digits of
 * SHA-1(item id with every '-' removed), e.g. item "e1e8d3a4-..." -> "vmi-0a0044d7c690bcbea". The
 * id is hashed as given (vCenter ids are lower case). spec.providerRef names the image-registry
 * item the same way with the prefix "clitem-" (VM Operator swaps the prefix between the two).
 * Namespaced images (VirtualMachineImage) point at a ContentLibraryItem, cluster images
 * (ClusterVirtualMachineImage) at a ClusterContentLibraryItem, as in VM Operator.
 *
 * Which items become images: OVF items (status.type "OVF") and VM templates ("VM"). Other item
 * types (ISO, plain files) are skipped: vmop cannot deploy them.
 *
 * Ownership marks: every object carries the label app.kubernetes.io/managed-by=vmop and
 * vmop.io/library-id=<library id>. The diff deletes only objects with the managed-by label and
 * never updates an object without it (a same-named object someone else made is reported as
 * CAT_FOREIGN and left alone).
 *
 * Thread-safe; no globals.
 */
#ifndef VMOP_CATALOG_H
#define VMOP_CATALOG_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <time.h>

#include "ovf.h"
#include "vmop_err.h"

#define CAT_API_VERSION       "vmoperator.vmware.com/v1alpha6"
#define CAT_PROVIDER_API      "imageregistry.vmware.com/v1alpha2"
#define CAT_KIND_ITEM         "ContentLibraryItem"
#define CAT_KIND_CLUSTER_ITEM "ClusterContentLibraryItem"

#define CAT_LABEL_MANAGED_BY "app.kubernetes.io/managed-by"
#define CAT_MANAGED_BY       "vmop"
#define CAT_LABEL_LIBRARY_ID "vmop.io/library-id"
#define CAT_LABEL_TYPE       "image.vmoperator.vmware.com/type"
#define CAT_LABEL_OS_ID      "os.image.vmoperator.vmware.com/id"
#define CAT_LABEL_OS_TYPE    "os.image.vmoperator.vmware.com/type"
#define CAT_LABEL_OS_VERSION "os.image.vmoperator.vmware.com/version"
#define CAT_ANN_DISPLAY_NAME "vmware.com/display-name"

#define CAT_COND_READY        "Ready"
#define CAT_COND_V1A1         "VirtualMachineImageV1Alpha1Compatible"
#define CAT_REASON_NOT_SYNCED "VirtualMachineImageNotSynced"

#define CAT_NAME_BUF   32 /* fits "clitem-" + 17 hex digits + NUL */
#define CAT_MAX_IMAGES 10000

/* Facts of a VM-template item's template VM (borrowed strings, each may be NULL). */
struct cat_vm_facts {
    const char *guest_id;   /* config.guestId -> status.osInfo.type */
    const char *hw_version; /* config.version "vmx-13" -> status.hardwareVersion 13 */
    const char *firmware;   /* config.firmware "efi" / "bios" */
};

/* One library item as read from vCenter (borrowed). */
struct cat_item {
    const char *id;                /* item UUID, required */
    const char *library_id;        /* required */
    const char *name;              /* display name, required */
    const char *type;              /* "ovf", "vm-template"; other types are skipped */
    const char *content_version;   /* may be NULL or "" */
    const struct ovf_desc *ovf;    /* OVF items: the parsed descriptor, or NULL */
    const struct cat_vm_facts *vm; /* VM templates: facts, or NULL (fields left empty) */
    const char *sync_error;        /* non-NULL: the facts could not be read; Ready is False with
                                    * reason VirtualMachineImageNotSynced and this message (never a
                                    * secret) */
};

/* 1 when the item type becomes an image. */
int cat_item_supported(const char *type);

/* "<prefix><17 hex digits>" into buf (>= CAT_NAME_BUF): prefix "vmi-" for images, "clitem-" for
 * the provider item. VMOP_E_INVALID for an empty id. */
vmop_rc cat_name_with_prefix(const char *prefix, const char *item_id, char *buf, size_t n,
                             struct vmop_err *err);
vmop_rc cat_image_name(const char *item_id, char *buf, size_t n, struct vmop_err *err);

/* The full image object for one item. namespace_ NULL (or "") gives a ClusterVirtualMachineImage,
 * else a VirtualMachineImage in that namespace. `now` stamps condition lastTransitionTime.
 * *ret_obj: new tree, cJSON_Delete it. VMOP_E_INVALID for a missing id/name/library or an
 * unsupported type. */
vmop_rc cat_build_image(const struct cat_item *it, const char *namespace_, time_t now,
                        cJSON **ret_obj, struct vmop_err *err);

/* Every supported item's object, as a JSON array (first occurrence wins when an item id repeats,
 * e.g. a library listed twice). *ret_array: new, cJSON_Delete it. */
vmop_rc cat_build_images(const struct cat_item *items, size_t n, const char *namespace_, time_t now,
                         cJSON **ret_array, struct vmop_err *err);

enum cat_op {
    CAT_CREATE, /* create obj, then write its status (status is a subresource: a create drops it) */
    CAT_UPDATE, /* see main_changed / status_changed */
    CAT_DELETE, /* delete obj (a copy of the existing object: name, namespace, uid,
                 * resourceVersion for a precondition) */
    CAT_FOREIGN, /* an object of that name exists without vmop's managed-by label: left alone;
                  * obj is the desired object (for a warning event) */
};
const char *cat_op_str(enum cat_op op);

struct cat_change {
    enum cat_op op;
    cJSON *obj;         /* owned by the plan */
    int main_changed;   /* UPDATE: labels, annotations or spec differ: write the object */
    int status_changed; /* UPDATE: status differs: write /status */
};

struct cat_plan {
    struct cat_change *changes; /* creates, then updates, then deletes, then foreign */
    size_t n;
    size_t n_create, n_update, n_delete, n_foreign;
};
void cat_plan_free(struct cat_plan *p); /* zeroes it; NULL is fine */

/* Compares desired (cat_build_images' array) with existing (the objects of the same kind and
 * scope as listed from Kubernetes: a JSON array, or a List object with "items"). desired must be
 * the complete set for the scope: a managed object missing from it is deleted.
 * Updates are planned only when labels vmop owns, the display-name annotation, spec or status
 * differ; metadata the server fills (uid, resourceVersion, managedFields, ...) and condition
 * lastTransitionTime / observedGeneration are ignored. An update object is the existing object with
 * vmop's labels (others' labels and annotations are kept), spec and status replaced; a condition
 * whose status, reason and message did not change keeps its lastTransitionTime. namespace_ is the
 * scope (NULL or "" for cluster images): existing objects in another namespace are ignored.
 * *ret_plan: cat_plan_free it. */
vmop_rc cat_diff(const cJSON *desired, const cJSON *existing, const char *namespace_,
                 struct cat_plan *ret_plan, struct vmop_err *err);

/* 1 when the object carries vmop's managed-by label. */
int cat_is_managed(const cJSON *obj);

#endif
