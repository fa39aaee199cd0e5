/* test_vim_vm_sim.c: the VM layer against the vCenter simulator (suite integration).
 *
 * One simulator per run (two DV port groups, tests/common/sim_fixture.h); every test makes
 * its own client and, when it changes things, its own clone, so tests do not depend on each other.
 * Covers: inventory lookups (datacenter, cluster, pool, folder, datastore, networks and DVPGs with
 * the switch UUID, not found, wrong type), FindByUuid (BIOS and instance, any case), the lowest
 * host MHz, listing; clone with identity in the spec; reconfigure + read-back of every field the
 * builder sets; a power cycle with InvalidPowerState; destroy; MarkAsVirtualMachine.
 * Simulator-only facts relied on (vcsim.md): clones are powered off whatever spec.powerOn says;
 * extraConfig is append-only (last wins); ShutdownGuest is synchronous.
 */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "clock.h"
#include "sim_fixture.h"
#include "vim_internal.h"

#define SOURCE_VM "DC0_C0_RP0_VM0"

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = malloc(n);

    ck_assert_ptr_nonnull(s);
    snprintf(s, n, "%s/%s", a, b);
    return s;
}

static struct vim_moref source_vm(struct vim_client *c)
{
    char *path = join(simfx_sim->folder, SOURCE_VM);
    struct vim_moref ref = simfx_find(c, path, "VirtualMachine");

    free(path);
    return ref;
}

/* Clones the source VM into the cluster's pool; config may be NULL. */
static struct vim_moref clone_vm(struct vim_client *c, const char *name,
                                 const struct vim_config_spec *config, int template)
{
    char *path = join(simfx_sim->folder, SOURCE_VM);
    struct vim_moref vm =
        simfx_clone(c, simfx_sim, path,
                    (struct vim_clone_spec){.name = name, .config = config, .template = template});

    free(path);
    return vm;
}

/* The VM's power state as vim_vm_get reads it, checked against the one-path vim_vm_get_power. */
static enum vim_power_state power_state(struct vim_client *c, const struct vim_moref *ref)
{
    struct vim_vm *vm = simfx_vm_get(c, ref);
    enum vim_power_state s = vm->power_state, light = VIM_POWER_UNKNOWN;
    struct vmop_err err = {0};

    vim_vm_free(vm);
    ck_assert_msg(vim_vm_get_power(c, ref, &light, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_int_eq(light, s);
    return s;
}

/* Asserts that op in the VM's current power state fails with the fault InvalidPowerState. */
static void power_refused(struct vim_client *c, const struct vim_moref *ref, enum vim_power_op op)
{
    struct vmop_err err = {0};

    ck_assert_int_eq(vim_vm_power(c, ref, op, &err), VMOP_E_FAULT);
    ck_assert_str_eq(err.fault, "InvalidPowerState");
}

/* ---- inventory --------------------------------------------------------------------------------
 */

START_TEST(test_find_by_path)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_moref ref, cluster;
    struct vmop_err err = {0};
    char *missing;

    ref = simfx_find(c, simfx_sim->datacenter, "Datacenter");
    ck_assert_str_eq(ref.type, "Datacenter");
    cluster = simfx_find(c, simfx_sim->cluster, "ClusterComputeResource");
    /* a subtype is accepted where its base type is asked for */
    ref = simfx_find(c, simfx_sim->cluster, "ComputeResource");
    ck_assert(vim_moref_eq(&ref, &cluster));
    ref = simfx_find(c, simfx_sim->resource_pool, "ResourcePool");
    ck_assert_str_eq(ref.type, "ResourcePool");
    ref = simfx_find(c, simfx_sim->folder, "Folder");
    ck_assert_str_eq(ref.type, "Folder");
    ref = simfx_find(c, simfx_sim->datastore, "Datastore");
    ck_assert_str_eq(ref.type, "Datastore");
    ref = simfx_find(c, simfx_sim->datastore, NULL);
    ck_assert_str_eq(ref.type, "Datastore");

    ck_assert_int_eq(vim_find_by_path(c, simfx_sim->datastore, "Folder", &ref, &err),
                     VMOP_E_INVALID);
    vmop_err_clear(&err);
    missing = join(simfx_sim->folder, "no such vm");
    ck_assert_int_eq(vim_find_by_path(c, missing, NULL, &ref, &err), VMOP_E_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(err.msg, "no such vm"));
    free(missing);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_find_by_path(c, "", NULL, &ref, &err), VMOP_E_INVALID);
    vim_client_free(c);
}
END_TEST

START_TEST(test_network_lookup)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_moref dc = simfx_find(c, simfx_sim->datacenter, "Datacenter");
    struct vim_network *net = NULL, *byname = NULL;
    struct vmop_err err = {0};
    const char *name;

    ck_assert_uint_ge(simfx_sim->n_portgroups, 2);
    ck_assert_int_eq(vim_network_lookup(c, NULL, simfx_sim->portgroups[0], &net, &err), VMOP_OK);
    ck_assert_str_eq(net->ref.type, "DistributedVirtualPortgroup");
    ck_assert_int_eq(net->is_dvpg, 1);
    ck_assert_ptr_nonnull(net->portgroup_key);
    ck_assert_str_eq(net->portgroup_key, net->ref.value); /* vcsim: key = moref value */
    ck_assert_str_eq(net->switch_uuid, simfx_sim->dvs_uuid);
    name = strrchr(simfx_sim->portgroups[0], '/') + 1;
    ck_assert_str_eq(net->name, name);

    /* by name inside the datacenter: the same port group */
    ck_assert_int_eq(vim_network_lookup(c, &dc, name, &byname, &err), VMOP_OK);
    ck_assert(vim_moref_eq(&byname->ref, &net->ref));
    ck_assert_str_eq(byname->switch_uuid, simfx_sim->dvs_uuid);
    vim_network_free(byname);
    vim_network_free(net);
    net = NULL;

    /* a standard network has no port group key or switch */
    if (simfx_sim->network[0]) {
        ck_assert_int_eq(vim_network_lookup(c, NULL, simfx_sim->network, &net, &err), VMOP_OK);
        ck_assert_int_eq(net->is_dvpg, 0);
        ck_assert_str_eq(net->ref.type, "Network");
        ck_assert_ptr_null(net->portgroup_key);
        ck_assert_ptr_null(net->switch_uuid);
        vim_network_free(net);
        net = NULL;
    }

    ck_assert_int_eq(vim_network_lookup(c, &dc, "no-such-network", &net, &err), VMOP_E_NOT_FOUND);
    ck_assert_ptr_null(net);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_network_lookup(c, NULL, "DC0_DVPG0", &net, &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    /* a path to something that is not a network */
    ck_assert_int_eq(vim_network_lookup(c, NULL, simfx_sim->datastore, &net, &err), VMOP_E_INVALID);
    vim_network_free(NULL);
    vim_client_free(c);
}
END_TEST

START_TEST(test_find_by_uuid)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_moref src = source_vm(c), ref;
    struct vim_vm *vm = simfx_vm_get(c, &src);
    struct vmop_err err = {0};
    char upper[64];

    ck_assert_ptr_nonnull(vm->bios_uuid);
    ck_assert_ptr_nonnull(vm->instance_uuid);
    ck_assert_int_eq(vim_find_vm_by_uuid(c, vm->bios_uuid, 0, &ref, &err), VMOP_OK);
    ck_assert(vim_moref_eq(&ref, &src));
    ck_assert_int_eq(vim_find_vm_by_uuid(c, vm->instance_uuid, 1, &ref, &err), VMOP_OK);
    ck_assert(vim_moref_eq(&ref, &src));
    /* any case in, found (the simulator itself is case-sensitive) */
    snprintf(upper, sizeof(upper), "%s", vm->instance_uuid);
    for (char *p = upper; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    ck_assert_int_eq(vim_find_vm_by_uuid(c, upper, 1, &ref, &err), VMOP_OK);
    ck_assert(vim_moref_eq(&ref, &src));
    snprintf(upper, sizeof(upper), "%s", vm->bios_uuid);
    for (char *p = upper; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    ck_assert_int_eq(vim_find_vm_by_uuid(c, upper, 0, &ref, &err), VMOP_OK);
    ck_assert(vim_moref_eq(&ref, &src));
    /* a BIOS UUID is not an instance UUID */
    ck_assert_int_eq(vim_find_vm_by_uuid(c, vm->bios_uuid, 1, &ref, &err), VMOP_E_NOT_FOUND);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_find_vm_by_uuid(c, "00000000-0000-0000-0000-000000000000", 1, &ref, &err),
                     VMOP_E_NOT_FOUND);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_find_vm_by_uuid(c, "<uuid/>", 0, &ref, &err), VMOP_E_INVALID);
    vim_vm_free(vm);
    vim_client_free(c);
}
END_TEST

START_TEST(test_cluster_min_mhz)
{
    static const char *const paths[] = {"summary.hardware.cpuMhz", NULL};
    struct vim_client *c = simfx_client(NULL);
    struct vim_moref cluster = simfx_find(c, simfx_sim->cluster, NULL),
                     dc = simfx_find(c, simfx_sim->datacenter, NULL);
    struct vim_entity_list hosts = {0};
    struct vmop_err err = {0};
    int mhz = 0;
    long long want = -1;

    ck_assert_int_eq(vim_cluster_min_cpu_mhz(c, &cluster, &mhz, &err), VMOP_OK);
    ck_assert_int_gt(mhz, 0);
    /* the same minimum, read host by host */
    ck_assert_int_eq(vim_list(c, &cluster, "HostSystem", &hosts, &err), VMOP_OK);
    ck_assert_uint_ge(hosts.n, 1);
    for (size_t i = 0; i < hosts.n; i++) {
        struct vim_objects objs = {0};
        long long v;
        char *t;

        ck_assert_int_eq(vim_retrieve(c, &hosts.items[i].ref, "HostSystem", paths, 0, &objs, &err),
                         VMOP_OK);
        ck_assert_uint_eq(objs.n, 1);
        t = vim_xml_text(vim_object_prop(&objs.items[0], "summary.hardware.cpuMhz"));
        ck_assert_ptr_nonnull(t);
        v = strtoll(t, NULL, 10);
        if (want < 0 || v < want)
            want = v;
        free(t);
        vim_objects_free(&objs);
    }
    ck_assert_int_eq(mhz, want);
    vim_entity_list_free(&hosts);
    /* a datacenter is not a compute resource */
    ck_assert_int_eq(vim_cluster_min_cpu_mhz(c, &dc, &mhz, &err), VMOP_E_INVALID);
    vim_client_free(c);
}
END_TEST

START_TEST(test_list)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_moref src = source_vm(c), pool = simfx_find(c, simfx_sim->resource_pool, NULL);
    struct vim_entity_list all = {0}, in_pool = {0}, ds = {0};
    struct vmop_err err = {0};
    int seen = 0;

    ck_assert_int_eq(vim_list(c, NULL, "VirtualMachine", &all, &err), VMOP_OK);
    ck_assert_uint_ge(all.n, 4);
    for (size_t i = 0; i < all.n; i++) {
        ck_assert_str_eq(all.items[i].ref.type, "VirtualMachine");
        ck_assert_ptr_nonnull(all.items[i].name);
        if (strcmp(all.items[i].name, SOURCE_VM) == 0) {
            ck_assert(vim_moref_eq(&all.items[i].ref, &src));
            seen++;
        }
    }
    ck_assert_int_eq(seen, 1);
    /* a pool shows only its own VMs */
    ck_assert_int_eq(vim_list(c, &pool, "VirtualMachine", &in_pool, &err), VMOP_OK);
    ck_assert_uint_ge(in_pool.n, 1);
    ck_assert_uint_lt(in_pool.n, all.n);
    ck_assert_int_eq(vim_list(c, NULL, "Datastore", &ds, &err), VMOP_OK);
    ck_assert_uint_ge(ds.n, 1);
    ck_assert_str_eq(ds.items[0].ref.type, "Datastore");
    vim_entity_list_free(&all);
    vim_entity_list_free(&in_pool);
    vim_entity_list_free(&ds);
    ck_assert_int_eq(vim_list(c, NULL, "Virtual Machine", &all, &err), VMOP_E_INVALID);
    vim_client_free(c);
}
END_TEST

/* ---- VM operations ----------------------------------------------------------------------------
 */

START_TEST(test_clone_with_identity)
{
    static const char uuid_in[] = "6B1A2C3D-4E5F-4071-8293-A4B5C6D7E8F9";
    static const char uuid[] = "6b1a2c3d-4e5f-4071-8293-a4b5c6d7e8f9";
    struct vim_client *c = simfx_client(NULL);
    struct vim_config_spec *cs = NULL;
    struct vim_moref vm, found, folder = simfx_find(c, simfx_sim->folder, NULL);
    struct vim_moref pool = simfx_find(c, simfx_sim->resource_pool, NULL),
                     ds = simfx_find(c, simfx_sim->datastore, NULL);
    struct vim_vm *v;
    struct vmop_err err = {0};

    ck_assert_int_eq(vim_config_spec_new(&cs), VMOP_OK);
    ck_assert_int_eq(vim_cs_instance_uuid(cs, uuid_in), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(cs, "vmservice.namespacedName", "ns1/web & <1>"), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(cs, "guestinfo.userdata", "I2Nsb3VkLWNvbmZpZw=="),
                     VMOP_OK);
    vm = clone_vm(c, "vimvm-clone-identity", cs, 0);
    vim_config_spec_free(cs);

    ck_assert_int_eq(vim_find_vm_by_uuid(c, uuid_in, 1, &found, &err), VMOP_OK);
    ck_assert(vim_moref_eq(&found, &vm));
    v = simfx_vm_get(c, &vm);
    ck_assert_str_eq(v->name, "vimvm-clone-identity");
    ck_assert_str_eq(v->instance_uuid, uuid);
    ck_assert_str_eq(vim_vm_extra_config(v, "vmservice.namespacedName"), "ns1/web & <1>");
    ck_assert_str_eq(vim_vm_extra_config(v, "guestinfo.userdata"), "I2Nsb3VkLWNvbmZpZw==");
    ck_assert(vim_moref_eq(&v->parent, &folder));
    ck_assert(vim_moref_eq(&v->resource_pool, &pool));
    ck_assert(vim_moref_eq(&v->datastore, &ds));
    ck_assert_int_eq(v->template, 0);
    ck_assert_uint_ge(v->n_nics, 1);
    vim_vm_free(v);
    vim_client_free(c);
}
END_TEST

START_TEST(test_clone_errors)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_moref src = source_vm(c), folder = simfx_find(c, simfx_sim->folder, NULL), bogus, vm;
    struct vim_clone_spec cs = {.source = &src, .folder = &folder, .name = ""};
    struct vmop_err err = {0};

    ck_assert_int_eq(vim_vm_clone(c, &cs, &vm, &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_moref_set(&bogus, "VirtualMachine", "vm-999999"), VMOP_OK);
    cs.source = &bogus;
    cs.name = "vimvm-never";
    ck_assert_int_ne(vim_vm_clone(c, &cs, &vm, &err), VMOP_OK);
    ck_assert_str_eq(err.fault, "ManagedObjectNotFound");
    vim_client_free(c);
}
END_TEST

START_TEST(test_reconfigure_read_back)
{
    static const char bios[] = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    struct vim_client *c = simfx_client(NULL);
    struct vim_moref vm = clone_vm(c, "vimvm-reconfig", NULL, 0);
    struct vim_network *pg1 = NULL, *pg0 = NULL;
    struct vim_config_spec *cs = NULL;
    struct vim_alloc cpu = {.reservation = 1500,
                            .limit = 3000,
                            .shares_level = VIM_SHARES_CUSTOM,
                            .shares = 4000,
                            .expandable = 0};
    struct vim_alloc mem = {
        .reservation = 1024, .limit = -1, .shares_level = VIM_SHARES_HIGH, .expandable = -1};
    struct vim_vm *v;
    struct vmop_err err = {0};
    const char *note = "Owner: <team> & \"ops\" 'x'", *val;

    ck_assert_int_eq(vim_network_lookup(c, NULL, simfx_sim->portgroups[1], &pg1, &err), VMOP_OK);
    ck_assert_int_eq(vim_network_lookup(c, NULL, simfx_sim->portgroups[0], &pg0, &err), VMOP_OK);
    v = simfx_vm_get(c, &vm);
    ck_assert_uint_eq(v->n_nics, 1);
    ck_assert_str_eq(v->nics[0].portgroup_key, pg0->portgroup_key);

    ck_assert_int_eq(vim_config_spec_new(&cs), VMOP_OK);
    vim_cs_num_cpus(cs, 2);
    vim_cs_memory_mb(cs, 2048);
    vim_cs_cpu_alloc(cs, &cpu);
    vim_cs_mem_alloc(cs, &mem);
    ck_assert_int_eq(vim_cs_nic_edit_dvpg(cs, &v->nics[0], pg1->switch_uuid, pg1->portgroup_key),
                     VMOP_OK);
    ck_assert_int_eq(
        vim_cs_nic_add_dvpg(cs, NULL, pg0->switch_uuid, pg0->portgroup_key, "00:50:56:3f:00:42"),
        VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(cs, "guestinfo.metadata", "bWV0YQ=="), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(cs, "guestinfo.old", "x"), VMOP_OK);
    ck_assert_int_eq(vim_cs_annotation(cs, note), VMOP_OK);
    ck_assert_int_eq(vim_cs_managed_by(cs, "com.example.vmop", "VirtualMachine"), VMOP_OK);
    ck_assert_int_eq(vim_cs_bios_uuid(cs, bios), VMOP_OK);
    ck_assert_msg(vim_vm_reconfigure(c, &vm, cs, &err) == VMOP_OK, "reconfigure: %s", err.msg);
    vim_config_spec_free(cs);
    vim_vm_free(v);

    v = simfx_vm_get(c, &vm);
    ck_assert_int_eq(v->num_cpu, 2);
    ck_assert_int_eq(v->memory_mb, 2048);
    ck_assert_int_eq(v->cpu_alloc.reservation, 1500);
    ck_assert_int_eq(v->cpu_alloc.limit, 3000);
    ck_assert_int_eq(v->cpu_alloc.shares_level, VIM_SHARES_CUSTOM);
    ck_assert_int_eq(v->cpu_alloc.shares, 4000);
    ck_assert_int_eq(v->cpu_alloc.expandable, 0);
    ck_assert_int_eq(v->mem_alloc.reservation, 1024);
    ck_assert_int_eq(v->mem_alloc.limit, -1);
    ck_assert_int_eq(v->mem_alloc.shares_level, VIM_SHARES_HIGH);
    ck_assert_uint_eq(v->n_nics, 2);
    for (size_t i = 0; i < v->n_nics; i++) {
        ck_assert_str_eq(v->nics[i].switch_uuid, simfx_sim->dvs_uuid);
        if (v->nics[i].key == 4000) {
            ck_assert_str_eq(v->nics[i].portgroup_key, pg1->portgroup_key);
            ck_assert_str_eq(v->nics[i].device_type, "VirtualE1000");
            ck_assert_ptr_nonnull(v->nics[i].mac);
        } else {
            ck_assert_str_eq(v->nics[i].portgroup_key, pg0->portgroup_key);
            ck_assert_str_eq(v->nics[i].device_type, "VirtualVmxnet3");
            ck_assert_str_eq(v->nics[i].mac, "00:50:56:3f:00:42");
        }
    }
    ck_assert_str_eq(vim_vm_extra_config(v, "guestinfo.metadata"), "bWV0YQ==");
    ck_assert_str_eq(vim_vm_extra_config(v, "guestinfo.old"), "x");
    ck_assert_str_eq(v->annotation, note);
    ck_assert_str_eq(v->managed_by_ext, "com.example.vmop");
    ck_assert_str_eq(v->managed_by_type, "VirtualMachine");
    ck_assert_str_eq(v->bios_uuid, bios);
    vim_vm_free(v);

    /* second round: a new value for a key wins; a removal reads back as gone or empty */
    ck_assert_int_eq(vim_config_spec_new(&cs), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(cs, "guestinfo.metadata", "bmV3"), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(cs, "guestinfo.old", NULL), VMOP_OK);
    ck_assert_msg(vim_vm_reconfigure(c, &vm, cs, &err) == VMOP_OK, "reconfigure: %s", err.msg);
    vim_config_spec_free(cs);
    v = simfx_vm_get(c, &vm);
    ck_assert_str_eq(vim_vm_extra_config(v, "guestinfo.metadata"), "bmV3");
    val = vim_vm_extra_config(v, "guestinfo.old");
    ck_assert_msg(val == NULL || *val == '\0', "guestinfo.old still \"%s\"", val);
    /* untouched by the second spec */
    ck_assert_int_eq(v->num_cpu, 2);
    ck_assert_str_eq(v->annotation, note);
    vim_vm_free(v);

    /* a switch UUID that does not exist fails the task with a typed fault */
    ck_assert_int_eq(vim_config_spec_new(&cs), VMOP_OK);
    v = simfx_vm_get(c, &vm);
    ck_assert_int_eq(vim_cs_nic_edit_dvpg(cs, &v->nics[0], "00000000-0000-0000-0000-00000000dead",
                                          pg0->portgroup_key),
                     VMOP_OK);
    ck_assert_int_eq(vim_vm_reconfigure(c, &vm, cs, &err), VMOP_E_FAULT);
    ck_assert_str_eq(err.fault, "NotFound");
    vim_config_spec_free(cs);
    vim_vm_free(v);

    vim_network_free(pg0);
    vim_network_free(pg1);
    vim_client_free(c);
}
END_TEST

START_TEST(test_power_cycle)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_moref vm = clone_vm(c, "vimvm-power", NULL, 0);
    struct vmop_err err = {0};
    struct vim_vm *v = NULL;
    long long deadline;

    ck_assert_int_eq(power_state(c, &vm), VIM_POWER_OFF);
    simfx_power(c, &vm, VIM_OP_POWER_ON);
    ck_assert_int_eq(power_state(c, &vm), VIM_POWER_ON);
    /* the launcher plays the guest: an IP shows up in guest.ipAddress and guest.net */
    v = simfx_wait_guest_ip(c, &vm, 20000);
    ck_assert_uint_ge(v->n_guest_nics, 1);
    ck_assert_uint_ge(v->guest_nics[0].n_ips, 1);
    ck_assert_str_eq(v->guest_nics[0].ips[0], v->guest_ip);
    ck_assert_ptr_nonnull(v->boot_time);
    vim_vm_free(v);

    /* the same state again is InvalidPowerState, as a task error */
    power_refused(c, &vm, VIM_OP_POWER_ON);

    simfx_power(c, &vm, VIM_OP_SUSPEND);
    ck_assert_int_eq(power_state(c, &vm), VIM_POWER_SUSPENDED);
    power_refused(c, &vm, VIM_OP_SUSPEND);
    simfx_power(c, &vm, VIM_OP_POWER_ON);
    ck_assert_int_eq(power_state(c, &vm), VIM_POWER_ON);
    simfx_power(c, &vm, VIM_OP_RESET);
    ck_assert_int_eq(power_state(c, &vm), VIM_POWER_ON);
    simfx_power(c, &vm, VIM_OP_POWER_OFF);
    ck_assert_int_eq(power_state(c, &vm), VIM_POWER_OFF);
    power_refused(c, &vm, VIM_OP_POWER_OFF);
    /* guest shutdown: not a task; on a powered-off VM a plain fault */
    power_refused(c, &vm, VIM_OP_SHUTDOWN_GUEST);
    simfx_power(c, &vm, VIM_OP_POWER_ON);
    simfx_power(c, &vm, VIM_OP_SHUTDOWN_GUEST);
    /* vcsim powers off synchronously; real VC would take a while: poll with a bound */
    deadline = vmop_test_now_ms() + 10000;
    while (power_state(c, &vm) != VIM_POWER_OFF && vmop_test_now_ms() < deadline)
        nanosleep(&(struct timespec){0, 100 * 1000000}, NULL);
    ck_assert_int_eq(power_state(c, &vm), VIM_POWER_OFF);
    ck_assert_int_eq(vim_vm_power(c, &vm, (enum vim_power_op)42, &err), VMOP_E_INVALID);
    vim_client_free(c);
}
END_TEST

START_TEST(test_destroy)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_moref vm = clone_vm(c, "vimvm-destroy", NULL, 0);
    struct vmop_err err = {0};
    struct vim_vm *v = NULL;
    char *path;
    struct vim_moref ref;

    simfx_power(c, &vm, VIM_OP_POWER_ON);
    ck_assert_int_eq(vim_vm_destroy(c, &vm, &err), VMOP_E_FAULT);
    ck_assert_str_eq(err.fault, "InvalidPowerState");
    vmop_err_clear(&err);
    ck_assert_int_eq(power_state(c, &vm), VIM_POWER_ON);
    simfx_power(c, &vm, VIM_OP_POWER_OFF);
    ck_assert_msg(vim_vm_destroy(c, &vm, &err) == VMOP_OK, "destroy: %s", err.msg);

    ck_assert_int_eq(vim_vm_get(c, &vm, &v, &err), VMOP_E_NOT_FOUND);
    ck_assert_ptr_null(v);
    ck_assert_str_eq(err.fault, "ManagedObjectNotFound");
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_vm_get_power(c, &vm, &(enum vim_power_state){0}, &err), VMOP_E_NOT_FOUND);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_vm_power(c, &vm, VIM_OP_POWER_ON, &err), VMOP_E_NOT_FOUND);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_vm_destroy(c, &vm, &err), VMOP_E_NOT_FOUND);
    vmop_err_clear(&err);
    path = join(simfx_sim->folder, "vimvm-destroy");
    ck_assert_int_eq(vim_find_by_path(c, path, NULL, &ref, &err), VMOP_E_NOT_FOUND);
    free(path);
    vim_client_free(c);
}
END_TEST

START_TEST(test_template_mark_as_vm)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_moref tmpl = clone_vm(c, "vimvm-template", NULL, 1);
    struct vim_moref pool = simfx_find(c, simfx_sim->resource_pool, NULL);
    struct vmop_err err = {0};
    struct vim_vm *v = simfx_vm_get(c, &tmpl);

    ck_assert_int_eq(v->template, 1);
    vim_vm_free(v);
    /* a template cannot be powered on: a plain fault */
    ck_assert_int_eq(vim_vm_power(c, &tmpl, VIM_OP_POWER_ON, &err), VMOP_E_FAULT);
    ck_assert_str_eq(err.fault, "InvalidState");
    vmop_err_clear(&err);
    ck_assert_msg(vim_vm_mark_as_vm(c, &tmpl, &pool, &err) == VMOP_OK, "mark: %s", err.msg);
    v = simfx_vm_get(c, &tmpl);
    ck_assert_int_eq(v->template, 0);
    ck_assert(vim_moref_eq(&v->resource_pool, &pool));
    vim_vm_free(v);
    simfx_power(c, &tmpl, VIM_OP_POWER_ON);
    ck_assert_int_eq(power_state(c, &tmpl), VIM_POWER_ON);
    vim_client_free(c);
}
END_TEST

START_TEST(test_get_not_found)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_moref ref;
    struct vim_vm *v = NULL;
    struct vmop_err err = {0};

    ck_assert_int_eq(vim_moref_set(&ref, "VirtualMachine", "vm-424242"), VMOP_OK);
    ck_assert_int_eq(vim_vm_get(c, &ref, &v, &err), VMOP_E_NOT_FOUND);
    ck_assert_ptr_null(v);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_moref_set(&ref, "Folder", "folder-3"), VMOP_OK);
    ck_assert_int_eq(vim_vm_get(c, &ref, &v, &err), VMOP_E_INVALID);
    ck_assert_int_eq(vim_vm_get_power(c, &ref, &(enum vim_power_state){0}, &err), VMOP_E_INVALID);
    ck_assert_int_eq(vim_vm_get_power(c, NULL, NULL, &err), VMOP_E_INVALID);
    vim_client_free(c);
}
END_TEST

static Suite *vm_sim_suite(void)
{
    static const struct vcsim_opts opts = {.portgroups = 2};
    Suite *s = suite_create("vim_vm_sim");
    TCase *tc = simfx_tcase(s, "sim", &opts, 120);

    tcase_add_test(tc, test_find_by_path);
    tcase_add_test(tc, test_network_lookup);
    tcase_add_test(tc, test_find_by_uuid);
    tcase_add_test(tc, test_cluster_min_mhz);
    tcase_add_test(tc, test_list);
    tcase_add_test(tc, test_clone_with_identity);
    tcase_add_test(tc, test_clone_errors);
    tcase_add_test(tc, test_reconfigure_read_back);
    tcase_add_test(tc, test_power_cycle);
    tcase_add_test(tc, test_destroy);
    tcase_add_test(tc, test_template_mark_as_vm);
    tcase_add_test(tc, test_get_not_found);
    return s;
}

int main(void)
{
    return vmop_check_run(vm_sim_suite());
}
