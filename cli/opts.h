/* cli: the one option parser shared by `run`, `sweep` and `bench`, and the
 * shared pieces of output (nccl-tests table, CSV, JSON) so that every
 * subcommand writes the same columns.
 *
 * Usage, in a subcommand:
 *
 *     ar_cli_opts_t o;
 *     int rc = ar_cli_opts_parse("sweep", argc, argv, AR_CLI_LISTS, &extra, &o);
 *     if (rc != AR_CLI_OK) return rc;          // 0 for --help, 2 for bad input
 *     for (int t = 0; t < o.ntopos; t++) { ... ar_cli_topo_open(&o, o.topos[t], &topo) ... }
 *     ...
 *     ar_cli_opts_free(&o);
 *
 * Every bad flag or value is reported as one line on stderr
 * ("arsim sweep: --size '0': size '0' must be greater than 0") and the parser
 * returns 2, the exit status for bad input. */
#ifndef ARSIM_CLI_OPTS_H
#define ARSIM_CLI_OPTS_H

#include <getopt.h>
#include <stdio.h>
#include "arsim/arsim.h"
#include "arsim/csv.h"
#include "arsim/out.h"

/* Returned by ar_cli_opts_parse besides 0 (go on) and 2 (bad input). */
#define AR_CLI_OK   0
#define AR_CLI_HELP 10   /* --help was printed: exit 0 */

/* Flags for ar_cli_opts_parse. */
#define AR_CLI_LISTS     0x1  /* lists allowed everywhere (sweep): --topology, --dtype, --buffer,
                                 --channels, --chunk, --backend take comma-separated values.
                                 Without it only --algo, --size and --count take lists. */
#define AR_CLI_NO_SIZE   0x2  /* no default size list (the caller sets its own) */

#define AR_CLI_MAX_LIST  64   /* entries per list */
#define AR_CLI_MAX_SIZES 128
#define AR_CLI_MAX_ROOTS 4096 /* --root all: ranks of one topology */

typedef struct ar_cli_opts_s {
    const char *cmd;                 /* "run", "sweep", "bench" (for messages) */

    /* Selectors. Lists hold at least one entry after parsing (defaults filled in). */
    const char *backends[AR_CLI_MAX_LIST];  /* --backend (default "sim" when built, else "analytic") */
    int nbackends;
    const char *topos[AR_CLI_MAX_LIST];     /* --topology FILE|SPEC (default torus_2d_4x4) */
    int ntopos;
    const char *model;               /* --model FILE|NAME, NULL: the topology's own */
    const char *model_set;           /* --set KEY=VALUE[,..]: model keys changed, NULL: none */
    const ar_algo_t *algos[AR_CLI_MAX_LIST]; /* --algo NAME[,NAME..]|all (default all) */
    char algo_names[AR_CLI_MAX_LIST][64];    /* each as named (a probe's with its N: x-chain34) */
    int nalgos;
    int algo_all;                    /* --algo all, or no --algo: unfit algorithms are skipped */
    uint64_t sizes[AR_CLI_MAX_SIZES];/* --size B[:B][,..] in bytes (default 8K:1G) */
    int nsizes;
    uint64_t counts[AR_CLI_MAX_SIZES];/* --count N[,N..] elements; when ncounts > 0 they
                                        replace sizes (bytes = count * dtype size) */
    int ncounts;
    ar_dtype_t dtypes[AR_NDTYPE];    /* --dtype (default bf16) */
    int ndtypes;
    ar_mem_t buffers[AR_NMEM];       /* --buffer (default hbm) */
    int nbuffers;
    int channels[AR_CLI_MAX_LIST];   /* --channels N (default 0: the algorithm's own) */
    int nchannels;
    uint64_t chunks[AR_CLI_MAX_LIST];/* --chunk B (default 0: the algorithm's own) */
    int nchunks;
    int roots[AR_CLI_MAX_LIST];      /* --root R[,R..]|all (algorithms with a root): -1 = the
                                        algorithm's own (least eccentricity) */
    int nroots;
    int root_all;                    /* --root all: every rank of each topology */
    int ranks;                       /* --ranks N: N ranks in blocks on the devices; 0 = one per device */
    ar_coll_t coll;                  /* --op (default allreduce): what every plan computes; --algo
                                        all keeps the algorithms that compute it */
    uint64_t gemm_n, gemm_k;         /* --n, --k: a fused op's product (default 8192 each); its M
                                        (--m, a list) becomes counts[] = M x N */
    uint64_t gemm_ms[AR_CLI_MAX_SIZES]; /* --m, as given (default 512:16384) */
    int ngemm_ms;
    int partitions;                  /* --partitions (default 0: from the model) */
    ar_symmetry_t symmetry;          /* --symmetry (default auto): plans of one rank (arsim/algo.h) */

    /* Run control. */
    int iters;                       /* --iters N (default 1; >= 1) */
    int warmup;                      /* --warmup N (default 0) */
    unsigned long seed;              /* --seed S (default 1) */
    double timeout_s;                /* --timeout S (cuda) */
    int check;                       /* --check */
    int breakdown;                   /* --breakdown */
    int verify;                      /* --verify: 1 always, 0 never (--no-verify), -1 when cheap */
    int dump_plan;                   /* --dump-plan: print each plan to stdout before running */
    const char *csv;                 /* --csv FILE */
    const char *json;                /* --json FILE */
    int quiet;                       /* -q: no progress notes */
    double max_mem;                  /* --max-mem B: a case estimated to need more is refused
                                        (default ar_case_default_max_mem(); ar_case_t.max_mem) */

    char **owned;                    /* copies of list arguments (freed by ar_cli_opts_free) */
    int nowned;
    unsigned seen;                   /* the shared options on the command line (AR_CLI_O bits) */
} ar_cli_opts_t;

/* A case's collective from the options: coll, and a fused op's product for count = M x N
 * elements (arsim/plan.h). */
void ar_cli_case_coll(const ar_cli_opts_t *o, uint64_t count, ar_algo_opts_t *ao);

/* The shared options, each a bit of a command's `takes` (AR_CLI_O(SIZE)). */
#define AR_CLI_SHARED_OPTS(X)                                                                      \
    X(BACKEND) X(TOPOLOGY) X(MODEL) X(SET) X(ALGO) X(SIZE) X(COUNT) X(DTYPE) X(BUFFER) X(CHANNELS)       \
    X(CHUNK) X(RANKS) X(ROOT) X(ITERS) X(WARMUP) X(SEED) X(TIMEOUT) X(CHECK) X(BREAKDOWN)          \
    X(VERIFY) X(NO_VERIFY) X(DUMP_PLAN) X(CSV) X(JSON) X(QUIET) X(MAX_MEM) X(OP) X(GEMM_M) X(GEMM_N)  \
    X(GEMM_K) X(PARTITIONS) X(SYMMETRY)
enum {
#define AR_CLI_BIT_ENUM(name) AR_CLI_BIT_##name,
    AR_CLI_SHARED_OPTS(AR_CLI_BIT_ENUM)
#undef AR_CLI_BIT_ENUM
    AR_CLI_NOPTS
};
#define AR_CLI_O(name) (1u << AR_CLI_BIT_##name)
#define AR_CLI_ALL_OPTS (~0u >> (32 - AR_CLI_NOPTS)) /* 1 <= AR_CLI_NOPTS <= 32 */

/* Extra options a subcommand adds to the shared ones (sweep: --out, --jobs ...).
 * longopts is terminated by a zero entry; each entry's `val` must be >= 1000 and
 * `flag` NULL. handle(val, optarg, ctx) returns 0 or 2 (after printing one line
 * on stderr with ar_cli_fail). usage, when not NULL, is appended to --help. */
typedef struct ar_cli_extra_s {
    const struct option *longopts;
    const char *shortopts;           /* extra short options in getopt syntax, or NULL */
    int (*handle)(int val, const char *arg, void *ctx);
    void *ctx;
    const char *usage;
    unsigned takes;                  /* the shared options it reads (AR_CLI_O bits); 0: all of them.
                                        Any other is refused: "--x does not apply to arsim CMD" */
    unsigned own_help;               /* of those, the ones its usage describes itself (another default) */
} ar_cli_extra_t;

/* Parse argv[1..] (argv[0] is the subcommand name). flags: AR_CLI_*. extra may be NULL.
 * Returns AR_CLI_OK, AR_CLI_HELP (usage printed on stdout) or 2 (one line on stderr).
 * Positional arguments are refused. Call ar_cli_opts_free whatever it returned. */
int ar_cli_opts_parse(const char *cmd, int argc, char **argv, unsigned flags,
                      const ar_cli_extra_t *extra, ar_cli_opts_t *o);
void ar_cli_opts_free(ar_cli_opts_t *o);
/* The shared usage text for the selectors. */
void ar_cli_opts_usage(FILE *f, unsigned shows);

/* One line on stderr, "arsim CMD: ...", returns 2. */
int ar_cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One line on stderr from an error record ("arsim CMD: file:line:col: message"); returns
 * 2 for bad input, 1 for AR_ECHECK. */
int ar_cli_fail_err(const char *cmd, const ar_error_t *err);

/* Parsers for single values, shared by subcommands' extra options: AR_OK or AR_EINVAL. */
int ar_cli_parse_int(const char *s, long lo, long hi, long *out);
int ar_cli_parse_double(const char *s, double lo, double hi, double *out);
/* "1,2,4" into at most max ints in [lo, hi]: AR_OK, or AR_EINVAL (also for none). */
int ar_cli_parse_int_list(const char *s, int *out, int max, int *n, long lo, long hi);
/* 1 when the backend is built and has every one of caps (AR_BACKEND_*). */
int ar_cli_backend_can(const char *name, unsigned caps);
/* The roots to run algorithm a with on topology t: --root's list, every rank (--root all),
 * or {-1} (the algorithm's own choice; also for an algorithm without a root). Fills
 * out[0..n); returns n (at most max). */
int ar_cli_roots(const ar_cli_opts_t *o, const ar_topo_t *t, const ar_algo_t *a, int *out, int max);
/* An algorithm's message without its own "name: " prefix (the CLI names it already). */
const char *ar_cli_unprefixed(const char *msg, const char *name);
/* --check with a backend that moves no data (run, sweep): 2 after one line, else AR_CLI_OK. */
int ar_cli_check_backends(const ar_cli_opts_t *o);

/* Output files (arsim/out.h) for a command's flag: open names the file in one line and
 * returns 2 when it cannot be written; close returns rc, or 1 after naming the file
 * when the writing failed (rc already non-zero: the file is dropped, the target kept). */
int ar_cli_out_open(const char *cmd, const char *flag, const char *path, ar_out_t *out);
/* A file flag's value: not empty and not an option ("--csv -q"); '-' alone is standard
 * output. 0, or 2 after one line. */
int ar_cli_check_path(const char *cmd, const char *flag, const char *path);
int ar_cli_out_close(const char *cmd, ar_out_t *out, int rc);

/* The backend a study uses by default: "sim" when this build has it, else "analytic". */
const char *ar_cli_default_backend(void);
#define AR_CLI_DEFAULT_TOPOLOGY "torus_2d_4x4"
#define AR_CLI_CHUNK_MIN 16u                   /* --chunk, bytes */
#define AR_CLI_CHUNK_MAX ((uint64_t)1 << 30)

/* Open a topology for the selectors: model override (--model) and --ranks applied.
 * Prints one line and returns 2 on error. */
int ar_cli_topo_open(const ar_cli_opts_t *o, const char *spec, ar_topo_t **out);
/* Bytes and element count of entry i of the size (or count) list for dtype dt. */
int ar_cli_nsizes(const ar_cli_opts_t *o);
void ar_cli_size_at(const ar_cli_opts_t *o, int i, ar_dtype_t dt, uint64_t *bytes,
                    uint64_t *count);
/* The run options from the run control (--iters, --warmup, --check, --seed,
 * --timeout) for one buffer level; breakdown off. */
ar_run_opts_t ar_cli_run_opts(const ar_cli_opts_t *o, ar_mem_t buffer);


/* nccl-tests-shaped table. with_check adds a check column. */
void ar_cli_table_header(FILE *f);
void ar_cli_table_row(FILE *f, const ar_row_t *r);
/* JSON: an array of objects with the CSV's keys. begin writes "[", end writes "]". */
void ar_cli_json_begin(FILE *f);
void ar_cli_json_row(FILE *f, const ar_row_t *r, int first);
void ar_cli_json_end(FILE *f);
/* --breakdown: critical path by term and per-link traffic, as '#' comment lines. */
void ar_cli_breakdown(FILE *f, const ar_topo_t *t, const ar_result_t *res);

#endif
