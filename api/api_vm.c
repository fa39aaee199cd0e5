/* api_vm.c: VirtualMachine parse into the typed view, and serialization (see api_vm.h).
 * Defaults live in api_vm_default.c, validation in api_vm_validate.c. */
#include "api_vm.h"

#include <stdlib.h>
#include <string.h>

#include "api_json.h"

const char *api_power_state_str(enum api_power_state s)
{
    switch (s) {
    case API_POWER_ON:
        return "PoweredOn";
    case API_POWER_OFF:
        return "PoweredOff";
    case API_POWER_SUSPENDED:
        return "Suspended";
    case API_POWER_UNSET:
        break;
    }
    return "";
}

enum api_power_state api_power_state_parse(const char *s)
{
    if (!s)
        return API_POWER_UNSET;
    if (strcmp(s, "PoweredOn") == 0)
        return API_POWER_ON;
    if (strcmp(s, "PoweredOff") == 0)
        return API_POWER_OFF;
    if (strcmp(s, "Suspended") == 0)
        return API_POWER_SUSPENDED;
    return API_POWER_UNSET;
}

static enum api_power_mode mode_parse(const char *s)
{
    if (!s)
        return API_MODE_UNSET;
    if (strcmp(s, "Hard") == 0)
        return API_MODE_HARD;
    if (strcmp(s, "Soft") == 0)
        return API_MODE_SOFT;
    if (strcmp(s, "TrySoft") == 0)
        return API_MODE_TRYSOFT;
    return API_MODE_UNSET;
}

static void parse_nic(const cJSON *j, const char *path, struct api_vm_nic *n, struct api_ferrs *fe)
{
    char p[API_FERR_PATH_MAX];
    const cJSON *net = api_json_obj(j, "network", path, fe);
    long long mtu = 0;

    memset(n, 0, sizeof(*n));
    if (!cJSON_IsObject(j)) {
        api_ferr_add(fe, API_FERR_TYPE, path, "must be of type object");
        return;
    }
    n->name = api_json_str(j, "name", path, fe);
    api_path(p, sizeof(p), path, "network");
    n->network_name = api_json_str(net, "name", p, fe);
    n->network_kind = api_json_str(net, "kind", p, fe);
    n->mac_addr = api_json_str(j, "macAddr", path, fe);
    n->guest_device_name = api_json_str(j, "guestDeviceName", path, fe);
    n->gateway4 = api_json_str(j, "gateway4", path, fe);
    n->gateway6 = api_json_str(j, "gateway6", path, fe);
    api_json_bool(j, "dhcp4", path, fe, &n->dhcp4);
    api_json_bool(j, "dhcp6", path, fe, &n->dhcp6);
    if (api_json_int(j, "mtu", path, fe, &mtu))
        n->mtu = mtu;
    n->addresses = api_json_arr(j, "addresses", path, fe);
    n->nameservers = api_json_arr(j, "nameservers", path, fe);
    n->routes = api_json_arr(j, "routes", path, fe);
    n->search_domains = api_json_arr(j, "searchDomains", path, fe);
}

static void parse_volume(const cJSON *j, const char *path, struct api_vm_volume *v,
                         struct api_ferrs *fe)
{
    char p[API_FERR_PATH_MAX];
    const cJSON *pvc = api_json_obj(j, "persistentVolumeClaim", path, fe);

    memset(v, 0, sizeof(*v));
    v->removable = 1;
    if (!cJSON_IsObject(j)) {
        api_ferr_add(fe, API_FERR_TYPE, path, "must be of type object");
        return;
    }
    v->name = api_json_str(j, "name", path, fe);
    api_json_bool(j, "removable", path, fe, &v->removable);
    api_path(p, sizeof(p), path, "persistentVolumeClaim");
    v->claim_name = api_json_str(pvc, "claimName", p, fe);
    v->has_instance_claim = api_json_obj(pvc, "instanceVolumeClaim", p, fe) != NULL;
}

static void parse_bootstrap(struct api_vm *vm, const cJSON *b, struct api_ferrs *fe)
{
    const cJSON *ci = api_json_obj(b, "cloudInit", "spec.bootstrap", fe);
    const cJSON *sp = api_json_obj(b, "sysprep", "spec.bootstrap", fe);
    const cJSON *va = api_json_obj(b, "vAppConfig", "spec.bootstrap", fe);

    if (ci) {
        vm->bootstrap |= API_BOOT_CLOUDINIT;
        vm->cloudinit_instance_id = api_json_str(ci, "instanceID", "spec.bootstrap.cloudInit", fe);
        vm->has_cloud_config =
            api_json_obj(ci, "cloudConfig", "spec.bootstrap.cloudInit", fe) != NULL;
        vm->has_raw_cloud_config =
            api_json_obj(ci, "rawCloudConfig", "spec.bootstrap.cloudInit", fe) != NULL;
    }
    if (api_json_obj(b, "linuxPrep", "spec.bootstrap", fe))
        vm->bootstrap |= API_BOOT_LINUXPREP;
    if (sp) {
        vm->bootstrap |= API_BOOT_SYSPREP;
        vm->has_sysprep_typed = api_json_obj(sp, "sysprep", "spec.bootstrap.sysprep", fe) != NULL;
        vm->has_raw_sysprep = api_json_obj(sp, "rawSysprep", "spec.bootstrap.sysprep", fe) != NULL;
    }
    if (va) {
        vm->bootstrap |= API_BOOT_VAPP;
        vm->has_vapp_properties =
            api_json_arr(va, "properties", "spec.bootstrap.vAppConfig", fe) != NULL;
        vm->has_vapp_raw =
            api_json_str(va, "rawProperties", "spec.bootstrap.vAppConfig", fe) != NULL;
    }
}

static void parse_network(struct api_vm *vm, const cJSON *n, struct api_ferrs *fe)
{
    const cJSON *ifs = api_json_arr(n, "interfaces", "spec.network", fe);
    const cJSON *it;
    char p[API_FERR_PATH_MAX];

    vm->has_network = 1;
    api_json_bool(n, "disabled", "spec.network", fe, &vm->network_disabled);
    vm->host_name = api_json_str(n, "hostName", "spec.network", fe);
    vm->domain_name = api_json_str(n, "domainName", "spec.network", fe);
    cJSON_ArrayForEach(it, ifs)
    {
        if (vm->n_nics < API_VM_MAX_NICS) {
            api_path_index(p, sizeof(p), "spec.network.interfaces", vm->n_nics);
            parse_nic(it, p, &vm->nics[vm->n_nics++], fe);
        }
        vm->n_nics_total++;
    }
}

static void parse_spec(struct api_vm *vm, const cJSON *spec, struct api_ferrs *fe)
{
    const cJSON *image = api_json_obj(spec, "image", "spec", fe);
    const cJSON *reserved = api_json_obj(spec, "reserved", "spec", fe);
    const cJSON *boot = api_json_obj(spec, "bootstrap", "spec", fe);
    const cJSON *net = api_json_obj(spec, "network", "spec", fe);
    const cJSON *vols = api_json_arr(spec, "volumes", "spec", fe);
    const cJSON *adv = api_json_obj(spec, "advanced", "spec", fe);
    const cJSON *probe = api_json_obj(spec, "readinessProbe", "spec", fe);
    const cJSON *it;
    char p[API_FERR_PATH_MAX];

    vm->image_name = api_json_str(spec, "imageName", "spec", fe);
    vm->image_kind = api_json_str(image, "kind", "spec.image", fe);
    vm->image_ref = api_json_str(image, "name", "spec.image", fe);
    vm->class_name = api_json_str(spec, "className", "spec", fe);
    vm->storage_class = api_json_str(spec, "storageClass", "spec", fe);
    vm->bios_uuid = api_json_str(spec, "biosUUID", "spec", fe);
    vm->instance_uuid = api_json_str(spec, "instanceUUID", "spec", fe);
    vm->guest_id = api_json_str(spec, "guestID", "spec", fe);
    vm->next_restart_time = api_json_str(spec, "nextRestartTime", "spec", fe);
    vm->resource_policy_name = api_json_str(reserved, "resourcePolicyName", "spec.reserved", fe);
    vm->boot_disk_capacity = NULL;
    if (adv) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(adv, "bootDiskCapacity");
        if (cJSON_IsString(c))
            vm->boot_disk_capacity = c->valuestring;
        else if (c && !cJSON_IsNull(c) && !cJSON_IsNumber(c))
            api_ferr_add(fe, API_FERR_TYPE, "spec.advanced.bootDiskCapacity",
                         "must be a quantity (string or integer)");
    }
    vm->power_state = api_power_state_parse(api_json_str(spec, "powerState", "spec", fe));
    vm->power_off_mode = mode_parse(api_json_str(spec, "powerOffMode", "spec", fe));
    vm->suspend_mode = mode_parse(api_json_str(spec, "suspendMode", "spec", fe));
    vm->restart_mode = mode_parse(api_json_str(spec, "restartMode", "spec", fe));
    api_json_int(spec, "minHardwareVersion", "spec", fe, &vm->min_hw_version);
    if (boot)
        parse_bootstrap(vm, boot, fe);
    if (net)
        parse_network(vm, net, fe);
    cJSON_ArrayForEach(it, vols)
    {
        if (vm->n_volumes < API_VM_MAX_VOLUMES) {
            api_path_index(p, sizeof(p), "spec.volumes", vm->n_volumes);
            parse_volume(it, p, &vm->volumes[vm->n_volumes++], fe);
        }
        vm->n_volumes_total++;
    }
    if (probe) {
        vm->probe_actions = !!api_json_obj(probe, "tcpSocket", "spec.readinessProbe", fe) +
                            !!api_json_obj(probe, "guestHeartbeat", "spec.readinessProbe", fe) +
                            !!api_json_arr(probe, "guestInfo", "spec.readinessProbe", fe);
        api_json_int(probe, "timeoutSeconds", "spec.readinessProbe", fe, &vm->probe_timeout);
        api_json_int(probe, "periodSeconds", "spec.readinessProbe", fe, &vm->probe_period);
    }
}

static void parse_view(struct api_vm *vm)
{
    cJSON *obj = vm->obj;
    struct api_ferrs *fe = &vm->parse_errs;
    const cJSON *md, *spec, *status, *snet;

    /* reset the view, keep the object */
    memset((char *)vm + sizeof(vm->obj), 0, sizeof(*vm) - sizeof(vm->obj));
    md = api_json_obj(obj, "metadata", "", fe);
    spec = api_json_obj(obj, "spec", "", fe);
    status = api_json_obj(obj, "status", "", fe);
    snet = api_json_obj(status, "network", "status", fe);

    vm->name = api_json_str(md, "name", "metadata", fe);
    vm->namespace_ = api_json_str(md, "namespace", "metadata", fe);
    vm->uid = api_json_str(md, "uid", "metadata", fe);
    vm->resource_version = api_json_str(md, "resourceVersion", "metadata", fe);
    vm->deletion_timestamp = api_json_str(md, "deletionTimestamp", "metadata", fe);
    api_json_int(md, "generation", "metadata", fe, &vm->generation);
    vm->labels = api_json_obj(md, "labels", "metadata", fe);
    vm->annotations = api_json_obj(md, "annotations", "metadata", fe);
    if (spec)
        parse_spec(vm, spec, fe);
    vm->status_power_state =
        api_power_state_parse(api_json_str(status, "powerState", "status", fe));
    vm->status_unique_id = api_json_str(status, "uniqueID", "status", fe);
    vm->status_bios_uuid = api_json_str(status, "biosUUID", "status", fe);
    vm->status_instance_uuid = api_json_str(status, "instanceUUID", "status", fe);
    vm->status_last_restart_time = api_json_str(status, "lastRestartTime", "status", fe);
    vm->status_primary_ip4 = api_json_str(snet, "primaryIP4", "status.network", fe);
    vm->status_primary_ip6 = api_json_str(snet, "primaryIP6", "status.network", fe);
}

vmop_rc api_vm_reparse(struct api_vm *vm, struct vmop_err *err)
{
    (void)err;
    parse_view(vm);
    return VMOP_OK;
}

vmop_rc api_vm_parse(const cJSON *json, struct api_vm **ret_vm, struct vmop_err *err)
{
    struct api_vm *vm;

    if (!cJSON_IsObject(json))
        return vmop_fail(err, VMOP_E_INVALID, "a VirtualMachine must be a JSON object");
    vm = calloc(1, sizeof(*vm));
    if (!vm)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory parsing a VirtualMachine");
    vm->obj = cJSON_Duplicate(json, 1);
    if (!vm->obj) {
        free(vm);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory copying a VirtualMachine");
    }
    parse_view(vm);
    *ret_vm = vm;
    return VMOP_OK;
}

vmop_rc api_vm_parse_text(const char *text, size_t len, struct api_vm **ret_vm,
                          struct vmop_err *err)
{
    cJSON *json;
    vmop_rc rc;

    if (len > API_VM_MAX_BYTES)
        return vmop_fail(err, VMOP_E_TOOBIG, "VirtualMachine of %zu bytes (limit %u)", len,
                         API_VM_MAX_BYTES);
    json = cJSON_ParseWithLength(text, len);
    if (!json)
        return vmop_fail(err, VMOP_E_INVALID, "VirtualMachine is not valid JSON");
    rc = api_vm_parse(json, ret_vm, err);
    cJSON_Delete(json);
    return rc;
}

void api_vm_free(struct api_vm *vm)
{
    if (!vm)
        return;
    cJSON_Delete(vm->obj);
    free(vm);
}

vmop_rc api_vm_to_json(const struct api_vm *vm, cJSON **ret_json, struct vmop_err *err)
{
    cJSON *j = cJSON_Duplicate(vm->obj, 1);
    if (!j)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory serializing a VirtualMachine");
    *ret_json = j;
    return VMOP_OK;
}

cJSON *api_vm_spec(struct api_vm *vm)
{
    return api_json_ensure_obj(vm->obj, "spec");
}

cJSON *api_vm_status(struct api_vm *vm)
{
    return api_json_ensure_obj(vm->obj, "status");
}

cJSON *api_vm_conditions(struct api_vm *vm)
{
    cJSON *st = api_vm_status(vm), *c;
    if (!st)
        return NULL;
    c = cJSON_GetObjectItemCaseSensitive(st, "conditions");
    if (cJSON_IsArray(c))
        return c;
    c = cJSON_CreateArray();
    if (!c)
        return NULL;
    if (cJSON_GetObjectItemCaseSensitive(st, "conditions"))
        cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
    if (!cJSON_AddItemToObject(st, "conditions", c)) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}
