/* check_main.h: the one Check runner every unit/integration test's main() uses.
 *
 * Owns: srunner create/run/count/free and the exit status. Not here: building suites (each test
 * file keeps its own Suite) or process-wide setup and cleanup (curl/kube global init).
 */
#ifndef VMOP_TEST_CHECK_MAIN_H
#define VMOP_TEST_CHECK_MAIN_H

#include <check.h>

/* Runs every test in s (verbosity from $CK_VERBOSITY, default normal; fork mode from $CK_FORK,
 * default fork), then frees the runner and s. Returns the process exit status: EXIT_SUCCESS when
 * no test failed, else EXIT_FAILURE. */
int vmop_check_run(Suite *s);

/* Same, but the tests run in this process (CK_NOFORK): for fixtures that belong to this thread,
 * such as a simulator started by main(). */
int vmop_check_run_nofork(Suite *s);

#endif
