/* test_owner_sim.c: ownership (operator/vm/ownership.h) through operator/vm/vmsync.c against the
 * vCenter simulator (suite integration).
 *
 * One simulator with its own generated VMs (DC0_C0_RP0_VM0 ...: VMs vmop never made). Covers:
 * a resource whose spec.instanceUUID is a simulator VM's is a conflict (VMOP_E_EXISTS,
 * OwnershipConflict, nothing created), and vs_delete completes without touching it; a
 * status.uniqueID naming a simulator VM is ignored while the resource's own VM exists and is a
 * conflict (nothing created) once it is gone; a resource deleted and created again under the same
 * name (new uid) does not inherit the old VM; a VM outside the binding's folder is not the
 * resource's; a VM without the vmop.uid mark is adopted only when status.uniqueID names it.
 * After each, the foreign VM's power state, CPU, memory, managedBy, folder and ExtraConfig are
 * exactly what they were.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check_main.h"
#include "guestinfo.h"
#include "ownership.h"
#include "sim_fixture.h"
#include "sim_world.h"
#include "vmsync.h"

static void world_init(struct sim_world *w, int n)
{
    sim_world_init(w, 0x0e, "own", n, NULL, NULL);
    w->d.power = API_POWER_OFF;
}

/* What a foreign VM looks like now; compared before and after. */
struct snap {
    struct vim_vm *vm;
};

static void snap_take(struct vim_client *c, const char *path, struct snap *s)
{
    struct vim_moref ref = simfx_find(c, path, "VirtualMachine");

    s->vm = simfx_vm_get(c, &ref);
    ck_assert_ptr_nonnull(s->vm->instance_uuid);
}

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The VM is still there and nothing vmop could change differs. */
static void snap_check_untouched(struct vim_client *c, const struct snap *s)
{
    struct vim_vm *now = NULL;
    struct vmop_err err = {0};
    ck_assert_msg(vim_vm_get(c, &s->vm->ref, &now, &err) == VMOP_OK, "foreign VM %s gone: %s",
                  s->vm->ref.value, err.msg);
    ck_assert_int_eq(now->power_state, s->vm->power_state);
    ck_assert_int_eq(now->num_cpu, s->vm->num_cpu);
    ck_assert_int_eq(now->memory_mb, s->vm->memory_mb);
    ck_assert(same_str(now->managed_by_ext, s->vm->managed_by_ext));
    ck_assert(same_str(now->managed_by_type, s->vm->managed_by_type));
    ck_assert(same_str(now->instance_uuid, s->vm->instance_uuid));
    ck_assert(same_str(now->bios_uuid, s->vm->bios_uuid));
    ck_assert(vim_moref_eq(&now->parent, &s->vm->parent));
    ck_assert_uint_eq(now->n_extra_config, s->vm->n_extra_config);
    for (size_t i = 0; i < now->n_extra_config; i++) {
        const char *k = s->vm->extra_config[i].key;
        ck_assert_msg(same_str(vim_vm_extra_config(now, k), s->vm->extra_config[i].value),
                      "ExtraConfig %s changed", k);
    }
    ck_assert_ptr_null(vim_vm_extra_config(now, OWN_KEY_UID));
    ck_assert_ptr_null(vim_vm_extra_config(now, OWN_KEY_NAMESPACED));
    vim_vm_free(now);
}

static void snap_free(struct snap *s)
{
    vim_vm_free(s->vm);
}

static void foreign_path(char *buf, size_t size)
{
    snprintf(buf, size, "%s/DC0_C0_RP0_VM0", simfx_sim->folder);
}

/* ---- tests ------------------------------------------------------------------------------------
 */

START_TEST(foreign_instance_uuid_is_a_conflict_and_survives_delete)
{
    struct sim_world w;
    struct snap s = {0};
    struct vs_outcome out;
    struct vs_obs o;
    struct vs_deleted del;
    struct vmop_err err = {0};
    char path[512];

    world_init(&w, 1);
    foreign_path(path, sizeof(path));
    snap_take(w.c, path, &s);
    w.d.instance_uuid = s.vm->instance_uuid; /* the tenant names a VM vmop never made */
    w.d.power = s.vm->power_state == VIM_POWER_ON ? API_POWER_OFF : API_POWER_ON;
    w.d.size.num_cpus = s.vm->num_cpu + 1;

    ck_assert_int_eq(vs_apply(w.ctx, &w.d, NULL, NULL, &out, &err), VMOP_E_EXISTS);
    ck_assert_int_eq(out.conflict, 1);
    ck_assert_int_eq(out.failed, 1);
    ck_assert_int_eq(out.created, 0);
    ck_assert_int_eq(out.changed, 0);
    ck_assert_str_eq(out.done, "");
    ck_assert_int_eq(out.failed_step, VM_STEP_OWNERSHIP);
    ck_assert_str_eq(out.fault, VS_REASON_CONFLICT);
    ck_assert_str_eq(out.fault, OWN_REASON_CONFLICT);
    ck_assert_int_eq(out.obs.present, 0);
    ck_assert_ptr_null(out.obs.vm); /* nothing of it is observed */
    ck_assert_int_eq(out.foreign.found, 1);
    ck_assert_int_eq(out.foreign.by_instance_uuid, 1);
    ck_assert_str_eq(out.foreign.ref, s.vm->ref.value);
    ck_assert_ptr_nonnull(strstr(out.message, s.vm->ref.value));
    ck_assert_ptr_nonnull(strstr(out.message, "vmservice.namespacedName"));
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, s.vm->instance_uuid),
                      1); /* nothing made beside it */
    vs_outcome_free(&out);

    /* also with the moref as status.uniqueID (as if it had been written there) */
    vmop_err_clear(&err);
    ck_assert_msg(vs_observe(w.ctx, &w.d, s.vm->ref.value, &o, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_int_eq(o.present, 0);
    ck_assert_int_eq(o.foreign.found, 1);
    ck_assert_int_eq(o.foreign.by_instance_uuid, 1);
    vs_obs_free(&o);

    /* the finalizer's delete completes without touching it */
    ck_assert_msg(vs_delete(w.ctx, &w.d, s.vm->ref.value, API_MODE_HARD, NULL, &del, &err) ==
                      VMOP_OK,
                  "%s", err.msg);
    ck_assert_int_eq(del.gone, 1);
    ck_assert_int_eq(del.destroyed, 0);
    ck_assert_int_eq(del.foreign.found, 1);
    ck_assert_str_eq(del.foreign.ref, s.vm->ref.value);
    snap_check_untouched(w.c, &s);
    snap_free(&s);
    sim_world_free(&w);
}
END_TEST

START_TEST(foreign_unique_id_is_ignored_then_a_conflict)
{
    struct sim_world w;
    struct snap s = {0};
    struct vs_outcome out;
    struct vs_deleted del;
    struct vmop_err err = {0};
    char path[512], own[VIM_MOREF_VALUE_MAX];

    world_init(&w, 2);
    foreign_path(path, sizeof(path));
    snap_take(w.c, path, &s);
    ck_assert_msg(vs_apply(w.ctx, &w.d, NULL, NULL, &out, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_int_eq(out.created, 1);
    snprintf(own, sizeof(own), "%s", out.obs.vm->ref.value);
    vs_outcome_free(&out);

    /* status.uniqueID rewritten to the foreign VM: the resource's own VM is still found */
    ck_assert_msg(vs_apply(w.ctx, &w.d, s.vm->ref.value, NULL, &out, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_int_eq(out.conflict, 0);
    ck_assert_int_eq(out.obs.present, 1);
    ck_assert_str_eq(out.obs.vm->ref.value, own);
    ck_assert_int_eq(out.foreign.found, 1);
    ck_assert_int_eq(out.foreign.by_instance_uuid, 0);
    ck_assert_str_eq(out.foreign.ref, s.vm->ref.value);
    vs_outcome_free(&out);
    snap_check_untouched(w.c, &s);

    /* the own VM gone (deleted in vCenter), the hint still names the foreign VM: nothing is
     * created in its place */
    ck_assert_msg(vs_delete(w.ctx, &w.d, own, API_MODE_HARD, NULL, &del, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_int_eq(del.destroyed, 1);
    ck_assert_int_eq(vs_apply(w.ctx, &w.d, s.vm->ref.value, NULL, &out, &err), VMOP_E_EXISTS);
    ck_assert_int_eq(out.conflict, 1);
    ck_assert_int_eq(out.created, 0);
    ck_assert_int_eq(out.foreign.by_instance_uuid, 0);
    ck_assert_ptr_nonnull(strstr(out.message, "status.uniqueID"));
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 0);
    vs_outcome_free(&out);

    /* and the delete with that status completes, the foreign VM untouched */
    vmop_err_clear(&err);
    ck_assert_msg(vs_delete(w.ctx, &w.d, s.vm->ref.value, API_MODE_HARD, NULL, &del, &err) ==
                      VMOP_OK,
                  "%s", err.msg);
    ck_assert_int_eq(del.gone, 1);
    ck_assert_int_eq(del.destroyed, 0);
    ck_assert_int_eq(del.foreign.found, 1);
    snap_check_untouched(w.c, &s);
    snap_free(&s);
    sim_world_free(&w);
}
END_TEST

START_TEST(recreated_resource_does_not_inherit_the_old_vm)
{
    struct sim_world w;
    struct vs_outcome out;
    struct vs_deleted del;
    struct vmop_err err = {0};
    char old[VIM_MOREF_VALUE_MAX], new_uid[40];

    world_init(&w, 3);
    ck_assert_msg(vs_apply(w.ctx, &w.d, NULL, NULL, &out, &err) == VMOP_OK, "%s", err.msg);
    snprintf(old, sizeof(old), "%s", out.obs.vm->ref.value);
    vs_outcome_free(&out);

    /* same name and instance UUID (a restore that carried spec and status), new metadata.uid */
    snprintf(new_uid, sizeof(new_uid), "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a");
    w.d.resource_uid = new_uid;
    w.d.size.num_cpus = 2;
    ck_assert_int_eq(vs_apply(w.ctx, &w.d, old, NULL, &out, &err), VMOP_E_EXISTS);
    ck_assert_int_eq(out.conflict, 1);
    ck_assert_int_eq(out.foreign.by_instance_uuid, 1);
    ck_assert_ptr_nonnull(strstr(out.message, OWN_KEY_UID));
    vs_outcome_free(&out);
    vmop_err_clear(&err);
    ck_assert_msg(vs_delete(w.ctx, &w.d, old, API_MODE_HARD, NULL, &del, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_int_eq(del.destroyed, 0);
    ck_assert_int_eq(del.foreign.found, 1);
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 1); /* the old VM is still there */

    /* the resource it was made for still owns it */
    w.d.resource_uid = w.uid;
    ck_assert_msg(vs_delete(w.ctx, &w.d, old, API_MODE_HARD, NULL, &del, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_int_eq(del.destroyed, 1);
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 0);
    sim_world_free(&w);
}
END_TEST

START_TEST(outside_the_folder_is_not_ours)
{
    struct sim_world w;
    struct vs_outcome out;
    struct vs_obs o;
    struct vs_deleted del;
    struct vmop_err err = {0};
    char own[VIM_MOREF_VALUE_MAX], other[512];

    world_init(&w, 4);
    ck_assert_msg(vs_apply(w.ctx, &w.d, NULL, NULL, &out, &err) == VMOP_OK, "%s", err.msg);
    snprintf(own, sizeof(own), "%s", out.obs.vm->ref.value);
    vs_outcome_free(&out);
    /* the same resource bound to another folder (any Folder of the inventory serves) */
    snprintf(other, sizeof(other), "%s/host", simfx_sim->datacenter);
    w.d.folder = other;
    ck_assert_msg(vs_observe(w.ctx, &w.d, own, &o, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_int_eq(o.present, 0);
    ck_assert_int_eq(o.foreign.found, 1);
    ck_assert_ptr_nonnull(strstr(o.foreign.why, "folder"));
    vs_obs_free(&o);
    ck_assert_int_eq(vs_apply(w.ctx, &w.d, own, NULL, &out, &err), VMOP_E_EXISTS);
    ck_assert_int_eq(out.created, 0);
    vs_outcome_free(&out);
    w.d.folder = simfx_sim->folder;
    vmop_err_clear(&err);
    ck_assert_msg(vs_delete(w.ctx, &w.d, own, API_MODE_HARD, NULL, &del, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_int_eq(del.destroyed, 1);
    sim_world_free(&w);
}
END_TEST

START_TEST(legacy_vm_is_adopted_only_with_the_status_proof)
{
    struct sim_world w;
    struct vs_outcome out;
    struct vim_config_spec *cs = NULL;
    struct vim_moref ref;
    struct vim_vm *vm = NULL;
    struct vs_deleted del;
    struct vmop_err err = {0};
    char own[VIM_MOREF_VALUE_MAX];

    world_init(&w, 5);
    ck_assert_msg(vs_apply(w.ctx, &w.d, NULL, NULL, &out, &err) == VMOP_OK, "%s", err.msg);
    snprintf(own, sizeof(own), "%s", out.obs.vm->ref.value);
    ref = out.obs.vm->ref;
    vs_outcome_free(&out);
    /* what an earlier release left: every mark but vmop.uid */
    ck_assert(vim_config_spec_new(&cs) == VMOP_OK);
    ck_assert(vim_cs_extra_config(cs, OWN_KEY_UID, NULL) == VMOP_OK);
    ck_assert_msg(vim_vm_reconfigure(w.c, &ref, cs, &err) == VMOP_OK, "%s", err.msg);
    vim_config_spec_free(cs);

    /* found by the instance UUID only: not proven */
    ck_assert_int_eq(vs_apply(w.ctx, &w.d, NULL, NULL, &out, &err), VMOP_E_EXISTS);
    ck_assert_int_eq(out.conflict, 1);
    vs_outcome_free(&out);
    /* the resource's status.uniqueID names it: adopted, the mark added */
    vmop_err_clear(&err);
    ck_assert_msg(vs_apply(w.ctx, &w.d, own, NULL, &out, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_int_eq(out.adopted, 1);
    ck_assert_int_eq(out.created, 0);
    ck_assert_ptr_nonnull(strstr(out.done, "adopt"));
    ck_assert(out.did & VM_DID(VM_STEP_ADOPT));
    ck_assert_int_eq(out.obs.present, 1);
    ck_assert_int_eq(out.obs.legacy, 0);
    vs_outcome_free(&out);
    vm = simfx_vm_get(w.c, &ref);
    ck_assert_str_eq(vim_vm_extra_config(vm, OWN_KEY_UID), w.uid);
    vim_vm_free(vm);
    /* from now on the instance UUID alone finds it */
    ck_assert_msg(vs_apply(w.ctx, &w.d, NULL, NULL, &out, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_int_eq(out.adopted, 0);
    ck_assert_str_eq(out.done, "");
    vs_outcome_free(&out);
    ck_assert_msg(vs_delete(w.ctx, &w.d, own, API_MODE_HARD, NULL, &del, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_int_eq(del.destroyed, 1);
    sim_world_free(&w);
}
END_TEST

int main(void)
{
    static const struct vcsim_opts opts = {0}; /* the launcher's default inventory, its VMs */
    Suite *s = suite_create("ownership-sim");
    TCase *tc = simfx_tcase(s, "sim", &opts, 120);
    tcase_add_test(tc, foreign_instance_uuid_is_a_conflict_and_survives_delete);
    tcase_add_test(tc, foreign_unique_id_is_ignored_then_a_conflict);
    tcase_add_test(tc, recreated_resource_does_not_inherit_the_old_vm);
    tcase_add_test(tc, outside_the_folder_is_not_ours);
    tcase_add_test(tc, legacy_vm_is_adopted_only_with_the_status_proof);
    return vmop_check_run(s);
}
