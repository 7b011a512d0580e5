/* hw: `arsim bench --backend cuda`.
 *
 * For every size: every requested plan is built, prepared, given random inputs,
 * optionally checked once against the float64 reference, then timed: `iters`
 * executions are captured into one CUDA graph per GPU (so launch cost is the
 * graph's), the graphs are launched once to warm up, then `repeats` times
 * between events on the first GPU's stream (the other GPUs forked from and
 * joined to it); the median launch over iters is one allreduce. NCCL's
 * ncclAllReduce runs the same way on the same IN buffers, one communicator per
 * GPU from ncclCommInitAll, with NVLink multicast (NVLS) off. libnccl is opened
 * with dlopen, so arsim builds and runs where NCCL is absent. */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include "validate/bench.h"
#include "validate/calib.h"
#include "hw/cuda.h"
#include "arsim/algo.h"
#include "arsim/case.h"

/* The few NCCL entry points used, declared here (ABI of nccl.h 2.x) so no
 * header is needed at build time. */
typedef struct nccl_comm *nccl_comm_t;
enum { NCCL_SUM = 0, NCCL_FLOAT16 = 6, NCCL_FLOAT32 = 7, NCCL_BFLOAT16 = 9 };
typedef struct nccl_s {
    void *lib;
    int version;
    int (*comm_init_all)(nccl_comm_t *, int, const int *);
    int (*comm_destroy)(nccl_comm_t);
    int (*all_reduce)(const void *, void *, size_t, int, int, nccl_comm_t, cudaStream_t);
    int (*reduce_scatter)(const void *, void *, size_t, int, int, nccl_comm_t, cudaStream_t);
    int (*all_gather)(const void *, void *, size_t, int, nccl_comm_t, cudaStream_t);
    int (*group_start)(void);
    int (*group_end)(void);
    const char *(*error_string)(int);
    int (*get_version)(int *);
    nccl_comm_t comm[AR__MAX_GPUS];
    int ncomm;
    void *out[AR__MAX_GPUS];
    size_t out_cap[AR__MAX_GPUS];
} nccl_t;

static int nccl_open(nccl_t *n, const ar__cuda_t *be, char *why, size_t len) {
    memset(n, 0, sizeof *n);
    /* Never NVLink multicast on these machines. */
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    const char *names[] = {"libnccl.so.2", "libnccl.so", NULL};
    for (int i = 0; names[i] && !n->lib; i++) n->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        snprintf(why, len, "libnccl not found (%s)", dlerror());
        return -1;
    }
#define SYM(field, name)                                                  \
    do {                                                                  \
        *(void **)&n->field = dlsym(n->lib, name);                        \
        if (!n->field) {                                                  \
            snprintf(why, len, "libnccl lacks %s", name);                 \
            return -1;                                                    \
        }                                                                 \
    } while (0)
    SYM(comm_init_all, "ncclCommInitAll");
    SYM(comm_destroy, "ncclCommDestroy");
    SYM(all_reduce, "ncclAllReduce");
    SYM(reduce_scatter, "ncclReduceScatter");
    SYM(all_gather, "ncclAllGather");
    SYM(group_start, "ncclGroupStart");
    SYM(group_end, "ncclGroupEnd");
    SYM(error_string, "ncclGetErrorString");
    SYM(get_version, "ncclGetVersion");
#undef SYM
    n->get_version(&n->version);
    int devs[AR__MAX_GPUS];
    for (int r = 0; r < be->nranks; r++) devs[r] = be->rank_gpu[r];
    int rc = n->comm_init_all(n->comm, be->nranks, devs);
    if (rc) {
        snprintf(why, len, "ncclCommInitAll: %s", n->error_string(rc));
        return -1;
    }
    n->ncomm = be->nranks;
    return 0;
}

static void nccl_close(nccl_t *n) {
    for (int i = 0; i < n->ncomm; i++) n->comm_destroy(n->comm[i]);
    for (int i = 0; i < AR__MAX_GPUS; i++)
        if (n->out[i]) cudaFree(n->out[i]);
    if (n->lib) dlclose(n->lib);
    memset(n, 0, sizeof *n);
}

/* One iteration of work on every used GPU, enqueued on be->stream[]. */
typedef int (*body_fn)(ar__cuda_t *be, void *ctx, ar_error_t *err);

typedef struct plan_ctx_s {
    const ar_plan_t *plan;
    double timeout_s;
} plan_ctx_t;

static int plan_body(ar__cuda_t *be, void *ctx, ar_error_t *err) {
    plan_ctx_t *pc = ctx;
    return ar__cuda_launch(be, pc->plan, pc->timeout_s, err);
}

/* A fused op unfused: each rank's product by cuBLASLt (prod), then NCCL's collective of it
 * (matmul-allreduce: ncclAllReduce), or NCCL's first (allgather-matmul: ncclAllGather of A,
 * then the product of the gathered rows); or either alone. */
typedef struct unfused_ctx_s {
    struct nccl_ctx_s *nc;
    ar__gemm_t *prod;         /* per rank */
    int products, collective; /* which parts run */
    int gather_first;
} unfused_ctx_t;
static int nccl_body(ar__cuda_t *be, void *ctx, ar_error_t *err);
static int unfused_body(ar__cuda_t *be, void *ctx, ar_error_t *err) {
    unfused_ctx_t *u = ctx;
    if (u->collective && u->gather_first) AR_TRY(nccl_body(be, u->nc, err));
    for (int r = 0; u->products && r < be->nranks; r++) {
        const int g = be->rank_gpu[r];
        cudaSetDevice(g);
        AR_TRY(ar__gemm_launch(be, g, &u->prod[r], be->stream[g], err));
    }
    return u->collective && !u->gather_first ? nccl_body(be, u->nc, err) : AR_OK;
}

typedef struct nccl_ctx_s {
    nccl_t *n;
    uint64_t count;
    int dtype;
    size_t es;
    ar_coll_t coll;
    void **in;  /* per rank, NULL: IN */
} nccl_ctx_t;

/* NCCL's collective in our layout (arsim/plan.h): rank r's shard at its offset of IN
 * (all-gather) or OUT (reduce-scatter); the shards equal (count a multiple of the ranks). */
static int nccl_body(ar__cuda_t *be, void *ctx, ar_error_t *err) {
    nccl_ctx_t *nc = ctx;
    nccl_t *n = nc->n;
    const uint64_t shard = nc->count / (uint64_t)be->nranks;
    static const char *const names[AR_NCOLL] = {"ncclAllReduce", "ncclReduceScatter", "ncclAllGather", "ncclAllReduce",
                                                "ncclAllGather"};
    n->group_start();
    for (int r = 0; r < be->nranks; r++) {
        int g = be->rank_gpu[r];
        cudaSetDevice(g);
        char *in = nc->in ? nc->in[r] : be->buf[AR_BUF_IN][r], *out = n->out[r];
        const size_t at = (size_t)r * shard * nc->es;
        int rc = nc->coll == AR_COLL_REDUCESCATTER
                     ? n->reduce_scatter(in, out + at, shard, nc->dtype, NCCL_SUM, n->comm[r], be->stream[g])
                 : nc->coll == AR_COLL_ALLGATHER
                     ? n->all_gather(in + at, out, shard, nc->dtype, n->comm[r], be->stream[g])
                     : n->all_reduce(in, out, nc->count, nc->dtype, NCCL_SUM, n->comm[r], be->stream[g]);
        if (rc) {
            n->group_end();
            return AR_ERR(err, AR_EDEVICE, "%s: %s", names[nc->coll], n->error_string(rc));
        }
    }
    int rc = n->group_end();
    if (rc) return AR_ERR(err, AR_EDEVICE, "ncclGroupEnd: %s", n->error_string(rc));
    return AR_OK;
}

static int sync_all(ar__cuda_t *be, ar_error_t *err) {
    for (int i = 0; i < be->nused; i++) {
        cudaSetDevice(be->used[i]);
        AR__CU(cudaStreamSynchronize(be->stream[be->used[i]]), "waiting for the GPUs");
    }
    if (*be->abort_word) return AR_ERR(err, AR_ETIMEOUT, "a WAIT was not met within the timeout");
    return AR_OK;
}

int ar_hw_bench_available(ar_error_t *err) {
    (void)err;
    return AR_OK;
}

int ar_hw_gpu_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
    return n;
}


static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Capture iters iterations into one graph per GPU, warm up, time repeats
 * launches; the median per-iteration time in *out_s. */
static int time_graphs(ar__cuda_t *be, body_fn body, void *ctx, int iters, int repeats, double *out_s,
                       ar_error_t *err) {
    cudaGraph_t graph[AR__MAX_GPUS] = {0};
    cudaGraphExec_t exec[AR__MAX_GPUS] = {0};
    double *t = calloc((size_t)repeats, sizeof *t);
    int rc = AR_OK;
    if (!t) return AR_ERR(err, AR_ENOMEM, "out of memory");
    for (int i = 0; i < be->nused; i++) {
        cudaSetDevice(be->used[i]);
        cudaError_t ce = cudaStreamBeginCapture(be->stream[be->used[i]], cudaStreamCaptureModeGlobal);
        if (ce != cudaSuccess) {
            rc = ar__cuda_fail(err, ce, "starting graph capture");
            goto out;
        }
    }
    for (int it = 0; it < iters && rc == AR_OK; it++) rc = body(be, ctx, err);
    for (int i = 0; i < be->nused; i++) {
        cudaSetDevice(be->used[i]);
        cudaError_t ce = cudaStreamEndCapture(be->stream[be->used[i]], &graph[i]);
        if (ce != cudaSuccess && rc == AR_OK) rc = ar__cuda_fail(err, ce, "ending graph capture");
    }
    if (rc != AR_OK) goto out;
    for (int i = 0; i < be->nused; i++) {
        cudaSetDevice(be->used[i]);
        cudaError_t ce = cudaGraphInstantiate(&exec[i], graph[i], 0);
        if (ce != cudaSuccess) {
            rc = ar__cuda_fail(err, ce, "instantiating the graph");
            goto out;
        }
    }
    const int g0 = be->used[0];
    for (int rep = -1; rep < repeats; rep++) { /* rep -1: warm-up */
        cudaSetDevice(g0);
        cudaEventRecord(be->ev_start, be->stream[g0]);
        cudaEventRecord(be->ev_fork, be->stream[g0]);
        for (int i = 0; i < be->nused; i++) {
            const int g = be->used[i];
            cudaSetDevice(g);
            if (i) cudaStreamWaitEvent(be->stream[g], be->ev_fork, 0);
            cudaError_t ce = cudaGraphLaunch(exec[i], be->stream[g]);
            if (ce != cudaSuccess) {
                rc = ar__cuda_fail(err, ce, "launching the graph");
                goto out;
            }
            if (i) {
                cudaEventRecord(be->ev_join[g], be->stream[g]);
                cudaSetDevice(g0);
                cudaStreamWaitEvent(be->stream[g0], be->ev_join[g], 0);
            }
        }
        cudaSetDevice(g0);
        cudaEventRecord(be->ev_end, be->stream[g0]);
        AR_TRY_GOTO(sync_all(be, err), rc, out);
        float ms = 0;
        cudaSetDevice(g0);
        cudaError_t ce = cudaEventElapsedTime(&ms, be->ev_start, be->ev_end);
        if (ce != cudaSuccess) {
            rc = ar__cuda_fail(err, ce, "reading the timer");
            goto out;
        }
        if (rep >= 0) t[rep] = ms * 1e-3 / iters;
    }
    qsort(t, (size_t)repeats, sizeof *t, cmp_double);
    *out_s = repeats % 2 ? t[repeats / 2] : 0.5 * (t[repeats / 2 - 1] + t[repeats / 2]);
out:
    for (int i = 0; i < be->nused; i++) {
        cudaSetDevice(be->used[i]);
        if (exec[i]) cudaGraphExecDestroy(exec[i]);
        if (graph[i]) cudaGraphDestroy(graph[i]);
    }
    free(t);
    return rc;
}

/* An algorithm at its defaults: the channels and chunk the model predicts fastest, as run
 * and sweep give them (a NAME:Nslot variant keeps the algorithm's own); *chunk asked stays. */
static void model_defaults(const ar_topo_t *topo, const char *name, const ar_algo_opts_t *asked, uint64_t count,
                           ar_dtype_t dt, int *channels, uint64_t *chunk, int *partitions) {
    ar_algo_opts_t def = *asked, got;
    def.chunk_bytes = *chunk;
    ar_error_t e;
    ar_error_clear(&e);
    if (ar_case_defaults(topo, name, count, dt, &def, AR_MEM_HBM, "cuda", &got, NULL, &e) == AR_OK)
        *channels = got.channels, *chunk = got.chunk_bytes, *partitions = got.partitions;
}

/* NAME or NAME:Nslot (1stage with N SCRATCH slots by execution parity, for the
 * sweeps that choose between them). */
static int build_plan(const char *name, const ar_topo_t *topo, const ar_algo_opts_t *asked, uint64_t count,
                      ar_dtype_t dt, int channels, uint64_t chunk_bytes, int partitions, ar_plan_t **plan, ar_error_t *err) {
    ar_algo_opts_t ao = *asked;
    ao.partitions = partitions;
    ao.channels = channels;
    ao.chunk_bytes = chunk_bytes;
    char base[64];
    snprintf(base, sizeof base, "%s", name);
    char *colon = strchr(base, ':');
    if (colon) {
        *colon = 0;
        if (sscanf(colon + 1, "%dslot", &ao.slots) != 1 || ao.slots < 1)
            return AR_ERR(err, AR_EINVAL, "bench: '%s': want NAME:Nslot", name);
    }
    return ar_algo_build(base, topo, count, dt, &ao, plan, err);
}

/* --check compares on the host against a float64 sum regenerated element by
 * element; past this size it would take longer than the timing. */
#define CHECK_MAX_BYTES ((uint64_t)64 << 20)
/* ... and a product's reference past this many multiply-adds */
#define CHECK_MAX_MACS 4e9

typedef struct row_s {
    char algo[64];
    int channels, root, partitions;
    uint64_t chunk_bytes;
    double time_s;
    int wrong;   /* -1: not checked */
} row_t;

/* body's time per execution into *out_s: a first estimate (a graph of two executions, once),
 * then graphs of as many executions and repeats as that estimate calls for (o's where given). */
static int time_body(ar__cuda_t *be, body_fn body, void *ctx, const ar_hw_bench_opts_t *o, double *out_s,
                     ar_error_t *err) {
    double est = 0;
    AR_TRY(time_graphs(be, body, ctx, 2, 1, &est, err));
    const int iters = o->iters > 0 ? o->iters : (int)fmin(200, fmax(2, 4e-3 / fmax(est, 1e-7)));
    const int repeats = o->repeats > 0 ? o->repeats : est < 1e-4 ? 15 : est < 1e-3 ? 9 : 5;
    return time_graphs(be, body, ctx, iters, repeats, out_s, err);
}

/* Each rank's product of a fused op by cuBLASLt into a buffer of its own (prod_out), m x K of A
 * from IN, or from gathered[r] where given (NCCL's gathered rows), times its B from IN after A. */
static int products_make(ar__cuda_t *be, const ar_hw_bench_opts_t *o, uint64_t count, void *const *gathered,
                         void **prod_out, ar__gemm_t *prod, ar_error_t *err) {
    const uint64_t m = count / o->gemm_n;
    const size_t es = ar_dtype_size(o->dtype);
    for (int r = 0; r < be->nranks; r++) {
        const int g = be->rank_gpu[r];
        cudaSetDevice(g);
        cudaError_t ce = cudaMalloc(&prod_out[r], count * es);
        if (ce != cudaSuccess) return ar__cuda_fail(err, ce, "allocating the products");
        const char *in = be->buf[AR_BUF_IN][r], *a = gathered ? (const char *)gathered[r] : in;
        AR_TRY(ar__gemm_make(be, g, o->dtype, m, o->gemm_n, o->gemm_k, a, in + m * o->gemm_k * es, prod_out[r], 0, 0,
                             NULL, &prod[r], err));
    }
    return AR_OK;
}

static void products_free(ar__cuda_t *be, void **prod_out, ar__gemm_t *prod) {
    for (int r = 0; r < be->nranks; r++) {
        cudaSetDevice(be->rank_gpu[r]);
        ar__gemm_destroy(&prod[r]);
        if (prod_out[r]) cudaFree(prod_out[r]);
    }
}

static void note(const ar_bench_sink_t *sink, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const ar_bench_sink_t *sink, const char *fmt, ...) {
    if (!sink->note) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    sink->note(line, sink->ctx);
}

/* Where NCCL does not run (ranks that share a GPU, or --no-nccl), a matmul-allreduce's two parts
 * alone on our side, as a note: each rank's product by cuBLASLt, one after another on its GPU's
 * stream as they would run unfused, and the allreduce of the product's size at the runner's
 * choice (auto) alone. The larger of the two is the fused op's floor, their sum the time of the
 * two unfused. */
static int time_parts_alone(ar__cuda_t *be, const ar_topo_t *topo, const ar_hw_bench_opts_t *o, uint64_t count,
                            const ar_run_opts_t *ro, double timeout_s, uint64_t seed, const ar_bench_sink_t *sink,
                            ar_error_t *err) {
    const uint64_t m = count / o->gemm_n;
    void *prod_out[64] = {0};
    ar__gemm_t prod[64];
    memset(prod, 0, sizeof prod);
    double prod_s = NAN, coll_s = NAN;
    unfused_ctx_t u = {NULL, prod, 1, 0, 0};
    int rc = products_make(be, o, count, NULL, prod_out, prod, err);
    if (rc == AR_OK) rc = time_body(be, unfused_body, &u, o, &prod_s, err);
    products_free(be, prod_out, prod);
    if (rc != AR_OK) return rc;
    ar_algo_opts_t asked = AR_ALGO_OPTS_DEFAULT, got;
    asked.coll = AR_COLL_ALLREDUCE;
    const ar_case_t cc = {.backend = "cuda", .topo = topo, .topology = topo->name, .algo = "auto", .count = count,
                          .dtype = o->dtype, .algo_opts = asked, .run = *ro};
    const char *algo = NULL;
    ar_plan_t *plan = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    int brc = ar_case_choose(&cc, &algo, &got, &e);
    if (brc == AR_OK) brc = build_plan(algo, topo, &asked, count, o->dtype, got.channels, got.chunk_bytes, 0, &plan, &e);
    if (brc == AR_OK) brc = ar__cuda_prepare(be, plan, ro, &e);
    if (brc == AR_OK) brc = ar__cuda_fill_inputs(be, plan, seed, &e);
    if (brc == AR_OK) brc = ar__cuda_enqueue(be, plan, timeout_s, &e);
    if (brc == AR_OK) brc = ar__cuda_sync(be, plan, timeout_s, &e);
    plan_ctx_t pc = {plan, timeout_s};
    if (brc == AR_OK) brc = time_body(be, plan_body, &pc, o, &coll_s, &e);
    const int channels = plan ? plan->nchannels : 0;
    ar_plan_free(plan);
    be->plan = NULL;
    if (brc != AR_OK) {
        char msg[300];
        note(sink, "%" PRIu64 " x %" PRIu64 " x %" PRIu64 ": the products alone %.2f us; the allreduce alone: %s", m,
             o->gemm_n, o->gemm_k, prod_s * 1e6, ar_error_format(&e, msg, sizeof msg));
        if (brc == AR_EDEVICE || brc == AR_ETIMEOUT) *err = e;
        return brc == AR_EDEVICE || brc == AR_ETIMEOUT ? brc : AR_OK;
    }
    note(sink,
         "%" PRIu64 " x %" PRIu64 " x %" PRIu64 ": the products alone %.2f us (%d ranks, each GPU's one after another), "
         "the allreduce alone %.2f us (auto:%s/%d)",
         m, o->gemm_n, o->gemm_k, prod_s * 1e6, be->nranks, coll_s * 1e6, algo, channels);
    return AR_OK;
}

/* A fused op unfused, on the same inputs: matmul-allreduce, each rank's product by cuBLASLt
 * into a buffer of its own, then ncclAllReduce of it; allgather-matmul, ncclAllGather of A's
 * rows into NCCL's output, then each rank's product of them by its B (the row's NCCL time);
 * and each of the two alone (a note). */
static int time_unfused(ar__cuda_t *be, nccl_ctx_t *nc, const ar_hw_bench_opts_t *o, uint64_t count,
                        const ar_bench_sink_t *sink, double *unfused_s, ar_error_t *err) {
    const uint64_t m = count / o->gemm_n;
    const int gather = o->coll == AR_COLL_ALLGATHER_MATMUL;
    const char *cname = gather ? "ncclAllGather" : "ncclAllReduce";
    void *prod_out[64] = {0};
    ar__gemm_t prod[64];
    memset(prod, 0, sizeof prod);
    int rc = products_make(be, o, count, gather ? nc->n->out : NULL, prod_out, prod, err);
    if (!gather) nc->in = prod_out;
    /* once eagerly: NCCL connects its peers on a first collective, which a graph capture
     * cannot hold */
    unfused_ctx_t first = {nc, prod, 1, 1, gather};
    if (rc == AR_OK) rc = unfused_body(be, &first, err);
    if (rc == AR_OK) rc = sync_all(be, err);
    double alone[2] = {NAN, NAN};
    for (int part = 0; part < 3 && rc == AR_OK; part++) {
        unfused_ctx_t u = {nc, prod, part != 2, part != 1, gather};
        rc = time_body(be, unfused_body, &u, o, part ? &alone[part - 1] : unfused_s, err);
    }
    if (rc == AR_OK)
        note(sink, "%" PRIu64 " x %" PRIu64 " x %" PRIu64 ": %s %.2f us, the product alone %.2f us, %s alone %.2f us", m,
             o->gemm_n, o->gemm_k, gather ? "ncclAllGather + cuBLASLt" : "cuBLASLt + ncclAllReduce", *unfused_s * 1e6,
             alone[0] * 1e6, cname, alone[1] * 1e6);
    nc->in = NULL;
    products_free(be, prod_out, prod);
    return rc;
}

int ar_hw_bench(const ar_topo_t *topo, const ar_hw_bench_opts_t *o, const ar_bench_sink_t *sink, int *wrong,
                ar_error_t *err) {
    ar_backend_t *b = NULL;
    AR_TRY(ar_cuda_backend.open(topo, &b, err));
    ar__cuda_t *be = (ar__cuda_t *)b;
    *wrong = 0;
    int rc = AR_OK;
    const double timeout_s = o->timeout_s > 0 ? o->timeout_s : 5.0;
    ar_run_opts_t ro = AR_RUN_OPTS_DEFAULT;
    ro.force_host = o->force_host;
    ro.timeout_s = timeout_s;
    const int p2p = be->p2p && !o->force_host;

    nccl_t nccl;
    memset(&nccl, 0, sizeof nccl);
    char nccl_why[256] = "";
    int have_nccl = 0;
    if (o->nccl) {
        int distinct = be->nused == be->nranks;
        if (!distinct) snprintf(nccl_why, sizeof nccl_why, "NCCL runs one rank per GPU (%d ranks on %d GPUs)",
                                be->nranks, be->nused);
        else have_nccl = nccl_open(&nccl, be, nccl_why, sizeof nccl_why) == 0;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, be->used[0]);
    /* What the rows ran on, recorded in each: the NVLink links up on every GPU used. */
    char links[16] = "unknown";
    const int up = ar_calib_nvlinks(be->used, be->nused);
    if (up >= 0) snprintf(links, sizeof links, "NV%d", up);
    note(sink, "arsim bench: backend cuda, %d ranks on %d GPU%s (%s, %s), peer access %s%s", be->nranks, be->nused,
         be->nused == 1 ? "" : "s", prop.name, links, p2p ? "on" : "off",
         !be->p2p ? " (unavailable)" : o->force_host ? " (host staging forced)" : "");
    if (o->nccl) {
        if (have_nccl)
            note(sink, "NCCL %d.%d.%d beside it (ncclCommInitAll, NCCL_NVLS_ENABLE=0)", nccl.version / 10000,
                 nccl.version / 100 % 100, nccl.version % 100);
        else
            note(sink, "NCCL: not run: %s", nccl_why);
    }
    const int fused = ar_coll_fused(o->coll);
    note(sink, "%s; time: CUDA graph of many executions per GPU, median of repeats; busbw = algbw * %s", ar_coll_name(o->coll),
         ar_coll_inner(o->coll) == AR_COLL_ALLREDUCE ? "2(p-1)/p" : "(p-1)/p");
    if (fused)
        note(sink, "%s: N = %" PRIu64 ", K = %" PRIu64 ", the size M x N; NCCL's column: %s", ar_coll_name(o->coll),
             o->gemm_n, o->gemm_k,
             o->coll == AR_COLL_ALLGATHER_MATMUL ? "ncclAllGather of A's rows, then cuBLASLt's product"
                                                 : "cuBLASLt's product, then ncclAllReduce");

    /* The algorithm list. */
    char list[1024];
    if (!strcmp(o->algos, "all")) {
        list[0] = 0;
        const ar_algo_t *const *all = ar_algo_all();
        for (int i = 0; all && all[i]; i++) {
            if (!strcmp(all[i]->name, "naive") && p2p) continue; /* the no-P2P fallback */
            if (!ar_algo_computes(all[i], o->coll)) continue;
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? "," : "", all[i]->name);
        }
    } else {
        snprintf(list, sizeof list, "%s", o->algos);
    }

    const size_t es = ar_dtype_size(o->dtype);
    for (int si = 0; si < o->nsizes && rc == AR_OK; si++) {
        const uint64_t bytes = o->sizes[si];
        const uint64_t count = bytes / es ? bytes / es : 1;
        /* a fused op's product at this size: M x N is the size */
        const ar_gemm_t gemm = fused ? (ar_gemm_t){count / o->gemm_n, o->gemm_n, o->gemm_k} : (ar_gemm_t){0, 0, 0};
        row_t rows[32];
        int nrows = 0;
        const uint64_t seed = ar_gen_mix64(0xa5a5 + bytes);
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "%s", list);
        for (char *save = NULL, *name = strtok_r(tmp, ",", &save); name && nrows < 32 && rc == AR_OK;
             name = strtok_r(NULL, ",", &save)) {
            const char *algo = name;
            int channels = o->channels, partitions = o->partitions;
            uint64_t chunk = o->chunk_bytes;
            char label[64];
            ar_algo_opts_t asked = AR_ALGO_OPTS_DEFAULT;
            asked.coll = o->coll;
            asked.channels = o->channels;
            asked.chunk_bytes = o->chunk_bytes;
            asked.partitions = o->partitions;
            asked.gemm = gemm;
            if (!strcmp(name, "auto") && (fused || be->nranks > be->nused)) {
                /* the runner's choice, as run and sweep make it, on this backend: for a fused op,
                 * and where ranks share a GPU, which the table below was not measured with (one
                 * H200 with 2, 4 and 8 ranks, 64 KB-256 MB: the table's choice took up to 1.86x
                 * the best named algorithm's time, the model's up to 1.14x; docs/PERFORMANCE.md) */
                const ar_case_t cc = {.backend = "cuda", .topo = topo, .topology = topo->name, .algo = name,
                                      .count = count, .dtype = o->dtype, .algo_opts = asked, .run = ro};
                ar_algo_opts_t got;
                ar_error_t ce;
                ar_error_clear(&ce);
                if (ar_case_choose(&cc, &algo, &got, &ce) != AR_OK) {
                    char msg[300];
                    note(sink, "auto at %" PRIu64 " bytes: skipped: %s", bytes, ar_error_format(&ce, msg, sizeof msg));
                    continue;
                }
                channels = got.channels, chunk = got.chunk_bytes, partitions = got.partitions;
                snprintf(label, sizeof label, "auto:%s/%d", algo, channels);
            } else if (!strcmp(name, "auto")) {
                int ach = 0;
                if (o->coll == AR_COLL_ALLREDUCE) ar_algo_auto(be->nranks, be->nused, bytes, p2p, &algo, &ach);
                else algo = "direct"; /* every GPU pair linked: each shard crosses once, at once */
                if (!channels && ach) channels = ach;
                else if (!channels) model_defaults(topo, algo, &asked, count, o->dtype, &channels, &chunk, &partitions);
                snprintf(label, sizeof label, "auto:%s/%d", algo, channels);
            } else if (channels && !fused) {
                snprintf(label, sizeof label, "%s/%d", name, channels);
            } else {
                model_defaults(topo, name, &asked, count, o->dtype, &channels, &chunk, &partitions);
                snprintf(label, sizeof label, o->channels ? "%s/%d" : "%s", name, channels);
            }
            ar_plan_t *plan = NULL;
            ar_error_t e;
            ar_error_clear(&e);
            int brc = build_plan(algo, topo, &asked, count, o->dtype, channels, chunk, partitions, &plan, &e);
            if (brc == AR_OK) brc = ar__cuda_prepare(be, plan, &ro, &e);
            if (brc != AR_OK) {
                char msg[300];
                note(sink, "%s at %" PRIu64 " bytes: skipped: %s", label, bytes, ar_error_format(&e, msg, sizeof msg));
                ar_plan_free(plan);
                if (brc == AR_EDEVICE) {
                    *err = e;
                    rc = brc;
                }
                continue;
            }
            row_t *row = &rows[nrows++];
            snprintf(row->algo, sizeof row->algo, "%s", label);
            row->channels = fused ? plan->nchannels - 1 : plan->nchannels;
            row->partitions = plan->partitions;
            row->root = plan->root;
            row->chunk_bytes = ar_plan_chunk_bytes(plan);
            row->wrong = -1;
            rc = ar__cuda_fill_inputs(be, plan, seed, err);
            /* One eager run: a check and a first estimate for the iteration count. */
            /* a product's reference costs M x N x K x ranks on the host: small ones only */
            const int check = o->check && bytes <= CHECK_MAX_BYTES &&
                              (!fused || (double)count * o->gemm_k * be->nranks * be->nranks <= CHECK_MAX_MACS);
            if (rc == AR_OK && check) rc = ar__cuda_poison(be, plan, err);
            if (rc == AR_OK) rc = ar__cuda_enqueue(be, plan, timeout_s, err);
            if (rc == AR_OK) rc = ar__cuda_sync(be, plan, timeout_s, err);
            if (rc == AR_OK && check) {
                ar_result_t res;
                memset(&res, 0, sizeof res);
                rc = ar__cuda_check(be, plan, seed, &res, err);
                row->wrong = res.check_ok ? 0 : 1;
                if (!res.check_ok) {
                    note(sink, "%s at %" PRIu64 " bytes: WRONG: %s", label, bytes, res.check_msg);
                    ++*wrong;
                }
            }
            if (rc == AR_OK) {
                plan_ctx_t pc = {plan, timeout_s};
                rc = time_body(be, plan_body, &pc, o, &row->time_s, err);
                if (rc == AR_OK) rc = ar__cuda_write_timeline(be, plan, err);
            }
            if (rc == AR_ETIMEOUT) { /* report, reset, go on */
                char msg[300];
                note(sink, "%s at %" PRIu64 " bytes: %s", label, bytes, ar_error_format(err, msg, sizeof msg));
                nrows--;
                ar_error_t e2;
                be->plan = NULL;
                *be->abort_word = 0;
                rc = ar__cuda_prepare(be, plan, &ro, &e2) == AR_OK ? AR_OK : AR_EDEVICE;
            }
            ar_plan_free(plan);
            be->plan = NULL; /* the plan is gone; buffers stay (IN still holds this size's data) */
        }
        if (rc != AR_OK) break;

        double nccl_s = NAN;
        /* NCCL's collective: of the vector, or of a fused op's (its product's allreduce, the
         * all-gather of A's M x K) */
        const ar_coll_t ncoll = ar_coll_inner(o->coll);
        const uint64_t ncount = o->coll == AR_COLL_ALLGATHER_MATMUL ? gemm.m * gemm.k : count;
        const int nccl_fits = ncoll == AR_COLL_ALLREDUCE || ncount % (uint64_t)be->nranks == 0;
        if (have_nccl && nrows && !nccl_fits)
            note(sink, "NCCL at %" PRIu64 " bytes: not run: its %s takes equal shards, %" PRIu64 " elements on %d ranks",
                 bytes, ar_coll_name(ncoll), ncount, be->nranks);
        if (have_nccl && nrows && nccl_fits) {
            nccl_ctx_t nc = {&nccl, ncount, o->dtype == AR_BF16 ? NCCL_BFLOAT16 : o->dtype == AR_FP16 ? NCCL_FLOAT16 : NCCL_FLOAT32,
                             es, ncoll, NULL};
            for (int r = 0; r < be->nranks && rc == AR_OK; r++) {
                if (nccl.out_cap[r] < ncount * es) {
                    cudaSetDevice(be->rank_gpu[r]);
                    if (nccl.out[r]) cudaFree(nccl.out[r]);
                    nccl.out[r] = NULL;
                    cudaError_t ce = cudaMalloc(&nccl.out[r], ncount * es);
                    if (ce != cudaSuccess) rc = ar__cuda_fail(err, ce, "allocating NCCL's output");
                    nccl.out_cap[r] = ncount * es;
                }
            }
            if (fused && rc == AR_OK) {
                rc = time_unfused(be, &nc, o, count, sink, &nccl_s, err);
                if (rc != AR_OK) break;
                goto rows;
            }
            if (rc == AR_OK) rc = nccl_body(be, &nc, err);
            if (rc == AR_OK) rc = sync_all(be, err);
            if (rc == AR_OK && o->check && bytes <= CHECK_MAX_BYTES) {
                ar_result_t res;
                memset(&res, 0, sizeof res);
                for (int r = 0; r < be->nranks && rc == AR_OK; r++)
                    rc = ar__check_buffer(nccl.out[r], be->rank_gpu[r], o->dtype, o->coll, NULL, count, be->nranks, seed, r,
                                          &res, err);
                if (rc == AR_OK && !res.check_ok) note(sink, "NCCL at %" PRIu64 " bytes: WRONG: %s", bytes, res.check_msg);
            }
            if (rc == AR_OK) rc = time_body(be, nccl_body, &nc, o, &nccl_s, err);
            if (rc != AR_OK) break;
        }
        if (!have_nccl && nrows && o->coll == AR_COLL_MATMUL_ALLREDUCE) {
            rc = time_parts_alone(be, topo, o, count, &ro, timeout_s, seed, sink, err);
            if (rc != AR_OK) break;
        }
    rows:
        for (int i = 0; i < nrows; i++) {
            const ar_bench_row_t r = {
                .bytes = count * es, .count = count, .dtype = o->dtype, .algo = rows[i].algo,
                .channels = rows[i].channels, .chunk_bytes = rows[i].chunk_bytes,
                .root = rows[i].root, .nranks = be->nranks, .ngpus = be->nused, .time_s = rows[i].time_s,
                .wrong = rows[i].wrong, .nccl_s = nccl_s, .device = prop.name, .links_detected = links,
                .coll = o->coll, .partitions = rows[i].partitions,
                .gemm = gemm,
            };
            sink->row(&r, sink->ctx);
        }
    }
    if (have_nccl) nccl_close(&nccl);
    ar_cuda_backend.close(b);
    return rc;
}
