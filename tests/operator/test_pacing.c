/* test_pacing.c: the VM controller's own-write record and create slots (operator/vm/pacing.h). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_main.h"
#include "pacing.h"

START_TEST(own_write_matches_once)
{
    struct pacing p;
    pacing_init(&p, 0, 8, 80);
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "10"), 0); /* nothing written */
    pacing_note_own(&p, "ns/a", "10", 0);
    ck_assert_int_eq(pacing_take_own(&p, "ns/b", "10"), 0); /* another key */
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "9"), 0);  /* an earlier change (someone else) */
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "10"), 1); /* the own write's event */
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "10"), 0); /* forgotten once matched */
    /* only the newest write counts */
    pacing_note_own(&p, "ns/a", "11", 0);
    pacing_note_own(&p, "ns/a", "12", 0);
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "11"), 0);
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "12"), 1);
    /* no resourceVersion, or the object gone: no record */
    pacing_note_own(&p, "ns/a", "13", 0);
    pacing_note_own(&p, "ns/a", NULL, 0);
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "13"), 0);
    pacing_note_own(&p, "ns/a", "14", 0);
    pacing_forget(&p, "ns/a");
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "14"), 0);
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", ""), 0);
    ck_assert_int_eq(pacing_take_own(&p, NULL, "14"), 0);
    pacing_free(&p);
}
END_TEST

START_TEST(own_write_pending)
{
    struct pacing p;
    pacing_init(&p, 0, 8, 80);
    ck_assert_int_eq(pacing_own_pending(&p, "ns/a", "9", 1000, 1000), 0); /* nothing written */
    pacing_note_own(&p, "ns/a", "10", 1000);
    ck_assert_int_eq(pacing_own_pending(&p, "ns/a", "9", 1500, 1000), 1); /* cache before it */
    ck_assert_int_eq(pacing_own_pending(&p, "ns/a", NULL, 1500, 1000), 1);
    ck_assert_int_eq(pacing_own_pending(&p, "ns/b", "9", 1500, 1000), 0);  /* another key */
    ck_assert_int_eq(pacing_own_pending(&p, "ns/a", "10", 1500, 1000), 0); /* cache has it */
    ck_assert_int_eq(pacing_own_pending(&p, "ns/a", "9", 2000, 1000), 0);  /* too old: no event */
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "10"), 1);
    ck_assert_int_eq(pacing_own_pending(&p, "ns/a", "9", 1500, 1000), 0); /* its event came */
    pacing_note_own(&p, "ns/a", "11", 1000);
    pacing_forget(&p, "ns/a");
    ck_assert_int_eq(pacing_own_pending(&p, "ns/a", "9", 1500, 1000), 0);
    /* the write's event came before its response: a later change (rv 12) is past the write */
    pacing_note_own(&p, "ns/a", "11", 1000);
    ck_assert_int_eq(pacing_own_pending(&p, "ns/a", "12", 1100, 1000), 0);
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "11"), 0); /* and the record is gone */
    pacing_note_own(&p, "ns/a", "100", 1000); /* revisions, not strings: 99 is before 100 */
    ck_assert_int_eq(pacing_own_pending(&p, "ns/a", "99", 1100, 1000), 1);
    /* resourceVersions that are not revisions: equality only, so the wait is bounded by age */
    pacing_note_own(&p, "ns/a", "x11", 1000);
    ck_assert_int_eq(pacing_own_pending(&p, "ns/a", "x12", 1100, 1000), 1);
    ck_assert_int_eq(pacing_own_pending(&p, "ns/a", "x11", 1100, 1000), 0);
    pacing_free(&p);
}
END_TEST

START_TEST(held_creates)
{
    struct pacing p;
    char moref[16];
    pacing_init(&p, 0, 8, 80);
    ck_assert_int_eq(pacing_hold_get(&p, "ns/a", 1000, moref, sizeof(moref)), 0); /* none */
    ck_assert_str_eq(moref, "");
    pacing_hold_note(&p, "ns/a", "vm-42", 4000);
    ck_assert_int_eq(pacing_hold_get(&p, "ns/a", 1000, moref, sizeof(moref)), 3000);
    ck_assert_str_eq(moref, "vm-42");
    ck_assert_int_eq(pacing_hold_get(&p, "ns/b", 1000, moref, sizeof(moref)), 0); /* another */
    ck_assert_str_eq(moref, "");
    /* the hold is over, the VM is still where to look until the status is written */
    ck_assert_int_eq(pacing_hold_get(&p, "ns/a", 4000, moref, sizeof(moref)), 0);
    ck_assert_str_eq(moref, "vm-42");
    ck_assert_int_eq(pacing_hold_get(&p, "ns/a", 1000, NULL, 0), 3000); /* the time alone */
    /* a moref longer than the buffer is not cut: none is given */
    ck_assert_int_eq(pacing_hold_get(&p, "ns/a", 1000, moref, 4), 3000);
    ck_assert_str_eq(moref, "");
    pacing_hold_drop(&p, "ns/a"); /* the status was written */
    ck_assert_int_eq(pacing_hold_get(&p, "ns/a", 1000, moref, sizeof(moref)), 0);
    ck_assert_str_eq(moref, "");
    pacing_hold_note(&p, "ns/a", "vm-43", 4000);
    pacing_hold_note(&p, "ns/a", "", 4000); /* no moref: forgotten */
    ck_assert_int_eq(pacing_hold_get(&p, "ns/a", 1000, moref, sizeof(moref)), 0);
    pacing_hold_note(&p, "ns/a", "vm-44", 4000);
    pacing_forget(&p, "ns/a"); /* the object is gone */
    ck_assert_int_eq(pacing_hold_get(&p, "ns/a", 1000, moref, sizeof(moref)), 0);
    pacing_hold_note(&p, NULL, "vm-45", 4000); /* no key: nothing */
    pacing_hold_drop(&p, NULL);
    pacing_hold_note(&p, "ns/c", "vm-46", 4000); /* freed with the pacing */
    pacing_free(&p);
}
END_TEST

START_TEST(create_slots_default_and_bound)
{
    struct pacing p;
    int u;
    /* VM Operator's rule: 80% of the workers */
    pacing_init(&p, 0, 20, 80);
    ck_assert_uint_eq(pacing_max_creates(&p), 16);
    pacing_free(&p);
    pacing_init(&p, 0, 1, 80); /* at least one */
    ck_assert_uint_eq(pacing_max_creates(&p), 1);
    pacing_free(&p);

    pacing_init(&p, 2, 8, 80); /* set explicitly */
    ck_assert_uint_eq(pacing_max_creates(&p), 2);
    ck_assert_int_eq(pacing_create_begin(&p, NULL, &u), 1);
    ck_assert_int_eq(pacing_create_begin(&p, NULL, &u), 1);
    ck_assert_int_eq(pacing_create_begin(&p, NULL, &u), 0); /* full */
    ck_assert_uint_eq(pacing_creates_waited(&p), 1);
    pacing_create_done(&p);
    ck_assert_int_eq(pacing_create_begin(&p, NULL, &u), 1); /* a slot came back */
    pacing_create_done(&p);
    pacing_create_done(&p);
    pacing_create_done(&p); /* one too many: stays at zero */
    ck_assert_int_eq(pacing_create_begin(&p, NULL, &u), 1);
    ck_assert_int_eq(pacing_create_begin(&p, NULL, &u), 1);
    ck_assert_int_eq(pacing_create_begin(&p, NULL, &u), 0);
    pacing_free(&p);
}
END_TEST

/* Keys that find every slot busy wait in line, once each, and are handed out first come first
 * served while a slot is free. */
START_TEST(waiters_in_line)
{
    struct pacing p;
    int u;
    char *k;
    pacing_init(&p, 1, 8, 80);
    ck_assert_ptr_null(pacing_next_waiter(&p));               /* nobody waits */
    ck_assert_int_eq(pacing_create_begin(&p, "ns/a", &u), 1); /* the one slot */
    ck_assert_int_eq(pacing_create_begin(&p, "ns/b", &u), 0);
    ck_assert_int_eq(u, 0); /* b waits in line: no timer needed */
    ck_assert_int_eq(pacing_create_begin(&p, "ns/c", &u), 0);
    ck_assert_int_eq(pacing_create_begin(&p, "ns/b", &u), 0); /* again: still once */
    ck_assert_uint_eq(pacing_waiting(&p), 2);
    ck_assert_ptr_null(pacing_next_waiter(&p)); /* no slot free */
    pacing_create_done(&p);
    k = pacing_next_waiter(&p);
    ck_assert_str_eq(k, "ns/b"); /* first come */
    free(k);
    ck_assert_uint_eq(pacing_waiting(&p), 1);
    /* b no longer needs a slot (deleted, say): its reconcile ends and the next one goes */
    k = pacing_next_waiter(&p);
    ck_assert_str_eq(k, "ns/c");
    ck_assert_int_eq(pacing_create_begin(&p, k, &u), 1);
    free(k);
    ck_assert_int_eq(pacing_create_begin(&p, "ns/d", &u), 0);
    pacing_forget(&p, "ns/d"); /* gone from the API: out of the line */
    ck_assert_uint_eq(pacing_waiting(&p), 0);
    /* many waiters: the line grows past its first allocation */
    for (int i = 0; i < 200; i++) {
        char key[32];
        snprintf(key, sizeof(key), "ns/w%03d", i);
        ck_assert_int_eq(pacing_create_begin(&p, key, &u), 0);
    }
    ck_assert_uint_eq(pacing_waiting(&p), 200);
    pacing_create_done(&p);
    k = pacing_next_waiter(&p);
    ck_assert_str_eq(k, "ns/w000");
    free(k);
    /* a waiter that gets a slot on its own leaves the line */
    ck_assert_int_eq(pacing_create_begin(&p, "ns/w005", &u), 1);
    ck_assert_uint_eq(pacing_waiting(&p), 198);
    pacing_free(&p); /* frees what still waits */
}
END_TEST

/* Many threads taking and giving back slots never hold more than the cap at once. */
struct race {
    struct pacing *p;
    int held, most;
    pthread_mutex_t mu;
};

static void *racer(void *arg)
{
    struct race *r = arg;
    int u;
    for (int i = 0; i < 2000; i++) {
        if (!pacing_create_begin(r->p, NULL, &u))
            continue;
        pthread_mutex_lock(&r->mu);
        if (++r->held > r->most)
            r->most = r->held;
        pthread_mutex_unlock(&r->mu);
        pthread_mutex_lock(&r->mu);
        r->held--;
        pthread_mutex_unlock(&r->mu);
        pacing_create_done(r->p);
    }
    return NULL;
}

START_TEST(create_slots_under_threads)
{
    struct pacing p;
    struct race r = {&p, 0, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t th[8];
    int u;
    pacing_init(&p, 3, 8, 80);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, racer, &r), 0);
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    ck_assert_int_le(r.most, 3);
    ck_assert_int_ge(r.most, 1);
    ck_assert_int_eq(pacing_create_begin(&p, NULL, &u), 1); /* every slot was given back */
    ck_assert_int_eq(pacing_create_begin(&p, NULL, &u), 1);
    ck_assert_int_eq(pacing_create_begin(&p, NULL, &u), 1);
    ck_assert_int_eq(pacing_create_begin(&p, NULL, &u), 0);
    pacing_free(&p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pacing");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, own_write_matches_once);
    tcase_add_test(tc, own_write_pending);
    tcase_add_test(tc, held_creates);
    tcase_add_test(tc, create_slots_default_and_bound);
    tcase_add_test(tc, waiters_in_line);
    tcase_add_test(tc, create_slots_under_threads);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
