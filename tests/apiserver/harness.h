/* harness.h: start and stop kube-testapi (the Kubernetes-API test server) from C tests.
 *
 * Owns: the server child process (fork/exec with --die-with-parent, SIGTERM then SIGKILL on stop),
 * a private temp directory (mkdtemp) holding the kubeconfig, the CA file (TLS) and the server's
 * stderr log (apiserver.log), and the parsed ready line. Not here: any Kubernetes client code.
 *
 * The server path comes from opts->binary, else $VMOP_TESTAPI (meson: `env : apiserver_env`,
 * `depends : kube_testapi`).
 * Threads: call apiserver_start()/apiserver_stop() from a thread that outlives the server (normally
 * the test's main thread). Not thread-safe per struct apiserver.
 * Secrets: a->token is a test token; do not print it.
 */
#ifndef VMOP_APISERVER_HARNESS_H
#define VMOP_APISERVER_HARNESS_H

#include <stddef.h>
#include <sys/types.h>

#include "vmop_err.h"

struct apiserver_opts {
    const char *binary;        /* NULL: $VMOP_TESTAPI */
    int tls;                   /* non-zero: https with a fresh CA (a->ca_file) */
    const char *token;         /* bearer token required by the server, or NULL (none) */
    size_t watch_window;       /* events kept for watch resume; 0: server default (10000) */
    const char *const *faults; /* NULL-terminated --fault JSON specs, or NULL */
    unsigned start_timeout_ms; /* 0: 15 s */
};

/* Owned by struct apiserver, freed by apiserver_stop(). Strings are never NULL ("" when absent). */
struct apiserver {
    pid_t pid;
    int port;
    char *url;        /* "http://127.0.0.1:PORT" or https */
    char *token;      /* "" without a token */
    char *ca_file;    /* "" without TLS */
    char *dir;        /* the temp dir (removed by apiserver_stop) */
    char *kubeconfig; /* dir + "/kubeconfig" (context "testapi", namespace default) */
    char *log;        /* dir + "/apiserver.log" (the server's stderr) */
};

/* Starts a server and waits (bounded) for its ready line. opts may be NULL (plain HTTP, no token).
 * *ret: new struct apiserver, release with apiserver_stop(). On failure no process remains. */
vmop_rc apiserver_start(const struct apiserver_opts *opts, struct apiserver **ret,
                        struct vmop_err *err);

/* SIGTERM, waits up to 10 s, then SIGKILL; reaps the child, removes the temp dir, frees a.
 * NULL is a no-op. Returns VMOP_E_TIMEOUT if SIGKILL was needed (the process is gone either way).
 */
vmop_rc apiserver_stop(struct apiserver *a, struct vmop_err *err);

#endif
