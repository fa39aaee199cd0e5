/* test_kube_config.c: unit tests for the kubeconfig YAML subset parser and config loading
 * (the files in testdata/kube, KUBECONFIG merging, in-cluster files). Suite: unit.
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
    ck_assert_int_eq(yparse_rc("a:\n\tb: 1\n", &err), VMOP_E_UNSUPPORTED);
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("a: &x 1\n", &err), VMOP_E_UNSUPPORTED);
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("a: |\n  text\n", &err), VMOP_E_UNSUPPORTED);
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("a: 1\na: 2\n", &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("a: 1\n---\nb: 2\n", &err), VMOP_E_UNSUPPORTED);
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("a:\n    b: 1\n  c: 2\n", &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(yparse_rc("a: [1, 2\n", &err), VMOP_E_UNSUPPORTED);
    vmop_err_clear(&err);
    /* messages carry line numbers, never content (tokens live in kubeconfigs) */
    ck_assert_int_eq(yparse_rc("x: 1\ntoken: \"SECRETVALUE\n", &err), VMOP_E_INVALID);
    ck_assert_ptr_null(strstr(err.msg, "SECRETVALUE"));
    ck_assert_ptr_nonnull(strstr(err.msg, "line 2"));
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
    path_of(p, sizeof(p), "bad-tab.yaml");
    ck_assert_int_eq(kube_config_from_files(p, NULL, &cfg, &err), VMOP_E_UNSUPPORTED);
    vmop_err_clear(&err);
    path_of(p, sizeof(p), "bad-anchor.yaml");
    ck_assert_int_eq(kube_config_from_files(p, NULL, &cfg, &err), VMOP_E_UNSUPPORTED);
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
    ck_assert_int_eq(kube_rv_cmp("9", "10"), -1);
    ck_assert_int_eq(kube_rv_cmp("10", "10"), 0);
    ck_assert_int_eq(kube_rv_cmp("abc", "abd"), -2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kube_config");
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, yaml_structures);
    tcase_add_test(tc, yaml_errors);
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
