/* vim_vm.c: virtual machine operations.
 *
 * Owns: vim_vm_get (one RetrievePropertiesEx decoded by vim_types.c), CloneVM_Task,
 * ReconfigVM_Task, UpgradeVM_Task, the power operations, Destroy_Task and MarkAsVirtualMachine.
 * Task methods are awaited with vim_task_wait (bounded; a task error is VMOP_E_FAULT with its fault
 * type). Not here: building ConfigSpecs (vim_spec.c), finding VMs (vim_inventory.c).
 *
 * Request bodies that carry a ConfigSpec may hold guestinfo user data: they are zeroed before
 * they are freed. No moref values, names or spec contents go into messages beyond the VM's moref.
 */
#include <stdlib.h>
#include <string.h>

#include "vim_internal.h"

#define VM_MAX_NAME 80 /* vSphere's limit on an entity name */

static const struct {
    const char *method;
    int is_task;
} power_ops[] = {
    [VIM_OP_POWER_ON] = {"PowerOnVM_Task", 1},      [VIM_OP_POWER_OFF] = {"PowerOffVM_Task", 1},
    [VIM_OP_SUSPEND] = {"SuspendVM_Task", 1},       [VIM_OP_RESET] = {"ResetVM_Task", 1},
    [VIM_OP_SHUTDOWN_GUEST] = {"ShutdownGuest", 0}, [VIM_OP_STANDBY_GUEST] = {"StandbyGuest", 0},
    [VIM_OP_REBOOT_GUEST] = {"RebootGuest", 0},
};

const char *vim_power_op_method(enum vim_power_op op)
{
    if ((unsigned)op >= sizeof(power_ops) / sizeof(power_ops[0]))
        return NULL;
    return power_ops[op].method;
}

static int vm_ref_ok(const struct vim_moref *vm)
{
    return vm && vim_moref_is_set(vm) && strcmp(vm->type, "VirtualMachine") == 0;
}

/* Zeroes and frees a request body (it may hold guestinfo values). */
static void vm_free_secret_buf(struct vbuf *b)
{
    vbuf_free_secure(b);
}

/* Calls a method that returns a Task and waits for it. ret_result may be NULL. */
/* Calls a method that returns a Task; *ret_task: that task. */
static vmop_rc vm_start_task(struct vim_client *c, const char *method,
                             const struct vim_moref *this_ref, const char *params,
                             struct vim_moref *ret_task, struct vmop_err *err)
{
    struct vim_resp *resp = NULL;
    vmop_rc rc;

    rc = vim_soap_call(c, method, this_ref, params, VIM_RET_REQUIRED, &resp, err);
    if (rc)
        return rc;
    if (vim_xml_moref(vim_xml_child(resp->response, "returnval"), ret_task) != VMOP_OK ||
        strcmp(ret_task->type, "Task") != 0) {
        vim_resp_free(resp);
        return vmop_fail(err, VMOP_E_PROTO, "%s: returnval is not a Task", method);
    }
    vim_resp_free(resp);
    return VMOP_OK;
}

static vmop_rc vm_call_task(struct vim_client *c, const char *method,
                            const struct vim_moref *this_ref, const char *params,
                            struct vim_moref *ret_result, struct vmop_err *err)
{
    struct vim_moref task;
    vmop_rc rc = vm_start_task(c, method, this_ref, params, &task, err);
    return rc ? rc : vim_task_wait(c, &task, 0, ret_result, err);
}

/* A ManagedObjectNotFound fault becomes VMOP_E_NOT_FOUND (err->fault stays set). */
static vmop_rc vm_not_found(vmop_rc rc, struct vmop_err *err)
{
    if (rc == VMOP_E_FAULT && vmop_err_is_fault(err, "ManagedObjectNotFound")) {
        err->rc = VMOP_E_NOT_FOUND;
        return VMOP_E_NOT_FOUND;
    }
    return rc;
}

/* One RetrievePropertiesEx of paths (vim_vm_props or a subset) decoded into *ret_vm: the fields
 * whose paths were not asked for stay unset. */
static vmop_rc vm_read(struct vim_client *c, const struct vim_moref *vm, const char *const *paths,
                       struct vim_vm **ret_vm, struct vmop_err *err)
{
    struct vim_objects objs = {0};
    vmop_rc rc;

    if (!c || !vm_ref_ok(vm) || !ret_vm)
        return vmop_fail(err, VMOP_E_INVALID, "vim_vm_get: missing argument or not a VM");
    rc = vim_retrieve(c, vm, "VirtualMachine", paths, 0, &objs, err);
    if (rc)
        return vm_not_found(rc, err);
    if (objs.n == 0) {
        /* vcsim with reportMissingObjectsInResults, or a VC that drops a vanished object */
        rc = vmop_fail_fault(err, VMOP_E_NOT_FOUND, "ManagedObjectNotFound", 0, "VM %s not found",
                             vm->value);
        goto out;
    }
    rc = vim_vm_decode(&objs.items[0], ret_vm, err);
out:
    vim_objects_free(&objs);
    return rc;
}

vmop_rc vim_vm_get(struct vim_client *c, const struct vim_moref *vm, struct vim_vm **ret_vm,
                   struct vmop_err *err)
{
    return vm_read(c, vm, vim_vm_props, ret_vm, err);
}

vmop_rc vim_vm_get_power(struct vim_client *c, const struct vim_moref *vm,
                         enum vim_power_state *ret_power, struct vmop_err *err)
{
    static const char *const paths[] = {"runtime.powerState", NULL};
    struct vim_vm *v = NULL;
    vmop_rc rc;

    if (!ret_power)
        return vmop_fail(err, VMOP_E_INVALID, "vim_vm_get_power: missing argument");
    rc = vm_read(c, vm, paths, &v, err);
    if (rc == VMOP_OK)
        *ret_power = v->power_state;
    vim_vm_free(v);
    return rc;
}

vmop_rc vim_clone_params_xml(const struct vim_clone_spec *spec, char **ret_xml,
                             struct vmop_err *err)
{
    struct vbuf p;
    char *config = NULL;
    vmop_rc rc;

    if (!spec || !ret_xml || !vm_ref_ok(spec->source) || !spec->folder ||
        !vim_moref_is_set(spec->folder) || !spec->name || !*spec->name)
        return vmop_fail(err, VMOP_E_INVALID, "vim_vm_clone: source VM, folder and name needed");
    if (strlen(spec->name) > VM_MAX_NAME)
        return vmop_fail(err, VMOP_E_INVALID, "VM name longer than %d bytes", VM_MAX_NAME);
    if (spec->profile_id && !vim_pbm_id_valid(spec->profile_id))
        return vmop_fail(err, VMOP_E_INVALID,
                         "storage policy ID is empty, longer than %d bytes or not printable",
                         VIM_PBM_ID_MAX);
    if (spec->n_disk_keys > VIM_MAX_CLONE_DISKS || (spec->n_disk_keys && !spec->disk_keys))
        return vmop_fail(err, VMOP_E_INVALID, "vim_vm_clone: at most %d disk locators",
                         VIM_MAX_CLONE_DISKS);
    if (spec->config) {
        rc = vim_config_spec_xml(spec->config, &config, err);
        if (rc)
            return rc;
    }
    vbuf_init(&p, VIM_MAX_REQUEST);
    /* CloneVM_Task(folder, name, spec); VirtualMachineCloneSpec(location, template, config,
     * customization, powerOn); VirtualMachineRelocateSpec(service, folder, datastore,
     * diskMoveType, pool, host, disk, transform, deviceChange, profile, ...): WSDL order. */
    vim_xml_add_moref(&p, "folder", spec->folder);
    vbuf_add_xml_elem(&p, "name", spec->name);
    vbuf_adds(&p, "<spec><location>");
    if (spec->datastore && vim_moref_is_set(spec->datastore))
        vim_xml_add_moref(&p, "datastore", spec->datastore);
    if (spec->pool && vim_moref_is_set(spec->pool))
        vim_xml_add_moref(&p, "pool", spec->pool);
    if (spec->host && vim_moref_is_set(spec->host))
        vim_xml_add_moref(&p, "host", spec->host);
    /* VirtualMachineRelocateSpecDiskLocator(diskId, datastore, diskMoveType, diskBackingInfo,
     * profile, ...): each disk goes where the VM home goes, under the same policy; datastore is
     * required in a locator, so there are none without it */
    for (size_t i = 0;
         spec->datastore && vim_moref_is_set(spec->datastore) && i < spec->n_disk_keys; i++) {
        vbuf_addf(&p, "<disk><diskId>%d</diskId>", spec->disk_keys[i]);
        vim_xml_add_moref(&p, "datastore", spec->datastore);
        if (spec->profile_id) {
            vbuf_adds(&p, "<profile xsi:type=\"VirtualMachineDefinedProfileSpec\">");
            vbuf_add_xml_elem(&p, "profileId", spec->profile_id);
            vbuf_adds(&p, "</profile>");
        }
        vbuf_adds(&p, "</disk>");
    }
    if (spec->profile_id) {
        vbuf_adds(&p, "<profile xsi:type=\"VirtualMachineDefinedProfileSpec\">");
        vbuf_add_xml_elem(&p, "profileId", spec->profile_id);
        vbuf_adds(&p, "</profile>");
    }
    vbuf_addf(&p, "</location><template>%s</template>", spec->template ? "true" : "false");
    if (config && *config)
        vbuf_addf(&p, "<config>%s</config>", config);
    vbuf_addf(&p, "<powerOn>%s</powerOn></spec>", spec->power_on ? "true" : "false");
    if (config) {
        explicit_bzero(config, strlen(config));
        free(config);
    }
    rc = vbuf_error(&p);
    if (rc) {
        rc = vmop_fail(err, rc, "CloneVM_Task: request: %s", vmop_rc_str(rc));
        vm_free_secret_buf(&p);
        return rc;
    }
    *ret_xml = vbuf_take(&p);
    return VMOP_OK;
}

vmop_rc vim_vm_clone(struct vim_client *c, const struct vim_clone_spec *spec,
                     struct vim_moref *ret_vm, struct vmop_err *err)
{
    char *params = NULL;
    struct vim_moref result;
    vmop_rc rc;

    if (!c || !ret_vm)
        return vmop_fail(err, VMOP_E_INVALID, "vim_vm_clone: source VM, folder and name needed");
    rc = vim_clone_params_xml(spec, &params, err);
    if (rc)
        return rc;
    rc = vm_call_task(c, "CloneVM_Task", spec->source, params, &result, err);
    if (rc)
        goto out;
    if (strcmp(result.type, "VirtualMachine") != 0) {
        rc = vmop_fail(err, VMOP_E_PROTO, "CloneVM_Task: result is a %s, not a VM", result.type);
        goto out;
    }
    *ret_vm = result;
out:
    explicit_bzero(params, strlen(params));
    free(params);
    return rc;
}

vmop_rc vim_vm_reconfigure(struct vim_client *c, const struct vim_moref *vm,
                           const struct vim_config_spec *spec, struct vmop_err *err)
{
    struct vbuf p;
    char *config = NULL;
    vmop_rc rc;

    if (!c || !vm_ref_ok(vm) || !spec)
        return vmop_fail(err, VMOP_E_INVALID, "vim_vm_reconfigure: missing argument");
    rc = vim_config_spec_xml(spec, &config, err);
    if (rc)
        return rc;
    vbuf_init(&p, VIM_MAX_REQUEST);
    vbuf_addf(&p, "<spec>%s</spec>", config);
    explicit_bzero(config, strlen(config));
    free(config);
    rc = vbuf_error(&p);
    if (rc)
        rc = vmop_fail(err, rc, "ReconfigVM_Task: request: %s", vmop_rc_str(rc));
    else
        rc = vm_not_found(vm_call_task(c, "ReconfigVM_Task", vm, vbuf_str(&p), NULL, err), err);
    vm_free_secret_buf(&p);
    return rc;
}

vmop_rc vim_vm_power(struct vim_client *c, const struct vim_moref *vm, enum vim_power_op op,
                     struct vmop_err *err)
{
    const char *method = vim_power_op_method(op);
    struct vim_resp *resp = NULL;
    vmop_rc rc;

    if (!c || !vm_ref_ok(vm) || !method)
        return vmop_fail(err, VMOP_E_INVALID, "vim_vm_power: missing argument or bad operation");
    if (power_ops[op].is_task)
        return vm_not_found(vm_call_task(c, method, vm, NULL, NULL, err), err);
    /* Guest operations are requests to VMware Tools, not tasks: they return once accepted. */
    rc = vim_soap_call(c, method, vm, NULL, VIM_RET_NONE, &resp, err);
    vim_resp_free(resp);
    return vm_not_found(rc, err);
}

vmop_rc vim_vm_power_start(struct vim_client *c, const struct vim_moref *vm, enum vim_power_op op,
                           struct vim_moref *ret_task, struct vmop_err *err)
{
    const char *method = vim_power_op_method(op);

    if (!c || !vm_ref_ok(vm) || !method || !power_ops[op].is_task || !ret_task)
        return vmop_fail(err, VMOP_E_INVALID,
                         "vim_vm_power_start: missing argument or not a task operation");
    return vm_not_found(vm_start_task(c, method, vm, NULL, ret_task, err), err);
}

vmop_rc vim_vm_upgrade(struct vim_client *c, const struct vim_moref *vm, const char *version,
                       struct vmop_err *err)
{
    struct vbuf p;
    vmop_rc rc;

    if (!c || !vm_ref_ok(vm))
        return vmop_fail(err, VMOP_E_INVALID, "vim_vm_upgrade: missing argument or not a VM");
    if (version && (strncmp(version, "vmx-", 4) != 0 || strlen(version) > 16 || !version[4]))
        return vmop_fail(err, VMOP_E_INVALID, "hardware version \"%.16s\" is not vmx-<n>", version);
    vbuf_init(&p, VIM_MAX_REQUEST);
    if (version)
        vbuf_add_xml_elem(&p, "version", version);
    rc = vbuf_error(&p);
    if (rc)
        rc = vmop_fail(err, rc, "UpgradeVM_Task: request: %s", vmop_rc_str(rc));
    else
        rc = vm_not_found(
            vm_call_task(c, "UpgradeVM_Task", vm, version ? vbuf_str(&p) : NULL, NULL, err), err);
    vbuf_free(&p);
    return rc;
}

vmop_rc vim_vm_destroy(struct vim_client *c, const struct vim_moref *vm, struct vmop_err *err)
{
    if (!c || !vm_ref_ok(vm))
        return vmop_fail(err, VMOP_E_INVALID, "vim_vm_destroy: missing argument or not a VM");
    return vm_not_found(vm_call_task(c, "Destroy_Task", vm, NULL, NULL, err), err);
}

vmop_rc vim_vm_destroy_start(struct vim_client *c, const struct vim_moref *vm,
                             struct vim_moref *ret_task, struct vmop_err *err)
{
    if (!c || !vm_ref_ok(vm) || !ret_task)
        return vmop_fail(err, VMOP_E_INVALID, "vim_vm_destroy_start: missing argument");
    return vm_not_found(vm_start_task(c, "Destroy_Task", vm, NULL, ret_task, err), err);
}

vmop_rc vim_vm_mark_as_vm(struct vim_client *c, const struct vim_moref *vm,
                          const struct vim_moref *pool, struct vmop_err *err)
{
    struct vim_resp *resp = NULL;
    struct vbuf p;
    vmop_rc rc;

    if (!c || !vm_ref_ok(vm) || !pool || !vim_moref_is_set(pool))
        return vmop_fail(err, VMOP_E_INVALID, "vim_vm_mark_as_vm: VM and pool needed");
    vbuf_init(&p, VIM_MAX_REQUEST);
    vim_xml_add_moref(&p, "pool", pool);
    rc = vbuf_error(&p);
    if (rc) {
        vbuf_free(&p);
        return vmop_fail(err, rc, "MarkAsVirtualMachine: request: %s", vmop_rc_str(rc));
    }
    rc = vim_soap_call(c, "MarkAsVirtualMachine", vm, vbuf_str(&p), VIM_RET_NONE, &resp, err);
    vim_resp_free(resp);
    vbuf_free(&p);
    return vm_not_found(rc, err);
}

vmop_rc vim_vm_mark_as_template(struct vim_client *c, const struct vim_moref *vm,
                                struct vmop_err *err)
{
    struct vim_resp *resp = NULL;
    vmop_rc rc;

    if (!c || !vm_ref_ok(vm))
        return vmop_fail(err, VMOP_E_INVALID, "vim_vm_mark_as_template: VM needed");
    rc = vim_soap_call(c, "MarkAsTemplate", vm, NULL, VIM_RET_NONE, &resp, err);
    vim_resp_free(resp);
    return vm_not_found(rc, err);
}
