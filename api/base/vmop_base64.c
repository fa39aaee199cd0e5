/* vmop_base64.c: the base64 codec (see vmop_base64.h). */
#include "vmop_base64.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The value of c, or -1; url: also '-' and '_'. */
static int b64val(unsigned char c, int url)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || (url && c == '-'))
        return 62;
    if (c == '/' || (url && c == '_'))
        return 63;
    return -1;
}

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

size_t vmop_base64_len(size_t n)
{
    return 4 * ((n + 2) / 3);
}

vmop_rc vmop_base64_encode(const void *in, size_t n, char **ret, struct vmop_err *err)
{
    const unsigned char *p = in;
    size_t o = 0, i;
    char *out;

    if (n > (SIZE_MAX - 1) / 4 * 3 - 3)
        return vmop_fail(err, VMOP_E_TOOBIG, "%zu bytes are too many to encode", n);
    out = malloc(vmop_base64_len(n) + 1);
    if (!out)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory encoding %zu bytes", n);
    for (i = 0; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        out[o++] = alphabet[v >> 18];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = alphabet[(v >> 6) & 63];
        out[o++] = alphabet[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        out[o++] = alphabet[v >> 18];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
        out[o++] = '=';
    }
    out[o] = '\0';
    *ret = out;
    return VMOP_OK;
}

vmop_rc vmop_base64_decode(const char *in, size_t len, enum vmop_b64_mode mode, char **ret,
                           size_t *ret_len, struct vmop_err *err)
{
    size_t cap = len / 4 * 3 + 4, o = 0, sym = 0, pad = 0;
    int strict = mode == VMOP_B64_STRICT, bits = 0;
    uint32_t acc = 0;
    char *out = malloc(cap);

    if (!out)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory decoding base64");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        int v;
        if (is_space(c))
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        v = b64val(c, !strict);
        if (v < 0 || pad) {
            vmop_free_secret_n(out, cap);
            return vmop_fail(err, VMOP_E_INVALID, "invalid base64 data at offset %zu", i);
        }
        sym++;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xFF);
        }
    }
    /* strict: whole quanta and the padding that completes the last one */
    if (strict && (sym == 0 || (sym + pad) % 4 != 0 || pad > 2 || (pad && sym % 4 + pad != 4))) {
        vmop_free_secret_n(out, cap);
        return vmop_fail(err, VMOP_E_INVALID, "value is not canonical base64");
    }
    out[o] = '\0';
    *ret = out;
    *ret_len = o;
    return VMOP_OK;
}

void vmop_free_secret(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

void vmop_free_secret_n(void *p, size_t n)
{
    if (p) {
        explicit_bzero(p, n);
        free(p);
    }
}
