/* vmop_clock.c: clocks, sleeps and jitter (see vmop_clock.h). */
#include "vmop_clock.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

int64_t vmop_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void vmop_mono_timespec(int64_t at_mono_ms, struct timespec *ret)
{
    ret->tv_sec = (time_t)(at_mono_ms / 1000);
    ret->tv_nsec = (long)(at_mono_ms % 1000) * 1000000L;
}

int64_t vmop_wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void vmop_sleep_ms(int64_t ms, const int *stop)
{
    int64_t end = vmop_mono_ms() + ms;
    for (;;) {
        int64_t left;
        if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE))
            return;
        left = end - vmop_mono_ms();
        if (left <= 0)
            return;
        if (left > 20)
            left = 20;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)left * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static pthread_mutex_t rand_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t rand_state;

uint64_t vmop_rand(uint64_t n)
{
    uint64_t r;
    if (n == 0)
        return 0;
    pthread_mutex_lock(&rand_lock);
    if (!rand_state)
        rand_state = (uint64_t)vmop_wall_us() ^ ((uint64_t)getpid() << 32) ^ 0x9E3779B97F4A7C15ULL;
    /* xorshift64* */
    rand_state ^= rand_state >> 12;
    rand_state ^= rand_state << 25;
    rand_state ^= rand_state >> 27;
    r = rand_state * 2685821657736338717ULL;
    pthread_mutex_unlock(&rand_lock);
    return r % n;
}

int64_t vmop_jitter_ms(int64_t d, double factor)
{
    uint64_t span;
    if (d <= 0 || factor <= 0)
        return d;
    span = (uint64_t)((double)d * factor);
    return d + (int64_t)vmop_rand(span + 1);
}
