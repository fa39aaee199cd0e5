/* pacing.c: own writes and create slots of the VM controller (see pacing.h). */
#include "pacing.h"

#include <stdlib.h>
#include <string.h>

void pacing_init(struct pacing *p, unsigned max_creates, unsigned workers, unsigned pct)
{
    memset(p, 0, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    vmop_map_init(&p->own, free);
    if (!max_creates)
        max_creates = workers * pct / 100;
    p->max_creates = max_creates ? max_creates : 1;
}

void pacing_free(struct pacing *p)
{
    if (!p)
        return;
    vmop_map_clear(&p->own);
    pthread_mutex_destroy(&p->mu);
}

void pacing_note_own(struct pacing *p, const char *key, const char *rv)
{
    char *copy;
    if (!key)
        return;
    pthread_mutex_lock(&p->mu);
    copy = rv && *rv ? strdup(rv) : NULL;
    if (!copy || vmop_map_put(&p->own, key, copy) != VMOP_OK) {
        free(copy); /* out of memory: no record, so the event re-queues as before */
        vmop_map_del(&p->own, key);
    }
    pthread_mutex_unlock(&p->mu);
}

int pacing_take_own(struct pacing *p, const char *key, const char *rv)
{
    const char *mine;
    int own = 0;
    if (!key || !rv || !*rv)
        return 0;
    pthread_mutex_lock(&p->mu);
    mine = vmop_map_get(&p->own, key);
    if (mine && !strcmp(mine, rv)) {
        own = 1;
        vmop_map_del(&p->own, key);
    }
    pthread_mutex_unlock(&p->mu);
    return own;
}

void pacing_forget(struct pacing *p, const char *key)
{
    if (!key)
        return;
    pthread_mutex_lock(&p->mu);
    vmop_map_del(&p->own, key);
    pthread_mutex_unlock(&p->mu);
}

int pacing_create_begin(struct pacing *p)
{
    int ok;
    pthread_mutex_lock(&p->mu);
    ok = p->creating < p->max_creates;
    if (ok)
        p->creating++;
    else
        p->creates_waited++;
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
