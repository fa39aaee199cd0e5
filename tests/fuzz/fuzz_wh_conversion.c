/* fuzz_wh_conversion.c: libFuzzer target for ConversionReview request bodies (wh_review.h).
 *
 * The input is a request body. A failed parse must be described; a parsed request has a
 * non-empty uid, a group/version desiredAPIVersion and n_objects JSON objects, and both
 * responses (Success echoing the objects, Failure with a message) build to JSON.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "wh_review.h"

static void check_build(const struct wh_conversion_request *r, const cJSON *converted)
{
    struct vmop_err err = {0};
    char *json = NULL;
    size_t len = 0;
    cJSON *doc;
    vmop_rc rc = wh_conversion_build(r->uid, converted, r->desired_api_version, &json, &len, &err);
    fuzz_check_err(rc, &err);
    if (rc)
        return;
    doc = cJSON_Parse(json);
    FUZZ_REQUIRE(doc != NULL);
    cJSON_Delete(doc);
    free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct wh_conversion_request *r = NULL;
    struct vmop_err err = {0};
    vmop_rc rc = wh_conversion_parse((const char *)data, size, &r, &err);
    const cJSON *o;
    size_t n = 0;
    cJSON *empty;

    fuzz_check_err(rc, &err);
    if (rc) {
        FUZZ_REQUIRE(r == NULL);
        return 0;
    }
    FUZZ_REQUIRE(r->uid[0] != '\0');
    FUZZ_REQUIRE(strchr(r->desired_api_version, '/') != NULL);
    cJSON_ArrayForEach(o, r->objects)
    {
        FUZZ_REQUIRE(cJSON_IsObject(o));
        n++;
    }
    FUZZ_REQUIRE(n == r->n_objects);
    empty = cJSON_CreateArray();
    check_build(r, r->objects ? r->objects : empty);
    check_build(r, NULL);
    cJSON_Delete(empty);
    wh_conversion_request_free(r);
    return 0;
}
