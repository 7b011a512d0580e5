/* hw: the cuda backend's host side, shared by the backend (hw/cuda.c), the
 * benchmark (validate/bench.c) and the GPU tests (hw/gpu_test.c). Not part of the
 * public surface: the rest of arsim reaches the backend through its vtable
 * (ar_cuda_backend) and `arsim bench` through ar_hw_bench (validate/bench.h). */
#ifndef ARSIM_HW_CUDA_H
#define ARSIM_HW_CUDA_H

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include "arsim/arsim.h"
#include "hw/internal.h"

#define AR__MAX_GPUS 16

/* Which channel an executor block runs, from which of its ops (the timeline's rows). */
typedef struct ar__block_of_s {
    int rank, chan;
    uint32_t from, nops;
} ar__block_of_t;

/* A product an executor launch waits for: product prod of computing channel cc (be->cchan). */
typedef struct ar__dep_s {
    int cc, prod;
} ar__dep_t;

typedef struct ar__gpu_plan_s {
    ar__dop_t *d_ops;
    void **d_srcs;
    ar__dblock_t *d_blocks;
    uint64_t *d_epochs;
    uint64_t *d_stamps;        /* ARSIM_CUDA_TIMELINE: see ar__kargs_t.stamps */
    uint32_t nops;
    int nblocks;
    ar__block_of_t *of;        /* host, per block (an executor stage's; NULL for a flag run) */
    ar__dep_t *deps;           /* host: the products launched before it that it waits for */
    int ndeps;
} ar__gpu_plan_t;

/* A COMPUTE lowered (hw/gemm.c): row-major m x K times K x N into m x N, run as cuBLASLt's
 * column-major N x m = (N x K)(K x m), the same bytes. */
typedef struct ar__gemm_s {
    const void *a, *b;
    void *c;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc; /* of b (N x K), a (K x m) and c (N x m), column-major */
    cublasLtMatmulAlgo_t algo;
    void *ws;                  /* its workspace (AR__LT_WORKSPACE_BYTES): products that may run
                                * at once (on different streams) each need their own */
} ar__gemm_t;

/* A channel that computes (a COMPUTE among its ops; hw/gemm.c): its products run through
 * cuBLASLt on a stream of its own, each run of SIGNALs and WAITs between them as a one-block
 * executor launch (the executor's semantics, epochs and timeouts), beside the executor's
 * kernel on the GPU's stream. */
typedef struct ar__cchan_s {
    int rank, chan, gpu;
    cudaStream_t stream;
    cudaEvent_t done;
    cudaEvent_t *made;         /* nprod: recorded after each product */
    void *ws;                  /* cuBLASLt's workspace for its products (one stream: one at a time) */
    int nprod;
    ar__gemm_t *prod;          /* nprod */
    ar__gpu_plan_t *seg;       /* nprod + 1: the ops before product s (seg[nprod]: after the last) */
} ar__cchan_t;

typedef struct ar__cuda_s {
    ar_backend_t base;
    int ngpus;                 /* visible */
    int nused;                 /* GPUs that hold at least one rank */
    int used[AR__MAX_GPUS];    /* their ids, ascending */
    int p2p;                   /* peer access enabled between every pair of used GPUs */
    char p2p_why[160];         /* why not, when p2p == 0 */
    int nranks;
    int *rank_gpu;             /* rank -> GPU id */
    cudaStream_t stream[AR__MAX_GPUS];
    cudaEvent_t ev_start, ev_end, ev_fork, ev_join[AR__MAX_GPUS];
    volatile int *abort_word;  /* mapped pinned */
    int sms[AR__MAX_GPUS];

    /* Buffers: kept across plans, grown when a plan needs more. */
    void *buf[3][64];          /* [ar_buf_t][rank] (nranks <= 64) */
    size_t buf_cap[3][64];
    void *host_buf;            /* mapped pinned */
    size_t host_cap;
    uint64_t *flags[64];       /* peer mode: per rank, on its GPU */
    size_t flags_cap[64];
    uint64_t *host_flags;      /* host mode: nranks * nflags * host_slots slots */
    size_t host_flags_cap;
    uint32_t host_slots;       /* host mode: slots per flag (the most channels signalling one flag) */
    uint32_t *host_slot_of;    /* host mode, prepare only: per SIGNAL op, its slot */
    uint32_t *host_senders;    /* host mode: per (rank, flag), channels signalling it */

    /* The prepared plan. */
    const ar_plan_t *plan;
    uint32_t plan_nops;
    uint64_t plan_count;
    int host_mode;             /* flags in host memory, no peer addressing */
    /* Per used GPU, the executor's launches: nstages, one per stage of the plan
     * (ar_plan_stages), each after the products its channels wait for (ar__gpu_plan_t.deps),
     * so that its blocks hold SMs only while they have work beside the products. */
    ar__gpu_plan_t *g[AR__MAX_GPUS];
    int nstages;
    uint64_t check_serial;     /* fresh inputs for every checked execution */
    const char *timeline;      /* the prepared run's timeline file (its --timeline, else timeline_env), or NULL */
    const char *timeline_env;  /* ARSIM_CUDA_TIMELINE when the backend opened: timeline where a run names none */
    int signals_serial;        /* ARSIM_CUDA_SIGNALS=serial: a run of SIGNALs one after another */
    /* Channels that compute (hw/gemm.c). */
    ar__cchan_t *cchan;
    int ncchan;
    cublasLtHandle_t lt[AR__MAX_GPUS];
    void *lt_ws[AR__MAX_GPUS];     /* cuBLASLt's workspace, per GPU, for products on its stream */
    cudaEvent_t ev_cfork[AR__MAX_GPUS];
} ar__cuda_t;

/* The heuristic's kernels timed for a product beside the executor's blocks (hw/gemm.c). */
#define AR__LT_CANDIDATES 8

/* cuBLASLt's workspace per GPU. */
#define AR__LT_WORKSPACE_BYTES ((size_t)32 << 20)

/* Upload a lowered plan (ops, source pointers, nb blocks) to GPU g into gp; stamps: room
 * for ARSIM_CUDA_TIMELINE. */
int ar__cuda_upload(int g, const ar__dop_t *ops, uint32_t nops, void *const *srcs, uint32_t nsrcs,
                    const ar__dblock_t *blocks, uint32_t nb, int stamps, ar__gpu_plan_t *gp, ar_error_t *err);
void ar__cuda_plan_free(ar__gpu_plan_t *gp);
/* Op i of channel (r, c) on GPU g lowered into d, its sources appended at srcs[*si]. */
int ar__cuda_lower_op(ar__cuda_t *be, const ar_plan_t *p, int r, int c, uint32_t i, int g, uint32_t nflags,
                      ar__dop_t *d, void **srcs, uint32_t *si, ar_error_t *err);
/* The executor's parameters for an uploaded plan. */
ar__kargs_t ar__cuda_plan_kargs(const ar__cuda_t *be, const ar__gpu_plan_t *gp, double timeout_s);
/* hw/gemm.c: lower every channel of p that computes (ar_chan_t.computes) into be->cchan, and
 * give each executor stage (be->g) the products it waits for; free
 * them; on GPU g, fork their streams from the GPU's stream (before the executor's launch) and
 * enqueue their ops. */
int ar__gemm_prepare(ar__cuda_t *be, const ar_plan_t *p, uint32_t nflags, ar_error_t *err);
void ar__gemm_free(ar__cuda_t *be);
/* One product on GPU g, row-major m x K (a) times K x N (b) into c, on sms SMs at most (0: all),
 * beside: the executor's blocks may hold SMs while it runs (its kernel then takes clusters of one
 * SM), with workspace ws (NULL: the GPU's, for products on one stream); run once at once (its
 * module loaded); launch it on a stream; destroy its descriptors. */
int ar__gemm_make(ar__cuda_t *be, int g, ar_dtype_t dtype, uint64_t m, uint64_t N, uint64_t K, const void *a,
                  const void *b, void *c, int32_t sms, int beside, void *ws, ar__gemm_t *x, ar_error_t *err);
int ar__gemm_launch(ar__cuda_t *be, int g, const ar__gemm_t *x, cudaStream_t stream, ar_error_t *err);
void ar__gemm_destroy(ar__gemm_t *x);
/* cuBLASLt's handles and workspaces, when the backend closes. */
void ar__gemm_close(ar__cuda_t *be);
int ar__gemm_fork(ar__cuda_t *be, int g, ar_error_t *err);
int ar__gemm_enqueue(ar__cuda_t *be, int g, ar_dtype_t dtype, double timeout_s, ar_error_t *err);
/* GPU g's stream waits for the products an executor stage waits for (gp->deps); for
 * everything the computing channels enqueued. */
int ar__gemm_wait_deps(ar__cuda_t *be, int g, const ar__gpu_plan_t *gp, ar_error_t *err);
int ar__gemm_join(ar__cuda_t *be, int g, ar_error_t *err);

/* Index of a GPU id in used[], or -1. */
int ar__cuda_slot(const ar__cuda_t *be, int gpu);
/* Lower and upload a plan (also called by execute when the plan changed). */
int ar__cuda_prepare(ar__cuda_t *be, const ar_plan_t *plan, const ar_run_opts_t *opts, ar_error_t *err);
/* Enqueue one execution on every used GPU, forked from and joined to the
 * stream of the first used GPU (so events there time the whole execution). */
int ar__cuda_enqueue(ar__cuda_t *be, const ar_plan_t *plan, double timeout_s, ar_error_t *err);
/* Wait for everything enqueued; AR_ETIMEOUT (flags reset, GPUs usable) when a
 * WAIT was never met. */
int ar__cuda_sync(ar__cuda_t *be, const ar_plan_t *plan, double timeout_s, ar_error_t *err);
/* One execution's launches on every used GPU's stream, no ordering between the GPUs: the
 * executor's kernel and the computing channels beside it (what ar__cuda_enqueue wraps in its
 * fork and join; what bench captures into graphs). */
int ar__cuda_launch(ar__cuda_t *be, const ar_plan_t *plan, double timeout_s, ar_error_t *err);
/* ARSIM_CUDA_TIMELINE set: write when each op of the last execution ended (the file
 * is rewritten every time: the last run's stays). AR_OK at once otherwise. */
int ar__cuda_write_timeline(ar__cuda_t *be, const ar_plan_t *plan, ar_error_t *err);
/* Fill every rank's IN with the generator's values for seed. */
int ar__cuda_fill_inputs(ar__cuda_t *be, const ar_plan_t *plan, uint64_t seed, ar_error_t *err);
/* Set every byte of OUT (and SCRATCH, HOST) to 0xff: NaN in every dtype. */
int ar__cuda_poison(ar__cuda_t *be, const ar_plan_t *plan, ar_error_t *err);
/* Compare every rank's OUT with what the plan's collective defines (ar_check_out). */
int ar__cuda_check(ar__cuda_t *be, const ar_plan_t *plan, uint64_t seed, ar_result_t *res,
                   ar_error_t *err);
/* Compare n elements of a device buffer on a GPU with the float64 reference of coll. */
int ar__check_buffer(const void *dev_buf, int gpu, ar_dtype_t dtype, ar_coll_t coll, const ar_gemm_t *gemm, uint64_t n,
                     int nranks, uint64_t seed, int rank_label, ar_result_t *res, ar_error_t *err);
/* A CUDA error as an arsim error (AR_EDEVICE), naming what failed. */
int ar__cuda_fail(ar_error_t *err, int cuda_status, const char *what);

#define AR__CU(call, what)                                                  \
    do {                                                                    \
        cudaError_t ar__ce = (call);                                        \
        if (ar__ce != cudaSuccess) return ar__cuda_fail(err, ar__ce, what); \
    } while (0)

extern const ar_backend_ops_t ar_cuda_backend;

#endif
