/* fuzz_vim_rest.c: libFuzzer target for vimclient's vAPI REST answers (vim_internal.h):
 * vim_rest_parse_reply and vim_rest_parse_ovf_deploy.
 *
 * Input: byte 0 picks the HTTP status from a table of the ones vCenter and vcsim send (or one
 * derived from byte 1), the rest is the body. Non-2xx answers must fail (described, with that
 * status); a 2xx success hands over a detached value, which is then read as an OVF deploy result.
 * The body parsed as JSON (and its "value") is read as a deploy result too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "vim_internal.h"

static void check_deploy(const cJSON *value)
{
    struct vim_moref vm;
    struct vmop_err err = {0};
    vmop_rc rc;

    memset(&vm, 0, sizeof(vm));
    rc = vim_rest_parse_ovf_deploy(value, &vm, &err);
    fuzz_check_err(rc, &err);
    if (rc == VMOP_OK) {
        FUZZ_REQUIRE_CSTR(vm.type);
        FUZZ_REQUIRE_CSTR(vm.value);
        FUZZ_REQUIRE(vm.type[0] && vm.value[0]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const long statuses[] = {200, 201, 204, 400, 401, 403, 404, 409, 500, 503, 299, 199};
    struct vmop_err err = {0};
    cJSON *value = (cJSON *)(uintptr_t)1, *root;
    long status;
    vmop_rc rc;

    if (size < 2)
        return 0;
    status = data[0] < 128 ? statuses[data[0] % (sizeof(statuses) / sizeof(statuses[0]))]
                           : 100 + (long)data[1] * 2;
    data += 2;
    size -= 2;

    rc = vim_rest_parse_reply(status, (const char *)data, size, "GET /rest/fuzz", &value, &err);
    fuzz_check_err(rc, &err);
    if (status < 200 || status >= 300) {
        FUZZ_REQUIRE(rc != VMOP_OK);
        FUZZ_REQUIRE(err.http_status == status);
    }
    if (rc == VMOP_OK) {
        FUZZ_REQUIRE(value == NULL || !cJSON_IsNull(value));
        if (value)
            check_deploy(value);
        cJSON_Delete(value);
    } else {
        FUZZ_REQUIRE(value == (cJSON *)(uintptr_t)1); /* ret_* only set on success */
    }

    root = size ? cJSON_ParseWithLength((const char *)data, size) : NULL;
    if (root) {
        check_deploy(root);
        check_deploy(cJSON_GetObjectItemCaseSensitive(root, "value"));
        cJSON_Delete(root);
    }
    return 0;
}
