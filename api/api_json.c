/* api_json.c: tolerant typed cJSON access for the api/ parsers (see api_json.h). */
#include "api_json.h"

#include <stdio.h>

const char *api_path(char *buf, size_t n, const char *parent, const char *key)
{
    snprintf(buf, n, "%s%s%s", parent, parent[0] ? "." : "", key);
    return buf;
}

const char *api_path_index(char *buf, size_t n, const char *parent, size_t i)
{
    snprintf(buf, n, "%s[%zu]", parent, i);
    return buf;
}

/* True for a double holding an exact integer within +-2^53. */
static int is_integral(double d)
{
    return d > -9007199254740992.0 && d < 9007199254740992.0 && (double)(long long)d == d;
}

static const char *json_type_name(const cJSON *v)
{
    if (cJSON_IsString(v))
        return "string";
    if (cJSON_IsNumber(v))
        return "number";
    if (cJSON_IsBool(v))
        return "boolean";
    if (cJSON_IsArray(v))
        return "array";
    if (cJSON_IsObject(v))
        return "object";
    return "null";
}

/* The member, or NULL when absent/null; records a type error when present with another type. */
static const cJSON *member(const cJSON *obj, const char *key, const char *parent,
                           struct api_ferrs *fe, cJSON_bool (*is)(const cJSON *), const char *want)
{
    const cJSON *v;
    char path[API_FERR_PATH_MAX];

    if (!cJSON_IsObject(obj))
        return NULL;
    v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v))
        return NULL;
    if (!is(v)) {
        if (fe)
            api_ferr_add(fe, API_FERR_TYPE, api_path(path, sizeof(path), parent, key),
                         "\"%s\": must be of type %s", json_type_name(v), want);
        return NULL;
    }
    return v;
}

const char *api_json_str(const cJSON *obj, const char *key, const char *parent,
                         struct api_ferrs *fe)
{
    const cJSON *v = member(obj, key, parent, fe, cJSON_IsString, "string");
    return v ? v->valuestring : NULL;
}

int api_json_bool(const cJSON *obj, const char *key, const char *parent, struct api_ferrs *fe,
                  int *ret)
{
    const cJSON *v = member(obj, key, parent, fe, cJSON_IsBool, "boolean");
    if (!v)
        return 0;
    *ret = cJSON_IsTrue(v);
    return 1;
}

int api_json_int(const cJSON *obj, const char *key, const char *parent, struct api_ferrs *fe,
                 long long *ret)
{
    char path[API_FERR_PATH_MAX];
    const cJSON *v = member(obj, key, parent, fe, cJSON_IsNumber, "integer");
    if (!v)
        return 0;
    if (!is_integral(v->valuedouble)) {
        if (fe)
            api_ferr_add(fe, API_FERR_TYPE, api_path(path, sizeof(path), parent, key),
                         "\"number\": must be of type integer");
        return 0;
    }
    *ret = (long long)v->valuedouble;
    return 1;
}

const cJSON *api_json_obj(const cJSON *obj, const char *key, const char *parent,
                          struct api_ferrs *fe)
{
    return member(obj, key, parent, fe, cJSON_IsObject, "object");
}

const cJSON *api_json_arr(const cJSON *obj, const char *key, const char *parent,
                          struct api_ferrs *fe)
{
    return member(obj, key, parent, fe, cJSON_IsArray, "array");
}

static cJSON_bool is_str_or_num(const cJSON *v)
{
    return cJSON_IsString(v) || cJSON_IsNumber(v);
}

int api_json_qty_text(const cJSON *obj, const char *key, const char *parent, struct api_ferrs *fe,
                      char *buf, size_t n)
{
    const cJSON *v = member(obj, key, parent, fe, is_str_or_num, "string or integer");
    if (!v)
        return 0;
    if (cJSON_IsString(v))
        snprintf(buf, n, "%s", v->valuestring);
    else if (is_integral(v->valuedouble))
        snprintf(buf, n, "%lld", (long long)v->valuedouble);
    else
        snprintf(buf, n, "%.17g", v->valuedouble);
    return 1;
}

cJSON *api_json_ensure_obj(cJSON *obj, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsObject(v))
        return v;
    v = cJSON_CreateObject();
    if (!v)
        return NULL;
    if (cJSON_GetObjectItemCaseSensitive(obj, key)) {
        if (!cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v)) {
            cJSON_Delete(v);
            return NULL;
        }
    } else if (!cJSON_AddItemToObject(obj, key, v)) {
        cJSON_Delete(v);
        return NULL;
    }
    return v;
}

vmop_rc api_json_set_str(cJSON *obj, const char *key, const char *val, struct vmop_err *err)
{
    cJSON *v;
    if (!val) {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
        return VMOP_OK;
    }
    v = cJSON_CreateString(val);
    if (!v)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory setting '%s'", key);
    if (cJSON_GetObjectItemCaseSensitive(obj, key)) {
        if (!cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v)) {
            cJSON_Delete(v);
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory setting '%s'", key);
        }
    } else if (!cJSON_AddItemToObject(obj, key, v)) {
        cJSON_Delete(v);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory setting '%s'", key);
    }
    return VMOP_OK;
}

const cJSON *api_jget(const cJSON *o, const char *key)
{
    return cJSON_IsObject(o) && key ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

const cJSON *api_jpath(const cJSON *o, const char *a, const char *b, const char *c, const char *d)
{
    const char *keys[] = {a, b, c, d};
    for (size_t i = 0; i < 4 && keys[i] && o; i++)
        o = api_jget(o, keys[i]);
    return o;
}

const char *api_jstr(const cJSON *o, const char *key)
{
    const cJSON *v = key ? api_jget(o, key) : o;
    return cJSON_IsString(v) ? v->valuestring : NULL;
}
