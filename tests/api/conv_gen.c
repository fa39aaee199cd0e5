/* conv_gen.c: random valid objects per kind and version for the conversion property test (see
 * conv_gen.h). Each field is present with some probability; the shapes follow each version's
 * schema (v1alpha1's vmMetadata/networkInterfaces/lower-camel power states, v1alpha2's
 * status.host/image and joinDomain, spec.cdrom in v1alpha3/4, spec.hardware from v1alpha5,
 * v1alpha6's additions). Values stay inside what the version's schema accepts. */
#include "conv_gen.h"

#include <stdio.h>
#include <string.h>

const char *const conv_gen_kinds[6] = {"VirtualMachine",        "VirtualMachineClass",
                                       "VirtualMachineImage",   "ClusterVirtualMachineImage",
                                       "VirtualMachineService", "VirtualMachineSetResourcePolicy"};

static uint64_t next(struct conv_rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}

static int pick(struct conv_rng *r, int n)
{
    return (int)(next(r) % (uint64_t)n);
}

static int maybe(struct conv_rng *r)
{
    return pick(r, 2);
}

static const char *one(struct conv_rng *r, const char *const *v, int n)
{
    return v[pick(r, n)];
}

#define ONE(r, arr) one(r, arr, (int)(sizeof(arr) / sizeof(arr[0])))

static void word(struct conv_rng *r, char *buf, size_t n, const char *prefix)
{
    snprintf(buf, n, "%s%d", prefix, pick(r, 1000));
}

static void s(cJSON *o, const char *k, const char *v)
{
    cJSON_AddStringToObject(o, k, v);
}

static void sw(struct conv_rng *r, cJSON *o, const char *k, const char *prefix)
{
    char b[64];
    word(r, b, sizeof(b), prefix);
    s(o, k, b);
}

static cJSON *obj(cJSON *o, const char *k)
{
    return cJSON_AddObjectToObject(o, k);
}

static cJSON *ens(cJSON *o, const char *k)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return v ? v : obj(o, k);
}

static cJSON *arr(cJSON *o, const char *k)
{
    return cJSON_AddArrayToObject(o, k);
}

static cJSON *item(cJSON *a)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(a, o);
    return o;
}

static void n(cJSON *o, const char *k, double v)
{
    cJSON_AddNumberToObject(o, k, v);
}

static void b(cJSON *o, const char *k, int v)
{
    cJSON_AddBoolToObject(o, k, v);
}

static void strs(struct conv_rng *r, cJSON *o, const char *k, const char *prefix)
{
    cJSON *a = arr(o, k);
    int i, c = 1 + pick(r, 3);
    char buf[64];
    for (i = 0; i < c; i++) {
        word(r, buf, sizeof(buf), prefix);
        cJSON_AddItemToArray(a, cJSON_CreateString(buf));
    }
}

static void metadata(struct conv_rng *r, cJSON *root, int cluster)
{
    cJSON *md = obj(root, "metadata");
    sw(r, md, "name", "obj-");
    if (!cluster)
        sw(r, md, "namespace", "ns-");
    n(md, "generation", pick(r, 4));
    if (maybe(r))
        sw(r, obj(md, "labels"), "app", "a");
    if (maybe(r))
        sw(r, obj(md, "annotations"), "example.com/note", "n");
}

static cJSON *root(struct conv_rng *r, const char *kind, int v, int cluster)
{
    cJSON *o = cJSON_CreateObject();
    char gv[64];
    snprintf(gv, sizeof(gv), "vmoperator.vmware.com/v1alpha%d", v);
    s(o, "apiVersion", gv);
    s(o, "kind", kind);
    metadata(r, o, cluster);
    return o;
}

static void conditions(struct conv_rng *r, cJSON *st, int created)
{
    static const char *const types[] = {"Ready", "VirtualMachineClassReady", "Synced"};
    cJSON *a = arr(st, "conditions"), *c;
    int i, k = pick(r, 3);
    for (i = 0; i < k; i++) {
        c = item(a);
        s(c, "type", types[i]);
        s(c, "status", maybe(r) ? "True" : "False");
        s(c, "reason", "R");
        s(c, "lastTransitionTime", "2026-01-02T03:04:05Z");
    }
    if (created >= 0) {
        c = item(a);
        s(c, "type", "VirtualMachineCreated");
        s(c, "status", created ? "True" : "False");
        s(c, "reason", created ? "True" : "Error");
        s(c, "lastTransitionTime", "2026-01-02T03:04:05Z");
    }
}

/* ---- VirtualMachine ---- */

static const char *const powers[] = {"PoweredOn", "PoweredOff", "Suspended"};
static const char *const powers_a1[] = {"poweredOn", "poweredOff", "suspended"};
static const char *const mode_names[] = {"Hard", "Soft", "TrySoft"};
static const char *const modes_a1[] = {"hard", "soft", "trySoft"};
static const char *const mode_keys[] = {"powerOffMode", "suspendMode", "restartMode"};

static void vm_bootstrap(struct conv_rng *r, cJSON *spec, int v)
{
    cJSON *bs = obj(spec, "bootstrap"), *x;
    switch (pick(r, 3)) {
    case 0:
        x = obj(bs, "cloudInit");
        if (maybe(r)) {
            cJSON *sel = obj(x, "rawCloudConfig");
            sw(r, sel, "name", "secret-");
            s(sel, "key", "user-data");
        } else {
            strs(r, x, "sshAuthorizedKeys", "ssh-rsa AAA");
        }
        if (v >= 3 && maybe(r))
            sw(r, x, "instanceID", "iid-");
        if (v >= 4 && maybe(r))
            b(x, "waitOnNetwork4", 1);
        break;
    case 1:
        x = obj(bs, "linuxPrep");
        b(x, "hardwareClockIsUTC", maybe(r));
        if (maybe(r))
            s(x, "timeZone", "UTC");
        if (maybe(r)) {
            cJSON *p = item(arr(obj(bs, "vAppConfig"), "properties"));
            sw(r, p, "key", "k");
            sw(r, obj(p, "value"), "value", "v");
        }
        break;
    default:
        x = obj(obj(bs, "sysprep"), "sysprep");
        x = obj(x, "identification");
        sw(r, x, "joinWorkgroup", "wg");
        if (v == 2 && maybe(r))
            sw(r, x, "joinDomain", "corp");
        break;
    }
    if (v >= 6 && maybe(r))
        b(bs, "disabled", 0);
}

static void vm_network(struct conv_rng *r, cJSON *spec, int v)
{
    cJSON *net = obj(spec, "network"), *ifs;
    int i, k = pick(r, 3);
    sw(r, net, "hostName", "host");
    if (v >= 3 && maybe(r))
        s(net, "domainName", "example.com");
    if (maybe(r))
        strs(r, net, "nameservers", "10.0.0.");
    ifs = arr(net, "interfaces");
    for (i = 0; i < k; i++) {
        cJSON *it = item(ifs), *ref;
        char name[16];
        snprintf(name, sizeof(name), "eth%d", i);
        s(it, "name", name);
        if (maybe(r)) {
            ref = obj(it, "network");
            sw(r, ref, "name", "net");
            s(ref, "apiVersion", "netoperator.vmware.com/v1alpha1");
            s(ref, "kind", "Network");
        }
        if (maybe(r)) {
            b(it, "dhcp4", v >= 6 ? maybe(r) : 1);
        } else if (maybe(r)) {
            strs(r, it, "addresses", "192.168.1.");
            s(it, "gateway4", "192.168.1.1");
        }
        if (maybe(r))
            n(it, "mtu", 1500);
        if (maybe(r)) {
            cJSON *rt = item(arr(it, "routes"));
            s(rt, "to", "default");
            s(rt, "via", "192.168.1.1");
            n(rt, "metric", 1 + pick(r, 100));
        }
        if (v >= 6 && maybe(r))
            s(it, "type", "VMXNet3");
        if (v >= 6 && maybe(r))
            cJSON_AddItemToArray(arr(it, "ipamModes"), cJSON_CreateString("IPv4"));
    }
    if (v >= 6 && maybe(r)) {
        cJSON *vl = item(arr(net, "vlans"));
        s(vl, "name", "vlan10");
        n(vl, "id", 10);
        s(vl, "link", "eth0");
    }
}

static void vm_spec(struct conv_rng *r, cJSON *o, int v, int gen)
{
    cJSON *spec = obj(o, "spec"), *x;
    int i;
    (void)gen;
    sw(r, spec, "imageName", "vmi-");
    if (maybe(r))
        sw(r, spec, "className", "best-effort-");
    if (maybe(r))
        sw(r, spec, "storageClass", "sc-");
    if (maybe(r))
        s(spec, "powerState", ONE(r, powers));
    for (i = 0; i < 3; i++)
        if (maybe(r))
            s(spec, mode_keys[i], ONE(r, mode_names));
    if (maybe(r))
        n(spec, "minHardwareVersion", 13 + pick(r, 8));
    if (maybe(r))
        vm_bootstrap(r, spec, v);
    if (maybe(r))
        vm_network(r, spec, v);
    if (maybe(r)) {
        x = arr(spec, "volumes");
        for (i = 0; i < 1 + pick(r, 3); i++) {
            cJSON *vol = item(x), *pvc;
            char name[16];
            snprintf(name, sizeof(name), "vol%d", i);
            s(vol, "name", name);
            pvc = obj(vol, "persistentVolumeClaim");
            sw(r, pvc, "claimName", "pvc-");
            if (maybe(r))
                b(pvc, "readOnly", maybe(r));
            if (v >= 5 && maybe(r))
                s(pvc, "diskMode", "Persistent");
        }
    }
    if (maybe(r)) {
        x = obj(spec, "readinessProbe");
        if (maybe(r))
            n(obj(x, "tcpSocket"), "port", 22);
        else
            s(obj(x, "guestHeartbeat"), "thresholdStatus", "green");
        n(x, "timeoutSeconds", 1 + pick(r, 60));
    }
    if (maybe(r)) {
        x = obj(spec, "advanced");
        if (maybe(r))
            s(x, "bootDiskCapacity", "20Gi");
        if (maybe(r))
            s(x, "defaultVolumeProvisioningMode",
              ONE(r, ((const char *const[]){"Thin", "Thick", "ThickEagerZero"})));
        if (maybe(r))
            b(x, "changeBlockTracking", maybe(r));
        if (v >= 6 && maybe(r))
            b(x, "vmxSwapEnabled", 1);
        if (v >= 6 && maybe(r)) {
            cJSON *e = item(arr(x, "extraConfig"));
            s(e, "key", "a.b");
            s(e, "value", "1");
        }
        if (!x->child)
            b(x, "changeBlockTracking", 1);
    }
    if (maybe(r))
        sw(r, obj(spec, "reserved"), "resourcePolicyName", "policy-");
    if (v >= 3) {
        if (maybe(r)) {
            x = obj(spec, "image");
            s(x, "kind", maybe(r) ? "VirtualMachineImage" : "ClusterVirtualMachineImage");
            sw(r, x, "name", "vmi-");
        }
        if (maybe(r))
            s(spec, "instanceUUID", "1b2c3d4e-0000-4000-8000-000000000001");
        if (maybe(r))
            s(spec, "biosUUID", "1b2c3d4e-0000-4000-8000-000000000002");
        if (maybe(r))
            s(spec, "guestID", "ubuntu64Guest");
        if (maybe(r))
            s(obj(spec, "crypto"), "encryptionClassName", "enc");
        if (maybe(r)) {
            cJSON *cd = item(v >= 5 ? arr(ens(spec, "hardware"), "cdrom") : arr(spec, "cdrom"));
            s(cd, "name", "cdrom1");
            sw(r, obj(cd, "image"), "name", "vmi-iso");
            b(cd, "connected", maybe(r));
            if (v >= 5 && maybe(r))
                s(cd, "controllerType", "IDE");
        }
    }
    if (v >= 4) {
        if (maybe(r))
            s(spec, "promoteDisksMode", "Online");
        if (maybe(r))
            s(obj(spec, "bootOptions"), "firmware", "efi");
    }
    if (v >= 5) {
        if (maybe(r))
            sw(r, spec, "groupName", "grp");
        if (maybe(r))
            sw(r, spec, "currentSnapshotName", "snap");
        if (maybe(r)) {
            cJSON *sc = item(arr(ens(spec, "hardware"), "scsiControllers"));
            n(sc, "busNumber", 0);
            s(sc, "type", "ParaVirtual");
        }
        if (maybe(r)) {
            cJSON *p = item(arr(spec, "policies"));
            s(p, "apiVersion", "vsphere.policy.vmware.com/v1alpha1");
            s(p, "kind", "ComputePolicy");
            sw(r, p, "name", "cp");
        }
    }
    if (v >= 6) {
        if (maybe(r))
            s(spec, "volumeAttributesClassName", "vac");
        if (maybe(r))
            s(obj(obj(spec, "resources"), "requests"), "cpu", "1000");
    }
}

static void vm_status(struct conv_rng *r, cJSON *o, int v, int gen)
{
    cJSON *st = obj(o, "status"), *x;
    s(st, "powerState", ONE(r, powers));
    if (maybe(r))
        sw(r, st, "uniqueID", "vm-");
    if (maybe(r))
        conditions(r, st, pick(r, 3) - 1);
    if (maybe(r)) {
        cJSON *ifs, *it;
        x = obj(st, "network");
        s(x, "primaryIP4", "192.168.1.10");
        ifs = arr(x, "interfaces");
        it = item(ifs);
        s(it, "name", "eth0");
        s(cJSON_AddObjectToObject(it, "ip"), "macAddr", "00:50:56:aa:bb:cc");
    }
    if (maybe(r))
        sw(r, st, v == 2 ? "host" : "nodeName", "esx");
    if (maybe(r)) {
        cJSON *vol = item(arr(st, "volumes"));
        s(vol, "name", "vol0");
        b(vol, "attached", 1);
        s(vol, "type", "Managed");
        s(vol, "diskUUID", "6000c29");
    }
    if (maybe(r))
        n(st, "hardwareVersion", 19);
    if (v == 2 && gen > 0 && maybe(r)) {
        x = obj(st, "image");
        s(x, "apiVersion", "vmoperator.vmware.com/v1alpha6");
        s(x, "kind", "VirtualMachineImage");
        sw(r, x, "name", "vmi-");
    }
    if (v >= 3 && maybe(r))
        b(obj(st, "crypto"), "hasVTPM", 0);
    if (v >= 4 && maybe(r))
        s(obj(st, "storage"), "total", "10Gi");
    if (v >= 5 && maybe(r))
        n(obj(st, "hardware"), "cpu", 1);
    if (v >= 6 && maybe(r)) {
        cJSON *e = item(arr(st, "extraConfig"));
        s(e, "key", "guestinfo.x");
        s(e, "value", "y");
    }
}

static void vm_a1(struct conv_rng *r, cJSON *o)
{
    static const char *const transports[] = {"ExtraConfig", "CloudInit", "OvfEnv", "vAppConfig",
                                             "Sysprep"};
    static const char *const ntypes[] = {"vsphere-distributed", "nsx-t", "nsx-t-subnet",
                                         "nsx-t-subnetset"};
    cJSON *spec = obj(o, "spec"), *x, *st;
    int i, created;

    sw(r, spec, "imageName", "ubuntu-");
    if (maybe(r))
        sw(r, spec, "className", "best-effort-");
    if (maybe(r))
        sw(r, spec, "storageClass", "sc-");
    if (maybe(r))
        s(spec, "powerState", ONE(r, powers_a1));
    for (i = 0; i < 3; i++)
        if (maybe(r))
            s(spec, mode_keys[i], ONE(r, modes_a1));
    if (maybe(r)) {
        x = obj(spec, "vmMetadata");
        sw(r, x, maybe(r) ? "secretName" : "configMapName", "md-");
        s(x, "transport", ONE(r, transports));
    }
    if (maybe(r)) {
        x = arr(spec, "networkInterfaces");
        for (i = 0; i < 1 + pick(r, 2); i++) {
            cJSON *it = item(x);
            if (maybe(r))
                sw(r, it, "networkName", "net");
            if (maybe(r))
                s(it, "networkType", ONE(r, ntypes));
        }
    }
    if (maybe(r)) {
        x = obj(spec, "readinessProbe");
        n(obj(x, "tcpSocket"), "port", 22);
        if (maybe(r))
            n(x, "periodSeconds", 10);
    }
    if (maybe(r)) {
        x = obj(spec, "advancedOptions");
        if (maybe(r))
            b(obj(x, "defaultVolumeProvisioningOptions"), "thinProvisioned", maybe(r));
        else if (maybe(r))
            b(obj(x, "defaultVolumeProvisioningOptions"), "eagerZeroed", 1);
        if (!x->child || maybe(r))
            b(x, "changeBlockTracking", maybe(r));
    }
    if (maybe(r))
        sw(r, spec, "resourcePolicyName", "policy-");
    if (maybe(r)) {
        x = arr(spec, "volumes");
        if (maybe(r)) {
            cJSON *vol = item(x);
            s(vol, "name", "data");
            sw(r, obj(vol, "persistentVolumeClaim"), "claimName", "pvc-");
        }
        if (!x->child || maybe(r)) {
            cJSON *vol = item(x), *vs;
            s(vol, "name", "vmoperator-vm-boot-disk");
            vs = obj(vol, "vSphereVolume");
            s(obj(vs, "capacity"), "ephemeral-storage", "40Gi");
            n(vs, "deviceKey", 2000);
        }
    }
    if (!maybe(r))
        return;
    st = obj(o, "status");
    s(st, "powerState", ONE(r, powers_a1));
    created = pick(r, 3) - 1;
    if (maybe(r))
        sw(r, st, "uniqueID", "vm-");
    conditions(r, st, created);
    s(st, "phase", created < 0 ? "Unknown" : created ? "Created" : "Creating");
    if (maybe(r))
        s(st, "vmIp", maybe(r) ? "192.168.1.10" : "fd00::10");
    if (maybe(r))
        sw(r, st, "host", "esx");
    if (maybe(r)) {
        cJSON *it = item(arr(st, "networkInterfaces"));
        b(it, "connected", 1);
        s(it, "macAddress", "00:50:56:aa:bb:cc");
        strs(r, it, "ipAddresses", "192.168.1.");
    }
    if (maybe(r)) {
        cJSON *vol = item(arr(st, "volumes"));
        s(vol, "name", "data");
        b(vol, "attached", 1);
        s(vol, "diskUUID", "6000c29");
    }
}

/* ---- the other kinds ---- */

static void class_obj(struct conv_rng *r, cJSON *o, int v)
{
    cJSON *spec = obj(o, "spec"), *hw = obj(spec, "hardware");
    n(hw, "cpus", 1 + pick(r, 16));
    s(hw, "memory", ONE(r, ((const char *const[]){"2Gi", "4Gi", "8Gi"})));
    if (maybe(r))
        sw(r, item(arr(obj(hw, "devices"), "vgpuDevices")), "profileName", "grid-");
    if (maybe(r))
        s(obj(obj(obj(spec, "policies"), "resources"), "requests"), "cpu", "1000m");
    if (maybe(r))
        sw(r, spec, "description", "d");
    if (maybe(r))
        n(obj(spec, "configSpec"), "numCPUs", 2);
    if (v >= 2 && maybe(r))
        s(spec, "controllerName", "vmoperator.vmware.com/vsphere");
    if (v >= 5 && maybe(r))
        sw(r, spec, "reservedProfileID", "rp");
    if (v >= 5 && maybe(r))
        n(spec, "reservedSlots", pick(r, 4));
}

static void image_obj(struct conv_rng *r, cJSON *o, int v)
{
    cJSON *spec = obj(o, "spec"), *st, *x;
    x = obj(spec, "providerRef");
    s(x, "apiVersion", "imageregistry.vmware.com/v1alpha1");
    s(x, "kind", "ContentLibraryItem");
    sw(r, x, "name", "clitem-");
    if (v == 1) {
        if (maybe(r))
            s(spec, "type", "OVF");
        if (maybe(r))
            s(obj(spec, "productInfo"), "version", "1.0");
        if (maybe(r)) {
            x = obj(spec, "osInfo");
            s(x, "type", "ubuntu64Guest");
            s(x, "version", "22.04");
        }
        if (maybe(r))
            n(spec, "hwVersion", 19);
        if (maybe(r)) {
            st = obj(o, "status");
            sw(r, st, "imageName", "ubuntu-");
            if (maybe(r))
                sw(r, st, "contentVersion", "cv");
            if (maybe(r))
                conditions(r, st, -1);
        }
        return;
    }
    if (!maybe(r))
        return;
    st = obj(o, "status");
    sw(r, st, "name", "ubuntu-");
    if (maybe(r))
        s(st, "type", "OVF");
    if (maybe(r))
        sw(r, st, "providerContentVersion", "cv");
    if (maybe(r))
        sw(r, st, "providerItemID", "uuid-");
    if (maybe(r)) {
        x = obj(st, "osInfo");
        s(x, "type", "ubuntu64Guest");
        if (maybe(r))
            s(x, "id", "94");
    }
    if (maybe(r))
        n(st, "hardwareVersion", 19);
    if (maybe(r))
        s(st, "firmware", "efi");
    if (maybe(r))
        s(item(arr(st, "disks")), "name", "disk1");
    if (maybe(r))
        conditions(r, st, -1);
}

static void service_obj(struct conv_rng *r, cJSON *o, int v)
{
    cJSON *spec = obj(o, "spec"), *p;
    s(spec, "type", ONE(r, ((const char *const[]){"ClusterIP", "LoadBalancer"})));
    p = item(arr(spec, "ports"));
    s(p, "name", "ssh");
    s(p, "protocol", "TCP");
    n(p, "port", 22);
    n(p, "targetPort", 22);
    sw(r, obj(spec, "selector"), "app", "a");
    if (maybe(r))
        s(spec, "loadBalancerIP", "10.0.0.5");
    if (v >= 6 && maybe(r))
        cJSON_AddItemToArray(arr(spec, "ipFamilies"), cJSON_CreateString("IPv4"));
    if (v >= 6 && maybe(r))
        s(spec, "ipFamilyPolicy", "SingleStack");
    if (maybe(r)) {
        cJSON *st = obj(o, "status");
        s(item(arr(obj(st, "loadBalancer"), "ingress")), "ip", "10.0.0.5");
        if (v >= 6 && maybe(r))
            conditions(r, st, -1);
    }
}

static void respolicy_obj(struct conv_rng *r, cJSON *o, int v)
{
    cJSON *spec = obj(o, "spec"), *rp, *st, *m;
    int i;
    rp = obj(spec, v == 1 ? "resourcepool" : "resourcePool");
    sw(r, rp, "name", "rp");
    if (maybe(r))
        s(obj(rp, "reservations"), "cpu", "1000m");
    if (maybe(r))
        s(obj(rp, "limits"), "memory", "4Gi");
    if (maybe(r)) {
        if (v == 1)
            sw(r, obj(spec, "folder"), "name", "f");
        else
            sw(r, spec, "folder", "f");
    }
    if (maybe(r)) {
        cJSON *a = arr(spec, v == 1 ? "clustermodules" : "clusterModuleGroups");
        for (i = 0; i < 1 + pick(r, 2); i++) {
            char g[16];
            snprintf(g, sizeof(g), "g%d", i);
            if (v == 1)
                s(item(a), "groupname", g);
            else
                cJSON_AddItemToArray(a, cJSON_CreateString(g));
        }
    }
    if (!maybe(r))
        return;
    st = obj(o, "status");
    m = item(arr(st, "clustermodules"));
    s(m, v == 1 ? "groupname" : "groupName", "g0");
    s(m, "moduleUUID", "u");
    s(m, "clusterMoID", "domain-c8");
    if (v >= 2 && maybe(r)) {
        cJSON *p = item(arr(st, "resourcePools"));
        s(p, "clusterMoID", "domain-c8");
        s(p, "childResourcePoolMoID", "resgroup-9");
    }
}

cJSON *conv_gen(struct conv_rng *r, const char *kind, int v)
{
    int cluster = strcmp(kind, "ClusterVirtualMachineImage") == 0;
    cJSON *o = root(r, kind, v, cluster);
    const cJSON *g = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "generation");
    int gen = g ? g->valueint : 0;

    if (strcmp(kind, "VirtualMachine") == 0) {
        if (v == 1) {
            vm_a1(r, o);
        } else {
            vm_spec(r, o, v, gen);
            if (maybe(r))
                vm_status(r, o, v, gen);
        }
    } else if (strcmp(kind, "VirtualMachineClass") == 0) {
        class_obj(r, o, v);
    } else if (strncmp(kind, "VirtualMachineImage", 19) == 0 || cluster) {
        image_obj(r, o, v);
    } else if (strcmp(kind, "VirtualMachineService") == 0) {
        service_obj(r, o, v);
    } else {
        respolicy_obj(r, o, v);
    }
    return o;
}
