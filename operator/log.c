/* log.c: structured JSON log lines (see log.h). */
#include "log.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vbuf.h"

static int g_level = VLOG_INFO;
static int g_fd = 2;

int vlog_level_parse(const char *s)
{
    if (!s)
        return -1;
    if (!strcmp(s, "debug"))
        return VLOG_DEBUG;
    if (!strcmp(s, "info"))
        return VLOG_INFO;
    if (!strcmp(s, "warn") || !strcmp(s, "warning"))
        return VLOG_WARN;
    if (!strcmp(s, "error"))
        return VLOG_ERROR;
    return -1;
}

const char *vlog_level_str(enum vlog_level l)
{
    switch (l) {
    case VLOG_DEBUG:
        return "debug";
    case VLOG_INFO:
        return "info";
    case VLOG_WARN:
        return "warn";
    case VLOG_ERROR:
        return "error";
    }
    return "info";
}

void vlog_set_level(enum vlog_level l)
{
    __atomic_store_n(&g_level, (int)l, __ATOMIC_RELAXED);
}

int vlog_enabled(enum vlog_level l)
{
    return (int)l >= __atomic_load_n(&g_level, __ATOMIC_RELAXED);
}

void vlog_set_fd(int fd)
{
    __atomic_store_n(&g_fd, fd < 0 ? 2 : fd, __ATOMIC_RELAXED);
}

static void add_json_str(struct vbuf *b, const char *s)
{
    vbuf_adds(b, "\"");
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"':
            vbuf_adds(b, "\\\"");
            break;
        case '\\':
            vbuf_adds(b, "\\\\");
            break;
        case '\n':
            vbuf_adds(b, "\\n");
            break;
        case '\r':
            vbuf_adds(b, "\\r");
            break;
        case '\t':
            vbuf_adds(b, "\\t");
            break;
        default:
            if (*p < 0x20)
                vbuf_addf(b, "\\u%04x", *p);
            else
                vbuf_add(b, p, 1);
        }
    }
    vbuf_adds(b, "\"");
}

static void vlog_line(enum vlog_level l, const char *logger, const char *key,
                      const struct vmop_err *err, const char *fmt, va_list ap)
{
    char msg[1024];
    char ts[96];
    struct timespec now;
    struct tm tm;
    struct vbuf b;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (long)(now.tv_nsec / 1000000));
    vbuf_init(&b, 8192);
    vbuf_addf(&b, "{\"ts\":\"%s\",\"level\":\"%s\",\"logger\":", ts, vlog_level_str(l));
    add_json_str(&b, logger ? logger : "vmop");
    if (key) {
        vbuf_adds(&b, ",\"key\":");
        add_json_str(&b, key);
    }
    vbuf_adds(&b, ",\"msg\":");
    add_json_str(&b, msg);
    if (err && err->rc != VMOP_OK) {
        vbuf_adds(&b, ",\"error\":");
        add_json_str(&b, err->msg);
        vbuf_addf(&b, ",\"code\":\"%s\"", vmop_rc_str(err->rc));
        if (err->fault[0]) {
            vbuf_adds(&b, ",\"fault\":");
            add_json_str(&b, err->fault);
        }
    }
    vbuf_adds(&b, "}\n");
    if (vbuf_error(&b) == VMOP_OK) {
        ssize_t w = write(__atomic_load_n(&g_fd, __ATOMIC_RELAXED), b.data, b.len);
        (void)w;
    }
    vbuf_free(&b);
}

void vlog(enum vlog_level l, const char *logger, const char *key, const char *fmt, ...)
{
    va_list ap;
    if (!vlog_enabled(l))
        return;
    va_start(ap, fmt);
    vlog_line(l, logger, key, NULL, fmt, ap);
    va_end(ap);
}

void vlog_err(enum vlog_level l, const char *logger, const char *key, const struct vmop_err *err,
              const char *fmt, ...)
{
    va_list ap;
    if (!vlog_enabled(l))
        return;
    va_start(ap, fmt);
    vlog_line(l, logger, key, err, fmt, ap);
    va_end(ap);
}
