/* 2stage (twoshot): reduce-scatter, rank r reducing slice r from all peers (each
 * peer pushes its slice r into r's SCRATCH), then all-gather, r pushing its
 * reduced slice into every peer's OUT. The all-gather signals also tell each
 * peer that its pushed slice has been read. Needs every pair of ranks linked. */
#include <stdlib.h>
#include "algorithms/internal.h"

int ar__check_all_pairs(const char *algo, const ar_topo_t *t, ar_error_t *err);

int ar__build_twoshot(const ar_topo_t *t, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                      ar_plan_t **out, ar_error_t *err) {
    int P = t->nranks;
    AR_TRY(ar__check_all_pairs("2stage", t, err));
    int lanes = ar__lanes(t, o, count, dt, 64);
    ar_plan_t *p;
    AR_TRY(ar_plan_new("2stage", P, lanes, count, dt, &p));
    p->scratch_elems = (uint64_t)P * count;
    int rc = AR_OK;
    ar_addr_t *sv = malloc((size_t)P * sizeof *sv);
    if (!sv) rc = AR_ENOMEM;
    for (int c = 0; c < lanes && rc == AR_OK; c++) {
        uint64_t lo, len;
        ar__split(0, count, lanes, c, &lo, &len);
        uint32_t frs = 2u * c, fag = 2u * c + 1;
        for (int r = 0; r < P && rc == AR_OK; r++) {
            uint64_t so, sl;
            if (P == 1) {
                rc = ar_plan_copy(p, r, c, ar_addr(r, AR_BUF_OUT, lo), ar_addr(r, AR_BUF_IN, lo), len);
                continue;
            }
            for (int k = 1; k < P && rc == AR_OK; k++) {
                int q = (r + k) % P;
                ar__split(lo, lo + len, P, q, &so, &sl);
                rc = ar_plan_copy(p, r, c, ar_addr(q, AR_BUF_SCRATCH, (uint64_t)r * count + so),
                                  ar_addr(r, AR_BUF_IN, so), sl);
                if (rc == AR_OK) rc = ar_plan_signal(p, r, c, q, frs);
            }
            if (rc == AR_OK) rc = ar_plan_wait(p, r, c, frs, (uint64_t)P - 1);
            ar__split(lo, lo + len, P, r, &so, &sl);
            int k = 0;
            sv[k++] = ar_addr(r, AR_BUF_IN, so);
            for (int q = 0; q < P; q++)
                if (q != r) sv[k++] = ar_addr(r, AR_BUF_SCRATCH, (uint64_t)q * count + so);
            if (rc == AR_OK) rc = ar_plan_reduce(p, r, c, ar_addr(r, AR_BUF_OUT, so), sv, (uint32_t)k, sl);
            for (int kk = 1; kk < P && rc == AR_OK; kk++) {
                int q = (r + kk) % P;
                rc = ar_plan_copy(p, r, c, ar_addr(q, AR_BUF_OUT, so), ar_addr(r, AR_BUF_OUT, so), sl);
                if (rc == AR_OK) rc = ar_plan_signal(p, r, c, q, fag);
            }
            if (rc == AR_OK) rc = ar_plan_wait(p, r, c, fag, (uint64_t)P - 1);
        }
    }
    free(sv);
    if (rc == AR_OK) rc = ar_plan_finish(p);
    if (rc != AR_OK) {
        ar_plan_free(p);
        return AR_ERR(err, rc, "2stage: cannot build the plan: %s", ar_plan_strerror(rc));
    }
    *out = p;
    return AR_OK;
}
