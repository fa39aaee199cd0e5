/* test_resolve.c: unit tests for operator/vm/resolve.c: every prerequisite condition and reason,
 * and the desired configuration of a VM whose references are all in place. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check_main.h"
#include "resolve.h"

#define BIOS "0b7f5a3e-7a44-4f4a-9d0e-3f2c1a9b8c7d"
#define INST "4c3b2a19-0817-4e6f-8d5c-4b3a29180716"

static const char *vm_json =
    "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachine\","
    "\"metadata\":{\"name\":\"web-0\",\"namespace\":\"tenant-a\",\"uid\":\"u1\",\"generation\":1},"
    "\"spec\":{\"className\":\"best-effort-small\",\"imageName\":\"ubuntu\","
    "\"image\":{\"kind\":\"VirtualMachineImage\",\"name\":\"vmi-abc\"},"
    "\"storageClass\":\"wcp-default\",\"powerState\":\"PoweredOn\","
    "\"powerOffMode\":\"TrySoft\",\"suspendMode\":\"TrySoft\",\"restartMode\":\"TrySoft\","
    "\"biosUUID\":\"" BIOS "\",\"instanceUUID\":\"" INST "\","
    "\"bootstrap\":{\"cloudInit\":{\"instanceID\":\"" BIOS "\","
    "\"rawCloudConfig\":{\"name\":\"web-0-ci\",\"key\":\"user-data\"},"
    "\"sshAuthorizedKeys\":[\"ssh-ed25519 AAAA k\"]}},"
    "\"network\":{\"hostName\":\"web-0\",\"domainName\":\"example.org\","
    "\"interfaces\":[{\"name\":\"eth0\",\"network\":{\"name\":\"tenant-net\"}}]}}}";

static const char *binding_json =
    "{\"apiVersion\":\"infra.vmop.io/v1alpha1\",\"kind\":\"NamespaceBinding\","
    "\"metadata\":{\"name\":\"vsphere\",\"namespace\":\"tenant-a\"},"
    "\"spec\":{\"endpointRef\":{\"name\":\"vc1\"},\"datacenter\":\"DC0\","
    "\"resourcePool\":\"/DC0/host/DC0_C0/Resources\",\"vmFolder\":\"/DC0/vm\","
    "\"datastore\":\"/DC0/datastore/LocalDS_0\","
    "\"networks\":[{\"name\":\"tenant-net\",\"portGroup\":\"/DC0/network/DC0_DVPG0\"}],"
    "\"defaultNetwork\":\"tenant-net\",\"storageClasses\":[\"wcp-default\"],"
    "\"vmClasses\":[\"best-effort-small\",\"guaranteed-small\"]}}";

static const char *class_json =
    "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachineClass\","
    "\"metadata\":{\"name\":\"best-effort-small\",\"namespace\":\"tenant-a\"},"
    "\"spec\":{\"hardware\":{\"cpus\":2,\"memory\":\"4Gi\"},"
    "\"policies\":{\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"},"
    "\"limits\":{\"cpu\":\"1\"}}}}}";

static const char *image_json =
    "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachineImage\","
    "\"metadata\":{\"name\":\"vmi-abc\",\"namespace\":\"tenant-a\"},"
    "\"status\":{\"name\":\"ubuntu\",\"type\":\"OVF\",\"providerItemID\":\"item-1\","
    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"True\"}]}}";

static const char *sc_json = "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\","
                             "\"metadata\":{\"name\":\"wcp-default\"},"
                             "\"parameters\":{\"storagePolicyID\":\"pol-1\"}}";

/* user-data: "#cloud-config\nruncmd: [echo hi]\n" in base64 */
static const char *secret_json =
    "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"web-0-ci\"},"
    "\"data\":{\"user-data\":\"I2Nsb3VkLWNvbmZpZwpydW5jbWQ6IFtlY2hvIGhpXQo=\"}}";

struct fx {
    cJSON *vm_j, *secret;
    struct api_vm *vm;
    struct api_binding *binding;
    struct api_class *cls;
    struct api_image *image;
    cJSON *sc;
    struct rs_inputs in;
    struct rs_result r;
};

static const cJSON *get_secret(void *arg, const char *name)
{
    struct fx *f = arg;
    const cJSON *n = cJSON_GetObjectItem(cJSON_GetObjectItem(f->secret, "metadata"), "name");
    return f->secret && cJSON_IsString(n) && strcmp(n->valuestring, name) == 0 ? f->secret : NULL;
}

static void fx_init(struct fx *f)
{
    struct vmop_err err = {0};
    cJSON *j;
    memset(f, 0, sizeof(*f));
    f->vm_j = cJSON_Parse(vm_json);
    ck_assert_ptr_nonnull(f->vm_j);
    j = cJSON_Parse(binding_json);
    ck_assert_int_eq(api_binding_parse(j, &f->binding, &err), VMOP_OK);
    cJSON_Delete(j);
    j = cJSON_Parse(class_json);
    ck_assert_int_eq(api_class_parse(j, &f->cls, &err), VMOP_OK);
    cJSON_Delete(j);
    j = cJSON_Parse(image_json);
    ck_assert_int_eq(api_image_parse(j, &f->image, &err), VMOP_OK);
    cJSON_Delete(j);
    f->sc = cJSON_Parse(sc_json);
    f->secret = cJSON_Parse(secret_json);
}

/* Re-parses the (possibly edited) VM JSON and resolves. */
static void fx_resolve(struct fx *f)
{
    struct vmop_err err = {0};
    api_vm_free(f->vm);
    f->vm = NULL;
    ck_assert_int_eq(api_vm_parse(f->vm_j, &f->vm, &err), VMOP_OK);
    f->in.vm = f->vm;
    f->in.get_secret = get_secret;
    f->in.secret_arg = f;
    if (!f->in.min_host_mhz)
        f->in.min_host_mhz = 2000;
    rs_result_free(&f->r);
    ck_assert_int_eq(rs_resolve(&f->in, &f->r, &err), VMOP_OK);
}

static void fx_all(struct fx *f)
{
    f->in.binding = f->binding;
    f->in.cls = f->cls;
    f->in.image = f->image;
    f->in.storage_class = f->sc;
}

static void fx_free(struct fx *f)
{
    rs_result_free(&f->r);
    api_vm_free(f->vm);
    api_binding_free(f->binding);
    api_class_free(f->cls);
    api_image_free(f->image);
    cJSON_Delete(f->sc);
    cJSON_Delete(f->secret);
    cJSON_Delete(f->vm_j);
}

static void assert_cond(const struct rs_result *r, const char *type, enum api_cond_status st,
                        const char *reason, const char *msg_part)
{
    const struct rs_cond *c = rs_result_cond(r, type);
    ck_assert_msg(c != NULL, "condition %s missing", type);
    ck_assert_msg(c->present, "condition %s should be present", type);
    ck_assert_msg(c->status == st, "%s: status %d, want %d (%s)", type, c->status, st, c->message);
    ck_assert_str_eq(c->reason, reason);
    if (msg_part)
        ck_assert_msg(strstr(c->message, msg_part) != NULL, "%s: message '%s' lacks '%s'", type,
                      c->message, msg_part);
}

static cJSON *spec(struct fx *f)
{
    return cJSON_GetObjectItem(f->vm_j, "spec");
}

START_TEST(all_prerequisites_met)
{
    struct fx f;
    fx_init(&f);
    fx_all(&f);
    fx_resolve(&f);
    ck_assert_int_eq(f.r.ready, 1);
    assert_cond(&f.r, COND_CLASS_READY, API_COND_TRUE, "", NULL);
    assert_cond(&f.r, COND_IMAGE_READY, API_COND_TRUE, "", NULL);
    assert_cond(&f.r, COND_STORAGE_READY, API_COND_TRUE, "", NULL);
    assert_cond(&f.r, COND_BOOTSTRAP_READY, API_COND_TRUE, "", NULL);
    assert_cond(&f.r, COND_NETWORK_READY, API_COND_TRUE, "", NULL);
    assert_cond(&f.r, COND_PLACEMENT_READY, API_COND_TRUE, "", NULL);
    const struct rs_desired *d = &f.r.desired;
    ck_assert_str_eq(d->resource_pool, "/DC0/host/DC0_C0/Resources");
    ck_assert_str_eq(d->folder, "/DC0/vm");
    ck_assert_str_eq(d->library_item_id, "item-1");
    ck_assert_int_eq(d->image_type, RS_IMAGE_OVF);
    ck_assert_int_eq(d->size.num_cpus, 2);
    ck_assert_int_eq(d->size.memory_mb, 4096);
    ck_assert_int_eq(d->size.cpu_reservation_mhz, 1000); /* 500m x 2000 MHz */
    ck_assert_int_eq(d->size.cpu_limit_mhz, 2000);
    ck_assert_int_eq(d->size.mem_reservation_mb, 1024);
    ck_assert_int_eq(d->size.mem_limit_mb, -1);
    ck_assert_str_eq(d->storage_policy_id, "pol-1");
    ck_assert_uint_eq(d->n_nics, 1);
    ck_assert_str_eq(d->nics[0].port_group, "/DC0/network/DC0_DVPG0");
    ck_assert_str_eq(d->namespaced_name, "tenant-a/web-0");
    ck_assert_str_eq(d->instance_uuid, INST);
    ck_assert_str_eq(d->instance_id, BIOS);
    ck_assert_str_eq(d->hostname, "web-0.example.org");
    ck_assert_str_eq(d->userdata, "#cloud-config\nruncmd: [echo hi]\n");
    ck_assert_int_eq(d->power, API_POWER_ON);
    fx_free(&f);
}
END_TEST

/* An existing VM the tenant suspends (an update admission allowed): resolvable, with the
 * create-only rules (no Suspended, no nextRestartTime) left to admission, which knows it is not
 * a create. */
START_TEST(suspended_vm_resolves)
{
    struct fx f;
    fx_init(&f);
    fx_all(&f);
    cJSON_DeleteItemFromObject(spec(&f), "powerState");
    cJSON_AddItemToObject(spec(&f), "powerState", cJSON_CreateString("Suspended"));
    cJSON_AddItemToObject(spec(&f), "nextRestartTime",
                          cJSON_CreateString("2026-12-02T04:00:00.123Z"));
    fx_resolve(&f);
    ck_assert_int_eq(f.r.ready, 1);
    ck_assert_int_eq(f.r.desired.power, API_POWER_SUSPENDED);
    fx_free(&f);
}
END_TEST

/* nextRestartTime becomes desired.restart_for until status.lastRestartTime records it; "now"
 * never reaches the planner (the controller writes it as a time first). */
START_TEST(restart_asked_until_recorded)
{
    struct fx f;
    cJSON *st;
    fx_init(&f);
    fx_all(&f);
    fx_resolve(&f);
    ck_assert_ptr_null(f.r.desired.restart_for);
    cJSON_AddItemToObject(spec(&f), "nextRestartTime", cJSON_CreateString("2026-12-02T08:00:00Z"));
    cJSON_DeleteItemFromObject(spec(&f), "restartMode");
    cJSON_AddItemToObject(spec(&f), "restartMode", cJSON_CreateString("Soft"));
    fx_resolve(&f);
    ck_assert_str_eq(f.r.desired.restart_for, "2026-12-02T08:00:00Z");
    ck_assert_int_eq(f.r.desired.restart_mode, API_MODE_SOFT);
    st = cJSON_AddObjectToObject(f.vm_j, "status");
    cJSON_AddItemToObject(st, "lastRestartTime", cJSON_CreateString("2026-12-02T07:00:00Z"));
    fx_resolve(&f);
    ck_assert_str_eq(f.r.desired.restart_for, "2026-12-02T08:00:00Z");
    cJSON_ReplaceItemInObject(st, "lastRestartTime", cJSON_CreateString("2026-12-02T08:00:00Z"));
    fx_resolve(&f);
    ck_assert_ptr_null(f.r.desired.restart_for);
    cJSON_ReplaceItemInObject(spec(&f), "nextRestartTime", cJSON_CreateString("now"));
    fx_resolve(&f);
    ck_assert_ptr_null(f.r.desired.restart_for);
    fx_free(&f);
}
END_TEST

/* Static IPv4 pool addresses are resolver inputs: they land on the desired NIC of their
 * interface; a pool problem the controller met is the network condition's reason. */
START_TEST(pool_addresses_are_inputs)
{
    static const char *const ns[] = {"10.0.0.53"};
    struct rs_pool_addr pa = {.iface = "eth0",
                              .cidr = "10.20.0.11/24",
                              .gateway4 = "10.20.0.1",
                              .nameservers = ns,
                              .n_nameservers = 1};
    struct fx f;
    fx_init(&f);
    fx_all(&f);
    fx_resolve(&f);
    ck_assert_int_eq(f.r.ready, 1);
    ck_assert_ptr_null(f.r.desired.nics[0].pool_cidr);
    f.in.pool_addrs = &pa;
    f.in.n_pool_addrs = 1;
    fx_resolve(&f);
    ck_assert_int_eq(f.r.ready, 1);
    ck_assert_uint_eq(f.r.desired.n_nics, 1);
    ck_assert_str_eq(f.r.desired.nics[0].pool_cidr, "10.20.0.11/24");
    ck_assert_str_eq(f.r.desired.nics[0].pool_gateway4, "10.20.0.1");
    ck_assert_uint_eq(f.r.desired.nics[0].n_pool_nameservers, 1);
    /* another interface's address is not this one's */
    pa.iface = "eth1";
    fx_resolve(&f);
    ck_assert_ptr_null(f.r.desired.nics[0].pool_cidr);
    /* exhausted: not ready, with the controller's reason and message */
    f.in.pool_reason = "IPPoolExhausted";
    f.in.pool_message = "network tenant-net: no free address in 10.20.0.10-10.20.0.11";
    fx_resolve(&f);
    ck_assert_int_eq(f.r.ready, 0);
    assert_cond(&f.r, COND_NETWORK_READY, API_COND_FALSE, "IPPoolExhausted", "no free address");
    fx_free(&f);
}
END_TEST

/* Sizing by the hosts' MHz once vCenter is reached: one resolve, then rs_size(). */
START_TEST(sized_by_observed_mhz)
{
    struct fx f;
    fx_init(&f);
    fx_all(&f);
    f.in.min_host_mhz = 1000; /* the controller's stand-in */
    fx_resolve(&f);
    ck_assert_int_eq(f.r.ready, 1);
    ck_assert_int_eq(f.r.desired.size.cpu_reservation_mhz, 500); /* 500m x 1000 MHz */
    rs_size(&f.in, &f.r, 3000);
    ck_assert_int_eq(f.r.ready, 1);
    ck_assert_int_eq(f.r.desired.size.cpu_reservation_mhz, 1500); /* 500m x 3000 MHz */
    ck_assert_int_eq(f.r.desired.size.cpu_limit_mhz, 3000);
    rs_size(&f.in, &f.r, 0);
    ck_assert_int_eq(f.r.ready, 0);
    assert_cond(&f.r, COND_CLASS_READY, API_COND_UNKNOWN, "HostInfoUnavailable", "CPU speed");
    fx_free(&f);
}
END_TEST

START_TEST(namespace_not_bound)
{
    struct fx f;
    fx_init(&f);
    fx_all(&f);
    f.in.binding = NULL;
    fx_resolve(&f);
    ck_assert_int_eq(f.r.ready, 0);
    assert_cond(&f.r, COND_PLACEMENT_READY, API_COND_FALSE, "NotReady", "NamespaceBinding");
    assert_cond(&f.r, COND_NETWORK_READY, API_COND_FALSE, "NotReady", "tenant-net");
    fx_free(&f);
}
END_TEST

/* Several bindings in one namespace: no arbitrary pick, nothing can be created, and the message
 * names them so the administrator knows which to delete. */
START_TEST(namespace_bound_twice)
{
    struct fx f;
    fx_init(&f);
    fx_all(&f);
    f.in.binding = NULL;
    f.in.binding_conflict = "\"a\", \"b\"";
    fx_resolve(&f);
    ck_assert_int_eq(f.r.ready, 0);
    assert_cond(&f.r, COND_PLACEMENT_READY, API_COND_FALSE, "MultipleBindings", "\"a\", \"b\"");
    assert_cond(&f.r, COND_PLACEMENT_READY, API_COND_FALSE, "MultipleBindings",
                "delete all but one");
    fx_free(&f);
}
END_TEST

START_TEST(class_problems)
{
    struct fx f;
    fx_init(&f);
    fx_all(&f);
    f.in.cls = NULL;
    fx_resolve(&f);
    ck_assert_int_eq(f.r.ready, 0);
    assert_cond(&f.r, COND_CLASS_READY, API_COND_FALSE, "NotFound", "best-effort-small");
    cJSON_ReplaceItemInObject(spec(&f), "className", cJSON_CreateString("best-effort-8xlarge"));
    fx_resolve(&f);
    assert_cond(&f.r, COND_CLASS_READY, API_COND_FALSE, "Forbidden", "not offered");
    fx_free(&f);
}
END_TEST

START_TEST(image_problems)
{
    struct fx f;
    fx_init(&f);
    fx_all(&f);
    f.in.image = NULL;
    fx_resolve(&f);
    assert_cond(&f.r, COND_IMAGE_READY, API_COND_FALSE, "NotFound", "vmi-abc");
    cJSON_DeleteItemFromObject(spec(&f), "image");
    cJSON_DeleteItemFromObject(spec(&f), "imageName");
    fx_resolve(&f);
    assert_cond(&f.r, COND_IMAGE_READY, API_COND_FALSE, "NotSet", NULL);
    cJSON_AddItemToObject(spec(&f), "image",
                          cJSON_Parse("{\"kind\":\"ContentLibraryItem\",\"name\":\"x\"}"));
    fx_resolve(&f);
    assert_cond(&f.r, COND_IMAGE_READY, API_COND_FALSE, "UnknownKind", "ContentLibraryItem");
    fx_free(&f);
}
END_TEST

START_TEST(image_not_ready)
{
    struct fx f;
    struct vmop_err err = {0};
    fx_init(&f);
    fx_all(&f);
    cJSON *j = cJSON_Parse(image_json);
    cJSON *c =
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "conditions"), 0);
    cJSON_ReplaceItemInObject(c, "status", cJSON_CreateString("False"));
    cJSON_ReplaceItemInObject(c, "reason", cJSON_CreateString("VirtualMachineImageNotSynced"));
    api_image_free(f.image);
    ck_assert_int_eq(api_image_parse(j, &f.image, &err), VMOP_OK);
    cJSON_Delete(j);
    f.in.image = f.image;
    fx_resolve(&f);
    assert_cond(&f.r, COND_IMAGE_READY, API_COND_FALSE, "VirtualMachineImageNotSynced",
                "not ready");
    fx_free(&f);
}
END_TEST

START_TEST(storage_problems)
{
    struct fx f;
    fx_init(&f);
    fx_all(&f);
    f.in.storage_class = NULL;
    fx_resolve(&f);
    assert_cond(&f.r, COND_STORAGE_READY, API_COND_FALSE, "NotFound", "wcp-default");
    cJSON_ReplaceItemInObject(spec(&f), "storageClass", cJSON_CreateString("gold"));
    fx_resolve(&f);
    assert_cond(&f.r, COND_STORAGE_READY, API_COND_FALSE, "Forbidden", "gold");
    cJSON_DeleteItemFromObject(spec(&f), "storageClass");
    fx_resolve(&f);
    assert_cond(&f.r, COND_STORAGE_READY, API_COND_FALSE, "StorageClassRequired", NULL);
    fx_free(&f);
}
END_TEST

START_TEST(bootstrap_problems)
{
    struct fx f;
    fx_init(&f);
    fx_all(&f);
    cJSON_Delete(f.secret);
    f.secret = NULL;
    fx_resolve(&f);
    assert_cond(&f.r, COND_BOOTSTRAP_READY, API_COND_FALSE, "NotFound", "web-0-ci");
    ck_assert_int_eq(f.r.ready, 0);
    /* a Secret without the key nor the fallback keys */
    f.secret = cJSON_Parse("{\"metadata\":{\"name\":\"web-0-ci\"},\"data\":{\"other\":\"eA==\"}}");
    fx_resolve(&f);
    assert_cond(&f.r, COND_BOOTSTRAP_READY, API_COND_FALSE, "RequiredKeyNotFound", "user-data");
    /* fallback key "value" is accepted */
    cJSON_Delete(f.secret);
    f.secret = cJSON_Parse("{\"metadata\":{\"name\":\"web-0-ci\"},"
                           "\"stringData\":{\"value\":\"#cloud-config\\n\"}}");
    fx_resolve(&f);
    assert_cond(&f.r, COND_BOOTSTRAP_READY, API_COND_TRUE, "", NULL);
    ck_assert_str_eq(f.r.desired.userdata, "#cloud-config\n");
    /* base64 of bytes that claim gzip but are not: Invalid, and no data in the message */
    cJSON_Delete(f.secret);
    f.secret = cJSON_Parse("{\"metadata\":{\"name\":\"web-0-ci\"},"
                           "\"stringData\":{\"user-data\":\"H4sIAAAAc2VjcmV0\"}}");
    fx_resolve(&f);
    assert_cond(&f.r, COND_BOOTSTRAP_READY, API_COND_FALSE, "Invalid", "gzip");
    ck_assert_ptr_null(strstr(rs_result_cond(&f.r, COND_BOOTSTRAP_READY)->message, "H4sI"));
    fx_free(&f);
}
END_TEST

START_TEST(typed_cloud_config)
{
    struct fx f;
    fx_init(&f);
    fx_all(&f);
    cJSON *ci = cJSON_GetObjectItem(cJSON_GetObjectItem(spec(&f), "bootstrap"), "cloudInit");
    cJSON_DeleteItemFromObject(ci, "rawCloudConfig");
    cJSON_AddItemToObject(ci, "cloudConfig",
                          cJSON_Parse("{\"defaultUserEnabled\":true,\"users\":[{\"name\":\"ops\","
                                      "\"hashed_passwd\":{\"name\":\"web-0-ci\",\"key\":\"pw\"}}],"
                                      "\"runcmd\":[\"echo {{ not templated }}\"]}"));
    cJSON_Delete(f.secret);
    f.secret =
        cJSON_Parse("{\"metadata\":{\"name\":\"web-0-ci\"},\"stringData\":{\"pw\":\"$6$x\"}}");
    fx_resolve(&f);
    assert_cond(&f.r, COND_BOOTSTRAP_READY, API_COND_TRUE, "", NULL);
    ck_assert_ptr_nonnull(f.r.desired.userdata);
    ck_assert(strncmp(f.r.desired.userdata, "#cloud-config\n", 14) == 0);
    cJSON *doc = cJSON_Parse(f.r.desired.userdata + 14);
    ck_assert_ptr_nonnull(doc);
    cJSON *users = cJSON_GetObjectItem(doc, "users");
    ck_assert_str_eq(cJSON_GetArrayItem(users, 0)->valuestring, "default");
    ck_assert_str_eq(
        cJSON_GetObjectItem(cJSON_GetArrayItem(users, 1), "hashed_passwd")->valuestring, "$6$x");
    ck_assert_ptr_null(cJSON_GetObjectItem(doc, "defaultUserEnabled"));
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "runcmd"), 0)->valuestring,
                     "echo {{ not templated }}");
    cJSON_Delete(doc);
    fx_free(&f);
}
END_TEST

START_TEST(network_problems_and_absence)
{
    struct fx f;
    fx_init(&f);
    fx_all(&f);
    cJSON *ifs = cJSON_GetObjectItem(cJSON_GetObjectItem(spec(&f), "network"), "interfaces");
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(ifs, 0), "network",
                              cJSON_Parse("{\"name\":\"prod-net\"}"));
    fx_resolve(&f);
    assert_cond(&f.r, COND_NETWORK_READY, API_COND_FALSE, "NotReady", "prod-net");
    ck_assert_int_eq(f.r.ready, 0);
    cJSON_DeleteItemFromObject(spec(&f), "network");
    cJSON_DeleteItemFromObject(spec(&f), "bootstrap");
    fx_resolve(&f);
    ck_assert_int_eq(rs_result_cond(&f.r, COND_NETWORK_READY)->present, 0);
    ck_assert_int_eq(rs_result_cond(&f.r, COND_BOOTSTRAP_READY)->present, 0);
    ck_assert_int_eq(f.r.ready, 1);
    ck_assert_str_eq(f.r.desired.hostname, "");
    fx_free(&f);
}
END_TEST

START_TEST(unsupported_bootstrap)
{
    struct fx f;
    fx_init(&f);
    fx_all(&f);
    cJSON_ReplaceItemInObject(spec(&f), "bootstrap",
                              cJSON_Parse("{\"linuxPrep\":{\"hardwareClockIsUTC\":true}}"));
    fx_resolve(&f);
    assert_cond(&f.r, COND_BOOTSTRAP_READY, API_COND_FALSE, "NotSupported", "cloudInit");
    fx_free(&f);
}
END_TEST

START_TEST(every_problem_reported_at_once)
{
    struct fx f;
    fx_init(&f);
    f.in.binding = f.binding;
    cJSON_Delete(f.secret);
    f.secret = NULL;
    fx_resolve(&f);
    ck_assert_int_eq(f.r.ready, 0);
    assert_cond(&f.r, COND_CLASS_READY, API_COND_FALSE, "NotFound", NULL);
    assert_cond(&f.r, COND_IMAGE_READY, API_COND_FALSE, "NotFound", NULL);
    assert_cond(&f.r, COND_STORAGE_READY, API_COND_FALSE, "NotFound", NULL);
    assert_cond(&f.r, COND_BOOTSTRAP_READY, API_COND_FALSE, "NotFound", NULL);
    assert_cond(&f.r, COND_NETWORK_READY, API_COND_TRUE, "", NULL);
    fx_free(&f);
}
END_TEST

START_TEST(references_listed)
{
    struct fx f;
    struct rs_refs refs;
    fx_init(&f);
    fx_resolve(&f);
    rs_references(f.vm, &refs);
    ck_assert_str_eq(refs.class_name, "best-effort-small");
    ck_assert_str_eq(refs.image_kind, "VirtualMachineImage");
    ck_assert_str_eq(refs.image_name, "vmi-abc");
    ck_assert_str_eq(refs.storage_class, "wcp-default");
    ck_assert_uint_eq(refs.n_secrets, 1);
    ck_assert_str_eq(refs.secret_names[0], "web-0-ci");
    fx_free(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("resolve");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, all_prerequisites_met);
    tcase_add_test(tc, namespace_not_bound);
    tcase_add_test(tc, suspended_vm_resolves);
    tcase_add_test(tc, sized_by_observed_mhz);
    tcase_add_test(tc, restart_asked_until_recorded);
    tcase_add_test(tc, pool_addresses_are_inputs);
    tcase_add_test(tc, namespace_bound_twice);
    tcase_add_test(tc, class_problems);
    tcase_add_test(tc, image_problems);
    tcase_add_test(tc, image_not_ready);
    tcase_add_test(tc, storage_problems);
    tcase_add_test(tc, bootstrap_problems);
    tcase_add_test(tc, typed_cloud_config);
    tcase_add_test(tc, network_problems_and_absence);
    tcase_add_test(tc, unsupported_bootstrap);
    tcase_add_test(tc, every_problem_reported_at_once);
    tcase_add_test(tc, references_listed);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
