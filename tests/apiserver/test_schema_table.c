/* test_schema_table.c: unit tests of Table conversion (humanised durations, the JSONPath subset,
 * printer columns and row objects, built-in columns) and of the OpenAPI v3 documents (the PATCH
 * fieldValidation parameter kubectl probes, GVK extensions, schemas for explain). */
#include "openapi.h"
#include "table.h"
#include "test_schema_util.h"

#include <stdio.h>

START_TEST(human_durations)
{
    static const struct {
        long long s;
        const char *want;
    } cases[] = {
        {-5, "<invalid>"}, {-1, "0s"},          {0, "0s"},         {45, "45s"},
        {119, "119s"},     {120, "2m"},         {200, "3m20s"},    {599, "9m59s"},
        {600, "10m"},      {10799, "179m"},     {10800, "3h"},     {12600, "3h30m"},
        {28799, "7h59m"},  {28800, "8h"},       {172799, "47h"},   {172800, "2d"},
        {190800, "2d5h"},  {691199, "7d23h"},   {691200, "8d"},    {63071999, "729d"},
        {63072000, "2y"},  {64000000, "2y10d"}, {252288000, "8y"},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        as_human_duration(cases[i].s, buf, sizeof(buf));
        ck_assert_msg(!strcmp(buf, cases[i].want), "%lld: got %s want %s", cases[i].s, buf,
                      cases[i].want);
    }
}
END_TEST

START_TEST(timestamps)
{
    long long t;
    ck_assert_int_eq(as_parse_timestamp("2025-01-01T00:00:00Z", &t), 0);
    ck_assert_int_eq(t, 1735689600LL);
    ck_assert_int_eq(as_parse_timestamp("2025-01-01T02:00:00.123456+02:00", &t), 0);
    ck_assert_int_eq(t, 1735689600LL);
    ck_assert_int_eq(as_parse_timestamp("yesterday", &t), -1);
    ck_assert_int_eq(as_parse_timestamp("2025-13-01T00:00:00Z", &t), -1);
}
END_TEST

static const char *jp1(const char *path, const cJSON *obj)
{
    const cJSON *m[4];
    size_t n = 0;
    struct vmop_err err = {0};
    static char buf[256];
    ck_assert_int_eq(as_jsonpath_eval(path, obj, m, 4, &n, &err), VMOP_OK);
    if (n == 0)
        return "<none>";
    char *s = cJSON_PrintUnformatted(m[0]);
    snprintf(buf, sizeof(buf), "%s", s);
    free(s);
    return buf;
}

START_TEST(jsonpath_subset)
{
    cJSON *o = J("{'spec':{'cpu':2,'disks':[{'name':'a'},{'name':'b'}],'m':{'x.y':'dot'}},"
                 "'status':{'conditions':[{'type':'Created','status':'True'},"
                 "{'type':'Ready','status':'False','n':3}]}}");
    const cJSON *m[4];
    size_t n = 0;
    struct vmop_err err = {0};
    ck_assert_str_eq(jp1(".spec.cpu", o), "2");
    ck_assert_str_eq(jp1("{.spec.cpu}", o), "2");
    ck_assert_str_eq(jp1(".spec.disks[1].name", o), "\"b\"");
    ck_assert_str_eq(jp1(".spec.disks[-1].name", o), "\"b\"");
    ck_assert_str_eq(jp1(".spec.disks[*].name", o), "\"a\"");
    ck_assert_str_eq(jp1(".spec.m['x.y']", o), "\"dot\"");
    ck_assert_str_eq(jp1(".status.conditions[?(@.type==\"Ready\")].status", o), "\"False\"");
    ck_assert_str_eq(jp1(".status.conditions[?(@.type == 'Created')].status", o), "\"True\"");
    ck_assert_str_eq(jp1(".status.conditions[?(@.n==3)].type", o), "\"Ready\"");
    ck_assert_str_eq(jp1(".status.missing", o), "<none>");
    ck_assert_int_eq(as_jsonpath_eval(".spec.disks[*].name", o, m, 4, &n, &err), VMOP_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(as_jsonpath_eval("spec", o, m, 4, &n, &err), VMOP_E_INVALID);
    ck_assert_int_eq(as_jsonpath_eval(".spec.disks[0:1]", o, m, 4, &n, &err), VMOP_E_INVALID);
    cJSON_Delete(o);
}
END_TEST

START_TEST(table_from_printer_columns)
{
    cJSON *cols = J("[{'name':'Phase','type':'string','jsonPath':'.status.phase'},"
                    "{'name':'CPU','type':'integer','jsonPath':'.spec.cpu','priority':1},"
                    "{'name':'Ready','type':'string','jsonPath':'.status.conditions[?(@.type==\\'"
                    "Ready\\')].status'},"
                    "{'name':'Disks','type':'string','jsonPath':'.spec.disks'},"
                    "{'name':'Age','type':'date','jsonPath':'.metadata.creationTimestamp'}]");
    cJSON *items =
        J("[{'apiVersion':'example.com/v1','kind':'VirtualMachine','metadata':{'name':'vm1',"
          "'namespace':'default','creationTimestamp':'2025-01-01T00:00:00Z','labels':{'a':'b'}},"
          "'spec':{'cpu':2.0,'disks':['x']},'status':{'phase':'Running','conditions':[{'type':'"
          "Ready','status':'True'}]}},"
          "{'metadata':{'name':'vm2','creationTimestamp':'bad'},'spec':{'cpu':'many'}}]");
    cJSON *t = NULL;
    struct vmop_err err = {0};
    char *s;
    ck_assert_int_eq(
        as_table_build(cols, items, AS_INCLUDE_METADATA, 1, 1735689600LL + 312, &t, &err), VMOP_OK);
    s = cJSON_PrintUnformatted(cJSON_GetObjectItem(t, "rows"));
    ck_assert_str_eq(
        s, "[{\"cells\":[\"vm1\",\"Running\",2,\"True\",\"[\\\"x\\\"]\",\"5m12s\"],"
           "\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\","
           "\"metadata\":{\"name\":\"vm1\",\"namespace\":\"default\",\"creationTimestamp\":"
           "\"2025-01-01T00:00:00Z\",\"labels\":{\"a\":\"b\"}}}},"
           "{\"cells\":[\"vm2\",null,null,null,null,\"<invalid>\"],\"object\":{\"kind\":"
           "\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":"
           "{\"name\":\"vm2\",\"creationTimestamp\":\"bad\"}}}]");
    free(s);
    cJSON *defs = cJSON_GetObjectItem(t, "columnDefinitions");
    ck_assert_int_eq(cJSON_GetArraySize(defs), 6);
    ck_assert_str_eq(cJSON_GetObjectItem(defs->child, "name")->valuestring, "Name");
    ck_assert_str_eq(cJSON_GetObjectItem(defs->child, "format")->valuestring, "name");
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(defs, 2), "priority")->valueint, 1);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(defs, 1), "description")->valuestring,
                     "Custom resource definition column (in JSONPath format): .status.phase");
    ck_assert_str_eq(cJSON_GetObjectItem(t, "kind")->valuestring, "Table");
    ck_assert_str_eq(cJSON_GetObjectItem(t, "apiVersion")->valuestring, "meta.k8s.io/v1");
    cJSON_Delete(t);

    /* no headers, full object, default Age column */
    ck_assert_int_eq(as_table_build(NULL, items, AS_INCLUDE_OBJECT, 0,
                                    1735689600LL + 3 * 86400 + 5 * 3600, &t, &err),
                     VMOP_OK);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(t, "columnDefinitions")));
    cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), 0);
    s = cJSON_PrintUnformatted(cJSON_GetObjectItem(row, "cells"));
    ck_assert_str_eq(s, "[\"vm1\",\"3d5h\"]");
    free(s);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(row, "object"), "kind")->valuestring,
                     "VirtualMachine");
    cJSON_Delete(t);

    ck_assert_int_eq(as_table_build(cols, items, AS_INCLUDE_NONE, 1, 0, &t, &err), VMOP_OK);
    ck_assert_ptr_null(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), 0), "object"));
    cJSON_Delete(t);
    cJSON_Delete(cols);
    cJSON_Delete(items);
}
END_TEST

START_TEST(builtin_columns)
{
    cJSON *cols = NULL, *t = NULL;
    struct vmop_err err = {0};
    char *s;
    cJSON *cm = J("[{'metadata':{'name':'cm','creationTimestamp':'2025-01-01T00:00:00Z'},'data':{'"
                  "a':'1','b':'2'},'binaryData':{'c':'AA=='}}]");
    ck_assert_int_eq(as_table_builtin_columns("", "configmaps", &cols, &err), VMOP_OK);
    ck_assert_int_eq(as_table_build(cols, cm, AS_INCLUDE_NONE, 1, 1735689600LL + 45, &t, &err),
                     VMOP_OK);
    s = cJSON_PrintUnformatted(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), 0), "cells"));
    ck_assert_str_eq(s, "[\"cm\",3,\"45s\"]");
    free(s);
    cJSON_Delete(t);
    cJSON_Delete(cols);
    cJSON_Delete(cm);

    cJSON *ev = J("[{'metadata':{'name':'vm1.abc','creationTimestamp':'2025-01-01T00:00:00Z'},"
                  "'involvedObject':{'kind':'VirtualMachine','name':'vm1'},'reason':'Created','"
                  "type':'Normal',"
                  "'message':'made it','lastTimestamp':'2025-01-01T00:00:00Z','count':2,"
                  "'source':{'component':'vm-operator'}}]");
    ck_assert_int_eq(as_table_builtin_columns("", "events", &cols, &err), VMOP_OK);
    ck_assert_int_eq(as_table_build(cols, ev, AS_INCLUDE_NONE, 1, 1735689600LL + 600, &t, &err),
                     VMOP_OK);
    s = cJSON_PrintUnformatted(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), 0), "cells"));
    ck_assert_str_eq(s,
                     "[\"10m\",\"Normal\",\"Created\",\"virtualmachine/vm1\",null,\"vm-operator\","
                     "\"made it\",\"<unknown>\",2,\"vm1.abc\"]");
    free(s);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "columnDefinitions")->child, "name")
                         ->valuestring,
                     "Last Seen");
    cJSON_Delete(t);
    cJSON_Delete(cols);
    cJSON_Delete(ev);

    ck_assert_int_eq(as_table_builtin_columns("nope.io", "things", &cols, &err), VMOP_OK);
    ck_assert_int_eq(cJSON_GetArraySize(cols), 1);
    ck_assert_str_eq(cJSON_GetObjectItem(cols->child, "name")->valuestring, "Age");
    cJSON_Delete(cols);
}
END_TEST

static const cJSON *op_param(const cJSON *op, const char *name)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(op, "parameters"))
    {
        if (!strcmp(cJSON_GetObjectItem(p, "name")->valuestring, name))
            return p;
    }
    return NULL;
}

START_TEST(openapi_documents)
{
    cJSON *res = J(
        "[{'group':'example.com','version':'v1','kind':'VirtualMachine','listKind':'"
        "VirtualMachineList',"
        "'plural':'virtualmachines','singular':'virtualmachine','namespaced':true,'builtin':false,"
        "'subresources':{'status':{}},'schema':{'type':'object','description':'A VM.',"
        "'properties':{'metadata':{'type':'object'},'spec':{'type':'object','description':'Desired "
        "state.',"
        "'properties':{'cpu':{'type':'integer','description':'Virtual CPUs.'}}}}}}]");
    cJSON *doc = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(as_openapi_gv_doc("example.com", "v1", res, &doc, &err), VMOP_OK);
    const cJSON *paths = cJSON_GetObjectItem(doc, "paths");
    const cJSON *item = cJSON_GetObjectItem(
        paths, "/apis/example.com/v1/namespaces/{namespace}/virtualmachines/{name}");
    ck_assert_ptr_nonnull(item);
    ck_assert_ptr_nonnull(
        cJSON_GetObjectItem(paths, "/apis/example.com/v1/namespaces/{namespace}/virtualmachines"));
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(
        paths, "/apis/example.com/v1/namespaces/{namespace}/virtualmachines/{name}/status"));
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(paths, "/apis/example.com/v1/virtualmachines"));
    const cJSON *patch = cJSON_GetObjectItem(item, "patch");
    const cJSON *fv = op_param(patch, "fieldValidation");
    ck_assert_ptr_nonnull(fv);
    ck_assert_str_eq(cJSON_GetObjectItem(fv, "in")->valuestring, "query");
    const cJSON *gvk = cJSON_GetObjectItem(patch, "x-kubernetes-group-version-kind");
    ck_assert(cJSON_IsObject(gvk));
    ck_assert_str_eq(cJSON_GetObjectItem(gvk, "kind")->valuestring, "VirtualMachine");
    ck_assert_str_eq(cJSON_GetObjectItem(gvk, "group")->valuestring, "example.com");
    /* CRs take no strategic merge patch */
    ck_assert_ptr_null(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(patch, "requestBody"), "content"),
        "application/strategic-merge-patch+json"));
    const cJSON *schemas = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "components"), "schemas");
    const cJSON *vm = cJSON_GetObjectItem(schemas, "com.example.v1.VirtualMachine");
    ck_assert_ptr_nonnull(vm);
    ck_assert(cJSON_IsArray(cJSON_GetObjectItem(vm, "x-kubernetes-group-version-kind")));
    ck_assert_str_eq(cJSON_GetObjectItem(vm, "description")->valuestring, "A VM.");
    const cJSON *meta = cJSON_GetObjectItem(cJSON_GetObjectItem(vm, "properties"), "metadata");
    ck_assert_str_eq(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(meta, "allOf"), 0), "$ref")
            ->valuestring,
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
    ck_assert_ptr_nonnull(
        cJSON_GetObjectItem(schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(schemas, "com.example.v1.VirtualMachineList"));
    cJSON_Delete(doc);
    cJSON_Delete(res);

    /* core group, built-ins, cluster-scoped namespaces */
    res = J("[{'group':'','version':'v1','kind':'Namespace','plural':'namespaces','namespaced':"
            "false,'builtin':true,'subresources':{'status':{}}},"
            "{'group':'','version':'v1','kind':'ConfigMap','plural':'configmaps','namespaced':true,"
            "'builtin':true},"
            "{'group':'','version':'v1','kind':'Secret','plural':'secrets','namespaced':true,'"
            "builtin':true},"
            "{'group':'','version':'v1','kind':'Event','plural':'events','namespaced':true,'"
            "builtin':true},"
            "{'group':'','version':'v1','kind':'Service','plural':'services','namespaced':true,'"
            "builtin':true},"
            "{'group':'','version':'v1','kind':'Endpoints','plural':'endpoints','namespaced':true,'"
            "builtin':true},"
            "{'group':'','version':'v1','kind':'ServiceAccount','plural':'serviceaccounts','"
            "namespaced':true,'builtin':true},"
            "{'group':'','version':'v1','kind':'Mystery','plural':'mysteries','namespaced':true,'"
            "builtin':true}]");
    ck_assert_int_eq(as_openapi_gv_doc("", "v1", res, &doc, &err), VMOP_OK);
    paths = cJSON_GetObjectItem(doc, "paths");
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(paths, "/api/v1/namespaces/{name}"));
    ck_assert_ptr_nonnull(
        cJSON_GetObjectItem(paths, "/api/v1/namespaces/{namespace}/configmaps/{name}"));
    patch = cJSON_GetObjectItem(cJSON_GetObjectItem(paths, "/api/v1/namespaces/{name}"), "patch");
    ck_assert_ptr_nonnull(op_param(patch, "fieldValidation"));
    ck_assert_str_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(patch, "x-kubernetes-group-version-kind"), "group")
            ->valuestring,
        "");
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(patch, "requestBody"), "content"),
        "application/strategic-merge-patch+json"));
    schemas = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "components"), "schemas");
    const cJSON *cm = cJSON_GetObjectItem(schemas, "io.k8s.api.core.v1.ConfigMap");
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(cJSON_GetObjectItem(cm, "properties"), "data"));
    ck_assert(as_openapi_builtin_schema("", "Mystery") == NULL);
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(schemas, "io.k8s.api.core.v1.Mystery"));
    cJSON_Delete(doc);
    cJSON_Delete(res);

    /* every compact built-in schema parses */
    static const char *const gk[][2] = {{"", "Namespace"},
                                        {"", "ConfigMap"},
                                        {"", "Secret"},
                                        {"", "ServiceAccount"},
                                        {"", "Event"},
                                        {"", "Service"},
                                        {"", "Endpoints"},
                                        {"discovery.k8s.io", "EndpointSlice"},
                                        {"coordination.k8s.io", "Lease"},
                                        {"storage.k8s.io", "StorageClass"},
                                        {"apiextensions.k8s.io", "CustomResourceDefinition"}};
    for (size_t i = 0; i < sizeof(gk) / sizeof(gk[0]); i++) {
        cJSON *s = as_openapi_builtin_schema(gk[i][0], gk[i][1]);
        ck_assert_msg(s != NULL, "%s/%s", gk[i][0], gk[i][1]);
        cJSON_Delete(s);
    }
    cJSON *metas = cJSON_CreateObject();
    ck_assert_int_eq(as_openapi_add_meta_components(metas), 0);
    ck_assert_int_ge(cJSON_GetArraySize(metas), 6);
    cJSON_Delete(metas);
    char name[128];
    as_openapi_schema_name("vmoperator.vmware.com", "v1alpha3", "VirtualMachine", 0, name,
                           sizeof(name));
    ck_assert_str_eq(name, "com.vmware.vmoperator.v1alpha3.VirtualMachine");
    as_openapi_schema_name("coordination.k8s.io", "v1", "Lease", 1, name, sizeof(name));
    ck_assert_str_eq(name, "io.k8s.api.coordination.v1.Lease");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("table+openapi");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, human_durations);
    tcase_add_test(tc, timestamps);
    tcase_add_test(tc, jsonpath_subset);
    tcase_add_test(tc, table_from_printer_columns);
    tcase_add_test(tc, builtin_columns);
    tcase_add_test(tc, openapi_documents);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
