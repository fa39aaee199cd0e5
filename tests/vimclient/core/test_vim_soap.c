/* test_vim_soap.c: unit tests of vimclient's SOAP layer without a server: envelopes and XML
 * escaping, response parsing on recorded simulator replies and hand-written vCenter shapes
 * (testdata/vim/), every fault type, result-count checks, XML helpers, and client configuration
 * (URL, thumbprint) checks. VMOP_TESTDATA points at testdata/. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "test_file.h"
#include "vim_internal.h"

static char *read_file(const char *name, size_t *ret_len)
{
    const char *dir = getenv("VMOP_TESTDATA");

    return vmop_test_slurpf(ret_len, "%s/vim/%s", dir ? dir : "testdata", name);
}

/* ---- envelopes --------------------------------------------------------------------------------
 */

START_TEST(envelope_exact)
{
    struct vbuf b = {0};
    struct vim_moref vm;
    ck_assert_int_eq(vim_moref_set(&vm, "VirtualMachine", "vm-63"), VMOP_OK);
    ck_assert_int_eq(vim_soap_envelope(&b, "Rename_Task", &vm, "<newName>x</newName>"), VMOP_OK);
    ck_assert_str_eq(vbuf_str(&b),
                     "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                     "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\""
                     " xmlns:xsd=\"http://www.w3.org/2001/XMLSchema\""
                     " xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"><soapenv:Body>"
                     "<Rename_Task xmlns=\"urn:vim25\"><_this type=\"VirtualMachine\">vm-63</_this>"
                     "<newName>x</newName></Rename_Task></soapenv:Body></soapenv:Envelope>");
    vbuf_free(&b);

    /* method names are code, but a bad one must never reach the wire */
    ck_assert_int_eq(vim_soap_envelope(&b, "Bad<Method", &vm, NULL), VMOP_E_INVALID);
    vbuf_free(&b);
    ck_assert_int_eq(vim_soap_envelope(&b, "", &vm, NULL), VMOP_E_INVALID);
    vbuf_free(&b);
}
END_TEST

START_TEST(envelope_escaping_round_trip)
{
    static const char nasty[] = "web & db <prod> \"quoted\" 'single' ]]> \x01tail";
    struct vbuf params, env = {0};
    struct vim_moref vm;
    xmlDocPtr doc;
    xmlNodePtr body, call, name, typed;
    char *text, *type;

    vbuf_init(&params, 4096);
    vbuf_add_xml_elem(&params, "newName", nasty);
    vim_xml_add_typed(&params, "value", "string", nasty);
    ck_assert_int_eq(vbuf_error(&params), VMOP_OK);
    ck_assert_ptr_null(strstr(vbuf_str(&params), "& "));
    ck_assert_ptr_null(strstr(vbuf_str(&params), "<prod>"));
    ck_assert_ptr_nonnull(strstr(vbuf_str(&params), "web &amp; db &lt;prod&gt; &quot;quoted&quot; "
                                                    "&apos;single&apos; ]]&gt; tail"));
    ck_assert_ptr_nonnull(strstr(vbuf_str(&params), "<value xsi:type=\"xsd:string\">"));

    /* A moref value with markup in it is escaped too. */
    ck_assert_int_eq(vim_moref_set(&vm, "VirtualMachine", "vm-<1>&"), VMOP_OK);
    ck_assert_int_eq(vim_soap_envelope(&env, "Rename_Task", &vm, vbuf_str(&params)), VMOP_OK);

    /* The envelope parses and gives back exactly what went in (minus the control character). */
    doc = vim_xml_parse(vbuf_str(&env), env.len);
    ck_assert_ptr_nonnull(doc);
    body = vim_xml_child(xmlDocGetRootElement(doc), "Body");
    call = vim_xml_first(body);
    ck_assert_str_eq((const char *)call->name, "Rename_Task");
    ck_assert_str_eq((const char *)call->ns->href, "urn:vim25");
    struct vim_moref back;
    ck_assert_int_eq(vim_xml_moref(vim_xml_child(call, "_this"), &back), VMOP_OK);
    ck_assert_str_eq(back.value, "vm-<1>&");
    name = vim_xml_child(call, "newName");
    text = vim_xml_text(name);
    ck_assert_str_eq(text, "web & db <prod> \"quoted\" 'single' ]]> tail");
    free(text);
    typed = vim_xml_child(call, "value");
    type = vim_xml_xsi_type(typed);
    ck_assert_str_eq(type, "string");
    free(type);
    xmlFreeDoc(doc);
    vbuf_free(&params);
    vbuf_free(&env);
}
END_TEST

START_TEST(typed_values)
{
    struct vbuf b;
    vbuf_init(&b, 1024);
    vim_xml_add_typed(&b, "val", "xsd:int", "4");
    vim_xml_add_typed(&b, "val", "boolean", "true");
    vim_xml_add_typed(&b, "device", "VirtualVmxnet3", "");
    ck_assert_str_eq(vbuf_str(&b), "<val xsi:type=\"xsd:int\">4</val>"
                                   "<val xsi:type=\"xsd:boolean\">true</val>"
                                   "<device xsi:type=\"VirtualVmxnet3\"></device>");
    vbuf_free(&b);
    vbuf_init(&b, 1024);
    struct vim_moref ref;
    vim_moref_set(&ref, "Folder", "group-\"d1\"");
    vim_xml_add_moref(&b, "folder", &ref);
    ck_assert_str_eq(vbuf_str(&b), "<folder type=\"Folder\">group-&quot;d1&quot;</folder>");
    vbuf_free(&b);
}
END_TEST

/* ---- responses --------------------------------------------------------------------------------
 */

START_TEST(parse_service_content)
{
    size_t len;
    char *body = read_file("retrieve_service_content.xml", &len);
    struct vim_resp *r = NULL;
    struct vmop_err err = {0};
    struct vim_moref ref;

    ck_assert_int_eq(
        vim_soap_parse_response(body, len, "RetrieveServiceContent", VIM_RET_REQUIRED, &r, &err),
        VMOP_OK);
    xmlNodePtr sc = vim_xml_child(r->response, "returnval");
    ck_assert_ptr_nonnull(sc);
    ck_assert_int_eq(vim_xml_moref(vim_xml_child(sc, "propertyCollector"), &ref), VMOP_OK);
    ck_assert_str_eq(ref.type, "PropertyCollector");
    ck_assert_str_eq(ref.value, "propertyCollector");
    char *v = vim_xml_child_text(vim_xml_child(sc, "about"), "apiVersion");
    ck_assert_str_eq(v, "6.5");
    free(v);
    vim_resp_free(r);

    /* result-count checks */
    r = NULL;
    ck_assert_int_eq(
        vim_soap_parse_response(body, len, "RetrieveServiceContent", VIM_RET_NONE, &r, &err),
        VMOP_E_PROTO);
    ck_assert_ptr_null(r);
    ck_assert_ptr_nonnull(strstr(err.msg, "got 1 returnval"));
    vmop_err_clear(&err);
    ck_assert_int_eq(
        vim_soap_parse_response(body, len, "RetrieveServiceContent", VIM_RET_LIST, &r, &err),
        VMOP_OK);
    vim_resp_free(r);
    r = NULL;
    ck_assert_int_eq(vim_soap_parse_response(body, len, "Login", VIM_RET_REQUIRED, &r, &err),
                     VMOP_E_PROTO);
    ck_assert_ptr_nonnull(strstr(err.msg, "no LoginResponse"));
    ck_assert_ptr_null(r);
    free(body);
}
END_TEST

START_TEST(parse_occurrence)
{
    size_t len;
    struct vim_resp *r = NULL;
    struct vmop_err err = {0};
    char *body = read_file("find_by_path_none.xml", &len);

    ck_assert_int_eq(
        vim_soap_parse_response(body, len, "FindByInventoryPath", VIM_RET_OPTIONAL, &r, &err),
        VMOP_OK);
    ck_assert_ptr_null(vim_xml_child(r->response, "returnval"));
    vim_resp_free(r);
    r = NULL;
    ck_assert_int_eq(
        vim_soap_parse_response(body, len, "FindByInventoryPath", VIM_RET_REQUIRED, &r, &err),
        VMOP_E_PROTO);
    ck_assert_ptr_nonnull(strstr(err.msg, "expected exactly one result, got 0"));
    free(body);

    /* vcsim: empty <returnval></returnval>; vCenter: none. Both parse for a list. */
    vmop_err_clear(&err);
    body = read_file("retrieve_empty_returnval.xml", &len);
    ck_assert_int_eq(
        vim_soap_parse_response(body, len, "RetrievePropertiesEx", VIM_RET_OPTIONAL, &r, &err),
        VMOP_OK);
    ck_assert_ptr_nonnull(vim_xml_child(r->response, "returnval"));
    ck_assert_ptr_null(vim_xml_child(vim_xml_child(r->response, "returnval"), "objects"));
    vim_resp_free(r);
    r = NULL;
    free(body);
    body = read_file("retrieve_realvc_no_returnval.xml", &len);
    ck_assert_int_eq(
        vim_soap_parse_response(body, len, "RetrievePropertiesEx", VIM_RET_OPTIONAL, &r, &err),
        VMOP_OK);
    ck_assert_ptr_null(vim_xml_child(r->response, "returnval"));
    vim_resp_free(r);
    free(body);

    /* WaitForUpdatesEx that timed out: empty response, no returnval */
    body = read_file("wait_for_updates_timeout.xml", &len);
    r = NULL;
    ck_assert_int_eq(
        vim_soap_parse_response(body, len, "WaitForUpdatesEx", VIM_RET_OPTIONAL, &r, &err),
        VMOP_OK);
    ck_assert_ptr_null(vim_xml_child(r->response, "returnval"));
    vim_resp_free(r);
    free(body);
}
END_TEST

/* vcsim's "XMLSchema-instance:type" and vCenter's "xsi:type" both read by namespace URI. */
START_TEST(parse_xsi_prefixes)
{
    size_t len;
    struct vim_resp *r = NULL;
    struct vmop_err err = {0};
    char *body = read_file("retrieve_view_vms.xml", &len);
    ck_assert_int_eq(
        vim_soap_parse_response(body, len, "RetrievePropertiesEx", VIM_RET_OPTIONAL, &r, &err),
        VMOP_OK);
    xmlNodePtr objs = vim_xml_child(vim_xml_child(r->response, "returnval"), "objects");
    xmlNodePtr ps = vim_xml_child(objs, "propSet");
    char *t = vim_xml_xsi_type(vim_xml_child(ps, "val"));
    ck_assert_str_eq(t, "string");
    free(t);
    ps = vim_xml_next(ps, "propSet");
    t = vim_xml_xsi_type(vim_xml_child(ps, "val"));
    ck_assert_str_eq(t, "VirtualMachinePowerState");
    free(t);
    int n = 0;
    for (; objs; objs = vim_xml_next(objs, "objects"))
        n++;
    ck_assert_int_ge(n, 4);
    vim_resp_free(r);
    free(body);

    r = NULL;
    body = read_file("retrieve_realvc_xsi_token.xml", &len);
    ck_assert_int_eq(
        vim_soap_parse_response(body, len, "RetrievePropertiesEx", VIM_RET_OPTIONAL, &r, &err),
        VMOP_OK);
    xmlNodePtr rv = vim_xml_child(r->response, "returnval");
    char *tok = vim_xml_child_text(rv, "token");
    ck_assert_str_eq(tok, "2");
    free(tok);
    objs = vim_xml_child(rv, "objects");
    ps = vim_xml_child(objs, "propSet");
    t = vim_xml_xsi_type(vim_xml_child(ps, "val"));
    ck_assert_str_eq(t, "string");
    free(t);
    t = vim_xml_child_text(ps, "val");
    ck_assert_str_eq(t, "web & db <1>");
    free(t);
    ps = vim_xml_next(vim_xml_next(ps, "propSet"), "propSet");
    ck_assert_int_eq(vim_xml_child_ll(ps, "val", -1), 4);
    ck_assert_int_eq(vim_xml_child_ll(ps, "name", -1), -1); /* not a number: default */
    ps = vim_xml_next(ps, "propSet");
    ck_assert_int_eq(vim_xml_child_bool(ps, "val", -1), 0);
    ck_assert_int_eq(vim_xml_child_bool(ps, "name", -1), -1);
    ck_assert_int_eq(vim_xml_child_bool(ps, "absent", 7), 7);
    vim_resp_free(r);
    free(body);
}
END_TEST

START_TEST(parse_bad_documents)
{
    size_t len;
    struct vim_resp *r = NULL;
    struct vmop_err err = {0};
    char *body = read_file("retrieve_service_content.xml", &len);

    /* truncated */
    ck_assert_int_eq(vim_soap_parse_response(body, len / 2, "RetrieveServiceContent",
                                             VIM_RET_REQUIRED, &r, &err),
                     VMOP_E_PROTO);
    ck_assert_ptr_nonnull(strstr(err.msg, "not well-formed"));
    ck_assert_ptr_null(r);
    /* empty and NULL */
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_soap_parse_response("", 0, "X", VIM_RET_NONE, &r, &err), VMOP_E_PROTO);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_soap_parse_response("<a/>", 4, "X", VIM_RET_NONE, &r, &err), VMOP_E_PROTO);
    ck_assert_ptr_nonnull(strstr(err.msg, "not a SOAP envelope"));
    free(body);

    /* DTDs (and so entity expansion) are refused */
    body = read_file("doctype_entities.xml", &len);
    ck_assert_ptr_null(vim_xml_parse(body, len));
    vmop_err_clear(&err);
    ck_assert_int_eq(
        vim_soap_parse_response(body, len, "RetrieveServiceContent", VIM_RET_REQUIRED, &r, &err),
        VMOP_E_PROTO);
    free(body);

    /* a fault inside an HTTP 200 is still a fault */
    body = read_file("fault_in_200.xml", &len);
    vmop_err_clear(&err);
    ck_assert_int_eq(
        vim_soap_parse_response(body, len, "CreateContainerView", VIM_RET_REQUIRED, &r, &err),
        VMOP_E_FAULT);
    ck_assert_str_eq(err.fault, "NoPermission");
    ck_assert_int_eq(err.http_status, 200);
    ck_assert_ptr_nonnull(strstr(err.msg, "CreateContainerView: NoPermission: denied"));
    ck_assert_ptr_null(r);
    free(body);
}
END_TEST

/* ---- faults -----------------------------------------------------------------------------------
 */

struct fault_case {
    const char *file;
    vmop_rc rc;
    const char *fault;
    const char *in_msg; /* substring the message must contain */
};

static const struct fault_case fault_cases[] = {
    {"fault_invalid_login.xml", VMOP_E_AUTH, "InvalidLogin", "InvalidLogin: Login failure"},
    {"fault_not_authenticated.xml", VMOP_E_FAULT, "NotAuthenticated",
     "NotAuthenticated (object=ViewManager:ViewManager, privilegeId=System.View)"},
    {"fault_managed_object_not_found.xml", VMOP_E_FAULT, "ManagedObjectNotFound",
     "(obj=VirtualMachine:vm-9999)"},
    {"fault_invalid_argument_realvc.xml", VMOP_E_FAULT, "InvalidArgument",
     "(invalidProperty=spec.numCPUs)"},
    {"fault_duplicate_name.xml", VMOP_E_FAULT, "DuplicateName",
     "DuplicateName (name=vmop-tiny-tmpl, object=Folder:folder-3)"},
    {"fault_invalid_power_state_realvc.xml", VMOP_E_FAULT, "InvalidPowerState",
     "(requestedState=poweredOff, existingState=poweredOn)"},
    {"fault_invalid_state.xml", VMOP_E_FAULT, "InvalidState", "cannot powerOn a template"},
    {"fault_task_in_progress_realvc.xml", VMOP_E_FAULT, "TaskInProgress", "(task=Task:task-4711)"},
    {"fault_method_not_found.xml", VMOP_E_FAULT, "MethodNotFound",
     "(receiver=VirtualMachine:vm-63, method=RebootGuest)"},
    {"fault_invalid_request.xml", VMOP_E_FAULT, "InvalidRequest",
     "no vmomi type defined for 'FooBar'"},
    /* no xsi:type, an unusual envelope prefix, empty faultstring: the element name minus Fault */
    {"fault_untyped_detail.xml", VMOP_E_FAULT, "InvalidState", "SOAP call: InvalidState"},
    /* no detail at all: the faultcode without its prefix */
    {"fault_no_detail.xml", VMOP_E_FAULT, "Client", "Client: Unable to parse the request"},
    /* not a fault */
    {"http500_no_fault.html", VMOP_E_HTTP, "", "HTTP 500 without a SOAP Fault"},
};

START_TEST(fault_types)
{
    const struct fault_case *fc = &fault_cases[_i];
    size_t len;
    char *body = read_file(fc->file, &len);
    struct vmop_err err = {0};

    ck_assert_int_eq(vim_soap_parse_fault(body, len, 500, &err), fc->rc);
    ck_assert_int_eq(err.rc, fc->rc);
    ck_assert_str_eq(err.fault, fc->fault);
    ck_assert_int_eq(err.http_status, 500);
    ck_assert_msg(strstr(err.msg, fc->in_msg) != NULL, "%s: message '%s' lacks '%s'", fc->file,
                  err.msg, fc->in_msg);
    ck_assert_ptr_null(strchr(err.msg, '\n'));
    free(body);
}
END_TEST

START_TEST(fault_truncated_and_empty)
{
    size_t len;
    char *body = read_file("fault_duplicate_name.xml", &len);
    struct vmop_err err = {0};

    ck_assert_int_eq(vim_soap_parse_fault(body, len - 40, 500, &err), VMOP_E_HTTP);
    ck_assert_ptr_nonnull(strstr(err.msg, "not well-formed"));
    ck_assert_str_eq(err.fault, "");
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_soap_parse_fault("", 0, 503, &err), VMOP_E_HTTP);
    ck_assert_int_eq(err.http_status, 503);
    /* the first error sticks */
    ck_assert_int_eq(vim_soap_parse_fault(body, len, 500, &err), VMOP_E_FAULT);
    ck_assert_int_eq(err.rc, VMOP_E_HTTP);
    free(body);
}
END_TEST

/* Task errors use the same detail summary (vim_task.c). */
START_TEST(task_error_details)
{
    size_t len;
    char *body = read_file("task_info_error.xml", &len);
    struct vim_resp *r = NULL;
    struct vmop_err err = {0};
    struct vbuf out;

    ck_assert_int_eq(
        vim_soap_parse_response(body, len, "RetrievePropertiesEx", VIM_RET_OPTIONAL, &r, &err),
        VMOP_OK);
    xmlNodePtr val = vim_xml_child(
        vim_xml_child(vim_xml_child(vim_xml_child(r->response, "returnval"), "objects"), "propSet"),
        "val");
    char *state = vim_xml_child_text(val, "state");
    ck_assert_str_eq(state, "error");
    free(state);
    xmlNodePtr fault = vim_xml_child(vim_xml_child(val, "error"), "fault");
    char *type = vim_xml_xsi_type(fault);
    ck_assert_str_eq(type, "InvalidPowerState");
    free(type);
    vbuf_init(&out, 1024);
    vim_soap_fault_details(fault, &out);
    ck_assert_str_eq(vbuf_str(&out), " (requestedState=poweredOn, existingState=poweredOn)");
    vbuf_free(&out);
    vim_resp_free(r);
    free(body);
}
END_TEST

/* ---- configuration ----------------------------------------------------------------------------
 */

static vmop_rc try_config(const char *url, const char *thumb, int insecure, const char *ca,
                          struct vim_client **ret, struct vmop_err *err)
{
    struct vim_config cfg = {.url = url,
                             .username = "admin",
                             .password = "s3cret-pw",
                             .thumbprint = thumb,
                             .insecure = insecure,
                             .ca_file = ca};
    return vim_client_new(&cfg, ret, err);
}

START_TEST(config_thumbprints)
{
    static const unsigned char sha1[20] = {0x2C, 0x11, 0xED, 0xD7, 0x13, 0x87, 0x7D,
                                           0xB5, 0x74, 0x18, 0xB8, 0x1C, 0x42, 0xC2,
                                           0x56, 0x1F, 0x0D, 0xB9, 0x5B, 0xB9};
    struct vim_client *c = NULL;
    struct vmop_err err = {0};

    ck_assert_int_eq(try_config("https://127.0.0.1:8989",
                                "2C:11:ED:D7:13:87:7D:B5:74:18:B8:1C:42:C2:56:1F:0D:B9:5B:B9", 0,
                                NULL, &c, &err),
                     VMOP_OK);
    ck_assert_int_eq(c->pin_len, 20);
    ck_assert_mem_eq(c->pin, sha1, 20);
    vim_client_free(c);
    c = NULL;
    /* lower case, no colons */
    ck_assert_int_eq(try_config("https://127.0.0.1:8989",
                                "2c11edd713877db57418b81c42c2561f0db95bb9", 0, NULL, &c, &err),
                     VMOP_OK);
    ck_assert_mem_eq(c->pin, sha1, 20);
    vim_client_free(c);
    c = NULL;
    /* SHA-256 */
    ck_assert_int_eq(
        try_config("https://127.0.0.1:8989",
                   "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99:"
                   "AA:BB:CC:DD:EE:FF",
                   0, NULL, &c, &err),
        VMOP_OK);
    ck_assert_int_eq(c->pin_len, 32);
    ck_assert_int_eq(c->pin[10], 0xaa);
    ck_assert_int_eq(c->pin[31], 0xff);
    vim_client_free(c);
    c = NULL;

    static const char *const bad[] = {
        "2C:11:ED",                                   /* too short */
        "2C11EDD713877DB57418B81C42C2561F0DB95BB",    /* odd */
        "ZZ11EDD713877DB57418B81C42C2561F0DB95BB9",   /* not hex */
        "2C11EDD713877DB57418B81C42C2561F0DB95BB9AA", /* 21 bytes */
        "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        vmop_err_clear(&err);
        ck_assert_int_eq(try_config("https://127.0.0.1:8989", bad[i], 0, NULL, &c, &err),
                         VMOP_E_INVALID);
        ck_assert_ptr_null(c);
        ck_assert_ptr_nonnull(strstr(err.msg, "thumbprint"));
    }
    /* conflicting TLS settings */
    vmop_err_clear(&err);
    ck_assert_int_eq(try_config("https://127.0.0.1:8989",
                                "2c11edd713877db57418b81c42c2561f0db95bb9", 1, NULL, &c, &err),
                     VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(try_config("https://127.0.0.1:8989",
                                "2c11edd713877db57418b81c42c2561f0db95bb9", 0,
                                "/etc/ssl/certs/ca-certificates.crt", &c, &err),
                     VMOP_E_INVALID);
}
END_TEST

START_TEST(config_urls_and_defaults)
{
    struct vim_client *c = NULL;
    struct vmop_err err = {0};

    ck_assert_int_eq(try_config("https://vc.example.com/sdk", NULL, 0, NULL, &c, &err), VMOP_OK);
    ck_assert_str_eq(c->base_url, "https://vc.example.com");
    ck_assert_int_eq(c->timeout_ms, 60000);
    ck_assert_int_eq(c->connect_timeout_ms, 10000);
    ck_assert_int_eq(c->max_connections, 8);
    ck_assert_int_eq(c->insecure, 0);
    ck_assert_int_eq(c->pin_len, 0);
    /* no I/O before the first call */
    ck_assert_ptr_null(vim_about_api_version(c));
    struct vim_stats st;
    vim_client_stats(c, &st);
    ck_assert_int_eq(st.soap_calls, 0);
    vim_client_free(c);
    c = NULL;
    ck_assert_int_eq(try_config("http://127.0.0.1:1234/", NULL, 0, NULL, &c, &err), VMOP_OK);
    ck_assert_str_eq(c->base_url, "http://127.0.0.1:1234");
    vim_client_free(c);
    c = NULL;

    static const char *const bad[] = {
        "ftp://vc.example.com",
        "vc.example.com",
        "https://",
        "https:///sdk",
        "https://user:pw@vc.example.com",
        "https://vc.example.com/other",
        "https://vc example.com",
        "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        vmop_err_clear(&err);
        ck_assert_int_eq(try_config(bad[i], NULL, 0, NULL, &c, &err), VMOP_E_INVALID);
        ck_assert_ptr_null(c);
        /* never the password */
        ck_assert_ptr_null(strstr(err.msg, "s3cret-pw"));
    }
    vmop_err_clear(&err);
    struct vim_config cfg = {.url = "https://vc", .username = "u", .password = NULL};
    ck_assert_int_eq(vim_client_new(&cfg, &c, &err), VMOP_E_INVALID);
    vim_client_free(NULL);
}
END_TEST

START_TEST(morefs_and_power)
{
    struct vim_moref a, b;
    char longv[VIM_MOREF_VALUE_MAX + 1];
    memset(&a, 0, sizeof(a));
    ck_assert(!vim_moref_is_set(&a));
    ck_assert_int_eq(vim_moref_set(&a, "VirtualMachine", "vm-1"), VMOP_OK);
    ck_assert(vim_moref_is_set(&a));
    ck_assert_int_eq(vim_moref_set(&b, "VirtualMachine", "vm-1"), VMOP_OK);
    ck_assert(vim_moref_eq(&a, &b));
    ck_assert_int_eq(vim_moref_set(&b, "VirtualMachine", "vm-2"), VMOP_OK);
    ck_assert(!vim_moref_eq(&a, &b));
    ck_assert_int_eq(vim_moref_set(&b, "", "vm-2"), VMOP_E_INVALID);
    ck_assert_int_eq(vim_moref_set(&b, "Folder", ""), VMOP_E_INVALID);
    memset(longv, 'x', sizeof(longv) - 1);
    longv[sizeof(longv) - 1] = '\0';
    ck_assert_int_eq(vim_moref_set(&b, "Folder", longv), VMOP_E_INVALID);
    ck_assert_str_eq(vim_power_state_str(VIM_POWER_ON), "poweredOn");
    ck_assert_str_eq(vim_power_state_str(VIM_POWER_OFF), "poweredOff");
    ck_assert_str_eq(vim_power_state_str(VIM_POWER_SUSPENDED), "suspended");
    ck_assert_str_eq(vim_power_state_str(VIM_POWER_UNKNOWN), "unknown");
}
END_TEST

static Suite *soap_suite(void)
{
    Suite *s = suite_create("vim_soap");
    TCase *tc = tcase_create("envelope");
    tcase_add_test(tc, envelope_exact);
    tcase_add_test(tc, envelope_escaping_round_trip);
    tcase_add_test(tc, typed_values);
    suite_add_tcase(s, tc);
    tc = tcase_create("response");
    tcase_add_test(tc, parse_service_content);
    tcase_add_test(tc, parse_occurrence);
    tcase_add_test(tc, parse_xsi_prefixes);
    tcase_add_test(tc, parse_bad_documents);
    suite_add_tcase(s, tc);
    tc = tcase_create("fault");
    tcase_add_loop_test(tc, fault_types, 0, (int)(sizeof(fault_cases) / sizeof(fault_cases[0])));
    tcase_add_test(tc, fault_truncated_and_empty);
    tcase_add_test(tc, task_error_details);
    suite_add_tcase(s, tc);
    tc = tcase_create("config");
    tcase_add_test(tc, config_thumbprints);
    tcase_add_test(tc, config_urls_and_defaults);
    tcase_add_test(tc, morefs_and_power);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return vmop_check_run(soap_suite());
}
