/* as_fallback.c: stand-ins for apischema's functions when apischema_lib is not built: no schema
 * checks, no OpenAPI (404), no Tables (plain lists; kubectl then prints NAME/AGE itself). */
#include "ta_as.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

vmop_rc as_crd_check(const cJSON *crd, cJSON *causes, struct vmop_err *err)
{
    return VMOP_OK;
}

vmop_rc as_schema_prune(const cJSON *schema, cJSON *obj, cJSON *unknown, struct vmop_err *err)
{
    return VMOP_OK;
}

vmop_rc as_schema_default(const cJSON *schema, cJSON *obj, struct vmop_err *err)
{
    return VMOP_OK;
}

vmop_rc as_schema_validate(const cJSON *schema, const cJSON *obj, const cJSON *old, cJSON *causes,
                           struct vmop_err *err)
{
    return VMOP_OK;
}

char *as_invalid_message(const char *kind, const char *group, const char *name, const cJSON *causes)
{
    const cJSON *c;
    size_t n = 256;
    char *s, *p;
    cJSON_ArrayForEach(c, causes)
    {
        const cJSON *f = cJSON_GetObjectItem(c, "field"), *m = cJSON_GetObjectItem(c, "message");
        n += (cJSON_IsString(f) ? strlen(f->valuestring) : 0) +
             (cJSON_IsString(m) ? strlen(m->valuestring) : 0) + 4;
    }
    n += strlen(kind) + strlen(group) + strlen(name);
    s = malloc(n);
    if (!s)
        return NULL;
    p = s + snprintf(s, n, "%s%s%s \"%s\" is invalid: %s", kind, group[0] ? "." : "", group, name,
                     cJSON_GetArraySize(causes) > 1 ? "[" : "");
    cJSON_ArrayForEach(c, causes)
    {
        const cJSON *f = cJSON_GetObjectItem(c, "field"), *m = cJSON_GetObjectItem(c, "message");
        p += snprintf(p, n - (size_t)(p - s), "%s%s: %s", c == causes->child ? "" : ", ",
                      cJSON_IsString(f) ? f->valuestring : "",
                      cJSON_IsString(m) ? m->valuestring : "");
    }
    if (cJSON_GetArraySize(causes) > 1)
        snprintf(p, n - (size_t)(p - s), "]");
    return s;
}

vmop_rc as_openapi_gv_doc(const char *group, const char *version, const cJSON *resources,
                          cJSON **ret_doc, struct vmop_err *err)
{
    return vmop_fail(err, VMOP_E_UNSUPPORTED, "OpenAPI documents need apischema");
}

vmop_rc as_table_builtin_columns(const char *group, const char *plural, cJSON **ret_cols,
                                 struct vmop_err *err)
{
    return vmop_fail(err, VMOP_E_UNSUPPORTED, "Tables need apischema");
}

vmop_rc as_table_build(const cJSON *cols, const cJSON *items, enum as_include include,
                       int with_headers, long long now, cJSON **ret_table, struct vmop_err *err)
{
    return vmop_fail(err, VMOP_E_UNSUPPORTED, "Tables need apischema");
}

void as_human_duration(long long seconds, char *buf, size_t size)
{
    snprintf(buf, size, "%llds", seconds);
}
