/* adm_vm.c: the VirtualMachine mutating webhook (see adm_vm.h). */
#include "adm_vm.h"
#include "adm_hub.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "api_admin.h"
#include "api_class.h"
#include "api_ferr.h"
#include "api_convert.h"
#include "api_json.h"
#include "api_vm.h"
#include "image_lookup.h"
#include "kube_meta.h"
#include "vbuf.h"
#include "wh_limits.h"
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

/* The namespace's binding (NULL when there is not exactly one: no arbitrary pick, as the
 * controller); api_binding_free() it. */
static struct api_binding *binding_of(const struct adm_vm *a, const char *ns)
{
    struct kube_obj **objs = NULL;
    struct api_binding *b = NULL;
    size_t n = 0;
    if (!a->bindings || !ns || !*ns ||
        kube_informer_by_index(a->bindings, "ns", ns, &objs, &n, NULL) != VMOP_OK)
        return NULL;
    if (n == 1 && api_binding_parse(kube_obj_json(objs[0]), &b, NULL) != VMOP_OK)
        b = NULL;
    kube_objs_free(objs, n);
    return b;
}

static void admit_ctx(const struct adm_vm *a, const struct wh_admission_request *req,
                      const struct api_binding *b, struct api_admit_ctx *ctx)
{
    struct api_user u = {.username = req->username,
                         .groups = (const char *const *)req->groups,
                         .n_groups = req->n_groups};
    memset(ctx, 0, sizeof(*ctx));
    ctx->privileged = api_admit_is_privileged(&u, &a->priv);
    ctx->binding = b;
}

/* Denies resp with fe's errors as VM Operator words them (403, as its webhooks' Denied). */
static vmop_rc deny(struct wh_admission_response *resp, const struct api_ferrs *fe,
                    struct vmop_err *err)
{
    struct vbuf msg;
    vmop_rc rc;
    vbuf_init(&msg, WH_MAX_MESSAGE);
    api_admit_denial(fe, &msg);
    rc = wh_admission_deny(resp, 403, "Forbidden",
                           vbuf_error(&msg) ? "the request is invalid" : vbuf_str(&msg));
    vbuf_free(&msg);
    return rc == VMOP_OK ? VMOP_OK : vmop_fail(err, rc, "out of memory");
}

/* 1 (with the error in fe) when a create names an imageName that resolves to no image or to
 * several, as VM Operator's mutating webhook refuses it. Only once both image caches have synced:
 * until then nothing is refused (the controller reports VirtualMachineImageReady instead). */
static int image_unknown(const struct adm_vm *a, const struct wh_admission_request *req,
                         const struct api_vm *vm, vmop_rc image_rc, struct api_ferrs *fe)
{
    const char *name = vm->image_name && *vm->image_name ? vm->image_name : vm->image_ref;
    if (req->op != WH_OP_CREATE || !name || !*name || !a->images || !a->cimages ||
        !kube_informer_has_synced(a->images) || !kube_informer_has_synced(a->cimages))
        return 0; /* image_rc is a lookup's result only where one ran (else VMOP_OK) */
    if (image_rc == VMOP_E_NOT_FOUND)
        api_ferr_add(fe, API_FERR_INVALID, "spec.imageName",
                     "\"%.200s\": no VM image exists for \"%.200s\" in namespace or cluster scope",
                     name, name);
    else if (image_rc == VMOP_E_EXISTS)
        api_ferr_add(fe, API_FERR_INVALID, "spec.imageName",
                     "\"%.200s\": multiple VM images exist for \"%.200s\" in namespace and "
                     "cluster scope",
                     name, name);
    return fe->n > 0;
}

/* The finalizer on obj's metadata md unless it has it: -1 when out of memory, else whether it
 * changed. */
static int ensure_finalizer(cJSON *md)
{
    cJSON *fins = cJSON_GetObjectItemCaseSensitive(md, "finalizers"), *it;
    cJSON_ArrayForEach(it, fins)
    {
        if (cJSON_IsString(it) && !strcmp(it->valuestring, ADM_VM_FINALIZER))
            return 0;
    }
    if (!cJSON_IsArray(fins)) {
        cJSON_DeleteItemFromObjectCaseSensitive(md, "finalizers");
        fins = cJSON_AddArrayToObject(md, "finalizers");
    }
    return fins && cJSON_AddItemToArray(fins, cJSON_CreateString(ADM_VM_FINALIZER)) ? 1 : -1;
}

/* Annotation key = val on metadata md: 0 when out of memory. */
static int set_annotation(cJSON *md, const char *key, const char *val)
{
    cJSON *ann = cJSON_GetObjectItemCaseSensitive(md, "annotations");
    if (!cJSON_IsObject(ann)) {
        cJSON_DeleteItemFromObjectCaseSensitive(md, "annotations");
        ann = cJSON_AddObjectToObject(md, "annotations");
    }
    return ann && cJSON_AddStringToObject(ann, key, val);
}

/* On create, what the VM controller's first pass would otherwise write in a PUT of its own (one
 * write, its conversions and a watch round trip less per VM): the finalizer and, when the class
 * is in the cache, the last-resized-vm-class annotation of the class the VM will be created with.
 * Nothing for a VM created paused (the controller leaves a paused VM alone, finalizer included).
 * A server-side re-apply of a manifest that names neither keeps both (tests/e2e: ssa).
 * obj is the object as it will be admitted; -1 when out of memory, else whether it changed. */
static int add_controller_metadata(const struct adm_vm *a, const struct wh_admission_request *req,
                                   cJSON *obj)
{
    cJSON *md = api_json_ensure_obj(obj, "metadata");
    const cJSON *ann = md ? api_jget(md, "annotations") : NULL;
    const char *cls_name = api_jstr(api_jget(obj, "spec"), "className");
    char key[2 * API_NAME_MAX + 2], val[600];
    struct kube_obj *cls;
    int changed;
    if (!md)
        return -1;
    if (req->op != WH_OP_CREATE || api_jget(ann, ADM_VM_PAUSED_ANNOT))
        return 0;
    if ((changed = ensure_finalizer(md)) < 0)
        return -1;
    if (api_jget(ann, API_ANNOT_LAST_RESIZED) || !a->classes || !cls_name || !*cls_name ||
        !req->namespace_)
        return changed;
    snprintf(key, sizeof(key), "%s/%s", req->namespace_, cls_name);
    if (!(cls = kube_informer_get(a->classes, key)))
        return changed;
    api_class_resized_value(kube_obj_json(cls), cls_name, val, sizeof(val));
    kube_obj_unref(cls);
    return set_annotation(md, API_ANNOT_LAST_RESIZED, val) ? 1 : -1;
}

/* The request seen in the hub version (adm_hub.h): *ok = 1 to go on with hub->view. A request
 * whose object does not convert is denied (*ok = 0), as the API server's conversion would have
 * failed it. adm_hub_free() hub in every case. */
static vmop_rc view_in_hub(const struct wh_admission_request *sent, struct adm_hub *hub,
                           struct wh_admission_response *resp, int *ok, struct vmop_err *err)
{
    struct vmop_err cerr = {0};
    char msg[VMOP_ERR_MSG_MAX + 64];

    *ok = 0;
    if (adm_hub_request(sent, hub, &cerr) == VMOP_OK) {
        *ok = 1;
        return VMOP_OK;
    }
    if (cerr.rc == VMOP_E_NOMEM)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    snprintf(msg, sizeof(msg), "the object does not convert to %s: %s", API_CONVERT_HUB, cerr.msg);
    if (wh_admission_deny(resp, 400, "BadRequest", msg) != VMOP_OK)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    return VMOP_OK;
}

vmop_rc adm_vm_mutate(void *ud, const struct wh_admission_request *sent,
                      struct wh_admission_response *resp, struct vmop_err *err)
{
    const struct adm_vm *a = ud;
    const struct wh_admission_request *req = sent;
    struct api_vm *vm = NULL, *old = NULL;
    struct api_vm_default_ctx dctx;
    cJSON *mutated = NULL, *patch = NULL;
    struct api_binding *b = NULL;
    struct api_admit_ctx ctx;
    struct api_ferrs fe = {0};
    struct adm_hub hub;
    unsigned changed = 0;
    int ok;
    vmop_rc rc, image_rc = VMOP_OK;

    if ((sent->op != WH_OP_CREATE && sent->op != WH_OP_UPDATE) || !sent->object ||
        (sent->sub_resource && *sent->sub_resource))
        return VMOP_OK;
    /* the rules below read the hub (v1alpha6), whatever version the request came in */
    if ((rc = view_in_hub(sent, &hub, resp, &ok, err)) != VMOP_OK || !ok)
        goto out;
    req = &hub.view;
    /* an object that does not parse is left to validation (and the schema) to refuse */
    if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(req->object, "spec")) ||
        api_vm_parse(req->object, &vm, NULL) != VMOP_OK)
        goto out;
    if (req->old_object && api_vm_parse(req->old_object, &old, NULL) != VMOP_OK)
        old = NULL;
    b = binding_of(a, req->namespace_);
    /* the request as sent: a user's own instanceUUID / biosUUID, nextRestartTime */
    admit_ctx(a, req, b, &ctx);
    api_vm_admit_request(req->old_object, req->object, &ctx, &fe);
    if (fe.n) {
        rc = deny(resp, &fe, err);
        goto out;
    }
    memset(&dctx, 0, sizeof(dctx));
    dctx.random_bytes = random_cb;
    dctx.lookup_image = lookup_cb;
    dctx.image_arg = (void *)a;
    dctx.default_network = b && b->default_network ? b->default_network : NULL;
    dctx.resolve_kindless_image = req->op == WH_OP_CREATE;
    clock_gettime(CLOCK_REALTIME, &dctx.now);
    rc = api_vm_default(vm, old, &dctx, &changed, &image_rc, err);
    if (rc == VMOP_OK && image_unknown(a, req, vm, image_rc, &fe)) {
        rc = deny(resp, &fe, err);
        goto out;
    }
    if (rc == VMOP_OK && (changed || req->op == WH_OP_CREATE))
        rc = api_vm_to_json(vm, &mutated, err);
    if (rc == VMOP_OK && mutated && add_controller_metadata(a, req, mutated) < 0)
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    if (rc == VMOP_OK && mutated) /* a patch of the object as sent, in its version */
        rc = adm_hub_patch(&hub, sent, mutated, &patch, err);
    if (rc == VMOP_OK && patch && !patch->child) {
        cJSON_Delete(patch); /* nothing to change */
        patch = NULL;
    }
    if (rc == VMOP_OK && patch)
        wh_admission_set_patch(resp, patch);
out:
    api_binding_free(b);
    cJSON_Delete(mutated);
    api_vm_free(old);
    api_vm_free(vm);
    adm_hub_free(&hub);
    return rc;
}

vmop_rc adm_validate(void *ud, const struct wh_admission_request *sent,
                     struct wh_admission_response *resp, struct vmop_err *err)
{
    const struct adm_vm *a = ud;
    const struct wh_admission_request *req;
    enum api_admit_kind kind = api_admit_kind_parse(sent->kind_group, sent->kind);
    enum api_admit_op op;
    struct api_binding *b = NULL;
    struct api_admit_ctx ctx;
    struct api_ferrs fe = {0};
    struct adm_hub hub;
    int ok;
    vmop_rc rc;

    if (sent->sub_resource && *sent->sub_resource)
        return VMOP_OK; /* status is the controllers' */
    if (sent->op == WH_OP_CREATE)
        op = API_ADMIT_CREATE;
    else if (sent->op == WH_OP_UPDATE)
        op = API_ADMIT_UPDATE;
    else
        return VMOP_OK;
    /* the rules read the hub (v1alpha6), whatever version the request came in */
    if ((rc = view_in_hub(sent, &hub, resp, &ok, err)) != VMOP_OK || !ok) {
        adm_hub_free(&hub);
        return rc;
    }
    req = &hub.view;
    if (kind == API_KIND_VM)
        b = binding_of(a, req->namespace_);
    admit_ctx(a, req, b, &ctx);
    api_admit_validate(kind, op, req->old_object, req->object, &ctx, &fe);
    if (fe.n)
        rc = deny(resp, &fe, err);
    api_binding_free(b);
    adm_hub_free(&hub);
    return rc;
}
