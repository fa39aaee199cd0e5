/* vmop_clock.h: the one set of clocks, sleeps and timing jitter every module uses.
 * Monotonic time for deadlines and durations, wall time only for timestamps people read.
 * Thread-safe.
 */
#ifndef VMOP_CLOCK_H
#define VMOP_CLOCK_H

#include <stdint.h>
#include <time.h>

int64_t vmop_mono_ms(void); /* CLOCK_MONOTONIC in ms */
/* at_mono_ms (a vmop_mono_ms() time) as the absolute timespec pthread_cond_timedwait takes for a
 * condition variable on CLOCK_MONOTONIC. */
void vmop_mono_timespec(int64_t at_mono_ms, struct timespec *ret);
int64_t vmop_wall_us(void); /* CLOCK_REALTIME in µs since the epoch */

/* Sleeps up to ms, in slices of at most 20 ms, returning early once *stop (read atomically; may
 * be NULL) is non-zero. */
void vmop_sleep_ms(int64_t ms, const int *stop);

/* Uniform random in [0, n) (not cryptographic: for jitter and identities). */
uint64_t vmop_rand(uint64_t n);
/* d + random in [0, d*factor]: client-go's wait.Jitter. */
int64_t vmop_jitter_ms(int64_t d, double factor);

#endif
