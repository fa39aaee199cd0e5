/* test_vim_rest_sim.c: integration tests of vimclient's REST (Content Library) calls against the
 * govmomi simulator (tests/vcsim): listing libraries and items with their types, item details,
 * exact-name find, deploying the seeded OVF item (pool, folder, network mapping to a DV port group)
 * and VM-template item and reading the VMs back over SOAP, clear errors for a bad pool and unknown
 * ids, and REST session expiry with a transparent re-login (one login for concurrent callers).
 *
 * One simulator serves the library tests (tests/common/sim_fixture.h: started before Check forks
 * them); the expiry tests start their own with a short idle timeout. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "sim_fixture.h"
#include "vim_internal.h" /* vim_rest_logout */
#include "vimclient.h"

static const struct vcsim_item *item_of_type(const struct vcsim *s, const char *type,
                                             const struct vcsim_library **ret_lib)
{
    for (size_t i = 0; i < s->n_libraries; i++)
        for (size_t k = 0; k < s->libraries[i].n_items; k++)
            if (!strcmp(s->libraries[i].items[k].type, type)) {
                if (ret_lib)
                    *ret_lib = &s->libraries[i];
                return &s->libraries[i].items[k];
            }
    return NULL;
}

START_TEST(list_libraries)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_library_list list = {0};
    struct vmop_err err = {0};
    size_t found = 0;

    CK_OK(vim_library_list(c, &list, &err), err);
    ck_assert_uint_ge(list.n, simfx_sim->n_libraries);
    for (size_t i = 0; i < simfx_sim->n_libraries; i++)
        for (size_t k = 0; k < list.n; k++)
            if (!strcmp(list.items[k].id, simfx_sim->libraries[i].id)) {
                ck_assert_str_eq(list.items[k].name, simfx_sim->libraries[i].name);
                ck_assert_ptr_nonnull(list.items[k].type);
                ck_assert_str_eq(list.items[k].type, "LOCAL");
                found++;
            }
    ck_assert_uint_eq(found, simfx_sim->n_libraries);
    vim_library_list_free(&list);
    vim_library_list_free(&list); /* a freed list is empty and can be freed again */
    vim_client_free(c);
}
END_TEST

START_TEST(find_library_exact_name)
{
    struct vim_client *c = simfx_client(NULL);
    struct vmop_err err = {0};
    char *id = NULL, upper[128];

    ck_assert_uint_ge(simfx_sim->n_libraries, 1);
    CK_OK(vim_library_find(c, simfx_sim->libraries[0].name, &id, &err), err);
    ck_assert_str_eq(id, simfx_sim->libraries[0].id);
    free(id);
    id = NULL;

    /* The server's find is case-insensitive; vimclient wants the exact name. */
    snprintf(upper, sizeof(upper), "%s", simfx_sim->libraries[0].name);
    for (char *p = upper; *p; p++)
        if (*p >= 'a' && *p <= 'z')
            *p = (char)(*p - 'a' + 'A');
    ck_assert_int_eq(vim_library_find(c, upper, &id, &err), VMOP_E_NOT_FOUND);
    ck_assert_ptr_null(id);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_library_find(c, "no-such-library", &id, &err), VMOP_E_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(err.msg, "no-such-library"));
    vim_client_free(c);
}
END_TEST

START_TEST(list_items_with_types)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_library_item_list list = {0};
    struct vmop_err err = {0};
    const struct vcsim_library *lib = NULL;
    const struct vcsim_item *ovf = item_of_type(simfx_sim, "ovf", &lib);
    int seen_ovf = 0, seen_tmpl = 0;

    ck_assert_ptr_nonnull(ovf);
    CK_OK(vim_library_items(c, lib->id, &list, &err), err);
    ck_assert_uint_eq(list.n, lib->n_items);
    for (size_t i = 0; i < list.n; i++) {
        const struct vim_library_item *it = &list.items[i];
        ck_assert_str_eq(it->library_id, lib->id);
        for (size_t k = 0; k < lib->n_items; k++) {
            if (strcmp(it->id, lib->items[k].id))
                continue;
            ck_assert_str_eq(it->name, lib->items[k].name);
            ck_assert_str_eq(it->type_str, lib->items[k].type);
            if (!strcmp(lib->items[k].type, "ovf")) {
                ck_assert_int_eq(it->type, VIM_ITEM_OVF);
                seen_ovf++;
            } else if (!strcmp(lib->items[k].type, "vm-template")) {
                ck_assert_int_eq(it->type, VIM_ITEM_VM_TEMPLATE);
                seen_tmpl++;
            }
        }
    }
    ck_assert_int_ge(seen_ovf, 1);
    ck_assert_int_ge(seen_tmpl, 1);
    vim_library_item_list_free(&list);

    ck_assert_int_eq(vim_library_items(c, "00000000-0000-0000-0000-000000000000", &list, &err),
                     VMOP_E_NOT_FOUND);
    vim_client_free(c);
}
END_TEST

START_TEST(item_details)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_library_item *it = NULL;
    struct vmop_err err = {0};
    const struct vcsim_library *lib = NULL;
    const struct vcsim_item *ovf = item_of_type(simfx_sim, "ovf", &lib);

    CK_OK(vim_library_item_get(c, ovf->id, &it, &err), err);
    ck_assert_str_eq(it->id, ovf->id);
    ck_assert_str_eq(it->name, ovf->name);
    ck_assert_str_eq(it->library_id, lib->id);
    ck_assert_int_eq(it->type, VIM_ITEM_OVF);
    ck_assert_ptr_nonnull(it->creation_time);
    vim_library_item_free(it);
    it = NULL;

    ck_assert_int_eq(vim_library_item_get(c, "no-such-item", &it, &err), VMOP_E_NOT_FOUND);
    ck_assert_ptr_null(it);
    ck_assert_int_eq(err.http_status, 404);
    vmop_err_clear(&err);
    /* an id cannot reach another resource */
    ck_assert_int_eq(vim_library_item_get(c, "../../library", &it, &err), VMOP_E_INVALID);
    ck_assert_ptr_null(it);
    vim_client_free(c);
}
END_TEST

struct placement {
    struct vim_moref pool, folder;
    struct vim_network *dvpg;
};

static void placement_get(struct vim_client *c, struct placement *p)
{
    struct vmop_err err = {0};
    CK_OK(vim_find_by_path(c, simfx_sim->resource_pool, "ResourcePool", &p->pool, &err), err);
    CK_OK(vim_find_by_path(c, simfx_sim->folder, "Folder", &p->folder, &err), err);
    ck_assert_uint_ge(simfx_sim->n_portgroups, 1);
    CK_OK(vim_network_lookup(c, NULL, simfx_sim->portgroups[0], &p->dvpg, &err), err);
    ck_assert(p->dvpg->is_dvpg);
}

static void destroy_vm(struct vim_client *c, const struct vim_moref *vm)
{
    struct vmop_err err = {0};
    (void)vim_vm_power(c, vm, VIM_OP_POWER_OFF, &err);
    vmop_err_clear(&err);
    CK_OK(vim_vm_destroy(c, vm, &err), err);
}

START_TEST(deploy_ovf)
{
    struct vim_client *c = simfx_client(NULL);
    const struct vcsim_item *ovf = item_of_type(simfx_sim, "ovf", NULL);
    struct placement p = {0};
    struct vim_net_mapping map = {.ovf_network = "nic0"};
    struct vim_deploy_spec spec = {
        .name = "rest-ovf-1",
        .net_mappings = &map,
        .n_net_mappings = 1,
    };
    struct vim_moref vm = {{0}}, found;
    struct vim_vm *v = NULL;
    struct vmop_err err = {0};

    placement_get(c, &p);
    map.network_id = p.dvpg->ref.value;
    spec.resource_pool_id = p.pool.value;
    spec.folder_id = p.folder.value;
    CK_OK(vim_library_deploy(c, ovf->id, &spec, &vm, &err), err);
    ck_assert_str_eq(vm.type, "VirtualMachine");

    CK_OK(vim_vm_get(c, &vm, &v, &err), err);
    ck_assert_str_eq(v->name, "rest-ovf-1");
    ck_assert_int_eq(v->template, 0);
    ck_assert_int_eq(v->power_state, VIM_POWER_OFF);
    ck_assert_int_eq(v->num_cpu, 2); /* from the OVF descriptor */
    ck_assert_int_eq(v->memory_mb, 1024);
    ck_assert(vim_moref_eq(&v->resource_pool, &p.pool));
    ck_assert(vim_moref_eq(&v->parent, &p.folder));
    ck_assert_uint_ge(v->n_nics, 1);
    ck_assert_ptr_nonnull(v->nics[0].portgroup_key);
    ck_assert_str_eq(v->nics[0].portgroup_key, p.dvpg->portgroup_key);
    vim_vm_free(v);

    { /* and it is where we asked for by inventory path */
        char path[512];
        snprintf(path, sizeof(path), "%s/rest-ovf-1", simfx_sim->folder);
        CK_OK(vim_find_by_path(c, path, "VirtualMachine", &found, &err), err);
        ck_assert(vim_moref_eq(&found, &vm));
    }
    destroy_vm(c, &vm);
    vim_network_free(p.dvpg);
    vim_client_free(c);
}
END_TEST

START_TEST(deploy_vm_template)
{
    struct vim_client *c = simfx_client(NULL);
    const struct vcsim_item *tmpl = item_of_type(simfx_sim, "vm-template", NULL);
    struct placement p = {0};
    struct vim_deploy_spec spec = {.name = "rest-tmpl-1", .power_on = 1};
    struct vim_net_mapping map = {.ovf_network = "nic0"};
    struct vim_moref vm = {{0}};
    struct vim_vm *v = NULL;
    struct vmop_err err = {0};

    ck_assert_ptr_nonnull(tmpl);
    placement_get(c, &p);
    spec.resource_pool_id = p.pool.value;
    spec.folder_id = p.folder.value;

    /* network mappings are for OVF items */
    map.network_id = p.dvpg->ref.value;
    spec.net_mappings = &map;
    spec.n_net_mappings = 1;
    ck_assert_int_eq(vim_library_deploy(c, tmpl->id, &spec, &vm, &err), VMOP_E_UNSUPPORTED);
    ck_assert_str_eq(vm.value, "");
    vmop_err_clear(&err);
    spec.net_mappings = NULL;
    spec.n_net_mappings = 0;

    CK_OK(vim_library_deploy(c, tmpl->id, &spec, &vm, &err), err);
    CK_OK(vim_vm_get(c, &vm, &v, &err), err);
    ck_assert_str_eq(v->name, "rest-tmpl-1");
    ck_assert_int_eq(v->template, 0);               /* a VM, not a template */
    ck_assert_int_eq(v->power_state, VIM_POWER_ON); /* as asked */
    ck_assert(vim_moref_eq(&v->resource_pool, &p.pool));
    ck_assert(vim_moref_eq(&v->parent, &p.folder));
    vim_vm_free(v);
    destroy_vm(c, &vm);
    vim_network_free(p.dvpg);
    vim_client_free(c);
}
END_TEST

START_TEST(deploy_errors)
{
    struct vim_client *c = simfx_client(NULL);
    const struct vcsim_item *ovf = item_of_type(simfx_sim, "ovf", NULL);
    const struct vcsim_item *tmpl = item_of_type(simfx_sim, "vm-template", NULL);
    struct placement p = {0};
    struct vim_deploy_spec spec = {.name = "rest-bad-1", .resource_pool_id = "resgroup-999999"};
    struct vim_moref vm = {{0}}, found;
    struct vmop_err err = {0};
    char path[512];

    placement_get(c, &p);
    spec.folder_id = p.folder.value;

    /* OVF into a pool that does not exist: the failure comes inside an HTTP 200 */
    ck_assert_int_eq(vim_library_deploy(c, ovf->id, &spec, &vm, &err), VMOP_E_FAULT);
    ck_assert_str_eq(vm.value, "");
    ck_assert_ptr_nonnull(strstr(err.msg, "deploy"));
    ck_assert_uint_gt(strlen(err.fault), 0);
    vmop_err_clear(&err);

    /* VM template into a folder that does not exist: a vAPI error. (Not a pool that does not exist:
     * the simulator's clone task then panics and takes the whole simulator down,
     * tests/vcsim/README.md.) */
    spec.name = "rest-bad-2";
    spec.resource_pool_id = p.pool.value;
    spec.folder_id = "group-999999";
    ck_assert_int_ne(vim_library_deploy(c, tmpl->id, &spec, &vm, &err), VMOP_OK);
    ck_assert_str_eq(vm.value, "");
    ck_assert_uint_gt(strlen(err.msg), 0);
    vmop_err_clear(&err);
    spec.folder_id = p.folder.value;

    /* unknown item, missing arguments */
    ck_assert_int_eq(vim_library_deploy(c, "no-such-item", &spec, &vm, &err), VMOP_E_NOT_FOUND);
    vmop_err_clear(&err);
    spec.folder_id = NULL;
    ck_assert_int_eq(vim_library_deploy(c, ovf->id, &spec, &vm, &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "folder"));

    /* nothing was created under those names */
    vmop_err_clear(&err);
    snprintf(path, sizeof(path), "%s/rest-bad-1", simfx_sim->folder);
    ck_assert_int_eq(vim_find_by_path(c, path, NULL, &found, &err), VMOP_E_NOT_FOUND);
    vim_network_free(p.dvpg);
    vim_client_free(c);
}
END_TEST

/* ---- session expiry ---- */

#define IDLE_MS 700

/* The simulator checks every IDLE_MS whether a session has been idle for more than IDLE_MS, so
 * a session dies between IDLE_MS and 2 * IDLE_MS after its last use. No event announces it, and
 * any probe with the session would keep it alive: the test has to let that time pass. */
static void let_session_expire(void)
{
    struct timespec ts = {.tv_sec = (2 * IDLE_MS + 500) / 1000,
                          .tv_nsec = ((2 * IDLE_MS + 500) % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static struct vcsim *start_expiring_sim(void)
{
    static const struct vcsim_opts o = {.session_idle_timeout_ms = IDLE_MS, .no_guest_ip = 1};
    return simfx_start(&o);
}

START_TEST(session_expiry_relogin)
{
    struct vcsim *s = start_expiring_sim();
    struct vim_client *c = simfx_client_of(s, NULL);
    struct vim_library_list list = {0};
    struct vim_stats st0, st1;
    struct vmop_err err = {0};

    CK_OK(vim_library_list(c, &list, &err), err);
    vim_library_list_free(&list);
    vim_client_stats(c, &st0);
    ck_assert_uint_eq(st0.logins, 1);

    let_session_expire();
    CK_OK(vim_library_list(c, &list, &err), err);
    ck_assert_uint_ge(list.n, 1);
    vim_library_list_free(&list);
    vim_client_stats(c, &st1);
    ck_assert_uint_eq(st1.logins, st0.logins + 1);
    ck_assert_uint_eq(st1.relogins, st0.relogins + 1);

    /* logout, then a call logs in again (not counted as a re-login) */
    CK_OK(vim_rest_logout(c, &err), err);
    vim_client_stats(c, &st0);
    CK_OK(vim_library_list(c, &list, &err), err);
    vim_library_list_free(&list);
    vim_client_stats(c, &st1);
    ck_assert_uint_eq(st1.logins, st0.logins + 1);
    ck_assert_uint_eq(st1.relogins, st0.relogins);

    vim_client_free(c);
    CK_OK(vcsim_stop(s, &err), err);
}
END_TEST

struct worker {
    struct vim_client *c;
    const char *lib_id;
    vmop_rc rc;
    struct vmop_err err;
};

static void *worker_run(void *arg)
{
    struct worker *w = arg;
    struct vim_library_item_list l = {0};
    w->rc = vim_library_items(w->c, w->lib_id, &l, &w->err);
    vim_library_item_list_free(&l);
    return NULL;
}

START_TEST(session_expiry_concurrent_one_login)
{
    struct vcsim *s = start_expiring_sim();
    struct vim_client *c = simfx_client_of(s, NULL);
    struct vim_library_list list = {0};
    struct worker w[4];
    pthread_t t[4];
    struct vim_stats st0, st1;
    struct vmop_err err = {0};

    ck_assert_uint_ge(s->n_libraries, 1);
    CK_OK(vim_library_list(c, &list, &err), err);
    vim_library_list_free(&list);
    vim_client_stats(c, &st0);
    let_session_expire();
    for (int i = 0; i < 4; i++) {
        w[i] = (struct worker){.c = c, .lib_id = s->libraries[0].id};
        ck_assert_int_eq(pthread_create(&t[i], NULL, worker_run, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        ck_assert_msg(w[i].rc == VMOP_OK, "worker %d: %s", i, w[i].err.msg);
    }
    vim_client_stats(c, &st1);
    ck_assert_uint_eq(st1.logins, st0.logins + 1); /* one new session for all four */
    ck_assert_uint_eq(st1.relogins, st0.relogins + 1);
    vim_client_free(c);
    CK_OK(vcsim_stop(s, &err), err);
}
END_TEST

static Suite *suite(void)
{
    static const struct vcsim_opts opts = {.no_guest_ip = 1};
    Suite *s = suite_create("vim_rest_sim");
    TCase *t = simfx_tcase(s, "library", &opts, 120);
    tcase_add_test(t, list_libraries);
    tcase_add_test(t, find_library_exact_name);
    tcase_add_test(t, list_items_with_types);
    tcase_add_test(t, item_details);
    tcase_add_test(t, deploy_ovf);
    tcase_add_test(t, deploy_vm_template);
    tcase_add_test(t, deploy_errors);
    t = tcase_create("session");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, session_expiry_relogin);
    tcase_add_test(t, session_expiry_concurrent_one_login);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return vmop_check_run(suite());
}
