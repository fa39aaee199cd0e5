/* ownership.h: is this vCenter VM the one vmop created for this VirtualMachine resource? (pure)
 *
 * Owns: the ownership rule and the names of vmop's marks. vmsync.c reads the VM and calls
 * own_decide() for every VM an identity lookup finds (status.uniqueID, the instance UUID); only a
 * VM decided OWN_OURS or OWN_LEGACY is ever observed into status, reconfigured, powered or
 * destroyed. Everything else is foreign: left untouched, reported as a conflict.
 *
 * The marks, all set in the clone spec (atomic with the create):
 *   config.instanceUuid               = spec.instanceUUID
 *   extraConfig vmservice.namespacedName = "<namespace>/<name>"   (as VM Operator writes it)
 *   extraConfig vmop.uid              = the resource's metadata.uid   (vmop's own key; VM
 *                                       Operator has none, so its VMs never carry it)
 *   config.managedBy                  = {com.vmware.vcenter.wcp, VirtualMachine}
 * and the VM's parent must be the binding's VM folder (the namespace folder vmop clones into).
 *
 * The rule (docs/design.md, "Identity and crash safety"):
 *   OURS     instance UUID equal (case-insensitive), not a template, parent = the folder,
 *            namespacedName = ns/name, vmop.uid = metadata.uid, and managedBy either vmop's or
 *            absent (the simulator drops managedBy from a clone spec; the reconfigure after the
 *            clone sets it. A managedBy naming anyone else is refused).
 *   LEGACY   as OURS but vmop.uid absent (a VM made by a vmop release before the mark), managedBy
 *            present and vmop's, and the VM's moref is the resource's own status.uniqueID: the
 *            resource's status proves vmop created it. vmsync adds vmop.uid, then acts.
 *   FOREIGN  anything else, in particular a vmop.uid of another resource (the name was deleted and
 *            created again: the new resource does not inherit the old VM).
 */
#ifndef VMOP_OWNERSHIP_H
#define VMOP_OWNERSHIP_H

#include <stddef.h>

#define OWN_KEY_NAMESPACED "vmservice.namespacedName"
#define OWN_KEY_UID        "vmop.uid"
#define OWN_MANAGED_EXT    "com.vmware.vcenter.wcp"
#define OWN_MANAGED_TYPE   "VirtualMachine"

/* The condition reason and event reason of a conflict (vmop's: VM Operator has none). */
#define OWN_REASON_CONFLICT "OwnershipConflict"

#define OWN_WHY_MAX 160

enum own_verdict { OWN_FOREIGN = 0, OWN_OURS, OWN_LEGACY };
const char *own_verdict_str(enum own_verdict v); /* "foreign", "ours", "legacy" */

/* What the VM in vCenter carries (all borrowed; NULL = absent). */
struct own_marks {
    const char *moref; /* its moref value ("vm-63") */
    const char *instance_uuid;
    const char *managed_by_ext, *managed_by_type;
    const char *namespaced_name; /* extraConfig vmservice.namespacedName */
    const char *uid;             /* extraConfig vmop.uid */
    int is_template;
    int in_folder; /* 1: its parent is the binding's VM folder */
};

/* The resource the VM would belong to (all borrowed). */
struct own_ident {
    const char *instance_uuid;    /* spec.instanceUUID */
    const char *namespaced_name;  /* "ns/name" */
    const char *uid;              /* metadata.uid */
    const char *status_unique_id; /* the resource's status.uniqueID, NULL/"" when none */
};

/* Decides. why (may be NULL) gets, for OWN_FOREIGN, one line saying which mark fails ("its
 * vmop.uid belongs to another resource (an earlier one of the same name)"); for OWN_LEGACY
 * "created before the vmop.uid mark"; "" for OWN_OURS. It never quotes the VM's values, only
 * names the marks. A missing identity (no instance UUID, name or uid) is OWN_FOREIGN. */
enum own_verdict own_decide(const struct own_marks *m, const struct own_ident *id, char *why,
                            size_t why_size);

/* The marks as vCenter property paths, for a watcher that can vouch for them without a read
 * (change_feed.h vcfeed_vm_matches): OWN_MARK_PATHS paths, NULL-terminated, in the order
 * own_mark_values() gives the values. */
#define OWN_MARK_PATHS 7
extern const char *const own_mark_paths[OWN_MARK_PATHS + 1];
/* The values (as vCenter gives them as text) of a VM own_decide() judges OWN_OURS with vmop's
 * managedBy set, the state of every VM vmop has set up, whose parent is the folder with moref
 * value folder. A VM whose values are these is the resource's; one that differs in anything
 * (managedBy absent, a legacy VM, an instance UUID in other letter case) is not vouched for and
 * is read and judged by own_decide(). ret[i] borrow id's strings and folder. */
void own_mark_values(const struct own_ident *id, const char *folder,
                     const char *ret[OWN_MARK_PATHS]);

#endif
