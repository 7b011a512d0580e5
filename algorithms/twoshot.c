/* 2stage (twoshot): reduce-scatter, rank r reducing slice r from all peers (each
 * peer pushes its slice r into r's SCRATCH), then all-gather, r pushing its
 * reduced slice into every peer's OUT. The all-gather signals also tell each
 * peer that its pushed slice has been read. Peers that are not neighbours are reached
 * through other devices (the backends route).
 * A phase's SIGNALs follow all its COPYs when the slices are short (ar__signal_each_copy).
 *
 * Pipelined for large lanes: a lane's range is cut into chunks (each chunk into
 * the P slices), and a rank pushes chunk i of the reduce-scatter before it
 * reduces and all-gathers chunk i-1, so a channel reducing does not leave the
 * links idle while all the others reach that phase together. Flags are per
 * (lane, peer): a WAIT counts one sender's chunks exactly. */
#include <stdlib.h>
#include "algorithms/internal.h"

int ar__build_twoshot(const ar_topo_t *t, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                      ar_plan_t **out, ar_error_t *err) {
    int P = t->nranks;
    int lanes = ar__lanes(t, o, count, dt, AR__MAX_LANES_TWOSHOT);
    /* each rank, per lane: a COPY to each peer per phase and a REDUCE of every rank's slice */
    AR_TRY(ar__plan_fits("2stage", P, (uint64_t)lanes * (uint64_t)P * (3u * (uint64_t)P - 2), err));
    ar_plan_t *p;
    AR_TRY(ar__plan_new(o, "2stage", P, lanes, count, dt, &p));
    const uint64_t stride = ar__slot_stride(count, dt);
    p->scratch_elems = (uint64_t)P * stride;
    int rc = AR_OK;
    ar_addr_t *sv = malloc((size_t)P * sizeof *sv);
    if (!sv) rc = AR_ENOMEM;
    for (int c = 0; c < lanes && rc == AR_OK; c++) {
        uint64_t lo, len, chunk, nck;
        ar__pipe_lane(o, count, dt, lanes, c, &lo, &len, &chunk, &nck);
        /* flags of lane c: reduce-scatter data from peer q at 2Pc + q, all-gather
         * data (and done-reading) from q at 2Pc + P + q */
        const uint32_t fbase = 2u * (uint32_t)P * (uint32_t)c;
        for (int r = 0; r < P && rc == AR_OK; r++) {
            if (P == 1) {
                rc = ar_plan_copy(p, r, c, ar_addr(r, AR_BUF_OUT, lo), ar_addr(r, AR_BUF_IN, lo), len);
                continue;
            }
            for (uint64_t i = 0; i <= nck && rc == AR_OK; i++) {
                uint64_t so, sl;
                if (i < nck) { /* reduce-scatter: push every peer's slice of chunk i */
                    uint64_t off = lo + i * chunk, n = ar__piece_len(len, chunk, i);
                    const int each = ar__signal_each_copy(n / (uint64_t)P * ar_dtype_size(dt));
                    for (int k = 1; k < P && rc == AR_OK; k++) {
                        int q = ar__peer(r, c, k, P);
                        ar__split(off, off + n, P, q, &so, &sl);
                        rc = ar_plan_copy(p, r, c, ar_addr(q, AR_BUF_SCRATCH, (uint64_t)r * stride + so),
                                          ar_addr(r, AR_BUF_IN, so), sl);
                        if (rc == AR_OK && each) rc = ar_plan_signal(p, r, c, q, fbase + (uint32_t)r);
                    }
                    if (rc == AR_OK && !each) rc = ar__signal_peers(p, r, c, fbase + (uint32_t)r);
                }
                if (i == 0) continue;
                /* chunk i-1: reduce my slice once every peer's part has arrived, then
                 * all-gather it into every peer's OUT */
                uint64_t j = i - 1;
                uint64_t off = lo + j * chunk, n = ar__piece_len(len, chunk, j);
                ar__split(off, off + n, P, r, &so, &sl);
                const int each = ar__signal_each_copy(n / (uint64_t)P * ar_dtype_size(dt));
                if (rc == AR_OK) rc = ar__reduce_peers(p, r, c, ar_addr, stride, so, sl, fbase, j + 1, sv);
                for (int kk = 1; kk < P && rc == AR_OK; kk++) {
                    int q = ar__peer(r, c, kk, P);
                    rc = ar_plan_copy(p, r, c, ar_addr(q, AR_BUF_OUT, so), ar_addr(r, AR_BUF_OUT, so), sl);
                    if (rc == AR_OK && each) rc = ar_plan_signal(p, r, c, q, fbase + (uint32_t)(P + r));
                }
                if (rc == AR_OK && !each) rc = ar__signal_peers(p, r, c, fbase + (uint32_t)(P + r));
            }
            /* every peer's slices have arrived (and my pushes to them were read) */
            for (int q = 0; q < P && rc == AR_OK; q++)
                if (q != r) rc = ar_plan_wait(p, r, c, fbase + (uint32_t)(P + q), nck);
        }
    }
    free(sv);
    return ar__plan_done(p, rc, "2stage", out, err);
}
