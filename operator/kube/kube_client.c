/* kube_client.c: the Kubernetes client transport: curl handle pool, TLS and auth setup, token
 * refresh, timeouts, cancellation, the retry policy and the client-side rate limit (see
 * kube_client.h; the bucket arithmetic is kube_ratelimit.c).
 * Not here: URL building and the REST verbs (kube_ops.c), watch streams (kube_watch.c).
 */
#include "kube_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "kube_ratelimit.h"
#include "kube_util.h"

#define TOKEN_REREAD_MS 60000

struct kube_client {
    /* read-only after kube_client_new() */
    char *server;
    char *ns;
    struct kube_blob ca, cert, key; /* key: secret */
    int insecure;
    char *token_file;
    char *basic_user, *basic_pass; /* secret */
    struct kube_client_opts o;     /* defaults filled in */
    char *user_agent;

    pthread_mutex_t token_lock;
    char *token;           /* guarded by token_lock; secret */
    int64_t token_read_ms; /* guarded by token_lock */

    pthread_mutex_t pool_lock;
    CURL **pool; /* guarded by pool_lock: idle handles */
    unsigned n_pool;

    pthread_mutex_t rate_lock;
    struct kube_bucket rate; /* guarded by rate_lock */

    unsigned long n_requests, n_retries;     /* atomic */
    unsigned long n_throttled, throttled_ms; /* atomic */
};

const struct kube_resource kube_res_namespaces = {"", "v1", "namespaces", 0};
const struct kube_resource kube_res_configmaps = {"", "v1", "configmaps", 1};
const struct kube_resource kube_res_secrets = {"", "v1", "secrets", 1};
const struct kube_resource kube_res_events = {"", "v1", "events", 1};
const struct kube_resource kube_res_leases = {"coordination.k8s.io", "v1", "leases", 1};
const struct kube_resource kube_res_crds = {"apiextensions.k8s.io", "v1",
                                            "customresourcedefinitions", 0};

vmop_rc kube_global_init(struct vmop_err *err)
{
    CURLcode cc = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (cc != CURLE_OK)
        return vmop_fail(err, VMOP_E_INTERNAL, "curl_global_init: %s", curl_easy_strerror(cc));
    return VMOP_OK;
}

void kube_global_cleanup(void)
{
    curl_global_cleanup();
}

static vmop_rc blob_dup(struct kube_blob *dst, const struct kube_blob *src)
{
    if (!src->data)
        return VMOP_OK;
    dst->data = malloc(src->len + 1);
    if (!dst->data)
        return VMOP_E_NOMEM;
    memcpy(dst->data, src->data, src->len + 1);
    dst->len = src->len;
    return VMOP_OK;
}

void kube_client_free(struct kube_client *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < c->n_pool; i++)
        curl_easy_cleanup(c->pool[i]);
    free(c->pool);
    free(c->server);
    free(c->ns);
    vmop_free_secret_n(c->ca.data, c->ca.len);
    vmop_free_secret_n(c->cert.data, c->cert.len);
    vmop_free_secret_n(c->key.data, c->key.len);
    free(c->token_file);
    free(c->basic_user);
    vmop_free_secret(c->basic_pass);
    vmop_free_secret(c->token);
    free(c->user_agent);
    pthread_mutex_destroy(&c->token_lock);
    pthread_mutex_destroy(&c->rate_lock);
    pthread_mutex_destroy(&c->pool_lock);
    free(c);
}

vmop_rc kube_client_new(const struct kube_config *cfg, const struct kube_client_opts *opts,
                        struct kube_client **ret_c, struct vmop_err *err)
{
    if (!cfg || !cfg->server)
        return vmop_fail(err, VMOP_E_INVALID, "kube_client_new: no server configured");
    struct kube_client *c = calloc(1, sizeof(*c));
    if (!c)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory creating the Kubernetes client");
    pthread_mutex_init(&c->token_lock, NULL);
    pthread_mutex_init(&c->pool_lock, NULL);
    pthread_mutex_init(&c->rate_lock, NULL);
    if (opts)
        c->o = *opts;
    kube_bucket_init(&c->rate, c->o.qps, c->o.burst, vmop_mono_ms());
    if (!c->o.timeout_ms)
        c->o.timeout_ms = 30000;
    if (!c->o.connect_timeout_ms)
        c->o.connect_timeout_ms = 10000;
    if (!c->o.max_retries)
        c->o.max_retries = 4;
    else if (c->o.max_retries == KUBE_NO_RETRIES)
        c->o.max_retries = 0;
    if (!c->o.retry_base_ms)
        c->o.retry_base_ms = 200;
    if (!c->o.retry_max_ms)
        c->o.retry_max_ms = 10000;
    if (!c->o.max_response)
        c->o.max_response = KUBE_DEFAULT_MAX_RESPONSE;
    if (!c->o.pool_size)
        c->o.pool_size = 8;
    c->server = strdup(cfg->server);
    c->ns = strdup(cfg->namespace ? cfg->namespace : "default");
    c->user_agent = strdup(c->o.user_agent ? c->o.user_agent : "vmop-kubeclient/0.1");
    c->o.user_agent = NULL; /* not kept: borrowed */
    c->insecure = cfg->insecure_skip_tls_verify;
    c->pool = calloc(c->o.pool_size, sizeof(*c->pool));
    int bad = !c->server || !c->ns || !c->user_agent || !c->pool;
    bad |= blob_dup(&c->ca, &cfg->ca) || blob_dup(&c->cert, &cfg->client_cert) ||
           blob_dup(&c->key, &cfg->client_key);
    if (cfg->token && !(c->token = strdup(cfg->token)))
        bad = 1;
    if (cfg->token_file && !(c->token_file = strdup(cfg->token_file)))
        bad = 1;
    if (cfg->username && !(c->basic_user = strdup(cfg->username)))
        bad = 1;
    if (cfg->password && !(c->basic_pass = strdup(cfg->password)))
        bad = 1;
    if (bad) {
        kube_client_free(c);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory creating the Kubernetes client");
    }
    c->token_read_ms = vmop_mono_ms();
    *ret_c = c;
    return VMOP_OK;
}

const char *kube_client_namespace(const struct kube_client *c)
{
    return c->ns;
}

unsigned long kube_client_requests(const struct kube_client *c)
{
    return __atomic_load_n(&c->n_requests, __ATOMIC_RELAXED);
}

unsigned long kube_client_retries(const struct kube_client *c)
{
    return __atomic_load_n(&c->n_retries, __ATOMIC_RELAXED);
}

unsigned long kube_client_throttled(const struct kube_client *c)
{
    return __atomic_load_n(&c->n_throttled, __ATOMIC_RELAXED);
}

unsigned long kube_client_throttled_ms(const struct kube_client *c)
{
    return __atomic_load_n(&c->throttled_ms, __ATOMIC_RELAXED);
}

/* Takes a rate-limit token for one attempt, sleeping (outside the lock, cancellable) until it is
 * due. Returns non-zero when *cancel was set while waiting. */
static int rate_wait(struct kube_client *c, const int *cancel)
{
    if (!(c->o.qps > 0))
        return 0;
    pthread_mutex_lock(&c->rate_lock);
    int64_t start = vmop_mono_ms();
    int64_t wait_ms = kube_bucket_take(&c->rate, start);
    pthread_mutex_unlock(&c->rate_lock);
    if (wait_ms <= 0)
        return 0;
    __atomic_add_fetch(&c->n_throttled, 1, __ATOMIC_RELAXED);
    vmop_sleep_ms(wait_ms, cancel);
    __atomic_add_fetch(&c->throttled_ms, (unsigned long)(vmop_mono_ms() - start), __ATOMIC_RELAXED);
    return cancel && __atomic_load_n(cancel, __ATOMIC_ACQUIRE);
}

size_t kube_client_max_response(const struct kube_client *c)
{
    return c->o.max_response;
}

static CURL *pool_get(struct kube_client *c)
{
    CURL *h = NULL;
    pthread_mutex_lock(&c->pool_lock);
    if (c->n_pool)
        h = c->pool[--c->n_pool];
    pthread_mutex_unlock(&c->pool_lock);
    if (h)
        curl_easy_reset(h); /* keeps the live connection */
    else
        h = curl_easy_init();
    return h;
}

static void pool_put(struct kube_client *c, CURL *h)
{
    pthread_mutex_lock(&c->pool_lock);
    if (c->n_pool < c->o.pool_size) {
        c->pool[c->n_pool++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&c->pool_lock);
    if (h)
        curl_easy_cleanup(h);
}

/* Re-reads the token file when due (or forced after a 401). Builds the Authorization header
 * value into hdr (secure buffer). */
static void auth_header(struct kube_client *c, int force_reread, struct vbuf *hdr)
{
    pthread_mutex_lock(&c->token_lock);
    if (c->token_file && (force_reread || vmop_mono_ms() - c->token_read_ms >= TOKEN_REREAD_MS)) {
        char *t = NULL;
        size_t len = 0;
        struct vmop_err ignored = {0};
        if (kube_read_file(c->token_file, KUBE_CONFIG_MAX_FILE, &t, &len, &ignored) == VMOP_OK) {
            while (len && (t[len - 1] == '\n' || t[len - 1] == '\r' || t[len - 1] == ' '))
                t[--len] = '\0';
            vmop_free_secret(c->token);
            c->token = t;
        } /* a failed re-read keeps the old token, like client-go */
        c->token_read_ms = vmop_mono_ms();
    }
    if (c->token && *c->token)
        vbuf_addf(hdr, "Authorization: Bearer %s", c->token);
    pthread_mutex_unlock(&c->token_lock);
}

/* Header lists can hold the bearer token: zero them before freeing. */
static void slist_free_secure(struct curl_slist *l)
{
    for (struct curl_slist *i = l; i; i = i->next)
        if (i->data)
            explicit_bzero(i->data, strlen(i->data));
    curl_slist_free_all(l);
}

struct xfer {
    CURL *h;
    struct vbuf *body;
    struct kube_sink *sink;
    const int *cancel;
    long retry_after_s;
    int sink_stopped;
    int too_big;
};

static size_t on_write(char *data, size_t size, size_t nmemb, void *ud)
{
    struct xfer *x = ud;
    size_t n = size * nmemb;
    if (x->sink) {
        long status = 0;
        curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
        if (x->sink->fn(x->sink->ud, status, data, n)) {
            x->sink_stopped = 1;
            return 0;
        }
        return n;
    }
    if (vbuf_add(x->body, data, n)) {
        x->too_big = 1;
        return 0;
    }
    return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ud)
{
    struct xfer *x = ud;
    size_t n = size * nmemb;
    if (n > 12 && !strncasecmp(data, "Retry-After:", 12)) {
        const char *v = data + 12;
        while (*v == ' ' && v < data + n)
            v++;
        long s = 0;
        int digits = 0;
        for (; v < data + n && *v >= '0' && *v <= '9' && s < 1000000; v++, digits++)
            s = s * 10 + (*v - '0');
        x->retry_after_s = digits ? s : 0; /* an HTTP-date is ignored: backoff applies */
    }
    return n;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    struct xfer *x = ud;
    return x->cancel && __atomic_load_n(x->cancel, __ATOMIC_ACQUIRE) ? 1 : 0;
}

static int transport_retryable(CURLcode cc, const char *method)
{
    if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST)
        return 1; /* nothing was sent */
    if (strcmp(method, "GET") != 0)
        return 0;
    return cc == CURLE_OPERATION_TIMEDOUT || cc == CURLE_RECV_ERROR || cc == CURLE_SEND_ERROR ||
           cc == CURLE_GOT_NOTHING || cc == CURLE_PARTIAL_FILE || cc == CURLE_SSL_CONNECT_ERROR;
}

static int status_retryable(long status, const char *method)
{
    if (status == 429 || status == 503)
        return 1;
    if (!strcmp(method, "POST"))
        return 0; /* the create may have happened */
    return status == 500 || status == 502 || status == 504;
}

/* The request's headers into *ret (curl_slist_append'ed; freed with slist_free_secure). */
static vmop_rc build_headers(const struct kube_http_req *req, const struct vbuf *auth,
                             struct curl_slist **ret, struct vmop_err *err)
{
    struct curl_slist *hdrs = NULL, *nh;
    nh = curl_slist_append(hdrs, "Accept: application/json");
    nh = nh ? curl_slist_append(hdrs = nh, "Expect:") : NULL;
    if (nh && req->ctype) {
        struct vbuf ct;
        vbuf_init(&ct, 256);
        vbuf_addf(&ct, "Content-Type: %s", req->ctype);
        nh = vbuf_error(&ct) ? NULL : curl_slist_append(hdrs = nh, vbuf_str(&ct));
        vbuf_free(&ct);
    }
    if (nh && auth->len)
        nh = curl_slist_append(hdrs = nh, vbuf_str(auth));
    if (!nh) {
        slist_free_secure(hdrs);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory building request headers");
    }
    *ret = nh;
    return VMOP_OK;
}

/* Every option of one attempt on h, each result checked: the first option curl refuses fails
 * the request (VMOP_E_INTERNAL, naming curl's reason). */
static vmop_rc setup_handle(struct kube_client *c, const struct kube_http_req *req, CURL *h,
                            const char *url, struct curl_slist *hdrs, struct xfer *x, char *ebuf,
                            int have_auth, struct vmop_err *err)
{
    long tmo = req->timeout_ms ? req->timeout_ms : c->o.timeout_ms;
    CURLcode cc = CURLE_OK;
#define OPT(o, v)                                                                                  \
    do {                                                                                           \
        if (cc == CURLE_OK)                                                                        \
            cc = curl_easy_setopt(h, o, v);                                                        \
    } while (0)
    OPT(CURLOPT_URL, url);
    OPT(CURLOPT_NOSIGNAL, 1L);
    OPT(CURLOPT_ERRORBUFFER, ebuf);
    OPT(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    OPT(CURLOPT_PROTOCOLS_STR, "http,https");
    OPT(CURLOPT_USERAGENT, c->user_agent);
    OPT(CURLOPT_HTTPHEADER, hdrs);
    OPT(CURLOPT_TCP_KEEPALIVE, 1L);
    OPT(CURLOPT_CONNECTTIMEOUT_MS, c->o.connect_timeout_ms);
    if (tmo > 0)
        OPT(CURLOPT_TIMEOUT_MS, tmo);
    OPT(CURLOPT_ACCEPT_ENCODING, ""); /* gzip if the server offers it */
    OPT(CURLOPT_WRITEFUNCTION, on_write);
    OPT(CURLOPT_WRITEDATA, x);
    OPT(CURLOPT_HEADERFUNCTION, on_header);
    OPT(CURLOPT_HEADERDATA, x);
    OPT(CURLOPT_NOPROGRESS, 0L);
    OPT(CURLOPT_XFERINFOFUNCTION, on_progress);
    OPT(CURLOPT_XFERINFODATA, x);
    if (c->insecure) {
        OPT(CURLOPT_SSL_VERIFYPEER, 0L);
        OPT(CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (c->ca.data) {
        struct curl_blob b = {.data = c->ca.data, .len = c->ca.len, .flags = CURL_BLOB_NOCOPY};
        OPT(CURLOPT_CAINFO_BLOB, &b);
    }
    if (c->cert.data) {
        struct curl_blob cb = {.data = c->cert.data, .len = c->cert.len, .flags = CURL_BLOB_NOCOPY};
        struct curl_blob kb = {.data = c->key.data, .len = c->key.len, .flags = CURL_BLOB_NOCOPY};
        OPT(CURLOPT_SSLCERT_BLOB, &cb);
        OPT(CURLOPT_SSLCERTTYPE, "PEM");
        OPT(CURLOPT_SSLKEY_BLOB, &kb);
        OPT(CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (c->basic_user && !have_auth) {
        OPT(CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        OPT(CURLOPT_USERNAME, c->basic_user);
        OPT(CURLOPT_PASSWORD, c->basic_pass ? c->basic_pass : "");
    }
    if (!strcmp(req->method, "GET")) {
        OPT(CURLOPT_HTTPGET, 1L);
    } else {
        OPT(CURLOPT_CUSTOMREQUEST, req->method);
        if (req->body || strcmp(req->method, "DELETE") != 0) {
            OPT(CURLOPT_POSTFIELDS, req->body ? req->body : "");
            OPT(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(req->body ? req->body_len : 0));
        }
    }
#undef OPT
    if (cc != CURLE_OK)
        return vmop_fail(err, VMOP_E_INTERNAL, "%s %s: curl refused an option: %s", req->method,
                         req->path, curl_easy_strerror(cc));
    return VMOP_OK;
}

vmop_rc kube_http(struct kube_client *c, const struct kube_http_req *req, struct kube_sink *sink,
                  long *ret_status, struct vbuf *ret_body, struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;
    struct vbuf url, auth;
    struct curl_slist *hdrs = NULL;
    char ebuf[CURL_ERROR_SIZE];
    int reread_token = 0, auth_retried = 0;
    unsigned attempt = 0;
    long status = 0;
    CURL *h = NULL;

    vbuf_init(&url, 64 * 1024);
    vbuf_init(&auth, 64 * 1024);
    vbuf_addf(&url, "%s%s", c->server, req->path);
    if (vbuf_error(&url)) {
        rc = vmop_fail(err, VMOP_E_TOOBIG, "request URL too long");
        goto out;
    }
    for (;;) {
        struct xfer x = {.body = ret_body, .sink = sink, .cancel = req->cancel};
        if (rate_wait(c, req->cancel)) { /* every attempt; a watch's stream is one attempt */
            rc = vmop_fail(err, VMOP_E_CANCELED, "%s %s canceled", req->method, req->path);
            goto out;
        }
        if (ret_body)
            vbuf_reset(ret_body);
        slist_free_secure(hdrs);
        hdrs = NULL;
        vbuf_free_secure(&auth);
        vbuf_init(&auth, 64 * 1024);
        auth_header(c, reread_token, &auth);
        reread_token = 0;
        if (vbuf_error(&auth)) {
            rc = vmop_fail(err, VMOP_E_TOOBIG, "bearer token too long");
            goto out;
        }
        rc = build_headers(req, &auth, &hdrs, err);
        if (rc != VMOP_OK)
            goto out;
        h = pool_get(c);
        if (!h) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "curl_easy_init failed");
            goto out;
        }
        x.h = h;
        ebuf[0] = '\0';
        rc = setup_handle(c, req, h, vbuf_str(&url), hdrs, &x, ebuf, auth.len > 0, err);
        if (rc != VMOP_OK)
            goto out;
        __atomic_add_fetch(&c->n_requests, 1, __ATOMIC_RELAXED);
        CURLcode cc = curl_easy_perform(h);
        status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        if (cc != CURLE_OK) {
            /* the connection is in an unknown state: do not pool this handle */
            curl_easy_cleanup(h);
            h = NULL;
        } else {
            pool_put(c, h);
            h = NULL;
        }
        if (x.sink_stopped) {
            rc = VMOP_E_CANCELED; /* the sink recorded its own error, if any */
            goto out;
        }
        if (cc == CURLE_ABORTED_BY_CALLBACK) {
            rc = vmop_fail(err, VMOP_E_CANCELED, "%s %s canceled", req->method, req->path);
            goto out;
        }
        if (x.too_big) {
            rc = vmop_fail(err, VMOP_E_TOOBIG, "%s %s: response larger than %zu bytes", req->method,
                           req->path, c->o.max_response);
            goto out;
        }
        int retry = 0;
        long wait_ms = 0;
        if (cc != CURLE_OK) {
            if (req->no_retry || !transport_retryable(cc, req->method) ||
                attempt >= c->o.max_retries) {
                vmop_rc trc = cc == CURLE_OPERATION_TIMEDOUT ? VMOP_E_TIMEOUT
                              : (cc == CURLE_PEER_FAILED_VERIFICATION ||
                                 cc == CURLE_SSL_CACERT_BADFILE || cc == CURLE_SSL_CERTPROBLEM)
                                  ? VMOP_E_TLS
                                  : VMOP_E_TRANSPORT;
                rc = vmop_fail(err, trc, "%s %s: %s", req->method, req->path,
                               ebuf[0] ? ebuf : curl_easy_strerror(cc));
                goto out;
            }
            retry = 1;
        } else if (status == 401 && c->token_file && !auth_retried) {
            auth_retried = 1;
            reread_token = 1; /* the projected token may have been rotated */
            retry = 1;
            wait_ms = 1;
        } else if (!req->no_retry && status_retryable(status, req->method) &&
                   attempt < c->o.max_retries) {
            retry = 1;
            if (x.retry_after_s > 0)
                wait_ms = x.retry_after_s * 1000;
        }
        if (!retry)
            break;
        if (!wait_ms) {
            wait_ms = c->o.retry_base_ms << (attempt < 16 ? attempt : 16);
            wait_ms = vmop_jitter_ms(wait_ms, 0.5);
        }
        if (wait_ms > c->o.retry_max_ms)
            wait_ms = c->o.retry_max_ms;
        attempt++;
        __atomic_add_fetch(&c->n_retries, 1, __ATOMIC_RELAXED);
        vmop_sleep_ms(wait_ms, req->cancel);
        if (req->cancel && __atomic_load_n(req->cancel, __ATOMIC_ACQUIRE)) {
            rc = vmop_fail(err, VMOP_E_CANCELED, "%s %s canceled", req->method, req->path);
            goto out;
        }
    }
    if (ret_body && vbuf_error(ret_body)) {
        rc = vmop_fail(err, vbuf_error(ret_body), "%s %s: response too large", req->method,
                       req->path);
        goto out;
    }
    *ret_status = status;
out:
    if (h)
        curl_easy_cleanup(h);
    slist_free_secure(hdrs);
    vbuf_free_secure(&auth);
    vbuf_free(&url);
    return rc;
}
