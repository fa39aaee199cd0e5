/* adm_vm.c: the VirtualMachine mutating webhook (see adm_vm.h). */
#include "adm_vm.h"

#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "api_admin.h"
#include "api_vm.h"
#include "image_lookup.h"
#include "kube_util.h"
#include "wh_patch.h"

static vmop_rc random_cb(void *arg, unsigned char *buf, size_t n, struct vmop_err *err)
{
    (void)arg;
    if (RAND_bytes(buf, (int)n) != 1)
        return vmop_fail(err, VMOP_E_INTERNAL, "no random bytes");
    return VMOP_OK;
}

static vmop_rc lookup_cb(void *arg, const char *ns, const char *image_name,
                         char ret_kind[API_NAME_MAX], char ret_name[API_NAME_MAX],
                         struct vmop_err *err)
{
    const struct adm_vm *a = arg;
    if (!a->images || !a->cimages)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "no image caches");
    return image_lookup(a->images, a->cimages, ns, image_name, ret_kind, ret_name, err);
}

/* The namespace's binding's defaultNetwork into buf ("" when there is not exactly one binding:
 * no arbitrary pick, as the controller). */
static void default_network(const struct adm_vm *a, const char *ns, char *buf, size_t size)
{
    struct kube_obj **objs = NULL;
    size_t n = 0;
    buf[0] = '\0';
    if (!a->bindings || !ns ||
        kube_informer_by_index(a->bindings, "ns", ns, &objs, &n, NULL) != VMOP_OK)
        return;
    if (n == 1) {
        struct api_binding *b = NULL;
        if (api_binding_parse(kube_obj_json(objs[0]), &b, NULL) == VMOP_OK && b->default_network)
            snprintf(buf, size, "%s", b->default_network);
        api_binding_free(b);
    }
    kube_objs_free(objs, n);
}

vmop_rc adm_vm_mutate(void *ud, const struct wh_admission_request *req,
                      struct wh_admission_response *resp, struct vmop_err *err)
{
    const struct adm_vm *a = ud;
    struct api_vm *vm = NULL, *old = NULL;
    struct api_vm_default_ctx dctx;
    cJSON *mutated = NULL, *patch = NULL;
    char net[API_NAME_MAX];
    unsigned changed = 0;
    vmop_rc rc;

    if ((req->op != WH_OP_CREATE && req->op != WH_OP_UPDATE) || !req->object ||
        (req->sub_resource && *req->sub_resource))
        return VMOP_OK;
    /* an object that does not parse is left to validation (and the schema) to refuse */
    if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(req->object, "spec")) ||
        api_vm_parse(req->object, &vm, NULL) != VMOP_OK)
        return VMOP_OK;
    if (req->old_object && api_vm_parse(req->old_object, &old, NULL) != VMOP_OK)
        old = NULL;
    memset(&dctx, 0, sizeof(dctx));
    dctx.random_bytes = random_cb;
    dctx.lookup_image = lookup_cb;
    dctx.image_arg = (void *)a;
    default_network(a, req->namespace_, net, sizeof(net));
    dctx.default_network = net[0] ? net : NULL;
    clock_gettime(CLOCK_REALTIME, &dctx.now);
    rc = api_vm_default(vm, old, &dctx, &changed, NULL, err);
    if (rc == VMOP_OK && changed)
        rc = api_vm_to_json(vm, &mutated, err);
    if (rc == VMOP_OK && mutated)
        rc = wh_patch_diff(req->object, mutated, &patch, err);
    if (rc == VMOP_OK && patch)
        wh_admission_set_patch(resp, patch);
    cJSON_Delete(mutated);
    api_vm_free(old);
    api_vm_free(vm);
    return rc;
}
