/* api_service.c: VirtualMachineService parse/validate (see api_service.h). */
#include "api_service.h"

#include <stdlib.h>
#include <string.h>

#include "api_json.h"

static enum api_svc_type type_parse(const char *s)
{
    if (!s)
        return API_SVC_UNSET;
    if (strcmp(s, "ClusterIP") == 0)
        return API_SVC_CLUSTER_IP;
    if (strcmp(s, "LoadBalancer") == 0)
        return API_SVC_LOAD_BALANCER;
    if (strcmp(s, "ExternalName") == 0)
        return API_SVC_EXTERNAL_NAME;
    return API_SVC_UNSET;
}

vmop_rc api_service_parse(const cJSON *json, struct api_service **ret_svc, struct vmop_err *err)
{
    struct api_service *s;
    struct api_ferrs *fe;
    const cJSON *md, *spec, *ports, *it;
    char p[API_FERR_PATH_MAX];

    if (!cJSON_IsObject(json))
        return vmop_fail(err, VMOP_E_INVALID, "a VirtualMachineService must be a JSON object");
    s = calloc(1, sizeof(*s));
    if (!s || !(s->obj = cJSON_Duplicate(json, 1))) {
        free(s);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory parsing a VirtualMachineService");
    }
    fe = &s->parse_errs;
    md = api_json_obj(s->obj, "metadata", "", fe);
    spec = api_json_obj(s->obj, "spec", "", fe);
    s->name = api_json_str(md, "name", "metadata", fe);
    s->namespace_ = api_json_str(md, "namespace", "metadata", fe);
    s->type_text = api_json_str(spec, "type", "spec", fe);
    s->type = type_parse(s->type_text);
    s->selector = api_json_obj(spec, "selector", "spec", fe);
    s->load_balancer_ip = api_json_str(spec, "loadBalancerIP", "spec", fe);
    s->cluster_ip = api_json_str(spec, "clusterIp", "spec", fe);
    s->external_name = api_json_str(spec, "externalName", "spec", fe);
    s->has_source_ranges = api_json_arr(spec, "loadBalancerSourceRanges", "spec", fe) != NULL;
    ports = api_json_arr(spec, "ports", "spec", fe);
    cJSON_ArrayForEach(it, ports)
    {
        if (s->n_ports < API_SVC_MAX_PORTS) {
            struct api_svc_port *pt = &s->ports[s->n_ports];
            api_path_index(p, sizeof(p), "spec.ports", s->n_ports++);
            pt->name = api_json_str(it, "name", p, fe);
            pt->protocol = api_json_str(it, "protocol", p, fe);
            api_json_int(it, "port", p, fe, &pt->port);
            api_json_int(it, "targetPort", p, fe, &pt->target_port);
        }
        s->n_ports_total++;
    }
    *ret_svc = s;
    return VMOP_OK;
}

void api_service_free(struct api_service *s)
{
    if (!s)
        return;
    cJSON_Delete(s->obj);
    free(s);
}

void api_service_validate(const struct api_service *s, const struct api_service *old,
                          struct api_ferrs *fe)
{
    char b[API_FERR_PATH_MAX], p[API_FERR_PATH_MAX];

    api_ferrs_merge(fe, &s->parse_errs);
    if (!s->type_text)
        api_ferr_add(fe, API_FERR_REQUIRED, "spec.type", "%s", "");
    else if (s->type == API_SVC_UNSET)
        api_ferr_add(fe, API_FERR_NOT_SUPPORTED, "spec.type",
                     "\"%.63s\": supported values: \"ClusterIP\", \"ExternalName\", "
                     "\"LoadBalancer\"",
                     s->type_text);
    if (s->type == API_SVC_EXTERNAL_NAME && (!s->external_name || !*s->external_name))
        api_ferr_add(fe, API_FERR_REQUIRED, "spec.externalName", "%s", "");
    if (s->type != API_SVC_EXTERNAL_NAME && s->type != API_SVC_UNSET && s->n_ports_total == 0)
        api_ferr_add(fe, API_FERR_REQUIRED, "spec.ports", "%s", "");
    if (s->has_source_ranges && s->type != API_SVC_LOAD_BALANCER)
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.loadBalancerSourceRanges",
                     "only valid for LoadBalancer services");
    if (s->n_ports_total > API_SVC_MAX_PORTS)
        api_ferr_add(fe, API_FERR_TOO_MANY, "spec.ports", "%zu: must have at most %d items",
                     s->n_ports_total, API_SVC_MAX_PORTS);
    for (size_t i = 0; i < s->n_ports; i++) {
        const struct api_svc_port *pt = &s->ports[i];
        api_path_index(b, sizeof(b), "spec.ports", i);
        if ((!pt->name || !*pt->name) && s->n_ports_total > 1) /* as Kubernetes' Service */
            api_ferr_add(fe, API_FERR_REQUIRED, api_path(p, sizeof(p), b, "name"), "%s", "");
        for (size_t j = 0; j < i && pt->name; j++)
            if (s->ports[j].name && strcmp(s->ports[j].name, pt->name) == 0)
                api_ferr_add(fe, API_FERR_DUPLICATE, api_path(p, sizeof(p), b, "name"), "\"%.63s\"",
                             pt->name);
        if (!pt->protocol)
            api_ferr_add(fe, API_FERR_REQUIRED, api_path(p, sizeof(p), b, "protocol"), "%s", "");
        else if (strcmp(pt->protocol, "TCP") && strcmp(pt->protocol, "UDP") &&
                 strcmp(pt->protocol, "SCTP"))
            api_ferr_add(fe, API_FERR_NOT_SUPPORTED, api_path(p, sizeof(p), b, "protocol"),
                         "\"%.15s\": supported values: \"SCTP\", \"TCP\", \"UDP\"", pt->protocol);
        if (pt->port < 1 || pt->port > 65535)
            api_ferr_add(fe, API_FERR_INVALID, api_path(p, sizeof(p), b, "port"),
                         "%lld: must be between 1 and 65535", pt->port);
        if (pt->target_port < 1 || pt->target_port > 65535)
            api_ferr_add(fe, API_FERR_INVALID, api_path(p, sizeof(p), b, "targetPort"),
                         "%lld: must be between 1 and 65535", pt->target_port);
    }
    if (old) {
        if (old->type_text && (!s->type_text || strcmp(old->type_text, s->type_text) != 0))
            api_ferr_add(fe, API_FERR_INVALID, "spec.type", "field is immutable");
        if (old->cluster_ip && *old->cluster_ip &&
            (!s->cluster_ip || strcmp(old->cluster_ip, s->cluster_ip) != 0))
            api_ferr_add(fe, API_FERR_INVALID, "spec.clusterIp", "field is immutable");
    }
}
