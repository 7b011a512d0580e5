/* One suite per module; each tests/check_<module>.c defines one. */
#ifndef ARSIM_TESTS_SUITES_H
#define ARSIM_TESTS_SUITES_H
#include <check.h>
Suite *suite_core(void);
Suite *suite_topo(void);
Suite *suite_model(void);
Suite *suite_plan(void);
Suite *suite_algos(void);
Suite *suite_ref(void);
Suite *suite_analytic(void);
Suite *suite_cli(void);
Suite *suite_sim(void);
Suite *suite_validate(void);
/* Path of a file in the source tree (tests/data/..., topologies/...). */
const char *test_path(const char *rel);
#endif
