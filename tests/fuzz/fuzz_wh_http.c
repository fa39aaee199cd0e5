/* fuzz_wh_http.c: libFuzzer target for HTTP/1.1 request heads (wh_http.h), the first bytes a
 * webhook client sends.
 *
 * wh_http_head_len must find a head end inside the input or report 0; parsing that head either
 * succeeds with a sane request (NUL-terminated fields, a path starting with '/' and no '?',
 * minor 0 or 1, no Transfer-Encoding) or fails with an HTTP error status and a described error.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "wh_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    size_t n = wh_http_head_len(buf, size);
    struct wh_http_req req;
    struct vmop_err err = {0};
    int status = 0;
    vmop_rc rc;

    FUZZ_REQUIRE(n <= size);
    if (!n)
        n = size; /* also parse incomplete heads */
    rc = wh_http_parse(buf, n, &req, &status, &err);
    fuzz_check_err(rc, &err);
    FUZZ_REQUIRE_CSTR(req.method);
    FUZZ_REQUIRE_CSTR(req.path);
    FUZZ_REQUIRE_CSTR(req.content_type);
    if (rc) {
        FUZZ_REQUIRE(status >= 400 && status <= 599);
        return 0;
    }
    FUZZ_REQUIRE(status == 200);
    FUZZ_REQUIRE(req.path[0] == '/' && !strchr(req.path, '?'));
    FUZZ_REQUIRE(req.minor == 0 || req.minor == 1);
    FUZZ_REQUIRE(!req.chunked);
    FUZZ_REQUIRE(req.content_length >= -1);
    FUZZ_REQUIRE(strlen(wh_http_reason(status)) > 0);
    return 0;
}
