/* api_admit_vm.c: the VirtualMachine admission rules (see api_admit.h): the mutating-stage checks
 * on the request as sent, and the validating-stage create and update rules. Messages and field
 * paths are VM Operator's (webhooks/virtualmachine/{mutation,validation}); the rules on the object
 * alone come from api_vm_validate_object(), the metadata rules from api_admit_priv.c.
 *
 * One deliberate difference: the operator backfills defaults on objects created while the webhook
 * was not installed, so a privileged user may fill an immutable field that was empty (spec.image,
 * the first interfaces); VM Operator never needs that because its webhook is always installed. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api_admit.h"
#include "api_vm.h"

#define MSG_NRT_ON_CREATE  "cannot restart VM on create"
#define MSG_NRT_NOW        "mutation webhooks are required to restart VM"
#define MSG_NRT_FORMAT     "must be formatted as RFC3339Nano"
#define MSG_NRT_ONLY_NOW   "may only be set to \"now\""
#define MSG_NRT_POWERED_ON "can only restart powered on vm"
#define MSG_INST_STORAGE   "adding or modifying instance storage volume claim(s) is not allowed"
#define MSG_BOOTSTRAP      "bootstrap provider type cannot be changed"
#define MSG_NICS_COUNT     "network interfaces cannot be added or removed"
#define MSG_CDROM_ADD      "adding new CD-ROMs is not allowed when VM is powered on"
#define MSG_CDROM_DEL      "removing CD-ROMs is not allowed when VM is powered on"
#define MSG_HW_DOWNGRADE   "cannot downgrade hardware version"
#define MSG_HW_POWER       "cannot upgrade hardware version unless powered off"
#define MSG_NOT_REMOVABLE  "cannot remove volume with removable=false"
#define MSG_AFFINITY       "updating Affinity is not allowed"
#define MSG_SC_NAMESPACE   "Storage policy is not associated with the namespace %.63s by object %.63s"

/* obj.<a>.<b>... for a NULL-terminated key list; NULL when any step is missing. */
static const cJSON *dig(const cJSON *obj, const char *a, const char *b, const char *c)
{
    const char *keys[] = {a, b, c};
    for (size_t i = 0; i < 3 && keys[i] && obj; i++)
        obj = cJSON_GetObjectItemCaseSensitive(obj, keys[i]);
    return obj;
}

/* A string member ("" when absent or not a string: Go's zero value). */
static const char *dig_str(const cJSON *obj, const char *a, const char *b, const char *c)
{
    const cJSON *v = dig(obj, a, b, c);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static int same_json(const cJSON *a, const cJSON *b)
{
    if (cJSON_IsNull(a))
        a = NULL;
    if (cJSON_IsNull(b))
        b = NULL;
    if (!a || !b)
        return !a && !b;
    return cJSON_Compare(a, b, 1);
}

static int nonempty(const char *s)
{
    return s && *s;
}

static void immutable_str(const char *o, const char *n, const char *field, struct api_ferrs *fe)
{
    if (strcmp(o ? o : "", n ? n : "") != 0)
        api_ferr_add(fe, API_FERR_INVALID, field, "\"%.63s\": %s", n ? n : "", API_MSG_IMMUTABLE);
}

/* Go's time.Parse(time.RFC3339Nano): date T time, optional fraction, Z or +hh:mm / -hh:mm. */
static int is_rfc3339(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    size_t i;
    for (i = 0; shape[i]; i++) {
        if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
            return 0;
    }
    s += i;
    if (*s == '.') {
        if (!(s[1] >= '0' && s[1] <= '9'))
            return 0;
        for (s++; *s >= '0' && *s <= '9'; s++)
            ;
    }
    if (strcmp(s, "Z") == 0)
        return 1;
    return (s[0] == '+' || s[0] == '-') && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' &&
           s[2] <= '9' && s[3] == ':' && s[4] >= '0' && s[4] <= '9' && s[5] >= '0' && s[5] <= '9' &&
           s[6] == '\0';
}

static struct api_vm *parse_or_report(const cJSON *json, struct api_ferrs *fe)
{
    struct api_vm *vm = NULL;
    struct vmop_err err = {0};
    if (api_vm_parse(json, &vm, &err) != VMOP_OK) {
        api_ferr_add(fe, API_FERR_INVALID, "", "must be a JSON object (%.160s)", err.msg);
        return NULL;
    }
    return vm;
}

void api_vm_admit_request(const cJSON *old, const cJSON *req, const struct api_admit_ctx *ctx,
                          struct api_ferrs *fe)
{
    const char *nrt;
    int priv = ctx && ctx->privileged;

    if (!old) {
        if (!priv && nonempty(dig_str(req, "spec", "instanceUUID", NULL)))
            api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.instanceUUID", "%s", API_MSG_PRIV_ONLY);
        if (!priv && nonempty(dig_str(req, "spec", "biosUUID", NULL)))
            api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.biosUUID", "%s", API_MSG_PRIV_ONLY);
        return;
    }
    nrt = dig_str(req, "spec", "nextRestartTime", NULL);
    if (!*nrt)
        return; /* mutation keeps the old value */
    if (strcasecmp(nrt, "now") == 0) {
        if (strcmp(dig_str(old, "spec", "powerState", NULL), "PoweredOn") != 0)
            api_ferr_add(fe, API_FERR_INVALID, "spec.nextRestartTime", "\"%.63s\": %s", nrt,
                         MSG_NRT_POWERED_ON);
    } else if (strcmp(nrt, dig_str(old, "spec", "nextRestartTime", NULL)) != 0) {
        api_ferr_add(fe, API_FERR_INVALID, "spec.nextRestartTime", "\"%.63s\": %s", nrt,
                     MSG_NRT_ONLY_NOW);
    }
}

/* The binding's storage classes and networks (create, or a changed value on update). */
static void check_binding(const struct api_vm *vm, const struct api_vm *old,
                          const struct api_admit_ctx *ctx, struct api_ferrs *fe)
{
    const struct api_binding *b = ctx ? ctx->binding : NULL;
    const char *ns = vm->namespace_ ? vm->namespace_ : "";

    if (!b)
        return;
    if (nonempty(vm->storage_class) &&
        (!old || !old->storage_class || strcmp(old->storage_class, vm->storage_class) != 0) &&
        !api_binding_allows_storage_class(b, vm->storage_class))
        api_ferr_add(fe, API_FERR_INVALID, "spec.storageClass", "\"%.63s\": " MSG_SC_NAMESPACE,
                     vm->storage_class, ns, vm->storage_class);
    for (size_t i = 0; i < vm->n_nics; i++) {
        const char *net = vm->nics[i].network_name;
        char p[API_FERR_PATH_MAX];
        if (!nonempty(net) || api_binding_port_group(b, net))
            continue;
        if (old && i < old->n_nics && old->nics[i].network_name &&
            strcmp(old->nics[i].network_name, net) == 0)
            continue;
        snprintf(p, sizeof(p), "spec.network.interfaces[%zu].network.name", i);
        api_ferr_add(fe, API_FERR_INVALID, p,
                     "\"%.63s\": network is not available in namespace %.63s", net, ns);
    }
}

/* spec.volumes[] entries with persistentVolumeClaim.instanceVolumeClaim, compared as a list. */
static int instance_volumes_equal(const cJSON *o, const cJSON *n)
{
    const cJSON *ov = dig(o, "spec", "volumes", NULL), *nv = dig(n, "spec", "volumes", NULL);
    const cJSON *a = cJSON_IsArray(ov) ? ov->child : NULL,
                *b = cJSON_IsArray(nv) ? nv->child : NULL;

    for (;;) {
        while (a && !dig(a, "persistentVolumeClaim", "instanceVolumeClaim", NULL))
            a = a->next;
        while (b && !dig(b, "persistentVolumeClaim", "instanceVolumeClaim", NULL))
            b = b->next;
        if (!a || !b)
            return !a && !b;
        if (!cJSON_Compare(a, b, 1))
            return 0;
        a = a->next;
        b = b->next;
    }
}

void api_vm_validate_create(const cJSON *json, const struct api_admit_ctx *ctx,
                            struct api_ferrs *fe)
{
    struct api_vm *vm = parse_or_report(json, fe);
    int priv = ctx && ctx->privileged;

    if (!vm)
        return;
    api_vm_validate_object(vm, fe);
    api_admit_vm_metadata(NULL, vm->obj, ctx, fe);
    if (vm->power_state == API_POWER_SUSPENDED)
        api_ferr_add(fe, API_FERR_INVALID, "spec.powerState",
                     "\"Suspended\": cannot set a new VM's power state to Suspended");
    if (nonempty(vm->next_restart_time))
        api_ferr_add(fe, API_FERR_INVALID, "spec.nextRestartTime", "\"%.63s\": %s",
                     vm->next_restart_time, MSG_NRT_ON_CREATE);
    if (!priv && !instance_volumes_equal(NULL, vm->obj))
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.volumes", "%s", MSG_INST_STORAGE);
    check_binding(vm, NULL, ctx, fe);
    api_vm_free(vm);
}

static void check_image_and_class(const struct api_vm *vm, const struct api_vm *old, int priv,
                                  struct api_ferrs *fe)
{
    const cJSON *oi = dig(old->obj, "spec", "image", NULL),
                *ni = dig(vm->obj, "spec", "image", NULL);

    immutable_str(old->image_name, vm->image_name, "spec.imageName", fe);
    if (!same_json(oi, ni) && !(priv && (!oi || cJSON_IsNull(oi)))) {
        char *text = ni && !cJSON_IsNull(ni) ? cJSON_PrintUnformatted(ni) : NULL;
        api_ferr_add(fe, API_FERR_INVALID, "spec.image", "%.120s: %s", text ? text : "null",
                     API_MSG_IMMUTABLE);
        cJSON_free(text);
    }
    /* className may change (a resize) but not become empty. */
    if (nonempty(old->class_name) && !nonempty(vm->class_name) &&
        api_ferrs_find(fe, "spec.className") < 0)
        api_ferr_add(fe, API_FERR_REQUIRED, "spec.className", "%s", "");
}

static void check_immutable(const struct api_vm *vm, const struct api_vm *old,
                            const struct api_admit_ctx *ctx, struct api_ferrs *fe)
{
    int priv = ctx && ctx->privileged;
    const char *oz = dig_str(old->obj, "metadata", "labels", API_LABEL_ZONE);

    check_image_and_class(vm, old, priv, fe);
    immutable_str(old->storage_class, vm->storage_class, "spec.storageClass", fe);
    if (nonempty(old->bios_uuid))
        immutable_str(old->bios_uuid, vm->bios_uuid, "spec.biosUUID", fe);
    if (nonempty(old->instance_uuid))
        immutable_str(old->instance_uuid, vm->instance_uuid, "spec.instanceUUID", fe);
    immutable_str(old->resource_policy_name, vm->resource_policy_name,
                  "spec.reserved.resourcePolicyName", fe);
    if (*oz && !priv)
        immutable_str(oz, dig_str(vm->obj, "metadata", "labels", API_LABEL_ZONE),
                      "metadata.labels[" API_LABEL_ZONE "]", fe);
    if (!same_json(dig(old->obj, "spec", "affinity", NULL), dig(vm->obj, "spec", "affinity", NULL)))
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.affinity", "%s", MSG_AFFINITY);
}

static void check_network(const struct api_vm *vm, const struct api_vm *old, int priv,
                          struct api_ferrs *fe)
{
    const cJSON *oa = dig(old->obj, "spec", "network", "interfaces");
    const cJSON *na = dig(vm->obj, "spec", "network", "interfaces");
    int on = cJSON_IsArray(oa) ? cJSON_GetArraySize(oa) : 0;
    int nn = cJSON_IsArray(na) ? cJSON_GetArraySize(na) : 0;
    const cJSON *o, *n;
    size_t i = 0;

    if (on != nn) {
        if (!(priv && on == 0)) /* the operator backfilling the default interface */
            api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.network.interfaces", "%s", MSG_NICS_COUNT);
        return;
    }
    for (o = on ? oa->child : NULL, n = nn ? na->child : NULL; o && n; o = o->next, n = n->next) {
        char b[64], p[API_FERR_PATH_MAX];
        snprintf(b, sizeof(b), "spec.network.interfaces[%zu]", i++);
        if (strcmp(dig_str(o, "name", NULL, NULL), dig_str(n, "name", NULL, NULL)) != 0) {
            snprintf(p, sizeof(p), "%s.name", b);
            api_ferr_add(fe, API_FERR_FORBIDDEN, p, "%s", API_MSG_IMMUTABLE);
        }
        if (!same_json(dig(o, "network", NULL, NULL), dig(n, "network", NULL, NULL))) {
            snprintf(p, sizeof(p), "%s.network", b);
            api_ferr_add(fe, API_FERR_FORBIDDEN, p, "%s", API_MSG_IMMUTABLE);
        }
        snprintf(p, sizeof(p), "%s.macAddr", b);
        immutable_str(dig_str(o, "macAddr", NULL, NULL), dig_str(n, "macAddr", NULL, NULL), p, fe);
    }
}

/* VM Operator's validateBootstrapProviderImmutable (non-privileged users only). */
static void check_bootstrap(const cJSON *o, const cJSON *n, struct api_ferrs *fe)
{
    static const char *const kinds[] = {"cloudInit", "linuxPrep", "sysprep"};
    const cJSON *ob = dig(o, "spec", "bootstrap", NULL), *nb = dig(n, "spec", "bootstrap", NULL);

    if (!ob || cJSON_IsNull(ob))
        return;
    if (!nb || cJSON_IsNull(nb)) {
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.bootstrap", "%s", MSG_BOOTSTRAP);
        return;
    }
    for (size_t i = 0; i < 3; i++) {
        const cJSON *ok = cJSON_GetObjectItemCaseSensitive(ob, kinds[i]);
        const cJSON *nk = cJSON_GetObjectItemCaseSensitive(nb, kinds[i]);
        if (ok && !cJSON_IsNull(ok) && (!nk || cJSON_IsNull(nk))) {
            char p[API_FERR_PATH_MAX];
            snprintf(p, sizeof(p), "spec.bootstrap.%s", kinds[i]);
            api_ferr_add(fe, API_FERR_FORBIDDEN, p, "%s", MSG_BOOTSTRAP);
            return;
        }
    }
}

static const cJSON *find_cdrom(const cJSON *arr, const char *name)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        if (strcmp(dig_str(it, "name", NULL, NULL), name) == 0)
            return it;
    }
    return NULL;
}

/* guestID, CD-ROMs and bootOptions while the VM stays powered on (VM Operator's
 * validateUpdatesWhenPoweredOn; connecting or disconnecting a CD-ROM is allowed). */
static void check_powered_on(const cJSON *o, const cJSON *n, struct api_ferrs *fe)
{
    const cJSON *oc = dig(o, "spec", "hardware", "cdrom"),
                *nc = dig(n, "spec", "hardware", "cdrom");
    int on = cJSON_IsArray(oc) ? cJSON_GetArraySize(oc) : 0;
    int nn = cJSON_IsArray(nc) ? cJSON_GetArraySize(nc) : 0;
    const cJSON *it;
    size_t i = 0;

    if (strcmp(dig_str(o, "spec", "guestID", NULL), dig_str(n, "spec", "guestID", NULL)) != 0)
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.guestID", "%s", API_MSG_WHEN_POWERED_ON);
    if (on != nn) {
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.hardware.cdrom", "%s", API_MSG_WHEN_POWERED_ON);
    } else if (on) {
        cJSON_ArrayForEach(it, oc)
        {
            if (!find_cdrom(nc, dig_str(it, "name", NULL, NULL)))
                api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.hardware.cdrom.name", "%s",
                             MSG_CDROM_DEL);
        }
        cJSON_ArrayForEach(it, nc)
        {
            const cJSON *prev = find_cdrom(oc, dig_str(it, "name", NULL, NULL));
            char p[API_FERR_PATH_MAX];
            if (!prev) {
                snprintf(p, sizeof(p), "spec.hardware.cdrom[%zu].name", i);
                api_ferr_add(fe, API_FERR_FORBIDDEN, p, "%s", MSG_CDROM_ADD);
            } else if (!same_json(dig(prev, "image", NULL, NULL), dig(it, "image", NULL, NULL))) {
                snprintf(p, sizeof(p), "spec.hardware.cdrom[%zu].image", i);
                api_ferr_add(fe, API_FERR_FORBIDDEN, p, "%s", API_MSG_WHEN_POWERED_ON);
            }
            i++;
        }
    }
    if (!same_json(dig(o, "spec", "bootOptions", NULL), dig(n, "spec", "bootOptions", NULL)))
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.bootOptions", "%s", API_MSG_WHEN_POWERED_ON);
}

static int has_poweron_check(const cJSON *vm)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, dig(vm, "metadata", "annotations", NULL))
    {
        if (strncmp(it->string, API_ANNO_CHECK_POWERON, strlen(API_ANNO_CHECK_POWERON)) == 0)
            return 1;
    }
    return 0;
}

/* VM Operator's validatePowerStateOnUpdate, on the desired (spec) power states. */
static void check_power(const struct api_vm *vm, const struct api_vm *old, struct api_ferrs *fe)
{
    const char *ps = dig_str(vm->obj, "spec", "powerState", NULL);

    if (!*ps) {
        api_ferr_add(fe, API_FERR_INVALID, "spec.powerState",
                     "\"\": cannot set power state to empty string");
        return;
    }
    if (old->power_state == API_POWER_OFF && vm->power_state == API_POWER_SUSPENDED)
        api_ferr_add(fe, API_FERR_INVALID, "spec.powerState",
                     "\"Suspended\": cannot suspend a VM that is powered off");
    if (old->power_state == API_POWER_ON && vm->power_state == API_POWER_ON &&
        !has_poweron_check(old->obj))
        check_powered_on(old->obj, vm->obj, fe);
}

static void check_restart_and_hw(const struct api_vm *vm, const struct api_vm *old,
                                 struct api_ferrs *fe)
{
    const char *n = vm->next_restart_time ? vm->next_restart_time : "";
    const char *o = old->next_restart_time ? old->next_restart_time : "";

    if (strcmp(n, o) != 0) {
        if (strcasecmp(n, "now") == 0)
            api_ferr_add(fe, API_FERR_INVALID, "spec.nextRestartTime", "\"%.63s\": %s", n,
                         MSG_NRT_NOW);
        else if (!is_rfc3339(n))
            api_ferr_add(fe, API_FERR_INVALID, "spec.nextRestartTime", "\"%.63s\": %s", n,
                         MSG_NRT_FORMAT);
    }
    if (vm->min_hw_version < old->min_hw_version)
        api_ferr_add(fe, API_FERR_INVALID, "spec.minHardwareVersion", "%lld: %s",
                     vm->min_hw_version, MSG_HW_DOWNGRADE);
    else if (vm->min_hw_version > old->min_hw_version && old->power_state != API_POWER_OFF &&
             vm->power_state != API_POWER_OFF)
        api_ferr_add(fe, API_FERR_INVALID, "spec.minHardwareVersion", "%lld: %s",
                     vm->min_hw_version, MSG_HW_POWER);
}

static void check_volumes(const struct api_vm *vm, const struct api_vm *old, int priv,
                          struct api_ferrs *fe)
{
    for (size_t i = 0; i < old->n_volumes; i++) {
        const struct api_vm_volume *o = &old->volumes[i];
        int found = 0;
        if (o->removable || !o->name)
            continue;
        for (size_t j = 0; j < vm->n_volumes && !found; j++)
            found = vm->volumes[j].name && strcmp(o->name, vm->volumes[j].name) == 0;
        if (!found) {
            char p[API_FERR_PATH_MAX];
            snprintf(p, sizeof(p), "spec.volumes[%zu]", i);
            api_ferr_add(fe, API_FERR_FORBIDDEN, p, "%s", MSG_NOT_REMOVABLE);
        }
    }
    if (!priv && !instance_volumes_equal(old->obj, vm->obj))
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.volumes", "%s", MSG_INST_STORAGE);
}

void api_vm_validate_update(const cJSON *old_json, const cJSON *json,
                            const struct api_admit_ctx *ctx, struct api_ferrs *fe)
{
    struct api_vm *vm = parse_or_report(json, fe), *old;
    int priv = ctx && ctx->privileged;

    if (!vm)
        return;
    old = parse_or_report(old_json, fe);
    if (!old) {
        api_vm_free(vm);
        return;
    }
    api_admit_vm_metadata(old->obj, vm->obj, ctx, fe);
    if (nonempty(vm->deletion_timestamp)) {
        /* Under deletion VM Operator admits every update (finalizers must come off whatever the
         * spec says); vmop keeps the metadata rules so that a tenant cannot lift a delete check
         * from a VM being deleted. */
        api_vm_free(old);
        api_vm_free(vm);
        return;
    }
    api_vm_validate_object(vm, fe);
    check_immutable(vm, old, ctx, fe);
    check_network(vm, old, priv, fe);
    if (!priv)
        check_bootstrap(old->obj, vm->obj, fe);
    check_power(vm, old, fe);
    check_restart_and_hw(vm, old, fe);
    check_volumes(vm, old, priv, fe);
    check_binding(vm, old, ctx, fe);
    api_vm_free(old);
    api_vm_free(vm);
}
