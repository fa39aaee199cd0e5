/* test_schema_cel.c: unit tests of the CEL subset: the language (operators, macros, functions,
 * quantities, errors and limits), compile errors, and x-kubernetes-validations inside schema
 * validation (messages, reason, fieldPath, messageExpression, transition rules with oldSelf). */
#include "cel.h"
#include "test_schema_util.h"

#include <stdio.h>

/* Evaluates rule with self = JSON (typed by schema, may be NULL): 1 true, 0 false, -1 error
 * (message in errbuf). */
static int eval(const char *rule, const char *self, const char *schema, char *errbuf, size_t n)
{
    struct cel_prog *p = NULL;
    struct vmop_err err = {0};
    cJSON *s = self ? J(self) : NULL, *sch = schema ? J(schema) : NULL;
    struct cel_env env = {.self = s, .schema = sch};
    int ok = -1;
    ck_assert_msg(cel_compile(rule, &p, &err) == VMOP_OK, "compile %s: %s", rule, err.msg);
    if (cel_eval_bool(p, &env, &ok, &err) != VMOP_OK) {
        ok = -1;
        if (errbuf)
            snprintf(errbuf, n, "%s", err.msg);
    }
    cel_prog_free(p);
    cJSON_Delete(s);
    cJSON_Delete(sch);
    return ok;
}

#define TRUE(rule, self)  ck_assert_msg(eval(rule, self, NULL, NULL, 0) == 1, "not true: %s", rule)
#define FALSE(rule, self) ck_assert_msg(eval(rule, self, NULL, NULL, 0) == 0, "not false: %s", rule)

START_TEST(language)
{
    const char *o = "{'a':1,'b':'xy','l':[1,2,3],'m':{'k':'v'},'t':true,'n':null,'d':1.5,"
                    "'items':[{'type':'Ready','status':'True'},{'type':'X','status':'False'}]}";
    TRUE("self.a == 1 && self.b == 'xy' && self.t", o);
    TRUE("self.a != 2 || false", o);
    TRUE("!(self.a > 1) && self.a >= 1 && self.a <= 1 && self.a < 2", o);
    TRUE("has(self.a) && !has(self.zz)", o);
    TRUE("self.a == 1 ? self.b.size() == 2 : false", o);
    TRUE("size(self.l) == 3 && self.l[0] == 1 && 2 in self.l && !(5 in self.l)", o);
    TRUE("'k' in self.m && self.m.k == 'v' && self.m['k'] == 'v'", o);
    TRUE("self.l.all(x, x > 0) && self.l.exists(x, x == 2) && self.l.exists_one(x, x == 3)", o);
    TRUE("self.l.map(x, x * 2) == [2, 4, 6] && self.l.filter(x, x > 1) == [2, 3]", o);
    TRUE("self.items.exists(c, c.type == 'Ready' && c.status == 'True')", o);
    TRUE("self.b.startsWith('x') && self.b.endsWith('y') && self.b.contains('y')", o);
    TRUE("self.b.matches('^[a-z]+$') && !self.b.matches('^\\\\d+$')", o);
    TRUE("int('42') == 42 && string(7) == '7' && double(1) == 1.0 && self.d == 1.5", o);
    TRUE("self.n == null && [1, 'a'] == [1, 'a'] && {'x': 1}.x == 1", o);
    TRUE("1 == 1.0 && 2u > 1 && 7 / 2 == 3 && 7 % 2 == 1 && -3 < 0 && 'a' + 'b' == 'ab'", o);
    TRUE("'héllo'.size() == 5 && 'a,b'.split(',') == ['a', 'b'] && ['a','b'].join('-') == 'a-b'",
         o);
    TRUE("'ABC'.lowerAscii() == 'abc' && '  x '.trim() == 'x' && 'abc'.substring(1) == 'bc'", o);
    TRUE("[3, 1, 2].max() == 3 && [1, 2].isSorted() && [1, 2, 3].sum() == 6", o);
    TRUE("r'\\d' == '\\\\d' && \"dq\" == 'dq' && '''tri''' == 'tri'", o);
    FALSE("self.l.all(x, x > 1)", o);
    FALSE("self.a == 'a'", o); /* heterogeneous equality: different types are unequal */
}
END_TEST

START_TEST(quantities)
{
    const char *o =
        "{'req':{'cpu':'500m','memory':'1Gi'},'lim':{'cpu':'1','memory':'1024Mi'},'n':2}";
    TRUE("quantity(self.req.cpu).isLessThan(quantity(self.lim.cpu))", o);
    TRUE("quantity(self.req.memory).compareTo(quantity(self.lim.memory)) == 0", o);
    TRUE("quantity(self.req.cpu) <= quantity(self.lim.cpu)", o); /* extension */
    TRUE("quantity('1.5Gi') > quantity('1500M') && quantity('2k').asInteger() == 2000", o);
    TRUE("quantity('1').add(quantity('500m')) == quantity('1500m') && quantity(self.n) == "
         "quantity('2')",
         o);
    TRUE("isQuantity('10Ki') && !isQuantity('ten')", o);
    struct cel_quantity a, b;
    ck_assert_int_eq(cel_quantity_parse("100Mi", &a), 0);
    ck_assert_int_eq(cel_quantity_parse("104857600", &b), 0);
    ck_assert_int_eq(cel_quantity_cmp(&a, &b), 0);
    ck_assert_int_eq(cel_quantity_parse("1e3", &a), 0);
    ck_assert_int_eq(cel_quantity_parse("999", &b), 0);
    ck_assert_int_eq(cel_quantity_cmp(&a, &b), 1);
    ck_assert_int_eq(cel_quantity_parse("1.2.3", &a), -1);
    ck_assert_int_eq(cel_quantity_parse("5Xi", &a), -1);
}
END_TEST

START_TEST(runtime_errors_and_limits)
{
    char e[VMOP_ERR_MSG_MAX];
    ck_assert_int_eq(eval("self.missing == 1", "{'a':1}", NULL, e, sizeof(e)), -1);
    ck_assert_str_eq(e, "no such key: missing");
    ck_assert_int_eq(eval("self.l[5] == 1", "{'l':[1]}", NULL, e, sizeof(e)), -1);
    ck_assert_str_eq(e, "index out of bounds: 5");
    ck_assert_int_eq(eval("self.a / 0 == 1", "{'a':1}", NULL, e, sizeof(e)), -1);
    ck_assert_str_eq(e, "division by zero");
    ck_assert_int_eq(eval("9223372036854775807 + self.a > 0", "{'a':1}", NULL, e, sizeof(e)), -1);
    ck_assert_str_eq(e, "integer overflow");
    ck_assert_int_eq(eval("self.a < 'x'", "{'a':1}", NULL, e, sizeof(e)), -1);
    ck_assert_ptr_nonnull(strstr(e, "no such overload"));
    /* && and || absorb errors when the other side decides */
    TRUE("self.missing == 1 || true", "{'a':1}");
    FALSE("false && self.missing == 1", "{'a':1}");
    /* cost: 1000 x 1000 steps */
    char big[8192] = "{'l':[";
    for (int i = 0; i < 1000; i++)
        strcat(big, i ? ",1" : "1");
    strcat(big, "]}");
    ck_assert_int_eq(eval("self.l.all(x, self.l.all(y, x + y > 0))", big, NULL, e, sizeof(e)), -1);
    ck_assert_str_eq(e, "operation cancelled: actual cost limit exceeded");
}
END_TEST

static void compile_fails(const char *rule, const char *want)
{
    struct cel_prog *p = NULL;
    struct vmop_err err = {0};
    ck_assert_int_ne(cel_compile(rule, &p, &err), VMOP_OK);
    ck_assert_ptr_null(p);
    ck_assert_msg(strstr(err.msg, want) != NULL, "%s: got '%s' want '%s'", rule, err.msg, want);
}

START_TEST(compile_errors)
{
    compile_fails("self.a ==", "ERROR: <input>:1:10: Syntax error");
    compile_fails("foo == 1",
                  "ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')");
    compile_fails("bar(self)", "undeclared reference to 'bar'");
    compile_fails("self.a.frobnicate()", "found no matching overload for 'frobnicate'");
    compile_fails("self.?a", "not supported");
    compile_fails("(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1))))))))))))"
                  ")))))))))))))))))))))))))))))))))))))))))))))))))))))))",
                  "nested too deeply");
    compile_fails("'unterminated", "Syntax error");
    compile_fails("", "empty expression");
    struct cel_prog *p = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(cel_compile("self.x.all(i, i.y == oldSelf.z)", &p, &err), VMOP_OK);
    ck_assert_int_eq(cel_prog_uses_oldself(p), 1);
    cel_prog_free(p);
    ck_assert_int_eq(cel_compile("self.x == 1", &p, &err), VMOP_OK);
    ck_assert_int_eq(cel_prog_uses_oldself(p), 0);
    cJSON *s = J("{'type':'object','properties':{'x':{'type':'integer'}}}");
    ck_assert_int_eq(cel_check_fields(p, s, &err), VMOP_OK);
    cel_prog_free(p);
    ck_assert_int_eq(cel_compile("self.y == 1", &p, &err), VMOP_OK);
    ck_assert_int_ne(cel_check_fields(p, s, &err), VMOP_OK);
    ck_assert_ptr_nonnull(strstr(err.msg, "undefined field 'y'"));
    cel_prog_free(p);
    cJSON_Delete(s);
}
END_TEST

#define RULES_SCHEMA                                                                               \
    "{'type':'object','x-kubernetes-validations':[{'rule':'self.metadata.name.startsWith(\\'vm\\'" \
    ")'}],"                                                                                        \
    "'properties':{'metadata':{'type':'object'},'spec':{'type':'object',"                          \
    "'x-kubernetes-validations':[{'rule':'!has(self.a) || !has(self.b)'},"                         \
    "{'rule':'self.min <= self.max','message':'min must not exceed max','fieldPath':'.min'},"      \
    "{'rule':'self.min != 13','messageExpression':'\\'min \\' + string(self.min) + \\' is "        \
    "unlucky\\'',"                                                                                 \
    "'reason':'FieldValueForbidden'}],"                                                            \
    "'properties':{'a':{'type':'string'},'b':{'type':'string'},'min':{'type':'integer'},"          \
    "'max':{'type':'integer'},"                                                                    \
    "'className':{'type':'string','x-kubernetes-validations':[{'rule':'self == oldSelf',"          \
    "'message':'Value is immutable'}]},"                                                           \
    "'res':{'type':'object','x-kubernetes-validations':[{'rule':'quantity(self.req) <= "           \
    "quantity(self.lim)'}],"                                                                       \
    "'properties':{'req':{'x-kubernetes-int-or-string':true},'lim':{'x-kubernetes-int-or-string':" \
    "true}}},"                                                                                     \
    "'disks':{'type':'array','x-kubernetes-list-type':'map','x-kubernetes-list-map-keys':['name']" \
    ","                                                                                            \
    "'items':{'type':'object','x-kubernetes-validations':[{'rule':'self.size >= oldSelf.size',"    \
    "'message':'disks cannot "                                                                     \
    "shrink'}],'properties':{'name':{'type':'string'},'size':{'type':'integer'}}}},"               \
    "'enum':{'type':'string','enum':['a']}}}}}"

#define VM(spec) "{'metadata':{'name':'vm0'},'spec':" spec "}"

START_TEST(rules_in_schema)
{
    ASSERT_VALID(RULES_SCHEMA,
                 VM("{'a':'x','min':1,'max':2,'className':'c','res':{'req':'500m','lim':1}}"),
                 NULL);
    ASSERT_INVALID(
        RULES_SCHEMA, VM("{'a':'x','b':'y','min':1,'max':2}"), NULL,
        "VirtualMachine.example.com \"vm0\" is invalid: spec: Invalid value: \"object\": "
        "failed rule: !has(self.a) || !has(self.b)");
    ASSERT_INVALID(RULES_SCHEMA, VM("{'min':3,'max':2}"), NULL,
                   "VirtualMachine.example.com \"vm0\" is invalid: spec.min: Invalid value: "
                   "\"object\": min must not exceed max");
    ASSERT_INVALID(
        RULES_SCHEMA, VM("{'min':13,'max':20}"), NULL,
        "VirtualMachine.example.com \"vm0\" is invalid: spec: Forbidden: min 13 is unlucky");
    ASSERT_INVALID(
        RULES_SCHEMA, VM("{'min':1}"), NULL,
        "VirtualMachine.example.com \"vm0\" is invalid: spec: Invalid value: \"object\": "
        "no such key: max evaluating rule: min must not exceed max");
    ASSERT_INVALID(RULES_SCHEMA, VM("{'min':1,'max':2,'res':{'req':'2','lim':'1500m'}}"), NULL,
                   "VirtualMachine.example.com \"vm0\" is invalid: spec.res: Invalid value: "
                   "\"object\": failed rule: quantity(self.req) <= quantity(self.lim)");
    ASSERT_INVALID(RULES_SCHEMA, "{'metadata':{'name':'x0'},'spec':{'min':1,'max':2}}", NULL,
                   "VirtualMachine.example.com \"vm0\" is invalid: <nil>: Invalid value: "
                   "\"object\": failed rule: self.metadata.name.startsWith(\"vm\")");
}
END_TEST

START_TEST(transition_rules)
{
    /* create: no oldSelf, the transition rule does not run */
    ASSERT_VALID(RULES_SCHEMA,
                 VM("{'min':1,'max':2,'className':'a','disks':[{'name':'d','size':5}]}"), NULL);
    /* update, unchanged */
    ASSERT_VALID(RULES_SCHEMA, VM("{'min':1,'max':2,'className':'a'}"),
                 VM("{'min':1,'max':2,'className':'a'}"));
    /* update, changed */
    ASSERT_INVALID(RULES_SCHEMA, VM("{'min':1,'max':2,'className':'b'}"),
                   VM("{'min':1,'max':2,'className':'a'}"),
                   "VirtualMachine.example.com \"vm0\" is invalid: spec.className: Invalid value: "
                   "\"string\": Value is immutable");
    /* field added on update: no old value there, the rule does not run */
    ASSERT_VALID(RULES_SCHEMA, VM("{'min':1,'max':2,'className':'b'}"), VM("{'min':1,'max':2}"));
    /* list-type map items correlate by key, wherever they sit in the list */
    ASSERT_INVALID(RULES_SCHEMA,
                   VM("{'min':1,'max':2,'disks':[{'name':'n','size':1},{'name':'d','size':4}]}"),
                   VM("{'min':1,'max':2,'disks':[{'name':'d','size':5}]}"),
                   "VirtualMachine.example.com \"vm0\" is invalid: spec.disks[1]: Invalid value: "
                   "\"object\": disks cannot shrink");
}
END_TEST

START_TEST(blocking_errors_skip_rules)
{
    ASSERT_INVALID(
        RULES_SCHEMA, VM("{'a':'x','b':'y','enum':'z'}"), NULL,
        "VirtualMachine.example.com \"vm0\" is invalid: [spec.enum: Unsupported value: "
        "\"z\": supported values: \"a\", <nil>: Invalid value: \"null\": some validation "
        "rules were not checked because the object was invalid; correct the existing "
        "errors to complete validation]");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cel");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, language);
    tcase_add_test(tc, quantities);
    tcase_add_test(tc, runtime_errors_and_limits);
    tcase_add_test(tc, compile_errors);
    tcase_add_test(tc, rules_in_schema);
    tcase_add_test(tc, transition_rules);
    tcase_add_test(tc, blocking_errors_skip_rules);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
