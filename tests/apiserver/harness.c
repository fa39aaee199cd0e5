/* harness.c: start/stop kube-testapi for C tests (see harness.h). */
#include "harness.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vbuf.h"

#define READY_MAX        (16 << 10)
#define START_TIMEOUT_MS 15000
#define STOP_TIMEOUT_MS  10000
#define MAX_ARGS         64

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reaps pid within timeout_ms. Returns 1 when reaped (or not our child), 0 when still running. */
static int reap(pid_t pid, int timeout_ms, int *ret_status)
{
    long long deadline = now_ms() + timeout_ms;
    for (;;) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            if (ret_status)
                *ret_status = st;
            return 1;
        }
        if (r < 0 && errno != EINTR)
            return 1;
        if (now_ms() >= deadline)
            return 0;
        poll(NULL, 0, 10);
    }
}

static void kill_and_reap(pid_t pid)
{
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

static vmop_rc read_ready_line(int fd, pid_t pid, unsigned timeout_ms, struct vbuf *line,
                               struct vmop_err *err)
{
    long long deadline = now_ms() + timeout_ms;
    char buf[4096];
    for (;;) {
        long long left = deadline - now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n;
        int r;
        if (left <= 0)
            return vmop_fail(err, VMOP_E_TIMEOUT,
                             "kube-testapi (pid %d) printed no ready line within %u ms", (int)pid,
                             timeout_ms);
        r = poll(&p, 1, left > 1000 ? 1000 : (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return vmop_fail(err, VMOP_E_INTERNAL, "poll: %s", strerror(errno));
        if (r == 0)
            continue;
        n = read(fd, buf, sizeof(buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return vmop_fail(err, VMOP_E_INTERNAL, "read: %s", strerror(errno));
        if (n == 0)
            return vmop_fail(err, VMOP_E_TRANSPORT,
                             "kube-testapi (pid %d) exited before its ready line; see its log",
                             (int)pid);
        vbuf_add(line, buf, (size_t)n);
        if (vbuf_error(line))
            return vmop_fail(err, vbuf_error(line), "kube-testapi ready line too long");
        if (memchr(buf, '\n', (size_t)n))
            return VMOP_OK;
    }
}

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
    int pfd[2] = {-1, -1}, logfd = -1, nullfd = -1, argc = 0;
    pid_t parent = getpid(), pid = -1;
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

    if (pipe2(pfd, O_CLOEXEC) != 0) {
        rc = vmop_fail(err, VMOP_E_INTERNAL, "pipe2: %s", strerror(errno));
        goto out;
    }
    nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    logfd = open(a->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (nullfd < 0 || logfd < 0) {
        rc = vmop_fail(err, VMOP_E_INTERNAL, "open: %s", strerror(errno));
        goto out;
    }
    pid = fork();
    if (pid < 0) {
        rc = vmop_fail(err, VMOP_E_INTERNAL, "fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        /* child: async-signal-safe calls only */
        sigset_t none;
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigaction(SIGTERM, &dfl, NULL);
        sigaction(SIGINT, &dfl, NULL);
        sigaction(SIGPIPE, &dfl, NULL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
            _exit(126);
        if (dup2(pfd[1], STDOUT_FILENO) < 0 || dup2(nullfd, STDIN_FILENO) < 0 ||
            dup2(logfd, STDERR_FILENO) < 0)
            _exit(126);
        execv(bin, argv);
        _exit(127);
    }
    close(pfd[1]);
    pfd[1] = -1;
    rc = read_ready_line(pfd[0], pid, o->start_timeout_ms ? o->start_timeout_ms : START_TIMEOUT_MS,
                         &line, err);
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
        kill_and_reap(pid);
    if (a) {
        if (a->dir)
            remove_dir(a->dir);
        free_server(a);
    }
    cJSON_Delete(ready);
    if (pfd[0] >= 0)
        close(pfd[0]);
    if (pfd[1] >= 0)
        close(pfd[1]);
    if (logfd >= 0)
        close(logfd);
    if (nullfd >= 0)
        close(nullfd);
    vbuf_free_secure(&line);
    return rc;
}

vmop_rc apiserver_stop(struct apiserver *a, struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;
    if (!a)
        return VMOP_OK;
    if (a->pid > 0) {
        kill(a->pid, SIGTERM);
        if (!reap(a->pid, STOP_TIMEOUT_MS, NULL)) {
            kill_and_reap(a->pid);
            rc = vmop_fail(err, VMOP_E_TIMEOUT, "kube-testapi (pid %d) ignored SIGTERM; killed",
                           (int)a->pid);
        }
    }
    if (a->dir && !getenv("VMOP_TESTAPI_KEEP"))
        remove_dir(a->dir);
    free_server(a);
    return rc;
}
