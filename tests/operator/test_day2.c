/* test_day2.c: unit tests for the day-2 pure logic (owner: day2): the static pool address in the
 * cloud-init metadata (plan.c), VirtualMachineClassConfigurationSynced, status.lastRestartTime
 * and the refused power transition message (status.c). */
#include <check.h>

#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api_cond.h"
#include "plan.h"
#include "status.h"

#define T0 ((time_t)1700000000)

/* ---- the pool address in the metadata ------------------------------------------------------ */

static const char *const pool_ns[] = {"10.20.0.2", "10.20.0.3"};
static const char *const pool_search[] = {"corp.example"};

static void desired(struct rs_desired *d, struct api_vm_nic *spec)
{
    memset(d, 0, sizeof(*d));
    memset(spec, 0, sizeof(*spec));
    spec->name = "eth0";
    d->nics[0].name = "eth0";
    d->nics[0].spec = spec;
    d->nics[0].pool_cidr = "10.20.0.15/24";
    d->nics[0].pool_gateway4 = "10.20.0.1";
    d->nics[0].pool_nameservers = pool_ns;
    d->nics[0].n_pool_nameservers = 2;
    d->nics[0].pool_search = pool_search;
    d->nics[0].n_pool_search = 1;
    d->n_nics = 1;
    d->cloud_init = 1;
    d->instance_id = "iid-1";
    snprintf(d->hostname, sizeof(d->hostname), "vm1");
}

static cJSON *eth0_of(const char *json)
{
    cJSON *doc = cJSON_Parse(json);
    ck_assert_ptr_nonnull(doc);
    return doc;
}

static const cJSON *eth0(const cJSON *doc)
{
    const cJSON *e = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "network"), "ethernets"), "eth0");
    ck_assert_ptr_nonnull(e);
    return e;
}

START_TEST(pool_address_in_metadata)
{
    struct rs_desired d;
    struct api_vm_nic spec;
    struct vmop_err err = {0};
    char *json = NULL;
    cJSON *doc;
    const cJSON *e, *a;
    desired(&d, &spec);
    ck_assert_int_eq(pl_metadata_json(&d, NULL, &json, &err), VMOP_OK);
    doc = eth0_of(json);
    e = eth0(doc);
    ck_assert(!cJSON_IsTrue(cJSON_GetObjectItem(e, "dhcp4")));
    a = cJSON_GetObjectItem(e, "addresses");
    ck_assert_int_eq(cJSON_GetArraySize(a), 1);
    ck_assert_str_eq(cJSON_GetArrayItem(a, 0)->valuestring, "10.20.0.15/24");
    ck_assert_ptr_nonnull(strstr(json, "\"10.20.0.1\"")); /* gateway */
    ck_assert_ptr_nonnull(strstr(json, "10.20.0.3"));     /* nameservers */
    ck_assert_ptr_nonnull(strstr(json, "corp.example"));  /* search */
    cJSON_Delete(doc);
    free(json);
}
END_TEST

START_TEST(pool_spec_wins)
{
    struct rs_desired d;
    struct api_vm_nic spec;
    struct vmop_err err = {0};
    char *json = NULL;
    cJSON *doc, *ns = cJSON_CreateArray(), *addrs = cJSON_CreateArray();
    desired(&d, &spec);
    /* the interface's own gateway and nameservers win over the pool's */
    cJSON_AddItemToArray(ns, cJSON_CreateString("192.0.2.53"));
    spec.nameservers = ns;
    spec.gateway4 = "10.20.0.254";
    ck_assert_int_eq(pl_metadata_json(&d, NULL, &json, &err), VMOP_OK);
    ck_assert_ptr_nonnull(strstr(json, "10.20.0.15/24"));
    ck_assert_ptr_nonnull(strstr(json, "10.20.0.254"));
    ck_assert_ptr_null(strstr(json, "\"10.20.0.1\""));
    ck_assert_ptr_nonnull(strstr(json, "192.0.2.53"));
    ck_assert_ptr_null(strstr(json, "10.20.0.2\""));
    free(json);

    /* dhcp4 asked for: no pool address */
    spec.dhcp4 = 1;
    ck_assert_int_eq(pl_metadata_json(&d, NULL, &json, &err), VMOP_OK);
    ck_assert_ptr_null(strstr(json, "10.20.0.15"));
    doc = eth0_of(json);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(eth0(doc), "dhcp4")));
    cJSON_Delete(doc);
    free(json);

    /* an explicit IPv4 address: no pool address either */
    spec.dhcp4 = 0;
    cJSON_AddItemToArray(addrs, cJSON_CreateString("192.0.2.7/24"));
    spec.addresses = addrs;
    ck_assert_int_eq(pl_metadata_json(&d, NULL, &json, &err), VMOP_OK);
    ck_assert_ptr_null(strstr(json, "10.20.0.15"));
    ck_assert_ptr_nonnull(strstr(json, "192.0.2.7/24"));
    free(json);
    cJSON_Delete(ns);
    cJSON_Delete(addrs);
}
END_TEST

/* ---- status --------------------------------------------------------------------------------- */

static struct api_vm *vm_text(const char *annotations, const char *cls, const char *power,
                              const char *status)
{
    char buf[4096];
    struct api_vm *vm = NULL;
    struct vmop_err err = {0};
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachine\","
             "\"metadata\":{\"name\":\"web-0\",\"namespace\":\"ns\",\"generation\":3%s%s%s},"
             "\"spec\":{\"className\":\"%s\",\"powerState\":\"%s\"},\"status\":%s}",
             annotations ? ",\"annotations\":" : "", annotations ? annotations : "", "", cls, power,
             status);
    ck_assert_int_eq(api_vm_parse_text(buf, strlen(buf), &vm, &err), VMOP_OK);
    return vm;
}

static void obs(struct st_obs *o, enum api_power_state p)
{
    memset(o, 0, sizeof(*o));
    o->present = 1;
    o->unique_id = "vm-42";
    o->power = p;
    o->primary_ip4 = p == API_POWER_ON ? "192.0.2.10" : NULL;
}

static cJSON *build(const struct st_input *in)
{
    cJSON *st = NULL;
    int changed = 0;
    struct vmop_err err = {0};
    ck_assert_int_eq(st_build(in, T0, &st, &changed, &err), VMOP_OK);
    return st;
}

static const char *cond_field(const cJSON *st, const char *type, const char *k)
{
    const cJSON *c = api_cond_get(cJSON_GetObjectItemCaseSensitive(st, "conditions"), type);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

#define OLD_SMALL "{\"class\":{\"name\":\"best-effort-small\"}}"

START_TEST(class_config_synced)
{
    static const struct {
        const char *annotations, *cls;
        int cycle;
        const char *status, *reason;
    } cases[] = {
        {NULL, "best-effort-large", 1, "False", ST_REASON_CLASS_CHANGED},
        {"{\"" ST_ANNOT_SAME_CLASS_RESIZE "\":\"\"}", "best-effort-small", 1, "False",
         ST_REASON_SAME_CLASS_RESIZE},
        {NULL, "best-effort-small", 1, "False", ST_REASON_CLASS_UPDATED},
        {NULL, "best-effort-large", 0, "True", "True"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct api_vm *vm = vm_text(cases[i].annotations, cases[i].cls, "PoweredOn", OLD_SMALL);
        struct st_obs o;
        struct st_input in = {
            .vm = vm, .kind = ST_SYNCED, .obs = &o, .needs_power_cycle = cases[i].cycle};
        cJSON *st;
        obs(&o, API_POWER_ON);
        st = build(&in);
        ck_assert_str_eq(cond_field(st, COND_CLASS_CONFIG_SYNCED, "status"), cases[i].status);
        ck_assert_str_eq(cond_field(st, COND_CLASS_CONFIG_SYNCED, "reason"), cases[i].reason);
        if (cases[i].cycle)
            ck_assert_ptr_nonnull(
                strstr(cond_field(st, COND_CLASS_CONFIG_SYNCED, "message"), "power cycle"));
        cJSON_Delete(st);
        api_vm_free(vm);
    }
}
END_TEST

START_TEST(last_restart_time)
{
    struct api_vm *vm = vm_text(NULL, "best-effort-small", "PoweredOn", OLD_SMALL);
    struct st_obs o;
    struct st_input in = {.vm = vm, .kind = ST_SYNCED, .obs = &o};
    cJSON *st;
    obs(&o, API_POWER_ON);
    st = build(&in);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(st, "lastRestartTime"));
    cJSON_Delete(st);
    in.last_restart_time = "2026-11-29T23:00:00Z";
    st = build(&in);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(st, "lastRestartTime")->valuestring,
                     "2026-11-29T23:00:00Z");
    cJSON_Delete(st);
    api_vm_free(vm);
}
END_TEST

START_TEST(refused_transition_message)
{
    struct api_vm *vm = vm_text(NULL, "best-effort-small", "Suspended", OLD_SMALL);
    struct st_obs o;
    struct st_input in = {.vm = vm, .kind = ST_SYNCED, .obs = &o, .power_unreachable = 1};
    cJSON *st;
    obs(&o, API_POWER_OFF);
    st = build(&in);
    ck_assert_str_eq(cond_field(st, COND_POWER_SYNCED, "status"), "False");
    ck_assert_ptr_nonnull(
        strstr(cond_field(st, COND_POWER_SYNCED, "message"), "cannot be suspended"));
    cJSON_Delete(st);
    api_vm_free(vm);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("day2");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, pool_address_in_metadata);
    tcase_add_test(tc, pool_spec_wins);
    tcase_add_test(tc, class_config_synced);
    tcase_add_test(tc, last_restart_time);
    tcase_add_test(tc, refused_transition_message);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
