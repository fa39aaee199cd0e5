/* test_catalog.c: unit tests for operator/image/catalog.c: image naming, the image objects (checked
 * against the CRDs' openAPIV3Schema read from manifests/crd: types, required fields, enums,
 * patterns, no unknown fields) and the diff (create, update on a changed content version, delete,
 * foreign objects left alone, no-op). */
#include <check.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check_main.h"
#include "test_file.h"
#include "api_ferr.h"
#include "api_image.h"
#include "catalog.h"
#include "kube_yaml.h"
#include "ovf.h"

#define ITEM1 "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"
#define ITEM2 "b5f0c0e2-1c43-4a8e-9f2b-7d1e5a3c9b10"
#define LIB1  "7f3e9d2c-0b1a-4c5d-8e6f-901a2b3c4d5e"
#define NOW1  ((time_t)1700000000)
#define NOW2  ((time_t)1700003600)

/* ---- fixtures ------------------------------------------------------------------------------ */

static char *read_file(const char *path, size_t *ret_len)
{
    char *buf = vmop_test_slurpf(ret_len, "%s", path);

    ck_assert(*ret_len > 0);
    return buf;
}

static struct ovf_desc *load_ovf(const char *name)
{
    char path[1024];
    struct vmop_err err = {0};
    struct ovf_desc *d = NULL;
    size_t len;
    char *data;

    ck_assert_ptr_nonnull(getenv("VMOP_SOURCE_ROOT"));
    snprintf(path, sizeof(path), "%s/testdata/ovf/%s", getenv("VMOP_SOURCE_ROOT"), name);
    data = read_file(path, &len);
    ck_assert_msg(ovf_parse(data, len, &d, &err) == VMOP_OK, "%s", err.msg);
    free(data);
    return d;
}

/* The v1alpha5 openAPIV3Schema of a CRD manifest (cJSON_Delete the returned root; *ret_schema
 * points into it). */
static cJSON *load_schema(const char *crd_file, const cJSON **ret_schema)
{
    char path[1024];
    struct vmop_err err = {0};
    cJSON *root = NULL, *v;
    size_t len;
    char *text;

    snprintf(path, sizeof(path), "%s/manifests/crd/%s", getenv("VMOP_SOURCE_ROOT"), crd_file);
    text = read_file(path, &len);
    ck_assert_msg(kube_yaml_parse(text, len, &root, &err) == VMOP_OK, "%s: %s", crd_file, err.msg);
    free(text);
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(cJSON_GetObjectItem(root, "spec"), "versions"))
    {
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(v, "name")), "v1alpha6")) {
            *ret_schema = cJSON_GetObjectItem(cJSON_GetObjectItem(v, "schema"), "openAPIV3Schema");
            ck_assert_ptr_nonnull(*ret_schema);
            return root;
        }
    }
    ck_abort_msg("%s has no v1alpha6", crd_file);
    return NULL;
}

/* A small structural-schema checker: type, required, properties (unknown fields are errors, as
 * the API server would prune them), items, enum, pattern (POSIX ERE), min/maxLength,
 * x-kubernetes-int-or-string. Writes the first problem into why. */
static int check_schema(const cJSON *v, const cJSON *s, const char *path, char *why, size_t n)
{
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(s, "type"));
    const cJSON *e;
    char sub[512];

    if (cJSON_IsTrue(cJSON_GetObjectItem(s, "x-kubernetes-int-or-string"))) {
        if (!cJSON_IsString(v) && !cJSON_IsNumber(v)) {
            snprintf(why, n, "%s: not int-or-string", path);
            return 0;
        }
    } else if (type && !strcmp(type, "object")) {
        const cJSON *props = cJSON_GetObjectItem(s, "properties");
        if (!cJSON_IsObject(v)) {
            snprintf(why, n, "%s: not an object", path);
            return 0;
        }
        cJSON_ArrayForEach(e, cJSON_GetObjectItem(s, "required"))
        {
            if (!cJSON_GetObjectItem(v, e->valuestring)) {
                snprintf(why, n, "%s: required field %s missing", path, e->valuestring);
                return 0;
            }
        }
        if (props) {
            cJSON_ArrayForEach(e, v)
            {
                const cJSON *ps = cJSON_GetObjectItemCaseSensitive(props, e->string);
                snprintf(sub, sizeof(sub), "%s.%s", path, e->string);
                if (!ps) {
                    snprintf(why, n, "%s: unknown field (would be pruned)", sub);
                    return 0;
                }
                if (!check_schema(e, ps, sub, why, n))
                    return 0;
            }
        }
    } else if (type && !strcmp(type, "array")) {
        int i = 0;
        if (!cJSON_IsArray(v)) {
            snprintf(why, n, "%s: not an array", path);
            return 0;
        }
        cJSON_ArrayForEach(e, v)
        {
            snprintf(sub, sizeof(sub), "%s[%d]", path, i++);
            if (!check_schema(e, cJSON_GetObjectItem(s, "items"), sub, why, n))
                return 0;
        }
    } else if (type && !strcmp(type, "string")) {
        const cJSON *en = cJSON_GetObjectItem(s, "enum"), *pat = cJSON_GetObjectItem(s, "pattern");
        const cJSON *minl = cJSON_GetObjectItem(s, "minLength"),
                    *maxl = cJSON_GetObjectItem(s, "maxLength");
        if (!cJSON_IsString(v)) {
            snprintf(why, n, "%s: not a string", path);
            return 0;
        }
        if (en) {
            int found = 0;
            cJSON_ArrayForEach(e, en) found |= !strcmp(e->valuestring, v->valuestring);
            if (!found) {
                snprintf(why, n, "%s: '%s' not in enum", path, v->valuestring);
                return 0;
            }
        }
        if (minl && (double)strlen(v->valuestring) < minl->valuedouble) {
            snprintf(why, n, "%s: shorter than minLength", path);
            return 0;
        }
        if (maxl && (double)strlen(v->valuestring) > maxl->valuedouble) {
            snprintf(why, n, "%s: longer than maxLength", path);
            return 0;
        }
        if (cJSON_IsString(pat)) {
            regex_t re;
            if (regcomp(&re, pat->valuestring, REG_EXTENDED | REG_NOSUB) == 0) {
                int ok = regexec(&re, v->valuestring, 0, NULL, 0) == 0;
                regfree(&re);
                if (!ok) {
                    snprintf(why, n, "%s: '%s' does not match the pattern", path, v->valuestring);
                    return 0;
                }
            }
        }
    } else if (type && !strcmp(type, "integer")) {
        if (!cJSON_IsNumber(v) || v->valuedouble != (double)(long long)v->valuedouble) {
            snprintf(why, n, "%s: not an integer", path);
            return 0;
        }
    } else if (type && !strcmp(type, "boolean")) {
        if (!cJSON_IsBool(v)) {
            snprintf(why, n, "%s: not a boolean", path);
            return 0;
        }
    }
    return 1;
}

static void assert_valid(const cJSON *obj, const char *crd_file)
{
    const cJSON *schema = NULL;
    cJSON *root = load_schema(crd_file, &schema);
    char why[600] = "";
    struct api_image *img = NULL;
    struct api_ferrs fe = {0};
    struct vmop_err err = {0};

    ck_assert_msg(check_schema(obj, schema, "", why, sizeof(why)), "%s: %s", crd_file, why);
    cJSON_Delete(root);
    /* and the project's own model accepts it */
    ck_assert_int_eq(api_image_parse(obj, &img, &err), VMOP_OK);
    api_image_validate(img, &fe);
    ck_assert_uint_eq(fe.n, 0);
    api_image_free(img);
}

static const char *sget(const cJSON *o, const char *a, const char *b, const char *c)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    if (c)
        x = cJSON_GetObjectItemCaseSensitive(x, c);
    return cJSON_GetStringValue(x);
}

static const cJSON *status_of(const cJSON *o)
{
    return cJSON_GetObjectItemCaseSensitive(o, "status");
}

static const cJSON *cond(const cJSON *o, const char *type)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(status_of(o), "conditions"))
    {
        if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "type")), type))
            return c;
    }
    return NULL;
}

static cJSON *build(const struct cat_item *it, const char *ns, time_t now)
{
    struct vmop_err err = {0};
    cJSON *obj = NULL;
    ck_assert_msg(cat_build_image(it, ns, now, &obj, &err) == VMOP_OK, "%s", err.msg);
    return obj;
}

/* ---- naming -------------------------------------------------------------------------------- */

START_TEST(naming)
{
    struct vmop_err err = {0};
    char buf[CAT_NAME_BUF];

    /* vmi- + the first 17 hex digits of sha1(id without dashes) */
    ck_assert_int_eq(cat_image_name(ITEM1, buf, sizeof(buf), &err), VMOP_OK);
    ck_assert_str_eq(buf, "vmi-1c311269e8dbd8ecf");
    ck_assert_int_eq(cat_image_name(ITEM2, buf, sizeof(buf), &err), VMOP_OK);
    ck_assert_str_eq(buf, "vmi-a8d534d9514d47fee");
    /* dashes do not matter */
    ck_assert_int_eq(cat_image_name("0a1b2c3d4e5f60718293a4b5c6d7e8f9", buf, sizeof(buf), &err),
                     VMOP_OK);
    ck_assert_str_eq(buf, "vmi-1c311269e8dbd8ecf");
    /* the provider item keeps the suffix */
    ck_assert_int_eq(cat_name_with_prefix("clitem-", ITEM1, buf, sizeof(buf), &err), VMOP_OK);
    ck_assert_str_eq(buf, "clitem-1c311269e8dbd8ecf");
    ck_assert_int_eq(cat_image_name("", buf, sizeof(buf), &err), VMOP_E_INVALID);
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(cat_image_name(ITEM1, buf, 10, &err), VMOP_E_TOOBIG);
}
END_TEST

/* ---- objects ------------------------------------------------------------------------------- */

START_TEST(ovf_image_shape)
{
    struct ovf_desc *d = load_ovf("vmop-efi.ovf");
    struct cat_item it = {.id = ITEM1,
                          .library_id = LIB1,
                          .name = "photon-efi",
                          .type = "ovf",
                          .content_version = "3",
                          .ovf = d};
    cJSON *obj = build(&it, "tenant-a", NOW1);
    const cJSON *st = status_of(obj), *e;
    const cJSON *labels = cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "labels");

    ck_assert_str_eq(sget(obj, "apiVersion", NULL, NULL), "vmoperator.vmware.com/v1alpha6");
    ck_assert_str_eq(sget(obj, "kind", NULL, NULL), "VirtualMachineImage");
    ck_assert_str_eq(sget(obj, "metadata", "name", NULL), "vmi-1c311269e8dbd8ecf");
    ck_assert_str_eq(sget(obj, "metadata", "namespace", NULL), "tenant-a");
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(labels, CAT_LABEL_MANAGED_BY)),
                     "vmop");
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(labels, CAT_LABEL_LIBRARY_ID)), LIB1);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(labels, CAT_LABEL_TYPE)), "OVF");
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(labels, CAT_LABEL_OS_TYPE)),
                     "vmwarePhoton64Guest");
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(labels, CAT_LABEL_OS_ID)), "36");
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(labels, CAT_LABEL_OS_VERSION)), "5");
    ck_assert_str_eq(sget(obj, "metadata", "annotations", CAT_ANN_DISPLAY_NAME), "photon-efi");
    ck_assert_str_eq(sget(obj, "spec", "providerRef", "kind"), "ContentLibraryItem");
    ck_assert_str_eq(sget(obj, "spec", "providerRef", "name"), "clitem-1c311269e8dbd8ecf");
    ck_assert_str_eq(sget(obj, "spec", "providerRef", "apiVersion"),
                     "imageregistry.vmware.com/v1alpha2");

    ck_assert_str_eq(sget(st, "name", NULL, NULL), "photon-efi");
    ck_assert_str_eq(sget(st, "type", NULL, NULL), "OVF");
    ck_assert_str_eq(sget(st, "providerItemID", NULL, NULL), ITEM1);
    ck_assert_str_eq(sget(st, "providerContentVersion", NULL, NULL), "3");
    ck_assert_str_eq(sget(st, "firmware", NULL, NULL), "efi");
    ck_assert_int_eq(cJSON_GetObjectItem(st, "hardwareVersion")->valueint, 19);
    ck_assert_str_eq(sget(st, "osInfo", "id", NULL), "36");
    ck_assert_str_eq(sget(st, "osInfo", "type", NULL), "vmwarePhoton64Guest");
    ck_assert_str_eq(sget(st, "osInfo", "version", NULL), "5");
    ck_assert_str_eq(sget(st, "productInfo", "product", NULL), "Photon OS EFI");
    ck_assert_str_eq(sget(st, "productInfo", "vendor", NULL), "VMware Inc.");
    ck_assert_str_eq(sget(st, "productInfo", "version", NULL), "5.0");
    ck_assert_str_eq(sget(st, "productInfo", "fullVersion", NULL), "5.0-build.1234");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(st, "ovfProperties")), 5);
    e = cJSON_GetArrayItem(cJSON_GetObjectItem(st, "ovfProperties"), 0);
    ck_assert_str_eq(sget(e, "key", NULL, NULL), "user-data");
    ck_assert_str_eq(sget(e, "default", NULL, NULL), ""); /* an empty default is kept */
    e = cJSON_GetArrayItem(cJSON_GetObjectItem(st, "ovfProperties"), 2);
    ck_assert_str_eq(sget(e, "key", NULL, NULL), "password");
    ck_assert_ptr_null(cJSON_GetObjectItem(e, "default"));
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(st, "vmwareSystemProperties")), 3);
    e = cJSON_GetArrayItem(cJSON_GetObjectItem(st, "disks"), 0);
    ck_assert_str_eq(sget(e, "limit", NULL, NULL), "20Gi");
    /* 1536000000 is a multiple of 1024: binary SI, as VM Operator formats it */
    ck_assert_str_eq(sget(e, "requested", NULL, NULL), "1500000Ki");
    ck_assert_str_eq(sget(e, "controllerType", NULL, NULL), "SCSI");
    ck_assert_int_eq(cJSON_GetObjectItem(e, "controllerBusNumber")->valueint, 1);
    ck_assert_int_eq(cJSON_GetObjectItem(e, "unitNumber")->valueint, 2);
    e = cJSON_GetArrayItem(cJSON_GetObjectItem(st, "disks"), 1);
    ck_assert_str_eq(sget(e, "limit", NULL, NULL), "512Mi");
    ck_assert_ptr_null(cJSON_GetObjectItem(e, "requested"));
    ck_assert_str_eq(sget(e, "controllerType", NULL, NULL), "NVME");

    e = cond(obj, "Ready");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(sget(e, "status", NULL, NULL), "True");
    ck_assert_str_eq(sget(e, "reason", NULL, NULL), "True");
    ck_assert_str_eq(sget(e, "lastTransitionTime", NULL, NULL), "2023-11-14T22:13:20Z");
    ck_assert_ptr_nonnull(cond(obj, CAT_COND_V1A1));
    /* Ready comes first */
    ck_assert_str_eq(
        sget(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "conditions"), 0), "type", NULL, NULL),
        "Ready");

    assert_valid(obj, "vmoperator.vmware.com_virtualmachineimages.yaml");
    {
        char *text = cJSON_PrintUnformatted(obj);
        ck_assert_ptr_null(strstr(text, "changeme")); /* the password default never appears */
        free(text);
    }
    cJSON_Delete(obj);
    ovf_desc_free(d);
}
END_TEST

/* The checker above is not vacuous: it catches an unknown field, a wrong type, a bad reason. */
START_TEST(schema_checker_rejects)
{
    struct cat_vm_facts vm = {.hw_version = "vmx-13"};
    struct cat_item it = {
        .id = ITEM1, .library_id = LIB1, .name = "x", .type = "vm-template", .vm = &vm};
    const cJSON *schema = NULL;
    cJSON *root = load_schema("vmoperator.vmware.com_virtualmachineimages.yaml", &schema);
    cJSON *obj = build(&it, "ns", NOW1), *bad;
    char why[600];

    ck_assert(check_schema(obj, schema, "", why, sizeof(why)));
    bad = cJSON_Duplicate(obj, 1);
    cJSON_AddStringToObject(cJSON_GetObjectItem(bad, "status"), "bogus", "x");
    ck_assert(!check_schema(bad, schema, "", why, sizeof(why)));
    ck_assert_ptr_nonnull(strstr(why, "status.bogus"));
    cJSON_Delete(bad);
    bad = cJSON_Duplicate(obj, 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(bad, "status"), "hardwareVersion",
                              cJSON_CreateString("13"));
    ck_assert(!check_schema(bad, schema, "", why, sizeof(why)));
    cJSON_Delete(bad);
    bad = cJSON_Duplicate(obj, 1);
    cJSON_ReplaceItemInObject(
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(bad, "status"), "conditions"),
                           0),
        "reason", cJSON_CreateString("not a reason!"));
    ck_assert(!check_schema(bad, schema, "", why, sizeof(why)));
    ck_assert_ptr_nonnull(strstr(why, "pattern"));
    cJSON_Delete(bad);
    cJSON_Delete(obj);
    cJSON_Delete(root);
}
END_TEST

START_TEST(cluster_image_shape)
{
    struct ovf_desc *d = load_ovf("vmop-tiny.ovf");
    struct cat_item it = {
        .id = ITEM2, .library_id = LIB1, .name = "vmop-cluster-ovf", .type = "ovf", .ovf = d};
    cJSON *obj = build(&it, NULL, NOW1);
    const cJSON *st = status_of(obj), *disk;

    ck_assert_str_eq(sget(obj, "kind", NULL, NULL), "ClusterVirtualMachineImage");
    ck_assert_ptr_null(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "namespace"));
    ck_assert_str_eq(sget(obj, "spec", "providerRef", "kind"), "ClusterContentLibraryItem");
    ck_assert_str_eq(sget(st, "osInfo", "type", NULL), "ubuntu64Guest");
    ck_assert_int_eq(cJSON_GetObjectItem(st, "hardwareVersion")->valueint, 13);
    ck_assert_ptr_null(cJSON_GetObjectItem(st, "firmware"));
    ck_assert_ptr_null(cJSON_GetObjectItem(st, "providerContentVersion")); /* none given */
    ck_assert_ptr_null(cJSON_GetObjectItem(st, "vmwareSystemProperties"));
    ck_assert_ptr_null(cond(obj, CAT_COND_V1A1));
    disk = cJSON_GetArrayItem(cJSON_GetObjectItem(st, "disks"), 0);
    ck_assert_str_eq(sget(disk, "limit", NULL, NULL), "1Gi");
    ck_assert_str_eq(sget(disk, "requested", NULL, NULL), "0");
    assert_valid(obj, "vmoperator.vmware.com_clustervirtualmachineimages.yaml");
    cJSON_Delete(obj);
    ovf_desc_free(d);
}
END_TEST

START_TEST(template_image)
{
    struct cat_vm_facts vm = {
        .guest_id = "ubuntu64Guest", .hw_version = "vmx-15", .firmware = "bios"};
    struct cat_item it = {.id = ITEM2,
                          .library_id = LIB1,
                          .name = "vmop-tiny-tmpl",
                          .type = "vm-template",
                          .content_version = "2",
                          .vm = &vm};
    cJSON *obj = build(&it, "tenant-a", NOW1);
    const cJSON *st = status_of(obj);

    ck_assert_str_eq(sget(st, "type", NULL, NULL), "VM");
    ck_assert_str_eq(sget(st, "osInfo", "type", NULL), "ubuntu64Guest");
    ck_assert_int_eq(cJSON_GetObjectItem(st, "hardwareVersion")->valueint, 15);
    ck_assert_str_eq(sget(st, "firmware", NULL, NULL), "bios");
    ck_assert_str_eq(sget(obj, "metadata", "labels", CAT_LABEL_TYPE), "VM");
    ck_assert_str_eq(sget(cond(obj, "Ready"), "status", NULL, NULL), "True");
    assert_valid(obj, "vmoperator.vmware.com_virtualmachineimages.yaml");
    cJSON_Delete(obj);

    /* no facts (the item does not expose its VM): Ready, fields left empty */
    it.vm = NULL;
    obj = build(&it, "tenant-a", NOW1);
    st = status_of(obj);
    ck_assert_ptr_null(cJSON_GetObjectItem(st, "osInfo"));
    ck_assert_ptr_null(cJSON_GetObjectItem(st, "hardwareVersion"));
    ck_assert_str_eq(sget(cond(obj, "Ready"), "status", NULL, NULL), "True");
    assert_valid(obj, "vmoperator.vmware.com_virtualmachineimages.yaml");
    cJSON_Delete(obj);
}
END_TEST

START_TEST(not_synced)
{
    struct cat_item it = {.id = ITEM1,
                          .library_id = LIB1,
                          .name = "broken",
                          .type = "ovf",
                          .sync_error = "the OVF descriptor is not well-formed XML (line 3)"};
    cJSON *obj = build(&it, "tenant-a", NOW1);
    const cJSON *c = cond(obj, "Ready");

    ck_assert_str_eq(sget(c, "status", NULL, NULL), "False");
    ck_assert_str_eq(sget(c, "reason", NULL, NULL), "VirtualMachineImageNotSynced");
    ck_assert_ptr_nonnull(strstr(sget(c, "message", NULL, NULL), "not well-formed"));
    ck_assert_str_eq(sget(status_of(obj), "providerItemID", NULL, NULL), ITEM1);
    assert_valid(obj, "vmoperator.vmware.com_virtualmachineimages.yaml");
    cJSON_Delete(obj);

    /* an OVF item without a descriptor and without an error is not ready either */
    it.sync_error = NULL;
    obj = build(&it, "tenant-a", NOW1);
    ck_assert_str_eq(sget(cond(obj, "Ready"), "status", NULL, NULL), "False");
    cJSON_Delete(obj);
}
END_TEST

START_TEST(build_set)
{
    struct cat_vm_facts vm = {0};
    struct cat_item items[] = {
        {.id = ITEM1, .library_id = LIB1, .name = "a", .type = "vm-template", .vm = &vm},
        {.id = "c0ffee00-0000-4000-8000-000000000001",
         .library_id = LIB1,
         .name = "iso",
         .type = "iso"},
        {.id = ITEM1, .library_id = LIB1, .name = "a-again", .type = "vm-template"},
        {.id = ITEM2, .library_id = LIB1, .name = "a", .type = "vm-template"}, /* same name: ok */
    };
    struct vmop_err err = {0};
    cJSON *arr = NULL;

    ck_assert_int_eq(cat_build_images(items, 4, "ns", NOW1, &arr, &err), VMOP_OK);
    ck_assert_int_eq(cJSON_GetArraySize(arr), 2);
    ck_assert_str_eq(sget(cJSON_GetArrayItem(arr, 0), "status", "name", NULL), "a");
    ck_assert_str_eq(sget(cJSON_GetArrayItem(arr, 1), "metadata", "name", NULL),
                     "vmi-a8d534d9514d47fee");
    cJSON_Delete(arr);

    /* a missing name is an error */
    items[0].name = NULL;
    ck_assert_int_eq(cat_build_images(items, 1, "ns", NOW1, &arr, &err), VMOP_E_INVALID);
}
END_TEST

/* ---- diff ---------------------------------------------------------------------------------- */

static struct ovf_desc *g_tiny;

static cJSON *desired_set(const char *version1, int with_item2, time_t now)
{
    struct cat_item items[2] = {
        {.id = ITEM1,
         .library_id = LIB1,
         .name = "one",
         .type = "ovf",
         .content_version = version1,
         .ovf = g_tiny},
        {.id = ITEM2, .library_id = LIB1, .name = "two", .type = "vm-template"},
    };
    struct vmop_err err = {0};
    cJSON *arr = NULL;
    ck_assert_int_eq(cat_build_images(items, with_item2 ? 2 : 1, "tenant-a", now, &arr, &err),
                     VMOP_OK);
    return arr;
}

/* What a listing from Kubernetes returns for objects created from `desired`: server fields added,
 * a label and an annotation of someone else. Wrapped in a List object. */
static cJSON *as_listed(const cJSON *desired)
{
    cJSON *list = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(list, "items"), *e;
    int i = 0;
    cJSON_AddStringToObject(list, "kind", "VirtualMachineImageList");
    cJSON_ArrayForEach(e, desired)
    {
        cJSON *o = cJSON_Duplicate(e, 1), *md = cJSON_GetObjectItem(o, "metadata");
        char rv[16];
        snprintf(rv, sizeof(rv), "%d", 100 + i++);
        cJSON_AddStringToObject(md, "uid", "u-1");
        cJSON_AddStringToObject(md, "resourceVersion", rv);
        cJSON_AddNumberToObject(md, "generation", 1);
        cJSON_AddStringToObject(md, "creationTimestamp", "2023-11-14T22:13:20Z");
        cJSON_AddArrayToObject(md, "managedFields");
        cJSON_AddStringToObject(cJSON_GetObjectItem(md, "labels"), "team", "blue");
        cJSON_AddStringToObject(cJSON_GetObjectItem(md, "annotations"), "note", "kept");
        cJSON_AddItemToArray(items, o);
    }
    return list;
}

static struct cat_plan diff(const cJSON *want, const cJSON *have)
{
    struct cat_plan p = {0};
    struct vmop_err err = {0};
    ck_assert_msg(cat_diff(want, have, "tenant-a", &p, &err) == VMOP_OK, "%s", err.msg);
    return p;
}

START_TEST(diff_new_items)
{
    cJSON *want = desired_set("1", 1, NOW1);
    struct cat_plan p = diff(want, NULL);

    ck_assert_uint_eq(p.n, 2);
    ck_assert_uint_eq(p.n_create, 2);
    ck_assert_int_eq(p.changes[0].op, CAT_CREATE);
    ck_assert_str_eq(sget(p.changes[0].obj, "metadata", "name", NULL), "vmi-1c311269e8dbd8ecf");
    ck_assert_ptr_nonnull(status_of(p.changes[0].obj));
    cat_plan_free(&p);
    ck_assert_uint_eq(p.n, 0);

    /* one already there: only the other is created */
    {
        cJSON *one = desired_set("1", 0, NOW1), *have = as_listed(one);
        p = diff(want, have);
        ck_assert_uint_eq(p.n, 1);
        ck_assert_int_eq(p.changes[0].op, CAT_CREATE);
        ck_assert_str_eq(sget(p.changes[0].obj, "status", "name", NULL), "two");
        cat_plan_free(&p);
        cJSON_Delete(one);
        cJSON_Delete(have);
    }
    cJSON_Delete(want);
}
END_TEST

START_TEST(diff_noop)
{
    cJSON *before = desired_set("1", 1, NOW1), *have = as_listed(before);
    /* an hour later the same items give the same objects but new timestamps: nothing to do */
    cJSON *want = desired_set("1", 1, NOW2);
    struct cat_plan p = diff(want, have);

    ck_assert_uint_eq(p.n, 0);
    cat_plan_free(&p);
    /* a bare array works as well as a List */
    p = diff(want, cJSON_GetObjectItem(have, "items"));
    ck_assert_uint_eq(p.n, 0);
    cat_plan_free(&p);
    cJSON_Delete(before);
    cJSON_Delete(have);
    cJSON_Delete(want);
}
END_TEST

START_TEST(diff_changed_content_version)
{
    cJSON *before = desired_set("1", 1, NOW1), *have = as_listed(before);
    cJSON *want = desired_set("2", 1, NOW2);
    struct cat_plan p = diff(want, have);
    const cJSON *u, *md;

    ck_assert_uint_eq(p.n, 1);
    ck_assert_int_eq(p.changes[0].op, CAT_UPDATE);
    ck_assert_int_eq(p.changes[0].main_changed, 0);
    ck_assert_int_eq(p.changes[0].status_changed, 1);
    u = p.changes[0].obj;
    md = cJSON_GetObjectItem(u, "metadata");
    ck_assert_str_eq(sget(u, "status", "providerContentVersion", NULL), "2");
    /* the existing object's metadata is kept (resourceVersion for concurrency, others' marks) */
    ck_assert_str_eq(sget(md, "resourceVersion", NULL, NULL), "100");
    ck_assert_str_eq(sget(md, "labels", "team", NULL), "blue");
    ck_assert_str_eq(sget(md, "annotations", "note", NULL), "kept");
    /* Ready did not change: its transition time stays the old one */
    ck_assert_str_eq(sget(cond(u, "Ready"), "lastTransitionTime", NULL, NULL),
                     "2023-11-14T22:13:20Z");
    cat_plan_free(&p);
    cJSON_Delete(before);
    cJSON_Delete(have);
    cJSON_Delete(want);
}
END_TEST

START_TEST(diff_rename_and_ready_change)
{
    cJSON *before = desired_set("1", 1, NOW1), *have = as_listed(before), *want;
    struct cat_item it = {.id = ITEM1,
                          .library_id = LIB1,
                          .name = "one-renamed",
                          .type = "ovf",
                          .content_version = "1",
                          .sync_error = "download failed: HTTP 500"};
    struct cat_item two = {.id = ITEM2, .library_id = LIB1, .name = "two", .type = "vm-template"};
    struct cat_plan p;
    const cJSON *u;
    cJSON *o;

    want = cJSON_CreateArray();
    cJSON_AddItemToArray(want, build(&it, "tenant-a", NOW2));
    cJSON_AddItemToArray(want, build(&two, "tenant-a", NOW2));
    p = diff(want, have);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_int_eq(p.changes[0].op, CAT_UPDATE);
    ck_assert_int_eq(p.changes[0].main_changed, 1); /* display-name annotation, os labels gone */
    ck_assert_int_eq(p.changes[0].status_changed, 1);
    u = p.changes[0].obj;
    ck_assert_str_eq(sget(u, "metadata", "annotations", CAT_ANN_DISPLAY_NAME), "one-renamed");
    ck_assert_ptr_null(sget(u, "metadata", "labels", CAT_LABEL_OS_TYPE)); /* ours: removed */
    ck_assert_str_eq(sget(u, "metadata", "labels", "team"), "blue");      /* theirs: kept */
    ck_assert_str_eq(sget(cond(u, "Ready"), "status", NULL, NULL), "False");
    ck_assert_str_eq(sget(cond(u, "Ready"), "lastTransitionTime", NULL, NULL),
                     "2023-11-14T23:13:20Z"); /* changed: the new time */
    cat_plan_free(&p);

    /* a label vmop owns that was edited by hand is put back */
    o = cJSON_GetArrayItem(cJSON_GetObjectItem(have, "items"), 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "labels"),
                              CAT_LABEL_TYPE, cJSON_CreateString("OVF"));
    cJSON_Delete(want);
    want = desired_set("1", 1, NOW2);
    p = diff(want, have);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_int_eq(p.changes[0].main_changed, 1);
    ck_assert_int_eq(p.changes[0].status_changed, 0);
    ck_assert_str_eq(sget(p.changes[0].obj, "metadata", "labels", CAT_LABEL_TYPE), "VM");
    cat_plan_free(&p);
    cJSON_Delete(before);
    cJSON_Delete(have);
    cJSON_Delete(want);
}
END_TEST

START_TEST(diff_removed_item)
{
    cJSON *before = desired_set("1", 1, NOW1), *have = as_listed(before);
    cJSON *want = desired_set("1", 0, NOW2);
    struct cat_plan p = diff(want, have);

    ck_assert_uint_eq(p.n, 1);
    ck_assert_uint_eq(p.n_delete, 1);
    ck_assert_int_eq(p.changes[0].op, CAT_DELETE);
    ck_assert_str_eq(sget(p.changes[0].obj, "metadata", "name", NULL), "vmi-a8d534d9514d47fee");
    ck_assert_str_eq(sget(p.changes[0].obj, "metadata", "uid", NULL), "u-1");
    cat_plan_free(&p);

    /* everything gone */
    cJSON_Delete(want);
    want = cJSON_CreateArray();
    p = diff(want, have);
    ck_assert_uint_eq(p.n_delete, 2);
    cat_plan_free(&p);
    cJSON_Delete(before);
    cJSON_Delete(have);
    cJSON_Delete(want);
}
END_TEST

START_TEST(diff_foreign_objects)
{
    cJSON *before = desired_set("1", 1, NOW1), *have = as_listed(before), *items, *o, *want;
    struct cat_plan p;

    items = cJSON_GetObjectItem(have, "items");
    /* someone else's image with a name vmop does not want, and one with a name vmop wants */
    o = cJSON_Parse("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":"
                    "\"VirtualMachineImage\",\"metadata\":{\"name\":\"vmi-handmade\",\"namespace\":"
                    "\"tenant-a\",\"labels\":{\"app.kubernetes.io/managed-by\":\"someone\"}},"
                    "\"spec\":{},\"status\":{\"name\":\"handmade\"}}");
    cJSON_AddItemToArray(items, o);
    o = cJSON_GetArrayItem(items, 1);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "labels"),
                               CAT_LABEL_MANAGED_BY);
    cJSON_DeleteItemFromObject(o, "status");
    /* and a managed one in another namespace (out of scope) */
    o = cJSON_Duplicate(cJSON_GetArrayItem(items, 0), 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(o, "metadata"), "namespace",
                              cJSON_CreateString("tenant-b"));
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(o, "metadata"), "name",
                              cJSON_CreateString("vmi-elsewhere"));
    cJSON_AddItemToArray(items, o);

    want = desired_set("1", 1, NOW2);
    p = diff(want, have);
    ck_assert_uint_eq(p.n, 1); /* no delete of vmi-handmade or vmi-elsewhere, no update */
    ck_assert_int_eq(p.changes[0].op, CAT_FOREIGN);
    ck_assert_str_eq(sget(p.changes[0].obj, "metadata", "name", NULL), "vmi-a8d534d9514d47fee");
    cat_plan_free(&p);

    /* even with nothing desired, foreign objects are never deleted */
    cJSON_Delete(want);
    want = cJSON_CreateArray();
    p = diff(want, have);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_int_eq(p.changes[0].op, CAT_DELETE);
    ck_assert_str_eq(sget(p.changes[0].obj, "metadata", "name", NULL), "vmi-1c311269e8dbd8ecf");
    cat_plan_free(&p);
    cJSON_Delete(before);
    cJSON_Delete(have);
    cJSON_Delete(want);
}
END_TEST

START_TEST(diff_bad_input)
{
    struct cat_plan p = {0};
    struct vmop_err err = {0};
    cJSON *want = cJSON_CreateObject(), *have = cJSON_CreateString("x"), *arr = cJSON_CreateArray();

    ck_assert_int_eq(cat_diff(want, NULL, "ns", &p, &err), VMOP_E_INVALID);
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(cat_diff(arr, have, "ns", &p, &err), VMOP_E_INVALID);
    cJSON_Delete(want);
    cJSON_Delete(have);
    cJSON_Delete(arr);
}
END_TEST

static void setup(void)
{
    g_tiny = load_ovf("vmop-tiny.ovf");
}

static void teardown(void)
{
    ovf_desc_free(g_tiny);
    g_tiny = NULL;
}

int main(void)
{
    Suite *s = suite_create("catalog");
    TCase *objs = tcase_create("objects"), *d = tcase_create("diff");

    tcase_add_test(objs, naming);
    tcase_add_test(objs, ovf_image_shape);
    tcase_add_test(objs, schema_checker_rejects);
    tcase_add_test(objs, cluster_image_shape);
    tcase_add_test(objs, template_image);
    tcase_add_test(objs, not_synced);
    tcase_add_test(objs, build_set);
    tcase_add_checked_fixture(d, setup, teardown);
    tcase_add_test(d, diff_new_items);
    tcase_add_test(d, diff_noop);
    tcase_add_test(d, diff_changed_content_version);
    tcase_add_test(d, diff_rename_and_ready_change);
    tcase_add_test(d, diff_removed_item);
    tcase_add_test(d, diff_foreign_objects);
    tcase_add_test(d, diff_bad_input);
    suite_add_tcase(s, objs);
    suite_add_tcase(s, d);
    return vmop_check_run(s);
}
