/* clone_source_gc_plan.c: the image cache collector's decision (see clone_source_gc_plan.h). Pure.
 */
#include "clone_source_gc_plan.h"

#include <string.h>

#include "clone_source.h"

const char *csgc_verdict_str(enum csgc_verdict v)
{
    switch (v) {
    case CSGC_FOREIGN:
        return "foreign";
    case CSGC_KEEP:
        return "current";
    case CSGC_SUPERSEDED:
        return "superseded";
    case CSGC_REMOVED:
        return "item removed";
    case CSGC_UNBOUND:
        return "folder unbound";
    case CSGC_DUPLICATE:
        return "duplicate";
    }
    return "?";
}

int csgc_is_garbage(enum csgc_verdict v)
{
    return v == CSGC_SUPERSEDED || v == CSGC_REMOVED || v == CSGC_UNBOUND || v == CSGC_DUPLICATE;
}

static int str_eq0(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* 1 when vm is one of vmop's cache templates; item / version: the marker's. */
static int cache_template(const struct csgc_vm *vm, char *item, size_t isz, char *ver, size_t vsz)
{
    char want[CSRC_NAME_MAX + 1];
    if (!vm->name || strncmp(vm->name, CSRC_NAME_PREFIX, strlen(CSRC_NAME_PREFIX)) != 0 ||
        vm->resource_marks || !csrc_marker_parse(vm->annotation, item, isz, ver, vsz))
        return 0;
    if (csrc_template_name(item, ver, want, sizeof(want), NULL) != VMOP_OK)
        return 0;
    return strcmp(want, vm->name) == 0;
}

void csgc_decide(const struct csgc_vm *vms, size_t n_vms, const struct csgc_live *live,
                 size_t n_live, int bound, enum csgc_verdict *verdicts)
{
    for (size_t i = 0; i < n_vms; i++) {
        char item[CSRC_NAME_MAX + 1], ver[CSRC_NAME_MAX + 1];
        const struct csgc_live *cur = NULL;

        verdicts[i] = CSGC_FOREIGN;
        if (!cache_template(&vms[i], item, sizeof(item), ver, sizeof(ver)))
            continue;
        if (!bound) {
            verdicts[i] = CSGC_UNBOUND;
            continue;
        }
        for (size_t k = 0; k < n_live && !cur; k++)
            if (live[k].item_id && strcmp(live[k].item_id, item) == 0)
                cur = &live[k];
        if (!cur)
            verdicts[i] = CSGC_REMOVED;
        else if (!str_eq0(cur->content_version, ver))
            verdicts[i] = CSGC_SUPERSEDED;
        else
            verdicts[i] = CSGC_KEEP;
    }
    /* of several current templates of one name, the smallest moref stays */
    for (size_t i = 0; i < n_vms; i++) {
        if (verdicts[i] != CSGC_KEEP)
            continue;
        for (size_t k = 0; k < n_vms; k++) {
            if (k == i || verdicts[k] != CSGC_KEEP || strcmp(vms[k].name, vms[i].name) != 0)
                continue;
            int c = strcmp(vms[k].ref.value, vms[i].ref.value);
            if (strlen(vms[k].ref.value) != strlen(vms[i].ref.value))
                c = strlen(vms[k].ref.value) < strlen(vms[i].ref.value) ? -1 : 1;
            if (c < 0 || (c == 0 && k < i)) {
                verdicts[i] = CSGC_DUPLICATE;
                break;
            }
        }
    }
}
