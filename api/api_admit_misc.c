/* api_admit_misc.c: admission for VirtualMachineClass, VirtualMachineService and the admin kinds
 * (NamespaceBinding, VCenterEndpoint), the dispatcher over kinds and operations, and the denial
 * message (see api_admit.h). The model validators (api_class_validate, api_service_validate,
 * api_binding_validate, api_endpoint_validate) hold the rules they share with the controllers;
 * this file adds what VM Operator's webhooks check beyond them. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "api_admit.h"
#include "api_class.h"
#include "api_service.h"

#define MSG_DNS_LABEL                                                                              \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character"
#define MSG_DNS_SUBDOMAIN                                                                          \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character"
#define MSG_IP            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
#define MSG_SOURCE_RANGES "must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24"
#define MSG_LABEL_VALUE                                                                            \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character"

static int is_alnum_lower(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int dns_label(const char *s, size_t len)
{
    if (len == 0 || len > 63 || !is_alnum_lower(s[0]) || !is_alnum_lower(s[len - 1]))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!is_alnum_lower(s[i]) && s[i] != '-')
            return 0;
    return 1;
}

static int dns_subdomain(const char *s, size_t len)
{
    size_t start = 0;
    if (len == 0 || len > 253)
        return 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '.') {
            if (!dns_label(s + start, i - start))
                return 0;
            start = i + 1;
        }
    }
    return 1;
}

static int is_ip(const char *s)
{
    unsigned char buf[16];
    return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

static int is_cidr(const char *s)
{
    char ip[64];
    const char *slash = strchr(s, '/');
    size_t n = slash ? (size_t)(slash - s) : 0;
    unsigned char buf[16];
    int fam, bits = 0;
    const char *d;

    if (!slash || n == 0 || n >= sizeof(ip) || !slash[1] || strlen(slash + 1) > 3)
        return 0;
    memcpy(ip, s, n);
    ip[n] = '\0';
    fam = inet_pton(AF_INET, ip, buf) == 1 ? 4 : inet_pton(AF_INET6, ip, buf) == 1 ? 6 : 0;
    for (d = slash + 1; *d; d++) {
        if (*d < '0' || *d > '9')
            return 0;
        bits = bits * 10 + (*d - '0');
    }
    return fam && bits <= (fam == 4 ? 32 : 128);
}

/* A label value (or the name part of a key): <= 63, alphanumerics at the ends, -_. inside. */
static int label_value(const char *s)
{
    size_t n = strlen(s);
    if (n == 0)
        return 1;
    if (n > 63)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && ((i == 0 || i == n - 1) || (c != '-' && c != '_' && c != '.')))
            return 0;
    }
    return 1;
}

static int label_key(const char *s)
{
    const char *slash = strchr(s, '/');
    if (!slash)
        return *s && label_value(s);
    return dns_subdomain(s, (size_t)(slash - s)) && slash[1] && label_value(slash + 1);
}

void api_class_admit_validate(const cJSON *old, const cJSON *cls, struct api_ferrs *fe)
{
    struct api_class *c = NULL, *o = NULL;
    struct vmop_err err = {0};

    if (api_class_parse(cls, &c, &err) != VMOP_OK) {
        api_ferr_add(fe, API_FERR_INVALID, "", "must be a JSON object (%.160s)", err.msg);
        return;
    }
    api_class_validate(c, fe);
    if (old && api_class_parse(old, &o, &err) == VMOP_OK && o->controller_name &&
        *o->controller_name && (!c->controller_name || !*c->controller_name))
        api_ferr_add(fe, API_FERR_INVALID, "spec.controllerName",
                     "\"\": may not be cleared once set");
    api_class_free(o);
    api_class_free(c);
}

static void service_ports(const struct api_service *s, struct api_ferrs *fe)
{
    char p[API_FERR_PATH_MAX];

    for (size_t i = 0; i < s->n_ports; i++) {
        const struct api_svc_port *pt = &s->ports[i];
        if (pt->name && *pt->name && !dns_label(pt->name, strlen(pt->name))) {
            snprintf(p, sizeof(p), "spec.ports[%zu].name", i);
            api_ferr_add(fe, API_FERR_INVALID, p, "\"%.63s\": %s", pt->name, MSG_DNS_LABEL);
        }
        for (size_t j = 0; j < i; j++) {
            const struct api_svc_port *q = &s->ports[j];
            if (q->port == pt->port &&
                strcmp(q->protocol ? q->protocol : "", pt->protocol ? pt->protocol : "") == 0) {
                snprintf(p, sizeof(p), "spec.ports[%zu]", i);
                api_ferr_add(fe, API_FERR_DUPLICATE, p, "{\"protocol\":\"%.15s\",\"port\":%lld}",
                             pt->protocol ? pt->protocol : "", pt->port);
                break;
            }
        }
    }
}

static void service_addresses(const struct api_service *s, struct api_ferrs *fe)
{
    const cJSON *ranges, *it;
    const char *ip = s->cluster_ip ? s->cluster_ip : "";

    if (s->type == API_SVC_LOAD_BALANCER && strcmp(ip, "None") == 0)
        api_ferr_add(fe, API_FERR_INVALID, "spec.clusterIP",
                     "\"None\": may not be set to 'None' for LoadBalancer services");
    if (s->type == API_SVC_EXTERNAL_NAME && *ip)
        api_ferr_add(fe, API_FERR_FORBIDDEN, "spec.clusterIP",
                     "may not be set for ExternalName services");
    if (*ip && strcmp(ip, "None") != 0 && !is_ip(ip))
        api_ferr_add(fe, API_FERR_INVALID, "spec.clusterIP", "\"%.63s\": %s", ip, MSG_IP);
    if (s->type == API_SVC_LOAD_BALANCER && s->load_balancer_ip && *s->load_balancer_ip &&
        !is_ip(s->load_balancer_ip))
        api_ferr_add(fe, API_FERR_INVALID, "spec.loadBalancerIP", "\"%.63s\": %s",
                     s->load_balancer_ip, MSG_IP);
    if (s->type == API_SVC_EXTERNAL_NAME && s->external_name && *s->external_name) {
        size_t n = strlen(s->external_name);
        if (s->external_name[n - 1] == '.')
            n--; /* a trailing dot marks it fully qualified */
        if (!dns_subdomain(s->external_name, n))
            api_ferr_add(fe, API_FERR_INVALID, "spec.externalName", "\"%.*s\": %s",
                         (int)(n > 63 ? 63 : n), s->external_name, MSG_DNS_SUBDOMAIN);
    }
    ranges = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s->obj, "spec"),
                                              "loadBalancerSourceRanges");
    cJSON_ArrayForEach(it, ranges)
    {
        if (!cJSON_IsString(it) || !is_cidr(it->valuestring)) {
            api_ferr_add(fe, API_FERR_INVALID, "spec.loadBalancerSourceRanges", "%s",
                         MSG_SOURCE_RANGES);
            break;
        }
    }
}

void api_service_admit_validate(const cJSON *old, const cJSON *svc, struct api_ferrs *fe)
{
    struct api_service *s = NULL, *o = NULL;
    struct vmop_err err = {0};
    const cJSON *it;

    if (api_service_parse(svc, &s, &err) != VMOP_OK) {
        api_ferr_add(fe, API_FERR_INVALID, "", "must be a JSON object (%.160s)", err.msg);
        return;
    }
    if (old && api_service_parse(old, &o, &err) != VMOP_OK)
        o = NULL;
    api_service_validate(s, o, fe);
    if (!old && s->name && !dns_label(s->name, strlen(s->name)))
        api_ferr_add(fe, API_FERR_INVALID, "metadata.name", "\"%.63s\": %s", s->name,
                     MSG_DNS_LABEL);
    service_ports(s, fe);
    service_addresses(s, fe);
    cJSON_ArrayForEach(it, s->selector)
    {
        if (!label_key(it->string))
            api_ferr_add(fe, API_FERR_INVALID, "spec.selector", "\"%.63s\": invalid label key",
                         it->string);
        else if (!cJSON_IsString(it) || !label_value(it->valuestring))
            api_ferr_add(fe, API_FERR_INVALID, "spec.selector", "\"%.63s\": %s",
                         cJSON_IsString(it) ? it->valuestring : "", MSG_LABEL_VALUE);
    }
    api_service_free(o);
    api_service_free(s);
}

void api_binding_admit_validate(const cJSON *old, const cJSON *nb, struct api_ferrs *fe)
{
    struct api_binding *b = NULL;
    struct vmop_err err = {0};

    (void)old; /* every field may change: the controller re-resolves on the next pass */
    if (api_binding_parse(nb, &b, &err) != VMOP_OK) {
        api_ferr_add(fe, API_FERR_INVALID, "", "must be a JSON object (%.160s)", err.msg);
        return;
    }
    api_binding_validate(b, fe);
    api_binding_free(b);
}

void api_endpoint_admit_validate(const cJSON *old, const cJSON *ep, struct api_ferrs *fe)
{
    struct api_endpoint *e = NULL;
    struct vmop_err err = {0};

    (void)old; /* every field may change (a new server or credentials reconnects) */
    if (api_endpoint_parse(ep, &e, &err) != VMOP_OK) {
        api_ferr_add(fe, API_FERR_INVALID, "", "must be a JSON object (%.160s)", err.msg);
        return;
    }
    api_endpoint_validate(e, fe);
    api_endpoint_free(e);
}

enum api_admit_kind api_admit_kind_parse(const char *group, const char *kind)
{
    if (!group || !kind)
        return API_KIND_UNKNOWN;
    if (strcmp(group, "vmoperator.vmware.com") == 0) {
        if (strcmp(kind, "VirtualMachine") == 0)
            return API_KIND_VM;
        if (strcmp(kind, "VirtualMachineClass") == 0)
            return API_KIND_VM_CLASS;
        if (strcmp(kind, "VirtualMachineService") == 0)
            return API_KIND_VM_SERVICE;
    } else if (strcmp(group, "infra.vmop.io") == 0) {
        if (strcmp(kind, "NamespaceBinding") == 0)
            return API_KIND_NS_BINDING;
        if (strcmp(kind, "VCenterEndpoint") == 0)
            return API_KIND_VC_ENDPOINT;
    }
    return API_KIND_UNKNOWN;
}

void api_admit_validate(enum api_admit_kind kind, enum api_admit_op op, const cJSON *old,
                        const cJSON *obj, const struct api_admit_ctx *ctx, struct api_ferrs *fe)
{
    if (op == API_ADMIT_DELETE)
        return;
    if (op == API_ADMIT_CREATE)
        old = NULL;
    else if (!old) {
        api_ferr_add(fe, API_FERR_REQUIRED, "oldObject", "an update needs the old object");
        return;
    }
    if (old && kind != API_KIND_VM &&
        cJSON_IsString(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "deletionTimestamp")))
        return; /* updates of an object under deletion are admitted (as VM Operator) */
    switch (kind) {
    case API_KIND_VM:
        if (old)
            api_vm_validate_update(old, obj, ctx, fe);
        else
            api_vm_validate_create(obj, ctx, fe);
        break;
    case API_KIND_VM_CLASS:
        api_class_admit_validate(old, obj, fe);
        break;
    case API_KIND_VM_SERVICE:
        api_service_admit_validate(old, obj, fe);
        break;
    case API_KIND_NS_BINDING:
        api_binding_admit_validate(old, obj, fe);
        break;
    case API_KIND_VC_ENDPOINT:
        api_endpoint_admit_validate(old, obj, fe);
        break;
    case API_KIND_UNKNOWN:
        break;
    }
}

void api_admit_denial(const struct api_ferrs *fe, struct vbuf *out)
{
    api_ferrs_format(fe, out);
}
