/* schema_format.c: the string `format` checks of CRD validation (the subset of kube-openapi's
 * strfmt registry that CRDs use: date-time, date, uuid*, byte, ipv4, ipv6, cidr, hostname, email,
 * duration, mac). Unknown formats pass, as in Kubernetes. */
#include "schema_fmt.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int digits(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

static int is_date(const char *s)
{
    if (strlen(s) < 10 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' ||
        !digits(s + 8, 2))
        return 0;
    int m = (s[5] - '0') * 10 + (s[6] - '0'), d = (s[8] - '0') * 10 + (s[9] - '0');
    return m >= 1 && m <= 12 && d >= 1 && d <= 31;
}

int as_format_datetime(const char *s)
{
    /* RFC 3339: 2006-01-02T15:04:05[.frac](Z|+hh:mm); 't', 'z' and ' ' accepted like strfmt. */
    if (!is_date(s) || (s[10] != 'T' && s[10] != 't' && s[10] != ' '))
        return 0;
    s += 11;
    if (!digits(s, 2) || s[2] != ':' || !digits(s + 3, 2) || s[5] != ':' || !digits(s + 6, 2))
        return 0;
    if ((s[0] - '0') * 10 + (s[1] - '0') > 23 || (s[3] - '0') * 10 + (s[4] - '0') > 59 ||
        (s[6] - '0') * 10 + (s[7] - '0') > 60)
        return 0;
    s += 8;
    if (*s == '.') {
        s++;
        if (!isdigit((unsigned char)*s))
            return 0;
        while (isdigit((unsigned char)*s))
            s++;
    }
    if ((*s == 'Z' || *s == 'z') && s[1] == '\0')
        return 1;
    if ((*s == '+' || *s == '-') && digits(s + 1, 2) && s[3] == ':' && digits(s + 4, 2) &&
        s[6] == '\0')
        return 1;
    return 0;
}

static int hexn(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

static int is_uuid(const char *s, int version)
{
    if (strlen(s) != 36 || !hexn(s, 8) || s[8] != '-' || !hexn(s + 9, 4) || s[13] != '-' ||
        !hexn(s + 14, 4) || s[18] != '-' || !hexn(s + 19, 4) || s[23] != '-' || !hexn(s + 24, 12))
        return 0;
    return version == 0 || s[14] == '0' + version;
}

static int is_base64(const char *s)
{
    size_t n = strlen(s), pad = 0;
    if (n % 4)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '=') {
            pad++;
            continue;
        }
        if (pad || !(isalnum(c) || c == '+' || c == '/'))
            return 0;
    }
    return pad <= 2;
}

static int is_hostname(const char *s)
{
    size_t n = strlen(s), label = 0;
    if (n == 0 || n > 255)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '.') {
            if (label == 0 || s[i - 1] == '-')
                return 0;
            label = 0;
            continue;
        }
        if (!(isalnum(c) || c == '-' || c == '_') || (label == 0 && c == '-') || ++label > 63)
            return 0;
    }
    return s[n - 1] != '-';
}

static int is_duration(const char *s)
{
    /* Go time.ParseDuration, also accepting strfmt's "d" and "w" units. */
    static const char *const units[] = {"ns", "us", "µs", "ms", "s", "m", "h", "d", "w", NULL};
    if (*s == '+' || *s == '-')
        s++;
    if (strcmp(s, "0") == 0)
        return 1;
    if (!*s)
        return 0;
    while (*s) {
        int any = 0;
        while (isdigit((unsigned char)*s))
            s++, any = 1;
        if (*s == '.') {
            s++;
            while (isdigit((unsigned char)*s))
                s++, any = 1;
        }
        if (!any)
            return 0;
        int ok = 0;
        for (int i = 0; units[i]; i++) {
            size_t l = strlen(units[i]);
            if (strncmp(s, units[i], l) == 0 && (l > 1 || s[1] != 's')) {
                s += l;
                ok = 1;
                break;
            }
        }
        if (!ok)
            return 0;
    }
    return 1;
}

static int is_cidr(const char *s)
{
    char ip[64];
    const char *slash = strchr(s, '/');
    unsigned char buf[16];
    char *end;
    long bits;
    if (!slash || (size_t)(slash - s) >= sizeof(ip))
        return 0;
    memcpy(ip, s, (size_t)(slash - s));
    ip[slash - s] = '\0';
    bits = strtol(slash + 1, &end, 10);
    if (*end || end == slash + 1)
        return 0;
    if (inet_pton(AF_INET, ip, buf) == 1)
        return bits >= 0 && bits <= 32;
    if (inet_pton(AF_INET6, ip, buf) == 1)
        return bits >= 0 && bits <= 128;
    return 0;
}

static int is_mac(const char *s)
{
    size_t n = strlen(s);
    if (n != 17)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (i % 3 == 2 ? (s[i] != ':' && s[i] != '-') : !isxdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

static int is_email(const char *s)
{
    const char *at = strchr(s, '@');
    return at && at != s && !strchr(at + 1, '@') && is_hostname(at + 1);
}

int as_format_ok(const char *format, const char *s)
{
    unsigned char buf[16];
    if (strcmp(format, "date-time") == 0 || strcmp(format, "datetime") == 0)
        return as_format_datetime(s);
    if (strcmp(format, "date") == 0)
        return is_date(s) && s[10] == '\0';
    if (strcmp(format, "uuid") == 0)
        return is_uuid(s, 0);
    if (strcmp(format, "uuid3") == 0)
        return is_uuid(s, 3);
    if (strcmp(format, "uuid4") == 0)
        return is_uuid(s, 4);
    if (strcmp(format, "uuid5") == 0)
        return is_uuid(s, 5);
    if (strcmp(format, "byte") == 0)
        return is_base64(s);
    if (strcmp(format, "ipv4") == 0)
        return inet_pton(AF_INET, s, buf) == 1;
    if (strcmp(format, "ipv6") == 0)
        return inet_pton(AF_INET6, s, buf) == 1;
    if (strcmp(format, "cidr") == 0)
        return is_cidr(s);
    if (strcmp(format, "hostname") == 0)
        return is_hostname(s);
    if (strcmp(format, "email") == 0)
        return is_email(s);
    if (strcmp(format, "duration") == 0)
        return is_duration(s);
    if (strcmp(format, "mac") == 0)
        return is_mac(s);
    return 1;
}
