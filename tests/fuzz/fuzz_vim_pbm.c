/* fuzz_vim_pbm.c: libFuzzer target for vimclient's storage policy (SPBM) reply readers
 * (vimclient/vim_pbm.c, owner: sp).
 *
 * Feeds the input, as an HTTP 200 and as an HTTP 500 answer, to vim_pbm_reply for the three PBM
 * methods vimclient calls, then runs every decoder on what parsed (service content, the profile
 * of a fixed ID, the compatible datastores), and reads the input as a cookie-jar line. A reply a
 * server could send must not crash, leak or hang the client, and every failure is described.
 * Corpus: tests/fuzz/corpus/pbm.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "vim_pbm.h"

#define POLICY "aa6d5a82-1c88-45da-85d3-3d74b91a5bad"

static void decode_all(const struct vim_resp *r)
{
    struct vim_moref pm, ps, *ds = NULL;
    struct vim_pbm_profile *p = NULL;
    size_t n = 0;
    struct vmop_err err = {0};
    vmop_rc rc;

    rc = vim_pbm_decode_service_content(r, &pm, &ps, &err);
    fuzz_check_err(rc, &err);
    if (rc == VMOP_OK) {
        FUZZ_REQUIRE_CSTR(pm.type);
        FUZZ_REQUIRE_CSTR(ps.value);
    }
    vmop_err_clear(&err);
    rc = vim_pbm_decode_profile(r, POLICY, &p, &err);
    fuzz_check_err(rc, &err);
    if (rc == VMOP_OK) {
        FUZZ_REQUIRE(strcmp(p->id, POLICY) == 0);
        FUZZ_REQUIRE(fuzz_touch(p->name) <= VIM_PBM_NAME_MAX);
        vim_pbm_profile_free(p);
    }
    vmop_err_clear(&err);
    rc = vim_pbm_decode_check(r, &ds, &n, &err);
    fuzz_check_err(rc, &err);
    if (rc == VMOP_OK) {
        FUZZ_REQUIRE(n <= VIM_PBM_MAX_HUBS);
        for (size_t i = 0; i < n; i++) {
            FUZZ_REQUIRE(strcmp(ds[i].type, "Datastore") == 0);
            FUZZ_REQUIRE_CSTR(ds[i].value);
        }
        free(ds);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const methods[] = {"PbmRetrieveServiceContent", "PbmRetrieveContent",
                                          "PbmCheckRequirements"};
    static const long statuses[] = {200, 500};
    const char *body = (const char *)data;
    char line[VIM_PBM_COOKIE_MAX + 1];
    char *copy;

    for (size_t s = 0; s < sizeof(statuses) / sizeof(statuses[0]); s++) {
        for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
            struct vim_resp *r = NULL;
            struct vmop_err err = {0};
            vmop_rc rc = vim_pbm_reply(statuses[s], body, size, methods[i], VIM_RET_LIST, &r, &err);
            fuzz_check_err(rc, &err);
            if (rc == VMOP_OK) {
                FUZZ_REQUIRE(r != NULL);
                decode_all(r);
                vim_resp_free(r);
            } else {
                FUZZ_REQUIRE(r == NULL);
            }
        }
    }
    /* the cookie-jar line reader takes a C string */
    copy = malloc(size + 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    if (vim_pbm_cookie_from_line(copy, "vmware_soap_session", line, sizeof(line)) == VMOP_OK)
        FUZZ_REQUIRE(strlen(line) <= VIM_PBM_COOKIE_MAX && line[0] != '\0');
    free(copy);
    return 0;
}
