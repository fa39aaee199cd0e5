/* vim_client.c: the client object: configuration checks, lifetime, public login/logout, server
 * facts, counters, and the small value helpers (morefs, power states).
 *
 * Owns: struct vim_client's read-only configuration (set here, never changed after
 * vim_client_new) and the order in which the other layers are set up and torn down.
 * Not here: I/O (vim_http.c), the session itself (vim_session.c), REST (vim_rest.c).
 */
#include "vim_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#define DEFAULT_TIMEOUT_MS         60000L
#define DEFAULT_CONNECT_TIMEOUT_MS 10000L
#define DEFAULT_MAX_CONNECTIONS    8
#define MAX_CONNECTIONS            1024 /* each long-poll watch holds one (vcfeed): room for many */
#define MAX_URL_LEN                2048
#define MAX_CRED_LEN               1024
/* Logout at free time must not hold up a shutdown. */
#define FREE_LOGOUT_TIMEOUT_MS 5000L

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    ch = tolower(ch);
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

/* "AB:CD:..." or "abcd..." -> raw bytes; 20 (SHA-1) or 32 (SHA-256) bytes. Exposed for tests via
 * vim_client_new (the parsed pin lands in c->pin). */
static vmop_rc parse_thumbprint(const char *s, unsigned char *pin, size_t *ret_len,
                                struct vmop_err *err)
{
    size_t n = 0;
    int hi = -1;
    for (const char *p = s; *p; p++) {
        int v;
        if (*p == ':' || *p == ' ')
            continue;
        v = hexval((unsigned char)*p);
        if (v < 0)
            return vmop_fail(err, VMOP_E_INVALID,
                             "thumbprint: '%c' is not a hex digit (want SHA-1 or SHA-256 as hex, "
                             "':' optional)",
                             isprint((unsigned char)*p) ? *p : '?');
        if (hi < 0) {
            hi = v;
            continue;
        }
        if (n >= 32)
            return vmop_fail(err, VMOP_E_INVALID, "thumbprint: more than 32 bytes");
        pin[n++] = (unsigned char)(hi << 4 | v);
        hi = -1;
    }
    if (hi >= 0)
        return vmop_fail(err, VMOP_E_INVALID, "thumbprint: odd number of hex digits");
    if (n != 20 && n != 32)
        return vmop_fail(err, VMOP_E_INVALID,
                         "thumbprint: %zu bytes; want 20 (SHA-1) or 32 (SHA-256)", n);
    *ret_len = n;
    return VMOP_OK;
}

/* Checks the URL and reduces it to scheme://host[:port] (a trailing "/" or "/sdk" is dropped). */
static vmop_rc parse_url(const char *url, char **ret_base, struct vmop_err *err)
{
    const char *host;
    size_t len;
    char *base;

    if (!url || !*url)
        return vmop_fail(err, VMOP_E_INVALID, "vCenter URL is empty");
    len = strlen(url);
    if (len > MAX_URL_LEN)
        return vmop_fail(err, VMOP_E_INVALID, "vCenter URL longer than %d bytes", MAX_URL_LEN);
    if (strncmp(url, "https://", 8) == 0)
        host = url + 8;
    else if (strncmp(url, "http://", 7) == 0)
        host = url + 7;
    else
        return vmop_fail(err, VMOP_E_INVALID,
                         "vCenter URL '%s' must start with https:// or http://", url);
    if (strchr(host, '@'))
        return vmop_fail(err, VMOP_E_INVALID,
                         "vCenter URL must not carry credentials; use username/password");
    const char *slash = strchr(host, '/');
    if (slash == host || *host == '\0')
        return vmop_fail(err, VMOP_E_INVALID, "vCenter URL has no host");
    if (slash && strcmp(slash, "/") != 0 && strcmp(slash, "/sdk") != 0 &&
        strcmp(slash, "/sdk/") != 0)
        return vmop_fail(err, VMOP_E_INVALID,
                         "vCenter URL must be scheme://host[:port] (optionally ending in /sdk)");
    for (const char *p = url; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == '?' || *p == '#')
            return vmop_fail(err, VMOP_E_INVALID, "vCenter URL contains a space, '?' or '#'");
    len = slash ? (size_t)(slash - url) : len;
    base = strndup(url, len);
    if (!base)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    *ret_base = base;
    return VMOP_OK;
}

char *vim_dup_opt(const char *s, int *nomem)
{
    char *d;
    if (!s)
        return NULL;
    d = strdup(s);
    if (!d)
        *nomem = 1;
    return d;
}

vmop_rc vim_client_new(const struct vim_config *cfg, struct vim_client **ret_client,
                       struct vmop_err *err)
{
    struct vim_client *c = NULL;
    vmop_rc rc;
    int nomem = 0;

    if (!cfg || !ret_client)
        return vmop_fail(err, VMOP_E_INVALID, "vim_client_new: no config");
    if (!cfg->username || !*cfg->username || !cfg->password)
        return vmop_fail(err, VMOP_E_INVALID, "vCenter username and password are required");
    if (strlen(cfg->username) > MAX_CRED_LEN || strlen(cfg->password) > MAX_CRED_LEN)
        return vmop_fail(err, VMOP_E_INVALID, "vCenter username or password longer than %d bytes",
                         MAX_CRED_LEN);
    if (cfg->timeout_ms < 0 || cfg->connect_timeout_ms < 0 || cfg->max_connections < 0)
        return vmop_fail(err, VMOP_E_INVALID, "negative timeout or connection count");
    if (cfg->max_connections > MAX_CONNECTIONS) /* refused, never cut silently */
        return vmop_fail(err, VMOP_E_INVALID, "max_connections %d is over the limit of %d",
                         cfg->max_connections, MAX_CONNECTIONS);
    if (cfg->insecure && (cfg->thumbprint || cfg->ca_file))
        return vmop_fail(err, VMOP_E_INVALID,
                         "insecure turns verification off: do not combine it with a thumbprint "
                         "or CA file");
    if (cfg->thumbprint && cfg->ca_file)
        return vmop_fail(err, VMOP_E_INVALID,
                         "a thumbprint pin replaces CA verification: set the thumbprint or the CA "
                         "file, not both");

    c = calloc(1, sizeof(*c));
    if (!c)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    pthread_mutex_init(&c->pool_lock, NULL);
    pthread_cond_init(&c->pool_cond, NULL);
    pthread_mutex_init(&c->share_lock, NULL);
    pthread_mutex_init(&c->session_lock, NULL);
    pthread_mutex_init(&c->stats_lock, NULL);

    rc = parse_url(cfg->url, &c->base_url, err);
    if (rc != VMOP_OK)
        goto out;
    if (cfg->thumbprint) {
        rc = parse_thumbprint(cfg->thumbprint, c->pin, &c->pin_len, err);
        if (rc != VMOP_OK)
            goto out;
    }
    c->username = vim_dup_opt(cfg->username, &nomem);
    c->password = vim_dup_opt(cfg->password, &nomem);
    c->ca_file = vim_dup_opt(cfg->ca_file, &nomem);
    if (nomem) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    c->insecure = cfg->insecure ? 1 : 0;
    c->fault = cfg->fault;
    c->fault_ud = cfg->fault_ud;
    c->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS;
    c->connect_timeout_ms =
        cfg->connect_timeout_ms ? cfg->connect_timeout_ms : DEFAULT_CONNECT_TIMEOUT_MS;
    if (c->connect_timeout_ms > c->timeout_ms)
        c->connect_timeout_ms = c->timeout_ms;
    c->max_connections = cfg->max_connections ? cfg->max_connections : DEFAULT_MAX_CONNECTIONS;

    xmlInitParser();
    rc = vim_http_init(c, err);
    if (rc != VMOP_OK)
        goto out;
    *ret_client = c;
    c = NULL;
out:
    vim_client_free(c);
    return rc;
}

void vim_client_free(struct vim_client *c)
{
    struct vmop_err ignored = {0};
    if (!c)
        return;
    if (c->share) {
        /* Best effort and bounded: a dead vCenter must not hold up a shutdown. */
        long saved = c->timeout_ms;
        if (c->timeout_ms > FREE_LOGOUT_TIMEOUT_MS)
            c->timeout_ms = FREE_LOGOUT_TIMEOUT_MS;
        if (c->rest)
            (void)vim_rest_logout(c, &ignored);
        (void)vim_logout(c, &ignored);
        c->timeout_ms = saved;
    }
    vim_rest_state_free(c->rest);
    vim_http_cleanup(c);
    free(c->base_url);
    free(c->username);
    if (c->password) {
        explicit_bzero(c->password, strlen(c->password));
        free(c->password);
    }
    free(c->ca_file);
    free(c->about_api_version);
    free(c->about_full_name);
    free(c->about_instance_uuid);
    pthread_mutex_destroy(&c->pool_lock);
    pthread_cond_destroy(&c->pool_cond);
    pthread_mutex_destroy(&c->share_lock);
    pthread_mutex_destroy(&c->session_lock);
    pthread_mutex_destroy(&c->stats_lock);
    free(c);
}

vmop_rc vim_login(struct vim_client *c, struct vmop_err *err)
{
    vmop_rc rc;
    uint64_t gen;
    int logged_in;

    if (!c)
        return vmop_fail(err, VMOP_E_INVALID, "vim_login: no client");
    rc = vim_session_service_content(c, err);
    if (rc != VMOP_OK)
        return rc;
    pthread_mutex_lock(&c->session_lock);
    gen = c->session_gen;
    logged_in = c->logged_in;
    pthread_mutex_unlock(&c->session_lock);
    if (logged_in)
        return VMOP_OK;
    return vim_session_login(c, gen, err);
}

const char *vim_about_api_version(struct vim_client *c)
{
    return c ? __atomic_load_n(&c->about_api_version, __ATOMIC_ACQUIRE) : NULL;
}

const char *vim_about_full_name(struct vim_client *c)
{
    return c ? __atomic_load_n(&c->about_full_name, __ATOMIC_ACQUIRE) : NULL;
}

const char *vim_about_instance_uuid(struct vim_client *c)
{
    return c ? __atomic_load_n(&c->about_instance_uuid, __ATOMIC_ACQUIRE) : NULL;
}

void vim_client_stats(struct vim_client *c, struct vim_stats *ret_stats)
{
    if (!ret_stats)
        return;
    memset(ret_stats, 0, sizeof(*ret_stats));
    if (!c)
        return;
    ret_stats->soap_calls = __atomic_load_n(&c->n_soap_calls, __ATOMIC_RELAXED);
    ret_stats->rest_calls = __atomic_load_n(&c->n_rest_calls, __ATOMIC_RELAXED);
    ret_stats->logins = __atomic_load_n(&c->n_logins, __ATOMIC_RELAXED);
    ret_stats->relogins = __atomic_load_n(&c->n_relogins, __ATOMIC_RELAXED);
}

vmop_rc vim_moref_set(struct vim_moref *ref, const char *type, const char *value)
{
    size_t tl, vl;
    if (!ref || !type || !value)
        return VMOP_E_INVALID;
    tl = strlen(type);
    vl = strlen(value);
    if (tl == 0 || vl == 0 || tl >= sizeof(ref->type) || vl >= sizeof(ref->value))
        return VMOP_E_INVALID;
    memcpy(ref->type, type, tl + 1);
    memcpy(ref->value, value, vl + 1);
    return VMOP_OK;
}

int vim_moref_is_set(const struct vim_moref *ref)
{
    return ref && ref->type[0] && ref->value[0];
}

int vim_moref_eq(const struct vim_moref *a, const struct vim_moref *b)
{
    if (!a || !b)
        return 0;
    return strcmp(a->type, b->type) == 0 && strcmp(a->value, b->value) == 0;
}

const char *vim_power_state_str(enum vim_power_state s)
{
    switch (s) {
    case VIM_POWER_ON:
        return "poweredOn";
    case VIM_POWER_OFF:
        return "poweredOff";
    case VIM_POWER_SUSPENDED:
        return "suspended";
    case VIM_POWER_UNKNOWN:
        break;
    }
    return "unknown";
}

const char *vim_shares_level_str(enum vim_shares_level l)
{
    switch (l) {
    case VIM_SHARES_LOW:
        return "low";
    case VIM_SHARES_NORMAL:
        return "normal";
    case VIM_SHARES_HIGH:
        return "high";
    case VIM_SHARES_CUSTOM:
        return "custom";
    case VIM_SHARES_UNSET:
        break;
    }
    return NULL;
}

void vim_client_count_method(struct vim_client *c, const char *method, int failed, double seconds)
{
    struct vim_method_slot *slot = NULL;
    size_t i;

    pthread_mutex_lock(&c->stats_lock);
    for (i = 0; i < c->n_method_stats; i++)
        if (strcmp(c->method_stats[i].name, method) == 0) {
            slot = &c->method_stats[i];
            break;
        }
    if (!slot && strlen(method) < VIM_METHOD_NAME_MAX &&
        c->n_method_stats < VIM_METHOD_STATS_MAX - 1) {
        slot = &c->method_stats[c->n_method_stats++];
        snprintf(slot->name, sizeof(slot->name), "%s", method);
    }
    if (!slot) {
        /* The last slot is reserved for "other": the table never grows past its cap. */
        slot = &c->method_stats[VIM_METHOD_STATS_MAX - 1];
        if (!slot->name[0])
            snprintf(slot->name, sizeof(slot->name), "other");
    }
    slot->calls++;
    if (failed)
        slot->errors++;
    slot->seconds += seconds;
    pthread_mutex_unlock(&c->stats_lock);
}

void vim_client_method_stats(struct vim_client *c,
                             void (*fn)(void *ud, const struct vim_method_stat *s), void *ud)
{
    struct vim_method_slot snap[VIM_METHOD_STATS_MAX];
    size_t n, i;

    if (!c || !fn)
        return;
    pthread_mutex_lock(&c->stats_lock);
    n = c->n_method_stats;
    memcpy(snap, c->method_stats, sizeof(snap));
    pthread_mutex_unlock(&c->stats_lock);
    for (i = 0; i < VIM_METHOD_STATS_MAX; i++) {
        struct vim_method_stat s;
        if (i >= n && !(i == VIM_METHOD_STATS_MAX - 1 && snap[i].name[0]))
            continue;
        s.method = snap[i].name;
        s.calls = snap[i].calls;
        s.errors = snap[i].errors;
        s.seconds = snap[i].seconds;
        fn(ud, &s);
    }
}
