/* vim_xml.c: libxml2 reading helpers and XML writing helpers for vimclient.
 *
 * Owns: parsing a peer's document safely (no network, no entity expansion, no DTD at all) and
 * walking it by local name, so any prefix a server picks works (vcsim writes
 * "XMLSchema-instance:type" where vCenter writes "xsi:type": xsi:type is read by namespace URI).
 * Not here: SOAP envelopes and faults (vim_soap.c), vSphere types (vim_types.c).
 * Strings returned by the readers are malloc'd copies (free()), never libxml2 buffers.
 */
#include "vim_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

static int is_elem(xmlNodePtr n)
{
    return n && n->type == XML_ELEMENT_NODE;
}

static int name_is(xmlNodePtr n, const char *name)
{
    return is_elem(n) && n->name && strcmp((const char *)n->name, name) == 0;
}

xmlNodePtr vim_xml_child(xmlNodePtr parent, const char *name)
{
    if (!parent)
        return NULL;
    for (xmlNodePtr n = parent->children; n; n = n->next)
        if (name_is(n, name))
            return n;
    return NULL;
}

xmlNodePtr vim_xml_next(xmlNodePtr node, const char *name)
{
    if (!node)
        return NULL;
    for (xmlNodePtr n = node->next; n; n = n->next) {
        if (!is_elem(n))
            continue;
        if (!name || name_is(n, name))
            return n;
    }
    return NULL;
}

xmlNodePtr vim_xml_first(xmlNodePtr parent)
{
    if (!parent)
        return NULL;
    for (xmlNodePtr n = parent->children; n; n = n->next)
        if (is_elem(n))
            return n;
    return NULL;
}

/* Copies a libxml2-allocated string into malloc'd memory and releases the original, so callers
 * never need to know which allocator libxml2 was set up with. */
static char *take_xml_string(xmlChar *s)
{
    char *copy;
    if (!s)
        return NULL;
    copy = strdup((const char *)s);
    xmlFree(s);
    return copy;
}

char *vim_xml_text(xmlNodePtr node)
{
    if (!node)
        return NULL;
    return take_xml_string(xmlNodeGetContent(node));
}

char *vim_xml_child_text(xmlNodePtr parent, const char *name)
{
    return vim_xml_text(vim_xml_child(parent, name));
}

char *vim_xml_xsi_type(xmlNodePtr node)
{
    char *t, *colon;
    if (!is_elem(node))
        return NULL;
    t = take_xml_string(xmlGetNsProp(node, BAD_CAST "type", BAD_CAST XSI_NS));
    if (!t)
        return NULL;
    colon = strrchr(t, ':');
    if (colon)
        memmove(t, colon + 1, strlen(colon + 1) + 1);
    return t;
}

/* Trims ASCII white space in place (XML text of numbers may be padded). */
static char *trim(char *s)
{
    char *end;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    end = s + strlen(s);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
        *--end = '\0';
    return s;
}

long long vim_xml_child_ll(xmlNodePtr parent, const char *name, long long dflt)
{
    char *text = vim_xml_child_text(parent, name), *s, *end = NULL;
    long long v = dflt;
    if (!text)
        return dflt;
    s = trim(text);
    if (*s) {
        errno = 0;
        long long x = strtoll(s, &end, 10);
        if (errno == 0 && end && *end == '\0')
            v = x;
    }
    free(text);
    return v;
}

int vim_xml_child_bool(xmlNodePtr parent, const char *name, int dflt)
{
    char *text = vim_xml_child_text(parent, name), *s;
    int v = dflt;
    if (!text)
        return dflt;
    s = trim(text);
    if (strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
        v = 1;
    else if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
        v = 0;
    free(text);
    return v;
}

vmop_rc vim_xml_moref(xmlNodePtr node, struct vim_moref *ret_ref)
{
    char *type = NULL, *value = NULL;
    vmop_rc rc = VMOP_E_PROTO;
    struct vim_moref ref;

    if (!is_elem(node))
        return VMOP_E_PROTO;
    type = take_xml_string(xmlGetNoNsProp(node, BAD_CAST "type"));
    value = vim_xml_text(node);
    if (!type || !value)
        goto out;
    if (vim_moref_set(&ref, trim(type), trim(value)) != VMOP_OK)
        goto out;
    *ret_ref = ref;
    rc = VMOP_OK;
out:
    free(type);
    free(value);
    return rc;
}

xmlDocPtr vim_xml_parse(const char *data, size_t len)
{
    static const char doctype[] = "<!DOCTYPE";
    xmlDocPtr doc;

    if (!data || len == 0 || len > (size_t)INT_MAX)
        return NULL;
    /* SOAP forbids DTDs; refusing them before parsing also rules out entity tricks (billion
     * laughs, external entities) whatever libxml2 version is installed. */
    if (memmem(data, len, doctype, sizeof(doctype) - 1))
        return NULL;
    /* No XML_PARSE_NOENT (it would expand entities), no DTD loading, no network, and no
     * error printing to stderr (a peer must not be able to fill our logs). */
    doc = xmlReadMemory(data, (int)len, "vim.xml", NULL,
                        XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc)
        return NULL;
    if (doc->intSubset || doc->extSubset || !xmlDocGetRootElement(doc)) {
        xmlFreeDoc(doc);
        return NULL;
    }
    return doc;
}

vmop_rc vim_xml_add_moref(struct vbuf *b, const char *elem, const struct vim_moref *ref)
{
    vbuf_addf(b, "<%s type=\"", elem);
    vbuf_add_xml_escaped(b, ref->type);
    vbuf_adds(b, "\">");
    vbuf_add_xml_escaped(b, ref->value);
    return vbuf_addf(b, "</%s>", elem);
}

/* xsd_type: "xsd:string" or a bare XSD primitive ("string", "int", ...), which gets the xsd:
 * prefix, or a vim25 type name ("ManagedObjectReference"), used unprefixed: inside a body element
 * declared xmlns="urn:vim25" it resolves to the vim25 namespace. */
vmop_rc vim_xml_add_typed(struct vbuf *b, const char *elem, const char *xsd_type, const char *value)
{
    static const char *const xsd_primitives[] = {"string",   "int",          "long",   "short",
                                                 "byte",     "boolean",      "float",  "double",
                                                 "dateTime", "base64Binary", "anyURI", NULL};
    const char *prefix = "";
    if (!strchr(xsd_type, ':'))
        for (size_t i = 0; xsd_primitives[i]; i++)
            if (strcmp(xsd_type, xsd_primitives[i]) == 0)
                prefix = "xsd:";
    vbuf_addf(b, "<%s xsi:type=\"%s", elem, prefix);
    vbuf_add_xml_escaped(b, xsd_type);
    vbuf_adds(b, "\">");
    vbuf_add_xml_escaped(b, value);
    return vbuf_addf(b, "</%s>", elem);
}
