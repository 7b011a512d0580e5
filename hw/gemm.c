/* hw: the channels that compute (a COMPUTE among their ops, arsim/plan.h), on the GPUs.
 *
 * A product is cuBLASLt's, launched from the host; SIGNAL and WAIT keep the executor's
 * semantics (epochs, release and acquire, timeouts). So a computing channel runs on a
 * stream of its own: each run of SIGNALs and WAITs between its products as a one-block
 * executor launch (its own epoch counter, one execution per launch, as a block of the
 * executor's), each product as cublasLtMatmul, all in program order on the stream. The
 * stream forks from the GPU's stream before the executor's kernel is launched there and the
 * GPU's stream joins it after: the products run beside the executor's blocks, on the SMs
 * those leave, and one execution (a captured graph too) holds both. Blocks that only wait
 * would hold SMs a product could use, so where a plan runs in stages (ar_plan_stages) the
 * executor is launched once per stage, each launch after the products its channels wait for
 * (cudaStreamWaitEvent on the event recorded after each product): a product then shares the
 * SMs only with stages that have work. In one stage that only starts after products
 * (ar_plan_products_first_alone), the launch waits for each computing channel's first.
 *
 * Row-major C (m x N) = A (m x K) B (K x N) is column-major C^T (N x m) = B^T (N x K)
 * A^T (K x m): the same bytes, so cuBLASLt multiplies b by a into c with no transposes. Sums
 * in float32 (CUBLAS_COMPUTE_32F: fp32 stays fp32, no TF32), rounded once to the dtype. */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "arsim/util.h"
#include "hw/cuda.h"

/* cuBLASLt, loaded when a product first runs (dlopen): linked, its hundreds of megabytes would be
 * mapped into every arsim, the simulators too. */
static struct {
    void *lib;
    __typeof__(cublasLtCreate) *cublasLtCreate;
    __typeof__(cublasLtDestroy) *cublasLtDestroy;
    __typeof__(cublasLtMatmul) *cublasLtMatmul;
    __typeof__(cublasLtMatmulAlgoGetHeuristic) *cublasLtMatmulAlgoGetHeuristic;
    __typeof__(cublasLtMatmulDescCreate) *cublasLtMatmulDescCreate;
    __typeof__(cublasLtMatmulDescDestroy) *cublasLtMatmulDescDestroy;
    __typeof__(cublasLtMatmulDescSetAttribute) *cublasLtMatmulDescSetAttribute;
    __typeof__(cublasLtMatmulPreferenceCreate) *cublasLtMatmulPreferenceCreate;
    __typeof__(cublasLtMatmulPreferenceDestroy) *cublasLtMatmulPreferenceDestroy;
    __typeof__(cublasLtMatmulPreferenceSetAttribute) *cublasLtMatmulPreferenceSetAttribute;
    __typeof__(cublasLtMatrixLayoutCreate) *cublasLtMatrixLayoutCreate;
    __typeof__(cublasLtMatrixLayoutDestroy) *cublasLtMatrixLayoutDestroy;
    __typeof__(cublasLtMatmulAlgoConfigSetAttribute) *cublasLtMatmulAlgoConfigSetAttribute;
    __typeof__(cublasLtMatmulAlgoCheck) *cublasLtMatmulAlgoCheck;
} lt;

static int lt_load(ar_error_t *err) {
    if (lt.lib) return AR_OK;
    static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so", NULL};
    for (int i = 0; names[i] && !lt.lib; i++) lt.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lt.lib)
        return AR_ERR(err, AR_ENOTSUP, "cuda backend: a matrix product (COMPUTE) needs cuBLASLt: %s", dlerror());
#define AR__LT_SYM(f)                                                                                   \
    if (!(*(void **)&lt.f = dlsym(lt.lib, #f))) {                                                      \
        dlclose(lt.lib);                                                                               \
        lt.lib = NULL;                                                                                 \
        return AR_ERR(err, AR_ENOTSUP, "cuda backend: cuBLASLt has no %s", #f);                          \
    }
    AR__LT_SYM(cublasLtCreate)
    AR__LT_SYM(cublasLtDestroy)
    AR__LT_SYM(cublasLtMatmul)
    AR__LT_SYM(cublasLtMatmulAlgoGetHeuristic)
    AR__LT_SYM(cublasLtMatmulDescCreate)
    AR__LT_SYM(cublasLtMatmulDescDestroy)
    AR__LT_SYM(cublasLtMatmulDescSetAttribute)
    AR__LT_SYM(cublasLtMatmulPreferenceCreate)
    AR__LT_SYM(cublasLtMatmulPreferenceDestroy)
    AR__LT_SYM(cublasLtMatmulPreferenceSetAttribute)
    AR__LT_SYM(cublasLtMatrixLayoutCreate)
    AR__LT_SYM(cublasLtMatrixLayoutDestroy)
    AR__LT_SYM(cublasLtMatmulAlgoConfigSetAttribute)
    AR__LT_SYM(cublasLtMatmulAlgoCheck)
#undef AR__LT_SYM
    return AR_OK;
}

static int lt_fail(ar_error_t *err, cublasStatus_t st, const char *what) {
    return AR_ERR(err, AR_EDEVICE, "cuda backend: cuBLASLt: %s: status %d", what, (int)st);
}

#define AR__LT(call, what)                                   \
    do {                                                     \
        cublasStatus_t ar__st = (call);                      \
        if (ar__st != CUBLAS_STATUS_SUCCESS) return lt_fail(err, ar__st, what); \
    } while (0)

/* cuBLASLt on GPU g, made once per backend. */
static int lt_open(ar__cuda_t *be, int g, ar_error_t *err) {
    if (be->lt[g]) return AR_OK;
    AR_TRY(lt_load(err));
    cudaSetDevice(g);
    AR__LT(lt.cublasLtCreate(&be->lt[g]), "creating a handle");
    AR__CU(cudaMalloc(&be->lt_ws[g], AR__LT_WORKSPACE_BYTES), "allocating cuBLASLt's workspace");
    AR__CU(cudaEventCreateWithFlags(&be->ev_cfork[g], cudaEventDisableTiming), "creating an event");
    return AR_OK;
}

/* The largest power of two (up to 256) dividing a pointer: cuBLASLt picks its kernels by it. */
static uint32_t align_of(const void *ptr) {
    uint32_t a = 256;
    while (a > 1 && ((uintptr_t)ptr % a)) a /= 2;
    return a;
}

/* The SMs product s of computing channel ci may count on: those left by the blocks of the
 * executor's stages that may run beside it (every one not launched after that product or a
 * later one of the channel: a stage also starts after the stages before it) and by the
 * computing channels' flag kernels (each spins on an SM of its own while it waits). cuBLASLt
 * sizes its persistent and stream-K kernels to the SMs it targets, and their blocks wait on
 * one another: targeting SMs a spinning block holds would leave some never resident, the
 * product never done, and the executor waiting for it. */
static int32_t sm_target(const ar__cuda_t *be, int ci, int s, int *beside) {
    const int g = be->cchan[ci].gpu, slot = ar__cuda_slot(be, g);
    int busy = 0, after = -1; /* after: the latest product of ci the stages so far wait for */
    for (int k = 0; slot >= 0 && k < be->nstages; k++) {
        const ar__gpu_plan_t *gp = &be->g[slot][k];
        for (int d = 0; d < gp->ndeps; d++)
            if (gp->deps[d].cc == ci && gp->deps[d].prod > after) after = gp->deps[d].prod;
        if (after < s && gp->nblocks > busy) busy = gp->nblocks;
    }
    *beside = busy > 0;
    for (int i = 0; i < be->ncchan; i++) busy += be->cchan[i].gpu == g;
    const int left = be->sms[g] - busy;
    return left > 1 ? left : 1;
}

/* Beside the executor's blocks a product runs in clusters of one SM: a cluster's blocks start
 * together on SMs of one GPC, and the executor's blocks, spread over the GPCs, leave too few
 * free in each for the heuristic's clusters (on H200, 2 x 4 SMs for 1024 x 3584 x 8192: beside
 * 16 blocks 123 us a product, 88 in clusters of one). The heuristic ranks its kernels with their
 * own clusters, not with these, so each of its n candidates that takes clusters of one is timed
 * here (the GPU idle) and the fastest kept in x; x keeps its kernel where none does. */
static int fastest_on_single_sms(ar__cuda_t *be, int g, ar__gemm_t *x, const cublasLtMatmulHeuristicResult_t *h, int n,
                                 ar_error_t *err) {
    const uint16_t shape = CUBLASLT_CLUSTER_SHAPE_1x1x1;
    cudaEvent_t ev[2];
    AR__CU(cudaEventCreate(&ev[0]), "creating an event");
    AR__CU(cudaEventCreate(&ev[1]), "creating an event");
    const cublasLtMatmulAlgo_t own = x->algo;
    cublasLtMatmulAlgo_t best = own;
    float best_ms = INFINITY;
    int rc = AR_OK;
    for (int i = 0; i < n && rc == AR_OK; i++) {
        cublasLtMatmulHeuristicResult_t ok;
        x->algo = h[i].algo;
        if (lt.cublasLtMatmulAlgoConfigSetAttribute(&x->algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &shape,
                                                    sizeof shape) != CUBLAS_STATUS_SUCCESS ||
            lt.cublasLtMatmulAlgoCheck(be->lt[g], x->desc, x->la, x->lb, x->lc, x->lc, &x->algo, &ok) !=
                CUBLAS_STATUS_SUCCESS)
            continue;
        float ms = 0;
        rc = ar__gemm_launch(be, g, x, be->stream[g], err); /* its module loaded, caches warm */
        cudaEventRecord(ev[0], be->stream[g]);
        for (int k = 0; k < 3 && rc == AR_OK; k++) rc = ar__gemm_launch(be, g, x, be->stream[g], err);
        cudaEventRecord(ev[1], be->stream[g]);
        if (rc == AR_OK && cudaEventSynchronize(ev[1]) == cudaSuccess && cudaEventElapsedTime(&ms, ev[0], ev[1]) == cudaSuccess &&
            ms < best_ms)
            best_ms = ms, best = x->algo;
    }
    x->algo = rc == AR_OK ? best : own;
    cudaEventDestroy(ev[0]);
    cudaEventDestroy(ev[1]);
    return rc;
}

int ar__gemm_make(ar__cuda_t *be, int g, ar_dtype_t dtype, uint64_t m, uint64_t N, uint64_t K, const void *a,
                  const void *b, void *c, int32_t sms, int beside, void *ws, ar__gemm_t *x, ar_error_t *err) {
    AR_TRY(lt_open(be, g, err));
    cudaSetDevice(g);
    x->ws = ws ? ws : be->lt_ws[g];
    x->a = a;
    x->b = b;
    x->c = c;
    const cudaDataType_t t = dtype == AR_BF16 ? CUDA_R_16BF : dtype == AR_FP16 ? CUDA_R_16F : CUDA_R_32F;
    AR__LT(lt.cublasLtMatmulDescCreate(&x->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "a product's descriptor");
    if (sms > 0)
        AR__LT(lt.cublasLtMatmulDescSetAttribute(x->desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sms, sizeof sms),
               "the SMs a product may use");
    AR__LT(lt.cublasLtMatrixLayoutCreate(&x->la, t, N, K, N), "a layout");
    AR__LT(lt.cublasLtMatrixLayoutCreate(&x->lb, t, K, m, K), "a layout");
    AR__LT(lt.cublasLtMatrixLayoutCreate(&x->lc, t, N, m, N), "a layout");
    cublasLtMatmulPreference_t pref;
    AR__LT(lt.cublasLtMatmulPreferenceCreate(&pref), "a preference");
    const size_t ws_bytes = AR__LT_WORKSPACE_BYTES;
    /* cuBLASLt's A is our b, its B our a; C and D are c */
    const uint32_t al_a = align_of(x->b), al_b = align_of(x->a), al_c = align_of(x->c);
    const struct { cublasLtMatmulPreferenceAttributes_t attr; const void *v; size_t n; } prefs[] = {
        {CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof al_a},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof al_b},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof al_c},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_c, sizeof al_c},
    };
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    for (size_t i = 0; i < sizeof prefs / sizeof *prefs && st == CUBLAS_STATUS_SUCCESS; i++)
        st = lt.cublasLtMatmulPreferenceSetAttribute(pref, prefs[i].attr, prefs[i].v, prefs[i].n);
    cublasLtMatmulHeuristicResult_t h[AR__LT_CANDIDATES];
    int found = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = lt.cublasLtMatmulAlgoGetHeuristic(be->lt[g], x->desc, x->la, x->lb, x->lc, x->lc, pref,
                                               beside ? AR__LT_CANDIDATES : 1, h, &found);
    lt.cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS) return lt_fail(err, st, "choosing a kernel");
    if (!found)
        return AR_ERR(err, AR_ENOTSUP, "cuda backend: cuBLASLt has no kernel for a %llu x %llu x %llu %s product",
                      (unsigned long long)m, (unsigned long long)N, (unsigned long long)K, ar_dtype_name(dtype));
    x->algo = h[0].algo;
    if (beside) AR_TRY(fastest_on_single_sms(be, g, x, h, found, err));
    /* Once now, alone: the first launch of a kernel loads its module (CUDA's lazy loading),
     * which waits for the kernels running on the GPU; the executor's blocks spin until the
     * product is done, so a first launch beside them would wait forever. Its output is
     * scratch the execution writes anyway. */
    AR_TRY(ar__gemm_launch(be, g, x, be->stream[g], err));
    AR__CU(cudaStreamSynchronize(be->stream[g]), "a product's first run");
    return AR_OK;
}

int ar__gemm_launch(ar__cuda_t *be, int g, const ar__gemm_t *x, cudaStream_t stream, ar_error_t *err) {
    const float one = 1.0f, zero = 0.0f;
    AR__LT(lt.cublasLtMatmul(be->lt[g], x->desc, &one, x->b, x->la, x->a, x->lb, &zero, x->c, x->lc, x->c, x->lc, &x->algo,
                          x->ws, AR__LT_WORKSPACE_BYTES, stream),
           "a product");
    return AR_OK;
}

void ar__gemm_destroy(ar__gemm_t *x) {
    if (x->la) lt.cublasLtMatrixLayoutDestroy(x->la);
    if (x->lb) lt.cublasLtMatrixLayoutDestroy(x->lb);
    if (x->lc) lt.cublasLtMatrixLayoutDestroy(x->lc);
    if (x->desc) lt.cublasLtMatmulDescDestroy(x->desc);
    memset(x, 0, sizeof *x);
}

/* A plan's COMPUTE, lowered: product s of computing channel ci. */
static int gemm_lower(ar__cuda_t *be, const ar_plan_t *p, const ar_op_t *op, int ci, int s, ar__gemm_t *x,
                      ar_error_t *err) {
    const int g = be->cchan[ci].gpu;
    const size_t es = ar_dtype_size(p->dtype);
    uint64_t m, N, K;
    ar_op_gemm(op, &m, &N, &K);
    int beside;
    const int32_t sms = sm_target(be, ci, s, &beside);
    const ar_addr_t *a = &p->srcs[op->src], *b = &p->srcs[op->src + 1];
    return ar__gemm_make(be, g, p->dtype, m, N, K, (const char *)be->buf[ar_addr_buf(*a)][a->rank] + a->off * es,
                         (const char *)be->buf[ar_addr_buf(*b)][b->rank] + b->off * es,
                         (char *)be->buf[ar_addr_buf(op->dst)][op->dst.rank] + op->dst.off * es, sms, beside,
                         be->cchan[ci].ws, x, err);
}

/* Ops [from, to) of channel (r, c), none a COMPUTE, as a one-block plan in seg. */
static int seg_lower(ar__cuda_t *be, const ar_plan_t *p, int r, int c, uint32_t from, uint32_t to, uint32_t nflags,
                     ar__gpu_plan_t *seg, ar_error_t *err) {
    if (from == to) return AR_OK;
    const int g = be->rank_gpu[r];
    ar__dop_t *ops = calloc(to - from, sizeof *ops);
    if (!ops) return AR_ERR(err, AR_ENOMEM, "cuda backend: out of memory");
    uint32_t si = 0;
    int rc = AR_OK;
    for (uint32_t i = from; i < to && rc == AR_OK; i++) {
        const ar_op_t *op = &p->ops[ar_plan_chan(p, r, c)->first + i];
        if (op->code != AR_OP_SIGNAL && op->code != AR_OP_WAIT)
            rc = AR_ERR(err, AR_ENOTSUP,
                        "cuda backend: rank %d channel %d op %u: a channel that computes holds COMPUTE, SIGNAL and "
                        "WAIT only (its products run through cuBLASLt), not %s", r, c, i, ar_op_name(op->code));
        else
            rc = ar__cuda_lower_op(be, p, r, c, i, g, nflags, &ops[i - from], NULL, &si, err);
    }
    const ar__dblock_t block = {0, to - from, 0, 0};
    if (rc == AR_OK) rc = ar__cuda_upload(g, ops, to - from, NULL, 0, &block, 1, be->timeline != NULL, seg, err);
    free(ops);
    if (rc == AR_OK && !(seg->of = malloc(sizeof *seg->of))) rc = AR_ERR(err, AR_ENOMEM, "cuda backend: out of memory");
    if (rc == AR_OK) *seg->of = (ar__block_of_t){r, c, from, to - from};
    return rc;
}

/* Computing channel ci: its products and the runs of flags between them. */
static int chan_lower(ar__cuda_t *be, const ar_plan_t *p, uint32_t nflags, int ci, ar_error_t *err) {
    ar__cchan_t *cc = &be->cchan[ci];
    const int r = cc->rank, c = cc->chan;
    const ar_chan_t *ch = ar_plan_chan(p, r, c);
    cc->prod = calloc((size_t)cc->nprod, sizeof *cc->prod);
    cc->seg = calloc((size_t)cc->nprod + 1, sizeof *cc->seg);
    cc->made = calloc((size_t)cc->nprod, sizeof *cc->made);
    if (!cc->prod || !cc->seg || !cc->made) return AR_ERR(err, AR_ENOMEM, "cuda backend: out of memory");
    AR_TRY(lt_open(be, cc->gpu, err));
    cudaSetDevice(cc->gpu);
    AR__CU(cudaStreamCreateWithFlags(&cc->stream, cudaStreamNonBlocking), "creating a stream");
    AR__CU(cudaEventCreateWithFlags(&cc->done, cudaEventDisableTiming), "creating an event");
    for (int s = 0; s < cc->nprod; s++)
        AR__CU(cudaEventCreateWithFlags(&cc->made[s], cudaEventDisableTiming), "creating an event");
    /* its own: the channels of ranks sharing a GPU run their products at once */
    AR__CU(cudaMalloc(&cc->ws, AR__LT_WORKSPACE_BYTES), "allocating cuBLASLt's workspace");
    uint32_t from = 0;
    int s = 0;
    for (uint32_t i = 0; i < ch->nops; i++) {
        const ar_op_t *op = &p->ops[ch->first + i];
        if (op->code != AR_OP_COMPUTE) continue;
        AR_TRY(seg_lower(be, p, r, c, from, i, nflags, &cc->seg[s], err));
        AR_TRY(gemm_lower(be, p, op, ci, s, &cc->prod[s], err));
        from = i + 1;
        s++;
    }
    return seg_lower(be, p, r, c, from, ch->nops, nflags, &cc->seg[s], err);
}

/* Add product prod of computing channel ci to what gp waits for (only the latest of a channel:
 * its products are made in order). */
static int add_dep(ar__gpu_plan_t *gp, int ci, int prod, ar_error_t *err) {
    for (int d = 0; d < gp->ndeps; d++)
        if (gp->deps[d].cc == ci) {
            if (prod > gp->deps[d].prod) gp->deps[d].prod = prod;
            return AR_OK;
        }
    ar__dep_t *n = realloc(gp->deps, ((size_t)gp->ndeps + 1) * sizeof *n);
    if (!n) return AR_ERR(err, AR_ENOMEM, "cuda backend: out of memory");
    gp->deps = n;
    gp->deps[gp->ndeps++] = (ar__dep_t){ci, prod};
    return AR_OK;
}

/* The products each executor stage of GPU slot gi waits for. Split in stages, a stage's
 * blocks all begin with a WAIT for products (ar_plan_stages): each waits for the products
 * whose SIGNALs meet that WAIT, made on its GPU. In one stage, it waits for every first product
 * of the GPU where it only starts after them (ar_plan_products_first_alone). */
static int stage_deps(ar__cuda_t *be, const ar_plan_t *p, int gi, ar_error_t *err) {
    const int g = be->used[gi];
    if (be->nstages == 1) {
        if (!ar_plan_products_first_alone(p, be->rank_gpu, g)) return AR_OK;
        for (int ci = 0; ci < be->ncchan; ci++)
            if (be->cchan[ci].gpu == g && be->cchan[ci].nprod) AR_TRY(add_dep(&be->g[gi][0], ci, 0, err));
        return AR_OK;
    }
    for (int k = 0; k < be->nstages; k++) {
        ar__gpu_plan_t *gp = &be->g[gi][k];
        for (int b = 0; b < gp->nblocks; b++) {
            const ar__block_of_t *o = &gp->of[b];
            const ar_op_t *w = &p->ops[ar_plan_chan(p, o->rank, o->chan)->first + o->from];
            for (int ci = 0; ci < be->ncchan; ci++) {
                if (be->cchan[ci].gpu != g) continue;
                const ar_chan_t *ch = ar_plan_chan(p, be->cchan[ci].rank, be->cchan[ci].chan);
                int made = 0;
                for (uint32_t i = 0; i < ch->nops; i++) {
                    const ar_op_t *op = &p->ops[ch->first + i];
                    made += op->code == AR_OP_COMPUTE;
                    if (op->code == AR_OP_SIGNAL && op->dst.rank == o->rank && op->flag == w->flag && made)
                        AR_TRY(add_dep(gp, ci, made - 1, err));
                }
            }
        }
    }
    return AR_OK;
}

int ar__gemm_prepare(ar__cuda_t *be, const ar_plan_t *p, uint32_t nflags, ar_error_t *err) {
    int n = 0;
    for (int i = 0; i < p->nranks * p->nchannels; i++) n += p->chans[i].computes != 0;
    if (!n) return AR_OK;
    be->cchan = calloc((size_t)n, sizeof *be->cchan);
    if (!be->cchan) return AR_ERR(err, AR_ENOMEM, "cuda backend: out of memory");
    /* every channel's GPU and products first: each product's SM target counts them */
    for (int r = 0; r < p->nranks; r++)
        for (int c = 0; c < p->nchannels; c++) {
            const ar_chan_t *ch = ar_plan_chan(p, r, c);
            if (!ch->computes) continue;
            ar__cchan_t *cc = &be->cchan[be->ncchan++];
            *cc = (ar__cchan_t){.rank = r, .chan = c, .gpu = be->rank_gpu[r]};
            for (uint32_t i = 0; i < ch->nops; i++) cc->nprod += p->ops[ch->first + i].code == AR_OP_COMPUTE;
        }
    for (int gi = 0; gi < be->nused; gi++) AR_TRY(stage_deps(be, p, gi, err));
    for (int i = 0; i < be->ncchan; i++) AR_TRY(chan_lower(be, p, nflags, i, err));
    return AR_OK;
}

void ar__gemm_free(ar__cuda_t *be) {
    for (int i = 0; i < be->ncchan; i++) {
        ar__cchan_t *cc = &be->cchan[i];
        cudaSetDevice(cc->gpu);
        for (int s = 0; cc->seg && s <= cc->nprod; s++) ar__cuda_plan_free(&cc->seg[s]);
        for (int s = 0; cc->prod && s < cc->nprod; s++) ar__gemm_destroy(&cc->prod[s]);
        if (cc->stream) cudaStreamDestroy(cc->stream);
        if (cc->done) cudaEventDestroy(cc->done);
        for (int s = 0; cc->made && s < cc->nprod; s++)
            if (cc->made[s]) cudaEventDestroy(cc->made[s]);
        if (cc->ws) cudaFree(cc->ws);
        free(cc->seg);
        free(cc->prod);
        free(cc->made);
    }
    free(be->cchan);
    be->cchan = NULL;
    be->ncchan = 0;
}

void ar__gemm_close(ar__cuda_t *be) {
    for (int g = 0; g < AR__MAX_GPUS; g++) {
        if (!be->lt[g]) continue;
        cudaSetDevice(g);
        lt.cublasLtDestroy(be->lt[g]);
        cudaFree(be->lt_ws[g]);
        if (be->ev_cfork[g]) cudaEventDestroy(be->ev_cfork[g]);
        be->lt[g] = NULL;
    }
}

int ar__gemm_fork(ar__cuda_t *be, int g, ar_error_t *err) {
    int any = 0;
    for (int i = 0; i < be->ncchan; i++) any |= be->cchan[i].gpu == g;
    if (!any) return AR_OK;
    AR__CU(cudaEventRecord(be->ev_cfork[g], be->stream[g]), "recording an event");
    for (int i = 0; i < be->ncchan; i++)
        if (be->cchan[i].gpu == g) AR__CU(cudaStreamWaitEvent(be->cchan[i].stream, be->ev_cfork[g], 0), "ordering streams");
    return AR_OK;
}

int ar__gemm_enqueue(ar__cuda_t *be, int g, ar_dtype_t dtype, double timeout_s, ar_error_t *err) {
    for (int i = 0; i < be->ncchan; i++) {
        ar__cchan_t *cc = &be->cchan[i];
        if (cc->gpu != g) continue;
        for (int s = 0; s <= cc->nprod; s++) {
            if (cc->seg[s].nblocks) {
                ar__kargs_t k = ar__cuda_plan_kargs(be, &cc->seg[s], timeout_s);
                AR__CU((cudaError_t)ar__exec_launch(&k, (int)dtype, cc->stream), "launching a channel's flags");
            }
            if (s == cc->nprod) break;
            AR_TRY(ar__gemm_launch(be, g, &cc->prod[s], cc->stream, err));
            AR__CU(cudaEventRecord(cc->made[s], cc->stream), "recording an event");
        }
        AR__CU(cudaEventRecord(cc->done, cc->stream), "recording an event");
    }
    return AR_OK;
}

int ar__gemm_wait_deps(ar__cuda_t *be, int g, const ar__gpu_plan_t *gp, ar_error_t *err) {
    for (int d = 0; d < gp->ndeps; d++)
        AR__CU(cudaStreamWaitEvent(be->stream[g], be->cchan[gp->deps[d].cc].made[gp->deps[d].prod], 0),
               "ordering streams");
    return AR_OK;
}

int ar__gemm_join(ar__cuda_t *be, int g, ar_error_t *err) {
    for (int i = 0; i < be->ncchan; i++)
        if (be->cchan[i].gpu == g) AR__CU(cudaStreamWaitEvent(be->stream[g], be->cchan[i].done, 0), "ordering streams");
    return AR_OK;
}
