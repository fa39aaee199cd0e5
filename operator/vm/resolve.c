/* resolve.c: VirtualMachine + references -> desired vSphere configuration or conditions (pure).
 * See resolve.h for which condition and reason each problem gives. */
#include "resolve.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api_json.h"
#include "api_secret.h"
#include "api_quantity.h"
#include "guestinfo.h"
#include "vbuf.h"

/* ---- small helpers ------------------------------------------------------------------------------
 */

static struct rs_cond *cond_add(struct rs_result *r, const char *type, int present,
                                enum api_cond_status status, const char *reason, const char *fmt,
                                ...) __attribute__((format(printf, 6, 7)));

static struct rs_cond *cond_add(struct rs_result *r, const char *type, int present,
                                enum api_cond_status status, const char *reason, const char *fmt,
                                ...)
{
    struct rs_cond *c;
    va_list ap;
    if (r->n_conds >= RS_MAX_CONDS)
        return NULL;
    c = &r->conds[r->n_conds++];
    memset(c, 0, sizeof(*c));
    c->type = type;
    c->present = present;
    c->status = status;
    snprintf(c->reason, sizeof(c->reason), "%s", reason ? reason : "");
    if (fmt) {
        va_start(ap, fmt);
        vsnprintf(c->message, sizeof(c->message), fmt, ap);
        va_end(ap);
    }
    return c;
}

#define cond_true(r, type)   cond_add((r), (type), 1, API_COND_TRUE, "", NULL)
#define cond_absent(r, type) cond_add((r), (type), 0, API_COND_UNKNOWN, "", NULL)

const struct rs_cond *rs_result_cond(const struct rs_result *r, const char *type)
{
    for (size_t i = 0; i < r->n_conds; i++)
        if (strcmp(r->conds[i].type, type) == 0)
            return &r->conds[i];
    return NULL;
}

static int nonempty(const char *s)
{
    return s && *s;
}

/* ---- references ---------------------------------------------------------------------------------
 */

static void add_secret(struct rs_refs *r, const char *name)
{
    if (!nonempty(name))
        return;
    for (size_t i = 0; i < r->n_secrets; i++)
        if (strcmp(r->secret_names[i], name) == 0)
            return;
    if (r->n_secrets < sizeof(r->secret_names) / sizeof(r->secret_names[0]))
        r->secret_names[r->n_secrets++] = name;
}

static const cJSON *cloud_init_spec(const struct api_vm *vm)
{
    return api_jpath(vm->obj, "spec", "bootstrap", "cloudInit", NULL);
}

void rs_references(const struct api_vm *vm, struct rs_refs *ret_refs)
{
    const cJSON *ci = cloud_init_spec(vm), *cc, *it;
    memset(ret_refs, 0, sizeof(*ret_refs));
    ret_refs->class_name = vm->class_name;
    ret_refs->image_kind = nonempty(vm->image_kind) ? vm->image_kind : API_KIND_VMI;
    ret_refs->image_name = vm->image_ref;
    ret_refs->storage_class = vm->storage_class;
    add_secret(ret_refs, api_jstr(api_jpath(ci, "rawCloudConfig", "name", NULL, NULL), NULL));
    cc = api_jpath(ci, "cloudConfig", NULL, NULL, NULL);
    cJSON_ArrayForEach(it, api_jpath(cc, "users", NULL, NULL, NULL))
    {
        add_secret(ret_refs, api_jstr(api_jpath(it, "hashed_passwd", "name", NULL, NULL), NULL));
        add_secret(ret_refs, api_jstr(api_jpath(it, "passwd", "name", NULL, NULL), NULL));
    }
    cJSON_ArrayForEach(it, api_jpath(cc, "write_files", NULL, NULL, NULL))
        add_secret(ret_refs, api_jstr(api_jpath(it, "content", "name", NULL, NULL), NULL));
}

/* ---- secrets ------------------------------------------------------------------------------------
 */

/* Value of `key` in a Secret (api_secret.h). *ret must be gi_free_secret()d. VMOP_E_NOT_FOUND when
 * the key is absent. */
static vmop_rc secret_value(const cJSON *secret, const char *key, char **ret, size_t *ret_len,
                            struct vmop_err *err)
{
    return api_secret_value(secret, key, 0, ret, ret_len, err);
}

/* ---- the checks, one per condition -------------------------------------------------------------
 */

static int check_placement(const struct rs_inputs *in, struct rs_result *r)
{
    const struct api_binding *b = in->binding;
    struct api_ferrs fe = {0};
    if (in->binding_conflict) {
        cond_add(
            r, COND_PLACEMENT_READY, 1, API_COND_FALSE, "MultipleBindings",
            "namespace \"%s\" has more than one NamespaceBinding (%s): vmop does not pick one; "
            "an administrator must delete all but one. Nothing is created, changed or "
            "deleted in vCenter for this namespace until then",
            in->vm->namespace_ ? in->vm->namespace_ : "", in->binding_conflict);
        return 0;
    }
    if (!b) {
        cond_add(r, COND_PLACEMENT_READY, 1, API_COND_FALSE, "NotReady",
                 "namespace \"%s\" is not bound to a vCenter: an administrator must create a "
                 "NamespaceBinding for it",
                 in->vm->namespace_ ? in->vm->namespace_ : "");
        return 0;
    }
    api_binding_validate(b, &fe);
    if (fe.n) {
        struct vbuf msg;
        vbuf_init(&msg, RS_MSG_MAX);
        api_ferrs_format(&fe, &msg);
        cond_add(r, COND_PLACEMENT_READY, 1, API_COND_FALSE, "Invalid",
                 "NamespaceBinding \"%s\" is invalid: %s", b->name ? b->name : "",
                 vbuf_error(&msg) ? "many errors" : vbuf_str(&msg));
        vbuf_free(&msg);
        return 0;
    }
    r->desired.endpoint = b->endpoint;
    r->desired.datacenter = b->datacenter;
    r->desired.resource_pool = b->resource_pool;
    r->desired.folder = b->vm_folder;
    r->desired.datastore = b->datastore;
    cond_true(r, COND_PLACEMENT_READY);
    return 1;
}

/* Sizes class c (named name) by the placement cluster's lowest host CPU MHz into d->size: 1, or 0
 * with VirtualMachineClassReady's verdict in *cond (NULL: not recorded): Unknown
 * HostInfoUnavailable while the MHz is not known (<= 0), False Invalid when the class cannot be
 * applied. Shared by rs_resolve() and rs_size(). */
static int size_class(const struct api_class *c, const char *name, int64_t host_mhz,
                      struct rs_desired *d, struct rs_cond *cond)
{
    struct vmop_err serr = {0};
    if (host_mhz <= 0) {
        if (cond) {
            cond->status = API_COND_UNKNOWN;
            snprintf(cond->reason, sizeof(cond->reason), "HostInfoUnavailable");
            snprintf(cond->message, sizeof(cond->message),
                     "the CPU speed of the placement cluster's hosts is not known yet");
        }
        return 0;
    }
    if (api_class_sizing(c, host_mhz, &d->size, &serr)) {
        if (cond) {
            cond->status = API_COND_FALSE;
            snprintf(cond->reason, sizeof(cond->reason), "Invalid");
            snprintf(cond->message, sizeof(cond->message),
                     "VirtualMachineClass \"%s\" cannot be applied: %s", name, serr.msg);
        }
        return 0;
    }
    return 1;
}

static int check_class(const struct rs_inputs *in, struct rs_result *r)
{
    const struct api_vm *vm = in->vm;
    const struct api_class *c = in->cls;
    struct api_ferrs fe = {0};

    if (!nonempty(vm->class_name)) {
        cond_add(r, COND_CLASS_READY, 1, API_COND_FALSE, "NotFound", "spec.className is not set");
        return 0;
    }
    if (in->binding && !api_binding_offers_class(in->binding, vm->class_name)) {
        cond_add(r, COND_CLASS_READY, 1, API_COND_FALSE, "Forbidden",
                 "VirtualMachineClass \"%s\" is not offered in namespace \"%s\"", vm->class_name,
                 vm->namespace_ ? vm->namespace_ : "");
        return 0;
    }
    if (!c) {
        cond_add(r, COND_CLASS_READY, 1, API_COND_FALSE, "NotFound",
                 "VirtualMachineClass \"%s\" not found in namespace \"%s\"", vm->class_name,
                 vm->namespace_ ? vm->namespace_ : "");
        return 0;
    }
    api_class_validate(c, &fe);
    if (fe.n) {
        struct vbuf msg;
        vbuf_init(&msg, RS_MSG_MAX);
        api_ferrs_format(&fe, &msg);
        cond_add(r, COND_CLASS_READY, 1, API_COND_FALSE, "Invalid",
                 "VirtualMachineClass \"%s\" is invalid: %s", vm->class_name,
                 vbuf_error(&msg) ? "many errors" : vbuf_str(&msg));
        vbuf_free(&msg);
        return 0;
    }
    if (!size_class(c, vm->class_name, in->min_host_mhz, &r->desired,
                    cond_true(r, COND_CLASS_READY)))
        return 0;
    r->desired.class_name = vm->class_name;
    return 1;
}

/* Ready condition of an image object: 1 True, 0 otherwise (with its reason/message). */
static int image_ready(const struct api_image *img, const char **ret_reason, const char **ret_msg)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, api_jpath(img->obj, "status", "conditions", NULL, NULL))
    {
        const char *type = api_jstr(cJSON_GetObjectItemCaseSensitive(it, "type"), NULL);
        const char *status = api_jstr(cJSON_GetObjectItemCaseSensitive(it, "status"), NULL);
        if (!type || strcmp(type, "Ready") != 0)
            continue;
        *ret_reason = api_jstr(cJSON_GetObjectItemCaseSensitive(it, "reason"), NULL);
        *ret_msg = api_jstr(cJSON_GetObjectItemCaseSensitive(it, "message"), NULL);
        return status && strcmp(status, "True") == 0;
    }
    *ret_reason = NULL;
    *ret_msg = "the image has no Ready condition yet";
    return 0;
}

static int check_image(const struct rs_inputs *in, struct rs_result *r)
{
    const struct api_vm *vm = in->vm;
    const struct api_image *img = in->image;
    const char *kind = nonempty(vm->image_kind) ? vm->image_kind : API_KIND_VMI;
    const char *reason = NULL, *msg = NULL;

    if (!nonempty(vm->image_ref)) {
        if (nonempty(vm->image_name))
            cond_add(r, COND_IMAGE_READY, 1, API_COND_FALSE, "NotFound",
                     "no VirtualMachineImage or ClusterVirtualMachineImage is named or displayed "
                     "as \"%s\" (or the display name is not unique)",
                     vm->image_name);
        else
            cond_add(r, COND_IMAGE_READY, 1, API_COND_FALSE, "NotSet",
                     "neither spec.image nor spec.imageName is set");
        return 0;
    }
    if (strcmp(kind, API_KIND_VMI) && strcmp(kind, API_KIND_CVMI)) {
        cond_add(r, COND_IMAGE_READY, 1, API_COND_FALSE, "UnknownKind",
                 "spec.image.kind \"%s\" is not VirtualMachineImage or ClusterVirtualMachineImage",
                 kind);
        return 0;
    }
    if (!img) {
        cond_add(r, COND_IMAGE_READY, 1, API_COND_FALSE, "NotFound", "%s \"%s\" not found", kind,
                 vm->image_ref);
        return 0;
    }
    if (!image_ready(img, &reason, &msg) || !nonempty(img->provider_item_id)) {
        cond_add(r, COND_IMAGE_READY, 1, API_COND_FALSE, nonempty(reason) ? reason : "NotReady",
                 "%s \"%s\" is not ready%s%s", kind, vm->image_ref, msg ? ": " : "",
                 msg ? msg : "");
        return 0;
    }
    r->desired.library_item_id = img->provider_item_id;
    r->desired.image_name = img->display_name ? img->display_name : img->name;
    r->desired.image_type =
        (img->type && (strcmp(img->type, "OVF") == 0 || strcmp(img->type, "ovf") == 0))
            ? RS_IMAGE_OVF
            : RS_IMAGE_VM_TEMPLATE;
    cond_true(r, COND_IMAGE_READY);
    return 1;
}

static int check_storage(const struct rs_inputs *in, struct rs_result *r)
{
    const struct api_vm *vm = in->vm;
    if (!nonempty(vm->storage_class)) {
        cond_add(r, COND_STORAGE_READY, 1, API_COND_FALSE, "StorageClassRequired",
                 "spec.storageClass is required");
        return 0;
    }
    if (in->binding && !api_binding_allows_storage_class(in->binding, vm->storage_class)) {
        cond_add(r, COND_STORAGE_READY, 1, API_COND_FALSE, "Forbidden",
                 "StorageClass \"%s\" is not allowed in namespace \"%s\"", vm->storage_class,
                 vm->namespace_ ? vm->namespace_ : "");
        return 0;
    }
    if (!in->storage_class) {
        cond_add(r, COND_STORAGE_READY, 1, API_COND_FALSE, "NotFound",
                 "StorageClass \"%s\" not found", vm->storage_class);
        return 0;
    }
    r->desired.storage_class = vm->storage_class;
    r->desired.storage_policy_id =
        api_jstr(api_jpath(in->storage_class, "parameters", "storagePolicyID", NULL, NULL), NULL);
    cond_true(r, COND_STORAGE_READY);
    return 1;
}

/* The pool address of interface iface, or NULL. */
static const struct rs_pool_addr *pool_addr_of(const struct rs_inputs *in, const char *iface)
{
    for (size_t i = 0; iface && i < in->n_pool_addrs; i++)
        if (in->pool_addrs[i].iface && !strcmp(in->pool_addrs[i].iface, iface))
            return &in->pool_addrs[i];
    return NULL;
}

static void set_nic(const struct rs_inputs *in, struct rs_nic *d, const struct api_vm_nic *n,
                    const char *net, const char *pg)
{
    const struct rs_pool_addr *pa = pool_addr_of(in, n->name);
    d->name = n->name;
    d->network = net;
    d->port_group = pg;
    d->spec = n;
    if (pa) {
        d->pool_cidr = pa->cidr;
        d->pool_gateway4 = nonempty(pa->gateway4) ? pa->gateway4 : NULL;
        d->pool_nameservers = pa->nameservers;
        d->n_pool_nameservers = pa->n_nameservers;
        d->pool_search = pa->search;
        d->n_pool_search = pa->n_search;
    }
}

static int check_network(const struct rs_inputs *in, struct rs_result *r)
{
    const struct api_vm *vm = in->vm;
    if (vm->network_disabled || vm->n_nics == 0) {
        cond_absent(r, COND_NETWORK_READY);
        return 1;
    }
    for (size_t i = 0; i < vm->n_nics; i++) {
        const struct api_vm_nic *n = &vm->nics[i];
        const char *net = nonempty(n->network_name)
                              ? n->network_name
                              : (in->binding ? in->binding->default_network : NULL);
        const char *pg = in->binding && net ? api_binding_port_group(in->binding, net) : NULL;
        if (!nonempty(net)) {
            cond_add(r, COND_NETWORK_READY, 1, API_COND_FALSE, "NotReady",
                     "interface \"%s\" names no network and namespace \"%s\" has no default "
                     "network",
                     n->name ? n->name : "", vm->namespace_ ? vm->namespace_ : "");
            return 0;
        }
        if (!pg) {
            cond_add(r, COND_NETWORK_READY, 1, API_COND_FALSE, "NotReady",
                     "network \"%s\" of interface \"%s\" is not available in namespace \"%s\"", net,
                     n->name ? n->name : "", vm->namespace_ ? vm->namespace_ : "");
            return 0;
        }
        set_nic(in, &r->desired.nics[r->desired.n_nics++], n, net, pg);
    }
    if (in->pool_reason) {
        cond_add(r, COND_NETWORK_READY, 1, API_COND_FALSE, in->pool_reason, "%s",
                 in->pool_message ? in->pool_message : "");
        return 0;
    }
    cond_true(r, COND_NETWORK_READY);
    return 1;
}

/* Replaces {name,key} Secret selectors at obj[member] with the secret's value. 0 on success; on
 * failure a BootstrapReady condition is added. */
static int inline_secret_ref(const struct rs_inputs *in, struct rs_result *r, cJSON *obj,
                             const char *member, const char *field, vmop_rc *rc,
                             struct vmop_err *err)
{
    cJSON *sel = cJSON_GetObjectItemCaseSensitive(obj, member);
    const char *name, *key;
    const cJSON *secret;
    char *val = NULL;
    size_t len = 0;
    vmop_rc vrc;
    struct vmop_err verr = {0};
    if (!cJSON_IsObject(sel))
        return 0;
    name = api_jstr(cJSON_GetObjectItem(sel, "name"), NULL);
    key = api_jstr(cJSON_GetObjectItem(sel, "key"), NULL);
    secret = nonempty(name) && in->get_secret ? in->get_secret(in->secret_arg, name) : NULL;
    if (!secret) {
        cond_add(r, COND_BOOTSTRAP_READY, 1, API_COND_FALSE, "NotFound",
                 "Secret \"%s\" referenced by %s not found", name ? name : "", field);
        return -1;
    }
    vrc = secret_value(secret, nonempty(key) ? key : member, &val, &len, &verr);
    if (vrc == VMOP_E_NOT_FOUND) {
        cond_add(r, COND_BOOTSTRAP_READY, 1, API_COND_FALSE, "RequiredKeyNotFound",
                 "Secret \"%s\" has no key \"%s\" (referenced by %s)", name,
                 nonempty(key) ? key : member, field);
        return -1;
    }
    if (vrc) {
        cond_add(r, COND_BOOTSTRAP_READY, 1, API_COND_FALSE, "Invalid",
                 "Secret \"%s\" key \"%s\": %s", name, nonempty(key) ? key : member, verr.msg);
        return -1;
    }
    if (!cJSON_ReplaceItemInObjectCaseSensitive(obj, member, cJSON_CreateString(val)))
        *rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    gi_free_secret(val, len);
    return *rc ? -1 : 0;
}

/* Typed cloudConfig -> "#cloud-config" document (JSON is YAML). Secret selectors are inlined. */
static int cloud_config_userdata(const struct rs_inputs *in, struct rs_result *r, const cJSON *cc,
                                 vmop_rc *rc, struct vmop_err *err)
{
    cJSON *doc = cJSON_Duplicate(cc, 1), *it, *users, *def;
    char *text = NULL;
    struct vbuf b;
    int ok = 0;
    if (!doc) {
        *rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        return 0;
    }
    users = cJSON_GetObjectItemCaseSensitive(doc, "users");
    cJSON_ArrayForEach(it, users)
    {
        if (inline_secret_ref(in, r, it, "hashed_passwd", "spec.bootstrap.cloudInit.cloudConfig",
                              rc, err) ||
            inline_secret_ref(in, r, it, "passwd", "spec.bootstrap.cloudInit.cloudConfig", rc, err))
            goto out;
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "write_files"))
    {
        if (inline_secret_ref(in, r, it, "content", "spec.bootstrap.cloudInit.cloudConfig", rc,
                              err))
            goto out;
    }
    def = cJSON_DetachItemFromObjectCaseSensitive(doc, "defaultUserEnabled");
    if (cJSON_IsTrue(def)) {
        if (!users)
            users = cJSON_AddArrayToObject(doc, "users");
        cJSON_InsertItemInArray(users, 0, cJSON_CreateString("default"));
    }
    cJSON_Delete(def);
    text = cJSON_PrintUnformatted(doc);
    if (!text) {
        *rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    vbuf_init(&b, GI_MAX_USERDATA);
    vbuf_addf(&b, "#cloud-config\n%s\n", text);
    if (vbuf_error(&b)) {
        cond_add(r, COND_BOOTSTRAP_READY, 1, API_COND_FALSE, "Invalid",
                 "spec.bootstrap.cloudInit.cloudConfig is larger than %zu bytes", GI_MAX_USERDATA);
        vbuf_free(&b);
        goto out;
    }
    r->desired.userdata_len = b.len;
    r->desired.userdata = vbuf_take(&b);
    ok = 1;
out:
    if (text)
        gi_free_secret(text, strlen(text));
    cJSON_Delete(doc);
    return ok;
}

static int check_bootstrap(const struct rs_inputs *in, struct rs_result *r, vmop_rc *rc,
                           struct vmop_err *err)
{
    const struct api_vm *vm = in->vm;
    const cJSON *ci = cloud_init_spec(vm);
    struct rs_desired *d = &r->desired;

    if (!vm->bootstrap) {
        cond_absent(r, COND_BOOTSTRAP_READY);
        return 1;
    }
    if (!(vm->bootstrap & API_BOOT_CLOUDINIT)) {
        cond_add(r, COND_BOOTSTRAP_READY, 1, API_COND_FALSE, "NotSupported",
                 "only spec.bootstrap.cloudInit is supported by this operator (LinuxPrep, Sysprep "
                 "and vAppConfig are not)");
        return 0;
    }
    d->cloud_init = 1;
    d->instance_id =
        nonempty(vm->cloudinit_instance_id) ? vm->cloudinit_instance_id : vm->bios_uuid;
    snprintf(d->hostname, sizeof(d->hostname), "%s%s%s",
             nonempty(vm->host_name) ? vm->host_name : (vm->name ? vm->name : ""),
             nonempty(vm->domain_name) ? "." : "",
             nonempty(vm->domain_name) ? vm->domain_name : "");
    d->ssh_keys = api_jpath(ci, "sshAuthorizedKeys", NULL, NULL, NULL);

    /* v1alpha1's vmMetadata.configMapName converts to rawCloudConfig plus this annotation (as VM
     * Operator's conversion): the data is in a ConfigMap, which vmop does not read */
    if (api_jpath(vm->obj, "metadata", "annotations", RS_V1A1_CONFIGMAP_ANNOTATION, NULL)) {
        cond_add(r, COND_BOOTSTRAP_READY, 1, API_COND_FALSE, "NotSupported",
                 "vmMetadata.configMapName (v1alpha1) is not supported by this operator: put the "
                 "data in a Secret and name it in vmMetadata.secretName (or "
                 "spec.bootstrap.cloudInit.rawCloudConfig)");
        return 0;
    }
    if (vm->has_raw_cloud_config) {
        const char *name = api_jstr(api_jpath(ci, "rawCloudConfig", "name", NULL, NULL), NULL);
        const char *key = api_jstr(api_jpath(ci, "rawCloudConfig", "key", NULL, NULL), NULL);
        const char *tried[] = {key, "user-data", "value"};
        const cJSON *secret =
            nonempty(name) && in->get_secret ? in->get_secret(in->secret_arg, name) : NULL;
        char *raw = NULL;
        size_t raw_len = 0;
        vmop_rc vrc = VMOP_E_NOT_FOUND;
        struct vmop_err verr = {0};
        if (!secret) {
            cond_add(r, COND_BOOTSTRAP_READY, 1, API_COND_FALSE, "NotFound",
                     "Secret \"%s\" (spec.bootstrap.cloudInit.rawCloudConfig) not found in "
                     "namespace \"%s\"",
                     name ? name : "", vm->namespace_ ? vm->namespace_ : "");
            return 0;
        }
        for (size_t i = 0; i < 3 && vrc == VMOP_E_NOT_FOUND; i++)
            if (nonempty(tried[i]))
                vrc = secret_value(secret, tried[i], &raw, &raw_len, &verr);
        if (vrc == VMOP_E_NOT_FOUND) {
            /* the keys tried, each once: the given key, then the fallbacks */
            int extra = nonempty(key) && strcmp(key, "user-data") && strcmp(key, "value");
            cond_add(r, COND_BOOTSTRAP_READY, 1, API_COND_FALSE, "RequiredKeyNotFound",
                     "Secret \"%s\" has none of the keys %s%s%s\"user-data\", \"value\"", name,
                     extra ? "\"" : "", extra ? key : "", extra ? "\", " : "");
            return 0;
        }
        if (vrc == VMOP_OK)
            vrc = gi_userdata_normalize(raw, raw_len, &d->userdata, &d->userdata_len, &verr);
        gi_free_secret(raw, raw_len);
        if (vrc == VMOP_E_NOMEM) {
            *rc = vmop_fail(err, vrc, "out of memory");
            return 0;
        }
        if (vrc) {
            cond_add(r, COND_BOOTSTRAP_READY, 1, API_COND_FALSE, "Invalid",
                     "user data in Secret \"%s\" cannot be used: %s", name, verr.msg);
            return 0;
        }
    } else if (vm->has_cloud_config) {
        if (!cloud_config_userdata(in, r, api_jpath(ci, "cloudConfig", NULL, NULL, NULL), rc, err))
            return 0;
    }
    cond_true(r, COND_BOOTSTRAP_READY);
    return 1;
}

/* ---- fields beyond the prerequisites (issue 11) ------------------------------------------------
 * Each accepted field is either put into rs_desired or named in VirtualMachineFieldsSupported.
 */

/* The notes of VirtualMachineFieldsSupported: what is not acted on (NotSupported) and what only a
 * cloud-init bootstrap could bring to the guest (CloudInitRequired). */
struct rs_notes {
    struct vbuf unsupported, cloudinit;
};

static void note_add(struct vbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note_add(struct vbuf *b, const char *fmt, ...)
{
    char one[RS_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(one, sizeof(one), fmt, ap);
    va_end(ap);
    vbuf_addf(b, "%s%s", b->len ? "; " : "", one);
}

#define NOTE(n, ...)    note_add(&(n)->unsupported, __VA_ARGS__)
#define NOTE_CI(n, ...) note_add(&(n)->cloudinit, __VA_ARGS__)

static int jbool(const cJSON *o, enum rs_tri *ret)
{
    if (!cJSON_IsBool(o))
        return 0;
    *ret = cJSON_IsTrue(o) ? RS_YES : RS_NO;
    return 1;
}

/* A Go duration ("10s", "1m30s", "500ms", "1.5s") in whole milliseconds. 0 = not a duration. */
static int parse_duration_ms(const char *s, long long *ret)
{
    static const struct {
        const char *unit;
        double ms;
    } units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"\xc2\xb5s", 1e-3}, {"ms", 1},
                 {"s", 1e3},   {"m", 60e3},  {"h", 3600e3}};
    double total = 0;
    if (!nonempty(s))
        return 0;
    if (strcmp(s, "0") == 0) {
        *ret = 0;
        return 1;
    }
    while (*s) {
        char *end;
        double v;
        size_t best = 0, bi = 0;
        if (!((*s >= '0' && *s <= '9') || *s == '.'))
            return 0;
        v = strtod(s, &end);
        if (end == s || v < 0)
            return 0;
        s = end;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t n = strlen(units[i].unit);
            if (strncmp(s, units[i].unit, n) == 0 && n > best) {
                best = n;
                bi = i;
            }
        }
        if (!best)
            return 0;
        total += v * units[bi].ms;
        s += best;
    }
    if (total > 1e15)
        return 0;
    *ret = (long long)total;
    return 1;
}

/* "vmx-19" -> 19, 0 when not that shape. */
static int hw_version_of(const char *v)
{
    char *end = NULL;
    long n;
    if (!v || strncmp(v, "vmx-", 4) != 0)
        return 0;
    n = strtol(v + 4, &end, 10);
    return end != v + 4 && *end == '\0' && n > 0 && n < 1000 ? (int)n : 0;
}

/* ExtraConfig keys vmop writes itself: a class may not set them. */
static int key_reserved(const char *k)
{
    return !strncmp(k, "guestinfo.", 10) || !strncmp(k, "vmservice.", 10) ||
           !strncmp(k, "vmop.", 5);
}

static int is_ethernet_type(const char *t)
{
    static const char *const types[] = {"VirtualE1000", "VirtualE1000e", "VirtualVmxnet2",
                                        "VirtualVmxnet3", "VirtualPCNet32"};
    for (size_t i = 0; t && i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(t, types[i]) == 0)
            return 1;
    return 0;
}

/* An OptionValue's value: a plain string, or govmomi's {"_typeName":"string","_value":"..."}. */
static const char *option_value(const cJSON *v)
{
    if (cJSON_IsString(v))
        return v->valuestring;
    return api_jstr(api_jget(v, "_value"), NULL);
}

/* The class's configSpec, merged as VM Operator does (vm-operator.md 5): numCPUs / memoryMB
 * (when spec.hardware lacks them) and cpuAllocation / memoryAllocation (when the policies lack
 * them) are in api_class_sizing(); here: version, guestId, firmware, changeTrackingEnabled,
 * extraConfig and the ethernet adapter types of deviceChange. Everything else is named. */
static void class_config_spec(const struct rs_inputs *in, struct rs_result *r, struct rs_notes *n)
{
    const cJSON *cs = in->cls->config_spec, *it;
    const char *cname = in->vm->class_name;
    struct rs_desired *d = &r->desired;
    size_t n_nic = 0, i = 0;
    static const char *const handled[] = {
        "_typeName",   "numCPUs", "memoryMB", "cpuAllocation",         "memoryAllocation",
        "version",     "guestId", "firmware", "changeTrackingEnabled", "extraConfig",
        "deviceChange"};

    if (!cJSON_IsObject(cs))
        return;
    cJSON_ArrayForEach(it, cs)
    {
        size_t k = 0;
        while (k < sizeof(handled) / sizeof(handled[0]) && strcmp(handled[k], it->string))
            k++;
        if (k == sizeof(handled) / sizeof(handled[0]))
            NOTE(n, "class %s: configSpec.%s", cname, it->string);
    }
    if (nonempty(api_jstr(api_jget(cs, "version"), NULL))) {
        int v = hw_version_of(api_jstr(api_jget(cs, "version"), NULL));
        if (!v)
            NOTE(n, "class %s: configSpec.version \"%.32s\" (not vmx-<n>)", cname,
                 api_jstr(api_jget(cs, "version"), NULL));
        else
            d->class_hw_version = v;
    }
    if (!d->guest_id && nonempty(api_jstr(api_jget(cs, "guestId"), NULL))) {
        d->guest_id = api_jstr(api_jget(cs, "guestId"), NULL);
        d->from_class |= RS_FROM_CLASS_GUEST_ID;
    }
    if (!d->firmware && nonempty(api_jstr(api_jget(cs, "firmware"), NULL))) {
        const char *fw = api_jstr(api_jget(cs, "firmware"), NULL);
        if (strcmp(fw, "bios") && strcmp(fw, "efi")) {
            NOTE(n, "class %s: configSpec.firmware \"%.16s\"", cname, fw);
        } else {
            d->firmware = fw;
            d->from_class |= RS_FROM_CLASS_FIRMWARE;
        }
    }
    if (d->cbt == RS_UNSET && jbool(api_jget(cs, "changeTrackingEnabled"), &d->cbt))
        d->from_class |= RS_FROM_CLASS_CBT;
    cJSON_ArrayForEach(it, api_jget(cs, "extraConfig"))
    {
        const char *k = api_jstr(api_jget(it, "key"), NULL),
                   *v = option_value(api_jget(it, "value"));
        if (!nonempty(k) || !v)
            NOTE(n, "class %s: configSpec.extraConfig[%zu] (needs a key and a string value)", cname,
                 i);
        else if (key_reserved(k))
            NOTE(n, "class %s: configSpec.extraConfig key %.64s (reserved for vmop)", cname, k);
        else if (d->n_extra >= RS_MAX_EXTRA)
            NOTE(n, "class %s: configSpec.extraConfig key %.64s (more than %d keys)", cname, k,
                 RS_MAX_EXTRA);
        else {
            d->extra[d->n_extra].key = k;
            d->extra[d->n_extra++].value = v;
        }
        i++;
    }
    i = 0;
    cJSON_ArrayForEach(it, api_jget(cs, "deviceChange"))
    {
        const cJSON *dev = api_jget(it, "device");
        const char *t = api_jstr(api_jget(dev, "_typeName"), NULL),
                   *op = api_jstr(api_jget(it, "operation"), NULL);
        if (is_ethernet_type(t) && (!op || !strcmp(op, "add"))) {
            if (n_nic < d->n_nics)
                d->nics[n_nic].device_type = t;
            n_nic++;
        } else if (t && !strcmp(t, "VirtualPCIPassthrough")) {
            NOTE(n,
                 "class %s: configSpec.deviceChange[%zu] VirtualPCIPassthrough (vGPU / "
                 "DirectPath I/O devices are not attached)",
                 cname, i);
        } else {
            NOTE(n, "class %s: configSpec.deviceChange[%zu] %s%.64s", cname, i,
                 op && strcmp(op, "add") ? "(not an add) " : "", t ? t : "(no _typeName)");
        }
        i++;
    }
}

/* The class's own fields vmop does not act on. */
static void class_fields(const struct rs_inputs *in, struct rs_notes *n)
{
    const cJSON *spec = api_jget(in->cls->obj, "spec");
    const char *cname = in->vm->class_name;
    const char *ctl = api_jstr(api_jget(spec, "controllerName"), NULL);
    const cJSON *devs = api_jpath(spec, "hardware", "devices", NULL, NULL);
    if (cJSON_GetArraySize(api_jget(devs, "vgpuDevices")) > 0)
        NOTE(n, "class %s: spec.hardware.devices.vgpuDevices (vGPU devices are not attached)",
             cname);
    if (cJSON_GetArraySize(api_jget(devs, "dynamicDirectPathIODevices")) > 0)
        NOTE(n,
             "class %s: spec.hardware.devices.dynamicDirectPathIODevices (DirectPath I/O devices "
             "are not attached)",
             cname);
    if (api_jpath(spec, "hardware", "instanceStorage", NULL, NULL))
        NOTE(n, "class %s: spec.hardware.instanceStorage (no instance storage volumes)", cname);
    if (nonempty(api_jstr(api_jget(spec, "reservedProfileID"), NULL)))
        NOTE(n, "class %s: spec.reservedProfileID", cname);
    if (cJSON_IsNumber(api_jget(spec, "reservedSlots")) &&
        api_jget(spec, "reservedSlots")->valueint > 0)
        NOTE(n, "class %s: spec.reservedSlots", cname);
    if (nonempty(ctl) && strcmp(ctl, "vmoperator.vmware.com/vsphere"))
        NOTE(n,
             "class %s: spec.controllerName %.128s (vmop handles the class as "
             "vmoperator.vmware.com/vsphere)",
             cname, ctl);
}

/* VM Operator's resize rule (resolve.h). */
static void class_resize_rule(const struct rs_inputs *in, struct rs_result *r)
{
    const struct api_vm *vm = in->vm;
    const char *last = api_jstr(api_jget(vm->annotations, RS_ANNOT_LAST_RESIZED), NULL);
    const cJSON *md = api_jget(in->cls->obj, "metadata"), *gen;
    cJSON *lj;
    const char *lname, *luid, *uid = api_jstr(api_jget(md, "uid"), NULL);
    long long lgen, cgen;
    if (!last || api_jget(vm->annotations, RS_ANNOT_SAME_CLASS_RESIZE))
        return;
    lj = cJSON_Parse(last);
    lname = api_jstr(api_jget(lj, "name"), NULL);
    luid = api_jstr(api_jget(lj, "uid"), NULL);
    gen = api_jget(md, "generation");
    cgen = cJSON_IsNumber(gen) ? (long long)gen->valuedouble : 0;
    lgen = cJSON_IsNumber(api_jget(lj, "generation"))
               ? (long long)api_jget(lj, "generation")->valuedouble
               : 0;
    /* another class: a className change, which resizes; unparsable: treated as absent */
    if (lname && vm->class_name && !strcmp(lname, vm->class_name) &&
        ((nonempty(luid) && nonempty(uid) && strcmp(luid, uid)) || lgen != cgen)) {
        r->desired.class_held = 1;
        snprintf(r->class_held_msg, sizeof(r->class_held_msg),
                 "VirtualMachineClass %s changed (generation %lld%s; this virtual machine was "
                 "sized from generation %lld): not applied to it. Add annotation %s to resize "
                 "it to the class as it is now, or change spec.className",
                 vm->class_name, cgen,
                 nonempty(luid) && nonempty(uid) && strcmp(luid, uid) ? ", recreated" : "", lgen,
                 RS_ANNOT_SAME_CLASS_RESIZE);
    }
    cJSON_Delete(lj);
}

/* Guest network settings that only cloud-init brings to the guest, on a VM without it. */
static void network_without_cloudinit(const struct rs_inputs *in, struct rs_notes *n)
{
    const struct api_vm *vm = in->vm;
    const cJSON *net = api_jpath(vm->obj, "spec", "network", NULL, NULL);
    static const char *const global[] = {"hostName", "domainName", "nameservers", "searchDomains"};
    if (vm->bootstrap & API_BOOT_CLOUDINIT)
        return;
    for (size_t i = 0; i < sizeof(global) / sizeof(global[0]); i++)
        if (api_jget(net, global[i]))
            NOTE_CI(n, "spec.network.%s", global[i]);
    if (vm->network_disabled)
        return;
    for (size_t i = 0; i < vm->n_nics; i++) {
        const struct api_vm_nic *s = &vm->nics[i];
        const char *nn = nonempty(s->network_name)
                             ? s->network_name
                             : (in->binding ? in->binding->default_network : NULL);
        int explicit4 = s->dhcp4 || cJSON_GetArraySize(s->addresses) > 0;
        const struct {
            int set;
            const char *name;
        } f[] = {{cJSON_GetArraySize(s->addresses) > 0, "addresses"},
                 {nonempty(s->gateway4), "gateway4"},
                 {nonempty(s->gateway6), "gateway6"},
                 {cJSON_GetArraySize(s->routes) > 0, "routes"},
                 {s->mtu != 0, "mtu"},
                 {cJSON_GetArraySize(s->nameservers) > 0, "nameservers"},
                 {cJSON_GetArraySize(s->search_domains) > 0, "searchDomains"},
                 {nonempty(s->guest_device_name), "guestDeviceName"},
                 {s->dhcp6, "dhcp6"}};
        for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++)
            if (f[k].set)
                NOTE_CI(n, "spec.network.interfaces[%s].%s", s->name ? s->name : "", f[k].name);
        if (!explicit4 && nn && in->binding && api_binding_ipv4_pool(in->binding, nn))
            NOTE_CI(n, "interface %s: network %s has a static IPv4 pool; no address is allocated",
                    s->name ? s->name : "", nn);
    }
}

/* v1alpha6's additions that vmop does not act on: spec.<a>[.<b>] */
static const struct {
    const char *a, *b;
} v6_only[] = {
    {"volumeAttributesClassName", NULL},
    {"resources", NULL},
    {"cpuAdvanced", NULL},
    {"memoryAdvanced", NULL},
    {"bootstrap", "disabled"},
    {"network", "vlans"},
    {"advanced", "preferHtEnabled"},
    {"advanced", "hugePages1GEnabled"},
    {"advanced", "timeTrackerLowLatencyEnabled"},
    {"advanced", "cpuAffinityExclusiveNoStatsEnabled"},
    {"advanced", "vmxSwapEnabled"},
    {"advanced", "pnumaNodeAffinity"},
    {"advanced", "extraConfig"},
};

/* The VM's own fields: acted on (into desired) or named. */
static void vm_fields(const struct rs_inputs *in, struct rs_result *r, struct rs_notes *n)
{
    const struct api_vm *vm = in->vm;
    const cJSON *spec = api_jget(vm->obj, "spec"), *bo, *it;
    const cJSON *ci = cloud_init_spec(vm), *net = api_jget(spec, "network");
    struct rs_desired *d = &r->desired;
    const char *s;
    size_t i = 0;

    /* named: what vmop has no implementation for */
    if (cJSON_GetArraySize(api_jget(spec, "volumes")) > 0)
        NOTE(n, "spec.volumes (PersistentVolumeClaims are not attached)");
    if (nonempty(vm->resource_policy_name))
        NOTE(n, "spec.reserved.resourcePolicyName (VirtualMachineSetResourcePolicy has no "
                "controller in vmop: the VM goes to the namespace's resource pool and folder)");
    if (api_jget(spec, "crypto"))
        NOTE(n, "spec.crypto (the VM is not encrypted)");
    if (api_jget(spec, "affinity"))
        NOTE(n, "spec.affinity");
    if (api_jget(spec, "class"))
        NOTE(n, "spec.class (VirtualMachineClassInstance; spec.className is used)");
    if (nonempty(api_jstr(api_jget(spec, "currentSnapshotName"), NULL)))
        NOTE(n, "spec.currentSnapshotName (no snapshots)");
    if (nonempty(api_jstr(api_jget(spec, "groupName"), NULL)))
        NOTE(n, "spec.groupName (no VirtualMachineGroups)");
    if (api_jget(spec, "hardware"))
        NOTE(n, "spec.hardware (CD-ROMs and controllers are not configured)");
    if (cJSON_GetArraySize(api_jget(spec, "policies")) > 0)
        NOTE(n, "spec.policies");
    if (api_jpath(spec, "advanced", "defaultVolumeProvisioningMode", NULL, NULL))
        NOTE(n, "spec.advanced.defaultVolumeProvisioningMode (the clone keeps the image's "
                "disk format)");
    s = api_jstr(api_jget(spec, "promoteDisksMode"), NULL);
    if (s && !strcmp(s, "Disabled"))
        NOTE(n, "spec.promoteDisksMode Disabled (vmop makes full clones: the disks have no "
                "parent)");
    /* what only v1alpha6 has (the storage version: written in v1alpha6 or kept through an older
     * version's conversion-data annotation) */
    for (i = 0; i < sizeof(v6_only) / sizeof(v6_only[0]); i++)
        if (api_jpath(spec, v6_only[i].a, v6_only[i].b, NULL, NULL))
            NOTE(n, "spec.%s%s%s (v1alpha6)", v6_only[i].a, v6_only[i].b ? "." : "",
                 v6_only[i].b ? v6_only[i].b : "");
    cJSON_ArrayForEach(it, api_jget(net, "interfaces"))
    {
        static const char *const v6_nic[] = {"type", "vnumaNodeID", "vmxnet3", "advancedProperties",
                                             "ipamModes"};
        for (size_t k = 0; k < sizeof(v6_nic) / sizeof(v6_nic[0]); k++)
            if (api_jget(it, v6_nic[k]))
                NOTE(n, "spec.network.interfaces[].%s (v1alpha6)", v6_nic[k]);
    }
    i = 0;

    /* acted on */
    if (nonempty(vm->guest_id))
        d->guest_id = vm->guest_id;
    if (vm->min_hw_version > 0 && vm->min_hw_version < 1000)
        d->hw_version = (int)vm->min_hw_version;
    jbool(api_jpath(spec, "advanced", "changeBlockTracking", NULL, NULL), &d->cbt);
    it = api_jpath(spec, "advanced", "bootDiskCapacity", NULL, NULL);
    if (it) {
        char text[64];
        struct api_qty q;
        int64_t mib = 0;
        if (cJSON_IsNumber(it))
            snprintf(text, sizeof(text), "%.0f", it->valuedouble);
        else
            snprintf(text, sizeof(text), "%s", api_jstr(it, NULL) ? api_jstr(it, NULL) : "");
        if (api_qty_parse(text, &q, NULL) == VMOP_OK && api_qty_sign(&q) > 0 &&
            api_qty_to_mib_ceil(&q, &mib, NULL) == VMOP_OK)
            d->boot_disk_mb = mib;
        else
            NOTE(n, "spec.advanced.bootDiskCapacity \"%.32s\" (not a size)", text);
    }
    bo = api_jget(spec, "bootOptions");
    if (cJSON_IsObject(bo)) {
        struct rs_boot *b = &d->boot;
        const char *v;
        b->set = 1;
        b->delay_ms = b->retry_delay_ms = -1;
        if (nonempty(api_jstr(api_jget(bo, "firmware"), NULL)))
            d->firmware = api_jstr(api_jget(bo, "firmware"), NULL);
        if ((v = api_jstr(api_jget(bo, "bootDelay"), NULL)) && !parse_duration_ms(v, &b->delay_ms))
            NOTE(n, "spec.bootOptions.bootDelay \"%.32s\" (not a duration)", v);
        if ((v = api_jstr(api_jget(bo, "bootRetryDelay"), NULL)) &&
            !parse_duration_ms(v, &b->retry_delay_ms))
            NOTE(n, "spec.bootOptions.bootRetryDelay \"%.32s\" (not a duration)", v);
        if ((v = api_jstr(api_jget(bo, "bootRetry"), NULL)))
            b->retry = !strcmp(v, "Enabled") ? RS_YES : RS_NO;
        if ((v = api_jstr(api_jget(bo, "efiSecureBoot"), NULL)))
            b->efi_secure_boot = !strcmp(v, "Enabled") ? RS_YES : RS_NO;
        if ((v = api_jstr(api_jget(bo, "networkBootProtocol"), NULL)))
            b->network_protocol = !strcmp(v, "IP6") ? "ipv6" : "ipv4";
        if (cJSON_IsArray(api_jget(bo, "bootOrder")))
            b->has_order = 1;
        cJSON_ArrayForEach(it, api_jget(bo, "bootOrder"))
        {
            const char *t = api_jstr(api_jget(it, "type"), NULL),
                       *nm = api_jstr(api_jget(it, "name"), NULL);
            size_t k = 0;
            if (b->n_order >= RS_MAX_BOOT_ORDER) {
                NOTE(n, "spec.bootOptions.bootOrder[%zu] (more than %d entries)", i,
                     RS_MAX_BOOT_ORDER);
            } else if (t && !strcmp(t, "Network")) {
                while (nonempty(nm) && k < d->n_nics &&
                       (!d->nics[k].name || strcmp(d->nics[k].name, nm)))
                    k++;
                if (k < d->n_nics) {
                    b->order[b->n_order].kind = RS_BOOT_NETWORK;
                    b->order[b->n_order++].nic = k;
                } else {
                    NOTE(n, "spec.bootOptions.bootOrder[%zu] (no interface %.63s)", i,
                         nm ? nm : "");
                }
            } else if (t && !strcmp(t, "Disk") && !nonempty(nm)) {
                b->order[b->n_order++].kind = RS_BOOT_DISK;
            } else if (t && !strcmp(t, "CDRom")) {
                b->order[b->n_order++].kind = RS_BOOT_CDROM;
            } else {
                NOTE(n,
                     "spec.bootOptions.bootOrder[%zu] (disk \"%.63s\": only the boot disk, "
                     "given without a name)",
                     i, nm ? nm : "");
            }
            i++;
        }
    }
    /* cloud-init: global DNS as per-interface defaults, wait-on-network */
    if (d->cloud_init) {
        enum rs_tri use_ns = RS_UNSET, use_search = RS_UNSET;
        jbool(api_jget(ci, "useGlobalNameserversAsDefault"), &use_ns);
        jbool(api_jget(ci, "useGlobalSearchDomainsAsDefault"), &use_search);
        if (use_ns != RS_NO && cJSON_GetArraySize(api_jget(net, "nameservers")) > 0)
            d->global_nameservers = api_jget(net, "nameservers");
        if (use_search != RS_NO && cJSON_GetArraySize(api_jget(net, "searchDomains")) > 0)
            d->global_search = api_jget(net, "searchDomains");
        jbool(api_jget(ci, "waitOnNetwork4"), &d->wait_on_network4);
        jbool(api_jget(ci, "waitOnNetwork6"), &d->wait_on_network6);
    }
}

/* VirtualMachineFieldsSupported from the notes. */
static void fields_condition(struct rs_result *r, struct rs_notes *n)
{
    const struct vbuf *b = n->unsupported.len ? &n->unsupported : &n->cloudinit;
    char msg[RS_MSG_MAX];
    if (!n->unsupported.len && !n->cloudinit.len) {
        cond_true(r, COND_FIELDS_SUPPORTED);
        return;
    }
    if (n->unsupported.len && n->cloudinit.len)
        vbuf_addf(&n->unsupported, "; without a cloud-init bootstrap: %s", vbuf_str(&n->cloudinit));
    snprintf(msg, sizeof(msg), "%s: %s",
             n->unsupported.len ? "not acted on by vmop"
                                : "not given to the guest (no cloud-init bootstrap)",
             vbuf_error(b) ? "(list too long)" : vbuf_str(b));
    if (strlen(msg) == sizeof(msg) - 1)
        memcpy(msg + sizeof(msg) - 4, "...", 4);
    cond_add(r, COND_FIELDS_SUPPORTED, 1, API_COND_FALSE,
             n->unsupported.len ? RS_REASON_NOT_SUPPORTED : RS_REASON_CLOUDINIT_REQUIRED, "%s",
             msg);
}

/* ---- entry points ------------------------------------------------------------------------------
 */

void rs_size(const struct rs_inputs *in, struct rs_result *r, int64_t host_mhz)
{
    struct rs_cond *c = NULL;

    if (!r->ready || !in->cls || !r->desired.class_name)
        return;
    for (size_t i = 0; i < r->n_conds; i++)
        if (!strcmp(r->conds[i].type, COND_CLASS_READY))
            c = &r->conds[i];
    if (c && !size_class(in->cls, r->desired.class_name, host_mhz, &r->desired, c))
        r->ready = 0;
}

vmop_rc rs_resolve(const struct rs_inputs *in, struct rs_result *ret, struct vmop_err *err)
{
    const struct api_vm *vm = in->vm;
    struct api_ferrs fe = {0};
    vmop_rc rc = VMOP_OK;
    int ok = 1;

    memset(ret, 0, sizeof(*ret));
    /* the rules on the object alone: the create-only ones (no Suspended, no nextRestartTime) and
     * the old-vs-new ones are admission's, which knows whether this is a create; here every VM
     * would count as new, and an existing VM could never be suspended */
    api_vm_validate_object(vm, &fe);
    if (fe.n) {
        struct vbuf msg;
        vbuf_init(&msg, RS_MSG_MAX);
        api_ferrs_format(&fe, &msg);
        cond_add(ret, COND_RECONCILE_READY, 1, API_COND_FALSE, "InvalidSpec",
                 "the VirtualMachine is invalid: %s",
                 vbuf_error(&msg) ? "many field errors" : vbuf_str(&msg));
        vbuf_free(&msg);
        ok = 0;
    }
    /* Every check runs, so describe shows every problem at once. */
    ok &= check_placement(in, ret);
    ok &= check_class(in, ret);
    ok &= check_image(in, ret);
    ok &= check_storage(in, ret);
    ok &= check_network(in, ret);
    ok &= check_bootstrap(in, ret, &rc, err);
    if (rc) {
        rs_result_free(ret);
        return rc;
    }
    {
        struct rs_notes notes;
        vbuf_init(&notes.unsupported, 4 * RS_MSG_MAX);
        vbuf_init(&notes.cloudinit, 4 * RS_MSG_MAX);
        vm_fields(in, ret, &notes);
        if (ret->desired.class_name) {
            class_fields(in, &notes);
            class_config_spec(in, ret, &notes);
            class_resize_rule(in, ret);
        }
        network_without_cloudinit(in, &notes);
        fields_condition(ret, &notes);
        vbuf_free(&notes.unsupported);
        vbuf_free(&notes.cloudinit);
    }
    snprintf(ret->desired.namespaced_name, sizeof(ret->desired.namespaced_name), "%s/%s",
             vm->namespace_ ? vm->namespace_ : "", vm->name ? vm->name : "");
    ret->desired.bios_uuid = vm->bios_uuid;
    ret->desired.instance_uuid = vm->instance_uuid;
    ret->desired.resource_uid = vm->uid;
    ret->desired.power = vm->power_state == API_POWER_UNSET ? API_POWER_ON : vm->power_state;
    ret->desired.power_off_mode = vm->power_off_mode;
    ret->desired.suspend_mode = vm->suspend_mode;
    ret->desired.restart_mode = vm->restart_mode;
    if (nonempty(vm->next_restart_time) && strcasecmp(vm->next_restart_time, "now") &&
        (!vm->status_last_restart_time ||
         strcmp(vm->next_restart_time, vm->status_last_restart_time)))
        ret->desired.restart_for = vm->next_restart_time;
    if (ok && (!nonempty(vm->bios_uuid) || !nonempty(vm->instance_uuid))) {
        cond_add(ret, COND_RECONCILE_READY, 1, API_COND_FALSE, "NotDefaulted",
                 "spec.biosUUID and spec.instanceUUID must be set before the VM is created");
        ok = 0;
    }
    ret->ready = ok;
    return VMOP_OK;
}

void rs_result_free(struct rs_result *r)
{
    if (!r)
        return;
    gi_free_secret(r->desired.userdata, r->desired.userdata_len);
    r->desired.userdata = NULL;
    r->desired.userdata_len = 0;
}
