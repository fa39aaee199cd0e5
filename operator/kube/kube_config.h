/* kube_config.h: how to reach a Kubernetes API server: kubeconfig files and in-cluster config.
 *
 * Loading order of kube_config_load() (controller-runtime's): an explicit kubeconfig path, else the
 * KUBECONFIG list (colon-separated, merged: for each named cluster/user/context and for
 * current-context the first file that has it wins), else in-cluster when KUBERNETES_SERVICE_HOST
 * and _PORT are set, else ~/.kube/config.
 *
 * Key material (CA, client certificate and key) is held in memory only and handed to libcurl as
 * blobs; nothing is written to temporary files. Tokens and keys are zeroed when freed and never
 * appear in error messages.
 */
#ifndef KUBE_CONFIG_H
#define KUBE_CONFIG_H

#include <stddef.h>

#include "vmop_err.h"

#define KUBE_CONFIG_MAX_FILE ((size_t)4 << 20) /* kubeconfig, certificate, key and token files */
#define KUBE_INCLUSTER_DIR   "/var/run/secrets/kubernetes.io/serviceaccount"

/* A byte string (PEM data); data is NUL-terminated, len excludes the NUL. */
struct kube_blob {
    char *data; /* owned; NULL when absent */
    size_t len;
};

/* Everything is owned by the struct and freed by kube_config_free(). Read-only after loading. */
struct kube_config {
    char *server;          /* "https://host:port" (no trailing slash) */
    char *namespace;       /* the context's namespace, or "default" */
    char *context;         /* the context's name, or NULL (in-cluster) */
    char *tls_server_name; /* parsed for completeness; not used (libcurl has no SNI override) */
    int insecure_skip_tls_verify;
    struct kube_blob ca;          /* PEM bundle; empty: the system store */
    struct kube_blob client_cert; /* PEM */
    struct kube_blob client_key;  /* PEM; secret */
    char *token;                  /* bearer token; secret; may be NULL */
    char *token_file; /* when set, the client re-reads the token from here (at most once a minute
                       * and after a 401) */
    char *username;   /* basic auth (rare); secret password below */
    char *password;
};

struct kube_config_opts {
    const char *kubeconfig;    /* explicit path (--kubeconfig); NULL: KUBECONFIG / in-cluster / ~ */
    const char *context;       /* override current-context; NULL: use current-context */
    const char *incluster_dir; /* NULL: KUBE_INCLUSTER_DIR (tests point it elsewhere) */
    int no_incluster;          /* do not consider in-cluster configuration */
};

/* Loads according to the order above. *ret_cfg: owned, kube_config_free(). */
vmop_rc kube_config_load(const struct kube_config_opts *opts, struct kube_config **ret_cfg,
                         struct vmop_err *err);

/* One or more kubeconfig files (colon-separated list, merged as KUBECONFIG). Missing files in a
 * list are skipped like kubectl does, unless none exists (VMOP_E_NOT_FOUND). */
vmop_rc kube_config_from_files(const char *path_list, const char *context,
                               struct kube_config **ret_cfg, struct vmop_err *err);

/* A kubeconfig held in memory (YAML or JSON). base_dir resolves relative file paths (NULL: cwd). */
vmop_rc kube_config_from_buffer(const char *data, size_t len, const char *base_dir,
                                const char *context, struct kube_config **ret_cfg,
                                struct vmop_err *err);

/* In-cluster: KUBERNETES_SERVICE_HOST/PORT and dir/{token,ca.crt,namespace}. dir NULL: the
 * standard path. VMOP_E_NOT_FOUND when the environment variables are not set. */
vmop_rc kube_config_incluster(const char *dir, struct kube_config **ret_cfg, struct vmop_err *err);

/* NULL-safe; zeroes secrets. */
void kube_config_free(struct kube_config *cfg);

#endif
