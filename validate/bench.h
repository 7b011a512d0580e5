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
    int iters;               /* executions per captured graph; 0: by size */
    int repeats;             /* graph launches timed, median taken; 0: by size */
    int check;               /* check every plan's (and NCCL's) output once per size */
    int nccl;                /* time ncclAllReduce beside ours */
    int force_host;
    double timeout_s;
    FILE *csv;               /* may be NULL */
} ar_hw_bench_opts_t;

/* AR_OK in a build with the cuda backend; AR_ENOTSUP, with a message saying
 * so, in one without (validate/none.c, where every entry point here says the same). */
int ar_hw_bench_available(ar_error_t *err);

/* Rows on out; AR_OK, or an error for things that stop the whole run (no GPU).
 * *wrong counts rows whose check failed. */
int ar_hw_bench(const ar_topo_t *topo, const ar_hw_bench_opts_t *o, FILE *out, int *wrong, ar_error_t *err);

/* GPUs visible to this process (0 when none or no driver). */
int ar_hw_gpu_count(void);


#endif
