/* api_vm_validate.c: VirtualMachine validation with field paths: VM Operator's validating-webhook
 * rules (vm-operator.md 2.1-2.4) for create (old == NULL) and update. The CRD's schema and CEL
 * rules enforce the same at admission where a schema can; this copy lets the operator refuse (and
 * report as a condition) what admission could not check, and keeps both in one testable place. */
#include "api_vm.h"

#include <arpa/inet.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api_json.h"
#include "api_quantity.h"

static int str_eq(const char *a, const char *b)
{
    if (!a || !*a)
        return !b || !*b;
    return b && strcmp(a, b) == 0;
}

static int set(const char *s)
{
    return s && *s;
}

static int is_lower_alnum2(const char *s) /* ^[a-z0-9]{2,}$ */
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9')))
            return 0;
    return n >= 2;
}

static int is_word2(const char *s) /* ^\w\w+$ */
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
              (s[n] >= '0' && s[n] <= '9') || s[n] == '_'))
            return 0;
    return n >= 2;
}

/* DNS-1123 label (lower case) of at most max characters. */
static int is_dns_label(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max || s[0] == '-' || s[n - 1] == '-')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return 0;
    return 1;
}

/* RFC 1034 host label: letters, digits, '-', either case, at most 63. */
static int is_host_label(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return 0;
    return 1;
}

static int is_dns_subdomain(const char *s)
{
    char buf[API_NAME_MAX];
    size_t n = strlen(s);
    char *save = NULL, *tok;
    if (n == 0 || n > 253)
        return 0;
    memcpy(buf, s, n + 1);
    if (buf[0] == '.' || buf[n - 1] == '.' || strstr(buf, ".."))
        return 0;
    for (tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save))
        if (!is_dns_label(tok, 63))
            return 0;
    return 1;
}

static int is_uuid(const char *s)
{
    if (strlen(s) != 36)
        return 0;
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return 0;
        } else if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
                     (s[i] >= 'A' && s[i] <= 'F'))) {
            return 0;
        }
    }
    return 1;
}

/* 4 or 6 for an IP address, 0 otherwise. */
static int ip_family(const char *s)
{
    unsigned char buf[16];
    if (inet_pton(AF_INET, s, buf) == 1)
        return 4;
    if (inet_pton(AF_INET6, s, buf) == 1)
        return 6;
    return 0;
}

/* 4 or 6 for "ip/prefix" with a valid prefix length, 0 otherwise. */
static int cidr_family(const char *s)
{
    char ip[64];
    const char *slash = strchr(s, '/');
    char *end;
    long prefix;
    int fam;
    if (!slash || (size_t)(slash - s) >= sizeof(ip) || !slash[1])
        return 0;
    memcpy(ip, s, (size_t)(slash - s));
    ip[slash - s] = '\0';
    fam = ip_family(ip);
    prefix = strtol(slash + 1, &end, 10);
    if (*end || prefix < 0 || prefix > (fam == 4 ? 32 : 128))
        return 0;
    return fam;
}

static int rfc3339(const char *s)
{
    regex_t re;
    int ok;
    if (regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$",
                REG_EXTENDED | REG_NOSUB))
        return 0;
    ok = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return ok;
}

/* spec.network.interfaces[].gateway<fam> ("None" = no gateway): an IPv<fam> address, not with
 * dhcp<fam>, and only with an IPv<fam> address in addresses. */
static void check_gateway(struct api_ferrs *fe, const char *base, int fam, const char *gw, int dhcp,
                          int has_addr)
{
    char p[API_FERR_PATH_MAX], key[16];

    if (!set(gw) || strcmp(gw, "None") == 0)
        return;
    snprintf(key, sizeof(key), "gateway%d", fam);
    api_path(p, sizeof(p), base, key);
    if (dhcp)
        api_ferr_add(fe, API_FERR_INVALID, p, "%s is not allowed with dhcp%d", key, fam);
    else if (ip_family(gw) != fam)
        api_ferr_add(fe, API_FERR_INVALID, p, "\"%.63s\": must be an IPv%d address", gw, fam);
    else if (!has_addr)
        api_ferr_add(fe, API_FERR_INVALID, p, "%s requires an IPv%d address in addresses", key,
                     fam);
}

static void validate_nic(const struct api_vm *vm, size_t i, struct api_ferrs *fe)
{
    const struct api_vm_nic *n = &vm->nics[i];
    char base[API_FERR_PATH_MAX], p[API_FERR_PATH_MAX];
    const cJSON *it;
    int has4 = 0, has6 = 0;
    size_t k;

    api_path_index(base, sizeof(base), "spec.network.interfaces", i);
    if (!set(n->name)) {
        api_ferr_add(fe, API_FERR_REQUIRED, api_path(p, sizeof(p), base, "name"), "%s", "");
    } else {
        if (!is_lower_alnum2(n->name))
            api_ferr_add(fe, API_FERR_INVALID, api_path(p, sizeof(p), base, "name"),
                         "\"%.63s\": must match ^[a-z0-9]{2,}$", n->name);
        for (size_t j = 0; j < i; j++)
            if (vm->nics[j].name && strcmp(vm->nics[j].name, n->name) == 0)
                api_ferr_add(fe, API_FERR_DUPLICATE, api_path(p, sizeof(p), base, "name"),
                             "\"%.63s\"", n->name);
        if (vm->name) {
            char composed[512];
            snprintf(composed, sizeof(composed), "%s-%s-%s", vm->name,
                     n->network_name ? n->network_name : "", n->name);
            if (!is_dns_label(composed, 63))
                api_ferr_add(fe, API_FERR_INVALID, api_path(p, sizeof(p), base, "name"),
                             "\"%.63s\": <vm>-<network>-<interface> must be a DNS-1123 label of "
                             "at most 63 characters",
                             n->name);
        }
    }
    if (set(n->guest_device_name) && !is_word2(n->guest_device_name))
        api_ferr_add(fe, API_FERR_INVALID, api_path(p, sizeof(p), base, "guestDeviceName"),
                     "\"%.63s\": must match ^\\w\\w+$", n->guest_device_name);
    k = 0;
    cJSON_ArrayForEach(it, n->addresses)
    {
        char ap[API_FERR_PATH_MAX];
        int fam = cJSON_IsString(it) ? cidr_family(it->valuestring) : 0;
        api_path_index(ap, sizeof(ap), api_path(p, sizeof(p), base, "addresses"), k++);
        if (!fam)
            api_ferr_add(fe, API_FERR_INVALID, ap, "must be an IP address in CIDR notation");
        has4 |= fam == 4;
        has6 |= fam == 6;
    }
    if (n->dhcp4 && has4)
        api_ferr_add(fe, API_FERR_INVALID, api_path(p, sizeof(p), base, "addresses"),
                     "IPv4 addresses are not allowed with dhcp4");
    if (n->dhcp6 && has6)
        api_ferr_add(fe, API_FERR_INVALID, api_path(p, sizeof(p), base, "addresses"),
                     "IPv6 addresses are not allowed with dhcp6");
    check_gateway(fe, base, 4, n->gateway4, n->dhcp4, has4);
    check_gateway(fe, base, 6, n->gateway6, n->dhcp6, has6);
    k = 0;
    cJSON_ArrayForEach(it, n->nameservers)
    {
        char np[API_FERR_PATH_MAX];
        api_path_index(np, sizeof(np), api_path(p, sizeof(p), base, "nameservers"), k++);
        if (!cJSON_IsString(it) || !ip_family(it->valuestring))
            api_ferr_add(fe, API_FERR_INVALID, np, "must be an IP address");
    }
    k = 0;
    cJSON_ArrayForEach(it, n->routes)
    {
        char rp[API_FERR_PATH_MAX], fp[API_FERR_PATH_MAX];
        const char *to = api_json_str(it, "to", "", NULL), *via = api_json_str(it, "via", "", NULL);
        long long metric = 1;
        int fto, fvia;
        api_path_index(rp, sizeof(rp), api_path(p, sizeof(p), base, "routes"), k++);
        fto = to ? (strcmp(to, "default") == 0 ? -1
                    : ip_family(to)            ? ip_family(to)
                                               : cidr_family(to))
                 : 0;
        fvia = via ? ip_family(via) : 0;
        if (!to || !fto)
            api_ferr_add(fe, to ? API_FERR_INVALID : API_FERR_REQUIRED,
                         api_path(fp, sizeof(fp), rp, "to"),
                         "must be \"default\" or an IP address");
        if (!via || !fvia)
            api_ferr_add(fe, via ? API_FERR_INVALID : API_FERR_REQUIRED,
                         api_path(fp, sizeof(fp), rp, "via"), "must be an IP address");
        else if (fto > 0 && fto != fvia)
            api_ferr_add(fe, API_FERR_INVALID, api_path(fp, sizeof(fp), rp, "via"),
                         "a route may not mix IPv4 and IPv6");
        if (api_json_int(it, "metric", "", NULL, &metric) && metric < 1)
            api_ferr_add(fe, API_FERR_INVALID, api_path(fp, sizeof(fp), rp, "metric"),
                         "%lld: must be greater than or equal to 1", metric);
    }
    if (n->mtu && (n->mtu < 68 || n->mtu > 9216))
        api_ferr_add(fe, API_FERR_INVALID, api_path(p, sizeof(p), base, "mtu"),
                     "%lld: must be between 68 and 9216", n->mtu);
}

static void validate_bootstrap(const struct api_vm *vm, struct api_ferrs *fe)
{
    unsigned b = vm->bootstrap;
    if ((b & API_BOOT_CLOUDINIT) && (b & ~API_BOOT_CLOUDINIT))
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.bootstrap.cloudInit",
                     "cloudInit may not be combined with linuxPrep, sysprep or vAppConfig");
    if ((b & API_BOOT_LINUXPREP) && (b & API_BOOT_SYSPREP))
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.bootstrap.sysprep",
                     "linuxPrep and sysprep are mutually exclusive");
    if (vm->has_cloud_config && vm->has_raw_cloud_config)
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.bootstrap.cloudInit.rawCloudConfig",
                     "cloudConfig and rawCloudConfig are mutually exclusive");
    if ((b & API_BOOT_SYSPREP) && vm->has_sysprep_typed == vm->has_raw_sysprep)
        api_ferr_add(fe, vm->has_sysprep_typed ? API_FERR_FORBIDDEN : API_FERR_REQUIRED,
                     "spec.bootstrap.sysprep", "exactly one of sysprep and rawSysprep is required");
    if (vm->has_vapp_properties && vm->has_vapp_raw)
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.bootstrap.vAppConfig.rawProperties",
                     "properties and rawProperties are mutually exclusive");
}

static void validate_create_only(const struct api_vm *vm, struct api_ferrs *fe)
{
    if (vm->power_state == API_POWER_SUSPENDED)
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.powerState",
                     "cannot set a new VM's power state to Suspended");
    if (set(vm->next_restart_time) && !rfc3339(vm->next_restart_time))
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.nextRestartTime",
                     "must be empty when the VM is created");
    for (size_t i = 0; i < vm->n_volumes; i++)
        if (vm->volumes[i].has_instance_claim) {
            char p[API_FERR_PATH_MAX], b[API_FERR_PATH_MAX];
            api_path_index(b, sizeof(b), "spec.volumes", i);
            api_path(p, sizeof(p), b, "persistentVolumeClaim.instanceVolumeClaim");
            api_ferr_add(fe, API_FERR_FORBIDDEN, p, "adding instance storage is not allowed");
        }
}

static void immutable(const char *a_old, const char *a_new, const char *field, struct api_ferrs *fe)
{
    if (set(a_old) && !str_eq(a_old, a_new))
        api_ferr_add(fe, API_FERR_INVALID, field, "\"%.63s\": field is immutable",
                     a_new ? a_new : "");
}

static const struct api_vm_nic *find_nic(const struct api_vm *vm, const char *name)
{
    for (size_t i = 0; i < vm->n_nics; i++)
        if (vm->nics[i].name && name && strcmp(vm->nics[i].name, name) == 0)
            return &vm->nics[i];
    return NULL;
}

static void validate_update(const struct api_vm *vm, const struct api_vm *old, struct api_ferrs *fe)
{
    immutable(old->image_name, vm->image_name, "spec.imageName", fe);
    immutable(old->image_ref, vm->image_ref, "spec.image.name", fe);
    immutable(old->image_kind, vm->image_kind, "spec.image.kind", fe);
    immutable(old->storage_class, vm->storage_class, "spec.storageClass", fe);
    immutable(old->bios_uuid, vm->bios_uuid, "spec.biosUUID", fe);
    immutable(old->instance_uuid, vm->instance_uuid, "spec.instanceUUID", fe);
    immutable(old->resource_policy_name, vm->resource_policy_name,
              "spec.reserved.resourcePolicyName", fe);
    if (set(old->class_name) && !set(vm->class_name))
        api_ferr_add(fe, API_FERR_REQUIRED, "spec.className", "may change but not become empty");
    if (old->power_state != API_POWER_UNSET && vm->power_state == API_POWER_UNSET)
        api_ferr_add(fe, API_FERR_REQUIRED, "spec.powerState", "%s", "");
    if (old->power_state == API_POWER_OFF && vm->power_state == API_POWER_SUSPENDED)
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.powerState",
                     "cannot suspend a VM that is powered off");
    if (old->min_hw_version && vm->min_hw_version < old->min_hw_version)
        api_ferr_add(fe, API_FERR_INVALID, "spec.minHardwareVersion", "%lld: may not be lowered",
                     vm->min_hw_version);
    if (set(vm->next_restart_time) && !str_eq(vm->next_restart_time, old->next_restart_time)) {
        if (strcasecmp(vm->next_restart_time, "now") == 0) {
            if (old->power_state != API_POWER_ON)
                api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.nextRestartTime",
                             "can only restart a VM that is powered on");
        } else if (!rfc3339(vm->next_restart_time)) {
            api_ferr_add(fe, API_FERR_INVALID, "spec.nextRestartTime",
                         "may only be set to \"now\"");
        }
    }
    if (old->n_nics_total > 0) {
        if (vm->n_nics_total != old->n_nics_total)
            api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.network.interfaces",
                         "the number of interfaces is immutable");
        for (size_t i = 0; i < old->n_nics; i++) {
            const struct api_vm_nic *o = &old->nics[i], *n = find_nic(vm, o->name);
            char b[API_FERR_PATH_MAX], p[API_FERR_PATH_MAX];
            api_path_index(b, sizeof(b), "spec.network.interfaces", i);
            if (!n) {
                api_ferr_add(fe, API_FERR_FORBIDDEN, b, "interface names are immutable");
                continue;
            }
            if (!str_eq(o->network_name, n->network_name) ||
                !str_eq(o->network_kind, n->network_kind))
                api_ferr_add(fe, API_FERR_FORBIDDEN, api_path(p, sizeof(p), b, "network"),
                             "field is immutable");
            else if (!str_eq(o->mac_addr, n->mac_addr))
                api_ferr_add(fe, API_FERR_FORBIDDEN, api_path(p, sizeof(p), b, "macAddr"),
                             "field is immutable");
        }
    }
    for (size_t i = 0; i < old->n_volumes; i++) {
        const struct api_vm_volume *o = &old->volumes[i];
        int found = 0;
        for (size_t j = 0; j < vm->n_volumes; j++)
            found |= o->name && vm->volumes[j].name && strcmp(o->name, vm->volumes[j].name) == 0;
        if (!found && !o->removable) {
            char p[API_FERR_PATH_MAX];
            api_path_index(p, sizeof(p), "spec.volumes", i);
            api_ferr_add(fe, API_FERR_FORBIDDEN, p, "volume \"%.63s\" is not removable",
                         o->name ? o->name : "");
        }
    }
}

void api_vm_validate_object(const struct api_vm *vm, struct api_ferrs *fe)
{
    char p[API_FERR_PATH_MAX];

    api_ferrs_merge(fe, &vm->parse_errs);
    if (!set(vm->name))
        api_ferr_add(fe, API_FERR_REQUIRED, "metadata.name", "%s", "");
    else if (!is_dns_subdomain(vm->name))
        api_ferr_add(fe, API_FERR_INVALID, "metadata.name",
                     "\"%.63s\": must be a lowercase RFC 1123 subdomain", vm->name);
    if (!set(vm->class_name))
        api_ferr_add(fe, API_FERR_REQUIRED, "spec.className", "vmop needs a VirtualMachineClass");
    if (!set(vm->image_name) && !set(vm->image_ref))
        api_ferr_add(fe, API_FERR_REQUIRED, "spec.imageName", "imageName or image is required");
    if (set(vm->image_kind) && strcmp(vm->image_kind, "VirtualMachineImage") != 0 &&
        strcmp(vm->image_kind, "ClusterVirtualMachineImage") != 0)
        api_ferr_add(fe, API_FERR_NOT_SUPPORTED, "spec.image.kind",
                     "\"%.63s\": supported values: \"ClusterVirtualMachineImage\", "
                     "\"VirtualMachineImage\"",
                     vm->image_kind);
    if (set(vm->image_name) && set(vm->image_ref) && strncmp(vm->image_name, "vmi-", 4) == 0 &&
        strcmp(vm->image_name, vm->image_ref) != 0)
        api_ferr_add(fe, API_FERR_INVALID, "spec.image.name",
                     "\"%.63s\": must agree with imageName", vm->image_ref);
    if (set(vm->bios_uuid) && !is_uuid(vm->bios_uuid))
        api_ferr_add(fe, API_FERR_INVALID, "spec.biosUUID", "\"%.63s\": must be a UUID",
                     vm->bios_uuid);
    if (set(vm->instance_uuid) && !is_uuid(vm->instance_uuid))
        api_ferr_add(fe, API_FERR_INVALID, "spec.instanceUUID", "\"%.63s\": must be a UUID",
                     vm->instance_uuid);
    {
        const cJSON *spec = cJSON_GetObjectItemCaseSensitive(vm->obj, "spec");
        static const char *const modes[] = {"powerOffMode", "suspendMode", "restartMode"};
        const cJSON *ps = cJSON_GetObjectItemCaseSensitive(spec, "powerState");
        if (cJSON_IsString(ps) && vm->power_state == API_POWER_UNSET)
            api_ferr_add(fe, API_FERR_NOT_SUPPORTED, "spec.powerState",
                         "\"%.63s\": supported values: \"PoweredOff\", \"PoweredOn\", "
                         "\"Suspended\"",
                         ps->valuestring);
        for (size_t i = 0; i < 3; i++) {
            const cJSON *m = cJSON_GetObjectItemCaseSensitive(spec, modes[i]);
            if (cJSON_IsString(m) && strcmp(m->valuestring, "Hard") != 0 &&
                strcmp(m->valuestring, "Soft") != 0 && strcmp(m->valuestring, "TrySoft") != 0)
                api_ferr_add(fe, API_FERR_NOT_SUPPORTED, api_path(p, sizeof(p), "spec", modes[i]),
                             "\"%.63s\": supported values: \"Hard\", \"Soft\", \"TrySoft\"",
                             m->valuestring);
        }
    }
    if (vm->min_hw_version && vm->min_hw_version < 13)
        api_ferr_add(fe, API_FERR_INVALID, "spec.minHardwareVersion",
                     "%lld: must be greater than or equal to 13", vm->min_hw_version);
    if (set(vm->boot_disk_capacity)) {
        struct api_qty q;
        struct vmop_err qerr = {0};
        if (api_qty_parse(vm->boot_disk_capacity, &q, &qerr) != VMOP_OK)
            api_ferr_add(fe, API_FERR_INVALID, "spec.advanced.bootDiskCapacity",
                         "must be a quantity");
        else if (api_qty_sign(&q) <= 0 || !api_qty_is_multiple_of(&q, API_QTY_MIB))
            api_ferr_add(fe, API_FERR_INVALID, "spec.advanced.bootDiskCapacity",
                         "must be a positive whole number of MiB");
    }
    validate_bootstrap(vm, fe);
    if (set(vm->host_name) && !is_host_label(vm->host_name))
        api_ferr_add(fe, API_FERR_INVALID, "spec.network.hostName",
                     "\"%.63s\": must be an RFC 1034 label of at most 63 characters",
                     vm->host_name);
    if (vm->n_nics_total > API_VM_MAX_NICS)
        api_ferr_add(fe, API_FERR_TOO_MANY, "spec.network.interfaces",
                     "%zu: must have at most %d items", vm->n_nics_total, API_VM_MAX_NICS);
    if (vm->network_disabled && vm->n_nics_total > 0)
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.network.interfaces",
                     "interfaces are not allowed when networking is disabled");
    for (size_t i = 0; i < vm->n_nics; i++)
        validate_nic(vm, i, fe);
    if (vm->n_volumes_total > API_VM_MAX_VOLUMES)
        api_ferr_add(fe, API_FERR_TOO_MANY, "spec.volumes", "%zu: must have at most %d items",
                     vm->n_volumes_total, API_VM_MAX_VOLUMES);
    for (size_t i = 0; i < vm->n_volumes; i++) {
        const struct api_vm_volume *v = &vm->volumes[i];
        char b[API_FERR_PATH_MAX];
        api_path_index(b, sizeof(b), "spec.volumes", i);
        if (!set(v->name))
            api_ferr_add(fe, API_FERR_REQUIRED, api_path(p, sizeof(p), b, "name"), "%s", "");
        else if (!is_dns_subdomain(v->name))
            api_ferr_add(fe, API_FERR_INVALID, api_path(p, sizeof(p), b, "name"),
                         "\"%.63s\": must be a lowercase RFC 1123 subdomain", v->name);
        for (size_t j = 0; j < i && set(v->name); j++)
            if (vm->volumes[j].name && strcmp(vm->volumes[j].name, v->name) == 0)
                api_ferr_add(fe, API_FERR_DUPLICATE, api_path(p, sizeof(p), b, "name"), "\"%.63s\"",
                             v->name);
        if (!set(v->claim_name))
            api_ferr_add(fe, API_FERR_REQUIRED,
                         api_path(p, sizeof(p), b, "persistentVolumeClaim.claimName"), "%s", "");
    }
    if (vm->probe_actions > 1)
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.readinessProbe",
                     "only one readiness probe action may be set");
    if (vm->probe_timeout && (vm->probe_timeout < 1 || vm->probe_timeout > 60))
        api_ferr_add(fe, API_FERR_INVALID, "spec.readinessProbe.timeoutSeconds",
                     "%lld: must be between 1 and 60", vm->probe_timeout);
}

void api_vm_validate(const struct api_vm *vm, const struct api_vm *old, struct api_ferrs *fe)
{
    api_vm_validate_object(vm, fe);
    if (old)
        validate_update(vm, old, fe);
    else
        validate_create_only(vm, fe);
}
