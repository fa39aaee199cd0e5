/* vimc.c: `vimc`, the command-line front end to vimclient, for admins and the demo.
 *
 * Owns: argument parsing, the connection settings (flags and VIMC_* environment variables), and
 * printing results as text or JSON. Everything it does goes through the public vimclient.h API.
 *
 * The password is read only from VIMC_PASSWORD (or a prompt on a terminal), never from a flag, so
 * it does not show in `ps`; it is never printed. Exit codes: 0 success, 1 failure (one line
 * "vimc: <message>" on stderr), 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "vimclient.h"

#define EXIT_USAGE 2

static const char usage_text[] =
    "usage: vimc [OPTIONS] COMMAND [ARGS]\n"
    "\n"
    "Commands:\n"
    "  about                          server product, API version and instance UUID\n"
    "  ls [TYPE] [PATH]               list objects of TYPE (default vm) under inventory PATH\n"
    "                                 TYPE: vm, host, cluster, pool, ds, net, dvpg, folder, dc,\n"
    "                                 or a vSphere type name (VirtualMachine, Datastore, ...)\n"
    "  find PATH                      the MoRef at an inventory path\n"
    "  vm info VM                     a VM's identity, power, guest, sizing, NICs, disks,\n"
    "                                 firmware, boot options, extraConfig\n"
    "  vm power on|off|suspend|reset|shutdown|standby|reboot VM\n"
    "  vm destroy [--force] VM        destroy a VM (--force powers it off first)\n"
    "  vm guestinfo --reveal VM       the guestinfo.* ExtraConfig keys and values as JSON (user "
    "data!)\n"
    "  lib ls                         content libraries\n"
    "  lib items LIB                  items of a library (LIB = name or id)\n"
    "  lib deploy ITEM NAME --pool P --folder F [--datastore D] [--host H]\n"
    "             [--network OVFNET=NET]... [--power-on]\n"
    "                                 deploy a library item (ITEM = id or LIB/ITEMNAME)\n"
    "\n"
    "VM is an inventory path (/DC0/vm/name), a MoRef (VirtualMachine:vm-42) or a VM id (vm-42).\n"
    "P, F, D, H and NET are inventory paths or MoRef values.\n"
    "\n"
    "Options:\n"
    "  --url URL          vCenter URL (env VIMC_URL), e.g. https://vc.example.com\n"
    "  --username USER    user name (env VIMC_USERNAME); the password comes from VIMC_PASSWORD\n"
    "  --thumbprint TP    pin the server certificate's SHA-1 or SHA-256 (env VIMC_THUMBPRINT)\n"
    "  --ca-file FILE     PEM CA bundle (env VIMC_CA_FILE)\n"
    "  --insecure         no TLS verification at all (env VIMC_INSECURE=1)\n"
    "  --timeout SECONDS  bound on each call (default 60)\n"
    "  --json             print results as JSON\n"
    "  -h, --help         this text\n";

struct opts {
    const char *url, *username, *password, *thumbprint, *ca_file;
    int insecure;
    long timeout_s;
    int json;
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("vimc: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n(run 'vimc --help' for usage)\n", stderr);
    return EXIT_USAGE;
}

static int fail(const struct vmop_err *err)
{
    const char *msg = err->msg[0] ? err->msg : vmop_rc_str(err->rc);
    if (err->fault[0] && !strstr(msg, err->fault))
        fprintf(stderr, "vimc: %s [%s]\n", msg, err->fault);
    else
        fprintf(stderr, "vimc: %s\n", msg);
    return EXIT_FAILURE;
}

static int env_true(const char *v)
{
    return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes"));
}

/* ---- output helpers ------------------------------------------------------------------------ */

static int print_json(cJSON *root)
{
    char *s = root ? cJSON_Print(root) : NULL;
    int rc = EXIT_SUCCESS;
    if (!s) {
        fputs("vimc: out of memory printing JSON\n", stderr);
        rc = EXIT_FAILURE;
    } else {
        puts(s);
    }
    cJSON_free(s);
    cJSON_Delete(root);
    return rc;
}

static void moref_str(const struct vim_moref *r, char *buf, size_t n)
{
    if (vim_moref_is_set(r))
        snprintf(buf, n, "%s:%s", r->type, r->value);
    else
        snprintf(buf, n, "-");
}

static void json_moref(cJSON *obj, const char *name, const struct vim_moref *r)
{
    char buf[VIM_MOREF_TYPE_MAX + VIM_MOREF_VALUE_MAX + 2];
    if (!vim_moref_is_set(r))
        return;
    moref_str(r, buf, sizeof(buf));
    cJSON_AddStringToObject(obj, name, buf);
}

static void json_str(cJSON *obj, const char *name, const char *v)
{
    if (v)
        cJSON_AddStringToObject(obj, name, v);
}

/* ---- resolving arguments ------------------------------------------------------------------- */

/* "/inventory/path" -> FindByInventoryPath (of want_type when given); "Type:value" -> that
 * MoRef; "value" -> a MoRef of dflt_type. */
static vmop_rc resolve(struct vim_client *c, const char *arg, const char *dflt_type,
                       const char *want_type, struct vim_moref *ret, struct vmop_err *err)
{
    const char *colon;
    char type[VIM_MOREF_TYPE_MAX];

    if (!arg || !*arg)
        return vmop_fail(err, VMOP_E_INVALID, "an inventory path or MoRef is required");
    if (arg[0] == '/')
        return vim_find_by_path(c, arg, want_type, ret, err);
    colon = strchr(arg, ':');
    if (colon && (size_t)(colon - arg) < sizeof(type)) {
        snprintf(type, sizeof(type), "%.*s", (int)(colon - arg), arg);
        if (vim_moref_set(ret, type, colon + 1))
            return vmop_fail(err, VMOP_E_INVALID, "'%s' is not a MoRef", arg);
        return VMOP_OK;
    }
    if (vim_moref_set(ret, dflt_type, arg))
        return vmop_fail(err, VMOP_E_INVALID, "'%s' is not a MoRef value", arg);
    return VMOP_OK;
}

static const char *type_alias(const char *t)
{
    static const struct {
        const char *alias, *type;
    } map[] = {
        {"vm", "VirtualMachine"},
        {"vms", "VirtualMachine"},
        {"host", "HostSystem"},
        {"hosts", "HostSystem"},
        {"cluster", "ClusterComputeResource"},
        {"clusters", "ClusterComputeResource"},
        {"pool", "ResourcePool"},
        {"pools", "ResourcePool"},
        {"ds", "Datastore"},
        {"datastore", "Datastore"},
        {"datastores", "Datastore"},
        {"net", "Network"},
        {"network", "Network"},
        {"networks", "Network"},
        {"dvpg", "DistributedVirtualPortgroup"},
        {"folder", "Folder"},
        {"folders", "Folder"},
        {"dc", "Datacenter"},
        {"datacenter", "Datacenter"},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (!strcasecmp(t, map[i].alias))
            return map[i].type;
    return t;
}

/* ---- commands ------------------------------------------------------------------------------ */

static int cmd_about(struct vim_client *c, const struct opts *o)
{
    const char *name = vim_about_full_name(c), *api = vim_about_api_version(c),
               *uuid = vim_about_instance_uuid(c);
    if (o->json) {
        cJSON *j = cJSON_CreateObject();
        json_str(j, "fullName", name);
        json_str(j, "apiVersion", api);
        json_str(j, "instanceUuid", uuid);
        return print_json(j);
    }
    printf("Name:          %s\n", name ? name : "-");
    printf("API version:   %s\n", api ? api : "-");
    printf("Instance UUID: %s\n", uuid ? uuid : "-");
    return EXIT_SUCCESS;
}

static int cmd_ls(struct vim_client *c, const struct opts *o, int argc, char **argv)
{
    struct vim_entity_list list = {0};
    struct vim_moref root;
    struct vmop_err err = {0};
    const char *type = "VirtualMachine", *path = NULL;
    int i = 0, rc;

    if (i < argc && argv[i][0] != '/')
        type = type_alias(argv[i++]);
    if (i < argc)
        path = argv[i++];
    if (i < argc)
        return usage_error("ls: unexpected argument '%s'", argv[i]);
    if (path && resolve(c, path, "Folder", NULL, &root, &err))
        return fail(&err);
    if (vim_list(c, path ? &root : NULL, type, &list, &err))
        return fail(&err);
    if (o->json) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t k = 0; k < list.n; k++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddItemToArray(arr, e);
            json_str(e, "name", list.items[k].name);
            json_moref(e, "moref", &list.items[k].ref);
            json_str(e, "path", list.items[k].path);
        }
        vim_entity_list_free(&list);
        return print_json(arr);
    }
    for (size_t k = 0; k < list.n; k++) {
        char ref[VIM_MOREF_TYPE_MAX + VIM_MOREF_VALUE_MAX + 2];
        const struct vim_entity *e = &list.items[k];
        moref_str(&e->ref, ref, sizeof(ref));
        printf("%-48s %s\n", e->path ? e->path : (e->name ? e->name : "-"), ref);
    }
    rc = EXIT_SUCCESS;
    if (!list.n)
        fprintf(stderr, "vimc: no %s found\n", type);
    vim_entity_list_free(&list);
    return rc;
}

static int cmd_find(struct vim_client *c, const struct opts *o, int argc, char **argv)
{
    struct vim_moref ref;
    struct vmop_err err = {0};
    char buf[VIM_MOREF_TYPE_MAX + VIM_MOREF_VALUE_MAX + 2];

    if (argc != 1 || argv[0][0] != '/')
        return usage_error("find needs one inventory path (starting with '/')");
    if (vim_find_by_path(c, argv[0], NULL, &ref, &err))
        return fail(&err);
    if (o->json) {
        cJSON *j = cJSON_CreateObject();
        json_str(j, "path", argv[0]);
        json_moref(j, "moref", &ref);
        return print_json(j);
    }
    moref_str(&ref, buf, sizeof(buf));
    puts(buf);
    return EXIT_SUCCESS;
}

static const char *shares_str(enum vim_shares_level l)
{
    const char *s = vim_shares_level_str(l);
    return s ? s : "-";
}

static void alloc_text(const struct vim_alloc *a, const char *unit, char *buf, size_t n)
{
    char res[32], lim[32];
    if (a->reservation == VIM_ALLOC_UNSET)
        snprintf(res, sizeof(res), "-");
    else
        snprintf(res, sizeof(res), "%lld %s", a->reservation, unit);
    if (a->limit == VIM_ALLOC_UNSET)
        snprintf(lim, sizeof(lim), "-");
    else if (a->limit == -1)
        snprintf(lim, sizeof(lim), "unlimited");
    else
        snprintf(lim, sizeof(lim), "%lld %s", a->limit, unit);
    if (a->shares_level == VIM_SHARES_CUSTOM)
        snprintf(buf, n, "reservation=%s limit=%s shares=custom(%d)", res, lim, a->shares);
    else
        snprintf(buf, n, "reservation=%s limit=%s shares=%s", res, lim,
                 shares_str(a->shares_level));
}

static cJSON *json_alloc(const struct vim_alloc *a)
{
    cJSON *j = cJSON_CreateObject();
    if (a->reservation != VIM_ALLOC_UNSET)
        cJSON_AddNumberToObject(j, "reservation", (double)a->reservation);
    if (a->limit != VIM_ALLOC_UNSET)
        cJSON_AddNumberToObject(j, "limit", (double)a->limit);
    if (a->shares_level != VIM_SHARES_UNSET)
        cJSON_AddStringToObject(j, "shares", shares_str(a->shares_level));
    if (a->shares_level == VIM_SHARES_CUSTOM)
        cJSON_AddNumberToObject(j, "sharesCustom", a->shares);
    return j;
}

/* guestinfo.* values carry user data (cloud-init, passwords): never print them. */
static const char *shown_value(const struct vim_option *o)
{
    if (!strncmp(o->key, "guestinfo.", 10))
        return "(elided)";
    return o->value ? o->value : "(not a string)";
}

/* config.bootOptions: the members vCenter showed (unset ones left out). */
static cJSON *json_boot(const struct vim_boot_options *b)
{
    cJSON *o = cJSON_CreateObject(), *order;
    if (b->delay_ms >= 0)
        cJSON_AddNumberToObject(o, "bootDelay", (double)b->delay_ms);
    if (b->enter_setup >= 0)
        cJSON_AddBoolToObject(o, "enterBIOSSetup", b->enter_setup);
    if (b->efi_secure_boot >= 0)
        cJSON_AddBoolToObject(o, "efiSecureBootEnabled", b->efi_secure_boot);
    if (b->retry >= 0)
        cJSON_AddBoolToObject(o, "bootRetryEnabled", b->retry);
    if (b->retry_delay_ms >= 0)
        cJSON_AddNumberToObject(o, "bootRetryDelay", (double)b->retry_delay_ms);
    json_str(o, "networkBootProtocol", b->network_protocol);
    order = cJSON_AddArrayToObject(o, "bootOrder");
    for (size_t i = 0; i < b->n_order; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(order, e);
        json_str(e, "type", b->order[i].type);
        if (b->order[i].device_key >= 0)
            cJSON_AddNumberToObject(e, "deviceKey", b->order[i].device_key);
    }
    return o;
}

static int vm_info_json(const struct vim_vm *vm)
{
    cJSON *j = cJSON_CreateObject(), *arr, *ec;
    json_str(j, "name", vm->name);
    json_moref(j, "moref", &vm->ref);
    json_str(j, "biosUuid", vm->bios_uuid);
    json_str(j, "instanceUuid", vm->instance_uuid);
    json_str(j, "guestId", vm->guest_id);
    json_str(j, "hardwareVersion", vm->hw_version);
    json_str(j, "firmware", vm->firmware);
    if (vm->change_tracking >= 0)
        cJSON_AddBoolToObject(j, "changeTrackingEnabled", vm->change_tracking);
    cJSON_AddItemToObject(j, "bootOptions", json_boot(&vm->boot));
    cJSON_AddBoolToObject(j, "template", vm->template);
    json_str(j, "annotation", vm->annotation);
    cJSON_AddStringToObject(j, "powerState", vim_power_state_str(vm->power_state));
    json_str(j, "ipAddress", vm->guest_ip);
    json_str(j, "hostName", vm->guest_hostname);
    json_str(j, "toolsRunningStatus", vm->tools_running);
    cJSON_AddNumberToObject(j, "numCPU", vm->num_cpu);
    cJSON_AddNumberToObject(j, "memoryMB", (double)vm->memory_mb);
    cJSON_AddItemToObject(j, "cpuAllocation", json_alloc(&vm->cpu_alloc));
    cJSON_AddItemToObject(j, "memoryAllocation", json_alloc(&vm->mem_alloc));
    json_moref(j, "host", &vm->host);
    json_moref(j, "resourcePool", &vm->resource_pool);
    json_moref(j, "folder", &vm->parent);
    json_moref(j, "datastore", &vm->datastore);
    arr = cJSON_AddArrayToObject(j, "nics");
    for (size_t i = 0; i < vm->n_nics; i++) {
        const struct vim_nic *n = &vm->nics[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, e);
        cJSON_AddNumberToObject(e, "key", n->key);
        json_str(e, "type", n->device_type);
        json_str(e, "label", n->label);
        json_str(e, "mac", n->mac);
        json_str(e, "portgroupKey", n->portgroup_key);
        json_str(e, "switchUuid", n->switch_uuid);
        json_str(e, "network", n->network_name);
        cJSON_AddBoolToObject(e, "connected", n->connected);
    }
    arr = cJSON_AddArrayToObject(j, "disks");
    for (size_t i = 0; i < vm->n_disks; i++) {
        const struct vim_disk *d = &vm->disks[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, e);
        cJSON_AddNumberToObject(e, "key", d->key);
        cJSON_AddNumberToObject(e, "capacityKB", (double)d->capacity_kb);
        json_str(e, "fileName", d->file_name);
    }
    arr = cJSON_AddArrayToObject(j, "guestNics");
    for (size_t i = 0; i < vm->n_guest_nics; i++) {
        const struct vim_guest_nic *g = &vm->guest_nics[i];
        cJSON *e = cJSON_CreateObject(), *ips;
        cJSON_AddItemToArray(arr, e);
        json_str(e, "mac", g->mac);
        json_str(e, "network", g->network);
        ips = cJSON_AddArrayToObject(e, "ips");
        for (size_t k = 0; k < g->n_ips; k++)
            cJSON_AddItemToArray(ips, cJSON_CreateString(g->ips[k]));
    }
    ec = cJSON_AddObjectToObject(j, "extraConfig");
    for (size_t i = 0; i < vm->n_extra_config; i++)
        cJSON_AddStringToObject(ec, vm->extra_config[i].key, shown_value(&vm->extra_config[i]));
    return print_json(j);
}

static void field(const char *label, const char *v)
{
    printf("%-15s %s\n", label, v ? v : "-");
}

static int vm_info(struct vim_client *c, const struct opts *o, const char *arg)
{
    struct vim_moref ref;
    struct vim_vm *vm = NULL;
    struct vmop_err err = {0};
    char buf[256];

    if (resolve(c, arg, "VirtualMachine", "VirtualMachine", &ref, &err) ||
        vim_vm_get(c, &ref, &vm, &err))
        return fail(&err);
    if (o->json) {
        int rc = vm_info_json(vm);
        vim_vm_free(vm);
        return rc;
    }
    field("Name:", vm->name);
    moref_str(&vm->ref, buf, sizeof(buf));
    field("MoRef:", buf);
    field("BIOS UUID:", vm->bios_uuid);
    field("Instance UUID:", vm->instance_uuid);
    field("Guest ID:", vm->guest_id);
    field("HW version:", vm->hw_version);
    field("Template:", vm->template ? "yes" : "no");
    field("Power:", vim_power_state_str(vm->power_state));
    field("IP:", vm->guest_ip);
    field("Hostname:", vm->guest_hostname);
    field("Tools:", vm->tools_running);
    printf("%-15s %d\n", "CPUs:", vm->num_cpu);
    printf("%-15s %ld MB\n", "Memory:", vm->memory_mb);
    alloc_text(&vm->cpu_alloc, "MHz", buf, sizeof(buf));
    field("CPU alloc:", buf);
    alloc_text(&vm->mem_alloc, "MB", buf, sizeof(buf));
    field("Memory alloc:", buf);
    moref_str(&vm->host, buf, sizeof(buf));
    field("Host:", buf);
    moref_str(&vm->resource_pool, buf, sizeof(buf));
    field("Resource pool:", buf);
    moref_str(&vm->parent, buf, sizeof(buf));
    field("Folder:", buf);
    moref_str(&vm->datastore, buf, sizeof(buf));
    field("Datastore:", buf);
    printf("NICs:\n");
    for (size_t i = 0; i < vm->n_nics; i++) {
        const struct vim_nic *n = &vm->nics[i];
        printf("  %d %s \"%s\" mac=%s", n->key, n->device_type ? n->device_type : "-",
               n->label ? n->label : "", n->mac ? n->mac : "-");
        if (n->portgroup_key)
            printf(" dvpg=%s switch=%s", n->portgroup_key, n->switch_uuid ? n->switch_uuid : "-");
        else if (n->network_name)
            printf(" network=%s", n->network_name);
        printf(" %s\n", n->connected ? "connected" : "disconnected");
    }
    printf("Guest NICs:\n");
    for (size_t i = 0; i < vm->n_guest_nics; i++) {
        const struct vim_guest_nic *g = &vm->guest_nics[i];
        printf("  mac=%s network=%s ips=", g->mac ? g->mac : "-", g->network ? g->network : "-");
        for (size_t k = 0; k < g->n_ips; k++)
            printf("%s%s", k ? "," : "", g->ips[k]);
        printf("\n");
    }
    printf("ExtraConfig:\n");
    for (size_t i = 0; i < vm->n_extra_config; i++)
        printf("  %s = %s\n", vm->extra_config[i].key, shown_value(&vm->extra_config[i]));
    vim_vm_free(vm);
    return EXIT_SUCCESS;
}

static int done(const struct opts *o, const struct vim_moref *ref, const char *what)
{
    char buf[VIM_MOREF_TYPE_MAX + VIM_MOREF_VALUE_MAX + 2];
    moref_str(ref, buf, sizeof(buf));
    if (o->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "moref", buf);
        cJSON_AddStringToObject(j, "done", what);
        return print_json(j);
    }
    printf("%s: %s\n", buf, what);
    return EXIT_SUCCESS;
}

static int vm_power(struct vim_client *c, const struct opts *o, const char *op_name,
                    const char *arg)
{
    static const struct {
        const char *name;
        enum vim_power_op op;
    } ops[] = {
        {"on", VIM_OP_POWER_ON},
        {"off", VIM_OP_POWER_OFF},
        {"suspend", VIM_OP_SUSPEND},
        {"reset", VIM_OP_RESET},
        {"shutdown", VIM_OP_SHUTDOWN_GUEST},
        {"standby", VIM_OP_STANDBY_GUEST},
        {"reboot", VIM_OP_REBOOT_GUEST},
    };
    struct vim_moref ref;
    struct vmop_err err = {0};
    size_t i;

    for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (!strcmp(op_name, ops[i].name))
            break;
    if (i == sizeof(ops) / sizeof(ops[0]))
        return usage_error("vm power: unknown operation '%s'", op_name);
    if (resolve(c, arg, "VirtualMachine", "VirtualMachine", &ref, &err) ||
        vim_vm_power(c, &ref, ops[i].op, &err))
        return fail(&err);
    return done(o, &ref, vim_power_op_method(ops[i].op));
}

static int vm_destroy(struct vim_client *c, const struct opts *o, int force, const char *arg)
{
    struct vim_moref ref;
    struct vmop_err err = {0};

    if (resolve(c, arg, "VirtualMachine", "VirtualMachine", &ref, &err))
        return fail(&err);
    if (force && vim_vm_power(c, &ref, VIM_OP_POWER_OFF, &err) &&
        !vmop_err_is_fault(&err, "InvalidPowerState"))
        return fail(&err);
    vmop_err_clear(&err);
    if (vim_vm_destroy(c, &ref, &err)) {
        if (vmop_err_is_fault(&err, "InvalidPowerState"))
            fprintf(stderr, "vimc: the VM is powered on: power it off first or use --force\n");
        return fail(&err);
    }
    return done(o, &ref, "Destroy_Task");
}

/* `vm guestinfo --reveal VM`: the guestinfo.* ExtraConfig keys with their values, as one JSON
 * object. These values carry cloud-init user data, so they are printed only when asked for with
 * --reveal (an administrator debugging bootstrap, or a test decoding them with cloud-init). */
static int vm_guestinfo(struct vim_client *c, const char *arg)
{
    struct vim_moref ref;
    struct vim_vm *vm = NULL;
    struct vmop_err err = {0};
    cJSON *j;

    if (resolve(c, arg, "VirtualMachine", "VirtualMachine", &ref, &err) ||
        vim_vm_get(c, &ref, &vm, &err))
        return fail(&err);
    j = cJSON_CreateObject();
    for (size_t i = 0; i < vm->n_extra_config; i++)
        if (!strncmp(vm->extra_config[i].key, "guestinfo.", 10) && vm->extra_config[i].value)
            cJSON_AddStringToObject(j, vm->extra_config[i].key, vm->extra_config[i].value);
    vim_vm_free(vm);
    return print_json(j);
}

static int cmd_vm(struct vim_client *c, const struct opts *o, int argc, char **argv)
{
    if (argc < 1)
        return usage_error("vm needs a subcommand: info, power, destroy");
    if (!strcmp(argv[0], "info")) {
        if (argc != 2)
            return usage_error("usage: vimc vm info VM");
        return vm_info(c, o, argv[1]);
    }
    if (!strcmp(argv[0], "power")) {
        if (argc != 3)
            return usage_error("usage: vimc vm power on|off|suspend|reset|shutdown VM");
        return vm_power(c, o, argv[1], argv[2]);
    }
    if (!strcmp(argv[0], "destroy")) {
        int force = argc == 3 && !strcmp(argv[1], "--force");
        if (argc != 2 + force)
            return usage_error("usage: vimc vm destroy [--force] VM");
        return vm_destroy(c, o, force, argv[argc - 1]);
    }
    if (!strcmp(argv[0], "guestinfo")) {
        if (argc != 3 || strcmp(argv[1], "--reveal"))
            return usage_error("usage: vimc vm guestinfo --reveal VM (prints user data)");
        return vm_guestinfo(c, argv[2]);
    }
    return usage_error("vm: unknown subcommand '%s'", argv[0]);
}

static const char *item_type_name(const struct vim_library_item *it)
{
    switch (it->type) {
    case VIM_ITEM_OVF:
        return "ovf";
    case VIM_ITEM_VM_TEMPLATE:
        return "vm-template";
    case VIM_ITEM_OTHER:
        break;
    }
    return it->type_str ? it->type_str : "other";
}

static int lib_ls(struct vim_client *c, const struct opts *o)
{
    struct vim_library_list list = {0};
    struct vmop_err err = {0};

    if (vim_library_list(c, &list, &err))
        return fail(&err);
    if (o->json) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < list.n; i++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddItemToArray(arr, e);
            json_str(e, "id", list.items[i].id);
            json_str(e, "name", list.items[i].name);
            json_str(e, "type", list.items[i].type);
        }
        vim_library_list_free(&list);
        return print_json(arr);
    }
    for (size_t i = 0; i < list.n; i++)
        printf("%-36s  %-10s  %s\n", list.items[i].id,
               list.items[i].type ? list.items[i].type : "-", list.items[i].name);
    vim_library_list_free(&list);
    return EXIT_SUCCESS;
}

/* LIB as a library name first, then as an id. *ret_id is malloc'd. */
static vmop_rc library_id(struct vim_client *c, const char *lib, char **ret_id,
                          struct vmop_err *err)
{
    vmop_rc rc = vim_library_find(c, lib, ret_id, err);
    if (rc != VMOP_E_NOT_FOUND)
        return rc;
    vmop_err_clear(err);
    *ret_id = strdup(lib);
    return *ret_id ? VMOP_OK : vmop_fail(err, VMOP_E_NOMEM, "out of memory");
}

static vmop_rc library_items(struct vim_client *c, const char *lib,
                             struct vim_library_item_list *ret, struct vmop_err *err)
{
    char *id = NULL;
    vmop_rc rc = library_id(c, lib, &id, err);
    if (!rc)
        rc = vim_library_items(c, id, ret, err);
    if (rc == VMOP_E_NOT_FOUND) {
        vmop_err_clear(err);
        rc = vmop_fail(err, VMOP_E_NOT_FOUND, "no content library has the name or id '%s'", lib);
    }
    free(id);
    return rc;
}

static int lib_items(struct vim_client *c, const struct opts *o, const char *lib)
{
    struct vim_library_item_list list = {0};
    struct vmop_err err = {0};

    if (library_items(c, lib, &list, &err))
        return fail(&err);
    if (o->json) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < list.n; i++) {
            const struct vim_library_item *it = &list.items[i];
            cJSON *e = cJSON_CreateObject();
            cJSON_AddItemToArray(arr, e);
            json_str(e, "id", it->id);
            json_str(e, "name", it->name);
            cJSON_AddStringToObject(e, "type", item_type_name(it));
            json_str(e, "description", it->description);
            json_str(e, "contentVersion", it->content_version);
            json_str(e, "creationTime", it->creation_time);
            if (it->size >= 0)
                cJSON_AddNumberToObject(e, "size", (double)it->size);
        }
        vim_library_item_list_free(&list);
        return print_json(arr);
    }
    for (size_t i = 0; i < list.n; i++)
        printf("%-36s  %-11s  %s\n", list.items[i].id, item_type_name(&list.items[i]),
               list.items[i].name);
    vim_library_item_list_free(&list);
    return EXIT_SUCCESS;
}

/* ITEM as "LIB/ITEMNAME" or an item id; *ret_id is malloc'd. */
static vmop_rc item_id(struct vim_client *c, const char *item, char **ret_id, struct vmop_err *err)
{
    const char *slash = strrchr(item, '/');
    struct vim_library_item_list list = {0};
    char *lib = NULL;
    vmop_rc rc;

    if (!slash) {
        *ret_id = strdup(item);
        return *ret_id ? VMOP_OK : vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    }
    lib = strndup(item, (size_t)(slash - item));
    if (!lib)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    rc = library_items(c, lib, &list, err);
    if (rc)
        goto out;
    rc = vmop_fail(err, VMOP_E_NOT_FOUND, "library '%s' has no item named '%s'", lib, slash + 1);
    for (size_t i = 0; i < list.n; i++) {
        if (!strcmp(list.items[i].name, slash + 1)) {
            vmop_err_clear(err);
            *ret_id = list.items[i].id;
            list.items[i].id = NULL;
            rc = VMOP_OK;
            break;
        }
    }
out:
    vim_library_item_list_free(&list);
    free(lib);
    return rc;
}

#define MAX_NETS 16

static int lib_deploy(struct vim_client *c, const struct opts *o, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"pool", required_argument, NULL, 'p'},
        {"folder", required_argument, NULL, 'f'},
        {"datastore", required_argument, NULL, 'd'},
        {"host", required_argument, NULL, 'H'},
        {"network", required_argument, NULL, 'n'},
        {"power-on", no_argument, NULL, 'P'},
        {NULL, 0, NULL, 0},
    };
    const char *pool_arg = NULL, *folder_arg = NULL, *ds_arg = NULL, *host_arg = NULL;
    const char *net_args[MAX_NETS];
    struct vim_net_mapping maps[MAX_NETS];
    char *ovf_names[MAX_NETS] = {0};
    struct vim_network *nets[MAX_NETS] = {0};
    struct vim_moref pool, folder, ds, host, vm;
    struct vim_deploy_spec spec = {0};
    struct vmop_err err = {0};
    char *id = NULL;
    int n_nets = 0, power_on = 0, opt, rc = EXIT_FAILURE;

    optind = 0; /* glibc: restart getopt on the sub-arguments (argv[0] = "deploy"); options
                 * and the two operands may be mixed (operands are permuted to the end) */
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'p':
            pool_arg = optarg;
            break;
        case 'f':
            folder_arg = optarg;
            break;
        case 'd':
            ds_arg = optarg;
            break;
        case 'H':
            host_arg = optarg;
            break;
        case 'P':
            power_on = 1;
            break;
        case 'n':
            if (n_nets == MAX_NETS)
                return usage_error("lib deploy: at most 16 --network mappings");
            if (!strchr(optarg, '=') || optarg[0] == '=' || !strchr(optarg, '=')[1])
                return usage_error("lib deploy: --network wants OVFNET=NET, not '%s'", optarg);
            net_args[n_nets++] = optarg;
            break;
        default:
            return usage_error("lib deploy: bad option");
        }
    }
    if (argc - optind != 2)
        return usage_error("usage: vimc lib deploy ITEM NAME --pool P --folder F ...");
    if (!pool_arg || !folder_arg)
        return usage_error("lib deploy needs --pool and --folder");

    if (resolve(c, pool_arg, "ResourcePool", "ResourcePool", &pool, &err) ||
        resolve(c, folder_arg, "Folder", "Folder", &folder, &err) ||
        (ds_arg && resolve(c, ds_arg, "Datastore", "Datastore", &ds, &err)) ||
        (host_arg && resolve(c, host_arg, "HostSystem", "HostSystem", &host, &err)))
        goto fail;
    for (int i = 0; i < n_nets; i++) {
        const char *eq = strchr(net_args[i], '=');
        ovf_names[i] = strndup(net_args[i], (size_t)(eq - net_args[i]));
        if (!ovf_names[i]) {
            vmop_fail(&err, VMOP_E_NOMEM, "out of memory");
            goto fail;
        }
        if (eq[1] == '/') {
            if (vim_network_lookup(c, NULL, eq + 1, &nets[i], &err))
                goto fail;
            maps[i].network_id = nets[i]->ref.value;
        } else {
            maps[i].network_id = eq + 1;
        }
        maps[i].ovf_network = ovf_names[i];
    }
    if (item_id(c, argv[optind], &id, &err))
        goto fail;
    spec.name = argv[optind + 1];
    spec.resource_pool_id = pool.value;
    spec.folder_id = folder.value;
    spec.datastore_id = ds_arg ? ds.value : NULL;
    spec.host_id = host_arg ? host.value : NULL;
    spec.net_mappings = n_nets ? maps : NULL;
    spec.n_net_mappings = (size_t)n_nets;
    spec.power_on = power_on;
    if (vim_library_deploy(c, id, &spec, &vm, &err))
        goto fail;
    rc = done(o, &vm, "deployed");
    goto out;
fail:
    rc = fail(&err);
out:
    for (int i = 0; i < n_nets; i++) {
        free(ovf_names[i]);
        vim_network_free(nets[i]);
    }
    free(id);
    return rc;
}

static int cmd_lib(struct vim_client *c, const struct opts *o, int argc, char **argv)
{
    if (argc < 1)
        return usage_error("lib needs a subcommand: ls, items, deploy");
    if (!strcmp(argv[0], "ls")) {
        if (argc != 1)
            return usage_error("usage: vimc lib ls");
        return lib_ls(c, o);
    }
    if (!strcmp(argv[0], "items")) {
        if (argc != 2)
            return usage_error("usage: vimc lib items LIB");
        return lib_items(c, o, argv[1]);
    }
    if (!strcmp(argv[0], "deploy"))
        return lib_deploy(c, o, argc, argv);
    return usage_error("lib: unknown subcommand '%s'", argv[0]);
}

/* ---- main ---------------------------------------------------------------------------------- */

static int parse_global(int argc, char **argv, struct opts *o, int *ret_next)
{
    static const struct option longopts[] = {
        {"url", required_argument, NULL, 'u'},
        {"username", required_argument, NULL, 'U'},
        {"thumbprint", required_argument, NULL, 't'},
        {"ca-file", required_argument, NULL, 'c'},
        {"insecure", no_argument, NULL, 'k'},
        {"timeout", required_argument, NULL, 'T'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {"password", required_argument, NULL, 'x'},
        {NULL, 0, NULL, 0},
    };
    int opt;

    o->url = getenv("VIMC_URL");
    o->username = getenv("VIMC_USERNAME");
    o->thumbprint = getenv("VIMC_THUMBPRINT");
    o->ca_file = getenv("VIMC_CA_FILE");
    o->insecure = env_true(getenv("VIMC_INSECURE"));
    o->timeout_s = 60;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'u':
            o->url = optarg;
            break;
        case 'U':
            o->username = optarg;
            break;
        case 't':
            o->thumbprint = optarg;
            break;
        case 'c':
            o->ca_file = optarg;
            break;
        case 'k':
            o->insecure = 1;
            break;
        case 'j':
            o->json = 1;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return -1;
        case 'T': {
            char *end;
            errno = 0;
            o->timeout_s = strtol(optarg, &end, 10);
            if (errno || *end || o->timeout_s <= 0 || o->timeout_s > 86400)
                return usage_error("--timeout wants seconds (1..86400), not '%s'", optarg);
            break;
        }
        case 'x':
            return usage_error("there is no --password flag: set VIMC_PASSWORD in the "
                               "environment");
        default:
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    *ret_next = optind;
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {0};
    struct vim_config cfg = {0};
    struct vim_client *c = NULL;
    struct vmop_err err = {0};
    const char *cmd;
    char **args;
    int next = 0, nargs, rc;

    rc = parse_global(argc, argv, &o, &next);
    if (rc < 0)
        return EXIT_SUCCESS;
    if (rc)
        return rc;
    if (next >= argc)
        return usage_error("a command is required");
    cmd = argv[next];
    args = argv + next + 1;
    nargs = argc - next - 1;
    if (!strcmp(cmd, "help"))
        return fputs(usage_text, stdout), EXIT_SUCCESS;
    if (strcmp(cmd, "about") && strcmp(cmd, "ls") && strcmp(cmd, "find") && strcmp(cmd, "vm") &&
        strcmp(cmd, "lib"))
        return usage_error("unknown command '%s'", cmd);
    if (!strcmp(cmd, "about") && nargs)
        return usage_error("about takes no arguments");

    if (!o.url || !*o.url)
        return usage_error("no vCenter URL: use --url or set VIMC_URL");
    if (!o.username || !*o.username)
        return usage_error("no user name: use --username or set VIMC_USERNAME");
    o.password = getenv("VIMC_PASSWORD");
    if ((!o.password || !*o.password) && isatty(STDIN_FILENO))
        o.password = getpass("vCenter password: ");
    if (!o.password || !*o.password)
        return usage_error("no password: set VIMC_PASSWORD");

    cfg.url = o.url;
    cfg.username = o.username;
    cfg.password = o.password;
    cfg.thumbprint = o.thumbprint && *o.thumbprint ? o.thumbprint : NULL;
    cfg.ca_file = o.ca_file && *o.ca_file ? o.ca_file : NULL;
    cfg.insecure = o.insecure;
    cfg.timeout_ms = o.timeout_s * 1000;
    cfg.max_connections = 2;
    if (vim_client_new(&cfg, &c, &err))
        return fail(&err);
    /* Log in first: wrong credentials or TLS trouble give one clear error for every command. */
    if (vim_login(c, &err)) {
        rc = fail(&err);
        goto out;
    }
    if (!strcmp(cmd, "about"))
        rc = cmd_about(c, &o);
    else if (!strcmp(cmd, "ls"))
        rc = cmd_ls(c, &o, nargs, args);
    else if (!strcmp(cmd, "find"))
        rc = cmd_find(c, &o, nargs, args);
    else if (!strcmp(cmd, "vm"))
        rc = cmd_vm(c, &o, nargs, args);
    else
        rc = cmd_lib(c, &o, nargs, args);
out:
    vim_client_free(c);
    return rc;
}
