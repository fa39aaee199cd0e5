/* vim_pc.c: the PropertyCollector: RetrievePropertiesEx (with paging), ContainerViews, and the
 * WaitForUpdatesEx change feed (struct vim_watch).
 *
 * Owns: the PropertyFilterSpec wire format, the result pages (struct vim_objects keeps every page
 * document alive because its nodes point into them), and each watch's own collector/view/filter.
 *
 * Session expiry shows up two ways: a NotAuthenticated fault (handled in vim_soap_call) and, for
 * RetrieveProperties(Ex) on vcsim, an HTTP 200 whose objects carry missingSet entries with fault
 * NotAuthenticated. The second form is handled here: one re-login and one retry.
 * Empty results: vcsim sends an empty <returnval></returnval>, vCenter sends no returnval: both
 * mean "no objects". Paging: ContinueRetrievePropertiesEx while a token comes back (vcsim never
 * sends one).
 *
 * Watches: the objects a watch creates are session-scoped, so after a re-login they are gone; the
 * watch notices (generation change, ManagedObjectNotFound or NotAuthenticated) and builds them
 * again, and the next batch is then a full ENTER set. A large set comes in pages (truncated): the
 * batch says so. vcsim answers version "-" (or "P" on a page): the version is only ever echoed
 * back, never interpreted.
 */
#include "vim_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PAGES       4096
#define MAX_OBJECTS     (1u << 20)
#define MAX_PROPS       4096 /* property paths per request or per object */
#define MAX_WATCH_PROPS 256
#define MAX_VERSION_LEN 4096
#define MAX_UPDATES     (1u << 20)
/* Cleanup calls (DestroyView, Destroy collector, Cancel) must not hold anything up. */
#define CLEANUP_TIMEOUT_MS 5000L

/* ---- results ----------------------------------------------------------------------------------
 */

void vim_objects_free(struct vim_objects *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n; i++)
        free(o->items[i].props);
    free(o->items);
    for (size_t i = 0; i < o->n_pages; i++)
        vim_resp_free(o->pages[i]);
    free(o->pages);
    memset(o, 0, sizeof(*o));
}

xmlNodePtr vim_object_prop(const struct vim_object *obj, const char *path)
{
    if (!obj || !path)
        return NULL;
    for (size_t i = 0; i < obj->n_props; i++)
        if (obj->props[i].path && strcmp(obj->props[i].path, path) == 0)
            return obj->props[i].val;
    return NULL;
}

/* ---- request building -------------------------------------------------------------------------
 */

static const char view_traversal[] =
    "<selectSet xsi:type=\"TraversalSpec\"><name>view</name><type>ContainerView</type>"
    "<path>view</path><skip>false</skip></selectSet>";

/* PropertyFilterSpec inner XML: propSet then objectSet (WSDL order). */
static void add_filter_spec(struct vbuf *b, const struct vim_moref *obj, const char *type,
                            const char *const *paths, int via_view)
{
    vbuf_adds(b, "<propSet>");
    vbuf_add_xml_elem(b, "type", type);
    if (!paths) {
        vbuf_adds(b, "<all>true</all>");
    } else {
        for (size_t i = 0; paths[i]; i++)
            vbuf_add_xml_elem(b, "pathSet", paths[i]);
    }
    vbuf_adds(b, "</propSet><objectSet>");
    vim_xml_add_moref(b, "obj", obj);
    if (via_view) {
        vbuf_adds(b, "<skip>true</skip>");
        vbuf_adds(b, view_traversal);
    } else {
        vbuf_adds(b, "<skip>false</skip>");
    }
    vbuf_adds(b, "</objectSet>");
}

/* ---- result parsing ---------------------------------------------------------------------------
 */

struct missing_info {
    int not_authenticated; /* some missingSet entry says the session is gone */
    char fault[VMOP_ERR_FAULT_MAX];
    char path[128];
    char obj[VIM_MOREF_TYPE_MAX + VIM_MOREF_VALUE_MAX + 2];
    char *message; /* malloc'd localizedMessage of the first other fault, or NULL */
};

static void note_missing(struct missing_info *mi, const struct vim_moref *obj, xmlNodePtr ms)
{
    xmlNodePtr lmf = vim_xml_child(ms, "fault");
    xmlNodePtr f = vim_xml_child(lmf, "fault");
    char *type = vim_xml_xsi_type(f ? f : lmf);
    char *path = vim_xml_child_text(ms, "path");

    if (type && strcmp(type, "NotAuthenticated") == 0) {
        mi->not_authenticated = 1;
    } else if (!mi->fault[0]) {
        snprintf(mi->fault, sizeof(mi->fault), "%s", type ? type : "UnknownFault");
        snprintf(mi->path, sizeof(mi->path), "%s", path ? path : "");
        snprintf(mi->obj, sizeof(mi->obj), "%s:%s", obj->type, obj->value);
        mi->message = vim_xml_child_text(lmf, "localizedMessage");
    }
    free(type);
    free(path);
}

/* Adds every ObjectContent of a RetrieveResult to o; *ret_token gets a malloc'd paging token. */
static vmop_rc collect_page(struct vim_objects *o, xmlNodePtr result, struct missing_info *mi,
                            char **ret_token, struct vmop_err *err)
{
    *ret_token = NULL;
    if (!result)
        return VMOP_OK;
    for (xmlNodePtr oc = vim_xml_child(result, "objects"); oc; oc = vim_xml_next(oc, "objects")) {
        struct vim_object *item;
        size_t np = 0;

        if (o->n >= MAX_OBJECTS)
            return vmop_fail(err, VMOP_E_TOOBIG, "RetrievePropertiesEx: more than %u objects",
                             MAX_OBJECTS);
        if ((o->n & (o->n - 1)) == 0 || o->n == 0) {
            size_t cap = o->n ? o->n * 2 : 16;
            struct vim_object *ni = realloc(o->items, cap * sizeof(*ni));
            if (!ni)
                return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
            o->items = ni;
        }
        item = &o->items[o->n];
        memset(item, 0, sizeof(*item));
        if (vim_xml_moref(vim_xml_child(oc, "obj"), &item->ref) != VMOP_OK)
            return vmop_fail(err, VMOP_E_PROTO, "RetrievePropertiesEx: object without a valid obj");
        for (xmlNodePtr ps = vim_xml_child(oc, "propSet"); ps; ps = vim_xml_next(ps, "propSet"))
            np++;
        if (np > MAX_PROPS)
            return vmop_fail(err, VMOP_E_TOOBIG, "RetrievePropertiesEx: %zu properties on %s", np,
                             item->ref.value);
        if (np) {
            item->props = calloc(np, sizeof(*item->props));
            if (!item->props)
                return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        }
        o->n++;
        for (xmlNodePtr ps = vim_xml_child(oc, "propSet"); ps; ps = vim_xml_next(ps, "propSet")) {
            xmlNodePtr name = vim_xml_child(ps, "name");
            xmlNodePtr text = name ? name->children : NULL;
            /* The path points into the document: a name is one text node. */
            if (!text || text->type != XML_TEXT_NODE || text->next)
                continue;
            item->props[item->n_props].path = (const char *)text->content;
            item->props[item->n_props].val = vim_xml_child(ps, "val");
            item->n_props++;
        }
        for (xmlNodePtr ms = vim_xml_child(oc, "missingSet"); ms;
             ms = vim_xml_next(ms, "missingSet"))
            note_missing(mi, &item->ref, ms);
    }
    *ret_token = vim_xml_child_text(result, "token");
    if (*ret_token && !**ret_token) {
        free(*ret_token);
        *ret_token = NULL;
    }
    return VMOP_OK;
}

static vmop_rc add_page(struct vim_objects *o, struct vim_resp *r, struct vmop_err *err)
{
    struct vim_resp **np;
    if (o->n_pages >= MAX_PAGES)
        return vmop_fail(err, VMOP_E_TOOBIG, "RetrievePropertiesEx: more than %d pages", MAX_PAGES);
    np = realloc(o->pages, (o->n_pages + 1) * sizeof(*np));
    if (!np)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    o->pages = np;
    o->pages[o->n_pages++] = r;
    return VMOP_OK;
}

static void cancel_token(struct vim_client *c, const char *token)
{
    struct vbuf b;
    struct vmop_err ignored = {0};
    struct vim_call_opts opts = {.timeout_ms = CLEANUP_TIMEOUT_MS};
    vbuf_init(&b, 8192);
    vbuf_add_xml_elem(&b, "token", token);
    if (!vbuf_error(&b))
        (void)vim_soap_call_ex(c, "CancelRetrievePropertiesEx", &c->sc_property_collector,
                               vbuf_str(&b), VIM_RET_NONE, &opts, NULL, &ignored);
    vbuf_free(&b);
}

/* One attempt: every page. */
static vmop_rc retrieve_once(struct vim_client *c, const char *params, struct vim_objects *o,
                             struct missing_info *mi, struct vmop_err *err)
{
    struct vim_resp *r = NULL;
    char *token = NULL;
    vmop_rc rc;

    rc = vim_soap_call(c, "RetrievePropertiesEx", &c->sc_property_collector, params,
                       VIM_RET_OPTIONAL, &r, err);
    if (rc != VMOP_OK)
        return rc;
    for (;;) {
        xmlNodePtr result = vim_xml_child(r->response, "returnval");
        rc = add_page(o, r, err);
        if (rc != VMOP_OK) {
            vim_resp_free(r);
            break;
        }
        r = NULL;
        rc = collect_page(o, result, mi, &token, err);
        if (rc != VMOP_OK || !token || mi->not_authenticated)
            break;
        struct vbuf b;
        vbuf_init(&b, 8192);
        vbuf_add_xml_elem(&b, "token", token);
        if (vbuf_error(&b)) {
            rc = vmop_fail(err, VMOP_E_PROTO, "RetrievePropertiesEx: paging token too long");
            vbuf_free(&b);
            break;
        }
        rc = vim_soap_call(c, "ContinueRetrievePropertiesEx", &c->sc_property_collector,
                           vbuf_str(&b), VIM_RET_REQUIRED, &r, err);
        vbuf_free(&b);
        free(token);
        token = NULL;
        if (rc != VMOP_OK)
            break;
    }
    if (token) {
        /* Stopped early with a result set open on the server: release it. */
        cancel_token(c, token);
        free(token);
    }
    return rc;
}

vmop_rc vim_retrieve(struct vim_client *c, const struct vim_moref *obj, const char *type,
                     const char *const *paths, int via_view, struct vim_objects *ret_objs,
                     struct vmop_err *err)
{
    struct vim_objects o = {0};
    struct missing_info mi = {0};
    struct vbuf params = {0};
    vmop_rc rc;
    size_t np = 0;

    if (!c || !obj || !vim_moref_is_set(obj) || !ret_objs)
        return vmop_fail(err, VMOP_E_INVALID, "vim_retrieve: no object");
    if (!type || !*type)
        type = obj->type;
    for (; paths && paths[np]; np++)
        ;
    if (np > MAX_PROPS)
        return vmop_fail(err, VMOP_E_INVALID, "vim_retrieve: %zu property paths", np);

    rc = vim_login(c, err);
    if (rc != VMOP_OK)
        return rc;
    vbuf_init(&params, VIM_MAX_REQUEST);
    vbuf_adds(&params, "<specSet>");
    add_filter_spec(&params, obj, type, paths, via_view);
    vbuf_adds(&params, "</specSet><options></options>");
    if (vbuf_error(&params)) {
        rc = vmop_fail(err, vbuf_error(&params), "RetrievePropertiesEx: request too large");
        goto out;
    }

    for (int attempt = 0;; attempt++) {
        uint64_t gen = vim_session_gen(c);
        struct vmop_err rerr = {0};
        rc = retrieve_once(c, vbuf_str(&params), &o, &mi, &rerr);
        if (rc == VMOP_OK && mi.not_authenticated && attempt == 0) {
            /* vcsim's form of an expired session: 200 with missingSet NotAuthenticated. */
            vim_objects_free(&o);
            free(mi.message);
            memset(&mi, 0, sizeof(mi));
            rc = vim_session_login(c, gen, err);
            if (rc != VMOP_OK)
                goto out;
            continue;
        }
        if (rc != VMOP_OK) {
            if (!via_view && vmop_err_is_fault(&rerr, "ManagedObjectNotFound"))
                rc = rerr.rc = VMOP_E_NOT_FOUND;
            if (err && err->rc == VMOP_OK)
                *err = rerr;
            goto out;
        }
        break;
    }
    if (mi.not_authenticated) {
        rc = vmop_fail_fault(err, VMOP_E_FAULT, "NotAuthenticated", 0,
                             "RetrievePropertiesEx %s:%s: still not authenticated after a "
                             "re-login",
                             obj->type, obj->value);
        goto out;
    }
    if (!via_view && mi.fault[0]) {
        rc = strcmp(mi.fault, "ManagedObjectNotFound") == 0 ? VMOP_E_NOT_FOUND : VMOP_E_FAULT;
        rc = vmop_fail_fault(err, rc, mi.fault, 0, "RetrievePropertiesEx %s property '%s': %s%s%s",
                             mi.obj, mi.path, mi.fault, mi.message && *mi.message ? ": " : "",
                             mi.message ? mi.message : "");
        goto out;
    }
    *ret_objs = o;
    memset(&o, 0, sizeof(o));
out:
    free(mi.message);
    vim_objects_free(&o);
    vbuf_free(&params);
    return rc;
}

/* ---- views ------------------------------------------------------------------------------------
 */

vmop_rc vim_view_create(struct vim_client *c, const struct vim_moref *container, const char *type,
                        struct vim_moref *ret_view, struct vmop_err *err)
{
    struct vbuf b;
    struct vim_resp *r = NULL;
    struct vim_moref view;
    vmop_rc rc;

    if (!c || !container || !vim_moref_is_set(container) || !type || !ret_view)
        return vmop_fail(err, VMOP_E_INVALID, "vim_view_create: bad arguments");
    rc = vim_session_service_content(c, err);
    if (rc != VMOP_OK)
        return rc;
    vbuf_init(&b, 8192);
    vim_xml_add_moref(&b, "container", container);
    vbuf_add_xml_elem(&b, "type", type);
    vbuf_adds(&b, "<recursive>true</recursive>");
    if (vbuf_error(&b)) {
        rc = vmop_fail(err, vbuf_error(&b), "CreateContainerView: request too large");
        goto out;
    }
    rc = vim_soap_call(c, "CreateContainerView", &c->sc_view_manager, vbuf_str(&b),
                       VIM_RET_REQUIRED, &r, err);
    if (rc != VMOP_OK)
        goto out;
    if (vim_xml_moref(vim_xml_child(r->response, "returnval"), &view) != VMOP_OK) {
        rc = vmop_fail(err, VMOP_E_PROTO, "CreateContainerView: no view reference in the reply");
        goto out;
    }
    *ret_view = view;
out:
    vim_resp_free(r);
    vbuf_free(&b);
    return rc;
}

vmop_rc vim_view_destroy(struct vim_client *c, const struct vim_moref *view, struct vmop_err *err)
{
    struct vim_call_opts opts = {.timeout_ms = CLEANUP_TIMEOUT_MS};
    if (!c || !view || !vim_moref_is_set(view))
        return VMOP_OK;
    if (opts.timeout_ms > c->timeout_ms)
        opts.timeout_ms = c->timeout_ms;
    return vim_soap_call_ex(c, "DestroyView", view, NULL, VIM_RET_NONE, &opts, NULL, err);
}

vmop_rc vim_retrieve_in(struct vim_client *c, const struct vim_moref *container, const char *type,
                        const char *const *paths, struct vim_objects *ret_objs,
                        struct vmop_err *err)
{
    vmop_rc rc = VMOP_OK;
    for (int attempt = 0; attempt < 2; attempt++) {
        struct vim_moref view;
        struct vmop_err rerr = {0}, ignored = {0};
        uint64_t gen;

        rc = vim_login(c, err);
        if (rc != VMOP_OK)
            return rc;
        gen = vim_session_gen(c);
        rc = vim_view_create(c, container, type, &view, err);
        if (rc != VMOP_OK)
            return rc;
        rc = vim_retrieve(c, &view, type, paths, 1, ret_objs, &rerr);
        if (rc == VMOP_OK || vim_session_gen(c) == gen || attempt == 1) {
            (void)vim_view_destroy(c, &view, &ignored);
            if (rc != VMOP_OK && err && err->rc == VMOP_OK)
                *err = rerr;
            return rc;
        }
        /* The session changed under us: the view belonged to the old one. Start over. */
    }
    return rc;
}

/* ---- watches ----------------------------------------------------------------------------------
 */

struct vim_watch {
    struct vim_client *c; /* borrowed; outlives the watch */
    struct vim_moref container;
    char **props;               /* owned, NULL-terminated */
    pthread_mutex_t lock;       /* guards collector (read by vim_watch_cancel) */
    struct vim_moref collector; /* "" type = not set up */
    struct vim_moref view;
    struct vim_moref filter;
    uint64_t gen;  /* session generation the objects above belong to */
    char *version; /* owned; "" = next wait returns the full state */
    int cancel;    /* set by vim_watch_cancel (atomic) */
};

void vim_update_batch_free(struct vim_update_batch *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++) {
        struct vim_update *u = &b->items[i];
        for (size_t j = 0; j < u->n; j++) {
            free(u->paths[j]);
            free(u->values[j]);
        }
        free(u->paths);
        free(u->values);
    }
    free(b->items);
    memset(b, 0, sizeof(*b));
}

static long cleanup_timeout(const struct vim_client *c)
{
    return c->timeout_ms < CLEANUP_TIMEOUT_MS ? c->timeout_ms : CLEANUP_TIMEOUT_MS;
}

/* Destroys the server objects (best effort, bounded). The collector's destruction also removes its
 * filter. */
static void watch_teardown(struct vim_watch *w)
{
    struct vmop_err ignored = {0};
    struct vim_call_opts opts = {.timeout_ms = cleanup_timeout(w->c)};
    struct vim_moref collector;

    pthread_mutex_lock(&w->lock);
    collector = w->collector;
    memset(&w->collector, 0, sizeof(w->collector));
    pthread_mutex_unlock(&w->lock);
    /* Only worth a round trip while the session that owns them is alive. */
    if (vim_session_gen(w->c) == w->gen) {
        if (vim_moref_is_set(&collector))
            (void)vim_soap_call_ex(w->c, "DestroyPropertyCollector", &collector, NULL, VIM_RET_NONE,
                                   &opts, NULL, &ignored);
        if (vim_moref_is_set(&w->view))
            (void)vim_soap_call_ex(w->c, "DestroyView", &w->view, NULL, VIM_RET_NONE, &opts, NULL,
                                   &ignored);
    }
    memset(&w->view, 0, sizeof(w->view));
    memset(&w->filter, 0, sizeof(w->filter));
}

static vmop_rc watch_setup(struct vim_watch *w, struct vmop_err *err)
{
    struct vim_client *c = w->c;
    struct vim_resp *r = NULL;
    struct vim_moref collector = {{0}}, view = {{0}}, filter;
    struct vbuf b = {0};
    vmop_rc rc;

    rc = vim_login(c, err);
    if (rc != VMOP_OK)
        return rc;
    w->gen = vim_session_gen(c);
    rc = vim_soap_call(c, "CreatePropertyCollector", &c->sc_property_collector, NULL,
                       VIM_RET_REQUIRED, &r, err);
    if (rc != VMOP_OK)
        goto out;
    if (vim_xml_moref(vim_xml_child(r->response, "returnval"), &collector) != VMOP_OK) {
        rc = vmop_fail(err, VMOP_E_PROTO, "CreatePropertyCollector: no reference in the reply");
        goto out;
    }
    vim_resp_free(r);
    r = NULL;
    pthread_mutex_lock(&w->lock);
    w->collector = collector;
    pthread_mutex_unlock(&w->lock);

    rc = vim_view_create(c, &w->container, "VirtualMachine", &view, err);
    if (rc != VMOP_OK)
        goto out;
    w->view = view;

    vbuf_init(&b, VIM_MAX_REQUEST);
    vbuf_adds(&b, "<spec>");
    add_filter_spec(&b, &view, "VirtualMachine", (const char *const *)w->props, 1);
    vbuf_adds(&b, "</spec><partialUpdates>false</partialUpdates>");
    if (vbuf_error(&b)) {
        rc = vmop_fail(err, vbuf_error(&b), "CreateFilter: request too large");
        goto out;
    }
    rc = vim_soap_call(c, "CreateFilter", &collector, vbuf_str(&b), VIM_RET_REQUIRED, &r, err);
    if (rc != VMOP_OK)
        goto out;
    if (vim_xml_moref(vim_xml_child(r->response, "returnval"), &filter) != VMOP_OK) {
        rc = vmop_fail(err, VMOP_E_PROTO, "CreateFilter: no reference in the reply");
        goto out;
    }
    w->filter = filter;
    free(w->version);
    w->version = strdup("");
    if (!w->version)
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
out:
    if (rc != VMOP_OK)
        watch_teardown(w);
    vim_resp_free(r);
    vbuf_free(&b);
    return rc;
}

void vim_watch_free(struct vim_watch *w)
{
    if (!w)
        return;
    watch_teardown(w);
    for (size_t i = 0; w->props && w->props[i]; i++)
        free(w->props[i]);
    free(w->props);
    free(w->version);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

vmop_rc vim_watch_new(struct vim_client *c, const struct vim_moref *container,
                      const char *const *props, struct vim_watch **ret_watch, struct vmop_err *err)
{
    struct vim_watch *w;
    size_t n = 0;
    vmop_rc rc;

    if (!c || !container || !vim_moref_is_set(container) || !props || !props[0] || !ret_watch)
        return vmop_fail(err, VMOP_E_INVALID, "vim_watch_new: container and properties needed");
    for (; props[n]; n++)
        if (n >= MAX_WATCH_PROPS || !*props[n])
            return vmop_fail(err, VMOP_E_INVALID, "vim_watch_new: empty path or too many paths");
    w = calloc(1, sizeof(*w));
    if (!w)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    pthread_mutex_init(&w->lock, NULL);
    w->c = c;
    w->container = *container;
    w->props = calloc(n + 1, sizeof(*w->props));
    if (!w->props) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        w->props[i] = strdup(props[i]);
        if (!w->props[i]) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
            goto out;
        }
    }
    rc = watch_setup(w, err);
    if (rc != VMOP_OK)
        goto out;
    *ret_watch = w;
    w = NULL;
out:
    vim_watch_free(w);
    return rc;
}

static enum vim_update_kind parse_kind(const char *k, int *ok)
{
    *ok = 1;
    if (k && strcmp(k, "enter") == 0)
        return VIM_UPDATE_ENTER;
    if (k && strcmp(k, "leave") == 0)
        return VIM_UPDATE_LEAVE;
    if (k && strcmp(k, "modify") == 0)
        return VIM_UPDATE_MODIFY;
    *ok = 0;
    return VIM_UPDATE_MODIFY;
}

/* The text of an assigned value: a primitive's own text, or for an OptionValue (what a keyed
 * ExtraConfig path such as config.extraConfig["key"] selects) the text of its primitive value.
 * Any other complex value: NULL. */
static char *update_value_text(xmlNodePtr val)
{
    xmlNodePtr inner;
    char *type;
    int is_option;

    if (!vim_xml_first(val))
        return vim_xml_text(val);
    type = vim_xml_xsi_type(val);
    is_option = type && strcmp(type, "OptionValue") == 0;
    free(type);
    inner = is_option ? vim_xml_child(val, "value") : NULL;
    return inner && !vim_xml_first(inner) ? vim_xml_text(inner) : NULL;
}

/* One ObjectUpdate -> one vim_update (appended to b, whose capacity the caller ensured). */
static vmop_rc parse_object_update(xmlNodePtr ou, struct vim_update *u, struct vmop_err *err)
{
    char *kind = vim_xml_child_text(ou, "kind");
    size_t n = 0;
    int ok;
    vmop_rc rc = VMOP_OK;

    memset(u, 0, sizeof(*u));
    u->kind = parse_kind(kind, &ok);
    free(kind);
    if (!ok || vim_xml_moref(vim_xml_child(ou, "obj"), &u->ref) != VMOP_OK)
        return vmop_fail(err, VMOP_E_PROTO, "WaitForUpdatesEx: object update without kind or obj");
    for (xmlNodePtr cs = vim_xml_child(ou, "changeSet"); cs; cs = vim_xml_next(cs, "changeSet"))
        n++;
    if (n > MAX_PROPS)
        return vmop_fail(err, VMOP_E_TOOBIG, "WaitForUpdatesEx: %zu changes on one object", n);
    if (n == 0)
        return VMOP_OK;
    u->paths = calloc(n, sizeof(*u->paths));
    u->values = calloc(n, sizeof(*u->values));
    if (!u->paths || !u->values)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    for (xmlNodePtr cs = vim_xml_child(ou, "changeSet"); cs; cs = vim_xml_next(cs, "changeSet")) {
        xmlNodePtr val = vim_xml_child(cs, "val");
        char *op = vim_xml_child_text(cs, "op");
        char *name = vim_xml_child_text(cs, "name");
        if (!name) {
            free(op);
            continue;
        }
        u->paths[u->n] = name;
        /* Text only for primitive values that are assigned; complex values and removals: NULL. */
        if (val && !(op && strstr(op, "emove")))
            u->values[u->n] = update_value_text(val);
        u->n++;
        free(op);
    }
    return rc;
}

static vmop_rc parse_update_set(xmlNodePtr us, struct vim_update_batch *b, char **ret_version,
                                struct vmop_err *err)
{
    size_t n = 0;
    char *version;
    vmop_rc rc = VMOP_OK;

    *ret_version = NULL;
    if (!us)
        return VMOP_OK;
    version = vim_xml_child_text(us, "version");
    if (!version || strlen(version) > MAX_VERSION_LEN) {
        free(version);
        return vmop_fail(err, VMOP_E_PROTO, "WaitForUpdatesEx: update set without a version");
    }
    for (xmlNodePtr fu = vim_xml_child(us, "filterSet"); fu; fu = vim_xml_next(fu, "filterSet"))
        for (xmlNodePtr ou = vim_xml_child(fu, "objectSet"); ou; ou = vim_xml_next(ou, "objectSet"))
            n++;
    if (n > MAX_UPDATES) {
        free(version);
        return vmop_fail(err, VMOP_E_TOOBIG, "WaitForUpdatesEx: %zu object updates", n);
    }
    if (n) {
        b->items = calloc(n, sizeof(*b->items));
        if (!b->items) {
            free(version);
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        }
    }
    for (xmlNodePtr fu = vim_xml_child(us, "filterSet"); fu && rc == VMOP_OK;
         fu = vim_xml_next(fu, "filterSet"))
        for (xmlNodePtr ou = vim_xml_child(fu, "objectSet"); ou && rc == VMOP_OK;
             ou = vim_xml_next(ou, "objectSet")) {
            rc = parse_object_update(ou, &b->items[b->n], err);
            b->n++; /* counted even on failure so the free below releases it */
        }
    if (rc != VMOP_OK) {
        free(version);
        return rc;
    }
    b->truncated = vim_xml_child_bool(us, "truncated", 0);
    *ret_version = version;
    return VMOP_OK;
}

static int watch_objects_lost(const struct vmop_err *e)
{
    return vmop_err_is_fault(e, "ManagedObjectNotFound") ||
           vmop_err_is_fault(e, "NotAuthenticated") ||
           vmop_err_is_fault(e, "InvalidCollectorVersion");
}

vmop_rc vim_watch_next(struct vim_watch *w, int max_wait_s, struct vim_update_batch *ret_batch,
                       struct vmop_err *err)
{
    struct vim_client *c;
    struct vim_update_batch batch = {0};
    struct vim_resp *r = NULL;
    struct vbuf b = {0};
    char *version = NULL;
    long cap_s;
    vmop_rc rc = VMOP_OK;

    if (!w || !ret_batch)
        return vmop_fail(err, VMOP_E_INVALID, "vim_watch_next: no watch");
    c = w->c;
    /* The HTTP request must outlive the server-side wait: keep a quarter of the timeout spare. */
    cap_s = (c->timeout_ms * 3 / 4) / 1000;
    if (max_wait_s < 0)
        max_wait_s = 0;
    if (max_wait_s > cap_s)
        max_wait_s = (int)cap_s;

    for (int attempt = 0; attempt < 2; attempt++) {
        struct vmop_err werr = {0};
        struct vim_call_opts opts = {.timeout_ms = 0, .cancel = &w->cancel};
        struct vim_moref collector;

        if (__atomic_exchange_n(&w->cancel, 0, __ATOMIC_ACQ_REL)) {
            rc = vmop_fail(err, VMOP_E_CANCELED, "WaitForUpdatesEx: canceled");
            goto out;
        }
        pthread_mutex_lock(&w->lock);
        collector = w->collector;
        pthread_mutex_unlock(&w->lock);
        if (!vim_moref_is_set(&collector) || vim_session_gen(c) != w->gen) {
            /* Objects of an old session (or a failed earlier set-up): build them again; the next
             * answer is the full state. */
            watch_teardown(w);
            rc = watch_setup(w, err);
            if (rc != VMOP_OK)
                goto out;
            pthread_mutex_lock(&w->lock);
            collector = w->collector;
            pthread_mutex_unlock(&w->lock);
        }
        vbuf_free(&b);
        vbuf_init(&b, 2 * MAX_VERSION_LEN);
        vbuf_add_xml_elem(&b, "version", w->version);
        vbuf_addf(&b, "<options><maxWaitSeconds>%d</maxWaitSeconds></options>", max_wait_s);
        if (vbuf_error(&b)) {
            rc = vmop_fail(err, vbuf_error(&b), "WaitForUpdatesEx: request too large");
            goto out;
        }
        rc = vim_soap_call_ex(c, "WaitForUpdatesEx", &collector, vbuf_str(&b), VIM_RET_OPTIONAL,
                              &opts, &r, &werr);
        if (rc == VMOP_OK)
            break;
        if (rc == VMOP_E_CANCELED || vmop_err_is_fault(&werr, "RequestCanceled") ||
            __atomic_load_n(&w->cancel, __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&w->cancel, 0, __ATOMIC_RELEASE);
            rc = vmop_fail(err, VMOP_E_CANCELED, "WaitForUpdatesEx: canceled");
            goto out;
        }
        if (attempt == 0 && watch_objects_lost(&werr)) {
            /* The session was replaced and took our collector with it: start over. */
            pthread_mutex_lock(&w->lock);
            memset(&w->collector, 0, sizeof(w->collector));
            pthread_mutex_unlock(&w->lock);
            continue;
        }
        if (err && err->rc == VMOP_OK)
            *err = werr;
        goto out;
    }
    rc = parse_update_set(vim_xml_child(r->response, "returnval"), &batch, &version, err);
    if (rc != VMOP_OK)
        goto out;
    if (version) {
        free(w->version);
        w->version = version;
        version = NULL;
    }
    *ret_batch = batch;
    memset(&batch, 0, sizeof(batch));
out:
    vim_update_batch_free(&batch);
    free(version);
    vim_resp_free(r);
    vbuf_free(&b);
    return rc;
}

void vim_watch_cancel(struct vim_watch *w)
{
    struct vim_moref collector;
    struct vmop_err ignored = {0};
    struct vim_call_opts opts;

    if (!w)
        return;
    /* The flag aborts our own transfer within about a second even if the server is slow to
     * react; CancelWaitForUpdates makes the server end its side at once. */
    __atomic_store_n(&w->cancel, 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&w->lock);
    collector = w->collector;
    pthread_mutex_unlock(&w->lock);
    if (!vim_moref_is_set(&collector))
        return;
    opts.timeout_ms = cleanup_timeout(w->c);
    opts.cancel = NULL;
    (void)vim_soap_call_ex(w->c, "CancelWaitForUpdates", &collector, NULL, VIM_RET_NONE, &opts,
                           NULL, &ignored);
}
