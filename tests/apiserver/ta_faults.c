/* ta_faults.c: fault injection for reliability tests of kube-testapi clients.
 * Control endpoint /_testapi/faults (and the --fault option, same JSON):
 *   POST {"dropWatches":true}                      end every open watch stream now (no final chunk)
 *   POST {"latencyMs":50}                          delay every later request by 50 ms
 *   POST {"rules":[{"method":"PUT","path":"^/apis/.*","code":409,"count":2,"latencyMs":0}]}
 *        the next `count` requests (count < 0: all) whose method and path (regex, POSIX ERE, on the
 *        path without query) match get `code` with a Status (409 Conflict, 429 TooManyRequests +
 *        Retry-After: 1, 500 InternalError, 503 ServiceUnavailable, ...), or only a delay (code 0).
 *   GET  -> {"rules":[...remaining...],"latencyMs":N,"drops":N}
 *   DELETE -> clears rules and latency.
 * The control endpoint itself is never subject to faults. */
#include "ta_http.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Lock held. */
static vmop_rc apply_spec(struct ta_server *s, const cJSON *spec, struct vmop_err *err)
{
    struct ta_store *st = &s->st;
    const cJSON *rules = cJSON_GetObjectItemCaseSensitive(spec, "rules"), *r;
    const cJSON *lat = cJSON_GetObjectItemCaseSensitive(spec, "latencyMs");
    if (!cJSON_IsObject(spec))
        return ta_fail(err, 400, "BadRequest", "a fault spec must be a JSON object");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "dropWatches"))) {
        st->drop_gen++;
        pthread_cond_broadcast(&st->changed);
    }
    if (cJSON_IsNumber(lat))
        st->latency_ms = lat->valueint < 0 ? 0 : lat->valueint > 60000 ? 60000 : lat->valueint;
    cJSON_ArrayForEach(r, rules)
    {
        struct ta_fault_rule *fr;
        const char *m = ta_jstr(r, "method"), *p = ta_jstr(r, "path");
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(r, "code");
        const cJSON *count = cJSON_GetObjectItemCaseSensitive(r, "count");
        const cJSON *rl = cJSON_GetObjectItemCaseSensitive(r, "latencyMs");
        if (st->n_rules == TA_MAX_FAULT_RULES)
            return ta_fail(err, 400, "BadRequest", "more than %d fault rules", TA_MAX_FAULT_RULES);
        fr = &st->rules[st->n_rules];
        memset(fr, 0, sizeof(*fr));
        fr->method = strdup(m ? m : "");
        fr->pattern = strdup(p ? p : "");
        fr->regex = calloc(1, sizeof(regex_t));
        if (!fr->method || !fr->pattern || !fr->regex) {
            free(fr->method);
            free(fr->pattern);
            free(fr->regex);
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        }
        if (regcomp(fr->regex, fr->pattern, REG_EXTENDED | REG_NOSUB) != 0) {
            free(fr->method);
            free(fr->pattern);
            free(fr->regex);
            return ta_fail(err, 400, "BadRequest", "fault rule path is not a valid regex");
        }
        fr->code = cJSON_IsNumber(code) ? code->valueint : 500;
        fr->remaining = cJSON_IsNumber(count) ? count->valueint : 1;
        fr->latency_ms = cJSON_IsNumber(rl) ? rl->valueint : 0;
        st->n_rules++;
    }
    return VMOP_OK;
}

static void clear_rule(struct ta_store *st, size_t i)
{
    struct ta_fault_rule *fr = &st->rules[i];
    free(fr->method);
    free(fr->pattern);
    regfree(fr->regex);
    free(fr->regex);
    memmove(st->rules + i, st->rules + i + 1, (st->n_rules - i - 1) * sizeof(*st->rules));
    st->n_rules--;
}

vmop_rc ta_fault_add_spec(struct ta_server *s, const char *spec, struct vmop_err *err)
{
    cJSON *j = cJSON_Parse(spec);
    vmop_rc rc;
    if (!j)
        return vmop_fail(err, VMOP_E_INVALID, "--fault: not valid JSON");
    pthread_mutex_lock(&s->st.lock);
    rc = apply_spec(s, j, err);
    pthread_mutex_unlock(&s->st.lock);
    cJSON_Delete(j);
    return rc;
}

vmop_rc ta_handle_faults(struct ta_req *rq, struct vmop_err *err)
{
    struct ta_store *st = &rq->s->st;
    vmop_rc rc = VMOP_OK;
    cJSON *doc;
    size_t i;
    if (strcmp(rq->method, "POST") == 0 || strcmp(rq->method, "PUT") == 0) {
        cJSON *j = cJSON_ParseWithLength(vbuf_str(&rq->body), rq->body.len);
        if (!j)
            return ta_fail(err, 400, "BadRequest", "the fault spec is not valid JSON");
        pthread_mutex_lock(&st->lock);
        rc = apply_spec(rq->s, j, err);
        pthread_mutex_unlock(&st->lock);
        cJSON_Delete(j);
        if (rc)
            return rc;
    } else if (strcmp(rq->method, "DELETE") == 0) {
        pthread_mutex_lock(&st->lock);
        while (st->n_rules)
            clear_rule(st, st->n_rules - 1);
        st->latency_ms = 0;
        pthread_mutex_unlock(&st->lock);
    } else if (strcmp(rq->method, "GET") != 0) {
        return ta_fail(err, 405, "MethodNotAllowed", "use GET, POST or DELETE");
    }
    doc = cJSON_CreateObject();
    if (!doc)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    pthread_mutex_lock(&st->lock);
    {
        cJSON *arr = cJSON_AddArrayToObject(doc, "rules");
        for (i = 0; i < st->n_rules; i++) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "method", st->rules[i].method);
            cJSON_AddStringToObject(r, "path", st->rules[i].pattern);
            cJSON_AddNumberToObject(r, "code", st->rules[i].code);
            cJSON_AddNumberToObject(r, "count", st->rules[i].remaining);
            cJSON_AddNumberToObject(r, "latencyMs", st->rules[i].latency_ms);
            cJSON_AddItemToArray(arr, r);
        }
        cJSON_AddNumberToObject(doc, "latencyMs", st->latency_ms);
        cJSON_AddNumberToObject(doc, "drops", st->drop_gen);
    }
    pthread_mutex_unlock(&st->lock);
    ta_reply_json(rq, 200, doc);
    return VMOP_OK;
}

static const char *fault_reason(int code)
{
    switch (code) {
    case 409:
        return "Conflict";
    case 429:
        return "TooManyRequests";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    case 404:
        return "NotFound";
    case 410:
        return "Expired";
    default:
        return "InternalError";
    }
}

int ta_faults_apply(struct ta_req *rq)
{
    struct ta_store *st = &rq->s->st;
    int latency, code = 0, rule_latency = 0;
    size_t i;
    pthread_mutex_lock(&st->lock);
    latency = st->latency_ms;
    for (i = 0; i < st->n_rules; i++) {
        struct ta_fault_rule *fr = &st->rules[i];
        if (fr->method[0] && strcmp(fr->method, rq->method) != 0)
            continue;
        if (regexec(fr->regex, rq->path, 0, NULL, 0) != 0)
            continue;
        code = fr->code;
        rule_latency = fr->latency_ms;
        if (fr->remaining > 0 && --fr->remaining == 0)
            clear_rule(st, i);
        break;
    }
    pthread_mutex_unlock(&st->lock);
    if (latency + rule_latency > 0)
        sleep_ms(latency + rule_latency);
    if (code <= 0)
        return 0;
    if (code == 429)
        rq->retry_after = 1;
    ta_reply_text(rq, code,
                  ta_status_text(code, fault_reason(code), "injected fault (kube-testapi)", NULL,
                                 NULL, NULL, NULL));
    return 1;
}
