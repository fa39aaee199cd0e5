/* pacing.c: own writes and create slots of the VM controller (see pacing.h). */
#include "pacing.h"

#include <stdlib.h>
#include <string.h>

#include "vmop_rv.h"

static void drop_waiter(struct pacing *p, const char *key);

/* The values of p->own and p->held: a text and a time. p->own: the resourceVersion of the key's
 * last own write and when it was made; p->held: the moref of the VM the key's create made and
 * when its hold ends. */
struct stamped {
    int64_t ms;
    char text[];
};

/* key -> (text, ms) in m; a NULL or empty text drops key's entry (mu held). Out of memory: no
 * entry either (no own-write record: the event re-queues as before; no held create: the passes
 * search vCenter and write the status at once). */
static void stamp_put(struct vmop_map *m, const char *key, const char *text, int64_t ms)
{
    struct stamped *v = NULL;
    if (text && *text) {
        size_t n = strlen(text) + 1;
        if ((v = malloc(sizeof(*v) + n)) != NULL) {
            v->ms = ms;
            memcpy(v->text, text, n);
        }
    }
    if (!v || vmop_map_put(m, key, v) != VMOP_OK) {
        free(v);
        vmop_map_del(m, key);
    }
}

void pacing_init(struct pacing *p, unsigned max_creates, unsigned workers, unsigned pct)
{
    memset(p, 0, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    vmop_map_init(&p->own, free);
    vmop_map_init(&p->held, free);
    vmop_map_init(&p->waiting, NULL);
    if (!max_creates)
        max_creates = workers * pct / 100;
    p->max_creates = max_creates ? max_creates : 1;
}

void pacing_free(struct pacing *p)
{
    if (!p)
        return;
    vmop_map_clear(&p->own);
    vmop_map_clear(&p->held);
    vmop_map_clear(&p->waiting);
    for (size_t i = 0; i < p->n_wait; i++)
        free(p->wait[i]);
    free(p->wait);
    pthread_mutex_destroy(&p->mu);
}

void pacing_note_own(struct pacing *p, const char *key, const char *rv, int64_t now_ms)
{
    if (!key)
        return;
    pthread_mutex_lock(&p->mu);
    stamp_put(&p->own, key, rv, now_ms);
    pthread_mutex_unlock(&p->mu);
}

int pacing_own_pending(struct pacing *p, const char *key, const char *cached_rv, int64_t now_ms,
                       long max_age_ms)
{
    const struct stamped *rec;
    int pending = 0;
    if (!key)
        return 0;
    pthread_mutex_lock(&p->mu);
    rec = vmop_map_get(&p->own, key);
    if (rec && (!cached_rv || strcmp(rec->text, cached_rv)) && now_ms - rec->ms < max_age_ms) {
        if (vmop_rv_cmp(cached_rv, rec->text) == 1)
            vmop_map_del(&p->own, key); /* the cache is past the write: its event came first */
        else
            pending = 1;
    }
    pthread_mutex_unlock(&p->mu);
    return pending;
}

int pacing_take_own(struct pacing *p, const char *key, const char *rv)
{
    const struct stamped *mine;
    int own = 0;
    if (!key || !rv || !*rv)
        return 0;
    pthread_mutex_lock(&p->mu);
    mine = vmop_map_get(&p->own, key);
    if (mine && !strcmp(mine->text, rv)) {
        own = 1;
        vmop_map_del(&p->own, key);
    }
    pthread_mutex_unlock(&p->mu);
    return own;
}

void pacing_hold_note(struct pacing *p, const char *key, const char *moref, int64_t until_ms)
{
    if (!key)
        return;
    pthread_mutex_lock(&p->mu);
    stamp_put(&p->held, key, moref, until_ms);
    pthread_mutex_unlock(&p->mu);
}

long pacing_hold_get(struct pacing *p, const char *key, int64_t now_ms, char *moref, size_t size)
{
    const struct stamped *rec;
    long left = 0;
    if (size)
        moref[0] = '\0';
    if (!key)
        return 0;
    pthread_mutex_lock(&p->mu);
    rec = vmop_map_get(&p->held, key);
    if (rec) {
        if (size && strlen(rec->text) < size)
            memcpy(moref, rec->text, strlen(rec->text) + 1);
        if (rec->ms > now_ms)
            left = (long)(rec->ms - now_ms);
    }
    pthread_mutex_unlock(&p->mu);
    return left;
}

void pacing_hold_drop(struct pacing *p, const char *key)
{
    if (!key)
        return;
    pthread_mutex_lock(&p->mu);
    vmop_map_del(&p->held, key);
    pthread_mutex_unlock(&p->mu);
}

void pacing_forget(struct pacing *p, const char *key)
{
    if (!key)
        return;
    pthread_mutex_lock(&p->mu);
    vmop_map_del(&p->own, key);
    vmop_map_del(&p->held, key);
    drop_waiter(p, key);
    pthread_mutex_unlock(&p->mu);
}

/* Appends key to the FIFO unless it waits already (mu held). 0 when out of memory. */
static int enqueue_waiter(struct pacing *p, const char *key)
{
    char *copy;
    if (vmop_map_has(&p->waiting, key))
        return 1;
    if (p->n_wait == p->cap_wait) {
        size_t cap = p->cap_wait ? p->cap_wait * 2 : 64;
        char **w = realloc(p->wait, cap * sizeof(*w));
        if (!w)
            return 0;
        p->wait = w;
        p->cap_wait = cap;
    }
    copy = strdup(key);
    if (!copy || vmop_map_put(&p->waiting, key, NULL) != VMOP_OK) {
        free(copy);
        return 0;
    }
    p->wait[p->n_wait++] = copy;
    return 1;
}

/* Removes key from the FIFO if it is there (mu held). */
static void drop_waiter(struct pacing *p, const char *key)
{
    if (!vmop_map_del(&p->waiting, key))
        return;
    for (size_t i = 0; i < p->n_wait; i++)
        if (!strcmp(p->wait[i], key)) {
            free(p->wait[i]);
            memmove(&p->wait[i], &p->wait[i + 1], (p->n_wait - i - 1) * sizeof(*p->wait));
            p->n_wait--;
            return;
        }
}

int pacing_create_begin(struct pacing *p, const char *key, int *ret_untracked)
{
    int ok;
    *ret_untracked = 0;
    pthread_mutex_lock(&p->mu);
    ok = p->creating < p->max_creates;
    if (ok) {
        p->creating++;
        if (key)
            drop_waiter(p, key);
    } else {
        p->creates_waited++;
        *ret_untracked = !key || !enqueue_waiter(p, key);
    }
    pthread_mutex_unlock(&p->mu);
    return ok;
}

void pacing_create_done(struct pacing *p)
{
    pthread_mutex_lock(&p->mu);
    if (p->creating)
        p->creating--;
    pthread_mutex_unlock(&p->mu);
}

char *pacing_next_waiter(struct pacing *p)
{
    char *key = NULL;
    pthread_mutex_lock(&p->mu);
    if (p->n_wait && p->creating < p->max_creates) {
        key = p->wait[0];
        memmove(&p->wait[0], &p->wait[1], (p->n_wait - 1) * sizeof(*p->wait));
        p->n_wait--;
        vmop_map_del(&p->waiting, key);
    }
    pthread_mutex_unlock(&p->mu);
    return key;
}

size_t pacing_waiting(struct pacing *p)
{
    size_t n;
    pthread_mutex_lock(&p->mu);
    n = p->n_wait;
    pthread_mutex_unlock(&p->mu);
    return n;
}

unsigned pacing_max_creates(const struct pacing *p)
{
    return p->max_creates;
}

unsigned long pacing_creates_waited(struct pacing *p)
{
    unsigned long n;
    pthread_mutex_lock(&p->mu);
    n = p->creates_waited;
    pthread_mutex_unlock(&p->mu);
    return n;
}
