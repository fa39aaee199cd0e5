/* harness.c: start/stop kube-testapi for C tests (see harness.h): its arguments, temp dir and ready
 * line; the child process itself is tests/common/proc.h. */
#include "harness.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "vbuf.h"

#define READY_MAX        (16 << 10)
#define START_TIMEOUT_MS 15000
#define STOP_TIMEOUT_MS  10000
#define MAX_ARGS         64

static char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void remove_dir(const char *dir)
{
    static const char *const files[] = {"kubeconfig", "kubeconfig.ca.crt", "apiserver.log", NULL};
    size_t i;
    for (i = 0; files[i]; i++) {
        char *p = path_join(dir, files[i]);
        if (p)
            unlink(p);
        free(p);
    }
    rmdir(dir);
}

static void free_server(struct apiserver *a)
{
    if (!a)
        return;
    free(a->url);
    if (a->token)
        explicit_bzero(a->token, strlen(a->token));
    free(a->token);
    free(a->ca_file);
    free(a->dir);
    free(a->kubeconfig);
    free(a->log);
    free(a);
}

static char *dup_json_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return strdup(cJSON_IsString(v) ? v->valuestring : "");
}

vmop_rc apiserver_start(const struct apiserver_opts *opts, struct apiserver **ret,
                        struct vmop_err *err)
{
    static const struct apiserver_opts defaults;
    const struct apiserver_opts *o = opts ? opts : &defaults;
    const char *bin = o->binary ? o->binary : getenv("VMOP_TESTAPI");
    const char *tmp = getenv("TMPDIR");
    char *argv[MAX_ARGS], window[32], dirbuf[4096];
    struct apiserver *a = NULL;
    struct vbuf line;
    int outfd = -1, argc = 0, reaped = 0;
    pid_t pid = -1;
    cJSON *ready = NULL;
    const cJSON *port;
    vmop_rc rc = VMOP_OK;
    size_t i;

    vbuf_init(&line, READY_MAX);
    if (!ret)
        return vmop_fail(err, VMOP_E_INVALID, "apiserver_start: ret is NULL");
    if (!bin || !*bin)
        return vmop_fail(err, VMOP_E_INVALID,
                         "no server: set VMOP_TESTAPI (meson: env : apiserver_env)");
    if (access(bin, X_OK) != 0)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "kube-testapi '%s' is not executable", bin);
    a = calloc(1, sizeof(*a));
    if (!a)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    a->pid = -1;
    snprintf(dirbuf, sizeof(dirbuf), "%s/vmop-testapi.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dirbuf)) {
        rc = vmop_fail(err, VMOP_E_INTERNAL, "mkdtemp: %s", strerror(errno));
        goto out;
    }
    a->dir = strdup(dirbuf);
    a->kubeconfig = path_join(dirbuf, "kubeconfig");
    a->log = path_join(dirbuf, "apiserver.log");
    if (!a->dir || !a->kubeconfig || !a->log) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    argv[argc++] = (char *)bin;
    argv[argc++] = "--listen";
    argv[argc++] = "127.0.0.1:0";
    argv[argc++] = "--die-with-parent";
    argv[argc++] = "--kubeconfig-out";
    argv[argc++] = a->kubeconfig;
    if (o->tls)
        argv[argc++] = "--tls";
    if (o->token) {
        argv[argc++] = "--token";
        argv[argc++] = (char *)o->token;
    }
    if (o->watch_window) {
        snprintf(window, sizeof(window), "%zu", o->watch_window);
        argv[argc++] = "--watch-window";
        argv[argc++] = window;
    }
    for (i = 0; o->faults && o->faults[i]; i++) {
        if (argc + 3 >= MAX_ARGS) {
            rc = vmop_fail(err, VMOP_E_INVALID, "too many fault specs");
            goto out;
        }
        argv[argc++] = "--fault";
        argv[argc++] = (char *)o->faults[i];
    }
    argv[argc] = NULL;

    rc = vmop_proc_spawn(bin, argv, a->log, &pid, &outfd, err);
    if (rc)
        goto out;
    rc = vmop_proc_read_line(outfd, pid, "kube-testapi",
                             o->start_timeout_ms ? o->start_timeout_ms : START_TIMEOUT_MS, &line,
                             &reaped, err);
    if (reaped)
        pid = -1;
    if (rc)
        goto out;
    ready = cJSON_Parse(vbuf_str(&line));
    port = cJSON_GetObjectItemCaseSensitive(ready, "port");
    if (!ready || !cJSON_IsNumber(port)) {
        rc = vmop_fail(err, VMOP_E_PROTO, "kube-testapi printed an unexpected ready line");
        goto out;
    }
    a->pid = pid;
    a->port = port->valueint;
    a->url = dup_json_str(ready, "url");
    a->token = dup_json_str(ready, "token");
    a->ca_file = dup_json_str(ready, "ca_file");
    if (!a->url || !a->token || !a->ca_file) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    *ret = a;
    a = NULL;
    pid = -1;
out:
    if (pid > 0)
        vmop_proc_kill(pid);
    if (a) {
        if (a->dir)
            remove_dir(a->dir);
        free_server(a);
    }
    cJSON_Delete(ready);
    if (outfd >= 0)
        close(outfd);
    vbuf_free_secure(&line);
    return rc;
}

vmop_rc apiserver_stop(struct apiserver *a, struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;
    if (!a)
        return VMOP_OK;
    if (a->pid > 0)
        rc = vmop_proc_stop(a->pid, "kube-testapi", STOP_TIMEOUT_MS, err);
    if (a->dir && !getenv("VMOP_TESTAPI_KEEP"))
        remove_dir(a->dir);
    free_server(a);
    return rc;
}
