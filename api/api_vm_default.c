/* api_vm_default.c: VM Operator's mutating-webhook defaults for a VirtualMachine (see api_vm.h).
 * Every default is idempotent: applying it twice changes nothing the second time, so the operator
 * can run it on every reconcile and write back only when *ret_changed is non-zero. */
#include "api_vm.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api_json.h"

void api_uuid_v4_format(const unsigned char rnd[16], char out[37])
{
    unsigned char b[16];
    memcpy(b, rnd, 16);
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

void api_time_rfc3339nano(const struct timespec *ts, char *buf, size_t n)
{
    struct tm tm;
    char frac[16] = "";
    time_t t = ts->tv_sec;
    long ns = ts->tv_nsec;

    if (ns > 0 && ns < 1000000000L) {
        int len;
        snprintf(frac, sizeof(frac), ".%09ld", ns);
        len = (int)strlen(frac);
        while (len > 1 && frac[len - 1] == '0')
            frac[--len] = '\0';
    }
    if (!gmtime_r(&t, &tm)) {
        snprintf(buf, n, "1970-01-01T00:00:00Z");
        return;
    }
    snprintf(buf, n, "%04d-%02d-%02dT%02d:%02d:%02d%sZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
}

static vmop_rc new_uuid(const struct api_vm_default_ctx *ctx, char out[37], struct vmop_err *err)
{
    unsigned char rnd[16];
    vmop_rc rc;
    if (!ctx->random_bytes)
        return vmop_fail(err, VMOP_E_INVALID, "no random source for UUID defaults");
    if ((rc = ctx->random_bytes(ctx->random_arg, rnd, sizeof(rnd), err)))
        return rc;
    api_uuid_v4_format(rnd, out);
    return VMOP_OK;
}

static vmop_rc default_nic(cJSON *spec, const char *network, struct vmop_err *err)
{
    cJSON *net = api_json_ensure_obj(spec, "network"), *ifs, *nic, *ref;
    if (!net)
        goto nomem;
    ifs = cJSON_CreateArray();
    nic = cJSON_CreateObject();
    ref = cJSON_CreateObject();
    if (!ifs || !nic || !ref || !cJSON_AddItemToArray(ifs, nic)) {
        cJSON_Delete(ifs);
        cJSON_Delete(nic);
        cJSON_Delete(ref);
        goto nomem;
    }
    if (!cJSON_AddStringToObject(nic, "name", "eth0") ||
        !cJSON_AddItemToObject(nic, "network", ref)) {
        cJSON_Delete(ref);
        cJSON_Delete(ifs);
        goto nomem;
    }
    if (!cJSON_AddStringToObject(ref, "name", network)) {
        cJSON_Delete(ifs);
        goto nomem;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(net, "interfaces");
    if (!cJSON_AddItemToObject(net, "interfaces", ifs)) {
        cJSON_Delete(ifs);
        goto nomem;
    }
    return VMOP_OK;
nomem:
    return vmop_fail(err, VMOP_E_NOMEM, "out of memory adding the default interface");
}

vmop_rc api_vm_default(struct api_vm *vm, const struct api_vm *old,
                       const struct api_vm_default_ctx *ctx, unsigned *ret_changed,
                       vmop_rc *ret_image_rc, struct vmop_err *err)
{
    cJSON *spec = api_vm_spec(vm);
    unsigned changed = 0;
    vmop_rc rc = VMOP_OK, image_rc = VMOP_OK;
    char uuid[37], ts[48];
    enum api_power_state ps;

    if (!spec)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory defaulting a VirtualMachine");
    if (vm->power_state == API_POWER_UNSET &&
        !cJSON_GetObjectItemCaseSensitive(spec, "powerState")) {
        if ((rc = api_json_set_str(spec, "powerState", "PoweredOn", err)))
            goto out;
        changed |= API_VM_DEF_POWER;
    }
    static const char *const modes[] = {"powerOffMode", "suspendMode", "restartMode"};
    for (size_t i = 0; i < 3; i++) {
        if (!cJSON_GetObjectItemCaseSensitive(spec, modes[i])) {
            if ((rc = api_json_set_str(spec, modes[i], "TrySoft", err)))
                goto out;
            changed |= API_VM_DEF_MODES;
        }
    }
    if (!vm->bios_uuid || !*vm->bios_uuid) {
        if ((rc = new_uuid(ctx, uuid, err)) || (rc = api_json_set_str(spec, "biosUUID", uuid, err)))
            goto out;
        changed |= API_VM_DEF_UUIDS;
    }
    if (!vm->instance_uuid || !*vm->instance_uuid) {
        if ((rc = new_uuid(ctx, uuid, err)) ||
            (rc = api_json_set_str(spec, "instanceUUID", uuid, err)))
            goto out;
        changed |= API_VM_DEF_UUIDS;
    }
    api_vm_reparse(vm, err);
    if ((vm->bootstrap & API_BOOT_CLOUDINIT) &&
        (!vm->cloudinit_instance_id || !*vm->cloudinit_instance_id) && vm->bios_uuid) {
        cJSON *ci = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(spec, "bootstrap"), "cloudInit");
        char bios[37];
        snprintf(bios, sizeof(bios), "%s", vm->bios_uuid);
        if ((rc = api_json_set_str(ci, "instanceID", bios, err)))
            goto out;
        changed |= API_VM_DEF_INSTID;
    }
    if (!vm->network_disabled && vm->n_nics_total == 0 && ctx->default_network &&
        *ctx->default_network) {
        if ((rc = default_nic(spec, ctx->default_network, err)))
            goto out;
        changed |= API_VM_DEF_NIC;
    }
    api_vm_reparse(vm, err);
    int no_ref = !vm->image_ref || !*vm->image_ref;
    int kindless = !no_ref && (!vm->image_kind || !*vm->image_kind) && ctx->resolve_kindless_image;
    const char *by = vm->image_name && *vm->image_name ? vm->image_name : NULL;
    if (kindless && !by)
        by = vm->image_ref;
    if (by && (no_ref || kindless) && ctx->lookup_image) {
        char kind[API_NAME_MAX], name[API_NAME_MAX];
        struct vmop_err lerr = {0};
        image_rc = ctx->lookup_image(ctx->image_arg, vm->namespace_ ? vm->namespace_ : "", by, kind,
                                     name, &lerr);
        if (image_rc == VMOP_OK) {
            cJSON *img = api_json_ensure_obj(spec, "image");
            if (!img) {
                rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory setting spec.image");
                goto out;
            }
            if ((rc = api_json_set_str(img, "kind", kind, err)) ||
                (rc = api_json_set_str(img, "name", name, err)))
                goto out;
            changed |= API_VM_DEF_IMAGE;
        }
    }
    ps = old ? old->power_state : vm->power_state;
    if (vm->next_restart_time && strcasecmp(vm->next_restart_time, "now") == 0 &&
        ps == API_POWER_ON) {
        api_time_rfc3339nano(&ctx->now, ts, sizeof(ts));
        if ((rc = api_json_set_str(spec, "nextRestartTime", ts, err)))
            goto out;
        changed |= API_VM_DEF_RESTART;
    }
out:
    api_vm_reparse(vm, err);
    if (rc == VMOP_OK) {
        if (ret_changed)
            *ret_changed = changed;
        if (ret_image_rc)
            *ret_image_rc = image_rc;
    }
    return rc;
}
