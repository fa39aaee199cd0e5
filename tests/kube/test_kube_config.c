/* test_kube_config.c: unit tests for the kubeconfig YAML parser (kube_yaml on libyaml: structures,
 * block scalars, anchors, aliases and merge keys, multi-line flow collections, scalar resolution,
 * duplicate keys, depth and alias budgets, content-free error messages) and config loading (the
 * files in testdata/kube, KUBECONFIG merging, in-cluster files). Suite: unit.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "kube_config.h"
#include "kube_util.h"
#include "kube_yaml.h"

static char datadir[4096];

static void path_of(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", datadir, name);
}

static cJSON *yparse_ok(const char *s)
{
    cJSON *j = NULL;
    struct vmop_err err = {0};
    vmop_rc rc = kube_yaml_parse(s, strlen(s), &j, &err);
    ck_assert_msg(rc == VMOP_OK, "parse failed: %s", err.msg);
    return j;
}

static vmop_rc yparse_rc(const char *s, struct vmop_err *err)
{
    cJSON *j = NULL;
    vmop_rc rc = kube_yaml_parse(s, strlen(s), &j, err);
    cJSON_Delete(j);
    return rc;
}

START_TEST(yaml_structures)
{
    cJSON *j = yparse_ok("a: 1\n"
                         "b:\n"
                         "  c: true\n"
                         "  d: [x, 'y z', \"q\\tr\"]\n"
                         "list:\n"
                         "- one\n"
                         "- k: v\n"
                         "  k2: v2\n"
                         "-   - nested\n"
                         "    - seq\n"
                         "nul: ~\n"
                         "empty:\n"
                         "str: 'it''s'   # comment\n"
                         "url: https://h:6443/x#frag\n"
                         "long: first\n"
                         "  second\n"
                         "neg: -12.5e1\n"
                         "flow: {a: {b: [1, 2]}, c: }\n");
    ck_assert_double_eq(cJSON_GetObjectItem(j, "a")->valuedouble, 1);
    cJSON *b = cJSON_GetObjectItem(j, "b");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(b, "c")));
    cJSON *d = cJSON_GetObjectItem(b, "d");
    ck_assert_int_eq(cJSON_GetArraySize(d), 3);
    ck_assert_str_eq(cJSON_GetArrayItem(d, 1)->valuestring, "y z");
    ck_assert_str_eq(cJSON_GetArrayItem(d, 2)->valuestring, "q\tr");
    cJSON *l = cJSON_GetObjectItem(j, "list");
    ck_assert_int_eq(cJSON_GetArraySize(l), 3);
    ck_assert_str_eq(cJSON_GetArrayItem(l, 0)->valuestring, "one");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(l, 1), "k2")->valuestring, "v2");
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(l, 2), 1)->valuestring, "seq");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "nul")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "empty")));
    ck_assert_str_eq(cJSON_GetObjectItem(j, "str")->valuestring, "it's");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "url")->valuestring, "https://h:6443/x#frag");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "long")->valuestring, "first second");
    ck_assert_double_eq(cJSON_GetObjectItem(j, "neg")->valuedouble, -125);
    cJSON *f = cJSON_GetObjectItem(j, "flow");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(f, "a"), "b")), 2);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(f, "c")));
    cJSON_Delete(j);

    /* empty document, and JSON */
    j = yparse_ok("# only a comment\n\n");
    ck_assert(cJSON_IsNull(j));
    cJSON_Delete(j);
    j = yparse_ok("  {\"a\": [1, {\"b\": null}]}");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "a")), 2);
    cJSON_Delete(j);
    /* unicode escapes and CRLF */
    j = yparse_ok("k: \"\\u00e9\\x41\"\r\nm: x\r\n");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "k")->valuestring, "\xc3\xa9"
                                                               "A");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "m")->valuestring, "x");
    cJSON_Delete(j);
}
END_TEST

START_TEST(yaml_errors)
{
    struct vmop_err err = {0};
    /* a tab where indentation is expected: a libyaml scanner error */
    ck_assert_int_eq(yparse_rc("a:\n\tb: 1\n", &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "line 2 column 1"));
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("a: 1\na: 2\n", &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    /* multiple documents: only single-document files are read */
    ck_assert_int_eq(yparse_rc("a: 1\n---\nb: 2\n", &err), VMOP_E_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err.msg, "line 2 column 1"));
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("---\na: 1\n...\n---\nb: 2\n", &err), VMOP_E_UNSUPPORTED);
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("a:\n    b: 1\n  c: 2\n", &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    /* an unclosed flow collection is now a syntax error, not "unsupported" */
    ck_assert_int_eq(yparse_rc("a: [1, 2\n", &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    /* application tags, complex keys, alias keys, NUL in a scalar */
    ck_assert_int_eq(yparse_rc("a: !vault x\n", &err), VMOP_E_UNSUPPORTED);
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("? [a, b]\n: c\n", &err), VMOP_E_UNSUPPORTED);
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("k: &x a\n*x : b\n", &err), VMOP_E_UNSUPPORTED);
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("k: \"a\\0b\"\n", &err), VMOP_E_UNSUPPORTED);
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("k: \"a\\x00b\"\n", &err), VMOP_E_UNSUPPORTED);
    vmop_err_clear(&err);
    /* aliases to nothing, to the node being built */
    ck_assert_int_eq(yparse_rc("a: *nowhere\n", &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("a: &x [1, *x]\n", &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("a: &x {b: *x}\n", &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    /* a merge key's value must be a mapping or a sequence of them */
    ck_assert_int_eq(yparse_rc("a:\n  <<: 1\n", &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("a:\n  <<: [{x: 1}, 2]\n", &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    /* a '{' that is not JSON is YAML, and its errors are libyaml's */
    ck_assert_int_eq(yparse_rc("{\"a\": 1} trailing\n", &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    cJSON *j = NULL;
    ck_assert_int_eq(kube_yaml_parse("a: 1\0b: 2", 10, &j, &err), VMOP_E_INVALID);
    ck_assert_ptr_null(j);
    vmop_err_clear(&err);
    /* depth cap */
    static char deep[16384];
    deep[0] = 0;
    for (int i = 0; i < 100; i++) {
        size_t n = strlen(deep);
        snprintf(deep + n, sizeof(deep) - n, "%*sk:\n", i * 2, "");
    }
    ck_assert_int_eq(yparse_rc(deep, &err), VMOP_E_TOOBIG);
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
                               "[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
                               "]]]]]]]]]]]]]]]]]]]]]]]\n",
                               &err),
                     VMOP_E_TOOBIG);
    vmop_err_clear(&err);
    /* exactly KUBE_YAML_MAX_DEPTH levels are fine, one more is not */
    static char flow[512];
    memset(flow, 0, sizeof(flow));
    memset(flow, '[', KUBE_YAML_MAX_DEPTH);
    memset(flow + KUBE_YAML_MAX_DEPTH, ']', KUBE_YAML_MAX_DEPTH);
    j = yparse_ok(flow);
    cJSON_Delete(j);
    flow[2 * KUBE_YAML_MAX_DEPTH] = '\0';
    memmove(flow + 1, flow, 2 * KUBE_YAML_MAX_DEPTH);
    flow[0] = '[';
    flow[2 * KUBE_YAML_MAX_DEPTH + 1] = ']';
    ck_assert_int_eq(yparse_rc(flow, &err), VMOP_E_TOOBIG);
    vmop_err_clear(&err);
}
END_TEST

START_TEST(yaml_block_scalars)
{
    cJSON *j = yparse_ok("lit: |\n"
                         "  -----BEGIN CERTIFICATE-----\n"
                         "  MIIB\n"
                         "\n"
                         "  -----END CERTIFICATE-----\n"
                         "strip: |-\n"
                         "  a\n"
                         "  b\n"
                         "keep: |+\n"
                         "  a\n"
                         "\n"
                         "fold: >\n"
                         "  one\n"
                         "  two\n"
                         "\n"
                         "  three\n"
                         "indent: |2\n"
                         "    four\n"
                         "num: |\n"
                         "  12\n"
                         "last: x\n");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "lit")->valuestring,
                     "-----BEGIN CERTIFICATE-----\nMIIB\n\n-----END CERTIFICATE-----\n");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "strip")->valuestring, "a\nb");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "keep")->valuestring, "a\n\n");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "fold")->valuestring, "one two\nthree\n");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "indent")->valuestring, "  four\n");
    ck_assert(cJSON_IsString(cJSON_GetObjectItem(j, "num"))); /* block scalars are strings */
    ck_assert_str_eq(cJSON_GetObjectItem(j, "last")->valuestring, "x");
    cJSON_Delete(j);

    /* certificate data as a block scalar: the base64 lines are decoded whole */
    const char *kc = "current-context: m\n"
                     "clusters:\n"
                     "- name: c\n"
                     "  cluster:\n"
                     "    server: https://m:1\n"
                     "    certificate-authority-data: |\n"
                     "      LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClRFU1RD\n"
                     "      QQotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg==\n"
                     "contexts:\n"
                     "- name: m\n"
                     "  context: {cluster: c}\n";
    struct kube_config *cfg = NULL;
    struct vmop_err err = {0};
    ck_assert_msg(kube_config_from_buffer(kc, strlen(kc), NULL, NULL, &cfg, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_ptr_nonnull(strstr(cfg->ca.data, "TESTCA"));
    kube_config_free(cfg);
}
END_TEST

START_TEST(yaml_anchors)
{
    cJSON *j = yparse_ok("defaults: &d\n"
                         "  server: https://a:6443\n"
                         "  insecure-skip-tls-verify: true\n"
                         "name: &n first\n"
                         "again: *n\n"
                         "copy: *d\n"
                         "list: [*n, *d]\n"
                         "merged:\n"
                         "  server: https://b:6443\n" /* an explicit key wins over "<<" */
                         "  <<: *d\n"
                         "  extra: 1\n"
                         "multi:\n"
                         "  <<: [{a: 1, b: 1}, {b: 2, c: 2}]\n"
                         "redefined: &n second\n"
                         "later: *n\n");
    cJSON *d = cJSON_GetObjectItem(j, "defaults");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "again")->valuestring, "first");
    ck_assert(cJSON_Compare(cJSON_GetObjectItem(j, "copy"), d, 1));
    ck_assert(cJSON_GetObjectItem(j, "copy") != d); /* a copy, not shared */
    cJSON *l = cJSON_GetObjectItem(j, "list");
    ck_assert_str_eq(cJSON_GetArrayItem(l, 0)->valuestring, "first");
    ck_assert(cJSON_Compare(cJSON_GetArrayItem(l, 1), d, 1));
    ck_assert_ptr_null(cJSON_GetArrayItem(l, 1)->string); /* no member name on a sequence item */
    cJSON *m = cJSON_GetObjectItem(j, "merged");
    ck_assert_int_eq(cJSON_GetArraySize(m), 3);
    ck_assert_str_eq(cJSON_GetObjectItem(m, "server")->valuestring, "https://b:6443");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(m, "insecure-skip-tls-verify")));
    ck_assert_ptr_null(cJSON_GetObjectItem(m, "<<"));
    cJSON *mm = cJSON_GetObjectItem(j, "multi");
    ck_assert_int_eq(cJSON_GetArraySize(mm), 3);
    ck_assert_double_eq(cJSON_GetObjectItem(mm, "b")->valuedouble, 1); /* the earlier one wins */
    ck_assert_double_eq(cJSON_GetObjectItem(mm, "c")->valuedouble, 2);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "later")->valuestring, "second");
    cJSON_Delete(j);

    /* an anchored key is a scalar like any other; a quoted "<<" is a plain key */
    j = yparse_ok("&k key: v\nother: *k\n\"<<\": {a: 1}\n");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "other")->valuestring, "key");
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "<<"), "a"));
    cJSON_Delete(j);

    /* a kubeconfig sharing its user settings through an anchor */
    const char *kc = "current-context: a\n"
                     "clusters:\n"
                     "- name: c\n"
                     "  cluster: &cl {server: https://m:1}\n"
                     "- name: c2\n"
                     "  cluster: *cl\n"
                     "users:\n"
                     "- name: u\n"
                     "  user: &u\n"
                     "    token: tok-123\n"
                     "contexts:\n"
                     "- name: a\n"
                     "  context: &ctx {cluster: c2, user: u}\n"
                     "- name: b\n"
                     "  context:\n"
                     "    <<: *ctx\n"
                     "    namespace: nb\n";
    struct kube_config *cfg = NULL;
    struct vmop_err err = {0};
    ck_assert_msg(kube_config_from_buffer(kc, strlen(kc), NULL, NULL, &cfg, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_str_eq(cfg->server, "https://m:1");
    ck_assert_str_eq(cfg->token, "tok-123");
    kube_config_free(cfg);
    cfg = NULL;
    ck_assert_int_eq(kube_config_from_buffer(kc, strlen(kc), NULL, "b", &cfg, &err), VMOP_OK);
    ck_assert_str_eq(cfg->namespace, "nb");
    ck_assert_str_eq(cfg->token, "tok-123");
    kube_config_free(cfg);
}
END_TEST

START_TEST(yaml_alias_limits)
{
    struct vmop_err err = {0};
    /* billion laughs: nine aliases a level, nine levels; refused by the node budget, at once */
    const char *bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n"
                       "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                       "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                       "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                       "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                       "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                       "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
                       "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
                       "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n";
    ck_assert_int_eq(yparse_rc(bomb, &err), VMOP_E_TOOBIG);
    ck_assert_ptr_nonnull(strstr(err.msg, "too many nodes"));
    vmop_err_clear(&err);
    /* the same through merge keys */
    const char *mbomb = "a: &a {a0: [x, x, x, x, x, x, x, x, x, x], a1: [x, x, x, x, x, x, x, x]}\n"
                        "b: &b {b0: *a, b1: *a, b2: *a, b3: *a, b4: *a, b5: *a, b6: *a, b7: *a}\n"
                        "c: &c {c0: *b, c1: *b, c2: *b, c3: *b, c4: *b, c5: *b, c6: *b, c7: *b}\n"
                        "d: &d {d0: *c, d1: *c, d2: *c, d3: *c, d4: *c, d5: *c, d6: *c, d7: *c}\n"
                        "e: &e {<<: [*d, {e0: *d, e1: *d, e2: *d, e3: *d, e4: *d, e5: *d}]}\n"
                        "f: {<<: [*e, *e]}\n";
    ck_assert_int_eq(yparse_rc(mbomb, &err), VMOP_E_TOOBIG);
    vmop_err_clear(&err);
    /* an alias counts its depth where it lands: 40 levels inside 30 */
    static char deep[4096];
    size_t n = 0;
    n += (size_t)snprintf(deep + n, sizeof(deep) - n, "a: &x ");
    for (int i = 0; i < 40; i++)
        deep[n++] = '[';
    for (int i = 0; i < 40; i++)
        deep[n++] = ']';
    n += (size_t)snprintf(deep + n, sizeof(deep) - n, "\nb: ");
    for (int i = 0; i < 30; i++)
        deep[n++] = '[';
    deep[n++] = '*';
    deep[n++] = 'x';
    for (int i = 0; i < 30; i++)
        deep[n++] = ']';
    deep[n] = '\0';
    ck_assert_int_eq(yparse_rc(deep, &err), VMOP_E_TOOBIG);
    ck_assert_ptr_nonnull(strstr(err.msg, "nesting too deep"));
    vmop_err_clear(&err);
}
END_TEST

START_TEST(yaml_flow_across_lines)
{
    cJSON *j = yparse_ok("cluster: {server: \"https://10.0.0.1:6443\",\n"
                         "          insecure-skip-tls-verify: true,\n"
                         "   tls-server-name: api.example}\n"
                         "list: [a,\n"
                         "  b, {c: d,\n"
                         "      e: [1,\n"
                         "          2]},\n"
                         "]\n"
                         "nested: {a: {b: {c: [x, y]}},\n"
                         " empty: {}, none: [], key only}\n");
    cJSON *c = cJSON_GetObjectItem(j, "cluster");
    ck_assert_str_eq(cJSON_GetObjectItem(c, "server")->valuestring, "https://10.0.0.1:6443");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(c, "insecure-skip-tls-verify")));
    ck_assert_str_eq(cJSON_GetObjectItem(c, "tls-server-name")->valuestring, "api.example");
    cJSON *l = cJSON_GetObjectItem(j, "list");
    ck_assert_int_eq(cJSON_GetArraySize(l), 3);
    cJSON *e = cJSON_GetObjectItem(cJSON_GetArrayItem(l, 2), "e");
    ck_assert_double_eq(cJSON_GetArrayItem(e, 1)->valuedouble, 2);
    cJSON *nst = cJSON_GetObjectItem(j, "nested");
    ck_assert_int_eq(cJSON_GetArraySize(nst), 4);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(nst, "key only")));
    cJSON_Delete(j);

    /* a whole document in flow style that is not JSON (plain scalars) */
    j = yparse_ok("{apiVersion: v1, kind: Config,\n clusters: [],\n  users: []}\n");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "kind")->valuestring, "Config");
    cJSON_Delete(j);
}
END_TEST

START_TEST(yaml_scalar_resolution)
{
    cJSON *j = yparse_ok("qt: \"true\"\n"
                         "pt: true\n"
                         "pT: True\n"
                         "pF: FALSE\n"
                         "sq: 'false'\n"
                         "qn: \"null\"\n"
                         "pn: null\n"
                         "tilde: ~\n"
                         "qi: \"12\"\n"
                         "pi: 12\n"
                         "neg: -3\n"
                         "plus: +7\n"
                         "octal: 0755\n"
                         "zero: 0\n"
                         "zf: 0.5\n"
                         "dot: .5\n"
                         "exp: 1e3\n"
                         "hex: 0x1F\n"
                         "oct12: 0o17\n"
                         "inf: .inf\n"
                         "big: 1e999\n"
                         "yes: yes\n"
                         "on: off\n"
                         "tagged: !!str 12\n"
                         "bang: ! true\n"
                         "itag: !!int 5\n"
                         "ver: 1.2.3\n"
                         "ip: 10.0.0.1\n"
                         "time: 2025-01-01T10:00:00Z\n");
#define STR(k, v) ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, k)), v)
#define NUM(k, v) ck_assert_double_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(j, k)), v)
    STR("qt", "true");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "pt")));
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "pT")));
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "pF")));
    STR("sq", "false");
    STR("qn", "null");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "pn")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "tilde")));
    STR("qi", "12");
    NUM("pi", 12);
    NUM("neg", -3);
    NUM("plus", 7);
    STR("octal", "0755"); /* neither YAML 1.1's 493 nor YAML 1.2's 755: kept as written */
    NUM("zero", 0);
    NUM("zf", 0.5);
    NUM("dot", 0.5);
    NUM("exp", 1000);
    STR("hex", "0x1F");
    STR("oct12", "0o17");
    STR("inf", ".inf");
    STR("big", "1e999"); /* not finite: kept as written */
    STR("yes", "yes");   /* YAML 1.1 booleans are strings in 1.2 */
    STR("on", "off");
    STR("tagged", "12");
    STR("bang", "true");
    NUM("itag", 5);
    STR("ver", "1.2.3");
    STR("ip", "10.0.0.1");
    STR("time", "2025-01-01T10:00:00Z");
#undef STR
#undef NUM
    cJSON_Delete(j);
    /* a top-level scalar, and an empty value in a sequence */
    j = yparse_ok("just text\n");
    ck_assert_str_eq(j->valuestring, "just text");
    cJSON_Delete(j);
    j = yparse_ok("- \n- a\n");
    ck_assert(cJSON_IsNull(cJSON_GetArrayItem(j, 0)));
    cJSON_Delete(j);
}
END_TEST

START_TEST(yaml_duplicate_keys)
{
    struct vmop_err err = {0};
    ck_assert_int_eq(yparse_rc("a: 1\nb: 2\na: 3\n", &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "line 3 column 1: duplicate mapping key"));
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("m: {x: 1, y: 2,\n  x: 3}\n", &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "line 2 column 3"));
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("\"a\": 1\na: 2\n", &err), VMOP_E_INVALID); /* same key, quoted */
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("m:\n  <<: {a: 1}\n  <<: {b: 1}\n", &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    /* the same key in different mappings is fine */
    cJSON *j = yparse_ok("a: {k: 1}\nb: {k: 2}\nl: [{k: 1}, {k: 2}]\n");
    cJSON_Delete(j);
    /* a large mapping (checked through a hash map): distinct keys pass, a repeat does not */
    static char big[200000];
    size_t n = 0;
    for (int i = 0; i < 5000; i++)
        n += (size_t)snprintf(big + n, sizeof(big) - n, "key%d: %d\n", i, i);
    j = yparse_ok(big);
    ck_assert_int_eq(cJSON_GetArraySize(j), 5000);
    cJSON_Delete(j);
    snprintf(big + n, sizeof(big) - n, "key4321: again\n");
    ck_assert_int_eq(yparse_rc(big, &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "line 5001"));
    vmop_err_clear(&err);
    snprintf(big + n, sizeof(big) - n, "key3: again\n");
    ck_assert_int_eq(yparse_rc(big, &err), VMOP_E_INVALID);
}
END_TEST

/* No message names content: tokens and keys live in kubeconfigs. */
START_TEST(yaml_errors_name_no_content)
{
    static const char *const bad[] = {
        "x: 1\ntoken: \"SECRETVALUE\n",                /* unterminated quote */
        "token: SECRETVALUE\ntoken: SECRETVALUE\n",    /* duplicate key */
        "token: SECRETVALUE\n\ttoken2: SECRETVALUE\n", /* tab */
        "token: SECRETVALUE\xff\xfe\n",                /* invalid UTF-8 */
        "token: SECRETVALUE\x01\n",                    /* control character */
        "token: [SECRETVALUE\n",                       /* unclosed flow */
        "token: !SECRETVALUE x\n",                     /* an undefined tag handle */
        "token: !<SECRETVALUE> x\n",                   /* an application tag */
        "token: *SECRETVALUE\n",                       /* an undefined alias */
        "token: SECRETVALUE\n---\nSECRETVALUE\n",      /* a second document */
        "{token: SECRETVALUE: x}\n",
        "token: \"SECRETVALUE\\q\"\n", /* unknown escape */
        "SECRETVALUE: [a]: b\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct vmop_err err = {0};
        ck_assert_msg(yparse_rc(bad[i], &err) != VMOP_OK, "case %zu parsed", i);
        ck_assert_msg(strstr(err.msg, "SECRET") == NULL, "case %zu: %s", i, err.msg);
        ck_assert_msg(strstr(err.msg, "line ") != NULL, "case %zu: %s", i, err.msg);
        ck_assert_msg(!strncmp(err.msg, "kubeconfig", 10), "case %zu: %s", i, err.msg);
    }
    /* through the kubeconfig loader too */
    const char *kc = "users:\n- name: u\n  user:\n    token: \"SECRETVALUE\n";
    struct kube_config *cfg = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(kube_config_from_buffer(kc, strlen(kc), NULL, NULL, &cfg, &err),
                     VMOP_E_INVALID);
    ck_assert_ptr_null(strstr(err.msg, "SECRET"));
    ck_assert_ptr_nonnull(strstr(err.msg, "while scanning a quoted scalar at line 4 column 12"));
}
END_TEST

START_TEST(kubectl_written)
{
    char p[4200];
    struct kube_config *cfg = NULL;
    struct vmop_err err = {0};
    path_of(p, sizeof(p), "kubectl-written.yaml");
    ck_assert_int_eq(kube_config_from_files(p, NULL, &cfg, &err), VMOP_OK);
    ck_assert_str_eq(cfg->server, "https://127.0.0.1:6443");
    ck_assert_str_eq(cfg->namespace, "vm-system");
    ck_assert_str_eq(cfg->context, "kind-dev");
    ck_assert_ptr_nonnull(strstr(cfg->ca.data, "TESTCA"));
    ck_assert_ptr_nonnull(strstr(cfg->client_cert.data, "CLIENT"));
    ck_assert_ptr_nonnull(strstr(cfg->client_key.data, "PRIVATE KEY"));
    ck_assert_ptr_null(cfg->token);
    ck_assert_int_eq(cfg->insecure_skip_tls_verify, 0);
    kube_config_free(cfg);

    cfg = NULL;
    ck_assert_int_eq(kube_config_from_files(p, "other", &cfg, &err), VMOP_OK);
    ck_assert_str_eq(cfg->server, "https://10.0.0.9:6443"); /* trailing slash dropped */
    ck_assert_str_eq(cfg->namespace, "default");
    ck_assert_str_eq(cfg->token, "abc.def-ghi");
    ck_assert_int_eq(cfg->insecure_skip_tls_verify, 1);
    ck_assert_ptr_null(cfg->ca.data);
    kube_config_free(cfg);

    ck_assert_int_eq(kube_config_from_files(p, "nope", &cfg, &err), VMOP_E_NOT_FOUND);
}
END_TEST

START_TEST(hand_written_and_json)
{
    char p[4200];
    struct kube_config *cfg = NULL;
    struct vmop_err err = {0};
    path_of(p, sizeof(p), "hand-written.yaml");
    ck_assert_msg(kube_config_from_files(p, NULL, &cfg, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_str_eq(cfg->server, "https://10.0.0.1:6443");
    ck_assert_str_eq(cfg->namespace, "team-a");
    ck_assert_str_eq(cfg->tls_server_name, "api.example");
    ck_assert_int_eq(cfg->insecure_skip_tls_verify, 1);
    ck_assert_str_eq(cfg->token, "file-token-123"); /* tokenFile relative to the file */
    ck_assert_ptr_nonnull(strstr(cfg->token_file, "secrets/token"));
    kube_config_free(cfg);
    cfg = NULL;
    ck_assert_int_eq(kube_config_from_files(p, "empty-ns", &cfg, &err), VMOP_OK);
    ck_assert_str_eq(cfg->namespace, "default");
    kube_config_free(cfg);

    cfg = NULL;
    path_of(p, sizeof(p), "json.kubeconfig");
    ck_assert_msg(kube_config_from_files(p, NULL, &cfg, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_str_eq(cfg->server, "http://127.0.0.1:8080");
    ck_assert_str_eq(cfg->namespace, "jns");
    ck_assert_str_eq(cfg->token, "json-token");
    ck_assert_ptr_nonnull(strstr(cfg->ca.data, "FILECA"));
    kube_config_free(cfg);

    /* in memory */
    const char *mem = "current-context: m\nclusters:\n- name: c\n  cluster:\n    server: "
                      "https://m:1\ncontexts:\n- name: m\n  context:\n    cluster: c\n";
    cfg = NULL;
    ck_assert_int_eq(kube_config_from_buffer(mem, strlen(mem), NULL, NULL, &cfg, &err), VMOP_OK);
    ck_assert_str_eq(cfg->server, "https://m:1");
    kube_config_free(cfg);
}
END_TEST

START_TEST(merged_list)
{
    char a[4200], b[4200], list[9000];
    struct kube_config *cfg = NULL;
    struct vmop_err err = {0};
    path_of(a, sizeof(a), "merge-a.yaml");
    path_of(b, sizeof(b), "merge-b.yaml");
    snprintf(list, sizeof(list), "%s:/nonexistent/kubeconfig:%s", a, b);
    ck_assert_msg(kube_config_from_files(list, NULL, &cfg, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_str_eq(cfg->context, "from-b"); /* current-context: the first file that sets it */
    ck_assert_str_eq(cfg->server, "https://b.example:443");
    ck_assert_str_eq(cfg->token, "token-from-a");          /* first file with the user wins */
    ck_assert_ptr_nonnull(strstr(cfg->ca.data, "FILECA")); /* relative to b's directory */
    kube_config_free(cfg);

    /* via KUBECONFIG */
    setenv("KUBECONFIG", list, 1);
    cfg = NULL;
    ck_assert_int_eq(kube_config_load(NULL, &cfg, &err), VMOP_OK);
    ck_assert_str_eq(cfg->token, "token-from-a");
    kube_config_free(cfg);
    unsetenv("KUBECONFIG");

    /* an explicit path wins over KUBECONFIG */
    setenv("KUBECONFIG", list, 1);
    path_of(a, sizeof(a), "json.kubeconfig");
    struct kube_config_opts o = {.kubeconfig = a};
    cfg = NULL;
    ck_assert_int_eq(kube_config_load(&o, &cfg, &err), VMOP_OK);
    ck_assert_str_eq(cfg->token, "json-token");
    kube_config_free(cfg);
    unsetenv("KUBECONFIG");

    ck_assert_int_eq(kube_config_from_files("/nonexistent/a:/nonexistent/b", NULL, &cfg, &err),
                     VMOP_E_NOT_FOUND);
}
END_TEST

START_TEST(bad_files)
{
    char p[4200];
    struct kube_config *cfg = NULL;
    struct vmop_err err = {0};
    path_of(p, sizeof(p), "bad-tab.yaml"); /* a tab in indentation: a syntax error */
    ck_assert_int_eq(kube_config_from_files(p, NULL, &cfg, &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "line 3 column 1"));
    vmop_err_clear(&err);
    /* anchors are read now: this file fails for what it lacks (a context), not for its anchor */
    path_of(p, sizeof(p), "bad-anchor.yaml");
    ck_assert_int_eq(kube_config_from_files(p, NULL, &cfg, &err), VMOP_E_INVALID);
    ck_assert_str_eq(err.msg, "kubeconfig has no current-context");
    vmop_err_clear(&err);
    path_of(p, sizeof(p), "bad-no-context.yaml");
    ck_assert_int_eq(kube_config_from_files(p, NULL, &cfg, &err), VMOP_E_NOT_FOUND);
    vmop_err_clear(&err);
    path_of(p, sizeof(p), "exec-user.yaml");
    ck_assert_int_eq(kube_config_from_files(p, NULL, &cfg, &err), VMOP_E_UNSUPPORTED);
    vmop_err_clear(&err);
    const char *badb64 = "current-context: m\nclusters:\n- name: c\n  cluster:\n    server: "
                         "https://m:1\n    certificate-authority-data: '!!!'\ncontexts:\n- "
                         "name: m\n  context:\n    cluster: c\n";
    ck_assert_int_eq(kube_config_from_buffer(badb64, strlen(badb64), NULL, NULL, &cfg, &err),
                     VMOP_E_INVALID);
    vmop_err_clear(&err);
    const char *noserver = "current-context: m\nclusters:\n- name: c\n  cluster: {}\ncontexts:\n- "
                           "name: m\n  context:\n    cluster: c\n";
    ck_assert_int_eq(kube_config_from_buffer(noserver, strlen(noserver), NULL, NULL, &cfg, &err),
                     VMOP_E_INVALID);
}
END_TEST

static void write_file(const char *dir, const char *name, const char *content)
{
    char p[4200];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(content, f);
    fclose(f);
}

START_TEST(incluster)
{
    char dir[] = "/tmp/kube-incluster-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    write_file(dir, "token", "sa-token\n");
    write_file(dir, "ca.crt", "-----BEGIN CERTIFICATE-----\nSA\n-----END CERTIFICATE-----\n");
    write_file(dir, "namespace", "vm-system\n");
    struct kube_config *cfg = NULL;
    struct vmop_err err = {0};
    unsetenv("KUBERNETES_SERVICE_HOST");
    ck_assert_int_eq(kube_config_incluster(dir, &cfg, &err), VMOP_E_NOT_FOUND);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    vmop_err_clear(&err);
    ck_assert_msg(kube_config_incluster(dir, &cfg, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_str_eq(cfg->server, "https://[fd00::1]:443");
    ck_assert_str_eq(cfg->token, "sa-token");
    ck_assert_str_eq(cfg->namespace, "vm-system");
    ck_assert_ptr_nonnull(strstr(cfg->ca.data, "SA"));
    ck_assert_ptr_nonnull(cfg->token_file);
    kube_config_free(cfg);
    /* kube_config_load picks in-cluster when KUBECONFIG is unset */
    unsetenv("KUBECONFIG");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    struct kube_config_opts o = {.incluster_dir = dir};
    cfg = NULL;
    ck_assert_int_eq(kube_config_load(&o, &cfg, &err), VMOP_OK);
    ck_assert_str_eq(cfg->server, "https://10.96.0.1:443");
    kube_config_free(cfg);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    const char *files[] = {"token", "ca.crt", "namespace"};
    for (int i = 0; i < 3; i++) {
        char p[4200];
        snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
}
END_TEST

START_TEST(util_time_b64)
{
    char buf[64];
    int64_t us = 0;
    ck_assert_int_eq(kube_parse_time("2025-01-01T10:00:00.123456Z", &us), 0);
    kube_format_time(us, 1, buf, sizeof(buf));
    ck_assert_str_eq(buf, "2025-01-01T10:00:00.123456Z");
    kube_format_time(us, 0, buf, sizeof(buf));
    ck_assert_str_eq(buf, "2025-01-01T10:00:00Z");
    int64_t us2 = 0;
    ck_assert_int_eq(kube_parse_time("2025-01-01T12:00:00.123456+02:00", &us2), 0);
    ck_assert(us == us2);
    ck_assert_int_ne(kube_parse_time("2025-01-01 10:00:00Z", &us), 0);
    char *out = NULL;
    size_t n = 0;
    struct vmop_err err = {0};
    ck_assert_int_eq(vmop_base64_decode("aGVsbG8=", 8, VMOP_B64_LENIENT, &out, &n, &err), VMOP_OK);
    ck_assert_str_eq(out, "hello");
    ck_assert_uint_eq(n, 5);
    free(out);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kube_config");
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, yaml_structures);
    tcase_add_test(tc, yaml_errors);
    tcase_add_test(tc, yaml_block_scalars);
    tcase_add_test(tc, yaml_anchors);
    tcase_add_test(tc, yaml_alias_limits);
    tcase_add_test(tc, yaml_flow_across_lines);
    tcase_add_test(tc, yaml_scalar_resolution);
    tcase_add_test(tc, yaml_duplicate_keys);
    tcase_add_test(tc, yaml_errors_name_no_content);
    tcase_add_test(tc, kubectl_written);
    tcase_add_test(tc, hand_written_and_json);
    tcase_add_test(tc, merged_list);
    tcase_add_test(tc, bad_files);
    tcase_add_test(tc, incluster);
    tcase_add_test(tc, util_time_b64);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    const char *d = getenv("KUBE_TESTDATA");
    snprintf(datadir, sizeof(datadir), "%s", d ? d : "testdata/kube");
    return vmop_check_run(suite());
}
