/* test_vim_pbm_sim.c: vim_pbm.c against the vCenter simulator with govmomi's PBM simulator
 * (suite integration). One simulator per run (tests/common/sim_fixture.h); every test makes its own
 * client.
 * Covers: PbmRetrieveServiceContent (after a vim25 login, with the session cookie and header),
 * PbmRetrieveContent of the simulator's "vSAN Default Storage Policy" and of an unknown ID
 * (VMOP_E_NOT_FOUND), PbmCheckRequirements over the cluster's datastores, the cluster's datastore
 * list, re-login after a logout, and a clone whose RelocateSpec carries the policy.
 * Simulator facts relied on: PbmCheckRequirements ignores hubsToSearch and answers every datastore
 * as compatible; an unknown profile ID is an InvalidArgument fault.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim_fixture.h"
#include "vim_internal.h"

#define POLICY      "aa6d5a82-1c88-45da-85d3-3d74b91a5bad"
#define POLICY_NAME "vSAN Default Storage Policy"

static struct vim_pbm *pbm(struct vim_client *c)
{
    struct vim_pbm *p = NULL;
    struct vmop_err err = {0};
    ck_assert_msg(vim_pbm_new(c, &p, &err) == VMOP_OK, "pbm: %s", err.msg);
    ck_assert_ptr_nonnull(p);
    return p;
}

START_TEST(test_profile_known_unknown)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_pbm *p = pbm(c);
    struct vim_pbm_profile *prof = NULL;
    struct vmop_err err = {0};

    ck_assert_msg(vim_pbm_profile_get(p, POLICY, &prof, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_str_eq(prof->id, POLICY);
    ck_assert_str_eq(prof->name, POLICY_NAME);
    vim_pbm_profile_free(prof);
    prof = NULL;

    ck_assert_int_eq(vim_pbm_profile_get(p, "00000000-0000-0000-0000-000000000000", &prof, &err),
                     VMOP_E_NOT_FOUND);
    ck_assert_ptr_null(prof);
    ck_assert_ptr_nonnull(strstr(err.msg, "00000000-0000-0000-0000-000000000000"));
    ck_assert_ptr_nonnull(strstr(err.msg, "not found"));

    vmop_err_clear(&err);
    ck_assert_int_eq(vim_pbm_profile_get(p, "", &prof, &err), VMOP_E_INVALID);
    vim_pbm_free(p);
    vim_client_free(c);
}
END_TEST

START_TEST(test_check_requirements)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_pbm *p = pbm(c);
    struct vim_moref cluster = simfx_find(c, simfx_sim->cluster, NULL);
    struct vim_moref ds = simfx_find(c, simfx_sim->datastore, "Datastore");
    struct vim_moref *cands = NULL, *compat = NULL;
    size_t n_cands = 0, n_compat = 0;
    int found = 0;
    struct vmop_err err = {0};

    ck_assert_msg(vim_compute_datastores(c, &cluster, &cands, &n_cands, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_uint_ge(n_cands, 1);
    for (size_t i = 0; i < n_cands; i++) {
        ck_assert_str_eq(cands[i].type, "Datastore");
        found |= vim_moref_eq(&cands[i], &ds);
    }
    ck_assert_msg(found, "the cluster's datastores do not include %s", ds.value);

    ck_assert_msg(vim_pbm_compatible_datastores(p, POLICY, cands, n_cands, &compat, &n_compat,
                                                &err) == VMOP_OK,
                  "%s", err.msg);
    ck_assert_uint_ge(n_compat, 1);
    found = 0;
    for (size_t i = 0; i < n_compat; i++)
        found |= vim_moref_eq(&compat[i], &ds);
    ck_assert(found);
    free(compat);
    free(cands);

    /* not a compute resource */
    ck_assert_int_eq(vim_compute_datastores(c, &ds, &cands, &n_cands, &err), VMOP_E_INVALID);
    vim_pbm_free(p);
    vim_client_free(c);
}
END_TEST

/* A session that died (logged out) is re-established for PBM calls too. */
START_TEST(test_relogin)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_pbm *p = pbm(c);
    struct vim_pbm_profile *prof = NULL;
    struct vim_stats st0, st1;
    struct vmop_err err = {0};

    vim_client_stats(c, &st0);
    /* logged out behind vimclient's back: drop the session on the server only */
    {
        struct vim_resp *r = NULL;
        ck_assert_int_eq(
            vim_soap_call_raw(c, "Logout", &c->sc_session_manager, NULL, VIM_RET_NONE, &r, &err),
            VMOP_OK);
        vim_resp_free(r);
    }
    ck_assert_msg(vim_pbm_profile_get(p, POLICY, &prof, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_str_eq(prof->name, POLICY_NAME);
    vim_client_stats(c, &st1);
    ck_assert_uint_eq(st1.relogins, st0.relogins + 1);
    vim_pbm_profile_free(prof);
    vim_pbm_free(p);
    vim_client_free(c);
}
END_TEST

START_TEST(test_clone_with_profile)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_moref folder = simfx_find(c, simfx_sim->folder, "Folder");
    struct vim_moref pool = simfx_find(c, simfx_sim->resource_pool, "ResourcePool");
    struct vim_moref ds = simfx_find(c, simfx_sim->datastore, "Datastore");
    struct vim_entity_list vms = {0};
    struct vim_moref src = {{0}}, vm;
    struct vim_vm *v = NULL;
    struct vmop_err err = {0};

    ck_assert_msg(vim_list(c, NULL, "VirtualMachine", &vms, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_uint_ge(vms.n, 1);
    src = vms.items[0].ref;
    vim_entity_list_free(&vms);
    {
        struct vim_clone_spec cs = {.source = &src,
                                    .folder = &folder,
                                    .name = "pbm-clone",
                                    .pool = &pool,
                                    .datastore = &ds,
                                    .profile_id = POLICY};
        ck_assert_msg(vim_vm_clone(c, &cs, &vm, &err) == VMOP_OK, "clone: %s", err.msg);
    }
    ck_assert_msg(vim_vm_get(c, &vm, &v, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_str_eq(v->name, "pbm-clone");
    ck_assert(vim_moref_eq(&v->datastore, &ds));
    vim_vm_free(v);
    ck_assert_msg(vim_vm_destroy(c, &vm, &err) == VMOP_OK, "%s", err.msg);
    vim_client_free(c);
}
END_TEST

static Suite *pbm_sim_suite(void)
{
    Suite *s = suite_create("vim_pbm_sim");
    TCase *tc = simfx_tcase(s, "sim", NULL, 120);

    tcase_add_test(tc, test_profile_known_unknown);
    tcase_add_test(tc, test_check_requirements);
    tcase_add_test(tc, test_relogin);
    tcase_add_test(tc, test_clone_with_profile);
    return s;
}

int main(void)
{
    return vmop_check_run(pbm_sim_suite());
}
