/* arsim bench --backend cuda: our plans on this machine's GPUs, side by side
 * with NCCL's ncclAllReduce on the same data, in one process and run.
 *
 *   arsim bench --backend cuda [--topology SPEC] [--ranks N] [--algo auto|all|NAME,..]
 *               [--size 8K:1G] [--dtype bf16] [--channels N] [--check]
 *               [--iters N] [--repeats N] [--no-nccl] [--force-host] [--csv FILE]
 *
 * --algo also takes `auto` (the choice by size and rank count) and the probe
 * plans x-... (algorithms/probes.c lists them), which the shared option
 * parser does not know: bench takes --algo out of argv before parsing. The
 * topology defaults to the N visible GPUs: full:2 for a pair, switch:N for more (every pair
 * NV18 through NVSwitch: a GPU's lanes all reach any one peer). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "cli/internal.h"
#include "cli/opts.h"
#include "validate/bench.h"

enum { O_REPEATS = 1000, O_NO_NCCL, O_FORCE_HOST };

typedef struct bench_extra_s {
    int repeats;
    int nccl;
    int force_host;
} bench_extra_t;

static int handle(int val, const char *arg, void *ctx) {
    bench_extra_t *x = ctx;
    long v;
    switch (val) {
    case O_REPEATS:
        if (ar_cli_parse_int(arg, 1, 1000, &v) != AR_OK)
            return ar_cli_fail("bench", "--repeats '%s': expected a number from 1 to 1000", arg);
        x->repeats = (int)v;
        return 0;
    case O_NO_NCCL: x->nccl = 0; return 0;
    case O_FORCE_HOST: x->force_host = 1; return 0;
    }
    return 2;
}

/* The bench's rows as they come: the table on stdout, the CSV when asked. */
typedef struct out_s {
    FILE *csv;
    int rows;
} out_t;

static void out_note(const char *line, void *ctx) {
    (void)ctx;
    printf("# %s\n", line);
    fflush(stdout);
}

static void out_row(const ar_bench_row_t *r, void *ctx) {
    out_t *o = ctx;
    if (o->rows++ == 0) ar_bench_table_header(stdout);
    ar_bench_table_row(stdout, r);
    fflush(stdout);
    if (o->csv) {
        ar_bench_csv_row(o->csv, r);
        fflush(o->csv);
    }
}

int ar_cli_bench(int argc, char **argv) {
    /* Take --algo and --topology out before the shared parser sees argv. */
    const char *algos = "auto";
    const char *topo_spec = NULL;
    char **av = calloc((size_t)argc + 3, sizeof *av);
    if (!av) return ar_cli_fail("bench", "out of memory");
    int ac = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = !strncmp(a, "--algo", 6) ? &algos : !strncmp(a, "--topology", 10) ? &topo_spec : NULL;
        size_t fl = slot == &algos ? 6 : 10;
        if (i > 0 && slot && (a[fl] == '=' || a[fl] == 0)) {
            if (a[fl] == '=') *slot = a + fl + 1;
            else if (i + 1 < argc) *slot = argv[++i];
            else {
                free(av);
                return ar_cli_fail("bench", "%s needs a value", a);
            }
            continue;
        }
        av[ac++] = argv[i];
    }
    static const struct option longopts[] = {
        {"repeats", required_argument, NULL, O_REPEATS},
        {"no-nccl", no_argument, NULL, O_NO_NCCL},
        {"force-host", no_argument, NULL, O_FORCE_HOST},
        {0, 0, 0, 0},
    };
    bench_extra_t x = {0, 1, 0};
    const ar_cli_extra_t extra = {
        longopts, NULL, handle, &x,
        "options of bench:\n"
        "  --backend cuda         the backend bench measures (the default; the only one)\n"
        "  --topology FILE|SPEC   the GPUs' topology (default full:2 for two GPUs, switch:N for N)\n"
        "  --algo auto|all|NAME[,NAME..]  our algorithms (default auto: picks by size and rank count);\n"
        "                         x-NAME: the executor's probe plans (x-oneshot, x-pushshot, x-twoshot,\n"
        "                         x-reduce, x-pushsig, x-chainN, ...: algorithms/probes.c; a wrong name lists them)\n"
        "  --iters N              executions captured per CUDA graph (default: by size)\n"
        "  --repeats N            graph launches timed; the median is reported (default: by size)\n"
        "  --op allreduce|reducescatter|allgather|matmul-allreduce|allgather-matmul   the collective\n"
        "                         (default allreduce); NCCL's the same (ncclReduceScatter, ncclAllGather: where\n"
        "                         the count divides by the ranks); matmul-allreduce (--m, --n, --k, --partitions\n"
        "                         as for run): beside cuBLASLt's product then ncclAllReduce; allgather-matmul:\n"
        "                         beside ncclAllGather of A then cuBLASLt's product; each of the two alone\n"
        "                         (matmul-allreduce without NCCL, as where ranks share a GPU: the products\n"
        "                         and our allreduce alone)\n"
        "  --no-nccl              leave out NCCL\n"
        "  --force-host           stage through pinned host memory even where peer access works\n"
        "  --csv FILE             write bench's rows (with NCCL's beside them) as CSV\n",
        AR_CLI_O(BACKEND) | AR_CLI_O(TOPOLOGY) | AR_CLI_O(MODEL) | AR_CLI_O(ALGO) | AR_CLI_O(SIZE) |
            AR_CLI_O(COUNT) | AR_CLI_O(DTYPE) | AR_CLI_O(CHANNELS) | AR_CLI_O(CHUNK) | AR_CLI_O(RANKS) | AR_CLI_O(ITERS) |
            AR_CLI_O(TIMEOUT) | AR_CLI_O(CHECK) | AR_CLI_O(CSV) | AR_CLI_O(QUIET) | AR_CLI_O(OP) | AR_CLI_O(GEMM_M) |
            AR_CLI_O(GEMM_N) | AR_CLI_O(GEMM_K) | AR_CLI_O(PARTITIONS),
        AR_CLI_O(BACKEND) | AR_CLI_O(TOPOLOGY) | AR_CLI_O(ALGO) | AR_CLI_O(ITERS) | AR_CLI_O(CSV) | AR_CLI_O(OP),
    };
    ar_cli_opts_t o;
    int rc = ar_cli_opts_parse("bench", ac, av, AR_CLI_NO_SIZE, &extra, &o);
    if (rc != AR_CLI_OK) {
        ar_cli_opts_free(&o);
        free(av);
        return rc == AR_CLI_HELP ? 0 : rc;
    }
    /* What the command line says wrong comes first, in any build; then whether this
     * build and machine can measure at all. */
    const ar_backend_ops_t *ops = (o.seen & AR_CLI_O(BACKEND)) ? ar_backend_find(o.backends[0]) : NULL;
    if (ops && !(ops->caps & AR_BACKEND_HARDWARE)) {
        rc = ar_cli_fail("bench", "--backend %s: bench measures real GPUs; use --backend cuda", o.backends[0]);
        goto out;
    }
    ar_topo_t *topo = NULL;
    if (topo_spec && (rc = ar_cli_topo_open(&o, topo_spec, &topo)) != AR_CLI_OK) goto out;
    ar_error_t aerr;
    ar_error_clear(&aerr);
    if (ar_hw_bench_available(&aerr) != AR_OK) {
        ar_topo_free(topo);
        rc = ar_cli_fail_err("bench", &aerr);
        goto out;
    }
    char spec[32];
    if (!topo) {
        int n = ar_hw_gpu_count();
        if (n <= 0) {
            rc = ar_cli_fail("bench", "no CUDA GPU visible on this machine");
            goto out;
        }
        snprintf(spec, sizeof spec, n > 2 ? "switch:%d" : "full:%d", n);
        topo_spec = spec;
        if ((rc = ar_cli_topo_open(&o, topo_spec, &topo)) != AR_CLI_OK) goto out;
    }

    uint64_t sizes[AR_CLI_MAX_SIZES];
    int nsizes = 0;
    if (o.ncounts || o.nsizes) {
        nsizes = ar_cli_nsizes(&o);
        for (int i = 0; i < nsizes && i < AR_CLI_MAX_SIZES; i++) {
            uint64_t count;
            ar_cli_size_at(&o, i, o.dtypes[0], &sizes[i], &count);
        }
    } else {
        for (uint64_t s = 8 << 10; s <= (1ull << 30); s *= 2) sizes[nsizes++] = s;
    }
    ar_out_t csvo = {0};
    if (o.csv && (rc = ar_cli_out_open("bench", "--csv", o.csv, &csvo)) != AR_CLI_OK) {
        ar_topo_free(topo);
        goto out;
    }
    FILE *csv = csvo.f;
    ar_hw_bench_opts_t bo = {
        .algos = algos, .sizes = sizes, .nsizes = nsizes, .dtype = o.dtypes[0],
        .channels = o.nchannels ? o.channels[0] : 0, .chunk_bytes = o.nchunks ? o.chunks[0] : 0, .iters = o.iters > 1 ? o.iters : 0,
        .repeats = x.repeats, .check = o.check, .nccl = x.nccl, .force_host = x.force_host,
        .timeout_s = o.timeout_s, .coll = o.coll, .gemm_n = o.gemm_n, .gemm_k = o.gemm_k, .partitions = o.partitions,
    };
    ar_error_t err;
    ar_error_clear(&err);
    int wrong = 0;
    out_t out = {.csv = csv};
    if (csv) ar_bench_csv_header(csv);
    const ar_bench_sink_t sink = {.row = out_row, .note = out_note, .ctx = &out};
    int brc = ar_hw_bench(topo, &bo, &sink, &wrong, &err);
    ar_topo_free(topo);
    if (brc != AR_OK) rc = ar_cli_fail_err("bench", &err);
    else rc = wrong ? 1 : 0;
    /* every row measured is kept, a wrong one too */
    const int wrc = ar_cli_out_close("bench", &csvo, 0);
    if (!rc) rc = wrc;
out:
    ar_cli_opts_free(&o);
    free(av);
    return rc;
}
