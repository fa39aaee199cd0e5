/* fuzz_vim_vm.c: libFuzzer target for the VM decode path of a RetrievePropertiesEx reply:
 * vim_soap_parse_response, the ObjectContent walk and vim_vm_decode (vim_internal.h).
 *
 * vim_retrieve's page walk (collect_page in vim_pc.c) is static and does I/O around it, so the
 * walk is repeated here the same way: every returnval/objects with a valid obj becomes a
 * vim_object whose props point at the single-text-node <name>s and their <val>s. Each object is
 * decoded; a decoded VM's strings and arrays are read back (ASan checks them) and freed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "vim_internal.h"

#define MAX_FUZZ_OBJECTS 64
#define MAX_FUZZ_PROPS   512

static void check_vm(const struct vim_vm *vm)
{
    size_t n = 0;
    FUZZ_REQUIRE_CSTR(vm->ref.type);
    FUZZ_REQUIRE_CSTR(vm->ref.value);
    FUZZ_REQUIRE_CSTR(vm->host.value);
    FUZZ_REQUIRE_CSTR(vm->resource_pool.value);
    FUZZ_REQUIRE_CSTR(vm->parent.value);
    FUZZ_REQUIRE_CSTR(vm->datastore.value);
    n += fuzz_touch(vm->name) + fuzz_touch(vm->bios_uuid) + fuzz_touch(vm->instance_uuid);
    n += fuzz_touch(vm->guest_id) + fuzz_touch(vm->hw_version) + fuzz_touch(vm->annotation);
    n += fuzz_touch(vm->managed_by_ext) + fuzz_touch(vm->managed_by_type);
    n += fuzz_touch(vm->boot_time) + fuzz_touch(vm->guest_ip) + fuzz_touch(vm->guest_hostname);
    n += fuzz_touch(vm->tools_running) + fuzz_touch(vm->guest_heartbeat);
    FUZZ_REQUIRE(vm->n_nics == 0 || vm->nics);
    for (size_t i = 0; i < vm->n_nics; i++) {
        const struct vim_nic *c = &vm->nics[i];
        n += fuzz_touch(c->device_type) + fuzz_touch(c->label) + fuzz_touch(c->mac);
        n += fuzz_touch(c->portgroup_key) + fuzz_touch(c->switch_uuid);
        n += fuzz_touch(c->network_name);
    }
    FUZZ_REQUIRE(vm->n_guest_nics == 0 || vm->guest_nics);
    for (size_t i = 0; i < vm->n_guest_nics; i++) {
        const struct vim_guest_nic *g = &vm->guest_nics[i];
        n += fuzz_touch(g->mac) + fuzz_touch(g->network);
        FUZZ_REQUIRE(g->n_ips == 0 || g->ips);
        for (size_t j = 0; j < g->n_ips; j++)
            n += fuzz_touch(g->ips[j]);
    }
    FUZZ_REQUIRE(vm->n_extra_config == 0 || vm->extra_config);
    for (size_t i = 0; i < vm->n_extra_config; i++) {
        const struct vim_option *o = &vm->extra_config[i];
        FUZZ_REQUIRE(o->key != NULL);
        n += fuzz_touch(o->value);
        /* one entry per key, and the lookup finds it */
        FUZZ_REQUIRE(vim_vm_extra_config(vm, o->key) == o->value);
    }
    (void)vim_vm_extra_config(vm, "guestinfo.userdata");
    (void)n;
}

static void decode_object(struct vim_object *obj)
{
    struct vim_vm *vm = (struct vim_vm *)(uintptr_t)1;
    struct vmop_err err = {0};
    vmop_rc rc = vim_vm_decode(obj, &vm, &err);
    fuzz_check_err(rc, &err);
    if (rc != VMOP_OK) {
        FUZZ_REQUIRE(vm == (struct vim_vm *)(uintptr_t)1);
        return;
    }
    FUZZ_REQUIRE(vm != NULL);
    check_vm(vm);
    vim_vm_free(vm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct vim_prop props[MAX_FUZZ_PROPS];
    struct vim_resp *r = NULL;
    struct vmop_err err = {0};
    xmlNodePtr result;
    size_t n_objects = 0;
    vmop_rc rc;

    rc = vim_soap_parse_response((const char *)data, size, "RetrievePropertiesEx", VIM_RET_OPTIONAL,
                                 &r, &err);
    fuzz_check_err(rc, &err);
    if (rc != VMOP_OK)
        return 0;
    result = vim_xml_child(r->response, "returnval");
    for (xmlNodePtr oc = vim_xml_child(result, "objects"); oc && n_objects < MAX_FUZZ_OBJECTS;
         oc = vim_xml_next(oc, "objects"), n_objects++) {
        struct vim_object obj = {.props = props};
        if (vim_xml_moref(vim_xml_child(oc, "obj"), &obj.ref) != VMOP_OK)
            continue;
        for (xmlNodePtr ps = vim_xml_child(oc, "propSet"); ps && obj.n_props < MAX_FUZZ_PROPS;
             ps = vim_xml_next(ps, "propSet")) {
            xmlNodePtr name = vim_xml_child(ps, "name");
            xmlNodePtr text = name ? name->children : NULL;
            if (!text || text->type != XML_TEXT_NODE || text->next)
                continue;
            props[obj.n_props].path = (const char *)text->content;
            props[obj.n_props].val = vim_xml_child(ps, "val");
            obj.n_props++;
        }
        decode_object(&obj);
    }
    vim_resp_free(r);
    return 0;
}
