/* vim_task.c: waiting for vSphere tasks, with a bound.
 *
 * Owns: the wait loop and the one read it repeats (vim_task_poll, also for callers that hear of a
 * task's end another way and read only as a backstop). It reads Task.info 25 ms after the start (no
 * task ends sooner, and a read at once would nearly always be wasted); while the task is queued or
 * running it reads it again with a backoff (50 ms doubling to 1 s), never past the deadline. A
 * finished task gives its result moref; a failed one VMOP_E_FAULT with the xsi:type of
 * info.error.fault as err->fault and localizedMessage plus the fault's own fields as the message.
 * Polling is used instead of a PropertyFilter so a wait holds no server-side object that could
 * leak; tasks take seconds, so a 1 s poll costs little. The simulator (govmomi v0.56) runs a task
 * on its own after the call that starts it returns: a read at once sees it running, the read after
 * 25 ms its end. Not here: starting tasks (vim_vm.c), cancelling them (a task still running at the
 * deadline is VMOP_E_TIMEOUT and is left alone).
 */
#include "vim_internal.h"
#include "vmop_clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* No task of vCenter's ends the moment it is created: the first read comes after POLL_START_MS
 * (one read for a quick task instead of two), then every POLL_FIRST_MS doubling to POLL_MAX_MS. */
#define POLL_START_MS 25L
#define POLL_FIRST_MS 50L
#define POLL_MAX_MS   1000L

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

/* Fills err from TaskInfo.error (a LocalizedMethodFault). */
static vmop_rc task_error(const struct vim_moref *task, xmlNodePtr info, struct vmop_err *err)
{
    xmlNodePtr lmf = vim_xml_child(info, "error");
    xmlNodePtr fault = vim_xml_child(lmf, "fault");
    char *type = vim_xml_xsi_type(fault);
    char *lmsg = vim_xml_child_text(lmf, "localizedMessage");
    char *name = vim_xml_child_text(info, "name");
    struct vbuf msg;

    vbuf_init(&msg, VMOP_ERR_MSG_MAX * 2);
    vbuf_addf(&msg, "task %s", task->value);
    if (name && *name) {
        vbuf_adds(&msg, " (");
        vbuf_add(&msg, name, strnlen(name, 64));
        vbuf_adds(&msg, ")");
    }
    vbuf_addf(&msg, " failed: %s", type && *type ? type : "UnknownFault");
    if (lmsg && *lmsg) {
        vbuf_adds(&msg, ": ");
        vbuf_add(&msg, lmsg, strnlen(lmsg, 300));
    }
    if (fault)
        vim_soap_fault_details(fault, &msg);
    vmop_fail_fault(err, VMOP_E_FAULT, type && *type ? type : "UnknownFault", 0, "%s",
                    vbuf_error(&msg) ? "task failed" : vbuf_str(&msg));
    vbuf_free(&msg);
    free(type);
    free(lmsg);
    free(name);
    return VMOP_E_FAULT;
}

vmop_rc vim_task_poll(struct vim_client *c, const struct vim_moref *task, int *ret_done,
                      struct vim_moref *ret_result, struct vmop_err *err)
{
    static const char *const paths[] = {"info", NULL};
    struct vim_objects objs = {0};
    xmlNodePtr info;
    char *state;
    vmop_rc rc;

    if (!c || !task || !vim_moref_is_set(task) || !ret_done)
        return vmop_fail(err, VMOP_E_INVALID, "vim_task_poll: no task");
    *ret_done = 0;
    rc = vim_retrieve(c, task, "Task", paths, 0, &objs, err);
    if (rc != VMOP_OK)
        return rc;
    info = objs.n ? vim_object_prop(&objs.items[0], "info") : NULL;
    state = vim_xml_child_text(info, "state");
    if (!state) {
        rc = vmop_fail(err, VMOP_E_PROTO, "task %s: no info.state", task->value);
    } else if (strcmp(state, "success") == 0) {
        xmlNodePtr res = vim_xml_child(info, "result");
        struct vim_moref ref;
        memset(&ref, 0, sizeof(ref));
        /* Only a moref result is kept (CloneVM: the new VM); other results are ignored. */
        if (res && vim_xml_moref(res, &ref) != VMOP_OK)
            memset(&ref, 0, sizeof(ref));
        if (ret_result)
            *ret_result = ref;
        *ret_done = 1;
    } else if (strcmp(state, "error") == 0) {
        rc = task_error(task, info, err);
    } /* else queued or running */
    free(state);
    vim_objects_free(&objs);
    return rc;
}

vmop_rc vim_task_wait(struct vim_client *c, const struct vim_moref *task, long timeout_ms,
                      struct vim_moref *ret_result, struct vmop_err *err)
{
    long long deadline;
    long backoff = POLL_FIRST_MS;

    if (!c || !task || !vim_moref_is_set(task))
        return vmop_fail(err, VMOP_E_INVALID, "vim_task_wait: no task");
    if (timeout_ms <= 0)
        timeout_ms = c->timeout_ms * 10;
    deadline = vmop_mono_ms() + timeout_ms;

    sleep_ms(POLL_START_MS < timeout_ms ? POLL_START_MS : timeout_ms);
    for (;;) {
        int done = 0;
        vmop_rc rc = vim_task_poll(c, task, &done, ret_result, err);
        long long left;
        if (rc != VMOP_OK || done)
            return rc;
        left = deadline - vmop_mono_ms(); /* queued or running */
        if (left <= 0)
            return vmop_fail(err, VMOP_E_TIMEOUT, "task %s still running after %ld ms", task->value,
                             timeout_ms);
        sleep_ms(backoff < left ? backoff : (long)left);
        backoff = backoff * 2 > POLL_MAX_MS ? POLL_MAX_MS : backoff * 2;
    }
}

vmop_rc vim_entity_busy(struct vim_client *c, const struct vim_moref *entity, int *ret_busy,
                        struct vmop_err *err)
{
    static const char *const rpaths[] = {"recentTask", NULL};
    static const char *const spaths[] = {"info.state", NULL};
    struct vim_objects objs = {0};
    struct vim_moref tasks[VIM_BUSY_MAX_TASKS];
    size_t n = 0;
    xmlNodePtr val;
    vmop_rc rc;

    if (!c || !entity || !vim_moref_is_set(entity) || !ret_busy)
        return vmop_fail(err, VMOP_E_INVALID, "vim_entity_busy: no entity");
    *ret_busy = 0;
    rc = vim_retrieve(c, entity, NULL, rpaths, 0, &objs, err);
    if (rc != VMOP_OK)
        return rc;
    val = objs.n ? vim_object_prop(&objs.items[0], "recentTask") : NULL;
    /* newest last: keep the last VIM_BUSY_MAX_TASKS */
    for (xmlNodePtr t = vim_xml_first(val); t; t = t->next) {
        struct vim_moref ref;
        if (t->type != XML_ELEMENT_NODE || vim_xml_moref(t, &ref) != VMOP_OK)
            continue;
        if (n == VIM_BUSY_MAX_TASKS) {
            memmove(tasks, tasks + 1, (n - 1) * sizeof(tasks[0]));
            n--;
        }
        tasks[n++] = ref;
    }
    vim_objects_free(&objs);
    for (size_t i = n; i-- > 0 && !*ret_busy;) {
        struct vim_objects to = {0};
        struct vmop_err e = {0};
        char *state;
        rc = vim_retrieve(c, &tasks[i], "Task", spaths, 0, &to, &e);
        if (rc == VMOP_E_NOT_FOUND) /* a task vCenter no longer keeps: ended */
            continue;
        if (rc != VMOP_OK) {
            if (err)
                *err = e;
            return rc;
        }
        state = to.n ? vim_xml_text(vim_object_prop(&to.items[0], "info.state")) : NULL;
        *ret_busy = state && (strcmp(state, "queued") == 0 || strcmp(state, "running") == 0);
        free(state);
        vim_objects_free(&to);
    }
    return VMOP_OK;
}
