/* api_secret.c: one value of a Secret (see api_secret.h). */
#include "api_secret.h"

#include <stdlib.h>
#include <string.h>

#include "vmop_base64.h"

static const char *member_str(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, a), b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

vmop_rc api_secret_value(const cJSON *secret, const char *key, size_t max_len, char **ret,
                         size_t *ret_len, struct vmop_err *err)
{
    const char *plain, *b64;
    size_t len = 0;
    char *out = NULL;
    vmop_rc rc;

    *ret = NULL;
    if (ret_len)
        *ret_len = 0;
    if (!secret || !key)
        return VMOP_E_NOT_FOUND;
    if (!max_len)
        max_len = API_SECRET_MAX_VALUE;
    plain = member_str(secret, "stringData", key);
    b64 = plain ? NULL : member_str(secret, "data", key);
    if (!plain && !b64)
        return VMOP_E_NOT_FOUND;
    if (plain) {
        len = strlen(plain);
        if (len > max_len)
            return vmop_fail(err, VMOP_E_TOOBIG, "Secret key '%s' holds more than %zu bytes", key,
                             max_len);
        out = strdup(plain);
        if (!out)
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    } else {
        if (strlen(b64) / 4 * 3 > max_len + 3)
            return vmop_fail(err, VMOP_E_TOOBIG, "Secret key '%s' holds more than %zu bytes", key,
                             max_len);
        rc = vmop_base64_decode(b64, strlen(b64), VMOP_B64_LENIENT, &out, &len, NULL);
        if (rc == VMOP_E_NOMEM)
            return vmop_fail(err, rc, "out of memory");
        if (rc != VMOP_OK)
            return vmop_fail(err, VMOP_E_INVALID, "Secret key '%s' is not base64", key);
        if (len > max_len) {
            vmop_free_secret_n(out, len + 1);
            return vmop_fail(err, VMOP_E_TOOBIG, "Secret key '%s' holds more than %zu bytes", key,
                             max_len);
        }
    }
    *ret = out;
    if (ret_len)
        *ret_len = len;
    return VMOP_OK;
}
