/* clone_source_gc.c: destroying the garbage image cache templates of one folder (see
 * clone_source_gc.h). */
#include "clone_source_gc.h"
#include "vmop_clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ownership.h"

struct csgc_seen {
    char key[CSRC_NAME_MAX + VIM_MOREF_VALUE_MAX + 2]; /* name@moref */
    double first;                                      /* monotonic seconds first seen garbage */
    unsigned long gen;                                 /* last sweep that saw it garbage */
};

struct csgc_state {
    struct csgc_opts o;
    struct csgc_seen *seen;
    size_t n, cap;
    unsigned long gen;
};

/* the monotonic clock in seconds (vmop_clock.h) */
static double now_s(void)
{
    return (double)vmop_mono_ms() / 1000.0;
}

vmop_rc csgc_state_new(const struct csgc_opts *o, struct csgc_state **ret, struct vmop_err *err)
{
    struct csgc_state *s = calloc(1, sizeof(*s));
    if (!s)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory");
    if (o)
        s->o = *o;
    if (s->o.grace_s < 0)
        s->o.grace_s = 0;
    s->gen = 1;
    *ret = s;
    return VMOP_OK;
}

void csgc_state_free(struct csgc_state *s)
{
    if (!s)
        return;
    free(s->seen);
    free(s);
}

void csgc_sweep_begin(struct csgc_state *s)
{
    s->gen++;
}

void csgc_sweep_end(struct csgc_state *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->seen[i].gen == s->gen)
            s->seen[k++] = s->seen[i];
    s->n = k;
}

/* Seconds the template has been garbage (0 the first time). An allocation failure gives 0: the
 * template waits. */
static double garbage_for(struct csgc_state *s, const char *name, const struct vim_moref *ref)
{
    char key[sizeof(s->seen[0].key)];
    double t = now_s();
    snprintf(key, sizeof(key), "%s@%s", name, ref->value);
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->seen[i].key, key) == 0) {
            s->seen[i].gen = s->gen;
            return t - s->seen[i].first;
        }
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 16;
        struct csgc_seen *ns = realloc(s->seen, nc * sizeof(*ns));
        if (!ns)
            return 0;
        s->seen = ns;
        s->cap = nc;
    }
    memcpy(s->seen[s->n].key, key, sizeof(key));
    s->seen[s->n].first = t;
    s->seen[s->n].gen = s->gen;
    s->n++;
    return 0;
}

static void note(struct csgc_state *s, const struct csgc_vm *vm, enum csgc_verdict v,
                 const char *what, const struct vmop_err *e)
{
    if (s->o.note)
        s->o.note(s->o.note_ud, vm->name, vm->ref.value, v, what, e);
}

/* Destroys one garbage template unless a clone runs from it; under the item's lock. */
static const char *destroy_one(struct csrc_cache *ic, struct vim_client *c,
                               const struct csgc_vm *vm, enum vim_power_state power,
                               struct vmop_err *e)
{
    char item[CSRC_NAME_MAX + 1], ver[CSRC_NAME_MAX + 1];
    const char *what = "collected";
    int busy = 0;
    vmop_rc rc;

    if (!csrc_marker_parse(vm->annotation, item, sizeof(item), ver, sizeof(ver)))
        return "failed"; /* not reached: the decision parsed it */
    if (ic)
        csrc_lock_item(ic, item);
    if (ic && csrc_uses(ic, vm->name) > 0) {
        what = "in use";
        goto out;
    }
    rc = vim_entity_busy(c, &vm->ref, &busy, e);
    if (rc == VMOP_OK && busy) {
        what = "busy";
        goto out;
    }
    if (rc == VMOP_OK && (power == VIM_POWER_ON || power == VIM_POWER_SUSPENDED)) {
        rc = vim_vm_power(c, &vm->ref, VIM_OP_POWER_OFF, e); /* a half-finished deploy */
        if (rc == VMOP_E_FAULT && vmop_err_is_fault(e, "InvalidPowerState")) {
            vmop_err_clear(e);
            rc = VMOP_OK;
        }
    }
    if (rc == VMOP_OK) {
        rc = vim_vm_destroy(c, &vm->ref, e);
        csrc_forget(ic, item); /* the next clone of the item looks for its template again */
    }
    if (rc == VMOP_E_NOT_FOUND) { /* gone meanwhile */
        vmop_err_clear(e);
        rc = VMOP_OK;
    }
    if (rc != VMOP_OK)
        what = "failed";
out:
    if (ic)
        csrc_unlock_item(ic, item);
    return what;
}

vmop_rc csgc_collect_folder(struct csgc_state *s, struct csrc_cache *ic, struct vim_client *c,
                            const struct vim_moref *folder, const struct csgc_live *live,
                            size_t n_live, int bound, struct csgc_result *res, struct vmop_err *err)
{
    struct vim_entity_list l = {0};
    struct vim_vm **read = NULL;
    struct csgc_vm *vms = NULL;
    enum csgc_verdict *verdicts = NULL;
    size_t n = 0;
    vmop_rc rc;

    if (!s || !c || !folder || !res || (n_live && !live))
        return vmop_fail(err, VMOP_E_INVALID, "csgc_collect_folder: missing argument");
    rc = vim_list(c, folder, "VirtualMachine", &l, err);
    if (rc)
        return rc;
    read = calloc(l.n + 1, sizeof(*read));
    vms = calloc(l.n + 1, sizeof(*vms));
    verdicts = calloc(l.n + 1, sizeof(*verdicts));
    if (!read || !vms || !verdicts) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < l.n; i++) {
        struct vmop_err e = {0};
        struct vim_vm *v = NULL;
        const char *nm = l.items[i].name;
        if (!nm || strncmp(nm, CSRC_NAME_PREFIX, strlen(CSRC_NAME_PREFIX)) != 0)
            continue;
        rc = vim_vm_get(c, &l.items[i].ref, &v, &e);
        if (rc == VMOP_E_NOT_FOUND)
            continue; /* gone meanwhile */
        if (rc) {
            if (err)
                *err = e;
            goto out;
        }
        if (!vim_moref_eq(&v->parent, folder)) { /* in a subfolder: not this folder's */
            vim_vm_free(v);
            continue;
        }
        read[n] = v;
        vms[n] = (struct csgc_vm){
            .name = v->name,
            .annotation = v->annotation,
            .ref = v->ref,
            .resource_marks = vim_vm_extra_config(v, OWN_KEY_UID) != NULL ||
                              vim_vm_extra_config(v, OWN_KEY_NAMESPACED) != NULL,
        };
        n++;
    }
    rc = VMOP_OK;
    csgc_decide(vms, n, live, n_live, bound, verdicts);
    for (size_t i = 0; i < n; i++) {
        struct vmop_err e = {0};
        const char *what;
        if (verdicts[i] == CSGC_FOREIGN)
            continue;
        res->templates++;
        if (!csgc_is_garbage(verdicts[i]))
            continue;
        res->garbage++;
        if (garbage_for(s, vms[i].name, &vms[i].ref) < (double)s->o.grace_s)
            what = "waiting";
        else
            what = destroy_one(ic, c, &vms[i], read[i]->power_state, &e);
        if (!strcmp(what, "collected"))
            res->collected++;
        else if (!strcmp(what, "waiting"))
            res->waiting++;
        else if (!strcmp(what, "in use"))
            res->in_use++;
        else if (!strcmp(what, "busy"))
            res->busy++;
        else
            res->failed++;
        note(s, &vms[i], verdicts[i], what, e.rc ? &e : NULL);
    }
out:
    for (size_t i = 0; read && i < n; i++)
        vim_vm_free(read[i]);
    free(read);
    free(vms);
    free(verdicts);
    vim_entity_list_free(&l);
    return rc;
}
