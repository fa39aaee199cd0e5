/* test_wh_server.c: tests of operator/webhook/wh_server.c over real sockets on 127.0.0.1: a
 * throwaway certificate made here with OpenSSL, AdmissionReview and ConversionReview POSTed with
 * libcurl pinned to that certificate, keep-alive, 404/405/400, 413 on an oversized body, a slow
 * client cut at the read deadline, a client that never handshakes, the connection cap, stop with
 * connections open, and certificate rotation (the next connection presents the new certificate;
 * a broken pair keeps the old one). Every wait is bounded. Suite: unit. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <curl/curl.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "check_main.h"
#include "clock.h"
#include "vbuf.h"
#include "wh_limits.h"
#include "wh_server.h"

static char dir[64];            /* the server's cert dir */
static char ca1[128], ca2[128]; /* copies of the first and second certificates (curl's CA) */

/* ---- certificates ---- */

static void write_file(const char *path, const char *data, size_t n)
{
    char tmp[256];
    FILE *f;
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(rename(tmp, path), 0); /* like the kubelet's atomic Secret update */
}

/* A self-signed EC certificate for 127.0.0.1 (CN cn): PEM cert and key into cert/key buffers. */
static void make_cert(const char *cn, char **ret_cert, char **ret_key)
{
    EVP_PKEY *pk = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    X509_NAME *name;
    X509V3_CTX v3;
    X509_EXTENSION *ext;
    BIO *b;
    char *p;
    long n;

    ck_assert_ptr_nonnull(pk);
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), (long)(vmop_test_now_ms() & 0x7fffffff));
    X509_gmtime_adj(X509_getm_notBefore(x), -60);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, pk);
    name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, name);
    X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
    ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    ext = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints, "critical,CA:TRUE");
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    ck_assert_int_gt(X509_sign(x, pk, EVP_sha256()), 0);

    b = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(b, x);
    n = BIO_get_mem_data(b, &p);
    *ret_cert = strndup(p, (size_t)n);
    BIO_free(b);
    b = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(b, pk, NULL, NULL, 0, NULL, NULL);
    n = BIO_get_mem_data(b, &p);
    *ret_key = strndup(p, (size_t)n);
    BIO_free(b);
    X509_free(x);
    EVP_PKEY_free(pk);
}

/* Installs a new pair in dir; its certificate also goes to ca (curl's trust anchor). */
static void install_cert(const char *cn, const char *ca)
{
    char *cert, *key, path[128];
    make_cert(cn, &cert, &key);
    snprintf(path, sizeof(path), "%s/tls.key", dir);
    write_file(path, key, strlen(key));
    snprintf(path, sizeof(path), "%s/tls.crt", dir);
    write_file(path, cert, strlen(cert));
    write_file(ca, cert, strlen(cert));
    free(cert);
    free(key);
}

/* ---- handlers ---- */

static vmop_rc admit(void *ud, const struct wh_admission_request *req,
                     struct wh_admission_response *resp, struct vmop_err *err)
{
    cJSON *patch;
    (void)ud;
    if (!strcmp(req->name, "bad"))
        return wh_admission_deny(resp, 422, "Invalid", "spec.imageName: no such image");
    if (!strcmp(req->name, "boom"))
        return vmop_fail(err, VMOP_E_INTERNAL, "the handler broke");
    patch = cJSON_Parse("[{\"op\":\"add\",\"path\":\"/spec/instanceUUID\",\"value\":\"u\"}]");
    wh_admission_set_patch(resp, patch);
    return wh_admission_warn(resp, req->username);
}

static vmop_rc convert(void *ud, const cJSON *obj, const char *desired, cJSON **ret,
                       struct vmop_err *err)
{
    cJSON *o = cJSON_Duplicate(obj, 1);
    (void)ud;
    (void)err;
    cJSON_ReplaceItemInObjectCaseSensitive(o, "apiVersion", cJSON_CreateString(desired));
    *ret = o;
    return VMOP_OK;
}

static struct wh_server *start(int read_ms)
{
    struct wh_server_config cfg = {.addr = "127.0.0.1:0",
                                   .cert_dir = dir,
                                   .read_timeout_ms = read_ms,
                                   .idle_timeout_ms = 3000};
    struct wh_server *s = NULL;
    struct vmop_err err = {0};
    ck_assert_msg(wh_server_start(&cfg, &s, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_int_eq(wh_server_add_admission(s, "/mutate-vm", admit, NULL, &err), VMOP_OK);
    ck_assert_int_eq(wh_server_add_conversion(s, "/convert", convert, NULL, &err), VMOP_OK);
    ck_assert_int_eq(wh_server_add_admission(s, "/mutate-vm", admit, NULL, &err), VMOP_E_EXISTS);
    return s;
}

static void setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    snprintf(dir, sizeof(dir), "/tmp/wh-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(ca1, sizeof(ca1), "%s-ca1.pem", dir);
    snprintf(ca2, sizeof(ca2), "%s-ca2.pem", dir);
    install_cert("vmop-webhook-1", ca1);
}

static void teardown(void)
{
    static const char *files[] = {"tls.crt", "tls.key"};
    char path[128];
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
    unlink(ca1);
    unlink(ca2);
}

/* ---- a small libcurl client ---- */

struct reply {
    long code;
    CURLcode rc;
    struct vbuf body;
};

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
    struct reply *r = ud;
    return vbuf_add(&r->body, p, sz * n) == VMOP_OK ? sz * n : 0;
}

/* POSTs body to path; reuses *h when given (keep-alive). */
static void post(CURL *h, int port, const char *ca, const char *path, const char *body, size_t len,
                 struct reply *r)
{
    char url[256];
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    snprintf(url, sizeof(url), "https://127.0.0.1:%d%s?timeout=10s", port, path);
    memset(r, 0, sizeof(*r));
    vbuf_init(&r->body, (size_t)1 << 20);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CAINFO, ca);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    r->rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->code);
    curl_slist_free_all(hdr);
}

static void post1(int port, const char *ca, const char *path, const char *body, struct reply *r)
{
    CURL *h = curl_easy_init();
    post(h, port, ca, path, body, strlen(body), r);
    curl_easy_cleanup(h);
}

static const char *review(const char *name)
{
    static char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
             "\"uid\":\"uid-%s\",\"operation\":\"CREATE\",\"name\":\"%s\",\"namespace\":\"ns\","
             "\"kind\":{\"group\":\"vmoperator.vmware.com\",\"version\":\"v1alpha5\","
             "\"kind\":\"VirtualMachine\"},\"userInfo\":{\"username\":\"alice\"},"
             "\"object\":{\"spec\":{}}}}",
             name, name);
    return buf;
}

static cJSON *response_of(struct reply *r)
{
    cJSON *doc = cJSON_Parse(vbuf_str(&r->body));
    ck_assert_msg(doc != NULL, "not JSON: %s", vbuf_str(&r->body));
    return doc;
}

START_TEST(admission_round_trip)
{
    struct wh_server *s = start(0);
    struct reply r;
    cJSON *doc, *resp;
    CURL *h = curl_easy_init();
    long connects = -1;
    struct wh_server_stats st;

    post(h, wh_server_port(s), ca1, "/mutate-vm", review("web-0"), strlen(review("web-0")), &r);
    ck_assert_msg(r.rc == CURLE_OK, "%s", curl_easy_strerror(r.rc));
    ck_assert_int_eq(r.code, 200);
    doc = response_of(&r);
    resp = cJSON_GetObjectItem(doc, "response");
    ck_assert_str_eq(cJSON_GetObjectItem(resp, "uid")->valuestring, "uid-web-0");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(resp, "allowed")));
    ck_assert_str_eq(cJSON_GetObjectItem(resp, "patchType")->valuestring, "JSONPatch");
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(resp, "warnings"), 0)->valuestring,
                     "alice");
    cJSON_Delete(doc);
    vbuf_free(&r.body);

    /* the same connection again (keep-alive): a denial */
    post(h, wh_server_port(s), ca1, "/mutate-vm", review("bad"), strlen(review("bad")), &r);
    ck_assert_int_eq(r.code, 200);
    curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
    ck_assert_int_eq(connects, 0);
    doc = response_of(&r);
    resp = cJSON_GetObjectItem(doc, "response");
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(resp, "allowed")));
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(resp, "status"), "code")->valueint,
                     422);
    cJSON_Delete(doc);
    vbuf_free(&r.body);

    /* a failing handler: a denial with code 500 and its message */
    post(h, wh_server_port(s), ca1, "/mutate-vm", review("boom"), strlen(review("boom")), &r);
    ck_assert_int_eq(r.code, 200);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.body), "the handler broke"));
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.body), "\"code\":500"));
    vbuf_free(&r.body);

    /* not a review: 400; unknown path: 404 */
    post(h, wh_server_port(s), ca1, "/mutate-vm", "{\"kind\":\"Pod\"}", 14, &r);
    ck_assert_int_eq(r.code, 400);
    vbuf_free(&r.body);
    post(h, wh_server_port(s), ca1, "/validate-other", review("x"), strlen(review("x")), &r);
    ck_assert_int_eq(r.code, 404);
    vbuf_free(&r.body);
    curl_easy_cleanup(h);

    /* GET: 405 */
    h = curl_easy_init();
    {
        char url[128];
        snprintf(url, sizeof(url), "https://127.0.0.1:%d/mutate-vm", wh_server_port(s));
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_CAINFO, ca1);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
        curl_easy_setopt(h, CURLOPT_NOBODY, 0L);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
        memset(&r, 0, sizeof(r));
        vbuf_init(&r.body, 4096);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &r);
        ck_assert_int_eq(curl_easy_perform(h), CURLE_OK);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.code);
        ck_assert_int_eq(r.code, 405);
        vbuf_free(&r.body);
    }
    curl_easy_cleanup(h);
    wh_server_stats(s, &st);
    ck_assert_uint_eq(st.requests, 3);
    ck_assert_uint_ge(st.http_errors, 3);
    /* three reviews and the 400 on one connection; the 400 closes it: the 404 and the GET each
     * on a new one */
    ck_assert_uint_eq(st.accepted, 3);
    wh_server_stop(s);
}
END_TEST

START_TEST(conversion_round_trip)
{
    struct wh_server *s = start(0);
    struct reply r;
    cJSON *doc, *resp;
    const char *body =
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\",\"request\":{"
        "\"uid\":\"c-1\",\"desiredAPIVersion\":\"vmoperator.vmware.com/v1alpha2\",\"objects\":["
        "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachine\"},"
        "{\"apiVersion\":\"vmoperator.vmware.com/v1alpha5\",\"kind\":\"VirtualMachine\"}]}}";
    post1(wh_server_port(s), ca1, "/convert", body, &r);
    ck_assert_int_eq(r.code, 200);
    doc = response_of(&r);
    resp = cJSON_GetObjectItem(doc, "response");
    ck_assert_str_eq(cJSON_GetObjectItem(resp, "uid")->valuestring, "c-1");
    ck_assert_str_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(resp, "result"), "status")->valuestring, "Success");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(resp, "convertedObjects")), 2);
    ck_assert_str_eq(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(resp, "convertedObjects"), 1),
                            "apiVersion")
            ->valuestring,
        "vmoperator.vmware.com/v1alpha2");
    cJSON_Delete(doc);
    vbuf_free(&r.body);
    wh_server_stop(s);
}
END_TEST

START_TEST(oversized_body_413)
{
    struct wh_server *s = start(0);
    struct reply r;
    CURL *h = curl_easy_init();
    size_t n = WH_MAX_BODY + 1;
    char *big = malloc(n);
    long long t0 = vmop_test_now_ms();
    memset(big, ' ', n);
    post(h, wh_server_port(s), ca1, "/mutate-vm", big, n, &r);
    ck_assert_msg(r.rc == CURLE_OK, "%s", curl_easy_strerror(r.rc));
    ck_assert_int_eq(r.code, 413);
    ck_assert_int_lt(vmop_test_now_ms() - t0, 8000);
    vbuf_free(&r.body);
    /* exactly the limit is read (and refused as not JSON, 400) */
    post(h, wh_server_port(s), ca1, "/mutate-vm", big, n - 1, &r);
    ck_assert_msg(r.rc == CURLE_OK, "%s", curl_easy_strerror(r.rc));
    ck_assert_int_eq(r.code, 400);
    vbuf_free(&r.body);
    curl_easy_cleanup(h);
    free(big);
    wh_server_stop(s);
}
END_TEST

static int tcp_connect(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    struct timeval tv = {.tv_sec = 5};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    /* every read below ends within 5 s even if the server never cuts us */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

START_TEST(slow_client_cut)
{
    struct wh_server *s = start(500);
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL *ssl;
    char buf[512];
    int fd, n, total = 0;
    long long t0;
    struct wh_server_stats st;

    /* TLS done, then half a request head and silence: 408 after ~500 ms, then closed */
    fd = tcp_connect(wh_server_port(s));
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    ck_assert_int_eq(SSL_connect(ssl), 1);
    ck_assert_int_gt(SSL_write(ssl, "POST /mutate-vm HTTP/1.1\r\nHost: x\r\n", 35), 0);
    t0 = vmop_test_now_ms();
    while ((n = SSL_read(ssl, buf + total, (int)sizeof(buf) - 1 - total)) > 0)
        total += n;
    buf[total] = '\0';
    ck_assert_int_lt(vmop_test_now_ms() - t0, 4000);
    ck_assert_int_ge(vmop_test_now_ms() - t0, 400);
    ck_assert_msg(strstr(buf, "HTTP/1.1 408") == buf, "got '%s'", buf);
    SSL_free(ssl);
    close(fd);

    /* a byte at a time does not extend the deadline: still cut within the same bound */
    fd = tcp_connect(wh_server_port(s));
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    ck_assert_int_eq(SSL_connect(ssl), 1);
    t0 = vmop_test_now_ms();
    for (int i = 0; i < 40 && vmop_test_now_ms() - t0 < 4000; i++) {
        if (SSL_write(ssl, "P", 1) <= 0)
            break;
        vmop_test_sleep_ms(100);
    }
    ck_assert_int_lt(vmop_test_now_ms() - t0, 3000); /* writes failed after the cut */
    SSL_free(ssl);
    close(fd);

    /* a handshake, then silence: the first request must start within the read deadline */
    fd = tcp_connect(wh_server_port(s));
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    ck_assert_int_eq(SSL_connect(ssl), 1);
    t0 = vmop_test_now_ms();
    ck_assert_int_le(SSL_read(ssl, buf, sizeof(buf)), 0);
    ck_assert_int_lt(vmop_test_now_ms() - t0, 3000);
    SSL_free(ssl);
    close(fd);

    /* no handshake at all: closed after the read deadline */
    fd = tcp_connect(wh_server_port(s));
    t0 = vmop_test_now_ms();
    ck_assert_int_le(recv(fd, buf, sizeof(buf), 0), 0);
    ck_assert_int_lt(vmop_test_now_ms() - t0, 4000);
    close(fd);
    SSL_CTX_free(ctx);
    wh_server_stats(s, &st);
    ck_assert_uint_ge(st.timeouts, 2);
    wh_server_stop(s);
}
END_TEST

/* A TLS client on a fresh connection, its handshake bounded by timeout_ms; NULL when it did
 * not complete. */
static SSL *tls_client(SSL_CTX *ctx, int port, int timeout_ms, int *ret_fd)
{
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    int fd = tcp_connect(port);
    SSL *ssl = SSL_new(ctx);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    SSL_set_fd(ssl, fd);
    *ret_fd = fd;
    if (SSL_connect(ssl) != 1) {
        SSL_free(ssl);
        return NULL;
    }
    return ssl;
}

START_TEST(connection_cap)
{
    struct wh_server_config cfg = {
        .addr = "127.0.0.1:0", .cert_dir = dir, .max_conns = 2, .idle_timeout_ms = 10000};
    struct wh_server *s = NULL;
    struct vmop_err err = {0};
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    struct wh_server_stats st;
    SSL *a, *b, *c, *d;
    int fa, fb, fc, fd;
    long long t0;

    ck_assert_msg(wh_server_start(&cfg, &s, &err) == VMOP_OK, "%s", err.msg);
    a = tls_client(ctx, wh_server_port(s), 5000, &fa);
    b = tls_client(ctx, wh_server_port(s), 5000, &fb);
    ck_assert(a && b);
    /* a third waits in the accept queue: its handshake gets no answer */
    t0 = vmop_test_now_ms();
    c = tls_client(ctx, wh_server_port(s), 500, &fc);
    ck_assert_ptr_null(c);
    ck_assert_int_ge(vmop_test_now_ms() - t0, 400);
    close(fc);
    wh_server_stats(s, &st);
    ck_assert_uint_eq(st.active, 2);
    /* one ends: the next is served */
    SSL_free(a);
    close(fa);
    d = tls_client(ctx, wh_server_port(s), 5000, &fd);
    ck_assert_ptr_nonnull(d);
    /* stop with connections open returns at once and closes them */
    t0 = vmop_test_now_ms();
    wh_server_stop(s);
    ck_assert_int_lt(vmop_test_now_ms() - t0, 2000);
    {
        char buf[16];
        ck_assert_int_le(SSL_read(d, buf, sizeof(buf)), 0);
    }
    SSL_free(b);
    SSL_free(d);
    close(fb);
    close(fd);
    SSL_CTX_free(ctx);
}
END_TEST

START_TEST(cert_rotation)
{
    struct wh_server *s = start(0);
    struct reply r;
    struct wh_server_stats st;
    char path[128];
    int port = wh_server_port(s);

    post1(port, ca1, "/mutate-vm", review("a"), &r);
    ck_assert_msg(r.rc == CURLE_OK, "%s", curl_easy_strerror(r.rc));
    vbuf_free(&r.body);

    install_cert("vmop-webhook-2", ca2);
    post1(port, ca2, "/mutate-vm", review("b"), &r); /* the next connection: the new pair */
    ck_assert_msg(r.rc == CURLE_OK, "%s", curl_easy_strerror(r.rc));
    ck_assert_int_eq(r.code, 200);
    vbuf_free(&r.body);
    post1(port, ca1, "/mutate-vm", review("c"), &r); /* the old one is gone */
    ck_assert_int_eq(r.rc, CURLE_PEER_FAILED_VERIFICATION);
    vbuf_free(&r.body);

    /* a broken key: the previous pair stays, counted once however many connections see it */
    snprintf(path, sizeof(path), "%s/tls.key", dir);
    write_file(path, "not a key\n", 10);
    for (int i = 0; i < 3; i++) {
        post1(port, ca2, "/mutate-vm", review("d"), &r);
        ck_assert_msg(r.rc == CURLE_OK, "%s", curl_easy_strerror(r.rc));
        vbuf_free(&r.body);
    }
    wh_server_stats(s, &st);
    ck_assert_uint_eq(st.cert_reloads, 1);
    ck_assert_uint_eq(st.cert_reload_failures, 1);
    wh_server_stop(s);
}
END_TEST

START_TEST(start_failures)
{
    struct wh_server_config cfg = {.addr = "127.0.0.1:0", .cert_dir = "/nonexistent/certs"};
    struct wh_server *s = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(wh_server_start(&cfg, &s, &err), VMOP_E_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(err.msg, "tls.crt"));
    cfg.cert_dir = dir;
    cfg.addr = "127.0.0.1";
    vmop_err_clear(&err);
    ck_assert_int_eq(wh_server_start(&cfg, &s, &err), VMOP_E_INVALID);
    cfg.addr = "[::1]:0"; /* IPv6 form parses (binding may fail without IPv6) */
    vmop_err_clear(&err);
    if (wh_server_start(&cfg, &s, &err) == VMOP_OK)
        wh_server_stop(s);
    else
        ck_assert_int_eq(err.rc, VMOP_E_TRANSPORT);
    ck_assert_ptr_null(NULL);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("wh_server");
    TCase *tc = tcase_create("server");
    int rc;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, admission_round_trip);
    tcase_add_test(tc, conversion_round_trip);
    tcase_add_test(tc, oversized_body_413);
    tcase_add_test(tc, slow_client_cut);
    tcase_add_test(tc, connection_cap);
    tcase_add_test(tc, cert_rotation);
    tcase_add_test(tc, start_failures);
    suite_add_tcase(su, tc);
    rc = vmop_check_run(su);
    curl_global_cleanup();
    return rc;
}
