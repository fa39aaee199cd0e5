/* test_api_cond.c: condition semantics as VM Operator uses them (reason "True", lastTransitionTime
 * moves only on status/reason/message change, Ready first then alphabetical). */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "api_cond.h"

static const char *field(const cJSON *c, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

START_TEST(set_and_transition_time)
{
    cJSON *conds = cJSON_CreateArray();
    struct vmop_err err = {0};
    int changed = 0;
    const cJSON *c;

    ck_assert_int_eq(api_cond_mark_true(conds, "VirtualMachineCreated", 3, 1000, &changed, &err),
                     VMOP_OK);
    ck_assert_int_eq(changed, 1);
    c = api_cond_get(conds, "VirtualMachineCreated");
    ck_assert_str_eq(field(c, "reason"), "True");
    ck_assert_str_eq(field(c, "message"), "");
    ck_assert_str_eq(field(c, "lastTransitionTime"), "1970-01-01T00:16:40Z");
    /* same status/reason/message later: time does not move, nothing changes */
    ck_assert_int_eq(api_cond_mark_true(conds, "VirtualMachineCreated", 3, 2000, &changed, &err),
                     VMOP_OK);
    ck_assert_int_eq(changed, 0);
    ck_assert_str_eq(field(c, "lastTransitionTime"), "1970-01-01T00:16:40Z");
    /* a new generation alone does not move the time either */
    ck_assert_int_eq(api_cond_mark_true(conds, "VirtualMachineCreated", 4, 2000, &changed, &err),
                     VMOP_OK);
    ck_assert_int_eq(changed, 1);
    ck_assert_str_eq(field(c, "lastTransitionTime"), "1970-01-01T00:16:40Z");
    /* the message changes: time moves */
    ck_assert_int_eq(api_cond_set(conds, "VirtualMachineCreated", API_COND_FALSE, "Error",
                                  "InsufficientResourcesFault", 4, 3000, &changed, &err),
                     VMOP_OK);
    c = api_cond_get(conds, "VirtualMachineCreated");
    ck_assert_str_eq(field(c, "status"), "False");
    ck_assert_str_eq(field(c, "lastTransitionTime"), "1970-01-01T00:50:00Z");
    ck_assert(!api_cond_is_true(conds, "VirtualMachineCreated"));
    /* empty reasons default to the status text */
    ck_assert_int_eq(api_cond_set(conds, "GuestCustomization", API_COND_UNKNOWN, NULL, NULL, -1,
                                  3000, NULL, &err),
                     VMOP_OK);
    ck_assert_str_eq(field(api_cond_get(conds, "GuestCustomization"), "reason"), "Unknown");
    ck_assert_int_eq(api_cond_delete(conds, "GuestCustomization"), 1);
    ck_assert_int_eq(api_cond_delete(conds, "GuestCustomization"), 0);
    cJSON_Delete(conds);
}
END_TEST

START_TEST(sorted_ready_first)
{
    cJSON *conds = cJSON_CreateArray();
    struct vmop_err err = {0};
    static const char *types[] = {"VirtualMachineTools", "Ready", "GuestCustomization",
                                  "VirtualMachineClassReady", "VirtualMachineCreated"};
    static const char *want[] = {"Ready", "GuestCustomization", "VirtualMachineClassReady",
                                 "VirtualMachineCreated", "VirtualMachineTools"};
    for (size_t i = 0; i < 5; i++)
        ck_assert_int_eq(api_cond_mark_true(conds, types[i], -1, 10, NULL, &err), VMOP_OK);
    for (int i = 0; i < 5; i++)
        ck_assert_str_eq(field(cJSON_GetArrayItem(conds, i), "type"), want[i]);
    ck_assert_int_eq(api_cond_set(NULL, "X", API_COND_TRUE, NULL, NULL, -1, 0, NULL, &err),
                     VMOP_E_INVALID);
    cJSON_Delete(conds);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_cond");
    TCase *tc = tcase_create("cond");
    tcase_add_test(tc, set_and_transition_time);
    tcase_add_test(tc, sorted_ready_first);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
