/* resolve.c: VirtualMachine + references -> desired vSphere configuration or conditions (pure).
 * See resolve.h for which condition and reason each problem gives. */
#include "resolve.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static const cJSON *jpath(const cJSON *o, const char *a, const char *b, const char *c,
                          const char *d)
{
    const char *keys[] = {a, b, c, d};
    for (size_t i = 0; i < 4 && keys[i] && o; i++)
        o = cJSON_GetObjectItemCaseSensitive(o, keys[i]);
    return o;
}

static const char *jstr(const cJSON *o)
{
    return cJSON_IsString(o) ? o->valuestring : NULL;
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
    return jpath(vm->obj, "spec", "bootstrap", "cloudInit", NULL);
}

void rs_references(const struct api_vm *vm, struct rs_refs *ret_refs)
{
    const cJSON *ci = cloud_init_spec(vm), *cc, *it;
    memset(ret_refs, 0, sizeof(*ret_refs));
    ret_refs->class_name = vm->class_name;
    ret_refs->image_kind = nonempty(vm->image_kind) ? vm->image_kind : API_KIND_VMI;
    ret_refs->image_name = vm->image_ref;
    ret_refs->storage_class = vm->storage_class;
    add_secret(ret_refs, jstr(jpath(ci, "rawCloudConfig", "name", NULL, NULL)));
    cc = jpath(ci, "cloudConfig", NULL, NULL, NULL);
    cJSON_ArrayForEach(it, jpath(cc, "users", NULL, NULL, NULL))
    {
        add_secret(ret_refs, jstr(jpath(it, "hashed_passwd", "name", NULL, NULL)));
        add_secret(ret_refs, jstr(jpath(it, "passwd", "name", NULL, NULL)));
    }
    cJSON_ArrayForEach(it, jpath(cc, "write_files", NULL, NULL, NULL))
        add_secret(ret_refs, jstr(jpath(it, "content", "name", NULL, NULL)));
}

/* ---- secrets ------------------------------------------------------------------------------------
 */

/* Value of `key` in a Secret (data is base64, stringData plain). *ret is malloc'd, NUL-terminated,
 * and must be gi_free_secret()d. VMOP_E_NOT_FOUND when the key is absent. */
static vmop_rc secret_value(const cJSON *secret, const char *key, char **ret, size_t *ret_len,
                            struct vmop_err *err)
{
    const char *v = jstr(jpath(secret, "stringData", key, NULL, NULL));
    if (v) {
        char *copy = strdup(v);
        if (!copy)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        *ret = copy;
        *ret_len = strlen(copy);
        return VMOP_OK;
    }
    v = jstr(jpath(secret, "data", key, NULL, NULL));
    if (!v)
        return VMOP_E_NOT_FOUND;
    if (!*v) {
        *ret = strdup("");
        *ret_len = 0;
        return *ret ? VMOP_OK : vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    }
    return gi_decode(v, "base64", ret, ret_len, err);
}

/* ---- the checks, one per condition -------------------------------------------------------------
 */

static int check_placement(const struct rs_inputs *in, struct rs_result *r)
{
    const struct api_binding *b = in->binding;
    struct api_ferrs fe = {0};
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

static int check_class(const struct rs_inputs *in, struct rs_result *r)
{
    const struct api_vm *vm = in->vm;
    const struct api_class *c = in->cls;
    struct api_ferrs fe = {0};
    struct vmop_err serr = {0};

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
    if (in->min_host_mhz <= 0) {
        cond_add(r, COND_CLASS_READY, 1, API_COND_UNKNOWN, "HostInfoUnavailable",
                 "the CPU speed of the placement cluster's hosts is not known yet");
        return 0;
    }
    if (api_class_sizing(c, in->min_host_mhz, &r->desired.size, &serr)) {
        cond_add(r, COND_CLASS_READY, 1, API_COND_FALSE, "Invalid",
                 "VirtualMachineClass \"%s\" cannot be applied: %s", vm->class_name, serr.msg);
        return 0;
    }
    r->desired.class_name = vm->class_name;
    cond_true(r, COND_CLASS_READY);
    return 1;
}

/* Ready condition of an image object: 1 True, 0 otherwise (with its reason/message). */
static int image_ready(const struct api_image *img, const char **ret_reason, const char **ret_msg)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, jpath(img->obj, "status", "conditions", NULL, NULL))
    {
        const char *type = jstr(cJSON_GetObjectItemCaseSensitive(it, "type"));
        const char *status = jstr(cJSON_GetObjectItemCaseSensitive(it, "status"));
        if (!type || strcmp(type, "Ready") != 0)
            continue;
        *ret_reason = jstr(cJSON_GetObjectItemCaseSensitive(it, "reason"));
        *ret_msg = jstr(cJSON_GetObjectItemCaseSensitive(it, "message"));
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
        jstr(jpath(in->storage_class, "parameters", "storagePolicyID", NULL, NULL));
    cond_true(r, COND_STORAGE_READY);
    return 1;
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
        r->desired.nics[r->desired.n_nics].name = n->name;
        r->desired.nics[r->desired.n_nics].network = net;
        r->desired.nics[r->desired.n_nics].port_group = pg;
        r->desired.nics[r->desired.n_nics].spec = n;
        r->desired.n_nics++;
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
    name = jstr(cJSON_GetObjectItem(sel, "name"));
    key = jstr(cJSON_GetObjectItem(sel, "key"));
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
    d->ssh_keys = jpath(ci, "sshAuthorizedKeys", NULL, NULL, NULL);

    if (vm->has_raw_cloud_config) {
        const char *name = jstr(jpath(ci, "rawCloudConfig", "name", NULL, NULL));
        const char *key = jstr(jpath(ci, "rawCloudConfig", "key", NULL, NULL));
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
        if (!cloud_config_userdata(in, r, jpath(ci, "cloudConfig", NULL, NULL, NULL), rc, err))
            return 0;
    }
    cond_true(r, COND_BOOTSTRAP_READY);
    return 1;
}

/* ---- entry points ------------------------------------------------------------------------------
 */

vmop_rc rs_resolve(const struct rs_inputs *in, struct rs_result *ret, struct vmop_err *err)
{
    const struct api_vm *vm = in->vm;
    struct api_ferrs fe = {0};
    vmop_rc rc = VMOP_OK;
    int ok = 1;

    memset(ret, 0, sizeof(*ret));
    api_vm_validate(vm, NULL, &fe);
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
    snprintf(ret->desired.namespaced_name, sizeof(ret->desired.namespaced_name), "%s/%s",
             vm->namespace_ ? vm->namespace_ : "", vm->name ? vm->name : "");
    ret->desired.bios_uuid = vm->bios_uuid;
    ret->desired.instance_uuid = vm->instance_uuid;
    ret->desired.power = vm->power_state == API_POWER_UNSET ? API_POWER_ON : vm->power_state;
    ret->desired.power_off_mode = vm->power_off_mode;
    ret->desired.suspend_mode = vm->suspend_mode;
    ret->desired.restart_mode = vm->restart_mode;
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
