/* catalog.c: image objects from library items, and the desired-vs-existing plan (see catalog.h).
 *
 * Owns: naming (SHA-1 via OpenSSL EVP), object construction with cJSON, and the comparison rules
 * of the diff. Pure: no I/O, no clock (the caller passes `now`).
 */
#include "catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "api_cond.h"
#include "api_json.h"
#include "api_quantity.h"

#define CAT_ITEM_ID_MAX 256 /* longest item id we hash (vimclient's cap as well) */

int cat_item_supported(const char *type)
{
    return type && (!strcmp(type, "ovf") || !strcmp(type, "vm-template"));
}

static const char *status_type(const char *type)
{
    return !strcmp(type, "ovf") ? "OVF" : "VM";
}

const char *cat_op_str(enum cat_op op)
{
    switch (op) {
    case CAT_CREATE:
        return "create";
    case CAT_UPDATE:
        return "update";
    case CAT_DELETE:
        return "delete";
    case CAT_FOREIGN:
        return "foreign";
    }
    return "?";
}

/* ---- naming ------------------------------------------------------------------------------- */

vmop_rc cat_name_with_prefix(const char *prefix, const char *item_id, char *buf, size_t n,
                             struct vmop_err *err)
{
    static const char hex[] = "0123456789abcdef";
    char stripped[CAT_ITEM_ID_MAX + 1];
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    char digits[18];
    size_t len = 0;

    if (!prefix || !buf)
        return vmop_fail(err, VMOP_E_INVALID, "cat_name_with_prefix: bad arguments");
    if (!item_id || !*item_id)
        return vmop_fail(err, VMOP_E_INVALID, "a library item id is empty");
    if (strlen(item_id) > CAT_ITEM_ID_MAX)
        return vmop_fail(err, VMOP_E_INVALID, "library item id is longer than %d bytes",
                         CAT_ITEM_ID_MAX);
    for (const char *s = item_id; *s; s++)
        if (*s != '-')
            stripped[len++] = *s;
    if (EVP_Digest(stripped, len, md, &md_len, EVP_sha1(), NULL) != 1 || md_len < 9)
        return vmop_fail(err, VMOP_E_INTERNAL, "SHA-1 of a library item id failed");
    for (size_t i = 0; i < 17; i++)
        digits[i] = hex[(md[i / 2] >> ((i % 2) ? 0 : 4)) & 15];
    digits[17] = '\0';
    if (strlen(prefix) + 18 > n)
        return vmop_fail(err, VMOP_E_TOOBIG, "name buffer too small");
    snprintf(buf, n, "%s%s", prefix, digits);
    return VMOP_OK;
}

vmop_rc cat_image_name(const char *item_id, char *buf, size_t n, struct vmop_err *err)
{
    return cat_name_with_prefix("vmi-", item_id, buf, n, err);
}

/* ---- building ----------------------------------------------------------------------------- */

/* Kubernetes label value: at most 63 characters, alphanumeric at both ends, - _ . inside. */
static int label_value_ok(const char *v)
{
    size_t n = v ? strlen(v) : 0;
    if (n == 0 || n > 63)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || i == n - 1 || (c != '-' && c != '_' && c != '.')))
            return 0;
    }
    return 1;
}

struct bctx {
    int oom;
};

/* obj[key] = val unless val is NULL or "". */
static void add_str(struct bctx *b, cJSON *obj, const char *key, const char *val)
{
    if (!obj) {
        b->oom = 1;
        return;
    }
    if (val && *val && !cJSON_AddStringToObject(obj, key, val))
        b->oom = 1;
}

/* Like add_str, but "" is added too (for values where empty is meaningful). */
static void add_str_or_empty(struct bctx *b, cJSON *obj, const char *key, const char *val)
{
    if (obj && val && !cJSON_AddStringToObject(obj, key, val))
        b->oom = 1;
}

static void add_num(struct bctx *b, cJSON *obj, const char *key, double v)
{
    if (!obj || !cJSON_AddNumberToObject(obj, key, v))
        b->oom = 1;
}

static cJSON *add_obj(struct bctx *b, cJSON *obj, const char *key)
{
    cJSON *o = obj ? cJSON_AddObjectToObject(obj, key) : NULL;
    if (!o)
        b->oom = 1;
    return o;
}

static cJSON *add_arr(struct bctx *b, cJSON *obj, const char *key)
{
    cJSON *a = obj ? cJSON_AddArrayToObject(obj, key) : NULL;
    if (!a)
        b->oom = 1;
    return a;
}

static cJSON *push_obj(struct bctx *b, cJSON *arr)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !arr || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        b->oom = 1;
        return NULL;
    }
    return o;
}

/* Bytes as a quantity, in VM Operator's format: binary SI when divisible by 1024. */
static void add_bytes(struct bctx *b, cJSON *obj, const char *key, long long bytes)
{
    char q[API_QTY_STR_MAX];
    struct api_qty v =
        api_qty_from_int(bytes, bytes % 1024 == 0 ? API_QTY_BINARY_SI : API_QTY_DECIMAL_SI);
    if (api_qty_format(&v, q, sizeof(q), NULL) == VMOP_OK)
        add_str(b, obj, key, q);
}

/* "vmx-13" -> 13, else 0. */
static int vmx_number(const char *s)
{
    long v = 0;
    if (!s || strncmp(s, "vmx-", 4) != 0)
        return 0;
    for (s += 4; *s >= '0' && *s <= '9'; s++)
        if ((v = v * 10 + (*s - '0')) > 100000)
            return 0;
    return *s ? 0 : (int)v;
}

static void add_os_info(struct bctx *b, cJSON *status, const char *id, const char *type,
                        const char *version)
{
    cJSON *os;
    if (!(id && *id) && !(type && *type) && !(version && *version))
        return;
    os = add_obj(b, status, "osInfo");
    add_str(b, os, "id", id);
    add_str(b, os, "type", type);
    add_str(b, os, "version", version);
}

static void add_ovf_facts(struct bctx *b, cJSON *status, const struct ovf_desc *d)
{
    add_str(b, status, "firmware", d->firmware);
    if (d->hw_version > 0)
        add_num(b, status, "hardwareVersion", d->hw_version);
    add_os_info(b, status, d->os_id, d->os_type, d->os_version);
    if (d->product || d->vendor || d->version || d->full_version) {
        cJSON *p = add_obj(b, status, "productInfo");
        add_str(b, p, "product", d->product);
        add_str(b, p, "vendor", d->vendor);
        add_str(b, p, "version", d->version);
        add_str(b, p, "fullVersion", d->full_version);
    }
    if (d->n_props) {
        cJSON *arr = add_arr(b, status, "ovfProperties");
        for (size_t i = 0; i < d->n_props; i++) {
            cJSON *p = push_obj(b, arr);
            add_str(b, p, "key", d->props[i].key);
            add_str(b, p, "type", d->props[i].type);
            /* "" is a real default (VM Operator keeps it): add it even when empty. */
            add_str_or_empty(b, p, "default", d->props[i].default_value);
        }
    }
    if (d->n_sys_props) {
        cJSON *arr = add_arr(b, status, "vmwareSystemProperties");
        for (size_t i = 0; i < d->n_sys_props; i++) {
            cJSON *p = push_obj(b, arr);
            add_str(b, p, "key", d->sys_props[i].key);
            add_str_or_empty(b, p, "value", d->sys_props[i].value);
        }
    }
    if (d->n_disks) {
        cJSON *arr = add_arr(b, status, "disks");
        for (size_t i = 0; i < d->n_disks; i++) {
            const struct ovf_disk *dk = &d->disks[i];
            cJSON *p = push_obj(b, arr);
            add_str(b, p, "name", dk->disk_id);
            if (dk->capacity_bytes >= 0)
                add_bytes(b, p, "limit", dk->capacity_bytes);
            if (dk->populated_bytes >= 0)
                add_bytes(b, p, "requested", dk->populated_bytes);
            if (dk->controller_type) {
                add_str(b, p, "controllerType", dk->controller_type);
                if (dk->controller_bus >= 0)
                    add_num(b, p, "controllerBusNumber", dk->controller_bus);
            }
            if (dk->unit_number >= 0)
                add_num(b, p, "unitNumber", dk->unit_number);
        }
    }
}

static void add_label(struct bctx *b, cJSON *labels, const char *key, const char *val)
{
    if (label_value_ok(val))
        add_str(b, labels, key, val);
}

vmop_rc cat_build_image(const struct cat_item *it, const char *namespace_, time_t now,
                        cJSON **ret_obj, struct vmop_err *err)
{
    struct bctx b = {0};
    char name[CAT_NAME_BUF], provider[CAT_NAME_BUF];
    int cluster = !namespace_ || !*namespace_;
    const struct ovf_desc *d = NULL;
    cJSON *obj = NULL, *md, *labels, *ann, *spec, *ref, *status, *conds;
    vmop_rc rc;

    if (!it || !ret_obj)
        return vmop_fail(err, VMOP_E_INVALID, "cat_build_image: bad arguments");
    if (!it->name || !*it->name || !it->library_id || !*it->library_id)
        return vmop_fail(err, VMOP_E_INVALID, "library item '%.64s' has no name or library",
                         it->id ? it->id : "");
    if (!cat_item_supported(it->type))
        return vmop_fail(err, VMOP_E_INVALID,
                         "library item '%.64s' has type '%.32s': only ovf and vm-template items "
                         "become images",
                         it->id ? it->id : "", it->type ? it->type : "");
    rc = cat_image_name(it->id, name, sizeof(name), err);
    if (!rc)
        rc = cat_name_with_prefix("clitem-", it->id, provider, sizeof(provider), err);
    if (rc)
        return rc;
    if (!it->sync_error && !strcmp(it->type, "ovf"))
        d = it->ovf;

    obj = cJSON_CreateObject();
    add_str(&b, obj, "apiVersion", CAT_API_VERSION);
    add_str(&b, obj, "kind", cluster ? "ClusterVirtualMachineImage" : "VirtualMachineImage");
    md = add_obj(&b, obj, "metadata");
    add_str(&b, md, "name", name);
    if (!cluster)
        add_str(&b, md, "namespace", namespace_);
    labels = add_obj(&b, md, "labels");
    add_str(&b, labels, CAT_LABEL_MANAGED_BY, CAT_MANAGED_BY);
    add_label(&b, labels, CAT_LABEL_LIBRARY_ID, it->library_id);
    add_label(&b, labels, CAT_LABEL_TYPE, status_type(it->type));
    if (d) {
        add_label(&b, labels, CAT_LABEL_OS_ID, d->os_id);
        add_label(&b, labels, CAT_LABEL_OS_TYPE, d->os_type);
        add_label(&b, labels, CAT_LABEL_OS_VERSION, d->os_version);
    } else if (!it->sync_error && it->vm) {
        add_label(&b, labels, CAT_LABEL_OS_TYPE, it->vm->guest_id);
    }
    ann = add_obj(&b, md, "annotations");
    add_str(&b, ann, CAT_ANN_DISPLAY_NAME, it->name);

    spec = add_obj(&b, obj, "spec");
    ref = add_obj(&b, spec, "providerRef");
    add_str(&b, ref, "apiVersion", CAT_PROVIDER_API);
    add_str(&b, ref, "kind", cluster ? CAT_KIND_CLUSTER_ITEM : CAT_KIND_ITEM);
    add_str(&b, ref, "name", provider);

    status = add_obj(&b, obj, "status");
    add_str(&b, status, "name", it->name);
    add_str(&b, status, "type", status_type(it->type));
    add_str(&b, status, "providerItemID", it->id);
    add_str(&b, status, "providerContentVersion", it->content_version);
    if (d) {
        add_ovf_facts(&b, status, d);
    } else if (!it->sync_error && it->vm) {
        int hw = vmx_number(it->vm->hw_version);
        add_str(&b, status, "firmware", it->vm->firmware);
        if (hw > 0)
            add_num(&b, status, "hardwareVersion", hw);
        add_os_info(&b, status, NULL, it->vm->guest_id, NULL);
    }
    conds = add_arr(&b, status, "conditions");
    if (b.oom) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory building image %s", name);
        goto out;
    }
    if (it->sync_error)
        rc = api_cond_set(conds, CAT_COND_READY, API_COND_FALSE, CAT_REASON_NOT_SYNCED,
                          it->sync_error, -1, now, NULL, err);
    else if (!strcmp(it->type, "ovf") && !d)
        rc = api_cond_set(conds, CAT_COND_READY, API_COND_FALSE, CAT_REASON_NOT_SYNCED,
                          "the OVF descriptor has not been read", -1, now, NULL, err);
    else
        rc = api_cond_mark_true(conds, CAT_COND_READY, -1, now, NULL, err);
    if (!rc && d && d->v1alpha1_compatible)
        rc = api_cond_mark_true(conds, CAT_COND_V1A1, -1, now, NULL, err);
    if (rc)
        goto out;
    *ret_obj = obj;
    obj = NULL;
out:
    cJSON_Delete(obj);
    return rc;
}

vmop_rc cat_build_images(const struct cat_item *items, size_t n, const char *namespace_, time_t now,
                         cJSON **ret_array, struct vmop_err *err)
{
    cJSON *arr = NULL;
    vmop_rc rc = VMOP_OK;

    if (!ret_array || (n && !items))
        return vmop_fail(err, VMOP_E_INVALID, "cat_build_images: bad arguments");
    if (n > CAT_MAX_IMAGES)
        return vmop_fail(err, VMOP_E_TOOBIG,
                         "%zu library items, more than the %d images vmop keeps", n,
                         CAT_MAX_IMAGES);
    arr = cJSON_CreateArray();
    if (!arr)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory building images");
    for (size_t i = 0; i < n; i++) {
        cJSON *obj = NULL;
        size_t j;
        if (!cat_item_supported(items[i].type))
            continue;
        for (j = 0; j < i; j++)
            if (items[j].id && items[i].id && !strcmp(items[j].id, items[i].id))
                break;
        if (j < i)
            continue;
        rc = cat_build_image(&items[i], namespace_, now, &obj, err);
        if (rc)
            goto out;
        if (!cJSON_AddItemToArray(arr, obj)) {
            cJSON_Delete(obj);
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory building images");
            goto out;
        }
    }
    *ret_array = arr;
    arr = NULL;
out:
    cJSON_Delete(arr);
    return rc;
}

/* ---- diff --------------------------------------------------------------------------------- */

static const cJSON *meta(const cJSON *o)
{
    return cJSON_GetObjectItemCaseSensitive(o, "metadata");
}

static const char *meta_str(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta(o), key));
}

static const cJSON *meta_map(const cJSON *o, const char *key)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(meta(o), key);
    return cJSON_IsObject(m) ? m : NULL;
}

int cat_is_managed(const cJSON *obj)
{
    const char *v = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(meta_map(obj, "labels"), CAT_LABEL_MANAGED_BY));
    return v && !strcmp(v, CAT_MANAGED_BY);
}

/* Labels whose keys vmop writes on images (and may therefore remove). */
static int our_label(const char *key)
{
    return !strcmp(key, CAT_LABEL_MANAGED_BY) || !strncmp(key, "vmop.io/", 8) ||
           !strncmp(key, "image.vmoperator.vmware.com/", 28) ||
           !strncmp(key, "os.image.vmoperator.vmware.com/", 31);
}

static const char *map_get(const cJSON *m, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, key));
}

static int labels_differ(const cJSON *want, const cJSON *have)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, want)
    {
        const char *h = map_get(have, e->string);
        if (!cJSON_IsString(e) || !h || strcmp(h, e->valuestring) != 0)
            return 1;
    }
    cJSON_ArrayForEach(e, have)
    {
        if (e->string && our_label(e->string) && !cJSON_GetObjectItemCaseSensitive(want, e->string))
            return 1;
    }
    return 0;
}

static int annotations_differ(const cJSON *want, const cJSON *have)
{
    const char *w = map_get(want, CAT_ANN_DISPLAY_NAME), *h = map_get(have, CAT_ANN_DISPLAY_NAME);
    if (!w)
        return 0;
    return !h || strcmp(w, h) != 0;
}

/* A copy of status without the condition fields the comparison ignores. NULL status -> {}. */
static cJSON *status_for_compare(const cJSON *status)
{
    cJSON *s = cJSON_IsObject(status) ? cJSON_Duplicate(status, 1) : cJSON_CreateObject();
    cJSON *conds, *c;
    if (!s)
        return NULL;
    conds = cJSON_GetObjectItemCaseSensitive(s, "conditions");
    cJSON_ArrayForEach(c, conds)
    {
        cJSON_DeleteItemFromObjectCaseSensitive(c, "lastTransitionTime");
        cJSON_DeleteItemFromObjectCaseSensitive(c, "observedGeneration");
    }
    if (cJSON_IsArray(conds) && cJSON_GetArraySize(conds) == 0)
        cJSON_DeleteItemFromObjectCaseSensitive(s, "conditions");
    return s;
}

/* -1 on NOMEM, else 1 when the statuses differ. */
static int status_differs(const cJSON *want, const cJSON *have)
{
    cJSON *a = status_for_compare(want), *b = status_for_compare(have);
    int r = (!a || !b) ? -1 : !cJSON_Compare(a, b, 1);
    cJSON_Delete(a);
    cJSON_Delete(b);
    return r;
}

static int spec_differs(const cJSON *want, const cJSON *have)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(want, "spec");
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(have, "spec");
    if (!w)
        return 0;
    return !h || !cJSON_Compare(w, h, 1);
}

static int str_eq(const cJSON *a, const cJSON *b, const char *key)
{
    const char *x = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, key));
    const char *y = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, key));
    return (!x && !y) || (x && y && !strcmp(x, y));
}

/* Keeps lastTransitionTime of conditions that did not change (status, reason, message). */
static vmop_rc keep_transition_times(cJSON *conds, const cJSON *old_conds, struct vmop_err *err)
{
    cJSON *c;
    cJSON_ArrayForEach(c, conds)
    {
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
        const cJSON *o = type ? api_cond_get(old_conds, type) : NULL;
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "lastTransitionTime");
        cJSON *copy;
        if (!o || !cJSON_IsString(t) || !str_eq(c, o, "status") || !str_eq(c, o, "reason") ||
            !str_eq(c, o, "message"))
            continue;
        copy = cJSON_CreateString(t->valuestring);
        if (!copy || (cJSON_GetObjectItemCaseSensitive(c, "lastTransitionTime")
                          ? !cJSON_ReplaceItemInObjectCaseSensitive(c, "lastTransitionTime", copy)
                          : !cJSON_AddItemToObject(c, "lastTransitionTime", copy))) {
            cJSON_Delete(copy);
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory planning image updates");
        }
    }
    return VMOP_OK;
}

/* obj[key] = copy of val (replacing); val NULL removes. 0 on success. */
static int put_copy(cJSON *obj, const char *key, const cJSON *val)
{
    cJSON *copy;
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    if (!val)
        return 0;
    copy = cJSON_Duplicate(val, 1);
    if (!copy || !cJSON_AddItemToObject(obj, key, copy)) {
        cJSON_Delete(copy);
        return -1;
    }
    return 0;
}

/* The update object: existing with vmop's labels, the display-name annotation, spec and status
 * taken from want. */
static vmop_rc build_update(const cJSON *want, const cJSON *have, cJSON **ret, struct vmop_err *err)
{
    cJSON *u = cJSON_Duplicate(have, 1), *md, *labels, *ann, *e, *next, *status;
    const cJSON *want_labels = meta_map(want, "labels");
    const char *display = map_get(meta_map(want, "annotations"), CAT_ANN_DISPLAY_NAME);
    vmop_rc rc = VMOP_OK;

    if (!u || !(md = api_json_ensure_obj(u, "metadata")) ||
        !(labels = api_json_ensure_obj(md, "labels")))
        goto oom;
    for (e = labels->child; e; e = next) {
        next = e->next;
        if (e->string && our_label(e->string) &&
            !cJSON_GetObjectItemCaseSensitive(want_labels, e->string))
            cJSON_Delete(cJSON_DetachItemViaPointer(labels, e));
    }
    cJSON_ArrayForEach(e, want_labels)
    {
        if (put_copy(labels, e->string, e))
            goto oom;
    }
    if (display) {
        if (!(ann = api_json_ensure_obj(md, "annotations")) ||
            api_json_set_str(ann, CAT_ANN_DISPLAY_NAME, display, NULL))
            goto oom;
    }
    if (put_copy(u, "spec", cJSON_GetObjectItemCaseSensitive(want, "spec")) ||
        put_copy(u, "status", cJSON_GetObjectItemCaseSensitive(want, "status")))
        goto oom;
    status = cJSON_GetObjectItemCaseSensitive(u, "status");
    rc = keep_transition_times(cJSON_GetObjectItemCaseSensitive(status, "conditions"),
                               cJSON_GetObjectItemCaseSensitive(
                                   cJSON_GetObjectItemCaseSensitive(have, "status"), "conditions"),
                               err);
    if (rc)
        goto out;
    *ret = u;
    return VMOP_OK;
oom:
    rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory planning image updates");
out:
    cJSON_Delete(u);
    return rc;
}

void cat_plan_free(struct cat_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        cJSON_Delete(p->changes[i].obj);
    free(p->changes);
    memset(p, 0, sizeof(*p));
}

static vmop_rc plan_add(struct cat_plan *p, enum cat_op op, cJSON *obj, int main_changed,
                        int status_changed, struct vmop_err *err)
{
    struct cat_change *nc;
    if (!obj)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory planning images");
    nc = realloc(p->changes, (p->n + 1) * sizeof(*nc));
    if (!nc) {
        cJSON_Delete(obj);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory planning images");
    }
    p->changes = nc;
    p->changes[p->n++] = (struct cat_change){op, obj, main_changed, status_changed};
    switch (op) {
    case CAT_CREATE:
        p->n_create++;
        break;
    case CAT_UPDATE:
        p->n_update++;
        break;
    case CAT_DELETE:
        p->n_delete++;
        break;
    case CAT_FOREIGN:
        p->n_foreign++;
        break;
    }
    return VMOP_OK;
}

static int in_scope(const cJSON *obj, const char *namespace_)
{
    const char *ns = meta_str(obj, "namespace");
    if (!namespace_ || !*namespace_)
        return 1;
    return !ns || !strcmp(ns, namespace_);
}

static const cJSON *find_by_name(const cJSON *list, const char *name, const char *namespace_)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, list)
    {
        const char *n = meta_str(e, "name");
        if (n && !strcmp(n, name) && in_scope(e, namespace_))
            return e;
    }
    return NULL;
}

vmop_rc cat_diff(const cJSON *desired, const cJSON *existing, const char *namespace_,
                 struct cat_plan *ret_plan, struct vmop_err *err)
{
    struct cat_plan p = {0};
    const cJSON *have_list = NULL, *d, *e;
    vmop_rc rc = VMOP_OK;

    if (!ret_plan || !cJSON_IsArray(desired))
        return vmop_fail(err, VMOP_E_INVALID, "cat_diff: desired images must be a JSON array");
    if (cJSON_IsArray(existing))
        have_list = existing;
    else if (cJSON_IsObject(existing))
        have_list = cJSON_GetObjectItemCaseSensitive(existing, "items");
    else if (existing && !cJSON_IsNull(existing))
        return vmop_fail(err, VMOP_E_INVALID, "cat_diff: existing images must be a list");
    if (have_list && !cJSON_IsArray(have_list) && !cJSON_IsNull(have_list))
        return vmop_fail(err, VMOP_E_INVALID, "cat_diff: existing 'items' is not an array");
    if (cJSON_GetArraySize(desired) > CAT_MAX_IMAGES ||
        cJSON_GetArraySize(have_list) > 4 * CAT_MAX_IMAGES)
        return vmop_fail(err, VMOP_E_TOOBIG, "cat_diff: too many images");

    /* Creates, then updates (and foreign objects, kept for last). */
    for (int pass = 0; pass < 2 && !rc; pass++) {
        cJSON_ArrayForEach(d, desired)
        {
            const char *name = meta_str(d, "name");
            const cJSON *have;
            if (!name) {
                rc = vmop_fail(err, VMOP_E_INVALID, "cat_diff: a desired image has no name");
                break;
            }
            have = find_by_name(have_list, name, namespace_);
            if (pass == 0 && !have) {
                rc = plan_add(&p, CAT_CREATE, cJSON_Duplicate(d, 1), 1, 1, err);
            } else if (pass == 1 && have && cat_is_managed(have)) {
                int main_changed =
                    labels_differ(meta_map(d, "labels"), meta_map(have, "labels")) ||
                    annotations_differ(meta_map(d, "annotations"), meta_map(have, "annotations")) ||
                    spec_differs(d, have);
                int st = status_differs(cJSON_GetObjectItemCaseSensitive(d, "status"),
                                        cJSON_GetObjectItemCaseSensitive(have, "status"));
                cJSON *u = NULL;
                if (st < 0) {
                    rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory comparing images");
                    break;
                }
                if (!main_changed && !st)
                    continue;
                rc = build_update(d, have, &u, err);
                if (!rc)
                    rc = plan_add(&p, CAT_UPDATE, u, main_changed, st, err);
            }
            if (rc)
                break;
        }
    }
    /* Deletes: managed objects in scope that are no longer desired. */
    cJSON_ArrayForEach(e, have_list)
    {
        const char *name = meta_str(e, "name");
        if (rc)
            break;
        if (!name || !in_scope(e, namespace_) || !cat_is_managed(e))
            continue;
        if (!find_by_name(desired, name, NULL))
            rc = plan_add(&p, CAT_DELETE, cJSON_Duplicate(e, 1), 0, 0, err);
    }
    cJSON_ArrayForEach(d, desired)
    {
        const cJSON *have;
        if (rc)
            break;
        have = find_by_name(have_list, meta_str(d, "name"), namespace_);
        if (have && !cat_is_managed(have))
            rc = plan_add(&p, CAT_FOREIGN, cJSON_Duplicate(d, 1), 0, 0, err);
    }
    if (rc) {
        cat_plan_free(&p);
        return rc;
    }
    *ret_plan = p;
    return VMOP_OK;
}
