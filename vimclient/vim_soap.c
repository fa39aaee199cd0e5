/* vim_soap.c: one vim25 SOAP call: the envelope, the POST to /sdk, the reply (result count
 * checked) or the fault (typed into struct vmop_err), and the transparent re-login.
 *
 * Owns: the wire format of requests and of faults. Not here: the session itself (vim_session.c).
 *
 * Fault shape (HTTP 500): Envelope/Body/Fault with faultcode, faultstring and detail/<XFault
 * xsi:type="X">. The fault type is the xsi:type of detail's first element (read by namespace URI:
 * vcsim writes the prefix "XMLSchema-instance"), else that element's name minus "Fault", else the
 * faultcode. vcsim often sends an empty faultstring, so the message adds the fault's own simple
 * fields (requestedState/existingState, obj, ...).
 *
 * Re-login: a call that gets NotAuthenticated logs in again (once for all threads that saw the
 * same session die, see vim_session_login) and is retried once. InvalidLogin is VMOP_E_AUTH and is
 * never retried.
 */
#include "vim_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SOAP_ENV_NS "http://schemas.xmlsoap.org/soap/envelope/"
/* The API version we speak. The version selects the wire schema on vCenter; every type and method
 * vimclient uses exists in 6.5, and a fixed version means a newer server never sends us types this
 * client was not written for. vcsim reports and accepts 6.5. */
#define SOAP_ACTION    "SOAPAction: urn:vim25/6.5"
#define MAX_METHOD_LEN 96
#define MAX_DETAILS    8   /* fault fields in a message */
#define MAX_DETAIL_LEN 120 /* bytes of one field value in a message */

void vim_resp_free(struct vim_resp *r)
{
    if (!r)
        return;
    if (r->doc)
        xmlFreeDoc(r->doc);
    free(r);
}

static int valid_method(const char *m)
{
    size_t n = 0;
    if (!m || !*m)
        return 0;
    for (; *m; m++, n++) {
        char ch = *m;
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '_'))
            return 0;
    }
    return n <= MAX_METHOD_LEN;
}

vmop_rc vim_soap_envelope(struct vbuf *out, const char *method, const struct vim_moref *this_ref,
                          const char *params_xml)
{
    return vim_soap_envelope_ns(out, VIM25_NS, NULL, method, this_ref, params_xml);
}

vmop_rc vim_soap_envelope_ns(struct vbuf *out, const char *ns, const char *session_cookie,
                             const char *method, const struct vim_moref *this_ref,
                             const char *params_xml)
{
    if (out->max == 0)
        vbuf_init(out, VIM_MAX_REQUEST);
    if (!valid_method(method))
        return VMOP_E_INVALID;
    vbuf_adds(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                   "<soapenv:Envelope xmlns:soapenv=\"" SOAP_ENV_NS "\""
                   " xmlns:xsd=\"http://www.w3.org/2001/XMLSchema\""
                   " xmlns:xsi=\"" XSI_NS "\">");
    if (session_cookie) {
        vbuf_adds(out, "<soapenv:Header>");
        vbuf_add_xml_elem(out, "vcSessionCookie", session_cookie);
        vbuf_adds(out, "</soapenv:Header>");
    }
    vbuf_addf(out, "<soapenv:Body><%s xmlns=\"%s\">", method, ns);
    if (this_ref && vim_moref_is_set(this_ref))
        vim_xml_add_moref(out, "_this", this_ref);
    if (params_xml)
        vbuf_adds(out, params_xml);
    vbuf_addf(out, "</%s></soapenv:Body></soapenv:Envelope>", method);
    return vbuf_error(out);
}

/* ---- faults -----------------------------------------------------------------------------------
 */

static int is_soap_elem(xmlNodePtr n, const char *name)
{
    return n && n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0 && n->ns &&
           n->ns->href && strcmp((const char *)n->ns->href, SOAP_ENV_NS) == 0;
}

/* Envelope/Body, or NULL when the document is not a SOAP 1.1 envelope. */
static xmlNodePtr soap_body(xmlDocPtr doc)
{
    xmlNodePtr env = doc ? xmlDocGetRootElement(doc) : NULL;
    xmlNodePtr body;
    if (!is_soap_elem(env, "Envelope"))
        return NULL;
    body = vim_xml_child(env, "Body");
    return is_soap_elem(body, "Body") ? body : NULL;
}

/* Keeps a value printable on one line and short. */
static void add_clean(struct vbuf *out, const char *s, size_t max)
{
    size_t n = 0;
    for (; *s && n < max; s++, n++) {
        unsigned char ch = (unsigned char)*s;
        char c1 = (ch < 0x20 || ch == 0x7f) ? ' ' : (char)ch;
        vbuf_add(out, &c1, 1);
    }
    if (*s)
        vbuf_adds(out, "...");
}

/* True when node has element children (a complex value). */
static int has_elem_child(xmlNodePtr n)
{
    return vim_xml_first(n) != NULL;
}

void vim_soap_fault_details(xmlNodePtr fault, struct vbuf *out)
{
    int n = 0;
    for (xmlNodePtr f = vim_xml_first(fault); f && n < MAX_DETAILS; f = vim_xml_next(f, NULL)) {
        const char *name = (const char *)f->name;
        char *text, *type = NULL;
        /* faultCause / faultMessage are nested faults and messages: the summary stays flat. */
        if (has_elem_child(f) || strcmp(name, "faultCause") == 0 ||
            strcmp(name, "faultMessage") == 0)
            continue;
        text = vim_xml_text(f);
        if (!text || !*text) {
            free(text);
            continue;
        }
        type = (char *)xmlGetNoNsProp(f, BAD_CAST "type");
        vbuf_adds(out, n == 0 ? " (" : ", ");
        add_clean(out, name, 64);
        vbuf_adds(out, "=");
        if (type) {
            add_clean(out, type, 64);
            vbuf_adds(out, ":");
        }
        add_clean(out, text, MAX_DETAIL_LEN);
        if (type)
            xmlFree(type);
        free(text);
        n++;
    }
    if (n)
        vbuf_adds(out, ")");
}

/* Fault type of a Fault element; malloc'd, never NULL unless out of memory. */
static char *fault_type(xmlNodePtr fault, xmlNodePtr *ret_detail_obj)
{
    xmlNodePtr detail = vim_xml_child(fault, "detail");
    xmlNodePtr obj = vim_xml_first(detail);
    char *t;

    *ret_detail_obj = obj;
    if (obj) {
        size_t len;
        t = vim_xml_xsi_type(obj);
        if (t && *t)
            return t;
        free(t);
        t = strdup((const char *)obj->name);
        len = t ? strlen(t) : 0;
        if (len > 5 && strcmp(t + len - 5, "Fault") == 0)
            t[len - 5] = '\0';
        return t;
    }
    t = vim_xml_child_text(fault, "faultcode");
    if (t) {
        char *colon = strrchr(t, ':');
        if (colon)
            memmove(t, colon + 1, strlen(colon + 1) + 1);
        if (*t)
            return t;
        free(t);
    }
    return strdup("UnknownFault");
}

/* Parses a fault body; method (may be NULL) only prefixes the message. */
static vmop_rc parse_fault(const char *body, size_t len, int http_status, const char *method,
                           struct vmop_err *err)
{
    xmlDocPtr doc = vim_xml_parse(body, len);
    xmlNodePtr fault = soap_body(doc), obj = NULL;
    char *type = NULL, *fstr = NULL;
    struct vbuf msg;
    vmop_rc rc;
    const char *pfx = method ? method : "SOAP call", *sep = ": ";

    fault = vim_xml_child(fault, "Fault");
    if (!fault) {
        rc = vmop_fail_fault(err, VMOP_E_HTTP, "", http_status,
                             "%s%sHTTP %d without a SOAP Fault (%zu bytes%s)", pfx, sep,
                             http_status, len, doc ? "" : ", not well-formed XML");
        goto out;
    }
    type = fault_type(fault, &obj);
    fstr = vim_xml_child_text(fault, "faultstring");
    vbuf_init(&msg, VMOP_ERR_MSG_MAX * 2);
    vbuf_addf(&msg, "%s%s%s", pfx, sep, type ? type : "UnknownFault");
    if (fstr && *fstr) {
        vbuf_adds(&msg, ": ");
        add_clean(&msg, fstr, 300);
    }
    if (obj)
        vim_soap_fault_details(obj, &msg);
    rc = type && strcmp(type, "InvalidLogin") == 0 ? VMOP_E_AUTH : VMOP_E_FAULT;
    vmop_fail_fault(err, rc, type ? type : "UnknownFault", http_status, "%s", vbuf_str(&msg));
    vbuf_free(&msg);
out:
    free(type);
    free(fstr);
    if (doc)
        xmlFreeDoc(doc);
    return rc;
}

vmop_rc vim_soap_parse_fault(const char *body, size_t len, int http_status, struct vmop_err *err)
{
    return parse_fault(body, len, http_status, NULL, err);
}

/* ---- responses --------------------------------------------------------------------------------
 */

static const char *occurs_str(enum vim_occurs o)
{
    switch (o) {
    case VIM_RET_NONE:
        return "no result";
    case VIM_RET_OPTIONAL:
        return "at most one result";
    case VIM_RET_REQUIRED:
        return "exactly one result";
    case VIM_RET_LIST:
        return "a list";
    }
    return "?";
}

vmop_rc vim_soap_parse_response(const char *body, size_t len, const char *method,
                                enum vim_occurs occurs, struct vim_resp **ret_resp,
                                struct vmop_err *err)
{
    xmlDocPtr doc = NULL;
    xmlNodePtr bodyn, resp;
    struct vim_resp *r = NULL;
    size_t n = 0, mlen;
    vmop_rc rc = VMOP_OK;

    if (!method)
        method = "";
    doc = vim_xml_parse(body, len);
    bodyn = soap_body(doc);
    if (!bodyn) {
        rc = vmop_fail(err, VMOP_E_PROTO, "%s: reply is not a SOAP envelope (%zu bytes%s)", method,
                       len, doc ? "" : ", not well-formed XML");
        goto out;
    }
    resp = vim_xml_first(bodyn);
    if (resp && strcmp((const char *)resp->name, "Fault") == 0) {
        /* A fault with HTTP 200 is still a fault. */
        xmlFreeDoc(doc);
        doc = NULL;
        rc = parse_fault(body, len, 200, method, err);
        goto out;
    }
    mlen = strlen(method);
    if (!resp || strncmp((const char *)resp->name, method, mlen) != 0 ||
        strcmp((const char *)resp->name + mlen, "Response") != 0) {
        rc = vmop_fail(err, VMOP_E_PROTO, "%s: reply has no %sResponse element", method, method);
        goto out;
    }
    for (xmlNodePtr v = vim_xml_child(resp, "returnval"); v; v = vim_xml_next(v, "returnval"))
        n++;
    if ((occurs == VIM_RET_NONE && n != 0) || (occurs == VIM_RET_OPTIONAL && n > 1) ||
        (occurs == VIM_RET_REQUIRED && n != 1)) {
        rc = vmop_fail(err, VMOP_E_PROTO, "%s: expected %s, got %zu returnval elements", method,
                       occurs_str(occurs), n);
        goto out;
    }
    r = calloc(1, sizeof(*r));
    if (!r) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    r->doc = doc;
    r->response = resp;
    doc = NULL;
    if (ret_resp) {
        *ret_resp = r;
        r = NULL;
    }
out:
    vim_resp_free(r);
    if (doc)
        xmlFreeDoc(doc);
    return rc;
}

/* ---- calls ------------------------------------------------------------------------------------
 */

static vmop_rc call_raw(struct vim_client *c, const char *method, const struct vim_moref *this_ref,
                        const char *params_xml, enum vim_occurs occurs,
                        const struct vim_call_opts *opts, struct vim_resp **ret_resp,
                        struct vmop_err *err)
{
    static const char *const headers[] = {SOAP_ACTION, NULL};
    struct vbuf env = {0};
    struct vim_http_resp resp = {0};
    struct vim_http_req req = {
        .method = "POST",
        .path = "/sdk",
        .content_type = "text/xml; charset=utf-8",
        .headers = headers,
        .timeout_ms = opts ? opts->timeout_ms : 0,
        .cancel = opts ? opts->cancel : NULL,
    };
    struct timespec t0 = {0};
    int counted = 0;
    vmop_rc rc;

    vbuf_init(&env, VIM_MAX_REQUEST);
    rc = vim_soap_envelope(&env, method, this_ref, params_xml);
    if (rc != VMOP_OK) {
        rc = vmop_fail(err, rc, "%s: cannot build the request (%s)",
                       valid_method(method) ? method : "?", vmop_rc_str(rc));
        goto out;
    }
    req.body = vbuf_str(&env);
    req.body_len = env.len;
    __atomic_add_fetch(&c->n_soap_calls, 1, __ATOMIC_RELAXED);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    counted = 1;
    rc = vim_http_do(c, &req, &resp, err);
    if (rc != VMOP_OK)
        goto out;
    if (resp.status == 200)
        rc = vim_soap_parse_response(vbuf_str(&resp.body), resp.body.len, method, occurs, ret_resp,
                                     err);
    else if (resp.status == 500)
        rc = parse_fault(vbuf_str(&resp.body), resp.body.len, 500, method, err);
    else
        rc = vmop_fail_fault(err, VMOP_E_HTTP, "", (int)resp.status, "%s: HTTP %ld from %s/sdk",
                             method, resp.status, c->base_url);
out:
    if (counted) {
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        vim_client_count_method(c, method, rc != VMOP_OK,
                                (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    }
    /* The request may hold credentials (Login) or guest data: wipe it. */
    vbuf_free_secure(&env);
    vbuf_free(&resp.body);
    return rc;
}

vmop_rc vim_soap_call_raw(struct vim_client *c, const char *method,
                          const struct vim_moref *this_ref, const char *params_xml,
                          enum vim_occurs occurs, struct vim_resp **ret_resp, struct vmop_err *err)
{
    return call_raw(c, method, this_ref, params_xml, occurs, NULL, ret_resp, err);
}

vmop_rc vim_soap_call_ex(struct vim_client *c, const char *method, const struct vim_moref *this_ref,
                         const char *params_xml, enum vim_occurs occurs,
                         const struct vim_call_opts *opts, struct vim_resp **ret_resp,
                         struct vmop_err *err)
{
    struct vmop_err first = {0};
    uint64_t gen;
    vmop_rc rc;

    if (!c)
        return vmop_fail(err, VMOP_E_INVALID, "no client");
    rc = vim_session_service_content(c, err);
    if (rc != VMOP_OK)
        return rc;
    pthread_mutex_lock(&c->session_lock);
    gen = c->session_gen;
    int logged_in = c->logged_in;
    pthread_mutex_unlock(&c->session_lock);
    if (!logged_in) {
        rc = vim_session_login(c, gen, err);
        if (rc != VMOP_OK)
            return rc;
        gen = vim_session_gen(c);
    }
    rc = call_raw(c, method, this_ref, params_xml, occurs, opts, ret_resp, &first);
    if (rc == VMOP_E_FAULT && strcmp(first.fault, "NotAuthenticated") == 0) {
        /* The session expired (or was logged out elsewhere): one re-login, one retry. */
        rc = vim_session_login(c, gen, err);
        if (rc != VMOP_OK)
            return rc;
        return call_raw(c, method, this_ref, params_xml, occurs, opts, ret_resp, err);
    }
    if (rc != VMOP_OK && err && err->rc == VMOP_OK)
        *err = first;
    return rc;
}

vmop_rc vim_soap_call(struct vim_client *c, const char *method, const struct vim_moref *this_ref,
                      const char *params_xml, enum vim_occurs occurs, struct vim_resp **ret_resp,
                      struct vmop_err *err)
{
    return vim_soap_call_ex(c, method, this_ref, params_xml, occurs, NULL, ret_resp, err);
}
