/* test_api_vm.c: VirtualMachine parse/default/validate/serialize against the corpus in
 * testdata/api/ (valid/, invalid/ with the expected field path in <case>.field, update-refused/ and
 * update-allowed/ against old.json), plus the defaulting rules. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "test_file.h"
#include "api_vm.h"

static const char *testdata(void)
{
    const char *d = getenv("VMOP_TESTDATA");
    return d ? d : "testdata/api";
}

static char *slurp(const char *path, size_t *ret_len)
{
    return vmop_test_slurpf(ret_len, "%s", path);
}

static struct api_vm *load(const char *dir, const char *name)
{
    char path[1024];
    size_t len;
    char *text;
    struct api_vm *vm = NULL;
    struct vmop_err err = {0};
    snprintf(path, sizeof(path), "%s/%s/%s", testdata(), dir, name);
    text = slurp(path, &len);
    ck_assert_msg(api_vm_parse_text(text, len, &vm, &err) == VMOP_OK, "%s: %s", path, err.msg);
    free(text);
    return vm;
}

/* Calls fn for every <dir>/<case>.json except old.json. */
static int for_each_case(const char *dir, void (*fn)(const char *dir, const char *file))
{
    char path[1024];
    DIR *d;
    struct dirent *e;
    int n = 0;
    snprintf(path, sizeof(path), "%s/%s", testdata(), dir);
    d = opendir(path);
    ck_assert_msg(d != NULL, "no corpus at %s", path);
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0 || strcmp(e->d_name, "old.json") == 0)
            continue;
        fn(dir, e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

static void expected_field(const char *dir, const char *file, char *out, size_t n)
{
    char path[1024];
    char *text;
    snprintf(path, sizeof(path), "%s/%s/%.*s.field", testdata(), dir, (int)(strlen(file) - 5),
             file);
    text = slurp(path, NULL);
    out[0] = '\0';
    sscanf(text, "%255s", out);
    (void)n;
    free(text);
}

static void print_errs(const struct api_ferrs *fe, char *buf, size_t n)
{
    struct vbuf b;
    vbuf_init(&b, 8192);
    api_ferrs_format(fe, &b);
    snprintf(buf, n, "%s", vbuf_str(&b));
    vbuf_free(&b);
}

static void check_valid(const char *dir, const char *file)
{
    struct api_vm *vm = load(dir, file);
    struct api_ferrs fe = {0};
    char msg[2048];
    cJSON *out = NULL;
    struct vmop_err err = {0};
    api_vm_validate(vm, NULL, &fe);
    print_errs(&fe, msg, sizeof(msg));
    ck_assert_msg(fe.n == 0, "%s: unexpected errors: %s", file, msg);
    /* serialize round trip: identical object, unknown fields included */
    ck_assert_int_eq(api_vm_to_json(vm, &out, &err), VMOP_OK);
    ck_assert(cJSON_Compare(out, vm->obj, 1));
    cJSON_Delete(out);
    api_vm_free(vm);
}

START_TEST(valid_corpus)
{
    ck_assert_int_ge(for_each_case("valid", check_valid), 3);
}
END_TEST

/* Validates dir/file (as an update of old when old is not NULL) and asserts an error on the field
 * its .field file names. */
static void assert_refused(const char *dir, const char *file, const struct api_vm *old)
{
    struct api_vm *vm = load(dir, file);
    struct api_ferrs fe = {0};
    char want[256], msg[2048];
    expected_field(dir, file, want, sizeof(want));
    api_vm_validate(vm, old, &fe);
    print_errs(&fe, msg, sizeof(msg));
    ck_assert_msg(api_ferrs_find(&fe, want) >= 0, "%s: no error on %s; got: %s", file, want, msg);
    api_vm_free(vm);
}

static void check_invalid(const char *dir, const char *file)
{
    assert_refused(dir, file, NULL);
}

START_TEST(invalid_corpus)
{
    ck_assert_int_ge(for_each_case("invalid", check_invalid), 15);
}
END_TEST

static void check_update_refused(const char *dir, const char *file)
{
    struct api_vm *old = load(dir, "old.json");
    assert_refused(dir, file, old);
    api_vm_free(old);
}

static void check_update_allowed(const char *dir, const char *file)
{
    struct api_vm *old = load(dir, "old.json"), *vm = load(dir, file);
    struct api_ferrs fe = {0};
    char msg[2048];
    api_vm_validate(vm, old, &fe);
    print_errs(&fe, msg, sizeof(msg));
    ck_assert_msg(fe.n == 0, "%s: unexpected errors: %s", file, msg);
    api_vm_free(vm);
    api_vm_free(old);
}

START_TEST(update_corpus)
{
    ck_assert_int_ge(for_each_case("update-refused", check_update_refused), 6);
    ck_assert_int_ge(for_each_case("update-allowed", check_update_allowed), 3);
}
END_TEST

/* ---- defaults ---- */
static vmop_rc fake_random(void *arg, unsigned char *buf, size_t n, struct vmop_err *err)
{
    unsigned *counter = arg;
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)(*counter + i);
    (*counter)++;
    return VMOP_OK;
}

static vmop_rc fake_lookup(void *arg, const char *ns, const char *image_name,
                           char ret_kind[API_NAME_MAX], char ret_name[API_NAME_MAX],
                           struct vmop_err *err)
{
    if (strcmp(image_name, "ubuntu-22.04") == 0) {
        snprintf(ret_kind, API_NAME_MAX, "ClusterVirtualMachineImage");
        snprintf(ret_name, API_NAME_MAX, "vmi-0123456789abcdef0");
        return VMOP_OK;
    }
    if (strcmp(image_name, "ambiguous") == 0)
        return vmop_fail(err, VMOP_E_EXISTS, "display name '%s' matches several images",
                         image_name);
    return vmop_fail(err, VMOP_E_NOT_FOUND, "no image '%s' in namespace %s", image_name, ns);
}

static struct api_vm_default_ctx ctx_for(unsigned *counter)
{
    struct api_vm_default_ctx ctx = {
        .random_bytes = fake_random,
        .random_arg = counter,
        .lookup_image = fake_lookup,
        .default_network = "tenant-net",
        .now = {.tv_sec = 1796076843, .tv_nsec = 120000000},
    };
    return ctx;
}

START_TEST(defaults_minimal)
{
    unsigned counter = 0, changed = 0;
    struct api_vm_default_ctx ctx = ctx_for(&counter);
    struct api_vm *vm = load("valid", "minimal.json");
    struct vmop_err err = {0};
    vmop_rc image_rc = VMOP_E_INTERNAL;
    struct api_ferrs fe = {0};

    ck_assert_int_eq(api_vm_default(vm, NULL, &ctx, &changed, &image_rc, &err), VMOP_OK);
    ck_assert_int_eq(image_rc, VMOP_OK);
    ck_assert_uint_eq(changed, API_VM_DEF_POWER | API_VM_DEF_MODES | API_VM_DEF_UUIDS |
                                   API_VM_DEF_NIC | API_VM_DEF_IMAGE);
    ck_assert_int_eq(vm->power_state, API_POWER_ON);
    ck_assert_int_eq(vm->power_off_mode, API_MODE_TRYSOFT);
    ck_assert_str_eq(vm->bios_uuid, "00010203-0405-4607-8809-0a0b0c0d0e0f");
    ck_assert_str_eq(vm->instance_uuid, "01020304-0506-4708-890a-0b0c0d0e0f10");
    ck_assert_uint_eq(vm->n_nics, 1);
    ck_assert_str_eq(vm->nics[0].name, "eth0");
    ck_assert_str_eq(vm->nics[0].network_name, "tenant-net");
    ck_assert_str_eq(vm->image_kind, "ClusterVirtualMachineImage");
    ck_assert_str_eq(vm->image_ref, "vmi-0123456789abcdef0");
    api_vm_validate(vm, NULL, &fe);
    ck_assert_uint_eq(fe.n, 0);
    /* idempotent */
    ck_assert_int_eq(api_vm_default(vm, NULL, &ctx, &changed, NULL, &err), VMOP_OK);
    ck_assert_uint_eq(changed, 0);
    ck_assert_uint_eq(counter, 2);
    api_vm_free(vm);
}
END_TEST

/* v1alpha2's conversion writes spec.image {name: <imageName>} with no kind: on a create
 * (resolve_kindless_image) it is resolved like an unset image; otherwise left alone. */
START_TEST(defaults_kindless_image)
{
    unsigned counter = 0, changed = 0;
    struct api_vm_default_ctx ctx = ctx_for(&counter);
    struct api_vm *vm = load("valid", "minimal.json");
    struct vmop_err err = {0};
    vmop_rc image_rc = VMOP_E_INTERNAL;
    cJSON *img = cJSON_CreateObject();

    cJSON_AddStringToObject(img, "name", "ubuntu-22.04");
    cJSON_AddItemToObject(api_vm_spec(vm), "image", img);
    api_vm_reparse(vm, &err);
    ck_assert_int_eq(api_vm_default(vm, NULL, &ctx, &changed, &image_rc, &err), VMOP_OK);
    ck_assert(!(changed & API_VM_DEF_IMAGE)); /* not a create: left as written */
    ck_assert_str_eq(vm->image_ref, "ubuntu-22.04");
    ctx.resolve_kindless_image = 1;
    ck_assert_int_eq(api_vm_default(vm, NULL, &ctx, &changed, &image_rc, &err), VMOP_OK);
    ck_assert_int_eq(image_rc, VMOP_OK);
    ck_assert(changed & API_VM_DEF_IMAGE);
    ck_assert_str_eq(vm->image_kind, "ClusterVirtualMachineImage");
    ck_assert_str_eq(vm->image_ref, "vmi-0123456789abcdef0");
    api_vm_free(vm);
}
END_TEST

START_TEST(defaults_cloudinit_and_unknown_fields)
{
    unsigned counter = 7, changed = 0;
    struct api_vm_default_ctx ctx = ctx_for(&counter);
    struct api_vm *vm = load("valid", "cloudinit.json");
    struct vmop_err err = {0};
    vmop_rc image_rc = VMOP_OK;
    cJSON *out = NULL;

    ck_assert_int_eq(api_vm_default(vm, NULL, &ctx, &changed, &image_rc, &err), VMOP_OK);
    ck_assert_int_eq(image_rc, VMOP_E_NOT_FOUND); /* vmi- name the fake does not know */
    ck_assert(!(changed & API_VM_DEF_NIC));       /* interfaces given: no default NIC */
    ck_assert(changed & API_VM_DEF_INSTID);
    ck_assert_str_eq(vm->cloudinit_instance_id, vm->bios_uuid);
    ck_assert_int_eq(vm->power_off_mode, API_MODE_SOFT); /* user value kept */
    ck_assert_int_eq(api_vm_to_json(vm, &out, &err), VMOP_OK);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(out, "spec"), "futureField"), "kept")));
    cJSON_Delete(out);
    api_vm_free(vm);
}
END_TEST

START_TEST(defaults_restart_now)
{
    unsigned counter = 0, changed = 0;
    struct api_vm_default_ctx ctx = ctx_for(&counter);
    struct api_vm *old = load("update-allowed", "old.json"),
                  *vm = load("update-allowed", "old.json");
    struct vmop_err err = {0};
    struct api_ferrs fe = {0};

    cJSON_ReplaceItemInObject(api_vm_spec(old), "powerState", cJSON_CreateString("PoweredOn"));
    api_vm_reparse(old, &err);
    cJSON_ReplaceItemInObject(api_vm_spec(vm), "powerState", cJSON_CreateString("PoweredOn"));
    cJSON_AddStringToObject(api_vm_spec(vm), "nextRestartTime", "NoW");
    api_vm_reparse(vm, &err);
    api_vm_validate(vm, old, &fe);
    ck_assert_uint_eq(fe.n, 0);
    ck_assert_int_eq(api_vm_default(vm, old, &ctx, &changed, NULL, &err), VMOP_OK);
    ck_assert(changed & API_VM_DEF_RESTART);
    ck_assert_str_eq(vm->next_restart_time, "2026-11-30T22:14:03.12Z");
    /* powered off: "now" is refused and not converted */
    cJSON_ReplaceItemInObject(api_vm_spec(old), "powerState", cJSON_CreateString("PoweredOff"));
    api_vm_reparse(old, &err);
    cJSON_ReplaceItemInObject(api_vm_spec(vm), "nextRestartTime", cJSON_CreateString("now"));
    api_vm_reparse(vm, &err);
    ck_assert_int_eq(api_vm_default(vm, old, &ctx, &changed, NULL, &err), VMOP_OK);
    ck_assert(!(changed & API_VM_DEF_RESTART));
    api_vm_validate(vm, old, &fe);
    ck_assert_int_ge(api_ferrs_find(&fe, "spec.nextRestartTime"), 0);
    api_vm_free(vm);
    api_vm_free(old);
}
END_TEST

START_TEST(helpers)
{
    unsigned char rnd[16];
    char out[37], ts[48];
    struct timespec t = {0, 0};
    memset(rnd, 0xff, sizeof(rnd));
    api_uuid_v4_format(rnd, out);
    ck_assert_str_eq(out, "ffffffff-ffff-4fff-bfff-ffffffffffff");
    api_time_rfc3339nano(&t, ts, sizeof(ts));
    ck_assert_str_eq(ts, "1970-01-01T00:00:00Z");
    t.tv_nsec = 5;
    api_time_rfc3339nano(&t, ts, sizeof(ts));
    ck_assert_str_eq(ts, "1970-01-01T00:00:00.000000005Z");
    ck_assert_str_eq(api_power_state_str(API_POWER_SUSPENDED), "Suspended");
}
END_TEST

START_TEST(parse_rejects)
{
    struct api_vm *vm = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(api_vm_parse_text("[1]", 3, &vm, &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(api_vm_parse_text("{", 1, &vm, &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(api_vm_parse_text("{}", API_VM_MAX_BYTES + 1, &vm, &err), VMOP_E_TOOBIG);
    ck_assert_ptr_null(vm);
    /* wrong types are field errors, not parse failures */
    const char *t = "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"network\":[],\"volumes\":{}}}";
    ck_assert_int_eq(api_vm_parse_text(t, strlen(t), &vm, &err), VMOP_OK);
    ck_assert_int_ge(api_ferrs_find(&vm->parse_errs, "spec.network"), 0);
    ck_assert_int_ge(api_ferrs_find(&vm->parse_errs, "spec.volumes"), 0);
    api_vm_free(vm);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_vm");
    TCase *tc = tcase_create("vm");
    tcase_add_test(tc, valid_corpus);
    tcase_add_test(tc, invalid_corpus);
    tcase_add_test(tc, update_corpus);
    tcase_add_test(tc, defaults_minimal);
    tcase_add_test(tc, defaults_kindless_image);
    tcase_add_test(tc, defaults_cloudinit_and_unknown_fields);
    tcase_add_test(tc, defaults_restart_now);
    tcase_add_test(tc, helpers);
    tcase_add_test(tc, parse_rejects);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
