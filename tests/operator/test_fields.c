/* test_fields.c: unit tests for the fields beyond the prerequisites (issue 11, parts 2-4; owner:
 * fields): resolver output for guestID, minHardwareVersion, bootOptions, the global nameservers
 * and search domains, waitOnNetwork4/6, bootDiskCapacity, changeBlockTracking and the class's
 * configSpec; VirtualMachineFieldsSupported for what vmop does not act on; the class-resize rule
 * (className change vs an edit of the class, same-vm-class-resize); the rule that a VM without a
 * cloud-init bootstrap gets no static or pool address; the plan actions for each field (live vs
 * power-off-only, UpgradeVM_Task, disk growth never shrink, NIC adapter types, a held class) and
 * the status conditions they lead to. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api_cond.h"
#include "check_main.h"
#include "guestinfo.h"
#include "plan.h"
#include "resolve.h"
#include "status.h"

#define BIOS "0b7f5a3e-7a44-4f4a-9d0e-3f2c1a9b8c7d"
#define INST "4c3b2a19-0817-4e6f-8d5c-4b3a29180716"
#define SW   "fea97929-4b2d-5972-b146-930c6d0b4014"
#define PG   "dvportgroup-13"

/* ---- resolver fixture ------------------------------------------------------------------------ */

static const char *vm_json =
    "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachine\","
    "\"metadata\":{\"name\":\"web-0\",\"namespace\":\"tenant-a\",\"uid\":\"u1\",\"generation\":1},"
    "\"spec\":{\"className\":\"small\",\"imageName\":\"ubuntu\","
    "\"image\":{\"kind\":\"VirtualMachineImage\",\"name\":\"vmi-abc\"},"
    "\"storageClass\":\"wcp-default\",\"powerState\":\"PoweredOn\","
    "\"biosUUID\":\"" BIOS "\",\"instanceUUID\":\"" INST "\","
    "\"bootstrap\":{\"cloudInit\":{\"instanceID\":\"" BIOS "\"}},"
    "\"network\":{\"interfaces\":[{\"name\":\"eth0\",\"network\":{\"name\":\"tenant-net\"}},"
    "{\"name\":\"eth1\",\"network\":{\"name\":\"tenant-net\"}}]}}}";

static const char *binding_json =
    "{\"apiVersion\":\"infra.vmop.io/v1alpha1\",\"kind\":\"NamespaceBinding\","
    "\"metadata\":{\"name\":\"vsphere\",\"namespace\":\"tenant-a\"},"
    "\"spec\":{\"endpointRef\":{\"name\":\"vc1\"},\"datacenter\":\"DC0\","
    "\"resourcePool\":\"/DC0/host/DC0_C0/Resources\",\"vmFolder\":\"/DC0/vm\","
    "\"networks\":[{\"name\":\"tenant-net\",\"portGroup\":\"/DC0/network/DC0_DVPG0\"},"
    "{\"name\":\"pool-net\",\"portGroup\":\"/DC0/network/DC0_DVPG0\",\"ipv4Pool\":{"
    "\"ranges\":[{\"start\":\"10.1.0.10\",\"end\":\"10.1.0.20\"}],\"prefix\":24}}],"
    "\"defaultNetwork\":\"tenant-net\",\"storageClasses\":[\"wcp-default\"]}}";

static const char *class_json =
    "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachineClass\","
    "\"metadata\":{\"name\":\"small\",\"namespace\":\"tenant-a\",\"uid\":\"c-uid\","
    "\"generation\":2},"
    "\"spec\":{\"hardware\":{\"cpus\":2,\"memory\":\"4Gi\"},"
    "\"policies\":{\"resources\":{\"limits\":{\"cpu\":\"1\",\"memory\":\"2Gi\"}}}}}";

static const char *image_json =
    "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachineImage\","
    "\"metadata\":{\"name\":\"vmi-abc\",\"namespace\":\"tenant-a\"},"
    "\"status\":{\"name\":\"ubuntu\",\"type\":\"OVF\",\"providerItemID\":\"item-1\","
    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"True\"}]}}";

static const char *sc_json = "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\","
                             "\"metadata\":{\"name\":\"wcp-default\"}}";

struct fx {
    cJSON *vm_j, *cls_j, *sc;
    struct api_vm *vm;
    struct api_binding *binding;
    struct api_class *cls;
    struct api_image *image;
    struct rs_inputs in;
    struct rs_result r;
};

static void fx_init(struct fx *f)
{
    struct vmop_err err = {0};
    cJSON *j;
    memset(f, 0, sizeof(*f));
    f->vm_j = cJSON_Parse(vm_json);
    f->cls_j = cJSON_Parse(class_json);
    ck_assert_ptr_nonnull(f->vm_j);
    ck_assert_ptr_nonnull(f->cls_j);
    j = cJSON_Parse(binding_json);
    ck_assert_int_eq(api_binding_parse(j, &f->binding, &err), VMOP_OK);
    cJSON_Delete(j);
    j = cJSON_Parse(image_json);
    ck_assert_int_eq(api_image_parse(j, &f->image, &err), VMOP_OK);
    cJSON_Delete(j);
    f->sc = cJSON_Parse(sc_json);
}

static void fx_resolve(struct fx *f)
{
    struct vmop_err err = {0};
    api_vm_free(f->vm);
    api_class_free(f->cls);
    f->vm = NULL;
    f->cls = NULL;
    ck_assert_int_eq(api_vm_parse(f->vm_j, &f->vm, &err), VMOP_OK);
    ck_assert_int_eq(api_class_parse(f->cls_j, &f->cls, &err), VMOP_OK);
    f->in.vm = f->vm;
    f->in.binding = f->binding;
    f->in.cls = f->cls;
    f->in.image = f->image;
    f->in.storage_class = f->sc;
    f->in.min_host_mhz = 2000;
    rs_result_free(&f->r);
    ck_assert_int_eq(rs_resolve(&f->in, &f->r, &err), VMOP_OK);
}

static void fx_free(struct fx *f)
{
    rs_result_free(&f->r);
    api_vm_free(f->vm);
    api_binding_free(f->binding);
    api_class_free(f->cls);
    api_image_free(f->image);
    cJSON_Delete(f->sc);
    cJSON_Delete(f->vm_j);
    cJSON_Delete(f->cls_j);
}

static cJSON *spec_of(cJSON *obj)
{
    return cJSON_GetObjectItem(obj, "spec");
}

/* Sets obj.spec[key] = the JSON text. */
static void set_spec(cJSON *obj, const char *key, const char *json)
{
    cJSON *v = cJSON_Parse(json);
    ck_assert_msg(v != NULL, "bad JSON %s", json);
    cJSON_DeleteItemFromObject(spec_of(obj), key);
    cJSON_AddItemToObject(spec_of(obj), key, v);
}

static void set_annotations(cJSON *obj, const char *json)
{
    cJSON *md = cJSON_GetObjectItem(obj, "metadata");
    cJSON_DeleteItemFromObject(md, "annotations");
    cJSON_AddItemToObject(md, "annotations", cJSON_Parse(json));
}

static const struct rs_cond *fields_cond(const struct fx *f)
{
    const struct rs_cond *c = rs_result_cond(&f->r, COND_FIELDS_SUPPORTED);
    ck_assert_ptr_nonnull(c);
    ck_assert(c->present);
    return c;
}

static void assert_fields(const struct fx *f, enum api_cond_status st, const char *reason)
{
    const struct rs_cond *c = fields_cond(f);
    ck_assert_msg(c->status == st, "status %d, want %d: %s", c->status, st, c->message);
    ck_assert_str_eq(c->reason, reason);
}

static void assert_names(const struct fx *f, const char *part)
{
    const struct rs_cond *c = fields_cond(f);
    ck_assert_msg(strstr(c->message, part) != NULL, "message '%s' lacks '%s'", c->message, part);
}

/* ---- resolver: VirtualMachineFieldsSupported ------------------------------------------------ */

START_TEST(fields_all_acted_on)
{
    struct fx f;
    fx_init(&f);
    fx_resolve(&f);
    ck_assert_int_eq(f.r.ready, 1);
    assert_fields(&f, API_COND_TRUE, "");
    ck_assert_int_eq(f.r.desired.class_held, 0);
    /* class limits -> allocation limits */
    ck_assert_int_eq(f.r.desired.size.cpu_limit_mhz, 2000);
    ck_assert_int_eq(f.r.desired.size.mem_limit_mb, 2048);
    fx_free(&f);
}
END_TEST

START_TEST(unsupported_fields_are_named_and_do_not_block)
{
    struct fx f;
    fx_init(&f);
    set_spec(f.vm_j, "volumes",
             "[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":"
             "\"pvc-1\"}}]");
    set_spec(f.vm_j, "reserved", "{\"resourcePolicyName\":\"pol\"}");
    set_spec(f.vm_j, "crypto", "{\"encryptionClassName\":\"ec\"}");
    set_spec(f.vm_j, "affinity", "{\"vmAffinity\":{}}");
    set_spec(f.vm_j, "groupName", "\"g\"");
    set_spec(f.vm_j, "promoteDisksMode", "\"Disabled\"");
    fx_resolve(&f);
    ck_assert_int_eq(f.r.ready, 1); /* the VM is still created */
    assert_fields(&f, API_COND_FALSE, RS_REASON_NOT_SUPPORTED);
    assert_names(&f, "spec.volumes");
    assert_names(&f, "spec.reserved.resourcePolicyName");
    assert_names(&f, "spec.crypto");
    assert_names(&f, "spec.affinity");
    assert_names(&f, "spec.groupName");
    assert_names(&f, "spec.promoteDisksMode");
    fx_free(&f);
}
END_TEST

/* v1alpha6's additions: stored (v1alpha6 is the storage version), not acted on, so named */
START_TEST(v1alpha6_fields_are_named)
{
    struct fx f;
    fx_init(&f);
    set_spec(f.vm_j, "volumeAttributesClassName", "\"fast\"");
    set_spec(f.vm_j, "cpuAdvanced", "{\"x\":1}");
    set_spec(f.vm_j, "network",
             "{\"vlans\":[{}],\"interfaces\":[{\"name\":\"eth0\",\"type\":\"E1000\"}]}");
    fx_resolve(&f);
    assert_fields(&f, API_COND_FALSE, RS_REASON_NOT_SUPPORTED);
    assert_names(&f, "spec.volumeAttributesClassName (v1alpha6)");
    assert_names(&f, "spec.cpuAdvanced (v1alpha6)");
    assert_names(&f, "spec.network.vlans (v1alpha6)");
    assert_names(&f, "spec.network.interfaces[].type (v1alpha6)");
    fx_free(&f);
}
END_TEST

/* v1alpha1's vmMetadata.configMapName: refused in a condition, never silently skipped */
START_TEST(v1alpha1_configmap_metadata_is_refused)
{
    struct fx f;
    const struct rs_cond *c = NULL;
    fx_init(&f);
    set_spec(f.vm_j, "bootstrap", "{\"cloudInit\":{\"rawCloudConfig\":{\"name\":\"md\"}}}");
    cJSON_AddItemToObject(cJSON_GetObjectItem(f.vm_j, "metadata"), "annotations",
                          cJSON_Parse("{\"" RS_V1A1_CONFIGMAP_ANNOTATION "\":\"\"}"));
    fx_resolve(&f);
    ck_assert_int_eq(f.r.ready, 0);
    for (size_t i = 0; i < f.r.n_conds; i++)
        if (!strcmp(f.r.conds[i].type, COND_BOOTSTRAP_READY))
            c = &f.r.conds[i];
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(c->status, API_COND_FALSE);
    ck_assert_str_eq(c->reason, RS_REASON_NOT_SUPPORTED);
    ck_assert_ptr_nonnull(strstr(c->message, "vmMetadata.configMapName"));
    fx_free(&f);
}
END_TEST

START_TEST(class_devices_are_named)
{
    struct fx f;
    cJSON *hw;
    fx_init(&f);
    hw = cJSON_GetObjectItem(spec_of(f.cls_j), "hardware");
    cJSON_AddItemToObject(hw, "devices",
                          cJSON_Parse("{\"vgpuDevices\":[{\"profileName\":\"grid\"}],"
                                      "\"dynamicDirectPathIODevices\":[{\"vendorID\":1,"
                                      "\"deviceID\":2}]}"));
    cJSON_AddItemToObject(hw, "instanceStorage",
                          cJSON_Parse("{\"storageClass\":\"x\",\"volumes\":[{\"size\":\"1Gi\"}]}"));
    fx_resolve(&f);
    ck_assert_int_eq(f.r.ready, 1);
    assert_fields(&f, API_COND_FALSE, RS_REASON_NOT_SUPPORTED);
    assert_names(&f, "class small: spec.hardware.devices.vgpuDevices");
    assert_names(&f, "dynamicDirectPathIODevices");
    assert_names(&f, "spec.hardware.instanceStorage");
    fx_free(&f);
}
END_TEST

/* ---- resolver: the VM's fields into desired -------------------------------------------------- */

START_TEST(vm_fields_into_desired)
{
    struct fx f;
    const struct rs_desired *d;
    fx_init(&f);
    set_spec(f.vm_j, "guestID", "\"ubuntu64Guest\"");
    set_spec(f.vm_j, "minHardwareVersion", "19");
    set_spec(f.vm_j, "advanced", "{\"changeBlockTracking\":true,\"bootDiskCapacity\":\"20Gi\"}");
    set_spec(f.vm_j, "bootOptions",
             "{\"firmware\":\"efi\",\"bootDelay\":\"2s\",\"bootRetry\":\"Enabled\","
             "\"bootRetryDelay\":\"1m30s\",\"efiSecureBoot\":\"Enabled\","
             "\"networkBootProtocol\":\"IP6\",\"bootOrder\":[{\"type\":\"Network\",\"name\":"
             "\"eth1\"},{\"type\":\"Disk\"},{\"type\":\"CDRom\"}]}");
    fx_resolve(&f);
    d = &f.r.desired;
    assert_fields(&f, API_COND_TRUE, "");
    ck_assert_str_eq(d->guest_id, "ubuntu64Guest");
    ck_assert_int_eq(d->hw_version, 19);
    ck_assert_int_eq(d->cbt, RS_YES);
    ck_assert_int_eq(d->boot_disk_mb, 20480);
    ck_assert_str_eq(d->firmware, "efi");
    ck_assert(d->boot.set);
    ck_assert_int_eq(d->boot.delay_ms, 2000);
    ck_assert_int_eq(d->boot.retry, RS_YES);
    ck_assert_int_eq(d->boot.retry_delay_ms, 90000);
    ck_assert_int_eq(d->boot.efi_secure_boot, RS_YES);
    ck_assert_str_eq(d->boot.network_protocol, "ipv6");
    ck_assert(d->boot.has_order);
    ck_assert_uint_eq(d->boot.n_order, 3);
    ck_assert_int_eq(d->boot.order[0].kind, RS_BOOT_NETWORK);
    ck_assert_uint_eq(d->boot.order[0].nic, 1);
    ck_assert_int_eq(d->boot.order[1].kind, RS_BOOT_DISK);
    ck_assert_int_eq(d->boot.order[2].kind, RS_BOOT_CDROM);
    ck_assert_uint_eq(d->from_class, 0);
    fx_free(&f);
}
END_TEST

START_TEST(boot_order_and_durations_that_cannot_map)
{
    struct fx f;
    fx_init(&f);
    set_spec(f.vm_j, "bootOptions",
             "{\"bootDelay\":\"soon\",\"bootOrder\":[{\"type\":\"Network\",\"name\":\"eth9\"},"
             "{\"type\":\"Disk\",\"name\":\"data\"}]}");
    fx_resolve(&f);
    assert_fields(&f, API_COND_FALSE, RS_REASON_NOT_SUPPORTED);
    assert_names(&f, "spec.bootOptions.bootDelay");
    assert_names(&f, "bootOrder[0] (no interface eth9)");
    assert_names(&f, "bootOrder[1]");
    ck_assert_uint_eq(f.r.desired.boot.n_order, 0);
    ck_assert_int_eq(f.r.desired.boot.delay_ms, -1);
    fx_free(&f);
}
END_TEST

/* ---- resolver: the class's configSpec ------------------------------------------------------- */

START_TEST(class_config_spec_merged)
{
    struct fx f;
    const struct rs_desired *d;
    fx_init(&f);
    cJSON_AddItemToObject(
        spec_of(f.cls_j), "configSpec",
        cJSON_Parse("{\"_typeName\":\"VirtualMachineConfigSpec\",\"numCPUs\":8,\"memoryMB\":512,"
                    "\"version\":\"vmx-17\",\"guestId\":\"centos8_64Guest\",\"firmware\":\"efi\","
                    "\"changeTrackingEnabled\":false,\"cpuHotAddEnabled\":true,"
                    "\"extraConfig\":[{\"_typeName\":\"OptionValue\",\"key\":\"a.b\",\"value\":{"
                    "\"_typeName\":\"string\",\"_value\":\"on\"}},{\"key\":\"c\",\"value\":\"d\"},"
                    "{\"key\":\"guestinfo.x\",\"value\":\"y\"}],"
                    "\"deviceChange\":[{\"operation\":\"add\",\"device\":{\"_typeName\":"
                    "\"VirtualE1000e\",\"key\":-1}},{\"operation\":\"add\",\"device\":{"
                    "\"_typeName\":\"VirtualPCIPassthrough\"}},{\"operation\":\"add\",\"device\":{"
                    "\"_typeName\":\"VirtualDisk\"}}]}"));
    set_spec(f.vm_j, "guestID", "\"ubuntu64Guest\""); /* the VM's own wins */
    set_spec(f.vm_j, "minHardwareVersion", "15");
    fx_resolve(&f);
    d = &f.r.desired;
    /* spec.hardware wins over the configSpec's numCPUs / memoryMB */
    ck_assert_int_eq(d->size.num_cpus, 2);
    ck_assert_int_eq(d->size.memory_mb, 4096);
    ck_assert_str_eq(d->guest_id, "ubuntu64Guest");
    ck_assert_int_eq(d->hw_version, 15);
    ck_assert_int_eq(d->class_hw_version, 17);
    ck_assert_str_eq(d->firmware, "efi");
    ck_assert_int_eq(d->cbt, RS_NO);
    ck_assert_uint_eq(d->from_class, RS_FROM_CLASS_FIRMWARE | RS_FROM_CLASS_CBT);
    ck_assert_uint_eq(d->n_extra, 2);
    ck_assert_str_eq(d->extra[0].key, "a.b");
    ck_assert_str_eq(d->extra[0].value, "on");
    ck_assert_str_eq(d->extra[1].key, "c");
    ck_assert_str_eq(d->nics[0].device_type, "VirtualE1000e");
    ck_assert_ptr_null(d->nics[1].device_type);
    assert_fields(&f, API_COND_FALSE, RS_REASON_NOT_SUPPORTED);
    assert_names(&f, "configSpec.cpuHotAddEnabled");
    assert_names(&f, "guestinfo.x (reserved for vmop)");
    assert_names(&f, "VirtualPCIPassthrough");
    assert_names(&f, "deviceChange[2] VirtualDisk");
    fx_free(&f);
}
END_TEST

START_TEST(class_config_spec_sizes_a_class_without_hardware)
{
    struct fx f;
    fx_init(&f);
    cJSON_DeleteItemFromObject(spec_of(f.cls_j), "hardware");
    cJSON_DeleteItemFromObject(spec_of(f.cls_j), "policies");
    cJSON_AddItemToObject(spec_of(f.cls_j), "configSpec",
                          cJSON_Parse("{\"numCPUs\":4,\"memoryMB\":2048,\"cpuAllocation\":{"
                                      "\"reservation\":300,\"limit\":900},\"memoryAllocation\":{"
                                      "\"limit\":1536}}"));
    fx_resolve(&f);
    for (size_t i = 0; i < f.r.n_conds && !f.r.ready; i++)
        ck_assert_msg(f.r.conds[i].status != API_COND_FALSE, "%s: %s", f.r.conds[i].type,
                      f.r.conds[i].message);
    ck_assert_int_eq(f.r.ready, 1);
    ck_assert_int_eq(f.r.desired.size.num_cpus, 4);
    ck_assert_int_eq(f.r.desired.size.memory_mb, 2048);
    ck_assert_int_eq(f.r.desired.size.cpu_reservation_mhz, 300);
    ck_assert_int_eq(f.r.desired.size.cpu_limit_mhz, 900);
    ck_assert_int_eq(f.r.desired.size.mem_reservation_mb, 0);
    ck_assert_int_eq(f.r.desired.size.mem_limit_mb, 1536);
    fx_free(&f);
}
END_TEST

/* ---- resolver + metadata: global DNS, wait-on-network ---------------------------------------- */

static cJSON *metadata_of(const struct rs_desired *d)
{
    struct vmop_err err = {0};
    char *json = NULL;
    cJSON *doc;
    ck_assert_int_eq(pl_metadata_json(d, NULL, &json, &err), VMOP_OK);
    doc = cJSON_Parse(json);
    free(json);
    ck_assert_ptr_nonnull(doc);
    return doc;
}

static const cJSON *ns_of(const cJSON *doc, const char *iface, const char *what)
{
    return cJSON_GetObjectItem(
        cJSON_GetObjectItem(
            cJSON_GetObjectItem(
                cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "network"), "ethernets"), iface),
            "nameservers"),
        what);
}

START_TEST(global_nameservers_and_wait_on_network)
{
    struct fx f;
    cJSON *doc, *net, *ifs;
    fx_init(&f);
    net = cJSON_GetObjectItem(spec_of(f.vm_j), "network");
    cJSON_AddItemToObject(net, "nameservers", cJSON_Parse("[\"10.0.0.53\"]"));
    cJSON_AddItemToObject(net, "searchDomains", cJSON_Parse("[\"corp.example\"]"));
    ifs = cJSON_GetObjectItem(net, "interfaces");
    cJSON_AddItemToObject(cJSON_GetArrayItem(ifs, 1), "nameservers", cJSON_Parse("[\"9.9.9.9\"]"));
    cJSON_AddBoolToObject(
        cJSON_GetObjectItem(cJSON_GetObjectItem(spec_of(f.vm_j), "bootstrap"), "cloudInit"),
        "waitOnNetwork4", 1);
    fx_resolve(&f);
    doc = metadata_of(&f.r.desired);
    /* eth0 has none of its own: the global ones; eth1's own nameservers win, search is global */
    ck_assert_str_eq(cJSON_GetArrayItem(ns_of(doc, "eth0", "addresses"), 0)->valuestring,
                     "10.0.0.53");
    ck_assert_str_eq(cJSON_GetArrayItem(ns_of(doc, "eth0", "search"), 0)->valuestring,
                     "corp.example");
    ck_assert_int_eq(cJSON_GetArraySize(ns_of(doc, "eth1", "addresses")), 1);
    ck_assert_str_eq(cJSON_GetArrayItem(ns_of(doc, "eth1", "addresses"), 0)->valuestring,
                     "9.9.9.9");
    ck_assert_str_eq(cJSON_GetArrayItem(ns_of(doc, "eth1", "search"), 0)->valuestring,
                     "corp.example");
    ck_assert(
        cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "wait-on-network"), "ipv4")));
    ck_assert(
        cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "wait-on-network"), "ipv6")));
    cJSON_Delete(doc);

    /* useGlobalNameserversAsDefault: false -> not used; no waitOnNetwork -> no key */
    {
        cJSON *ci =
            cJSON_GetObjectItem(cJSON_GetObjectItem(spec_of(f.vm_j), "bootstrap"), "cloudInit");
        cJSON_DeleteItemFromObject(ci, "waitOnNetwork4");
        cJSON_AddBoolToObject(ci, "useGlobalNameserversAsDefault", 0);
    }
    fx_resolve(&f);
    doc = metadata_of(&f.r.desired);
    ck_assert_ptr_null(ns_of(doc, "eth0", "addresses"));
    ck_assert_ptr_nonnull(ns_of(doc, "eth0", "search"));
    ck_assert_ptr_null(cJSON_GetObjectItem(doc, "wait-on-network"));
    cJSON_Delete(doc);
    assert_fields(&f, API_COND_TRUE, "");
    fx_free(&f);
}
END_TEST

/* ---- resolver: the class-resize rule ----------------------------------------------------------
 */

START_TEST(class_resize_rule)
{
    static const struct {
        const char *annotations;
        int held;
    } cases[] = {
        /* no record yet: the class as it is */
        {"{}", 0},
        /* sized from this generation: in sync */
        {"{\"" RS_ANNOT_LAST_RESIZED "\":\"{\\\"name\\\":\\\"small\\\",\\\"uid\\\":\\\"c-uid\\\","
         "\\\"generation\\\":2}\"}",
         0},
        /* the class was edited: held */
        {"{\"" RS_ANNOT_LAST_RESIZED "\":\"{\\\"name\\\":\\\"small\\\",\\\"uid\\\":\\\"c-uid\\\","
         "\\\"generation\\\":1}\"}",
         1},
        /* deleted and made again under the same name: held */
        {"{\"" RS_ANNOT_LAST_RESIZED "\":\"{\\\"name\\\":\\\"small\\\",\\\"uid\\\":\\\"old\\\","
         "\\\"generation\\\":2}\"}",
         1},
        /* edited, but the VM asks for same-class resizes */
        {"{\"" RS_ANNOT_LAST_RESIZED "\":\"{\\\"name\\\":\\\"small\\\",\\\"uid\\\":\\\"c-uid\\\","
         "\\\"generation\\\":1}\",\"" RS_ANNOT_SAME_CLASS_RESIZE "\":\"\"}",
         0},
        /* sized from another class: a className change, which resizes */
        {"{\"" RS_ANNOT_LAST_RESIZED "\":\"{\\\"name\\\":\\\"large\\\",\\\"uid\\\":\\\"x\\\","
         "\\\"generation\\\":7}\"}",
         0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fx f;
        fx_init(&f);
        set_annotations(f.vm_j, cases[i].annotations);
        fx_resolve(&f);
        ck_assert_msg(f.r.desired.class_held == cases[i].held, "case %zu: held %d", i,
                      f.r.desired.class_held);
        if (cases[i].held) {
            ck_assert_ptr_nonnull(strstr(f.r.class_held_msg, RS_ANNOT_SAME_CLASS_RESIZE));
            ck_assert_ptr_nonnull(strstr(f.r.class_held_msg, "generation 2"));
        }
        /* the desired sizing is the class as it is now either way (used for a new VM) */
        ck_assert_int_eq(f.r.desired.size.num_cpus, 2);
        fx_free(&f);
    }
}
END_TEST

/* ---- resolver: no cloud-init, no guest network settings ---------------------------------------
 */

START_TEST(no_bootstrap_static_and_pool_addresses)
{
    struct fx f;
    cJSON *ifs;
    fx_init(&f);
    cJSON_DeleteItemFromObject(spec_of(f.vm_j), "bootstrap");
    ifs = cJSON_GetObjectItem(cJSON_GetObjectItem(spec_of(f.vm_j), "network"), "interfaces");
    cJSON_AddItemToObject(cJSON_GetArrayItem(ifs, 0), "addresses",
                          cJSON_Parse("[\"192.0.2.5/24\"]"));
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(ifs, 1), "network",
                              cJSON_Parse("{\"name\":\"pool-net\"}"));
    fx_resolve(&f);
    ck_assert_int_eq(f.r.ready, 1);
    ck_assert_int_eq(f.r.desired.cloud_init, 0);
    assert_fields(&f, API_COND_FALSE, RS_REASON_CLOUDINIT_REQUIRED);
    assert_names(&f, "spec.network.interfaces[eth0].addresses");
    assert_names(&f, "interface eth1: network pool-net has a static IPv4 pool; no address");

    /* with an unsupported field too: NotSupported, and the message has both */
    set_spec(f.vm_j, "crypto", "{}");
    fx_resolve(&f);
    assert_fields(&f, API_COND_FALSE, RS_REASON_NOT_SUPPORTED);
    assert_names(&f, "spec.crypto");
    assert_names(&f, "without a cloud-init bootstrap: spec.network.interfaces[eth0].addresses");

    /* dhcp4 on the pool network and no address: nothing to say */
    set_spec(f.vm_j, "crypto", "null");
    cJSON_DeleteItemFromObject(spec_of(f.vm_j), "crypto");
    cJSON_DeleteItemFromObject(cJSON_GetArrayItem(ifs, 0), "addresses");
    cJSON_AddBoolToObject(cJSON_GetArrayItem(ifs, 1), "dhcp4", 1);
    fx_resolve(&f);
    assert_fields(&f, API_COND_TRUE, "");
    fx_free(&f);
}
END_TEST

/* ---- plan ------------------------------------------------------------------------------------ */

struct pfx {
    struct api_vm_nic spec[2];
    struct rs_desired d;
    struct pl_backing bk[2];
    struct pl_obs o;
    const char *extra_v; /* what the VM shows for key "a.b" */
};

static struct pfx P;

static const char *extra_get(const void *ud, const char *key)
{
    const struct pfx *p = ud;
    return !strcmp(key, "a.b") ? p->extra_v : NULL;
}

/* A VM (no cloud-init, to keep the plans short) that matches its desired state. */
static void psetup(void)
{
    memset(&P, 0, sizeof(P));
    P.spec[0].name = "eth0";
    P.spec[1].name = "eth1";
    P.d.resource_pool = "/DC0/host/DC0_C0/Resources";
    P.d.folder = "/DC0/vm";
    P.d.library_item_id = "item-1";
    P.d.size.num_cpus = 2;
    P.d.size.memory_mb = 1024;
    P.d.size.cpu_limit_mhz = -1;
    P.d.size.mem_limit_mb = -1;
    P.d.bios_uuid = BIOS;
    P.d.instance_uuid = INST;
    strcpy(P.d.namespaced_name, "ns/vm1");
    for (int i = 0; i < 2; i++) {
        P.d.nics[i].name = P.spec[i].name;
        P.d.nics[i].spec = &P.spec[i];
        P.bk[i].switch_uuid = SW;
        P.bk[i].portgroup_key = PG;
    }
    P.d.n_nics = 1;
    P.d.power = API_POWER_ON;
    P.o.present = 1;
    P.o.power = PL_STATE_ON;
    P.o.bios_uuid = BIOS;
    P.o.instance_uuid = INST;
    P.o.managed_by_ext = PL_MANAGED_BY_EXT;
    P.o.managed_by_type = PL_MANAGED_BY_TYPE;
    P.o.namespaced_name = "ns/vm1";
    P.o.num_cpus = 2;
    P.o.memory_mb = 1024;
    P.o.cpu_reservation = P.o.mem_reservation = 0;
    P.o.cpu_limit = P.o.mem_limit = -1;
    for (int i = 0; i < 2; i++) {
        P.o.nics[i].key = 4000 + i;
        P.o.nics[i].device_type = "VirtualVmxnet3";
        P.o.nics[i].switch_uuid = SW;
        P.o.nics[i].portgroup_key = PG;
    }
    P.o.n_nics = 1;
    P.o.hw_version = 13;
    P.o.cbt = -1;
    P.o.boot.delay_ms = P.o.boot.retry_delay_ms = -1;
    P.o.boot.retry = P.o.boot.efi_secure_boot = -1;
    P.o.disk_key = 2000;
    P.o.disk_kb = 1024 * 1024;
    P.o.extra_get = extra_get;
    P.o.extra_ud = &P;
    P.d.boot.delay_ms = P.d.boot.retry_delay_ms = -1;
}

static void pteardown(void)
{
}

static void plan(struct pl_plan *p, int created)
{
    struct vmop_err err = {0};
    struct pl_input in = {&P.d, P.bk, &P.o, created};
    ck_assert_int_eq(pl_plan(&in, p, &err), VMOP_OK);
}

static void expect(const struct pl_plan *p, size_t n, const enum pl_kind *kinds)
{
    ck_assert_msg(p->n == n, "%zu actions, want %zu", p->n, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(p->actions[i].kind == kinds[i], "action %zu is %s, want %s", i,
                      pl_kind_str(p->actions[i].kind), pl_kind_str(kinds[i]));
}

START_TEST(plan_in_sync_with_every_field)
{
    struct pl_plan p;
    P.d.guest_id = "ubuntu64Guest";
    P.o.guest_id = "ubuntu64Guest";
    P.d.firmware = "efi";
    P.o.firmware = "efi";
    P.d.cbt = RS_NO;
    P.o.cbt = -1; /* unset reads as off */
    P.d.boot.set = 1;
    P.d.boot.delay_ms = 0;
    P.d.boot.retry = RS_NO;
    P.d.boot.network_protocol = "ipv4";
    P.o.boot.network_protocol = "ipv4";
    P.d.boot.has_order = 1;
    P.d.boot.order[0].kind = RS_BOOT_NETWORK;
    P.d.boot.order[0].nic = 0;
    P.d.boot.order[1].kind = RS_BOOT_DISK;
    P.d.boot.n_order = 2;
    P.o.boot.order[0] = (struct pl_boot_entry){RS_BOOT_NETWORK, 4000};
    P.o.boot.order[1] = (struct pl_boot_entry){RS_BOOT_DISK, 2000};
    P.o.boot.n_order = 2;
    P.d.extra[0].key = "a.b";
    P.d.extra[0].value = "on";
    P.d.n_extra = 1;
    P.extra_v = "on";
    P.d.boot_disk_mb = 1024;
    P.d.hw_version = 13;
    plan(&p, 0);
    expect(&p, 0, NULL);
    ck_assert_int_eq(p.disk_not_shrunk, 0);
    pl_plan_free(&p);
}
END_TEST

START_TEST(plan_live_and_offline_fields)
{
    struct pl_plan p;
    P.d.guest_id = "ubuntu64Guest";
    P.o.guest_id = "otherGuest";
    P.d.firmware = "efi";
    P.o.firmware = "bios";
    P.d.boot.set = 1;
    P.d.boot.delay_ms = 3000;
    P.d.cbt = RS_YES;
    P.d.extra[0].key = "a.b";
    P.d.extra[0].value = "on";
    P.d.n_extra = 1;
    P.d.boot_disk_mb = 2048;
    /* running: CBT, extraConfig and the disk now; guestId, firmware, bootOptions wait */
    plan(&p, 0);
    expect(&p, 1, (enum pl_kind[]){PL_RECONFIGURE});
    ck_assert_uint_eq(p.actions[0].fields, PL_F_CBT | PL_F_EXTRA_CONFIG | PL_F_BOOT_DISK);
    ck_assert_uint_eq(p.deferred_fields, PL_F_GUEST_ID | PL_F_FIRMWARE | PL_F_BOOT_OPTIONS);
    ck_assert_int_eq(p.needs_power_cycle, 0); /* the class's CPU/memory are fine */
    pl_plan_free(&p);
    /* off (and to stay on: the off->on path): everything before the power-on */
    P.o.power = PL_STATE_OFF;
    plan(&p, 0);
    expect(&p, 2, (enum pl_kind[]){PL_RECONFIGURE, PL_POWER_ON});
    ck_assert_uint_eq(p.actions[0].fields, PL_F_CBT | PL_F_EXTRA_CONFIG | PL_F_BOOT_DISK |
                                               PL_F_GUEST_ID | PL_F_FIRMWARE | PL_F_BOOT_OPTIONS);
    ck_assert_uint_eq(p.deferred_fields, 0);
    pl_plan_free(&p);
}
END_TEST

START_TEST(plan_hardware_upgrade)
{
    struct pl_plan p;
    P.d.hw_version = 15;
    P.d.class_hw_version = 19;
    /* running, to stay on: waits */
    plan(&p, 0);
    expect(&p, 0, NULL);
    ck_assert_uint_eq(p.deferred_fields, PL_F_HW_VERSION);
    pl_plan_free(&p);
    /* to be powered off: off, then the upgrade to the higher of spec and class */
    P.d.power = API_POWER_OFF;
    plan(&p, 0);
    expect(&p, 2, (enum pl_kind[]){PL_POWER_OFF, PL_UPGRADE});
    ck_assert_int_eq(p.actions[1].hw_version, 19);
    pl_plan_free(&p);
    /* off, to be on: upgrade, then power on */
    P.d.power = API_POWER_ON;
    P.o.power = PL_STATE_OFF;
    plan(&p, 0);
    expect(&p, 2, (enum pl_kind[]){PL_UPGRADE, PL_POWER_ON});
    pl_plan_free(&p);
    /* already newer: nothing */
    P.o.hw_version = 20;
    plan(&p, 0);
    expect(&p, 1, (enum pl_kind[]){PL_POWER_ON});
    pl_plan_free(&p);
    /* a new VM: the upgrade is planned right after the clone, before the first reconfigure */
    P.o.present = 0;
    plan(&p, 0);
    expect(&p, 5,
           (enum pl_kind[]){PL_CREATE, PL_REOBSERVE, PL_UPGRADE, PL_RECONFIGURE, PL_POWER_ON});
    pl_plan_free(&p);
}
END_TEST

START_TEST(plan_boot_disk_never_shrinks)
{
    struct pl_plan p;
    P.d.boot_disk_mb = 512; /* the disk has 1 GiB */
    plan(&p, 0);
    expect(&p, 0, NULL);
    ck_assert_int_eq(p.disk_not_shrunk, 1);
    ck_assert_int_eq(p.disk_kb, 1024 * 1024);
    pl_plan_free(&p);
}
END_TEST

START_TEST(plan_nic_adapter_type_from_class)
{
    struct pl_plan p;
    P.d.n_nics = 2;
    P.o.n_nics = 2;
    P.d.nics[0].device_type = "VirtualE1000e";
    /* NIC 0 has the wrong type: both are removed and added again in order */
    plan(&p, 0);
    expect(&p, 1, (enum pl_kind[]){PL_RECONFIGURE});
    ck_assert_uint_eq(p.actions[0].n_nic_ops, 4);
    ck_assert_int_eq(p.actions[0].nic_ops[0].op, PL_NIC_REMOVE);
    ck_assert_int_eq(p.actions[0].nic_ops[1].op, PL_NIC_REMOVE);
    ck_assert_int_eq(p.actions[0].nic_ops[2].op, PL_NIC_ADD);
    ck_assert_uint_eq(p.actions[0].nic_ops[2].desired, 0);
    ck_assert_int_eq(p.actions[0].nic_ops[3].op, PL_NIC_ADD);
    ck_assert_uint_eq(p.actions[0].nic_ops[3].desired, 1);
    pl_plan_free(&p);
    /* with a boot order naming a NIC: written after the re-added NICs have their keys */
    P.d.boot.set = 1;
    P.d.boot.has_order = 1;
    P.d.boot.order[0].kind = RS_BOOT_NETWORK;
    P.d.boot.order[0].nic = 0;
    P.d.boot.n_order = 1;
    P.o.power = PL_STATE_OFF;
    plan(&p, 0);
    expect(&p, 4, (enum pl_kind[]){PL_RECONFIGURE, PL_REOBSERVE, PL_RECONFIGURE, PL_POWER_ON});
    ck_assert_uint_eq(p.actions[0].fields, PL_F_NICS);
    ck_assert_uint_eq(p.actions[2].fields, PL_F_BOOT_OPTIONS);
    pl_plan_free(&p);
    P.d.boot.set = 0;
    P.o.power = PL_STATE_ON;
    /* the right type: nothing */
    P.o.nics[0].device_type = "VirtualE1000e";
    plan(&p, 0);
    expect(&p, 0, NULL);
    pl_plan_free(&p);
}
END_TEST

START_TEST(plan_held_class)
{
    struct pl_plan p;
    P.d.class_held = 1;
    P.d.size.num_cpus = 4; /* the edited class */
    P.d.size.cpu_limit_mhz = 900;
    P.d.firmware = "efi"; /* from the class */
    P.d.from_class = RS_FROM_CLASS_FIRMWARE;
    P.d.guest_id = "ubuntu64Guest"; /* the VM's own */
    P.o.guest_id = "ubuntu64Guest";
    P.d.class_hw_version = 19;
    P.d.extra[0].key = "a.b";
    P.d.extra[0].value = "on";
    P.d.n_extra = 1;
    P.d.nics[0].device_type = "VirtualE1000e";
    P.o.power = PL_STATE_OFF;
    P.d.power = API_POWER_OFF;
    plan(&p, 0);
    expect(&p, 0, NULL); /* nothing from the class */
    ck_assert_int_eq(p.needs_power_cycle, 0);
    pl_plan_free(&p);
    /* the VM's own fields are still enforced */
    P.o.guest_id = "otherGuest";
    plan(&p, 0);
    expect(&p, 1, (enum pl_kind[]){PL_RECONFIGURE});
    ck_assert_uint_eq(p.actions[0].fields, PL_F_GUEST_ID);
    pl_plan_free(&p);
    /* a VM just made again (created): the class as it is now, in full */
    P.o.guest_id = "ubuntu64Guest";
    plan(&p, 1);
    expect(&p, 2, (enum pl_kind[]){PL_UPGRADE, PL_RECONFIGURE});
    ck_assert_uint_eq(p.actions[1].fields, PL_F_NUM_CPUS | PL_F_CPU_LIMIT | PL_F_FIRMWARE |
                                               PL_F_EXTRA_CONFIG | PL_F_NICS);
    pl_plan_free(&p);
}
END_TEST

START_TEST(plan_boot_order_waits_for_a_new_nic)
{
    struct pl_plan p;
    P.d.n_nics = 2; /* eth1 is new */
    P.d.boot.set = 1;
    P.d.boot.has_order = 1;
    P.d.boot.order[0].kind = RS_BOOT_NETWORK;
    P.d.boot.order[0].nic = 1;
    P.d.boot.n_order = 1;
    P.o.power = PL_STATE_OFF;
    plan(&p, 0);
    expect(&p, 4, (enum pl_kind[]){PL_RECONFIGURE, PL_REOBSERVE, PL_RECONFIGURE, PL_POWER_ON});
    ck_assert_uint_eq(p.actions[0].fields, PL_F_NICS);
    ck_assert_uint_eq(p.actions[2].fields, PL_F_BOOT_OPTIONS);
    ck_assert(p.actions[2].deferred);
    pl_plan_free(&p);
    /* once it exists: in one reconfigure, with its device key */
    P.o.n_nics = 2;
    plan(&p, 0);
    expect(&p, 2, (enum pl_kind[]){PL_RECONFIGURE, PL_POWER_ON});
    ck_assert_uint_eq(p.actions[0].fields, PL_F_BOOT_OPTIONS);
    {
        struct pl_boot_entry e[RS_MAX_BOOT_ORDER];
        int waits = 1;
        ck_assert_uint_eq(pl_boot_order(&P.d, &P.o, e, &waits), 1);
        ck_assert_int_eq(waits, 0);
        ck_assert_int_eq(e[0].device_key, 4001);
    }
    pl_plan_free(&p);
}
END_TEST

/* ---- status ---------------------------------------------------------------------------------- */

static cJSON *status_of(const struct st_input *in)
{
    cJSON *st = NULL;
    int changed = 0;
    struct vmop_err err = {0};
    ck_assert_int_eq(st_build(in, (time_t)1700000000, &st, &changed, &err), VMOP_OK);
    return st;
}

static const char *cfield(const cJSON *st, const char *type, const char *k)
{
    const cJSON *c = api_cond_get(cJSON_GetObjectItemCaseSensitive(st, "conditions"), type);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

START_TEST(status_held_note_and_pending)
{
    struct fx f;
    struct st_obs o;
    struct st_input in;
    cJSON *st;
    fx_init(&f);
    set_annotations(f.vm_j, "{\"" RS_ANNOT_LAST_RESIZED "\":\"{\\\"name\\\":\\\"small\\\","
                            "\\\"uid\\\":\\\"c-uid\\\",\\\"generation\\\":1}\"}");
    fx_resolve(&f);
    ck_assert(f.r.desired.class_held);
    memset(&o, 0, sizeof(o));
    o.present = 1;
    o.unique_id = "vm-42";
    o.power = API_POWER_ON;
    o.primary_ip4 = "192.0.2.10";
    memset(&in, 0, sizeof(in));
    in.vm = f.vm;
    in.kind = ST_SYNCED;
    in.rs = &f.r;
    in.obs = &o;
    in.pending_fields = "guestId,version";
    in.field_note = "spec.advanced.bootDiskCapacity (512 MiB) is below the boot disk's 1024 MiB";
    st = status_of(&in);
    ck_assert_str_eq(cfield(st, COND_CLASS_CONFIG_SYNCED, "status"), "False");
    ck_assert_str_eq(cfield(st, COND_CLASS_CONFIG_SYNCED, "reason"), ST_REASON_CLASS_UPDATED);
    ck_assert_ptr_nonnull(
        strstr(cfield(st, COND_CLASS_CONFIG_SYNCED, "message"), RS_ANNOT_SAME_CLASS_RESIZE));
    ck_assert_str_eq(cfield(st, COND_FIELDS_SUPPORTED, "status"), "False");
    ck_assert_str_eq(cfield(st, COND_FIELDS_SUPPORTED, "reason"), RS_REASON_NOT_SUPPORTED);
    ck_assert_ptr_nonnull(strstr(cfield(st, COND_FIELDS_SUPPORTED, "message"), "bootDiskCapacity"));
    ck_assert_str_eq(cfield(st, COND_RECONCILE_READY, "reason"), "PowerCyclePending");
    ck_assert_ptr_nonnull(strstr(cfield(st, COND_RECONCILE_READY, "message"), "guestId,version"));
    /* Ready is not held back by any of it */
    ck_assert_str_eq(cfield(st, COND_READY, "status"), "True");
    cJSON_Delete(st);
    fx_free(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fields");
    TCase *tr = tcase_create("resolve"), *tp = tcase_create("plan"), *ts = tcase_create("status");
    tcase_add_test(tr, fields_all_acted_on);
    tcase_add_test(tr, unsupported_fields_are_named_and_do_not_block);
    tcase_add_test(tr, class_devices_are_named);
    tcase_add_test(tr, v1alpha6_fields_are_named);
    tcase_add_test(tr, v1alpha1_configmap_metadata_is_refused);
    tcase_add_test(tr, vm_fields_into_desired);
    tcase_add_test(tr, boot_order_and_durations_that_cannot_map);
    tcase_add_test(tr, class_config_spec_merged);
    tcase_add_test(tr, class_config_spec_sizes_a_class_without_hardware);
    tcase_add_test(tr, global_nameservers_and_wait_on_network);
    tcase_add_test(tr, class_resize_rule);
    tcase_add_test(tr, no_bootstrap_static_and_pool_addresses);
    suite_add_tcase(s, tr);
    tcase_add_checked_fixture(tp, psetup, pteardown);
    tcase_add_test(tp, plan_in_sync_with_every_field);
    tcase_add_test(tp, plan_live_and_offline_fields);
    tcase_add_test(tp, plan_hardware_upgrade);
    tcase_add_test(tp, plan_boot_disk_never_shrinks);
    tcase_add_test(tp, plan_nic_adapter_type_from_class);
    tcase_add_test(tp, plan_held_class);
    tcase_add_test(tp, plan_boot_order_waits_for_a_new_nic);
    suite_add_tcase(s, tp);
    tcase_add_test(ts, status_held_note_and_pending);
    suite_add_tcase(s, ts);
    return vmop_check_run(s);
}
