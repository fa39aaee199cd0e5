/* test_reconcile_rules.c: unit tests for operator/vm/reconcile_rules.c, the pure decisions of
 * the VM reconcile's steps: the events one apply makes (in order, with drift counted and the
 * failure reasons), and when to look at the VM again. */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "reconcile_rules.h"

static struct rr_apply_facts F;
static struct rr_event EV[RR_MAX_EVENTS];

static void setup(void)
{
    memset(&F, 0, sizeof(F));
    memset(EV, 0, sizeof(EV));
    F.present = 1;
    F.unique_id = "vm-42";
    F.prior_unique_id = "vm-42";
    F.want = API_POWER_ON;
    F.was = API_POWER_ON;
    F.spec_unchanged = 1;
    F.done = "";
    F.failed_step = VM_STEP_NONE;
}

/* Asserts the reasons of the events, in order. */
static void expect(const char *const *reasons)
{
    size_t want = 0, n = rr_apply_events(&F, EV, RR_MAX_EVENTS);
    while (reasons[want])
        want++;
    ck_assert_uint_eq(n, want);
    for (size_t i = 0; i < n; i++)
        ck_assert_str_eq(EV[i].reason, reasons[i]);
}

START_TEST(nothing_done_no_events)
{
    expect((const char *const[]){NULL});
}
END_TEST

START_TEST(create_sequence)
{
    F.created = 1;
    F.prior_unique_id = NULL;
    F.did = VM_DID(VM_STEP_CREATE) | VM_DID(VM_STEP_RECONFIGURE) | VM_DID(VM_STEP_POWER_ON);
    F.done = "create, reconfigure(numCPUs), power-on";
    /* one event for the create and its power-on */
    expect((const char *const[]){"Created", NULL});
    ck_assert_str_eq(EV[0].message, "virtual machine vm-42 created in vCenter and powered on");
    ck_assert_int_eq(EV[0].drift, 0); /* powering on a new VM is no drift */
    /* a VM created powered off */
    F.did = VM_DID(VM_STEP_CREATE) | VM_DID(VM_STEP_RECONFIGURE);
    expect((const char *const[]){"Created", NULL});
    ck_assert_str_eq(EV[0].message, "virtual machine vm-42 created in vCenter");
}
END_TEST

START_TEST(recreated_after_vanishing)
{
    F.created = 1;
    F.prior_unique_id = "vm-7";
    F.did = VM_DID(VM_STEP_CREATE) | VM_DID(VM_STEP_POWER_ON);
    expect((const char *const[]){"VirtualMachineNotFound", "Created", NULL});
    ck_assert_ptr_nonnull(strstr(EV[0].message, "vm-7 was not found"));
    ck_assert_ptr_nonnull(strstr(EV[0].message, "recreated as vm-42"));
    ck_assert_str_eq(EV[0].type, "Warning");
}
END_TEST

START_TEST(power_drift)
{
    F.did = VM_DID(VM_STEP_POWER_ON);
    expect((const char *const[]){"PowerStateDrift", "PoweredOn", NULL});
    ck_assert_int_eq(EV[0].drift, 1);
    /* a power-on the spec asked for (it was off) is no drift */
    F.was = API_POWER_OFF;
    expect((const char *const[]){"PoweredOn", NULL});
    /* powered off in spec and status, found on: drift */
    F.want = F.was = API_POWER_OFF;
    F.did = VM_DID(VM_STEP_POWER_OFF);
    expect((const char *const[]){"PowerStateDrift", "PowerOff", NULL});
    ck_assert_ptr_nonnull(strstr(EV[0].message, "expected PoweredOff"));
}
END_TEST

START_TEST(configuration_drift_only_without_spec_change)
{
    F.did = VM_DID(VM_STEP_RECONFIGURE);
    F.done = "reconfigure(numCPUs)";
    expect((const char *const[]){"ConfigurationDrift", "Reconfigured", NULL});
    ck_assert_str_eq(EV[0].message, "changed outside vmop, set back: reconfigure(numCPUs)");
    ck_assert_int_eq(EV[0].drift, 1);
    F.spec_unchanged = 0; /* the tenant changed the spec: a plain reconfigure */
    expect((const char *const[]){"Reconfigured", NULL});
    ck_assert_int_eq(EV[0].drift, 0);
}
END_TEST

START_TEST(adopted_and_foreign)
{
    F.adopted = 1;
    F.foreign_ref = "vm-9";
    F.foreign_why = "another resource's vmop.uid";
    expect((const char *const[]){"OwnershipConflict", "Adopted", NULL});
    ck_assert_ptr_nonnull(strstr(EV[0].message, "status.uniqueID named VM vm-9"));
    ck_assert_ptr_nonnull(strstr(EV[1].message, "marked with vmop.uid"));
    F.present = 0; /* reported only when this resource's own VM was found */
    expect((const char *const[]){"Adopted", NULL});
}
END_TEST

START_TEST(restart_and_suspend)
{
    F.did = VM_DID(VM_STEP_RESTART);
    F.restart_how = "ResetVM_Task";
    F.restart_mode = "Hard";
    F.restart_for = "2026-12-02T08:00:00Z";
    expect((const char *const[]){"Restarted", NULL});
    ck_assert_str_eq(EV[0].message, "virtual machine restarted (ResetVM_Task, restartMode Hard) "
                                    "for nextRestartTime 2026-12-02T08:00:00Z");
    F.did = VM_DID(VM_STEP_SUSPEND);
    F.want = API_POWER_SUSPENDED;
    expect((const char *const[]){"Suspended", NULL});
}
END_TEST

/* The failure comes last, after what was done before it, with a reason by step. */
START_TEST(failure_reasons)
{
    static const struct {
        enum vm_step step;
        const char *reason;
    } cases[] = {
        {VM_STEP_CREATE, "CreateFailed"},      {VM_STEP_STORAGE, "CreateFailed"},
        {VM_STEP_RESTART, "RestartFailed"},    {VM_STEP_RECONFIGURE, "ReconcileFailed"},
        {VM_STEP_POWER_ON, "ReconcileFailed"}, {VM_STEP_OBSERVE, "ReconcileFailed"},
    };
    F.fail_reason = "InsufficientResourcesFault";
    F.fail_message = "not enough memory";
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        F.failed_step = cases[i].step;
        expect((const char *const[]){cases[i].reason, NULL});
        ck_assert_str_eq(EV[0].type, "Warning");
        ck_assert_ptr_nonnull(strstr(EV[0].message, "failed with InsufficientResourcesFault: not "
                                                    "enough memory"));
        ck_assert_ptr_nonnull(strstr(EV[0].message, vm_step_str(cases[i].step)));
    }
    F.did = VM_DID(VM_STEP_POWER_OFF);
    F.want = API_POWER_OFF;
    F.was = API_POWER_ON;
    F.failed_step = VM_STEP_RECONFIGURE;
    expect((const char *const[]){"PowerOff", "ReconcileFailed", NULL});
}
END_TEST

START_TEST(events_bounded)
{
    struct rr_event two[2];
    F.created = 1;
    F.prior_unique_id = "vm-1";
    F.did = VM_DID(VM_STEP_POWER_ON) | VM_DID(VM_STEP_RESTART);
    F.failed_step = VM_STEP_RESTART;
    ck_assert_uint_eq(rr_apply_events(&F, two, 2), 2);
    ck_assert_str_eq(two[1].reason, "Created");
}
END_TEST

START_TEST(requeue_rule)
{
    struct rr_requeue_facts q = {.present = 1,
                                 .powered_on = 1,
                                 .has_ip = 1,
                                 .feed_live = 1,
                                 .feed_holds_vm = 1,
                                 .unwatched_ms = 40000};
    ck_assert_int_eq(rr_requeue_ms(&q, 3000, 10000), 0); /* the feed tells */
    q.has_ip = 0;
    ck_assert_int_eq(rr_requeue_ms(&q, 3000, 10000), 0); /* the IP arrives as an event */
    q.feed_live = 0;
    ck_assert_int_eq(rr_requeue_ms(&q, 3000, 10000), 3000); /* no feed: poll for the IP */
    q.has_ip = 1;
    ck_assert_int_eq(rr_requeue_ms(&q, 3000, 10000), 40000); /* no feed: now and then */
    q.has_ip = 0;
    q.network_disabled = 1; /* no IP to wait for: looked at now and then */
    ck_assert_int_eq(rr_requeue_ms(&q, 3000, 10000), 40000);
    q.network_disabled = 0;
    q.has_ip = 1;
    q.probe_pending = 1;
    ck_assert_int_eq(rr_requeue_ms(&q, 3000, 10000), 10000);
    q.probe_pending = 0;
    q.feed_live = 1;
    q.feed_holds_vm = 0;
    ck_assert_int_eq(rr_requeue_ms(&q, 3000, 10000), 40000); /* outside the watched folders */
    q.created = 1;
    ck_assert_int_eq(rr_requeue_ms(&q, 3000, 10000), 3000); /* just created */
    q.present = 0;
    ck_assert_int_eq(rr_requeue_ms(&q, 3000, 10000), 10000);
}
END_TEST

START_TEST(status_hold_rule)
{
    struct rr_requeue_facts q = {
        .present = 1, .powered_on = 1, .feed_live = 1, .created = 1, .unwatched_ms = 40000};
    ck_assert_int_eq(rr_status_hold_ms(&q, 1000), 1000); /* created, on, no IP yet: wait */
    q.has_ip = 1;
    ck_assert_int_eq(rr_status_hold_ms(&q, 1000), 0); /* the IP is there: write it now */
    q.has_ip = 0;
    q.created = 0;
    ck_assert_int_eq(rr_status_hold_ms(&q, 1000), 0); /* a later pass with no hold left */
    q.hold_left_ms = 400; /* a later pass of a held create that changed nothing: the rest */
    ck_assert_int_eq(rr_status_hold_ms(&q, 1000), 400);
    q.changed = 1; /* it did something in vCenter: the status tells at once */
    ck_assert_int_eq(rr_status_hold_ms(&q, 1000), 0);
    q.changed = 0;
    q.has_ip = 1; /* the IP came: written now */
    ck_assert_int_eq(rr_status_hold_ms(&q, 1000), 0);
    q.has_ip = 0;
    q.feed_live = 0; /* the feed went down meanwhile: nothing would tell */
    ck_assert_int_eq(rr_status_hold_ms(&q, 1000), 0);
    q.feed_live = 1;
    q.hold_left_ms = 0;
    q.created = 1;
    q.feed_live = 0;
    ck_assert_int_eq(rr_status_hold_ms(&q, 1000), 0); /* nothing would tell when the IP comes */
    q.feed_live = 1;
    q.network_disabled = 1;
    ck_assert_int_eq(rr_status_hold_ms(&q, 1000), 0); /* no IP to wait for */
    q.network_disabled = 0;
    q.powered_on = 0;
    ck_assert_int_eq(rr_status_hold_ms(&q, 1000), 0); /* created powered off */
    q.powered_on = 1;
    q.present = 0;
    ck_assert_int_eq(rr_status_hold_ms(&q, 1000), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reconcile_rules");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, nothing_done_no_events);
    tcase_add_test(tc, create_sequence);
    tcase_add_test(tc, recreated_after_vanishing);
    tcase_add_test(tc, power_drift);
    tcase_add_test(tc, configuration_drift_only_without_spec_change);
    tcase_add_test(tc, adopted_and_foreign);
    tcase_add_test(tc, restart_and_suspend);
    tcase_add_test(tc, failure_reasons);
    tcase_add_test(tc, events_bounded);
    tcase_add_test(tc, requeue_rule);
    tcase_add_test(tc, status_hold_rule);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
