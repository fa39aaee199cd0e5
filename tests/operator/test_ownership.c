/* test_ownership.c: unit tests for operator/vm/ownership.c, the pure ownership rule: a VM carrying
 * every mark of the resource is ours (also without managedBy, as a vCenter that drops the clone
 * spec's managedBy leaves a clone: the unpatched simulator does);
 * each mark missing or naming something else makes it foreign (another manager, another
 * resource's name or uid, outside the folder, a template, another instance UUID); a VM without
 * the vmop.uid mark is legacy only with vmop's managedBy and when the resource's own
 * status.uniqueID names it; the reason never quotes the VM's values. */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "ownership.h"

#define INST  "4c3b2a19-0817-4e6f-8d5c-4b3a29180716"
#define UID   "6d1e0c2b-3a49-4f58-9e67-7f8a9b0c1d2e"
#define OTHER "0f9e8d7c-6b5a-4938-8271-605f4e3d2c1b"
#define NN    "tenant-a/web"

static struct own_marks M;
static struct own_ident I;
static char why[OWN_WHY_MAX];

static void setup(void)
{
    memset(&M, 0, sizeof(M));
    memset(&I, 0, sizeof(I));
    M.moref = "vm-70";
    M.instance_uuid = INST;
    M.managed_by_ext = OWN_MANAGED_EXT;
    M.managed_by_type = OWN_MANAGED_TYPE;
    M.namespaced_name = NN;
    M.uid = UID;
    M.in_folder = 1;
    I.instance_uuid = INST;
    I.namespaced_name = NN;
    I.uid = UID;
    I.status_unique_id = NULL;
}

static enum own_verdict decide(void)
{
    memset(why, 'x', sizeof(why));
    return own_decide(&M, &I, why, sizeof(why));
}

START_TEST(all_marks_is_ours)
{
    ck_assert_int_eq(decide(), OWN_OURS);
    ck_assert_str_eq(why, "");
    ck_assert_str_eq(own_verdict_str(OWN_OURS), "ours");
}
END_TEST

START_TEST(instance_uuid_case_does_not_matter)
{
    M.instance_uuid = "4C3B2A19-0817-4E6F-8D5C-4B3A29180716";
    ck_assert_int_eq(decide(), OWN_OURS);
}
END_TEST

START_TEST(managed_by_absent_is_ours_after_a_crash_right_after_the_clone)
{
    /* a vCenter that keeps the clone spec's extraConfig but not its managedBy (the unpatched
     * simulator) */
    M.managed_by_ext = M.managed_by_type = NULL;
    ck_assert_int_eq(decide(), OWN_OURS);
    M.managed_by_ext = M.managed_by_type = "";
    ck_assert_int_eq(decide(), OWN_OURS);
}
END_TEST

START_TEST(another_manager_is_foreign)
{
    M.managed_by_ext = "com.example.backup";
    ck_assert_int_eq(decide(), OWN_FOREIGN);
    ck_assert_ptr_nonnull(strstr(why, "managedBy"));
    setup();
    M.managed_by_type = "Template";
    ck_assert_int_eq(decide(), OWN_FOREIGN);
    setup();
    M.managed_by_type = NULL; /* half a managedBy is not vmop's */
    ck_assert_int_eq(decide(), OWN_FOREIGN);
}
END_TEST

START_TEST(a_simulator_vm_without_marks_is_foreign)
{
    /* what a VM vmop never made looks like (DC0_C0_RP0_VM0): the instance UUID the tenant
     * named, nothing else */
    M.managed_by_ext = M.managed_by_type = NULL;
    M.namespaced_name = NULL;
    M.uid = NULL;
    ck_assert_int_eq(decide(), OWN_FOREIGN);
    ck_assert_ptr_nonnull(strstr(why, "vmservice.namespacedName"));
    /* even when the resource's status names it (an administrator's status write) */
    I.status_unique_id = "vm-70";
    ck_assert_int_eq(decide(), OWN_FOREIGN);
}
END_TEST

START_TEST(another_resources_name_is_foreign)
{
    M.namespaced_name = "tenant-b/web";
    ck_assert_int_eq(decide(), OWN_FOREIGN);
    ck_assert_ptr_nonnull(strstr(why, "another resource"));
    ck_assert_ptr_null(strstr(why, "tenant-b")); /* the VM's values are never quoted */
    M.namespaced_name = "tenant-a/web2";
    ck_assert_int_eq(decide(), OWN_FOREIGN);
    M.namespaced_name = "";
    ck_assert_int_eq(decide(), OWN_FOREIGN);
}
END_TEST

START_TEST(recreated_resource_does_not_inherit)
{
    /* same name, same instance UUID (a restore, status carried over), new metadata.uid */
    M.uid = OTHER;
    I.status_unique_id = "vm-70";
    ck_assert_int_eq(decide(), OWN_FOREIGN);
    ck_assert_ptr_nonnull(strstr(why, "vmop.uid"));
    ck_assert_ptr_null(strstr(why, OTHER));
}
END_TEST

START_TEST(outside_the_folder_is_foreign)
{
    M.in_folder = 0;
    ck_assert_int_eq(decide(), OWN_FOREIGN);
    ck_assert_ptr_nonnull(strstr(why, "folder"));
}
END_TEST

START_TEST(template_is_foreign)
{
    M.is_template = 1;
    ck_assert_int_eq(decide(), OWN_FOREIGN);
    ck_assert_ptr_nonnull(strstr(why, "template"));
}
END_TEST

START_TEST(other_instance_uuid_is_foreign)
{
    /* a status.uniqueID that names a VM with another instance UUID */
    M.instance_uuid = "11111111-2222-4333-8444-555555555555";
    I.status_unique_id = "vm-70";
    ck_assert_int_eq(decide(), OWN_FOREIGN);
    ck_assert_ptr_nonnull(strstr(why, "instance UUID"));
    M.instance_uuid = NULL;
    ck_assert_int_eq(decide(), OWN_FOREIGN);
}
END_TEST

START_TEST(legacy_needs_the_status_proof)
{
    M.uid = NULL;
    ck_assert_int_eq(decide(), OWN_FOREIGN); /* no status.uniqueID */
    ck_assert_ptr_nonnull(strstr(why, "status.uniqueID"));
    I.status_unique_id = "vm-71";
    ck_assert_int_eq(decide(), OWN_FOREIGN); /* names another VM */
    I.status_unique_id = "";
    ck_assert_int_eq(decide(), OWN_FOREIGN);
    I.status_unique_id = "vm-70";
    ck_assert_int_eq(decide(), OWN_LEGACY);
    ck_assert_str_eq(own_verdict_str(OWN_LEGACY), "legacy");
    M.uid = ""; /* an emptied mark reads as absent */
    ck_assert_int_eq(decide(), OWN_LEGACY);
}
END_TEST

START_TEST(legacy_needs_vmops_managed_by)
{
    M.uid = NULL;
    I.status_unique_id = "vm-70";
    M.managed_by_ext = M.managed_by_type = NULL;
    ck_assert_int_eq(decide(), OWN_FOREIGN);
    ck_assert_ptr_nonnull(strstr(why, "managedBy"));
}
END_TEST

START_TEST(legacy_still_needs_name_folder_and_uuid)
{
    M.uid = NULL;
    I.status_unique_id = "vm-70";
    M.namespaced_name = "tenant-a/other";
    ck_assert_int_eq(decide(), OWN_FOREIGN);
    setup();
    M.uid = NULL;
    I.status_unique_id = "vm-70";
    M.in_folder = 0;
    ck_assert_int_eq(decide(), OWN_FOREIGN);
}
END_TEST

START_TEST(incomplete_identity_is_foreign)
{
    I.uid = NULL;
    ck_assert_int_eq(decide(), OWN_FOREIGN);
    setup();
    I.uid = "";
    M.uid = "";
    I.status_unique_id = "vm-70";
    ck_assert_int_eq(decide(), OWN_FOREIGN); /* no uid is never "equal" */
    setup();
    I.namespaced_name = NULL;
    ck_assert_int_eq(decide(), OWN_FOREIGN);
    setup();
    I.instance_uuid = "";
    ck_assert_int_eq(decide(), OWN_FOREIGN);
    ck_assert_int_eq(own_decide(NULL, &I, NULL, 0), OWN_FOREIGN);
    ck_assert_int_eq(own_decide(&M, NULL, why, sizeof(why)), OWN_FOREIGN);
    ck_assert_str_eq(own_verdict_str(OWN_FOREIGN), "foreign");
}
END_TEST

START_TEST(why_is_bounded_and_optional)
{
    char small[8];
    M.uid = OTHER;
    ck_assert_int_eq(own_decide(&M, &I, small, sizeof(small)), OWN_FOREIGN);
    ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
    ck_assert_int_eq(own_decide(&M, &I, NULL, 0), OWN_FOREIGN);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ownership");
    TCase *tc = tcase_create("decide");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, all_marks_is_ours);
    tcase_add_test(tc, instance_uuid_case_does_not_matter);
    tcase_add_test(tc, managed_by_absent_is_ours_after_a_crash_right_after_the_clone);
    tcase_add_test(tc, another_manager_is_foreign);
    tcase_add_test(tc, a_simulator_vm_without_marks_is_foreign);
    tcase_add_test(tc, another_resources_name_is_foreign);
    tcase_add_test(tc, recreated_resource_does_not_inherit);
    tcase_add_test(tc, outside_the_folder_is_foreign);
    tcase_add_test(tc, template_is_foreign);
    tcase_add_test(tc, other_instance_uuid_is_foreign);
    tcase_add_test(tc, legacy_needs_the_status_proof);
    tcase_add_test(tc, legacy_needs_vmops_managed_by);
    tcase_add_test(tc, legacy_still_needs_name_folder_and_uuid);
    tcase_add_test(tc, incomplete_identity_is_foreign);
    tcase_add_test(tc, why_is_bounded_and_optional);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
