/* fuzz_wh_admission.c: libFuzzer target for AdmissionReview request bodies (wh_review.h).
 *
 * The input is a request body. A failed parse must be described (fuzz_check_err); a parsed
 * request has non-NULL strings, a non-empty uid, at most WH_MAX_GROUPS groups, and a response
 * built for it (allowed with a patch and warnings, then denied) must be JSON echoing the uid.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "wh_patch.h"
#include "wh_review.h"

static void check_build(const struct wh_admission_request *r,
                        const struct wh_admission_response *resp)
{
    struct vmop_err err = {0};
    char *json = NULL;
    size_t len = 0;
    cJSON *doc;
    vmop_rc rc = wh_admission_build(r->uid, resp, &json, &len, &err);
    fuzz_check_err(rc, &err);
    if (rc)
        return;
    FUZZ_REQUIRE(strlen(json) == len);
    doc = cJSON_Parse(json);
    FUZZ_REQUIRE(doc != NULL);
    FUZZ_REQUIRE(!strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                             cJSON_GetObjectItemCaseSensitive(doc, "response"), "uid")),
                         r->uid));
    cJSON_Delete(doc);
    free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct wh_admission_request *r = NULL;
    struct wh_admission_response resp;
    struct vmop_err err = {0};
    vmop_rc rc = wh_admission_parse((const char *)data, size, &r, &err);
    cJSON *patch = NULL;

    fuzz_check_err(rc, &err);
    if (rc) {
        FUZZ_REQUIRE(r == NULL);
        return 0;
    }
    FUZZ_REQUIRE(r->uid[0] != '\0');
    FUZZ_REQUIRE(r->op >= WH_OP_CREATE && r->op <= WH_OP_CONNECT);
    FUZZ_REQUIRE(r->n_groups <= WH_MAX_GROUPS);
    fuzz_touch(r->kind_group);
    fuzz_touch(r->kind_version);
    fuzz_touch(r->kind);
    fuzz_touch(r->res_group);
    fuzz_touch(r->res_version);
    fuzz_touch(r->resource);
    fuzz_touch(r->sub_resource);
    fuzz_touch(r->namespace_);
    fuzz_touch(r->name);
    fuzz_touch(r->username);
    fuzz_touch(r->user_uid);
    for (size_t i = 0; i < r->n_groups; i++)
        fuzz_touch(r->groups[i]);

    wh_admission_response_init(&resp);
    /* the patch a mutating handler would send: old object -> new object */
    if (r->object && r->old_object) {
        vmop_err_clear(&err);
        rc = wh_patch_diff(r->old_object, r->object, &patch, &err);
        fuzz_check_err(rc, &err);
        if (!rc)
            wh_admission_set_patch(&resp, patch);
    }
    FUZZ_REQUIRE(wh_admission_warn(&resp, r->username) == VMOP_OK);
    check_build(r, &resp);
    FUZZ_REQUIRE(wh_admission_deny(&resp, 422, r->kind, r->name) == VMOP_OK);
    check_build(r, &resp);
    wh_admission_response_deinit(&resp);
    wh_admission_request_free(r);
    return 0;
}
