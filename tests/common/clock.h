/* clock.h: the monotonic millisecond clock tests and harnesses measure deadlines with, and a
 * millisecond sleep. */
#ifndef VMOP_TEST_CLOCK_H
#define VMOP_TEST_CLOCK_H

/* CLOCK_MONOTONIC in milliseconds (an arbitrary origin: only differences mean anything). */
long long vmop_test_now_ms(void);

/* Sleeps ms milliseconds (restarting after signals). */
void vmop_test_sleep_ms(long ms);

#endif
