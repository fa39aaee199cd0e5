/* fuzz_soap.c: libFuzzer target for the SOAP reply parsers of vimclient.
 *
 * Feeds the input to vim_soap_parse_response (for a PropertyCollector method and a list result)
 * and to vim_soap_parse_fault, then walks whatever parsed with the same XML helpers the client's
 * readers use (xsi:type by namespace, morefs, numbers, booleans, fault summaries), so a document
 * a server could send cannot crash, leak or hang the client. Built with -fsanitize=fuzzer only
 * when meson is configured with -Dfuzz=true and clang; replay_main.c runs the corpus in every
 * build.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vim_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_WALK 20000 /* elements visited per input: keeps deep inputs fast */

static void walk(xmlNodePtr n, int depth, size_t *budget)
{
    for (xmlNodePtr e = vim_xml_first(n); e && *budget; e = vim_xml_next(e, NULL)) {
        struct vim_moref ref;
        char *t = vim_xml_xsi_type(e);
        free(t);
        (void)vim_xml_moref(e, &ref);
        (void)vim_xml_child_ll(e, "val", 0);
        (void)vim_xml_child_bool(e, "val", 0);
        t = vim_xml_child_text(e, "name");
        free(t);
        if (strcmp((const char *)e->name, "fault") == 0) {
            struct vbuf b;
            vbuf_init(&b, 4096);
            vim_soap_fault_details(e, &b);
            vbuf_free(&b);
        }
        (*budget)--;
        if (depth < 64)
            walk(e, depth + 1, budget);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const methods[] = {"RetrievePropertiesEx", "WaitForUpdatesEx",
                                          "RetrieveServiceContent", "Login"};
    struct vim_resp *r = NULL;
    struct vmop_err err = {0};
    const char *body = (const char *)data;
    size_t budget = MAX_WALK;

    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
        vmop_err_clear(&err);
        r = NULL;
        if (vim_soap_parse_response(body, size, methods[i], VIM_RET_LIST, &r, &err) == VMOP_OK) {
            walk(r->response, 0, &budget);
            vim_resp_free(r);
        } else if (err.rc == VMOP_OK || !memchr(err.msg, '\0', sizeof(err.msg))) {
            abort(); /* a failure must always be described */
        }
    }
    vmop_err_clear(&err);
    if (vim_soap_parse_fault(body, size, 500, &err) == VMOP_OK || err.rc == VMOP_OK)
        abort(); /* parse_fault always reports a failure */
    if (strchr(err.msg, '\n') || strchr(err.msg, '\r'))
        abort(); /* messages are one line */
    return 0;
}
