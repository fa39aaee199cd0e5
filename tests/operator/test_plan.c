/* test_plan.c: unit tests for operator/vm/plan.c: the create sequence, a VM in sync, every drifted
 * field, NIC changes, guestinfo changes, each power transition and mode, CPU/memory on a running
 * VM (deferred), and delete plans. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check_main.h"
#include "guestinfo.h"
#include "plan.h"

#define BIOS "0b7f5a3e-7a44-4f4a-9d0e-3f2c1a9b8c7d"
#define INST "4c3b2a19-0817-4e6f-8d5c-4b3a29180716"
#define SW   "fea97929-4b2d-5972-b146-930c6d0b4014"
#define PG   "dvportgroup-13"
#define MAC0 "00:50:56:AA:BB:CC"
#define UD   "#cloud-config\nruncmd: [echo hi]\n"

struct fx {
    cJSON *addrs;
    struct api_vm_nic spec[2];
    struct rs_desired d;
    struct pl_backing bk[2];
    struct pl_obs o;
    char *metadata; /* what an in-sync VM shows */
};

static struct fx F;

static void setup(void)
{
    struct vmop_err err = {0};
    memset(&F, 0, sizeof(F));
    F.addrs = cJSON_CreateArray();
    cJSON_AddItemToArray(F.addrs, cJSON_CreateString("192.168.1.10/24"));
    F.spec[0].name = "eth0";
    F.spec[0].addresses = F.addrs;
    F.spec[0].gateway4 = "192.168.1.1";
    F.spec[1].name = "eth1";

    F.d.resource_pool = "/DC0/host/DC0_C0/Resources";
    F.d.folder = "/DC0/vm";
    F.d.library_item_id = "item-1";
    F.d.size.num_cpus = 2;
    F.d.size.memory_mb = 1024;
    F.d.size.cpu_reservation_mhz = 500;
    F.d.size.cpu_limit_mhz = 1000;
    F.d.size.mem_reservation_mb = 512;
    F.d.size.mem_limit_mb = -1;
    F.d.bios_uuid = BIOS;
    F.d.instance_uuid = INST;
    strcpy(F.d.namespaced_name, "ns/vm1");
    F.d.nics[0].name = "eth0";
    F.d.nics[0].port_group = "DC0_DVPG0";
    F.d.nics[0].spec = &F.spec[0];
    F.d.nics[1].name = "eth1";
    F.d.nics[1].port_group = "DC0_DVPG0";
    F.d.nics[1].spec = &F.spec[1];
    F.d.n_nics = 1;
    F.d.cloud_init = 1;
    F.d.instance_id = BIOS;
    strcpy(F.d.hostname, "vm1");
    F.d.userdata = strdup(UD);
    F.d.userdata_len = strlen(UD);
    F.d.power = API_POWER_ON;
    F.bk[0].switch_uuid = SW;
    F.bk[0].portgroup_key = PG;
    F.bk[1] = F.bk[0];

    /* an observed VM that matches */
    F.o.present = 1;
    F.o.power = PL_STATE_ON;
    F.o.bios_uuid = BIOS;
    F.o.instance_uuid = INST;
    F.o.managed_by_ext = PL_MANAGED_BY_EXT;
    F.o.managed_by_type = PL_MANAGED_BY_TYPE;
    F.o.namespaced_name = "ns/vm1";
    F.o.num_cpus = 2;
    F.o.memory_mb = 1024;
    F.o.cpu_reservation = 500;
    F.o.cpu_limit = 1000;
    F.o.mem_reservation = 512;
    F.o.mem_limit = -1;
    F.o.nics[0].key = 4000;
    F.o.nics[0].device_type = "VirtualVmxnet3";
    F.o.nics[0].mac = MAC0;
    F.o.nics[0].switch_uuid = SW;
    F.o.nics[0].portgroup_key = PG;
    F.o.nics[1] = F.o.nics[0];
    F.o.nics[1].key = 4001;
    F.o.nics[1].mac = "00:50:56:aa:bb:dd";
    F.o.n_nics = 1;
    ck_assert_int_eq(pl_metadata_json(&F.d, &F.o, &F.metadata, &err), VMOP_OK);
    F.o.metadata = F.metadata;
    F.o.metadata_encoding = GI_ENCODING_GZIP_BASE64;
    F.o.userdata = UD;
    F.o.userdata_len = strlen(UD);
    F.o.userdata_encoding = GI_ENCODING_GZIP_BASE64;
}

static void teardown(void)
{
    cJSON_Delete(F.addrs);
    free(F.d.userdata);
    free(F.metadata);
}

static void plan(struct pl_plan *p)
{
    struct vmop_err err = {0};
    struct pl_input in = {&F.d, F.bk, &F.o};
    ck_assert_int_eq(pl_plan(&in, p, &err), VMOP_OK);
}

/* Asserts the plan's kinds, in order. */
static void expect_kinds(const struct pl_plan *p, size_t n, const enum pl_kind *kinds)
{
    ck_assert_uint_eq(p->n, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_str_eq(pl_kind_str(p->actions[i].kind), pl_kind_str(kinds[i]));
}

START_TEST(absent_vm_create_sequence)
{
    struct pl_plan p;
    static const enum pl_kind k[] = {PL_CREATE,    PL_REOBSERVE,   PL_RECONFIGURE,
                                     PL_REOBSERVE, PL_RECONFIGURE, PL_POWER_ON};
    F.o.present = 0;
    plan(&p);
    expect_kinds(&p, 6, k);
    ck_assert_int_eq(p.actions[0].deferred, 0);
    ck_assert_int_eq(p.actions[1].deferred, 0);
    ck_assert_uint_eq(p.actions[2].fields, PL_F_HARDWARE | PL_F_CPU_ALLOC | PL_F_MEM_ALLOC |
                                               PL_F_NICS | PL_F_MANAGED_BY | PL_F_BIOS_UUID);
    ck_assert_int_eq(p.actions[2].deferred, 1);
    ck_assert_uint_eq(p.actions[4].fields, PL_F_METADATA | PL_F_USERDATA);
    ck_assert_int_eq(p.actions[5].deferred, 1);
    pl_plan_free(&p);

    /* no cloud-init, stays off */
    F.d.cloud_init = 0;
    F.d.power = API_POWER_OFF;
    plan(&p);
    static const enum pl_kind k2[] = {PL_CREATE, PL_REOBSERVE, PL_RECONFIGURE};
    expect_kinds(&p, 3, k2);
    ck_assert_int_eq(p.power_unreachable, 0);
    pl_plan_free(&p);

    F.d.power = API_POWER_SUSPENDED;
    plan(&p);
    ck_assert_int_eq(p.power_unreachable, 1);
    pl_plan_free(&p);
}
END_TEST

START_TEST(in_sync_vm_empty_plan)
{
    struct pl_plan p;
    plan(&p);
    ck_assert_uint_eq(p.n, 0);
    ck_assert_int_eq(p.needs_power_cycle, 0);
    ck_assert_int_eq(p.power_unreachable, 0);
    ck_assert_ptr_nonnull(p.metadata_json);
    pl_plan_free(&p);

    /* case of the BIOS UUID and unset allocations that mean the same do not count */
    F.o.bios_uuid = "0B7F5A3E-7A44-4F4A-9D0E-3F2C1A9B8C7D";
    F.o.mem_limit = PL_ALLOC_UNSET;
    F.d.size.cpu_reservation_mhz = 0;
    F.o.cpu_reservation = PL_ALLOC_UNSET;
    plan(&p);
    ck_assert_uint_eq(p.n, 0);
    pl_plan_free(&p);
}
END_TEST

/* Each drifted field on a powered-off VM that stays off: one RECONFIGURE with exactly that bit. */
START_TEST(each_drifted_field)
{
    static const unsigned bits[] = {PL_F_NUM_CPUS,   PL_F_MEMORY,          PL_F_CPU_RESERVATION,
                                    PL_F_CPU_LIMIT,  PL_F_MEM_RESERVATION, PL_F_MEM_LIMIT,
                                    PL_F_MANAGED_BY, PL_F_BIOS_UUID,       PL_F_NAMESPACED_NAME,
                                    PL_F_METADATA,   PL_F_USERDATA};
    int i = _i;
    struct pl_plan p;

    F.d.power = API_POWER_OFF;
    F.o.power = PL_STATE_OFF;
    switch (bits[i]) {
    case PL_F_NUM_CPUS:
        F.o.num_cpus = 1;
        break;
    case PL_F_MEMORY:
        F.o.memory_mb = 32;
        break;
    case PL_F_CPU_RESERVATION:
        F.o.cpu_reservation = 0;
        break;
    case PL_F_CPU_LIMIT:
        F.o.cpu_limit = -1;
        break;
    case PL_F_MEM_RESERVATION:
        F.o.mem_reservation = PL_ALLOC_UNSET;
        break;
    case PL_F_MEM_LIMIT:
        F.o.mem_limit = 2048;
        break;
    case PL_F_MANAGED_BY:
        F.o.managed_by_ext = NULL;
        break;
    case PL_F_BIOS_UUID:
        F.o.bios_uuid = "11111111-2222-3333-4444-555555555555";
        break;
    case PL_F_NAMESPACED_NAME:
        F.o.namespaced_name = "other/vm1";
        break;
    case PL_F_METADATA:
        F.o.metadata = "{\"instance-id\":\"old\"}";
        break;
    case PL_F_USERDATA:
        F.o.userdata = "#cloud-config\nruncmd: [echo bye]\n";
        break;
    }
    plan(&p);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_int_eq(p.actions[0].kind, PL_RECONFIGURE);
    ck_assert_uint_eq(p.actions[0].fields, bits[i]);
    ck_assert_int_eq(p.actions[0].deferred, 0);
    ck_assert_int_eq(p.needs_power_cycle, 0);
    pl_plan_free(&p);
}
END_TEST

START_TEST(guestinfo_rules)
{
    struct pl_plan p;
    /* right content, wrong encoding key: rewrite */
    F.o.metadata_encoding = "base64";
    plan(&p);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_uint_eq(p.actions[0].fields, PL_F_METADATA);
    pl_plan_free(&p);
    F.o.metadata_encoding = GI_ENCODING_GZIP_BASE64;

    /* the MAC changed: the metadata must follow it */
    F.o.nics[0].mac = "00:50:56:00:00:01";
    plan(&p);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_uint_eq(p.actions[0].fields, PL_F_METADATA);
    ck_assert_ptr_nonnull(strstr(p.metadata_json, "00:50:56:00:00:01"));
    pl_plan_free(&p);
    F.o.nics[0].mac = MAC0;

    /* user data removed from the spec: removed from the VM; absent on both: nothing */
    free(F.d.userdata);
    F.d.userdata = NULL;
    F.d.userdata_len = 0;
    plan(&p);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_uint_eq(p.actions[0].fields, PL_F_USERDATA);
    pl_plan_free(&p);
    F.o.userdata = NULL;
    F.o.userdata_len = 0;
    plan(&p);
    ck_assert_uint_eq(p.n, 0);
    pl_plan_free(&p);

    /* no cloud-init: guestinfo is not looked at */
    F.d.cloud_init = 0;
    F.o.metadata = NULL;
    plan(&p);
    ck_assert_uint_eq(p.n, 0);
    ck_assert_ptr_null(p.metadata_json);
    pl_plan_free(&p);
}
END_TEST

START_TEST(metadata_document)
{
    struct vmop_err err = {0};
    char *json = NULL;
    ck_assert_int_eq(pl_metadata_json(&F.d, &F.o, &json, &err), VMOP_OK);
    ck_assert_ptr_nonnull(strstr(json, "00:50:56:aa:bb:cc")); /* lower-cased */
    ck_assert_ptr_nonnull(strstr(json, "192.168.1.10/24"));
    ck_assert_ptr_nonnull(strstr(json, "192.168.1.1"));
    ck_assert_ptr_nonnull(strstr(json, BIOS));
    ck_assert_ptr_nonnull(strstr(json, "\"vm1\""));
    ck_assert_ptr_null(strstr(json, "runcmd")); /* user data never goes into metadata */
    free(json);

    /* no address: DHCP */
    F.spec[0].addresses = NULL;
    ck_assert_int_eq(pl_metadata_json(&F.d, &F.o, &json, &err), VMOP_OK);
    cJSON *doc = cJSON_Parse(json);
    ck_assert_ptr_nonnull(doc);
    cJSON *eth0 = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "network"), "ethernets"), "eth0");
    ck_assert_ptr_nonnull(eth0);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(eth0, "dhcp4")));
    cJSON_Delete(doc);
    free(json);
}
END_TEST

START_TEST(nic_backing_drift)
{
    struct pl_plan p;
    F.o.nics[0].portgroup_key = "dvportgroup-99";
    plan(&p);
    /* an edited NIC keeps its MAC: the guestinfo (in sync) is not written again, and nothing
     * waits for a new observation */
    ck_assert_uint_eq(p.n, 1);
    ck_assert_str_eq(pl_kind_str(p.actions[0].kind), pl_kind_str(PL_RECONFIGURE));
    ck_assert_uint_eq(p.actions[0].fields, PL_F_NICS);
    ck_assert_uint_eq(p.actions[0].n_nic_ops, 1);
    ck_assert_int_eq(p.actions[0].nic_ops[0].op, PL_NIC_EDIT);
    ck_assert_uint_eq(p.actions[0].nic_ops[0].obs, 0);
    pl_plan_free(&p);

    /* guestinfo out of date as well: the same one reconfigure writes it, from the MACs seen */
    F.o.metadata = "stale";
    plan(&p);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_uint_eq(p.actions[0].fields, PL_F_NICS | PL_F_METADATA);
    ck_assert_uint_eq(p.actions[0].n_nic_ops, 1);
    ck_assert_int_eq(p.actions[0].deferred, 0);
    pl_plan_free(&p);
    F.o.metadata = F.metadata;

    /* a standard-network NIC (no DVPG backing) is re-backed too */
    F.o.nics[0].switch_uuid = NULL;
    F.o.nics[0].portgroup_key = NULL;
    plan(&p);
    ck_assert_uint_eq(p.actions[0].n_nic_ops, 1);
    ck_assert_int_eq(p.actions[0].nic_ops[0].op, PL_NIC_EDIT);
    pl_plan_free(&p);
}
END_TEST

START_TEST(nics_added_and_removed)
{
    struct pl_plan p;
    /* desired two, VM has one: add eth1; the VM is off and must come on: power-on after the
     * guestinfo, recomputed after the re-observation */
    F.d.n_nics = 2;
    F.o.power = PL_STATE_OFF;
    plan(&p);
    static const enum pl_kind k[] = {PL_RECONFIGURE, PL_REOBSERVE, PL_RECONFIGURE, PL_POWER_ON};
    expect_kinds(&p, 4, k);
    ck_assert_uint_eq(p.actions[0].n_nic_ops, 1);
    ck_assert_int_eq(p.actions[0].nic_ops[0].op, PL_NIC_ADD);
    ck_assert_uint_eq(p.actions[0].nic_ops[0].desired, 1);
    ck_assert_int_eq(p.actions[3].deferred, 1);
    pl_plan_free(&p);

    /* desired one, VM has two: remove the second */
    F.d.n_nics = 1;
    F.o.n_nics = 2;
    F.o.power = PL_STATE_ON;
    plan(&p);
    ck_assert_uint_eq(p.actions[0].fields, PL_F_NICS);
    ck_assert_uint_eq(p.actions[0].n_nic_ops, 1);
    ck_assert_int_eq(p.actions[0].nic_ops[0].op, PL_NIC_REMOVE);
    ck_assert_uint_eq(p.actions[0].nic_ops[0].obs, 1);
    pl_plan_free(&p);

    /* no cloud-init: NIC changes need no re-observation */
    F.d.cloud_init = 0;
    plan(&p);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_int_eq(p.actions[0].kind, PL_RECONFIGURE);
    pl_plan_free(&p);
}
END_TEST

struct power_case {
    enum api_power_state want;
    enum pl_power cur;
    enum api_power_mode mode;
    int n;
    enum pl_kind kind;
    enum pl_mode pmode;
    int unreachable;
};

static const struct power_case power_cases[] = {
    {API_POWER_ON, PL_STATE_OFF, API_MODE_UNSET, 1, PL_POWER_ON, PL_MODE_HARD, 0},
    {API_POWER_ON, PL_STATE_SUSPENDED, API_MODE_UNSET, 1, PL_POWER_ON, PL_MODE_HARD, 0},
    {API_POWER_UNSET, PL_STATE_OFF, API_MODE_UNSET, 1, PL_POWER_ON, PL_MODE_HARD, 0},
    {API_POWER_OFF, PL_STATE_ON, API_MODE_HARD, 1, PL_POWER_OFF, PL_MODE_HARD, 0},
    {API_POWER_OFF, PL_STATE_ON, API_MODE_SOFT, 1, PL_POWER_OFF, PL_MODE_SOFT, 0},
    {API_POWER_OFF, PL_STATE_ON, API_MODE_TRYSOFT, 1, PL_POWER_OFF, PL_MODE_TRYSOFT, 0},
    {API_POWER_OFF, PL_STATE_ON, API_MODE_UNSET, 1, PL_POWER_OFF, PL_MODE_TRYSOFT, 0},
    {API_POWER_OFF, PL_STATE_SUSPENDED, API_MODE_HARD, 1, PL_POWER_OFF, PL_MODE_HARD, 0},
    {API_POWER_OFF, PL_STATE_SUSPENDED, API_MODE_TRYSOFT, 1, PL_POWER_OFF, PL_MODE_HARD, 0},
    {API_POWER_OFF, PL_STATE_SUSPENDED, API_MODE_SOFT, 0, PL_POWER_OFF, PL_MODE_HARD, 1},
    {API_POWER_OFF, PL_STATE_OFF, API_MODE_HARD, 0, PL_POWER_OFF, PL_MODE_HARD, 0},
    {API_POWER_SUSPENDED, PL_STATE_ON, API_MODE_HARD, 1, PL_SUSPEND, PL_MODE_HARD, 0},
    {API_POWER_SUSPENDED, PL_STATE_ON, API_MODE_SOFT, 1, PL_SUSPEND, PL_MODE_SOFT, 0},
    {API_POWER_SUSPENDED, PL_STATE_ON, API_MODE_TRYSOFT, 1, PL_SUSPEND, PL_MODE_TRYSOFT, 0},
    {API_POWER_SUSPENDED, PL_STATE_OFF, API_MODE_HARD, 0, PL_SUSPEND, PL_MODE_HARD, 1},
    {API_POWER_SUSPENDED, PL_STATE_SUSPENDED, API_MODE_HARD, 0, PL_SUSPEND, PL_MODE_HARD, 0},
};

START_TEST(power_transitions)
{
    const struct power_case *c = &power_cases[_i];
    struct pl_plan p;
    F.d.power = c->want;
    F.d.power_off_mode = c->mode;
    F.d.suspend_mode = c->mode;
    F.o.power = c->cur;
    plan(&p);
    ck_assert_uint_eq(p.n, (size_t)c->n);
    if (c->n) {
        ck_assert_str_eq(pl_kind_str(p.actions[0].kind), pl_kind_str(c->kind));
        ck_assert_str_eq(pl_mode_str(p.actions[0].mode), pl_mode_str(c->pmode));
    }
    ck_assert_int_eq(p.power_unreachable, c->unreachable);
    pl_plan_free(&p);
}
END_TEST

START_TEST(cpu_change_on_running_vm_deferred)
{
    struct pl_plan p;
    F.o.num_cpus = 1;
    F.o.memory_mb = 512;
    plan(&p);
    ck_assert_uint_eq(p.n, 0);
    ck_assert_int_eq(p.needs_power_cycle, 1);
    ck_assert_uint_eq(p.deferred_fields, PL_F_NUM_CPUS | PL_F_MEMORY);
    pl_plan_free(&p);

    /* reservations still apply live */
    F.o.cpu_reservation = 0;
    plan(&p);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_uint_eq(p.actions[0].fields, PL_F_CPU_RESERVATION);
    ck_assert_int_eq(p.needs_power_cycle, 1);
    pl_plan_free(&p);

    /* suspended counts as running */
    F.o.cpu_reservation = 500;
    F.o.power = PL_STATE_SUSPENDED;
    F.d.power = API_POWER_SUSPENDED;
    plan(&p);
    ck_assert_uint_eq(p.n, 0);
    ck_assert_int_eq(p.needs_power_cycle, 1);
    pl_plan_free(&p);
}
END_TEST

START_TEST(cpu_change_with_power_transition)
{
    struct pl_plan p;
    /* going off: power off first, then the resize applies */
    F.o.num_cpus = 1;
    F.d.power = API_POWER_OFF;
    F.d.power_off_mode = API_MODE_HARD;
    plan(&p);
    static const enum pl_kind k[] = {PL_POWER_OFF, PL_RECONFIGURE};
    expect_kinds(&p, 2, k);
    ck_assert_uint_eq(p.actions[1].fields, PL_F_NUM_CPUS);
    ck_assert_int_eq(p.needs_power_cycle, 0);
    pl_plan_free(&p);

    /* coming on: resize first, then power on */
    F.o.power = PL_STATE_OFF;
    F.d.power = API_POWER_ON;
    plan(&p);
    static const enum pl_kind k2[] = {PL_RECONFIGURE, PL_POWER_ON};
    expect_kinds(&p, 2, k2);
    ck_assert_uint_eq(p.actions[0].fields, PL_F_NUM_CPUS);
    ck_assert_int_eq(p.actions[1].deferred, 0);
    pl_plan_free(&p);
}
END_TEST

START_TEST(template_refused)
{
    struct vmop_err err = {0};
    struct pl_plan p;
    struct pl_input in = {&F.d, F.bk, &F.o};
    F.o.is_template = 1;
    ck_assert_int_eq(pl_plan(&in, &p, &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "template"));
    ck_assert_uint_eq(p.n, 0);
    pl_plan_free(&p);
}
END_TEST

START_TEST(delete_plans)
{
    struct pl_plan p;
    F.o.present = 0;
    pl_plan_delete(&F.o, API_MODE_UNSET, &p);
    ck_assert_uint_eq(p.n, 0);

    F.o.present = 1;
    pl_plan_delete(&F.o, API_MODE_UNSET, &p);
    ck_assert_uint_eq(p.n, 2);
    ck_assert_int_eq(p.actions[0].kind, PL_POWER_OFF);
    ck_assert_int_eq(p.actions[0].mode, PL_MODE_TRYSOFT); /* the default, as every power-off */
    ck_assert_int_eq(p.actions[1].kind, PL_DESTROY);

    pl_plan_delete(&F.o, API_MODE_HARD, &p);
    ck_assert_int_eq(p.actions[0].mode, PL_MODE_HARD);

    pl_plan_delete(&F.o, API_MODE_SOFT, &p);
    ck_assert_int_eq(p.actions[0].mode, PL_MODE_SOFT);

    F.o.power = PL_STATE_SUSPENDED;
    pl_plan_delete(&F.o, API_MODE_SOFT, &p);
    ck_assert_uint_eq(p.n, 2);
    ck_assert_int_eq(p.actions[0].mode, PL_MODE_HARD);

    F.o.power = PL_STATE_OFF;
    pl_plan_delete(&F.o, API_MODE_HARD, &p);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_int_eq(p.actions[0].kind, PL_DESTROY);
    pl_plan_free(&p);
}
END_TEST

/* nextRestartTime (rs_desired.restart_for): a PL_RESTART last, with restartMode, while the VM is
 * and stays on; never twice for the same time (the marker vCenter keeps); not while it is powered
 * off or suspended; after the power-on of a VM that was off. */
START_TEST(restart_planned)
{
    struct pl_plan p;
    static const enum pl_kind on_restart[] = {PL_POWER_ON, PL_RESTART};
    static const enum pl_kind create[] = {PL_CREATE,    PL_REOBSERVE,   PL_RECONFIGURE,
                                          PL_REOBSERVE, PL_RECONFIGURE, PL_POWER_ON,
                                          PL_RESTART};
    F.d.restart_for = "2026-12-02T08:00:00Z";
    F.d.restart_mode = API_MODE_HARD;
    plan(&p);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_str_eq(pl_kind_str(p.actions[0].kind), "restart");
    ck_assert_str_eq(pl_mode_str(p.actions[0].mode), "Hard");
    ck_assert_int_eq(p.actions[0].deferred, 0);
    pl_plan_free(&p);

    /* unset restartMode is TrySoft, like the other modes */
    F.d.restart_mode = API_MODE_UNSET;
    plan(&p);
    ck_assert_str_eq(pl_mode_str(p.actions[0].mode), "TrySoft");
    pl_plan_free(&p);

    /* already started for this time (marked before a crash): not again */
    F.o.restart_marker = "2026-12-02T08:00:00Z";
    plan(&p);
    ck_assert_uint_eq(p.n, 0);
    pl_plan_free(&p);
    /* a new time: restarted */
    F.d.restart_for = "2026-12-02T09:00:00Z";
    plan(&p);
    ck_assert_uint_eq(p.n, 1);
    pl_plan_free(&p);

    /* a VM being powered off or suspended is not restarted */
    F.d.power = API_POWER_OFF;
    plan(&p);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_str_eq(pl_kind_str(p.actions[0].kind), "power-off");
    pl_plan_free(&p);
    F.d.power = API_POWER_SUSPENDED;
    plan(&p);
    ck_assert_uint_eq(p.n, 1);
    ck_assert_str_eq(pl_kind_str(p.actions[0].kind), "suspend");
    pl_plan_free(&p);
    /* one that stays off neither */
    F.d.power = API_POWER_OFF;
    F.o.power = PL_STATE_OFF;
    plan(&p);
    ck_assert_uint_eq(p.n, 0);
    pl_plan_free(&p);

    /* powered on by this plan: the restart comes after the power-on */
    F.d.power = API_POWER_ON;
    plan(&p);
    expect_kinds(&p, 2, on_restart);
    pl_plan_free(&p);

    /* no restart asked: none */
    F.d.restart_for = NULL;
    F.o.power = PL_STATE_ON;
    plan(&p);
    ck_assert_uint_eq(p.n, 0);
    pl_plan_free(&p);

    /* a new VM: after its first power-on, deferred like the rest of the create */
    F.d.restart_for = "2026-12-02T09:00:00Z";
    F.o.present = 0;
    plan(&p);
    expect_kinds(&p, 7, create);
    ck_assert_int_eq(p.actions[6].deferred, 1);
    ck_assert_str_eq(vm_step_str(vm_step_of_kind(PL_RESTART)), "restart");
    pl_plan_free(&p);
}
END_TEST

START_TEST(names)
{
    char buf[128];
    pl_fields_str(PL_F_NUM_CPUS | PL_F_CPU_LIMIT | PL_F_METADATA, buf, sizeof(buf));
    ck_assert_str_eq(buf, "numCPUs,cpuAllocation.limit,guestinfo.metadata");
    pl_fields_str(0, buf, sizeof(buf));
    ck_assert_str_eq(buf, "");
    pl_fields_str(0xfff, buf, 12);
    ck_assert_str_eq(buf, "many fields");
    ck_assert_str_eq(pl_mode_str(pl_mode_from_api(API_MODE_UNSET)), "TrySoft");
    ck_assert_str_eq(pl_kind_str(PL_SUSPEND), "suspend");
}
END_TEST

/* The soft power-off wait: no read at once (the guest is never down yet), then doubling to a cap;
 * the sum of the delays grows without bound, so any --trysoft-timeout is reached. */
START_TEST(soft_poll_schedule)
{
    long sum = 0;
    ck_assert_int_eq(pl_soft_poll_ms(0), PL_SOFT_POLL_MIN_MS);
    ck_assert_int_eq(pl_soft_poll_ms(1), 2 * PL_SOFT_POLL_MIN_MS);
    ck_assert_int_eq(pl_soft_poll_ms(2), 4 * PL_SOFT_POLL_MIN_MS);
    for (unsigned a = 0; a < 100; a++) {
        ck_assert_int_ge(pl_soft_poll_ms(a), PL_SOFT_POLL_MIN_MS);
        ck_assert_int_le(pl_soft_poll_ms(a), PL_SOFT_POLL_MAX_MS);
        if (a > 0)
            ck_assert_int_ge(pl_soft_poll_ms(a), pl_soft_poll_ms(a - 1));
        sum += pl_soft_poll_ms(a);
    }
    ck_assert_int_eq(pl_soft_poll_ms(4000000000u), PL_SOFT_POLL_MAX_MS); /* no overflow */
    ck_assert_int_gt(sum, 120000);                                       /* the default timeout */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, absent_vm_create_sequence);
    tcase_add_test(tc, in_sync_vm_empty_plan);
    tcase_add_loop_test(tc, each_drifted_field, 0, 11);
    tcase_add_test(tc, guestinfo_rules);
    tcase_add_test(tc, metadata_document);
    tcase_add_test(tc, nic_backing_drift);
    tcase_add_test(tc, nics_added_and_removed);
    tcase_add_loop_test(tc, power_transitions, 0,
                        (int)(sizeof(power_cases) / sizeof(power_cases[0])));
    tcase_add_test(tc, cpu_change_on_running_vm_deferred);
    tcase_add_test(tc, cpu_change_with_power_transition);
    tcase_add_test(tc, template_refused);
    tcase_add_test(tc, delete_plans);
    tcase_add_test(tc, restart_planned);
    tcase_add_test(tc, names);
    tcase_add_test(tc, soft_poll_schedule);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
