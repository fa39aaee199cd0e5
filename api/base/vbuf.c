/* vbuf.c: growable, capped byte buffer with a sticky error (see vbuf.h). */
#include "vbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vbuf_init(struct vbuf *b, size_t max)
{
    memset(b, 0, sizeof(*b));
    b->max = max ? max : VBUF_DEFAULT_MAX;
}

void vbuf_free(struct vbuf *b)
{
    size_t max = b->max;
    free(b->data);
    memset(b, 0, sizeof(*b));
    b->max = max;
}

void vbuf_free_secure(struct vbuf *b)
{
    if (b->data)
        explicit_bzero(b->data, b->cap);
    vbuf_free(b);
}

void vbuf_reset(struct vbuf *b)
{
    b->len = 0;
    b->err = VMOP_OK;
    if (b->data)
        b->data[0] = '\0';
}

char *vbuf_take(struct vbuf *b)
{
    char *p;
    if (b->err)
        return NULL;
    if (!b->data && vbuf_add(b, "", 0))
        return NULL;
    p = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

vmop_rc vbuf_error(const struct vbuf *b)
{
    return b->err;
}

static vmop_rc vbuf_set_error(struct vbuf *b, vmop_rc rc)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->err = rc;
    return rc;
}

static vmop_rc vbuf_reserve(struct vbuf *b, size_t n)
{
    size_t need, ncap;
    char *p;
    if (b->max == 0)
        b->max = VBUF_DEFAULT_MAX;
    if (n > b->max || b->len > b->max - n)
        return vbuf_set_error(b, VMOP_E_TOOBIG);
    need = b->len + n + 1;
    if (need <= b->cap)
        return VMOP_OK;
    ncap = b->cap ? b->cap : 256;
    while (ncap < need)
        ncap *= 2;
    p = realloc(b->data, ncap);
    if (!p)
        return vbuf_set_error(b, VMOP_E_NOMEM);
    b->data = p;
    b->cap = ncap;
    return VMOP_OK;
}

vmop_rc vbuf_add(struct vbuf *b, const void *data, size_t n)
{
    if (b->err)
        return b->err;
    if (vbuf_reserve(b, n))
        return b->err;
    if (n)
        memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
    return VMOP_OK;
}

vmop_rc vbuf_adds(struct vbuf *b, const char *s)
{
    return vbuf_add(b, s ? s : "", s ? strlen(s) : 0);
}

vmop_rc vbuf_addvf(struct vbuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    int n;
    if (b->err)
        return b->err;
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return vbuf_set_error(b, VMOP_E_NOMEM);
    if (vbuf_reserve(b, (size_t)n))
        return b->err;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return VMOP_OK;
}

vmop_rc vbuf_addf(struct vbuf *b, const char *fmt, ...)
{
    va_list ap;
    vmop_rc rc;
    va_start(ap, fmt);
    rc = vbuf_addvf(b, fmt, ap);
    va_end(ap);
    return rc;
}

vmop_rc vbuf_add_xml_escaped(struct vbuf *b, const char *s)
{
    const char *run = s;
    if (!s)
        return b->err;
    for (; *s; s++) {
        const char *rep = NULL;
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&apos;";
            break;
        default:
            if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
                rep = "";
        }
        if (rep) {
            vbuf_add(b, run, (size_t)(s - run));
            vbuf_adds(b, rep);
            run = s + 1;
        }
    }
    return vbuf_add(b, run, (size_t)(s - run));
}

vmop_rc vbuf_add_xml_elem(struct vbuf *b, const char *name, const char *text)
{
    vbuf_addf(b, "<%s>", name);
    vbuf_add_xml_escaped(b, text);
    return vbuf_addf(b, "</%s>", name);
}
