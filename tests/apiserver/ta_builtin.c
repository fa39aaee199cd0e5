/* ta_builtin.c: the built-in resource types kube-testapi serves (core/v1 namespaces, secrets,
 * configmaps, events, services, endpoints, serviceaccounts; coordination.k8s.io/v1 leases;
 * discovery.k8s.io/v1 endpointslices; storage.k8s.io/v1 storageclasses; apiextensions.k8s.io/v1
 * customresourcedefinitions), the namespaces that exist at start, and the small kind-specific rules
 * applied on every write (secret stringData, namespace phase and label, service defaults). */
#include "ta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct builtin {
    const char *group, *version, *plural, *singular, *kind;
    int namespaced, has_status;
    const char *short_names; /* comma separated or NULL */
    const char *categories;
};

static const struct builtin builtins[] = {
    {"", "v1", "namespaces", "namespace", "Namespace", 0, 1, "ns", NULL},
    {"", "v1", "configmaps", "configmap", "ConfigMap", 1, 0, "cm", NULL},
    {"", "v1", "secrets", "secret", "Secret", 1, 0, NULL, NULL},
    {"", "v1", "events", "event", "Event", 1, 0, "ev", NULL},
    {"", "v1", "services", "service", "Service", 1, 1, "svc", "all"},
    {"", "v1", "endpoints", "endpoints", "Endpoints", 1, 0, "ep", NULL},
    {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", 1, 0, "sa", NULL},
    {"coordination.k8s.io", "v1", "leases", "lease", "Lease", 1, 0, NULL, NULL},
    {"discovery.k8s.io", "v1", "endpointslices", "endpointslice", "EndpointSlice", 1, 0, NULL,
     NULL},
    {"storage.k8s.io", "v1", "storageclasses", "storageclass", "StorageClass", 0, 0, "sc", NULL},
    {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
     "CustomResourceDefinition", 0, 1, "crd,crds", "api-extensions"},
};

static cJSON *csv_array(const char *csv)
{
    cJSON *a;
    const char *p = csv;
    if (!csv)
        return NULL;
    a = cJSON_CreateArray();
    while (a && *p) {
        size_t n = strcspn(p, ",");
        char buf[64];
        snprintf(buf, sizeof(buf), "%.*s", (int)n, p);
        cJSON_AddItemToArray(a, cJSON_CreateString(buf));
        p += n;
        if (*p)
            p++;
    }
    return a;
}

static vmop_rc seed_namespace(struct ta_server *s, struct ta_rtype *rt, const char *name,
                              struct vmop_err *err)
{
    cJSON *o = cJSON_CreateObject(), *m, *l;
    char uid[37], ts[32];
    struct ta_obj *obj;
    if (!o)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    cJSON_AddStringToObject(o, "apiVersion", "v1");
    cJSON_AddStringToObject(o, "kind", "Namespace");
    m = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(m, "name", name);
    ta_uuid(uid);
    cJSON_AddStringToObject(m, "uid", uid);
    ta_now_rfc3339(ts);
    cJSON_AddStringToObject(m, "creationTimestamp", ts);
    l = cJSON_AddObjectToObject(m, "labels");
    cJSON_AddStringToObject(l, "kubernetes.io/metadata.name", name);
    cJSON_AddItemToObject(cJSON_AddObjectToObject(o, "spec"), "finalizers",
                          cJSON_CreateStringArray((const char *const[]){"kubernetes"}, 1));
    cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "status"), "phase", "Active");
    obj = ta_obj_new(o, 0);
    if (!obj)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    return ta_store_put(&s->st, rt, obj, TA_EV_ADDED, err);
}

vmop_rc ta_builtin_register(struct ta_server *s, struct vmop_err *err)
{
    struct ta_store *st = &s->st;
    size_t i;
    vmop_rc rc = VMOP_OK;
    pthread_mutex_lock(&st->lock);
    for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
        const struct builtin *b = &builtins[i];
        struct ta_rtype *rt = ta_store_add_type(st, b->group, b->plural);
        char list_kind[128];
        if (!rt || !(rt->versions = calloc(1, sizeof(*rt->versions)))) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory registering built-in types");
            goto out;
        }
        snprintf(list_kind, sizeof(list_kind), "%sList", b->kind);
        rt->n_versions = 1;
        rt->versions[0].name = strdup(b->version);
        rt->versions[0].served = rt->versions[0].storage = 1;
        rt->versions[0].has_status = b->has_status;
        rt->singular = strdup(b->singular);
        rt->kind = strdup(b->kind);
        rt->list_kind = strdup(list_kind);
        rt->namespaced = b->namespaced;
        rt->builtin = 1;
        rt->served = 1;
        rt->short_names = csv_array(b->short_names);
        rt->categories = csv_array(b->categories);
        if (!rt->versions[0].name || !rt->singular || !rt->kind || !rt->list_kind) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory registering built-in types");
            goto out;
        }
    }
    st->reg_gen++;
    {
        struct ta_rtype *ns = ta_store_find_type(st, "", "namespaces");
        static const char *const initial[] = {"default", "kube-system", "kube-public",
                                              "kube-node-lease"};
        for (i = 0; i < sizeof(initial) / sizeof(initial[0]); i++) {
            rc = seed_namespace(s, ns, initial[i], err);
            if (rc)
                goto out;
        }
    }
out:
    pthread_mutex_unlock(&st->lock);
    return rc;
}

static void add_cause(cJSON *causes, const char *reason, const char *field, const char *msg)
{
    cJSON *c = cJSON_CreateObject();
    if (!c)
        return;
    cJSON_AddStringToObject(c, "reason", reason);
    cJSON_AddStringToObject(c, "message", msg);
    cJSON_AddStringToObject(c, "field", field);
    cJSON_AddItemToArray(causes, c);
}

static void normalize_namespace(cJSON *obj, const cJSON *old)
{
    cJSON *m = ta_jobj(obj, "metadata", 1), *l = ta_jobj(m, "labels", 1), *spec, *status;
    const char *name = ta_jstr(m, "name");
    if (name)
        ta_jset_str(l, "kubernetes.io/metadata.name", name);
    spec = ta_jobj(obj, "spec", 1);
    if (!cJSON_GetObjectItemCaseSensitive(spec, "finalizers"))
        cJSON_AddItemToObject(spec, "finalizers",
                              cJSON_CreateStringArray((const char *const[]){"kubernetes"}, 1));
    status = ta_jobj(obj, "status", 1);
    if (old && ta_meta_str(old, "deletionTimestamp"))
        ta_jset_str(status, "phase", "Terminating");
    else if (!ta_jstr(status, "phase"))
        ta_jset_str(status, "phase", "Active");
}

static void normalize_secret(cJSON *obj, cJSON *causes)
{
    cJSON *sd = cJSON_GetObjectItemCaseSensitive(obj, "stringData"), *data, *it;
    const cJSON *d;
    if (!ta_jstr(obj, "type"))
        ta_jset_str(obj, "type", "Opaque");
    if (cJSON_IsObject(sd)) {
        data = ta_jobj(obj, "data", 1);
        cJSON_ArrayForEach(it, sd)
        {
            char *b;
            if (!cJSON_IsString(it))
                continue;
            b = ta_b64((const unsigned char *)it->valuestring, strlen(it->valuestring));
            if (b)
                ta_jset_str(data, it->string, b);
            free(b);
        }
    }
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "stringData");
    d = cJSON_GetObjectItemCaseSensitive(obj, "data");
    cJSON_ArrayForEach(it, d)
    {
        size_t n;
        unsigned char *raw = cJSON_IsString(it) ? ta_unb64(it->valuestring, &n) : NULL;
        if (!raw) {
            char field[300];
            snprintf(field, sizeof(field), "data[%.200s]", it->string);
            add_cause(causes, "FieldValueInvalid", field,
                      "Invalid value: \"<secret contents redacted>\": illegal base64 data");
        }
        free(raw);
    }
}

static void normalize_service(struct ta_server *s, cJSON *obj, const cJSON *old)
{
    cJSON *spec = ta_jobj(obj, "spec", 1), *ports, *p;
    const cJSON *oldspec = old ? cJSON_GetObjectItemCaseSensitive(old, "spec") : NULL;
    const char *type = ta_jstr(spec, "type");
    if (!type)
        ta_jset_str(spec, "type", "ClusterIP");
    if (!ta_jstr(spec, "sessionAffinity"))
        ta_jset_str(spec, "sessionAffinity", "None");
    if (!ta_jstr(spec, "clusterIP")) {
        const char *oip = ta_jstr(oldspec, "clusterIP");
        char ip[32];
        if (oip) {
            snprintf(ip, sizeof(ip), "%s", oip);
        } else {
            unsigned long long n = s->st.rv + 1;
            snprintf(ip, sizeof(ip), "10.96.%llu.%llu", (n >> 8) & 255, (n & 255) ? (n & 255) : 1);
        }
        ta_jset_str(spec, "clusterIP", ip);
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "clusterIPs");
        cJSON_AddItemToObject(spec, "clusterIPs",
                              cJSON_CreateStringArray((const char *const[]){ip}, 1));
    }
    ports = cJSON_GetObjectItemCaseSensitive(spec, "ports");
    cJSON_ArrayForEach(p, ports)
    {
        const cJSON *port = cJSON_GetObjectItemCaseSensitive(p, "port");
        if (!ta_jstr(p, "protocol"))
            ta_jset_str(p, "protocol", "TCP");
        if (!cJSON_GetObjectItemCaseSensitive(p, "targetPort") && cJSON_IsNumber(port))
            ta_jset_num(p, "targetPort", port->valuedouble);
    }
    if (!cJSON_GetObjectItemCaseSensitive(obj, "status"))
        cJSON_AddObjectToObject(cJSON_AddObjectToObject(obj, "status"), "loadBalancer");
}

static void normalize_event(cJSON *obj, cJSON *causes)
{
    const cJSON *io = cJSON_GetObjectItemCaseSensitive(obj, "involvedObject");
    const char *ns = ta_meta_str(obj, "namespace"), *ions = ta_jstr(io, "namespace");
    if (!cJSON_GetObjectItemCaseSensitive(obj, "eventTime") && ions && ns && *ions &&
        strcmp(ions, ns) != 0) {
        char msg[600];
        snprintf(msg, sizeof(msg), "Invalid value: \"%.253s\": does not match event.namespace",
                 ions);
        add_cause(causes, "FieldValueInvalid", "involvedObject.namespace", msg);
    }
}

vmop_rc ta_builtin_normalize(struct ta_server *s, struct ta_rtype *rt, cJSON *obj, const cJSON *old,
                             cJSON *causes, struct vmop_err *err)
{
    if (rt->group[0] == '\0') {
        if (strcmp(rt->plural, "namespaces") == 0)
            normalize_namespace(obj, old);
        else if (strcmp(rt->plural, "secrets") == 0)
            normalize_secret(obj, causes);
        else if (strcmp(rt->plural, "services") == 0)
            normalize_service(s, obj, old);
        else if (strcmp(rt->plural, "events") == 0)
            normalize_event(obj, causes);
    }
    return VMOP_OK;
}
