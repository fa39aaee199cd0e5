/* kube_util.c: helpers shared by the Kubernetes client: hash map, clocks, RFC 3339 times,
 * percent-encoding, base64, bounded file reads, cJSON getters. No network I/O here.
 */
#include "kube_util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- map ---- */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

void kube_map_init(struct kube_map *m, void (*val_free)(void *))
{
    memset(m, 0, sizeof(*m));
    m->val_free = val_free;
}

void kube_map_clear(struct kube_map *m)
{
    for (size_t i = 0; i < m->n_buckets; i++) {
        struct kube_map_entry *e = m->buckets[i];
        while (e) {
            struct kube_map_entry *next = e->next;
            if (m->val_free)
                m->val_free(e->val);
            free(e->key);
            free(e);
            e = next;
        }
    }
    free(m->buckets);
    m->buckets = NULL;
    m->n_buckets = 0;
    m->len = 0;
}

static struct kube_map_entry **find_slot(const struct kube_map *m, const char *key)
{
    if (!m->n_buckets)
        return NULL;
    struct kube_map_entry **p = &m->buckets[hash_str(key) & (m->n_buckets - 1)];
    while (*p && strcmp((*p)->key, key) != 0)
        p = &(*p)->next;
    return p;
}

void *kube_map_get(const struct kube_map *m, const char *key)
{
    struct kube_map_entry **p = find_slot(m, key);
    return p && *p ? (*p)->val : NULL;
}

int kube_map_has(const struct kube_map *m, const char *key)
{
    struct kube_map_entry **p = find_slot(m, key);
    return p && *p;
}

static int grow(struct kube_map *m)
{
    size_t n = m->n_buckets ? m->n_buckets * 2 : 16;
    struct kube_map_entry **nb = calloc(n, sizeof(*nb));
    if (!nb)
        return -1;
    for (size_t i = 0; i < m->n_buckets; i++) {
        struct kube_map_entry *e = m->buckets[i];
        while (e) {
            struct kube_map_entry *next = e->next;
            size_t b = hash_str(e->key) & (n - 1);
            e->next = nb[b];
            nb[b] = e;
            e = next;
        }
    }
    free(m->buckets);
    m->buckets = nb;
    m->n_buckets = n;
    return 0;
}

vmop_rc kube_map_put(struct kube_map *m, const char *key, void *val)
{
    struct kube_map_entry **p = find_slot(m, key);
    if (p && *p) {
        if (m->val_free && (*p)->val != val)
            m->val_free((*p)->val);
        (*p)->val = val;
        return VMOP_OK;
    }
    if (m->len + 1 > m->n_buckets * 3 / 4 && grow(m) != 0)
        return VMOP_E_NOMEM;
    struct kube_map_entry *e = calloc(1, sizeof(*e));
    char *k = strdup(key);
    if (!e || !k) {
        free(e);
        free(k);
        return VMOP_E_NOMEM;
    }
    e->key = k;
    e->val = val;
    size_t b = hash_str(key) & (m->n_buckets - 1);
    e->next = m->buckets[b];
    m->buckets[b] = e;
    m->len++;
    return VMOP_OK;
}

void *kube_map_take(struct kube_map *m, const char *key)
{
    struct kube_map_entry **p = find_slot(m, key);
    if (!p || !*p)
        return NULL;
    struct kube_map_entry *e = *p;
    void *val = e->val;
    *p = e->next;
    free(e->key);
    free(e);
    m->len--;
    return val;
}

int kube_map_del(struct kube_map *m, const char *key)
{
    struct kube_map_entry **p = find_slot(m, key);
    if (!p || !*p)
        return 0;
    void *val = kube_map_take(m, key);
    if (m->val_free)
        m->val_free(val);
    return 1;
}

struct kube_map_entry *kube_map_first(const struct kube_map *m, struct kube_map_iter *it)
{
    it->bucket = 0;
    it->e = NULL;
    return kube_map_next(m, it);
}

struct kube_map_entry *kube_map_next(const struct kube_map *m, struct kube_map_iter *it)
{
    if (it->e && it->e->next) {
        it->e = it->e->next;
        return it->e;
    }
    size_t b = it->e ? it->bucket + 1 : it->bucket;
    for (; b < m->n_buckets; b++) {
        if (m->buckets[b]) {
            it->bucket = b;
            it->e = m->buckets[b];
            return it->e;
        }
    }
    it->bucket = m->n_buckets;
    it->e = NULL;
    return NULL;
}

/* ---- clocks ---- */

int64_t kube_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t kube_wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void kube_format_time(int64_t wall_us, int micro, char *out, size_t out_len)
{
    time_t secs = (time_t)(wall_us / 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    if (micro)
        snprintf(out, out_len, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 (int)(wall_us % 1000000));
    else
        snprintf(out, out_len, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static int digits(const char **p, int n, int *ret)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if ((*p)[i] < '0' || (*p)[i] > '9')
            return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *ret = v;
    return 0;
}

int kube_parse_time(const char *s, int64_t *ret_us)
{
    int y, mo, d, h, mi, sec;
    const char *p = s;
    if (!s || digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
        digits(&p, 2, &d))
        return -1;
    if (*p != 'T' && *p != 't')
        return -1;
    p++;
    if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' ||
        digits(&p, 2, &sec))
        return -1;
    int64_t frac_us = 0;
    if (*p == '.') {
        p++;
        int scale = 100000, nd = 0;
        while (*p >= '0' && *p <= '9') {
            if (nd++ < 6) {
                frac_us += (*p - '0') * scale;
                scale /= 10;
            }
            p++;
        }
        if (!nd)
            return -1;
    }
    int off_min = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1, oh, om;
        if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om))
            return -1;
        off_min = sign * (oh * 60 + om);
    } else {
        return -1;
    }
    if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return -1;
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = mo - 1,
                    .tm_mday = d,
                    .tm_hour = h,
                    .tm_min = mi,
                    .tm_sec = sec};
    time_t t = timegm(&tm);
    *ret_us = ((int64_t)t - (int64_t)off_min * 60) * 1000000 + frac_us;
    return 0;
}

/* ---- randomness ---- */

static pthread_mutex_t rand_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t rand_state;

uint64_t kube_rand(uint64_t n)
{
    if (n == 0)
        return 0;
    pthread_mutex_lock(&rand_lock);
    if (!rand_state)
        rand_state = (uint64_t)kube_wall_us() ^ ((uint64_t)getpid() << 32) ^ 0x9E3779B97F4A7C15ULL;
    /* xorshift64* */
    rand_state ^= rand_state >> 12;
    rand_state ^= rand_state << 25;
    rand_state ^= rand_state >> 27;
    uint64_t r = rand_state * 2685821657736338717ULL;
    pthread_mutex_unlock(&rand_lock);
    return r % n;
}

int64_t kube_jitter_ms(int64_t d, double factor)
{
    if (d <= 0 || factor <= 0)
        return d;
    uint64_t span = (uint64_t)((double)d * factor);
    return d + (int64_t)kube_rand(span + 1);
}

void kube_sleep_ms(int64_t ms, const int *stop)
{
    int64_t end = kube_mono_ms() + ms;
    for (;;) {
        if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE))
            return;
        int64_t left = end - kube_mono_ms();
        if (left <= 0)
            return;
        if (left > 20)
            left = 20;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)left * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* ---- encoding ---- */

vmop_rc kube_url_escape(struct vbuf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            vbuf_add(b, s, 1);
        } else {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            vbuf_add(b, e, 3);
        }
    }
    return vbuf_error(b);
}

static int b64val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

vmop_rc kube_base64_decode(const char *in, char **ret, size_t *ret_len, struct vmop_err *err)
{
    size_t n = strlen(in);
    char *out = malloc(n / 4 * 3 + 4);
    if (!out)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory decoding base64");
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0, pad = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        int v = b64val(c);
        if (v < 0 || pad) {
            kube_free_secret_n(out, n / 4 * 3 + 4);
            return vmop_fail(err, VMOP_E_INVALID, "invalid base64 data at offset %zu", i);
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xFF);
        }
    }
    out[o] = '\0';
    *ret = out;
    *ret_len = o;
    return VMOP_OK;
}

vmop_rc kube_read_file(const char *path, size_t max, char **ret, size_t *ret_len,
                       struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return vmop_fail(err, errno == ENOENT ? VMOP_E_NOT_FOUND : VMOP_E_INVALID,
                         "cannot open '%s': %s", path, strerror(errno));
    for (;;) {
        if (len + 1 >= cap) {
            size_t ncap = cap ? cap * 2 : 4096;
            if (ncap > max + 1)
                ncap = max + 1;
            if (len + 1 >= ncap) {
                rc = vmop_fail(err, VMOP_E_TOOBIG, "'%s' is larger than %zu bytes", path, max);
                goto out;
            }
            char *nb = malloc(ncap);
            if (!nb) {
                rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory reading '%s'", path);
                goto out;
            }
            if (buf) {
                memcpy(nb, buf, len);
                kube_free_secret_n(buf, cap); /* files may hold keys or tokens */
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + len, cap - 1 - len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            rc = vmop_fail(err, VMOP_E_INVALID, "cannot read '%s': %s", path, strerror(errno));
            goto out;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    if (!buf) {
        buf = malloc(1);
        if (!buf) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory reading '%s'", path);
            goto out;
        }
    }
    buf[len] = '\0';
    *ret = buf;
    *ret_len = len;
    buf = NULL;
out:
    if (buf)
        kube_free_secret_n(buf, cap);
    close(fd);
    return rc;
}

/* ---- cJSON getters ---- */

const char *kube_json_str(const cJSON *obj, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, field);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *kube_json_path_str(const cJSON *obj, const char *a, const char *b)
{
    return kube_json_str(cJSON_GetObjectItemCaseSensitive(obj, a), b);
}

const char *kube_obj_namespace(const cJSON *obj)
{
    return kube_json_path_str(obj, "metadata", "namespace");
}

const char *kube_obj_name(const cJSON *obj)
{
    return kube_json_path_str(obj, "metadata", "name");
}

const char *kube_obj_rv(const cJSON *obj)
{
    return kube_json_path_str(obj, "metadata", "resourceVersion");
}

const char *kube_obj_uid(const cJSON *obj)
{
    return kube_json_path_str(obj, "metadata", "uid");
}

static int is_decimal(const char *s)
{
    if (!*s || strlen(s) > 19)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

int kube_rv_cmp(const char *a, const char *b)
{
    if (!a || !b)
        return a == b ? 0 : -2;
    if (is_decimal(a) && is_decimal(b)) {
        unsigned long long x = strtoull(a, NULL, 10), y = strtoull(b, NULL, 10);
        return x < y ? -1 : x > y ? 1 : 0;
    }
    return strcmp(a, b) == 0 ? 0 : -2;
}

void kube_free_secret(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

void kube_free_secret_n(void *p, size_t n)
{
    if (p) {
        explicit_bzero(p, n);
        free(p);
    }
}
