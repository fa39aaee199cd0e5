/* main.c: the vmop binary: flag parsing; the process lifecycle is in vmop.c. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_config.h"
#include "log.h"
#include "vm_controller.h"
#include "vmop.h"
#include "vmop_err.h"

#ifndef VMOP_VERSION
#define VMOP_VERSION "0.1.0"
#endif

static void usage(FILE *out, const struct vmop_config *d)
{
    fprintf(out,
            "Usage: vmop [OPTIONS]\n"
            "A VM Service-style operator: reconciles vmoperator.vmware.com resources against\n"
            "vCenter.\n\n"
            "Options:\n"
            "  --kubeconfig PATH        kubeconfig file (default: $KUBECONFIG, then in-cluster,\n"
            "                           then ~/.kube/config)\n"
            "  --incluster-dir DIR      the ServiceAccount directory (token, ca.crt, namespace)\n"
            "                           read in-cluster (default: %s)\n"
            "  --namespace NS           the operator's namespace: credentials Secrets, Lease\n"
            "                           (default: %s)\n"
            "  --leader-elect           run leader election (default: off)\n"
            "  --lease-namespace NS     Lease namespace (default: --namespace)\n"
            "  --lease-name NAME        Lease name (default: %s)\n"
            "  --workers N              VirtualMachine reconcile workers (default: %u)\n"
            "  --max-concurrent-creates N\n"
            "                           VMs being created at once; a create past it waits,\n"
            "                           re-queued, while the other workers go on (default: 0,\n"
            "                           meaning %d%% of --workers, at least 1)\n"
            "  --kube-qps N             Kubernetes API requests a second, retries included\n"
            "                           (client-side token bucket; 0: unlimited; default: %g,\n"
            "                           above controller-runtime's 20: vmop sends few requests\n"
            "                           per VM and a 1,000-VM apply should not wait on them)\n"
            "  --kube-burst N           requests sent at once before --kube-qps paces them\n"
            "                           (default: %d; controller-runtime's: 30)\n"
            "  --health-addr HOST:PORT  /healthz /readyz /metrics; \"\" disables\n"
            "                           (default: %s)\n"
            "  --webhook-addr HOST:PORT the admission and conversion webhook server (HTTPS, on\n"
            "                           every replica); \"\" disables (default: off)\n"
            "  --webhook-cert-dir DIR   its tls.crt and tls.key, reloaded when they change\n"
            "                           (default: %s)\n"
            "  --service-account NAME   vmop's own ServiceAccount in --namespace: privileged at\n"
            "                           admission (default: %s)\n"
            "  --privileged-users LIST  more users (comma-separated) who may set privileged-only\n"
            "                           fields (system:masters and kubernetes-admin always may)\n"
            "  --privileged-groups LIST more groups (comma-separated) who may\n"
            "  --log-level LEVEL        debug, info, warn, error (default: info)\n"
            "  --trysoft-timeout SECS   guest shutdown wait before powering off hard\n"
            "                           (default: %ld)\n"
            "  --resync-period SECS     re-reconcile every VM this often; changes in vCenter\n"
            "                           arrive sooner through its change feed (default: %ld)\n"
            "  --image-sync-period SECS re-read the content libraries this often (default: %ld)\n"
            "  --drain-timeout SECS     on SIGTERM, wait this long for reconciles (default: %ld)\n"
            "  --image-cache-grace SECS a superseded or unused image cache template is destroyed\n"
            "                           after this long (0: at once; default: %ld)\n"
            "  --feed-max-endpoints N   vCenters with a change feed; past it changes are seen\n"
            "                           at the resync (default and most: %u)\n"
            "  --feed-max-folders N     VM folders (namespaces) one change feed watches, one\n"
            "                           vCenter connection each (default and most: %u)\n"
            "  --version                print the version and exit\n"
            "  -h, --help               print this help and exit\n",
            KUBE_INCLUSTER_DIR, d->ns, d->lease_name, d->workers, VMC_DEFAULT_CREATES_PCT,
            d->kube_qps, d->kube_burst, d->health_addr, d->webhook_cert_dir, d->service_account,
            d->trysoft_timeout_ms / 1000, d->resync_ms / 1000, d->image_sync_ms / 1000,
            d->drain_ms / 1000, d->image_cache_grace_s, d->feed_max_endpoints, d->feed_max_folders);
}

/* Parses a non-negative decimal number of at most max; -1 when invalid. */
static long parse_num(const char *s, long max)
{
    char *end = NULL;
    long v;
    if (!s || !*s)
        return -1;
    v = strtol(s, &end, 10);
    if (*end || v < 0 || v > max)
        return -1;
    return v;
}

/* --workers, --max-concurrent-creates, --kube-qps, --kube-burst: -1 when the value is invalid. */
static int concurrency_flag(int c, const char *arg, struct vmop_config *cfg)
{
    long v;
    switch (c) {
    case 'w':
        if ((v = parse_num(arg, 256)) < 1)
            return -1;
        cfg->workers = (unsigned)v;
        break;
    case 'M':
        if ((v = parse_num(arg, 256)) < 0)
            return -1;
        cfg->max_creates = (unsigned)v;
        break;
    case 'Q':
        if ((v = parse_num(arg, 100000)) < 0)
            return -1;
        cfg->kube_qps = (double)v;
        break;
    case 'B':
        if ((v = parse_num(arg, 100000)) < 1)
            return -1;
        cfg->kube_burst = (int)v;
        break;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"kubeconfig", required_argument, NULL, 'k'},
        {"incluster-dir", required_argument, NULL, 'I'},
        {"namespace", required_argument, NULL, 'n'},
        {"leader-elect", optional_argument, NULL, 'L'},
        {"lease-namespace", required_argument, NULL, 'N'},
        {"leader-election-namespace", required_argument, NULL, 'N'}, /* controller-runtime name */
        {"lease-name", required_argument, NULL, 'l'},
        {"workers", required_argument, NULL, 'w'},
        {"max-concurrent-creates", required_argument, NULL, 'M'},
        {"kube-qps", required_argument, NULL, 'Q'},
        {"kube-burst", required_argument, NULL, 'B'},
        {"health-addr", required_argument, NULL, 'H'},
        {"webhook-addr", required_argument, NULL, 'W'},
        {"webhook-cert-dir", required_argument, NULL, 'C'},
        {"service-account", required_argument, NULL, 'S'},
        {"privileged-users", required_argument, NULL, 'U'},
        {"privileged-groups", required_argument, NULL, 'P'},
        {"log-level", required_argument, NULL, 'v'},
        {"trysoft-timeout", required_argument, NULL, 't'},
        {"resync-period", required_argument, NULL, 'r'},
        {"image-sync-period", required_argument, NULL, 'i'},
        {"drain-timeout", required_argument, NULL, 'd'},
        {"image-cache-grace", required_argument, NULL, 'G'},
        {"feed-max-endpoints", required_argument, NULL, 'E'},
        {"feed-max-folders", required_argument, NULL, 'F'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct vmop_config cfg, defaults;
    int c;
    long v;

    vmop_config_defaults(&cfg);
    defaults = cfg;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'k':
            cfg.kubeconfig = optarg;
            break;
        case 'I':
            cfg.incluster_dir = optarg;
            break;
        case 'n':
            cfg.ns = optarg;
            break;
        case 'L':
            cfg.leader_elect = !optarg || !strcmp(optarg, "true") || !strcmp(optarg, "1");
            break;
        case 'N':
            cfg.lease_ns = optarg;
            break;
        case 'l':
            cfg.lease_name = optarg;
            break;
        case 'w':
        case 'M':
        case 'Q':
        case 'B':
            if (concurrency_flag(c, optarg, &cfg) < 0)
                goto bad;
            break;
        case 'H':
            cfg.health_addr = optarg;
            break;
        case 'W':
            cfg.webhook_addr = optarg;
            break;
        case 'C':
            if (!*optarg)
                goto bad;
            cfg.webhook_cert_dir = optarg;
            break;
        case 'S':
            if (!*optarg)
                goto bad;
            cfg.service_account = optarg;
            break;
        case 'U':
            cfg.privileged_users = optarg;
            break;
        case 'P':
            cfg.privileged_groups = optarg;
            break;
        case 'v':
            if (vlog_level_parse(optarg) < 0)
                goto bad;
            vlog_set_level((enum vlog_level)vlog_level_parse(optarg));
            break;
        case 't':
            if ((v = parse_num(optarg, 86400)) < 0)
                goto bad;
            cfg.trysoft_timeout_ms = v * 1000;
            break;
        case 'r':
            if ((v = parse_num(optarg, 86400 * 7)) < 0)
                goto bad;
            cfg.resync_ms = v * 1000;
            break;
        case 'i':
            if ((v = parse_num(optarg, 86400 * 7)) < 1)
                goto bad;
            cfg.image_sync_ms = v * 1000;
            break;
        case 'd':
            if ((v = parse_num(optarg, 3600)) < 0)
                goto bad;
            cfg.drain_ms = v * 1000;
            break;
        case 'G':
            if ((v = parse_num(optarg, 86400 * 30)) < 0)
                goto bad;
            cfg.image_cache_grace_s = v;
            break;
        case 'E':
            if ((v = parse_num(optarg, VMC_FEEDS_MAX)) < 1)
                goto bad;
            cfg.feed_max_endpoints = (unsigned)v;
            break;
        case 'F':
            if ((v = parse_num(optarg, VMC_FEED_FOLDERS)) < 1)
                goto bad;
            cfg.feed_max_folders = (unsigned)v;
            break;
        case 'V':
            printf("vmop %s\n", VMOP_VERSION);
            return 0;
        case 'h':
            usage(stdout, &defaults);
            return 0;
        default:
            usage(stderr, &defaults);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "vmop: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    return vmop_run(&cfg);
bad:
    fprintf(stderr, "vmop: invalid value '%s' (see --help)\n", optarg ? optarg : "");
    return 2;
}
