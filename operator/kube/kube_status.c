/* kube_status.c: parsing Kubernetes Status error bodies into struct vmop_err and struct
 * kube_status. Pure (no I/O). Bodies are untrusted: every string is truncated to its field.
 */
#include "kube_status.h"

#include <stdio.h>
#include <string.h>

#include "kube_util.h"

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
    /* keep messages on one line */
    for (char *c = dst; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
}

vmop_rc kube_status_from_json(const cJSON *obj, struct kube_status *st)
{
    const char *kind = kube_json_str(obj, "kind");
    if (!cJSON_IsObject(obj) || !kind || strcmp(kind, "Status") != 0)
        return VMOP_E_PROTO;
    memset(st, 0, sizeof(*st));
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
    if (cJSON_IsNumber(code) && code->valuedouble >= 0 && code->valuedouble < 1000)
        st->code = (int)code->valuedouble;
    copy_str(st->status, sizeof(st->status), kube_json_str(obj, "status"));
    copy_str(st->reason, sizeof(st->reason), kube_json_str(obj, "reason"));
    copy_str(st->message, sizeof(st->message), kube_json_str(obj, "message"));
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(obj, "details");
    copy_str(st->name, sizeof(st->name), kube_json_str(d, "name"));
    copy_str(st->group, sizeof(st->group), kube_json_str(d, "group"));
    copy_str(st->kind, sizeof(st->kind), kube_json_str(d, "kind"));
    const cJSON *ra = cJSON_GetObjectItemCaseSensitive(d, "retryAfterSeconds");
    if (cJSON_IsNumber(ra) && ra->valuedouble > 0 && ra->valuedouble < 86400)
        st->retry_after_seconds = (int)ra->valuedouble;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(d, "causes"))
    {
        st->n_causes_total++;
        if (st->n_causes == KUBE_MAX_CAUSES || !cJSON_IsObject(c))
            continue;
        struct kube_status_cause *kc = &st->causes[st->n_causes++];
        copy_str(kc->reason, sizeof(kc->reason), kube_json_str(c, "reason"));
        copy_str(kc->field, sizeof(kc->field), kube_json_str(c, "field"));
        copy_str(kc->message, sizeof(kc->message), kube_json_str(c, "message"));
    }
    return VMOP_OK;
}

vmop_rc kube_status_rc(int http_status, const char *reason)
{
    switch (http_status) {
    case 404:
        return VMOP_E_NOT_FOUND;
    case 409:
        return reason && !strcmp(reason, "AlreadyExists") ? VMOP_E_EXISTS : VMOP_E_CONFLICT;
    case 410:
        return VMOP_E_GONE;
    case 429:
        return VMOP_E_RATELIMIT;
    case 401:
        return VMOP_E_AUTH;
    default:
        return VMOP_E_KUBE;
    }
}

vmop_rc kube_status_fail(int http_status, const char *body, size_t len, const char *what,
                         struct kube_status *ret_st, struct vmop_err *err)
{
    struct kube_status st;
    cJSON *obj = body && len ? cJSON_ParseWithLength(body, len) : NULL;
    vmop_rc rc;
    if (obj && kube_status_from_json(obj, &st) == VMOP_OK) {
        if (!st.code)
            st.code = http_status;
        /* the HTTP status decides (a watch ERROR event passes Status.code as http_status) */
        rc = kube_status_rc(http_status ? http_status : st.code, st.reason);
        vmop_fail_fault(err, rc, st.reason, http_status ? http_status : st.code, "%s",
                        st.message[0] ? st.message : "Kubernetes API error without a message");
    } else {
        memset(&st, 0, sizeof(st));
        st.code = http_status;
        snprintf(st.status, sizeof(st.status), "Failure");
        rc = http_status == 404 || http_status == 409 || http_status == 410 || http_status == 429 ||
                     http_status == 401
                 ? kube_status_rc(http_status, NULL)
                 : VMOP_E_HTTP;
        snprintf(st.message, sizeof(st.message), "HTTP %d without a Status body", http_status);
        vmop_fail_fault(err, rc, "", http_status, "%s: HTTP %d without a Status body",
                        what ? what : "request", http_status);
    }
    cJSON_Delete(obj);
    if (ret_st)
        *ret_st = st;
    return rc;
}
