/* table.c: Table conversion (table.h): printer columns of built-ins (with private '#' paths for
 * cells no JSONPath can express, such as ConfigMap DATA or an Event OBJECT), and as_table_build,
 * which follows apiextensions' tableconvertor: Name first, cells per column type, date cells
 * humanised. */
#include "table.h"
#include "schema_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AGE_COL                                                                                    \
    "{'name':'Age','type':'date','format':'','priority':0,'jsonPath':'.metadata."                  \
    "creationTimestamp',"                                                                          \
    "'description':'CreationTimestamp is a timestamp representing the server time when this "      \
    "object "                                                                                      \
    "was created. It is not guaranteed to be set in happens-before order across separate "         \
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "     \
    "UTC.'}"
#define COL(n, t, p, prio)                                                                         \
    "{'name':'" n "','type':'" t "','format':'','priority':" #prio ",'jsonPath':'" p               \
    "','description':''}"

static const struct {
    const char *group, *plural, *cols;
} builtin_cols[] = {
    {"", "namespaces", "[" COL("Status", "string", ".status.phase", 0) "," AGE_COL "]"},
    {"", "configmaps", "[" COL("Data", "integer", "#count:.data,.binaryData", 0) "," AGE_COL "]"},
    {"", "secrets",
     "[" COL("Type", "string", ".type", 0) "," COL("Data", "integer", "#count:.data", 0) "," AGE_COL
                                                                                         "]"},
    {"", "serviceaccounts", "[" COL("Secrets", "integer", "#count:.secrets", 0) "," AGE_COL "]"},
    {"", "events",
     "[" COL("", "string", "#no-name", 0) "," COL("Last Seen", "string", "#event-lastseen", 0) "," COL(
         "Type", "string", ".type",
         0) "," COL("Reason", "string", ".reason",
                    0) "," COL("Object", "string", "#event-object",
                               0) "," COL("Subobject", "string", ".involvedObject.fieldPath",
                                          1) "," COL("Source", "string", "#event-source",
                                                     1) "," COL("Message", "string", ".message",
                                                                0) "," COL("First Seen", "string",
                                                                           "#event-firstseen",
                                                                           1) "," COL("Count",
                                                                                      "integer",
                                                                                      ".count",
                                                                                      1) "," COL("N"
                                                                                                 "a"
                                                                                                 "m"
                                                                                                 "e",
                                                                                                 "s"
                                                                                                 "t"
                                                                                                 "r"
                                                                                                 "i"
                                                                                                 "n"
                                                                                                 "g",
                                                                                                 "."
                                                                                                 "m"
                                                                                                 "e"
                                                                                                 "t"
                                                                                                 "a"
                                                                                                 "d"
                                                                                                 "a"
                                                                                                 "t"
                                                                                                 "a"
                                                                                                 "."
                                                                                                 "n"
                                                                                                 "a"
                                                                                                 "m"
                                                                                                 "e",
                                                                                                 1) "]"},
    {"coordination.k8s.io", "leases",
     "[" COL("Holder", "string", ".spec.holderIdentity", 0) "," AGE_COL "]"},
    {"", "services",
     "[" COL("Type", "string", ".spec.type", 0) "," COL(
         "Cluster-IP", "string", ".spec.clusterIP",
         0) "," COL("External-IP", "string", "#service-externalip",
                    0) "," COL("Port(s)", "string", "#service-ports",
                               0) "," AGE_COL
                                  "," COL("Selector", "string", "#selector:.spec.selector", 1) "]"},
    {"", "endpoints", "[" COL("Endpoints", "string", "#endpoints", 0) "," AGE_COL "]"},
    {"discovery.k8s.io", "endpointslices",
     "[" COL("AddressType", "string", ".addressType",
             0) "," COL("Ports", "string", "#slice-ports",
                        0) "," COL("Endpoints", "string", "#slice-endpoints", 0) "," AGE_COL "]"},
    {"storage.k8s.io", "storageclasses",
     "[" COL("Provisioner", "string", ".provisioner",
             0) "," COL("ReclaimPolicy", "string", ".reclaimPolicy",
                        0) "," COL("VolumeBindingMode", "string", ".volumeBindingMode",
                                   0) "," COL("AllowVolumeExpansion", "boolean",
                                              "#bool:.allowVolumeExpansion", 0) "," AGE_COL "]"},
    {"apiextensions.k8s.io", "customresourcedefinitions",
     "[" COL("Created At", "date", "#created-at", 0) "]"},
    {NULL, NULL, NULL},
};

static cJSON *parse_quoted(const char *src)
{
    size_t n = strlen(src);
    char *s = malloc(n + 1);
    cJSON *j;
    if (!s)
        return NULL;
    for (size_t i = 0; i <= n; i++)
        s[i] = src[i] == '\'' ? '"' : src[i];
    j = cJSON_Parse(s);
    free(s);
    return j;
}

vmop_rc as_table_builtin_columns(const char *group, const char *plural, cJSON **ret_cols,
                                 struct vmop_err *err)
{
    const char *src = "[" AGE_COL "]";
    cJSON *c;
    for (int i = 0; plural && builtin_cols[i].plural; i++)
        if (!strcmp(builtin_cols[i].group, group ? group : "") &&
            !strcmp(builtin_cols[i].plural, plural))
            src = builtin_cols[i].cols;
    c = parse_quoted(src);
    if (!c)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory building printer columns");
    *ret_cols = c;
    return VMOP_OK;
}

static const char *sget(const cJSON *o, const char *path)
{
    /* a.b.c of plain objects */
    char key[128];
    const char *p = path;
    const cJSON *v = o;
    while (*p && v) {
        size_t n = strcspn(p, ".");
        if (n >= sizeof(key))
            return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        v = cJSON_GetObjectItemCaseSensitive(v, key);
        p += n;
        if (*p == '.')
            p++;
    }
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static cJSON *human_since(const char *ts, long long now)
{
    long long t;
    char buf[32];
    if (!ts || !*ts)
        return cJSON_CreateString("<unknown>");
    if (as_parse_timestamp(ts, &t))
        return cJSON_CreateString("<invalid>");
    as_human_duration(now - t, buf, sizeof(buf));
    return cJSON_CreateString(buf);
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* Cells that JSONPath cannot express (built-in printers). */
static cJSON *private_cell(const char *path, const cJSON *obj, long long now)
{
    struct vbuf b;
    cJSON *ret = NULL;
    vbuf_init(&b, 64 * 1024);
    if (!strncmp(path, "#count:", 7)) {
        long long n = 0;
        char list[256];
        snprintf(list, sizeof(list), "%s", path + 7);
        for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
            n += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(obj, t[0] == '.' ? t + 1 : t));
        ret = cJSON_CreateNumber((double)n);
    } else if (!strncmp(path, "#bool:.", 7)) {
        ret = cJSON_CreateBool(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, path + 7)));
    } else if (!strcmp(path, "#created-at")) {
        const char *ts = sget(obj, "metadata.creationTimestamp");
        ret = cJSON_CreateString(ts ? ts : "");
    } else if (!strcmp(path, "#event-object")) {
        const char *k = sget(obj, "involvedObject.kind"), *n = sget(obj, "involvedObject.name");
        for (const char *p = k ? k : ""; *p; p++) {
            char c = (char)tolower((unsigned char)*p);
            vbuf_add(&b, &c, 1);
        }
        vbuf_addf(&b, "/%s", n ? n : "");
        ret = cJSON_CreateString(vbuf_str(&b));
    } else if (!strcmp(path, "#event-lastseen")) {
        const char *ts = sget(obj, "series.lastObservedTime");
        if (!ts || !*ts)
            ts = sget(obj, "lastTimestamp");
        if (!ts || !*ts)
            ts = sget(obj, "eventTime");
        ret = human_since(ts, now);
    } else if (!strcmp(path, "#event-firstseen")) {
        const char *ts = sget(obj, "firstTimestamp");
        if (!ts || !*ts)
            ts = sget(obj, "eventTime");
        ret = human_since(ts, now);
    } else if (!strcmp(path, "#event-source")) {
        const char *c = sget(obj, "source.component"), *h = sget(obj, "source.host");
        if (!c || !*c)
            c = sget(obj, "reportingComponent");
        vbuf_adds(&b, c ? c : "");
        if (h && *h)
            vbuf_addf(&b, ", %s", h);
        ret = cJSON_CreateString(vbuf_str(&b));
    } else if (!strcmp(path, "#service-externalip")) {
        const cJSON *ips = cJSON_GetObjectItemCaseSensitive(
                        cJSON_GetObjectItemCaseSensitive(obj, "spec"), "externalIPs"),
                    *e;
        cJSON_ArrayForEach(e, ips) if (cJSON_IsString(e))
            vbuf_addf(&b, "%s%s", b.len ? "," : "", e->valuestring);
        ret = cJSON_CreateString(b.len ? vbuf_str(&b) : "<none>");
    } else if (!strcmp(path, "#service-ports") || !strcmp(path, "#slice-ports")) {
        const cJSON *ports = path[1] == 's' && path[2] == 'e'
                                 ? cJSON_GetObjectItemCaseSensitive(
                                       cJSON_GetObjectItemCaseSensitive(obj, "spec"), "ports")
                                 : cJSON_GetObjectItemCaseSensitive(obj, "ports");
        const cJSON *p;
        cJSON_ArrayForEach(p, ports)
        {
            const cJSON *port = cJSON_GetObjectItemCaseSensitive(p, "port");
            const cJSON *np = cJSON_GetObjectItemCaseSensitive(p, "nodePort");
            const char *proto = sget(p, "protocol");
            if (b.len)
                vbuf_add(&b, ",", 1);
            if (path[2] == 'l') { /* slice: just the numbers */
                vbuf_addf(&b, "%d", port ? port->valueint : 0);
                continue;
            }
            vbuf_addf(&b, "%d", port ? port->valueint : 0);
            if (cJSON_IsNumber(np))
                vbuf_addf(&b, ":%d", np->valueint);
            vbuf_addf(&b, "/%s", proto ? proto : "TCP");
        }
        ret = cJSON_CreateString(b.len ? vbuf_str(&b) : "<none>");
    } else if (!strncmp(path, "#selector:.", 11)) {
        const cJSON *sel = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(obj, "spec"), "selector");
        int n = cJSON_GetArraySize(sel), i = 0;
        const cJSON **keys = n > 0 ? calloc((size_t)n, sizeof(*keys)) : NULL, *k;
        if (keys) {
            cJSON_ArrayForEach(k, sel) keys[i++] = k;
            qsort(keys, (size_t)n, sizeof(*keys), key_cmp);
            for (i = 0; i < n; i++)
                vbuf_addf(&b, "%s%s=%s", i ? "," : "", keys[i]->string,
                          cJSON_IsString(keys[i]) ? keys[i]->valuestring : "");
            free(keys);
        }
        ret = cJSON_CreateString(b.len ? vbuf_str(&b) : "<none>");
    } else if (!strcmp(path, "#endpoints") || !strcmp(path, "#slice-endpoints")) {
        int count = 0, shown = 0;
        if (path[1] == 'e') {
            const cJSON *ss, *a, *p;
            cJSON_ArrayForEach(ss, cJSON_GetObjectItemCaseSensitive(obj, "subsets"))
            {
                cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(ss, "addresses"))
                {
                    const cJSON *ports = cJSON_GetObjectItemCaseSensitive(ss, "ports");
                    const char *ip = sget(a, "ip");
                    if (!cJSON_GetArraySize(ports)) {
                        if (shown++ < 3)
                            vbuf_addf(&b, "%s%s", b.len ? "," : "", ip ? ip : "");
                        count++;
                    }
                    cJSON_ArrayForEach(p, ports)
                    {
                        const cJSON *port = cJSON_GetObjectItemCaseSensitive(p, "port");
                        if (shown++ < 3)
                            vbuf_addf(&b, "%s%s:%d", b.len ? "," : "", ip ? ip : "",
                                      port ? port->valueint : 0);
                        count++;
                    }
                }
            }
        } else {
            const cJSON *ep, *a;
            cJSON_ArrayForEach(ep, cJSON_GetObjectItemCaseSensitive(obj, "endpoints"))
            {
                cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(ep, "addresses"))
                {
                    if (shown++ < 3 && cJSON_IsString(a))
                        vbuf_addf(&b, "%s%s", b.len ? "," : "", a->valuestring);
                    count++;
                }
            }
        }
        if (count > 3)
            vbuf_addf(&b, " + %d more...", count - 3);
        ret = cJSON_CreateString(count ? vbuf_str(&b) : "<none>");
    }
    vbuf_free(&b);
    return ret ? ret : cJSON_CreateNull();
}

/* The JSONPath printer's text for a value (string columns). */
static cJSON *string_cell(const cJSON *v)
{
    long long i;
    struct vbuf b;
    cJSON *ret;
    if (cJSON_IsString(v))
        return cJSON_CreateString(v->valuestring);
    vbuf_init(&b, 1 << 20);
    if (cJSON_IsBool(v)) {
        vbuf_adds(&b, cJSON_IsTrue(v) ? "true" : "false");
    } else if (as_json_is_int(v, &i)) {
        vbuf_addf(&b, "%lld", i);
    } else if (cJSON_IsNumber(v)) {
        as_go_float(&b, v->valuedouble);
    } else if (cJSON_IsNull(v)) {
        vbuf_adds(&b, "null");
    } else {
        char *j = cJSON_PrintUnformatted(v); /* json.Marshal of maps and slices */
        vbuf_adds(&b, j ? j : "");
        cJSON_free(j);
    }
    ret = vbuf_error(&b) ? NULL : cJSON_CreateString(vbuf_str(&b));
    vbuf_free(&b);
    return ret;
}

/* tableconvertor.cellForJSONValue */
static cJSON *typed_cell(const char *type, const cJSON *v, long long now)
{
    long long i;
    if (!v || cJSON_IsNull(v))
        return cJSON_CreateNull();
    if (!strcmp(type, "string"))
        return string_cell(v);
    if (!strcmp(type, "integer") && cJSON_IsNumber(v)) {
        if (as_json_is_int(v, &i))
            return cJSON_CreateNumber((double)i);
        return cJSON_CreateNumber((double)(long long)v->valuedouble);
    }
    if (!strcmp(type, "number") && cJSON_IsNumber(v))
        return cJSON_CreateNumber(v->valuedouble);
    if (!strcmp(type, "boolean") && cJSON_IsBool(v))
        return cJSON_CreateBool(cJSON_IsTrue(v));
    if (!strcmp(type, "date") && cJSON_IsString(v)) {
        if (!*v->valuestring || !strcmp(v->valuestring, "null"))
            return cJSON_CreateString("<unknown>");
        return human_since(v->valuestring, now);
    }
    return cJSON_CreateNull();
}

static const char *col_str(const cJSON *c, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static cJSON *col_def(const char *name, const char *type, const char *format, const char *desc,
                      int priority)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "name", name);
    cJSON_AddStringToObject(d, "type", type);
    cJSON_AddStringToObject(d, "format", format);
    cJSON_AddStringToObject(d, "description", desc);
    cJSON_AddNumberToObject(d, "priority", priority);
    return d;
}

static cJSON *row_object(const cJSON *item, enum as_include include)
{
    cJSON *o, *m;
    if (include == AS_INCLUDE_OBJECT)
        return cJSON_Duplicate(item, 1);
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", "PartialObjectMetadata");
    cJSON_AddStringToObject(o, "apiVersion", "meta.k8s.io/v1");
    m = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(item, "metadata"), 1);
    cJSON_AddItemToObject(o, "metadata", m ? m : cJSON_CreateObject());
    return o;
}

vmop_rc as_table_build(const cJSON *cols, const cJSON *items, enum as_include include,
                       int with_headers, long long now, cJSON **ret_table, struct vmop_err *err)
{
    cJSON *t = cJSON_CreateObject(), *defs, *rows, *age = NULL;
    const cJSON *c, *item;
    int no_name = 0;
    char *probe;

    if (!t)
        goto nomem;
    if (!cJSON_IsArray(cols) || !cols->child) {
        if (as_table_builtin_columns(NULL, NULL, &age, err) != VMOP_OK)
            goto nomem;
        cols = age;
    }
    if (!strcmp(col_str(cols->child, "jsonPath"), "#no-name"))
        no_name = 1;
    cJSON_AddStringToObject(t, "kind", "Table");
    cJSON_AddStringToObject(t, "apiVersion", "meta.k8s.io/v1");
    cJSON_AddObjectToObject(t, "metadata");
    if (with_headers) {
        defs = cJSON_AddArrayToObject(t, "columnDefinitions");
        if (!no_name)
            cJSON_AddItemToArray(
                defs, col_def("Name", "string", "name",
                              "Name must be unique within a namespace. Is required when creating "
                              "resources, although some resources may allow a client to request "
                              "the generation of an appropriate name automatically. Name is "
                              "primarily intended for creation idempotence and configuration "
                              "definition. Cannot be updated. More info: "
                              "https://kubernetes.io/docs/concepts/overview/working-with-objects/"
                              "names#names",
                              0));
        cJSON_ArrayForEach(c, cols)
        {
            char desc[700];
            const char *jp = col_str(c, "jsonPath");
            const cJSON *prio = cJSON_GetObjectItemCaseSensitive(c, "priority");
            if (!strcmp(jp, "#no-name"))
                continue;
            if (*col_str(c, "description"))
                snprintf(desc, sizeof(desc), "%s", col_str(c, "description"));
            else
                snprintf(desc, sizeof(desc),
                         "Custom resource definition column (in JSONPath format): %s", jp);
            cJSON_AddItemToArray(defs, col_def(col_str(c, "name"), col_str(c, "type"),
                                               col_str(c, "format"), desc,
                                               cJSON_IsNumber(prio) ? prio->valueint : 0));
        }
    } else {
        cJSON_AddNullToObject(t, "columnDefinitions");
    }
    rows = cJSON_AddArrayToObject(t, "rows");
    cJSON_ArrayForEach(item, items)
    {
        cJSON *row = cJSON_CreateObject(), *cells;
        if (!row)
            goto nomem;
        cJSON_AddItemToArray(rows, row);
        cells = cJSON_AddArrayToObject(row, "cells");
        if (!no_name) {
            const char *n = sget(item, "metadata.name");
            cJSON_AddItemToArray(cells, cJSON_CreateString(n ? n : ""));
        }
        cJSON_ArrayForEach(c, cols)
        {
            const char *jp = col_str(c, "jsonPath");
            const cJSON *m = NULL;
            size_t nm = 0;
            struct vmop_err ignored = {0};
            if (!strcmp(jp, "#no-name"))
                continue;
            if (jp[0] == '#') {
                cJSON_AddItemToArray(cells, private_cell(jp, item, now));
                continue;
            }
            if (as_jsonpath_eval(jp, item, &m, 1, &nm, &ignored) != VMOP_OK || nm == 0) {
                cJSON_AddItemToArray(cells, cJSON_CreateNull());
                continue;
            }
            cJSON_AddItemToArray(cells, typed_cell(col_str(c, "type"), m, now));
        }
        if (include != AS_INCLUDE_NONE)
            cJSON_AddItemToObject(row, "object", row_object(item, include));
    }
    /* cJSON's adders fail silently on NOMEM: a table that does not print is incomplete. */
    probe = cJSON_PrintUnformatted(t);
    if (!probe)
        goto nomem;
    cJSON_free(probe);
    cJSON_Delete(age);
    *ret_table = t;
    return VMOP_OK;
nomem:
    cJSON_Delete(age);
    cJSON_Delete(t);
    return vmop_fail(err, VMOP_E_NOMEM, "out of memory building a Table");
}
