/* fuzz_common.h: checks shared by the fuzz targets in tests/fuzz/ (header-only, static inline).
 *
 * A target calls fuzz_check_err() after every fallible call: a failure must be described (err->rc
 * set, a non-empty one-line message, NUL-terminated fields), a success must leave err alone.
 * Anything else abort()s, which libFuzzer and the replay test both report as a crash.
 */
#ifndef VMOP_FUZZ_COMMON_H
#define VMOP_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmop_err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* abort() unless cond: also in release builds (no assert()). */
#define FUZZ_REQUIRE(cond)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

static inline void fuzz_check_err(vmop_rc rc, const struct vmop_err *err)
{
    if (rc == VMOP_OK) {
        FUZZ_REQUIRE(err->rc == VMOP_OK);
        return;
    }
    FUZZ_REQUIRE(err->rc != VMOP_OK);
    FUZZ_REQUIRE(memchr(err->msg, '\0', sizeof(err->msg)) != NULL);
    FUZZ_REQUIRE(memchr(err->fault, '\0', sizeof(err->fault)) != NULL);
    FUZZ_REQUIRE(err->msg[0] != '\0');
    FUZZ_REQUIRE(!strchr(err->msg, '\n') && !strchr(err->msg, '\r'));
}

/* A fixed-size string field must be NUL-terminated inside its array. */
#define FUZZ_REQUIRE_CSTR(arr) FUZZ_REQUIRE(memchr((arr), '\0', sizeof(arr)) != NULL)

/* strlen() of every kept string (ASan reports a read past the end or of freed memory). */
static inline size_t fuzz_touch(const char *s)
{
    return s ? strlen(s) : 0;
}

#endif
