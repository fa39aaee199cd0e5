/* test_vimc.c: smoke test of the `vimc` command-line tool against the simulator: about, ls,
 * find, lib ls / items / deploy (OVF with a network mapping), vm info / power / destroy, usage
 * errors (exit 2), a wrong password (exit 1, a clear message that never shows the password), and
 * guestinfo.* values never printed by `vm info`.
 * vimc's path comes from $VMOP_VIMC; the simulator from tests/common/sim_fixture.h. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "clock.h"
#include "vbuf.h"
#include "sim_fixture.h"
#include "vimclient.h"

#define RUN_TIMEOUT_MS 60000

struct run {
    int status; /* exit code, or -1 when killed */
    struct vbuf out, err;
};

/* Runs vimc with argv (NULL-terminated, without argv[0]) and the connection environment for the
 * simulator, the password replaced by `password` when it is not NULL. Output is captured; bounded
 * in time. */
static void run_vimc(struct run *r, const char *password, const char *const *args)
{
    const char *vimc = getenv("VMOP_VIMC");
    int out[2], errp[2];
    const char *argv[32];
    long long deadline = vmop_test_now_ms() + RUN_TIMEOUT_MS;
    pid_t pid;
    size_t n = 0;
    int wst, open_fds = 2;

    ck_assert_msg(vimc != NULL, "VMOP_VIMC is not set");
    argv[n++] = vimc;
    for (size_t i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    vbuf_init(&r->out, 1 << 20);
    vbuf_init(&r->err, 1 << 20);
    ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(errp, O_CLOEXEC), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        dup2(out[1], 1);
        dup2(errp[1], 2);
        setenv("VIMC_URL", simfx_sim->url, 1);
        setenv("VIMC_USERNAME", simfx_sim->username, 1);
        setenv("VIMC_PASSWORD", password ? password : simfx_sim->password, 1);
        unsetenv("VIMC_THUMBPRINT");
        unsetenv("VIMC_CA_FILE");
        unsetenv("VIMC_INSECURE");
        execv(vimc, (char *const *)argv);
        _exit(127);
    }
    close(out[1]);
    close(errp[1]);
    while (open_fds > 0) {
        struct pollfd p[2] = {{.fd = out[0], .events = POLLIN}, {.fd = errp[0], .events = POLLIN}};
        long long left = deadline - vmop_test_now_ms();
        if (left <= 0)
            break;
        if (poll(p, 2, (int)left) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            char buf[4096];
            ssize_t k;
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            k = read(p[i].fd, buf, sizeof(buf));
            if (k > 0) {
                vbuf_add(i ? &r->err : &r->out, buf, (size_t)k);
            } else if (k == 0 || errno != EINTR) {
                close(p[i].fd);
                if (i)
                    errp[0] = -1;
                else
                    out[0] = -1;
                open_fds--;
            }
        }
    }
    if (out[0] >= 0)
        close(out[0]);
    if (errp[0] >= 0)
        close(errp[0]);
    if (open_fds > 0)
        kill(pid, SIGKILL);
    ck_assert_int_eq(waitpid(pid, &wst, 0), pid);
    r->status = WIFEXITED(wst) ? WEXITSTATUS(wst) : -1;
}

static void run_free(struct run *r)
{
    vbuf_free(&r->out);
    vbuf_free(&r->err);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void expect_ok(struct run *r, const char *what)
{
    ck_assert_msg(r->status == 0, "%s: exit %d, stderr: %s", what, r->status, vbuf_str(&r->err));
}

START_TEST(about)
{
    struct run r;
    run_vimc(&r, NULL, ARGS("about"));
    expect_ok(&r, "about");
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), "VMware vCenter Server"));
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), "API version:"));
    run_free(&r);

    run_vimc(&r, NULL, ARGS("--json", "about"));
    expect_ok(&r, "--json about");
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), "\"apiVersion\""));
    run_free(&r);
}
END_TEST

START_TEST(ls_vms_and_find)
{
    struct run r;
    char path[512];

    run_vimc(&r, NULL, ARGS("ls", "VirtualMachine"));
    expect_ok(&r, "ls VirtualMachine");
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), "VirtualMachine:vm-"));
    run_free(&r);

    run_vimc(&r, NULL, ARGS("ls", "pool"));
    expect_ok(&r, "ls pool");
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), "ResourcePool:"));
    run_free(&r);

    run_vimc(&r, NULL, ARGS("ls", "ds", simfx_sim->datacenter));
    expect_ok(&r, "ls ds DC");
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), "Datastore:"));
    run_free(&r);

    run_vimc(&r, NULL, ARGS("find", simfx_sim->resource_pool));
    expect_ok(&r, "find");
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), "ResourcePool:"));
    run_free(&r);

    snprintf(path, sizeof(path), "%s/no-such-vm", simfx_sim->folder);
    run_vimc(&r, NULL, ARGS("find", path));
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.err), "vimc: "));
    run_free(&r);
}
END_TEST

START_TEST(lib_ls_and_items)
{
    struct run r;

    ck_assert_uint_ge(simfx_sim->n_libraries, 1);
    run_vimc(&r, NULL, ARGS("lib", "ls"));
    expect_ok(&r, "lib ls");
    for (size_t i = 0; i < simfx_sim->n_libraries; i++) {
        ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), simfx_sim->libraries[i].name));
        ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), simfx_sim->libraries[i].id));
    }
    run_free(&r);

    run_vimc(&r, NULL, ARGS("lib", "items", simfx_sim->libraries[0].name));
    expect_ok(&r, "lib items");
    for (size_t i = 0; i < simfx_sim->libraries[0].n_items; i++) {
        ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), simfx_sim->libraries[0].items[i].name));
        ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), simfx_sim->libraries[0].items[i].type));
    }
    run_free(&r);

    run_vimc(&r, NULL, ARGS("lib", "items", "no-such-library"));
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.err), "no-such-library"));
    run_free(&r);
}
END_TEST

#define USERDATA "I2Nsb3VkLWNvbmZpZwpwYXNzd29yZDogc2VjcmV0"

/* Sets a guestinfo.* key (user data: vimc must not show its value) and a plain key. */
static void set_extra_config(const char *vmpath)
{
    struct vim_client *c = simfx_client(NULL);
    struct vim_config_spec *spec = NULL;
    struct vim_moref vm = simfx_find(c, vmpath, "VirtualMachine");
    struct vmop_err err = {0};

    ck_assert_int_eq(vim_config_spec_new(&spec), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(spec, "guestinfo.userdata", USERDATA), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(spec, "vmop.test", "visible"), VMOP_OK);
    ck_assert_msg(vim_vm_reconfigure(c, &vm, spec, &err) == VMOP_OK, "%s", err.msg);
    vim_config_spec_free(spec);
    vim_client_free(c);
}

START_TEST(deploy_info_power_destroy)
{
    const struct vcsim_library *lib = NULL;
    const struct vcsim_item *ovf = simfx_item(simfx_sim, "vmop-tiny-ovf", &lib);
    char item[256], net[512], vmpath[512];
    struct run r;

    ck_assert_uint_ge(simfx_sim->n_portgroups, 1);
    snprintf(item, sizeof(item), "%s/%s", lib->name, ovf->name);
    snprintf(net, sizeof(net), "nic0=%s", simfx_sim->portgroups[0]);
    snprintf(vmpath, sizeof(vmpath), "%s/vimc-ovf-1", simfx_sim->folder);

    run_vimc(&r, NULL,
             ARGS("lib", "deploy", item, "vimc-ovf-1", "--pool", simfx_sim->resource_pool,
                  "--folder", simfx_sim->folder, "--datastore", simfx_sim->datastore, "--network",
                  net));
    expect_ok(&r, "lib deploy");
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), "VirtualMachine:vm-"));
    run_free(&r);

    set_extra_config(vmpath);
    run_vimc(&r, NULL, ARGS("vm", "info", vmpath));
    expect_ok(&r, "vm info");
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), "vimc-ovf-1"));
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), "poweredOff"));
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), "dvpg="));
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), "vmop.test = visible"));
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), "guestinfo.userdata = (elided)"));
    ck_assert_ptr_null(strstr(vbuf_str(&r.out), USERDATA));
    run_free(&r);

    run_vimc(&r, NULL, ARGS("vm", "power", "on", vmpath));
    expect_ok(&r, "vm power on");
    run_free(&r);
    run_vimc(&r, NULL, ARGS("--json", "vm", "info", vmpath));
    expect_ok(&r, "vm info --json");
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), "\"poweredOn\""));
    run_free(&r);

    /* powered on: a plain destroy fails with a hint, --force powers off first */
    run_vimc(&r, NULL, ARGS("vm", "destroy", vmpath));
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.err), "--force"));
    run_free(&r);
    run_vimc(&r, NULL, ARGS("vm", "destroy", "--force", vmpath));
    expect_ok(&r, "vm destroy --force");
    run_free(&r);
    run_vimc(&r, NULL, ARGS("find", vmpath));
    ck_assert_int_eq(r.status, 1);
    run_free(&r);
}
END_TEST

START_TEST(usage_errors)
{
    struct run r;
    run_vimc(&r, NULL, ARGS("frobnicate"));
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.err), "unknown command"));
    run_free(&r);
    run_vimc(&r, NULL, ARGS("--password", "x", "about"));
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.err), "VIMC_PASSWORD"));
    run_free(&r);
    run_vimc(&r, NULL, ARGS("lib", "deploy", "x", "y"));
    ck_assert_int_eq(r.status, 2);
    run_free(&r);
    run_vimc(&r, NULL, ARGS("--help"));
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.out), "usage: vimc"));
    run_free(&r);
}
END_TEST

START_TEST(wrong_password)
{
    static const char bad[] = "Wr0ng-Secret-4711";
    const char *const cmds[][3] = {{"about", NULL, NULL}, {"lib", "ls", NULL}};
    for (size_t i = 0; i < 2; i++) {
        struct run r;
        run_vimc(&r, bad, cmds[i]);
        ck_assert_int_eq(r.status, 1);
        ck_assert_ptr_nonnull(strstr(vbuf_str(&r.err), "vimc: "));
        ck_assert_msg(strstr(vbuf_str(&r.err), "login") || strstr(vbuf_str(&r.err), "Login"),
                      "unclear message: %s", vbuf_str(&r.err));
        ck_assert_ptr_null(strstr(vbuf_str(&r.err), bad));
        ck_assert_ptr_null(strstr(vbuf_str(&r.out), bad));
        ck_assert_uint_eq(r.out.len, 0);
        run_free(&r);
    }
}
END_TEST

static Suite *suite(void)
{
    static const struct vcsim_opts opts = {.no_guest_ip = 1};
    Suite *s = suite_create("vimc");
    TCase *t = simfx_tcase(s, "cli", &opts, 240);
    tcase_add_test(t, about);
    tcase_add_test(t, ls_vms_and_find);
    tcase_add_test(t, lib_ls_and_items);
    tcase_add_test(t, deploy_info_power_destroy);
    tcase_add_test(t, usage_errors);
    tcase_add_test(t, wrong_password);
    return s;
}

int main(void)
{
    return vmop_check_run(suite());
}
