/* analytic backend: the critical path pinned to closed forms, first on hand-made
 * plans over a model with round numbers, then on every algorithm's plan. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "arsim/arsim.h"
#include "backends/internal.h"
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

static ar_plan_t *plan_new(int nranks, int nch, uint64_t count) {
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("hand", nranks, nch, count, AR_FP32, &p), AR_OK);
    return p;
}

static void run(const ar_topo_t *t, ar_plan_t *p, int breakdown, ar_result_t *res) {
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    o.breakdown = breakdown;
    ar_error_t err;
    if (p->build) ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    int rc = ar_backend_run("analytic", t, p, &o, res, &err);
    ck_assert_msg(rc == AR_OK, "analytic: %s", err.message);
    double sum = 0;
    for (int k = 0; k < AR_NTERM; k++) {
        ck_assert(res->terms_s[k] >= 0);
        sum += res->terms_s[k];
    }
    ck_assert_double_eq_tol(sum, res->time_s, 1e-12 * res->time_s);
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
    ar_plan_t *p = plan_new(4, 1, n);
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

/* A pull: the channel keeps chan_inflight_bytes in flight over chan_read_lat_ns, so
 * once that is below the link's bandwidth it is the bound: B / (inflight / lat). */
START_TEST(test_pull_channel_bound) {
    ar_topo_t *t = round_topo("ring_1d:4");
    const uint64_t n = 250000;
    const double B = n * 4.0;
    ar_plan_t *p = plan_new(4, 1, n);
    ck_assert_int_eq(ar_plan_copy(p, 1, 0, ar_addr(1, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
    ar_result_t r;
    run(t, p, 0, &r); /* 100 GB/s per channel: the link bounds */
    EQ(r.time_s, LAUNCH + MEMLAT + HOP + B / LINK_BW);
    t->model->chan_inflight_bytes = 4000; /* 4000 B / 1000 ns = 4 GB/s per channel */
    run(t, p, 0, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + HOP + B / 4e9);
    EQ(r.terms_s[AR_TERM_LINK], MEMLAT + HOP + B / 4e9);
    /* Two channels each pulling half: the bound is per channel, so twice as fast. */
    ar_plan_t *p2 = plan_new(4, 2, n);
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
    ar_plan_t *p = plan_new(4, 1, 2 * n);
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

    p = plan_new(4, 1, n);
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
    ar_plan_t *p = plan_new(4, 1, n);
    ck_assert_int_eq(ar_plan_copy(p, 2, 0, ar_addr(2, AR_BUF_OUT, 0), ar_addr(2, AR_BUF_IN, 0), n), AR_OK);
    ar_result_t r;
    run(t, p, 0, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + B / 1000e9 + B / 500e9);
    EQ(r.terms_s[AR_TERM_MEMORY], MEMLAT + B / 1000e9 + B / 500e9);
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
    const double B = n * 4.0, c = MEMLAT + B / 1000e9 + B / 500e9;
    for (int to = 1; to <= 2; to++) {
        ar_plan_t *p = plan_new(4, 1, n);
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

/* A WAIT for count k is released by the k-th SIGNAL to *arrive*, not the k-th
 * issued: rank 0 signals rank 2 at once (two hops: arrives at 1200 ns), rank 1
 * after a short copy (one hop: arrives at c + 1000 ns < 1200 ns). */
START_TEST(test_arrival_order) {
    ar_topo_t *t = round_topo("ring_1d:4");
    const uint64_t n = 16;
    const double B = n * 4.0, c = MEMLAT + B / 1000e9 + B / 500e9;
    ck_assert(c + SIG < SIG + HOP);
    for (int count = 1; count <= 2; count++) {
        ar_plan_t *p = plan_new(4, 1, n);
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

/* No contention: two channels pushing over the same link take as long as one.
 * The link's bytes add up; its busy time is the union of the two (equal) spans. */
START_TEST(test_no_contention) {
    ar_topo_t *t = round_topo("ring_1d:4");
    const uint64_t n = 100000;
    const double B = n * 4.0;
    ar_plan_t *p = plan_new(4, 2, 2 * n);
    for (int c = 0; c < 2; c++)
        ck_assert_int_eq(ar_plan_copy(p, 0, c, ar_addr(1, AR_BUF_OUT, c * n), ar_addr(0, AR_BUF_IN, c * n), n), AR_OK);
    ar_result_t r;
    run(t, p, 1, &r);
    EQ(r.time_s, LAUNCH + MEMLAT + HOP + B / LINK_BW);
    int found = 0;
    for (int i = 0; i < r.nlinks; i++)
        if (r.links[i].bytes > 0) {
            found++;
            EQ(r.links[i].bytes, 2 * B);
            EQ(r.links[i].busy_s, B / LINK_BW);
        }
    ck_assert_int_eq(found, 1);
    ar_result_free(&r);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

START_TEST(test_errors) {
    ar_topo_t *t = round_topo("ring_1d:4");
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    ar_result_t r;
    ar_error_t err;
    /* a WAIT for two SIGNALs of one */
    ar_plan_t *p = plan_new(4, 2, 4);
    ck_assert_int_eq(ar_plan_signal(p, 3, 0, 2, 5), AR_OK);
    ck_assert_int_eq(ar_plan_wait(p, 2, 1, 5, 2), AR_OK);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    ck_assert_int_eq(ar_backend_run("analytic", t, p, &o, &r, &err), AR_EPLAN);
    ck_assert_str_eq(err.message, "deadlock: rank 2 channel 1 op 0 waits for flag 5 to reach 2 "
                                  "but only 1 SIGNALs arrive");
    ar_plan_free(p);
    /* a plan for another rank count */
    p = plan_new(3, 1, 4);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    ck_assert_int_eq(ar_backend_run("analytic", t, p, &o, &r, &err), AR_EPLAN);
    ck_assert(strstr(err.message, "plan has 3 ranks but topology") == err.message);
    ar_plan_free(p);
    /* capacity: a missing level, and one too small */
    p = plan_new(4, 1, 100000);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), 1), AR_OK);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    o.buffer = AR_MEM_TCM;
    ck_assert_int_eq(ar_backend_run("analytic", t, p, &o, &r, &err), AR_EINVAL);
    ck_assert_str_eq(err.message, "model round has no tcm memory level");
    o.buffer = AR_MEM_SRAM; /* 2 x 400000 bytes fit 1000000 */
    ck_assert_int_eq(ar_backend_run("analytic", t, p, &o, &r, &err), AR_OK);
    EQ(r.time_s, LAUNCH + 10 * NS + 4.0 / 4000e9 + 4.0 / 4000e9);
    p->scratch_elems = 100000; /* 3 x 400000 do not */
    ck_assert_int_eq(ar_backend_run("analytic", t, p, &o, &r, &err), AR_ELIMIT);
    ck_assert(strstr(err.message, "buffers need 1200000 bytes on device d0 but its sram holds 1000000") != NULL);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

Suite *suite_analytic(void) {
    Suite *s = suite_create("analytic");
    TCase *tc = tcase_create("analytic_execute");
    tcase_add_test(tc, test_copy_one_link);
    tcase_add_test(tc, test_pull_channel_bound);
    tcase_add_test(tc, test_two_sources);
    tcase_add_test(tc, test_local_memory);
    tcase_add_test(tc, test_signal_chain);
    tcase_add_test(tc, test_arrival_order);
    tcase_add_test(tc, test_no_contention);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}
