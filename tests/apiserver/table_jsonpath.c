/* table_jsonpath.c: the JSONPath subset of printer columns (table.h: as_jsonpath_eval), timestamps
 * and kubectl's HumanDuration. */
#include "table.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define JP_MAX_LEN 512 /* CRD authors control column paths */

void as_human_duration(long long seconds, char *buf, size_t size)
{
    /* k8s.io/apimachinery/pkg/util/duration.HumanDuration */
    long long minutes, hours;
    if (seconds < -1) {
        snprintf(buf, size, "<invalid>");
        return;
    }
    if (seconds < 0) {
        snprintf(buf, size, "0s");
        return;
    }
    if (seconds < 60 * 2) {
        snprintf(buf, size, "%llds", seconds);
        return;
    }
    minutes = seconds / 60;
    if (minutes < 10) {
        long long s = seconds % 60;
        if (s == 0)
            snprintf(buf, size, "%lldm", minutes);
        else
            snprintf(buf, size, "%lldm%llds", minutes, s);
        return;
    }
    if (minutes < 60 * 3) {
        snprintf(buf, size, "%lldm", minutes);
        return;
    }
    hours = seconds / 3600;
    if (hours < 8) {
        long long m = minutes % 60;
        if (m == 0)
            snprintf(buf, size, "%lldh", hours);
        else
            snprintf(buf, size, "%lldh%lldm", hours, m);
    } else if (hours < 48) {
        snprintf(buf, size, "%lldh", hours);
    } else if (hours < 24 * 8) {
        long long h = hours % 24;
        if (h == 0)
            snprintf(buf, size, "%lldd", hours / 24);
        else
            snprintf(buf, size, "%lldd%lldh", hours / 24, h);
    } else if (hours < 24 * 365 * 2) {
        snprintf(buf, size, "%lldd", hours / 24);
    } else if (hours < 24 * 365 * 8) {
        long long dy = (hours / 24) % 365;
        if (dy == 0)
            snprintf(buf, size, "%lldy", hours / 24 / 365);
        else
            snprintf(buf, size, "%lldy%lldd", hours / 24 / 365, dy);
    } else {
        snprintf(buf, size, "%lldy", hours / 24 / 365);
    }
}

static int num(const char *s, int n, int *ret)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *ret = v;
    return 0;
}

int as_parse_timestamp(const char *s, long long *ret_secs)
{
    struct tm tm;
    int y, mo, d, h, mi, se, oh = 0, om = 0, sign = 0;
    const char *p;
    if (!s || strlen(s) < 20 || num(s, 4, &y) || s[4] != '-' || num(s + 5, 2, &mo) || s[7] != '-' ||
        num(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') || num(s + 11, 2, &h) || s[13] != ':' ||
        num(s + 14, 2, &mi) || s[16] != ':' || num(s + 17, 2, &se))
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return -1;
    p = s + 19;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return -1;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if ((*p == 'Z' || *p == 'z') && !p[1]) {
        sign = 0;
    } else if ((*p == '+' || *p == '-') && !num(p + 1, 2, &oh) && p[3] == ':' &&
               !num(p + 4, 2, &om) && !p[6]) {
        sign = *p == '+' ? 1 : -1;
    } else {
        return -1;
    }
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = se;
    *ret_secs = (long long)timegm(&tm) - sign * (oh * 3600LL + om * 60LL);
    return 0;
}

/* One step of a path: .name, [n], [*], ['name'], [?(@.a.b OP literal)]. */
struct jp {
    const char *p;
    struct vmop_err *err;
    const cJSON **out;
    size_t n, max;
    int bad;
};

static int read_name(const char **pp, char *buf, size_t size)
{
    const char *p = *pp;
    size_t n = 0;
    while (*p && *p != '.' && *p != '[' && n + 1 < size)
        buf[n++] = *p++;
    buf[n] = '\0';
    *pp = p;
    return n ? 0 : -1;
}

static void walk(struct jp *j, const char *p, const cJSON *v, int depth);

static void emit(struct jp *j, const cJSON *v)
{
    if (j->n < j->max)
        j->out[j->n++] = v;
}

/* Does item satisfy "@.a.b OP literal"? */
static int filter_match(const char *expr, size_t len, const cJSON *item)
{
    char buf[JP_MAX_LEN + 1], path[JP_MAX_LEN + 1], lit[JP_MAX_LEN + 1];
    const char *op;
    int neg;
    if (len > JP_MAX_LEN)
        return 0;
    memcpy(buf, expr, len);
    buf[len] = '\0';
    op = strstr(buf, "==");
    neg = 0;
    if (!op) {
        op = strstr(buf, "!=");
        neg = 1;
    }
    if (!op || buf[0] != '@')
        return 0;
    snprintf(path, sizeof(path), "%.*s", (int)(op - buf - 1), buf + 1);
    for (char *e = path + strlen(path); e > path && isspace((unsigned char)e[-1]); e--)
        e[-1] = '\0';
    const char *l = op + 2;
    while (isspace((unsigned char)*l))
        l++;
    snprintf(lit, sizeof(lit), "%s", l);
    for (char *e = lit + strlen(lit); e > lit && isspace((unsigned char)e[-1]); e--)
        e[-1] = '\0';
    /* Evaluate the path on the item (first match). */
    const cJSON *v = NULL;
    size_t nm = 0;
    struct vmop_err ignored = {0};
    int eq = 0;
    if (as_jsonpath_eval(path, item, &v, 1, &nm, &ignored) == VMOP_OK && nm == 1) {
        size_t ll = strlen(lit);
        if ((lit[0] == '"' || lit[0] == '\'') && ll >= 2 && lit[ll - 1] == lit[0]) {
            eq = cJSON_IsString(v) && strlen(v->valuestring) == ll - 2 &&
                 !strncmp(v->valuestring, lit + 1, ll - 2);
        } else if (cJSON_IsNumber(v)) {
            char *end;
            double d = strtod(lit, &end);
            eq = !*end && d == v->valuedouble;
        } else if (cJSON_IsBool(v)) {
            eq = !strcmp(lit, cJSON_IsTrue(v) ? "true" : "false");
        }
    } else if (!strcmp(lit, "null") || !strcmp(lit, "\"\"")) {
        eq = 0;
    }
    return neg ? !eq : eq;
}

static void walk(struct jp *j, const char *p, const cJSON *v, int depth)
{
    char name[JP_MAX_LEN + 1];
    if (j->bad || !v || depth > 64)
        return;
    while (*p == ' ')
        p++;
    if (!*p) {
        emit(j, v);
        return;
    }
    if (*p == '.') {
        p++;
        if (*p == '*') {
            const cJSON *c;
            cJSON_ArrayForEach(c, v) walk(j, p + 1, c, depth + 1);
            return;
        }
        if (read_name(&p, name, sizeof(name))) {
            j->bad = 1;
            vmop_fail(j->err, VMOP_E_INVALID, "unsupported JSONPath: empty field name");
            return;
        }
        if (cJSON_IsObject(v))
            walk(j, p, cJSON_GetObjectItemCaseSensitive(v, name), depth + 1);
        return;
    }
    if (*p == '[') {
        const char *close;
        p++;
        if (*p == '?') {
            /* [?(...)] */
            const char *start = strchr(p, '(');
            close = strstr(p, ")]");
            if (!start || !close || start > close) {
                j->bad = 1;
                vmop_fail(j->err, VMOP_E_INVALID, "unsupported JSONPath filter");
                return;
            }
            const cJSON *c;
            cJSON_ArrayForEach(c, v)
            {
                if (filter_match(start + 1, (size_t)(close - start - 1), c))
                    walk(j, close + 2, c, depth + 1);
            }
            return;
        }
        close = strchr(p, ']');
        if (!close) {
            j->bad = 1;
            vmop_fail(j->err, VMOP_E_INVALID, "unsupported JSONPath: missing ]");
            return;
        }
        if (*p == '*') {
            const cJSON *c;
            cJSON_ArrayForEach(c, v) walk(j, close + 1, c, depth + 1);
            return;
        }
        if (*p == '\'' || *p == '"') {
            size_t n = (size_t)(close - p);
            if (n < 2 || p[n - 1] != *p || n - 2 > JP_MAX_LEN) {
                j->bad = 1;
                vmop_fail(j->err, VMOP_E_INVALID, "unsupported JSONPath key");
                return;
            }
            memcpy(name, p + 1, n - 2);
            name[n - 2] = '\0';
            if (cJSON_IsObject(v))
                walk(j, close + 1, cJSON_GetObjectItemCaseSensitive(v, name), depth + 1);
            return;
        }
        char *end;
        long idx = strtol(p, &end, 10);
        if (end != close) {
            j->bad = 1;
            vmop_fail(j->err, VMOP_E_INVALID, "unsupported JSONPath index or slice");
            return;
        }
        if (!cJSON_IsArray(v))
            return;
        if (idx < 0)
            idx += cJSON_GetArraySize(v);
        if (idx >= 0)
            walk(j, close + 1, cJSON_GetArrayItem(v, (int)idx), depth + 1);
        return;
    }
    j->bad = 1;
    vmop_fail(j->err, VMOP_E_INVALID, "unsupported JSONPath near '%.20s'", p);
}

vmop_rc as_jsonpath_eval(const char *path, const cJSON *obj, const cJSON **ret_matches,
                         size_t max_matches, size_t *ret_n, struct vmop_err *err)
{
    struct jp j = {.err = err, .out = ret_matches, .max = max_matches};
    char buf[JP_MAX_LEN + 1];
    size_t n;
    if (!path || (n = strlen(path)) > JP_MAX_LEN)
        return vmop_fail(err, VMOP_E_INVALID, "JSONPath missing or longer than %d bytes",
                         JP_MAX_LEN);
    /* Accept "{.a.b}" as kubectl templates write it. */
    if (path[0] == '{' && n >= 2 && path[n - 1] == '}') {
        memcpy(buf, path + 1, n - 2);
        buf[n - 2] = '\0';
        path = buf;
    }
    if (path[0] != '.' && path[0] != '[')
        return vmop_fail(err, VMOP_E_INVALID, "unsupported JSONPath '%s': must start with '.'",
                         path);
    walk(&j, path, obj, 0);
    if (j.bad)
        return VMOP_E_INVALID;
    *ret_n = j.n;
    return VMOP_OK;
}
