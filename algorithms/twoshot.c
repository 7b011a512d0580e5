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
#include "arsim/cost.h"

/* Whether the reduce-scatter pulls (rank r's REDUCE reads slice r of every rank's IN
 * where it lies) instead of pushing (every peer copies slice r into r's SCRATCH first).
 * Per rank, as fractions of the vector S, pushing moves 4(P-1)/P + 1 + 1/P through its
 * device's memory (its slices out, the peers' in and out of SCRATCH again, its own slice,
 * the sum, the all-gather's loads and stores), pulling 2(P-1)/P + 1 + 1/P; the links carry
 * 2(P-1)/P either way. Pushes move data at the links' pace where pulls wait a remote
 * load's latency, so pulls are taken only where the memory bounds the pushes: where the
 * push's memory time, on the device with the most ranks, passes its links' time on the
 * device with the narrowest links. Never where every rank shares one device (no link). */
static int rs_pulls(const ar_topo_t *t, int P, ar_mem_t level) {
    const ar_mem_level_t *lv = &t->model->mem[level];
    if (P < 2 || !lv->present) return 0;
    int *on = calloc((size_t)t->ndevices, sizeof *on);
    if (!on) return 0;
    const int q = ar_topo_ranks_per_device(t, on);
    double links = 0; /* GB/s out of the narrowest device that holds ranks */
    for (int d = 0; d < t->ndevices; d++) {
        if (!on[d]) continue;
        double b = 0;
        for (int e = t->adj_start[d]; e < t->adj_start[d + 1]; e++) b += ar_topo_link_gbps(t, t->adj_link[e]);
        if (links == 0 || b < links) links = b;
    }
    free(on);
    if (links <= 0 || q == P) return 0;
    const double f = (double)(P - 1) / P;
    const double memory_s = q * (4 * f + 1 + 1.0 / P) / ar_cost_mem_gbps(lv), link_s = q * 2 * f / links;
    return memory_s > link_s;
}

/* The pulling reduce-scatter's lane c on rank r: tell every peer my IN is ready and wait
 * for theirs (a peer reads it from now on), then per chunk reduce my slice from every
 * rank's IN into my OUT and push it into every peer's OUT (the all-gather, flags from P on);
 * done once every peer's slices of every chunk have arrived, which also says each has
 * finished reading my IN. */
static int pull_lane(ar_plan_t *p, ar__peers_t g, const ar_algo_opts_t *o, uint64_t count, ar_dtype_t dt, int lanes,
                     int r, int c, ar_addr_t *sv) {
    const int P = p->nranks;
    uint64_t lo, len, chunk, nck;
    ar__pipe_lane(o, count, dt, lanes, c, &lo, &len, &chunk, &nck);
    const uint32_t fbase = 2u * (uint32_t)P * (uint32_t)c;
    AR_TRY(ar__signal_peer_flags(p, g, r, c, fbase));
    AR_TRY(ar__wait_peer_flags(p, g, r, c, fbase, 1, 0));
    for (uint64_t i = 0; i < nck; i++) {
        uint64_t so, sl;
        const uint64_t off = lo + i * chunk, n = ar__piece_len(len, chunk, i);
        ar__split(off, off + n, P, r, &so, &sl);
        sv[0] = ar_addr(r, AR_BUF_IN, so);
        for (int k = 1; k < P; k++) sv[k] = ar_addr(ar__peer(g, r, c, k), AR_BUF_IN, so);
        AR_TRY(ar_plan_reduce(p, r, c, ar_addr(r, AR_BUF_OUT, so), sv, (uint32_t)P, sl));
        const int each = ar__signal_each_copy(n / (uint64_t)P * ar_dtype_size(dt));
        for (int k = 1; k < P; k++) {
            const int q = ar__peer(g, r, c, k);
            AR_TRY(ar_plan_copy(p, r, c, ar_addr(q, AR_BUF_OUT, so), ar_addr(r, AR_BUF_OUT, so), sl));
            if (each) AR_TRY(ar_plan_signal(p, r, c, q, ar__peer_flag(g, fbase + (uint32_t)P, r, q)));
        }
        if (!each) AR_TRY(ar__signal_peer_flags(p, g, r, c, fbase + (uint32_t)P));
    }
    return ar__wait_peer_flags(p, g, r, c, fbase + (uint32_t)P, nck, 0);
}

/* The pushing reduce-scatter's SCRATCH: rank r receives only its own pieces (one per lane and
 * chunk), so peer q's slot holds those alone, `cap` elements apart in the order of the lanes'
 * chunks (lane c's from first[c] on), each at the alignment of its offset in IN
 * (ar__vec_residue): a slot of about count / P elements, where one as long as the
 * vector made P slots of count (a terabyte a rank at 16384 ranks and 64 MB). */
typedef struct pieces_s {
    uint64_t cap, stride; /* elements: one piece's room, one peer's slot */
    uint64_t *first;      /* per lane: the index of its first chunk's piece */
} pieces_t;

static int pieces_init(pieces_t *s, const ar_algo_opts_t *o, uint64_t count, ar_dtype_t dt, int lanes, int P) {
    s->first = malloc((size_t)lanes * sizeof *s->first);
    if (!s->first) return AR_ENOMEM;
    uint64_t n = 0, most = 0;
    for (int c = 0; c < lanes; c++) {
        uint64_t lo, len, chunk, nck;
        ar__pipe_lane(o, count, dt, lanes, c, &lo, &len, &chunk, &nck);
        s->first[c] = n;
        n += nck;
        if (nck && chunk > most) most = chunk;
    }
    /* a piece: at most its exact share and a split grain (ar__split), at an offset within a
     * vector (ar__vec_residue) */
    const uint64_t share = (most + (uint64_t)P - 1) / (uint64_t)P;
    s->cap = ar__slot_stride(share + ar_algo_split_grain(most / (uint64_t)P) + ar_vec_elems(dt) - 1, dt);
    s->stride = n * s->cap;
    return AR_OK;
}

/* Where in its slot for a peer rank r's piece of lane c's chunk i, starting at IN offset so, lies. */
static uint64_t piece_at(const pieces_t *s, int c, uint64_t i, uint64_t so, ar_dtype_t dt) {
    return (s->first[c] + i) * s->cap + ar__vec_residue(so, dt);
}

int ar__build_twoshot(const ar_topo_t *t, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                      ar_plan_t **out, ar_error_t *err) {
    int P = t->nranks;
    const ar__peers_t g = ar__peers(t);
    int lanes = ar__lanes(t, o, count, dt, AR__MAX_LANES_TWOSHOT);
    /* each rank, per lane: a COPY to each peer per phase and a REDUCE of every rank's slice */
    AR_TRY(ar__plan_fits(o, "2stage", P, (uint64_t)lanes * (uint64_t)P * (3u * (uint64_t)P - 2), err));
    const int pulls = rs_pulls(t, P, o ? o->buffer : AR_MEM_HBM);
    ar_plan_t *p;
    AR_TRY(ar__plan_new(o, "2stage", P, lanes, count, dt, &p));
    pieces_t pc = {0};
    int rc = pulls ? AR_OK : pieces_init(&pc, o, count, dt, lanes, P);
    p->scratch_elems = pulls ? 0 : (uint64_t)P * pc.stride;
    ar_addr_t *sv = malloc((size_t)P * sizeof *sv);
    if (!sv) rc = AR_ENOMEM;
    for (int c = 0; c < lanes && rc == AR_OK && pulls; c++)
        for (int r = 0; r < P && rc == AR_OK; r++)
            if (ar_plan_keeps_rank(p, r)) rc = pull_lane(p, g, o, count, dt, lanes, r, c, sv);
    for (int c = 0; c < lanes && rc == AR_OK && !pulls; c++) {
        uint64_t lo, len, chunk, nck;
        ar__pipe_lane(o, count, dt, lanes, c, &lo, &len, &chunk, &nck);
        /* flags of lane c (ar__peer_flag): reduce-scatter data from peer q from 2Pc on,
         * all-gather data (and done-reading) from 2Pc + P on */
        const uint32_t fbase = 2u * (uint32_t)P * (uint32_t)c;
        for (int r = 0; r < P && rc == AR_OK; r++) {
            if (!ar_plan_keeps_rank(p, r)) continue;
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
                        int q = ar__peer(g, r, c, k);
                        ar__split(off, off + n, P, q, &so, &sl);
                        rc = ar_plan_copy(p, r, c,
                                          ar_addr(q, AR_BUF_SCRATCH, (uint64_t)r * pc.stride + piece_at(&pc, c, i, so, dt)),
                                          ar_addr(r, AR_BUF_IN, so), sl);
                        if (rc == AR_OK && each) rc = ar_plan_signal(p, r, c, q, ar__peer_flag(g, fbase, r, q));
                    }
                    if (rc == AR_OK && !each) rc = ar__signal_peer_flags(p, g, r, c, fbase);
                }
                if (i == 0) continue;
                /* chunk i-1: reduce my slice once every peer's part has arrived, then
                 * all-gather it into every peer's OUT */
                uint64_t j = i - 1;
                uint64_t off = lo + j * chunk, n = ar__piece_len(len, chunk, j);
                ar__split(off, off + n, P, r, &so, &sl);
                const int each = ar__signal_each_copy(n / (uint64_t)P * ar_dtype_size(dt));
                if (rc == AR_OK)
                    rc = ar__reduce_peers(p, g, r, c, ar_addr, pc.stride, piece_at(&pc, c, j, so, dt), so, sl, fbase,
                                          j + 1, sv);
                for (int kk = 1; kk < P && rc == AR_OK; kk++) {
                    int q = ar__peer(g, r, c, kk);
                    rc = ar_plan_copy(p, r, c, ar_addr(q, AR_BUF_OUT, so), ar_addr(r, AR_BUF_OUT, so), sl);
                    if (rc == AR_OK && each) rc = ar_plan_signal(p, r, c, q, ar__peer_flag(g, fbase + (uint32_t)P, r, q));
                }
                if (rc == AR_OK && !each) rc = ar__signal_peer_flags(p, g, r, c, fbase + (uint32_t)P);
            }
            /* every peer's slices have arrived (and my pushes to them were read) */
            if (rc == AR_OK) rc = ar__wait_peer_flags(p, g, r, c, fbase + (uint32_t)P, nck, 0);
        }
    }
    free(sv);
    free(pc.first);
    return ar__plan_done(p, rc, "2stage", out, err);
}
