/* test_catalog_sim.c: integration tests of the image catalog's vCenter side
 * (operator/image/catalog_vc.c and vimclient/vim_library_ovf.c) against the govmomi simulator
 * (tests/vcsim): the seeded libraries give one OVF image and one VM-template image with sensible
 * status; descriptors are cached; an item added to a library appears on the next scan and its
 * removal plans a delete; a broken descriptor gives Ready False / VirtualMachineImageNotSynced; a
 * missing library is reported; the descriptor size cap holds; a dead vCenter fails the scan instead
 * of emptying the catalog; a resync of unchanged libraries reads no library, descriptor or
 * template again (counted by vimclient's per-method counters), and a changed one is read.
 *
 * One simulator serves the whole file (tests/common/sim_fixture.h: started before Check forks the
 * tests). Tests that change libraries work in a library of their own. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "check_main.h"
#include "test_file.h"
#include "catalog.h"
#include "catalog_vc.h"
#include "sim_fixture.h"
#include "vim_internal.h" /* vim_rest_call, vim_rest_raw: building test libraries */
#include "vimclient.h"

#define NOW ((time_t)1700000000)

static struct vim_client *client_for(const char *url)
{
    struct vim_config cfg = {.url = url, .connect_timeout_ms = 5000};
    return simfx_client(&cfg);
}

static char *read_testdata(const char *name, size_t *ret_len)
{
    return vmop_test_slurpf(ret_len, "%s/testdata/ovf/%s", getenv("VMOP_SOURCE_ROOT"), name);
}

static const struct cat_scan_entry *entry_named(const struct cat_scan *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->entries[i].item->name, name))
            return &s->entries[i];
    return NULL;
}

static const cJSON *image_named(const cJSON *arr, const char *display)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, arr)
    {
        const char *n =
            cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "status"), "name"));
        if (n && !strcmp(n, display))
            return o;
    }
    return NULL;
}

static const char *ready_of(const cJSON *img, const char *field)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(img, "status"), "conditions"))
    {
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "type")), "Ready"))
            return cJSON_GetStringValue(cJSON_GetObjectItem(c, field));
    }
    return NULL;
}

static const char *status_str(const cJSON *img, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItem(cJSON_GetObjectItem(img, "status"), a);
    if (b)
        x = cJSON_GetObjectItem(x, b);
    return cJSON_GetStringValue(x);
}

/* ---- building test libraries through the REST API ---------------------------------------- */

static char *create_library(struct vim_client *c, const char *name)
{
    struct vmop_err err = {0};
    cJSON *body = cJSON_CreateObject(), *spec = cJSON_AddObjectToObject(body, "create_spec"), *sb,
          *b, *id = NULL;
    char *ret;

    cJSON_AddStringToObject(spec, "name", name);
    cJSON_AddStringToObject(spec, "type", "LOCAL");
    sb = cJSON_AddArrayToObject(spec, "storage_backings");
    b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "datastore_id", vcsim_moref(simfx_sim, "datastore"));
    cJSON_AddStringToObject(b, "type", "DATASTORE");
    cJSON_AddItemToArray(sb, b);
    CK_OK(vim_rest_call(c, "POST", "/rest/com/vmware/content/local-library", body, &id, &err), err);
    ck_assert(cJSON_IsString(id));
    ret = strdup(id->valuestring);
    cJSON_Delete(id);
    cJSON_Delete(body);
    return ret;
}

/* Creates an OVF item holding data as "<name>.ovf" (create, update session, add file, PUT,
 * complete), as vCenter clients upload. Returns the item id (free it). */
static char *upload_ovf_item(struct vim_client *c, const char *lib_id, const char *name,
                             const char *data, size_t len)
{
    struct vmop_err err = {0};
    cJSON *body, *spec, *v = NULL;
    char *item, *sid, path[1024], file[256];
    const char *uri, *p;

    body = cJSON_CreateObject();
    spec = cJSON_AddObjectToObject(body, "create_spec");
    cJSON_AddStringToObject(spec, "library_id", lib_id);
    cJSON_AddStringToObject(spec, "name", name);
    cJSON_AddStringToObject(spec, "type", "ovf");
    CK_OK(vim_rest_call(c, "POST", "/rest/com/vmware/content/library/item", body, &v, &err), err);
    item = strdup(v->valuestring);
    cJSON_Delete(v);
    cJSON_Delete(body);

    body = cJSON_CreateObject();
    spec = cJSON_AddObjectToObject(body, "create_spec");
    cJSON_AddStringToObject(spec, "library_item_id", item);
    CK_OK(vim_rest_call(c, "POST", "/rest/com/vmware/content/library/item/update-session", body, &v,
                        &err),
          err);
    sid = strdup(v->valuestring);
    cJSON_Delete(v);
    cJSON_Delete(body);

    snprintf(file, sizeof(file), "%s.ovf", name);
    body = cJSON_CreateObject();
    spec = cJSON_AddObjectToObject(body, "file_spec");
    cJSON_AddStringToObject(spec, "name", file);
    cJSON_AddStringToObject(spec, "source_type", "PUSH");
    cJSON_AddNumberToObject(spec, "size", (double)len);
    snprintf(path, sizeof(path),
             "/rest/com/vmware/content/library/item/updatesession/file/id:%s?~action=add", sid);
    CK_OK(vim_rest_call(c, "POST", path, body, &v, &err), err);
    uri =
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(v, "upload_endpoint"), "uri"));
    ck_assert_ptr_nonnull(uri);
    p = strchr(strstr(uri, "://") + 3, '/');
    ck_assert_ptr_nonnull(p);
    CK_OK(vim_rest_raw(c, "PUT", p, "application/octet-stream", data, len, 0, NULL, NULL, &err),
          err);
    cJSON_Delete(v);
    cJSON_Delete(body);

    snprintf(path, sizeof(path),
             "/rest/com/vmware/content/library/item/update-session/id:%s?~action=complete", sid);
    CK_OK(vim_rest_call(c, "POST", path, NULL, NULL, &err), err);
    free(sid);
    return item;
}

static void delete_item(struct vim_client *c, const char *item)
{
    struct vmop_err err = {0};
    char path[512];
    snprintf(path, sizeof(path), "/rest/com/vmware/content/library/item/id:%s", item);
    CK_OK(vim_rest_call(c, "DELETE", path, NULL, NULL, &err), err);
}

static void scan(struct vim_client *c, struct cat_cache *cache, const struct api_library_ref *refs,
                 size_t n, struct cat_scan *ret)
{
    struct vmop_err err = {0};
    CK_OK(cat_vc_scan(c, cache, refs, n, ret, &err), err);
}

static cJSON *images_of(const struct cat_scan *s, const char *ns)
{
    struct vmop_err err = {0};
    cJSON *arr = NULL;
    CK_OK(cat_build_images(s->items, s->n, ns, NOW, &arr, &err), err);
    return arr;
}

/* ---- tests ------------------------------------------------------------------------------- */

START_TEST(seeded_images)
{
    struct vim_client *c = client_for(simfx_sim->url);
    struct cat_cache *cache = NULL;
    struct api_library_ref refs[] = {{.name = "vmop-images"}};
    struct cat_scan s = {0};
    struct cat_cache_stats st;
    struct vmop_err err = {0};
    const struct cat_scan_entry *ovf, *tmpl;
    const cJSON *img;
    cJSON *arr;

    CK_OK(cat_cache_new(&cache, &err), err);
    scan(c, cache, refs, 1, &s);
    ck_assert_uint_eq(s.n, 2);
    ck_assert_uint_eq(s.n_missing, 0);
    ovf = entry_named(&s, "vmop-tiny-ovf");
    tmpl = entry_named(&s, "vmop-tiny-tmpl");
    ck_assert_ptr_nonnull(ovf);
    ck_assert_ptr_nonnull(tmpl);
    ck_assert_msg(ovf->sync_error == NULL, "%s", ovf->sync_error);
    ck_assert_ptr_nonnull(ovf->ovf);
    ck_assert_str_eq(ovf->ovf->os_type, "ubuntu64Guest");
    ck_assert_ptr_null(tmpl->sync_error);
    ck_assert_ptr_nonnull(tmpl->tmpl);

    arr = images_of(&s, "tenant-a");
    ck_assert_int_eq(cJSON_GetArraySize(arr), 2);
    img = image_named(arr, "vmop-tiny-ovf");
    ck_assert_ptr_nonnull(img);
    ck_assert_str_eq(status_str(img, "type", NULL), "OVF");
    ck_assert_str_eq(status_str(img, "providerItemID", NULL),
                     simfx_item(simfx_sim, "vmop-tiny-ovf", NULL)->id);
    ck_assert_str_eq(status_str(img, "osInfo", "type"), "ubuntu64Guest");
    ck_assert_str_eq(status_str(img, "osInfo", "id"), "94");
    ck_assert_int_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(img, "status"), "hardwareVersion")->valueint, 13);
    ck_assert_str_eq(status_str(img, "productInfo", "product"), "vmop tiny test image");
    ck_assert_str_eq(ready_of(img, "status"), "True");
    {
        const struct vcsim_library *lib = NULL;
        simfx_item(simfx_sim, "vmop-tiny-ovf", &lib);
        ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(
                             cJSON_GetObjectItem(cJSON_GetObjectItem(img, "metadata"), "labels"),
                             CAT_LABEL_LIBRARY_ID)),
                         lib->id);
    }
    img = image_named(arr, "vmop-tiny-tmpl");
    ck_assert_ptr_nonnull(img);
    ck_assert_str_eq(status_str(img, "type", NULL), "VM");
    ck_assert_str_eq(status_str(img, "providerItemID", NULL),
                     simfx_item(simfx_sim, "vmop-tiny-tmpl", NULL)->id);
    ck_assert_str_eq(ready_of(img, "status"), "True");
    cJSON_Delete(arr);

    /* the descriptor was downloaded once; a resync of unchanged items is served from the cache */
    cat_cache_stats(cache, &st);
    ck_assert_int_eq(st.downloads, 1);
    ck_assert_int_eq(st.hits, 0);
    cat_scan_free(&s);
    scan(c, cache, refs, 1, &s);
    ck_assert_uint_eq(s.n, 2);
    ck_assert_ptr_nonnull(entry_named(&s, "vmop-tiny-ovf")->ovf);
    cat_cache_stats(cache, &st);
    ck_assert_int_eq(st.downloads, 1);
    ck_assert_int_eq(st.hits, 2);     /* the descriptor and the template's facts */
    ck_assert_uint_eq(st.entries, 2); /* idem */
    cat_scan_free(&s);
    cat_cache_free(cache);
    vim_client_free(c);
}
END_TEST

START_TEST(cluster_images_and_library_by_id)
{
    struct vim_client *c = client_for(simfx_sim->url);
    const struct vcsim_library *lib = NULL;
    struct api_library_ref refs[1];
    struct cat_scan s = {0};
    cJSON *arr;
    const cJSON *img;

    simfx_item(simfx_sim, "vmop-cluster-ovf", &lib);
    refs[0] = (struct api_library_ref){.id = lib->id};
    scan(c, NULL, refs, 1, &s);
    ck_assert_uint_eq(s.n, 1);
    arr = images_of(&s, NULL);
    img = image_named(arr, "vmop-cluster-ovf");
    ck_assert_ptr_nonnull(img);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(img, "kind")),
                     "ClusterVirtualMachineImage");
    ck_assert_ptr_null(cJSON_GetObjectItem(cJSON_GetObjectItem(img, "metadata"), "namespace"));
    ck_assert_str_eq(ready_of(img, "status"), "True");
    cJSON_Delete(arr);
    cat_scan_free(&s);
    vim_client_free(c);
}
END_TEST

START_TEST(item_added_then_removed)
{
    struct vim_client *c = client_for(simfx_sim->url);
    struct cat_cache *cache = NULL;
    struct vmop_err err = {0};
    struct cat_scan s = {0};
    struct cat_plan plan = {0};
    char libname[64], *lib_id, *efi_id, *bad_id, *data;
    struct api_library_ref refs[1];
    cJSON *want, *have = cJSON_CreateArray();
    const cJSON *o;
    size_t len;
    static const char broken[] = "<Envelope><this is not XML";

    CK_OK(cat_cache_new(&cache, &err), err);
    snprintf(libname, sizeof(libname), "catalog-test-%d", (int)getpid());
    lib_id = create_library(c, libname);
    refs[0] = (struct api_library_ref){.name = libname};

    /* empty library: nothing desired, nothing to do */
    scan(c, cache, refs, 1, &s);
    ck_assert_uint_eq(s.n, 0);
    want = images_of(&s, "tenant-a");
    CK_OK(cat_diff(want, have, "tenant-a", &plan, &err), err);
    ck_assert_uint_eq(plan.n, 0);
    cat_plan_free(&plan);
    cJSON_Delete(want);
    cat_scan_free(&s);

    /* an item is added: the next scan creates its image, with the facts of its descriptor */
    data = read_testdata("vmop-efi.ovf", &len);
    efi_id = upload_ovf_item(c, lib_id, "photon-efi", data, len);
    free(data);
    scan(c, cache, refs, 1, &s);
    ck_assert_uint_eq(s.n, 1);
    want = images_of(&s, "tenant-a");
    CK_OK(cat_diff(want, have, "tenant-a", &plan, &err), err);
    ck_assert_uint_eq(plan.n, 1);
    ck_assert_int_eq(plan.changes[0].op, CAT_CREATE);
    o = plan.changes[0].obj;
    ck_assert_str_eq(status_str(o, "name", NULL), "photon-efi");
    ck_assert_str_eq(status_str(o, "providerItemID", NULL), efi_id);
    ck_assert_str_eq(status_str(o, "firmware", NULL), "efi");
    ck_assert_str_eq(status_str(o, "productInfo", "vendor"), "VMware Inc.");
    ck_assert_str_eq(ready_of(o, "status"), "True");
    /* "apply" it: the object now exists (as Kubernetes would list it) */
    cJSON_AddItemToArray(have, cJSON_Duplicate(o, 1));
    cat_plan_free(&plan);
    CK_OK(cat_diff(want, have, "tenant-a", &plan, &err), err);
    ck_assert_uint_eq(plan.n, 0); /* and the next pass is a no-op */
    cat_plan_free(&plan);
    cJSON_Delete(want);
    cat_scan_free(&s);

    /* a broken descriptor: the image exists but is not ready, and says why */
    bad_id = upload_ovf_item(c, lib_id, "broken", broken, sizeof(broken) - 1);
    scan(c, cache, refs, 1, &s);
    ck_assert_uint_eq(s.n, 2);
    ck_assert_ptr_nonnull(entry_named(&s, "broken")->sync_error);
    want = images_of(&s, "tenant-a");
    o = image_named(want, "broken");
    ck_assert_str_eq(ready_of(o, "status"), "False");
    ck_assert_str_eq(ready_of(o, "reason"), "VirtualMachineImageNotSynced");
    ck_assert_ptr_nonnull(strstr(ready_of(o, "message"), "not well-formed"));
    CK_OK(cat_diff(want, have, "tenant-a", &plan, &err), err);
    ck_assert_uint_eq(plan.n, 1);
    ck_assert_int_eq(plan.changes[0].op, CAT_CREATE);
    cJSON_AddItemToArray(have, cJSON_Duplicate(plan.changes[0].obj, 1));
    cat_plan_free(&plan);
    cJSON_Delete(want);
    cat_scan_free(&s);

    /* the EFI item is removed: its image is planned for deletion, the other stays */
    delete_item(c, efi_id);
    scan(c, cache, refs, 1, &s);
    ck_assert_uint_eq(s.n, 1);
    want = images_of(&s, "tenant-a");
    CK_OK(cat_diff(want, have, "tenant-a", &plan, &err), err);
    ck_assert_uint_eq(plan.n, 1);
    ck_assert_int_eq(plan.changes[0].op, CAT_DELETE);
    ck_assert_str_eq(status_str(plan.changes[0].obj, "name", NULL), "photon-efi");
    cat_plan_free(&plan);
    cJSON_Delete(want);
    cat_scan_free(&s);

    free(bad_id);
    free(efi_id);
    free(lib_id);
    cJSON_Delete(have);
    cat_cache_free(cache);
    vim_client_free(c);
}
END_TEST

/* ---- what a resync costs (vimclient's per-method call counters) -------------------------- */

struct calls {
    const char *method;
    uint64_t n;
};

static void count_cb(void *ud, const struct vim_method_stat *st)
{
    struct calls *w = ud;
    if (!strcmp(st->method, w->method))
        w->n = st->calls;
}

static uint64_t calls_of(struct vim_client *c, const char *method)
{
    struct calls w = {method, 0};
    vim_client_method_stats(c, count_cb, &w);
    return w.n;
}

#define R_FIND   "POST /rest/com/vmware/content/library?~action=find"
#define R_LIB    "GET /rest/com/vmware/content/library/{id}"
#define R_LIST   "GET /rest/com/vmware/content/library/item?library_id={id}"
#define R_ITEM   "GET /rest/com/vmware/content/library/item/{id}"
#define R_DL     "POST /rest/com/vmware/content/library/item/download-session"
#define R_TMPL   "GET /rest/vcenter/vm-template/library-items/{id}"
#define N_ROUTES 6

static void snap(struct vim_client *c, uint64_t *v)
{
    static const char *const r[N_ROUTES] = {R_FIND, R_LIB, R_LIST, R_ITEM, R_DL, R_TMPL};
    for (int i = 0; i < N_ROUTES; i++)
        v[i] = calls_of(c, r[i]);
}

/* An unchanged library costs its item list and one read per item, and nothing more: a library
 * referenced by name is not searched or read again within the recheck period, no descriptor is
 * downloaded, no template VM is read. A library whose items change is listed again and the change
 * reaches the catalog; a library replaced by another of the same name is found anew in the same
 * scan; past the recheck period every name is searched again. */
START_TEST(resync_reads_only_what_changed)
{
    struct vim_client *c = client_for(simfx_sim->url);
    struct cat_cache *cache = NULL;
    struct vmop_err err = {0};
    struct cat_scan s = {0};
    char libname[64], *lib_id, *lib2_id, *item, *data;
    struct api_library_ref refs[2];
    uint64_t a[N_ROUTES], b[N_ROUTES];
    size_t len;

    CK_OK(cat_cache_new(&cache, &err), err);
    snprintf(libname, sizeof(libname), "resync-test-%d", (int)getpid());
    lib_id = create_library(c, libname);
    data = read_testdata("vmop-efi.ovf", &len);
    item = upload_ovf_item(c, lib_id, "resync-efi", data, len);
    refs[0] = (struct api_library_ref){.name = libname};
    refs[1] = (struct api_library_ref){.name = "vmop-images"}; /* OVF + VM-template items */

    scan(c, cache, refs, 2, &s); /* first scan: reads everything */
    ck_assert_uint_eq(s.n, 3);
    cat_scan_free(&s);

    snap(c, a);
    scan(c, cache, refs, 2, &s); /* nothing changed */
    snap(c, b);
    ck_assert_uint_eq(s.n, 3);
    ck_assert_ptr_nonnull(entry_named(&s, "resync-efi")->ovf);
    ck_assert_ptr_nonnull(entry_named(&s, "vmop-tiny-tmpl")->tmpl);
    cat_scan_free(&s);
    ck_assert_uint_eq(b[0] - a[0], 0); /* the names' ids are remembered: no search */
    ck_assert_uint_eq(b[1] - a[1], 0); /* no library read again */
    ck_assert_uint_eq(b[2] - a[2], 2); /* one item list per library */
    ck_assert_uint_eq(b[3] - a[3], 3); /* one read per item */
    ck_assert_uint_eq(b[4] - a[4], 0); /* no descriptor downloaded */
    ck_assert_uint_eq(b[5] - a[5], 0); /* no template read */

    /* an item is added to the first library: listed, read, and in the catalog */
    free(item);
    item = upload_ovf_item(c, lib_id, "resync-added", data, len);
    snap(c, a);
    scan(c, cache, refs, 2, &s);
    snap(c, b);
    ck_assert_uint_eq(s.n, 4);
    ck_assert_ptr_nonnull(entry_named(&s, "resync-added"));
    ck_assert_ptr_nonnull(entry_named(&s, "resync-added")->ovf);
    cat_scan_free(&s);
    ck_assert_uint_eq(b[2] - a[2], 2);
    ck_assert_uint_eq(b[4] - a[4], 1); /* only the new item's descriptor */

    /* the library is replaced by another of the same name: the new one is found and read */
    {
        char path[512];
        snprintf(path, sizeof(path), "/rest/com/vmware/content/local-library/id:%s", lib_id);
        CK_OK(vim_rest_call(c, "DELETE", path, NULL, NULL, &err), err);
    }
    lib2_id = create_library(c, libname);
    snap(c, a);
    scan(c, cache, refs, 2, &s);
    snap(c, b);
    ck_assert_uint_eq(s.n, 2); /* the new library is empty; vmop-images' two items */
    ck_assert_ptr_null(entry_named(&s, "resync-added"));
    ck_assert_uint_eq(b[0] - a[0], 1); /* the old id is unknown: its name searched again */
    ck_assert_uint_eq(b[1] - a[1], 1); /* the new id is checked by name */
    cat_scan_free(&s);

    /* past the recheck period every name is searched (and its library read) again */
    cat_cache_set_name_recheck_ms(cache, 0);
    snap(c, a);
    scan(c, cache, refs, 2, &s);
    snap(c, b);
    ck_assert_uint_eq(s.n, 2);
    ck_assert_uint_eq(b[0] - a[0], 2);
    ck_assert_uint_eq(b[1] - a[1], 2);
    cat_scan_free(&s);

    free(data);
    free(item);
    free(lib2_id);
    free(lib_id);
    cat_cache_free(cache);
    vim_client_free(c);
}
END_TEST

START_TEST(missing_library)
{
    struct vim_client *c = client_for(simfx_sim->url);
    struct api_library_ref refs[] = {{.name = "no-such-library"},
                                     {.id = "00000000-0000-4000-8000-000000000000"},
                                     {.name = "vmop-images"}};
    struct cat_scan s = {0};

    scan(c, NULL, refs, 3, &s);
    ck_assert_uint_eq(s.n_missing, 2);
    ck_assert_str_eq(s.missing[0], "no-such-library");
    ck_assert_str_eq(s.missing[1], "00000000-0000-4000-8000-000000000000");
    ck_assert_uint_eq(s.n, 2); /* the library that exists is still read */
    cat_scan_free(&s);
    vim_client_free(c);
}
END_TEST

START_TEST(descriptor_download_and_cap)
{
    struct vim_client *c = client_for(simfx_sim->url);
    const char *ovf_item = simfx_item(simfx_sim, "vmop-tiny-ovf", NULL)->id;
    const char *tmpl_item = simfx_item(simfx_sim, "vmop-tiny-tmpl", NULL)->id;
    struct vim_template_info *ti = NULL;
    struct vmop_err err = {0};
    char *data = NULL;
    size_t len = 0;

    CK_OK(vim_library_item_ovf(c, ovf_item, 0, &data, &len, &err), err);
    ck_assert_uint_gt(len, 100);
    ck_assert_uint_eq(strlen(data), len);
    ck_assert_ptr_nonnull(strstr(data, "<Envelope"));
    free(data);
    data = NULL;
    ck_assert_int_eq(vim_library_item_ovf(c, ovf_item, 100, &data, &len, &err), VMOP_E_TOOBIG);
    ck_assert_ptr_nonnull(strstr(err.msg, "cap"));
    ck_assert_ptr_null(data);
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(vim_library_item_ovf(c, tmpl_item, 0, &data, &len, &err), VMOP_E_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(err.msg, "no .ovf file"));
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(vim_library_item_ovf(c, "../etc", 0, &data, &len, &err), VMOP_E_INVALID);
    /* the simulator does not name the template VM: facts stay empty, and that is not an error */
    memset(&err, 0, sizeof(err));
    CK_OK(vim_library_item_template(c, tmpl_item, &ti, &err), err);
    ck_assert_ptr_nonnull(ti);
    vim_template_info_free(ti);
    vim_client_free(c);
}
END_TEST

START_TEST(dead_vcenter_fails_the_scan)
{
    /* a port nothing listens on (the simulator's, after asking for a fresh one would race;
     * port 1 on loopback is never served to tests) */
    struct vim_client *c = client_for("http://127.0.0.1:1");
    struct api_library_ref refs[] = {{.name = "vmop-images"}};
    struct cat_scan s = {0};
    struct vmop_err err = {0};
    vmop_rc rc = cat_vc_scan(c, NULL, refs, 1, &s, &err);

    ck_assert_int_eq(rc, VMOP_E_TRANSPORT);
    ck_assert_uint_eq(s.n, 0);
    ck_assert_ptr_null(s.entries);
    vim_client_free(c);
}
END_TEST

int main(void)
{
    static const struct vcsim_opts opts = {.no_autostart = 1, .no_guest_ip = 1, .vms = VCSIM_NONE};
    Suite *s;
    TCase *tc;

    if (!getenv("VMOP_SOURCE_ROOT")) {
        fprintf(stderr, "VMOP_SOURCE_ROOT is not set\n");
        return EXIT_FAILURE;
    }
    s = suite_create("catalog_sim");
    tc = simfx_tcase(s, "scan", &opts, 120);
    tcase_add_test(tc, seeded_images);
    tcase_add_test(tc, cluster_images_and_library_by_id);
    tcase_add_test(tc, item_added_then_removed);
    tcase_add_test(tc, resync_reads_only_what_changed);
    tcase_add_test(tc, missing_library);
    tcase_add_test(tc, descriptor_download_and_cap);
    tcase_add_test(tc, dead_vcenter_fails_the_scan);
    return vmop_check_run(s);
}
