/* test_vim_pc_fake.c: vimclient's call, session, PropertyCollector and task code against a
 * scripted SOAP endpoint (fake_sdk.c), for what the simulator cannot show: vCenter's paging
 * tokens and missing returnval, tasks that are queued/running for a while (and past the
 * deadline), HTTP 503, plus the exact headers and cookies each request carries. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "test_file.h"
#include "clock.h"
#include "fake_sdk.h"
#include "vim_internal.h"

#define SC                                                                                         \
    "<RetrieveServiceContentResponse xmlns=\"urn:vim25\"><returnval>"                              \
    "<rootFolder type=\"Folder\">group-d1</rootFolder>"                                            \
    "<propertyCollector type=\"PropertyCollector\">propertyCollector</propertyCollector>"          \
    "<viewManager type=\"ViewManager\">ViewManager</viewManager>"                                  \
    "<about><fullName>Fake vCenter 8</fullName><apiVersion>8.0.2.0</apiVersion>"                   \
    "<instanceUuid>fake-uuid</instanceUuid></about>"                                               \
    "<sessionManager type=\"SessionManager\">SessionManager</sessionManager>"                      \
    "<searchIndex type=\"SearchIndex\">SearchIndex</searchIndex></returnval>"                      \
    "</RetrieveServiceContentResponse>"
#define LOGIN                                                                                      \
    "<LoginResponse xmlns=\"urn:vim25\"><returnval><key>k</key><userName>u</userName>"             \
    "</returnval></LoginResponse>"
#define FAULT(type)                                                                                \
    "<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring></faultstring><detail>"     \
    "<" type "Fault xmlns=\"urn:vim25\" xsi:type=\"" type "\"/></detail></soapenv:Fault>"
#define VM_PAGE(vm, name, token)                                                                   \
    "<RetrievePropertiesExResponse xmlns=\"urn:vim25\"><returnval>" token                          \
    "<objects><obj type=\"VirtualMachine\">" vm "</obj><propSet><name>name</name>"                 \
    "<val xsi:type=\"xsd:string\">" name "</val></propSet></objects></returnval>"                  \
    "</RetrievePropertiesExResponse>"
#define TASK_INFO(state, extra)                                                                    \
    "<RetrievePropertiesExResponse xmlns=\"urn:vim25\"><returnval><objects>"                       \
    "<obj type=\"Task\">task-1</obj><propSet><name>info</name><val xsi:type=\"TaskInfo\">"         \
    "<key>task-1</key><name>CloneVM_Task</name><state>" state "</state>" extra "</val>"            \
    "</propSet></objects></returnval></RetrievePropertiesExResponse>"

static struct fake_sdk fake;

static struct vim_client *start(const struct fake_reply *script, size_t n, const char *password,
                                long timeout_ms)
{
    struct vim_config cfg = {.username = "u", .password = password, .timeout_ms = timeout_ms};
    struct vim_client *c = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(fake_sdk_start(&fake, script, n), 0);
    cfg.url = fake.url;
    ck_assert_int_eq(vim_client_new(&cfg, &c, &err), VMOP_OK);
    return c;
}

/* Stops the server and checks the whole script was used as written. */
static void finish(struct vim_client *c, size_t n)
{
    vim_client_free(c);
    fake_sdk_stop(&fake);
    ck_assert_int_eq(fake.mismatches, 0);
    ck_assert_int_eq(fake.next, n);
}

START_TEST(paging_headers_and_cookies)
{
    static const struct fake_reply script[] = {
        {"RetrieveServiceContent", 200, SC},
        {"Login", 200, LOGIN, 0, "vmware_soap_session=s1"},
        {"RetrievePropertiesEx", 200, VM_PAGE("vm-1", "one", "<token>t&amp;1</token>")},
        {"ContinueRetrievePropertiesEx", 200,
         "<ContinueRetrievePropertiesExResponse xmlns=\"urn:vim25\"><returnval><objects>"
         "<obj type=\"VirtualMachine\">vm-2</obj><propSet><name>name</name>"
         "<val xsi:type=\"xsd:string\">two</val></propSet></objects></returnval>"
         "</ContinueRetrievePropertiesExResponse>"},
        {"Logout", 200, "<LogoutResponse xmlns=\"urn:vim25\"/>"},
    };
    static const char *const paths[] = {"name", NULL};
    struct vim_client *c = start(script, 5, "p&w<d", 0);
    struct vim_objects o = {0};
    struct vmop_err err = {0};
    struct vim_moref view;

    vim_moref_set(&view, "ContainerView", "cv-1");
    ck_assert_int_eq(vim_retrieve(c, &view, "VirtualMachine", paths, 1, &o, &err), VMOP_OK);
    ck_assert_int_eq(o.n, 2);
    ck_assert_int_eq(o.n_pages, 2);
    ck_assert_str_eq(o.items[0].ref.value, "vm-1");
    ck_assert_str_eq(o.items[1].ref.value, "vm-2");
    char *name = vim_xml_text(vim_object_prop(&o.items[1], "name"));
    ck_assert_str_eq(name, "two");
    free(name);
    vim_objects_free(&o);
    ck_assert_str_eq(vim_about_api_version(c), "8.0.2.0");
    finish(c, 5);

    const char *login = fake.requests[1], *retr = fake.requests[2], *cont = fake.requests[3];
    ck_assert_ptr_nonnull(strstr(login, "<password>p&amp;w&lt;d</password>"));
    ck_assert_ptr_null(strstr(login, "Cookie:")); /* jar cleared before Login */
    ck_assert_ptr_nonnull(strstr(retr, "Cookie: vmware_soap_session=s1"));
    ck_assert_ptr_nonnull(strcasestr(retr, "SOAPAction: urn:vim25/6.5"));
    ck_assert_ptr_nonnull(strcasestr(retr, "Content-Type: text/xml; charset=utf-8"));
    ck_assert_ptr_null(strcasestr(retr, "Expect:"));
    ck_assert_ptr_nonnull(strstr(retr, "<_this type=\"PropertyCollector\">propertyCollector"));
    ck_assert_ptr_nonnull(strstr(retr, "<obj type=\"ContainerView\">cv-1</obj><skip>true</skip>"
                                       "<selectSet xsi:type=\"TraversalSpec\">"));
    ck_assert_ptr_nonnull(strstr(retr, "<propSet><type>VirtualMachine</type><pathSet>name"));
    ck_assert_ptr_nonnull(strstr(cont, "<token>t&amp;1</token>"));
    fake_sdk_free(&fake);
}
END_TEST

START_TEST(no_returnval_is_empty)
{
    static const struct fake_reply script[] = {
        {"RetrieveServiceContent", 200, SC},
        {"Login", 200, LOGIN},
        {"RetrievePropertiesEx", 200, "<RetrievePropertiesExResponse xmlns=\"urn:vim25\"/>"},
        {"Logout", 200, "<LogoutResponse xmlns=\"urn:vim25\"/>"},
    };
    struct vim_client *c = start(script, 4, "pw", 0);
    struct vim_objects o = {0};
    struct vmop_err err = {0};
    struct vim_moref view;
    vim_moref_set(&view, "ContainerView", "cv-1");
    ck_assert_int_eq(vim_retrieve(c, &view, "VirtualMachine", NULL, 1, &o, &err), VMOP_OK);
    ck_assert_int_eq(o.n, 0);
    vim_objects_free(&o);
    finish(c, 4);
    ck_assert_ptr_nonnull(strstr(fake.requests[2], "<all>true</all>"));
    fake_sdk_free(&fake);
}
END_TEST

START_TEST(relogin_after_not_authenticated)
{
    static const struct fake_reply script[] = {
        {"RetrieveServiceContent", 200, SC},
        {"Login", 200, LOGIN, 0, "vmware_soap_session=s1"},
        {"CreateContainerView", 500, FAULT("NotAuthenticated")},
        {"Login", 200, LOGIN, 0, "vmware_soap_session=s2"},
        {"CreateContainerView", 200,
         "<CreateContainerViewResponse xmlns=\"urn:vim25\"><returnval type=\"ContainerView\">"
         "cv-9</returnval></CreateContainerViewResponse>"},
        /* expired again and the re-login is refused: a clear error, no loop */
        {"CreateContainerView", 500, FAULT("NotAuthenticated")},
        {"Login", 500, FAULT("InvalidLogin")},
    };
    struct vim_client *c = start(script, 7, "Pa55word!", 0);
    struct vmop_err err = {0};
    struct vim_moref folder, view;
    struct vim_stats st;

    vim_moref_set(&folder, "Folder", "group-d1");
    ck_assert_int_eq(vim_view_create(c, &folder, "VirtualMachine", &view, &err), VMOP_OK);
    ck_assert_str_eq(view.value, "cv-9");
    vim_client_stats(c, &st);
    ck_assert_int_eq(st.logins, 2);
    ck_assert_int_eq(st.relogins, 1);

    ck_assert_int_eq(vim_view_create(c, &folder, "VirtualMachine", &view, &err), VMOP_E_AUTH);
    ck_assert_str_eq(err.fault, "InvalidLogin");
    ck_assert_ptr_null(strstr(err.msg, "Pa55word!"));
    vim_client_free(c);
    fake_sdk_stop(&fake);
    ck_assert_int_eq(fake.mismatches, 0);
    ck_assert_int_eq(fake.next, 7);
    ck_assert_ptr_null(strstr(fake.requests[3], "Cookie:"));
    ck_assert_ptr_nonnull(strstr(fake.requests[4], "Cookie: vmware_soap_session=s2"));
    ck_assert_ptr_null(strstr(fake.requests[4], "s1"));
    fake_sdk_free(&fake);
}
END_TEST

START_TEST(task_queued_running_success)
{
    static const struct fake_reply script[] = {
        {"RetrieveServiceContent", 200, SC},
        {"Login", 200, LOGIN},
        {"RetrievePropertiesEx", 200, TASK_INFO("queued", "")},
        {"RetrievePropertiesEx", 200, TASK_INFO("running", "<progress>40</progress>")},
        {"RetrievePropertiesEx", 200,
         TASK_INFO("success", "<result xsi:type=\"ManagedObjectReference\" "
                              "type=\"VirtualMachine\">vm-77</result>")},
        {"Logout", 200, "<LogoutResponse xmlns=\"urn:vim25\"/>"},
    };
    struct vim_client *c = start(script, 6, "pw", 0);
    struct vmop_err err = {0};
    struct vim_moref task, result;
    long long t0 = vmop_test_now_ms();

    vim_moref_set(&task, "Task", "task-1");
    ck_assert_int_eq(vim_task_wait(c, &task, 10000, &result, &err), VMOP_OK);
    ck_assert_str_eq(result.type, "VirtualMachine");
    ck_assert_str_eq(result.value, "vm-77");
    ck_assert_int_ge(vmop_test_now_ms() - t0, 150); /* backed off 50 + 100 ms between reads */
    finish(c, 6);
    fake_sdk_free(&fake);
}
END_TEST

START_TEST(task_deadline)
{
    static const struct fake_reply script[] = {
        {"RetrieveServiceContent", 200, SC},
        {"Login", 200, LOGIN},
        {"RetrievePropertiesEx", 200, TASK_INFO("running", "")},
        {"RetrievePropertiesEx", 200, TASK_INFO("running", "")},
        {"RetrievePropertiesEx", 200, TASK_INFO("running", "")},
        {"RetrievePropertiesEx", 200, TASK_INFO("running", "")},
        {"RetrievePropertiesEx", 200, TASK_INFO("running", "")},
        {"RetrievePropertiesEx", 200, TASK_INFO("running", "")},
    };
    struct vim_client *c = start(script, 8, "pw", 0);
    struct vmop_err err = {0};
    struct vim_moref task;
    long long t0 = vmop_test_now_ms(), took;

    vim_moref_set(&task, "Task", "task-1");
    ck_assert_int_eq(vim_task_wait(c, &task, 300, NULL, &err), VMOP_E_TIMEOUT);
    took = vmop_test_now_ms() - t0;
    ck_assert_int_ge(took, 300);
    ck_assert_int_lt(took, 1500);
    ck_assert_ptr_nonnull(strstr(err.msg, "task task-1 still running after 300 ms"));
    vim_client_free(c); /* its Logout is not in the script: answered with a fault, ignored */
    fake_sdk_stop(&fake);
    ck_assert_int_ge(fake.next, 4);
    fake_sdk_free(&fake);
}
END_TEST

START_TEST(task_error_from_real_vc)
{
    static const struct fake_reply script[] = {
        {"RetrieveServiceContent", 200, SC},
        {"Login", 200, LOGIN},
        {"RetrievePropertiesEx", 200,
         TASK_INFO("error",
                   "<error><fault xsi:type=\"InsufficientResourcesFault\">"
                   "<unreserved>100</unreserved><requested>2000</requested></fault>"
                   "<localizedMessage>Insufficient resources.</localizedMessage></error>")},
        {"Logout", 200, "<LogoutResponse xmlns=\"urn:vim25\"/>"},
    };
    struct vim_client *c = start(script, 4, "pw", 0);
    struct vmop_err err = {0};
    struct vim_moref task;

    vim_moref_set(&task, "Task", "task-1");
    ck_assert_int_eq(vim_task_wait(c, &task, 0, NULL, &err), VMOP_E_FAULT);
    ck_assert_str_eq(err.fault, "InsufficientResourcesFault");
    ck_assert_str_eq(err.msg, "task task-1 (CloneVM_Task) failed: InsufficientResourcesFault: "
                              "Insufficient resources. (unreserved=100, requested=2000)");
    finish(c, 4);
    fake_sdk_free(&fake);
}
END_TEST

START_TEST(http_errors)
{
    static const struct fake_reply script[] = {
        {"RetrieveServiceContent", 200, SC},
        {"Login", 200, LOGIN},
        {"CurrentTime", 503, "", 1},
        {"CurrentTime", 500, "<html>oops</html>", 1},
        {"CurrentTime", 200, "<not-soap/>", 1},
        {"Logout", 200, "<LogoutResponse xmlns=\"urn:vim25\"/>"},
    };
    struct vim_client *c = start(script, 6, "pw", 0);
    struct vmop_err err = {0};
    static const struct vim_moref si = {"ServiceInstance", "ServiceInstance"};

    ck_assert_int_eq(vim_soap_call(c, "CurrentTime", &si, NULL, VIM_RET_REQUIRED, NULL, &err),
                     VMOP_E_HTTP);
    ck_assert_int_eq(err.http_status, 503);
    ck_assert_ptr_nonnull(strstr(err.msg, "HTTP 503"));
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_soap_call(c, "CurrentTime", &si, NULL, VIM_RET_REQUIRED, NULL, &err),
                     VMOP_E_HTTP);
    ck_assert_int_eq(err.http_status, 500);
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_soap_call(c, "CurrentTime", &si, NULL, VIM_RET_REQUIRED, NULL, &err),
                     VMOP_E_PROTO);
    finish(c, 6);
    fake_sdk_free(&fake);
}
END_TEST

START_TEST(missing_set_relogin_recorded)
{
    /* the simulator's recorded missingSet form, then a working retry */
    static struct fake_reply script[] = {
        {"RetrieveServiceContent", 200, SC},
        {"Login", 200, LOGIN, 0, "vmware_soap_session=s1"},
        {"RetrievePropertiesEx", 200, NULL, 1},
        {"Login", 200, LOGIN, 0, "vmware_soap_session=s2"},
        {"RetrievePropertiesEx", 200, VM_PAGE("vm-63", "DC0_C0_RP0_VM0", "")},
        {"Logout", 200, "<LogoutResponse xmlns=\"urn:vim25\"/>"},
    };
    const char *dir = getenv("VMOP_TESTDATA");
    char *body =
        vmop_test_slurpf(NULL, "%s/vim/retrieve_missingset_notauth.xml", dir ? dir : "testdata");
    script[2].body = body;

    static const char *const paths[] = {"name", "runtime.powerState", NULL};
    struct vim_client *c = start(script, 6, "pw", 0);
    struct vim_objects o = {0};
    struct vmop_err err = {0};
    struct vim_moref vm;
    struct vim_stats st;
    vim_moref_set(&vm, "VirtualMachine", "vm-63");
    ck_assert_int_eq(vim_retrieve(c, &vm, NULL, paths, 0, &o, &err), VMOP_OK);
    ck_assert_int_eq(o.n, 1);
    vim_objects_free(&o);
    vim_client_stats(c, &st);
    ck_assert_int_eq(st.relogins, 1);
    finish(c, 6);
    fake_sdk_free(&fake);
    script[2].body = NULL;
    free(body);
}
END_TEST

static Suite *pc_fake_suite(void)
{
    Suite *s = suite_create("vim_pc_fake");
    TCase *tc = tcase_create("fake");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, paging_headers_and_cookies);
    tcase_add_test(tc, no_returnval_is_empty);
    tcase_add_test(tc, relogin_after_not_authenticated);
    tcase_add_test(tc, task_queued_running_success);
    tcase_add_test(tc, task_deadline);
    tcase_add_test(tc, task_error_from_real_vc);
    tcase_add_test(tc, http_errors);
    tcase_add_test(tc, missing_set_relogin_recorded);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return vmop_check_run(pc_fake_suite());
}
