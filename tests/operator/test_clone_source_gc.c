/* test_clone_source_gc.c: the image cache collector's decision (operator/vm/clone_source_gc_plan.c)
 * and the marker and in-use bookkeeping of operator/vm/clone_source.c it relies on (suite unit).
 *
 * Covers: a current template is kept; a superseded version, an item in no library and every
 * template of an unbound folder are garbage; a duplicate of a current template is garbage and the
 * smallest moref stays; anything without vmop's exact marker, with a name the marker does not
 * give, or carrying a VirtualMachine resource's marks is foreign (never garbage), even in an
 * unbound folder and even when named vmop-image-*; marker parsing; csrc_put releases what csrc_uses
 * counts (the empty hold).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "clone_source_gc_plan.h"
#include "clone_source.h"

#define ITEM  "0b4c6c1e-1111-4a2b-9c3d-aaaaaaaaaaaa"
#define ITEM2 "0b4c6c1e-2222-4a2b-9c3d-bbbbbbbbbbbb"

static char names[8][CSRC_NAME_MAX + 1], notes[8][256];

/* A cache template of item at version, as clone_source makes it (slot: its own buffers). */
static struct csgc_vm tmpl(int slot, const char *item, const char *ver, const char *moref)
{
    struct csgc_vm v = {0};
    ck_assert(csrc_template_name(item, ver, names[slot], sizeof(names[slot]), NULL) == VMOP_OK);
    snprintf(notes[slot], sizeof(notes[slot]), CSRC_MARKER_PREFIX "%s" CSRC_MARKER_MID "%s", item,
             ver);
    v.name = names[slot];
    v.annotation = notes[slot];
    ck_assert(vim_moref_set(&v.ref, "VirtualMachine", moref) == VMOP_OK);
    return v;
}

START_TEST(current_kept_superseded_and_removed_collected)
{
    struct csgc_vm vms[3] = {tmpl(0, ITEM, "1", "vm-10"), tmpl(1, ITEM, "2", "vm-11"),
                             tmpl(2, ITEM2, "7", "vm-12")};
    struct csgc_live live[] = {{ITEM, "2"}};
    enum csgc_verdict v[3];
    csgc_decide(vms, 3, live, 1, 1, v);
    ck_assert_int_eq(v[0], CSGC_SUPERSEDED);
    ck_assert_int_eq(v[1], CSGC_KEEP);
    ck_assert_int_eq(v[2], CSGC_REMOVED);
    ck_assert(csgc_is_garbage(v[0]) && !csgc_is_garbage(v[1]) && csgc_is_garbage(v[2]));
    ck_assert_str_eq(csgc_verdict_str(v[0]), "superseded");
}
END_TEST

START_TEST(no_content_version)
{
    struct csgc_vm vms[1] = {tmpl(0, ITEM, "", "vm-10")};
    struct csgc_live live[] = {{ITEM, NULL}};
    enum csgc_verdict v[1];
    ck_assert_str_eq(vms[0].name, "vmop-image-" ITEM);
    csgc_decide(vms, 1, live, 1, 1, v);
    ck_assert_int_eq(v[0], CSGC_KEEP);
    live[0].content_version = "3";
    csgc_decide(vms, 1, live, 1, 1, v);
    ck_assert_int_eq(v[0], CSGC_SUPERSEDED);
}
END_TEST

START_TEST(unbound_folder_all_cache_templates)
{
    struct csgc_vm vms[2] = {tmpl(0, ITEM, "2", "vm-10"), tmpl(1, ITEM2, "1", "vm-11")};
    struct csgc_live live[] = {{ITEM, "2"}, {ITEM2, "1"}};
    enum csgc_verdict v[2];
    csgc_decide(vms, 2, live, 2, 0, v); /* live is ignored */
    ck_assert_int_eq(v[0], CSGC_UNBOUND);
    ck_assert_int_eq(v[1], CSGC_UNBOUND);
}
END_TEST

START_TEST(duplicate_keeps_smallest_moref)
{
    struct csgc_vm vms[3] = {tmpl(0, ITEM, "2", "vm-100"), tmpl(1, ITEM, "2", "vm-9"),
                             tmpl(2, ITEM, "2", "vm-11")};
    struct csgc_live live[] = {{ITEM, "2"}};
    enum csgc_verdict v[3];
    csgc_decide(vms, 3, live, 1, 1, v);
    ck_assert_int_eq(v[0], CSGC_DUPLICATE);
    ck_assert_int_eq(v[1], CSGC_KEEP); /* vm-9 < vm-11 < vm-100 */
    ck_assert_int_eq(v[2], CSGC_DUPLICATE);
}
END_TEST

START_TEST(foreign_never_selected)
{
    struct csgc_vm vms[6];
    struct csgc_live live[] = {{ITEM2, "1"}};
    enum csgc_verdict v[6];
    /* named vmop-image-*, no annotation */
    vms[0] = tmpl(0, ITEM, "1", "vm-1");
    vms[0].annotation = NULL;
    /* named vmop-image-*, someone else's annotation */
    vms[1] = tmpl(1, ITEM, "1", "vm-2");
    vms[1].annotation = "golden image, do not delete";
    /* the marker plus more text */
    vms[2] = tmpl(2, ITEM, "1", "vm-3");
    snprintf(notes[2], sizeof(notes[2]), CSRC_MARKER_PREFIX ITEM CSRC_MARKER_MID "1 (copy)");
    /* a tenant VM cloned from a template: the annotation came along, the name is its own */
    vms[3] = tmpl(3, ITEM, "1", "vm-4");
    vms[3].name = "web-1";
    /* a resource's VM that is named like a template */
    vms[4] = tmpl(4, ITEM, "1", "vm-5");
    vms[4].resource_marks = 1;
    /* the marker of another item under this name */
    vms[5] = tmpl(5, ITEM, "1", "vm-6");
    snprintf(notes[5], sizeof(notes[5]), CSRC_MARKER_PREFIX ITEM2 CSRC_MARKER_MID "1");
    for (int bound = 0; bound < 2; bound++) {
        csgc_decide(vms, 6, live, 1, bound, v);
        for (int i = 0; i < 6; i++) {
            ck_assert_msg(v[i] == CSGC_FOREIGN, "vm %d bound %d: %s", i, bound,
                          csgc_verdict_str(v[i]));
            ck_assert(!csgc_is_garbage(v[i]));
        }
    }
}
END_TEST

START_TEST(marker_parse)
{
    char item[64], ver[16];
    ck_assert_int_eq(csrc_marker_parse(CSRC_MARKER_PREFIX "abc" CSRC_MARKER_MID "4", item,
                                       sizeof(item), ver, sizeof(ver)),
                     1);
    ck_assert_str_eq(item, "abc");
    ck_assert_str_eq(ver, "4");
    ck_assert_int_eq(csrc_marker_parse(CSRC_MARKER_PREFIX "abc" CSRC_MARKER_MID, item, sizeof(item),
                                       ver, sizeof(ver)),
                     1);
    ck_assert_str_eq(ver, "");
    ck_assert_int_eq(csrc_marker_parse(NULL, item, sizeof(item), ver, sizeof(ver)), 0);
    ck_assert_int_eq(csrc_marker_parse("vmop image cache", item, sizeof(item), ver, sizeof(ver)),
                     0);
    ck_assert_int_eq(csrc_marker_parse(CSRC_MARKER_PREFIX CSRC_MARKER_MID "1", item, sizeof(item),
                                       ver, sizeof(ver)),
                     0);
    ck_assert_int_eq(csrc_marker_parse(CSRC_MARKER_PREFIX "a" CSRC_MARKER_MID "1" CSRC_MARKER_MID
                                                          "2",
                                       item, sizeof(item), ver, sizeof(ver)),
                     0);
    ck_assert_int_eq(
        csrc_marker_parse(CSRC_MARKER_PREFIX "abc" CSRC_MARKER_MID "4", item, 3, ver, sizeof(ver)),
        0); /* does not fit */
}
END_TEST

START_TEST(empty_hold_put)
{
    struct csrc_cache *ic = NULL;
    struct csrc_hold h = {0};
    ck_assert(csrc_new(&ic, NULL) == VMOP_OK);
    ck_assert_uint_eq(csrc_uses(ic, "vmop-image-x"), 0);
    csrc_put(&h); /* empty: nothing */
    csrc_put(NULL);
    csrc_free(ic);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("clone_source_gc");
    TCase *tc = tcase_create("decide");
    tcase_add_test(tc, current_kept_superseded_and_removed_collected);
    tcase_add_test(tc, no_content_version);
    tcase_add_test(tc, unbound_folder_all_cache_templates);
    tcase_add_test(tc, duplicate_keeps_smallest_moref);
    tcase_add_test(tc, foreign_never_selected);
    tcase_add_test(tc, marker_parse);
    tcase_add_test(tc, empty_hold_put);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
