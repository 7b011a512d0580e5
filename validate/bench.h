/* validate: `arsim bench --backend cuda`: our plans and NCCL's ncclAllReduce on the
 * same GPUs, the same data, in one process and run. */
#ifndef ARSIM_VALIDATE_BENCH_H
#define ARSIM_VALIDATE_BENCH_H

#include <stdio.h>
#include "arsim/arsim.h"

typedef struct ar_hw_bench_opts_s {
    const char *algos;       /* comma list of names (algorithms, x-* probe plans), "all", "auto" */
    const uint64_t *sizes;   /* bytes per rank */
    int nsizes;
    ar_dtype_t dtype;
    int channels;            /* 0: the algorithm's default (auto: its own choice) */
    uint64_t chunk_bytes;    /* 0: the algorithm's default */
    int iters;               /* executions per captured graph; 0: by size */
    int repeats;             /* graph launches timed, median taken; 0: by size */
    int check;               /* check every plan's (and NCCL's) output once per size */
    int nccl;                /* time NCCL's same collective beside ours */
    int force_host;
    double timeout_s;
    ar_coll_t coll;          /* the collective (arsim/plan.h) */
    uint64_t gemm_n, gemm_k; /* matmul-allreduce: the product's N and K (sizes: M x N elements) */
    int partitions;          /* ... its partitions (0: the model's) */
} ar_hw_bench_opts_t;

/* One measured row: one of our plans at one size, NCCL's time at that size beside it. */
typedef struct ar_bench_row_s {
    uint64_t bytes, count;
    ar_dtype_t dtype;
    const char *algo;        /* as run: NAME, NAME/C (channels asked) or auto:NAME/C */
    int channels;            /* the plan's */
    uint64_t chunk_bytes;    /* the plan's (ar_plan_chunk_bytes) */
    int root;                /* the plan's; -1 where the algorithm has none */
    int nranks, ngpus;
    double time_s;           /* one execution: CUDA graphs of many, median of repeats */
    int wrong;               /* -1 not checked, 0 right, 1 wrong */
    double nccl_s;           /* NCCL at this size, NAN when it did not run */
    const char *device;      /* the GPU's name */
    const char *links_detected; /* NVLink links up on each GPU used: "NV18" (NVML), or "unknown" */
    ar_coll_t coll;
    ar_gemm_t gemm;          /* a fused op's product (M x N x K); zero otherwise */
    int partitions;          /* ... in this many partitions of rows */
} ar_bench_row_t;

/* Where the bench's results go, as they come: rows, and notes (what ran beside what,
 * what was skipped and why, what was wrong), each one line without its '#'. */
typedef struct ar_bench_sink_s {
    void (*row)(const ar_bench_row_t *r, void *ctx);
    void (*note)(const char *line, void *ctx); /* may be NULL */
    void *ctx;
} ar_bench_sink_t;

/* The table a person reads: its column header, and one row. */
void ar_bench_table_header(FILE *f);
void ar_bench_table_row(FILE *f, const ar_bench_row_t *r);
/* The bench's own CSV: its header, and one row. */
void ar_bench_csv_header(FILE *f);
void ar_bench_csv_row(FILE *f, const ar_bench_row_t *r);

/* AR_OK in a build with the cuda backend; AR_ENOTSUP, with a message saying
 * so, in one without (validate/none.c, where every entry point here says the same). */
int ar_hw_bench_available(ar_error_t *err);

/* Rows and notes to sink as they are measured; AR_OK, or an error for things that stop
 * the whole run (no GPU). *wrong counts rows whose check failed. */
int ar_hw_bench(const ar_topo_t *topo, const ar_hw_bench_opts_t *o, const ar_bench_sink_t *sink, int *wrong,
                ar_error_t *err);

/* GPUs visible to this process (0 when none or no driver). */
int ar_hw_gpu_count(void);


#endif
