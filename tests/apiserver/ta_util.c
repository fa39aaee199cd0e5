/* ta_util.c: small helpers for kube-testapi: times, uids, random names, cJSON accessors, kube
 * version ordering, name validation, base64. No state. */
#include "ta.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

void ta_now_rfc3339(char buf[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

long long ta_parse_rfc3339(const char *s)
{
    struct tm tm;
    const char *end;
    if (!s)
        return -1;
    memset(&tm, 0, sizeof(tm));
    end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end)
        return -1;
    if (*end == '.')
        for (end++; isdigit((unsigned char)*end); end++)
            ;
    if (*end != 'Z' && *end != '+' && *end != '-')
        return -1;
    return (long long)timegm(&tm);
}

static void fill_random(unsigned char *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(p + got, n - got, 0);
        if (r <= 0) {
            /* cannot happen on Linux >= 3.17 for small reads; keep going with a weak fallback */
            for (; got < n; got++)
                p[got] = (unsigned char)rand();
            return;
        }
        got += (size_t)r;
    }
}

void ta_uuid(char buf[37])
{
    unsigned char b[16];
    fill_random(b, sizeof(b));
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(buf, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

void ta_random_suffix(char *buf, size_t n)
{
    /* the alphabet of apimachinery's utilrand.String: no vowels, no confusable digits */
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned char r[64];
    size_t i;
    if (n > sizeof(r))
        n = sizeof(r);
    fill_random(r, n);
    for (i = 0; i < n; i++)
        buf[i] = alphabet[r[i] % (sizeof(alphabet) - 1)];
    buf[n] = '\0';
}

long long ta_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *ta_jstr(const cJSON *o, const char *key)
{
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

cJSON *ta_jobj(cJSON *o, const char *key, int create)
{
    cJSON *v;
    if (!cJSON_IsObject(o))
        return NULL;
    v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsObject(v))
        return v;
    if (!create)
        return NULL;
    if (v)
        cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    return cJSON_AddObjectToObject(o, key);
}

const char *ta_meta_str(const cJSON *obj, const char *field)
{
    const cJSON *m = obj ? cJSON_GetObjectItemCaseSensitive(obj, "metadata") : NULL;
    return ta_jstr(m, field);
}

void ta_jset_str(cJSON *o, const char *key, const char *val)
{
    cJSON *v;
    if (!o)
        return;
    v = cJSON_CreateString(val);
    if (!v)
        return;
    if (cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_ReplaceItemInObjectCaseSensitive(o, key, v);
    else
        cJSON_AddItemToObject(o, key, v);
}

void ta_jset_num(cJSON *o, const char *key, double val)
{
    cJSON *v;
    if (!o)
        return;
    v = cJSON_CreateNumber(val);
    if (!v)
        return;
    if (cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_ReplaceItemInObjectCaseSensitive(o, key, v);
    else
        cJSON_AddItemToObject(o, key, v);
}

const cJSON *ta_jpath(const cJSON *o, const char *path)
{
    char seg[256];
    const char *p = path;
    if (*p == '.')
        p++;
    while (o && *p) {
        size_t n = strcspn(p, ".");
        if (n == 0 || n >= sizeof(seg))
            return NULL;
        memcpy(seg, p, n);
        seg[n] = '\0';
        o = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, seg) : NULL;
        p += n;
        if (*p == '.')
            p++;
    }
    return o;
}

/* Splits "v1beta2" into major 1, kind beta (2 GA, 1 beta, 0 alpha), minor 2. Returns 0 when the
 * name is not kube-like. */
static int parse_kube_version(const char *v, long *major, int *kind, long *minor)
{
    char *end;
    if (v[0] != 'v' || !isdigit((unsigned char)v[1]))
        return 0;
    *major = strtol(v + 1, &end, 10);
    *minor = 0;
    if (*end == '\0') {
        *kind = 2;
        return 1;
    }
    if (strncmp(end, "beta", 4) == 0) {
        *kind = 1;
        end += 4;
    } else if (strncmp(end, "alpha", 5) == 0) {
        *kind = 0;
        end += 5;
    } else {
        return 0;
    }
    if (!isdigit((unsigned char)*end))
        return 0;
    *minor = strtol(end, &end, 10);
    return *end == '\0';
}

int ta_version_cmp(const char *a, const char *b)
{
    long ma, mb, na, nb;
    int ka, kb, va = parse_kube_version(a, &ma, &ka, &na),
                vb = parse_kube_version(b, &mb, &kb, &nb);
    if (va != vb)
        return va ? -1 : 1;
    if (!va)
        return strcmp(a, b);
    if (ka != kb)
        return kb - ka;
    if (ma != mb)
        return ma > mb ? -1 : 1;
    if (na != nb)
        return na > nb ? -1 : 1;
    return 0;
}

char *ta_qualified(const struct ta_rtype *rt)
{
    size_t n = strlen(rt->plural) + strlen(rt->group) + 2;
    char *s = malloc(n);
    if (!s)
        return NULL;
    if (rt->group[0])
        snprintf(s, n, "%s.%s", rt->plural, rt->group);
    else
        snprintf(s, n, "%s", rt->plural);
    return s;
}

int ta_valid_dns_label(const char *s)
{
    size_t n = strlen(s), i;
    if (n == 0 || n > 63)
        return 0;
    for (i = 0; i < n; i++) {
        char c = s[i];
        if (!(islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-'))
            return 0;
    }
    return s[0] != '-' && s[n - 1] != '-';
}

int ta_valid_dns_subdomain(const char *s)
{
    size_t n = strlen(s), i;
    if (n == 0 || n > TA_MAX_NAME)
        return 0;
    for (i = 0; i < n; i++) {
        char c = s[i];
        int alnum = islower((unsigned char)c) || isdigit((unsigned char)c);
        if (!(alnum || c == '-' || c == '.'))
            return 0;
        if (c != '-' && !alnum && (i == 0 || i == n - 1))
            return 0;
        if ((c == '.' || c == '-') && (i == 0 || i == n - 1))
            return 0;
        if (c == '.' && (s[i - 1] == '.' || s[i - 1] == '-' || s[i + 1] == '-'))
            return 0;
    }
    return 1;
}

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *ta_b64(const unsigned char *d, size_t n)
{
    size_t i, o = 0;
    char *s = malloc((n + 2) / 3 * 4 + 1);
    if (!s)
        return NULL;
    for (i = 0; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
        s[o++] = b64chars[v >> 18 & 63];
        s[o++] = b64chars[v >> 12 & 63];
        s[o++] = b64chars[v >> 6 & 63];
        s[o++] = b64chars[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0);
        s[o++] = b64chars[v >> 18 & 63];
        s[o++] = b64chars[v >> 12 & 63];
        s[o++] = i + 1 < n ? b64chars[v >> 6 & 63] : '=';
        s[o++] = '=';
    }
    s[o] = '\0';
    return s;
}

unsigned char *ta_unb64(const char *s, size_t *ret_n)
{
    size_t n = strlen(s), o = 0, i;
    uint32_t acc = 0;
    int bits = 0;
    unsigned char *d = malloc(n / 4 * 3 + 3);
    if (!d)
        return NULL;
    for (i = 0; i < n; i++) {
        const char *p;
        if (s[i] == '=')
            break;
        p = strchr(b64chars, s[i]);
        if (!p || !s[i]) {
            free(d);
            return NULL;
        }
        acc = acc << 6 | (uint32_t)(p - b64chars);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            d[o++] = (unsigned char)(acc >> bits & 0xff);
        }
    }
    *ret_n = o;
    return d;
}
