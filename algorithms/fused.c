/* Fused collectives (arsim/plan.h): a matrix product split into partitions of rows, each
 * partition's allreduce starting as soon as its rows are computed, while the next
 * partition computes. Any algorithm that builds an allreduce serves: its plan for one
 * partition is built once and laid into the fused plan once per partition, its buffers and
 * flags moved to that partition's own, so the fusion knows nothing of the algorithm.
 *
 * Per rank, the fused plan has the algorithm's channels and one more, the compute channel:
 *   compute:  for each partition i: wait until every reader of the rows i computed in the
 *             previous execution is done with them (DONE), COMPUTE them into SCRATCH (the
 *             rank's product, the algorithm's IN), SIGNAL READY_i; then, after the last
 *             partition, for each i: WAIT until its own rank's channels have read partition i
 *             (FIN_i) and SIGNAL DONE to every rank whose product they read;
 *   channel c: for each partition i: WAIT READY_i, the algorithm's ops of partition i, then
 *             SIGNAL FIN_i where they read a product.
 * A product is thus overwritten only after every channel that reads it is done (the
 * algorithm protects its own buffers across executions; a product is new to it), and an
 * allreduce starts only after its rows exist (a peer's rows: the algorithm's own
 * SIGNAL/WAIT before it reads another rank's input orders it after that rank's READY_i). */
#include <stdlib.h>
#include <string.h>
#include "algorithms/internal.h"
#include "arsim/util.h"

typedef struct fuse_s {
    const ar_plan_t *in;   /* one partition's allreduce */
    ar_plan_t *out;
    uint64_t rows, N, K, M;
    int parts, P, C;       /* partitions, ranks, the algorithm's channels */
    uint32_t ready, fin, done, inner; /* first flag of each group */
    uint64_t prod_elems;   /* SCRATCH: every partition's product first, then their scratch */
    unsigned char *reads;  /* P x C x P: channel (q, c) reads rank r's product */
    ar_addr_t *srcs;       /* P + 1: a REDUCE's sources, moved */
} fuse_t;

/* Where address a of the collective's plan lies in the fused one (part: the partition laid),
 * AR_EINVAL where it cannot. */
typedef int (*mover_t)(const void *ctx, int part, ar_addr_t a, ar_addr_t *to);

/* Op of the collective's plan in, laid into the fused plan p by channel (r, c): its flags from
 * flag0 on, its addresses moved by move; srcs: room for in->nranks + 1 sources. */
static int lay_op(ar_plan_t *p, int r, int c, const ar_plan_t *in, const ar_op_t *op, uint32_t flag0, mover_t move,
                  const void *ctx, int part, ar_addr_t *srcs) {
    ar_addr_t d;
    switch (op->code) {
    case AR_OP_SIGNAL: return ar_plan_signal(p, r, c, op->dst.rank, flag0 + op->flag);
    case AR_OP_WAIT: return ar_plan_wait_back(p, r, c, flag0 + op->flag, op->back, op->count);
    case AR_OP_COPY:
    case AR_OP_REDUCE:
    case AR_OP_NETREDUCE:
        if (op->nsrc > (uint32_t)in->nranks + 1) return AR_EINVAL;
        AR_TRY(move(ctx, part, op->dst, &d));
        for (uint32_t k = 0; k < op->nsrc; k++) AR_TRY(move(ctx, part, in->srcs[op->src + k], &srcs[k]));
        return op->code == AR_OP_COPY     ? ar_plan_copy(p, r, c, d, srcs[0], op->n)
               : op->code == AR_OP_REDUCE ? ar_plan_reduce(p, r, c, d, srcs, op->nsrc, op->n)
                                          : ar_plan_netreduce(p, r, c, d, srcs[0], op->n);
    default: return AR_EINVAL; /* the collective computes nothing itself */
    }
}

/* Where address a of the partition's plan lies in partition i of the fused one. */
static int move_addr(const void *ctx, int i, ar_addr_t a, ar_addr_t *to) {
    const fuse_t *f = ctx;
    *to = a;
    if (a.rank == AR_RANK_HOST) {
        to->off += (uint64_t)i * f->in->host_elems;
        return AR_OK;
    }
    const uint64_t part = (uint64_t)i * f->rows * f->N;
    switch (ar_addr_buf(a)) {
    case AR_BUF_IN: /* the rank's product, rows of partition i */
        if (a.buf & AR_ADDR_PARITY) return AR_EINVAL;
        to->buf = AR_BUF_SCRATCH;
        to->off = part + a.off;
        return AR_OK;
    case AR_BUF_OUT:
        if (a.buf & AR_ADDR_PARITY) return AR_EINVAL;
        to->off = part + a.off;
        return AR_OK;
    case AR_BUF_SCRATCH: to->off = f->prod_elems + (uint64_t)i * f->in->scratch_elems + a.off; return AR_OK;
    default: return AR_EINVAL;
    }
}

/* Channel (q, c)'s ops of partition i, moved. */
static int lay_partition(fuse_t *f, int q, int c, int i) {
    const ar_chan_t *ch = ar_plan_chan(f->in, q, c);
    ar_plan_t *p = f->out;
    const uint32_t flags = f->inner + (uint32_t)i * f->in->nflags;
    for (uint32_t j = 0; j < ch->nops; j++)
        AR_TRY(lay_op(p, q, c, f->in, &f->in->ops[ch->first + j], flags, move_addr, f, i, f->srcs));
    return AR_OK;
}

/* Which channels read which rank's product (IN of the partition's plan). */
static void find_readers(fuse_t *f) {
    const ar_plan_t *in = f->in;
    for (int q = 0; q < f->P; q++)
        for (int c = 0; c < f->C; c++) {
            const ar_chan_t *ch = ar_plan_chan(in, q, c);
            for (uint32_t j = 0; j < ch->nops; j++) {
                const ar_op_t *op = &in->ops[ch->first + j];
                if (!ar_op_moves_data(op)) continue;
                for (uint32_t k = 0; k < op->nsrc; k++) {
                    const ar_addr_t *a = &in->srcs[op->src + k];
                    if (op->code == AR_OP_NETREDUCE && ar_addr_buf(*a) == AR_BUF_IN) /* every rank's */
                        for (int r = 0; r < f->P; r++) f->reads[((size_t)q * f->C + c) * f->P + r] = 1;
                    else if (a->rank != AR_RANK_HOST && ar_addr_buf(*a) == AR_BUF_IN)
                        f->reads[((size_t)q * f->C + c) * f->P + a->rank] = 1;
                }
            }
        }
}

static int chan_reads(const fuse_t *f, int q, int c) {
    for (int r = 0; r < f->P; r++)
        if (f->reads[((size_t)q * f->C + c) * f->P + r]) return 1;
    return 0;
}

/* Whether rank q's channels read rank r's product. */
static int rank_reads(const fuse_t *f, int q, int r) {
    for (int c = 0; c < f->C; c++)
        if (f->reads[((size_t)q * f->C + c) * f->P + r]) return 1;
    return 0;
}

static int lay_rank(fuse_t *f, int r) {
    ar_plan_t *p = f->out;
    const int cc = f->C; /* the compute channel */
    const uint64_t b_off = f->M * f->K;
    for (int i = 0; i < f->parts; i++) {
        for (int q = 0; q < f->P; q++)
            if (rank_reads(f, q, r)) AR_TRY(ar_plan_wait_prev(p, r, cc, f->done + (uint32_t)(i * f->P + q)));
        const uint64_t row = (uint64_t)i * f->rows;
        AR_TRY(ar_plan_compute(p, r, cc, ar_addr(r, AR_BUF_SCRATCH, row * f->N), ar_addr(r, AR_BUF_IN, row * f->K),
                               ar_addr(r, AR_BUF_IN, b_off), f->rows, f->N, f->K));
        AR_TRY(ar_plan_signal(p, r, cc, r, f->ready + (uint32_t)i));
    }
    int readers = 0;
    for (int c = 0; c < f->C; c++) readers += chan_reads(f, r, c);
    for (int i = 0; i < f->parts && readers; i++) {
        AR_TRY(ar_plan_wait(p, r, cc, f->fin + (uint32_t)i, (uint64_t)readers));
        for (int o = 0; o < f->P; o++)
            if (rank_reads(f, r, o)) AR_TRY(ar_plan_signal(p, r, cc, o, f->done + (uint32_t)(i * f->P + r)));
    }
    for (int c = 0; c < f->C; c++) {
        if (!ar_plan_chan(f->in, r, c)->nops) continue;
        for (int i = 0; i < f->parts; i++) {
            AR_TRY(ar_plan_wait(p, r, c, f->ready + (uint32_t)i, 1));
            AR_TRY(lay_partition(f, r, c, i));
            if (chan_reads(f, r, c)) AR_TRY(ar_plan_signal(p, r, c, r, f->fin + (uint32_t)i));
        }
    }
    return AR_OK;
}

/* The end of a fused build: the collective's own plan freed; on success the fused plan out,
 * else freed and the failure said (what: the collective fused). */
static int fused_done(const ar_algo_t *a, const char *what, int rc, ar_plan_t *in, ar_plan_t *fused, ar_plan_t **out,
                      ar_error_t *err) {
    ar_plan_free(in);
    if (rc != AR_OK) {
        ar_plan_free(fused);
        return rc == AR_ELIMIT || rc == AR_ENOMEM || rc == AR_EINVAL
                   ? AR_ERR(err, rc, "%s: cannot fuse its %s with the product: %s", a->name, what, ar_plan_strerror(rc))
                   : rc;
    }
    *out = fused;
    return AR_OK;
}

/* All-gather + matmul (ALLGATHER_MATMUL): the algorithm's all-gather of A's rows into the
 * rank's SCRATCH (its OUT moved there; its IN the rank's rows, where they lie in IN), and per
 * rank one more channel, the compute channel, which multiplies each rank's rows by its own B as
 * soon as they are there:
 *   compute:  its own rows first, straight from IN; then rank q's, for q = r + 1, r + 2, ...
 *             around: WAIT ARRIVED_q (a SIGNAL from every op that writes q's rows into r's
 *             gathered A), COMPUTE them into OUT, SIGNAL CONSUMED_(r,q) to each rank whose
 *             channels write them;
 *   channel c: the algorithm's ops; before its first op that writes rank q's rows into rank
 *             r's gathered A, WAIT until r's products of the executions before have read them
 *             (CONSUMED_(r,q)), and after each such op SIGNAL ARRIVED_q to r. */
typedef struct gather_s {
    const ar_plan_t *in; /* the all-gather of A, M x K elements */
    ar_plan_t *out;
    uint64_t M, N, K;
    int P, C;
    uint32_t arrived, consumed, inner; /* first flag of each group */
    uint64_t *writers;                 /* P x P: ops writing rank q's rows into rank r's gathered A */
    unsigned char *by;                 /* P x P x P: rank w's channels write q's rows at r */
    ar_addr_t *srcs;
} gather_t;

/* Where address a of the all-gather lies in the fused plan: OUT is SCRATCH's first M x K. */
static int gather_addr(const void *ctx, int part, ar_addr_t a, ar_addr_t *to) {
    const gather_t *f = ctx;
    (void)part; /* one partition */
    *to = a;
    if (a.rank == AR_RANK_HOST) return AR_OK;
    if (ar_addr_buf(a) == AR_BUF_OUT) {
        if (a.buf & AR_ADDR_PARITY) return AR_EINVAL;
        to->buf = AR_BUF_SCRATCH;
    } else if (ar_addr_buf(a) == AR_BUF_SCRATCH) {
        to->off += f->M * f->K;
    }
    return AR_OK;
}

/* The ranks whose rows op writes into another rank's gathered A: [*q0, *q1); none: q0 == q1. */
static void rows_written(const gather_t *f, const ar_op_t *op, int *q0, int *q1) {
    *q0 = *q1 = 0;
    if (!ar_op_moves_data(op) || op->dst.rank == AR_RANK_HOST || ar_addr_buf(op->dst) != AR_BUF_OUT || !op->n) return;
    const uint64_t rows = f->M / (uint64_t)f->P * f->K; /* elements of a rank's rows */
    *q0 = (int)(op->dst.off / rows);
    *q1 = (int)((op->dst.off + op->n - 1) / rows) + 1;
}

static int gather_channel(gather_t *f, int w, int c) {
    const ar_chan_t *ch = ar_plan_chan(f->in, w, c);
    ar_plan_t *p = f->out;
    unsigned char *waited = calloc((size_t)f->P * f->P, 1);
    if (!waited) return AR_ENOMEM;
    int rc = AR_OK;
    for (uint32_t j = 0; j < ch->nops && rc == AR_OK; j++) {
        const ar_op_t *op = &f->in->ops[ch->first + j];
        int q0, q1;
        rows_written(f, op, &q0, &q1);
        const int r = op->dst.rank;
        for (int q = q0; q < q1 && rc == AR_OK; q++)
            if (q != r && !waited[r * f->P + q]) {
                waited[r * f->P + q] = 1;
                rc = ar_plan_wait_prev(p, w, c, f->consumed + (uint32_t)(r * f->P + q));
            }
        if (rc == AR_OK) rc = lay_op(p, w, c, f->in, op, f->inner, gather_addr, f, 0, f->srcs);
        for (int q = q0; q < q1 && rc == AR_OK; q++)
            if (q != r) rc = ar_plan_signal(p, w, c, r, f->arrived + (uint32_t)q);
    }
    free(waited);
    return rc;
}

static int gather_compute(gather_t *f, int r) {
    ar_plan_t *p = f->out;
    const int cc = f->C;
    const uint64_t rows = f->M / (uint64_t)f->P, b = f->M * f->K;
    for (int k = 0; k < f->P; k++) {
        const int q = (r + k) % f->P;
        const uint64_t row = (uint64_t)q * rows;
        if (q != r) AR_TRY(ar_plan_wait(p, r, cc, f->arrived + (uint32_t)q, f->writers[r * f->P + q]));
        const ar_addr_t a = ar_addr(r, q == r ? AR_BUF_IN : AR_BUF_SCRATCH, row * f->K);
        AR_TRY(ar_plan_compute(p, r, cc, ar_addr(r, AR_BUF_OUT, row * f->N), a, ar_addr(r, AR_BUF_IN, b), rows, f->N,
                               f->K));
        for (int w = 0; w < f->P && q != r; w++)
            if (f->by[((size_t)w * f->P + q) * f->P + r])
                AR_TRY(ar_plan_signal(p, r, cc, w, f->consumed + (uint32_t)(r * f->P + q)));
    }
    return AR_OK;
}

static int gather_build(const ar_algo_t *a, const ar_topo_t *topo, ar_dtype_t dtype, const ar_algo_opts_t *o,
                        ar_plan_t **out, ar_error_t *err) {
    const ar_gemm_t g = o->gemm;
    const int P = topo->nranks;
    if (o->partitions > 1)
        return AR_ERR(err, AR_EUNFIT, "%s: an %s multiplies each rank's rows as they arrive: one partition a rank "
                      "(asked %d)", a->name, ar_coll_name(o->coll), o->partitions);
    if (g.m % (uint64_t)P)
        return AR_ERR(err, AR_EUNFIT, "%s: M = %llu rows do not split evenly over %d ranks", a->name,
                      (unsigned long long)g.m, P);
    ar_algo_opts_t io = *o;
    io.coll = AR_COLL_ALLGATHER;
    io.sizing = NULL;
    io.layout = NULL;
    io.symmetry = AR_SYMMETRY_OFF; /* every rank's ops: the product's channels join them */
    io.gemm = (ar_gemm_t){0, 0, 0};
    io.partitions = 0;
    ar_plan_t *in = NULL;
    AR_TRY(ar_algo_build(a->name, topo, g.m * g.k, dtype, &io, &in, err));
    gather_t f = {.in = in, .M = g.m, .N = g.n, .K = g.k, .P = P, .C = in->nchannels};
    f.arrived = 0;
    f.consumed = (uint32_t)P;
    f.inner = f.consumed + (uint32_t)(P * P);
    int rc = (uint64_t)in->nflags + f.inner > UINT32_MAX / 2 ? AR_ELIMIT : AR_OK;
    if (rc == AR_OK && (!(f.writers = calloc((size_t)P * P, sizeof *f.writers)) ||
                        !(f.by = calloc((size_t)P * P * P, 1)) || !(f.srcs = malloc(((size_t)P + 1) * sizeof *f.srcs))))
        rc = AR_ENOMEM;
    for (int w = 0; w < P && rc == AR_OK; w++)
        for (int c = 0; c < f.C; c++) {
            const ar_chan_t *ch = ar_plan_chan(in, w, c);
            for (uint32_t j = 0; j < ch->nops; j++) {
                const ar_op_t *op = &in->ops[ch->first + j];
                int q0, q1;
                rows_written(&f, op, &q0, &q1);
                for (int q = q0; q < q1; q++)
                    if (q != op->dst.rank) {
                        f.writers[op->dst.rank * P + q]++;
                        f.by[((size_t)w * P + q) * P + op->dst.rank] = 1;
                    }
            }
        }
    ar_algo_opts_t po = *o;
    po.layout = NULL;
    if (rc == AR_OK) rc = ar__plan_new(&po, in->algo, P, f.C + 1, g.m * g.n, dtype, &f.out);
    if (rc == AR_OK) {
        ar_plan_t *p = f.out;
        p->gemm = g;
        p->partitions = 1;
        p->in_elems = g.m * g.k + g.k * g.n;
        p->scratch_elems = g.m * g.k + in->scratch_elems;
        p->host_elems = in->host_elems;
        p->parity_elems = in->parity_elems;
        p->root = in->root;
        for (int r = 0; r < P && rc == AR_OK; r++) rc = gather_compute(&f, r);
        for (int w = 0; w < P && rc == AR_OK; w++)
            for (int c = 0; c < f.C && rc == AR_OK; c++) rc = gather_channel(&f, w, c);
        if (rc == AR_OK) rc = ar_plan_finish(p);
    }
    free(f.writers);
    free(f.by);
    free(f.srcs);
    return fused_done(a, "all-gather", rc, in, f.out, out, err);
}

int ar__fused_build(const ar_algo_t *a, const ar_topo_t *topo, uint64_t count, ar_dtype_t dtype,
                    const ar_algo_opts_t *o, ar_plan_t **out, ar_error_t *err) {
    const ar_gemm_t g = o->gemm;
    *out = NULL;
    if (!g.m || !g.n || !g.k || g.m * g.n != count)
        return AR_ERR(err, AR_EINVAL, "%s: a %s needs its product's M, N and K (M x N = %llu elements)", a->name,
                      ar_coll_name(o->coll), (unsigned long long)count);
    const int parts = o->partitions > 0 ? o->partitions : 1;
    if (g.m % (uint64_t)parts)
        return AR_ERR(err, AR_EUNFIT, "%s: %d partitions do not divide M = %llu rows evenly", a->name, parts,
                      (unsigned long long)g.m);
    if (g.m > UINT64_MAX / g.k || g.m * g.k > UINT64_MAX / 2 - g.k * g.n)
        return AR_ERR(err, AR_ELIMIT, "%s: M x K + K x N overflows", a->name);
    AR_TRY(ar_plan_check_size(topo->nranks, g.m * g.k + g.k * g.n, dtype, err));
    if (o->coll == AR_COLL_ALLGATHER_MATMUL) return gather_build(a, topo, dtype, o, out, err);
    ar_algo_opts_t io = *o;
    io.coll = AR_COLL_ALLREDUCE;
    io.sizing = NULL;
    io.layout = NULL;
    io.symmetry = AR_SYMMETRY_OFF; /* every rank's ops: the product's channels join them */
    ar_plan_t *in = NULL;
    AR_TRY(ar_algo_build(a->name, topo, g.m / (uint64_t)parts * g.n, dtype, &io, &in, err));
    fuse_t f = {.in = in, .rows = g.m / (uint64_t)parts, .N = g.n, .K = g.k, .M = g.m, .parts = parts,
                .P = in->nranks, .C = in->nchannels};
    f.ready = 0;
    f.fin = (uint32_t)parts;
    f.done = 2u * (uint32_t)parts;
    f.inner = f.done + (uint32_t)(parts * f.P);
    f.prod_elems = g.m * g.n;
    int rc = AR_OK;
    if ((uint64_t)in->nflags * (uint64_t)parts + f.inner > UINT32_MAX / 2) rc = AR_ELIMIT;
    if (rc == AR_OK && (!(f.reads = calloc((size_t)f.P * f.C * f.P, 1)) ||
                        !(f.srcs = malloc(((size_t)f.P + 1) * sizeof *f.srcs))))
        rc = AR_ENOMEM;
    ar_algo_opts_t po = *o;
    po.layout = NULL; /* built as it comes: the partitions' plans are not the one sized */
    if (rc == AR_OK) rc = ar__plan_new(&po, in->algo, f.P, f.C + 1, count, dtype, &f.out);
    if (rc == AR_OK) {
        ar_plan_t *p = f.out;
        p->gemm = g;
        p->partitions = parts;
        p->in_elems = g.m * g.k + g.k * g.n;
        p->scratch_elems = f.prod_elems + (uint64_t)parts * in->scratch_elems;
        p->host_elems = (uint64_t)parts * in->host_elems;
        p->parity_elems = in->parity_elems;
        p->root = in->root;
        find_readers(&f);
        for (int r = 0; r < f.P && rc == AR_OK; r++) rc = lay_rank(&f, r);
        if (rc == AR_OK) rc = ar_plan_finish(p);
    }
    free(f.reads);
    free(f.srcs);
    return fused_done(a, "allreduce", rc, in, f.out, out, err);
}
