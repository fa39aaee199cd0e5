/* vmop.c: the operator process lifecycle (see vmop.h). */
#include "vmop.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adm_convert.h"
#include "adm_vm.h"
#include "health.h"
#include "image_controller.h"
#include "clone_source_gc.h"
#include "kube_client.h"
#include "kube_config.h"
#include "kube_events.h"
#include "kube_lease.h"
#include "vmop_clock.h"
#include "log.h"
#include "metrics.h"
#include "connections.h"
#include "vm_controller.h"
#include "vmservice.h"
#include "wh_server.h"

#define LOGGER "vmop"

void vmop_config_defaults(struct vmop_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->ns = "vmop-system";
    cfg->lease_name = "vmop-leader";
    cfg->workers = 4;
    cfg->max_creates = 0; /* VMC_DEFAULT_CREATES_PCT of the workers, at least 1 */
    /* controller-runtime's are 20/30; vmop sends few requests per VM, and a 1,000-VM apply
     * should not wait on its own client */
    cfg->kube_qps = 100;
    cfg->kube_burst = 200;
    cfg->health_addr = "127.0.0.1:8081";
    cfg->trysoft_timeout_ms = 120000;
    /* the change feeds carry every change in vCenter, and a VM no live feed covers is looked at
     * again within 10 minutes anyway (reconcile_rules.c): the resync is only the backstop */
    cfg->resync_ms = 3600000;
    cfg->image_sync_ms = 300000;
    cfg->drain_ms = 20000;
    cfg->feed_max_endpoints = VMC_FEEDS_MAX;
    cfg->feed_max_folders = VMC_FEED_FOLDERS;
    cfg->image_cache_grace_s = CSGC_GRACE_DEFAULT_S;
    cfg->webhook_addr = "";
    cfg->service_account = "vmop";
    cfg->webhook_cert_dir = "/tmp/k8s-webhook-server/serving-certs"; /* controller-runtime's */
}

struct proc {
    const struct vmop_config *cfg;
    struct kube_client *kc;
    struct kube_recorder *rec;
    struct vcenters *vcs;
    struct vmc *vmc;
    struct imgc *imgc;
    struct vmsvc *svc;
    struct kube_elector *el;
    struct kube_client *lease_kc; /* the elector's own client (bounded, no retries) */
    struct health *health;
    struct wh_server *webhook;        /* admission + conversion webhooks, on every replica */
    struct adm_vm adm_vm;             /* the VirtualMachine webhooks' caches (borrowed from vmc) */
    char **priv_users, **priv_groups; /* --privileged-users / -groups, split (owned) */
    struct metrics *metrics;          /* the registry behind /metrics (operator/metrics.h) */
    struct metrics_std std;
    int leading; /* atomic */
    int lost;    /* atomic: leadership lost */
    int running; /* atomic: controllers' workers started */
};

static void on_started(void *ud)
{
    struct proc *p = ud;
    vlog(VLOG_INFO, LOGGER, NULL, "became the leader");
    __atomic_store_n(&p->leading, 1, __ATOMIC_RELEASE);
    metrics_std_set_leader(p->metrics ? &p->std : NULL, 1);
}

static void on_stopped(void *ud)
{
    struct proc *p = ud;
    if (__atomic_load_n(&p->leading, __ATOMIC_ACQUIRE))
        __atomic_store_n(&p->lost, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&p->leading, 0, __ATOMIC_RELEASE);
    metrics_std_set_leader(p->metrics ? &p->std : NULL, 0);
}

/* The fence every mutating worker asks (vm_controller, vmsync): without leader election always
 * yes; with it, only while the Lease was renewed within the renew deadline. */
static int may_act(void *ud)
{
    struct proc *p = ud;
    return !p->cfg->leader_elect || (p->el && kube_elector_lease_fresh(p->el));
}

static int ready_cb(void *ud)
{
    struct proc *p = ud;
    return p->vmc && vmc_synced(p->vmc);
}

static long rss_peak_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "VmHWM:", 6)) {
            kb = strtol(line + 6, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}

/* /metrics: the registry (operator/metrics.h); every module's own numbers are families in it. */
static void metrics_cb(void *ud, struct vbuf *out)
{
    struct proc *p = ud;
    struct vmop_err err = {0};
    if (p->metrics && metrics_render(p->metrics, out, &err) != VMOP_OK)
        vlog_err(VLOG_WARN, LOGGER, NULL, &err, "metrics not rendered");
}

/* The process's own numbers: vCenter clients, the Kubernetes client, peak memory, the
 * VirtualMachineService controller and the webhook server (read when the metrics are rendered;
 * a module not built reads 0). */
static double read_soap_calls(void *ud)
{
    struct vim_stats vs;
    uint64_t clients = 0;
    vcenters_stats(((struct proc *)ud)->vcs, &vs, &clients);
    return (double)vs.soap_calls;
}

static double read_logins(void *ud)
{
    struct vim_stats vs;
    uint64_t clients = 0;
    vcenters_stats(((struct proc *)ud)->vcs, &vs, &clients);
    return (double)vs.logins;
}

static double read_clients(void *ud)
{
    struct vim_stats vs;
    uint64_t clients = 0;
    vcenters_stats(((struct proc *)ud)->vcs, &vs, &clients);
    return (double)clients;
}

static double read_kube_requests(void *ud)
{
    return (double)kube_client_requests(((struct proc *)ud)->kc);
}

static double read_kube_retries(void *ud)
{
    return (double)kube_client_retries(((struct proc *)ud)->kc);
}

static double read_kube_throttled(void *ud)
{
    return (double)kube_client_throttled(((struct proc *)ud)->kc);
}

static double read_kube_throttled_s(void *ud)
{
    return (double)kube_client_throttled_ms(((struct proc *)ud)->kc) / 1000.0;
}

static double read_peak_rss(void *ud)
{
    (void)ud;
    return (double)rss_peak_kb() * 1024;
}

/* The allocator's view of the heap (glibc mallinfo2: every arena plus mmap'd blocks): what is in
 * use and what is free but still held. With RSS beside them they tell live data from what the
 * allocator keeps after a wave of creates. 0 without glibc. */
static double read_heap_inuse(void *ud)
{
    (void)ud;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 mi = mallinfo2();
    return (double)(mi.uordblks + mi.hblkhd);
#else
    return 0;
#endif
}

static double read_heap_free(void *ud)
{
    (void)ud;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 mi = mallinfo2();
    return (double)mi.fordblks;
#else
    return 0;
#endif
}

static struct vmsvc_stats svc_stats(void *ud)
{
    struct vmsvc_stats ss = {0};
    if (((struct proc *)ud)->svc)
        vmsvc_get_stats(((struct proc *)ud)->svc, &ss);
    return ss;
}

static double read_svc_reconciles(void *ud)
{
    return (double)svc_stats(ud).reconciles;
}

static double read_svc_failures(void *ud)
{
    return (double)svc_stats(ud).failures;
}

static double read_svc_writes(void *ud)
{
    return (double)svc_stats(ud).writes;
}

static struct wh_server_stats wh_stats(void *ud)
{
    struct wh_server_stats ws = {0};
    if (((struct proc *)ud)->webhook)
        wh_server_stats(((struct proc *)ud)->webhook, &ws);
    return ws;
}

static double read_wh_requests(void *ud)
{
    return (double)wh_stats(ud).requests;
}

static double read_wh_http_errors(void *ud)
{
    return (double)wh_stats(ud).http_errors;
}

static double read_wh_timeouts(void *ud)
{
    return (double)wh_stats(ud).timeouts;
}

static double read_wh_accepted(void *ud)
{
    return (double)wh_stats(ud).accepted;
}

static double read_wh_reloads(void *ud)
{
    return (double)wh_stats(ud).cert_reloads;
}

static double read_wh_reload_failures(void *ud)
{
    return (double)wh_stats(ud).cert_reload_failures;
}

static double read_wh_connections(void *ud)
{
    return (double)wh_stats(ud).active;
}

static const struct metrics_plain proc_plain[] = {
    {"vmop_vcenter_soap_calls_total", "vCenter SOAP calls over every client (retired ones too).",
     read_soap_calls},
    {"vmop_vcenter_logins_total", "vCenter logins over every client (retired ones too).",
     read_logins},
    {"vmop_vcenter_clients_built_total",
     "vCenter clients built (one per endpoint; again when its endpoint or credentials change).",
     read_clients},
    {"vmop_kube_requests_total", "Kubernetes API requests sent (every attempt counts).",
     read_kube_requests},
    {"vmop_kube_retries_total", "Kubernetes API requests retried.", read_kube_retries},
    {"vmop_kube_throttled_requests_total",
     "Kubernetes API requests (attempts) that waited for the client-side rate limit "
     "(--kube-qps, --kube-burst).",
     read_kube_throttled},
    {"vmop_kube_throttled_seconds_total",
     "Seconds Kubernetes API requests spent waiting for the client-side rate limit.",
     read_kube_throttled_s},
    {"vmop_process_peak_rss_bytes", "Peak resident set size in bytes (VmHWM).", read_peak_rss},
    {"vmop_process_heap_inuse_bytes", "Bytes the allocator has handed out and not had back.",
     read_heap_inuse},
    {"vmop_process_heap_free_bytes",
     "Bytes free inside the allocator's heaps (held, partly resident, reusable).", read_heap_free},
};

static const struct metrics_plain svc_plain[] = {
    {"vmop_vmservice_reconciles_total", "VirtualMachineService reconciles finished.",
     read_svc_reconciles},
    {"vmop_vmservice_reconcile_failures_total",
     "VirtualMachineService reconciles that ended in an error.", read_svc_failures},
    {"vmop_vmservice_writes_total",
     "Creates and updates of the Services, Endpoints and EndpointSlices VirtualMachineServices "
     "own.",
     read_svc_writes},
};

static const struct metrics_plain wh_plain[] = {
    {"vmop_webhook_requests_total", "Admission and conversion reviews answered (any outcome).",
     read_wh_requests},
    {"vmop_webhook_http_errors_total", "Webhook requests answered with an HTTP 4xx/5xx status.",
     read_wh_http_errors},
    {"vmop_webhook_timeouts_total", "Webhook connections cut at a deadline.", read_wh_timeouts},
    {"vmop_webhook_connections_accepted_total",
     "Webhook connections accepted (one TLS handshake each).", read_wh_accepted},
    {"vmop_webhook_cert_reloads_total", "Webhook certificate pairs (re)loaded from files.",
     read_wh_reloads},
    {"vmop_webhook_cert_reload_failures_total",
     "Changed webhook certificate pairs that did not load (the old pair stays).",
     read_wh_reload_failures},
    {"vmop_webhook_connections", "Webhook connections open now.", read_wh_connections},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void make_identity(char *buf, size_t n)
{
    char host[128] = "vmop";
    unsigned long r = (unsigned long)vmop_rand(1ull << 32);
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    snprintf(buf, n, "%s_%08lx", host, r);
}

static vmop_rc start_workers(struct proc *p, struct vmop_err *err)
{
    vmop_rc rc = vmc_start_workers(p->vmc, err);
    if (rc == VMOP_OK && p->imgc)
        rc = imgc_start(p->imgc, err);
    if (rc == VMOP_OK && p->svc)
        rc = vmsvc_start(p->svc, err);
    if (rc == VMOP_OK) {
        __atomic_store_n(&p->running, 1, __ATOMIC_RELEASE);
        vlog(VLOG_INFO, LOGGER, NULL, "controllers running");
    }
    return rc;
}

/* Splits a comma-separated list (NULL or "" = none) into a malloc'd array of malloc'd strings,
 * empty items skipped; free with strv_free(). */
static vmop_rc split_list(const char *list, char ***ret, size_t *ret_n, struct vmop_err *err)
{
    char **v;
    size_t n = 0, cap = 1;
    *ret = NULL;
    *ret_n = 0;
    if (!list || !*list)
        return VMOP_OK;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    if (!(v = calloc(cap + 1, sizeof(*v))))
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len && !(v[n++] = strndup(p, len))) {
            for (size_t i = 0; i < n; i++)
                free(v[i]);
            free(v);
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        }
        p += len + (p[len] == ',');
    }
    *ret = v;
    *ret_n = n;
    return VMOP_OK;
}

static void strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* The webhook server with every admission and conversion handler. Started before leader
 * election: the API server calls any replica; the handlers read the VM controller's caches
 * (operator/admission/). */
static vmop_rc start_webhooks(struct proc *p, const struct vmop_config *cfg, struct vmop_err *err)
{
    struct wh_server_config wc = {.addr = cfg->webhook_addr, .cert_dir = cfg->webhook_cert_dir};
    p->adm_vm.classes = vmc_informer(p->vmc, "virtualmachineclasses");
    p->adm_vm.images = vmc_informer(p->vmc, "virtualmachineimages");
    p->adm_vm.cimages = vmc_informer(p->vmc, "clustervirtualmachineimages");
    p->adm_vm.bindings = vmc_informer(p->vmc, "namespacebindings");
    p->adm_vm.priv.sa_namespace = cfg->ns;
    p->adm_vm.priv.sa_name = cfg->service_account;
    if (split_list(cfg->privileged_users, &p->priv_users, &p->adm_vm.priv.n_users, err) ||
        split_list(cfg->privileged_groups, &p->priv_groups, &p->adm_vm.priv.n_groups, err))
        return err->rc ? err->rc : VMOP_E_INTERNAL;
    p->adm_vm.priv.users = (const char *const *)p->priv_users;
    p->adm_vm.priv.groups = (const char *const *)p->priv_groups;
    if (wh_server_start(&wc, &p->webhook, err) != VMOP_OK ||
        wh_server_add_admission(p->webhook, ADM_VM_MUTATE_PATH, adm_vm_mutate, &p->adm_vm, err) !=
            VMOP_OK ||
        wh_server_add_admission(p->webhook, ADM_VM_MUTATE_ALL_PATH, adm_vm_mutate, &p->adm_vm,
                                err) != VMOP_OK)
        return err->rc ? err->rc : VMOP_E_INTERNAL;
    {
        static const char *const paths[] = {ADM_VM_VALIDATE_PATH,  ADM_VM_VALIDATE_ALL_PATH,
                                            ADM_CLS_VALIDATE_PATH, ADM_SVC_VALIDATE_PATH,
                                            ADM_NSB_VALIDATE_PATH, ADM_VCE_VALIDATE_PATH};
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
            if (wh_server_add_admission(p->webhook, paths[i], adm_validate, &p->adm_vm, err) !=
                VMOP_OK)
                return err->rc ? err->rc : VMOP_E_INTERNAL;
        if (wh_server_add_conversion(p->webhook, ADM_CONVERT_PATH, adm_convert, NULL, err) !=
            VMOP_OK)
            return err->rc ? err->rc : VMOP_E_INTERNAL;
    }
    vlog(VLOG_INFO, LOGGER, NULL, "webhook server on %s (port %d, certificate from %s)",
         cfg->webhook_addr, wh_server_port(p->webhook), cfg->webhook_cert_dir);
    return VMOP_OK;
}

/* Leader election on the Lease (cfg->lease_ns/lease_name): its own client, one attempt per
 * call and a short timeout, so a renewal that hangs (a partition) returns well before the renew
 * deadline and a leader that cannot renew stops before any other replica may take over. */
static vmop_rc start_election(struct proc *p, const struct vmop_config *cfg,
                              const struct kube_config *kcfg, char *identity, size_t identity_len,
                              struct vmop_err *err)
{
    struct kube_elector_opts eo = {
        .ns = cfg->lease_ns && *cfg->lease_ns ? cfg->lease_ns : cfg->ns,
        .name = cfg->lease_name,
        .release_on_cancel = 1,
        .on_started_leading = on_started,
        .on_stopped_leading = on_stopped,
        .cb_ud = p,
    };
    /* no rate limit: renewals must not queue behind the workers' requests */
    struct kube_client_opts lko = {
        .timeout_ms = 1000, .connect_timeout_ms = 1000, .max_retries = KUBE_NO_RETRIES};
    make_identity(identity, identity_len);
    eo.identity = identity;
    if (kube_client_new(kcfg, &lko, &p->lease_kc, err) != VMOP_OK ||
        kube_elector_new(p->lease_kc, &eo, &p->el, err) != VMOP_OK ||
        kube_elector_start(p->el, err) != VMOP_OK)
        return err->rc ? err->rc : VMOP_E_INTERNAL;
    vlog(VLOG_INFO, LOGGER, NULL, "leader election on %s/%s as %s", eo.ns, eo.name, identity);
    return VMOP_OK;
}

/* Stops intake, drains the workers, then the rest; the Lease goes last. */
static void proc_shutdown(struct proc *p, const struct vmop_config *cfg, struct kube_config *kcfg)
{
    if (p->imgc)
        imgc_stop(p->imgc);
    if (p->svc)
        vmsvc_stop(p->svc);
    vlog(VLOG_DEBUG, LOGGER, NULL, "VirtualMachineService controller stopped");
    if (p->vmc)
        vmc_stop(p->vmc, cfg->drain_ms);
    vlog(VLOG_DEBUG, LOGGER, NULL, "VirtualMachine controller stopped");
    wh_server_stop(p->webhook); /* before the caches its handlers read are freed */
    strv_free(p->priv_users);
    strv_free(p->priv_groups);
    health_stop(p->health);
    if (p->metrics) { /* no collector reads what is freed below */
        metrics_remove_collectors(p->metrics, p->imgc);
        metrics_remove_collectors(p->metrics, p->vmc);
    }
    imgc_free(p->imgc);
    vmsvc_free(p->svc);
    vmc_free(p->vmc);
    vcenters_free(p->vcs);
    vlog(VLOG_DEBUG, LOGGER, NULL, "vCenter sessions closed");
    kube_recorder_free(p->rec);
    kube_elector_free(p->el); /* releases the Lease: its on_stopped callback updates metrics */
    kube_client_free(p->lease_kc);
    metrics_free(p->metrics); /* after every object its collectors or callbacks touch */
    kube_client_free(p->kc);
    kube_config_free(kcfg);
    kube_global_cleanup();
}

/* Every TRIM_EVERY_MS the allocator hands the free pages of its heaps back to the kernel: a wave
 * of creates or a relist leaves megabytes free but resident (glibc keeps them per arena), and the
 * RSS an operator watches is what the process holds, not what it uses. A few ms on a large heap. */
#define TRIM_EVERY_MS 30000
static void release_free_memory(int64_t *last_ms)
{
    int64_t now = vmop_mono_ms();
    if (now - *last_ms < TRIM_EVERY_MS)
        return;
    *last_ms = now;
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

/* glibc gives each thread that contends its own heap arena (up to 8 per core), and every arena
 * keeps its own free memory resident. Two arenas for all of vmop's threads: RSS growth per VM at
 * 300 -> 600 VMs 19.6 -> 13.9 KiB (tests/bench/idle.sh); the per-thread caches keep the lock
 * cheap. MALLOC_ARENA_MAX in the environment still wins. */
#define MALLOC_ARENAS 2
static void limit_malloc_arenas(void)
{
#ifdef __GLIBC__
    if (!getenv("MALLOC_ARENA_MAX"))
        mallopt(M_ARENA_MAX, MALLOC_ARENAS);
#endif
}

int vmop_run(const struct vmop_config *cfg)
{
    struct proc p;
    struct vmop_err err = {0};
    struct kube_config *kcfg = NULL;
    struct kube_config_opts ko = {.kubeconfig = cfg->kubeconfig,
                                  .incluster_dir = cfg->incluster_dir};
    struct kube_client_opts kco = {
        .user_agent = "vmop/0.1", .pool_size = 16, .qps = cfg->kube_qps, .burst = cfg->kube_burst};
    struct kube_recorder_opts ro = {.component = "vmop"};
    /* each vCenter's change feed holds one pooled connection per watched namespace folder: room
     * for all of them plus the workers' (connections are opened only when needed) */
    struct vs_options vso = {
        .soft_wait_ms = cfg->trysoft_timeout_ms, .may_act = may_act, .may_act_ud = &p};
    struct vcenters_opts vo = {.max_connections =
                                   (int)cfg->workers + (int)cfg->feed_max_folders + 8,
                               .attachment = vmc_sync_attachment(&vso)};
    struct vmc_opts mo = {.system_ns = cfg->ns,
                          .workers = cfg->workers,
                          .max_creates = cfg->max_creates,
                          .resync_ms = cfg->resync_ms,
                          .feed_max_endpoints = cfg->feed_max_endpoints,
                          .feed_max_folders = cfg->feed_max_folders,
                          .may_act = may_act,
                          .may_act_ud = &p};
    sigset_t sigs;
    int code = 1, sig = 0;
    int64_t start_ms = vmop_mono_ms(), trimmed_ms = start_ms;
    char identity[200], host[128] = "";

    limit_malloc_arenas(); /* before any thread of ours starts */

    memset(&p, 0, sizeof(p));
    p.cfg = cfg;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* every thread inherits this: main waits for them */
    signal(SIGPIPE, SIG_IGN);

    if (kube_global_init(&err) != VMOP_OK)
        goto fail;
    if (kube_config_load(&ko, &kcfg, &err) != VMOP_OK ||
        kube_client_new(kcfg, &kco, &p.kc, &err) != VMOP_OK)
        goto fail;
    gethostname(host, sizeof(host) - 1);
    ro.host = host;
    if (metrics_new(NULL, &p.metrics, &err) != VMOP_OK ||
        metrics_std_register(p.metrics, &p.std, &err) != VMOP_OK)
        goto fail;
    mo.metrics = &p.std;
    if (kube_recorder_new(p.kc, &ro, &p.rec, &err) != VMOP_OK ||
        vcenters_new(&vo, &p.vcs, &err) != VMOP_OK ||
        vmc_new(p.kc, p.rec, p.vcs, &mo, &p.vmc, &err) != VMOP_OK)
        goto fail;
    {
        struct imgc_opts io = {.system_ns = cfg->ns,
                               .period_ms = cfg->image_sync_ms,
                               .cache_grace_s = cfg->image_cache_grace_s > 0
                                                    ? cfg->image_cache_grace_s
                                                    : -1 /* none */};
        if (imgc_new(p.kc, p.rec, p.vcs, p.vmc, &io, &p.imgc, &err) != VMOP_OK)
            goto fail;
    }
    {
        struct vmsvc_opts so = {.workers = 2,
                                .rec = p.rec,
                                .resync_ms = cfg->resync_ms,
                                .drain_ms = cfg->drain_ms,
                                .vm_informer = vmc_informer(p.vmc, "virtualmachines")};
        if (vmsvc_new(p.kc, &so, &p.svc, &err) != VMOP_OK)
            goto fail;
    }
    if (metrics_add_plain(p.metrics, proc_plain, N_OF(proc_plain), &p, NULL, &err) != VMOP_OK ||
        metrics_add_plain(p.metrics, svc_plain, N_OF(svc_plain), &p, NULL, &err) != VMOP_OK ||
        metrics_add_plain(p.metrics, wh_plain, N_OF(wh_plain), &p, NULL, &err) != VMOP_OK ||
        vmc_metrics_register(p.vmc, p.metrics, &err) != VMOP_OK ||
        imgc_metrics_register(p.imgc, p.metrics, &err) != VMOP_OK)
        goto fail;
    if (vmc_start_informers(p.vmc, &err) != VMOP_OK)
        goto fail;
    if (cfg->health_addr && *cfg->health_addr) {
        struct health_cbs hc = {ready_cb, metrics_cb, &p};
        if (health_start(cfg->health_addr, &hc, &p.health, &err) != VMOP_OK)
            goto fail;
        vlog(VLOG_INFO, LOGGER, NULL, "health endpoint on 127.0.0.1:%d (/healthz /readyz /metrics)",
             health_port(p.health));
    }
    if (cfg->webhook_addr && *cfg->webhook_addr && start_webhooks(&p, cfg, &err) != VMOP_OK)
        goto fail;
    if (cfg->leader_elect) {
        if (start_election(&p, cfg, kcfg, identity, sizeof(identity), &err) != VMOP_OK)
            goto fail;
    } else {
        p.leading = 1;
        metrics_std_set_leader(&p.std, 1);
    }
    vlog(VLOG_INFO, LOGGER, NULL, "started (namespace %s, %u workers)", cfg->ns, cfg->workers);

    for (;;) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        siginfo_t si;
        sig = sigtimedwait(&sigs, &si, &ts);
        if (sig == SIGTERM || sig == SIGINT)
            break;
        release_free_memory(&trimmed_ms);
        if (__atomic_load_n(&p.lost, __ATOMIC_ACQUIRE)) {
            vlog(VLOG_ERROR, LOGGER, NULL, "lost leadership; exiting");
            sig = -1;
            break;
        }
        if (!__atomic_load_n(&p.running, __ATOMIC_ACQUIRE) &&
            __atomic_load_n(&p.leading, __ATOMIC_ACQUIRE) && vmc_synced(p.vmc)) {
            vlog(VLOG_INFO, LOGGER, NULL, "caches synced after %lld ms",
                 (long long)(vmop_mono_ms() - start_ms));
            if (start_workers(&p, &err) != VMOP_OK)
                goto fail;
        }
    }
    code = sig == -1 ? 1 : 0;
    if (sig > 0)
        vlog(VLOG_INFO, LOGGER, NULL, "signal %d: shutting down (drain %ld ms)", sig,
             cfg->drain_ms);
    goto out;
fail:
    vlog_err(VLOG_ERROR, LOGGER, NULL, &err, "start-up failed");
    code = 1;
out:
    proc_shutdown(&p, cfg, kcfg);
    vlog(VLOG_INFO, LOGGER, NULL, "stopped");
    return code;
}
