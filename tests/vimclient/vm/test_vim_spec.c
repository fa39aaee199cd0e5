/* test_vim_spec.c: unit tests of the VM layer's pure parts: the ConfigSpec serializer (byte-exact
 * against testdata/vim/vm/spec_*.expected) and the table-driven VirtualMachine decoder (recorded
 * simulator responses and hand-made real-vCenter shapes in testdata/vim/vm/ *.xml).
 * Needs VMOP_TESTDATA (the testdata/ directory) in the environment.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "test_file.h"
#include "vim_internal.h"

#define SW "fea97929-4b2d-5972-b146-930c6d0b4014"

static char *read_file(const char *name, size_t *ret_len)
{
    const char *dir = getenv("VMOP_TESTDATA");

    ck_assert_msg(dir != NULL, "VMOP_TESTDATA not set");
    return vmop_test_slurpf(ret_len, "%s/vim/vm/%s", dir, name);
}

/* Asserts every field of a decoded allocation. */
static void assert_alloc(const struct vim_alloc *a, long long reservation, long long limit,
                         int expandable, enum vim_shares_level shares_level, int shares)
{
    ck_assert_int_eq(a->reservation, reservation);
    ck_assert_int_eq(a->limit, limit);
    ck_assert_int_eq(a->expandable, expandable);
    ck_assert_int_eq(a->shares_level, shares_level);
    ck_assert_int_eq(a->shares, shares);
}

/* Serializes s, checks it is well-formed XML inside a <spec> with xsi declared, and compares it
 * byte for byte with the expected file. */
static void check_spec(struct vim_config_spec *s, const char *expected_file)
{
    struct vmop_err err = {0};
    char *xml = NULL, *want = read_file(expected_file, NULL);
    char *wrapped;
    size_t n;
    xmlDocPtr doc;

    ck_assert_int_eq(vim_config_spec_xml(s, &xml, &err), VMOP_OK);
    ck_assert_ptr_nonnull(xml);
    ck_assert_msg(strcmp(xml, want) == 0, "%s differs:\n got: %s\nwant: %s", expected_file, xml,
                  want);
    n = strlen(xml) + 200;
    wrapped = malloc(n);
    ck_assert_ptr_nonnull(wrapped);
    snprintf(wrapped, n,
             "<spec xmlns=\"urn:vim25\" xmlns:xsd=\"http://www.w3.org/2001/XMLSchema\" "
             "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">%s</spec>",
             xml);
    doc = vim_xml_parse(wrapped, strlen(wrapped));
    ck_assert_msg(doc != NULL, "%s: not well-formed", expected_file);
    xmlFreeDoc(doc);
    free(wrapped);
    free(xml);
    free(want);
}

START_TEST(test_spec_empty)
{
    struct vim_config_spec *s = NULL;
    struct vmop_err err = {0};
    char *xml = NULL;

    ck_assert_int_eq(vim_config_spec_new(&s), VMOP_OK);
    ck_assert_int_eq(vim_config_spec_xml(s, &xml, &err), VMOP_OK);
    ck_assert_str_eq(xml, "");
    free(xml);
    /* unset values are not sent */
    vim_cs_num_cpus(s, 0);
    vim_cs_memory_mb(s, -5);
    ck_assert_int_eq(vim_config_spec_xml(s, &xml, &err), VMOP_OK);
    ck_assert_str_eq(xml, "");
    free(xml);
    ck_assert_int_eq(vim_config_spec_xml(NULL, &xml, &err), VMOP_E_INVALID);
    vim_config_spec_free(s);
    vim_config_spec_free(NULL);
}
END_TEST

START_TEST(test_spec_resources)
{
    struct vim_config_spec *s = NULL;
    struct vim_alloc cpu = {.reservation = 1500,
                            .limit = -1,
                            .shares_level = VIM_SHARES_NORMAL,
                            .shares = 0,
                            .expandable = -1};
    struct vim_alloc mem = {.reservation = 1024,
                            .limit = 4096,
                            .shares_level = VIM_SHARES_CUSTOM,
                            .shares = 2000,
                            .expandable = 0};

    ck_assert_int_eq(vim_config_spec_new(&s), VMOP_OK);
    vim_cs_mem_alloc(s, &mem);
    vim_cs_cpu_alloc(s, &cpu);
    vim_cs_memory_mb(s, 8192);
    vim_cs_num_cpus(s, 4);
    check_spec(s, "spec_resources.expected");
    vim_config_spec_free(s);
}
END_TEST

START_TEST(test_spec_nics)
{
    struct vim_config_spec *s = NULL;
    struct vim_nic e1000 = {.key = 4000,
                            .device_type = "VirtualE1000",
                            .label = "ethernet-0",
                            .mac = "00:0c:29:33:34:38",
                            .portgroup_key = "dvportgroup-13",
                            .switch_uuid = SW,
                            .connected = 0,
                            .start_connected = 1,
                            .controller_key = 100,
                            .unit_number = 7};
    struct vim_nic gone = {.key = 4001,
                           .device_type = "VirtualVmxnet3",
                           .label = "Network adapter 2",
                           .mac = "00:50:56:00:00:09",
                           .portgroup_key = "dvportgroup-13",
                           .switch_uuid = SW,
                           .controller_key = -1,
                           .unit_number = -1};
    struct vim_nic bad = e1000;

    ck_assert_int_eq(vim_config_spec_new(&s), VMOP_OK);
    ck_assert_int_eq(vim_cs_nic_add_dvpg(s, NULL, SW, "dvportgroup-13", "00:50:56:00:00:01"),
                     VMOP_OK);
    ck_assert_int_eq(vim_cs_nic_add_dvpg(s, "VirtualE1000e", SW, "dvportgroup-14", NULL), VMOP_OK);
    ck_assert_int_eq(vim_cs_nic_edit_dvpg(s, &e1000, SW, "dvportgroup-72"), VMOP_OK);
    ck_assert_int_eq(vim_cs_nic_remove(s, &gone), VMOP_OK);
    /* refused, and nothing added */
    ck_assert_int_eq(vim_cs_nic_add_dvpg(s, "Virtual\"E1000", SW, "dvportgroup-1", NULL),
                     VMOP_E_INVALID);
    ck_assert_int_eq(vim_cs_nic_add_dvpg(s, NULL, NULL, "dvportgroup-1", NULL), VMOP_E_INVALID);
    ck_assert_int_eq(vim_cs_nic_add_dvpg(s, NULL, SW, "", NULL), VMOP_E_INVALID);
    bad.key = 0;
    ck_assert_int_eq(vim_cs_nic_edit_dvpg(s, &bad, SW, "dvportgroup-72"), VMOP_E_INVALID);
    check_spec(s, "spec_nics.expected");
    vim_config_spec_free(s);
}
END_TEST

START_TEST(test_spec_extra_config)
{
    struct vim_config_spec *s = NULL;

    ck_assert_int_eq(vim_config_spec_new(&s), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(s, "guestinfo.userdata", "I2Nsb3VkLWNvbmZpZw=="), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(s, "guestinfo.userdata.encoding", "base64"), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(s, "guestinfo.old", NULL), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(s, "vmservice.note", "a<b & \"c\""), VMOP_OK);
    /* a second set of the same key replaces the value in place */
    ck_assert_int_eq(vim_cs_extra_config(s, "vmservice.note", "x&y'z"), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(s, "", "v"), VMOP_E_INVALID);
    ck_assert_int_eq(vim_cs_extra_config(s, NULL, "v"), VMOP_E_INVALID);
    check_spec(s, "spec_extra.expected");
    vim_config_spec_free(s);
}
END_TEST

START_TEST(test_spec_identity)
{
    struct vim_config_spec *s = NULL;

    ck_assert_int_eq(vim_config_spec_new(&s), VMOP_OK);
    ck_assert_int_eq(vim_cs_managed_by(s, "com.example.vmop", "VirtualMachine"), VMOP_OK);
    ck_assert_int_eq(vim_cs_annotation(s, "Owner: <team> & \"ops\" 'x'"), VMOP_OK);
    ck_assert_int_eq(vim_cs_instance_uuid(s, "bfff331f-7f07-572d-951e-edd3701dc061"), VMOP_OK);
    /* upper case in, lower case out */
    ck_assert_int_eq(vim_cs_bios_uuid(s, "CD0681BF-2F18-5C00-9B9B-8197C0095348"), VMOP_OK);
    /* malformed UUIDs are refused and keep the previous value */
    ck_assert_int_eq(vim_cs_bios_uuid(s, "cd0681bf2f185c009b9b8197c0095348"), VMOP_E_INVALID);
    ck_assert_int_eq(vim_cs_bios_uuid(s, "cd0681bf-2f18-5c00-9b9b-8197c009534g"), VMOP_E_INVALID);
    ck_assert_int_eq(vim_cs_instance_uuid(s, "<x>"), VMOP_E_INVALID);
    ck_assert_int_eq(vim_cs_managed_by(s, "", "VirtualMachine"), VMOP_E_INVALID);
    check_spec(s, "spec_identity.expected");
    vim_config_spec_free(s);
}
END_TEST

/* Everything set in reverse order: the serializer must still follow the WSDL sequence. */
START_TEST(test_spec_wsdl_order)
{
    struct vim_config_spec *s = NULL;
    struct vim_alloc cpu = {.reservation = 100,
                            .limit = VIM_ALLOC_UNSET,
                            .shares_level = VIM_SHARES_UNSET,
                            .expandable = -1};
    struct vim_alloc mem = {.reservation = VIM_ALLOC_UNSET,
                            .limit = -1,
                            .shares_level = VIM_SHARES_UNSET,
                            .expandable = -1};

    ck_assert_int_eq(vim_config_spec_new(&s), VMOP_OK);
    ck_assert_int_eq(vim_cs_managed_by(s, "com.example.vmop", "VirtualMachine"), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(s, "k", "v"), VMOP_OK);
    vim_cs_mem_alloc(s, &mem);
    vim_cs_cpu_alloc(s, &cpu);
    ck_assert_int_eq(vim_cs_nic_add_dvpg(s, NULL, SW, "dvportgroup-13", ""), VMOP_OK);
    vim_cs_memory_mb(s, 2048);
    vim_cs_num_cpus(s, 2);
    ck_assert_int_eq(vim_cs_annotation(s, "a"), VMOP_OK);
    ck_assert_int_eq(vim_cs_instance_uuid(s, "bfff331f-7f07-572d-951e-edd3701dc061"), VMOP_OK);
    ck_assert_int_eq(vim_cs_bios_uuid(s, "cd0681bf-2f18-5c00-9b9b-8197c0095348"), VMOP_OK);
    check_spec(s, "spec_all.expected");
    vim_config_spec_free(s);
}
END_TEST

/* guestId, firmware, changed block tracking, boot options and a disk edit, set out of order. */
START_TEST(test_spec_boot_disk_guest)
{
    struct vim_config_spec *s = NULL;
    struct vim_disk disk = {.key = 2000,
                            .file_name = "[ds1] vm1/vm1.vmdk",
                            .label = "Hard disk 1",
                            .backing_type = "VirtualDiskFlatVer2BackingInfo",
                            .disk_mode = "persistent",
                            .thin = 1,
                            .controller_key = 1000,
                            .unit_number = 0};
    struct vim_boot_entry order[] = {
        {VIM_BOOT_ETHERNET, 4000}, {VIM_BOOT_DISK, 2000}, {VIM_BOOT_CDROM, 0}};
    struct vim_boot_spec boot = {.delay_ms = 5000,
                                 .retry_delay_ms = -1,
                                 .enter_setup = -1,
                                 .efi_secure_boot = 1,
                                 .retry = 0,
                                 .network_protocol = "ipv4",
                                 .set_order = 1,
                                 .order = order,
                                 .n_order = 3};
    struct vim_boot_spec bad = boot;

    ck_assert_int_eq(vim_config_spec_new(&s), VMOP_OK);
    ck_assert_int_eq(vim_cs_firmware(s, "efi"), VMOP_OK);
    vim_cs_change_tracking(s, 1);
    ck_assert_int_eq(vim_cs_boot_options(s, &boot), VMOP_OK);
    ck_assert_int_eq(vim_cs_extra_config(s, "k", "v"), VMOP_OK);
    ck_assert_int_eq(vim_cs_disk_capacity(s, &disk, 20971520), VMOP_OK);
    vim_cs_num_cpus(s, 2);
    ck_assert_int_eq(vim_cs_guest_id(s, "ubuntu64Guest"), VMOP_OK);
    /* refused, nothing changed */
    ck_assert_int_eq(vim_cs_guest_id(s, "bad<id>"), VMOP_E_INVALID);
    ck_assert_int_eq(vim_cs_firmware(s, "uefi"), VMOP_E_INVALID);
    bad.network_protocol = "pxe";
    ck_assert_int_eq(vim_cs_boot_options(s, &bad), VMOP_E_INVALID);
    disk.backing_type = "x\"y";
    ck_assert_int_eq(vim_cs_disk_capacity(s, &disk, 1), VMOP_E_INVALID);
    check_spec(s, "spec_boot.expected");
    vim_config_spec_free(s);
}
END_TEST

START_TEST(test_power_op_methods)
{
    ck_assert_str_eq(vim_power_op_method(VIM_OP_POWER_ON), "PowerOnVM_Task");
    ck_assert_str_eq(vim_power_op_method(VIM_OP_POWER_OFF), "PowerOffVM_Task");
    ck_assert_str_eq(vim_power_op_method(VIM_OP_SUSPEND), "SuspendVM_Task");
    ck_assert_str_eq(vim_power_op_method(VIM_OP_RESET), "ResetVM_Task");
    ck_assert_str_eq(vim_power_op_method(VIM_OP_SHUTDOWN_GUEST), "ShutdownGuest");
    ck_assert_str_eq(vim_power_op_method(VIM_OP_STANDBY_GUEST), "StandbyGuest");
    ck_assert_str_eq(vim_power_op_method(VIM_OP_REBOOT_GUEST), "RebootGuest");
    ck_assert_ptr_null(vim_power_op_method((enum vim_power_op)99));
}
END_TEST

/* ---- decoding ---------------------------------------------------------------------------------
 */

/* A recorded RetrievePropertiesEx answer turned into the struct vim_object vim_pc.c would give,
 * keeping only the properties vim_vm_get asks for (vim_vm_props). */
struct recorded {
    xmlDocPtr doc;
    struct vim_object obj;
    char **names; /* owned copies of the property names */
};

static int in_vm_props(const char *name)
{
    for (size_t i = 0; vim_vm_props[i]; i++)
        if (strcmp(vim_vm_props[i], name) == 0)
            return 1;
    return 0;
}

static void load_recorded(const char *file, struct recorded *r)
{
    size_t len;
    char *body = read_file(file, &len);
    xmlNodePtr n, objects;
    size_t cap = 0;

    memset(r, 0, sizeof(*r));
    r->doc = vim_xml_parse(body, len);
    free(body);
    ck_assert_msg(r->doc != NULL, "%s does not parse", file);
    n = xmlDocGetRootElement(r->doc);
    n = vim_xml_child(n, "Body");
    n = vim_xml_child(n, "RetrievePropertiesExResponse");
    n = vim_xml_child(n, "returnval");
    objects = vim_xml_child(n, "objects");
    ck_assert_ptr_nonnull(objects);
    ck_assert_int_eq(vim_xml_moref(vim_xml_child(objects, "obj"), &r->obj.ref), VMOP_OK);
    for (n = vim_xml_child(objects, "propSet"); n; n = vim_xml_next(n, "propSet"))
        cap++;
    r->obj.props = calloc(cap + 1, sizeof(*r->obj.props));
    r->names = calloc(cap + 1, sizeof(*r->names));
    ck_assert_ptr_nonnull(r->obj.props);
    ck_assert_ptr_nonnull(r->names);
    for (n = vim_xml_child(objects, "propSet"); n; n = vim_xml_next(n, "propSet")) {
        char *name = vim_xml_child_text(n, "name");

        ck_assert_ptr_nonnull(name);
        if (!in_vm_props(name)) {
            free(name);
            continue;
        }
        r->names[r->obj.n_props] = name;
        r->obj.props[r->obj.n_props].path = name;
        r->obj.props[r->obj.n_props].val = vim_xml_child(n, "val");
        r->obj.n_props++;
    }
}

static void free_recorded(struct recorded *r)
{
    for (size_t i = 0; i < r->obj.n_props; i++)
        free(r->names[i]);
    free(r->names);
    free(r->obj.props);
    xmlFreeDoc(r->doc);
}

static struct vim_vm *decode_file(const char *file)
{
    struct recorded r;
    struct vim_vm *vm = NULL;
    struct vmop_err err = {0};

    load_recorded(file, &r);
    ck_assert_msg(vim_vm_decode(&r.obj, &vm, &err) == VMOP_OK, "%s: %s", file, err.msg);
    free_recorded(&r);
    ck_assert_ptr_nonnull(vm);
    return vm;
}

START_TEST(test_decode_sim_default)
{
    struct vim_vm *vm = decode_file("sim_vm63_default.xml");

    ck_assert_str_eq(vm->ref.type, "VirtualMachine");
    ck_assert_str_eq(vm->ref.value, "vm-63");
    ck_assert_str_eq(vm->name, "DC0_C0_RP0_VM0");
    ck_assert_str_eq(vm->bios_uuid, "cd0681bf-2f18-5c00-9b9b-8197c0095348");
    ck_assert_str_eq(vm->instance_uuid, "bfff331f-7f07-572d-951e-edd3701dc061");
    ck_assert_str_eq(vm->guest_id, "otherGuest");
    ck_assert_str_eq(vm->hw_version, "vmx-13");
    ck_assert_ptr_null(vm->annotation);
    ck_assert_ptr_null(vm->managed_by_ext);
    ck_assert_ptr_null(vm->managed_by_type);
    ck_assert_int_eq(vm->template, 0);
    ck_assert_int_eq(vm->power_state, VIM_POWER_ON);
    ck_assert_ptr_null(vm->boot_time);
    ck_assert_ptr_null(vm->guest_ip);
    ck_assert_ptr_null(vm->guest_hostname);
    ck_assert_str_eq(vm->tools_running, "guestToolsNotRunning");
    ck_assert_ptr_null(vm->guest_heartbeat);
    ck_assert_uint_eq(vm->n_guest_nics, 1);
    ck_assert_str_eq(vm->guest_nics[0].mac, "00:0c:29:33:34:38");
    ck_assert_ptr_null(vm->guest_nics[0].network);
    ck_assert_uint_eq(vm->guest_nics[0].n_ips, 0);
    ck_assert_ptr_null(vm->guest_nics[0].ips);
    ck_assert_int_eq(vm->guest_nics[0].connected, 1);
    ck_assert_int_eq(vm->num_cpu, 1);
    ck_assert_int_eq(vm->memory_mb, 32);
    assert_alloc(&vm->cpu_alloc, 0, -1, 1, VIM_SHARES_NORMAL, 0);
    ck_assert_int_eq(vm->mem_alloc.reservation, 0);
    ck_assert_int_eq(vm->mem_alloc.limit, -1);
    /* twelve devices, one NIC, one disk */
    ck_assert_uint_eq(vm->n_disks, 1);
    ck_assert_int_eq(vm->disks[0].key, 1345084660);
    ck_assert_int_eq(vm->disks[0].capacity_kb, 1024);
    ck_assert_str_eq(vm->disks[0].file_name, "[LocalDS_0] DC0_C0_RP0_VM0/disk1.vmdk");
    ck_assert_uint_eq(vm->n_nics, 1);
    ck_assert_int_eq(vm->nics[0].key, 4000);
    ck_assert_str_eq(vm->nics[0].device_type, "VirtualE1000");
    ck_assert_str_eq(vm->nics[0].label, "ethernet-0");
    ck_assert_str_eq(vm->nics[0].mac, "00:0c:29:33:34:38");
    ck_assert_str_eq(vm->nics[0].portgroup_key, "dvportgroup-13");
    ck_assert_str_eq(vm->nics[0].switch_uuid, SW);
    ck_assert_ptr_null(vm->nics[0].network_name);
    ck_assert_int_eq(vm->nics[0].connected, 0);
    ck_assert_int_eq(vm->nics[0].start_connected, 1);
    ck_assert_int_eq(vm->nics[0].controller_key, 100);
    ck_assert_int_eq(vm->nics[0].unit_number, 7);
    ck_assert_uint_eq(vm->n_extra_config, 1);
    ck_assert_str_eq(vim_vm_extra_config(vm, "govcsim"), "TRUE");
    ck_assert_str_eq(vm->host.type, "HostSystem");
    ck_assert_str_eq(vm->host.value, "host-42");
    ck_assert_str_eq(vm->resource_pool.type, "ResourcePool");
    ck_assert_str_eq(vm->resource_pool.value, "resgroup-26");
    ck_assert_str_eq(vm->parent.type, "Folder");
    ck_assert_str_eq(vm->parent.value, "folder-3");
    ck_assert_str_eq(vm->datastore.type, "Datastore");
    ck_assert_str_eq(vm->datastore.value, "/tmp/govcsim-DC0-LocalDS_0-1225126829@folder-5");
    vim_vm_free(vm);
}
END_TEST

START_TEST(test_decode_sim_reconfigured)
{
    struct vim_vm *vm = decode_file("sim_vm66_reconfigured.xml");

    ck_assert_str_eq(vm->ref.value, "vm-66");
    ck_assert_str_eq(vm->annotation, "a & b <c> \"q\"");
    ck_assert_str_eq(vm->managed_by_ext, "com.example.vmop");
    ck_assert_str_eq(vm->managed_by_type, "VirtualMachine");
    ck_assert_str_eq(vm->guest_ip, "10.0.0.42");
    ck_assert_str_eq(vm->guest_hostname, "host66");
    ck_assert_str_eq(vm->tools_running, "guestToolsRunning");
    ck_assert_uint_eq(vm->n_guest_nics, 1);
    ck_assert_uint_eq(vm->guest_nics[0].n_ips, 1);
    ck_assert_str_eq(vm->guest_nics[0].ips[0], "10.0.0.42");
    ck_assert_int_eq(vm->num_cpu, 2);
    ck_assert_int_eq(vm->memory_mb, 2048);
    assert_alloc(&vm->cpu_alloc, 1500, 3000, 0, VIM_SHARES_CUSTOM, 4000);
    ck_assert_int_eq(vm->mem_alloc.reservation, 1024);
    ck_assert_int_eq(vm->mem_alloc.limit, -1);
    /* expandableReservation absent: unset */
    ck_assert_int_eq(vm->mem_alloc.expandable, -1);
    ck_assert_int_eq(vm->mem_alloc.shares_level, VIM_SHARES_HIGH);
    /* the simulator appended guestinfo.a twice: the last value wins, one entry per key */
    ck_assert_uint_eq(vm->n_extra_config, 2);
    ck_assert_str_eq(vim_vm_extra_config(vm, "guestinfo.a"), "two");
    ck_assert_str_eq(vim_vm_extra_config(vm, "govcsim"), "TRUE");
    ck_assert_ptr_null(vim_vm_extra_config(vm, "SET.guest.ipAddress"));
    ck_assert_ptr_null(vim_vm_extra_config(vm, "nope"));
    vim_vm_free(vm);
}
END_TEST

START_TEST(test_decode_real_vc_shape)
{
    struct vim_vm *vm = decode_file("realvc_vm.xml");

    ck_assert_str_eq(vm->ref.value, "vm-1001");
    ck_assert_str_eq(vm->name, "vm1 & co");
    ck_assert_str_eq(vm->bios_uuid, "4203a1b2-c3d4-e5f6-0718-293a4b5c6d7e");
    ck_assert_str_eq(vm->instance_uuid, "5003a1b2-c3d4-e5f6-0718-293a4b5c6d7e");
    ck_assert_str_eq(vm->guest_id, "ubuntu64Guest");
    ck_assert_str_eq(vm->hw_version, "vmx-19");
    ck_assert_str_eq(vm->annotation, "owner: team <a&b> \"x\" 'y'");
    ck_assert_str_eq(vm->managed_by_ext, "com.vmware.vcenter.wcp");
    ck_assert_str_eq(vm->managed_by_type, "VirtualMachine");
    ck_assert_int_eq(vm->template, 0);
    ck_assert_int_eq(vm->power_state, VIM_POWER_SUSPENDED);
    ck_assert_str_eq(vm->boot_time, "2024-05-01T10:20:30.123Z");
    ck_assert_str_eq(vm->guest_ip, "192.0.2.10");
    ck_assert_str_eq(vm->guest_hostname, "vm1.example.com");
    ck_assert_str_eq(vm->tools_running, "guestToolsRunning");
    ck_assert_str_eq(vm->guest_heartbeat, "green");
    ck_assert_uint_eq(vm->n_guest_nics, 2);
    ck_assert_str_eq(vm->guest_nics[0].network, "dvpg-web");
    ck_assert_str_eq(vm->guest_nics[0].mac, "00:50:56:aa:bb:01");
    ck_assert_uint_eq(vm->guest_nics[0].n_ips, 2);
    ck_assert_str_eq(vm->guest_nics[0].ips[0], "192.0.2.10");
    ck_assert_str_eq(vm->guest_nics[0].ips[1], "fe80::250:56ff:feaa:bb01");
    ck_assert_int_eq(vm->guest_nics[0].connected, 1);
    ck_assert_str_eq(vm->guest_nics[1].mac, "00:50:56:00:00:02");
    ck_assert_uint_eq(vm->guest_nics[1].n_ips, 0);
    ck_assert_int_eq(vm->guest_nics[1].connected, 0);
    ck_assert_int_eq(vm->num_cpu, 4);
    ck_assert_int_eq(vm->memory_mb, 4096);
    assert_alloc(&vm->cpu_alloc, 2000, 4000, 0, VIM_SHARES_CUSTOM, 3000);
    ck_assert_int_eq(vm->mem_alloc.reservation, 4096);
    ck_assert_int_eq(vm->mem_alloc.limit, -1);
    ck_assert_int_eq(vm->mem_alloc.shares_level, VIM_SHARES_NORMAL);
    ck_assert_int_eq(vm->mem_alloc.shares, 40960);
    /* the PCI controller and the disk are not NICs */
    ck_assert_uint_eq(vm->n_nics, 2);
    ck_assert_int_eq(vm->nics[0].key, 4000);
    ck_assert_str_eq(vm->nics[0].device_type, "VirtualVmxnet3");
    ck_assert_str_eq(vm->nics[0].label, "Network adapter 1");
    ck_assert_str_eq(vm->nics[0].mac, "00:50:56:aa:bb:01");
    ck_assert_str_eq(vm->nics[0].portgroup_key, "dvportgroup-44");
    ck_assert_str_eq(vm->nics[0].switch_uuid, "50 2a 9e 3c 6e 6f 41 2d-8f 1c 3a 4b 5c 6d 7e 8f");
    ck_assert_ptr_null(vm->nics[0].network_name);
    ck_assert_int_eq(vm->nics[0].connected, 1);
    ck_assert_int_eq(vm->nics[0].start_connected, 1);
    ck_assert_int_eq(vm->nics[1].key, 4001);
    ck_assert_str_eq(vm->nics[1].device_type, "VirtualE1000");
    ck_assert_str_eq(vm->nics[1].network_name, "VM Network");
    ck_assert_ptr_null(vm->nics[1].portgroup_key);
    ck_assert_ptr_null(vm->nics[1].switch_uuid);
    ck_assert_int_eq(vm->nics[1].connected, 0);
    ck_assert_int_eq(vm->nics[1].start_connected, 0);
    ck_assert_int_eq(vm->nics[1].unit_number, 8);
    /* last value wins; a non-string value is kept as a key with a NULL value */
    ck_assert_uint_eq(vm->n_extra_config, 3);
    ck_assert_str_eq(vim_vm_extra_config(vm, "guestinfo.metadata"), "bmV3");
    ck_assert_str_eq(vim_vm_extra_config(vm, "vmservice.namespacedName"), "ns1/vm1");
    ck_assert_ptr_null(vim_vm_extra_config(vm, "numeric.value"));
    ck_assert_str_eq(vm->host.value, "host-15");
    ck_assert_str_eq(vm->resource_pool.value, "resgroup-9");
    ck_assert_str_eq(vm->parent.type, "Folder");
    ck_assert_str_eq(vm->parent.value, "group-v22");
    /* the first datastore */
    ck_assert_str_eq(vm->datastore.value, "datastore-11");
    /* firmware, changed block tracking, boot options, the disk as an edit needs it */
    ck_assert_str_eq(vm->firmware, "efi");
    ck_assert_int_eq(vm->change_tracking, 1);
    ck_assert_int_eq(vm->boot.delay_ms, 3000);
    ck_assert_int_eq(vm->boot.enter_setup, 0);
    ck_assert_int_eq(vm->boot.efi_secure_boot, 1);
    ck_assert_int_eq(vm->boot.retry, 1);
    ck_assert_int_eq(vm->boot.retry_delay_ms, 10000);
    ck_assert_str_eq(vm->boot.network_protocol, "ipv6");
    ck_assert_uint_eq(vm->boot.n_order, 3);
    ck_assert_str_eq(vm->boot.order[0].type, "VirtualMachineBootOptionsBootableEthernetDevice");
    ck_assert_int_eq(vm->boot.order[0].device_key, 4000);
    ck_assert_str_eq(vm->boot.order[1].type, "VirtualMachineBootOptionsBootableDiskDevice");
    ck_assert_int_eq(vm->boot.order[1].device_key, 2000);
    ck_assert_str_eq(vm->boot.order[2].type, "VirtualMachineBootOptionsBootableCdromDevice");
    ck_assert_int_eq(vm->boot.order[2].device_key, -1);
    ck_assert_uint_eq(vm->n_disks, 1);
    ck_assert_int_eq(vm->disks[0].key, 2000);
    ck_assert_int_eq(vm->disks[0].capacity_kb, 16777216);
    ck_assert_int_eq(vm->disks[0].capacity_bytes, 17179869184LL);
    ck_assert_str_eq(vm->disks[0].backing_type, "VirtualDiskFlatVer2BackingInfo");
    ck_assert_str_eq(vm->disks[0].disk_mode, "persistent");
    ck_assert_str_eq(vm->disks[0].label, "Hard disk 1");
    ck_assert_int_eq(vm->disks[0].thin, 1);
    ck_assert_int_eq(vm->disks[0].controller_key, 1000);
    ck_assert_int_eq(vm->disks[0].unit_number, 0);
    vim_vm_free(vm);
}
END_TEST

START_TEST(test_decode_empty_object)
{
    struct vim_object obj = {0};
    struct vim_vm *vm = NULL;
    struct vmop_err err = {0};

    ck_assert_int_eq(vim_moref_set(&obj.ref, "VirtualMachine", "vm-5"), VMOP_OK);
    ck_assert_int_eq(vim_vm_decode(&obj, &vm, &err), VMOP_OK);
    ck_assert_str_eq(vm->ref.value, "vm-5");
    ck_assert_ptr_null(vm->name);
    ck_assert_int_eq(vm->power_state, VIM_POWER_UNKNOWN);
    ck_assert_int_eq(vm->cpu_alloc.reservation, VIM_ALLOC_UNSET);
    ck_assert_int_eq(vm->cpu_alloc.limit, VIM_ALLOC_UNSET);
    ck_assert_int_eq(vm->cpu_alloc.expandable, -1);
    ck_assert_int_eq(vm->mem_alloc.shares_level, VIM_SHARES_UNSET);
    ck_assert_uint_eq(vm->n_nics, 0);
    ck_assert_uint_eq(vm->n_extra_config, 0);
    ck_assert_int_eq(vim_moref_is_set(&vm->host), 0);
    vim_vm_free(vm);
    vim_vm_free(NULL);
    ck_assert_int_eq(vim_vm_decode(NULL, &vm, &err), VMOP_E_INVALID);
    ck_assert_ptr_null(vim_vm_extra_config(NULL, "x"));
}
END_TEST

START_TEST(test_decode_bad_number)
{
    struct recorded r;
    struct vim_vm *vm = NULL;
    struct vmop_err err = {0};

    load_recorded("bad_numcpu.xml", &r);
    ck_assert_int_eq(vim_vm_decode(&r.obj, &vm, &err), VMOP_E_PROTO);
    ck_assert_ptr_null(vm);
    ck_assert_ptr_nonnull(strstr(err.msg, "config.hardware.numCPU"));
    /* the user data decoded before the failure never reaches the message */
    ck_assert_ptr_null(strstr(err.msg, "c2VjcmV0"));
    free_recorded(&r);
}
END_TEST

static Suite *spec_suite(void)
{
    Suite *s = suite_create("vim_spec");
    TCase *tc = tcase_create("spec");

    tcase_add_test(tc, test_spec_empty);
    tcase_add_test(tc, test_spec_resources);
    tcase_add_test(tc, test_spec_nics);
    tcase_add_test(tc, test_spec_extra_config);
    tcase_add_test(tc, test_spec_identity);
    tcase_add_test(tc, test_spec_wsdl_order);
    tcase_add_test(tc, test_spec_boot_disk_guest);
    tcase_add_test(tc, test_power_op_methods);
    suite_add_tcase(s, tc);
    tc = tcase_create("decode");
    tcase_add_test(tc, test_decode_sim_default);
    tcase_add_test(tc, test_decode_sim_reconfigured);
    tcase_add_test(tc, test_decode_real_vc_shape);
    tcase_add_test(tc, test_decode_empty_object);
    tcase_add_test(tc, test_decode_bad_number);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return vmop_check_run(spec_suite());
}
