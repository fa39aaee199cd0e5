/* kube_ratelimit.c: the token bucket behind the client-side rate limit (see kube_ratelimit.h).
 * Pure arithmetic: no clock, no lock, no sleep.
 */
#include "kube_ratelimit.h"

void kube_bucket_init(struct kube_bucket *b, double qps, int burst, int64_t now_ms)
{
    b->qps = qps;
    b->burst = burst < 1 ? 1 : (double)burst;
    b->tokens = b->burst;
    b->at_ms = now_ms;
}

int64_t kube_bucket_take(struct kube_bucket *b, int64_t now_ms)
{
    if (!(b->qps > 0))
        return 0;
    if (now_ms > b->at_ms) {
        b->tokens += (double)(now_ms - b->at_ms) * b->qps / 1000.0;
        if (b->tokens > b->burst)
            b->tokens = b->burst;
        b->at_ms = now_ms;
    }
    b->tokens -= 1;
    if (b->tokens >= 0)
        return 0;
    /* the token is owed: it is refilled -tokens/qps seconds from now (rounded up; the epsilon
     * keeps 10.000000001 ms from becoming 11; no libm) */
    double ms = -b->tokens * 1000.0 / b->qps - 1e-6;
    int64_t w = (int64_t)ms;
    return (double)w < ms ? w + 1 : w;
}
