/* cluster_harness.c: a real control plane for C tests (see cluster_harness.h): the temp dir, the
 * bounded runs of cluster.sh and kubectl, the fault proxy's ready line and control API (libcurl),
 * etcd compaction through etcd's JSON gateway, token-kubeconfig, and the clean-up paths
 * (cluster_stop, the atexit handler, the reaper process). Spawning and stopping child processes is
 * tests/common/proc.h.
 *
 * Clean-up when the test process dies: cluster.sh starts etcd/apiserver/controller-manager with
 * setsid, so they outlive us unless something runs `cluster.sh down DIR`. Before `up`, a reaper
 * (/bin/sh, its own session so a process-group kill by meson spares it) blocks reading a socket
 * whose other end only the owner process holds (O_CLOEXEC for exec'd children; closed in forked
 * children by a pthread_atfork handler, so Check's test processes do not keep it open).
 * cluster_stop writes "q" (nothing left to do); any other end of the socket (exit, crash, SIGKILL)
 * makes the reaper run `down` and remove DIR.
 */
#include "cluster_harness.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "proc.h"
#include "vbuf.h"

#define UP_TIMEOUT_MS      180000u /* cluster.sh bounds each of its waits itself; this bounds all */
#define DOWN_TIMEOUT_MS    60000u  /* three processes, at most 10 s each in cluster.sh */
#define USER_TIMEOUT_MS    30000u
#define KUBECTL_TIMEOUT_MS 60000u
#define PROXY_READY_MS     20000u
#define PROXY_STOP_MS      5000
#define REAPER_EXIT_MS     5000
#define CONTROL_TIMEOUT_MS 15000L
#define SMALL_FILE_MAX     ((size_t)64 << 10)
#define LOG_TAIL_BYTES     3000
#define MAX_CLUSTERS       8

/* The reaper: $1 cluster.sh, $2 DIR, $3 non-empty to keep DIR. */
static const char REAPER_SCRIPT[] =
    "read -r x; [ \"$x\" = q ] && exit 0; \"$1\" down \"$2\"; [ -n \"$3\" ] || rm -rf \"$2\"";

/* Clusters started by this process and not stopped yet (main thread only). */
static struct cluster *live[MAX_CLUSTERS];
static int hooks_installed;

static void forget(struct cluster *c)
{
    for (int i = 0; i < MAX_CLUSTERS; i++)
        if (live[i] == c)
            live[i] = NULL;
}

/* pthread_atfork child handler: a forked child must not hold the reaper socket open. */
static void close_reaper_fds_in_child(void)
{
    for (int i = 0; i < MAX_CLUSTERS; i++) {
        if (live[i] && live[i]->reaper_fd >= 0) {
            close(live[i]->reaper_fd);
            live[i]->reaper_fd = -1;
        }
    }
}

static vmop_rc run_down(struct cluster *c, struct vmop_err *err);

/* exit() without cluster_stop(): stop synchronously so that nothing outlives the test; the
 * reaper then sees the socket close and removes DIR. */
static void stop_at_exit(void)
{
    for (int i = 0; i < MAX_CLUSTERS; i++) {
        struct cluster *c = live[i];
        struct vmop_err err = {0};
        if (!c || c->owner != getpid())
            continue;
        if (c->proxy_pid > 0) {
            vmop_proc_stop(c->proxy_pid, "faultproxy", PROXY_STOP_MS, NULL);
            c->proxy_pid = -1;
        }
        if (run_down(c, &err) != VMOP_OK)
            fprintf(stderr, "cluster_harness: at exit: %s\n", err.msg);
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

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void remove_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Reads a small file into *ret (NUL-terminated, malloc'd). */
static vmop_rc read_small(const char *path, char **ret, struct vmop_err *err)
{
    struct vbuf b;
    char buf[4096];
    size_t n;
    FILE *f = fopen(path, "re");

    if (!f)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "open '%s': %s", path, strerror(errno));
    vbuf_init(&b, SMALL_FILE_MAX);
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        vbuf_add(&b, buf, n);
    fclose(f);
    explicit_bzero(buf, sizeof(buf));
    if (vbuf_error(&b)) {
        vbuf_free_secure(&b);
        return vmop_fail(err, VMOP_E_TOOBIG, "'%s' is over %zu bytes", path, SMALL_FILE_MAX);
    }
    vbuf_adds(&b, "");
    *ret = vbuf_take(&b);
    if (!*ret)
        *ret = strdup("");
    return *ret ? VMOP_OK : vmop_fail(err, VMOP_E_NOMEM, "out of memory");
}

/* The last bytes of a log file, from the start of a line; "" when unreadable. malloc'd. */
static char *log_tail(const char *path, size_t bytes)
{
    char *text = NULL, *p;
    size_t len;

    if (read_small(path, &text, NULL) != VMOP_OK)
        return strdup("");
    len = strlen(text);
    p = len > bytes ? text + len - bytes : text;
    if (p != text) {
        char *nl = strchr(p, '\n');
        if (nl)
            p = nl + 1;
    }
    memmove(text, p, strlen(p) + 1);
    return text;
}

static void print_tail(const char *what, const char *path)
{
    char *t = log_tail(path, LOG_TAIL_BYTES);
    if (t && *t)
        fprintf(stderr, "---- %s (%s), last lines ----\n%s---- end of %s ----\n", what, path, t,
                what);
    free(t);
}

/* Runs argv (argv[0] an absolute path) with stdout and stderr appended to log, waits until it
 * exits or timeout_ms passed (then SIGKILL). *ret_status: its wait status. */
static vmop_rc run_bounded(char *const argv[], const char *name, const char *log,
                           unsigned timeout_ms, int *ret_status, struct vmop_err *err)
{
    long long deadline = vmop_test_now_ms() + timeout_ms;
    int outfd = -1, logfd;
    pid_t pid;
    char buf[4096];
    vmop_rc rc;

    logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (logfd < 0)
        return vmop_fail(err, VMOP_E_INVALID, "open '%s': %s", log, strerror(errno));
    rc = vmop_proc_spawn(argv[0], argv, log, &pid, &outfd, err);
    if (rc) {
        close(logfd);
        return rc;
    }
    for (;;) {
        long long left = deadline - vmop_test_now_ms();
        struct pollfd p = {.fd = outfd, .events = POLLIN};
        ssize_t n;
        int r;

        if (left <= 0) {
            vmop_proc_kill(pid);
            rc = vmop_fail(err, VMOP_E_TIMEOUT, "%s did not finish within %u ms; killed (see %s)",
                           name, timeout_ms, log);
            goto out;
        }
        r = poll(&p, 1, left > 1000 ? 1000 : (int)left);
        if (r < 0 && errno != EINTR) {
            vmop_proc_kill(pid);
            rc = vmop_fail(err, VMOP_E_INTERNAL, "poll: %s", strerror(errno));
            goto out;
        }
        if (r <= 0)
            continue;
        n = read(outfd, buf, sizeof(buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            break; /* EOF (or an error): the child closed stdout, normally by exiting */
        if (write(logfd, buf, (size_t)n) < 0) {
            /* the log is best effort */
        }
    }
    {
        long long left = deadline - vmop_test_now_ms();
        if (!vmop_proc_reap(pid, left > 0 ? (int)left : 0, ret_status)) {
            vmop_proc_kill(pid);
            rc = vmop_fail(err, VMOP_E_TIMEOUT, "%s did not exit within %u ms; killed (see %s)",
                           name, timeout_ms, log);
        }
    }
out:
    close(outfd);
    close(logfd);
    return rc;
}

static vmop_rc run_script(const struct cluster *c, const char *what, const char *const *args,
                          const char *apiserver_args, unsigned timeout_ms, struct vmop_err *err)
{
    char *argv[16], envbuf[4096];
    int argc = 0, st = 0;
    vmop_rc rc;

    argv[argc++] = "/usr/bin/env";
    if (apiserver_args) {
        snprintf(envbuf, sizeof(envbuf), "CLUSTER_APISERVER_ARGS=%s", apiserver_args);
        argv[argc++] = envbuf;
    }
    argv[argc++] = c->cluster_sh;
    for (; *args && argc < 15; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    rc = run_bounded(argv, what, c->cluster_log, timeout_ms, &st, err);
    if (rc)
        return rc;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return vmop_fail(err, VMOP_E_INTERNAL, "%s failed (%s %d); see %s", what,
                         WIFEXITED(st) ? "exit status" : "signal",
                         WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), c->cluster_log);
    return VMOP_OK;
}

static vmop_rc run_down(struct cluster *c, struct vmop_err *err)
{
    const char *args[] = {"down", c->dir, NULL};
    return run_script(c, "cluster.sh down", args, NULL, DOWN_TIMEOUT_MS, err);
}

static vmop_rc start_reaper(struct cluster *c, struct vmop_err *err)
{
    const char *keep = getenv("VMOP_KEEP_TMP");
    int sv[2], nullfd;
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return vmop_fail(err, VMOP_E_INTERNAL, "socketpair: %s", strerror(errno));
    nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (nullfd < 0) {
        close(sv[0]);
        close(sv[1]);
        return vmop_fail(err, VMOP_E_INTERNAL, "open /dev/null: %s", strerror(errno));
    }
    pid = fork();
    if (pid == 0) {
        /* Child: async-signal-safe calls only. Its own session: a kill of the test's process
         * group must not take the reaper with it. */
        char *argv[] = {"sh",
                        "-c",
                        (char *)REAPER_SCRIPT,
                        "cluster-reaper",
                        c->cluster_sh,
                        c->dir,
                        (char *)(keep && *keep ? "keep" : ""),
                        NULL};
        struct sigaction sa;
        sigset_t none;

        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = SIG_IGN;
        sigaction(SIGHUP, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGPIPE, &sa, NULL);
        sa.sa_handler = SIG_DFL;
        sigaction(SIGTERM, &sa, NULL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setsid();
        if (dup2(sv[1], STDIN_FILENO) < 0 || dup2(nullfd, STDOUT_FILENO) < 0 ||
            dup2(nullfd, STDERR_FILENO) < 0)
            _exit(126);
        execv("/bin/sh", argv);
        _exit(127);
    }
    close(sv[1]);
    close(nullfd);
    if (pid < 0) {
        close(sv[0]);
        return vmop_fail(err, VMOP_E_INTERNAL, "fork: %s", strerror(errno));
    }
    c->reaper_pid = pid;
    c->reaper_fd = sv[0];
    return VMOP_OK;
}

/* Tells the reaper that nothing is left to do and reaps it. */
static void release_reaper(struct cluster *c)
{
    if (c->reaper_fd >= 0) {
        if (send(c->reaper_fd, "q\n", 2, MSG_NOSIGNAL) < 0) {
            /* the reaper is gone already */
        }
        close(c->reaper_fd);
        c->reaper_fd = -1;
    }
    if (c->reaper_pid > 0) {
        if (!vmop_proc_reap(c->reaper_pid, REAPER_EXIT_MS, NULL))
            vmop_proc_kill(c->reaper_pid);
        c->reaper_pid = -1;
    }
}

static void free_cluster(struct cluster *c)
{
    if (!c)
        return;
    if (c->reaper_fd >= 0)
        close(c->reaper_fd);
    free(c->url);
    free(c->apiserver_url);
    if (c->token)
        explicit_bzero(c->token, strlen(c->token));
    free(c->token);
    free(c->ca_file);
    free(c->kubeconfig);
    free(c->token_kubeconfig);
    free(c->control_url);
    free(c->bin);
    free(c->kubectl);
    free(c->dir);
    free(c->cluster_log);
    free(c->apiserver_log);
    free(c->controller_manager_log);
    free(c->etcd_log);
    free(c->proxy_log);
    free(c->cluster_sh);
    free(c);
}

static char *dup_json_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return strdup(cJSON_IsString(v) ? v->valuestring : "");
}

static vmop_rc read_cluster_json(struct cluster *c, struct vmop_err *err)
{
    char *path = path_join(c->dir, "cluster.json"), *text = NULL;
    cJSON *j = NULL;
    const cJSON *port;
    vmop_rc rc;

    if (!path)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    rc = read_small(path, &text, err);
    free(path);
    if (rc)
        return rc;
    j = cJSON_Parse(text);
    free(text);
    port = cJSON_GetObjectItemCaseSensitive(j, "port");
    if (!j || !cJSON_IsNumber(port)) {
        cJSON_Delete(j);
        return vmop_fail(err, VMOP_E_PROTO, "cluster.json: no port");
    }
    c->port = port->valueint;
    c->apiserver_url = dup_json_str(j, "url");
    c->bin = dup_json_str(j, "bin");
    c->ca_file = dup_json_str(j, "ca");
    cJSON_Delete(j);
    if (!c->apiserver_url || !c->bin || !c->ca_file)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    if (!*c->apiserver_url || !*c->bin || !*c->ca_file)
        return vmop_fail(err, VMOP_E_PROTO, "cluster.json lacks url, bin or ca");
    c->kubectl = path_join(c->bin, "kubectl");
    return c->kubectl ? VMOP_OK : vmop_fail(err, VMOP_E_NOMEM, "out of memory");
}

static vmop_rc read_token(struct cluster *c, struct vmop_err *err)
{
    char *path = path_join(c->dir, "pki/admin.token");
    size_t n;
    vmop_rc rc;

    if (!path)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    rc = read_small(path, &c->token, err);
    free(path);
    if (rc)
        return rc;
    n = strlen(c->token);
    while (n && (c->token[n - 1] == '\n' || c->token[n - 1] == '\r' || c->token[n - 1] == ' '))
        c->token[--n] = '\0';
    if (!n)
        return vmop_fail(err, VMOP_E_PROTO, "pki/admin.token is empty");
    return VMOP_OK;
}

static vmop_rc start_proxy(struct cluster *c, const char *bin, struct vmop_err *err)
{
    char *crt = path_join(c->dir, "pki/apiserver.crt"),
         *key = path_join(c->dir, "pki/apiserver.key");
    struct vbuf line;
    int outfd = -1, reaped = 0;
    pid_t pid = -1;
    cJSON *ready = NULL;
    const cJSON *port;
    vmop_rc rc = VMOP_OK;

    vbuf_init(&line, SMALL_FILE_MAX);
    if (!crt || !key) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    {
        char *argv[] = {(char *)bin,
                        "-listen",
                        "127.0.0.1:0",
                        "-control",
                        "127.0.0.1:0",
                        "-upstream",
                        c->apiserver_url,
                        "-upstream-ca",
                        c->ca_file,
                        "-tls-cert",
                        crt,
                        "-tls-key",
                        key,
                        "-die-with-parent=true",
                        NULL};
        rc = vmop_proc_spawn(bin, argv, c->proxy_log, &pid, &outfd, err);
    }
    if (rc)
        goto out;
    rc = vmop_proc_read_line(outfd, pid, "faultproxy", PROXY_READY_MS, &line, &reaped, err);
    if (reaped)
        pid = -1;
    if (rc)
        goto out;
    ready = cJSON_Parse(vbuf_str(&line));
    port = cJSON_GetObjectItemCaseSensitive(ready, "port");
    if (!ready || !cJSON_IsNumber(port)) {
        rc = vmop_fail(err, VMOP_E_PROTO, "faultproxy printed an unexpected ready line");
        goto out;
    }
    free(c->url);
    free(c->control_url);
    c->url = dup_json_str(ready, "url");
    c->control_url = dup_json_str(ready, "control");
    c->port = port->valueint;
    if (!c->url || !c->control_url) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    c->proxy_pid = pid;
    pid = -1;
out:
    if (pid > 0)
        vmop_proc_kill(pid);
    if (outfd >= 0)
        close(outfd);
    cJSON_Delete(ready);
    vbuf_free(&line);
    free(crt);
    free(key);
    return rc;
}

static vmop_rc write_token_kubeconfig(struct cluster *c, struct vmop_err *err)
{
    int fd = open(c->token_kubeconfig, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FILE *f;
    int bad;

    if (fd < 0)
        return vmop_fail(err, VMOP_E_INTERNAL, "create '%s': %s", c->token_kubeconfig,
                         strerror(errno));
    f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return vmop_fail(err, VMOP_E_NOMEM, "fdopen: %s", strerror(errno));
    }
    fprintf(f,
            "apiVersion: v1\nkind: Config\n"
            "clusters:\n- name: vmop-test\n  cluster:\n    server: %s\n"
            "    certificate-authority: %s\n"
            "users:\n- name: vmop-test-token-admin\n  user:\n    token: %s\n"
            "contexts:\n- name: token@vmop-test\n  context: {cluster: vmop-test, user: "
            "vmop-test-token-admin, namespace: default}\n"
            "current-context: token@vmop-test\n",
            c->url, c->ca_file, c->token);
    bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return vmop_fail(err, VMOP_E_INTERNAL, "writing '%s' failed", c->token_kubeconfig);
    return VMOP_OK;
}

static vmop_rc alloc_paths(struct cluster *c, const char *dir, const char *sh, int proxy,
                           struct vmop_err *err)
{
    c->dir = strdup(dir);
    c->cluster_sh = strdup(sh);
    c->kubeconfig = path_join(dir, "kubeconfig");
    c->token_kubeconfig = path_join(dir, "token-kubeconfig");
    c->cluster_log = path_join(dir, "cluster.log");
    c->apiserver_log = path_join(dir, "kube-apiserver.log");
    c->controller_manager_log = path_join(dir, "kube-controller-manager.log");
    c->etcd_log = path_join(dir, "etcd.log");
    c->proxy_log = proxy ? path_join(dir, "faultproxy.log") : strdup("");
    c->control_url = strdup("");
    if (!c->dir || !c->cluster_sh || !c->kubeconfig || !c->token_kubeconfig || !c->cluster_log ||
        !c->apiserver_log || !c->controller_manager_log || !c->etcd_log || !c->proxy_log ||
        !c->control_url)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    return VMOP_OK;
}

static void register_cluster(struct cluster *c)
{
    if (!hooks_installed) {
        pthread_atfork(NULL, NULL, close_reaper_fds_in_child);
        atexit(stop_at_exit);
        hooks_installed = 1;
    }
    for (int i = 0; i < MAX_CLUSTERS; i++) {
        if (!live[i]) {
            live[i] = c;
            return;
        }
    }
}

vmop_rc cluster_start(const struct cluster_opts *opts, struct cluster **ret, struct vmop_err *err)
{
    static const struct cluster_opts defaults;
    const struct cluster_opts *o = opts ? opts : &defaults;
    const char *sh = o->cluster_sh ? o->cluster_sh : getenv("VMOP_CLUSTER_SH");
    const char *fp = o->faultproxy ? o->faultproxy : getenv("VMOP_FAULTPROXY");
    const char *tmp = getenv("TMPDIR");
    const char *keep = getenv("VMOP_KEEP_TMP");
    char dirbuf[4096];
    struct cluster *c = NULL;
    int started = 0, n_live = 0;
    vmop_rc rc;

    if (!ret)
        return vmop_fail(err, VMOP_E_INVALID, "cluster_start: ret is NULL");
    if (!sh || !*sh)
        return vmop_fail(err, VMOP_E_INVALID,
                         "no cluster.sh: set VMOP_CLUSTER_SH (meson: env : cluster_env)");
    if (sh[0] != '/' || access(sh, X_OK) != 0)
        return vmop_fail(err, VMOP_E_NOT_FOUND,
                         "cluster.sh '%s' is not an executable absolute path", sh);
    if (o->proxy && (!fp || !*fp))
        return vmop_fail(err, VMOP_E_INVALID,
                         "no fault proxy: set VMOP_FAULTPROXY (meson: env : cluster_env, "
                         "depends : faultproxy)");
    if (o->proxy && access(fp, X_OK) != 0)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "faultproxy '%s' is not executable", fp);
    for (int i = 0; i < MAX_CLUSTERS; i++)
        n_live += live[i] != NULL;
    if (n_live >= MAX_CLUSTERS)
        return vmop_fail(err, VMOP_E_INVALID, "more than %d clusters at once", MAX_CLUSTERS);

    c = calloc(1, sizeof(*c));
    if (!c)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    c->proxy_pid = -1;
    c->reaper_pid = -1;
    c->reaper_fd = -1;
    c->owner = getpid();
    snprintf(dirbuf, sizeof(dirbuf), "%s/vmop-cluster.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dirbuf)) {
        free_cluster(c);
        return vmop_fail(err, VMOP_E_INTERNAL, "mkdtemp: %s", strerror(errno));
    }
    rc = alloc_paths(c, dirbuf, sh, o->proxy, err);
    if (!rc)
        rc = start_reaper(c, err);
    if (rc)
        goto fail;
    register_cluster(c);
    started = 1;
    {
        const char *args[] = {"up", c->dir, NULL};
        rc = run_script(c, "cluster.sh up", args, o->apiserver_args,
                        o->start_timeout_ms ? o->start_timeout_ms : UP_TIMEOUT_MS, err);
    }
    if (!rc)
        rc = read_cluster_json(c, err);
    if (!rc)
        rc = read_token(c, err);
    if (!rc) {
        c->url = strdup(c->apiserver_url);
        if (!c->url)
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    }
    if (!rc && o->proxy)
        rc = start_proxy(c, fp, err);
    if (!rc)
        rc = write_token_kubeconfig(c, err);
    if (rc)
        goto fail;
    *ret = c;
    return VMOP_OK;

fail:
    print_tail("cluster.sh", c->cluster_log);
    if (c->proxy_log && *c->proxy_log)
        print_tail("faultproxy", c->proxy_log);
    if (c->proxy_pid > 0)
        vmop_proc_kill(c->proxy_pid);
    if (started)
        run_down(c, NULL);
    release_reaper(c);
    forget(c);
    if (keep && *keep)
        fprintf(stderr, "cluster_harness: kept %s (VMOP_KEEP_TMP)\n", c->dir);
    else
        remove_tree(c->dir);
    free_cluster(c);
    return rc;
}

struct cluster *cluster_start_or_exit(const struct cluster_opts *opts)
{
    struct vmop_err err = {0};
    struct cluster *c = NULL;

    if (cluster_start(opts, &c, &err) != VMOP_OK) {
        fprintf(stderr, "cannot start the Kubernetes test cluster: %s\n", err.msg);
        exit(EXIT_FAILURE);
    }
    return c;
}

vmop_rc cluster_stop(struct cluster *c, struct vmop_err *err)
{
    const char *keep = getenv("VMOP_KEEP_TMP");
    vmop_rc rc = VMOP_OK, rc2;

    if (!c)
        return VMOP_OK;
    forget(c);
    if (c->owner != getpid()) {
        c->reaper_fd = -1; /* the parent's; closed in this process at fork */
        free_cluster(c);
        return VMOP_OK;
    }
    if (c->proxy_pid > 0)
        rc = vmop_proc_stop(c->proxy_pid, "faultproxy", PROXY_STOP_MS, err);
    c->proxy_pid = -1;
    rc2 = run_down(c, err);
    if (!rc)
        rc = rc2;
    if (keep && *keep)
        fprintf(stderr, "cluster_harness: kept %s (VMOP_KEEP_TMP)\n", c->dir);
    else
        remove_tree(c->dir);
    release_reaper(c);
    free_cluster(c);
    return rc;
}

void cluster_stop_or_warn(struct cluster *c)
{
    struct vmop_err err = {0};

    if (cluster_stop(c, &err) != VMOP_OK)
        fprintf(stderr, "stopping the Kubernetes test cluster: %s\n", err.msg);
}

static size_t sink(char *p, size_t size, size_t n, void *ud)
{
    struct vbuf *b = ud;
    vbuf_add(b, p, size * n);
    return vbuf_error(b) ? 0 : size * n;
}

/* One HTTP request to a loopback plain-HTTP endpoint (the proxy's control API, etcd's JSON
 * gateway); a non-200 answer is an error carrying the body's "message" (or the body). */
static vmop_rc http_json(const char *url, const char *method, const char *json, char **ret_body,
                         struct vmop_err *err)
{
    struct curl_slist *hdrs = NULL;
    struct vbuf body;
    long code = 0;
    CURLcode cc;
    CURL *h;
    vmop_rc rc = VMOP_OK;

    h = curl_easy_init();
    if (!h)
        return vmop_fail(err, VMOP_E_NOMEM, "curl_easy_init failed");
    vbuf_init(&body, SMALL_FILE_MAX);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROXY, ""); /* loopback: never through $http_proxy */
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, CONTROL_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (json) {
        hdrs = curl_slist_append(NULL, "Content-Type: application/json");
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, json);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(json));
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    cc = curl_easy_perform(h);
    if (cc != CURLE_OK) {
        rc = vmop_fail(err, VMOP_E_TRANSPORT, "%s %s: %s", method, url, curl_easy_strerror(cc));
        goto out;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (code != 200) {
        cJSON *st = cJSON_Parse(vbuf_str(&body));
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(st, "message");
        rc = vmop_fail_fault(err, code == 400 ? VMOP_E_INVALID : VMOP_E_HTTP, "", (int)code,
                             "%s %s: HTTP %ld: %s", method, url, code,
                             cJSON_IsString(m) ? m->valuestring : vbuf_str(&body));
        cJSON_Delete(st);
        goto out;
    }
    if (ret_body) {
        vbuf_adds(&body, "");
        *ret_body = vbuf_take(&body);
        if (!*ret_body)
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    }
out:
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    vbuf_free(&body);
    return rc;
}

static vmop_rc control(const struct cluster *c, const char *method, const char *json,
                       char **ret_body, struct vmop_err *err)
{
    char url[512];

    if (!c || !method)
        return vmop_fail(err, VMOP_E_INVALID, "cluster_faults: no cluster or method");
    if (!c->control_url || !*c->control_url)
        return vmop_fail(err, VMOP_E_UNSUPPORTED,
                         "cluster_faults: the cluster runs without the fault proxy "
                         "(cluster_opts.proxy)");
    snprintf(url, sizeof(url), "%s/faults", c->control_url);
    return http_json(url, method, json, ret_body, err);
}

vmop_rc cluster_faults(const struct cluster *c, const char *method, const char *json,
                       struct vmop_err *err)
{
    return control(c, method, json, NULL, err);
}

vmop_rc cluster_faults_state(const struct cluster *c, char **ret_json, struct vmop_err *err)
{
    if (!ret_json)
        return vmop_fail(err, VMOP_E_INVALID, "cluster_faults_state: ret_json is NULL");
    return control(c, "GET", NULL, ret_json, err);
}

vmop_rc cluster_kubectl(const struct cluster *c, const char *const *args, unsigned timeout_ms,
                        struct vmop_err *err)
{
    char *argv[64], *log;
    int argc = 0, st = 0;
    vmop_rc rc;

    if (!c || !args)
        return vmop_fail(err, VMOP_E_INVALID, "cluster_kubectl: no cluster or args");
    argv[argc++] = c->kubectl;
    argv[argc++] = "--kubeconfig";
    argv[argc++] = c->kubeconfig;
    for (; *args; args++) {
        if (argc >= 63)
            return vmop_fail(err, VMOP_E_INVALID, "cluster_kubectl: too many arguments");
        argv[argc++] = (char *)*args;
    }
    argv[argc] = NULL;
    log = path_join(c->dir, "kubectl.log");
    if (!log)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    rc = run_bounded(argv, "kubectl", log, timeout_ms ? timeout_ms : KUBECTL_TIMEOUT_MS, &st, err);
    if (!rc && (!WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
        char *t = log_tail(log, 300);
        rc = vmop_fail(err, VMOP_E_KUBE, "kubectl %s failed (status 0x%x): %s",
                       args[0] ? args[0] : "", (unsigned)st, t ? t : "");
        free(t);
    }
    free(log);
    return rc;
}

vmop_rc cluster_user(const struct cluster *c, const char *name, const char *group,
                     char **ret_kubeconfig, struct vmop_err *err)
{
    const char *args[] = {"user", c ? c->dir : "", name, group, NULL};
    char file[256];
    vmop_rc rc;

    if (!c || !name || !*name || !ret_kubeconfig || strchr(name, '/'))
        return vmop_fail(err, VMOP_E_INVALID, "cluster_user: bad arguments");
    rc = run_script(c, "cluster.sh user", args, NULL, USER_TIMEOUT_MS, err);
    if (rc)
        return rc;
    snprintf(file, sizeof(file), "%s.kubeconfig", name);
    *ret_kubeconfig = path_join(c->dir, file);
    return *ret_kubeconfig ? VMOP_OK : vmop_fail(err, VMOP_E_NOMEM, "out of memory");
}

vmop_rc cluster_etcd_compact(const struct cluster *c, long long *ret_rev, struct vmop_err *err)
{
    char *path, *port = NULL, *body = NULL, url[128], req[96];
    const cJSON *rev;
    cJSON *j;
    long long r = 0;
    vmop_rc rc;

    if (!c)
        return vmop_fail(err, VMOP_E_INVALID, "cluster_etcd_compact: no cluster");
    path = path_join(c->dir, "etcd.port");
    if (!path)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    rc = read_small(path, &port, err);
    free(path);
    if (rc)
        return rc;
    /* etcd's JSON gateway: the current revision is in the header of any range request */
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v3/kv/range", (int)strtol(port, NULL, 10));
    rc = http_json(url, "POST", "{\"key\":\"AA==\"}", &body, err);
    if (rc)
        goto out;
    j = cJSON_Parse(body);
    rev =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "header"), "revision");
    if (cJSON_IsString(rev))
        r = strtoll(rev->valuestring, NULL, 10);
    else if (cJSON_IsNumber(rev))
        r = (long long)rev->valuedouble;
    cJSON_Delete(j);
    if (r <= 0) {
        rc = vmop_fail(err, VMOP_E_PROTO, "etcd range: no header.revision");
        goto out;
    }
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v3/kv/compaction", (int)strtol(port, NULL, 10));
    snprintf(req, sizeof(req), "{\"revision\":\"%lld\",\"physical\":true}", r);
    rc = http_json(url, "POST", req, NULL, err);
    if (!rc && ret_rev)
        *ret_rev = r;
out:
    free(body);
    free(port);
    return rc;
}
