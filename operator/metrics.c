/* metrics.c: the Prometheus registry (families, series, text exposition 0.0.4), collectors, the
 * standard vmop_* families, the /proc reader for process_* and the collectors over kube_queue,
 * vimclient, vcfeed and the prober. Semantics in metrics.h.
 *
 * One mutex (lock) guards every family and series. A family keeps its series in an array sorted by
 * label values (binary search on update), so rendering needs no sort and is deterministic.
 * Collectors are serialized by collect_lock, taken before lock and never while holding it.
 */
#include "metrics.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube_queue.h"
#include "probe.h"
#include "change_feed.h"
#include "vimclient.h"

const double metrics_default_buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                          1,     2.5,  5,     10,   30,  60};
const size_t metrics_default_nbuckets =
    sizeof(metrics_default_buckets) / sizeof(metrics_default_buckets[0]);

struct series {
    char **values;     /* nlabels owned strings */
    double value;      /* counter, gauge */
    double sum;        /* histogram */
    uint64_t count;    /* histogram */
    uint64_t *buckets; /* histogram: per-bound counts (not cumulative), nbounds entries */
};

struct metrics_family {
    struct metrics *m;
    enum metrics_type type;
    char *name, *help;
    char **labels; /* nlabels owned names */
    size_t nlabels;
    double *bounds;
    size_t nbounds;
    struct series **series; /* sorted by values; guarded by m->lock */
    size_t nseries, cap_series;
};

struct collector {
    metrics_collect_fn fn;
    void *ud;
    void (*ud_free)(void *);
    const void *key;
};

struct metrics {
    pthread_mutex_t lock;         /* families and series */
    pthread_mutex_t collect_lock; /* collectors: list and runs */
    size_t max_series;
    struct metrics_family **fams; /* sorted by name; guarded by lock */
    size_t nfams;
    struct metrics_family *overflow; /* METRICS_OVERFLOW_NAME */
    struct collector *cols;          /* guarded by collect_lock */
    size_t ncols;
};

/* ---- registry ---------------------------------------------------------------------------------
 */

static int valid_name(const char *s, int colon)
{
    size_t i;
    if (!s || !*s || strlen(s) > METRICS_MAX_NAME)
        return 0;
    for (i = 0; s[i]; i++) {
        unsigned char ch = (unsigned char)s[i];
        int ok = isalpha(ch) || ch == '_' || (colon && ch == ':') || (i > 0 && isdigit(ch));
        if (!ok || ch > 0x7f)
            return 0;
    }
    return 1;
}

static size_t count_list(const char *const *l)
{
    size_t n = 0;
    while (l && l[n])
        n++;
    return n;
}

static void series_free(struct series *s, size_t nlabels)
{
    size_t i;
    if (!s)
        return;
    for (i = 0; s->values && i < nlabels; i++)
        free(s->values[i]);
    free(s->values);
    free(s->buckets);
    free(s);
}

static void family_free(struct metrics_family *f)
{
    size_t i;
    if (!f)
        return;
    for (i = 0; i < f->nseries; i++)
        series_free(f->series[i], f->nlabels);
    free(f->series);
    for (i = 0; f->labels && i < f->nlabels; i++)
        free(f->labels[i]);
    free(f->labels);
    free(f->bounds);
    free(f->name);
    free(f->help);
    free(f);
}

void metrics_free(struct metrics *m)
{
    size_t i;
    if (!m)
        return;
    for (i = 0; i < m->ncols; i++)
        if (m->cols[i].ud_free)
            m->cols[i].ud_free(m->cols[i].ud);
    free(m->cols);
    for (i = 0; i < m->nfams; i++)
        family_free(m->fams[i]);
    free(m->fams);
    pthread_mutex_destroy(&m->lock);
    pthread_mutex_destroy(&m->collect_lock);
    free(m);
}

vmop_rc metrics_new(const struct metrics_opts *opts, struct metrics **ret_m, struct vmop_err *err)
{
    struct metrics *m;
    vmop_rc rc;

    if (!ret_m)
        return vmop_fail(err, VMOP_E_INVALID, "metrics_new: no result pointer");
    m = calloc(1, sizeof(*m));
    if (!m)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    pthread_mutex_init(&m->lock, NULL);
    pthread_mutex_init(&m->collect_lock, NULL);
    m->max_series = opts && opts->max_series ? opts->max_series : METRICS_DEFAULT_SERIES;
    rc = metrics_register(m, METRICS_COUNTER, METRICS_OVERFLOW_NAME,
                          "Metric updates dropped because a family reached its series cap or a "
                          "label value was too long.",
                          NULL, NULL, 0, &m->overflow, err);
    if (rc != VMOP_OK) {
        metrics_free(m);
        return rc;
    }
    *ret_m = m;
    return VMOP_OK;
}

/* Compares a series' values with a NULL-terminated list of nlabels values. */
static int values_cmp(char *const *a, const char *const *b, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        int c = strcmp(a[i], b[i]);
        if (c)
            return c;
    }
    return 0;
}

/* Binary search: index of the series with these values (*found = 1) or where it would go. */
static size_t series_find(const struct metrics_family *f, const char *const *values, int *found)
{
    size_t lo = 0, hi = f->nseries;
    *found = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = values_cmp(f->series[mid]->values, values, f->nlabels);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Creates the series at index pos (lock held). */
static vmop_rc series_insert(struct metrics_family *f, size_t pos, const char *const *values,
                             struct series **ret_s)
{
    struct series *s;
    size_t i;

    if (f->nseries == f->cap_series) {
        size_t ncap = f->cap_series ? f->cap_series * 2 : 8;
        struct series **n = realloc(f->series, ncap * sizeof(*n));
        if (!n)
            return VMOP_E_NOMEM;
        f->series = n;
        f->cap_series = ncap;
    }
    s = calloc(1, sizeof(*s));
    if (!s)
        return VMOP_E_NOMEM;
    if (f->nlabels) {
        s->values = calloc(f->nlabels, sizeof(*s->values));
        if (!s->values)
            goto nomem;
        for (i = 0; i < f->nlabels; i++) {
            s->values[i] = strdup(values[i]);
            if (!s->values[i])
                goto nomem;
        }
    }
    if (f->type == METRICS_HISTOGRAM && f->nbounds) {
        s->buckets = calloc(f->nbounds, sizeof(*s->buckets));
        if (!s->buckets)
            goto nomem;
    }
    memmove(&f->series[pos + 1], &f->series[pos], (f->nseries - pos) * sizeof(*f->series));
    f->series[pos] = s;
    f->nseries++;
    *ret_s = s;
    return VMOP_OK;
nomem:
    series_free(s, f->nlabels);
    return VMOP_E_NOMEM;
}

vmop_rc metrics_register(struct metrics *m, enum metrics_type type, const char *name,
                         const char *help, const char *const *labels, const double *buckets,
                         size_t nbuckets, struct metrics_family **ret_f, struct vmop_err *err)
{
    struct metrics_family *f = NULL, **nf;
    size_t i, j, pos;
    vmop_rc rc = VMOP_OK;

    if (!m || !ret_f)
        return vmop_fail(err, VMOP_E_INVALID, "metrics_register: no registry");
    if (type != METRICS_COUNTER && type != METRICS_GAUGE && type != METRICS_HISTOGRAM)
        return vmop_fail(err, VMOP_E_INVALID, "metrics_register: bad type %d", (int)type);
    if (!valid_name(name, 1))
        return vmop_fail(err, VMOP_E_INVALID, "bad metric name");
    if (!help || strlen(help) > METRICS_MAX_HELP)
        return vmop_fail(err, VMOP_E_INVALID, "%s: help text missing or too long", name);
    if (count_list(labels) > METRICS_MAX_LABELS)
        return vmop_fail(err, VMOP_E_INVALID, "%s: more than %d labels", name, METRICS_MAX_LABELS);
    for (i = 0; labels && labels[i]; i++) {
        if (!valid_name(labels[i], 0) || strncmp(labels[i], "__", 2) == 0 ||
            (type == METRICS_HISTOGRAM && strcmp(labels[i], "le") == 0))
            return vmop_fail(err, VMOP_E_INVALID, "%s: bad label name", name);
        for (j = 0; j < i; j++)
            if (strcmp(labels[i], labels[j]) == 0)
                return vmop_fail(err, VMOP_E_INVALID, "%s: label '%s' given twice", name,
                                 labels[i]);
    }
    if (type == METRICS_HISTOGRAM) {
        if (!buckets) {
            buckets = metrics_default_buckets;
            nbuckets = metrics_default_nbuckets;
        }
        if (nbuckets > METRICS_MAX_BUCKETS)
            return vmop_fail(err, VMOP_E_INVALID, "%s: more than %d buckets", name,
                             METRICS_MAX_BUCKETS);
        for (i = 0; i < nbuckets; i++)
            if (!isfinite(buckets[i]) || (i > 0 && buckets[i] <= buckets[i - 1]))
                return vmop_fail(err, VMOP_E_INVALID,
                                 "%s: bucket bounds must be finite and increasing", name);
    } else if (buckets || nbuckets) {
        return vmop_fail(err, VMOP_E_INVALID, "%s: only histograms have buckets", name);
    }

    f = calloc(1, sizeof(*f));
    if (!f)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    f->m = m;
    f->type = type;
    f->name = strdup(name);
    f->help = strdup(help);
    f->nlabels = count_list(labels);
    if (!f->name || !f->help)
        goto nomem;
    if (f->nlabels) {
        f->labels = calloc(f->nlabels, sizeof(*f->labels));
        if (!f->labels)
            goto nomem;
        for (i = 0; i < f->nlabels; i++)
            if (!(f->labels[i] = strdup(labels[i])))
                goto nomem;
    }
    if (type == METRICS_HISTOGRAM && nbuckets) {
        f->bounds = malloc(nbuckets * sizeof(*f->bounds));
        if (!f->bounds)
            goto nomem;
        memcpy(f->bounds, buckets, nbuckets * sizeof(*f->bounds));
        f->nbounds = nbuckets;
    }
    if (f->nlabels == 0) {
        struct series *s;
        if (series_insert(f, 0, NULL, &s) != VMOP_OK)
            goto nomem;
    }

    pthread_mutex_lock(&m->lock);
    for (pos = 0; pos < m->nfams; pos++) {
        int c = strcmp(m->fams[pos]->name, name);
        if (c == 0) {
            rc = vmop_fail(err, VMOP_E_EXISTS, "metric %s registered twice", name);
            break;
        }
        if (c > 0)
            break;
    }
    if (rc == VMOP_OK && m->nfams >= METRICS_MAX_FAMILIES)
        rc = vmop_fail(err, VMOP_E_TOOBIG, "more than %d metric families", METRICS_MAX_FAMILIES);
    if (rc == VMOP_OK) {
        nf = realloc(m->fams, (m->nfams + 1) * sizeof(*nf));
        if (!nf) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        } else {
            m->fams = nf;
            memmove(&nf[pos + 1], &nf[pos], (m->nfams - pos) * sizeof(*nf));
            nf[pos] = f;
            m->nfams++;
        }
    }
    pthread_mutex_unlock(&m->lock);
    if (rc != VMOP_OK) {
        family_free(f);
        return rc;
    }
    *ret_f = f;
    return VMOP_OK;
nomem:
    family_free(f);
    return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
}

/* ---- updates ----------------------------------------------------------------------------------
 */

enum op { OP_ADD, OP_SET, OP_OBSERVE };

static vmop_rc update(struct metrics_family *f, const char *const *values, double v, enum op op)
{
    struct metrics *m;
    struct series *s = NULL;
    size_t pos, i;
    int found;
    vmop_rc rc = VMOP_OK;

    if (!f)
        return VMOP_OK;
    m = f->m;
    if (isnan(v))
        return VMOP_E_INVALID;
    if ((op == OP_OBSERVE) != (f->type == METRICS_HISTOGRAM))
        return VMOP_E_INVALID;
    if (op == OP_ADD && f->type == METRICS_COUNTER && v < 0)
        return VMOP_E_INVALID;
    if (count_list(values) != f->nlabels)
        return VMOP_E_INVALID;
    for (i = 0; i < f->nlabels; i++)
        if (strnlen(values[i], METRICS_MAX_LABEL_VALUE + 1) > METRICS_MAX_LABEL_VALUE) {
            rc = VMOP_E_TOOBIG;
            break;
        }

    pthread_mutex_lock(&m->lock);
    if (rc == VMOP_OK) {
        pos = series_find(f, values, &found);
        if (found)
            s = f->series[pos];
        else if (f->nseries >= m->max_series)
            rc = VMOP_E_TOOBIG;
        else
            rc = series_insert(f, pos, values, &s);
    }
    if (rc == VMOP_E_TOOBIG) {
        /* The overflow family has no labels: its one series always exists. */
        m->overflow->series[0]->value += 1;
    } else if (rc == VMOP_OK) {
        switch (op) {
        case OP_ADD:
            s->value += v;
            break;
        case OP_SET:
            s->value = v;
            break;
        case OP_OBSERVE:
            for (i = 0; i < f->nbounds; i++)
                if (v <= f->bounds[i]) {
                    s->buckets[i]++;
                    break;
                }
            s->count++;
            s->sum += v;
            break;
        }
    }
    pthread_mutex_unlock(&m->lock);
    return rc;
}

vmop_rc metrics_add(struct metrics_family *f, const char *const *values, double v)
{
    return update(f, values, v, OP_ADD);
}

vmop_rc metrics_set(struct metrics_family *f, const char *const *values, double v)
{
    return update(f, values, v, OP_SET);
}

vmop_rc metrics_observe(struct metrics_family *f, const char *const *values, double v)
{
    return update(f, values, v, OP_OBSERVE);
}

vmop_rc metrics_remove(struct metrics_family *f, const char *const *values)
{
    size_t pos;
    int found = 0;

    if (!f || count_list(values) != f->nlabels || f->nlabels == 0)
        return VMOP_E_INVALID;
    pthread_mutex_lock(&f->m->lock);
    pos = series_find(f, values, &found);
    if (found) {
        series_free(f->series[pos], f->nlabels);
        memmove(&f->series[pos], &f->series[pos + 1], (f->nseries - pos - 1) * sizeof(*f->series));
        f->nseries--;
    }
    pthread_mutex_unlock(&f->m->lock);
    return found ? VMOP_OK : VMOP_E_NOT_FOUND;
}

vmop_rc metrics_get(struct metrics_family *f, const char *const *values, double *ret_value,
                    double *ret_sum, struct vmop_err *err)
{
    size_t pos;
    int found = 0;
    double v = 0, sum = 0;

    if (!f || !ret_value || count_list(values) != f->nlabels)
        return vmop_fail(err, VMOP_E_INVALID, "metrics_get: bad family or label values");
    pthread_mutex_lock(&f->m->lock);
    pos = series_find(f, values, &found);
    if (found) {
        const struct series *s = f->series[pos];
        v = f->type == METRICS_HISTOGRAM ? (double)s->count : s->value;
        sum = s->sum;
    }
    pthread_mutex_unlock(&f->m->lock);
    if (!found)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "%s: no such series", f->name);
    *ret_value = v;
    if (ret_sum)
        *ret_sum = sum;
    return VMOP_OK;
}

unsigned long long metrics_overflow(struct metrics *m)
{
    double v;
    if (!m)
        return 0;
    pthread_mutex_lock(&m->lock);
    v = m->overflow->series[0]->value;
    pthread_mutex_unlock(&m->lock);
    return (unsigned long long)v;
}

/* ---- collectors -------------------------------------------------------------------------------
 */

vmop_rc metrics_add_collector(struct metrics *m, metrics_collect_fn fn, void *ud,
                              void (*ud_free)(void *), const void *key, struct vmop_err *err)
{
    struct collector *n;

    if (!m || !fn)
        return vmop_fail(err, VMOP_E_INVALID, "metrics_add_collector: no registry or callback");
    pthread_mutex_lock(&m->collect_lock);
    n = realloc(m->cols, (m->ncols + 1) * sizeof(*n));
    if (n) {
        m->cols = n;
        n[m->ncols++] = (struct collector){fn, ud, ud_free, key ? key : ud};
    }
    pthread_mutex_unlock(&m->collect_lock);
    if (!n)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    return VMOP_OK;
}

void metrics_remove_collectors(struct metrics *m, const void *key)
{
    size_t i, j = 0;

    if (!m)
        return;
    /* collect_lock is held during every run, so after this no removed collector is running. */
    pthread_mutex_lock(&m->collect_lock);
    for (i = 0; i < m->ncols; i++) {
        if (m->cols[i].key == key) {
            if (m->cols[i].ud_free)
                m->cols[i].ud_free(m->cols[i].ud);
            continue;
        }
        m->cols[j++] = m->cols[i];
    }
    m->ncols = j;
    pthread_mutex_unlock(&m->collect_lock);
}

/* ---- text exposition --------------------------------------------------------------------------
 */

vmop_rc metrics_add_value(struct vbuf *out, double v)
{
    char tmp[40];
    int prec;

    if (isnan(v))
        return vbuf_adds(out, "NaN");
    if (isinf(v))
        return vbuf_adds(out, v > 0 ? "+Inf" : "-Inf");
    if (v == 0)
        return vbuf_adds(out, "0"); /* also -0 */
    /* The shortest %g text that reads back to the same double (0.1 -> "0.1", not 17 digits). */
    for (prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    return vbuf_adds(out, tmp);
}

vmop_rc metrics_add_escaped(struct vbuf *out, const char *s)
{
    const char *p, *run = s;

    for (p = s; *p; p++) {
        const char *rep = *p == '\\' ? "\\\\" : *p == '"' ? "\\\"" : *p == '\n' ? "\\n" : NULL;
        if (!rep)
            continue;
        vbuf_add(out, run, (size_t)(p - run));
        vbuf_adds(out, rep);
        run = p + 1;
    }
    return vbuf_add(out, run, (size_t)(p - run));
}

/* HELP text: backslash and newline are escaped (not quotes). */
static void add_help(struct vbuf *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\')
            vbuf_adds(out, "\\\\");
        else if (*s == '\n')
            vbuf_adds(out, "\\n");
        else
            vbuf_add(out, s, 1);
    }
}

/* {a="x",b="y"[,le="..."]} or nothing when there are no labels at all. */
static void add_labels(struct vbuf *out, const struct metrics_family *f, const struct series *s,
                       const double *le)
{
    size_t i;

    if (f->nlabels == 0 && !le)
        return;
    vbuf_adds(out, "{");
    for (i = 0; i < f->nlabels; i++) {
        vbuf_addf(out, "%s%s=\"", i ? "," : "", f->labels[i]);
        metrics_add_escaped(out, s->values[i]);
        vbuf_adds(out, "\"");
    }
    if (le) {
        vbuf_addf(out, "%sle=\"", f->nlabels ? "," : "");
        metrics_add_value(out, *le);
        vbuf_adds(out, "\"");
    }
    vbuf_adds(out, "}");
}

static void render_family(struct vbuf *out, const struct metrics_family *f)
{
    static const char *const types[] = {"counter", "gauge", "histogram"};
    size_t i, b;

    vbuf_addf(out, "# HELP %s ", f->name);
    add_help(out, f->help);
    vbuf_addf(out, "\n# TYPE %s %s\n", f->name, types[f->type]);
    for (i = 0; i < f->nseries; i++) {
        const struct series *s = f->series[i];
        if (f->type != METRICS_HISTOGRAM) {
            vbuf_adds(out, f->name);
            add_labels(out, f, s, NULL);
            vbuf_adds(out, " ");
            metrics_add_value(out, s->value);
            vbuf_adds(out, "\n");
            continue;
        }
        uint64_t cum = 0;
        double inf = INFINITY;
        for (b = 0; b <= f->nbounds; b++) {
            cum = b < f->nbounds ? cum + s->buckets[b] : s->count;
            vbuf_addf(out, "%s_bucket", f->name);
            add_labels(out, f, s, b < f->nbounds ? &f->bounds[b] : &inf);
            vbuf_addf(out, " %llu\n", (unsigned long long)cum);
        }
        vbuf_addf(out, "%s_sum", f->name);
        add_labels(out, f, s, NULL);
        vbuf_adds(out, " ");
        metrics_add_value(out, s->sum);
        vbuf_addf(out, "\n%s_count", f->name);
        add_labels(out, f, s, NULL);
        vbuf_addf(out, " %llu\n", (unsigned long long)s->count);
    }
}

vmop_rc metrics_render(struct metrics *m, struct vbuf *out, struct vmop_err *err)
{
    size_t i;
    vmop_rc rc;

    if (!m || !out)
        return vmop_fail(err, VMOP_E_INVALID, "metrics_render: no registry or buffer");
    pthread_mutex_lock(&m->collect_lock);
    for (i = 0; i < m->ncols; i++)
        m->cols[i].fn(m->cols[i].ud, m);
    pthread_mutex_unlock(&m->collect_lock);

    pthread_mutex_lock(&m->lock);
    for (i = 0; i < m->nfams; i++)
        render_family(out, m->fams[i]);
    pthread_mutex_unlock(&m->lock);
    rc = vbuf_error(out);
    if (rc != VMOP_OK)
        return vmop_fail(err, rc, "metrics text does not fit its buffer (%s)", vmop_rc_str(rc));
    return VMOP_OK;
}

/* ---- a module's own numbers -------------------------------------------------------------------
 */

struct plain_set {
    const struct metrics_plain *defs;
    size_t n;
    void *ud;
    struct metrics_family *f[];
};

static void collect_plain(void *ud, struct metrics *m)
{
    struct plain_set *ps = ud;
    (void)m;
    for (size_t i = 0; i < ps->n; i++)
        metrics_set(ps->f[i], NULL, ps->defs[i].read(ps->ud));
}

vmop_rc metrics_add_plain(struct metrics *m, const struct metrics_plain *defs, size_t n, void *ud,
                          const void *key, struct vmop_err *err)
{
    struct plain_set *ps;
    vmop_rc rc = VMOP_OK;

    if (!m || (n && !defs))
        return vmop_fail(err, VMOP_E_INVALID, "metrics_add_plain: missing argument");
    ps = calloc(1, sizeof(*ps) + n * sizeof(ps->f[0]));
    if (!ps)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    ps->defs = defs;
    ps->n = n;
    ps->ud = ud;
    for (size_t i = 0; rc == VMOP_OK && i < n; i++) {
        size_t len = defs[i].name ? strlen(defs[i].name) : 0;
        int counter = len > 6 && !strcmp(defs[i].name + len - 6, "_total");
        if (!defs[i].read)
            rc = vmop_fail(err, VMOP_E_INVALID, "metrics_add_plain: %s has no reader",
                           defs[i].name ? defs[i].name : "?");
        else
            rc = metrics_register(m, counter ? METRICS_COUNTER : METRICS_GAUGE, defs[i].name,
                                  defs[i].help, NULL, NULL, 0, &ps->f[i], err);
    }
    if (rc == VMOP_OK)
        rc = metrics_add_collector(m, collect_plain, ps, free, key ? key : ud, err);
    else
        free(ps);
    return rc;
}

/* ---- /proc ------------------------------------------------------------------------------------
 */

/* Reads a small /proc file into buf (NUL-terminated). */
static vmop_rc read_small(const char *path, char *buf, size_t size, struct vmop_err *err)
{
    FILE *fp = fopen(path, "re");
    size_t n;

    if (!fp)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "cannot open %s", path);
    n = fread(buf, 1, size - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    return VMOP_OK;
}

vmop_rc metrics_read_proc(struct metrics_proc *ret_proc, struct vmop_err *err)
{
    char buf[4096];
    const char *p;
    unsigned long long utime, stime, start_ticks, btime = 0;
    long rss_pages;
    long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
    struct metrics_proc pr = {0};
    DIR *d;
    vmop_rc rc;

    if (!ret_proc)
        return vmop_fail(err, VMOP_E_INVALID, "metrics_read_proc: no result pointer");
    if (ticks <= 0 || page <= 0)
        return vmop_fail(err, VMOP_E_INTERNAL, "sysconf: no clock tick or page size");
    rc = read_small("/proc/self/stat", buf, sizeof(buf), err);
    if (rc != VMOP_OK)
        return rc;
    /* The command name (field 2) may hold spaces and parentheses: fields restart after the last
     * ')'. Then: 3 state ... 14 utime 15 stime ... 22 starttime 23 vsize 24 rss. */
    p = strrchr(buf, ')');
    if (!p || sscanf(p + 1,
                     " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d "
                     "%*d %llu %*u %ld",
                     &utime, &stime, &start_ticks, &rss_pages) != 4)
        return vmop_fail(err, VMOP_E_PROTO, "cannot parse /proc/self/stat");
    rc = read_small("/proc/stat", buf, sizeof(buf), err);
    if (rc != VMOP_OK)
        return rc;
    p = strstr(buf, "\nbtime ");
    if (!p || sscanf(p + 7, "%llu", &btime) != 1)
        return vmop_fail(err, VMOP_E_PROTO, "no btime in /proc/stat");
    pr.cpu_seconds = (double)(utime + stime) / (double)ticks;
    pr.start_time_seconds = (double)btime + (double)start_ticks / (double)ticks;
    pr.rss_bytes = (double)rss_pages * (double)page;
    d = opendir("/proc/self/fd");
    if (d) {
        const struct dirent *de;
        while ((de = readdir(d)) != NULL)
            if (de->d_name[0] != '.')
                pr.open_fds++;
        closedir(d);
        pr.open_fds--; /* the directory stream's own descriptor */
    }
    *ret_proc = pr;
    return VMOP_OK;
}

static void collect_proc(void *ud, struct metrics *m)
{
    struct metrics_std *std = ud;
    struct metrics_proc pr;
    struct vmop_err err = {0};

    (void)m;
    if (metrics_read_proc(&pr, &err) != VMOP_OK)
        return;
    metrics_set(std->proc_rss, NULL, pr.rss_bytes);
    metrics_set(std->proc_cpu, NULL, pr.cpu_seconds);
    metrics_set(std->proc_start, NULL, pr.start_time_seconds);
    metrics_set(std->proc_fds, NULL, pr.open_fds);
}

/* ---- standard families ------------------------------------------------------------------------
 */

vmop_rc metrics_std_register(struct metrics *m, struct metrics_std *ret_std, struct vmop_err *err)
{
    static const char *const l_ctl[] = {"controller", NULL};
    static const char *const l_ctl_res[] = {"controller", "result", NULL};
    static const char *const l_name[] = {"name", NULL};
    static const char *const l_ep[] = {"endpoint", NULL};
    static const char *const l_ep_m[] = {"endpoint", "method", NULL};
    static const char *const l_src[] = {"source", NULL};
    struct metrics_std s = {.m = m};
    const struct {
        struct metrics_family **f;
        enum metrics_type type;
        const char *name, *help;
        const char *const *labels;
    } defs[] = {
        {&s.reconcile_total, METRICS_COUNTER, "vmop_reconcile_total",
         "Reconciles finished, by controller and result (success, error, requeue).", l_ctl_res},
        {&s.reconcile_errors, METRICS_COUNTER, "vmop_reconcile_errors_total",
         "Reconciles that ended in an error, by controller.", l_ctl},
        {&s.reconcile_duration, METRICS_HISTOGRAM, "vmop_reconcile_duration_seconds",
         "Time spent in one reconcile, by controller.", l_ctl},
        {&s.wq_depth, METRICS_GAUGE, "vmop_workqueue_depth",
         "Keys ready in the work queue and not yet taken by a worker.", l_name},
        {&s.wq_delayed, METRICS_GAUGE, "vmop_workqueue_delayed",
         "Keys waiting for a delay (backoff or requeue-after) before they become ready.", l_name},
        {&s.wq_adds, METRICS_COUNTER, "vmop_workqueue_adds_total", "Keys added to the work queue.",
         l_name},
        {&s.wq_queue_duration, METRICS_HISTOGRAM, "vmop_workqueue_queue_duration_seconds",
         "Time a key waited in the work queue before a worker took it.", l_name},
        {&s.vc_calls, METRICS_COUNTER, "vmop_vcenter_calls_total",
         "vCenter calls, by endpoint and method (a SOAP method, or a REST route such as "
         "\"GET /rest/com/vmware/content/library/item/{id}\").",
         l_ep_m},
        {&s.vc_call_errors, METRICS_COUNTER, "vmop_vcenter_call_errors_total",
         "vCenter calls that failed (transport, HTTP or fault), by endpoint and method.", l_ep_m},
        {&s.vc_call_seconds, METRICS_COUNTER, "vmop_vcenter_call_seconds_total",
         "Time spent in vCenter calls (WaitForUpdatesEx long polls included).", l_ep_m},
        {&s.vc_rest_calls, METRICS_COUNTER, "vmop_vcenter_rest_calls_total",
         "vCenter REST (vAPI) calls, by endpoint.", l_ep},
        {&s.vc_relogins, METRICS_COUNTER, "vmop_vcenter_relogins_total",
         "vCenter logins caused by an expired session, by endpoint.", l_ep},
        {&s.vc_feed_updates, METRICS_COUNTER, "vmop_vcenter_feed_updates_total",
         "Object updates received from the vCenter change feed (WaitForUpdatesEx).", l_ep},
        {&s.vc_feed_watches, METRICS_GAUGE, "vmop_vcenter_feed_watches",
         "Live vCenter change-feed watches (one per namespace folder).", l_ep},
        {&s.watch_restarts, METRICS_COUNTER, "vmop_watch_restarts_total",
         "Watches restarted after a failure or drop, by source (kube:<resource>, "
         "vcenter:<endpoint>).",
         l_src},
        {&s.probe_keys, METRICS_GAUGE, "vmop_probe_keys", "Registered TCP readiness probes.", NULL},
        {&s.probe_in_flight, METRICS_GAUGE, "vmop_probe_in_flight",
         "TCP readiness probe connects in flight.", NULL},
        {&s.leader, METRICS_GAUGE, "vmop_leader", "1 while this replica holds the leader lease.",
         NULL},
        {&s.proc_rss, METRICS_GAUGE, "process_resident_memory_bytes",
         "Resident memory size in bytes.", NULL},
        {&s.proc_cpu, METRICS_COUNTER, "process_cpu_seconds_total",
         "Total user and system CPU time spent in seconds.", NULL},
        {&s.proc_start, METRICS_GAUGE, "process_start_time_seconds",
         "Start time of the process since unix epoch in seconds.", NULL},
        {&s.proc_fds, METRICS_GAUGE, "process_open_fds", "Number of open file descriptors.", NULL},
    };
    size_t i;
    vmop_rc rc;

    if (!m || !ret_std)
        return vmop_fail(err, VMOP_E_INVALID, "metrics_std_register: no registry");
    for (i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
        rc = metrics_register(m, defs[i].type, defs[i].name, defs[i].help, defs[i].labels, NULL, 0,
                              defs[i].f, err);
        if (rc != VMOP_OK)
            return rc;
    }
    *ret_std = s;
    /* The collector reads the family pointers through ud: keep them in the registry's copy. */
    struct metrics_std *copy = malloc(sizeof(*copy));
    if (!copy)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    *copy = s;
    return metrics_add_collector(m, collect_proc, copy, free, m, err);
}

void metrics_std_reconcile(struct metrics_std *std, const char *controller, const char *result,
                           double seconds)
{
    if (!std || !controller || !result)
        return;
    metrics_add(std->reconcile_total, METRICS_L(controller, result), 1);
    if (strcmp(result, METRICS_RESULT_ERROR) == 0)
        metrics_add(std->reconcile_errors, METRICS_L(controller), 1);
    metrics_observe(std->reconcile_duration, METRICS_L(controller), seconds < 0 ? 0 : seconds);
}

void metrics_std_queue_add(struct metrics_std *std, const char *name)
{
    if (std && name)
        metrics_add(std->wq_adds, METRICS_L(name), 1);
}

void metrics_std_queue_wait(struct metrics_std *std, const char *name, double seconds)
{
    if (std && name)
        metrics_observe(std->wq_queue_duration, METRICS_L(name), seconds < 0 ? 0 : seconds);
}

void metrics_std_watch_restart(struct metrics_std *std, const char *source)
{
    if (std && source)
        metrics_add(std->watch_restarts, METRICS_L(source), 1);
}

void metrics_std_set_leader(struct metrics_std *std, int leading)
{
    if (std)
        metrics_set(std->leader, NULL, leading ? 1 : 0);
}

/* ---- collectors over other modules ------------------------------------------------------------
 *
 * One collector function (collect_obs) driven by one static table (obs_kinds, a row per module):
 * the module's read() snapshots its object into a few numbers, and its row says which family of
 * metrics_std each number is set into and how that series is labelled.
 */

/* How a collector's series is labelled: by the object's name (queue name or endpoint), by its
 * "vcenter:<endpoint>" source, or not at all. */
enum obs_label { OBS_UNLABELLED, OBS_BY_NAME, OBS_BY_SOURCE };

#define OBS_MAX_VALUES 3

struct obs;

struct obs_kind {
    const char *caller;                          /* the public function, in errors */
    const char *noun;                            /* what the name is ("endpoint"); NULL: no name */
    void (*read)(void *obj, double *ret_values); /* fills nvalues numbers */
    size_t nvalues;
    struct {
        size_t family; /* offsetof(struct metrics_std, <family>) */
        enum obs_label label;
    } out[OBS_MAX_VALUES];       /* where number i goes */
    void (*more)(struct obs *o); /* NULL, or sets what a table cannot (per-method series) */
};

struct obs {
    struct metrics_std std; /* a copy: the caller's struct may not outlive the collector */
    const struct obs_kind *kind;
    char *name;   /* queue name or endpoint */
    char *source; /* "vcenter:<endpoint>" when a series is labelled by source */
    void *obj;
};

static void obs_free(void *ud)
{
    struct obs *o = ud;
    if (!o)
        return;
    free(o->name);
    free(o->source);
    free(o);
}

/* The family pointer stored at byte offset `family` of std. */
static struct metrics_family *std_family(const struct metrics_std *std, size_t family)
{
    struct metrics_family *f;
    memcpy(&f, (const char *)std + family, sizeof(f));
    return f;
}

static void collect_obs(void *ud, struct metrics *m)
{
    struct obs *o = ud;
    const struct obs_kind *k = o->kind;
    double v[OBS_MAX_VALUES];
    size_t i;

    (void)m;
    k->read(o->obj, v);
    for (i = 0; i < k->nvalues; i++) {
        const char *label = k->out[i].label == OBS_BY_NAME     ? o->name
                            : k->out[i].label == OBS_BY_SOURCE ? o->source
                                                               : NULL;
        metrics_set(std_family(&o->std, k->out[i].family), label ? METRICS_L(label) : NULL, v[i]);
    }
    if (k->more)
        k->more(o);
}

/* Adds a collector of `kind` over obj. When kind->noun is set, name is required and its absence
 * is VMOP_E_INVALID "<caller>: no <noun>". */
static vmop_rc add_obs(struct metrics_std *std, const struct obs_kind *kind, const char *name,
                       void *obj, struct vmop_err *err)
{
    struct obs *o;
    size_t i;

    if (kind->noun && !name)
        return vmop_fail(err, VMOP_E_INVALID, "%s: no %s", kind->caller, kind->noun);

    if (!std || !std->m || !obj)
        return vmop_fail(err, VMOP_E_INVALID, "metrics collector: no registry or object");
    if (name && strlen(name) > METRICS_MAX_LABEL_VALUE)
        return vmop_fail(err, VMOP_E_TOOBIG, "metrics collector: name too long");
    o = calloc(1, sizeof(*o));
    if (!o)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    o->std = *std;
    o->kind = kind;
    o->obj = obj;
    if (name && !(o->name = strdup(name)))
        goto nomem;
    for (i = 0; i < kind->nvalues; i++) {
        if (kind->out[i].label == OBS_BY_SOURCE && name && !o->source) {
            size_t n = strlen(name) + sizeof("vcenter:");
            if (!(o->source = malloc(n)))
                goto nomem;
            snprintf(o->source, n, "vcenter:%s", name);
        }
    }
    return metrics_add_collector(std->m, collect_obs, o, obs_free, obj, err);
nomem:
    obs_free(o);
    return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
}

/* The modules' read() and more() functions, then their table. */

static void read_queue(void *obj, double *ret_values)
{
    ret_values[0] = (double)kube_queue_len(obj);
    ret_values[1] = (double)kube_queue_delayed_len(obj);
}

static void read_vim(void *obj, double *ret_values)
{
    struct vim_stats st;
    vim_client_stats(obj, &st);
    ret_values[0] = (double)st.rest_calls;
    ret_values[1] = (double)st.relogins;
}

static void vim_method_cb(void *ud, const struct vim_method_stat *s)
{
    struct obs *o = ud;
    metrics_set(o->std.vc_calls, METRICS_L(o->name, s->method), (double)s->calls);
    metrics_set(o->std.vc_call_errors, METRICS_L(o->name, s->method), (double)s->errors);
    metrics_set(o->std.vc_call_seconds, METRICS_L(o->name, s->method), s->seconds);
}

static void vim_methods(struct obs *o)
{
    vim_client_method_stats(o->obj, vim_method_cb, o);
}

static void read_vcfeed(void *obj, double *ret_values)
{
    struct vcfeed_stats st;
    vcfeed_stats(obj, &st);
    ret_values[0] = (double)st.updates;
    ret_values[1] = (double)st.watches;
    ret_values[2] = (double)st.restarts;
}

static void read_prober(void *obj, double *ret_values)
{
    struct prober_stats st;
    prober_get_stats(obj, &st);
    ret_values[0] = (double)st.keys;
    ret_values[1] = (double)st.in_flight;
}

enum obs_kind_id { OBS_QUEUE, OBS_VIM, OBS_VCFEED, OBS_PROBER };

static const struct obs_kind obs_kinds[] = {
    [OBS_QUEUE] = {.caller = "metrics_collect_queue",
                   .noun = "name",
                   .read = read_queue,
                   .nvalues = 2,
                   .out = {{offsetof(struct metrics_std, wq_depth), OBS_BY_NAME},
                           {offsetof(struct metrics_std, wq_delayed), OBS_BY_NAME}}},
    [OBS_VIM] = {.caller = "metrics_collect_vim",
                 .noun = "endpoint",
                 .read = read_vim,
                 .nvalues = 2,
                 .out = {{offsetof(struct metrics_std, vc_rest_calls), OBS_BY_NAME},
                         {offsetof(struct metrics_std, vc_relogins), OBS_BY_NAME}},
                 .more = vim_methods},
    [OBS_VCFEED] = {.caller = "metrics_collect_vcfeed",
                    .noun = "endpoint",
                    .read = read_vcfeed,
                    .nvalues = 3,
                    .out = {{offsetof(struct metrics_std, vc_feed_updates), OBS_BY_NAME},
                            {offsetof(struct metrics_std, vc_feed_watches), OBS_BY_NAME},
                            {offsetof(struct metrics_std, watch_restarts), OBS_BY_SOURCE}}},
    [OBS_PROBER] = {.caller = "metrics_collect_prober",
                    .noun = NULL,
                    .read = read_prober,
                    .nvalues = 2,
                    .out = {{offsetof(struct metrics_std, probe_keys), OBS_UNLABELLED},
                            {offsetof(struct metrics_std, probe_in_flight), OBS_UNLABELLED}}},
};

vmop_rc metrics_collect_queue(struct metrics_std *std, const char *name, struct kube_queue *q,
                              struct vmop_err *err)
{
    return add_obs(std, &obs_kinds[OBS_QUEUE], name, q, err);
}

vmop_rc metrics_collect_vim(struct metrics_std *std, const char *endpoint, struct vim_client *c,
                            struct vmop_err *err)
{
    return add_obs(std, &obs_kinds[OBS_VIM], endpoint, c, err);
}

vmop_rc metrics_collect_vcfeed(struct metrics_std *std, const char *endpoint, struct vcfeed *f,
                               struct vmop_err *err)
{
    return add_obs(std, &obs_kinds[OBS_VCFEED], endpoint, f, err);
}

vmop_rc metrics_collect_prober(struct metrics_std *std, struct prober *p, struct vmop_err *err)
{
    return add_obs(std, &obs_kinds[OBS_PROBER], NULL, p, err);
}
