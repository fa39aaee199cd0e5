/* reconcile_rules.c: events of an apply and the requeue rule (see reconcile_rules.h). */
#include "reconcile_rules.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ownership.h"

struct evlist {
    struct rr_event *ev;
    size_t n, max;
};

static void add(struct evlist *l, const char *type, const char *reason, int drift, const char *fmt,
                ...) __attribute__((format(printf, 5, 6)));

static void add(struct evlist *l, const char *type, const char *reason, int drift, const char *fmt,
                ...)
{
    struct rr_event *e;
    va_list ap;
    if (l->n >= l->max)
        return;
    e = &l->ev[l->n++];
    e->type = type;
    e->reason = reason;
    e->drift = drift;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof(e->message), fmt, ap);
    va_end(ap);
}

static const char *s(const char *v)
{
    return v ? v : "";
}

static int did(const struct rr_apply_facts *f, enum vm_step step)
{
    return (f->did & VM_DID(step)) != 0;
}

/* Power set back (spec and the last status agree, yet vmsync had to act) and fields set back
 * without a spec change. */
static void drift(const struct rr_apply_facts *f, struct evlist *l)
{
    if (f->created || !f->did)
        return;
    if (f->want == API_POWER_ON && f->was == API_POWER_ON && did(f, VM_STEP_POWER_ON))
        add(l, "Warning", "PowerStateDrift", 1,
            "expected PoweredOn, observed not powered on (changed outside vmop): powered on");
    else if (f->want == API_POWER_OFF && f->was == API_POWER_OFF && did(f, VM_STEP_POWER_OFF))
        add(l, "Warning", "PowerStateDrift", 1,
            "expected PoweredOff, observed PoweredOn (changed outside vmop): powered off");
    if (did(f, VM_STEP_RECONFIGURE) && f->prior_unique_id && *f->prior_unique_id &&
        f->spec_unchanged)
        add(l, "Warning", "ConfigurationDrift", 1, "changed outside vmop, set back: %s",
            s(f->done));
}

size_t rr_apply_events(const struct rr_apply_facts *f, struct rr_event *ret, size_t max)
{
    struct evlist l = {ret, 0, max};
    const char *id = s(f->unique_id);

    if (f->created && f->prior_unique_id && *f->prior_unique_id)
        /* deleted in vCenter while the resource exists: recreated (docs/user-guide.md) */
        add(&l, "Warning", "VirtualMachineNotFound", 0,
            "virtual machine %s was not found in vCenter (deleted outside vmop): recreated as %s "
            "with the same identity",
            f->prior_unique_id, id);
    if (f->foreign_ref && f->present)
        add(&l, "Warning", OWN_REASON_CONFLICT, 0,
            "status.uniqueID named VM %s, which is not this resource's (%s): ignored and left "
            "untouched; this resource's VM is %s",
            f->foreign_ref, s(f->foreign_why), id);
    if (f->adopted)
        add(&l, "Normal", "Adopted", 0,
            "virtual machine %s was created by an earlier vmop release: marked with %s", id,
            OWN_KEY_UID);
    /* a create that powered the VM on says both in one event (one request fewer per VM) */
    if (f->created)
        add(&l, "Normal", "Created", 0, "virtual machine %s created in vCenter%s", id,
            did(f, VM_STEP_POWER_ON) ? " and powered on" : "");
    drift(f, &l);
    if (did(f, VM_STEP_POWER_ON) && !f->created)
        add(&l, "Normal", "PoweredOn", 0, "virtual machine powered on");
    if (did(f, VM_STEP_POWER_OFF))
        add(&l, "Normal", "PowerOff", 0, "virtual machine powered off");
    if (did(f, VM_STEP_SUSPEND))
        add(&l, "Normal", "Suspended", 0, "virtual machine suspended");
    if (did(f, VM_STEP_RECONFIGURE) && !f->created)
        add(&l, "Normal", "Reconfigured", 0, "%s", s(f->done));
    if (did(f, VM_STEP_RESTART))
        add(&l, "Normal", "Restarted", 0,
            "virtual machine restarted (%s, restartMode %s) for nextRestartTime %s",
            s(f->restart_how), s(f->restart_mode), s(f->restart_for));
    if (f->failed_step != VM_STEP_NONE)
        /* a storage policy that cannot be satisfied stops the create before it starts */
        add(&l, "Warning",
            f->failed_step == VM_STEP_CREATE || f->failed_step == VM_STEP_STORAGE ? "CreateFailed"
            : f->failed_step == VM_STEP_RESTART                                   ? "RestartFailed"
                                                : "ReconcileFailed",
            0, "%s failed with %s: %s", vm_step_str(f->failed_step), s(f->fail_reason),
            s(f->fail_message));
    return l.n;
}

long rr_requeue_ms(const struct rr_requeue_facts *f, long wait_delay_ms, long wait_max_ms)
{
    if (f->present && f->powered_on && !f->network_disabled && !f->has_ip && !f->feed_live)
        return wait_delay_ms;
    if (!f->present)
        return wait_max_ms;
    if (f->probe_pending)
        return wait_max_ms;
    if (!f->feed_live)
        /* no change feed tells (none for this vCenter, or it is down): look again now and then,
         * whatever --resync-period says */
        return f->unwatched_ms;
    if (!f->feed_holds_vm)
        /* the feed has not seen this VM yet (just created, or outside the watched folders): a
         * VM destroyed before the feed's next round would never be reported, so look again */
        return f->created ? wait_delay_ms : f->unwatched_ms;
    return 0;
}

long rr_status_hold_ms(const struct rr_requeue_facts *f, long hold_ms)
{
    if (!f->present || !f->powered_on || f->network_disabled || f->has_ip || !f->feed_live)
        return 0;
    if (f->created)
        return hold_ms;
    return !f->changed && f->hold_left_ms > 0 ? f->hold_left_ms : 0;
}
