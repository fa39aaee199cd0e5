/* test_pacing.c: the VM controller's own-write record and create slots (operator/vm/pacing.h). */
#include <check.h>
#include <pthread.h>

#include "check_main.h"
#include "pacing.h"

START_TEST(own_write_matches_once)
{
    struct pacing p;
    pacing_init(&p, 0, 8, 80);
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "10"), 0); /* nothing written */
    pacing_note_own(&p, "ns/a", "10");
    ck_assert_int_eq(pacing_take_own(&p, "ns/b", "10"), 0); /* another key */
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "9"), 0);  /* an earlier change (someone else) */
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "10"), 1); /* the own write's event */
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "10"), 0); /* forgotten once matched */
    /* only the newest write counts */
    pacing_note_own(&p, "ns/a", "11");
    pacing_note_own(&p, "ns/a", "12");
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "11"), 0);
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "12"), 1);
    /* no resourceVersion, or the object gone: no record */
    pacing_note_own(&p, "ns/a", "13");
    pacing_note_own(&p, "ns/a", NULL);
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "13"), 0);
    pacing_note_own(&p, "ns/a", "14");
    pacing_forget(&p, "ns/a");
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", "14"), 0);
    ck_assert_int_eq(pacing_take_own(&p, "ns/a", ""), 0);
    ck_assert_int_eq(pacing_take_own(&p, NULL, "14"), 0);
    pacing_free(&p);
}
END_TEST

START_TEST(create_slots_default_and_bound)
{
    struct pacing p;
    /* VM Operator's rule: 80% of the workers */
    pacing_init(&p, 0, 20, 80);
    ck_assert_uint_eq(pacing_max_creates(&p), 16);
    pacing_free(&p);
    pacing_init(&p, 0, 1, 80); /* at least one */
    ck_assert_uint_eq(pacing_max_creates(&p), 1);
    pacing_free(&p);

    pacing_init(&p, 2, 8, 80); /* set explicitly */
    ck_assert_uint_eq(pacing_max_creates(&p), 2);
    ck_assert_int_eq(pacing_create_begin(&p), 1);
    ck_assert_int_eq(pacing_create_begin(&p), 1);
    ck_assert_int_eq(pacing_create_begin(&p), 0); /* full */
    ck_assert_uint_eq(pacing_creates_waited(&p), 1);
    pacing_create_done(&p);
    ck_assert_int_eq(pacing_create_begin(&p), 1); /* a slot came back */
    pacing_create_done(&p);
    pacing_create_done(&p);
    pacing_create_done(&p); /* one too many: stays at zero */
    ck_assert_int_eq(pacing_create_begin(&p), 1);
    ck_assert_int_eq(pacing_create_begin(&p), 1);
    ck_assert_int_eq(pacing_create_begin(&p), 0);
    pacing_free(&p);
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
    for (int i = 0; i < 2000; i++) {
        if (!pacing_create_begin(r->p))
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
    pacing_init(&p, 3, 8, 80);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, racer, &r), 0);
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    ck_assert_int_le(r.most, 3);
    ck_assert_int_ge(r.most, 1);
    ck_assert_int_eq(pacing_create_begin(&p), 1); /* every slot was given back */
    ck_assert_int_eq(pacing_create_begin(&p), 1);
    ck_assert_int_eq(pacing_create_begin(&p), 1);
    ck_assert_int_eq(pacing_create_begin(&p), 0);
    pacing_free(&p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pacing");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, own_write_matches_once);
    tcase_add_test(tc, create_slots_default_and_bound);
    tcase_add_test(tc, create_slots_under_threads);
    suite_add_tcase(s, tc);
    return vmop_check_run(s);
}
