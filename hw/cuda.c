/* hw: the cuda backend. One process drives every local GPU.
 *
 * open:    finds the GPUs, maps each rank to the GPU its placement names
 *          (topology device index d runs on GPU d; a device index with no GPU
 *          is an error), enables peer access between every pair of GPUs used.
 * prepare: allocates IN/OUT/SCRATCH of every rank on its GPU (kept and grown
 *          across plans), the HOST buffer in mapped pinned memory, the flags;
 *          lowers the plan to the device form of hw/internal.h (raw pointers,
 *          one block per non-empty channel) and uploads it; refuses a plan whose
 *          blocks on a GPU could not all be resident at once (spinning blocks
 *          that are not resident never let the others finish).
 * execute: one executor launch per GPU per execution, forked from and joined
 *          to the first GPU's stream so its events time the whole allreduce.
 *
 * Without peer access between two used GPUs (or with force_host), flags live in
 * host memory and a plan that addresses another GPU's memory is refused: only
 * plans that stage through the HOST buffer (the naive algorithm) run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <inttypes.h>
#include "arsim/check.h"
#include "arsim/out.h"
#include "hw/cuda.h"
#include "arsim/util.h"

#define AR__PEER_MAX 64 /* GPUs per process whose peer access is remembered */

int ar__cuda_fail(ar_error_t *err, int cuda_status, const char *what) {
    return AR_ERR(err, AR_EDEVICE, "cuda backend: %s: %s", what,
                  cudaGetErrorString((cudaError_t)cuda_status));
}

int ar__cuda_slot(const ar__cuda_t *be, int gpu) {
    for (int i = 0; i < be->nused; i++)
        if (be->used[i] == gpu) return i;
    return -1;
}

/* Whether the executor's kernel runs channel ch: one with ops that computes nothing (a
 * channel that computes runs on a stream of its own, hw/gemm.c). */
static int exec_runs(const ar_chan_t *ch) { return ch->nops && !ch->computes; }

static void free_gpu_plans(ar__cuda_t *be) {
    for (int i = 0; i < be->nused; i++) {
        cudaSetDevice(be->used[i]);
        for (int k = 0; be->g[i] && k < be->nstages; k++) ar__cuda_plan_free(&be->g[i][k]);
        free(be->g[i]);
        be->g[i] = NULL;
    }
    be->nstages = 0;
    ar__gemm_free(be);
    be->plan = NULL;
}

static void cuda_close(ar_backend_t *b) {
    ar__cuda_t *be = (ar__cuda_t *)b;
    if (!be) return;
    for (int i = 0; i < be->nused; i++) {
        cudaSetDevice(be->used[i]);
        cudaDeviceSynchronize();
    }
    free_gpu_plans(be);
    ar__gemm_close(be);
    for (int r = 0; r < be->nranks; r++) {
        if (be->rank_gpu) cudaSetDevice(be->rank_gpu[r]);
        for (int k = 0; k < 3; k++) cudaFree(be->buf[k][r]);
        cudaFree(be->flags[r]);
    }
    if (be->host_buf) cudaFreeHost(be->host_buf);
    if (be->host_flags) cudaFreeHost(be->host_flags);
    free(be->host_slot_of);
    free(be->host_senders);
    if (be->abort_word) cudaFreeHost((void *)be->abort_word);
    for (int i = 0; i < be->nused; i++) {
        int g = be->used[i];
        cudaSetDevice(g);
        if (be->stream[g]) cudaStreamDestroy(be->stream[g]);
        if (be->ev_join[g]) cudaEventDestroy(be->ev_join[g]);
    }
    if (be->nused) cudaSetDevice(be->used[0]);
    if (be->ev_start) cudaEventDestroy(be->ev_start);
    if (be->ev_end) cudaEventDestroy(be->ev_end);
    if (be->ev_fork) cudaEventDestroy(be->ev_fork);
    free(be->rank_gpu);
    free(be);
}

static int cuda_open(const ar_topo_t *topo, ar_backend_t **out, ar_error_t *err) {
    int n = 0;
    cudaError_t ce = cudaGetDeviceCount(&n);
    if (ce != cudaSuccess || n <= 0)
        return AR_ERR(err, AR_EDEVICE, "cuda backend: no CUDA GPU visible (%s)",
                      ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices");
    if (n > AR__MAX_GPUS) n = AR__MAX_GPUS;
    if (topo->nranks < 1 || topo->nranks > 64)
        return AR_ERR(err, AR_ELIMIT, "cuda backend: %d ranks; this backend runs 1 to 64", topo->nranks);
    ar__cuda_t *be = calloc(1, sizeof *be);
    if (!be) return AR_ERR(err, AR_ENOMEM, "cuda backend: out of memory");
    be->timeline = be->timeline_env = getenv("ARSIM_CUDA_TIMELINE");
    const char *signals = getenv("ARSIM_CUDA_SIGNALS");
    be->signals_serial = signals && !strcmp(signals, "serial");
    be->base.ops = &ar_cuda_backend;
    be->base.topo = topo;
    be->ngpus = n;
    be->nranks = topo->nranks;
    be->rank_gpu = calloc((size_t)topo->nranks, sizeof(int));
    int rc = AR_OK;
    if (!be->rank_gpu) {
        rc = AR_ERR(err, AR_ENOMEM, "cuda backend: out of memory");
        goto fail;
    }
    int present[AR__MAX_GPUS] = {0};
    for (int r = 0; r < topo->nranks; r++) {
        int d = topo->placement ? topo->placement[r] : r;
        if (d < 0 || d >= n) {
            rc = AR_ERR(err, AR_EDEVICE,
                        "cuda backend: rank %d is placed on device %d (%s), but this machine has %d GPU%s "
                        "(device index d runs on GPU d); place ranks on devices 0..%d",
                        r, d, d >= 0 && d < topo->ndevices ? topo->nodes[d].name : "?", n,
                        n == 1 ? "" : "s", n - 1);
            goto fail;
        }
        be->rank_gpu[r] = d;
        present[d] = 1;
    }
    for (int g = 0; g < n; g++)
        if (present[g]) be->used[be->nused++] = g;

    be->p2p = 1;
    for (int i = 0; i < be->nused; i++)
        for (int j = 0; j < be->nused; j++) {
            if (i == j) continue;
            int can = 0;
            cudaDeviceCanAccessPeer(&can, be->used[i], be->used[j]);
            if (!can) {
                if (be->p2p)
                    snprintf(be->p2p_why, sizeof be->p2p_why, "GPU %d cannot access GPU %d's memory",
                             be->used[i], be->used[j]);
                be->p2p = 0;
                continue;
            }
            /* Peer access is per process and stays on: a later open must not ask
             * again (the runtime answers with an error that tools report). */
            static unsigned char peer_on[AR__PEER_MAX][AR__PEER_MAX];
            const int known = be->used[i] < AR__PEER_MAX && be->used[j] < AR__PEER_MAX;
            if (known && peer_on[be->used[i]][be->used[j]]) continue;
            cudaSetDevice(be->used[i]);
            ce = cudaDeviceEnablePeerAccess(be->used[j], 0);
            if (ce == cudaSuccess || ce == cudaErrorPeerAccessAlreadyEnabled) {
                if (ce != cudaSuccess) (void)cudaGetLastError();
                if (known) peer_on[be->used[i]][be->used[j]] = 1;
            } else {
                if (be->p2p)
                    snprintf(be->p2p_why, sizeof be->p2p_why, "enabling GPU %d -> GPU %d: %s",
                             be->used[i], be->used[j], cudaGetErrorString(ce));
                (void)cudaGetLastError();
                be->p2p = 0;
            }
        }
    for (int i = 0; i < be->nused; i++) {
        int g = be->used[i];
        ce = cudaSetDevice(g);
        if (ce == cudaSuccess) ce = cudaStreamCreateWithFlags(&be->stream[g], cudaStreamNonBlocking);
        if (ce == cudaSuccess) ce = cudaEventCreateWithFlags(&be->ev_join[g], cudaEventDisableTiming);
        if (ce == cudaSuccess) ce = cudaDeviceGetAttribute(&be->sms[g], cudaDevAttrMultiProcessorCount, g);
        if (ce != cudaSuccess) {
            rc = ar__cuda_fail(err, ce, "setting up a GPU");
            goto fail;
        }
    }
    cudaSetDevice(be->used[0]);
    ce = cudaEventCreate(&be->ev_start);
    if (ce == cudaSuccess) ce = cudaEventCreate(&be->ev_end);
    if (ce == cudaSuccess) ce = cudaEventCreateWithFlags(&be->ev_fork, cudaEventDisableTiming);
    if (ce == cudaSuccess)
        ce = cudaHostAlloc((void **)&be->abort_word, 64, cudaHostAllocMapped | cudaHostAllocPortable);
    if (ce != cudaSuccess) {
        rc = ar__cuda_fail(err, ce, "creating events");
        goto fail;
    }
    *be->abort_word = 0;
    *out = &be->base;
    return AR_OK;
fail:
    cuda_close(&be->base);
    return rc;
}

/* Grow a device allocation on a GPU to at least want bytes (contents lost). */
static int ensure_dev(void **p, size_t *cap, size_t want, int gpu, ar_error_t *err) {
    if (want < 256) want = 256;
    if (*p && *cap >= want) return AR_OK;
    cudaSetDevice(gpu);
    if (*p) cudaFree(*p);
    *p = NULL;
    *cap = 0;
    cudaError_t ce = cudaMalloc(p, want);
    if (ce != cudaSuccess) {
        *p = NULL;
        size_t free_b = 0, total_b = 0;
        if (ce == cudaErrorMemoryAllocation) {
            cudaGetLastError(); /* not sticky: clear it */
            if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
                char level[64];
                snprintf(level, sizeof level, "hbm of GPU %d (free now)", gpu);
                return ar_capacity_err(err, level, (double)want, "one of the plan's buffers", (double)free_b,
                                       "a smaller --size or fewer --ranks per GPU");
            }
        }
        char what[96];
        snprintf(what, sizeof what, "allocating %zu bytes on GPU %d", want, gpu);
        return ar__cuda_fail(err, ce, what);
    }
    *cap = want;
    return AR_OK;
}

static int ensure_host(void **p, size_t *cap, size_t want, ar_error_t *err) {
    if (want < 256) want = 256;
    if (*p && *cap >= want) return AR_OK;
    if (*p) cudaFreeHost(*p);
    *p = NULL;
    *cap = 0;
    cudaError_t ce = cudaHostAlloc(p, want, cudaHostAllocMapped | cudaHostAllocPortable);
    if (ce != cudaSuccess) {
        *p = NULL;
        return ar__cuda_fail(err, ce, "allocating pinned host memory");
    }
    *cap = want;
    return AR_OK;
}

/* Host mode: mapped pinned host memory gives no system-scope atomics on x86
 * PCIe hosts (CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED is 0 there), so
 * no two channels share a flag word: every channel that signals a flag owns one
 * slot of it, which only it writes (read, add one, release store), and a WAIT
 * sums the flag's slots. Slots are numbered per flag in channel order. */
static int assign_host_slots(ar__cuda_t *be, const ar_plan_t *p, uint32_t nflags, ar_error_t *err) {
    free(be->host_slot_of);
    free(be->host_senders);
    be->host_slot_of = calloc(p->nops ? p->nops : 1, sizeof(uint32_t));
    be->host_senders = calloc((size_t)p->nranks * nflags, sizeof(uint32_t));
    uint32_t *last = malloc((size_t)p->nranks * nflags * sizeof(uint32_t)); /* last sender + 1 */
    if (!be->host_slot_of || !be->host_senders || !last) {
        free(last);
        return AR_ERR(err, AR_ENOMEM, "cuda backend: host flag slots");
    }
    memset(last, 0, (size_t)p->nranks * nflags * sizeof(uint32_t));
    be->host_slots = 1;
    for (int r = 0; r < p->nranks; r++)
        for (int c = 0; c < p->nchannels; c++) {
            const ar_chan_t *ch = ar_plan_chan(p, r, c);
            const uint32_t me = (uint32_t)(r * p->nchannels + c) + 1;
            for (uint32_t i = 0; i < ch->nops; i++) {
                const ar_op_t *op = &p->ops[ch->first + i];
                if (op->code != AR_OP_SIGNAL || op->dst.rank < 0 || op->dst.rank >= p->nranks ||
                    op->flag >= nflags)
                    continue;
                const size_t f = (size_t)op->dst.rank * nflags + op->flag;
                if (last[f] != me) { /* channels are walked in order: a new sender */
                    last[f] = me;
                    be->host_senders[f]++;
                }
                be->host_slot_of[ch->first + i] = be->host_senders[f] - 1;
                if (be->host_senders[f] > be->host_slots) be->host_slots = be->host_senders[f];
            }
        }
    free(last);
    return AR_OK;
}

static const char *const buf_names[] = {"IN", "OUT", "SCRATCH"};

/* Where an address lives, as a pointer this GPU can use. */
static int resolve(ar__cuda_t *be, const ar_plan_t *p, int r, int c, uint32_t i, int gpu, ar_addr_t a0,
                   uint64_t n, void **out, int *sys, int *par, ar_error_t *err) {
    size_t es = ar_dtype_size(p->dtype);
    /* An epoch-parity address: bounds of the odd slot (the higher one), pointer to
     * the even slot tagged in bit 0 (hw/internal.h). */
    const int parity = (a0.buf & AR_ADDR_PARITY) != 0;
    if ((a0.buf & ~(AR_ADDR_BUF_MASK | AR_ADDR_PARITY)) || (parity && a0.off + p->parity_elems < a0.off))
        return AR_ERR(err, AR_EPLAN, "cuda backend: rank %d channel %d op %u: bad address flags or parity offset",
                      r, c, i);
    ar_addr_t a = ar_addr_at(p, a0, 1);
    if (parity) *par = 1;
    if (a.rank == AR_RANK_HOST) {
        if (a.off > p->host_elems || n > p->host_elems - a.off)
            return AR_ERR(err, AR_EPLAN,
                          "cuda backend: rank %d channel %d op %u: host[%" PRIu64 "..+%" PRIu64
                          ") is past the host buffer's %" PRIu64 " elements",
                          r, c, i, a.off, n, p->host_elems);
        *out = (char *)be->host_buf + a0.off * es + (parity ? 1 : 0);
        *sys = 1;
        return AR_OK;
    }
    if (a.rank < 0 || a.rank >= p->nranks || a.buf >= AR_NBUF)
        return AR_ERR(err, AR_EPLAN, "cuda backend: rank %d channel %d op %u: bad address (rank %d, buffer %u)",
                      r, c, i, a.rank, a.buf);
    uint64_t elems = ar_plan_buf_elems(p, a.rank, (ar_buf_t)a.buf);
    if (a.off > elems || n > elems - a.off)
        return AR_ERR(err, AR_EPLAN,
                      "cuda backend: rank %d channel %d op %u: r%d.%s[%" PRIu64 "..+%" PRIu64
                      ") is past the buffer's %" PRIu64 " elements",
                      r, c, i, a.rank, buf_names[a.buf], a.off, n, elems);
    if (be->host_mode && be->rank_gpu[a.rank] != gpu)
        return AR_ERR(err, AR_ENOTSUP,
                      "cuda backend: rank %d channel %d op %u addresses rank %d's %s on GPU %d from GPU %d, "
                      "but peer access is off (%s); the naive algorithm stages through host memory",
                      r, c, i, a.rank, buf_names[a.buf], be->rank_gpu[a.rank], gpu,
                      be->p2p ? "host staging forced" : be->p2p_why);
    *out = (char *)be->buf[a.buf][a.rank] + a0.off * es + (parity ? 1 : 0);
    return AR_OK;
}

/* Op i of channel (r, c) lowered into d, its source pointers appended at srcs[*si]
 * (hw/internal.h): what the executor runs. */
int ar__cuda_lower_op(ar__cuda_t *be, const ar_plan_t *p, int r, int c, uint32_t i, int g, uint32_t nflags,
                      ar__dop_t *d, void **srcs, uint32_t *si, ar_error_t *err) {
    const size_t es = ar_dtype_size(p->dtype);
    const ar_chan_t *ch = ar_plan_chan(p, r, c);
    const ar_op_t *op = &p->ops[ch->first + i];
    d->code = op->code;
    switch (op->code) {
    case AR_OP_COPY:
    case AR_OP_REDUCE: {
        int sys = 0, par = 0;
        if (op->nsrc < 1 || op->src + op->nsrc > p->nsrcs)
            return AR_ERR(err, AR_EPLAN, "cuda backend: rank %d channel %d op %u: bad sources", r, c, i);
        d->nsrc = op->nsrc;
        d->n = op->n;
        d->src = *si;
        AR_TRY(resolve(be, p, r, c, i, g, op->dst, op->n, &d->dst, &sys, &par, err));
        for (uint32_t s = 0; s < op->nsrc; s++)
            AR_TRY(resolve(be, p, r, c, i, g, p->srcs[op->src + s], op->n, &srcs[(*si)++], &sys, &par, err));
        if (sys) d->code |= AR__DOP_SYS;
        if (par) {
            d->code |= AR__DOP_PAR;
            d->count = p->parity_elems * es;
        }
        return AR_OK;
    }
    case AR_OP_SIGNAL: {
        int t = op->dst.rank;
        if (t < 0 || t >= p->nranks || op->flag >= nflags)
            return AR_ERR(err, AR_EPLAN, "cuda backend: rank %d channel %d op %u: bad SIGNAL", r, c, i);
        if (be->host_mode) {
            d->dst = be->host_flags + ((size_t)t * nflags + op->flag) * be->host_slots + be->host_slot_of[ch->first + i];
            d->code |= AR__DOP_SYS;
        } else
            d->dst = be->flags[t] + op->flag;
        return AR_OK;
    }
    case AR_OP_WAIT:
        if (op->flag >= nflags || op->back > 1)
            return AR_ERR(err, AR_EPLAN, "cuda backend: rank %d channel %d op %u: bad WAIT", r, c, i);
        d->per_epoch = p->per_epoch[ar_plan_flag(p, r, op->flag)];
        d->count = op->count - (uint64_t)op->back * d->per_epoch; /* int64_t in the kernel */
        if (be->host_mode) {
            d->dst = be->host_flags + ((size_t)r * nflags + op->flag) * be->host_slots;
            d->nsrc = be->host_senders[(size_t)r * nflags + op->flag];
            d->src = 1;
        } else {
            d->dst = be->flags[r] + op->flag;
            d->nsrc = 1;
            d->src = 0;
        }
        return AR_OK;
    default:
        return AR_ERR(err, AR_EPLAN, "cuda backend: rank %d channel %d op %u: unknown opcode %u", r, c, i, op->code);
    }
}

int ar__cuda_upload(int g, const ar__dop_t *ops, uint32_t nops, void *const *srcs, uint32_t nsrcs,
                    const ar__dblock_t *blocks, uint32_t nb, int stamps, ar__gpu_plan_t *gp, ar_error_t *err) {
    cudaSetDevice(g);
    cudaError_t ce = cudaMalloc((void **)&gp->d_ops, (nops ? nops : 1) * sizeof *ops);
    if (ce == cudaSuccess) ce = cudaMalloc((void **)&gp->d_srcs, (nsrcs ? nsrcs : 1) * sizeof *srcs);
    if (ce == cudaSuccess) ce = cudaMalloc((void **)&gp->d_blocks, nb * sizeof *blocks);
    if (ce == cudaSuccess) ce = cudaMalloc((void **)&gp->d_epochs, nb * sizeof(uint64_t));
    if (ce == cudaSuccess && nops) ce = cudaMemcpy(gp->d_ops, ops, nops * sizeof *ops, cudaMemcpyHostToDevice);
    if (ce == cudaSuccess && nsrcs) ce = cudaMemcpy(gp->d_srcs, srcs, nsrcs * sizeof *srcs, cudaMemcpyHostToDevice);
    if (ce == cudaSuccess) ce = cudaMemcpy(gp->d_blocks, blocks, nb * sizeof *blocks, cudaMemcpyHostToDevice);
    if (ce == cudaSuccess) ce = cudaMemset(gp->d_epochs, 0, nb * sizeof(uint64_t));
    if (ce == cudaSuccess && stamps) ce = cudaMalloc((void **)&gp->d_stamps, (nops + nb) * sizeof(uint64_t));
    gp->nblocks = (int)nb;
    gp->nops = nops;
    return ce == cudaSuccess ? AR_OK : ar__cuda_fail(err, ce, "uploading the plan");
}

void ar__cuda_plan_free(ar__gpu_plan_t *g) {
    void *const owned[] = {g->d_ops, g->d_srcs, g->d_blocks, g->d_epochs, g->d_stamps};
    for (size_t k = 0; k < sizeof owned / sizeof owned[0]; k++) cudaFree(owned[k]);
    free(g->of);
    free(g->deps);
    memset(g, 0, sizeof *g);
}

/* The ops of channel ch in stage k (stage: per op of the plan, ar_plan_stages'), [*from, *to). */
static void stage_range(const ar_chan_t *ch, const uint32_t *stage, uint32_t k, uint32_t *from, uint32_t *to) {
    uint32_t i = 0;
    while (i < ch->nops && stage[ch->first + i] < k) i++;
    *from = i;
    while (i < ch->nops && stage[ch->first + i] == k) i++;
    *to = i;
}

/* Stage k of the executor on GPU g: a block per channel there with ops in it, lowered and
 * uploaded into gp. */
static int stage_lower(ar__cuda_t *be, const ar_plan_t *p, int g, const uint32_t *stage, uint32_t k, uint32_t nflags,
                       int mb_per_sm, ar__gpu_plan_t *gp, ar_error_t *err) {
    uint32_t nb = 0, nops = 0, nsrcs = 0, from, to;
    for (int r = 0; r < p->nranks; r++) {
        if (be->rank_gpu[r] != g) continue;
        for (int c = 0; c < p->nchannels; c++) {
            const ar_chan_t *ch = ar_plan_chan(p, r, c);
            if (!exec_runs(ch)) continue;
            stage_range(ch, stage, k, &from, &to);
            if (from == to) continue;
            nb++;
            nops += to - from;
            for (uint32_t i = from; i < to; i++) {
                const ar_op_t *op = &p->ops[ch->first + i];
                if (op->code == AR_OP_COPY || op->code == AR_OP_REDUCE) nsrcs += op->nsrc;
            }
        }
    }
    if (!nb) return AR_OK;
    const int limit = mb_per_sm * be->sms[g];
    if ((int)nb > limit)
        return AR_ERR(err, AR_ELIMIT,
                      "cuda backend: plan %s puts %u channels on GPU %d, but only %d executor blocks "
                      "fit there at once (%d SMs x %d); spinning blocks that are not resident would "
                      "deadlock: use fewer channels or fewer ranks per GPU",
                      p->algo, nb, g, limit, be->sms[g], mb_per_sm);
    ar__dop_t *ops = calloc(nops, sizeof *ops);
    void **srcs = calloc(nsrcs ? nsrcs : 1, sizeof *srcs);
    ar__dblock_t *blocks = calloc(nb, sizeof *blocks);
    ar__block_of_t *of = calloc(nb, sizeof *of);
    int rc = ops && srcs && blocks && of ? AR_OK : AR_ERR(err, AR_ENOMEM, "cuda backend: out of memory");
    uint32_t bi = 0, oi = 0, si = 0;
    for (int r = 0; r < p->nranks && rc == AR_OK; r++) {
        if (be->rank_gpu[r] != g) continue;
        for (int c = 0; c < p->nchannels && rc == AR_OK; c++) {
            const ar_chan_t *ch = ar_plan_chan(p, r, c);
            if (!exec_runs(ch)) continue;
            stage_range(ch, stage, k, &from, &to);
            if (from == to) continue;
            blocks[bi] = (ar__dblock_t){oi, to - from, si, 0};
            of[bi] = (ar__block_of_t){r, c, from, to - from};
            for (uint32_t i = from; i < to && rc == AR_OK; i++)
                rc = ar__cuda_lower_op(be, p, r, c, i, g, nflags, &ops[oi++], srcs, &si, err);
            blocks[bi].nsrcs = si - blocks[bi].src_first;
            bi++;
        }
    }
    if (rc == AR_OK) rc = ar__cuda_upload(g, ops, nops, srcs, nsrcs, blocks, nb, be->timeline != NULL, gp, err);
    if (rc == AR_OK) gp->of = of, of = NULL;
    free(ops), free(srcs), free(blocks), free(of);
    return rc;
}

int ar__cuda_prepare(ar__cuda_t *be, const ar_plan_t *p, const ar_run_opts_t *opts, ar_error_t *err) {
    if (opts && opts->buffer != AR_MEM_HBM)
        return AR_ERR(err, AR_ENOTSUP,
                      "cuda backend: buffers live in GPU memory (hbm); --buffer %s is a simulator what-if",
                      ar_mem_name(opts->buffer));
    if (p->build) return AR_ERR(err, AR_EINVAL, "cuda backend: plan %s is not finished", p->algo);
    if (p->nranks != be->nranks)
        return AR_ERR(err, AR_EINVAL, "cuda backend: plan %s has %d ranks, the topology %d", p->algo,
                      p->nranks, be->nranks);
    if ((unsigned)p->dtype >= AR_NDTYPE) return AR_ERR(err, AR_EINVAL, "cuda backend: bad dtype");
    for (uint32_t i = 0; i < p->nops; i++) {
        if (p->ops[i].code == AR_OP_NETREDUCE)
            return AR_ERR(err, AR_ENOTSUP,
                          "cuda backend: plan %s sums inside the switch (NETREDUCE), a simulator what-if the GPUs "
                          "do not run", p->algo);
    }
    for (int i = 0; i < be->nused; i++) {
        cudaSetDevice(be->used[i]);
        AR__CU(cudaDeviceSynchronize(), "waiting for the GPU");
    }
    free_gpu_plans(be);
    be->host_mode = (opts && opts->force_host) || !be->p2p;
    be->timeline = opts && opts->timeline ? opts->timeline : be->timeline_env;

    const size_t es = ar_dtype_size(p->dtype);
    const uint32_t nflags = p->nflags ? p->nflags : 1;
    for (int r = 0; r < p->nranks; r++) {
        int g = be->rank_gpu[r];
        AR_TRY(ensure_dev(&be->buf[AR_BUF_IN][r], &be->buf_cap[AR_BUF_IN][r], ar_plan_buf_elems(p, r, AR_BUF_IN) * es, g,
                          err));
        AR_TRY(ensure_dev(&be->buf[AR_BUF_OUT][r], &be->buf_cap[AR_BUF_OUT][r], p->count * es, g, err));
        AR_TRY(ensure_dev(&be->buf[AR_BUF_SCRATCH][r], &be->buf_cap[AR_BUF_SCRATCH][r], p->scratch_elems * es,
                          g, err));
        AR_TRY(ensure_dev((void **)&be->flags[r], &be->flags_cap[r], nflags * sizeof(uint64_t), g, err));
        AR__CU(cudaMemset(be->flags[r], 0, nflags * sizeof(uint64_t)), "clearing flags");
    }
    if (p->host_elems) AR_TRY(ensure_host(&be->host_buf, &be->host_cap, p->host_elems * es, err));
    AR_TRY(assign_host_slots(be, p, nflags, err));
    size_t hf = (size_t)p->nranks * nflags * be->host_slots * sizeof(uint64_t);
    AR_TRY(ensure_host((void **)&be->host_flags, &be->host_flags_cap, hf, err));
    memset(be->host_flags, 0, hf);

    int mb_per_sm = 0;
    AR__CU((cudaError_t)ar__exec_max_blocks_per_sm((int)p->dtype, &mb_per_sm), "occupancy query");

    uint32_t *stage = malloc((p->nops ? p->nops : 1) * sizeof *stage);
    int rc = stage ? ar_plan_stages(p, stage) : AR_ENOMEM;
    if (rc < 0) {
        free(stage);
        return AR_ERR(err, AR_ENOMEM, "cuda backend: out of memory");
    }
    be->nstages = rc;
    rc = AR_OK;
    for (int gi = 0; gi < be->nused && rc == AR_OK; gi++)
        if (!(be->g[gi] = calloc((size_t)be->nstages, sizeof *be->g[gi])))
            rc = AR_ERR(err, AR_ENOMEM, "cuda backend: out of memory");
    for (int gi = 0; gi < be->nused && rc == AR_OK; gi++)
        for (int k = 0; k < be->nstages && rc == AR_OK; k++)
            rc = stage_lower(be, p, be->used[gi], stage, (uint32_t)k, nflags, mb_per_sm, &be->g[gi][k], err);
    /* the channels that compute, on streams of their own (hw/gemm.c) */
    if (rc == AR_OK) rc = ar__gemm_prepare(be, p, nflags, err);
    free(stage);
    if (rc != AR_OK) {
        free_gpu_plans(be);
        return rc;
    }
    for (int i = 0; i < be->nused; i++) {
        cudaSetDevice(be->used[i]);
        AR__CU(cudaDeviceSynchronize(), "uploading the plan");
    }
    be->plan = p;
    be->plan_nops = p->nops;
    be->plan_count = p->count;
    return AR_OK;
}

static int plan_current(const ar__cuda_t *be, const ar_plan_t *p) {
    return be->plan == p && be->plan_nops == p->nops && be->plan_count == p->count;
}

/* The first GPU's stream waits for everything queued so far on every other one;
 * switches devices, ending on the first GPU when there are others. */
static int join_streams(ar__cuda_t *be, ar_error_t *err) {
    const int g0 = be->used[0];
    for (int i = 1; i < be->nused; i++) {
        const int g = be->used[i];
        cudaSetDevice(g);
        AR__CU(cudaEventRecord(be->ev_join[g], be->stream[g]), "recording an event");
        cudaSetDevice(g0);
        AR__CU(cudaStreamWaitEvent(be->stream[g0], be->ev_join[g], 0), "ordering streams");
    }
    return AR_OK;
}

int ar__cuda_launch(ar__cuda_t *be, const ar_plan_t *p, double timeout_s, ar_error_t *err) {
    for (int i = 0; i < be->nused; i++) {
        const int g = be->used[i];
        cudaSetDevice(g);
        /* the computing channels start after what came before, beside the executor or,
         * where its stages wait for their products, before it */
        int deps = 0;
        for (int k = 0; k < be->nstages; k++) deps |= be->g[i][k].ndeps != 0;
        AR_TRY(ar__gemm_fork(be, g, err));
        if (deps) AR_TRY(ar__gemm_enqueue(be, g, p->dtype, timeout_s, err));
        for (int k = 0; k < be->nstages; k++) {
            const ar__gpu_plan_t *gp = &be->g[i][k];
            AR_TRY(ar__gemm_wait_deps(be, g, gp, err));
            if (!gp->nblocks) continue;
            ar__kargs_t ka = ar__cuda_plan_kargs(be, gp, timeout_s);
            AR__CU((cudaError_t)ar__exec_launch(&ka, (int)p->dtype, be->stream[g]), "launching the executor");
        }
        if (!deps) AR_TRY(ar__gemm_enqueue(be, g, p->dtype, timeout_s, err));
        AR_TRY(ar__gemm_join(be, g, err));
    }
    return AR_OK;
}

static int enqueue(ar__cuda_t *be, const ar_plan_t *p, double timeout_s, int timed, ar_error_t *err) {
    const int g0 = be->used[0];
    cudaSetDevice(g0);
    /* Everything already queued on any GPU (input fill, poison) happens before
     * any GPU starts: a peer's kernel may write into this GPU's buffers. */
    AR_TRY(join_streams(be, err));
    if (timed) AR__CU(cudaEventRecord(be->ev_start, be->stream[g0]), "recording an event");
    if (be->nused > 1) {
        AR__CU(cudaEventRecord(be->ev_fork, be->stream[g0]), "recording an event");
        for (int i = 1; i < be->nused; i++)
            AR__CU(cudaStreamWaitEvent(be->stream[be->used[i]], be->ev_fork, 0), "ordering streams");
    }
    AR_TRY(ar__cuda_launch(be, p, timeout_s, err));
    AR_TRY(join_streams(be, err));
    cudaSetDevice(g0);
    if (timed) AR__CU(cudaEventRecord(be->ev_end, be->stream[g0]), "recording an event");
    return AR_OK;
}

int ar__cuda_enqueue(ar__cuda_t *be, const ar_plan_t *p, double timeout_s, ar_error_t *err) {
    return enqueue(be, p, timeout_s, 0, err);
}

ar__kargs_t ar__cuda_plan_kargs(const ar__cuda_t *be, const ar__gpu_plan_t *gp, double timeout_s) {
    ar__kargs_t k = {gp->d_ops, (void *const *)gp->d_srcs, gp->d_blocks, gp->d_epochs, be->abort_word,
                     (uint64_t)(timeout_s * 1e9), gp->nblocks, gp->d_stamps, gp->nops, !be->signals_serial};
    return k;
}

/* The rows of one launch's ops: each from the end of the op before it (or its block's
 * start) to its own end; st holds the ops' ends, then the blocks' starts. */
static void timeline_launch(FILE *f, const ar_plan_t *p, const ar__gpu_plan_t *gp, const uint64_t *st, int dev,
                            uint64_t t0) {
    for (int b = 0, oi = 0; b < gp->nblocks; b++) {
        const ar__block_of_t *o = &gp->of[b];
        const ar_op_t *ops = &p->ops[ar_plan_chan(p, o->rank, o->chan)->first];
        double prev = (double)(st[gp->nops + b] - t0);
        for (uint32_t i = o->from; i < o->from + o->nops; i++, oi++) {
            const double end = (double)(st[oi] - t0);
            ar_timeline_row(f, dev, o->rank, o->chan, i, &ops[i], prev, end);
            prev = end;
        }
    }
}

/* Every op of the last execution, when it started (the end of the op before it, or its
 * block's start) and ended, in ns from the earliest block start. The clocks are per GPU:
 * compare ops of one GPU, and across GPUs only roughly. */
int ar__cuda_write_timeline(ar__cuda_t *be, const ar_plan_t *p, ar_error_t *err) {
    if (!be->timeline) return AR_OK;
    ar_out_t out;
    char label[160];
    snprintf(label, sizeof label, "--timeline %s", be->timeline);
    AR_TRY(ar_out_open(&out, label, be->timeline, err));
    FILE *f = out.f;
    /* every launch with stamps: the executor's stages, then the computing channels' flag runs */
    int nl = be->nused * be->nstages;
    for (int i = 0; i < be->ncchan; i++) nl += be->cchan[i].nprod + 1;
    const ar__gpu_plan_t **gps = calloc((size_t)nl, sizeof *gps);
    int *dev = calloc((size_t)nl, sizeof *dev);
    uint64_t **st = calloc((size_t)nl, sizeof *st), t0 = UINT64_MAX;
    int rc = gps && dev && st ? AR_OK : AR_ERR(err, AR_ENOMEM, "cuda backend: out of memory");
    for (int gi = 0, l = 0; gi < be->nused && rc == AR_OK; gi++)
        for (int k = 0; k < be->nstages; k++, l++) gps[l] = &be->g[gi][k], dev[l] = be->used[gi];
    for (int i = 0, l = be->nused * be->nstages; i < be->ncchan && rc == AR_OK; i++)
        for (int s = 0; s <= be->cchan[i].nprod; s++, l++) gps[l] = &be->cchan[i].seg[s], dev[l] = be->cchan[i].gpu;
    /* each one's stamps: its ops' ends, then its blocks' starts */
    for (int l = 0; l < nl && rc == AR_OK; l++) {
        const ar__gpu_plan_t *gp = gps[l];
        if (!gp->nblocks) continue;
        size_t n = gp->nops + (size_t)gp->nblocks;
        st[l] = malloc(n * sizeof(uint64_t));
        cudaSetDevice(dev[l]);
        if (!st[l]) rc = AR_ERR(err, AR_ENOMEM, "cuda backend: out of memory");
        else if (cudaMemcpy(st[l], gp->d_stamps, n * sizeof(uint64_t), cudaMemcpyDeviceToHost) != cudaSuccess)
            rc = AR_ERR(err, AR_EDEVICE, "cuda backend: reading the timeline");
        for (int b = 0; rc == AR_OK && b < gp->nblocks; b++)
            if (st[l][gp->nops + b] < t0) t0 = st[l][gp->nops + b];
    }
    ar_timeline_header(f);
    for (int l = 0; l < be->nused * be->nstages && rc == AR_OK; l++) timeline_launch(f, p, gps[l], st[l], dev[l], t0);
    /* a computing channel in op order: each flag run, then the product after it, from the end
     * of the flags before it to the start of those after it (each launched after it on its
     * stream), where both ran */
    for (int i = 0, l = be->nused * be->nstages; i < be->ncchan && rc == AR_OK; l += be->cchan[i].nprod + 1, i++) {
        const ar__cchan_t *cc = &be->cchan[i];
        const ar_chan_t *ch = ar_plan_chan(p, cc->rank, cc->chan);
        for (int s = 0; s <= cc->nprod; s++) {
            const ar__gpu_plan_t *before = gps[l + s];
            timeline_launch(f, p, before, st[l + s], cc->gpu, t0);
            if (s == cc->nprod) break;
            const ar__gpu_plan_t *after = gps[l + s + 1];
            if (!before->nblocks || !after->nblocks) continue;
            const uint32_t at = before->of[0].from + before->of[0].nops;
            ar_timeline_row(f, cc->gpu, cc->rank, cc->chan, at, &p->ops[ch->first + at],
                            (double)(st[l + s][before->nops - 1] - t0), (double)(st[l + s + 1][after->nops] - t0));
        }
    }
    for (int l = 0; st && l < nl; l++) free(st[l]);
    free(st);
    free(gps);
    free(dev);
    if (rc == AR_OK) return ar_out_close(&out, err);
    ar_out_abort(&out);
    return rc;
}

int ar__cuda_sync(ar__cuda_t *be, const ar_plan_t *p, double timeout_s, ar_error_t *err) {
    /* The device side ends by itself after timeout_s; the host waits a little
     * longer before calling the GPU stuck. */
    const double give_up = ar_now_s() + timeout_s + 30.0;
    for (int i = 0; i < be->nused; i++) {
        const int g = be->used[i];
        cudaSetDevice(g);
        for (;;) {
            cudaError_t ce = cudaStreamQuery(be->stream[g]);
            if (ce == cudaSuccess) break;
            if (ce != cudaErrorNotReady) return ar__cuda_fail(err, ce, "running the executor");
            if (ar_now_s() > give_up)
                return AR_ERR(err, AR_EDEVICE, "cuda backend: GPU %d did not finish within %.0f s", g,
                              timeout_s + 30.0);
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
    if (*be->abort_word) {
        /* Flags and epochs are out of step now: start them again from zero. */
        for (int gi = 0; gi < be->nused; gi++) {
            cudaSetDevice(be->used[gi]);
            for (int k = 0; k < be->nstages; k++)
                if (be->g[gi][k].nblocks)
                    AR__CU(cudaMemset(be->g[gi][k].d_epochs, 0, be->g[gi][k].nblocks * sizeof(uint64_t)), "reset");
        }
        for (int i = 0; i < be->ncchan; i++) {
            const ar__cchan_t *cc = &be->cchan[i];
            cudaSetDevice(cc->gpu);
            for (int s = 0; s <= cc->nprod; s++)
                if (cc->seg[s].nblocks) AR__CU(cudaMemset(cc->seg[s].d_epochs, 0, sizeof(uint64_t)), "reset");
        }
        const uint32_t nflags = p->nflags ? p->nflags : 1;
        for (int r = 0; r < be->nranks; r++) {
            cudaSetDevice(be->rank_gpu[r]);
            AR__CU(cudaMemset(be->flags[r], 0, nflags * sizeof(uint64_t)), "reset");
        }
        memset(be->host_flags, 0, (size_t)be->nranks * nflags * be->host_slots * sizeof(uint64_t));
        for (int gi = 0; gi < be->nused; gi++) {
            cudaSetDevice(be->used[gi]);
            AR__CU(cudaDeviceSynchronize(), "reset");
        }
        *be->abort_word = 0;
        return AR_ERR(err, AR_ETIMEOUT,
                      "cuda backend: plan %s: a WAIT was not met within %.3g s; the run was ended and the "
                      "flags reset (the GPUs stay usable)",
                      p->algo, timeout_s);
    }
    AR_TRY(ar__cuda_write_timeline(be, p, err));
    return AR_OK;
}

int ar__cuda_fill_inputs(ar__cuda_t *be, const ar_plan_t *p, uint64_t seed, ar_error_t *err) {
    for (int r = 0; r < p->nranks; r++) {
        int g = be->rank_gpu[r];
        cudaSetDevice(g);
        AR__CU((cudaError_t)ar__fill_launch(be->buf[AR_BUF_IN][r], ar_plan_buf_elems(p, r, AR_BUF_IN), (int)p->dtype,
                                            seed, r, be->stream[g]),
               "filling inputs");
    }
    return AR_OK;
}

int ar__cuda_poison(ar__cuda_t *be, const ar_plan_t *p, ar_error_t *err) {
    const size_t es = ar_dtype_size(p->dtype);
    for (int r = 0; r < p->nranks; r++) {
        int g = be->rank_gpu[r];
        cudaSetDevice(g);
        AR__CU(cudaMemsetAsync(be->buf[AR_BUF_OUT][r], 0xff, p->count * es, be->stream[g]), "poisoning OUT");
        if (p->scratch_elems)
            AR__CU(cudaMemsetAsync(be->buf[AR_BUF_SCRATCH][r], 0xff, p->scratch_elems * es, be->stream[g]),
                   "poisoning SCRATCH");
    }
    if (p->host_elems) {
        for (int i = 0; i < be->nused; i++) {
            cudaSetDevice(be->used[i]);
            AR__CU(cudaStreamSynchronize(be->stream[be->used[i]]), "poisoning");
        }
        memset(be->host_buf, 0xff, p->host_elems * es);
    }
    return AR_OK;
}

int ar__check_buffer(const void *dev_buf, int gpu, ar_dtype_t dtype, ar_coll_t coll, const ar_gemm_t *gemm, uint64_t n,
                     int nranks, uint64_t seed, int rank_label, ar_result_t *res, ar_error_t *err) {
    size_t bytes = n * ar_dtype_size(dtype);
    void *h = malloc(bytes ? bytes : 1);
    if (!h) return AR_ERR(err, AR_ENOMEM, "cuda backend: out of memory for the check");
    cudaSetDevice(gpu);
    cudaError_t ce = cudaMemcpy(h, dev_buf, bytes, cudaMemcpyDeviceToHost);
    if (ce != cudaSuccess) {
        free(h);
        return ar__cuda_fail(err, ce, "reading a result back");
    }
    ar_check_inputs_t inputs = {.in = NULL, .seed = seed};
    if (gemm) inputs.gemm = *gemm;
    ar_check_out(dtype, coll, nranks, n, &inputs, rank_label, h, res);
    free(h);
    return AR_OK;
}

int ar__cuda_check(ar__cuda_t *be, const ar_plan_t *p, uint64_t seed, ar_result_t *res, ar_error_t *err) {
    for (int r = 0; r < p->nranks; r++) {
        char keep[256];
        memcpy(keep, res->check_msg, sizeof keep);
        int had_fail = res->checked && !res->check_ok;
        AR_TRY(ar__check_buffer(be->buf[AR_BUF_OUT][r], be->rank_gpu[r], p->dtype, p->coll, &p->gemm, p->count,
                                p->nranks, seed, r, res, err));
        if (had_fail) memcpy(res->check_msg, keep, sizeof keep); /* keep the first mismatch */
    }
    return AR_OK;
}

static int cuda_prepare(ar_backend_t *b, const ar_plan_t *p, const ar_run_opts_t *opts, ar_error_t *err) {
    return ar__cuda_prepare((ar__cuda_t *)b, p, opts, err);
}

static int cuda_execute(ar_backend_t *b, const ar_plan_t *p, const ar_run_opts_t *opts_in, ar_result_t *res,
                        ar_error_t *err) {
    ar__cuda_t *be = (ar__cuda_t *)b;
    const ar_run_opts_t defaults = AR_RUN_OPTS_DEFAULT;
    const ar_run_opts_t *opts = opts_in ? opts_in : &defaults;
    const double t0 = ar_now_s();
    const double timeout_s = opts->timeout_s > 0 ? opts->timeout_s : 5.0;
    if (!plan_current(be, p) || be->host_mode != (opts->force_host || !be->p2p))
        AR_TRY(ar__cuda_prepare(be, p, opts, err));
    const int iters = opts->iters > 0 ? opts->iters : 1;
    /* Fresh random inputs for every execute call (never zeros). */
    const uint64_t seed = ar_gen_mix64((uint64_t)opts->seed * 0x9e3779b97f4a7c15ull + ++be->check_serial);
    AR_TRY(ar__cuda_fill_inputs(be, p, seed, err));
    for (int w = 0; w < opts->warmup; w++) {
        AR_TRY(enqueue(be, p, timeout_s, 0, err));
        AR_TRY(ar__cuda_sync(be, p, timeout_s, err));
    }
    double *times = calloc((size_t)iters, sizeof *times);
    if (!times) return AR_ERR(err, AR_ENOMEM, "cuda backend: out of memory");
    int rc = AR_OK;
    res->checked = 0;
    res->check_ok = 0;
    res->start_s = 0;
    res->max_rel_err = 0;
    res->check_msg[0] = 0;
    for (int it = 0; it < iters && rc == AR_OK; it++) {
        if (opts->check) AR_TRY_GOTO(ar__cuda_poison(be, p, err), rc, out);
        AR_TRY_GOTO(enqueue(be, p, timeout_s, 1, err), rc, out);
        AR_TRY_GOTO(ar__cuda_sync(be, p, timeout_s, err), rc, out);
        float ms = 0;
        cudaSetDevice(be->used[0]);
        cudaError_t ce = cudaEventElapsedTime(&ms, be->ev_start, be->ev_end);
        if (ce != cudaSuccess) {
            rc = ar__cuda_fail(err, ce, "reading the timer");
            goto out;
        }
        times[it] = ms * 1e-3;
        if (opts->check) AR_TRY_GOTO(ar__cuda_check(be, p, seed, res, err), rc, out);
    }
    res->time_s = ar_median(times, (size_t)iters);
    for (int t = 0; t < AR_NTERM; t++) res->terms_s[t] = 0;
    const ar_model_t *m = be->base.topo->model;
    res->cycles = m ? res->time_s * m->clock_ghz * 1e9 : 0;
    res->ops_executed = (uint64_t)p->nops * (uint64_t)(iters + opts->warmup);
out:
    free(times);
    res->sim_wall_s = ar_now_s() - t0;
    return rc;
}

static int cuda_backend_open(const ar_topo_t *topo, ar_backend_t **out, ar_error_t *err) {
    return cuda_open(topo, out, err);
}

/* The channels of the ranks on each GPU (device index d runs on GPU d) against the executor
 * blocks it holds at once: the check cuda_prepare makes, before any GPU is opened. */
static int cuda_admits(const ar_topo_t *topo, const ar_plan_t *p, ar_error_t *err) {
    int n = 0, mb_per_sm = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) return AR_OK; /* running says why */
    if (n > AR__MAX_GPUS) n = AR__MAX_GPUS;
    if (ar__exec_max_blocks_per_sm((int)p->dtype, &mb_per_sm) != 0 || mb_per_sm <= 0) return AR_OK;
    uint32_t nb[AR__MAX_GPUS] = {0};
    for (int r = 0; r < p->nranks; r++) {
        const int g = topo->placement ? topo->placement[r] : r;
        if (g < 0 || g >= n) return AR_OK; /* opening says why */
        for (int c = 0; c < p->nchannels; c++) nb[g] += ar_plan_chan(p, r, c)->nops > 0;
    }
    for (int g = 0; g < n; g++) {
        int sms = 0;
        if (!nb[g] || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, g) != cudaSuccess) continue;
        if ((int)nb[g] > mb_per_sm * sms)
            return AR_ERR(err, AR_ELIMIT, "cuda backend: plan %s puts %u channels on GPU %d, %d executor blocks fit",
                          p->algo, nb[g], g, mb_per_sm * sms);
    }
    return AR_OK;
}

const ar_backend_ops_t ar_cuda_backend = {
    .name = "cuda", .caps = AR_BACKEND_DATA | AR_BACKEND_HARDWARE, .admits = cuda_admits,
    .open = cuda_backend_open, .prepare = cuda_prepare, .execute = cuda_execute, .close = cuda_close,
    .summary = "the plan executor on this machine's NVIDIA GPUs (one process, peer access, CUDA)",
};
