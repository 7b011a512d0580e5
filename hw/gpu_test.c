/* hw: the cuda backend's tests on real GPUs. A plain program (the GPU machines
 * have no Check): each case prints "ok" or "FAIL" with what went wrong; exit 1
 * when any failed, 77 (automake's skip) with a message when no GPU is visible.
 *
 * Covered: every algorithm that fits and the probe plans, every dtype, element
 * counts that are not multiples of the vector width, one rank per GPU and
 * several (4, 6, 8 ranks on 2 GPUs), fresh random inputs per check, outputs
 * poisoned before every execution, float64 reference; back-to-back executions
 * on the same buffers (flag epochs); the host-staging path, forced; a WAIT that
 * is never met (timeout, then the GPUs still work); a placement whose blocks
 * cannot all be resident (refused up front). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "validate/bench.h"
#include "hw/cuda.h"
#include "arsim/algo.h"
#include "arsim/util.h"

static int failures, passes, skips;
static int verbose;
/* --quick: a small cover of the same cases (2 layouts unless --layout names one, small counts, bf16 and fp32),
 * sized for compute-sanitizer, which slows kernels by one or two orders of magnitude. */
static int quick;
/* --layout K: only the layout with K ranks per GPU (1..4), so a slow tool can
 * cover each layout in its own time limit. 0: every layout. */
static int only_layout;

static void report(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(int ok, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (!ok || verbose) {
        printf("%s ", ok ? "ok  " : "FAIL");
        vprintf(fmt, ap);
        printf("\n");
    }
    va_end(ap);
    if (ok) passes++;
    else failures++;
}

static const char *const probes[] = {"x-oneshot", "x-pushshot", "x-twoshot", NULL};

/* The x-oneshot probe plan. */
static int probe(const ar_topo_t *t, uint64_t count, int channels, ar_plan_t **p, ar_error_t *e) {
    ar_algo_opts_t ao = AR_ALGO_OPTS_DEFAULT;
    ao.channels = channels;
    return ar_algo_build("x-oneshot", t, count, AR_BF16, &ao, p, e);
}

/* Build a plan by name (algorithm or probe). */
static int build(const char *name, const ar_topo_t *t, uint64_t count, ar_dtype_t dt, int channels, ar_plan_t **p,
                 ar_error_t *e) {
    ar_algo_opts_t ao = AR_ALGO_OPTS_DEFAULT;
    ao.channels = channels ? channels : !strncmp(name, "x-", 2) ? 2 : 0; /* a probe takes 2 here */
    return ar_algo_build(name, t, count, dt, &ao, p, e);
}

/* One checked execute: iters executions, each poisoned first and checked after. */
static void check_one(ar_backend_t *be, const ar_topo_t *t, const char *name, uint64_t count, ar_dtype_t dt,
                      int channels, int force_host, unsigned long seed) {
    ar_plan_t *p = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    char msg[400];
    int rc = build(name, t, count, dt, channels, &p, &e);
    if (rc == AR_EUNFIT || (rc != AR_OK && force_host)) {
        if (verbose) printf("skip %s on %d ranks: %s\n", name, t->nranks, ar_error_format(&e, msg, sizeof msg));
        skips++;
        return;
    }
    if (rc != AR_OK) {
        report(0, "%s %d ranks %s count %llu: build: %s", name, t->nranks, ar_dtype_name(dt),
               (unsigned long long)count, ar_error_format(&e, msg, sizeof msg));
        return;
    }
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    o.check = 1;
    o.iters = 3;
    o.seed = seed;
    o.force_host = force_host;
    ar_result_t res;
    memset(&res, 0, sizeof res);
    rc = be->ops->execute(be, p, &o, &res, &e);
    if (rc != AR_OK)
        report(0, "%s %d ranks %s count %llu ch %d%s: %s", name, t->nranks, ar_dtype_name(dt), (unsigned long long)count,
               p->nchannels, force_host ? " host" : "", ar_error_format(&e, msg, sizeof msg));
    else
        report(res.checked && res.check_ok, "%s %d ranks %s count %llu ch %d%s: max rel err %.3g %s", name,
               t->nranks, ar_dtype_name(dt), (unsigned long long)count, p->nchannels, force_host ? " host" : "",
               res.max_rel_err, res.check_msg);
    ar_plan_free(p);
}

/* Many executions back to back with no host sync between (flags count up across
 * epochs), then one check. */
static void check_back_to_back(ar_backend_t *b, const ar_topo_t *t, const char *name, uint64_t count, int channels) {
    ar__cuda_t *be = (ar__cuda_t *)b;
    ar_plan_t *p = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    char msg[400];
    if (build(name, t, count, AR_BF16, channels, &p, &e) != AR_OK) {
        skips++;
        return;
    }
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    int rc = ar__cuda_prepare(be, p, &o, &e);
    const uint64_t seed = 0x1234 + count;
    if (rc == AR_OK) rc = ar__cuda_fill_inputs(be, p, seed, &e);
    for (int round = 0; round < 3 && rc == AR_OK; round++) {
        if (rc == AR_OK) rc = ar__cuda_poison(be, p, &e);
        for (int i = 0; i < 40 && rc == AR_OK; i++) rc = ar__cuda_enqueue(be, p, 5.0, &e);
        if (rc == AR_OK) rc = ar__cuda_sync(be, p, 5.0, &e);
        ar_result_t res;
        memset(&res, 0, sizeof res);
        if (rc == AR_OK) rc = ar__cuda_check(be, p, seed, &res, &e);
        if (rc != AR_OK) report(0, "%s back-to-back %d ranks: %s", name, t->nranks, ar_error_format(&e, msg, sizeof msg));
        else report(res.check_ok, "%s %d ranks: 40 executions back to back, round %d: %s", name, t->nranks, round,
                    res.check_msg);
    }
    be->plan = NULL;
    ar_plan_free(p);
}

/* A fused op: matmul-allreduce, the algorithm's allreduce per partition beside the products
 * (cuBLASLt on their own streams), checked against the float64 sum of every rank's product;
 * allgather-matmul, its all-gather of A's rows beside each rank's product of them, checked
 * against the float64 product. Three executions a call, then 20 back to back with one check. */
static void check_fused(ar_backend_t *b, const ar_topo_t *t, const char *name, ar_dtype_t dt, int partitions,
                        ar_coll_t coll) {
    ar__cuda_t *be = (ar__cuda_t *)b;
    ar_algo_opts_t ao = AR_ALGO_OPTS_DEFAULT;
    ao.coll = coll;
    ao.gemm = (ar_gemm_t){96, 72, 40};
    ao.partitions = partitions;
    ar_plan_t *p = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    char msg[400];
    int rc = ar_algo_build(name, t, 96 * 72, dt, &ao, &p, &e);
    if (rc == AR_EUNFIT) {
        skips++;
        return;
    }
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    o.check = 1;
    o.iters = 3;
    ar_result_t res;
    memset(&res, 0, sizeof res);
    if (rc == AR_OK) rc = b->ops->execute(b, p, &o, &res, &e);
    if (rc != AR_OK) report(0, "%s %s %d ranks %s %d partitions: %s", ar_coll_name(coll), name, t->nranks,
                            ar_dtype_name(dt), partitions, ar_error_format(&e, msg, sizeof msg));
    else report(res.checked && res.check_ok, "%s %s %d ranks %s %d partitions: max rel err %.3g %s", ar_coll_name(coll),
                name, t->nranks, ar_dtype_name(dt), partitions, res.max_rel_err, res.check_msg);
    const uint64_t seed = 0x77 + (uint64_t)t->nranks;
    if (rc == AR_OK) rc = ar__cuda_fill_inputs(be, p, seed, &e);
    if (rc == AR_OK) rc = ar__cuda_poison(be, p, &e);
    for (int i = 0; i < 20 && rc == AR_OK; i++) rc = ar__cuda_enqueue(be, p, 5.0, &e);
    if (rc == AR_OK) rc = ar__cuda_sync(be, p, 5.0, &e);
    memset(&res, 0, sizeof res);
    if (rc == AR_OK) rc = ar__cuda_check(be, p, seed, &res, &e);
    if (rc != AR_OK) report(0, "%s %s back to back %d ranks: %s", ar_coll_name(coll), name, t->nranks,
                            ar_error_format(&e, msg, sizeof msg));
    else report(res.check_ok, "%s %s %d ranks %s: 20 executions back to back: %s", ar_coll_name(coll), name, t->nranks,
                ar_dtype_name(dt), res.check_msg);
    be->plan = NULL;
    ar_plan_free(p);
}

static void check_timeout(ar_backend_t *b, const ar_topo_t *t) {
    ar_plan_t *p = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    char msg[400];
    /* Rank 0 waits for a SIGNAL nobody sends; the others finish at once. */
    ar_plan_new("never", t->nranks, 1, 64, AR_BF16, &p);
    ar_plan_wait(p, 0, 0, 0, 1);
    for (int r = 0; r < t->nranks; r++) ar_plan_copy(p, r, 0, ar_addr(r, AR_BUF_OUT, 0), ar_addr(r, AR_BUF_IN, 0), 64);
    ar_plan_finish(p);
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    o.timeout_s = 0.5;
    ar_result_t res;
    memset(&res, 0, sizeof res);
    double t0 = ar_now_s();
    int rc = b->ops->execute(b, p, &o, &res, &e);
    double dt = ar_now_s() - t0;
    report(rc == AR_ETIMEOUT && dt < 5.0, "a WAIT never met ends with AR_ETIMEOUT after %.2f s (timeout 0.5 s): %s", dt,
           rc == AR_ETIMEOUT ? ar_error_format(&e, msg, sizeof msg) : ar_strerror(rc));
    ar_plan_free(p);
    /* The GPUs stay usable: a correct plan right after. */
    check_one(b, t, "x-oneshot", 4099, AR_BF16, 2, 0, 99);
}

static void check_occupancy(ar_backend_t *b, const ar_topo_t *t) {
    ar_plan_t *p = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    char msg[400];
    if (probe(t, 1 << 20, 1000, &p, &e) != AR_OK) {
        report(0, "occupancy: build: %s", ar_error_format(&e, msg, sizeof msg));
        return;
    }
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    int rc = ar__cuda_prepare((ar__cuda_t *)b, p, &o, &e);
    report(rc == AR_ELIMIT && strstr(e.message, "deadlock") != NULL,
           "1000 channels per rank are refused up front: %s", rc ? ar_error_format(&e, msg, sizeof msg) : "accepted");
    ar_plan_free(p);
}

static void check_force_host(ar_backend_t *b, const ar_topo_t *t) {
    /* A plan that reads peers' memory is refused when host staging is forced ... */
    ar_plan_t *p = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    char msg[400];
    ar__cuda_t *be = (ar__cuda_t *)b;
    if (be->nused > 1) {
        probe(t, 1000, 1, &p, &e);
        ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
        o.force_host = 1;
        int rc = ar__cuda_prepare(be, p, &o, &e);
        report(rc == AR_ENOTSUP, "forced host staging refuses a peer-reading plan: %s",
               rc ? ar_error_format(&e, msg, sizeof msg) : "accepted");
        ar_plan_free(p);
        be->plan = NULL;
    }
    /* ... and the naive algorithm runs through pinned host memory. */
    static const uint64_t counts[] = {1, 1001, 65539};
    for (int d = 0; d < AR_NDTYPE; d++)
        for (int i = 0; i < 3; i++) check_one(b, t, "naive", counts[i], (ar_dtype_t)d, 0, 1, 7 + i);
}

/* ARSIM_CUDA_TIMELINE: after a run, one row per op of the plan, in each block's order,
 * every op starting where the one before it ended (or, where it begins a launch of its own,
 * no earlier: the first op of a stage (ar_plan_stages), a product, the op after one) and not
 * ending before it starts. fused: a 2stage allreduce fused with a
 * product in 2 partitions (2 stages, its products rows too), else the allreduce alone. */
static void check_timeline(const ar_topo_t *t, int fused) {
    char path[1024];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/arsim-timeline-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        report(0, "timeline: cannot make a temporary file");
        return;
    }
    close(fd);
    setenv("ARSIM_CUDA_TIMELINE", path, 1);
    ar_backend_t *b = NULL;
    ar_plan_t *p = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    char msg[400];
    int rc = ar_cuda_backend.open(t, &b, &e);
    unsetenv("ARSIM_CUDA_TIMELINE");
    ar_algo_opts_t ao = AR_ALGO_OPTS_DEFAULT;
    ao.channels = 2;
    if (fused) {
        ao.coll = AR_COLL_MATMUL_ALLREDUCE;
        ao.gemm = (ar_gemm_t){256, 256, 64};
        ao.partitions = 2;
    }
    if (rc == AR_OK) rc = ar_algo_build("2stage", t, fused ? 256 * 256 : 65536, AR_BF16, &ao, &p, &e);
    uint32_t *stage = NULL, nstages = 0;
    if (rc == AR_OK && !(stage = calloc(p->nops, sizeof *stage))) rc = AR_ENOMEM;
    if (rc == AR_OK) nstages = (uint32_t)ar_plan_stages(p, stage);
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    if (rc == AR_OK) rc = ar__cuda_prepare((ar__cuda_t *)b, p, &o, &e);
    if (rc == AR_OK) rc = ar__cuda_enqueue((ar__cuda_t *)b, p, 5.0, &e);
    if (rc == AR_OK) rc = ar__cuda_sync((ar__cuda_t *)b, p, 5.0, &e);
    if (rc != AR_OK) {
        report(0, "timeline: %s", ar_error_format(&e, msg, sizeof msg));
    } else {
        FILE *f = fopen(path, "r");
        char line[256];
        uint32_t rows = 0, bad = 0;
        int lr = -1, lc = -1;
        double prev_end = 0;
        if (f && fgets(line, sizeof line, f) && !strncmp(line, "gpu,rank,chan,op,code,target,start_ns,end_ns", 44))
            while (fgets(line, sizeof line, f)) {
                int g, r, c, tg;
                unsigned i;
                char code[16];
                double s, en;
                if (sscanf(line, "%d,%d,%d,%u,%15[A-Z],%d,%lf,%lf", &g, &r, &c, &i, code, &tg, &s, &en) != 8) {
                    bad++;
                    break;
                }
                const uint32_t at = ar_plan_chan(p, r, c)->first + i;
                const ar_op_t *op = &p->ops[at];
                /* a launch of its own: the first op of a stage, a product, the op after one */
                const int starts_stage = i && (stage[at] != stage[at - 1] || op->code == AR_OP_COMPUTE ||
                                               p->ops[at - 1].code == AR_OP_COMPUTE);
                if (strcmp(code, ar_op_name(op->code)) || en < s || s < 0 ||
                    (r == lr && c == lc && (starts_stage ? s < prev_end : s != prev_end)))
                    bad++;
                lr = r, lc = c, prev_end = en;
                rows++;
            }
        else
            bad++;
        if (f) fclose(f);
        report(rows == p->nops && !bad && nstages == (fused ? 2u : 1u),
               "timeline%s: %u rows for %u ops in %u stages, %u out of order or mislabelled", fused ? " (fused)" : "",
               rows, p->nops, nstages, bad);
    }
    free(stage);
    remove(path);
    if (p) ar_plan_free(p);
    if (b) ar_cuda_backend.close(b);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-v")) verbose = 1;
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--layout") && i + 1 < argc) {
            char *end;
            long k = strtol(argv[++i], &end, 10);
            if (*end || k < 1 || k > 4) {
                fprintf(stderr, "hw/gpu_test: --layout '%s': want ranks per GPU, 1 to 4\n", argv[i]);
                return 2;
            }
            only_layout = (int)k;
        } else {
            fprintf(stderr, "hw/gpu_test: unknown argument '%s' (use -v, --quick, --layout K)\n", argv[i]);
            return 2;
        }
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    int ngpus = ar_hw_gpu_count();
    if (ngpus <= 0) {
        printf("SKIP: hw/gpu_test: no CUDA GPU visible on this machine; the cuda backend's GPU tests need one "
               "(scripts/gpu-check.sh runs them on a GPU machine)\n");
        return 77;
    }
    if (ngpus > 2) ngpus = 2; /* the several-ranks-per-GPU layouts below are written for 2 */
    char spec[32];
    snprintf(spec, sizeof spec, "full:%d", ngpus);
    const int rank_counts[] = {ngpus, 2 * ngpus, 3 * ngpus, 4 * ngpus};
    double t0 = ar_now_s();
    for (int rc_i = 0; rc_i < (quick && !only_layout ? 2 : 4); rc_i++) {
        if (only_layout && rc_i + 1 != only_layout) continue;
        const int nranks = rank_counts[rc_i];
        ar_topo_t *t = NULL;
        ar_error_t e;
        ar_error_clear(&e);
        char msg[400];
        if (ar_topo_open(spec, NULL, &t, &e) != AR_OK ||
            (nranks != t->nranks && ar_topo_place_blocks(t, nranks, &e) != AR_OK)) {
            report(0, "topology %s with %d ranks: %s", spec, nranks, ar_error_format(&e, msg, sizeof msg));
            ar_topo_free(t);
            continue;
        }
        ar_backend_t *b = NULL;
        if (ar_cuda_backend.open(t, &b, &e) != AR_OK) {
            report(0, "open %d ranks: %s", nranks, ar_error_format(&e, msg, sizeof msg));
            ar_topo_free(t);
            continue;
        }
        printf("# %d ranks on %d GPUs (%s), peer access %s\n", nranks, ngpus, spec,
               ((ar__cuda_t *)b)->p2p ? "on" : "off");
        /* Every plan: probes, then every registered algorithm. */
        const char *names[64];
        int nn = 0;
        for (int i = 0; probes[i]; i++) names[nn++] = probes[i];
        const ar_algo_t *const *all = ar_algo_all();
        for (int i = 0; all && all[i] && nn < 63; i++) names[nn++] = all[i]->name;
        static const uint64_t counts[] = {1, 7, 1003, 65536 + 5, (1 << 20) + 3, (8 << 20) + 3};
        unsigned long seed = 1000 * nranks;
        for (int n = 0; n < nn; n++)
            for (int d = 0; d < AR_NDTYPE; d++)
                for (int c = 0; c < 6; c++) {
                    if (quick && (c > 3 || d == AR_FP16)) continue;
                    if (c == 4 && (d != AR_BF16 || nranks > 2 * ngpus)) continue; /* keep it quick */
                    /* 16 MB: peers' kernels overlap the other GPU's poisoning unless ordered */
                    if (c == 5 && (d != AR_BF16 || nranks != ngpus)) continue;
                    check_one(b, t, names[n], counts[c], (ar_dtype_t)d, c == 3 ? 3 : 0, 0, ++seed);
                }
        for (int n = 0; n < nn; n++) check_back_to_back(b, t, names[n], quick ? 1003 : 100003, 0);
        for (int n = 0; n < nn; n++) /* the algorithms (not the probes) fused with a product */
            if (strncmp(names[n], "x-", 2) && strcmp(names[n], "innet"))
                for (int d = 0; d < AR_NDTYPE; d += quick ? 2 : 1)
                    check_fused(b, t, names[n], (ar_dtype_t)d, d == 1 ? 1 : 3, AR_COLL_MATMUL_ALLREDUCE);
        static const char *const gatherers[] = {"ring", "direct"};
        for (int n = 0; n < 2; n++)
            for (int d = 0; d < AR_NDTYPE; d += quick ? 2 : 1)
                check_fused(b, t, gatherers[n], (ar_dtype_t)d, 1, AR_COLL_ALLGATHER_MATMUL);
        if (rc_i == 0) {
            check_force_host(b, t);
            check_timeout(b, t);
            check_occupancy(b, t);
            check_timeline(t, 0);
            check_timeline(t, 1);
        }
        ar_cuda_backend.close(b);
        ar_topo_free(t);
        printf("# %d ranks: %d passed, %d failed so far (%.1f s)\n", nranks, passes, failures, ar_now_s() - t0);
        fflush(stdout);
    }
    printf("%s: hw/gpu_test: %d passed, %d failed, %d skipped (did not fit)\n", failures ? "FAIL" : "PASS", passes,
           failures, skips);
    return failures ? 1 : 0;
}
