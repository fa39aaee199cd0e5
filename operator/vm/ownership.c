/* ownership.c: the ownership rule for vCenter VMs (pure; see ownership.h). */
#include "ownership.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *const own_mark_paths[OWN_MARK_PATHS + 1] = {
    "config.instanceUuid",
    "config.extraConfig[\"" OWN_KEY_NAMESPACED "\"]",
    "config.extraConfig[\"" OWN_KEY_UID "\"]",
    "config.managedBy.extensionKey",
    "config.managedBy.type",
    "config.template",
    "parent",
    NULL,
};

void own_mark_values(const struct own_ident *id, const char *folder,
                     const char *ret[OWN_MARK_PATHS])
{
    ret[0] = id->instance_uuid;
    ret[1] = id->namespaced_name;
    ret[2] = id->uid;
    ret[3] = OWN_MANAGED_EXT;
    ret[4] = OWN_MANAGED_TYPE;
    ret[5] = "false";
    ret[6] = folder;
}

const char *own_verdict_str(enum own_verdict v)
{
    switch (v) {
    case OWN_OURS:
        return "ours";
    case OWN_LEGACY:
        return "legacy";
    case OWN_FOREIGN:
        break;
    }
    return "foreign";
}

static int set(const char *s)
{
    return s && *s;
}

static enum own_verdict verdict(enum own_verdict v, char *why, size_t size, const char *text)
{
    if (why && size)
        snprintf(why, size, "%s", text);
    return v;
}

enum own_verdict own_decide(const struct own_marks *m, const struct own_ident *id, char *why,
                            size_t why_size)
{
    int managed_ours, managed_absent;

    if (why && why_size)
        why[0] = '\0';
    if (!m || !id || !set(id->instance_uuid) || !set(id->namespaced_name) || !set(id->uid))
        return verdict(OWN_FOREIGN, why, why_size, "the resource's identity is incomplete");
    if (!set(m->instance_uuid) || strcasecmp(m->instance_uuid, id->instance_uuid) != 0)
        return verdict(OWN_FOREIGN, why, why_size,
                       "its instance UUID is not this resource's spec.instanceUUID");
    if (m->is_template)
        return verdict(OWN_FOREIGN, why, why_size, "it is a template");
    if (!m->in_folder)
        return verdict(OWN_FOREIGN, why, why_size,
                       "it is not in the namespace's VM folder (the binding's vmFolder)");
    managed_absent = !set(m->managed_by_ext) && !set(m->managed_by_type);
    managed_ours = set(m->managed_by_ext) && set(m->managed_by_type) &&
                   !strcmp(m->managed_by_ext, OWN_MANAGED_EXT) &&
                   !strcmp(m->managed_by_type, OWN_MANAGED_TYPE);
    if (!managed_absent && !managed_ours)
        return verdict(OWN_FOREIGN, why, why_size, "its managedBy names another manager");
    if (!set(m->namespaced_name))
        return verdict(OWN_FOREIGN, why, why_size, "it has no " OWN_KEY_NAMESPACED " mark");
    if (strcmp(m->namespaced_name, id->namespaced_name) != 0)
        return verdict(OWN_FOREIGN, why, why_size,
                       "its " OWN_KEY_NAMESPACED " names another resource");
    if (set(m->uid)) {
        if (strcmp(m->uid, id->uid) != 0)
            return verdict(OWN_FOREIGN, why, why_size,
                           "its " OWN_KEY_UID " belongs to another resource (an earlier one of "
                           "the same name)");
        return verdict(OWN_OURS, why, why_size, "");
    }
    /* no vmop.uid: made by a vmop release before the mark, or by someone else */
    if (!managed_ours)
        return verdict(OWN_FOREIGN, why, why_size,
                       "it has neither a " OWN_KEY_UID " mark nor vmop's managedBy");
    if (!set(m->moref) || !set(id->status_unique_id) || strcmp(m->moref, id->status_unique_id))
        return verdict(OWN_FOREIGN, why, why_size,
                       "it has no " OWN_KEY_UID " mark and this resource's status.uniqueID does "
                       "not name it");
    return verdict(OWN_LEGACY, why, why_size, "created before the " OWN_KEY_UID " mark");
}
