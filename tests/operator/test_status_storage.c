/* test_status_storage.c: unit tests for the storage part of operator/vm/status.c (owner: sp): a
 * failure in vmsync's "storage" step (the StorageClass's policy cannot be satisfied) sets
 * VirtualMachineStorageReady False with the failure's reason and message, over the resolver's
 * True; other failures leave it as the resolver decided. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api_cond.h"
#include "check_main.h"
#include "status.h"

#define T0 ((time_t)1700000000)

static struct api_vm *vm_new(void)
{
    static const char *j =
        "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachine\","
        "\"metadata\":{\"name\":\"web-0\",\"namespace\":\"ns\",\"generation\":3},"
        "\"spec\":{\"className\":\"small\",\"storageClass\":\"gold\",\"powerState\":\"PoweredOn\"},"
        "\"status\":{\"conditions\":[{\"type\":\"VirtualMachineStorageReady\",\"status\":\"True\","
        "\"reason\":\"True\",\"lastTransitionTime\":\"2023-01-01T00:00:00Z\"}]}}";
    struct api_vm *vm = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(api_vm_parse_text(j, strlen(j), &vm, &err), VMOP_OK);
    return vm;
}

static const cJSON *cond_of(const cJSON *st, const char *type)
{
    return api_cond_get(cJSON_GetObjectItemCaseSensitive(st, "conditions"), type);
}

static const char *cstr(const cJSON *c, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

START_TEST(storage_failure_sets_storage_ready_false)
{
    struct api_vm *vm = vm_new();
    struct st_input in = {.vm = vm,
                          .kind = ST_FAILED,
                          .fail_step = VM_STEP_STORAGE,
                          .fail_reason = "StoragePolicyNotFound",
                          .fail_message =
                              "storage policy \"x\" of StorageClass \"gold\" not found"};
    cJSON *st = NULL;
    const cJSON *c;
    int changed = 0;
    struct vmop_err err = {0};

    ck_assert_int_eq(st_build(&in, T0, &st, &changed, &err), VMOP_OK);
    ck_assert_int_eq(changed, 1);
    c = cond_of(st, "VirtualMachineStorageReady");
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(cstr(c, "status"), "False");
    ck_assert_str_eq(cstr(c, "reason"), "StoragePolicyNotFound");
    ck_assert_ptr_nonnull(strstr(cstr(c, "message"), "StorageClass \"gold\""));
    /* the VM was not created, and VirtualMachineCreated says why */
    c = cond_of(st, "VirtualMachineCreated");
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(cstr(c, "status"), "False");
    ck_assert_str_eq(cstr(c, "reason"), "StoragePolicyNotFound");
    ck_assert_ptr_nonnull(strstr(cstr(c, "message"), "storage failed"));
    cJSON_Delete(st);
    api_vm_free(vm);
}
END_TEST

START_TEST(other_failure_keeps_storage_ready)
{
    struct api_vm *vm = vm_new();
    struct st_input in = {.vm = vm,
                          .kind = ST_FAILED,
                          .fail_step = VM_STEP_CREATE,
                          .fail_reason = "NotFound",
                          .fail_message = "resource pool not found"};
    cJSON *st = NULL;
    const cJSON *c;
    int changed = 0;
    struct vmop_err err = {0};

    ck_assert_int_eq(st_build(&in, T0, &st, &changed, &err), VMOP_OK);
    c = cond_of(st, "VirtualMachineStorageReady");
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(cstr(c, "status"), "True");
    cJSON_Delete(st);
    api_vm_free(vm);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("status_storage");
    TCase *tc = tcase_create("unit");
    tcase_add_test(tc, storage_failure_sets_storage_ready_false);
    tcase_add_test(tc, other_failure_keeps_storage_ready);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
