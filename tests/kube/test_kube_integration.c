/* test_kube_integration.c: the Kubernetes client (operator/kube) against a real kube-apiserver +
 * etcd + kube-controller-manager (tests/cluster harness), with the fault proxy in front: TLS +
 * static bearer token through the proxy, client certificate direct, a wrong token, RBAC refusing
 * an unbound user; CRUD with conflicts, patches and server-side apply; paging; finalizers;
 * garbage collection by the real garbage collector (background and foreground); a CRD with the
 * status subresource; watch resume, the server's watch timeout, and 410 Gone both genuine (etcd
 * compacted under a resource without a watch cache: watch and continue token) and injected (the
 * proxy's in-stream ERROR 410); dropped streams and forced relists seen through an informer;
 * two handler sets on one informer (order of dispatch, resync), its compact store (lookups parse
 * fresh trees, a reference outlives an update and a delete, indexes follow); injected 5xx/429
 * retries; events; leader election with real Leases and failover.
 *
 * One cluster for the whole program, started in main() before the Check runner (a start costs
 * ~10 s); each test case works in its own namespace. Suite: integration.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "cluster_harness.h"
#include "kube_client.h"
#include "kube_events.h"
#include "kube_informer.h"
#include "kube_lease.h"
#include "kube_util.h"
#include "wait.h"

/* The one resource with the watch cache off (see main()): etcd serves its watches and continue
 * tokens, so that compaction makes old resourceVersions genuinely gone. */
#define NO_CACHE_ARGS "--watch-cache-sizes=podtemplates#0"
static const struct kube_resource PODTEMPLATES = {"", "v1", "podtemplates", 1};

static struct cluster *cl;

/* A client from kubeconfig whose default namespace is ns (NULL: the kubeconfig's). */
static struct kube_client *client_for(const char *kubeconfig, const char *ns,
                                      const struct kube_client_opts *co)
{
    struct kube_config *cfg = NULL;
    struct kube_client *c = NULL;
    struct vmop_err err = {0};
    ck_assert_msg(kube_config_from_files(kubeconfig, NULL, &cfg, &err) == VMOP_OK, "%s", err.msg);
    if (ns) {
        free(cfg->namespace);
        cfg->namespace = strdup(ns);
    }
    ck_assert_msg(kube_client_new(cfg, co, &c, &err) == VMOP_OK, "%s", err.msg);
    kube_config_free(cfg);
    return c;
}

/* Through the fault proxy with the static token. */
static struct kube_client *proxied(const char *ns, const struct kube_client_opts *co)
{
    return client_for(cl->token_kubeconfig, ns, co);
}

/* Straight to the apiserver with the admin client certificate. */
static struct kube_client *direct(const char *ns)
{
    return client_for(cl->kubeconfig, ns, NULL);
}

static int cm_exists(struct kube_client *c, const char *ns, const char *name)
{
    cJSON *o = NULL;
    struct vmop_err err = {0};
    vmop_rc rc = kube_get(c, &kube_res_configmaps, ns, name, NULL, &o, &err);
    cJSON_Delete(o);
    return rc == VMOP_OK;
}

/* Creates namespace ns and waits until kube-controller-manager has published kube-root-ca.crt in
 * it (a real cluster puts that ConfigMap in every namespace), so that it does not show up in the
 * middle of a test. */
static void make_ns(const char *ns)
{
    struct kube_client *c = direct(NULL);
    struct vmop_err err = {0};
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "apiVersion", "v1");
    cJSON_AddStringToObject(o, "kind", "Namespace");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "metadata"), "name", ns);
    vmop_rc rc = kube_create(c, &kube_res_namespaces, NULL, o, NULL, NULL, &err);
    ck_assert_msg(rc == VMOP_OK || rc == VMOP_E_EXISTS, "namespace %s: %s", ns, err.msg);
    cJSON_Delete(o);
    WAIT_UNTIL(cm_exists(c, ns, "kube-root-ca.crt"), 30000);
    kube_client_free(c);
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

static void faults(const char *method, const char *json)
{
    struct vmop_err err = {0};
    ck_assert_msg(cluster_faults(cl, method, json, &err) == VMOP_OK, "faults: %s", err.msg);
}

START_TEST(tls_token_and_crud)
{
    make_ns("kit-crud");
    struct kube_client *c = proxied("kit-crud", NULL);
    struct vmop_err err = {0};
    cJSON *got = NULL, *res = NULL;

    /* create, duplicate create, get */
    cJSON *o = cm("cm1", "a", "1");
    ck_assert_msg(kube_create(c, &kube_res_configmaps, NULL, o, NULL, &res, &err) == VMOP_OK, "%s",
                  err.msg);
    char rv1[32], uid[64];
    snprintf(rv1, sizeof(rv1), "%s", kube_obj_rv(res));
    snprintf(uid, sizeof(uid), "%s", kube_obj_uid(res));
    ck_assert_str_eq(kube_obj_namespace(res), "kit-crud");
    cJSON_Delete(res);
    ck_assert_int_eq(kube_create(c, &kube_res_configmaps, NULL, o, NULL, &res, &err),
                     VMOP_E_EXISTS);
    ck_assert_str_eq(err.fault, "AlreadyExists");
    vmop_err_clear(&err);
    ck_assert_int_eq(kube_get(c, &kube_res_configmaps, NULL, "cm1", NULL, &got, &err), VMOP_OK);

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
                     VMOP_E_INVALID); /* no field manager (refused before sending) */
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
    vmop_err_clear(&err);
    cJSON_Delete(o);
    kube_client_free(c);

    /* the admin client certificate straight to the apiserver sees the same object */
    c = direct("kit-crud");
    ck_assert_msg(kube_get(c, &kube_res_configmaps, NULL, "cm-applied", NULL, &got, &err) ==
                      VMOP_OK,
                  "%s", err.msg);
    ck_assert_str_eq(kube_json_path_str(got, "data", "k"), "v");
    cJSON_Delete(got);
    kube_client_free(c);

    /* a wrong token is refused (401), through the proxy and direct */
    for (int via_proxy = 1; via_proxy >= 0; via_proxy--) {
        struct kube_config *cfg = NULL;
        ck_assert_int_eq(kube_config_from_files(cl->token_kubeconfig, NULL, &cfg, &err), VMOP_OK);
        vmop_free_secret(cfg->token);
        cfg->token = strdup("wrong");
        if (!via_proxy) {
            free(cfg->server);
            cfg->server = strdup(cl->apiserver_url);
        }
        ck_assert_int_eq(kube_client_new(cfg, NULL, &c, &err), VMOP_OK);
        vmop_err_clear(&err);
        ck_assert_int_eq(kube_get(c, &kube_res_namespaces, NULL, "default", NULL, &got, &err),
                         VMOP_E_AUTH);
        ck_assert_int_eq(err.http_status, 401);
        vmop_err_clear(&err);
        kube_client_free(c);
        kube_config_free(cfg);
    }

    /* RBAC: an authenticated user without bindings is forbidden (403) */
    char *kcfg = NULL;
    ck_assert_msg(cluster_user(cl, "kit-nobody", NULL, &kcfg, &err) == VMOP_OK, "%s", err.msg);
    c = client_for(kcfg, "kit-crud", NULL);
    free(kcfg);
    ck_assert_int_eq(kube_get(c, &kube_res_configmaps, NULL, "cm-applied", NULL, &got, &err),
                     VMOP_E_KUBE);
    ck_assert_str_eq(err.fault, "Forbidden");
    ck_assert_int_eq(err.http_status, 403);
    kube_client_free(c);
}
END_TEST

static cJSON *owned_cm(const char *name, const char *owner, const char *owner_uid, int block)
{
    cJSON *dep = cm(name, NULL, NULL);
    cJSON *refs = cJSON_AddArrayToObject(cJSON_GetObjectItem(dep, "metadata"), "ownerReferences");
    cJSON *ref = cJSON_CreateObject();
    cJSON_AddStringToObject(ref, "apiVersion", "v1");
    cJSON_AddStringToObject(ref, "kind", "ConfigMap");
    cJSON_AddStringToObject(ref, "name", owner);
    cJSON_AddStringToObject(ref, "uid", owner_uid);
    if (block)
        cJSON_AddBoolToObject(ref, "blockOwnerDeletion", 1);
    cJSON_AddItemToArray(refs, ref);
    return dep;
}

START_TEST(paging_finalizers_gc)
{
    make_ns("kit-page");
    struct kube_client *c = direct("kit-page");
    struct vmop_err err = {0};
    cJSON *res = NULL, *got = NULL;
    char name[32];
    for (int i = 0; i < 23; i++) {
        snprintf(name, sizeof(name), "page-%02d", i);
        cJSON *o = cm(name, "i", name);
        cJSON *labels = cJSON_AddObjectToObject(cJSON_GetObjectItem(o, "metadata"), "labels");
        cJSON_AddStringToObject(labels, "set", i % 2 ? "odd" : "even");
        ck_assert_int_eq(kube_create(c, &kube_res_configmaps, "kit-page", o, NULL, NULL, &err),
                         VMOP_OK);
        cJSON_Delete(o);
    }
    unsigned long before = kube_client_requests(c);
    struct kube_opts lo = {.limit = 5, .label_selector = "set=odd"};
    cJSON *l = NULL;
    ck_assert_int_eq(kube_list_all(c, &kube_res_configmaps, "kit-page", &lo, &l, &err), VMOP_OK);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 11);
    ck_assert_uint_ge(kube_client_requests(c) - before, 3); /* 11 items in pages of 5 */
    cJSON_Delete(l);
    struct kube_opts one = {.limit = 5};
    ck_assert_int_eq(kube_list(c, &kube_res_configmaps, "kit-page", &one, &l, &err), VMOP_OK);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 5);
    ck_assert_ptr_nonnull(kube_json_path_str(l, "metadata", "continue"));
    cJSON_Delete(l);
    /* without a selector the namespace also holds kube-root-ca.crt: 23 + 1 */
    ck_assert_int_eq(kube_list_all(c, &kube_res_configmaps, "kit-page", &one, &l, &err), VMOP_OK);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(l, "items")), 24);
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
    WAIT_UNTIL(!cm_exists(c, NULL, "fin"), 5000);

    /* background garbage collection by ownerReference uid (kube-controller-manager's garbage
     * collector) */
    cJSON *owner = cm("owner", NULL, NULL);
    ck_assert_int_eq(kube_create(c, &kube_res_configmaps, NULL, owner, NULL, &res, &err), VMOP_OK);
    cJSON *dep = owned_cm("dependent", "owner", kube_obj_uid(res), 0);
    cJSON_Delete(res);
    ck_assert_int_eq(kube_create(c, &kube_res_configmaps, NULL, dep, NULL, NULL, &err), VMOP_OK);
    ck_assert_int_eq(kube_delete(c, &kube_res_configmaps, NULL, "owner", NULL, NULL, &err),
                     VMOP_OK);
    WAIT_UNTIL(!cm_exists(c, NULL, "dependent"), 30000);
    cJSON_Delete(owner);
    cJSON_Delete(dep);

    /* foreground: the owner stays (deletionTimestamp, foregroundDeletion finalizer) until the
     * collector has deleted its blocking dependent, then goes too */
    owner = cm("fg-owner", NULL, NULL);
    ck_assert_int_eq(kube_create(c, &kube_res_configmaps, NULL, owner, NULL, &res, &err), VMOP_OK);
    dep = owned_cm("fg-dependent", "fg-owner", kube_obj_uid(res), 1);
    cJSON_Delete(res);
    ck_assert_int_eq(kube_create(c, &kube_res_configmaps, NULL, dep, NULL, NULL, &err), VMOP_OK);
    struct kube_opts fg = {.propagation_policy = "Foreground"};
    ck_assert_int_eq(kube_delete(c, &kube_res_configmaps, NULL, "fg-owner", &fg, &res, &err),
                     VMOP_OK);
    ck_assert_ptr_nonnull(kube_json_path_str(res, "metadata", "deletionTimestamp"));
    ck_assert_str_eq(cJSON_GetArrayItem(
                         cJSON_GetObjectItem(cJSON_GetObjectItem(res, "metadata"), "finalizers"), 0)
                         ->valuestring,
                     "foregroundDeletion");
    cJSON_Delete(res);
    WAIT_UNTIL(!cm_exists(c, NULL, "fg-dependent") && !cm_exists(c, NULL, "fg-owner"), 30000);
    cJSON_Delete(owner);
    cJSON_Delete(dep);
    kube_client_free(c);
}
END_TEST

static const struct kube_resource WIDGETS = {"kubeclient.test", "v1", "widgets", 1};

static int crd_established(struct kube_client *c, const char *name)
{
    cJSON *crd = NULL, *cond;
    struct vmop_err err = {0};
    int ok = 0;
    if (kube_get(c, &kube_res_crds, NULL, name, NULL, &crd, &err) != VMOP_OK)
        return 0;
    cJSON_ArrayForEach(cond, cJSON_GetObjectItem(cJSON_GetObjectItem(crd, "status"), "conditions"))
    {
        const char *t = kube_json_str(cond, "type"), *s = kube_json_str(cond, "status");
        ok |= t && s && !strcmp(t, "Established") && !strcmp(s, "True");
    }
    cJSON_Delete(crd);
    return ok;
}

START_TEST(crd_status_subresource)
{
    make_ns("kit-crd");
    struct kube_client *c = proxied("kit-crd", NULL);
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
    WAIT_UNTIL(crd_established(c, "widgets.kubeclient.test"), 30000);
    cJSON *l = NULL;
    /* Established means the names are accepted; serving follows within moments */
    WAIT_UNTIL(kube_list(c, &WIDGETS, "kit-crd", NULL, &l, &err) == VMOP_OK, 30000);
    cJSON_Delete(l);
    cJSON *w = cJSON_Parse("{\"apiVersion\":\"kubeclient.test/v1\",\"kind\":\"Widget\","
                           "\"metadata\":{\"name\":\"w1\"},\"spec\":{\"size\":1},"
                           "\"status\":{\"phase\":\"ignored-on-create\"}}");
    cJSON *res = NULL;
    vmop_err_clear(&err);
    ck_assert_msg(kube_create(c, &WIDGETS, NULL, w, NULL, &res, &err) == VMOP_OK, "%s", err.msg);
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
    ck_assert_str_eq(err.fault, "UnsupportedMediaType");
    cJSON_Delete(w);
    cJSON_Delete(res);
    cJSON_Delete(res2);
    cJSON_Delete(res3);
    cJSON_Delete(sp);
    kube_client_free(c);
}
END_TEST

struct wcount {
    int n;
    char last_rv[32];
};

static int count_ev(void *ud, enum kube_event_type t, cJSON *obj)
{
    struct wcount *w = ud;
    (void)t;
    w->n++;
    snprintf(w->last_rv, sizeof(w->last_rv), "%s", kube_obj_rv(obj) ? kube_obj_rv(obj) : "");
    cJSON_Delete(obj);
    return w->n >= 3; /* stop after three */
}

static cJSON *podtemplate(const char *name)
{
    char buf[256];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"v1\",\"kind\":\"PodTemplate\",\"metadata\":{\"name\":\"%s\"},"
             "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}}",
             name);
    return cJSON_Parse(buf);
}

static void list_rv(struct kube_client *c, const struct kube_resource *r, const char *ns, char *rv,
                    size_t n)
{
    struct vmop_err err = {0};
    cJSON *l = NULL;
    ck_assert_msg(kube_list(c, r, ns, NULL, &l, &err) == VMOP_OK, "%s", err.msg);
    snprintf(rv, n, "%s", kube_json_path_str(l, "metadata", "resourceVersion"));
    cJSON_Delete(l);
}

START_TEST(watch_resume_and_gone)
{
    make_ns("kit-watch");
    struct kube_client *c = proxied("kit-watch", NULL);
    struct vmop_err err = {0};
    char rv0[32], name[32];
    list_rv(c, &kube_res_configmaps, "kit-watch", rv0, sizeof(rv0));
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof(name), "w-%d", i);
        cJSON *o = cm(name, NULL, NULL);
        ck_assert_int_eq(kube_create(c, &kube_res_configmaps, NULL, o, NULL, NULL, &err), VMOP_OK);
        cJSON_Delete(o);
    }
    /* resume from the list RV: exactly the three creates */
    struct wcount w = {0};
    struct kube_opts wo = {.resource_version = rv0, .timeout_seconds = 5};
    ck_assert_int_eq(kube_watch(c, &kube_res_configmaps, "kit-watch", &wo, count_ev, &w, &err),
                     VMOP_E_CANCELED);
    ck_assert_int_eq(w.n, 3);
    vmop_err_clear(&err);

    /* Gone, genuinely: podtemplates have no watch cache (NO_CACHE_ARGS), so etcd serves their
     * watches and continue tokens; after a compaction (kube-apiserver compacts every 5 min) an
     * older resourceVersion is answered with an ERROR event 410 Expired */
    char prv[32];
    list_rv(c, &PODTEMPLATES, "kit-watch", prv, sizeof(prv));
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof(name), "pt-%d", i);
        cJSON *o = podtemplate(name);
        ck_assert_msg(kube_create(c, &PODTEMPLATES, NULL, o, NULL, NULL, &err) == VMOP_OK, "%s",
                      err.msg);
        cJSON_Delete(o);
    }
    cJSON *page = NULL;
    struct kube_opts po = {.limit = 1};
    ck_assert_int_eq(kube_list(c, &PODTEMPLATES, "kit-watch", &po, &page, &err), VMOP_OK);
    char cont[512];
    snprintf(cont, sizeof(cont), "%s", kube_json_path_str(page, "metadata", "continue"));
    cJSON_Delete(page);
    ck_assert_int_gt(strlen(cont), 0);
    cJSON *o = podtemplate("pt-after");
    ck_assert_int_eq(kube_create(c, &PODTEMPLATES, NULL, o, NULL, NULL, &err), VMOP_OK);
    cJSON_Delete(o);
    ck_assert_msg(cluster_etcd_compact(cl, NULL, &err) == VMOP_OK, "%s", err.msg);
    struct kube_opts go = {.resource_version = prv, .timeout_seconds = 5};
    memset(&w, 0, sizeof(w));
    ck_assert_int_eq(kube_watch(c, &PODTEMPLATES, "kit-watch", &go, count_ev, &w, &err),
                     VMOP_E_GONE);
    ck_assert_int_eq(err.http_status, 410);
    ck_assert_str_eq(err.fault, "Expired");
    ck_assert_int_eq(w.n, 0);
    vmop_err_clear(&err);
    /* the continue token of the older list is too old as well (HTTP 410) */
    po.continue_token = cont;
    ck_assert_int_eq(kube_list(c, &PODTEMPLATES, "kit-watch", &po, &page, &err), VMOP_E_GONE);
    ck_assert_int_eq(err.http_status, 410);
    ck_assert_str_eq(err.fault, "Expired");
    vmop_err_clear(&err);

    /* Gone as a long-running cluster's watch cache says it (the proxy answers the watch with an
     * in-stream ERROR 410 event): the same outcome */
    faults("DELETE", NULL);
    faults("POST", "{\"rules\":[{\"method\":\"GET\",\"path\":"
                   "\"^/api/v1/namespaces/kit-watch/configmaps$\",\"watch\":true,"
                   "\"watchEvent\":true,\"code\":410,\"count\":1}]}");
    memset(&w, 0, sizeof(w));
    ck_assert_int_eq(kube_watch(c, &kube_res_configmaps, "kit-watch", &wo, count_ev, &w, &err),
                     VMOP_E_GONE);
    ck_assert_int_eq(err.http_status, 410);
    vmop_err_clear(&err);

    /* the server's timeoutSeconds ends a quiet watch cleanly */
    list_rv(c, &kube_res_configmaps, "kit-watch", rv0, sizeof(rv0));
    struct kube_opts qo = {.resource_version = rv0, .timeout_seconds = 1};
    memset(&w, 0, sizeof(w));
    ck_assert_msg(kube_watch(c, &kube_res_configmaps, "kit-watch", &qo, count_ev, &w, &err) ==
                      VMOP_OK,
                  "%s", err.msg);
    ck_assert_int_eq(w.n, 0);
    kube_client_free(c);
}
END_TEST

/* ---- informer against the server: drops and forced relists ---- */

#define INF_NS "kit-inf"

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
    (void)old;
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
    cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_GetObjectItem(o, "metadata"), "labels"),
                            "kit", "inf");
    ck_assert_msg(kube_create(c, &kube_res_configmaps, INF_NS, o, NULL, NULL, &err) == VMOP_OK,
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
        kube_patch(c, &kube_res_configmaps, INF_NS, name, KUBE_PATCH_MERGE, p, NULL, NULL, &err),
        VMOP_OK);
    cJSON_Delete(p);
}

static void rm_cm(struct kube_client *c, int i)
{
    char name[32];
    struct vmop_err err = {0};
    snprintf(name, sizeof(name), "inf-%d", i);
    ck_assert_int_eq(kube_delete(c, &kube_res_configmaps, INF_NS, name, NULL, NULL, &err), VMOP_OK);
}

static int cached_value_is(struct kube_informer *inf, const char *key, const char *v)
{
    struct kube_obj *o = kube_informer_get(inf, key);
    const char *got = o ? kube_json_path_str(kube_obj_json(o), "data", "v") : NULL;
    int ok = got && !strcmp(got, v);
    kube_obj_unref(o);
    return ok;
}

START_TEST(informer_drops_and_relists)
{
    make_ns(INF_NS);
    faults("DELETE", NULL);
    struct kube_client *c = proxied(INF_NS, NULL);
    struct vmop_err err = {0};
    mk_cm(c, 0);
    mk_cm(c, 1);
    struct irec r = {0};
    pthread_mutex_init(&r.lock, NULL);
    /* the selector leaves out kube-root-ca.crt, which every namespace has */
    struct kube_informer_opts io = {.resource = &kube_res_configmaps,
                                    .ns = INF_NS,
                                    .label_selector = "kit=inf",
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

    /* the proxy drops every watch: the informer resumes from its RV (the real server replays
     * what it missed) without losing or repeating events */
    unsigned long w0 = kube_informer_watches(inf), l0 = kube_informer_lists(inf);
    faults("POST", "{\"dropWatches\":true}");
    WAIT_UNTIL(kube_informer_watches(inf) > w0, 10000);
    touch_cm(c, 0, "1");
    WAIT_UNTIL(rec_get(&r, r.updates, 0) == 1, 10000);
    ck_assert_uint_eq(kube_informer_lists(inf), l0); /* resumed, no relist */
    ck_assert_int_eq(rec_get(&r, r.adds, 2), 1);

    /* drop again; the re-watch is held up while things change and then told 410 Expired (what
     * the real server says once its watch cache has moved past the RV): relist, diffed against
     * the cache */
    faults("POST", "{\"rules\":[{\"method\":\"GET\",\"path\":\"^/api/v1/namespaces/" INF_NS
                   "/configmaps$\",\"watch\":true,\"watchEvent\":true,\"code\":410,\"count\":1,"
                   "\"latencyMs\":1500}]}");
    faults("POST", "{\"dropWatches\":true}");
    for (int i = 0; i < 12; i++)
        touch_cm(c, 2, i % 2 ? "a" : "b");
    mk_cm(c, 3);
    rm_cm(c, 0);
    WAIT_UNTIL(kube_informer_lists(inf) > l0, 15000);
    WAIT_UNTIL(rec_get(&r, r.deletes, 0) == 1 && rec_get(&r, r.adds, 3) == 1, 15000);
    WAIT_UNTIL(kube_informer_len(inf) == 2, 5000);
    /* the last of the twelve touches wins (in the relist or in the watch right after it) */
    WAIT_UNTIL(cached_value_is(inf, INF_NS "/inf-2", "a"), 5000);
    /* nothing was delivered twice */
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(rec_get(&r, r.adds, i), 1);
    ck_assert_int_eq(rec_get(&r, r.deletes, 0), 1);
    ck_assert_int_eq(rec_get(&r, r.deletes, 1), 1);

    kube_informer_free(inf);
    kube_client_free(c);
    faults("DELETE", NULL);
}
END_TEST

/* ---- informer: several handler sets, compact storage, parsed lookups ---- */

#define CMP_NS "kit-cmp"

struct hlog {
    pthread_mutex_t lock;
    char log[64][48];           /* "A add cmp-0 v=0", in dispatch order */
    int n, same_ptr_updates[2]; /* resyncs seen by A and B */
};

struct hset {
    struct hlog *l;
    char tag;
};

static void hlog_add(struct hset *h, const char *what, const struct kube_obj *o)
{
    const char *v = kube_json_path_str(kube_obj_json(o), "data", "v");
    pthread_mutex_lock(&h->l->lock);
    if (h->l->n < 64)
        snprintf(h->l->log[h->l->n], sizeof(h->l->log[0]), "%c %s %s v=%s", h->tag, what,
                 kube_obj_name(kube_obj_json(o)), v ? v : "-");
    h->l->n++;
    pthread_mutex_unlock(&h->l->lock);
}

static void c_add(void *ud, const struct kube_obj *o)
{
    hlog_add(ud, "add", o);
}

static void c_upd(void *ud, const struct kube_obj *old, const struct kube_obj *o)
{
    struct hset *h = ud;
    if (old == o) { /* a resync: not logged */
        pthread_mutex_lock(&h->l->lock);
        h->l->same_ptr_updates[h->tag - 'A']++;
        pthread_mutex_unlock(&h->l->lock);
        return;
    }
    hlog_add(h, "update", o);
}

static void c_del(void *ud, const struct kube_obj *o)
{
    hlog_add(ud, "delete", o);
}

static void by_v(const cJSON *obj, void *ud, kube_index_emit_fn emit, void *ctx)
{
    const char *v = kube_json_path_str(obj, "data", "v");
    (void)ud;
    if (v)
        emit(ctx, v);
}

static int hlog_n(struct hlog *l)
{
    pthread_mutex_lock(&l->lock);
    int n = l->n;
    pthread_mutex_unlock(&l->lock);
    return n;
}

static int resyncs_seen(struct hlog *l)
{
    pthread_mutex_lock(&l->lock);
    int ok = l->same_ptr_updates[0] > 0 && l->same_ptr_updates[1] > 0;
    pthread_mutex_unlock(&l->lock);
    return ok;
}

/* Pseudo-random hex: text that deflates, but not to nothing. */
static void fill_hex(char *buf, size_t n)
{
    unsigned x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = "0123456789abcdef"[(x >> 16) & 15];
    }
    buf[n] = 0;
}

/* pad: a second data key, so that the cached text is long enough to be kept deflated. */
static void cmp_cm(struct kube_client *c, const char *name, const char *v, const char *pad,
                   int create)
{
    struct vmop_err err = {0};
    cJSON *o = cm(name, "v", v);
    if (pad)
        cJSON_AddStringToObject(cJSON_GetObjectItem(o, "data"), "pad", pad);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_GetObjectItem(o, "metadata"), "labels"),
                            "kit", "cmp");
    vmop_rc rc = create ? kube_create(c, &kube_res_configmaps, CMP_NS, o, NULL, NULL, &err)
                        : kube_patch(c, &kube_res_configmaps, CMP_NS, name, KUBE_PATCH_MERGE, o,
                                     NULL, NULL, &err);
    ck_assert_msg(rc == VMOP_OK, "%s", err.msg);
    cJSON_Delete(o);
}

/* The keys under index "v" = value, sorted, comma-separated. */
static void keys_by_v(struct kube_informer *inf, const char *value, char *out, size_t n)
{
    struct kube_obj **objs = NULL;
    size_t k = 0;
    struct vmop_err err = {0};
    out[0] = 0;
    ck_assert_int_eq(kube_informer_by_index(inf, "v", value, &objs, &k, &err), VMOP_OK);
    for (size_t i = 0; i < k; i++) /* at most two here: sort by swapping */
        for (size_t j = i + 1; j < k; j++)
            if (strcmp(kube_obj_key(objs[i]), kube_obj_key(objs[j])) > 0) {
                struct kube_obj *t = objs[i];
                objs[i] = objs[j];
                objs[j] = t;
            }
    for (size_t i = 0; i < k; i++)
        snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? "," : "", kube_obj_key(objs[i]));
    kube_objs_free(objs, k);
}

START_TEST(informer_handler_sets_and_compact_store)
{
    make_ns(CMP_NS);
    struct kube_client *c = direct(CMP_NS);
    struct vmop_err err = {0};
    struct hlog l = {0};
    pthread_mutex_init(&l.lock, NULL);
    struct hset a = {&l, 'A'}, b = {&l, 'B'};
    struct kube_informer_opts io = {.resource = &kube_res_configmaps,
                                    .ns = CMP_NS,
                                    .label_selector = "kit=cmp",
                                    .resync_ms = 400,
                                    .watch_timeout_s = 60};
    struct kube_informer_handlers ha = {c_add, c_upd, c_del, &a}, hb = {c_add, c_upd, c_del, &b};
    struct kube_informer *inf = NULL;
    char got[256], pad[6001];
    fill_hex(pad, sizeof(pad) - 1);
    cmp_cm(c, "cmp-0", "0", NULL, 1); /* a short text, kept raw */
    cmp_cm(c, "cmp-1", "0", pad, 1);  /* a long one, kept deflated */
    ck_assert_int_eq(kube_informer_new(c, &io, &ha, &inf, &err), VMOP_OK);
    ck_assert_int_eq(kube_informer_add_handlers(inf, &hb, &err), VMOP_OK);
    ck_assert_int_eq(kube_informer_add_index(inf, "v", by_v, NULL, &err), VMOP_OK);
    ck_assert(kube_informer_has_index(inf, "v"));
    ck_assert(!kube_informer_has_index(inf, "w"));
    ck_assert_int_eq(kube_informer_start(inf, &err), VMOP_OK);
    ck_assert_int_eq(kube_informer_add_handlers(inf, &hb, &err), VMOP_E_INVALID); /* started */
    ck_assert_int_eq(kube_informer_wait_synced(inf, 10000), VMOP_OK);
    WAIT_UNTIL(hlog_n(&l) == 4, 10000);

    /* two lookups: two trees with the same content */
    struct kube_obj *o1 = kube_informer_get(inf, CMP_NS "/cmp-0"),
                    *o2 = kube_informer_get(inf, CMP_NS "/cmp-0");
    ck_assert_ptr_nonnull(o1);
    ck_assert_ptr_nonnull(o2);
    ck_assert_ptr_ne(o1, o2);
    ck_assert_ptr_ne(kube_obj_json(o1), kube_obj_json(o2));
    ck_assert(cJSON_Compare(kube_obj_json(o1), kube_obj_json(o2), 1));
    ck_assert_str_eq(kube_obj_get_rv(o1), kube_obj_get_rv(o2));
    ck_assert_ptr_null(
        cJSON_GetObjectItem(cJSON_GetObjectItem(kube_obj_json(o1), "metadata"), "managedFields"));
    kube_obj_unref(o2);
    keys_by_v(inf, "0", got, sizeof(got));
    ck_assert_str_eq(got, CMP_NS "/cmp-0," CMP_NS "/cmp-1");

    /* an update: the lookup shows it, the reference taken before does not change, the index
     * follows */
    cmp_cm(c, "cmp-0", "1", NULL, 0);
    WAIT_UNTIL(hlog_n(&l) == 6, 10000);
    WAIT_UNTIL(cached_value_is(inf, CMP_NS "/cmp-0", "1"), 5000);
    ck_assert_str_eq(kube_json_path_str(kube_obj_json(o1), "data", "v"), "0");
    keys_by_v(inf, "0", got, sizeof(got));
    ck_assert_str_eq(got, CMP_NS "/cmp-1");
    keys_by_v(inf, "1", got, sizeof(got));
    ck_assert_str_eq(got, CMP_NS "/cmp-0");

    /* a delete: the reference still holds the first state; the key leaves store and index */
    ck_assert_int_eq(kube_delete(c, &kube_res_configmaps, CMP_NS, "cmp-0", NULL, NULL, &err),
                     VMOP_OK);
    WAIT_UNTIL(hlog_n(&l) == 8, 10000);
    ck_assert_ptr_null(kube_informer_get(inf, CMP_NS "/cmp-0"));
    ck_assert_str_eq(kube_json_path_str(kube_obj_json(o1), "data", "v"), "0");
    ck_assert_str_eq(kube_obj_key(o1), CMP_NS "/cmp-0");
    keys_by_v(inf, "1", got, sizeof(got));
    ck_assert_str_eq(got, "");
    {
        struct kube_obj **objs = NULL;
        size_t n = 0;
        ck_assert_int_eq(kube_informer_list(inf, &objs, &n, &err), VMOP_OK);
        ck_assert_uint_eq(n, 1);
        ck_assert_str_eq(kube_obj_key(objs[0]), CMP_NS "/cmp-1");
        /* the deflated text comes back whole, also on a second lookup */
        ck_assert_str_eq(kube_json_path_str(kube_obj_json(objs[0]), "data", "pad"), pad);
        kube_objs_free(objs, n);
        struct kube_obj *o = kube_informer_get(inf, CMP_NS "/cmp-1");
        ck_assert_ptr_nonnull(o);
        ck_assert_str_eq(kube_json_path_str(kube_obj_json(o), "data", "pad"), pad);
        ck_assert_str_eq(kube_json_path_str(kube_obj_json(o), "data", "v"), "0");
        ck_assert(kube_obj_get_rv(o)[0]);
        kube_obj_unref(o);
    }

    /* resyncs reach both sets with old == new */
    WAIT_UNTIL(resyncs_seen(&l), 5000);
    kube_informer_free(inf);
    /* every event went to A then B, before the next event */
    const char *want[] = {"add cmp-0 v=0", "add cmp-1 v=0", "update cmp-0 v=1", "delete cmp-0 v=1"};
    ck_assert_int_eq(l.n, 8);
    for (int i = 0; i < 4; i++) {
        char wa[48], wb[48];
        snprintf(wa, sizeof(wa), "A %s", want[i]);
        snprintf(wb, sizeof(wb), "B %s", want[i]);
        /* the two adds of the first list may come in either order */
        if (i < 2 && strcmp(l.log[0] + 2, want[0]) != 0) {
            snprintf(wa, sizeof(wa), "A %s", want[1 - i]);
            snprintf(wb, sizeof(wb), "B %s", want[1 - i]);
        }
        ck_assert_str_eq(l.log[2 * i], wa);
        ck_assert_str_eq(l.log[2 * i + 1], wb);
    }
    /* o1 outlives the informer */
    ck_assert_str_eq(kube_json_path_str(kube_obj_json(o1), "data", "v"), "0");
    kube_obj_unref(o1);
    ck_assert_int_eq(kube_delete(c, &kube_res_configmaps, CMP_NS, "cmp-1", NULL, NULL, &err),
                     VMOP_OK);
    kube_client_free(c);
}
END_TEST

START_TEST(retries_events_and_leases)
{
    make_ns("kit-retry");
    faults("DELETE", NULL);
    struct kube_client_opts co = {.retry_base_ms = 20, .retry_max_ms = 300};
    struct kube_client *c = proxied("kit-retry", &co);
    struct vmop_err err = {0};
    cJSON *got = NULL;

    /* injected 503s and a 429 are retried */
    faults("POST", "{\"rules\":[{\"method\":\"GET\",\"path\":\"^/api/v1/namespaces/kit-retry$\","
                   "\"code\":503,\"count\":2}]}");
    unsigned long r0 = kube_client_retries(c);
    ck_assert_msg(kube_get(c, &kube_res_namespaces, NULL, "kit-retry", NULL, &got, &err) == VMOP_OK,
                  "%s", err.msg);
    cJSON_Delete(got);
    ck_assert_uint_eq(kube_client_retries(c) - r0, 2);
    faults("POST", "{\"rules\":[{\"method\":\"GET\",\"path\":\"^/api/v1/namespaces/kit-retry$\","
                   "\"code\":429,\"count\":1}]}");
    r0 = kube_client_retries(c);
    ck_assert_int_eq(kube_get(c, &kube_res_namespaces, NULL, "kit-retry", NULL, &got, &err),
                     VMOP_OK);
    cJSON_Delete(got);
    ck_assert_uint_eq(kube_client_retries(c) - r0, 1);
    /* a POST answered 500 is not retried (it may have been applied) */
    faults("POST", "{\"rules\":[{\"method\":\"POST\",\"path\":"
                   "\"^/api/v1/namespaces/kit-retry/configmaps$\",\"code\":500,\"count\":1}]}");
    cJSON *o = cm("not-retried", NULL, NULL), *res = NULL;
    ck_assert_int_ne(kube_create(c, &kube_res_configmaps, NULL, o, NULL, NULL, &err), VMOP_OK);
    ck_assert_int_eq(err.http_status, 500);
    vmop_err_clear(&err);
    cJSON_Delete(o);

    /* events: a repeat becomes count 2 on the same Event */
    o = cm("evt-target", NULL, NULL);
    ck_assert_int_eq(kube_create(c, &kube_res_configmaps, NULL, o, NULL, &res, &err), VMOP_OK);
    struct kube_recorder *rec = NULL;
    struct kube_recorder_opts ro = {.component = "kubeclient-test"};
    ck_assert_int_eq(kube_recorder_new(c, &ro, &rec, &err), VMOP_OK);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(kube_event(rec, res, "Normal", "Tested", &err, "hello %d", 7) == VMOP_OK,
                      "%s", err.msg);
    cJSON *l = NULL;
    struct kube_opts lo = {.field_selector = "involvedObject.name=evt-target"};
    ck_assert_int_eq(kube_list(c, &kube_res_events, "kit-retry", &lo, &l, &err), VMOP_OK);
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
    faults("DELETE", NULL);
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
    struct kube_elector_opts o = {.ns = "kit-lease",
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
    make_ns("kit-lease");
    struct kube_client *c = direct("kit-lease");
    struct vmop_err err = {0};
    struct lcb ca = {0}, cb = {0}, cc = {0};
    struct kube_elector *ea = elector(c, "alpha", &ca, 0);
    WAIT_UNTIL(kube_elector_is_leader(ea), 10000);
    struct kube_elector *eb = elector(c, "beta", &cb, 1);
    vmop_sleep_ms(600, NULL); /* three retry periods: beta must stay a follower */
    ck_assert(!kube_elector_is_leader(eb));
    char holder[64];
    kube_elector_holder(eb, holder, sizeof(holder));
    ck_assert_str_eq(holder, "alpha");

    /* alpha dies without releasing: beta takes over after the lease duration */
    int64_t t0 = vmop_mono_ms();
    kube_elector_free(ea);
    ck_assert_int_eq(ca.started, 1);
    ck_assert_int_eq(ca.stopped, 1);
    WAIT_UNTIL(kube_elector_is_leader(eb), 10000);
    ck_assert_int_ge(vmop_mono_ms() - t0, 1500);
    cJSON *lease = NULL;
    ck_assert_int_eq(
        kube_get(c, &kube_res_leases, "kit-lease", "kubeclient-test", NULL, &lease, &err), VMOP_OK);
    ck_assert_str_eq(kube_json_path_str(lease, "spec", "holderIdentity"), "beta");
    ck_assert_int_eq(
        (int)cJSON_GetObjectItem(cJSON_GetObjectItem(lease, "spec"), "leaseTransitions")
            ->valuedouble,
        1);
    cJSON_Delete(lease);

    /* beta releases on shutdown: gamma takes over well before a lease duration */
    struct kube_elector *ec = elector(c, "gamma", &cc, 1);
    vmop_sleep_ms(400, NULL);
    ck_assert(!kube_elector_is_leader(ec));
    t0 = vmop_mono_ms();
    kube_elector_free(eb);
    ck_assert_int_eq(cb.stopped, 1);
    WAIT_UNTIL(kube_elector_is_leader(ec), 10000);
    ck_assert_int_lt(vmop_mono_ms() - t0, 1500);
    kube_elector_free(ec);
    ck_assert_int_eq(cc.started, 1);
    kube_client_free(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kube_integration");
    TCase *tc = tcase_create("cluster");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, tls_token_and_crud);
    tcase_add_test(tc, paging_finalizers_gc);
    tcase_add_test(tc, crd_status_subresource);
    tcase_add_test(tc, watch_resume_and_gone);
    tcase_add_test(tc, informer_drops_and_relists);
    tcase_add_test(tc, informer_handler_sets_and_compact_store);
    tcase_add_test(tc, retries_events_and_leases);
    tcase_add_test(tc, leader_election_failover);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    struct vmop_err err = {0};
    struct cluster_opts co = {.proxy = 1, .apiserver_args = NO_CACHE_ARGS};
    if (kube_global_init(&err) != VMOP_OK)
        return EXIT_FAILURE;
    cl = cluster_start_or_exit(&co);
    int status = vmop_check_run(suite());
    cluster_stop_or_warn(cl);
    kube_global_cleanup();
    return status;
}
