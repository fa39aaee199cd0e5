/* vim_inventory.c: finding things in the vCenter inventory.
 *
 * Owns: SearchIndex lookups (FindByInventoryPath, FindByUuid), network / DV port group resolution
 * (with the switch UUID a NIC backing needs), the lowest host CPU MHz of a cluster, and listing
 * objects of a type under a container. Not here: the PropertyCollector and views (vim_pc.c).
 *
 * "Not there" is VMOP_E_NOT_FOUND everywhere (SearchIndex answers with no returnval); an object of
 * the wrong type is VMOP_E_INVALID. Inventory paths and names are not secrets and appear in
 * messages.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vim_internal.h"

#define INV_MAX_PATH 4096 /* an inventory path or network name we accept */

/* Subtypes we accept where a base type is asked for (want_type). */
static int inv_type_is(const char *type, const char *want)
{
    static const struct {
        const char *base, *sub;
    } subtypes[] = {
        {"ComputeResource", "ClusterComputeResource"},
        {"Network", "DistributedVirtualPortgroup"},
        {"Network", "OpaqueNetwork"},
        {"DistributedVirtualSwitch", "VmwareDistributedVirtualSwitch"},
        {"ResourcePool", "VirtualApp"},
        {"Folder", "StoragePod"},
    };

    if (strcmp(type, want) == 0 || strcmp(want, "ManagedEntity") == 0)
        return 1;
    for (size_t i = 0; i < sizeof(subtypes) / sizeof(subtypes[0]); i++)
        if (strcmp(subtypes[i].base, want) == 0 && strcmp(subtypes[i].sub, type) == 0)
            return 1;
    return 0;
}

/* A managed object type name: letters and digits. */
static int inv_type_name_ok(const char *t)
{
    size_t n = t ? strlen(t) : 0;

    if (n == 0 || n >= VIM_MOREF_TYPE_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)t[i]))
            return 0;
    return 1;
}

/* Calls a SearchIndex method that returns zero or one moref. */
static vmop_rc inv_search(struct vim_client *c, const char *method, const char *params,
                          struct vim_moref *ret_ref, struct vmop_err *err)
{
    struct vim_resp *resp = NULL;
    xmlNodePtr rv;
    struct vim_moref ref;
    vmop_rc rc;

    rc = vim_session_service_content(c, err);
    if (rc)
        return rc;
    rc = vim_soap_call(c, method, &c->sc_search_index, params, VIM_RET_OPTIONAL, &resp, err);
    if (rc)
        return rc;
    rv = vim_xml_child(resp->response, "returnval");
    if (!rv) {
        rc = VMOP_E_NOT_FOUND; /* message added by the caller */
        goto out;
    }
    if (vim_xml_moref(rv, &ref) != VMOP_OK) {
        rc =
            vmop_fail(err, VMOP_E_PROTO, "%s: returnval is not a managed object reference", method);
        goto out;
    }
    *ret_ref = ref;
out:
    vim_resp_free(resp);
    return rc;
}

vmop_rc vim_find_by_path(struct vim_client *c, const char *path, const char *want_type,
                         struct vim_moref *ret_ref, struct vmop_err *err)
{
    struct vbuf params;
    struct vim_moref ref;
    vmop_rc rc;

    if (!c || !path || !*path || !ret_ref)
        return vmop_fail(err, VMOP_E_INVALID, "vim_find_by_path: missing argument");
    if (strlen(path) > INV_MAX_PATH)
        return vmop_fail(err, VMOP_E_INVALID, "inventory path longer than %d bytes", INV_MAX_PATH);
    vbuf_init(&params, VIM_MAX_REQUEST);
    vbuf_add_xml_elem(&params, "inventoryPath", path);
    rc = vbuf_error(&params);
    if (rc) {
        vbuf_free(&params);
        return vmop_fail(err, rc, "FindByInventoryPath: %s", vmop_rc_str(rc));
    }
    rc = inv_search(c, "FindByInventoryPath", vbuf_str(&params), &ref, err);
    vbuf_free(&params);
    if (rc == VMOP_E_NOT_FOUND)
        return vmop_fail(err, rc, "no object at inventory path \"%s\"", path);
    if (rc)
        return rc;
    if (want_type && !inv_type_is(ref.type, want_type))
        return vmop_fail(err, VMOP_E_INVALID, "inventory path \"%s\" is a %s, not a %s", path,
                         ref.type, want_type);
    *ret_ref = ref;
    return VMOP_OK;
}

vmop_rc vim_find_vm_by_uuid(struct vim_client *c, const char *uuid, int instance_uuid,
                            struct vim_moref *ret_vm, struct vmop_err *err)
{
    char lower[65];
    char params[256];
    size_t n = uuid ? strlen(uuid) : 0;
    struct vim_moref ref;
    vmop_rc rc;

    if (!c || !ret_vm || n == 0)
        return vmop_fail(err, VMOP_E_INVALID, "vim_find_vm_by_uuid: missing argument");
    if (n >= sizeof(lower))
        return vmop_fail(err, VMOP_E_INVALID, "UUID longer than %zu characters", sizeof(lower) - 1);
    /* Lower-cased: vCenter matches case-insensitively, vcsim does not (and stores lower case).
     * Only hex digits and dashes, so nothing needs escaping. */
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)uuid[i];

        if (!isxdigit(ch) && ch != '-')
            return vmop_fail(err, VMOP_E_INVALID, "UUID has a character other than hex and '-'");
        lower[i] = (char)tolower(ch);
    }
    lower[n] = '\0';
    /* WSDL order: datacenter (left out: search everywhere), uuid, vmSearch, instanceUuid. */
    snprintf(params, sizeof(params),
             "<uuid>%s</uuid><vmSearch>true</vmSearch><instanceUuid>%s</instanceUuid>", lower,
             instance_uuid ? "true" : "false");
    rc = inv_search(c, "FindByUuid", params, &ref, err);
    if (rc == VMOP_E_NOT_FOUND)
        return vmop_fail(err, rc, "no VM with %s UUID %s", instance_uuid ? "instance" : "BIOS",
                         lower);
    if (rc)
        return rc;
    if (strcmp(ref.type, "VirtualMachine") != 0)
        return vmop_fail(err, VMOP_E_PROTO, "FindByUuid returned a %s", ref.type);
    *ret_vm = ref;
    return VMOP_OK;
}

/* Reads one string property of one object; absent is VMOP_E_NOT_FOUND (no message). */
static vmop_rc inv_get_text(struct vim_client *c, const struct vim_moref *ref, const char *path,
                            char **ret_text, struct vmop_err *err)
{
    const char *paths[] = {path, NULL};
    struct vim_objects objs = {0};
    xmlNodePtr val;
    char *text;
    vmop_rc rc;

    rc = vim_retrieve(c, ref, ref->type, paths, 0, &objs, err);
    if (rc)
        return rc;
    val = objs.n == 1 ? vim_object_prop(&objs.items[0], path) : NULL;
    if (!val) {
        rc = VMOP_E_NOT_FOUND;
        goto out;
    }
    text = vim_xml_text(val);
    if (!text) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    *ret_text = text;
out:
    vim_objects_free(&objs);
    return rc;
}

void vim_network_free(struct vim_network *n)
{
    if (!n)
        return;
    free(n->name);
    free(n->portgroup_key);
    free(n->switch_uuid);
    free(n);
}

/* Finds a network by name among the networks of datacenter dc. */
static vmop_rc inv_network_by_name(struct vim_client *c, const struct vim_moref *dc,
                                   const char *name, struct vim_moref *ret_ref,
                                   struct vmop_err *err)
{
    static const char *const paths[] = {"name", NULL};
    struct vim_objects objs = {0};
    size_t found = 0;
    struct vim_moref ref = {{0}};
    vmop_rc rc;

    rc = vim_retrieve_in(c, dc, "Network", paths, &objs, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < objs.n; i++) {
        char *n = vim_xml_text(vim_object_prop(&objs.items[i], "name"));

        if (n && strcmp(n, name) == 0) {
            if (found++ == 0)
                ref = objs.items[i].ref;
        }
        free(n);
    }
    vim_objects_free(&objs);
    if (found == 0)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "no network named \"%s\" in datacenter %s", name,
                         dc->value);
    if (found > 1)
        return vmop_fail(err, VMOP_E_INVALID,
                         "%zu networks are named \"%s\" in datacenter %s: use an inventory path",
                         found, name, dc->value);
    *ret_ref = ref;
    return VMOP_OK;
}

/* Fills a DVPG's key and its switch's uuid. */
static vmop_rc inv_dvpg_details(struct vim_client *c, struct vim_network *net, struct vmop_err *err)
{
    static const char *const paths[] = {"key", "config.distributedVirtualSwitch", NULL};
    struct vim_objects objs = {0};
    struct vim_moref dvs;
    xmlNodePtr key, sw;
    vmop_rc rc;

    rc = vim_retrieve(c, &net->ref, "DistributedVirtualPortgroup", paths, 0, &objs, err);
    if (rc)
        return rc;
    key = objs.n == 1 ? vim_object_prop(&objs.items[0], "key") : NULL;
    sw = objs.n == 1 ? vim_object_prop(&objs.items[0], "config.distributedVirtualSwitch") : NULL;
    if (!key || !sw || vim_xml_moref(sw, &dvs) != VMOP_OK) {
        rc = vmop_fail(err, VMOP_E_PROTO, "port group %s: no key or switch", net->ref.value);
        goto out;
    }
    net->portgroup_key = vim_xml_text(key);
    if (!net->portgroup_key) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    rc = inv_get_text(c, &dvs, "uuid", &net->switch_uuid, err);
    if (rc == VMOP_E_NOT_FOUND)
        rc = vmop_fail(err, VMOP_E_PROTO, "switch %s of port group %s has no uuid", dvs.value,
                       net->ref.value);
out:
    vim_objects_free(&objs);
    return rc;
}

vmop_rc vim_network_lookup(struct vim_client *c, const struct vim_moref *dc, const char *path,
                           struct vim_network **ret_net, struct vmop_err *err)
{
    struct vim_network *net = NULL;
    struct vim_moref ref;
    vmop_rc rc;

    if (!c || !path || !*path || !ret_net)
        return vmop_fail(err, VMOP_E_INVALID, "vim_network_lookup: missing argument");
    if (strlen(path) > INV_MAX_PATH)
        return vmop_fail(err, VMOP_E_INVALID, "network path longer than %d bytes", INV_MAX_PATH);
    if (path[0] == '/') {
        rc = vim_find_by_path(c, path, "Network", &ref, err);
    } else {
        if (!dc || !vim_moref_is_set(dc))
            return vmop_fail(err, VMOP_E_INVALID,
                             "network \"%s\" is a name: a datacenter is needed", path);
        rc = inv_network_by_name(c, dc, path, &ref, err);
    }
    if (rc)
        return rc;
    net = calloc(1, sizeof(*net));
    if (!net)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    net->ref = ref;
    rc = inv_get_text(c, &ref, "name", &net->name, err);
    if (rc == VMOP_E_NOT_FOUND)
        rc = vmop_fail(err, VMOP_E_PROTO, "network %s has no name", ref.value);
    if (rc)
        goto out;
    net->is_dvpg = strcmp(ref.type, "DistributedVirtualPortgroup") == 0;
    if (net->is_dvpg) {
        rc = inv_dvpg_details(c, net, err);
        if (rc)
            goto out;
    }
    *ret_net = net;
    net = NULL;
out:
    vim_network_free(net);
    return rc;
}

vmop_rc vim_cluster_min_cpu_mhz(struct vim_client *c, const struct vim_moref *cluster, int *ret_mhz,
                                struct vmop_err *err)
{
    static const char *const paths[] = {"summary.hardware.cpuMhz", "runtime.connectionState", NULL};
    struct vim_objects objs = {0};
    long long min = -1;
    vmop_rc rc;

    if (!c || !cluster || !ret_mhz)
        return vmop_fail(err, VMOP_E_INVALID, "vim_cluster_min_cpu_mhz: missing argument");
    if (!inv_type_is(cluster->type, "ComputeResource"))
        return vmop_fail(err, VMOP_E_INVALID, "%s is a %s, not a cluster", cluster->value,
                         cluster->type);
    /* A view over a compute resource shows its hosts (and, below its pools, VMs: filtered by
     * type): one round trip whatever the number of hosts. */
    rc = vim_retrieve_in(c, cluster, "HostSystem", paths, &objs, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < objs.n; i++) {
        xmlNodePtr mhz = vim_object_prop(&objs.items[i], "summary.hardware.cpuMhz");
        char *state = vim_xml_text(vim_object_prop(&objs.items[i], "runtime.connectionState"));
        int connected = state && strcmp(state, "connected") == 0;
        char *text;
        char *end = NULL;
        long long v;

        free(state);
        if (!connected || !mhz)
            continue;
        text = vim_xml_text(mhz);
        v = text ? strtoll(text, &end, 10) : 0;
        if (!text || end == text || *end || v <= 0 || v > 1000000) {
            free(text);
            rc = vmop_fail(err, VMOP_E_PROTO, "host %s: bad summary.hardware.cpuMhz",
                           objs.items[i].ref.value);
            goto out;
        }
        free(text);
        if (min < 0 || v < min)
            min = v;
    }
    if (min < 0) {
        rc = vmop_fail(err, VMOP_E_NOT_FOUND, "%s has no connected host", cluster->value);
        goto out;
    }
    *ret_mhz = (int)min;
out:
    vim_objects_free(&objs);
    return rc;
}

void vim_entity_list_free(struct vim_entity_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].name);
        free(l->items[i].path);
    }
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

vmop_rc vim_list(struct vim_client *c, const struct vim_moref *root, const char *type,
                 struct vim_entity_list *ret_list, struct vmop_err *err)
{
    static const char *const paths[] = {"name", NULL};
    struct vim_objects objs = {0};
    struct vim_entity_list l = {0};
    struct vim_moref top;
    vmop_rc rc;

    if (!c || !ret_list || !inv_type_name_ok(type))
        return vmop_fail(err, VMOP_E_INVALID, "vim_list: missing argument or bad type");
    if (root) {
        top = *root;
    } else {
        rc = vim_session_service_content(c, err);
        if (rc)
            return rc;
        top = c->sc_root_folder;
    }
    rc = vim_retrieve_in(c, &top, type, paths, &objs, err);
    if (rc)
        return rc;
    if (objs.n) {
        l.items = calloc(objs.n, sizeof(*l.items));
        if (!l.items) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
            goto out;
        }
    }
    for (size_t i = 0; i < objs.n; i++) {
        struct vim_entity *e = &l.items[l.n++];

        e->ref = objs.items[i].ref;
        e->name = vim_xml_text(vim_object_prop(&objs.items[i], "name"));
        /* a nameless object keeps name NULL */
    }
    *ret_list = l;
    l.items = NULL;
    l.n = 0;
out:
    vim_entity_list_free(&l);
    vim_objects_free(&objs);
    return rc;
}

vmop_rc vim_pool_owner(struct vim_client *c, const struct vim_moref *pool,
                       struct vim_moref *ret_owner, struct vmop_err *err)
{
    static const char *const paths[] = {"owner", NULL};
    struct vim_objects objs = {0};
    struct vim_moref owner;
    xmlNodePtr val;
    vmop_rc rc;

    if (!c || !pool || !ret_owner || !vim_moref_is_set(pool))
        return vmop_fail(err, VMOP_E_INVALID, "vim_pool_owner: missing argument");
    rc = vim_retrieve(c, pool, pool->type, paths, 0, &objs, err);
    if (rc)
        return rc;
    val = objs.n == 1 ? vim_object_prop(&objs.items[0], "owner") : NULL;
    if (!val || vim_xml_moref(val, &owner) != VMOP_OK ||
        !inv_type_is(owner.type, "ComputeResource")) {
        rc = vmop_fail(err, VMOP_E_PROTO, "%s: no ComputeResource owner", pool->value);
        goto out;
    }
    *ret_owner = owner;
out:
    vim_objects_free(&objs);
    return rc;
}
