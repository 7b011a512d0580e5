/* analytic backend: the critical path pinned to closed forms, first on hand-made
 * plans over a model with round numbers, then on every algorithm's plan. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "arsim/arsim.h"
#include "backends/internal.h"
#include "cost/internal.h"
#include "tests/suites.h"

/* Round numbers, so every closed form below can be checked by hand:
 * hbm 1000 GB/s read, 500 GB/s write, 100 ns; a link 10 GB/s, 200 ns per hop;
 * channel reads bounded at inflight / latency = 100000 B / 1000 ns = 100 GB/s
 * (tests lower it to make the bound bite), channel writes 40 GB/s; reduce 50 GB/s;
 * signal 1000 ns; launch 3000 ns; clock 2 GHz. */
static const char *const ROUND_MODEL =
    "name: round\n"
    "clock_ghz: 2\n"
    "memory:\n"
    "  tcm: {present: false}\n"
    "  sram: {capacity_bytes: 1000000, read_gbps: 4000, write_gbps: 4000, lat_ns: 10}\n"
    "  hbm: {capacity_bytes: 1e12, read_gbps: 1000, write_gbps: 500, lat_ns: 100}\n"
    "links:\n"
    "  - {name: l, bw_gbps: 10, lat_ns: 200}\n"
    "reduce_gbps: 50\n"
    "chan_inflight_bytes: 100000\n"
    "chan_read_lat_ns: 1000\n"
    "chan_write_gbps: 40\n"
    "signal_lat_ns: 1000\n"
    "launch_ns: 3000\n"
    "host_link_gbps: 5\n"
    "host_link_lat_ns: 2000\n";
/* HBM's reads and writes share one link of the harmonic mean of read_gbps and
 * write_gbps (ar_cost_mem_gbps), each byte weighed by its own kind's rate
 * (ar_cost_mem_weight): an op's memory term is reads / read_gbps + writes / write_gbps.
 * A COPY's B read and B written take 2 B / HBM_BW. */
#define HBM_RD 1000e9
#define HBM_WR 500e9
#define HBM_BW (2.0 / (1.0 / HBM_RD + 1.0 / HBM_WR))
#define HBM_S(rd, wr) ((rd) / HBM_RD + (wr) / HBM_WR)

#define NS 1e-9
#define LAUNCH (3000 * NS)
#define HOP (200 * NS)
#define MEMLAT (100 * NS)
#define LINK_BW 10e9
#define SIG (1000 * NS)

static ar_topo_t *round_topo(const char *spec) {
    ar_model_t *m;
    ar_topo_t *t;
    ar_error_t err;
    ck_assert_msg(ar_model_load_string(ROUND_MODEL, "round", &m, &err) == AR_OK, "%s", err.message);
    ck_assert_msg(ar_topo_build(spec, m, &t, &err) == AR_OK, "%s", err.message);
    return t;
}

/* round_topo with extra model keys appended, and nranks placed in blocks when it
 * differs from the device count. */
static ar_topo_t *round_topo_with(const char *extra, const char *spec, int nranks) {
    static char yaml[2048];
    snprintf(yaml, sizeof yaml, "%s%s", ROUND_MODEL, extra);
    ar_model_t *m;
    ar_topo_t *t;
    ar_error_t err;
    ck_assert_msg(ar_model_load_string(yaml, "round_with", &m, &err) == AR_OK, "%s", err.message);
    ck_assert_msg(ar_topo_build(spec, m, &t, &err) == AR_OK, "%s", err.message);
    if (nranks != t->nranks) ck_assert_msg(ar_topo_place_blocks(t, nranks, &err) == AR_OK, "%s", err.message);
    return t;
}

static void run(const ar_topo_t *t, ar_plan_t *p, int breakdown, ar_result_t *res) {
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    o.breakdown = breakdown;
    tu_run_checked("analytic", t, p, &o, res, 1e-12);
    ck_assert_double_eq_tol(res->cycles, res->time_s * t->model->clock_ghz * 1e9, 1e-6);
}

#define EQ(got, want) ck_assert_double_eq_tol((got), (want), 1e-9 * fabs(want) + 1e-18)

/* One COPY pushed over one link: launch + (memory + hop latency) + B / bw. The link
 * (10 GB/s) is slower than the destination's memory (500 GB/s) and the channel's
 * posted writes (40 GB/s), so it is the bound. */
START_TEST(test_copy_one_link) {
    ar_topo_t *t = round_topo("ring_1d:4");
    const uint64_t n = 1 << 20;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(4, 1, n);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(1, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
    ar_result_t r;
    run(t, p, 1, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + HOP + B / LINK_BW);
    EQ(r.terms_s[AR_TERM_LINK], MEMLAT + HOP + B / LINK_BW);
    EQ(r.terms_s[AR_TERM_LAUNCH], LAUNCH);
    ck_assert(r.terms_s[AR_TERM_MEMORY] == 0 && r.terms_s[AR_TERM_SYNC] == 0 &&
              r.terms_s[AR_TERM_REDUCE] == 0);
    ck_assert_uint_eq(r.ops_executed, 1);
    /* Per link and direction: link 0 joins d0 and d1; only 0 -> 1 carried data. */
    ck_assert_int_eq(r.nlinks, 2 * t->nlinks);
    for (int i = 0; i < r.nlinks; i++) {
        const ar_link_stat_t *s = &r.links[i];
        if (s->link == 0 && s->dir == (t->links[0].a == 0 ? 1 : -1)) {
            EQ(s->bytes, B);
            EQ(s->busy_s, B / LINK_BW);
            EQ(s->util, B / (LINK_BW * r.time_s));
        } else {
            ck_assert(s->bytes == 0 && s->busy_s == 0 && s->util == 0);
        }
    }
    ar_result_free(&r);
    /* Without breakdown there are no link figures, and the time is the same. */
    double time = r.time_s;
    run(t, p, 0, &r);
    ck_assert_ptr_null(r.links);
    EQ(r.time_s, time);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* A push halfway round ring_1d:600 crosses 300 links (longer than the routes cost.c keeps
 * on its stack): each carries the bytes, each of the 299 devices between stores and loads
 * them again (a memory latency each; their memory, 2B at the HBM's shared rate, is no
 * bound beside the link), and the time is launch + memory latency + 300 hops + 299 memory
 * latencies + B / bw. */
START_TEST(test_copy_long_route) {
    ar_topo_t *t = round_topo("ring_1d:600");
    const uint64_t n = 1 << 16;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(600, 1, n);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(300, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
    ar_result_t r;
    run(t, p, 1, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + 300 * HOP + 299 * MEMLAT + B / LINK_BW);
    ck_assert_int_eq(tu_links_carrying(&r, B), 300);
    ar_result_free(&r);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* A pull: the channel keeps chan_inflight_bytes in flight over chan_read_lat_ns, so
 * once that is below the link's bandwidth it is the bound: B / (inflight / lat). */
START_TEST(test_pull_channel_bound) {
    ar_topo_t *t = round_topo("ring_1d:4");
    const uint64_t n = 250000;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(4, 1, n);
    ck_assert_int_eq(ar_plan_copy(p, 1, 0, ar_addr(1, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
    ar_result_t r;
    run(t, p, 0, &r); /* 100 GB/s per channel: the link bounds */
    EQ(r.time_s, LAUNCH + MEMLAT + HOP + B / LINK_BW);
    t->model->chan_inflight_bytes = 4000; /* 4000 B / 1000 ns = 4 GB/s per channel */
    run(t, p, 0, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + HOP + B / 4e9);
    EQ(r.terms_s[AR_TERM_LINK], MEMLAT + HOP + B / 4e9);
    /* Two channels each pulling half: the bound is per channel, so twice as fast. */
    ar_plan_t *p2 = tu_plan_new(4, 2, n);
    for (int c = 0; c < 2; c++)
        ck_assert_int_eq(ar_plan_copy(p2, 1, c, ar_addr(1, AR_BUF_OUT, c * n / 2),
                                      ar_addr(0, AR_BUF_IN, c * n / 2), n / 2), AR_OK);
    run(t, p2, 0, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + HOP + B / 2 / 4e9);
    ar_plan_free(p);
    ar_plan_free(p2);
    ar_topo_free(t);
}
END_TEST

/* A REDUCE on rank 1 of two sources: over one link (both from rank 0) the link
 * carries 2B; from ranks 0 and 2 each link carries B. Plus (k-1) B / reduce. */
START_TEST(test_two_sources) {
    ar_topo_t *t = round_topo("ring_1d:4");
    const uint64_t n = 100000;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(4, 1, 2 * n);
    ar_addr_t one[2] = {ar_addr(0, AR_BUF_IN, 0), ar_addr(0, AR_BUF_IN, n)};
    ck_assert_int_eq(ar_plan_reduce(p, 1, 0, ar_addr(1, AR_BUF_OUT, 0), one, 2, n), AR_OK);
    ar_result_t r;
    run(t, p, 1, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + HOP + 2 * B / LINK_BW + B / 50e9);
    EQ(r.terms_s[AR_TERM_REDUCE], B / 50e9);
    EQ(r.terms_s[AR_TERM_LINK], MEMLAT + HOP + 2 * B / LINK_BW);
    double total = 0;
    for (int i = 0; i < r.nlinks; i++) total += r.links[i].bytes;
    EQ(total, 2 * B);
    ar_result_free(&r);
    ar_plan_free(p);

    p = tu_plan_new(4, 1, n);
    ar_addr_t two[2] = {ar_addr(0, AR_BUF_IN, 0), ar_addr(2, AR_BUF_IN, 0)};
    ck_assert_int_eq(ar_plan_reduce(p, 1, 0, ar_addr(1, AR_BUF_OUT, 0), two, 2, n), AR_OK);
    run(t, p, 1, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + HOP + B / LINK_BW + B / 50e9);
    int busy = 0;
    for (int i = 0; i < r.nlinks; i++)
        if (r.links[i].bytes > 0) {
            busy++;
            EQ(r.links[i].bytes, B);
        }
    ck_assert_int_eq(busy, 2);
    ar_result_free(&r);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* Local ops are bound by memory: reads / read_bw + writes / write_bw on the device. */
START_TEST(test_local_memory) {
    ar_topo_t *t = round_topo("ring_1d:4");
    const uint64_t n = 1000000;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(4, 1, n);
    ck_assert_int_eq(ar_plan_copy(p, 2, 0, ar_addr(2, AR_BUF_OUT, 0), ar_addr(2, AR_BUF_IN, 0), n), AR_OK);
    ar_result_t r;
    run(t, p, 0, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + 2 * B / HBM_BW);
    EQ(r.terms_s[AR_TERM_MEMORY], MEMLAT + 2 * B / HBM_BW);
    ck_assert(r.terms_s[AR_TERM_LINK] == 0);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* A chain COPY -> SIGNAL -> WAIT -> COPY: the two copies plus one signal latency;
 * the critical path runs through both ranks and names the wait as sync. A signal
 * two hops away pays one extra hop latency. */
START_TEST(test_signal_chain) {
    ar_topo_t *t = round_topo("ring_1d:4");
    const uint64_t n = 1000;
    const double B = n * 4.0, c = MEMLAT + 2 * B / HBM_BW;
    for (int to = 1; to <= 2; to++) {
        ar_plan_t *p = tu_plan_new(4, 1, n);
        ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
        ck_assert_int_eq(ar_plan_signal(p, 0, 0, to, 0), AR_OK);
        ck_assert_int_eq(ar_plan_wait(p, to, 0, 0, 1), AR_OK);
        ck_assert_int_eq(ar_plan_copy(p, to, 0, ar_addr(to, AR_BUF_OUT, 0), ar_addr(to, AR_BUF_IN, 0), n), AR_OK);
        ar_result_t r;
        run(t, p, 0, &r);
        double sig = SIG + (to - 1) * HOP;
        EQ(ar_cost_signal_s(t, 0, to), sig);
        EQ(r.time_s, LAUNCH + 2 * c + sig);
        EQ(r.terms_s[AR_TERM_SYNC], sig);
        EQ(r.terms_s[AR_TERM_MEMORY], 2 * c);
        ck_assert_uint_eq(r.ops_executed, 4);
        ar_plan_free(p);
    }
    ar_topo_free(t);
}
END_TEST

/* chan_write_land_gbps (4 GB/s here): a SIGNAL waits until the channel's peer stores
 * since its previous SIGNAL have landed, each op's from its start plus its latencies
 * at that rate, and no sooner than a hop after the op's end. A push of B = 4000 bytes
 * over one hop: lat 100 ns (its stores are posted: the hop is no part of the op), move
 * B / 10 GB/s = 400 ns, so the op ends at 500 ns and its stores land at 100 + 200 +
 * B / 4 GB/s = 1300 ns: fence 800 ns. A local COPY (c) after the push runs under the
 * fence: fence 800 - c. Two pushes: the second starts at 500, its bytes land from 800,
 * but after the first's: 1300 + 1000 = 2300 ns, the ops end at 1000: fence 1300 ns.
 * Local stores alone fence nothing; a model without the key fences a push's hop. */
START_TEST(test_store_fence) {
    static char yaml[2048];
    snprintf(yaml, sizeof yaml, "%schan_write_land_gbps: 4\n", ROUND_MODEL);
    ar_model_t *m;
    ar_topo_t *t;
    ar_error_t err;
    ck_assert_msg(ar_model_load_string(yaml, "round_land", &m, &err) == AR_OK, "%s", err.message);
    ck_assert_msg(ar_topo_build("ring_1d:4", m, &t, &err) == AR_OK, "%s", err.message);
    ar_topo_t *t0 = round_topo("ring_1d:4");
    const uint64_t n = 1000;
    const double B = n * 4.0, c = MEMLAT + 2 * B / HBM_BW, push = MEMLAT + B / LINK_BW;
    const double land = MEMLAT + HOP + B / 4e9;
    EQ(ar_cost_land_s(t, B), B / 4e9);
    EQ(ar_cost_land_s(t0, B), 0.0);
    for (int shape = 0; shape < 4; shape++) {
        /* 0: push, SIGNAL; 1: push, local COPY, SIGNAL; 2: two pushes, SIGNAL; 3: local, SIGNAL */
        ar_plan_t *p = tu_plan_new(4, 1, 2 * n);
        ar_addr_t peer = ar_addr(1, AR_BUF_OUT, 0), own = ar_addr(0, AR_BUF_OUT, 0);
        ck_assert_int_eq(ar_plan_copy(p, 0, 0, shape == 3 ? own : peer, ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
        if (shape == 1)
            ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, n), ar_addr(0, AR_BUF_IN, n), n), AR_OK);
        if (shape == 2)
            ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(1, AR_BUF_OUT, n), ar_addr(0, AR_BUF_IN, n), n), AR_OK);
        ck_assert_int_eq(ar_plan_signal(p, 0, 0, 1, 0), AR_OK);
        ck_assert_int_eq(ar_plan_wait(p, 1, 0, 0, 1), AR_OK);
        double work = shape == 0 ? push : shape == 1 ? push + c : shape == 2 ? 2 * push : c;
        double fence = shape == 0 ? land - push : shape == 1 ? land - push - c
                     : shape == 2 ? land + B / 4e9 - 2 * push : 0;
        ck_assert(shape == 3 || fence > 0);
        ar_result_t r;
        run(t, p, 0, &r);
        ck_assert_int_eq(ar_cost_op_remote_store(t, &p->ops[p->chans[0].first], 0), shape != 3);
        EQ(r.time_s, LAUNCH + work + fence + SIG);
        EQ(r.terms_s[AR_TERM_SYNC], SIG);
        EQ(r.terms_s[AR_TERM_LINK], (shape == 3 ? 0 : shape == 2 ? 2 * push : push) + fence); /* landing: link */
        run(t0, p, 0, &r);
        double hop = shape == 3 ? 0 : shape == 1 ? fmax(0, HOP - c) : HOP;
        EQ(r.time_s, LAUNCH + work + hop + SIG);
        ar_plan_free(p);
    }
    ar_topo_free(t0);
    ar_topo_free(t); /* and its model */
}
END_TEST

/* signal_release_ns (500 here): a SIGNAL's flag update completes that long after its
 * issue and the channel's next SIGNAL to the same flag waits for it. Rank 0 SIGNALs rank 1 k times back
 * to back; rank 1 WAITs for all k: the last is issued (k - 1) x 500 ns after the first.
 * With a COPY of c >= 500 ns between two SIGNALs, the second waits for nothing. */
START_TEST(test_signal_release) {
    static char yaml[2048];
    snprintf(yaml, sizeof yaml, "%ssignal_release_ns: 500\n", ROUND_MODEL);
    ar_model_t *m;
    ar_topo_t *t;
    ar_error_t err;
    ck_assert_msg(ar_model_load_string(yaml, "round_release", &m, &err) == AR_OK, "%s", err.message);
    ck_assert_msg(ar_topo_build("ring_1d:4", m, &t, &err) == AR_OK, "%s", err.message);
    EQ(ar_cost_signal_issue_s(t, 0, 1), 500 * NS); /* no signal_release_remote_ns: the same */
    for (int k = 1; k <= 5; k++) {
        ar_plan_t *p = tu_plan_new(4, 1, 16);
        for (int i = 0; i < k; i++) ck_assert_int_eq(ar_plan_signal(p, 0, 0, 1, 0), AR_OK);
        ck_assert_int_eq(ar_plan_wait(p, 1, 0, 0, (uint64_t)k), AR_OK);
        ar_result_t r;
        run(t, p, 0, &r);
        EQ(r.time_s, LAUNCH + (k - 1) * 500 * NS + SIG);
        EQ(r.terms_s[AR_TERM_SYNC], (k - 1) * 500 * NS + SIG);
        ar_plan_free(p);
    }
    const uint64_t n = 100000; /* a local COPY of 400 KB: 100 + 400 + 800 ns */
    const double c = MEMLAT + 2 * n * 4.0 / HBM_BW;
    ck_assert(c > 500 * NS);
    ar_plan_t *p = tu_plan_new(4, 1, n);
    ck_assert_int_eq(ar_plan_signal(p, 0, 0, 1, 0), AR_OK);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
    ck_assert_int_eq(ar_plan_signal(p, 0, 0, 1, 0), AR_OK);
    ck_assert_int_eq(ar_plan_wait(p, 1, 0, 0, 2), AR_OK);
    ar_result_t r;
    run(t, p, 0, &r);
    EQ(r.time_s, LAUNCH + c + SIG);
    ar_plan_free(p);
    /* A run of SIGNALs to distinct flags goes out at once (the executor releases it one
     * thread each): rank 0 SIGNALs flags 0, 1, 2 of rank 1, which WAITs for each: one
     * SIGNAL's time. A flag the run already has starts another run (0, 1, 0: the third
     * issued 500 ns after the first), and so does the end of the executor's window of
     * staged ops (AR_EXEC_WINDOW_OPS - 1 SIGNALs, then flag 0 last in the window, flag 1
     * first in the next). */
    p = tu_plan_new(4, 1, 16);
    for (uint32_t f = 0; f < 3; f++) ck_assert_int_eq(ar_plan_signal(p, 0, 0, 1, f), AR_OK);
    for (uint32_t f = 0; f < 3; f++) ck_assert_int_eq(ar_plan_wait(p, 1, 0, f, 1), AR_OK);
    run(t, p, 0, &r);
    EQ(r.time_s, LAUNCH + SIG);
    ar_plan_free(p);
    p = tu_plan_new(4, 1, 16);
    static const uint32_t again[] = {0, 1, 0};
    for (int i = 0; i < 3; i++) ck_assert_int_eq(ar_plan_signal(p, 0, 0, 1, again[i]), AR_OK);
    ck_assert_int_eq(ar_plan_wait(p, 1, 0, 1, 1), AR_OK);
    ck_assert_int_eq(ar_plan_wait(p, 1, 0, 0, 2), AR_OK);
    run(t, p, 0, &r);
    EQ(r.time_s, LAUNCH + 500 * NS + SIG);
    ar_plan_free(p);
    p = tu_plan_new(4, 1, 16);
    for (uint32_t f = 0; f < AR_EXEC_WINDOW_OPS + 1; f++) ck_assert_int_eq(ar_plan_signal(p, 0, 0, 1, f), AR_OK);
    for (uint32_t f = 0; f < AR_EXEC_WINDOW_OPS + 1; f++) ck_assert_int_eq(ar_plan_wait(p, 1, 0, f, 1), AR_OK);
    run(t, p, 0, &r);
    EQ(r.time_s, LAUNCH + 500 * NS + SIG);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* A channel's loads of one op add up kind by kind (cost.h): a REDUCE of IN (local, 8
 * GB/s) and a host slot (host_chan_read_gbps 4) takes B / 8 + B / 4 GB/s, more than the
 * host link's B / 5 GB/s or either load alone; its stores overlap the loads: a COPY of
 * IN to the host (host_chan_write_gbps 2) takes the slower, B / 2 GB/s. Both are link
 * terms (not mostly local loads), after the host link's latency. */
START_TEST(test_chan_loads_add) {
    ar_topo_t *t = round_topo_with("chan_local_read_gbps: 8\nhost_chan_read_gbps: 4\n"
                                   "host_chan_write_gbps: 2\n", "ring_1d:2", 2);
    const uint64_t n = 100000;
    const double B = n * 4.0, lat = MEMLAT + 2000 * NS;
    for (int k = 1; k <= 2; k++) {
        ar_plan_t *p = tu_plan_new(2, 1, n);
        p->host_elems = n;
        const ar_addr_t srcs[2] = {ar_addr(0, AR_BUF_IN, 0), ar_addr(AR_RANK_HOST, AR_BUF_OUT, 0)};
        if (k == 1) ck_assert_int_eq(ar_plan_copy(p, 0, 0, srcs[1], srcs[0], n), AR_OK);
        else ck_assert_int_eq(ar_plan_reduce(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), srcs, 2, n), AR_OK);
        ar_result_t r;
        run(t, p, 0, &r);
        const double move = k == 1 ? B / 2e9 : B / 8e9 + B / 4e9;
        EQ(r.time_s, LAUNCH + lat + move + (k - 1) * B / 50e9);
        EQ(r.terms_s[AR_TERM_LINK], lat + move);
        ar_plan_free(p);
    }
    ar_topo_free(t);
    /* Two host sources of one executor group load together, at host_chan_read_pair_gbps
     * (1.5 GB/s here) for both: a REDUCE of two host slots takes 2B / 1.5 GB/s; IN + two
     * host slots B / 8 + B / 1 (IN's group: the local and the lone host source add up) +
     * B / 1 (the second group's lone host source), after one round of host loads more
     * (the host's latency over HBM's, 1900 ns). Both are slower than the host link's
     * 2B / 5 GB/s. */
    t = round_topo_with("chan_local_read_gbps: 8\nhost_chan_read_gbps: 1\nhost_chan_read_pair_gbps: 1.5\n",
                        "ring_1d:2", 2);
    for (int in = 0; in <= 1; in++) {
        ar_plan_t *p = tu_plan_new(2, 1, n);
        p->host_elems = 2 * n;
        const ar_addr_t srcs[3] = {ar_addr(0, AR_BUF_IN, 0), ar_addr(AR_RANK_HOST, AR_BUF_OUT, 0),
                                   ar_addr(AR_RANK_HOST, AR_BUF_OUT, n)};
        ck_assert_int_eq(ar_plan_reduce(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), srcs + !in, (uint32_t)(2 + in), n),
                         AR_OK);
        ar_result_t r;
        run(t, p, 0, &r);
        const double move = in ? B / 8e9 + B / 1e9 + B / 1e9 : 2 * B / 1.5e9;
        EQ(r.time_s, LAUNCH + lat + in * 1900 * NS + move + (1 + in) * B / 50e9);
        ar_plan_free(p);
    }
    ar_topo_free(t);
}
END_TEST

/* Stores to the host are posted as a peer's are: a COPY of IN to the host ends when its
 * stores are issued (memory latency + B at host_chan_write_gbps, 2 GB/s), a local COPY
 * after it runs while they cross, and the channel ends once they have landed, the host's
 * latency (2000 ns) after the first COPY's end. */
START_TEST(test_host_stores_posted) {
    ar_topo_t *t = round_topo_with("host_chan_write_gbps: 2\n", "ring_1d:2", 2);
    const uint64_t n = 100;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(2, 1, n);
    p->host_elems = n;
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(AR_RANK_HOST, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), 1), AR_OK);
    ar_result_t r;
    run(t, p, 0, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + B / 2e9 + 2000 * NS);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* launch_block_ns (10 here): the executor's blocks start one after another, on each
 * device in rank then channel order, empty channels not counted. Two ranks per
 * device, three channels each, rank 0's channel 1 empty: on device 0 the blocks are
 * r0c0, r0c2, r1c0, r1c1, r1c2, so r1c2 starts 4 x 10 ns late, and its two local
 * COPYs (1 element, then n) end last. The delay is a launch term. */
START_TEST(test_launch_block_stagger) {
    ar_topo_t *t = round_topo_with("launch_block_ns: 10\n", "ring_1d:2", 4);
    const uint64_t n = 10000;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(4, 3, n + 3);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 3; c++)
            if (r != 0 || c != 1)
                ck_assert_int_eq(ar_plan_copy(p, r, c, ar_addr(r, AR_BUF_OUT, c), ar_addr(r, AR_BUF_IN, c), 1), AR_OK);
    ck_assert_int_eq(ar_plan_copy(p, 1, 2, ar_addr(1, AR_BUF_OUT, 3), ar_addr(1, AR_BUF_IN, 3), n), AR_OK);
    ar_result_t r;
    run(t, p, 0, &r);
    EQ(r.time_s, LAUNCH + 40 * NS + 2 * MEMLAT + 2 * (B + 4) / HBM_BW);
    EQ(r.terms_s[AR_TERM_LAUNCH], LAUNCH + 40 * NS);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* signal_release_chan_ns (100 here): while n channels of a device have their latest op
 * reaching another device, a SIGNAL there is issued no sooner than 100 ns x log2(n) after
 * its channel reaches it. Rank 0 has channels 0, 1 and 3 (2 is empty), each SIGNALing
 * rank 1 on the other device, whose channels WAIT: the last of the three releases counts
 * all three, and the last WAIT ends at launch + 100 ns x log2(3) + signal_lat, all of it
 * sync. One channel pays nothing. With signal_fence_ns (50 here) every release takes that
 * more. */
START_TEST(test_release_floor) {
    ar_topo_t *t = round_topo_with("signal_release_chan_ns: 100\n", "ring_1d:2", 2);
    ar_topo_t *tf = round_topo_with("signal_release_chan_ns: 100\nsignal_fence_ns: 50\n", "ring_1d:2", 2);
    for (int one = 0; one <= 1; one++) {
        ar_plan_t *p = tu_plan_new(2, 4, 64);
        for (int c = 0; c < 4; c++) {
            if (c == 2 || (one && c > 0)) continue;
            ck_assert_int_eq(ar_plan_signal(p, 0, c, 1, (uint32_t)c), AR_OK);
            ck_assert_int_eq(ar_plan_wait(p, 1, c, (uint32_t)c, 1), AR_OK);
        }
        ar_result_t r;
        run(t, p, 0, &r);
        const double floor = one ? 0 : 100 * NS * log2(3.0);
        EQ(r.time_s, LAUNCH + floor + SIG);
        EQ(r.terms_s[AR_TERM_SYNC], floor + SIG);
        run(tf, p, 0, &r);
        EQ(r.time_s, LAUNCH + 50 * NS + floor + SIG);
        EQ(r.terms_s[AR_TERM_SYNC], 50 * NS + floor + SIG);
        ar_plan_free(p);
    }
    ar_topo_free(tf);
    ar_topo_free(t);
}
END_TEST

/* The channel term counts the channels of the sender's device whose latest op reaches
 * another device. Four ranks on two devices (0, 1 on the first): rank 0's channels 0, 1, 3
 * SIGNAL rank 1 on their own device: no channel crosses, and the run takes what it takes
 * without signal_release_chan_ns. SIGNALing rank 2 (the other device) twice each, the first
 * releases take 100 ns x log2(3) at most and the second ones nothing more (a SIGNAL right
 * after a SIGNAL takes the fence alone): the last arrival at launch + that + signal_lat. */
START_TEST(test_release_floor_crossing) {
    ar_topo_t *t = round_topo_with("signal_release_chan_ns: 100\n", "ring_1d:2", 4);
    ar_topo_t *t0 = round_topo_with("", "ring_1d:2", 4);
    ck_assert_int_eq(t->placement[1], t->placement[0]);
    ck_assert_int_ne(t->placement[2], t->placement[0]);
    for (int target = 1; target <= 2; target++) {
        ar_plan_t *p = tu_plan_new(4, 4, 64);
        const int times = target == 1 ? 1 : 2;
        for (int c = 0; c < 4; c++) {
            if (c == 2) continue;
            for (int k = 0; k < times; k++) ck_assert_int_eq(ar_plan_signal(p, 0, c, target, (uint32_t)c), AR_OK);
            ck_assert_int_eq(ar_plan_wait(p, target, c, (uint32_t)c, (uint64_t)times), AR_OK);
        }
        ar_result_t r, r0;
        run(t, p, 0, &r);
        run(t0, p, 0, &r0);
        if (target == 1) EQ(r.time_s, r0.time_s);
        else EQ(r.time_s, r0.time_s + 100 * NS * log2(3.0));
        ar_plan_free(p);
    }
    ar_topo_free(t0);
    ar_topo_free(t);
}
END_TEST

/* op_misalign_ns (250 here): a COPY/REDUCE with a pointer not 16-byte aligned at its start
 * or end costs that much more, sync. fp32 COPYs of 1000 elements: at element 0 (4000
 * bytes, aligned both ends) nothing more; at element 1 (start at byte 4), 999 elements
 * from 0 (end at byte 3996); not 1000 elements from 4 (16-byte aligned at both ends). */
START_TEST(test_op_misalign) {
    ar_topo_t *t = round_topo_with("op_misalign_ns: 250\n", "ring_1d:2", 2), *t0 = round_topo("ring_1d:2");
    static const struct { uint64_t off, n; int mis; } cases[] = {{0, 1000, 0}, {1, 1000, 1}, {0, 999, 1}, {4, 1000, 0}};
    for (int i = 0; i < 4; i++) {
        ar_plan_t *p = tu_plan_new(2, 1, 1004);
        ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, cases[i].off), ar_addr(0, AR_BUF_IN, cases[i].off),
                                      cases[i].n), AR_OK);
        ar_result_t r, r0;
        run(t, p, 0, &r);
        run(t0, p, 0, &r0);
        ck_assert_int_eq(ar_op_misaligned(p, &p->ops[p->chans[0].first]), cases[i].mis);
        EQ(r.time_s, r0.time_s + cases[i].mis * 250 * NS);
        EQ(r.terms_s[AR_TERM_SYNC], r0.terms_s[AR_TERM_SYNC] + cases[i].mis * 250 * NS);
        ar_plan_free(p);
    }
    ar_topo_free(t0);
    ar_topo_free(t);
}
END_TEST

/* p on backend takes `more` seconds longer on t than on t0 (within rel of its time). */
static void expect_time_more(const char *backend, const ar_topo_t *t, const ar_topo_t *t0, ar_plan_t *p,
                             double more, double rel, const char *what) {
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    ar_result_t r, r0;
    tu_run_checked(backend, t, p, &o, &r, 1e-9);
    tu_run_checked(backend, t0, p, &o, &r0, 1e-9);
    ck_assert_msg(fabs(r.time_s - r0.time_s - more) < 1e-12 + rel * r.time_s, "%s, %s: %.6g us against %.6g, want %.6g more",
                  backend, what, r.time_s * 1e6, r0.time_s * 1e6, more * 1e6);
    ar_result_free(&r);
    ar_result_free(&r0);
}

/* cold_lat_ns (700 here): an op loading local bytes its device has not touched within the
 * L2's capacity (sram capacity_bytes, 1 MB in the round model) of its traffic waits that much
 * longer, latency term. One execution follows another, so a plan whose traffic on a device
 * fits the L2 starts warm. Each case: ops (COPY dst <- src, n elements of 4 bytes on rank 0),
 * the ops that pay it. Both backends. */
START_TEST(test_cold_lat) {
    /* t0 tracks warmth too (its bytes weigh the same, test_l2_bytes), at the least latency */
#define DCOLD ((700 - 0.001) * NS)
    ar_topo_t *t = round_topo_with("cold_lat_ns: 700\n", "ring_1d:2", 2),
              *t0 = round_topo_with("cold_lat_ns: 0.001\n", "ring_1d:2", 2);
    static const struct { uint64_t n; int nops; ar_buf_t dst[2], src[2]; int cold; } cases[] = {
        {1000, 1, {AR_BUF_OUT}, {AR_BUF_IN}, 0},     /* 8 KB an execution: warm */
        {200000, 1, {AR_BUF_OUT}, {AR_BUF_IN}, 1},   /* 1.6 MB an execution: IN left the L2 */
        {200000, 2, {AR_BUF_SCRATCH, AR_BUF_OUT}, {AR_BUF_IN, AR_BUF_SCRATCH}, 1}, /* SCRATCH just stored: warm */
        {200000, 2, {AR_BUF_OUT, AR_BUF_SCRATCH}, {AR_BUF_IN, AR_BUF_IN}, 1},      /* IN just loaded: warm */
        {200000, 2, {AR_BUF_OUT, AR_BUF_OUT}, {AR_BUF_IN, AR_BUF_SCRATCH}, 2},     /* both cold */
    };
    const char *backends[] = {"analytic", "sim"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int b = 0; b < 2; b++) {
            if (b == 1 && !ar_backend_find("sim")) continue;
            ar_plan_t *p = tu_plan_new(2, 1, cases[i].n);
            p->scratch_elems = cases[i].n;
            for (int k = 0; k < cases[i].nops; k++)
                ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, cases[i].dst[k], 0), ar_addr(0, cases[i].src[k], 0),
                                              cases[i].n), AR_OK);
            ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
            o.breakdown = 1;
            ar_result_t r, r0;
            tu_run_checked(backends[b], t, p, &o, &r, 1e-9);
            tu_run_checked(backends[b], t0, p, &o, &r0, 1e-9);
            ck_assert_msg(fabs(r.time_s - r0.time_s - cases[i].cold * DCOLD) < 1e-12 + 1e-9 * r.time_s,
                          "%s case %zu: %.6g us against %.6g", backends[b], i, r.time_s * 1e6, r0.time_s * 1e6);
            EQ(r.terms_s[AR_TERM_MEMORY], r0.terms_s[AR_TERM_MEMORY] + cases[i].cold * DCOLD);
            ar_result_free(&r);
            ar_result_free(&r0);
            ar_plan_free(p);
        }
    ar_topo_free(t);
    /* Between l2_hit_bytes and l2_miss_bytes the wait grows linearly: IN last touched one
     * execution ago, 1.6 MB, with the L2 returning lines up to 1 MB and none from 3 MB: 0.3 of
     * it. Both backends. */
    ar_topo_free(t0);
    t = round_topo_with("cold_lat_ns: 700\nl2_hit_bytes: 1000000\nl2_miss_bytes: 3000000\n", "ring_1d:2", 2);
    t0 = round_topo_with("cold_lat_ns: 0.001\nl2_hit_bytes: 1000000\nl2_miss_bytes: 3000000\n", "ring_1d:2", 2);
    for (int b = 0; b < 2; b++) {
        if (b == 1 && !ar_backend_find("sim")) continue;
        ar_plan_t *p = tu_plan_new(2, 1, 200000);
        ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), 200000), AR_OK);
        expect_time_more(backends[b], t, t0, p, 0.3 * DCOLD, 1e-9, "ramp");
        ar_plan_free(p);
    }
    ar_topo_free(t0);
    ar_topo_free(t);
}
END_TEST

/* With warmth (cold_lat_ns) the L2 fronts HBM: every byte crosses the L2 at its rates (the
 * round model's sram: 4000 GB/s each way), and only the cold ones cross HBM, each kind at its
 * own rate (1000 read, 500 write); the two work side by side, so the memory takes the longer
 * of 2 B / 4000 and cold x (B / 1000 + B / 500). A local COPY of B bytes, fp32:
 *   8 KB an execution: warm, the L2's 2 B / 4000 GB/s;
 *   1.6 MB, beyond the 1 MB L2: cold, HBM's B / 1000 + B / 500 (and cold_lat_ns);
 *   the same between l2_hit_bytes 1 MB and l2_miss_bytes 3 MB: 0.3 cold, still HBM's.
 * An sram measured slower than HBM (read 400, write 4000 GB/s) is never slower than memory's
 * measured rates, whose bytes all crossed it: a warm COPY reads at HBM's 1000. Both backends. */
/* The memory's time for a local COPY of B bytes, `cold` of them gone from the L2 (sram read
 * and written at l2_rd, l2_wr): the longer of the L2's and HBM's. */
static double l2_fronted_copy_s(double B, double cold, double l2_rd, double l2_wr) {
    return fmax(B / l2_rd + B / l2_wr, cold * (B / HBM_RD + B / HBM_WR));
}

/* A local COPY of n elements on ring_1d:2 with cold_lat_ns 700 (and these keys) finds a
 * share `cold` of its source gone from the L2: test_l2_bytes, test_chan_local_read_cold. */
typedef struct { const char *keys; uint64_t n; double cold; } warmth_case_t;
static const warmth_case_t warmth_cases[] = {
    {"", 1000, 0},
    {"", 200000, 1},
    {"l2_hit_bytes: 1000000\nl2_miss_bytes: 3000000\n", 200000, 0.3},
};
#define N_WARMTH_CASES (sizeof warmth_cases / sizeof warmth_cases[0])

START_TEST(test_l2_bytes) {
    const warmth_case_t *cases = warmth_cases;
    const char *backends[] = {"analytic", "sim"};
    for (size_t i = 0; i < N_WARMTH_CASES; i++)
        for (int b = 0; b < 2; b++) {
            if (b == 1 && !ar_backend_find("sim")) continue;
            char keys[256];
            snprintf(keys, sizeof keys, "cold_lat_ns: 700\n%s", cases[i].keys);
            ar_topo_t *t = round_topo_with(keys, "ring_1d:2", 2);
            ar_plan_t *p = tu_plan_new(2, 1, cases[i].n);
            ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), cases[i].n),
                             AR_OK);
            const double B = cases[i].n * 4.0, c = cases[i].cold;
            const double mem = l2_fronted_copy_s(B, c, 4000e9, 4000e9);
            ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
            ar_result_t r;
            tu_run_checked(backends[b], t, p, &o, &r, 1e-9);
            /* the sim weighs a memory's bytes to 1/16 (its link crossed 16 x weight times) */
            const double tol = b == 1 ? 1.0 / 32 * 2 * B / HBM_WR : 1e-9 * r.time_s;
            ck_assert_msg(fabs(r.time_s - (LAUNCH + MEMLAT + c * 700 * NS + mem)) <= tol + 1e-12,
                          "%s case %zu: %.6g us, want %.6g", backends[b], i, r.time_s * 1e6,
                          (LAUNCH + MEMLAT + c * 700 * NS + mem) * 1e6);
            ar_result_free(&r);
            ar_plan_free(p);
            ar_topo_free(t);
        }
    /* an L2 slower than HBM for reads: a warm COPY at HBM's 1000 and the L2's 4000 */
    static char yaml[2048];
    const char *l2 = "  sram: {capacity_bytes: 1000000, read_gbps: 4000, write_gbps: 4000, lat_ns: 10}\n";
    const char *at = strstr(ROUND_MODEL, l2);
    ck_assert_ptr_nonnull(at);
    snprintf(yaml, sizeof yaml, "%.*s  sram: {capacity_bytes: 1000000, read_gbps: 400, write_gbps: 4000, lat_ns: 10}\n%scold_lat_ns: 700\n",
             (int)(at - ROUND_MODEL), ROUND_MODEL, at + strlen(l2));
    ar_model_t *m;
    ar_topo_t *t;
    ar_error_t err;
    ck_assert_msg(ar_model_load_string(yaml, "round_slow_l2", &m, &err) == AR_OK, "%s", err.message);
    ck_assert_msg(ar_topo_build("ring_1d:2", m, &t, &err) == AR_OK, "%s", err.message);
    ar_plan_t *p = tu_plan_new(2, 1, 1000);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), 1000), AR_OK);
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    ar_result_t r;
    tu_run_checked("analytic", t, p, &o, &r, 1e-9);
    EQ(r.time_s, LAUNCH + MEMLAT + 4000.0 / HBM_RD + 4000.0 / 4000e9);
    ar_result_free(&r);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* The L2's two reaches: a local COPY of 1.6 MB an execution, fp32, with the latency reach at
 * the L2's capacity (1 MB: the op waits all of cold_lat_ns) and the bandwidth reach from
 * l2_bw_hit_bytes 1 MB to l2_bw_miss_bytes 3 MB: 0.3 of its bytes cross HBM, every byte the
 * L2. And sram copy_gbps 6000 (read 4000): a byte written among reads takes 2 / 6000 -
 * 1 / 4000 of the bandwidth, 12000 GB/s, in a warm COPY of 8 KB. Both backends. */
START_TEST(test_l2_bw_reach_and_copy) {
    const char *backends[] = {"analytic", "sim"};
    static char yaml[2048];
    const char *l2 = "  sram: {capacity_bytes: 1000000, read_gbps: 4000, write_gbps: 4000, lat_ns: 10}\n";
    const char *at = strstr(ROUND_MODEL, l2);
    ck_assert_ptr_nonnull(at);
    snprintf(yaml, sizeof yaml,
             "%.*s  sram: {capacity_bytes: 1000000, read_gbps: 4000, write_gbps: 4000, copy_gbps: 6000, lat_ns: 10}\n%s"
             "cold_lat_ns: 700\n",
             (int)(at - ROUND_MODEL), ROUND_MODEL, at + strlen(l2));
    for (int b = 0; b < 2; b++) {
        if (b == 1 && !ar_backend_find("sim")) continue;
        ar_topo_t *t = round_topo_with("cold_lat_ns: 700\nl2_bw_hit_bytes: 1000000\nl2_bw_miss_bytes: 3000000\n",
                                       "ring_1d:2", 2);
        ar_plan_t *p = tu_plan_new(2, 1, 200000);
        ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), 200000), AR_OK);
        const double B = 800000, c = 0.3, mem = l2_fronted_copy_s(B, c, 4000e9, 4000e9);
        ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
        ar_result_t r;
        tu_run_checked(backends[b], t, p, &o, &r, 1e-9);
        const double tol = b == 1 ? 1.0 / 32 * 2 * B / HBM_WR : 1e-9 * r.time_s, want = LAUNCH + MEMLAT + 700 * NS + mem;
        ck_assert_msg(fabs(r.time_s - want) <= tol + 1e-12, "%s: %.6g us, want %.6g", backends[b], r.time_s * 1e6,
                      want * 1e6);
        ar_result_free(&r);
        ar_plan_free(p);
        ar_topo_free(t);

        ar_model_t *m;
        ar_error_t err;
        ck_assert_msg(ar_model_load_string(yaml, "round_copy", &m, &err) == AR_OK, "%s", err.message);
        ck_assert_msg(ar_topo_build("ring_1d:2", m, &t, &err) == AR_OK, "%s", err.message);
        p = tu_plan_new(2, 1, 1000);
        ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), 1000), AR_OK);
        tu_run_checked(backends[b], t, p, &o, &r, 1e-9);
        const double want8k = LAUNCH + MEMLAT + 4000.0 / 4000e9 + 4000.0 / 12000e9;
        ck_assert_msg(fabs(r.time_s - want8k) <= (b == 1 ? 1.0 / 32 * 8000.0 / HBM_WR : 1e-9 * r.time_s) + 1e-12,
                      "%s copy_gbps: %.6g us, want %.6g", backends[b], r.time_s * 1e6, want8k * 1e6);
        ar_result_free(&r);
        ar_plan_free(p);
        ar_topo_free(t);
    }
}
END_TEST

/* The L2 holds lines, not touches: three COPYs of the same 400 KB from IN to OUT move 2.4 MB
 * an execution, over the round model's 1 MB L2, but touch 800 KB, so IN is never further back
 * than that and stays warm, however large the buffers declared (a 4 MB SCRATCH no op touches).
 * A SCRATCH slot with epoch parity is touched in its other slot the next execution: IN to
 * SCRATCH (parity) to OUT, 3 x 300 KB, touches 1.2 MB over two executions: IN's first load is
 * cold. Both backends: time against a model whose cold_lat_ns is next to nothing. */
START_TEST(test_warm_touched_lines) {
    const char *backends[] = {"analytic", "sim"};
    ar_topo_t *t = round_topo_with("cold_lat_ns: 700\n", "ring_1d:2", 2),
              *t0 = round_topo_with("cold_lat_ns: 0.001\n", "ring_1d:2", 2);
    for (int b = 0; b < 2; b++) {
        if (b == 1 && !ar_backend_find("sim")) continue;
        ar_plan_t *p = tu_plan_new(2, 1, 100000);
        p->scratch_elems = 1000000;
        for (int k = 0; k < 3; k++)
            ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), 100000), AR_OK);
        expect_time_more(backends[b], t, t0, p, 0, 1e-9, "three touches of 800 KB");
        ar_plan_free(p);

        p = tu_plan_new(2, 1, 75000);
        p->scratch_elems = 150000;
        p->parity_elems = 75000;
        ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr_parity(0, AR_BUF_SCRATCH, 0), ar_addr(0, AR_BUF_IN, 0), 75000),
                         AR_OK);
        ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr_parity(0, AR_BUF_SCRATCH, 0), 75000),
                         AR_OK);
        expect_time_more(backends[b], t, t0, p, (700 - 0.001) * NS, 1e-9, "a parity slot: 1.2 MB over two");
        ar_plan_free(p);
    }
    ar_topo_free(t0);
    ar_topo_free(t);
}
END_TEST

/* pull_gbps (5 GB/s here against bw_gbps 10): each byte pulled sends bw / pull - 1 = 1 byte
 * of read requests the other way. Ranks 0 and 1 each COPY 1 MB from the other's IN over
 * ring_1d:2 (20 GB/s each way): pulling both ways, each direction carries the data and the
 * other side's requests, 2 MB, B / 20 GB/s more than without the key; one pull alone, or
 * pushes both ways, take no longer. Both backends. */
START_TEST(test_pull_gbps) {
    static char yaml[2048];
    const char *lk = "  - {name: l, bw_gbps: 10, lat_ns: 200}\n";
    const char *at = strstr(ROUND_MODEL, lk);
    ck_assert_ptr_nonnull(at);
    snprintf(yaml, sizeof yaml, "%.*s  - {name: l, bw_gbps: 10, lat_ns: 200, pull_gbps: 5}\n%s", (int)(at - ROUND_MODEL),
             ROUND_MODEL, at + strlen(lk));
    ar_model_t *m;
    ar_topo_t *t, *t0 = round_topo("ring_1d:2");
    ar_error_t err;
    ck_assert_msg(ar_model_load_string(yaml, "round_pull", &m, &err) == AR_OK, "%s", err.message);
    ck_assert_msg(ar_topo_build("ring_1d:2", m, &t, &err) == AR_OK, "%s", err.message);
    const uint64_t n = 250000; /* 1 MB of fp32 */
    static const struct { int pull, both; double more; } cases[] = {
        {1, 1, 4.0 * 250000 / (2 * LINK_BW)}, /* pulls both ways */
        {1, 0, 0},                            /* one pull */
        {0, 1, 0},                            /* pushes both ways */
    };
    const char *backends[] = {"analytic", "sim"};
    for (int b = 0; b < 2; b++) {
        if (b == 1 && !ar_backend_find("sim")) continue;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            ar_plan_t *p = tu_plan_new(2, 1, n);
            for (int me = 0; me < (cases[i].both ? 2 : 1); me++) {
                const int other = 1 - me; /* me's OUT gets other's IN, run by me (pull) or by other (push) */
                ck_assert_int_eq(ar_plan_copy(p, cases[i].pull ? me : other, 0, ar_addr(me, AR_BUF_OUT, 0),
                                              ar_addr(other, AR_BUF_IN, 0), n), AR_OK);
            }
            char what[32];
            snprintf(what, sizeof what, "case %zu", i);
            expect_time_more(backends[b], t, t0, p, cases[i].more, 1e-6, what);
            ar_plan_free(p);
        }
    }
    ar_topo_free(t0);
    ar_topo_free(t);
}
END_TEST

/* signal_fence_ns (300 here): a SIGNAL's fence takes that long at least. After a local
 * COPY (c) it adds 300 ns to the channel, all sync; after a push (p, its stores posted)
 * the fence waits for them to land a hop (200 ns) after the op ends, overlapping the
 * 300: 300 ns in all, 200 of it link (the landing). Two (COPY, SIGNAL) pairs to the
 * same flag: the second SIGNAL's fence starts after the second COPY. */
START_TEST(test_signal_fence) {
    ar_topo_t *t = round_topo_with("signal_fence_ns: 300\n", "ring_1d:2", 2);
    const uint64_t n = 1000;
    const double B = n * 4.0, c = MEMLAT + 2 * B / HBM_BW, push = MEMLAT + B / (2 * LINK_BW);
    for (int shape = 0; shape < 3; shape++) {
        /* 0: local COPY, SIGNAL; 1: push, SIGNAL; 2: twice (local COPY, SIGNAL) */
        ar_plan_t *p = tu_plan_new(2, 1, n);
        const ar_addr_t dst = shape == 1 ? ar_addr(1, AR_BUF_OUT, 0) : ar_addr(0, AR_BUF_OUT, 0);
        for (int i = 0; i < (shape == 2 ? 2 : 1); i++) {
            ck_assert_int_eq(ar_plan_copy(p, 0, 0, dst, ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
            ck_assert_int_eq(ar_plan_signal(p, 0, 0, 1, 0), AR_OK);
        }
        ck_assert_int_eq(ar_plan_wait(p, 1, 0, 0, shape == 2 ? 2 : 1), AR_OK);
        ar_result_t r;
        run(t, p, 0, &r);
        const double work = shape == 0 ? c : shape == 1 ? push : 2 * c;
        const double fence = (shape == 2 ? 2 : 1) * 300 * NS;
        EQ(r.time_s, LAUNCH + work + fence + SIG);
        EQ(r.terms_s[AR_TERM_SYNC], fence - (shape == 1 ? HOP : 0) + SIG);
        ar_plan_free(p);
    }
    ar_topo_free(t);
}
END_TEST

/* signal_together_ns (100 here): after a local COPY, a run of three SIGNALs to distinct flags
 * goes out as one release (the fence, 300 ns) that takes 100 ns more for each SIGNAL after
 * the first, and all three flags are issued when it is done: each arrives 200 ns later than
 * with the key 0, the first too (the old rule sent it out with the fence), all of it sync. */
START_TEST(test_signal_together) {
    const uint64_t n = 1000;
    const double B = n * 4.0, c = MEMLAT + 2 * B / HBM_BW;
    for (int with = 0; with <= 1; with++) {
        ar_topo_t *t = round_topo_with(with ? "signal_fence_ns: 300\nsignal_together_ns: 100\n" : "signal_fence_ns: 300\n",
                                       "ring_1d:2", 2);
        ar_plan_t *p = tu_plan_new(2, 1, n);
        ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
        for (uint32_t f = 0; f < 3; f++) ck_assert_int_eq(ar_plan_signal(p, 0, 0, 1, f), AR_OK);
        for (uint32_t f = 0; f < 3; f++) ck_assert_int_eq(ar_plan_wait(p, 1, 0, f, 1), AR_OK);
        ar_result_t r;
        run(t, p, 0, &r);
        const double queued = with ? 2 * 100 * NS : 0;
        EQ(r.time_s, LAUNCH + c + 300 * NS + queued + SIG);
        EQ(r.terms_s[AR_TERM_SYNC], 300 * NS + queued + SIG);
        ar_plan_free(p);
        /* the run's flags are issued together, when its whole release is done: a WAIT for
         * its first flag alone passes no sooner than one for its last */
        p = tu_plan_new(2, 1, n);
        ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
        for (uint32_t f = 0; f < 3; f++) ck_assert_int_eq(ar_plan_signal(p, 0, 0, 1, f), AR_OK);
        ck_assert_int_eq(ar_plan_wait(p, 1, 0, 0, 1), AR_OK);
        run(t, p, 0, &r);
        EQ(r.time_s, LAUNCH + c + 300 * NS + queued + SIG);
        ar_plan_free(p);
        ar_topo_free(t);
    }
}
END_TEST

/* reduce_group_ns (1000 here): the executor loads a REDUCE's sources two at a time, and
 * each group after the first keeps the channel at least that long (longer with a host
 * source: x-hchainN). A REDUCE of 3 local
 * elements (two groups) moves in max(its bytes' times, 1000 ns) = 1000 ns; of 2 (one
 * group) in its memory's time alone. reduce_op_ns (300 in the second model) comes on top
 * of either, whatever the groups. */
START_TEST(test_reduce_groups) {
    for (int with_op = 0; with_op <= 1; with_op++)
        for (int k = 2; k <= 3; k++) {
            ar_topo_t *t1 = round_topo_with(with_op ? "reduce_group_ns: 1000\nreduce_op_ns: 300\n"
                                                    : "reduce_group_ns: 1000\n",
                                            "ring_1d:2", 2);
            ar_plan_t *p = tu_plan_new(2, 1, 1);
            p->scratch_elems = 2;
            const ar_addr_t srcs[3] = {ar_addr(0, AR_BUF_IN, 0), ar_addr(0, AR_BUF_SCRATCH, 0),
                                       ar_addr(0, AR_BUF_SCRATCH, 1)};
            ck_assert_int_eq(ar_plan_reduce(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), srcs, (uint32_t)k, 1), AR_OK);
            ar_result_t r;
            run(t1, p, 1, &r);
            const double move = k == 3 ? 1000 * NS : HBM_S(k * 4.0, 4.0);
            EQ(r.time_s, LAUNCH + MEMLAT + move + (k - 1) * 4.0 / 50e9 + with_op * 300 * NS);
            EQ(r.terms_s[AR_TERM_SYNC], with_op * 300 * NS);
            ar_result_free(&r);
            ar_plan_free(p);
            ar_topo_free(t1);
        }
    ar_topo_t *t = round_topo_with("reduce_group_ns: 1000\n", "ring_1d:2", 2);
    for (int k = 2; k <= 3; k++) {
        ar_plan_t *p = tu_plan_new(2, 1, 1);
        p->scratch_elems = 2;
        const ar_addr_t srcs[3] = {ar_addr(0, AR_BUF_IN, 0), ar_addr(0, AR_BUF_SCRATCH, 0),
                                   ar_addr(0, AR_BUF_SCRATCH, 1)};
        ck_assert_int_eq(ar_plan_reduce(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), srcs, (uint32_t)k, 1), AR_OK);
        ar_result_t r;
        run(t, p, 0, &r);
        const double move = k == 3 ? 1000 * NS : HBM_S(k * 4.0, 4.0);
        EQ(r.time_s, LAUNCH + MEMLAT + move + (k - 1) * 4.0 / 50e9);
        ar_plan_free(p);
    }
    /* A later group with a host source is a round of host loads: 1000 ns + the host's
     * latency over HBM's (2000 - 100 ns). IN, h0 | h1: 2900 ns; h0, h1 | IN: 1000 ns. Both
     * after the op's latency (memory and host), bytes negligible. */
    for (int first_host = 0; first_host <= 1; first_host++) {
        ar_plan_t *p = tu_plan_new(2, 1, 1);
        p->host_elems = 2;
        const ar_addr_t in = ar_addr(0, AR_BUF_IN, 0), h0 = ar_addr(AR_RANK_HOST, AR_BUF_IN, 0),
                        h1 = ar_addr(AR_RANK_HOST, AR_BUF_IN, 1);
        const ar_addr_t srcs[3] = {first_host ? h0 : in, first_host ? h1 : h0, first_host ? in : h1};
        ck_assert_int_eq(ar_plan_reduce(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), srcs, 3, 1), AR_OK);
        ar_result_t r;
        run(t, p, 0, &r);
        EQ(r.time_s, LAUNCH + MEMLAT + 2000 * NS + (first_host ? 1000 : 2900) * NS + 2 * 4.0 / 50e9);
        ar_plan_free(p);
    }
    ar_topo_free(t);
}
END_TEST

/* link_issue_gbps (30 GB/s here): what a device's channels pull and push together. On
 * ring_1d:2 the two devices share two links, 20 GB/s each way. Rank 0 COPYing rank 1's
 * IN into rank 1's SCRATCH pulls B and pushes B: 2B / 30 GB/s, more than either
 * direction's B / 20; a plain pull of B is bound by the links as without the key (B / 30
 * at the issue bound is less). Link terms, after a hop's latency, and the pushed
 * stores land a hop after the op ends. */
START_TEST(test_link_issue) {
    ar_topo_t *t = round_topo_with("link_issue_gbps: 30\n", "ring_1d:2", 2), *t0 = round_topo("ring_1d:2");
    const uint64_t n = 100000;
    const double B = n * 4.0;
    for (int relay = 0; relay <= 1; relay++) {
        ar_plan_t *p = tu_plan_new(2, 1, n);
        p->scratch_elems = n;
        const ar_addr_t dst = relay ? ar_addr(1, AR_BUF_SCRATCH, 0) : ar_addr(0, AR_BUF_OUT, 0);
        ck_assert_int_eq(ar_plan_copy(p, 0, 0, dst, ar_addr(1, AR_BUF_IN, 0), n), AR_OK);
        ar_result_t r, r0;
        run(t, p, 0, &r);
        run(t0, p, 0, &r0);
        if (relay) EQ(r.time_s, LAUNCH + MEMLAT + HOP + 2 * B / 30e9 + HOP);
        else EQ(r.time_s, r0.time_s);
        ck_assert(r0.time_s < LAUNCH + MEMLAT + HOP + 2 * B / 30e9);
        ar_plan_free(p);
    }
    ar_topo_free(t0);
    ar_topo_free(t);
}
END_TEST

/* chan_local_read_gbps (8 GB/s here): one channel's loads from its own device. A
 * local COPY of B bytes reads B: max(2B / HBM_BW (device), B / 8 GB/s)
 * = B / 8 GB/s; a local REDUCE of two sources reads 2B: 2B / 8 GB/s, plus its
 * additions. A pull from a peer reads nothing locally: the bound does not apply. Both
 * are memory terms. Without the key the device's memory is the only bound. The REDUCE
 * storing into rank 1 instead loads at chan_local_read_push_gbps (2 GB/s here): 2B / 2
 * GB/s, its stores landing a hop after it ends; without that key at 8 GB/s. */
START_TEST(test_chan_local_read) {
    ar_topo_t *t = round_topo_with("chan_local_read_gbps: 8\n", "ring_1d:2", 2), *t0 = round_topo("ring_1d:2");
    const uint64_t n = 100000;
    const double B = n * 4.0;
    for (int k = 1; k <= 2; k++) {
        ar_plan_t *p = tu_plan_new(2, 1, n);
        p->scratch_elems = n;
        const ar_addr_t srcs[2] = {ar_addr(0, AR_BUF_IN, 0), ar_addr(0, AR_BUF_SCRATCH, 0)};
        if (k == 1) ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), srcs[0], n), AR_OK);
        else ck_assert_int_eq(ar_plan_reduce(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), srcs, 2, n), AR_OK);
        const double add = (k - 1) * B / 50e9;
        ar_result_t r;
        run(t, p, 1, &r);
        EQ(r.time_s, LAUNCH + MEMLAT + k * B / 8e9 + add);
        EQ(r.terms_s[AR_TERM_MEMORY], MEMLAT + k * B / 8e9);
        ar_result_free(&r);
        run(t0, p, 0, &r);
        EQ(r.time_s, LAUNCH + MEMLAT + HBM_S(k * B, B) + add);
        ar_plan_free(p);
    }
    ar_plan_t *p = tu_plan_new(2, 1, n);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(1, AR_BUF_IN, 0), n), AR_OK);
    ar_result_t r, r0;
    run(t, p, 0, &r);
    run(t0, p, 0, &r0);
    EQ(r.time_s, r0.time_s);
    ck_assert(r.time_s < LAUNCH + B / 8e9); /* the link's time, not the local bound's */
    ar_plan_free(p);
    ar_topo_t *tp = round_topo_with("chan_local_read_gbps: 8\nchan_local_read_push_gbps: 2\n", "ring_1d:2", 2);
    p = tu_plan_new(2, 1, n);
    p->scratch_elems = n;
    const ar_addr_t srcs[2] = {ar_addr(0, AR_BUF_IN, 0), ar_addr(0, AR_BUF_SCRATCH, 0)};
    ck_assert_int_eq(ar_plan_reduce(p, 0, 0, ar_addr(1, AR_BUF_SCRATCH, 0), srcs, 2, n), AR_OK);
    run(tp, p, 0, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + 2 * B / 2e9 + B / 50e9 + HOP);
    run(t, p, 0, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + 2 * B / 8e9 + B / 50e9 + HOP);
    ar_plan_free(p);
    ar_topo_free(tp);
    /* chan_local_read_fp32_gbps 16: an fp32 REDUCE loads at 16, a COPY and a bf16 REDUCE of
     * the same bytes at 8; the push rate scales alike (2 x 16 / 8 = 4) */
    tp = round_topo_with("chan_local_read_gbps: 8\nchan_local_read_push_gbps: 2\nchan_local_read_fp32_gbps: 16\n",
                         "ring_1d:2", 2);
    for (int dt = 0; dt < 2; dt++) {
        ck_assert_int_eq(ar_plan_new("hand", 2, 1, dt ? 2 * n : n, dt ? AR_BF16 : AR_FP32, &p), AR_OK);
        p->scratch_elems = p->count;
        const ar_addr_t two[2] = {ar_addr(0, AR_BUF_IN, 0), ar_addr(0, AR_BUF_SCRATCH, 0)};
        ck_assert_int_eq(ar_plan_reduce(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), two, 2, p->count), AR_OK);
        run(tp, p, 0, &r);
        EQ(r.time_s, LAUNCH + MEMLAT + 2 * B / (dt ? 8e9 : 16e9) + B / 50e9);
        ar_plan_free(p);
        ck_assert_int_eq(ar_plan_new("hand", 2, 1, dt ? 2 * n : n, dt ? AR_BF16 : AR_FP32, &p), AR_OK);
        p->scratch_elems = p->count;
        ck_assert_int_eq(ar_plan_reduce(p, 0, 0, ar_addr(1, AR_BUF_SCRATCH, 0), two, 2, p->count), AR_OK);
        run(tp, p, 0, &r);
        EQ(r.time_s, LAUNCH + MEMLAT + 2 * B / (dt ? 2e9 : 4e9) + B / 50e9 + HOP);
        ar_plan_free(p);
    }
    ck_assert_int_eq(ar_plan_new("hand", 2, 1, n, AR_FP32, &p), AR_OK);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
    run(tp, p, 0, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + B / 8e9);
    ar_plan_free(p);
    ar_topo_free(tp);
    ar_topo_free(t0);
    ar_topo_free(t);
}
END_TEST

/* chan_local_read_cold_gbps (4 GB/s here, against chan_local_read_gbps 8): a channel's
 * loads of lines the L2 no longer holds. A local COPY of B bytes whose share c is cold
 * (test_l2_bytes's three cases: warm, cold, 0.3 of it) takes B ((1 - q) / 8 + q / 4 GB/s)
 * on its channel, which bounds it, after c x cold_lat_ns; q is c in sixteenths (0.3: 5/16).
 * Without the key, cold lines load at 8 GB/s too. Both backends. */
START_TEST(test_chan_local_read_cold) {
    const warmth_case_t *cases = warmth_cases;
    const char *backends[] = {"analytic", "sim"};
    for (size_t i = 0; i < N_WARMTH_CASES; i++)
        for (int k = 0; k < 2; k++)
            for (int b = 0; b < 2; b++) {
                if (b == 1 && !ar_backend_find("sim")) continue;
                char keys[256];
                snprintf(keys, sizeof keys, "cold_lat_ns: 700\nchan_local_read_gbps: 8\n%s%s", cases[i].keys,
                         k ? "chan_local_read_cold_gbps: 4\n" : "");
                ar_topo_t *t = round_topo_with(keys, "ring_1d:2", 2);
                ar_plan_t *p = tu_plan_new(2, 1, cases[i].n);
                ck_assert_int_eq(
                    ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), cases[i].n), AR_OK);
                const double B = cases[i].n * 4.0, c = cases[i].cold;
                const double cq = round(c * 16) / 16; /* the load rate's share, in sixteenths */
                const double want = LAUNCH + MEMLAT + c * 700 * NS + B * ((1 - cq) / 8e9 + cq / (k ? 4e9 : 8e9));
                ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
                ar_result_t r;
                tu_run_checked(backends[b], t, p, &o, &r, 1e-9);
                ck_assert_msg(fabs(r.time_s - want) <= 1e-9 * want, "%s case %zu key %d: %.6g us, want %.6g",
                              backends[b], i, k, r.time_s * 1e6, want * 1e6);
                ar_result_free(&r);
                ar_plan_free(p);
                ar_topo_free(t);
            }
}
END_TEST

/* chan_cold_crowd_gbps (16 GB/s here; cold loads at 4 GB/s): channel k of rank 0's three
 * COPYs its own third of IN (600000 fp32 elements, far beyond the 1 MB L2: cold) into OUT;
 * the channels begin together, and the one that begins last has two others loading beside
 * it, each taken to move 2 bytes through the memory per byte it loads (a local COPY): its
 * cold loads take 1 + 2 x 2 x 4 / 16 = 2 times as long, B / 4 GB/s more. The others end
 * before it. A channel loading lines still in the L2 counts for none: the same COPYs of a
 * third of 2000 elements, warm, take no longer; nor does one that has ended: channel 1
 * COPYing its third after channel 0's (a SIGNAL and a WAIT between them) loads alone.
 * Both backends. */
START_TEST(test_chan_cold_crowd) {
    /* warmth tracked, at the least wait (the later channels' thirds are a little less cold) */
    const char *base = "cold_lat_ns: 0.001\nchan_local_read_gbps: 8\nchan_local_read_cold_gbps: 4\n";
    char keys[256];
    snprintf(keys, sizeof keys, "%schan_cold_crowd_gbps: 16\n", base);
    ar_topo_t *t = round_topo_with(keys, "ring_1d:2", 2), *t0 = round_topo_with(base, "ring_1d:2", 2);
    const char *backends[] = {"analytic", "sim"};
    for (int b = 0; b < 2; b++) {
        if (b == 1 && !ar_backend_find("sim")) continue;
        for (int warm = 0; warm < 2; warm++) {
            const uint64_t n = warm ? 2000 : 600000, third = n / 3;
            ar_plan_t *p = tu_plan_new(2, 3, n);
            for (int c = 0; c < 3; c++)
                ck_assert_int_eq(ar_plan_copy(p, 0, c, ar_addr(0, AR_BUF_OUT, c * third), ar_addr(0, AR_BUF_IN, c * third),
                                              third), AR_OK);
            expect_time_more(backends[b], t, t0, p, warm ? 0 : third * 4.0 / 4e9, 1e-9, warm ? "warm" : "cold");
            ar_plan_free(p);
        }
        const uint64_t third = 200000;
        ar_plan_t *p = tu_plan_new(2, 2, 3 * third);
        ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), third), AR_OK);
        ck_assert_int_eq(ar_plan_signal(p, 0, 0, 0, 0), AR_OK);
        ck_assert_int_eq(ar_plan_wait(p, 0, 1, 0, 1), AR_OK);
        ck_assert_int_eq(ar_plan_copy(p, 0, 1, ar_addr(0, AR_BUF_OUT, third), ar_addr(0, AR_BUF_IN, third), third), AR_OK);
        expect_time_more(backends[b], t, t0, p, 0, 1e-9, "one after the other");
        ar_plan_free(p);
    }
    ar_topo_free(t0);
    ar_topo_free(t);
}
END_TEST

/* signal_lat_local_ns (400 here) for a SIGNAL to a rank on the sender's device,
 * signal_lat_ns (1000) across: 4 ranks on ring_1d:2, ranks 0 and 1 on device 0. */
START_TEST(test_signal_local) {
    ar_topo_t *t = round_topo_with("signal_lat_local_ns: 400\n", "ring_1d:2", 4);
    EQ(ar_cost_signal_s(t, 0, 1), 400 * NS);
    EQ(ar_cost_signal_s(t, 0, 0), 400 * NS);
    EQ(ar_cost_signal_s(t, 1, 2), SIG);
    for (int to = 1; to <= 2; to++) {
        ar_plan_t *p = tu_plan_new(4, 1, 16);
        ck_assert_int_eq(ar_plan_signal(p, 0, 0, to, 0), AR_OK);
        ck_assert_int_eq(ar_plan_wait(p, to, 0, 0, 1), AR_OK);
        ar_result_t r;
        run(t, p, 0, &r);
        EQ(r.time_s, LAUNCH + (to == 1 ? 400 * NS : SIG));
        ar_plan_free(p);
    }
    ar_topo_free(t);
}
END_TEST

/* signal_release_remote_ns (800 here) for a flag on another device, signal_release_ns
 * (500) on the same one: 4 ranks on ring_1d:2, ranks 0 and 1 on device 0. Rank 0
 * SIGNALs rank `to` k times back to back; `to` WAITs for all k. */
START_TEST(test_signal_release_remote) {
    ar_topo_t *t = round_topo_with("signal_release_ns: 500\nsignal_release_remote_ns: 800\n", "ring_1d:2", 4);
    EQ(ar_cost_signal_issue_s(t, 0, 1), 500 * NS);
    EQ(ar_cost_signal_issue_s(t, 0, 2), 800 * NS);
    EQ(ar_cost_signal_issue_s(t, 3, 1), 800 * NS);
    for (int to = 1; to <= 2; to++)
        for (int k = 1; k <= 4; k++) {
            ar_plan_t *p = tu_plan_new(4, 1, 16);
            for (int i = 0; i < k; i++) ck_assert_int_eq(ar_plan_signal(p, 0, 0, to, 0), AR_OK);
            ck_assert_int_eq(ar_plan_wait(p, to, 0, 0, (uint64_t)k), AR_OK);
            ar_result_t r;
            run(t, p, 0, &r);
            EQ(r.time_s, LAUNCH + (k - 1) * (to == 1 ? 500 : 800) * NS + ar_cost_signal_s(t, 0, to));
            ar_plan_free(p);
        }
    ar_topo_free(t);
}
END_TEST

/* A WAIT for count k is released by the k-th SIGNAL to *arrive*, not the k-th
 * issued: rank 0 signals rank 2 at once (two hops: arrives at 1200 ns), rank 1
 * after a short copy (one hop: arrives at c + 1000 ns < 1200 ns). */
START_TEST(test_arrival_order) {
    ar_topo_t *t = round_topo("ring_1d:4");
    const uint64_t n = 16;
    const double B = n * 4.0, c = MEMLAT + 2 * B / HBM_BW;
    ck_assert(c + SIG < SIG + HOP);
    for (int count = 1; count <= 2; count++) {
        ar_plan_t *p = tu_plan_new(4, 1, n);
        ck_assert_int_eq(ar_plan_signal(p, 0, 0, 2, 0), AR_OK);
        ck_assert_int_eq(ar_plan_copy(p, 1, 0, ar_addr(1, AR_BUF_OUT, 0), ar_addr(1, AR_BUF_IN, 0), n), AR_OK);
        ck_assert_int_eq(ar_plan_signal(p, 1, 0, 2, 0), AR_OK);
        ck_assert_int_eq(ar_plan_wait(p, 2, 0, 0, count), AR_OK);
        ar_result_t r;
        run(t, p, 0, &r);
        if (count == 1) {
            EQ(r.time_s, LAUNCH + c + SIG);
            EQ(r.terms_s[AR_TERM_MEMORY], c);
            EQ(r.terms_s[AR_TERM_SYNC], SIG);
        } else {
            EQ(r.time_s, LAUNCH + SIG + HOP);
            EQ(r.terms_s[AR_TERM_SYNC], SIG + HOP);
            ck_assert(r.terms_s[AR_TERM_MEMORY] == 0);
        }
        ar_plan_free(p);
    }
    ar_topo_free(t);
}
END_TEST

/* Two channels pushing over the same link direction share it: the first ends after B / bw,
 * the second after 2B / bw (the link's backlog); the link is busy 2B / bw. */
START_TEST(test_link_shared) {
    ar_topo_t *t = round_topo("ring_1d:4");
    const uint64_t n = 100000;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(4, 2, 2 * n);
    for (int c = 0; c < 2; c++)
        ck_assert_int_eq(ar_plan_copy(p, 0, c, ar_addr(1, AR_BUF_OUT, c * n), ar_addr(0, AR_BUF_IN, c * n), n), AR_OK);
    ar_result_t r;
    run(t, p, 1, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + HOP + 2 * B / LINK_BW);
    int found = 0;
    for (int i = 0; i < r.nlinks; i++)
        if (r.links[i].bytes > 0) {
            found++;
            EQ(r.links[i].bytes, 2 * B);
            EQ(r.links[i].busy_s, 2 * B / LINK_BW);
        }
    ck_assert_int_eq(found, 1);
    ar_result_free(&r);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* A NETREDUCE on a switch that adds, two ranks per device: every device sends 2 x B up
 * its link and receives 2 x B back, its memory serving 2 x B of loads and 2 x B of
 * stores; the sum crosses up one hop and down another: launch + memory + 2 hops +
 * 2B / bw. And the bound: switches that add void the gossip term, so injection is one
 * hop + S / B_d (it was 2(D-1)/D x S / B_d). */
START_TEST(test_netreduce_closed_form) {
    ar_topo_t *t = round_topo_with("switch_reduce: 1\n", "switch:4", 8);
    const uint64_t n = 100000;
    const double B = n * 4.0;
    ar_plan_t *p = tu_plan_new(8, 1, n);
    ck_assert_int_eq(ar_plan_netreduce(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    ar_op_cost_t c;
    ar_op_traffic_t tr[32];
    int nt = 0, nlink = 0, nmem = 0;
    ck_assert_int_eq(ar_cost_op(t, p, &p->ops[0], 0, AR_MEM_HBM, &c, tr, 32, &nt, NULL), AR_OK);
    for (int i = 0; i < nt; i++) {
        if (tr[i].res == AR_RES_LINK) {
            EQ(tr[i].bytes, 2 * B);
            nlink++;
        } else if (tr[i].res == AR_RES_MEMORY) {
            EQ(tr[i].bytes, 4 * B);
            nmem++;
        }
    }
    ck_assert_int_eq(nlink, 8); /* four devices' links, both ways */
    ck_assert_int_eq(nmem, 4);
    ar_result_t r;
    run(t, p, 0, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + 2 * HOP + 2 * B / LINK_BW);
    ar_result_free(&r);
    ar_plan_free(p);
    ar_topo_free(t);
    const double S = 1e8;
    ar_bound_t b;
    ar_error_t err;
    t = round_topo_with("switch_reduce: 1\n", "switch:4", 4);
    ck_assert_int_eq(ar_bound(t, (uint64_t)S, AR_MEM_HBM, 0, &b, &err), AR_OK);
    EQ(b.injection_s, HOP + S / LINK_BW);
    ar_topo_free(t);
    t = round_topo("switch:4");
    ck_assert_int_eq(ar_bound(t, (uint64_t)S, AR_MEM_HBM, 0, &b, &err), AR_OK);
    EQ(b.injection_s, HOP + 2.0 * 3 / 4 * S / LINK_BW);
    ar_topo_free(t);
}
END_TEST

START_TEST(test_errors) {
    ar_topo_t *t = round_topo("ring_1d:4");
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    ar_result_t r;
    ar_error_t err;
    /* a WAIT for two SIGNALs of one */
    ar_plan_t *p = tu_plan_new(4, 2, 4);
    ck_assert_int_eq(ar_plan_signal(p, 3, 0, 2, 5), AR_OK);
    ck_assert_int_eq(ar_plan_wait(p, 2, 1, 5, 2), AR_OK);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    ck_assert_int_eq(ar_backend_run("analytic", t, p, &o, &r, &err), AR_EPLAN);
    ck_assert_str_eq(err.message, "deadlock: rank 2 channel 1 op 0 waits for flag 5 to reach 2 "
                                  "but only 1 SIGNALs arrive");
    ar_plan_free(p);
    /* a plan for another rank count */
    p = tu_plan_new(3, 1, 4);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    ck_assert_int_eq(ar_backend_run("analytic", t, p, &o, &r, &err), AR_EPLAN);
    ck_assert(strstr(err.message, "plan has 3 ranks but topology") == err.message);
    ar_plan_free(p);
    /* capacity: a missing level, and one too small */
    p = tu_plan_new(4, 1, 100000);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), 1), AR_OK);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    o.buffer = AR_MEM_TCM;
    ck_assert_int_eq(ar_backend_run("analytic", t, p, &o, &r, &err), AR_EINVAL);
    ck_assert_str_eq(err.message, "model round has no tcm level (--buffer)");
    o.buffer = AR_MEM_SRAM; /* 2 x 400000 bytes fit 1000000 */
    ck_assert_int_eq(ar_backend_run("analytic", t, p, &o, &r, &err), AR_OK);
    EQ(r.time_s, LAUNCH + 10 * NS + 4.0 / 4000e9 + 4.0 / 4000e9);
    p->scratch_elems = 100000; /* 3 x 400000 do not */
    ck_assert_int_eq(ar_backend_run("analytic", t, p, &o, &r, &err), AR_ELIMIT);
    ck_assert(strstr(err.message, "sram of d0: needs 1.2 MB (input, output and scratch of 1 rank), holds 1 MB") != NULL);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST


/* ---- every algorithm's own closed form ----
 *
 * Notation (all from the model; B is the bytes of the block an op moves):
 *   ML  memory latency of the buffer level, HOP one link's latency,
 *   S   signal latency to a neighbour (one hop; a rank signalling itself pays S too),
 *   bw  bandwidth of the link bundle between the two neighbours (count x kind),
 *   cw  a channel's posted-write rate, rd/wr the level's read/write bandwidth,
 *   rg  reduce throughput.
 * From arsim/cost.h, with one op on the critical path at a time:
 *   push copy      cp(B)   = ML + HOP + B * max(1/bw, 1/cw, 1/rd, 1/wr)
 *   pull copy      cpull(B)= ML + HOP + B * max(1/bw, 1/cr, 1/rd, 1/wr)
 *                            (cr = chan_inflight_bytes / chan_read_lat_ns)
 *   push reduce    crp(B)  = ML + HOP + B * max(1/bw, 1/cw, 2/rd, 1/wr) + B/rg
 *                            (two local sources read, one remote write)
 *   local reduce   crl(k,B)= ML + B * (k/rd + 1/wr) + (k-1) B/rg
 * each plus O, the executor's own cost per data op (op_overhead_ns, sync term),
 * and a push's SIGNAL releases the neighbour's WAIT S later, S = signal latency +
 * the WAIT's own cost (wait_overhead_ns). */
typedef struct mp_s {
    double ml, hop, sig, bw, cw, cr, mr, mw, rg, hl, hg, launch; /* mr, mw: the memory level's read and write rates */
    double op; /* op_overhead_ns: every data op's own cost (sync term) */
    double wt; /* wait_overhead_ns alone: a WAIT whose flag is already there */
} mp_t;

static mp_t params(const ar_topo_t *t, int link_count) {
    const ar_model_t *m = t->model;
    const ar_mem_level_t *l = &m->mem[AR_MEM_HBM];
    mp_t p = {
        .ml = l->lat_ns * NS, .hop = m->links[0].lat_ns * NS,
        /* a SIGNAL and the WAIT it releases; on ordered links a SIGNAL behind stores arrives as
         * they land, adding nothing of its own */
        .sig = ((m->link_ordered > 0 ? 0 : m->signal_lat_ns) + m->wait_overhead_ns) * NS,
        .bw = link_count * m->links[0].bw_gbps * 1e9, .cw = m->chan_write_gbps * 1e9,
        .cr = ar_model_chan_read_gbps(m) * 1e9,
        .mr = l->read_gbps * 1e9, .mw = l->write_gbps * 1e9, .rg = m->reduce_gbps * 1e9,
        .hl = m->host_link_lat_ns * NS, .hg = m->host_link_gbps * 1e9, .launch = m->launch_ns * NS,
        .op = m->op_overhead_ns * NS, .wt = m->wait_overhead_ns * NS,
    };
    return p;
}

static double max4(double a, double b, double c, double d) {
    double x = a > b ? a : b, y = c > d ? c : d;
    return x > y ? x : y;
}
static double cp(const mp_t *m, double B) {
    return m->ml + m->hop + B * max4(1 / m->bw, 1 / m->cw, 1 / m->mr, 1 / m->mw) + m->op;
}
static double cpull(const mp_t *m, double B) {
    return m->ml + m->hop + B * max4(1 / m->bw, 1 / m->cr, 1 / m->mr, 1 / m->mw) + m->op;
}
static double crp(const mp_t *m, double B) {
    return m->ml + m->hop + B * max4(1 / m->bw, 1 / m->cw, 2 / m->mr, 1 / m->mw) + B / m->rg + m->op;
}
static double crl(const mp_t *m, int k, double B) {
    return m->ml + B * (k / m->mr + 1 / m->mw) + (k - 1) * B / m->rg + m->op;
}
/* The push ring of algorithms/util.c on p positions with blocks of B bytes:
 * reduce-scatter = a copy push, p-2 reduce pushes, each after the previous
 * position's signal, then a local reduce into OUT after the last signal;
 * all-gather = p-1 copy pushes, each followed by the signal the next one waits
 * for; the execution ends when the last signal (and the acknowledgement sent at
 * the same moment) arrives. */
static double ring_rs(const mp_t *m, int p, double B) {
    return cp(m, B) + (p - 2) * (m->sig + crp(m, B)) + m->sig + crl(m, 2, B);
}
static double ring_ag(const mp_t *m, int p, double B) { return (p - 1) * (cp(m, B) + m->sig); }
static double tree(const mp_t *m, int D, int kr, double B);

/* Builds algo on t with one lane and one chunk, runs analytic, returns the result. */
static void run_algo(const ar_topo_t *t, const char *algo, uint64_t n, ar_dtype_t dt,
                     ar_result_t *r) {
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
    o.channels = 1;
    o.chunk_bytes = n * ar_dtype_size(dt);
    ar_plan_t *p;
    ar_error_t err;
    ck_assert_msg(ar_algo_build(algo, t, n, dt, &o, &p, &err) == AR_OK, "%s on %s: %s", algo,
                  t->name, err.message);
    run(t, p, 0, r);
    ck_assert_uint_eq(r->ops_executed, p->nops); /* every op once */
    ar_plan_free(p);
}

/* 32 x 8!: divisible by every rank count, grid side and tree count (mesh2d: two per rank)
 * used here into blocks of whole 128-element runs (where ar__split cuts parts this large),
 * so blocks are equal and the forms exact. */
#define NEL (32 * 40320)

/* ring on ring_1d:p, one channel, one chunk, n bytes:
 *   T = launch + ring_rs(p, n/p) + ring_ag(p, n/p)
 *     = launch + 2(p-1) a + 2(p-1)/p n b + (p-1)/p n c + d
 * with a = S + ML + HOP   (per step: the signal, and a push's memory + link latency)
 *      b = max(1/bw, 1/cw) per byte of a push (the link or the channel's write rate;
 *          memory is faster in these models, asserted below)
 *      c = 1/rg            per byte reduced (p-1 blocks: p-2 pushes and the last)
 *      d = ML + n/p (2/rd + 1/wr): the one op of the ring that stays on the device,
 *          the final in-place reduce into OUT (its memory traffic).
 * p = 2 runs over the doubled link of ring_1d:2 (bw twice). The terms split the same
 * way: link 2(p-1)(ML + HOP + n/p b), sync 2(p-1) S, reduce (p-1)/p n c, memory d.
 * Every one of the 2p-1 data ops adds O (sync), and the last WAIT (for the
 * acknowledgement, already there when the last signal arrives) its own cost. */
START_TEST(test_ring_closed_form) {
    /* h200_est: a GPU model without the executor's SIGNAL terms (the closed form has none) */
    const char *models[] = {NULL, "accel_tcm", test_path("tests/data/h200_est.yaml")};
    for (int mi = 0; mi < 3; mi++)
        for (int p = 2; p <= 8; p++) {
            char spec[32];
            snprintf(spec, sizeof spec, "ring_1d:%d", p);
            ar_topo_t *t;
            if (mi == 0) {
                t = round_topo(spec);
            } else {
                ar_error_t err;
                ck_assert_int_eq(ar_topo_open(spec, models[mi], &t, &err), AR_OK);
            }
            for (int dt = 0; dt < AR_NDTYPE; dt++) {
                mp_t m = params(t, p == 2 ? 2 : 1);
                double n = (double)NEL * ar_dtype_size((ar_dtype_t)dt);
                double b = fmax(1 / m.bw, 1 / m.cw), c = 1 / m.rg;
                ck_assert(b >= 2 / m.mr && b >= 1 / m.mw);
                double a = m.sig + m.ml + m.hop, d = m.ml + n / p * (2 / m.mr + 1 / m.mw);
                double want = m.launch + 2 * (p - 1) * a + 2.0 * (p - 1) / p * n * b +
                              (double)(p - 1) / p * n * c + d + (2 * p - 1) * m.op + m.wt;
                ar_result_t r;
                run_algo(t, "ring", NEL, (ar_dtype_t)dt, &r);
                EQ(r.time_s, want);
                EQ(r.time_s, m.launch + ring_rs(&m, p, n / p) + ring_ag(&m, p, n / p) + m.wt);
                EQ(r.terms_s[AR_TERM_LINK], 2 * (p - 1) * (m.ml + m.hop + n / p * b));
                EQ(r.terms_s[AR_TERM_SYNC], 2 * (p - 1) * m.sig + (2 * p - 1) * m.op + m.wt);
                EQ(r.terms_s[AR_TERM_REDUCE], (double)(p - 1) / p * n * c);
                EQ(r.terms_s[AR_TERM_MEMORY], d);
                EQ(r.terms_s[AR_TERM_LAUNCH], m.launch);
            }
            ar_topo_free(t);
        }
}
END_TEST

/* torus2d on torus_2d:WxH (sides >= 3: single links), one lane, columns first:
 * reduce-scatter along the Y ring (blocks n/H), the X ring allreduce of the block held
 * (blocks n/(WH)), then all-gather along Y. WxH and HxW differ. */
START_TEST(test_torus2d_closed_form) {
    static const int dims[][2] = {{3, 3}, {3, 4}, {4, 3}, {5, 3}};
    for (int i = 0; i < 4; i++) {
        int W = dims[i][0], H = dims[i][1];
        char spec[32];
        snprintf(spec, sizeof spec, "torus_2d:%dx%d", W, H);
        ar_topo_t *t = round_topo(spec);
        mp_t m = params(t, 1);
        double n = NEL * 4.0, by = n / H, bx = n / (W * H);
        ar_result_t r;
        run_algo(t, "torus2d", NEL, AR_FP32, &r);
        EQ(r.time_s, m.launch + ring_rs(&m, H, by) + ring_rs(&m, W, bx) + ring_ag(&m, W, bx) +
                         ring_ag(&m, H, by));
        EQ(r.terms_s[AR_TERM_SYNC], (2 * (W - 1) + 2 * (H - 1)) * m.sig);
        ar_topo_free(t);
    }
}
END_TEST

/* mesh2d: every rank's block reduced up a tree rooted at its owner, X first for half the
 * blocks and Y first for the other half, broadcast back down. Every link direction of a
 * row then carries each X-first block once and the Y-first blocks of its own row once:
 * S/2 + S/(2H); a column S/2 + S/(2W); a line (one order) S. Exact byte counts, and a
 * time no shorter than the bound. */
START_TEST(test_mesh2d_link_bytes) {
    static const int dims[][2] = {{4, 4}, {2, 3}, {3, 3}, {1, 5}, {5, 3}, {4, 1}};
    for (int i = 0; i < 6; i++) {
        const int W = dims[i][0], H = dims[i][1];
        char spec[32];
        snprintf(spec, sizeof spec, "mesh_2d:%dx%d", W, H);
        ar_topo_t *t = round_topo(spec);
        const double S = NEL * 4.0;
        const int line = W == 1 || H == 1;
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        o.channels = 1;
        ar_plan_t *p;
        ar_error_t err;
        ck_assert_msg(ar_algo_build("mesh2d", t, NEL, AR_FP32, &o, &p, &err) == AR_OK, "%s", err.message);
        ar_result_t r;
        run(t, p, 1, &r);
        ar_plan_free(p);
        ck_assert_int_eq(r.nlinks, 2 * t->nlinks);
        for (int l = 0; l < r.nlinks; l++) {
            const ar_link_t *k = &t->links[r.links[l].link];
            const int row = abs(k->a - k->b) == 1 && W > 1;
            EQ(r.links[l].bytes, line ? S : row ? S / 2 + S / (2 * H) : S / 2 + S / (2 * W));
        }
        ar_bound_t b;
        ck_assert_int_eq(ar_bound(t, (uint64_t)S, AR_MEM_HBM, 0, &b, &err), AR_OK);
        ck_assert_msg(r.time_s >= b.time_s, "%s: %.9g s beats the bound %.9g", spec, r.time_s, b.time_s);
        ar_result_free(&r);
        ar_topo_free(t);
    }
}
END_TEST

/* torus2d on a mesh, four lanes: columns first on lanes 0 and 2, rows first on 1 and 3, so
 * the first phase's bulk loads both dimensions' links, two lanes already (a folded ring and
 * the same ring the other way load the same link directions). On a square mesh the rows'
 * links then carry exactly the bytes the columns' do; rows first alone (a grid laid along a
 * ring keeps it) put the bulk on the rows' links. */
START_TEST(test_torus2d_mesh_orders) {
    static const char *const specs[] = {"mesh_2d:4x4", "mesh_2d:3x3"};
    for (int i = 0; i < 4; i++) {
        const int lanes = i < 2 ? 4 : 2;
        ar_topo_t *t = round_topo(specs[i % 2]);
        const int W = t->grid_w;
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        o.channels = lanes;
        ar_plan_t *p;
        ar_error_t err;
        ck_assert_msg(ar_algo_build("torus2d", t, NEL, AR_FP32, &o, &p, &err) == AR_OK, "%s", err.message);
        /* lane 0's first op on rank 0 goes down its column, lane 1's along its row; a mesh's
         * line is a ring folded (out on the even places, back on the odd), so rank 0's next
         * is two places on one way and one place on the other, never the line's far end */
        const int first[4] = {2 * W, 2, W, 1};
        for (int c = 0; c < lanes; c++) {
            const ar_chan_t *ch = ar_plan_chan(p, 0, c);
            int to = -1;
            for (uint32_t k = 0; k < ch->nops && to < 0; k++) {
                const ar_op_t *op = &p->ops[ch->first + k];
                if ((op->code == AR_OP_COPY || op->code == AR_OP_SIGNAL) && op->dst.rank != 0) to = op->dst.rank;
            }
            ck_assert_msg(to == first[c], "%s lane %d: first op to rank %d, not %d", specs[i % 2], c, to, first[c]);
        }
        /* every operand and flag of every rank's ops lies in its row or column, two places
         * away at most */
        for (int q = 0; q < t->nranks; q++)
            for (int c = 0; c < lanes; c++) {
                const ar_chan_t *ch = ar_plan_chan(p, q, c);
                for (uint32_t k = 0; k < ch->nops; k++) {
                    const ar_op_t *op = &p->ops[ch->first + k];
                    const int code = op->code, nsrc = code == AR_OP_SIGNAL ? -1 : (int)op->nsrc;
                    if (code != AR_OP_COPY && code != AR_OP_REDUCE && code != AR_OP_SIGNAL) continue;
                    for (int s = -1; s <= nsrc; s++) {
                        const int to = s < 0 ? op->dst.rank : ar_op_operand(p, op, (uint32_t)s)->rank;
                        const int dx = abs(to % W - q % W), dy = abs(to / W - q / W);
                        ck_assert_msg((dx == 0 || dy == 0) && dx + dy <= 2, "%s: rank %d lane %d op %u reaches rank %d",
                                      specs[i % 2], q, c, k, to);
                    }
                }
            }
        ar_result_t r;
        run(t, p, 1, &r);
        ar_plan_free(p);
        double rows = 0, cols = 0;
        for (int l = 0; l < r.nlinks; l++) {
            const ar_link_t *k = &t->links[r.links[l].link];
            *(abs(k->a - k->b) == 1 ? &rows : &cols) += r.links[l].bytes;
        }
        EQ(rows, cols);
        ar_result_free(&r);
        ar_topo_free(t);
    }
}
END_TEST

/* 1stage on full:p: p-1 pushes of the whole input (n bytes) to every peer, the
 * last peer's signal, a local reduce of p sources; the acknowledgement that the
 * slots were read is taken at the start of the next execution (a WAIT count 0),
 * so one execution has no barrier after.
 * 2stage: the same with slices n/p, then p-1 pushes of the reduced slice. */
START_TEST(test_shots_closed_form) {
    for (int p = 2; p <= 6; p++) {
        char spec[32];
        snprintf(spec, sizeof spec, "full:%d", p);
        ar_topo_t *t = round_topo(spec);
        mp_t m = params(t, 1);
        double n = NEL * 4.0, s = n / p;
        ar_result_t r;
        run_algo(t, "1stage", NEL, AR_FP32, &r);
        EQ(r.time_s, m.launch + (p - 1) * cp(&m, n) + m.sig + crl(&m, p, n));
        EQ(r.terms_s[AR_TERM_SYNC], m.sig);
        EQ(r.terms_s[AR_TERM_REDUCE], (p - 1) * n / m.rg);
        run_algo(t, "oneshot", NEL, AR_FP32, &r);
        EQ(r.time_s, m.launch + (p - 1) * cp(&m, n) + m.sig + crl(&m, p, n));
        run_algo(t, "2stage", NEL, AR_FP32, &r);
        EQ(r.time_s, m.launch + (p - 1) * cp(&m, s) + m.sig + crl(&m, p, s) + (p - 1) * cp(&m, s) + m.sig);
        ar_topo_free(t);
    }
}
END_TEST

/* center_root: a tree of depth D whose root has kr - 1 children, one chunk of B
 * bytes. Leaves push their input to their parent's slot (cp), each level below the
 * root reduces IN + its child's slot into its parent's slot (crp) once the child's
 * signal arrived; the root reduces kr sources locally, signals its children, and
 * the result goes down by pulls (cpull), each level signalling the next; the last
 * pull's acknowledgement (S) ends the execution:
 *   T = launch + cp + (D-1)(S + crp) + S + crl(kr) + D (S + cpull) + S
 * where the deepest branch is the critical one. */
static double tree(const mp_t *m, int D, int kr, double B) {
    return cp(m, B) + (D - 1) * (m->sig + crp(m, B)) + m->sig + crl(m, kr, B) +
           D * (m->sig + cpull(m, B)) + m->sig;
}

/* On full:p and switch:p every rank has eccentricity 1: a star rooted at rank 0
 * (D = 1, kr = p). Through the switch every path is device-switch-device: two hops
 * of latency on every push and pull, a signal S + HOP between devices, and the root's
 * link into the switch carries all p - 1 pushes (and, out of it, all p - 1 pulls): the
 * last of them ends when that link direction has carried (p - 1) B. On ring_1d:p (p >= 3) the centre is rank 0 with
 * its two neighbours as children, depth floor(p/2). With the channel read bound
 * low (4 GB/s) and high (100 GB/s: pulls cost what pushes do). */
START_TEST(test_center_root_closed_form) {
    for (int lowread = 0; lowread < 2; lowread++)
        for (int p = 2; p <= 7; p++)
            for (int kind = 0; kind < 3; kind++) {
                if (kind == 2 && p < 3) continue;
                char spec[32];
                snprintf(spec, sizeof spec, "%s:%d", kind == 0 ? "full" : kind == 1 ? "switch" : "ring_1d", p);
                ar_topo_t *t = round_topo(spec);
                if (lowread) t->model->chan_inflight_bytes = 4000;
                mp_t m = params(t, 1);
                double n = NEL * 4.0, want;
                if (kind == 1) {
                    /* the root's local reduce has no hop; everything remote has two */
                    double local = crl(&m, p, n);
                    m.hop *= 2;
                    m.sig += t->model->links[0].lat_ns * NS;
                    const double shared = (p - 1) * n / m.bw;
                    const double push = m.ml + m.hop + fmax(shared, n * max4(1 / m.bw, 1 / m.cw, 1 / m.mr, 1 / m.mw)) + m.op;
                    const double pull = m.ml + m.hop + fmax(shared, n * max4(1 / m.bw, 1 / m.cr, 1 / m.mr, 1 / m.mw)) + m.op;
                    want = m.launch + push + m.sig + local + m.sig + pull + m.sig;
                } else {
                    want = m.launch + tree(&m, kind == 0 ? 1 : p / 2, kind == 0 ? p : 3, n);
                }
                ar_result_t r;
                run_algo(t, "center_root", NEL, AR_FP32, &r);
                ck_assert_msg(fabs(r.time_s - want) < 1e-9 * want, "%s (read bound %s): %.9g us, want %.9g us",
                              spec, lowread ? "low" : "high", r.time_s * 1e6, want * 1e6);
                ar_topo_free(t);
            }
}
END_TEST

/* naive on ring_1d:p: every rank copies its input to the host (ML + host latency,
 * n / host_link_gbps: no channel bound on the host link), signals every peer (the
 * farthest, floor(p/2) hops away, hears S + (hops-1) HOP later), reduces its input
 * with the p-1 host slots ((p-1) n over the host link, loaded two sources at a time: each
 * group after the first waits the host's latency over the memory's first) and signals
 * again. */
START_TEST(test_naive_closed_form) {
    for (int p = 2; p <= 7; p++) {
        char spec[32];
        snprintf(spec, sizeof spec, "ring_1d:%d", p);
        ar_topo_t *t = round_topo(spec);
        mp_t m = params(t, 1);
        double n = NEL * 4.0, far = m.sig + (p / 2 - 1) * m.hop;
        ck_assert(n / m.hg > n / m.mr + n / m.mw);
        ar_result_t r;
        run_algo(t, "naive", NEL, AR_FP32, &r);
        const double rounds = ((p + 1) / 2 - 1) * (m.hl - m.ml);
        EQ(r.time_s, m.launch + (m.ml + m.hl + n / m.hg) + far +
                         (m.ml + m.hl + rounds + (p - 1) * n / m.hg + (p - 1) * n / m.rg) + far);
        EQ(r.terms_s[AR_TERM_SYNC], 2 * far);
        ar_topo_free(t);
    }
}
END_TEST

/* Every algorithm on every topology (but innet where no switch adds), default options:
 * the walk finishes, the terms add up, every op runs once, and per-link bytes equal the
 * bytes the plan's remote COPY/REDUCE operands move (summed over the hops of each route:
 * non-neighbours are reached through other devices), and a pull's requests (pull_gbps). */
START_TEST(test_all_algorithms) {
    static const char *const topos[] = {"ring_1d:1", "ring_1d:5", "torus_2d:2x3", "torus_2d:4x4",
                                        "mesh_2d:3x3", "mesh_2d:2x3", "full:4", "switch:8",
                                        "hgx_h100_8", "h200_pair", "torus_2d:5x3"};
    int nrun = 0;
    for (size_t ti = 0; ti < sizeof topos / sizeof topos[0]; ti++) {
        ar_topo_t *t;
        ar_error_t err;
        ck_assert_msg(ar_topo_open(topos[ti], NULL, &t, &err) == AR_OK, "%s", err.message);
        for (const ar_algo_t *const *a = ar_algo_all(); *a; a++) {
            if (!ar_algo_computes(*a, AR_COLL_ALLREDUCE)) continue;
            ar_plan_t *p;
            int rc = ar_algo_build((*a)->name, t, 1 << 20, AR_BF16, NULL, &p, &err);
            if (rc == AR_EUNFIT && !strcmp((*a)->name, "innet")) continue; /* no switch that adds */
            ck_assert_msg(rc == AR_OK, "%s on %s: %s", (*a)->name, topos[ti], err.message);
            ar_result_t r;
            run(t, p, 1, &r);
            ck_assert_uint_eq(r.ops_executed, p->nops);
            ck_assert(r.time_s > t->model->launch_ns * NS);
            double want = 0;
            for (uint32_t i = 0; i < p->nops; i++) {
                const ar_op_t *op = &p->ops[i];
                if (op->code != AR_OP_COPY && op->code != AR_OP_REDUCE) continue;
                /* the executing rank: the channel that holds op i */
                int er = -1;
                for (int c = 0; c < p->nranks * p->nchannels && er < 0; c++)
                    if (i >= p->chans[c].first && i < p->chans[c].first + p->chans[c].nops)
                        er = c / p->nchannels;
                int ed = t->placement[er];
                for (uint32_t s = 0; s <= op->nsrc; s++) {
                    const ar_addr_t *ad = s < op->nsrc ? &p->srcs[op->src + s] : &op->dst;
                    if (ad->rank == AR_RANK_HOST) continue;
                    int d = t->placement[ad->rank];
                    if (d == ed) continue;
                    want += (double)op->n * 2 * ar_topo_hops(t, d, ed);
                    if (s == op->nsrc) continue;
                    /* a pull: its requests cross each hop the other way (pull_gbps) */
                    int links[64], dirs[64];
                    const int n = ar_topo_route(t, d, ed, links, dirs, 64);
                    for (int h = 0; h < n; h++)
                        want += (double)op->n * 2 *
                                ar_model_pull_request_share(&t->model->links[t->links[links[h]].kind]);
                }
            }
            double got = 0;
            for (int i = 0; i < r.nlinks; i++) {
                got += r.links[i].bytes;
                ck_assert(r.links[i].busy_s <= r.time_s);
            }
            EQ(got, want);
            ar_result_free(&r);
            ar_plan_free(p);
            nrun++;
        }
        ar_topo_free(t);
    }
    ck_assert_int_gt(nrun, 25);
}
END_TEST

/* ---- the physical bound (arsim/bound.h), by hand on the round model: links 10 GB/s
 * per direction and 200 ns, the host link 5 GB/s both ways together (2.5 each way, one
 * more path out of every device), HBM's shared bandwidth HBM_BW, launch 3 us ---- */

#define BS 1048576.0 /* bytes per rank */
#define LAT (200 * NS)
#define HOSTW 2.5e9 /* the host link, each way */

/* via_host 0: the devices' links; 1: the host's staging links too. Frees t. */
static void expect_bound(ar_topo_t *t, int via_host, double want_s, const char *binding, int hops) {
    ar_bound_t b;
    ar_error_t err;
    ar_error_clear(&err);
    ck_assert_int_eq(ar_bound(t, (uint64_t)BS, AR_MEM_HBM, via_host, &b, &err), AR_OK);
    ck_assert_msg(fabs(b.time_s - want_s) <= 1e-12 + 1e-9 * want_s, "%s: bound %.9g s, want %.9g", t->name, b.time_s,
                  want_s);
    ck_assert_str_eq(b.binding, binding);
    ck_assert_int_eq(b.max_hops, hops);
    ar_topo_free(t);
}

START_TEST(test_bound_by_hand) {
    /* ring_1d:8: two links a device (20 GB/s); every cut of a ring crosses two links */
    expect_bound(round_topo("ring_1d:8"), 0, LAUNCH + LAT + 2.0 * 7 / 8 * BS / 20e9, "injection", 4);
    /* staged through the host too: its link adds half its bandwidth each way */
    expect_bound(round_topo("ring_1d:8"), 1, LAUNCH + LAT + 2.0 * 7 / 8 * BS / (20e9 + HOSTW), "injection", 4);
    /* torus_2d:4x4: four links a device; 2 + 2 hops corner to centre */
    expect_bound(round_topo("torus_2d:4x4"), 0, LAUNCH + LAT + 2.0 * 15 / 16 * BS / 40e9, "injection", 4);
    expect_bound(round_topo("torus_2d:4x4"), 1, LAUNCH + LAT + 2.0 * 15 / 16 * BS / (40e9 + HOSTW), "injection", 4);
    /* mesh_2d:4x4: 3 + 3 hops corner to corner. Four corners have two links, eight edges
     * three, four inner devices four: 480 GB/s in all must carry 2 x 15 values per element,
     * longer than a corner's own S over 20 GB/s (and shorter than 2(15/16) S over a
     * corner's links, which a corner need not send: a line's ends send S, not 2(D-1)/D S) */
    expect_bound(round_topo("mesh_2d:4x4"), 0, LAUNCH + LAT + 2.0 * 15 * BS / 480e9, "injection", 6);
    /* mesh_2d:3x2: four corners of two links, two middles of three: 140 GB/s for 2 x 5
     * values per element; a corner's own S / 20 GB/s and the narrowest cut (two links) less */
    expect_bound(round_topo("mesh_2d:3x2"), 0, LAUNCH + LAT + 2.0 * 5 * BS / 140e9, "injection", 3);
    /* full:4: three links a device, one hop */
    expect_bound(round_topo("full:4"), 0, LAUNCH + LAT + 2.0 * 3 / 4 * BS / 30e9, "injection", 1);
    /* switch:4: one link a device into the switch, two hops */
    expect_bound(round_topo("switch:4"), 0, LAUNCH + LAT + 2.0 * 3 / 4 * BS / 10e9, "injection", 2);
    expect_bound(round_topo("switch:4"), 1, LAUNCH + LAT + 2.0 * 3 / 4 * BS / (10e9 + HOSTW), "injection", 2);
    /* 64 ranks a device on ring_1d:2 (its two links one bundle of 20 GB/s): memory binds */
    ar_topo_t *t = round_topo("ring_1d:2");
    ar_error_t err;
    ck_assert_int_eq(ar_topo_place_blocks(t, 128, &err), AR_OK);
    expect_bound(t, 0, LAUNCH + 2.0 * 64 * BS / HBM_BW, "memory", 1);
}
END_TEST

/* A reduce-scatter or all-gather is half an allreduce's traffic (arsim/bound.h). */
/* A plan of matmul-allreduce over (m, N, K) with rank r's COMPUTEs of its whole product
 * (fp32), one per channel in `chans` channels, each of m / chans rows. */
static ar_plan_t *compute_plan(int nranks, int chans, uint64_t m, uint64_t N, uint64_t K) {
    ar_plan_t *p = tu_plan_new(nranks, chans, m * N);
    p->coll = AR_COLL_MATMUL_ALLREDUCE;
    p->gemm = (ar_gemm_t){m, N, K};
    p->in_elems = m * K + K * N;
    const uint64_t rows = m / (uint64_t)chans;
    for (int r = 0; r < nranks; r++)
        for (int c = 0; c < chans; c++)
            ck_assert_int_eq(ar_plan_compute(p, r, c, ar_addr(r, AR_BUF_OUT, c * rows * N),
                                             ar_addr(r, AR_BUF_IN, c * rows * K), ar_addr(r, AR_BUF_IN, m * K), rows, N, K),
                             AR_OK);
    return p;
}

/* A COMPUTE: launch + gemm_overhead_ns + the larger of its multiply-adds at the matrix rate
 * and its bytes (a, b and dst once) at the memory's, on both timing backends; products on
 * one device share its matrix units. */
START_TEST(test_compute_time) {
    ar_topo_t *t = round_topo_with("gemm_tflops: 40\ngemm_fp32_tflops: 2\ngemm_overhead_ns: 500\n", "ring_1d:2", 2);
    const double OVER = 500 * NS, RATE = 2e12;
    static const struct { uint64_t m, N, K; int chans, compute_bound; } cases[] = {
        {256, 256, 256, 1, 1},  /* 33.6 M flops: 16.8 us; 786 KB: 1.2 us */
        {1024, 1024, 1, 1, 0},  /* 2.1 M flops: 1.05 us; 4.2 MB: 6.3 us */
        {256, 256, 256, 2, 1},  /* two channels' products on one device: the units shared */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const uint64_t m = cases[i].m, N = cases[i].N, K = cases[i].K;
        const double flops = 2.0 * m * N * K, bytes = 4.0 * ((double)m * K + (double)K * N + (double)m * N);
        const double comp = flops / RATE, mem = bytes / HBM_BW;
        ck_assert_int_eq(comp > mem, cases[i].compute_bound);
        for (int b = 0; b < 2; b++) {
            const char *be = b ? "sim" : "analytic";
            if (!ar_backend_find(be)) continue;
            ar_plan_t *p = compute_plan(2, cases[i].chans, m, N, K);
            ar_result_t r;
            ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
            tu_run_checked(be, t, p, &o, &r, 1e-9);
            /* each channel's share: its bytes alone, or half the units for half the flops */
            const double move = cases[i].chans == 1 ? fmax(comp, mem) : fmax(comp, mem / cases[i].chans);
            ck_assert_msg(fabs(r.time_s - (LAUNCH + OVER + move)) <= 1e-6 * r.time_s, "%s case %zu: %g us, want %g",
                          be, i, r.time_s * 1e6, (LAUNCH + OVER + move) * 1e6);
            EQ(r.terms_s[cases[i].compute_bound ? AR_TERM_COMPUTE : AR_TERM_MEMORY] +
                   (cases[i].compute_bound ? 0 : OVER), move + OVER);
            ar_result_free(&r);
            ar_plan_free(p);
        }
    }
    ar_topo_free(t);
    /* no rate: refused, naming the key */
    t = round_topo("ring_1d:2");
    ar_plan_t *p = compute_plan(2, 1, 8, 8, 8);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    ar_result_t r;
    ar_error_t e;
    ck_assert_int_ne(ar_backend_run("analytic", t, p, &o, &r, &e), AR_OK);
    ck_assert_msg(strstr(e.message, "gemm_tflops"), "%s", e.message);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* A 128 x 128 x 1024 fp32 product per partition on each of 2 ranks: channel 0 computes
 * two partitions, SIGNALling after each; channel 1 waits for each (lead_wait) or first
 * copies, then waits. */
static ar_plan_t *units_plan(int lead_wait) {
    ar_plan_t *p = tu_plan_new(2, 2, 2 * 128 * 128);
    p->coll = AR_COLL_MATMUL_ALLREDUCE;
    p->gemm = (ar_gemm_t){256, 128, 1024};
    p->in_elems = 256 * 1024 + 1024 * 128;
    for (int r = 0; r < 2; r++) {
        for (uint32_t i = 0; i < 2; i++) {
            ck_assert_int_eq(ar_plan_compute(p, r, 0, ar_addr(r, AR_BUF_SCRATCH, i * 128 * 128),
                                             ar_addr(r, AR_BUF_IN, i * 128 * 1024), ar_addr(r, AR_BUF_IN, 256 * 1024),
                                             128, 128, 1024),
                             AR_OK);
            ck_assert_int_eq(ar_plan_signal(p, r, 0, r, i), AR_OK);
        }
        if (!lead_wait) ck_assert_int_eq(ar_plan_copy(p, r, 1, ar_addr(r, AR_BUF_OUT, 0), ar_addr(r, AR_BUF_IN, 0), 8), AR_OK);
        for (uint32_t i = 0; i < 2; i++) {
            ck_assert_int_eq(ar_plan_wait(p, r, 1, i, 1), AR_OK);
            ck_assert_int_eq(ar_plan_copy(p, r, 1, ar_addr(r, AR_BUF_OUT, i * 128 * 128),
                                          ar_addr(r, AR_BUF_SCRATCH, i * 128 * 128), 128 * 128),
                             AR_OK);
        }
    }
    p->scratch_elems = 2 * 128 * 128;
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    return p;
}

/* gemm_units: a channel that computes nothing holds a unit, except before it starts: where
 * every such channel of a device begins by waiting for a product, the device's first
 * products have every unit. With a tile, a product takes whole waves of tiles. */
START_TEST(test_compute_units) {
    const double RATE = 2e12, K = 1024, FLOPS = 2.0 * 128 * 128 * K;
    static const struct { const char *tile; int lead_wait; double first, second; } cases[] = {
        /* no tile: the rate over the units left, 4 of 4 or 3 of 4 */
        {"", 1, 1.0, 4.0 / 3},
        {"", 0, 4.0 / 3, 4.0 / 3},
        /* 64 x 64 tiles: 4 of them, one wave on 4 units; on 3, the best of 2 waves of 64 x 64
         * (2 x 1/4 of the product at a quarter of the rate: 2.0), 3 of 32 x 64 or 64 x 32
         * (8 tiles: 1.5) and 6 of 32 x 32 (16 tiles: 1.5) */
        {"gemm_tile_rows: 64\ngemm_tile_cols: 64\n", 1, 1.0, 1.5},
        {"gemm_tile_rows: 64\ngemm_tile_cols: 64\n", 0, 1.5, 1.5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char extra[256];
        snprintf(extra, sizeof extra, "gemm_tflops: 40\ngemm_fp32_tflops: 2\ngemm_units: 4\n%s", cases[i].tile);
        ar_topo_t *t = round_topo_with(extra, "ring_1d:2", 2);
        ar_plan_t *p = units_plan(cases[i].lead_wait);
        ck_assert_int_eq(p->chans[1].after_product, (uint16_t)cases[i].lead_wait);
        ck_assert_int_eq(p->chans[0].after_product, 0);
        ck_assert_int_eq(ar_plan_products_first_alone(p, t->placement, 0), cases[i].lead_wait);
        int k = 0;
        for (uint32_t j = 0; j < p->chans[0].nops; j++) {
            const ar_op_t *op = &p->ops[p->chans[0].first + j];
            if (op->code != AR_OP_COMPUTE) continue;
            ck_assert_int_eq(ar_plan_first_compute(p, op), k == 0);
            ar_op_cost_t c;
            ck_assert_int_eq(ar_cost_op(t, p, op, 0, AR_MEM_HBM, &c, NULL, 0, NULL, NULL), AR_OK);
            const double want = FLOPS / RATE * (k == 0 ? cases[i].first : cases[i].second);
            ck_assert_msg(fabs(c.move_s - want) <= 1e-9 * want, "case %zu product %d: %g us, want %g", i, k,
                          c.move_s * 1e6, want * 1e6);
            k++;
        }
        ck_assert_int_eq(k, 2);
        ar_plan_free(p);
        ar_topo_free(t);
    }
}
END_TEST

/* Topology spec on a shipped model (model/NAME.yaml). */
static ar_topo_t *shipped_topo(const char *model, const char *spec) {
    ar_model_t *m;
    ar_topo_t *t;
    ar_error_t err;
    ck_assert_msg(ar_model_load(model, &m, &err) == AR_OK, "%s", err.message);
    ck_assert_msg(ar_topo_build(spec, m, &t, &err) == AR_OK, "%s", err.message);
    return t;
}

/* Stages: channels that wait for products at the same points split there (units_plan with its
 * leading wait: 2 stages, ops [wait, copy | wait, copy]); without the leading wait, or with a
 * stage's wait met only by a later stage, the plan is one stage. A fused plan of P partitions
 * runs in P stages. */
START_TEST(test_plan_stages) {
    for (int lead = 0; lead <= 1; lead++) {
        ar_plan_t *p = units_plan(lead);
        uint32_t *stage = calloc(p->nops, sizeof *stage);
        ck_assert_int_eq(ar_plan_stages(p, stage), lead ? 2 : 1);
        for (int r = 0; r < 2; r++) {
            const ar_chan_t *ch = ar_plan_chan(p, r, 1);
            for (uint32_t j = 0; j < ch->nops; j++) ck_assert_uint_eq(stage[ch->first + j], lead ? j / 2 : 0);
        }
        free(stage);
        ar_plan_free(p);
    }
    /* channel 1 of rank 0 waits in its first stage for channel 1 of rank 1's second */
    ar_plan_t *p = tu_plan_new(2, 2, 16);
    for (int r = 0; r < 2; r++) {
        for (uint32_t i = 0; i < 2; i++) {
            ck_assert_int_eq(ar_plan_compute(p, r, 0, ar_addr(r, AR_BUF_SCRATCH, i * 4), ar_addr(r, AR_BUF_IN, i * 4),
                                             ar_addr(r, AR_BUF_IN, 8), 4, 1, 1),
                             AR_OK);
            ck_assert_int_eq(ar_plan_signal(p, r, 0, r, i), AR_OK);
        }
        for (uint32_t i = 0; i < 2; i++) {
            ck_assert_int_eq(ar_plan_wait(p, r, 1, i, 1), AR_OK);
            if (r == 0 && i == 0) ck_assert_int_eq(ar_plan_wait(p, r, 1, 2, 1), AR_OK);
            if (r == 1 && i == 1) ck_assert_int_eq(ar_plan_signal(p, r, 1, 0, 2), AR_OK);
        }
    }
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    uint32_t *stage = calloc(p->nops, sizeof *stage);
    ck_assert_int_eq(ar_plan_stages(p, stage), 1);
    free(stage);
    ar_plan_free(p);

    ar_topo_t *t = shipped_topo("h100_sxm", "full:2");
    ar_error_t err;
    static const char *const algos[] = {"ring", "1stage", "2stage"};
    for (size_t a = 0; a < sizeof algos / sizeof *algos; a++)
        for (int parts = 1; parts <= 4; parts *= 2) {
            ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
            o.coll = AR_COLL_MATMUL_ALLREDUCE;
            o.gemm = (ar_gemm_t){512, 256, 128};
            o.partitions = parts;
            o.channels = 4;
            ck_assert_msg(ar_algo_build(algos[a], t, 512 * 256, AR_BF16, &o, &p, &err) == AR_OK, "%s", err.message);
            stage = calloc(p->nops, sizeof *stage);
            ck_assert_int_eq(ar_plan_stages(p, stage), parts > 1 ? parts : 1);
            free(stage);
            ar_plan_free(p);
        }
    ar_topo_free(t);
}
END_TEST

/* A fused op's bound: its allreduce's, or its product's at the matrix rate (q_d ranks of a
 * device sharing its units), whichever is larger. */
START_TEST(test_bound_fused) {
    ar_topo_t *t = round_topo_with("gemm_tflops: 40\ngemm_fp32_tflops: 2\n", "ring_1d:8", 8);
    ar_bound_t a, b;
    ar_error_t err;
    const ar_gemm_t g = {512, 256, 1024}; /* 268 M flops: 6.7 us at bf16, 134 us at fp32 */
    const uint64_t S = 512 * 256 * 2;
    ck_assert_int_eq(ar_bound_coll(t, AR_COLL_ALLREDUCE, S, AR_MEM_HBM, 0, &a, &err), AR_OK);
    ck_assert_int_eq(ar_bound_fused(t, AR_COLL_MATMUL_ALLREDUCE, g, AR_BF16, S, AR_MEM_HBM, 0, &b, &err), AR_OK);
    EQ(b.compute_s, 2.0 * 512 * 256 * 1024 / 40e12);
    EQ(b.time_s, fmax(a.time_s, LAUNCH + b.compute_s));
    ck_assert_str_eq(b.binding, a.time_s > LAUNCH + b.compute_s ? a.binding : "compute");
    ck_assert_int_eq(ar_bound_fused(t, AR_COLL_MATMUL_ALLREDUCE, g, AR_FP32, S * 2, AR_MEM_HBM, 0, &b, &err), AR_OK);
    EQ(b.time_s, LAUNCH + 2.0 * 512 * 256 * 1024 / 2e12);
    ck_assert_str_eq(b.binding, "compute");
    ck_assert_int_eq(ar_topo_place_blocks(t, 16, &err), AR_OK); /* two ranks a device share its units */
    ck_assert_int_eq(ar_bound_fused(t, AR_COLL_MATMUL_ALLREDUCE, g, AR_FP32, S * 2, AR_MEM_HBM, 0, &b, &err), AR_OK);
    EQ(b.compute_s, 2 * 2.0 * 512 * 256 * 1024 / 2e12);
    /* a plain collective: no product */
    ck_assert_int_eq(ar_bound_fused(t, AR_COLL_ALLREDUCE, g, AR_FP32, S, AR_MEM_HBM, 0, &b, &err), AR_OK);
    EQ(b.compute_s, 0.0);
    ar_topo_free(t);
}
END_TEST

START_TEST(test_bound_collectives) {
    for (int coll = AR_COLL_REDUCESCATTER; coll <= AR_COLL_ALLGATHER; coll++) {
        ar_bound_t b;
        ar_error_t err;
        /* ring_1d:8: (D-1) S over 160 GB/s in all, the same as 7/8 S over a device's 20 */
        ar_topo_t *t = round_topo("ring_1d:8");
        ck_assert_int_eq(ar_bound_coll(t, (ar_coll_t)coll, (uint64_t)BS, AR_MEM_HBM, 0, &b, &err), AR_OK);
        EQ(b.injection_s, LAT + 7.0 / 8 * BS / 20e9);
        EQ(b.cut_s, LAT + BS / 2 / 20e9);
        /* a reduce-scatter reads its vector and writes its shard, an all-gather the reverse */
        const double rd = coll == AR_COLL_REDUCESCATTER ? 1 : 1.0 / 8, wr = coll == AR_COLL_REDUCESCATTER ? 1.0 / 8 : 1;
        EQ(b.memory_s, HBM_S(rd * BS, wr * BS));
        EQ(b.time_s, LAUNCH + LAT + 7.0 / 8 * BS / 20e9);
        ar_topo_free(t);
        /* mesh_2d:3x2: a corner's 5/6 S over its 20 GB/s, more than 5 S over 140 in all
         * (where an allreduce's 2 x 5 S over 140 is more than a corner's S over 20) */
        t = round_topo("mesh_2d:3x2");
        ck_assert_int_eq(ar_bound_coll(t, (ar_coll_t)coll, (uint64_t)BS, AR_MEM_HBM, 0, &b, &err), AR_OK);
        EQ(b.injection_s, LAT + 5.0 / 6 * BS / 20e9);
        ar_topo_free(t);
        /* switches that add: a reduce-scatter's partial sums meet inside; an all-gather's
         * shards still cross to every device */
        t = round_topo_with("switch_reduce: 1\n", "switch:4", 4);
        ck_assert_int_eq(ar_bound_coll(t, (ar_coll_t)coll, (uint64_t)BS, AR_MEM_HBM, 0, &b, &err), AR_OK);
        EQ(b.injection_s, LAT + 3.0 / 4 * BS / 10e9);
        ar_topo_free(t);
        /* 64 ranks a device on ring_1d:2: memory binds, each rank its vector and its shard */
        t = round_topo("ring_1d:2");
        ck_assert_int_eq(ar_topo_place_blocks(t, 128, &err), AR_OK);
        ck_assert_int_eq(ar_bound_coll(t, (ar_coll_t)coll, (uint64_t)BS, AR_MEM_HBM, 0, &b, &err), AR_OK);
        const double rd2 = coll == AR_COLL_REDUCESCATTER ? 1 : 1.0 / 128, wr2 = coll == AR_COLL_REDUCESCATTER ? 1.0 / 128 : 1;
        EQ(b.time_s, LAUNCH + HBM_S(64 * rd2 * BS, 64 * wr2 * BS));
        ck_assert_str_eq(b.binding, "memory");
        ar_topo_free(t);
    }
}
END_TEST

/* Two fully linked groups of six joined by one link: the cut between them binds. */
START_TEST(test_bound_cut) {
    char *yaml = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&yaml, &len);
    fprintf(f, "name: bridged\ndevices: [a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5]\nlinks:\n");
    for (int g = 0; g < 2; g++)
        for (int i = 0; i < 6; i++)
            for (int j = i + 1; j < 6; j++) fprintf(f, "  - {a: %c%d, b: %c%d}\n", "ab"[g], i, "ab"[g], j);
    fprintf(f, "  - {a: a0, b: b0}\n");
    fclose(f);
    ar_model_t *m;
    ar_topo_t *t;
    ar_error_t err;
    ck_assert_msg(ar_model_load_string(ROUND_MODEL, "round", &m, &err) == AR_OK, "%s", err.message);
    ck_assert_msg(ar_topo_load_string(yaml, "bridged", NULL, &t, &err) == AR_OK, "%s", err.message);
    free(yaml);
    ar_model_free(t->model);
    t->model = m;
    /* cut over the devices' links: the bridge, S / 10 GB/s; the narrowest device (five
     * links) would give 2(11/12) S / 50 GB/s */
    ar_bound_t b;
    ck_assert_int_eq(ar_bound(t, (uint64_t)BS, AR_MEM_HBM, 0, &b, &err), AR_OK);
    ck_assert_double_eq_tol(b.cut_gbps, 10.0, 1e-9);
    ck_assert_double_eq_tol(b.inject_gbps, 50.0, 1e-9);
    /* staged through the host too: the bridge and the host links of the six devices on
     * the host's far side, 10 + 6 x 2.5 GB/s: S / 25 GB/s; the narrowest device 52.5 */
    ck_assert_int_eq(ar_bound(t, (uint64_t)BS, AR_MEM_HBM, 1, &b, &err), AR_OK);
    ck_assert_double_eq_tol(b.cut_gbps, 25.0, 1e-9);
    ck_assert_double_eq_tol(b.inject_gbps, 52.5, 1e-9);
    expect_bound(t, 1, LAUNCH + LAT + BS / 25e9, "cut", 3);
}
END_TEST

/* One case on the analytic backend at the given channels and chunk (0: the defaults); the
 * row's time, channels, chunk and algo (copied into label). */
static double case_run_sym(ar_topo_t *t, const char *algo, uint64_t count, int channels, uint64_t chunk,
                           ar_symmetry_t symmetry, int *plan_ch, uint64_t *plan_chunk, char *label, size_t len) {
    ar_case_t c = {.backend = "analytic", .topo = t, .topology = t->name, .algo = algo, .count = count,
                   .dtype = AR_BF16, .algo_opts = AR_ALGO_OPTS_DEFAULT, .run = AR_RUN_OPTS_DEFAULT, .verify = 0};
    c.algo_opts.channels = channels;
    c.algo_opts.chunk_bytes = chunk;
    c.algo_opts.symmetry = symmetry;
    ar_case_out_t co;
    ar_error_t err;
    ar_error_clear(&err);
    if (ar_case_run(&c, &co, &err) != AR_OK) {
        ar_case_out_free(&co);
        return INFINITY;
    }
    const double s = co.res.time_s;
    if (plan_ch) *plan_ch = co.row.channels;
    if (plan_chunk) *plan_chunk = co.row.chunk_bytes;
    if (label) snprintf(label, len, "%s", co.row.algo);
    ar_case_out_free(&co);
    return s;
}

static double case_run_at(ar_topo_t *t, const char *algo, uint64_t count, int channels, uint64_t chunk, int *plan_ch,
                          uint64_t *plan_chunk, char *label, size_t len) {
    return case_run_sym(t, algo, count, channels, chunk, AR_SYMMETRY_OFF, plan_ch, plan_chunk, label, len);
}

static double case_time(ar_topo_t *t, const char *algo, uint64_t count, int channels, int *plan_ch, char *label,
                        size_t len) {
    return case_run_at(t, algo, count, channels, 0, plan_ch, NULL, label, len);
}

/* Links of 100 GB/s and 1 us whose flag costs what a hop costs, everything else next to
 * free: the textbook ring. */
static const char *const WIRE_MODEL =
    "name: wire\n"
    "clock_ghz: 1\n"
    "memory:\n"
    "  tcm: {present: false}\n"
    "  sram: {present: false}\n"
    "  hbm: {capacity_bytes: 1e12, read_gbps: 1e7, write_gbps: 1e7, lat_ns: 0.001}\n"
    "links:\n"
    "  - {name: l, bw_gbps: 100, lat_ns: 1000}\n"
    "reduce_gbps: 1e7\n"
    "chan_inflight_bytes: 1e9\n"
    "chan_read_lat_ns: 0.001\n"
    "chan_write_gbps: 1e7\n"
    "signal_lat_ns: 1000\n"
    "launch_ns: 0.001\n"
    "host_link_gbps: 5\n"
    "host_link_lat_ns: 2000\n";

/* One latency per message where links deliver in order (link_ordered): ring on ring_1d:N,
 * one channel, one segment per rank, is the closed form 2(N-1) (S/N/B + lat) within 1%;
 * without it every step pays the flag's crossing too, 2(N-1) lat more. */
START_TEST(test_ordered_links_closed_form) {
    for (int N = 4; N <= 8; N += 4)
        for (int ordered = 0; ordered < 2; ordered++) {
            char yaml[1024];
            snprintf(yaml, sizeof yaml, "%slink_ordered: %d\n", WIRE_MODEL, ordered);
            ar_model_t *m;
            ar_topo_t *t;
            ar_error_t err;
            char spec[32];
            snprintf(spec, sizeof spec, "ring_1d:%d", N);
            ck_assert_msg(ar_model_load_string(yaml, "wire", &m, &err) == AR_OK, "%s", err.message);
            ck_assert_msg(ar_topo_build(spec, m, &t, &err) == AR_OK, "%s", err.message);
            const uint64_t S = 8u << 20, count = S / 2; /* bf16 */
            ar_case_t c = {.backend = "analytic", .topo = t, .topology = spec, .algo = "ring", .count = count,
                           .dtype = AR_BF16, .algo_opts = AR_ALGO_OPTS_DEFAULT, .run = AR_RUN_OPTS_DEFAULT};
            c.algo_opts.channels = 1;
            c.algo_opts.chunk_bytes = S / (uint64_t)N; /* one segment per rank: one group */
            ar_case_out_t co;
            ck_assert_msg(ar_case_run(&c, &co, &err) == AR_OK, "%s", err.message);
            const double lat = 1000e-9, closed = 2.0 * (N - 1) * ((double)S / N / 100e9 + lat);
            const double want = ordered ? closed : closed + 2.0 * (N - 1) * lat;
            ck_assert_msg(fabs(co.res.time_s - want) <= 0.01 * want, "N %d, ordered %d: %g s, want %g (closed form %g)",
                          N, ordered, co.res.time_s, want, closed);
            ar_case_out_free(&co);
            ar_topo_free(t);
        }
}
END_TEST

/* Defaults on a model backend. Channels: at the algorithm's own chunk, the fewest of least
 * predicted time over the powers of two up to the algorithm's most, or twice them where those
 * predict less at a chunk of their own. Then the chunk: no chunk of the ladder (16 MiB down
 * to 16 KiB by fours) at the fewest channels beats the chosen, and the row's chunk is never
 * 0. */
START_TEST(test_default_channels) {
    ar_topo_t *t = round_topo("torus_2d:4x4");
    const char *algos[] = {"ring", "torus2d", "center_root", "mesh2d"};
    const uint64_t count = 1 << 21;
    for (size_t i = 0; i < sizeof algos / sizeof algos[0]; i++) {
        const ar_algo_t *a = ar_algo_find(algos[i]);
        int ch;
        uint64_t chunk;
        const double def = case_run_at(t, algos[i], count, 0, 0, &ch, &chunk, NULL, 0);
        ck_assert(isfinite(def));
        ck_assert_uint_gt(chunk, 0);
        /* the channels, at the own chunk (asked with --channels and a chunk, so no chunk search) */
        ar_algo_opts_t own = AR_ALGO_OPTS_DEFAULT;
        double tk[16], least = INFINITY;
        int nk = 0;
        for (int k = 1; k <= a->max_channels; k *= 2, nk++) {
            own.channels = k;
            ar_case_t c = {.backend = "analytic", .topo = t, .topology = t->name, .algo = algos[i], .count = count,
                           .dtype = AR_BF16, .algo_opts = own, .run = AR_RUN_OPTS_DEFAULT, .verify = 0,
                           .own_defaults = 1};
            ar_case_out_t co;
            ar_error_t err;
            tk[nk] = ar_case_run(&c, &co, &err) == AR_OK ? co.res.time_s : INFINITY;
            ar_case_out_free(&co);
            least = fmin(least, tk[nk]);
        }
        int fewest = 0;
        for (int k = 1, j = 0; j < nk; k *= 2, j++)
            if (!fewest && tk[j] == least) fewest = k;
        int ch_fewest;
        case_time(t, algos[i], count, fewest, &ch_fewest, NULL, 0);
        ck_assert_msg(ch == ch_fewest || ch == 2 * ch_fewest, "%s: %d channels, want %d or %d", algos[i], ch,
                      ch_fewest, 2 * ch_fewest);
        /* the chunk, at the fewest channels (twice them are taken only where faster still) */
        for (uint64_t c = (uint64_t)16 << 20; c >= (uint64_t)16 << 10; c /= 4) {
            const double s = case_run_at(t, algos[i], count, fewest, c, NULL, NULL, NULL, 0);
            ck_assert_msg(def <= s, "%s: default %g s, chunk %llu %g s", algos[i], def, (unsigned long long)c, s);
        }
    }
    ar_topo_free(t);
}
END_TEST

/* A first plan too large to time (over AR_CASE_TUNE_MAX_OPS / 2 ops: ring on 256 ranks at its
 * own chunk, 784640 ops) is not timed: the lanes are searched at one piece a lane, the plans
 * of fewest ops, and the row is the fastest of those (the fewest lanes within the flat), whose
 * time is what the run reports. One lane in one piece, all the search had before, is slower:
 * a ring of one lane leaves every link's other direction idle. */
START_TEST(test_default_untimed) {
    ar_topo_t *t = round_topo("ring_1d:256");
    const uint64_t count = (uint64_t)2 << 20; /* 4 MiB of bf16: 16 KiB a rank */
    ar_case_t c = {.backend = "analytic", .topo = t, .topology = t->name, .algo = "ring", .count = count,
                   .dtype = AR_BF16, .algo_opts = AR_ALGO_OPTS_DEFAULT, .run = AR_RUN_OPTS_DEFAULT, .verify = 0};
    ar_case_out_t co;
    ar_error_t err;
    ar_error_clear(&err);
    ck_assert_int_eq(ar_case_plan(&c, &co, &err), AR_OK);
    const int lanes = co.row.channels;
    ck_assert_int_gt(lanes, 1);
    ck_assert_uint_eq(co.row.chunk_bytes, 16384 / (uint64_t)lanes); /* one piece a lane */
    ar_case_out_free(&co);
    ar_case_t own = c;
    own.own_defaults = 1;
    own.algo_opts.channels = 1;
    ck_assert_int_eq(ar_case_plan(&own, &co, &err), AR_OK);
    ck_assert_uint_gt(co.plan->nops, (uint64_t)AR_CASE_TUNE_MAX_OPS / 2);
    ar_case_out_free(&co);
    const double def = case_run_at(t, "ring", count, 0, 0, NULL, NULL, NULL, 0);
    ck_assert_double_eq(def, case_run_at(t, "ring", count, lanes, count * 2, NULL, NULL, NULL, 0));
    for (int fewer = lanes / 2; fewer >= 1; fewer /= 2) {
        const double s = case_run_at(t, "ring", count, fewer, count * 2, NULL, NULL, NULL, 0);
        ck_assert_msg(def < s, "%d lanes %g s, %d lanes %g s", lanes, def, fewer, s);
    }
    ar_topo_free(t);
}
END_TEST

/* A tree pipelines by its pieces alone: where its first plan is too large to time (center_root
 * on torus_2d:64x64 at 64 MB), the defaults time the chunk ladder's plans of at most
 * AR_CASE_TUNE_PLAN_OPS ops instead of taking one piece a lane (180 ms on the shipped model
 * there, 0.2% of the bound, against 24 ms in 8 MB pieces); the time the defaults report for it
 * (auto compares it) is the run's. */
START_TEST(test_default_untimed_tree) {
    ar_topo_t *t = round_topo("torus_2d:64x64");
    const uint64_t count = (uint64_t)32 << 20; /* 64 MiB of bf16 */
    int ch;
    uint64_t chunk;
    const double def = case_run_at(t, "center_root", count, 0, 0, &ch, &chunk, NULL, 0);
    const double whole = case_run_at(t, "center_root", count, 1, 2 * count, NULL, NULL, NULL, 0);
    ck_assert_msg(chunk < 2 * count && def < whole / 4, "chunk %llu: %g s against %g s in one piece",
                  (unsigned long long)chunk, def, whole);
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT, d;
    double s;
    ar_error_t err;
    ck_assert_int_eq(ar_case_defaults(t, "center_root", count, AR_BF16, &o, AR_MEM_HBM, "analytic", &d, &s, &err),
                     AR_OK);
    ck_assert_double_eq_tol(s, def, 1e-9 * def);
    ar_topo_free(t);
}
END_TEST

/* Where every rank's plan of one channel is too large to time but rank 0's ops stand for every
 * rank's, the search times plans of one rank: 2stage on switch:64 at 64 MB (h200_sxm) takes its
 * lanes from the ladder (64: 483 us), where the plan of fewest ops it took before, one channel,
 * predicted 4823 us; within 5% of the best of 64 and 128 lanes asked. */
START_TEST(test_default_rank0_search) {
    ar_topo_t *t = tu_topo_open("switch:64", "h200_sxm");
    const uint64_t count = (uint64_t)32 << 20; /* 64 MiB of bf16 */
    int ch = 0;
    /* rank 0's ops for all where they may stand for them, as `arsim run` has it */
    const ar_symmetry_t sym = AR_SYMMETRY_AUTO;
    const double def = case_run_sym(t, "2stage", count, 0, 0, sym, &ch, NULL, NULL, 0);
    const double one = case_run_sym(t, "2stage", count, 1, 0, sym, NULL, NULL, NULL, 0);
    const double best = fmin(case_run_sym(t, "2stage", count, 64, 0, sym, NULL, NULL, NULL, 0),
                             case_run_sym(t, "2stage", count, 128, 0, sym, NULL, NULL, NULL, 0));
    ck_assert_msg(ch >= 32 && def <= 1.05 * best && def < one / 4, "%d lanes: %g s, best asked %g s, one lane %g s",
                  ch, def, best, one);
    ar_topo_free(t);
}
END_TEST

/* Where even rank 0's first plan is too large to time at the search's size (2stage on
 * torus_2d:32x32 at 64 MB, its own chunk), the defaults time the channels at one piece a lane,
 * the plans of fewest ops, rather than taking one channel: 11969 us at 4 channels on
 * accel_tcm, where one channel in one piece predicts 14882 and two 12960. */
START_TEST(test_default_fewest_ops_lanes) {
    ar_topo_t *t = tu_topo_open("torus_2d:32x32", "accel_tcm");
    const uint64_t count = (uint64_t)32 << 20; /* 64 MiB of bf16 */
    const uint64_t whole = 2 * count;          /* one piece a lane */
    int ch = 0;
    const ar_symmetry_t sym = AR_SYMMETRY_AUTO;
    const double def = case_run_sym(t, "2stage", count, 0, 0, sym, &ch, NULL, NULL, 0);
    const double one = case_run_sym(t, "2stage", count, 1, whole, sym, NULL, NULL, NULL, 0);
    const double two = case_run_sym(t, "2stage", count, 2, whole, sym, NULL, NULL, NULL, 0);
    ck_assert_msg(ch > 2 && def < two && def < 0.9 * one, "%d lanes: %g s; one piece a lane on 1: %g s, on 2: %g s",
                  ch, def, one, two);
    ar_topo_free(t);
}
END_TEST

/* Where the search of the defaults times its first count alone (one channel at the
 * algorithm's own chunk, 377 K ops, and two would pass the 1 M it times), the counts are
 * searched at one piece a lane, as for a first plan past half: torus2d on torus_2d:16x16 at
 * 64 MB took 2 channels and 2 MB chunks, 1202 us; now 64 channels, 365 us (bound 336). */
START_TEST(test_default_one_count_searched) {
    ar_topo_t *t = tu_topo_open("torus_2d:16x16", "accel_tcm");
    const uint64_t count = (uint64_t)32 << 20; /* 64 MiB of bf16 */
    int ch = 0;
    const ar_symmetry_t sym = AR_SYMMETRY_AUTO;
    const double def = case_run_sym(t, "torus2d", count, 0, 0, sym, &ch, NULL, NULL, 0);
    const double two = case_run_sym(t, "torus2d", count, 2, 0, sym, NULL, NULL, NULL, 0);
    ck_assert_msg(ch >= 16 && def < 0.5 * two, "%d lanes: %g s; 2 lanes at the own chunk: %g s", ch, def, two);
    ar_topo_free(t);
}
END_TEST

/* A plan the defaults would time whose every rank's ops pass the cap is timed as rank 0's
 * where that stands for all: 2stage on full:32 at 16 MB (h200_sxm), whose channel search
 * stopped at 2 channels, took 4, 628 us, where 32 channels at the algorithm's own chunk
 * predict 158. */
START_TEST(test_default_ladder_rank0_on) {
    ar_topo_t *t = tu_topo_open("full:32", NULL);
    const uint64_t count = (uint64_t)8 << 20; /* 16 MiB of bf16 */
    int ch = 0;
    const ar_symmetry_t sym = AR_SYMMETRY_AUTO;
    const double def = case_run_sym(t, "2stage", count, 0, 0, sym, &ch, NULL, NULL, 0);
    const double two = case_run_sym(t, "2stage", count, 2, 0, sym, NULL, NULL, NULL, 0);
    const double many = case_run_sym(t, "2stage", count, 32, 0, sym, NULL, NULL, NULL, 0);
    ck_assert_msg(ch >= 16 && def <= 1.01 * many && def < 0.2 * two, "%d lanes: %g s; 2 lanes %g s, 32 lanes %g s", ch,
                  def, two, many);
    ar_topo_free(t);
}
END_TEST

/* A plan of rank 0's ops whose peers sit far round a ring costs its backend every hop of
 * every route: 2stage on ring_1d:2048 at 1 MB, 12 K ops and 6 M hops past the first. The
 * defaults time no such plan past the search's cap (it would cost a run of millions of ops
 * each): one channel, within 5% of two and four lanes asked. */
START_TEST(test_default_far_hops) {
    ar_topo_t *t = tu_topo_open("ring_1d:2048", NULL);
    const uint64_t count = (uint64_t)1 << 19; /* 1 MiB of bf16 */
    int ch = 0;
    const ar_symmetry_t sym = AR_SYMMETRY_AUTO;
    const double def = case_run_sym(t, "2stage", count, 0, 0, sym, &ch, NULL, NULL, 0);
    const double best = fmin(case_run_sym(t, "2stage", count, 2, 0, sym, NULL, NULL, NULL, 0),
                             case_run_sym(t, "2stage", count, 4, 0, sym, NULL, NULL, NULL, 0));
    ck_assert_msg(ch == 1 && def <= 1.05 * best, "%d lanes: %g s, best of 2 and 4 lanes %g s", ch, def, best);
    ar_topo_free(t);
}
END_TEST

/* On hardware a chunk other than the algorithm's own is taken only with no more ops than
 * the own plan, and for a predicted gain of AR_CASE_TUNE_HW_GAIN: h200_sxm on full:2, ring
 * at its default channels keeps its own chunk at 512 MB (32 KB chunks, predicted 5.8% faster,
 * measured 17% slower) and takes a larger one at 4 MB (16 KB against its 8 KB: measured
 * 24% faster). Needs the cuda backend built (no GPU: only its rules are asked). */
START_TEST(test_default_hardware_chunk) {
    if (!ar_backend_find("cuda")) return;
    ar_error_t err;
    ar_topo_t *t = shipped_topo("h200_sxm", "full:2");
    static const struct { uint64_t bytes; int own; } cases[] = {{(uint64_t)4 << 20, 0}, {(uint64_t)512 << 20, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT, out, own;
        const uint64_t count = cases[i].bytes / 2;
        ck_assert_int_eq(ar_case_defaults(t, "ring", count, AR_BF16, &o, AR_MEM_HBM, "cuda", &out, NULL, &err), AR_OK);
        ck_assert_msg((out.chunk_bytes == 0) == cases[i].own, "%llu B: chunk %llu", (unsigned long long)cases[i].bytes,
                      (unsigned long long)out.chunk_bytes);
        own = out;
        own.chunk_bytes = 0;
        ar_plan_t *p = NULL, *q = NULL;
        ck_assert_int_eq(ar_algo_build("ring", t, count, AR_BF16, &own, &p, &err), AR_OK);
        ck_assert_int_eq(ar_algo_build("ring", t, count, AR_BF16, &out, &q, &err), AR_OK);
        ck_assert_uint_le(q->nops, p->nops);
        ar_plan_free(p);
        ar_plan_free(q);
    }
    ar_topo_free(t);
}
END_TEST

/* The channels hardware takes (the cuda backend's rules; no GPU is needed to ask them), ranks
 * sharing one H100: the channels, and the model's time of the plan chosen. */
static int hardware_channels(ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt, int channels, double *s) {
    ar_error_t err;
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT, out;
    o.channels = channels;
    ck_assert_msg(ar_case_defaults(t, algo, count, dt, &o, AR_MEM_HBM, "cuda", &out, s, &err) == AR_OK, "%s",
                  err.message);
    return out.channels;
}

/* On hardware the channels of a count are those of its whole 16-byte vectors: an odd count
 * takes its aligned neighbour's (2stage, 2 ranks of one H100, fp32 at 65537 took 64 where
 * 65540 took 32, measured 1.11x). Where the fewest channels are within the model's error of
 * the best and the plan is bound by its latencies, they are taken (ring and 2stage on 4 ranks
 * at 1001 and 1008 elements: one, where 4 to 8 ran up to 1.14x slower); where bytes cost but
 * the model is flat in channels (naive at 32 KB, the host link), not. */
START_TEST(test_default_hardware_channels) {
    if (!ar_backend_find("cuda")) return;
    ar_error_t err;
    static const struct { int ranks; const char *algo; ar_dtype_t dt; uint64_t odd, aligned; } pairs[] = {
        {2, "2stage", AR_FP32, 65537, 65540}, {2, "1stage", AR_FP32, 1000003, 1000004},
        {4, "ring", AR_BF16, 1001, 1008},     {4, "2stage", AR_BF16, 1001, 1008},
        {8, "torus2d", AR_BF16, 65537, 65544}, {8, "1stage", AR_FP32, 16777259, 16777260},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        ar_topo_t *t = shipped_topo("h100_sxm", "full:1");
        ck_assert_int_eq(ar_topo_place_blocks(t, pairs[i].ranks, &err), AR_OK);
        double s;
        const int odd = hardware_channels(t, pairs[i].algo, pairs[i].odd, pairs[i].dt, 0, &s);
        const int aligned = hardware_channels(t, pairs[i].algo, pairs[i].aligned, pairs[i].dt, 0, &s);
        ck_assert_msg(odd == aligned, "%s, %d ranks: %d channels at %llu, %d at %llu", pairs[i].algo, pairs[i].ranks,
                      odd, (unsigned long long)pairs[i].odd, aligned, (unsigned long long)pairs[i].aligned);
        if (pairs[i].odd == 1001) ck_assert_int_eq(odd, 1);
        ar_topo_free(t);
    }
    ar_topo_t *t = shipped_topo("h100_sxm", "full:1");
    ck_assert_int_eq(ar_topo_place_blocks(t, 4, &err), AR_OK);
    double s1, s;
    hardware_channels(t, "naive", 16384, AR_BF16, 1, &s1);
    const int ch = hardware_channels(t, "naive", 16384, AR_BF16, 0, &s);
    ck_assert_msg(ch > 1 && s <= s1 * (1 + AR_CASE_TUNE_HW_GAIN), "naive at 32 KB: %d channels, %g s (one: %g s)", ch, s,
                  s1);
    ar_topo_free(t);
}
END_TEST

/* Past AR_CASE_TUNE_MAX_BYTES, where the channels were found, hardware takes twice or half
 * of them where the model has them AR_CASE_TUNE_HW_GAIN faster at the count itself (1stage on
 * 8 ranks of one H100 at 32 MB, 2stage on 4 at 128 MB); none of the three then predicts that
 * much less than the one taken. */
START_TEST(test_default_hardware_past_search) {
    if (!ar_backend_find("cuda")) return;
    ar_error_t err;
    static const struct { const char *algo; int ranks; uint64_t count; } cases[] = {{"1stage", 8, (uint64_t)16 << 20},
                                                                                     {"2stage", 4, (uint64_t)64 << 20}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ar_topo_t *t = shipped_topo("h100_sxm", "full:1");
        ck_assert_int_eq(ar_topo_place_blocks(t, cases[i].ranks, &err), AR_OK);
        double s, found_s, at_16m;
        const int ch = hardware_channels(t, cases[i].algo, cases[i].count, AR_BF16, 0, &s);
        const int found = hardware_channels(t, cases[i].algo, (uint64_t)8 << 20, AR_BF16, 0, &at_16m);
        hardware_channels(t, cases[i].algo, cases[i].count, AR_BF16, found, &found_s);
        ck_assert_msg(ch != found && s < found_s * (1 - AR_CASE_TUNE_HW_GAIN),
                      "%s: %d channels (%g s), %d found at 16 MB (%g s at the count)", cases[i].algo, ch, s, found,
                      found_s);
        for (int k = ch / 2; k <= 2 * ch; k *= 2) {
            double other;
            hardware_channels(t, cases[i].algo, cases[i].count, AR_BF16, k, &other);
            ck_assert_msg(other >= s * (1 - AR_CASE_TUNE_HW_GAIN), "%s: %d channels %g s, %d %g s", cases[i].algo, ch, s,
                          k, other);
        }
        ar_topo_free(t);
    }
}
END_TEST

/* A fused op's defaults: a model backend overlaps partitions where they predict less
 * (16384 x 8192 x 8192 on 2 x H100); hardware keeps the product whole, alone on every SM;
 * partitions asked are kept on both. */
START_TEST(test_fused_defaults) {
    ar_error_t err;
    ar_topo_t *t = shipped_topo("h100_sxm", "full:2");
    const uint64_t count = (uint64_t)16384 * 8192;
    static const char *const backends[] = {"analytic", "cuda"};
    for (size_t b = 0; b < sizeof backends / sizeof *backends; b++) {
        if (!ar_backend_find(backends[b])) continue;
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT, out;
        o.coll = AR_COLL_MATMUL_ALLREDUCE;
        o.gemm = (ar_gemm_t){16384, 8192, 8192};
        double s1, s;
        const int hardware = b == 1;
        ck_assert_int_eq(ar_case_defaults(t, "ring", count, AR_BF16, &o, AR_MEM_HBM, backends[b], &out, &s, &err), AR_OK);
        if (hardware) ck_assert_int_eq(out.partitions, 1);
        else ck_assert_int_gt(out.partitions, 1);
        o.partitions = 1;
        ck_assert_int_eq(ar_case_defaults(t, "ring", count, AR_BF16, &o, AR_MEM_HBM, backends[b], &out, &s1, &err), AR_OK);
        ck_assert_int_eq(out.partitions, 1);
        if (!hardware) ck_assert_msg(s < s1, "overlapped %g s, whole %g s", s, s1);
        o.partitions = 4;
        ck_assert_int_eq(ar_case_defaults(t, "ring", count, AR_BF16, &o, AR_MEM_HBM, backends[b], &out, NULL, &err), AR_OK);
        ck_assert_int_eq(out.partitions, 4);
    }
    ar_topo_free(t);
}
END_TEST

/* Channels asked, no chunk: the chunk is still the model's choice at those channels, not the
 * algorithm's own (2stage on full:8 at 32 MB on 16 channels, h200_sxm: its own 16 KB pieces
 * predict 519 us, the ladder's choice 372). The choice is within AR_CASE_TUNE_FLAT of the own
 * chunk at worst, so never slower than the plan it replaces by more than that. */
START_TEST(test_default_chunk_channels_asked) {
    ar_error_t err;
    ar_topo_t *t = shipped_topo("h200_sxm", "full:8");
    const uint64_t count = (uint64_t)16 << 20;
    for (int ch = 4; ch <= 16; ch *= 4) {
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT, out;
        o.channels = ch;
        double s;
        ck_assert_int_eq(ar_case_defaults(t, "2stage", count, AR_BF16, &o, AR_MEM_HBM, "analytic", &out, &s, &err),
                         AR_OK);
        ck_assert_int_eq(out.channels, ch);
        ck_assert_uint_gt(out.chunk_bytes, 0);
        ar_algo_opts_t own = AR_ALGO_OPTS_DEFAULT;
        own.channels = ch;
        ar_plan_t *p = NULL;
        ck_assert_int_eq(ar_algo_build("2stage", t, count, AR_BF16, &own, &p, &err), AR_OK);
        ar_result_t r;
        run(t, p, 0, &r);
        ar_plan_free(p);
        ck_assert_msg(s < 0.8 * r.time_s, "%d channels: chosen chunk %llu %g s, own chunk %g s", ch,
                      (unsigned long long)out.chunk_bytes, s, r.time_s);
        ar_result_free(&r);
    }
    ar_topo_free(t);
}
END_TEST

/* Lanes that load every peer alike: 2stage on full:8 (h200_sxm) takes its peers in turn, lane
 * c's k-th peer k + c around the 7. At 16 MiB per rank the powers of two win (128 lanes);
 * at 128 MiB the most lanes of a multiple of 7 below them (126), each peer's link carrying
 * 18, predict less than 128 (two peers' links with 19): a model backend takes them. Hardware
 * keeps powers of two. */
START_TEST(test_default_even_lanes) {
    ar_error_t err;
    ar_topo_t *t = shipped_topo("h200_sxm", "full:8");
    ck_assert_int_eq(ar_algo_find("2stage")->lane_period(t), 7);
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT, small, large;
    double small_s, large_s;
    ck_assert_int_eq(ar_case_defaults(t, "2stage", (uint64_t)8 << 20, AR_BF16, &o, AR_MEM_HBM, "analytic", &small,
                                      &small_s, &err), AR_OK);
    ck_assert_int_eq(small.channels, 128);
    ck_assert_int_eq(ar_case_defaults(t, "2stage", (uint64_t)64 << 20, AR_BF16, &o, AR_MEM_HBM, "analytic", &large,
                                      &large_s, &err), AR_OK);
    ck_assert_int_eq(large.channels, 126);
    ck_assert_double_eq(large_s, case_run_at(t, "2stage", (uint64_t)64 << 20, 126, large.chunk_bytes, NULL, NULL,
                                             NULL, 0));
    /* 128 lanes at their own chunk and every rung of the chunk ladder */
    for (uint64_t c = (uint64_t)64 << 20; c >= (uint64_t)16 << 10; c /= 4) {
        int pch = 0;
        uint64_t pchunk = 0;
        const double s = case_run_at(t, "2stage", (uint64_t)64 << 20, 128, c == (uint64_t)64 << 20 ? 0 : c, &pch,
                                     &pchunk, NULL, 0);
        ck_assert_msg(large_s < s, "126 lanes %g s, 128 lanes (chunk %llu: plan %d lanes, %llu) %g s", large_s,
                      (unsigned long long)c, pch, (unsigned long long)pchunk, s);
    }
    if (ar_backend_find("cuda")) {
        ar_algo_opts_t hw;
        ck_assert_int_eq(ar_case_defaults(t, "2stage", (uint64_t)64 << 20, AR_BF16, &o, AR_MEM_HBM, "cuda", &hw, NULL,
                                          &err), AR_OK);
        ck_assert_msg((hw.channels & (hw.channels - 1)) == 0, "hardware: %d channels", hw.channels);
    }
    ar_topo_free(t);
}
END_TEST

/* Above the size the channels are found at, half the lanes found there are timed too, and
 * taken where they predict AR_CASE_TUNE_FLAT less: torus2d on full:8 (h200_sxm) runs 64
 * lanes at 8 MB (twice the 32 of least time at their own chunks, faster at a chunk of their
 * own); at 1 GB it takes fewer (16 or 32: within 2% of each other, the model's L2 decides),
 * and no count of 16, 32 or 64 lanes at any chunk of no more ops than the default's, or at
 * its own chunk, predicts 2% less. */
START_TEST(test_default_fewer_lanes_large) {
    ar_error_t err;
    ar_topo_t *t = shipped_topo("h200_sxm", "full:8");
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT, small, large;
    double small_s, large_s;
    const uint64_t big = (uint64_t)512 << 20; /* 1 GB of bf16 */
    ck_assert_int_eq(ar_case_defaults(t, "torus2d", (uint64_t)8 << 20, AR_BF16, &o, AR_MEM_HBM, "analytic", &small,
                                      &small_s, &err), AR_OK);
    ck_assert_int_eq(small.channels, 64);
    ck_assert_int_eq(ar_case_defaults(t, "torus2d", big, AR_BF16, &o, AR_MEM_HBM, "analytic", &large, &large_s, &err),
                     AR_OK);
    ck_assert_msg(large.channels == 16 || large.channels == 32, "1 GB: %d lanes", large.channels);
    ck_assert_double_eq(large_s, case_run_at(t, "torus2d", big, large.channels, large.chunk_bytes, NULL, NULL, NULL, 0));
    for (int lanes = 16; lanes <= 64; lanes *= 2) {
        for (uint64_t c = large.chunk_bytes; c <= (uint64_t)1 << 30; c *= 4) {
            const double s = case_run_at(t, "torus2d", big, lanes, c, NULL, NULL, NULL, 0);
            ck_assert_msg(large_s < s * 1.02, "%d lanes %g s, %d lanes (chunk %llu) %g s", large.channels, large_s, lanes,
                          (unsigned long long)c, s);
        }
        ck_assert_msg(large_s < 1.02 * case_run_at(t, "torus2d", big, lanes, 0, NULL, NULL, NULL, 0),
                      "%d lanes, own chunk", lanes);
    }
    ar_topo_free(t);
}
END_TEST

/* A GPU model's channels each hold one of its units (gemm_units: the SMs), so the defaults put
 * no more channels on a device than it has: center_root with 4 ranks on one H200 (h200_sxm,
 * 132 units) at 64 MB takes at most 33 channels a rank (64 had predicted 1.47 x faster, a plan
 * the GPU cannot run). Both model backends refuse such a plan in their admits, naming the
 * device; an explicit --channels still runs (a what-if). Without gemm_units, no limit. */
START_TEST(test_default_channels_fit_units) {
    ar_error_t err;
    ar_topo_t *t = shipped_topo("h200_sxm", "full:1");
    ck_assert_int_eq(ar_topo_place_blocks(t, 4, &err), AR_OK);
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT, d;
    double s;
    const uint64_t count = (uint64_t)32 << 20; /* 64 MB of bf16 */
    const char *model_backend = ar_backend_find("sim") ? "sim" : "analytic"; /* a build without SimGrid */
    ck_assert_int_eq(ar_case_defaults(t, "center_root", count, AR_BF16, &o, AR_MEM_HBM, model_backend, &d, &s, &err),
                     AR_OK);
    ar_algo_opts_t k = d;
    ar_plan_t *p = NULL;
    ck_assert_int_eq(ar_algo_build("center_root", t, count, AR_BF16, &k, &p, &err), AR_OK);
    ck_assert_msg(4 * p->nchannels <= 132, "%d channels a rank", p->nchannels);
    for (int b = 0; b < 2; b++) {
        const ar_backend_ops_t *be = ar_backend_find(b ? "sim" : "analytic");
        if (!be) continue;
        ck_assert_ptr_nonnull(be->admits);
        ck_assert_int_eq(be->admits(t, p, &err), AR_OK);
    }
    ar_plan_free(p);
    k.channels = 2 * d.channels;
    ck_assert_int_eq(ar_algo_build("center_root", t, count, AR_BF16, &k, &p, &err), AR_OK);
    ck_assert_int_gt(4 * p->nchannels, 132);
    const ar_backend_ops_t *an = ar_backend_find("analytic");
    ck_assert_int_eq(an->admits(t, p, &err), AR_ELIMIT);
    ck_assert_msg(strstr(err.message, "on device 0, which holds 132 at once") != NULL, "%s", err.message);
    ar_result_t r;
    ar_run_opts_t ro = AR_RUN_OPTS_DEFAULT;
    tu_run_checked("analytic", t, p, &ro, &r, 1e-9); /* asked for: it runs */
    ar_result_free(&r);
    ar_plan_free(p);
    ar_topo_free(t);
    ar_topo_t *u = round_topo("full:1");
    ck_assert_int_eq(ar_topo_place_blocks(u, 4, &err), AR_OK);
    k = (ar_algo_opts_t)AR_ALGO_OPTS_DEFAULT;
    k.channels = 20;
    ck_assert_msg(ar_algo_build("center_root", u, 1 << 20, AR_BF16, &k, &p, &err) == AR_OK, "%s", err.message);
    ck_assert_int_gt(4 * p->nchannels, 132);
    ck_assert_int_eq(an->admits(u, p, &err), AR_OK);
    ar_plan_free(p);
    ar_topo_free(u);
}
END_TEST

/* --algo auto: the least time of every algorithm at its defaults, and the row says which. */
START_TEST(test_auto_picks_least) {
    const char *specs[] = {"torus_2d:4x4", "ring_1d:6", "full:4"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        ar_topo_t *t = round_topo(specs[i]);
        for (uint64_t count = 4096; count <= (1u << 20); count *= 16) {
            char label[64], want[64] = "";
            const double got = case_time(t, "auto", count, 0, NULL, label, sizeof label);
            double least = INFINITY;
            for (const ar_algo_t *const *a = ar_algo_all(); *a; a++) {
                if (!ar_algo_computes(*a, AR_COLL_ALLREDUCE)) continue;
                char l[64];
                const double s = case_time(t, (*a)->name, count, 0, NULL, l, sizeof l);
                if (s < least) least = s, snprintf(want, sizeof want, "auto:%s/", (*a)->name);
            }
            ck_assert_msg(got == least, "%s, %llu: auto %g s, least %g s", specs[i], (unsigned long long)count, got,
                          least);
            ck_assert_msg(!strncmp(label, want, strlen(want)), "%s: auto's row says %s, want %s..", specs[i], label,
                          want);
        }
        ar_topo_free(t);
    }
}
END_TEST

/* auto on ranks sharing one H100: the least of the algorithms at their defaults where a
 * candidate's fewest channels are past twice the best so far (1stage on 2 ranks at 256 KB:
 * one channel past 13.7 us, its defaults 4.06, where auto took 2stage's 6.10) and past the
 * size the channels are searched at (AR_CASE_TUNE_MAX_BYTES: 1stage on 8 ranks at 256 MB,
 * whose 16 MB time, 1084 us, took auto over 2stage's 3058, to run 23838). */
START_TEST(test_auto_least_sharing_gpu) {
    static const struct { int ranks; uint64_t count; } cases[] = {{2, (uint64_t)1 << 17}, {8, (uint64_t)1 << 27}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_topo_t *t = tu_topo_open("full:1", "h100_sxm");
        ar_error_t err;
        ck_assert_msg(ar_topo_place_blocks(t, cases[i].ranks, &err) == AR_OK, "%s", err.message);
        char label[64], want[64] = "";
        const double got = case_time(t, "auto", cases[i].count, 0, NULL, label, sizeof label);
        double least = INFINITY;
        for (const ar_algo_t *const *a = ar_algo_all(); *a; a++) {
            if (!ar_algo_computes(*a, AR_COLL_ALLREDUCE) || (*a)->chooser) continue;
            char l[64];
            const double s = case_time(t, (*a)->name, cases[i].count, 0, NULL, l, sizeof l);
            if (s < least) least = s, snprintf(want, sizeof want, "auto:%s/", (*a)->name);
        }
        ck_assert_msg(got <= least * (1 + 1e-9), "%d ranks: auto %g s (%s), least %g s (%s)", cases[i].ranks, got, label,
                      least, want);
        ck_assert_msg(!strncmp(label, want, strlen(want)), "%d ranks: auto's row says %s, want %s..", cases[i].ranks,
                      label, want);
        ar_topo_free(t);
    }
}
END_TEST

/* No row of a backend predicts below the bound where channels do not share links; and
 * the bound is what rows carry. */
START_TEST(test_bound_row) {
    ar_topo_t *t = round_topo("ring_1d:4");
    ar_case_t c = {.backend = "analytic", .topo = t, .topology = "ring_1d:4", .algo = "ring", .count = 1 << 19,
                   .dtype = AR_BF16, .algo_opts = AR_ALGO_OPTS_DEFAULT, .run = AR_RUN_OPTS_DEFAULT, .verify = 0};
    c.algo_opts.channels = 1;
    ar_case_out_t co;
    ar_error_t err;
    ck_assert_msg(ar_case_run(&c, &co, &err) == AR_OK, "%s", err.message);
    ar_bound_t b;
    ck_assert_int_eq(ar_bound(t, co.row.bytes, AR_MEM_HBM, 0, &b, &err), AR_OK);
    ck_assert_double_eq(co.row.bound_s, b.time_s);
    const double e = ar_row_efficiency(&co.row);
    ck_assert_double_eq_tol(e, b.time_s / co.res.time_s, 1e-12);
    ck_assert_msg(e > 0 && e <= 1, "one channel on a ring: efficiency %g", e);
    ar_case_out_free(&co);
    ar_topo_free(t);
}
END_TEST

/* A resource shared by many flows (a star's root, a GPU's memory and L2 under every peer's
 * stores) rises and falls as each ends and begins; it re-decides the bindings of its flows only
 * where one of them may have something tighter now, and finds the flows a falling share takes
 * over through the bindings it lists (backends/analytic.c, slot_t's least and binders). The
 * times are those of the backend that re-checked every flow at every change, to the last digit
 * printed; without either shortcut's safeguard some of them move (mesh2d on torus_2d:8x8 by
 * 1.4%, center_root on switch:2048 by 0.03%, 1stage on full:8 by 0.9-1.9%). */
START_TEST(test_shared_share_rises) {
    static const struct {
        const char *algo, *topo, *model;
        uint64_t bytes;
        int lanes;
        uint64_t chunk;
        double us;
    } cases[] = {
        {"center_root", "switch:512", "h200_sxm", 1 << 20, 4, 64 << 10, 5229.027120},
        {"center_root", "switch:2048", "h200_sxm", 1 << 20, 2, 256 << 10, 32051.044538},
        {"mesh2d", "torus_2d:8x8", "accel_tcm", 4 << 20, 4, 8 << 10, 100.725826},
        {"1stage", "full:8", "h200_sxm", 64 << 20, 32, 128 << 10, 2256.168261},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_topo_t *t = tu_topo_open(cases[i].topo, cases[i].model);
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        o.channels = cases[i].lanes;
        o.chunk_bytes = cases[i].chunk;
        ar_plan_t *p;
        ar_error_t err;
        const int rc = ar_algo_build(cases[i].algo, t, cases[i].bytes / 2, AR_BF16, &o, &p, &err);
        ck_assert_msg(rc == AR_OK, "%s on %s: %s", cases[i].algo, cases[i].topo, err.message);
        ar_result_t r;
        run(t, p, 0, &r);
        ck_assert_msg(fabs(r.time_s * 1e6 - cases[i].us) < 5e-7, "%s on %s, %d lanes: %.6f us, want %.6f", cases[i].algo,
                      cases[i].topo, cases[i].lanes, r.time_s * 1e6, cases[i].us);
        ar_result_free(&r);
        ar_plan_free(p);
        ar_topo_free(t);
    }
}
END_TEST

/* A plan's floor from its links (ar_bound_plan_links, what auto's search asks before timing a
 * plan): a star on one switch puts the root's 15 children's bytes on each direction of the
 * root's link, 15 B at the link's rate; it never exceeds what the analytic backend predicts
 * (a ring, a star, a grid); a plan of rank 0's ops has none (0). auto, which leaves out the
 * plans whose floor passes twice its best, takes the algorithm of least time at its defaults
 * (on switch:256 at 1 MB, torus2d, its time, where center_root's star is left out).
 * The links of rank 0's ops alone (ar_bound_own_links) are a floor of the whole plan's: a
 * plan of rank 0's standing for every rank's has its own ops' floor, under the run's time, and
 * rank 0's 1stage alone on one switch brings its 15 peers' vectors over its own link, the
 * whole plan's most loaded. */
START_TEST(test_plan_links_floor) {
    ar_error_t err;
    const uint64_t count = 1u << 19; /* 1 MiB of bf16 */
    ar_topo_t *t = tu_topo_open("switch:16", "accel_tcm");
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
    o.channels = 2;
    ar_plan_t *p;
    ck_assert_int_eq(ar_algo_build("center_root", t, count, AR_BF16, &o, &p, &err), AR_OK);
    EQ(ar_bound_plan_links(t, p, AR_MEM_HBM), 15.0 * 2 * count / (ar_topo_link_gbps(t, 0) * 1e9));
    ar_result_t r;
    run(t, p, 0, &r);
    ck_assert(ar_bound_plan_links(t, p, AR_MEM_HBM) <= r.time_s);
    ar_result_free(&r);
    ar_plan_free(p);
    ar_topo_free(t);
    static const char *const cases[][3] = {{"ring_1d:8", "ring", NULL}, {"torus_2d:4x4", "torus2d", NULL},
                                           {"full:8", "2stage", "h200_sxm"}, {"switch:8", "center_root", "h200_sxm"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        t = tu_topo_open(cases[i][0], cases[i][2]);
        ck_assert_int_eq(ar_algo_build(cases[i][1], t, count, AR_BF16, &o, &p, &err), AR_OK);
        const double floor = ar_bound_plan_links(t, p, AR_MEM_HBM);
        run(t, p, 0, &r);
        ck_assert_msg(floor > 0 && floor <= r.time_s, "%s on %s: floor %g s, run %g s", cases[i][1], cases[i][0], floor,
                      r.time_s);
        ar_result_free(&r);
        ar_plan_free(p);
        ar_topo_free(t);
    }
    t = tu_topo_open("ring_1d:8", NULL);
    o.symmetry = AR_SYMMETRY_ON;
    ck_assert_int_eq(ar_algo_build("ring", t, count, AR_BF16, &o, &p, &err), AR_OK);
    ck_assert(p->only_rank == 0 && ar_bound_plan_links(t, p, AR_MEM_HBM) == 0);
    const double own = ar_bound_own_links(t, p, AR_MEM_HBM);
    run(t, p, 0, &r);
    ck_assert_msg(own > 0 && own <= r.time_s, "ring's own floor %g s, run %g s", own, r.time_s);
    ar_result_free(&r);
    ar_plan_free(p);
    ar_topo_free(t);
    t = tu_topo_open("switch:16", "accel_tcm");
    o.symmetry = AR_SYMMETRY_OFF;
    ck_assert_int_eq(ar_algo_build("1stage", t, count, AR_BF16, &o, &p, &err), AR_OK);
    const double whole = ar_bound_plan_links(t, p, AR_MEM_HBM);
    EQ(ar_bound_own_links(t, p, AR_MEM_HBM), whole);
    ar_plan_free(p);
    o.one_rank = 1; /* rank 0's ops alone: its own link in, which carries the 15 peers' vectors */
    ck_assert_int_eq(ar_algo_build("1stage", t, count, AR_BF16, &o, &p, &err), AR_OK);
    ck_assert(p->only_rank == 0);
    EQ(ar_bound_own_links(t, p, AR_MEM_HBM), 15.0 * 2 * count / (ar_topo_link_gbps(t, 0) * 1e9));
    EQ(ar_bound_own_links(t, p, AR_MEM_HBM), whole);
    o.one_rank = 0;
    ar_plan_free(p);
    ar_topo_free(t);
    t = tu_topo_open("switch:256", NULL);
    char label[64];
    const double s = case_run_sym(t, "auto", count, 0, 0, AR_SYMMETRY_AUTO, NULL, NULL, label, sizeof label);
    ck_assert_msg(!strncmp(label, "auto:torus2d/", 13), "%s", label);
    EQ(s, case_run_sym(t, "torus2d", count, 0, 0, AR_SYMMETRY_AUTO, NULL, NULL, NULL, 0));
    ck_assert(s < case_run_sym(t, "center_root", count, 0, 0, AR_SYMMETRY_AUTO, NULL, NULL, NULL, 0) / 2);
    ar_topo_free(t);
}
END_TEST

/* auto times the algorithm its search could not (a plan of every rank's ops past the search's,
 * even one lane's in one piece, where no translation lets rank 0's stand for them) when it may
 * win: torus2d on mesh_2d:48x48 at 1 MB, 2304 ranks' rings, 139 us where the search's best,
 * center_root, takes 307. The choice is the one whose options predict the least; the others'
 * floors screen them. The row is that timing's, not a second walk of the plan. Where that plan
 * is past what auto times, the case names it among those not timed. */
START_TEST(test_auto_past_search) {
    ar_topo_t *t = tu_topo_open("mesh_2d:48x48", NULL);
    ar_case_t c = {.backend = "analytic", .topo = t, .topology = t->name, .algo = "auto", .count = 1u << 19,
                   .dtype = AR_BF16, .algo_opts = AR_ALGO_OPTS_DEFAULT, .run = AR_RUN_OPTS_DEFAULT};
    c.algo_opts.symmetry = AR_SYMMETRY_AUTO;
    const char *algo = NULL;
    ar_algo_opts_t o;
    ar_error_t err;
    ar_error_clear(&err);
    ck_assert_int_eq(ar_case_choose(&c, &algo, &o, &err), AR_OK);
    ck_assert_str_eq(algo, "torus2d");
    ar_plan_t *p;
    ck_assert_int_eq(ar_algo_build("torus2d", t, c.count, AR_BF16, &o, &p, &err), AR_OK);
    ck_assert(p->only_rank < 0 && (uint64_t)p->nops > AR_CASE_TUNE_MAX_OPS);
    ar_result_t r;
    run(t, p, 0, &r);
    const double center_root = case_run_sym(t, "center_root", c.count, 0, 0, AR_SYMMETRY_AUTO, NULL, NULL, NULL, 0);
    ck_assert_msg(r.time_s < center_root / 1.5, "torus2d %g s, center_root %g s", r.time_s, center_root);
    /* the case's row is the choice's own run of that plan, not a second walk of it; one
     * that asks for the links' figures walks it again */
    for (int breakdown = 0; breakdown < 2; breakdown++) {
        c.run.breakdown = breakdown;
        ar_case_out_t co;
        ck_assert_msg(ar_case_plan(&c, &co, &err) == AR_OK, "%s", err.message);
        ck_assert_int_eq(co.ran, !breakdown);
        ck_assert_int_eq(co.plan->nops, p->nops);
        ck_assert_int_eq(ar_case_execute(&c, &co, &err), AR_OK);
        ck_assert_double_eq(co.res.time_s, r.time_s);
        ck_assert(breakdown ? co.res.links != NULL : co.res.links == NULL);
        ck_assert_msg(!strstr(co.auto_untimed, "torus2d"), "%s", co.auto_untimed);
        ar_case_out_free(&co);
    }
    /* Where torus2d's whole plan (its ops and sources) is past the most auto times after its
     * search (the cap, here the case's max_ops, which leaves the search's own as it was), it
     * is not timed, and the case says so (auto_untimed, which `arsim run` prints): its pick is
     * center_root's */
    c.run.breakdown = 0;
    c.algo_opts.max_ops = p->nops;
    ar_case_out_t co;
    ck_assert_msg(ar_case_plan(&c, &co, &err) == AR_OK, "%s", err.message);
    ck_assert_msg(!strncmp(co.algo_label, "auto:center_root/", 17), "%s", co.algo_label);
    ck_assert_msg(!strncmp(co.auto_untimed, "torus2d", 7), "%s", co.auto_untimed);
    ar_case_out_free(&co);
    ar_result_free(&r);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* The case of algo on t at count, channels and chunk given, bf16, --symmetry auto, analytic. */
static ar_case_t sym_case(ar_topo_t *t, const char *algo, uint64_t count, int channels, uint64_t chunk) {
    ar_case_t c = {.backend = "analytic", .topo = t, .topology = t->name, .algo = algo, .count = count,
                   .dtype = AR_BF16, .algo_opts = AR_ALGO_OPTS_DEFAULT, .run = AR_RUN_OPTS_DEFAULT, .verify = 0};
    c.algo_opts.channels = channels;
    c.algo_opts.chunk_bytes = chunk;
    c.algo_opts.symmetry = AR_SYMMETRY_AUTO;
    return c;
}

/* sym_case's case timed at the even counts step apart, the plan run a span of ranks standing for
 * all (1: rank 0's, else a row's), and every rank's ops at the count itself between the two
 * times, within AR_CASE_EVEN_SPAN of the row's. The row's time. */
static double check_even_counts(ar_topo_t *t, const char *algo, uint64_t count, int channels, uint64_t chunk,
                                uint64_t step, int span) {
    const ar_case_t c = sym_case(t, algo, count, channels, chunk);
    ar_case_out_t co;
    ar_error_t err;
    ar_error_clear(&err);
    ck_assert_msg(ar_case_run(&c, &co, &err) == AR_OK, "%s", err.message);
    ck_assert_uint_eq(co.even_lo, count / step * step);
    ck_assert_uint_eq(co.even_hi, co.even_lo + step);
    ck_assert_msg(co.plan->only_rank == 0 && co.plan->only_span == span, "rank %d, span %d", co.plan->only_rank,
                  co.plan->only_span);
    ck_assert(co.row.count == count && co.row.bytes == 2 * count);
    const double hi = co.res.time_s, lo = co.even_lo_s;
    ar_case_out_free(&co);
    const double every = case_run_sym(t, algo, count, channels, chunk, AR_SYMMETRY_OFF, NULL, NULL, NULL, 0);
    ck_assert_msg(lo <= every && every <= hi && hi - every <= AR_CASE_EVEN_SPAN * every,
                  "even counts %g .. %g s, every rank's ops %g s", lo, hi, every);
    return hi;
}

/* A count whose ranks' parts are uneven (10^8 bytes on 256 ranks in 8 lanes: parts cut on
 * whole lines, of 24384 and 24448 elements) is timed at the even counts around it, rank 0's
 * ops for all: the row takes the one above's time, and every rank's ops, run at the same
 * options, take a time between the two, within AR_CASE_EVEN_SPAN of it. */
START_TEST(test_even_counts) {
    ar_topo_t *t = tu_topo_open("ring_1d:256", NULL);
    const uint64_t count = 50000000, step = 256 * AR_ALGO_SPLIT_LINE * 8;
    const double hi = check_even_counts(t, "ring", count, 8, 32 << 10, step, 1);
    /* an even count itself runs as it is */
    const ar_case_t c = sym_case(t, "ring", count / step * step + step, 8, 32 << 10);
    ar_case_out_t co;
    ar_error_t err;
    ar_error_clear(&err);
    ck_assert_int_eq(ar_case_run(&c, &co, &err), AR_OK);
    ck_assert(co.even_hi == 0 && co.plan->only_rank == 0);
    EQ(co.res.time_s, hi);
    ar_case_out_free(&co);
    ar_topo_free(t);
}
END_TEST

/* On a torus, where a row of the grid stands for all (torus2d, whose rows' allreduce cuts
 * the rows' blocks unevenly), the even counts are a row step apart: the grid's rows x lanes x
 * a line (32 x 2 x 64 = 4096 elements on 32 x 32), where the whole grid's step (131072) is
 * too coarse for the count (5e6 elements). Both are timed as a row's ops. */
START_TEST(test_even_counts_by_rows) {
    ar_topo_t *t = tu_topo_open("torus_2d:32x32", NULL);
    check_even_counts(t, "torus2d", 5000000, 2, 64 << 10, 32 * AR_ALGO_SPLIT_LINE * 2, 32);
    ar_topo_free(t);
}
END_TEST

/* Where no line's step is found (ring_1d:896 at 54200 elements: 60.5 a rank) and every rank's
 * plan would hold AR_CASE_EVEN_FINE_OPS ops or more (4.8 M here), the even counts are taken at
 * the grain the parts are cut on: 896 elements apart, 60 and 61 a rank, whose plans keep
 * rank 0's ops for all (each rank's parts start on their own 16-byte alignment, but every
 * one of them ends off a vector, all the model charges). Every rank's ops lie between, as
 * on lines. A plan of fewer ops (ring_1d:256, 0.4 M) runs every rank's ops. */
START_TEST(test_even_counts_fine) {
    ar_topo_t *t = tu_topo_open("ring_1d:896", NULL);
    check_even_counts(t, "ring", 54200, 1, 0, 896, 1);
    ar_topo_free(t);
    t = tu_topo_open("ring_1d:256", NULL);
    const ar_case_t c = sym_case(t, "ring", 256 * 60 + 128, 1, 0);
    ar_case_out_t co;
    ar_error_t err;
    ar_error_clear(&err);
    ck_assert_int_eq(ar_case_run(&c, &co, &err), AR_OK);
    ck_assert(co.even_hi == 0 && co.plan->only_rank < 0);
    ar_case_out_free(&co);
    ar_topo_free(t);
}
END_TEST

/* One rank's chain of ops (ar_bound_own_chain): a plan of one COPY is its latency and its
 * bytes at its own rate; on every plan below, a floor of the analytic walk's time, and where
 * latency rules (torus2d on ring_1d:64 at 8 KB, each column's step 8 hops) far above the
 * links' floor. ar_bound_own_floor is the larger of the two; asked only whether a plan may
 * beat `limit`, it stops past it, a floor still. */
START_TEST(test_plan_chain_floor) {
    ar_error_t err;
    ar_topo_t *t = tu_topo_open("ring_1d:2", NULL);
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("one", 2, 1, 4096, AR_BF16, &p), AR_OK);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, (ar_addr_t){1, AR_BUF_OUT, 0}, (ar_addr_t){0, AR_BUF_IN, 0}, 4096), AR_OK);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    ar_op_cost_t cost;
    int n = 0;
    ck_assert_int_eq(ar_cost_op(t, p, &p->ops[0], 0, AR_MEM_HBM, &cost, NULL, 0, &n, NULL), AR_OK);
    EQ(ar_bound_own_chain(t, p, AR_MEM_HBM), cost.lat_s + cost.move_s);
    ar_plan_free(p);
    ar_topo_free(t);
    static const struct { const char *topo, *algo, *model; uint64_t count; int ranks; } cases[] = {
        {"ring_1d:8", "ring", NULL, 1u << 19, 0},       {"torus_2d:4x4", "torus2d", NULL, 1u << 19, 0},
        {"full:8", "2stage", "h200_sxm", 1u << 19, 0},  {"switch:8", "center_root", "h200_sxm", 4096, 0},
        {"ring_1d:64", "torus2d", NULL, 4096, 0},       {"mesh_2d:4x4", "mesh2d", NULL, 1u << 16, 0},
        /* ranks sharing one GPU under a GPU's model, fences and all */
        {"full:1", "torus2d", "h100_sxm", 1u << 17, 2}, {"full:1", "1stage", "h100_sxm", 1u << 17, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        t = tu_topo_open(cases[i].topo, cases[i].model);
        if (cases[i].ranks) ck_assert_msg(ar_topo_place_blocks(t, cases[i].ranks, &err) == AR_OK, "%s", err.message);
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        ck_assert_int_eq(ar_algo_build(cases[i].algo, t, cases[i].count, AR_BF16, &o, &p, &err), AR_OK);
        const double chain = ar_bound_own_chain(t, p, AR_MEM_HBM), links = ar_bound_own_links(t, p, AR_MEM_HBM);
        ar_result_t r;
        run(t, p, 0, &r);
        ck_assert_msg(chain > 0 && chain <= r.time_s, "%s on %s: chain %g s, run %g s", cases[i].algo, cases[i].topo,
                      chain, r.time_s);
        EQ(ar_bound_own_floor(t, p, AR_MEM_HBM, 0), fmax(chain, links));
        const double part = ar_bound_own_floor(t, p, AR_MEM_HBM, chain / 4);
        ck_assert(part > chain / 4 && part <= fmax(chain, links));
        if (!strcmp(cases[i].topo, "ring_1d:64"))
            ck_assert_msg(chain > 10 * links, "chain %g s, links %g s", chain, links);
        ar_result_free(&r);
        ar_plan_free(p);
        ar_topo_free(t);
    }
}
END_TEST

/* A walk told where to stop (stop_past_s) ends once a channel's clock passes it: its time
 * INFINITY and fewer ops walked than the plan's, where the whole run takes longer; the same
 * result as without it where the whole run takes less. */
START_TEST(test_stop_past) {
    ar_topo_t *t = tu_topo_open("torus_2d:4x4", NULL);
    ar_algo_opts_t ao = AR_ALGO_OPTS_DEFAULT;
    ao.channels = 2;
    ar_plan_t *p;
    ar_error_t err;
    ck_assert_int_eq(ar_algo_build("torus2d", t, 1u << 18, AR_BF16, &ao, &p, &err), AR_OK);
    ar_result_t whole, cut, past;
    run(t, p, 0, &whole);
    ck_assert_uint_eq(whole.ops_executed, p->nops);
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    o.stop_past_s = whole.time_s / 2;
    ck_assert_int_eq(ar_backend_run("analytic", t, p, &o, &cut, &err), AR_OK);
    ck_assert(isinf(cut.time_s) && cut.ops_executed > 0 && cut.ops_executed < p->nops);
    o.stop_past_s = whole.time_s * 1.001;
    ck_assert_int_eq(ar_backend_run("analytic", t, p, &o, &past, &err), AR_OK);
    EQ(past.time_s, whole.time_s);
    ck_assert_uint_eq(past.ops_executed, p->nops);
    ar_result_free(&whole);
    ar_result_free(&cut);
    ar_result_free(&past);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

/* torus2d on a square grid of a switch goes columns first, as on a torus: at a count
 * whose rows' allreduce cuts each block unevenly (switch:64, 8 x 8, 328 elements: blocks of
 * 41, parts of 5 and 6), every row runs the same ops, and a row's stand for all (rows first,
 * each rank of a column has its own, and every rank's ran: 11 s at 16384 devices). The
 * row's time is every rank's. */
START_TEST(test_torus2d_switch_rows) {
    ar_topo_t *t = tu_topo_open("switch:64", NULL);
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
    o.channels = 1;
    ar_plan_t *p;
    ar_error_t err;
    ck_assert_int_eq(ar_algo_build("torus2d", t, 328, AR_BF16, &o, &p, &err), AR_OK);
    ar_result_t every;
    run(t, p, 0, &every);
    ar_plan_free(p);
    o.symmetry = AR_SYMMETRY_ON;
    ck_assert_int_eq(ar_algo_build("torus2d", t, 328, AR_BF16, &o, &p, &err), AR_OK);
    ck_assert_msg(p->only_rank == 0 && p->only_span == 8, "rank %d, span %d", p->only_rank, p->only_span);
    ar_result_t row;
    run(t, p, 0, &row);
    EQ(row.time_s, every.time_s);
    ar_result_free(&row);
    ar_result_free(&every);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

Suite *suite_analytic(void) {
    Suite *s = suite_create("analytic");
    TCase *tc = tcase_create("analytic_execute");
    tcase_add_test(tc, test_copy_one_link);
    tcase_add_test(tc, test_copy_long_route);
    tcase_add_test(tc, test_pull_channel_bound);
    tcase_add_test(tc, test_two_sources);
    tcase_add_test(tc, test_local_memory);
    tcase_add_test(tc, test_signal_chain);
    tcase_add_test(tc, test_store_fence);
    tcase_add_test(tc, test_signal_release);
    tcase_add_test(tc, test_signal_release_remote);
    tcase_add_test(tc, test_signal_local);
    tcase_add_test(tc, test_chan_local_read);
    tcase_add_test(tc, test_chan_local_read_cold);
    tcase_add_test(tc, test_chan_cold_crowd);
    tcase_add_test(tc, test_chan_loads_add);
    tcase_add_test(tc, test_launch_block_stagger);
    tcase_add_test(tc, test_release_floor);
    tcase_add_test(tc, test_release_floor_crossing);
    tcase_add_test(tc, test_host_stores_posted);
    tcase_add_test(tc, test_signal_fence);
    tcase_add_test(tc, test_op_misalign);
    tcase_add_test(tc, test_signal_together);
    tcase_add_test(tc, test_cold_lat);
    tcase_add_test(tc, test_l2_bytes);
    tcase_add_test(tc, test_l2_bw_reach_and_copy);
    tcase_add_test(tc, test_warm_touched_lines);
    tcase_add_test(tc, test_pull_gbps);
    tcase_add_test(tc, test_reduce_groups);
    tcase_add_test(tc, test_link_issue);
    tcase_add_test(tc, test_arrival_order);
    tcase_add_test(tc, test_link_shared);
    tcase_add_test(tc, test_netreduce_closed_form);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    tc = tcase_create("ar_bound");
    tcase_add_test(tc, test_bound_by_hand);
    tcase_add_test(tc, test_bound_cut);
    tcase_add_test(tc, test_bound_collectives);
    tcase_add_test(tc, test_bound_fused);
    tcase_add_test(tc, test_compute_time);
    tcase_add_test(tc, test_compute_units);
    tcase_add_test(tc, test_plan_stages);
    tcase_add_test(tc, test_fused_defaults);
    tcase_add_test(tc, test_bound_row);
    suite_add_tcase(s, tc);
    tc = tcase_create("defaults");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_default_channels);
    tcase_add_test(tc, test_default_untimed);
    tcase_add_test(tc, test_default_untimed_tree);
    tcase_add_test(tc, test_default_rank0_search);
    tcase_add_test(tc, test_default_fewest_ops_lanes);
    tcase_add_test(tc, test_default_one_count_searched);
    tcase_add_test(tc, test_default_ladder_rank0_on);
    tcase_add_test(tc, test_default_far_hops);
    tcase_add_test(tc, test_default_hardware_chunk);
    tcase_add_test(tc, test_default_hardware_channels);
    tcase_add_test(tc, test_default_hardware_past_search);
    tcase_add_test(tc, test_default_even_lanes);
    tcase_add_test(tc, test_default_chunk_channels_asked);
    tcase_add_test(tc, test_default_fewer_lanes_large);
    tcase_add_test(tc, test_default_channels_fit_units);
    tcase_add_test(tc, test_auto_picks_least);
    tcase_add_test(tc, test_auto_least_sharing_gpu);
    tcase_add_test(tc, test_plan_links_floor);
    tcase_add_test(tc, test_auto_past_search);
    tcase_add_test(tc, test_even_counts);
    tcase_add_test(tc, test_even_counts_by_rows);
    tcase_add_test(tc, test_even_counts_fine);
    tcase_add_test(tc, test_plan_chain_floor);
    tcase_add_test(tc, test_stop_past);
    tcase_add_test(tc, test_torus2d_switch_rows);
    tcase_add_test(tc, test_ordered_links_closed_form);
    suite_add_tcase(s, tc);
    tc = tcase_create("analytic_algorithms");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ring_closed_form);
    tcase_add_test(tc, test_shared_share_rises);
    tcase_add_test(tc, test_torus2d_closed_form);
    tcase_add_test(tc, test_mesh2d_link_bytes);
    tcase_add_test(tc, test_torus2d_mesh_orders);
    tcase_add_test(tc, test_shots_closed_form);
    tcase_add_test(tc, test_center_root_closed_form);
    tcase_add_test(tc, test_naive_closed_form);
    tcase_add_test(tc, test_all_algorithms);
    suite_add_tcase(s, tc);
    return s;
}
