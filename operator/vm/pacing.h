/* pacing.h: what keeps the VM controller's own load down (owner: pacing.c).
 *
 * Own writes. A status patch comes back from the API server's watch as an update event; one that
 * only reflects vmop's own write needs no reconcile (the reconcile that wrote it had decided on
 * everything it shows). pacing_note_own() records the resourceVersion a write returned;
 * pacing_take_own() tells the update handler that an event is exactly that object and forgets it.
 * Invariant: the informer delivers every resourceVersion in order, so a change by anyone else made
 * before vmop's write has its own, earlier event and is queued by it; a later change has a
 * different resourceVersion. At most one resourceVersion is kept per key (the newest write's).
 * While it is kept, the informer's copy of the object is older than vmop's own last write: a
 * reconcile that started from it would build the status again from the status before (a second
 * patch, new lastTransitionTimes); pacing_own_pending() tells it to wait for the event instead.
 * The record is consulted only for max_age_ms after the write, so an event that never comes (a
 * watch re-list that skipped it) costs that long at most. The write's event can also come before
 * the write's response (the watch is faster than the PATCH's reply): take_own then finds no record
 * and the record made after it stays. So a cached copy whose resourceVersion is a larger etcd
 * revision than the write's is past the write, not older (revisions of one object only grow), and
 * drops the record; resourceVersions that are not decimal revisions are compared for equality only.
 *
 * Create slots. At most `max` reconciles create a VM in vCenter at once (VM Operator's cap is
 * 80% of its workers), so creates cannot take every worker from VMs that exist. A VM that finds
 * every slot busy waits in a FIFO (each key once) instead of being re-queued on a timer;
 * pacing_next_waiter(), called at the end of every reconcile, hands out the first waiter while a
 * slot is free. Invariant: a waiter is handed out whenever a reconcile ends with a slot free, so
 * slots are never free for long while keys wait (a waiter that no longer needs a slot ends its
 * reconcile, which hands out the next one).
 *
 * Held creates. The reconcile that creates a VM and holds its status write for the guest's IP
 * (reconcile_rules.h rr_status_hold_ms) records the VM's moref and the hold's end:
 * pacing_hold_note(). Until a status write records status.uniqueID (pacing_hold_drop), the passes
 * that follow read the VM by that moref instead of searching vCenter for its instance UUID, and
 * they keep holding the write, when they change nothing, until the IP comes or the hold ends: one
 * status write per create, with the IP. A record only names where to look: vmsync judges the VM
 * it reads there by its marks, as it does status.uniqueID.
 *
 * Thread-safe (one mutex); no I/O.
 */
#ifndef VMOP_PACING_H
#define VMOP_PACING_H

#include <pthread.h>
#include <stdint.h>

#include "vmop_err.h"
#include "vmop_map.h"

struct pacing {
    pthread_mutex_t mu;
    struct vmop_map own;  /* key -> strdup'ed resourceVersion of the key's last own write */
    struct vmop_map held; /* key -> the key's held create (struct in pacing.c) */
    unsigned creating, max_creates;
    unsigned long creates_waited;
    struct vmop_map waiting; /* keys in wait[] (values unused) */
    char **wait;             /* FIFO of waiting keys (malloc'd), wait[0] first */
    size_t n_wait, cap_wait;
};

/* max_creates 0: pct percent of workers (at least 1). */
void pacing_init(struct pacing *p, unsigned max_creates, unsigned workers, unsigned pct);
void pacing_free(struct pacing *p);
/* Records that this process's write of key, at now_ms, produced rv. NULL/empty rv: forgets the
 * key. */
void pacing_note_own(struct pacing *p, const char *key, const char *rv, int64_t now_ms);
/* 1 when key's last own write, made less than max_age_ms before now_ms, has not come back through
 * the informer yet: the cached copy (at cached_rv) is older than it. */
int pacing_own_pending(struct pacing *p, const char *key, const char *cached_rv, int64_t now_ms,
                       long max_age_ms);
/* 1 when rv is the one recorded for key (the record is dropped then); 0 otherwise. */
int pacing_take_own(struct pacing *p, const char *key, const char *rv);
/* Records that key's VM, moref, was created and its status write is held until until_ms (a NULL
 * or empty moref forgets the record). Out of memory: no record (the passes then search vCenter
 * and write the status as before). */
void pacing_hold_note(struct pacing *p, const char *key, const char *moref, int64_t until_ms);
/* The moref of key's held create into moref[size] ("" when none) and the ms left of its hold at
 * now_ms (0 when none or over). */
long pacing_hold_get(struct pacing *p, const char *key, int64_t now_ms, char *moref, size_t size);
/* The status was written: key's held create, if any, is over. */
void pacing_hold_drop(struct pacing *p, const char *key);
/* Drops key's records and its place in the FIFO (the object is gone). */
void pacing_forget(struct pacing *p, const char *key);
/* Takes a create slot for key: 1 when taken (pacing_create_done() gives it back), 0 when all are
 * busy: key then waits (once) in the FIFO. Out of memory for the FIFO: 0, and key is not recorded
 * (the caller then re-queues it on a timer: *ret_untracked = 1). */
int pacing_create_begin(struct pacing *p, const char *key, int *ret_untracked);
void pacing_create_done(struct pacing *p);
/* The first waiting key (malloc'd: the caller queues and frees it) when a slot is free, else NULL.
 */
char *pacing_next_waiter(struct pacing *p);
/* Keys waiting for a slot. */
size_t pacing_waiting(struct pacing *p);
unsigned pacing_max_creates(const struct pacing *p);
/* Creates that found every slot busy (they wait, re-queued). */
unsigned long pacing_creates_waited(struct pacing *p);

#endif
