/* kube_ratelimit.h: the client-side rate limit toward the API server, a token bucket like
 * client-go's flowcontrol.NewTokenBucketRateLimiter: qps tokens a second, at most burst saved up.
 *
 * Owns: the bucket arithmetic only, as a pure function of the time it is given (the caller holds
 * the lock, reads the monotonic clock and sleeps), so tests drive it with a fake clock.
 * Not here: who takes tokens and when (kube_client.c: every attempt of every request, a watch
 * only for its initial request), the lock, the sleeping and the throttling counters.
 *
 * A take reserves its token at once (like golang.org/x/time/rate's Reserve): the count may go
 * below zero, so concurrent callers are spaced 1/qps apart in arrival order and no wait is longer
 * than the tokens owed ahead of it imply ((owed) / qps). Not thread-safe by itself.
 */
#ifndef KUBE_RATELIMIT_H
#define KUBE_RATELIMIT_H

#include <stdint.h>

struct kube_bucket {
    double qps;    /* refill per second; <= 0: unlimited (take never waits) */
    double burst;  /* bucket size, >= 1 */
    double tokens; /* <= burst; below 0 when tokens are owed to callers still waiting */
    int64_t at_ms; /* the time tokens was last brought up to date */
};

/* A full bucket at now_ms. burst < 1 is taken as 1. */
void kube_bucket_init(struct kube_bucket *b, double qps, int burst, int64_t now_ms);

/* Takes one token at now_ms (monotonic) and returns how many ms the caller must wait before it
 * may send: 0 while tokens are left (or unlimited), else the time until its token has been
 * refilled, rounded up. A clock that goes backwards refills nothing. */
int64_t kube_bucket_take(struct kube_bucket *b, int64_t now_ms);

#endif
