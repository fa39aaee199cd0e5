/* test_ovf.c: unit tests for operator/image/ovf.c: the seeded descriptor, an EFI descriptor with a
 * full ProductSection and odd namespace prefixes, allocation units, malformed input, caps, and
 * refused entity tricks. Descriptors come from $VMOP_TESTDATA/ovf. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "test_file.h"
#include "ovf.h"

static char *read_testdata(const char *name, size_t *ret_len)
{
    const char *dir = getenv("VMOP_TESTDATA");
    char *buf;

    ck_assert_msg(dir != NULL, "VMOP_TESTDATA is not set");
    buf = vmop_test_slurpf(ret_len, "%s/ovf/%s", dir, name);
    ck_assert(*ret_len > 0);
    return buf;
}

static struct ovf_desc *parse_file(const char *name)
{
    struct vmop_err err = {0};
    struct ovf_desc *d = NULL;
    size_t len;
    char *data = read_testdata(name, &len);
    vmop_rc rc = ovf_parse(data, len, &d, &err);
    ck_assert_msg(rc == VMOP_OK, "%s: %s", name, err.msg);
    free(data);
    return d;
}

static vmop_rc parse_str(const char *s, struct vmop_err *err)
{
    struct ovf_desc *d = NULL;
    vmop_rc rc = ovf_parse(s, strlen(s), &d, err);
    ovf_desc_free(d);
    return rc;
}

START_TEST(seeded_descriptor)
{
    struct ovf_desc *d = parse_file("vmop-tiny.ovf");

    ck_assert_str_eq(d->name, "vmop-tiny");
    ck_assert_str_eq(d->os_id, "94");
    ck_assert_str_eq(d->os_type, "ubuntu64Guest");
    ck_assert_str_eq(d->os_description, "Ubuntu Linux (64-bit)");
    ck_assert_ptr_null(d->os_version);
    ck_assert_int_eq(d->hw_version, 13);
    ck_assert_ptr_null(d->firmware);
    ck_assert_int_eq(d->v1alpha1_compatible, 0);
    ck_assert_str_eq(d->product, "vmop tiny test image");
    ck_assert_ptr_null(d->vendor);
    ck_assert_int_eq(d->num_cpus, 2);
    ck_assert_int_eq(d->memory_mb, 1024);
    /* properties: all three are user-configurable, with their defaults */
    ck_assert_uint_eq(d->n_props, 3);
    ck_assert_str_eq(d->props[0].key, "instance-id");
    ck_assert_str_eq(d->props[0].type, "string");
    ck_assert_str_eq(d->props[0].default_value, "id-ovf");
    ck_assert_str_eq(d->props[1].key, "hostname");
    ck_assert_str_eq(d->props[1].default_value, "vmop-tiny");
    ck_assert_str_eq(d->props[2].key, "user-data");
    ck_assert_str_eq(d->props[2].default_value, "");
    ck_assert_uint_eq(d->n_sys_props, 0);
    /* one 1 GiB disk on SCSI controller bus 0, unit 0 */
    ck_assert_uint_eq(d->n_disks, 1);
    ck_assert_str_eq(d->disks[0].disk_id, "vmdisk1");
    ck_assert_int_eq(d->disks[0].capacity_bytes, 1LL << 30);
    ck_assert_int_eq(d->disks[0].populated_bytes, 0);
    ck_assert_str_eq(d->disks[0].controller_type, "SCSI");
    ck_assert_int_eq(d->disks[0].controller_bus, 0);
    ck_assert_int_eq(d->disks[0].unit_number, 0);
    ck_assert_str_eq(d->disks[0].element_name, "Hard Disk 1");
    /* one vmxnet3 NIC on OVF network nic0 */
    ck_assert_uint_eq(d->n_networks, 1);
    ck_assert_str_eq(d->networks[0], "nic0");
    ck_assert_uint_eq(d->n_nics, 1);
    ck_assert_str_eq(d->nics[0].network, "nic0");
    ck_assert_str_eq(d->nics[0].adapter_type, "VmxNet3");
    ovf_desc_free(d);
}
END_TEST

START_TEST(efi_descriptor)
{
    struct ovf_desc *d = parse_file("vmop-efi.ovf");

    ck_assert_str_eq(d->name, "photon-efi");
    ck_assert_str_eq(d->os_id, "36");
    ck_assert_str_eq(d->os_type, "vmwarePhoton64Guest");
    ck_assert_str_eq(d->os_version, "5");
    ck_assert_int_eq(d->hw_version, 19);
    ck_assert_str_eq(d->firmware, "efi");
    ck_assert_int_eq(d->v1alpha1_compatible, 1);
    ck_assert_int_eq(d->num_cpus, 4);
    ck_assert_int_eq(d->memory_mb, 8192);
    /* product info from the first ProductSection only */
    ck_assert_str_eq(d->product, "Photon OS EFI");
    ck_assert_str_eq(d->vendor, "VMware Inc.");
    ck_assert_str_eq(d->version, "5.0");
    ck_assert_str_eq(d->full_version, "5.0-build.1234");
    /* user-configurable properties of both sections, in document order */
    ck_assert_uint_eq(d->n_props, 5);
    ck_assert_str_eq(d->props[0].key, "user-data");
    ck_assert_str_eq(d->props[1].key, "hostname");
    ck_assert_str_eq(d->props[1].default_value, "photon");
    ck_assert_str_eq(d->props[2].key, "password");
    ck_assert_ptr_null(d->props[2].default_value); /* a password default is never kept */
    ck_assert_str_eq(d->props[3].key, "ssh-enabled");
    ck_assert_str_eq(d->props[3].type, "boolean");
    ck_assert_ptr_null(d->props[3].default_value);
    ck_assert_str_eq(d->props[4].key, "timezone"); /* userConfigurable="1" */
    /* vmware-system properties with a value, whatever userConfigurable says */
    ck_assert_uint_eq(d->n_sys_props, 3);
    ck_assert_str_eq(d->sys_props[0].key, "vmware-system-tkr-os-type");
    ck_assert_str_eq(d->sys_props[0].value, "photon");
    ck_assert_str_eq(d->sys_props[1].key, "vmware-system-tkr-os-version");
    ck_assert_str_eq(d->sys_props[2].key, "vmware-system-guest-ready");
    ck_assert_str_eq(d->sys_props[2].value, "yes");
    /* disks: 20 GiB on SCSI bus 1 unit 2; 512 MiB on NVMe bus 0 unit 0, no populated size */
    ck_assert_uint_eq(d->n_disks, 2);
    ck_assert_int_eq(d->disks[0].capacity_bytes, 20LL << 30);
    ck_assert_int_eq(d->disks[0].populated_bytes, 1536000000LL);
    ck_assert_str_eq(d->disks[0].controller_type, "SCSI");
    ck_assert_int_eq(d->disks[0].controller_bus, 1);
    ck_assert_int_eq(d->disks[0].unit_number, 2);
    ck_assert_int_eq(d->disks[1].capacity_bytes, 512LL << 20);
    ck_assert_int_eq(d->disks[1].populated_bytes, -1);
    ck_assert_str_eq(d->disks[1].controller_type, "NVME");
    ck_assert_int_eq(d->disks[1].controller_bus, 0);
    ck_assert_uint_eq(d->n_nics, 2);
    ck_assert_str_eq(d->nics[1].network, "backend");
    ck_assert_str_eq(d->nics[1].adapter_type, "E1000");
    ck_assert_uint_eq(d->n_networks, 2);
    ck_assert_str_eq(d->networks[0], "VM Network");
    ovf_desc_free(d);
}
END_TEST

START_TEST(alloc_units)
{
    struct vmop_err err = {0};
    long long m = 0;

    ck_assert_int_eq(ovf_alloc_units(NULL, &m, &err), VMOP_OK);
    ck_assert_int_eq(m, 1);
    ck_assert_int_eq(ovf_alloc_units("byte", &m, &err), VMOP_OK);
    ck_assert_int_eq(m, 1);
    ck_assert_int_eq(ovf_alloc_units("byte * 2^30", &m, &err), VMOP_OK);
    ck_assert_int_eq(m, 1LL << 30);
    ck_assert_int_eq(ovf_alloc_units("byte*2^20", &m, &err), VMOP_OK);
    ck_assert_int_eq(m, 1LL << 20);
    ck_assert_int_eq(ovf_alloc_units("byte * 1024", &m, &err), VMOP_OK);
    ck_assert_int_eq(m, 1024);
    ck_assert_int_eq(ovf_alloc_units("byte * 10^3", &m, &err), VMOP_OK);
    ck_assert_int_eq(m, 1000);
    ck_assert_int_eq(ovf_alloc_units("hertz * 10^6", &m, &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "not in bytes"));
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(ovf_alloc_units("byte * 2^x", &m, &err), VMOP_E_INVALID);
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(ovf_alloc_units("byte * 2^64", &m, &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "overflows"));
}
END_TEST

#define ENV_OPEN                                                                                   \
    "<Envelope xmlns=\"http://schemas.dmtf.org/ovf/envelope/1\" "                                  \
    "xmlns:ovf=\"http://schemas.dmtf.org/ovf/envelope/1\">"

START_TEST(malformed)
{
    struct vmop_err err = {0};

    ck_assert_int_eq(parse_str("", &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "empty"));

    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(parse_str(ENV_OPEN "<VirtualSystem ovf:id=\"x\">", &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "not well-formed XML"));

    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(parse_str("<Envelope xmlns=\"urn:other\"><VirtualSystem/></Envelope>", &err),
                     VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "not an OVF Envelope"));

    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(parse_str(ENV_OPEN "</Envelope>", &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "no VirtualSystem"));

    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(parse_str(ENV_OPEN "<VirtualSystemCollection ovf:id=\"v\"/></Envelope>", &err),
                     VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "VirtualSystemCollection"));

    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(parse_str(ENV_OPEN
                               "<DiskSection><Disk ovf:diskId=\"d1\" ovf:capacity=\"ten\"/>"
                               "</DiskSection><VirtualSystem ovf:id=\"x\"/></Envelope>",
                               &err),
                     VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "bad ovf:capacity 'ten'"));

    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(parse_str(ENV_OPEN "<DiskSection><Disk ovf:diskId=\"d1\" ovf:capacity=\"1\" "
                                        "ovf:capacityAllocationUnits=\"furlong\"/></DiskSection>"
                                        "<VirtualSystem ovf:id=\"x\"/></Envelope>",
                               &err),
                     VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "furlong"));

    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(parse_str(ENV_OPEN "<VirtualSystem ovf:id=\"x\"><ProductSection>"
                                        "<Property ovf:type=\"string\"/></ProductSection>"
                                        "</VirtualSystem></Envelope>",
                               &err),
                     VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "no ovf:key"));

    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(parse_str(ENV_OPEN "<VirtualSystem ovf:id=\"x\"><OperatingSystemSection "
                                        "ovf:id=\"ubuntu\"/></VirtualSystem></Envelope>",
                               &err),
                     VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "not a number"));
}
END_TEST

START_TEST(minimal_and_property_capacity)
{
    /* A capacity given by a property reference is unknown, not an error; no sections is fine. */
    const char *s = ENV_OPEN "<DiskSection><Disk ovf:diskId=\"d1\" ovf:capacity=\"${disk.size}\"/>"
                             "</DiskSection><VirtualSystem ovf:id=\"only-id\"/></Envelope>";
    struct vmop_err err = {0};
    struct ovf_desc *d = NULL;

    ck_assert_int_eq(ovf_parse(s, strlen(s), &d, &err), VMOP_OK);
    ck_assert_str_eq(d->name, "only-id");
    ck_assert_uint_eq(d->n_disks, 1);
    ck_assert_int_eq(d->disks[0].capacity_bytes, -1);
    ck_assert_ptr_null(d->disks[0].controller_type);
    ck_assert_int_eq(d->hw_version, 0);
    ck_assert_ptr_null(d->os_type);
    ck_assert_uint_eq(d->n_props, 0);
    ovf_desc_free(d);
}
END_TEST

START_TEST(entities_refused)
{
    static const char *laughs =
        "<?xml version=\"1.0\"?>\n"
        "<!DOCTYPE lolz [<!ENTITY lol \"lol\">"
        "<!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">"
        "<!ENTITY lol3 "
        "\"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">]>\n" ENV_OPEN
        "<VirtualSystem ovf:id=\"x\"><Name>&lol3;</Name></VirtualSystem></Envelope>";
    static const char *xxe = "<?xml version=\"1.0\"?>\n"
                             "<!DOCTYPE e [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n" ENV_OPEN
                             "<VirtualSystem ovf:id=\"x\"><Name>&x;</Name></VirtualSystem>"
                             "</Envelope>";
    struct vmop_err err = {0};

    ck_assert_int_eq(parse_str(laughs, &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "DTD"));
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(parse_str(xxe, &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "DTD"));
    /* An undeclared entity reference is not well-formed: refused, never resolved. */
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(parse_str(ENV_OPEN "<VirtualSystem ovf:id=\"x\"><Name>&x;</Name>"
                                        "</VirtualSystem></Envelope>",
                               &err),
                     VMOP_E_INVALID);
    /* UTF-16 (NUL bytes) is refused before parsing, so a DOCTYPE cannot hide in it. */
    {
        static const char u16[] = {'<', 0, '!', 0, 'D', 0};
        struct ovf_desc *d = NULL;
        memset(&err, 0, sizeof(err));
        ck_assert_int_eq(ovf_parse(u16, sizeof(u16), &d, &err), VMOP_E_INVALID);
        ck_assert_ptr_nonnull(strstr(err.msg, "UTF-8"));
    }
}
END_TEST

START_TEST(caps)
{
    struct vmop_err err = {0};
    struct ovf_desc *d = NULL;
    size_t big = OVF_MAX_BYTES + 1, n = 0;
    char *s = malloc(big + 1);
    char *p;

    ck_assert_ptr_nonnull(s);
    memset(s, ' ', big);
    s[big] = '\0';
    ck_assert_int_eq(ovf_parse(s, big, &d, &err), VMOP_E_TOOBIG);

    /* more disks than the cap */
    p = s;
    p += sprintf(p, "%s<DiskSection>", ENV_OPEN);
    for (n = 0; n <= OVF_MAX_DISKS; n++)
        p += sprintf(p, "<Disk ovf:diskId=\"d%zu\" ovf:capacity=\"1\"/>", n);
    p += sprintf(p, "</DiskSection><VirtualSystem ovf:id=\"x\"/></Envelope>");
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(ovf_parse(s, (size_t)(p - s), &d, &err), VMOP_E_TOOBIG);
    ck_assert_ptr_nonnull(strstr(err.msg, "disks"));

    /* a string over OVF_MAX_TEXT */
    p = s;
    p += sprintf(p, "%s<VirtualSystem ovf:id=\"x\"><Name>", ENV_OPEN);
    memset(p, 'a', OVF_MAX_TEXT + 1);
    p += OVF_MAX_TEXT + 1;
    p += sprintf(p, "</Name></VirtualSystem></Envelope>");
    memset(&err, 0, sizeof(err));
    ck_assert_int_eq(ovf_parse(s, (size_t)(p - s), &d, &err), VMOP_E_TOOBIG);
    ck_assert_ptr_nonnull(strstr(err.msg, "Name"));
    free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ovf");
    TCase *tc = tcase_create("parse");

    tcase_add_test(tc, seeded_descriptor);
    tcase_add_test(tc, efi_descriptor);
    tcase_add_test(tc, alloc_units);
    tcase_add_test(tc, malformed);
    tcase_add_test(tc, minimal_and_property_capacity);
    tcase_add_test(tc, entities_refused);
    tcase_add_test(tc, caps);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
