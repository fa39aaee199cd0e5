/* wait.h: bounded polling inside Check tests: "wait until X or the deadline", then assert X.
 *
 * Owns: the one WAIT_UNTIL loop (a macro so that cond is re-evaluated each round and its text
 * appears in the failure message). Only for use inside a running Check test.
 */
#ifndef VMOP_TEST_WAIT_H
#define VMOP_TEST_WAIT_H

#include <check.h>

#include "clock.h"

/* Polls cond every 10 ms for up to ms milliseconds; fails the test when it never became true. */
#define WAIT_UNTIL(cond, ms)                                                                       \
    do {                                                                                           \
        long long end_ = vmop_test_now_ms() + (ms);                                                \
        int ok_;                                                                                   \
        while (!(ok_ = (cond)) && vmop_test_now_ms() < end_)                                       \
            vmop_test_sleep_ms(10);                                                                \
        ck_assert_msg(ok_, "timed out waiting for " #cond);                                        \
    } while (0)

#endif
