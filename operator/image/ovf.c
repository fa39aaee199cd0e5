/* ovf.c: OVF descriptor parsing (see ovf.h). Pure: libxml2 on a memory buffer, nothing else.
 *
 * Owns: the namespace-aware walk over the Envelope, the caps, and the conversion of OVF units and
 * hardware Items into struct ovf_desc. Not here: where the descriptor comes from (catalog_vc.c)
 * and what the image object looks like (catalog.c).
 */
#include "ovf.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#define NS_OVF1 "http://schemas.dmtf.org/ovf/envelope/1"
#define NS_OVF2 "http://schemas.dmtf.org/ovf/envelope/2"
#define NS_RASD                                                                                    \
    "http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_ResourceAllocationSettingData"
#define NS_VSSD "http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_VirtualSystemSettingData"
#define NS_VMW  "http://www.vmware.com/schema/ovf"

/* VM Operator's marker for images that defer cloud-init to the v1alpha1 OVF transport. */
#define V1A1_KEY   "guestinfo.vmservice.defer-cloud-init"
#define V1A1_READY "ready"

enum ns { NS_OVF, NS_R, NS_V, NS_W };

struct pctx {
    struct ovf_desc *d;
    struct vmop_err *err;
    vmop_rc rc;
};

static void pfail(struct pctx *p, vmop_rc rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void pfail(struct pctx *p, vmop_rc rc, const char *fmt, ...)
{
    va_list ap;
    if (p->rc)
        return;
    p->rc = rc;
    va_start(ap, fmt);
    vmop_failv(p->err, rc, fmt, ap);
    va_end(ap);
}

/* ---- namespace-aware access -------------------------------------------------------------- */

static int ns_is(const xmlNs *ns, enum ns which)
{
    const char *h = ns && ns->href ? (const char *)ns->href : NULL;
    if (!h)
        return 0;
    switch (which) {
    case NS_OVF:
        return !strcmp(h, NS_OVF1) || !strcmp(h, NS_OVF2);
    case NS_R:
        return !strcmp(h, NS_RASD);
    case NS_V:
        return !strcmp(h, NS_VSSD);
    case NS_W:
        return !strcmp(h, NS_VMW);
    }
    return 0;
}

static int is_elem(const xmlNode *n, enum ns which, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && ns_is(n->ns, which) &&
           !strcmp((const char *)n->name, name);
}

static xmlNodePtr first_child(xmlNodePtr parent, enum ns which, const char *name)
{
    for (xmlNodePtr c = parent ? parent->children : NULL; c; c = c->next)
        if (is_elem(c, which, name))
            return c;
    return NULL;
}

/* Raw attribute value (xmlFree it) or NULL: the namespaced attribute first, then an unprefixed
 * one of the same local name (some tools write ovf attributes without a prefix). */
static xmlChar *attr_raw(xmlNodePtr n, enum ns which, const char *name)
{
    for (int pass = 0; pass < 2; pass++)
        for (xmlAttrPtr a = n->properties; a; a = a->next) {
            if (strcmp((const char *)a->name, name) != 0)
                continue;
            if (pass == 0 ? ns_is(a->ns, which) : a->ns == NULL)
                return xmlNodeListGetString(n->doc, a->children, 1);
        }
    return NULL;
}

/* Takes s (xmlFree'd here); returns a malloc'd trimmed copy, NULL for NULL, and records TOOBIG /
 * NOMEM in p. `what` names the field for the message. */
static char *keep(struct pctx *p, xmlChar *s, const char *what)
{
    const char *b, *e;
    char *r = NULL;
    size_t n;

    if (!s)
        return NULL;
    b = (const char *)s;
    while (*b == ' ' || *b == '\t' || *b == '\n' || *b == '\r')
        b++;
    e = b + strlen(b);
    while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        e--;
    n = (size_t)(e - b);
    if (n > OVF_MAX_TEXT) {
        pfail(p, VMOP_E_TOOBIG, "OVF %s is %zu bytes, over the %d byte cap", what, n, OVF_MAX_TEXT);
    } else if (!p->rc) {
        r = strndup(b, n);
        if (!r)
            pfail(p, VMOP_E_NOMEM, "out of memory reading the OVF %s", what);
    }
    xmlFree(s);
    return r;
}

static char *attr(struct pctx *p, xmlNodePtr n, enum ns which, const char *name, const char *what)
{
    return keep(p, attr_raw(n, which, name), what);
}

static char *text_of(struct pctx *p, xmlNodePtr n, const char *what)
{
    return n ? keep(p, xmlNodeGetContent(n), what) : NULL;
}

static char *child_text(struct pctx *p, xmlNodePtr parent, enum ns which, const char *name,
                        const char *what)
{
    return text_of(p, first_child(parent, which, name), what);
}

/* Strict decimal integer (surrounding blanks allowed). 0 on success. */
static int parse_ll(const char *s, long long *ret)
{
    char *end = NULL;
    long long v;

    if (!s)
        return -1;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!(*s >= '0' && *s <= '9') && *s != '-' && *s != '+')
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || end == s)
        return -1;
    while (*end == ' ' || *end == '\t')
        end++;
    if (*end)
        return -1;
    *ret = v;
    return 0;
}

/* ---- units ------------------------------------------------------------------------------- */

vmop_rc ovf_alloc_units(const char *units, long long *ret_multiplier, struct vmop_err *err)
{
    char buf[64];
    size_t n = 0;
    long long base = 0, exp = 1, mul = 1;
    const char *rest;

    if (!units) {
        *ret_multiplier = 1;
        return VMOP_OK;
    }
    /* Squeeze out blanks: "byte * 2^30" -> "byte*2^30". */
    for (const char *s = units; *s; s++) {
        if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
            continue;
        if (n + 1 >= sizeof(buf))
            return vmop_fail(err, VMOP_E_INVALID, "OVF allocation unit '%.40s...' is too long",
                             units);
        buf[n++] = *s;
    }
    buf[n] = '\0';
    if (strncmp(buf, "byte", 4) != 0)
        return vmop_fail(err, VMOP_E_INVALID, "OVF allocation unit '%.64s' is not in bytes", units);
    rest = buf + 4;
    if (*rest == 's') /* "bytes" */
        rest++;
    if (!*rest) {
        *ret_multiplier = 1;
        return VMOP_OK;
    }
    if (*rest != '*')
        goto bad;
    rest++;
    {
        char *end = NULL;
        errno = 0;
        base = strtoll(rest, &end, 10);
        if (errno || end == rest || base < 1)
            goto bad;
        rest = end;
        if (*rest == '^') {
            rest++;
            errno = 0;
            exp = strtoll(rest, &end, 10);
            if (errno || end == rest || exp < 0 || exp > 64)
                goto bad;
            rest = end;
        }
        if (*rest)
            goto bad;
    }
    for (long long i = 0; i < exp; i++)
        if (__builtin_mul_overflow(mul, base, &mul))
            return vmop_fail(err, VMOP_E_INVALID, "OVF allocation unit '%.64s' overflows", units);
    *ret_multiplier = mul;
    return VMOP_OK;
bad:
    return vmop_fail(err, VMOP_E_INVALID,
                     "OVF allocation unit '%.64s' is not understood (expected \"byte * 2^N\")",
                     units);
}

/* ---- freeing ------------------------------------------------------------------------------ */

void ovf_desc_free(struct ovf_desc *d)
{
    if (!d)
        return;
    free(d->name);
    free(d->os_id);
    free(d->os_type);
    free(d->os_version);
    free(d->os_description);
    free(d->firmware);
    free(d->product);
    free(d->vendor);
    free(d->version);
    free(d->full_version);
    for (size_t i = 0; i < d->n_props; i++) {
        free(d->props[i].key);
        free(d->props[i].type);
        free(d->props[i].default_value);
    }
    free(d->props);
    for (size_t i = 0; i < d->n_sys_props; i++) {
        free(d->sys_props[i].key);
        free(d->sys_props[i].value);
    }
    free(d->sys_props);
    for (size_t i = 0; i < d->n_disks; i++) {
        free(d->disks[i].disk_id);
        free(d->disks[i].controller_type);
        free(d->disks[i].element_name);
    }
    free(d->disks);
    for (size_t i = 0; i < d->n_nics; i++) {
        free(d->nics[i].network);
        free(d->nics[i].adapter_type);
        free(d->nics[i].element_name);
    }
    free(d->nics);
    for (size_t i = 0; i < d->n_networks; i++)
        free(d->networks[i]);
    free(d->networks);
    free(d);
}

/* Grows *arr (of elements of size sz) to hold n+1; 0 on success. */
static int grow(struct pctx *p, void **arr, size_t n, size_t sz, size_t cap, const char *what)
{
    void *na;
    if (n >= cap) {
        pfail(p, VMOP_E_TOOBIG, "the OVF descriptor has more than %zu %s", cap, what);
        return -1;
    }
    na = realloc(*arr, (n + 1) * sz);
    if (!na) {
        pfail(p, VMOP_E_NOMEM, "out of memory reading OVF %s", what);
        return -1;
    }
    memset((char *)na + n * sz, 0, sz);
    *arr = na;
    return 0;
}

/* ---- sections ---------------------------------------------------------------------------- */

static void parse_disk_section(struct pctx *p, xmlNodePtr sec)
{
    struct ovf_desc *d = p->d;

    for (xmlNodePtr c = sec->children; c && !p->rc; c = c->next) {
        struct ovf_disk *dk;
        char *cap = NULL, *units = NULL, *pop = NULL;
        long long v, mul = 1;

        if (!is_elem(c, NS_OVF, "Disk"))
            continue;
        if (grow(p, (void **)&d->disks, d->n_disks, sizeof(*d->disks), OVF_MAX_DISKS, "disks"))
            return;
        dk = &d->disks[d->n_disks++];
        dk->capacity_bytes = dk->populated_bytes = -1;
        dk->controller_bus = dk->unit_number = -1;
        dk->disk_id = attr(p, c, NS_OVF, "diskId", "Disk diskId");
        cap = attr(p, c, NS_OVF, "capacity", "Disk capacity");
        units = attr(p, c, NS_OVF, "capacityAllocationUnits", "Disk capacityAllocationUnits");
        pop = attr(p, c, NS_OVF, "populatedSize", "Disk populatedSize");
        if (!p->rc && !dk->disk_id)
            pfail(p, VMOP_E_INVALID, "an OVF DiskSection Disk has no ovf:diskId");
        /* A capacity may name a property ("${disk.size}"): then it is simply unknown. */
        if (!p->rc && cap && cap[0] != '$') {
            if (parse_ll(cap, &v) || v < 0)
                pfail(p, VMOP_E_INVALID, "OVF disk '%.64s' has a bad ovf:capacity '%.64s'",
                      dk->disk_id, cap);
            else if (ovf_alloc_units(units, &mul, p->err))
                p->rc = VMOP_E_INVALID;
            else if (__builtin_mul_overflow(v, mul, &dk->capacity_bytes))
                pfail(p, VMOP_E_INVALID, "OVF disk '%.64s' capacity overflows", dk->disk_id);
        }
        if (!p->rc && pop) {
            if (parse_ll(pop, &v) || v < 0)
                pfail(p, VMOP_E_INVALID, "OVF disk '%.64s' has a bad ovf:populatedSize '%.64s'",
                      dk->disk_id, pop);
            else
                dk->populated_bytes = v;
        }
        free(cap);
        free(units);
        free(pop);
    }
}

static void parse_network_section(struct pctx *p, xmlNodePtr sec)
{
    struct ovf_desc *d = p->d;

    for (xmlNodePtr c = sec->children; c && !p->rc; c = c->next) {
        char *name;
        if (!is_elem(c, NS_OVF, "Network"))
            continue;
        name = attr(p, c, NS_OVF, "name", "Network name");
        if (!name)
            continue;
        if (grow(p, (void **)&d->networks, d->n_networks, sizeof(*d->networks), OVF_MAX_NETWORKS,
                 "networks")) {
            free(name);
            return;
        }
        d->networks[d->n_networks++] = name;
    }
}

static void parse_os(struct pctx *p, xmlNodePtr sec)
{
    struct ovf_desc *d = p->d;
    long long v;

    d->os_id = attr(p, sec, NS_OVF, "id", "OperatingSystemSection id");
    d->os_version = attr(p, sec, NS_OVF, "version", "OperatingSystemSection version");
    d->os_type = attr(p, sec, NS_W, "osType", "OperatingSystemSection osType");
    d->os_description =
        child_text(p, sec, NS_OVF, "Description", "OperatingSystemSection Description");
    if (!p->rc && d->os_id && parse_ll(d->os_id, &v))
        pfail(p, VMOP_E_INVALID, "OVF OperatingSystemSection ovf:id '%.64s' is not a number",
              d->os_id);
}

/* "vmx-13" (or "vmx-13 vmx-14": the first) -> 13; 0 when there is none. */
static int parse_vmx(const char *s)
{
    const char *m = s ? strstr(s, "vmx-") : NULL;
    long v = 0;

    if (!m)
        return 0;
    for (m += 4; *m >= '0' && *m <= '9'; m++) {
        v = v * 10 + (*m - '0');
        if (v > 100000)
            return 0;
    }
    return (int)v;
}

struct hw_item {
    char *instance_id, *type, *subtype, *parent, *address, *aop, *host_resource, *connection,
        *element_name, *quantity, *units;
};

/* The rasd: child elements an Item is read from, and where each goes (every field of hw_item). */
static const struct {
    const char *name;
    size_t off;
} item_fields[] = {
    {"InstanceID", offsetof(struct hw_item, instance_id)},
    {"ResourceType", offsetof(struct hw_item, type)},
    {"ResourceSubType", offsetof(struct hw_item, subtype)},
    {"Parent", offsetof(struct hw_item, parent)},
    {"Address", offsetof(struct hw_item, address)},
    {"AddressOnParent", offsetof(struct hw_item, aop)},
    {"HostResource", offsetof(struct hw_item, host_resource)},
    {"Connection", offsetof(struct hw_item, connection)},
    {"ElementName", offsetof(struct hw_item, element_name)},
    {"VirtualQuantity", offsetof(struct hw_item, quantity)},
    {"AllocationUnits", offsetof(struct hw_item, units)},
};
#define N_ITEM_FIELDS (sizeof(item_fields) / sizeof(item_fields[0]))
_Static_assert(sizeof(struct hw_item) == N_ITEM_FIELDS * sizeof(char *),
               "item_fields must name every field of struct hw_item");

static char **item_slot(struct hw_item *it, size_t i)
{
    return (char **)((char *)it + item_fields[i].off);
}

static void hw_item_free(struct hw_item *it)
{
    for (size_t i = 0; i < N_ITEM_FIELDS; i++)
        free(*item_slot(it, i));
}

static void read_item(struct pctx *p, xmlNodePtr item, struct hw_item *it)
{
    for (xmlNodePtr c = item->children; c && !p->rc; c = c->next) {
        char **slot = NULL;
        if (c->type != XML_ELEMENT_NODE || !ns_is(c->ns, NS_R))
            continue;
        for (size_t i = 0; i < N_ITEM_FIELDS && !slot; i++)
            if (!strcmp((const char *)c->name, item_fields[i].name))
                slot = item_slot(it, i);
        if (slot && !*slot)
            *slot = text_of(p, c, "hardware Item field");
    }
}

static int type_is(const struct hw_item *it, long long want)
{
    long long v;
    return it->type && !parse_ll(it->type, &v) && v == want;
}

static int small_int(const char *s, int dflt)
{
    long long v;
    return s && !parse_ll(s, &v) && v >= 0 && v <= INT_MAX ? (int)v : dflt;
}

static int contains_ci(const char *s, const char *needle)
{
    return s && strcasestr(s, needle) != NULL;
}

/* The controller type VM Operator reports for a controller Item, or NULL. */
static const char *controller_type(const struct hw_item *c)
{
    if (type_is(c, 5))
        return "IDE";
    if (type_is(c, 6))
        return "SCSI";
    if (type_is(c, 20)) {
        if (contains_ci(c->subtype, "nvme"))
            return "NVME";
        if (contains_ci(c->subtype, "sata") || contains_ci(c->subtype, "ahci"))
            return "SATA";
    }
    return NULL;
}

static struct ovf_disk *disk_by_ref(struct ovf_desc *d, const char *host_resource)
{
    const char *id;
    if (!host_resource)
        return NULL;
    id = host_resource;
    if (!strncmp(id, "ovf:", 4))
        id += 4;
    if (strncmp(id, "/disk/", 6) != 0)
        return NULL;
    id += 6;
    for (size_t i = 0; i < d->n_disks; i++)
        if (d->disks[i].disk_id && !strcmp(d->disks[i].disk_id, id))
            return &d->disks[i];
    return NULL;
}

static void apply_items(struct pctx *p, struct hw_item *items, size_t n)
{
    struct ovf_desc *d = p->d;

    for (size_t i = 0; i < n && !p->rc; i++) {
        struct hw_item *it = &items[i];
        long long v, mul;
        if (type_is(it, 3) && it->quantity && !parse_ll(it->quantity, &v) && v > 0 && v < INT_MAX) {
            d->num_cpus = (int)v;
        } else if (type_is(it, 4) && it->quantity && !parse_ll(it->quantity, &v) && v > 0) {
            /* Memory is informational: units we do not understand leave it unknown. */
            if (!ovf_alloc_units(it->units, &mul, NULL) && !__builtin_mul_overflow(v, mul, &v))
                d->memory_mb = v / (1024 * 1024);
        } else if (type_is(it, 10)) {
            struct ovf_nic *nic;
            if (grow(p, (void **)&d->nics, d->n_nics, sizeof(*d->nics), OVF_MAX_NICS, "NICs"))
                return;
            nic = &d->nics[d->n_nics++];
            nic->network = it->connection;
            nic->adapter_type = it->subtype;
            nic->element_name = it->element_name;
            it->connection = it->subtype = it->element_name = NULL;
        } else if (type_is(it, 17)) {
            struct ovf_disk *dk = disk_by_ref(d, it->host_resource);
            if (!dk)
                continue;
            dk->unit_number = small_int(it->aop, -1);
            free(dk->element_name);
            dk->element_name = it->element_name;
            it->element_name = NULL;
            for (size_t j = 0; it->parent && j < n; j++) {
                const char *t;
                if (!items[j].instance_id || strcmp(items[j].instance_id, it->parent) != 0)
                    continue;
                if ((t = controller_type(&items[j]))) {
                    free(dk->controller_type);
                    dk->controller_type = strdup(t);
                    if (!dk->controller_type)
                        pfail(p, VMOP_E_NOMEM, "out of memory reading OVF disks");
                    dk->controller_bus = small_int(items[j].address, 0);
                }
                break;
            }
        }
    }
}

/* vmw:Config / vmw:ExtraConfig key and value of element c; both NULL if not such an element. */
static void vmw_kv(struct pctx *p, xmlNodePtr c, const char *elem, char **ret_key, char **ret_val)
{
    *ret_key = *ret_val = NULL;
    if (!is_elem(c, NS_W, elem))
        return;
    *ret_key = attr(p, c, NS_W, "key", "vmw:Config key");
    *ret_val = attr(p, c, NS_W, "value", "vmw:Config value");
}

static void parse_hardware(struct pctx *p, xmlNodePtr sec, int first)
{
    struct ovf_desc *d = p->d;
    struct hw_item *items = NULL;
    size_t n = 0;

    for (xmlNodePtr c = sec->children; c && !p->rc; c = c->next) {
        char *k = NULL, *v = NULL;
        if (first && is_elem(c, NS_OVF, "System")) {
            char *vst = child_text(p, c, NS_V, "VirtualSystemType", "VirtualSystemType");
            d->hw_version = parse_vmx(vst);
            free(vst);
        } else if (first && is_elem(c, NS_OVF, "Item")) {
            if (grow(p, (void **)&items, n, sizeof(*items), OVF_MAX_ITEMS, "hardware items"))
                break;
            read_item(p, c, &items[n++]);
        } else if (first && is_elem(c, NS_W, "Config")) {
            vmw_kv(p, c, "Config", &k, &v);
            if (k && v && !strcmp(k, "firmware") && !d->firmware) {
                d->firmware = v;
                v = NULL;
            }
        } else if (is_elem(c, NS_W, "ExtraConfig")) {
            vmw_kv(p, c, "ExtraConfig", &k, &v);
            if (k && v && !strcmp(k, V1A1_KEY) && !strcmp(v, V1A1_READY))
                d->v1alpha1_compatible = 1;
        }
        free(k);
        free(v);
    }
    if (!p->rc)
        apply_items(p, items, n);
    for (size_t i = 0; i < n; i++)
        hw_item_free(&items[i]);
    free(items);
}

static int xsd_true(const char *s)
{
    return s && (!strcmp(s, "true") || !strcmp(s, "1"));
}

static void parse_product(struct pctx *p, xmlNodePtr sec, int first)
{
    struct ovf_desc *d = p->d;

    if (first) {
        d->product = child_text(p, sec, NS_OVF, "Product", "Product");
        d->vendor = child_text(p, sec, NS_OVF, "Vendor", "Vendor");
        d->version = child_text(p, sec, NS_OVF, "Version", "Version");
        d->full_version = child_text(p, sec, NS_OVF, "FullVersion", "FullVersion");
    }
    for (xmlNodePtr c = sec->children; c && !p->rc; c = c->next) {
        char *key, *type, *value, *uc, *pw;
        if (!is_elem(c, NS_OVF, "Property"))
            continue;
        key = attr(p, c, NS_OVF, "key", "Property key");
        type = attr(p, c, NS_OVF, "type", "Property type");
        value = attr(p, c, NS_OVF, "value", "Property value");
        uc = attr(p, c, NS_OVF, "userConfigurable", "Property userConfigurable");
        pw = attr(p, c, NS_OVF, "password", "Property password");
        if (!p->rc && (!key || !*key))
            pfail(p, VMOP_E_INVALID, "an OVF ProductSection Property has no ovf:key");
        if (!p->rc && !strncmp(key, "vmware-system", 13) && value) {
            size_t j;
            for (j = 0; j < d->n_sys_props; j++) /* a later duplicate wins, as in a map */
                if (!strcmp(d->sys_props[j].key, key))
                    break;
            if (j == d->n_sys_props &&
                !grow(p, (void **)&d->sys_props, d->n_sys_props, sizeof(*d->sys_props),
                      OVF_MAX_PROPERTIES, "vmware-system properties")) {
                d->sys_props[j].key = strdup(key);
                if (!d->sys_props[j].key)
                    pfail(p, VMOP_E_NOMEM, "out of memory reading OVF properties");
                else
                    d->n_sys_props++;
            }
            if (!p->rc) {
                free(d->sys_props[j].value);
                d->sys_props[j].value = strdup(value);
                if (!d->sys_props[j].value)
                    pfail(p, VMOP_E_NOMEM, "out of memory reading OVF properties");
            }
        }
        if (!p->rc && xsd_true(uc) &&
            !grow(p, (void **)&d->props, d->n_props, sizeof(*d->props), OVF_MAX_PROPERTIES,
                  "user-configurable properties")) {
            struct ovf_property *op = &d->props[d->n_props++];
            op->key = key;
            op->type = type ? type : strdup("string");
            op->default_value = xsd_true(pw) ? NULL : value;
            if (!op->type)
                pfail(p, VMOP_E_NOMEM, "out of memory reading OVF properties");
            key = type = NULL;
            if (!xsd_true(pw))
                value = NULL;
        }
        free(key);
        free(type);
        free(value);
        free(uc);
        free(pw);
    }
}

static void parse_virtual_system(struct pctx *p, xmlNodePtr vs)
{
    struct ovf_desc *d = p->d;
    int have_os = 0, have_hw = 0, have_product = 0;

    d->name = child_text(p, vs, NS_OVF, "Name", "VirtualSystem Name");
    if (!d->name)
        d->name = attr(p, vs, NS_OVF, "id", "VirtualSystem id");
    for (xmlNodePtr c = vs->children; c && !p->rc; c = c->next) {
        if (is_elem(c, NS_OVF, "OperatingSystemSection") && !have_os) {
            have_os = 1;
            parse_os(p, c);
        } else if (is_elem(c, NS_OVF, "VirtualHardwareSection")) {
            parse_hardware(p, c, !have_hw);
            have_hw = 1;
        } else if (is_elem(c, NS_OVF, "ProductSection")) {
            parse_product(p, c, !have_product);
            have_product = 1;
        }
    }
}

/* ---- entry point ------------------------------------------------------------------------- */

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;
static void xml_init(void)
{
    xmlInitParser();
}

/* One line of libxml2's message for err (no trailing newline, no control characters). */
static void xml_error_text(const xmlError *e, char *buf, size_t n)
{
    size_t i = 0;
    if (!e || !e->message) {
        snprintf(buf, n, "not well-formed XML");
        return;
    }
    for (const char *s = e->message; *s && i + 1 < n; s++)
        buf[i++] = (unsigned char)*s < 0x20 ? ' ' : *s;
    while (i && buf[i - 1] == ' ')
        i--;
    buf[i] = '\0';
}

vmop_rc ovf_parse(const char *data, size_t len, struct ovf_desc **ret_desc, struct vmop_err *err)
{
    struct pctx p = {.err = err};
    xmlParserCtxtPtr ctxt = NULL;
    xmlDocPtr doc = NULL;
    xmlNodePtr root, vs = NULL;

    if (!data || !ret_desc)
        return vmop_fail(err, VMOP_E_INVALID, "ovf_parse: bad arguments");
    if (len == 0)
        return vmop_fail(err, VMOP_E_INVALID, "the OVF descriptor is empty");
    if (len > OVF_MAX_BYTES)
        return vmop_fail(err, VMOP_E_TOOBIG,
                         "the OVF descriptor is %zu bytes, over the %zu byte cap", len,
                         OVF_MAX_BYTES);
    /* UTF-16 (NUL bytes) could hide a DOCTYPE from the check below. */
    if (memchr(data, '\0', len))
        return vmop_fail(err, VMOP_E_INVALID,
                         "the OVF descriptor is not UTF-8 text (it holds NUL bytes)");
    if (memmem(data, len, "<!DOCTYPE", 9))
        return vmop_fail(
            err, VMOP_E_INVALID,
            "the OVF descriptor has a DTD (<!DOCTYPE>): refused, entities are not expanded");

    pthread_once(&xml_once, xml_init);
    p.d = calloc(1, sizeof(*p.d));
    ctxt = xmlNewParserCtxt();
    if (!p.d || !ctxt) {
        pfail(&p, VMOP_E_NOMEM, "out of memory parsing an OVF descriptor");
        goto out;
    }
    /* No NOENT (entities stay unexpanded), no DTDLOAD, no network, no messages on stderr. */
    doc = xmlCtxtReadMemory(ctxt, data, (int)len, "descriptor.ovf", NULL,
                            XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) {
        char msg[200];
        const xmlError *e = xmlCtxtGetLastError(ctxt);
        xml_error_text(e, msg, sizeof(msg));
        pfail(&p, VMOP_E_INVALID, "the OVF descriptor is not well-formed XML (line %d: %s)",
              e ? e->line : 0, msg);
        goto out;
    }
    if (doc->intSubset || doc->extSubset) {
        pfail(&p, VMOP_E_INVALID, "the OVF descriptor has a DTD: refused");
        goto out;
    }
    root = xmlDocGetRootElement(doc);
    if (!is_elem(root, NS_OVF, "Envelope")) {
        pfail(&p, VMOP_E_INVALID,
              "not an OVF descriptor: the root element is '%.64s', not an OVF Envelope "
              "(namespace " NS_OVF1 ")",
              root ? (const char *)root->name : "");
        goto out;
    }
    for (xmlNodePtr c = root->children; c && !p.rc; c = c->next) {
        if (is_elem(c, NS_OVF, "DiskSection"))
            parse_disk_section(&p, c);
        else if (is_elem(c, NS_OVF, "NetworkSection"))
            parse_network_section(&p, c);
        else if (is_elem(c, NS_OVF, "VirtualSystem") && !vs)
            vs = c;
    }
    if (p.rc)
        goto out;
    if (!vs) {
        pfail(&p, VMOP_E_INVALID,
              first_child(root, NS_OVF, "VirtualSystemCollection")
                  ? "the OVF descriptor holds a VirtualSystemCollection (a vApp): only a single "
                    "VirtualSystem is supported"
                  : "the OVF descriptor has no VirtualSystem");
        goto out;
    }
    parse_virtual_system(&p, vs);
out:
    if (doc)
        xmlFreeDoc(doc);
    if (ctxt)
        xmlFreeParserCtxt(ctxt);
    if (p.rc) {
        ovf_desc_free(p.d);
        return p.rc;
    }
    *ret_desc = p.d;
    return VMOP_OK;
}
