/* test_kube_integration.c: the Kubernetes client against kube-testapi (tests/apiserver harness):
 * TLS + bearer token from the written kubeconfig, CRUD with conflicts, patches and apply, paging,
 * finalizers, garbage collection, a CRD with the status subresource, watch resume and 410,
 * dropped streams and forced relists seen through an informer, injected 5xx/429 retries, events,
 * and leader election with two contenders and failover. Suite: integration.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "wait.h"
#include "harness.h"
#include "kube_client.h"
#include "kube_events.h"
#include "kube_informer.h"
#include "kube_lease.h"
#include "kube_util.h"

static struct apiserver *start_server(const struct apiserver_opts *o)
{
    struct apiserver *a = NULL;
    struct vmop_err err = {0};
    ck_assert_msg(apiserver_start(o, &a, &err) == VMOP_OK, "apiserver_start: %s", err.msg);
    return a;
}

static struct kube_client *client_of(struct apiserver *a, const struct kube_client_opts *co)
{
    struct kube_config *cfg = NULL;
    struct kube_client *c = NULL;
    struct vmop_err err = {0};
    ck_assert_msg(kube_config_from_files(a->kubeconfig, NULL, &cfg, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_msg(kube_client_new(cfg, co, &c, &err) == VMOP_OK, "%s", err.msg);
    kube_config_free(cfg);
    return c;
}

static void stop_server(struct apiserver *a)
{
    struct vmop_err err = {0};
    apiserver_stop(a, &err);
}

static cJSON *cm(const char *name, const char *k, const char *v)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "apiVersion", "v1");
    cJSON_AddStringToObject(o, "kind", "ConfigMap");
    cJSON *md = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(md, "name", name);
    cJSON *d = cJSON_AddObjectToObject(o, "data");
    if (k)
        cJSON_AddStringToObject(d, k, v);
    return o;
}

static void faults(struct kube_client *c, const char *json)
{
    struct vmop_err err = {0};
    ck_assert_msg(kube_request(c, "POST", "/_testapi/faults", "application/json", json,
                               strlen(json), NULL, NULL, NULL, &err) == VMOP_OK,
                  "faults: %s", err.msg);
}

START_TEST(tls_token_and_crud)
{
    struct apiserver_opts ao = {.tls = 1, .token = "it-token-42"};
    struct apiserver *a = start_server(&ao);
    struct kube_client *c = client_of(a, NULL);
    struct vmop_err err = {0};
    cJSON *got = NULL, *res = NULL;

    /* create, duplicate create, get */
    cJSON *o = cm("cm1", "a", "1");
    ck_assert_msg(kube_create(c, &kube_res_configmaps, NULL, o, NULL, &res, &err) == VMOP_OK, "%s",
                  err.msg);
    char rv1[32], uid[64];
    snprintf(rv1, sizeof(rv1), "%s", kube_obj_rv(res));
    snprintf(uid, sizeof(uid), "%s", kube_obj_uid(res));
    ck_assert_str_eq(kube_obj_namespace(res), "default");
    cJSON_Delete(res);
    ck_assert_int_eq(kube_create(c, &kube_res_configmaps, NULL, o, NULL, &res, &err),
                     VMOP_E_EXISTS);
    ck_assert_str_eq(err.fault, "AlreadyExists");
    vmop_err_clear(&err);
    ck_assert_int_eq(kube_get(c, &kube_res_configmaps, "default", "cm1", NULL, &got, &err),
                     VMOP_OK);

    /* update with the current RV, then a stale one: typed conflict */
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(got, "data"), "a", cJSON_CreateString("2"));
    ck_assert_int_eq(kube_update(c, &kube_res_configmaps, NULL, got, NULL, &res, &err), VMOP_OK);
    ck_assert_str_ne(kube_obj_rv(res), rv1);
    cJSON_Delete(res);
    struct kube_status st;
    struct kube_opts so = {.ret_status = &st};
    ck_assert_int_eq(kube_update(c, &kube_res_configmaps, NULL, got, &so, &res, &err),
                     VMOP_E_CONFLICT);
    ck_assert_str_eq(err.fault, "Conflict");
    ck_assert_int_eq(st.code, 409);
    vmop_err_clear(&err);
    cJSON_Delete(got);

    /* merge patch, JSON patch, server-side apply */
    cJSON *mp = cJSON_Parse("{\"data\":{\"b\":\"x\",\"a\":null}}");
    ck_assert_int_eq(
        kube_patch(c, &kube_res_configmaps, NULL, "cm1", KUBE_PATCH_MERGE, mp, NULL, &res, &err),
        VMOP_OK);
    ck_assert_str_eq(kube_json_path_str(res, "data", "b"), "x");
    ck_assert_ptr_null(kube_json_path_str(res, "data", "a"));
    cJSON_Delete(res);
    cJSON_Delete(mp);
    cJSON *jp = cJSON_Parse("[{\"op\":\"replace\",\"path\":\"/data/b\",\"value\":\"y\"}]");
    ck_assert_msg(kube_patch(c, &kube_res_configmaps, NULL, "cm1", KUBE_PATCH_JSON, jp, NULL, &res,
                             &err) == VMOP_OK,
                  "%s", err.msg);
    ck_assert_str_eq(kube_json_path_str(res, "data", "b"), "y");
    cJSON_Delete(res);
    cJSON_Delete(jp);
    cJSON *ap = cm("cm-applied", "k", "v");
    struct kube_opts apo = {.field_manager = "kubeclient-test", .force = 1};
    ck_assert_msg(kube_patch(c, &kube_res_configmaps, NULL, "cm-applied", KUBE_PATCH_APPLY, ap,
                             &apo, &res, &err) == VMOP_OK,
                  "apply (create): %s", err.msg);
    cJSON_Delete(res);
    ck_assert_int_eq(kube_patch(c, &kube_res_configmaps, NULL, "cm-applied", KUBE_PATCH_APPLY, ap,
                                NULL, &res, &err),
                     VMOP_E_INVALID); /* no field manager */
    vmop_err_clear(&err);
    cJSON_Delete(ap);

    /* delete with a wrong precondition, then for real */
    struct kube_opts dop = {.precondition_uid = "not-the-uid", .propagation_policy = "Background"};
    ck_assert_int_eq(kube_delete(c, &kube_res_configmaps, NULL, "cm1", &dop, NULL, &err),
                     VMOP_E_CONFLICT);
    vmop_err_clear(&err);
    dop.precondition_uid = uid;
    ck_assert_msg(kube_delete(c, &kube_res_configmaps, NULL, "cm1", &dop, NULL, &err) == VMOP_OK,
                  "%s", err.msg);
    ck_assert_int_eq(kube_get(c, &kube_res_configmaps, NULL, "cm1", NULL, &got, &err),
                     VMOP_E_NOT_FOUND);
    ck_assert_str_eq(err.fault, "NotFound");
    cJSON_Delete(o);
    kube_client_free(c);

    /* a wrong token is refused over TLS */
    struct kube_config *cfg = NULL;
    ck_assert_int_eq(kube_config_from_files(a->kubeconfig, NULL, &cfg, &err), VMOP_OK);
    kube_free_secret(cfg->token);
    cfg->token = strdup("wrong");
    ck_assert_int_eq(kube_client_new(cfg, NULL, &c, &err), VMOP_OK);
    vmop_err_clear(&err);
    ck_assert_int_eq(kube_get(c, &kube_res_namespaces, NULL, "default", NULL, &got, &err),
                     VMOP_E_AUTH);
    kube_client_free(c);
    kube_config_free(cfg);
    stop_server(a);
}
END_TEST

START_TEST(paging_finalizers_gc)
{
    struct apiserver *a = start_server(NULL);
    struct kube_client *c = client_of(a, NULL);
    struct vmop_err err = {0};
    cJSON *res = NULL, *got = NULL;
    char name[32];
    for (int i = 0; i < 23; i++) {
        snprintf(name, sizeof(name), "page-%02d", i);
        cJSON *o = cm(name, "i", name);
        cJSON *labels = cJSON_AddObjectToObject(cJSON_GetObjectItem(o, "metadata"), "labels");
        cJSON_AddStringToObject(labels, "set", i % 2 ? "odd" : "even");
        ck_assert_int_eq(kube_create(c, &kube_res_configmaps, "default", o, NULL, NULL, &err),
                         VMOP_OK);
        cJSON_Delete(o);
    }
    unsigned long before = kube_client_requests(c);
    struct kube_opts lo = {.limit = 5, .label_selector = "set=odd"};
    cJSON *l = NULL;
    ck_assert_int_eq(kube_list_all(c, &kube_res_configmaps, "default", &lo, &l, &err), VMOP_OK);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 11);
    ck_assert_uint_ge(kube_client_requests(c) - before, 3); /* 11 items in pages of 5 */
    cJSON_Delete(l);
    struct kube_opts one = {.limit = 5};
    ck_assert_int_eq(kube_list(c, &kube_res_configmaps, "default", &one, &l, &err), VMOP_OK);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 5);
    ck_assert_ptr_nonnull(kube_json_path_str(l, "metadata", "continue"));
    cJSON_Delete(l);

    /* finalizers: delete leaves the object with a deletionTimestamp until they are removed */
    cJSON *f = cm("fin", NULL, NULL);
    cJSON *fins = cJSON_AddArrayToObject(cJSON_GetObjectItem(f, "metadata"), "finalizers");
    cJSON_AddItemToArray(fins, cJSON_CreateString("kubeclient.test/hold"));
    ck_assert_int_eq(kube_create(c, &kube_res_configmaps, NULL, f, NULL, NULL, &err), VMOP_OK);
    ck_assert_int_eq(kube_delete(c, &kube_res_configmaps, NULL, "fin", NULL, &res, &err), VMOP_OK);
    cJSON_Delete(res);
    ck_assert_int_eq(kube_get(c, &kube_res_configmaps, NULL, "fin", NULL, &got, &err), VMOP_OK);
    ck_assert_ptr_nonnull(kube_json_path_str(got, "metadata", "deletionTimestamp"));
    cJSON_Delete(got);
    cJSON *unfin = cJSON_Parse("{\"metadata\":{\"finalizers\":null}}");
    ck_assert_int_eq(
        kube_patch(c, &kube_res_configmaps, NULL, "fin", KUBE_PATCH_MERGE, unfin, NULL, NULL, &err),
        VMOP_OK);
    cJSON_Delete(unfin);
    cJSON_Delete(f);
    WAIT_UNTIL(kube_get(c, &kube_res_configmaps, NULL, "fin", NULL, &got, &err) == VMOP_E_NOT_FOUND,
               5000);
    vmop_err_clear(&err);

    /* background garbage collection by ownerReference uid */
    cJSON *owner = cm("owner", NULL, NULL);
    ck_assert_int_eq(kube_create(c, &kube_res_configmaps, NULL, owner, NULL, &res, &err), VMOP_OK);
    cJSON *dep = cm("dependent", NULL, NULL);
    cJSON *refs = cJSON_AddArrayToObject(cJSON_GetObjectItem(dep, "metadata"), "ownerReferences");
    cJSON *ref = cJSON_CreateObject();
    cJSON_AddStringToObject(ref, "apiVersion", "v1");
    cJSON_AddStringToObject(ref, "kind", "ConfigMap");
    cJSON_AddStringToObject(ref, "name", "owner");
    cJSON_AddStringToObject(ref, "uid", kube_obj_uid(res));
    cJSON_AddItemToArray(refs, ref);
    cJSON_Delete(res);
    ck_assert_int_eq(kube_create(c, &kube_res_configmaps, NULL, dep, NULL, NULL, &err), VMOP_OK);
    ck_assert_int_eq(kube_delete(c, &kube_res_configmaps, NULL, "owner", NULL, NULL, &err),
                     VMOP_OK);
    WAIT_UNTIL(kube_get(c, &kube_res_configmaps, NULL, "dependent", NULL, &got, &err) ==
                   VMOP_E_NOT_FOUND,
               10000);
    cJSON_Delete(owner);
    cJSON_Delete(dep);
    kube_client_free(c);
    stop_server(a);
}
END_TEST

static const struct kube_resource WIDGETS = {"kubeclient.test", "v1", "widgets", 1};

START_TEST(crd_status_subresource)
{
    struct apiserver *a = start_server(NULL);
    struct kube_client *c = client_of(a, NULL);
    struct vmop_err err = {0};
    cJSON *crd = cJSON_Parse(
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
        "\"metadata\":{\"name\":\"widgets.kubeclient.test\"},\"spec\":{\"group\":"
        "\"kubeclient.test\",\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\","
        "\"singular\":\"widget\",\"kind\":\"Widget\",\"listKind\":\"WidgetList\"},\"versions\":[{"
        "\"name\":\"v1\",\"served\":true,\"storage\":true,\"subresources\":{\"status\":{}},"
        "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":"
        "\"object\",\"x-kubernetes-preserve-unknown-fields\":true},\"status\":{\"type\":"
        "\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}}}]}}");
    ck_assert_msg(kube_create(c, &kube_res_crds, NULL, crd, NULL, NULL, &err) == VMOP_OK, "%s",
                  err.msg);
    cJSON_Delete(crd);
    cJSON *l = NULL;
    WAIT_UNTIL(kube_list(c, &WIDGETS, "default", NULL, &l, &err) == VMOP_OK, 5000);
    cJSON_Delete(l);
    cJSON *w = cJSON_Parse("{\"apiVersion\":\"kubeclient.test/v1\",\"kind\":\"Widget\","
                           "\"metadata\":{\"name\":\"w1\"},\"spec\":{\"size\":1},"
                           "\"status\":{\"phase\":\"ignored-on-create\"}}");
    cJSON *res = NULL;
    ck_assert_int_eq(kube_create(c, &WIDGETS, NULL, w, NULL, &res, &err), VMOP_OK);
    ck_assert_ptr_null(kube_json_path_str(res, "status", "phase"));
    cJSON *st = cJSON_Parse("{\"phase\":\"Ready\"}");
    cJSON_DeleteItemFromObject(res, "status");
    cJSON_AddItemToObject(res, "status", st);
    cJSON *res2 = NULL;
    ck_assert_msg(kube_update_status(c, &WIDGETS, NULL, res, NULL, &res2, &err) == VMOP_OK, "%s",
                  err.msg);
    ck_assert_str_eq(kube_json_path_str(res2, "status", "phase"), "Ready");
    cJSON *sp = cJSON_Parse("{\"status\":{\"phase\":\"Patched\"},\"spec\":{\"size\":9}}");
    cJSON *res3 = NULL;
    ck_assert_int_eq(
        kube_patch_status(c, &WIDGETS, NULL, "w1", KUBE_PATCH_MERGE, sp, NULL, &res3, &err),
        VMOP_OK);
    ck_assert_str_eq(kube_json_path_str(res3, "status", "phase"), "Patched");
    /* a status write never changes spec */
    ck_assert_int_eq(
        (int)cJSON_GetObjectItem(cJSON_GetObjectItem(res3, "spec"), "size")->valuedouble, 1);
    /* strategic merge is refused for custom resources */
    ck_assert_int_eq(
        kube_patch(c, &WIDGETS, NULL, "w1", KUBE_PATCH_STRATEGIC, sp, NULL, NULL, &err),
        VMOP_E_KUBE);
    ck_assert_int_eq(err.http_status, 415);
    cJSON_Delete(w);
    cJSON_Delete(res);
    cJSON_Delete(res2);
    cJSON_Delete(res3);
    cJSON_Delete(sp);
    kube_client_free(c);
    stop_server(a);
}
END_TEST

struct wcount {
    int n;
    char last_rv[32];
};

static int count_ev(void *ud, enum kube_event_type t, cJSON *obj)
{
    struct wcount *w = ud;
    w->n++;
    snprintf(w->last_rv, sizeof(w->last_rv), "%s", kube_obj_rv(obj) ? kube_obj_rv(obj) : "");
    cJSON_Delete(obj);
    return w->n >= 3; /* stop after three */
}

START_TEST(watch_resume_and_gone)
{
    struct apiserver_opts ao = {.watch_window = 5};
    struct apiserver *a = start_server(&ao);
    struct kube_client *c = client_of(a, NULL);
    struct vmop_err err = {0};
    cJSON *l = NULL;
    ck_assert_int_eq(kube_list(c, &kube_res_configmaps, "default", NULL, &l, &err), VMOP_OK);
    char rv0[32];
    snprintf(rv0, sizeof(rv0), "%s", kube_json_path_str(l, "metadata", "resourceVersion"));
    cJSON_Delete(l);
    char name[32];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof(name), "w-%d", i);
        cJSON *o = cm(name, NULL, NULL);
        ck_assert_int_eq(kube_create(c, &kube_res_configmaps, NULL, o, NULL, NULL, &err), VMOP_OK);
        cJSON_Delete(o);
    }
    /* resume from the list RV: exactly the three creates */
    struct wcount w = {0};
    struct kube_opts wo = {.resource_version = rv0, .timeout_seconds = 5};
    ck_assert_int_eq(kube_watch(c, &kube_res_configmaps, "default", &wo, count_ev, &w, &err),
                     VMOP_E_CANCELED);
    ck_assert_int_eq(w.n, 3);
    vmop_err_clear(&err);
    /* push rv0 out of the 5-event window: 410 */
    for (int i = 0; i < 10; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON *d = cJSON_AddObjectToObject(p, "data");
        snprintf(name, sizeof(name), "%d", i);
        cJSON_AddStringToObject(d, "n", name);
        ck_assert_int_eq(
            kube_patch(c, &kube_res_configmaps, NULL, "w-0", KUBE_PATCH_MERGE, p, NULL, NULL, &err),
            VMOP_OK);
        cJSON_Delete(p);
    }
    memset(&w, 0, sizeof(w));
    ck_assert_int_eq(kube_watch(c, &kube_res_configmaps, "default", &wo, count_ev, &w, &err),
                     VMOP_E_GONE);
    ck_assert_int_eq(err.http_status, 410);
    /* the server's timeoutSeconds ends a quiet watch cleanly */
    ck_assert_int_eq(kube_list(c, &kube_res_configmaps, "default", NULL, &l, &err), VMOP_OK);
    snprintf(rv0, sizeof(rv0), "%s", kube_json_path_str(l, "metadata", "resourceVersion"));
    cJSON_Delete(l);
    struct kube_opts qo = {.resource_version = rv0, .timeout_seconds = 1};
    memset(&w, 0, sizeof(w));
    vmop_err_clear(&err);
    ck_assert_msg(kube_watch(c, &kube_res_configmaps, "default", &qo, count_ev, &w, &err) ==
                      VMOP_OK,
                  "%s", err.msg);
    ck_assert_int_eq(w.n, 0);
    kube_client_free(c);
    stop_server(a);
}
END_TEST

/* ---- informer against the server: drops and forced relists ---- */

struct irec {
    pthread_mutex_t lock;
    int adds[64], updates[64], deletes[64]; /* by object number */
};

static int obj_num(const struct kube_obj *o)
{
    const char *n = kube_obj_name(kube_obj_json(o));
    return n && !strncmp(n, "inf-", 4) ? (int)(strtol(n + 4, NULL, 10) % 64) : 63;
}

static void i_add(void *ud, const struct kube_obj *o)
{
    struct irec *r = ud;
    pthread_mutex_lock(&r->lock);
    r->adds[obj_num(o)]++;
    pthread_mutex_unlock(&r->lock);
}

static void i_upd(void *ud, const struct kube_obj *old, const struct kube_obj *o)
{
    struct irec *r = ud;
    pthread_mutex_lock(&r->lock);
    r->updates[obj_num(o)]++;
    pthread_mutex_unlock(&r->lock);
}

static void i_del(void *ud, const struct kube_obj *o)
{
    struct irec *r = ud;
    pthread_mutex_lock(&r->lock);
    r->deletes[obj_num(o)]++;
    pthread_mutex_unlock(&r->lock);
}

static int rec_get(struct irec *r, int *arr, int i)
{
    pthread_mutex_lock(&r->lock);
    int v = arr[i];
    pthread_mutex_unlock(&r->lock);
    return v;
}

static void mk_cm(struct kube_client *c, int i)
{
    char name[32];
    struct vmop_err err = {0};
    snprintf(name, sizeof(name), "inf-%d", i);
    cJSON *o = cm(name, "v", "0");
    ck_assert_msg(kube_create(c, &kube_res_configmaps, "default", o, NULL, NULL, &err) == VMOP_OK,
                  "%s", err.msg);
    cJSON_Delete(o);
}

static void touch_cm(struct kube_client *c, int i, const char *v)
{
    char name[32];
    struct vmop_err err = {0};
    snprintf(name, sizeof(name), "inf-%d", i);
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(cJSON_AddObjectToObject(p, "data"), "v", v);
    ck_assert_int_eq(
        kube_patch(c, &kube_res_configmaps, "default", name, KUBE_PATCH_MERGE, p, NULL, NULL, &err),
        VMOP_OK);
    cJSON_Delete(p);
}

static void rm_cm(struct kube_client *c, int i)
{
    char name[32];
    struct vmop_err err = {0};
    snprintf(name, sizeof(name), "inf-%d", i);
    ck_assert_int_eq(kube_delete(c, &kube_res_configmaps, "default", name, NULL, NULL, &err),
                     VMOP_OK);
}

START_TEST(informer_drops_and_relists)
{
    struct apiserver_opts ao = {.watch_window = 8};
    struct apiserver *a = start_server(&ao);
    struct kube_client *c = client_of(a, NULL);
    struct vmop_err err = {0};
    mk_cm(c, 0);
    mk_cm(c, 1);
    struct irec r = {0};
    pthread_mutex_init(&r.lock, NULL);
    struct kube_informer_opts io = {.resource = &kube_res_configmaps,
                                    .ns = "default",
                                    .backoff_min_ms = 20,
                                    .watch_timeout_s = 60};
    struct kube_informer_handlers hs = {
        .on_add = i_add, .on_update = i_upd, .on_delete = i_del, .ud = &r};
    struct kube_informer *inf = NULL;
    ck_assert_int_eq(kube_informer_new(c, &io, &hs, &inf, &err), VMOP_OK);
    ck_assert_int_eq(kube_informer_start(inf, &err), VMOP_OK);
    ck_assert_int_eq(kube_informer_wait_synced(inf, 10000), VMOP_OK);
    ck_assert_int_eq(rec_get(&r, r.adds, 0), 1);
    ck_assert_int_eq(rec_get(&r, r.adds, 1), 1);

    /* create / update / delete through the watch */
    mk_cm(c, 2);
    WAIT_UNTIL(rec_get(&r, r.adds, 2) == 1, 10000);
    touch_cm(c, 2, "1");
    WAIT_UNTIL(rec_get(&r, r.updates, 2) == 1, 10000);
    rm_cm(c, 1);
    WAIT_UNTIL(rec_get(&r, r.deletes, 1) == 1, 10000);

    /* the server drops every watch: the informer resumes from its RV without losing or
     * repeating events */
    unsigned long w0 = kube_informer_watches(inf), l0 = kube_informer_lists(inf);
    faults(c, "{\"dropWatches\":true}");
    WAIT_UNTIL(kube_informer_watches(inf) > w0, 10000);
    touch_cm(c, 0, "1");
    WAIT_UNTIL(rec_get(&r, r.updates, 0) == 1, 10000);
    ck_assert_uint_eq(kube_informer_lists(inf), l0); /* resumed, no relist */
    ck_assert_int_eq(rec_get(&r, r.adds, 2), 1);

    /* drop again and delay the re-watch while more than the window changes: 410 -> relist,
     * diffed against the cache */
    faults(c,
           "{\"rules\":[{\"method\":\"GET\",\"path\":\"^/api/v1/namespaces/default/configmaps$\","
           "\"code\":0,\"count\":1,\"latencyMs\":1500}]}");
    faults(c, "{\"dropWatches\":true}");
    for (int i = 0; i < 12; i++)
        touch_cm(c, 2, i % 2 ? "a" : "b");
    mk_cm(c, 3);
    rm_cm(c, 0);
    WAIT_UNTIL(kube_informer_lists(inf) > l0, 15000);
    WAIT_UNTIL(rec_get(&r, r.deletes, 0) == 1 && rec_get(&r, r.adds, 3) == 1, 15000);
    WAIT_UNTIL(kube_informer_len(inf) == 2, 5000);
    struct kube_obj *o = kube_informer_get(inf, "default/inf-2");
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(kube_json_path_str(kube_obj_json(o), "data", "v"), "a");
    kube_obj_unref(o);
    /* nothing was delivered twice */
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(rec_get(&r, r.adds, i), 1);
    ck_assert_int_eq(rec_get(&r, r.deletes, 0), 1);
    ck_assert_int_eq(rec_get(&r, r.deletes, 1), 1);

    kube_informer_free(inf);
    kube_client_free(c);
    stop_server(a);
}
END_TEST

START_TEST(retries_events_and_leases)
{
    struct apiserver *a = start_server(NULL);
    struct kube_client_opts co = {.retry_base_ms = 20, .retry_max_ms = 300};
    struct kube_client *c = client_of(a, &co);
    struct vmop_err err = {0};
    cJSON *got = NULL;

    /* injected 503s and a 429 are retried */
    faults(c, "{\"rules\":[{\"method\":\"GET\",\"path\":\"^/api/v1/namespaces/default$\","
              "\"code\":503,\"count\":2}]}");
    unsigned long r0 = kube_client_retries(c);
    ck_assert_msg(kube_get(c, &kube_res_namespaces, NULL, "default", NULL, &got, &err) == VMOP_OK,
                  "%s", err.msg);
    cJSON_Delete(got);
    ck_assert_uint_eq(kube_client_retries(c) - r0, 2);
    faults(c, "{\"rules\":[{\"method\":\"GET\",\"path\":\"^/api/v1/namespaces/default$\","
              "\"code\":429,\"count\":1}]}");
    ck_assert_int_eq(kube_get(c, &kube_res_namespaces, NULL, "default", NULL, &got, &err), VMOP_OK);
    cJSON_Delete(got);

    /* events: a repeat becomes count 2 on the same Event */
    cJSON *o = cm("evt-target", NULL, NULL), *res = NULL;
    ck_assert_int_eq(kube_create(c, &kube_res_configmaps, NULL, o, NULL, &res, &err), VMOP_OK);
    struct kube_recorder *rec = NULL;
    struct kube_recorder_opts ro = {.component = "kubeclient-test"};
    ck_assert_int_eq(kube_recorder_new(c, &ro, &rec, &err), VMOP_OK);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(kube_event(rec, res, "Normal", "Tested", &err, "hello %d", 7) == VMOP_OK,
                      "%s", err.msg);
    cJSON *l = NULL;
    struct kube_opts lo = {.field_selector = "involvedObject.name=evt-target"};
    ck_assert_int_eq(kube_list(c, &kube_res_events, "default", &lo, &l, &err), VMOP_OK);
    cJSON *items = cJSON_GetObjectItem(l, "items");
    ck_assert_int_eq(cJSON_GetArraySize(items), 1);
    cJSON *ev = cJSON_GetArrayItem(items, 0);
    ck_assert_int_eq((int)cJSON_GetObjectItem(ev, "count")->valuedouble, 2);
    ck_assert_str_eq(kube_json_path_str(ev, "involvedObject", "uid"), kube_obj_uid(res));
    cJSON_Delete(l);
    cJSON_Delete(o);
    cJSON_Delete(res);
    kube_recorder_free(rec);
    kube_client_free(c);
    stop_server(a);
}
END_TEST

struct lcb {
    int started, stopped;
};

static void l_start(void *ud)
{
    __atomic_add_fetch(&((struct lcb *)ud)->started, 1, __ATOMIC_RELAXED);
}

static void l_stop(void *ud)
{
    __atomic_add_fetch(&((struct lcb *)ud)->stopped, 1, __ATOMIC_RELAXED);
}

static struct kube_elector *elector(struct kube_client *c, const char *id, struct lcb *cb,
                                    int release)
{
    struct kube_elector_opts o = {.ns = "default",
                                  .name = "kubeclient-test",
                                  .identity = id,
                                  .lease_duration_ms = 2000,
                                  .renew_deadline_ms = 1500,
                                  .retry_period_ms = 200,
                                  .release_on_cancel = release,
                                  .on_started_leading = l_start,
                                  .on_stopped_leading = l_stop,
                                  .cb_ud = cb};
    struct kube_elector *el = NULL;
    struct vmop_err err = {0};
    ck_assert_int_eq(kube_elector_new(c, &o, &el, &err), VMOP_OK);
    ck_assert_int_eq(kube_elector_start(el, &err), VMOP_OK);
    return el;
}

START_TEST(leader_election_failover)
{
    struct apiserver *a = start_server(NULL);
    struct kube_client *c = client_of(a, NULL);
    struct vmop_err err = {0};
    struct lcb ca = {0}, cb = {0}, cc = {0};
    struct kube_elector *ea = elector(c, "alpha", &ca, 0);
    WAIT_UNTIL(kube_elector_is_leader(ea), 10000);
    struct kube_elector *eb = elector(c, "beta", &cb, 1);
    kube_sleep_ms(600, NULL); /* three retry periods: beta must stay a follower */
    ck_assert(!kube_elector_is_leader(eb));
    char holder[64];
    kube_elector_holder(eb, holder, sizeof(holder));
    ck_assert_str_eq(holder, "alpha");

    /* alpha dies without releasing: beta takes over after the lease duration */
    int64_t t0 = kube_mono_ms();
    kube_elector_free(ea);
    ck_assert_int_eq(ca.started, 1);
    ck_assert_int_eq(ca.stopped, 1);
    WAIT_UNTIL(kube_elector_is_leader(eb), 10000);
    ck_assert_int_ge(kube_mono_ms() - t0, 1500);
    cJSON *lease = NULL;
    ck_assert_int_eq(
        kube_get(c, &kube_res_leases, "default", "kubeclient-test", NULL, &lease, &err), VMOP_OK);
    ck_assert_str_eq(kube_json_path_str(lease, "spec", "holderIdentity"), "beta");
    ck_assert_int_eq(
        (int)cJSON_GetObjectItem(cJSON_GetObjectItem(lease, "spec"), "leaseTransitions")
            ->valuedouble,
        1);
    cJSON_Delete(lease);

    /* beta releases on shutdown: gamma takes over well before a lease duration */
    struct kube_elector *ec = elector(c, "gamma", &cc, 1);
    kube_sleep_ms(400, NULL);
    ck_assert(!kube_elector_is_leader(ec));
    t0 = kube_mono_ms();
    kube_elector_free(eb);
    ck_assert_int_eq(cb.stopped, 1);
    WAIT_UNTIL(kube_elector_is_leader(ec), 10000);
    ck_assert_int_lt(kube_mono_ms() - t0, 1500);
    kube_elector_free(ec);
    ck_assert_int_eq(cc.started, 1);
    kube_client_free(c);
    stop_server(a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kube_integration");
    TCase *tc = tcase_create("apiserver");
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, tls_token_and_crud);
    tcase_add_test(tc, paging_finalizers_gc);
    tcase_add_test(tc, crd_status_subresource);
    tcase_add_test(tc, watch_resume_and_gone);
    tcase_add_test(tc, informer_drops_and_relists);
    tcase_add_test(tc, retries_events_and_leases);
    tcase_add_test(tc, leader_election_failover);
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
