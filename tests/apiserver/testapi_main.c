/* testapi_main.c: kube-testapi, a Kubernetes API server for tests (kubectl 1.32 and the project's
 * client talk to it). Owns: option parsing, TLS material, the MHD daemon, the GC thread, the ready
 * line on stdout, the kubeconfig file, and the shutdown on SIGTERM/SIGINT or parent death.
 *
 * Usage: kube-testapi [--listen 127.0.0.1:0] [--tls] [--token T] [--kubeconfig-out PATH]
 *                     [--ca-out PATH] [--watch-window N] [--fault JSON]... [--die-with-parent]
 * Ready line (one JSON object):
 * {"url":...,"port":N,"token":...,"ca_file":...,"kubeconfig":...,"pid":N}
 */
#include "ta_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

struct opts {
    const char *listen, *token, *kubeconfig, *ca_out;
    int tls, die_with_parent;
    size_t window;
    const char *faults[16];
    size_t n_faults;
};

static void usage(void)
{
    fprintf(stderr, "usage: kube-testapi [--listen 127.0.0.1:0] [--tls] [--token T] "
                    "[--kubeconfig-out PATH] [--ca-out PATH] [--watch-window N] [--fault JSON]... "
                    "[--die-with-parent]\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    int i;
    memset(o, 0, sizeof(*o));
    o->listen = "127.0.0.1:0";
    o->window = TA_DEFAULT_WINDOW;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--tls") == 0) {
            o->tls = 1;
        } else if (strcmp(a, "--die-with-parent") == 0) {
            o->die_with_parent = 1;
        } else if (strcmp(a, "--listen") == 0 && v) {
            o->listen = v;
            i++;
        } else if (strcmp(a, "--token") == 0 && v) {
            o->token = v;
            i++;
        } else if (strcmp(a, "--kubeconfig-out") == 0 && v) {
            o->kubeconfig = v;
            i++;
        } else if (strcmp(a, "--ca-out") == 0 && v) {
            o->ca_out = v;
            i++;
        } else if (strcmp(a, "--watch-window") == 0 && v) {
            char *end;
            unsigned long n = strtoul(v, &end, 10);
            if (*end || n == 0 || n > 10000000) {
                fprintf(stderr, "kube-testapi: --watch-window must be 1..10000000\n");
                return -1;
            }
            o->window = n;
            i++;
        } else if (strcmp(a, "--fault") == 0 && v) {
            if (o->n_faults == sizeof(o->faults) / sizeof(o->faults[0])) {
                fprintf(stderr, "kube-testapi: too many --fault options\n");
                return -1;
            }
            o->faults[o->n_faults++] = v;
            i++;
        } else {
            usage();
            return -1;
        }
    }
    return 0;
}

static int write_file(const char *path, const char *data, mode_t mode)
{
    char tmp[PATH_MAX];
    size_t n = strlen(data);
    int fd;
    if (snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid()) >= (int)sizeof(tmp))
        return -1;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    if (write(fd, data, n) != (ssize_t)n || close(fd) != 0) {
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static char *kubeconfig_text(const char *url, const char *ca_file, const char *token)
{
    struct vbuf b;
    vbuf_init(&b, 64 << 10);
    vbuf_adds(&b, "apiVersion: v1\nkind: Config\nclusters:\n- name: testapi\n  cluster:\n");
    vbuf_addf(&b, "    server: \"%s\"\n", url);
    if (ca_file)
        vbuf_addf(&b, "    certificate-authority: \"%s\"\n", ca_file);
    vbuf_adds(&b, "contexts:\n- name: testapi\n  context:\n    cluster: testapi\n"
                  "    user: testapi\n    namespace: default\ncurrent-context: testapi\n"
                  "users:\n- name: testapi\n  user:");
    if (token)
        vbuf_addf(&b, "\n    token: \"%s\"\n", token);
    else
        vbuf_adds(&b, " {}\n");
    vbuf_adds(&b, "preferences: {}\n");
    return vbuf_take(&b);
}

static int parse_listen(const char *s, struct sockaddr_in *sin)
{
    char host[64];
    const char *colon = strrchr(s, ':');
    char *end;
    unsigned long port;
    if (!colon || (size_t)(colon - s) >= sizeof(host))
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    port = strtoul(colon + 1, &end, 10);
    if (*end || port > 65535)
        return -1;
    memset(sin, 0, sizeof(*sin));
    sin->sin_family = AF_INET;
    sin->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
        return -1;
    return 0;
}

static int json_token_ok(const char *t)
{
    for (; *t; t++)
        if (*t == '"' || *t == '\\' || (unsigned char)*t < 0x20)
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    struct opts o;
    struct ta_server s;
    struct vmop_err err = {0};
    struct MHD_Daemon *d = NULL;
    struct sockaddr_in sin;
    char *ca_pem = NULL, *cert_pem = NULL, *key_pem = NULL, *kc = NULL;
    char url[128], ca_file[PATH_MAX] = "", tmpdir[PATH_MAX - 64] = "";
    const union MHD_DaemonInfo *info;
    unsigned flags;
    pthread_t gc;
    int gc_started = 0, status = 1, port;
    sigset_t sigs;
    pid_t parent = getppid();
    size_t i;

    if (parse_opts(argc, argv, &o))
        return 2;
    if (parse_listen(o.listen, &sin)) {
        fprintf(stderr, "kube-testapi: --listen wants IPv4:PORT, got '%s'\n", o.listen);
        return 2;
    }
    if (o.token && (!*o.token || !json_token_ok(o.token))) {
        fprintf(stderr, "kube-testapi: --token must be non-empty printable text\n");
        return 2;
    }
    if (o.die_with_parent) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            return 1;
    }
    /* every thread inherits the blocked signals; main waits for them with sigwait */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    memset(&s, 0, sizeof(s));
    if (ta_store_init(&s.st, o.window, &err))
        goto fail_early;
    s.token = o.token ? strdup(o.token) : NULL;
    s.tls = o.tls;
    if (ta_builtin_register(&s, &err))
        goto out;
    for (i = 0; i < o.n_faults; i++)
        if (ta_fault_add_spec(&s, o.faults[i], &err))
            goto out;
    if (o.tls && ta_tls_generate(&ca_pem, &cert_pem, &key_pem, &err))
        goto out;

    flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
            MHD_USE_ERROR_LOG;
    if (o.tls)
        flags |= MHD_USE_TLS;
    if (o.tls)
        d = MHD_start_daemon(
            flags, 0, NULL, NULL, ta_http_access, &s, MHD_OPTION_SOCK_ADDR, &sin,
            MHD_OPTION_NOTIFY_COMPLETED, ta_http_completed, &s, MHD_OPTION_UNESCAPE_CALLBACK,
            ta_http_unescape, NULL, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)3600,
            MHD_OPTION_HTTPS_MEM_KEY, key_pem, MHD_OPTION_HTTPS_MEM_CERT, cert_pem, MHD_OPTION_END);
    else
        d = MHD_start_daemon(flags, 0, NULL, NULL, ta_http_access, &s, MHD_OPTION_SOCK_ADDR, &sin,
                             MHD_OPTION_NOTIFY_COMPLETED, ta_http_completed, &s,
                             MHD_OPTION_UNESCAPE_CALLBACK, ta_http_unescape, NULL,
                             MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)3600, MHD_OPTION_END);
    if (!d) {
        vmop_fail(&err, VMOP_E_TRANSPORT, "cannot listen on %s", o.listen);
        goto out;
    }
    info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    port = info ? info->port : ntohs(sin.sin_port);
    snprintf(url, sizeof(url), "%s://%s:%d", o.tls ? "https" : "http", inet_ntoa(sin.sin_addr),
             port);
    if (ta_gc_start(&s, &gc, &err))
        goto out;
    gc_started = 1;

    if (o.tls) {
        if (o.ca_out) {
            snprintf(ca_file, sizeof(ca_file), "%s", o.ca_out);
        } else if (o.kubeconfig) {
            snprintf(ca_file, sizeof(ca_file), "%s.ca.crt", o.kubeconfig);
        } else {
            const char *t = getenv("TMPDIR");
            snprintf(tmpdir, sizeof(tmpdir), "%s/kube-testapi.XXXXXX", t && *t ? t : "/tmp");
            if (!mkdtemp(tmpdir)) {
                tmpdir[0] = '\0';
                vmop_fail(&err, VMOP_E_INTERNAL, "cannot create a directory for the CA");
                goto out;
            }
            snprintf(ca_file, sizeof(ca_file), "%s/ca.crt", tmpdir);
        }
        if (write_file(ca_file, ca_pem, 0644)) {
            vmop_fail(&err, VMOP_E_INTERNAL, "cannot write the CA file %s", ca_file);
            goto out;
        }
    }
    if (o.kubeconfig) {
        kc = kubeconfig_text(url, ca_file[0] ? ca_file : NULL, o.token);
        if (!kc || write_file(o.kubeconfig, kc, 0600)) {
            vmop_fail(&err, VMOP_E_INTERNAL, "cannot write the kubeconfig %s", o.kubeconfig);
            goto out;
        }
    }
    {
        cJSON *ready = cJSON_CreateObject();
        char *t;
        cJSON_AddStringToObject(ready, "url", url);
        cJSON_AddNumberToObject(ready, "port", port);
        if (o.token)
            cJSON_AddStringToObject(ready, "token", o.token);
        else
            cJSON_AddNullToObject(ready, "token");
        if (ca_file[0])
            cJSON_AddStringToObject(ready, "ca_file", ca_file);
        else
            cJSON_AddNullToObject(ready, "ca_file");
        if (o.kubeconfig)
            cJSON_AddStringToObject(ready, "kubeconfig", o.kubeconfig);
        cJSON_AddNumberToObject(ready, "pid", (double)getpid());
        t = cJSON_PrintUnformatted(ready);
        cJSON_Delete(ready);
        if (!t) {
            vmop_fail(&err, VMOP_E_NOMEM, "out of memory");
            goto out;
        }
        printf("%s\n", t);
        fflush(stdout);
        free(t);
    }
    for (;;) {
        int sig = 0;
        struct timespec ts = {1, 0};
        siginfo_t si;
        sig = sigtimedwait(&sigs, &si, &ts);
        if (sig > 0)
            break;
        if (o.die_with_parent && getppid() != parent)
            break;
    }
    status = 0;
out:
    pthread_mutex_lock(&s.st.lock);
    s.st.shutting_down = 1;
    pthread_cond_broadcast(&s.st.changed);
    pthread_cond_broadcast(&s.st.gc_wake);
    pthread_mutex_unlock(&s.st.lock);
    if (d)
        MHD_stop_daemon(d);
    if (gc_started)
        pthread_join(gc, NULL);
    ta_store_deinit(&s.st);
    free(s.token);
fail_early:
    if (tmpdir[0]) {
        unlink(ca_file);
        rmdir(tmpdir);
    }
    free(ca_pem);
    free(cert_pem);
    if (key_pem)
        explicit_bzero(key_pem, strlen(key_pem));
    free(key_pem);
    free(kc);
    if (err.rc) {
        fprintf(stderr, "kube-testapi: %s\n", err.msg);
        return 1;
    }
    return status;
}
