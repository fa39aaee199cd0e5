/* test_vim_core_sim.c: vimclient's core against the vCenter simulator (tests/vcsim harness):
 * login and wrong credentials, session expiry and transparent re-login (fault and missingSet
 * forms, from 4 threads at once, and for a watch), TLS (thumbprint pins, default verification,
 * insecure), call timeouts, RetrievePropertiesEx through a ContainerView, a watch that sees a
 * power change and can be cancelled, and task results and errors.
 *
 * Each TCase starts its own simulator (simfx_tcase, tests/common/sim_fixture.h: in the runner
 * process); each test makes its own client. The VMs used: /DC0/vm/DC0_C0_RP0_VM1 is powered off and
 * on by the watch test; the others are only read (or asked for a no-op that fails). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "clock.h"
#include "sim_fixture.h"
#include "vim_internal.h"

/* Idle time after which the expiry simulator has certainly dropped a session: vcsim checks every
 * SESSION_IDLE_MS and drops sessions idle longer than that, so 2x plus a margin. */
#define SESSION_IDLE_MS 2000u
#define EXPIRE_WAIT_MS  (2 * SESSION_IDLE_MS + 300)

/* SearchIndex.FindByInventoryPath through the core call (the inventory module is not needed). */
static struct vim_moref find_path(struct vim_client *c, const char *path)
{
    struct vbuf b;
    struct vim_resp *r = NULL;
    struct vmop_err err = {0};
    struct vim_moref ref;

    ck_assert_int_eq(vim_login(c, &err), VMOP_OK);
    vbuf_init(&b, 4096);
    vbuf_add_xml_elem(&b, "inventoryPath", path);
    ck_assert_msg(vim_soap_call(c, "FindByInventoryPath", &c->sc_search_index, vbuf_str(&b),
                                VIM_RET_REQUIRED, &r, &err) == VMOP_OK,
                  "FindByInventoryPath %s: %s", path, err.msg);
    ck_assert_int_eq(vim_xml_moref(vim_xml_child(r->response, "returnval"), &ref), VMOP_OK);
    vim_resp_free(r);
    vbuf_free(&b);
    return ref;
}

/* Starts a power task with a raw call and waits for it. */
static vmop_rc power_task(struct vim_client *c, const char *method, const struct vim_moref *vm,
                          struct vmop_err *err)
{
    struct vim_resp *r = NULL;
    struct vim_moref task;
    vmop_rc rc = vim_soap_call(c, method, vm, NULL, VIM_RET_REQUIRED, &r, err);
    if (rc != VMOP_OK)
        return rc;
    ck_assert_int_eq(vim_xml_moref(vim_xml_child(r->response, "returnval"), &task), VMOP_OK);
    ck_assert_str_eq(task.type, "Task");
    vim_resp_free(r);
    return vim_task_wait(c, &task, 20000, NULL, err);
}

static char *vm_name(struct vim_client *c, const struct vim_moref *vm, struct vmop_err *err)
{
    static const char *const paths[] = {"name", NULL};
    struct vim_objects o = {0};
    char *name = NULL;
    if (vim_retrieve(c, vm, "VirtualMachine", paths, 0, &o, err) != VMOP_OK)
        return NULL;
    if (o.n == 1)
        name = vim_xml_text(vim_object_prop(&o.items[0], "name"));
    vim_objects_free(&o);
    return name;
}

/* ---- plain simulator ------------------------------------------------------------------------ */

START_TEST(login_ok)
{
    struct vim_client *c = simfx_client(NULL);
    struct vmop_err err = {0};
    struct vim_stats st;

    ck_assert_int_eq(vim_login(c, &err), VMOP_OK);
    ck_assert_str_eq(vim_about_api_version(c), "6.5");
    ck_assert_ptr_nonnull(strstr(vim_about_full_name(c), "vCenter"));
    ck_assert_ptr_nonnull(vim_about_instance_uuid(c));
    ck_assert_int_eq(vim_login(c, &err), VMOP_OK); /* already in: no second login */
    vim_client_stats(c, &st);
    ck_assert_int_eq(st.logins, 1);
    ck_assert_int_eq(st.relogins, 0);
    ck_assert_int_eq(st.soap_calls, 2); /* RetrieveServiceContent + Login */

    /* logout, then a call logs in again on demand (not counted as a re-login) */
    ck_assert_int_eq(vim_logout(c, &err), VMOP_OK);
    struct vim_moref vm = find_path(c, "/DC0/vm/DC0_C0_RP0_VM0");
    ck_assert_str_eq(vm.type, "VirtualMachine");
    vim_client_stats(c, &st);
    ck_assert_int_eq(st.logins, 2);
    ck_assert_int_eq(st.relogins, 0);
    vim_client_free(c);
}
END_TEST

START_TEST(wrong_password)
{
    struct vim_config cfg = {.password = "not-the-Password"};
    struct vim_client *c = simfx_client(&cfg);
    struct vmop_err err = {0};
    struct vim_stats st;
    long long t0 = vmop_test_now_ms();

    ck_assert_int_eq(vim_login(c, &err), VMOP_E_AUTH);
    ck_assert_str_eq(err.fault, "InvalidLogin");
    ck_assert_ptr_nonnull(strstr(err.msg, "refused the login of user 'admin'"));
    ck_assert_ptr_null(strstr(err.msg, "not-the-Password"));
    vim_client_stats(c, &st);
    ck_assert_int_eq(st.logins, 0);
    ck_assert_int_eq(st.soap_calls, 2); /* RetrieveServiceContent + one Login: no retry loop */

    /* A normal call tries exactly one login too, and fails the same way. */
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_soap_call(c, "CurrentTime",
                                   &(struct vim_moref){"ServiceInstance", "ServiceInstance"}, NULL,
                                   VIM_RET_REQUIRED, NULL, &err),
                     VMOP_E_AUTH);
    vim_client_stats(c, &st);
    ck_assert_int_eq(st.soap_calls, 3);
    ck_assert_int_lt(vmop_test_now_ms() - t0, 5000);
    vim_client_free(c);

    /* the right password with characters that need escaping works */
    c = simfx_client(NULL);
    vmop_err_clear(&err);
    ck_assert_msg(vim_login(c, &err) == VMOP_OK, "%s", err.msg);
    vim_client_free(c);
}
END_TEST

START_TEST(faults_from_calls)
{
    struct vim_client *c = simfx_client(NULL);
    struct vmop_err err = {0};
    struct vim_moref vm = find_path(c, "/DC0/vm/DC0_C0_RP0_VM0"), bad;

    /* a vim25 method the simulator's VirtualMachine does not implement */
    ck_assert_int_eq(vim_soap_call(c, "MountToolsInstaller", &vm, NULL, VIM_RET_NONE, NULL, &err),
                     VMOP_E_FAULT);
    ck_assert_str_eq(err.fault, "MethodNotFound");
    ck_assert_int_eq(err.http_status, 500);
    ck_assert_ptr_nonnull(strstr(err.msg, "MountToolsInstaller: MethodNotFound"));

    /* a missing object read alone is NOT_FOUND, with the fault kept */
    vmop_err_clear(&err);
    vim_moref_set(&bad, "VirtualMachine", "vm-9999");
    ck_assert_ptr_null(vm_name(c, &bad, &err));
    ck_assert_int_eq(err.rc, VMOP_E_NOT_FOUND);
    ck_assert_str_eq(err.fault, "ManagedObjectNotFound");

    /* a property that does not exist: missingSet InvalidProperty is a fault for one object */
    static const char *const paths[] = {"name", "no.such.property", NULL};
    struct vim_objects o = {0};
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_retrieve(c, &vm, NULL, paths, 0, &o, &err), VMOP_E_FAULT);
    ck_assert_str_eq(err.fault, "InvalidProperty");
    ck_assert_ptr_nonnull(strstr(err.msg, "no.such.property"));

    /* a task error: powering on a VM that is on */
    vmop_err_clear(&err);
    ck_assert_int_eq(power_task(c, "PowerOnVM_Task", &vm, &err), VMOP_E_FAULT);
    ck_assert_str_eq(err.fault, "InvalidPowerState");
    ck_assert_ptr_nonnull(strstr(err.msg, "existingState=poweredOn"));
    ck_assert_ptr_nonnull(strstr(err.msg, "(PowerOn)"));
    vim_client_free(c);
}
END_TEST

START_TEST(retrieve_via_view)
{
    static const char *const paths[] = {"name", "runtime.powerState", NULL};
    struct vim_client *c = simfx_client(NULL);
    struct vmop_err err = {0};
    struct vim_moref dc = find_path(c, "/DC0"), view, empty_folder;
    struct vim_objects o = {0};
    int seen = 0;

    ck_assert_int_eq(vim_view_create(c, &dc, "VirtualMachine", &view, &err), VMOP_OK);
    ck_assert_str_eq(view.type, "ContainerView");
    ck_assert_int_eq(vim_retrieve(c, &view, "VirtualMachine", paths, 1, &o, &err), VMOP_OK);
    ck_assert_int_ge(o.n, 4);
    for (size_t i = 0; i < o.n; i++) {
        ck_assert_str_eq(o.items[i].ref.type, "VirtualMachine");
        char *name = vim_xml_text(vim_object_prop(&o.items[i], "name"));
        ck_assert_ptr_nonnull(name);
        if (strcmp(name, "DC0_C0_RP0_VM0") == 0) {
            char *ps = vim_xml_text(vim_object_prop(&o.items[i], "runtime.powerState"));
            ck_assert_str_eq(ps, "poweredOn");
            free(ps);
            seen = 1;
        }
        free(name);
    }
    ck_assert(seen);
    ck_assert_ptr_null(vim_object_prop(&o.items[0], "not.asked"));
    vim_objects_free(&o);
    ck_assert_int_eq(vim_view_destroy(c, &view, &err), VMOP_OK);

    /* all properties, in one step (view made and destroyed inside) */
    ck_assert_int_eq(vim_retrieve_in(c, &dc, "Datastore", NULL, &o, &err), VMOP_OK);
    ck_assert_int_ge(o.n, 1);
    ck_assert_ptr_nonnull(vim_object_prop(&o.items[0], "summary"));
    vim_objects_free(&o);

    /* an empty container: vcsim answers <returnval></returnval>; no objects, no error */
    empty_folder = find_path(c, "/DC0/datastore");
    ck_assert_int_eq(vim_retrieve_in(c, &empty_folder, "VirtualMachine", paths, &o, &err), VMOP_OK);
    ck_assert_int_eq(o.n, 0);
    vim_objects_free(&o);
    vim_client_free(c);
}
END_TEST

struct cancel_arg {
    struct vim_watch *w;
    vmop_rc rc;
    int started;
    long long elapsed;
};

static void *blocked_wait(void *p)
{
    struct cancel_arg *a = p;
    struct vim_update_batch b = {0};
    struct vmop_err err = {0};
    long long t0 = vmop_test_now_ms();
    __atomic_store_n(&a->started, 1, __ATOMIC_RELEASE);
    a->rc = vim_watch_next(a->w, 30, &b, &err);
    a->elapsed = vmop_test_now_ms() - t0;
    vim_update_batch_free(&b);
    return NULL;
}

static const struct vim_update *find_update(const struct vim_update_batch *b, const char *vm,
                                            const char *path, const char **ret_val)
{
    for (size_t i = 0; i < b->n; i++) {
        if (strcmp(b->items[i].ref.value, vm) != 0)
            continue;
        for (size_t j = 0; j < b->items[i].n; j++)
            if (strcmp(b->items[i].paths[j], path) == 0) {
                *ret_val = b->items[i].values[j];
                return &b->items[i];
            }
    }
    return NULL;
}

START_TEST(watch_power_change_and_cancel)
{
    static const char *const props[] = {"runtime.powerState", "name", NULL};
    struct vim_client *c = simfx_client(NULL);
    struct vmop_err err = {0};
    struct vim_moref folder = find_path(c, "/DC0/vm");
    struct vim_moref vm = find_path(c, "/DC0/vm/DC0_C0_RP0_VM1");
    struct vim_watch *w = NULL;
    struct vim_update_batch b = {0};
    const struct vim_update *u;
    const char *val = NULL;

    ck_assert_msg(vim_watch_new(c, &folder, props, &w, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_int_eq(vim_watch_next(w, 5, &b, &err), VMOP_OK);
    ck_assert_int_ge(b.n, 4);
    u = find_update(&b, vm.value, "runtime.powerState", &val);
    ck_assert_ptr_nonnull(u);
    ck_assert_int_eq(u->kind, VIM_UPDATE_ENTER);
    ck_assert_str_eq(val, "poweredOn");
    ck_assert_ptr_nonnull(find_update(&b, vm.value, "name", &val));
    ck_assert_str_eq(val, "DC0_C0_RP0_VM1");
    vim_update_batch_free(&b);

    /* nothing changed: an empty batch after the (short) wait */
    ck_assert_int_eq(vim_watch_next(w, 0, &b, &err), VMOP_OK);
    ck_assert_int_eq(b.n, 0);

    ck_assert_msg(power_task(c, "PowerOffVM_Task", &vm, &err) == VMOP_OK, "%s", err.msg);
    long long deadline = vmop_test_now_ms() + 20000;
    u = NULL;
    while (!u && vmop_test_now_ms() < deadline) {
        vim_update_batch_free(&b);
        ck_assert_int_eq(vim_watch_next(w, 2, &b, &err), VMOP_OK);
        u = find_update(&b, vm.value, "runtime.powerState", &val);
    }
    ck_assert_msg(u != NULL, "no power change seen within 20 s");
    ck_assert_int_eq(u->kind, VIM_UPDATE_MODIFY);
    ck_assert_str_eq(val, "poweredOff");
    vim_update_batch_free(&b);
    ck_assert_msg(power_task(c, "PowerOnVM_Task", &vm, &err) == VMOP_OK, "%s", err.msg);
    /* drain the power-on so the next wait really blocks */
    deadline = vmop_test_now_ms() + 20000;
    u = NULL;
    while (!u && vmop_test_now_ms() < deadline) {
        vim_update_batch_free(&b);
        ck_assert_int_eq(vim_watch_next(w, 2, &b, &err), VMOP_OK);
        u = find_update(&b, vm.value, "runtime.powerState", &val);
    }
    ck_assert_ptr_nonnull(u);
    ck_assert_str_eq(val, "poweredOn");
    vim_update_batch_free(&b);

    /* cancel from another thread ends a 30 s wait at once */
    struct cancel_arg a = {.w = w};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, blocked_wait, &a), 0);
    while (!__atomic_load_n(&a.started, __ATOMIC_ACQUIRE))
        vmop_test_sleep_ms(10);
    vim_watch_cancel(w);
    pthread_join(th, NULL);
    ck_assert_int_eq(a.rc, VMOP_E_CANCELED);
    ck_assert_int_lt(a.elapsed, 5000);

    /* the watch still works after a cancel */
    ck_assert_int_eq(vim_watch_next(w, 0, &b, &err), VMOP_OK);
    vim_update_batch_free(&b);
    vim_watch_free(w);
    vim_client_free(c);
}
END_TEST

START_TEST(task_result)
{
    struct vim_client *c = simfx_client(NULL);
    struct vmop_err err = {0};
    struct vim_moref vm = find_path(c, "/DC0/vm/DC0_H0_VM0"), folder = find_path(c, "/DC0/vm");
    struct vim_moref task, result, bogus;
    struct vim_resp *r = NULL;
    struct vbuf b;

    /* CloneVM_Task: the result is the new VM */
    vbuf_init(&b, 4096);
    vim_xml_add_moref(&b, "folder", &folder);
    vbuf_add_xml_elem(&b, "name", "core-clone & <1>");
    vbuf_adds(&b, "<spec><location></location><template>false</template></spec>");
    ck_assert_int_eq(
        vim_soap_call(c, "CloneVM_Task", &vm, vbuf_str(&b), VIM_RET_REQUIRED, &r, &err), VMOP_OK);
    ck_assert_int_eq(vim_xml_moref(vim_xml_child(r->response, "returnval"), &task), VMOP_OK);
    vim_resp_free(r);
    vbuf_free(&b);
    ck_assert_msg(vim_task_wait(c, &task, 0, &result, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_str_eq(result.type, "VirtualMachine");
    char *name = vm_name(c, &result, &err);
    ck_assert_str_eq(name, "core-clone & <1>");
    free(name);

    /* destroy it (powered off clone): a task without a result */
    r = NULL;
    ck_assert_int_eq(vim_soap_call(c, "Destroy_Task", &result, NULL, VIM_RET_REQUIRED, &r, &err),
                     VMOP_OK);
    ck_assert_int_eq(vim_xml_moref(vim_xml_child(r->response, "returnval"), &task), VMOP_OK);
    vim_resp_free(r);
    memset(&result, 'x', sizeof(result));
    ck_assert_int_eq(vim_task_wait(c, &task, 0, &result, &err), VMOP_OK);
    ck_assert(!vim_moref_is_set(&result));

    /* a task that does not exist */
    vim_moref_set(&bogus, "Task", "task-999999");
    ck_assert_int_eq(vim_task_wait(c, &bogus, 0, NULL, &err), VMOP_E_NOT_FOUND);
    vim_client_free(c);
}
END_TEST

/* ---- session expiry ------------------------------------------------------------------------- */

START_TEST(relogin_on_fault)
{
    struct vim_client *c = simfx_client(NULL);
    struct vmop_err err = {0};
    struct vim_stats st;
    struct vim_moref dc = find_path(c, "/DC0"), view;

    vmop_test_sleep_ms(EXPIRE_WAIT_MS); /* deliberate idleness: the session must expire */
    /* CreateContainerView gets NotAuthenticated, re-logs in, and is retried transparently */
    ck_assert_msg(vim_view_create(c, &dc, "VirtualMachine", &view, &err) == VMOP_OK, "%s", err.msg);
    vim_client_stats(c, &st);
    ck_assert_int_eq(st.relogins, 1);
    ck_assert_int_eq(st.logins, 2);
    ck_assert_int_eq(vim_view_destroy(c, &view, &err), VMOP_OK);
    vim_client_free(c);
}
END_TEST

START_TEST(relogin_on_missing_set)
{
    struct vim_client *c = simfx_client(NULL);
    struct vmop_err err = {0};
    struct vim_stats st;
    struct vim_moref vm = find_path(c, "/DC0/vm/DC0_C0_RP0_VM0");
    uint64_t calls;

    vim_client_stats(c, &st);
    calls = st.soap_calls;
    vmop_test_sleep_ms(EXPIRE_WAIT_MS);
    /* vcsim answers RetrievePropertiesEx without a session with HTTP 200 and missingSet
     * NotAuthenticated: that too means "log in again" */
    char *name = vm_name(c, &vm, &err);
    ck_assert_msg(name != NULL, "%s", err.msg);
    ck_assert_str_eq(name, "DC0_C0_RP0_VM0");
    free(name);
    vim_client_stats(c, &st);
    ck_assert_int_eq(st.relogins, 1);
    ck_assert_int_eq(st.soap_calls - calls, 3); /* Retrieve (missingSet), Login, Retrieve */
    vim_client_free(c);
}
END_TEST

struct thread_arg {
    struct vim_client *c;
    struct vim_moref vm;
    pthread_barrier_t *barrier;
    int ok;
};

static void *reader(void *p)
{
    struct thread_arg *a = p;
    struct vmop_err err = {0};
    pthread_barrier_wait(a->barrier);
    for (int i = 0; i < 5; i++) {
        char *name = vm_name(a->c, &a->vm, &err);
        if (!name || strcmp(name, "DC0_C0_RP0_VM0") != 0) {
            free(name);
            return NULL;
        }
        free(name);
    }
    a->ok = 1;
    return NULL;
}

START_TEST(concurrent_relogin_once)
{
    struct vim_config cfg = {.max_connections = 4};
    struct vim_client *c = simfx_client(&cfg);
    struct vim_moref vm = find_path(c, "/DC0/vm/DC0_C0_RP0_VM0");
    struct thread_arg args[4];
    pthread_t th[4];
    pthread_barrier_t barrier;
    struct vim_stats st;

    vmop_test_sleep_ms(EXPIRE_WAIT_MS);
    pthread_barrier_init(&barrier, NULL, 4);
    for (int i = 0; i < 4; i++) {
        args[i] = (struct thread_arg){.c = c, .vm = vm, .barrier = &barrier};
        ck_assert_int_eq(pthread_create(&th[i], NULL, reader, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&barrier);
    for (int i = 0; i < 4; i++)
        ck_assert_msg(args[i].ok, "thread %d failed", i);
    vim_client_stats(c, &st);
    ck_assert_int_eq(st.relogins, 1);
    ck_assert_int_eq(st.logins, 2);
    vim_client_free(c);
}
END_TEST

START_TEST(watch_survives_expiry)
{
    static const char *const props[] = {"runtime.powerState", NULL};
    struct vim_client *c = simfx_client(NULL);
    struct vmop_err err = {0};
    struct vim_moref folder = find_path(c, "/DC0/vm");
    struct vim_watch *w = NULL;
    struct vim_update_batch b = {0};
    size_t n_first;
    struct vim_stats st;

    ck_assert_int_eq(vim_watch_new(c, &folder, props, &w, &err), VMOP_OK);
    ck_assert_int_eq(vim_watch_next(w, 0, &b, &err), VMOP_OK);
    n_first = b.n;
    ck_assert_int_ge(n_first, 4);
    vim_update_batch_free(&b);
    vmop_test_sleep_ms(EXPIRE_WAIT_MS);
    /* the collector died with the session: it is rebuilt and the full state comes again */
    ck_assert_msg(vim_watch_next(w, 0, &b, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_int_eq(b.n, n_first);
    for (size_t i = 0; i < b.n; i++)
        ck_assert_int_eq(b.items[i].kind, VIM_UPDATE_ENTER);
    vim_update_batch_free(&b);
    vim_client_stats(c, &st);
    ck_assert_int_eq(st.relogins, 1);
    vim_watch_free(w);
    vim_client_free(c);
}
END_TEST

/* ---- TLS ------------------------------------------------------------------------------------ */

static vmop_rc tls_login(const char *thumbprint, int insecure, struct vmop_err *err)
{
    struct vim_config cfg = {.thumbprint = thumbprint, .insecure = insecure};
    struct vim_client *c = simfx_client(&cfg);
    vmop_rc rc = vim_login(c, err);
    vim_client_free(c);
    return rc;
}

START_TEST(tls_pinning)
{
    struct vmop_err err = {0};
    char wrong[128];

    ck_assert(simfx_sim->tls);
    ck_assert_ptr_nonnull(strstr(simfx_sim->url, "https://"));
    ck_assert_int_gt(strlen(simfx_sim->thumbprint_sha1), 0);
    ck_assert_msg(tls_login(simfx_sim->thumbprint_sha1, 0, &err) == VMOP_OK, "sha1: %s", err.msg);
    ck_assert_msg(tls_login(simfx_sim->thumbprint_sha256, 0, &err) == VMOP_OK, "sha256: %s",
                  err.msg);

    /* one bit off */
    snprintf(wrong, sizeof(wrong), "%s", simfx_sim->thumbprint_sha256);
    wrong[0] = wrong[0] == '0' ? '1' : '0';
    ck_assert_int_eq(tls_login(wrong, 0, &err), VMOP_E_TLS);
    vmop_err_clear(&err);
    snprintf(wrong, sizeof(wrong), "%s", simfx_sim->thumbprint_sha1);
    wrong[strlen(wrong) - 1] = wrong[strlen(wrong) - 1] == 'A' ? 'B' : 'A';
    ck_assert_int_eq(tls_login(wrong, 0, &err), VMOP_E_TLS);

    /* default: CA verification; the simulator's certificate is not trusted */
    vmop_err_clear(&err);
    ck_assert_int_eq(tls_login(NULL, 0, &err), VMOP_E_TLS);
    ck_assert_int_gt(strlen(err.msg), 0);

    /* insecure only when asked */
    vmop_err_clear(&err);
    ck_assert_msg(tls_login(NULL, 1, &err) == VMOP_OK, "insecure: %s", err.msg);
}
END_TEST

/* ---- timeouts ------------------------------------------------------------------------------- */

START_TEST(call_timeout)
{
    struct vim_config cfg = {.timeout_ms = 1000};
    struct vim_client *c = simfx_client(&cfg);
    struct vmop_err err = {0};
    struct vim_moref folder;
    long long t0;

    vim_moref_set(&folder, "Folder", "group-d1");
    ck_assert_int_eq(vim_login(c, &err), VMOP_OK); /* Login has no delay */
    t0 = vmop_test_now_ms();
    struct vim_objects o = {0};
    ck_assert_int_eq(vim_retrieve(c, &folder, NULL, NULL, 0, &o, &err), VMOP_E_TIMEOUT);
    ck_assert_int_lt(vmop_test_now_ms() - t0, 2500);
    ck_assert_int_ge(vmop_test_now_ms() - t0, 900);
    /* the client stays usable after a timeout */
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_login(c, &err), VMOP_OK);
    vim_client_free(c);

    /* nothing listening: a transport error, quickly */
    struct vim_config dead = {.url = "http://127.0.0.1:1", .timeout_ms = 2000};
    c = simfx_client(&dead);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_login(c, &err), VMOP_E_TRANSPORT);
    ck_assert_ptr_nonnull(strstr(err.msg, "127.0.0.1:1"));
    vim_client_free(c);
}
END_TEST

static Suite *core_sim_suite(void)
{
    /* The option structs are read when each TCase starts: static. */
    static const struct vcsim_opts plain = {
        .no_seed = 1, .username = "admin", .password = "Secr3t&<pw>"};
    static const struct vcsim_opts expiry = {
        .no_seed = 1, .no_guest_ip = 1, .session_idle_timeout_ms = SESSION_IDLE_MS};
    static const struct vcsim_opts tls = {.no_seed = 1, .no_guest_ip = 1, .tls = 1};
    static const struct vcsim_opts delay = {
        .no_seed = 1, .no_guest_ip = 1, .method_delays = "RetrievePropertiesEx=3000"};
    Suite *s = suite_create("vim_core_sim");
    TCase *tc = simfx_tcase(s, "plain", &plain, 90);
    tcase_add_test(tc, login_ok);
    tcase_add_test(tc, wrong_password);
    tcase_add_test(tc, faults_from_calls);
    tcase_add_test(tc, retrieve_via_view);
    tcase_add_test(tc, watch_power_change_and_cancel);
    tcase_add_test(tc, task_result);

    tc = simfx_tcase(s, "expiry", &expiry, 90);
    tcase_add_test(tc, relogin_on_fault);
    tcase_add_test(tc, relogin_on_missing_set);
    tcase_add_test(tc, concurrent_relogin_once);
    tcase_add_test(tc, watch_survives_expiry);

    tc = simfx_tcase(s, "tls", &tls, 90);
    tcase_add_test(tc, tls_pinning);

    tc = simfx_tcase(s, "timeout", &delay, 90);
    tcase_add_test(tc, call_timeout);
    return s;
}

int main(void)
{

    curl_global_init(CURL_GLOBAL_DEFAULT);
    int status = vmop_check_run(core_sim_suite());
    curl_global_cleanup();
    return status;
}
