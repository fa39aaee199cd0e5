/* kube_config.c: kubeconfig (YAML/JSON, merged lists) and in-cluster configuration loading.
 * Owns: turning files and environment into a struct kube_config. Not here: HTTP, token refresh
 * (kube_client.c re-reads token files). Secrets are zeroed on free and never formatted.
 */
#include "kube_config.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "kube_util.h"
#include "kube_yaml.h"
#include "vbuf.h"

#define MAX_FILES 32

struct kfile {
    cJSON *doc;
    char *dir; /* directory of the file, for relative paths */
};

static void blob_free(struct kube_blob *b)
{
    vmop_free_secret_n(b->data, b->len);
    b->data = NULL;
    b->len = 0;
}

void kube_config_free(struct kube_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->server);
    free(cfg->namespace);
    free(cfg->context);
    free(cfg->tls_server_name);
    blob_free(&cfg->ca);
    blob_free(&cfg->client_cert);
    blob_free(&cfg->client_key);
    vmop_free_secret(cfg->token);
    free(cfg->token_file);
    free(cfg->username);
    vmop_free_secret(cfg->password);
    free(cfg);
}

static vmop_rc dup_str(char **dst, const char *s, struct vmop_err *err)
{
    if (!s)
        return VMOP_OK;
    *dst = strdup(s);
    return *dst ? VMOP_OK : vmop_fail(err, VMOP_E_NOMEM, "out of memory loading kubeconfig");
}

/* dir + "/" + path unless path is absolute. malloc'd. */
static char *resolve_path(const char *dir, const char *path)
{
    if (path[0] == '/' || !dir || !*dir)
        return strdup(path);
    struct vbuf b;
    vbuf_init(&b, 1 << 16);
    vbuf_addf(&b, "%s/%s", dir, path);
    return vbuf_error(&b) ? NULL : vbuf_take(&b);
}

/* Fills blob from "<field>-data" (base64) or "<field>" (file path). */
static vmop_rc load_blob(const cJSON *section, const char *field, const char *dir,
                         struct kube_blob *blob, const char *what, struct vmop_err *err)
{
    char data_field[96];
    snprintf(data_field, sizeof(data_field), "%s-data", field);
    const char *b64 = kube_json_str(section, data_field);
    const char *path = kube_json_str(section, field);
    if (b64 && *b64) {
        vmop_rc rc =
            vmop_base64_decode(b64, strlen(b64), VMOP_B64_LENIENT, &blob->data, &blob->len, err);
        if (rc)
            return vmop_fail(err, rc, "%s: %s is not valid base64", what, data_field);
        return VMOP_OK;
    }
    if (path && *path) {
        char *full = resolve_path(dir, path);
        if (!full)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory loading kubeconfig");
        vmop_rc rc = kube_read_file(full, KUBE_CONFIG_MAX_FILE, &blob->data, &blob->len, err);
        free(full);
        return rc;
    }
    return VMOP_OK;
}

/* The first file's named entry in a list ("clusters", "users", "contexts"); *ret_dir: its dir. */
static const cJSON *find_named(struct kfile *files, size_t n, const char *list, const char *inner,
                               const char *name, const char **ret_dir)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(files[i].doc, list);
        const cJSON *it;
        cJSON_ArrayForEach(it, arr)
        {
            const char *nm = kube_json_str(it, "name");
            if (nm && !strcmp(nm, name)) {
                *ret_dir = files[i].dir;
                return cJSON_GetObjectItemCaseSensitive(it, inner);
            }
        }
    }
    return NULL;
}

static vmop_rc build_config(struct kfile *files, size_t n, const char *context,
                            struct kube_config **ret_cfg, struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;
    struct kube_config *cfg = calloc(1, sizeof(*cfg));
    if (!cfg)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory loading kubeconfig");

    const char *ctx_name = context;
    for (size_t i = 0; i < n && (!ctx_name || !*ctx_name); i++)
        ctx_name = kube_json_str(files[i].doc, "current-context");
    if (!ctx_name || !*ctx_name) {
        rc = vmop_fail(err, VMOP_E_INVALID, "kubeconfig has no current-context");
        goto out;
    }
    const char *ctx_dir = NULL, *cl_dir = NULL, *user_dir = NULL;
    const cJSON *ctx = find_named(files, n, "contexts", "context", ctx_name, &ctx_dir);
    if (!cJSON_IsObject(ctx)) {
        rc = vmop_fail(err, VMOP_E_NOT_FOUND, "kubeconfig context '%s' not found", ctx_name);
        goto out;
    }
    const char *cluster_name = kube_json_str(ctx, "cluster");
    const char *user_name = kube_json_str(ctx, "user");
    const char *ns = kube_json_str(ctx, "namespace");
    if (!cluster_name || !*cluster_name) {
        rc = vmop_fail(err, VMOP_E_INVALID, "kubeconfig context '%s' names no cluster", ctx_name);
        goto out;
    }
    const cJSON *cl = find_named(files, n, "clusters", "cluster", cluster_name, &cl_dir);
    if (!cJSON_IsObject(cl)) {
        rc = vmop_fail(err, VMOP_E_NOT_FOUND, "kubeconfig cluster '%s' not found", cluster_name);
        goto out;
    }
    const char *server = kube_json_str(cl, "server");
    if (!server || !*server) {
        rc = vmop_fail(err, VMOP_E_INVALID, "kubeconfig cluster '%s' has no server", cluster_name);
        goto out;
    }
    if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0) {
        rc = vmop_fail(err, VMOP_E_INVALID, "kubeconfig cluster '%s': server is not an http(s) URL",
                       cluster_name);
        goto out;
    }
    if ((rc = dup_str(&cfg->server, server, err)) || (rc = dup_str(&cfg->context, ctx_name, err)) ||
        (rc = dup_str(&cfg->namespace, ns && *ns ? ns : "default", err)) ||
        (rc = dup_str(&cfg->tls_server_name, kube_json_str(cl, "tls-server-name"), err)))
        goto out;
    size_t sl = strlen(cfg->server);
    while (sl > 0 && cfg->server[sl - 1] == '/')
        cfg->server[--sl] = '\0';
    cfg->insecure_skip_tls_verify =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cl, "insecure-skip-tls-verify"));
    if ((rc = load_blob(cl, "certificate-authority", cl_dir, &cfg->ca, "cluster", err)))
        goto out;

    if (user_name && *user_name) {
        const cJSON *u = find_named(files, n, "users", "user", user_name, &user_dir);
        if (!u) {
            rc = vmop_fail(err, VMOP_E_NOT_FOUND, "kubeconfig user '%s' not found", user_name);
            goto out;
        }
        if (cJSON_GetObjectItemCaseSensitive(u, "exec") ||
            cJSON_GetObjectItemCaseSensitive(u, "auth-provider")) {
            rc = vmop_fail(err, VMOP_E_UNSUPPORTED,
                           "kubeconfig user '%s': exec and auth-provider plugins are not supported",
                           user_name);
            goto out;
        }
        const char *tok = kube_json_str(u, "token");
        const char *tok_file = kube_json_str(u, "tokenFile");
        if ((rc = dup_str(&cfg->token, tok && *tok ? tok : NULL, err)))
            goto out;
        if (tok_file && *tok_file) {
            cfg->token_file = resolve_path(user_dir, tok_file);
            if (!cfg->token_file) {
                rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory loading kubeconfig");
                goto out;
            }
            if (!cfg->token) {
                size_t tl;
                rc = kube_read_file(cfg->token_file, KUBE_CONFIG_MAX_FILE, &cfg->token, &tl, err);
                if (rc)
                    goto out;
                while (tl && (cfg->token[tl - 1] == '\n' || cfg->token[tl - 1] == '\r' ||
                              cfg->token[tl - 1] == ' '))
                    cfg->token[--tl] = '\0';
            }
        }
        if ((rc = load_blob(u, "client-certificate", user_dir, &cfg->client_cert, "user", err)) ||
            (rc = load_blob(u, "client-key", user_dir, &cfg->client_key, "user", err)))
            goto out;
        if (!cfg->client_cert.data != !cfg->client_key.data) {
            rc = vmop_fail(err, VMOP_E_INVALID,
                           "kubeconfig user '%s': client certificate and key must come together",
                           user_name);
            goto out;
        }
        if ((rc = dup_str(&cfg->username, kube_json_str(u, "username"), err)) ||
            (rc = dup_str(&cfg->password, kube_json_str(u, "password"), err)))
            goto out;
    }
out:
    if (rc)
        kube_config_free(cfg);
    else
        *ret_cfg = cfg;
    return rc;
}

static vmop_rc parse_doc(const char *data, size_t len, const char *what, cJSON **ret,
                         struct vmop_err *err)
{
    cJSON *doc = NULL;
    vmop_rc rc = kube_yaml_parse(data, len, &doc, err);
    if (rc)
        return rc;
    if (cJSON_IsNull(doc)) {
        cJSON_Delete(doc);
        doc = cJSON_CreateObject(); /* an empty file is an empty config */
        if (!doc)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory loading kubeconfig");
    }
    if (!cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        return vmop_fail(err, VMOP_E_INVALID, "%s is not a mapping", what);
    }
    *ret = doc;
    return VMOP_OK;
}

vmop_rc kube_config_from_buffer(const char *data, size_t len, const char *base_dir,
                                const char *context, struct kube_config **ret_cfg,
                                struct vmop_err *err)
{
    struct kfile f = {.dir = (char *)base_dir};
    vmop_rc rc = parse_doc(data, len, "kubeconfig", &f.doc, err);
    if (rc)
        return rc;
    rc = build_config(&f, 1, context, ret_cfg, err);
    cJSON_Delete(f.doc);
    return rc;
}

vmop_rc kube_config_from_files(const char *path_list, const char *context,
                               struct kube_config **ret_cfg, struct vmop_err *err)
{
    struct kfile files[MAX_FILES];
    size_t n = 0;
    vmop_rc rc = VMOP_OK;
    char *list = strdup(path_list);
    if (!list)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory loading kubeconfig");
    for (char *path = list, *next; path; path = next) {
        next = strchr(path, ':');
        if (next)
            *next++ = '\0';
        if (!*path)
            continue;
        if (n == MAX_FILES) {
            rc = vmop_fail(err, VMOP_E_TOOBIG, "more than %d kubeconfig files", MAX_FILES);
            goto out;
        }
        char *data = NULL;
        size_t len = 0;
        struct vmop_err ferr = {0};
        rc = kube_read_file(path, KUBE_CONFIG_MAX_FILE, &data, &len, &ferr);
        if (rc == VMOP_E_NOT_FOUND) {
            rc = VMOP_OK; /* kubectl skips missing files in KUBECONFIG */
            continue;
        }
        if (rc) {
            rc = vmop_fail(err, rc, "%s", ferr.msg);
            goto out;
        }
        rc = parse_doc(data, len, path, &files[n].doc, err);
        vmop_free_secret_n(data, len);
        if (rc) {
            vmop_fail(err, rc, "kubeconfig '%s' does not parse", path);
            goto out;
        }
        char *pcopy = strdup(path);
        files[n].dir = pcopy ? strdup(dirname(pcopy)) : NULL;
        free(pcopy);
        n++;
        if (!files[n - 1].dir) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory loading kubeconfig");
            goto out;
        }
    }
    if (n == 0) {
        rc = vmop_fail(err, VMOP_E_NOT_FOUND, "no kubeconfig file found in '%s'", path_list);
        goto out;
    }
    rc = build_config(files, n, context, ret_cfg, err);
out:
    for (size_t i = 0; i < n; i++) {
        cJSON_Delete(files[i].doc);
        free(files[i].dir);
    }
    free(list);
    return rc;
}

vmop_rc kube_config_incluster(const char *dir, struct kube_config **ret_cfg, struct vmop_err *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    vmop_rc rc = VMOP_OK;
    char *path = NULL, *ns = NULL;
    size_t len;
    struct kube_config *cfg = NULL;
    if (!host || !*host || !port || !*port)
        return vmop_fail(err, VMOP_E_NOT_FOUND,
                         "not in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set");
    if (!dir)
        dir = KUBE_INCLUSTER_DIR;
    cfg = calloc(1, sizeof(*cfg));
    struct vbuf b;
    vbuf_init(&b, 1024);
    if (strchr(host, ':'))
        vbuf_addf(&b, "https://[%s]:%s", host, port); /* IPv6 */
    else
        vbuf_addf(&b, "https://%s:%s", host, port);
    if (!cfg || vbuf_error(&b)) {
        vbuf_free(&b);
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory loading in-cluster config");
        goto out;
    }
    cfg->server = vbuf_take(&b);
    cfg->token_file = resolve_path(dir, "token");
    path = resolve_path(dir, "ca.crt");
    if (!cfg->server || !cfg->token_file || !path) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory loading in-cluster config");
        goto out;
    }
    rc = kube_read_file(cfg->token_file, KUBE_CONFIG_MAX_FILE, &cfg->token, &len, err);
    if (rc)
        goto out;
    while (len && (cfg->token[len - 1] == '\n' || cfg->token[len - 1] == '\r'))
        cfg->token[--len] = '\0';
    if ((rc = kube_read_file(path, KUBE_CONFIG_MAX_FILE, &cfg->ca.data, &cfg->ca.len, err)))
        goto out;
    free(path);
    path = resolve_path(dir, "namespace");
    if (!path) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory loading in-cluster config");
        goto out;
    }
    struct vmop_err nerr = {0};
    if (kube_read_file(path, 256, &ns, &len, &nerr) == VMOP_OK) {
        while (len && (ns[len - 1] == '\n' || ns[len - 1] == '\r' || ns[len - 1] == ' '))
            ns[--len] = '\0';
    }
    rc = dup_str(&cfg->namespace, ns && *ns ? ns : "default", err);
out:
    free(path);
    free(ns);
    if (rc)
        kube_config_free(cfg);
    else
        *ret_cfg = cfg;
    return rc;
}

vmop_rc kube_config_load(const struct kube_config_opts *opts, struct kube_config **ret_cfg,
                         struct vmop_err *err)
{
    struct kube_config_opts none = {0};
    if (!opts)
        opts = &none;
    if (opts->kubeconfig && *opts->kubeconfig) {
        if (access(opts->kubeconfig, R_OK) != 0)
            return vmop_fail(err, VMOP_E_NOT_FOUND, "kubeconfig '%s' cannot be read: %s",
                             opts->kubeconfig, strerror(errno));
        return kube_config_from_files(opts->kubeconfig, opts->context, ret_cfg, err);
    }
    const char *env = getenv("KUBECONFIG");
    if (env && *env)
        return kube_config_from_files(env, opts->context, ret_cfg, err);
    if (!opts->no_incluster && getenv("KUBERNETES_SERVICE_HOST") &&
        getenv("KUBERNETES_SERVICE_PORT"))
        return kube_config_incluster(opts->incluster_dir, ret_cfg, err);
    const char *home = getenv("HOME");
    if (!home || !*home)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "no kubeconfig: KUBECONFIG and HOME are unset");
    struct vbuf b;
    vbuf_init(&b, 4096);
    vbuf_addf(&b, "%s/.kube/config", home);
    if (vbuf_error(&b)) {
        vbuf_free(&b);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory loading kubeconfig");
    }
    vmop_rc rc = kube_config_from_files(vbuf_str(&b), opts->context, ret_cfg, err);
    vbuf_free(&b);
    return rc;
}
