/* ta_gc.c: kube-testapi's background garbage collector thread. Woken when an object with
 * ownerReferences is written or anything is deleted, it (1) deletes objects whose owners (by uid)
 * are all gone, (2) finishes Foreground deletions (deletes dependents, then drops the
 * foregroundDeletion finalizer) and Orphan deletions (strips ownerReferences, drops the orphan
 * finalizer), and (3) empties terminating namespaces and then removes them. Runs with the store
 * lock held for one pass at a time. */
#include "ta_http.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct cand {
    struct ta_rtype *rt;
    char *key;
    int what; /* 0 orphaned dependent, 1 foreground owner, 2 orphan owner, 3 namespace */
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int uid_live(const char **uids, size_t n, const char *uid)
{
    return uid && bsearch(&uid, uids, n, sizeof(*uids), cmp_str) != NULL;
}

static const cJSON *owner_refs(const cJSON *obj)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
                                            "ownerReferences");
}

static int owned_by(const cJSON *obj, const char *uid)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, owner_refs(obj))
    {
        const char *u = ta_jstr(r, "uid");
        if (u && strcmp(u, uid) == 0)
            return 1;
    }
    return 0;
}

static int has_fin(const cJSON *obj, const char *f)
{
    const cJSON *it, *fs = cJSON_GetObjectItemCaseSensitive(
                         cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "finalizers");
    cJSON_ArrayForEach(it, fs) if (cJSON_IsString(it) && strcmp(it->valuestring, f) == 0) return 1;
    return 0;
}

/* Writes obj without finalizer f (and, with strip_uid, without owner references to that uid). */
static void rewrite(struct ta_server *s, struct ta_rtype *rt, struct ta_obj *cur, const char *fin,
                    const char *strip_uid)
{
    cJSON *n = cJSON_Duplicate(cur->json, 1), *m, *arr, *it, *next;
    struct ta_obj *o = NULL;
    struct vmop_err e = {0};
    if (!n)
        return;
    m = ta_jobj(n, "metadata", 1);
    arr = cJSON_GetObjectItemCaseSensitive(m, fin ? "finalizers" : "ownerReferences");
    for (it = arr ? arr->child : NULL; it; it = next) {
        next = it->next;
        if ((fin && cJSON_IsString(it) && strcmp(it->valuestring, fin) == 0) ||
            (strip_uid && ta_jstr(it, "uid") && strcmp(ta_jstr(it, "uid"), strip_uid) == 0))
            cJSON_Delete(cJSON_DetachItemViaPointer(arr, it));
    }
    if (arr && cJSON_GetArraySize(arr) == 0)
        cJSON_DeleteItemFromObjectCaseSensitive(m, fin ? "finalizers" : "ownerReferences");
    if (ta_update_locked(s, NULL, rt, ta_rtype_storage_version(rt), cur, n, 0, 0, &o, &e) ==
        VMOP_OK)
        ta_obj_unref(o);
}

/* One pass; returns 1 when it changed something. Lock held. */
static int gc_pass(struct ta_server *s)
{
    struct ta_store *st = &s->st;
    const char **uids = NULL;
    struct cand *cands = NULL;
    size_t n_uids = 0, n_c = 0, cap_c = 0, i, j, t;
    int changed = 0;
    for (t = 0; t < st->n_types; t++)
        n_uids += st->types[t]->n_objs;
    uids = malloc((n_uids + 1) * sizeof(*uids));
    if (!uids)
        return 0;
    n_uids = 0;
    for (t = 0; t < st->n_types; t++)
        for (i = 0; i < st->types[t]->n_objs; i++)
            uids[n_uids++] = st->types[t]->objs[i]->uid;
    qsort(uids, n_uids, sizeof(*uids), cmp_str);
    for (t = 0; t < st->n_types; t++) {
        struct ta_rtype *rt = st->types[t];
        for (i = 0; i < rt->n_objs; i++) {
            struct ta_obj *o = rt->objs[i];
            const cJSON *refs = owner_refs(o->json), *r;
            int what = -1;
            if (cJSON_GetArraySize(refs) > 0 && !ta_meta_str(o->json, "deletionTimestamp")) {
                int live = 0;
                cJSON_ArrayForEach(r, refs) if (uid_live(uids, n_uids, ta_jstr(r, "uid"))) live = 1;
                if (!live)
                    what = 0;
            }
            if (ta_meta_str(o->json, "deletionTimestamp")) {
                if (has_fin(o->json, "foregroundDeletion"))
                    what = 1;
                else if (has_fin(o->json, "orphan"))
                    what = 2;
                else if (ta_rtype_is(rt, "", "namespaces"))
                    what = 3;
            }
            if (what < 0)
                continue;
            if (n_c == cap_c) {
                size_t nc = cap_c ? cap_c * 2 : 32;
                struct cand *c = realloc(cands, nc * sizeof(*c));
                if (!c)
                    goto out;
                cands = c;
                cap_c = nc;
            }
            cands[n_c].rt = rt;
            cands[n_c].key = strdup(o->key);
            cands[n_c].what = what;
            if (!cands[n_c].key)
                goto out;
            n_c++;
        }
    }
    for (j = 0; j < n_c; j++) {
        struct ta_rtype *rt = cands[j].rt;
        struct ta_obj *cur = ta_rtype_get(rt, cands[j].key), *o = NULL;
        struct vmop_err e = {0};
        size_t deps = 0;
        if (!cur)
            continue;
        if (cands[j].what == 0) {
            if (ta_delete_locked(s, rt, cur, "Background", &o, &e) == VMOP_OK) {
                ta_obj_unref(o);
                changed = 1;
            }
            continue;
        }
        /* owners being deleted (foreground/orphan) and terminating namespaces */
        ta_obj_ref(cur);
        for (t = 0; t < st->n_types; t++) {
            struct ta_rtype *dt = st->types[t];
            for (i = 0; i < dt->n_objs;) {
                struct ta_obj *d = dt->objs[i];
                size_t before = dt->n_objs;
                int hit = cands[j].what == 3 ? dt->namespaced && strcmp(d->ns, cur->name) == 0
                                             : owned_by(d->json, cur->uid);
                if (!hit) {
                    i++;
                    continue;
                }
                deps++;
                if (cands[j].what == 2) {
                    rewrite(s, dt, d, NULL, cur->uid);
                    changed = 1;
                } else if (!ta_meta_str(d->json, "deletionTimestamp")) {
                    if (ta_delete_locked(s, dt, d, "Background", &o, &e) == VMOP_OK) {
                        ta_obj_unref(o);
                        o = NULL;
                        changed = 1;
                    }
                    vmop_err_clear(&e);
                }
                if (dt->n_objs == before)
                    i++;
            }
        }
        if (cands[j].what == 2 || deps == 0) {
            struct ta_obj *now = ta_rtype_get(rt, cands[j].key);
            if (now && cands[j].what == 3) {
                if (ta_store_remove(st, rt, now->key, NULL, &e) == VMOP_OK)
                    changed = 1;
            } else if (now) {
                rewrite(s, rt, now, cands[j].what == 1 ? "foregroundDeletion" : "orphan", NULL);
                changed = 1;
            }
        }
        ta_obj_unref(cur);
    }
out:
    for (j = 0; j < n_c; j++)
        free(cands[j].key);
    free(cands);
    free(uids);
    return changed;
}

static void *gc_main(void *arg)
{
    struct ta_server *s = arg;
    struct ta_store *st = &s->st;
    pthread_mutex_lock(&st->lock);
    while (!st->shutting_down) {
        if (st->gc_dirty) {
            int rounds = 0;
            st->gc_dirty = 0;
            while (rounds++ < 16 && gc_pass(s))
                ;
            /* the pass itself marks the store dirty; do not spin on our own writes */
            st->gc_dirty = 0;
            /* terminating namespaces whose content still has finalizers need another look */
            {
                struct ta_rtype *ns = ta_store_find_type(st, "", "namespaces");
                size_t i;
                for (i = 0; ns && i < ns->n_objs; i++)
                    if (ta_meta_str(ns->objs[i]->json, "deletionTimestamp"))
                        st->gc_dirty = 1;
            }
        }
        {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 200 * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&st->gc_wake, &st->lock, &ts);
        }
    }
    pthread_mutex_unlock(&st->lock);
    return NULL;
}

vmop_rc ta_gc_start(struct ta_server *s, pthread_t *ret_thread, struct vmop_err *err)
{
    if (pthread_create(ret_thread, NULL, gc_main, s) != 0)
        return vmop_fail(err, VMOP_E_INTERNAL, "cannot start the garbage collector thread");
    return VMOP_OK;
}
