/* sim backend: closed forms on hand-made plans over a model with round numbers,
 * agreement with the analytic backend where nothing contends, and contention where
 * something does (by the amount the shared resource predicts). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "arsim/arsim.h"
#include "tests/suites.h"

/* Round numbers: hbm 1000 GB/s (read = write), 100 ns; sram 4000 GB/s, 10 ns, 1 MB;
 * tcm 8000 GB/s, 5 ns, 64 KB; a link 10 GB/s, 200 ns per hop; channel bounds far
 * above the link (1000 GB/s) unless a test lowers them; reduce 50 GB/s; signal
 * 1000 ns; launch 3000 ns; clock 2 GHz. */
#define ROUND_MODEL_FMT                                                                       \
    "name: round\n"                                                                          \
    "clock_ghz: 2\n"                                                                         \
    "memory:\n"                                                                              \
    "  tcm: {capacity_bytes: 65536, read_gbps: 8000, write_gbps: 8000, lat_ns: 5}\n"          \
    "  sram: {capacity_bytes: 1000000, read_gbps: 4000, write_gbps: 4000, lat_ns: 10}\n"      \
    "  hbm: {capacity_bytes: 1e12, read_gbps: 1000, write_gbps: 1000, lat_ns: 100}\n"         \
    "links:\n"                                                                               \
    "  - {name: l, bw_gbps: 10, lat_ns: 200}\n"                                              \
    "reduce_gbps: 50\n"                                                                      \
    "chan_inflight_bytes: %s\n"                                                              \
    "chan_read_lat_ns: 1000\n"                                                               \
    "chan_write_gbps: %s\n"                                                                  \
    "signal_lat_ns: 1000\n"                                                                  \
    "launch_ns: 3000\n"                                                                      \
    "host_link_gbps: 5\n"                                                                    \
    "host_link_lat_ns: 2000\n"

#define NS 1e-9
#define LAUNCH (3000 * NS)
#define HOP (200 * NS)
#define MEMLAT (100 * NS)
#define LINK_BW 10e9
#define MEM_BW 1000e9
#define RED_BW 50e9
#define SIG (1000 * NS)

static ar_model_t *round_model(const char *extra) {
    char yaml[2048];
    snprintf(yaml, sizeof yaml, ROUND_MODEL_FMT "%s", "1000000", "1000", extra);
    ar_model_t *m;
    ar_error_t err;
    ck_assert_msg(ar_model_load_string(yaml, "round", &m, &err) == AR_OK, "%s", err.message);
    return m;
}

/* The round model with `extra` keys appended, on topology spec. */
static ar_topo_t *round_topo_with(const char *extra, const char *spec) {
    ar_topo_t *t;
    ar_error_t err;
    ck_assert_msg(ar_topo_build(spec, round_model(extra), &t, &err) == AR_OK, "%s",
                  err.message);
    return t;
}

static ar_topo_t *round_topo(const char *spec) { return round_topo_with("", spec); }

/* Runs plan on backend; checks the invariants every result keeps. */
static void run_on(const char *backend, const ar_topo_t *t, ar_plan_t *p, ar_mem_t buffer,
                   int breakdown, ar_result_t *res) {
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    o.buffer = buffer;
    o.breakdown = breakdown;
    tu_run_checked(backend, t, p, &o, res, 1e-9);
    ck_assert_double_eq_tol(res->cycles, res->time_s * t->model->clock_ghz * 1e9,
                            1e-6 * res->cycles);
    ck_assert(res->sim_wall_s > 0);
    /* starting the simulator is part of the sim backend's wall time, and of no other's */
    if (strcmp(backend, "sim") == 0) ck_assert(res->start_s > 0 && res->start_s < res->sim_wall_s);
    else ck_assert(res->start_s == 0);
}

static void run(const ar_topo_t *t, ar_plan_t *p, int breakdown, ar_result_t *res) {
    run_on("sim", t, p, AR_MEM_HBM, breakdown, res);
}

/* SimGrid keeps times to about 1e-13 s and rates to a relative 1e-5. */
#define EQ(got, want) ck_assert_double_eq_tol((got), (want), 2e-5 * fabs(want) + 1e-12)

static const ar_link_stat_t *link_stat(const ar_result_t *r, int link, int dir) {
    for (int i = 0; i < r->nlinks; i++)
        if (r->links[i].link == link && r->links[i].dir == dir) return &r->links[i];
    return NULL;
}

/* ---- single ops: the platform reproduces cost.h's formulas ---- */

/* One COPY pushed over one link: launch + (memory + hop latency) + B / bw; the link's
 * breakdown shows the bytes, the time it carried them and its utilisation. */
START_TEST(test_copy_one_link) {
    ar_topo_t *t = round_topo("ring_1d:4");
    const uint64_t n = 1 << 20;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(4, 1, n);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(1, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n),
                     AR_OK);
    ar_result_t r;
    run(t, p, 1, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + HOP + B / LINK_BW);
    EQ(r.terms_s[AR_TERM_LINK], MEMLAT + HOP + B / LINK_BW);
    EQ(r.terms_s[AR_TERM_LAUNCH], LAUNCH);
    ck_assert(r.terms_s[AR_TERM_MEMORY] == 0 && r.terms_s[AR_TERM_SYNC] == 0 &&
              r.terms_s[AR_TERM_REDUCE] == 0);
    ck_assert_uint_eq(r.ops_executed, 1);
    ck_assert_int_eq(r.nlinks, 2 * t->nlinks);
    int dir = t->links[0].a == 0 ? 1 : -1;
    for (int i = 0; i < r.nlinks; i++) {
        const ar_link_stat_t *s = &r.links[i];
        if (s->link == 0 && s->dir == dir) {
            EQ(s->bytes, B);
            EQ(s->busy_s, B / LINK_BW);
            EQ(s->util, B / (LINK_BW * r.time_s));
        } else {
            ck_assert(s->bytes == 0 && s->busy_s == 0 && s->util == 0);
        }
    }
    ar_result_free(&r);
    double time = r.time_s;
    run(t, p, 0, &r);
    ck_assert_ptr_null(r.links);
    EQ(r.time_s, time);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* A local REDUCE of two sources: the memory carries 2 reads and 1 write (memory
 * bound), then the channel's CPU adds (k - 1) x B at the reduction rate. */
START_TEST(test_reduce_local) {
    ar_topo_t *t = round_topo("ring_1d:2");
    const uint64_t n = 1 << 20;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(2, 1, n);
    ar_addr_t srcs[2] = {ar_addr(0, AR_BUF_IN, 0), ar_addr(0, AR_BUF_OUT, 0)};
    ck_assert_int_eq(ar_plan_reduce(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), srcs, 2, n), AR_OK);
    ar_result_t r;
    run(t, p, 0, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + 3 * B / MEM_BW + B / RED_BW);
    EQ(r.terms_s[AR_TERM_MEMORY], MEMLAT + 3 * B / MEM_BW);
    EQ(r.terms_s[AR_TERM_REDUCE], B / RED_BW);
    ck_assert(r.terms_s[AR_TERM_LINK] == 0);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* SIGNAL / WAIT: the waiter takes over the signaller's path plus the signal latency
 * (sync), and a later-issued SIGNAL over fewer hops that arrives first is the one
 * that counts. */
START_TEST(test_signal_wait) {
    ar_topo_t *t = round_topo("ring_1d:6");
    const uint64_t n = 1000;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(6, 1, n);
    /* rank 3 (3 hops from 0) signals at once; rank 1 (1 hop) after a local copy. */
    ck_assert_int_eq(ar_plan_signal(p, 3, 0, 0, 0), AR_OK);
    ck_assert_int_eq(ar_plan_copy(p, 1, 0, ar_addr(1, AR_BUF_OUT, 0), ar_addr(1, AR_BUF_IN, 0), n),
                     AR_OK);
    ck_assert_int_eq(ar_plan_signal(p, 1, 0, 0, 0), AR_OK);
    ck_assert_int_eq(ar_plan_wait(p, 0, 0, 0, 1), AR_OK);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n),
                     AR_OK);
    ar_result_t r, a;
    run(t, p, 0, &r);
    run_on("analytic", t, p, AR_MEM_HBM, 0, &a);
    double copy = MEMLAT + 2 * B / MEM_BW;
    double from3 = SIG + 2 * HOP, from1 = copy + SIG;
    double first = from1 < from3 ? from1 : from3;
    EQ(r.time_s, LAUNCH + first + copy);
    EQ(r.terms_s[AR_TERM_SYNC], first == from1 ? SIG : from3);
    EQ(r.time_s, a.time_s);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* ARSIM_SIM_TIMELINE=FILE writes every op's start and end on the model's clock, in the cuda
 * backend's timeline format: rank 0 pushes 64 elements into rank 1 and SIGNALs it, rank 1
 * WAITs. Each op starts where the one before it on its channel ended, and the last ends at
 * the run's time less the launch. */
START_TEST(test_timeline_file) {
    ar_topo_t *t = round_topo("ring_1d:2");
    ar_plan_t *p = tu_plan_new(2, 1, 64);
    p->scratch_elems = 64;
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(1, AR_BUF_SCRATCH, 0), ar_addr(0, AR_BUF_IN, 0), 64), AR_OK);
    ck_assert_int_eq(ar_plan_signal(p, 0, 0, 1, 0), AR_OK);
    ck_assert_int_eq(ar_plan_wait(p, 1, 0, 0, 1), AR_OK);
    char path[] = "/tmp/arsim-check-timeline-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    setenv("ARSIM_SIM_TIMELINE", path, 1);
    ar_result_t r;
    run(t, p, 0, &r);
    unsetenv("ARSIM_SIM_TIMELINE");
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[256];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "gpu,rank,chan,op,code,target,start_ns,end_ns\n");
    const char *want_code[3] = {"COPY", "SIGNAL", "WAIT"};
    const int want_rank[3] = {0, 0, 1}, want_target[3] = {1, 1, 1};
    double prev_end = 0, last_end = 0;
    for (int i = 0; i < 3; i++) {
        int gpu, rank, chan, op, target;
        char code[16];
        double a, b;
        ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
        ck_assert_int_eq(sscanf(line, "%d,%d,%d,%d,%15[A-Z],%d,%lf,%lf", &gpu, &rank, &chan, &op, code, &target, &a, &b), 8);
        ck_assert_str_eq(code, want_code[i]);
        ck_assert_int_eq(rank, want_rank[i]);
        ck_assert_int_eq(gpu, want_rank[i]);
        ck_assert_int_eq(target, want_target[i]);
        ck_assert_double_eq_tol(a, i == 1 ? prev_end : 0, 0.5);
        ck_assert(b >= a);
        prev_end = b;
        if (b > last_end) last_end = b;
    }
    ck_assert_ptr_null(fgets(line, sizeof line, f));
    fclose(f);
    unlink(path);
    ck_assert_double_eq_tol(last_end, (r.time_s - LAUNCH) * 1e9, 0.5);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* signal_release_chan_ns in the sim as in cost.h: rank 0's three channels with ops each
 * SIGNAL rank 1 on the other device, the last of them no sooner than 100 ns x log2(3) after
 * reaching the SIGNAL (three channels of the device cross then); with signal_fence_ns (50
 * here) 50 ns more. */
START_TEST(test_release_floor) {
    ar_topo_t *t = round_topo_with("signal_release_chan_ns: 100\n", "ring_1d:2");
    ar_topo_t *tf = round_topo_with("signal_release_chan_ns: 100\nsignal_fence_ns: 50\n", "ring_1d:2");
    ar_plan_t *p = tu_plan_new(2, 4, 64);
    for (int c = 0; c < 4; c++) {
        if (c == 2) continue;
        ck_assert_int_eq(ar_plan_signal(p, 0, c, 1, (uint32_t)c), AR_OK);
        ck_assert_int_eq(ar_plan_wait(p, 1, c, (uint32_t)c, 1), AR_OK);
    }
    ar_result_t r;
    run(t, p, 0, &r);
    EQ(r.time_s, LAUNCH + 100 * NS * log2(3.0) + SIG);
    run(tf, p, 0, &r);
    EQ(r.time_s, LAUNCH + 50 * NS + 100 * NS * log2(3.0) + SIG);
    ar_plan_free(p);
    ar_topo_free(tf);
    ar_topo_free(t);
}
END_TEST

/* link_issue_gbps (8 GB/s here) is one shared resource per device: rank 0's channel 0
 * pulls B from rank 1 while its channel 1 pushes B into it. The two directions of the
 * pair's links (20 GB/s each) would carry both at once; the device's issue bound shares
 * 8 GB/s between them. The push starts at once (its stores are posted: cost.h), the pull
 * a hop later, and the bound is busy from the first: the pull ends B / 4 GB/s after the
 * memory latency, the push sooner, its stores landing a hop later, still before. */
START_TEST(test_link_issue) {
    ar_topo_t *t = round_topo_with("link_issue_gbps: 8\n", "ring_1d:2");
    const uint64_t n = 1 << 20;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(2, 2, n);
    p->scratch_elems = n;
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(1, AR_BUF_IN, 0), n), AR_OK);
    ck_assert_int_eq(ar_plan_copy(p, 0, 1, ar_addr(1, AR_BUF_SCRATCH, 0), ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
    ar_result_t r;
    run(t, p, 0, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + B / 4e9);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* ---- agreement: without contention sim equals analytic within 0.5% ---- */

typedef struct agree_case_s {
    const char *algo, *topo, *model;
    int nranks; /* placed in blocks on the devices; 0: one per device */
} agree_case_t;

/* One channel per rank and topologies where no two concurrent ops share a link
 * direction or overload a memory: every algorithm once but mesh2d, whose reductions and
 * broadcasts of different trees share link directions by design (tests/analytic_vs_sim.py
 * holds it, with the others on contended cases). */
static const agree_case_t agree_cases[] = {
    {"ring", "ring_1d:5", NULL, 0},         {"ring", "h200_pair", NULL, 0},
    {"torus2d", "torus_2d:2x3", NULL, 0},   {"torus2d", "full:4", NULL, 0},
    {"1stage", "full:4", NULL, 0},
    {"1stage", "h200_pair", NULL, 0},       {"2stage", "full:5", NULL, 0},
    {"center_root", "ring_1d:5", NULL, 0},  {"center_root", "mesh_2d:2x3", NULL, 0},
    {"naive", "ring_1d:4", NULL, 0},        {"naive", "full:3", "h100_sxm", 0},
    /* models with the executor's own costs (op_overhead_ns, wait_overhead_ns) and
     * per-channel host staging rates */
    {"1stage", "h200_pair", "h200_sxm", 0}, {"2stage", "full:5", "h200_sxm", 0},
    {"ring", "ring_1d:5", "h200_sxm", 0},   {"naive", "ring_1d:4", "h200_sxm", 0},
    /* a SIGNAL waits for the channel's peer stores to land (chan_write_land_gbps) and
     * for its previous SIGNAL (signal_release_ns, signal_release_remote_ns); a channel's
     * local loads are bounded (chan_local_read_gbps) */
    {"center_root", "ring_1d:5", "tests/data/model_land.yaml", 0},
    {"1stage", "h200_pair", "tests/data/model_land.yaml", 0},
    {"2stage", "full:5", "tests/data/model_land.yaml", 0},
    {"ring", "ring_1d:5", "tests/data/model_land.yaml", 0},
    /* two ranks per device: SIGNALs inside a device (signal_lat_local_ns) and across
     * (signal_release_remote_ns) in one plan, blocks starting one after another on a
     * device (launch_block_ns) */
    {"ring", "h200_pair", "tests/data/model_land.yaml", 4},
    {"2stage", "h200_pair", "tests/data/model_land.yaml", 4},
    /* a channel's local and host loads of one op adding up */
    {"naive", "h200_pair", "tests/data/model_land.yaml", 0},
    /* in-network reduction (the switch adds): every rank's NETREDUCE crosses every link,
     * each direction shared alike by all ranks in step; one and two ranks per device */
    {"innet", "switch:4", "tests/data/h200_est.yaml", 0}, {"innet", "switch:4", "tests/data/h200_est.yaml", 8},
};

START_TEST(test_agrees_with_analytic) {
    const uint64_t counts[] = {4096, 3 << 20};
    const ar_dtype_t dtypes[] = {AR_BF16, AR_FP32};
    for (size_t i = 0; i < sizeof agree_cases / sizeof agree_cases[0]; i++) {
        const agree_case_t *c = &agree_cases[i];
        ar_topo_t *t = tu_topo_open(c->topo, c->model && strchr(c->model, '/') ? test_path(c->model) : c->model);
        if (c->nranks) {
            ar_error_t err;
            ck_assert_msg(ar_topo_place_blocks(t, c->nranks, &err) == AR_OK, "%s", err.message);
        }
        if (!strcmp(c->algo, "innet")) t->model->switch_reduce = 1;
        for (int k = 0; k < 2; k++) {
            ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
            o.channels = 1;
            ar_plan_t *p;
            ar_error_t err;
            ck_assert_msg(ar_algo_build(c->algo, t, counts[k], dtypes[k], &o, &p, &err) == AR_OK,
                          "%s on %s: %s", c->algo, c->topo, err.message);
            ar_result_t s, a;
            run_on("sim", t, p, AR_MEM_HBM, 0, &s);
            run_on("analytic", t, p, AR_MEM_HBM, 0, &a);
            double rel = fabs(s.time_s - a.time_s) / a.time_s;
            ck_assert_msg(rel < 0.005, "%s on %s, count %llu: sim %.6g us, analytic %.6g us (%.3f%%)",
                          c->algo, c->topo, (unsigned long long)counts[k], s.time_s * 1e6,
                          a.time_s * 1e6, rel * 100);
            ck_assert_uint_eq(s.ops_executed, a.ops_executed);
            ar_plan_free(p);
        }
        ar_topo_free(t);
    }
}
END_TEST

/* ---- contention: slower by what the shared resource predicts ---- */

/* Two channels push B each over the same link direction at once: they share it, so
 * both take 2B / bw; the analytic backend's backlog ends the pair at 2B / bw too. */
START_TEST(test_two_flows_one_link) {
    ar_topo_t *t = round_topo("ring_1d:4");
    const uint64_t n = 1 << 20;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(4, 2, 2 * n);
    for (int c = 0; c < 2; c++)
        ck_assert_int_eq(ar_plan_copy(p, 0, c, ar_addr(1, AR_BUF_OUT, c * n),
                                      ar_addr(0, AR_BUF_IN, c * n), n),
                         AR_OK);
    ar_result_t s, a;
    run(t, p, 1, &s);
    run_on("analytic", t, p, AR_MEM_HBM, 0, &a);
    EQ(a.time_s, LAUNCH + MEMLAT + HOP + 2 * B / LINK_BW);
    EQ(s.time_s, LAUNCH + MEMLAT + HOP + 2 * B / LINK_BW);
    const ar_link_stat_t *l = link_stat(&s, 0, t->links[0].a == 0 ? 1 : -1);
    ck_assert_ptr_nonnull(l);
    EQ(l->bytes, 2 * B);
    EQ(l->busy_s, 2 * B / LINK_BW);
    /* The other direction of the same pair is its own (split duplex): a push back
     * at the same time does not slow them down. */
    ar_result_free(&s);
    ar_result_free(&a);
    ar_plan_free(p);
    p = tu_plan_new(4, 2, 2 * n);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(1, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n),
                     AR_OK);
    ck_assert_int_eq(ar_plan_copy(p, 1, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(1, AR_BUF_IN, 0), n),
                     AR_OK);
    run(t, p, 0, &s);
    EQ(s.time_s, LAUNCH + MEMLAT + HOP + B / LINK_BW);
    ar_result_free(&s);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* Four ranks placed on one device each copy IN to OUT locally: alone, 2B through the
 * device's HBM; together 8B through the one HBM, four times as long. */
START_TEST(test_shared_hbm) {
    ar_topo_t *t = round_topo("full:1");
    ar_error_t err;
    ck_assert_msg(ar_topo_place_blocks(t, 4, &err) == AR_OK, "%s", err.message);
    const uint64_t n = 1 << 22;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(4, 1, n);
    for (int r = 0; r < 4; r++)
        ck_assert_int_eq(ar_plan_copy(p, r, 0, ar_addr(r, AR_BUF_OUT, 0), ar_addr(r, AR_BUF_IN, 0), n),
                         AR_OK);
    ar_result_t s, a;
    run(t, p, 0, &s);
    run_on("analytic", t, p, AR_MEM_HBM, 0, &a);
    EQ(a.time_s, LAUNCH + MEMLAT + 4 * 2 * B / MEM_BW); /* the memory's backlog: the same end */
    EQ(s.time_s, LAUNCH + MEMLAT + 4 * 2 * B / MEM_BW);
    EQ(s.terms_s[AR_TERM_MEMORY], MEMLAT + 8 * B / MEM_BW);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* Eight channels of one rank each REDUCE two local sources: every op crosses the HBM
 * three times (two loads, one store), so together they move 24B through it, and each then
 * adds its B at the reduction rate: every channel's repeated crossings count. */
START_TEST(test_shared_hbm_reduce) {
    ar_topo_t *t = round_topo("full:1");
    const uint64_t n = 1 << 20;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(1, 8, 8 * n);
    p->scratch_elems = 8 * n;
    for (int c = 0; c < 8; c++) {
        const ar_addr_t srcs[2] = {ar_addr(0, AR_BUF_IN, (uint64_t)c * n), ar_addr(0, AR_BUF_SCRATCH, (uint64_t)c * n)};
        ck_assert_int_eq(ar_plan_reduce(p, 0, c, ar_addr(0, AR_BUF_OUT, (uint64_t)c * n), srcs, 2, n), AR_OK);
    }
    ar_result_t s;
    run(t, p, 0, &s);
    EQ(s.time_s, LAUNCH + MEMLAT + 24 * B / MEM_BW + B / RED_BW);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* A plan whose ranks push in lockstep rounds (round j: every rank's j-th COPY):
 * what the shared links predict, the sum over rounds of the busiest link direction's
 * bytes / bandwidth in that round. */
static double rounds_link_s(const ar_topo_t *t, const ar_plan_t *p, int *nrounds) {
    double total = 0;
    ar_op_traffic_t tr[64];
    double *bytes = calloc((size_t)2 * t->nlinks, sizeof *bytes);
    for (int j = 0;; j++) {
        memset(bytes, 0, (size_t)2 * t->nlinks * sizeof *bytes);
        int any = 0;
        for (int r = 0; r < p->nranks; r++) {
            const ar_chan_t *ch = ar_plan_chan(p, r, 0);
            int k = 0;
            for (uint32_t i = 0; i < ch->nops; i++) {
                const ar_op_t *op = &p->ops[ch->first + i];
                if (op->code != AR_OP_COPY || k++ != j) continue;
                ar_op_cost_t cost;
                int nt = 0;
                ck_assert_int_eq(ar_cost_op(t, p, op, r, AR_MEM_HBM, &cost, tr, 64, &nt, NULL), AR_OK);
                for (int x = 0; x < nt; x++)
                    if (tr[x].res == AR_RES_LINK) bytes[tr[x].link * 2 + (tr[x].dir < 0)] += tr[x].bytes;
                any = 1;
            }
        }
        if (!any) {
            *nrounds = j;
            break;
        }
        double worst = 0;
        for (int l = 0; l < 2 * t->nlinks; l++) {
            const ar_link_t *lk = &t->links[l / 2];
            worst = fmax(worst, bytes[l] / (lk->count * t->model->links[lk->kind].bw_gbps * 1e9));
        }
        total += worst;
    }
    free(bytes);
    return total;
}

/* 1stage (round j: every rank pushes its input to the peer j places on) run on a
 * ring, where the pushes of a round share links: at distance j every link direction
 * carries j pushes at once. Both backends take what the shared links predict, plus the reduction and the
 * latencies, which the link time dwarfs here. An odd ring keeps routes unique, so
 * every push of a round is equally loaded and the rounds stay in step. */
START_TEST(test_1stage_on_ring) {
    ar_topo_t *full = round_topo("full:5");
    ar_topo_t *ring = round_topo("ring_1d:5");
    const uint64_t n = 1 << 20;
    const double B = n * 4.0;
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
    o.channels = 1;
    o.chunk_bytes = (uint64_t)B; /* one push per peer */
    ar_plan_t *p;
    ar_error_t err;
    ck_assert_msg(ar_algo_build("1stage", full, n, AR_FP32, &o, &p, &err) == AR_OK, "%s",
                  err.message);
    ar_result_t s_full, s_ring, a_ring, a_full;
    run_on("sim", ring, p, AR_MEM_HBM, 0, &s_ring);
    run_on("analytic", ring, p, AR_MEM_HBM, 0, &a_ring);
    int nrounds = 0;
    double predicted = rounds_link_s(ring, p, &nrounds);
    ck_assert_int_eq(nrounds, 4);
    /* Distances 1, 2, 2, 1. */
    EQ(predicted, 6 * B / LINK_BW);
    double extra = LAUNCH + 4 * B / RED_BW + 6 * B / MEM_BW + 2 * SIG + 8 * (MEMLAT + 2 * HOP);
    ck_assert_msg(s_ring.time_s >= predicted && s_ring.time_s <= predicted + extra,
                  "sim %.6g us, the shared links predict %.6g us (+ up to %.6g us)",
                  s_ring.time_s * 1e6, predicted * 1e6, extra * 1e6);
    /* Analytic: each link direction's backlog serves the pushes in turn, and the rounds
     * end as the shared links predict: within 1% of sim. */
    ck_assert_msg(a_ring.time_s >= predicted && fabs(a_ring.time_s - s_ring.time_s) < 0.01 * s_ring.time_s,
                  "analytic %.6g us, sim %.6g us, the shared links predict %.6g us", a_ring.time_s * 1e6,
                  s_ring.time_s * 1e6, predicted * 1e6);
    /* With every pair linked nothing is shared: sim and analytic agree there. */
    run_on("sim", full, p, AR_MEM_HBM, 0, &s_full);
    run_on("analytic", full, p, AR_MEM_HBM, 0, &a_full);
    ck_assert_double_eq_tol(s_full.time_s, a_full.time_s, 0.005 * a_full.time_s);
    ar_plan_free(p);
    ar_topo_free(full);
    ar_topo_free(ring);
}
END_TEST

/* A push to a device two hops away on ring_1d:5 passes through device 1, which stores
 * the bytes and loads them again to send them on: its memory serves 2B and they arrive a
 * memory latency later. With the HBM at the link's 10 GB/s that memory is the bound, in
 * sim and in analytic: launch + memory latency at the source and at the forwarder + two
 * hops + 2B / HBM; the links carry B each. */
START_TEST(test_forward_through_device) {
    char yaml[2048];
    snprintf(yaml, sizeof yaml, ROUND_MODEL_FMT, "1000000", "1000");
    static const char fast[] = "read_gbps: 1000, write_gbps: 1000, lat_ns: 100",
                      slow[] = "read_gbps:   10, write_gbps:   10, lat_ns: 100";
    char *hbm = strstr(yaml, fast);
    ck_assert_ptr_nonnull(hbm);
    memcpy(hbm, slow, sizeof slow - 1);
    ar_model_t *m;
    ar_topo_t *t;
    ar_error_t err;
    ck_assert_msg(ar_model_load_string(yaml, "round_slow_hbm", &m, &err) == AR_OK, "%s", err.message);
    ck_assert_msg(ar_topo_build("ring_1d:5", m, &t, &err) == AR_OK, "%s", err.message);
    const uint64_t n = 1 << 20;
    const double B = n * 4.0, SLOW = 10e9;
    ar_plan_t *p = tu_plan_new(5, 1, n);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(2, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
    for (int b = 0; b < 2; b++) {
        ar_result_t r;
        run_on(b ? "analytic" : "sim", t, p, AR_MEM_HBM, 1, &r);
        EQ(r.time_s, LAUNCH + 2 * MEMLAT + 2 * HOP + 2 * B / SLOW);
        ck_assert_int_eq(tu_links_carrying(&r, B), 2);
        ar_result_free(&r);
    }
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* ---- channels: few cannot fill a link ---- */

/* h200_pair on h200_est: rank 0 pulls B from rank 1 split over k channels. A channel keeps
 * chan_inflight_bytes in flight over chan_read_lat_ns (8192 B / 1.1 us = 7.45 GB/s),
 * so 8 channels reach ~60 GB/s (DESIGN.md measured 60) and 132 channels are bound
 * by the NV18 bundle (18 x 26.562 GB/s). */
START_TEST(test_channel_bound) {
    ar_topo_t *t = tu_topo_open("h200_pair", test_path("tests/data/h200_est.yaml"));
    const ar_model_t *m = t->model;
    const double chan = ar_model_chan_read_gbps(m) * 1e9;
    const double link = 18 * m->links[t->links[0].kind].bw_gbps * 1e9;
    const int ks[] = {1, 8, 32, 132};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        int k = ks[i];
        const uint64_t per = 1 << 20; /* elements per channel, fp32 */
        ar_plan_t *p = tu_plan_new(2, k, per * k);
        for (int c = 0; c < k; c++)
            ck_assert_int_eq(ar_plan_copy(p, 0, c, ar_addr(0, AR_BUF_OUT, c * per),
                                          ar_addr(1, AR_BUF_IN, c * per), per),
                             AR_OK);
        ar_result_t r;
        run(t, p, 0, &r);
        double lat = m->mem[AR_MEM_HBM].lat_ns * 1e-9 + m->links[0].lat_ns * 1e-9 +
                     m->op_overhead_ns * 1e-9; /* the executor's own cost of the op */
        double bytes = 4.0 * per * k;
        double gbps = bytes / (r.time_s - m->launch_ns * 1e-9 - lat) / 1e9;
        double want = fmin(k * chan, link) / 1e9;
        ck_assert_msg(fabs(gbps - want) < 1e-3 * want, "%d channels: %.3f GB/s, want %.3f", k,
                      gbps, want);
        if (k == 8) ck_assert(gbps > 55 && gbps < 65);
        ar_plan_free(p);
    }
    ar_topo_free(t);
}
END_TEST

/* ---- buffer kind ---- */

/* The same local copy from tcm, sram and hbm takes that level's latency and
 * bandwidth; a whole allreduce is faster in faster memory; a buffer larger than the
 * level is an error naming the level and both sizes. */
START_TEST(test_buffer_kind) {
    ar_topo_t *t = round_topo("ring_1d:2");
    const uint64_t n = 4096;
    const double B = n * 4.0;
    const double lat[AR_NMEM] = {5 * NS, 10 * NS, 100 * NS};
    const double bw[AR_NMEM] = {8000e9, 4000e9, 1000e9};
    ar_plan_t *p = tu_plan_new(2, 1, n);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n),
                     AR_OK);
    double prev = 0;
    for (int b = 0; b < AR_NMEM; b++) {
        ar_result_t r;
        run_on("sim", t, p, (ar_mem_t)b, 0, &r);
        EQ(r.time_s, LAUNCH + lat[b] + 2 * B / bw[b]);
        ck_assert(r.time_s > prev);
        prev = r.time_s;
    }
    ar_plan_free(p);
    ar_topo_free(t);

    t = tu_topo_open("torus_2d_3x2", NULL);
    double times[AR_NMEM];
    for (int b = 0; b < AR_NMEM; b++) {
        ck_assert_int_eq(ar_algo_build("torus2d", t, 256 * 1024, AR_BF16, NULL, &p, NULL), AR_OK);
        ar_result_t r;
        run_on("sim", t, p, (ar_mem_t)b, 0, &r);
        times[b] = r.time_s;
        ar_plan_free(p);
    }
    ck_assert_msg(times[AR_MEM_TCM] < times[AR_MEM_SRAM] && times[AR_MEM_SRAM] < times[AR_MEM_HBM],
                  "tcm %g sram %g hbm %g", times[0], times[1], times[2]);

    /* 2M bf16 elements: IN + OUT + scratch exceed the model's 4 MiB of tcm. */
    ck_assert_int_eq(ar_algo_build("torus2d", t, 2 << 20, AR_BF16, NULL, &p, NULL), AR_OK);
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    o.buffer = AR_MEM_TCM;
    ar_result_t r;
    ar_error_t err;
    ar_error_clear(&err);
    ck_assert_int_eq(ar_backend_run("sim", t, p, &o, &r, &err), AR_ELIMIT);
    char need[64], have[64];
    ar_bytes_human((double)(2 * p->count + p->scratch_elems) * ar_dtype_size(p->dtype), need, sizeof need);
    ar_bytes_human(t->model->mem[AR_MEM_TCM].capacity_bytes, have, sizeof have);
    ck_assert_msg(strstr(err.message, "tcm") && strstr(err.message, need) && strstr(err.message, have),
                  "message: %s (want tcm, %s, %s)", err.message, need, have);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* ---- errors ---- */

START_TEST(test_errors) {
    ar_topo_t *t = round_topo("ring_1d:2");
    ar_error_t err;
    ar_result_t r;
    /* A WAIT no SIGNAL ever meets. */
    ar_plan_t *p = tu_plan_new(2, 1, 16);
    ck_assert_int_eq(ar_plan_signal(p, 1, 0, 0, 0), AR_OK);
    ck_assert_int_eq(ar_plan_wait(p, 0, 0, 0, 1), AR_OK);
    ck_assert_int_eq(ar_plan_wait(p, 1, 0, 0, 1), AR_OK);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    ar_error_clear(&err);
    ck_assert_int_eq(ar_backend_run("sim", t, p, NULL, &r, &err), AR_EPLAN);
    ck_assert_msg(strstr(err.message, "deadlock") && strstr(err.message, "rank 1"), "%s",
                  err.message);
    ar_plan_free(p);
    /* An unfinished plan, and a plan for another rank count. */
    p = tu_plan_new(2, 1, 16);
    ck_assert_int_eq(ar_backend_run("sim", t, p, NULL, &r, &err), AR_EPLAN);
    ar_plan_free(p);
    p = tu_plan_new(3, 1, 16);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    ck_assert_int_eq(ar_backend_run("sim", t, p, NULL, &r, &err), AR_EPLAN);
    ar_plan_free(p);
    ar_topo_free(t);
    /* A level the model does not have. */
    t = tu_topo_open("h200_pair", NULL);
    ck_assert_int_eq(ar_algo_build("ring", t, 1024, AR_BF16, NULL, &p, NULL), AR_OK);
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    o.buffer = AR_MEM_TCM;
    ck_assert_int_eq(ar_backend_run("sim", t, p, &o, &r, &err), AR_EINVAL);
    ck_assert_msg(strstr(err.message, "tcm") != NULL, "%s", err.message);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* ---- every shipped topology, every algorithm that fits ---- */

/* Whether some op of p reads or writes a rank whose device is not a neighbour of its
 * own: traffic the backends route through other devices. */
static int plan_routed(const ar_topo_t *t, const ar_plan_t *p) {
    for (int r = 0; r < p->nranks; r++)
        for (int c = 0; c < p->nchannels; c++) {
            const ar_chan_t *ch = &p->chans[r * p->nchannels + c];
            for (uint32_t k = ch->first; k < ch->first + ch->nops; k++) {
                const ar_op_t *op = &p->ops[k];
                if (op->code != AR_OP_COPY && op->code != AR_OP_REDUCE) continue;
                for (uint32_t s = 0; s <= op->nsrc; s++) {
                    const ar_addr_t *a = ar_op_operand(p, op, s);
                    if (a->rank != AR_RANK_HOST && !ar_topo_rank_adjacent(t, r, a->rank)) return 1;
                }
            }
        }
    return 0;
}

START_TEST(test_shipped_topologies) {
    const char *const *names = ar_topo_shipped();
    int runs = 0;
    for (int i = 0; names[i]; i++) {
        ar_topo_t *t = tu_topo_open(names[i], NULL);
        for (const ar_algo_t *const *a = ar_algo_all(); *a; a++) {
            ar_plan_t *p;
            if (ar_algo_build((*a)->name, t, 100003, AR_BF16, NULL, &p, NULL) != AR_OK) continue;
            ar_result_t s, an;
            run_on("sim", t, p, AR_MEM_HBM, 1, &s);
            run_on("analytic", t, p, AR_MEM_HBM, 0, &an);
            /* Both share links; the analytic backend's batches of processor sharing may run
             * a little behind SimGrid's max-min sharing on a step, never far: sim is never
             * more than 1% faster. Where ops reach non-neighbours through other devices the
             * two part further (analytic shares each resource on its own, max-min holds a
             * flow over several busy links at the slowest one's share): within 25%. */
            const double slack = plan_routed(t, p) ? 0.25 : 1e-2;
            ck_assert_msg(s.time_s >= an.time_s * (1 - slack), "%s on %s: sim %g < analytic %g",
                          (*a)->name, names[i], s.time_s, an.time_s);
            ck_assert_int_eq(s.nlinks, 2 * t->nlinks);
            ar_result_free(&s);
            ar_plan_free(p);
            runs++;
        }
        ar_topo_free(t);
    }
    ck_assert_int_ge(runs, 20);
}
END_TEST

/* ---- reductions charged to the channel's clock = reductions as SimGrid execs ---- */

/* A channel's core is its own, so charging a reduction to the channel's clock (the
 * default) and running it as a SimGrid exec (ARSIM_SIM_EXEC=1) agree exactly, on
 * hand-made plans and on algorithms with contention. */
START_TEST(test_reduce_as_exec) {
    const char *topos[] = {"ring_1d:5", "full:4", "torus_2d:3x3"};
    const char *algos[] = {"ring", "1stage", "torus2d"};
    for (int i = 0; i < 3; i++) {
        ar_topo_t *t = tu_topo_open(topos[i], NULL);
        ar_plan_t *p;
        ck_assert_int_eq(ar_algo_build(algos[i], t, 300001, AR_BF16, NULL, &p, NULL), AR_OK);
        ar_result_t lazy, exec;
        unsetenv("ARSIM_SIM_EXEC");
        run(t, p, 0, &lazy);
        setenv("ARSIM_SIM_EXEC", "1", 1);
        run(t, p, 0, &exec);
        unsetenv("ARSIM_SIM_EXEC");
        ck_assert_msg(fabs(lazy.time_s - exec.time_s) <= 1e-9 * exec.time_s,
                      "%s on %s: %.9g us charged, %.9g us as execs", algos[i], topos[i],
                      lazy.time_s * 1e6, exec.time_s * 1e6);
        for (int k = 0; k < AR_NTERM; k++)
            ck_assert_double_eq_tol(lazy.terms_s[k], exec.terms_s[k], 1e-9 * exec.time_s);
        ck_assert(lazy.terms_s[AR_TERM_REDUCE] > 0);
        ar_plan_free(p);
        ar_topo_free(t);
    }
}
END_TEST

/* ---- arsim sweep / merge (through the built binary) ---- */

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...) {
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    /* bash for <( ) */
    char *argv[] = {"bash", "-c", cmd, NULL};
    pid_t pid = fork();
    if (pid == 0) {
        execvp("bash", argv);
        _exit(127);
    }
    int rc = 0;
    waitpid(pid, &rc, 0);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

#define SWEEP_SEL "--topology ring_1d:4,full:4 --algo ring,1stage,naive --size 8K:256K " \
                  "--dtype bf16,fp32 --buffer hbm,sram -q"
/* The rows without sim_wall_s (the one column that varies), sorted. */
#define ROWS(f) "tail -n +2 " f " | cut -d, -f1-21 | sort"

/* Shards run apart and merged are the whole sweep; so are a sweep cut short (a torn
 * last line included) and its --resume, which runs only the missing rows. */
START_TEST(test_sweep_shards_resume) {
    char dir[] = "/tmp/arsim-sweep-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *bin = ARSIM_BUILDDIR "/arsim";
    ck_assert_int_eq(sh("cd %s && %s sweep " SWEEP_SEL " --out all.csv --json all.json", dir, bin), 0);
    ck_assert_int_eq(sh("cd %s && test $(wc -l < all.csv) -eq 145", dir), 0); /* 144 runs */
    ck_assert_int_eq(sh("cd %s && grep -c '\"sim_wall_s\"' all.json | grep -qx 144", dir), 0);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(sh("cd %s && %s sweep " SWEEP_SEL " --shard %d/3 --jobs 2 --out s%d.csv",
                            dir, bin, i, i), 0);
    ck_assert_int_eq(sh("cd %s && %s merge s0.csv s1.csv s2.csv s1.csv -o m.csv 2>/dev/null", dir, bin), 0);
    ck_assert_int_eq(sh("cd %s && diff <(" ROWS("all.csv") ") <(" ROWS("m.csv") ") >/dev/null", dir), 0);
    /* Cut: keep the header and 70 rows, then half a row. */
    ck_assert_int_eq(sh("cd %s && head -n 71 all.csv > cut.csv && sed -n 80p all.csv | head -c 40 "
                        ">> cut.csv", dir), 0);
    ck_assert_int_eq(sh("cd %s && %s sweep " SWEEP_SEL " --resume --out cut.csv", dir, bin), 0);
    ck_assert_int_eq(sh("cd %s && diff <(" ROWS("all.csv") ") <(" ROWS("cut.csv") ") >/dev/null", dir), 0);
    /* Bad input: a shard out of range, no --out. */
    ck_assert_int_eq(sh("%s sweep --shard 3/3 --out /dev/null 2>/dev/null", bin), 2);
    ck_assert_int_eq(sh("%s sweep --size 8K 2>/dev/null", bin), 2);
    sh("rm -rf %s", dir);
}
END_TEST

/* ---- a plan of one rank (arsim/plan.h): rank 0's ops stand for every rank's ---- */

static ar_plan_t *build_sym(const char *algo, const ar_topo_t *t, uint64_t count, ar_coll_t coll, int channels,
                            ar_symmetry_t sym) {
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
    o.channels = channels;
    o.coll = coll;
    o.symmetry = sym;
    ar_plan_t *p;
    ar_error_t err;
    ck_assert_msg(ar_algo_build(algo, t, count, AR_BF16, &o, &p, &err) == AR_OK, "%s on %s: %s", algo, t->name,
                  err.message);
    return p;
}

/* Plans one (rank 0's alone) and all (every rank's) take the same time to a share tol on
 * analytic and sim, and (terms) the same per-term breakdown. */
static void same_time_both_backends(const ar_topo_t *t, ar_plan_t *one, ar_plan_t *all, double tol, int terms) {
    const char *backends[] = {"analytic", "sim"};
    for (int b = 0; b < 2; b++) {
        ar_result_t r1, ra;
        run_on(backends[b], t, one, AR_MEM_HBM, 0, &r1);
        run_on(backends[b], t, all, AR_MEM_HBM, 0, &ra);
        ck_assert_msg(fabs(r1.time_s - ra.time_s) <= tol * ra.time_s, "%s %s on %s: rank 0 alone %.9g us, every rank %.9g us",
                      backends[b], one->algo, t->name, r1.time_s * 1e6, ra.time_s * 1e6);
        for (int k = 0; terms && k < AR_NTERM; k++) ck_assert_double_eq_tol(r1.terms_s[k], ra.terms_s[k], tol * ra.time_s);
        ar_result_free(&r1);
        ar_result_free(&ra);
    }
}

/* Where the topology's translations map the plan onto itself, rank 0's ops alone give
 * every backend that times from the model the time of every rank's, to the last digit;
 * a plan of one rank holds 1/P of the ops. */
START_TEST(test_one_rank_plan) {
    static const struct {
        const char *topo, *algo;
        uint64_t count;
        ar_coll_t coll;
        int channels;
    } cases[] = {
        {"torus_2d:4x4", "torus2d", 1u << 19, AR_COLL_ALLREDUCE, 4},
        {"torus_2d:8x4", "torus2d", 3u << 18, AR_COLL_ALLREDUCE, 8},
        {"torus_2d:4x4", "torus2d", 1u << 21, AR_COLL_ALLREDUCE, 16},
        {"ring_1d:8", "ring", 1u << 20, AR_COLL_ALLREDUCE, 4},
        {"ring_1d:8", "ring", 1u << 20, AR_COLL_REDUCESCATTER, 2},
        {"ring_1d:8", "ring", 1u << 20, AR_COLL_ALLGATHER, 2},
        {"full:8", "ring", 1u << 19, AR_COLL_ALLREDUCE, 2},
        {"switch:8", "ring", 1u << 18, AR_COLL_ALLREDUCE, 4},
        {"switch:8", "1stage", 1u << 18, AR_COLL_ALLREDUCE, 4},
        {"switch:8", "2stage", 1u << 18, AR_COLL_ALLREDUCE, 2},
        {"switch:8", "direct", 1u << 18, AR_COLL_REDUCESCATTER, 2},
        {"full:8", "2stage", 1u << 18, AR_COLL_ALLREDUCE, 2},
        {"ring_1d:7", "1stage", 7u << 16, AR_COLL_ALLREDUCE, 2},
        /* peers numbered round the torus's own axes; ties halfway round forwards */
        {"torus_2d:4x4", "1stage", 1u << 18, AR_COLL_ALLREDUCE, 4},
        {"torus_2d:4x4", "2stage", 1u << 20, AR_COLL_ALLREDUCE, 2},
        {"torus_2d:4x2", "direct", 1u << 18, AR_COLL_ALLGATHER, 2},
        {"ring_1d:8", "2stage", 1u << 20, AR_COLL_ALLREDUCE, 2},
        {"switch:8", "innet", 1u << 18, AR_COLL_ALLREDUCE, 2},
        /* through host memory: every rank's slot there, its peers taken by their offsets */
        {"switch:8", "naive", 1u << 18, AR_COLL_ALLREDUCE, 2},
        {"torus_2d:4x4", "naive", 1u << 18, AR_COLL_ALLREDUCE, 1},
        {"ring_1d:8", "naive", (1u << 18) + 8, AR_COLL_ALLREDUCE, 4},
        /* a grid laid over a switch or full: its own shifts, not the topology's rotations */
        {"switch:12", "torus2d", 774144, AR_COLL_ALLREDUCE, 4}, /* its 4 x 3 grid's pieces alike at the default chunk */
        {"full:16", "torus2d", 1u << 20, AR_COLL_ALLREDUCE, 4},
        /* parts alike but for where each starts off a vector: 8193 elements a rank, each op's
         * head or tail scalar wherever it lies, which is all its offset costs */
        {"ring_1d:8", "ring", (1u << 16) + 8, AR_COLL_ALLREDUCE, 2},
        {"torus_2d:8x4", "torus2d", 64, AR_COLL_ALLREDUCE, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* (full and switch open with a GPU's model, which charges warmth: not this one) */
        ar_topo_t *t = tu_topo_open(cases[i].topo, "accel_tcm");
        if (!strcmp(cases[i].algo, "innet")) t->model->switch_reduce = 1; /* its switch reduces */
        ar_plan_t *one = build_sym(cases[i].algo, t, cases[i].count, cases[i].coll, cases[i].channels, AR_SYMMETRY_ON);
        ar_plan_t *all = build_sym(cases[i].algo, t, cases[i].count, cases[i].coll, cases[i].channels, AR_SYMMETRY_OFF);
        ck_assert_msg(one->only_rank == 0, "%s on %s: every rank's ops, not rank 0's", cases[i].algo, cases[i].topo);
        ck_assert_int_eq(all->only_rank, -1);
        ck_assert_uint_eq((uint64_t)one->nops * (uint64_t)t->nranks, all->nops);
        same_time_both_backends(t, one, all, 1e-9, 1);
        /* it carries no data: nothing verifies or runs it on data */
        ar_error_t err;
        ck_assert_int_eq(ar_plan_verify(one, &err), AR_EINVAL);
        ck_assert_msg(strstr(err.message, "rank 0's ops alone") != NULL, "%s", err.message);
        ar_result_t r;
        ck_assert_int_eq(ar_backend_run("ref", t, one, NULL, &r, &err), AR_EINVAL);
        ck_assert_msg(strstr(err.message, "only be timed from a model") != NULL, "%s", err.message);
        ar_result_free(&r);
        ar_plan_free(one);
        ar_plan_free(all);
        ar_topo_free(t);
    }
}
END_TEST

/* A grid of ranks laid over a ring (torus2d on ring_1d) is a translate of itself under the
 * ring's rotations by whole rows, not by one rank: the ops of rank 0's row stand for every
 * rank's, each link and memory folded onto the one of its orbit the row uses, to the last
 * digit on both backends; the row holds W/P of the ops. So is torus2d on a torus where the
 * rows' allreduce of the block each holds splits it unevenly over the row (384 elements on
 * 16 x 16: columns' parts of 24, a row's of 1 and 2), where rank 0's alone do not stand. */
START_TEST(test_row_plan) {
    static const struct {
        const char *topo;
        uint64_t count;
        int channels, w;
    } cases[] = {
        {"ring_1d:16", 1u << 19, 4, 4},
        {"ring_1d:16", 1u << 21, 16, 4},
        {"ring_1d:32", 3u << 18, 8, 8},
        {"ring_1d:64", 1u << 20, 2, 8},
        {"torus_2d:16x16", 384, 1, 16},
        {"torus_2d:8x4", 80, 2, 8},
        /* fewer elements a lane than ranks: columns first along the ring too, so the rows'
         * allreduce cuts every row's block (6 and 7 elements over 8 ranks, 0 or 1 each)
         * alike, and every rank's ops verify */
        {"ring_1d:64", 48, 1, 8},
        {"ring_1d:64", 112, 2, 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_topo_t *t = tu_topo_open(cases[i].topo, "accel_tcm");
        ar_plan_t *row = build_sym("torus2d", t, cases[i].count, AR_COLL_ALLREDUCE, cases[i].channels, AR_SYMMETRY_ON);
        ar_plan_t *all = build_sym("torus2d", t, cases[i].count, AR_COLL_ALLREDUCE, cases[i].channels, AR_SYMMETRY_OFF);
        ck_assert_msg(row->only_rank == 0 && row->only_span == cases[i].w, "torus2d on %s: rank %d, span %d",
                      cases[i].topo, row->only_rank, row->only_span);
        ck_assert_int_eq(ar_plan_shifts(row), -cases[i].w);
        ck_assert_uint_eq((uint64_t)row->nops * (uint64_t)t->nranks, (uint64_t)all->nops * (uint64_t)cases[i].w);
        same_time_both_backends(t, row, all, 1e-9, 1);
        ar_error_t err;
        ck_assert_int_eq(ar_plan_verify(row, &err), AR_EINVAL);
        ck_assert_msg(ar_plan_verify(all, &err) == AR_OK, "torus2d on %s: %s", cases[i].topo, err.message);
        ar_plan_free(row);
        ar_plan_free(all);
        ar_topo_free(t);
    }
    /* the rotations by rows: a ring's by any divisor, a torus's by whole rows of its grid */
    ar_topo_t *ring = tu_topo_open("ring_1d:12", NULL), *torus = tu_topo_open("torus_2d:4x3", NULL);
    ck_assert(ar_topo_translatable(ring, -4) && ar_topo_translatable(ring, -3) && !ar_topo_translatable(ring, -5));
    ck_assert(!ar_topo_translatable(ring, -12));
    ck_assert(ar_topo_translatable(torus, -4) && !ar_topo_translatable(torus, -2) && !ar_topo_translatable(torus, -6));
    ck_assert_int_eq(ar_topo_translate(ring, -4, 9, 2), 2 - 8 + 12); /* 9 -> 1: every node back by 8 */
    ck_assert_int_eq(ar_topo_orbit_device(ring, -4, 11), 3);
    ck_assert_int_eq(ar_topo_orbit_device(torus, -4, 6), 2);
    int *slot = malloc(2 * (size_t)ring->nlinks * sizeof *slot);
    ck_assert_int_eq(ar_topo_fold_links(ring, -4, slot), AR_OK);
    for (int l = 0; l < ring->nlinks; l++) /* each direction onto one leaving a device of the first row */
        for (int d = 0; d < 2; d++) {
            const ar_link_t *k = &ring->links[slot[2 * l + d] / 2];
            ck_assert_int_lt(slot[2 * l + d] % 2 ? k->b : k->a, 4);
        }
    free(slot);
    ar_topo_free(ring);
    ar_topo_free(torus);
}
END_TEST

/* A plan of a row whose build stops at max_ops (the search asking whether it is small enough
 * to time) is no verdict that the row does not stand: the same plan built with no cap after it
 * is the row's (torus_2d:256x64 at 8 KB ran every rank's ops, 25 M of them, in 7 s where the
 * row's take 0.6). */
START_TEST(test_row_plan_after_cap) {
    ar_topo_t *t = tu_topo_open("torus_2d:16x16", "accel_tcm");
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
    o.channels = 1;
    o.symmetry = AR_SYMMETRY_ON;
    ar_plan_t *p = NULL;
    ar_error_t err;
    ck_assert_int_eq(ar_algo_build("torus2d", t, 384, AR_BF16, &o, &p, &err), AR_OK);
    ck_assert(p->only_rank == 0 && p->only_span == 16);
    const uint32_t row_ops = p->nops;
    ar_plan_free(p);
    ar_topo_free(t);
    t = tu_topo_open("torus_2d:16x16", "accel_tcm"); /* no verdict kept yet */
    o.max_ops = row_ops / 2;
    p = NULL;
    ck_assert_int_eq(ar_algo_build("torus2d", t, 384, AR_BF16, &o, &p, &err), AR_ELIMIT);
    ar_plan_free(p);
    o.max_ops = 0;
    ck_assert_int_eq(ar_algo_build("torus2d", t, 384, AR_BF16, &o, &p, &err), AR_OK);
    ck_assert_msg(p->only_rank == 0 && p->only_span == 16, "rank %d, span %d", p->only_rank, p->only_span);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* Where rank 0's ops reach many ranks, its mirror offsets (ar_plan_t.mirror_off) are guessed from
 * its grid neighbours' plans and checked on a few ranks' (algorithms/registry.c, mirror_lattice),
 * else found from each rank's: either way, every one is the offset at which the rank whose
 * translate of rank 0's op reaches rank 0 touches it in the plan of every rank's ops. Cases
 * where the guess holds (2stage at 32 MB, 1stage, direct, 1stage over a torus's two axes) and
 * where it does not (2stage's slots at 64 KB on 16 ranks: each piece keeps its alignment in
 * IN, which no stride per rank gives), where each rank's plan answers. */
START_TEST(test_mirror_offsets_exact) {
    static const struct {
        const char *topo, *algo;
        uint64_t count, chunk_bytes;
        ar_coll_t coll;
        int channels;
    } cases[] = {
        {"switch:16", "2stage", 1u << 24, 32768, AR_COLL_ALLREDUCE, 4},
        {"switch:32", "1stage", 1u << 20, 0, AR_COLL_ALLREDUCE, 2},
        {"full:16", "direct", 1u << 22, 32768, AR_COLL_REDUCESCATTER, 4},
        {"torus_2d:4x4", "1stage", 1u << 20, 0, AR_COLL_ALLREDUCE, 2},
        {"switch:16", "2stage", 1u << 15, 2048, AR_COLL_ALLREDUCE, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_topo_t *t = tu_topo_open(cases[i].topo, "h200_sxm");
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        o.channels = cases[i].channels, o.chunk_bytes = cases[i].chunk_bytes, o.coll = cases[i].coll;
        ar_plan_t *one, *all;
        ar_error_t err;
        o.symmetry = AR_SYMMETRY_ON;
        ck_assert_msg(ar_algo_build(cases[i].algo, t, cases[i].count, AR_BF16, &o, &one, &err) == AR_OK, "%s", err.message);
        o.symmetry = AR_SYMMETRY_OFF;
        ck_assert_msg(ar_algo_build(cases[i].algo, t, cases[i].count, AR_BF16, &o, &all, &err) == AR_OK, "%s", err.message);
        ck_assert_msg(one->only_rank == 0 && one->only_span == 1 && one->mirror_off, "%s on %s, %llu: rank 0's alone (%d %d)",
                      cases[i].algo, cases[i].topo, (unsigned long long)cases[i].count, one->only_rank, one->only_span);
        const int w = ar_plan_shifts(one);
        uint64_t n = 0;
        for (int c = 0; c < one->nchannels; c++) {
            const ar_chan_t *c0 = ar_plan_chan(one, 0, c);
            for (uint32_t j = 0; j < c0->nops; j++) {
                const ar_op_t *x = &one->ops[c0->first + j];
                if (x->code == AR_OP_SIGNAL || x->code == AR_OP_WAIT) continue;
                for (uint32_t s = 0; s <= x->nsrc; s++) {
                    const ar_addr_t *u = ar_op_operand(one, x, s);
                    if (u->rank <= 0) continue;
                    const int m = ar_topo_translate(t, w, u->rank, 0);
                    const ar_op_t *y = &all->ops[ar_plan_chan(all, m, c)->first + j];
                    const ar_addr_t *v = ar_op_operand(all, y, s);
                    ck_assert_msg(v->rank == 0 && v->buf == u->buf, "%s on %s: rank %d's op %u", cases[i].algo,
                                  cases[i].topo, m, j);
                    ck_assert_msg(one->mirror_off[ar_plan_operand_index(one, u)] == v->off,
                                  "%s on %s, %llu elements: rank %d's op %u on rank 0 at %llu, guessed %llu", cases[i].algo,
                                  cases[i].topo, (unsigned long long)cases[i].count, m, j, (unsigned long long)v->off,
                                  (unsigned long long)one->mirror_off[ar_plan_operand_index(one, u)]);
                    n++;
                }
            }
        }
        ck_assert_msg(n >= (uint64_t)(t->ndevices - 1), "%s on %s: %llu operands on other ranks", cases[i].algo,
                      cases[i].topo, (unsigned long long)n);
        ar_plan_free(one);
        ar_plan_free(all);
        ar_topo_free(t);
    }
}
END_TEST

/* Where every rank's plan is past a plan's most, rank 0's stands only with its mirror offsets
 * guessed (walking every rank's own plan would be 1.6e9 ops): 2stage's and direct's pieces in
 * SCRATCH sit at their place within a vector, so each rank's offsets are its place times a
 * stride. At 1 MB on 16384 ranks each slice is 32 elements: at their place within 256 bytes
 * the offsets would repeat every 4 ranks, and no stride would give them. */
START_TEST(test_mirror_offsets_guessed) {
    static const struct {
        const char *algo;
        ar_coll_t coll;
    } cases[] = {{"2stage", AR_COLL_ALLREDUCE}, {"direct", AR_COLL_REDUCESCATTER}};
    ar_topo_t *t = tu_topo_open("switch:16384", "h200_sxm");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        o.channels = 1, o.coll = cases[i].coll, o.symmetry = AR_SYMMETRY_ON;
        ar_plan_t *one = NULL;
        ar_error_t err;
        ck_assert_msg(ar_algo_build(cases[i].algo, t, 1u << 19, AR_BF16, &o, &one, &err) == AR_OK, "%s: %s",
                      cases[i].algo, err.message);
        ck_assert_msg(one->only_rank == 0 && one->only_span == 1 && one->mirror_off, "%s: rank 0's alone",
                      cases[i].algo);
        ar_plan_free(one);
    }
    ar_topo_free(t);
}
END_TEST

/* Under a GPU's model, which charges bytes by their warmth, rank 0's ops (or its row's) alone
 * stand for every rank's with the other ranks' writes into rank 0's buffers at their own offsets
 * (ar_plan_t.mirror_off): the same time to 0.5% (ops that begin at one moment touch a device
 * in another order, which moves a byte's age a little). Taken at rank 0's own offsets
 * instead, the peers' slices in rank 0's buffers come out colder or warmer than they are. */
START_TEST(test_one_rank_plan_warmth) {
    static const struct {
        const char *topo, *algo;
        uint64_t count;
        int channels;
    } cases[] = {
        {"switch:8", "2stage", 1u << 23, 8}, {"switch:8", "1stage", 1u << 22, 8},
        {"ring_1d:8", "ring", 1u << 23, 4},  {"torus_2d:4x4", "torus2d", 1u << 23, 8},
        {"full:8", "2stage", 1u << 24, 16},   {"switch:16", "torus2d", 1u << 23, 8},
        {"full:16", "torus2d", 1u << 21, 4},  {"ring_1d:16", "torus2d", 1u << 23, 4},
        {"ring_1d:64", "torus2d", 1u << 23, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_topo_t *t = tu_topo_open(cases[i].topo, "h200_sxm");
        ar_plan_t *one = build_sym(cases[i].algo, t, cases[i].count, AR_COLL_ALLREDUCE, cases[i].channels, AR_SYMMETRY_ON);
        ar_plan_t *all = build_sym(cases[i].algo, t, cases[i].count, AR_COLL_ALLREDUCE, cases[i].channels, AR_SYMMETRY_OFF);
        ck_assert_msg(one->only_rank == 0 && one->mirror_off, "%s on %s: every rank's ops", cases[i].algo, cases[i].topo);
        /* a torus's grid laid over a ring: its rows shift onto themselves, its columns do not */
        if (!strncmp(cases[i].topo, "ring_1d", 7) && !strcmp(cases[i].algo, "torus2d"))
            ck_assert_msg(one->only_span > 1, "%s on %s: a plan of rank 0 alone", cases[i].algo, cases[i].topo);
        same_time_both_backends(t, one, all, 5e-3, 0);
        ar_plan_free(one);
        ar_plan_free(all);
        ar_topo_free(t);
    }
    /* a plan of one rank built without them (a model without warmth) is refused, not guessed */
    ar_topo_t *tcm = tu_topo_open("switch:8", "accel_tcm"), *gpu = tu_topo_open("switch:8", "h200_sxm");
    ar_plan_t *bare = build_sym("2stage", tcm, 1u << 20, AR_COLL_ALLREDUCE, 2, AR_SYMMETRY_ON);
    ck_assert(bare->only_rank == 0 && !bare->mirror_off);
    const char *backends[] = {"analytic", "sim"};
    for (int b = 0; b < 2; b++) {
        ar_result_t r;
        ar_error_t err;
        ck_assert_int_eq(ar_backend_run(backends[b], gpu, bare, NULL, &r, &err), AR_EPLAN);
        ck_assert_msg(strstr(err.message, "other ranks' offsets known") != NULL, "%s", err.message);
        ar_result_free(&r);
    }
    ar_plan_free(bare);
    ar_topo_free(tcm);
    ar_topo_free(gpu);
}
END_TEST

/* Every rank's ops where a translation does not map the plan onto itself (a tree rooted at
 * one rank, a snake ring over a torus, sizes that differ by rank), on a
 * topology without translations, and (auto) where every rank's plan is small. */
START_TEST(test_one_rank_plan_refused) {
    static const struct {
        const char *topo, *model, *algo;
        uint64_t count;
        ar_symmetry_t sym;
    } cases[] = {
        {"torus_2d:4x4", NULL, "center_root", 1u << 16, AR_SYMMETRY_ON},
        {"torus_2d:4x4", NULL, "ring", 1u << 16, AR_SYMMETRY_ON},
        {"ring_1d:8", NULL, "ring", (1u << 16) + 4, AR_SYMMETRY_ON},
        {"mesh_2d:4x4", NULL, "mesh2d", 1u << 16, AR_SYMMETRY_ON},
        {"ring_1d:16", NULL, "mesh2d", 1u << 16, AR_SYMMETRY_ON},  /* a mesh's rows are no rotation's */
        {"switch:16", NULL, "mesh2d", 1u << 16, AR_SYMMETRY_ON},   /* a tree to each block's owner */
        {"ring_1d:8", NULL, "ring", 1u << 16, AR_SYMMETRY_AUTO},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_topo_t *t = tu_topo_open(cases[i].topo, cases[i].model);
        ar_plan_t *p = build_sym(cases[i].algo, t, cases[i].count, AR_COLL_ALLREDUCE, 2, cases[i].sym);
        ck_assert_msg(p->only_rank == -1, "%s on %s: rank 0's ops alone", cases[i].algo, cases[i].topo);
        ar_error_t err;
        ck_assert_msg(ar_plan_verify(p, &err) == AR_OK, "%s", err.message);
        ar_plan_free(p);
        ar_topo_free(t);
    }
}
END_TEST

/* A ring over a torus walks a snake, no translate of itself; the ring's ops meet only along
 * it, each hop one link of the same kind, so ar_algo_topology times it on a ring_1d of the
 * torus's devices in the snake's order: the same devices (by name), the same links, and rank
 * 0's ops there take what every rank's take on the torus, to the last digit on both
 * backends, for allreduce and a reduce-scatter. Where the ring is a translate of itself already, none can be made (no ring
 * of neighbours, links that differ) or every rank's ops are asked for, the topology is the
 * given one. */
START_TEST(test_ring_on_its_cycle) {
    static const struct {
        const char *topo;
        int ranks;
        uint64_t count;
        ar_coll_t coll;
        int channels;
    } cases[] = {
        {"torus_2d:4x4", 16, 1u << 19, AR_COLL_ALLREDUCE, 4},
        {"torus_2d:6x4", 24, 3u << 17, AR_COLL_ALLREDUCE, 2},
        {"torus_2d:4x4", 16, 1u << 20, AR_COLL_REDUCESCATTER, 2},
    };
    const ar_algo_t *ring = ar_algo_find("ring");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_topo_t *t = tu_topo_open(cases[i].topo, "accel_tcm");
        ar_error_t err;
        ck_assert_int_eq(ar_topo_place_blocks(t, cases[i].ranks, &err), AR_OK);
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        o.symmetry = AR_SYMMETRY_AUTO;
        const ar_topo_t *v = ar_algo_topology(ring, t, &o);
        ck_assert_msg(v != t && v->kind == AR_TOPO_RING_1D && v->ndevices == t->ndevices && v->nranks == t->nranks,
                      "%s: no ring of its devices", cases[i].topo);
        ck_assert_ptr_eq(ar_algo_topology(ring, t, &o), v); /* made once */
        /* the snake: row 0 left to right first, every hop a link of the torus's */
        ck_assert_str_eq(v->nodes[1].name, t->nodes[1].name);
        ck_assert_str_eq(v->nodes[t->grid_w].name, t->nodes[2 * t->grid_w - 1].name);
        for (int d = 0; d < v->ndevices; d++) {
            int a = -1, b = -1;
            for (int n = 0; n < t->ndevices; n++) {
                if (!strcmp(t->nodes[n].name, v->nodes[d].name)) a = n;
                if (!strcmp(t->nodes[n].name, v->nodes[(d + 1) % v->ndevices].name)) b = n;
            }
            ck_assert_int_eq(ar_topo_hops(t, a, b), 1);
        }
        ar_plan_t *one = build_sym("ring", v, cases[i].count, cases[i].coll, cases[i].channels, AR_SYMMETRY_ON);
        ar_plan_t *all = build_sym("ring", t, cases[i].count, cases[i].coll, cases[i].channels, AR_SYMMETRY_OFF);
        ck_assert_msg(one->only_rank == 0, "ring on %s's cycle: every rank's ops", cases[i].topo);
        ck_assert_uint_eq((uint64_t)one->nops * (uint64_t)t->nranks, all->nops);
        const char *backends[] = {"analytic", "sim"};
        for (int b = 0; b < 2; b++) {
            ar_result_t r1, ra;
            run_on(backends[b], v, one, AR_MEM_HBM, 0, &r1);
            run_on(backends[b], t, all, AR_MEM_HBM, 0, &ra);
            ck_assert_msg(fabs(r1.time_s - ra.time_s) <= 1e-9 * ra.time_s, "%s ring on %s: %.9g us on its cycle, %.9g us",
                          backends[b], cases[i].topo, r1.time_s * 1e6, ra.time_s * 1e6);
            ar_result_free(&r1);
            ar_result_free(&ra);
        }
        ar_plan_free(one);
        ar_plan_free(all);
        o.symmetry = AR_SYMMETRY_OFF;
        ck_assert_ptr_eq(ar_algo_topology(ring, t, &o), t);
        o.symmetry = AR_SYMMETRY_AUTO;
        ck_assert_ptr_eq(ar_algo_topology(ar_algo_find("torus2d"), t, &o), t);
        /* two ranks a device: every rank's ops on any ring of them, so none is made */
        ck_assert_int_eq(ar_topo_place_blocks(t, 2 * t->ndevices, &err), AR_OK);
        ck_assert_ptr_eq(ar_algo_topology(ring, t, &o), t);
        ar_topo_free(t);
    }
    static const char *const none[] = {"ring_1d:8", "switch:8", "mesh_2d:3x3", "mesh_2d:4x4", "hgx_h100_8"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        ar_topo_t *t = tu_topo_open(none[i], NULL);
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        o.symmetry = AR_SYMMETRY_ON;
        const ar_topo_t *v = ar_algo_topology(ring, t, &o);
        /* a mesh's snake is a ring of its neighbours, each hop one link: its cycle serves */
        if (!strcmp(none[i], "mesh_2d:4x4")) ck_assert(v != t && v->kind == AR_TOPO_RING_1D);
        else ck_assert_msg(v == t, "ring on %s: a cycle made", none[i]);
        ar_topo_free(t);
    }
}
END_TEST

/* The case runner times ring on a torus on its cycle: torus_2d:128x128 (16384 ranks, whose
 * every rank's plan holds 8e8 source addresses) runs as rank 0's ops, its row bound the
 * torus's; on torus_2d:8x8 the same time as ring_1d:64's (the same ring), the torus's bound
 * under it. */
START_TEST(test_ring_on_its_cycle_case) {
    static const char *const topos[] = {"torus_2d:128x128", "torus_2d:8x8", "ring_1d:64"};
    double time_s[3], bound_s[3];
    for (int i = 0; i < 3; i++) {
        ar_topo_t *t = tu_topo_open(topos[i], NULL);
        ar_case_t c = {.backend = "analytic", .topo = t, .topology = t->name, .algo = "ring", .count = 1u << 19,
                       .dtype = AR_BF16, .algo_opts = AR_ALGO_OPTS_DEFAULT, .run = AR_RUN_OPTS_DEFAULT, .verify = -1};
        c.algo_opts.symmetry = AR_SYMMETRY_AUTO;
        ar_case_out_t co;
        ar_error_t err;
        ar_error_clear(&err);
        ck_assert_msg(ar_case_run(&c, &co, &err) == AR_OK, "ring on %s: %s", topos[i], err.message);
        ck_assert_int_eq(co.row.nranks, t->nranks);
        if (i < 2) ck_assert(co.topo != t && co.topo->kind == AR_TOPO_RING_1D);
        if (i == 0) ck_assert_int_eq(co.plan->only_rank, 0);
        ar_bound_t b;
        ck_assert_int_eq(ar_bound_fused(t, AR_COLL_ALLREDUCE, (ar_gemm_t){0, 0, 0}, AR_BF16, 1u << 20, AR_MEM_HBM, 0,
                                        &b, &err), AR_OK);
        ck_assert_double_eq_tol(co.row.bound_s, b.time_s, 1e-12);
        time_s[i] = co.res.time_s, bound_s[i] = co.row.bound_s;
        ar_case_out_free(&co);
        ar_topo_free(t);
    }
    ck_assert_double_eq_tol(time_s[1], time_s[2], 1e-9 * time_s[2]);
    ck_assert(bound_s[1] < bound_s[2] && bound_s[1] <= time_s[1]);
}
END_TEST

Suite *suite_sim(void) {
    Suite *s = suite_create("sim");
    struct {
        const char *name;
        const TTest *test;
    } cases[] = {
        {"copy_one_link", test_copy_one_link},
        {"reduce_local", test_reduce_local},
        {"signal_wait", test_signal_wait},
        {"release_floor", test_release_floor},
        {"timeline_file", test_timeline_file},
        {"link_issue", test_link_issue},
        {"shared_hbm_reduce", test_shared_hbm_reduce},
        {"agrees_with_analytic", test_agrees_with_analytic},
        {"one_rank_plan_warmth", test_one_rank_plan_warmth},
        {"mirror_offsets_exact", test_mirror_offsets_exact},
        {"mirror_offsets_guessed", test_mirror_offsets_guessed},
        {"two_flows_one_link", test_two_flows_one_link},
        {"shared_hbm", test_shared_hbm},
        {"1stage_on_ring", test_1stage_on_ring},
        {"forward_through_device", test_forward_through_device},
        {"channel_bound", test_channel_bound},
        {"buffer_kind", test_buffer_kind},
        {"errors", test_errors},
        {"shipped_topologies", test_shipped_topologies},
        {"reduce_as_exec", test_reduce_as_exec},
        {"sweep_shards_resume", test_sweep_shards_resume},
        {"one_rank_plan", test_one_rank_plan},
        {"row_plan", test_row_plan},
        {"row_plan_after_cap", test_row_plan_after_cap},
        {"one_rank_plan_refused", test_one_rank_plan_refused},
        {"ring_on_its_cycle", test_ring_on_its_cycle},
        {"ring_on_its_cycle_case", test_ring_on_its_cycle_case},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, cases[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}
