/* test_vmsync_sim.c: operator/vm/vmsync.c against the vCenter simulator (suite integration).
 *
 * One simulator per run (tests/common/sim_fixture.h, no generated VMs); every test uses its
 * own instance UUID and VM name, so tests do not depend on each other's VMs (the image cache
 * template of the OVF item is shared, as in production).
 * Covers: create -> exactly one VM found by instance UUID with CPU, memory, reservations/limits,
 * NIC backing, UUIDs, managedBy, vmservice.namespacedName and guestinfo as asked, powered on, the
 * static IP published by the guest player seen through vs_primary_ip4; a second apply is a no-op;
 * crash after the clone and after the cache deploy; VM-template items, two created at once (one
 * cache template); power off/suspend/on in
 * each mode the simulator supports; CPU change on a running VM deferred; delete twice; a bad port
 * group and a missing pool fail clearly before anything is created; the lowest host MHz;
 * storage policies (SPBM, two datastores in the cluster): the binding's datastore when the policy
 * allows it, else the cluster's first compatible one, the choice cached; an unknown policy fails
 * in step "storage" with StoragePolicyNotFound naming the ID and StorageClass, nothing created.
 * TrySoft delete: a guest that takes the shutdown and stays on (a second simulator with
 * -task-delay ShutdownGuest=600000) is powered off hard after the timeout, polled or with a feed
 * that hears nothing; a feed that cannot tell makes the delete read vCenter instead.
 * User data is compared with memcmp (never printed by an assertion).
 */
#include <check.h>
#include <pthread.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "check_main.h"
#include "clock.h"
#include "guestinfo.h"
#include "ownership.h"
#include "clone_source.h"
#include "sim_fixture.h"
#include "sim_world.h"
#include "vmsync.h"

#define UD        "#cloud-config\nruncmd: [echo hello]\n"
#define STATIC_IP "192.168.10.42"

/* ---- per-test world ---------------------------------------------------------------------------
 */

/* The fault hook the next world_init() gives its client (fail_at_n), or NULL. */
static enum vim_fault (*next_fault)(void *, unsigned long, const char *, const char *);
static void *next_fault_ud;

static void world_init(struct sim_world *w, int n, const char *item_name)
{
    struct vim_config cfg = {.fault = next_fault, .fault_ud = next_fault_ud};

    sim_world_init(w, 0x5c, "web", n, item_name, &cfg);
    sim_world_nic(w, STATIC_IP "/24", "192.168.10.1");
    w->d.size.num_cpus = 2;
    w->d.size.memory_mb = 1024;
    w->d.size.cpu_reservation_mhz = 500;
    w->d.size.cpu_limit_mhz = 1000;
    w->d.size.mem_reservation_mb = 512;
    w->d.size.mem_limit_mb = 1024;
    w->d.cloud_init = 1;
    w->d.instance_id = w->bios;
    snprintf(w->d.hostname, sizeof(w->d.hostname), "%s", w->name);
    w->d.userdata = strdup(UD);
    w->d.userdata_len = strlen(UD);
}

static void apply_ok(struct sim_world *w, struct vs_outcome *out)
{
    struct vmop_err err = {0};
    vmop_rc rc = vs_apply(w->ctx, &w->d, NULL, NULL, out, &err);
    ck_assert_msg(rc == VMOP_OK, "apply: %s [%s] step %s", err.msg, err.fault,
                  vm_step_str(out->failed_step));
    ck_assert_int_eq(out->failed, 0);
    ck_assert_int_eq(out->obs.present, 1);
}

static size_t count_by_name(struct vim_client *c, const char *name, int *ret_templates)
{
    struct vim_entity_list l = {0};
    struct vmop_err err = {0};
    size_t n = 0;
    *ret_templates = 0;
    ck_assert_msg(vim_list(c, NULL, "VirtualMachine", &l, &err) == VMOP_OK, "%s", err.msg);
    for (size_t i = 0; i < l.n; i++) {
        struct vim_vm *vm = NULL;
        if (!l.items[i].name || strcmp(l.items[i].name, name) != 0)
            continue;
        n++;
        ck_assert_msg(vim_vm_get(c, &l.items[i].ref, &vm, &err) == VMOP_OK, "%s", err.msg);
        *ret_templates += vm->template;
        vim_vm_free(vm);
    }
    vim_entity_list_free(&l);
    return n;
}

static uint64_t soap_calls(struct vim_client *c)
{
    struct vim_stats st;
    vim_client_stats(c, &st);
    return st.soap_calls + st.rest_calls;
}

/* Polls (bounded) until the guest player published the address. */
static int wait_ip(struct sim_world *w, const char *want)
{
    struct timespec pause = {0, 100 * 1000 * 1000};
    for (int i = 0; i < 150; i++) {
        struct vs_obs o;
        struct vmop_err err = {0};
        const char *ip;
        int ok;
        ck_assert_msg(vs_observe(w->ctx, &w->d, NULL, &o, &err) == VMOP_OK, "%s", err.msg);
        ip = vs_primary_ip4(&o);
        ok = ip && strcmp(ip, want) == 0;
        vs_obs_free(&o);
        if (ok)
            return 1;
        nanosleep(&pause, NULL);
    }
    return 0;
}

/* The full read-back of a VM made from w->d. */
static void check_vm(struct sim_world *w, const struct vs_obs *o)
{
    const struct vim_vm *vm = o->vm;
    struct vim_network *net = NULL;
    struct vmop_err err = {0};
    char *md = NULL, *ud = NULL, mac[32];
    size_t md_len = 0, ud_len = 0;

    ck_assert_int_eq(vm->num_cpu, 2);
    ck_assert_int_eq(vm->memory_mb, 1024);
    ck_assert_int_eq(vm->cpu_alloc.reservation, 500);
    ck_assert_int_eq(vm->cpu_alloc.limit, 1000);
    ck_assert_int_eq(vm->mem_alloc.reservation, 512);
    ck_assert_int_eq(vm->mem_alloc.limit, 1024);
    ck_assert_str_eq(vm->bios_uuid, w->bios);
    ck_assert_str_eq(vm->instance_uuid, w->inst);
    ck_assert_str_eq(vm->name, w->name);
    ck_assert_int_eq(vm->template, 0);
    ck_assert_str_eq(vim_vm_extra_config(vm, "vmservice.namespacedName"), w->d.namespaced_name);
    ck_assert_str_eq(vim_vm_extra_config(vm, "vmop.uid"), w->d.resource_uid);
    ck_assert_str_eq(vm->managed_by_ext, "com.vmware.vcenter.wcp");
    ck_assert_str_eq(vm->managed_by_type, "VirtualMachine");
    /* NIC on the DV port group */
    ck_assert_msg(vim_network_lookup(w->c, NULL, simfx_sim->portgroups[0], &net, &err) == VMOP_OK,
                  "%s", err.msg);
    ck_assert_uint_eq(vm->n_nics, 1);
    ck_assert_str_eq(vm->nics[0].device_type, "VirtualVmxnet3");
    ck_assert_str_eq(vm->nics[0].switch_uuid, simfx_sim->dvs_uuid);
    ck_assert_str_eq(vm->nics[0].portgroup_key, net->portgroup_key);
    vim_network_free(net);
    /* guestinfo decodes to what was asked */
    ck_assert_str_eq(vim_vm_extra_config(vm, GI_KEY_METADATA_ENCODING), GI_ENCODING_GZIP_BASE64);
    ck_assert_str_eq(vim_vm_extra_config(vm, GI_KEY_USERDATA_ENCODING), GI_ENCODING_GZIP_BASE64);
    ck_assert_int_eq(gi_decode(vim_vm_extra_config(vm, GI_KEY_METADATA),
                               vim_vm_extra_config(vm, GI_KEY_METADATA_ENCODING), &md, &md_len,
                               &err),
                     VMOP_OK);
    ck_assert_ptr_nonnull(strstr(md, STATIC_IP "/24"));
    ck_assert_ptr_nonnull(strstr(md, w->bios)); /* instance-id */
    ck_assert_ptr_nonnull(strstr(md, w->name)); /* hostname */
    snprintf(mac, sizeof(mac), "%s", vm->nics[0].mac);
    for (char *p = mac; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    ck_assert_ptr_nonnull(strstr(md, mac)); /* matches the NIC vCenter gave the VM */
    free(md);
    ck_assert_int_eq(gi_decode(vim_vm_extra_config(vm, GI_KEY_USERDATA),
                               vim_vm_extra_config(vm, GI_KEY_USERDATA_ENCODING), &ud, &ud_len,
                               &err),
                     VMOP_OK);
    ck_assert(ud_len == strlen(UD) && memcmp(ud, UD, ud_len) == 0); /* no printing: a secret */
    gi_free_secret(ud, ud_len);
}

/* ---- tests ------------------------------------------------------------------------------------
 */

START_TEST(create_converges_and_second_apply_is_noop)
{
    struct sim_world w;
    struct vs_outcome out, again;
    uint64_t before;

    world_init(&w, 1, "vmop-tiny-ovf");
    apply_ok(&w, &out);
    ck_assert_int_eq(out.created, 1);
    ck_assert_int_eq(out.changed, 1);
    ck_assert_ptr_nonnull(strstr(out.done, "create"));
    ck_assert_ptr_nonnull(strstr(out.done, "power-on"));
    /* the typed set callers test: create and power-on done, no power-off */
    ck_assert(out.did & VM_DID(VM_STEP_CREATE));
    ck_assert(out.did & VM_DID(VM_STEP_POWER_ON));
    ck_assert(!(out.did & VM_DID(VM_STEP_POWER_OFF)));
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 1);
    ck_assert_int_eq(out.obs.vm->power_state, VIM_POWER_ON);
    check_vm(&w, &out.obs);
    ck_assert_int_gt(vs_hw_version(&out.obs), 0);
    ck_assert_msg(wait_ip(&w, STATIC_IP), "the guest never reported " STATIC_IP);

    /* second apply, by uniqueID: nothing to do, a read or two */
    before = soap_calls(w.c);
    {
        struct vmop_err err = {0};
        ck_assert_msg(vs_apply(w.ctx, &w.d, out.obs.vm->ref.value, NULL, &again, &err) == VMOP_OK,
                      "%s", err.msg);
    }
    ck_assert_int_eq(again.changed, 0);
    ck_assert_int_eq(again.created, 0);
    ck_assert_str_eq(again.done, "");
    ck_assert_uint_eq(again.did, 0);
    ck_assert_uint_le(soap_calls(w.c) - before, 2);
    ck_assert_str_eq(vs_primary_ip4(&again.obs), STATIC_IP);
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 1);
    vs_outcome_free(&again);
    vs_outcome_free(&out);
    sim_world_free(&w);
}
END_TEST

START_TEST(crash_after_clone)
{
    struct sim_world w;
    struct vs_outcome out;
    struct vim_moref vm;
    struct vmop_err err = {0};

    world_init(&w, 2, "vmop-tiny-ovf");
    ck_assert_msg(vs_clone(w.ctx, &w.d, &vm, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 1);
    /* "restart": a new context, no uniqueID known */
    vs_ctx_free(w.ctx);
    ck_assert(vs_ctx_new(w.c, NULL, &w.ctx, &err) == VMOP_OK);
    apply_ok(&w, &out);
    ck_assert_int_eq(out.created, 0);
    ck_assert_str_eq(out.obs.vm->ref.value, vm.value);
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 1);
    check_vm(&w, &out.obs);
    vs_outcome_free(&out);

    /* a stale uniqueID (gone, or now another VM) falls back to the instance UUID */
    {
        const char *stale[] = {"vm-99999", vcsim_moref(simfx_sim, "template_vm")};
        for (size_t i = 0; i < 2; i++) {
            struct vs_obs o;
            ck_assert_ptr_nonnull(stale[i]);
            ck_assert_msg(vs_observe(w.ctx, &w.d, stale[i], &o, &err) == VMOP_OK, "%s", err.msg);
            ck_assert_int_eq(o.present, 1);
            ck_assert_str_eq(o.vm->ref.value, vm.value);
            vs_obs_free(&o);
        }
    }
    sim_world_free(&w);
}
END_TEST

START_TEST(crash_after_cache_deploy)
{
    struct sim_world w;
    struct vs_outcome out;
    struct vim_library_item *item = NULL;
    struct vim_moref pool, folder, half;
    struct vim_deploy_spec ds = {0};
    struct vmop_err err = {0};
    char name[CSRC_NAME_MAX + 1];
    int templates = 0;

    world_init(&w, 3, "vmop-cluster-ovf"); /* an item no other test uses */
    ck_assert(vim_library_item_get(w.c, w.d.library_item_id, &item, &err) == VMOP_OK);
    ck_assert(csrc_template_name(item->id, item->content_version, name, sizeof(name), &err) ==
              VMOP_OK);
    vim_library_item_free(item);
    pool = simfx_find(w.c, simfx_sim->resource_pool, "ResourcePool");
    folder = simfx_find(w.c, simfx_sim->folder, "Folder");
    ds.name = name;
    ds.resource_pool_id = pool.value;
    ds.folder_id = folder.value;
    ck_assert_msg(vim_library_deploy(w.c, w.d.library_item_id, &ds, &half, &err) == VMOP_OK, "%s",
                  err.msg);
    /* crash here: deployed, not yet a template */
    ck_assert_uint_eq(count_by_name(w.c, name, &templates), 1);
    ck_assert_int_eq(templates, 0);

    apply_ok(&w, &out);
    ck_assert_int_eq(out.created, 1);
    ck_assert_uint_eq(count_by_name(w.c, name, &templates), 1);
    ck_assert_int_eq(templates, 1);
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 1);
    check_vm(&w, &out.obs);
    vs_outcome_free(&out);
    sim_world_free(&w);
}
END_TEST

struct par {
    struct sim_world *w;
    struct vs_outcome out;
    struct vmop_err err;
    vmop_rc rc;
};

static void *par_apply(void *arg)
{
    struct par *p = arg;
    p->rc = vs_apply(p->w->ctx, &p->w->d, NULL, NULL, &p->out, &p->err);
    return NULL;
}

/* A VM-template item, two VMs created at once through one context: both work and the item's
 * cache template is deployed once. */
START_TEST(vm_template_item_concurrent_creates)
{
    struct sim_world w1, w2;
    struct par p[2];
    pthread_t t[2];
    struct vim_library_item *item = NULL;
    struct vmop_err err = {0};
    char name[CSRC_NAME_MAX + 1];
    int templates = 0;

    world_init(&w1, 4, "vmop-tiny-tmpl");
    world_init(&w2, 10, "vmop-tiny-tmpl");
    vs_ctx_free(w2.ctx); /* share w1's context (and its client) */
    w2.ctx = w1.ctx;
    memset(p, 0, sizeof(p));
    p[0].w = &w1;
    p[1].w = &w2;
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, par_apply, &p[i]), 0);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < 2; i++) {
        ck_assert_msg(p[i].rc == VMOP_OK, "apply %d: %s", i, p[i].err.msg);
        ck_assert_int_eq(p[i].out.created, 1);
        ck_assert_int_eq(p[i].out.obs.vm->power_state, VIM_POWER_ON);
        check_vm(p[i].w, &p[i].out.obs);
        ck_assert_uint_eq(simfx_count_by_uuid(w1.c, p[i].w->inst), 1);
        vs_outcome_free(&p[i].out);
    }
    ck_assert(vim_library_item_get(w1.c, w1.d.library_item_id, &item, &err) == VMOP_OK);
    ck_assert(csrc_template_name(item->id, item->content_version, name, sizeof(name), &err) ==
              VMOP_OK);
    vim_library_item_free(item);
    ck_assert_uint_eq(count_by_name(w1.c, name, &templates), 1);
    ck_assert_int_eq(templates, 1);
    w2.ctx = NULL;
    sim_world_free(&w2);
    sim_world_free(&w1);
}
END_TEST

static void apply_power(struct sim_world *w, enum api_power_state want, enum api_power_mode mode,
                        enum vim_power_state expect)
{
    struct vs_outcome out;
    w->d.power = want;
    w->d.power_off_mode = mode;
    w->d.suspend_mode = mode;
    apply_ok(w, &out);
    ck_assert_str_eq(vim_power_state_str(out.obs.vm->power_state), vim_power_state_str(expect));
    ck_assert_int_eq(out.power_unreachable, 0);
    vs_outcome_free(&out);
}

START_TEST(power_states_and_modes)
{
    struct sim_world w;
    struct vs_outcome out;
    world_init(&w, 5, "vmop-tiny-ovf");
    apply_power(&w, API_POWER_ON, API_MODE_UNSET, VIM_POWER_ON);
    apply_power(&w, API_POWER_OFF, API_MODE_HARD, VIM_POWER_OFF);
    apply_power(&w, API_POWER_ON, API_MODE_UNSET, VIM_POWER_ON);
    apply_power(&w, API_POWER_OFF, API_MODE_SOFT, VIM_POWER_OFF); /* ShutdownGuest */
    apply_power(&w, API_POWER_ON, API_MODE_UNSET, VIM_POWER_ON);
    /* TrySoft: StandbyGuest (the simulator suspends in a task after the call returns, as a guest
     * would: vmsync's bounded wait for the power state sees it) */
    apply_power(&w, API_POWER_SUSPENDED, API_MODE_TRYSOFT, VIM_POWER_SUSPENDED);
    apply_power(&w, API_POWER_ON, API_MODE_UNSET, VIM_POWER_ON);
    apply_power(&w, API_POWER_SUSPENDED, API_MODE_HARD, VIM_POWER_SUSPENDED);
    apply_power(&w, API_POWER_OFF, API_MODE_TRYSOFT, VIM_POWER_OFF); /* suspended: hard */
    apply_power(&w, API_POWER_ON, API_MODE_UNSET, VIM_POWER_ON);

    /* Soft suspend alone: StandbyGuest */
    apply_power(&w, API_POWER_SUSPENDED, API_MODE_SOFT, VIM_POWER_SUSPENDED);
    apply_power(&w, API_POWER_ON, API_MODE_UNSET, VIM_POWER_ON);

    /* CPU change on a running VM: not applied, flagged */
    w.d.power = API_POWER_ON;
    w.d.size.num_cpus = 4;
    apply_ok(&w, &out);
    ck_assert_int_eq(out.needs_power_cycle, 1);
    ck_assert_uint_eq(out.deferred_fields, PL_F_NUM_CPUS);
    ck_assert_int_eq(out.obs.vm->num_cpu, 2);
    vs_outcome_free(&out);
    /* ... and applied on the way off */
    w.d.power = API_POWER_OFF;
    w.d.power_off_mode = API_MODE_HARD;
    apply_ok(&w, &out);
    ck_assert_int_eq(out.needs_power_cycle, 0);
    ck_assert_int_eq(out.obs.vm->num_cpu, 4);
    ck_assert_int_eq(out.obs.vm->power_state, VIM_POWER_OFF);
    vs_outcome_free(&out);
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 1);
    sim_world_free(&w);
}
END_TEST

START_TEST(delete_twice)
{
    struct sim_world w;
    struct vs_outcome out;
    struct vmop_err err = {0};
    struct vim_moref ref;
    char id[VIM_MOREF_VALUE_MAX];
    struct vs_deleted del;
    uint64_t before;

    world_init(&w, 6, "vmop-tiny-ovf");
    apply_ok(&w, &out);
    snprintf(id, sizeof(id), "%s", out.obs.vm->ref.value);
    vs_outcome_free(&out);
    ck_assert_msg(vs_delete(w.ctx, &w.d, id, API_MODE_UNSET, NULL, &del, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_int_eq(del.gone, 1);
    ck_assert_int_eq(del.destroyed, 1);
    ck_assert_int_eq(vim_find_vm_by_uuid(w.c, w.inst, 1, &ref, &err), VMOP_E_NOT_FOUND);
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 0);
    vmop_err_clear(&err);
    before = soap_calls(w.c);
    ck_assert_msg(vs_delete(w.ctx, &w.d, id, API_MODE_UNSET, NULL, &del, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_int_eq(del.gone, 1);
    ck_assert_int_eq(del.destroyed, 0);
    ck_assert_uint_le(soap_calls(w.c) - before, 2);
    sim_world_free(&w);
}
END_TEST

START_TEST(bad_port_group_fails_before_create)
{
    struct sim_world w;
    struct vs_outcome out;
    struct vmop_err err = {0};
    world_init(&w, 7, "vmop-tiny-ovf");
    w.d.nics[0].port_group = "/DC0/network/no-such-pg";
    ck_assert_int_ne(vs_apply(w.ctx, &w.d, NULL, NULL, &out, &err), VMOP_OK);
    ck_assert_int_eq(out.failed, 1);
    ck_assert_str_eq(out.fault, "NotFound");
    ck_assert_str_eq(err.fault, "NotFound");
    ck_assert_int_eq(out.failed_step, VM_STEP_LOOKUP);
    ck_assert_ptr_nonnull(strstr(out.message, "no-such-pg"));
    ck_assert_int_eq(out.created, 0);
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 0);
    vs_outcome_free(&out);

    /* a standard network is not a DV port group */
    vmop_err_clear(&err);
    w.d.nics[0].port_group = simfx_sim->network;
    ck_assert_int_ne(vs_apply(w.ctx, &w.d, NULL, NULL, &out, &err), VMOP_OK);
    ck_assert_str_eq(out.fault, "NotSupported");
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 0);
    vs_outcome_free(&out);
    sim_world_free(&w);
}
END_TEST

START_TEST(missing_pool_fails_nothing_created)
{
    struct sim_world w;
    struct vs_outcome out;
    struct vmop_err err = {0};
    char pool[512];
    world_init(&w, 8, "vmop-tiny-ovf");
    snprintf(pool, sizeof(pool), "%s/no-such-pool", simfx_sim->resource_pool);
    w.d.resource_pool = pool;
    ck_assert_int_ne(vs_apply(w.ctx, &w.d, NULL, NULL, &out, &err), VMOP_OK);
    ck_assert_int_eq(out.failed, 1);
    ck_assert_int_eq(out.failed_step, VM_STEP_CREATE);
    ck_assert_str_eq(out.fault, "NotFound");
    ck_assert_ptr_nonnull(strstr(out.message, "no-such-pool"));
    ck_assert_int_eq(out.created, 0);
    ck_assert_int_eq(out.obs.present, 0);
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 0);
    vs_outcome_free(&out);
    sim_world_free(&w);
}
END_TEST

START_TEST(min_host_mhz)
{
    struct sim_world w;
    struct vmop_err err = {0};
    int64_t mhz = 0, mhz2 = 0;
    uint64_t before;
    world_init(&w, 9, "vmop-tiny-ovf");
    ck_assert_msg(vs_min_host_mhz(w.ctx, simfx_sim->resource_pool, &mhz, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_int_gt(mhz, 0);
    before = soap_calls(w.c);
    ck_assert(vs_min_host_mhz(w.ctx, simfx_sim->resource_pool, &mhz2, &err) == VMOP_OK);
    ck_assert_int_eq(mhz2, mhz);
    ck_assert_uint_eq(soap_calls(w.c) - before, 0); /* cached */
    ck_assert_msg(vs_min_host_mhz(w.ctx, simfx_sim->cluster, &mhz2, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_int_eq(mhz2, mhz);
    ck_assert_int_eq(vs_min_host_mhz(w.ctx, "/DC0/host/nope", &mhz2, &err), VMOP_E_NOT_FOUND);
    ck_assert_str_eq(err.fault, "NotFound");
    sim_world_free(&w);
}
END_TEST

/* ---- storage policies -------------------------------------------------------------------------
 */

#define POLICY       "aa6d5a82-1c88-45da-85d3-3d74b91a5bad" /* the simulator's vSAN default */
#define SECOND_DS    "/DC0/datastore/LocalDS_1"
#define POLICY_CLASS "wcp-policy"

struct method_count {
    const char *method;
    uint64_t calls;
};

static void count_method(void *ud, const struct vim_method_stat *st)
{
    struct method_count *mc = ud;
    if (strcmp(st->method, mc->method) == 0)
        mc->calls += st->calls;
}

static uint64_t method_calls(struct vim_client *c, const char *method)
{
    struct method_count mc = {method, 0};
    vim_client_method_stats(c, count_method, &mc);
    return mc.calls;
}

START_TEST(storage_policy_prefers_binding_datastore)
{
    struct sim_world w;
    struct vs_outcome out;
    struct vim_moref second;
    world_init(&w, 20, "vmop-tiny-ovf");
    second = simfx_find(w.c, SECOND_DS, "Datastore");
    w.d.storage_class = POLICY_CLASS;
    w.d.storage_policy_id = POLICY;
    w.d.datastore = SECOND_DS; /* the binding's datastore, compatible with the policy */
    w.d.power = API_POWER_OFF;
    apply_ok(&w, &out);
    ck_assert_int_eq(out.created, 1);
    ck_assert_msg(vim_moref_eq(&out.obs.vm->datastore, &second), "VM on %s, want %s",
                  out.obs.vm->datastore.value, second.value);
    /* its disks too (each got a locator with the datastore and the policy) */
    ck_assert_uint_ge(out.obs.vm->n_disks, 1);
    for (size_t i = 0; i < out.obs.vm->n_disks; i++)
        ck_assert_msg(out.obs.vm->disks[i].file_name &&
                          strncmp(out.obs.vm->disks[i].file_name, "[LocalDS_1]", 11) == 0,
                      "disk %zu at %s", i, out.obs.vm->disks[i].file_name);
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 1);
    ck_assert_uint_ge(method_calls(w.c, "PbmCheckRequirements"), 1); /* chosen by the policy */
    vs_outcome_free(&out);
    sim_world_free(&w);
}
END_TEST

START_TEST(storage_policy_first_compatible_and_cached)
{
    struct sim_world w, w2;
    struct vs_outcome out;
    struct vim_moref cluster, *cands = NULL;
    size_t n_cands = 0;
    struct vmop_err err = {0};
    uint64_t before;

    world_init(&w, 21, "vmop-tiny-ovf");
    cluster = simfx_find(w.c, simfx_sim->cluster, NULL);
    ck_assert_msg(vim_compute_datastores(w.c, &cluster, &cands, &n_cands, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_uint_eq(n_cands, 2);
    w.d.storage_class = POLICY_CLASS;
    w.d.storage_policy_id = POLICY;
    w.d.datastore = NULL; /* no binding datastore: the cluster's first compatible one */
    w.d.power = API_POWER_OFF;
    apply_ok(&w, &out);
    ck_assert_int_eq(out.created, 1);
    ck_assert_msg(vim_moref_eq(&out.obs.vm->datastore, &cands[0]), "VM on %s, want %s",
                  out.obs.vm->datastore.value, cands[0].value);
    vs_outcome_free(&out);

    /* a second VM with the same policy and pool on the same context: no PBM round trip */
    world_init(&w2, 22, "vmop-tiny-ovf");
    vs_ctx_free(w2.ctx);
    w2.ctx = w.ctx;
    w.ctx = NULL;
    vim_client_free(w2.c);
    w2.c = w.c;
    w.c = NULL;
    w2.d.storage_class = POLICY_CLASS;
    w2.d.storage_policy_id = POLICY;
    w2.d.datastore = NULL;
    w2.d.power = API_POWER_OFF;
    before = method_calls(w2.c, "PbmCheckRequirements");
    ck_assert_uint_ge(before, 1); /* the first create asked */
    ck_assert_uint_eq(method_calls(w2.c, "PbmRetrieveServiceContent"), 1);
    apply_ok(&w2, &out);
    ck_assert_int_eq(out.created, 1);
    ck_assert(vim_moref_eq(&out.obs.vm->datastore, &cands[0]));
    ck_assert_uint_eq(method_calls(w2.c, "PbmCheckRequirements"), before); /* cached */
    vs_outcome_free(&out);
    free(cands);
    sim_world_free(&w);
    sim_world_free(&w2);
}
END_TEST

START_TEST(unknown_policy_fails_nothing_created)
{
    struct sim_world w;
    struct vs_outcome out;
    struct vmop_err err = {0};
    const char *bad = "0badc0de-0000-4000-8000-000000000000";
    world_init(&w, 23, "vmop-tiny-ovf");
    w.d.storage_class = "gold";
    w.d.storage_policy_id = bad;
    ck_assert_int_eq(vs_apply(w.ctx, &w.d, NULL, NULL, &out, &err), VMOP_E_NOT_FOUND);
    ck_assert_int_eq(out.failed, 1);
    ck_assert_int_eq(out.failed_step, VM_STEP_STORAGE);
    ck_assert_str_eq(out.fault, VS_REASON_POLICY_NOT_FOUND);
    ck_assert_str_eq(err.fault, VS_REASON_POLICY_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(out.message, bad));
    ck_assert_ptr_nonnull(strstr(out.message, "\"gold\""));
    ck_assert_int_eq(out.created, 0);
    ck_assert_int_eq(out.obs.present, 0);
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 0);
    {
        int templates = 0;
        ck_assert_uint_eq(count_by_name(w.c, w.name, &templates), 0);
    }
    vs_outcome_free(&out);
    /* again: failures are not cached, the answer is the same */
    vmop_err_clear(&err);
    ck_assert_int_eq(vs_apply(w.ctx, &w.d, NULL, NULL, &out, &err), VMOP_E_NOT_FOUND);
    ck_assert_str_eq(out.fault, VS_REASON_POLICY_NOT_FOUND);
    vs_outcome_free(&out);
    sim_world_free(&w);
}
END_TEST

static int fence_closed(void *ud)
{
    int *asked = ud;
    (*asked)++;
    return 0;
}

/* A replica whose leadership is not confirmed creates nothing: the fence is asked right before
 * the clone and the create fails as canceled. */
START_TEST(fence_closed_creates_nothing)
{
    struct sim_world w;
    struct vs_outcome out;
    struct vmop_err err = {0};
    int asked = 0;
    struct vs_options o = {.may_act = fence_closed, .may_act_ud = &asked};
    world_init(&w, 24, "vmop-tiny-ovf");
    vs_ctx_free(w.ctx);
    w.ctx = NULL;
    ck_assert_msg(vs_ctx_new(w.c, &o, &w.ctx, &err) == VMOP_OK, "ctx: %s", err.msg);
    ck_assert_int_eq(vs_apply(w.ctx, &w.d, NULL, NULL, &out, &err), VMOP_E_CANCELED);
    ck_assert_int_ge(asked, 1);
    ck_assert_int_eq(out.failed, 1);
    ck_assert_int_eq(out.created, 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "leadership"));
    ck_assert_uint_eq(simfx_count_by_uuid(w.c, w.inst), 0);
    vs_outcome_free(&out);
    sim_world_free(&w);
}
END_TEST

/* ---- fail at n (curl's torture tests, for vCenter requests) ---------------------------------- */

struct failn {
    unsigned long seen;    /* the client's last request number */
    unsigned long fail_at; /* the request to fail, 0 = none */
    enum vim_fault mode;
    int hit;
};

static enum vim_fault failn_hook(void *ud, unsigned long n, const char *method, const char *path)
{
    struct failn *f = ud;
    (void)path;
    f->seen = n;

    if (f->fail_at && n == f->fail_at) {
        f->hit = 1;
        return f->mode;
    }
    return VIM_FAULT_NONE;
}

/* Creates the VM with request n of the create failing (not sent, or its response lost), then
 * reconciles again without faults: it converges to exactly one VM with the identity, which
 * matches the desired state; then deletes it. Returns the requests the create made. */
static unsigned long create_failing_at(struct sim_world *w, struct failn *f, unsigned long n,
                                       enum vim_fault mode)
{
    struct vs_outcome out;
    struct vs_deleted del;
    struct vmop_err err = {0};
    char id[VIM_MOREF_VALUE_MAX];
    unsigned long start = f->seen, used;
    vmop_rc rc;
    int tries = 0;

    f->fail_at = n ? start + n : 0;
    f->mode = mode;
    f->hit = 0;
    rc = vs_apply(w->ctx, &w->d, NULL, NULL, &out, &err);
    used = f->seen - start;
    f->fail_at = 0;
    while (rc != VMOP_OK && tries++ < 3) {
        vs_outcome_free(&out);
        vmop_err_clear(&err);
        rc = vs_apply(w->ctx, &w->d, NULL, NULL, &out, &err);
    }
    ck_assert_msg(rc == VMOP_OK, "fail at %lu (%s): no convergence: %s", n,
                  mode == VIM_FAULT_BEFORE ? "before" : "after", err.msg);
    ck_assert_int_eq(out.obs.present, 1);
    ck_assert_int_eq(out.obs.vm->power_state, VIM_POWER_ON);
    ck_assert_msg(simfx_count_by_uuid(w->c, w->inst) == 1, "fail at %lu (%s): %zu VMs", n,
                  mode == VIM_FAULT_BEFORE ? "before" : "after",
                  simfx_count_by_uuid(w->c, w->inst));
    snprintf(id, sizeof(id), "%s", out.obs.vm->ref.value);
    vs_outcome_free(&out);
    ck_assert_msg(vs_delete(w->ctx, &w->d, id, API_MODE_UNSET, NULL, &del, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_uint_eq(simfx_count_by_uuid(w->c, w->inst), 0);
    return used;
}

/* The client's SOAP calls per method so far (vim_client_method_stats: first-call order). */
struct mcounts {
    char name[VIM_METHOD_STATS_MAX][64];
    unsigned long calls[VIM_METHOD_STATS_MAX];
    size_t n;
};

static void tally_method(void *ud, const struct vim_method_stat *st)
{
    struct mcounts *m = ud;
    if (m->n >= VIM_METHOD_STATS_MAX)
        return;
    snprintf(m->name[m->n], sizeof(m->name[0]), "%s", st->method);
    m->calls[m->n++] = (unsigned long)st->calls;
}

static void method_counts(struct vim_client *c, struct mcounts *ret)
{
    memset(ret, 0, sizeof(*ret));
    vim_client_method_stats(c, tally_method, ret);
}

static void print_delta(const char *what, const struct mcounts *a, const struct mcounts *b)
{
    fprintf(stderr, "%s:\n", what);
    for (size_t i = 0; i < b->n; i++) {
        unsigned long d = b->calls[i] - (i < a->n ? a->calls[i] : 0);
        if (d)
            fprintf(stderr, "  %-28s %lu\n", b->name[i], d);
    }
}

/* env VMSYNC_TRACE: the SOAP calls of one warm create, its re-apply and its delete, by method. */
static void trace_costs(struct sim_world *w)
{
    struct mcounts a, b, c, d;
    struct vs_outcome out;
    struct vs_deleted del;
    struct vmop_err err = {0};
    char id[VIM_MOREF_VALUE_MAX];

    method_counts(w->c, &a);
    ck_assert_int_eq(vs_apply(w->ctx, &w->d, NULL, NULL, &out, &err), VMOP_OK);
    method_counts(w->c, &b);
    snprintf(id, sizeof(id), "%s", out.obs.vm->ref.value);
    vs_outcome_free(&out);
    ck_assert_int_eq(vs_apply(w->ctx, &w->d, id, NULL, &out, &err), VMOP_OK);
    vs_outcome_free(&out);
    method_counts(w->c, &c);
    ck_assert_int_eq(vs_delete(w->ctx, &w->d, id, API_MODE_UNSET, NULL, &del, &err), VMOP_OK);
    method_counts(w->c, &d);
    print_delta("create", &a, &b);
    print_delta("re-apply (in sync)", &b, &c);
    print_delta("delete (TrySoft)", &c, &d);
}

START_TEST(fail_at_n_converges_to_one_vm)
{
    struct failn f = {0};
    struct sim_world w;
    unsigned long total;

    next_fault = failn_hook;
    next_fault_ud = &f;
    world_init(&w, 30, "vmop-tiny-ovf");
    next_fault = NULL;
    create_failing_at(&w, &f, 0, VIM_FAULT_NONE); /* warm: the image cache exists from now on */
    if (getenv("VMSYNC_TRACE"))
        trace_costs(&w);
    total = create_failing_at(&w, &f, 0, VIM_FAULT_NONE);
    ck_assert_uint_ge(total, 3);
    fprintf(stderr, "fail at n: a create makes %lu requests\n", total);
    for (unsigned long n = 1; n <= total; n++) {
        /* task polls make the count vary a little: a create done in fewer requests is fine */
        unsigned long used = create_failing_at(&w, &f, n, VIM_FAULT_BEFORE);
        ck_assert_msg(f.hit || used < n, "request %lu of %lu never came", n, used);
        used = create_failing_at(&w, &f, n, VIM_FAULT_AFTER);
        ck_assert_msg(f.hit || used < n, "request %lu of %lu never came (response lost)", n, used);
    }
    sim_world_free(&w);
}
END_TEST

/* A re-login (the session expired: vCenter may have restarted and reuse morefs) drops the cached
 * morefs: a warm create looks nothing up by path, the first create after the session expired
 * looks the folder, pool and template up again before it clones. */
#define SESSION_IDLE_MS 2000u

static uint64_t create_lookups(struct sim_world *w)
{
    struct vs_outcome out;
    struct vs_deleted del;
    struct vmop_err err = {0};
    char id[VIM_MOREF_VALUE_MAX];
    uint64_t before = method_calls(w->c, "FindByInventoryPath"), n;

    ck_assert_msg(vs_apply(w->ctx, &w->d, NULL, NULL, &out, &err) == VMOP_OK, "%s", err.msg);
    n = method_calls(w->c, "FindByInventoryPath") - before;
    snprintf(id, sizeof(id), "%s", out.obs.vm->ref.value);
    vs_outcome_free(&out);
    ck_assert_msg(vs_delete(w->ctx, &w->d, id, API_MODE_HARD, NULL, &del, &err) == VMOP_OK, "%s",
                  err.msg);
    return n;
}

START_TEST(relogin_drops_cached_morefs)
{
    struct sim_world w;
    struct vim_stats st;
    world_init(&w, 40, "vmop-tiny-ovf");
    create_lookups(&w);                            /* cold: caches filled */
    ck_assert_uint_eq(create_lookups(&w), 0);      /* warm: nothing by path */
    vmop_test_sleep_ms(2 * SESSION_IDLE_MS + 300); /* deliberate idleness: the session expires */
    ck_assert_uint_ge(create_lookups(&w), 2);      /* the folder, pool and template again */
    vim_client_stats(w.c, &st);
    ck_assert_uint_ge(st.relogins, 1);
    /* the REST session's re-login (the library read in that create) drops them once more */
    create_lookups(&w);
    ck_assert_uint_eq(create_lookups(&w), 0); /* and cached again */
    sim_world_free(&w);
}
END_TEST

/* A stand-in for the change feed (vs_events): holds every VM, answers every wait with `answer`
 * (0: heard nothing in time, -1: cannot tell) after sleeping the slice it was given (0) or not
 * (-1), and counts the waits. */
struct fake_ev {
    int answer;
    int waits;
};

static int fake_mark(void *ud, const char *moref, uint64_t *ret_mark)
{
    (void)ud;
    (void)moref;
    *ret_mark = 1;
    return 1;
}

static int fake_wait(void *ud, const char *moref, uint64_t mark, enum vim_power_state want,
                     long timeout_ms)
{
    struct fake_ev *f = ud;
    (void)moref;
    (void)mark;
    (void)want;
    f->waits++;
    if (f->answer == 0 && timeout_ms > 0)
        vmop_test_sleep_ms((unsigned)timeout_ms); /* the feed heard nothing for the slice */
    return f->answer;
}

/* One TrySoft delete of resource n against a guest that does not shut down (this simulator delays
 * its ShutdownGuest task by 10 min: the request is taken, the VM stays on): after the timeout (1 s
 * here) it is powered off hard and destroyed; ShutdownGuest is asked once. */
static void trysoft_delete_slow_guest(int n, const struct vs_events *ev)
{
    struct vs_options o = {.soft_wait_ms = 1000};
    struct sim_world w;
    struct vs_outcome out;
    struct vs_deleted del;
    struct vmop_err err = {0};
    struct vim_moref ref;
    char id[VIM_MOREF_VALUE_MAX];
    uint64_t shut, off, reads;
    long long t0, took;

    world_init(&w, n, "vmop-tiny-ovf");
    vs_ctx_free(w.ctx);
    ck_assert_msg(vs_ctx_new(w.c, &o, &w.ctx, &err) == VMOP_OK, "ctx: %s", err.msg);
    apply_ok(&w, &out);
    ck_assert_int_eq(out.obs.vm->power_state, VIM_POWER_ON);
    snprintf(id, sizeof(id), "%s", out.obs.vm->ref.value);
    vs_outcome_free(&out);
    shut = method_calls(w.c, "ShutdownGuest");
    off = method_calls(w.c, "PowerOffVM_Task");
    reads = method_calls(w.c, "RetrievePropertiesEx");
    t0 = vmop_test_now_ms();
    ck_assert_msg(vs_delete(w.ctx, &w.d, id, API_MODE_TRYSOFT, ev, &del, &err) == VMOP_OK, "%s",
                  err.msg);
    took = vmop_test_now_ms() - t0;
    ck_assert_int_eq(del.gone, 1);
    ck_assert_int_eq(del.destroyed, 1);
    ck_assert_int_eq(vim_find_vm_by_uuid(w.c, w.inst, 1, &ref, &err), VMOP_E_NOT_FOUND);
    ck_assert_uint_eq(method_calls(w.c, "ShutdownGuest") - shut, 1);
    ck_assert_uint_eq(method_calls(w.c, "PowerOffVM_Task") - off, 1); /* hard, after the wait */
    ck_assert_int_ge(took, o.soft_wait_ms);
    ck_assert_int_lt(took, o.soft_wait_ms + 20000);
    /* the observe, a few power reads (polled, or the feed's backstop), the two tasks' reads */
    ck_assert_uint_le(method_calls(w.c, "RetrievePropertiesEx") - reads, 8);
    sim_world_free(&w);
}

START_TEST(trysoft_delete_goes_hard_after_timeout)
{
    struct fake_ev silent = {0, 0};
    struct vs_events ev = {fake_mark, fake_wait, NULL, &silent};
    trysoft_delete_slow_guest(7, NULL); /* polled */
    trysoft_delete_slow_guest(8, &ev);  /* a feed that never hears the power-off */
    ck_assert_int_ge(silent.waits, 1);
}
END_TEST

/* A feed that cannot tell (-1: a watch went down) makes the TrySoft delete read vCenter instead;
 * the (quick) guest is off and the VM destroyed, without a hard power-off. */
START_TEST(trysoft_delete_feed_blind_polls)
{
    struct fake_ev blind = {-1, 0};
    struct vs_events ev = {fake_mark, fake_wait, NULL, &blind};
    struct sim_world w;
    struct vs_outcome out;
    struct vs_deleted del;
    struct vmop_err err = {0};
    char id[VIM_MOREF_VALUE_MAX];
    uint64_t off;

    world_init(&w, 11, "vmop-tiny-ovf");
    apply_ok(&w, &out);
    snprintf(id, sizeof(id), "%s", out.obs.vm->ref.value);
    vs_outcome_free(&out);
    off = method_calls(w.c, "PowerOffVM_Task");
    ck_assert_msg(vs_delete(w.ctx, &w.d, id, API_MODE_TRYSOFT, &ev, &del, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_int_eq(del.destroyed, 1);
    ck_assert_int_eq(blind.waits, 1);
    ck_assert_uint_eq(method_calls(w.c, "PowerOffVM_Task") - off, 0);
    sim_world_free(&w);
}
END_TEST

static int fake_gone(void *ud, const char *moref, uint64_t mark, long timeout_ms)
{
    return fake_wait(ud, moref, mark, VIM_POWER_UNKNOWN, timeout_ms);
}

/* The delete of powered-off resource n with ev; *ret_reads: the vim25 reads it made (the observe
 * is one), *ret_took: how long it took. The VM is gone afterwards (bounded wait: a feed that
 * hears the end may answer before the task's last step). */
static void delete_off_vm(int n, const struct vs_events *ev, uint64_t *ret_reads,
                          long long *ret_took)
{
    struct sim_world w;
    struct vs_outcome out;
    struct vs_deleted del;
    struct vmop_err err = {0};
    struct vim_moref ref;
    char id[VIM_MOREF_VALUE_MAX];
    uint64_t reads;
    long long t0;

    world_init(&w, n, "vmop-tiny-ovf");
    w.d.power = API_POWER_OFF;
    w.d.power_off_mode = API_MODE_HARD;
    apply_ok(&w, &out);
    snprintf(id, sizeof(id), "%s", out.obs.vm->ref.value);
    vs_outcome_free(&out);
    reads = method_calls(w.c, "RetrievePropertiesEx");
    t0 = vmop_test_now_ms();
    ck_assert_msg(vs_delete(w.ctx, &w.d, id, API_MODE_HARD, ev, &del, &err) == VMOP_OK, "%s",
                  err.msg);
    *ret_took = vmop_test_now_ms() - t0;
    *ret_reads = method_calls(w.c, "RetrievePropertiesEx") - reads;
    ck_assert_int_eq(del.destroyed, 1);
    ck_assert_int_eq(del.gone, 1);
    t0 = vmop_test_now_ms();
    while (vim_find_vm_by_uuid(w.c, w.inst, 1, &ref, &err) == VMOP_OK &&
           vmop_test_now_ms() - t0 < 10000)
        vmop_test_sleep_ms(20);
    ck_assert_int_eq(vim_find_vm_by_uuid(w.c, w.inst, 1, &ref, &err), VMOP_E_NOT_FOUND);
    sim_world_free(&w);
}

/* The destroy is followed through the feed: a VM the feed hears leave costs no read of the task
 * (the observe is the one read); a feed that hears nothing is backed by a read of the task after
 * 1 s, which finds it done; with no feed the task is polled. */
START_TEST(destroy_heard_through_feed)
{
    struct fake_ev hears = {1, 0}, silent = {0, 0};
    struct vs_events ev_hears = {fake_mark, NULL, fake_gone, &hears};
    struct vs_events ev_silent = {fake_mark, NULL, fake_gone, &silent};
    uint64_t reads;
    long long took;

    delete_off_vm(12, &ev_hears, &reads, &took);
    ck_assert_int_eq(hears.waits, 1);
    ck_assert_uint_eq(reads, 1);
    delete_off_vm(13, &ev_silent, &reads, &took);
    ck_assert_int_eq(silent.waits, 1);
    ck_assert_uint_eq(reads, 2); /* the observe and the backstop */
    ck_assert_int_ge(took, PL_FEED_BACKSTOP_MIN_MS);
    delete_off_vm(14, NULL, &reads, &took); /* polled: the observe and the task's read(s) */
    ck_assert_uint_ge(reads, 2);
}
END_TEST

/* A feed that vouches for the VM (vs_events.vouch): fake_ev first, for fake_gone. */
struct fake_vouch {
    struct fake_ev ev;
    int answer, calls;
    char vals[OWN_MARK_PATHS][400];
};

static int fake_vouch(void *ud, const char *moref, const char *const *values, size_t n,
                      enum vim_power_state *ret_power)
{
    struct fake_vouch *f = ud;
    (void)moref;
    f->calls++;
    ck_assert_uint_eq(n, OWN_MARK_PATHS);
    for (size_t i = 0; i < n; i++)
        snprintf(f->vals[i], sizeof(f->vals[i]), "%s", values[i] ? values[i] : "(null)");
    *ret_power = VIM_POWER_OFF;
    return f->answer;
}

/* A delete the feed vouches for reads nothing: no observe, the destroy heard leaving; what it
 * asked the feed to vouch for are the values vCenter holds at own_mark_paths. Not vouched for,
 * it reads the VM (the observe). */
START_TEST(delete_vouched_by_feed)
{
    struct fake_vouch yes = {{1, 0}, 1, 0, {{0}}}, no = {{1, 0}, 0, 0, {{0}}};
    struct vs_events ev_yes = {fake_mark, NULL, fake_gone, &yes, fake_vouch};
    struct vs_events ev_no = {fake_mark, NULL, fake_gone, &no, fake_vouch};
    struct sim_world w;
    struct vs_outcome out;
    struct vim_vm *v;
    const char *want[OWN_MARK_PATHS];
    uint64_t reads;
    long long took;

    world_init(&w, 18, "vmop-tiny-ovf");
    w.d.power = API_POWER_OFF;
    apply_ok(&w, &out);
    v = simfx_vm_get(w.c, &out.obs.vm->ref);
    want[0] = v->instance_uuid;
    want[1] = vim_vm_extra_config(v, OWN_KEY_NAMESPACED);
    want[2] = vim_vm_extra_config(v, OWN_KEY_UID);
    want[3] = v->managed_by_ext;
    want[4] = v->managed_by_type;
    want[5] = v->template ? "true" : "false";
    want[6] = v->parent.value;
    vs_outcome_free(&out);
    sim_world_free(&w);
    delete_off_vm(18, &ev_yes, &reads, &took);
    ck_assert_int_eq(yes.calls, 1);
    ck_assert_uint_eq(reads, 0);
    for (size_t i = 0; i < OWN_MARK_PATHS; i++)
        ck_assert_str_eq(yes.vals[i], want[i] ? want[i] : "(unset)");
    vim_vm_free(v);
    delete_off_vm(19, &ev_no, &reads, &took);
    ck_assert_int_eq(no.calls, 1);
    ck_assert_uint_eq(reads, 1);
}
END_TEST

/* The create of resource n (powered on) with ev, timed into *ret_took; the VM is on afterwards
 * (bounded wait: a fake feed may answer before the task ends). */
static void create_on_vm(int n, const struct vs_events *ev, long long *ret_took)
{
    struct sim_world w;
    struct vs_outcome out;
    struct vmop_err err = {0};
    struct vim_vm *v = NULL;
    struct vim_moref ref;
    long long t0;
    int on = 0;

    world_init(&w, n, "vmop-tiny-ovf");
    w.d.power = API_POWER_ON;
    t0 = vmop_test_now_ms();
    ck_assert_msg(vs_apply(w.ctx, &w.d, NULL, ev, &out, &err) == VMOP_OK, "%s", err.msg);
    *ret_took = vmop_test_now_ms() - t0;
    ck_assert_int_eq(out.created, 1);
    ref = out.obs.vm->ref;
    vs_outcome_free(&out);
    for (t0 = vmop_test_now_ms(); !on && vmop_test_now_ms() - t0 < 10000;) {
        ck_assert_msg(vim_vm_get(w.c, &ref, &v, &err) == VMOP_OK, "%s", err.msg);
        on = v->power_state == VIM_POWER_ON;
        vim_vm_free(v);
        if (!on)
            vmop_test_sleep_ms(20);
    }
    ck_assert_msg(on, "VM %s not powered on", ref.value);
    sim_world_free(&w);
}

/* A create's power-on is followed through the feed as a destroy is: heard, it ends the wait at
 * once; a feed that hears nothing is backed by a read of the task after 1 s, which finds it
 * done; with no feed the task is polled. */
START_TEST(power_on_heard_through_feed)
{
    struct fake_ev hears = {1, 0}, silent = {0, 0};
    struct vs_events ev_hears = {fake_mark, fake_wait, NULL, &hears};
    struct vs_events ev_silent = {fake_mark, fake_wait, NULL, &silent};
    long long took;

    create_on_vm(15, &ev_hears, &took);
    ck_assert_int_eq(hears.waits, 1);
    create_on_vm(16, &ev_silent, &took);
    ck_assert_int_eq(silent.waits, 1);
    ck_assert_int_ge(took, PL_FEED_BACKSTOP_MIN_MS);
    create_on_vm(17, NULL, &took); /* polled */
}
END_TEST

int main(void)
{
    static const struct vcsim_opts opts = {.vms = VCSIM_NONE, .no_autostart = 1, .datastores = 2};
    Suite *s = suite_create("vmsync");
    TCase *tc = simfx_tcase(s, "sim", &opts, 120);
    tcase_add_test(tc, create_converges_and_second_apply_is_noop);
    tcase_add_test(tc, crash_after_clone);
    tcase_add_test(tc, crash_after_cache_deploy);
    tcase_add_test(tc, vm_template_item_concurrent_creates);
    tcase_add_test(tc, power_states_and_modes);
    tcase_add_test(tc, delete_twice);
    tcase_add_test(tc, bad_port_group_fails_before_create);
    tcase_add_test(tc, missing_pool_fails_nothing_created);
    tcase_add_test(tc, min_host_mhz);
    tcase_add_test(tc, storage_policy_prefers_binding_datastore);
    tcase_add_test(tc, storage_policy_first_compatible_and_cached);
    tcase_add_test(tc, unknown_policy_fails_nothing_created);
    tcase_add_test(tc, fence_closed_creates_nothing);
    tcase_add_test(tc, fail_at_n_converges_to_one_vm);
    tcase_add_test(tc, trysoft_delete_feed_blind_polls);
    tcase_add_test(tc, destroy_heard_through_feed);
    tcase_add_test(tc, power_on_heard_through_feed);
    tcase_add_test(tc, delete_vouched_by_feed);
    {
        static const struct vcsim_opts exp = {
            .vms = VCSIM_NONE, .no_autostart = 1, .session_idle_timeout_ms = SESSION_IDLE_MS};
        TCase *te = simfx_tcase(s, "expiry", &exp, 120);
        tcase_add_test(te, relogin_drops_cached_morefs);
    }
    {
        static const char *const slow_guest[] = {"-task-delay", "ShutdownGuest=600000", NULL};
        static const struct vcsim_opts sg = {
            .vms = VCSIM_NONE, .no_autostart = 1, .extra_args = slow_guest};
        TCase *tg = simfx_tcase(s, "slow-guest", &sg, 120);
        tcase_add_test(tg, trysoft_delete_goes_hard_after_timeout);
    }
    return vmop_check_run(s);
}
