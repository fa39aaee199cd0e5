/* vm_step.c: the reconcile steps' names (see vm_step.h). */
#include "vm_step.h"

const char *vm_step_str(enum vm_step s)
{
    static const char *const names[VM_STEP_N] = {
        [VM_STEP_NONE] = "reconcile",
        [VM_STEP_CONNECT] = "connect",
        [VM_STEP_LOOKUP] = "lookup",
        [VM_STEP_OBSERVE] = "observe",
        [VM_STEP_OWNERSHIP] = "ownership",
        [VM_STEP_STORAGE] = "storage",
        [VM_STEP_ADOPT] = "adopt",
        [VM_STEP_PLAN] = "plan",
        [VM_STEP_CREATE] = "create",
        [VM_STEP_REOBSERVE] = "re-observe",
        [VM_STEP_RECONFIGURE] = "reconfigure",
        [VM_STEP_POWER_ON] = "power-on",
        [VM_STEP_POWER_OFF] = "power-off",
        [VM_STEP_SUSPEND] = "suspend",
        [VM_STEP_DESTROY] = "destroy",
        [VM_STEP_UPGRADE] = "upgrade",
        [VM_STEP_RESTART] = "restart",
    };
    return s >= 0 && s < VM_STEP_N && names[s] ? names[s] : "reconcile";
}
