/* api_secret.h: one value of a Kubernetes Secret object, read the one way every module reads it
 * (bootstrap data in the resolver, vCenter credentials in the connection cache).
 *
 * Owns the rule: `stringData` (plain text) wins over `data` (base64, as the API server returns
 * it, decoded leniently: standard or URL-safe alphabet, padding optional); an empty value is "".
 * Pure: no I/O. Values are secrets: they never appear in error messages, and the caller frees
 * them with vmop_free_secret_n(*ret, *ret_len + 1), which zeroes them first.
 */
#ifndef VMOP_API_SECRET_H
#define VMOP_API_SECRET_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "vmop_base64.h" /* vmop_free_secret_n() */
#include "vmop_err.h"

#define API_SECRET_MAX_VALUE ((size_t)1 << 20) /* the API server caps a Secret at 1 MiB */

/* The value of key in secret (the object as the API returns it) into *ret (malloc'd,
 * NUL-terminated; *ret_len excludes the NUL, and may be NULL). max_len bounds the decoded value
 * (0: API_SECRET_MAX_VALUE). VMOP_E_NOT_FOUND: no such key (no message is set, callers word it);
 * VMOP_E_INVALID: `data` is not base64; VMOP_E_TOOBIG: over max_len; VMOP_E_NOMEM. */
vmop_rc api_secret_value(const cJSON *secret, const char *key, size_t max_len, char **ret,
                         size_t *ret_len, struct vmop_err *err);

#endif
