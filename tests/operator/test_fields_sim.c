/* test_fields_sim.c: the fields beyond sizing (issue 11; owner: fields) applied by vmsync and read
 * back from the vCenter simulator (suite integration).
 *
 * One simulator per run, no generated VMs; each test its own VM. Covers: a create that asks for a
 * guestId, a hardware version above the image's (UpgradeVM_Task before the first power-on), EFI
 * firmware with boot options (delay, retry, secure boot, network protocol, a boot order naming the
 * NIC and the boot disk by device key), changed block tracking, a bigger boot disk, the class's
 * CPU/memory limits and extraConfig and NIC adapter type: all read back as asked, and a second
 * apply changes nothing (the comparisons agree with what vCenter shows). On a running VM: CBT and
 * the disk change at once; guestId, firmware and the hardware version wait (deferred) and are
 * applied by the power-off that follows; a boot disk size below the disk's is not shrunk.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check_main.h"
#include "sim_fixture.h"
#include "sim_world.h"
#include "vmsync.h"

static void world_init(struct sim_world *w, int n)
{
    sim_world_init(w, 0x1f, "fields", n, NULL, NULL);
    sim_world_nic(w, NULL, NULL);
    w->d.size.num_cpus = 2;
    w->d.size.memory_mb = 1024;
    w->d.size.cpu_reservation_mhz = 0;
    w->d.size.cpu_limit_mhz = 1500; /* the class's limits */
    w->d.size.mem_reservation_mb = 0;
    w->d.size.mem_limit_mb = 768;
}

static void apply_ok(struct sim_world *w, const char *unique_id, struct vs_outcome *out)
{
    struct vmop_err err = {0};
    vmop_rc rc = vs_apply(w->ctx, &w->d, unique_id, NULL, out, &err);
    ck_assert_msg(rc == VMOP_OK, "apply: %s [%s] step %s", err.msg, err.fault,
                  vm_step_str(out->failed_step));
    ck_assert_int_eq(out->obs.present, 1);
}

static int hw(const struct vim_vm *vm)
{
    return vm->hw_version && !strncmp(vm->hw_version, "vmx-", 4) ? atoi(vm->hw_version + 4) : 0;
}

static const struct vim_disk *first_disk(const struct vim_vm *vm)
{
    const struct vim_disk *b = NULL;
    for (size_t i = 0; i < vm->n_disks; i++)
        if (!b || vm->disks[i].key < b->key)
            b = &vm->disks[i];
    return b;
}

START_TEST(create_with_every_field)
{
    struct sim_world w;
    struct vs_outcome out, again;
    const struct vim_vm *vm;
    const struct vim_disk *disk;
    struct vmop_err err = {0};

    world_init(&w, 1);
    w.d.guest_id = "ubuntu64Guest";
    w.d.hw_version = 17;       /* the image is vmx-13 */
    w.d.class_hw_version = 19; /* the higher one wins */
    w.d.firmware = "efi";
    w.d.boot.set = 1;
    w.d.boot.delay_ms = 2000;
    w.d.boot.retry = RS_YES;
    w.d.boot.retry_delay_ms = 15000;
    w.d.boot.efi_secure_boot = RS_YES;
    w.d.boot.network_protocol = "ipv6";
    w.d.boot.has_order = 1;
    w.d.boot.order[0].kind = RS_BOOT_NETWORK;
    w.d.boot.order[0].nic = 0;
    w.d.boot.order[1].kind = RS_BOOT_DISK;
    w.d.boot.n_order = 2;
    w.d.cbt = RS_YES;
    w.d.boot_disk_mb = 2048; /* the image's disk has 1 GiB */
    w.d.extra[0].key = "vmop.test.class";
    w.d.extra[0].value = "from-the-class";
    w.d.n_extra = 1;
    w.d.nics[0].device_type = "VirtualE1000e"; /* the image's NIC is a VMXNet3 */

    apply_ok(&w, NULL, &out);
    ck_assert_int_eq(out.created, 1);
    ck_assert_msg(strstr(out.done, "upgrade") != NULL, "done: %s", out.done);
    ck_assert_msg(strstr(out.done, "upgrade") < strstr(out.done, "power-on"), "done: %s", out.done);
    vm = out.obs.vm;
    ck_assert_int_eq(vm->power_state, VIM_POWER_ON);
    ck_assert_str_eq(vm->guest_id, "ubuntu64Guest");
    ck_assert_int_eq(hw(vm), 19);
    ck_assert_str_eq(vm->firmware, "efi");
    ck_assert_int_eq(vm->change_tracking, 1);
    ck_assert_int_eq(vm->boot.delay_ms, 2000);
    ck_assert_int_eq(vm->boot.retry, 1);
    ck_assert_int_eq(vm->boot.retry_delay_ms, 15000);
    ck_assert_int_eq(vm->boot.efi_secure_boot, 1);
    ck_assert_str_eq(vm->boot.network_protocol, "ipv6");
    ck_assert_uint_eq(vm->n_nics, 1);
    ck_assert_str_eq(vm->nics[0].device_type, "VirtualE1000e");
    ck_assert_uint_eq(vm->boot.n_order, 2);
    ck_assert_str_eq(vm->boot.order[0].type, "VirtualMachineBootOptionsBootableEthernetDevice");
    ck_assert_int_eq(vm->boot.order[0].device_key, vm->nics[0].key);
    disk = first_disk(vm);
    ck_assert_ptr_nonnull(disk);
    ck_assert_str_eq(vm->boot.order[1].type, "VirtualMachineBootOptionsBootableDiskDevice");
    ck_assert_int_eq(vm->boot.order[1].device_key, disk->key);
    ck_assert_int_eq(disk->capacity_kb, 2048 * 1024);
    ck_assert_int_eq(vm->cpu_alloc.limit, 1500);
    ck_assert_int_eq(vm->mem_alloc.limit, 768);
    ck_assert_str_eq(vim_vm_extra_config(vm, "vmop.test.class"), "from-the-class");

    /* what vCenter shows is what was asked: nothing more to do */
    ck_assert_msg(vs_apply(w.ctx, &w.d, vm->ref.value, NULL, &again, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_msg(again.changed == 0, "second apply did: %s", again.done);
    ck_assert_uint_eq(again.deferred_fields, 0);
    vs_outcome_free(&again);
    vs_outcome_free(&out);
    sim_world_free(&w);
}
END_TEST

START_TEST(running_vm_live_and_deferred)
{
    struct sim_world w;
    struct vs_outcome out;
    char id[VIM_MOREF_VALUE_MAX];

    world_init(&w, 2);
    apply_ok(&w, NULL, &out);
    snprintf(id, sizeof(id), "%s", out.obs.vm->ref.value);
    ck_assert_int_eq(out.obs.vm->power_state, VIM_POWER_ON);
    ck_assert_int_eq(hw(out.obs.vm), 13);
    vs_outcome_free(&out);

    /* while it runs: CBT and the disk now; guestId, firmware and the version wait */
    w.d.cbt = RS_YES;
    w.d.boot_disk_mb = 3072;
    w.d.guest_id = "centos8_64Guest";
    w.d.firmware = "efi";
    w.d.hw_version = 19;
    apply_ok(&w, id, &out);
    ck_assert_int_eq(out.obs.vm->change_tracking, 1);
    ck_assert_int_eq(first_disk(out.obs.vm)->capacity_kb, 3072 * 1024);
    ck_assert_str_ne(out.obs.vm->guest_id, "centos8_64Guest");
    ck_assert_int_eq(hw(out.obs.vm), 13);
    ck_assert_uint_eq(out.deferred_fields, PL_F_GUEST_ID | PL_F_FIRMWARE | PL_F_HW_VERSION);
    ck_assert_int_eq(out.needs_power_cycle, 0);
    vs_outcome_free(&out);

    /* powered off: everything that waited is applied */
    w.d.power = API_POWER_OFF;
    w.d.power_off_mode = API_MODE_HARD;
    apply_ok(&w, id, &out);
    ck_assert_int_eq(out.obs.vm->power_state, VIM_POWER_OFF);
    ck_assert_str_eq(out.obs.vm->guest_id, "centos8_64Guest");
    ck_assert_str_eq(out.obs.vm->firmware, "efi");
    ck_assert_int_eq(hw(out.obs.vm), 19);
    ck_assert_uint_eq(out.deferred_fields, 0);
    vs_outcome_free(&out);

    /* a smaller boot disk is not made: flagged, the disk keeps its size */
    w.d.boot_disk_mb = 1024;
    apply_ok(&w, id, &out);
    ck_assert_int_eq(out.disk_not_shrunk, 1);
    ck_assert_int_eq(out.disk_kb, 3072 * 1024);
    ck_assert_int_eq(first_disk(out.obs.vm)->capacity_kb, 3072 * 1024);
    ck_assert_int_eq(out.changed, 0);
    vs_outcome_free(&out);
    sim_world_free(&w);
}
END_TEST

int main(void)
{
    static const struct vcsim_opts opts = {.vms = VCSIM_NONE, .no_autostart = 1};
    Suite *s = suite_create("fields_sim");
    TCase *tc = simfx_tcase(s, "fields", &opts, 120);
    tcase_add_test(tc, create_with_every_field);
    tcase_add_test(tc, running_vm_live_and_deferred);
    return vmop_check_run(s);
}
