/* vmop_base64.h: the one base64 codec (RFC 4648) every module uses: Kubernetes Secret data,
 * kubeconfig certificates, guestinfo values, webhook patches.
 * Pure: no I/O, no global state; thread-safe.
 */
#ifndef VMOP_BASE64_H
#define VMOP_BASE64_H

#include <stddef.h>

#include "vmop_err.h"

/* Decoding modes. Whitespace (space, tab, CR, LF) is ignored in both. */
enum vmop_b64_mode {
    VMOP_B64_LENIENT, /* standard or URL-safe alphabet, padding optional (Kubernetes' readers) */
    VMOP_B64_STRICT,  /* standard alphabet only, length a multiple of 4, padding where due:
                       * "is this value base64 at all?" answered without false positives */
};

/* The encoded length of n bytes, without the NUL. */
size_t vmop_base64_len(size_t n);

/* Encodes n bytes (standard alphabet, padded) into a malloc'd NUL-terminated string. */
vmop_rc vmop_base64_encode(const void *in, size_t n, char **ret, struct vmop_err *err);

/* Decodes len bytes of in. *ret is malloc'd and NUL-terminated (*ret_len excludes the NUL); it
 * may hold secrets: free it with vmop_free_secret_n(*ret, *ret_len + 1). VMOP_E_INVALID (with the
 * offset) when in is not base64 in that mode; nothing is returned then. */
vmop_rc vmop_base64_decode(const char *in, size_t len, enum vmop_b64_mode mode, char **ret,
                           size_t *ret_len, struct vmop_err *err);

/* Zeroes and frees a NUL-terminated secret (NULL-safe), or one of known length. */
void vmop_free_secret(char *s);
void vmop_free_secret_n(void *p, size_t n);

#endif
