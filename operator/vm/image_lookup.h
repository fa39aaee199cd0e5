/* image_lookup.h: spec.imageName -> image{kind,name} from the informer caches of
 * VirtualMachineImages (namespace first) and ClusterVirtualMachineImages, as VM Operator resolves
 * it (object name or display name; api_image_resolve() decides). Shared by the VM controller
 * (defaults written on reconcile) and the admission webhooks (defaults and denials at apply time).
 *
 * No cap: every cached image takes part (a fixed bound would make images past it unfindable).
 * Reads the caches only; thread-safe as the informers are.
 */
#ifndef VMOP_IMAGE_LOOKUP_H
#define VMOP_IMAGE_LOOKUP_H

#include "api_vm.h"
#include "kube_informer.h"
#include "vmop_err.h"

/* images: the VirtualMachineImage informer, with an "ns" index; cimages: the
 * ClusterVirtualMachineImage informer. VMOP_OK with ret_kind/ret_name set, VMOP_E_NOT_FOUND or
 * VMOP_E_EXISTS (a display name several images share), err saying which. */
vmop_rc image_lookup(struct kube_informer *images, struct kube_informer *cimages, const char *ns,
                     const char *image_name, char ret_kind[API_NAME_MAX],
                     char ret_name[API_NAME_MAX], struct vmop_err *err);

#endif
