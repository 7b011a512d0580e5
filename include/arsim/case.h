/* arsim: one case, from its plan to its row (runner/case.c). Every command that runs
 * an algorithm (run, the default study, sweep, validate's predictions) hands its cases
 * here: an algorithm at a size on a topology and a backend becomes a plan, is verified,
 * runs, is checked, and comes back as one row for the caller's sinks (table, CSV, JSON). */
#ifndef ARSIM_CASE_H
#define ARSIM_CASE_H

#include "arsim/algo.h"
#include "arsim/backend.h"

/* One result as every output prints it. */
typedef struct ar_row_s {
    const char *backend, *topology, *model, *algo;
    int nranks;
    ar_dtype_t dtype;
    ar_mem_t buffer;
    uint64_t bytes, count;
    int root;              /* the plan's root rank; -1 where the algorithm has none */
    int channels;          /* as used by the plan */
    uint64_t chunk_bytes;  /* as used by the plan (ar_plan_chunk_bytes) */
    const ar_result_t *res;
    const char *check;     /* "ok", "FAIL", or "" when no check ran */
    double bound_s;        /* arsim/bound.h's bound for the case; 0 when it has none */
    const char *links_detected; /* measured rows: the NVLink links up on each GPU, "NV18" (NVML), or
                                 * "unknown"; NULL or "" for a model's rows */
    ar_coll_t coll;        /* the collective (arsim/plan.h) */
    ar_gemm_t gemm;        /* a fused collective's product; zero otherwise */
    int partitions;        /* ... in this many partitions of rows */
} ar_row_t;

/* A fused row's product as "MxNxK/PARTITIONS" into buf; "" for a plain collective. */
void ar_row_gemm(const ar_row_t *r, char *buf, size_t len);

/* The row's redop as nccl-tests prints it: "sum", or "none" for an all-gather. */
const char *ar_row_redop(const ar_row_t *r);
/* bound / time: how close a row came to the physical bound (NAN when either is 0). */
double ar_row_efficiency(const ar_row_t *r);

typedef struct ar_case_s {
    const char *backend;       /* a registered backend */
    const ar_topo_t *topo;
    const char *topology;      /* the name rows carry (the topology's own, else as the user gave it) */
    const char *algo;          /* as named: x-chain34 keeps its N */
    uint64_t count;            /* elements per rank */
    ar_dtype_t dtype;
    ar_algo_opts_t algo_opts;  /* channels, chunk, root */
    ar_run_opts_t run;         /* buffer, iterations, check, breakdown, seed */
    int verify;                /* 1: verify the plan, 0: never, -1: when cheap (probes never) */
    int own_defaults;          /* 1: channels 0 is the algorithm's own rule (ar_algo_build's), not
                                  ar_case_defaults' count: validate rebuilding a measured plan */
    double max_mem;            /* bytes: a case whose memory estimate (ar_case_memory) is larger is
                                  refused with AR_ELIMIT before its plan is built; 0: no limit */
} ar_case_t;

/* Where a case stopped: AR_CASE_DONE when it has a row. */
typedef enum ar_case_stage_e { AR_CASE_BUILD, AR_CASE_VERIFY, AR_CASE_RUN, AR_CASE_DONE } ar_case_stage_t;

typedef struct ar_case_out_s {
    ar_case_stage_t stage;
    ar_plan_t *plan;   /* from ar_case_plan until ar_case_out_free */
    const ar_topo_t *topo; /* the topology plan is built on and runs on: the case's, or the view
                            * its algorithm is timed on (ar_algo_topology; owned by the case's) */
    ar_result_t res;
    ar_row_t row;      /* its identity from ar_case_plan, its result once done */
    char algo_label[64]; /* --algo auto: what it picked, "auto:NAME/CHANNELS" (the row's algo) */
    /* Timed at even counts (AR_CASE_EVEN_SPAN): the count above whose plan ran, the count below
     * and its time; 0 where the case's own count was timed. */
    uint64_t even_hi, even_lo;
    double even_lo_s;
    int ran; /* the result is in: ar_case_execute runs nothing */
    /* --algo auto: the algorithms its search could not time whose whole plan was past what it
     * times after it (AR_CASE_CHOOSE_MAX_OPS, --max-ops, --max-mem), comma-separated: never
     * timed, whatever they would take (torus2d on mesh_2d:128x128 at 10^6 bytes: 348 us, where
     * auto takes center_root's 5418); "" where none. */
    char auto_untimed[128];
    /* Its channels, not asked, were searched at one piece a lane, the plans of fewest ops (a
     * model backend): at the algorithm's own chunk its plans pass what the search of the
     * defaults times (AR_CASE_TUNE_MAX_OPS; every rank's ops where no translation maps rank
     * 0's onto the others': torus2d on mesh_2d:128x128); 0 where they were searched at its
     * own chunk, or asked. */
    int defaults_fewest;
} ar_case_out_t;

/* `--algo auto`: every registered algorithm that computes c's collective and fits, each at
 * the options ar_case_defaults gives it on c's backend, by predicted time; *algo the least
 * (the first in the registry among equals), *opts its options. AR_EUNFIT when none fits,
 * AR_ELIMIT when the last left out was over c->max_mem. */
int ar_case_choose(const ar_case_t *c, const char **algo, ar_algo_opts_t *opts, ar_error_t *err);

/* Build and (as asked) verify the plan: out->plan and out->row's identity (no result
 * yet), stage AR_CASE_RUN. On failure the stage says where: AR_CASE_BUILD (AR_EUNFIT
 * when the algorithm does not fit the topology) or AR_CASE_VERIFY (AR_EPLAN); AR_CASE_RUN
 * with AR_ELIMIT where the buffers pass the model's memory on a timing backend, which its
 * run would refuse, said before any plan is built. */
int ar_case_plan(const ar_case_t *c, ar_case_out_t *out, ar_error_t *err);
/* Run the planned case on its backend: out->res and the whole row, stage AR_CASE_DONE.
 * A failed check is a row whose check is "FAIL", not an error. */
int ar_case_execute(const ar_case_t *c, ar_case_out_t *out, ar_error_t *err);
/* Both. */
int ar_case_run(const ar_case_t *c, ar_case_out_t *out, ar_error_t *err);
void ar_case_out_free(ar_case_out_t *out);

/* The memory a case needs at its peak, estimated before anything is allocated for its plan:
 * the plan is counted, not built (plan.h's sizing), and the backend says what its run holds
 * beside it (ar_backend_ops_t.run_bytes); this process's resident memory (the topology, the
 * program) comes on top. */
typedef struct ar_case_memory_s {
    double bytes;      /* the estimate: the three parts below */
    double held;       /* this process's resident memory now (the program, the topology) */
    double plan;       /* the plan's ops, sources and channels (when over: its ops alone, as built) */
    double run;        /* what the run holds beside the plan (the backend's state), or the
                        * analytic backend's for the defaults' search where that is more */
    uint64_t ops;      /* the plan's ops (when over: where counting stopped) */
    uint64_t srcs;     /* ... and their source addresses */
    int over;          /* counting stopped past max_ops: the plan, and bytes, are larger still */
} ar_case_memory_t;
/* For algorithm algo (a registered name) with these options, as c would run it; counting
 * stops past max_ops ops (0: never). AR_OK, or the error of building the plan at all. */
int ar_case_memory(const ar_case_t *c, const char *algo, const ar_algo_opts_t *o, uint64_t max_ops,
                   ar_case_memory_t *m, ar_error_t *err);
/* The default of --max-mem: this share of the machine's memory. */
#define AR_CASE_MAX_MEM_SHARE 0.8
/* AR_CASE_MAX_MEM_SHARE of this machine's physical memory, in bytes (0 when unknown). */
double ar_case_default_max_mem(void);

/* What channels 0 and chunk 0 mean to every command, from the analytic backend's
 * predictions on the topology's model and this buffer level. The channels: powers of two up
 * to the algorithm's most (for a model backend, below each also the most that are a multiple
 * of ar_algo_t.lane_period), at the chunk asked or the algorithm's own, sized at the case's
 * count up to AR_CASE_TUNE_MAX_BYTES (beyond it, what was found there, or for a model
 * backend the most lanes of such a multiple below it where those predict less time at the
 * case's count, or half of it where that predicts AR_CASE_TUNE_FLAT less, each with its chunk
 * chosen as below);
 * for a model backend the fewest within AR_CASE_TUNE_FLAT of the least time (the fewest ops to simulate for what
 * the model cannot tell apart), for hardware (bench, cuda) the middle one of those within
 * AR_CASE_TUNE_HW_GAIN, the model's own error (of two, the faster; none more than
 * AR_CASE_TUNE_FLAT slower than fewer channels; the fewest where those are within it and the
 * plan is bound by its latencies), found at the count's whole 16-byte vectors, and past
 * AR_CASE_TUNE_MAX_BYTES twice or half those where they predict AR_CASE_TUNE_HW_GAIN less at
 * the case's count. Then, where the
 * channels were chosen (not asked) and no chunk was asked, the chunk, at those channels and
 * the case's count: the algorithm's own, then the vector's bytes (to a power of two) over
 * powers of four down to 16 KiB, and where AR_CASE_TUNE_PLAN_OPS stops that ladder the
 * smallest power of two it admits; for a model
 * backend the fewest ops within AR_CASE_TUNE_CHUNK_FLAT of the least time, for hardware the own
 * unless another is AR_CASE_TUNE_HW_GAIN faster. No plan over
 * AR_CASE_TUNE_PLAN_OPS ops is chosen but the first timed; a first plan of more than half
 * AR_CASE_TUNE_MAX_OPS, which leaves the search nothing else to time, is not timed (counted,
 * not built) unless predicted_s asks for its time: one channel, and unless either was asked
 * the chunk of fewest ops (one piece a lane); for a model backend, with neither asked, the
 * channels are then searched at one piece a lane, as they are where the first count is timed
 * but a second would pass AR_CASE_TUNE_MAX_OPS. Found once per
 * topology and case shape, then kept with the topology. backend names where the case runs (NULL: a model): a
 * hardware backend's rules apply, and no plan it would not admit (ar_backend_ops_t.admits) is
 * chosen. out is o with the channels and chunk filled (as given
 * when given); AR_OK, or the error of building the algorithm's plan at all. predicted_s (may
 * be NULL) receives the predicted time of what was chosen, at the case's count where the
 * chunk was chosen, else at the size the channels were found at: what `--algo auto` picks
 * an algorithm by, in ar_case_plan (the row's algo then says what it picked,
 * auto:NAME/CHANNELS). */
int ar_case_defaults(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                     ar_mem_t buffer, const char *backend, ar_algo_opts_t *out, double *predicted_s, ar_error_t *err);
#define AR_CASE_TUNE_MAX_BYTES ((uint64_t)16 << 20)
/* The search stops before the plans it times would hold more ops than this in all (the
 * first count is always timed): a simulation costs its ops, and on thousands of ranks a plan
 * of many channels costs more to time and simulate than it could gain. */
#define AR_CASE_TUNE_MAX_OPS ((uint64_t)1 << 20)
/* Nor is a plan of more ops than this timed (beyond the first), or chosen: simulating one
 * costs seconds, more than a default may cost. */
#define AR_CASE_TUNE_PLAN_OPS ((uint64_t)1 << 18)
/* auto times an algorithm whose plan at its defaults is over the search's ops (every rank's
 * ops on a mesh of thousands) where it may win, up to this many ops: the run it stands for
 * costs as much again. */
#define AR_CASE_CHOOSE_MAX_OPS ((uint64_t)1 << 25)
/* Even counts. A timing backend runs rank 0's ops for all where they stand for every rank's
 * (--symmetry); at a count whose parts cannot all be whole lines of AR_ALGO_SPLIT_LINE
 * elements (a count that is not a multiple of ranks x lanes x a line: 10^9 bytes on 1024
 * ranks) the ranks' parts differ by a line, and every rank's ops ran: 20 times the time and
 * memory, or past a plan's most. Such a case, where every rank's plan would hold
 * AR_ALGO_ONE_RANK_MIN_OPS ops or more, is timed at the nearest counts above and below whose
 * parts are even at its lanes (multiples of ranks x lanes x a line, where that step is
 * count / AR_CASE_EVEN_STEP or less; on a torus first of its grid's rows x lanes x a line,
 * where a row's ops stand for all at both), each rank 0's (or a row's) ops for all, at the
 * same options: where
 * the two times differ by AR_CASE_EVEN_SPAN or less, the row takes the time above (a count's
 * parts lie between theirs), else every rank's ops run. The search for defaults and --algo
 * auto time such counts alike, and leave out the options whose two times are further apart
 * (fewer lanes, where none at the lanes found is timed). */
#define AR_CASE_EVEN_SPAN 0.005
#define AR_CASE_EVEN_STEP 64
/* Where no line's step is found, the counts whose parts are even at the grain they are cut
 * on (ar_algo_split_grain: 10^6 bytes on a torus of 128 x 128, each row's block 3906.25
 * elements, 244.14 blocks of 16), step count / AR_CASE_EVEN_FINE_STEP at most (whether the
 * time is flat between them is AR_CASE_EVEN_SPAN's to say: 10^6 bytes on a ring of 16384, 24
 * and 32 elements a rank), stand for a count where every rank's plan would hold
 * AR_CASE_EVEN_FINE_OPS ops or more: seconds of a walk. Below that every rank's ops run:
 * where a count's parts are cut finer than on lines, its own plan can lie outside the even
 * counts' two times (2stage on switch:64, 16 MiB, 63 lanes: 252.11 us, the counts around
 * 245.6, within 0.06% of each other). */
#define AR_CASE_EVEN_FINE_STEP 2
#define AR_CASE_EVEN_FINE_OPS ((uint64_t)1 << 22)
/* Predictions within this share of the least time count as equal. */
#define AR_CASE_TUNE_FLAT 0.01
/* The same for the chunk, tighter: a smaller chunk's gain is a deeper pipeline, which sim
 * credits more than the analytic estimate the defaults are found with (mesh2d on ring_1d:8
 * at 512 MB: 128 KB against 512 KB chunks 1.0% faster in analytic, 2.3% in sim), so a gain
 * the analytic backend barely sees is real, and passing it over where the sizes around
 * take it is a step in time. */
#define AR_CASE_TUNE_CHUNK_FLAT (AR_CASE_TUNE_FLAT / 4)
/* The shipped GPU models' own error (docs/VALIDATION.md: about 5% median): on hardware,
 * predictions closer than this are not ranked. A chunk other than the algorithm's own, the
 * one measured, is taken only for a larger predicted gain (4 x H100, 2stage at 16 MB: 16 KB
 * chunks predicted 1.9% faster than its own, measured 17% slower); of the channel counts
 * within it of the least time, the middle one. */
#define AR_CASE_TUNE_HW_GAIN 0.05
/* --algo auto on hardware: the algorithms whose predicted times lie within
 * AR_CASE_TUNE_HW_GAIN of the least, which the model cannot rank, are each run this many
 * times (after one warm-up) on the backend, and the fastest median is taken. */
#define AR_CASE_HW_TUNE_ITERS 5

/* Plans up to this much verification work (ops x ranks x channels) are verified when
 * the case says -1. */
#define AR_CASE_VERIFY_MAX_WORK ((uint64_t)1 << 24)

#endif
