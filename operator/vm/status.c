/* status.c: observation + outcome -> VirtualMachine status and conditions (see status.h). */
#include "status.h"

#include <stdio.h>
#include <string.h>

#include "api_cond.h"

static vmop_rc nomem(struct vmop_err *err)
{
    return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
}

/* Replaces (or adds) obj[key] = item; item is taken (freed on failure). */
static int put(cJSON *obj, const char *key, cJSON *item)
{
    if (!item)
        return -1;
    if (cJSON_GetObjectItemCaseSensitive(obj, key)) {
        if (!cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item)) {
            cJSON_Delete(item);
            return -1;
        }
        return 0;
    }
    if (!cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        return -1;
    }
    return 0;
}

static int put_str(cJSON *obj, const char *key, const char *v)
{
    if (!v || !*v) {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
        return 0;
    }
    return put(obj, key, cJSON_CreateString(v));
}

void st_reason_for(vmop_rc rc, const char *fault, char *buf, size_t size)
{
    size_t j = 0;
    if (size == 0)
        return;
    if (fault && *fault) {
        for (const char *p = fault; *p && j + 1 < size; p++) {
            if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                *p == '_' || *p == '.')
                buf[j++] = *p;
        }
        buf[j] = '\0';
        if (j > 0 && ((buf[0] >= 'a' && buf[0] <= 'z') || (buf[0] >= 'A' && buf[0] <= 'Z')))
            return;
    }
    const char *r;
    switch (rc) {
    case VMOP_E_TIMEOUT:
        r = "Timeout";
        break;
    case VMOP_E_TRANSPORT:
        r = "ConnectionError";
        break;
    case VMOP_E_TLS:
        r = "CertificateError";
        break;
    case VMOP_E_AUTH:
        r = "InvalidLogin";
        break;
    case VMOP_E_NOT_FOUND:
        r = "NotFound";
        break;
    case VMOP_E_INVALID:
        r = "Invalid";
        break;
    case VMOP_E_CONFLICT:
        r = "Conflict";
        break;
    default:
        r = "Error";
    }
    snprintf(buf, size, "%s", r);
}

static const char *power_vsphere_word(enum api_power_state s)
{
    switch (s) {
    case API_POWER_ON:
        return "poweredOn";
    case API_POWER_OFF:
        return "poweredOff";
    case API_POWER_SUSPENDED:
        return "suspended";
    default:
        return "unknown";
    }
}

static vmop_rc set_observed(cJSON *st, const struct st_input *in)
{
    const struct st_obs *o = in->obs;
    cJSON *net, *ifs;
    if (!o->present) {
        cJSON_DeleteItemFromObjectCaseSensitive(st, "uniqueID");
        cJSON_DeleteItemFromObjectCaseSensitive(st, "biosUUID");
        cJSON_DeleteItemFromObjectCaseSensitive(st, "instanceUUID");
        cJSON_DeleteItemFromObjectCaseSensitive(st, "powerState");
        cJSON_DeleteItemFromObjectCaseSensitive(st, "network");
        cJSON_DeleteItemFromObjectCaseSensitive(st, "hardwareVersion");
        return VMOP_OK;
    }
    if (put_str(st, "uniqueID", o->unique_id) || put_str(st, "biosUUID", o->bios_uuid) ||
        put_str(st, "instanceUUID", o->instance_uuid) ||
        put_str(st, "powerState", api_power_state_str(o->power)))
        return VMOP_E_NOMEM;
    if (o->hw_version > 0) {
        if (put(st, "hardwareVersion", cJSON_CreateNumber(o->hw_version)))
            return VMOP_E_NOMEM;
    } else {
        cJSON_DeleteItemFromObjectCaseSensitive(st, "hardwareVersion");
    }
    net = cJSON_CreateObject();
    if (put(st, "network", net))
        return VMOP_E_NOMEM;
    if (put_str(net, "hostName", o->host_name) || put_str(net, "primaryIP4", o->primary_ip4))
        return VMOP_E_NOMEM;
    if (o->n_nics == 0)
        return VMOP_OK;
    ifs = cJSON_CreateArray();
    if (put(net, "interfaces", ifs))
        return VMOP_E_NOMEM;
    for (size_t i = 0; i < o->n_nics; i++) {
        const struct st_nic *n = &o->nics[i];
        cJSON *it = cJSON_CreateObject(), *ip, *addrs;
        char name[32];
        if (!it || !cJSON_AddItemToArray(ifs, it))
            return VMOP_E_NOMEM;
        if (!n->name)
            snprintf(name, sizeof(name), "nic-%d", n->device_key);
        if (put_str(it, "name", n->name ? n->name : name) ||
            put(it, "deviceKey", cJSON_CreateNumber(n->device_key)))
            return VMOP_E_NOMEM;
        ip = cJSON_CreateObject();
        if (put(it, "ip", ip) || put_str(ip, "macAddr", n->mac))
            return VMOP_E_NOMEM;
        if (n->n_ips == 0)
            continue;
        addrs = cJSON_CreateArray();
        if (put(ip, "addresses", addrs))
            return VMOP_E_NOMEM;
        for (size_t k = 0; k < n->n_ips; k++) {
            cJSON *a = cJSON_CreateObject();
            if (!a || !cJSON_AddItemToArray(addrs, a) || put_str(a, "address", n->ips[k]))
                return VMOP_E_NOMEM;
        }
    }
    return VMOP_OK;
}

static vmop_rc set_cond(cJSON *conds, const char *type, enum api_cond_status s, const char *reason,
                        const char *msg, long long gen, time_t now, struct vmop_err *err)
{
    if (s == API_COND_TRUE && (!reason || !*reason))
        return api_cond_mark_true(conds, type, gen, now, NULL, err);
    return api_cond_set(conds, type, s, reason, msg, gen, now, NULL, err);
}

static int spec_power_matches(const struct api_vm *vm, const struct st_obs *o)
{
    enum api_power_state want = vm->power_state == API_POWER_UNSET ? API_POWER_ON : vm->power_state;
    return o->power == want;
}

/* A VM that is not the resource's holds its identity (fail_step VM_STEP_OWNERSHIP). */
static int is_conflict(const struct st_input *in)
{
    return in->kind == ST_FAILED && in->fail_step == VM_STEP_OWNERSHIP && in->fail_reason &&
           *in->fail_reason;
}

static vmop_rc set_ready(cJSON *conds, const struct st_input *in, long long gen, time_t now,
                         struct vmop_err *err)
{
    const struct api_vm *vm = in->vm;
    const struct st_obs *o = in->obs;
    char msg[256];
    if (is_conflict(in))
        return set_cond(conds, COND_READY, API_COND_FALSE, in->fail_reason,
                        "a virtual machine that is not this resource's holds its identity (see "
                        "VirtualMachineCreated)",
                        gen, now, err);
    if (in->kind == ST_NOT_READY && (!o || !o->present))
        return set_cond(conds, COND_READY, API_COND_FALSE, "NotReady",
                        "prerequisites are not met (see the other conditions)", gen, now, err);
    if (!o || !o->present)
        return set_cond(conds, COND_READY, API_COND_FALSE, "NotCreated",
                        "the virtual machine does not exist in vCenter yet", gen, now, err);
    if (in->probe != ST_PROBE_NONE) {
        const char *m = in->probe_message ? in->probe_message : "";
        if (in->probe == ST_PROBE_READY)
            return set_cond(conds, COND_READY, API_COND_TRUE, "Ready", m, gen, now, err);
        if (in->probe == ST_PROBE_NOT_READY)
            return set_cond(conds, COND_READY, API_COND_FALSE, "NotReady", m, gen, now, err);
        return set_cond(conds, COND_READY, API_COND_UNKNOWN, "Unknown", m, gen, now, err);
    }
    if (!spec_power_matches(vm, o)) {
        snprintf(msg, sizeof(msg), "power state is %s, spec asks for %s",
                 api_power_state_str(o->power), api_power_state_str(vm->power_state));
        return set_cond(conds, COND_READY, API_COND_FALSE, "PowerStateNotSynced", msg, gen, now,
                        err);
    }
    if (o->power == API_POWER_ON && !vm->network_disabled && (!o->primary_ip4 || !*o->primary_ip4))
        return set_cond(conds, COND_READY, API_COND_FALSE, "WaitingForIP",
                        "powered on, waiting for the guest to report an IPv4 address", gen, now,
                        err);
    return set_cond(conds, COND_READY, API_COND_TRUE, NULL, NULL, gen, now, err);
}

/* The resolver's conditions as it decided them, what the reconcile could not do with an
 * accepted field (VirtualMachineFieldsSupported) and a storage step failure. */
static vmop_rc conds_prereq(cJSON *conds, const struct st_input *in, long long gen, time_t now,
                            struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;

    /* prerequisite conditions, exactly as the resolver decided them */
    if (in->rs) {
        for (size_t i = 0; i < in->rs->n_conds && rc == VMOP_OK; i++) {
            const struct rs_cond *c = &in->rs->conds[i];
            if (!c->present)
                api_cond_delete(conds, c->type);
            else
                rc = set_cond(conds, c->type, c->status, c->reason, c->message, gen, now, err);
        }
        if (rc != VMOP_OK)
            return rc;
    }
    /* what the reconcile could not do with an accepted field joins VirtualMachineFieldsSupported */
    if (in->rs && in->field_note && *in->field_note) {
        const struct rs_cond *fc = rs_result_cond(in->rs, COND_FIELDS_SUPPORTED);
        int had = fc && fc->present && fc->status == API_COND_FALSE;
        char fmsg[RS_MSG_MAX + 256];
        snprintf(fmsg, sizeof(fmsg), "%s%s%.200s",
                 had ? fc->message : "not acted on by vmop: ", had ? "; " : "", in->field_note);
        rc = set_cond(conds, COND_FIELDS_SUPPORTED, API_COND_FALSE, RS_REASON_NOT_SUPPORTED, fmsg,
                      gen, now, err);
        if (rc != VMOP_OK)
            return rc;
    }
    /* a storage step failure (the StorageClass's policy cannot be satisfied) overrides the
     * resolver's VirtualMachineStorageReady */
    if (in->kind == ST_FAILED && in->fail_step == VM_STEP_STORAGE) {
        rc = set_cond(conds, COND_STORAGE_READY, API_COND_FALSE,
                      in->fail_reason && *in->fail_reason ? in->fail_reason : "Error",
                      in->fail_message ? in->fail_message : "", gen, now, err);
        if (rc != VMOP_OK)
            return rc;
    }
    return rc;
}

/* VirtualMachineCreated. */
static vmop_rc cond_created(cJSON *conds, const struct st_input *in, long long gen, time_t now,
                            struct vmop_err *err)
{
    const struct api_vm *vm = in->vm;
    vmop_rc rc = VMOP_OK;
    char msg[VMOP_ERR_MSG_MAX + 64];

    /* VirtualMachineCreated */
    if (in->obs && in->obs->present) {
        rc = set_cond(conds, COND_CREATED, API_COND_TRUE, NULL, NULL, gen, now, err);
    } else if (is_conflict(in)) {
        rc = set_cond(conds, COND_CREATED, API_COND_FALSE, in->fail_reason,
                      in->fail_message ? in->fail_message : "", gen, now, err);
    } else if (in->kind == ST_FAILED &&
               (in->fail_step == VM_STEP_CREATE || in->fail_step == VM_STEP_STORAGE ||
                ((in->fail_step == VM_STEP_LOOKUP || in->fail_step == VM_STEP_OBSERVE) &&
                 !(vm->status_unique_id && *vm->status_unique_id)))) {
        snprintf(msg, sizeof(msg), "%s failed: %s", vm_step_str(in->fail_step),
                 in->fail_message ? in->fail_message : "");
        rc = set_cond(conds, COND_CREATED, API_COND_FALSE, in->fail_reason, msg, gen, now, err);
    } else if (in->kind == ST_NOT_READY || (in->obs && !in->obs->present)) {
        rc = set_cond(conds, COND_CREATED, API_COND_FALSE, "NotCreated",
                      in->kind == ST_NOT_READY ? "waiting for prerequisites"
                                               : "the virtual machine does not exist yet",
                      gen, now, err);
    }
    return rc;
}

/* VirtualMachinePowerStateSynced. */
static vmop_rc cond_power(cJSON *conds, const struct st_input *in, long long gen, time_t now,
                          struct vmop_err *err)
{
    const struct api_vm *vm = in->vm;
    vmop_rc rc = VMOP_OK;
    char msg[VMOP_ERR_MSG_MAX + 64];

    /* VirtualMachinePowerStateSynced */
    if (in->obs && in->obs->present) {
        if (spec_power_matches(vm, in->obs)) {
            rc = set_cond(conds, COND_POWER_SYNCED, API_COND_TRUE, "Synced",
                          power_vsphere_word(in->obs->power), gen, now, err);
        } else {
            const char *why = "";
            if (in->power_unreachable && in->obs->power == API_POWER_OFF &&
                vm->power_state == API_POWER_SUSPENDED)
                why = " (not reachable: a powered-off virtual machine cannot be suspended; power "
                      "it on first)";
            else if (in->power_unreachable && in->obs->power == API_POWER_SUSPENDED)
                why = " (not reachable with powerOffMode Soft: a suspended guest cannot shut "
                      "itself down; use Hard or TrySoft)";
            else if (in->power_unreachable)
                why = " (not reachable with this power mode)";
            snprintf(msg, sizeof(msg), "observed %s, spec asks for %s%s",
                     api_power_state_str(in->obs->power), api_power_state_str(vm->power_state),
                     why);
            rc =
                set_cond(conds, COND_POWER_SYNCED, API_COND_FALSE, "NotSynced", msg, gen, now, err);
        }
    } else if (in->obs) {
        api_cond_delete(conds, COND_POWER_SYNCED);
    }
    return rc;
}

/* VirtualMachineClassConfigurationSynced: a resize waits for a power cycle. */
static vmop_rc cond_class_config(cJSON *conds, const struct st_input *in, long long gen, time_t now,
                                 struct vmop_err *err)
{
    const struct api_vm *vm = in->vm;
    vmop_rc rc = VMOP_OK;
    char msg[VMOP_ERR_MSG_MAX + 64];

    /* VirtualMachineClassConfigurationSynced: resize waits for a power cycle */
    if (in->obs && in->obs->present && in->kind == ST_SYNCED) {
        if (in->rs && in->rs->desired.class_held) {
            rc = set_cond(conds, COND_CLASS_CONFIG_SYNCED, API_COND_FALSE, ST_REASON_CLASS_UPDATED,
                          in->rs->class_held_msg, gen, now, err);
        } else if (in->needs_power_cycle) {
            const cJSON *oc = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(vm->obj, "status"), "class");
            const cJSON *on = cJSON_GetObjectItemCaseSensitive(oc, "name");
            const char *reason = ST_REASON_CLASS_UPDATED;
            if (vm->class_name && cJSON_IsString(on) && strcmp(on->valuestring, vm->class_name))
                reason = ST_REASON_CLASS_CHANGED;
            else if (cJSON_GetObjectItemCaseSensitive(vm->annotations, ST_ANNOT_SAME_CLASS_RESIZE))
                reason = ST_REASON_SAME_CLASS_RESIZE;
            snprintf(msg, sizeof(msg),
                     "CPU or memory of class %s not applied: the virtual machine needs a power "
                     "cycle (power it off and on again)",
                     vm->class_name ? vm->class_name : "");
            rc = set_cond(conds, COND_CLASS_CONFIG_SYNCED, API_COND_FALSE, reason, msg, gen, now,
                          err);
        } else {
            rc =
                set_cond(conds, COND_CLASS_CONFIG_SYNCED, API_COND_TRUE, NULL, NULL, gen, now, err);
        }
        if (rc != VMOP_OK)
            return rc;
    }
    return rc;
}

/* VirtualMachineReconcileReady (the resolver's verdict wins: InvalidSpec, NotDefaulted). */
static vmop_rc cond_reconcile_ready(cJSON *conds, const struct st_input *in, long long gen,
                                    time_t now, struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;
    char msg[VMOP_ERR_MSG_MAX + 64];

    /* VirtualMachineReconcileReady (the resolver's verdict wins: InvalidSpec, NotDefaulted) */
    if (in->rs && rs_result_cond(in->rs, COND_RECONCILE_READY) &&
        rs_result_cond(in->rs, COND_RECONCILE_READY)->present) {
        /* already set above */
    } else if (in->kind == ST_FAILED) {
        if (is_conflict(in)) /* not a failed step: the message says it all */
            snprintf(msg, sizeof(msg), "%s", in->fail_message ? in->fail_message : "");
        else
            snprintf(msg, sizeof(msg), "%s failed: %s", vm_step_str(in->fail_step),
                     in->fail_message ? in->fail_message : "");
        rc = set_cond(conds, COND_RECONCILE_READY, API_COND_FALSE,
                      in->fail_reason && *in->fail_reason ? in->fail_reason : "Error", msg, gen,
                      now, err);
    } else if (in->kind == ST_SYNCED &&
               (in->needs_power_cycle || (in->pending_fields && *in->pending_fields))) {
        snprintf(msg, sizeof(msg), "%s%s%s%s apply at the next power off",
                 in->needs_power_cycle ? "CPU or memory changes" : "",
                 in->needs_power_cycle && in->pending_fields && *in->pending_fields ? " and " : "",
                 in->pending_fields && *in->pending_fields ? "changes of " : "",
                 in->pending_fields ? in->pending_fields : "");
        rc = set_cond(conds, COND_RECONCILE_READY, API_COND_FALSE, "PowerCyclePending", msg, gen,
                      now, err);
    } else {
        rc = set_cond(conds, COND_RECONCILE_READY, API_COND_TRUE, NULL, NULL, gen, now, err);
    }
    return rc;
}

vmop_rc st_build(const struct st_input *in, time_t now, cJSON **ret_status, int *ret_changed,
                 struct vmop_err *err)
{
    const struct api_vm *vm = in->vm;
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(vm->obj, "status");
    cJSON *st = NULL, *conds;
    long long gen = vm->generation > 0 ? vm->generation : -1;
    vmop_rc rc = VMOP_OK;

    st = cJSON_IsObject(old) ? cJSON_Duplicate(old, 1) : cJSON_CreateObject();
    if (!st)
        return nomem(err);
    conds = cJSON_GetObjectItemCaseSensitive(st, "conditions");
    if (!cJSON_IsArray(conds)) {
        conds = cJSON_CreateArray();
        if (put(st, "conditions", conds)) {
            rc = nomem(err);
            goto out;
        }
    }

    if (in->kind == ST_PAUSED) {
        rc = set_cond(conds, COND_RECONCILE_READY, API_COND_FALSE, ST_REASON_PAUSED, ST_MSG_PAUSED,
                      gen, now, err);
        goto done;
    }

    rc = conds_prereq(conds, in, gen, now, err);
    if (rc != VMOP_OK)
        goto out;

    if (in->obs && set_observed(st, in) != VMOP_OK) {
        rc = nomem(err);
        goto out;
    }
    /* status.class is the class the VM was last sized from: not yet the new one while a CPU or
     * memory change waits for a power cycle */
    if (in->vm->class_name && in->obs && in->obs->present &&
        !(in->needs_power_cycle && cJSON_GetObjectItemCaseSensitive(st, "class"))) {
        cJSON *cls = cJSON_CreateObject();
        if (put(st, "class", cls) || put_str(cls, "apiVersion", ST_API_VERSION) ||
            put_str(cls, "kind", ST_CLASS_KIND) || put_str(cls, "name", in->vm->class_name)) {
            rc = nomem(err);
            goto out;
        }
    }

    rc = cond_created(conds, in, gen, now, err);
    if (rc == VMOP_OK)
        rc = cond_power(conds, in, gen, now, err);
    if (rc == VMOP_OK)
        rc = cond_class_config(conds, in, gen, now, err);
    if (rc != VMOP_OK)
        goto out;
    if (in->last_restart_time && *in->last_restart_time &&
        put_str(st, "lastRestartTime", in->last_restart_time)) {
        rc = nomem(err);
        goto out;
    }

    rc = cond_reconcile_ready(conds, in, gen, now, err);
    if (rc != VMOP_OK)
        goto out;

    rc = set_ready(conds, in, gen, now, err);
    if (rc != VMOP_OK)
        goto out;

done:
    if (rc != VMOP_OK)
        goto out;
    api_cond_sort(conds);
    *ret_changed = !(old && cJSON_Compare(old, st, 1));
    *ret_status = st;
    st = NULL;
out:
    cJSON_Delete(st);
    return rc;
}

/* RFC 7386 diff from a to b (objects): keys of a missing in b -> null; differing -> b's value
 * (objects recursively). Returns the patch object (never NULL unless NOMEM). */
static cJSON *merge_diff(const cJSON *a, const cJSON *b)
{
    cJSON *p = cJSON_CreateObject();
    const cJSON *it;
    if (!p)
        return NULL;
    cJSON_ArrayForEach(it, a)
    {
        if (!cJSON_GetObjectItemCaseSensitive(b, it->string) &&
            !cJSON_AddItemToObject(p, it->string, cJSON_CreateNull()))
            goto fail;
    }
    cJSON_ArrayForEach(it, b)
    {
        const cJSON *old = cJSON_GetObjectItemCaseSensitive(a, it->string);
        cJSON *v;
        if (old && cJSON_Compare(old, it, 1))
            continue;
        if (old && cJSON_IsObject(old) && cJSON_IsObject(it))
            v = merge_diff(old, it);
        else
            v = cJSON_Duplicate(it, 1);
        if (!v || !cJSON_AddItemToObject(p, it->string, v)) {
            cJSON_Delete(v);
            goto fail;
        }
    }
    return p;
fail:
    cJSON_Delete(p);
    return NULL;
}

vmop_rc st_patch(const cJSON *old_status, const cJSON *new_status, cJSON **ret_patch,
                 struct vmop_err *err)
{
    cJSON *patch = cJSON_CreateObject(), *d;
    if (!patch)
        return nomem(err);
    d = cJSON_IsObject(old_status) ? merge_diff(old_status, new_status)
                                   : cJSON_Duplicate(new_status, 1);
    if (!d || !cJSON_AddItemToObject(patch, "status", d)) {
        cJSON_Delete(d);
        cJSON_Delete(patch);
        return nomem(err);
    }
    *ret_patch = patch;
    return VMOP_OK;
}
