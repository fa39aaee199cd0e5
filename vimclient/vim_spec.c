/* vim_spec.c: the VirtualMachineConfigSpec builder and its serializer.
 *
 * Owns: struct vim_config_spec (private to this file), the vim_cs_* setters and
 * vim_config_spec_xml(). Not here: sending it (vim_vm.c wraps it in ReconfigVM_Task /
 * CloneVM_Task).
 *
 * Only what was set is sent. Members are written in WSDL order (real vCenter validates the
 * sequence; govmomi vim25/types VirtualMachineConfigSpec lists it): uuid, instanceUuid, guestId,
 * annotation, numCPUs, memoryMB, deviceChange, cpuAllocation, memoryAllocation, extraConfig,
 * bootOptions, changeTrackingEnabled, firmware, managedBy. Inside a device: key, deviceInfo,
 * backing, connectable, controllerKey, unitNumber, addressType, macAddress (NICs), capacityInKB,
 * capacityInBytes (disks). Disk edits come before NIC changes. bootOptions: bootDelay,
 * enterBIOSSetup, efiSecureBootEnabled, bootRetryEnabled, bootRetryDelay, bootOrder,
 * networkBootProtocol. Every text goes through vbuf_add_xml_escaped; anyType values and polymorphic
 * objects carry xsi:type (vcsim silently stores an untyped OptionValue.value as nil: vcsim.md 1.1).
 * NIC edits always carry deviceInfo (vcsim crashes without it: vcsim.md 1.4).
 * extraConfig values may be guestinfo user data: they are zeroed when the spec is freed, and the
 * serialized XML is a secret too (callers zero it).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vim_internal.h"

/* Caps: the spec is built by our own code, but from user-supplied objects. */
#define CS_MAX_EXTRA   1024      /* extraConfig entries in one spec */
#define CS_MAX_KEY     1024      /* bytes of an extraConfig key */
#define CS_MAX_DEVICES 64        /* device changes in one spec */
#define CS_MAX_TEXT    (1 << 20) /* an annotation, managedBy string */

enum cs_dev_op { CS_ADD, CS_EDIT, CS_REMOVE };

struct cs_nic {
    enum cs_dev_op op;
    int key;             /* add: a temporary negative key */
    char *device_type;   /* owned: xsi:type of the device */
    char *label;         /* owned, may be NULL (adds) */
    char *mac;           /* owned, may be NULL (adds: generated) */
    char *switch_uuid;   /* owned, NULL = no DVPG backing sent */
    char *portgroup_key; /* owned */
    int connected, start_connected;
    int controller_key, unit_number; /* -1 = not sent */
};

struct cs_disk {
    int key, controller_key, unit_number, thin; /* -1 = not sent */
    long long capacity_kb;
    char *backing_type, *file_name, *disk_mode, *label; /* owned, may be NULL */
};

struct cs_option {
    char *key;   /* owned */
    char *value; /* owned, NULL = remove (sent as an empty string); zeroed on free */
};

struct vim_config_spec {
    int num_cpus;   /* 0 = not sent */
    long memory_mb; /* 0 = not sent */
    int has_cpu_alloc, has_mem_alloc;
    struct vim_alloc cpu_alloc, mem_alloc;
    char *annotation;                 /* NULL = not sent; "" clears it */
    char *managed_ext, *managed_type; /* both or neither */
    char *bios_uuid, *instance_uuid;  /* lower-case */
    struct cs_option *extra;
    size_t n_extra;
    struct cs_nic *nics;
    size_t n_nics;
    int next_add_key;          /* -1, -2, ...: distinct temporary keys for adds */
    char *guest_id, *firmware; /* NULL = not sent */
    int change_tracking;       /* -1 = not sent */
    int has_boot;
    struct vim_boot_spec boot; /* order points at boot_order */
    struct vim_boot_entry boot_order[VIM_BOOT_MAX_ORDER];
    char *boot_protocol;
    struct cs_disk *disks;
    size_t n_disks;
};

static void cs_free_secret(char *s)
{
    if (s)
        explicit_bzero(s, strlen(s));
    free(s);
}

static void cs_nic_clear(struct cs_nic *n)
{
    free(n->device_type);
    free(n->label);
    free(n->mac);
    free(n->switch_uuid);
    free(n->portgroup_key);
    memset(n, 0, sizeof(*n));
}

vmop_rc vim_config_spec_new(struct vim_config_spec **ret_spec)
{
    struct vim_config_spec *s;

    if (!ret_spec)
        return VMOP_E_INVALID;
    s = calloc(1, sizeof(*s));
    if (!s)
        return VMOP_E_NOMEM;
    s->next_add_key = -1;
    s->change_tracking = -1;
    *ret_spec = s;
    return VMOP_OK;
}

void vim_config_spec_free(struct vim_config_spec *s)
{
    if (!s)
        return;
    free(s->annotation);
    free(s->managed_ext);
    free(s->managed_type);
    free(s->bios_uuid);
    free(s->instance_uuid);
    for (size_t i = 0; i < s->n_extra; i++) {
        free(s->extra[i].key);
        cs_free_secret(s->extra[i].value);
    }
    free(s->extra);
    for (size_t i = 0; i < s->n_nics; i++)
        cs_nic_clear(&s->nics[i]);
    free(s->nics);
    free(s->guest_id);
    free(s->firmware);
    free(s->boot_protocol);
    for (size_t i = 0; i < s->n_disks; i++) {
        free(s->disks[i].backing_type);
        free(s->disks[i].file_name);
        free(s->disks[i].disk_mode);
        free(s->disks[i].label);
    }
    free(s->disks);
    free(s);
}

void vim_cs_num_cpus(struct vim_config_spec *s, int n)
{
    if (s && n > 0)
        s->num_cpus = n;
}

void vim_cs_memory_mb(struct vim_config_spec *s, long mb)
{
    if (s && mb > 0)
        s->memory_mb = mb;
}

void vim_cs_cpu_alloc(struct vim_config_spec *s, const struct vim_alloc *a)
{
    if (s && a) {
        s->cpu_alloc = *a;
        s->has_cpu_alloc = 1;
    }
}

void vim_cs_mem_alloc(struct vim_config_spec *s, const struct vim_alloc *a)
{
    if (s && a) {
        s->mem_alloc = *a;
        s->has_mem_alloc = 1;
    }
}

/* Replaces *slot with a copy of text (at most max bytes). */
static vmop_rc cs_set_str(char **slot, const char *text, size_t max)
{
    char *copy;

    if (!text || strlen(text) > max)
        return VMOP_E_INVALID;
    copy = strdup(text);
    if (!copy)
        return VMOP_E_NOMEM;
    free(*slot);
    *slot = copy;
    return VMOP_OK;
}

vmop_rc vim_cs_annotation(struct vim_config_spec *s, const char *text)
{
    if (!s)
        return VMOP_E_INVALID;
    return cs_set_str(&s->annotation, text, CS_MAX_TEXT);
}

vmop_rc vim_cs_managed_by(struct vim_config_spec *s, const char *extension_key, const char *type)
{
    char *ext = NULL, *typ = NULL;
    vmop_rc rc;

    if (!s || !extension_key || !*extension_key || !type || !*type)
        return VMOP_E_INVALID;
    rc = cs_set_str(&ext, extension_key, 256);
    if (!rc)
        rc = cs_set_str(&typ, type, 256);
    if (rc) {
        free(ext);
        free(typ);
        return rc;
    }
    free(s->managed_ext);
    free(s->managed_type);
    s->managed_ext = ext;
    s->managed_type = typ;
    return VMOP_OK;
}

/* A UUID in the canonical 8-4-4-4-12 hex form; copied lower-cased (vcsim's FindByUuid is
 * case-sensitive and vim_find_vm_by_uuid lower-cases what it looks for). */
static vmop_rc cs_set_uuid(char **slot, const char *uuid)
{
    char buf[37];

    if (!uuid || strlen(uuid) != 36)
        return VMOP_E_INVALID;
    for (size_t i = 0; i < 36; i++) {
        unsigned char ch = (unsigned char)uuid[i];

        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (ch != '-')
                return VMOP_E_INVALID;
        } else if (!isxdigit(ch)) {
            return VMOP_E_INVALID;
        }
        buf[i] = (char)tolower(ch);
    }
    buf[36] = '\0';
    return cs_set_str(slot, buf, 36);
}

vmop_rc vim_cs_bios_uuid(struct vim_config_spec *s, const char *uuid)
{
    return s ? cs_set_uuid(&s->bios_uuid, uuid) : VMOP_E_INVALID;
}

vmop_rc vim_cs_instance_uuid(struct vim_config_spec *s, const char *uuid)
{
    return s ? cs_set_uuid(&s->instance_uuid, uuid) : VMOP_E_INVALID;
}

vmop_rc vim_cs_extra_config(struct vim_config_spec *s, const char *key, const char *value)
{
    char *v = NULL;
    struct cs_option *grown;

    if (!s || !key || !*key || strlen(key) > CS_MAX_KEY)
        return VMOP_E_INVALID;
    if (value && !(v = strdup(value)))
        return VMOP_E_NOMEM;
    /* One entry per key in a spec: a second set replaces the first. */
    for (size_t i = 0; i < s->n_extra; i++) {
        if (strcmp(s->extra[i].key, key) == 0) {
            cs_free_secret(s->extra[i].value);
            s->extra[i].value = v;
            return VMOP_OK;
        }
    }
    if (s->n_extra >= CS_MAX_EXTRA) {
        cs_free_secret(v);
        return VMOP_E_TOOBIG;
    }
    grown = realloc(s->extra, (s->n_extra + 1) * sizeof(*grown));
    if (!grown) {
        cs_free_secret(v);
        return VMOP_E_NOMEM;
    }
    s->extra = grown;
    s->extra[s->n_extra].key = strdup(key);
    if (!s->extra[s->n_extra].key) {
        cs_free_secret(v);
        return VMOP_E_NOMEM;
    }
    s->extra[s->n_extra].value = v;
    s->n_extra++;
    return VMOP_OK;
}

/* Device type names go into an attribute: letters and digits only. */
static int cs_type_ok(const char *t)
{
    size_t n = t ? strlen(t) : 0;

    if (n == 0 || n > 64)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)t[i]))
            return 0;
    return 1;
}

static vmop_rc cs_dup_opt(char **slot, const char *s)
{
    if (!s)
        return VMOP_OK;
    if (strlen(s) > 1024)
        return VMOP_E_INVALID;
    *slot = strdup(s);
    return *slot ? VMOP_OK : VMOP_E_NOMEM;
}

/* Appends a NIC change; on failure nothing is added. */
static vmop_rc cs_add_nic(struct vim_config_spec *s, enum cs_dev_op op, int key,
                          const char *device_type, const char *label, const char *mac,
                          const char *switch_uuid, const char *portgroup_key, int connected,
                          int start_connected, int controller_key, int unit_number)
{
    struct cs_nic n = {.op = op,
                       .key = key,
                       .connected = connected,
                       .start_connected = start_connected,
                       .controller_key = controller_key,
                       .unit_number = unit_number};
    struct cs_nic *grown;
    vmop_rc rc;

    if (s->n_nics >= CS_MAX_DEVICES)
        return VMOP_E_TOOBIG;
    if (!cs_type_ok(device_type))
        return VMOP_E_INVALID;
    rc = cs_dup_opt(&n.device_type, device_type);
    if (!rc)
        rc = cs_dup_opt(&n.label, label);
    if (!rc)
        rc = cs_dup_opt(&n.mac, mac);
    if (!rc)
        rc = cs_dup_opt(&n.switch_uuid, switch_uuid);
    if (!rc)
        rc = cs_dup_opt(&n.portgroup_key, portgroup_key);
    if (!rc) {
        grown = realloc(s->nics, (s->n_nics + 1) * sizeof(*grown));
        if (!grown)
            rc = VMOP_E_NOMEM;
        else
            s->nics = grown;
    }
    if (rc) {
        cs_nic_clear(&n);
        return rc;
    }
    s->nics[s->n_nics++] = n;
    return VMOP_OK;
}

vmop_rc vim_cs_nic_add_dvpg(struct vim_config_spec *s, const char *device_type,
                            const char *switch_uuid, const char *portgroup_key, const char *mac)
{
    vmop_rc rc;

    if (!s || !switch_uuid || !*switch_uuid || !portgroup_key || !*portgroup_key)
        return VMOP_E_INVALID;
    if (mac && !*mac)
        mac = NULL;
    rc = cs_add_nic(s, CS_ADD, s->next_add_key, device_type ? device_type : "VirtualVmxnet3", NULL,
                    mac, switch_uuid, portgroup_key, 1, 1, -1, -1);
    if (!rc)
        s->next_add_key--;
    return rc;
}

vmop_rc vim_cs_nic_edit_dvpg(struct vim_config_spec *s, const struct vim_nic *nic,
                             const char *switch_uuid, const char *portgroup_key)
{
    if (!s || !nic || nic->key <= 0 || !switch_uuid || !*switch_uuid || !portgroup_key ||
        !*portgroup_key)
        return VMOP_E_INVALID;
    /* The device as read, re-backed; connected as before (startConnected kept too). */
    return cs_add_nic(s, CS_EDIT, nic->key,
                      nic->device_type ? nic->device_type : "VirtualEthernetCard", nic->label,
                      nic->mac, switch_uuid, portgroup_key, nic->connected, nic->start_connected,
                      nic->controller_key, nic->unit_number);
}

vmop_rc vim_cs_nic_remove(struct vim_config_spec *s, const struct vim_nic *nic)
{
    if (!s || !nic || nic->key <= 0)
        return VMOP_E_INVALID;
    return cs_add_nic(s, CS_REMOVE, nic->key,
                      nic->device_type ? nic->device_type : "VirtualEthernetCard", nic->label, NULL,
                      nic->portgroup_key ? nic->switch_uuid : NULL, nic->portgroup_key, 0, 0, -1,
                      -1);
}

/* Identifier-like values (guest IDs, xsi:types): letters, digits and '_' only, 1..64 bytes. */
static int cs_ident_ok(const char *t)
{
    size_t n = t ? strlen(t) : 0;

    if (n == 0 || n > 64)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)t[i]) && t[i] != '_')
            return 0;
    return 1;
}

vmop_rc vim_cs_guest_id(struct vim_config_spec *s, const char *guest_id)
{
    if (!s || !cs_ident_ok(guest_id))
        return VMOP_E_INVALID;
    return cs_set_str(&s->guest_id, guest_id, 64);
}

vmop_rc vim_cs_firmware(struct vim_config_spec *s, const char *firmware)
{
    if (!s || !firmware || (strcmp(firmware, "bios") && strcmp(firmware, "efi")))
        return VMOP_E_INVALID;
    return cs_set_str(&s->firmware, firmware, 8);
}

void vim_cs_change_tracking(struct vim_config_spec *s, int enabled)
{
    if (s)
        s->change_tracking = enabled ? 1 : 0;
}

vmop_rc vim_cs_boot_options(struct vim_config_spec *s, const struct vim_boot_spec *b)
{
    char *proto = NULL;

    if (!s || !b || b->n_order > VIM_BOOT_MAX_ORDER || (b->n_order && !b->order))
        return VMOP_E_INVALID;
    if (b->network_protocol) {
        if (strcmp(b->network_protocol, "ipv4") && strcmp(b->network_protocol, "ipv6"))
            return VMOP_E_INVALID;
        if (!(proto = strdup(b->network_protocol)))
            return VMOP_E_NOMEM;
    }
    for (size_t i = 0; i < b->n_order; i++)
        if (b->order[i].kind != VIM_BOOT_DISK && b->order[i].kind != VIM_BOOT_ETHERNET &&
            b->order[i].kind != VIM_BOOT_CDROM) {
            free(proto);
            return VMOP_E_INVALID;
        }
    free(s->boot_protocol);
    s->boot_protocol = proto;
    s->boot = *b;
    s->boot.network_protocol = proto;
    memcpy(s->boot_order, b->order, b->n_order * sizeof(b->order[0]));
    s->boot.order = s->boot_order;
    s->has_boot = 1;
    return VMOP_OK;
}

vmop_rc vim_cs_disk_capacity(struct vim_config_spec *s, const struct vim_disk *disk,
                             long long capacity_kb)
{
    struct cs_disk d = {.thin = -1};
    struct cs_disk *grown;
    vmop_rc rc = VMOP_OK;

    if (!s || !disk || disk->key <= 0 || capacity_kb <= 0 ||
        capacity_kb > (long long)(INT64_MAX / 1024) || !cs_ident_ok(disk->backing_type))
        return VMOP_E_INVALID;
    if (s->n_disks >= CS_MAX_DEVICES)
        return VMOP_E_TOOBIG;
    d.key = disk->key;
    d.controller_key = disk->controller_key;
    d.unit_number = disk->unit_number;
    d.thin = disk->thin;
    d.capacity_kb = capacity_kb;
    rc = cs_dup_opt(&d.backing_type, disk->backing_type);
    if (!rc)
        rc = cs_dup_opt(&d.file_name, disk->file_name);
    if (!rc)
        rc = cs_dup_opt(&d.disk_mode, disk->disk_mode);
    if (!rc)
        rc = cs_dup_opt(&d.label, disk->label);
    if (!rc) {
        grown = realloc(s->disks, (s->n_disks + 1) * sizeof(*grown));
        if (!grown)
            rc = VMOP_E_NOMEM;
        else
            s->disks = grown;
    }
    if (rc) {
        free(d.backing_type);
        free(d.file_name);
        free(d.disk_mode);
        free(d.label);
        return rc;
    }
    s->disks[s->n_disks++] = d;
    return VMOP_OK;
}

/* ---- serializer ---------------------------------------------------------------------------- */

/* A disk edit: the device as read with the new capacity (both units, which must agree), with
 * deviceInfo (vcsim dereferences it on every edit). */
static void cs_add_disk_xml(struct vbuf *b, const struct cs_disk *d)
{
    const char *label = d->label ? d->label : "Hard disk";

    vbuf_addf(b,
              "<deviceChange><operation>edit</operation><device xsi:type=\"VirtualDisk\">"
              "<key>%d</key>",
              d->key);
    vbuf_adds(b, "<deviceInfo>");
    vbuf_add_xml_elem(b, "label", label);
    vbuf_add_xml_elem(b, "summary", label);
    vbuf_adds(b, "</deviceInfo><backing xsi:type=\"");
    vbuf_add_xml_escaped(b, d->backing_type);
    vbuf_adds(b, "\">");
    if (d->file_name)
        vbuf_add_xml_elem(b, "fileName", d->file_name);
    if (d->disk_mode)
        vbuf_add_xml_elem(b, "diskMode", d->disk_mode);
    if (d->thin >= 0)
        vbuf_addf(b, "<thinProvisioned>%s</thinProvisioned>", d->thin ? "true" : "false");
    vbuf_adds(b, "</backing>");
    if (d->controller_key >= 0)
        vbuf_addf(b, "<controllerKey>%d</controllerKey>", d->controller_key);
    if (d->unit_number >= 0)
        vbuf_addf(b, "<unitNumber>%d</unitNumber>", d->unit_number);
    vbuf_addf(b, "<capacityInKB>%lld</capacityInKB><capacityInBytes>%lld</capacityInBytes>",
              d->capacity_kb, d->capacity_kb * 1024);
    vbuf_adds(b, "</device></deviceChange>");
}

static void cs_add_boot_xml(struct vbuf *b, const struct vim_boot_spec *o)
{
    static const char *const types[] = {
        [VIM_BOOT_DISK] = "VirtualMachineBootOptionsBootableDiskDevice",
        [VIM_BOOT_ETHERNET] = "VirtualMachineBootOptionsBootableEthernetDevice",
        [VIM_BOOT_CDROM] = "VirtualMachineBootOptionsBootableCdromDevice",
    };

    vbuf_adds(b, "<bootOptions>");
    if (o->delay_ms >= 0)
        vbuf_addf(b, "<bootDelay>%lld</bootDelay>", o->delay_ms);
    if (o->enter_setup >= 0)
        vbuf_addf(b, "<enterBIOSSetup>%s</enterBIOSSetup>", o->enter_setup ? "true" : "false");
    if (o->efi_secure_boot >= 0)
        vbuf_addf(b, "<efiSecureBootEnabled>%s</efiSecureBootEnabled>",
                  o->efi_secure_boot ? "true" : "false");
    if (o->retry >= 0)
        vbuf_addf(b, "<bootRetryEnabled>%s</bootRetryEnabled>", o->retry ? "true" : "false");
    if (o->retry_delay_ms >= 0)
        vbuf_addf(b, "<bootRetryDelay>%lld</bootRetryDelay>", o->retry_delay_ms);
    for (size_t i = 0; o->set_order && i < o->n_order; i++) {
        vbuf_addf(b, "<bootOrder xsi:type=\"%s\">", types[o->order[i].kind]);
        if (o->order[i].kind != VIM_BOOT_CDROM)
            vbuf_addf(b, "<deviceKey>%d</deviceKey>", o->order[i].device_key);
        vbuf_adds(b, "</bootOrder>");
    }
    if (o->network_protocol)
        vbuf_add_xml_elem(b, "networkBootProtocol", o->network_protocol);
    vbuf_adds(b, "</bootOptions>");
}

/* ResourceAllocationInfo, members in WSDL order; VIM_ALLOC_UNSET / -1 / UNSET are left out. */
static void cs_add_alloc(struct vbuf *b, const char *elem, const struct vim_alloc *a)
{
    const char *level = vim_shares_level_str(a->shares_level);

    vbuf_addf(b, "<%s>", elem);
    if (a->reservation != VIM_ALLOC_UNSET)
        vbuf_addf(b, "<reservation>%lld</reservation>", a->reservation);
    if (a->expandable >= 0)
        vbuf_addf(b, "<expandableReservation>%s</expandableReservation>",
                  a->expandable ? "true" : "false");
    if (a->limit != VIM_ALLOC_UNSET)
        vbuf_addf(b, "<limit>%lld</limit>", a->limit);
    if (level)
        vbuf_addf(b, "<shares><shares>%d</shares><level>%s</level></shares>", a->shares, level);
    vbuf_addf(b, "</%s>", elem);
}

static void cs_add_nic_xml(struct vbuf *b, const struct cs_nic *n)
{
    static const char *const ops[] = {"add", "edit", "remove"};

    vbuf_addf(b, "<deviceChange><operation>%s</operation><device xsi:type=\"", ops[n->op]);
    vbuf_add_xml_escaped(b, n->device_type);
    vbuf_addf(b, "\"><key>%d</key>", n->key);
    if (n->op == CS_EDIT || n->label) {
        /* summary is required by the schema; vCenter and vcsim regenerate it */
        const char *label = n->label ? n->label : "Network adapter";

        vbuf_adds(b, "<deviceInfo>");
        vbuf_add_xml_elem(b, "label", label);
        vbuf_add_xml_elem(b, "summary", n->portgroup_key ? n->portgroup_key : label);
        vbuf_adds(b, "</deviceInfo>");
    }
    if (n->switch_uuid && n->portgroup_key) {
        vbuf_adds(b, "<backing xsi:type=\"VirtualEthernetCardDistributedVirtualPortBackingInfo\">"
                     "<port>");
        vbuf_add_xml_elem(b, "switchUuid", n->switch_uuid);
        vbuf_add_xml_elem(b, "portgroupKey", n->portgroup_key);
        vbuf_adds(b, "</port></backing>");
    }
    if (n->op != CS_REMOVE)
        vbuf_addf(b,
                  "<connectable><startConnected>%s</startConnected>"
                  "<allowGuestControl>true</allowGuestControl><connected>%s</connected>"
                  "</connectable>",
                  n->start_connected ? "true" : "false", n->connected ? "true" : "false");
    if (n->controller_key >= 0)
        vbuf_addf(b, "<controllerKey>%d</controllerKey>", n->controller_key);
    if (n->unit_number >= 0)
        vbuf_addf(b, "<unitNumber>%d</unitNumber>", n->unit_number);
    if (n->op == CS_ADD)
        vbuf_adds(b, n->mac ? "<addressType>manual</addressType>"
                            : "<addressType>generated</addressType>");
    if (n->mac && n->op != CS_REMOVE)
        vbuf_add_xml_elem(b, "macAddress", n->mac);
    vbuf_adds(b, "</device></deviceChange>");
}

vmop_rc vim_config_spec_xml(const struct vim_config_spec *s, char **ret_xml, struct vmop_err *err)
{
    struct vbuf b;
    vmop_rc rc;
    char *xml;

    if (!s || !ret_xml)
        return vmop_fail(err, VMOP_E_INVALID, "vim_config_spec_xml: NULL argument");
    vbuf_init(&b, VIM_MAX_REQUEST);
    if (s->bios_uuid)
        vbuf_add_xml_elem(&b, "uuid", s->bios_uuid);
    if (s->instance_uuid)
        vbuf_add_xml_elem(&b, "instanceUuid", s->instance_uuid);
    if (s->guest_id)
        vbuf_add_xml_elem(&b, "guestId", s->guest_id);
    if (s->annotation)
        vbuf_add_xml_elem(&b, "annotation", s->annotation);
    if (s->num_cpus > 0)
        vbuf_addf(&b, "<numCPUs>%d</numCPUs>", s->num_cpus);
    if (s->memory_mb > 0)
        vbuf_addf(&b, "<memoryMB>%ld</memoryMB>", s->memory_mb);
    for (size_t i = 0; i < s->n_disks; i++)
        cs_add_disk_xml(&b, &s->disks[i]);
    for (size_t i = 0; i < s->n_nics; i++)
        cs_add_nic_xml(&b, &s->nics[i]);
    if (s->has_cpu_alloc)
        cs_add_alloc(&b, "cpuAllocation", &s->cpu_alloc);
    if (s->has_mem_alloc)
        cs_add_alloc(&b, "memoryAllocation", &s->mem_alloc);
    for (size_t i = 0; i < s->n_extra; i++) {
        vbuf_adds(&b, "<extraConfig>");
        vbuf_add_xml_elem(&b, "key", s->extra[i].key);
        /* an empty value removes the key on vCenter */
        vim_xml_add_typed(&b, "value", "xsd:string", s->extra[i].value ? s->extra[i].value : "");
        vbuf_adds(&b, "</extraConfig>");
    }
    if (s->has_boot)
        cs_add_boot_xml(&b, &s->boot);
    if (s->change_tracking >= 0)
        vbuf_addf(&b, "<changeTrackingEnabled>%s</changeTrackingEnabled>",
                  s->change_tracking ? "true" : "false");
    if (s->firmware)
        vbuf_add_xml_elem(&b, "firmware", s->firmware);
    if (s->managed_ext) {
        vbuf_adds(&b, "<managedBy>");
        vbuf_add_xml_elem(&b, "extensionKey", s->managed_ext);
        vbuf_add_xml_elem(&b, "type", s->managed_type);
        vbuf_adds(&b, "</managedBy>");
    }
    rc = vbuf_error(&b);
    if (rc) {
        vbuf_free_secure(&b);
        return vmop_fail(err, rc, "ConfigSpec: %s", vmop_rc_str(rc));
    }
    xml = b.len ? vbuf_take(&b) : strdup("");
    vbuf_free_secure(&b);
    if (!xml)
        return vmop_fail(err, VMOP_E_NOMEM, "ConfigSpec: out of memory");
    *ret_xml = xml;
    return VMOP_OK;
}
