/* The backend registry: one table of the backends this build holds, plus the
 * helpers every backend and the command line share (results, bandwidths, the
 * structural plan check). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "arsim/cost.h"
#include "backends/internal.h"
#include "arsim/util.h"

#ifdef HAVE_SIMGRID
extern const ar_backend_ops_t ar_sim_backend;
#endif
#ifdef HAVE_CUDA
extern const ar_backend_ops_t ar_cuda_backend;
#endif

static const ar_backend_ops_t *const backends[] = {
    &ar_ref_backend,
    &ar_analytic_backend,
#ifdef HAVE_SIMGRID
    &ar_sim_backend,
#endif
#ifdef HAVE_CUDA
    &ar_cuda_backend,
#endif
    NULL,
};

/* Every backend arsim knows of, built or not, with what leaving it out means. */
static const struct {
    const char *name, *why;
} known[] = {
    {"ref", NULL},
    {"analytic", NULL},
    {"sim", "configure found no SimGrid (install libsimgrid-dev and reconfigure)"},
    {"cuda", "configure found no nvcc (use --with-cuda=DIR)"},
};

const ar_backend_ops_t *ar_backend_find(const char *name) {
    for (int i = 0; name && backends[i]; i++)
        if (strcmp(backends[i]->name, name) == 0) return backends[i];
    return NULL;
}

const ar_backend_ops_t *const *ar_backend_all(void) { return backends; }

int ar_backend_known_missing(const char *name) {
    if (!name || ar_backend_find(name)) return 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(known[i].name, name) == 0) return 1;
    return 0;
}

void ar_backend_names_with(unsigned caps, char *buf, size_t len) {
    int n = 0, total = 0;
    for (int i = 0; backends[i]; i++) total += (backends[i]->caps & caps) == caps;
    size_t at = 0;
    if (len) buf[0] = 0;
    for (int i = 0; backends[i] && at < len; i++) {
        if ((backends[i]->caps & caps) != caps) continue;
        const char *sep = n == 0 ? "" : n == total - 1 ? " or " : ", ";
        at += (size_t)snprintf(buf + at, len - at, "%s%s", sep, backends[i]->name);
        n++;
    }
}

const ar_backend_ops_t *ar_backend_with(unsigned caps) {
    for (int i = 0; backends[i]; i++)
        if ((backends[i]->caps & caps) == caps) return backends[i];
    return NULL;
}

const char *ar_backend_default(void) {
    const ar_backend_ops_t *b = ar_backend_with(AR_BACKEND_MODEL | AR_BACKEND_CONTENTION);
    if (!b) b = ar_backend_with(AR_BACKEND_MODEL);
    return b ? b->name : "analytic";
}

int ar__backend_model_fits(const ar_topo_t *t, uint64_t bytes_per_rank, ar_mem_t buffer, ar_error_t *err) {
    if (!t->model) return AR_OK;
    const ar_mem_level_t *m = &t->model->mem[buffer];
    if (!m->present)
        return AR_ERR(err, AR_EINVAL, "model %s has no %s level (--buffer)", t->model->name, ar_mem_name(buffer));
    int *on = malloc((size_t)t->ndevices * sizeof *on);
    if (!on) return AR_ERR(err, AR_ENOMEM, "out of memory");
    const int maxper = ar_topo_ranks_per_device(t, on);
    free(on);
    const double need = 2.0 * (double)bytes_per_rank * maxper;
    if (need > m->capacity_bytes) {
        char level[96], what[96];
        snprintf(level, sizeof level, "%s of a device (model %s)", ar_mem_name(buffer), t->model->name);
        snprintf(what, sizeof what, "input and output of %d rank%s", maxper, maxper == 1 ? "" : "s");
        return ar_capacity_err(err, level, need, what, m->capacity_bytes, AR_CAPACITY_FIX);
    }
    return AR_OK;
}

int ar__backend_model_admits(const ar_topo_t *t, const ar_plan_t *p, ar_error_t *err) {
    const ar_model_t *m = t->model;
    if (!m || m->gemm_units <= 0 || !t->placement) return AR_OK;
    double *on = calloc((size_t)t->ndevices, sizeof *on);
    if (!on) return AR_ERR(err, AR_ENOMEM, "out of memory");
    int busy = -1, rc = AR_OK;
    for (int r = 0; r < p->nranks; r++) {
        const int rr = ar_plan_kept_rank(p, r), d = t->placement[r];
        if (d < 0 || d >= t->ndevices) continue; /* the plan check says why */
        for (int c = 0; c < p->nchannels; c++) on[d] += ar_plan_chan(p, rr, c)->nops > 0;
        if (on[d] > m->gemm_units && busy < 0) busy = d;
    }
    if (busy >= 0)
        rc = AR_ERR(err, AR_ELIMIT, "plan %s puts %.0f channels on device %d, which holds %.0f at once (model %s, "
                    "gemm_units)", p->algo, on[busy], busy, m->gemm_units, m->name);
    free(on);
    return rc;
}

const char *ar_backend_missing_why(const char *name) {
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(known[i].name, name) == 0 && known[i].why) return known[i].why;
    return "not built";
}

/* A backend with no state of its own beyond the topology (no open in its vtable); one
 * that times from the model needs the topology to carry one. */
static int plain_open(const ar_backend_ops_t *ops, const ar_topo_t *topo, ar_backend_t **out, ar_error_t *err) {
    if ((ops->caps & AR_BACKEND_MODEL) && (!topo || !topo->model))
        return AR_ERR(err, AR_EINVAL, "%s: needs a topology with a model", ops->name);
    ar_backend_t *be = calloc(1, sizeof *be);
    if (!be) return AR_ERR(err, AR_ENOMEM, "%s: out of memory", ops->name);
    be->ops = ops;
    be->topo = topo;
    *out = be;
    return AR_OK;
}

static int backend_open(const char *name, const ar_topo_t *topo, ar_backend_t **be, ar_error_t *err) {
    const ar_backend_ops_t *ops = ar_backend_find(name);
    if (!ops) {
        if (ar_backend_known_missing(name))
            return AR_ERR(err, AR_ENOTSUP, "backend '%s' is not in this build: %s", name,
                          ar_backend_missing_why(name));
        return AR_ERR(err, AR_EINVAL, "unknown backend '%s' (ref, analytic, sim, cuda)",
                      name ? name : "");
    }
    return ops->open ? ops->open(topo, be, err) : plain_open(ops, topo, be, err);
}

static void backend_close(ar_backend_t *be) {
    if (be->ops->close) be->ops->close(be);
    else free(be);
}

int ar_backend_check(const char *name, const ar_topo_t *topo, ar_error_t *err) {
    ar_backend_t *be = NULL;
    AR_TRY(backend_open(name, topo, &be, err));
    backend_close(be);
    return AR_OK;
}

int ar_backend_run(const char *name, const ar_topo_t *topo, const ar_plan_t *plan,
                   const ar_run_opts_t *opts, ar_result_t *res, ar_error_t *err) {
    ar_run_opts_t def = AR_RUN_OPTS_DEFAULT;
    if (!opts) opts = &def;
    memset(res, 0, sizeof *res);
    ar_backend_t *be = NULL;
    int rc = backend_open(name, topo, &be, err);
    if (rc != AR_OK) return rc;
    const ar_backend_ops_t *ops = be->ops;
    if (plan->only_rank >= 0 && !(ops->caps & AR_BACKEND_MODEL))
        rc = AR_ERR(err, AR_EINVAL, "%s: a plan of one rank's ops (arsim/plan.h) can only be timed from a model", name);
    if (rc == AR_OK && ops->prepare) rc = ops->prepare(be, plan, opts, err);
    if (rc == AR_OK) rc = ops->execute(be, plan, opts, res, err);
    backend_close(be);
    return rc;
}

void ar_result_free(ar_result_t *r) {
    if (!r) return;
    free(r->links);
    r->links = NULL;
    r->nlinks = 0;
}

/* GB/s = 1e9 bytes per second, as nccl-tests prints them. A time that is not
 * positive (a backend that measures no time, such as ref) gives 0. */
double ar_algbw_gbps(uint64_t bytes, double time_s) {
    if (!(time_s > 0)) return 0;
    return (double)bytes / time_s / 1e9;
}

/* busbw = algbw * 2(p-1)/p, nccl-tests' allreduce factor: the bytes each rank must
 * send and receive on its busiest link in an optimal algorithm. With one rank
 * nothing crosses a bus, so busbw is 0 (as nccl-tests reports it). */
double ar_busbw_gbps(uint64_t bytes, double time_s, int nranks) {
    return ar_busbw_coll_gbps(AR_COLL_ALLREDUCE, bytes, time_s, nranks);
}

/* nccl-tests' factors: reduce-scatter and all-gather move each byte of the vector's
 * other shards once, (p-1)/p, where an allreduce does both, 2(p-1)/p. */
double ar_busbw_coll_gbps(ar_coll_t coll, uint64_t bytes, double time_s, int nranks) {
    if (nranks < 2) return 0;
    const double f = ar_coll_inner(coll) == AR_COLL_ALLREDUCE ? 2.0 : 1.0; /* a fused op: its collective's */
    return ar_algbw_gbps(bytes, time_s) * f * (nranks - 1) / nranks;
}

void ar_timeline_header(FILE *f) { fputs("gpu,rank,chan,op,code,target,start_ns,end_ns\n", f); }

void ar_timeline_row(FILE *f, int dev, int rank, int chan, uint32_t i, const ar_op_t *op, double start_ns,
                     double end_ns) {
    fprintf(f, "%d,%d,%d,%u,%s,%d,%.0f,%.0f\n", dev, rank, chan, i, ar_op_name(op->code),
            op->code == AR_OP_WAIT ? rank : op->dst.rank, start_ns, end_ns);
}

/* Both slots of an epoch-parity address (arsim/plan.h) are checked. */
static int bad_addr(const ar_plan_t *p, const ar_addr_t *a0, uint64_t n, const char **why) {
    if (a0->buf & ~(AR_ADDR_BUF_MASK | AR_ADDR_PARITY)) {
        *why = "unknown address flags";
        return 1;
    }
    if ((a0->buf & AR_ADDR_PARITY) && a0->off + p->parity_elems < a0->off) {
        *why = "range out of bounds";
        return 1;
    }
    const ar_addr_t a1 = ar_addr_at(p, *a0, 1), *a = &a1;
    if (a->rank == AR_RANK_HOST) {
        if (a->off > p->host_elems || n > p->host_elems - a->off) {
            *why = "host range out of bounds";
            return 1;
        }
        return 0;
    }
    if (a->rank < 0 || a->rank >= p->nranks) {
        *why = "no such rank";
        return 1;
    }
    if (a->buf >= AR_NBUF) {
        *why = "no such buffer";
        return 1;
    }
    uint64_t size = ar_plan_buf_elems(p, a->rank, (ar_buf_t)a->buf); /* a: the higher slot */
    if (a->off > size || n > size - a->off) {
        *why = "range out of bounds";
        return 1;
    }
    return 0;
}

int ar__backend_check_plan(const ar_plan_t *p, const ar_topo_t *topo, ar_error_t *err) {
    if (!p || p->build || !p->chans || !p->per_epoch || !p->flag_at)
        return AR_ERR(err, AR_EPLAN, "plan is not finished (call ar_plan_finish)");
    if (topo && topo->nranks != p->nranks)
        return AR_ERR(err, AR_EPLAN, "plan has %d ranks but topology %s places %d", p->nranks,
                      topo->name, topo->nranks);
    if (topo && p->only_rank >= 0 && !ar_topo_translatable(topo, ar_plan_shifts(p)))
        return AR_ERR(err, AR_EPLAN, "a plan of rank %d's ops alone runs only on a topology whose translations map "
                      "it onto itself (ring_1d, torus_2d, full, switch; a rank per device)", p->only_rank);
    if (topo && p->only_rank >= 0 && ar_cost_tracks_warmth(topo->model) && (p->only_rank != 0 || !p->mirror_off))
        return AR_ERR(err, AR_EPLAN, "a plan of rank %d's ops alone runs under %s, whose warmth follows every rank's "
                      "buffers, only as rank 0's with the other ranks' offsets known (ar_plan_t.mirror_off)",
                      p->only_rank, topo->model->name);
    /* why a NETREDUCE cannot run here, if the plan has one (NULL: it can, or no topology) */
    const char *net_unfit = topo ? ar_topo_netreduce_unfit(topo) : NULL;
    for (int r = 0; r < p->nranks; r++)
        for (int c = 0; c < p->nchannels; c++) {
            const ar_chan_t *ch = ar_plan_chan(p, r, c);
            if ((uint64_t)ch->first + ch->nops > p->nops)
                return AR_ERR(err, AR_EPLAN, "rank %d channel %d: ops out of range", r, c);
            for (uint32_t i = 0; i < ch->nops; i++) {
                const ar_op_t *op = &p->ops[ch->first + i];
                const char *why = NULL;
                switch (op->code) {
                case AR_OP_COPY:
                case AR_OP_REDUCE:
                case AR_OP_NETREDUCE:
                    if (op->code == AR_OP_REDUCE ? op->nsrc < 2 || op->nsrc > (uint32_t)p->nranks + 1
                                                 : op->nsrc != 1) {
                        why = "bad source count";
                        break;
                    }
                    if ((uint64_t)op->src + op->nsrc > p->nsrcs) {
                        why = "sources out of range";
                        break;
                    }
                    if (op->code == AR_OP_NETREDUCE && (op->dst.rank != r || p->srcs[op->src].rank != r)) {
                        why = "NETREDUCE names another rank's buffer";
                        break;
                    }
                    if (op->code == AR_OP_NETREDUCE && net_unfit) {
                        why = net_unfit;
                        break;
                    }
                    if (bad_addr(p, &op->dst, op->n, &why)) break;
                    if (op->dst.rank != AR_RANK_HOST && ar_addr_buf(op->dst) == AR_BUF_IN) {
                        why = "writes IN";
                        break;
                    }
                    for (uint32_t s = 0; s < op->nsrc && !why; s++)
                        bad_addr(p, &p->srcs[op->src + s], op->n, &why);
                    break;
                case AR_OP_COMPUTE:
                    if (op->nsrc != 2 || (uint64_t)op->src + 2 > p->nsrcs) {
                        why = "bad sources";
                        break;
                    }
                    for (uint32_t s = 0; s <= 2 && !why; s++) {
                        const ar_addr_t *a = ar_op_operand(p, op, s);
                        if (a->rank != r) why = "COMPUTE names another rank's buffer";
                        else bad_addr(p, a, ar_op_operand_elems(op, s), &why);
                    }
                    if (!why && ar_addr_buf(op->dst) == AR_BUF_IN) why = "writes IN";
                    if (!why && topo && topo->model && !(ar_cost_gemm_flops(topo->model, p->dtype) > 0))
                        why = "a product, and the model has no rate for one (gemm_tflops)";
                    break;
                case AR_OP_SIGNAL:
                    if (op->dst.rank < 0 || op->dst.rank >= p->nranks) why = "signals no such rank";
                    else if (ar_plan_keeps_rank(p, ar_plan_signal_rank(p, op)) &&
                             op->flag >= ar_plan_rank_flags(p, ar_plan_signal_rank(p, op)))
                        why = "flag out of range";
                    break;
                case AR_OP_WAIT:
                    if (op->flag >= ar_plan_rank_flags(p, r)) why = "flag out of range";
                    else if (op->back > 1) why = "WAIT more than one execution back";
                    break;
                default:
                    why = "unknown opcode";
                }
                if (why)
                    return AR_ERR(err, AR_EPLAN, "rank %d channel %d op %u: %s", r, c, i, why);
            }
        }
    return AR_OK;
}

void ar_progress_start(ar_progress_t *pg, const ar_run_opts_t *opts, uint64_t total_ops) {
    pg->opts = opts && opts->progress ? opts : NULL;
    pg->t0 = ar_now_s();
    pg->next = pg->t0 + 2.0; /* a run shorter than this says nothing */
    pg->total = total_ops;
    pg->ticks = 0;
}

void ar_progress_tick(ar_progress_t *pg, double sim_s, uint64_t ops) {
    if (!pg->opts || ++pg->ticks % 4096) return;
    const double now = ar_now_s();
    if (now < pg->next) return;
    pg->next = now + 0.5;
    pg->opts->progress(pg->opts->progress_ctx, sim_s, ops, pg->total, now - pg->t0);
}
