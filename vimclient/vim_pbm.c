/* vim_pbm.c: vSphere storage policies (SPBM, the "pbm" SOAP service of the same vCenter).
 *
 * Owns: the PBM envelope (namespace urn:pbm, POST /pbm, SOAPAction urn:pbm/2.0) with the
 * vim25 session carried twice as govmomi's pbm client does: the vmware_soap_session cookie (our
 * shared cookie jar sends it to the same host) and its value in a vcSessionCookie SOAP header;
 * PbmRetrieveServiceContent, PbmRetrieveContent (a profile's name), PbmCheckRequirements
 * (compatible datastores), and a compute resource's `datastore` list (the candidates).
 * Not here: envelopes / faults of vim25 (vim_soap.c, whose reply and fault parsers are reused),
 * the session itself (vim_session.c: Login on NotAuthenticated, once, then one retry).
 *
 * Path: govmomi (pbm.Path) and the simulator use "/pbm"; vCenter serves the service there too.
 * The session cookie is a secret: it goes only into the request body (wiped after use), never
 * into a message. Profile IDs and datastore morefs are not secrets and appear in messages.
 */
#include "vim_pbm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PBM_SOAP_ACTION "SOAPAction: urn:pbm/2.0"
#define PBM_COOKIE_NAME "vmware_soap_session"

struct vim_pbm {
    struct vim_client *c; /* borrowed */
    struct vim_moref profile_mgr, solver;
};

/* ---- envelope and reply (no I/O) --------------------------------------------------------------
 */

vmop_rc vim_pbm_envelope(struct vbuf *out, const char *cookie, const char *method,
                         const struct vim_moref *this_ref, const char *params_xml)
{
    return vim_soap_envelope_ns(out, VIM_PBM_NS, cookie, method, this_ref, params_xml);
}

vmop_rc vim_pbm_reply(long status, const char *body, size_t len, const char *method,
                      enum vim_occurs occurs, struct vim_resp **ret_resp, struct vmop_err *err)
{
    if (status == 200)
        return vim_soap_parse_response(body, len, method, occurs, ret_resp, err);
    if (status == 500) {
        struct vmop_err ferr = {0};
        vmop_rc rc = vim_soap_parse_fault(body, len, 500, &ferr);
        /* the generic parser prefixes "SOAP call": name the method instead */
        const char *m = ferr.msg;
        if (strncmp(m, "SOAP call: ", 11) == 0)
            m += 11;
        return vmop_fail_fault(err, rc, ferr.fault, ferr.http_status, "%s: %s", method, m);
    }
    return vmop_fail_fault(err, VMOP_E_HTTP, "", (int)status, "%s: HTTP %ld from the PBM service",
                           method, status);
}

vmop_rc vim_pbm_decode_service_content(const struct vim_resp *r, struct vim_moref *ret_profile_mgr,
                                       struct vim_moref *ret_solver, struct vmop_err *err)
{
    xmlNodePtr sc = r ? vim_xml_child(r->response, "returnval") : NULL;
    struct vim_moref pm, ps;
    if (!sc || vim_xml_moref(vim_xml_child(sc, "profileManager"), &pm) != VMOP_OK ||
        vim_xml_moref(vim_xml_child(sc, "placementSolver"), &ps) != VMOP_OK)
        return vmop_fail(
            err, VMOP_E_PROTO,
            "PbmRetrieveServiceContent: no profileManager / placementSolver reference");
    *ret_profile_mgr = pm;
    *ret_solver = ps;
    return VMOP_OK;
}

void vim_pbm_profile_free(struct vim_pbm_profile *p)
{
    if (!p)
        return;
    free(p->id);
    free(p->name);
    free(p);
}

vmop_rc vim_pbm_decode_profile(const struct vim_resp *r, const char *id,
                               struct vim_pbm_profile **ret_profile, struct vmop_err *err)
{
    size_t n = 0;
    if (!r || !id || !ret_profile)
        return vmop_fail(err, VMOP_E_INVALID, "vim_pbm_decode_profile: missing argument");
    for (xmlNodePtr v = vim_xml_child(r->response, "returnval"); v;
         v = vim_xml_next(v, "returnval")) {
        char *uid, *name;
        struct vim_pbm_profile *p;
        if (++n > VIM_PBM_MAX_HUBS)
            return vmop_fail(err, VMOP_E_TOOBIG, "PbmRetrieveContent: more than %d profiles",
                             VIM_PBM_MAX_HUBS);
        uid = vim_xml_child_text(vim_xml_child(v, "profileId"), "uniqueId");
        if (!uid || strcmp(uid, id) != 0) {
            free(uid);
            continue;
        }
        name = vim_xml_child_text(v, "name");
        if (name && strlen(name) > VIM_PBM_NAME_MAX)
            name[VIM_PBM_NAME_MAX] = '\0';
        p = calloc(1, sizeof(*p));
        if (!p || (!name && !(name = strdup("")))) {
            free(p);
            free(uid);
            free(name);
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        }
        p->id = uid;
        p->name = name;
        *ret_profile = p;
        return VMOP_OK;
    }
    return vmop_fail(err, VMOP_E_NOT_FOUND, "storage policy \"%.256s\" not found in vCenter", id);
}

vmop_rc vim_pbm_decode_check(const struct vim_resp *r, struct vim_moref **ret_ds, size_t *ret_n,
                             struct vmop_err *err)
{
    struct vim_moref *ds = NULL;
    size_t n = 0, cap = 0;
    vmop_rc rc = VMOP_OK;

    if (!r || !ret_ds || !ret_n)
        return vmop_fail(err, VMOP_E_INVALID, "vim_pbm_decode_check: missing argument");
    for (xmlNodePtr v = vim_xml_child(r->response, "returnval"); v;
         v = vim_xml_next(v, "returnval"), cap++) {
        xmlNodePtr hub = vim_xml_child(v, "hub");
        char *type, *id;
        struct vim_moref ref;
        if (cap >= VIM_PBM_MAX_HUBS) {
            rc = vmop_fail(err, VMOP_E_TOOBIG, "PbmCheckRequirements: more than %d results",
                           VIM_PBM_MAX_HUBS);
            goto out;
        }
        if (!hub) {
            rc = vmop_fail(err, VMOP_E_PROTO, "PbmCheckRequirements: a result has no hub");
            goto out;
        }
        if (vim_xml_child(v, "error"))
            continue; /* not compatible */
        type = vim_xml_child_text(hub, "hubType");
        id = vim_xml_child_text(hub, "hubId");
        if (!type || !id || vim_moref_set(&ref, type, id) != VMOP_OK) {
            free(type);
            free(id);
            rc = vmop_fail(err, VMOP_E_PROTO, "PbmCheckRequirements: a hub has no valid type/id");
            goto out;
        }
        free(type);
        free(id);
        if (strcmp(ref.type, "Datastore") != 0)
            continue; /* storage pods and others: not a clone target */
        if (!ds) {
            size_t want = 0;
            for (xmlNodePtr w = v; w && want < VIM_PBM_MAX_HUBS; w = vim_xml_next(w, "returnval"))
                want++;
            ds = calloc(want, sizeof(*ds));
            if (!ds) {
                rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
                goto out;
            }
        }
        ds[n++] = ref;
    }
    *ret_ds = ds;
    *ret_n = n;
    ds = NULL;
out:
    free(ds);
    return rc;
}

vmop_rc vim_pbm_cookie_from_line(const char *line, const char *name, char *buf, size_t size)
{
    const char *p = line, *val;
    size_t nlen, vlen;
    int field = 0;

    if (!line || !name || !buf || size == 0)
        return VMOP_E_INVALID;
    /* skip to the 6th tab-separated field (name) */
    for (; *p && field < 5; p++)
        if (*p == '\t')
            field++;
    if (field < 5)
        return VMOP_E_NOT_FOUND;
    nlen = strlen(name);
    if (strncmp(p, name, nlen) != 0 || p[nlen] != '\t')
        return VMOP_E_NOT_FOUND;
    val = p + nlen + 1;
    vlen = strcspn(val, "\t\r\n");
    if (vlen > VIM_PBM_COOKIE_MAX || vlen + 1 > size)
        return VMOP_E_TOOBIG;
    if (vlen == 0)
        return VMOP_E_NOT_FOUND;
    memcpy(buf, val, vlen);
    buf[vlen] = '\0';
    return VMOP_OK;
}

/* ---- I/O --------------------------------------------------------------------------------------
 */

/* The current session cookie value, or "" when the jar has none. */
static void session_cookie(struct vim_client *c, char *buf, size_t size)
{
    struct curl_slist *list = NULL;
    CURL *h = curl_easy_init();
    buf[0] = '\0';
    if (!h)
        return;
    if (curl_easy_setopt(h, CURLOPT_SHARE, c->share) == CURLE_OK &&
        curl_easy_setopt(h, CURLOPT_COOKIEFILE, "") == CURLE_OK &&
        curl_easy_getinfo(h, CURLINFO_COOKIELIST, &list) == CURLE_OK) {
        char tmp[VIM_PBM_COOKIE_MAX + 1];
        for (struct curl_slist *l = list; l; l = l->next)
            if (vim_pbm_cookie_from_line(l->data, PBM_COOKIE_NAME, tmp, sizeof(tmp)) == VMOP_OK)
                snprintf(buf, size, "%s", tmp);
        explicit_bzero(tmp, sizeof(tmp));
    }
    if (list) {
        for (struct curl_slist *l = list; l; l = l->next)
            explicit_bzero(l->data, strlen(l->data));
        curl_slist_free_all(list);
    }
    curl_easy_cleanup(h);
}

static vmop_rc call_once(struct vim_client *c, const char *method, const struct vim_moref *this_ref,
                         const char *params_xml, enum vim_occurs occurs, struct vim_resp **ret_resp,
                         struct vmop_err *err)
{
    static const char *const headers[] = {PBM_SOAP_ACTION, NULL};
    char cookie[VIM_PBM_COOKIE_MAX + 1];
    struct vbuf env;
    struct vim_http_resp resp = {0};
    struct vim_http_req req = {
        .method = "POST",
        .path = VIM_PBM_PATH,
        .content_type = "text/xml; charset=utf-8",
        .headers = headers,
        .max_body = VIM_PBM_MAX_RESPONSE,
    };
    struct timespec t0, t1;
    vmop_rc rc;

    session_cookie(c, cookie, sizeof(cookie));
    vbuf_init(&env, VIM_MAX_REQUEST);
    rc = vim_pbm_envelope(&env, cookie[0] ? cookie : NULL, method, this_ref, params_xml);
    explicit_bzero(cookie, sizeof(cookie));
    if (rc != VMOP_OK) {
        rc = vmop_fail(err, rc, "%s: cannot build the request (%s)", method, vmop_rc_str(rc));
        vbuf_free_secure(&env);
        return rc;
    }
    req.body = vbuf_str(&env);
    req.body_len = env.len;
    __atomic_add_fetch(&c->n_soap_calls, 1, __ATOMIC_RELAXED);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = vim_http_do(c, &req, &resp, err);
    if (rc == VMOP_OK)
        rc = vim_pbm_reply(resp.status, vbuf_str(&resp.body), resp.body.len, method, occurs,
                           ret_resp, err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    vim_client_count_method(c, method, rc != VMOP_OK,
                            (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    vbuf_free_secure(&env);
    vbuf_free(&resp.body);
    return rc;
}

/* One PBM call with the vim25 session: log in when needed, one re-login on NotAuthenticated. */
static vmop_rc pbm_call(struct vim_client *c, const char *method, const struct vim_moref *this_ref,
                        const char *params_xml, enum vim_occurs occurs, struct vim_resp **ret_resp,
                        struct vmop_err *err)
{
    struct vmop_err first = {0};
    uint64_t gen;
    vmop_rc rc;

    rc = vim_login(c, err); /* the vim25 session that PBM shares */
    if (rc != VMOP_OK)
        return rc;
    gen = vim_session_gen(c);
    rc = call_once(c, method, this_ref, params_xml, occurs, ret_resp, &first);
    if (rc == VMOP_E_FAULT && strcmp(first.fault, "NotAuthenticated") == 0) {
        rc = vim_session_login(c, gen, err);
        if (rc != VMOP_OK)
            return rc;
        return call_once(c, method, this_ref, params_xml, occurs, ret_resp, err);
    }
    if (rc != VMOP_OK && err && err->rc == VMOP_OK)
        *err = first;
    return rc;
}

vmop_rc vim_pbm_new(struct vim_client *c, struct vim_pbm **ret_pbm, struct vmop_err *err)
{
    static const struct vim_moref si = {"PbmServiceInstance", "ServiceInstance"};
    struct vim_resp *r = NULL;
    struct vim_pbm *p = NULL;
    vmop_rc rc;

    if (!c || !ret_pbm)
        return vmop_fail(err, VMOP_E_INVALID, "vim_pbm_new: missing argument");
    p = calloc(1, sizeof(*p));
    if (!p)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    p->c = c;
    rc = pbm_call(c, "PbmRetrieveServiceContent", &si, NULL, VIM_RET_REQUIRED, &r, err);
    if (!rc)
        rc = vim_pbm_decode_service_content(r, &p->profile_mgr, &p->solver, err);
    vim_resp_free(r);
    if (rc) {
        free(p);
        return rc;
    }
    *ret_pbm = p;
    return VMOP_OK;
}

void vim_pbm_free(struct vim_pbm *p)
{
    free(p);
}

int vim_pbm_id_valid(const char *id)
{
    size_t n = id ? strlen(id) : 0;
    if (n == 0 || n > VIM_PBM_ID_MAX)
        return 0;
    for (; *id; id++)
        if ((unsigned char)*id < 0x20 || *id == 0x7f)
            return 0;
    return 1;
}

vmop_rc vim_pbm_profile_get(struct vim_pbm *p, const char *profile_id,
                            struct vim_pbm_profile **ret_profile, struct vmop_err *err)
{
    struct vbuf params;
    struct vim_resp *r = NULL;
    struct vmop_err cerr = {0};
    vmop_rc rc;

    if (!p || !ret_profile)
        return vmop_fail(err, VMOP_E_INVALID, "vim_pbm_profile_get: missing argument");
    if (!vim_pbm_id_valid(profile_id))
        return vmop_fail(err, VMOP_E_INVALID,
                         "storage policy ID is empty, longer than %d bytes or not printable",
                         VIM_PBM_ID_MAX);
    vbuf_init(&params, 4096);
    vbuf_adds(&params, "<profileIds>");
    vbuf_add_xml_elem(&params, "uniqueId", profile_id);
    vbuf_adds(&params, "</profileIds>");
    if (vbuf_error(&params)) {
        rc = vmop_fail(err, vbuf_error(&params), "PbmRetrieveContent: cannot build the request");
        goto out;
    }
    rc = pbm_call(p->c, "PbmRetrieveContent", &p->profile_mgr, vbuf_str(&params), VIM_RET_LIST, &r,
                  &cerr);
    if (rc == VMOP_E_FAULT && strcmp(cerr.fault, "InvalidArgument") == 0) {
        /* vCenter (and the simulator) refuse an unknown profile ID with InvalidArgument */
        rc = vmop_fail_fault(err, VMOP_E_NOT_FOUND, cerr.fault, cerr.http_status,
                             "storage policy \"%s\" not found in vCenter (%s)", profile_id,
                             cerr.msg);
        goto out;
    }
    if (rc) {
        if (err && err->rc == VMOP_OK)
            *err = cerr;
        goto out;
    }
    rc = vim_pbm_decode_profile(r, profile_id, ret_profile, err);
out:
    vim_resp_free(r);
    vbuf_free(&params);
    return rc;
}

vmop_rc vim_pbm_compatible_datastores(struct vim_pbm *p, const char *profile_id,
                                      const struct vim_moref *hubs, size_t n_hubs,
                                      struct vim_moref **ret_ds, size_t *ret_n,
                                      struct vmop_err *err)
{
    struct vbuf params;
    struct vim_resp *r = NULL;
    vmop_rc rc;

    if (!p || !ret_ds || !ret_n || (n_hubs && !hubs))
        return vmop_fail(err, VMOP_E_INVALID, "vim_pbm_compatible_datastores: missing argument");
    if (!vim_pbm_id_valid(profile_id))
        return vmop_fail(err, VMOP_E_INVALID,
                         "storage policy ID is empty, longer than %d bytes or not printable",
                         VIM_PBM_ID_MAX);
    if (n_hubs > VIM_PBM_MAX_HUBS)
        return vmop_fail(err, VMOP_E_TOOBIG, "PbmCheckRequirements: more than %d hubs",
                         VIM_PBM_MAX_HUBS);
    vbuf_init(&params, VIM_MAX_REQUEST);
    for (size_t i = 0; i < n_hubs; i++) {
        if (!vim_moref_is_set(&hubs[i])) {
            vbuf_free(&params);
            return vmop_fail(err, VMOP_E_INVALID, "PbmCheckRequirements: hub %zu is unset", i);
        }
        vbuf_adds(&params, "<hubsToSearch>");
        vbuf_add_xml_elem(&params, "hubType", hubs[i].type);
        vbuf_add_xml_elem(&params, "hubId", hubs[i].value);
        vbuf_adds(&params, "</hubsToSearch>");
    }
    vbuf_adds(&params, "<placementSubjectRequirement "
                       "xsi:type=\"PbmPlacementCapabilityProfileRequirement\">"
                       "<profileId xsi:type=\"PbmProfileId\">");
    vbuf_add_xml_elem(&params, "uniqueId", profile_id);
    vbuf_adds(&params, "</profileId></placementSubjectRequirement>");
    if (vbuf_error(&params)) {
        rc = vmop_fail(err, vbuf_error(&params), "PbmCheckRequirements: cannot build the request");
        goto out;
    }
    rc = pbm_call(p->c, "PbmCheckRequirements", &p->solver, vbuf_str(&params), VIM_RET_LIST, &r,
                  err);
    if (!rc)
        rc = vim_pbm_decode_check(r, ret_ds, ret_n, err);
out:
    vim_resp_free(r);
    vbuf_free(&params);
    return rc;
}

vmop_rc vim_compute_datastores(struct vim_client *c, const struct vim_moref *compute,
                               struct vim_moref **ret_ds, size_t *ret_n, struct vmop_err *err)
{
    static const char *const paths[] = {"datastore", NULL};
    struct vim_objects objs = {0};
    struct vim_moref *ds = NULL;
    size_t n = 0, cap = 0;
    xmlNodePtr val;
    vmop_rc rc;

    if (!c || !compute || !vim_moref_is_set(compute) || !ret_ds || !ret_n)
        return vmop_fail(err, VMOP_E_INVALID, "vim_compute_datastores: missing argument");
    if (strcmp(compute->type, "ComputeResource") != 0 &&
        strcmp(compute->type, "ClusterComputeResource") != 0)
        return vmop_fail(err, VMOP_E_INVALID, "%s is a %s, not a cluster or compute resource",
                         compute->value, compute->type);
    rc = vim_retrieve(c, compute, NULL, paths, 0, &objs, err);
    if (rc)
        return rc;
    val = objs.n == 1 ? vim_object_prop(&objs.items[0], "datastore") : NULL;
    for (xmlNodePtr m = vim_xml_first(val); m; m = vim_xml_next(m, NULL))
        cap++;
    if (cap > VIM_PBM_MAX_HUBS) {
        rc = vmop_fail(err, VMOP_E_TOOBIG, "%s sees more than %d datastores", compute->value,
                       VIM_PBM_MAX_HUBS);
        goto out;
    }
    if (cap && !(ds = calloc(cap, sizeof(*ds)))) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    for (xmlNodePtr m = vim_xml_first(val); m; m = vim_xml_next(m, NULL)) {
        if (vim_xml_moref(m, &ds[n]) != VMOP_OK) {
            rc = vmop_fail(err, VMOP_E_PROTO, "%s: a datastore reference does not parse",
                           compute->value);
            goto out;
        }
        n++;
    }
    *ret_ds = ds;
    *ret_n = n;
    ds = NULL;
out:
    free(ds);
    vim_objects_free(&objs);
    return rc;
}
