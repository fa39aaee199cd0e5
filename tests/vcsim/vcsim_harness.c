/* vcsim_harness.c: runs vcsim-launcher as a child process and parses its ready line.
 *
 * Owns: argv building and the cJSON parse of the ready line into struct vcsim. The child process
 * itself (fork/exec, the bounded wait for the line, the SIGTERM/SIGKILL stop) is
 * tests/common/proc.h. See vcsim_harness.h.
 */
#include "vcsim_harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "proc.h"
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
    int outfd = -1;
    pid_t pid = -1;
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
    rc = vmop_proc_spawn(launcher, args.v, o->stderr_path, &pid, &outfd, err);
    if (rc != VMOP_OK)
        goto out;
    rc = vmop_proc_read_line(outfd, pid, "vcsim-launcher",
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
        vmop_proc_kill(pid);
        if (sim)
            sim->pid = -1;
    }
    free_sim(sim);
    if (outfd >= 0)
        close(outfd);
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
    if (sim->pid > 0)
        rc = vmop_proc_stop(sim->pid, "vcsim-launcher", VCSIM_STOP_TIMEOUT_MS, err);
    free_sim(sim);
    return rc;
}

struct vcsim *vcsim_start_or_exit(const struct vcsim_opts *opts)
{
    struct vmop_err err = {0};
    struct vcsim *sim = NULL;

    if (vcsim_start(opts, &sim, &err) != VMOP_OK) {
        fprintf(stderr, "cannot start the simulator: %s\n", err.msg);
        exit(EXIT_FAILURE);
    }
    return sim;
}

void vcsim_stop_or_warn(struct vcsim *sim)
{
    struct vmop_err err = {0};

    if (vcsim_stop(sim, &err) != VMOP_OK)
        fprintf(stderr, "stopping the simulator: %s\n", err.msg);
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
