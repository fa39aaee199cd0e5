/* vim_http.c: the libcurl transport of vimclient. No knowledge of SOAP or REST.
 *
 * Owns: the pool of easy handles (each reused, so connections persist), the share object that
 * gives every handle the same cookie jar (the SOAP session cookie), TLS policy (CA verification by
 * default, a thumbprint pin, or nothing when insecure was asked for), per-request timeouts and the
 * response size cap.
 *
 * Threads: a handle is used by one request at a time; the pool (idle list and counts) is guarded
 * by pool_lock; the share's cookie data by share_lock. A caller that finds every handle busy waits
 * on pool_cond, bounded by its request timeout.
 *
 * Thumbprint pinning: CURLOPT_SSL_CTX_FUNCTION installs an OpenSSL certificate verify callback
 * that accepts the server only if the leaf certificate's SHA-1 (20-byte pin) or SHA-256 (32-byte
 * pin) digest matches, compared in constant time. It runs during the handshake, before any request
 * byte is sent. The CA chain and host name are then not checked (as vCenter thumbprints intend).
 */
#include "vim_internal.h"
#include "vmop_clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

/* ---- pool -------------------------------------------------------------------------------------
 */

static void share_lock_cb(CURL *h, curl_lock_data data, curl_lock_access access, void *userp)
{
    struct vim_client *c = userp;
    (void)h;
    (void)data;
    (void)access;
    pthread_mutex_lock(&c->share_lock);
}

static void share_unlock_cb(CURL *h, curl_lock_data data, void *userp)
{
    struct vim_client *c = userp;
    (void)h;
    (void)data;
    pthread_mutex_unlock(&c->share_lock);
}

vmop_rc vim_http_init(struct vim_client *c, struct vmop_err *err)
{
    const curl_version_info_data *vi;

    /* curl_global_init is documented as not thread-safe; callers (main, tests) should call it
     * first; doing it here too is harmless when it already ran (it is reference counted). */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return vmop_fail(err, VMOP_E_INTERNAL, "curl_global_init failed");
    c->n_busy = 0;
    c->n_idle = 0;
    c->idle = calloc((size_t)c->max_connections, sizeof(*c->idle));
    if (!c->idle) {
        curl_global_cleanup();
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    }
    vi = curl_version_info(CURLVERSION_NOW);
    if (c->pin_len && (!vi->ssl_version || strncmp(vi->ssl_version, "OpenSSL", 7) != 0)) {
        free(c->idle);
        c->idle = NULL;
        curl_global_cleanup();
        return vmop_fail(err, VMOP_E_UNSUPPORTED,
                         "thumbprint pinning needs libcurl built with OpenSSL (this one uses %s)",
                         vi->ssl_version ? vi->ssl_version : "no TLS");
    }
    c->share = curl_share_init();
    if (!c->share || curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock_cb) ||
        curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock_cb) ||
        curl_share_setopt(c->share, CURLSHOPT_USERDATA, c) ||
        curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE) ||
        curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS)) {
        if (c->share)
            curl_share_cleanup(c->share);
        c->share = NULL;
        free(c->idle);
        c->idle = NULL;
        curl_global_cleanup();
        return vmop_fail(err, VMOP_E_INTERNAL, "cannot set up the libcurl share object");
    }
    return VMOP_OK;
}

void vim_http_cleanup(struct vim_client *c)
{
    if (!c->idle && !c->share)
        return;
    for (int i = 0; i < c->n_idle; i++)
        curl_easy_cleanup(c->idle[i]);
    free(c->idle);
    c->idle = NULL;
    c->n_idle = 0;
    if (c->share)
        curl_share_cleanup(c->share);
    c->share = NULL;
    curl_global_cleanup();
}

static CURLcode handle_setup(struct vim_client *c, CURL *h);

/* Borrows a handle: an idle one, a new one while under max_connections, or waits (bounded). */
static vmop_rc pool_get(struct vim_client *c, long wait_ms, CURL **ret_h, struct vmop_err *err)
{
    struct timespec until;
    CURL *h = NULL;
    vmop_rc rc = VMOP_OK;
    int create = 0;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += wait_ms / 1000;
    until.tv_nsec += (wait_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&c->pool_lock);
    while (c->n_idle == 0 && c->n_busy >= c->max_connections) {
        if (pthread_cond_timedwait(&c->pool_cond, &c->pool_lock, &until) == ETIMEDOUT &&
            c->n_idle == 0 && c->n_busy >= c->max_connections) {
            rc = vmop_fail(err, VMOP_E_TIMEOUT, "all %d vCenter connections stayed busy for %ld ms",
                           c->max_connections, wait_ms);
            break;
        }
    }
    if (rc == VMOP_OK) {
        if (c->n_idle > 0)
            h = c->idle[--c->n_idle];
        else
            create = 1;
        c->n_busy++;
    }
    pthread_mutex_unlock(&c->pool_lock);
    if (rc != VMOP_OK)
        return rc;
    if (create) {
        h = curl_easy_init();
        if (h && handle_setup(c, h) != CURLE_OK) {
            curl_easy_cleanup(h);
            h = NULL;
        }
    }
    if (!h) {
        pthread_mutex_lock(&c->pool_lock);
        c->n_busy--;
        pthread_cond_signal(&c->pool_cond);
        pthread_mutex_unlock(&c->pool_lock);
        return vmop_fail(err, VMOP_E_INTERNAL, "cannot set up a libcurl handle");
    }
    *ret_h = h;
    return VMOP_OK;
}

/* Returns a handle; discard = 1 closes it instead (after an aborted transfer). */
static void pool_put(struct vim_client *c, CURL *h, int discard)
{
    pthread_mutex_lock(&c->pool_lock);
    c->n_busy--;
    if (!discard && c->n_idle < c->max_connections) {
        c->idle[c->n_idle++] = h;
        h = NULL;
    }
    pthread_cond_signal(&c->pool_cond);
    pthread_mutex_unlock(&c->pool_lock);
    if (h)
        curl_easy_cleanup(h);
}

/* ---- TLS pinning ------------------------------------------------------------------------------
 */

/* Replaces OpenSSL's chain verification: the leaf's digest must equal the pin. */
static int pin_verify_cb(X509_STORE_CTX *store, void *arg)
{
    const struct vim_client *c = arg;
    X509 *leaf = X509_STORE_CTX_get0_cert(store);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    const EVP_MD *type = c->pin_len == 20 ? EVP_sha1() : EVP_sha256();

    if (!leaf || !X509_digest(leaf, type, md, &md_len) || md_len != c->pin_len ||
        CRYPTO_memcmp(md, c->pin, c->pin_len) != 0) {
        X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED);
        return 0;
    }
    return 1;
}

static CURLcode ssl_ctx_cb(CURL *h, void *ssl_ctx, void *userp)
{
    SSL_CTX *ctx = ssl_ctx;
    (void)h;
    /* libcurl was told not to verify (VERIFYPEER=0), which sets SSL_VERIFY_NONE: a failed
     * verification would then be ignored. Turn it back on with our callback doing the check. */
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_cert_verify_callback(ctx, pin_verify_cb, userp);
    return CURLE_OK;
}

/* ---- one request ------------------------------------------------------------------------------
 */

static size_t write_cb(char *data, size_t size, size_t nmemb, void *userp)
{
    struct vbuf *b = userp;
    size_t n = size * nmemb;
    if (vbuf_add(b, data, n) != VMOP_OK)
        return 0; /* aborts the transfer: CURLE_WRITE_ERROR */
    return n;
}

static int xferinfo_cb(void *userp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    const int *cancel = userp;
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    return cancel && __atomic_load_n(cancel, __ATOMIC_ACQUIRE) ? 1 : 0;
}

static vmop_rc map_curl_error(CURLcode cc, const char *method, const char *url, const char *errbuf,
                              const struct vbuf *body, struct vmop_err *err)
{
    const char *detail = errbuf[0] ? errbuf : curl_easy_strerror(cc);
    vmop_rc rc;

    switch (cc) {
    case CURLE_OPERATION_TIMEDOUT:
        rc = VMOP_E_TIMEOUT;
        break;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_USE_SSL_FAILED:
        rc = VMOP_E_TLS;
        break;
    case CURLE_ABORTED_BY_CALLBACK:
        rc = VMOP_E_CANCELED;
        break;
    case CURLE_WRITE_ERROR:
        if (vbuf_error(body) == VMOP_E_TOOBIG)
            return vmop_fail(err, VMOP_E_TOOBIG, "%s %s: response larger than %zu bytes", method,
                             url, body->max);
        rc = vbuf_error(body) == VMOP_E_NOMEM ? VMOP_E_NOMEM : VMOP_E_TRANSPORT;
        break;
    case CURLE_OUT_OF_MEMORY:
        rc = VMOP_E_NOMEM;
        break;
    default:
        rc = VMOP_E_TRANSPORT;
        break;
    }
    return vmop_fail(err, rc, "%s %s: %s", method, url, detail);
}

/* Options that never change for a handle: set once when it is made. Per-request options are set
 * by vim_http_do on every use (curl_easy_reset is avoided: it would drop the cookie engine set-up
 * and, in libcurl 7.88, leak the cookie file list). */
static CURLcode handle_setup(struct vim_client *c, CURL *h)
{
    CURLcode cc = curl_easy_setopt(h, CURLOPT_SHARE, c->share);
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_COOKIEFILE, ""); /* in-memory cookie engine */
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    /* TLS policy */
    if (!cc && c->insecure) {
        cc = curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        if (!cc)
            cc = curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (!cc && c->pin_len) {
        cc = curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        if (!cc)
            cc = curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
        if (!cc)
            cc = curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, ssl_ctx_cb);
        if (!cc)
            cc = curl_easy_setopt(h, CURLOPT_SSL_CTX_DATA, c);
        /* A resumed TLS session skips the certificate check; the pin must run every time. */
        if (!cc)
            cc = curl_easy_setopt(h, CURLOPT_SSL_SESSIONID_CACHE, 0L);
    } else if (!cc) {
        cc = curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
        if (!cc)
            cc = curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
        if (!cc && c->ca_file)
            cc = curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
    }
    return cc;
}

static int is_token_char(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z');
}

vmop_rc vim_http_do(struct vim_client *c, const struct vim_http_req *req,
                    struct vim_http_resp *resp, struct vmop_err *err)
{
    char errbuf[CURL_ERROR_SIZE];
    struct curl_slist *hdrs = NULL, *tmp;
    struct vbuf url = {0};
    CURL *h = NULL;
    CURLcode cc = CURLE_OK;
    vmop_rc rc;
    long timeout = req->timeout_ms > 0 ? req->timeout_ms : c->timeout_ms;
    long long start = vmop_mono_ms(), waited;
    int discard = 0;

    enum vim_fault fault = VIM_FAULT_NONE;

    vbuf_init(&resp->body,
              req->max_body && req->max_body < VIM_MAX_RESPONSE ? req->max_body : VIM_MAX_RESPONSE);
    resp->status = 0;
    if (!req->method || !req->path || req->path[0] != '/')
        return vmop_fail(err, VMOP_E_INVALID, "vim_http_do: bad method or path");
    if (c->fault)
        fault = c->fault(c->fault_ud, __atomic_add_fetch(&c->n_http, 1, __ATOMIC_RELAXED),
                         req->method, req->path);
    if (fault == VIM_FAULT_BEFORE)
        return vmop_fail(err, VMOP_E_TRANSPORT, "%s %s: injected failure before sending",
                         req->method, req->path);
    for (const char *m = req->method; *m; m++)
        if (!is_token_char(*m))
            return vmop_fail(err, VMOP_E_INVALID, "vim_http_do: bad method");

    vbuf_init(&url, 8192);
    vbuf_adds(&url, c->base_url);
    vbuf_adds(&url, req->path);
    if (vbuf_error(&url)) {
        rc = vmop_fail(err, vbuf_error(&url), "request URL too long");
        goto out;
    }

    rc = pool_get(c, timeout, &h, err);
    if (rc != VMOP_OK)
        goto out;
    waited = vmop_mono_ms() - start;
    if (waited >= timeout) {
        rc = vmop_fail(err, VMOP_E_TIMEOUT, "%s %s: no connection free within %ld ms", req->method,
                       vbuf_str(&url), timeout);
        goto out;
    }

    errbuf[0] = '\0';
    tmp = curl_slist_append(hdrs, "Expect:"); /* never wait for 100-continue */
    hdrs = tmp ? tmp : hdrs;
    if (req->content_type) {
        struct vbuf ct;
        vbuf_init(&ct, 1024);
        vbuf_addf(&ct, "Content-Type: %s", req->content_type);
        tmp = vbuf_error(&ct) ? NULL : curl_slist_append(hdrs, vbuf_str(&ct));
        vbuf_free(&ct);
        if (!tmp) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory building headers");
            goto out;
        }
        hdrs = tmp;
    }
    for (const char *const *hp = req->headers; hp && *hp; hp++) {
        tmp = curl_slist_append(hdrs, *hp);
        if (!tmp) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory building headers");
            goto out;
        }
        hdrs = tmp;
    }

    cc = curl_easy_setopt(h, CURLOPT_URL, vbuf_str(&url));
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout - waited));
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp->body);
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)req->cancel);
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_NOPROGRESS, req->cancel ? 0L : 1L);
    /* method and body */
    if (!cc && strcmp(req->method, "GET") == 0 && !req->body) {
        cc = curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        if (!cc)
            cc = curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, NULL);
    } else if (!cc) {
        cc = curl_easy_setopt(h, CURLOPT_POST, 1L);
        if (!cc)
            cc = curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body ? req->body : "");
        if (!cc)
            cc = curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                                  (curl_off_t)(req->body ? req->body_len : 0));
        if (!cc)
            cc = curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST,
                                  strcmp(req->method, "POST") != 0 ? req->method : NULL);
    }
    /* Basic credentials only for this request (a reused handle must not keep sending them). */
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_USERNAME, req->basic_user);
    if (!cc)
        cc = curl_easy_setopt(h, CURLOPT_PASSWORD,
                              req->basic_user ? (req->basic_password ? req->basic_password : "")
                                              : NULL);
    if (cc) {
        discard = 1;
        rc = vmop_fail(err, cc == CURLE_NOT_BUILT_IN ? VMOP_E_UNSUPPORTED : VMOP_E_INTERNAL,
                       "%s %s: cannot set up the request: %s", req->method, vbuf_str(&url),
                       curl_easy_strerror(cc));
        goto out;
    }

    cc = curl_easy_perform(h);
    if (cc != CURLE_OK) {
        discard = cc == CURLE_ABORTED_BY_CALLBACK || cc == CURLE_WRITE_ERROR;
        rc = map_curl_error(cc, req->method, vbuf_str(&url), errbuf, &resp->body, err);
        vbuf_free(&resp->body);
        vbuf_init(&resp->body, VIM_MAX_RESPONSE);
        goto out;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
    rc = VMOP_OK;
    if (fault == VIM_FAULT_AFTER) { /* vCenter did it; the caller never hears */
        discard = 1;
        resp->status = 0;
        vbuf_reset(&resp->body);
        rc = vmop_fail(err, VMOP_E_TRANSPORT, "%s %s: injected loss of the response", req->method,
                       req->path);
    }
out:
    if (h) {
        /* Drop pointers into this call's stack and buffers before the handle is reused. */
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, NULL);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, NULL);
        curl_easy_setopt(h, CURLOPT_PASSWORD, NULL); /* drop libcurl's copy of a password */
        pool_put(c, h, discard);
    }
    curl_slist_free_all(hdrs);
    vbuf_free(&url);
    return rc;
}

void vim_http_clear_cookies(struct vim_client *c)
{
    /* Any handle attached to the share clears the shared jar; a throwaway one avoids taking a
     * pool slot (and waiting for one). */
    CURL *h = curl_easy_init();
    if (!h)
        return;
    if (curl_easy_setopt(h, CURLOPT_SHARE, c->share) == CURLE_OK)
        curl_easy_setopt(h, CURLOPT_COOKIELIST, "ALL");
    curl_easy_cleanup(h);
}
