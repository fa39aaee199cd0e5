/* ta_select.c: label and field selectors (parse + match) for kube-testapi lists and watches.
 * Labels: k=v, k==v, k!=v, k in (a,b), k notin (a,b), k, !k, joined by commas (AND).
 * Fields: f=v, f==v, f!=v joined by commas; the fields allowed depend on the resource type. */
#include "ta.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op { OP_EQ, OP_NE, OP_IN, OP_NOTIN, OP_EXISTS, OP_ABSENT };

struct term {
    enum op op;
    char *key;   /* label key or field path (owned) */
    char **vals; /* owned */
    size_t n_vals;
};

struct ta_selector {
    struct term terms[TA_MAX_SELECTOR];
    size_t n;
};

void ta_selector_free(struct ta_selector *sel)
{
    size_t i, j;
    if (!sel)
        return;
    for (i = 0; i < sel->n; i++) {
        free(sel->terms[i].key);
        for (j = 0; j < sel->terms[i].n_vals; j++)
            free(sel->terms[i].vals[j]);
        free(sel->terms[i].vals);
    }
    free(sel);
}

static char *dup_trim(const char *s, size_t n)
{
    char *r;
    while (n && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    r = malloc(n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = '\0';
    }
    return r;
}

static int add_val(struct term *t, const char *s, size_t n)
{
    char **nv = realloc(t->vals, (t->n_vals + 1) * sizeof(*nv));
    if (!nv)
        return -1;
    t->vals = nv;
    t->vals[t->n_vals] = dup_trim(s, n);
    if (!t->vals[t->n_vals])
        return -1;
    t->n_vals++;
    return 0;
}

static int valid_label_key(const char *k)
{
    size_t i;
    if (!*k || strlen(k) > 316)
        return 0;
    for (i = 0; k[i]; i++)
        if (!(isalnum((unsigned char)k[i]) || strchr("-_./", k[i])))
            return 0;
    return 1;
}

/* Parses one label term (s, n) into t. */
static int parse_label_term(const char *s, size_t n, struct term *t)
{
    char *term = dup_trim(s, n), *p;
    int rc = -1;
    if (!term)
        return -1;
    if (term[0] == '!') {
        t->op = OP_ABSENT;
        t->key = dup_trim(term + 1, strlen(term + 1));
        rc = t->key && valid_label_key(t->key) ? 0 : -1;
        goto out;
    }
    if ((p = strstr(term, "!=")) != NULL) {
        t->op = OP_NE;
        t->key = dup_trim(term, (size_t)(p - term));
        rc = t->key && valid_label_key(t->key) ? add_val(t, p + 2, strlen(p + 2)) : -1;
        goto out;
    }
    if ((p = strchr(term, '=')) != NULL) {
        const char *v = p[1] == '=' ? p + 2 : p + 1;
        t->op = OP_EQ;
        t->key = dup_trim(term, (size_t)(p - term));
        rc = t->key && valid_label_key(t->key) ? add_val(t, v, strlen(v)) : -1;
        goto out;
    }
    p = term;
    while (*p && !isspace((unsigned char)*p))
        p++;
    t->key = dup_trim(term, (size_t)(p - term));
    if (!t->key || !valid_label_key(t->key))
        goto out;
    while (isspace((unsigned char)*p))
        p++;
    if (!*p) {
        t->op = OP_EXISTS;
        rc = 0;
        goto out;
    }
    if (strncmp(p, "in", 2) == 0 && (isspace((unsigned char)p[2]) || p[2] == '(')) {
        t->op = OP_IN;
        p += 2;
    } else if (strncmp(p, "notin", 5) == 0 && (isspace((unsigned char)p[5]) || p[5] == '(')) {
        t->op = OP_NOTIN;
        p += 5;
    } else {
        goto out;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p != '(' || term[strlen(term) - 1] != ')')
        goto out;
    p++;
    for (;;) {
        size_t m = strcspn(p, ",)");
        if (add_val(t, p, m))
            goto out;
        p += m;
        if (*p == ')')
            break;
        p++;
    }
    rc = 0;
out:
    free(term);
    return rc;
}

vmop_rc ta_label_selector_parse(const char *s, struct ta_selector **ret, struct vmop_err *err)
{
    struct ta_selector *sel = calloc(1, sizeof(*sel));
    const char *p = s;
    if (!sel)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory parsing a selector");
    while (*p) {
        int depth = 0;
        const char *start = p;
        while (*p && (depth || *p != ',')) {
            if (*p == '(')
                depth++;
            else if (*p == ')')
                depth--;
            p++;
        }
        if (p > start) {
            if (sel->n == TA_MAX_SELECTOR) {
                ta_selector_free(sel);
                return vmop_fail_fault(err, VMOP_E_TOOBIG, "BadRequest", 400,
                                       "label selector has more than %d terms", TA_MAX_SELECTOR);
            }
            if (parse_label_term(start, (size_t)(p - start), &sel->terms[sel->n++])) {
                ta_selector_free(sel);
                return vmop_fail_fault(err, VMOP_E_INVALID, "BadRequest", 400,
                                       "unable to parse requirement: invalid label selector");
            }
        }
        if (*p == ',')
            p++;
    }
    *ret = sel;
    return VMOP_OK;
}

static int field_allowed(const char *f, const struct ta_rtype *rt, const struct ta_version *v)
{
    static const char *const event_fields[] = {"involvedObject.kind",
                                               "involvedObject.namespace",
                                               "involvedObject.name",
                                               "involvedObject.uid",
                                               "involvedObject.apiVersion",
                                               "involvedObject.resourceVersion",
                                               "involvedObject.fieldPath",
                                               "reason",
                                               "reportingComponent",
                                               "source",
                                               "type",
                                               NULL};
    size_t i;
    const cJSON *sf;
    if (strcmp(f, "metadata.name") == 0 || strcmp(f, "metadata.namespace") == 0)
        return 1;
    if (rt->group[0] == '\0' && strcmp(rt->plural, "events") == 0) {
        for (i = 0; event_fields[i]; i++)
            if (strcmp(f, event_fields[i]) == 0)
                return 1;
    }
    if (rt->group[0] == '\0' && strcmp(rt->plural, "secrets") == 0 && strcmp(f, "type") == 0)
        return 1;
    if (rt->group[0] == '\0' && strcmp(rt->plural, "namespaces") == 0 &&
        strcmp(f, "status.phase") == 0)
        return 1;
    if (v && v->selectable) {
        cJSON_ArrayForEach(sf, v->selectable)
        {
            const char *jp = ta_jstr(sf, "jsonPath");
            if (jp && strcmp(jp[0] == '.' ? jp + 1 : jp, f) == 0)
                return 1;
        }
    }
    return 0;
}

vmop_rc ta_field_selector_parse(const char *s, const struct ta_rtype *rt,
                                const struct ta_version *v, struct ta_selector **ret,
                                struct vmop_err *err)
{
    struct ta_selector *sel = calloc(1, sizeof(*sel));
    const char *p = s;
    if (!sel)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory parsing a selector");
    while (*p) {
        size_t n = strcspn(p, ",");
        char *term = dup_trim(p, n), *eq;
        struct term *t;
        if (!term) {
            ta_selector_free(sel);
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory parsing a selector");
        }
        p += n;
        if (*p == ',')
            p++;
        if (!*term) {
            free(term);
            continue;
        }
        if (sel->n == TA_MAX_SELECTOR) {
            free(term);
            ta_selector_free(sel);
            return vmop_fail_fault(err, VMOP_E_TOOBIG, "BadRequest", 400,
                                   "field selector has more than %d terms", TA_MAX_SELECTOR);
        }
        t = &sel->terms[sel->n++];
        if ((eq = strstr(term, "!=")) != NULL) {
            t->op = OP_NE;
            t->key = dup_trim(term, (size_t)(eq - term));
            eq += 2;
        } else if ((eq = strchr(term, '=')) != NULL) {
            t->op = OP_EQ;
            t->key = dup_trim(term, (size_t)(eq - term));
            eq += eq[1] == '=' ? 2 : 1;
        } else {
            free(term);
            ta_selector_free(sel);
            return vmop_fail_fault(err, VMOP_E_INVALID, "BadRequest", 400,
                                   "invalid selector: '%s'; can't understand it", s);
        }
        if (!t->key || add_val(t, eq, strlen(eq))) {
            free(term);
            ta_selector_free(sel);
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory parsing a selector");
        }
        free(term);
        if (!field_allowed(t->key, rt, v)) {
            vmop_rc rc;
            if (rt->builtin)
                rc = vmop_fail_fault(err, VMOP_E_INVALID, "BadRequest", 400,
                                     "field label not supported: %s", t->key);
            else
                rc = vmop_fail_fault(err, VMOP_E_INVALID, "BadRequest", 400,
                                     "\"%s\" is not a known field selector: only "
                                     "\"metadata.name\", \"metadata.namespace\"",
                                     t->key);
            ta_selector_free(sel);
            return rc;
        }
    }
    *ret = sel;
    return VMOP_OK;
}

static int in_vals(const struct term *t, const char *v)
{
    size_t i;
    for (i = 0; i < t->n_vals; i++)
        if (strcmp(t->vals[i], v) == 0)
            return 1;
    return 0;
}

int ta_selector_match_labels(const struct ta_selector *sel, const cJSON *obj)
{
    const cJSON *labels;
    size_t i;
    if (!sel || sel->n == 0)
        return 1;
    labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
                                              "labels");
    for (i = 0; i < sel->n; i++) {
        const struct term *t = &sel->terms[i];
        const char *v = ta_jstr(labels, t->key);
        switch (t->op) {
        case OP_EQ:
            if (!v || strcmp(v, t->vals[0]) != 0)
                return 0;
            break;
        case OP_NE:
            if (v && strcmp(v, t->vals[0]) == 0)
                return 0;
            break;
        case OP_IN:
            if (!v || !in_vals(t, v))
                return 0;
            break;
        case OP_NOTIN:
            if (v && in_vals(t, v))
                return 0;
            break;
        case OP_EXISTS:
            if (!v)
                return 0;
            break;
        case OP_ABSENT:
            if (v)
                return 0;
            break;
        }
    }
    return 1;
}

/* The string form of a field for comparison ("" when absent). */
static const char *field_value(const cJSON *obj, const char *f, char *buf, size_t size)
{
    const cJSON *v;
    if (strcmp(f, "source") == 0)
        f = "source.component";
    v = ta_jpath(obj, f);
    if (cJSON_IsString(v))
        return v->valuestring;
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v) ? "true" : "false";
    if (cJSON_IsNumber(v)) {
        snprintf(buf, size, "%.17g", v->valuedouble);
        return buf;
    }
    return "";
}

int ta_selector_match_fields(const struct ta_selector *sel, const cJSON *obj)
{
    size_t i;
    char buf[64];
    if (!sel)
        return 1;
    for (i = 0; i < sel->n; i++) {
        const struct term *t = &sel->terms[i];
        const char *v = field_value(obj, t->key, buf, sizeof(buf));
        int eq = strcmp(v, t->vals[0]) == 0;
        if ((t->op == OP_EQ) != eq)
            return 0;
    }
    return 1;
}

const char *ta_selector_name_eq(const struct ta_selector *sel)
{
    size_t i;
    if (!sel)
        return NULL;
    for (i = 0; i < sel->n; i++)
        if (sel->terms[i].op == OP_EQ && strcmp(sel->terms[i].key, "metadata.name") == 0)
            return sel->terms[i].vals[0];
    return NULL;
}
