/* test_connections_sim.c: integration tests for operator/vcenter/connections.c against the
 * simulator: one shared client per endpoint, rebuilt when the endpoint or its credentials Secret
 * change, retired clients kept alive for their users, wrong credentials reported as VMOP_E_AUTH,
 * missing Secret keys. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check_main.h"
#include "api_admin.h"
#include "connections.h"
#include "sim_fixture.h"

static struct api_endpoint *endpoint(const char *thumbprint)
{
    char buf[1024];
    cJSON *j;
    struct api_endpoint *ep = NULL;
    struct vmop_err err = {0};
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"infra.vmop.io/v1alpha1\",\"kind\":\"VCenterEndpoint\","
             "\"metadata\":{\"name\":\"vc1\"},\"spec\":{\"server\":\"%s\",\"tls\":{\"thumbprint\":"
             "\"%s\"},\"credentialsSecretRef\":{\"name\":\"creds\"}}}",
             simfx_sim->url, thumbprint);
    j = cJSON_Parse(buf);
    ck_assert_int_eq(api_endpoint_parse(j, &ep, &err), VMOP_OK);
    cJSON_Delete(j);
    return ep;
}

static cJSON *secret(const char *user, const char *pass)
{
    cJSON *s = cJSON_CreateObject(), *sd = cJSON_AddObjectToObject(s, "stringData");
    if (user)
        cJSON_AddStringToObject(sd, "username", user);
    if (pass)
        cJSON_AddStringToObject(sd, "password", pass);
    return s;
}

/* An attachment that counts: each client gets its own state, freed exactly once with it. */
static int attached, detached;

static vmop_rc count_attach(struct vim_client *client, void *arg, void **ret, struct vmop_err *err)
{
    (void)client;
    (void)err;
    ck_assert_ptr_eq(arg, &attached);
    *ret = malloc(1);
    attached++;
    return VMOP_OK;
}

static void count_detach(void *state)
{
    free(state);
    detached++;
}

START_TEST(shared_rebuilt_and_auth)
{
    struct vcenters_opts o = {
        .attachment = {.attach = count_attach, .detach = count_detach, .arg = &attached}};
    struct vcenters *v = NULL;
    struct api_endpoint *ep = endpoint(simfx_sim->thumbprint_sha256);
    cJSON *good = secret(simfx_sim->username, simfx_sim->password),
          *bad = secret(simfx_sim->username, "wrong");
    cJSON *nokey = secret(simfx_sim->username, NULL);
    struct vc_conn *a = NULL, *b = NULL, *c = NULL;
    struct vmop_err err = {0};
    struct vim_stats st;
    uint64_t built = 0;

    ck_assert_int_eq(vcenters_new(&o, &v, &err), VMOP_OK);
    ck_assert_int_eq(vcenters_get(v, ep, good, &a, &err), VMOP_OK);
    ck_assert_int_eq(vim_login(vc_conn_client(a), &err), VMOP_OK);
    ck_assert_ptr_nonnull(vc_conn_attached(a));
    ck_assert_int_eq(attached, 1);
    ck_assert_str_eq(vc_conn_endpoint(a), "vc1");
    /* same inputs: the same connection */
    ck_assert_int_eq(vcenters_get(v, ep, good, &b, &err), VMOP_OK);
    ck_assert_ptr_eq(a, b);
    vc_conn_put(b);
    /* changed password: a new client; the old one stays usable by its holder */
    ck_assert_int_eq(vcenters_get(v, ep, bad, &c, &err), VMOP_OK);
    ck_assert_ptr_ne(a, c);
    ck_assert_int_eq(vim_login(vc_conn_client(c), &err), VMOP_E_AUTH);
    ck_assert_ptr_null(strstr(err.msg, "wrong"));
    vmop_err_clear(&err);
    ck_assert_int_eq(vim_login(vc_conn_client(a), &err), VMOP_OK);
    vc_conn_put(a);
    vc_conn_put(c);
    /* a Secret without the password key, and no Secret at all */
    ck_assert_int_eq(vcenters_get(v, ep, nokey, &a, &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(vcenters_get(v, ep, NULL, &a, &err), VMOP_E_NOT_FOUND);
    vmop_err_clear(&err);
    /* forget: the next get builds again */
    ck_assert_int_eq(vcenters_get(v, ep, good, &a, &err), VMOP_OK);
    vcenters_forget(v, "vc1");
    ck_assert_int_eq(vim_login(vc_conn_client(a), &err), VMOP_OK); /* still alive for its user */
    vc_conn_put(a);
    vcenters_stats(v, &st, &built);
    ck_assert_uint_eq(built, 3);
    ck_assert_uint_ge(st.logins, 2);
    vcenters_free(v);
    ck_assert_int_eq(attached, 3); /* one per client built */
    ck_assert_int_eq(detached, 3); /* each freed with its client */
    api_endpoint_free(ep);
    cJSON_Delete(good);
    cJSON_Delete(bad);
    cJSON_Delete(nokey);
}
END_TEST

int main(void)
{
    static const struct vcsim_opts opts = {.tls = 1,
                                           .no_seed = 1,
                                           .no_guest_ip = 1,
                                           .username = "u@vsphere.local",
                                           .password = "right-pass"};
    Suite *s = suite_create("connections");
    TCase *tc = simfx_tcase(s, "sim", &opts, 120);
    tcase_add_test(tc, shared_rebuilt_and_auth);
    return vmop_check_run_nofork(s);
}
