/* sim_fixture.c: the shared vCenter simulator fixture for Check tests (see sim_fixture.h): the
 * per-TCase simulator slots and their setup/teardown trampolines, the client factory, lookups and
 * waits. */
#include "sim_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "clock.h"

struct vcsim *simfx_sim;

/* Check's fixtures take no argument: one setup function per slot, each starting its slot's opts. */
#define SLOTS 8
static struct vcsim_opts slot_opts[SLOTS];
static int n_slots;

static void slot_start(int i)
{
    simfx_sim = vcsim_start_or_exit(&slot_opts[i]);
}

static void slot_stop(void)
{
    vcsim_stop_or_warn(simfx_sim);
    simfx_sim = NULL;
}

#define SLOT_SETUP(i)                                                                              \
    static void slot_setup_##i(void)                                                               \
    {                                                                                              \
        slot_start(i);                                                                             \
    }
SLOT_SETUP(0)
SLOT_SETUP(1)
SLOT_SETUP(2)
SLOT_SETUP(3)
SLOT_SETUP(4)
SLOT_SETUP(5)
SLOT_SETUP(6)
SLOT_SETUP(7)

static void (*const slot_setup[SLOTS])(void) = {slot_setup_0, slot_setup_1, slot_setup_2,
                                                slot_setup_3, slot_setup_4, slot_setup_5,
                                                slot_setup_6, slot_setup_7};

TCase *simfx_tcase(Suite *s, const char *name, const struct vcsim_opts *opts, int timeout_s)
{
    TCase *tc = tcase_create(name);

    if (n_slots == SLOTS) {
        fprintf(stderr, "simfx_tcase(%s): more than %d simulator TCases\n", name, SLOTS);
        exit(EXIT_FAILURE);
    }
    if (opts)
        slot_opts[n_slots] = *opts;
    tcase_add_unchecked_fixture(tc, slot_setup[n_slots], slot_stop);
    n_slots++;
    if (timeout_s > 0)
        tcase_set_timeout(tc, timeout_s);
    suite_add_tcase(s, tc);
    return tc;
}

struct vcsim *simfx_start(const struct vcsim_opts *opts)
{
    struct vcsim *sim = NULL;
    struct vmop_err err = {0};

    ck_assert_msg(vcsim_start(opts, &sim, &err) == VMOP_OK, "vcsim_start: %s", err.msg);
    return sim;
}

struct vim_client *simfx_client_of(const struct vcsim *sim, const struct vim_config *cfg)
{
    struct vim_config c = cfg ? *cfg : (struct vim_config){0};
    struct vim_client *client = NULL;
    struct vmop_err err = {0};

    ck_assert_ptr_nonnull(sim);
    if (!c.url)
        c.url = sim->url;
    if (!c.username)
        c.username = sim->username;
    if (!c.password)
        c.password = sim->password;
    if (!c.timeout_ms)
        c.timeout_ms = SIMFX_TIMEOUT_MS;
    ck_assert_msg(vim_client_new(&c, &client, &err) == VMOP_OK, "vim_client_new: %s", err.msg);
    return client;
}

struct vim_client *simfx_client(const struct vim_config *cfg)
{
    return simfx_client_of(simfx_sim, cfg);
}

struct vim_moref simfx_find(struct vim_client *c, const char *path, const char *type)
{
    struct vim_moref ref;
    struct vmop_err err = {0};

    ck_assert_msg(vim_find_by_path(c, path, type, &ref, &err) == VMOP_OK, "find %s: %s", path,
                  err.msg);
    return ref;
}

const struct vcsim_item *simfx_item(const struct vcsim *sim, const char *name,
                                    const struct vcsim_library **ret_lib)
{
    const struct vcsim_item *item = vcsim_find_item(sim, name, ret_lib);

    ck_assert_msg(item != NULL, "no library item %s in the simulator", name);
    return item;
}

struct vim_vm *simfx_vm_get(struct vim_client *c, const struct vim_moref *ref)
{
    struct vim_vm *vm = NULL;
    struct vmop_err err = {0};

    ck_assert_msg(vim_vm_get(c, ref, &vm, &err) == VMOP_OK, "get %s: %s", ref->value, err.msg);
    return vm;
}

void simfx_power(struct vim_client *c, const struct vim_moref *ref, enum vim_power_op op)
{
    struct vmop_err err = {0};

    ck_assert_msg(vim_vm_power(c, ref, op, &err) == VMOP_OK, "%s %s: %s", vim_power_op_method(op),
                  ref->value, err.msg);
}

struct vim_moref simfx_clone(struct vim_client *c, const struct vcsim *sim, const char *src_path,
                             struct vim_clone_spec cs)
{
    struct vim_moref src = simfx_find(c, src_path, "VirtualMachine"), folder, pool, ds, vm;
    struct vmop_err err = {0};

    cs.source = &src;
    if (!cs.folder) {
        folder = simfx_find(c, sim->folder, "Folder");
        cs.folder = &folder;
    }
    if (!cs.pool) {
        pool = simfx_find(c, sim->resource_pool, "ResourcePool");
        cs.pool = &pool;
    }
    if (!cs.datastore) {
        ds = simfx_find(c, sim->datastore, "Datastore");
        cs.datastore = &ds;
    }
    ck_assert_msg(vim_vm_clone(c, &cs, &vm, &err) == VMOP_OK, "clone %s: %s", cs.name, err.msg);
    ck_assert_str_eq(vm.type, "VirtualMachine");
    return vm;
}

size_t simfx_count_by_uuid(struct vim_client *c, const char *uuid)
{
    struct vim_entity_list l = {0};
    struct vmop_err err = {0};
    size_t n = 0;

    ck_assert_msg(vim_list(c, NULL, "VirtualMachine", &l, &err) == VMOP_OK, "%s", err.msg);
    for (size_t i = 0; i < l.n; i++) {
        struct vim_vm *vm = simfx_vm_get(c, &l.items[i].ref);

        if (vm->instance_uuid && strcasecmp(vm->instance_uuid, uuid) == 0)
            n++;
        vim_vm_free(vm);
    }
    vim_entity_list_free(&l);
    return n;
}

struct vim_vm *simfx_wait_guest_ip(struct vim_client *c, const struct vim_moref *ref,
                                   long timeout_ms)
{
    long long deadline = vmop_test_now_ms() + timeout_ms;

    for (;;) {
        struct vim_vm *vm = simfx_vm_get(c, ref);

        if (vm->guest_ip)
            return vm;
        vim_vm_free(vm);
        ck_assert_msg(vmop_test_now_ms() < deadline, "no guest IP for %s within %ld ms", ref->value,
                      timeout_ms);
        vmop_test_sleep_ms(50);
    }
}
