/* test_change_feed_sim.c: the vCenter change feed (operator/vcenter/change_feed.c) against the
 * simulator (suite integration; owner: vcfeed).
 *
 * Each test starts its own simulator (Check fork mode: the child process owns it). VMs made here
 * are clones of a generated VM carrying the ExtraConfig vmservice.namespacedName.
 * Covers: initial keys (names learned by a read when the map cannot map a VM), no enqueue storm
 * while nothing changes, power-off out of band, a guest IP published by the guest player, destroy
 * (LEAVE), a second container added and removed at runtime, prompt stop; session expiry (resync
 * without a storm, changes still seen; and with more VMs than one page of updates); the simulator
 * killed and restarted on the same port (restart counted, gone VM enqueued, new VM seen); and the
 * idle cost with ~50 VMs (printed); the power-state waits vmsync's TrySoft delete uses
 * (vcfeed_mark_vm / vcfeed_wait_power, and a hold across vcfeed_free); expected news
 * (vcfeed_expect) cutting the pause after an answer short. Waits are bounded polls; the
 * only fixed waits are the "nothing happens" windows.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "clock.h"
#include "change_feed.h"
#include "sim_fixture.h"

#define BOUND_MS 5000L

/* ---- what the feed enqueued ---- */

#define MAX_KEYS 32
struct rec {
    pthread_mutex_t lock;
    int n;
    char keys[MAX_KEYS][64];
    int counts[MAX_KEYS];
    int total;
    int null_name_maps; /* map calls without a known name */
};

static void rec_init(struct rec *r)
{
    memset(r, 0, sizeof(*r));
    pthread_mutex_init(&r->lock, NULL);
}

static void rec_enqueue(const char *key, void *user)
{
    struct rec *r = user;
    int i;

    pthread_mutex_lock(&r->lock);
    for (i = 0; i < r->n; i++)
        if (strcmp(r->keys[i], key) == 0)
            break;
    if (i == r->n && r->n < MAX_KEYS)
        snprintf(r->keys[r->n++], sizeof(r->keys[0]), "%s", key);
    if (i < MAX_KEYS)
        r->counts[i]++;
    r->total++;
    pthread_mutex_unlock(&r->lock);
}

/* enqueue_expected of test_expect: into its own recorder (the feed has one user pointer) */
static struct rec *expected_rec;
static void rec_enqueue_x(const char *key, void *user)
{
    (void)user;
    rec_enqueue(key, expected_rec);
}

/* Our VMs carry a name; the rest are not ours. */
static char *rec_map(const struct vim_moref *vm, const char *nsname, void *user)
{
    struct rec *r = user;

    ck_assert_str_eq(vm->type, "VirtualMachine");
    if (!nsname) {
        pthread_mutex_lock(&r->lock);
        r->null_name_maps++;
        pthread_mutex_unlock(&r->lock);
        return NULL;
    }
    return strdup(nsname);
}

static int rec_count(struct rec *r, const char *key)
{
    int c = 0;

    pthread_mutex_lock(&r->lock);
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->keys[i], key) == 0)
            c = r->counts[i];
    pthread_mutex_unlock(&r->lock);
    return c;
}

static int rec_total(struct rec *r)
{
    int t;

    pthread_mutex_lock(&r->lock);
    t = r->total;
    pthread_mutex_unlock(&r->lock);
    return t;
}

/* Polls until key's count exceeds `above`; returns the time it took, or -1. */
static long wait_key(struct rec *r, const char *key, int above, long bound_ms)
{
    long long t0 = vmop_test_now_ms();

    while (vmop_test_now_ms() - t0 <= bound_ms) {
        if (rec_count(r, key) > above)
            return (long)(vmop_test_now_ms() - t0);
        vmop_test_sleep_ms(20);
    }
    return -1;
}

typedef int (*stats_pred)(const struct vcfeed_stats *st, const void *arg);

static int wait_stats(struct vcfeed *f, stats_pred pred, const void *arg, long bound_ms,
                      struct vcfeed_stats *ret_st)
{
    long long t0 = vmop_test_now_ms();

    for (;;) {
        vcfeed_stats(f, ret_st);
        if (pred(ret_st, arg))
            return 1;
        if (vmop_test_now_ms() - t0 > bound_ms)
            return 0;
        vmop_test_sleep_ms(20);
    }
}

static int pred_watches(const struct vcfeed_stats *st, const void *arg)
{
    return st->watches == *(const unsigned *)arg;
}
static int pred_resyncs(const struct vcfeed_stats *st, const void *arg)
{
    return st->resyncs >= *(const uint64_t *)arg;
}
static int pred_errors(const struct vcfeed_stats *st, const void *arg)
{
    return st->errors >= *(const uint64_t *)arg;
}
static int pred_restarted(const struct vcfeed_stats *st, const void *arg)
{
    (void)arg;
    return st->restarts >= 1 && st->watches == 1;
}

/* ---- simulator helpers ---- */

static struct vim_client *client_for(const struct vcsim *sim)
{
    struct vim_config cfg = {.timeout_ms = 60000, .connect_timeout_ms = 2000};

    return simfx_client_of(sim, &cfg);
}

/* Clones the generated DC0_C0_RP0_VM0 with nsname in its ExtraConfig, powered on if asked. */
static void clone_vm(struct vim_client *c, const struct vcsim *sim, const char *name,
                     const char *nsname, int power_on, struct vim_moref *ret_vm)
{
    struct vim_config_spec *spec = NULL;

    ck_assert_int_eq(vim_config_spec_new(&spec), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(spec, VCFEED_EXTRA_KEY, nsname), VMOP_OK);
    *ret_vm = simfx_clone(c, sim, "/DC0/vm/DC0_C0_RP0_VM0",
                          (struct vim_clone_spec){.name = name, .config = spec});
    vim_config_spec_free(spec);
    /* The simulator ignores the clone's powerOn: power on explicitly. */
    if (power_on)
        simfx_power(c, ret_vm, VIM_OP_POWER_ON);
}

/* Waits until the guest player gave vm an address. */
static void wait_ip(struct vim_client *c, const struct vim_moref *vm)
{
    vim_vm_free(simfx_wait_guest_ip(c, vm, 10000));
}

/* Waits until the guest player reported vm's tools as not running (it does so about 100 ms after
 * a power-off, a change the feed sees too), then until the feed has been quiet for 500 ms. */
static void wait_tools_off_quiet(struct vim_client *c, const struct vim_moref *vm, struct rec *r)
{
    long long t0 = vmop_test_now_ms();
    int total;

    for (;;) {
        struct vim_vm *v = simfx_vm_get(c, vm);
        int on = v->tools_running && strcmp(v->tools_running, "guestToolsRunning") == 0;
        vim_vm_free(v);
        if (!on)
            break;
        ck_assert_msg(vmop_test_now_ms() - t0 < 10000, "tools still running after 10 s");
        vmop_test_sleep_ms(50);
    }
    do {
        total = rec_total(r);
        vmop_test_sleep_ms(500);
    } while (rec_total(r) != total && vmop_test_now_ms() - t0 < 10000);
}

static struct vcfeed *feed_start(struct vim_client *c, const char *const *containers,
                                 const char *const *props, struct rec *r, int max_wait_s,
                                 int skip_initial)
{
    struct vcfeed_opts o = {.client = c,
                            .containers = containers,
                            .props = props,
                            .map = rec_map,
                            .enqueue = rec_enqueue,
                            .user = r,
                            .max_wait_s = max_wait_s,
                            .backoff_initial_ms = 100,
                            .backoff_max_ms = 1000,
                            .skip_initial = skip_initial};
    struct vcfeed *f = NULL;
    struct vmop_err err = {0};

    ck_assert_msg(vcfeed_new(&o, &f, &err) == VMOP_OK, "vcfeed_new: %s", err.msg);
    return f;
}

static long stop_timed(struct vcfeed *f)
{
    long long t0 = vmop_test_now_ms();

    vcfeed_stop(f);
    return (long)(vmop_test_now_ms() - t0);
}

/* ---- tests ---- */

START_TEST(test_events)
{
    struct vcsim_opts so = {.no_seed = 1};
    struct vcsim *sim = simfx_start(&so);
    struct vim_client *c = client_for(sim);
    struct vim_moref a, b, folder;
    struct vmop_err err = {0};
    struct rec r, r2;
    struct vcfeed *f, *f2;
    struct vcfeed_stats st;
    const char *const containers[] = {"/DC0/vm", NULL};
    const char *const ip_only[] = {"guest.ipAddress", NULL};
    char folder_spec[VIM_MOREF_TYPE_MAX + VIM_MOREF_VALUE_MAX + 2];
    long t;
    int before, total;
    unsigned one = 1, two = 2;

    rec_init(&r);
    rec_init(&r2);
    clone_vm(c, sim, "feed-a", "ns1/vm-a", 1, &a);
    clone_vm(c, sim, "feed-b", "ns1/vm-b", 0, &b);
    wait_ip(c, &a);

    f = feed_start(c, containers, NULL, &r, 0, 0);
    /* The initial set: both of ours, named by the watched ExtraConfig path (no VM read); nothing
     * else. */
    ck_assert_msg(wait_key(&r, "ns1/vm-a", 0, BOUND_MS) >= 0, "vm-a not enqueued initially");
    ck_assert_msg(wait_key(&r, "ns1/vm-b", 0, BOUND_MS) >= 0, "vm-b not enqueued initially");
    vcfeed_stats(f, &st);
    ck_assert_uint_eq(st.name_reads, 0);
    ck_assert_uint_eq(st.resyncs, 1);
    ck_assert_uint_eq(st.watches, 1);
    ck_assert_uint_eq(st.containers, 1);
    ck_assert_uint_eq(st.restarts, 0);
    /* Both are held by the watch (the initial set is suppressed for enqueueing only). */
    ck_assert(vcfeed_watching(f, a.value));
    ck_assert(vcfeed_watching(f, b.value));
    ck_assert(!vcfeed_watching(f, "vm-999999"));

    /* No storm while nothing changes. */
    before = rec_total(&r);
    vmop_test_sleep_ms(2000);
    ck_assert_int_eq(rec_total(&r), before);
    ck_assert_int_eq(r.n, 2);

    /* Power off out of band. */
    before = rec_count(&r, "ns1/vm-a");
    simfx_power(c, &a, VIM_OP_POWER_OFF);
    t = wait_key(&r, "ns1/vm-a", before, BOUND_MS);
    ck_assert_msg(t >= 0, "power-off not enqueued within %ld ms", BOUND_MS);
    printf("vcfeed: power-off seen after %ld ms\n", t);

    /* A guest IP published by the guest player: a feed watching only guest.ipAddress. */
    f2 = feed_start(c, containers, ip_only, &r2, 0, 1);
    ck_assert(wait_stats(f2, pred_watches, &one, BOUND_MS, &st));
    before = rec_count(&r, "ns1/vm-b");
    simfx_power(c, &b, VIM_OP_POWER_ON);
    t = wait_key(&r2, "ns1/vm-b", 0, BOUND_MS);
    ck_assert_msg(t >= 0, "guest IP change not enqueued within %ld ms", BOUND_MS);
    ck_assert_int_eq(rec_count(&r2, "ns1/vm-a"), 0);
    ck_assert(wait_key(&r, "ns1/vm-b", before, BOUND_MS) >= 0);
    /* without the name's path, the name came from reading the VM */
    vcfeed_stats(f2, &st);
    ck_assert_uint_ge(st.name_reads, 1);
    ck_assert_int_lt(stop_timed(f2), 2000);
    vcfeed_free(f2);

    /* Destroy: LEAVE is enqueued with the cached name. (First let the power-off's later changes
     * through, so the next enqueue of vm-a is the LEAVE's.) */
    wait_tools_off_quiet(c, &a, &r);
    before = rec_count(&r, "ns1/vm-a");
    ck_assert_msg(vim_vm_destroy(c, &a, &err) == VMOP_OK, "destroy: %s", err.msg);
    ck_assert_msg(wait_key(&r, "ns1/vm-a", before, BOUND_MS) >= 0, "destroy not enqueued");
    ck_assert(!vcfeed_watching(f, a.value)); /* dropped before the LEAVE was enqueued */

    /* A second container at runtime (the same folder by moref): its initial set is enqueued. */
    folder = simfx_find(c, sim->folder, NULL);
    snprintf(folder_spec, sizeof(folder_spec), "%s:%s", folder.type, folder.value);
    const char *const both[] = {"/DC0/vm", folder_spec, NULL};
    before = rec_count(&r, "ns1/vm-b");
    ck_assert_int_eq(vcfeed_set_containers(f, both, &err), VMOP_OK);
    ck_assert(wait_stats(f, pred_watches, &two, BOUND_MS, &st));
    ck_assert_uint_eq(st.containers, 2);
    ck_assert(wait_key(&r, "ns1/vm-b", before, BOUND_MS) >= 0);
    /* Back to one: the kept watch is not restarted (no new initial enqueue). */
    const char *const second[] = {folder_spec, NULL};
    ck_assert_int_eq(vcfeed_set_containers(f, second, &err), VMOP_OK);
    ck_assert(wait_stats(f, pred_watches, &one, BOUND_MS, &st));
    ck_assert_uint_eq(st.containers, 1);
    ck_assert_uint_eq(st.resyncs, 2);
    ck_assert(vcfeed_watching(f, b.value)); /* the remaining watch still holds it */

    /* Still live on the remaining container. */
    before = rec_count(&r, "ns1/vm-b");
    simfx_power(c, &b, VIM_OP_POWER_OFF);
    ck_assert(wait_key(&r, "ns1/vm-b", before, BOUND_MS) >= 0);

    /* Stop is prompt while a 30 s wait is in progress. */
    t = stop_timed(f);
    printf("vcfeed: stop took %ld ms\n", t);
    ck_assert_int_lt(t, 2000);
    vcfeed_stats(f, &st);
    ck_assert_uint_eq(st.watches, 0);
    ck_assert(!vcfeed_watching(f, b.value)); /* no watch holds anything */
    total = rec_total(&r);
    ck_assert_uint_eq(st.enqueued, (uint64_t)total);
    ck_assert_int_eq(st.last_rc, VMOP_OK);
    vcfeed_free(f);
    vim_client_free(c);
    vcsim_stop(sim, NULL);
}
END_TEST

START_TEST(test_session_expiry)
{
    struct vcsim_opts so = {.no_seed = 1, .session_idle_timeout_ms = 500};
    struct vcsim *sim = simfx_start(&so);
    struct vim_client *c = client_for(sim);
    const char *const containers[] = {"/DC0/vm", NULL};
    struct vim_moref vm;
    struct vim_stats vs;
    struct vcfeed_stats st;
    struct rec r;
    struct vcfeed *f;
    uint64_t want;
    int before;

    rec_init(&r);
    clone_vm(c, sim, "feed-c", "ns2/vm-c", 1, &vm);
    wait_ip(c, &vm);
    /* 2 s waits: the 500 ms idle timeout expires the session between them. */
    f = feed_start(c, containers, NULL, &r, 2, 0);
    ck_assert(wait_key(&r, "ns2/vm-c", 0, BOUND_MS) >= 0);
    want = 3; /* the first set and at least two after an expiry */
    ck_assert_msg(wait_stats(f, pred_resyncs, &want, 15000, &st), "resyncs %llu",
                  (unsigned long long)st.resyncs);
    vim_client_stats(c, &vs);
    ck_assert_uint_ge(vs.relogins, 1);
    /* The resyncs changed nothing: no storm. */
    ck_assert_int_eq(rec_count(&r, "ns2/vm-c"), 1);
    ck_assert_uint_eq(st.restarts, 0);
    /* Changes are still seen. */
    before = rec_count(&r, "ns2/vm-c");
    simfx_power(c, &vm, VIM_OP_POWER_OFF);
    ck_assert_msg(wait_key(&r, "ns2/vm-c", before, BOUND_MS) >= 0, "power-off after expiry");
    printf("vcfeed: session expiry: %llu resyncs, %llu relogins\n", (unsigned long long)st.resyncs,
           (unsigned long long)vs.relogins);
    ck_assert_int_lt(stop_timed(f), 2000);
    vcfeed_free(f);
    vim_client_free(c);
    vcsim_stop(sim, NULL);
}
END_TEST

/* More VMs than one WaitForUpdatesEx answer holds (the simulator, like vCenter, pages a large
 * update set: truncated=true, and the rest comes with the next calls). A resync after a session
 * expiry is then one full set over several pages: VMs on the later pages are not gone. */
START_TEST(test_session_expiry_paged)
{
    struct vcsim_opts so = {
        .no_seed = 1, .session_idle_timeout_ms = 500, .vms = 60, .no_guest_ip = 1};
    struct vcsim *sim = simfx_start(&so);
    struct vim_client *c = client_for(sim);
    const char *const containers[] = {"/DC0/vm", NULL};
    struct vim_moref vm;
    struct vcfeed_stats st, st0;
    struct rec r;
    struct vcfeed *f;
    uint64_t want;

    rec_init(&r);
    clone_vm(c, sim, "feed-p", "ns3/vm-p", 0, &vm);
    f = feed_start(c, containers, NULL, &r, 2, 0);
    ck_assert(wait_key(&r, "ns3/vm-p", 0, BOUND_MS) >= 0);
    want = 1;
    ck_assert(wait_stats(f, pred_resyncs, &want, BOUND_MS, &st0));
    /* ~120 generated VMs, one name read each in the first set */
    ck_assert_uint_gt(st0.updates, 100);
    want = st0.resyncs + 2;
    ck_assert_msg(wait_stats(f, pred_resyncs, &want, 20000, &st), "resyncs %llu",
                  (unsigned long long)st.resyncs);
    /* Nothing changed: no VM was dropped and entered again (that would read its name again)... */
    ck_assert_msg(st.name_reads == st0.name_reads, "name reads %llu after the first set, %llu now",
                  (unsigned long long)st0.name_reads, (unsigned long long)st.name_reads);
    /* ... and ours was not enqueued again. */
    ck_assert_int_eq(rec_count(&r, "ns3/vm-p"), 1);
    ck_assert_uint_eq(st.restarts, 0);
    printf("vcfeed: paged session expiry: %llu updates, %llu resyncs, %llu name reads\n",
           (unsigned long long)st.updates, (unsigned long long)st.resyncs,
           (unsigned long long)st.name_reads);
    ck_assert_int_lt(stop_timed(f), 2000);
    vcfeed_free(f);
    vim_client_free(c);
    vcsim_stop(sim, NULL);
}
END_TEST

START_TEST(test_restart)
{
    struct vcsim_opts so = {.no_seed = 1};
    struct vcsim *sim = simfx_start(&so);
    struct vim_client *c;
    const char *const containers[] = {"/DC0/vm", NULL};
    struct vim_moref vm;
    struct vcfeed_stats st;
    struct rec r;
    struct vcfeed *f;
    const char *port;
    char listen[64];
    uint64_t one = 1;
    int before;

    rec_init(&r);
    port = strrchr(sim->url, ':');
    ck_assert_ptr_nonnull(port);
    snprintf(listen, sizeof(listen), "-listen=127.0.0.1:%s", port + 1);
    c = client_for(sim);
    clone_vm(c, sim, "feed-d", "ns3/vm-d", 0, &vm);
    f = feed_start(c, containers, NULL, &r, 5, 0);
    ck_assert(wait_key(&r, "ns3/vm-d", 0, BOUND_MS) >= 0);

    /* Kill the simulator: the feed fails, backs off, keeps trying. */
    vcsim_stop(sim, NULL);
    sim = NULL;
    ck_assert(wait_stats(f, pred_errors, &one, 15000, &st));
    printf("vcfeed: while down: %s\n", st.last_error);
    ck_assert_int_ne(st.last_rc, VMOP_OK);

    /* Restart on the same port (retry a little in case the port is briefly busy). */
    const char *const extra[] = {listen, NULL};
    struct vcsim_opts so2 = {.no_seed = 1, .extra_args = extra};
    for (int i = 0; i < 20 && !sim; i++) {
        struct vmop_err err = {0};
        if (vcsim_start(&so2, &sim, &err) != VMOP_OK) {
            printf("vcfeed: restart attempt %d: %s\n", i, err.msg);
            vmop_test_sleep_ms(250);
        }
    }
    ck_assert_ptr_nonnull(sim);
    ck_assert_msg(wait_stats(f, pred_restarted, NULL, 15000, &st), "no recovery: %s",
                  st.last_error);
    /* The VM did not survive the restart: it is enqueued as gone. */
    ck_assert_msg(wait_key(&r, "ns3/vm-d", 1, BOUND_MS) >= 0, "gone VM not enqueued");
    /* And the feed is live on the new server. */
    before = rec_count(&r, "ns3/vm-e");
    clone_vm(c, sim, "feed-e", "ns3/vm-e", 0, &vm);
    ck_assert_msg(wait_key(&r, "ns3/vm-e", before, BOUND_MS) >= 0, "new VM not seen");
    vcfeed_stats(f, &st);
    printf("vcfeed: restart: restarts=%llu errors=%llu\n", (unsigned long long)st.restarts,
           (unsigned long long)st.errors);
    ck_assert_int_lt(stop_timed(f), 2000);
    vcfeed_free(f);
    vim_client_free(c);
    vcsim_stop(sim, NULL);
}
END_TEST

/* Idle cost with ~50 VMs: printed, not asserted (window: $VCFEED_IDLE_WINDOW_S, default 10). */
START_TEST(test_idle_cost)
{
    struct vcsim_opts so = {.no_seed = 1, .vms = 25};
    struct vcsim *sim = simfx_start(&so);
    struct vim_client *c = client_for(sim), *fc = client_for(sim);
    const char *const containers[] = {"/DC0/vm", NULL};
    struct vim_entity_list l = {0};
    struct vmop_err err = {0};
    struct vim_stats s0, s1;
    struct vcfeed_stats st, st1;
    struct rec r;
    struct vcfeed *f;
    const char *w = getenv("VCFEED_IDLE_WINDOW_S");
    long window_s = w ? strtol(w, NULL, 10) : 10;
    uint64_t batches;
    long long t0;

    if (window_s < 1 || window_s > 600)
        window_s = 10;
    rec_init(&r);
    ck_assert_int_eq(vim_list(c, NULL, "VirtualMachine", &l, &err), VMOP_OK);
    printf("vcfeed: idle test with %zu VMs\n", l.n);
    ck_assert_uint_ge(l.n, 50);
    vim_entity_list_free(&l);
    f = feed_start(fc, containers, NULL, &r, 30, 0);
    /* Settle: the first set read, then no batch for 2 s (the guest player publishing IPs). */
    t0 = vmop_test_now_ms();
    for (;;) {
        vcfeed_stats(f, &st);
        batches = st.batches;
        vmop_test_sleep_ms(2000);
        vcfeed_stats(f, &st);
        if (st.resyncs >= 1 && st.batches == batches)
            break;
        ck_assert_msg(vmop_test_now_ms() - t0 < 30000, "feed did not settle");
    }
    vim_client_stats(fc, &s0);
    printf("vcfeed: start-up cost: %llu SOAP calls (%llu name reads, %llu updates)\n",
           (unsigned long long)s0.soap_calls, (unsigned long long)st.name_reads,
           (unsigned long long)st.updates);
    vmop_test_sleep_ms(window_s * 1000);
    vim_client_stats(fc, &s1);
    vcfeed_stats(f, &st1);
    printf("vcfeed: idle: %llu SOAP calls in %ld s (%.1f per minute), %llu enqueued\n",
           (unsigned long long)(s1.soap_calls - s0.soap_calls), window_s,
           (double)(s1.soap_calls - s0.soap_calls) * 60.0 / (double)window_s,
           (unsigned long long)(st1.enqueued - st.enqueued));
    ck_assert_uint_eq(st1.enqueued, st.enqueued);
    ck_assert_int_lt(stop_timed(f), 2000);
    vcfeed_free(f);
    vim_client_free(fc);
    vim_client_free(c);
    vcsim_stop(sim, NULL);
}
END_TEST

/* vcfeed_mark_vm / vcfeed_wait_power (vmsync's TrySoft delete): a power state heard after the mark
 * ends the wait; one heard before it does not count; nothing heard is a timeout; a VM the feed
 * does not hold, a destroyed one and a stopped feed are "cannot tell" (-1). A hold keeps a freed
 * feed readable. */
START_TEST(test_wait_power)
{
    struct vcsim_opts so = {.no_seed = 1};
    struct vcsim *sim = simfx_start(&so);
    struct vim_client *c = client_for(sim);
    const char *const containers[] = {"/DC0/vm", NULL};
    struct vim_moref a;
    struct vmop_err err = {0};
    struct vcfeed_stats st;
    struct rec r;
    struct vcfeed *f;
    uint64_t mark = 0, mark2 = 0;
    long long t0;
    unsigned one = 1;

    rec_init(&r);
    clone_vm(c, sim, "feed-w", "ns1/vm-w", 1, &a);
    f = feed_start(c, containers, NULL, &r, 0, 1);
    ck_assert(wait_stats(f, pred_watches, &one, BOUND_MS, &st));
    t0 = vmop_test_now_ms();
    while (!vcfeed_mark_vm(f, a.value, &mark) && vmop_test_now_ms() - t0 < BOUND_MS)
        vmop_test_sleep_ms(20); /* bounded: until the initial set holds it */
    ck_assert_msg(vcfeed_mark_vm(f, a.value, &mark), "the feed does not hold %s", a.value);
    ck_assert(!vcfeed_mark_vm(f, "vm-999999", &mark2));
    ck_assert_int_eq(vcfeed_wait_power(f, "vm-999999", mark, VIM_POWER_OFF, 100), -1);
    /* nothing changes: a timeout, not an answer from what was heard before the mark */
    ck_assert_int_eq(vcfeed_wait_power(f, a.value, mark, VIM_POWER_ON, 300), 0);
    t0 = vmop_test_now_ms();
    simfx_power(c, &a, VIM_OP_POWER_OFF);
    ck_assert_int_eq(vcfeed_wait_power(f, a.value, mark, VIM_POWER_OFF, BOUND_MS), 1);
    printf("vcfeed: power-off heard by a waiter after %lld ms\n", vmop_test_now_ms() - t0);
    /* heard before this mark: does not count again */
    ck_assert(vcfeed_mark_vm(f, a.value, &mark2));
    ck_assert_int_eq(vcfeed_wait_power(f, a.value, mark2, VIM_POWER_OFF, 300), 0);
    /* destroyed: it leaves the feed, which then cannot tell */
    ck_assert_msg(vim_vm_destroy(c, &a, &err) == VMOP_OK, "destroy: %s", err.msg);
    ck_assert_int_eq(vcfeed_wait_power(f, a.value, mark2, VIM_POWER_ON, BOUND_MS), -1);
    /* held across vcfeed_free: stopped, still readable, freed by the release */
    vcfeed_hold(f);
    vcfeed_free(f);
    ck_assert(!vcfeed_mark_vm(f, a.value, &mark2));
    ck_assert_int_eq(vcfeed_wait_power(f, "vm-1", mark2, VIM_POWER_OFF, 100), -1);
    vcfeed_release(f);
    vim_client_free(c);
    vcsim_stop(sim, NULL);
}
END_TEST

/* vcfeed_expect: news a caller waits for cuts the feed's pause after an answer (here 10 s) to
 * VCFEED_EXPECT_COALESCE_MS, goes to enqueue_expected (VCFEED_EXPECT_QUEUE), and is expected once;
 * news no one expects waits out the pause. */
START_TEST(test_expect)
{
    struct vcsim_opts so = {.no_seed = 1};
    struct vcsim *sim = simfx_start(&so);
    struct vim_client *c = client_for(sim);
    const char *const containers[] = {"/DC0/vm", NULL};
    struct vim_moref x, y;
    struct vcfeed_stats st;
    struct rec r, rx;
    struct vcfeed *f = NULL;
    struct vmop_err err = {0};
    long t;
    unsigned one = 1;

    rec_init(&r);
    rec_init(&rx);
    clone_vm(c, sim, "feed-x", "ns1/vm-x", 0, &x);
    clone_vm(c, sim, "feed-y", "ns1/vm-y", 0, &y);
    {
        struct vcfeed_opts o = {.client = c,
                                .containers = containers,
                                .map = rec_map,
                                .enqueue = rec_enqueue,
                                .enqueue_expected = NULL,
                                .user = &r,
                                .skip_initial = 1,
                                .coalesce_ms = 10000};
        ck_assert_msg(vcfeed_new(&o, &f, &err) == VMOP_OK, "vcfeed_new: %s", err.msg);
    }
    ck_assert(wait_stats(f, pred_watches, &one, BOUND_MS, &st));
    t = vmop_test_now_ms();
    while (!vcfeed_watching(f, x.value) && vmop_test_now_ms() - t < BOUND_MS)
        vmop_test_sleep_ms(20);
    ck_assert(vcfeed_watching(f, x.value));
    ck_assert_int_eq(vcfeed_expect(f, "vm-999999", NULL, 1000, 0), 0); /* held by no watch */
    ck_assert_int_eq(vcfeed_expect(f, "vm-999999", NULL, 0, 0), 0);
    ck_assert_int_eq(vcfeed_expect(NULL, x.value, NULL, 1000, 0), 0);

    /* the initial set was an answer with changes: the 10 s pause runs. News of x expected: the
     * pause is cut short, the news comes at once */
    ck_assert_int_eq(vcfeed_expect(f, x.value, "runtime.powerState", 8000, 0), 1);
    simfx_power(c, &x, VIM_OP_POWER_ON);
    t = wait_key(&r, "ns1/vm-x", 0, 3000);
    ck_assert_msg(t >= 0, "expected news not heard within 3 s (the pause is 10 s)");
    printf("vcfeed: expected news heard after %ld ms\n", t);
    /* met once: news no one expects waits for the pause that answer started (none in 2 s) */
    simfx_power(c, &y, VIM_OP_POWER_ON);
    vmop_test_sleep_ms(2000);
    ck_assert_int_eq(rec_count(&r, "ns1/vm-y"), 0);
    ck_assert_int_lt(stop_timed(f), 2000); /* stop is prompt during a pause */
    vcfeed_free(f);
    f = NULL;

    /* with enqueue_expected and VCFEED_EXPECT_QUEUE: the news goes there, and only that news */
    rec_init(&r);
    {
        struct vcfeed_opts o = {.client = c,
                                .containers = containers,
                                .map = rec_map,
                                .enqueue = rec_enqueue,
                                .enqueue_expected = rec_enqueue_x,
                                .user = &r,
                                .skip_initial = 1,
                                .coalesce_ms = 10000};
        expected_rec = &rx;
        ck_assert_msg(vcfeed_new(&o, &f, &err) == VMOP_OK, "vcfeed_new: %s", err.msg);
    }
    ck_assert(wait_stats(f, pred_watches, &one, BOUND_MS, &st));
    t = vmop_test_now_ms();
    while (!vcfeed_watching(f, x.value) && vmop_test_now_ms() - t < BOUND_MS)
        vmop_test_sleep_ms(20);
    ck_assert_int_eq(vcfeed_expect(f, x.value, "runtime.powerState", 8000, VCFEED_EXPECT_QUEUE), 1);
    simfx_power(c, &x, VIM_OP_POWER_OFF);
    ck_assert_msg(wait_key(&rx, "ns1/vm-x", 0, 3000) >= 0, "expected news not queued at once");
    ck_assert_int_eq(rec_count(&r, "ns1/vm-x"), 0); /* not also as plain news */
    /* an expectation withdrawn (within_ms 0) no longer cuts the pause */
    ck_assert_int_eq(vcfeed_expect(f, x.value, NULL, 5000, VCFEED_EXPECT_QUEUE), 1);
    ck_assert_int_eq(vcfeed_expect(f, x.value, NULL, 0, 0), 1);
    simfx_power(c, &x, VIM_OP_POWER_ON);
    vmop_test_sleep_ms(2000);
    ck_assert_int_eq(rec_count(&rx, "ns1/vm-x"), 1);
    ck_assert_int_eq(rec_count(&r, "ns1/vm-x"), 0);
    ck_assert_int_lt(stop_timed(f), 2000); /* stop is prompt during a pause */
    vcfeed_free(f);
    vim_client_free(c);
    vcsim_stop(sim, NULL);
}
END_TEST

/* Waits (bounded) until the feed holds vm; *ret_mark: the mark. */
static void mark_held(struct vcfeed *f, const struct vim_moref *vm, uint64_t *ret_mark)
{
    long long t0 = vmop_test_now_ms();
    while (!vcfeed_mark_vm(f, vm->value, ret_mark) && vmop_test_now_ms() - t0 < BOUND_MS)
        vmop_test_sleep_ms(20);
    ck_assert_msg(vcfeed_mark_vm(f, vm->value, ret_mark), "the feed does not hold %s", vm->value);
}

/* vcfeed_wait_gone (vmsync's destroy): a VM still there is a timeout; a destroyed one is heard as
 * gone, with no read of its task; a VM the feed lets go of because its watch goes (the container
 * no longer watched) did not leave and is "cannot tell" (-1), never "gone". */
START_TEST(test_wait_gone)
{
    struct vcsim_opts so = {.no_seed = 1};
    struct vcsim *sim = simfx_start(&so);
    struct vim_client *c = client_for(sim);
    /* a second container that holds no VM, so that the feed stays live when the first goes */
    const char *const containers[] = {"/DC0/vm", "/DC0/network", NULL};
    const char *const rest[] = {"/DC0/network", NULL};
    struct vim_moref a, b, task;
    struct vmop_err err = {0};
    struct vcfeed_stats st;
    struct rec r;
    struct vcfeed *f;
    uint64_t mark = 0;
    long long t0;
    unsigned two = 2, one = 1;

    rec_init(&r);
    clone_vm(c, sim, "feed-g1", "ns1/vm-g1", 0, &a);
    clone_vm(c, sim, "feed-g2", "ns1/vm-g2", 0, &b);
    f = feed_start(c, containers, NULL, &r, 0, 1);
    ck_assert(wait_stats(f, pred_watches, &two, BOUND_MS, &st));
    mark_held(f, &a, &mark);
    ck_assert_int_eq(vcfeed_wait_gone(f, a.value, mark, 300), 0); /* still there */
    t0 = vmop_test_now_ms();
    ck_assert_msg(vim_vm_destroy_start(c, &a, &task, &err) == VMOP_OK, "destroy: %s", err.msg);
    ck_assert_int_eq(vcfeed_wait_gone(f, a.value, mark, BOUND_MS), 1);
    printf("vcfeed: destroy heard by a waiter after %lld ms\n", vmop_test_now_ms() - t0);
    ck_assert(!vcfeed_watching(f, a.value));
    ck_assert_msg(vim_task_wait(c, &task, 0, NULL, &err) == VMOP_OK, "task: %s", err.msg);
    /* its container is no longer watched: b is dropped with the watch, not gone */
    mark_held(f, &b, &mark);
    ck_assert_msg(vcfeed_set_containers(f, rest, &err) == VMOP_OK, "%s", err.msg);
    ck_assert(wait_stats(f, pred_watches, &one, BOUND_MS, &st));
    ck_assert(!vcfeed_watching(f, b.value));
    ck_assert_int_eq(vcfeed_wait_gone(f, b.value, mark, 300), -1);
    vcfeed_free(f);
    vim_client_free(c);
    vcsim_stop(sim, NULL);
}
END_TEST

/* vcfeed_vm_matches (vmsync's delete without a read): with the ownership marks' paths watched,
 * a VM carrying exactly the values asked for is vouched for with its power state; a value that
 * differs, a mark that changes in vCenter (heard by the feed) and a VM not held are not. */
START_TEST(test_vm_matches)
{
    struct vcsim_opts so = {.no_seed = 1};
    struct vcsim *sim = simfx_start(&so);
    struct vim_client *c = client_for(sim);
    const char *const containers[] = {"/DC0/vm", NULL};
    struct rec r;
    static const char *const props[] = {"runtime.powerState",
                                        "config.changeVersion",
                                        "config.instanceUuid",
                                        VCFEED_NSNAME_PATH,
                                        "config.extraConfig[\"vmop.uid\"]",
                                        "config.managedBy.extensionKey",
                                        "config.managedBy.type",
                                        "config.template",
                                        "parent",
                                        NULL};
    const char *const match[] = {"config.instanceUuid",
                                 VCFEED_NSNAME_PATH,
                                 "config.extraConfig[\"vmop.uid\"]",
                                 "config.managedBy.extensionKey",
                                 "config.managedBy.type",
                                 "config.template",
                                 "parent",
                                 NULL};
    struct vcfeed_opts o = {.client = c,
                            .containers = containers,
                            .props = props,
                            .match_props = match,
                            .map = rec_map,
                            .enqueue = rec_enqueue,
                            .user = &r,
                            .backoff_initial_ms = 100,
                            .backoff_max_ms = 1000,
                            .skip_initial = 1};
    const char *const unwatched[] = {"guest.ipAddress", NULL};
    struct vim_config_spec *spec = NULL;
    struct vim_moref a;
    struct vim_vm *v;
    struct vmop_err err = {0};
    struct vcfeed_stats st;
    enum vim_power_state power = VIM_POWER_UNKNOWN;
    const char *vals[7];
    char uuid[64], parent[VIM_MOREF_VALUE_MAX];
    struct vcfeed *f = NULL, *bad = NULL;
    unsigned one = 1;
    long long t0;

    rec_init(&r);
    ck_assert_int_eq(vim_config_spec_new(&spec), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(spec, VCFEED_EXTRA_KEY, "ns1/vm-m"), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(spec, "vmop.uid", "uid-1"), VMOP_OK);
    a = simfx_clone(c, sim, "/DC0/vm/DC0_C0_RP0_VM0",
                    (struct vim_clone_spec){.name = "feed-m", .config = spec});
    vim_config_spec_free(spec);
    spec = NULL;
    ck_assert_int_eq(vim_config_spec_new(&spec), VMOP_OK);
    ck_assert_int_eq(vim_cs_managed_by(spec, "com.vmware.vcenter.wcp", "VirtualMachine"), VMOP_OK);
    ck_assert_msg(vim_vm_reconfigure(c, &a, spec, &err) == VMOP_OK, "%s", err.msg);
    vim_config_spec_free(spec);
    v = simfx_vm_get(c, &a);
    snprintf(uuid, sizeof(uuid), "%s", v->instance_uuid);
    snprintf(parent, sizeof(parent), "%s", v->parent.value);
    vim_vm_free(v);
    o.match_props = unwatched; /* a match path must be watched */
    ck_assert_int_eq(vcfeed_new(&o, &bad, &err), VMOP_E_INVALID);
    o.match_props = match;
    ck_assert_msg(vcfeed_new(&o, &f, &err) == VMOP_OK, "vcfeed_new: %s", err.msg);
    ck_assert(wait_stats(f, pred_watches, &one, BOUND_MS, &st));
    vals[0] = uuid;
    vals[1] = "ns1/vm-m";
    vals[2] = "uid-1";
    vals[3] = "com.vmware.vcenter.wcp";
    vals[4] = "VirtualMachine";
    vals[5] = "false";
    vals[6] = parent;
    t0 = vmop_test_now_ms();
    while (!vcfeed_vm_matches(f, a.value, vals, 7, &power) && vmop_test_now_ms() - t0 < BOUND_MS)
        vmop_test_sleep_ms(20); /* bounded: until the initial set holds it */
    ck_assert_msg(vcfeed_vm_matches(f, a.value, vals, 7, &power), "%s not vouched for", a.value);
    ck_assert_int_eq(power, VIM_POWER_OFF);
    ck_assert(!vcfeed_vm_matches(f, a.value, vals, 6, &power)); /* not every path */
    ck_assert(!vcfeed_vm_matches(f, "vm-999999", vals, 7, &power));
    vals[2] = "uid-2";
    ck_assert(!vcfeed_vm_matches(f, a.value, vals, 7, &power));
    vals[2] = "uid-1";
    /* the mark changes in vCenter: heard, no longer vouched for */
    ck_assert_int_eq(vim_config_spec_new(&spec), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(spec, "vmop.uid", "uid-3"), VMOP_OK);
    ck_assert_msg(vim_vm_reconfigure(c, &a, spec, &err) == VMOP_OK, "%s", err.msg);
    vim_config_spec_free(spec);
    t0 = vmop_test_now_ms();
    while (vcfeed_vm_matches(f, a.value, vals, 7, &power) && vmop_test_now_ms() - t0 < BOUND_MS)
        vmop_test_sleep_ms(20);
    ck_assert(!vcfeed_vm_matches(f, a.value, vals, 7, &power));
    vals[2] = "uid-3";
    ck_assert(vcfeed_vm_matches(f, a.value, vals, 7, &power));
    vcfeed_free(f);
    vim_client_free(c);
    vcsim_stop(sim, NULL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("vcfeed_sim");
    TCase *t = tcase_create("sim");

    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_events);
    tcase_add_test(t, test_vm_matches);
    tcase_add_test(t, test_session_expiry);
    tcase_add_test(t, test_session_expiry_paged);
    tcase_add_test(t, test_restart);
    tcase_add_test(t, test_idle_cost);
    tcase_add_test(t, test_wait_power);
    tcase_add_test(t, test_wait_gone);
    tcase_add_test(t, test_expect);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return vmop_check_run(suite());
}
