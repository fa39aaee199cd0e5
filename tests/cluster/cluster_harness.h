/* cluster_harness.h: start and stop a real Kubernetes control plane (tests/cluster/cluster.sh:
 * etcd, kube-apiserver, kube-controller-manager) from C tests, optionally behind the fault proxy
 * (tests/cluster/faultproxy).
 *
 * Owns: a private temp directory (mkdtemp) holding everything cluster.sh writes (PKI, kubeconfig,
 * cluster.json, logs, etcd data) plus token-kubeconfig; the bounded run of `cluster.sh up` and
 * `cluster.sh down`; the fault proxy child process and its control API (POST/GET/DELETE /faults);
 * etcd compaction on demand; a reaper process that runs `cluster.sh down DIR` when the test
 * process dies without cluster_stop() (crash, SIGKILL, meson timeout); an atexit() handler that
 * stops what a normal exit() left running. Not here: any Kubernetes client code (tests use
 * operator/kube with c->kubeconfig or c->token_kubeconfig).
 *
 * Paths: cluster.sh from opts->cluster_sh, else $VMOP_CLUSTER_SH; the proxy from opts->faultproxy,
 * else $VMOP_FAULTPROXY (meson: `env : cluster_env`, `depends : faultproxy`).
 *
 * Cost: a start takes ~10 s. Start ONE cluster per test program (in main(), before the Check
 * runner) and isolate test cases by namespace; Check's forked test processes inherit the struct
 * and may use it read-only (and call cluster_faults()); only the process that started a cluster
 * stops it (cluster_stop() elsewhere just frees the struct). cluster_faults() needs libcurl's
 * global init (kube_global_init() or curl_global_init()) done in main().
 *
 * Threads: call cluster_start()/cluster_stop() from the main thread (the proxy gets SIGTERM when
 * the thread that started it exits). cluster_faults() may be called from any thread.
 * Secrets: c->token is the cluster-admin static token; never print it. token_kubeconfig contains
 * it (mode 0600).
 */
#ifndef VMOP_CLUSTER_HARNESS_H
#define VMOP_CLUSTER_HARNESS_H

#include <sys/types.h>

#include "vmop_err.h"

struct cluster_opts {
    int proxy;                  /* non-zero: start the fault proxy; c->url is the proxy's */
    const char *cluster_sh;     /* NULL: $VMOP_CLUSTER_SH */
    const char *faultproxy;     /* NULL: $VMOP_FAULTPROXY */
    const char *apiserver_args; /* extra kube-apiserver flags (CLUSTER_APISERVER_ARGS), or NULL */
    unsigned start_timeout_ms;  /* bound on `cluster.sh up`; 0: 180 s */
};

/* Owned by struct cluster, freed by cluster_stop(). Strings are never NULL ("" when absent). */
struct cluster {
    char *url;           /* where clients go: the proxy's URL with opts->proxy, else the
                          * apiserver's ("https://127.0.0.1:PORT") */
    char *apiserver_url; /* the apiserver itself (bypasses the proxy) */
    int port;            /* the port of url */
    char *token;         /* static cluster-admin bearer token (system:masters); secret */
    char *ca_file;       /* DIR/pki/ca.crt: the CA of the apiserver's (and proxy's) certificate */
    char *kubeconfig;    /* DIR/kubeconfig: admin client certificate, straight to the apiserver
                          * (a proxy cannot forward client certificates) */
    char *token_kubeconfig; /* DIR/token-kubeconfig: url + token + ca_file, namespace default */
    char *control_url;      /* the proxy's control API "http://127.0.0.1:C", "" without a proxy */
    char *bin;           /* directory of kube-apiserver, kube-controller-manager, kubectl, etcd */
    char *kubectl;       /* bin + "/kubectl" */
    char *dir;           /* the temp dir (removed by cluster_stop unless $VMOP_KEEP_TMP) */
    char *cluster_log;   /* DIR/cluster.log: what cluster.sh up/down printed */
    char *apiserver_log; /* DIR/kube-apiserver.log */
    char *controller_manager_log; /* DIR/kube-controller-manager.log */
    char *etcd_log;               /* DIR/etcd.log */
    char *proxy_log;              /* DIR/faultproxy.log ("" without a proxy) */
    pid_t proxy_pid;              /* -1 without a proxy */
    /* private */
    pid_t owner;      /* the process that started the cluster */
    pid_t reaper_pid; /* runs `cluster.sh down` when owner dies */
    int reaper_fd;    /* owner's end of the reaper's socket; -1 once released */
    char *cluster_sh;
};

/* Starts a cluster (and the proxy), bounded. opts may be NULL (no proxy). *ret: new struct
 * cluster, release with cluster_stop(). On failure nothing keeps running, the temp dir is removed
 * (kept with $VMOP_KEEP_TMP) and the tail of cluster.sh's output goes to stderr. */
vmop_rc cluster_start(const struct cluster_opts *opts, struct cluster **ret, struct vmop_err *err);

/* cluster_start() or print the error and exit(EXIT_FAILURE): for main(). */
struct cluster *cluster_start_or_exit(const struct cluster_opts *opts);

/* Stops the proxy, runs `cluster.sh down DIR` (bounded), removes DIR unless $VMOP_KEEP_TMP is
 * set, frees c. NULL is a no-op. In a process other than the one that started c (a Check fork)
 * it only frees c. */
vmop_rc cluster_stop(struct cluster *c, struct vmop_err *err);

/* cluster_stop() and print a failure to stderr. */
void cluster_stop_or_warn(struct cluster *c);

/* Sends method ("POST", "DELETE", "GET") to the proxy's control API /faults with json as the body
 * (may be NULL), e.g. cluster_faults(c, "POST", "{\"dropWatches\":true}", &err). VMOP_E_INVALID
 * when the proxy refuses the spec (its message in err), VMOP_E_UNSUPPORTED without a proxy. */
vmop_rc cluster_faults(const struct cluster *c, const char *method, const char *json,
                       struct vmop_err *err);

/* GET /faults: the proxy's state as JSON text (latencyMs, rules, openWatches, requests, injected,
 * droppedWatches). *ret_json: malloc'd, free() it. */
vmop_rc cluster_faults_state(const struct cluster *c, char **ret_json, struct vmop_err *err);

/* Compacts etcd at its current revision, as kube-apiserver does every --etcd-compaction-interval
 * (5 min by default), through etcd's JSON gateway: resourceVersions older than that are gone
 * where etcd serves them (watches and continue tokens of resources without a watch cache, e.g.
 * opts.apiserver_args "--watch-cache-sizes=podtemplates#0"). *ret_rev (may be NULL): the revision.
 */
vmop_rc cluster_etcd_compact(const struct cluster *c, long long *ret_rev, struct vmop_err *err);

/* Runs the pinned kubectl as cluster admin (--kubeconfig c->kubeconfig) with args (NULL-
 * terminated, without argv[0]), bounded by timeout_ms (0: 60 s). Its stdout and stderr are
 * appended to DIR/kubectl.log; a non-zero exit is VMOP_E_KUBE with the tail of that output. */
vmop_rc cluster_kubectl(const struct cluster *c, const char *const *args, unsigned timeout_ms,
                        struct vmop_err *err);

/* `cluster.sh user DIR NAME [GROUP]`: a client-certificate user (CN=NAME, O=GROUP when not
 * NULL), no RBAC bindings. *ret_kubeconfig: malloc'd path DIR/NAME.kubeconfig (namespace NAME). */
vmop_rc cluster_user(const struct cluster *c, const char *name, const char *group,
                     char **ret_kubeconfig, struct vmop_err *err);

#endif
