/* test_change_feed.c: unit tests of the change feed's pure parts (owner: vcfeed): the retry backoff
 * schedule, namespacedName validation, container specs, and the value-hash cache that drops no-op
 * changes, notices replaced VMs and sweeps VMs missing from a full resync (also in a cache of
 * thousands of VMs).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "change_feed.h"

/* ---- backoff ---- */

START_TEST(test_backoff_schedule)
{
    /* rnd = 0 gives the low end d/2; a huge rnd modulo (d/2+1) is <= d. */
    long expect[] = {500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000};
    for (unsigned a = 0; a < sizeof(expect) / sizeof(expect[0]); a++) {
        long lo = vcfeed_backoff_ms(a, 500, 30000, 0);
        ck_assert_int_eq(lo, expect[a] / 2);
        for (unsigned r = 0; r < 2000; r += 7) {
            long d = vcfeed_backoff_ms(a, 500, 30000, r * 2654435761u);
            ck_assert_int_ge(d, expect[a] / 2);
            ck_assert_int_le(d, expect[a]);
        }
    }
    /* The top of the range is reachable. */
    ck_assert_int_eq(vcfeed_backoff_ms(0, 500, 30000, 250), 500);
}
END_TEST

START_TEST(test_backoff_edges)
{
    /* No overflow for huge attempts; capped. */
    ck_assert_int_le(vcfeed_backoff_ms(1000000u, 500, 30000, 12345), 30000);
    ck_assert_int_ge(vcfeed_backoff_ms(1000000u, 500, 30000, 12345), 15000);
    ck_assert_int_le(vcfeed_backoff_ms(70, 1, 1L << 40, 0), 1L << 40);
    /* Silly inputs are clamped: never below 1 ms, cap below initial means initial. */
    ck_assert_int_ge(vcfeed_backoff_ms(0, 0, 0, 0), 1);
    ck_assert_int_le(vcfeed_backoff_ms(5, 100, 10, 999), 100);
    ck_assert_int_ge(vcfeed_backoff_ms(5, 100, 10, 0), 50);
}
END_TEST

/* ---- names and containers ---- */

START_TEST(test_nsname)
{
    char big[400];

    ck_assert(vcfeed_nsname_valid("ns1/vm-a"));
    ck_assert(vcfeed_nsname_valid("a/b.c-d"));
    ck_assert(!vcfeed_nsname_valid(NULL));
    ck_assert(!vcfeed_nsname_valid(""));
    ck_assert(!vcfeed_nsname_valid("ns1"));
    ck_assert(!vcfeed_nsname_valid("/vm"));
    ck_assert(!vcfeed_nsname_valid("ns/"));
    ck_assert(!vcfeed_nsname_valid("a/b/c"));
    ck_assert(!vcfeed_nsname_valid("NS/vm"));
    ck_assert(!vcfeed_nsname_valid("ns/vm a"));
    ck_assert(!vcfeed_nsname_valid("-ns/vm"));
    ck_assert(!vcfeed_nsname_valid("ns/vm-"));
    /* namespace of 63 ok, 64 not */
    memset(big, 'a', 63);
    strcpy(big + 63, "/x");
    ck_assert(vcfeed_nsname_valid(big));
    memset(big, 'a', 64);
    strcpy(big + 64, "/x");
    ck_assert(!vcfeed_nsname_valid(big));
    /* name of 253 ok, 254 not */
    strcpy(big, "n/");
    memset(big + 2, 'b', 253);
    big[255] = '\0';
    ck_assert(vcfeed_nsname_valid(big));
    memset(big + 2, 'b', 254);
    big[256] = '\0';
    ck_assert(!vcfeed_nsname_valid(big));
}
END_TEST

START_TEST(test_parse_container)
{
    struct vim_moref r;
    struct vmop_err err = {0};
    char longtype[100];

    ck_assert_int_eq(vcfeed_parse_container("group-v3", &r, &err), VMOP_OK);
    ck_assert_str_eq(r.type, "Folder");
    ck_assert_str_eq(r.value, "group-v3");
    ck_assert_int_eq(vcfeed_parse_container("ResourcePool:resgroup-9", &r, &err), VMOP_OK);
    ck_assert_str_eq(r.type, "ResourcePool");
    ck_assert_str_eq(r.value, "resgroup-9");
    ck_assert_int_eq(vcfeed_parse_container(":x", &r, &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(vcfeed_parse_container("Folder:", &r, &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(vcfeed_parse_container("/DC0/vm", &r, &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    ck_assert_int_eq(vcfeed_parse_container("", &r, &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    memset(longtype, 'T', 80);
    strcpy(longtype + 80, ":v");
    ck_assert_int_eq(vcfeed_parse_container(longtype, &r, &err), VMOP_E_INVALID);
}
END_TEST

/* ---- cache ---- */

static const char *const props[] = {"runtime.powerState",     "guest.ipAddress",
                                    "config.hardware.device", "config.changeVersion",
                                    "config.instanceUuid",    NULL};

/* One update with up to 5 (path, value) pairs; value NULL = complex/absent. */
struct upd {
    struct vim_update u;
    char *paths[5];
    char *values[5];
};

static struct vim_update *mk(struct upd *s, enum vim_update_kind kind, const char *ref, int n,
                             const char *const *pv)
{
    memset(s, 0, sizeof(*s));
    s->u.kind = kind;
    ck_assert_int_eq(vim_moref_set(&s->u.ref, "VirtualMachine", ref), VMOP_OK);
    for (int i = 0; i < n; i++) {
        s->paths[i] = (char *)pv[2 * i];
        s->values[i] = (char *)pv[2 * i + 1];
    }
    s->u.paths = s->paths;
    s->u.values = s->values;
    s->u.n = (size_t)n;
    return &s->u;
}

static struct vcfeed_change apply(struct vcfeed_cache *c, struct vim_update *u)
{
    struct vcfeed_change ch;
    struct vmop_err err = {0};

    ck_assert_int_eq(vcfeed_cache_apply(c, u, &ch, &err), VMOP_OK);
    return ch;
}

static const char *const full_on[] = {
    "runtime.powerState",     "poweredOn", "guest.ipAddress",      "192.0.2.10",
    "config.hardware.device", NULL,        "config.changeVersion", "cv1",
    "config.instanceUuid",    "uuid-1"};

START_TEST(test_cache_dedup)
{
    struct vcfeed_cache c;
    struct vmop_err err = {0};
    struct upd s;
    struct vcfeed_change ch;
    const char *const on[] = {"runtime.powerState", "poweredOn"};
    const char *const off[] = {"runtime.powerState", "poweredOff"};
    const char *const dev[] = {"config.hardware.device", NULL};
    const char *const other[] = {"config.hardware.device[4000].backing", "x"};

    ck_assert_int_eq(vcfeed_cache_init(&c, props, 0, &err), VMOP_OK);
    /* First sight: a change. */
    ch = apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-1", 5, full_on));
    ck_assert(ch.changed && ch.entered && !ch.left && !ch.removed && !ch.replaced);
    ck_assert_uint_eq(c.map.len, 1);
    /* The same full state again (a resync): nothing, also for the complex device value. */
    vcfeed_cache_begin_full(&c);
    ch = apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-1", 5, full_on));
    ck_assert(!ch.changed && !ch.entered);
    /* A modify to the same primitive value: no-op. */
    ch = apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, on));
    ck_assert(!ch.changed);
    ch = apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, off));
    ck_assert(ch.changed);
    ch = apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, off));
    ck_assert(!ch.changed);
    /* A modify of a complex value cannot be compared: always a change. */
    ch = apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, dev));
    ck_assert(ch.changed);
    /* A path we did not ask for: a change on modify. */
    ch = apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, other));
    ck_assert(ch.changed);
    /* A resync after the power-off shows the new state: a change against the old one? No: the
     * cache already has poweredOff; the resync with poweredOn is a change. */
    vcfeed_cache_begin_full(&c);
    ch = apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-1", 5, full_on));
    ck_assert(ch.changed);
    vcfeed_cache_free(&c);
}
END_TEST

START_TEST(test_cache_names_and_identity)
{
    struct vcfeed_cache c;
    struct vmop_err err = {0};
    struct upd s;
    struct vcfeed_change ch;
    const char *name = NULL;
    const char *const cv2[] = {"config.changeVersion", "cv2"};
    const char *const uuid2[] = {"config.instanceUuid", "uuid-2"};

    ck_assert_int_eq(vcfeed_cache_init(&c, props, 0, &err), VMOP_OK);
    ck_assert_int_eq(vcfeed_cache_name(&c, "vm-1", &name), -1);
    ck_assert_int_eq(vcfeed_cache_set_name(&c, "vm-1", "ns/a", &err), VMOP_E_NOT_FOUND);
    vmop_err_clear(&err);
    apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-1", 5, full_on));
    ck_assert_int_eq(vcfeed_cache_name(&c, "vm-1", &name), 0);
    ck_assert_int_eq(vcfeed_cache_set_name(&c, "vm-1", "ns/a", &err), VMOP_OK);
    ck_assert_int_eq(vcfeed_cache_name(&c, "vm-1", &name), 1);
    ck_assert_str_eq(name, "ns/a");
    /* changeVersion moves: the name is kept but must be read again when needed. */
    ch = apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, cv2));
    ck_assert(ch.changed && !ch.replaced);
    ck_assert_int_eq(vcfeed_cache_name(&c, "vm-1", &name), 0);
    ck_assert_str_eq(name, "ns/a");
    ck_assert_int_eq(vcfeed_cache_set_name(&c, "vm-1", "ns/a", &err), VMOP_OK);
    /* Another VM under the same moref (vCenter restarted): replaced, old name handed back. */
    ch = apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-1", 1, uuid2));
    ck_assert(ch.changed && ch.replaced && !ch.left && !ch.entered && !ch.removed);
    ck_assert_ptr_nonnull(ch.old_nsname);
    ck_assert_str_eq(ch.old_nsname, "ns/a");
    free(ch.old_nsname);
    ck_assert_int_eq(vcfeed_cache_name(&c, "vm-1", &name), 0);
    ck_assert_ptr_null(name);
    /* Leave: removed, name handed back; an unknown VM leaving is still a change. */
    ck_assert_int_eq(vcfeed_cache_set_name(&c, "vm-1", "ns/b", &err), VMOP_OK);
    ch = apply(&c, mk(&s, VIM_UPDATE_LEAVE, "vm-1", 0, NULL));
    ck_assert(ch.changed && ch.left && ch.removed);
    ck_assert_str_eq(ch.old_nsname, "ns/b");
    free(ch.old_nsname);
    ck_assert_uint_eq(c.map.len, 0);
    ch = apply(&c, mk(&s, VIM_UPDATE_LEAVE, "vm-9", 0, NULL));
    ck_assert(ch.changed && ch.left && !ch.removed);
    ck_assert_ptr_null(ch.old_nsname);
    vcfeed_cache_free(&c);
}
END_TEST

/* With the name's path watched, updates say the name: no read is needed, an ENTER without the
 * path means the VM has none, a removal forgets it, a changeVersion move keeps it known. */
/* The match paths: one hash of their last values, equal to vcfeed_match_hash() of the same texts;
 * a value changed, removed or never heard leaves no match. */
START_TEST(test_cache_match)
{
    static const char *const mprops[] = {"runtime.powerState", "config.instanceUuid", "parent",
                                         "config.template", NULL};
    static const char *const mpaths[] = {"config.instanceUuid", "parent", "config.template", NULL};
    static const char *const bad_paths[] = {"config.instanceUuid", "guest.ipAddress", NULL};
    const char *const want[] = {"uuid-1", "group-v3", "false"};
    const char *const other[] = {"uuid-1", "group-v4", "false"};
    const char *const enter[] = {
        "runtime.powerState", "poweredOn", "config.instanceUuid", "uuid-1", "parent", "group-v3",
        "config.template",    "false"};
    const char *const enter_partial[] = {"config.instanceUuid", "uuid-2", "parent", "group-v3"};
    const char *const moved[] = {"parent", "group-v4"};
    const char *const unset[] = {"parent", NULL};
    const char *const power[] = {"runtime.powerState", "poweredOff"};
    struct vcfeed_cache c;
    struct vmop_err err = {0};
    struct upd s;
    uint64_t h = 0;

    ck_assert_int_eq(vcfeed_cache_init(&c, mprops, 0, &err), VMOP_OK);
    ck_assert_int_eq(vcfeed_cache_match(&c, "vm-1", &h), 0); /* unknown VM */
    ck_assert_int_eq(vcfeed_cache_set_match(&c, bad_paths, &err), VMOP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "guest.ipAddress"));
    apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-1", 4, enter));
    ck_assert_int_eq(vcfeed_cache_match(&c, "vm-1", &h), 0); /* no match paths set */
    ck_assert_int_eq(vcfeed_cache_set_match(&c, mpaths, &err), VMOP_OK);
    ck_assert_int_eq(vcfeed_cache_match(&c, "vm-1", &h), 1);
    ck_assert(h == vcfeed_match_hash(want, 3));
    ck_assert(h != vcfeed_match_hash(other, 3));
    ck_assert(h != vcfeed_match_hash(want, 2));
    /* a change outside the match paths leaves it */
    apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, power));
    ck_assert_int_eq(vcfeed_cache_match(&c, "vm-1", &h), 1);
    ck_assert(h == vcfeed_match_hash(want, 3));
    apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, moved));
    ck_assert_int_eq(vcfeed_cache_match(&c, "vm-1", &h), 1);
    ck_assert(h == vcfeed_match_hash(other, 3));
    apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, unset));
    ck_assert_int_eq(vcfeed_cache_match(&c, "vm-1", &h), 0);
    apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-2", 2, enter_partial)); /* no config.template */
    ck_assert_int_eq(vcfeed_cache_match(&c, "vm-2", &h), 0);
    vcfeed_cache_free(&c);
}
END_TEST

START_TEST(test_cache_watched_name)
{
    static const char *const wprops[] = {"runtime.powerState", "config.changeVersion",
                                         "config.instanceUuid", VCFEED_NSNAME_PATH, NULL};
    struct vcfeed_cache c;
    struct vmop_err err = {0};
    struct upd s;
    struct vcfeed_change ch;
    const char *name = NULL;
    const char *const enter_named[] = {"runtime.powerState",  "poweredOn",
                                       "config.instanceUuid", "uuid-1",
                                       VCFEED_NSNAME_PATH,    "ns/a"};
    const char *const enter_plain[] = {"runtime.powerState", "poweredOff", "config.instanceUuid",
                                       "uuid-2"};
    const char *const cv2[] = {"config.changeVersion", "cv2"};
    const char *const renamed[] = {VCFEED_NSNAME_PATH, "ns/b"};
    const char *const removed[] = {VCFEED_NSNAME_PATH, NULL};
    const char *const bad[] = {VCFEED_NSNAME_PATH, "not a name"};
    const char *const uuid3[] = {"config.instanceUuid", "uuid-3"};

    ck_assert_int_eq(vcfeed_cache_init(&c, wprops, 0, &err), VMOP_OK);
    ck_assert_int_eq(c.i_nsname, 3);
    ch = apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-1", 3, enter_named));
    ck_assert(ch.changed && ch.entered);
    ck_assert_int_eq(vcfeed_cache_name(&c, "vm-1", &name), 1);
    ck_assert_str_eq(name, "ns/a");
    apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-2", 2, enter_plain));
    ck_assert_int_eq(vcfeed_cache_name(&c, "vm-2", &name), 1);
    ck_assert_ptr_null(name);
    /* ExtraConfig moved, the name did not: still known */
    ch = apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, cv2));
    ck_assert(ch.changed);
    ck_assert_int_eq(vcfeed_cache_name(&c, "vm-1", &name), 1);
    ck_assert_str_eq(name, "ns/a");
    ch = apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, renamed));
    ck_assert(ch.changed && !ch.replaced);
    ck_assert_int_eq(vcfeed_cache_name(&c, "vm-1", &name), 1);
    ck_assert_str_eq(name, "ns/b");
    /* an invalid value is no name, as a read would find */
    apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, bad));
    ck_assert_int_eq(vcfeed_cache_name(&c, "vm-1", &name), 1);
    ck_assert_ptr_null(name);
    apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, renamed));
    ch = apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, removed));
    ck_assert(ch.changed);
    ck_assert_int_eq(vcfeed_cache_name(&c, "vm-1", &name), 1);
    ck_assert_ptr_null(name);
    /* another VM under the moref: the old name handed back, the new one has none */
    apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, renamed));
    ch = apply(&c, mk(&s, VIM_UPDATE_MODIFY, "vm-1", 1, uuid3));
    ck_assert(ch.replaced);
    ck_assert_str_eq(ch.old_nsname, "ns/b");
    free(ch.old_nsname);
    ck_assert_int_eq(vcfeed_cache_name(&c, "vm-1", &name), 1);
    ck_assert_ptr_null(name);
    vcfeed_cache_free(&c);
}
END_TEST

struct gone_rec {
    int n;
    char refs[8][32];
    char names[8][32];
};

static void gone(const char *ref, const char *nsname, void *user)
{
    struct gone_rec *g = user;

    ck_assert_int_lt(g->n, 8);
    snprintf(g->refs[g->n], sizeof(g->refs[0]), "%s", ref);
    snprintf(g->names[g->n], sizeof(g->names[0]), "%s", nsname ? nsname : "-");
    g->n++;
}

START_TEST(test_cache_sweep)
{
    struct vcfeed_cache c;
    struct vmop_err err = {0};
    struct upd s;
    struct gone_rec g = {0};

    ck_assert_int_eq(vcfeed_cache_init(&c, props, 0, &err), VMOP_OK);
    apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-1", 5, full_on));
    apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-2", 5, full_on));
    apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-3", 5, full_on));
    ck_assert_int_eq(vcfeed_cache_set_name(&c, "vm-2", "ns/two", &err), VMOP_OK);
    /* No full set begun: nothing to sweep. */
    ck_assert_uint_eq(vcfeed_cache_sweep(&c, gone, &g), 0);
    /* A full set that lacks vm-2: only vm-2 goes, with its name. */
    vcfeed_cache_begin_full(&c);
    apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-1", 5, full_on));
    apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-3", 5, full_on));
    ck_assert_uint_eq(vcfeed_cache_sweep(&c, gone, &g), 1);
    ck_assert_int_eq(g.n, 1);
    ck_assert_str_eq(g.refs[0], "vm-2");
    ck_assert_str_eq(g.names[0], "ns/two");
    ck_assert_uint_eq(c.map.len, 2);
    /* An empty full set: everything goes. */
    vcfeed_cache_begin_full(&c);
    ck_assert_uint_eq(vcfeed_cache_sweep(&c, gone, &g), 2);
    ck_assert_int_eq(g.n, 3);
    ck_assert_uint_eq(c.map.len, 0);
    vcfeed_cache_free(&c);
}
END_TEST

/* ---- sweep of a large cache ---- */

#define SWEEP_N 3000

struct sweep_rec {
    int calls[SWEEP_N]; /* gone calls per VM index */
    int bad;            /* calls for a VM that was not stale or had the wrong name */
};

static int sweep_stale(int i)
{
    return i % 3 == 0;
}

/* The name recorded for VM i: none for every fifth. */
static const char *sweep_name(int i, char *buf, size_t n)
{
    if (i % 5 == 0)
        return NULL;
    snprintf(buf, n, "ns/vm-%d", i);
    return buf;
}

static void sweep_gone(const char *ref, const char *nsname, void *user)
{
    struct sweep_rec *r = user;
    char want[32];
    const char *w;
    int i = -1;

    if (sscanf(ref, "vm-%d", &i) != 1 || i < 0 || i >= SWEEP_N) {
        r->bad++;
        return;
    }
    r->calls[i]++;
    w = sweep_name(i, want, sizeof(want));
    if (!sweep_stale(i) || (w == NULL) != (nsname == NULL) || (w && strcmp(w, nsname) != 0))
        r->bad++;
}

START_TEST(test_cache_sweep_many)
{
    struct vcfeed_cache c;
    struct vmop_err err = {0};
    struct upd s;
    struct sweep_rec *r = calloc(1, sizeof(*r));
    char ref[32], name[32];
    const char *got;
    size_t n_stale = 0;

    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(vcfeed_cache_init(&c, props, 0, &err), VMOP_OK);
    for (int i = 0; i < SWEEP_N; i++) {
        snprintf(ref, sizeof(ref), "vm-%d", i);
        apply(&c, mk(&s, VIM_UPDATE_ENTER, ref, 5, full_on));
        ck_assert_int_eq(vcfeed_cache_set_name(&c, ref, sweep_name(i, name, sizeof(name)), &err),
                         VMOP_OK);
    }
    ck_assert_uint_eq(c.map.len, SWEEP_N);
    /* A full set that names every VM but the stale third. */
    vcfeed_cache_begin_full(&c);
    for (int i = 0; i < SWEEP_N; i++) {
        snprintf(ref, sizeof(ref), "vm-%d", i);
        if (sweep_stale(i))
            n_stale++;
        else
            ck_assert(!apply(&c, mk(&s, VIM_UPDATE_ENTER, ref, 5, full_on)).changed);
    }
    ck_assert_uint_eq(vcfeed_cache_sweep(&c, sweep_gone, r), n_stale);
    ck_assert_int_eq(r->bad, 0);
    ck_assert_uint_eq(c.map.len, SWEEP_N - n_stale);
    for (int i = 0; i < SWEEP_N; i++) {
        const char *want = sweep_name(i, name, sizeof(name));
        snprintf(ref, sizeof(ref), "vm-%d", i);
        ck_assert_int_eq(r->calls[i], sweep_stale(i) ? 1 : 0);
        if (sweep_stale(i)) {
            ck_assert_int_eq(vcfeed_cache_name(&c, ref, &got), -1);
            continue;
        }
        ck_assert_int_eq(vcfeed_cache_name(&c, ref, &got), 1);
        if (want)
            ck_assert_str_eq(got, want);
        else
            ck_assert_ptr_null(got);
    }
    /* Nothing stale left: a second sweep of the same set removes nothing and calls nothing. */
    memset(r, 0, sizeof(*r));
    ck_assert_uint_eq(vcfeed_cache_sweep(&c, sweep_gone, r), 0);
    for (int i = 0; i < SWEEP_N; i++)
        ck_assert_int_eq(r->calls[i], 0);
    /* An empty full set without a callback: all go. */
    vcfeed_cache_begin_full(&c);
    ck_assert_uint_eq(vcfeed_cache_sweep(&c, NULL, NULL), SWEEP_N - n_stale);
    ck_assert_uint_eq(c.map.len, 0);
    vcfeed_cache_free(&c);
    free(r);
}
END_TEST

START_TEST(test_cache_many_and_cap)
{
    struct vcfeed_cache c;
    struct vmop_err err = {0};
    struct upd s;
    struct vcfeed_change ch;
    char ref[32];
    const char *name;

    /* Growth keeps every entry findable. */
    ck_assert_int_eq(vcfeed_cache_init(&c, props, 0, &err), VMOP_OK);
    for (int i = 0; i < 5000; i++) {
        snprintf(ref, sizeof(ref), "vm-%d", i);
        ch = apply(&c, mk(&s, VIM_UPDATE_ENTER, ref, 5, full_on));
        ck_assert(ch.changed);
    }
    ck_assert_uint_eq(c.map.len, 5000);
    /* The map grew with it (chains stay short): more buckets than entries. */
    ck_assert_uint_gt(c.map.n_buckets, 256);
    ck_assert_uint_ge(c.map.n_buckets, c.map.len);
    for (int i = 0; i < 5000; i++) {
        snprintf(ref, sizeof(ref), "vm-%d", i);
        ck_assert_int_eq(vcfeed_cache_name(&c, ref, &name), 0);
        ch = apply(&c, mk(&s, VIM_UPDATE_ENTER, ref, 5, full_on));
        ck_assert(!ch.changed);
    }
    vcfeed_cache_free(&c);
    /* The cap on VMs per container. */
    ck_assert_int_eq(vcfeed_cache_init(&c, props, 2, &err), VMOP_OK);
    apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-1", 0, NULL));
    apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-2", 0, NULL));
    ck_assert_int_eq(vcfeed_cache_apply(&c, mk(&s, VIM_UPDATE_ENTER, "vm-3", 0, NULL), &ch, &err),
                     VMOP_E_TOOBIG);
    vcfeed_cache_free(&c);
    /* Bad inputs. */
    vmop_err_clear(&err);
    ck_assert_int_eq(vcfeed_cache_init(&c, NULL, 0, &err), VMOP_E_INVALID);
}
END_TEST

/* vcfeed_new argument checks (no I/O happens with an empty container list). */
static void nop_enqueue(const char *key, void *user)
{
    (void)key;
    (void)user;
}

START_TEST(test_new_checks)
{
    struct vmop_err err = {0};
    struct vcfeed *f = NULL;
    struct vim_client *c = NULL;
    struct vim_config cfg = {.url = "http://127.0.0.1:9", .username = "u", .password = "p"};
    const char *const bad[] = {":x", NULL};
    const char *const none[] = {NULL};
    struct vcfeed_stats st;

    ck_assert_int_eq(vim_client_new(&cfg, &c, &err), VMOP_OK);
    struct vcfeed_opts o = {.client = c, .containers = bad, .enqueue = nop_enqueue};
    ck_assert_int_eq(vcfeed_new(&o, &f, &err), VMOP_E_INVALID);
    ck_assert_ptr_null(f);
    vmop_err_clear(&err);
    o.containers = none;
    o.enqueue = NULL;
    ck_assert_int_eq(vcfeed_new(&o, &f, &err), VMOP_E_INVALID);
    vmop_err_clear(&err);
    o.enqueue = nop_enqueue;
    ck_assert_int_eq(vcfeed_new(&o, &f, &err), VMOP_OK);
    vcfeed_stats(f, &st);
    ck_assert_uint_eq(st.containers, 0);
    ck_assert_int_eq(vcfeed_set_containers(f, bad, &err), VMOP_E_INVALID);
    vcfeed_stop(f);
    vcfeed_stop(f);
    vcfeed_free(f);
    vim_client_free(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("vcfeed");
    TCase *t = tcase_create("pure");

    tcase_add_test(t, test_backoff_schedule);
    tcase_add_test(t, test_backoff_edges);
    tcase_add_test(t, test_nsname);
    tcase_add_test(t, test_parse_container);
    tcase_add_test(t, test_cache_dedup);
    tcase_add_test(t, test_cache_names_and_identity);
    tcase_add_test(t, test_cache_watched_name);
    tcase_add_test(t, test_cache_match);
    tcase_add_test(t, test_cache_sweep);
    tcase_add_test(t, test_cache_sweep_many);
    tcase_add_test(t, test_cache_many_and_cap);
    tcase_add_test(t, test_new_checks);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return vmop_check_run(suite());
}
