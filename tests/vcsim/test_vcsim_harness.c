/* test_vcsim_harness.c: integration tests for vcsim-launcher and its C harness.
 *
 * Covers: the ready line (fields, paths, seeded libraries), the SOAP endpoint over http and https
 * (with the printed thumbprints checked against the served certificate), enforced credentials, stop
 * leaving no process and no datastore dir, the launcher dying with its parent, and the guest player
 * (pool address, static address and hostname from guestinfo.metadata, tools status on power-off).
 */
#include <check.h>
#include <curl/curl.h>
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "clock.h"
#include "vbuf.h"
#include "vcsim_harness.h"

#define SOAP_HEAD                                                                                  \
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><soapenv:Envelope "                                 \
    "xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\" "                                 \
    "xmlns:xsd=\"http://www.w3.org/2001/XMLSchema\" "                                              \
    "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">"                                     \
    "<soapenv:Body>"
#define SOAP_TAIL "</soapenv:Body></soapenv:Envelope>"

/* --- small SOAP client on libcurl --- */

struct soap {
    CURL *h;
    const char *sdk;
};

static size_t collect(char *p, size_t sz, size_t n, void *ud)
{
    struct vbuf *b = ud;

    vbuf_add(b, p, sz * n);
    return vbuf_error(b) ? 0 : sz * n;
}

static void soap_open(struct soap *s, const struct vcsim *sim)
{
    s->h = curl_easy_init();
    ck_assert_ptr_nonnull(s->h);
    s->sdk = sim->sdk;
    curl_easy_setopt(s->h, CURLOPT_COOKIEFILE, "");
    curl_easy_setopt(s->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(s->h, CURLOPT_TIMEOUT, 30L);
    if (sim->tls) {
        /* the thumbprint is checked separately (test_tls) */
        curl_easy_setopt(s->h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(s->h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
}

static void soap_close(struct soap *s)
{
    curl_easy_cleanup(s->h);
    s->h = NULL;
}

/* POSTs body (inside the envelope); returns the HTTP status and the response in *resp (caller
 * frees). */
static long soap_call(struct soap *s, const char *body, char **resp)
{
    struct vbuf req, out;
    struct curl_slist *hdrs = NULL;
    long status = 0;
    CURLcode cc;

    vbuf_init(&req, VBUF_DEFAULT_MAX);
    vbuf_init(&out, VBUF_DEFAULT_MAX);
    vbuf_adds(&req, SOAP_HEAD);
    vbuf_adds(&req, body);
    vbuf_adds(&req, SOAP_TAIL);
    ck_assert_int_eq(vbuf_error(&req), VMOP_OK);
    hdrs = curl_slist_append(hdrs, "Content-Type: text/xml; charset=utf-8");
    hdrs = curl_slist_append(hdrs, "SOAPAction: urn:vim25/6.5");
    curl_easy_setopt(s->h, CURLOPT_URL, s->sdk);
    curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(s->h, CURLOPT_POSTFIELDS, vbuf_str(&req));
    curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(s->h, CURLOPT_WRITEDATA, &out);
    cc = curl_easy_perform(s->h);
    ck_assert_msg(cc == CURLE_OK, "curl: %s", curl_easy_strerror(cc));
    curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdrs);
    vbuf_free(&req);
    *resp = vbuf_take(&out);
    if (!*resp)
        *resp = strdup("");
    vbuf_free(&out);
    return status;
}

static long soap_callf(struct soap *s, char **resp, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static long soap_callf(struct soap *s, char **resp, const char *fmt, ...)
{
    struct vbuf b;
    va_list ap;
    long st;

    vbuf_init(&b, VBUF_DEFAULT_MAX);
    va_start(ap, fmt);
    vbuf_addvf(&b, fmt, ap);
    va_end(ap);
    ck_assert_int_eq(vbuf_error(&b), VMOP_OK);
    st = soap_call(s, vbuf_str(&b), resp);
    vbuf_free(&b);
    return st;
}

/* Copies the text between the first "<tag...>" after `after` (if not NULL) and the next '<'. */
static int xml_text_after(const char *doc, const char *after, const char *tag, char *out,
                          size_t outlen)
{
    const char *p = doc, *q, *e;
    char open[64];

    if (after) {
        p = strstr(doc, after);
        if (!p)
            return 0;
    }
    snprintf(open, sizeof(open), "<%s", tag);
    q = strstr(p, open);
    if (!q)
        return 0;
    q = strchr(q, '>');
    if (!q)
        return 0;
    q++;
    e = strchr(q, '<');
    if (!e || (size_t)(e - q) >= outlen)
        return 0;
    memcpy(out, q, (size_t)(e - q));
    out[e - q] = '\0';
    return 1;
}

static void soap_login(struct soap *s, const char *user, const char *pass, long want_status)
{
    char *r = NULL;
    long st = soap_callf(
        s, &r,
        "<Login xmlns=\"urn:vim25\"><_this type=\"SessionManager\">SessionManager</_this>"
        "<userName>%s</userName><password>%s</password></Login>",
        user, pass);

    ck_assert_int_eq(st, want_status);
    if (want_status == 200)
        ck_assert_ptr_nonnull(strstr(r, "<LoginResponse"));
    else
        ck_assert_ptr_nonnull(strstr(r, "InvalidLogin"));
    free(r);
}

static void find_vm(struct soap *s, const char *path, char *moref, size_t n)
{
    char *r = NULL;
    long st = soap_callf(
        s, &r,
        "<FindByInventoryPath xmlns=\"urn:vim25\"><_this type=\"SearchIndex\">SearchIndex</_this>"
        "<inventoryPath>%s</inventoryPath></FindByInventoryPath>",
        path);

    ck_assert_int_eq(st, 200);
    ck_assert_msg(xml_text_after(r, NULL, "returnval", moref, n), "%s not found", path);
    free(r);
}

static void vm_task(struct soap *s, const char *method, const char *vm)
{
    char *r = NULL, task[64], state[32];
    long st =
        soap_callf(s, &r, "<%s xmlns=\"urn:vim25\"><_this type=\"VirtualMachine\">%s</_this></%s>",
                   method, vm, method);

    ck_assert_int_eq(st, 200);
    ck_assert(xml_text_after(r, NULL, "returnval", task, sizeof(task)));
    free(r);
    /* The simulator runs tasks asynchronously (README: Changes from 0.24): poll info.state until it
     * is final (at most ~10 s). */
    for (int i = 0; i < 1000; i++) {
        st = soap_callf(s, &r,
                        "<RetrievePropertiesEx xmlns=\"urn:vim25\"><_this "
                        "type=\"PropertyCollector\">propertyCollector"
                        "</_this><specSet><propSet><type>Task</type><pathSet>info.state</pathSet></"
                        "propSet><objectSet>"
                        "<obj "
                        "type=\"Task\">%s</obj></objectSet></specSet><options></options></"
                        "RetrievePropertiesEx>",
                        task);
        ck_assert_int_eq(st, 200);
        ck_assert(xml_text_after(r, "<name>info.state</name>", "val", state, sizeof(state)));
        free(r);
        r = NULL;
        if (strcmp(state, "queued") != 0 && strcmp(state, "running") != 0)
            break;
        usleep(10 * 1000);
    }
    ck_assert_str_eq(state, "success");
}

/* Reads one string property of a VM; "" when unset (vcsim omits empty properties). */
static void vm_prop(struct soap *s, const char *vm, const char *prop, char *out, size_t n)
{
    char *r = NULL, marker[128];
    long st = soap_callf(
        s, &r,
        "<RetrievePropertiesEx xmlns=\"urn:vim25\"><_this type=\"PropertyCollector\">"
        "propertyCollector</_this><specSet><propSet><type>VirtualMachine</type><pathSet>%s</"
        "pathSet>"
        "</propSet><objectSet><obj type=\"VirtualMachine\">%s</obj></objectSet></specSet><options>"
        "</options></RetrievePropertiesEx>",
        prop, vm);

    ck_assert_int_eq(st, 200);
    snprintf(marker, sizeof(marker), "<name>%s</name>", prop);
    if (!xml_text_after(r, marker, "val", out, n))
        out[0] = '\0';
    free(r);
}

/* Polls a VM property until it is non-empty and differs from `unlike` (NULL: any), bounded. */
static void wait_prop(struct soap *s, const char *vm, const char *prop, const char *want, char *out,
                      size_t n)
{
    long long deadline = vmop_test_now_ms() + 15000;

    for (;;) {
        vm_prop(s, vm, prop, out, n);
        if (*out && (!want || strcmp(out, want) == 0))
            return;
        ck_assert_msg(vmop_test_now_ms() < deadline, "%s of %s is '%s', want '%s'", prop, vm, out,
                      want ? want : "(any)");
        poll(NULL, 0, 50);
    }
}

static int process_gone(pid_t pid)
{
    char path[64], buf[512];
    FILE *f;
    char *rp;
    int gone;

    if (kill(pid, 0) != 0 && errno == ESRCH)
        return 1;
    /* a zombie waiting for a reaper that is not us also counts as gone */
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return 1;
    gone = fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) && rp[1] == ' ' && rp[2] == 'Z';
    fclose(f);
    return gone;
}

static int dir_exists(const char *p)
{
    struct stat st;

    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void check_stop_leaves_nothing(struct vcsim *sim)
{
    struct vmop_err err = {0};
    pid_t pid = sim->pid;
    char *dirs[8] = {0};
    size_t nd = sim->n_datastore_dirs < 8 ? sim->n_datastore_dirs : 8;

    for (size_t i = 0; i < nd; i++) {
        dirs[i] = strdup(sim->datastore_dirs[i]);
        ck_assert(dir_exists(dirs[i]));
    }
    ck_assert_int_eq(vcsim_stop(sim, &err), VMOP_OK);
    ck_assert_int_eq(kill(pid, 0), -1);
    ck_assert_int_eq(errno, ESRCH);
    for (size_t i = 0; i < nd; i++) {
        ck_assert_msg(!dir_exists(dirs[i]), "datastore dir %s left behind", dirs[i]);
        free(dirs[i]);
    }
}

static struct vcsim *start_ok(const struct vcsim_opts *o)
{
    struct vmop_err err = {0};
    struct vcsim *sim = NULL;
    vmop_rc rc = vcsim_start(o, &sim, &err);

    ck_assert_msg(rc == VMOP_OK, "vcsim_start: %s: %s", vmop_rc_str(rc), err.msg);
    ck_assert_ptr_nonnull(sim);
    ck_assert_int_gt(sim->pid, 0);
    return sim;
}

#define RETRIEVE_SERVICE_CONTENT                                                                   \
    "<RetrieveServiceContent xmlns=\"urn:vim25\"><_this type=\"ServiceInstance\">ServiceInstance"  \
    "</_this></RetrieveServiceContent>"
#define CURRENT_TIME                                                                               \
    "<CurrentTime xmlns=\"urn:vim25\"><_this type=\"ServiceInstance\">ServiceInstance</_this>"     \
    "</CurrentTime>"

static void check_service_content(const struct vcsim *sim)
{
    struct soap s;
    char *r = NULL;
    long st;

    soap_open(&s, sim);
    st = soap_call(&s, RETRIEVE_SERVICE_CONTENT, &r);
    ck_assert_int_eq(st, 200);
    ck_assert_ptr_nonnull(strstr(r, "urn:vim25"));
    ck_assert_ptr_nonnull(strstr(r, "VirtualCenter"));
    free(r);
    soap_close(&s);
}

START_TEST(test_plain)
{
    struct vcsim *sim = start_ok(NULL);
    const struct vcsim_library *lib = NULL;
    const struct vcsim_item *it;
    struct soap s;
    char moref[64];
    size_t n;

    ck_assert_int_eq(strncmp(sim->url, "http://127.0.0.1:", 17), 0);
    n = strlen(sim->sdk);
    ck_assert_uint_gt(n, strlen(sim->url));
    ck_assert_int_eq(strncmp(sim->sdk, sim->url, strlen(sim->url)), 0);
    ck_assert_str_eq(sim->sdk + strlen(sim->url), "/sdk");
    ck_assert_int_eq(sim->tls, 0);
    ck_assert_str_eq(sim->thumbprint_sha1, "");
    ck_assert_str_eq(sim->username, "user");
    ck_assert_str_eq(sim->datacenter, "/DC0");
    ck_assert_str_eq(sim->cluster, "/DC0/host/DC0_C0");
    ck_assert_str_eq(sim->resource_pool, "/DC0/host/DC0_C0/Resources");
    ck_assert_str_eq(sim->folder, "/DC0/vm");
    ck_assert_str_eq(sim->datastore, "/DC0/datastore/LocalDS_0");
    ck_assert_uint_eq(sim->n_portgroups, 1);
    ck_assert_str_eq(sim->portgroups[0], "/DC0/network/DC0_DVPG0");
    ck_assert_uint_eq(strlen(sim->dvs_uuid), 36);
    ck_assert_str_eq(sim->template_vm, "/DC0/vm/vmop-tiny-tmpl");
    ck_assert_uint_eq(sim->n_datastore_dirs, 1);
    /* Moref values differ between govmomi releases: look them up by path (below), check the kind
     * here. */
    ck_assert_int_eq(strncmp(vcsim_moref(sim, "resource_pool"), "resgroup-", 9), 0);
    ck_assert_ptr_nonnull(vcsim_moref(sim, "folder"));
    ck_assert_ptr_null(vcsim_moref(sim, "nope"));

    ck_assert_uint_eq(sim->n_libraries, 2);
    it = vcsim_find_item(sim, "vmop-tiny-ovf", &lib);
    ck_assert_ptr_nonnull(it);
    ck_assert_str_eq(it->type, "ovf");
    ck_assert_str_eq(lib->name, "vmop-images");
    ck_assert_uint_eq(strlen(it->id), 36);
    it = vcsim_find_item(sim, "vmop-tiny-tmpl", NULL);
    ck_assert_ptr_nonnull(it);
    ck_assert_str_eq(it->type, "vm-template");
    it = vcsim_find_item(sim, "vmop-cluster-ovf", &lib);
    ck_assert_ptr_nonnull(it);
    ck_assert_str_eq(lib->name, "vmop-cluster-images");
    ck_assert_ptr_null(vcsim_find_item(sim, "missing", NULL));

    check_service_content(sim);

    /* Only the configured credentials log in; the template VM and the inventory paths resolve. */
    soap_open(&s, sim);
    soap_login(&s, "user", "wrong", 500);
    soap_login(&s, "user", "pass", 200);
    find_vm(&s, sim->template_vm, moref, sizeof(moref));
    ck_assert_str_eq(moref, vcsim_moref(sim, "template_vm"));
    find_vm(&s, sim->resource_pool, moref, sizeof(moref));
    ck_assert_str_eq(moref, vcsim_moref(sim, "resource_pool"));
    find_vm(&s, sim->folder, moref, sizeof(moref));
    ck_assert_str_eq(moref, vcsim_moref(sim, "folder"));
    soap_close(&s);

    check_stop_leaves_nothing(sim);
}
END_TEST

/* SHA-1 or SHA-256 of the DER certificate in a PEM, as "AA:BB:..". */
static void pem_thumbprint(const char *pem, const EVP_MD *md, char *out, size_t outlen)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    X509 *x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dn = 0;
    size_t o = 0;

    ck_assert_ptr_nonnull(x);
    ck_assert_int_eq(X509_digest(x, md, d, &dn), 1);
    for (unsigned int i = 0; i < dn && o + 4 <= outlen; i++)
        o += (size_t)snprintf(out + o, outlen - o, i ? ":%02X" : "%02X", d[i]);
    X509_free(x);
    BIO_free(bio);
}

START_TEST(test_tls)
{
    struct vcsim_opts o = {
        .tls = 1, .username = "admin", .password = "s3cret", .no_seed = 1, .vms = VCSIM_NONE};
    struct vcsim *sim = start_ok(&o);
    struct curl_certinfo *ci = NULL;
    struct soap s;
    char tp1[128] = "", tp256[160] = "";
    const char *pem = NULL;
    char *r = NULL;
    long st;

    ck_assert_int_eq(strncmp(sim->url, "https://127.0.0.1:", 18), 0);
    ck_assert_int_eq(sim->tls, 1);
    ck_assert_uint_eq(strlen(sim->thumbprint_sha1), 59);
    ck_assert_uint_eq(strlen(sim->thumbprint_sha256), 95);
    ck_assert_str_eq(sim->username, "admin");
    ck_assert_uint_eq(sim->n_libraries, 0);

    soap_open(&s, sim);
    curl_easy_setopt(s.h, CURLOPT_CERTINFO, 1L);
    st = soap_call(&s, RETRIEVE_SERVICE_CONTENT, &r);
    ck_assert_int_eq(st, 200);
    ck_assert_ptr_nonnull(strstr(r, "urn:vim25"));
    free(r);
    ck_assert_int_eq(curl_easy_getinfo(s.h, CURLINFO_CERTINFO, &ci), CURLE_OK);
    ck_assert_ptr_nonnull(ci);
    ck_assert_int_ge(ci->num_of_certs, 1);
    for (struct curl_slist *l = ci->certinfo[0]; l; l = l->next)
        if (strncmp(l->data, "Cert:", 5) == 0)
            pem = l->data + 5;
    ck_assert_ptr_nonnull(pem);
    pem_thumbprint(pem, EVP_sha1(), tp1, sizeof(tp1));
    pem_thumbprint(pem, EVP_sha256(), tp256, sizeof(tp256));
    ck_assert_str_eq(tp1, sim->thumbprint_sha1);
    ck_assert_str_eq(tp256, sim->thumbprint_sha256);

    soap_login(&s, "user", "pass", 500);
    soap_login(&s, "admin", "s3cret", 200);
    soap_close(&s);

    check_stop_leaves_nothing(sim);
}
END_TEST

/* A test process that dies without vcsim_stop() must not leak its simulator. */
START_TEST(test_parent_death)
{
    int pfd[2];
    pid_t child, sim_pid = 0;
    char dir[512] = "";
    long long deadline;
    int st = 0;

    ck_assert_int_eq(pipe(pfd), 0);
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        struct vcsim_opts o = {.no_seed = 1, .vms = VCSIM_NONE};
        struct vmop_err err = {0};
        struct vcsim *sim = NULL;
        char msg[600];
        int n;

        close(pfd[0]);
        if (vcsim_start(&o, &sim, &err) != VMOP_OK)
            _exit(3);
        n = snprintf(msg, sizeof(msg), "%d %s", (int)sim->pid,
                     sim->n_datastore_dirs ? sim->datastore_dirs[0] : "");
        if (n < 0 || write(pfd[1], msg, (size_t)n) != n)
            _exit(4);
        _exit(0); /* no vcsim_stop */
    }
    close(pfd[1]);
    {
        char buf[600] = "";
        ssize_t n = read(pfd[0], buf, sizeof(buf) - 1);
        ck_assert_int_gt(n, 0);
        buf[n] = '\0';
        ck_assert_int_eq(sscanf(buf, "%d %511s", &sim_pid, dir), 2);
    }
    close(pfd[0]);
    ck_assert_int_eq(waitpid(child, &st, 0), child);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ck_assert_int_gt(sim_pid, 0);

    deadline = vmop_test_now_ms() + 15000;
    while (!process_gone(sim_pid)) {
        ck_assert_msg(vmop_test_now_ms() < deadline, "launcher %d outlived its parent",
                      (int)sim_pid);
        poll(NULL, 0, 20);
    }
    /* It got SIGTERM (not SIGKILL), so it removed its datastore dir. */
    deadline = vmop_test_now_ms() + 5000;
    while (dir_exists(dir)) {
        ck_assert_msg(vmop_test_now_ms() < deadline, "datastore dir %s left behind", dir);
        poll(NULL, 0, 20);
    }
}
END_TEST

static char *b64(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(4 * ((n + 2) / 3) + 1);

    ck_assert_ptr_nonnull(out);
    EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)s, (int)n);
    return out;
}

static void set_metadata(struct soap *s, const char *vm, const char *b64md)
{
    char *r = NULL, task[64];
    long st = soap_callf(
        s, &r,
        "<ReconfigVM_Task xmlns=\"urn:vim25\"><_this type=\"VirtualMachine\">%s</_this><spec>"
        "<extraConfig><key>guestinfo.metadata</key><value "
        "xsi:type=\"xsd:string\">%s</value></extraConfig>"
        "<extraConfig><key>guestinfo.metadata.encoding</key><value "
        "xsi:type=\"xsd:string\">base64</value>"
        "</extraConfig></spec></ReconfigVM_Task>",
        vm, b64md);

    ck_assert_int_eq(st, 200);
    ck_assert(xml_text_after(r, NULL, "returnval", task, sizeof(task)));
    free(r);
}

START_TEST(test_guest_player)
{
    static const char yaml_md[] = "# cloud-init metadata\n"
                                  "instance-id: \"vm-a\"\n"
                                  "local-hostname: vm-a\n"
                                  "network:\n"
                                  "  version: 2\n"
                                  "  ethernets:\n"
                                  "    eth0:\n"
                                  "      match:\n"
                                  "        macaddress: \"00:50:56:00:00:01\"\n"
                                  "      addresses:\n"
                                  "      - 10.20.30.40/24\n"
                                  "      gateway4: 10.20.30.1\n";
    static const char json_md[] =
        "{\"local-hostname\":\"vm-b\",\"network\":{\"version\":1,\"config\":[{\"type\":"
        "\"physical\",\"name\":\"eth0\",\"subnets\":[{\"type\":\"static\",\"address\":"
        "\"10.9.8.7\",\"netmask\":\"255.255.0.0\"}]}]}}";
    struct vcsim_opts o = {.no_autostart = 1, .no_seed = 1, .standalone_hosts = VCSIM_NONE};
    struct vcsim *sim = start_ok(&o);
    struct soap s;
    char vm0[64], vm1[64], val[256];
    char *md;

    soap_open(&s, sim);
    soap_login(&s, "user", "pass", 200);
    find_vm(&s, "/DC0/vm/DC0_C0_RP0_VM0", vm0, sizeof(vm0));
    find_vm(&s, "/DC0/vm/DC0_C0_RP0_VM1", vm1, sizeof(vm1));

    /* Powered off: nothing published. */
    vm_prop(&s, vm0, "guest.ipAddress", val, sizeof(val));
    ck_assert_str_eq(val, "");

    md = b64(yaml_md);
    set_metadata(&s, vm0, md);
    free(md);
    md = b64(json_md);
    set_metadata(&s, vm1, md);
    free(md);
    vm_task(&s, "PowerOnVM_Task", vm0);
    vm_task(&s, "PowerOnVM_Task", vm1);

    wait_prop(&s, vm0, "guest.ipAddress", "10.20.30.40", val, sizeof(val));
    wait_prop(&s, vm0, "summary.guest.ipAddress", "10.20.30.40", val, sizeof(val));
    wait_prop(&s, vm0, "guest.hostName", "vm-a", val, sizeof(val));
    wait_prop(&s, vm0, "guest.toolsRunningStatus", "guestToolsRunning", val, sizeof(val));
    wait_prop(&s, vm0, "guestHeartbeatStatus", "green", val, sizeof(val));
    wait_prop(&s, vm1, "guest.ipAddress", "10.9.8.7", val, sizeof(val));
    wait_prop(&s, vm1, "guest.hostName", "vm-b", val, sizeof(val));

    /* Power off: tools stop, the address stays (as vcsim keeps it). */
    vm_task(&s, "PowerOffVM_Task", vm0);
    wait_prop(&s, vm0, "guest.toolsRunningStatus", "guestToolsNotRunning", val, sizeof(val));
    vm_prop(&s, vm0, "guest.ipAddress", val, sizeof(val));
    ck_assert_str_eq(val, "10.20.30.40");
    soap_close(&s);
    check_stop_leaves_nothing(sim);
}
END_TEST

/* Without metadata the address comes from 192.0.2.0/24, and a WaitForUpdatesEx watcher sees it
 * arrive. */
START_TEST(test_pool_address)
{
    struct vcsim_opts o = {
        .no_seed = 1, .no_autostart = 1, .standalone_hosts = VCSIM_NONE, .vms = 1};
    struct vcsim *sim = start_ok(&o);
    struct soap s;
    char vm[64], val[256], version[128] = "";
    char *r = NULL;
    long long deadline;
    long st;

    soap_open(&s, sim);
    soap_login(&s, "user", "pass", 200);
    find_vm(&s, "/DC0/vm/DC0_C0_RP0_VM0", vm, sizeof(vm));
    st = soap_callf(
        &s, &r,
        "<CreateFilter xmlns=\"urn:vim25\"><_this "
        "type=\"PropertyCollector\">propertyCollector</_this>"
        "<spec><propSet><type>VirtualMachine</type><pathSet>guest.ipAddress</pathSet></propSet>"
        "<objectSet><obj type=\"VirtualMachine\">%s</obj></objectSet></spec>"
        "<partialUpdates>false</partialUpdates></CreateFilter>",
        vm);
    ck_assert_int_eq(st, 200);
    free(r);
    st = soap_call(
        &s,
        "<WaitForUpdatesEx xmlns=\"urn:vim25\"><_this type=\"PropertyCollector\">propertyCollector"
        "</_this><version></version><options><maxWaitSeconds>0</maxWaitSeconds></options>"
        "</WaitForUpdatesEx>",
        &r);
    ck_assert_int_eq(st, 200);
    ck_assert(xml_text_after(r, NULL, "version", version, sizeof(version)));
    ck_assert_ptr_null(strstr(r, "192.0.2.")); /* powered off: no address yet */
    free(r);

    vm_task(&s, "PowerOnVM_Task", vm);
    deadline = vmop_test_now_ms() + 20000;
    for (;;) {
        st = soap_callf(
            &s, &r,
            "<WaitForUpdatesEx xmlns=\"urn:vim25\"><_this "
            "type=\"PropertyCollector\">propertyCollector"
            "</_this><version>%s</version><options><maxWaitSeconds>5</maxWaitSeconds></options>"
            "</WaitForUpdatesEx>",
            version);
        ck_assert_int_eq(st, 200);
        if (strstr(r, "192.0.2."))
            break;
        xml_text_after(r, NULL, "version", version, sizeof(version));
        free(r);
        ck_assert_msg(vmop_test_now_ms() < deadline, "no guest.ipAddress update after power-on");
    }
    free(r);
    vm_prop(&s, vm, "guest.ipAddress", val, sizeof(val));
    ck_assert_int_eq(strncmp(val, "192.0.2.", 8), 0);
    vm_prop(&s, vm, "guest.toolsRunningStatus", val, sizeof(val));
    ck_assert_str_eq(val, "guestToolsRunning");
    soap_close(&s);
    check_stop_leaves_nothing(sim);
}
END_TEST

/* -method-delay slows the named call; -session-idle-timeout expires an idle session. */
START_TEST(test_delay_and_idle)
{
    struct vcsim_opts o = {.no_seed = 1,
                           .vms = VCSIM_NONE,
                           .method_delays = "RetrieveServiceContent=400",
                           .session_idle_timeout_ms = 500};
    struct vcsim *sim = start_ok(&o);
    struct soap s;
    char *r = NULL;
    long long t0;
    long st;

    soap_open(&s, sim);
    t0 = vmop_test_now_ms();
    st = soap_call(&s, RETRIEVE_SERVICE_CONTENT, &r);
    ck_assert_int_eq(st, 200);
    ck_assert_int_ge(vmop_test_now_ms() - t0, 400);
    free(r);

    soap_login(&s, "user", "pass", 200);
    st = soap_call(&s, CURRENT_TIME, &r);
    ck_assert_int_eq(st, 200);
    free(r);
    /* Idle for more than two watch periods (the simulator checks every timeout interval). */
    t0 = vmop_test_now_ms();
    while (vmop_test_now_ms() - t0 < 1600)
        poll(NULL, 0, 100);
    st = soap_call(&s, CURRENT_TIME, &r);
    ck_assert_int_eq(st, 500);
    ck_assert_ptr_nonnull(strstr(r, "NotAuthenticated"));
    free(r);
    soap_close(&s);
    check_stop_leaves_nothing(sim);
}
END_TEST

START_TEST(test_bad_launcher)
{
    struct vcsim_opts o = {.launcher = "/nonexistent/vcsim-launcher"};
    static const char *const bad[] = {"-no-such-flag", NULL};
    struct vcsim_opts o2 = {.extra_args = bad, .no_seed = 1, .stderr_path = "/dev/null"};
    struct vmop_err err = {0};
    struct vcsim *sim = NULL;

    ck_assert_int_eq(vcsim_start(&o, &sim, &err), VMOP_E_NOT_FOUND);
    ck_assert_ptr_null(sim);
    vmop_err_clear(&err);
    /* the launcher rejects the flag and exits: reported, not waited for until the timeout */
    ck_assert_int_eq(vcsim_start(&o2, &sim, &err), VMOP_E_TRANSPORT);
    ck_assert_ptr_null(sim);
    ck_assert_ptr_nonnull(strstr(err.msg, "exit status"));
    ck_assert_int_eq(vcsim_stop(NULL, &err), VMOP_OK);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("vcsim");
    TCase *tc = tcase_create("launcher");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_plain);
    tcase_add_test(tc, test_tls);
    tcase_add_test(tc, test_parent_death);
    tcase_add_test(tc, test_guest_player);
    tcase_add_test(tc, test_pool_address);
    tcase_add_test(tc, test_delay_and_idle);
    tcase_add_test(tc, test_bad_launcher);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{

    curl_global_init(CURL_GLOBAL_DEFAULT);
    int status = vmop_check_run(suite());
    curl_global_cleanup();
    return status;
}
