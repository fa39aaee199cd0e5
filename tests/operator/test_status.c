/* test_status.c: unit tests for operator/vm/status.c: observation + outcome -> VirtualMachine
 * status, conditions and the status merge patch. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api_cond.h"
#include "status.h"

#define T0 ((time_t)1700000000)

static const char *vm_base =
    "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachine\","
    "\"metadata\":{\"name\":\"web-0\",\"namespace\":\"ns\",\"generation\":3},"
    "\"spec\":{\"className\":\"best-effort-small\",\"powerState\":\"PoweredOn\","
    "\"network\":{\"interfaces\":[{\"name\":\"eth0\"}]}}";

static struct api_vm *vm_with(const char *status_json)
{
    char buf[4096];
    struct api_vm *vm = NULL;
    struct vmop_err err = {0};
    snprintf(buf, sizeof(buf), "%s%s}", vm_base, status_json ? status_json : "");
    ck_assert_int_eq(api_vm_parse_text(buf, strlen(buf), &vm, &err), VMOP_OK);
    return vm;
}

static const char *ips1[] = {"192.0.2.10"};

static void obs_on(struct st_obs *o, const char *ip)
{
    memset(o, 0, sizeof(*o));
    o->present = 1;
    o->unique_id = "vm-42";
    o->bios_uuid = "b-uuid";
    o->instance_uuid = "i-uuid";
    o->power = API_POWER_ON;
    o->primary_ip4 = ip;
    o->host_name = "web-0";
    o->hw_version = 13;
    o->n_nics = 1;
    o->nics[0].name = "eth0";
    o->nics[0].device_key = 4000;
    o->nics[0].mac = "00:50:56:aa:bb:cc";
    o->nics[0].ips = ip ? ips1 : NULL;
    o->nics[0].n_ips = ip ? 1 : 0;
}

static const cJSON *cond_of(const cJSON *st, const char *type)
{
    return api_cond_get(cJSON_GetObjectItemCaseSensitive(st, "conditions"), type);
}

static const char *cstr(const cJSON *c, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static cJSON *build(const struct st_input *in, time_t now, int *changed)
{
    cJSON *st = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(st_build(in, now, &st, changed, &err), VMOP_OK);
    return st;
}

START_TEST(synced_with_ip)
{
    struct api_vm *vm = vm_with(NULL);
    struct st_obs o;
    struct st_input in = {.vm = vm, .kind = ST_SYNCED, .obs = &o};
    int changed = 0;
    cJSON *st, *net;
    obs_on(&o, "192.0.2.10");
    st = build(&in, T0, &changed);
    ck_assert_int_eq(changed, 1);
    ck_assert_str_eq(cstr(st, "uniqueID"), "vm-42");
    ck_assert_str_eq(cstr(st, "biosUUID"), "b-uuid");
    ck_assert_str_eq(cstr(st, "instanceUUID"), "i-uuid");
    ck_assert_str_eq(cstr(st, "powerState"), "PoweredOn");
    ck_assert_int_eq(cJSON_GetObjectItem(st, "hardwareVersion")->valueint, 13);
    net = cJSON_GetObjectItem(st, "network");
    ck_assert_str_eq(cstr(net, "primaryIP4"), "192.0.2.10");
    ck_assert_str_eq(cstr(net, "hostName"), "web-0");
    const cJSON *if0 = cJSON_GetArrayItem(cJSON_GetObjectItem(net, "interfaces"), 0);
    ck_assert_str_eq(cstr(if0, "name"), "eth0");
    ck_assert_int_eq(cJSON_GetObjectItem(if0, "deviceKey")->valueint, 4000);
    ck_assert_str_eq(cstr(cJSON_GetObjectItem(if0, "ip"), "macAddr"), "00:50:56:aa:bb:cc");
    const cJSON *cls = cJSON_GetObjectItem(st, "class");
    ck_assert_str_eq(cstr(cls, "kind"), "VirtualMachineClass");
    ck_assert_str_eq(cstr(cls, "name"), "best-effort-small");
    ck_assert_str_eq(cstr(cls, "apiVersion"), "vmoperator.vmware.com/v1alpha6");
    ck_assert_str_eq(cstr(cond_of(st, "VirtualMachineCreated"), "status"), "True");
    ck_assert_str_eq(cstr(cond_of(st, "VirtualMachineCreated"), "reason"), "True");
    ck_assert_str_eq(cstr(cond_of(st, "VirtualMachinePowerStateSynced"), "reason"), "Synced");
    ck_assert_str_eq(cstr(cond_of(st, "VirtualMachinePowerStateSynced"), "message"), "poweredOn");
    ck_assert_str_eq(cstr(cond_of(st, "VirtualMachineReconcileReady"), "status"), "True");
    ck_assert_str_eq(cstr(cond_of(st, "Ready"), "status"), "True");
    ck_assert_int_eq(cJSON_GetObjectItem(cond_of(st, "Ready"), "observedGeneration")->valueint, 3);
    /* Ready sorts first */
    ck_assert_str_eq(cstr(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "conditions"), 0), "type"),
                     "Ready");
    cJSON_Delete(st);
    api_vm_free(vm);
}
END_TEST

START_TEST(unchanged_is_not_changed_and_keeps_time)
{
    struct api_vm *vm = vm_with(NULL), *vm2;
    struct st_obs o;
    struct st_input in = {.vm = vm, .kind = ST_SYNCED, .obs = &o};
    int changed = 0;
    cJSON *st, *st2;
    char *txt, buf[4096];
    obs_on(&o, "192.0.2.10");
    st = build(&in, T0, &changed);
    txt = cJSON_PrintUnformatted(st);
    snprintf(buf, sizeof(buf), ",\"status\":%s", txt);
    vm2 = vm_with(buf);
    in.vm = vm2;
    st2 = build(&in, T0 + 100, &changed);
    ck_assert_int_eq(changed, 0);
    ck_assert_str_eq(cstr(cond_of(st2, "Ready"), "lastTransitionTime"),
                     cstr(cond_of(st, "Ready"), "lastTransitionTime"));
    free(txt);
    cJSON_Delete(st);
    cJSON_Delete(st2);
    api_vm_free(vm);
    api_vm_free(vm2);
}
END_TEST

START_TEST(waiting_for_ip)
{
    struct api_vm *vm = vm_with(NULL);
    struct st_obs o;
    struct st_input in = {.vm = vm, .kind = ST_SYNCED, .obs = &o};
    int changed = 0;
    cJSON *st;
    obs_on(&o, NULL);
    st = build(&in, T0, &changed);
    ck_assert_str_eq(cstr(cond_of(st, "Ready"), "status"), "False");
    ck_assert_str_eq(cstr(cond_of(st, "Ready"), "reason"), "WaitingForIP");
    ck_assert_ptr_null(cstr(cJSON_GetObjectItem(st, "network"), "primaryIP4"));
    cJSON_Delete(st);
    api_vm_free(vm);
}
END_TEST

START_TEST(power_not_synced)
{
    struct api_vm *vm = vm_with(NULL);
    struct st_obs o;
    struct st_input in = {.vm = vm, .kind = ST_SYNCED, .obs = &o, .power_unreachable = 1};
    int changed = 0;
    cJSON *st;
    obs_on(&o, NULL);
    o.power = API_POWER_OFF;
    st = build(&in, T0, &changed);
    ck_assert_str_eq(cstr(cond_of(st, "VirtualMachinePowerStateSynced"), "status"), "False");
    ck_assert_str_eq(cstr(cond_of(st, "VirtualMachinePowerStateSynced"), "reason"), "NotSynced");
    ck_assert_ptr_nonnull(
        strstr(cstr(cond_of(st, "VirtualMachinePowerStateSynced"), "message"), "not reachable"));
    ck_assert_str_eq(cstr(cond_of(st, "Ready"), "reason"), "PowerStateNotSynced");
    ck_assert_str_eq(cstr(st, "powerState"), "PoweredOff");
    cJSON_Delete(st);
    api_vm_free(vm);
}
END_TEST

START_TEST(not_ready_copies_resolver_conditions)
{
    struct api_vm *vm = vm_with(",\"status\":{\"conditions\":[{\"type\":"
                                "\"VirtualMachineBootstrapReady\",\"status\":\"True\",\"reason\":"
                                "\"True\",\"message\":\"\",\"lastTransitionTime\":"
                                "\"2020-01-01T00:00:00Z\"}]}");
    struct rs_result rs;
    struct st_input in = {.vm = vm, .kind = ST_NOT_READY, .rs = &rs};
    int changed = 0;
    cJSON *st;
    memset(&rs, 0, sizeof(rs));
    rs.n_conds = 2;
    rs.conds[0].type = COND_CLASS_READY;
    rs.conds[0].present = 1;
    rs.conds[0].status = API_COND_FALSE;
    snprintf(rs.conds[0].reason, sizeof(rs.conds[0].reason), "NotFound");
    snprintf(rs.conds[0].message, sizeof(rs.conds[0].message), "class x not found");
    rs.conds[1].type = COND_BOOTSTRAP_READY;
    rs.conds[1].present = 0;
    st = build(&in, T0, &changed);
    ck_assert_int_eq(changed, 1);
    ck_assert_str_eq(cstr(cond_of(st, COND_CLASS_READY), "reason"), "NotFound");
    ck_assert_str_eq(cstr(cond_of(st, COND_CLASS_READY), "message"), "class x not found");
    ck_assert_ptr_null(cond_of(st, COND_BOOTSTRAP_READY));
    ck_assert_str_eq(cstr(cond_of(st, "Ready"), "status"), "False");
    ck_assert_str_eq(cstr(cond_of(st, "VirtualMachineCreated"), "reason"), "NotCreated");
    ck_assert_ptr_null(cJSON_GetObjectItem(st, "uniqueID"));
    cJSON_Delete(st);
    api_vm_free(vm);
}
END_TEST

START_TEST(failed_create_has_fault_reason)
{
    struct api_vm *vm = vm_with(NULL);
    struct st_obs o;
    char reason[64];
    struct st_input in = {.vm = vm,
                          .kind = ST_FAILED,
                          .obs = &o,
                          .fail_step = VM_STEP_CREATE,
                          .fail_message = "not enough CPU"};
    int changed = 0;
    cJSON *st;
    memset(&o, 0, sizeof(o));
    st_reason_for(VMOP_E_FAULT, "InsufficientResourcesFault", reason, sizeof(reason));
    ck_assert_str_eq(reason, "InsufficientResourcesFault");
    in.fail_reason = reason;
    st = build(&in, T0, &changed);
    ck_assert_str_eq(cstr(cond_of(st, "VirtualMachineCreated"), "status"), "False");
    ck_assert_str_eq(cstr(cond_of(st, "VirtualMachineCreated"), "reason"),
                     "InsufficientResourcesFault");
    ck_assert_ptr_nonnull(strstr(cstr(cond_of(st, "VirtualMachineCreated"), "message"), "CPU"));
    ck_assert_str_eq(cstr(cond_of(st, "VirtualMachineReconcileReady"), "reason"),
                     "InsufficientResourcesFault");
    cJSON_Delete(st);
    api_vm_free(vm);
}
END_TEST

START_TEST(reason_for_codes)
{
    char r[64];
    st_reason_for(VMOP_E_TIMEOUT, NULL, r, sizeof(r));
    ck_assert_str_eq(r, "Timeout");
    st_reason_for(VMOP_E_TRANSPORT, "", r, sizeof(r));
    ck_assert_str_eq(r, "ConnectionError");
    st_reason_for(VMOP_E_FAULT, "bad fault!", r, sizeof(r)); /* sanitized */
    ck_assert_str_eq(r, "badfault");
    st_reason_for(VMOP_E_FAULT, "404", r, sizeof(r)); /* must start with a letter */
    ck_assert_str_eq(r, "Error");
}
END_TEST

START_TEST(paused_touches_only_reconcile_ready)
{
    struct api_vm *vm = vm_with(",\"status\":{\"uniqueID\":\"vm-1\",\"conditions\":[]}");
    struct st_input in = {.vm = vm, .kind = ST_PAUSED};
    int changed = 0;
    cJSON *st = build(&in, T0, &changed);
    ck_assert_int_eq(changed, 1);
    ck_assert_str_eq(cstr(cond_of(st, COND_RECONCILE_READY), "reason"), ST_REASON_PAUSED);
    ck_assert_str_eq(cstr(cond_of(st, COND_RECONCILE_READY), "status"), "False");
    ck_assert_ptr_null(cond_of(st, "Ready"));
    ck_assert_str_eq(cstr(st, "uniqueID"), "vm-1");
    cJSON_Delete(st);
    api_vm_free(vm);
}
END_TEST

START_TEST(absent_vm_clears_observed_fields_and_patch_nulls_them)
{
    struct api_vm *vm = vm_with(",\"status\":{\"uniqueID\":\"vm-1\",\"powerState\":\"PoweredOn\","
                                "\"network\":{\"primaryIP4\":\"192.0.2.1\"},\"conditions\":[]}");
    struct st_obs o;
    struct st_input in = {.vm = vm, .kind = ST_SYNCED, .obs = &o};
    int changed = 0;
    cJSON *st, *patch = NULL;
    struct vmop_err err = {0};
    memset(&o, 0, sizeof(o));
    st = build(&in, T0, &changed);
    ck_assert_ptr_null(cJSON_GetObjectItem(st, "uniqueID"));
    ck_assert_ptr_null(cJSON_GetObjectItem(st, "network"));
    ck_assert_int_eq(st_patch(cJSON_GetObjectItem(vm->obj, "status"), st, &patch, &err), VMOP_OK);
    const cJSON *ps = cJSON_GetObjectItem(patch, "status");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(ps, "uniqueID")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(ps, "network")));
    ck_assert(cJSON_IsArray(cJSON_GetObjectItem(ps, "conditions")));
    cJSON_Delete(patch);
    cJSON_Delete(st);
    api_vm_free(vm);
}
END_TEST

START_TEST(probe_verdict_wins)
{
    struct api_vm *vm = vm_with(NULL);
    struct st_obs o;
    struct st_input in = {.vm = vm,
                          .kind = ST_SYNCED,
                          .obs = &o,
                          .probe = ST_PROBE_NOT_READY,
                          .probe_message = "guest heartbeat is red"};
    int changed = 0;
    cJSON *st;
    obs_on(&o, "192.0.2.10");
    st = build(&in, T0, &changed);
    ck_assert_str_eq(cstr(cond_of(st, "Ready"), "status"), "False");
    ck_assert_str_eq(cstr(cond_of(st, "Ready"), "reason"), "NotReady");
    ck_assert_str_eq(cstr(cond_of(st, "Ready"), "message"), "guest heartbeat is red");
    cJSON_Delete(st);
    api_vm_free(vm);
}
END_TEST

START_TEST(resolver_reconcile_ready_wins)
{
    struct api_vm *vm = vm_with(NULL);
    struct rs_result rs;
    struct st_input in = {.vm = vm, .kind = ST_NOT_READY, .rs = &rs};
    int changed = 0;
    cJSON *st;
    memset(&rs, 0, sizeof(rs));
    rs.n_conds = 1;
    rs.conds[0].type = COND_RECONCILE_READY;
    rs.conds[0].present = 1;
    rs.conds[0].status = API_COND_FALSE;
    snprintf(rs.conds[0].reason, sizeof(rs.conds[0].reason), "InvalidSpec");
    st = build(&in, T0, &changed);
    ck_assert_str_eq(cstr(cond_of(st, COND_RECONCILE_READY), "reason"), "InvalidSpec");
    cJSON_Delete(st);
    api_vm_free(vm);
}
END_TEST

START_TEST(failed_observe_keeps_created)
{
    struct api_vm *vm = vm_with(",\"status\":{\"uniqueID\":\"vm-7\",\"conditions\":[{\"type\":"
                                "\"VirtualMachineCreated\",\"status\":\"True\",\"reason\":"
                                "\"True\",\"message\":\"\",\"lastTransitionTime\":"
                                "\"2020-01-01T00:00:00Z\"}]}");
    struct st_input in = {.vm = vm,
                          .kind = ST_FAILED,
                          .fail_step = VM_STEP_OBSERVE,
                          .fail_reason = "ConnectionError",
                          .fail_message = "reset"};
    int changed = 0;
    cJSON *st = build(&in, T0, &changed);
    ck_assert_str_eq(cstr(cond_of(st, "VirtualMachineCreated"), "status"), "True");
    ck_assert_str_eq(cstr(st, "uniqueID"), "vm-7");
    ck_assert_str_eq(cstr(cond_of(st, COND_RECONCILE_READY), "reason"), "ConnectionError");
    cJSON_Delete(st);
    api_vm_free(vm);
}
END_TEST

START_TEST(power_cycle_pending_keeps_class)
{
    struct api_vm *vm = vm_with(",\"status\":{\"class\":{\"apiVersion\":\"v\",\"kind\":"
                                "\"VirtualMachineClass\",\"name\":\"old-class\"}}");
    struct st_obs o;
    struct st_input in = {.vm = vm, .kind = ST_SYNCED, .obs = &o, .needs_power_cycle = 1};
    int changed = 0;
    cJSON *st;
    obs_on(&o, "192.0.2.10");
    st = build(&in, T0, &changed);
    ck_assert_str_eq(cstr(cJSON_GetObjectItem(st, "class"), "name"), "old-class");
    ck_assert_str_eq(cstr(cond_of(st, COND_RECONCILE_READY), "reason"), "PowerCyclePending");
    cJSON_Delete(st);
    api_vm_free(vm);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("status");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int nf;
    tcase_add_test(tc, synced_with_ip);
    tcase_add_test(tc, unchanged_is_not_changed_and_keeps_time);
    tcase_add_test(tc, waiting_for_ip);
    tcase_add_test(tc, power_not_synced);
    tcase_add_test(tc, not_ready_copies_resolver_conditions);
    tcase_add_test(tc, failed_create_has_fault_reason);
    tcase_add_test(tc, reason_for_codes);
    tcase_add_test(tc, paused_touches_only_reconcile_ready);
    tcase_add_test(tc, absent_vm_clears_observed_fields_and_patch_nulls_them);
    tcase_add_test(tc, probe_verdict_wins);
    tcase_add_test(tc, resolver_reconcile_ready_wins);
    tcase_add_test(tc, failed_observe_keeps_created);
    tcase_add_test(tc, power_cycle_pending_keeps_class);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? 0 : 1;
}
