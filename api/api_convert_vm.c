/* api_convert_vm.c: the VirtualMachine conversion chain v1alpha6 (hub) .. v1alpha2, one step per
 * version pair, after VM Operator's api/v1alpha2..v1alpha5 conversions: the fields each older
 * version lacks (dropped; the dispatcher keeps them in the conversion-data annotation), CD-ROMs
 * under spec.hardware (v1alpha5+) or spec.cdrom (v1alpha3/4), and v1alpha2's status.host,
 * status.image and sysprep joinDomain. The v1alpha1 step is in api_convert_vm_a1.c. */
#include <string.h>

#include "api_convert.h"
#include "api_convert_int.h"

/* ---- v1alpha6 <-> v1alpha5: v1alpha6 only adds fields ---- */
static const char *const drop_a5[] = {
    "spec.volumeAttributesClassName",
    "spec.bootstrap.disabled",
    "spec.network.vlans",
    "spec.network.interfaces[].type",
    "spec.network.interfaces[].vnumaNodeID",
    "spec.network.interfaces[].vmxnet3",
    "spec.network.interfaces[].advancedProperties",
    "spec.network.interfaces[].ipamModes",
    "spec.advanced.preferHtEnabled",
    "spec.advanced.hugePages1GEnabled",
    "spec.advanced.timeTrackerLowLatencyEnabled",
    "spec.advanced.cpuAffinityExclusiveNoStatsEnabled",
    "spec.advanced.vmxSwapEnabled",
    "spec.advanced.pnumaNodeAffinity",
    "spec.advanced.extraConfig",
    "spec.resources",
    "spec.cpuAdvanced",
    "spec.memoryAdvanced",
    "status.extraConfig",
    "status.disks",
    NULL,
};

/* v1alpha5's dhcp4/dhcp6 are plain bools (omitted when false); v1alpha6's are *bool. */
static void a5_down(struct cv *cv, cJSON *obj)
{
    cJSON *it;
    (void)cv;
    cJSON_ArrayForEach(it, cv_at(obj, "spec.network.interfaces"))
    {
        if (cJSON_IsFalse(cv_get(it, "dhcp4")))
            cJSON_DeleteItemFromObjectCaseSensitive(it, "dhcp4");
        if (cJSON_IsFalse(cv_get(it, "dhcp6")))
            cJSON_DeleteItemFromObjectCaseSensitive(it, "dhcp6");
    }
}

/* ---- v1alpha5 <-> v1alpha4: affinity, policies, snapshots, groups, class instances, volume
 * placement and spec.hardware are v1alpha5's; v1alpha4 has spec.cdrom instead ---- */
static const char *const drop_a4[] = {
    "spec.affinity",
    "spec.policies",
    "spec.currentSnapshotName",
    "spec.groupName",
    "spec.class",
    "spec.volumes[].persistentVolumeClaim.applicationType",
    "spec.volumes[].persistentVolumeClaim.controllerBusNumber",
    "spec.volumes[].persistentVolumeClaim.controllerType",
    "spec.volumes[].persistentVolumeClaim.diskMode",
    "spec.volumes[].persistentVolumeClaim.sharingMode",
    "spec.volumes[].persistentVolumeClaim.unitNumber",
    "status.hardware",
    "status.currentSnapshot",
    "status.rootSnapshots",
    "status.policies",
    "status.class",
    NULL,
};

static void a4_down(struct cv *cv, cJSON *obj)
{
    cJSON *spec = cv_get(obj, "spec"), *it;

    if (cv_move(cv, obj, "spec.hardware.cdrom", "spec.cdrom")) {
        cJSON_ArrayForEach(it, cv_get(spec, "cdrom"))
        {
            cv_drop(it, "controllerBusNumber");
            cv_drop(it, "controllerType");
            cv_drop(it, "unitNumber");
        }
    }
    cv_drop(obj, "spec.hardware");
}

static void a4_up(struct cv *cv, cJSON *obj)
{
    cv_move(cv, obj, "spec.cdrom", "spec.hardware.cdrom");
}

/* ---- v1alpha4 <-> v1alpha3 ---- */
static const char *const drop_a3[] = {
    "spec.promoteDisksMode",
    "spec.bootOptions",
    "spec.bootstrap.cloudInit.waitOnNetwork4",
    "spec.bootstrap.cloudInit.waitOnNetwork6",
    "status.storage",
    NULL,
};

/* ---- v1alpha3 <-> v1alpha2: image refs, UUIDs, crypto, guest ID and CD-ROMs are v1alpha3's;
 * v1alpha2 reports the host as status.host and the image as status.image, and keeps a Windows
 * domain in sysprep's identification.joinDomain rather than spec.network.domainName ---- */
static const char *const drop_a2[] = {
    "spec.crypto",   "spec.guestID",
    "spec.cdrom",    "spec.instanceUUID",
    "spec.biosUUID", "spec.bootstrap.cloudInit.instanceID",
    "status.crypto", NULL,
};

static void a2_down(struct cv *cv, cJSON *obj)
{
    cJSON *spec = cv_get(obj, "spec"), *img = cv_take(spec, "image");
    cJSON *net = cv_get(spec, "network"), *dn, *ident;
    const char *kind = cv_str(img, "kind"), *name = cv_str(img, "name");

    if (kind && *kind && name && *name) {
        cJSON *st = cv_ensure(cv, obj, "status"), *ref = cv_ensure(cv, st, "image");
        cv_put_str(cv, ref, "apiVersion", API_CONVERT_HUB_GV);
        cv_put_str(cv, ref, "kind", kind);
        cv_put_str(cv, ref, "name", name);
    }
    if (name && *name && !(cv_str(spec, "imageName") && *cv_str(spec, "imageName")))
        cv_put_str(cv, spec, "imageName", name);
    cJSON_Delete(img);

    dn = cv_take(net, "domainName");
    ident = cv_at(spec, "bootstrap.sysprep.sysprep.identification");
    if (cJSON_IsString(dn) && *dn->valuestring && cJSON_IsObject(ident)) {
        cv_put(cv, ident, "joinDomain", dn);
        dn = NULL;
        cv_prune_empty(spec, "network");
    }
    cJSON_Delete(dn);
    cv_move(cv, obj, "status.nodeName", "status.host");
}

static void a2_up(struct cv *cv, cJSON *obj)
{
    cJSON *spec = cv_get(obj, "spec"), *st = cv_get(obj, "status");
    cJSON *simg = cv_take(st, "image"), *ident, *jd;
    const cJSON *gen = cv_at(obj, "metadata.generation");
    const char *kind = cv_str(simg, "kind"), *name = cv_str(simg, "name");
    const char *in = cv_str(spec, "imageName");

    /* as VM Operator: only for a VM already written (generation > 0). With conversion data,
     * spec.image comes from it: status.image does not survive a create (the API server drops
     * status), and a reference rebuilt from a display-name imageName would replace the image the
     * mutating webhook resolved (the merge takes this side's changes). */
    if (spec && !cv->has_data && cJSON_IsNumber(gen) && gen->valuedouble > 0) {
        cJSON *ref = NULL;
        if (kind && *kind && name && *name) {
            ref = cv_ensure(cv, spec, "image");
            cv_put_str(cv, ref, "kind", kind);
            cv_put_str(cv, ref, "name", name);
        } else if (in && *in) {
            ref = cv_ensure(cv, spec, "image");
            cv_put_str(cv, ref, "name", in);
        }
    }
    cJSON_Delete(simg);
    if (simg)
        cv_prune_empty(obj, "status");

    ident = cv_at(spec, "bootstrap.sysprep.sysprep.identification");
    jd = cv_take(ident, "joinDomain");
    if (cJSON_IsString(jd) && *jd->valuestring) {
        cv_put(cv, cv_ensure(cv, spec, "network"), "domainName", jd);
        jd = NULL;
    }
    cJSON_Delete(jd);
    cv_move(cv, obj, "status.host", "status.nodeName");
}

const struct cv_kind cv_kind_vm = {
    .kind = "VirtualMachine",
    .steps =
        {
            [1] = {.down = cv_vm_a1_down, .up = cv_vm_a1_up, .drop = NULL},
            [2] = {.down = a2_down, .up = a2_up, .drop = drop_a2},
            [3] = {.down = NULL, .up = NULL, .drop = drop_a3},
            [4] = {.down = a4_down, .up = a4_up, .drop = drop_a4},
            [5] = {.down = a5_down, .up = NULL, .drop = drop_a5},
        },
};
