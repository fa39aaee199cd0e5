/* api_class.c: VirtualMachineClass parse/validate/sizing (see api_class.h). */
#include "api_class.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_json.h"

static int qty_member(const cJSON *obj, const char *key, const char *parent, struct api_ferrs *fe,
                      struct api_qty *ret)
{
    char text[API_QTY_MAX_TEXT + 8], path[API_FERR_PATH_MAX];
    struct vmop_err err = {0};
    if (!api_json_qty_text(obj, key, parent, fe, text, sizeof(text)))
        return 0;
    if (api_qty_parse(text, ret, &err) != VMOP_OK) {
        api_ferr_add(fe, API_FERR_INVALID, api_path(path, sizeof(path), parent, key),
                     "\"%.63s\": must be a quantity", text);
        return 0;
    }
    return 1;
}

vmop_rc api_class_parse(const cJSON *json, struct api_class **ret_class, struct vmop_err *err)
{
    struct api_class *c;
    struct api_ferrs *fe;
    const cJSON *md, *spec, *hw, *pol, *res, *req, *lim;

    if (!cJSON_IsObject(json))
        return vmop_fail(err, VMOP_E_INVALID, "a VirtualMachineClass must be a JSON object");
    c = calloc(1, sizeof(*c));
    if (!c || !(c->obj = cJSON_Duplicate(json, 1))) {
        free(c);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory parsing a VirtualMachineClass");
    }
    fe = &c->parse_errs;
    md = api_json_obj(c->obj, "metadata", "", fe);
    spec = api_json_obj(c->obj, "spec", "", fe);
    hw = api_json_obj(spec, "hardware", "spec", fe);
    pol = api_json_obj(spec, "policies", "spec", fe);
    res = api_json_obj(pol, "resources", "spec.policies", fe);
    req = api_json_obj(res, "requests", "spec.policies.resources", fe);
    lim = api_json_obj(res, "limits", "spec.policies.resources", fe);
    c->name = api_json_str(md, "name", "metadata", fe);
    c->namespace_ = api_json_str(md, "namespace", "metadata", fe);
    c->controller_name = api_json_str(spec, "controllerName", "spec", fe);
    c->description = api_json_str(spec, "description", "spec", fe);
    api_json_int(hw, "cpus", "spec.hardware", fe, &c->cpus);
    c->has_memory = qty_member(hw, "memory", "spec.hardware", fe, &c->memory);
    c->has_req_cpu = qty_member(req, "cpu", "spec.policies.resources.requests", fe, &c->req_cpu);
    c->has_req_mem = qty_member(req, "memory", "spec.policies.resources.requests", fe, &c->req_mem);
    c->has_lim_cpu = qty_member(lim, "cpu", "spec.policies.resources.limits", fe, &c->lim_cpu);
    c->has_lim_mem = qty_member(lim, "memory", "spec.policies.resources.limits", fe, &c->lim_mem);
    c->config_spec = api_json_obj(spec, "configSpec", "spec", fe);
    *ret_class = c;
    return VMOP_OK;
}

void api_class_free(struct api_class *c)
{
    if (!c)
        return;
    cJSON_Delete(c->obj);
    free(c);
}

/* A whole number at configSpec[key] (or configSpec[key][sub]), or -1. */
static long long cs_num(const struct api_class *c, const char *key, const char *sub)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->config_spec, key);
    if (sub)
        v = cJSON_GetObjectItemCaseSensitive(v, sub);
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e15 ||
        v->valuedouble != (double)(long long)v->valuedouble)
        return -1;
    return (long long)v->valuedouble;
}

void api_class_validate(const struct api_class *c, struct api_ferrs *fe)
{
    static const char *const neg[] = {
        "spec.policies.resources.requests.cpu", "spec.policies.resources.requests.memory",
        "spec.policies.resources.limits.cpu", "spec.policies.resources.limits.memory"};
    const struct api_qty *q[] = {&c->req_cpu, &c->req_mem, &c->lim_cpu, &c->lim_mem};
    const int has[] = {c->has_req_cpu, c->has_req_mem, c->has_lim_cpu, c->has_lim_mem};

    api_ferrs_merge(fe, &c->parse_errs);
    if (!c->name || !*c->name)
        api_ferr_add(fe, API_FERR_REQUIRED, "metadata.name", "%s", "");
    /* spec.hardware wins; the configSpec's numCPUs / memoryMB stand in when it is absent */
    if ((c->cpus || cs_num(c, "numCPUs", NULL) < 1) && (c->cpus < 1 || c->cpus > 768))
        api_ferr_add(fe, c->cpus ? API_FERR_INVALID : API_FERR_REQUIRED, "spec.hardware.cpus",
                     "%lld: must be between 1 and 768", c->cpus);
    if (!c->has_memory && cs_num(c, "memoryMB", NULL) < 1)
        api_ferr_add(fe, API_FERR_REQUIRED, "spec.hardware.memory", "%s", "");
    else if (c->has_memory && api_qty_sign(&c->memory) <= 0)
        api_ferr_add(fe, API_FERR_INVALID, "spec.hardware.memory", "must be greater than zero");
    for (int i = 0; i < 4; i++)
        if (has[i] && api_qty_sign(q[i]) < 0)
            api_ferr_add(fe, API_FERR_INVALID, neg[i], "must not be negative");
    if (c->has_req_cpu && c->has_lim_cpu && api_qty_cmp(&c->req_cpu, &c->lim_cpu) > 0)
        api_ferr_add(fe, API_FERR_INVALID, "spec.policies.resources.requests.cpu",
                     "must be less than or equal to the cpu limit");
    if (c->has_req_mem && c->has_lim_mem && api_qty_cmp(&c->req_mem, &c->lim_mem) > 0)
        api_ferr_add(fe, API_FERR_INVALID, "spec.policies.resources.requests.memory",
                     "must be less than or equal to the memory limit");
}

/* ceil(milli * mhz / 1000) */
static vmop_rc cpu_mhz(const struct api_qty *q, int64_t min_host_mhz, int64_t *ret,
                       struct vmop_err *err)
{
    int64_t milli;
    vmop_rc rc = api_qty_to_milli(q, &milli, err);
    if (rc)
        return rc;
    if (milli < 0 || milli > INT64_MAX / (min_host_mhz ? min_host_mhz : 1))
        return vmop_fail(err, VMOP_E_INVALID, "CPU quantity out of range");
    *ret = (milli * min_host_mhz + 999) / 1000;
    return VMOP_OK;
}

vmop_rc api_class_sizing(const struct api_class *c, int64_t min_host_mhz,
                         struct api_class_sizing *ret, struct vmop_err *err)
{
    struct api_class_sizing s = {0, 0, 0, -1, 0, -1};
    vmop_rc rc;

    if (min_host_mhz <= 0)
        return vmop_fail(err, VMOP_E_INVALID, "minimum host CPU speed unknown");
    s.num_cpus = c->cpus >= 1 ? c->cpus : cs_num(c, "numCPUs", NULL);
    if (s.num_cpus < 1 || s.num_cpus > 768 || (!c->has_memory && cs_num(c, "memoryMB", NULL) < 1))
        return vmop_fail(err, VMOP_E_INVALID, "class '%s' has no cpus or memory",
                         c->name ? c->name : "");
    if (c->has_memory && (rc = api_qty_to_mib_ceil(&c->memory, &s.memory_mb, err)))
        return rc;
    if (!c->has_memory)
        s.memory_mb = cs_num(c, "memoryMB", NULL);
    /* the configSpec's allocations where the policies say nothing (MHz and MB, as vSphere) */
    if (cs_num(c, "cpuAllocation", "reservation") >= 0)
        s.cpu_reservation_mhz = cs_num(c, "cpuAllocation", "reservation");
    if (cs_num(c, "cpuAllocation", "limit") >= 0)
        s.cpu_limit_mhz = cs_num(c, "cpuAllocation", "limit");
    if (cs_num(c, "memoryAllocation", "reservation") >= 0)
        s.mem_reservation_mb = cs_num(c, "memoryAllocation", "reservation");
    if (cs_num(c, "memoryAllocation", "limit") >= 0)
        s.mem_limit_mb = cs_num(c, "memoryAllocation", "limit");
    if (c->has_req_cpu && (rc = cpu_mhz(&c->req_cpu, min_host_mhz, &s.cpu_reservation_mhz, err)))
        return rc;
    if (c->has_lim_cpu && (rc = cpu_mhz(&c->lim_cpu, min_host_mhz, &s.cpu_limit_mhz, err)))
        return rc;
    if (c->has_req_mem && (rc = api_qty_to_mib_ceil(&c->req_mem, &s.mem_reservation_mb, err)))
        return rc;
    if (c->has_lim_mem && (rc = api_qty_to_mib_ceil(&c->lim_mem, &s.mem_limit_mb, err)))
        return rc;
    *ret = s;
    return VMOP_OK;
}

void api_class_resized_value(const cJSON *cls, const char *name, char *val, size_t size)
{
    const cJSON *md = api_jget(cls, "metadata"), *gen = api_jget(md, "generation");
    const char *uid = api_jstr(md, "uid");
    snprintf(val, size, "{\"name\":\"%s\",\"uid\":\"%s\",\"generation\":%lld}", name ? name : "",
             uid ? uid : "", cJSON_IsNumber(gen) ? (long long)gen->valuedouble : 0LL);
}
