/* test_ippool.c: unit tests for operator/vm/ippool.c and the ipv4Pool part of api/api_admin.c: pool
 * validation errors (field paths), picks (gateway/network/broadcast skipped, deterministic,
 * exhaustion), annotations, the per-VM view (explicit / dhcp / pool interfaces), and the
 * reservation table (8 threads x 100 allocations, restart from annotations, release, settle). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check_main.h"
#include "ippool.h"

#define NET_PREFIX                                                                                 \
    "{\"metadata\":{\"name\":\"vsphere\",\"namespace\":\"tenant-a\"},\"spec\":{"                   \
    "\"endpointRef\":{\"name\":\"vc1\"},\"resourcePool\":\"/DC0/host/C0/Resources\","              \
    "\"vmFolder\":\"/DC0/vm/tenant-a\",\"defaultNetwork\":\"tenant-net\",\"networks\":["

/* A binding whose "tenant-net" has the given ipv4Pool JSON (and "plain" has none). */
static struct api_binding *binding_with_pool(const char *pool)
{
    char text[4096];
    struct api_binding *b = NULL;
    struct vmop_err err = {0};
    cJSON *j;
    snprintf(text, sizeof(text),
             NET_PREFIX "{\"name\":\"tenant-net\",\"portGroup\":\"DC0_DVPG0\",\"ipv4Pool\":%s},"
                        "{\"name\":\"plain\",\"portGroup\":\"pg2\"}]}}",
             pool);
    j = cJSON_Parse(text);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(api_binding_parse(j, &b, &err), VMOP_OK);
    cJSON_Delete(j);
    return b;
}

static void validate(const struct api_binding *b, struct api_ferrs *fe)
{
    memset(fe, 0, sizeof(*fe));
    api_binding_validate(b, fe);
}

#define POOL0 "spec.networks[0].ipv4Pool"

static const char *good_pool = "{\"ranges\":[{\"start\":\"192.168.10.100\",\"end\":\"192.168."
                               "10.199\"}],\"prefix\":24,\"gateway\":\"192.168.10.1\","
                               "\"nameservers\":[\"192.168.10.2\",\"2001:db8::53\"],"
                               "\"searchDomains\":[\"example.org\"]}";

START_TEST(pool_parse_ok)
{
    struct api_binding *b = binding_with_pool(good_pool);
    struct api_ferrs fe;
    const struct api_ipv4_pool *p;
    validate(b, &fe);
    ck_assert_uint_eq(fe.n, 0);
    p = api_binding_ipv4_pool(b, NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_eq(p, api_binding_ipv4_pool(b, "tenant-net"));
    ck_assert_ptr_null(api_binding_ipv4_pool(b, "plain"));
    ck_assert_ptr_null(api_binding_ipv4_pool(b, "nope"));
    ck_assert_uint_eq(p->n_ranges, 1);
    ck_assert_uint_eq(p->ranges[0].start, 0xc0a80a64u);
    ck_assert_uint_eq(p->ranges[0].end, 0xc0a80ac7u);
    ck_assert_int_eq(p->prefix, 24);
    ck_assert(p->gateway_ok);
    ck_assert_uint_eq(p->n_nameservers, 2);
    ck_assert_str_eq(p->search_domains[0], "example.org");
    ck_assert_uint_eq(ippool_usable(p), 100);
    api_binding_free(b);
}
END_TEST

/* Each bad pool must produce an error on exactly the expected field. */
static const struct {
    const char *pool, *field;
} bad_pools[] = {
    {"{\"ranges\":[{\"start\":\"10.0.0.5\",\"end\":\"10.0.0.9\"}]}", POOL0 ".prefix"},
    {"{\"ranges\":[{\"start\":\"10.0.0.5\",\"end\":\"10.0.0.9\"}],\"prefix\":33}", POOL0 ".prefix"},
    {"{\"ranges\":[{\"start\":\"10.0.0.5\",\"end\":\"10.0.0.9\"}],\"prefix\":-1}", POOL0 ".prefix"},
    {"{\"prefix\":24}", POOL0 ".ranges"},
    {"{\"ranges\":[],\"prefix\":24}", POOL0 ".ranges"},
    {"{\"ranges\":[{\"start\":\"10.0.0.x\",\"end\":\"10.0.0.9\"}],\"prefix\":24}",
     POOL0 ".ranges[0].start"},
    {"{\"ranges\":[{\"start\":\"10.0.0.5\",\"end\":\"fe80::1\"}],\"prefix\":24}",
     POOL0 ".ranges[0].end"},
    {"{\"ranges\":[{\"start\":\"10.0.0.5\"}],\"prefix\":24}", POOL0 ".ranges[0].end"},
    {"{\"ranges\":[{\"start\":\"10.0.0.9\",\"end\":\"10.0.0.5\"}],\"prefix\":24}",
     POOL0 ".ranges[0]"},
    {"{\"ranges\":[{\"start\":\"10.0.0.5\",\"end\":\"10.0.1.5\"}],\"prefix\":24}",
     POOL0 ".ranges[0]"},
    {"{\"ranges\":[{\"start\":\"10.0.0.5\",\"end\":\"10.0.0.9\"}],\"prefix\":24,"
     "\"gateway\":\"10.0.1.1\"}",
     POOL0 ".ranges[0]"},
    {"{\"ranges\":[{\"start\":\"10.0.0.5\",\"end\":\"10.0.0.9\"},{\"start\":\"10.0.0.9\","
     "\"end\":\"10.0.0.20\"}],\"prefix\":24}",
     POOL0 ".ranges[1]"},
    {"{\"ranges\":[{\"start\":\"10.0.0.5\",\"end\":\"10.0.0.9\"}],\"prefix\":24,"
     "\"gateway\":\"10.0.0\"}",
     POOL0 ".gateway"},
    {"{\"ranges\":[{\"start\":\"10.0.0.5\",\"end\":\"10.0.0.9\"}],\"prefix\":24,"
     "\"gateway\":\"10.0.0.255\"}",
     POOL0 ".gateway"},
    {"{\"ranges\":[{\"start\":\"10.0.0.5\",\"end\":\"10.2.0.9\"}],\"prefix\":8}", POOL0 ".ranges"},
    {"{\"ranges\":[{\"start\":\"10.0.0.5\",\"end\":\"10.0.0.9\"}],\"prefix\":24,"
     "\"nameservers\":[\"dns.example\"]}",
     POOL0 ".nameservers[0]"},
    {"{\"ranges\":[{\"start\":\"10.0.0.5\",\"end\":\"10.0.0.9\"}],\"prefix\":24,"
     "\"nameservers\":[1]}",
     POOL0 ".nameservers[0]"},
    {"{\"ranges\":[{\"start\":\"10.0.0.5\",\"end\":\"10.0.0.9\"}],\"prefix\":24,"
     "\"searchDomains\":[\"bad domain\"]}",
     POOL0 ".searchDomains[0]"},
    {"{\"ranges\":[{\"start\":\"10.0.0.5\",\"end\":\"10.0.0.9\"}],\"prefix\":\"24\"}",
     POOL0 ".prefix"},
};

START_TEST(pool_parse_errors)
{
    struct api_binding *b = binding_with_pool(bad_pools[_i].pool);
    struct api_ferrs fe;
    struct vmop_err err = {0};
    validate(b, &fe);
    if (api_ferrs_find(&fe, bad_pools[_i].field) < 0) {
        struct vbuf out = {0};
        vbuf_init(&out, 4096);
        api_ferrs_format(&fe, &out);
        ck_abort_msg("pool %d: no error on %s; got: %s", _i, bad_pools[_i].field, vbuf_str(&out));
        vbuf_free(&out);
    }
    ck_assert_int_eq(api_ferrs_result(&fe, &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "ipv4Pool"));
    api_binding_free(b);
}
END_TEST

START_TEST(pool_too_many_ranges)
{
    char pool[4096];
    size_t off = 0;
    struct api_binding *b;
    struct api_ferrs fe;
    off += (size_t)snprintf(pool + off, sizeof(pool) - off, "{\"prefix\":16,\"ranges\":[");
    for (int i = 0; i < API_IPV4_POOL_MAX_RANGES + 1; i++)
        off += (size_t)snprintf(pool + off, sizeof(pool) - off,
                                "%s{\"start\":\"10.0.%d.1\",\"end\":\"10.0.%d.9\"}", i ? "," : "",
                                i, i);
    snprintf(pool + off, sizeof(pool) - off, "]}");
    b = binding_with_pool(pool);
    validate(b, &fe);
    ck_assert_int_ge(api_ferrs_find(&fe, POOL0 ".ranges"), 0);
    ck_assert_uint_eq(b->networks[0].ipv4_pool.n_ranges, API_IPV4_POOL_MAX_RANGES);
    api_binding_free(b);
}
END_TEST

static const char *fmt(uint32_t a, char *buf)
{
    return api_ipv4_format(a, buf, IPPOOL_ADDR_MAX);
}

START_TEST(pick_skips_reserved)
{
    /* The whole /29: .0 network, .7 broadcast, .1 gateway; usable .2 .. .6 */
    struct api_binding *b = binding_with_pool(
        "{\"ranges\":[{\"start\":\"10.1.0.0\",\"end\":\"10.1.0.7\"}],\"prefix\":29,"
        "\"gateway\":\"10.1.0.1\"}");
    const struct api_ipv4_pool *p = api_binding_ipv4_pool(b, NULL);
    struct ippool_set used = {0};
    struct vmop_err err = {0};
    char buf[IPPOOL_ADDR_MAX];
    uint32_t a;
    ck_assert_uint_eq(ippool_usable(p), 5);
    for (int i = 2; i <= 6; i++) {
        ck_assert_int_eq(ippool_pick(p, &used, 0, &a, &err), VMOP_OK);
        {
            char want[IPPOOL_ADDR_MAX];
            snprintf(want, sizeof(want), "10.1.0.%d", i);
            ck_assert_str_eq(fmt(a, buf), want);
        }
        ck_assert_int_eq(ippool_set_add(&used, a, &err), VMOP_OK);
    }
    /* every hint also lands only on usable addresses */
    for (uint32_t h = 0; h < 64; h++) {
        struct ippool_set none = {0};
        ck_assert_int_eq(ippool_pick(p, &none, h, &a, &err), VMOP_OK);
        ck_assert(a >= 0x0a010002u && a <= 0x0a010006u);
    }
    /* exhausted */
    ck_assert_int_eq(ippool_pick(p, &used, 3, &a, &err), VMOP_E_NOT_FOUND);
    ck_assert(vmop_err_is_fault(&err, IPPOOL_REASON_EXHAUSTED));
    ck_assert_ptr_nonnull(strstr(err.msg, "exhausted"));
    ippool_set_free(&used);
    api_binding_free(b);
}
END_TEST

START_TEST(pick_small_prefixes)
{
    /* /31 and /32: no network/broadcast to skip */
    struct api_binding *b =
        binding_with_pool("{\"ranges\":[{\"start\":\"10.9.9.8\",\"end\":\"10.9.9.9\"}],"
                          "\"prefix\":31}");
    const struct api_ipv4_pool *p = api_binding_ipv4_pool(b, NULL);
    struct vmop_err err = {0};
    uint32_t a;
    ck_assert_uint_eq(ippool_usable(p), 2);
    ck_assert_int_eq(ippool_pick(p, NULL, 0, &a, &err), VMOP_OK);
    ck_assert_uint_eq(a, 0x0a090908u);
    api_binding_free(b);
    b = binding_with_pool("{\"ranges\":[{\"start\":\"10.9.9.8\",\"end\":\"10.9.9.8\"}],"
                          "\"prefix\":32}");
    p = api_binding_ipv4_pool(b, NULL);
    ck_assert_int_eq(ippool_pick(p, NULL, 77, &a, &err), VMOP_OK);
    ck_assert_uint_eq(a, 0x0a090908u);
    api_binding_free(b);
}
END_TEST

START_TEST(pick_deterministic_multi_range)
{
    struct api_binding *b =
        binding_with_pool("{\"ranges\":[{\"start\":\"172.16.0.10\",\"end\":\"172.16.0.12\"},"
                          "{\"start\":\"172.16.1.250\",\"end\":\"172.16.2.1\"}],\"prefix\":16,"
                          "\"gateway\":\"172.16.0.1\"}");
    const struct api_ipv4_pool *p = api_binding_ipv4_pool(b, NULL);
    struct ippool_set used = {0};
    struct vmop_err err = {0};
    uint32_t a, a2;
    struct api_ferrs fe;
    validate(b, &fe);
    ck_assert_uint_eq(fe.n, 0);
    ck_assert_uint_eq(ippool_usable(p), 3 + 8);
    /* same inputs, same answer */
    uint32_t h = ippool_hint("tenant-a/web-0", "eth0");
    ck_assert_uint_eq(h, ippool_hint("tenant-a/web-0", "eth0"));
    ck_assert_uint_ne(h, ippool_hint("tenant-a/web-1", "eth0"));
    ck_assert_int_eq(ippool_pick(p, NULL, h, &a, &err), VMOP_OK);
    ck_assert_int_eq(ippool_pick(p, NULL, h, &a2, &err), VMOP_OK);
    ck_assert_uint_eq(a, a2);
    /* hint 3 starts in the second range; with it used, the next one follows */
    ck_assert_int_eq(ippool_pick(p, NULL, 3, &a, &err), VMOP_OK);
    ck_assert_uint_eq(a, 0xac1001fau); /* 172.16.1.250 */
    ck_assert_int_eq(ippool_set_add(&used, a, &err), VMOP_OK);
    ck_assert_int_eq(ippool_pick(p, &used, 3, &a, &err), VMOP_OK);
    ck_assert_uint_eq(a, 0xac1001fbu);
    /* the wrap-around at the end of the list goes back to the first range */
    ck_assert_int_eq(ippool_pick(p, NULL, 10, &a, &err), VMOP_OK);
    ck_assert_uint_eq(a, 0xac100201u); /* 172.16.2.1 */
    ck_assert_int_eq(ippool_set_add(&used, a, &err), VMOP_OK);
    ck_assert_int_eq(ippool_pick(p, &used, 10, &a, &err), VMOP_OK);
    ck_assert_uint_eq(a, 0xac10000au); /* 172.16.0.10 */
    ippool_set_free(&used);
    api_binding_free(b);
}
END_TEST

START_TEST(pick_invalid_pool)
{
    struct api_binding *b =
        binding_with_pool("{\"ranges\":[{\"start\":\"10.0.0.9\",\"end\":\"10.0.0.1\"}],"
                          "\"prefix\":24}");
    struct vmop_err err = {0};
    uint32_t a = 42;
    ck_assert_int_eq(ippool_pick(api_binding_ipv4_pool(b, NULL), NULL, 0, &a, &err),
                     VMOP_E_INVALID);
    ck_assert_uint_eq(a, 42);
    api_binding_free(b);
}
END_TEST

START_TEST(annotations)
{
    char key[IPPOOL_KEY_MAX], val[IPPOOL_VALUE_MAX], net[API_NAME_MAX];
    char longname[80];
    struct vmop_err err = {0};
    uint32_t a;
    int prefix;
    ck_assert_int_eq(ippool_annotation_key("eth0", key, &err), VMOP_OK);
    ck_assert_str_eq(key, "infra.vmop.io/ipv4.eth0");
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    ck_assert_int_eq(ippool_annotation_key(longname, key, &err), VMOP_E_INVALID);
    longname[IPPOOL_IFACE_MAX] = '\0';
    ck_assert_int_eq(ippool_annotation_key(longname, key, NULL), VMOP_OK);
    ck_assert_uint_eq(strlen(key) - strlen("infra.vmop.io/"), 63);
    ck_assert_int_eq(ippool_annotation_value("tenant-net", 0xc0a80a65u, 24, val, &err), VMOP_OK);
    ck_assert_str_eq(val, "tenant-net:192.168.10.101/24");
    ck_assert_int_eq(ippool_annotation_parse(val, net, &a, &prefix, &err), VMOP_OK);
    ck_assert_str_eq(net, "tenant-net");
    ck_assert_uint_eq(a, 0xc0a80a65u);
    ck_assert_int_eq(prefix, 24);
    {
        const char *keys[] = {"infra.vmop.io/ipv4.eth0"}, *vals[] = {"tenant-net:10.0.0.5/24"};
        cJSON *patch = NULL;
        char *text;
        ck_assert_int_eq(ippool_annotation_patch("", keys, vals, 1, &patch, &err), VMOP_E_INVALID);
        vmop_err_clear(&err);
        ck_assert_int_eq(ippool_annotation_patch("42", keys, vals, 1, &patch, &err), VMOP_OK);
        text = cJSON_PrintUnformatted(patch);
        ck_assert_str_eq(text, "{\"metadata\":{\"annotations\":{\"infra.vmop.io/ipv4.eth0\":"
                               "\"tenant-net:10.0.0.5/24\"},\"resourceVersion\":\"42\"}}");
        free(text);
        cJSON_Delete(patch);
    }
    static const char *bad[] = {"",
                                "tenant-net",
                                "tenant-net:192.168.10.101",
                                ":192.168.10.101/24",
                                "n:192.168.10.101/",
                                "n:192.168.10.101/33",
                                "n:192.168.10.101/2x",
                                "n:192.168.10.1011/24",
                                "n:/24",
                                "n:1.2.3.4/024"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(ippool_annotation_parse(bad[i], net, &a, &prefix, NULL) == VMOP_E_INVALID,
                      "accepted \"%s\"", bad[i]);
}
END_TEST

static struct api_vm *vm_from(const char *text)
{
    struct api_vm *vm = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(api_vm_parse_text(text, strlen(text), &vm, &err), VMOP_OK);
    return vm;
}

START_TEST(vm_nics_mixed)
{
    struct api_binding *b = binding_with_pool(good_pool);
    struct api_vm *vm =
        vm_from("{\"metadata\":{\"name\":\"web-0\",\"namespace\":\"tenant-a\",\"annotations\":{"
                "\"infra.vmop.io/ipv4.eth1\":\"tenant-net:192.168.10.150/24\","
                "\"infra.vmop.io/ipv4.eth4\":\"backend:10.0.0.5/24\"}},"
                "\"spec\":{\"bootstrap\":{\"cloudInit\":{}},\"network\":{\"interfaces\":["
                "{\"name\":\"eth0\",\"network\":{\"name\":\"tenant-net\"}},"
                "{\"name\":\"eth1\"},"
                "{\"name\":\"eth2\",\"network\":{\"name\":\"tenant-net\"},\"dhcp4\":true},"
                "{\"name\":\"eth3\",\"network\":{\"name\":\"tenant-net\"},\"addresses\":[\"192.168."
                "10.7/24\"]},"
                "{\"name\":\"eth4\",\"network\":{\"name\":\"tenant-net\"}},"
                "{\"name\":\"eth5\",\"network\":{\"name\":\"plain\"}}]}}}");
    struct ippool_nic nics[API_VM_MAX_NICS];
    size_t n = 0;
    struct vmop_err err = {0};
    ck_assert_int_eq(ippool_vm_nics(vm, b, nics, &n, &err), VMOP_OK);
    ck_assert_uint_eq(n, 6);
    ck_assert_int_eq(nics[0].state, IPPOOL_NIC_NEEDS_ALLOCATION);
    ck_assert_str_eq(nics[0].annotation_key, "infra.vmop.io/ipv4.eth0");
    ck_assert_str_eq(nics[0].scope, "tenant-a/tenant-net");
    ck_assert_str_eq(nics[0].gateway4, "192.168.10.1");
    ck_assert_int_eq(nics[0].prefix, 24);
    ck_assert_uint_eq(nics[0].n_nameservers, 2);
    ck_assert_str_eq(nics[0].nameservers[0], "192.168.10.2");
    ck_assert_uint_eq(nics[0].n_search_domains, 1);
    ck_assert(!nics[0].stale);
    /* default network, annotated */
    ck_assert_int_eq(nics[1].state, IPPOOL_NIC_ASSIGNED);
    ck_assert_str_eq(nics[1].network, "tenant-net");
    ck_assert_str_eq(nics[1].cidr, "192.168.10.150/24");
    ck_assert_uint_eq(nics[1].addr, 0xc0a80a96u);
    /* dhcp4 and explicit addresses: never from the pool */
    ck_assert_int_eq(nics[2].state, IPPOOL_NIC_UNMANAGED);
    ck_assert_int_eq(nics[3].state, IPPOOL_NIC_UNMANAGED);
    ck_assert_ptr_null(nics[3].pool);
    /* annotation of another network: stale, reallocate */
    ck_assert_int_eq(nics[4].state, IPPOOL_NIC_NEEDS_ALLOCATION);
    ck_assert(nics[4].stale);
    /* network without a pool */
    ck_assert_int_eq(nics[5].state, IPPOOL_NIC_UNMANAGED);
    /* no binding: nothing managed */
    ck_assert_int_eq(ippool_vm_nics(vm, NULL, nics, &n, &err), VMOP_OK);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(nics[i].state, IPPOOL_NIC_UNMANAGED);
    api_vm_free(vm);
    api_binding_free(b);
}
END_TEST

START_TEST(vm_nics_bad_annotation)
{
    struct api_binding *b = binding_with_pool(good_pool);
    static const char *vals[] = {"garbage", "tenant-net:10.1.1.1/24", "tenant-net:192.168.10.5/16"};
    for (size_t i = 0; i < 3; i++) {
        char text[1024];
        struct api_vm *vm;
        struct ippool_nic nics[API_VM_MAX_NICS];
        size_t n = 99;
        struct vmop_err err = {0};
        snprintf(text, sizeof(text),
                 "{\"metadata\":{\"name\":\"w\",\"namespace\":\"tenant-a\",\"annotations\":{"
                 "\"infra.vmop.io/ipv4.eth0\":\"%s\"}},\"spec\":{\"bootstrap\":{\"cloudInit\":{}},"
                 "\"network\":{\"interfaces\":[{\"name\":\"eth0\"}]}}}",
                 vals[i]);
        vm = vm_from(text);
        ck_assert_int_eq(ippool_vm_nics(vm, b, nics, &n, &err), VMOP_E_INVALID);
        ck_assert_ptr_nonnull(strstr(err.msg, "infra.vmop.io/ipv4.eth0"));
        ck_assert_uint_eq(n, 99);
        api_vm_free(vm);
    }
    api_binding_free(b);
}
END_TEST

/* A VM without a cloud-init bootstrap: the guest could not receive a pool address, so none is
 * asked for (an annotation is not even read). */
START_TEST(vm_nics_no_bootstrap)
{
    struct api_binding *b = binding_with_pool(good_pool);
    struct api_vm *vm =
        vm_from("{\"metadata\":{\"name\":\"w\",\"namespace\":\"tenant-a\",\"annotations\":{"
                "\"infra.vmop.io/ipv4.eth1\":\"garbage\"}},"
                "\"spec\":{\"network\":{\"interfaces\":[{\"name\":\"eth0\"},{\"name\":\"eth1\"},"
                "{\"name\":\"eth2\",\"dhcp4\":true}]}}}");
    struct ippool_nic nics[API_VM_MAX_NICS];
    size_t n = 0;
    struct vmop_err err = {0};
    ck_assert_int_eq(ippool_vm_nics(vm, b, nics, &n, &err), VMOP_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(nics[0].state, IPPOOL_NIC_NO_BOOTSTRAP);
    ck_assert_int_eq(nics[1].state, IPPOOL_NIC_NO_BOOTSTRAP);
    ck_assert_int_eq(nics[2].state, IPPOOL_NIC_UNMANAGED);
    api_vm_free(vm);
    api_binding_free(b);
}
END_TEST

/* A collect callback over a fixed set standing in for the informer cache. */
static vmop_rc collect_set(void *arg, const char *scope, struct ippool_set *in_use,
                           struct vmop_err *err)
{
    const struct ippool_set *cache = arg;
    ck_assert_str_eq(scope, "tenant-a/tenant-net");
    for (size_t i = 0; cache && i < cache->n; i++) {
        vmop_rc rc = ippool_set_add(in_use, cache->v[i], err);
        if (rc)
            return rc;
    }
    return VMOP_OK;
}

START_TEST(registry_reserve_release)
{
    struct api_binding *b =
        binding_with_pool("{\"ranges\":[{\"start\":\"10.0.0.10\",\"end\":\"10.0.0.11\"}],"
                          "\"prefix\":24,\"gateway\":\"10.0.0.1\"}");
    const struct api_ipv4_pool *p = api_binding_ipv4_pool(b, NULL);
    struct ippool_registry *r = NULL;
    struct vmop_err err = {0};
    uint32_t a1, a2, a3, again;
    const char *sc = "tenant-a/tenant-net";
    ck_assert_int_eq(ippool_registry_new(&r, &err), VMOP_OK);
    ck_assert_int_eq(ippool_allocate(r, sc, p, NULL, NULL, "tenant-a/vm1", "eth0", &a1, &err),
                     VMOP_OK);
    /* idempotent for the same interface */
    ck_assert_int_eq(ippool_allocate(r, sc, p, NULL, NULL, "tenant-a/vm1", "eth0", &again, &err),
                     VMOP_OK);
    ck_assert_uint_eq(a1, again);
    ck_assert_int_eq(ippool_allocate(r, sc, p, NULL, NULL, "tenant-a/vm2", "eth0", &a2, &err),
                     VMOP_OK);
    ck_assert_uint_ne(a1, a2);
    /* another scope is independent */
    ck_assert_int_eq(
        ippool_allocate(r, "tenant-b/tenant-net", p, NULL, NULL, "tenant-b/vm1", "eth0", &a3, &err),
        VMOP_OK);
    /* the pool is full in this scope */
    ck_assert_int_eq(ippool_allocate(r, sc, p, NULL, NULL, "tenant-a/vm3", "eth0", &a3, &err),
                     VMOP_E_NOT_FOUND);
    ck_assert(vmop_err_is_fault(&err, IPPOOL_REASON_EXHAUSTED));
    vmop_err_clear(&err);
    /* explicit reserve: taken by someone else, OK for the holder */
    ck_assert_int_eq(ippool_reserve(r, sc, a1, "tenant-a/vm3", "eth0", &err), VMOP_E_EXISTS);
    ck_assert(vmop_err_is_fault(&err, IPPOOL_FAULT_TAKEN));
    vmop_err_clear(&err);
    ck_assert_int_eq(ippool_reserve(r, sc, a1, "tenant-a/vm1", "eth0", &err), VMOP_OK);
    /* a failed annotation write releases: the address is reusable */
    ippool_release(r, sc, "tenant-a/vm1", "eth0");
    ck_assert_uint_eq(ippool_registry_count(r), 2);
    ck_assert_int_eq(ippool_allocate(r, sc, p, NULL, NULL, "tenant-a/vm3", "eth0", &a3, &err),
                     VMOP_OK);
    ck_assert_uint_eq(a3, a1);
    /* VM deleted: all its reservations go */
    ippool_confirm(r, sc, "tenant-a/vm2", "eth0");
    ippool_release_vm(r, "tenant-a/vm2");
    ck_assert_uint_eq(ippool_registry_count(r), 2);
    ck_assert_int_eq(ippool_allocate(r, sc, p, NULL, NULL, "tenant-a/vm4", "eth0", &a1, &err),
                     VMOP_OK);
    ck_assert_uint_eq(a1, a2);
    ippool_registry_free(r);
    api_binding_free(b);
}
END_TEST

START_TEST(registry_settle)
{
    struct api_binding *b = binding_with_pool(good_pool);
    const struct api_ipv4_pool *p = api_binding_ipv4_pool(b, NULL);
    struct ippool_registry *r = NULL;
    struct vmop_err err = {0};
    struct api_vm *before, *after, *other;
    char val[IPPOOL_VALUE_MAX], text[1024];
    uint32_t a;
    const char *sc = "tenant-a/tenant-net";
    ck_assert_int_eq(ippool_registry_new(&r, &err), VMOP_OK);
    ck_assert_int_eq(ippool_allocate(r, sc, p, NULL, NULL, "tenant-a/web-0", "eth0", &a, &err),
                     VMOP_OK);
    ck_assert_int_eq(ippool_annotation_value("tenant-net", a, 24, val, &err), VMOP_OK);
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"web-0\",\"namespace\":\"tenant-a\",\"annotations\":{"
             "\"infra.vmop.io/ipv4.eth0\":\"%s\"}}}",
             val);
    after = vm_from(text);
    before = vm_from("{\"metadata\":{\"name\":\"web-0\",\"namespace\":\"tenant-a\"}}");
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"web-9\",\"namespace\":\"tenant-a\",\"annotations\":{"
             "\"infra.vmop.io/ipv4.eth0\":\"%s\"}}}",
             val);
    other = vm_from(text);
    /* unconfirmed entries are never settled */
    ippool_settle(r, after);
    ck_assert_uint_eq(ippool_registry_count(r), 1);
    ippool_confirm(r, sc, "tenant-a/web-0", "eth0");
    /* the cache has not caught up yet, or shows another VM */
    ippool_settle(r, before);
    ippool_settle(r, other);
    ck_assert_uint_eq(ippool_registry_count(r), 1);
    ippool_settle(r, after);
    ck_assert_uint_eq(ippool_registry_count(r), 0);
    /* from now on the cache protects the address */
    {
        struct ippool_set cache = {0};
        uint32_t b2;
        ck_assert_int_eq(ippool_in_use_add_vm(&cache, after, "tenant-net", &err), VMOP_OK);
        ck_assert_uint_eq(cache.n, 1);
        /* the same hint would land on a again: the cache must steer it away */
        ck_assert_int_eq(
            ippool_allocate(r, sc, p, collect_set, &cache, "tenant-a/web-0", "eth0", &b2, &err),
            VMOP_OK);
        ck_assert_uint_ne(b2, a);
        ippool_release(r, sc, "tenant-a/web-0", "eth0");
        ck_assert_int_eq(ippool_allocate(r, sc, p, NULL, NULL, "tenant-a/web-0", "eth0", &b2, &err),
                         VMOP_OK);
        ck_assert_uint_eq(b2, a); /* (without the cache it would) */
        ippool_set_free(&cache);
    }
    api_vm_free(before);
    api_vm_free(after);
    api_vm_free(other);
    ippool_registry_free(r);
    api_binding_free(b);
}
END_TEST

/* ---- concurrency ---- */

#define N_THREADS 8
#define N_ALLOCS  100

struct worker {
    struct ippool_registry *reg;
    const struct api_ipv4_pool *pool;
    int id;
    uint32_t got[N_ALLOCS];
    int failures, settled;
};

/* The "informer cache": addresses whose annotation writes have landed. */
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ippool_set cache_set;

static vmop_rc collect_cache(void *arg, const char *scope, struct ippool_set *in_use,
                             struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;
    pthread_mutex_lock(&cache_mu);
    for (size_t i = 0; i < cache_set.n && rc == VMOP_OK; i++)
        rc = ippool_set_add(in_use, cache_set.v[i], err);
    pthread_mutex_unlock(&cache_mu);
    return rc;
}

/* Every other allocation goes the whole way: annotation "written", cache caught up, settled (the
 * registry forgets it and only the cache protects it from then on). */
static void *work(void *arg)
{
    struct worker *w = arg;
    for (int i = 0; i < N_ALLOCS; i++) {
        char name[64], key[128], val[IPPOOL_VALUE_MAX], text[512];
        struct vmop_err err = {0};
        struct api_vm *vm = NULL;
        snprintf(name, sizeof(name), "vm-%d-%d", w->id, i);
        snprintf(key, sizeof(key), "tenant-a/%s", name);
        if (ippool_allocate(w->reg, "tenant-a/tenant-net", w->pool, collect_cache, NULL, key,
                            "eth0", &w->got[i], &err) != VMOP_OK) {
            w->failures++;
            continue;
        }
        if (i % 2)
            continue;
        ippool_confirm(w->reg, "tenant-a/tenant-net", key, "eth0");
        pthread_mutex_lock(&cache_mu);
        if (ippool_set_add(&cache_set, w->got[i], &err) != VMOP_OK)
            w->failures++;
        pthread_mutex_unlock(&cache_mu);
        if (ippool_annotation_value("tenant-net", w->got[i], 22, val, &err) != VMOP_OK)
            w->failures++;
        snprintf(text, sizeof(text),
                 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"tenant-a\",\"annotations\":{"
                 "\"infra.vmop.io/ipv4.eth0\":\"%s\"}}}",
                 name, val);
        if (api_vm_parse_text(text, strlen(text), &vm, &err) != VMOP_OK) {
            w->failures++;
            continue;
        }
        ippool_settle(w->reg, vm);
        w->settled++;
        api_vm_free(vm);
    }
    return NULL;
}

START_TEST(concurrent_no_duplicates)
{
    /* 1000 usable addresses for 800 allocations: hints collide often */
    struct api_binding *b =
        binding_with_pool("{\"ranges\":[{\"start\":\"10.20.0.1\",\"end\":\"10.20.3.233\"}],"
                          "\"prefix\":22,\"gateway\":\"10.20.0.1\"}");
    const struct api_ipv4_pool *p = api_binding_ipv4_pool(b, NULL);
    struct ippool_registry *r = NULL;
    struct vmop_err err = {0};
    static struct worker w[N_THREADS];
    pthread_t th[N_THREADS];
    struct ippool_set all = {0};
    ck_assert_uint_eq(ippool_usable(p), 1000);
    ck_assert_int_eq(ippool_registry_new(&r, &err), VMOP_OK);
    for (int i = 0; i < N_THREADS; i++) {
        memset(&w[i], 0, sizeof(w[i]));
        w[i].reg = r;
        w[i].pool = p;
        w[i].id = i;
        ck_assert_int_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < N_THREADS; i++)
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < N_THREADS; i++) {
        ck_assert_int_eq(w[i].failures, 0);
        for (int j = 0; j < N_ALLOCS; j++) {
            char buf[IPPOOL_ADDR_MAX];
            ck_assert_msg(!ippool_set_has(&all, w[i].got[j]), "duplicate %s",
                          fmt(w[i].got[j], buf));
            ck_assert_int_eq(ippool_set_add(&all, w[i].got[j], &err), VMOP_OK);
            ck_assert(w[i].got[j] != 0x0a140001u); /* never the gateway */
        }
    }
    ck_assert_uint_eq(all.n, N_THREADS * N_ALLOCS);
    ck_assert_int_eq(w[0].settled, N_ALLOCS / 2);
    /* settled entries are gone: only the cache holds them now */
    ck_assert_uint_eq(ippool_registry_count(r), N_THREADS * N_ALLOCS / 2);
    ck_assert_uint_eq(cache_set.n, N_THREADS * N_ALLOCS / 2);
    ippool_set_free(&cache_set);
    ippool_set_free(&all);
    ippool_registry_free(r);
    api_binding_free(b);
}
END_TEST

START_TEST(restart_from_annotations)
{
    /* 40 usable addresses; 25 VMs annotated before the "restart" */
    struct api_binding *b =
        binding_with_pool("{\"ranges\":[{\"start\":\"10.30.0.10\",\"end\":\"10.30.0.49\"}],"
                          "\"prefix\":24,\"gateway\":\"10.30.0.1\"}");
    const struct api_ipv4_pool *p = api_binding_ipv4_pool(b, NULL);
    struct ippool_registry *r = NULL;
    struct vmop_err err = {0};
    struct api_vm *vms[25];
    struct ippool_set annotated = {0}, in_use = {0}, given = {0};
    uint32_t a;
    ck_assert_int_eq(ippool_registry_new(&r, &err), VMOP_OK);
    for (int i = 0; i < 25; i++) {
        char val[IPPOOL_VALUE_MAX], text[1024];
        uint32_t addr = 0x0a1e000au + (uint32_t)((i * 7) % 40); /* scattered */
        ck_assert_int_eq(ippool_annotation_value("tenant-net", addr, 24, val, &err), VMOP_OK);
        snprintf(text, sizeof(text),
                 "{\"metadata\":{\"name\":\"old-%d\",\"namespace\":\"tenant-a\",\"annotations\":{"
                 "\"infra.vmop.io/ipv4.eth0\":\"%s\",\"infra.vmop.io/ipv4.eth1\":"
                 "\"backend:10.30.0.11/24\",\"other\":\"x\"}}}",
                 i, val);
        vms[i] = vm_from(text);
        ck_assert_int_eq(ippool_set_add(&annotated, addr, &err), VMOP_OK);
    }
    /* the cache rebuilt after a restart: annotations on tenant-net only */
    for (int i = 0; i < 25; i++)
        ck_assert_int_eq(ippool_in_use_add_vm(&in_use, vms[i], "tenant-net", &err), VMOP_OK);
    ck_assert_uint_eq(in_use.n, 25);
    /* new VMs get the 15 remaining addresses, never an annotated one; then exhaustion */
    for (int i = 0; i < 15; i++) {
        char key[64];
        snprintf(key, sizeof(key), "tenant-a/new-%d", i);
        ck_assert_int_eq(ippool_allocate(r, "tenant-a/tenant-net", p, collect_set, &in_use, key,
                                         "eth0", &a, &err),
                         VMOP_OK);
        ck_assert(!ippool_set_has(&annotated, a));
        ck_assert(!ippool_set_has(&given, a));
        ck_assert_int_eq(ippool_set_add(&given, a, &err), VMOP_OK);
    }
    ck_assert_int_eq(ippool_allocate(r, "tenant-a/tenant-net", p, collect_set, &in_use,
                                     "tenant-a/new-x", "eth0", &a, &err),
                     VMOP_E_NOT_FOUND);
    ck_assert(vmop_err_is_fault(&err, IPPOOL_REASON_EXHAUSTED));
    for (int i = 0; i < 25; i++)
        api_vm_free(vms[i]);
    ippool_set_free(&annotated);
    ippool_set_free(&in_use);
    ippool_set_free(&given);
    ippool_registry_free(r);
    api_binding_free(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ippool");
    TCase *tc = tcase_create("ippool");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, pool_parse_ok);
    tcase_add_loop_test(tc, pool_parse_errors, 0, (int)(sizeof(bad_pools) / sizeof(bad_pools[0])));
    tcase_add_test(tc, pool_too_many_ranges);
    tcase_add_test(tc, pick_skips_reserved);
    tcase_add_test(tc, pick_small_prefixes);
    tcase_add_test(tc, pick_deterministic_multi_range);
    tcase_add_test(tc, pick_invalid_pool);
    tcase_add_test(tc, annotations);
    tcase_add_test(tc, vm_nics_mixed);
    tcase_add_test(tc, vm_nics_bad_annotation);
    tcase_add_test(tc, vm_nics_no_bootstrap);
    tcase_add_test(tc, registry_reserve_release);
    tcase_add_test(tc, registry_settle);
    tcase_add_test(tc, concurrent_no_duplicates);
    tcase_add_test(tc, restart_from_annotations);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
