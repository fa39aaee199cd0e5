/* api_convert_misc.c: the conversion chains of VirtualMachineClass, VirtualMachineImage,
 * ClusterVirtualMachineImage, VirtualMachineService and VirtualMachineSetResourcePolicy, after
 * VM Operator's per-kind conversions. Most steps only drop the fields an older version lacks; the
 * v1alpha1 images (spec-held OS and product info) and resource policies (lower-case resourcepool /
 * clustermodules, folder as an object) are reshaped. */
#include <string.h>

#include "api_convert_int.h"

/* ---- VirtualMachineClass: controllerName is v1alpha2's, the reserved profile v1alpha5's ---- */
static const char *const class_drop_a1[] = {"spec.controllerName", NULL};
static const char *const class_drop_a4[] = {"spec.reservedProfileID", "spec.reservedSlots", NULL};

const struct cv_kind cv_kind_class = {
    .kind = "VirtualMachineClass",
    .steps = {[1] = {.drop = class_drop_a1}, [4] = {.drop = class_drop_a4}},
};

/* ---- images: v1alpha1 keeps type, OS, product and hardware version in spec, the display name
 * as status.imageName and the content version as status.contentVersion ---- */
static void copy_key(struct cv *cv, cJSON *to, const cJSON *from, const char *k, const char *as)
{
    cv_put(cv, to, as ? as : k, cv_dup(cv, cv_get(from, k)));
}

static void image_down(struct cv *cv, cJSON *obj)
{
    cJSON *spec = cv_take(obj, "spec"), *st = cv_take(obj, "status");
    cJSON *ns = cJSON_CreateObject(), *nst = st ? cJSON_CreateObject() : NULL;

    if (!ns || (st && !nst)) {
        cv->rc = VMOP_E_NOMEM;
        cJSON_Delete(ns);
        cJSON_Delete(nst);
        cJSON_Delete(spec);
        cJSON_Delete(st);
        return;
    }
    copy_key(cv, ns, spec, "providerRef", NULL);
    copy_key(cv, ns, st, "type", NULL);
    copy_key(cv, ns, st, "productInfo", NULL);
    copy_key(cv, ns, st, "osInfo", NULL);
    cv_drop(ns, "osInfo.id");
    copy_key(cv, ns, st, "hardwareVersion", "hwVersion");
    copy_key(cv, nst, st, "name", "imageName");
    copy_key(cv, nst, st, "providerContentVersion", "contentVersion");
    copy_key(cv, nst, st, "conditions", NULL);
    if (spec || ns->child)
        cv_put(cv, obj, "spec", ns);
    else
        cJSON_Delete(ns);
    if (nst && nst->child)
        cv_put(cv, obj, "status", nst);
    else
        cJSON_Delete(nst);
    cJSON_Delete(spec);
    cJSON_Delete(st);
}

static void image_up(struct cv *cv, cJSON *obj)
{
    cJSON *spec = cv_take(obj, "spec"), *st = cv_take(obj, "status");
    cJSON *ns = cJSON_CreateObject(), *nst = cJSON_CreateObject();

    if (!ns || !nst) {
        cv->rc = VMOP_E_NOMEM;
        cJSON_Delete(ns);
        cJSON_Delete(nst);
        cJSON_Delete(spec);
        cJSON_Delete(st);
        return;
    }
    copy_key(cv, ns, spec, "providerRef", NULL);
    copy_key(cv, nst, spec, "type", NULL);
    copy_key(cv, nst, spec, "productInfo", NULL);
    copy_key(cv, nst, spec, "osInfo", NULL);
    copy_key(cv, nst, spec, "hwVersion", "hardwareVersion");
    copy_key(cv, nst, st, "imageName", "name");
    copy_key(cv, nst, st, "contentVersion", "providerContentVersion");
    copy_key(cv, nst, st, "conditions", NULL);
    if (spec)
        cv_put(cv, obj, "spec", ns);
    else
        cJSON_Delete(ns);
    if (st || nst->child)
        cv_put(cv, obj, "status", nst);
    else
        cJSON_Delete(nst);
    cJSON_Delete(spec);
    cJSON_Delete(st);
}

const struct cv_kind cv_kind_image = {
    .kind = "VirtualMachineImage",
    .steps = {[1] = {.down = image_down, .up = image_up}},
};

const struct cv_kind cv_kind_cimage = {
    .kind = "ClusterVirtualMachineImage",
    .steps = {[1] = {.down = image_down, .up = image_up}},
};

/* ---- VirtualMachineService: IP families and conditions are v1alpha6's ---- */
static const char *const svc_drop_a5[] = {"spec.ipFamilies", "spec.ipFamilyPolicy",
                                          "status.conditions", NULL};

const struct cv_kind cv_kind_service = {
    .kind = "VirtualMachineService",
    .steps = {[5] = {.drop = svc_drop_a5}},
};

/* ---- VirtualMachineSetResourcePolicy: v1alpha1 spells resourcepool, folder{name},
 * clustermodules[{groupname}] and status clustermodules[].groupname ---- */
static const char *const rp_drop_a1[] = {"status.resourcePools", NULL};

static void rename_each(struct cv *cv, cJSON *arr, const char *from, const char *to)
{
    cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        cv_move(cv, it, from, to);
    }
}

static void rp_down(struct cv *cv, cJSON *obj)
{
    cJSON *spec = cv_get(obj, "spec"), *f, *groups, *it, *mods;

    cv_move(cv, obj, "spec.resourcePool", "spec.resourcepool");
    f = cv_take(spec, "folder");
    if (cJSON_IsString(f) && *f->valuestring) {
        cJSON *o = cv_ensure(cv, spec, "folder");
        cv_put_str(cv, o, "name", f->valuestring);
    }
    cJSON_Delete(f);
    groups = cv_take(spec, "clusterModuleGroups");
    if (cJSON_IsArray(groups)) {
        mods = cJSON_CreateArray();
        if (!mods)
            cv->rc = VMOP_E_NOMEM;
        cJSON_ArrayForEach(it, groups)
        {
            cJSON *o = cJSON_CreateObject();
            if (!o || !mods || !cJSON_AddItemToArray(mods, o)) {
                cJSON_Delete(o);
                cv->rc = VMOP_E_NOMEM;
                break;
            }
            cv_put(cv, o, "groupname", cv_dup(cv, it));
        }
        cv_put(cv, spec, "clustermodules", mods);
    }
    cJSON_Delete(groups);
    rename_each(cv, cv_at(obj, "status.clustermodules"), "groupName", "groupname");
}

static void rp_up(struct cv *cv, cJSON *obj)
{
    cJSON *spec = cv_get(obj, "spec"), *f, *mods, *it, *groups;
    const char *fn;

    cv_move(cv, obj, "spec.resourcepool", "spec.resourcePool");
    f = cv_take(spec, "folder");
    fn = cv_str(f, "name");
    if (fn && *fn)
        cv_put_str(cv, spec, "folder", fn);
    cJSON_Delete(f);
    mods = cv_take(spec, "clustermodules");
    if (cJSON_IsArray(mods)) {
        groups = cJSON_CreateArray();
        if (!groups)
            cv->rc = VMOP_E_NOMEM;
        cJSON_ArrayForEach(it, mods)
        {
            cJSON *g = cv_dup(cv, cv_get(it, "groupname"));
            if (g && (!groups || !cJSON_AddItemToArray(groups, g))) {
                cJSON_Delete(g);
                cv->rc = VMOP_E_NOMEM;
            }
        }
        cv_put(cv, spec, "clusterModuleGroups", groups);
    }
    cJSON_Delete(mods);
    rename_each(cv, cv_at(obj, "status.clustermodules"), "groupname", "groupName");
}

const struct cv_kind cv_kind_respolicy = {
    .kind = "VirtualMachineSetResourcePolicy",
    .steps = {[1] = {.down = rp_down, .up = rp_up, .drop = rp_drop_a1}},
};
