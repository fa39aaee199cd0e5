/* api_quantity.h: Kubernetes resource.Quantity ("500m", "2Gi", "1.5", "1e3", "100M") in pure C.
 *
 * Owns: parsing, comparison, addition/subtraction, canonical formatting and unit conversions.
 * Not here: which quantities a field accepts (api_class.c, api_vm_validate.c decide that).
 *
 * Representation: the exact value in nano-units (10^-9) as a signed 128-bit integer, plus the
 * format the text was written in (decimal SI, binary SI, decimal exponent), as Kubernetes keeps it.
 * Parsing follows k8s.io/apimachinery resource.ParseQuantity:
 *   - grammar: [+-] digits [. digits] [suffix]; either digit run may be empty but not both ("1.",
 * ".5"); suffix one of n u m "" k M G T P E (decimal SI), Ki Mi Gi Ti Pi Ei (binary SI), or e/E
 * followed by a signed integer (decimal exponent; "1E" alone is exa). No whitespace anywhere.
 *   - precision below 1n is rounded up, away from zero ("3.001n" = 4n, "0.5e-9" = 1n), as
 * Kubernetes does so that a tiny non-zero request never becomes zero.
 *   - binary SI values above 2^63-1 are capped at 2^63-1 (Kubernetes does the same); binary SI
 * values strictly between -1 and 1 take the decimal SI format. Our own caps (Kubernetes has none,
 * but no VM needs more): at most API_QTY_MAX_TEXT characters, |exponent| <= 1000, and |value| <
 * 10^29 units; larger values are refused with VMOP_E_TOOBIG. Canonical formatting follows
 * Quantity.String(): "0" for zero; binary SI as the largest power-of-1024 suffix that keeps an
 * integer mantissa (values within (-1024, 1024) or not whole numbers fall back to decimal SI);
 * decimal forms use an exponent that is a multiple of 3 with all other factors of ten moved into it
 * ("1.5" -> "1500m", "1000M" -> "1G", "1.2e3" -> "1200"). One deliberate difference: decimal SI
 * values of 10^21 and above print with the E suffix ("1000E") where Kubernetes would drop the
 * suffix. Conversions to integers round up (away from zero), like Quantity.Value()/MilliValue().
 * All functions are pure and thread-safe; struct api_qty is a plain value (no ownership).
 */
#ifndef VMOP_API_QUANTITY_H
#define VMOP_API_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

#include "vmop_err.h"

__extension__ typedef __int128 api_i128;

enum api_qty_format {
    API_QTY_DECIMAL_SI = 0,       /* "", n u m k M G T P E */
    API_QTY_BINARY_SI = 1,        /* Ki Mi Gi Ti Pi Ei */
    API_QTY_DECIMAL_EXPONENT = 2, /* e3, E-6 */
};

struct api_qty {
    api_i128 nano;              /* exact value times 10^9 */
    enum api_qty_format format; /* how to print it */
};

#define API_QTY_MAX_TEXT 128 /* longest quantity text we parse */
#define API_QTY_STR_MAX  64  /* buffer size that always fits api_qty_format() output */
#define API_QTY_NANO     ((api_i128)1000000000)
#define API_QTY_MIB      ((int64_t)1 << 20)

/* Parses s (NUL-terminated). VMOP_E_INVALID for bad syntax (message quotes at most 64 characters of
 * the input), VMOP_E_TOOBIG over the caps above. *ret set on success only. */
vmop_rc api_qty_parse(const char *s, struct api_qty *ret, struct vmop_err *err);

/* Writes the canonical text into buf (n >= API_QTY_STR_MAX always suffices). VMOP_E_TOOBIG if n is
 * too small. */
vmop_rc api_qty_format(const struct api_qty *q, char *buf, size_t n, struct vmop_err *err);

/* -1, 0, 1 like strcmp, by value only (the format does not matter: 1Ki == 1024). */
int api_qty_cmp(const struct api_qty *a, const struct api_qty *b);
int api_qty_sign(const struct api_qty *q);

/* a + b and a - b. The result keeps a's format, or b's when a is zero (as Quantity.Add does).
 * VMOP_E_TOOBIG when the result leaves the value cap. */
vmop_rc api_qty_add(const struct api_qty *a, const struct api_qty *b, struct api_qty *ret,
                    struct vmop_err *err);
vmop_rc api_qty_sub(const struct api_qty *a, const struct api_qty *b, struct api_qty *ret,
                    struct vmop_err *err);

/* Exact constructors from integers (never fail). */
struct api_qty api_qty_from_int(int64_t units, enum api_qty_format format);
struct api_qty api_qty_from_milli(int64_t milli, enum api_qty_format format);

/* Value in units (bytes, cores), rounded up away from zero; VMOP_E_TOOBIG outside int64. */
vmop_rc api_qty_to_int(const struct api_qty *q, int64_t *ret, struct vmop_err *err);
/* Value in thousandths (millicores), rounded up away from zero. */
vmop_rc api_qty_to_milli(const struct api_qty *q, int64_t *ret, struct vmop_err *err);
/* Bytes to MiB rounded up (VM Operator's memoryMB = ceil(bytes / MiB)); q must not be negative. */
vmop_rc api_qty_to_mib_ceil(const struct api_qty *q, int64_t *ret, struct vmop_err *err);
/* True when q is a whole number of units that is an exact multiple of `unit` (> 0). */
int api_qty_is_multiple_of(const struct api_qty *q, int64_t unit);

#endif
