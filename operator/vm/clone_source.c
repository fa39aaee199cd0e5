/* clone_source.c: one template per content library item, deployed once, found by inventory path.
 * The rules (naming, marker, crash safety) are in clone_source.h. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clone_source.h"
#include "vbuf.h"
#include "vmop_clock.h"
#include "vmop_map.h"

#define CSRC_STRIPES   64
#define CSRC_PATH_MAX  4096
#define CSRC_MARKER    CSRC_MARKER_PREFIX "%s" CSRC_MARKER_MID "%s"
#define CSRC_MARKER_SZ 256

struct csrc_use {
    char name[CSRC_NAME_MAX + 1];
    unsigned n; /* 0: free slot */
};

/* A template found or made recently: "<folder path>|<item id>" -> this, for CSRC_KNOWN_TTL_MS. */
struct csrc_known {
    char item_id[CSRC_NAME_MAX + 1];
    char name[CSRC_NAME_MAX + 1];
    struct vim_moref tmpl;
    int64_t at_ms;
    int disks_known; /* csrc_disks_put was called for tmpl */
    size_t n_disks;  /* <= VIM_MAX_CLONE_DISKS */
    int disk_keys[VIM_MAX_CLONE_DISKS];
};

struct csrc_cache {
    pthread_mutex_t locks[CSRC_STRIPES]; /* item id hash -> stripe: creates of one item serialize */
    pthread_mutex_t use_lock;            /* guards uses */
    struct csrc_use *uses;               /* clones in flight per template name (owned array) */
    size_t n_uses;
    pthread_mutex_t known_lock; /* guards known (a leaf lock) */
    struct vmop_map known;      /* of struct csrc_known (owned) */
};

vmop_rc csrc_new(struct csrc_cache **ret_ic, struct vmop_err *err)
{
    struct csrc_cache *ic = calloc(1, sizeof(*ic));
    if (!ic)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    for (size_t i = 0; i < CSRC_STRIPES; i++)
        pthread_mutex_init(&ic->locks[i], NULL);
    pthread_mutex_init(&ic->use_lock, NULL);
    pthread_mutex_init(&ic->known_lock, NULL);
    vmop_map_init(&ic->known, free);
    *ret_ic = ic;
    return VMOP_OK;
}

void csrc_free(struct csrc_cache *ic)
{
    if (!ic)
        return;
    for (size_t i = 0; i < CSRC_STRIPES; i++)
        pthread_mutex_destroy(&ic->locks[i]);
    pthread_mutex_destroy(&ic->use_lock);
    vmop_map_clear(&ic->known);
    pthread_mutex_destroy(&ic->known_lock);
    free(ic->uses);
    free(ic);
}

static int name_char_ok(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '-' || ch == '_' || ch == '.';
}

vmop_rc csrc_template_name(const char *item_id, const char *content_version, char *buf, size_t size,
                           struct vmop_err *err)
{
    struct vbuf b;
    vmop_rc rc;

    if (!item_id || !*item_id || !buf || size == 0)
        return vmop_fail(err, VMOP_E_INVALID, "image cache: no library item id");
    vbuf_init(&b, CSRC_NAME_MAX);
    vbuf_adds(&b, CSRC_NAME_PREFIX);
    for (const char *p = item_id; *p; p++)
        vbuf_add(&b, name_char_ok(*p) ? p : "_", 1);
    if (content_version && *content_version) {
        vbuf_adds(&b, "-");
        for (const char *p = content_version; *p; p++)
            vbuf_add(&b, name_char_ok(*p) ? p : "_", 1);
    }
    rc = vbuf_error(&b);
    if (rc || b.len >= size) {
        vbuf_free(&b);
        return vmop_fail(err, VMOP_E_INVALID,
                         "image cache: library item id too long for a VM name (%d bytes)",
                         CSRC_NAME_MAX);
    }
    memcpy(buf, vbuf_str(&b), b.len + 1);
    vbuf_free(&b);
    return VMOP_OK;
}

int csrc_marker_parse(const char *text, char *item_id, size_t item_size, char *version,
                      size_t version_size)
{
    const char *p, *mid;
    size_t pl = strlen(CSRC_MARKER_PREFIX), il, vl;

    if (!text || strncmp(text, CSRC_MARKER_PREFIX, pl) != 0)
        return 0;
    p = text + pl;
    mid = strstr(p, CSRC_MARKER_MID);
    if (!mid || mid == p || strstr(mid + 1, CSRC_MARKER_MID))
        return 0;
    il = (size_t)(mid - p);
    vl = strlen(mid + strlen(CSRC_MARKER_MID));
    if (il >= item_size || vl >= version_size)
        return 0;
    memcpy(item_id, p, il);
    item_id[il] = '\0';
    memcpy(version, mid + strlen(CSRC_MARKER_MID), vl + 1);
    return 1;
}

static unsigned stripe_of(const char *s)
{
    unsigned h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % CSRC_STRIPES;
}

/* Makes a freshly deployed (or half-finished) cache VM a template carrying the marker. */
static vmop_rc finish(struct vim_client *c, const struct vim_moref *vm, const char *marker,
                      struct vmop_err *err)
{
    struct vim_config_spec *cs = NULL;
    struct vim_vm *v = NULL;
    vmop_rc rc;

    rc = vim_vm_get(c, vm, &v, err);
    if (rc)
        goto out;
    if (v->template) {
        if (!v->annotation || strcmp(v->annotation, marker) != 0)
            rc = vmop_fail(err, VMOP_E_EXISTS,
                           "template %s (%s) was not made by vmop's image cache: not used",
                           v->name ? v->name : "", vm->value);
        goto out;
    }
    if (v->power_state == VIM_POWER_ON || v->power_state == VIM_POWER_SUSPENDED) {
        rc = vim_vm_power(c, vm, VIM_OP_POWER_OFF, err);
        if (rc == VMOP_E_FAULT && vmop_err_is_fault(err, "InvalidPowerState")) {
            vmop_err_clear(err);
            rc = VMOP_OK;
        }
        if (rc)
            goto out;
    }
    rc = vim_config_spec_new(&cs);
    if (rc) {
        rc = vmop_fail(err, rc, "out of memory");
        goto out;
    }
    rc = vim_cs_annotation(cs, marker);
    if (rc) {
        rc = vmop_fail(err, rc, "image cache: annotation: %s", vmop_rc_str(rc));
        goto out;
    }
    rc = vim_vm_reconfigure(c, vm, cs, err);
    if (!rc)
        rc = vim_vm_mark_as_template(c, vm, err);
out:
    vim_config_spec_free(cs);
    vim_vm_free(v);
    return rc;
}

static vmop_rc get_locked(struct vim_client *c, const struct csrc_target *t, const char *name,
                          const char *marker, struct vim_moref *ret_template, struct vmop_err *err)
{
    char path[CSRC_PATH_MAX];
    size_t fl = strlen(t->folder_path);
    struct vim_moref vm;
    struct vim_deploy_spec ds = {0};
    vmop_rc rc;
    int n;

    while (fl > 1 && t->folder_path[fl - 1] == '/')
        fl--;
    n = snprintf(path, sizeof(path), "%.*s/%s", (int)fl, t->folder_path, name);
    if (n < 0 || (size_t)n >= sizeof(path))
        return vmop_fail(err, VMOP_E_INVALID, "image cache: folder path too long");
    rc = vim_find_by_path(c, path, "VirtualMachine", &vm, err);
    if (rc == VMOP_OK) {
        rc = finish(c, &vm, marker, err);
        if (!rc)
            *ret_template = vm;
        return rc;
    }
    if (rc != VMOP_E_NOT_FOUND)
        return rc;
    vmop_err_clear(err);
    ds.name = name;
    ds.resource_pool_id = t->pool->value;
    ds.folder_id = t->folder->value;
    ds.datastore_id = t->datastore && vim_moref_is_set(t->datastore) ? t->datastore->value : NULL;
    rc = vim_library_deploy(c, t->item_id, &ds, &vm, err);
    if (rc)
        return rc;
    rc = finish(c, &vm, marker, err);
    if (!rc)
        *ret_template = vm;
    return rc;
}

static unsigned long activity; /* atomic; csrc_activity() */

unsigned long csrc_activity(void)
{
    return __atomic_load_n(&activity, __ATOMIC_ACQUIRE);
}

/* Takes a use of name (under the item's lock). */
static vmop_rc use_take(struct csrc_cache *ic, const char *name, struct vmop_err *err)
{
    struct csrc_use *slot = NULL;
    vmop_rc rc = VMOP_OK;

    pthread_mutex_lock(&ic->use_lock);
    for (size_t i = 0; i < ic->n_uses; i++) {
        if (ic->uses[i].n && strcmp(ic->uses[i].name, name) == 0) {
            slot = &ic->uses[i];
            break;
        }
        if (!ic->uses[i].n && !slot)
            slot = &ic->uses[i];
    }
    if (slot && !slot->n)
        snprintf(slot->name, sizeof(slot->name), "%s", name);
    if (!slot) {
        struct csrc_use *nu = realloc(ic->uses, (ic->n_uses + 8) * sizeof(*nu));
        if (!nu) {
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
            goto out;
        }
        memset(nu + ic->n_uses, 0, 8 * sizeof(*nu));
        ic->uses = nu;
        slot = &ic->uses[ic->n_uses];
        ic->n_uses += 8;
        snprintf(slot->name, sizeof(slot->name), "%s", name);
    }
    slot->n++;
    __atomic_add_fetch(&activity, 1, __ATOMIC_ACQ_REL);
out:
    pthread_mutex_unlock(&ic->use_lock);
    return rc;
}

void csrc_put(struct csrc_hold *h)
{
    if (!h || !h->ic || !h->name[0])
        return;
    pthread_mutex_lock(&h->ic->use_lock);
    for (size_t i = 0; i < h->ic->n_uses; i++) {
        struct csrc_use *u = &h->ic->uses[i];
        if (u->n && strcmp(u->name, h->name) == 0) {
            u->n--;
            __atomic_add_fetch(&activity, 1, __ATOMIC_ACQ_REL);
            break;
        }
    }
    pthread_mutex_unlock(&h->ic->use_lock);
    memset(h, 0, sizeof(*h));
}

unsigned csrc_uses(struct csrc_cache *ic, const char *name)
{
    unsigned n = 0;
    if (!ic || !name)
        return 0;
    pthread_mutex_lock(&ic->use_lock);
    for (size_t i = 0; i < ic->n_uses; i++)
        if (ic->uses[i].n && strcmp(ic->uses[i].name, name) == 0)
            n = ic->uses[i].n;
    pthread_mutex_unlock(&ic->use_lock);
    return n;
}

void csrc_lock_item(struct csrc_cache *ic, const char *item_id)
{
    pthread_mutex_lock(&ic->locks[stripe_of(item_id)]);
}

void csrc_unlock_item(struct csrc_cache *ic, const char *item_id)
{
    pthread_mutex_unlock(&ic->locks[stripe_of(item_id)]);
}

static void known_key(const struct csrc_target *t, char *key, size_t size)
{
    snprintf(key, size, "%s|%s", t->folder_path, t->item_id);
}

/* 1 and the template when t's was found or made less than CSRC_KNOWN_TTL_MS ago. */
static int known_get(struct csrc_cache *ic, const struct csrc_target *t, char *name,
                     struct vim_moref *ret)
{
    char key[CSRC_PATH_MAX];
    const struct csrc_known *k;
    int hit = 0;
    known_key(t, key, sizeof(key));
    pthread_mutex_lock(&ic->known_lock);
    k = vmop_map_get(&ic->known, key);
    if (k && vmop_mono_ms() - k->at_ms < CSRC_KNOWN_TTL_MS) {
        memcpy(name, k->name, sizeof(k->name));
        *ret = k->tmpl;
        hit = 1;
    }
    pthread_mutex_unlock(&ic->known_lock);
    return hit;
}

/* Remembers t's template (best effort: out of memory only means looking again next time). */
static void known_put(struct csrc_cache *ic, const struct csrc_target *t, const char *name,
                      const struct vim_moref *tmpl)
{
    char key[CSRC_PATH_MAX];
    struct csrc_known *k = calloc(1, sizeof(*k));
    if (!k)
        return;
    snprintf(k->item_id, sizeof(k->item_id), "%s", t->item_id);
    snprintf(k->name, sizeof(k->name), "%s", name);
    k->tmpl = *tmpl;
    k->at_ms = vmop_mono_ms();
    known_key(t, key, sizeof(key));
    pthread_mutex_lock(&ic->known_lock);
    if (vmop_map_put(&ic->known, key, k) != VMOP_OK)
        free(k);
    pthread_mutex_unlock(&ic->known_lock);
}

int csrc_disks_get(struct csrc_cache *ic, const struct csrc_target *t, const struct vim_moref *tmpl,
                   int *keys, size_t *ret_n)
{
    char key[CSRC_PATH_MAX];
    const struct csrc_known *k;
    int hit = 0;
    if (!ic || !t || !tmpl || !keys || !ret_n)
        return 0;
    known_key(t, key, sizeof(key));
    pthread_mutex_lock(&ic->known_lock);
    k = vmop_map_get(&ic->known, key);
    if (k && k->disks_known && vim_moref_eq(&k->tmpl, tmpl) &&
        vmop_mono_ms() - k->at_ms < CSRC_KNOWN_TTL_MS) {
        memcpy(keys, k->disk_keys, k->n_disks * sizeof(*keys));
        *ret_n = k->n_disks;
        hit = 1;
    }
    pthread_mutex_unlock(&ic->known_lock);
    return hit;
}

void csrc_disks_put(struct csrc_cache *ic, const struct csrc_target *t,
                    const struct vim_moref *tmpl, const int *keys, size_t n)
{
    char key[CSRC_PATH_MAX];
    struct csrc_known *k;
    if (!ic || !t || !tmpl || (!keys && n) || n > VIM_MAX_CLONE_DISKS)
        return;
    known_key(t, key, sizeof(key));
    pthread_mutex_lock(&ic->known_lock);
    k = vmop_map_get(&ic->known, key);
    if (k && vim_moref_eq(&k->tmpl, tmpl)) {
        if (n)
            memcpy(k->disk_keys, keys, n * sizeof(*keys));
        k->n_disks = n;
        k->disks_known = 1;
    }
    pthread_mutex_unlock(&ic->known_lock);
}

void csrc_forget(struct csrc_cache *ic, const char *item_id)
{
    struct vmop_map_iter it;
    char *keys[64];
    size_t n;
    if (!ic || !item_id)
        return;
    pthread_mutex_lock(&ic->known_lock);
    do { /* at most 64 keys per walk: no removal while iterating */
        n = 0;
        for (struct vmop_map_entry *e = vmop_map_first(&ic->known, &it); e && n < 64;
             e = vmop_map_next(&ic->known, &it))
            if (!strcmp(((const struct csrc_known *)e->val)->item_id, item_id))
                keys[n++] = e->key;
        for (size_t i = 0; i < n; i++) {
            char *key = strdup(keys[i]);
            if (!key)
                break; /* out of memory: the TTL ends it */
            vmop_map_del(&ic->known, key);
            free(key);
        }
    } while (n == 64);
    pthread_mutex_unlock(&ic->known_lock);
}

void csrc_forget_all(struct csrc_cache *ic)
{
    if (!ic)
        return;
    pthread_mutex_lock(&ic->known_lock);
    vmop_map_clear(&ic->known);
    pthread_mutex_unlock(&ic->known_lock);
}

vmop_rc csrc_get(struct csrc_cache *ic, struct vim_client *c, const struct csrc_target *t,
                 struct vim_moref *ret_template, struct csrc_hold *ret_hold, struct vmop_err *err)
{
    struct vim_library_item *item = NULL;
    char name[CSRC_NAME_MAX + 1], marker[CSRC_MARKER_SZ];
    pthread_mutex_t *lock;
    vmop_rc rc;

    if (ret_hold)
        memset(ret_hold, 0, sizeof(*ret_hold));
    if (!ic || !c || !t || !t->item_id || !t->folder_path || !t->folder || !t->pool ||
        !ret_template || !ret_hold)
        return vmop_fail(err, VMOP_E_INVALID, "csrc_get: missing argument");
    lock = &ic->locks[stripe_of(t->item_id)];
    pthread_mutex_lock(lock);
    if (known_get(ic, t, name, ret_template)) {
        rc = use_take(ic, name, err);
        if (!rc) {
            ret_hold->ic = ic;
            memcpy(ret_hold->name, name, sizeof(ret_hold->name));
        }
        pthread_mutex_unlock(lock);
        return rc;
    }
    pthread_mutex_unlock(lock);
    rc = vim_library_item_get(c, t->item_id, &item, err);
    if (rc)
        return rc;
    if (item->type != VIM_ITEM_OVF && item->type != VIM_ITEM_VM_TEMPLATE) {
        rc = vmop_fail_fault(err, VMOP_E_UNSUPPORTED, "NotSupported", 0,
                             "library item %s is of type %s: only ovf and vm-template items can "
                             "be deployed",
                             t->item_id, item->type_str ? item->type_str : "unknown");
        goto out;
    }
    rc = csrc_template_name(t->item_id, item->content_version, name, sizeof(name), err);
    if (rc)
        goto out;
    snprintf(marker, sizeof(marker), CSRC_MARKER, t->item_id,
             item->content_version ? item->content_version : "");
    pthread_mutex_lock(lock);
    rc = get_locked(c, t, name, marker, ret_template, err);
    if (!rc)
        known_put(ic, t, name, ret_template);
    if (!rc)
        rc = use_take(ic, name, err);
    if (!rc) {
        ret_hold->ic = ic;
        memcpy(ret_hold->name, name, sizeof(ret_hold->name));
    }
    pthread_mutex_unlock(lock);
out:
    vim_library_item_free(item);
    return rc;
}
