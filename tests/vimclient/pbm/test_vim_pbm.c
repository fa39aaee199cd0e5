/* test_vim_pbm.c: vim_pbm.c without a server (suite unit): the PBM envelope (namespace, _this,
 * the vcSessionCookie header, escaping), replies as the simulator and vCenter shape them
 * (xsi:type under any prefix), faults (InvalidArgument for an unknown profile, NotAuthenticated),
 * result checks and caps, the cookie-jar line reader, and the CloneVM_Task parameters carrying a
 * storage policy (RelocateSpec.profile in WSDL order).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "vim_pbm.h"

#define ENV_OPEN                                                                                   \
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><soapenv:Envelope "                                 \
    "xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\" "                                 \
    "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"><soapenv:Body>"
#define ENV_CLOSE "</soapenv:Body></soapenv:Envelope>"

#define POLICY "aa6d5a82-1c88-45da-85d3-3d74b91a5bad"

static struct vim_resp *reply_ok(const char *body, const char *method, enum vim_occurs occurs)
{
    struct vim_resp *r = NULL;
    struct vmop_err err = {0};
    ck_assert_msg(vim_pbm_reply(200, body, strlen(body), method, occurs, &r, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_ptr_nonnull(r);
    return r;
}

START_TEST(test_envelope)
{
    struct vbuf b = {0};
    struct vim_moref pm = {"PbmProfileProfileManager", "ProfileManager"};
    const char *s;

    ck_assert_int_eq(vim_pbm_envelope(&b, "52<&>\"x", "PbmRetrieveContent", &pm,
                                      "<profileIds><uniqueId>" POLICY "</uniqueId></profileIds>"),
                     VMOP_OK);
    s = vbuf_str(&b);
    ck_assert_ptr_nonnull(strstr(s, "<soapenv:Header><vcSessionCookie>52&lt;&amp;&gt;&quot;x"
                                    "</vcSessionCookie></soapenv:Header>"));
    ck_assert_ptr_nonnull(strstr(s,
                                 "<soapenv:Body><PbmRetrieveContent xmlns=\"urn:pbm\">"
                                 "<_this type=\"PbmProfileProfileManager\">ProfileManager</_this>"
                                 "<profileIds><uniqueId>" POLICY "</uniqueId></profileIds>"
                                 "</PbmRetrieveContent></soapenv:Body>"));
    /* the header comes before the body */
    ck_assert(strstr(s, "<soapenv:Header>") < strstr(s, "<soapenv:Body>"));
    vbuf_free(&b);

    /* no session: no header */
    ck_assert_int_eq(vim_pbm_envelope(&b, NULL, "PbmRetrieveServiceContent", NULL, NULL), VMOP_OK);
    ck_assert_ptr_null(strstr(vbuf_str(&b), "Header"));
    vbuf_free(&b);

    /* a method name that is not an identifier is refused */
    ck_assert_int_eq(vim_pbm_envelope(&b, NULL, "Pbm<x>", NULL, NULL), VMOP_E_INVALID);
    vbuf_free(&b);
    ck_assert_int_eq(vim_pbm_envelope(&b, NULL, "", NULL, NULL), VMOP_E_INVALID);
    vbuf_free(&b);
}
END_TEST

START_TEST(test_service_content)
{
    const char *body =
        ENV_OPEN "<PbmRetrieveServiceContentResponse xmlns=\"urn:pbm\"><returnval><aboutInfo>"
                 "<name>PBM</name><version>2.0</version></aboutInfo>"
                 "<profileManager type=\"PbmProfileProfileManager\">ProfileManager</profileManager>"
                 "<placementSolver type=\"PbmPlacementSolver\">placementSolver</placementSolver>"
                 "</returnval></PbmRetrieveServiceContentResponse>" ENV_CLOSE;
    const char *bad =
        ENV_OPEN "<PbmRetrieveServiceContentResponse xmlns=\"urn:pbm\"><returnval>"
                 "<profileManager type=\"PbmProfileProfileManager\">ProfileManager"
                 "</profileManager></returnval></PbmRetrieveServiceContentResponse>" ENV_CLOSE;
    struct vim_resp *r = reply_ok(body, "PbmRetrieveServiceContent", VIM_RET_REQUIRED);
    struct vim_moref pm = {{0}}, ps = {{0}};
    struct vmop_err err = {0};

    ck_assert_int_eq(vim_pbm_decode_service_content(r, &pm, &ps, &err), VMOP_OK);
    ck_assert_str_eq(pm.type, "PbmProfileProfileManager");
    ck_assert_str_eq(pm.value, "ProfileManager");
    ck_assert_str_eq(ps.type, "PbmPlacementSolver");
    ck_assert_str_eq(ps.value, "placementSolver");
    vim_resp_free(r);

    r = reply_ok(bad, "PbmRetrieveServiceContent", VIM_RET_REQUIRED);
    memset(&pm, 0, sizeof(pm));
    ck_assert_int_eq(vim_pbm_decode_service_content(r, &pm, &ps, &err), VMOP_E_PROTO);
    ck_assert(!vim_moref_is_set(&pm)); /* outputs untouched on failure */
    vim_resp_free(r);

    /* two returnvals where one is required */
    {
        const char *two =
            ENV_OPEN "<PbmRetrieveServiceContentResponse xmlns=\"urn:pbm\">"
                     "<returnval/><returnval/></PbmRetrieveServiceContentResponse>" ENV_CLOSE;
        struct vmop_err e2 = {0};
        r = NULL;
        ck_assert_int_eq(vim_pbm_reply(200, two, strlen(two), "PbmRetrieveServiceContent",
                                       VIM_RET_REQUIRED, &r, &e2),
                         VMOP_E_PROTO);
        ck_assert_ptr_null(r);
    }
}
END_TEST

START_TEST(test_profile)
{
    /* the simulator's shape: xsi:type under the prefix "XMLSchema-instance" */
    const char *body =
        ENV_OPEN "<PbmRetrieveContentResponse xmlns=\"urn:pbm\">"
                 "<returnval xmlns:XMLSchema-instance=\"http://www.w3.org/2001/XMLSchema-instance\""
                 " XMLSchema-instance:type=\"PbmCapabilityProfile\"><profileId><uniqueId>other"
                 "</uniqueId></profileId><name>Other</name></returnval>"
                 "<returnval xsi:type=\"PbmCapabilityProfile\"><profileId><uniqueId>" POLICY
                 "</uniqueId></profileId><name>vSAN Default Storage Policy</name>"
                 "<profileCategory>REQUIREMENT</profileCategory></returnval>"
                 "</PbmRetrieveContentResponse>" ENV_CLOSE;
    const char *empty = ENV_OPEN
        "<PbmRetrieveContentResponse xmlns=\"urn:pbm\"></PbmRetrieveContentResponse>" ENV_CLOSE;
    struct vim_resp *r = reply_ok(body, "PbmRetrieveContent", VIM_RET_LIST);
    struct vim_pbm_profile *p = NULL;
    struct vmop_err err = {0};

    ck_assert_int_eq(vim_pbm_decode_profile(r, POLICY, &p, &err), VMOP_OK);
    ck_assert_str_eq(p->id, POLICY);
    ck_assert_str_eq(p->name, "vSAN Default Storage Policy");
    vim_pbm_profile_free(p);
    p = NULL;
    ck_assert_int_eq(vim_pbm_decode_profile(r, "missing", &p, &err), VMOP_E_NOT_FOUND);
    ck_assert_ptr_null(p);
    ck_assert_ptr_nonnull(strstr(err.msg, "\"missing\""));
    vim_resp_free(r);

    /* vCenter may answer an unknown ID with an empty list */
    r = reply_ok(empty, "PbmRetrieveContent", VIM_RET_LIST);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_pbm_decode_profile(r, POLICY, &p, &err), VMOP_E_NOT_FOUND);
    vim_resp_free(r);
}
END_TEST

START_TEST(test_faults)
{
    /* what the simulator answers for an unknown profile ID */
    const char *inval =
        ENV_OPEN "<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring></faultstring>"
                 "<detail><InvalidArgumentFault xmlns=\"urn:vim25\" xsi:type=\"InvalidArgument\">"
                 "<invalidProperty>profileId</invalidProperty></InvalidArgumentFault></detail>"
                 "</soapenv:Fault>" ENV_CLOSE;
    const char *noauth =
        ENV_OPEN "<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring></faultstring>"
                 "<detail><NotAuthenticatedFault xmlns=\"urn:vim25\" xsi:type=\"NotAuthenticated\">"
                 "<object type=\"PbmProfileProfileManager\">ProfileManager</object>"
                 "</NotAuthenticatedFault></detail></soapenv:Fault>" ENV_CLOSE;
    struct vim_resp *r = NULL;
    struct vmop_err err = {0};

    ck_assert_int_eq(
        vim_pbm_reply(500, inval, strlen(inval), "PbmRetrieveContent", VIM_RET_LIST, &r, &err),
        VMOP_E_FAULT);
    ck_assert_ptr_null(r);
    ck_assert_str_eq(err.fault, "InvalidArgument");
    ck_assert_int_eq(err.http_status, 500);
    ck_assert_ptr_nonnull(strstr(err.msg, "PbmRetrieveContent: InvalidArgument"));
    ck_assert_ptr_nonnull(strstr(err.msg, "invalidProperty=profileId"));

    vmop_err_clear(&err);
    ck_assert_int_eq(
        vim_pbm_reply(500, noauth, strlen(noauth), "PbmCheckRequirements", VIM_RET_LIST, &r, &err),
        VMOP_E_FAULT);
    ck_assert_str_eq(err.fault, "NotAuthenticated");

    /* a fault inside HTTP 200 is still a fault */
    vmop_err_clear(&err);
    ck_assert_int_eq(
        vim_pbm_reply(200, inval, strlen(inval), "PbmRetrieveContent", VIM_RET_LIST, &r, &err),
        VMOP_E_FAULT);
    ck_assert_str_eq(err.fault, "InvalidArgument");

    /* not found page (a server without the PBM endpoint), garbage */
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_pbm_reply(404, "404 page not found", 18, "PbmRetrieveServiceContent",
                                   VIM_RET_REQUIRED, &r, &err),
                     VMOP_E_HTTP);
    ck_assert_int_eq(err.http_status, 404);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_pbm_reply(200, "<x", 2, "PbmRetrieveContent", VIM_RET_LIST, &r, &err),
                     VMOP_E_PROTO);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_pbm_reply(500, "<x", 2, "PbmRetrieveContent", VIM_RET_LIST, &r, &err),
                     VMOP_E_HTTP);
    /* a reply to another method */
    {
        const char *other = ENV_OPEN "<PbmQueryProfileResponse xmlns=\"urn:pbm\"/>" ENV_CLOSE;
        vmop_err_clear(&err);
        ck_assert_int_eq(
            vim_pbm_reply(200, other, strlen(other), "PbmRetrieveContent", VIM_RET_LIST, &r, &err),
            VMOP_E_PROTO);
    }
}
END_TEST

START_TEST(test_check)
{
    const char *body =
        ENV_OPEN "<PbmCheckRequirementsResponse xmlns=\"urn:pbm\">"
                 "<returnval><hub><hubType>Datastore</hubType><hubId>datastore-1</hubId></hub>"
                 "</returnval>"
                 "<returnval><hub><hubType>Datastore</hubType><hubId>datastore-2</hubId></hub>"
                 "<error><fault xsi:type=\"PbmIncompatibleVendorSpecificRuleSet\"/>"
                 "<localizedMessage>no</localizedMessage></error></returnval>"
                 "<returnval><hub><hubType>StoragePod</hubType><hubId>group-p1</hubId></hub>"
                 "</returnval>"
                 "<returnval><hub><hubType>Datastore</hubType><hubId>/tmp/x@folder-5</hubId></hub>"
                 "<warning><localizedMessage>w</localizedMessage></warning></returnval>"
                 "</PbmCheckRequirementsResponse>" ENV_CLOSE;
    const char *empty = ENV_OPEN "<PbmCheckRequirementsResponse xmlns=\"urn:pbm\"/>" ENV_CLOSE;
    const char *nohub =
        ENV_OPEN "<PbmCheckRequirementsResponse xmlns=\"urn:pbm\"><returnval>"
                 "<howMany>1</howMany></returnval></PbmCheckRequirementsResponse>" ENV_CLOSE;
    const char *badhub = ENV_OPEN "<PbmCheckRequirementsResponse xmlns=\"urn:pbm\"><returnval>"
                                  "<hub><hubType>Datastore</hubType></hub></returnval>"
                                  "</PbmCheckRequirementsResponse>" ENV_CLOSE;
    struct vim_resp *r = reply_ok(body, "PbmCheckRequirements", VIM_RET_LIST);
    struct vim_moref *ds = NULL;
    size_t n = 99;
    struct vmop_err err = {0};

    ck_assert_int_eq(vim_pbm_decode_check(r, &ds, &n, &err), VMOP_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(ds[0].type, "Datastore");
    ck_assert_str_eq(ds[0].value, "datastore-1");
    ck_assert_str_eq(ds[1].value, "/tmp/x@folder-5"); /* a warning is still compatible */
    free(ds);
    vim_resp_free(r);

    r = reply_ok(empty, "PbmCheckRequirements", VIM_RET_LIST);
    ds = NULL;
    ck_assert_int_eq(vim_pbm_decode_check(r, &ds, &n, &err), VMOP_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_ptr_null(ds);
    vim_resp_free(r);

    r = reply_ok(nohub, "PbmCheckRequirements", VIM_RET_LIST);
    ck_assert_int_eq(vim_pbm_decode_check(r, &ds, &n, &err), VMOP_E_PROTO);
    vim_resp_free(r);
    vmop_err_clear(&err);
    r = reply_ok(badhub, "PbmCheckRequirements", VIM_RET_LIST);
    ck_assert_int_eq(vim_pbm_decode_check(r, &ds, &n, &err), VMOP_E_PROTO);
    vim_resp_free(r);
}
END_TEST

START_TEST(test_check_cap)
{
    struct vbuf b;
    struct vim_resp *r;
    struct vim_moref *ds = NULL;
    size_t n = 0;
    struct vmop_err err = {0};

    vbuf_init(&b, 8u << 20);
    vbuf_adds(&b, ENV_OPEN "<PbmCheckRequirementsResponse xmlns=\"urn:pbm\">");
    for (int i = 0; i < VIM_PBM_MAX_HUBS + 1; i++)
        vbuf_addf(&b,
                  "<returnval><hub><hubType>Datastore</hubType><hubId>d%d</hubId></hub>"
                  "</returnval>",
                  i);
    vbuf_adds(&b, "</PbmCheckRequirementsResponse>" ENV_CLOSE);
    ck_assert_int_eq(vbuf_error(&b), VMOP_OK);
    r = reply_ok(vbuf_str(&b), "PbmCheckRequirements", VIM_RET_LIST);
    ck_assert_int_eq(vim_pbm_decode_check(r, &ds, &n, &err), VMOP_E_TOOBIG);
    ck_assert_ptr_null(ds);
    vim_resp_free(r);
    vbuf_free(&b);
}
END_TEST

START_TEST(test_cookie_line)
{
    char buf[VIM_PBM_COOKIE_MAX + 1];
    char big[VIM_PBM_COOKIE_MAX + 200];
    char line[VIM_PBM_COOKIE_MAX + 300];

    ck_assert_int_eq(vim_pbm_cookie_from_line("#HttpOnly_127.0.0.1\tFALSE\t/\tFALSE\t0\t"
                                              "vmware_soap_session\tcedf54fe-de5e",
                                              "vmware_soap_session", buf, sizeof(buf)),
                     VMOP_OK);
    ck_assert_str_eq(buf, "cedf54fe-de5e");
    /* vCenter quotes the value: kept as is */
    ck_assert_int_eq(
        vim_pbm_cookie_from_line("vc\tFALSE\t/\tTRUE\t0\tvmware_soap_session\t\"52ab\"",
                                 "vmware_soap_session", buf, sizeof(buf)),
        VMOP_OK);
    ck_assert_str_eq(buf, "\"52ab\"");
    ck_assert_int_eq(vim_pbm_cookie_from_line("vc\tFALSE\t/\tTRUE\t0\tother\tx",
                                              "vmware_soap_session", buf, sizeof(buf)),
                     VMOP_E_NOT_FOUND);
    ck_assert_int_eq(vim_pbm_cookie_from_line("vc\tFALSE\t/\tTRUE\t0\tvmware_soap_session_x\tx",
                                              "vmware_soap_session", buf, sizeof(buf)),
                     VMOP_E_NOT_FOUND);
    ck_assert_int_eq(vim_pbm_cookie_from_line("garbage", "vmware_soap_session", buf, sizeof(buf)),
                     VMOP_E_NOT_FOUND);
    ck_assert_int_eq(vim_pbm_cookie_from_line("vc\tFALSE\t/\tTRUE\t0\tvmware_soap_session\t",
                                              "vmware_soap_session", buf, sizeof(buf)),
                     VMOP_E_NOT_FOUND);
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    snprintf(line, sizeof(line), "vc\tFALSE\t/\tTRUE\t0\tvmware_soap_session\t%s", big);
    ck_assert_int_eq(vim_pbm_cookie_from_line(line, "vmware_soap_session", buf, sizeof(buf)),
                     VMOP_E_TOOBIG);
}
END_TEST

START_TEST(test_clone_params_profile)
{
    struct vim_moref src = {"VirtualMachine", "vm-1"}, folder = {"Folder", "group-v3"};
    struct vim_moref pool = {"ResourcePool", "resgroup-8"}, ds = {"Datastore", "datastore-2"};
    struct vim_clone_spec cs = {.source = &src,
                                .folder = &folder,
                                .name = "web-1",
                                .pool = &pool,
                                .datastore = &ds,
                                .profile_id = POLICY};
    char *xml = NULL;
    struct vmop_err err = {0};

    ck_assert_int_eq(vim_clone_params_xml(&cs, &xml, &err), VMOP_OK);
    ck_assert_str_eq(xml,
                     "<folder type=\"Folder\">group-v3</folder><name>web-1</name><spec><location>"
                     "<datastore type=\"Datastore\">datastore-2</datastore>"
                     "<pool type=\"ResourcePool\">resgroup-8</pool>"
                     "<profile xsi:type=\"VirtualMachineDefinedProfileSpec\"><profileId>" POLICY
                     "</profileId></profile></location><template>false</template>"
                     "<powerOn>false</powerOn></spec>");
    free(xml);

    /* with the source's disks: a locator each, on the same datastore under the same policy,
     * between host and the VM home's profile (WSDL order) */
    {
        static const int keys[] = {2000, 2001};
        cs.disk_keys = keys;
        cs.n_disk_keys = 2;
        xml = NULL;
        ck_assert_int_eq(vim_clone_params_xml(&cs, &xml, &err), VMOP_OK);
        ck_assert_ptr_nonnull(strstr(
            xml, "<pool type=\"ResourcePool\">resgroup-8</pool>"
                 "<disk><diskId>2000</diskId><datastore type=\"Datastore\">datastore-2</datastore>"
                 "<profile xsi:type=\"VirtualMachineDefinedProfileSpec\"><profileId>" POLICY
                 "</profileId></profile></disk>"
                 "<disk><diskId>2001</diskId><datastore type=\"Datastore\">datastore-2</datastore>"
                 "<profile xsi:type=\"VirtualMachineDefinedProfileSpec\"><profileId>" POLICY
                 "</profileId></profile></disk>"
                 "<profile xsi:type=\"VirtualMachineDefinedProfileSpec\"><profileId>" POLICY
                 "</profileId></profile></location>"));
        free(xml);
        /* no datastore: no locators (a locator needs one) */
        cs.datastore = NULL;
        xml = NULL;
        ck_assert_int_eq(vim_clone_params_xml(&cs, &xml, &err), VMOP_OK);
        ck_assert_ptr_null(strstr(xml, "<disk>"));
        free(xml);
        cs.datastore = &ds;
        cs.n_disk_keys = VIM_MAX_CLONE_DISKS + 1;
        xml = NULL;
        ck_assert_int_eq(vim_clone_params_xml(&cs, &xml, &err), VMOP_E_INVALID);
        ck_assert_ptr_null(xml);
        vmop_err_clear(&err);
        cs.disk_keys = NULL;
        cs.n_disk_keys = 0;
    }

    /* without a policy: no profile element */
    cs.profile_id = NULL;
    xml = NULL;
    ck_assert_int_eq(vim_clone_params_xml(&cs, &xml, &err), VMOP_OK);
    ck_assert_ptr_null(strstr(xml, "profile"));
    free(xml);

    /* escaping, and refusals */
    cs.profile_id = "a<b";
    xml = NULL;
    ck_assert_int_eq(vim_clone_params_xml(&cs, &xml, &err), VMOP_OK);
    ck_assert_ptr_nonnull(strstr(xml, "<profileId>a&lt;b</profileId>"));
    free(xml);
    xml = NULL;
    cs.profile_id = "";
    ck_assert_int_eq(vim_clone_params_xml(&cs, &xml, &err), VMOP_E_INVALID);
    ck_assert_ptr_null(xml);
    cs.profile_id = "a\nb";
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_clone_params_xml(&cs, &xml, &err), VMOP_E_INVALID);
    ck_assert_ptr_null(xml);
}
END_TEST

static Suite *pbm_suite(void)
{
    Suite *s = suite_create("vim_pbm");
    TCase *tc = tcase_create("unit");

    tcase_add_test(tc, test_envelope);
    tcase_add_test(tc, test_service_content);
    tcase_add_test(tc, test_profile);
    tcase_add_test(tc, test_faults);
    tcase_add_test(tc, test_check);
    tcase_add_test(tc, test_check_cap);
    tcase_add_test(tc, test_cookie_line);
    tcase_add_test(tc, test_clone_params_profile);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return vmop_check_run(pbm_suite());
}
