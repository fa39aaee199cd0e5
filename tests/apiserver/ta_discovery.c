/* ta_discovery.c: what clients read before touching resources: /version (minor 32, see kube-api.md
 * §0.1), aggregated discovery v2/v2beta1 and legacy discovery (/api, /api/v1, /apis, /apis/<g>,
 * /apis/<g>/<v>), and OpenAPI v3 (/openapi/v3 index with per-document hashes that change with the
 * schema; documents built by apischema's as_openapi_gv_doc; /openapi/v2 is 404). */
#include "ta_http.h"

#include "ta_as.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

vmop_rc ta_handle_version(struct ta_req *rq, struct vmop_err *err)
{
    static const char v[] =
        "{\"major\":\"1\",\"minor\":\"32\",\"gitVersion\":\"v1.32.0\",\"gitCommit\":"
        "\"0000000000000000000000000000000000000000\",\"gitTreeState\":\"clean\",\"buildDate\":"
        "\"2025-01-01T00:00:00Z\",\"goVersion\":\"go1.23.0\",\"compiler\":\"gc\",\"platform\":"
        "\"linux/amd64\"}";
    char *t = strdup(v);
    if (!t)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    ta_reply_text(rq, 200, t);
    return VMOP_OK;
}

static const char *const all_verbs[] = {
    "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch", NULL};

static cJSON *verbs_array(void)
{
    cJSON *a = cJSON_CreateArray();
    size_t i;
    for (i = 0; a && all_verbs[i]; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(all_verbs[i]));
    return a;
}

/* Served versions of a type, in kube priority order (preferred first). */
static size_t sorted_versions(const struct ta_rtype *rt, const struct ta_version **out, size_t max)
{
    size_t n = 0, i, j;
    for (i = 0; i < rt->n_versions && n < max; i++)
        if (rt->versions[i].served)
            out[n++] = &rt->versions[i];
    for (i = 1; i < n; i++)
        for (j = i; j > 0 && ta_version_cmp(out[j]->name, out[j - 1]->name) < 0; j--) {
            const struct ta_version *t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

/* The group names served (core "" first, then in registration order). Returns a JSON array of
 * strings; each group's versions are collected from its types. */
static cJSON *served_groups(struct ta_store *st)
{
    cJSON *groups = cJSON_CreateArray();
    size_t i;
    for (i = 0; groups && i < st->n_types; i++) {
        const struct ta_rtype *rt = st->types[i];
        const cJSON *g;
        int seen = 0;
        if (!rt->served)
            continue;
        cJSON_ArrayForEach(g, groups) if (strcmp(g->valuestring, rt->group) == 0) seen = 1;
        if (!seen)
            cJSON_AddItemToArray(groups, cJSON_CreateString(rt->group));
    }
    return groups;
}

/* The versions served in a group, preferred first. */
static cJSON *group_versions(struct ta_store *st, const char *group)
{
    cJSON *vers = cJSON_CreateArray();
    const struct ta_version *vs[16];
    size_t i, j, k, n;
    for (i = 0; vers && i < st->n_types; i++) {
        const struct ta_rtype *rt = st->types[i];
        if (!rt->served || strcmp(rt->group, group) != 0)
            continue;
        n = sorted_versions(rt, vs, 16);
        for (j = 0; j < n; j++) {
            const cJSON *v;
            int seen = 0, pos = 0;
            cJSON_ArrayForEach(v, vers) if (strcmp(v->valuestring, vs[j]->name) == 0) seen = 1;
            if (seen)
                continue;
            /* insert in priority order */
            k = 0;
            cJSON_ArrayForEach(v, vers)
            {
                if (ta_version_cmp(vs[j]->name, v->valuestring) < 0)
                    break;
                k++;
            }
            pos = (int)k;
            if (pos >= cJSON_GetArraySize(vers))
                cJSON_AddItemToArray(vers, cJSON_CreateString(vs[j]->name));
            else
                cJSON_InsertItemInArray(vers, pos, cJSON_CreateString(vs[j]->name));
        }
    }
    return vers;
}

static void add_str_array(cJSON *o, const char *key, const cJSON *arr)
{
    if (arr && cJSON_GetArraySize(arr) > 0)
        cJSON_AddItemToObject(o, key, cJSON_Duplicate(arr, 1));
}

static cJSON *aggregated_resource(const struct ta_rtype *rt, const struct ta_version *v)
{
    cJSON *r = cJSON_CreateObject(), *rk, *subs;
    cJSON_AddStringToObject(r, "resource", rt->plural);
    rk = cJSON_AddObjectToObject(r, "responseKind");
    cJSON_AddStringToObject(rk, "group", rt->group);
    cJSON_AddStringToObject(rk, "version", v->name);
    cJSON_AddStringToObject(rk, "kind", rt->kind);
    cJSON_AddStringToObject(r, "scope", rt->namespaced ? "Namespaced" : "Cluster");
    cJSON_AddStringToObject(r, "singularResource", rt->singular);
    cJSON_AddItemToObject(r, "verbs", verbs_array());
    add_str_array(r, "shortNames", rt->short_names);
    add_str_array(r, "categories", rt->categories);
    if (v->has_status) {
        cJSON *sr;
        subs = cJSON_AddArrayToObject(r, "subresources");
        sr = cJSON_CreateObject();
        cJSON_AddStringToObject(sr, "subresource", "status");
        rk = cJSON_AddObjectToObject(sr, "responseKind");
        cJSON_AddStringToObject(rk, "group", rt->group);
        cJSON_AddStringToObject(rk, "version", v->name);
        cJSON_AddStringToObject(rk, "kind", rt->kind);
        cJSON_AddItemToObject(
            sr, "verbs",
            cJSON_CreateStringArray((const char *const[]){"get", "patch", "update"}, 3));
        cJSON_AddItemToArray(subs, sr);
    }
    return r;
}

static cJSON *legacy_resources(struct ta_store *st, const char *group, const char *version)
{
    cJSON *arr = cJSON_CreateArray();
    size_t i;
    for (i = 0; arr && i < st->n_types; i++) {
        const struct ta_rtype *rt = st->types[i];
        const struct ta_version *v;
        cJSON *r;
        if (!rt->served || strcmp(rt->group, group) != 0)
            continue;
        v = ta_rtype_version(rt, version);
        if (!v || !v->served)
            continue;
        r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "name", rt->plural);
        cJSON_AddStringToObject(r, "singularName", rt->singular);
        cJSON_AddBoolToObject(r, "namespaced", rt->namespaced);
        cJSON_AddStringToObject(r, "kind", rt->kind);
        cJSON_AddItemToObject(r, "verbs", verbs_array());
        add_str_array(r, "shortNames", rt->short_names);
        add_str_array(r, "categories", rt->categories);
        cJSON_AddItemToArray(arr, r);
        if (v->has_status) {
            r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "name", "");
            cJSON_AddStringToObject(r, "singularName", "");
            cJSON_AddBoolToObject(r, "namespaced", rt->namespaced);
            cJSON_AddStringToObject(r, "kind", rt->kind);
            cJSON_AddItemToObject(
                r, "verbs",
                cJSON_CreateStringArray((const char *const[]){"get", "patch", "update"}, 3));
            {
                char name[TA_MAX_NAME + 16];
                snprintf(name, sizeof(name), "%s/status", rt->plural);
                ta_jset_str(r, "name", name);
            }
            cJSON_AddItemToArray(arr, r);
        }
    }
    return arr;
}

/* Aggregated APIGroupDiscoveryList for core (core = 1) or for every other group. */
static cJSON *aggregated(struct ta_store *st, int core, const char *api_version)
{
    cJSON *doc = cJSON_CreateObject(), *items, *groups = served_groups(st), *g;
    cJSON_AddStringToObject(doc, "kind", "APIGroupDiscoveryList");
    cJSON_AddStringToObject(doc, "apiVersion", api_version);
    cJSON_AddObjectToObject(doc, "metadata");
    items = cJSON_AddArrayToObject(doc, "items");
    cJSON_ArrayForEach(g, groups)
    {
        const char *group = g->valuestring;
        cJSON *item, *vers, *v, *versions;
        if ((group[0] == '\0') != core)
            continue;
        item = cJSON_CreateObject();
        cJSON_AddObjectToObject(item, "metadata");
        ta_jset_str(cJSON_GetObjectItem(item, "metadata"), "name", group);
        versions = cJSON_AddArrayToObject(item, "versions");
        vers = group_versions(st, group);
        cJSON_ArrayForEach(v, vers)
        {
            cJSON *ver = cJSON_CreateObject(), *res = cJSON_CreateArray();
            size_t i;
            cJSON_AddStringToObject(ver, "version", v->valuestring);
            for (i = 0; i < st->n_types; i++) {
                const struct ta_rtype *rt = st->types[i];
                const struct ta_version *tv;
                if (!rt->served || strcmp(rt->group, group) != 0)
                    continue;
                tv = ta_rtype_version(rt, v->valuestring);
                if (tv && tv->served)
                    cJSON_AddItemToArray(res, aggregated_resource(rt, tv));
            }
            cJSON_AddItemToObject(ver, "resources", res);
            cJSON_AddStringToObject(ver, "freshness", "Current");
            cJSON_AddItemToArray(versions, ver);
        }
        cJSON_Delete(vers);
        cJSON_AddItemToArray(items, item);
    }
    cJSON_Delete(groups);
    return doc;
}

/* Which aggregated discovery version the Accept header asks for first: "v2", "v2beta1" or NULL. */
static const char *accept_aggregated(const struct ta_req *rq)
{
    const char *accept = ta_header(rq, "Accept"), *p;
    if (!accept)
        return NULL;
    for (p = accept; *p;) {
        size_t n = strcspn(p, ",");
        char item[512], *q, *save = NULL;
        int json = 0, g = 0, as = 0;
        const char *ver = NULL;
        if (n < sizeof(item)) {
            memcpy(item, p, n);
            item[n] = '\0';
            for (q = strtok_r(item, ";", &save); q; q = strtok_r(NULL, ";", &save)) {
                while (isspace((unsigned char)*q))
                    q++;
                if (strcmp(q, "application/json") == 0)
                    json = 1;
                else if (strcmp(q, "g=apidiscovery.k8s.io") == 0)
                    g = 1;
                else if (strcmp(q, "as=APIGroupDiscoveryList") == 0)
                    as = 1;
                else if (strcmp(q, "v=v2") == 0)
                    ver = "v2";
                else if (strcmp(q, "v=v2beta1") == 0)
                    ver = "v2beta1";
            }
            if (json && g && as && ver)
                return ver;
            if (json && !g)
                return NULL;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return NULL;
}

vmop_rc ta_handle_discovery(struct ta_req *rq, struct vmop_err *err)
{
    struct ta_store *st = &rq->s->st;
    cJSON *doc = NULL;
    const char *agg = accept_aggregated(rq);
    const char *path = rq->path;
    pthread_mutex_lock(&st->lock);
    if ((strcmp(path, "/api") == 0 || strcmp(path, "/apis") == 0) && agg) {
        char av[64];
        snprintf(av, sizeof(av), "apidiscovery.k8s.io/%s", agg);
        doc = aggregated(st, path[4] == '\0', av);
        rq->ctype = strcmp(agg, "v2") == 0
                        ? "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
                        : "application/json;g=apidiscovery.k8s.io;v=v2beta1;as="
                          "APIGroupDiscoveryList";
    } else if (strcmp(path, "/api") == 0) {
        doc = cJSON_CreateObject();
        cJSON *sa, *e;
        cJSON_AddStringToObject(doc, "kind", "APIVersions");
        cJSON_AddItemToObject(doc, "versions",
                              cJSON_CreateStringArray((const char *const[]){"v1"}, 1));
        sa = cJSON_AddArrayToObject(doc, "serverAddressByClientCIDRs");
        e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "clientCIDR", "0.0.0.0/0");
        cJSON_AddStringToObject(e, "serverAddress", "127.0.0.1");
        cJSON_AddItemToArray(sa, e);
    } else if (strcmp(path, "/apis") == 0 || (rq->group && !rq->version)) {
        cJSON *groups = served_groups(st), *g, *arr;
        doc = cJSON_CreateObject();
        if (rq->group) {
            cJSON_AddStringToObject(doc, "kind", "APIGroup");
        } else {
            cJSON_AddStringToObject(doc, "kind", "APIGroupList");
        }
        cJSON_AddStringToObject(doc, "apiVersion", "v1");
        arr = rq->group ? NULL : cJSON_AddArrayToObject(doc, "groups");
        cJSON_ArrayForEach(g, groups)
        {
            cJSON *item, *vers, *v, *va, *pref = NULL;
            char gv[2 * TA_MAX_NAME];
            if (!g->valuestring[0] || (rq->group && strcmp(rq->group, g->valuestring) != 0))
                continue;
            item = rq->group ? doc : cJSON_CreateObject();
            cJSON_AddStringToObject(item, "name", g->valuestring);
            va = cJSON_AddArrayToObject(item, "versions");
            vers = group_versions(st, g->valuestring);
            cJSON_ArrayForEach(v, vers)
            {
                cJSON *e = cJSON_CreateObject();
                snprintf(gv, sizeof(gv), "%s/%s", g->valuestring, v->valuestring);
                cJSON_AddStringToObject(e, "groupVersion", gv);
                cJSON_AddStringToObject(e, "version", v->valuestring);
                if (!pref)
                    pref = cJSON_Duplicate(e, 1);
                cJSON_AddItemToArray(va, e);
            }
            cJSON_Delete(vers);
            if (pref)
                cJSON_AddItemToObject(item, "preferredVersion", pref);
            if (arr)
                cJSON_AddItemToArray(arr, item);
        }
        cJSON_Delete(groups);
        if (rq->group && !cJSON_GetObjectItem(doc, "name")) {
            cJSON_Delete(doc);
            doc = NULL;
        }
    } else if (rq->version) {
        cJSON *res = legacy_resources(st, rq->group ? rq->group : "", rq->version);
        char gv[2 * TA_MAX_NAME];
        if (cJSON_GetArraySize(res) == 0) {
            cJSON_Delete(res);
        } else {
            doc = cJSON_CreateObject();
            cJSON_AddStringToObject(doc, "kind", "APIResourceList");
            cJSON_AddStringToObject(doc, "apiVersion", "v1");
            if (rq->group && rq->group[0])
                snprintf(gv, sizeof(gv), "%s/%s", rq->group, rq->version);
            else
                snprintf(gv, sizeof(gv), "%s", rq->version);
            cJSON_AddStringToObject(doc, "groupVersion", gv);
            cJSON_AddItemToObject(doc, "resources", res);
        }
    }
    pthread_mutex_unlock(&st->lock);
    if (!doc) {
        rq->ctype = NULL;
        return ta_fail(err, 404, "NotFound", "the server could not find the requested resource");
    }
    ta_reply_json(rq, 200, doc);
    return VMOP_OK;
}

/* ---- OpenAPI v3 ---------------------------------------------------------------------------- */

static unsigned long long fnv1a(const char *s)
{
    unsigned long long h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

/* The cached document text + hash of one group/version ("api/v1" or "apis/<g>/<v>"), rebuilt when
 * the registry changed. Lock held. Returns the cache entry (borrowed) or NULL (not served / error).
 */
static const cJSON *openapi_entry(struct ta_store *st, const char *group, const char *version,
                                  struct vmop_err *err)
{
    char key[2 * TA_MAX_NAME + 8];
    cJSON *e, *descs, *doc = NULL;
    const cJSON *gen;
    char *text, hash[32];
    size_t i;
    vmop_rc rc;
    if (group[0])
        snprintf(key, sizeof(key), "apis/%s/%s", group, version);
    else
        snprintf(key, sizeof(key), "api/%s", version);
    e = cJSON_GetObjectItemCaseSensitive(st->openapi_cache, key);
    gen = cJSON_GetObjectItemCaseSensitive(e, "gen");
    if (e && cJSON_IsNumber(gen) && (unsigned)gen->valuedouble == st->reg_gen)
        return e;
    descs = cJSON_CreateArray();
    for (i = 0; descs && i < st->n_types; i++) {
        const struct ta_rtype *rt = st->types[i];
        const struct ta_version *v;
        if (!rt->served || strcmp(rt->group, group) != 0)
            continue;
        v = ta_rtype_version(rt, version);
        if (v && v->served)
            cJSON_AddItemToArray(descs, ta_rtype_descriptor(rt, v));
    }
    if (!descs || cJSON_GetArraySize(descs) == 0) {
        cJSON_Delete(descs);
        return NULL;
    }
    rc = as_openapi_gv_doc(group, version, descs, &doc, err);
    cJSON_Delete(descs);
    if (rc)
        return NULL;
    text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    if (!text) {
        vmop_fail(err, VMOP_E_NOMEM, "out of memory printing an OpenAPI document");
        return NULL;
    }
    snprintf(hash, sizeof(hash), "%016llX", fnv1a(text));
    e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "gen", st->reg_gen);
    cJSON_AddStringToObject(e, "hash", hash);
    cJSON_AddStringToObject(e, "text", text);
    free(text);
    if (cJSON_GetObjectItemCaseSensitive(st->openapi_cache, key))
        cJSON_ReplaceItemInObjectCaseSensitive(st->openapi_cache, key, e);
    else
        cJSON_AddItemToObject(st->openapi_cache, key, e);
    return e;
}

vmop_rc ta_handle_openapi(struct ta_req *rq, struct vmop_err *err)
{
    struct ta_store *st = &rq->s->st;
    const char *path = rq->path;
    vmop_rc rc = VMOP_OK;
    if (strcmp(path, "/openapi/v3") == 0 || strcmp(path, "/openapi/v3/") == 0) {
        cJSON *doc = cJSON_CreateObject(), *paths = cJSON_AddObjectToObject(doc, "paths");
        cJSON *groups;
        const cJSON *g;
        pthread_mutex_lock(&st->lock);
        groups = served_groups(st);
        cJSON_ArrayForEach(g, groups)
        {
            cJSON *vers = group_versions(st, g->valuestring);
            const cJSON *v;
            cJSON_ArrayForEach(v, vers)
            {
                struct vmop_err e2 = {0};
                const cJSON *ent = openapi_entry(st, g->valuestring, v->valuestring, &e2);
                char key[2 * TA_MAX_NAME + 8], url[3 * TA_MAX_NAME];
                cJSON *item;
                if (!ent)
                    continue;
                if (g->valuestring[0])
                    snprintf(key, sizeof(key), "apis/%s/%s", g->valuestring, v->valuestring);
                else
                    snprintf(key, sizeof(key), "api/%s", v->valuestring);
                snprintf(url, sizeof(url), "/openapi/v3/%s?hash=%s", key, ta_jstr(ent, "hash"));
                item = cJSON_AddObjectToObject(paths, key);
                cJSON_AddStringToObject(item, "serverRelativeURL", url);
            }
            cJSON_Delete(vers);
        }
        cJSON_Delete(groups);
        pthread_mutex_unlock(&st->lock);
        ta_reply_json(rq, 200, doc);
        return VMOP_OK;
    }
    if (strncmp(path, "/openapi/v3/", 12) == 0) {
        char group[TA_MAX_NAME + 1] = "", version[64] = "";
        const char *p = path + 12;
        const cJSON *ent = NULL;
        if (strncmp(p, "api/", 4) == 0) {
            snprintf(version, sizeof(version), "%s", p + 4);
        } else if (strncmp(p, "apis/", 5) == 0) {
            const char *slash = strchr(p + 5, '/');
            if (slash && (size_t)(slash - (p + 5)) < sizeof(group)) {
                memcpy(group, p + 5, (size_t)(slash - (p + 5)));
                group[slash - (p + 5)] = '\0';
                snprintf(version, sizeof(version), "%s", slash + 1);
            }
        }
        if (version[0] && !strchr(version, '/')) {
            pthread_mutex_lock(&st->lock);
            ent = openapi_entry(st, group, version, err);
            if (ent) {
                char *t = strdup(ta_jstr(ent, "text"));
                if (t)
                    ta_reply_text(rq, 200, t);
                else
                    rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
            }
            pthread_mutex_unlock(&st->lock);
            if (ent)
                return rc;
            if (err->rc)
                return err->rc;
        }
    }
    return ta_fail(err, 404, "NotFound", "the server could not find the requested resource");
}
