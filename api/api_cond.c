/* api_cond.c: condition lists with VM Operator semantics (see api_cond.h). */
#include "api_cond.h"

#include <stdio.h>
#include <string.h>

static const char *status_str(enum api_cond_status s)
{
    return s == API_COND_TRUE ? "True" : s == API_COND_FALSE ? "False" : "Unknown";
}

void api_cond_format_time(time_t t, char *buf, size_t n)
{
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, n, "1970-01-01T00:00:00Z");
}

const cJSON *api_cond_get(const cJSON *conds, const char *type)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, conds)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
        if (cJSON_IsString(t) && strcmp(t->valuestring, type) == 0)
            return c;
    }
    return NULL;
}

int api_cond_is_true(const cJSON *conds, const char *type)
{
    const cJSON *c = api_cond_get(conds, type);
    const cJSON *s = c ? cJSON_GetObjectItemCaseSensitive(c, "status") : NULL;
    return cJSON_IsString(s) && strcmp(s->valuestring, "True") == 0;
}

static const char *str_member(const cJSON *c, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* Ready sorts before everything; then plain strcmp on type. */
static int cond_less(const cJSON *a, const cJSON *b)
{
    const char *ta = str_member(a, "type"), *tb = str_member(b, "type");
    int ra = strcmp(ta, "Ready") == 0, rb = strcmp(tb, "Ready") == 0;
    if (ra != rb)
        return ra;
    return strcmp(ta, tb) < 0;
}

void api_cond_sort(cJSON *conds)
{
    /* insertion sort over detached elements: lists are short (<= API_COND_MAX) */
    cJSON *items[API_COND_MAX * 2];
    int n = 0;
    while (cJSON_GetArraySize(conds) > 0 && n < API_COND_MAX * 2)
        items[n++] = cJSON_DetachItemFromArray(conds, 0);
    for (int i = 1; i < n; i++) {
        cJSON *x = items[i];
        int j = i - 1;
        while (j >= 0 && cond_less(x, items[j])) {
            items[j + 1] = items[j];
            j--;
        }
        items[j + 1] = x;
    }
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(conds, items[i]);
}

static vmop_rc set_member(cJSON *obj, const char *key, cJSON *v, struct vmop_err *err)
{
    if (!v)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory setting condition %s", key);
    if (cJSON_GetObjectItemCaseSensitive(obj, key)) {
        if (!cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v))
            goto fail;
    } else if (!cJSON_AddItemToObject(obj, key, v)) {
        goto fail;
    }
    return VMOP_OK;
fail:
    cJSON_Delete(v);
    return vmop_fail(err, VMOP_E_NOMEM, "out of memory setting condition %s", key);
}

vmop_rc api_cond_set(cJSON *conds, const char *type, enum api_cond_status status,
                     const char *reason, const char *message, long long generation, time_t now,
                     int *ret_changed, struct vmop_err *err)
{
    char msg[API_COND_MSG_MAX], ts[32];
    const char *st = status_str(status);
    cJSON *c = (cJSON *)api_cond_get(conds, type);
    int changed = 0, moved;
    vmop_rc rc = VMOP_OK;

    if (!cJSON_IsArray(conds) || !type || !*type)
        return vmop_fail(err, VMOP_E_INVALID, "condition list or type missing");
    if (!reason || !*reason)
        reason = st;
    snprintf(msg, sizeof(msg), "%s", message ? message : "");
    if (!c) {
        if (cJSON_GetArraySize(conds) >= API_COND_MAX)
            return vmop_fail(err, VMOP_E_TOOBIG, "more than %d conditions", API_COND_MAX);
        c = cJSON_CreateObject();
        if (!c || !cJSON_AddItemToArray(conds, c)) {
            cJSON_Delete(c);
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory adding condition %s", type);
        }
        if ((rc = set_member(c, "type", cJSON_CreateString(type), err)))
            return rc;
        changed = 1;
    }
    moved = changed || strcmp(str_member(c, "status"), st) != 0 ||
            strcmp(str_member(c, "reason"), reason) != 0 ||
            strcmp(str_member(c, "message"), msg) != 0;
    if (moved) {
        api_cond_format_time(now, ts, sizeof(ts));
        if ((rc = set_member(c, "status", cJSON_CreateString(st), err)) ||
            (rc = set_member(c, "reason", cJSON_CreateString(reason), err)) ||
            (rc = set_member(c, "message", cJSON_CreateString(msg), err)) ||
            (rc = set_member(c, "lastTransitionTime", cJSON_CreateString(ts), err)))
            return rc;
        changed = 1;
    }
    if (generation >= 0) {
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(c, "observedGeneration");
        if (!cJSON_IsNumber(g) || g->valuedouble != (double)generation) {
            if ((rc = set_member(c, "observedGeneration", cJSON_CreateNumber((double)generation),
                                 err)))
                return rc;
            changed = 1;
        }
    }
    if (changed)
        api_cond_sort(conds);
    if (ret_changed)
        *ret_changed = changed;
    return VMOP_OK;
}

vmop_rc api_cond_mark_true(cJSON *conds, const char *type, long long generation, time_t now,
                           int *ret_changed, struct vmop_err *err)
{
    return api_cond_set(conds, type, API_COND_TRUE, "True", "", generation, now, ret_changed, err);
}

int api_cond_delete(cJSON *conds, const char *type)
{
    int i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, conds)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
        if (cJSON_IsString(t) && strcmp(t->valuestring, type) == 0) {
            cJSON_DeleteItemFromArray(conds, i);
            return 1;
        }
        i++;
    }
    return 0;
}
