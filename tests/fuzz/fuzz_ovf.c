/* fuzz_ovf.c: libFuzzer target for the OVF descriptor parser (ovf.h).
 *
 * ovf_parse must fail with a described error or return a descriptor within the caps of ovf.h
 * whose every string can be read (ASan checks them) and which frees cleanly. The input's first
 * line (up to 64 bytes) is also given to ovf_alloc_units: a success is a positive multiplier.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "ovf.h"

static size_t text(const char *s)
{
    size_t n = fuzz_touch(s);
    FUZZ_REQUIRE(n <= OVF_MAX_TEXT);
    return n;
}

static void check_desc(const struct ovf_desc *d)
{
    text(d->name);
    text(d->os_id);
    text(d->os_type);
    text(d->os_version);
    text(d->os_description);
    text(d->firmware);
    text(d->product);
    text(d->vendor);
    text(d->version);
    text(d->full_version);
    FUZZ_REQUIRE(d->n_props + d->n_sys_props <= OVF_MAX_PROPERTIES);
    FUZZ_REQUIRE(d->n_disks <= OVF_MAX_DISKS && d->n_nics <= OVF_MAX_NICS);
    FUZZ_REQUIRE(d->n_networks <= OVF_MAX_NETWORKS);
    FUZZ_REQUIRE(d->num_cpus >= 0 && d->memory_mb >= 0 && d->hw_version >= 0);
    for (size_t i = 0; i < d->n_props; i++) {
        FUZZ_REQUIRE(d->props[i].key && d->props[i].type);
        text(d->props[i].key);
        text(d->props[i].type);
        text(d->props[i].default_value);
    }
    for (size_t i = 0; i < d->n_sys_props; i++) {
        FUZZ_REQUIRE(d->sys_props[i].key);
        text(d->sys_props[i].key);
        text(d->sys_props[i].value);
    }
    for (size_t i = 0; i < d->n_disks; i++) {
        const struct ovf_disk *k = &d->disks[i];
        text(k->disk_id);
        text(k->controller_type);
        text(k->element_name);
        FUZZ_REQUIRE(k->capacity_bytes >= -1 && k->populated_bytes >= -1);
    }
    for (size_t i = 0; i < d->n_nics; i++) {
        text(d->nics[i].network);
        text(d->nics[i].adapter_type);
        text(d->nics[i].element_name);
    }
    for (size_t i = 0; i < d->n_networks; i++)
        text(d->networks[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ovf_desc *d = (struct ovf_desc *)(uintptr_t)1;
    struct vmop_err err = {0};
    char units[65];
    size_t n = 0;
    long long mult = 0;
    vmop_rc rc = ovf_parse((const char *)data, size, &d, &err);

    fuzz_check_err(rc, &err);
    if (rc == VMOP_OK) {
        FUZZ_REQUIRE(d != NULL);
        check_desc(d);
        ovf_desc_free(d);
    } else {
        FUZZ_REQUIRE(d == (struct ovf_desc *)(uintptr_t)1);
    }

    while (n < size && n < sizeof(units) - 1 && data[n] != '\n' && data[n] != '\0') {
        units[n] = (char)data[n];
        n++;
    }
    units[n] = '\0';
    err = (struct vmop_err){0};
    rc = ovf_alloc_units(units, &mult, &err);
    fuzz_check_err(rc, &err);
    if (rc == VMOP_OK)
        FUZZ_REQUIRE(mult > 0);
    return 0;
}
