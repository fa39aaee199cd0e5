/* api_service.h: VirtualMachineService model: parse and validate (vm-operator.md section 7).
 * The struct owns a private copy of the JSON; strings are borrowed from it. */
#ifndef VMOP_API_SERVICE_H
#define VMOP_API_SERVICE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "api_ferr.h"
#include "vmop_err.h"

#define API_SVC_MAX_PORTS 64

enum api_svc_type {
    API_SVC_UNSET,
    API_SVC_CLUSTER_IP,
    API_SVC_LOAD_BALANCER,
    API_SVC_EXTERNAL_NAME
};

struct api_svc_port {
    const char *name, *protocol;
    long long port, target_port;
};

struct api_service {
    cJSON *obj; /* owned */
    const char *name, *namespace_;
    enum api_svc_type type;
    const char *type_text; /* as written */
    struct api_svc_port ports[API_SVC_MAX_PORTS];
    size_t n_ports, n_ports_total;
    const cJSON *selector; /* borrowed object or NULL */
    const char *load_balancer_ip, *cluster_ip, *external_name;
    int has_source_ranges;
    struct api_ferrs parse_errs;
};

vmop_rc api_service_parse(const cJSON *json, struct api_service **ret_svc, struct vmop_err *err);
void api_service_free(struct api_service *s);
/* Create (old NULL) or update: type and clusterIp immutable, port fields required and in range
 * (the name only when there is more than one port, as VM Operator and Kubernetes), names unique,
 * loadBalancerSourceRanges only for LoadBalancer, externalName for ExternalName.
 */
void api_service_validate(const struct api_service *s, const struct api_service *old,
                          struct api_ferrs *fe);

#endif
