/* direct: a reduce-scatter or all-gather of the ranks' shards (arsim/plan.h) in one step.
 * Reduce-scatter: every rank pushes each peer that peer's shard of its IN into the peer's
 * SCRATCH slot for it (the shard's length), and sums its own shard of its IN with the peers'
 * slots into OUT.
 * All-gather: every rank copies its shard from IN into its OUT and every peer's. Lane c
 * takes its share of every shard, cut into chunks so a rank sums chunk i - 1 while chunk
 * i is on its way; peers that are not neighbours are reached through other devices (the
 * backends route). Flags are per (lane, peer).
 *
 * A reduce-scatter's slots are reused by the next execution without a barrier, as
 * 1stage's are: up to AR__PARITY_SLOTS_MAX_BYTES two slots by execution parity, where the
 * data flags of execution e + 1 already say that its slots of e were read (a peer pushes
 * e + 1's chunks after its reductions of e, in program order); above it one slot, and a
 * rank tells each peer once it has read that peer's slot, taken at the start of the next
 * execution (a WAIT with count 0), off the critical path. */
#include <stdlib.h>
#include "algorithms/internal.h"

/* Lane c's share of rank q's shard. */
static void share(uint64_t count, int P, int lanes, int c, int q, uint64_t *lo, uint64_t *len) {
    uint64_t slo, slen;
    ar_coll_shard(count, P, q, &slo, &slen);
    ar__split(slo, slo + slen, lanes, c, lo, len);
}

/* Where, in the SCRATCH slot a peer holds for rank q, element off of q's shard lies: the slot
 * holds that shard alone (not a whole vector: a terabyte a rank at 16384 ranks and 64 MB),
 * from its first element's place in a vector on, so each element keeps IN's alignment
 * (ar__vec_residue). */
static uint64_t shard_at(uint64_t count, int P, int q, uint64_t off, ar_dtype_t dt) {
    uint64_t lo, len;
    ar_coll_shard(count, P, q, &lo, &len);
    return off - lo + ar__vec_residue(lo, dt);
}

/* Chunk i of a share [lo, lo + len) cut in chunks of `chunk`: offset and length (0 past it). */
static void piece(uint64_t lo, uint64_t len, uint64_t chunk, uint64_t i, uint64_t *off, uint64_t *n) {
    const uint64_t a = i * chunk < len ? i * chunk : len, b = (i + 1) * chunk < len ? (i + 1) * chunk : len;
    *off = lo + a;
    *n = b - a;
}

static int lane(ar_plan_t *p, ar__peers_t g, ar_coll_t coll, uint64_t count, ar_dtype_t dt, int lanes, int c, int r,
                uint64_t chunk, uint64_t nck, uint64_t stride, int slots, ar_addr_t *sv) {
    const int P = p->nranks;
    const uint32_t fbase = 2u * (uint32_t)P * (uint32_t)c;
    ar_addr_t (*slot)(int, ar_buf_t, uint64_t) = slots == 2 ? ar_addr_parity : ar_addr;
    uint64_t mlo, mlen, off, n;
    share(count, P, lanes, c, r, &mlo, &mlen);
    /* one slot: every peer has read what I pushed it in the previous execution */
    if (coll == AR_COLL_REDUCESCATTER && slots == 1) AR_TRY(ar__wait_peer_flags(p, g, r, c, fbase + (uint32_t)P, 0, 1));
    for (uint64_t i = 0; i <= nck; i++) {
        if (coll == AR_COLL_ALLGATHER && i < nck) {
            piece(mlo, mlen, chunk, i, &off, &n);
            AR_TRY(ar_plan_copy(p, r, c, ar_addr(r, AR_BUF_OUT, off), ar_addr(r, AR_BUF_IN, off), n));
            for (int k = 1; k < P; k++)
                AR_TRY(ar_plan_copy(p, r, c, ar_addr(ar__peer(g, r, c, k), AR_BUF_OUT, off),
                                    ar_addr(r, AR_BUF_IN, off), n));
            AR_TRY(ar__signal_peer_flags(p, g, r, c, fbase));
        }
        if (coll != AR_COLL_REDUCESCATTER) continue;
        if (i < nck) { /* every peer's chunk i, into its slot for me */
            for (int k = 1; k < P; k++) {
                const int q = ar__peer(g, r, c, k);
                uint64_t qlo, qlen;
                share(count, P, lanes, c, q, &qlo, &qlen);
                piece(qlo, qlen, chunk, i, &off, &n);
                AR_TRY(ar_plan_copy(p, r, c, slot(q, AR_BUF_SCRATCH, (uint64_t)r * stride + shard_at(count, P, q, off, dt)),
                                    ar_addr(r, AR_BUF_IN, off), n));
            }
            AR_TRY(ar__signal_peer_flags(p, g, r, c, fbase));
        }
        if (i == 0) continue;
        /* my chunk i - 1 once every peer's has arrived */
        piece(mlo, mlen, chunk, i - 1, &off, &n);
        AR_TRY(ar__reduce_peers(p, g, r, c, slot, stride, shard_at(count, P, r, off, dt), off, n, fbase, i, sv));
    }
    if (coll == AR_COLL_REDUCESCATTER) /* every slot read: the peers may push the next execution */
        return slots == 1 ? ar__signal_peer_flags(p, g, r, c, fbase + (uint32_t)P) : AR_OK;
    /* all-gather: every peer's chunks have arrived */
    return ar__wait_peer_flags(p, g, r, c, fbase, nck, 0);
}

int ar__build_direct(const ar_topo_t *t, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o, ar_plan_t **out,
                     ar_error_t *err) {
    const int P = t->nranks;
    const ar__peers_t g = ar__peers(t);
    const ar_coll_t coll = o ? o->coll : AR_COLL_ALLREDUCE;
    if (coll == AR_COLL_ALLREDUCE)
        return AR_ERR(err, AR_EUNFIT, "direct: reduce-scatter and all-gather only (an allreduce: 1stage or 2stage)");
    const int lanes = ar__lanes(t, o, count, dt, AR__MAX_LANES_DIRECT);
    /* each rank, per lane and chunk: a COPY to each peer, and a REDUCE of every rank's */
    AR_TRY(ar__plan_fits(o, "direct", P, (uint64_t)lanes * (uint64_t)P * 2u * (uint64_t)P, err));
    ar_plan_t *p;
    AR_TRY(ar__plan_new(o, "direct", P, lanes, count, dt, &p));
    /* a peer's slot: the largest shard, from its place in a vector on (shard_at) */
    const uint64_t stride = ar__slot_stride((count + (uint64_t)P - 1) / (uint64_t)P + ar_vec_elems(dt) - 1, dt);
    const int slots = P > 1 && count * ar_dtype_size(dt) <= AR__PARITY_SLOTS_MAX_BYTES ? 2 : 1;
    if (coll == AR_COLL_REDUCESCATTER) p->scratch_elems = (uint64_t)slots * P * stride;
    if (coll == AR_COLL_REDUCESCATTER && slots == 2) p->parity_elems = (uint64_t)P * stride;
    ar_addr_t *sv = malloc((size_t)P * sizeof *sv);
    int rc = sv ? AR_OK : AR_ENOMEM;
    for (int c = 0; c < lanes && rc == AR_OK; c++) {
        uint64_t most = 0, lo, len;
        for (int q = 0; q < P; q++) {
            share(count, P, lanes, c, q, &lo, &len);
            most = len > most ? len : most;
        }
        const uint64_t chunk = ar__chunk_elems(o, most ? most : 1, dt, 1);
        const uint64_t nck = most ? (most - 1) / chunk + 1 : 0;
        for (int r = 0; r < P && rc == AR_OK; r++) {
            if (!ar_plan_keeps_rank(p, r)) continue;
            if (P == 1) {
                share(count, P, lanes, c, r, &lo, &len);
                rc = ar_plan_copy(p, r, c, ar_addr(r, AR_BUF_OUT, lo), ar_addr(r, AR_BUF_IN, lo), len);
            } else
                rc = lane(p, g, coll, count, dt, lanes, c, r, chunk, nck, stride, slots, sv);
        }
    }
    free(sv);
    return ar__plan_done(p, rc, "direct", out, err);
}
