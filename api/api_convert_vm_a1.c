/* api_convert_vm_a1.c: the VirtualMachine v1alpha2 <-> v1alpha1 step, after VM Operator's
 * api/v1alpha1/virtualmachine_conversion.go: lower-camel power states and modes, vmMetadata <->
 * bootstrap (the transport picks cloudInit/linuxPrep/sysprep/vAppConfig and the Secret key),
 * networkInterfaces <-> network.interfaces (eth0, eth1, ... and the network kind from
 * networkType), advancedOptions <-> advanced, the boot disk's vSphereVolume <->
 * advanced.bootDiskCapacity, resourcePolicyName <-> reserved, and status phase/vmIp/host/
 * networkInterfaces. v1alpha1 is rebuilt from a whitelist: everything else is left to the
 * conversion-data annotation. Not converted (VM Operator drops them too): ports,
 * networkInterfaces[].ethernetCardType/providerRef, vSphereVolumes other than the boot disk, and
 * the v1alpha1 PrereqReady condition translation. */
#include <stdio.h>
#include <string.h>

#include "api_convert_int.h"

#define CM_ANNOTATION  "vmoperator.vmware.com/v1a1-configmap-md-transport"
#define BOOT_DISK_NAME "vmoperator-vm-boot-disk"
#define BOOT_DISK_KEY  2000
#define CREATED_COND   "VirtualMachineCreated"

static const char *const power_hub[] = {"PoweredOn", "PoweredOff", "Suspended"};
static const char *const power_a1[] = {"poweredOn", "poweredOff", "suspended"};
static const char *const mode_hub[] = {"Hard", "Soft", "TrySoft"};
static const char *const mode_a1[] = {"hard", "soft", "trySoft"};
static const char *const modes[] = {"powerOffMode", "suspendMode", "restartMode"};

/* network kinds by v1alpha1 networkType */
static const struct {
    const char *type, *api_version, *kind;
} nets[] = {
    {"vsphere-distributed", "netoperator.vmware.com/v1alpha1", "Network"},
    {"nsx-t", "vmware.com/v1alpha1", "VirtualNetwork"},
    {"nsx-t-subnet", "crd.nsx.vmware.com/v1alpha1", "Subnet"},
    {"nsx-t-subnetset", "crd.nsx.vmware.com/v1alpha1", "SubnetSet"},
};

static void copy_key(struct cv *cv, cJSON *to, const cJSON *from, const char *k)
{
    cv_put(cv, to, k, cv_dup(cv, cv_get(from, k)));
}

static void put_nonempty(struct cv *cv, cJSON *o, const char *k, cJSON *v)
{
    if (v && ((cJSON_IsObject(v) || cJSON_IsArray(v)) && !v->child)) {
        cJSON_Delete(v);
        return;
    }
    cv_put(cv, o, k, v);
}

static cJSON *new_obj(struct cv *cv)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        cv->rc = VMOP_E_NOMEM;
    return o;
}

static cJSON *new_arr(struct cv *cv)
{
    cJSON *o = cJSON_CreateArray();
    if (!o)
        cv->rc = VMOP_E_NOMEM;
    return o;
}

static void push(struct cv *cv, cJSON *arr, cJSON *v)
{
    if (!v)
        return;
    if (!arr || !cJSON_AddItemToArray(arr, v)) {
        cJSON_Delete(v);
        cv->rc = VMOP_E_NOMEM;
    }
}

static void selector(struct cv *cv, cJSON *o, const char *k, const char *name, const char *key)
{
    cJSON *s = new_obj(cv);
    cv_put_str(cv, s, "name", name);
    cv_put_str(cv, s, "key", key);
    cv_put(cv, o, k, s);
}

/* ---- spec ---- */

static cJSON *bootstrap_up(struct cv *cv, const cJSON *md)
{
    const char *tr = cv_str(md, "transport"), *name = cv_str(md, "secretName");
    cJSON *b, *x;

    if (!cJSON_IsObject(md) || !md->child)
        return NULL;
    if (!name || !*name)
        name = cv_str(md, "configMapName");
    b = new_obj(cv);
    if (!tr)
        return b;
    if (strcmp(tr, "ExtraConfig") == 0 || strcmp(tr, "CloudInit") == 0) {
        x = cv_ensure(cv, b, "cloudInit");
        if (name && *name)
            selector(cv, x, "rawCloudConfig", name,
                     tr[0] == 'E' ? "guestinfo.userdata" : "user-data");
    } else if (strcmp(tr, "OvfEnv") == 0) {
        cv_put(cv, cv_ensure(cv, b, "linuxPrep"), "hardwareClockIsUTC", cJSON_CreateTrue());
        x = cv_ensure(cv, b, "vAppConfig");
        if (name && *name)
            cv_put_str(cv, x, "rawProperties", name);
    } else if (strcmp(tr, "vAppConfig") == 0) {
        x = cv_ensure(cv, b, "vAppConfig");
        if (name && *name)
            cv_put_str(cv, x, "rawProperties", name);
    } else if (strcmp(tr, "Sysprep") == 0) {
        x = cv_ensure(cv, b, "sysprep");
        if (name && *name)
            selector(cv, x, "rawSysprep", name, "unattend");
    }
    return b;
}

static cJSON *bootstrap_down(struct cv *cv, const cJSON *b, int use_cm)
{
    const cJSON *ci = cv_get(b, "cloudInit"), *sp = cv_get(b, "sysprep");
    const cJSON *va = cv_get(b, "vAppConfig");
    const char *tr = NULL, *name = NULL;
    cJSON *md;

    if (!cJSON_IsObject(b) || !b->child)
        return NULL;
    md = new_obj(cv);
    if (ci) {
        const cJSON *raw = cv_get(ci, "rawCloudConfig");
        const char *key = cv_str(raw, "key");
        tr = key && strcmp(key, "guestinfo.userdata") == 0 ? "ExtraConfig" : "CloudInit";
        name = cv_str(raw, "name");
    } else if (sp) {
        tr = "Sysprep";
        name = cv_str(cv_get(sp, "rawSysprep"), "name");
    } else if (va) {
        tr = cv_get(b, "linuxPrep") ? "OvfEnv" : "vAppConfig";
        name = cv_str(va, "rawProperties");
    }
    if (name && *name)
        cv_put_str(cv, md, use_cm ? "configMapName" : "secretName", name);
    if (tr)
        cv_put_str(cv, md, "transport", tr);
    return md;
}

static cJSON *nics_up(struct cv *cv, const cJSON *nis)
{
    cJSON *net, *ifs, *it;
    int i = 0;
    size_t j;

    if (!cJSON_IsArray(nis) || !nis->child)
        return NULL;
    net = new_obj(cv);
    ifs = new_arr(cv);
    cJSON_ArrayForEach(it, nis)
    {
        cJSON *o = new_obj(cv);
        const char *nn = cv_str(it, "networkName"), *nt = cv_str(it, "networkType");
        char name[32];
        snprintf(name, sizeof(name), "eth%d", i++);
        cv_put_str(cv, o, "name", name);
        if ((nn && *nn) || (nt && *nt)) {
            cJSON *ref = cv_ensure(cv, o, "network");
            if (nn && *nn)
                cv_put_str(cv, ref, "name", nn);
            for (j = 0; nt && j < sizeof(nets) / sizeof(nets[0]); j++) {
                if (strcmp(nt, nets[j].type) == 0) {
                    cv_put_str(cv, ref, "apiVersion", nets[j].api_version);
                    cv_put_str(cv, ref, "kind", nets[j].kind);
                }
            }
        }
        push(cv, ifs, o);
    }
    cv_put(cv, net, "interfaces", ifs);
    return net;
}

static cJSON *nics_down(struct cv *cv, const cJSON *net)
{
    cJSON *out, *it;
    size_t j;

    if (!cJSON_IsObject(net))
        return NULL;
    out = new_arr(cv);
    cJSON_ArrayForEach(it, cv_get(net, "interfaces"))
    {
        cJSON *o = new_obj(cv), *ref = cv_get(it, "network");
        const char *nn = cv_str(ref, "name"), *kind = cv_str(ref, "kind");
        if (nn && *nn)
            cv_put_str(cv, o, "networkName", nn);
        for (j = 0; kind && j < sizeof(nets) / sizeof(nets[0]); j++)
            if (strcmp(kind, nets[j].kind) == 0)
                cv_put_str(cv, o, "networkType", nets[j].type);
        push(cv, out, o);
    }
    return out;
}

static cJSON *probe_copy(struct cv *cv, const cJSON *p)
{
    static const char *const keys[] = {"tcpSocket", "guestHeartbeat", "timeoutSeconds",
                                       "periodSeconds"};
    cJSON *o;
    size_t i;

    if (!cJSON_IsObject(p))
        return NULL;
    o = new_obj(cv);
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        copy_key(cv, o, p, keys[i]);
    return o;
}

static cJSON *advanced_up(struct cv *cv, const cJSON *ao, const cJSON *vols)
{
    const cJSON *opts = cv_get(ao, "defaultVolumeProvisioningOptions"), *it;
    const cJSON *thin = cv_get(opts, "thinProvisioned"), *ez = cv_get(opts, "eagerZeroed");
    cJSON *o = new_obj(cv);

    cJSON_ArrayForEach(it, vols)
    {
        const cJSON *vs = cv_get(it, "vSphereVolume"), *dk = cv_get(vs, "deviceKey");
        if (cJSON_IsNumber(dk) && dk->valueint == BOOT_DISK_KEY) {
            copy_key(cv, o, cv_get(vs, "capacity"), "ephemeral-storage");
            cv_move(cv, o, "ephemeral-storage", "bootDiskCapacity");
            break;
        }
    }
    if (cJSON_IsBool(thin))
        cv_put_str(cv, o, "defaultVolumeProvisioningMode", cJSON_IsTrue(thin) ? "Thin" : "Thick");
    else if (cJSON_IsTrue(ez))
        cv_put_str(cv, o, "defaultVolumeProvisioningMode", "ThickEagerZero");
    copy_key(cv, o, ao, "changeBlockTracking");
    return o;
}

static cJSON *advanced_down(struct cv *cv, const cJSON *adv)
{
    const char *mode = cv_str(adv, "defaultVolumeProvisioningMode");
    cJSON *o = new_obj(cv), *opts = NULL;

    copy_key(cv, o, adv, "changeBlockTracking");
    if (mode && (strcmp(mode, "Thin") == 0 || strcmp(mode, "Thick") == 0)) {
        opts = cv_ensure(cv, o, "defaultVolumeProvisioningOptions");
        if (strcmp(mode, "Thin") == 0)
            cv_put(cv, opts, "thinProvisioned", cJSON_CreateTrue());
        else
            cv_put(cv, opts, "thinProvisioned", cJSON_CreateFalse());
    } else if (mode && strcmp(mode, "ThickEagerZero") == 0) {
        opts = cv_ensure(cv, o, "defaultVolumeProvisioningOptions");
        cv_put(cv, opts, "eagerZeroed", cJSON_CreateTrue());
    }
    return o;
}

static cJSON *volumes_pvc(struct cv *cv, const cJSON *vols)
{
    cJSON *out = new_arr(cv), *it;
    cJSON_ArrayForEach(it, vols)
    {
        cJSON *o;
        if (!cv_get(it, "persistentVolumeClaim"))
            continue;
        o = new_obj(cv);
        copy_key(cv, o, it, "name");
        copy_key(cv, o, it, "persistentVolumeClaim");
        push(cv, out, o);
    }
    return out;
}

/* The spec keys both shapes share, copied from in to out; the power state and the three modes
 * mapped from one spelling (from_power, from_mode) to the other. */
static void copy_shared(struct cv *cv, cJSON *out, const cJSON *in, const char *const *from_power,
                        const char *const *to_power, const char *const *from_mode,
                        const char *const *to_mode)
{
    static const char *const same[] = {"imageName", "className", "storageClass",
                                       "minHardwareVersion", "nextRestartTime"};
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
        copy_key(cv, out, in, same[i]);
    copy_key(cv, out, in, "powerState");
    cv_map_str(cv, out, "powerState", from_power, to_power, 3);
    for (size_t i = 0; i < 3; i++) {
        copy_key(cv, out, in, modes[i]);
        cv_map_str(cv, out, modes[i], from_mode, to_mode, 3);
    }
}

static void spec_down(struct cv *cv, cJSON *obj)
{
    cJSON *in = cv_take(obj, "spec"), *out, *ann, *vols, *cap;
    int use_cm;

    if (!in)
        return;
    if (!cJSON_IsObject(in) || !(out = new_obj(cv))) {
        cv_put(cv, obj, "spec", in);
        return;
    }
    copy_shared(cv, out, in, power_hub, power_a1, mode_hub, mode_a1);
    ann = cv_at(obj, "metadata.annotations");
    use_cm = cv_get(ann, CM_ANNOTATION) != NULL;
    {
        cJSON *md = bootstrap_down(cv, cv_get(in, "bootstrap"), use_cm);
        if (md && use_cm && cv_get(md, "configMapName")) {
            cJSON_DeleteItemFromObjectCaseSensitive(ann, CM_ANNOTATION);
            cv_prune_empty(cv_get(obj, "metadata"), "annotations");
        }
        cv_put(cv, out, "vmMetadata", md);
    }
    put_nonempty(cv, out, "networkInterfaces", nics_down(cv, cv_get(in, "network")));
    put_nonempty(cv, out, "readinessProbe", probe_copy(cv, cv_get(in, "readinessProbe")));
    if (cv_get(in, "advanced"))
        put_nonempty(cv, out, "advancedOptions", advanced_down(cv, cv_get(in, "advanced")));
    copy_key(cv, out, cv_get(in, "reserved"), "resourcePolicyName");
    vols = volumes_pvc(cv, cv_get(in, "volumes"));
    cap = cv_dup(cv, cv_at(in, "advanced.bootDiskCapacity"));
    if (cap) {
        cJSON *v = new_obj(cv), *vs = cv_ensure(cv, v, "vSphereVolume");
        cv_put_str(cv, v, "name", BOOT_DISK_NAME);
        cv_put(cv, cv_ensure(cv, vs, "capacity"), "ephemeral-storage", cap);
        cv_put(cv, vs, "deviceKey", cJSON_CreateNumber(BOOT_DISK_KEY));
        push(cv, vols, v);
    }
    put_nonempty(cv, out, "volumes", vols);
    cJSON_Delete(in);
    cv_put(cv, obj, "spec", out);
}

static void spec_up(struct cv *cv, cJSON *obj)
{
    cJSON *in = cv_take(obj, "spec"), *out, *rp;
    const cJSON *md;

    if (!in)
        return;
    if (!cJSON_IsObject(in) || !(out = new_obj(cv))) {
        cv_put(cv, obj, "spec", in);
        return;
    }
    copy_shared(cv, out, in, power_a1, power_hub, mode_a1, mode_hub);
    md = cv_get(in, "vmMetadata");
    cv_put(cv, out, "bootstrap", bootstrap_up(cv, md));
    if (cv_str(md, "configMapName") && *cv_str(md, "configMapName") &&
        !(cv_str(md, "secretName") && *cv_str(md, "secretName"))) {
        cJSON *ann = cv_ensure(cv, cv_ensure(cv, obj, "metadata"), "annotations");
        if (!cv_get(ann, CM_ANNOTATION))
            cv_put_str(cv, ann, CM_ANNOTATION, "true");
    }
    cv_put(cv, out, "network", nics_up(cv, cv_get(in, "networkInterfaces")));
    put_nonempty(cv, out, "readinessProbe", probe_copy(cv, cv_get(in, "readinessProbe")));
    if (cv_get(in, "advancedOptions") || cv_get(in, "volumes"))
        put_nonempty(cv, out, "advanced",
                     advanced_up(cv, cv_get(in, "advancedOptions"), cv_get(in, "volumes")));
    rp = cv_dup(cv, cv_get(in, "resourcePolicyName"));
    if (rp)
        cv_put(cv, cv_ensure(cv, out, "reserved"), "resourcePolicyName", rp);
    put_nonempty(cv, out, "volumes", volumes_pvc(cv, cv_get(in, "volumes")));
    cJSON_Delete(in);
    cv_put(cv, obj, "spec", out);
}

/* ---- status ---- */

static const char *const status_same[] = {
    "uniqueID", "biosUUID",        "instanceUUID",    "conditions", "changeBlockTracking",
    "zone",     "lastRestartTime", "hardwareVersion", "host"};

static const char *phase_of(const cJSON *conds)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, conds)
    {
        const char *t = cv_str(it, "type");
        if (t && strcmp(t, CREATED_COND) == 0) {
            const char *s = cv_str(it, "status");
            return s && strcmp(s, "True") == 0 ? "Created" : "Creating";
        }
    }
    return "Unknown";
}

static void status_down(struct cv *cv, cJSON *obj)
{
    cJSON *in = cv_take(obj, "status"), *out, *nis, *vols, *it;
    const cJSON *net;
    const char *ip;
    size_t i;

    if (!in)
        return;
    if (!cJSON_IsObject(in) || !(out = new_obj(cv))) {
        cv_put(cv, obj, "status", in);
        return;
    }
    for (i = 0; i < sizeof(status_same) / sizeof(status_same[0]); i++)
        copy_key(cv, out, in, status_same[i]);
    copy_key(cv, out, in, "powerState");
    cv_map_str(cv, out, "powerState", power_hub, power_a1, 3);
    cv_put_str(cv, out, "phase", phase_of(cv_get(in, "conditions")));
    net = cv_get(in, "network");
    ip = cv_str(net, "primaryIP4");
    if (!ip || !*ip)
        ip = cv_str(net, "primaryIP6");
    if (ip && *ip)
        cv_put_str(cv, out, "vmIp", ip);
    nis = new_arr(cv);
    cJSON_ArrayForEach(it, cv_get(net, "interfaces"))
    {
        cJSON *o = new_obj(cv), *ips = new_arr(cv), *a;
        const cJSON *ipst = cv_get(it, "ip");
        cv_put(cv, o, "connected", cJSON_CreateTrue());
        copy_key(cv, o, ipst, "macAddr");
        cv_move(cv, o, "macAddr", "macAddress");
        cJSON_ArrayForEach(a, cv_get(ipst, "addresses"))
        {
            push(cv, ips, cv_dup(cv, cv_get(a, "address")));
        }
        put_nonempty(cv, o, "ipAddresses", ips);
        push(cv, nis, o);
    }
    put_nonempty(cv, out, "networkInterfaces", nis);
    vols = new_arr(cv);
    cJSON_ArrayForEach(it, cv_get(in, "volumes"))
    {
        static const char *const vk[] = {"name", "attached", "diskUUID", "error"};
        const char *type = cv_str(it, "type");
        cJSON *o;
        if (type && strcmp(type, "Classic") == 0)
            continue;
        o = new_obj(cv);
        for (i = 0; i < sizeof(vk) / sizeof(vk[0]); i++)
            copy_key(cv, o, it, vk[i]);
        push(cv, vols, o);
    }
    put_nonempty(cv, out, "volumes", vols);
    cJSON_Delete(in);
    cv_put(cv, obj, "status", out);
}

static void status_up(struct cv *cv, cJSON *obj)
{
    cJSON *in = cv_take(obj, "status"), *out, *net = NULL, *ifs, *vols, *it;
    const char *ip;
    size_t i;

    if (!in)
        return;
    if (!cJSON_IsObject(in) || !(out = new_obj(cv))) {
        cv_put(cv, obj, "status", in);
        return;
    }
    for (i = 0; i < sizeof(status_same) / sizeof(status_same[0]); i++)
        copy_key(cv, out, in, status_same[i]);
    copy_key(cv, out, in, "powerState");
    cv_map_str(cv, out, "powerState", power_a1, power_hub, 3);
    ip = cv_str(in, "vmIp");
    ifs = cv_get(in, "networkInterfaces");
    if ((ip && *ip) || (cJSON_IsArray(ifs) && ifs->child)) {
        cJSON *arr = new_arr(cv);
        net = new_obj(cv);
        if (ip && *ip)
            cv_put_str(cv, net, strchr(ip, ':') ? "primaryIP6" : "primaryIP4", ip);
        cJSON_ArrayForEach(it, ifs)
        {
            cJSON *o = new_obj(cv), *ipst = cv_ensure(cv, o, "ip"), *addrs = new_arr(cv), *a;
            cJSON_ArrayForEach(a, cv_get(it, "ipAddresses"))
            {
                cJSON *e = new_obj(cv);
                cv_put(cv, e, "address", cv_dup(cv, a));
                push(cv, addrs, e);
            }
            put_nonempty(cv, ipst, "addresses", addrs);
            copy_key(cv, ipst, it, "macAddress");
            cv_move(cv, ipst, "macAddress", "macAddr");
            push(cv, arr, o);
        }
        put_nonempty(cv, net, "interfaces", arr);
    }
    cv_put(cv, out, "network", net);
    vols = new_arr(cv);
    cJSON_ArrayForEach(it, cv_get(in, "volumes"))
    {
        cJSON *o = cv_dup(cv, it);
        if (cJSON_IsObject(o))
            cv_put_str(cv, o, "type", "Managed");
        push(cv, vols, o);
    }
    put_nonempty(cv, out, "volumes", vols);
    cJSON_Delete(in);
    cv_put(cv, obj, "status", out);
}

void cv_vm_a1_down(struct cv *cv, cJSON *obj)
{
    spec_down(cv, obj);
    status_down(cv, obj);
}

void cv_vm_a1_up(struct cv *cv, cJSON *obj)
{
    spec_up(cv, obj);
    status_up(cv, obj);
}
