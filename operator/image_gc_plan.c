/* image_gc_plan.c: the image cache collector's decision (see image_gc_plan.h). Pure. */
#include "image_gc_plan.h"

#include <string.h>

#include "imgcache.h"

const char *igc_verdict_str(enum igc_verdict v)
{
    switch (v) {
    case IGC_FOREIGN:
        return "foreign";
    case IGC_KEEP:
        return "current";
    case IGC_SUPERSEDED:
        return "superseded";
    case IGC_REMOVED:
        return "item removed";
    case IGC_UNBOUND:
        return "folder unbound";
    case IGC_DUPLICATE:
        return "duplicate";
    }
    return "?";
}

int igc_is_garbage(enum igc_verdict v)
{
    return v == IGC_SUPERSEDED || v == IGC_REMOVED || v == IGC_UNBOUND || v == IGC_DUPLICATE;
}

static int str_eq0(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* 1 when vm is one of vmop's cache templates; item / version: the marker's. */
static int cache_template(const struct igc_vm *vm, char *item, size_t isz, char *ver, size_t vsz)
{
    char want[IC_NAME_MAX + 1];
    if (!vm->name || strncmp(vm->name, IC_NAME_PREFIX, strlen(IC_NAME_PREFIX)) != 0 ||
        vm->resource_marks || !ic_marker_parse(vm->annotation, item, isz, ver, vsz))
        return 0;
    if (ic_template_name(item, ver, want, sizeof(want), NULL) != VMOP_OK)
        return 0;
    return strcmp(want, vm->name) == 0;
}

void igc_decide(const struct igc_vm *vms, size_t n_vms, const struct igc_live *live, size_t n_live,
                int bound, enum igc_verdict *verdicts)
{
    for (size_t i = 0; i < n_vms; i++) {
        char item[IC_NAME_MAX + 1], ver[IC_NAME_MAX + 1];
        const struct igc_live *cur = NULL;

        verdicts[i] = IGC_FOREIGN;
        if (!cache_template(&vms[i], item, sizeof(item), ver, sizeof(ver)))
            continue;
        if (!bound) {
            verdicts[i] = IGC_UNBOUND;
            continue;
        }
        for (size_t k = 0; k < n_live && !cur; k++)
            if (live[k].item_id && strcmp(live[k].item_id, item) == 0)
                cur = &live[k];
        if (!cur)
            verdicts[i] = IGC_REMOVED;
        else if (!str_eq0(cur->content_version, ver))
            verdicts[i] = IGC_SUPERSEDED;
        else
            verdicts[i] = IGC_KEEP;
    }
    /* of several current templates of one name, the smallest moref stays */
    for (size_t i = 0; i < n_vms; i++) {
        if (verdicts[i] != IGC_KEEP)
            continue;
        for (size_t k = 0; k < n_vms; k++) {
            if (k == i || verdicts[k] != IGC_KEEP || strcmp(vms[k].name, vms[i].name) != 0)
                continue;
            int c = strcmp(vms[k].ref.value, vms[i].ref.value);
            if (strlen(vms[k].ref.value) != strlen(vms[i].ref.value))
                c = strlen(vms[k].ref.value) < strlen(vms[i].ref.value) ? -1 : 1;
            if (c < 0 || (c == 0 && k < i)) {
                verdicts[i] = IGC_DUPLICATE;
                break;
            }
        }
    }
}
