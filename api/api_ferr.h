/* api_ferr.h: field errors ("spec.network.interfaces[0].name: Invalid value: ...") for validation.
 *
 * Owns: a fixed-size list of errors, each with a Kubernetes-style type, a field path and a detail.
 * The list is a plain value (no heap): at most API_FERRS_MAX errors are kept, later ones are
 * counted in `dropped`. Details may quote values the user wrote, so callers must never put secret
 * values (passwords, user data, keys) into them: validators quote names and enums only.
 */
#ifndef VMOP_API_FERR_H
#define VMOP_API_FERR_H

#include <stddef.h>

#include "vbuf.h"
#include "vmop_err.h"

enum api_ferr_type {
    API_FERR_REQUIRED,      /* "Required value" */
    API_FERR_INVALID,       /* "Invalid value" */
    API_FERR_FORBIDDEN,     /* "Forbidden" */
    API_FERR_NOT_SUPPORTED, /* "Unsupported value" */
    API_FERR_DUPLICATE,     /* "Duplicate value" */
    API_FERR_TOO_MANY,      /* "Too many" */
    API_FERR_TYPE,          /* "Invalid value" for a JSON type mismatch */
};

#define API_FERR_PATH_MAX   256
#define API_FERR_DETAIL_MAX 256
#define API_FERRS_MAX       32

struct api_ferr {
    enum api_ferr_type type;
    char field[API_FERR_PATH_MAX];    /* "spec.network.interfaces[0].name" */
    char detail[API_FERR_DETAIL_MAX]; /* "must match ^[a-z0-9]{2,}$"; may be "" */
};

struct api_ferrs {
    size_t n;       /* entries used in e[] */
    size_t dropped; /* errors beyond API_FERRS_MAX, not kept */
    struct api_ferr e[API_FERRS_MAX];
};

/* Appends an error. Long paths/details are truncated. Never fails. */
void api_ferr_add(struct api_ferrs *l, enum api_ferr_type type, const char *field, const char *fmt,
                  ...) __attribute__((format(printf, 4, 5)));
/* Appends every error of src (used to carry parse errors into validation results). */
void api_ferrs_merge(struct api_ferrs *dst, const struct api_ferrs *src);
/* Text of a type: "Required value", "Invalid value", ... */
const char *api_ferr_type_str(enum api_ferr_type type);
/* Index of the first error on exactly this field, or -1. */
int api_ferrs_find(const struct api_ferrs *l, const char *field);
/* Appends "field: Type: detail" for every error, joined by ", " (Kubernetes' aggregate format). */
void api_ferrs_format(const struct api_ferrs *l, struct vbuf *out);
/* VMOP_OK when l is empty, else VMOP_E_INVALID with the first few errors in err->msg. */
vmop_rc api_ferrs_result(const struct api_ferrs *l, struct vmop_err *err);

#endif
