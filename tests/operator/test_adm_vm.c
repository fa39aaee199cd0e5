/* test_adm_vm.c: unit tests for operator/admission/: the VirtualMachine mutating webhook:
 * a create gets VM Operator's defaults as a JSON Patch (instanceUUID, biosUUID,
 * cloudInit.instanceID = biosUUID, the TrySoft modes, powerState), values the user set are kept,
 * nextRestartTime "now" becomes a timestamp on an update of a powered-on VM, and what is not a
 * create or update of the main resource (status, delete) or does not parse gets no patch; a
 * create gets the controller's finalizer (not when paused), an update does not; a
 * tenant's own instanceUUID is refused and the operator's may; the validating webhook refuses an
 * imageName change; the conversion handler takes a v1alpha1 VM to v1alpha5 and back; a create
 * sent in each served version v1alpha1 .. v1alpha6 (the VirtualMachine webhooks are registered at
 * all of them: adm_hub.h) is answered with a patch of the object as sent which, applied and
 * converted to the hub, gives what the hub request gives; an object that does not convert is
 * refused. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "adm_convert.h"
#include "adm_vm.h"
#include "api_convert.h"
#include "check_main.h"

/* no caches (image lookups find nothing, no binding); vmop's ServiceAccount is privileged */
static struct adm_vm A = {.priv = {.sa_namespace = "vmop-system", .sa_name = "vmop"}};

/* A VM named web in namespace default with this spec, and md_extra (",..." members) in metadata. */
static cJSON *vm_json_md(const char *md_extra, const char *spec)
{
    char buf[2048];
    cJSON *j;
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachine\","
             "\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"%s},\"spec\":%s}",
             md_extra, spec);
    j = cJSON_Parse(buf);
    ck_assert_ptr_nonnull(j);
    return j;
}

static cJSON *vm_json(const char *spec)
{
    return vm_json_md("", spec);
}

/* The patch's value for path, or NULL. */
static const cJSON *patched(const struct wh_admission_response *r, const char *path)
{
    const cJSON *op;
    cJSON_ArrayForEach(op, r->patch)
    {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(op, "path");
        if (cJSON_IsString(p) && !strcmp(p->valuestring, path))
            return cJSON_GetObjectItemCaseSensitive(op, "value");
    }
    return NULL;
}

/* The value at path in the object once patched (only "add"/"replace" of whole members at
 * /spec/<key> or /spec: enough for these tests). */
static const char *spec_after(const struct wh_admission_response *r, const cJSON *obj,
                              const char *key)
{
    char path[128];
    const cJSON *v, *spec;
    snprintf(path, sizeof(path), "/spec/%s", key);
    if ((v = patched(r, path)) != NULL)
        return cJSON_IsString(v) ? v->valuestring : NULL;
    if ((spec = patched(r, "/spec")) == NULL)
        spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    v = cJSON_GetObjectItemCaseSensitive(spec, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *USER = "tenant";
static const char *GROUPS[] = {"system:authenticated"};

/* Calls fn as USER; returns whether it allowed. */
static int call(wh_admit_fn fn, enum wh_operation op, const char *sub, const cJSON *obj,
                const cJSON *old, struct wh_admission_response *resp)
{
    struct wh_admission_request req;
    struct vmop_err err = {0};
    memset(&req, 0, sizeof(req));
    req.uid = "u-1";
    req.op = op;
    req.sub_resource = sub;
    req.namespace_ = "default";
    req.kind_group = "vmoperator.vmware.com";
    req.kind = "VirtualMachine";
    req.username = USER;
    req.groups = GROUPS;
    req.n_groups = 1;
    req.object = obj;
    req.old_object = old;
    wh_admission_response_init(resp);
    ck_assert_int_eq(fn(&A, &req, resp, &err), VMOP_OK);
    return resp->allowed;
}

static void run(enum wh_operation op, const char *sub, const cJSON *obj, const cJSON *old,
                struct wh_admission_response *resp)
{
    struct wh_admission_request req;
    struct vmop_err err = {0};
    memset(&req, 0, sizeof(req));
    req.uid = "u-1";
    req.op = op;
    req.sub_resource = sub;
    req.namespace_ = "default";
    req.username = "system:serviceaccount:vmop-system:vmop"; /* privileged (A.priv) */
    req.object = obj;
    req.old_object = old;
    wh_admission_response_init(resp);
    ck_assert_int_eq(adm_vm_mutate(&A, &req, resp, &err), VMOP_OK);
    ck_assert(resp->allowed);
}

/* A tenant's own instanceUUID on create is refused at the mutating stage, naming the field; the
 * operator's ServiceAccount may. */
START_TEST(tenant_instance_uuid_refused)
{
    cJSON *obj = vm_json("{\"className\":\"small\",\"imageName\":\"ubuntu\","
                         "\"instanceUUID\":\"4c3b2a19-0817-4e6f-8d5c-4b3a29180716\"}");
    struct wh_admission_response r;
    ck_assert(!call(adm_vm_mutate, WH_OP_CREATE, "", obj, NULL, &r));
    ck_assert_ptr_nonnull(r.message);
    ck_assert_ptr_nonnull(strstr(r.message, "spec.instanceUUID"));
    ck_assert_ptr_nonnull(strstr(r.message, "privileged"));
    ck_assert_ptr_null(r.patch);
    wh_admission_response_deinit(&r);
    run(WH_OP_CREATE, "", obj, NULL, &r); /* the ServiceAccount: allowed */
    wh_admission_response_deinit(&r);
    cJSON_Delete(obj);
}
END_TEST

/* The validating webhook: an imageName change is refused with the field path; the same update
 * without it passes; a status update is not looked at. */
START_TEST(validate_immutable_image)
{
#define IMG_SPEC(img)                                                                              \
    "{\"className\":\"small\",\"imageName\":\"" img "\",\"storageClass\":\"sc\","                  \
    "\"instanceUUID\":\"4c3b2a19-0817-4e6f-8d5c-4b3a29180716\","                                   \
    "\"biosUUID\":\"6d1e0c2b-3a49-4f58-9e67-7f8a9b0c1d2e\",\"powerState\":\"PoweredOn\"}"
    const char *a = IMG_SPEC("ubuntu"), *b = IMG_SPEC("debian");
    cJSON *old, *same, *other;
    struct wh_admission_response r;
    old = vm_json(a);
    same = vm_json(a);
    other = vm_json(b);
    ck_assert(call(adm_validate, WH_OP_UPDATE, "", same, old, &r));
    wh_admission_response_deinit(&r);
    ck_assert(!call(adm_validate, WH_OP_UPDATE, "", other, old, &r));
    ck_assert_ptr_nonnull(strstr(r.message, "spec.imageName"));
    ck_assert_ptr_nonnull(strstr(r.message, "field is immutable"));
    wh_admission_response_deinit(&r);
    ck_assert(call(adm_validate, WH_OP_UPDATE, "status", other, old, &r));
    wh_admission_response_deinit(&r);
    cJSON_Delete(old);
    cJSON_Delete(same);
    cJSON_Delete(other);
}
END_TEST

START_TEST(create_gets_defaults)
{
    cJSON *obj = vm_json("{\"className\":\"small\",\"imageName\":\"ubuntu\","
                         "\"bootstrap\":{\"cloudInit\":{}}}");
    struct wh_admission_response r;
    const char *iu, *bu;
    run(WH_OP_CREATE, "", obj, NULL, &r);
    ck_assert_ptr_nonnull(r.patch);
    iu = spec_after(&r, obj, "instanceUUID");
    bu = spec_after(&r, obj, "biosUUID");
    ck_assert_ptr_nonnull(iu);
    ck_assert_ptr_nonnull(bu);
    ck_assert_uint_eq(strlen(iu), 36);
    ck_assert_uint_eq(strlen(bu), 36);
    ck_assert_str_ne(iu, bu);
    ck_assert_str_eq(spec_after(&r, obj, "powerState"), "PoweredOn");
    ck_assert_str_eq(spec_after(&r, obj, "powerOffMode"), "TrySoft");
    /* cloudInit.instanceID = biosUUID, somewhere under /spec/bootstrap */
    {
        char *text = cJSON_PrintUnformatted(r.patch);
        ck_assert_ptr_nonnull(strstr(text, bu));
        cJSON_free(text);
    }
    wh_admission_response_deinit(&r);
    cJSON_Delete(obj);
}
END_TEST

START_TEST(user_values_kept)
{
    cJSON *obj = vm_json("{\"className\":\"small\",\"imageName\":\"ubuntu\","
                         "\"instanceUUID\":\"4c3b2a19-0817-4e6f-8d5c-4b3a29180716\","
                         "\"biosUUID\":\"6d1e0c2b-3a49-4f58-9e67-7f8a9b0c1d2e\","
                         "\"powerState\":\"PoweredOff\",\"powerOffMode\":\"Hard\","
                         "\"suspendMode\":\"Hard\",\"restartMode\":\"Hard\"}");
    struct wh_admission_response r;
    run(WH_OP_CREATE, "", obj, NULL, &r);
    ck_assert_str_eq(spec_after(&r, obj, "instanceUUID"), "4c3b2a19-0817-4e6f-8d5c-4b3a29180716");
    ck_assert_str_eq(spec_after(&r, obj, "biosUUID"), "6d1e0c2b-3a49-4f58-9e67-7f8a9b0c1d2e");
    ck_assert_str_eq(spec_after(&r, obj, "powerState"), "PoweredOff");
    ck_assert_str_eq(spec_after(&r, obj, "powerOffMode"), "Hard");
    wh_admission_response_deinit(&r);
    cJSON_Delete(obj);
}
END_TEST

START_TEST(restart_now_on_update)
{
#define RESTART_BASE(extra)                                                                        \
    "{\"className\":\"small\",\"imageName\":\"ubuntu\","                                           \
    "\"instanceUUID\":\"4c3b2a19-0817-4e6f-8d5c-4b3a29180716\","                                   \
    "\"biosUUID\":\"6d1e0c2b-3a49-4f58-9e67-7f8a9b0c1d2e\","                                       \
    "\"powerState\":\"PoweredOn\",\"powerOffMode\":\"TrySoft\","                                   \
    "\"suspendMode\":\"TrySoft\",\"restartMode\":\"TrySoft\"" extra "}"
    const char *a = RESTART_BASE(""), *b = RESTART_BASE(",\"nextRestartTime\":\"now\"");
    cJSON *old = vm_json(a), *obj = vm_json(b);
    struct wh_admission_response r;
    const char *t;
    run(WH_OP_UPDATE, "", obj, old, &r);
    t = spec_after(&r, obj, "nextRestartTime");
    ck_assert_ptr_nonnull(t);
    ck_assert_str_ne(t, "now");
    ck_assert_int_eq(t[4], '-'); /* RFC 3339: 2026-... */
    ck_assert_int_eq(t[strlen(t) - 1], 'Z');
    wh_admission_response_deinit(&r);
    cJSON_Delete(obj);
    cJSON_Delete(old);
}
END_TEST

START_TEST(no_patch_outside_create_update)
{
    cJSON *obj = vm_json("{\"className\":\"small\"}");
    cJSON *bad = cJSON_Parse("{\"spec\":7}");
    struct wh_admission_response r;
    run(WH_OP_CREATE, "status", obj, NULL, &r);
    ck_assert_ptr_null(r.patch);
    wh_admission_response_deinit(&r);
    run(WH_OP_DELETE, "", NULL, obj, &r);
    ck_assert_ptr_null(r.patch);
    wh_admission_response_deinit(&r);
    run(WH_OP_CREATE, "", bad, NULL, &r); /* left to validation */
    ck_assert_ptr_null(r.patch);
    wh_admission_response_deinit(&r);
    cJSON_Delete(bad);
    cJSON_Delete(obj);
}
END_TEST

#define FIN "vmoperator.vmware.com/virtualmachine"

/* 1 when the patch's value at path is an array holding the string want. */
static int patched_array_has(const struct wh_admission_response *r, const char *path,
                             const char *want)
{
    const cJSON *v = patched(r, path), *it;
    if (!cJSON_IsArray(v))
        return 0;
    cJSON_ArrayForEach(it, v)
    {
        if (cJSON_IsString(it) && !strcmp(it->valuestring, want))
            return 1;
    }
    return 0;
}

/* A create gets the controller's finalizer, so that its first reconcile creates at once; a VM
 * created paused does not (the controller leaves it alone). */
START_TEST(create_gets_finalizer)
{
    cJSON *obj = vm_json("{\"className\":\"small\",\"imageName\":\"ubuntu\"}");
    cJSON *paused = vm_json_md(",\"annotations\":{\"vmoperator.vmware.com/paused\":\"\"}",
                               "{\"className\":\"small\",\"imageName\":\"ubuntu\"}");
    cJSON *has = vm_json_md(",\"finalizers\":[\"other\",\"" FIN "\"]",
                            "{\"className\":\"small\",\"imageName\":\"ubuntu\"}");
    struct wh_admission_response r;
    run(WH_OP_CREATE, "", obj, NULL, &r);
    ck_assert(patched_array_has(&r, "/metadata/finalizers", FIN));
    wh_admission_response_deinit(&r);
    run(WH_OP_CREATE, "", paused, NULL, &r);
    ck_assert_ptr_null(patched(&r, "/metadata/finalizers"));
    wh_admission_response_deinit(&r);
    run(WH_OP_CREATE, "", has, NULL, &r); /* already there: left as it is */
    ck_assert_ptr_null(patched(&r, "/metadata/finalizers"));
    wh_admission_response_deinit(&r);
    cJSON_Delete(has);
    cJSON_Delete(paused);
    cJSON_Delete(obj);
}
END_TEST

/* Only a create gets them: an update that lacks the finalizer (a person took it off) is left to
 * the controller. */
START_TEST(update_gets_no_finalizer)
{
    const char *spec = RESTART_BASE("");
    cJSON *old = vm_json_md(",\"finalizers\":[\"" FIN "\"]", spec);
    cJSON *obj = vm_json(spec);
    struct wh_admission_response r;
    run(WH_OP_UPDATE, "", obj, old, &r);
    ck_assert_ptr_null(patched(&r, "/metadata/finalizers"));
    wh_admission_response_deinit(&r);
    cJSON_Delete(obj);
    cJSON_Delete(old);
}
END_TEST

/* The conversion handler: a v1alpha1 VM (lower-camel power state) to v1alpha5 and back. */
START_TEST(convert_v1alpha1)
{
    cJSON *a1 = cJSON_Parse("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha1\","
                            "\"kind\":\"VirtualMachine\",\"metadata\":{\"name\":\"old\"},"
                            "\"spec\":{\"className\":\"small\",\"imageName\":\"ubuntu\","
                            "\"powerState\":\"poweredOn\"}}");
    cJSON *a5 = NULL, *back = NULL, *bad = NULL;
    struct vmop_err err = {0};
    const cJSON *ps;
    ck_assert_ptr_nonnull(a1);
    ck_assert_int_eq(adm_convert(NULL, a1, "vmoperator.vmware.com/v1alpha5", &a5, &err), VMOP_OK);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(a5, "apiVersion")->valuestring,
                     "vmoperator.vmware.com/v1alpha5");
    ps = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(a5, "spec"),
                                          "powerState");
    ck_assert_str_eq(ps->valuestring, "PoweredOn");
    ck_assert_int_eq(adm_convert(NULL, a5, "vmoperator.vmware.com/v1alpha1", &back, &err), VMOP_OK);
    ck_assert(cJSON_Compare(back, a1, 1));
    ck_assert_int_ne(adm_convert(NULL, a1, "vmoperator.vmware.com/v9", &bad, &err), VMOP_OK);
    ck_assert_ptr_null(bad);
    ck_assert_uint_gt(strlen(err.msg), 0);
    cJSON_Delete(back);
    cJSON_Delete(a5);
    cJSON_Delete(a1);
}
END_TEST

/* ---- a request in each served version ---- */

/* The member of obj at the JSON Pointer path's parent, and the last token (unescaped) into tok. */
static cJSON *pointer_parent(cJSON *obj, const char *path, char *tok, size_t tok_size)
{
    const char *p = path;
    ck_assert(*p == '/');
    for (;;) {
        size_t n = 0;
        p++;
        while (*p && *p != '/') {
            char ch = *p++;
            if (ch == '~') {
                ch = *p == '1' ? '/' : '~';
                p++;
            }
            ck_assert_uint_lt(n, tok_size - 1);
            tok[n++] = ch;
        }
        tok[n] = '\0';
        if (!*p)
            return obj;
        obj = cJSON_GetObjectItemCaseSensitive(obj, tok);
        ck_assert_msg(cJSON_IsObject(obj), "patch path %s goes through a non-object", path);
    }
}

/* Applies the add/replace/remove operations of the handler's patch to obj (the diff makes no other
 * kind, and only of object members). */
static void apply_patch(cJSON *obj, const cJSON *patch)
{
    const cJSON *op;
    cJSON_ArrayForEach(op, patch)
    {
        const char *o = cJSON_GetObjectItemCaseSensitive(op, "op")->valuestring;
        const char *path = cJSON_GetObjectItemCaseSensitive(op, "path")->valuestring;
        char tok[256];
        cJSON *parent = pointer_parent(obj, path, tok, sizeof(tok));
        cJSON_DeleteItemFromObjectCaseSensitive(parent, tok);
        if (strcmp(o, "remove"))
            cJSON_AddItemToObject(
                parent, tok, cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(op, "value"), 1));
    }
}

static const char *str_at(const cJSON *o, const char *a, const char *b, const char *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    if (c)
        v = cJSON_GetObjectItemCaseSensitive(v, c);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

START_TEST(mutate_in_each_version)
{
    cJSON *hub = cJSON_Parse("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha6\","
                             "\"kind\":\"VirtualMachine\",\"metadata\":{\"name\":\"web\","
                             "\"namespace\":\"default\"},\"spec\":{\"className\":\"small\","
                             "\"imageName\":\"ubuntu\",\"bootstrap\":{\"cloudInit\":{"
                             "\"rawCloudConfig\":{\"name\":\"cc\",\"key\":\"user-data\"}}}}}");
    ck_assert_ptr_nonnull(hub);
    for (int v = 1; v <= API_CONVERT_MAX_VERSION; v++) {
        char av[64];
        cJSON *sent = NULL, *after = NULL;
        struct vmop_err err = {0};
        struct wh_admission_response r;
        const cJSON *fins;
        const char *iu, *bu;
        snprintf(av, sizeof(av), "vmoperator.vmware.com/v1alpha%d", v);
        ck_assert_int_eq(api_convert(hub, av, &sent, &err), VMOP_OK);
        run(WH_OP_CREATE, "", sent, NULL, &r);
        ck_assert_msg(r.patch && cJSON_GetArraySize(r.patch) > 0, "%s: no patch", av);
        /* every operation is on the object as sent, whose apiVersion stays */
        ck_assert_ptr_null(patched(&r, "/apiVersion"));
        apply_patch(sent, r.patch);
        ck_assert_str_eq(str_at(sent, "apiVersion", NULL, NULL), av);
        ck_assert_int_eq(api_convert(sent, API_CONVERT_HUB_GV, &after, &err), VMOP_OK);
        /* what the hub request gets (create_gets_defaults, create_gets_finalizer) */
        iu = str_at(after, "spec", "instanceUUID", NULL);
        bu = str_at(after, "spec", "biosUUID", NULL);
        ck_assert_msg(iu && strlen(iu) == 36, "%s: instanceUUID %s", av, iu ? iu : "(none)");
        ck_assert_msg(bu && strlen(bu) == 36, "%s: biosUUID", av);
        ck_assert_str_eq(str_at(after, "spec", "powerState", NULL), "PoweredOn");
        ck_assert_str_eq(str_at(after, "spec", "powerOffMode", NULL), "TrySoft");
        ck_assert_str_eq(str_at(after, "spec", "className", NULL), "small");
        fins = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(after, "metadata"),
                                                "finalizers");
        ck_assert_msg(cJSON_GetArraySize(fins) == 1 &&
                          !strcmp(cJSON_GetArrayItem(fins, 0)->valuestring, ADM_VM_FINALIZER),
                      "%s: finalizers", av);
        { /* cloudInit.instanceID = biosUUID */
            const cJSON *ci = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(after, "spec"),
                                                 "bootstrap"),
                "cloudInit");
            ck_assert_msg(str_at(ci, "instanceID", NULL, NULL) &&
                              !strcmp(str_at(ci, "instanceID", NULL, NULL), bu),
                          "%s: cloudInit.instanceID", av);
        }
        wh_admission_response_deinit(&r);
        cJSON_Delete(after);
        cJSON_Delete(sent);
    }
    cJSON_Delete(hub);
}
END_TEST

/* A request whose object does not convert to the hub is refused, as the API server's conversion
 * would have failed it; a hub request is not converted. */
START_TEST(unconvertible_refused)
{
    cJSON *bad = cJSON_Parse("{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\","
                             "\"kind\":\"VirtualMachine\",\"metadata\":{\"name\":\"web\"},"
                             "\"spec\":\"not an object\"}");
    struct wh_admission_response r;
    ck_assert_int_eq(call(adm_vm_mutate, WH_OP_CREATE, "", bad, NULL, &r), 0);
    ck_assert_int_eq(r.code, 400);
    ck_assert_ptr_nonnull(strstr(r.message, "does not convert"));
    wh_admission_response_deinit(&r);
    ck_assert_int_eq(call(adm_validate, WH_OP_CREATE, "", bad, NULL, &r), 0);
    ck_assert_int_eq(r.code, 400);
    wh_admission_response_deinit(&r);
    cJSON_Delete(bad);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("adm_vm");
    TCase *tc = tcase_create("mutate");
    tcase_add_test(tc, create_gets_defaults);
    tcase_add_test(tc, user_values_kept);
    tcase_add_test(tc, restart_now_on_update);
    tcase_add_test(tc, no_patch_outside_create_update);
    tcase_add_test(tc, tenant_instance_uuid_refused);
    tcase_add_test(tc, validate_immutable_image);
    tcase_add_test(tc, create_gets_finalizer);
    tcase_add_test(tc, update_gets_no_finalizer);
    tcase_add_test(tc, convert_v1alpha1);
    tcase_add_test(tc, mutate_in_each_version);
    tcase_add_test(tc, unconvertible_refused);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
