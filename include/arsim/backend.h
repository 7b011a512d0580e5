/* arsim: the backend interface. A backend executes plans and knows nothing of
 * particular algorithms. Runtime vtable; private state embeds ar_backend_t first. */
#ifndef ARSIM_BACKEND_H
#define ARSIM_BACKEND_H

#include <stdio.h>
#include "arsim/plan.h"
#include "arsim/topo.h"

/* The terms every op's time is built from. */
typedef enum ar_term_e {
    AR_TERM_LINK = 0, AR_TERM_MEMORY, AR_TERM_REDUCE, AR_TERM_SYNC, AR_TERM_LAUNCH, AR_TERM_COMPUTE, AR_NTERM
} ar_term_t;
const char *ar_term_name(ar_term_t t);

/* The timeline both timing backends write (run --timeline; cuda from the GPUs' clocks, sim
 * from its own): a CSV header, then a row per op: its device, rank, channel and index in the
 * channel, its code, the rank it targets (a WAIT its own), when it started and ended (ns). */
void ar_timeline_header(FILE *f);
void ar_timeline_row(FILE *f, int dev, int rank, int chan, uint32_t i, const ar_op_t *op, double start_ns,
                     double end_ns);

typedef struct ar_run_opts_s {
    ar_mem_t buffer;     /* where IN/OUT/SCRATCH live */
    int iters;           /* timed executions (cuda: per repeat); >= 1 */
    int warmup;
    int check;           /* compare with a float64 reference (ref, cuda) */
    unsigned long seed;  /* input generator */
    int breakdown;       /* fill per-term and per-link figures */
    double timeout_s;    /* cuda: a WAIT that is never met ends the run after this */
    int force_host;      /* cuda: stage through host even where P2P works */
    /* Told how a long run goes (may be NULL): the simulated time reached, the ops
     * executed of the plan's, wall seconds since the run began. The model backends call
     * it about twice a second once a run has taken two seconds (ar_progress_t), from the
     * process that runs the plan (the sim backend's child). */
    void (*progress)(void *ctx, double sim_s, uint64_t ops, uint64_t total_ops, double wall_s);
    void *progress_ctx;
    /* cuda: write when each op of the last execution started and ended, from the GPUs'
     * clocks, to this file (CSV; NULL: the environment's ARSIM_CUDA_TIMELINE, else none) */
    const char *timeline;
    /* analytic: a walk that reaches this time (seconds, > 0) stops there, its result's
     * time_s INFINITY: where only a time below it is of use (auto ruling out a plan too
     * large for its search), the rest of the walk is not. 0: every walk runs to its end. */
    double stop_past_s;
} ar_run_opts_t;

#define AR_RUN_OPTS_DEFAULT {AR_MEM_HBM, 1, 0, 0, 1, 0, 5.0, 0, NULL, NULL, NULL, 0}

/* A backend's side of opts->progress: ar_progress_start when the run begins, then
 * ar_progress_tick after every op (cheap: the clock is read every 4096 ticks). */
typedef struct ar_progress_s {
    const ar_run_opts_t *opts;
    double t0, next;
    uint64_t total, ticks;
} ar_progress_t;
void ar_progress_start(ar_progress_t *pg, const ar_run_opts_t *opts, uint64_t total_ops);
void ar_progress_tick(ar_progress_t *pg, double sim_s, uint64_t ops);

typedef struct ar_link_stat_s {
    int link;            /* index into topo->links */
    int dir;             /* +1 a->b, -1 b->a */
    double bytes;
    double busy_s;       /* time the link carried data */
    double util;         /* bytes / (capacity * total time) */
} ar_link_stat_t;

typedef struct ar_result_s {
    double time_s;              /* one execution (median over iterations where measured) */
    double terms_s[AR_NTERM];   /* critical path split by term; sums to time_s */
    double cycles;              /* time_s at the model's clock */
    int checked;                /* a check ran */
    int check_ok;
    double max_rel_err;
    uint64_t wrong;             /* elements, over every rank checked, outside the tolerance */
    char check_msg[256];        /* first mismatch: rank, element, got, want */
    ar_link_stat_t *links;      /* breakdown: per link and direction (owned, free with ar_result_free) */
    int nlinks;
    double sim_wall_s;          /* the backend's own wall time */
    double start_s;             /* of sim_wall_s, starting the simulator (sim: its process and
                                 * SimGrid's engine) before any of the plan's work; 0 elsewhere */
    uint64_t ops_executed;
} ar_result_t;

void ar_result_free(ar_result_t *r);
/* algbw = bytes / time; busbw = algbw * 2(p-1)/p. */
double ar_algbw_gbps(uint64_t bytes, double time_s);
double ar_busbw_gbps(uint64_t bytes, double time_s, int nranks);
/* busbw of a collective: algbw * 2(p-1)/p for allreduce, (p-1)/p for reduce-scatter
 * and all-gather (bytes: the whole vector's, as for allreduce). */
double ar_busbw_coll_gbps(ar_coll_t coll, uint64_t bytes, double time_s, int nranks);

typedef struct ar_backend_s ar_backend_t;

/* What a backend can do: the command line asks these instead of naming backends. */
enum {
    AR_BACKEND_DATA = 1u,       /* moves real data: --check compares its outputs with float64 */
    AR_BACKEND_MODEL = 2u,      /* times a plan from the hardware model: a prediction */
    AR_BACKEND_CONTENTION = 4u, /* ... sharing links and memories among what runs at once */
    AR_BACKEND_HARDWARE = 8u,   /* times real hardware: a measurement */
};

typedef struct ar_backend_ops_s {
    const char *name;
    const char *summary;
    unsigned caps;       /* AR_BACKEND_* */
    /* Optional: whether a case of bytes_per_rank with buffers in `buffer` can run on topo
     * here, asked before its plan is built (building one can itself be costly): AR_OK, or
     * AR_ELIMIT (too large: larger sizes will not fit either) or AR_EINVAL (never) with
     * the reason in err. NULL: no limit beyond what running finds. */
    int (*fits)(const ar_topo_t *topo, uint64_t bytes_per_rank, ar_mem_t buffer, ar_error_t *err);
    /* Optional: whether this plan's shape runs on topo here, asked of the plans the
     * defaults time before one is chosen (the cuda backend: each GPU holds the channels of
     * its ranks as executor blocks resident at once). AR_OK, or AR_ELIMIT with the reason
     * in err. NULL: any plan that builds. */
    int (*admits)(const ar_topo_t *topo, const ar_plan_t *plan, ar_error_t *err);
    /* Optional: the bytes a run of a plan of this size holds beyond the plan and the
     * caller's process (its own state and buffers, a process of its own), estimated before
     * the plan is built (the runner's memory check, arsim/case.h). NULL: nothing that
     * grows with the plan. */
    double (*run_bytes)(const ar_topo_t *topo, const ar_plan_size_t *size);
    /* topo outlives the backend. Optional: without open (and close) the backend is a
     * plain ar_backend_t of the topology, allocated and freed by the registry. */
    int (*open)(const ar_topo_t *topo, ar_backend_t **out, ar_error_t *err);
    /* Optional: per-plan set-up (allocation, upload) before execute. */
    int (*prepare)(ar_backend_t *be, const ar_plan_t *plan, const ar_run_opts_t *opts,
                   ar_error_t *err);
    int (*execute)(ar_backend_t *be, const ar_plan_t *plan, const ar_run_opts_t *opts,
                   ar_result_t *res, ar_error_t *err);
    void (*close)(ar_backend_t *be);
} ar_backend_ops_t;

struct ar_backend_s {
    const ar_backend_ops_t *ops;
    const ar_topo_t *topo;
};

/* The registry: by name, or NULL (also for one this build left out). */
const ar_backend_ops_t *ar_backend_find(const char *name);
const ar_backend_ops_t *const *ar_backend_all(void);
/* True when the name is a known backend that this build did not include, and why. */
int ar_backend_known_missing(const char *name);
const char *ar_backend_missing_why(const char *name);
/* The built backends whose caps include all of `caps`, as "a, b or c" (empty when none). */
void ar_backend_names_with(unsigned caps, char *buf, size_t len);
/* The first built backend whose caps include all of `caps`, or NULL. */
const ar_backend_ops_t *ar_backend_with(unsigned caps);
/* The timing backend a study uses when none is named: the most faithful model this build
 * holds (contention when there is one). */
const char *ar_backend_default(void);

/* Whether the backend can run on topo here at all (its GPUs, their count, the topology's
 * size): open + close, before a loop of cases, so that what no case could pass is said
 * once. AR_OK or the backend's error. */
int ar_backend_check(const char *name, const ar_topo_t *topo, ar_error_t *err);
/* open + prepare + execute + close in one call. */
int ar_backend_run(const char *name, const ar_topo_t *topo, const ar_plan_t *plan,
                   const ar_run_opts_t *opts, ar_result_t *res, ar_error_t *err);

#endif
