/* kube_util.c: helpers shared by the Kubernetes client: RFC 3339 times, percent-encoding,
 * bounded file reads, cJSON getters. No network I/O here.
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

/* ---- RFC 3339 times ---- */

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
                vmop_free_secret_n(buf, cap); /* files may hold keys or tokens */
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
        vmop_free_secret_n(buf, cap);
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
