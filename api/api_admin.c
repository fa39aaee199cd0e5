/* api_admin.c: VCenterEndpoint and NamespaceBinding (see api_admin.h). */
#include "api_admin.h"

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

vmop_rc api_binding_parse(const cJSON *json, struct api_binding **ret, struct vmop_err *err)
{
    struct api_binding *b;
    struct api_ferrs *fe;
    const cJSON *md, *spec, *ep, *nets, *it;
    char p[API_FERR_PATH_MAX];

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
            n->has_ipv4_pool = api_json_obj(it, "ipv4Pool", p, fe) != NULL;
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
