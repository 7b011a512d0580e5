/* validate: the executor's own cost per op, from probe plans (algorithms/probes.c) run by the
 * cuda backend's timing path (`arsim bench`: a CUDA graph of many executions, median
 * of repeats), one rank per GPU. No allreduce: each probe is a chain of one kind of
 * op on a GPU's own memory and flags.
 *
 *   x-chainN   N local COPYs of 16 bytes on one channel. The slope over N is what one
 *              data op costs in the executor; minus what the model already charges a
 *              local op of that size (the memory latency and its bytes), it is
 *              op_overhead_ns (validate/calib_yaml.c).
 *   x-sigsN    one channel SIGNALs its own rank N times, another WAITs once for all.
 *   x-waitsN   the same, and the waiting channel WAITs N times: from the second on the
 *              flag is there, so (x-waitsN - x-sigsN) / (N - 1) is one WAIT by itself:
 *              wait_overhead_ns.
 *   x-rsigsN   as x-sigsN, the SIGNALs going to the other GPU's rank: the slope is
 *              signal_release_remote_ns.
 *   x-storesig one channel per rank stores its IN into the next rank's SCRATCH (every
 *              rank at once), SIGNALs (the release fence waits for the stores to land)
 *              and WAITs; at LAND_LO and LAND_HI bytes. The slope, bytes over time, is
 *              how fast one channel's peer stores land: chan_write_land_gbps.
 *   x-reduce   one channel per rank REDUCEs two local sources (IN + SCRATCH) into OUT,
 *              at LOCAL_LO and LOCAL_HI bytes: source bytes (2 per output byte) over
 *              the time difference is one channel's load rate from its own GPU,
 *              chan_local_read_gbps (a block keeps few loads in flight; its stores are
 *              posted). x-local (a COPY: one source) beside it is the cross-check.
 *              Again at COLD_LO and COLD_HI bytes, whose three buffers are many times
 *              the L2: the same loads from HBM, chan_local_read_cold_gbps; and with
 *              CROWD_CHANNELS channels, each loading its share beside the others:
 *              how much slower one goes, chan_cold_crowd_gbps.
 *   x-ringsN   every rank SIGNALs the next and WAITs for the previous, N rounds, with 2
 *              ranks (one per GPU: every hop crosses the link) and with 4 (two per GPU:
 *              the hops alternate inside a GPU and across). N rounds end after N hops,
 *              so the 2-rank slope over N is one hop across, X, and the 4-rank slope
 *              (X + L) / 2 gives the hop inside a GPU, L. A hop is a SIGNAL's way to
 *              the WAIT that sees it plus that WAIT: signal_lat_ns (X) and
 *              signal_lat_local_ns (L), each less wait_overhead_ns. The flag ping-pong
 *              (validate/calib.cu) times a spinning warp, not the executor: it is kept in the
 *              file's raw measurements. The 2-rank probe again on RING_CHANNELS
 *              channels per rank: its hop is longer by signal_release_chan_ns x
 *              log2(RING_CHANNELS) (the releases of a rank's channels hold each other
 *              up).
 *   x-pullpush1  on 2 ranks, rank 1's even channels pull from rank 0 while its odd ones
 *              push into it (48 channels), at ISSUE_LO and ISSUE_HI bytes: 2 x the byte
 *              difference over the time difference is what one GPU's channels move over
 *              its links, pulls and pushes together: link_issue_gbps.
 *   x-reducepush  x-reduce's REDUCE storing into the other GPU's SCRATCH (then SIGNAL,
 *              WAIT), one channel per GPU, at LOCAL_LO and LOCAL_HI bytes: 2 x the byte
 *              difference over the time difference is chan_local_read_push_gbps (its
 *              peer stores slow its local loads).
 *   x-hostpair one channel REDUCEs two host slots (one executor group), at LOCAL_LO and
 *              LOCAL_HI bytes: 2 x the byte difference over the time difference is
 *              host_chan_read_pair_gbps (a lone host source goes at host_chan_read_gbps).
 *   x-spairsN  one channel per rank: N times a local 16-byte COPY into the rank's own
 *              SCRATCH and a SIGNAL of its own flag: the slope over x-chainN's (the
 *              COPY alone) is what a SIGNAL's release fence takes with nothing to wait
 *              for, signal_fence_ns. x-ringsN's hops pay it too, so signal_lat_ns and
 *              signal_lat_local_ns are the hops less it.
 *   x-pairsN   2 ranks, one channel: N times COPY 64 KB into the other GPU, SIGNAL it; the
 *              same at one element more, where every COPY ends in a scalar tail (the one
 *              misaligned op plans make: their cuts fall on whole vectors, so an odd count
 *              leaves its last op a tail): the slope difference is op_misalign_ns.
 *   x-rchainN  N local REDUCEs of 16 bytes from 5 sources (4 ranks, two per GPU) and from
 *              3 (2 ranks): the executor loads sources two at a time, so an op of 5 is
 *              three rounds of loads and one of 3 two. The difference of the two slopes
 *              is reduce_group_ns; what the 3-source REDUCE costs over x-chainN's COPY
 *              beyond that one group is reduce_op_ns (the REDUCE's own path).
 *   products   not a probe plan: cuBLASLt's product alone, as `arsim bench --op
 *              matmul-allreduce` times it beside the fused op (one rank on dev0), at
 *              GEMM_SHAPES: one tile in bf16, a large bf16 product and a large fp32 one.
 *              The first is mostly the product's fixed cost (gemm_overhead_ns), the others
 *              the matrix units' rates (gemm_tflops, gemm_fp32_tflops), read through the
 *              model's own waves of tiles (validate/calib_yaml.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "validate/bench.h"
#include "validate/internal.h"

/* The element type every probe runs in: sizes are bytes of it. */
#define PROBE_DTYPE AR_BF16
#define N_LO 2
#define N_HI 34
#define OP_BYTES 16
#define MISALIGN_BYTES (64 << 10)
#define LAND_LO (64 << 10)
#define LAND_HI (1 << 20)
#define LOCAL_LO (1 << 20)
#define LOCAL_HI (8 << 20)
#define COLD_LO (64 << 20)
#define COLD_HI (256 << 20)
/* Channels on the GPU for chan_cold_crowd_gbps: enough that their wait shows (one H200's
 * x-reduce at 256 MB: 4% slower a channel with 8, 15% with 24, 30% with 48), few enough
 * that their demand stays well under the HBM's rate (the memory's own bound would then set
 * their time). */
#define CROWD_CHANNELS 24
#define RING_CHANNELS 24 /* an algorithm's default at large sizes */
#define ISSUE_LO (64 << 20)
#define ISSUE_HI (256 << 20)
#define ISSUE_CHANNELS 48 /* 24 pulling, 24 pushing: enough to fill both directions */

/* 1 when a bench row's algo label names probe `name`: the bench labels a probe run on
 * a set channel count NAME/C. */
static int probe_label_is(const char *label, const char *name) {
    size_t l = strlen(name);
    return !strncmp(label, name, l) && (label[l] == 0 || label[l] == '/');
}

/* What the bench reports of probes names[0..n) at sizes[0..nsizes): us[i][k], and the
 * note that mentions a probe (why it has no time). */
typedef struct times_s {
    const char *const *names;
    int n;
    const uint64_t *sizes;
    int nsizes;
    double (*us)[2];
    char why[8][256];
} times_t;

static void times_row(const ar_bench_row_t *r, void *ctx) {
    times_t *x = ctx;
    for (int i = 0; i < x->n; i++)
        for (int k = 0; k < x->nsizes; k++)
            if (probe_label_is(r->algo, x->names[i]) && r->bytes == x->sizes[k]) x->us[i][k] = r->time_s * 1e6;
}

static void times_note(const char *line, void *ctx) {
    times_t *x = ctx;
    for (int i = 0; i < x->n && i < 8; i++)
        if (!x->why[i][0] && strstr(line, x->names[i])) snprintf(x->why[i], sizeof x->why[i], "%s", line);
}

/* The probe plans names[0..n) at sizes[0..nsizes) (at most 2) bytes per rank on `channels`
 * (0: each probe's own), of dtype elements (PROBE_DTYPE but where a key is of another),
 * through `arsim bench`'s timing path (rows to times_row, no file): us[i][k], NAN when it
 * gave none. */
static int probe_times(const ar_topo_t *t, const char *const *names, int n, const uint64_t *sizes, int nsizes,
                       int channels, int iters, int repeats, ar_dtype_t dtype, double us[][2], times_t *x,
                       ar_error_t *err) {
    char algos[256] = "";
    for (int i = 0; i < n; i++) {
        if (i) strncat(algos, ",", sizeof algos - strlen(algos) - 1);
        strncat(algos, names[i], sizeof algos - strlen(algos) - 1);
        us[i][0] = us[i][1] = NAN;
    }
    memset(x, 0, sizeof *x);
    x->names = names;
    x->n = n;
    x->sizes = sizes;
    x->nsizes = nsizes;
    x->us = us;
    ar_hw_bench_opts_t o;
    memset(&o, 0, sizeof o);
    o.algos = algos;
    o.channels = channels;
    o.sizes = sizes;
    o.nsizes = nsizes;
    o.dtype = dtype;
    o.iters = iters;
    o.repeats = repeats;
    o.timeout_s = 5;
    const ar_bench_sink_t sink = {.row = times_row, .note = times_note, .ctx = x};
    int wrong = 0;
    return ar_hw_bench(t, &o, &sink, &wrong, err);
}

/* Times (us per execution) of the probe plans names[0..n) of dtype elements at two sizes per
 * rank, on `channels` (0: each probe's own): us[i][k] for names[i] at sizes[k]. 1 when every
 * one rose with the size (a slope to read), 0 otherwise (a failure is said unless quiet). */
static int probe_slopes(const ar_topo_t *t, const char *const *names, int n, const uint64_t sizes[2],
                        int channels, int iters, ar_dtype_t dtype, double us[][2], int quiet) {
    ar_error_t e;
    memset(&e, 0, sizeof e);
    times_t x;
    if (probe_times(t, names, n, sizes, 2, channels, iters, 11, dtype, us, &x, &e) != AR_OK && !quiet)
        fprintf(stderr, "calibrate: %s: %s\n", names[0], e.message);
    int ok = 1;
    for (int i = 0; i < n; i++)
        if (!(us[i][0] > 0 && us[i][1] > us[i][0])) {
            if (!quiet) fprintf(stderr, "calibrate: %s gave no slope (%.3f, %.3f us)\n", names[i], us[i][0], us[i][1]);
            ok = 0;
        }
    return ok;
}

/* One probe at sizes[0] and sizes[1] bytes per rank on `channels` (0: its own): its
 * times into us and factor x the byte difference over the time difference into *gbps.
 * 0 when it gave no slope (then the model key `key` is left out: optional). */
static int probe_rate(const ar_topo_t *t, const char *name, const uint64_t sizes[2], int channels, int iters,
                      double factor, double us[2], double *gbps, const char *key, int quiet) {
    const char *const names[1] = {name};
    double t2[1][2];
    if (!probe_slopes(t, names, 1, sizes, channels, iters, PROBE_DTYPE, t2, quiet)) {
        if (!quiet) fprintf(stderr, "calibrate: %s left out\n", key);
        return 0;
    }
    us[0] = t2[0][0];
    us[1] = t2[0][1];
    *gbps = factor * ((double)sizes[1] - (double)sizes[0]) / ((us[1] - us[0]) * 1e3);
    return 1;
}

/* The products' shapes, M x N x K: one 128 x 256 tile over a short inner dimension (its
 * multiply-adds a fraction of a microsecond at the units' rate), and two that fill every
 * unit for many waves. */
static const uint64_t GEMM_SHAPES[3][3] = {{128, 256, 64}, {8192, 8192, 8192}, {4096, 4096, 4096}};
static const ar_dtype_t GEMM_DTYPES[3] = {AR_BF16, AR_BF16, AR_FP32};

/* The bench's note on a fused op unfused: "M x N x K: cuBLASLt + ncclAllReduce T us, the
 * product alone P us, ...": P. */
static void gemm_note(const char *line, void *ctx) {
    double *us = ctx;
    unsigned long long m, n, k;
    double both, alone;
    if (sscanf(line, "%llu x %llu x %llu: cuBLASLt + ncclAllReduce %lf us, the product alone %lf us", &m, &n, &k, &both,
               &alone) == 5)
        *us = alone;
}

static void gemm_row(const ar_bench_row_t *r, void *ctx) {
    (void)r;
    (void)ctx;
}

/* cuBLASLt's product alone at the three shapes, one rank on dev0 (topology full:1 under t's
 * model): fills c->gemm_*. A failure leaves gemm_done 0 (the gemm keys then stay assumed). */
static void calib_gemm(const ar_topo_t *t, ar_calib_t *c, int quiet) {
    ar_model_t *m = NULL;
    ar_topo_t *one = NULL;
    ar_error_t e;
    memset(&e, 0, sizeof e);
    if (ar_model_copy(t->model, &m) != AR_OK || ar_topo_build("full:1", m, &one, &e) != AR_OK) {
        if (!quiet) fprintf(stderr, "calibrate: products: %s; the gemm keys stay assumed\n", e.message[0] ? e.message : "out of memory");
        return;
    }
    int ok = 1;
    for (int s = 0; s < 3 && ok; s++) {
        const uint64_t *shape = GEMM_SHAPES[s];
        const uint64_t bytes = shape[0] * shape[1] * ar_dtype_size(GEMM_DTYPES[s]);
        double us = NAN;
        ar_hw_bench_opts_t o;
        memset(&o, 0, sizeof o);
        o.algos = "ring";
        o.sizes = &bytes;
        o.nsizes = 1;
        o.dtype = GEMM_DTYPES[s];
        o.nccl = 1;
        o.timeout_s = 5;
        o.coll = AR_COLL_MATMUL_ALLREDUCE;
        o.gemm_n = shape[1];
        o.gemm_k = shape[2];
        o.partitions = 1;
        const ar_bench_sink_t sink = {.row = gemm_row, .note = gemm_note, .ctx = &us};
        int wrong = 0;
        memset(&e, 0, sizeof e);
        const int rc = ar_hw_bench(one, &o, &sink, &wrong, &e);
        if (rc != AR_OK || !(us > 0)) {
            if (!quiet)
                fprintf(stderr, "calibrate: product %llu x %llu x %llu %s gave no time%s%s; the gemm keys stay assumed\n",
                        (unsigned long long)shape[0], (unsigned long long)shape[1], (unsigned long long)shape[2],
                        ar_dtype_name(GEMM_DTYPES[s]), e.message[0] ? ": " : "", e.message);
            ok = 0;
            break;
        }
        memcpy(c->gemm_shape[s], shape, sizeof c->gemm_shape[s]);
        c->gemm_dtype[s] = GEMM_DTYPES[s];
        c->gemm_us[s] = us;
    }
    ar_topo_free(one);
    c->gemm_done = ok;
    if (ok && !quiet) {
        char times[256];
        fprintf(stderr, "calibrate: products alone (cuBLASLt): %s\n", ar_calib_gemm_times(c, times, sizeof times));
    }
}

/* x-storesig at LAND_LO and LAND_HI bytes per rank, one channel: fills c->land_*.
 * A failure leaves land_done 0 (the key is then left out: optional). */
static void calib_land(const ar_topo_t *t, ar_calib_t *c, int quiet) {
    const uint64_t sizes[2] = {LAND_LO, LAND_HI};
    if (!probe_rate(t, "x-storesig", sizes, 0, 100, 1.0, c->land_us, &c->land_gbps, "chan_write_land_gbps", quiet))
        return;
    c->land_bytes[0] = LAND_LO;
    c->land_bytes[1] = LAND_HI;
    c->land_done = 1;
    if (!quiet)
        fprintf(stderr, "calibrate: executor: x-storesig %d/%d bytes %.2f/%.2f us (peer stores land at %.1f GB/s per channel)\n",
                LAND_LO, LAND_HI, c->land_us[0], c->land_us[1], c->land_gbps);
}

/* x-reduce and x-local at LOCAL_LO and LOCAL_HI bytes per rank, one channel: fills
 * c->local_*. A failure leaves local_done 0 (the key is then left out: optional). */
static void calib_local(const ar_topo_t *t, ar_calib_t *c, int quiet) {
    static const char *const names[2] = {"x-reduce", "x-local"};
    /* the ranks placed with rank 0 (on one GPU both): their buffers (IN, SCRATCH, OUT each)
     * share its L2, and the larger size keeps them within the near half's reach as one rank's
     * do alone (2 ranks at 8 MB, 48 MB: one H200's channel then loads 45 GB/s, 54 at 4 MB) */
    int alone = 0;
    for (int r = 0; r < t->nranks; r++) alone += t->placement[r] == t->placement[0];
    const uint64_t hi = LOCAL_HI / (uint64_t)(alone > 1 ? alone : 1);
    const uint64_t sizes[2] = {LOCAL_LO, hi > 2 * (uint64_t)LOCAL_LO ? hi : 2 * (uint64_t)LOCAL_LO};
    double us[2][2];
    if (!probe_slopes(t, names, 2, sizes, 0, 20, PROBE_DTYPE, us, quiet)) {
        if (!quiet) fprintf(stderr, "calibrate: chan_local_read_gbps left out\n");
        return;
    }
    for (int k = 0; k < 2; k++) {
        c->local_bytes[k] = (double)sizes[k];
        c->local_reduce_us[k] = us[0][k];
        c->local_copy_us[k] = us[1][k];
    }
    const double span = (double)sizes[1] - (double)sizes[0];
    c->local_read_gbps = 2.0 * span / ((us[0][1] - us[0][0]) * 1e3);
    c->local_copy_read_gbps = span / ((us[1][1] - us[1][0]) * 1e3);
    c->local_done = 1;
    if (!quiet)
        fprintf(stderr, "calibrate: executor: x-reduce %llu/%llu bytes %.2f/%.2f us (one channel loads %.1f GB/s from its own GPU); "
                        "x-local %.2f/%.2f us (%.1f GB/s)\n",
                (unsigned long long)sizes[0], (unsigned long long)sizes[1], us[0][0], us[0][1], c->local_read_gbps, us[1][0],
                us[1][1], c->local_copy_read_gbps);
    /* the same REDUCEs of fp32 elements: the executor's arithmetic per byte is less */
    double f32[1][2];
    if (probe_slopes(t, names, 1, sizes, 0, 20, AR_FP32, f32, quiet)) {
        c->local_fp32_us[0] = f32[0][0];
        c->local_fp32_us[1] = f32[0][1];
        c->local_read_fp32_gbps = 2.0 * span / ((f32[0][1] - f32[0][0]) * 1e3);
        c->local_fp32_done = 1;
        if (!quiet)
            fprintf(stderr, "calibrate: executor: x-reduce of fp32 %llu/%llu bytes %.2f/%.2f us (one channel loads %.1f "
                            "GB/s from its own GPU, %.1f in bf16)\n",
                    (unsigned long long)sizes[0], (unsigned long long)sizes[1], f32[0][0], f32[0][1],
                    c->local_read_fp32_gbps, c->local_read_gbps);
    } else if (!quiet) {
        fprintf(stderr, "calibrate: chan_local_read_fp32_gbps left out\n");
    }
    const uint64_t cold[2] = {COLD_LO, COLD_HI};
    if (!probe_rate(t, "x-reduce", cold, 0, 3, 2.0, c->cold_reduce_us, &c->cold_read_gbps, "chan_local_read_cold_gbps",
                    quiet))
        return;
    c->cold_bytes[0] = COLD_LO;
    c->cold_bytes[1] = COLD_HI;
    c->cold_done = 1;
    if (!quiet)
        fprintf(stderr, "calibrate: executor: x-reduce %d/%d MB %.2f/%.2f us (one channel loads %.1f GB/s from its "
                        "GPU's HBM)\n", COLD_LO >> 20, COLD_HI >> 20, c->cold_reduce_us[0], c->cold_reduce_us[1],
                c->cold_read_gbps);
    /* each rank's channels REDUCE their shares of its bytes; the GPU holds the ranks placed
     * with rank 0, one channel each above */
    const int per_rank = CROWD_CHANNELS / alone > 1 ? CROWD_CHANNELS / alone : 2;
    double share;
    if (!probe_rate(t, "x-reduce", cold, per_rank, 3, 2.0 / per_rank, c->crowd_reduce_us, &share,
                    "chan_cold_crowd_gbps", quiet))
        return;
    c->crowd_gbps = ar_calib_crowd_gbps(alone, c->cold_read_gbps, alone * per_rank, share);
    if (!(c->crowd_gbps > 0)) {
        if (!quiet)
            fprintf(stderr, "calibrate: %d channels loaded %.1f GB/s each from HBM, no slower than %d: "
                            "chan_cold_crowd_gbps left out\n", alone * per_rank, share, alone);
        return;
    }
    c->crowd_alone = alone;
    c->crowd_channels = alone * per_rank;
    c->crowd_read_gbps = share;
    c->crowd_done = 1;
    if (!quiet)
        fprintf(stderr, "calibrate: executor: x-reduce/%d %d/%d MB %.2f/%.2f us (%d channels on the GPU each load %.1f "
                        "GB/s from HBM: %.0f GB/s of demand doubles a load's time)\n",
                per_rank, COLD_LO >> 20, COLD_HI >> 20, c->crowd_reduce_us[0], c->crowd_reduce_us[1],
                c->crowd_channels, share, c->crowd_gbps);
}

/* Times of the counted probe <prefix><N_LO> and <prefix><N_HI> on t, `channels` per rank,
 * `bytes` per rank: 1 when both came and rose with N. */
static int pair_times_at(const ar_topo_t *t, const char *prefix, int channels, uint64_t bytes, double us[2],
                         int quiet) {
    char want[2][32];
    snprintf(want[0], sizeof want[0], "%s%d", prefix, N_LO);
    snprintf(want[1], sizeof want[1], "%s%d", prefix, N_HI);
    const char *const names[2] = {want[0], want[1]};
    double t2[2][2];
    ar_error_t e;
    memset(&e, 0, sizeof e);
    times_t x;
    const uint64_t sizes[1] = {bytes};
    if (probe_times(t, names, 2, sizes, 1, channels, 200, 15, PROBE_DTYPE, t2, &x, &e) != AR_OK && !quiet)
        fprintf(stderr, "calibrate: %s,%s on %d ranks: %s\n", want[0], want[1], t->nranks, e.message);
    us[0] = t2[0][0];
    us[1] = t2[1][0];
    return us[0] > 0 && us[1] > us[0];
}
static int pair_times(const ar_topo_t *t, const char *prefix, int channels, double us[2], int quiet) {
    return pair_times_at(t, prefix, channels, OP_BYTES, us, quiet);
}

/* x-ringsN on 2 ranks (t, one per GPU) and on 4 (t's topology and model again, two
 * ranks per GPU), and x-rchainN on the 4: fills c->ring* and c->group*. A failure leaves
 * rings_done 0 (the ping-pong's latencies are written instead), or group_done 0. */
static void calib_rings(const ar_topo_t *t, ar_calib_t *c, int pair, int quiet) {
    ar_topo_t *t4 = NULL;
    ar_error_t e;
    memset(&e, 0, sizeof e);
    int ok = pair_times(t, "x-rings", 1, c->rings_us[0], quiet) &&
             ar_topo_open(t->path[0] ? t->path : t->name, t->model->path[0] ? t->model->path : t->model->name,
                          &t4, &e) == AR_OK &&
             ar_topo_place_blocks(t4, 4, &e) == AR_OK && pair_times(t4, "x-rings", 1, c->rings_us[1], quiet);
    /* x-rchainN on 4 ranks: REDUCEs of 5 local sources, three groups of loads; over
     * x-chainN's COPYs (one group) the slope is two more groups */
    if (t4 && c->exec_done && pair_times(t4, "x-rchain", 1, c->group_us, quiet)) {
        c->group_srcs = 5;
        const double slope5 = (c->group_us[1] - c->group_us[0]) * 1e3 / (N_HI - N_LO);
        c->group_ns = (slope5 - c->exec_op_ns) / 2;
        c->group_done = c->group_ns > 0;
        /* and on 2 ranks, 3 sources: one group fewer, the same REDUCE otherwise */
        if (c->group_done && pair_times(t, "x-rchain", 1, c->red3_us, quiet)) {
            const double slope3 = (c->red3_us[1] - c->red3_us[0]) * 1e3 / (N_HI - N_LO);
            if (slope5 > slope3 && slope3 > c->exec_op_ns) {
                c->group_ns = slope5 - slope3;
                c->reduce_op_ns = fmax(0, slope3 - c->exec_op_ns - c->group_ns);
                c->red3_done = 1;
            }
        }
        if (!quiet)
            fprintf(stderr, "calibrate: executor: x-rchain %d/%d REDUCEs of 5 sources %.2f/%.2f us, of 3 %.2f/%.2f us: %.0f ns "
                            "per further group of two sources, a REDUCE %.0f ns over a COPY beyond them\n",
                    N_LO, N_HI, c->group_us[0], c->group_us[1], c->red3_us[0], c->red3_us[1], c->group_ns,
                    c->reduce_op_ns);
    }
    ar_topo_free(t4);
    /* x-spairsN: a SIGNAL after each local COPY; over x-chainN's slope, the fence */
    if (c->exec_done && pair_times(t, "x-spairs", 1, c->fence_us, quiet)) {
        c->fence_ns = (c->fence_us[1] - c->fence_us[0]) * 1e3 / (N_HI - N_LO) - c->exec_op_ns;
        c->fence_done = c->fence_ns > 0;
        if (!quiet)
            fprintf(stderr, "calibrate: executor: x-spairs %d/%d (COPY, SIGNAL) pairs %.2f/%.2f us: a SIGNAL's fence takes "
                            "%.0f ns after a local COPY\n", N_LO, N_HI, c->fence_us[0], c->fence_us[1], c->fence_ns);
    }
    /* x-fanN: each COPY followed by a run of AR_PROBE_FAN_FLAGS SIGNALs; over x-spairsN's
     * slope, the run's further releases */
    if (c->fence_done && pair_times(t, "x-fan", 1, c->together_us, quiet)) {
        const double extra = (c->together_us[1] - c->together_us[0]) - (c->fence_us[1] - c->fence_us[0]);
        c->together_ns = extra * 1e3 / (N_HI - N_LO) / (AR_PROBE_FAN_FLAGS - 1);
        c->together_done = c->together_ns > 0;
        if (!quiet)
            fprintf(stderr, "calibrate: executor: x-fan %d/%d %.2f/%.2f us: each further SIGNAL of a run of %u "
                            "takes %.0f ns\n", N_LO, N_HI, c->together_us[0], c->together_us[1], AR_PROBE_FAN_FLAGS,
                    c->together_ns);
    }
    if (!ok) {
        if (!quiet) fprintf(stderr, "calibrate: x-rings gave no slope%s%s: the flag ping-pong's latencies stand\n",
                            e.message[0] ? ": " : "", e.message);
        return;
    }
    double slope[2];
    for (int k = 0; k < 2; k++) slope[k] = (c->rings_us[k][1] - c->rings_us[k][0]) * 1e3 / (N_HI - N_LO);
    c->ring_hop_ns[0] = slope[0];
    c->ring_hop_ns[1] = pair ? 2 * slope[1] - slope[0] : slope[0];
    c->rings_done = c->ring_hop_ns[1] > 0;
    /* The same 2-rank hops with RING_CHANNELS channels per rank: what the releases of a
     * rank's channels cost each other (signal_release_chan_ns). */
    if (pair && c->rings_done && pair_times(t, "x-rings", RING_CHANNELS, c->rings_chan_us, quiet)) {
        c->rings_channels = RING_CHANNELS;
        c->ring_chan_hop_ns = (c->rings_chan_us[1] - c->rings_chan_us[0]) * 1e3 / (N_HI - N_LO);
        if (!quiet)
            fprintf(stderr, "calibrate: executor: x-rings on %d channels: %.0f ns per hop across the link\n",
                    RING_CHANNELS, c->ring_chan_hop_ns);
    }
    if (!quiet)
        fprintf(stderr, "calibrate: executor: x-rings %d/%d rounds, 2 ranks %.2f/%.2f us, 4 ranks %.2f/%.2f us: a hop's "
                        "SIGNAL and WAIT take %.0f ns across the link, %.0f ns inside a GPU\n",
                N_LO, N_HI, c->rings_us[0][0], c->rings_us[0][1], c->rings_us[1][0], c->rings_us[1][1],
                c->ring_hop_ns[0], c->ring_hop_ns[1]);
}

/* x-pairsN at MISALIGN_BYTES and at one element more on 2 ranks, one channel: the same (COPY,
 * SIGNAL) pairs, then each COPY with a scalar tail; fills c->misalign_* (the key is left out
 * without). Not x-mpairsN, whose every op also starts off its 16-byte vector and streams off
 * its 128-byte lines (about 19% slower on an H200): plans start their ops on whole vectors. */
static void calib_misalign(const ar_topo_t *t, ar_calib_t *c, int quiet) {
    const uint64_t odd = MISALIGN_BYTES + ar_dtype_size(PROBE_DTYPE);
    if (pair_times_at(t, "x-pairs", 1, MISALIGN_BYTES, c->misalign_us[0], quiet) &&
        pair_times_at(t, "x-pairs", 1, odd, c->misalign_us[1], quiet)) {
        c->misalign_ns = ((c->misalign_us[1][1] - c->misalign_us[1][0]) - (c->misalign_us[0][1] - c->misalign_us[0][0])) *
                         1e3 / (N_HI - N_LO);
        c->misalign_done = c->misalign_ns > 0;
        if (!quiet)
            fprintf(stderr, "calibrate: executor: x-pairs %d/%d %.2f/%.2f us at %d bytes, %.2f/%.2f us at %llu: an op "
                            "with a scalar tail costs %.0f ns more\n", N_LO, N_HI, c->misalign_us[0][0],
                    c->misalign_us[0][1], MISALIGN_BYTES, c->misalign_us[1][0], c->misalign_us[1][1],
                    (unsigned long long)odd, c->misalign_ns);
    }
}

/* x-pullpush1 at ISSUE_LO and ISSUE_HI bytes per rank on ISSUE_CHANNELS channels: one
 * GPU pulls and pushes at once, 2 x bytes per execution; fills c->issue_*. A failure
 * leaves issue_done 0 (the key is then left out: optional). */
static void calib_issue(const ar_topo_t *t, ar_calib_t *c, int quiet) {
    const uint64_t sizes[2] = {ISSUE_LO, ISSUE_HI};
    if (!probe_rate(t, "x-pullpush1", sizes, ISSUE_CHANNELS, 4, 2.0, c->issue_us, &c->issue_gbps, "link_issue_gbps",
                    quiet))
        return;
    c->issue_done = 1;
    if (!quiet)
        fprintf(stderr, "calibrate: executor: x-pullpush1 on %d channels, %d/%d MB %.2f/%.2f us: one GPU pulling and "
                        "pushing at once moves %.1f GB/s\n", ISSUE_CHANNELS, ISSUE_LO >> 20, ISSUE_HI >> 20,
                c->issue_us[0], c->issue_us[1], c->issue_gbps);
}

/* x-hostpair at LOCAL_LO and LOCAL_HI bytes, one channel: two host sources of one
 * executor group loaded together; fills c->hostpair_* (the key is left out without). */
static void calib_hostpair(const ar_topo_t *t, ar_calib_t *c, int quiet) {
    const uint64_t sizes[2] = {LOCAL_LO, LOCAL_HI};
    if (!probe_rate(t, "x-hostpair", sizes, 0, 10, 2.0, c->hostpair_us, &c->hostpair_gbps,
                    "host_chan_read_pair_gbps", quiet))
        return;
    c->hostpair_done = 1;
    if (!quiet)
        fprintf(stderr, "calibrate: executor: x-hostpair %d/%d bytes %.2f/%.2f us (two host sources loaded together: "
                        "%.1f GB/s)\n", LOCAL_LO, LOCAL_HI, c->hostpair_us[0], c->hostpair_us[1], c->hostpair_gbps);
}

/* x-hostpair on HOSTLINK_CHANNELS channels of every rank at HOSTLINK_LO and HOSTLINK_HI
 * bytes: the executor's host loads as fast as a GPU's host link carries them (naive's
 * REDUCEs), which the kernel loads of the host benchmark need not reach; fills
 * c->hostlink_* (without, host_link_gbps is the host benchmark's). */
static void calib_hostlink(const ar_topo_t *t, ar_calib_t *c, int quiet) {
    const uint64_t sizes[2] = {HOSTLINK_LO, HOSTLINK_HI};
    const int per_dev = t->ndevices > 0 ? t->nranks / t->ndevices : 1;
    if (!probe_rate(t, "x-hostpair", sizes, HOSTLINK_CHANNELS, 5, 2.0 * per_dev, c->hostlink_us, &c->hostlink_gbps,
                    "host_link_gbps (the executor's)", quiet))
        return;
    c->hostlink_done = 1;
    c->hostlink_per_device = per_dev;
    if (!quiet)
        fprintf(stderr, "calibrate: executor: x-hostpair on %d channels of %d rank%s a GPU, %d/%d MB %.2f/%.2f us: a "
                        "GPU's host loads %.1f GB/s\n", HOSTLINK_CHANNELS, per_dev, per_dev == 1 ? "" : "s",
                HOSTLINK_LO >> 20, HOSTLINK_HI >> 20, c->hostlink_us[0], c->hostlink_us[1], c->hostlink_gbps);
}

/* x-reducepush at LOCAL_LO and LOCAL_HI bytes, one channel per GPU: x-reduce's REDUCE with
 * its destination on the other GPU; fills c->push_* (the key is left out without). */
static void calib_push(const ar_topo_t *t, ar_calib_t *c, int quiet) {
    const uint64_t sizes[2] = {LOCAL_LO, LOCAL_HI};
    if (!probe_rate(t, "x-reducepush", sizes, 1, 10, 2.0, c->push_us, &c->push_gbps, "chan_local_read_push_gbps",
                    quiet))
        return;
    c->push_done = 1;
    if (!quiet)
        fprintf(stderr, "calibrate: executor: x-reducepush %d/%d bytes %.2f/%.2f us (local loads of an op storing into "
                        "the other GPU: %.1f GB/s)\n", LOCAL_LO, LOCAL_HI, c->push_us[0], c->push_us[1], c->push_gbps);
}

int ar_calib_exec(const ar_topo_t *t, ar_calib_t *c, int quiet, ar_error_t *err) {
    static const char *const names[8] = {"x-chain2", "x-chain34", "x-sigs2",  "x-sigs34",
                            "x-waits2", "x-waits34", "x-rsigs2", "x-rsigs34"};
    double t8[8][2], us[8];
    const uint64_t sizes[1] = {OP_BYTES};
    times_t x;
    AR_TRY(probe_times(t, names, 8, sizes, 1, 0, 200, 15, PROBE_DTYPE, t8, &x, err));
    for (int i = 0; i < 8; i++) {
        us[i] = t8[i][0];
        if (!(us[i] > 0))
            return AR_ERR(err, AR_EDEVICE, "calibrate: probe plan %s gave no time%s%s", names[i], x.why[i][0] ? ": " : "",
                          x.why[i]);
    }
    c->exec_n_lo = N_LO;
    c->exec_n_hi = N_HI;
    c->exec_op_bytes = OP_BYTES;
    for (int k = 0; k < 2; k++) {
        c->exec_chain_us[k] = us[k];
        c->exec_sigs_us[k] = us[2 + k];
        c->exec_waits_us[k] = us[4 + k];
        c->exec_rsigs_us[k] = us[6 + k];
    }
    c->exec_op_ns = (us[1] - us[0]) * 1e3 / (N_HI - N_LO);
    c->exec_wait_ns = (us[5] - us[3]) * 1e3 / (N_HI - 1);
    c->exec_done = 1;
    /* On one GPU (every rank on it) nothing crosses a link: the probes that measure a
     * link's terms are left out, and x-ringsN's hops are all inside the GPU. */
    const int pair = c->gpus_used != 1;
    if (pair) calib_land(t, c, quiet);
    calib_local(t, c, quiet);
    calib_rings(t, c, pair, quiet);
    if (pair) calib_issue(t, c, quiet);
    calib_hostpair(t, c, quiet);
    calib_hostlink(t, c, quiet);
    if (pair) calib_push(t, c, quiet);
    calib_misalign(t, c, quiet);
    calib_gemm(t, c, quiet);
    if (!quiet)
        fprintf(stderr,
                "calibrate: executor: x-chain %d/%d ops %.2f/%.2f us (%.0f ns per local COPY of %d bytes); "
                "x-sigs %.2f/%.2f us, x-waits %.2f/%.2f us (%.0f ns per WAIT), x-rsigs %.2f/%.2f us\n",
                N_LO, N_HI, us[0], us[1], c->exec_op_ns, OP_BYTES, us[2], us[3], us[4], us[5],
                c->exec_wait_ns, us[6], us[7]);
    return AR_OK;
}
