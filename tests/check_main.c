/* The one Check runner: every module's suite. */
#include <check.h>
#include <stdlib.h>
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
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
