/* test_api_admit.c: the admission decisions (api/api_admit.h), table-driven: each row is an
 * object (a base VirtualMachine with edits) for create or update, privileged or not, and the field
 * path and message part expected, or NULL when the request must be admitted. Covers the privilege
 * predicate, the mutating-stage request checks (instanceUUID on create), the validating-stage VM
 * rules, the deletion checks, the other kinds and the denial message. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "api_admit.h"

#define UUID_A "6b0b5f4a-3c1e-4d7a-9f2b-1a2b3c4d5e6f"
#define UUID_B "0f0e0d0c-0b0a-4908-8706-050403020100"

/* A valid VirtualMachine as it looks after the mutating webhook. */
static const char BASE_VM[] =
    "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachine\","
    "\"metadata\":{\"name\":\"web\",\"namespace\":\"tenant-a\",\"labels\":{},\"annotations\":{}},"
    "\"spec\":{\"className\":\"best-effort-small\",\"imageName\":\"vmi-0123456789abcdef0\","
    "\"image\":{\"kind\":\"VirtualMachineImage\",\"name\":\"vmi-0123456789abcdef0\"},"
    "\"storageClass\":\"wcp-default\",\"powerState\":\"PoweredOn\",\"guestID\":\"ubuntu64Guest\","
    "\"biosUUID\":\"" UUID_A "\",\"instanceUUID\":\"" UUID_B "\","
    "\"network\":{\"interfaces\":[{\"name\":\"eth0\",\"network\":{\"name\":\"tenant-net\"}}]}}}";

#define MAX_EDITS 4

/* One edit: "a>b>c=<json>" sets the member (creating objects on the way); "a>b>c=-" deletes it. */
static void apply_edit(cJSON *root, const char *edit)
{
    char buf[512], *eq, *key, *next;
    cJSON *at = root;

    snprintf(buf, sizeof(buf), "%s", edit);
    eq = strchr(buf, '=');
    ck_assert_ptr_nonnull(eq);
    *eq = '\0';
    for (key = buf; (next = strchr(key, '>')); key = next + 1) {
        cJSON *child;
        *next = '\0';
        child = cJSON_GetObjectItemCaseSensitive(at, key);
        if (!cJSON_IsObject(child)) {
            cJSON_DeleteItemFromObjectCaseSensitive(at, key);
            child = cJSON_AddObjectToObject(at, key);
        }
        at = child;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(at, key);
    if (strcmp(eq + 1, "-") != 0) {
        cJSON *v = cJSON_Parse(eq + 1);
        ck_assert_msg(v != NULL, "bad JSON in edit %s", edit);
        cJSON_AddItemToObject(at, key, v);
    }
}

static cJSON *vm_with(const char *const edits[MAX_EDITS])
{
    cJSON *vm = cJSON_Parse(BASE_VM);
    ck_assert_ptr_nonnull(vm);
    for (size_t i = 0; i < MAX_EDITS && edits[i]; i++)
        apply_edit(vm, edits[i]);
    return vm;
}

static void errs_text(const struct api_ferrs *fe, char *out, size_t n)
{
    struct vbuf b;
    vbuf_init(&b, 16384);
    api_admit_denial(fe, &b);
    snprintf(out, n, "%s", vbuf_str(&b) ? vbuf_str(&b) : "");
    vbuf_free(&b);
}

/* Asserts fe against a row's expectation (field NULL: no errors at all). */
static void expect(const char *row, const struct api_ferrs *fe, const char *field,
                   const char *detail)
{
    char text[4096];
    int i;

    errs_text(fe, text, sizeof(text));
    if (!field) {
        ck_assert_msg(fe->n == 0, "%s: expected admitted, got: %s", row, text);
        return;
    }
    i = api_ferrs_find(fe, field);
    ck_assert_msg(i >= 0, "%s: no error on %s; got: %s", row, field, text);
    if (!detail)
        return;
    for (size_t k = (size_t)i; k < fe->n; k++)
        if (strcmp(fe->e[k].field, field) == 0 && strstr(fe->e[k].detail, detail))
            return;
    ck_assert_msg(0, "%s: %s: want \"%s\"; got: %s", row, field, detail, text);
}

/* ---- privilege ---- */

START_TEST(privileged_predicate)
{
    static const char *const masters[] = {"system:authenticated", "system:masters"};
    static const char *const tenants[] = {"system:authenticated", "devs"};
    static const char *const extra_users[] = {"backup-robot"};
    static const char *const extra_groups[] = {"vmop-admins"};
    static const char *const admins[] = {"vmop-admins"};
    const struct api_privileged_cfg cfg = {"vmop-system", "vmop", extra_users, 1, extra_groups, 1};
    static const struct {
        const char *name;
        struct api_user u;
        int want;
    } rows[] = {
        {"system:masters", {"alice", masters, 2}, 1},
        {"tenant", {"bob", tenants, 2}, 0},
        {"operator SA", {"system:serviceaccount:vmop-system:vmop", tenants, 2}, 1},
        {"operator SA any case", {"System:ServiceAccount:VMOP-system:vmop", NULL, 0}, 1},
        {"other SA in the namespace", {"system:serviceaccount:vmop-system:default", NULL, 0}, 0},
        {"same SA name elsewhere", {"system:serviceaccount:tenant-a:vmop", NULL, 0}, 0},
        {"kubernetes-admin", {"kubernetes-admin", NULL, 0}, 1},
        {"configured user", {"backup-robot", NULL, 0}, 1},
        {"configured user is exact", {"Backup-Robot", NULL, 0}, 0},
        {"configured group", {"carol", admins, 1}, 1},
        {"no username", {NULL, NULL, 0}, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        ck_assert_msg(api_admit_is_privileged(&rows[i].u, &cfg) == rows[i].want, "%s",
                      rows[i].name);
    ck_assert_int_eq(api_admit_is_privileged(&rows[0].u, NULL), 1);
    ck_assert_int_eq(api_admit_is_privileged(&rows[2].u, NULL), 0);
    ck_assert_int_eq(api_admit_is_privileged(NULL, &cfg), 0);
    {
        cJSON *ui = cJSON_Parse("{\"username\":\"system:serviceaccount:vmop-system:vmop\","
                                "\"uid\":\"u1\",\"groups\":[\"system:serviceaccounts\",7,"
                                "\"system:authenticated\"]}");
        const char *groups[1];
        struct api_user u;
        ck_assert_uint_eq(api_user_from_json(ui, &u, groups, 1), 2);
        ck_assert_str_eq(u.username, "system:serviceaccount:vmop-system:vmop");
        ck_assert_uint_eq(u.n_groups, 1);
        ck_assert_str_eq(u.groups[0], "system:serviceaccounts");
        ck_assert_int_eq(api_admit_is_privileged(&u, &cfg), 1);
        ck_assert_uint_eq(api_user_from_json(NULL, &u, groups, 1), 0);
        ck_assert_ptr_null(u.username);
        ck_assert_int_eq(api_admit_is_privileged(&u, &cfg), 0);
        cJSON_Delete(ui);
    }
    ck_assert_int_eq(api_admit_is_protected_key("vmoperator.vmware.com.protected/x"), 1);
    ck_assert_int_eq(api_admit_is_protected_key("fu.bar.protected"), 1);
    ck_assert_int_eq(api_admit_is_protected_key("protected.fu.bar"), 0);
    ck_assert_int_eq(api_admit_is_protected_key("hello.world.protected.against/x"), 0);
    ck_assert_int_eq(api_admit_is_protected_key(".protected/x"), 0);
    ck_assert_int_eq(api_admit_is_protected_key("x/y.protected"), 1);
    ck_assert_int_eq(api_admit_is_protected_key("a.protectedx/b.protected/c"), 1);
    ck_assert_int_eq(api_admit_is_protected_key("a.protectedx"), 0);
    ck_assert_int_eq(api_admit_is_protected_key(NULL), 0);
}
END_TEST

/* ---- the mutating stage: the request as the user sent it ---- */

struct req_row {
    const char *name;
    int priv;
    int update; /* old = base with old_edits */
    const char *old_edits[MAX_EDITS];
    const char *edits[MAX_EDITS];
    const char *field, *detail;
};

START_TEST(vm_request_checks)
{
    static const struct req_row rows[] = {
        {"tenant create without uuids",
         0,
         0,
         {0},
         {"spec>instanceUUID=-", "spec>biosUUID=-"},
         NULL,
         NULL},
        {"tenant sets instanceUUID on create",
         0,
         0,
         {0},
         {"spec>biosUUID=-"},
         "spec.instanceUUID",
         "only privileged users may set this field"},
        {"tenant sets biosUUID on create",
         0,
         0,
         {0},
         {"spec>instanceUUID=-"},
         "spec.biosUUID",
         "only privileged users may set this field"},
        {"operator sets both on create", 1, 0, {0}, {0}, NULL, NULL},
        {"restart now while on", 0, 1, {0}, {"spec>nextRestartTime=\"NoW\""}, NULL, NULL},
        {"restart now while off",
         0,
         1,
         {"spec>powerState=\"PoweredOff\""},
         {"spec>nextRestartTime=\"now\"", "spec>powerState=\"PoweredOn\""},
         "spec.nextRestartTime",
         "can only restart powered on vm"},
        {"restart at a chosen time",
         0,
         1,
         {0},
         {"spec>nextRestartTime=\"2030-01-01T00:00:00Z\""},
         "spec.nextRestartTime",
         "may only be set to \"now\""},
        {"restart time kept",
         0,
         1,
         {"spec>nextRestartTime=\"2026-01-01T00:00:00Z\""},
         {"spec>nextRestartTime=\"2026-01-01T00:00:00Z\""},
         NULL,
         NULL},
        {"restart time omitted",
         0,
         1,
         {"spec>nextRestartTime=\"2026-01-01T00:00:00Z\""},
         {"spec>nextRestartTime=-"},
         NULL,
         NULL},
        {"instanceUUID on update is the validator's business",
         0,
         1,
         {0},
         {"spec>instanceUUID=\"" UUID_A "\""},
         NULL,
         NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct req_row *r = &rows[i];
        struct api_admit_ctx ctx = {.privileged = r->priv};
        struct api_ferrs fe = {0};
        cJSON *old = r->update ? vm_with(r->old_edits) : NULL, *req = vm_with(r->edits);
        api_vm_admit_request(old, req, &ctx, &fe);
        expect(r->name, &fe, r->field, r->detail);
        cJSON_Delete(old);
        cJSON_Delete(req);
    }
}
END_TEST

/* The tricky case end to end: a tenant's create without UUIDs passes the mutating check, the
 * mutating webhook fills both, and the validator (which sees the filled object) admits it; a
 * tenant's own instanceUUID is refused at the mutating stage although the validator alone could
 * not tell it from a default. */
START_TEST(vm_instance_uuid_on_create)
{
    static const char *const no_uuids[MAX_EDITS] = {"spec>instanceUUID=-", "spec>biosUUID=-"};
    static const char *const own_uuid[MAX_EDITS] = {"spec>biosUUID=-"};
    struct api_admit_ctx tenant = {0};
    struct api_ferrs fe = {0};
    cJSON *req = vm_with(no_uuids);

    api_vm_admit_request(NULL, req, &tenant, &fe);
    expect("request without uuids", &fe, NULL, NULL);
    /* what the mutating webhook does (api_vm_default with random bytes) */
    cJSON_AddStringToObject(cJSON_GetObjectItem(req, "spec"), "instanceUUID", UUID_B);
    cJSON_AddStringToObject(cJSON_GetObjectItem(req, "spec"), "biosUUID", UUID_A);
    api_vm_validate_create(req, &tenant, &fe);
    expect("mutated object", &fe, NULL, NULL);
    cJSON_Delete(req);

    req = vm_with(own_uuid);
    api_vm_admit_request(NULL, req, &tenant, &fe);
    expect("tenant's own instanceUUID", &fe, "spec.instanceUUID", API_MSG_PRIV_ONLY);
    cJSON_Delete(req);
}
END_TEST

/* ---- the validating stage ---- */

struct vm_row {
    const char *name;
    int priv;
    const char *old_edits[MAX_EDITS];
    const char *edits[MAX_EDITS];
    const char *field, *detail;
};

static void run_update_rows(const struct vm_row *rows, size_t n, const struct api_binding *b)
{
    for (size_t i = 0; i < n; i++) {
        const struct vm_row *r = &rows[i];
        struct api_admit_ctx ctx = {.privileged = r->priv, .binding = b};
        struct api_ferrs fe = {0};
        cJSON *old = vm_with(r->old_edits), *vm = vm_with(r->edits);
        api_vm_validate_update(old, vm, &ctx, &fe);
        expect(r->name, &fe, r->field, r->detail);
        /* the dispatcher gives the same answer */
        memset(&fe, 0, sizeof(fe));
        api_admit_validate(API_KIND_VM, API_ADMIT_UPDATE, old, vm, &ctx, &fe);
        expect(r->name, &fe, r->field, r->detail);
        cJSON_Delete(old);
        cJSON_Delete(vm);
    }
}

#define ROWS(a) (a), (sizeof(a) / sizeof((a)[0]))

START_TEST(vm_update_immutable)
{
    static const struct vm_row rows[] = {
        {"no change", 0, {0}, {0}, NULL, NULL},
        {"imageName",
         0,
         {0},
         {"spec>imageName=\"vmi-fffffffffffffffff\""},
         "spec.imageName",
         "\"vmi-fffffffffffffffff\": field is immutable"},
        {"image",
         0,
         {0},
         {"spec>image>name=\"vmi-fffffffffffffffff\""},
         "spec.image",
         "field is immutable"},
        {"image filled by the operator", 1, {"spec>image=-"}, {0}, NULL, NULL},
        {"image filled by a tenant", 0, {"spec>image=-"}, {0}, "spec.image", "field is immutable"},
        {"storageClass",
         0,
         {0},
         {"spec>storageClass=\"gold\""},
         "spec.storageClass",
         "\"gold\": field is immutable"},
        {"storageClass even for the operator",
         1,
         {0},
         {"spec>storageClass=\"gold\""},
         "spec.storageClass",
         "field is immutable"},
        {"biosUUID",
         0,
         {0},
         {"spec>biosUUID=\"" UUID_B "\""},
         "spec.biosUUID",
         "field is immutable"},
        {"biosUUID backfilled", 0, {"spec>biosUUID=-"}, {0}, NULL, NULL},
        {"instanceUUID",
         0,
         {0},
         {"spec>instanceUUID=\"" UUID_A "\""},
         "spec.instanceUUID",
         "field is immutable"},
        {"instanceUUID removed",
         0,
         {0},
         {"spec>instanceUUID=-"},
         "spec.instanceUUID",
         "\"\": field is immutable"},
        {"instanceUUID backfilled", 0, {"spec>instanceUUID=-"}, {0}, NULL, NULL},
        {"resourcePolicyName",
         0,
         {0},
         {"spec>reserved={\"resourcePolicyName\":\"p\"}"},
         "spec.reserved.resourcePolicyName",
         "\"p\": field is immutable"},
        {"className changes (resize)",
         0,
         {0},
         {"spec>className=\"best-effort-large\""},
         NULL,
         NULL},
        {"className emptied", 0, {0}, {"spec>className=\"\""}, "spec.className", NULL},
        {"zone label",
         0,
         {"metadata>labels>topology.kubernetes.io/zone=\"zone-a\""},
         {"metadata>labels>topology.kubernetes.io/zone=\"zone-b\""},
         "metadata.labels[topology.kubernetes.io/zone]",
         "\"zone-b\": field is immutable"},
        {"zone label removed",
         0,
         {"metadata>labels>topology.kubernetes.io/zone=\"zone-a\""},
         {0},
         "metadata.labels[topology.kubernetes.io/zone]",
         "field is immutable"},
        {"zone label by the operator",
         1,
         {"metadata>labels>topology.kubernetes.io/zone=\"zone-a\""},
         {"metadata>labels>topology.kubernetes.io/zone=\"zone-b\""},
         NULL,
         NULL},
        {"zone label first set",
         0,
         {0},
         {"metadata>labels>topology.kubernetes.io/zone=\"zone-a\""},
         NULL,
         NULL},
        {"affinity",
         0,
         {0},
         {"spec>affinity={\"vmAffinity\":{}}"},
         "spec.affinity",
         "updating Affinity is not allowed"},
    };
    run_update_rows(ROWS(rows), NULL);
}
END_TEST

START_TEST(vm_update_network)
{
    static const struct vm_row rows[] = {
        {"interface renamed",
         0,
         {0},
         {"spec>network={\"interfaces\":[{\"name\":\"eth1\",\"network\":{\"name\":\"tenant-net\"}}]"
          "}"},
         "spec.network.interfaces[0].name",
         "field is immutable"},
        {"interface network",
         0,
         {0},
         {"spec>network={\"interfaces\":[{\"name\":\"eth0\",\"network\":{\"name\":\"other\"}}]}"},
         "spec.network.interfaces[0].network",
         "field is immutable"},
        {"interface macAddr",
         0,
         {0},
         {"spec>network={\"interfaces\":[{\"name\":\"eth0\",\"network\":{\"name\":\"tenant-net\"},"
          "\"macAddr\":\"00:50:56:00:00:01\"}]}"},
         "spec.network.interfaces[0].macAddr",
         "\"00:50:56:00:00:01\": field is immutable"},
        {"interface added",
         0,
         {0},
         {"spec>network={\"interfaces\":[{\"name\":\"eth0\",\"network\":{\"name\":\"tenant-net\"}},"
          "{\"name\":\"eth1\",\"network\":{\"name\":\"tenant-net\"}}]}"},
         "spec.network.interfaces",
         "network interfaces cannot be added or removed"},
        {"interface removed",
         1,
         {0},
         {"spec>network={\"interfaces\":[]}"},
         "spec.network.interfaces",
         "network interfaces cannot be added or removed"},
        {"default interface backfilled by the operator", 1, {"spec>network=-"}, {0}, NULL, NULL},
        {"interface mtu may change",
         0,
         {0},
         {"spec>network={\"interfaces\":[{\"name\":\"eth0\",\"network\":{\"name\":\"tenant-net\"},"
          "\"mtu\":1400}]}"},
         NULL,
         NULL},
    };
    run_update_rows(ROWS(rows), NULL);
}
END_TEST

START_TEST(vm_update_power)
{
    static const struct vm_row rows[] = {
        {"powerState emptied",
         0,
         {0},
         {"spec>powerState=\"\""},
         "spec.powerState",
         "cannot set power state to empty string"},
        {"suspend while off",
         0,
         {"spec>powerState=\"PoweredOff\""},
         {"spec>powerState=\"Suspended\""},
         "spec.powerState",
         "\"Suspended\": cannot suspend a VM that is powered off"},
        {"suspend while on", 0, {0}, {"spec>powerState=\"Suspended\""}, NULL, NULL},
        {"power off", 0, {0}, {"spec>powerState=\"PoweredOff\""}, NULL, NULL},
        {"guestID while on",
         0,
         {0},
         {"spec>guestID=\"centos64Guest\""},
         "spec.guestID",
         API_MSG_WHEN_POWERED_ON},
        {"guestID while off",
         0,
         {"spec>powerState=\"PoweredOff\""},
         {"spec>powerState=\"PoweredOff\"", "spec>guestID=\"centos64Guest\""},
         NULL,
         NULL},
        {"guestID with a power-off",
         0,
         {0},
         {"spec>powerState=\"PoweredOff\"", "spec>guestID=\"centos64Guest\""},
         NULL,
         NULL},
        {"guestID while held by a poweron check",
         0,
         {"metadata>annotations>poweron.check.vmoperator.vmware.com/net=\"waiting\""},
         {"metadata>annotations>poweron.check.vmoperator.vmware.com/net=\"waiting\"",
          "spec>guestID=\"centos64Guest\""},
         NULL,
         NULL},
        {"cdrom added while on",
         0,
         {0},
         {"spec>hardware={\"cdrom\":[{\"name\":\"cd0\",\"image\":{\"kind\":"
          "\"VirtualMachineImage\",\"name\":\"vmi-iso\"}}]}"},
         "spec.hardware.cdrom",
         API_MSG_WHEN_POWERED_ON},
        {"cdrom image changed while on",
         0,
         {"spec>hardware={\"cdrom\":[{\"name\":\"cd0\",\"image\":{\"kind\":"
          "\"VirtualMachineImage\",\"name\":\"vmi-iso\"}}]}"},
         {"spec>hardware={\"cdrom\":[{\"name\":\"cd0\",\"image\":{\"kind\":"
          "\"VirtualMachineImage\",\"name\":\"vmi-iso2\"}}]}"},
         "spec.hardware.cdrom[0].image",
         API_MSG_WHEN_POWERED_ON},
        {"cdrom disconnected while on",
         0,
         {"spec>hardware={\"cdrom\":[{\"name\":\"cd0\",\"image\":{\"kind\":"
          "\"VirtualMachineImage\",\"name\":\"vmi-iso\"}}]}"},
         {"spec>hardware={\"cdrom\":[{\"name\":\"cd0\",\"connected\":false,\"image\":{\"kind\":"
          "\"VirtualMachineImage\",\"name\":\"vmi-iso\"}}]}"},
         NULL,
         NULL},
        {"cdrom renamed while on",
         0,
         {"spec>hardware={\"cdrom\":[{\"name\":\"cd0\",\"image\":{\"kind\":"
          "\"VirtualMachineImage\",\"name\":\"vmi-iso\"}}]}"},
         {"spec>hardware={\"cdrom\":[{\"name\":\"cd1\",\"image\":{\"kind\":"
          "\"VirtualMachineImage\",\"name\":\"vmi-iso\"}}]}"},
         "spec.hardware.cdrom[0].name",
         "adding new CD-ROMs is not allowed when VM is powered on"},
        {"bootOptions while on",
         0,
         {0},
         {"spec>bootOptions={\"bootDelay\":\"10s\"}"},
         "spec.bootOptions",
         API_MSG_WHEN_POWERED_ON},
        {"restart now left in place",
         0,
         {0},
         {"spec>nextRestartTime=\"now\""},
         "spec.nextRestartTime",
         "\"now\": mutation webhooks are required to restart VM"},
        {"restart timestamp from mutation",
         0,
         {0},
         {"spec>nextRestartTime=\"2026-12-02T01:02:03.123456789Z\""},
         NULL,
         NULL},
        {"restart timestamp with an offset",
         0,
         {0},
         {"spec>nextRestartTime=\"2026-12-02T01:02:03+02:00\""},
         NULL,
         NULL},
        {"restart garbage",
         0,
         {0},
         {"spec>nextRestartTime=\"tomorrow\""},
         "spec.nextRestartTime",
         "\"tomorrow\": must be formatted as RFC3339Nano"},
        {"minHardwareVersion lowered",
         0,
         {"spec>minHardwareVersion=17"},
         {"spec>minHardwareVersion=15"},
         "spec.minHardwareVersion",
         "15: cannot downgrade hardware version"},
        {"minHardwareVersion raised while on",
         0,
         {"spec>minHardwareVersion=15"},
         {"spec>minHardwareVersion=17"},
         "spec.minHardwareVersion",
         "17: cannot upgrade hardware version unless powered off"},
        {"minHardwareVersion raised with a power-off",
         0,
         {"spec>minHardwareVersion=15"},
         {"spec>minHardwareVersion=17", "spec>powerState=\"PoweredOff\""},
         NULL,
         NULL},
    };
    run_update_rows(ROWS(rows), NULL);
}
END_TEST

START_TEST(vm_update_restricted)
{
    static const struct vm_row rows[] = {
        {"paused label by a tenant",
         0,
         {0},
         {"metadata>labels>vmoperator.vmware.com/paused=\"\""},
         "metadata.labels.vmoperator.vmware.com/paused",
         "modifying this label is not allowed for non-admin users"},
        {"paused label by an admin",
         1,
         {0},
         {"metadata>labels>vmoperator.vmware.com/paused=\"\""},
         NULL,
         NULL},
        {"paused label removed by a tenant",
         0,
         {"metadata>labels>vmoperator.vmware.com/paused=\"ops\""},
         {0},
         "metadata.labels.vmoperator.vmware.com/paused",
         "not allowed for non-admin users"},
        {"delete check added",
         0,
         {0},
         {"metadata>annotations>delete.check.vmoperator.vmware.com/backup=\"running\""},
         "metadata.annotations.delete.check.vmoperator.vmware.com/backup",
         "adding this annotation is restricted to privileged users"},
        {"delete check removed",
         0,
         {"metadata>annotations>delete.check.vmoperator.vmware.com/backup=\"running\""},
         {0},
         "metadata.annotations.delete.check.vmoperator.vmware.com/backup",
         "removing this annotation is restricted to privileged users"},
        {"delete check changed",
         0,
         {"metadata>annotations>delete.check.vmoperator.vmware.com/backup=\"running\""},
         {"metadata>annotations>delete.check.vmoperator.vmware.com/backup=\"done\""},
         "metadata.annotations.delete.check.vmoperator.vmware.com/backup",
         "modifying this annotation is restricted to privileged users"},
        {"delete check kept",
         0,
         {"metadata>annotations>delete.check.vmoperator.vmware.com/backup=\"running\""},
         {"metadata>annotations>delete.check.vmoperator.vmware.com/backup=\"running\""},
         NULL,
         NULL},
        {"delete check removed by the operator",
         1,
         {"metadata>annotations>delete.check.vmoperator.vmware.com/backup=\"running\""},
         {0},
         NULL,
         NULL},
        {"poweron check added on update",
         0,
         {0},
         {"metadata>annotations>poweron.check.vmoperator.vmware.com/net=\"x\""},
         "metadata.annotations.poweron.check.vmoperator.vmware.com/net",
         "adding this annotation is restricted to privileged users"},
        {"protected annotation",
         0,
         {0},
         {"metadata>annotations>vmoperator.vmware.com.protected/reconcile-priority=\"1\""},
         "metadata.annotations[vmoperator.vmware.com.protected/reconcile-priority]",
         "modifying this annotation is not allowed for non-admin users"},
        {"protected annotation removed",
         0,
         {"metadata>annotations>condition.vmoperator.vmware.com.protected/x=\"a\""},
         {0},
         "metadata.annotations[condition.vmoperator.vmware.com.protected/x]",
         "non-admin"},
        {"protected annotation by an admin",
         1,
         {0},
         {"metadata>annotations>vmoperator.vmware.com.protected/reconcile-priority=\"1\""},
         NULL,
         NULL},
        {"cloud-init instance id",
         0,
         {0},
         {"metadata>annotations>vmoperator.vmware.com/cloud-init-instance-id=\"x\""},
         "metadata.annotations[vmoperator.vmware.com/cloud-init-instance-id]",
         "non-admin"},
        {"ordinary annotation", 0, {0}, {"metadata>annotations>team=\"web\""}, NULL, NULL},
        {"bootstrap removed",
         0,
         {"spec>bootstrap={\"cloudInit\":{}}"},
         {0},
         "spec.bootstrap",
         "bootstrap provider type cannot be changed"},
        {"cloudInit swapped for linuxPrep",
         0,
         {"spec>bootstrap={\"cloudInit\":{}}"},
         {"spec>bootstrap={\"linuxPrep\":{}}"},
         "spec.bootstrap.cloudInit",
         "bootstrap provider type cannot be changed"},
        {"bootstrap changed by an admin",
         1,
         {"spec>bootstrap={\"cloudInit\":{}}"},
         {"spec>bootstrap={\"linuxPrep\":{}}"},
         NULL,
         NULL},
        {"under deletion: spec rules skipped",
         0,
         {0},
         {"metadata>deletionTimestamp=\"2026-12-02T01:00:00Z\"",
          "spec>imageName=\"vmi-fffffffffffffffff\""},
         NULL,
         NULL},
        {"under deletion: a tenant lifts a delete check",
         0,
         {"metadata>annotations>delete.check.vmoperator.vmware.com/backup=\"running\""},
         {"metadata>deletionTimestamp=\"2026-12-02T01:00:00Z\""},
         "metadata.annotations.delete.check.vmoperator.vmware.com/backup",
         "removing this annotation is restricted to privileged users"},
        {"under deletion: the operator lifts a delete check",
         1,
         {"metadata>annotations>delete.check.vmoperator.vmware.com/backup=\"running\""},
         {"metadata>deletionTimestamp=\"2026-12-02T01:00:00Z\""},
         NULL,
         NULL},
        {"volume removable=false removed",
         0,
         {"spec>volumes=[{\"name\":\"data\",\"removable\":false,\"persistentVolumeClaim\":"
          "{\"claimName\":\"c\"}}]"},
         {0},
         "spec.volumes[0]",
         "cannot remove volume with removable=false"},
        {"volume removed",
         0,
         {"spec>volumes=[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"c\"}}]"},
         {0},
         NULL,
         NULL},
        {"instance storage added",
         0,
         {0},
         {"spec>volumes=[{\"name\":\"is\",\"persistentVolumeClaim\":{\"claimName\":\"c\","
          "\"instanceVolumeClaim\":{\"storageClass\":\"s\",\"size\":\"1Gi\"}}}]"},
         "spec.volumes",
         "adding or modifying instance storage volume claim(s) is not allowed"},
    };
    run_update_rows(ROWS(rows), NULL);
}
END_TEST

START_TEST(vm_create)
{
    cJSON *bj =
        cJSON_Parse("{\"metadata\":{\"name\":\"vsphere\",\"namespace\":\"tenant-a\"},\"spec\":{"
                    "\"endpointRef\":{\"name\":\"vc1\"},\"networks\":[{\"name\":\"tenant-net\","
                    "\"portGroup\":\"DC0_DVPG0\"}],\"defaultNetwork\":\"tenant-net\","
                    "\"storageClasses\":[\"wcp-default\"]}}");
    struct api_binding *b = NULL;
    struct vmop_err err = {0};
    static const struct vm_row rows[] = {
        {"valid", 0, {0}, {0}, NULL, NULL},
        {"suspended",
         0,
         {0},
         {"spec>powerState=\"Suspended\""},
         "spec.powerState",
         "\"Suspended\": cannot set a new VM's power state to Suspended"},
        {"restart on create",
         0,
         {0},
         {"spec>nextRestartTime=\"now\""},
         "spec.nextRestartTime",
         "\"now\": cannot restart VM on create"},
        {"delete check by a tenant",
         0,
         {0},
         {"metadata>annotations>delete.check.vmoperator.vmware.com/backup=\"x\""},
         "metadata.annotations.delete.check.vmoperator.vmware.com/backup",
         "adding this annotation is restricted to privileged users"},
        {"delete check by an admin",
         1,
         {0},
         {"metadata>annotations>delete.check.vmoperator.vmware.com/backup=\"x\""},
         NULL,
         NULL},
        {"poweron check by a tenant",
         0,
         {0},
         {"metadata>annotations>poweron.check.vmoperator.vmware.com/net=\"x\""},
         NULL,
         NULL},
        {"paused label by a tenant",
         0,
         {0},
         {"metadata>labels>vmoperator.vmware.com/paused=\"\""},
         "metadata.labels.vmoperator.vmware.com/paused",
         "non-admin"},
        {"instance storage by a tenant",
         0,
         {0},
         {"spec>volumes=[{\"name\":\"is\",\"persistentVolumeClaim\":{\"claimName\":\"c\","
          "\"instanceVolumeClaim\":{\"storageClass\":\"s\",\"size\":\"1Gi\"}}}]"},
         "spec.volumes",
         "instance storage"},
        {"storage class outside the binding",
         0,
         {0},
         {"spec>storageClass=\"gold\""},
         "spec.storageClass",
         "\"gold\": Storage policy is not associated with the namespace tenant-a by object gold"},
        {"network outside the binding",
         0,
         {0},
         {"spec>network={\"interfaces\":[{\"name\":\"eth0\",\"network\":{\"name\":\"prod\"}}]}"},
         "spec.network.interfaces[0].network.name",
         "\"prod\": network is not available in namespace tenant-a"},
        {"object rules still apply",
         0,
         {0},
         {"spec>biosUUID=\"not-a-uuid\""},
         "spec.biosUUID",
         NULL},
    };

    ck_assert_int_eq(api_binding_parse(bj, &b, &err), VMOP_OK);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct vm_row *r = &rows[i];
        struct api_admit_ctx ctx = {.privileged = r->priv, .binding = b};
        struct api_ferrs fe = {0};
        cJSON *vm = vm_with(r->edits);
        api_admit_validate(API_KIND_VM, API_ADMIT_CREATE, NULL, vm, &ctx, &fe);
        expect(r->name, &fe, r->field, r->detail);
        cJSON_Delete(vm);
    }
    /* without a binding the namespace checks are skipped */
    {
        static const char *const gold[MAX_EDITS] = {"spec>storageClass=\"gold\""};
        struct api_admit_ctx ctx = {0};
        struct api_ferrs fe = {0};
        cJSON *vm = vm_with(gold);
        api_vm_validate_create(vm, &ctx, &fe);
        expect("no binding", &fe, NULL, NULL);
        cJSON_Delete(vm);
    }
    api_binding_free(b);
    cJSON_Delete(bj);
}
END_TEST

START_TEST(vm_delete_checks)
{
    static const char *const held[MAX_EDITS] = {
        "metadata>annotations>delete.check.vmoperator.vmware.com/backup=\"running\"",
        "metadata>annotations>delete.check.vmoperator.vmware.com/dr=\"\"",
        "metadata>annotations>poweron.check.vmoperator.vmware.com/net=\"x\"",
        "metadata>annotations>delete.check.vmoperator.vmware.comX/not=\"x\""};
    static const char *const none[MAX_EDITS] = {0};
    cJSON *vm = vm_with(held), *free_vm = vm_with(none);
    const char *keys[4] = {0};
    struct vbuf b;

    ck_assert_uint_eq(api_vm_delete_checks(vm, keys, 4), 2);
    ck_assert_str_eq(keys[0], "delete.check.vmoperator.vmware.com/backup");
    ck_assert_str_eq(keys[1], "delete.check.vmoperator.vmware.com/dr");
    ck_assert_uint_eq(api_vm_delete_checks(vm, keys, 1), 2);
    ck_assert_uint_eq(api_vm_delete_checks(vm, NULL, 0), 2);
    ck_assert_uint_eq(api_vm_delete_checks(free_vm, keys, 4), 0);
    ck_assert_uint_eq(api_vm_delete_checks(NULL, keys, 4), 0);
    vbuf_init(&b, 4096);
    ck_assert_uint_eq(api_vm_delete_checks_format(vm, &b), 2);
    ck_assert_str_eq(vbuf_str(&b), "deletion held by delete.check.vmoperator.vmware.com/backup, "
                                   "delete.check.vmoperator.vmware.com/dr");
    vbuf_free(&b);
    cJSON_Delete(vm);
    cJSON_Delete(free_vm);
}
END_TEST

/* ---- the other kinds, the dispatcher, the message ---- */

struct kind_row {
    const char *name;
    enum api_admit_kind kind;
    const char *old, *obj;
    const char *field, *detail;
};

START_TEST(other_kinds)
{
    static const struct kind_row rows[] = {
        {"class valid", API_KIND_VM_CLASS, NULL,
         "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"hardware\":{\"cpus\":2,\"memory\":\"4Gi\"}}}",
         NULL, NULL},
        {"class requests over limits", API_KIND_VM_CLASS, NULL,
         "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"hardware\":{\"cpus\":2,\"memory\":\"4Gi\"},"
         "\"policies\":{\"resources\":{\"requests\":{\"memory\":\"8Gi\"},\"limits\":{\"memory\":"
         "\"4Gi\"}}}}}",
         "spec.policies.resources.requests.memory", NULL},
        {"class without cpus", API_KIND_VM_CLASS, NULL,
         "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"hardware\":{\"memory\":\"4Gi\"}}}",
         "spec.hardware.cpus", NULL},
        {"class controllerName cleared", API_KIND_VM_CLASS,
         "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"controllerName\":\"vmoperator.vmware.com/"
         "vsphere\",\"hardware\":{\"cpus\":2,\"memory\":\"4Gi\"}}}",
         "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"hardware\":{\"cpus\":2,\"memory\":\"4Gi\"}}}",
         "spec.controllerName", "may not be cleared"},
        {"service valid", API_KIND_VM_SERVICE, NULL,
         "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"LoadBalancer\",\"selector\":"
         "{\"app\":\"web\"},\"ports\":[{\"name\":\"http\",\"protocol\":\"TCP\",\"port\":80,"
         "\"targetPort\":8080}],\"loadBalancerSourceRanges\":[\"10.0.0.0/8\"]}}",
         NULL, NULL},
        {"service type immutable", API_KIND_VM_SERVICE,
         "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"LoadBalancer\",\"ports\":[{"
         "\"name\":\"http\",\"protocol\":\"TCP\",\"port\":80,\"targetPort\":80}]}}",
         "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"ClusterIP\",\"ports\":[{"
         "\"name\":\"http\",\"protocol\":\"TCP\",\"port\":80,\"targetPort\":80}]}}",
         "spec.type", "field is immutable"},
        {"service name not a label", API_KIND_VM_SERVICE, NULL,
         "{\"metadata\":{\"name\":\"Web.1\"},\"spec\":{\"type\":\"ClusterIP\",\"ports\":[{"
         "\"name\":\"http\",\"protocol\":\"TCP\",\"port\":80,\"targetPort\":80}]}}",
         "metadata.name", "RFC 1123 label"},
        {"service duplicate port", API_KIND_VM_SERVICE, NULL,
         "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"ClusterIP\",\"ports\":["
         "{\"name\":\"a\",\"protocol\":\"TCP\",\"port\":80,\"targetPort\":80},"
         "{\"name\":\"b\",\"protocol\":\"TCP\",\"port\":80,\"targetPort\":81}]}}",
         "spec.ports[1]", "{\"protocol\":\"TCP\",\"port\":80}"},
        {"service same port other protocol", API_KIND_VM_SERVICE, NULL,
         "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"ClusterIP\",\"ports\":["
         "{\"name\":\"a\",\"protocol\":\"TCP\",\"port\":53,\"targetPort\":53},"
         "{\"name\":\"b\",\"protocol\":\"UDP\",\"port\":53,\"targetPort\":53}]}}",
         NULL, NULL},
        {"service single unnamed port", API_KIND_VM_SERVICE, NULL,
         "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"ClusterIP\",\"ports\":["
         "{\"protocol\":\"TCP\",\"port\":80,\"targetPort\":80}]}}",
         NULL, NULL},
        {"service unnamed port among two", API_KIND_VM_SERVICE, NULL,
         "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"ClusterIP\",\"ports\":["
         "{\"name\":\"a\",\"protocol\":\"TCP\",\"port\":80,\"targetPort\":80},"
         "{\"protocol\":\"TCP\",\"port\":81,\"targetPort\":81}]}}",
         "spec.ports[1].name", NULL},
        {"service port name", API_KIND_VM_SERVICE, NULL,
         "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"ClusterIP\",\"ports\":["
         "{\"name\":\"HTTP_1\",\"protocol\":\"TCP\",\"port\":80,\"targetPort\":80}]}}",
         "spec.ports[0].name", "RFC 1123 label"},
        {"service headless LoadBalancer", API_KIND_VM_SERVICE, NULL,
         "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"LoadBalancer\",\"clusterIp\":"
         "\"None\",\"ports\":[{\"name\":\"a\",\"protocol\":\"TCP\",\"port\":80,\"targetPort\":80}]}"
         "}",
         "spec.clusterIP", "may not be set to 'None' for LoadBalancer services"},
        {"service bad loadBalancerIP", API_KIND_VM_SERVICE, NULL,
         "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"LoadBalancer\",\"loadBalancerIP\":"
         "\"10.0.0.300\",\"ports\":[{\"name\":\"a\",\"protocol\":\"TCP\",\"port\":80,"
         "\"targetPort\":80}]}}",
         "spec.loadBalancerIP", "must be a valid IP address"},
        {"service ExternalName with clusterIp", API_KIND_VM_SERVICE, NULL,
         "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"ExternalName\",\"externalName\":"
         "\"db.example.com.\",\"clusterIp\":\"10.0.0.1\"}}",
         "spec.clusterIP", "may not be set for ExternalName services"},
        {"service bad externalName", API_KIND_VM_SERVICE, NULL,
         "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"ExternalName\",\"externalName\":"
         "\"db_1.example.com\"}}",
         "spec.externalName", "RFC 1123 subdomain"},
        {"service bad source range", API_KIND_VM_SERVICE, NULL,
         "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"LoadBalancer\",\"ports\":[{"
         "\"name\":\"a\",\"protocol\":\"TCP\",\"port\":80,\"targetPort\":80}],"
         "\"loadBalancerSourceRanges\":[\"10.0.0.0/33\"]}}",
         "spec.loadBalancerSourceRanges", "must be a list of IP ranges"},
        {"service bad selector", API_KIND_VM_SERVICE, NULL,
         "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"ClusterIP\",\"selector\":{"
         "\"app\":\"-web\"},\"ports\":[{\"name\":\"a\",\"protocol\":\"TCP\",\"port\":80,"
         "\"targetPort\":80}]}}",
         "spec.selector", "a valid label"},
        {"binding valid", API_KIND_NS_BINDING, NULL,
         "{\"metadata\":{\"name\":\"vsphere\",\"namespace\":\"tenant-a\"},\"spec\":{"
         "\"endpointRef\":{\"name\":\"vc1\"},\"resourcePool\":\"/DC0/host/C0/Resources\","
         "\"vmFolder\":\"/DC0/vm/tenant-a\",\"networks\":[{\"name\":\"tenant-net\","
         "\"portGroup\":\"DC0_DVPG0\"}],\"defaultNetwork\":\"tenant-net\"}}",
         NULL, NULL},
        {"binding default network unknown", API_KIND_NS_BINDING, NULL,
         "{\"metadata\":{\"name\":\"vsphere\",\"namespace\":\"tenant-a\"},\"spec\":{"
         "\"endpointRef\":{\"name\":\"vc1\"},\"networks\":[{\"name\":\"tenant-net\","
         "\"portGroup\":\"DC0_DVPG0\"}],\"defaultNetwork\":\"other\"}}",
         "spec.defaultNetwork", NULL},
        {"endpoint valid", API_KIND_VC_ENDPOINT, NULL,
         "{\"metadata\":{\"name\":\"vc1\"},\"spec\":{\"server\":\"https://vc1.example.com\","
         "\"tls\":{\"thumbprint\":\"AB:CD\"},\"credentialsSecretRef\":{\"name\":\"vc1-creds\"}}}",
         NULL, NULL},
        {"endpoint without server", API_KIND_VC_ENDPOINT, NULL,
         "{\"metadata\":{\"name\":\"vc1\"},\"spec\":{\"credentialsSecretRef\":{\"name\":\"c\"}}}",
         "spec.server", NULL},
        {"service under deletion", API_KIND_VM_SERVICE,
         "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"type\":\"LoadBalancer\",\"ports\":[{"
         "\"name\":\"http\",\"protocol\":\"TCP\",\"port\":80,\"targetPort\":80}]}}",
         "{\"metadata\":{\"name\":\"web\",\"deletionTimestamp\":\"2026-12-02T01:00:00Z\"},"
         "\"spec\":{\"type\":\"ClusterIP\"}}",
         NULL, NULL},
        {"unknown kind admits", API_KIND_UNKNOWN, NULL, "{}", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct kind_row *r = &rows[i];
        struct api_admit_ctx ctx = {0};
        struct api_ferrs fe = {0};
        cJSON *old = r->old ? cJSON_Parse(r->old) : NULL, *obj = cJSON_Parse(r->obj);
        ck_assert_msg(obj && (old || !r->old), "%s: bad JSON", r->name);
        api_admit_validate(r->kind, old ? API_ADMIT_UPDATE : API_ADMIT_CREATE, old, obj, &ctx, &fe);
        expect(r->name, &fe, r->field, r->detail);
        cJSON_Delete(old);
        cJSON_Delete(obj);
    }
}
END_TEST

START_TEST(dispatch_and_denial)
{
    static const char *const renamed[MAX_EDITS] = {"spec>imageName=\"vmi-new\"",
                                                   "spec>image>name=\"vmi-new\""};
    static const char *const base[MAX_EDITS] = {0};
    struct api_admit_ctx ctx = {0};
    struct api_ferrs fe = {0};
    cJSON *old = vm_with(base), *vm = vm_with(renamed);
    char text[4096];

    ck_assert_int_eq(api_admit_kind_parse("vmoperator.vmware.com", "VirtualMachine"), API_KIND_VM);
    ck_assert_int_eq(api_admit_kind_parse("vmoperator.vmware.com", "VirtualMachineClass"),
                     API_KIND_VM_CLASS);
    ck_assert_int_eq(api_admit_kind_parse("vmoperator.vmware.com", "VirtualMachineService"),
                     API_KIND_VM_SERVICE);
    ck_assert_int_eq(api_admit_kind_parse("infra.vmop.io", "NamespaceBinding"),
                     API_KIND_NS_BINDING);
    ck_assert_int_eq(api_admit_kind_parse("infra.vmop.io", "VCenterEndpoint"),
                     API_KIND_VC_ENDPOINT);
    ck_assert_int_eq(api_admit_kind_parse("", "VirtualMachine"), API_KIND_UNKNOWN);
    ck_assert_int_eq(api_admit_kind_parse(NULL, NULL), API_KIND_UNKNOWN);

    api_admit_validate(API_KIND_VM, API_ADMIT_DELETE, old, vm, &ctx, &fe);
    ck_assert_uint_eq(fe.n, 0);
    api_admit_validate(API_KIND_VM, API_ADMIT_UPDATE, NULL, vm, &ctx, &fe);
    expect("update without old", &fe, "oldObject", NULL);
    memset(&fe, 0, sizeof(fe));

    api_admit_validate(API_KIND_VM, API_ADMIT_UPDATE, old, vm, &ctx, &fe);
    errs_text(&fe, text, sizeof(text));
    ck_assert_str_eq(text, "spec.imageName: Invalid value: \"vmi-new\": field is immutable, "
                           "spec.image: Invalid value: "
                           "{\"kind\":\"VirtualMachineImage\",\"name\":\"vmi-new\"}: "
                           "field is immutable");
    memset(&fe, 0, sizeof(fe));
    errs_text(&fe, text, sizeof(text));
    ck_assert_str_eq(text, "");

    /* a body that is not an object */
    {
        cJSON *arr = cJSON_CreateArray();
        api_admit_validate(API_KIND_VM, API_ADMIT_CREATE, NULL, arr, &ctx, &fe);
        expect("array body", &fe, "", "must be a JSON object");
        cJSON_Delete(arr);
    }
    cJSON_Delete(old);
    cJSON_Delete(vm);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_admit");
    TCase *tc = tcase_create("admit");
    tcase_add_test(tc, privileged_predicate);
    tcase_add_test(tc, vm_request_checks);
    tcase_add_test(tc, vm_instance_uuid_on_create);
    tcase_add_test(tc, vm_update_immutable);
    tcase_add_test(tc, vm_update_network);
    tcase_add_test(tc, vm_update_power);
    tcase_add_test(tc, vm_update_restricted);
    tcase_add_test(tc, vm_create);
    tcase_add_test(tc, vm_delete_checks);
    tcase_add_test(tc, other_kinds);
    tcase_add_test(tc, dispatch_and_denial);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
