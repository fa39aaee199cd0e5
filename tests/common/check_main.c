/* check_main.c: runs a Check suite and turns the result into an exit status (see check_main.h). */
#include "check_main.h"

#include <stdlib.h>

static int run(Suite *s, int nofork)
{
    SRunner *sr = srunner_create(s);
    int failed;

    if (nofork)
        srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

int vmop_check_run(Suite *s)
{
    return run(s, 0);
}

int vmop_check_run_nofork(Suite *s)
{
    return run(s, 1);
}
