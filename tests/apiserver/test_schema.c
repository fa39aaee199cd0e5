/* test_schema.c: unit tests of structural-schema validation (messages and field paths as
 * kube-apiserver prints them), pruning with unknown-field reports, defaulting, CRD checks and the
 * Go-style value printing behind the messages. */
#include "schema_int.h"
#include "test_schema_util.h"

#include <stdio.h>

#define VM_SCHEMA                                                                                  \
    "{'type':'object','properties':{'apiVersion':{'type':'string'},'kind':{'type':'string'},"      \
    "'metadata':{'type':'object'},'spec':{'type':'object','required':['className'],'properties':{" \
    "'className':{'type':'string','maxLength':8,'pattern':'^[a-z][a-z0-9-]*$'},"                   \
    "'cpu':{'type':'integer','minimum':1,'maximum':64},"                                           \
    "'ratio':{'type':'number','exclusiveMinimum':true,'minimum':0.5},"                             \
    "'powerState':{'type':'string','enum':['PoweredOn','PoweredOff']},"                            \
    "'id':{'type':'string','format':'uuid'},"                                                      \
    "'when':{'type':'string','format':'date-time'},"                                               \
    "'mem':{'x-kubernetes-int-or-string':true},"                                                   \
    "'tags':{'type':'array','maxItems':2,'items':{'type':'string'},'x-kubernetes-list-type':'set'" \
    "},"                                                                                           \
    "'labels':{'type':'object','additionalProperties':{'type':'string','minLength':2}},"           \
    "'disks':{'type':'array','x-kubernetes-list-type':'map','x-kubernetes-list-map-keys':['name']" \
    ","                                                                                            \
    "'items':{'type':'object','required':['name'],'properties':{'name':{'type':'string'},"         \
    "'size':{'type':'integer','minimum':1}}}},"                                                    \
    "'extra':{'type':'object','x-kubernetes-preserve-unknown-fields':true},"                       \
    "'opt':{'type':'string','nullable':true}}},"                                                   \
    "'status':{'type':'object','properties':{'phase':{'type':'string'}}}}}"

#define OBJ(spec)                                                                                  \
    "{'apiVersion':'example.com/"                                                                  \
    "v1','kind':'VirtualMachine','metadata':{'name':'vm0'},'spec':" spec "}"

START_TEST(valid_object)
{
    ASSERT_VALID(VM_SCHEMA,
                 OBJ("{'className':'small','cpu':2,'ratio':1,'powerState':'PoweredOn','mem':'1Gi',"
                     "'id':'0e3b1e4a-3c4d-4e5f-8a9b-0123456789ab','when':'2025-01-01T10:00:00Z',"
                     "'tags':['a','b'],'labels':{'k':'vv'},'disks':[{'name':'a','size':1}],"
                     "'opt':null}"),
                 NULL);
    ASSERT_VALID(VM_SCHEMA, OBJ("{'className':'x','mem':4}"), NULL);
}
END_TEST

START_TEST(required_and_single_message)
{
    cJSON *causes = NULL;
    char *m = validate_msg(VM_SCHEMA, OBJ("{}"), NULL, &causes);
    ck_assert_str_eq(
        m, "VirtualMachine.example.com \"vm0\" is invalid: spec.className: Required value");
    ck_assert_int_eq(cJSON_GetArraySize(causes), 1);
    ck_assert_str_eq(cJSON_GetObjectItem(causes->child, "reason")->valuestring,
                     "FieldValueRequired");
    ck_assert_str_eq(cJSON_GetObjectItem(causes->child, "message")->valuestring, "Required value");
    ck_assert_str_eq(cJSON_GetObjectItem(causes->child, "field")->valuestring, "spec.className");
    free(m);
    cJSON_Delete(causes);
}
END_TEST

/* One object under VM_SCHEMA and the whole 422 message it must produce. */
struct invalid_case {
    const char *obj;
    const char *want;
};

#define INVALID "VirtualMachine.example.com \"vm0\" is invalid: "

static void assert_invalid_cases(const struct invalid_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ASSERT_INVALID(VM_SCHEMA, c[i].obj, NULL, c[i].want);
}

START_TEST(numbers)
{
    static const struct invalid_case cases[] = {
        {OBJ("{'className':'a','cpu':0}"), INVALID
         "spec.cpu: Invalid value: 0: spec.cpu in body should be greater than or equal to 1"},
        {OBJ("{'className':'a','cpu':65}"), INVALID
         "spec.cpu: Invalid value: 65: spec.cpu in body should be less than or equal to 64"},
        {OBJ("{'className':'a','ratio':0.5}"),
         INVALID "spec.ratio: Invalid value: 0.5: spec.ratio in body should be greater than 0.5"},
        {OBJ("{'className':'a','cpu':1.5}"),
         INVALID "spec.cpu: Invalid value: \"number\": spec.cpu in body must be of type integer: "
                 "\"number\""},
    };
    assert_invalid_cases(cases, sizeof(cases) / sizeof(cases[0]));
}
END_TEST

START_TEST(types_and_strings)
{
    static const struct invalid_case cases[] = {
        {OBJ("{'className':'a','cpu':'two'}"),
         INVALID "spec.cpu: Invalid value: \"string\": spec.cpu in body must be of type integer: "
                 "\"string\""},
        {OBJ("{'className':'a','mem':true}"),
         INVALID "spec.mem: Invalid value: \"boolean\": spec.mem in body must be of type "
                 "integer,string: \"boolean\""},
        {OBJ("{'className':'toolongname'}"),
         INVALID "spec.className: Too long: may not be more than 8 bytes"},
        {OBJ("{'className':'Ab'}"),
         INVALID "spec.className: Invalid value: \"Ab\": spec.className in body should match "
                 "'^[a-z][a-z0-9-]*$'"},
        {OBJ("{'className':'a','powerState':'Off'}"),
         INVALID "spec.powerState: Unsupported value: \"Off\": supported values: \"PoweredOn\", "
                 "\"PoweredOff\""},
        {OBJ("{'className':'a','id':'nope'}"),
         INVALID "spec.id: Invalid value: \"nope\": spec.id in body must be of type uuid: "
                 "\"nope\""},
        {OBJ("{'className':'a','when':'yesterday'}"),
         INVALID "spec.when: Invalid value: \"yesterday\": spec.when in body must be of type "
                 "date-time: \"yesterday\""},
        {OBJ("{'className':'a','labels':{'k':'v'}}"),
         INVALID "spec.labels.k: Invalid value: \"v\": spec.labels.k in body should be at least 2 "
                 "chars long"},
    };
    assert_invalid_cases(cases, sizeof(cases) / sizeof(cases[0]));
}
END_TEST

START_TEST(arrays_and_list_types)
{
    static const struct invalid_case cases[] = {
        {OBJ("{'className':'a','tags':['a','b','c']}"),
         INVALID "spec.tags: Too many: 3: must have at most 2 items"},
        {OBJ("{'className':'a','tags':['a','a']}"), INVALID "spec.tags[1]: Duplicate value: \"a\""},
        {OBJ("{'className':'a','disks':[{'name':'a'},{'name':'a','size':0}]}"),
         INVALID "[spec.disks[1].size: Invalid value: 0: spec.disks[1].size in body should be "
                 "greater than or equal to 1, spec.disks[1]: Duplicate value: "
                 "map[string]interface {}{\"name\":\"a\"}]"},
        {OBJ("{'className':'a','disks':[{'size':2}]}"),
         INVALID "spec.disks[0].name: Required value"},
    };
    assert_invalid_cases(cases, sizeof(cases) / sizeof(cases[0]));
}
END_TEST

START_TEST(several_causes_and_dedup)
{
    cJSON *causes =
        J("[{'reason':'FieldValueRequired','message':'Required value','field':'spec.a'},"
          "{'reason':'FieldValueRequired','message':'Required value','field':'spec.a'},"
          "{'reason':'FieldValueNotSupported','message':'Unsupported value: "
          "\\'x\\'','field':'spec.b'}]");
    char *m = as_invalid_message("ConfigMap", "", "cm", causes);
    ck_assert_str_eq(m, "ConfigMap \"cm\" is invalid: [spec.a: Required value, spec.b: Unsupported "
                        "value: \"x\"]");
    free(m);
    cJSON_Delete(causes);
    causes = cJSON_CreateArray();
    m = as_invalid_message("VirtualMachine", "example.com", "a\"b", causes);
    ck_assert_str_eq(m, "VirtualMachine.example.com \"a\\\"b\" is invalid");
    free(m);
    cJSON_Delete(causes);
}
END_TEST

START_TEST(prune_reports_sorted_paths)
{
    cJSON *s = J(VM_SCHEMA);
    cJSON *o = J("{'apiVersion':'example.com/v1','kind':'VirtualMachine',"
                 "'metadata':{'name':'vm0','bogus':1,'labels':{'a':'b'}},"
                 "'spec':{'className':'a','zeta':1,'foo':{'x':1},'disks':[{'name':'d','bar':2}],"
                 "'extra':{'anything':{'goes':true}},'labels':{'free':'form'}},'top':3}");
    cJSON *unknown = cJSON_CreateArray();
    struct vmop_err err = {0};
    char *out;
    ck_assert_int_eq(as_schema_prune(s, o, unknown, &err), VMOP_OK);
    out = cJSON_PrintUnformatted(unknown);
    ck_assert_str_eq(
        out, "[\"metadata.bogus\",\"spec.disks[0].bar\",\"spec.foo\",\"spec.zeta\",\"top\"]");
    free(out);
    out = cJSON_PrintUnformatted(o);
    ck_assert_str_eq(out,
                     "{\"apiVersion\":\"example.com/v1\",\"kind\":\"VirtualMachine\","
                     "\"metadata\":{\"name\":\"vm0\",\"labels\":{\"a\":\"b\"}},"
                     "\"spec\":{\"className\":\"a\",\"disks\":[{\"name\":\"d\"}],"
                     "\"extra\":{\"anything\":{\"goes\":true}},\"labels\":{\"free\":\"form\"}}}");
    free(out);
    cJSON_Delete(unknown);
    /* unknown may be NULL */
    ck_assert_int_eq(as_schema_prune(s, o, NULL, &err), VMOP_OK);
    cJSON_Delete(s);
    cJSON_Delete(o);
}
END_TEST

START_TEST(defaults_apply_inside_present_parents)
{
    cJSON *s =
        J("{'type':'object','properties':{'spec':{'type':'object','properties':{"
          "'a':{'type':'string','default':'x'},"
          "'b':{'type':'object','properties':{'c':{'type':'integer','default':3}}},"
          "'d':{'type':'object','default':{},'properties':{'e':{'type':'boolean','default':true}}},"
          "'n':{'type':'string'},'nn':{'type':'string','nullable':true},"
          "'z':{'type':'integer','default':7},"
          "'list':{'type':'array','items':{'type':'object','properties':{'k':{'type':'string','"
          "default':'kv'}}}}}}}}");
    cJSON *o = J("{'spec':{'n':null,'nn':null,'z':null,'list':[{},{'k':'set'}]}}");
    struct vmop_err err = {0};
    char *out;
    ck_assert_int_eq(as_schema_default(s, o, &err), VMOP_OK);
    out = cJSON_PrintUnformatted(o);
    ck_assert_str_eq(out,
                     "{\"spec\":{\"nn\":null,\"z\":7,\"list\":[{\"k\":\"kv\"},{\"k\":\"set\"}],"
                     "\"a\":\"x\",\"d\":{\"e\":true}}}");
    free(out);
    cJSON_Delete(o);
    /* No spec: nothing is created. */
    o = J("{'metadata':{'name':'x'}}");
    ck_assert_int_eq(as_schema_default(s, o, &err), VMOP_OK);
    out = cJSON_PrintUnformatted(o);
    ck_assert_str_eq(out, "{\"metadata\":{\"name\":\"x\"}}");
    free(out);
    cJSON_Delete(o);
    cJSON_Delete(s);
}
END_TEST

START_TEST(go_printing)
{
    struct vbuf b;
    double vals[] = {1e6, 0.5, 1.5, 123456, 1e-5, 2.5e21, -3.25};
    const char *want[] = {"1e+06", "0.5", "1.5", "123456", "1e-05", "2.5e+21", "-3.25"};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        vbuf_init(&b, 64);
        as_go_float(&b, vals[i]);
        ck_assert_str_eq(vbuf_str(&b), want[i]);
        vbuf_free(&b);
    }
    char *q = as_go_quote_str("a\"b\\c\n\x01é");
    ck_assert_str_eq(q, "\"a\\\"b\\\\c\\n\\x01é\"");
    free(q);
    cJSON *m = J("{'b':[1,'x',null,true],'a':1.5}");
    q = as_go_value_str(m);
    ck_assert_str_eq(q, "map[string]interface {}{\"a\":1.5, \"b\":[]interface {}{1, \"x\", "
                        "interface {}(nil), true}}");
    free(q);
    cJSON_Delete(m);
}
END_TEST

START_TEST(regex_translation)
{
    struct vmop_err err = {0};
    ck_assert_int_eq(as_regex_match("^\\d{3}-\\w+$", "123-ab_c", &err), 1);
    ck_assert_int_eq(as_regex_match("^\\d{3}$", "12a", &err), 0);
    ck_assert_int_eq(as_regex_match("^[\\w.-]+$", "a.b-c", &err), 1);
    ck_assert_int_eq(as_regex_match("^(?:ab)+?$", "abab", &err), 1);
    ck_assert_int_eq(as_regex_match("(?i)^abc$", "ABC", &err), 1);
    ck_assert_int_eq(as_regex_match("(", "x", &err), -1);
    ck_assert_int_ne(err.rc, VMOP_OK);
}
END_TEST

START_TEST(object_name)
{
    cJSON *causes = cJSON_CreateArray();
    ck_assert_int_eq(as_validate_object_name("vm-1.example", causes), VMOP_OK);
    ck_assert_int_eq(cJSON_GetArraySize(causes), 0);
    ck_assert_int_eq(as_validate_object_name("Bad_Name", causes), VMOP_OK);
    ck_assert_int_eq(cJSON_GetArraySize(causes), 1);
    ck_assert_str_eq(cJSON_GetObjectItem(causes->child, "field")->valuestring, "metadata.name");
    ck_assert_ptr_nonnull(strstr(cJSON_GetObjectItem(causes->child, "message")->valuestring,
                                 "Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"));
    cJSON_Delete(causes);
}
END_TEST

static cJSON *crd_with(const char *schema)
{
    char buf[4096];
    snprintf(
        buf, sizeof(buf),
        "{'apiVersion':'apiextensions.k8s.io/v1','kind':'CustomResourceDefinition',"
        "'metadata':{'name':'virtualmachines.example.com'},'spec':{'group':'example.com',"
        "'scope':'Namespaced','names':{'plural':'virtualmachines','kind':'VirtualMachine'},"
        "'versions':[{'name':'v1','served':true,'storage':true,'schema':{'openAPIV3Schema':%s}}]}}",
        schema);
    return J(buf);
}

static char *crd_fields(const char *schema)
{
    cJSON *crd = crd_with(schema), *causes = cJSON_CreateArray();
    struct vmop_err err = {0};
    char *m = NULL;
    ck_assert_int_eq(as_crd_check(crd, causes, &err), VMOP_OK);
    if (cJSON_GetArraySize(causes))
        m = as_invalid_message("CustomResourceDefinition", "apiextensions.k8s.io",
                               "virtualmachines.example.com", causes);
    cJSON_Delete(crd);
    cJSON_Delete(causes);
    return m;
}

START_TEST(crd_checks)
{
    char *m = crd_fields(VM_SCHEMA);
    ck_assert_msg(m == NULL, "unexpected: %s", m ? m : "");
    m = crd_fields(
        "{'type':'object','properties':{'spec':{'properties':{'a':{'type':'string'}}}}}");
    ck_assert_str_eq(
        m, "CustomResourceDefinition.apiextensions.k8s.io \"virtualmachines.example.com\" "
           "is invalid: spec.versions[0].schema.openAPIV3Schema.properties[spec].type: "
           "Required value: must not be empty for specified object fields");
    free(m);
    m = crd_fields(
        "{'type':'object','properties':{'spec':{'type':'object','x-kubernetes-validations':"
        "[{'rule':'self.a =='}],'properties':{'a':{'type':'string'}}}}}");
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(strstr(m, "spec.versions[0].schema.openAPIV3Schema.properties[spec]."
                                    "x-kubernetes-validations[0].rule: Invalid value: "
                                    "apiextensions.ValidationRule{Rule:\"self.a ==\""));
    ck_assert_ptr_nonnull(strstr(m, "compilation failed: ERROR: <input>:1:"));
    free(m);
    m = crd_fields(
        "{'type':'object','properties':{'spec':{'type':'object','x-kubernetes-validations':"
        "[{'rule':'self.nope == "
        "1'},{'rule':'foo(self.a)'}],'properties':{'a':{'type':'string'}}}}}");
    ck_assert_ptr_nonnull(strstr(m, "undefined field 'nope'"));
    ck_assert_ptr_nonnull(strstr(m, "undeclared reference to 'foo'"));
    free(m);
    m = crd_fields("{'type':'object','properties':{'spec':{'type':'object','properties':{"
                   "'n':{'type':'integer','minimum':1,'default':0},"
                   "'l':{'type':'array'},'u':{'type':'array','uniqueItems':true,'items':{'type':'"
                   "string'}}}}}}");
    ck_assert_ptr_nonnull(strstr(m, "properties[n].default: Invalid value: 0: default in body "
                                    "should be greater than or equal to 1"));
    ck_assert_ptr_nonnull(strstr(m, "properties[l].items: Required value: must be specified"));
    ck_assert_ptr_nonnull(
        strstr(m, "properties[u].uniqueItems: Forbidden: uniqueItems cannot be set to true"));
    free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("schema");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, valid_object);
    tcase_add_test(tc, required_and_single_message);
    tcase_add_test(tc, numbers);
    tcase_add_test(tc, types_and_strings);
    tcase_add_test(tc, arrays_and_list_types);
    tcase_add_test(tc, several_causes_and_dedup);
    tcase_add_test(tc, prune_reports_sorted_paths);
    tcase_add_test(tc, defaults_apply_inside_present_parents);
    tcase_add_test(tc, go_printing);
    tcase_add_test(tc, regex_translation);
    tcase_add_test(tc, object_name);
    tcase_add_test(tc, crd_checks);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
