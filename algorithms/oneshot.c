/* 1stage (oneshot): every rank pushes its whole input into every peer's SCRATCH
 * slot and signals; once a peer's input has arrived each rank reduces locally.
 * A peer that is not a neighbour is reached through other devices (the backends route).
 *
 * Epoch safety without a barrier at the end: a rank tells every peer when it has
 * read the slot that peer pushes into (SIGNAL after the last REDUCE), and the peer
 * takes that acknowledgement at the START of its next execution (a WAIT with count
 * 0: every SIGNAL of the previous executions, arsim/plan.h) before pushing again.
 * So an execution ends as soon as its own reduction is done: one flag round per
 * execution instead of two. IN is read by its own rank only, so nothing has to
 * hold the caller back once OUT is written.
 *
 * Two slots by execution parity (small messages): the slots are epoch-parity
 * addresses (arsim/plan.h), so execution e pushes into slot e % 2 and the slot
 * is next written in e + 2. By then the pusher has waited, in e + 1, for the
 * peer's data of e + 1, which the peer's channel pushed after its reductions of
 * e in program order: the data flags already carry the acknowledgement, so the
 * plan has none, and no flag has to cross a link between two executions. With
 * one slot the acknowledgement of the previous execution is still in flight when
 * the next one starts (ranks run in lock-step). SCRATCH doubles, so two slots are
 * used while a rank's input is at most AR__PARITY_SLOTS_MAX_BYTES (or as
 * opts->slots says).
 *
 * Pipelined for large lanes: a lane's range is cut into chunks, and the rank
 * pushes chunk i before it reduces chunk i-1, so a channel reducing does not
 * leave the links idle while the others push. Flags are per (lane, peer), so a
 * WAIT counts one sender's chunks exactly. A chunk's SIGNALs follow all its COPYs
 * when the COPYs are short (ar__signal_each_copy). */
#include <stdlib.h>
#include "algorithms/internal.h"

int ar__build_oneshot(const ar_topo_t *t, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                      ar_plan_t **out, ar_error_t *err) {
    int P = t->nranks;
    const ar__peers_t g = ar__peers(t);
    int lanes = ar__lanes(t, o, count, dt, AR__MAX_LANES_ONESHOT);
    /* each rank, per lane: a COPY to each peer and a REDUCE of every rank's slot */
    AR_TRY(ar__plan_fits(o, "1stage", P, (uint64_t)lanes * (uint64_t)P * (2u * (uint64_t)P - 1), err));
    ar_plan_t *p;
    int slots = o && o->slots ? o->slots : count * ar_dtype_size(dt) <= AR__PARITY_SLOTS_MAX_BYTES ? 2 : 1;
    if (slots != 1 && slots != 2)
        return AR_ERR(err, AR_EINVAL, "1stage: %d SCRATCH slots, want 1 or 2", slots);
    if (P == 1) slots = 1;
    AR_TRY(ar__plan_new(o, "1stage", P, lanes, count, dt, &p));
    const uint64_t stride = ar__slot_stride(count, dt);
    p->scratch_elems = (uint64_t)slots * P * stride;
    if (slots == 2) p->parity_elems = (uint64_t)P * stride;
    /* the slot a peer pushes into: this execution's with two slots */
    ar_addr_t (*slot)(int, ar_buf_t, uint64_t) = slots == 2 ? ar_addr_parity : ar_addr;
    int rc = AR_OK;
    ar_addr_t *sv = malloc((size_t)P * sizeof *sv);
    if (!sv) rc = AR_ENOMEM;
    for (int c = 0; c < lanes && rc == AR_OK; c++) {
        uint64_t lo, len, chunk, nck;
        ar__pipe_lane(o, count, dt, lanes, c, &lo, &len, &chunk, &nck);
        /* flags of lane c (ar__peer_flag): data from the peers from 2Pc on, done-reading
         * from 2Pc + P on */
        const uint32_t fbase = 2u * (uint32_t)P * (uint32_t)c;
        for (int r = 0; r < P && rc == AR_OK; r++) {
            if (!ar_plan_keeps_rank(p, r)) continue;
            if (P == 1) {
                rc = ar_plan_copy(p, r, c, ar_addr(r, AR_BUF_OUT, lo), ar_addr(r, AR_BUF_IN, lo), len);
                continue;
            }
            /* One slot: every peer has read what this rank pushed in the previous
             * execution. Two: the data flags order it (above). */
            if (slots == 1) rc = ar__wait_peer_flags(p, g, r, c, fbase + (uint32_t)P, 0, 1);
            for (uint64_t i = 0; i <= nck && rc == AR_OK; i++) {
                if (i < nck) { /* push chunk i (staggered so peers are not all hit at once) */
                    uint64_t off = lo + i * chunk, n = ar__piece_len(len, chunk, i);
                    const int each = ar__signal_each_copy(n * ar_dtype_size(dt));
                    for (int k = 1; k < P && rc == AR_OK; k++) {
                        int q = ar__peer(g, r, c, k);
                        rc = ar_plan_copy(p, r, c, slot(q, AR_BUF_SCRATCH, (uint64_t)r * stride + off),
                                          ar_addr(r, AR_BUF_IN, off), n);
                        if (rc == AR_OK && each) rc = ar_plan_signal(p, r, c, q, ar__peer_flag(g, fbase, r, q));
                    }
                    if (rc == AR_OK && !each) rc = ar__signal_peer_flags(p, g, r, c, fbase);
                }
                if (i == 0) continue;
                /* reduce chunk i-1 once every peer's copy of it has arrived */
                uint64_t j = i - 1;
                uint64_t off = lo + j * chunk, n = ar__piece_len(len, chunk, j);
                if (rc == AR_OK) rc = ar__reduce_peers(p, g, r, c, slot, stride, off, off, n, fbase, j + 1, sv);
            }
            /* done reading every peer's slot: they may push the next execution */
            if (rc == AR_OK && slots == 1) rc = ar__signal_peer_flags(p, g, r, c, fbase + (uint32_t)P);
        }
    }
    free(sv);
    return ar__plan_done(p, rc, "1stage", out, err);
}
