/* vim_types.c: the table-driven description of the vSphere data objects vmop reads, and the one
 * generic decoder and destructor that walk it.
 *
 * Owns: the VirtualMachine "view" (struct vim_vm and what hangs off it: ResourceAllocationInfo +
 * SharesInfo, VirtualEthernetCard + its backings, OptionValue, GuestNicInfo), vim_vm_props[],
 * vim_vm_decode(), vim_vm_free(), vim_vm_extra_config().
 * Does not own: fetching (vim_pc.c does RetrievePropertiesEx and hands us a struct vim_object).
 *
 * One row per field says where the value is (a property path of the object, and/or a child element
 * path below it), what kind it is, and where it goes (offsetof). Absent = unset: vSphere omits
 * empty properties and elements, so a missing node leaves the field at its default. Text that is
 * not of the declared kind (a non-number for an int) is VMOP_E_PROTO; an enum value we do not know
 * is kept as "unknown" (0) so a newer server does not break reads. The only special cases are the
 * device list filter (we keep ethernet cards) and extraConfig's last-value-wins dedup (the
 * simulator appends, real vCenter replaces: vcsim.md 1.4).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <limits.h>

#include "vim_internal.h"

/* Caps on what a peer can make us allocate beyond the response size cap. */
#define VT_MAX_LIST 10000 /* items in one list (devices, extraConfig entries, IPs of a NIC) */
#define VT_MAX_PATH 128   /* length of a child path in the table (programmer-controlled) */

enum vt_kind {
    VT_STRING,      /* char *: text content, malloc'd */
    VT_ANYSTR,      /* char *: an anyType value, kept only when its xsi:type is a string */
    VT_XSITYPE,     /* char *: the node's own xsi:type ("VirtualVmxnet3") */
    VT_INT,         /* int */
    VT_LONG,        /* long */
    VT_LLONG,       /* long long */
    VT_BOOL,        /* int 0/1 */
    VT_ENUM,        /* int, through vt_field.enums */
    VT_MOREF,       /* struct vim_moref */
    VT_MOREF_FIRST, /* struct vim_moref: first item of an ArrayOfManagedObjectReference */
    VT_NESTED,      /* embedded struct described by vt_field.sub */
    VT_LIST,        /* array pointer at off, size_t count at count_off; items of item_kind */
};

#define VT_F_SECRET 1u /* zero the string before free (guestinfo values can hold user data) */

struct vt_enum {
    const char *name;
    int value;
};

struct vt_type;

struct vt_field {
    const char *prop; /* property path of the object (top-level types only), or NULL */
    const char *path; /* child element path below the property value or the object node,
                       * '/'-separated; NULL = the node itself. For a VT_LIST with a path, the
                       * items are the repeated elements named by its last part. */
    enum vt_kind kind;
    size_t off;
    long long dflt;               /* initial value of numeric / bool / enum fields */
    unsigned flags;               /* VT_F_* */
    const struct vt_enum *enums;  /* VT_ENUM: NULL-name terminated */
    const struct vt_type *sub;    /* VT_NESTED, or VT_LIST of VT_NESTED items */
    enum vt_kind item_kind;       /* VT_LIST */
    size_t count_off;             /* VT_LIST */
    int (*keep)(xmlNodePtr item); /* VT_LIST: item filter, or NULL */
};

struct vt_type {
    const char *name; /* vSphere type name, for messages */
    size_t size;
    const struct vt_field *fields;
    size_t n_fields;
};

#define VT_N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the vSphere types we read ------------------------------------------------------------ */

/* One row: where (property, child path), what kind, which field of struct ST, then extras
 * (.dflt, .enums, .sub, .item_kind, .count_off, .keep, .flags). */
#define VT_ROW(ST, p, ch, k, fld, ...)                                                             \
    {                                                                                              \
        .prop = p, .path = ch, .kind = k, .off = offsetof(ST, fld), __VA_ARGS__                    \
    }
#define VT_LIST_OF(ST, count_fld) .count_off = offsetof(ST, count_fld)

static const struct vt_enum power_states[] = {
    {"poweredOn", VIM_POWER_ON},
    {"poweredOff", VIM_POWER_OFF},
    {"suspended", VIM_POWER_SUSPENDED},
    {NULL, 0},
};

static const struct vt_enum shares_levels[] = {
    {"low", VIM_SHARES_LOW},
    {"normal", VIM_SHARES_NORMAL},
    {"high", VIM_SHARES_HIGH},
    {"custom", VIM_SHARES_CUSTOM},
    {NULL, 0},
};

/* ResourceAllocationInfo + SharesInfo (flattened into struct vim_alloc). */
#define AL(...) VT_ROW(struct vim_alloc, NULL, __VA_ARGS__)
static const struct vt_field alloc_fields[] = {
    AL("reservation", VT_LLONG, reservation, .dflt = VIM_ALLOC_UNSET),
    AL("limit", VT_LLONG, limit, .dflt = VIM_ALLOC_UNSET),
    AL("expandableReservation", VT_BOOL, expandable, .dflt = -1),
    AL("shares/level", VT_ENUM, shares_level, .enums = shares_levels),
    AL("shares/shares", VT_INT, shares),
};
static const struct vt_type alloc_type = {"ResourceAllocationInfo", sizeof(struct vim_alloc),
                                          alloc_fields, VT_N(alloc_fields)};

/* VirtualEthernetCard (any subtype) with a DVPG port backing or a standard network backing. */
#define NIC(...) VT_ROW(struct vim_nic, NULL, __VA_ARGS__)
static const struct vt_field nic_fields[] = {
    NIC("key", VT_INT, key),
    NIC(NULL, VT_XSITYPE, device_type),
    NIC("deviceInfo/label", VT_STRING, label),
    NIC("macAddress", VT_STRING, mac),
    NIC("backing/port/portgroupKey", VT_STRING, portgroup_key),
    NIC("backing/port/switchUuid", VT_STRING, switch_uuid),
    NIC("backing/deviceName", VT_STRING, network_name),
    NIC("connectable/connected", VT_BOOL, connected),
    NIC("connectable/startConnected", VT_BOOL, start_connected),
    NIC("controllerKey", VT_INT, controller_key, .dflt = -1),
    NIC("unitNumber", VT_INT, unit_number, .dflt = -1),
};
static const struct vt_type nic_type = {"VirtualEthernetCard", sizeof(struct vim_nic), nic_fields,
                                        VT_N(nic_fields)};

/* VirtualDisk (the devices vt_is_disk keeps). */
#define DISK(...) VT_ROW(struct vim_disk, NULL, __VA_ARGS__)
static const struct vt_field disk_fields[] = {
    DISK("key", VT_INT, key),
    DISK("capacityInKB", VT_LLONG, capacity_kb),
    DISK("backing/fileName", VT_STRING, file_name),
    DISK("capacityInBytes", VT_LLONG, capacity_bytes),
    DISK("backing", VT_XSITYPE, backing_type),
    DISK("deviceInfo/label", VT_STRING, label),
    DISK("backing/diskMode", VT_STRING, disk_mode),
    DISK("backing/thinProvisioned", VT_BOOL, thin, .dflt = -1),
    DISK("controllerKey", VT_INT, controller_key, .dflt = -1),
    DISK("unitNumber", VT_INT, unit_number, .dflt = -1),
};
static const struct vt_type disk_type = {"VirtualDisk", sizeof(struct vim_disk), disk_fields,
                                         VT_N(disk_fields)};

/* VirtualMachineBootOptionsBootableDevice (bootOrder entries). */
#define BDEV(...) VT_ROW(struct vim_boot_dev, NULL, __VA_ARGS__)
static const struct vt_field boot_dev_fields[] = {
    BDEV(NULL, VT_XSITYPE, type),
    BDEV("deviceKey", VT_INT, device_key, .dflt = -1),
};
static const struct vt_type boot_dev_type = {"VirtualMachineBootOptionsBootableDevice",
                                             sizeof(struct vim_boot_dev), boot_dev_fields,
                                             VT_N(boot_dev_fields)};

/* VirtualMachineBootOptions. */
#define BOOT(...) VT_ROW(struct vim_boot_options, NULL, __VA_ARGS__)
static const struct vt_field boot_fields[] = {
    BOOT("bootDelay", VT_LLONG, delay_ms, .dflt = -1),
    BOOT("enterBIOSSetup", VT_BOOL, enter_setup, .dflt = -1),
    BOOT("efiSecureBootEnabled", VT_BOOL, efi_secure_boot, .dflt = -1),
    BOOT("bootRetryEnabled", VT_BOOL, retry, .dflt = -1),
    BOOT("bootRetryDelay", VT_LLONG, retry_delay_ms, .dflt = -1),
    BOOT("networkBootProtocol", VT_STRING, network_protocol),
    BOOT("bootOrder", VT_LIST, order, .item_kind = VT_NESTED, .sub = &boot_dev_type,
         VT_LIST_OF(struct vim_boot_options, n_order)),
};
static const struct vt_type boot_type = {
    "VirtualMachineBootOptions", sizeof(struct vim_boot_options), boot_fields, VT_N(boot_fields)};

/* OptionValue (extraConfig entries). */
#define OPT(...) VT_ROW(struct vim_option, NULL, __VA_ARGS__)
static const struct vt_field option_fields[] = {
    OPT("key", VT_STRING, key),
    OPT("value", VT_ANYSTR, value, .flags = VT_F_SECRET),
};
static const struct vt_type option_type = {"OptionValue", sizeof(struct vim_option), option_fields,
                                           VT_N(option_fields)};

/* GuestNicInfo. */
#define GNIC(...) VT_ROW(struct vim_guest_nic, NULL, __VA_ARGS__)
static const struct vt_field guest_nic_fields[] = {
    GNIC("macAddress", VT_STRING, mac),
    GNIC("network", VT_STRING, network),
    GNIC("ipAddress", VT_LIST, ips, .item_kind = VT_STRING,
         VT_LIST_OF(struct vim_guest_nic, n_ips)),
    GNIC("connected", VT_BOOL, connected),
};
static const struct vt_type guest_nic_type = {"GuestNicInfo", sizeof(struct vim_guest_nic),
                                              guest_nic_fields, VT_N(guest_nic_fields)};

static int vt_is_nic(xmlNodePtr dev);
static int vt_is_disk(xmlNodePtr dev);

/* The VirtualMachine view. Every property here must be in vim_vm_props[] below (the unit test
 * decodes a response filtered to vim_vm_props and checks every field). */
#define VM(...) VT_ROW(struct vim_vm, __VA_ARGS__)
static const struct vt_field vm_fields[] = {
    VM("name", NULL, VT_STRING, name),
    VM("config.uuid", NULL, VT_STRING, bios_uuid),
    VM("config.instanceUuid", NULL, VT_STRING, instance_uuid),
    VM("config.guestId", NULL, VT_STRING, guest_id),
    VM("config.version", NULL, VT_STRING, hw_version),
    VM("config.firmware", NULL, VT_STRING, firmware),
    VM("config.changeTrackingEnabled", NULL, VT_BOOL, change_tracking, .dflt = -1),
    VM("config.bootOptions", NULL, VT_NESTED, boot, .sub = &boot_type),
    VM("config.annotation", NULL, VT_STRING, annotation),
    VM("config.managedBy", "extensionKey", VT_STRING, managed_by_ext),
    VM("config.managedBy", "type", VT_STRING, managed_by_type),
    VM("config.template", NULL, VT_BOOL, template),
    VM("runtime.powerState", NULL, VT_ENUM, power_state, .enums = power_states),
    /* summary.runtime.bootTime: vcsim does not set runtime.bootTime, vCenter sets both */
    VM("summary.runtime.bootTime", NULL, VT_STRING, boot_time),
    VM("runtime.host", NULL, VT_MOREF, host),
    VM("guest.ipAddress", NULL, VT_STRING, guest_ip),
    VM("guest.hostName", NULL, VT_STRING, guest_hostname),
    VM("guest.toolsRunningStatus", NULL, VT_STRING, tools_running),
    VM("guestHeartbeatStatus", NULL, VT_STRING, guest_heartbeat),
    VM("guest.net", NULL, VT_LIST, guest_nics, .item_kind = VT_NESTED, .sub = &guest_nic_type,
       VT_LIST_OF(struct vim_vm, n_guest_nics)),
    VM("config.hardware.numCPU", NULL, VT_INT, num_cpu),
    VM("config.hardware.memoryMB", NULL, VT_LONG, memory_mb),
    VM("config.cpuAllocation", NULL, VT_NESTED, cpu_alloc, .sub = &alloc_type),
    VM("config.memoryAllocation", NULL, VT_NESTED, mem_alloc, .sub = &alloc_type),
    VM("config.hardware.device", NULL, VT_LIST, nics, .item_kind = VT_NESTED, .sub = &nic_type,
       .keep = vt_is_nic, VT_LIST_OF(struct vim_vm, n_nics)),
    VM("config.hardware.device", NULL, VT_LIST, disks, .item_kind = VT_NESTED, .sub = &disk_type,
       .keep = vt_is_disk, VT_LIST_OF(struct vim_vm, n_disks)),
    VM("config.extraConfig", NULL, VT_LIST, extra_config, .item_kind = VT_NESTED,
       .sub = &option_type, VT_LIST_OF(struct vim_vm, n_extra_config)),
    VM("resourcePool", NULL, VT_MOREF, resource_pool),
    VM("parent", NULL, VT_MOREF, parent),
    VM("datastore", NULL, VT_MOREF_FIRST, datastore),
};
static const struct vt_type vm_type = {"VirtualMachine", sizeof(struct vim_vm), vm_fields,
                                       VT_N(vm_fields)};

const char *const vim_vm_props[] = {
    "name",
    "config.uuid",
    "config.instanceUuid",
    "config.guestId",
    "config.version",
    "config.firmware",
    "config.changeTrackingEnabled",
    "config.bootOptions",
    "config.annotation",
    "config.managedBy",
    "config.template",
    "runtime.powerState",
    "summary.runtime.bootTime",
    "runtime.host",
    "guest.ipAddress",
    "guest.hostName",
    "guest.toolsRunningStatus",
    "guestHeartbeatStatus",
    "guest.net",
    "config.hardware.numCPU",
    "config.hardware.memoryMB",
    "config.cpuAllocation",
    "config.memoryAllocation",
    "config.hardware.device",
    "config.extraConfig",
    "resourcePool",
    "parent",
    "datastore",
    NULL,
};

/* Device list filter: ethernet cards are the VirtualEthernetCard subtypes; a device of a type we
 * do not know counts as a NIC when it carries a MAC address (only ethernet cards do). */
static int vt_is_nic(xmlNodePtr dev)
{
    static const char *const nic_types[] = {
        "VirtualE1000",        "VirtualE1000e",       "VirtualVmxnet",  "VirtualVmxnet2",
        "VirtualVmxnet3",      "VirtualVmxnet3Vrdma", "VirtualPCNet32", "VirtualSriovEthernetCard",
        "VirtualEthernetCard",
    };
    char *t = vim_xml_xsi_type(dev);
    int yes = 0;

    if (t) {
        for (size_t i = 0; i < VT_N(nic_types) && !yes; i++)
            yes = strcmp(t, nic_types[i]) == 0;
        free(t);
    }
    return yes || vim_xml_child(dev, "macAddress") != NULL;
}

/* Device list filter: virtual disks (xsi:type VirtualDisk; it has no subtypes). */
static int vt_is_disk(xmlNodePtr dev)
{
    char *t = vim_xml_xsi_type(dev);
    int yes = t && strcmp(t, "VirtualDisk") == 0;
    free(t);
    return yes;
}

/* ---- the generic walker ------------------------------------------------------------------- */

/* Follows a '/'-separated child path from node; NULL path = node itself. */
static xmlNodePtr vt_walk(xmlNodePtr node, const char *path)
{
    char part[VT_MAX_PATH];

    while (node && path && *path) {
        const char *slash = strchr(path, '/');
        size_t n = slash ? (size_t)(slash - path) : strlen(path);

        if (n == 0 || n >= sizeof(part))
            return NULL;
        memcpy(part, path, n);
        part[n] = '\0';
        node = vim_xml_child(node, part);
        path = slash ? slash + 1 : NULL;
    }
    return node;
}

static const char *vt_last_part(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static size_t vt_kind_size(enum vt_kind k, const struct vt_type *sub)
{
    switch (k) {
    case VT_STRING:
    case VT_ANYSTR:
    case VT_XSITYPE:
        return sizeof(char *);
    case VT_INT:
    case VT_BOOL:
    case VT_ENUM:
        return sizeof(int);
    case VT_LONG:
        return sizeof(long);
    case VT_LLONG:
        return sizeof(long long);
    case VT_MOREF:
    case VT_MOREF_FIRST:
        return sizeof(struct vim_moref);
    case VT_NESTED:
        return sub->size;
    case VT_LIST:
        break;
    }
    return 0; /* lists of lists are not described */
}

static void vt_set_num(enum vt_kind k, void *dst, long long v)
{
    switch (k) {
    case VT_INT:
    case VT_BOOL:
    case VT_ENUM:
        *(int *)dst = (int)v;
        break;
    case VT_LONG:
        *(long *)dst = (long)v;
        break;
    case VT_LLONG:
        *(long long *)dst = v;
        break;
    default:
        break;
    }
}

/* Applies the table's defaults to a zeroed struct (recursively into nested structs). */
static void vt_init(const struct vt_type *t, void *base)
{
    for (size_t i = 0; i < t->n_fields; i++) {
        const struct vt_field *f = &t->fields[i];
        char *p = (char *)base + f->off;

        if (f->kind == VT_NESTED)
            vt_init(f->sub, p);
        else
            vt_set_num(f->kind, p, f->dflt);
    }
}

static void vt_free_str(char *s, unsigned flags)
{
    if (s && (flags & VT_F_SECRET))
        explicit_bzero(s, strlen(s));
    free(s);
}

static void vt_free(const struct vt_type *t, void *base);

static void vt_free_value(enum vt_kind k, const struct vt_type *sub, unsigned flags, void *p)
{
    switch (k) {
    case VT_STRING:
    case VT_ANYSTR:
    case VT_XSITYPE:
        vt_free_str(*(char **)p, flags);
        *(char **)p = NULL;
        break;
    case VT_NESTED:
        vt_free(sub, p);
        break;
    default:
        break;
    }
}

/* Frees what the struct at base owns (not base itself). */
static void vt_free(const struct vt_type *t, void *base)
{
    for (size_t i = 0; i < t->n_fields; i++) {
        const struct vt_field *f = &t->fields[i];
        char *p = (char *)base + f->off;

        if (f->kind == VT_LIST) {
            char *items = *(char **)p;
            size_t *count = (size_t *)((char *)base + f->count_off);
            size_t sz = vt_kind_size(f->item_kind, f->sub);

            for (size_t j = 0; items && j < *count; j++)
                vt_free_value(f->item_kind, f->sub, f->flags, items + j * sz);
            free(items);
            *(char **)p = NULL;
            *count = 0;
        } else {
            vt_free_value(f->kind, f->sub, f->flags, p);
        }
    }
}

static vmop_rc vt_parse_ll(const char *s, long long lo, long long hi, long long *ret)
{
    char *end;
    long long v;

    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    if (!*s)
        return VMOP_E_PROTO;
    errno = 0;
    v = strtoll(s, &end, 10);
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
        end++;
    if (errno || *end || v < lo || v > hi)
        return VMOP_E_PROTO;
    *ret = v;
    return VMOP_OK;
}

static vmop_rc vt_decode(const struct vt_type *t, xmlNodePtr node, const struct vim_object *obj,
                         void *base, struct vmop_err *err);

/* Decodes one value of kind k from node into p. `what` names it in errors. */
static vmop_rc vt_decode_value(const struct vt_field *f, enum vt_kind k, xmlNodePtr node, void *p,
                               const char *what, struct vmop_err *err)
{
    char *text = NULL;
    long long v = 0;
    vmop_rc rc = VMOP_OK;

    switch (k) {
    case VT_STRING:
        text = vim_xml_text(node);
        if (!text)
            return vmop_fail(err, VMOP_E_NOMEM, "decoding %s: out of memory", what);
        *(char **)p = text;
        return VMOP_OK;
    case VT_ANYSTR: {
        /* anyType: keep only strings (an absent xsi:type is read as text too) */
        char *xt = vim_xml_xsi_type(node);
        int is_str = !xt || strcmp(xt, "string") == 0;

        free(xt);
        if (!is_str)
            return VMOP_OK;
        text = vim_xml_text(node);
        if (!text)
            return vmop_fail(err, VMOP_E_NOMEM, "decoding %s: out of memory", what);
        *(char **)p = text;
        return VMOP_OK;
    }
    case VT_XSITYPE:
        *(char **)p = vim_xml_xsi_type(node); /* NULL when untyped */
        return VMOP_OK;
    case VT_INT:
    case VT_LONG:
    case VT_LLONG: {
        long long lo = k == VT_INT ? INT_MIN : k == VT_LONG ? LONG_MIN : LLONG_MIN;
        long long hi = k == VT_INT ? INT_MAX : k == VT_LONG ? LONG_MAX : LLONG_MAX;

        text = vim_xml_text(node);
        if (!text)
            return vmop_fail(err, VMOP_E_NOMEM, "decoding %s: out of memory", what);
        if (vt_parse_ll(text, lo, hi, &v) != VMOP_OK)
            rc = vmop_fail(err, VMOP_E_PROTO, "decoding %s: not an integer in range", what);
        else
            vt_set_num(k, p, v);
        break;
    }
    case VT_BOOL:
        text = vim_xml_text(node);
        if (!text)
            return vmop_fail(err, VMOP_E_NOMEM, "decoding %s: out of memory", what);
        if (strcmp(text, "true") == 0 || strcmp(text, "1") == 0)
            *(int *)p = 1;
        else if (strcmp(text, "false") == 0 || strcmp(text, "0") == 0)
            *(int *)p = 0;
        else
            rc = vmop_fail(err, VMOP_E_PROTO, "decoding %s: not a boolean", what);
        break;
    case VT_ENUM:
        text = vim_xml_text(node);
        if (!text)
            return vmop_fail(err, VMOP_E_NOMEM, "decoding %s: out of memory", what);
        *(int *)p = 0; /* unknown value = unset */
        for (const struct vt_enum *e = f->enums; e && e->name; e++) {
            if (strcmp(e->name, text) == 0) {
                *(int *)p = e->value;
                break;
            }
        }
        break;
    case VT_MOREF_FIRST:
        node = vim_xml_first(node);
        if (!node)
            return VMOP_OK; /* empty array */
        /* fall through */
    case VT_MOREF:
        if (vim_xml_moref(node, (struct vim_moref *)p) != VMOP_OK)
            rc = vmop_fail(err, VMOP_E_PROTO, "decoding %s: not a managed object reference", what);
        break;
    case VT_NESTED:
        return vt_decode(f->sub, node, NULL, p, err);
    case VT_LIST:
        return vmop_fail(err, VMOP_E_INTERNAL, "decoding %s: list of lists", what);
    }
    free(text);
    return rc;
}

/* A list field: items are the element children of `node` (a property's ArrayOf... value) when the
 * field has no path, else `node` and its same-named siblings. */
static vmop_rc vt_decode_list(const struct vt_field *f, xmlNodePtr node, void *base,
                              struct vmop_err *err)
{
    const char *name = f->path ? vt_last_part(f->path) : NULL;
    xmlNodePtr first = f->path ? node : vim_xml_first(node);
    size_t sz = vt_kind_size(f->item_kind, f->sub);
    size_t n = 0, i = 0;
    char *items;
    vmop_rc rc;

    for (xmlNodePtr it = first; it; it = vim_xml_next(it, name)) {
        if (f->keep && !f->keep(it))
            continue;
        if (++n > VT_MAX_LIST)
            return vmop_fail(err, VMOP_E_TOOBIG, "decoding %s: more than %d items",
                             f->prop ? f->prop : f->path, VT_MAX_LIST);
    }
    if (n == 0)
        return VMOP_OK;
    items = calloc(n, sz);
    if (!items)
        return vmop_fail(err, VMOP_E_NOMEM, "decoding %s: out of memory",
                         f->prop ? f->prop : f->path);
    /* Hand the array over first so a failure half-way is freed by the caller's vt_free. */
    *(char **)((char *)base + f->off) = items;
    for (xmlNodePtr it = first; it && i < n; it = vim_xml_next(it, name)) {
        if (f->keep && !f->keep(it))
            continue;
        if (f->item_kind == VT_NESTED)
            vt_init(f->sub, items + i * sz);
        *(size_t *)((char *)base + f->count_off) = i + 1;
        rc = vt_decode_value(f, f->item_kind, it, items + i * sz, f->prop ? f->prop : f->path, err);
        if (rc)
            return rc;
        i++;
    }
    return VMOP_OK;
}

/* Decodes the fields of t. Fields with `prop` are looked up in obj; the others below node. */
static vmop_rc vt_decode(const struct vt_type *t, xmlNodePtr node, const struct vim_object *obj,
                         void *base, struct vmop_err *err)
{
    for (size_t i = 0; i < t->n_fields; i++) {
        const struct vt_field *f = &t->fields[i];
        xmlNodePtr n;
        vmop_rc rc;

        if (f->prop) {
            n = obj ? vim_object_prop(obj, f->prop) : NULL;
            if (n && f->path)
                n = vt_walk(n, f->path);
        } else {
            n = vt_walk(node, f->path);
        }
        if (!n)
            continue; /* absent = unset */
        if (f->kind == VT_LIST)
            rc = vt_decode_list(f, n, base, err);
        else
            rc = vt_decode_value(f, f->kind, n, (char *)base + f->off,
                                 f->prop   ? f->prop
                                 : f->path ? f->path
                                           : t->name,
                                 err);
        if (rc)
            return rc;
    }
    return VMOP_OK;
}

/* ---- VirtualMachine ----------------------------------------------------------------------- */

/* extraConfig: keep only the last occurrence of each key (vcsim appends on every reconfigure;
 * real VC replaces, so this is a no-op there). Entries without a key are dropped. */
static void vt_extra_config_dedup(struct vim_vm *vm)
{
    size_t out = 0;

    for (size_t i = 0; i < vm->n_extra_config; i++) {
        struct vim_option *o = &vm->extra_config[i];
        int later = !o->key;

        for (size_t j = i + 1; j < vm->n_extra_config && !later; j++)
            later = vm->extra_config[j].key && strcmp(vm->extra_config[j].key, o->key) == 0;
        if (later) {
            vt_free(&option_type, o);
            continue;
        }
        vm->extra_config[out++] = *o;
    }
    for (size_t i = out; i < vm->n_extra_config; i++)
        memset(&vm->extra_config[i], 0, sizeof(vm->extra_config[i]));
    vm->n_extra_config = out;
}

vmop_rc vim_vm_decode(const struct vim_object *obj, struct vim_vm **ret_vm, struct vmop_err *err)
{
    struct vim_vm *vm = NULL;
    vmop_rc rc;

    if (!obj || !ret_vm)
        return vmop_fail(err, VMOP_E_INVALID, "vim_vm_decode: NULL argument");
    vm = calloc(1, sizeof(*vm));
    if (!vm)
        return vmop_fail(err, VMOP_E_NOMEM, "vim_vm_decode: out of memory");
    vt_init(&vm_type, vm);
    vm->ref = obj->ref;
    rc = vt_decode(&vm_type, NULL, obj, vm, err);
    if (rc)
        goto out;
    vt_extra_config_dedup(vm);
    *ret_vm = vm;
    vm = NULL;
out:
    vim_vm_free(vm);
    return rc;
}

void vim_vm_free(struct vim_vm *vm)
{
    if (!vm)
        return;
    vt_free(&vm_type, vm);
    free(vm);
}

const char *vim_vm_extra_config(const struct vim_vm *vm, const char *key)
{
    if (!vm || !key)
        return NULL;
    /* from the end: last wins even if a caller built the array by hand */
    for (size_t i = vm->n_extra_config; i-- > 0;) {
        if (vm->extra_config[i].key && strcmp(vm->extra_config[i].key, key) == 0)
            return vm->extra_config[i].value;
    }
    return NULL;
}
