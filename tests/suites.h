/* One suite per module; each tests/check_<module>.c defines one. */
#ifndef ARSIM_TESTS_SUITES_H
#define ARSIM_TESTS_SUITES_H
#include <check.h>
#include <stdarg.h>
#include <stddef.h>
#include "arsim/arsim.h"
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
/* Helpers shared by the test programs (tests/util.c); tu_ keeps them apart from
 * the tests' own test_* names. */

/* Path of a file in the source tree (tests/data/..., topologies/...). */
const char *test_path(const char *rel);

/* The built arsim (ARSIM_BUILDDIR/arsim), run with arg0 and the NULL-terminated rest,
 * stdin from /dev/null, killed by SIGALRM after alarm_s seconds. The caller points
 * out/err at its buffers (or leaves them NULL); what fits is kept, NUL-terminated. */
typedef struct tu_run_s {
    char *out;          /* stdout, the first out_cap - 1 bytes */
    size_t out_cap;
    char *err;          /* stderr, the first err_cap - 1 bytes */
    size_t err_cap;
    size_t nout;        /* bytes written to stdout, all of them */
    int status;         /* exit status, or 128 + signal */
    double secs;        /* wall time */
} tu_run_t;
void tu_run_arsimv(tu_run_t *r, unsigned alarm_s, const char *arg0, va_list ap);

/* ar_topo_open(spec, model) that must succeed (the message names spec). */
ar_topo_t *tu_topo_open(const char *spec, const char *model);

/* An empty fp32 plan named "hand", filled op by op by the test. */
ar_plan_t *tu_plan_new(int nranks, int nch, uint64_t count);

/* Run p (finished first if still being built) on backend with options o; it must
 * succeed, and its terms be non-negative and sum to time_s within sum_rel_tol. */
void tu_run_checked(const char *backend, const ar_topo_t *t, ar_plan_t *p, const ar_run_opts_t *o,
                      ar_result_t *res, double sum_rel_tol);
/* The link directions of a breakdown that carried data, each of them exactly `bytes`. */
int tu_links_carrying(const ar_result_t *r, double bytes);
#endif
