/* vbuf.h: a growable byte buffer with a size cap fixed at init and a sticky error.
 *
 * Appends past the cap (or a failed allocation) put the buffer in an error state: it is emptied,
 * every later append is a no-op, and vbuf_error() returns VMOP_E_TOOBIG or VMOP_E_NOMEM. Long
 * requests are built as straight-line code and checked once at the end.
 * The data is always NUL-terminated (when non-empty), so vbuf_str() is a C string.
 *
 * Ownership: the buffer owns its data until vbuf_take() hands it to the caller (free() it).
 * vbuf_free() releases it; a zeroed or freed vbuf is valid and empty. Not thread-safe.
 */
#ifndef VMOP_VBUF_H
#define VMOP_VBUF_H

#include <stddef.h>
#include <stdarg.h>

#include "vmop_err.h"

struct vbuf {
    char *data;  /* owned; NULL until the first append */
    size_t len;  /* bytes used, excluding the terminating NUL */
    size_t cap;  /* bytes allocated */
    size_t max;  /* largest len allowed; set by vbuf_init */
    vmop_rc err; /* VMOP_OK, VMOP_E_TOOBIG or VMOP_E_NOMEM; sticky */
};

#define VBUF_DEFAULT_MAX ((size_t)64 << 20)

void vbuf_init(struct vbuf *b, size_t max);
void vbuf_free(struct vbuf *b);
/* Empties the buffer and clears the error, keeping the allocation and the cap. */
void vbuf_reset(struct vbuf *b);
/* Hands over the data (NUL-terminated, never NULL unless in error); the buffer is left empty. */
char *vbuf_take(struct vbuf *b);
/* Zeroes the bytes before freeing (for buffers that held secrets). */
void vbuf_free_secure(struct vbuf *b);

vmop_rc vbuf_error(const struct vbuf *b);
static inline const char *vbuf_str(const struct vbuf *b)
{
    return b->data ? b->data : "";
}

vmop_rc vbuf_add(struct vbuf *b, const void *data, size_t n);
vmop_rc vbuf_adds(struct vbuf *b, const char *s);
vmop_rc vbuf_addf(struct vbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
vmop_rc vbuf_addvf(struct vbuf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* XML character data / attribute value escaping: & < > " ' become entities; control characters
 * other than tab, CR, LF (not representable in XML 1.0) are dropped; invalid UTF-8 is kept as is.
 */
vmop_rc vbuf_add_xml_escaped(struct vbuf *b, const char *s);
/* <name>escaped text</name> */
vmop_rc vbuf_add_xml_elem(struct vbuf *b, const char *name, const char *text);

#endif
