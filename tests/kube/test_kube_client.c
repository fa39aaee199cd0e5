/* test_kube_client.c: unit tests of the client against a scripted loopback HTTP server
 * (mock_http.c): keep-alive, bearer auth, token re-read on 401, retries (Retry-After, caps, POST),
 * Status errors, timeouts, paging, paths, watch streams (chunk splits, ERROR 410, HTTP 410, drops,
 * cancellation), the informer (resume, duplicates, 410 relist diff, indexes) and the event
 * recorder (aggregation). Suite: unit.
 */
#include <check.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_main.h"
#include "kube_client.h"
#include "kube_events.h"
#include "kube_informer.h"
#include "kube_util.h"
#include "mock_http.h"

static struct kube_client *client_for(struct mock_server *m, const struct kube_client_opts *o,
                                      const char *token, const char *token_file)
{
    struct kube_config cfg = {.server = m->url,
                              .namespace = "ns1",
                              .token = (char *)token,
                              .token_file = (char *)token_file};
    struct kube_client *c = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(kube_client_new(&cfg, o, &c, &err), VMOP_OK);
    return c;
}

static const struct kube_resource VMS = {"example.com", "v1", "virtualmachines", 1};

/* ---- plain requests ---- */

static int h_ok(void *ud, const struct mock_req *r, int fd)
{
    mock_reply(fd, 200, NULL, "{\"kind\":\"VirtualMachine\",\"metadata\":{\"name\":\"vm1\"}}");
    return 0;
}

START_TEST(keepalive_and_auth)
{
    struct mock_server m;
    ck_assert_int_eq(mock_start(&m, h_ok, NULL), 0);
    struct kube_client *c = client_for(&m, NULL, "tok123", NULL);
    struct vmop_err err = {0};
    for (int i = 0; i < 5; i++) {
        cJSON *o = NULL;
        ck_assert_int_eq(kube_get(c, &VMS, NULL, "vm1", NULL, &o, &err), VMOP_OK);
        ck_assert_str_eq(kube_obj_name(o), "vm1");
        cJSON_Delete(o);
    }
    ck_assert_int_eq(mock_conns(&m), 1); /* one persistent connection */
    struct mock_req r;
    ck_assert_int_eq(mock_req_at(&m, 4, &r), 0);
    ck_assert_str_eq(r.auth, "Bearer tok123");
    ck_assert_str_eq(r.method, "GET");
    ck_assert_str_eq(r.path, "/apis/example.com/v1/namespaces/ns1/virtualmachines/vm1");
    ck_assert_str_eq(kube_client_namespace(c), "ns1");
    kube_client_free(c);
    mock_stop(&m);
}
END_TEST

struct script {
    int statuses[8];
    const char *extra[8];
    int n;
};

static int h_script(void *ud, const struct mock_req *r, int fd)
{
    struct script *s = ud;
    int i = r->index < s->n ? r->index : s->n - 1;
    int st = s->statuses[i];
    if (st == 200)
        mock_reply(fd, 200, NULL, "{\"kind\":\"X\",\"metadata\":{\"name\":\"x\"}}");
    else
        mock_reply(fd, st, s->extra[i],
                   st == 409 ? "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                               "\"message\":\"Operation cannot be fulfilled: the object has been "
                               "modified\",\"reason\":\"Conflict\",\"details\":{\"name\":\"x\"},"
                               "\"code\":409}"
                             : "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Busy\","
                               "\"message\":\"try later\",\"code\":503}");
    return 0;
}

START_TEST(retries)
{
    struct script s = {.statuses = {503, 200}, .extra = {"Retry-After: 1\r\n", NULL}, .n = 2};
    struct mock_server m;
    ck_assert_int_eq(mock_start(&m, h_script, &s), 0);
    struct kube_client_opts o = {.retry_base_ms = 10, .retry_max_ms = 300};
    struct kube_client *c = client_for(&m, &o, NULL, NULL);
    struct vmop_err err = {0};
    cJSON *obj = NULL;
    int64_t t0 = vmop_mono_ms();
    ck_assert_msg(kube_get(c, &VMS, "ns", "x", NULL, &obj, &err) == VMOP_OK, "%s", err.msg);
    cJSON_Delete(obj);
    int64_t dt = vmop_mono_ms() - t0;
    ck_assert_int_ge(dt, 250); /* Retry-After honoured, capped at retry_max_ms */
    ck_assert_int_lt(dt, 900);
    ck_assert_uint_eq(kube_client_retries(c), 1);
    kube_client_free(c);
    mock_stop(&m);

    /* exhausted: 1 + max_retries attempts, then the Status */
    struct script s2 = {.statuses = {503}, .n = 1};
    ck_assert_int_eq(mock_start(&m, h_script, &s2), 0);
    struct kube_client_opts o2 = {.retry_base_ms = 1, .max_retries = 2};
    c = client_for(&m, &o2, NULL, NULL);
    ck_assert_int_eq(kube_get(c, &VMS, "ns", "x", NULL, &obj, &err), VMOP_E_KUBE);
    ck_assert_str_eq(err.fault, "Busy");
    ck_assert_int_eq(err.http_status, 503);
    ck_assert_int_eq(mock_reqs(&m), 3);
    /* POST is not retried on 500 */
    struct script s3 = {.statuses = {500}, .n = 1};
    kube_client_free(c);
    mock_stop(&m);
    ck_assert_int_eq(mock_start(&m, h_script, &s3), 0);
    c = client_for(&m, &o2, NULL, NULL);
    cJSON *body = cJSON_Parse("{\"metadata\":{\"name\":\"x\"}}");
    vmop_err_clear(&err);
    ck_assert_int_eq(kube_create(c, &VMS, "ns", body, NULL, NULL, &err), VMOP_E_KUBE);
    ck_assert_int_eq(mock_reqs(&m), 1);
    cJSON_Delete(body);
    kube_client_free(c);
    mock_stop(&m);
}
END_TEST

START_TEST(conflict_is_typed)
{
    struct script s = {.statuses = {409}, .n = 1};
    struct mock_server m;
    ck_assert_int_eq(mock_start(&m, h_script, &s), 0);
    struct kube_client *c = client_for(&m, NULL, NULL, NULL);
    struct vmop_err err = {0};
    struct kube_status st;
    struct kube_opts o = {.ret_status = &st, .field_manager = "vmop"};
    cJSON *obj = cJSON_Parse("{\"metadata\":{\"name\":\"x\",\"namespace\":\"other\","
                             "\"resourceVersion\":\"5\"},\"spec\":{}}");
    ck_assert_int_eq(kube_update(c, &VMS, NULL, obj, &o, NULL, &err), VMOP_E_CONFLICT);
    ck_assert_str_eq(err.fault, "Conflict");
    ck_assert_int_eq(err.http_status, 409);
    ck_assert_str_eq(st.name, "x");
    ck_assert_int_eq(mock_reqs(&m), 1); /* a conflict is never retried */
    struct mock_req r;
    mock_req_at(&m, 0, &r);
    ck_assert_str_eq(r.method, "PUT");
    ck_assert_str_eq(r.path,
                     "/apis/example.com/v1/namespaces/other/virtualmachines/x?fieldManager=vmop");
    ck_assert_str_eq(r.ctype, "application/json");
    ck_assert_ptr_nonnull(strstr(r.body, "\"resourceVersion\":\"5\""));
    cJSON_Delete(obj);
    kube_client_free(c);
    mock_stop(&m);
}
END_TEST

struct tokstate {
    const char *path;
};

static int h_token(void *ud, const struct mock_req *r, int fd)
{
    if (strcmp(r->auth, "Bearer new-token") != 0) {
        mock_reply(fd, 401, NULL,
                   "{\"kind\":\"Status\",\"reason\":\"Unauthorized\",\"code\":401,"
                   "\"message\":\"Unauthorized\"}");
        return 0;
    }
    return h_ok(ud, r, fd);
}

START_TEST(token_reread_on_401)
{
    char dir[] = "/tmp/kube-token-XXXXXX", path[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/token", dir);
    FILE *f = fopen(path, "w");
    fputs("old-token\n", f);
    fclose(f);
    struct mock_server m;
    ck_assert_int_eq(mock_start(&m, h_token, NULL), 0);
    struct kube_client *c = client_for(&m, NULL, "old-token", path);
    /* the kubelet rotates the projected token */
    f = fopen(path, "w");
    fputs("new-token\n", f);
    fclose(f);
    struct vmop_err err = {0};
    cJSON *o = NULL;
    ck_assert_msg(kube_get(c, &VMS, "ns", "vm1", NULL, &o, &err) == VMOP_OK, "%s", err.msg);
    cJSON_Delete(o);
    ck_assert_int_eq(mock_reqs(&m), 2);
    /* a wrong token with no file: 401 is VMOP_E_AUTH and never shows the token */
    kube_client_free(c);
    c = client_for(&m, NULL, "wrong-secret", NULL);
    ck_assert_int_eq(kube_get(c, &VMS, "ns", "vm1", NULL, &o, &err), VMOP_E_AUTH);
    ck_assert_ptr_null(strstr(err.msg, "wrong-secret"));
    kube_client_free(c);
    mock_stop(&m);
    unlink(path);
    rmdir(dir);
}
END_TEST

static int h_hang(void *ud, const struct mock_req *r, int fd)
{
    struct mock_server *m = ud;
    while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 50) > 0) {
            char b[64];
            if (recv(fd, b, sizeof(b), MSG_DONTWAIT) == 0)
                return 1; /* the client gave up */
        }
    }
    return 1;
}

START_TEST(request_timeout)
{
    struct mock_server m;
    ck_assert_int_eq(mock_start(&m, h_hang, &m), 0);
    struct kube_client_opts o = {.timeout_ms = 300, .max_retries = KUBE_NO_RETRIES};
    struct kube_client *c = client_for(&m, &o, NULL, NULL);
    struct vmop_err err = {0};
    cJSON *obj = NULL;
    int64_t t0 = vmop_mono_ms();
    ck_assert_int_eq(kube_get(c, &VMS, "ns", "x", NULL, &obj, &err), VMOP_E_TIMEOUT);
    ck_assert_int_lt(vmop_mono_ms() - t0, 3000);
    kube_client_free(c);
    mock_stop(&m);
}
END_TEST

static int h_pages(void *ud, const struct mock_req *r, int fd)
{
    if (!strstr(r->path, "continue="))
        mock_reply(fd, 200, NULL,
                   "{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"10\",\"continue\":"
                   "\"c/1\"},\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":"
                   "\"b\"}}]}");
    else
        mock_reply(fd, 200, NULL,
                   "{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"11\"},\"items\":[{"
                   "\"metadata\":{\"name\":\"c\"}}]}");
    return 0;
}

START_TEST(paging_and_paths)
{
    struct mock_server m;
    ck_assert_int_eq(mock_start(&m, h_pages, NULL), 0);
    struct kube_client *c = client_for(&m, NULL, NULL, NULL);
    struct vmop_err err = {0};
    cJSON *l = NULL;
    struct kube_opts o = {.limit = 2, .label_selector = "app in (a,b)", .resource_version = "0"};
    ck_assert_int_eq(kube_list_all(c, &VMS, NULL, &o, &l, &err), VMOP_OK);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 3);
    ck_assert_str_eq(kube_json_path_str(l, "metadata", "resourceVersion"), "10");
    ck_assert_ptr_null(kube_json_path_str(l, "metadata", "continue"));
    cJSON_Delete(l);
    struct mock_req r;
    mock_req_at(&m, 0, &r);
    ck_assert_str_eq(r.path, "/apis/example.com/v1/virtualmachines?labelSelector=app%20in%20%28a%"
                             "2Cb%29&resourceVersion=0&limit=2");
    mock_req_at(&m, 1, &r);
    ck_assert_str_eq(r.path, "/apis/example.com/v1/virtualmachines?labelSelector=app%20in%20%28a%"
                             "2Cb%29&limit=2&continue=c%2F1");
    kube_client_free(c);
    mock_stop(&m);

    char *p = NULL;
    ck_assert_int_eq(kube_resource_path(&kube_res_namespaces, "ignored", "ns1", NULL, &p, &err),
                     VMOP_OK);
    ck_assert_str_eq(p, "/api/v1/namespaces/ns1");
    free(p);
    ck_assert_int_eq(kube_resource_path(&kube_res_leases, "kube-system", "l", NULL, &p, &err),
                     VMOP_OK);
    ck_assert_str_eq(p, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l");
    free(p);
    ck_assert_int_eq(kube_resource_path(&VMS, "n", "a:b", "status", &p, &err), VMOP_OK);
    ck_assert_str_eq(p, "/apis/example.com/v1/namespaces/n/virtualmachines/a%3Ab/status");
    free(p);
    ck_assert_int_eq(kube_resource_path(&VMS, "n", "../x", NULL, &p, &err), VMOP_E_INVALID);
    ck_assert_int_eq(kube_resource_path(&VMS, "n", "..", NULL, &p, &err), VMOP_E_INVALID);
    ck_assert_int_eq(kube_resource_path(&VMS, "n", "", NULL, &p, &err), VMOP_E_INVALID);
}
END_TEST

/* ---- watch ---- */

static const char *EVENTS =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"11\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"12\"}}}"
    "\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"13\"}}}\n";

struct wmode {
    int mode; /* 0 split events + clean end, 1 ERROR 410, 2 HTTP 410, 3 drop, 4 hang */
    struct mock_server *m;
};

static int h_watch(void *ud, const struct mock_req *r, int fd)
{
    struct wmode *w = ud;
    if (w->mode == 2) {
        mock_reply(fd, 410, NULL,
                   "{\"kind\":\"Status\",\"reason\":\"Gone\",\"code\":410,\"message\":\"gone\"}");
        return 0;
    }
    mock_chunked_start(fd);
    if (w->mode == 4)
        return h_hang(w->m, r, fd);
    size_t n = strlen(EVENTS);
    /* awkward chunking: 7, 50, 1, rest */
    size_t cuts[] = {0, 7, 57, 58, n};
    for (int i = 0; i < 4; i++)
        mock_chunk(fd, EVENTS + cuts[i], cuts[i + 1] - cuts[i]);
    if (w->mode == 1) {
        const char *e = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":"
                        "\"Failure\",\"message\":\"too old resource version: 5 (100)\","
                        "\"reason\":\"Expired\",\"code\":410}}\n";
        mock_chunk(fd, e, strlen(e));
    }
    if (w->mode == 3)
        return 1; /* close without the final chunk */
    mock_chunk_end(fd);
    return 0;
}

struct seen {
    int n;
    char rv[8][16];
    int types[8];
};

static int on_ev(void *ud, enum kube_event_type t, cJSON *obj)
{
    struct seen *s = ud;
    if (s->n < 8) {
        snprintf(s->rv[s->n], sizeof(s->rv[0]), "%s", kube_obj_rv(obj));
        s->types[s->n] = t;
    }
    s->n++;
    cJSON_Delete(obj);
    return 0;
}

static void *set_flag_later(void *arg)
{
    vmop_sleep_ms(200, NULL);
    __atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
    return NULL;
}

START_TEST(watch_streams)
{
    struct wmode w = {0};
    struct mock_server m;
    ck_assert_int_eq(mock_start(&m, h_watch, &w), 0);
    w.m = &m;
    struct kube_client *c = client_for(&m, NULL, NULL, NULL);
    struct vmop_err err = {0};
    struct seen s = {0};
    struct kube_opts o = {.resource_version = "10", .allow_bookmarks = 1, .timeout_seconds = 30};
    ck_assert_msg(kube_watch(c, &VMS, "ns", &o, on_ev, &s, &err) == VMOP_OK, "%s", err.msg);
    ck_assert_int_eq(s.n, 3);
    ck_assert_int_eq(s.types[0], KUBE_EV_ADDED);
    ck_assert_int_eq(s.types[1], KUBE_EV_MODIFIED);
    ck_assert_int_eq(s.types[2], KUBE_EV_BOOKMARK);
    ck_assert_str_eq(s.rv[2], "13");
    struct mock_req r;
    mock_req_at(&m, 0, &r);
    ck_assert_str_eq(r.path, "/apis/example.com/v1/namespaces/ns/virtualmachines?watch=1&"
                             "allowWatchBookmarks=true&timeoutSeconds=30&resourceVersion=10");

    w.mode = 1;
    memset(&s, 0, sizeof(s));
    ck_assert_int_eq(kube_watch(c, &VMS, "ns", &o, on_ev, &s, &err), VMOP_E_GONE);
    ck_assert_int_eq(s.n, 3); /* the events before the ERROR were delivered */
    ck_assert_str_eq(err.fault, "Expired");

    w.mode = 2;
    vmop_err_clear(&err);
    ck_assert_int_eq(kube_watch(c, &VMS, "ns", &o, on_ev, &s, &err), VMOP_E_GONE);

    w.mode = 3;
    vmop_err_clear(&err);
    memset(&s, 0, sizeof(s));
    ck_assert_int_eq(kube_watch(c, &VMS, "ns", &o, on_ev, &s, &err), VMOP_E_TRANSPORT);
    ck_assert_int_eq(s.n, 3);

    /* cancellation of an idle stream */
    w.mode = 4;
    vmop_err_clear(&err);
    int cancel = 0;
    pthread_t th;
    pthread_create(&th, NULL, set_flag_later, &cancel);
    o.cancel = &cancel;
    int64_t t0 = vmop_mono_ms();
    ck_assert_int_eq(kube_watch(c, &VMS, "ns", &o, on_ev, &s, &err), VMOP_E_CANCELED);
    ck_assert_int_lt(vmop_mono_ms() - t0, 3000);
    pthread_join(th, NULL);
    kube_client_free(c);
    mock_stop(&m);
}
END_TEST

/* ---- informer ---- */

struct inf_script {
    struct mock_server *m;
    char watch_rvs[8][16];
    int n_watch;
    int n_list;
    pthread_mutex_t lock;
};

static void ev_line(int fd, const char *type, const char *name, const char *rv, const char *app)
{
    char buf[512];
    if (name)
        snprintf(buf, sizeof(buf),
                 "{\"type\":\"%s\",\"object\":{\"metadata\":{\"name\":\"%s\",\"namespace\":"
                 "\"ns\",\"resourceVersion\":\"%s\",\"labels\":{\"app\":\"%s\"}}}}\n",
                 type, name, rv, app);
    else
        snprintf(buf, sizeof(buf),
                 "{\"type\":\"%s\",\"object\":{\"metadata\":{\"resourceVersion\":\"%s\"}}}\n", type,
                 rv);
    mock_chunk(fd, buf, strlen(buf));
}

static int h_informer(void *ud, const struct mock_req *r, int fd)
{
    struct inf_script *s = ud;
    const char *rvp = strstr(r->path, "resourceVersion=");
    if (!strstr(r->path, "watch=1")) {
        pthread_mutex_lock(&s->lock);
        int n = s->n_list++;
        pthread_mutex_unlock(&s->lock);
        if (n == 0)
            mock_reply(fd, 200, NULL,
                       "{\"metadata\":{\"resourceVersion\":\"2\"},\"items\":["
                       "{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":"
                       "\"1\",\"labels\":{\"app\":\"x\"}}},"
                       "{\"metadata\":{\"name\":\"b\",\"namespace\":\"ns\",\"resourceVersion\":"
                       "\"2\",\"labels\":{\"app\":\"y\"}}}]}");
        else
            mock_reply(fd, 200, NULL,
                       "{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":["
                       "{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":"
                       "\"3\",\"labels\":{\"app\":\"x\"}}},"
                       "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"resourceVersion\":"
                       "\"6\",\"labels\":{\"app\":\"x\"}}},"
                       "{\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\",\"resourceVersion\":"
                       "\"7\",\"labels\":{\"app\":\"y\"}}}]}");
        return 0;
    }
    pthread_mutex_lock(&s->lock);
    int n = s->n_watch++;
    if (n < 8)
        sscanf(rvp ? rvp + 16 : "-", "%15[^&]", s->watch_rvs[n]);
    pthread_mutex_unlock(&s->lock);
    mock_chunked_start(fd);
    if (n == 0) {
        ev_line(fd, "MODIFIED", "a", "3", "x");
        ev_line(fd, "ADDED", "c", "4", "x");
        ev_line(fd, "ADDED", "c", "4", "x"); /* a replayed duplicate */
        ev_line(fd, "BOOKMARK", NULL, "5", NULL);
        return 1; /* dropped stream */
    }
    if (n == 1) {
        const char *e =
            "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":"
            "\"Failure\",\"reason\":\"Expired\",\"code\":410,\"message\":\"too old\"}}\n";
        mock_chunk(fd, e, strlen(e));
        mock_chunk_end(fd);
        return 0;
    }
    if (n == 2)
        ev_line(fd, "DELETED", "a", "8", "x");
    return h_hang(s->m, r, fd);
}

struct rec {
    pthread_mutex_t lock;
    char log[32][32];
    int n;
};

static void rec_add(struct rec *r, const char *what, const struct kube_obj *o)
{
    pthread_mutex_lock(&r->lock);
    if (r->n < 32)
        snprintf(r->log[r->n], sizeof(r->log[0]), "%s %s %s", what, kube_obj_key(o),
                 kube_obj_get_rv(o));
    r->n++;
    pthread_mutex_unlock(&r->lock);
}

static void h_add(void *ud, const struct kube_obj *o)
{
    rec_add(ud, "add", o);
}

static void h_upd(void *ud, const struct kube_obj *old, const struct kube_obj *cur)
{
    rec_add(ud, "update", cur);
}

static void h_del(void *ud, const struct kube_obj *o)
{
    rec_add(ud, "delete", o);
}

static void by_app(const cJSON *obj, void *ud, kube_index_emit_fn emit, void *ctx)
{
    const char *app =
        kube_json_str(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "labels"), "app");
    if (app)
        emit(ctx, app);
}

START_TEST(informer_resume_and_relist)
{
    struct inf_script s = {0};
    pthread_mutex_init(&s.lock, NULL);
    struct mock_server m;
    ck_assert_int_eq(mock_start(&m, h_informer, &s), 0);
    s.m = &m;
    struct kube_client *c = client_for(&m, NULL, NULL, NULL);
    struct rec r = {0};
    pthread_mutex_init(&r.lock, NULL);
    struct kube_informer_opts io = {
        .resource = &VMS, .ns = "ns", .backoff_min_ms = 10, .watch_timeout_s = 60};
    struct kube_informer_handlers hs = {
        .on_add = h_add, .on_update = h_upd, .on_delete = h_del, .ud = &r};
    struct kube_informer *inf = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(kube_informer_new(c, &io, &hs, &inf, &err), VMOP_OK);
    ck_assert_int_eq(kube_informer_add_index(inf, "app", by_app, NULL, &err), VMOP_OK);
    ck_assert_int_eq(kube_informer_start(inf, &err), VMOP_OK);
    ck_assert_int_eq(kube_informer_wait_synced(inf, 5000), VMOP_OK);
    /* wait (bounded) for the final DELETED of a */
    int64_t end = vmop_mono_ms() + 10000;
    for (;;) {
        pthread_mutex_lock(&r.lock);
        int n = r.n;
        pthread_mutex_unlock(&r.lock);
        if (n >= 8 || vmop_mono_ms() > end)
            break;
        vmop_sleep_ms(5, NULL);
    }
    const char *want[] = {"add ns/a 1",    "add ns/b 2", "update ns/a 3", "add ns/c 4",
                          "update ns/c 6", "add ns/d 7", "delete ns/b 2", "delete ns/a 8"};
    pthread_mutex_lock(&r.lock);
    ck_assert_int_eq(r.n, 8);
    for (int i = 0; i < 8; i++)
        ck_assert_str_eq(r.log[i], want[i]);
    pthread_mutex_unlock(&r.lock);
    /* watches resumed from the last RV seen; the 410 forced a relist */
    pthread_mutex_lock(&s.lock);
    ck_assert_str_eq(s.watch_rvs[0], "2");
    ck_assert_str_eq(s.watch_rvs[1], "5"); /* the bookmark's RV */
    ck_assert_str_eq(s.watch_rvs[2], "7");
    ck_assert_int_eq(s.n_list, 2);
    pthread_mutex_unlock(&s.lock);

    ck_assert_uint_eq(kube_informer_len(inf), 2);
    struct kube_obj *o = kube_informer_get(inf, "ns/c");
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(kube_obj_get_rv(o), "6");
    struct kube_obj **objs = NULL;
    size_t n = 0;
    ck_assert_int_eq(kube_informer_by_index(inf, "app", "x", &objs, &n, &err), VMOP_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(kube_obj_key(objs[0]), "ns/c");
    kube_objs_free(objs, n);
    ck_assert_int_eq(kube_informer_by_index(inf, "app", "y", &objs, &n, &err), VMOP_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(kube_obj_key(objs[0]), "ns/d");
    kube_objs_free(objs, n);
    ck_assert_int_eq(kube_informer_by_index(inf, "nope", "y", &objs, &n, &err), VMOP_E_NOT_FOUND);
    char rv[32];
    kube_informer_last_rv(inf, rv, sizeof(rv));
    ck_assert_str_eq(rv, "8");

    int64_t t0 = vmop_mono_ms();
    kube_informer_free(inf); /* aborts the idle watch */
    ck_assert_int_lt(vmop_mono_ms() - t0, 3000);
    /* a reference outlives the informer */
    ck_assert_str_eq(kube_obj_key(o), "ns/c");
    kube_obj_unref(o);
    kube_client_free(c);
    mock_stop(&m);
}
END_TEST

/* ---- events ---- */

struct evs {
    int patch_404;
};

static int h_events(void *ud, const struct mock_req *r, int fd)
{
    struct evs *e = ud;
    if (!strcmp(r->method, "PATCH") && e->patch_404) {
        mock_reply(fd, 404, NULL,
                   "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"code\":404,\"message\":\"x\"}");
        return 0;
    }
    mock_reply(fd, !strcmp(r->method, "POST") ? 201 : 200, NULL, "{\"kind\":\"Event\"}");
    return 0;
}

START_TEST(event_aggregation)
{
    struct evs e = {0};
    struct mock_server m;
    ck_assert_int_eq(mock_start(&m, h_events, &e), 0);
    struct kube_client *c = client_for(&m, NULL, NULL, NULL);
    struct kube_recorder *rec = NULL;
    struct vmop_err err = {0};
    struct kube_recorder_opts ro = {.component = "vm-operator", .host = "node1"};
    ck_assert_int_eq(kube_recorder_new(c, &ro, &rec, &err), VMOP_OK);
    cJSON *vm = cJSON_Parse("{\"apiVersion\":\"example.com/v1\",\"kind\":\"VirtualMachine\","
                            "\"metadata\":{\"name\":\"vm1\",\"namespace\":\"ns\",\"uid\":\"u-1\","
                            "\"resourceVersion\":\"9\"}}");
    ck_assert_int_eq(kube_event(rec, vm, "Normal", "Created", &err, "VM %s created", "vm1"),
                     VMOP_OK);
    ck_assert_int_eq(kube_event(rec, vm, "Normal", "Created", &err, "VM %s created", "vm1"),
                     VMOP_OK);
    ck_assert_int_eq(kube_event(rec, vm, "Normal", "Created", &err, "VM %s created", "vm1"),
                     VMOP_OK);
    ck_assert_int_eq(kube_event(rec, vm, "Warning", "Failed", &err, "other"), VMOP_OK);
    ck_assert_int_eq(mock_reqs(&m), 4);
    struct mock_req r0, r1, r2, r3;
    mock_req_at(&m, 0, &r0);
    mock_req_at(&m, 1, &r1);
    mock_req_at(&m, 2, &r2);
    mock_req_at(&m, 3, &r3);
    ck_assert_str_eq(r0.method, "POST");
    ck_assert_str_eq(r0.path, "/api/v1/namespaces/ns/events");
    cJSON *ev = cJSON_Parse(r0.body);
    ck_assert_str_eq(kube_json_path_str(ev, "involvedObject", "uid"), "u-1");
    ck_assert_str_eq(kube_json_path_str(ev, "involvedObject", "kind"), "VirtualMachine");
    ck_assert_str_eq(kube_json_path_str(ev, "source", "component"), "vm-operator");
    ck_assert_str_eq(kube_json_str(ev, "message"), "VM vm1 created");
    ck_assert_int_eq((int)cJSON_GetObjectItem(ev, "count")->valuedouble, 1);
    char want[512];
    snprintf(want, sizeof(want), "/api/v1/namespaces/ns/events/%s", kube_obj_name(ev));
    ck_assert_str_eq(r1.method, "PATCH");
    ck_assert_str_eq(r1.path, want);
    ck_assert_str_eq(r1.ctype, "application/merge-patch+json");
    ck_assert_ptr_nonnull(strstr(r1.body, "\"count\":2"));
    ck_assert_ptr_nonnull(strstr(r2.body, "\"count\":3"));
    ck_assert_str_eq(r3.method, "POST");
    cJSON_Delete(ev);

    /* the aggregated Event vanished: a new one is created */
    e.patch_404 = 1;
    ck_assert_int_eq(kube_event(rec, vm, "Warning", "Failed", &err, "other"), VMOP_OK);
    ck_assert_int_eq(mock_reqs(&m), 6);
    struct mock_req r5;
    mock_req_at(&m, 5, &r5);
    ck_assert_str_eq(r5.method, "POST");
    cJSON *bad = cJSON_Parse("{\"metadata\":{\"name\":\"x\"}}");
    ck_assert_int_eq(kube_event(rec, bad, "Normal", "R", &err, "m"), VMOP_E_INVALID);
    cJSON_Delete(bad);
    cJSON_Delete(vm);
    kube_recorder_free(rec);
    kube_client_free(c);
    mock_stop(&m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kube_client");
    TCase *tc = tcase_create("client");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, keepalive_and_auth);
    tcase_add_test(tc, retries);
    tcase_add_test(tc, conflict_is_typed);
    tcase_add_test(tc, token_reread_on_401);
    tcase_add_test(tc, request_timeout);
    tcase_add_test(tc, paging_and_paths);
    tcase_add_test(tc, watch_streams);
    tcase_add_test(tc, informer_resume_and_relist);
    tcase_add_test(tc, event_aggregation);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    struct vmop_err err = {0};
    if (kube_global_init(&err) != VMOP_OK)
        return EXIT_FAILURE;
    int status = vmop_check_run(suite());
    kube_global_cleanup();
    return status;
}
