/* 1stage (oneshot): every rank pushes its whole input into every peer's SCRATCH
 * slot and signals; once all peers' inputs have arrived each rank reduces
 * locally, then tells every peer it is done reading (the barrier after, so the
 * next execution's pushes cannot overwrite a slot still being read). Needs every
 * pair of ranks to be neighbours. */
#include <stdlib.h>
#include "algorithms/internal.h"

int ar__check_all_pairs(const char *algo, const ar_topo_t *t, ar_error_t *err) {
    for (int a = 0; a < t->nranks; a++)
        for (int b = a + 1; b < t->nranks; b++)
            if (!ar_topo_rank_adjacent(t, a, b))
                return AR_ERR(err, AR_EUNFIT,
                              "%s: ranks %d and %d are not neighbours on %s (needs every pair "
                              "linked: full or switch)",
                              algo, a, b, t->name);
    return AR_OK;
}

int ar__build_oneshot(const ar_topo_t *t, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                      ar_plan_t **out, ar_error_t *err) {
    int P = t->nranks;
    AR_TRY(ar__check_all_pairs("1stage", t, err));
    int lanes = ar__lanes(t, o, count, dt, 64);
    ar_plan_t *p;
    AR_TRY(ar_plan_new("1stage", P, lanes, count, dt, &p));
    p->scratch_elems = (uint64_t)P * count;
    int rc = AR_OK;
    ar_addr_t *sv = malloc((size_t)P * sizeof *sv);
    if (!sv) rc = AR_ENOMEM;
    for (int c = 0; c < lanes && rc == AR_OK; c++) {
        uint64_t lo, len;
        ar__split(0, count, lanes, c, &lo, &len);
        uint32_t fd = 2u * c, fdone = 2u * c + 1;
        for (int r = 0; r < P && rc == AR_OK; r++) {
            if (P == 1) {
                rc = ar_plan_copy(p, r, c, ar_addr(r, AR_BUF_OUT, lo), ar_addr(r, AR_BUF_IN, lo), len);
                continue;
            }
            for (int k = 1; k < P && rc == AR_OK; k++) {
                int q = (r + k) % P; /* staggered so peers are not all hit at once */
                rc = ar_plan_copy(p, r, c, ar_addr(q, AR_BUF_SCRATCH, (uint64_t)r * count + lo),
                                  ar_addr(r, AR_BUF_IN, lo), len);
                if (rc == AR_OK) rc = ar_plan_signal(p, r, c, q, fd);
            }
            if (rc == AR_OK) rc = ar_plan_wait(p, r, c, fd, (uint64_t)P - 1);
            int k = 0;
            sv[k++] = ar_addr(r, AR_BUF_IN, lo);
            for (int q = 0; q < P; q++)
                if (q != r) sv[k++] = ar_addr(r, AR_BUF_SCRATCH, (uint64_t)q * count + lo);
            if (rc == AR_OK) rc = ar_plan_reduce(p, r, c, ar_addr(r, AR_BUF_OUT, lo), sv, (uint32_t)k, len);
            for (int q = 0; q < P && rc == AR_OK; q++)
                if (q != r) rc = ar_plan_signal(p, r, c, q, fdone);
            if (rc == AR_OK) rc = ar_plan_wait(p, r, c, fdone, (uint64_t)P - 1);
        }
    }
    free(sv);
    if (rc == AR_OK) rc = ar_plan_finish(p);
    if (rc != AR_OK) {
        ar_plan_free(p);
        return AR_ERR(err, rc, "1stage: cannot build the plan: %s", ar_plan_strerror(rc));
    }
    *out = p;
    return AR_OK;
}
