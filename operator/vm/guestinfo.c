/* guestinfo.c: cloud-init metadata document, user data normalization, gzip+base64 codecs.
 * Pure: zlib and OpenSSL's base64 are the only libraries; no I/O. See guestinfo.h. */
#include "guestinfo.h"
#include "vmop_base64.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <zlib.h>

#include "vbuf.h"

void gi_free_secret(char *s, size_t len)
{
    if (!s)
        return;
    explicit_bzero(s, len);
    free(s);
}

/* ---- base64 ------------------------------------------------------------------------------------
 */

static vmop_rc b64_encode(const unsigned char *in, size_t len, char **ret, struct vmop_err *err)
{
    if (len > GI_MAX_ENCODED_VALUE)
        return vmop_fail(err, VMOP_E_TOOBIG, "value of %zu bytes is over the %zu-byte limit", len,
                         GI_MAX_ENCODED_VALUE);
    return vmop_base64_encode(in, len, ret, err);
}

/* Decodes canonical base64 (whitespace ignored): VMOP_E_INVALID if it is not base64, which is
 * also how a value that only looks like text is told from an encoded one. */
static vmop_rc b64_decode(const char *in, size_t len, unsigned char **ret, size_t *ret_len,
                          struct vmop_err *err)
{
    char *out = NULL;
    vmop_rc rc = vmop_base64_decode(in, len, VMOP_B64_STRICT, &out, ret_len, err);
    if (rc == VMOP_E_INVALID)
        return vmop_fail(err, VMOP_E_INVALID, "value is not valid base64");
    if (rc == VMOP_OK)
        *ret = (unsigned char *)out;
    return rc;
}

/* ---- gzip --------------------------------------------------------------------------------------
 */

static vmop_rc gzip_compress(const void *data, size_t len, unsigned char **ret, size_t *ret_len,
                             struct vmop_err *err)
{
    z_stream zs;
    unsigned char *out;
    uLong bound;
    memset(&zs, 0, sizeof(zs));
    if (deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return vmop_fail(err, VMOP_E_NOMEM, "cannot initialise gzip");
    bound = deflateBound(&zs, (uLong)len) + 32;
    out = malloc(bound);
    if (!out) {
        deflateEnd(&zs);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory compressing %zu bytes", len);
    }
    zs.next_in = (Bytef *)(uintptr_t)data;
    zs.avail_in = (uInt)len;
    zs.next_out = out;
    zs.avail_out = (uInt)bound;
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
        deflateEnd(&zs);
        free(out);
        return vmop_fail(err, VMOP_E_INTERNAL, "gzip compression did not finish");
    }
    *ret_len = zs.total_out;
    deflateEnd(&zs);
    *ret = out;
    return VMOP_OK;
}

/* Inflates gzip (or zlib) data; refuses output over `max` bytes (a gzip bomb is an error). */
static vmop_rc gzip_decompress(const unsigned char *in, size_t len, size_t max, char **ret,
                               size_t *ret_len, struct vmop_err *err)
{
    z_stream zs;
    size_t cap = len * 4 + 256, n = 0;
    char *out = NULL;
    int zrc;
    vmop_rc rc = VMOP_OK;
    memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, 15 + 32) != Z_OK)
        return vmop_fail(err, VMOP_E_NOMEM, "cannot initialise gunzip");
    if (cap > max + 1)
        cap = max + 1;
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)len;
    for (;;) {
        char *p;
        if (n == cap) {
            if (cap > max) {
                rc = vmop_fail(err, VMOP_E_TOOBIG, "decompressed data is over %zu bytes", max);
                goto out;
            }
            cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
        }
        p = realloc(out, cap + 1);
        if (!p) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory decompressing");
            goto out;
        }
        out = p;
        zs.next_out = (Bytef *)out + n;
        zs.avail_out = (uInt)(cap - n);
        zrc = inflate(&zs, Z_NO_FLUSH);
        n = zs.total_out;
        if (zrc == Z_STREAM_END)
            break;
        if (zrc != Z_OK && !(zrc == Z_BUF_ERROR && zs.avail_out == 0)) {
            rc = vmop_fail(err, VMOP_E_INVALID, "data is not valid gzip (%s)",
                           zs.msg ? zs.msg : "truncated");
            goto out;
        }
        if (zs.avail_in == 0 && zs.avail_out != 0) {
            rc = vmop_fail(err, VMOP_E_INVALID, "data is not valid gzip (truncated)");
            goto out;
        }
    }
    if (n > max) {
        rc = vmop_fail(err, VMOP_E_TOOBIG, "decompressed data is over %zu bytes", max);
        goto out;
    }
    out[n] = '\0';
    *ret = out;
    *ret_len = n;
    out = NULL;
out:
    inflateEnd(&zs);
    if (out)
        gi_free_secret(out, cap);
    return rc;
}

vmop_rc gi_encode_gzip_base64(const void *data, size_t len, char **ret_value, struct vmop_err *err)
{
    unsigned char *gz = NULL;
    size_t gz_len = 0;
    vmop_rc rc = gzip_compress(data, len, &gz, &gz_len, err);
    if (rc)
        return rc;
    rc = b64_encode(gz, gz_len, ret_value, err);
    gi_free_secret((char *)gz, gz_len);
    return rc;
}

static int is_gzip(const unsigned char *p, size_t len)
{
    return len >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

vmop_rc gi_decode(const char *value, const char *encoding, char **ret_data, size_t *ret_len,
                  struct vmop_err *err)
{
    unsigned char *raw = NULL;
    size_t raw_len = 0, vlen = value ? strlen(value) : 0;
    vmop_rc rc;
    if (!encoding || !*encoding) {
        char *copy = strndup(value ? value : "", vlen);
        if (!copy)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        *ret_data = copy;
        *ret_len = vlen;
        return VMOP_OK;
    }
    if (strcmp(encoding, "base64") && strcmp(encoding, "b64") && strcmp(encoding, "gzip+base64") &&
        strcmp(encoding, "gz+b64"))
        return vmop_fail(err, VMOP_E_INVALID, "unknown encoding '%s'", encoding);
    rc = b64_decode(value ? value : "", vlen, &raw, &raw_len, err);
    if (rc)
        return rc;
    if (encoding[0] == 'g') {
        rc = gzip_decompress(raw, raw_len, GI_MAX_ENCODED_VALUE * 8, ret_data, ret_len, err);
        gi_free_secret((char *)raw, raw_len);
        return rc;
    }
    *ret_data = (char *)raw;
    *ret_len = raw_len;
    return VMOP_OK;
}

vmop_rc gi_userdata_normalize(const void *data, size_t len, char **ret_plain, size_t *ret_len,
                              struct vmop_err *err)
{
    const unsigned char *p = data;
    unsigned char *dec = NULL;
    size_t dec_len = 0;
    struct vmop_err ignored = {0};
    vmop_rc rc;
    char *copy;

    if (len > GI_MAX_ENCODED_VALUE)
        return vmop_fail(err, VMOP_E_TOOBIG,
                         "user data is %zu bytes; the limit is %zu bytes (as given)", len,
                         GI_MAX_ENCODED_VALUE);
    if (is_gzip(p, len))
        return gzip_decompress(p, len, GI_MAX_USERDATA, ret_plain, ret_len, err);
    /* Base64 (possibly of gzip)? Plain cloud-config never is: it has '#', ':' or spaces. */
    if (b64_decode((const char *)p, len, &dec, &dec_len, &ignored) == VMOP_OK) {
        if (is_gzip(dec, dec_len)) {
            rc = gzip_decompress(dec, dec_len, GI_MAX_USERDATA, ret_plain, ret_len, err);
            gi_free_secret((char *)dec, dec_len);
            return rc;
        }
        if (dec_len > GI_MAX_USERDATA) {
            gi_free_secret((char *)dec, dec_len);
            return vmop_fail(err, VMOP_E_TOOBIG, "user data is over %zu bytes", GI_MAX_USERDATA);
        }
        *ret_plain = (char *)dec;
        *ret_len = dec_len;
        return VMOP_OK;
    }
    if (len > GI_MAX_USERDATA)
        return vmop_fail(err, VMOP_E_TOOBIG, "user data is %zu bytes; the limit is %zu bytes", len,
                         GI_MAX_USERDATA);
    copy = malloc(len + 1);
    if (!copy)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    memcpy(copy, data, len);
    copy[len] = '\0';
    *ret_plain = copy;
    *ret_len = len;
    return VMOP_OK;
}

/* ---- metadata ----------------------------------------------------------------------------------
 */

static cJSON *str_array(const char *const *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(v[i] ? v[i] : ""));
    return a;
}

static vmop_rc add_iface(cJSON *ethernets, const struct gi_iface *f, size_t idx,
                         struct vmop_err *err)
{
    cJSON *e;
    if (!f->name || !*f->name)
        return vmop_fail(err, VMOP_E_INVALID, "network interface %zu has no name", idx);
    if (cJSON_GetObjectItemCaseSensitive(ethernets, f->name))
        return vmop_fail(err, VMOP_E_INVALID, "network interface name '%s' is used twice", f->name);
    e = cJSON_AddObjectToObject(ethernets, f->name);
    if (!e)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    if (f->mac && *f->mac) {
        char mac[64];
        size_t i;
        for (i = 0; f->mac[i] && i < sizeof(mac) - 1; i++)
            mac[i] = (char)tolower((unsigned char)f->mac[i]);
        mac[i] = '\0';
        cJSON_AddStringToObject(cJSON_AddObjectToObject(e, "match"), "macaddress", mac);
    }
    cJSON_AddStringToObject(e, "set-name", f->set_name && *f->set_name ? f->set_name : f->name);
    cJSON_AddBoolToObject(e, "dhcp4", f->dhcp4);
    cJSON_AddBoolToObject(e, "dhcp6", f->dhcp6);
    cJSON_AddBoolToObject(e, "accept-ra", f->dhcp6);
    if (f->n_addresses)
        cJSON_AddItemToObject(e, "addresses", str_array(f->addresses, f->n_addresses));
    if (f->gateway4 && *f->gateway4 && strcmp(f->gateway4, "None"))
        cJSON_AddStringToObject(e, "gateway4", f->gateway4);
    if (f->gateway6 && *f->gateway6 && strcmp(f->gateway6, "None"))
        cJSON_AddStringToObject(e, "gateway6", f->gateway6);
    if (f->mtu > 0)
        cJSON_AddNumberToObject(e, "mtu", (double)f->mtu);
    if (f->n_nameservers || f->n_search) {
        cJSON *ns = cJSON_AddObjectToObject(e, "nameservers");
        if (f->n_nameservers)
            cJSON_AddItemToObject(ns, "addresses", str_array(f->nameservers, f->n_nameservers));
        if (f->n_search)
            cJSON_AddItemToObject(ns, "search", str_array(f->search, f->n_search));
    }
    if (f->n_routes) {
        cJSON *routes = cJSON_AddArrayToObject(e, "routes");
        for (size_t i = 0; i < f->n_routes; i++) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "to", f->routes[i].to ? f->routes[i].to : "default");
            if (f->routes[i].via)
                cJSON_AddStringToObject(r, "via", f->routes[i].via);
            if (f->routes[i].metric > 0)
                cJSON_AddNumberToObject(r, "metric", f->routes[i].metric);
            cJSON_AddItemToArray(routes, r);
        }
    }
    return VMOP_OK;
}

vmop_rc gi_metadata_json(const struct gi_meta *m, char **ret_json, struct vmop_err *err)
{
    cJSON *doc = NULL, *net, *eth;
    char *text;
    vmop_rc rc = VMOP_OK;

    if (!m->instance_id || !*m->instance_id)
        return vmop_fail(err, VMOP_E_INVALID, "cloud-init instance-id is empty");
    if (!m->hostname || !*m->hostname)
        return vmop_fail(err, VMOP_E_INVALID, "host name is empty");
    doc = cJSON_CreateObject();
    if (!doc)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    cJSON_AddStringToObject(doc, "instance-id", m->instance_id);
    cJSON_AddStringToObject(doc, "local-hostname", m->hostname);
    cJSON_AddStringToObject(doc, "hostname", m->hostname);
    if (m->n_public_keys) {
        struct vbuf keys;
        vbuf_init(&keys, GI_MAX_ENCODED_VALUE);
        for (size_t i = 0; i < m->n_public_keys; i++)
            vbuf_addf(&keys, "%s%s", i ? "\n" : "", m->public_keys[i] ? m->public_keys[i] : "");
        if (vbuf_error(&keys)) {
            rc = vmop_fail(err, vbuf_error(&keys), "SSH public keys are too large");
            vbuf_free(&keys);
            goto out;
        }
        cJSON_AddStringToObject(doc, "public-keys", vbuf_str(&keys));
        vbuf_free(&keys);
    }
    if (m->wait_on_network4 >= 0 || m->wait_on_network6 >= 0) {
        cJSON *w = cJSON_AddObjectToObject(doc, "wait-on-network");
        cJSON_AddBoolToObject(w, "ipv4", m->wait_on_network4 > 0);
        cJSON_AddBoolToObject(w, "ipv6", m->wait_on_network6 > 0);
    }
    net = cJSON_AddObjectToObject(doc, "network");
    cJSON_AddNumberToObject(net, "version", 2);
    eth = cJSON_AddObjectToObject(net, "ethernets");
    for (size_t i = 0; i < m->n_ifaces; i++) {
        rc = add_iface(eth, &m->ifaces[i], i, err);
        if (rc)
            goto out;
    }
    text = cJSON_PrintUnformatted(doc);
    if (!text) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    *ret_json = text;
out:
    cJSON_Delete(doc);
    return rc;
}
