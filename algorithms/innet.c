/* innet: in-network reduction. Every chunk is cut into one block per rank; rank r has
 * the switch sum block r of every rank's input and return the sum to every rank's
 * output (NETREDUCE, plan.h), so each device sends its input once and receives the
 * result once: S each way, where any reduction done on the devices moves 2(P-1)/P x S
 * each way. Needs a switch linked to every device and a model whose switches reduce
 * (switch_reduce); the GPUs do not run it (the cuda backend refuses NETREDUCE).
 *
 * Ordering: a NETREDUCE reads every rank's IN and writes every rank's OUT. A rank starts
 * by telling every peer it has begun this execution (its previous one is over, its IN is
 * this execution's) and waits until every peer has; it ends by telling every peer its
 * sums have landed and waiting for theirs. Lanes run apart, each with its two flags. */
#include "algorithms/internal.h"

int ar__build_innet(const ar_topo_t *t, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o, ar_plan_t **out,
                    ar_error_t *err) {
    const int P = t->nranks;
    const char *unfit = ar_topo_netreduce_unfit(t);
    if (unfit) return AR_ERR(err, AR_EUNFIT, "innet: %s", unfit);
    const int lanes = ar__lanes(t, o, count, dt, AR__MAX_LANES_INNET);
    /* each rank, per lane and chunk: one NETREDUCE of one source (lane 0 has the most chunks) */
    uint64_t lo0, len0, chunk0, nck0;
    ar__pipe_lane(o, count, dt, lanes, 0, &lo0, &len0, &chunk0, &nck0);
    AR_TRY(ar__plan_fits(o, "innet", P, (uint64_t)P * (uint64_t)lanes * nck0, err));
    ar_plan_t *p;
    AR_TRY(ar__plan_new(o, "innet", P, lanes, count, dt, &p));
    int rc = AR_OK;
    for (int c = 0; c < lanes && rc == AR_OK; c++) {
        uint64_t lo, len, chunk, nck;
        ar__pipe_lane(o, count, dt, lanes, c, &lo, &len, &chunk, &nck);
        if (!len) continue;
        const uint32_t started = 2u * (uint32_t)c, landed = started + 1;
        for (int r = 0; r < P && rc == AR_OK; r++) {
            if (!ar_plan_keeps_rank(p, r)) continue;
            if (P == 1) {
                rc = ar_plan_copy(p, r, c, ar_addr(r, AR_BUF_OUT, lo), ar_addr(r, AR_BUF_IN, lo), len);
                continue;
            }
            rc = ar__signal_peers(p, r, c, started);
            if (rc == AR_OK) rc = ar_plan_wait(p, r, c, started, (uint64_t)P - 1);
            for (uint64_t i = 0; i < nck && rc == AR_OK; i++) {
                uint64_t off, n;
                ar__split(lo + i * chunk, lo + i * chunk + ar__piece_len(len, chunk, i), P, r, &off, &n);
                rc = ar_plan_netreduce(p, r, c, ar_addr(r, AR_BUF_OUT, off), ar_addr(r, AR_BUF_IN, off), n);
            }
            if (rc == AR_OK) rc = ar__signal_peers(p, r, c, landed);
            if (rc == AR_OK) rc = ar_plan_wait(p, r, c, landed, (uint64_t)P - 1);
        }
    }
    return ar__plan_done(p, rc, "innet", out, err);
}
