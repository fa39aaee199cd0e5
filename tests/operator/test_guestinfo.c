/* test_guestinfo.c: unit tests for operator/vm/guestinfo.c (metadata, codecs, user data). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check_main.h"
#include "guestinfo.h"

static const char *const addrs[] = {"192.168.10.5/24"};
static const char *const dns[] = {"192.168.10.1", "8.8.8.8"};
static const char *const search[] = {"example.org"};
static const char *const keys[] = {"ssh-ed25519 AAAA one", "ssh-rsa BBBB two"};

static void sample_meta(struct gi_meta *m, struct gi_iface *f)
{
    memset(f, 0, sizeof(*f));
    f->name = "eth0";
    f->mac = "00:50:56:AA:BB:CC";
    f->addresses = addrs;
    f->n_addresses = 1;
    f->gateway4 = "192.168.10.1";
    f->nameservers = dns;
    f->n_nameservers = 2;
    f->search = search;
    f->n_search = 1;
    f->mtu = 1500;
    memset(m, 0, sizeof(*m));
    m->instance_id = "5a1b6a4e-2f1d-4a8e-9c3b-1d2e3f4a5b6c";
    m->hostname = "web-0.example.org";
    m->public_keys = keys;
    m->n_public_keys = 2;
    m->wait_on_network4 = -1;
    m->wait_on_network6 = -1;
    m->ifaces = f;
    m->n_ifaces = 1;
}

START_TEST(metadata_document)
{
    struct gi_meta m;
    struct gi_iface f;
    struct vmop_err err = {0};
    char *json = NULL;
    sample_meta(&m, &f);
    ck_assert_int_eq(gi_metadata_json(&m, &json, &err), VMOP_OK);
    cJSON *doc = cJSON_Parse(json);
    ck_assert_ptr_nonnull(doc);
    ck_assert_str_eq(cJSON_GetObjectItem(doc, "instance-id")->valuestring, m.instance_id);
    ck_assert_str_eq(cJSON_GetObjectItem(doc, "local-hostname")->valuestring, "web-0.example.org");
    ck_assert_str_eq(cJSON_GetObjectItem(doc, "public-keys")->valuestring,
                     "ssh-ed25519 AAAA one\nssh-rsa BBBB two");
    ck_assert_ptr_null(cJSON_GetObjectItem(doc, "wait-on-network"));
    cJSON *eth0 = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "network"), "ethernets"), "eth0");
    ck_assert_ptr_nonnull(eth0);
    ck_assert_str_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(eth0, "match"), "macaddress")->valuestring,
        "00:50:56:aa:bb:cc");
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(eth0, "dhcp4")));
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(eth0, "addresses"), 0)->valuestring,
                     "192.168.10.5/24");
    ck_assert_str_eq(cJSON_GetObjectItem(eth0, "gateway4")->valuestring, "192.168.10.1");
    ck_assert_int_eq(cJSON_GetObjectItem(eth0, "mtu")->valueint, 1500);
    cJSON_Delete(doc);
    free(json);

    f.gateway4 = "None"; /* suppresses the gateway */
    f.dhcp4 = 1;
    f.n_addresses = 0;
    m.wait_on_network4 = 1;
    ck_assert_int_eq(gi_metadata_json(&m, &json, &err), VMOP_OK);
    ck_assert_ptr_null(strstr(json, "gateway4"));
    ck_assert_ptr_nonnull(strstr(json, "\"dhcp4\":true"));
    ck_assert_ptr_nonnull(strstr(json, "\"wait-on-network\":{\"ipv4\":true,\"ipv6\":false}"));
    free(json);
}
END_TEST

START_TEST(metadata_rejects_missing_fields)
{
    struct gi_meta m;
    struct gi_iface f[2];
    struct vmop_err err = {0};
    char *json = NULL;
    sample_meta(&m, &f[0]);
    m.instance_id = "";
    ck_assert_int_eq(gi_metadata_json(&m, &json, &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "instance-id"));
    sample_meta(&m, &f[0]);
    f[1] = f[0];
    m.n_ifaces = 2;
    vmop_err_clear(&err);
    ck_assert_int_eq(gi_metadata_json(&m, &json, &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "eth0"));
}
END_TEST

START_TEST(gzip_base64_round_trip)
{
    struct vmop_err err = {0};
    const char *text = "#cloud-config\nusers:\n  - name: ops & <admins>\n";
    char *enc = NULL, *dec = NULL;
    size_t n = 0;
    ck_assert_int_eq(gi_encode_gzip_base64(text, strlen(text), &enc, &err), VMOP_OK);
    ck_assert_ptr_null(strchr(enc, '\n'));
    ck_assert_int_eq(gi_decode(enc, "gzip+base64", &dec, &n, &err), VMOP_OK);
    ck_assert_uint_eq(n, strlen(text));
    ck_assert_str_eq(dec, text);
    free(dec);
    ck_assert_int_eq(gi_decode("aGVsbG8=", "base64", &dec, &n, &err), VMOP_OK);
    ck_assert_str_eq(dec, "hello");
    free(dec);
    ck_assert_int_eq(gi_decode("plain", "", &dec, &n, &err), VMOP_OK);
    ck_assert_str_eq(dec, "plain");
    free(dec);
    ck_assert_int_eq(gi_decode("x", "rot13", &dec, &n, &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(gi_decode("not base64!", "base64", &dec, &n, &err), VMOP_E_INVALID);
    free(enc);
}
END_TEST

START_TEST(userdata_forms)
{
    struct vmop_err err = {0};
    const char *text = "#cloud-config\nruncmd:\n  - echo hi\n";
    char *b64 = NULL, *gzb64 = NULL, *plain = NULL;
    size_t n = 0;
    /* plain */
    ck_assert_int_eq(gi_userdata_normalize(text, strlen(text), &plain, &n, &err), VMOP_OK);
    ck_assert_str_eq(plain, text);
    free(plain);
    /* base64 with a line break in it */
    b64 = strdup("I2Nsb3VkLWNvbmZpZwpydW5jbWQ6CiAgLSBl\nY2hvIGhpCg==");
    ck_assert_int_eq(gi_userdata_normalize(b64, strlen(b64), &plain, &n, &err), VMOP_OK);
    ck_assert_str_eq(plain, text);
    free(plain);
    /* gzip+base64 */
    ck_assert_int_eq(gi_encode_gzip_base64(text, strlen(text), &gzb64, &err), VMOP_OK);
    ck_assert_int_eq(gi_userdata_normalize(gzb64, strlen(gzb64), &plain, &n, &err), VMOP_OK);
    ck_assert_str_eq(plain, text);
    free(plain);
    /* base64 of something that claims to be gzip but is not */
    ck_assert_int_eq(gi_userdata_normalize("H4sIAAAA", 8, &plain, &n, &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "gzip"));
    free(b64);
    free(gzb64);
}
END_TEST

START_TEST(userdata_limits)
{
    struct vmop_err err = {0};
    size_t big = GI_MAX_USERDATA + 1;
    char *data = malloc(big), *plain = NULL, *bomb = NULL;
    size_t n = 0;
    memset(data, '#', big);
    ck_assert_int_eq(gi_userdata_normalize(data, big, &plain, &n, &err), VMOP_E_TOOBIG);
    /* a small gzip that inflates past the limit is refused, not inflated */
    vmop_err_clear(&err);
    ck_assert_int_eq(gi_encode_gzip_base64(data, big, &bomb, &err), VMOP_OK);
    ck_assert_uint_lt(strlen(bomb), 4096);
    ck_assert_int_eq(gi_userdata_normalize(bomb, strlen(bomb), &plain, &n, &err), VMOP_E_TOOBIG);
    free(bomb);
    free(data);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("guestinfo");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, metadata_document);
    tcase_add_test(tc, metadata_rejects_missing_fields);
    tcase_add_test(tc, gzip_base64_round_trip);
    tcase_add_test(tc, userdata_forms);
    tcase_add_test(tc, userdata_limits);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
