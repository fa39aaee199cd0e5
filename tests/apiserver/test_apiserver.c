/* test_apiserver.c: integration tests of kube-testapi over HTTP (libcurl): discovery, CRUD,
 * conflicts, generateName, paging, selectors, watch (replay, transitions, 410, live, drops), GC,
 * finalizers, CRDs (status subresource, generation, 415 for SMP, apply upsert), fault injection,
 * TLS + bearer token. One server per suite (unchecked fixture); some tests start their own. */
#include <check.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "harness.h"
#include "vbuf.h"

static struct apiserver *srv;

struct resp {
    long code;
    struct vbuf body;
    struct vbuf headers;
};

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
    struct vbuf *b = ud;
    vbuf_add(b, p, sz * n);
    return vbuf_error(b) ? 0 : sz * n;
}

/* One request; body and headers collected. */
static void do_req(const struct apiserver *a, const char *method, const char *path,
                   const char *ctype, const char *body, const char *accept, struct resp *r)
{
    CURL *c = curl_easy_init();
    struct curl_slist *h = NULL;
    char url[2048], hdr[512];
    memset(r, 0, sizeof(*r));
    vbuf_init(&r->body, 64 << 20);
    vbuf_init(&r->headers, 1 << 20);
    snprintf(url, sizeof(url), "%s%s", a->url, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r->headers);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (a->ca_file[0])
        curl_easy_setopt(c, CURLOPT_CAINFO, a->ca_file);
    if (a->token[0]) {
        snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", a->token);
        h = curl_slist_append(h, hdr);
    }
    if (ctype) {
        snprintf(hdr, sizeof(hdr), "Content-Type: %s", ctype);
        h = curl_slist_append(h, hdr);
    }
    if (accept) {
        snprintf(hdr, sizeof(hdr), "Accept: %s", accept);
        h = curl_slist_append(h, hdr);
    }
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    r->code = curl_easy_perform(c) == CURLE_OK ? 0 : -1;
    if (r->code == 0)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
}

static void resp_free(struct resp *r)
{
    vbuf_free(&r->body);
    vbuf_free(&r->headers);
}

/* Request, expect code, return the parsed body (caller frees). */
static cJSON *req_json(const char *method, const char *path, const char *ctype, const char *body,
                       long want)
{
    struct resp r;
    cJSON *j;
    do_req(srv, method, path, ctype, body, NULL, &r);
    ck_assert_msg(r.code == want, "%s %s: want %ld, got %ld: %s", method, path, want, r.code,
                  vbuf_str(&r.body));
    j = cJSON_Parse(vbuf_str(&r.body));
    resp_free(&r);
    ck_assert_ptr_nonnull(j);
    return j;
}

static const char *jstr(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void setup(void)
{
    struct vmop_err err = {0};
    curl_global_init(CURL_GLOBAL_DEFAULT);
    ck_assert_msg(apiserver_start(NULL, &srv, &err) == VMOP_OK, "%s", err.msg);
}

static void teardown(void)
{
    apiserver_stop(srv, NULL);
    srv = NULL;
    curl_global_cleanup();
}

START_TEST(version_and_discovery)
{
    struct resp r;
    cJSON *j = req_json("GET", "/version", NULL, NULL, 200);
    ck_assert_str_eq(jstr(j, "minor", NULL), "32");
    cJSON_Delete(j);
    do_req(srv, "GET", "/apis", NULL, NULL,
           "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
           &r);
    ck_assert_int_eq(r.code, 200);
    ck_assert_ptr_nonnull(
        strstr(vbuf_str(&r.headers),
               "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"));
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.headers), "Cache-Control: no-cache, private"));
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.body), "\"coordination.k8s.io\""));
    resp_free(&r);
    /* v2beta1 only must not be answered as v2 */
    do_req(srv, "GET", "/api", NULL, NULL,
           "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", &r);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.headers), "v=v2beta1"));
    resp_free(&r);
    j = req_json("GET", "/apis/coordination.k8s.io/v1", NULL, NULL, 200);
    ck_assert_str_eq(jstr(j, "kind", NULL), "APIResourceList");
    cJSON_Delete(j);
    j = req_json("GET", "/nope", NULL, NULL, 404);
    ck_assert_str_eq(jstr(j, "kind", NULL), "Status");
    ck_assert_str_eq(jstr(j, "message", NULL), "the server could not find the requested resource");
    cJSON_Delete(j);
}
END_TEST

START_TEST(create_get_conflicts)
{
    cJSON *j, *j2;
    char body[512], rv[32];
    j = req_json("POST", "/api/v1/namespaces/default/configmaps", "application/json",
                 "{\"metadata\":{\"name\":\"c1\"},\"data\":{\"a\":\"1\"}}", 201);
    ck_assert_ptr_nonnull(jstr(j, "metadata", "uid"));
    snprintf(rv, sizeof(rv), "%s", jstr(j, "metadata", "resourceVersion"));
    cJSON_Delete(j);
    j = req_json("POST", "/api/v1/namespaces/default/configmaps", "application/json",
                 "{\"metadata\":{\"name\":\"c1\"}}", 409);
    ck_assert_str_eq(jstr(j, "reason", NULL), "AlreadyExists");
    ck_assert_str_eq(jstr(j, "message", NULL), "configmaps \"c1\" already exists");
    cJSON_Delete(j);
    j = req_json("GET", "/api/v1/namespaces/default/configmaps/nope", NULL, NULL, 404);
    ck_assert_str_eq(jstr(j, "message", NULL), "configmaps \"nope\" not found");
    ck_assert_str_eq(jstr(j, "details", "kind"), "configmaps");
    cJSON_Delete(j);
    /* update with the right RV, then with the stale one */
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"name\":\"c1\",\"resourceVersion\":\"%s\"},\"data\":{\"a\":\"2\"}}",
             rv);
    j = req_json("PUT", "/api/v1/namespaces/default/configmaps/c1", "application/json", body, 200);
    ck_assert_str_ne(jstr(j, "metadata", "resourceVersion"), rv);
    cJSON_Delete(j);
    j = req_json("PUT", "/api/v1/namespaces/default/configmaps/c1", "application/json", body, 409);
    ck_assert_str_eq(jstr(j, "reason", NULL), "Conflict");
    ck_assert_ptr_nonnull(strstr(jstr(j, "message", NULL), "the object has been modified"));
    cJSON_Delete(j);
    /* generateName */
    j = req_json("POST", "/api/v1/namespaces/default/configmaps", "application/json",
                 "{\"metadata\":{\"generateName\":\"gen-\"}}", 201);
    ck_assert_int_eq(strlen(jstr(j, "metadata", "name")), 9);
    ck_assert(strncmp(jstr(j, "metadata", "name"), "gen-", 4) == 0);
    cJSON_Delete(j);
    /* missing namespace */
    j = req_json("POST", "/api/v1/namespaces/none/configmaps", "application/json",
                 "{\"metadata\":{\"name\":\"x\"}}", 404);
    ck_assert_str_eq(jstr(j, "message", NULL), "namespaces \"none\" not found");
    cJSON_Delete(j);
    /* invalid name */
    j = req_json("POST", "/api/v1/namespaces/default/configmaps", "application/json",
                 "{\"metadata\":{\"name\":\"Bad_Name\"}}", 422);
    ck_assert_str_eq(jstr(j, "reason", NULL), "Invalid");
    cJSON_Delete(j);
    /* strategic merge patch on a built-in is accepted */
    j2 = req_json("PATCH", "/api/v1/namespaces/default/configmaps/c1",
                  "application/strategic-merge-patch+json", "{\"data\":{\"b\":\"3\"}}", 200);
    ck_assert_str_eq(jstr(j2, "data", "b"), "3");
    ck_assert_str_eq(jstr(j2, "data", "a"), "2");
    cJSON_Delete(j2);
}
END_TEST

START_TEST(paging_and_selectors)
{
    int i, pages = 0, total = 0;
    char path[1200], body[256], cont[1024] = "";
    cJSON *j;
    cJSON_Delete(req_json("POST", "/api/v1/namespaces", "application/json",
                          "{\"metadata\":{\"name\":\"paging\"}}", 201));
    for (i = 0; i < 25; i++) {
        snprintf(body, sizeof(body),
                 "{\"metadata\":{\"name\":\"cm-%02d\",\"labels\":{\"tier\":\"%s\"}}}", i,
                 i % 3 == 0   ? "a"
                 : i % 3 == 1 ? "b"
                              : "c");
        cJSON_Delete(req_json("POST", "/api/v1/namespaces/paging/configmaps", "application/json",
                              body, 201));
    }
    do {
        cJSON *items;
        const char *c;
        snprintf(path, sizeof(path), "/api/v1/namespaces/paging/configmaps?limit=10%s%s",
                 cont[0] ? "&continue=" : "", cont);
        j = req_json("GET", path, NULL, NULL, 200);
        items = cJSON_GetObjectItem(j, "items");
        total += cJSON_GetArraySize(items);
        pages++;
        c = jstr(j, "metadata", "continue");
        snprintf(cont, sizeof(cont), "%s", c ? c : "");
        cJSON_Delete(j);
    } while (cont[0] && pages < 10);
    ck_assert_int_eq(pages, 3);
    ck_assert_int_eq(total, 25);
    j = req_json("GET", "/api/v1/namespaces/paging/configmaps?labelSelector=tier+in+(a,b)", NULL,
                 NULL, 200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 17);
    cJSON_Delete(j);
    j = req_json("GET", "/api/v1/namespaces/paging/configmaps?labelSelector=tier%21%3Dc", NULL,
                 NULL, 200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 17);
    cJSON_Delete(j);
    j = req_json("GET", "/api/v1/configmaps?fieldSelector=metadata.name%3Dcm-07", NULL, NULL, 200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 1);
    cJSON_Delete(j);
    j = req_json("GET", "/api/v1/configmaps?fieldSelector=spec.x%3Dy", NULL, NULL, 400);
    ck_assert_str_eq(jstr(j, "reason", NULL), "BadRequest");
    cJSON_Delete(j);
}
END_TEST

/* Collects a watch stream until timeoutSeconds or max lines. */
struct watch_buf {
    struct vbuf b;
    int lines, max_lines;
};

static size_t on_watch(char *p, size_t sz, size_t n, void *ud)
{
    struct watch_buf *w = ud;
    size_t i;
    vbuf_add(&w->b, p, sz * n);
    for (i = 0; i < sz * n; i++)
        if (p[i] == '\n')
            w->lines++;
    if (w->max_lines && w->lines >= w->max_lines)
        return 0;
    return vbuf_error(&w->b) ? 0 : sz * n;
}

static int watch(const struct apiserver *a, const char *path, int max_lines, struct vbuf *out,
                 long *ret_curl_rc)
{
    CURL *c = curl_easy_init();
    struct watch_buf w = {.max_lines = max_lines};
    char url[2048];
    CURLcode rc;
    vbuf_init(&w.b, 16 << 20);
    snprintf(url, sizeof(url), "%s%s", a->url, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_watch);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &w);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    rc = curl_easy_perform(c);
    if (ret_curl_rc)
        *ret_curl_rc = rc;
    curl_easy_cleanup(c);
    *out = w.b;
    return w.lines;
}

START_TEST(watch_replay_and_transitions)
{
    cJSON *j;
    char rv[32], path[512];
    struct vbuf out;
    j = req_json("POST", "/api/v1/namespaces", "application/json",
                 "{\"metadata\":{\"name\":\"w\"}}", 201);
    snprintf(rv, sizeof(rv), "%s", jstr(j, "metadata", "resourceVersion"));
    cJSON_Delete(j);
    cJSON_Delete(req_json("POST", "/api/v1/namespaces/w/configmaps", "application/json",
                          "{\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"1\"}}}", 201));
    cJSON_Delete(req_json("PATCH", "/api/v1/namespaces/w/configmaps/a",
                          "application/merge-patch+json", "{\"data\":{\"k\":\"v\"}}", 200));
    cJSON_Delete(req_json("PATCH", "/api/v1/namespaces/w/configmaps/a",
                          "application/merge-patch+json",
                          "{\"metadata\":{\"labels\":{\"x\":\"2\"}}}", 200));
    cJSON_Delete(req_json("DELETE", "/api/v1/namespaces/w/configmaps/a", NULL, NULL, 200));
    /* everything */
    snprintf(path, sizeof(path),
             "/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=%s&timeoutSeconds=1", rv);
    ck_assert_int_eq(watch(srv, path, 0, &out, NULL), 4);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&out), "\"type\":\"ADDED\""));
    ck_assert_ptr_nonnull(strstr(vbuf_str(&out), "\"type\":\"DELETED\""));
    vbuf_free(&out);
    /* x=1 only: ADDED, MODIFIED, then DELETED when it leaves the selector, nothing after */
    snprintf(path, sizeof(path),
             "/api/v1/namespaces/w/configmaps?watch=1&resourceVersion=%s&timeoutSeconds=1"
             "&labelSelector=x%%3D1",
             rv);
    ck_assert_int_eq(watch(srv, path, 0, &out, NULL), 3);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&out), "\"type\":\"MODIFIED\""));
    ck_assert_ptr_nonnull(strstr(strstr(vbuf_str(&out), "MODIFIED"), "\"type\":\"DELETED\""));
    vbuf_free(&out);
    /* resourceVersion=0: synthetic ADDED for current objects (none left in w) + bookmark at end */
    cJSON_Delete(req_json("POST", "/api/v1/namespaces/w/configmaps", "application/json",
                          "{\"metadata\":{\"name\":\"b\"}}", 201));
    ck_assert_int_eq(watch(srv,
                           "/api/v1/namespaces/w/configmaps?watch=1&resourceVersion=0&"
                           "timeoutSeconds=1&allowWatchBookmarks=true",
                           0, &out, NULL),
                     2);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&out), "\"BOOKMARK\""));
    vbuf_free(&out);
}
END_TEST

START_TEST(watch_expired_410)
{
    struct apiserver *small = NULL;
    struct apiserver_opts o = {.watch_window = 5};
    struct vmop_err err = {0};
    struct vbuf out;
    int i;
    ck_assert_msg(apiserver_start(&o, &small, &err) == VMOP_OK, "%s", err.msg);
    for (i = 0; i < 12; i++) {
        struct resp r;
        char body[128];
        snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"e%d\"}}", i);
        do_req(small, "POST", "/api/v1/namespaces/default/configmaps", "application/json", body,
               NULL, &r);
        ck_assert_int_eq(r.code, 201);
        resp_free(&r);
    }
    ck_assert_int_eq(watch(small, "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=2",
                           0, &out, NULL),
                     1);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&out), "\"type\":\"ERROR\""));
    ck_assert_ptr_nonnull(strstr(vbuf_str(&out), "\"code\":410"));
    ck_assert_ptr_nonnull(strstr(vbuf_str(&out), "\"reason\":\"Expired\""));
    vbuf_free(&out);
    apiserver_stop(small, NULL);
}
END_TEST

struct writer {
    volatile int stop;
    int writes;
};

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    long long deadline = time(NULL) + 15;
    while (!w->stop && time(NULL) < deadline) {
        struct resp r;
        char body[128];
        snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"live%d\"}}", w->writes++);
        do_req(srv, "POST", "/api/v1/namespaces/default/configmaps", "application/json", body, NULL,
               &r);
        resp_free(&r);
        usleep(50 * 1000); /* pacing only: the watcher stops the loop */
    }
    return NULL;
}

START_TEST(watch_live)
{
    cJSON *j = req_json("GET", "/api/v1/namespaces/default/configmaps", NULL, NULL, 200);
    char path[256];
    struct writer w = {0};
    pthread_t t;
    struct vbuf out;
    snprintf(path, sizeof(path),
             "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%s&timeoutSeconds=20",
             jstr(j, "metadata", "resourceVersion"));
    cJSON_Delete(j);
    pthread_create(&t, NULL, writer_main, &w);
    ck_assert_int_ge(watch(srv, path, 2, &out, NULL), 2);
    w.stop = 1;
    pthread_join(t, NULL);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&out), "\"name\":\"live0\""));
    vbuf_free(&out);
}
END_TEST

static void *dropper_main(void *arg)
{
    /* drops watch streams until the watcher has returned (bounded) */
    struct writer *w = arg;
    long long deadline = time(NULL) + 15;
    while (!w->stop && time(NULL) < deadline) {
        struct resp r;
        do_req(srv, "POST", "/_testapi/faults", "application/json", "{\"dropWatches\":true}", NULL,
               &r);
        resp_free(&r);
        usleep(100 * 1000);
    }
    return NULL;
}

START_TEST(faults)
{
    struct resp r;
    struct writer w = {0};
    pthread_t t;
    struct vbuf out;
    long crc = 0;
    cJSON *j = req_json("POST", "/_testapi/faults", "application/json",
                        "{\"rules\":[{\"method\":\"GET\",\"path\":\"^/api/v1/namespaces/default/"
                        "configmaps$\",\"code\":500,\"count\":2},{\"method\":\"POST\",\"path\":"
                        "\"configmaps\",\"code\":429,\"count\":1}]}",
                        200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "rules")), 2);
    cJSON_Delete(j);
    cJSON_Delete(req_json("GET", "/api/v1/namespaces/default/configmaps", NULL, NULL, 500));
    cJSON_Delete(req_json("GET", "/api/v1/namespaces/default/configmaps", NULL, NULL, 500));
    cJSON_Delete(req_json("GET", "/api/v1/namespaces/default/configmaps", NULL, NULL, 200));
    do_req(srv, "POST", "/api/v1/namespaces/default/configmaps", "application/json",
           "{\"metadata\":{\"name\":\"f1\"}}", NULL, &r);
    ck_assert_int_eq(r.code, 429);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.headers), "Retry-After: 1"));
    resp_free(&r);
    cJSON_Delete(req_json("POST", "/api/v1/namespaces/default/configmaps", "application/json",
                          "{\"metadata\":{\"name\":\"f1\"}}", 201));
    /* a dropped watch ends without the final chunk */
    pthread_create(&t, NULL, dropper_main, &w);
    watch(srv, "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=20", 0, &out, &crc);
    w.stop = 1;
    pthread_join(t, NULL);
    ck_assert_int_ne(crc, CURLE_OK);
    vbuf_free(&out);
    cJSON_Delete(req_json("DELETE", "/_testapi/faults", NULL, NULL, 200));
}
END_TEST

static long wait_gone(const char *path)
{
    long long deadline = time(NULL) + 10;
    struct resp r;
    for (;;) {
        do_req(srv, "GET", path, NULL, NULL, NULL, &r);
        resp_free(&r);
        if (r.code == 404 || time(NULL) > deadline)
            return r.code;
        usleep(20 * 1000);
    }
}

START_TEST(gc_and_finalizers)
{
    cJSON *j;
    char body[512];
    j = req_json("POST", "/api/v1/namespaces/default/configmaps", "application/json",
                 "{\"metadata\":{\"name\":\"owner\"}}", 201);
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"name\":\"dep\",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":"
             "\"ConfigMap\",\"name\":\"owner\",\"uid\":\"%s\"}]}}",
             jstr(j, "metadata", "uid"));
    cJSON_Delete(j);
    cJSON_Delete(
        req_json("POST", "/api/v1/namespaces/default/configmaps", "application/json", body, 201));
    cJSON_Delete(req_json("GET", "/api/v1/namespaces/default/configmaps/dep", NULL, NULL, 200));
    cJSON_Delete(req_json("DELETE", "/api/v1/namespaces/default/configmaps/owner",
                          "application/json", "{\"propagationPolicy\":\"Background\"}", 200));
    ck_assert_int_eq(wait_gone("/api/v1/namespaces/default/configmaps/dep"), 404);
    /* finalizer keeps the object with a deletionTimestamp */
    cJSON_Delete(req_json("POST", "/api/v1/namespaces/default/configmaps", "application/json",
                          "{\"metadata\":{\"name\":\"fin\",\"finalizers\":[\"x/y\"]}}", 201));
    j = req_json("DELETE", "/api/v1/namespaces/default/configmaps/fin", NULL, NULL, 200);
    ck_assert_ptr_nonnull(jstr(j, "metadata", "deletionTimestamp"));
    cJSON_Delete(j);
    j = req_json("PATCH", "/api/v1/namespaces/default/configmaps/fin",
                 "application/merge-patch+json", "{\"metadata\":{\"finalizers\":[\"x/y\",\"n\"]}}",
                 422);
    cJSON_Delete(j);
    cJSON_Delete(req_json("PATCH", "/api/v1/namespaces/default/configmaps/fin",
                          "application/merge-patch+json", "{\"metadata\":{\"finalizers\":null}}",
                          200));
    cJSON_Delete(req_json("GET", "/api/v1/namespaces/default/configmaps/fin", NULL, NULL, 404));
    /* namespace deletion empties it, then removes it */
    cJSON_Delete(req_json("POST", "/api/v1/namespaces", "application/json",
                          "{\"metadata\":{\"name\":\"gone\"}}", 201));
    cJSON_Delete(req_json("POST", "/api/v1/namespaces/gone/configmaps", "application/json",
                          "{\"metadata\":{\"name\":\"c\"}}", 201));
    cJSON_Delete(req_json("DELETE", "/api/v1/namespaces/gone", NULL, NULL, 200));
    ck_assert_int_eq(wait_gone("/api/v1/namespaces/gone"), 404);
    cJSON_Delete(req_json("GET", "/api/v1/namespaces/gone/configmaps/c", NULL, NULL, 404));
    cJSON_Delete(req_json("DELETE", "/api/v1/namespaces/default", NULL, NULL, 403));
}
END_TEST

static const char crd[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"gadgets.example.com\"},\"spec\":{\"group\":\"example.com\","
    "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"gadgets\",\"kind\":\"Gadget\"},"
    "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,\"subresources\":{\"status\":"
    "{}},\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":"
    "\"object\",\"x-kubernetes-preserve-unknown-fields\":true},\"status\":{\"type\":\"object\","
    "\"x-kubernetes-preserve-unknown-fields\":true}}}}}]}}";

START_TEST(crd_lifecycle)
{
    cJSON *j;
    const cJSON *conds, *c;
    int established = 0;
    char body[512];
    j = req_json("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                 "application/json", crd, 201);
    conds = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "conditions");
    cJSON_ArrayForEach(c, conds) if (strcmp(jstr(c, "type", NULL), "Established") == 0 &&
                                     strcmp(jstr(c, "status", NULL), "True") == 0) established = 1;
    ck_assert(established);
    cJSON_Delete(j);
    j = req_json("POST", "/apis/example.com/v1/namespaces/default/gadgets", "application/json",
                 "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Gadget\",\"metadata\":{\"name\":"
                 "\"g1\"},\"spec\":{\"a\":1},\"status\":{\"ignored\":true}}",
                 201);
    ck_assert_ptr_null(cJSON_GetObjectItem(j, "status"));
    ck_assert_int_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "generation")->valueint, 1);
    cJSON_Delete(j);
    /* spec change bumps generation; status write does not; label change does not */
    j = req_json("PATCH", "/apis/example.com/v1/namespaces/default/gadgets/g1",
                 "application/merge-patch+json", "{\"spec\":{\"a\":2}}", 200);
    ck_assert_int_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "generation")->valueint, 2);
    cJSON_Delete(j);
    j = req_json("PATCH", "/apis/example.com/v1/namespaces/default/gadgets/g1/status",
                 "application/merge-patch+json",
                 "{\"spec\":{\"a\":9},\"status\":{\"phase\":\"Ready\"}}", 200);
    ck_assert_str_eq(jstr(j, "status", "phase"), "Ready");
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "spec"), "a")->valueint, 2);
    ck_assert_int_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "generation")->valueint, 2);
    cJSON_Delete(j);
    /* PUT without resourceVersion on a CR is 422 */
    j = req_json("PUT", "/apis/example.com/v1/namespaces/default/gadgets/g1", "application/json",
                 "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Gadget\",\"metadata\":{\"name\":"
                 "\"g1\"},\"spec\":{}}",
                 422);
    ck_assert_ptr_nonnull(strstr(jstr(j, "message", NULL), "must be specified for an update"));
    cJSON_Delete(j);
    /* SMP on a CR is 415 */
    j = req_json("PATCH", "/apis/example.com/v1/namespaces/default/gadgets/g1",
                 "application/strategic-merge-patch+json", "{\"spec\":{}}", 415);
    ck_assert_str_eq(jstr(j, "reason", NULL), "UnsupportedMediaType");
    cJSON_Delete(j);
    /* JSON patch with a failing test op */
    cJSON_Delete(req_json("PATCH", "/apis/example.com/v1/namespaces/default/gadgets/g1",
                          "application/json-patch+json",
                          "[{\"op\":\"test\",\"path\":\"/spec/a\",\"value\":3}]", 422));
    j = req_json("PATCH", "/apis/example.com/v1/namespaces/default/gadgets/g1",
                 "application/json-patch+json",
                 "[{\"op\":\"test\",\"path\":\"/spec/a\",\"value\":2},{\"op\":\"add\",\"path\":"
                 "\"/spec/b\",\"value\":[1]}]",
                 200);
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "spec"), "b"));
    cJSON_Delete(j);
    /* server-side apply creates */
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Gadget\",\"metadata\":{\"name\":"
             "\"g2\"},\"spec\":{\"z\":true}}");
    cJSON_Delete(req_json("PATCH",
                          "/apis/example.com/v1/namespaces/default/gadgets/g2?fieldManager=t",
                          "application/apply-patch+yaml", body, 201));
    cJSON_Delete(req_json("PATCH",
                          "/apis/example.com/v1/namespaces/default/gadgets/g2?fieldManager=t",
                          "application/apply-patch+yaml", body, 200));
    /* deleting the CRD removes its objects and the endpoint */
    cJSON_Delete(req_json("DELETE",
                          "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                          "gadgets.example.com",
                          NULL, NULL, 200));
    cJSON_Delete(
        req_json("GET", "/apis/example.com/v1/namespaces/default/gadgets", NULL, NULL, 404));
}
END_TEST

START_TEST(tls_and_token)
{
    struct apiserver *s2 = NULL;
    struct apiserver_opts o = {.tls = 1, .token = "test-token-123"};
    struct vmop_err err = {0};
    struct resp r;
    char *saved;
    ck_assert_msg(apiserver_start(&o, &s2, &err) == VMOP_OK, "%s", err.msg);
    ck_assert(strncmp(s2->url, "https://", 8) == 0);
    ck_assert_str_ne(s2->ca_file, "");
    do_req(s2, "GET", "/api/v1/namespaces", NULL, NULL, NULL, &r);
    ck_assert_int_eq(r.code, 200);
    resp_free(&r);
    saved = s2->token;
    s2->token = "";
    do_req(s2, "GET", "/api/v1/namespaces", NULL, NULL, NULL, &r);
    ck_assert_int_eq(r.code, 401);
    ck_assert_ptr_nonnull(strstr(vbuf_str(&r.body), "\"reason\":\"Unauthorized\""));
    resp_free(&r);
    do_req(s2, "GET", "/version", NULL, NULL, NULL, &r);
    ck_assert_int_eq(r.code, 200);
    resp_free(&r);
    s2->token = saved;
    apiserver_stop(s2, NULL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("apiserver");
    TCase *t = tcase_create("http");
    tcase_add_unchecked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 60);
    tcase_add_test(t, version_and_discovery);
    tcase_add_test(t, create_get_conflicts);
    tcase_add_test(t, paging_and_selectors);
    tcase_add_test(t, watch_replay_and_transitions);
    tcase_add_test(t, watch_expired_410);
    tcase_add_test(t, watch_live);
    tcase_add_test(t, faults);
    tcase_add_test(t, gc_and_finalizers);
    tcase_add_test(t, crd_lifecycle);
    tcase_add_test(t, tls_and_token);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return vmop_check_run(suite());
}
