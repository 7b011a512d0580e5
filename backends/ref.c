/* The ref backend: executes a plan on host memory with real data, exactly as
 * arsim/plan.h defines the ops, and compares every rank's OUT with a float64
 * reference.
 *
 * Scheduling: channels are interleaved round-robin, each run until it blocks on a
 * WAIT or ends; a full round in which no channel moves while some are unfinished is
 * a deadlock. Memory is sequentially consistent here (a write is visible at once),
 * so ref proves the arithmetic and the flag counts of a plan; races between
 * channels are the verifier's business.
 *
 * Every execution starts from OUT, SCRATCH and the host buffer full of NaN, so an
 * element a plan forgets to write (or reads before it is written) shows up as NaN,
 * and a NaN never passes the check. Flags are not reset: execution e waits for
 * (e - back) * per_epoch + count and epoch-parity addresses take execution e's
 * slot, as plan.h says, so running several iterations exercises the epoch
 * arithmetic. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "arsim/check.h"
#include "backends/internal.h"
#include "arsim/util.h"

/* ---- inputs ---- */

int ar__ref_check(ar_dtype_t dtype, ar_coll_t coll, const ar_gemm_t *gemm, int nranks, uint64_t count,
                  const void *const *in, const void *const *out, ar_result_t *res) {
    ar_check_inputs_t inputs = {.in = in};
    if (gemm) inputs.gemm = *gemm;
    int ok = 1;
    for (int r = 0; r < nranks; r++) ok &= ar_check_out(dtype, coll, nranks, count, &inputs, r, out[r], res);
    return ok;
}

/* ---- execution ---- */

typedef struct exec_s {
    const ar_plan_t *p;
    size_t esize;
    unsigned char *buf[AR_NBUF]; /* each nranks * elems(buf) elements, rank-major */
    unsigned char *host;
    uint64_t *flags;             /* every rank's flags (ar_plan_flag), counting up across executions */
    uint32_t *pc;                /* per channel */
} exec_t;

/* Where address a0 lies in execution epoch (parity slots applied). */
static void *elem_ptr(exec_t *x, const ar_addr_t *a0, uint64_t epoch) {
    const ar_plan_t *p = x->p;
    const ar_addr_t a = ar_addr_at(p, *a0, epoch);
    if (a.rank == AR_RANK_HOST) return x->host + a.off * x->esize;
    uint64_t n = ar_plan_buf_elems(p, a.rank, (ar_buf_t)a.buf);
    return x->buf[a.buf] + ((uint64_t)a.rank * n + a.off) * x->esize;
}

static void poison(void *buf, ar_dtype_t dtype, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) ar_elem_store(buf, dtype, i, NAN);
}

static void do_reduce(exec_t *x, const ar_op_t *op, uint64_t epoch) {
    const ar_plan_t *p = x->p;
    void *dst = elem_ptr(x, &op->dst, epoch);
    const void *src[op->nsrc];
    for (uint32_t s = 0; s < op->nsrc; s++) src[s] = elem_ptr(x, &p->srcs[op->src + s], epoch);
    for (uint64_t i = 0; i < op->n; i++) {
        /* In source order, in float32, rounded once to the dtype. dst may be one of
         * the sources: element i is read from every source before it is written. */
        float acc = (float)ar_elem_load(src[0], p->dtype, i);
        for (uint32_t s = 1; s < op->nsrc; s++) acc += (float)ar_elem_load(src[s], p->dtype, i);
        ar_elem_store(dst, p->dtype, i, acc);
    }
}

/* The sum of every rank's src, in rank order, in float32, rounded once and stored on
 * every rank: all of it is read before any of it is written. */
static int do_netreduce(exec_t *x, const ar_op_t *op, uint64_t epoch) {
    const ar_plan_t *p = x->p;
    float *acc = malloc((op->n ? op->n : 1) * sizeof *acc);
    if (!acc) return AR_ENOMEM;
    for (int r = 0; r < p->nranks; r++) {
        ar_addr_t a = p->srcs[op->src];
        a.rank = r;
        const void *src = elem_ptr(x, &a, epoch);
        for (uint64_t i = 0; i < op->n; i++)
            acc[i] = r ? acc[i] + (float)ar_elem_load(src, p->dtype, i) : (float)ar_elem_load(src, p->dtype, i);
    }
    for (int q = 0; q < p->nranks; q++) {
        ar_addr_t d = op->dst;
        d.rank = q;
        void *dst = elem_ptr(x, &d, epoch);
        for (uint64_t i = 0; i < op->n; i++) ar_elem_store(dst, p->dtype, i, acc[i]);
    }
    free(acc);
    return AR_OK;
}

/* m rows of a times b, each element summed in float64 and rounded once to the dtype
 * (plan.h asks float32 at least). */
static void do_compute(exec_t *x, const ar_op_t *op, uint64_t epoch) {
    const ar_plan_t *p = x->p;
    uint64_t m, N, K;
    ar_op_gemm(op, &m, &N, &K);
    const void *a = elem_ptr(x, &p->srcs[op->src], epoch), *b = elem_ptr(x, &p->srcs[op->src + 1], epoch);
    void *dst = elem_ptr(x, &op->dst, epoch);
    for (uint64_t i = 0; i < m; i++)
        for (uint64_t j = 0; j < N; j++) {
            double acc = 0;
            for (uint64_t l = 0; l < K; l++) acc += ar_elem_load(a, p->dtype, i * K + l) * ar_elem_load(b, p->dtype, l * N + j);
            ar_elem_store(dst, p->dtype, i * N + j, acc);
        }
}

/* One execution (epoch) of every channel. */
static int run_epoch(exec_t *x, uint64_t epoch, uint64_t *ops_executed, ar_error_t *err) {
    const ar_plan_t *p = x->p;
    int nch = p->nranks * p->nchannels;
    memset(x->pc, 0, (size_t)nch * sizeof *x->pc);
    int left = 0;
    for (int i = 0; i < nch; i++) left += p->chans[i].nops > 0;
    while (left > 0) {
        int progress = 0;
        for (int i = 0; i < nch; i++) {
            const ar_chan_t *ch = &p->chans[i];
            int rank = i / p->nchannels;
            uint32_t start = x->pc[i];
            while (x->pc[i] < ch->nops) {
                const ar_op_t *op = &p->ops[ch->first + x->pc[i]];
                if (op->code == AR_OP_WAIT) {
                    size_t f = ar_plan_flag(p, rank, op->flag);
                    /* back 1: the executions before the previous one (plan.h) */
                    if (epoch >= op->back && x->flags[f] < (epoch - op->back) * p->per_epoch[f] + op->count)
                        break;
                } else if (op->code == AR_OP_SIGNAL) {
                    x->flags[ar_plan_flag(p, op->dst.rank, op->flag)]++;
                } else if (op->code == AR_OP_COPY) {
                    memmove(elem_ptr(x, &op->dst, epoch), elem_ptr(x, &p->srcs[op->src], epoch),
                            op->n * x->esize);
                } else if (op->code == AR_OP_COMPUTE) {
                    do_compute(x, op, epoch);
                } else if (op->code == AR_OP_NETREDUCE) {
                    if (do_netreduce(x, op, epoch) != AR_OK) return AR_ERR(err, AR_ENOMEM, "ref: out of memory");
                } else {
                    do_reduce(x, op, epoch);
                }
                x->pc[i]++;
                (*ops_executed)++;
            }
            if (x->pc[i] != start) {
                progress = 1;
                if (x->pc[i] == ch->nops) left--;
            }
        }
        if (!progress) {
            /* Name the first blocked channel, and how far its flag got. */
            for (int i = 0; i < nch; i++) {
                const ar_chan_t *ch = &p->chans[i];
                if (x->pc[i] >= ch->nops) continue;
                int rank = i / p->nchannels;
                const ar_op_t *op = &p->ops[ch->first + x->pc[i]];
                size_t f = ar_plan_flag(p, rank, op->flag);
                uint64_t base = epoch * p->per_epoch[f];
                return AR_ERR(err, AR_EPLAN,
                              "deadlock in execution %" PRIu64 ": rank %d channel %d op %u waits "
                              "for flag %u to reach %" PRIu64 " but it has %" PRIu64
                              " (%" PRIu64 " SIGNALs per execution, %d channels blocked)",
                              epoch, rank, i % p->nchannels, x->pc[i], op->flag, op->count,
                              x->flags[f] - base, p->per_epoch[f], left);
            }
        }
    }
    return AR_OK;
}

int ar__ref_exec(const ar_plan_t *p, int nexec, const void *const *in, void *const *out,
                 int check, ar_result_t *res, ar_error_t *err) {
    if (res) {
        res->checked = res->check_ok = 0;
        res->max_rel_err = 0;
        res->check_msg[0] = 0;
        res->ops_executed = 0;
    }
    AR_TRY(ar__backend_check_plan(p, NULL, err));
    exec_t x;
    memset(&x, 0, sizeof x);
    x.p = p;
    x.esize = ar_dtype_size(p->dtype);
    int rc = AR_OK;
    int nch = p->nranks * p->nchannels;
    const void **outs = calloc((size_t)p->nranks, sizeof *outs);
    const uint64_t in_elems = ar_plan_buf_elems(p, 0, AR_BUF_IN);
    for (int b = 0; b < AR_NBUF; b++) {
        uint64_t n = ar_plan_buf_elems(p, 0, (ar_buf_t)b);
        x.buf[b] = malloc((n ? n : 1) * p->nranks * x.esize);
        if (!x.buf[b]) goto nomem;
    }
    x.host = malloc((p->host_elems ? p->host_elems : 1) * x.esize);
    x.flags = calloc(ar_plan_flag_slots(p) + 1, sizeof *x.flags);
    x.pc = calloc((size_t)nch, sizeof *x.pc);
    if (!x.host || !x.flags || !x.pc || !outs) goto nomem;

    for (int r = 0; r < p->nranks; r++) {
        memcpy(x.buf[AR_BUF_IN] + (size_t)r * in_elems * x.esize, in[r], in_elems * x.esize);
        outs[r] = x.buf[AR_BUF_OUT] + (size_t)r * p->count * x.esize;
    }
    uint64_t ops = 0;
    for (int e = 0; e < nexec; e++) {
        poison(x.buf[AR_BUF_OUT], p->dtype, p->count * p->nranks);
        poison(x.buf[AR_BUF_SCRATCH], p->dtype, p->scratch_elems * p->nranks);
        poison(x.host, p->dtype, p->host_elems);
        AR_TRY_GOTO(run_epoch(&x, (uint64_t)e, &ops, err), rc, out);
        if (check && res) ar__ref_check(p->dtype, p->coll, &p->gemm, p->nranks, p->count, in, outs, res);
    }
    if (res) res->ops_executed = ops;
    for (int r = 0; out && r < p->nranks; r++)
        if (out[r]) memcpy(out[r], outs[r], p->count * x.esize);
    goto out;
nomem:
    rc = AR_ERR(err, AR_ENOMEM, "ref: cannot allocate host buffers for %d ranks x %" PRIu64
                " elements", p->nranks, p->count);
out:
    for (int b = 0; b < AR_NBUF; b++) free(x.buf[b]);
    free(x.host);
    free(x.flags);
    free(x.pc);
    free(outs);
    return rc;
}

/* ---- the backend ---- */

/* Host memory ref may use: ARSIM_REF_MAX_BYTES, else half of the machine's memory,
 * so that a size too large for a functional run is refused at once instead of
 * swapping for hours. */
static double ref_limit_bytes(void) {
    const char *env = getenv("ARSIM_REF_MAX_BYTES");
    if (env && *env) {
        char *end;
        double v = strtod(env, &end);
        if (end != env && v > 0) return v;
    }
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psize <= 0) return 8.0 * (1ull << 30);
    return 0.5 * (double)pages * (double)psize;
}

/* IN, OUT, SCRATCH and a copy of the inputs per rank, and the host buffer. */
static int ref_check_memory(const ar_plan_t *p, ar_error_t *err) {
    double es = (double)ar_dtype_size(p->dtype);
    const double per_rank = (double)p->count + 2.0 * (double)ar_plan_buf_elems(p, 0, AR_BUF_IN) + (double)p->scratch_elems;
    double need = (per_rank * p->nranks + (double)p->host_elems) * es;
    double limit = ref_limit_bytes();
    if (need > limit)
        return ar_capacity_err(err, "host memory for ref (half the machine's, or ARSIM_REF_MAX_BYTES)", need,
                               "every rank's input, output, scratch and a copy of its input", limit,
                               "a smaller --size or fewer --ranks");
    return AR_OK;
}

/* ref measures no time (time_s = 0); sim_wall_s is its own wall time. Inputs are
 * fresh from opts->seed; warmup + iters executions run, each checked when
 * opts->check is set. */
static int ref_execute(ar_backend_t *be, const ar_plan_t *p, const ar_run_opts_t *opts,
                       ar_result_t *res, ar_error_t *err) {
    double t0 = ar_now_s();
    memset(res, 0, sizeof *res);
    AR_TRY(ar__backend_check_plan(p, be->topo, err));
    AR_TRY(ref_check_memory(p, err));
    int nexec = (opts->iters > 0 ? opts->iters : 1) + (opts->warmup > 0 ? opts->warmup : 0);
    const uint64_t in_elems = ar_plan_buf_elems(p, 0, AR_BUF_IN);
    size_t bytes = in_elems * ar_dtype_size(p->dtype);
    void **in = calloc((size_t)p->nranks, sizeof *in);
    int rc = AR_OK;
    if (!in) return AR_ERR(err, AR_ENOMEM, "ref: out of memory");
    for (int r = 0; r < p->nranks; r++) {
        in[r] = malloc(bytes);
        if (!in[r]) {
            rc = AR_ERR(err, AR_ENOMEM, "ref: cannot allocate inputs of %zu bytes", bytes);
            goto out;
        }
        ar_gen_fill(p->dtype, opts->seed, r, in[r], in_elems);
    }
    rc = ar__ref_exec(p, nexec, (const void *const *)in, NULL, opts->check, res, err);
out:
    for (int r = 0; r < p->nranks; r++) free(in[r]);
    free(in);
    res->sim_wall_s = ar_now_s() - t0;
    return rc;
}

/* IN and OUT of every rank in this machine's memory. */
static int ref_fits(const ar_topo_t *t, uint64_t bytes_per_rank, ar_mem_t buffer, ar_error_t *err) {
    (void)buffer;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const double have = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    const double need = 2.0 * (t->nranks > 0 ? t->nranks : 1) * (double)bytes_per_rank;
    if (have > 0 && need > have) {
        char what[64];
        snprintf(what, sizeof what, "input and output of %d rank%s", t->nranks, t->nranks == 1 ? "" : "s");
        return ar_capacity_err(err, "host memory", need, what, have, "a smaller --size or fewer --ranks");
    }
    return AR_OK;
}

/* Beside the plan: every rank's input, and IN, OUT and SCRATCH of every rank with the host
 * staging, in this process. */
static double ref_run_bytes(const ar_topo_t *t, const ar_plan_size_t *s) {
    (void)t;
    return (double)s->elem_bytes * ((double)s->nranks * ((double)s->count + 2.0 * (double)s->in_elems + (double)s->scratch_elems) +
                                    (double)s->host_elems) +
           8.0 * (double)s->flag_slots;
}

const ar_backend_ops_t ar_ref_backend = {
    .name = "ref", .caps = AR_BACKEND_DATA, .fits = ref_fits, .execute = ref_execute, .run_bytes = ref_run_bytes,
    .summary = "executes the plan on host memory with real data; float64 check",
};
