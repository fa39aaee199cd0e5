/* fuzz_guestinfo.c: libFuzzer target for guestinfo user data handling (guestinfo.h):
 * gi_userdata_normalize (plain, base64, gzip, gzip+base64 from a Secret) and gi_decode.
 *
 * Input: byte 0 picks the call (normalize, or gi_decode with one of the encodings), the rest is
 * the value. Results must be NUL-terminated at *ret_len and within the caps. Normalized text that
 * is small enough is encoded with gi_encode_gzip_base64 and must come back unchanged through both
 * gi_decode("gzip+base64") and gi_userdata_normalize.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "guestinfo.h"

#define ROUNDTRIP_MAX ((size_t)64 * 1024) /* keeps gzip at level 9 fast */

static void roundtrip(const char *plain, size_t len)
{
    struct vmop_err err = {0};
    char *enc = NULL, *back = NULL;
    size_t back_len = 0;
    vmop_rc rc = gi_encode_gzip_base64(plain, len, &enc, &err);

    fuzz_check_err(rc, &err);
    FUZZ_REQUIRE(rc == VMOP_OK && enc != NULL);
    rc = gi_decode(enc, GI_ENCODING_GZIP_BASE64, &back, &back_len, &err);
    FUZZ_REQUIRE(rc == VMOP_OK);
    FUZZ_REQUIRE(back_len == len && memcmp(back, plain, len) == 0 && back[len] == '\0');
    gi_free_secret(back, back_len);
    back = NULL;
    rc = gi_userdata_normalize(enc, strlen(enc), &back, &back_len, &err);
    FUZZ_REQUIRE(rc == VMOP_OK);
    FUZZ_REQUIRE(back_len == len && memcmp(back, plain, len) == 0 && back[len] == '\0');
    gi_free_secret(back, back_len);
    free(enc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const encodings[] = {NULL,          "",       "base64", "b64",
                                            "gzip+base64", "gz+b64", "gzip"};
    struct vmop_err err = {0};
    char *out = (char *)(uintptr_t)1, *value;
    size_t out_len = 0;
    unsigned mode;
    vmop_rc rc;

    if (size < 1)
        return 0;
    mode = data[0] % 8;
    data++;
    size--;

    if (mode == 0) {
        rc = gi_userdata_normalize(data, size, &out, &out_len, &err);
        fuzz_check_err(rc, &err);
        if (rc != VMOP_OK) {
            FUZZ_REQUIRE(out == (char *)(uintptr_t)1);
            return 0;
        }
        FUZZ_REQUIRE(out != NULL && out[out_len] == '\0' && out_len <= GI_MAX_USERDATA);
        if (out_len <= ROUNDTRIP_MAX)
            roundtrip(out, out_len);
        gi_free_secret(out, out_len);
        return 0;
    }

    /* gi_decode reads a C string (an ExtraConfig value). */
    value = malloc(size + 1);
    if (!value)
        return 0;
    memcpy(value, data, size);
    value[size] = '\0';
    rc = gi_decode(value, encodings[mode - 1], &out, &out_len, &err);
    fuzz_check_err(rc, &err);
    if (rc == VMOP_OK) {
        FUZZ_REQUIRE(out != NULL && out[out_len] == '\0');
        if (mode <= 2) /* plain: a copy up to the first NUL */
            FUZZ_REQUIRE(out_len == strlen(value) && memcmp(out, value, out_len) == 0);
        gi_free_secret(out, out_len);
    } else {
        FUZZ_REQUIRE(out == (char *)(uintptr_t)1);
    }
    free(value);
    return 0;
}
