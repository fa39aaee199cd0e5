/* test_kube_lease.c: unit tests for leader election with a fake clock and a fake Lease API
 * (acquire, renew, failover after expiry on the local clock, renew deadline, release, races,
 * clock skew). Suite: unit.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "kube_lease.h"
#include "kube_util.h"

struct fake {
    cJSON *lease; /* the "server" copy */
    long rv;
    int fail_all;
    int bump_before_update; /* another writer sneaks in before the next update */
    int64_t mono;
    int64_t wall;
};

static int64_t f_mono(void *ud)
{
    return ((struct fake *)ud)->mono;
}

static int64_t f_wall(void *ud)
{
    return ((struct fake *)ud)->wall + ((struct fake *)ud)->mono * 1000;
}

static void set_rv(cJSON *l, long rv)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%ld", rv);
    cJSON *md = cJSON_GetObjectItem(l, "metadata");
    cJSON_DeleteItemFromObject(md, "resourceVersion");
    cJSON_AddStringToObject(md, "resourceVersion", buf);
}

static vmop_rc f_get(void *ud, const char *ns, const char *name, cJSON **ret, struct vmop_err *err)
{
    struct fake *f = ud;
    if (f->fail_all)
        return vmop_fail(err, VMOP_E_TRANSPORT, "injected");
    if (!f->lease)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "no lease");
    *ret = cJSON_Duplicate(f->lease, 1);
    return VMOP_OK;
}

static vmop_rc f_create(void *ud, const char *ns, const cJSON *l, cJSON **ret, struct vmop_err *err)
{
    struct fake *f = ud;
    if (f->fail_all)
        return vmop_fail(err, VMOP_E_TRANSPORT, "injected");
    if (f->lease)
        return vmop_fail(err, VMOP_E_EXISTS, "exists");
    f->lease = cJSON_Duplicate(l, 1);
    set_rv(f->lease, ++f->rv);
    *ret = cJSON_Duplicate(f->lease, 1);
    return VMOP_OK;
}

static vmop_rc f_update(void *ud, const char *ns, const cJSON *l, cJSON **ret, struct vmop_err *err)
{
    struct fake *f = ud;
    if (f->fail_all)
        return vmop_fail(err, VMOP_E_TRANSPORT, "injected");
    if (!f->lease)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "no lease");
    if (f->bump_before_update) {
        f->bump_before_update = 0;
        set_rv(f->lease, ++f->rv);
    }
    const char *rv = kube_obj_rv(l);
    if (!rv || strcmp(rv, kube_obj_rv(f->lease)) != 0)
        return vmop_fail(err, VMOP_E_CONFLICT, "conflict");
    cJSON_Delete(f->lease);
    f->lease = cJSON_Duplicate(l, 1);
    set_rv(f->lease, ++f->rv);
    *ret = cJSON_Duplicate(f->lease, 1);
    return VMOP_OK;
}

struct cb {
    int started, stopped, new_leader;
    char last_leader[64];
};

static void on_start(void *ud)
{
    ((struct cb *)ud)->started++;
}

static void on_stop(void *ud)
{
    ((struct cb *)ud)->stopped++;
}

static void on_new(void *ud, const char *id)
{
    struct cb *c = ud;
    c->new_leader++;
    snprintf(c->last_leader, sizeof(c->last_leader), "%s", id);
}

static struct fake F;
static struct kube_clock CLOCK = {.mono_ms = f_mono, .wall_us = f_wall, .ud = &F};
static struct kube_lease_api API = {.get = f_get, .create = f_create, .update = f_update, .ud = &F};

static struct kube_elector *mk(const char *id, struct cb *cb, int release)
{
    struct kube_elector_opts o = {.ns = "vm-system",
                                  .name = "vm-operator",
                                  .identity = id,
                                  .release_on_cancel = release,
                                  .on_started_leading = on_start,
                                  .on_stopped_leading = on_stop,
                                  .on_new_leader = on_new,
                                  .cb_ud = cb,
                                  .clock = &CLOCK,
                                  .api = &API};
    struct kube_elector *el = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(kube_elector_new(NULL, &o, &el, &err), VMOP_OK);
    return el;
}

static const char *holder(void)
{
    return kube_json_path_str(F.lease, "spec", "holderIdentity");
}

static long transitions(void)
{
    return (long)cJSON_GetObjectItem(cJSON_GetObjectItem(F.lease, "spec"), "leaseTransitions")
        ->valuedouble;
}

static void reset(void)
{
    cJSON_Delete(F.lease);
    memset(&F, 0, sizeof(F));
    F.wall = 1735725600LL * 1000000; /* 2025-01-01T10:00:00Z */
}

START_TEST(acquire_renew_failover)
{
    reset();
    struct cb ca = {0}, cbb = {0};
    struct kube_elector *a = mk("a", &ca, 0), *b = mk("b", &cbb, 0);

    ck_assert_int_eq(kube_elector_step(a), 2000);
    ck_assert(kube_elector_is_leader(a));
    ck_assert_int_eq(ca.started, 1);
    ck_assert_str_eq(holder(), "a");
    ck_assert_int_eq(transitions(), 0);
    const char *rt = kube_json_path_str(F.lease, "spec", "renewTime");
    ck_assert_str_eq(rt, "2025-01-01T10:00:00.000000Z"); /* MicroTime: 6 digits */

    long w = kube_elector_step(b);
    ck_assert_int_ge(w, 2000);
    ck_assert_int_le(w, 2000 + 2400);
    ck_assert(!kube_elector_is_leader(b));
    ck_assert_str_eq(cbb.last_leader, "a");

    /* a renews by the fast path: acquireTime and transitions kept, renewTime moves */
    F.mono = 2000;
    char acq[64];
    snprintf(acq, sizeof(acq), "%s", kube_json_path_str(F.lease, "spec", "acquireTime"));
    ck_assert_int_eq(kube_elector_step(a), 2000);
    ck_assert_str_eq(kube_json_path_str(F.lease, "spec", "acquireTime"), acq);
    ck_assert_str_eq(kube_json_path_str(F.lease, "spec", "renewTime"),
                     "2025-01-01T10:00:02.000000Z");
    kube_elector_step(b); /* b sees the change at t=2000 */
    ck_assert(!kube_elector_is_leader(b));

    /* a dies. b waits leaseDuration (15 s) from when IT saw the last change (t=2000) */
    for (F.mono = 4000; F.mono < 17000; F.mono += 2000) {
        kube_elector_step(b);
        ck_assert_msg(!kube_elector_is_leader(b), "b took over early at %lld", (long long)F.mono);
    }
    F.mono = 17001;
    kube_elector_step(b);
    ck_assert(kube_elector_is_leader(b));
    ck_assert_int_eq(cbb.started, 1);
    ck_assert_str_eq(holder(), "b");
    ck_assert_int_eq(transitions(), 1);
    ck_assert_str_ne(kube_json_path_str(F.lease, "spec", "acquireTime"), acq);

    /* a wakes up: its renew fails (held by b), and 15 s > renewDeadline passed: it stops */
    ck_assert_int_eq(kube_elector_step(a), -1);
    ck_assert(!kube_elector_is_leader(a));
    ck_assert_int_eq(ca.stopped, 1);
    ck_assert(kube_elector_done(a));
    ck_assert_str_eq(holder(), "b");

    kube_elector_free(a);
    kube_elector_free(b);
    ck_assert_int_eq(ca.stopped, 1);  /* not called twice */
    ck_assert_int_eq(cbb.stopped, 1); /* b was leading when freed */
}
END_TEST

START_TEST(renew_deadline)
{
    reset();
    struct cb ca = {0};
    struct kube_elector *a = mk("a", &ca, 0);
    kube_elector_step(a);
    ck_assert(kube_elector_is_leader(a));
    F.fail_all = 1;
    for (F.mono = 2000; F.mono < 10000; F.mono += 2000) {
        ck_assert_int_eq(kube_elector_step(a), 2000);
        ck_assert(kube_elector_is_leader(a)); /* still within renewDeadline */
    }
    F.mono = 10000;
    ck_assert_int_eq(kube_elector_step(a), -1);
    ck_assert(!kube_elector_is_leader(a));
    ck_assert_int_eq(ca.stopped, 1);
    kube_elector_free(a);
    ck_assert_int_eq(ca.stopped, 1);
}
END_TEST

/* A leader paused past its renew deadline (SIGSTOP) still says it leads until its elector runs
 * again, but the lease is no longer fresh: workers must not act. */
START_TEST(lease_fresh_after_pause)
{
    reset();
    struct cb ca = {0};
    struct kube_elector *a = mk("a", &ca, 0);
    ck_assert(!kube_elector_lease_fresh(a)); /* not leading yet */
    kube_elector_step(a);
    ck_assert(kube_elector_lease_fresh(a));
    F.mono = 9999;
    ck_assert(kube_elector_lease_fresh(a));
    F.mono = 16000; /* resumed after a pause longer than the lease: no step has run yet */
    ck_assert(kube_elector_is_leader(a));
    ck_assert(!kube_elector_lease_fresh(a));
    ck_assert_int_eq(kube_elector_step(a), -1); /* the elector then gives up, without renewing */
    ck_assert(!kube_elector_lease_fresh(a));
    kube_elector_free(a);
}
END_TEST

START_TEST(recovers_within_deadline)
{
    reset();
    struct cb ca = {0};
    struct kube_elector *a = mk("a", &ca, 0);
    kube_elector_step(a);
    F.fail_all = 1;
    F.mono = 8000;
    kube_elector_step(a);
    F.fail_all = 0;
    F.mono = 9000;
    kube_elector_step(a);
    F.mono = 18000; /* 9 s after the last renewal: fine */
    ck_assert_int_eq(kube_elector_step(a), 2000);
    ck_assert(kube_elector_is_leader(a));
    ck_assert_int_eq(ca.stopped, 0);
    kube_elector_free(a);
}
END_TEST

START_TEST(release_hands_over_at_once)
{
    reset();
    struct cb ca = {0}, cbb = {0};
    struct kube_elector *a = mk("a", &ca, 1), *b = mk("b", &cbb, 0);
    kube_elector_step(a);
    kube_elector_step(b);
    ck_assert(!kube_elector_is_leader(b));
    kube_elector_stop(a); /* release_on_cancel */
    ck_assert_int_eq(ca.stopped, 1);
    ck_assert_str_eq(holder(), "");
    ck_assert_int_eq(
        (int)cJSON_GetObjectItem(cJSON_GetObjectItem(F.lease, "spec"), "leaseDurationSeconds")
            ->valuedouble,
        1);
    ck_assert_int_eq(transitions(), 0);
    F.mono = 100;
    kube_elector_step(b);
    ck_assert(kube_elector_is_leader(b));
    ck_assert_int_eq(transitions(), 1);
    kube_elector_free(a);
    kube_elector_free(b);
}
END_TEST

START_TEST(races_and_skew)
{
    reset();
    struct cb ca = {0}, cbb = {0};
    struct kube_elector *a = mk("a", &ca, 0), *b = mk("b", &cbb, 0);
    /* someone else holds a lease whose renewTime is ancient (skewed clock): b must still wait a
     * full leaseDuration from its own first observation */
    kube_elector_step(a);
    cJSON *spec = cJSON_GetObjectItem(F.lease, "spec");
    cJSON_ReplaceItemInObject(spec, "holderIdentity", cJSON_CreateString("c"));
    cJSON_ReplaceItemInObject(spec, "renewTime", cJSON_CreateString("2001-01-01T00:00:00.000000Z"));
    F.mono = 50000;
    kube_elector_step(b);
    ck_assert(!kube_elector_is_leader(b));
    F.mono = 64000;
    kube_elector_step(b);
    ck_assert(!kube_elector_is_leader(b));
    /* expired now, but another writer wins the race: 409 -> not leader */
    F.mono = 65001;
    F.bump_before_update = 1;
    struct vmop_err err = {0};
    ck_assert_int_eq(kube_elector_try(b, &err), VMOP_E_CONFLICT);
    ck_assert(!kube_elector_is_leader(b));
    /* the bump changed nothing in the spec, so the expiry stands: the next try wins */
    vmop_err_clear(&err);
    ck_assert_int_eq(kube_elector_try(b, &err), VMOP_OK);
    ck_assert_str_eq(holder(), "b");
    kube_elector_free(a);
    kube_elector_free(b);

    /* a fresh lease is created */
    reset();
    struct kube_elector *c = mk("c", &ca, 0);
    F.fail_all = 0;
    ck_assert_int_eq(kube_elector_try(c, &err), VMOP_OK);
    kube_elector_free(c);
}
END_TEST

START_TEST(bad_timing)
{
    struct kube_elector_opts o = {.ns = "n",
                                  .name = "l",
                                  .identity = "i",
                                  .api = &API,
                                  .lease_duration_ms = 10000,
                                  .renew_deadline_ms = 10000};
    struct kube_elector *el = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(kube_elector_new(NULL, &o, &el, &err), VMOP_E_INVALID);
    o.renew_deadline_ms = 2000;
    o.retry_period_ms = 2000;
    vmop_err_clear(&err);
    ck_assert_int_eq(kube_elector_new(NULL, &o, &el, &err), VMOP_E_INVALID);
    o.identity = NULL;
    vmop_err_clear(&err);
    ck_assert_int_eq(kube_elector_new(NULL, &o, &el, &err), VMOP_E_INVALID);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kube_lease");
    TCase *tc = tcase_create("lease");
    tcase_add_test(tc, acquire_renew_failover);
    tcase_add_test(tc, renew_deadline);
    tcase_add_test(tc, lease_fresh_after_pause);
    tcase_add_test(tc, recovers_within_deadline);
    tcase_add_test(tc, release_hands_over_at_once);
    tcase_add_test(tc, races_and_skew);
    tcase_add_test(tc, bad_timing);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return vmop_check_run(suite());
}
