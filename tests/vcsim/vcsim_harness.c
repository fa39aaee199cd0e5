/* vcsim_harness.c: runs vcsim-launcher as a child process and parses its ready line.
 *
 * Owns: argv building, fork/exec with PR_SET_PDEATHSIG, the bounded wait for the JSON line on the
 * child's stdout, the cJSON parse into struct vcsim, and the SIGTERM/SIGKILL stop. See
 * vcsim_harness.h.
 */
#include "vcsim_harness.h"

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

#include <cjson/cJSON.h>

#include "vbuf.h"

#define VCSIM_READY_MAX       ((size_t)1 << 20) /* the ready line is a few KB */
#define VCSIM_START_TIMEOUT   60000u
#define VCSIM_STOP_TIMEOUT_MS 10000
#define VCSIM_MAX_ARGS        96

struct argv_list {
    char *v[VCSIM_MAX_ARGS + 1]; /* owned strings, NULL-terminated */
    size_t n;
    int failed;
};

static void args_free(struct argv_list *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    a->n = 0;
}

static void args_add(struct argv_list *a, const char *s)
{
    char *d;

    if (a->failed || a->n >= VCSIM_MAX_ARGS) {
        a->failed = 1;
        return;
    }
    d = strdup(s);
    if (!d) {
        a->failed = 1;
        return;
    }
    a->v[a->n++] = d;
    a->v[a->n] = NULL;
}

static void args_addf(struct argv_list *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void args_addf(struct argv_list *a, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(buf)) {
        a->failed = 1;
        return;
    }
    args_add(a, buf);
}

static void args_count(struct argv_list *a, const char *flag, int v)
{
    if (v == 0)
        return;
    args_addf(a, "-%s=%d", flag, v == VCSIM_NONE ? 0 : v);
}

static int build_args(const struct vcsim_opts *o, const char *launcher, struct argv_list *a)
{
    args_add(a, launcher);
    args_add(a, "-listen=127.0.0.1:0");
    args_add(a, o->tls ? "-tls=true" : "-tls=false");
    args_addf(a, "-username=%s", o->username ? o->username : "user");
    args_addf(a, "-password=%s", o->password ? o->password : "pass");
    if (o->session_idle_timeout_ms)
        args_addf(a, "-session-idle-timeout=%ums", o->session_idle_timeout_ms);
    if (o->delay_ms)
        args_addf(a, "-delay=%u", o->delay_ms);
    if (o->method_delays && *o->method_delays)
        args_addf(a, "-method-delay=%s", o->method_delays);
    args_count(a, "clusters", o->clusters);
    args_count(a, "hosts", o->hosts);
    args_count(a, "standalone-hosts", o->standalone_hosts);
    args_count(a, "pools", o->pools);
    args_count(a, "portgroups", o->portgroups);
    args_count(a, "vms", o->vms);
    args_count(a, "datastores", o->datastores);
    if (o->no_autostart)
        args_add(a, "-autostart=false");
    if (o->no_guest_ip)
        args_add(a, "-guest-ip=false");
    if (o->no_seed)
        args_add(a, "-seed=false");
    for (size_t i = 0; o->extra_args && o->extra_args[i]; i++)
        args_add(a, o->extra_args[i]);
    return a->failed ? -1 : 0;
}

static long long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reaps pid within timeout_ms (0: just check). Returns 1 when reaped, 0 when still running. */
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
            return 1; /* not our child any more (ECHILD): nothing left to wait for */
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

static void describe_status(char *buf, size_t n, int st)
{
    if (WIFEXITED(st))
        snprintf(buf, n, "exit status %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(buf, n, "signal %d", WTERMSIG(st));
    else
        snprintf(buf, n, "status 0x%x", (unsigned)st);
}

/* Reads the child's stdout until a newline, EOF or the deadline. *reaped becomes 1 when the child
 * exited and was waited for (its pid must not be signalled any more). */
static vmop_rc read_ready_line(int fd, pid_t pid, unsigned timeout_ms, struct vbuf *line,
                               int *reaped, struct vmop_err *err)
{
    long long deadline = now_ms() + timeout_ms;
    char buf[4096];

    for (;;) {
        long long left = deadline - now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r;
        ssize_t n;

        if (left <= 0)
            return vmop_fail(err, VMOP_E_TIMEOUT,
                             "vcsim-launcher (pid %d) printed no ready line within %u ms", (int)pid,
                             timeout_ms);
        r = poll(&p, 1, left > 1000 ? 1000 : (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return vmop_fail(err, VMOP_E_INTERNAL, "poll on the launcher pipe: %s",
                             strerror(errno));
        if (r == 0)
            continue;
        n = read(fd, buf, sizeof(buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return vmop_fail(err, VMOP_E_INTERNAL, "read from the launcher pipe: %s",
                             strerror(errno));
        if (n == 0) {
            int st = 0;
            char how[64] = "still running";
            if (reap(pid, 2000, &st)) {
                *reaped = 1;
                describe_status(how, sizeof(how), st);
            }
            return vmop_fail(
                err, VMOP_E_TRANSPORT,
                "vcsim-launcher (pid %d) closed stdout before its ready line (%s); see its stderr",
                (int)pid, how);
        }
        vbuf_add(line, buf, (size_t)n);
        if (vbuf_error(line))
            return vmop_fail(err, vbuf_error(line), "vcsim-launcher ready line over %zu bytes",
                             (size_t)VCSIM_READY_MAX);
        if (memchr(buf, '\n', (size_t)n))
            return VMOP_OK;
    }
}

/* --- parsing the ready line --- */

static char *dup_str(const cJSON *obj, const char *key, int *oom)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    const char *s = cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
    char *d = strdup(s);

    if (!d)
        *oom = 1;
    return d;
}

static char **dup_str_array(const cJSON *obj, const char *key, size_t *ret_n, int *oom)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, key);
    const cJSON *el;
    size_t n = 0, i = 0;
    char **out;

    *ret_n = 0;
    if (!cJSON_IsArray(arr))
        return NULL;
    n = (size_t)cJSON_GetArraySize(arr);
    out = calloc(n + 1, sizeof(*out));
    if (!out) {
        *oom = 1;
        return NULL;
    }
    cJSON_ArrayForEach(el, arr)
    {
        if (i >= n)
            break;
        out[i] = strdup(cJSON_IsString(el) && el->valuestring ? el->valuestring : "");
        if (!out[i])
            *oom = 1;
        i++;
    }
    *ret_n = i;
    return out;
}

static void free_str_array(char **a, size_t n)
{
    for (size_t i = 0; a && i < n; i++)
        free(a[i]);
    free(a);
}

static void free_sim(struct vcsim *s)
{
    if (!s)
        return;
    free(s->url);
    free(s->sdk);
    free(s->username);
    if (s->password)
        explicit_bzero(s->password, strlen(s->password));
    free(s->password);
    free(s->thumbprint_sha1);
    free(s->thumbprint_sha256);
    free(s->datacenter);
    free(s->cluster);
    free(s->resource_pool);
    free(s->folder);
    free(s->datastore);
    free(s->network);
    free(s->dvs_uuid);
    free(s->template_vm);
    free_str_array(s->portgroups, s->n_portgroups);
    free_str_array(s->datastore_dirs, s->n_datastore_dirs);
    for (size_t i = 0; s->libraries && i < s->n_libraries; i++) {
        struct vcsim_library *l = &s->libraries[i];
        for (size_t j = 0; l->items && j < l->n_items; j++) {
            free(l->items[j].id);
            free(l->items[j].name);
            free(l->items[j].type);
        }
        free(l->items);
        free(l->id);
        free(l->name);
    }
    free(s->libraries);
    if (s->json)
        explicit_bzero(s->json, strlen(s->json)); /* it holds the password */
    free(s->json);
    cJSON_Delete(s->parsed);
    free(s);
}

static void parse_libraries(struct vcsim *s, const cJSON *root, int *oom)
{
    const cJSON *libs = cJSON_GetObjectItemCaseSensitive(root, "libraries");
    const cJSON *l;
    size_t n, i = 0;

    if (!cJSON_IsArray(libs))
        return;
    n = (size_t)cJSON_GetArraySize(libs);
    s->libraries = calloc(n ? n : 1, sizeof(*s->libraries));
    if (!s->libraries) {
        *oom = 1;
        return;
    }
    cJSON_ArrayForEach(l, libs)
    {
        struct vcsim_library *dst;
        const cJSON *items, *it;
        size_t m, j = 0;

        if (i >= n)
            break;
        dst = &s->libraries[i++];
        s->n_libraries = i;
        dst->id = dup_str(l, "id", oom);
        dst->name = dup_str(l, "name", oom);
        items = cJSON_GetObjectItemCaseSensitive(l, "items");
        if (!cJSON_IsArray(items))
            continue;
        m = (size_t)cJSON_GetArraySize(items);
        dst->items = calloc(m ? m : 1, sizeof(*dst->items));
        if (!dst->items) {
            *oom = 1;
            return;
        }
        cJSON_ArrayForEach(it, items)
        {
            if (j >= m)
                break;
            dst->items[j].id = dup_str(it, "id", oom);
            dst->items[j].name = dup_str(it, "name", oom);
            dst->items[j].type = dup_str(it, "type", oom);
            dst->n_items = ++j;
        }
    }
}

static vmop_rc parse_ready(struct vcsim *s, struct vmop_err *err)
{
    cJSON *root = cJSON_Parse(s->json);
    int oom = 0;

    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return vmop_fail(err, VMOP_E_PROTO, "vcsim-launcher ready line is not a JSON object");
    }
    s->parsed = root;
    s->url = dup_str(root, "url", &oom);
    s->sdk = dup_str(root, "sdk", &oom);
    s->username = dup_str(root, "username", &oom);
    s->password = dup_str(root, "password", &oom);
    s->tls = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "tls"));
    s->thumbprint_sha1 = dup_str(root, "thumbprint_sha1", &oom);
    s->thumbprint_sha256 = dup_str(root, "thumbprint_sha256", &oom);
    s->datacenter = dup_str(root, "datacenter", &oom);
    s->cluster = dup_str(root, "cluster", &oom);
    s->resource_pool = dup_str(root, "resource_pool", &oom);
    s->folder = dup_str(root, "folder", &oom);
    s->datastore = dup_str(root, "datastore", &oom);
    s->network = dup_str(root, "network", &oom);
    s->dvs_uuid = dup_str(root, "dvs_uuid", &oom);
    s->template_vm = dup_str(root, "template_vm", &oom);
    s->portgroups = dup_str_array(root, "portgroups", &s->n_portgroups, &oom);
    s->datastore_dirs = dup_str_array(root, "datastore_dirs", &s->n_datastore_dirs, &oom);
    parse_libraries(s, root, &oom);
    if (oom)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory parsing the vcsim ready line");
    if (!*s->url || !*s->sdk)
        return vmop_fail(err, VMOP_E_PROTO, "vcsim-launcher ready line has no url/sdk");
    return VMOP_OK;
}

vmop_rc vcsim_start(const struct vcsim_opts *opts, struct vcsim **ret_sim, struct vmop_err *err)
{
    static const struct vcsim_opts defaults;
    const struct vcsim_opts *o = opts ? opts : &defaults;
    struct argv_list args = {0};
    struct vbuf line;
    struct vcsim *sim = NULL;
    const char *launcher = o->launcher ? o->launcher : getenv("VMOP_VCSIM_LAUNCHER");
    int pfd[2] = {-1, -1}, errfd = -1, nullfd = -1;
    pid_t parent = getpid(), pid = -1;
    int reaped = 0;
    vmop_rc rc;
    char *nl;

    vbuf_init(&line, VCSIM_READY_MAX);
    if (!ret_sim) {
        rc = vmop_fail(err, VMOP_E_INVALID, "vcsim_start: ret_sim is NULL");
        goto out;
    }
    if (!launcher || !*launcher) {
        rc = vmop_fail(err, VMOP_E_INVALID,
                       "no launcher: set VMOP_VCSIM_LAUNCHER (meson: env : vcsim_env)");
        goto out;
    }
    if (access(launcher, X_OK) != 0) {
        rc = vmop_fail(err, VMOP_E_NOT_FOUND, "vcsim launcher '%s' is not executable: %s", launcher,
                       strerror(errno));
        goto out;
    }
    if (build_args(o, launcher, &args) != 0) {
        rc = vmop_fail(err, VMOP_E_INVALID, "vcsim launcher arguments too many or too long");
        goto out;
    }
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        rc = vmop_fail(err, VMOP_E_INTERNAL, "pipe2: %s", strerror(errno));
        goto out;
    }
    nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nullfd < 0) {
        rc = vmop_fail(err, VMOP_E_INTERNAL, "open /dev/null: %s", strerror(errno));
        goto out;
    }
    if (o->stderr_path) {
        errfd = open(o->stderr_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (errfd < 0) {
            rc = vmop_fail(err, VMOP_E_INVALID, "open '%s': %s", o->stderr_path, strerror(errno));
            goto out;
        }
    }

    pid = fork();
    if (pid < 0) {
        rc = vmop_fail(err, VMOP_E_INTERNAL, "fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        /* Child: async-signal-safe calls only. */
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
        if (dup2(pfd[1], STDOUT_FILENO) < 0 || dup2(nullfd, STDIN_FILENO) < 0)
            _exit(126);
        if (errfd >= 0 && dup2(errfd, STDERR_FILENO) < 0)
            _exit(126);
        execv(launcher, args.v);
        _exit(127);
    }
    close(pfd[1]);
    pfd[1] = -1;

    rc = read_ready_line(pfd[0], pid,
                         o->start_timeout_ms ? o->start_timeout_ms : VCSIM_START_TIMEOUT, &line,
                         &reaped, err);
    if (reaped)
        pid = -1;
    if (rc != VMOP_OK)
        goto out;
    sim = calloc(1, sizeof(*sim));
    if (!sim) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    sim->pid = pid;
    sim->json = vbuf_take(&line);
    nl = sim->json ? strchr(sim->json, '\n') : NULL;
    if (nl)
        *nl = '\0';
    if (!sim->json) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    rc = parse_ready(sim, err);
    if (rc != VMOP_OK)
        goto out;

    *ret_sim = sim;
    sim = NULL;
    pid = -1;
out:
    if (pid > 0) {
        kill_and_reap(pid);
        if (sim)
            sim->pid = -1;
    }
    free_sim(sim);
    if (pfd[0] >= 0)
        close(pfd[0]);
    if (pfd[1] >= 0)
        close(pfd[1]);
    if (errfd >= 0)
        close(errfd);
    if (nullfd >= 0)
        close(nullfd);
    /* argv holds the password too */
    for (size_t i = 0; i < args.n; i++)
        explicit_bzero(args.v[i], strlen(args.v[i]));
    args_free(&args);
    vbuf_free_secure(&line);
    return rc;
}

vmop_rc vcsim_stop(struct vcsim *sim, struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;

    if (!sim)
        return VMOP_OK;
    if (sim->pid > 0) {
        kill(sim->pid, SIGTERM);
        if (!reap(sim->pid, VCSIM_STOP_TIMEOUT_MS, NULL)) {
            kill_and_reap(sim->pid);
            rc = vmop_fail(err, VMOP_E_TIMEOUT,
                           "vcsim-launcher (pid %d) ignored SIGTERM for %d ms; killed",
                           (int)sim->pid, VCSIM_STOP_TIMEOUT_MS);
        }
    }
    free_sim(sim);
    return rc;
}

const char *vcsim_moref(const struct vcsim *sim, const char *what)
{
    const cJSON *m, *v;

    if (!sim || !what)
        return NULL;
    m = cJSON_GetObjectItemCaseSensitive((const cJSON *)sim->parsed, "morefs");
    v = cJSON_GetObjectItemCaseSensitive(m, what);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const struct vcsim_item *vcsim_find_item(const struct vcsim *sim, const char *name,
                                         const struct vcsim_library **ret_lib)
{
    if (!sim || !name)
        return NULL;
    for (size_t i = 0; i < sim->n_libraries; i++) {
        const struct vcsim_library *l = &sim->libraries[i];
        for (size_t j = 0; j < l->n_items; j++) {
            if (l->items[j].name && strcmp(l->items[j].name, name) == 0) {
                if (ret_lib)
                    *ret_lib = l;
                return &l->items[j];
            }
        }
    }
    return NULL;
}
