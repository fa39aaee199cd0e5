/* api_admin.c: VCenterEndpoint and NamespaceBinding (see api_admin.h). */
#include "api_admin.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "api_json.h"

static void parse_libraries(const cJSON *arr, const char *path, struct api_library_ref *out,
                            size_t *n, size_t *total, struct api_ferrs *fe)
{
    const cJSON *it;
    char p[API_FERR_PATH_MAX];
    cJSON_ArrayForEach(it, arr)
    {
        if (*n < API_ADMIN_MAX_LIBRARIES) {
            api_path_index(p, sizeof(p), path, *n);
            out[*n].name = api_json_str(it, "name", p, fe);
            out[*n].id = api_json_str(it, "id", p, fe);
            (*n)++;
        }
        (*total)++;
    }
}

static void validate_libraries(const struct api_library_ref *l, size_t n, size_t total,
                               const char *path, struct api_ferrs *fe)
{
    char p[API_FERR_PATH_MAX];
    if (total > API_ADMIN_MAX_LIBRARIES)
        api_ferr_add(fe, API_FERR_TOO_MANY, path, "%zu: must have at most %d items", total,
                     API_ADMIN_MAX_LIBRARIES);
    for (size_t i = 0; i < n; i++)
        if ((!l[i].name || !*l[i].name) && (!l[i].id || !*l[i].id))
            api_ferr_add(fe, API_FERR_REQUIRED, api_path_index(p, sizeof(p), path, i),
                         "name or id is required");
}

vmop_rc api_endpoint_parse(const cJSON *json, struct api_endpoint **ret, struct vmop_err *err)
{
    struct api_endpoint *e;
    struct api_ferrs *fe;
    const cJSON *md, *spec, *tls, *cred;

    if (!cJSON_IsObject(json))
        return vmop_fail(err, VMOP_E_INVALID, "a VCenterEndpoint must be a JSON object");
    e = calloc(1, sizeof(*e));
    if (!e || !(e->obj = cJSON_Duplicate(json, 1))) {
        free(e);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory parsing a VCenterEndpoint");
    }
    fe = &e->parse_errs;
    md = api_json_obj(e->obj, "metadata", "", fe);
    spec = api_json_obj(e->obj, "spec", "", fe);
    tls = api_json_obj(spec, "tls", "spec", fe);
    cred = api_json_obj(spec, "credentialsSecretRef", "spec", fe);
    e->name = api_json_str(md, "name", "metadata", fe);
    e->server = api_json_str(spec, "server", "spec", fe);
    e->datacenter = api_json_str(spec, "datacenter", "spec", fe);
    e->ca_bundle = api_json_str(tls, "caBundle", "spec.tls", fe);
    e->thumbprint = api_json_str(tls, "thumbprint", "spec.tls", fe);
    api_json_bool(tls, "insecureSkipVerify", "spec.tls", fe, &e->insecure);
    e->secret_name = api_json_str(cred, "name", "spec.credentialsSecretRef", fe);
    e->username_key = api_json_str(cred, "usernameKey", "spec.credentialsSecretRef", fe);
    e->password_key = api_json_str(cred, "passwordKey", "spec.credentialsSecretRef", fe);
    if (!e->username_key)
        e->username_key = "username";
    if (!e->password_key)
        e->password_key = "password";
    parse_libraries(api_json_arr(spec, "clusterContentLibraries", "spec", fe),
                    "spec.clusterContentLibraries", e->libraries, &e->n_libraries,
                    &e->n_libraries_total, fe);
    *ret = e;
    return VMOP_OK;
}

void api_endpoint_free(struct api_endpoint *e)
{
    if (!e)
        return;
    cJSON_Delete(e->obj);
    free(e);
}

void api_endpoint_validate(const struct api_endpoint *e, struct api_ferrs *fe)
{
    api_ferrs_merge(fe, &e->parse_errs);
    if (!e->server || !*e->server)
        api_ferr_add(fe, API_FERR_REQUIRED, "spec.server", "%s", "");
    else if (strncmp(e->server, "https://", 8) != 0 && strncmp(e->server, "http://", 7) != 0)
        api_ferr_add(fe, API_FERR_INVALID, "spec.server", "must be an http(s) URL");
    else if (strncmp(e->server, "http://", 7) == 0 && !e->insecure)
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.server",
                     "plain http needs tls.insecureSkipVerify: true");
    if (e->ca_bundle && e->thumbprint)
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.tls.thumbprint",
                     "caBundle and thumbprint are mutually exclusive");
    if (e->insecure && (e->ca_bundle || e->thumbprint))
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.tls.insecureSkipVerify",
                     "insecureSkipVerify excludes caBundle and thumbprint");
    if (!e->secret_name || !*e->secret_name)
        api_ferr_add(fe, API_FERR_REQUIRED, "spec.credentialsSecretRef.name", "%s", "");
    validate_libraries(e->libraries, e->n_libraries, e->n_libraries_total,
                       "spec.clusterContentLibraries", fe);
}

/* ---- IPv4 pools --------------------------------------------------------------------------- */

int api_ipv4_parse(const char *s, uint32_t *ret)
{
    struct in_addr a;
    if (!s || inet_pton(AF_INET, s, &a) != 1)
        return 0;
    *ret = ntohl(a.s_addr);
    return 1;
}

const char *api_ipv4_format(uint32_t a, char *buf, size_t n)
{
    struct in_addr in = {.s_addr = htonl(a)};
    if (!inet_ntop(AF_INET, &in, buf, (socklen_t)n) && n)
        buf[0] = '\0';
    return buf;
}

uint32_t api_ipv4_mask(long long prefix)
{
    if (prefix <= 0)
        return 0;
    if (prefix >= 32)
        return 0xffffffffu;
    return ~((1u << (32 - prefix)) - 1u);
}

/* Strings of a JSON array into out[] (up to max), counting all items in *total. */
static void parse_strings(const cJSON *arr, const char *path, const char **out, size_t max,
                          size_t *n, size_t *total, struct api_ferrs *fe)
{
    const cJSON *it;
    char p[API_FERR_PATH_MAX];
    size_t i = 0;
    cJSON_ArrayForEach(it, arr)
    {
        if (!cJSON_IsString(it))
            api_ferr_add(fe, API_FERR_TYPE, api_path_index(p, sizeof(p), path, i),
                         "must be a string");
        else if (*n < max)
            out[(*n)++] = it->valuestring;
        (*total)++;
        i++;
    }
}

static void parse_ipv4_pool(const cJSON *pool, const char *path, struct api_ipv4_pool *p,
                            struct api_ferrs *fe)
{
    const cJSON *it;
    char rp[API_FERR_PATH_MAX], q[API_FERR_PATH_MAX];

    cJSON_ArrayForEach(it, api_json_arr(pool, "ranges", path, fe))
    {
        if (p->n_ranges < API_IPV4_POOL_MAX_RANGES) {
            struct api_ipv4_range *r = &p->ranges[p->n_ranges];
            api_path_index(rp, sizeof(rp), api_path(q, sizeof(q), path, "ranges"), p->n_ranges++);
            r->start_s = api_json_str(it, "start", rp, fe);
            r->end_s = api_json_str(it, "end", rp, fe);
            r->ok = api_ipv4_parse(r->start_s, &r->start) && api_ipv4_parse(r->end_s, &r->end);
        }
        p->n_ranges_total++;
    }
    api_json_int(pool, "prefix", path, fe, &p->prefix);
    p->gateway_s = api_json_str(pool, "gateway", path, fe);
    p->gateway_ok = api_ipv4_parse(p->gateway_s, &p->gateway);
    parse_strings(api_json_arr(pool, "nameservers", path, fe),
                  api_path(q, sizeof(q), path, "nameservers"), p->nameservers,
                  API_IPV4_POOL_MAX_NAMESERVERS, &p->n_nameservers, &p->n_nameservers_total, fe);
    parse_strings(api_json_arr(pool, "searchDomains", path, fe),
                  api_path(q, sizeof(q), path, "searchDomains"), p->search_domains,
                  API_IPV4_POOL_MAX_SEARCH, &p->n_search_domains, &p->n_search_domains_total, fe);
}

static int dns_name_ok(const char *s)
{
    size_t n = strlen(s), label = 0;
    if (n == 0 || n > 253)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '.') {
            if (label == 0 || s[i - 1] == '-')
                return 0;
            label = 0;
        } else if (isalnum(c) || (c == '-' && label > 0)) {
            if (++label > 63)
                return 0;
        } else {
            return 0;
        }
    }
    return label > 0 && s[n - 1] != '-';
}

static void validate_ranges(const struct api_ipv4_pool *p, const char *path, uint32_t subnet,
                            uint32_t mask, int have_subnet, struct api_ferrs *fe)
{
    char rp[API_FERR_PATH_MAX], q[API_FERR_PATH_MAX], base[API_FERR_PATH_MAX];
    unsigned long long total = 0;

    api_path(base, sizeof(base), path, "ranges");
    if (p->n_ranges_total == 0)
        api_ferr_add(fe, API_FERR_REQUIRED, base, "at least one range is required");
    if (p->n_ranges_total > API_IPV4_POOL_MAX_RANGES)
        api_ferr_add(fe, API_FERR_TOO_MANY, base, "%zu: must have at most %d items",
                     p->n_ranges_total, API_IPV4_POOL_MAX_RANGES);
    for (size_t i = 0; i < p->n_ranges; i++) {
        const struct api_ipv4_range *r = &p->ranges[i];
        uint32_t a;
        api_path_index(rp, sizeof(rp), base, i);
        if (!api_ipv4_parse(r->start_s, &a))
            api_ferr_add(fe, r->start_s ? API_FERR_INVALID : API_FERR_REQUIRED,
                         api_path(q, sizeof(q), rp, "start"), "must be an IPv4 address");
        if (!api_ipv4_parse(r->end_s, &a))
            api_ferr_add(fe, r->end_s ? API_FERR_INVALID : API_FERR_REQUIRED,
                         api_path(q, sizeof(q), rp, "end"), "must be an IPv4 address");
        if (!r->ok)
            continue;
        if (r->start > r->end) {
            api_ferr_add(fe, API_FERR_INVALID, rp, "start %.15s is after end %.15s", r->start_s,
                         r->end_s);
            continue;
        }
        if (have_subnet && ((r->start & mask) != subnet || (r->end & mask) != subnet))
            api_ferr_add(fe, API_FERR_INVALID, rp, "%.15s-%.15s is not inside the subnet",
                         r->start_s, r->end_s);
        for (size_t j = 0; j < i; j++) {
            const struct api_ipv4_range *o = &p->ranges[j];
            if (o->ok && o->start <= o->end && r->start <= o->end && o->start <= r->end)
                api_ferr_add(fe, API_FERR_INVALID, rp, "overlaps ranges[%zu]", j);
        }
        total += (unsigned long long)(r->end - r->start) + 1;
    }
    if (total > API_IPV4_POOL_MAX_ADDRS)
        api_ferr_add(fe, API_FERR_TOO_MANY, base, "%llu addresses: must have at most %d", total,
                     API_IPV4_POOL_MAX_ADDRS);
}

void api_ipv4_pool_validate(const struct api_ipv4_pool *p, const char *path, struct api_ferrs *fe)
{
    char q[API_FERR_PATH_MAX], base[API_FERR_PATH_MAX];
    uint32_t mask = 0, subnet = 0;
    int have_subnet = 0, prefix_ok = p->prefix >= 1 && p->prefix <= 32;

    if (p->prefix == 0)
        api_ferr_add(fe, API_FERR_REQUIRED, api_path(q, sizeof(q), path, "prefix"), "1..32");
    else if (!prefix_ok)
        api_ferr_add(fe, API_FERR_INVALID, api_path(q, sizeof(q), path, "prefix"),
                     "%lld: must be between 1 and 32", p->prefix);
    if (prefix_ok) {
        mask = api_ipv4_mask(p->prefix);
        if (p->gateway_ok) {
            subnet = p->gateway & mask;
            have_subnet = 1;
        } else if (p->n_ranges > 0 && p->ranges[0].ok) {
            subnet = p->ranges[0].start & mask;
            have_subnet = 1;
        }
    }
    if (p->gateway_s && !p->gateway_ok) {
        api_ferr_add(fe, API_FERR_INVALID, api_path(q, sizeof(q), path, "gateway"),
                     "must be an IPv4 address");
    } else if (p->gateway_ok && prefix_ok && p->prefix <= 30 &&
               (p->gateway == subnet || p->gateway == (subnet | ~mask))) {
        api_ferr_add(fe, API_FERR_INVALID, api_path(q, sizeof(q), path, "gateway"),
                     "%.15s is the network or broadcast address", p->gateway_s);
    }
    validate_ranges(p, path, subnet, mask, have_subnet, fe);
    api_path(base, sizeof(base), path, "nameservers");
    if (p->n_nameservers_total > API_IPV4_POOL_MAX_NAMESERVERS)
        api_ferr_add(fe, API_FERR_TOO_MANY, base, "%zu: must have at most %d items",
                     p->n_nameservers_total, API_IPV4_POOL_MAX_NAMESERVERS);
    for (size_t i = 0; i < p->n_nameservers; i++) {
        unsigned char buf[16];
        if (inet_pton(AF_INET, p->nameservers[i], buf) != 1 &&
            inet_pton(AF_INET6, p->nameservers[i], buf) != 1)
            api_ferr_add(fe, API_FERR_INVALID, api_path_index(q, sizeof(q), base, i),
                         "must be an IPv4 or IPv6 address");
    }
    api_path(base, sizeof(base), path, "searchDomains");
    if (p->n_search_domains_total > API_IPV4_POOL_MAX_SEARCH)
        api_ferr_add(fe, API_FERR_TOO_MANY, base, "%zu: must have at most %d items",
                     p->n_search_domains_total, API_IPV4_POOL_MAX_SEARCH);
    for (size_t i = 0; i < p->n_search_domains; i++)
        if (!dns_name_ok(p->search_domains[i]))
            api_ferr_add(fe, API_FERR_INVALID, api_path_index(q, sizeof(q), base, i),
                         "must be a DNS name");
}

vmop_rc api_binding_parse(const cJSON *json, struct api_binding **ret, struct vmop_err *err)
{
    struct api_binding *b;
    struct api_ferrs *fe;
    const cJSON *md, *spec, *ep, *nets, *it, *pool;
    char p[API_FERR_PATH_MAX], pp[API_FERR_PATH_MAX];

    if (!cJSON_IsObject(json))
        return vmop_fail(err, VMOP_E_INVALID, "a NamespaceBinding must be a JSON object");
    b = calloc(1, sizeof(*b));
    if (!b || !(b->obj = cJSON_Duplicate(json, 1))) {
        free(b);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory parsing a NamespaceBinding");
    }
    fe = &b->parse_errs;
    md = api_json_obj(b->obj, "metadata", "", fe);
    spec = api_json_obj(b->obj, "spec", "", fe);
    ep = api_json_obj(spec, "endpointRef", "spec", fe);
    b->name = api_json_str(md, "name", "metadata", fe);
    b->namespace_ = api_json_str(md, "namespace", "metadata", fe);
    b->endpoint = api_json_str(ep, "name", "spec.endpointRef", fe);
    b->datacenter = api_json_str(spec, "datacenter", "spec", fe);
    b->resource_pool = api_json_str(spec, "resourcePool", "spec", fe);
    b->vm_folder = api_json_str(spec, "vmFolder", "spec", fe);
    b->datastore = api_json_str(spec, "datastore", "spec", fe);
    b->default_network = api_json_str(spec, "defaultNetwork", "spec", fe);
    b->storage_classes = api_json_arr(spec, "storageClasses", "spec", fe);
    b->vm_classes = api_json_arr(spec, "vmClasses", "spec", fe);
    parse_libraries(api_json_arr(spec, "contentLibraries", "spec", fe), "spec.contentLibraries",
                    b->libraries, &b->n_libraries, &b->n_libraries_total, fe);
    nets = api_json_arr(spec, "networks", "spec", fe);
    cJSON_ArrayForEach(it, nets)
    {
        if (b->n_networks < API_ADMIN_MAX_NETWORKS) {
            struct api_binding_network *n = &b->networks[b->n_networks];
            api_path_index(p, sizeof(p), "spec.networks", b->n_networks++);
            n->name = api_json_str(it, "name", p, fe);
            n->port_group = api_json_str(it, "portGroup", p, fe);
            pool = api_json_obj(it, "ipv4Pool", p, fe);
            n->has_ipv4_pool = pool != NULL;
            if (pool)
                parse_ipv4_pool(pool, api_path(pp, sizeof(pp), p, "ipv4Pool"), &n->ipv4_pool, fe);
        }
        b->n_networks_total++;
    }
    *ret = b;
    return VMOP_OK;
}

void api_binding_free(struct api_binding *b)
{
    if (!b)
        return;
    cJSON_Delete(b->obj);
    free(b);
}

void api_binding_validate(const struct api_binding *b, struct api_ferrs *fe)
{
    char base[API_FERR_PATH_MAX], p[API_FERR_PATH_MAX];

    api_ferrs_merge(fe, &b->parse_errs);
    if (!b->endpoint || !*b->endpoint)
        api_ferr_add(fe, API_FERR_REQUIRED, "spec.endpointRef.name", "%s", "");
    if (!b->resource_pool || !*b->resource_pool)
        api_ferr_add(fe, API_FERR_REQUIRED, "spec.resourcePool", "%s", "");
    if (!b->vm_folder || !*b->vm_folder)
        api_ferr_add(fe, API_FERR_REQUIRED, "spec.vmFolder", "%s", "");
    validate_libraries(b->libraries, b->n_libraries, b->n_libraries_total, "spec.contentLibraries",
                       fe);
    if (b->n_networks_total > API_ADMIN_MAX_NETWORKS)
        api_ferr_add(fe, API_FERR_TOO_MANY, "spec.networks", "%zu: must have at most %d items",
                     b->n_networks_total, API_ADMIN_MAX_NETWORKS);
    for (size_t i = 0; i < b->n_networks; i++) {
        const struct api_binding_network *n = &b->networks[i];
        api_path_index(base, sizeof(base), "spec.networks", i);
        if (!n->name || !*n->name)
            api_ferr_add(fe, API_FERR_REQUIRED, api_path(p, sizeof(p), base, "name"), "%s", "");
        for (size_t j = 0; j < i && n->name; j++)
            if (b->networks[j].name && strcmp(b->networks[j].name, n->name) == 0)
                api_ferr_add(fe, API_FERR_DUPLICATE, api_path(p, sizeof(p), base, "name"),
                             "\"%.63s\"", n->name);
        if (!n->port_group || !*n->port_group)
            api_ferr_add(fe, API_FERR_REQUIRED, api_path(p, sizeof(p), base, "portGroup"), "%s",
                         "");
        if (n->has_ipv4_pool)
            api_ipv4_pool_validate(&n->ipv4_pool, api_path(p, sizeof(p), base, "ipv4Pool"), fe);
    }
    if (b->default_network && *b->default_network && !api_binding_port_group(b, b->default_network))
        api_ferr_add(fe, API_FERR_INVALID, "spec.defaultNetwork",
                     "\"%.63s\": must name one of spec.networks", b->default_network);
}

const char *api_binding_port_group(const struct api_binding *b, const char *name)
{
    if (!name)
        name = b->default_network;
    if (!name)
        return NULL;
    for (size_t i = 0; i < b->n_networks; i++)
        if (b->networks[i].name && strcmp(b->networks[i].name, name) == 0)
            return b->networks[i].port_group;
    return NULL;
}

const struct api_ipv4_pool *api_binding_ipv4_pool(const struct api_binding *b, const char *name)
{
    if (!name)
        name = b->default_network;
    if (!name)
        return NULL;
    for (size_t i = 0; i < b->n_networks; i++)
        if (b->networks[i].name && strcmp(b->networks[i].name, name) == 0)
            return b->networks[i].has_ipv4_pool ? &b->networks[i].ipv4_pool : NULL;
    return NULL;
}

static int in_list(const cJSON *arr, const char *s)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        if (cJSON_IsString(it) && s && strcmp(it->valuestring, s) == 0)
            return 1;
    }
    return 0;
}

int api_binding_allows_storage_class(const struct api_binding *b, const char *sc)
{
    return in_list(b->storage_classes, sc);
}

int api_binding_offers_class(const struct api_binding *b, const char *cls)
{
    if (!b->vm_classes || cJSON_GetArraySize(b->vm_classes) == 0)
        return 1;
    return in_list(b->vm_classes, cls);
}
