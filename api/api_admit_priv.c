/* api_admit_priv.c: who is privileged, and the VirtualMachine metadata only privileged users may
 * change (the paused label, check annotations, *.protected annotations, the cloud-init markers).
 * Messages and paths follow VM Operator's validator (validateLabel, validateAnnotation,
 * validateProtectedAnnotations, validateChecksAnnotation); see api_admit.h. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api_admit.h"

#define MSG_MOD_ANNO  "modifying this annotation is not allowed for non-admin users"
#define MSG_MOD_LABEL "modifying this label is not allowed for non-admin users"
#define MSG_ADD_CHECK "adding this annotation is restricted to privileged users"
#define MSG_DEL_CHECK "removing this annotation is restricted to privileged users"
#define MSG_CHG_CHECK "modifying this annotation is restricted to privileged users"

static int in_set(const char *s, const char *const *set, size_t n)
{
    for (size_t i = 0; s && set && i < n; i++)
        if (set[i] && strcmp(set[i], s) == 0)
            return 1;
    return 0;
}

int api_admit_is_privileged(const struct api_user *u, const struct api_privileged_cfg *cfg)
{
    if (!u)
        return 0;
    for (size_t i = 0; u->groups && i < u->n_groups; i++) {
        if (u->groups[i] && strcmp(u->groups[i], "system:masters") == 0)
            return 1;
        if (cfg && in_set(u->groups[i], cfg->groups, cfg->n_groups))
            return 1;
    }
    if (!u->username || !*u->username)
        return 0;
    if (strcasecmp(u->username, "kubernetes-admin") == 0)
        return 1;
    if (!cfg)
        return 0;
    if (cfg->sa_namespace && *cfg->sa_namespace && cfg->sa_name && *cfg->sa_name) {
        char sa[512];
        int n = snprintf(sa, sizeof(sa), "system:serviceaccount:%s:%s", cfg->sa_namespace,
                         cfg->sa_name);
        if (n > 0 && (size_t)n < sizeof(sa) && strcasecmp(u->username, sa) == 0)
            return 1;
    }
    return in_set(u->username, cfg->users, cfg->n_users);
}

size_t api_user_from_json(const cJSON *user_info, struct api_user *u, const char **groups,
                          size_t max)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(user_info, "username");
    const cJSON *it;
    size_t n = 0;

    u->username = cJSON_IsString(name) ? name->valuestring : NULL;
    u->groups = groups;
    u->n_groups = 0;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(user_info, "groups"))
    {
        if (!cJSON_IsString(it))
            continue;
        if (groups && n < max)
            groups[u->n_groups++] = it->valuestring;
        n++;
    }
    return n;
}

int api_admit_is_protected_key(const char *key)
{
    static const char mark[] = ".protected";
    const char *at;

    /* ^.+\.protected(/.*)?$: some ".protected" after at least one character, followed by the end
     * or a '/'. */
    for (at = key ? strstr(key, mark) : NULL; at; at = strstr(at + 1, mark)) {
        char next = at[sizeof(mark) - 1];
        if (at > key && (next == '\0' || next == '/'))
            return 1;
    }
    return 0;
}

/* metadata.<which> of obj (an object or NULL). */
static const cJSON *meta_map(const cJSON *obj, const char *which)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(md, which);
    return cJSON_IsObject(m) ? m : NULL;
}

/* The string value of map[key]; NULL when absent; "" for a non-string. */
static const char *map_get(const cJSON *map, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(map, key);
    if (!v)
        return NULL;
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* Same presence and value. Stricter than VM Operator's Go map lookups (where absent == ""): the
 * paused label and the check annotations act by presence, so adding one with an empty value is a
 * change too. */
static int str_same(const char *a, const char *b)
{
    if (!a || !b)
        return !a && !b;
    return strcmp(a, b) == 0;
}

static int has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A changed key (by value, absent == "") appends Forbidden on "<base><key><close>". */
static void check_key(const cJSON *om, const cJSON *nm, const char *key, const char *base,
                      const char *close, const char *msg, struct api_ferrs *fe)
{
    char p[API_FERR_PATH_MAX];
    if (str_same(map_get(om, key), map_get(nm, key)))
        return;
    snprintf(p, sizeof(p), "%s%s%s", base, key, close);
    api_ferr_add(fe, API_FERR_FORBIDDEN, p, "%s", msg);
}

static void check_protected(const cJSON *om, const cJSON *nm, struct api_ferrs *fe)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, nm)
    {
        if (api_admit_is_protected_key(it->string))
            check_key(om, nm, it->string, "metadata.annotations[", "]", MSG_MOD_ANNO, fe);
    }
    cJSON_ArrayForEach(it, om)
    {
        /* Removed ones (present in both were reported above). */
        if (api_admit_is_protected_key(it->string) &&
            !cJSON_GetObjectItemCaseSensitive(nm, it->string))
            check_key(om, nm, it->string, "metadata.annotations[", "]", MSG_MOD_ANNO, fe);
    }
}

/* VM Operator's validateChecksAnnotation: paths are "metadata.annotations.<key>". */
static void check_checks(const cJSON *om, const cJSON *nm, int create, const char *prefix,
                         int add_on_create, struct api_ferrs *fe)
{
    char p[API_FERR_PATH_MAX], pre[64];
    const cJSON *it;

    snprintf(pre, sizeof(pre), "%s/", prefix);
    cJSON_ArrayForEach(it, om)
    {
        if (has_prefix(it->string, pre) && !cJSON_GetObjectItemCaseSensitive(nm, it->string)) {
            snprintf(p, sizeof(p), "metadata.annotations.%s", it->string);
            api_ferr_add(fe, API_FERR_FORBIDDEN, p, "%s", MSG_DEL_CHECK);
        }
    }
    cJSON_ArrayForEach(it, nm)
    {
        const cJSON *o;
        if (!has_prefix(it->string, pre))
            continue;
        snprintf(p, sizeof(p), "metadata.annotations.%s", it->string);
        o = cJSON_GetObjectItemCaseSensitive(om, it->string);
        if (create) {
            if (!add_on_create)
                api_ferr_add(fe, API_FERR_FORBIDDEN, p, "%s", MSG_ADD_CHECK);
        } else if (!o) {
            api_ferr_add(fe, API_FERR_FORBIDDEN, p, "%s", MSG_ADD_CHECK);
        } else if (!str_same(map_get(om, it->string), map_get(nm, it->string))) {
            api_ferr_add(fe, API_FERR_FORBIDDEN, p, "%s", MSG_CHG_CHECK);
        }
    }
}

void api_admit_vm_metadata(const cJSON *old, const cJSON *vm, const struct api_admit_ctx *ctx,
                           struct api_ferrs *fe)
{
    const cJSON *ol = meta_map(old, "labels"), *nl = meta_map(vm, "labels");
    const cJSON *oa = meta_map(old, "annotations"), *na = meta_map(vm, "annotations");

    if (ctx && ctx->privileged)
        return;
    check_protected(oa, na, fe);
    check_key(oa, na, API_ANNO_INSTANCE_ID, "metadata.annotations[", "]", MSG_MOD_ANNO, fe);
    check_key(oa, na, API_ANNO_FIRST_BOOT_DONE, "metadata.annotations[", "]", MSG_MOD_ANNO, fe);
    check_key(ol, nl, API_LABEL_PAUSED, "metadata.labels.", "", MSG_MOD_LABEL, fe);
    check_checks(oa, na, old == NULL, API_ANNO_CHECK_POWERON, 1, fe);
    check_checks(oa, na, old == NULL, API_ANNO_CHECK_DELETE, 0, fe);
}

size_t api_vm_delete_checks(const cJSON *vm, const char **keys, size_t max)
{
    const cJSON *it, *annos = meta_map(vm, "annotations");
    size_t n = 0;

    cJSON_ArrayForEach(it, annos)
    {
        if (!has_prefix(it->string, API_ANNO_CHECK_DELETE "/"))
            continue;
        if (keys && n < max)
            keys[n] = it->string;
        n++;
    }
    return n;
}

size_t api_vm_delete_checks_format(const cJSON *vm, struct vbuf *out)
{
    const cJSON *it, *annos = meta_map(vm, "annotations");
    size_t n = 0;

    cJSON_ArrayForEach(it, annos)
    {
        if (!has_prefix(it->string, API_ANNO_CHECK_DELETE "/"))
            continue;
        vbuf_addf(out, "%s%s", n ? ", " : "deletion held by ", it->string);
        n++;
    }
    return n;
}
