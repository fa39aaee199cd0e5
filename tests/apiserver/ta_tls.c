/* ta_tls.c: the throwaway PKI of kube-testapi: a fresh ECDSA P-256 CA and a server certificate for
 * 127.0.0.1 and localhost signed by it, generated in memory with OpenSSL at every start (PEM out).
 * The CA goes to the kubeconfig; libmicrohttpd (GnuTLS) serves the certificate and key. */
#include "ta_http.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <string.h>

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509_EXTENSION *ex;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    ex = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ex)
        return -1;
    X509_add_ext(cert, ex, -1);
    X509_EXTENSION_free(ex);
    return 0;
}

static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key, int ca)
{
    X509 *x = X509_new();
    X509_NAME *name;
    unsigned char serial[16];
    BIGNUM *bn = NULL;
    if (!x)
        return NULL;
    X509_set_version(x, 2);
    if (RAND_bytes(serial, sizeof(serial)) != 1)
        goto fail;
    serial[0] &= 0x7f;
    bn = BN_bin2bn(serial, sizeof(serial), NULL);
    if (!bn || !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)))
        goto fail;
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 30L * 24 * 3600);
    X509_set_pubkey(x, key);
    name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    if (ca) {
        if (add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE") ||
            add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature") ||
            add_ext(x, x, NID_subject_key_identifier, "hash"))
            goto fail;
    } else {
        if (add_ext(x, issuer, NID_basic_constraints, "critical,CA:FALSE") ||
            add_ext(x, issuer, NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
            add_ext(x, issuer, NID_ext_key_usage, "serverAuth") ||
            add_ext(x, issuer, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost") ||
            add_ext(x, issuer, NID_authority_key_identifier, "keyid"))
            goto fail;
    }
    if (!X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256()))
        goto fail;
    BN_free(bn);
    return x;
fail:
    BN_free(bn);
    X509_free(x);
    return NULL;
}

static char *bio_string(BIO *b)
{
    char *data, *out;
    long n = BIO_get_mem_data(b, &data);
    if (n <= 0)
        return NULL;
    out = malloc((size_t)n + 1);
    if (!out)
        return NULL;
    memcpy(out, data, (size_t)n);
    out[n] = '\0';
    return out;
}

vmop_rc ta_tls_generate(char **ret_ca_pem, char **ret_cert_pem, char **ret_key_pem,
                        struct vmop_err *err)
{
    EVP_PKEY *ca_key = EVP_EC_gen("P-256"), *key = EVP_EC_gen("P-256");
    X509 *ca = NULL, *cert = NULL;
    BIO *b1 = BIO_new(BIO_s_mem()), *b2 = BIO_new(BIO_s_mem()), *b3 = BIO_new(BIO_s_mem());
    char *ca_pem = NULL, *cert_pem = NULL, *key_pem = NULL;
    vmop_rc rc = VMOP_OK;
    if (!ca_key || !key || !b1 || !b2 || !b3) {
        rc = vmop_fail(err, VMOP_E_TLS, "cannot generate TLS keys");
        goto out;
    }
    ca = make_cert(ca_key, "kube-testapi-ca", NULL, NULL, 1);
    cert = ca ? make_cert(key, "kube-testapi", ca, ca_key, 0) : NULL;
    if (!cert || !PEM_write_bio_X509(b1, ca) || !PEM_write_bio_X509(b2, cert) ||
        !PEM_write_bio_PrivateKey(b3, key, NULL, NULL, 0, NULL, NULL)) {
        rc = vmop_fail(err, VMOP_E_TLS, "cannot generate TLS certificates");
        goto out;
    }
    ca_pem = bio_string(b1);
    cert_pem = bio_string(b2);
    key_pem = bio_string(b3);
    if (!ca_pem || !cert_pem || !key_pem) {
        free(ca_pem);
        free(cert_pem);
        free(key_pem);
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    *ret_ca_pem = ca_pem;
    *ret_cert_pem = cert_pem;
    *ret_key_pem = key_pem;
out:
    X509_free(ca);
    X509_free(cert);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(key);
    BIO_free(b1);
    BIO_free(b2);
    BIO_free(b3);
    return rc;
}
