/* vim_session.c: the SOAP session: ServiceContent, Login, Logout, and the generation counter.
 *
 * Owns: c->session_gen, c->logged_in, c->have_sc and the sc_* / about_* fields (all written under
 * session_lock). Every successful Login bumps session_gen. A caller that saw a call fail with
 * NotAuthenticated passes the generation it used: if a newer login already happened (another
 * thread got there first) nothing is done, so N threads hitting an expired session at once cause
 * one re-login, not N.
 *
 * Login clears the cookie jar first: vcsim answers InvalidLogin to a Login that carries a still
 * valid session cookie, and a stale cookie is useless anyway. The password goes only into the
 * request body (wiped after use), never into an error message.
 */
#include "vim_internal.h"

#include <stdlib.h>
#include <string.h>

static vmop_rc read_moref_child(xmlNodePtr parent, const char *name, struct vim_moref *ref,
                                int required, struct vmop_err *err)
{
    xmlNodePtr n = vim_xml_child(parent, name);
    if (!n) {
        if (!required)
            return VMOP_OK;
        return vmop_fail(err, VMOP_E_PROTO, "ServiceContent has no %s", name);
    }
    if (vim_xml_moref(n, ref) != VMOP_OK)
        return vmop_fail(err, VMOP_E_PROTO, "ServiceContent.%s is not a managed object reference",
                         name);
    return VMOP_OK;
}

static vmop_rc service_content_locked(struct vim_client *c, struct vmop_err *err)
{
    static const struct vim_moref si = {"ServiceInstance", "ServiceInstance"};
    struct vim_resp *r = NULL;
    xmlNodePtr sc, about;
    vmop_rc rc;

    if (c->have_sc)
        return VMOP_OK;
    rc = vim_soap_call_raw(c, "RetrieveServiceContent", &si, NULL, VIM_RET_REQUIRED, &r, err);
    if (rc != VMOP_OK)
        return rc;
    sc = vim_xml_child(r->response, "returnval");
    rc = read_moref_child(sc, "rootFolder", &c->sc_root_folder, 1, err);
    if (rc == VMOP_OK)
        rc = read_moref_child(sc, "propertyCollector", &c->sc_property_collector, 1, err);
    if (rc == VMOP_OK)
        rc = read_moref_child(sc, "viewManager", &c->sc_view_manager, 1, err);
    if (rc == VMOP_OK)
        rc = read_moref_child(sc, "searchIndex", &c->sc_search_index, 1, err);
    if (rc == VMOP_OK)
        rc = read_moref_child(sc, "sessionManager", &c->sc_session_manager, 1, err);
    if (rc == VMOP_OK)
        rc = read_moref_child(sc, "taskManager", &c->sc_task_manager, 0, err);
    if (rc != VMOP_OK)
        goto out;
    about = vim_xml_child(sc, "about");
    if (!c->about_api_version) {
        /* Published once; readers load these pointers atomically without the lock. */
        __atomic_store_n(&c->about_api_version, vim_xml_child_text(about, "apiVersion"),
                         __ATOMIC_RELEASE);
        __atomic_store_n(&c->about_full_name, vim_xml_child_text(about, "fullName"),
                         __ATOMIC_RELEASE);
        __atomic_store_n(&c->about_instance_uuid, vim_xml_child_text(about, "instanceUuid"),
                         __ATOMIC_RELEASE);
    }
    c->have_sc = 1;
out:
    vim_resp_free(r);
    return rc;
}

vmop_rc vim_session_service_content(struct vim_client *c, struct vmop_err *err)
{
    vmop_rc rc;
    pthread_mutex_lock(&c->session_lock);
    rc = service_content_locked(c, err);
    pthread_mutex_unlock(&c->session_lock);
    return rc;
}

uint64_t vim_session_gen(struct vim_client *c)
{
    uint64_t gen;
    pthread_mutex_lock(&c->session_lock);
    gen = c->session_gen;
    pthread_mutex_unlock(&c->session_lock);
    return gen;
}

vmop_rc vim_session_login(struct vim_client *c, uint64_t seen_gen, struct vmop_err *err)
{
    struct vbuf params;
    struct vim_resp *r = NULL;
    struct vmop_err lerr = {0};
    vmop_rc rc;

    pthread_mutex_lock(&c->session_lock);
    if (c->logged_in && c->session_gen != seen_gen) {
        /* Someone logged in after the caller's failed call: use that session. */
        pthread_mutex_unlock(&c->session_lock);
        return VMOP_OK;
    }
    rc = service_content_locked(c, err);
    if (rc != VMOP_OK)
        goto out_unlock;

    vbuf_init(&params, 4096);
    vbuf_add_xml_elem(&params, "userName", c->username);
    vbuf_add_xml_elem(&params, "password", c->password);
    if (vbuf_error(&params)) {
        rc = vmop_fail(err, vbuf_error(&params), "Login: cannot build the request");
        vbuf_free_secure(&params);
        goto out_unlock;
    }
    vim_http_clear_cookies(c);
    rc = vim_soap_call_raw(c, "Login", &c->sc_session_manager, vbuf_str(&params), VIM_RET_REQUIRED,
                           &r, &lerr);
    vbuf_free_secure(&params);
    if (rc != VMOP_OK) {
        c->logged_in = 0;
        if (rc == VMOP_E_AUTH)
            rc = vmop_fail_fault(err, VMOP_E_AUTH, lerr.fault, lerr.http_status,
                                 "vCenter %s refused the login of user '%s': %s (check the "
                                 "username and password)",
                                 c->base_url, c->username, lerr.msg);
        else if (err && err->rc == VMOP_OK)
            *err = lerr;
        goto out_unlock;
    }
    __atomic_add_fetch(&c->n_logins, 1, __ATOMIC_RELAXED);
    if (c->logged_in)
        __atomic_add_fetch(&c->n_relogins, 1, __ATOMIC_RELAXED);
    c->logged_in = 1;
    c->session_gen++;
out_unlock:
    pthread_mutex_unlock(&c->session_lock);
    vim_resp_free(r);
    return rc;
}

vmop_rc vim_logout(struct vim_client *c, struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;
    if (!c)
        return VMOP_OK;
    pthread_mutex_lock(&c->session_lock);
    if (c->logged_in) {
        struct vmop_err lerr = {0};
        rc =
            vim_soap_call_raw(c, "Logout", &c->sc_session_manager, NULL, VIM_RET_NONE, NULL, &lerr);
        /* An expired session is as good as logged out. */
        if (rc == VMOP_E_FAULT && strcmp(lerr.fault, "NotAuthenticated") == 0)
            rc = VMOP_OK;
        else if (rc != VMOP_OK && err && err->rc == VMOP_OK)
            *err = lerr;
        c->logged_in = 0;
        vim_http_clear_cookies(c);
    }
    pthread_mutex_unlock(&c->session_lock);
    return rc;
}
