/* arsim: algorithms. Each turns (topology, count, dtype, options) into a plan
 * and knows nothing of backends. One file per algorithm under algorithms/. */
#ifndef ARSIM_ALGO_H
#define ARSIM_ALGO_H

#include "arsim/plan.h"
#include "arsim/topo.h"

/* A plan of one rank (arsim/plan.h) stands for the whole where the topology's translations
 * map the plan onto itself (arsim/topo.h): rank 0's ops alone, which only the timing backends
 * run. ar_algo_build returns one never (OFF: a plan to verify, run on data or break down by
 * link), where the whole plan would hold AR_ALGO_ONE_RANK_MIN_OPS ops or more (AUTO: where
 * running every rank costs seconds), or wherever it can (ON). It checks the translation
 * first: the plans of rank 0 and of AR_ALGO_SYMMETRY_PROBES other ranks, spread over the
 * topology, must be each other's translates op for op (sizes, flags, buffers, whether each
 * op starts or ends off a whole vector, ar_op_misaligned); otherwise every rank's ops are
 * built. Under a model that tracks warmth (arsim/cost.h) it also needs where the other
 * ranks' ops touch rank 0's buffers (ar_plan_t.mirror_off): guessed from its grid
 * neighbours' plans (a stride per rank) and checked on a few ranks' where its ops reach
 * many, else from the plans of the ranks whose translates reach rank 0, walked op for op, at
 * most AR_ALGO_MIRROR_MAX_WORK ops in all (else every rank's ops). */
typedef enum ar_symmetry_e { AR_SYMMETRY_OFF = 0, AR_SYMMETRY_AUTO, AR_SYMMETRY_ON } ar_symmetry_t;
#define AR_ALGO_ONE_RANK_MIN_OPS (1u << 20)
#define AR_ALGO_SYMMETRY_PROBES 4
/* The algorithms cut parts of 64 lines or more on whole lines of this many elements (a
 * 128-byte line of bf16): parts are even where the count splits into whole lines. */
#define AR_ALGO_SPLIT_LINE 64u
/* The grain, in elements, the algorithms cut parts of `each` elements on (a line where each
 * holds 64 lines, else a block of 16 or a vector of 8 where it holds 8 of them, else 1): a
 * cut lies within half of it of the exact one, so a part is at most its exact share and one
 * grain long. */
uint64_t ar_algo_split_grain(uint64_t each);
#define AR_ALGO_MIRROR_MAX_WORK (1u << 25)

typedef struct ar_algo_opts_s {
    int channels;          /* 0: the algorithm's default */
    uint64_t chunk_bytes;  /* pipelining chunk; 0: the algorithm's default */
    int root;              /* center_root: force this root rank; -1: least eccentricity */
    int grid_w, grid_h;    /* torus2d/mesh2d on topologies without a grid: 0 = choose */
    int slots;             /* 1stage: SCRATCH slots used by execution parity, 1 or 2; 0 = choose */
    ar_plan_size_t *sizing; /* non-NULL: count the plan into it instead of building it (plan.h);
                            * the plan that comes back is a sizing plan, to be freed only */
    const ar_plan_size_t *layout; /* set by ar_algo_build: the sizing of this very build, whose
                                   * room the plan is written into (ar_plan_layout) */
    ar_mem_t buffer;       /* the memory level the run's buffers sit in (the case runner sets it):
                            * for rules read off the model, as 2stage's choice of pulls */
    ar_coll_t coll;        /* what the plan computes (arsim/plan.h); an algorithm refuses one
                            * it does not build (ar_algo_t.colls) */
    ar_gemm_t gemm;        /* a fused collective's product (count = M x N) */
    int partitions;        /* ... split into this many partitions of rows (0: one) */
    ar_symmetry_t symmetry; /* whether ar_algo_build may return a plan of one rank (below) */
    int one_rank;          /* ar_algo_build's own: 1 + the rank whose ops alone are emitted (a
                            * plan of one rank, arsim/plan.h); 0: every rank's */
    int one_span;          /* ... with one_rank 1: the ranks [0, one_span) emitted (a plan of a
                            * row, arsim/plan.h); 0 or 1: one rank */
    uint64_t max_ops;      /* a plan of more ops than this is not built: ar_algo_build stops
                            * counting there and returns AR_ELIMIT (a search that would not time
                            * it); 0: any */
    double max_s;          /* the case runner's search need not time a plan whose floor is
                            * later (its links, ar_bound_own_links, or one rank's chain of ops,
                            * ar_bound_own_chain; `auto`, past the best found so far); 0: any.
                            * The builders ignore it */
} ar_algo_opts_t;

#define AR_ALGO_OPTS_DEFAULT {0, 0, -1, 0, 0, 0, NULL, NULL, AR_MEM_HBM, AR_COLL_ALLREDUCE, {0, 0, 0}, 0, AR_SYMMETRY_OFF, 0, 0, 0, 0}

typedef struct ar_algo_s {
    const char *name;
    const char *alias;     /* NULL when none */
    const char *summary;   /* one line for `arsim list algos` */
    int max_channels;      /* the most --channels (lanes) it takes; 0 for a probe (any) */
    int takes_root;        /* --root chooses the rank it reduces to */
    int via_host;          /* its plans stage through host memory (their bound counts the host links) */
    /* How many peers its lanes take in turn (lane c's k-th peer is k + c around them), so that
     * channel counts that are multiples of it give every peer, and every link to one, the same
     * number of lanes at once; NULL or 1: any count loads them alike. The default channels
     * try such counts beside the powers of two. */
    int (*lane_period)(const ar_topo_t *topo);
    /* AR_EUNFIT with a message naming the missing topology property when it does not fit. */
    int (*build)(const ar_topo_t *topo, uint64_t count, ar_dtype_t dtype,
                 const ar_algo_opts_t *opts, ar_plan_t **out, ar_error_t *err);
    /* The collectives it builds besides allreduce, as bits 1u << ar_coll_t (0: allreduce
     * alone); AR_ALGO_NO_ALLREDUCE where it builds no allreduce. */
    unsigned colls;
    int chooser;           /* `auto`: no plan of its own; the runner (arsim/case.h) picks among
                            * the registry's algorithms by predicted time */
    int one_rank;          /* its builder emits one rank's ops at about one rank's cost where
                            * asked (ar_algo_opts_t.one_rank): a plan of one rank is tried for it
                            * (AR_SYMMETRY_AUTO, ON); for any other, every rank's ops are built */
    int cycle_only;        /* its ranks meet only their neighbours along the topology's ring of
                            * ranks (ar__find_ring's): it may be timed on that ring alone
                            * (ar_algo_topology) */
    int probe;             /* a probe plan (algorithms/probes.c): it measures the executor and
                            * computes no allreduce; `--algo all` and ar_algo_all leave it out.
                            * A name ending in N (x-chainN) is used with a count: x-chain34 */
} ar_algo_t;

#define AR_ALGO_NO_ALLREDUCE 0x100u
/* Whether a builds plans computing coll. */
int ar_algo_computes(const ar_algo_t *a, ar_coll_t coll);
/* The registry's algorithm names, ", " between them, into buf (truncated to len): all of
 * them, or (computing not NULL) those that compute *computing. */
void ar_algo_names(const ar_coll_t *computing, char *buf, size_t len);

/* By name or alias; NULL when unknown. */
const ar_algo_t *ar_algo_find(const char *name);
/* `auto`'s entry (ar_algo_find("auto") too): not in ar_algo_all. */
const ar_algo_t *ar_algo_auto_entry(void);
/* The registry of allreduce algorithms, NULL-terminated. */
const ar_algo_t *const *ar_algo_all(void);
/* x-fanN's run: each COPY is followed by SIGNALs to this many distinct flags of its rank. */
#define AR_PROBE_FAN_FLAGS 8u

/* The probe plans (`arsim list probes`): entry i of ar_algo_probe_count(), NULL beyond.
 * ar_algo_find and ar_algo_build take their names too. */
int ar_algo_probe_count(void);
const ar_algo_t *ar_algo_probe(int i);

/* The topology algorithm a's plans on t are built and timed on: t, or where a's ranks meet
 * only along t's ring of ranks (ar_algo_t.cycle_only) and that ring is no translate of
 * itself on t (a snake over a torus), a ring_1d of t's devices in that ring's order
 * (ar_topo_cycle), on which the same ops cross the same links and memories, each rank
 * numbered by its place on the ring. Its rotations let rank 0's ops stand for every rank's
 * where on t every rank's would be built (ring on torus_2d:128x128: 8e8 source addresses).
 * t where o asks for every rank's ops (AR_SYMMETRY_OFF), or no such ring exists. The view is
 * made once and kept with t. */
const ar_topo_t *ar_algo_topology(const ar_algo_t *a, const ar_topo_t *t, const ar_algo_opts_t *o);

/* Whether rank 0's plan stands for every rank's with these options (the probes' verdict,
 * kept with the topology), whatever every rank's would hold; 0 where it is not tried. */
int ar_algo_rank0_stands(const char *name, const ar_topo_t *topo, uint64_t count, ar_dtype_t dtype,
                         const ar_algo_opts_t *opts);

/* Find + build + verify-free convenience: AR_EINVAL for an unknown name. The plan is
 * built twice, counted and then written in the exact room the count found (plan.h's
 * sizing and ar_plan_layout): building holds no more memory than the plan. */
int ar_algo_build(const char *name, const ar_topo_t *topo, uint64_t count, ar_dtype_t dtype,
                  const ar_algo_opts_t *opts, ar_plan_t **out, ar_error_t *err);

/* `--algo auto` on the GPUs (`bench`, one rank a GPU; where ranks share a GPU bench takes
 * the model's choice, ar_case_choose): the algorithm (a registered name) and channel
 * count for nranks ranks on ndevices devices at this size per rank; p2p 0 when devices
 * cannot address each other's memory (then the host-staging `naive`). Channels 0: the
 * algorithm's defaults from the model (ar_case_defaults), channels and chunk. */
void ar_algo_auto(int nranks, int ndevices, uint64_t bytes, int p2p, const char **algo, int *channels);

#endif
