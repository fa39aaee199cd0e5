/* vim_library_ovf.c: reading what a Content Library item is made of, for the image catalog:
 * an OVF item's .ovf descriptor (download session) and a VM-template item's template VM facts.
 *
 * Owns: the download-session protocol (file list, create, prepare, bounded wait for PREPARED,
 * transfer, delete) and the template-info read. Not here: the REST session (vim_rest.c), the
 * other library calls (vim_library.c), what the descriptor means (operator/ovf.c).
 *
 * vAPI facts (vCenter's /rest API; the govmomi simulator implements the same calls):
 *  - GET /rest/com/vmware/content/library/item/file?library_item_id=<id> lists {name, size, ...}.
 *  - POST /rest/com/vmware/content/library/item/download-session {"create_spec":
 *    {"library_item_id": <id>}} gives a session id; DELETE .../download-session/id:<s> ends it.
 *  - POST /rest/com/vmware/content/library/item/downloadsession/file/id:<s>?~action=prepare
 *    {"file_name": <name>} starts preparing; ~action=get {"file_name"} reports {status:
 *    UNPREPARED|PREPARE_REQUESTED|PREPARED|ERROR, download_endpoint: {uri}, error_message}.
 *    vCenter prepares asynchronously; the simulator answers PREPARED at once.
 *  - The endpoint (".../cls/data/<uuid>/<name>" on vCenter, "/rest/com/vmware/cis/data/<s>/<name>"
 *    on the simulator) wants the REST session header.
 */
#include "vim_internal.h"
#include "vmop_clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define FILE_PATH       "/rest/com/vmware/content/library/item/file?library_item_id="
#define DL_SESSION      "/rest/com/vmware/content/library/item/download-session"
#define DL_SESSION_FILE "/rest/com/vmware/content/library/item/downloadsession/file/id:"
#define VMTX_ITEM       "/rest/vcenter/vm-template/library-items/"
#define PATH_MAX_LEN    2048
#define MAX_FILES       10000

/* ---- helpers ------------------------------------------------------------------------------- */

static vmop_rc build_path(struct vbuf *b, const char *prefix, const char *id, const char *suffix,
                          struct vmop_err *err)
{
    return vim_lib_path(b, PATH_MAX_LEN, prefix, id, suffix, err);
}

/* Failures that say nothing about the item: the caller must not read them as "not exposed". */
static int is_hard_failure(vmop_rc rc)
{
    return rc == VMOP_E_TRANSPORT || rc == VMOP_E_TLS || rc == VMOP_E_AUTH ||
           rc == VMOP_E_TIMEOUT || rc == VMOP_E_CANCELED || rc == VMOP_E_NOMEM ||
           rc == VMOP_E_RATELIMIT || rc == VMOP_E_INVALID;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- OVF descriptor ------------------------------------------------------------------------ */

/* The .ovf file of the listing (the first whose name ends in ".ovf", case-insensitively). */
static const cJSON *find_ovf_file(const cJSON *files)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, files)
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "name"));
        size_t n = name ? strlen(name) : 0;
        if (n > 4 && !strcasecmp(name + n - 4, ".ovf"))
            return f;
    }
    return NULL;
}

/* The path (and query) of a download endpoint URI, checked; *ret_path is malloc'd. */
static vmop_rc endpoint_path(const char *uri, char **ret_path, struct vmop_err *err)
{
    const char *p = uri;

    if (!uri || !*uri)
        return vmop_fail(err, VMOP_E_PROTO, "the download endpoint has no URI");
    if (strncmp(p, "http://", 7) == 0 || strncmp(p, "https://", 8) == 0) {
        p = strchr(strstr(p, "://") + 3, '/');
        if (!p)
            return vmop_fail(err, VMOP_E_PROTO, "the download endpoint URI has no path");
    } else if (*p != '/') {
        return vmop_fail(err, VMOP_E_PROTO, "the download endpoint URI is not http(s)");
    }
    if (strlen(p) > PATH_MAX_LEN)
        return vmop_fail(err, VMOP_E_PROTO, "the download endpoint URI is too long");
    for (const char *q = p; *q; q++)
        if ((unsigned char)*q <= 0x20 || *q == 0x7f)
            return vmop_fail(err, VMOP_E_PROTO, "the download endpoint URI holds a bad character");
    *ret_path = strdup(p);
    if (!*ret_path)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    return VMOP_OK;
}

/* prepare / get on one file of a download session; *ret_value: the DownloadFile object. */
static vmop_rc session_file_call(struct vim_client *c, const char *sid, const char *action,
                                 const char *file, cJSON **ret_value, struct vmop_err *err)
{
    struct vbuf path;
    cJSON *body = cJSON_CreateObject();
    vmop_rc rc;

    if (!body || !cJSON_AddStringToObject(body, "file_name", file)) {
        cJSON_Delete(body);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    }
    rc = build_path(&path, DL_SESSION_FILE, sid, NULL, err);
    if (!rc) {
        vbuf_adds(&path, "?~action=");
        vbuf_adds(&path, action);
        if (vbuf_error(&path))
            rc = vmop_fail(err, VMOP_E_TOOBIG, "request path too long");
    }
    if (!rc)
        rc = vim_rest_call(c, "POST", vbuf_str(&path), body, ret_value, err);
    cJSON_Delete(body);
    vbuf_free(&path);
    return rc;
}

/* Waits (bounded) until the file is PREPARED; *ret_uri: its download endpoint URI (malloc'd). */
static vmop_rc wait_prepared(struct vim_client *c, const char *sid, const char *file,
                             char **ret_uri, struct vmop_err *err)
{
    long long deadline = vmop_mono_ms() + (c->timeout_ms > 0 ? c->timeout_ms : 60000);
    long pause = 50;
    cJSON *v = NULL;
    vmop_rc rc = session_file_call(c, sid, "prepare", file, &v, err);

    for (;;) {
        const char *status, *uri;
        if (rc)
            goto out;
        status = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v, "status"));
        uri = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(v, "download_endpoint"), "uri"));
        if (status && !strcmp(status, "PREPARED") && uri) {
            *ret_uri = strdup(uri);
            rc = *ret_uri ? VMOP_OK : vmop_fail(err, VMOP_E_NOMEM, "out of memory");
            goto out;
        }
        if (status && !strcmp(status, "ERROR")) {
            const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(v, "error_message"), "default_message"));
            rc = vmop_fail_fault(err, VMOP_E_FAULT, "error", 0,
                                 "preparing '%.128s' for download failed%s%.256s", file,
                                 m ? ": " : "", m ? m : "");
            goto out;
        }
        if (vmop_mono_ms() + pause > deadline) {
            rc = vmop_fail(err, VMOP_E_TIMEOUT, "'%.128s' was not prepared for download in time",
                           file);
            goto out;
        }
        sleep_ms(pause);
        pause = pause < 1000 ? pause * 2 : 1000;
        cJSON_Delete(v);
        v = NULL;
        rc = session_file_call(c, sid, "get", file, &v, err);
    }
out:
    cJSON_Delete(v);
    return rc;
}

static void delete_session(struct vim_client *c, const char *sid)
{
    struct vmop_err ignored = {0};
    struct vbuf path;
    if (build_path(&path, DL_SESSION "/id:", sid, NULL, &ignored) == VMOP_OK)
        vim_rest_call(c, "DELETE", vbuf_str(&path), NULL, NULL, &ignored);
    vbuf_free(&path);
}

vmop_rc vim_library_item_ovf(struct vim_client *c, const char *item_id, size_t max_bytes,
                             char **ret_data, size_t *ret_len, struct vmop_err *err)
{
    struct vbuf path = {0};
    cJSON *files = NULL, *body = NULL, *spec, *sid = NULL;
    const cJSON *f, *size;
    char *file = NULL, *uri = NULL, *dl_path = NULL, *data = NULL;
    size_t len = 0;
    vmop_rc rc;

    if (!c || !ret_data || !ret_len)
        return vmop_fail(err, VMOP_E_INVALID, "vim_library_item_ovf: bad arguments");
    rc = vim_lib_check_id("library item", item_id, err);
    if (rc)
        return rc;
    if (!max_bytes)
        max_bytes = VIM_OVF_MAX_DEFAULT;

    /* 1. which file is the descriptor */
    rc = build_path(&path, FILE_PATH, item_id, NULL, err);
    if (!rc)
        rc = vim_rest_call(c, "GET", vbuf_str(&path), NULL, &files, err);
    if (rc)
        goto out;
    if (files && (!cJSON_IsArray(files) || cJSON_GetArraySize(files) > MAX_FILES)) {
        rc =
            vmop_fail(err, VMOP_E_PROTO, "library item '%s': the file list is not a list", item_id);
        goto out;
    }
    f = find_ovf_file(files);
    if (!f) {
        rc = vmop_fail(err, VMOP_E_NOT_FOUND, "library item '%s' has no .ovf file", item_id);
        goto out;
    }
    size = cJSON_GetObjectItemCaseSensitive(f, "size");
    if (cJSON_IsNumber(size) && size->valuedouble > (double)max_bytes) {
        rc = vmop_fail(err, VMOP_E_TOOBIG,
                       "library item '%s': its OVF descriptor is %.0f bytes, over the %zu byte cap",
                       item_id, size->valuedouble, max_bytes);
        goto out;
    }
    file = strdup(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "name")));
    if (!file) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }

    /* 2. a download session */
    body = cJSON_CreateObject();
    spec = cJSON_AddObjectToObject(body, "create_spec");
    if (!spec || !cJSON_AddStringToObject(spec, "library_item_id", item_id)) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    rc = vim_rest_call(c, "POST", DL_SESSION, body, &sid, err);
    if (rc)
        goto out;
    if (!cJSON_IsString(sid) || vim_lib_check_id("download session", sid->valuestring, NULL)) {
        rc = vmop_fail(err, VMOP_E_PROTO, "library item '%s': no usable download session id",
                       item_id);
        cJSON_Delete(sid);
        sid = NULL;
        goto out;
    }

    /* 3. prepare the file, 4. fetch it */
    rc = wait_prepared(c, sid->valuestring, file, &uri, err);
    if (!rc)
        rc = endpoint_path(uri, &dl_path, err);
    if (rc)
        goto out;
    {
        struct vmop_err e2 = {0};
        rc = vim_rest_raw(c, "GET", dl_path, NULL, NULL, 0, max_bytes, &data, &len, &e2);
        if (rc == VMOP_E_TOOBIG)
            vmop_fail(err, rc, "library item '%.64s': its OVF descriptor is over the %zu byte cap",
                      item_id, max_bytes);
        else if (rc && err && !err->rc)
            *err = e2;
        if (rc)
            goto out;
    }
    *ret_data = data;
    *ret_len = len;
    data = NULL;
out:
    if (sid)
        delete_session(c, sid->valuestring); /* best effort: sessions also expire */
    free(data);
    free(dl_path);
    free(uri);
    free(file);
    cJSON_Delete(sid);
    cJSON_Delete(body);
    cJSON_Delete(files);
    vbuf_free(&path);
    return rc;
}

/* ---- VM-template facts --------------------------------------------------------------------- */

void vim_template_info_free(struct vim_template_info *t)
{
    if (!t)
        return;
    free(t->guest_os);
    free(t->guest_id);
    free(t->hw_version);
    free(t->firmware);
    free(t);
}

static char *prop_text(const struct vim_object *o, const char *path, int *oom)
{
    xmlNodePtr v = vim_object_prop(o, path);
    char *s;
    if (!v)
        return NULL;
    s = vim_xml_text(v);
    if (!s)
        *oom = 1;
    return s;
}

vmop_rc vim_library_item_template(struct vim_client *c, const char *item_id,
                                  struct vim_template_info **ret_info, struct vmop_err *err)
{
    static const char *const paths[] = {"config.guestId", "config.version", "config.firmware",
                                        NULL};
    struct vim_template_info *t = NULL;
    struct vim_objects objs = {0};
    struct vmop_err e2 = {0};
    struct vbuf path = {0};
    cJSON *value = NULL;
    const char *vm, *guest;
    int oom = 0;
    vmop_rc rc;

    if (!c || !ret_info)
        return vmop_fail(err, VMOP_E_INVALID, "vim_library_item_template: bad arguments");
    rc = vim_lib_check_id("library item", item_id, err);
    if (rc)
        return rc;
    t = calloc(1, sizeof(*t));
    if (!t)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");

    rc = build_path(&path, VMTX_ITEM, item_id, NULL, err);
    if (rc)
        goto out;
    rc = vim_rest_call(c, "GET", vbuf_str(&path), NULL, &value, &e2);
    if (rc) {
        if (is_hard_failure(rc)) {
            if (err && !err->rc)
                *err = e2;
            goto out;
        }
        rc = VMOP_OK; /* the server does not expose the template */
        goto done;
    }
    vm = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(value, "vm_template"));
    guest = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(value, "guest_OS"));
    if (guest && !(t->guest_os = strdup(guest))) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    if (!vm || vim_moref_set(&t->vm, "VirtualMachine", vm) != VMOP_OK)
        goto done;
    memset(&e2, 0, sizeof(e2));
    rc = vim_retrieve(c, &t->vm, "VirtualMachine", paths, 0, &objs, &e2);
    if (rc) {
        if (is_hard_failure(rc)) {
            if (err && !err->rc)
                *err = e2;
            goto out;
        }
        rc = VMOP_OK; /* the VM vanished or cannot be read: facts stay unknown */
        goto done;
    }
    if (objs.n == 1) {
        t->guest_id = prop_text(&objs.items[0], "config.guestId", &oom);
        t->hw_version = prop_text(&objs.items[0], "config.version", &oom);
        t->firmware = prop_text(&objs.items[0], "config.firmware", &oom);
        if (oom) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
            goto out;
        }
    }
done:
    *ret_info = t;
    t = NULL;
out:
    vim_template_info_free(t);
    vim_objects_free(&objs);
    cJSON_Delete(value);
    vbuf_free(&path);
    return rc;
}
