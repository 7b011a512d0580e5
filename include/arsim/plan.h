/* arsim: the plan IR. The one place op semantics are written down.
 *
 * A plan is, for every rank, nchannels independent instruction streams
 * ("channels"; a thread block on a GPU, an actor in the simulator), each a
 * list of ops over buffers. Algorithms emit plans; backends execute them.
 *
 * Buffers, per rank: IN (count elements, the user's input, read-only),
 * OUT (count elements, the result), SCRATCH (scratch_elems elements).
 * A fourth space, the HOST staging buffer (host_elems elements, one for the
 * whole job, in host memory), is addressed with rank = AR_RANK_HOST; only
 * the `naive` algorithm uses it.
 *
 * An address is (rank, buffer, element offset). The executing rank may name
 * another rank's buffer: that is the data crossing a link, a pull when a
 * source is remote, a push when the destination is remote. Backends derive
 * all traffic from addresses.
 *
 * Ops:
 *   COPY    dst, src, n           dst[i] = src[i], i < n
 *   REDUCE  dst, src[0..k), n     dst[i] = src[0][i] + ... + src[k-1][i], summed in
 *                                 float32 and rounded once to the dtype; dst may be
 *                                 exactly one of the sources (same address), never a
 *                                 partial overlap. 2 <= k <= nranks + 1.
 *   SIGNAL  rank, flag            every write this channel issued before the SIGNAL is
 *                                 visible to all ranks before flag `flag` on rank
 *                                 `rank` is incremented by one.
 *   WAIT    flag, count           block until the executing rank's flag `flag` has
 *                                 received `count` increments in this execution;
 *                                 everything written before those SIGNALs is then
 *                                 visible to this channel.
 *   NETREDUCE dst, src, n         on every rank q: dst@q[i] = src@0[i] + ... +
 *                                 src@(P-1)[i], x@q being address x on rank q (dst and
 *                                 src name the executing rank's buffers): the sum of
 *                                 every rank's src, computed inside the switch that
 *                                 joins every rank's device (a model with
 *                                 switch_reduce), each rank's elements crossing to it
 *                                 once and the sum back to every rank once. Summed in
 *                                 float32 and rounded once; dst may be src exactly,
 *                                 never a partial overlap. Its writes on other ranks are
 *                                 the executing channel's, as a push's are.
 *   COMPUTE dst, a, b  (m, N, K)  a matrix product on the executing rank's device:
 *                                 dst[i*N + j] = sum over l < K of a[i*K + l] * b[l*N + j]
 *                                 for i < m, j < N: m rows of a (row-major, m x K) times
 *                                 b (K x N) into m rows of dst (m x N). Summed in float32
 *                                 (at least) and rounded once to the dtype. a, b and dst
 *                                 name the executing rank's buffers; dst overlaps
 *                                 neither. m is the op's n field, N its flag and K its
 *                                 count (ar_op_gemm); a tile of rows: the plan's GEMM
 *                                 (ar_plan_t.gemm) is split into such tiles.
 *
 * Flags are per rank, nflags of them, and count up across executions: an
 * execution (epoch e, from 0) waits for e * per_epoch[rank][flag] + count,
 * where per_epoch is the number of SIGNALs the plan sends to that flag. So
 * nothing is reset between iterations. A WAIT with count 0 (ar_plan_wait_prev)
 * therefore waits for every SIGNAL the previous executions sent to the flag and
 * nothing of this one: an acknowledgement taken at the start of the next
 * execution instead of at the end of this one (in the first execution it
 * passes at once).
 *
 * Looking further back: a WAIT carries `back` (0 or 1) and waits for
 * (e - back) * per_epoch + count; when e < back it passes at once. So a WAIT
 * with back 1 and count 0 (ar_plan_wait_back) waits for every SIGNAL of the
 * executions before the previous one, and nothing of the previous one.
 *
 * Epoch-parity addresses: an address whose buf has AR_ADDR_PARITY set names
 * element off + (e % 2) * parity_elems of its buffer in execution e
 * (ar_addr_at), parity_elems being the plan's. Both parities must lie inside
 * the buffer. This gives a buffer two slots used by alternate executions: a
 * slot written in execution e is next written in e + 2, so the acknowledgement
 * that its reader is done needs to arrive only by then (a WAIT with back 1),
 * not by the start of e + 1. Verifiers therefore run three executions.
 *
 * Ops within one channel execute in order; a later op may rely on an earlier
 * op's writes (program order). Channels are ordered only by SIGNAL/WAIT.
 *
 * A plan of one rank (only_rank >= 0) holds that rank's ops alone, every other rank's
 * being their image under the topology's translations (arsim/topo.h; those of the grid
 * shift_w wide): rank q's ops are only_rank's with every rank moved by the translation
 * taking only_rank to q, sizes, flags and buffers the same. Every rank then runs alike, at
 * the same moments, so a timing backend (AR_BACKEND_MODEL) runs only_rank's channels for
 * all: the SIGNAL some other rank sends to only_rank at the moment only_rank sends one is
 * the one that increments only_rank's flag (ar_plan_signal_rank), and each link or memory
 * it uses is shared with the translates of only_rank's ops that use it at that moment,
 * which are only_rank's own ops using the links and memories of the same orbit
 * (ar_topo_fold_links). Routes are then translates of only_rank's. Such a plan carries
 * no data: it is never verified nor run on data.
 *
 * A plan of a row of ranks (only_rank 0, only_span S > 1) is the same with fewer
 * translations: those that move whole rows of S ranks (the rotations by S, topo.h's w = -S),
 * where a grid of ranks lies on a topology that has its rows' shifts but not its columns'
 * (a torus2d grid on a ring). Ranks [0, S) stand one each for their orbit, rank q for
 * q % S: the SIGNAL that increments rank q % S's flag is the one sent to q, and each link
 * or memory folds onto the one of its orbit that the row's ops use (ar_topo_fold_links,
 * ar_topo_orbit_device). ar_plan_shifts names the translations a plan stands on.
 *
 * What a plan computes (ar_plan_t.coll), over IN and OUT of count elements on every
 * rank, rank r's shard being elements [lo, lo + len) of ar_coll_shard(count, P, r):
 *   ALLREDUCE      OUT@r[j] = IN@0[j] + ... + IN@(P-1)[j] for every j;
 *   REDUCESCATTER  OUT@r[j] = IN@0[j] + ... + IN@(P-1)[j] for j in r's shard; OUT
 *                  outside it is the plan's to use (a staging area) and means nothing;
 *   ALLGATHER      OUT@r[j] = IN@q[j] for every j, q the rank whose shard holds j; IN@q
 *                  outside q's shard is never read (the in-place layout: each rank's
 *                  contribution sits where it lands in the gathered vector).
 *   MATMUL_ALLREDUCE  a matrix product, then its allreduce (a row-parallel layer of
 *                  tensor parallelism), over the plan's GEMM (M, N, K): IN@r holds A_r
 *                  (M x K, row-major) at element 0 and B_r (K x N) at element M*K, so IN
 *                  holds M*K + K*N elements; OUT@r (count = M*N elements) = A_0 B_0 + ... +
 *                  A_(P-1) B_(P-1). Each product is rounded once to the dtype before the sum.
 *   ALLGATHER_MATMUL  an all-gather, then a matrix product (a column-parallel layer of
 *                  tensor parallelism), over the plan's GEMM (M, N, K), M a multiple of P:
 *                  IN@r holds rank r's rows of A (rows [lo, lo + len) of ar_coll_shard(M, P,
 *                  r), at element lo * K, the rest of A never read: the all-gather's in-place
 *                  layout) and B_r (K x N) at element M*K; OUT@r (count = M*N elements) = A B_r,
 *                  A's rows each from the rank that holds them, rounded once to the dtype.
 * Sums as for REDUCE. */
#ifndef ARSIM_PLAN_H
#define ARSIM_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "arsim/types.h"

typedef enum ar_buf_e { AR_BUF_IN = 0, AR_BUF_OUT = 1, AR_BUF_SCRATCH = 2, AR_NBUF } ar_buf_t;

/* The collective a plan computes (above). */
typedef enum ar_coll_e {
    AR_COLL_ALLREDUCE = 0, AR_COLL_REDUCESCATTER, AR_COLL_ALLGATHER, AR_COLL_MATMUL_ALLREDUCE,
    AR_COLL_ALLGATHER_MATMUL
} ar_coll_t;
#define AR_NCOLL 5
/* Whether c computes a matrix product as well (its plan has a GEMM, ar_plan_t.gemm). */
static inline int ar_coll_fused(ar_coll_t c) { return c == AR_COLL_MATMUL_ALLREDUCE || c == AR_COLL_ALLGATHER_MATMUL; }
/* The collective a fused one moves: the allreduce of the product, or the all-gather of A. */
static inline ar_coll_t ar_coll_inner(ar_coll_t c) {
    return c == AR_COLL_MATMUL_ALLREDUCE ? AR_COLL_ALLREDUCE : c == AR_COLL_ALLGATHER_MATMUL ? AR_COLL_ALLGATHER : c;
}
/* The matrix product of a fused collective: M x K times K x N on every rank. */
typedef struct ar_gemm_s {
    uint64_t m, n, k;
} ar_gemm_t;
/* "allreduce", "reducescatter", "allgather", "matmul-allreduce", "allgather-matmul"; NULL for
 * any other value. */
const char *ar_coll_name(ar_coll_t c);
/* AR_OK and *c for a name of ar_coll_name, else AR_EINVAL. */
int ar_coll_parse(const char *name, ar_coll_t *c);
/* Rank r's shard of count elements over P ranks: the r-th of P near-equal parts, the
 * larger ones first. */
static inline void ar_coll_shard(uint64_t count, int P, int r, uint64_t *lo, uint64_t *len) {
    const uint64_t base = count / (uint64_t)P, extra = count % (uint64_t)P, rr = (uint64_t)r;
    *len = base + (rr < extra);
    *lo = rr * base + (rr < extra ? rr : extra);
}
/* The rank whose shard (ar_coll_shard) holds element j of count. */
static inline int ar_coll_shard_owner(uint64_t count, int P, uint64_t j) {
    const uint64_t base = count / (uint64_t)P, extra = count % (uint64_t)P;
    const uint64_t big = extra * (base + 1); /* the first extra shards hold one more */
    return j < big ? (int)(j / (base + 1)) : (int)(extra + (j - big) / base);
}

#define AR_RANK_HOST (-1)
/* The cuda executor stages a channel's ops this many at a time (hw/exec.cu). A run of
 * SIGNALs to distinct flags inside one such window is released at once, one thread each,
 * and the models' channel clock (cost/clock.c) issues it so. */
#define AR_EXEC_WINDOW_OPS 64

typedef enum ar_opcode_e {
    AR_OP_COPY = 0, AR_OP_REDUCE, AR_OP_SIGNAL, AR_OP_WAIT, AR_OP_NETREDUCE, AR_OP_COMPUTE
} ar_opcode_t;
#define AR_NOPCODE 6

typedef struct ar_addr_s {
    int32_t rank;   /* owner, or AR_RANK_HOST */
    uint32_t buf;   /* ar_buf_t (ignored for HOST) */
    uint64_t off;   /* element offset */
} ar_addr_t;

/* 48 bytes, no padding: a large plan's memory is mostly its ops. */
typedef struct ar_op_s {
    uint8_t code;   /* ar_opcode_t */
    uint8_t back;   /* WAIT: executions back (0 or 1), see above */
    uint32_t nsrc;  /* COPY, NETREDUCE: 1; REDUCE: k; COMPUTE: 2 (a, b) */
    uint64_t n;     /* elements (COPY, REDUCE, NETREDUCE); COMPUTE: rows m */
    ar_addr_t dst;  /* COPY/REDUCE/NETREDUCE/COMPUTE destination; SIGNAL: dst.rank is the target rank */
    uint32_t src;   /* COPY/REDUCE/NETREDUCE/COMPUTE: index of the first source in plan->srcs */
    uint32_t flag;  /* SIGNAL, WAIT; COMPUTE: columns N */
    uint64_t count; /* WAIT; COMPUTE: inner dimension K */
} ar_op_t;

typedef struct ar_chan_s {
    uint32_t first;    /* index of the first op in plan->ops */
    uint32_t nops;
    uint16_t computes; /* holds a COMPUTE (ar_plan_finish) */
    /* Its first op WAITs for a flag only channels that compute SIGNAL (ar_plan_finish): it
     * has nothing to do before a product is done, so it starts after one. Where every channel
     * of a device that computes nothing does, the device's first products run alone: on the
     * GPUs the executor is launched after them, and the models give them every unit. */
    uint16_t after_product;
} ar_chan_t;

/* Sizing a plan without building it: what its ops would hold, before anything is
 * allocated for them (the runner's memory estimate). A plan given one (ar_plan_sizing,
 * before its first op) stores no op: its emitters count into it, and stop with AR_ELIMIT
 * once the ops pass max_ops (over is then 1: the plan is at least that large). Such a
 * plan is only counted and freed, never run. */
typedef struct ar_plan_size_s {
    uint64_t max_ops;               /* in: 0 for no limit */
    uint64_t ops, srcs, signals;    /* out: every op, source address and SIGNAL */
    uint32_t nflags;                /* out: the most any rank has, as ar_plan_finish sizes them */
    int nranks, nchannels;          /* out */
    uint64_t busy_chans;            /* out: channels with an op (a plan of one rank: its own) */
    uint64_t run_chans;             /* out: channels a run keeps state for (ar_plan_run_chans) */
    uint64_t flag_slots;            /* out: flag counters (ar_plan_flag_slots) */
    uint64_t count, scratch_elems, host_elems, elem_bytes; /* out: the buffers' elements */
    uint64_t in_elems;              /* out: IN's elements (count, or a fused collective's);
                                     * these three, where the count stopped (over), as the
                                     * plan had set them by then: at least so large */
    /* out, from ar_plan_finish: the bytes the plan holds built in place (ar_plan_layout):
     * ops, sources, channels, flag counts */
    uint64_t bytes;
    int over;                       /* out: stopped past max_ops */
    int keep_layout;                /* in: keep each channel's op count (chan_ops), for
                                     * ar_plan_layout: the plan built again, in place */
    uint32_t *chan_ops;             /* out: nranks x nchannels counts; ar_plan_size_free */
} ar_plan_size_t;
void ar_plan_size_free(ar_plan_size_t *s);

typedef struct ar_plan_s {
    char algo[32];
    ar_dtype_t dtype;
    uint64_t count;          /* elements per rank in OUT, and in IN unless in_elems says */
    uint64_t scratch_elems;  /* per rank */
    uint64_t host_elems;     /* host staging, whole job */
    int nranks;
    int nchannels;           /* per rank; some may be empty */
    uint32_t nflags;         /* the most flags any rank has (each rank's own: ar_plan_rank_flags) */
    uint32_t *rank_flags;    /* per rank: its flags, the highest its SIGNALs and WAITs name + 1 (a
                              * rank that stands for others: theirs too) */
    uint64_t *flag_at;       /* per kept rank (counted from the first) and one past: where its flag
                              * counters begin among all (ar_plan_flag; ar_plan_finish) */
    ar_chan_t *chans;        /* nranks * nchannels, index rank * nchannels + c */
    ar_op_t *ops;
    uint32_t nops, cap_ops;
    ar_addr_t *srcs;
    uint32_t nsrcs, cap_srcs;
    uint64_t *per_epoch;     /* per flag counter (ar_plan_flag): SIGNALs per execution (ar_plan_finish) */
    void *build;             /* builder internals, NULL once finished */
    uint64_t parity_elems;   /* offset of the odd executions' slot for AR_ADDR_PARITY addresses */
    int root;                /* the rank the algorithm reduces to, where it has one; else -1 */
    ar_coll_t coll;          /* what the plan computes (above); ALLREDUCE from ar_plan_new */
    ar_gemm_t gemm;          /* a fused collective's matrix product (above); zero otherwise */
    int partitions;          /* ... computed in this many partitions of rows (its algorithm's) */
    uint64_t in_elems;       /* elements of IN per rank where they are not count (a fused
                              * collective's operands); 0: count */
    ar_plan_size_t *sizing;  /* a sizing plan (above): counts, stores no op */
    int laid_out;            /* ar_plan_layout: ops written in place (chans[i].nops so far) */
    int only_rank;           /* a plan of one rank (above): its rank; -1: every rank's ops */
    int only_span;           /* ranks [only_rank, only_rank + only_span) kept: 1, or a row's S
                              * ranks from rank 0 (a plan of a row, above) */
    int shift_w;             /* the width of the grid whose shifts map the plan onto itself
                              * (ar_topo_translate): an algorithm that lays its ranks on a grid
                              * of its own says so; 0: the topology's own translations */
    const char *limit;       /* the limit a build ran into (AR_ELIMIT): "source addresses", "ops", "flags" */
    uint64_t limit_most;     /* and how many of them a plan may hold */
    /* A plan of rank 0 alone: where the translates of its ops that reach rank 0 touch it.
     * Rank 0's operand on rank q stands, on rank 0, for the operand of rank m's same op (m
     * the rank the translation taking q to 0 takes 0 to), at offset mirror_off[i] of the
     * same buffer, i its ar_plan_operand_index; each rank has its own part of the vector, so
     * the offsets differ. NULL where not known (a model that tracks warmth then runs every
     * rank's ops: arsim/cost.h). */
    uint64_t *mirror_off;
} ar_plan_t;

/* Building. An algorithm calls ar_plan_new, then appends ops to any channel in any
 * order with the ar_plan_* emitters, then ar_plan_finish. Emitters return AR_OK or
 * AR_ENOMEM / AR_EINVAL (bad rank, channel or flag). */
int ar_plan_new(const char *algo, int nranks, int nchannels, uint64_t count, ar_dtype_t dtype,
                ar_plan_t **out);
/* Make p, fresh from ar_plan_new, a plan of one rank (above): the emitters keep rank's ops
 * and drop every other rank's; with span > 1 (rank 0), a plan of the row [0, span). */
void ar_plan_only_rank(ar_plan_t *p, int rank, int span);
int ar_plan_copy(ar_plan_t *p, int rank, int chan, ar_addr_t dst, ar_addr_t src, uint64_t n);
int ar_plan_reduce(ar_plan_t *p, int rank, int chan, ar_addr_t dst, const ar_addr_t *srcs,
                   uint32_t k, uint64_t n);
/* dst and src: addresses on `rank` (AR_EINVAL otherwise). */
int ar_plan_netreduce(ar_plan_t *p, int rank, int chan, ar_addr_t dst, ar_addr_t src, uint64_t n);
/* COMPUTE of m rows (a, b, dst on `rank`; AR_EINVAL otherwise, or N beyond 32 bits). */
int ar_plan_compute(ar_plan_t *p, int rank, int chan, ar_addr_t dst, ar_addr_t a, ar_addr_t b, uint64_t m,
                    uint64_t N, uint64_t K);
int ar_plan_signal(ar_plan_t *p, int rank, int chan, int target_rank, uint32_t flag);
int ar_plan_wait(ar_plan_t *p, int rank, int chan, uint32_t flag, uint64_t count);
/* WAIT count 0: every SIGNAL of the previous executions to flag (see above).
 * ar_plan_wait with count 0 emits nothing. */
int ar_plan_wait_prev(ar_plan_t *p, int rank, int chan, uint32_t flag);
/* WAIT with `back` (0 or 1) executions back and count (see above): back 1, count 0
 * waits for every SIGNAL to flag of the executions before the previous one.
 * AR_EINVAL for back > 1. */
int ar_plan_wait_back(ar_plan_t *p, int rank, int chan, uint32_t flag, uint32_t back, uint64_t count);
/* Make p, fresh from ar_plan_new, a sizing plan counting into s (above). */
void ar_plan_sizing(ar_plan_t *p, ar_plan_size_t *s);
/* Give p, fresh from ar_plan_new, the exact room a sizing of the same build found (s, with
 * keep_layout): its ops are then written where they finally lie, with no arrays grown
 * per channel and no copy at ar_plan_finish, so building holds only the plan itself.
 * AR_ENOMEM; or AR_EINVAL from an emitter or ar_plan_finish when the build strays from
 * the sizing (a build must emit the same ops each time). */
int ar_plan_layout(ar_plan_t *p, const ar_plan_size_t *s);
/* Lays the ops out channel by channel, counts per_epoch, sizes nflags (a sizing plan:
 * only the last, into its ar_plan_size_t). */
int ar_plan_finish(ar_plan_t *p);
void ar_plan_free(ar_plan_t *p);
/* The largest piece one COPY or REDUCE moves, in bytes: the pipelining chunk where the
 * algorithm pipelines, its whole piece where it does not. What rows call chunk_bytes:
 * the value used, whether --chunk asked for it or the algorithm chose it. */
uint64_t ar_plan_chunk_bytes(const ar_plan_t *p);
/* "COPY", "REDUCE", "SIGNAL", "WAIT", "NETREDUCE", "COMPUTE"; "?" for any other code. */
const char *ar_op_name(uint32_t code);

static inline ar_addr_t ar_addr(int rank, ar_buf_t buf, uint64_t off) {
    ar_addr_t a = {rank, (uint32_t)buf, off};
    return a;
}

/* Epoch-parity address flag, OR-ed into ar_addr_t.buf (see above). */
#define AR_ADDR_PARITY 0x100u
#define AR_ADDR_BUF_MASK 0xffu

/* An address whose offset moves by parity_elems in odd executions. */
static inline ar_addr_t ar_addr_parity(int rank, ar_buf_t buf, uint64_t off) {
    ar_addr_t a = {rank, (uint32_t)buf | AR_ADDR_PARITY, off};
    return a;
}
/* Whether p keeps rank's ops: every rank's, or in a plan of one rank or a row (above) those
 * it keeps. A builder skips the ranks it does not keep, so such a plan costs their work alone. */
static inline int ar_plan_keeps_rank(const ar_plan_t *p, int rank) {
    return p->only_rank < 0 || (rank >= p->only_rank && rank < p->only_rank + p->only_span);
}
/* The first rank whose ops p holds: only_rank in a plan of one rank or a row, else 0. */
static inline int ar_plan_first_kept(const ar_plan_t *p) { return p->only_rank >= 0 ? p->only_rank : 0; }
/* How many ranks' ops p holds. */
static inline int ar_plan_kept_ranks(const ar_plan_t *p) { return p->only_rank >= 0 ? p->only_span : p->nranks; }
/* The channels a run of p executes are [0, ar_plan_run_chans(p)): every rank's, or in a plan
 * of one rank or a row those up to its last rank's (the others hold no ops). A backend sizes
 * and walks its per-channel state to it, so such a plan costs its own channels, not every
 * rank's. */
static inline int ar_plan_run_chans(const ar_plan_t *p) {
    return (p->only_rank >= 0 ? p->only_rank + p->only_span : p->nranks) * p->nchannels;
}
/* The rank of p that stands for rank q: q itself, only_rank, or in a plan of a row q % S. */
static inline int ar_plan_kept_rank(const ar_plan_t *p, int q) {
    return p->only_rank < 0 ? q : p->only_span > 1 ? q % p->only_span : p->only_rank;
}
/* The rank whose flag SIGNAL op increments when p runs: its target, or the kept rank that
 * stands for it (above). */
static inline int ar_plan_signal_rank(const ar_plan_t *p, const ar_op_t *op) {
    return ar_plan_kept_rank(p, op->dst.rank);
}
/* The translations p stands on, as topo.h's w names them: a row's rotations, or the shifts
 * of the grid p lies on (shift_w). */
static inline int ar_plan_shifts(const ar_plan_t *p) { return p->only_span > 1 ? -p->only_span : p->shift_w; }
/* The flag counters a run of p keeps: one per flag of each kept rank. A rank has as many
 * as its ops name (a tree's root one per child, its leaves a few), so a plan's counters grow
 * with its ops, not with its ranks times the widest rank's. */
static inline size_t ar_plan_flag_slots(const ar_plan_t *p) { return (size_t)p->flag_at[ar_plan_kept_ranks(p)]; }
/* The counter of `rank`'s flag (a SIGNAL's ar_plan_signal_rank, a WAIT's own rank) among them. */
static inline size_t ar_plan_flag(const ar_plan_t *p, int rank, uint32_t flag) {
    return (size_t)p->flag_at[p->only_rank >= 0 ? rank - p->only_rank : rank] + flag;
}
/* How many flags kept rank `rank` has: its SIGNALs' and WAITs' flags are below it. */
static inline uint32_t ar_plan_rank_flags(const ar_plan_t *p, int rank) {
    const int k = p->only_rank >= 0 ? rank - p->only_rank : rank;
    return (uint32_t)(p->flag_at[k + 1] - p->flag_at[k]);
}
/* Whether op moves elements (COPY, REDUCE, NETREDUCE), as opposed to SIGNAL and WAIT. */
static inline int ar_op_moves_data(const ar_op_t *op) {
    return op->code == AR_OP_COPY || op->code == AR_OP_REDUCE || op->code == AR_OP_NETREDUCE;
}
/* A COMPUTE's rows, columns and inner dimension (plan.h above). */
static inline void ar_op_gemm(const ar_op_t *op, uint64_t *m, uint64_t *N, uint64_t *K) {
    *m = op->n;
    *N = op->flag;
    *K = op->count;
}
/* Elements operand s (ar_op_operand) spans: n for a COPY/REDUCE/NETREDUCE; a COMPUTE's
 * a m x K, b K x N, dst m x N. */
static inline uint64_t ar_op_operand_elems(const ar_op_t *op, uint32_t s) {
    if (op->code != AR_OP_COMPUTE) return op->n;
    return s == 0 ? op->n * op->count : s == 1 ? op->count * op->flag : op->n * op->flag;
}
/* Operand s of a COPY/REDUCE/NETREDUCE/COMPUTE: source s for s < nsrc, the destination for
 * s == nsrc (a NETREDUCE's, on the executing rank: every rank's, plan.h above). */
static inline const ar_addr_t *ar_op_operand(const ar_plan_t *p, const ar_op_t *op, uint32_t s) {
    return s == op->nsrc ? &op->dst : &p->srcs[op->src + s];
}
/* Whether a data op starts or ends off a whole vector (AR_VEC_BYTES) in any operand: its
 * scalar head or tail, what the model charges op_misalign_ns for (arsim/cost.h) and all of
 * an offset that timing reads. */
static inline int ar_op_misaligned(const ar_plan_t *p, const ar_op_t *op) {
    if (!ar_op_moves_data(op)) return 0;
    const uint64_t size = ar_dtype_size(p->dtype);
    for (uint32_t s = 0; s <= op->nsrc; s++) {
        const ar_addr_t *a = ar_op_operand(p, op, s);
        if ((a->off * size) % AR_VEC_BYTES || ((a->off + op->n) * size) % AR_VEC_BYTES) return 1;
    }
    return 0;
}
/* Where operand a (as ar_op_operand gives it) sits among p's: a source's index in srcs, a
 * destination nsrcs + its op's index in ops. */
static inline size_t ar_plan_operand_index(const ar_plan_t *p, const ar_addr_t *a) {
    const uintptr_t x = (uintptr_t)a, lo = (uintptr_t)p->srcs;
    if (p->srcs && x >= lo && x < lo + (uintptr_t)p->nsrcs * sizeof *p->srcs) return (size_t)(a - p->srcs);
    return p->nsrcs + (size_t)((x - offsetof(ar_op_t, dst) - (uintptr_t)p->ops) / sizeof(ar_op_t));
}
/* The buffer an address names, without its flags. */
static inline ar_buf_t ar_addr_buf(ar_addr_t a) {
    return (ar_buf_t)(a.buf & AR_ADDR_BUF_MASK);
}
/* The plain address a names in execution epoch: parity applied, flags cleared. */
static inline ar_addr_t ar_addr_at(const ar_plan_t *p, ar_addr_t a, uint64_t epoch) {
    ar_addr_t r = {a.rank, a.buf & AR_ADDR_BUF_MASK, a.off};
    if ((a.buf & AR_ADDR_PARITY) && (epoch & 1)) r.off += p->parity_elems;
    return r;
}

/* Channel (rank, c) of a finished plan. */
static inline const ar_chan_t *ar_plan_chan(const ar_plan_t *p, int rank, int c) {
    return &p->chans[rank * p->nchannels + c];
}
uint64_t ar_plan_buf_elems(const ar_plan_t *p, int rank, ar_buf_t buf);

/* Whether the first product of every computing channel on device dev runs alone: every
 * channel with ops there that computes nothing starts after a product (after_product), and
 * one computes. rank_dev[r]: rank r's device. */
int ar_plan_products_first_alone(const ar_plan_t *p, const int *rank_dev, int dev);
/* The stages a plan runs in: where every channel that computes nothing WAITs for products
 * (flags only computing channels SIGNAL, this execution) at the same S > 1 points, the first
 * its first op, each channel's ops from its k-th such WAIT on are stage k - 1 (stage[op]).
 * Stage k may then start once the products it waits for are done and stage k - 1 has ended,
 * everywhere: every other WAIT of stage k is met by SIGNALs of stages up to k, and the
 * computing channels make those products waiting for no SIGNAL of stage k or later. A device
 * then holds a stage's channels only while they have work (on the GPUs, one executor launch per
 * stage, after its products). Otherwise 1, every op stage 0. stage: p->nops entries. Returns S,
 * or AR_ENOMEM (negative). */
int ar_plan_stages(const ar_plan_t *p, uint32_t *stage);
/* Whether op (of p->ops) is the first COMPUTE of its channel. */
int ar_plan_first_compute(const ar_plan_t *p, const ar_op_t *op);

/* Verify by symbolic execution that the plan computes its collective (p->coll):
 *  - every op's addresses are in bounds, k and flags valid, no write to IN;
 *  - every WAIT is eventually satisfied (no deadlock) under any interleaving
 *    the flags allow;
 *  - no two channels access overlapping ranges (at least one writing)
 *    without a SIGNAL/WAIT chain ordering them;
 *  - at the end, every OUT element the collective defines holds exactly one
 *    contribution from the same element of every rank's IN (ALLREDUCE, REDUCESCATTER),
 *    or of the rank whose shard holds it (ALLGATHER).
 * On failure err names the rank, channel, op index and what went wrong. */
int ar_plan_verify(const ar_plan_t *p, ar_error_t *err);

/* Limits on what a plan may hold, so nonsense (a petabyte count, a 1stage plan over
 * 65536 ranks) is refused with AR_ELIMIT before it costs memory and minutes:
 * count x element size x nranks must fit 63 bits (every byte offset and total fits
 * a signed 64-bit integer), a plan holds at most AR_PLAN_MAX_SRCS source
 * addresses (every COPY and REDUCE adds its sources) and at most AR_PLAN_MAX_FLAGS
 * flags over all ranks (every backend and the verifier keep a counter for each; a tree's
 * root has two per child and lane). */
#ifndef AR_PLAN_MAX_SRCS /* a build may raise it: CPPFLAGS=-DAR_PLAN_MAX_SRCS=... */
#define AR_PLAN_MAX_SRCS (1u << 25)
#endif
#ifndef AR_PLAN_MAX_FLAGS
#define AR_PLAN_MAX_FLAGS (1u << 25)
#endif
/* AR_OK, or AR_ELIMIT with a message when count elements of dtype on nranks ranks
 * overflow; callers check this before building a plan. */
int ar_plan_check_size(int nranks, uint64_t count, ar_dtype_t dtype, ar_error_t *err);
/* Why a plan emitter or ar_plan_new failed, for an algorithm's error message. */
const char *ar_plan_strerror(int rc);

/* Human-readable listing, for debugging and `arsim run --dump-plan`. */
void ar_plan_dump(const ar_plan_t *p, void *FILE_stream);

#endif
