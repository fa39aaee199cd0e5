/* probe.c: readiness evaluation (pure) and the poll()-based TCP prober (one thread, bounded
 * concurrency). See probe.h.
 *
 * guestInfo values are Go (RE2) regular expressions, as in VM Operator, evaluated with PCRE2
 * (which accepts RE2's syntax: \d \w \s, (?i) (?s) (?m) (?U), lazy repeats, (?P<name>...),
 * \pL / \p{Greek}, [[:alpha:]]) the way Go's regexp.MatchString does: an unanchored search, UTF-8,
 * `$` only at the very end, `.` not matching a newline. An invalid UTF-8 byte in the value is no
 * error but matches nothing, not even `.` (Go reads it as U+FFFD). PCRE2 also accepts what RE2
 * rejects (backreferences, lookaround); such a pattern is evaluated rather than refused. Each
 * pattern is compiled, matched and freed per evaluation; nothing is cached. Work is bounded, so a
 * hostile pattern cannot hang a worker: a match takes at most RE_MATCH_LIMIT (1,000,000) steps of
 * PCRE2's backtracking loop, about 15 ms, RE_DEPTH_LIMIT (100,000) nested backtracking levels and
 * RE_HEAP_LIMIT_KIB (8 MiB) of memory; a pattern's own (*LIMIT_...) can only lower them. A match
 * that reaches a limit makes the probe False ("... reached the match limit"), where Go would have
 * answered: for example `^(a|b)*$` on a value of over about 30,000 characters, or nested repeats
 * like `^(a+)+$` that do not match.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "api_json.h"
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <pcre2.h>

#include "vmop_clock.h"
#include "vmop_map.h"

#define GUESTINFO_KEY_MAX 256
#define WAIT_MAX_MS       1000
#define RE_MATCH_LIMIT    1000000 /* pcre2_set_match_limit: steps per match (about 15 ms) */
#define RE_DEPTH_LIMIT    100000  /* pcre2_set_depth_limit: nested backtracking levels */
#define RE_HEAP_LIMIT_KIB 8192    /* pcre2_set_heap_limit: backtracking memory per match, KiB */

/* ---- evaluation ---- */

static const cJSON *probe_of(const struct api_vm *vm)
{
    const cJSON *p = api_jget(api_jget(vm->obj, "spec"), "readinessProbe");
    return cJSON_IsObject(p) ? p : NULL;
}

static void set_result(struct probe_result *r, enum api_cond_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_result(struct probe_result *r, enum api_cond_status st, const char *fmt, ...)
{
    va_list ap;
    r->status = st;
    r->reason = st == API_COND_TRUE ? "Ready" : st == API_COND_FALSE ? "NotReady" : "Unknown";
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof(r->message), fmt, ap);
    va_end(ap);
}

static int hb_rank(const char *s)
{
    if (!s)
        return -1;
    if (strcmp(s, "green") == 0)
        return 3;
    if (strcmp(s, "yellow") == 0)
        return 2;
    if (strcmp(s, "red") == 0)
        return 1;
    if (strcmp(s, "gray") == 0)
        return 0;
    return -1;
}

int probe_tcp_target(const struct api_vm *vm, const char **ret_host)
{
    const cJSON *tcp = api_jget(vm ? probe_of(vm) : NULL, "tcpSocket"), *port;
    long v = 0;
    if (ret_host)
        *ret_host = NULL;
    if (!cJSON_IsObject(tcp))
        return 0;
    if (ret_host && api_jstr(tcp, "host") && *api_jstr(tcp, "host"))
        *ret_host = api_jstr(tcp, "host");
    port = api_jget(tcp, "port");
    if (cJSON_IsNumber(port)) {
        v = (long)port->valuedouble;
    } else if (cJSON_IsString(port)) {
        char *end = NULL;
        errno = 0;
        v = strtol(port->valuestring, &end, 10);
        if (errno || end == port->valuestring || *end)
            v = 0;
    }
    return v >= 1 && v <= 65535 ? (int)v : 0;
}

/* Whether pattern want (RE2 syntax) matches anywhere in have, as Go's regexp.MatchString: 1 yes,
 * 0 no; -1 with r set when the pattern does not compile, hits a limit or memory runs out. */
static int gi_match(const char *full, const char *want, const char *have, struct probe_result *r)
{
    pcre2_compile_context *cctx = pcre2_compile_context_create(NULL);
    pcre2_match_context *mctx = pcre2_match_context_create(NULL);
    pcre2_match_data *md = NULL;
    pcre2_code *code = NULL;
    PCRE2_UCHAR emsg[128];
    PCRE2_SIZE eoff = 0;
    int ec = 0, m = -1;
    if (!cctx || !mctx) {
        set_result(r, API_COND_UNKNOWN, "out of memory evaluating %s", full);
        goto out;
    }
    pcre2_set_newline(cctx, PCRE2_NEWLINE_LF);
    pcre2_set_match_limit(mctx, RE_MATCH_LIMIT);
    pcre2_set_depth_limit(mctx, RE_DEPTH_LIMIT);
    pcre2_set_heap_limit(mctx, RE_HEAP_LIMIT_KIB);
    code = pcre2_compile((PCRE2_SPTR)want, PCRE2_ZERO_TERMINATED,
                         PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY |
                             PCRE2_NEVER_BACKSLASH_C,
                         &ec, &eoff, cctx);
    if (!code) {
        if (pcre2_get_error_message(ec, emsg, sizeof(emsg)) < 0)
            snprintf((char *)emsg, sizeof(emsg), "error %d", ec);
        set_result(r, API_COND_FALSE, "invalid regular expression for %s at offset %zu: %s", full,
                   (size_t)eoff, (const char *)emsg);
        goto out;
    }
    if (!(md = pcre2_match_data_create(1, NULL))) {
        set_result(r, API_COND_UNKNOWN, "out of memory evaluating %s", full);
        goto out;
    }
    ec = pcre2_match(code, (PCRE2_SPTR)have, PCRE2_ZERO_TERMINATED, 0, 0, md, mctx);
    if (ec >= 0) {
        m = 1;
    } else if (ec == PCRE2_ERROR_NOMATCH) {
        m = 0;
    } else if (ec == PCRE2_ERROR_MATCHLIMIT || ec == PCRE2_ERROR_DEPTHLIMIT ||
               ec == PCRE2_ERROR_HEAPLIMIT) {
        set_result(r, API_COND_FALSE, "regular expression for %s reached the match limit", full);
    } else {
        if (pcre2_get_error_message(ec, emsg, sizeof(emsg)) < 0)
            snprintf((char *)emsg, sizeof(emsg), "error %d", ec);
        set_result(r, API_COND_FALSE, "regular expression for %s cannot be matched: %s", full,
                   (const char *)emsg);
    }
out:
    pcre2_match_data_free(md);
    pcre2_code_free(code);
    pcre2_match_context_free(mctx);
    pcre2_compile_context_free(cctx);
    return m;
}

static void eval_guestinfo(const cJSON *gi, const struct probe_facts *f, struct probe_result *r)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, gi)
    {
        const char *key = api_jstr(e, "key"), *want = api_jstr(e, "value"), *have;
        char full[GUESTINFO_KEY_MAX];
        int m;
        if (!key || !*key ||
            (size_t)snprintf(full, sizeof(full), PROBE_GUESTINFO_PREFIX "%s", key) >=
                sizeof(full)) {
            set_result(r, API_COND_FALSE, "invalid guestInfo probe key");
            return;
        }
        have = f->extra_config ? f->extra_config(f->ud, full) : NULL;
        if (!have) {
            set_result(r, API_COND_FALSE, "%s is not set", full);
            return;
        }
        if (!want || !*want)
            continue;
        if ((m = gi_match(full, want, have, r)) < 0)
            return;
        if (m == 0) {
            set_result(r, API_COND_FALSE, "%s does not match the expected value", full);
            return;
        }
    }
    set_result(r, API_COND_TRUE, "%s", "");
}

vmop_rc probe_evaluate(const struct api_vm *vm, const struct probe_facts *f, enum probe_tcp tcp,
                       struct probe_result *ret, struct vmop_err *err)
{
    const cJSON *p, *gi;
    struct probe_result r = {0};
    if (!vm || !f || !ret)
        return vmop_fail(err, VMOP_E_INVALID, "probe_evaluate: NULL argument");
    p = probe_of(vm);
    gi = api_jget(p, "guestInfo");
    r.has_probe = cJSON_IsObject(api_jget(p, "tcpSocket")) ||
                  cJSON_IsObject(api_jget(p, "guestHeartbeat")) ||
                  (cJSON_IsArray(gi) && cJSON_GetArraySize(gi) > 0);
    if (!r.has_probe) {
        *ret = r;
        return VMOP_OK;
    }
    if (f->power != API_POWER_ON) {
        set_result(&r, API_COND_FALSE, "virtual machine is not powered on");
    } else if (cJSON_IsObject(api_jget(p, "tcpSocket"))) {
        int port = probe_tcp_target(vm, NULL);
        if (tcp == PROBE_TCP_OK)
            set_result(&r, API_COND_TRUE, "%s", "");
        else if (tcp == PROBE_TCP_FAIL)
            set_result(&r, API_COND_FALSE, "TCP probe to port %d failed", port);
        else if (!f->primary_ip || !*f->primary_ip)
            set_result(&r, API_COND_UNKNOWN, "waiting for an IP address to probe");
        else
            set_result(&r, API_COND_UNKNOWN, "TCP probe to port %d has not completed", port);
    } else if (cJSON_IsObject(api_jget(p, "guestHeartbeat"))) {
        const char *th = api_jstr(api_jget(p, "guestHeartbeat"), "thresholdStatus");
        int want = hb_rank(th && *th ? th : "green"), have = hb_rank(f->heartbeat);
        if (want < 2)
            want = 3; /* only green and yellow are valid thresholds */
        if (have < 0)
            set_result(&r, API_COND_UNKNOWN, "no guest heartbeat");
        else if (have >= want)
            set_result(&r, API_COND_TRUE, "%s", "");
        else
            set_result(&r, API_COND_FALSE, "guest heartbeat is %s, below the threshold %s",
                       f->heartbeat, want == 3 ? "green" : "yellow");
    } else {
        eval_guestinfo(gi, f, &r);
    }
    *ret = r;
    return VMOP_OK;
}

vmop_rc probe_apply(cJSON *conds, const struct probe_result *r, long long generation, time_t now,
                    int *ret_changed, struct vmop_err *err)
{
    const char *b, *after;
    char before[16] = ""; /* copied: api_cond_set() may free the old element */
    int changed = 0;
    vmop_rc rc;
    if (!r || !r->has_probe) {
        if (ret_changed)
            *ret_changed = 0;
        return VMOP_OK;
    }
    if ((b = api_jstr(api_cond_get(conds, PROBE_COND_READY), "status")) != NULL)
        snprintf(before, sizeof(before), "%s", b);
    rc = api_cond_set(conds, PROBE_COND_READY, r->status, r->reason, r->message, generation, now,
                      NULL, err);
    if (rc != VMOP_OK)
        return rc;
    after = api_jstr(api_cond_get(conds, PROBE_COND_READY), "status");
    changed = strcmp(before, after ? after : "") != 0;
    if (ret_changed)
        *ret_changed = changed;
    return VMOP_OK;
}

/* ---- the TCP prober ---- */

struct pentry {
    char *key;
    struct sockaddr_storage addr;
    socklen_t alen;
    char host[NI_MAXHOST];
    int port, period_ms, timeout_ms;
    int64_t next_due, started, deadline;
    int fd;      /* -1 when idle; owned by the prober thread while in flight */
    int removed; /* unregistered while in flight: the thread frees it */
    int stale;   /* target changed while in flight: discard that result */
    enum probe_tcp result;
};

struct note {
    char *key;
    enum probe_tcp result;
};

struct prober {
    pthread_mutex_t mu;
    pthread_t th;
    int wake[2];
    int stop;
    struct vmop_map map; /* key -> struct pentry* (freed by us, not the map) */
    struct pentry **inflight;
    size_t n_inflight;
    unsigned max;
    prober_transition_fn cb;
    void *ud;
    size_t max_in_flight;
    unsigned long started;
};

static void pentry_free(struct pentry *e)
{
    if (!e)
        return;
    if (e->fd >= 0)
        close(e->fd);
    free(e->key);
    free(e);
}

static void wake_up(struct prober *p)
{
    char c = 1;
    ssize_t n = write(p->wake[1], &c, 1);
    (void)n; /* a full pipe already wakes the thread */
}

/* Records the end of e's probe (lock held). Adds a note when the result changed. */
static void finish(struct prober *p, struct pentry *e, enum probe_tcp res, int64_t now,
                   struct note **notes, size_t *n_notes)
{
    if (e->fd >= 0) {
        close(e->fd);
        e->fd = -1;
    }
    if (e->stale) {
        e->stale = 0;
        e->next_due = now;
        return;
    }
    e->next_due = e->started + e->period_ms;
    if (res == e->result)
        return;
    e->result = res;
    struct note *nn = realloc(*notes, (*n_notes + 1) * sizeof(**notes));
    if (!nn)
        return; /* the next transition will still be reported */
    *notes = nn;
    if ((nn[*n_notes].key = strdup(e->key)) != NULL) {
        nn[*n_notes].result = res;
        (*n_notes)++;
    }
}

static void start_probe(struct prober *p, struct pentry *e, int64_t now, struct note **notes,
                        size_t *n_notes)
{
    int fd = socket(e->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    e->started = now;
    e->deadline = now + e->timeout_ms;
    p->started++;
    if (fd < 0) {
        finish(p, e, PROBE_TCP_FAIL, now, notes, n_notes);
        return;
    }
    e->fd = fd;
    if (connect(fd, (const struct sockaddr *)&e->addr, e->alen) == 0) {
        finish(p, e, PROBE_TCP_OK, now, notes, n_notes);
        return;
    }
    if (errno != EINPROGRESS) {
        finish(p, e, PROBE_TCP_FAIL, now, notes, n_notes);
        return;
    }
    p->inflight[p->n_inflight++] = e;
    if (p->n_inflight > p->max_in_flight)
        p->max_in_flight = p->n_inflight;
}

static void *prober_main(void *arg)
{
    struct prober *p = arg;
    struct pollfd *pf = calloc((size_t)p->max + 1, sizeof(*pf));
    if (!pf)
        return NULL; /* prober_new checked the same allocation size; nothing probes */
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        struct note *notes = NULL;
        size_t n_notes = 0, j = 0;
        struct vmop_map_iter it;
        int64_t now = vmop_mono_ms(), wait = WAIT_MAX_MS;

        for (struct vmop_map_entry *me = vmop_map_first(&p->map, &it); me;
             me = vmop_map_next(&p->map, &it)) {
            struct pentry *e = me->val;
            if (e->fd < 0 && e->next_due <= now && p->n_inflight < p->max)
                start_probe(p, e, now, &notes, &n_notes);
            /* a due key that found no free slot waits for an in-flight one to end */
            if (e->fd < 0 && e->next_due > now && e->next_due - now < wait)
                wait = e->next_due - now;
        }
        pf[0].fd = p->wake[0];
        pf[0].events = POLLIN;
        for (size_t i = 0; i < p->n_inflight; i++) {
            pf[i + 1].fd = p->inflight[i]->fd;
            pf[i + 1].events = POLLOUT;
            pf[i + 1].revents = 0;
            if (p->inflight[i]->deadline - now < wait)
                wait = p->inflight[i]->deadline - now;
        }
        if (wait < 0 || n_notes)
            wait = 0;
        pthread_mutex_unlock(&p->mu);
        for (size_t i = 0; i < n_notes; i++) {
            if (p->cb)
                p->cb(p->ud, notes[i].key, notes[i].result);
            free(notes[i].key);
        }
        free(notes);
        notes = NULL;
        n_notes = 0;
        (void)poll(pf, p->n_inflight + 1, (int)wait); /* only this thread changes n_inflight */
        pthread_mutex_lock(&p->mu);
        if (pf[0].revents & POLLIN) {
            char buf[64];
            while (read(p->wake[0], buf, sizeof(buf)) > 0)
                ;
        }
        now = vmop_mono_ms();
        for (size_t i = 0; i < p->n_inflight; i++) {
            struct pentry *e = p->inflight[i];
            short rev = pf[i + 1].revents;
            if (e->removed) {
                pentry_free(e);
                continue;
            }
            if (rev & (POLLOUT | POLLERR | POLLHUP)) {
                int soerr = 0;
                socklen_t sl = sizeof(soerr);
                if (getsockopt(e->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
                    soerr = errno;
                finish(p, e, soerr == 0 ? PROBE_TCP_OK : PROBE_TCP_FAIL, now, &notes, &n_notes);
            } else if (now >= e->deadline) {
                finish(p, e, PROBE_TCP_FAIL, now, &notes, &n_notes);
            } else {
                p->inflight[j++] = e;
            }
        }
        p->n_inflight = j;
        if (n_notes) {
            pthread_mutex_unlock(&p->mu);
            for (size_t i = 0; i < n_notes; i++) {
                if (p->cb)
                    p->cb(p->ud, notes[i].key, notes[i].result);
                free(notes[i].key);
            }
            pthread_mutex_lock(&p->mu);
        }
        free(notes);
    }
    for (size_t i = 0; i < p->n_inflight; i++) {
        if (p->inflight[i]->removed)
            pentry_free(p->inflight[i]);
        else {
            close(p->inflight[i]->fd);
            p->inflight[i]->fd = -1;
        }
    }
    p->n_inflight = 0;
    pthread_mutex_unlock(&p->mu);
    free(pf);
    return NULL;
}

vmop_rc prober_new(unsigned max_concurrent, prober_transition_fn cb, void *ud,
                   struct prober **ret_p, struct vmop_err *err)
{
    struct prober *p;
    if (max_concurrent < 1 || max_concurrent > PROBE_MAX_CONCURRENT || !ret_p)
        return vmop_fail(err, VMOP_E_INVALID, "prober_new: max_concurrent must be 1..%d",
                         PROBE_MAX_CONCURRENT);
    if (!(p = calloc(1, sizeof(*p))))
        return vmop_fail(err, VMOP_E_NOMEM, "prober_new: out of memory");
    p->max = max_concurrent;
    p->cb = cb;
    p->ud = ud;
    vmop_map_init(&p->map, NULL);
    if (!(p->inflight = calloc(max_concurrent, sizeof(*p->inflight)))) {
        free(p);
        return vmop_fail(err, VMOP_E_NOMEM, "prober_new: out of memory");
    }
    if (pipe2(p->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        free(p->inflight);
        free(p);
        return vmop_fail(err, VMOP_E_INTERNAL, "prober_new: pipe: %s", strerror(errno));
    }
    pthread_mutex_init(&p->mu, NULL);
    if (pthread_create(&p->th, NULL, prober_main, p) != 0) {
        close(p->wake[0]);
        close(p->wake[1]);
        pthread_mutex_destroy(&p->mu);
        free(p->inflight);
        free(p);
        return vmop_fail(err, VMOP_E_INTERNAL, "prober_new: cannot start the prober thread");
    }
    *ret_p = p;
    return VMOP_OK;
}

void prober_free(struct prober *p)
{
    struct vmop_map_iter it;
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_mutex_unlock(&p->mu);
    wake_up(p);
    pthread_join(p->th, NULL);
    for (struct vmop_map_entry *me = vmop_map_first(&p->map, &it); me;
         me = vmop_map_next(&p->map, &it))
        pentry_free(me->val);
    vmop_map_clear(&p->map);
    close(p->wake[0]);
    close(p->wake[1]);
    pthread_mutex_destroy(&p->mu);
    free(p->inflight);
    free(p);
}

static vmop_rc resolve(const char *host, int port, struct sockaddr_storage *ret, socklen_t *ret_len,
                       struct vmop_err *err)
{
    struct addrinfo hints = {0}, *ai = NULL;
    char ports[8];
    int g;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    snprintf(ports, sizeof(ports), "%d", port);
    g = getaddrinfo(host, ports, &hints, &ai);
    if (g == EAI_NONAME) {
        hints.ai_flags = AI_NUMERICSERV;
        g = getaddrinfo(host, ports, &hints, &ai);
    }
    if (g != 0 || !ai || ai->ai_addrlen > sizeof(*ret)) {
        if (ai)
            freeaddrinfo(ai);
        return vmop_fail(err, VMOP_E_TRANSPORT, "probe host '%s' does not resolve: %s", host,
                         g ? gai_strerror(g) : "no address");
    }
    memset(ret, 0, sizeof(*ret));
    memcpy(ret, ai->ai_addr, ai->ai_addrlen);
    *ret_len = ai->ai_addrlen;
    freeaddrinfo(ai);
    return VMOP_OK;
}

vmop_rc prober_set(struct prober *p, const char *key, const char *host, int port, int period_s,
                   int timeout_s, struct vmop_err *err)
{
    struct sockaddr_storage addr;
    socklen_t alen = 0;
    struct pentry *e;
    vmop_rc rc;
    if (!p || !key || !*key || !host || !*host || port < 1 || port > 65535 || period_s < 1 ||
        timeout_s < 1 || strlen(host) >= NI_MAXHOST)
        return vmop_fail(err, VMOP_E_INVALID, "prober_set: invalid arguments");
    if ((rc = resolve(host, port, &addr, &alen, err)) != VMOP_OK)
        return rc;
    if (period_s > 86400)
        period_s = 86400;
    if (timeout_s > 3600)
        timeout_s = 3600;
    pthread_mutex_lock(&p->mu);
    e = vmop_map_get(&p->map, key);
    if (!e) {
        if (p->map.len >= PROBE_MAX_KEYS) {
            rc = vmop_fail(err, VMOP_E_TOOBIG, "prober: over %d registered probes", PROBE_MAX_KEYS);
            goto out;
        }
        if (!(e = calloc(1, sizeof(*e))) || !(e->key = strdup(key))) {
            free(e);
            rc = vmop_fail(err, VMOP_E_NOMEM, "prober_set: out of memory");
            goto out;
        }
        e->fd = -1;
        e->next_due = vmop_mono_ms();
        if ((rc = vmop_map_put(&p->map, key, e)) != VMOP_OK) {
            pentry_free(e);
            rc = vmop_fail(err, rc, "prober_set: out of memory");
            goto out;
        }
    } else if (e->alen != alen || memcmp(&e->addr, &addr, alen) != 0) {
        e->result = PROBE_TCP_UNKNOWN;
        e->next_due = vmop_mono_ms();
        if (e->fd >= 0)
            e->stale = 1;
    }
    e->addr = addr;
    e->alen = alen;
    e->port = port;
    snprintf(e->host, sizeof(e->host), "%s", host);
    e->period_ms = period_s * 1000;
    e->timeout_ms = timeout_s * 1000;
out:
    pthread_mutex_unlock(&p->mu);
    if (rc == VMOP_OK)
        wake_up(p);
    return rc;
}

void prober_remove(struct prober *p, const char *key)
{
    struct pentry *e;
    if (!p || !key)
        return;
    pthread_mutex_lock(&p->mu);
    e = vmop_map_take(&p->map, key);
    if (e) {
        if (e->fd >= 0)
            e->removed = 1; /* in flight: the prober thread frees it */
        else
            pentry_free(e);
    }
    pthread_mutex_unlock(&p->mu);
}

enum probe_tcp prober_result(struct prober *p, const char *key)
{
    enum probe_tcp r = PROBE_TCP_UNKNOWN;
    struct pentry *e;
    if (!p || !key)
        return r;
    pthread_mutex_lock(&p->mu);
    if ((e = vmop_map_get(&p->map, key)) != NULL)
        r = e->result;
    pthread_mutex_unlock(&p->mu);
    return r;
}

void prober_get_stats(struct prober *p, struct prober_stats *ret)
{
    pthread_mutex_lock(&p->mu);
    ret->keys = p->map.len;
    ret->in_flight = p->n_inflight;
    ret->max_in_flight = p->max_in_flight;
    ret->started = p->started;
    pthread_mutex_unlock(&p->mu);
}
