/* naive: the no-P2P fallback. Every rank copies its input to its slot of the
 * HOST staging buffer and signals every peer; once all have arrived each rank
 * reduces its own input with every peer's host slot into OUT, then tells the
 * peers it is done reading (so the next execution cannot overwrite a slot early).
 * Runs on any topology. Each rank takes its peers in the order of their offsets from it
 * (ar__peer_at), so that on a topology with translations every rank's ops are rank 0's
 * moved (a plan of rank 0 alone stands for all). */
#include <stdlib.h>
#include "algorithms/internal.h"

int ar__build_naive(const ar_topo_t *t, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                    ar_plan_t **out, ar_error_t *err) {
    int P = t->nranks;
    const ar__peers_t g = ar__peers(t);
    /* one lane unless asked: the host link is shared by everything anyway */
    int lanes = o && o->channels > 0 ? ar__lanes(t, o, count, dt, AR__MAX_LANES_NAIVE) : 1;
    /* each rank, per lane: a REDUCE of every rank's host slot */
    AR_TRY(ar__plan_fits(o, "naive", P, (uint64_t)lanes * (uint64_t)P * (uint64_t)P, err));
    ar_plan_t *p;
    AR_TRY(ar__plan_new(o, "naive", P, lanes, count, dt, &p));
    const uint64_t stride = ar__slot_stride(count, dt);
    p->host_elems = (uint64_t)P * stride;
    int rc = AR_OK;
    ar_addr_t *sv = malloc((size_t)P * sizeof *sv);
    if (!sv) rc = AR_ENOMEM;
    for (int c = 0; c < lanes && rc == AR_OK; c++) {
        uint64_t lo, len;
        ar__split(0, count, lanes, c, &lo, &len);
        uint32_t fd = 2u * c, fdone = 2u * c + 1;
        for (int r = 0; r < P && rc == AR_OK; r++) {
            if (!ar_plan_keeps_rank(p, r)) continue;
            if (P == 1) {
                rc = ar_plan_copy(p, r, c, ar_addr(r, AR_BUF_OUT, lo), ar_addr(r, AR_BUF_IN, lo), len);
                continue;
            }
            rc = ar_plan_copy(p, r, c, ar_addr(AR_RANK_HOST, AR_BUF_IN, (uint64_t)r * stride + lo),
                              ar_addr(r, AR_BUF_IN, lo), len);
            for (int k = 1; k < P && rc == AR_OK; k++) rc = ar_plan_signal(p, r, c, ar__peer_at(g, r, k), fd);
            if (rc == AR_OK) rc = ar_plan_wait(p, r, c, fd, (uint64_t)P - 1);
            sv[0] = ar_addr(r, AR_BUF_IN, lo);
            for (int k = 1; k < P; k++)
                sv[k] = ar_addr(AR_RANK_HOST, AR_BUF_IN, (uint64_t)ar__peer_at(g, r, k) * stride + lo);
            if (rc == AR_OK) rc = ar_plan_reduce(p, r, c, ar_addr(r, AR_BUF_OUT, lo), sv, (uint32_t)P, len);
            for (int k = 1; k < P && rc == AR_OK; k++) rc = ar_plan_signal(p, r, c, ar__peer_at(g, r, k), fdone);
            if (rc == AR_OK) rc = ar_plan_wait(p, r, c, fdone, (uint64_t)P - 1);
        }
    }
    free(sv);
    return ar__plan_done(p, rc, "naive", out, err);
}
