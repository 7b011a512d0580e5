/* algorithms: shared building blocks, not part of the public surface.
 *
 * Conventions every algorithm here follows:
 *  - a "lane" is one independent slice of the element range with its own
 *    channels and its own flags; no op of one lane touches another's ranges;
 *  - data moves by pushes (remote stores) into the receiver's SCRATCH or OUT,
 *    each followed by a SIGNAL the receiver WAITs for; pushing beats pulling
 *    when traffic flows both ways (DESIGN.md);
 *  - epoch safety: the next execution may start on one rank while another is
 *    still in this one, so every receiver acknowledges (SIGNAL back) once it has
 *    read what was pushed to it, and the pusher WAITs for those
 *    acknowledgements at the end of its execution, before it can push again. */
#ifndef ARSIM_ALGORITHMS_INTERNAL_H
#define ARSIM_ALGORITHMS_INTERNAL_H
#include "arsim/algo.h"

/* ar_plan_new, a sizing plan where o asks for one (ar_algo_opts_t.sizing): every
 * algorithm makes its plan with this. */
int ar__plan_new(const ar_algo_opts_t *o, const char *algo, int nranks, int nchannels, uint64_t count,
                 ar_dtype_t dtype, ar_plan_t **out);
/* A fused collective (algorithms/fused.c): algorithm a's allreduce of each partition of
 * o->gemm's rows, overlapped with the product of the next. */
int ar__fused_build(const ar_algo_t *a, const ar_topo_t *topo, uint64_t count, ar_dtype_t dtype,
                    const ar_algo_opts_t *o, ar_plan_t **out, ar_error_t *err);
/* Part b of [lo, hi) cut into n near-equal parts, the cuts on whole lines, blocks or vectors
 * of the element index where the parts are large enough (algorithms/util.c). */
#define AR__SPLIT_LINE AR_ALGO_SPLIT_LINE
#define AR__SPLIT_BLOCK 16u
#define AR__SPLIT_VEC 8u
void ar__split(uint64_t lo, uint64_t hi, int n, int b, uint64_t *off, uint64_t *len);

/* Number of lanes: from opts->channels, else enough to fill one neighbour link at
 * the model's per-channel push rate for large messages, one for small; never more
 * lanes than elements. */
/* The most lanes each algorithm builds (its plans' channel count grows with them);
 * --channels beyond it does not fit (ar_algo_build says so). */
#define AR__MAX_LANES_RING 128
#define AR__MAX_LANES_TORUS2D 64
#define AR__MAX_LANES_MESH2D 64
#define AR__MAX_LANES_ONESHOT 128
#define AR__MAX_LANES_TWOSHOT 128
#define AR__MAX_LANES_CENTER_ROOT 32
#define AR__MAX_LANES_NAIVE 64
#define AR__MAX_LANES_INNET 64
#define AR__MAX_LANES_DIRECT 128
/* Largest input per rank given two SCRATCH slots by execution parity (1stage when
 * opts->slots is 0, direct's reduce-scatter): the gain is one flag crossing (~1 us), which
 * matters while an execution takes microseconds (auto takes 1stage up to 4 MB on 2 x H200). */
#define AR__PARITY_SLOTS_MAX_BYTES (4u * 1024u * 1024u)
int ar__lanes(const ar_topo_t *t, const ar_algo_opts_t *o, uint64_t count, ar_dtype_t dt,
              int max_lanes);
/* The distance in elements between per-peer slots of `count` elements in SCRATCH or host
 * staging: count rounded up to whole 256-byte blocks, so that a slot's element x lies at the
 * same alignment as IN's and OUT's element x: the GPU executor moves them as vectors (it goes
 * element by element when an op's operands disagree on alignment), and on the same 32-byte
 * memory sectors. */
#define AR__SLOT_ALIGN_BYTES 256u
uint64_t ar__slot_stride(uint64_t count, ar_dtype_t dt);
/* Where a piece of IN lies in a slot that holds pieces alone (2stage's, direct's): at its IN
 * offset's place within a 16-byte vector, so that the executor moves it as vectors (a piece
 * of more than 127 elements starts on a whole 32-byte sector anyway: ar__split). Not more:
 * where the cuts fall on whole vectors, every piece then starts its room, each rank's
 * offsets are its place times a stride, and rank 0's plan stands for all under a model that
 * tracks warmth (its mirror offsets guessed: docs/SIM.md, "Symmetry"). */
static inline uint64_t ar__vec_residue(uint64_t off, ar_dtype_t dt) { return off % ar_vec_elems(dt); }
/* Chunk in elements for pipelining a lane of lane_elems elements in `pieces` steps. */
uint64_t ar__chunk_elems(const ar_algo_opts_t *o, uint64_t lane_elems, ar_dtype_t dt, int pieces);

/* Whether a channel pushing one COPY of copy_bytes to each of several peers SIGNALs
 * each peer right after its COPY (1), or issues all the COPYs and then the SIGNALs (0:
 * one release fence covers every store). On the GPUs a release waits while other
 * blocks of its GPU push across, so a fence per COPY is dear while the COPYs are short:
 * batched, 2stage and 1stage with 2 and 4 ranks per GPU were 2-18% faster with COPYs
 * up to 16 KB and 2-13% slower from 64 KB (docs/PERFORMANCE.md, "When a push phase
 * SIGNALs"). */
#define AR__SIGNAL_BATCH_MAX_BYTES 16384u
int ar__signal_each_copy(uint64_t copy_bytes);
/* How the peers of an algorithm that reaches every rank are numbered: the ranks as a W x (P /
 * W) grid, rank r at (r % W, r / W), and rank r's peer at offset d (d = 1 .. P - 1, itself a
 * grid point) the rank at r + d, each axis round its own ring. On a torus (its own grid, each
 * rank on its device) rank r's peers are then rank 0's moved by the translation taking 0 to
 * r, so a plan of one rank stands for all (arsim/plan.h); elsewhere W = P, a line round
 * which rank r's peers are r + 1, r + 2, ... */
typedef struct ar__peers_s {
    int P, W;
} ar__peers_t;
ar__peers_t ar__peers(const ar_topo_t *t);
/* The rank at offset d from rank r, and the offset of rank `from` seen from rank `to`. */
int ar__peer_at(ar__peers_t g, int r, int d);
int ar__peer_offset(ar__peers_t g, int from, int to);
/* The k-th peer (k = 1 .. P-1) rank r's channel c pushes to: channel c starts c peers
 * further on, so a rank's channels load all its links at once instead of each link
 * in turn. */
int ar__peer(ar__peers_t g, int r, int c, int k);
/* The peers ar__peer takes in turn: every rank but the lane's own (ar_algo_t.lane_period). */
int ar__peer_period(const ar_topo_t *t);
/* Rank r's channel c SIGNALs flag `flag` of every other rank, r + 1 first. */
int ar__signal_peers(ar_plan_t *p, int r, int c, uint32_t flag);
/* A flag per peer, named by where the sender sits seen from the receiver: what rank `from`
 * signals rank `to` lands on flag base + ar__peer_offset(g, from, to). Every rank's plan is
 * then every other's with the ranks moved (a plan of one rank, arsim/plan.h), where flags
 * named by the sender's number would differ from rank to rank. */
uint32_t ar__peer_flag(ar__peers_t g, uint32_t base, int from, int to);
/* Rank r's channel c SIGNALs every other rank q, offset 1 first, on ar__peer_flag(g, base, r, q). */
int ar__signal_peer_flags(ar_plan_t *p, ar__peers_t g, int r, int c, uint32_t base);
/* ... WAITs for every peer q's flag ar__peer_flag(g, base, q, r), offset 1 first: to reach
 * count, or (prev) for every SIGNAL of the previous executions (ar_plan_wait_prev). */
int ar__wait_peer_flags(ar_plan_t *p, ar__peers_t g, int r, int c, uint32_t base, uint64_t count, int prev);
/* Refuse at once a plan that would hold more than AR_PLAN_MAX_SRCS source addresses:
 * `srcs` is the least it would hold (a lower bound the algorithm computes from its shape),
 * so that building it never starts. AR_OK or AR_ELIMIT naming the algorithm and ranks. */
int ar__plan_fits(const ar_algo_opts_t *o, const char *algo, int nranks, uint64_t srcs, ar_error_t *err);
/* A probe plan (algorithms/probes.c) by name: x-oneshot, x-chainN, ...; channels < 1 is 1. */
int ar__probe_build(const char *name, int nranks, uint64_t count, ar_dtype_t dtype, int channels, ar_plan_t **out,
                    ar_error_t *err);
/* The probe entry a name stands for (x-chain34 -> x-chainN), or NULL. */
const ar_algo_t *ar__probe_find(const char *name);

/* The pipelined 1stage/2stage lanes: a lane's chunk is opts->chunk_bytes, else the whole
 * lane while the mean lane is below AR__PIPE_MIN_BYTES, from there about 16 steps of 128 KB
 * to 512 KB, in whole 64-element lines. */
#define AR__PIPE_MIN_BYTES (2u * 1024u * 1024u)
/* Lane c of `lanes` over [0, count) pipelined as above, every lane by the mean lane's
 * size: its range [lo, lo + len), its chunk in elements and its number of chunks (0 for
 * an empty lane). */
void ar__pipe_lane(const ar_algo_opts_t *o, uint64_t count, ar_dtype_t dt, int lanes, int c,
                   uint64_t *lo, uint64_t *len, uint64_t *chunk, uint64_t *nchunks);

/* A ring of n ranks on one channel with its data and acknowledgement flags. */
typedef struct ar__ring_s {
    ar_plan_t *p;
    int n;
    const int *ranks;   /* ring order; position i pushes to position i+1 */
    int chan;
    uint32_t fdata, fack;
    uint64_t scr_base;  /* SCRATCH offset of element 0 */
    uint64_t *nrecv;    /* per position: data WAITs so far */
    uint64_t nack;      /* acknowledgements each position sent */
    /* A reduce-scatter or all-gather of the ranks' shards (ar__ring_coll_pipe): the
     * collective, and part k's range (the shard of the rank at position k - 1, or this
     * lane's share of it). Allreduce passes leave them 0 and split [lo, hi) in n. */
    ar_coll_t coll;
    const uint64_t *part_lo, *part_len;
    /* the positions whose ops the plan keeps, once found (util.c, ring_span): 0 not yet,
     * else 1 + first, with last */
    int span_first1, span_last;
} ar__ring_t;

/* Reduce-scatter [lo, hi) of `src` (IN or OUT): position i ends with block (i+1)%n
 * of the sum over the ring in OUT. */
int ar__ring_rs(ar__ring_t *r, uint64_t lo, uint64_t hi, ar_buf_t src);
/* All-gather block (i+1)%n of every position into every OUT; acknowledges the
 * previous position once the last forward has read OUT. */
int ar__ring_ag(ar__ring_t *r, uint64_t lo, uint64_t hi);
/* Allreduce of [lo, hi) around the ring in groups of `group` elements, pipelined: the
 * stages of successive groups are interleaved (group g + 1 one stage behind group g), so
 * a position works on the next group while the current one's push is on its way
 * instead of waiting for it. The same ops as ar__ring_rs then ar__ring_ag per group. */
int ar__ring_pipe(ar__ring_t *r, uint64_t lo, uint64_t hi, uint64_t group, ar_buf_t src);
/* End of execution: wait for the next position's acknowledgements. */
int ar__ring_end(ar__ring_t *r);
/* r->coll (reduce-scatter or all-gather) over r's part table, in groups of chunk
 * elements of every part, pipelined as ar__ring_pipe: position i ends with part (i+1)%n
 * of the sum in OUT (reduce-scatter), or starts with it in IN and ends with every part
 * in OUT (all-gather). */
int ar__ring_coll_pipe(ar__ring_t *r, uint64_t chunk);

/* A spanning tree over the ranks, reduce up then broadcast down, pipelined. */
typedef struct ar__tree_s {
    ar_plan_t *p;
    int P;
    const int *parent;  /* -1 for the root */
    int root;
    int maxdeg;         /* most children of any rank */
    int cred, cbc;      /* the reduce and broadcast channels */
    uint32_t fbase;     /* its flags from here (rank_regions below) */
    uint64_t scr_base;  /* child slot j of element x at scr_base + j * ar__slot_stride + x ... */
    uint64_t nchunks;   /* chunks emitted so far */
    int *nchild, *slot; /* filled by ar__tree_init */
    int **child;
    /* ... or, where slot_at is set (a tree over [slot_lo, slot_lo + slot_len) only), at
     * slot_at[v] + j * slot_len + x - slot_lo on rank v: room for its own children only */
    const uint64_t *slot_at;
    uint64_t slot_lo, slot_len;
    /* 1: rank v's flags of this tree are lane x ar__tree_nflags(v's children) from fbase,
     * each rank's region its own size (the flags a plan holds grow with the tree's edges);
     * 0: ar__tree_nflags(maxdeg) from fbase on every rank */
    int rank_regions;
    uint32_t lane;
} ar__tree_t;

uint32_t ar__tree_nflags(int maxdeg);
int ar__tree_init(ar__tree_t *t);
void ar__tree_fini(ar__tree_t *t);
int ar__tree_chunk(ar__tree_t *t, uint64_t off, uint64_t len);
/* ar__tree_chunk's ops for one rank v, chunk k (from 1) of the tree: the reduce up
 * (sv room for maxdeg + 1 addresses) and the broadcast down. A builder that orders
 * each rank's chunks of several trees itself emits these, then sets nchunks for
 * ar__tree_end. */
int ar__tree_reduce_rank(ar__tree_t *t, int v, uint64_t off, uint64_t len, uint64_t k, ar_addr_t *sv);
int ar__tree_bcast_rank(ar__tree_t *t, int v, uint64_t off, uint64_t len, uint64_t k);
int ar__tree_end(ar__tree_t *t);
/* ar__tree_end in two halves, for builders ending several trees on shared channels: every
 * tree's signals before any tree's waits, so no tree's end waits behind another's. */
int ar__tree_end_signals(ar__tree_t *t);
int ar__tree_end_waits(ar__tree_t *t);
/* Emit the whole range [lo, hi) in chunks of `chunk` elements, then the end. */
int ar__tree_run(ar__tree_t *t, uint64_t lo, uint64_t hi, uint64_t chunk);

/* BFS over the rank adjacency graph: hop distances from src into dist (-1 unreachable)
 * and parents (lowest index first); returns the eccentricity, -1 when disconnected. */
int ar__bfs(const ar_topo_t *t, int src, int *dist, int *parent);
/* The rank of least eccentricity in the rank graph (the lowest on ties); -1 when it is
 * not connected, -2 out of memory. */
int ar__center_rank(const ar_topo_t *t);

/* A cycle through all ranks, consecutive ranks adjacent where one can be found:
 * identity, the devices' snake on grids, else a bounded search. Returns 1 when it is a
 * ring of neighbours, 0 when it is not (order then holds the devices' cycle, a grid's
 * snake with one jump, whose steps between non-neighbours the backends route), or
 * AR_ENOMEM. */
int ar__find_ring(const ar_topo_t *t, int *order);
/* Whether every step of the ring of ranks `order` (ar__find_ring's, P > 1) is one and the
 * same translation of t (arsim/topo.h): then rank 0's ring stands for every rank's. */
int ar__ring_translates(const ar_topo_t *t, const int *order);
/* Snake cycle on a W x H grid: order[] of node indices y*W + x. Returns 1 when it is a
 * cycle of neighbours (W*H even, both >= 2, or W*H <= 2), else 0: order then holds the
 * snake whose one jump is the shorter (odd grids, lines). */
int ar__snake_cycle(int W, int H, int *order);

/* Grid for torus2d/mesh2d: the topology's own when it is a torus or mesh with a rank on
 * every device, else opts grid_w x grid_h or the most square factorisation, ranks in
 * order (steps between grid neighbours whose devices are not linked are routed).
 * rank_at[y*W+x] receives the rank on each grid point. AR_OK, or AR_EUNFIT for a
 * grid_w x grid_h that does not hold the ranks. */
int ar__grid(const char *algo, const ar_topo_t *t, const ar_algo_opts_t *o, int *W, int *H, int *rank_at,
             ar_error_t *err);

/* Length of piece i when a lane of len elements is cut into pieces of chunk. */
uint64_t ar__piece_len(uint64_t len, uint64_t chunk, uint64_t i);

/* Rank r on channel c: WAIT for every peer q's flag ar__peer_flag(g, fbase, q, r) to reach nwait, then
 * REDUCE IN[off] with slot(r, SCRATCH, q * stride + at) of every peer into OUT[off],
 * n elements (slot is ar_addr or ar_addr_parity). sv holds nranks addresses. */
int ar__reduce_peers(ar_plan_t *p, ar__peers_t g, int r, int c, ar_addr_t (*slot)(int, ar_buf_t, uint64_t),
                     uint64_t stride, uint64_t at, uint64_t off, uint64_t n, uint32_t fbase, uint64_t nwait,
                     ar_addr_t *sv);

/* End of a builder: finish the plan when rc is AR_OK and hand it out, else free it
 * and report "<algo>: cannot build the plan: ...". */
int ar__plan_done(ar_plan_t *p, int rc, const char *algo, ar_plan_t **out, ar_error_t *err);

/* The builders. */
int ar__build_ring(const ar_topo_t *, uint64_t, ar_dtype_t, const ar_algo_opts_t *, ar_plan_t **,
                   ar_error_t *);
int ar__build_torus2d(const ar_topo_t *, uint64_t, ar_dtype_t, const ar_algo_opts_t *,
                      ar_plan_t **, ar_error_t *);
int ar__build_mesh2d(const ar_topo_t *, uint64_t, ar_dtype_t, const ar_algo_opts_t *,
                     ar_plan_t **, ar_error_t *);
int ar__build_oneshot(const ar_topo_t *, uint64_t, ar_dtype_t, const ar_algo_opts_t *,
                      ar_plan_t **, ar_error_t *);
int ar__build_twoshot(const ar_topo_t *, uint64_t, ar_dtype_t, const ar_algo_opts_t *,
                      ar_plan_t **, ar_error_t *);
int ar__build_center_root(const ar_topo_t *, uint64_t, ar_dtype_t, const ar_algo_opts_t *,
                          ar_plan_t **, ar_error_t *);
int ar__build_naive(const ar_topo_t *, uint64_t, ar_dtype_t, const ar_algo_opts_t *, ar_plan_t **,
                    ar_error_t *);
int ar__build_direct(const ar_topo_t *, uint64_t, ar_dtype_t, const ar_algo_opts_t *, ar_plan_t **,
                     ar_error_t *);
int ar__build_innet(const ar_topo_t *, uint64_t, ar_dtype_t, const ar_algo_opts_t *, ar_plan_t **,
                    ar_error_t *);

/* ar_plan_* emitters return AR_OK or AR_ENOMEM/AR_EINVAL; this maps to AR_TRY. */
#define EMIT(x) AR_TRY(x)
#endif
