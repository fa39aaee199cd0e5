/* vmop.h: the operator process: configuration, start-up order, leader election, and shutdown.
 *
 * Owns: building the Kubernetes client, the event recorder, the vCenter connection cache, the
 * controllers (VirtualMachine, image catalog, VirtualMachineService when built), the health
 * server and the webhook server (on every replica, leader or not) from a struct vmop_config,
 * running until SIGTERM/SIGINT (or loss of leadership), and tearing down in order: stop intake
 * (informers), drain the workers with a deadline, free the controllers, release the Lease last.
 */
#ifndef VMOP_VMOP_H
#define VMOP_VMOP_H

struct vmop_config {
    const char *kubeconfig;    /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
    const char *incluster_dir; /* NULL: the ServiceAccount directory of a pod */
    const char *ns;            /* the operator's own namespace (credentials Secrets, Lease) */
    int leader_elect;
    const char *lease_ns;        /* default: ns */
    const char *lease_name;      /* default: vmop-leader */
    unsigned workers;            /* VM controller workers */
    unsigned max_creates;        /* VMs created at once (vmc_opts.max_creates); 0: 80% of workers */
    double kube_qps;             /* Kubernetes API client-side rate limit (kube_client_opts.qps) */
    int kube_burst;              /* its bucket size (kube_client_opts.burst) */
    const char *health_addr;     /* "127.0.0.1:8081"; NULL or "" disables */
    long trysoft_timeout_ms;     /* Soft/TrySoft guest shutdown wait */
    long resync_ms;              /* periodic re-reconcile of every VM */
    long image_sync_ms;          /* content library sync period */
    long drain_ms;               /* shutdown drain deadline */
    unsigned feed_max_endpoints; /* vCenter change feeds (vm_controller.h) */
    unsigned feed_max_folders;   /* VM folders per change feed */
    long image_cache_grace_s; /* garbage cache templates wait this long (clone_source_gc.h); 0: none
                               */
    const char *webhook_addr; /* the webhook server's HOST:PORT (every replica); "" disables */
    const char *webhook_cert_dir; /* tls.crt + tls.key, reloaded when they change */
    /* Who is privileged at admission (api/api_admit.h) besides system:masters and
     * kubernetes-admin: vmop's ServiceAccount (in ns) and comma-separated users and groups. */
    const char *service_account;
    const char *privileged_users, *privileged_groups;
};

/* Sets the defaults documented in `vmop --help`. */
void vmop_config_defaults(struct vmop_config *cfg);

/* Runs the operator until a signal (SIGTERM/SIGINT) or a fatal error. Returns the process exit
 * code: 0 after a clean shutdown, 1 on a start-up failure or lost leadership. */
int vmop_run(const struct vmop_config *cfg);

#endif
