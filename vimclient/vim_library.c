/* vim_library.c: Content Library over REST (vAPI): list and find libraries, list and read items,
 * deploy an OVF or VM-template item.
 *
 * Owns: the request bodies (built with cJSON, never printf) and the decoding of library, item and
 * deploy answers. Not here: the REST session and error mapping (vim_rest.c).
 *
 * vAPI facts handled here (vCenter's /rest API; the simulator follows them):
 *  - library and item ids go into paths as "id:<id>" for /rest/com/vmware/... resources, but
 *    bare for /rest/vcenter/vm-template/library-items/<id>, whose action parameter is "action="
 *    where the com.vmware resources use "~action=".
 *  - `~action=find` matches library names case-insensitively on some servers: the exact name is
 *    checked here.
 *  - An OVF deploy reports failure inside an HTTP 200 (value.succeeded false or absent, with
 *    value.error.errors[]): that is an error (vim_rest_parse_ovf_deploy).
 *  - After a VM-template deploy the result is checked with plain vim25 reads: a VM that reads
 *    back as a template is turned into a VM with MarkAsVirtualMachine (into the requested pool),
 *    and a VM asked to be powered on that is not is powered on. Both are no-ops on a vCenter that
 *    honours the deploy spec; they make the documented post-condition hold everywhere.
 */
#include "vim_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIB_PATH       "/rest/com/vmware/content/library"
#define ITEM_PATH      "/rest/com/vmware/content/library/item"
#define OVF_DEPLOY     "/rest/com/vmware/vcenter/ovf/library-item/id:"
#define VMTX_DEPLOY    "/rest/vcenter/vm-template/library-items/"
#define LIB_MAX_IDS    10000 /* libraries, or items in one library, that we read */
#define LIB_MAX_ID_LEN 256   /* one library or item id */
#define LIB_PATH_MAX   1024

/* ---- small helpers ------------------------------------------------------------------------- */

/* Appends s percent-encoded (everything but RFC 3986 unreserved characters). */
static void add_escaped(struct vbuf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '.' || *p == '_' || *p == '~') {
            vbuf_add(b, p, 1);
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            vbuf_add(b, e, 3);
        }
    }
}

vmop_rc vim_lib_check_id(const char *what, const char *id, struct vmop_err *err)
{
    if (!id || !*id)
        return vmop_fail(err, VMOP_E_INVALID, "%s id is empty", what);
    if (strlen(id) > LIB_MAX_ID_LEN)
        return vmop_fail(err, VMOP_E_INVALID, "%s id is longer than %d bytes", what,
                         LIB_MAX_ID_LEN);
    /* Ids are UUID-like. Escaping alone does not stop a server that decodes %2F before routing
     * (Go's ServeMux then "cleans" ../ away), so path characters are refused outright. */
    for (const char *p = id; *p; p++)
        if (*p == '/' || *p == '\\' || (unsigned char)*p < 0x20 || *p == 0x7f)
            return vmop_fail(err, VMOP_E_INVALID, "%s id '%.64s' holds a path character", what, id);
    if (!strcmp(id, ".") || !strcmp(id, ".."))
        return vmop_fail(err, VMOP_E_INVALID, "%s id '%s' is not an id", what, id);
    return VMOP_OK;
}

vmop_rc vim_lib_path(struct vbuf *b, size_t max, const char *prefix, const char *id,
                     const char *suffix, struct vmop_err *err)
{
    vbuf_init(b, max);
    vbuf_adds(b, prefix);
    add_escaped(b, id);
    if (suffix)
        vbuf_adds(b, suffix);
    if (vbuf_error(b))
        return vmop_fail(err, vbuf_error(b), "request path too long");
    return VMOP_OK;
}

static vmop_rc build_path(struct vbuf *b, const char *prefix, const char *id, const char *suffix,
                          struct vmop_err *err)
{
    return vim_lib_path(b, LIB_PATH_MAX, prefix, id, suffix, err);
}

/* strdup of a JSON string member, NULL when absent. Sets *oom on allocation failure. */
static char *dup_member(const cJSON *obj, const char *name, int *oom)
{
    return vim_dup_opt(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, name)), oom);
}

/* GET <prefix><id> into *ret_value, which must be a JSON object (cJSON_Delete it). `what` names
 * the object in errors ("library item"). */
static vmop_rc get_object(struct vim_client *c, const char *prefix, const char *what,
                          const char *id, cJSON **ret_value, struct vmop_err *err)
{
    struct vbuf path;
    cJSON *value = NULL;
    vmop_rc rc;

    rc = build_path(&path, prefix, id, NULL, err);
    if (rc)
        goto out;
    rc = vim_rest_call(c, "GET", vbuf_str(&path), NULL, &value, err);
    if (rc)
        goto out;
    if (!cJSON_IsObject(value)) {
        rc = vmop_fail(err, VMOP_E_PROTO, "%s '%s': the answer is not an object", what, id);
        goto out;
    }
    *ret_value = value;
    value = NULL;
out:
    cJSON_Delete(value);
    vbuf_free(&path);
    return rc;
}

/* strdup of the "id" member, else of `id`. Sets *oom on allocation failure. */
static char *dup_id(const cJSON *obj, const char *id, int *oom)
{
    char *d = dup_member(obj, "id", oom);
    if (!d && !*oom && !(d = strdup(id)))
        *oom = 1;
    return d;
}

/* Checks that value is an array of at most LIB_MAX_IDS strings. */
static vmop_rc check_id_array(const cJSON *value, const char *what, struct vmop_err *err)
{
    const cJSON *e;
    int n;

    if (!value) /* the simulator omits an empty "value" */
        return VMOP_OK;
    if (!cJSON_IsArray(value))
        return vmop_fail(err, VMOP_E_PROTO, "%s: the answer is not a list of ids", what);
    n = cJSON_GetArraySize(value);
    if (n > LIB_MAX_IDS)
        return vmop_fail(err, VMOP_E_TOOBIG, "%s: %d ids, more than the %d we read", what, n,
                         LIB_MAX_IDS);
    cJSON_ArrayForEach(e, value)
    {
        if (!cJSON_IsString(e) || vim_lib_check_id("listed", e->valuestring, NULL))
            return vmop_fail(err, VMOP_E_PROTO, "%s: the answer holds a bad id", what);
    }
    return VMOP_OK;
}

/* Reads one listed id (fn's ud holds the list it fills). VMOP_E_NOT_FOUND: the id was deleted
 * since the listing. */
typedef vmop_rc (*read_listed_fn)(struct vim_client *c, const char *id, void *ud,
                                  struct vmop_err *err);

/* Calls fn for every id of `ids` (checked by check_id_array; NULL: none) in order, skipping ids
 * deleted since the listing. Stops at the first other error: rc, and fn's message in err. */
static vmop_rc read_listed(struct vim_client *c, const cJSON *ids, read_listed_fn fn, void *ud,
                           struct vmop_err *err)
{
    const cJSON *e;

    cJSON_ArrayForEach(e, ids)
    {
        struct vmop_err e2 = {0};
        vmop_rc rc = fn(c, e->valuestring, ud, &e2);
        if (rc == VMOP_E_NOT_FOUND) /* deleted since the listing */
            continue;
        if (rc) {
            if (err && !err->rc)
                *err = e2;
            return rc;
        }
    }
    return VMOP_OK;
}

/* ---- libraries ----------------------------------------------------------------------------- */

static void library_clear(struct vim_library *l)
{
    free(l->id);
    free(l->name);
    free(l->type);
    memset(l, 0, sizeof(*l));
}

void vim_library_list_free(struct vim_library_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        library_clear(&l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

/* GET library/id:<id> into *ret (fields owned by it). */
static vmop_rc library_get(struct vim_client *c, const char *id, struct vim_library *ret,
                           struct vmop_err *err)
{
    struct vim_library l = {0};
    cJSON *value = NULL;
    int oom = 0;
    vmop_rc rc;

    rc = get_object(c, LIB_PATH "/id:", "content library", id, &value, err);
    if (rc)
        goto out;
    l.id = dup_id(value, id, &oom);
    l.name = dup_member(value, "name", &oom);
    l.type = dup_member(value, "type", &oom);
    if (oom) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory reading content library '%s'", id);
        goto out;
    }
    if (!l.name) {
        rc = vmop_fail(err, VMOP_E_PROTO, "content library '%s' has no name", id);
        goto out;
    }
    *ret = l;
    memset(&l, 0, sizeof(l));
out:
    library_clear(&l);
    cJSON_Delete(value);
    return rc;
}

struct library_read {
    struct vim_library_list *list; /* items has a slot for every listed id */
    const char *exact_name;        /* NULL: keep every library */
};

/* read_listed_fn: one library into the next slot of r->list, kept if its name is wanted. */
static vmop_rc read_library(struct vim_client *c, const char *id, void *ud, struct vmop_err *err)
{
    struct library_read *r = ud;
    struct vim_library *l = &r->list->items[r->list->n];
    vmop_rc rc = library_get(c, id, l, err);

    if (rc)
        return rc;
    if (r->exact_name && strcmp(l->name, r->exact_name) != 0)
        library_clear(l);
    else
        r->list->n++;
    return VMOP_OK;
}

/* Reads the details of every id of `ids` into a list; ids that vanish meanwhile are skipped.
 * When `exact_name` is set, only libraries with exactly that name are kept. */
static vmop_rc libraries_from_ids(struct vim_client *c, const cJSON *ids, const char *exact_name,
                                  struct vim_library_list *ret_list, struct vmop_err *err)
{
    struct vim_library_list list = {0};
    struct library_read r = {&list, exact_name};
    vmop_rc rc;
    int n = cJSON_GetArraySize(ids);

    if (n > 0) {
        list.items = calloc((size_t)n, sizeof(*list.items));
        if (!list.items)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory for %d libraries", n);
    }
    rc = read_listed(c, ids, read_library, &r, err);
    if (rc)
        goto out;
    *ret_list = list;
    memset(&list, 0, sizeof(list));
out:
    vim_library_list_free(&list);
    return rc;
}

vmop_rc vim_library_list(struct vim_client *c, struct vim_library_list *ret_list,
                         struct vmop_err *err)
{
    cJSON *ids = NULL;
    vmop_rc rc;

    if (!c || !ret_list)
        return vmop_fail(err, VMOP_E_INVALID, "vim_library_list: bad arguments");
    rc = vim_rest_call(c, "GET", LIB_PATH, NULL, &ids, err);
    if (!rc)
        rc = check_id_array(ids, "listing content libraries", err);
    if (!rc)
        rc = libraries_from_ids(c, ids, NULL, ret_list, err);
    cJSON_Delete(ids);
    return rc;
}

vmop_rc vim_library_find(struct vim_client *c, const char *name, char **ret_id,
                         struct vmop_err *err)
{
    struct vim_library_list list = {0};
    cJSON *body = NULL, *spec, *ids = NULL;
    vmop_rc rc;

    if (!c || !name || !*name || !ret_id)
        return vmop_fail(err, VMOP_E_INVALID, "vim_library_find: a library name is required");
    body = cJSON_CreateObject();
    spec = cJSON_AddObjectToObject(body, "spec");
    if (!spec || !cJSON_AddStringToObject(spec, "name", name)) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory building a library search");
        goto out;
    }
    rc = vim_rest_call(c, "POST", LIB_PATH "?~action=find", body, &ids, err);
    if (!rc)
        rc = check_id_array(ids, "finding a content library", err);
    if (!rc)
        rc = libraries_from_ids(c, ids, name, &list, err);
    if (rc)
        goto out;
    if (list.n == 0) {
        rc = vmop_fail(err, VMOP_E_NOT_FOUND, "no content library is named '%s'", name);
        goto out;
    }
    *ret_id = list.items[0].id;
    list.items[0].id = NULL;
out:
    vim_library_list_free(&list);
    cJSON_Delete(ids);
    cJSON_Delete(body);
    return rc;
}

/* ---- items --------------------------------------------------------------------------------- */

static void item_clear(struct vim_library_item *it)
{
    free(it->id);
    free(it->library_id);
    free(it->name);
    free(it->description);
    free(it->type_str);
    free(it->content_version);
    free(it->creation_time);
    free(it->last_modified_time);
    memset(it, 0, sizeof(*it));
}

void vim_library_item_free(struct vim_library_item *it)
{
    if (!it)
        return;
    item_clear(it);
    free(it);
}

void vim_library_item_list_free(struct vim_library_item_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        item_clear(&l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

static enum vim_item_type item_type_of(const char *s)
{
    if (!s)
        return VIM_ITEM_OTHER;
    if (!strcmp(s, "ovf"))
        return VIM_ITEM_OVF;
    if (!strcmp(s, "vm-template"))
        return VIM_ITEM_VM_TEMPLATE;
    return VIM_ITEM_OTHER;
}

static vmop_rc item_get_into(struct vim_client *c, const char *id, struct vim_library_item *ret,
                             struct vmop_err *err)
{
    struct vim_library_item it = {0};
    cJSON *value = NULL;
    const cJSON *size;
    int oom = 0;
    vmop_rc rc;

    rc = get_object(c, ITEM_PATH "/id:", "library item", id, &value, err);
    if (rc)
        goto out;
    it.id = dup_id(value, id, &oom);
    it.library_id = dup_member(value, "library_id", &oom);
    it.name = dup_member(value, "name", &oom);
    it.description = dup_member(value, "description", &oom);
    it.type_str = dup_member(value, "type", &oom);
    it.content_version = dup_member(value, "content_version", &oom);
    it.creation_time = dup_member(value, "creation_time", &oom);
    it.last_modified_time = dup_member(value, "last_modified_time", &oom);
    if (oom) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory reading library item '%s'", id);
        goto out;
    }
    if (!it.name) {
        rc = vmop_fail(err, VMOP_E_PROTO, "library item '%s' has no name", id);
        goto out;
    }
    it.type = item_type_of(it.type_str);
    size = cJSON_GetObjectItemCaseSensitive(value, "size");
    it.size = cJSON_IsNumber(size) && size->valuedouble >= 0 ? (long long)size->valuedouble : -1;
    *ret = it;
    memset(&it, 0, sizeof(it));
out:
    item_clear(&it);
    cJSON_Delete(value);
    return rc;
}

vmop_rc vim_library_item_get(struct vim_client *c, const char *item_id,
                             struct vim_library_item **ret_item, struct vmop_err *err)
{
    struct vim_library_item *it;
    struct vmop_err e2 = {0};
    vmop_rc rc;

    if (!c || !ret_item)
        return vmop_fail(err, VMOP_E_INVALID, "vim_library_item_get: bad arguments");
    rc = vim_lib_check_id("library item", item_id, err);
    if (rc)
        return rc;
    it = calloc(1, sizeof(*it));
    if (!it)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory for a library item");
    rc = item_get_into(c, item_id, it, &e2);
    if (rc) {
        free(it);
        if (rc == VMOP_E_NOT_FOUND)
            return vmop_fail_fault(err, rc, e2.fault, e2.http_status,
                                   "library item '%s' not found (%s)", item_id, e2.msg);
        if (err && !err->rc)
            *err = e2;
        return rc;
    }
    *ret_item = it;
    return VMOP_OK;
}

/* read_listed_fn: one item into the next slot of the vim_library_item_list ud. */
static vmop_rc read_item(struct vim_client *c, const char *id, void *ud, struct vmop_err *err)
{
    struct vim_library_item_list *list = ud;
    vmop_rc rc = item_get_into(c, id, &list->items[list->n], err);

    if (!rc)
        list->n++;
    return rc;
}

vmop_rc vim_library_items(struct vim_client *c, const char *library_id,
                          struct vim_library_item_list *ret_list, struct vmop_err *err)
{
    struct vim_library_item_list list = {0};
    struct vmop_err e2 = {0};
    struct vbuf path;
    cJSON *ids = NULL;
    vmop_rc rc;
    int n;

    if (!c || !ret_list)
        return vmop_fail(err, VMOP_E_INVALID, "vim_library_items: bad arguments");
    rc = vim_lib_check_id("content library", library_id, err);
    if (rc)
        return rc;
    rc = build_path(&path, ITEM_PATH "?library_id=", library_id, NULL, err);
    if (rc)
        goto out;
    rc = vim_rest_call(c, "GET", vbuf_str(&path), NULL, &ids, &e2);
    if (rc == VMOP_E_NOT_FOUND) {
        rc = vmop_fail_fault(err, rc, e2.fault, e2.http_status,
                             "content library '%s' not found (%s)", library_id, e2.msg);
        goto out;
    }
    if (rc && err && !err->rc)
        *err = e2;
    if (!rc)
        rc = check_id_array(ids, "listing library items", err);
    if (rc)
        goto out;
    n = cJSON_GetArraySize(ids);
    if (n > 0 && !(list.items = calloc((size_t)n, sizeof(*list.items)))) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory for %d library items", n);
        goto out;
    }
    rc = read_listed(c, ids, read_item, &list, err);
    if (rc)
        goto out;
    *ret_list = list;
    memset(&list, 0, sizeof(list));
out:
    vim_library_item_list_free(&list);
    cJSON_Delete(ids);
    vbuf_free(&path);
    return rc;
}

/* ---- deploy -------------------------------------------------------------------------------- */

vmop_rc vim_rest_parse_ovf_deploy(const cJSON *value, struct vim_moref *ret_vm,
                                  struct vmop_err *err)
{
    const cJSON *succeeded = cJSON_GetObjectItemCaseSensitive(value, "succeeded");
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(value, "resource_id");
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "type"));
    const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "id"));
    struct vim_moref vm;

    if (!cJSON_IsObject(value))
        return vmop_fail(err, VMOP_E_PROTO, "OVF deploy: the answer holds no result");
    if (!cJSON_IsTrue(succeeded)) {
        const cJSON *errors = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(value, "error"), "errors");
        const cJSON *e;
        const char *fault = NULL;
        struct vbuf msg;

        vbuf_init(&msg, 512);
        cJSON_ArrayForEach(e, errors)
        {
            const cJSON *inner = cJSON_GetObjectItemCaseSensitive(e, "error");
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "message");
            const char *cls =
                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(inner, "@class"));
            const cJSON *mm;
            if (!fault && cls && *cls)
                fault = strrchr(cls, '.') && strrchr(cls, '.')[1] ? strrchr(cls, '.') + 1 : cls;
            cJSON_ArrayForEach(mm, cJSON_GetObjectItemCaseSensitive(inner, "messages"))
            {
                const char *t =
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(mm, "default_message"));
                if (t && *t && msg.len < 400)
                    vbuf_addf(&msg, "%s%.*s", msg.len ? "; " : "", (int)(400 - msg.len), t);
            }
            {
                const char *t =
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "default_message"));
                if (t && *t && msg.len < 400)
                    vbuf_addf(&msg, "%s%.*s", msg.len ? "; " : "", (int)(400 - msg.len), t);
            }
        }
        vmop_fail_fault(err, VMOP_E_FAULT, fault ? fault : "error", 200,
                        "OVF deploy failed (reported inside HTTP 200): %s",
                        msg.len ? vbuf_str(&msg) : "no error message given");
        vbuf_free(&msg);
        return VMOP_E_FAULT;
    }
    if (!id || vim_moref_set(&vm, type && *type ? type : "VirtualMachine", id))
        return vmop_fail(err, VMOP_E_PROTO, "OVF deploy succeeded but names no usable resource");
    if (ret_vm)
        *ret_vm = vm;
    return VMOP_OK;
}

static vmop_rc validate_deploy(const char *item_id, const struct vim_deploy_spec *spec,
                               struct vmop_err *err)
{
    vmop_rc rc = vim_lib_check_id("library item", item_id, err);
    if (rc)
        return rc;
    if (!spec || !spec->name || !*spec->name)
        return vmop_fail(err, VMOP_E_INVALID, "deploy: a VM name is required");
    if (!spec->resource_pool_id || !*spec->resource_pool_id)
        return vmop_fail(err, VMOP_E_INVALID, "deploy: a resource pool is required");
    if (!spec->folder_id || !*spec->folder_id)
        return vmop_fail(err, VMOP_E_INVALID, "deploy: a VM folder is required");
    if (spec->n_net_mappings && !spec->net_mappings)
        return vmop_fail(err, VMOP_E_INVALID, "deploy: network mappings are missing");
    for (size_t i = 0; i < spec->n_net_mappings; i++) {
        const struct vim_net_mapping *m = &spec->net_mappings[i];
        if (!m->ovf_network || !*m->ovf_network || !m->network_id || !*m->network_id)
            return vmop_fail(err, VMOP_E_INVALID,
                             "deploy: network mapping %zu needs an OVF network and a target", i);
    }
    return VMOP_OK;
}

/* Adds name: value when value is set and non-empty. Returns 0 on failure. */
static int add_opt_string(cJSON *obj, const char *name, const char *value)
{
    return !value || !*value || cJSON_AddStringToObject(obj, name, value) != NULL;
}

static vmop_rc deploy_ovf(struct vim_client *c, const char *item_id,
                          const struct vim_deploy_spec *spec, struct vim_moref *ret_vm,
                          struct vmop_err *err)
{
    cJSON *body = cJSON_CreateObject(), *value = NULL;
    cJSON *ds = cJSON_AddObjectToObject(body, "deployment_spec");
    cJSON *target = cJSON_AddObjectToObject(body, "target");
    cJSON *maps = NULL;
    struct vbuf path = {0};
    int ok = ds && target && cJSON_AddStringToObject(ds, "name", spec->name) &&
             cJSON_AddTrueToObject(ds, "accept_all_EULA") &&
             add_opt_string(ds, "default_datastore_id", spec->datastore_id) &&
             cJSON_AddStringToObject(target, "resource_pool_id", spec->resource_pool_id) &&
             cJSON_AddStringToObject(target, "folder_id", spec->folder_id) &&
             add_opt_string(target, "host_id", spec->host_id);
    vmop_rc rc;

    if (ok && spec->n_net_mappings)
        ok = (maps = cJSON_AddArrayToObject(ds, "network_mappings")) != NULL;
    for (size_t i = 0; ok && i < spec->n_net_mappings; i++) {
        cJSON *m = cJSON_CreateObject();
        if (!m || !cJSON_AddItemToArray(maps, m)) {
            cJSON_Delete(m);
            ok = 0;
            break;
        }
        ok = cJSON_AddStringToObject(m, "key", spec->net_mappings[i].ovf_network) &&
             cJSON_AddStringToObject(m, "value", spec->net_mappings[i].network_id);
    }
    if (!ok) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory building an OVF deploy request");
        goto out;
    }
    rc = build_path(&path, OVF_DEPLOY, item_id, "?~action=deploy", err);
    if (!rc)
        rc = vim_rest_call(c, "POST", vbuf_str(&path), body, &value, err);
    if (!rc)
        rc = vim_rest_parse_ovf_deploy(value, ret_vm, err);
out:
    cJSON_Delete(value);
    cJSON_Delete(body);
    vbuf_free(&path);
    return rc;
}

/* Reads config.template and runtime.powerState of a freshly deployed VM. */
static vmop_rc read_template_power(struct vim_client *c, const struct vim_moref *vm,
                                   int *ret_template, int *ret_on, struct vmop_err *err)
{
    static const char *const paths[] = {"config.template", "runtime.powerState", NULL};
    struct vim_objects objs = {0};
    char *tmpl = NULL, *power = NULL;
    vmop_rc rc;

    rc = vim_retrieve(c, vm, "VirtualMachine", paths, 0, &objs, err);
    if (rc)
        goto out;
    if (objs.n != 1) {
        rc = vmop_fail(err, VMOP_E_PROTO, "reading deployed VM %s: %zu objects returned", vm->value,
                       objs.n);
        goto out;
    }
    tmpl = vim_xml_text(vim_object_prop(&objs.items[0], "config.template"));
    power = vim_xml_text(vim_object_prop(&objs.items[0], "runtime.powerState"));
    *ret_template = tmpl && !strcmp(tmpl, "true");
    *ret_on = power && !strcmp(power, "poweredOn");
out:
    free(tmpl);
    free(power);
    vim_objects_free(&objs);
    return rc;
}

static vmop_rc deploy_vm_template(struct vim_client *c, const char *item_id,
                                  const struct vim_deploy_spec *spec, struct vim_moref *ret_vm,
                                  struct vmop_err *err)
{
    cJSON *body = cJSON_CreateObject(), *value = NULL;
    cJSON *s = cJSON_AddObjectToObject(body, "spec");
    cJSON *placement = cJSON_AddObjectToObject(s, "placement");
    cJSON *storage = NULL;
    struct vbuf path = {0};
    struct vim_moref vm, pool;
    int is_template = 0, is_on = 0;
    int ok = s && placement && cJSON_AddStringToObject(s, "name", spec->name) &&
             cJSON_AddStringToObject(placement, "folder", spec->folder_id) &&
             cJSON_AddStringToObject(placement, "resource_pool", spec->resource_pool_id) &&
             add_opt_string(placement, "host", spec->host_id) &&
             cJSON_AddBoolToObject(s, "powered_on", spec->power_on ? 1 : 0);
    vmop_rc rc;

    if (ok && spec->datastore_id && *spec->datastore_id)
        ok = (storage = cJSON_AddObjectToObject(s, "disk_storage")) &&
             cJSON_AddStringToObject(storage, "datastore", spec->datastore_id);
    if (!ok) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory building a VM template deploy request");
        goto out;
    }
    if (spec->n_net_mappings) {
        /* The vm-template API maps NICs by device key (hardware_customization), not by OVF
         * network name: refuse rather than ignore. Re-back the NICs with a reconfigure. */
        rc = vmop_fail(err, VMOP_E_UNSUPPORTED,
                       "library item '%s' is a VM template: network mappings apply to OVF items "
                       "only (re-back its NICs with a reconfigure)",
                       item_id);
        goto out;
    }
    rc = vim_moref_set(&pool, "ResourcePool", spec->resource_pool_id);
    if (rc) {
        rc = vmop_fail(err, VMOP_E_INVALID, "deploy: bad resource pool id");
        goto out;
    }
    /* No "id:" prefix and "action=", not "~action=", on this resource. */
    rc = build_path(&path, VMTX_DEPLOY, item_id, "?action=deploy", err);
    if (!rc)
        rc = vim_rest_call(c, "POST", vbuf_str(&path), body, &value, err);
    if (rc)
        goto out;
    if (!cJSON_IsString(value) || vim_moref_set(&vm, "VirtualMachine", value->valuestring)) {
        rc = vmop_fail(err, VMOP_E_PROTO, "VM template deploy: the answer names no VM");
        goto out;
    }
    /* Post-conditions, with ordinary vim25 calls (see the file comment). */
    rc = read_template_power(c, &vm, &is_template, &is_on, err);
    if (!rc && is_template)
        rc = vim_vm_mark_as_vm(c, &vm, &pool, err);
    if (!rc && spec->power_on && !is_on)
        rc = vim_vm_power(c, &vm, VIM_OP_POWER_ON, err);
    if (rc) {
        /* Keep the cause; the VM exists, so say which one. */
        if (err && strlen(err->msg) + 64 < sizeof(err->msg)) {
            size_t l = strlen(err->msg);
            snprintf(err->msg + l, sizeof(err->msg) - l, " (after deploying VM %s)", vm.value);
        }
        goto out;
    }
    if (ret_vm)
        *ret_vm = vm;
out:
    cJSON_Delete(value);
    cJSON_Delete(body);
    vbuf_free(&path);
    return rc;
}

vmop_rc vim_library_deploy(struct vim_client *c, const char *item_id,
                           const struct vim_deploy_spec *spec, struct vim_moref *ret_vm,
                           struct vmop_err *err)
{
    struct vim_library_item *it = NULL;
    struct vmop_err e2 = {0};
    vmop_rc rc;

    if (!c)
        return vmop_fail(err, VMOP_E_INVALID, "vim_library_deploy: no client");
    rc = validate_deploy(item_id, spec, err);
    if (rc)
        return rc;
    rc = vim_library_item_get(c, item_id, &it, err);
    if (rc)
        goto out;
    switch (it->type) {
    case VIM_ITEM_OVF:
        rc = deploy_ovf(c, item_id, spec, ret_vm, &e2);
        break;
    case VIM_ITEM_VM_TEMPLATE:
        rc = deploy_vm_template(c, item_id, spec, ret_vm, &e2);
        break;
    default:
        rc = vmop_fail(err, VMOP_E_UNSUPPORTED,
                       "library item '%s' is of type '%s': only ovf and vm-template items deploy",
                       item_id, it->type_str ? it->type_str : "unknown");
        break;
    }
    if (rc && e2.rc) /* say which deploy failed, keeping the cause's code and fault */
        vmop_fail_fault(err, e2.rc, e2.fault, e2.http_status,
                        "deploying %s item '%s' as '%s' into pool %s, folder %s: %s",
                        it->type_str ? it->type_str : "library", it->name, spec->name,
                        spec->resource_pool_id, spec->folder_id, e2.msg);
out:
    vim_library_item_free(it);
    return rc;
}
