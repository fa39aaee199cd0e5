/* wh_tls.c: certificate files -> SSL_CTX, and reloading (see wh_tls.h).
 *
 * TLS 1.2 and 1.3 only (the API server's webhook client speaks both), no renegotiation, ALPN
 * "http/1.1" (the API server offers h2 too; picking http/1.1 keeps it on HTTP/1.1).
 */
#include "wh_tls.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/err.h>

#include "wh_limits.h"

struct file_id {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
    int ok; /* stat() succeeded */
};

struct wh_tls {
    char crt[4096], key[4096]; /* paths; immutable after wh_tls_new */
    pthread_mutex_t lock;
    SSL_CTX *ctx;                        /* guarded by lock: the current context (one ref) */
    struct file_id loaded[2];            /* guarded: the files ctx was made from */
    struct file_id failed[2];            /* guarded: the last version that failed to load */
    unsigned long n_reloads, n_failures; /* guarded */
};

static void file_id_get(const char *path, struct file_id *id)
{
    struct stat st;
    memset(id, 0, sizeof(*id));
    if (stat(path, &st) != 0)
        return;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    id->size = st.st_size;
    id->mtime = st.st_mtim;
    id->ctime = st.st_ctim;
    id->ok = 1;
}

static int file_id_eq(const struct file_id *a, const struct file_id *b)
{
    return a->ok == b->ok && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
           a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    static const unsigned char http11[] = "\x08http/1.1";
    unsigned char *sel = NULL;
    (void)ssl;
    (void)arg;
    if (SSL_select_next_proto(&sel, outlen, http11, sizeof(http11) - 1, in, inlen) !=
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK; /* no ALPN agreement: carry on without one */
    *out = sel;
    return SSL_TLSEXT_ERR_OK;
}

/* The first OpenSSL error as text (never secret: names of PEM/ASN.1 failures). */
static const char *ssl_reason(char *buf, size_t n)
{
    unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (!e) {
        snprintf(buf, n, "unknown error");
        return buf;
    }
    ERR_error_string_n(e, buf, n);
    return buf;
}

static vmop_rc load(const struct wh_tls *t, const struct file_id ids[2], SSL_CTX **ret,
                    struct vmop_err *err)
{
    char why[256];
    SSL_CTX *ctx;

    if (!ids[0].ok || !ids[1].ok)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "webhook certificate: %s is missing",
                         ids[0].ok ? t->key : t->crt);
    if ((size_t)ids[0].size > WH_MAX_CERT_FILE || (size_t)ids[1].size > WH_MAX_CERT_FILE)
        return vmop_fail(err, VMOP_E_TOOBIG, "webhook certificate: file over %zu bytes",
                         WH_MAX_CERT_FILE);
    ERR_clear_error();
    ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx)
        return vmop_fail(err, VMOP_E_NOMEM, "webhook certificate: SSL_CTX_new failed");
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
    if (SSL_CTX_use_certificate_chain_file(ctx, t->crt) != 1) {
        vmop_fail(err, VMOP_E_TLS, "webhook certificate %s: %s", t->crt,
                  ssl_reason(why, sizeof(why)));
        goto fail;
    }
    /* the key's contents never reach a message: only OpenSSL's error name */
    if (SSL_CTX_use_PrivateKey_file(ctx, t->key, SSL_FILETYPE_PEM) != 1) {
        vmop_fail(err, VMOP_E_TLS, "webhook key %s: %s", t->key, ssl_reason(why, sizeof(why)));
        goto fail;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        vmop_fail(err, VMOP_E_TLS, "webhook key %s does not match certificate %s", t->key, t->crt);
        goto fail;
    }
    ERR_clear_error();
    *ret = ctx;
    return VMOP_OK;
fail:
    ERR_clear_error();
    SSL_CTX_free(ctx);
    return err->rc;
}

vmop_rc wh_tls_new(const char *dir, struct wh_tls **ret, struct vmop_err *err)
{
    struct wh_tls *t;
    struct file_id ids[2];
    vmop_rc rc;

    if (!dir || !*dir)
        return vmop_fail(err, VMOP_E_INVALID, "webhook certificate directory is empty");
    t = calloc(1, sizeof(*t));
    if (!t)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    if ((size_t)snprintf(t->crt, sizeof(t->crt), "%s/tls.crt", dir) >= sizeof(t->crt) ||
        (size_t)snprintf(t->key, sizeof(t->key), "%s/tls.key", dir) >= sizeof(t->key)) {
        free(t);
        return vmop_fail(err, VMOP_E_INVALID, "webhook certificate directory name too long");
    }
    file_id_get(t->crt, &ids[0]);
    file_id_get(t->key, &ids[1]);
    rc = load(t, ids, &t->ctx, err);
    if (rc) {
        free(t);
        return rc;
    }
    memcpy(t->loaded, ids, sizeof(ids));
    t->failed[0].ok = t->failed[1].ok = -1; /* matches no stat() result */
    pthread_mutex_init(&t->lock, NULL);
    *ret = t;
    return VMOP_OK;
}

void wh_tls_free(struct wh_tls *t)
{
    if (!t)
        return;
    SSL_CTX_free(t->ctx);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

SSL_CTX *wh_tls_ctx_get(struct wh_tls *t, struct vmop_err *ret_reload_err)
{
    struct file_id ids[2];
    struct vmop_err e = {0};
    SSL_CTX *ctx = NULL, *old = NULL;

    /* two stat() calls per new connection: cheap next to a TLS handshake */
    file_id_get(t->crt, &ids[0]);
    file_id_get(t->key, &ids[1]);
    pthread_mutex_lock(&t->lock);
    if (!(file_id_eq(&ids[0], &t->loaded[0]) && file_id_eq(&ids[1], &t->loaded[1])) &&
        !(file_id_eq(&ids[0], &t->failed[0]) && file_id_eq(&ids[1], &t->failed[1]))) {
        /* Loading under the lock: a few ms once per rotation, and two threads never load the
         * same change twice. */
        if (load(t, ids, &ctx, &e) == VMOP_OK) {
            old = t->ctx;
            t->ctx = ctx;
            memcpy(t->loaded, ids, sizeof(ids));
            t->failed[0].ok = t->failed[1].ok = -1;
            t->n_reloads++;
        } else {
            memcpy(t->failed, ids, sizeof(ids));
            t->n_failures++;
            if (ret_reload_err)
                *ret_reload_err = e;
        }
    }
    ctx = t->ctx;
    SSL_CTX_up_ref(ctx);
    pthread_mutex_unlock(&t->lock);
    SSL_CTX_free(old); /* connections made from it hold their own references */
    return ctx;
}

void wh_tls_counts(struct wh_tls *t, unsigned long *ret_reloads, unsigned long *ret_failures)
{
    pthread_mutex_lock(&t->lock);
    *ret_reloads = t->n_reloads;
    *ret_failures = t->n_failures;
    pthread_mutex_unlock(&t->lock);
}
