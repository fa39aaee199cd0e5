/* connections.c: the per-endpoint vim_client cache (see connections.h). */
#include "connections.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_secret.h"

#define VC_MAX_ENDPOINTS 64
#define VC_MAX_CRED      4096

struct vc_conn {
    struct vcenters *owner;
    char endpoint[256];
    unsigned char fp[32];
    struct vim_client *client;
    void *attached;   /* vcenters_opts.attachment's state */
    char ca_path[64]; /* "" when no CA file */
    int refs;         /* under owner->mu */
    int retired;
};

struct vcenters {
    pthread_mutex_t mu;
    struct vcenters_opts o;
    struct vc_conn *live[VC_MAX_ENDPOINTS];
    size_t n_live;
    struct vim_stats retired_stats;
    uint64_t built;
};

vmop_rc vcenters_new(const struct vcenters_opts *o, struct vcenters **ret, struct vmop_err *err)
{
    struct vcenters *v = calloc(1, sizeof(*v));
    if (!v)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    pthread_mutex_init(&v->mu, NULL);
    if (o)
        v->o = *o;
    *ret = v;
    return VMOP_OK;
}

static void add_stats(struct vim_stats *acc, const struct vim_stats *s)
{
    acc->soap_calls += s->soap_calls;
    acc->rest_calls += s->rest_calls;
    acc->logins += s->logins;
    acc->relogins += s->relogins;
}

/* Frees a connection nobody uses any more; called without the lock. */
static void conn_destroy(struct vc_conn *c)
{
    if (c->attached && c->owner->o.attachment.detach)
        c->owner->o.attachment.detach(c->attached);
    vim_client_free(c->client);
    if (c->ca_path[0])
        unlink(c->ca_path);
    free(c);
}

void vcenters_free(struct vcenters *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n_live; i++)
        conn_destroy(v->live[i]);
    pthread_mutex_destroy(&v->mu);
    free(v);
}

/* A credential from the endpoint's Secret (api_secret.h) into a malloc'd string. */
static vmop_rc secret_value(const cJSON *secret, const char *key, char **ret, struct vmop_err *err)
{
    vmop_rc rc = api_secret_value(secret, key, VC_MAX_CRED, ret, NULL, NULL);
    if (rc == VMOP_E_NOMEM)
        return vmop_fail(err, rc, "out of memory");
    if (rc == VMOP_E_NOT_FOUND || rc == VMOP_E_TOOBIG)
        return vmop_fail(err, VMOP_E_INVALID, "credentials Secret has no key '%s'", key);
    if (rc != VMOP_OK)
        return vmop_fail(err, VMOP_E_INVALID, "credentials Secret key '%s' is not base64", key);
    return VMOP_OK;
}

static void fingerprint(const struct api_endpoint *ep, const char *user, const char *pass,
                        unsigned char out[32])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    const char *parts[6] = {
        ep->server, ep->thumbprint, ep->ca_bundle, ep->insecure ? "1" : "0", user, pass};
    unsigned len = 32;
    memset(out, 0, 32);
    if (!ctx)
        return;
    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
    for (size_t i = 0; i < 6; i++) {
        const char *p = parts[i] ? parts[i] : "";
        EVP_DigestUpdate(ctx, p, strlen(p) + 1);
    }
    EVP_DigestFinal_ex(ctx, out, &len);
    EVP_MD_CTX_free(ctx);
}

static vmop_rc write_ca(const char *pem, char path[64], struct vmop_err *err)
{
    int fd;
    size_t len = strlen(pem), off = 0;
    snprintf(path, 64, "/tmp/vmop-ca-XXXXXX");
    fd = mkstemp(path);
    if (fd < 0) {
        path[0] = '\0';
        return vmop_fail(err, VMOP_E_INTERNAL, "cannot create a temporary CA file");
    }
    while (off < len) {
        ssize_t w = write(fd, pem + off, len - off);
        if (w <= 0) {
            close(fd);
            unlink(path);
            path[0] = '\0';
            return vmop_fail(err, VMOP_E_INTERNAL, "cannot write the temporary CA file");
        }
        off += (size_t)w;
    }
    close(fd);
    return VMOP_OK;
}

static struct vc_conn *find_live(struct vcenters *v, const char *name, size_t *ret_i)
{
    for (size_t i = 0; i < v->n_live; i++) {
        if (!strcmp(v->live[i]->endpoint, name)) {
            *ret_i = i;
            return v->live[i];
        }
    }
    return NULL;
}

/* Removes live[i] from the table; returns it if nobody uses it (caller destroys it). */
static struct vc_conn *retire_locked(struct vcenters *v, size_t i)
{
    struct vc_conn *c = v->live[i];
    struct vim_stats s;
    v->live[i] = v->live[--v->n_live];
    c->retired = 1;
    if (c->refs > 0)
        return NULL;
    vim_client_stats(c->client, &s);
    add_stats(&v->retired_stats, &s);
    return c;
}

vmop_rc vcenters_get(struct vcenters *v, const struct api_endpoint *ep, const cJSON *secret,
                     struct vc_conn **ret, struct vmop_err *err)
{
    char *user = NULL, *pass = NULL;
    unsigned char fp[32];
    struct vc_conn *c = NULL, *old = NULL, *dead = NULL;
    size_t i = 0;
    vmop_rc rc;
    struct vim_config cfg;

    if (!ep || !ep->name || !ep->server)
        return vmop_fail(err, VMOP_E_INVALID, "VCenterEndpoint has no server");
    if (!secret)
        return vmop_fail(err, VMOP_E_NOT_FOUND,
                         "credentials Secret '%s' of VCenterEndpoint %s "
                         "not found",
                         ep->secret_name ? ep->secret_name : "", ep->name);
    rc = secret_value(secret, ep->username_key ? ep->username_key : "username", &user, err);
    if (rc == VMOP_OK)
        rc = secret_value(secret, ep->password_key ? ep->password_key : "password", &pass, err);
    if (rc != VMOP_OK)
        goto out;
    fingerprint(ep, user, pass, fp);

    pthread_mutex_lock(&v->mu);
    old = find_live(v, ep->name, &i);
    if (old && !memcmp(old->fp, fp, sizeof(fp))) {
        old->refs++;
        pthread_mutex_unlock(&v->mu);
        *ret = old;
        goto out;
    }
    pthread_mutex_unlock(&v->mu);

    c = calloc(1, sizeof(*c));
    if (!c) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    snprintf(c->endpoint, sizeof(c->endpoint), "%s", ep->name);
    memcpy(c->fp, fp, sizeof(fp));
    c->owner = v;
    memset(&cfg, 0, sizeof(cfg));
    cfg.url = ep->server;
    cfg.username = user;
    cfg.password = pass;
    cfg.thumbprint = ep->thumbprint;
    cfg.insecure = ep->insecure;
    cfg.timeout_ms = v->o.timeout_ms;
    cfg.max_connections = v->o.max_connections;
    if (ep->ca_bundle && *ep->ca_bundle) {
        rc = write_ca(ep->ca_bundle, c->ca_path, err);
        if (rc != VMOP_OK)
            goto out;
        cfg.ca_file = c->ca_path;
    }
    rc = vim_client_new(&cfg, &c->client, err);
    if (rc != VMOP_OK)
        goto out;
    if (v->o.attachment.attach) {
        rc = v->o.attachment.attach(c->client, v->o.attachment.arg, &c->attached, err);
        if (rc != VMOP_OK)
            goto out;
    }

    pthread_mutex_lock(&v->mu);
    old = find_live(v, ep->name, &i);
    if (old && !memcmp(old->fp, fp, sizeof(fp))) {
        /* another thread built the same one meanwhile: use it */
        old->refs++;
        pthread_mutex_unlock(&v->mu);
        conn_destroy(c);
        c = NULL;
        *ret = old;
        goto out;
    }
    if (old)
        dead = retire_locked(v, i);
    if (v->n_live >= VC_MAX_ENDPOINTS) {
        pthread_mutex_unlock(&v->mu);
        rc = vmop_fail(err, VMOP_E_TOOBIG, "more than %d VCenterEndpoints", VC_MAX_ENDPOINTS);
        goto out;
    }
    c->refs = 1;
    v->live[v->n_live++] = c;
    v->built++;
    pthread_mutex_unlock(&v->mu);
    *ret = c;
    c = NULL;
out:
    if (dead)
        conn_destroy(dead);
    if (c)
        conn_destroy(c);
    vmop_free_secret(user);
    vmop_free_secret(pass);
    return rc;
}

void vcenters_forget(struct vcenters *v, const char *endpoint)
{
    struct vc_conn *dead = NULL;
    size_t i;
    pthread_mutex_lock(&v->mu);
    if (find_live(v, endpoint, &i))
        dead = retire_locked(v, i);
    pthread_mutex_unlock(&v->mu);
    if (dead)
        conn_destroy(dead);
}

struct vim_client *vc_conn_client(const struct vc_conn *c)
{
    return c->client;
}

void *vc_conn_attached(const struct vc_conn *c)
{
    return c->attached;
}

const char *vc_conn_endpoint(const struct vc_conn *c)
{
    return c->endpoint;
}

void vc_conn_put(struct vc_conn *c)
{
    struct vcenters *v;
    int destroy = 0;
    if (!c)
        return;
    v = c->owner;
    pthread_mutex_lock(&v->mu);
    if (--c->refs == 0 && c->retired) {
        struct vim_stats s;
        vim_client_stats(c->client, &s);
        add_stats(&v->retired_stats, &s);
        destroy = 1;
    }
    pthread_mutex_unlock(&v->mu);
    if (destroy)
        conn_destroy(c);
}

void vcenters_stats(struct vcenters *v, struct vim_stats *ret, uint64_t *ret_clients)
{
    struct vim_stats acc;
    pthread_mutex_lock(&v->mu);
    acc = v->retired_stats;
    for (size_t i = 0; i < v->n_live; i++) {
        struct vim_stats s;
        vim_client_stats(v->live[i]->client, &s);
        add_stats(&acc, &s);
    }
    if (ret_clients)
        *ret_clients = v->built;
    pthread_mutex_unlock(&v->mu);
    *ret = acc;
}

vmop_rc vcenters_get_named(struct vcenters *v, struct kube_informer *endpoints,
                           struct kube_informer *secrets, const char *system_ns, const char *name,
                           struct api_endpoint **ret_ep, struct vc_conn **ret_conn,
                           struct vmop_err *err)
{
    struct kube_obj *eo = kube_informer_get(endpoints, name), *so = NULL;
    struct api_endpoint *ep = NULL;
    char key[600];
    vmop_rc rc;
    if (!eo)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "VCenterEndpoint '%s' not found", name);
    rc = api_endpoint_parse(kube_obj_json(eo), &ep, err);
    if (rc == VMOP_OK) {
        snprintf(key, sizeof(key), "%s/%s", system_ns, ep->secret_name ? ep->secret_name : "");
        so = kube_informer_get(secrets, key);
        rc = vcenters_get(v, ep, so ? kube_obj_json(so) : NULL, ret_conn, err);
    }
    kube_obj_unref(eo);
    kube_obj_unref(so);
    if (rc == VMOP_OK && ret_ep) {
        *ret_ep = ep;
        return VMOP_OK;
    }
    api_endpoint_free(ep);
    return rc;
}
