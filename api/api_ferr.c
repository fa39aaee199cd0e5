/* api_ferr.c: the field error list (see api_ferr.h). */
#include "api_ferr.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void api_ferr_add(struct api_ferrs *l, enum api_ferr_type type, const char *field, const char *fmt,
                  ...)
{
    struct api_ferr *e;
    va_list ap;

    if (l->n >= API_FERRS_MAX) {
        l->dropped++;
        return;
    }
    e = &l->e[l->n++];
    e->type = type;
    snprintf(e->field, sizeof(e->field), "%s", field);
    va_start(ap, fmt);
    vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
    va_end(ap);
}

void api_ferrs_merge(struct api_ferrs *dst, const struct api_ferrs *src)
{
    for (size_t i = 0; i < src->n; i++)
        api_ferr_add(dst, src->e[i].type, src->e[i].field, "%s", src->e[i].detail);
    dst->dropped += src->dropped;
}

const char *api_ferr_type_str(enum api_ferr_type type)
{
    switch (type) {
    case API_FERR_REQUIRED:
        return "Required value";
    case API_FERR_INVALID:
    case API_FERR_TYPE:
        return "Invalid value";
    case API_FERR_FORBIDDEN:
        return "Forbidden";
    case API_FERR_NOT_SUPPORTED:
        return "Unsupported value";
    case API_FERR_DUPLICATE:
        return "Duplicate value";
    case API_FERR_TOO_MANY:
        return "Too many";
    }
    return "Invalid value";
}

int api_ferrs_find(const struct api_ferrs *l, const char *field)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->e[i].field, field) == 0)
            return (int)i;
    return -1;
}

void api_ferrs_format(const struct api_ferrs *l, struct vbuf *out)
{
    for (size_t i = 0; i < l->n; i++) {
        const struct api_ferr *e = &l->e[i];
        vbuf_addf(out, "%s%s: %s%s%s", i ? ", " : "", e->field, api_ferr_type_str(e->type),
                  e->detail[0] ? ": " : "", e->detail);
    }
    if (l->dropped)
        vbuf_addf(out, ", and %zu more", l->dropped);
}

vmop_rc api_ferrs_result(const struct api_ferrs *l, struct vmop_err *err)
{
    struct vbuf b;
    vmop_rc rc;

    if (l->n == 0)
        return VMOP_OK;
    vbuf_init(&b, VMOP_ERR_MSG_MAX * 4);
    api_ferrs_format(l, &b);
    rc = vmop_fail(err, VMOP_E_INVALID, "%s", vbuf_error(&b) ? "many field errors" : vbuf_str(&b));
    vbuf_free(&b);
    return rc;
}
