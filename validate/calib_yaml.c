/* validate: turn calibration measurements (validate/calib.h) into a model file in the
 * model/ format. Every value carries its unit in the key and a comment naming
 * the micro-benchmark it came from; values no benchmark measures say "assumed".
 * No allreduce timing enters here.
 *
 * How the model's terms are read off the benchmarks:
 *   link bw_gbps        the link ceiling, per direction, over the links of the pair:
 *                       streaming both ways at once (an allreduce's traffic): pushes
 *                       (default), pulls or the mean of the two as `link_from` says
 *   link pull_gbps      the same for pulls (peer reads, whose requests share the link),
 *                       by default; with `link_from` read, write or mean, none (every
 *                       byte at bw_gbps)
 *   link lat_ns         peer dependent-load latency minus local HBM latency: what one
 *                       hop adds to a remote access
 *   chan_read_lat_ns    peer dependent-load latency (the round trip a pulling block sees)
 *   chan_inflight_bytes per-block peer read rate (slope at few blocks) x chan_read_lat_ns
 *                       (Little's law: the bytes one block keeps in flight)
 *   chan_write_gbps     per-block peer write rate (slope at few blocks)
 *   signal_lat_ns       the executor's hop across the link (probe x-ringsN, 2 ranks: the
 *                       slope over N) less wait_overhead_ns: a SIGNAL's way to the WAIT
 *                       that sees it; without the executor probes, the flag ping-pong's
 *                       round trip / 2
 *   signal_lat_local_ns the same inside one GPU (x-ringsN, 4 ranks, two per GPU: hops
 *                       alternate), or the ping-pong between two blocks of one GPU;
 *                       both less signal_fence_ns when that was measured (a hop's
 *                       SIGNAL pays its fence first)
 *   signal_fence_ns     x-spairsN (a local 16-byte COPY and a SIGNAL, N times) against
 *                       x-chainN (the COPY alone): the slope difference
 *   signal_together_ns  x-fanN (x-spairsN with a run of 8 SIGNALs to distinct flags after
 *                       each COPY) against x-spairsN: the slope difference / 7
 *   launch_ns           per-kernel time of a CUDA graph of empty kernels launched the
 *                       executor's way (programmatic dependent launch, 16 blocks): the
 *                       timing path replays such graphs
 *   launch_block_ns     the same graph with one block per SM against one block:
 *                       (time(nsm blocks) - time(1 block)) / (nsm - 1), how much later
 *                       each further block of a launch starts
 *   reduce_gbps         output bytes / (time of a summing block - time of the same block
 *                       moving the same bytes without arithmetic): the additions alone,
 *                       which is what the cost formula adds on top of the data movement
 *   op_overhead_ns      slope of a chain of local 16-byte COPYs run by the executor (probe
 *                       plan x-chainN) minus what the model charges such an op already
 *                       (local memory latency and its bytes): the executor's own cost
 *   wait_overhead_ns    one WAIT whose flag is already there, run by the executor
 *                       ((x-waitsN - x-sigsN) / (N - 1))
 *   signal_release_ns   slope of x-sigsN (N SIGNALs back to back on one channel): each
 *                       red.release.sys waits for the one before to complete
 *   signal_release_remote_ns  the same with the flag on the other GPU (x-rsigsN)
 *   signal_release_chan_ns  x-ringsN with 2 ranks on 24 channels against 1: the longer hop
 *                       over log2(24) (cost.h: a release takes that x log2(n) at least, n the
 *                       channels of its device whose latest op crosses to another device)
 *   link_issue_gbps     x-pullpush1: one GPU's channels pulling and pushing at once (48
 *                       channels, 64 and 256 MB): pulled + pushed bytes over the time
 *   chan_write_land_gbps  one channel per GPU storing its IN into the peer, then SIGNAL (the
 *                       release fence waits for the stores to land) and WAIT (probe plan
 *                       x-storesig at 64 KB and 1 MB): bytes over the time difference
 *   reduce_group_ns     x-rchainN (REDUCEs of 5 local sources, three groups of two) against
 *                       the same of 3 sources (two groups): the slope difference; without
 *                       the latter, against x-chainN (COPYs, one group) over two groups
 *   reduce_op_ns        the 3-source x-rchainN against x-chainN, less its further group
 *   chan_local_read_gbps  one channel REDUCEing two local sources into a local OUT (probe
 *                       plan x-reduce at 1 MB and 8 MB, 4 MB with two ranks on the GPU):
 *                       source bytes over the time difference (x-local, a COPY, is
 *                       reported beside it)
 *   chan_local_read_fp32_gbps  the same x-reduce of fp32 elements (the others are bf16)
 *   chan_local_read_cold_gbps  the same x-reduce at 64 MB and 256 MB, whose buffers are
 *                       many times the L2: the loads come from HBM
 *   chan_cold_crowd_gbps  the same with 24 channels on the GPU each REDUCEing its share:
 *                       how much slower one channel loads beside them than with one a
 *                       rank (ar_calib_crowd_gbps)
 *   op_misalign_ns      x-pairsN at 64 KB and one element more (every COPY then ends in a
 *                       scalar tail): the slope difference
 *   chan_local_read_push_gbps  x-reducepush: the same REDUCE storing into the other GPU
 *                       (1 and 8 MB): source bytes over the time difference
 *   host_chan_*_gbps    one block streaming from / to mapped pinned host memory with the
 *                       executor's loads (ld.relaxed.sys) and stores
 *   host_chan_read_pair_gbps  x-hostpair: one channel REDUCEing two host slots (one group
 *                       of the executor's, loaded together), 1 and 8 MB
 *   cold_lat_ns         a pointer chase over a million lines (beyond L2) less one over 4096
 *                       lines (in L2 after a pass): what an op waits more for data its
 *                       device has not touched within the L2's reach (cost.h)
 *   gemm_tflops, gemm_fp32_tflops, gemm_overhead_ns  cuBLASLt's products alone, as `arsim
 *                       bench` times them beside a fused op (one rank): one tile of bf16 (its
 *                       fixed cost) and large bf16 and fp32 products (the rates), read through
 *                       the model's waves of tiles (put_gemm); gemm_units the SMs
 *   l2_hit_bytes, l2_miss_bytes  the L2-reach chase (every line of a footprint, second
 *                       pass) over 0.1 .. 2 x the L2: the largest footprint up to which every
 *                       one reads within 5% of the way from the smallest footprint's latency
 *                       to the largest's, and the smallest from which every one reads within
 *                       5% of the largest's */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "validate/internal.h"

/* Cap for a term no benchmark can resolve (the arithmetic hides under the loads). */
#define REDUCE_HIDDEN_GBPS 100000.0

static double link_ceiling(const ar_calib_t *c, const char *rule, const char **what) {
    if (!rule || !strcmp(rule, "split") || !strcmp(rule, "write")) {
        *what = "peer writes, both GPUs at once";
        return c->peer_write_bidir_gbps;
    }
    if (!strcmp(rule, "read")) {
        *what = "peer reads, both GPUs at once";
        return c->peer_read_bidir_gbps;
    }
    *what = "mean of peer reads and peer writes, both GPUs at once";
    return 0.5 * (c->peer_read_bidir_gbps + c->peer_write_bidir_gbps);
}

/* A curve with less than this between its ends shows no L2 (ns). */
#define L2_REACH_MIN_SPAN_NS 20.0
#define L2_REACH_SHARE 0.05
void ar_calib_l2_reach(const ar_calib_t *c, double *hit, double *miss) {
    *hit = *miss = 0;
    const int n = c->l2_reach_n;
    if (n < 3) return;
    const double lo = c->l2_reach_ns[0], hi = c->l2_reach_ns[n - 1], span = hi - lo;
    if (span < L2_REACH_MIN_SPAN_NS) return;
    int h = -1, k = n - 1;
    while (h + 1 < n && c->l2_reach_ns[h + 1] <= lo + L2_REACH_SHARE * span) h++;
    while (k - 1 >= 0 && c->l2_reach_ns[k - 1] >= hi - L2_REACH_SHARE * span) k--;
    if (h < 0 || k <= h) return;
    *hit = c->l2_reach_frac[h] * c->l2_bytes;
    *miss = c->l2_reach_frac[k] * c->l2_bytes;
}

/* The L2's reach for bandwidth from the re-read sweep: the largest footprint re-read within
 * L2_BW_SHARE of the way from the sweep's fastest rate down to memory's, and the first
 * beyond it within that share of memory's (a streaming load's curve: flat, then a drop at
 * about the capacity, then a slow tail). */
#define L2_BW_SHARE 0.15
void ar_calib_l2_bw_reach(const ar_calib_t *c, double *hit, double *miss, double *top_gbps) {
    *hit = *miss = 0;
    const int n = c->l2_sweep_n;
    double top = 0;
    for (int i = 0; i < n; i++)
        if (c->l2_sweep_read_gbps[i] > top) top = c->l2_sweep_read_gbps[i];
    if (top_gbps) *top_gbps = top;
    const double gap = top - c->hbm_read_gbps;
    if (n < 3 || !(c->hbm_read_gbps > 0) || !(gap > L2_BW_SHARE * top)) return;
    int h = -1;
    for (int i = 0; i < n; i++)
        if (c->l2_sweep_read_gbps[i] >= top - L2_BW_SHARE * gap) h = i;
    int k = h + 1;
    while (k < n && c->l2_sweep_read_gbps[k] > c->hbm_read_gbps + L2_BW_SHARE * gap) k++;
    if (h < 0 || k >= n) return;
    *hit = c->l2_sweep_frac[h] * c->l2_bytes;
    *miss = c->l2_sweep_frac[k] * c->l2_bytes;
}

/* The model being written: its values and, per key and level (or link kind), the note
 * saying which benchmark gave it. */
#define MAX_KEYS AR_MODEL_MAX_KEYS
typedef struct fit_s {
    ar_model_t m;
    ar_link_kind_t links[2];
    char note[MAX_KEYS][AR_NMEM][512];
    char tcm_note[160];
} fit_t;

static int key_index(ar_model_sect_t sect, const char *key) {
    int n;
    const ar_model_key_t *keys = ar_model_keys(&n);
    for (int i = 0; i < n && i < MAX_KEYS; i++)
        if (keys[i].section == sect && !strcmp(keys[i].name, key)) return i;
    return -1;
}

double ar_calib_crowd_gbps(int a, double r_a, int b, double r_b) {
    const double rho = r_a / r_b, den = (b - 1) - rho * (a - 1);
    if (!(rho > 1) || !(den > 0)) return 0;
    const double k = (rho - 1) / den;
    return 1.5 * r_a * (1 + (a - 1) * k) / k;
}

/* Key `key` of section sect (level or link kind l) is v, rounded to `decimals` as the
 * file shows it, measured as the note (printf format) says. */
static void put(fit_t *F, ar_model_sect_t sect, const char *key, int l, double v, int decimals, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
static void put(fit_t *F, ar_model_sect_t sect, const char *key, int l, double v, int decimals, const char *fmt, ...) {
    const int i = key_index(sect, key);
    if (i < 0) return;
    int n;
    char shown[64];
    snprintf(shown, sizeof shown, "%.*f", decimals, v);
    *ar_model_slot(&F->m, &ar_model_keys(&n)[i], l) = strtod(shown, NULL);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(F->note[i][l], sizeof F->note[i][l], fmt, ap);
    va_end(ap);
}

static const char *fit_note(const ar_model_key_t *k, int l, void *ctx) {
    fit_t *F = ctx;
    if (!k) return F->tcm_note;
    int n;
    const int i = (int)(k - ar_model_keys(&n));
    if (i < 0 || i >= MAX_KEYS) return NULL;
    if (!F->note[i][l][0] && !k->required) return "assumed: none (no benchmark here measures it)";
    return F->note[i][l];
}

/* The terms of a link (the pair's, or a GPU's own traffic over one), which one GPU
 * cannot measure: on one GPU they are base's, marked assumed. */
static const char *const link_terms[] = {
    "chan_read_lat_ns", "chan_inflight_bytes", "chan_write_gbps", "signal_lat_ns", "signal_release_remote_ns",
    "signal_release_chan_ns", "link_issue_gbps", "chan_write_land_gbps", "chan_local_read_push_gbps", NULL,
};

/* The product keys from cuBLASLt's products alone (calib_gemm in calib_exec.c). A product
 * costs gemm_overhead_ns plus X / rate, X its time at one multiply-add x 2 a second over the
 * model's waves of tiles on every SM (ar_cost_gemm_seconds; the tile is base's, or cuBLASLt's
 * largest on these GPUs, 128 x 256): the one-tile product's time is mostly the fixed cost, the
 * large ones' mostly the rate; the two are solved for together. */
const char *ar_calib_gemm_times(const ar_calib_t *c, char *buf, size_t len) {
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < 3 && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%llux%llux%llu %s %.3f us", i ? ", " : "",
                               (unsigned long long)c->gemm_shape[i][0], (unsigned long long)c->gemm_shape[i][1],
                               (unsigned long long)c->gemm_shape[i][2], ar_dtype_name(c->gemm_dtype[i]), c->gemm_us[i]);
    return buf;
}

static void put_gemm(fit_t *F, const ar_calib_t *c, const ar_model_t *base) {
    const int R = AR_MK_ROOT;
    ar_model_t waves = F->m; /* the tile the rates are read through */
    waves.gemm_units = c->nsm;
    waves.gemm_tile_rows = base && base->gemm_tile_rows >= 1 ? base->gemm_tile_rows : 128;
    waves.gemm_tile_cols = base && base->gemm_tile_cols >= 1 ? base->gemm_tile_cols : 256;
    double x[3], s[3];
    for (int i = 0; i < 3; i++) {
        x[i] = ar_cost_gemm_seconds(&waves, 1.0, c->nsm, c->gemm_shape[i][0], c->gemm_shape[i][1], c->gemm_shape[i][2]);
        s[i] = c->gemm_us[i] * 1e-6;
    }
    double over = s[0], rate = 0;
    for (int it = 0; it < 16; it++) { /* converges in a few: the tile's share of s[0] is small */
        rate = x[1] / (s[1] - over);
        over = fmax(0, s[0] - x[0] / rate);
    }
    const double rate32 = x[2] / (s[2] - over);
    if (!(rate > 0) || !(rate32 > 0)) return; /* times that no rate explains: the keys stay out */
    const double rows = waves.gemm_tile_rows, cols = waves.gemm_tile_cols;
    put(F, R, "gemm_units", 0, c->nsm, 0, "measured: the device's multiprocessors (cudaGetDeviceProperties)");
    put(F, R, "gemm_tile_rows", 0, rows, 0, "assumed: cuBLASLt's largest tile on these GPUs (no benchmark here measures it)");
    put(F, R, "gemm_tile_cols", 0, cols, 0, "assumed: as gemm_tile_rows");
    char shape[3][48];
    for (int i = 0; i < 3; i++)
        snprintf(shape[i], sizeof shape[i], "%llu x %llu x %llu", (unsigned long long)c->gemm_shape[i][0],
                 (unsigned long long)c->gemm_shape[i][1], (unsigned long long)c->gemm_shape[i][2]);
    put(F, R, "gemm_overhead_ns", 0, over * 1e9, 0,
        "measured: cuBLASLt alone (arsim bench's \"product alone\", one rank), a %s bf16\n"
        "product (one tile) %.2f us, less its multiply-adds at gemm_tflops",
        shape[0], c->gemm_us[0]);
    put(F, R, "gemm_tflops", 0, rate / 1e12, 0,
        "measured: cuBLASLt alone, a %s bf16 product %.2f us less gemm_overhead_ns,\nover its %.0f waves of tiles on %d SMs",
        shape[1], c->gemm_us[1], ceil(ceil(c->gemm_shape[1][0] / rows) * ceil(c->gemm_shape[1][1] / cols) / c->nsm), c->nsm);
    put(F, R, "gemm_fp32_tflops", 0, rate32 / 1e12, 1,
        "measured: cuBLASLt alone, a %s fp32 product %.2f us less gemm_overhead_ns, the same way", shape[2],
        c->gemm_us[2]);
}

static void take_link_terms(fit_t *F, const ar_model_t *base) {
    int n;
    const ar_model_key_t *keys = ar_model_keys(&n);
    const char *why = "assumed: from %s (a link term; one GPU measures none)";
    for (const char *const *t = link_terms; *t; t++) {
        const ar_model_key_t *k = ar_model_key_find(*t);
        put(F, AR_MK_ROOT, *t, 0, ar_model_get(base, k, 0), 6, why, base->name);
    }
    /* the first link kind is the GPUs' own (NVLink); the host link was measured */
    for (int i = 0; i < n; i++)
        if (keys[i].section == AR_MK_LINK) put(F, AR_MK_LINK, keys[i].name, 0, ar_model_get(base, &keys[i], 0), 6, why, base->name);
}

static int mark_assumed(const ar_model_t *m, const ar_model_key_t *k, int l, void *ctx) {
    (void)m; /* F->m, which ctx holds writable */
    fit_t *F = ctx;
    int n;
    const char *note = fit_note(k, l, F);
    if (!note || !note[0] || !strncmp(note, "assumed", 7)) F->m.calib.assumed[k - ar_model_keys(&n)] |= 1ull << l;
    return 0;
}

/* m->calib from the run: where, when, with what; every key whose note says "assumed" is
 * marked so (the loader reads the marks back; `arsim model show` lists them). */
static void record_calibration(fit_t *F, const ar_calib_t *c) {
    ar_model_calib_t *cal = &F->m.calib;
    cal->gpus = c->gpus_used ? c->gpus_used : 2;
    snprintf(cal->device, sizeof cal->device, "%s", c->device);
    snprintf(cal->driver, sizeof cal->driver, "%s", c->driver);
    snprintf(cal->runtime, sizeof cal->runtime, "%s", c->runtime);
    snprintf(cal->date, sizeof cal->date, "%s", c->date);
    ar_model_each_key(&F->m, mark_assumed, F);
}

int ar_validate_calib_write(FILE *f, const ar_calib_t *c, const ar_calib_fit_t *fit,
                            ar_error_t *err) {
    const char *what;
    /* The links the pair's traffic crosses: what NVML says is up (through NVSwitch every
     * one of a GPU's links reaches the other GPU), else the topology's count. */
    int nl = c->nvlinks_up > 0 ? c->nvlinks_up : fit->nvlink_count > 0 ? fit->nvlink_count : 18;
    double ceil = link_ceiling(c, fit->link_from, &what);
    double link_bw = ceil / nl;
    double link_lat = c->peer_read_lat_ns - c->local_read_lat_ns;
    if (link_lat < 50) link_lat = 50;
    double inflight = c->peer_read_block_gbps * c->peer_read_lat_ns;
    double reduce = c->reduce_extra_gbps_bf16 > 0 ? c->reduce_extra_gbps_bf16 : REDUCE_HIDDEN_GBPS;
    double host_bw = fmin(c->host_read_gbps, c->host_write_gbps);
    double host_link_lat = c->host_read_lat_ns - c->local_read_lat_ns;
    if (host_link_lat < 50) host_link_lat = 50;
    double launch = fit->launch_wide ? c->launch_graph_pdl_wide_ns : c->launch_graph_pdl_ns;
    const char *launch_what = fit->launch_wide ? "one block per SM" : "16 blocks";
    if (!(launch > 0)) { /* an older benchmark set without the PDL graph */
        launch = c->launch_graph_ns;
        launch_what = "one block, plain graph";
    }

    const int pair = c->gpus_used != 1;
    if (!pair && !fit->base)
        return AR_ERR(err, AR_EMODEL, "calibrate: one GPU measures no link terms, and no model was given to take "
                                      "them from; no model written");
    /* On one GPU the benchmarks across a link did not run: their values are not checked
     * here, they come from fit->base below. */
    double vals[] = {c->clock_ghz, c->l2_bytes, c->l2_read_gbps, c->l2_read_lat_ns,
                     c->hbm_capacity_bytes, c->hbm_read_gbps, c->hbm_write_gbps,
                     c->local_read_lat_ns, launch, host_bw, link_bw, c->peer_read_lat_ns, inflight,
                     c->peer_write_block_gbps, c->flag_oneway_ns};
    const size_t nlocal = 10;
    for (size_t i = 0; i < (pair ? sizeof vals / sizeof vals[0] : nlocal); i++)
        if (!(vals[i] > 0) || !isfinite(vals[i]))
            return AR_ERR(err, AR_EMODEL,
                          "calibrate: benchmark %zu gave %g, not a positive number; "
                          "no model written", i, vals[i]);

    fit_t *F = calloc(1, sizeof *F);
    if (!F) return AR_ERR(err, AR_ENOMEM, "calibrate: out of memory");
    ar_model_t *m = &F->m;
    snprintf(m->name, sizeof m->name, "%s", fit->name);
    m->links = F->links;
    m->nlinks = 2;
    snprintf(F->links[0].name, sizeof F->links[0].name, "nvlink4");
    snprintf(F->links[1].name, sizeof F->links[1].name, "pcie5");
    snprintf(F->tcm_note, sizeof F->tcm_note, "assumed: a GPU has no peer-addressable tightly-coupled memory");
    m->mem[AR_MEM_SRAM].present = m->mem[AR_MEM_HBM].present = 1;
    const ar_model_sect_t R = AR_MK_ROOT, L = AR_MK_LEVEL, K = AR_MK_LINK;
    const int S = AR_MEM_SRAM, H = AR_MEM_HBM;

    put(F, R, "clock_ghz", 0, c->clock_ghz, 3, "measured: device attribute cudaDevAttrClockRate (max SM clock)");
    put(F, L, "capacity_bytes", S, c->l2_bytes, 0, "measured: device property l2CacheSize");
    const double l2_mb = fmin(c->l2_bytes / 4, 8 << 20) / 1048576.0;
    put(F, L, "read_gbps", S, c->l2_read_gbps, 0,
        "measured: all SMs re-reading a %.0f MB buffer resident in L2, 110 passes\nagainst 10 in one launch", l2_mb);
    if (c->l2_write_gbps > 0)
        put(F, L, "write_gbps", S, c->l2_write_gbps, 0, "measured: the same rewriting it (it stays dirty in L2)");
    else
        put(F, L, "write_gbps", S, c->l2_read_gbps, 0, "assumed: same as the measured L2 read");
    if (c->l2_copy_gbps > 0 && c->l2_copy_gbps < 2 * c->l2_read_gbps)
        put(F, L, "copy_gbps", S, c->l2_copy_gbps, 0,
            "measured: the same copying one resident %.0f MB buffer into another\n(read + written bytes)", l2_mb);
    put(F, L, "lat_ns", S, c->l2_read_lat_ns, 0, "measured: pointer chase, 4 MB chain resident in L2");
    put(F, L, "capacity_bytes", H, c->hbm_capacity_bytes, 0, "measured: device property totalGlobalMem");
    put(F, L, "read_gbps", H, c->hbm_read_gbps, 0, "measured: all SMs reading 1 GB of local memory");
    put(F, L, "write_gbps", H, c->hbm_write_gbps, 0, "measured: all SMs writing 1 GB of local memory");
    /* HBM: the executor's own large transfers move at read and write added (one H200: 1stage
     * on 2 ranks at 256 MB, 649 us that way, 675 measured), above what the copy kernel
     * reaches (3258 GB/s against 3861 added); the copy rate is recorded, not used */
    put(F, L, "copy_gbps", H, 0, 0, "measured: HBM copy %.0f GB/s (read + written bytes) is below read and write\nadded; 0: they add",
        c->hbm_copy_gbps);
    put(F, L, "lat_ns", H, c->local_read_lat_ns, 0,
        "measured: pointer chase, 4096 lines 64 KB apart in 256 MB of local\n"
        "memory (they stay in L2 after a pass: data an op touched lately)");
    put(F, K, "bw_gbps", 0, link_bw, 3, "measured: %.1f GB/s per direction (%s, the most of\n32 .. %d blocks each: read %d, write %d), over the %d links of the pair",
        ceil, what, 2 * c->nsm, c->bidir_blocks[0], c->bidir_blocks[1], nl);
    put(F, K, "lat_ns", 0, link_lat, 0, "measured: peer pointer chase %.0f ns - local %.0f ns", c->peer_read_lat_ns,
        c->local_read_lat_ns);
    if (pair && (!fit->link_from || !strcmp(fit->link_from, "split")))
        put(F, K, "pull_gbps", 0, c->peer_read_bidir_gbps / nl, 3,
            "measured: %.1f GB/s per direction (peer reads, both GPUs at once, %d blocks each),\n"
            "over the %d links of the pair", c->peer_read_bidir_gbps, c->bidir_blocks[0], nl);
    put(F, K, "bw_gbps", 1, host_bw, 1, "measured: kernel loads/stores on mapped pinned host memory (min of read %.1f, write %.1f)",
        c->host_read_gbps, c->host_write_gbps);
    put(F, K, "lat_ns", 1, host_link_lat, 0, "measured: host pointer chase %.0f ns - local %.0f ns", c->host_read_lat_ns,
        c->local_read_lat_ns);
    if (c->reduce_extra_gbps_bf16 > 0)
        put(F, R, "reduce_gbps", 0, reduce, 1, "measured: one block, k=2 bf16 in L2: %.1f GB/s summing vs %.1f moving only",
            c->reduce_block_gbps_bf16, c->xor_block_gbps_bf16);
    else
        put(F, R, "reduce_gbps", 0, reduce, 0,
            "measured: one block, k=2 bf16 in L2: summing (%.1f GB/s) is no slower than\n"
            "moving only (%.1f GB/s): the additions hide under the loads",
            c->reduce_block_gbps_bf16, c->xor_block_gbps_bf16);
    put(F, R, "chan_inflight_bytes", 0, inflight, 0, "measured: per-block peer read %.2f GB/s x chan_read_lat_ns (Little's law)",
        c->peer_read_block_gbps);
    put(F, R, "chan_read_lat_ns", 0, c->peer_read_lat_ns, 0, "measured: peer pointer chase (one dependent load per access)");
    put(F, R, "chan_write_gbps", 0, c->peer_write_block_gbps, 2,
        "measured: per-block peer write rate (slope of the write curve, 1-8 blocks)");
    if (c->exec_done && c->rings_done) {
        /* The executor's own hop, less the WAIT and the SIGNAL's fence the model charges
         * beside it. */
        const double wait = fmax(0, c->exec_wait_ns), fence = c->fence_done ? c->fence_ns : 0;
        char less[96];
        snprintf(less, sizeof less, "wait_overhead_ns %.0f%s", wait, c->fence_done ? " and signal_fence_ns" : "");
        put(F, R, "signal_lat_ns", 0, fmax(0, c->ring_hop_ns[0] - wait - fence), 0,
            "measured: executor, x-rings%d/%d (every rank SIGNALs the next, WAITs for the previous),\n"
            "2 ranks: %.0f ns per hop across the link, minus %s",
            c->exec_n_lo, c->exec_n_hi, c->ring_hop_ns[0], less);
        /* on one GPU the 2 ranks' hop is inside it (calib_rings) */
        char hop[160];
        if (pair)
            snprintf(hop, sizeof hop, "the same with 4 ranks, hops alternating inside a GPU and across:\n%.0f ns per "
                     "hop inside a GPU", c->ring_hop_ns[1]);
        else
            snprintf(hop, sizeof hop, "executor, x-rings%d/%d with 2 ranks on the GPU (every rank SIGNALs the\n"
                     "next, WAITs for the previous): %.0f ns per hop", c->exec_n_lo, c->exec_n_hi, c->ring_hop_ns[1]);
        put(F, R, "signal_lat_local_ns", 0, fmax(0, c->ring_hop_ns[1] - wait - fence), 0, "measured: %s, minus %s", hop,
            less);
        if (c->fence_done)
            put(F, R, "signal_fence_ns", 0, c->fence_ns, 0,
                "measured: executor, x-spairs%d/%d (a local 16-byte COPY and a SIGNAL) against\n"
                "x-chain (the COPY alone): %.0f - %.0f ns per op",
                c->exec_n_lo, c->exec_n_hi, c->fence_ns + c->exec_op_ns, c->exec_op_ns);
        if (c->together_done)
            put(F, R, "signal_together_ns", 0, c->together_ns, 0,
                "measured: executor, x-fan%d/%d (a local COPY and a run of %u SIGNALs to distinct flags)\n"
                "against x-spairs: (%.2f - %.2f us) - (%.2f - %.2f us), per round and further SIGNAL",
                c->exec_n_lo, c->exec_n_hi, AR_PROBE_FAN_FLAGS, c->together_us[1], c->together_us[0], c->fence_us[1],
                c->fence_us[0]);
    } else {
        put(F, R, "signal_lat_ns", 0, c->flag_oneway_ns, 0,
            "measured: flag ping-pong st.release.sys/ld.acquire.sys, round trip %.0f ns / 2", c->flag_rtt_ns);
        if (c->flag_local_oneway_ns > 0)
            put(F, R, "signal_lat_local_ns", 0, c->flag_local_oneway_ns, 0,
                "measured: the same ping-pong between two blocks of one GPU, one way");
    }
    put(F, R, "launch_ns", 0, launch, 0,
        "measured: empty kernels in a CUDA graph, programmatic dependent launch (%s), per kernel", launch_what);
    if (c->launch_graph_pdl_1_ns > 0 && c->launch_graph_pdl_wide_ns > c->launch_graph_pdl_1_ns && c->nsm > 1)
        put(F, R, "launch_block_ns", 0, (c->launch_graph_pdl_wide_ns - c->launch_graph_pdl_1_ns) / (c->nsm - 1), 2,
            "measured: the same graph with %d blocks against 1: (%.0f - %.0f ns) / %d,\n"
            "how much later each further block of a launch starts",
            c->nsm, c->launch_graph_pdl_wide_ns, c->launch_graph_pdl_1_ns, c->nsm - 1);
    if (c->exec_done && c->issue_done)
        put(F, R, "link_issue_gbps", 0, c->issue_gbps, 1,
            "measured: executor, x-pullpush1 (one GPU's 48 channels pulling and pushing at\n"
            "once): 2 x (256 - 64 MB) / (%.2f - %.2f us)",
            c->issue_us[1], c->issue_us[0]);
    if (c->hostlink_done)
        put(F, R, "host_link_gbps", 0, c->hostlink_gbps, 1,
            "measured: executor, x-hostpair on %d channels of each of %d rank%s a GPU (REDUCEs of two host\n"
            "slots, as naive's): 2 x %d x (%d - %d MB) / (%.2f - %.2f us)",
            HOSTLINK_CHANNELS, c->hostlink_per_device, c->hostlink_per_device == 1 ? "" : "s",
            c->hostlink_per_device, HOSTLINK_HI >> 20, HOSTLINK_LO >> 20, c->hostlink_us[1], c->hostlink_us[0]);
    else
        put(F, R, "host_link_gbps", 0, host_bw, 1, "measured: as pcie5 bw_gbps above");
    put(F, R, "host_link_lat_ns", 0, c->host_read_lat_ns, 0, "measured: host pointer chase %.0f ns", c->host_read_lat_ns);

    if (c->exec_done) {
        double local_op_ns = c->local_read_lat_ns +
                             c->exec_op_bytes * (1.0 / c->hbm_read_gbps + 1.0 / c->hbm_write_gbps);
        double over = fmax(0, c->exec_op_ns - local_op_ns);
        put(F, R, "op_overhead_ns", 0, over, 0,
            "measured: executor chain of %d vs %d local %.0f-byte COPYs (probe x-chainN):\n"
            "%.0f ns per op, minus the %.0f ns the model charges one (HBM latency + bytes)",
            c->exec_n_hi, c->exec_n_lo, c->exec_op_bytes, c->exec_op_ns, local_op_ns);
        put(F, R, "wait_overhead_ns", 0, fmax(0, c->exec_wait_ns), 0,
            "measured: executor, %d WAITs on a flag already there vs 1 (probes x-waitsN - x-sigsN):\n(%.2f - %.2f us) / %d",
            c->exec_n_hi, c->exec_waits_us[1], c->exec_sigs_us[1], c->exec_n_hi - 1);
        put(F, R, "signal_release_ns", 0,
            fmax(0, (c->exec_sigs_us[1] - c->exec_sigs_us[0]) * 1e3 / (c->exec_n_hi - c->exec_n_lo)), 0,
            "measured: executor, one channel SIGNALing back to back, %d vs %d SIGNALs (probe x-sigsN):\n"
            "(%.2f - %.2f us) / %d: each release waits for the one before",
            c->exec_n_hi, c->exec_n_lo, c->exec_sigs_us[1], c->exec_sigs_us[0], c->exec_n_hi - c->exec_n_lo);
        if (c->exec_rsigs_us[1] > c->exec_rsigs_us[0] && c->exec_rsigs_us[0] > 0)
            put(F, R, "signal_release_remote_ns", 0,
                (c->exec_rsigs_us[1] - c->exec_rsigs_us[0]) * 1e3 / (c->exec_n_hi - c->exec_n_lo), 0,
                "measured: the same with the flag on the other GPU (probe x-rsigsN):\n(%.2f - %.2f us) / %d",
                c->exec_rsigs_us[1], c->exec_rsigs_us[0], c->exec_n_hi - c->exec_n_lo);
        if (c->rings_done && c->rings_channels > 1)
            put(F, R, "signal_release_chan_ns", 0,
                fmax(0, (c->ring_chan_hop_ns - c->ring_hop_ns[0]) / log2((double)c->rings_channels)), 0,
                "measured: executor, x-rings%d/%d with 2 ranks on %d channels against 1: (%.0f - %.0f ns\n"
                "per hop) / log2(%d): releases slow down with the channels that cross",
                c->exec_n_lo, c->exec_n_hi, c->rings_channels, c->ring_chan_hop_ns, c->ring_hop_ns[0], c->rings_channels);
    } else {
        put(F, R, "op_overhead_ns", 0, 0, 0, "assumed: none, the executor probes did not run");
        put(F, R, "wait_overhead_ns", 0, 0, 0, "assumed: none, the executor probes did not run");
    }
    if (c->land_done)
        put(F, R, "chan_write_land_gbps", 0, c->land_gbps, 2,
            "measured: executor, one channel per GPU storing into the peer then SIGNAL (its fence\n"
            "waits for the stores to land), probe x-storesig: (%.0f - %.0f bytes) / (%.3f - %.3f us)",
            c->land_bytes[1], c->land_bytes[0], c->land_us[1], c->land_us[0]);
    if (c->group_done && c->red3_done) {
        const double slope5 = (c->group_us[1] - c->group_us[0]) * 1e3 / (c->exec_n_hi - c->exec_n_lo);
        const double slope3 = (c->red3_us[1] - c->red3_us[0]) * 1e3 / (c->exec_n_hi - c->exec_n_lo);
        put(F, R, "reduce_group_ns", 0, c->group_ns, 0,
            "measured: executor, x-rchain%d/%d, REDUCEs of local 16-byte sources: 5\n"
            "(three groups of two, 4 ranks) against 3 (two groups, 2 ranks): %.0f - %.0f ns per op",
            c->exec_n_lo, c->exec_n_hi, slope5, slope3);
        put(F, R, "reduce_op_ns", 0, c->reduce_op_ns, 0,
            "measured: executor, the 3-source REDUCE against x-chain's COPY (one group)\n"
            "beyond its further group: %.0f - %.0f - %.0f ns per op",
            slope3, c->exec_op_ns, c->group_ns);
    } else if (c->group_done) {
        put(F, R, "reduce_group_ns", 0, c->group_ns, 0,
            "measured: executor, x-rchain%d/%d (REDUCEs of %d local 16-byte sources, three groups\n"
            "of two) against x-chain (COPYs, one): (%.0f - %.0f ns per op) / 2",
            c->exec_n_lo, c->exec_n_hi, c->group_srcs,
            (c->group_us[1] - c->group_us[0]) * 1e3 / (c->exec_n_hi - c->exec_n_lo), c->exec_op_ns);
    }
    if (c->cold_read_lat_ns > c->local_read_lat_ns)
        put(F, R, "cold_lat_ns", 0, c->cold_read_lat_ns - c->local_read_lat_ns, 0,
            "measured: pointer chase over a million lines 256 B apart (beyond L2), %.0f ns,\n"
            "less the chase that stays in L2 (hbm lat_ns), %.0f ns",
            c->cold_read_lat_ns, c->local_read_lat_ns);
    double l2_hit, l2_miss;
    ar_calib_l2_reach(c, &l2_hit, &l2_miss);
    if (l2_miss > 0) {
        put(F, R, "l2_hit_bytes", 0, round(l2_hit), 0,
            "measured: pointer chase over every 128-byte line of a footprint in random order,\n"
            "second pass: up to %.2f x the L2 within 5%% of the L2's %.0f ns (raw curve below)",
            l2_hit / c->l2_bytes, c->l2_reach_ns[0]);
        put(F, R, "l2_miss_bytes", 0, round(l2_miss), 0,
            "measured: the same chase: from %.2f x the L2 on within 5%% of memory's %.0f ns",
            l2_miss / c->l2_bytes, c->l2_reach_ns[c->l2_reach_n - 1]);
    }
    double bw_hit, bw_miss, bw_top;
    ar_calib_l2_bw_reach(c, &bw_hit, &bw_miss, &bw_top);
    if (bw_miss > 0) {
        put(F, R, "l2_bw_hit_bytes", 0, round(bw_hit), 0,
            "measured: all SMs re-reading a footprint, 110 passes against 10: up to %.2f x\n"
            "the L2 within %.0f%% of the way from the sweep's fastest (%.0f GB/s) to memory's",
            bw_hit / c->l2_bytes, 100 * L2_BW_SHARE, bw_top);
        put(F, R, "l2_bw_miss_bytes", 0, round(bw_miss), 0,
            "measured: the same re-reads: from %.2f x the L2 on within %.0f%% of memory's\n%.0f GB/s (sweep below)",
            bw_miss / c->l2_bytes, 100 * L2_BW_SHARE, c->hbm_read_gbps);
    }
    if (c->local_done)
        put(F, R, "chan_local_read_gbps", 0, c->local_read_gbps, 1,
            "measured: executor, one channel REDUCEing IN + SCRATCH into OUT on its own GPU\n"
            "(probe x-reduce): 2 x (%.0f - %.0f bytes) / (%.2f - %.2f us); a COPY (x-local)\nloads %.1f GB/s",
            c->local_bytes[1], c->local_bytes[0], c->local_reduce_us[1], c->local_reduce_us[0], c->local_copy_read_gbps);
    if (c->local_fp32_done)
        put(F, R, "chan_local_read_fp32_gbps", 0, c->local_read_fp32_gbps, 1,
            "measured: executor, the same x-reduce of fp32 elements (the probes' are bf16):\n"
            "2 x (%.0f - %.0f bytes) / (%.2f - %.2f us)",
            c->local_bytes[1], c->local_bytes[0], c->local_fp32_us[1], c->local_fp32_us[0]);
    if (c->cold_done)
        put(F, R, "chan_local_read_cold_gbps", 0, c->cold_read_gbps, 1,
            "measured: executor, the same x-reduce with its three buffers beyond the L2:\n"
            "2 x (%.0f - %.0f bytes) / (%.2f - %.2f us)",
            c->cold_bytes[1], c->cold_bytes[0], c->cold_reduce_us[1], c->cold_reduce_us[0]);
    if (c->cold_done && c->crowd_done)
        put(F, R, "chan_cold_crowd_gbps", 0, c->crowd_gbps, 0,
            "measured: executor, the same x-reduce on %d channels of the GPU, each loading\n"
            "2 x (%.0f - %.0f bytes) / %d / (%.2f - %.2f us) = %.1f GB/s beside the others, against\n"
            "%.1f GB/s with %d on it: the demand that doubles a load's time, r_n = r0 / (1 + (n - 1) 1.5 r0 / X)",
            c->crowd_channels, c->cold_bytes[1], c->cold_bytes[0], c->crowd_channels / c->crowd_alone,
            c->crowd_reduce_us[1], c->crowd_reduce_us[0], c->crowd_read_gbps, c->cold_read_gbps, c->crowd_alone);
    if (c->misalign_done)
        put(F, R, "op_misalign_ns", 0, c->misalign_ns, 0,
            "measured: executor, x-pairs%d/%d at one element over 64 KB against 64 KB (2 ranks,\n"
            "COPYs into the other rank, each SIGNALed; each then ends in a scalar tail): ((%.2f - %.2f) - (%.2f - %.2f us)) / %d",
            c->exec_n_lo, c->exec_n_hi, c->misalign_us[1][1], c->misalign_us[1][0], c->misalign_us[0][1],
            c->misalign_us[0][0], c->exec_n_hi - c->exec_n_lo);
    if (c->push_done)
        put(F, R, "chan_local_read_push_gbps", 0, c->push_gbps, 1,
            "measured: executor, the same REDUCE storing into the other GPU's SCRATCH\n"
            "(probe x-reducepush): 2 x (8 - 1 MB) / (%.2f - %.2f us)",
            c->push_us[1], c->push_us[0]);
    if (c->host_read_block_gbps > 0 && c->host_write_block_gbps > 0) {
        put(F, R, "host_chan_read_gbps", 0, c->host_read_block_gbps, 1,
            "measured: one block loading 64 MB of mapped pinned host memory (ld.relaxed.sys, as the executor)");
        put(F, R, "host_chan_write_gbps", 0, c->host_write_block_gbps, 1,
            "measured: one block storing 64 MB to mapped pinned host memory");
        if (c->exec_done && c->hostpair_done)
            put(F, R, "host_chan_read_pair_gbps", 0, c->hostpair_gbps, 1,
                "measured: executor, one channel REDUCEing two host slots, loaded together\n"
                "(probe x-hostpair): 2 x (8 - 1 MB) / (%.2f - %.2f us)",
                c->hostpair_us[1], c->hostpair_us[0]);
    }

    if (c->gemm_done) put_gemm(F, c, fit->base);

    if (!pair) take_link_terms(F, fit->base);
    else if (c->nvlinks_up > 0)
        put(F, K, "lanes", 0, nl, 0, "measured: NVML, %d NVLink links up on each GPU", c->nvlinks_up);
    else
        put(F, K, "lanes", 0, nl, 0, "assumed: the topology's links between the pair");
    record_calibration(F, c);

    fprintf(f, "# %s: calibrated from micro-benchmarks by `arsim calibrate --backend cuda`.\n",
            fit->name);
    fprintf(f, "# device: %s\n# date: %s\n", c->device, c->date);
    fprintf(f, "# Per-block benchmarks use the executor's shape: %d threads per block, %d 16-byte\n"
               "# load(s) in flight per thread. No allreduce was timed to make this file.\n",
            c->threads, c->unroll);
    fprintf(f, "# \"measured: X\" names the benchmark (validate/calib.cu) a value comes from;\n"
               "# \"assumed\" marks a value no benchmark here measures.\n");
    char desc[400];
    snprintf(desc, sizeof desc, "calibrated on %s, %s", c->device, c->date);
    ar_model_write(f, m, desc, fit_note, F);
    ar_model_write_calibration(f, m);
    free(F);

    /* The raw curves, for the record and for plots. */
    fprintf(f, "\n# Raw measurements (not read by the model loader):\n");
    fprintf(f, "#   blocks  peer_read_gbps  peer_write_gbps   (one direction, dev0's blocks on dev1's memory)\n");
    for (int i = 0; i < c->npoints; i++)
        fprintf(f, "#   %6d  %14.2f  %15.2f\n", c->blocks[i], c->peer_read_gbps[i], c->peer_write_gbps[i]);
    fprintf(f, "#   one way, most blocks: read %.1f GB/s, write %.1f GB/s; both ways at once: read %.1f, write %.1f GB/s each way\n",
            c->peer_read_max_gbps, c->peer_write_max_gbps, c->peer_read_bidir_gbps, c->peer_write_bidir_gbps);
    fprintf(f, "#   flag ping-pong (one warp spinning, validate/calib.cu): one way %.0f ns across the link, %.0f ns inside one GPU\n",
            c->flag_oneway_ns, c->flag_local_oneway_ns);
    fprintf(f, "#   launch: stream %.0f ns, graph %.0f ns, graph with %d blocks %.0f ns; graph with programmatic dependent\n"
               "#   launch: 1 block %.0f ns, 16 blocks %.0f ns, %d blocks %.0f ns\n", c->launch_stream_ns,
            c->launch_graph_ns, c->nsm, c->launch_graph_wide_ns, c->launch_graph_pdl_1_ns, c->launch_graph_pdl_ns,
            c->nsm, c->launch_graph_pdl_wide_ns);
    fprintf(f, "#   HBM copy (read + write bytes): %.0f GB/s\n", c->hbm_copy_gbps);
    if (c->l2_reach_n > 0) {
        fprintf(f, "#   L2 reach (chase over every line of a footprint, second pass): footprint / L2, ns per load\n#  ");
        for (int i = 0; i < c->l2_reach_n; i++)
            fprintf(f, " %.2f:%.0f%s", c->l2_reach_frac[i], c->l2_reach_ns[i], i % 8 == 7 ? "\n#  " : "");
        fprintf(f, "\n");
    }
    if (c->l2_sweep_n > 0) {
        fprintf(f, "#   L2 sweep (all SMs, 110 passes against 10): footprint / L2, re-read GB/s, copy GB/s (read + written)\n#  ");
        for (int i = 0; i < c->l2_sweep_n; i++)
            fprintf(f, " %.2f:%.0f/%.0f%s", c->l2_sweep_frac[i], c->l2_sweep_read_gbps[i], c->l2_sweep_copy_gbps[i],
                    i % 6 == 5 ? "\n#  " : "");
        fprintf(f, "\n");
    }
    fprintf(f, "#   reduce, one block: bf16 %.1f GB/s, fp32 %.1f GB/s, no arithmetic %.1f GB/s; additions alone bf16 %s, fp32 %s\n",
            c->reduce_block_gbps_bf16, c->reduce_block_gbps_fp32, c->xor_block_gbps_bf16,
            c->reduce_extra_gbps_bf16 > 0 ? "measurable" : "hidden",
            c->reduce_extra_gbps_fp32 > 0 ? "measurable" : "hidden");
    if (c->exec_done)
        fprintf(f, "#   executor probes (us per execution): x-chain%d %.3f, x-chain%d %.3f; x-sigs%d %.3f, x-sigs%d %.3f; "
                   "x-waits%d %.3f, x-waits%d %.3f\n",
                c->exec_n_lo, c->exec_chain_us[0], c->exec_n_hi, c->exec_chain_us[1], c->exec_n_lo, c->exec_sigs_us[0],
                c->exec_n_hi, c->exec_sigs_us[1], c->exec_n_lo, c->exec_waits_us[0], c->exec_n_hi, c->exec_waits_us[1]);
    if (c->exec_done)
        fprintf(f, "#   x-rsigs%d %.3f, x-rsigs%d %.3f\n", c->exec_n_lo, c->exec_rsigs_us[0], c->exec_n_hi, c->exec_rsigs_us[1]);
    if (c->rings_done)
        fprintf(f, "#   x-rings%d %.3f, x-rings%d %.3f (2 ranks); %.3f, %.3f (4 ranks); %.3f, %.3f (2 ranks, %d channels)\n",
                c->exec_n_lo, c->rings_us[0][0], c->exec_n_hi, c->rings_us[0][1], c->rings_us[1][0], c->rings_us[1][1],
                c->rings_chan_us[0], c->rings_chan_us[1], c->rings_channels);
    if (c->fence_done)
        fprintf(f, "#   x-spairs%d %.3f, x-spairs%d %.3f\n", c->exec_n_lo, c->fence_us[0], c->exec_n_hi, c->fence_us[1]);
    if (c->together_done)
        fprintf(f, "#   x-fan%d %.3f, x-fan%d %.3f\n", c->exec_n_lo, c->together_us[0], c->exec_n_hi, c->together_us[1]);
    if (c->local_done)
        fprintf(f, "#   x-reduce %.0f bytes %.3f us, %.0f bytes %.3f us; x-local %.3f us, %.3f us\n", c->local_bytes[0],
                c->local_reduce_us[0], c->local_bytes[1], c->local_reduce_us[1], c->local_copy_us[0], c->local_copy_us[1]);
    if (c->local_fp32_done)
        fprintf(f, "#   x-reduce of fp32 %.0f bytes %.3f us, %.0f bytes %.3f us\n", c->local_bytes[0], c->local_fp32_us[0],
                c->local_bytes[1], c->local_fp32_us[1]);
    if (c->cold_done)
        fprintf(f, "#   x-reduce %.0f bytes %.3f us, %.0f bytes %.3f us (beyond the L2)\n", c->cold_bytes[0],
                c->cold_reduce_us[0], c->cold_bytes[1], c->cold_reduce_us[1]);
    if (c->crowd_done)
        fprintf(f, "#   x-reduce/%d %.0f bytes %.3f us, %.0f bytes %.3f us (beyond the L2)\n", c->crowd_channels / c->crowd_alone,
                c->cold_bytes[0], c->crowd_reduce_us[0], c->cold_bytes[1], c->crowd_reduce_us[1]);
    if (c->land_done)
        fprintf(f, "#   x-storesig %.0f bytes %.3f us, %.0f bytes %.3f us\n", c->land_bytes[0], c->land_us[0],
                c->land_bytes[1], c->land_us[1]);
    if (c->gemm_done) {
        char times[256];
        fprintf(f, "#   products alone (cuBLASLt): %s\n", ar_calib_gemm_times(c, times, sizeof times));
    }
    fprintf(f, "#   calibration wall time: %.1f s\n", c->wall_s);
    return ferror(f) ? AR_ERR(err, AR_EIO, "calibrate: write error") : AR_OK;
}

const char *ar_calib_board_model(const char *device) {
    return strstr(device, "H100") ? "h100_sxm" : strstr(device, "H200") ? "h200_sxm" : NULL;
}

const char *ar_calib_gpu_model(const char *spec) {
    if (!spec || (strncmp(spec, "full:", 5) && strncmp(spec, "switch:", 7))) return NULL;
    char device[256];
    ar_error_t err;
    ar_error_clear(&err);
    return ar_calib_device_info(device, sizeof device, &err) == AR_OK ? ar_calib_board_model(device) : NULL;
}
