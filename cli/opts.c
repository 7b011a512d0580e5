/* cli: the shared option parser (run, sweep, bench). Every bad flag or value
 * ends in one line on stderr naming the flag and the value, and status 2. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "cli/opts.h"
#include "validate/calib.h"

int ar_cli_fail(const char *cmd, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* One line, whatever the message holds. */
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    fflush(stdout);
    if (cmd && *cmd) fprintf(stderr, "arsim %s: %s\n", cmd, msg);
    else fprintf(stderr, "arsim: %s\n", msg);
    fflush(stderr);
    return 2;
}

int ar_cli_fail_err(const char *cmd, const ar_error_t *err) {
    char buf[1024];
    ar_error_format(err, buf, sizeof buf);
    ar_cli_fail(cmd, "%s", buf);
    return err->code == AR_ECHECK ? 1 : 2;
}

int ar_cli_parse_int(const char *s, long lo, long hi, long *out) {
    long v;
    if (ar_parse_long(s, &v) != AR_OK || v < lo || v > hi) return AR_EINVAL;
    *out = v;
    return AR_OK;
}

int ar_cli_parse_double(const char *s, double lo, double hi, double *out) {
    double v;
    if (ar_parse_double(s, &v) != AR_OK || v < lo || v > hi) return AR_EINVAL;
    *out = v;
    return AR_OK;
}

int ar_cli_parse_int_list(const char *s, int *out, int max, int *n, long lo, long hi) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long v;
        if (*n >= max || ar_cli_parse_int(tok, lo, hi, &v) != AR_OK) return AR_EINVAL;
        out[(*n)++] = (int)v;
    }
    return *n ? AR_OK : AR_EINVAL;
}

int ar_cli_check_path(const char *cmd, const char *flag, const char *path) {
    if (!*path) return ar_cli_fail(cmd, "%s '': empty file name", flag);
    if (path[0] == '-' && path[1])
        return ar_cli_fail(cmd, "%s '%s': looks like an option, not a file (a file of that name: ./%s)", flag, path,
                           path);
    return AR_CLI_OK;
}

int ar_cli_out_open(const char *cmd, const char *flag, const char *path, ar_out_t *out) {
    char label[160];
    ar_error_t err;
    snprintf(label, sizeof label, "%s %s", flag, path);
    if (ar_out_open(out, label, path, &err) != AR_OK) return ar_cli_fail_err(cmd, &err);
    return AR_CLI_OK;
}

int ar_cli_out_close(const char *cmd, ar_out_t *out, int rc) {
    if (!out->f) return rc;
    if (rc && !out->failed) {
        ar_out_abort(out);
        return rc;
    }
    ar_error_t err;
    if (ar_out_close(out, &err) != AR_OK) {
        ar_cli_fail_err(cmd, &err);
        return 1;
    }
    return rc;
}

int ar_cli_backend_can(const char *name, unsigned caps) {
    const ar_backend_ops_t *b = ar_backend_find(name);
    return b && (b->caps & caps) == caps;
}

int ar_cli_roots(const ar_cli_opts_t *o, const ar_topo_t *t, const ar_algo_t *a, int *out, int max) {
    if (!a || !a->takes_root || (!o->root_all && o->roots[0] < 0) || max < 1) {
        out[0] = -1;
        return 1;
    }
    if (!o->root_all) {
        for (int i = 0; i < o->nroots && i < max; i++) out[i] = o->roots[i];
        return o->nroots < max ? o->nroots : max;
    }
    int n = 0;
    for (int r = 0; r < t->nranks && n < max; r++) out[n++] = r;
    return n;
}

const char *ar_cli_unprefixed(const char *msg, const char *name) {
    size_t n = strlen(name);
    return strncmp(msg, name, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ' ? msg + n + 2 : msg;
}

int ar_cli_check_backends(const ar_cli_opts_t *o) {
    for (int i = 0; o->check && i < o->nbackends; i++)
        if (!ar_cli_backend_can(o->backends[i], AR_BACKEND_DATA)) {
            char which[128];
            ar_backend_names_with(AR_BACKEND_DATA, which, sizeof which);
            return ar_cli_fail(o->cmd, "--check needs a backend that moves real data, %s (not '%s')", which,
                               o->backends[i]);
        }
    return AR_CLI_OK;
}

const char *ar_cli_default_backend(void) {
    return ar_backend_default();
}

/* Option values (long-only options have values >= 256; extras >= 1000): 256 + the
 * option's AR_CLI_OPT_* bit number. */
enum {
#define AR_CLI_OPT_ENUM(name) O_##name = 256 + AR_CLI_BIT_##name,
    AR_CLI_SHARED_OPTS(AR_CLI_OPT_ENUM)
#undef AR_CLI_OPT_ENUM
};

static const struct option base_longopts[] = {
    {"backend", required_argument, NULL, O_BACKEND},
    {"topology", required_argument, NULL, O_TOPOLOGY},
    {"model", required_argument, NULL, O_MODEL},
    {"set", required_argument, NULL, O_SET},
    {"algo", required_argument, NULL, O_ALGO},
    {"size", required_argument, NULL, O_SIZE},
    {"count", required_argument, NULL, O_COUNT},
    {"dtype", required_argument, NULL, O_DTYPE},
    {"buffer", required_argument, NULL, O_BUFFER},
    {"channels", required_argument, NULL, O_CHANNELS},
    {"chunk", required_argument, NULL, O_CHUNK},
    {"iters", required_argument, NULL, O_ITERS},
    {"warmup", required_argument, NULL, O_WARMUP},
    {"seed", required_argument, NULL, O_SEED},
    {"timeout", required_argument, NULL, O_TIMEOUT},
    {"check", no_argument, NULL, O_CHECK},
    {"breakdown", no_argument, NULL, O_BREAKDOWN},
    {"verify", no_argument, NULL, O_VERIFY},
    {"no-verify", no_argument, NULL, O_NO_VERIFY},
    {"dump-plan", no_argument, NULL, O_DUMP_PLAN},
    {"csv", required_argument, NULL, O_CSV},
    {"json", required_argument, NULL, O_JSON},
    {"ranks", required_argument, NULL, O_RANKS},
    {"root", required_argument, NULL, O_ROOT},
    {"quiet", no_argument, NULL, O_QUIET},
    {"max-mem", required_argument, NULL, O_MAX_MEM},
    {"op", required_argument, NULL, O_OP},
    {"m", required_argument, NULL, O_GEMM_M},
    {"n", required_argument, NULL, O_GEMM_N},
    {"k", required_argument, NULL, O_GEMM_K},
    {"partitions", required_argument, NULL, O_PARTITIONS},
    {"symmetry", required_argument, NULL, O_SYMMETRY},
    {"help", no_argument, NULL, 'h'},
};
#define NBASE ((int)(sizeof base_longopts / sizeof base_longopts[0]))

/* Each shared option once, with its default; a command's help shows those it takes. */
static const struct { unsigned opt; const char *text; } usage_lines[] = {
    {AR_CLI_O(BACKEND), "  --backend ref|analytic|sim|cuda   executor (default: sim when built, else analytic)\n"},
    {AR_CLI_O(TOPOLOGY), "  --topology FILE|SPEC   YAML file, shipped name, or ring_1d:N, torus_2d:WxH, mesh_2d:WxH,\n"
                         "                         full:N, switch:N (default " AR_CLI_DEFAULT_TOPOLOGY ")\n"},
    {AR_CLI_O(MODEL), "  --model FILE|NAME      hardware model replacing the topology's own (on the GPUs,\n"
     "                         full:N and switch:N take their kind's: h100_sxm, h200_sxm)\n"},
    {AR_CLI_O(SET), "  --set KEY=V[,KEY=V..]  change model keys for a what-if: a key of arsim model keys, or\n"
                    "                         memory.LEVEL.KEY, links.KIND.KEY (e.g. switch_reduce=1)\n"},
    {AR_CLI_O(OP), "  --op allreduce|reducescatter|allgather|matmul-allreduce|allgather-matmul   the\n"
                   "                         collective (default allreduce); reducescatter and allgather over\n"
                   "                         each rank's shard of the vector; matmul-allreduce: each rank's\n"
                   "                         M x K by K x N product, summed over the ranks, overlapped;\n"
                   "                         allgather-matmul: A's rows gathered from the ranks, each rank's\n"
                   "                         multiplied by this rank's B as they arrive (arsim list algos)\n"},
    {AR_CLI_O(GEMM_M), "  --m M[:M][,..]         fused ops: rows of the product, A:B doubles (default\n"
                       "                         512:16384); the output, M x N elements, is the size\n"},
    {AR_CLI_O(GEMM_N), "  --n N                  fused ops: columns of the product (default 8192)\n"},
    {AR_CLI_O(GEMM_K), "  --k K                  fused ops: the inner dimension (default 8192)\n"},
    {AR_CLI_O(PARTITIONS), "  --partitions P         matmul-allreduce: partitions of rows, each reduced while the\n"
                           "                         next computes (default: the model's fastest; P divides M)\n"},
    {AR_CLI_O(ALGO), "  --algo NAME[,NAME..]|all|auto   algorithms (default all that fit; auto: the fastest predicted)\n"},
    {AR_CLI_O(SIZE), "  --size B[:B][,..]      bytes per rank, K/M/G suffixes; A:B doubles from A to B\n"
                     "                         (default 8K:1G)\n"},
    {AR_CLI_O(COUNT), "  --count N[,N..]        elements per rank instead of --size\n"},
    {AR_CLI_O(DTYPE), "  --dtype bf16|fp16|fp32 element type (default bf16)\n"},
    {AR_CLI_O(BUFFER), "  --buffer tcm|sram|hbm  memory level of the buffers (default hbm)\n"},
    {AR_CLI_O(CHANNELS), "  --channels N           channels per rank (default: from the model, shown in each row)\n"},
    {AR_CLI_O(CHUNK), "  --chunk B              pipelining chunk in bytes (default: the model's fastest with the\n"
                              "                         channels, default or asked; a row shows its largest op)\n"},
    {AR_CLI_O(RANKS), "  --ranks N              place N ranks on the devices in blocks (N a multiple of devices;\n"
                      "                         default one per device)\n"},
    {AR_CLI_O(ROOT), "  --root R[,R..]|all     center_root: the root ranks to run (default the centre)\n"},
    {AR_CLI_O(ITERS), "  --iters N              executions timed (default 1)\n"},
    {AR_CLI_O(WARMUP), "  --warmup N             executions before timing (default 0)\n"},
    {AR_CLI_O(SEED), "  --seed S               input generator seed (default 1)\n"},
    {AR_CLI_O(TIMEOUT), "  --timeout SECONDS      cuda: a wait never met ends the run after this (default 5)\n"},
    {AR_CLI_O(CHECK), "  --check                compare every rank's output with float64 (ref, cuda); exit 1 on mismatch\n"},
    {AR_CLI_O(BREAKDOWN), "  --breakdown            critical path by term and per-link traffic\n"},
    {AR_CLI_O(VERIFY), "  --verify | --no-verify verify every plan first (default: when it is cheap)\n"},
    {AR_CLI_O(DUMP_PLAN), "  --dump-plan            print each plan before running it\n"},
    {AR_CLI_O(CSV), "  --csv FILE             write the rows as CSV (- for standard output)\n"},
    {AR_CLI_O(JSON), "  --json FILE            write the rows as JSON (- for standard output)\n"},
    {AR_CLI_O(MAX_MEM), "  --max-mem B            refuse a case whose estimated memory is larger, before building\n"
                        "                         it (K/M/G/T; default 80% of this machine's memory)\n"},
    {AR_CLI_O(QUIET), "  -q, --quiet            no progress notes\n"},
    {AR_CLI_O(SYMMETRY), "  --symmetry auto|on|off analytic, sim: where every rank's ops are a translate of rank\n"
                         "                         0's (or of its row's) on a ring_1d, torus_2d, full or switch\n"
                         "                         topology, run rank 0's (its row's) for all (auto: where the\n"
                         "                         plan has 2^20 ops or more; on: always; off: never); the same\n"
                         "                         time; ring on a torus or mesh runs on its cycle, a ring_1d of\n"
                         "                         the same links, unless off (docs/SIM.md, \"Symmetry\")\n"},
};

void ar_cli_opts_usage(FILE *f, unsigned shows) {
    for (size_t i = 0; i < sizeof usage_lines / sizeof usage_lines[0]; i++)
        if (usage_lines[i].opt & shows) fputs(usage_lines[i].text, f);
}

static char *own(ar_cli_opts_t *o, const char *s) {
    char *c = strdup(s);
    char **n = realloc(o->owned, sizeof *n * (size_t)(o->nowned + 1));
    if (!c || !n) {
        free(c);
        if (n) o->owned = n;
        return NULL;
    }
    o->owned = n;
    o->owned[o->nowned++] = c;
    return c;
}

void ar_cli_opts_free(ar_cli_opts_t *o) {
    for (int i = 0; i < o->nowned; i++) free(o->owned[i]);
    free(o->owned);
    o->owned = NULL;
    o->nowned = 0;
}

/* Split a comma-separated list in place; empty items are an error. */
static int split(char *s, char **items, int max, int *n) {
    int k = 0;
    for (char *p = s;;) {
        char *c = strchr(p, ',');
        if (c) *c = 0;
        if (!*p || k == max) return AR_EINVAL;
        items[k++] = p;
        if (!c) break;
        p = c + 1;
    }
    *n = k;
    return AR_OK;
}

/* A copy of arg owned by o, split into items: AR_CLI_OK, or the failure printed. */
static int own_items(ar_cli_opts_t *o, const char *cmd, const char *flag, const char *arg,
                     char **items, int *n) {
    char *copy = own(o, arg);
    if (!copy) return ar_cli_fail(cmd, "out of memory");
    if (split(copy, items, AR_CLI_MAX_LIST, n) != AR_OK)
        return ar_cli_fail(cmd, "%s '%s': empty item or too many items", flag, arg);
    return AR_CLI_OK;
}

static int parse_u64(const char *s, uint64_t *out) {
    if (!s || !*s || *s == '-' || *s == '+') return AR_EINVAL;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end) return AR_EINVAL;
    if (errno == ERANGE) return AR_ELIMIT;
    *out = v;
    return AR_OK;
}

/* The first occurrence of a list option (bit: AR_CLI_O) replaces the default, later ones
 * append: o->seen takes an option's bit once the whole occurrence has been handled, so
 * its first item is the one that replaces. */
static int first_time(const ar_cli_opts_t *o, unsigned bit) { return !(o->seen & bit); }

static int add_algo(ar_cli_opts_t *o, const char *cmd, const char *name) {
    if (strcmp(name, "all") == 0) {
        o->algo_all = 1;
        for (const ar_algo_t *const *a = ar_algo_all(); a && *a; a++) {
            int dup = 0;
            for (int i = 0; i < o->nalgos; i++) dup |= o->algos[i] == *a;
            if (!dup && o->nalgos < AR_CLI_MAX_LIST) {
                snprintf(o->algo_names[o->nalgos], sizeof o->algo_names[0], "%s", (*a)->name);
                o->algos[o->nalgos++] = *a;
            }
        }
        return AR_CLI_OK;
    }
    const ar_algo_t *a = ar_algo_find(name);
    if (!a) {
        char known[512];
        ar_algo_names(NULL, known, sizeof known);
        return ar_cli_fail(cmd, "--algo '%s': unknown algorithm (known: %s, all)", name, known);
    }
    const char *as = a->probe ? name : a->name; /* x-chain34, not x-chainN */
    if (strlen(as) >= sizeof o->algo_names[0]) return ar_cli_fail(cmd, "--algo '%s': name too long", name);
    for (int i = 0; i < o->nalgos; i++)
        if (strcmp(o->algo_names[i], as) == 0) return AR_CLI_OK;
    if (o->nalgos == AR_CLI_MAX_LIST) return ar_cli_fail(cmd, "--algo: too many algorithms");
    snprintf(o->algo_names[o->nalgos], sizeof o->algo_names[0], "%s", as);
    o->algos[o->nalgos++] = a;
    return AR_CLI_OK;
}

static int check_backend(const char *cmd, const char *name) {
    if (ar_backend_find(name)) return AR_CLI_OK;
    if (ar_backend_known_missing(name))
        return ar_cli_fail(cmd, "--backend '%s': this build has no %s backend (%s)", name, name,
                           ar_backend_missing_why(name));
    char known[256] = "";
    size_t at = 0;
    for (const ar_backend_ops_t *const *b = ar_backend_all(); b && *b && at + 2 < sizeof known; b++)
        at += (size_t)snprintf(known + at, sizeof known - at, "%s%s", at ? ", " : "", (*b)->name);
    return ar_cli_fail(cmd, "--backend '%s': unknown backend (known: %s)", name, known);
}

/* Handle one list-valued option. `lists` allows several comma-separated values. */
static int list_opt(ar_cli_opts_t *o, const char *cmd, int opt, const char *flag,
                    const char *arg, int lists) {
    char *copy = own(o, arg);
    if (!copy) return ar_cli_fail(cmd, "out of memory");
    char *items[AR_CLI_MAX_LIST];
    int n = 1;
    items[0] = copy;
    if (lists && split(copy, items, AR_CLI_MAX_LIST, &n) != AR_OK)
        return ar_cli_fail(cmd, "%s '%s': empty item or more than %d items", flag, arg,
                           AR_CLI_MAX_LIST);
    ar_error_t err;
    ar_error_clear(&err);
    for (int i = 0; i < n; i++) {
        const char *v = items[i];
        switch (opt) {
        case O_BACKEND:
            if (i == 0 && first_time(o, AR_CLI_O(BACKEND))) o->nbackends = 0;
            if (check_backend(cmd, v)) return 2;
            if (o->nbackends == AR_CLI_MAX_LIST) return ar_cli_fail(cmd, "%s: too many backends", flag);
            o->backends[o->nbackends++] = v;
            break;
        case O_TOPOLOGY:
            if (i == 0 && first_time(o, AR_CLI_O(TOPOLOGY))) o->ntopos = 0;
            if (o->ntopos == AR_CLI_MAX_LIST) return ar_cli_fail(cmd, "%s: too many topologies", flag);
            o->topos[o->ntopos++] = v;
            break;
        case O_DTYPE: {
            ar_dtype_t t;
            if (i == 0 && first_time(o, AR_CLI_O(DTYPE))) o->ndtypes = 0;
            if (ar_dtype_parse(v, &t) != AR_OK)
                return ar_cli_fail(cmd, "%s '%s': unknown element type (use bf16, fp16 or fp32)", flag, v);
            for (int k = 0; k < o->ndtypes; k++)
                if (o->dtypes[k] == t) return ar_cli_fail(cmd, "%s '%s': given twice", flag, v);
            o->dtypes[o->ndtypes++] = t;
            break;
        }
        case O_BUFFER: {
            ar_mem_t m;
            if (i == 0 && first_time(o, AR_CLI_O(BUFFER))) o->nbuffers = 0;
            if (ar_mem_parse(v, &m) != AR_OK)
                return ar_cli_fail(cmd, "%s '%s': unknown memory level (use tcm, sram or hbm)", flag, v);
            for (int k = 0; k < o->nbuffers; k++)
                if (o->buffers[k] == m) return ar_cli_fail(cmd, "%s '%s': given twice", flag, v);
            o->buffers[o->nbuffers++] = m;
            break;
        }
        case O_CHANNELS: {
            long c;
            if (i == 0 && first_time(o, AR_CLI_O(CHANNELS))) o->nchannels = 0;
            if (ar_cli_parse_int(v, 1, 1024, &c) != AR_OK)
                return ar_cli_fail(cmd, "%s '%s': expected a number of channels from 1 to 1024", flag, v);
            if (o->nchannels == AR_CLI_MAX_LIST) return ar_cli_fail(cmd, "%s: too many values", flag);
            o->channels[o->nchannels++] = (int)c;
            break;
        }
        case O_CHUNK: {
            uint64_t b;
            if (i == 0 && first_time(o, AR_CLI_O(CHUNK))) o->nchunks = 0;
            if (ar_size_parse(v, &b, &err) != AR_OK)
                return ar_cli_fail(cmd, "%s '%s': %s", flag, v, err.message);
            /* below one 16-byte vector a plan is all ops and no bytes; above 1 GiB no size is chunked */
            if (b < AR_CLI_CHUNK_MIN || b > AR_CLI_CHUNK_MAX)
                return ar_cli_fail(cmd, "%s '%s': a chunk is 16 bytes to 1G", flag, v);
            if (o->nchunks == AR_CLI_MAX_LIST) return ar_cli_fail(cmd, "%s: too many values", flag);
            o->chunks[o->nchunks++] = b;
            break;
        }
        }
    }
    return AR_CLI_OK;
}

static int size_opt(ar_cli_opts_t *o, const char *cmd, const char *flag, const char *arg) {
    char *items[AR_CLI_MAX_LIST];
    int n, rc = own_items(o, cmd, flag, arg, items, &n);
    if (rc != AR_CLI_OK) return rc;
    if (first_time(o, AR_CLI_O(SIZE))) o->nsizes = 0;
    for (int i = 0; i < n; i++) {
        ar_error_t err;
        ar_error_clear(&err);
        int got = 0;
        if (ar_size_range_parse(items[i], o->sizes + o->nsizes, AR_CLI_MAX_SIZES - o->nsizes,
                                &got, &err) != AR_OK)
            return ar_cli_fail(cmd, "%s '%s': %s", flag, items[i], err.message);
        o->nsizes += got;
    }
    return AR_CLI_OK;
}

static int count_opt(ar_cli_opts_t *o, const char *cmd, const char *flag, const char *arg) {
    char *items[AR_CLI_MAX_LIST];
    int n, rc = own_items(o, cmd, flag, arg, items, &n);
    if (rc != AR_CLI_OK) return rc;
    if (first_time(o, AR_CLI_O(COUNT))) o->ncounts = 0;
    for (int i = 0; i < n; i++) {
        uint64_t c;
        rc = parse_u64(items[i], &c);
        if (rc == AR_ELIMIT) return ar_cli_fail(cmd, "%s '%s': count is too large", flag, items[i]);
        if (rc != AR_OK)
            return ar_cli_fail(cmd, "%s '%s': expected a number of elements", flag, items[i]);
        if (c == 0) return ar_cli_fail(cmd, "%s '%s': count must be at least 1 element", flag, items[i]);
        /* Bytes must fit 64 bits at the widest dtype. */
        if (c > UINT64_MAX / 8) return ar_cli_fail(cmd, "%s '%s': count is too large", flag, items[i]);
        if (o->ncounts == AR_CLI_MAX_SIZES) return ar_cli_fail(cmd, "%s: too many counts", flag);
        o->counts[o->ncounts++] = c;
    }
    return AR_CLI_OK;
}

void ar_cli_case_coll(const ar_cli_opts_t *o, uint64_t count, ar_algo_opts_t *ao) {
    ao->coll = o->coll;
    if (!ar_coll_fused(o->coll) || !o->gemm_n) return;
    ao->gemm = (ar_gemm_t){count / o->gemm_n, o->gemm_n, o->gemm_k};
    ao->partitions = o->partitions;
}

static void defaults(ar_cli_opts_t *o, const char *cmd, unsigned flags) {
    memset(o, 0, sizeof *o);
    o->cmd = cmd;
    o->backends[0] = ar_cli_default_backend();
    o->nbackends = 1;
    o->topos[0] = AR_CLI_DEFAULT_TOPOLOGY;
    o->ntopos = 1;
    o->dtypes[0] = AR_BF16;
    o->ndtypes = 1;
    o->buffers[0] = AR_MEM_HBM;
    o->nbuffers = 1;
    o->channels[0] = 0;
    o->nchannels = 1;
    o->chunks[0] = 0;
    o->nchunks = 1;
    o->roots[0] = -1;
    o->nroots = 1;
    o->iters = 1;
    o->seed = 1;
    o->timeout_s = 5.0;
    o->verify = -1;
    o->symmetry = AR_SYMMETRY_AUTO;
    o->max_mem = ar_case_default_max_mem();
    if (!(flags & AR_CLI_NO_SIZE)) {
        int n = 0;
        ar_size_range_parse("8K:1G", o->sizes, AR_CLI_MAX_SIZES, &n, NULL);
        o->nsizes = n;
    }
}

int ar_cli_opts_parse(const char *cmd, int argc, char **argv, unsigned flags,
                      const ar_cli_extra_t *extra, ar_cli_opts_t *o) {
    defaults(o, cmd, flags);
    int lists = (flags & AR_CLI_LISTS) != 0;
    const unsigned takes = extra && extra->takes ? extra->takes : AR_CLI_ALL_OPTS;

    /* Shared long options plus the subcommand's own. */
    int nextra = 0;
    if (extra && extra->longopts)
        while (extra->longopts[nextra].name) nextra++;
    struct option *longopts = calloc((size_t)(NBASE + nextra + 1), sizeof *longopts);
    if (!longopts) return ar_cli_fail(cmd, "out of memory");
    memcpy(longopts, base_longopts, sizeof base_longopts);
    for (int i = 0; i < nextra; i++) longopts[NBASE + i] = extra->longopts[i];
    char shortopts[64];
    snprintf(shortopts, sizeof shortopts, ":hq%s", extra && extra->shortopts ? extra->shortopts : "");

    int rc = AR_CLI_OK;
    opterr = 0;
    optind = 0; /* full re-initialisation (GNU): the parser may run more than once */
    for (;;) {
        int li = -1;
        int c = getopt_long(argc, argv, shortopts, longopts, &li);
        if (c == -1) break;
        /* The flag, for messages. */
        char flag[64];
        const char *word = (optind >= 2 && optind - 1 < argc) ? argv[optind - 1] : "?";
        if (li >= 0) snprintf(flag, sizeof flag, "--%s", longopts[li].name);
        else if (c > ' ' && c < 127 && c != '?' && c != ':') snprintf(flag, sizeof flag, "-%c", c);
        else {
            snprintf(flag, sizeof flag, "%s", word);
            char *eq = strchr(flag, '=');
            if (eq) *eq = 0;
        }
        if (c == '?') {
            if (optopt >= 256 || (li >= 0 && optopt))
                rc = ar_cli_fail(cmd, "option '%s' takes no value", flag);
            else if (optopt && optopt < 256 && optopt > ' ')
                rc = ar_cli_fail(cmd, "unknown option '-%c' (see arsim%s%s --help)", optopt, *cmd ? " " : "", cmd);
            else
                rc = ar_cli_fail(cmd, "unknown option '%s' (see arsim%s%s --help)", word, *cmd ? " " : "", cmd);
            goto out;
        }
        if (c == ':') {
            rc = ar_cli_fail(cmd, "option '%s' needs a value", flag);
            goto out;
        }
        if (c == 'q') c = O_QUIET;
        const unsigned bit = c >= 256 && c < 256 + AR_CLI_NOPTS ? 1u << (c - 256) : 0;
        if (bit && !(takes & bit)) {
            rc = ar_cli_fail(cmd, "%s does not apply to arsim %s (see arsim %s --help)", flag, cmd, cmd);
            goto out;
        }
        long v;
        double d;
        uint64_t u;
        ar_error_t err;
        ar_error_clear(&err);
        switch (c) {
        case 'h':
            printf("usage: arsim%s%s [options]\n", *cmd ? " " : "", cmd);
            ar_cli_opts_usage(stdout, takes & ~(extra ? extra->own_help : 0u));
            if (extra && extra->usage) fputs(extra->usage, stdout);
            rc = AR_CLI_HELP;
            goto out;
        case O_QUIET: o->quiet = 1; break;
        case O_ALGO: {
            char *items[AR_CLI_MAX_LIST];
            int n;
            if ((rc = own_items(o, cmd, flag, optarg, items, &n)) != AR_CLI_OK) goto out;
            if (first_time(o, AR_CLI_O(ALGO))) { o->nalgos = 0; o->algo_all = 0; }
            for (int i = 0; i < n; i++)
                if ((rc = add_algo(o, cmd, items[i])) != AR_CLI_OK) goto out;
            break;
        }
        case O_SIZE:
            if ((rc = size_opt(o, cmd, flag, optarg)) != AR_CLI_OK) goto out;
            break;
        case O_COUNT:
            if ((rc = count_opt(o, cmd, flag, optarg)) != AR_CLI_OK) goto out;
            break;
        case O_BACKEND:
        case O_DTYPE:
        case O_BUFFER:
        case O_CHANNELS:
        case O_CHUNK:
        case O_TOPOLOGY:
            /* dtype and buffer are short enough never to need a comma: lists always allowed. */
            if ((rc = list_opt(o, cmd, c, flag, optarg,
                               lists || c == O_DTYPE || c == O_BUFFER)) != AR_CLI_OK)
                goto out;
            break;
        case O_MODEL:
            if (!*optarg) { rc = ar_cli_fail(cmd, "%s '': empty model name", flag); goto out; }
            o->model = optarg;
            break;
        case O_SET:
            if (!*optarg) { rc = ar_cli_fail(cmd, "%s '': want KEY=VALUE", flag); goto out; }
            o->model_set = optarg;
            break;
        case O_ITERS:
            if (ar_cli_parse_int(optarg, 1, 1000000, &v) != AR_OK) {
                rc = ar_cli_fail(cmd, "%s '%s': expected a number of iterations from 1 to 1000000", flag, optarg);
                goto out;
            }
            o->iters = (int)v;
            break;
        case O_WARMUP:
            if (ar_cli_parse_int(optarg, 0, 1000000, &v) != AR_OK) {
                rc = ar_cli_fail(cmd, "%s '%s': expected a number from 0 to 1000000", flag, optarg);
                goto out;
            }
            o->warmup = (int)v;
            break;
        case O_SEED:
            if (parse_u64(optarg, &u) != AR_OK) {
                rc = ar_cli_fail(cmd, "%s '%s': expected a non-negative integer", flag, optarg);
                goto out;
            }
            o->seed = (unsigned long)u;
            break;
        case O_OP:
            if (ar_coll_parse(optarg, &o->coll) != AR_OK) {
                rc = ar_cli_fail(cmd, "%s '%s': expected allreduce, reducescatter, allgather, matmul-allreduce or allgather-matmul", flag,
                                 optarg);
                goto out;
            }
            break;
        case O_GEMM_M: {
            ar_error_t e;
            ar_error_clear(&e);
            int got = 0;
            char *items[AR_CLI_MAX_LIST];
            int n;
            if ((rc = own_items(o, cmd, flag, optarg, items, &n)) != AR_CLI_OK) goto out;
            for (int i = 0; i < n; i++, o->ngemm_ms += got) {
                if (ar_size_range_parse(items[i], o->gemm_ms + o->ngemm_ms, AR_CLI_MAX_SIZES - o->ngemm_ms, &got, &e) != AR_OK) {
                    rc = ar_cli_fail(cmd, "%s '%s': %s", flag, items[i], e.message);
                    goto out;
                }
            }
            break;
        }
        case O_GEMM_N:
        case O_GEMM_K:
            if (parse_u64(optarg, &u) != AR_OK || u == 0 || u > UINT32_MAX) {
                rc = ar_cli_fail(cmd, "%s '%s': expected a number from 1 to %u", flag, optarg, (unsigned)UINT32_MAX);
                goto out;
            }
            *(c == O_GEMM_N ? &o->gemm_n : &o->gemm_k) = u;
            break;
        case O_SYMMETRY:
            if (!strcmp(optarg, "auto")) o->symmetry = AR_SYMMETRY_AUTO;
            else if (!strcmp(optarg, "on")) o->symmetry = AR_SYMMETRY_ON;
            else if (!strcmp(optarg, "off")) o->symmetry = AR_SYMMETRY_OFF;
            else {
                rc = ar_cli_fail(cmd, "%s '%s': expected auto, on or off", flag, optarg);
                goto out;
            }
            break;
        case O_PARTITIONS:
            if (ar_cli_parse_int(optarg, 1, 4096, &v) != AR_OK) {
                rc = ar_cli_fail(cmd, "%s '%s': expected a number from 1 to 4096", flag, optarg);
                goto out;
            }
            o->partitions = (int)v;
            break;
        case O_MAX_MEM: {
            uint64_t b;
            ar_error_t e;
            ar_error_clear(&e);
            if (ar_size_parse(optarg, &b, &e) != AR_OK) {
                rc = ar_cli_fail(cmd, "%s '%s': %s", flag, optarg, e.message);
                goto out;
            }
            if (b < ((uint64_t)1 << 20)) {
                rc = ar_cli_fail(cmd, "%s '%s': expected at least 1M", flag, optarg);
                goto out;
            }
            o->max_mem = (double)b;
            break;
        }
        case O_TIMEOUT:
            if (ar_cli_parse_double(optarg, 1e-3, 86400, &d) != AR_OK) {
                rc = ar_cli_fail(cmd, "%s '%s': expected seconds from 0.001 to 86400", flag, optarg);
                goto out;
            }
            o->timeout_s = d;
            break;
        case O_RANKS:
            if (ar_cli_parse_int(optarg, 1, 1 << 20, &v) != AR_OK) {
                rc = ar_cli_fail(cmd, "%s '%s': expected a number of ranks of at least 1", flag, optarg);
                goto out;
            }
            o->ranks = (int)v;
            break;
        case O_ROOT:
            if (strcmp(optarg, "all") == 0) {
                o->root_all = 1;
                o->nroots = 0;
            } else if (ar_cli_parse_int_list(optarg, o->roots, AR_CLI_MAX_LIST, &o->nroots, 0, 1 << 20) != AR_OK) {
                rc = ar_cli_fail(cmd, "%s '%s': expected rank numbers (0,3,5) or all", flag, optarg);
                goto out;
            } else {
                o->root_all = 0;
                for (int i = 0; i < o->nroots; i++)
                    for (int j = 0; j < i; j++)
                        if (o->roots[i] == o->roots[j]) {
                            rc = ar_cli_fail(cmd, "%s '%s': rank %d given twice", flag, optarg, o->roots[i]);
                            goto out;
                        }
            }
            break;
        case O_CHECK: o->check = 1; break;
        case O_BREAKDOWN: o->breakdown = 1; break;
        case O_VERIFY: o->verify = 1; break;
        case O_NO_VERIFY: o->verify = 0; break;
        case O_DUMP_PLAN: o->dump_plan = 1; break;
        case O_CSV:
        case O_JSON:
            if ((rc = ar_cli_check_path(cmd, flag, optarg))) goto out;
            if (c == O_CSV) o->csv = optarg;
            else o->json = optarg;
            break;
        default:
            if (extra && extra->handle) {
                if ((rc = extra->handle(c, optarg, extra->ctx)) != 0) goto out;
                break;
            }
            rc = ar_cli_fail(cmd, "unknown option '%s'", flag);
            goto out;
        }
        o->seen |= bit;
    }
    if (optind < argc) {
        rc = ar_cli_fail(cmd, "unexpected argument '%s' (see arsim%s%s --help)", argv[optind], *cmd ? " " : "", cmd);
        goto out;
    }
    if (o->nalgos == 0) add_algo(o, cmd, "all");
    /* the algorithms that compute the collective: all keeps those, a name must be one */
    int kept = 0;
    for (int i = 0; i < o->nalgos; i++) {
        if (ar_algo_computes(o->algos[i], o->coll)) {
            if (kept != i) {
                o->algos[kept] = o->algos[i];
                memcpy(o->algo_names[kept], o->algo_names[i], sizeof o->algo_names[0]);
            }
            kept++;
        } else if (!o->algo_all) {
            char known[512];
            ar_algo_names(&o->coll, known, sizeof known);
            rc = ar_cli_fail(cmd, "--algo %s computes no %s (%s, auto do)", o->algo_names[i], ar_coll_name(o->coll),
                             known);
            goto out;
        }
    }
    o->nalgos = kept;
    if ((o->root_all || o->roots[0] >= 0) && !o->algo_all) {
        int any = 0;
        for (int i = 0; i < o->nalgos; i++) any |= o->algos[i]->takes_root;
        if (!any) {
            rc = ar_cli_fail(cmd, "--root: no algorithm asked has a root (center_root has one)");
            goto out;
        }
    }
    /* A fused op's size is its product's: M x N output elements. */
    const unsigned gemm_opts = AR_CLI_O(GEMM_M) | AR_CLI_O(GEMM_N) | AR_CLI_O(GEMM_K) | AR_CLI_O(PARTITIONS);
    if (!ar_coll_fused(o->coll) && (o->seen & gemm_opts)) {
        rc = ar_cli_fail(cmd, "--m, --n, --k and --partitions shape a fused op's product: they need --op matmul-allreduce or "
                         "allgather-matmul");
        goto out;
    }
    if (ar_coll_fused(o->coll)) {
        if (o->seen & (AR_CLI_O(SIZE) | AR_CLI_O(COUNT))) {
            rc = ar_cli_fail(cmd, "--op %s takes its size from the product: --m ROWS (and --n, --k), not --size or --count",
                             ar_coll_name(o->coll));
            goto out;
        }
        if (o->coll == AR_COLL_ALLGATHER_MATMUL && o->partitions > 1) {
            rc = ar_cli_fail(cmd, "--partitions %d: an allgather-matmul multiplies each rank's rows whole, as they "
                             "arrive (--partitions is matmul-allreduce's)", o->partitions);
            goto out;
        }
        if (!o->gemm_n) o->gemm_n = 8192;
        if (!o->gemm_k) o->gemm_k = 8192;
        if (!o->ngemm_ms) ar_size_range_parse("512:16384", o->gemm_ms, AR_CLI_MAX_SIZES, &o->ngemm_ms, NULL);
        o->nsizes = 0;
        o->ncounts = 0;
        for (int i = 0; i < o->ngemm_ms; i++) {
            const uint64_t m = o->gemm_ms[i];
            if (o->partitions && m % (uint64_t)o->partitions) {
                rc = ar_cli_fail(cmd, "--partitions %d does not divide --m %" PRIu64 " rows evenly", o->partitions, m);
                goto out;
            }
            if (m > UINT64_MAX / 8 / o->gemm_n || m * o->gemm_k > UINT64_MAX / 8 - o->gemm_k * o->gemm_n) {
                rc = ar_cli_fail(cmd, "--m %" PRIu64 " x --n %" PRIu64 " x --k %" PRIu64 ": the operands overflow 64 bits",
                                 m, o->gemm_n, o->gemm_k);
                goto out;
            }
            o->counts[o->ncounts++] = m * o->gemm_n;
        }
    }
    if ((o->seen & AR_CLI_O(SIZE)) && (o->seen & AR_CLI_O(COUNT))) {
        rc = ar_cli_fail(cmd, "--size and --count both give the message size: use one (--count N is N elements)");
        goto out;
    }
    /* A size is whole elements of every dtype asked: nothing is rounded behind the user's back. */
    for (int i = 0; o->ncounts == 0 && i < o->nsizes; i++)
        for (int d = 0; d < o->ndtypes; d++) {
            const uint64_t es = ar_dtype_size(o->dtypes[d]), b = o->sizes[i];
            if (b % es == 0) continue;
            char lower[32] = "";
            if (b > es) snprintf(lower, sizeof lower, "%" PRIu64 " or ", b / es * es);
            rc = ar_cli_fail(cmd, "--size %" PRIu64 ": not a whole number of %s elements (%" PRIu64
                             " bytes each): use %s%" PRIu64 ", or --count", b, ar_dtype_name(o->dtypes[d]), es,
                             lower, (b / es + 1) * es);
            goto out;
        }
    if (o->nsizes == 0 && o->ncounts == 0 && !(flags & AR_CLI_NO_SIZE)) {
        int n = 0;
        ar_size_range_parse("8K:1G", o->sizes, AR_CLI_MAX_SIZES, &n, NULL);
        o->nsizes = n;
    }
out:
    free(longopts);
    return rc;
}

/* One KEY=VALUE of --set into model m: the key (ROOT, memory.LEVEL.KEY or links.KIND.KEY)
 * from the model's key table, the value in its unit and range. AR_CLI_OK or 2 (said). */
static int set_key(const char *cmd, ar_model_t *m, const char *item) {
    char key[128];
    const char *eq = strchr(item, '=');
    if (!eq || eq == item || (size_t)(eq - item) >= sizeof key)
        return ar_cli_fail(cmd, "--set '%s': want KEY=VALUE (arsim model keys lists the keys)", item);
    memcpy(key, item, (size_t)(eq - item));
    key[eq - item] = 0;
    char *end;
    errno = 0;
    const double v = strtod(eq + 1, &end);
    if (!eq[1] || *end || errno || !isfinite(v) || v < 0)
        return ar_cli_fail(cmd, "--set '%s': the value must be a finite number >= 0", item);
    const char *name = key;
    int l = 0;
    ar_model_sect_t sect = AR_MK_ROOT;
    char part[64];
    if (!strncmp(key, "memory.", 7) || !strncmp(key, "links.", 6)) {
        const int mem = key[0] == 'm';
        const char *at = key + (mem ? 7 : 6), *dot = strchr(at, '.');
        if (!dot || (size_t)(dot - at) >= sizeof part)
            return ar_cli_fail(cmd, "--set '%s': want %s.NAME.KEY", item, mem ? "memory" : "links");
        memcpy(part, at, (size_t)(dot - at));
        part[dot - at] = 0;
        name = dot + 1;
        if (mem) {
            ar_mem_t lv;
            if (ar_mem_parse(part, &lv) != AR_OK || !m->mem[lv].present)
                return ar_cli_fail(cmd, "--set '%s': model %s has no memory level '%s'", item, m->name, part);
            l = (int)lv, sect = AR_MK_LEVEL;
        } else {
            if ((l = ar_model_link_kind(m, part)) < 0)
                return ar_cli_fail(cmd, "--set '%s': model %s has no link kind '%s'", item, m->name, part);
            sect = AR_MK_LINK;
        }
    }
    const ar_model_key_t *k = ar_model_key_find(name);
    if (!k || k->section != sect)
        return ar_cli_fail(cmd, "--set '%s': no model key '%s'%s (arsim model keys)", item, key,
                           k ? " there" : "");
    if ((k->required || v != 0) && (v < k->min || v > k->max))
        return ar_cli_fail(cmd, "--set '%s': %g %s is out of range: %g to %g %s%s", item, v, k->unit, k->min, k->max,
                           k->unit, k->required ? "" : " (or 0: none)");
    *ar_model_slot(m, k, l) = v;
    return AR_CLI_OK;
}

/* --set on t's model: each key changed, and the model named for it (NAME+KEY=V..), so
 * every row says which what-if it is. */
static int apply_set(const ar_cli_opts_t *o, ar_topo_t *t) {
    char items[1024];
    snprintf(items, sizeof items, "%s", o->model_set);
    char name[AR_NAME_MAX];
    snprintf(name, sizeof name, "%s", t->model->name);
    for (char *save = NULL, *it = strtok_r(items, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        if (set_key(o->cmd, t->model, it) != AR_CLI_OK) return 2;
        const size_t n = strlen(name);
        snprintf(name + n, sizeof name - n, "+%s", it);
    }
    snprintf(t->model->name, sizeof t->model->name, "%s", name);
    return AR_CLI_OK;
}

/* Whether the command runs on this machine's GPUs: bench, or a cuda backend among those asked. */
static int on_gpus(const ar_cli_opts_t *o) {
    if (!strcmp(o->cmd, "bench")) return 1;
    for (int i = 0; i < o->nbackends; i++)
        if (!strcmp(o->backends[i], "cuda")) return 1;
    return 0;
}

int ar_cli_topo_open(const ar_cli_opts_t *o, const char *spec, ar_topo_t **out) {
    ar_error_t err;
    ar_error_clear(&err);
    ar_topo_t *t = NULL;
    *out = NULL;
    /* on the GPUs, a board's defaults (channels, chunks, auto's choice) come from their own kind's model */
    const char *model = o->model ? o->model : on_gpus(o) ? ar_calib_gpu_model(spec) : NULL;
    if (ar_topo_open(spec, model, &t, &err) != AR_OK) {
        if (!err.message[0] && !err.file[0]) snprintf(err.file, sizeof err.file, "%s", spec);
        return ar_cli_fail_err(o->cmd, &err) ? 2 : 2;
    }
    if (o->model_set && apply_set(o, t) != AR_CLI_OK) {
        ar_topo_free(t);
        return 2;
    }
    if (o->ranks > 0 && o->ranks != t->nranks) {
        if (ar_topo_place_blocks(t, o->ranks, &err) != AR_OK) {
            ar_topo_free(t);
            char buf[512];
            return ar_cli_fail(o->cmd, "--ranks %d on %s: %s", o->ranks, spec,
                               ar_error_format(&err, buf, sizeof buf));
        }
    }
    *out = t;
    return AR_CLI_OK;
}

int ar_cli_nsizes(const ar_cli_opts_t *o) { return o->ncounts > 0 ? o->ncounts : o->nsizes; }

void ar_cli_size_at(const ar_cli_opts_t *o, int i, ar_dtype_t dt, uint64_t *bytes,
                    uint64_t *count) {
    size_t es = ar_dtype_size(dt);
    if (o->ncounts > 0) {
        *count = o->counts[i];
        *bytes = o->counts[i] * es;
    } else {
        /* whole elements: ar_cli_opts_parse refuses any other size */
        *count = (o->sizes[i] + es - 1) / es;
        *bytes = *count * es;
    }
}

ar_run_opts_t ar_cli_run_opts(const ar_cli_opts_t *o, ar_mem_t buffer) {
    ar_run_opts_t ropts = AR_RUN_OPTS_DEFAULT;
    ropts.buffer = buffer;
    ropts.iters = o->iters;
    ropts.warmup = o->warmup;
    ropts.check = o->check;
    ropts.seed = o->seed;
    ropts.timeout_s = o->timeout_s;
    return ropts;
}
