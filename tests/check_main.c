/* The one Check runner: every module's suite. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "config.h"
#include "tests/suites.h"

int main(void) {
    Suite *(*const suites[])(void) = {
        suite_core, suite_topo, suite_model, suite_plan, suite_algos, suite_ref,
        suite_analytic, suite_cli, suite_validate,
#ifdef HAVE_SIMGRID
        suite_sim,
#endif
    };
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) srunner_add_suite(sr, suites[i]());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    /* Under `make check` the harness keeps stdout in tests/check_arsim.log; fd 9 is the
     * terminal (AM_TESTS_FD_REDIRECT), where Check's summary is printed as well. */
    if (fcntl(9, F_GETFD) != -1) {
        fflush(stdout);
        int saved = dup(STDOUT_FILENO);
        if (saved >= 0 && dup2(9, STDOUT_FILENO) >= 0) {
            printf("tests/check_arsim: ");
            srunner_print(sr, CK_NORMAL);
            fflush(stdout);
            dup2(saved, STDOUT_FILENO);
        }
        if (saved >= 0) close(saved);
    }
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
