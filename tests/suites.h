/* One suite per module; each tests/check_<module>.c defines one. */
#ifndef ARSIM_TESTS_SUITES_H
#define ARSIM_TESTS_SUITES_H
#include <check.h>
#include <stdarg.h>
#include <stddef.h>
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

/* The built arsim (ARSIM_BUILDDIR/arsim), run with arg0 and the NULL-terminated rest,
 * stdin from /dev/null, killed by SIGALRM after alarm_s seconds. The caller points
 * out/err at its buffers (or leaves them NULL); what fits is kept, NUL-terminated. */
typedef struct test_run_s {
    char *out;          /* stdout, the first out_cap - 1 bytes */
    size_t out_cap;
    char *err;          /* stderr, the first err_cap - 1 bytes */
    size_t err_cap;
    size_t nout;        /* bytes written to stdout, all of them */
    int status;         /* exit status, or 128 + signal */
    double secs;        /* wall time */
} test_run_t;
void test_run_arsimv(test_run_t *r, unsigned alarm_s, const char *arg0, va_list ap);
#endif
