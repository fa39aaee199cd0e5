/* catalog_vc.c: reading Content Libraries for the image catalog (see catalog_vc.h).
 *
 * Owns: the scan loop, the failure policy (hard failures abort, item-specific ones become
 * sync_error), and the descriptor cache (raw bytes, LRU by count and bytes, one mutex). Cached
 * descriptors are re-parsed on every scan: parsing a few KiB is cheap and the scan result then owns
 * plain data with no sharing.
 */
#include "catalog_vc.h"
#include "vbuf.h"
#include "vmop_clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- descriptor cache ---------------------------------------------------------------------- */

struct cache_entry {
    char *key;  /* "<item id>\n<content version>\n<last modified>" */
    char *item; /* item id (to replace older versions of the same item) */
    char *data;
    size_t len;
    uint64_t used; /* LRU clock */
};

/* A library name found before: its id and when a search and a read last checked the name. */
struct known_lib {
    const struct vim_client *c;
    char *name, *id;
    int64_t checked_ms;
};

struct cat_cache {
    pthread_mutex_t lock;
    struct cache_entry *e; /* guarded by lock */
    size_t n, bytes;
    uint64_t clock, hits, downloads;
    struct known_lib libs[CAT_KNOWN_LIBS_MAX]; /* guarded by lock */
    size_t n_libs;
    int64_t recheck_ms; /* a remembered name is searched again after this (set before use) */
};

vmop_rc cat_cache_new(struct cat_cache **ret_cache, struct vmop_err *err)
{
    struct cat_cache *c;
    if (!ret_cache)
        return vmop_fail(err, VMOP_E_INVALID, "cat_cache_new: bad arguments");
    c = calloc(1, sizeof(*c));
    if (!c)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory for the descriptor cache");
    c->e = calloc(CAT_CACHE_MAX_ENTRIES, sizeof(*c->e));
    if (!c->e || pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c->e);
        free(c);
        return vmop_fail(err, VMOP_E_NOMEM, "cannot create the descriptor cache");
    }
    c->recheck_ms = CAT_LIBRARY_RECHECK_MS;
    *ret_cache = c;
    return VMOP_OK;
}

void cat_cache_set_name_recheck_ms(struct cat_cache *c, int64_t ms)
{
    if (c)
        c->recheck_ms = ms > 0 ? ms : 0;
}

static void entry_clear(struct cache_entry *e)
{
    free(e->key);
    free(e->item);
    free(e->data);
    memset(e, 0, sizeof(*e));
}

void cat_cache_free(struct cat_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        entry_clear(&c->e[i]);
    for (size_t i = 0; i < c->n_libs; i++) {
        free(c->libs[i].name);
        free(c->libs[i].id);
    }
    free(c->e);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

void cat_cache_stats(struct cat_cache *c, struct cat_cache_stats *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    ret->hits = c->hits;
    ret->downloads = c->downloads;
    ret->entries = c->n;
    ret->bytes = c->bytes;
    pthread_mutex_unlock(&c->lock);
}

static char *cache_key(const struct vim_library_item *it)
{
    size_t n = strlen(it->id) + 3 + (it->content_version ? strlen(it->content_version) : 0) +
               (it->last_modified_time ? strlen(it->last_modified_time) : 0);
    char *k = malloc(n);
    if (k)
        snprintf(k, n, "%s\n%s\n%s", it->id, it->content_version ? it->content_version : "",
                 it->last_modified_time ? it->last_modified_time : "");
    return k;
}

static void remove_at(struct cat_cache *c, size_t i)
{
    c->bytes -= c->e[i].len;
    entry_clear(&c->e[i]);
    c->e[i] = c->e[c->n - 1];
    memset(&c->e[c->n - 1], 0, sizeof(c->e[0]));
    c->n--;
}

/* A copy of the cached descriptor for key, or NULL (not cached, or NOMEM: then it is fetched). */
static char *cache_get(struct cat_cache *c, const char *key, size_t *ret_len)
{
    char *copy = NULL;
    if (!c)
        return NULL;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->n; i++) {
        if (strcmp(c->e[i].key, key) != 0)
            continue;
        copy = malloc(c->e[i].len + 1);
        if (copy) {
            memcpy(copy, c->e[i].data, c->e[i].len);
            copy[c->e[i].len] = '\0';
            *ret_len = c->e[i].len;
            c->e[i].used = ++c->clock;
            c->hits++;
        }
        break;
    }
    pthread_mutex_unlock(&c->lock);
    return copy;
}

/* Stores a copy (best effort: a failed allocation only means no caching). */
static void cache_put(struct cat_cache *c, const struct vim_library_item *it, const char *key,
                      const char *data, size_t len)
{
    struct cache_entry ne = {0};
    if (!c || len > CAT_CACHE_MAX_BYTES)
        return;
    ne.key = strdup(key);
    ne.item = strdup(it->id);
    ne.data = malloc(len ? len : 1);
    if (!ne.key || !ne.item || !ne.data) {
        entry_clear(&ne);
        return;
    }
    memcpy(ne.data, data, len);
    ne.len = len;
    pthread_mutex_lock(&c->lock);
    /* an older version of the same item is dropped */
    for (size_t i = 0; i < c->n;)
        if (!strcmp(c->e[i].item, it->id))
            remove_at(c, i);
        else
            i++;
    /* make room: least recently used first */
    while (c->n && (c->n >= CAT_CACHE_MAX_ENTRIES || c->bytes + len > CAT_CACHE_MAX_BYTES)) {
        size_t lru = 0;
        for (size_t i = 1; i < c->n; i++)
            if (c->e[i].used < c->e[lru].used)
                lru = i;
        remove_at(c, lru);
    }
    ne.used = ++c->clock;
    c->e[c->n++] = ne;
    c->bytes += len;
    pthread_mutex_unlock(&c->lock);
}

static void cache_count_download(struct cat_cache *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    c->downloads++;
    pthread_mutex_unlock(&c->lock);
}

/* ---- scan ------------------------------------------------------------------------------------ */

void cat_scan_free(struct cat_scan *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        ovf_desc_free(s->entries[i].ovf);
        vim_template_info_free(s->entries[i].tmpl);
        free(s->entries[i].sync_error);
    }
    free(s->entries);
    free(s->items);
    for (size_t i = 0; i < s->n_missing; i++)
        free(s->missing[i]);
    free(s->missing);
    for (size_t i = 0; i < s->n_lists; i++) {
        vim_library_item_list_free(&s->lists[i]);
        free(s->library_ids[i]);
    }
    free(s->lists);
    free(s->library_ids);
    free(s->ref_list);
    memset(s, 0, sizeof(*s));
}

/* Failures that are not about the item itself: they abort the scan. */
static int is_hard_failure(vmop_rc rc)
{
    return rc == VMOP_E_TRANSPORT || rc == VMOP_E_TLS || rc == VMOP_E_AUTH ||
           rc == VMOP_E_TIMEOUT || rc == VMOP_E_CANCELED || rc == VMOP_E_NOMEM ||
           rc == VMOP_E_RATELIMIT || rc == VMOP_E_INTERNAL;
}

static vmop_rc set_sync_error(struct cat_scan_entry *e, const char *msg, struct vmop_err *err)
{
    e->sync_error = strdup(msg && *msg ? msg : "the image facts could not be read");
    return e->sync_error ? VMOP_OK : vmop_fail(err, VMOP_E_NOMEM, "out of memory");
}

static vmop_rc read_ovf(struct vim_client *c, struct cat_cache *cache, struct cat_scan_entry *e,
                        struct vmop_err *err)
{
    const struct vim_library_item *it = e->item;
    struct vmop_err e2 = {0};
    char *key = cache_key(it), *data = NULL;
    size_t len = 0;
    vmop_rc rc = VMOP_OK;
    int downloaded = 0;

    if (!key)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    data = cache_get(cache, key, &len);
    if (!data) {
        downloaded = 1;
        rc = vim_library_item_ovf(c, it->id, OVF_MAX_BYTES, &data, &len, &e2);
        if (rc) {
            if (is_hard_failure(rc)) {
                if (err && !err->rc)
                    *err = e2;
                goto out;
            }
            rc = set_sync_error(e, e2.msg, err);
            goto out;
        }
        cache_count_download(cache);
    }
    memset(&e2, 0, sizeof(e2));
    rc = ovf_parse(data, len, &e->ovf, &e2);
    if (rc == VMOP_E_NOMEM) {
        if (err && !err->rc)
            *err = e2;
        goto out;
    }
    if (rc) {
        rc = set_sync_error(e, e2.msg, err);
        goto out;
    }
    /* only descriptors that parse are worth keeping */
    if (downloaded)
        cache_put(cache, it, key, data, len);
out:
    free(data);
    free(key);
    return rc;
}

/* Template facts as cached bytes: guest_id, hw_version, firmware, one line each, "+" before a
 * value, "-" for none. 0 when a value holds a newline (then it is not cached). */
static int tmpl_encode(const struct vim_template_info *t, struct vbuf *b)
{
    const char *v[3] = {t->guest_id, t->hw_version, t->firmware};
    vbuf_init(b, 4096);
    for (int i = 0; i < 3; i++) {
        if (v[i] && strchr(v[i], '\n'))
            return 0;
        vbuf_addf(b, "%s%s\n", v[i] ? "+" : "-", v[i] ? v[i] : "");
    }
    return !vbuf_error(b);
}

static vmop_rc tmpl_decode(char *data, struct vim_template_info **ret, struct vmop_err *err)
{
    struct vim_template_info *t = calloc(1, sizeof(*t));
    char **f[3], *p = data;
    if (!t)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    f[0] = &t->guest_id;
    f[1] = &t->hw_version;
    f[2] = &t->firmware;
    for (int i = 0; i < 3 && p && *p; i++) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        if (*p == '+' && !(*f[i] = strdup(p + 1))) {
            vim_template_info_free(t);
            return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        }
        p = nl ? nl + 1 : NULL;
    }
    *ret = t;
    return VMOP_OK;
}

/* A VM-template item's facts: from the cache when this item version was read before (so an
 * unchanged item costs no call), else read (REST + one vim25 read) and cached. */
static vmop_rc read_template(struct vim_client *c, struct cat_cache *cache,
                             struct cat_scan_entry *e, struct vmop_err *err)
{
    char *id = cache_key(e->item), *key = NULL, *data = NULL;
    size_t len = 0;
    vmop_rc rc = VMOP_OK;
    struct vbuf b = {0};

    if (!id || !(key = malloc(strlen(id) + 6))) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    snprintf(key, strlen(id) + 6, "tmpl\n%s", id);
    data = cache_get(cache, key, &len);
    if (data)
        rc = tmpl_decode(data, &e->tmpl, err);
    else {
        rc = vim_library_item_template(c, e->item->id, &e->tmpl, err);
        /* a template item's facts are those of its template VM at this content version: a new
         * version (check-in, update) changes the key and is read again */
        if (rc == VMOP_OK && tmpl_encode(e->tmpl, &b))
            cache_put(cache, e->item, key, vbuf_str(&b), b.len);
    }
    if (rc)
        goto out;
    e->vm.guest_id = e->tmpl->guest_id;
    e->vm.hw_version = e->tmpl->hw_version;
    e->vm.firmware = e->tmpl->firmware;
out:
    vbuf_free(&b);
    free(data);
    free(key);
    free(id);
    return rc;
}

static vmop_rc add_missing(struct cat_scan *s, const char *ref, struct vmop_err *err)
{
    char **nm = realloc(s->missing, (s->n_missing + 1) * sizeof(*nm));
    if (!nm)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    s->missing = nm;
    if (!(s->missing[s->n_missing] = strdup(ref)))
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    s->n_missing++;
    return VMOP_OK;
}

/* The id `name` was found as on c, by a search and a read that checked its exact name within the
 * cache's recheck period (malloc'd), or NULL. */
static char *known_get(struct cat_cache *cc, const struct vim_client *c, const char *name)
{
    char *id = NULL;
    int64_t now = vmop_mono_ms();
    if (!cc)
        return NULL;
    pthread_mutex_lock(&cc->lock);
    for (size_t i = 0; i < cc->n_libs && !id; i++)
        if (cc->libs[i].c == c && !strcmp(cc->libs[i].name, name) &&
            now - cc->libs[i].checked_ms < cc->recheck_ms)
            id = strdup(cc->libs[i].id); /* NULL on NOMEM: the name is searched again */
    pthread_mutex_unlock(&cc->lock);
    return id;
}

/* Remembers that a search and a read just found name as id on c. Best effort: with no room (or
 * no memory) the name is searched at every scan. */
static void known_put(struct cat_cache *cc, const struct vim_client *c, const char *name,
                      const char *id)
{
    struct known_lib *k = NULL;
    char *nn, *ni;
    if (!cc)
        return;
    pthread_mutex_lock(&cc->lock);
    for (size_t i = 0; i < cc->n_libs && !k; i++)
        if (cc->libs[i].c == c && !strcmp(cc->libs[i].name, name))
            k = &cc->libs[i];
    if (!k && cc->n_libs < CAT_KNOWN_LIBS_MAX) {
        k = &cc->libs[cc->n_libs++];
        memset(k, 0, sizeof(*k));
    }
    if (k) {
        nn = strdup(name);
        ni = strdup(id);
        if (nn && ni) {
            free(k->name);
            free(k->id);
            *k = (struct known_lib){c, nn, ni, vmop_mono_ms()};
        } else {
            free(nn);
            free(ni);
            if (!k->name) /* a fresh slot that could not be filled */
                cc->n_libs--;
        }
    }
    pthread_mutex_unlock(&cc->lock);
}

/* Forgets the id remembered for name on c (the library it named is gone). */
static void known_forget(struct cat_cache *cc, const struct vim_client *c, const char *name)
{
    if (!cc)
        return;
    pthread_mutex_lock(&cc->lock);
    for (size_t i = 0; i < cc->n_libs; i++)
        if (cc->libs[i].c == c && !strcmp(cc->libs[i].name, name)) {
            free(cc->libs[i].name);
            free(cc->libs[i].id);
            cc->libs[i] = cc->libs[--cc->n_libs];
            break;
        }
    pthread_mutex_unlock(&cc->lock);
}

/* The id of the library named ref->name (malloc'd in *ret_id): the one remembered when a search
 * and a read checked the name within the recheck period (*ret_remembered = 1, no call), else what
 * a search finds now (remembered from then on). VMOP_E_NOT_FOUND: no library has the name. */
static vmop_rc library_id_of(struct vim_client *c, struct cat_cache *cache, const char *name,
                             char **ret_id, int *ret_remembered, struct vmop_err *err)
{
    vmop_rc rc;

    *ret_remembered = 0;
    if ((*ret_id = known_get(cache, c, name))) {
        *ret_remembered = 1;
        return VMOP_OK;
    }
    rc = vim_library_find(c, name, ret_id, err);
    if (rc == VMOP_OK)
        known_put(cache, c, name, *ret_id);
    return rc;
}

/* Lists one library's items into *ret_list (keeping e2 for the caller). A library referenced by
 * name whose remembered id vCenter no longer knows is searched by name again at once: deleted (and
 * perhaps created anew under the name) between two scans. *ret_id: the id listed (malloc'd). */
static vmop_rc list_library(struct vim_client *c, struct cat_cache *cache,
                            const struct api_library_ref *ref,
                            struct vim_library_item_list *ret_list, char **ret_id,
                            struct vmop_err *e2)
{
    int remembered = 0;
    vmop_rc rc;

    if (ref->id && *ref->id) {
        if (!(*ret_id = strdup(ref->id)))
            return vmop_fail(e2, VMOP_E_NOMEM, "out of memory");
        return vim_library_items(c, *ret_id, ret_list, e2);
    }
    rc = library_id_of(c, cache, ref->name, ret_id, &remembered, e2);
    if (rc == VMOP_OK)
        rc = vim_library_items(c, *ret_id, ret_list, e2);
    if (rc == VMOP_E_NOT_FOUND && remembered) {
        known_forget(cache, c, ref->name);
        free(*ret_id);
        *ret_id = NULL;
        vmop_err_clear(e2);
        rc = library_id_of(c, cache, ref->name, ret_id, &remembered, e2);
        if (rc == VMOP_OK)
            rc = vim_library_items(c, *ret_id, ret_list, e2);
    }
    return rc;
}

/* Reads one library's items into a new list of s; a library vCenter does not know is "missing". */
static vmop_rc read_library(struct vim_client *c, struct cat_cache *cache,
                            const struct api_library_ref *ref, struct cat_scan *s,
                            struct vmop_err *err)
{
    struct vim_library_item_list list = {0}, *nl;
    struct vmop_err e2 = {0};
    char **ni, *id = NULL;
    const char *label = ref->id && *ref->id ? ref->id : ref->name;
    vmop_rc rc;

    if (!label || !*label)
        return vmop_fail(err, VMOP_E_INVALID, "a library reference has neither a name nor an id");
    rc = list_library(c, cache, ref, &list, &id, &e2);
    if (rc == VMOP_E_NOT_FOUND) {
        rc = add_missing(s, label, err);
        goto out;
    }
    if (rc) {
        if (err && !err->rc)
            *err = e2;
        goto out;
    }
    nl = realloc(s->lists, (s->n_lists + 1) * sizeof(*nl));
    if (nl)
        s->lists = nl;
    ni = realloc(s->library_ids, (s->n_lists + 1) * sizeof(*ni));
    if (ni)
        s->library_ids = ni;
    if (!nl || !ni) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    s->lists[s->n_lists] = list;
    s->library_ids[s->n_lists++] = id;
    id = NULL;
    memset(&list, 0, sizeof(list));
out:
    free(id);
    vim_library_item_list_free(&list);
    return rc;
}

vmop_rc cat_vc_scan(struct vim_client *c, struct cat_cache *cache,
                    const struct api_library_ref *libs, size_t n_libs, struct cat_scan *ret_scan,
                    struct vmop_err *err)
{
    struct cat_scan s = {0};
    size_t total = 0, k = 0;
    vmop_rc rc = VMOP_OK;

    if (!c || !ret_scan || (n_libs && !libs))
        return vmop_fail(err, VMOP_E_INVALID, "cat_vc_scan: bad arguments");
    if (n_libs && !(s.ref_list = calloc(n_libs, sizeof(*s.ref_list)))) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    s.n_refs = n_libs;
    for (size_t i = 0; i < n_libs && !rc; i++) {
        size_t before = s.n_lists;
        rc = read_library(c, cache, &libs[i], &s, err);
        s.ref_list[i] = s.n_lists > before ? (long)before : -1;
    }
    if (rc)
        goto out;
    for (size_t i = 0; i < s.n_lists; i++)
        total += s.lists[i].n;
    if (total > CAT_SCAN_MAX_ITEMS) {
        rc = vmop_fail(err, VMOP_E_TOOBIG, "the libraries hold %zu items, more than the %d read",
                       total, CAT_SCAN_MAX_ITEMS);
        goto out;
    }
    if (total) {
        s.entries = calloc(total, sizeof(*s.entries));
        s.items = calloc(total, sizeof(*s.items));
        if (!s.entries || !s.items) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory for %zu library items", total);
            goto out;
        }
    }
    for (size_t i = 0; i < s.n_lists && !rc; i++) {
        for (size_t j = 0; j < s.lists[i].n && !rc; j++) {
            struct cat_scan_entry *e = &s.entries[k];
            const struct vim_library_item *it = &s.lists[i].items[j];
            e->item = it;
            s.n = ++k;
            if (it->type == VIM_ITEM_OVF)
                rc = read_ovf(c, cache, e, err);
            else if (it->type == VIM_ITEM_VM_TEMPLATE)
                rc = read_template(c, cache, e, err);
        }
    }
    if (rc)
        goto out;
    k = 0;
    for (size_t i = 0; i < s.n_lists; i++)
        for (size_t j = 0; j < s.lists[i].n; j++, k++) {
            const struct cat_scan_entry *e = &s.entries[k];
            s.items[k] = (struct cat_item){
                .id = e->item->id,
                .library_id = e->item->library_id && *e->item->library_id ? e->item->library_id
                                                                          : s.library_ids[i],
                .name = e->item->name,
                .type = e->item->type_str,
                .content_version = e->item->content_version,
                .ovf = e->ovf,
                .vm = e->tmpl ? &e->vm : NULL,
                .sync_error = e->sync_error,
            };
        }
    *ret_scan = s;
    return VMOP_OK;
out:
    cat_scan_free(&s);
    return rc;
}
