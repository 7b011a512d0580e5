/* algos: every algorithm on every topology it accepts passes the verifier (and the
 * ref backend with real data); refusals name the missing property; center_root's
 * centre beats a corner. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arsim/arsim.h"
#include "tests/suites.h"

static ar_topo_t *topo(const char *spec) { return tu_topo_open(spec, NULL); }

/* Build, verify, and (small plans) run on ref with a float64 check. */
static void build_coll_ok(const char *algo, ar_coll_t coll, const ar_topo_t *t, uint64_t count, ar_dtype_t dt,
                          int channels, int run_ref) {
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
    o.channels = channels;
    o.coll = coll;
    ar_plan_t *p = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    int rc = ar_algo_build(algo, t, count, dt, &o, &p, &e);
    ck_assert_msg(rc == AR_OK, "%s on %s count %llu: build: %s", algo, t->name,
                  (unsigned long long)count, e.message);
    ck_assert_int_eq(p->nranks, t->nranks);
    ck_assert_uint_eq(p->count, count);
    rc = ar_plan_verify(p, &e);
    ck_assert_msg(rc == AR_OK, "%s on %s count %llu %s ch %d: verify: %s", algo, t->name,
                  (unsigned long long)count, ar_dtype_name(dt), channels, e.message);
    if (run_ref && ar_backend_find("ref")) {
        ar_run_opts_t ro = AR_RUN_OPTS_DEFAULT;
        ro.check = 1;
        ar_result_t res;
        memset(&res, 0, sizeof res);
        rc = ar_backend_run("ref", t, p, &ro, &res, &e);
        ck_assert_msg(rc == AR_OK, "%s on %s: ref: %s", algo, t->name, e.message);
        ck_assert_msg(res.checked && res.check_ok, "%s on %s count %llu: ref check: %s", algo,
                      t->name, (unsigned long long)count, res.check_msg);
        ar_result_free(&res);
    }
    ck_assert_int_eq(p->coll, coll);
    ar_plan_free(p);
}

static void build_ok(const char *algo, const ar_topo_t *t, uint64_t count, ar_dtype_t dt, int channels, int run_ref) {
    build_coll_ok(algo, AR_COLL_ALLREDUCE, t, count, dt, channels, run_ref);
}

static void refuse(const char *algo, const char *spec, const char *msg) {
    ar_topo_t *t = topo(spec);
    ar_plan_t *p = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
    int rc = ar_algo_build(algo, t, 100, AR_FP32, &o, &p, &e);
    ck_assert_msg(rc == AR_EUNFIT, "%s on %s: want AR_EUNFIT, got %d (%s)", algo, spec, rc, e.message);
    ck_assert_msg(strstr(e.message, msg), "%s on %s: message \"%s\" lacks \"%s\"", algo, spec,
                  e.message, msg);
    ck_assert_ptr_null(p);
    ar_topo_free(t);
}

/* Which topologies each algorithm accepts. */
static const struct {
    const char *algo;
    const char *specs[16];
} fits[] = {
    {"ring", {"ring_1d:1", "ring_1d:2", "ring_1d:5", "ring_1d:7", "torus_2d:2x3", "torus_2d:3x2",
              "torus_2d:5x3", "torus_2d:3x3", "mesh_2d:2x3", "mesh_2d:3x2", "full:5", "switch:4",
              "h200_pair", "mesh_2d:3x3", "mesh_2d:5x3", NULL}},
    {"torus2d", {"torus_2d:2x3", "torus_2d:3x2", "torus_2d:5x3", "torus_2d:3x3", "torus_2d:1x1",
                 "full:6", "switch:7", "full:2", "mesh_2d:2x3", "mesh_2d:3x3", "ring_1d:6", NULL}},
    {"mesh2d", {"mesh_2d:2x3", "mesh_2d:3x2", "mesh_2d:5x3", "mesh_2d:3x3", "mesh_2d:1x5",
                "torus_2d:3x3", "torus_2d:2x3", "full:4", "mesh_2d:1x1", "mesh_2d:2x1", "ring_1d:6",
                NULL}},
    {"1stage", {"full:1", "full:2", "full:3", "full:5", "switch:8", "ring_1d:3", "h200_pair", "ring_1d:5",
                "ring_1d:13", "torus_2d:5x3", "torus_2d:3x3", "mesh_2d:3x3", NULL}},
    {"oneshot", {"full:4", NULL}},
    {"2stage", {"full:1", "full:2", "full:3", "full:7", "switch:6", "ring_1d:3", "ring_1d:13",
                "torus_2d:5x3", "mesh_2d:2x3", "mesh_2d:3x3", NULL}},
    {"twoshot", {"switch:4", NULL}},
    {"center_root", {"ring_1d:1", "ring_1d:2", "ring_1d:7", "torus_2d:2x3", "torus_2d:3x2",
                     "torus_2d:5x3", "mesh_2d:3x3", "mesh_2d:5x3", "full:5", "switch:4", NULL}},
    {"naive", {"ring_1d:1", "ring_1d:2", "ring_1d:5", "mesh_2d:3x3", "switch:3", NULL}},
};

START_TEST(test_algo_fits) {
    const ar_dtype_t dts[] = {AR_FP32, AR_BF16, AR_FP16};
    for (size_t a = 0; a < sizeof fits / sizeof fits[0]; a++)
        for (int s = 0; fits[a].specs[s]; s++) {
            ar_topo_t *t = topo(fits[a].specs[s]);
            int P = t->nranks;
            uint64_t counts[] = {1, 7, (uint64_t)(P > 1 ? P - 1 : 1), (uint64_t)P + 1, 1001};
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
                build_ok(fits[a].algo, t, counts[c], dts[c % 3], 0, 1);
            /* several channels, and chunking that leaves tails */
            build_ok(fits[a].algo, t, 1001, AR_BF16, 3, 1);
            build_ok(fits[a].algo, t, 4093, AR_FP32, 2, 0);
            ar_topo_free(t);
        }
}
END_TEST

START_TEST(test_algo_chunked) {
    /* small chunks force many pipeline groups */
    const char *cases[][2] = {{"ring", "torus_2d:3x2"}, {"torus2d", "torus_2d:3x3"},
                              {"mesh2d", "mesh_2d:3x3"}, {"mesh2d", "mesh_2d:2x3"},
                              {"center_root", "torus_2d:5x3"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_topo_t *t = topo(cases[i][1]);
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        o.channels = 2;
        o.chunk_bytes = 64;
        ar_plan_t *p = NULL;
        ar_error_t e;
        ck_assert_int_eq(ar_algo_build(cases[i][0], t, 3001, AR_FP32, &o, &p, &e), AR_OK);
        int rc = ar_plan_verify(p, &e);
        ck_assert_msg(rc == AR_OK, "%s on %s chunked: %s", cases[i][0], cases[i][1], e.message);
        ar_plan_free(p);
        ar_topo_free(t);
    }
}
END_TEST

/* The pipelined 1stage/2stage lanes: small chunks leave many chunks and ragged
 * tails; verified (two executions) and run on ref for three executions. */
START_TEST(test_algo_shots_pipelined) {
    const char *algos[] = {"1stage", "2stage"};
    const char *specs[] = {"full:2", "full:3", "switch:5"};
    for (int a = 0; a < 2; a++)
        for (int i = 0; i < 3; i++) {
            ar_topo_t *t = topo(specs[i]);
            ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
            o.channels = 2;
            o.chunk_bytes = 56; /* 14 fp32, 28 bf16 */
            for (int d = 0; d < 2; d++) {
                ar_dtype_t dt = d ? AR_BF16 : AR_FP32;
                ar_plan_t *p = NULL;
                ar_error_t e;
                ck_assert_int_eq(ar_algo_build(algos[a], t, 1001, dt, &o, &p, &e), AR_OK);
                /* lane of ~500 elements in chunks of 14 or 28: many WAITs with counts > 1 */
                uint64_t maxc = 0;
                for (uint32_t k = 0; k < p->nops; k++)
                    if (p->ops[k].code == AR_OP_WAIT && p->ops[k].count > maxc) maxc = p->ops[k].count;
                ck_assert_msg(maxc >= 17, "%s on %s: %llu chunks, want many", algos[a], specs[i],
                              (unsigned long long)maxc);
                int rc = ar_plan_verify(p, &e);
                ck_assert_msg(rc == AR_OK, "%s on %s pipelined: %s", algos[a], specs[i], e.message);
                ar_run_opts_t ro = AR_RUN_OPTS_DEFAULT;
                ro.check = 1;
                ro.iters = 3;
                ar_result_t res;
                memset(&res, 0, sizeof res);
                rc = ar_backend_run("ref", t, p, &ro, &res, &e);
                ck_assert_msg(rc == AR_OK && res.check_ok, "%s on %s pipelined: ref: %s %s", algos[a],
                              specs[i], e.message, res.check_msg);
                ar_result_free(&res);
                ar_plan_free(p);
            }
            ar_topo_free(t);
        }
}
END_TEST

/* A push phase's SIGNALs: with COPYs of up to 16 KB a channel issues its COPYs first and
 * then one SIGNAL per peer (one release for the lot); with longer COPYs each is followed
 * by its peer's SIGNAL. Rank 0 of 4, one channel, one chunk: its first phase pushes to
 * ranks 1, 2, 3 in that order (2stage a quarter of the input each, 1stage all of it).
 * Every plan verifies and reduces exactly. */
START_TEST(test_algo_push_signal_order) {
    ar_topo_t *t = topo("full:4");
    const struct {
        const char *algo;
        uint64_t count, copy_n; /* bf16 */
        int batched;
    } cases[] = {{"2stage", 32768, 8192, 1}, {"2stage", 32776, 8192, 0},
                 {"1stage", 8192, 8192, 1},  {"1stage", 8200, 8200, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        o.channels = 1;
        ar_plan_t *p = NULL;
        ar_error_t e;
        ck_assert_int_eq(ar_algo_build(cases[i].algo, t, cases[i].count, AR_BF16, &o, &p, &e), AR_OK);
        const ar_chan_t *ch = ar_plan_chan(p, 0, 0);
        ck_assert_uint_ge(ch->nops, 6);
        for (int k = 0; k < 6; k++) {
            const ar_op_t *op = &p->ops[ch->first + k];
            const int batched = cases[i].batched;
            int want_code = batched ? (k < 3 ? AR_OP_COPY : AR_OP_SIGNAL) : (k % 2 ? AR_OP_SIGNAL : AR_OP_COPY);
            int want_peer = batched ? k % 3 + 1 : k / 2 + 1;
            ck_assert_msg((int)op->code == want_code && op->dst.rank == want_peer,
                          "%s count %llu op %d: %s to rank %d, want %s to rank %d", cases[i].algo,
                          (unsigned long long)cases[i].count, k, ar_op_name(op->code), op->dst.rank,
                          ar_op_name(want_code), want_peer);
            if (op->code == AR_OP_COPY && k < 2) ck_assert_uint_eq(op->n, cases[i].copy_n);
        }
        ck_assert_int_eq(ar_plan_verify(p, &e), AR_OK);
        ar_run_opts_t ro = AR_RUN_OPTS_DEFAULT;
        ro.check = 1;
        ar_result_t res;
        memset(&res, 0, sizeof res);
        ck_assert_int_eq(ar_backend_run("ref", t, p, &ro, &res, &e), AR_OK);
        ck_assert_msg(res.check_ok, "%s count %llu: %s", cases[i].algo, (unsigned long long)cases[i].count,
                      res.check_msg);
        ar_result_free(&res);
        ar_plan_free(p);
    }
    ar_topo_free(t);
}
END_TEST

/* 1stage takes the "done reading" acknowledgement at the start of the next
 * execution (WAIT count 0) and ends without a barrier: every channel starts with
 * one such WAIT per peer and ends with a SIGNAL. Pointing those WAITs at a flag
 * that does not order the next push after the peer's reduction must make the
 * verifier report the race between executions. */
START_TEST(test_algo_oneshot_deferred_ack) {
    const char *specs[] = {"full:2", "full:4"};
    for (int i = 0; i < 2; i++) {
        ar_topo_t *t = topo(specs[i]);
        int P = t->nranks;
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        o.channels = 2;
        o.slots = 1; /* two slots need no acknowledgement: test_algo_oneshot_slots */
        ar_plan_t *p = NULL;
        ar_error_t e;
        ck_assert_int_eq(ar_algo_build("1stage", t, 4096, AR_BF16, &o, &p, &e), AR_OK);
        for (int r = 0; r < P; r++)
            for (int c = 0; c < 2; c++) {
                const ar_chan_t *ch = ar_plan_chan(p, r, c);
                for (int k = 0; k < P - 1; k++) {
                    const ar_op_t *op = &p->ops[ch->first + k];
                    ck_assert_int_eq(op->code, AR_OP_WAIT);
                    ck_assert_uint_eq(op->count, 0);
                }
                ck_assert_int_eq(p->ops[ch->first + ch->nops - 1].code, AR_OP_SIGNAL);
            }
        ck_assert_int_eq(ar_plan_verify(p, &e), AR_OK);
        /* retarget the count-0 WAITs to the data flag of the same peer (flag - P) */
        for (uint32_t k = 0; k < p->nops; k++)
            if (p->ops[k].code == AR_OP_WAIT && p->ops[k].count == 0) p->ops[k].flag -= (uint32_t)P;
        int rc = ar_plan_verify(p, &e);
        ck_assert_msg(rc == AR_EPLAN && strstr(e.message, "race"), "%s without the ack: %d %s", specs[i],
                      rc, e.message);
        ar_plan_free(p);
        ar_topo_free(t);
    }
}
END_TEST

/* An odd count cut into lanes, shards and pieces: every data op of 64 elements or more starts
 * on a whole 8-element vector in every buffer (ar__split cuts there, slots are 256-byte
 * blocks apart), so the GPU executor runs it as vectors, with a scalar tail at the very end of
 * the vector at most; only the cuts of a lane's last group of pieces, where it is too short,
 * are exact. One of 4096 elements or more starts on a whole 64-element line (128 bytes of
 * bf16), where a GPU streams it fastest. */
START_TEST(test_algo_cuts_whole_vectors) {
    const char *algos[] = {"ring", "1stage", "2stage", "torus2d", "mesh2d", "center_root", "naive"};
    const char *specs[] = {"full:3", "torus_2d:3x2"};
    int built = 0;
    for (size_t s = 0; s < 2; s++)
        for (size_t i = 0; i < sizeof algos / sizeof algos[0]; i++) {
            ar_topo_t *t = topo(specs[s]);
            ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
            o.channels = 3;
            ar_plan_t *p = NULL;
            ar_error_t e;
            if (ar_algo_build(algos[i], t, 1000003, AR_BF16, &o, &p, &e) != AR_OK) {
                ar_topo_free(t);
                continue;
            }
            built++;
            uint32_t data = 0;
            for (uint32_t k = 0; k < p->nops; k++) {
                const ar_op_t *op = &p->ops[k];
                if (!ar_op_moves_data(op)) continue;
                data++;
                const uint64_t grain = op->n >= 4096 ? 64 : 8;
                for (uint32_t j = 0; j <= op->nsrc && op->n >= 64; j++)
                    ck_assert_msg(ar_op_operand(p, op, j)->off % grain == 0,
                                  "%s on %s: op %u of %llu elements, operand %u at element %llu", algos[i], specs[s],
                                  k, (unsigned long long)op->n, j, (unsigned long long)ar_op_operand(p, op, j)->off);
            }
            ck_assert_uint_gt(data, 0);
            ck_assert_int_eq(ar_plan_verify(p, &e), AR_OK);
            ar_plan_free(p);
            ar_topo_free(t);
        }
    ck_assert_int_ge(built, 10);
}
END_TEST

/* Pipelined lanes alike: 1stage and 2stage at 16777259 bf16 elements on 16 lanes (about 2 MB a
 * lane, the pipelining threshold) chunk every lane, or none, by the mean lane, in whole
 * 64-element lines: rank 0's channels hold as many ops each, and every op of 4096 elements or
 * more starts on a line. Lanes cut on lines are 1048555 to 1048640 elements: chunked each by
 * its own length, the last (under 2 MB) stood whole and the others in chunks of a sixteenth,
 * off the lines where the lane is not a multiple of 1024 elements. */
START_TEST(test_algo_pipe_lanes_alike) {
    const char *algos[] = {"1stage", "2stage"};
    for (size_t i = 0; i < 2; i++) {
        ar_topo_t *t = topo("full:2");
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        o.channels = 16;
        ar_plan_t *p = NULL;
        ar_error_t e;
        ck_assert_int_eq(ar_algo_build(algos[i], t, 16777259, AR_BF16, &o, &p, &e), AR_OK);
        const uint32_t first = p->chans[0].nops;
        ck_assert_uint_gt(first, 8); /* pipelined: many chunks a lane */
        for (int c = 0; c < p->nchannels; c++)
            ck_assert_msg(p->chans[c].nops == first, "%s: channel %d holds %u ops, channel 0 %u", algos[i], c,
                          p->chans[c].nops, first);
        for (uint32_t k = 0; k < p->nops; k++) {
            const ar_op_t *op = &p->ops[k];
            if (!ar_op_moves_data(op) || op->n < 4096) continue;
            for (uint32_t j = 0; j <= op->nsrc; j++)
                ck_assert_msg(ar_op_operand(p, op, j)->off % 64 == 0, "%s: op %u of %llu elements, operand %u at %llu",
                              algos[i], k, (unsigned long long)op->n, j,
                              (unsigned long long)ar_op_operand(p, op, j)->off);
        }
        ck_assert_int_eq(ar_plan_verify(p, &e), AR_OK);
        ar_plan_free(p);
        ar_topo_free(t);
    }
}
END_TEST

/* Small 1stage plans push into SCRATCH slots by execution parity: twice the
 * SCRATCH, every push and every read of a pushed copy an epoch-parity address,
 * no acknowledgement flags (the data flags of the next execution order the reuse
 * of a slot two executions later). Proven by the verifier over three executions,
 * run by ref and analytic; collapsing the two slots into one (parity offset 0)
 * must make the verifier report the race between executions. */
START_TEST(test_algo_oneshot_slots) {
    const char *specs[] = {"full:2", "full:4", "switch:3"};
    for (int i = 0; i < 3; i++) {
        ar_topo_t *t = topo(specs[i]);
        const uint64_t P = (uint64_t)t->nranks, count = 4099;
        for (int piped = 0; piped < 2; piped++) {
            ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
            o.channels = 3;
            if (piped) o.chunk_bytes = 512; /* 256 bf16 elements: 5 or 6 chunks a lane of 1280-1411 */
            ar_plan_t *p = NULL;
            ar_error_t e;
            ck_assert_int_eq(ar_algo_build("1stage", t, count, AR_BF16, &o, &p, &e), AR_OK);
            /* a peer's slot every 4224 elements: 4099 rounded up to whole 256-byte blocks */
            const uint64_t stride = 4224;
            ck_assert_uint_eq(p->scratch_elems, 2 * P * stride);
            ck_assert_uint_eq(p->parity_elems, P * stride);
            uint32_t npar = 0;
            for (uint32_t k = 0; k < p->nops; k++) {
                const ar_op_t *op = &p->ops[k];
                ck_assert_msg(op->code != AR_OP_WAIT || op->count > 0, "%s: WAIT count 0 left", specs[i]);
                if (op->code == AR_OP_COPY) {
                    ck_assert_uint_eq(op->dst.buf, AR_BUF_SCRATCH | AR_ADDR_PARITY);
                    npar++;
                }
                if (op->code == AR_OP_REDUCE)
                    for (uint32_t j = 1; j < op->nsrc; j++)
                        ck_assert_uint_eq(p->srcs[op->src + j].buf, AR_BUF_SCRATCH | AR_ADDR_PARITY);
            }
            ck_assert_uint_ge(npar, (uint32_t)(P * (P - 1) * 3 * (piped ? 5 : 1)));
            ck_assert_msg(ar_plan_verify(p, &e) == AR_OK, "%s: verify: %s", specs[i], e.message);
            for (int b = 0; b < 2; b++) {
                ar_run_opts_t ro = AR_RUN_OPTS_DEFAULT;
                ro.check = 1;
                ro.iters = 5;
                ar_result_t res;
                memset(&res, 0, sizeof res);
                int rc = ar_backend_run(b ? "analytic" : "ref", t, p, &ro, &res, &e);
                ck_assert_msg(rc == AR_OK && (b ? res.time_s > 0 : res.check_ok), "%s %s: %s %s", specs[i],
                              b ? "analytic" : "ref", e.message, res.check_msg);
                ar_result_free(&res);
            }
            /* One piece a lane: one slot races. (In 6 chunks a rank's next push of
             * chunk k waits, through the data flags, for the peer's reduction of
             * chunk k: k <= n - 3 by the peer's push of chunk n - 1, later chunks
             * by its first push of the next execution; the verifier proves that.) */
            p->parity_elems = 0;
            ar_error_clear(&e);
            int rc = ar_plan_verify(p, &e);
            if (!piped)
                ck_assert_msg(rc == AR_EPLAN && strstr(e.message, "race between executions"),
                              "%s with one slot: %d %s", specs[i], rc, e.message);
            else
                ck_assert_msg(rc == AR_OK, "%s pipelined with one slot: %s", specs[i], e.message);
            ar_plan_free(p);
        }
        /* one slot when asked, or past 4 MB a rank */
        for (int big = 0; big < 2; big++) {
            ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
            o.channels = 2;
            o.slots = big ? 0 : 1;
            const uint64_t n = big ? (4u << 20) / 2 + 1 : count;
            ar_plan_t *p = NULL;
            ar_error_t e;
            ck_assert_int_eq(ar_algo_build("1stage", t, n, AR_BF16, &o, &p, &e), AR_OK);
            ck_assert_uint_eq(p->scratch_elems, P * ((n + 127) / 128 * 128)); /* whole 256-byte blocks a slot */
            ck_assert_uint_eq(p->parity_elems, 0);
            ar_plan_free(p);
        }
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        o.slots = 3;
        ar_plan_t *p = NULL;
        ar_error_t e;
        ck_assert_int_eq(ar_algo_build("1stage", t, count, AR_BF16, &o, &p, &e), AR_EINVAL);
        ck_assert_msg(strstr(e.message, "1stage: 3 SCRATCH slots, want 1 or 2"), "%s", e.message);
        ar_topo_free(t);
    }
}
END_TEST

/* Odd counts: every COPY and REDUCE of every algorithm has all its operands at one alignment
 * within 16 bytes (the GPU executor moves them as vectors then, element by element else). */
START_TEST(test_algo_operands_aligned) {
    const char *cases[][2] = {{"ring", "ring_1d:5"}, {"torus2d", "torus_2d:3x2"}, {"mesh2d", "mesh_2d:3x3"},
                              {"1stage", "full:4"}, {"2stage", "full:3"}, {"center_root", "torus_2d:3x3"},
                              {"naive", "full:3"}};
    const ar_dtype_t dts[] = {AR_FP32, AR_BF16};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int d = 0; d < 2; d++) {
            ar_topo_t *t = topo(cases[i][1]);
            const uint64_t es = ar_dtype_size(dts[d]);
            for (int slots = 1; slots <= 2; slots++) {
                ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
                o.channels = 2;
                o.slots = strcmp(cases[i][0], "1stage") ? 0 : slots;
                ar_plan_t *p = NULL;
                ar_error_t e;
                ck_assert_int_eq(ar_algo_build(cases[i][0], t, 65537, dts[d], &o, &p, &e), AR_OK);
                for (uint32_t k = 0; k < p->nops; k++) {
                    const ar_op_t *op = &p->ops[k];
                    if (op->code != AR_OP_COPY && op->code != AR_OP_REDUCE) continue;
                    for (uint64_t epoch = 0; epoch < 2; epoch++) {
                        const uint64_t at = ar_addr_at(p, op->dst, epoch).off * es % 16;
                        for (uint32_t s = 0; s < op->nsrc; s++)
                            ck_assert_msg(ar_addr_at(p, p->srcs[op->src + s], epoch).off * es % 16 == at,
                                          "%s on %s, %s: op %u source %u at another alignment than its destination",
                                          cases[i][0], cases[i][1], ar_dtype_name(dts[d]), k, s);
                    }
                }
                ar_plan_free(p);
            }
            ar_topo_free(t);
        }
}
END_TEST

START_TEST(test_algo_refuse) {
    refuse("innet", "switch:4", "innet: in-network reduction needs switches that reduce (model key switch_reduce: 1)");
    ar_topo_t *t = topo("full:4");
    ar_plan_t *p = NULL;
    ar_error_t e;
    ck_assert_int_eq(ar_algo_build("allgather", t, 10, AR_FP32, NULL, &p, &e), AR_EINVAL);
    ck_assert(strstr(e.message, "unknown algorithm 'allgather'"));
    ck_assert_int_eq(ar_algo_build("ring", t, 0, AR_FP32, NULL, &p, &e), AR_EINVAL);
    ar_topo_free(t);
    t = topo("ring_1d:4"); /* switches that add, but no switch */
    t->model->switch_reduce = 1;
    ck_assert_int_eq(ar_algo_build("innet", t, 10, AR_FP32, NULL, &p, &e), AR_EUNFIT);
    ck_assert_msg(strstr(e.message, "innet: in-network reduction needs a switch linked to every device that holds a rank"),
                  "%s", e.message);
    ar_topo_free(t);
    /* 1024 ranks a device: the root links to its device's 1023 and four neighbours' 1024
     * each (5119 children); each rank's flags are its own, at most two per child and four,
     * so the tree holds at most 6P - 2 a lane (it took 2 x 5119 + 4 on every rank, 1.7e8,
     * and was refused) */
    t = topo("torus_2d:4x4");
    ck_assert_int_eq(ar_topo_place_blocks(t, 16384, &e), AR_OK);
    ar_algo_opts_t one = AR_ALGO_OPTS_DEFAULT;
    ar_plan_size_t size;
    memset(&size, 0, sizeof size);
    one.channels = 1;
    one.sizing = &size;
    ck_assert_int_eq(ar_algo_build("center_root", t, 4096, AR_BF16, &one, &p, &e), AR_OK);
    ck_assert_msg(size.flag_slots >= 3u * 16384u && size.flag_slots <= 6u * 16384u - 2u, "%llu flags",
                  (unsigned long long)size.flag_slots);
    ck_assert_uint_eq(size.nflags, 2u * 5119u + 4u);
    ar_plan_free(p);
    ar_plan_size_free(&size);
    ar_topo_free(t);
}
END_TEST

/* Where no ring of neighbours exists (a mesh with an odd device count, no wrap-around
 * links) ring takes the grid's snake, whose one step between non-neighbours (routed by
 * the backends) is the shorter way back: min(W, H) - 1 hops. Every other step is a
 * link. */
START_TEST(test_ring_routed_step) {
    static const struct { const char *spec; int jump; } cases[] = {
        {"mesh_2d:3x3", 2}, {"mesh_2d:5x3", 2}, {"mesh_2d:3x7", 2}, {"mesh_2d:2x3", 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_topo_t *t = topo(cases[i].spec);
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        o.channels = 1;
        ar_plan_t *p = NULL;
        ar_error_t e;
        ck_assert_int_eq(ar_algo_build("ring", t, 1000, AR_FP32, &o, &p, &e), AR_OK);
        int far = 0, far_hops = 0;
        for (int r = 0; r < p->nranks; r++) {
            const ar_chan_t *c = &p->chans[r * p->nchannels];
            int peer = -1; /* the one rank this rank's ops reach (its ring successor) */
            for (uint32_t k = c->first; k < c->first + c->nops; k++) {
                const ar_op_t *op = &p->ops[k];
                if (op->code != AR_OP_COPY && op->code != AR_OP_REDUCE) continue;
                for (uint32_t s = 0; s <= op->nsrc; s++) {
                    const ar_addr_t *a = ar_op_operand(p, op, s);
                    if (a->rank == r) continue;
                    ck_assert_msg(peer < 0 || peer == a->rank, "%s: rank %d reaches %d and %d", cases[i].spec, r,
                                  peer, a->rank);
                    peer = a->rank;
                }
            }
            const int h = ar_topo_rank_hops(t, r, peer);
            if (h > 1) {
                far++;
                far_hops = h;
            }
        }
        ck_assert_int_eq(far, cases[i].jump ? 1 : 0);
        ck_assert_int_eq(far_hops, cases[i].jump);
        ar_plan_free(p);
        ar_topo_free(t);
    }
}
END_TEST

/* 2stage pulls its reduce-scatter where the device's memory, not its links, bounds the
 * pushes: accel_tcm's HBM (1.6 TB/s) against full:8's seven 100 GB/s links per device
 * (pushing moves 4.8 S through the memory, 3.0 ms at 1 GB, the links 1.75 S, 2.7 ms).
 * Then no SCRATCH, every rank's REDUCE reads its slice of every rank's IN, and the results
 * are exact; with the buffers in TCM (8 TB/s), or on a GPU model whose memory outruns its
 * links (hgx_h100_8), it pushes through SCRATCH as before. */
START_TEST(test_twoshot_pulls) {
    static const struct { const char *spec, *model; ar_mem_t level; int pulls; } cases[] = {
        {"full:8", "accel_tcm", AR_MEM_HBM, 1},
        {"full:8", "accel_tcm", AR_MEM_TCM, 0},
        {"hgx_h100_8", NULL, AR_MEM_HBM, 0},
        {"full:3", "accel_tcm", AR_MEM_HBM, 0}, /* two links: 2.5 us of memory against 6.7 a MB */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_topo_t *t = tu_topo_open(cases[i].spec, cases[i].model);
        const uint64_t counts[] = {1, 7, 1001, 65537};
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
            o.buffer = cases[i].level;
            o.channels = 2;
            ar_plan_t *p = NULL;
            ar_error_t e;
            ck_assert_int_eq(ar_algo_build("2stage", t, counts[k], k % 2 ? AR_BF16 : AR_FP32, &o, &p, &e), AR_OK);
            ck_assert_msg((p->scratch_elems == 0) == cases[i].pulls, "%s, %s: scratch %llu", cases[i].spec,
                          ar_mem_name(cases[i].level), (unsigned long long)p->scratch_elems);
            int remote_reads = 0;
            for (uint32_t j = 0; j < p->nops; j++)
                if (p->ops[j].code == AR_OP_REDUCE)
                    for (uint32_t s = 0; s < p->ops[j].nsrc; s++) remote_reads += p->srcs[p->ops[j].src + s].buf == AR_BUF_IN &&
                                                                                   p->srcs[p->ops[j].src + s].rank != (int)p->ops[j].dst.rank;
            ck_assert_msg((remote_reads > 0) == cases[i].pulls, "%s: %d remote reads of IN", cases[i].spec, remote_reads);
            ck_assert_int_eq(ar_plan_verify(p, &e), AR_OK);
            ar_run_opts_t ro = AR_RUN_OPTS_DEFAULT;
            ro.check = 1;
            ro.iters = 2;
            ar_result_t res;
            ck_assert_int_eq(ar_backend_run("ref", t, p, &ro, &res, &e), AR_OK);
            ck_assert_msg(res.checked && res.check_ok, "%s count %llu: %s", cases[i].spec,
                          (unsigned long long)counts[k], res.check_msg);
            ar_result_free(&res);
            ar_plan_free(p);
        }
        ar_topo_free(t);
    }
}
END_TEST

/* A sizing build (plan.h) counts exactly what the real build holds: ops, sources, SIGNALs,
 * flags and scratch for every algorithm, topology, size and channel count, and its bytes are
 * the finished plan's own; asked to stop short, it stops and says so. */
START_TEST(test_algo_sizing) {
    const char *specs[] = {"torus_2d:4x4", "ring_1d:6", "full:8", "switch:5", "mesh_2d:3x4"};
    const uint64_t counts[] = {1000, 300001, 5000000};
    int compared = 0;
    for (size_t ti = 0; ti < sizeof specs / sizeof *specs; ti++) {
        ar_topo_t *t = topo(specs[ti]);
        t->model->switch_reduce = 1; /* innet too, where a switch joins every device */
        for (const ar_algo_t *const *a = ar_algo_all(); *a; a++)
            for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++)
                for (int ch = 1; ch <= 3; ch += 2) {
                    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
                    o.channels = ch;
                    ar_plan_t *p = NULL, *q = NULL;
                    ar_error_t e;
                    ar_error_clear(&e);
                    if (ar_algo_build((*a)->name, t, counts[ci], AR_FP32, &o, &p, &e) != AR_OK) continue;
                    ar_plan_size_t s;
                    memset(&s, 0, sizeof s);
                    o.sizing = &s;
                    ck_assert_int_eq(ar_algo_build((*a)->name, t, counts[ci], AR_FP32, &o, &q, &e), AR_OK);
                    ck_assert_ptr_eq(q->sizing, &s);
                    uint64_t signals = 0;
                    for (uint32_t i = 0; i < p->nops; i++) signals += p->ops[i].code == AR_OP_SIGNAL;
                    const uint64_t held = (uint64_t)p->nops * sizeof(ar_op_t) + (uint64_t)p->cap_srcs * sizeof(ar_addr_t) +
                                          (uint64_t)p->nranks * p->nchannels * (sizeof(ar_chan_t) + 2 * sizeof(void *)) +
                                          ar_plan_flag_slots(p) * sizeof(uint64_t) + (uint64_t)p->nranks * sizeof(uint32_t) +
                                          ((uint64_t)p->nranks + 1) * sizeof(uint64_t);
                    ck_assert_msg(s.ops == p->nops && s.srcs == p->nsrcs && s.signals == signals &&
                                      s.nflags == p->nflags && s.scratch_elems == p->scratch_elems &&
                                      s.host_elems == p->host_elems && s.bytes == held && p->cap_srcs == p->nsrcs &&
                                      !s.over,
                                  "%s on %s, %llu x %d: sized %llu ops %llu srcs %llu signals %u flags %llu bytes, "
                                  "built %u ops %u srcs %llu signals %u flags %llu bytes",
                                  (*a)->name, specs[ti], (unsigned long long)counts[ci], ch,
                                  (unsigned long long)s.ops, (unsigned long long)s.srcs, (unsigned long long)s.signals,
                                  s.nflags, (unsigned long long)s.bytes, p->nops, p->nsrcs,
                                  (unsigned long long)signals, p->nflags, (unsigned long long)held);
                    ar_plan_free(q);
                    /* stopped at half its ops */
                    memset(&s, 0, sizeof s);
                    s.max_ops = p->nops / 2;
                    q = NULL;
                    ck_assert_int_eq(ar_algo_build((*a)->name, t, counts[ci], AR_FP32, &o, &q, &e), AR_ELIMIT);
                    ck_assert_ptr_null(q);
                    ck_assert_msg(s.over && s.ops == s.max_ops + 1, "%s: over %d at %llu", (*a)->name, s.over,
                                  (unsigned long long)s.ops);
                    /* the buffers as set when it stopped: no more than the plan's, and all of
                     * them where the builder sets them before its ops (the capacity check
                     * reads them there: runner/case.c) */
                    ck_assert(s.scratch_elems <= p->scratch_elems && s.host_elems <= p->host_elems &&
                              s.in_elems == ar_plan_buf_elems(p, 0, AR_BUF_IN));
                    if (!strcmp((*a)->name, "center_root") || !strcmp((*a)->name, "naive"))
                        ck_assert_msg(s.scratch_elems == p->scratch_elems && s.host_elems == p->host_elems,
                                      "%s on %s: stopped with %llu scratch, %llu host elements (%llu, %llu)",
                                      (*a)->name, specs[ti], (unsigned long long)s.scratch_elems,
                                      (unsigned long long)s.host_elems, (unsigned long long)p->scratch_elems,
                                      (unsigned long long)p->host_elems);
                    ar_plan_free(p);
                    compared++;
                }
        ar_topo_free(t);
    }
    ck_assert_int_ge(compared, 120);
}
END_TEST

START_TEST(test_algo_find) {
    ck_assert_ptr_eq(ar_algo_find("oneshot"), ar_algo_find("1stage"));
    ck_assert_ptr_eq(ar_algo_find("twoshot"), ar_algo_find("2stage"));
    ck_assert_ptr_null(ar_algo_find("3stage"));
    int n = 0;
    for (const ar_algo_t *const *a = ar_algo_all(); *a; a++) n++;
    ck_assert_int_eq(n, 9);
}
END_TEST

/* Reduce-scatter and all-gather of the ranks' shards: ring and direct on every kind of
 * topology, counts with shards of unequal and empty length, several channels and small
 * chunks: verified, and run on ref against float64. */
START_TEST(test_coll_fits) {
    const char *specs[] = {"ring_1d:1", "ring_1d:2", "ring_1d:5", "torus_2d:3x2", "mesh_2d:3x3", "full:5",
                           "switch:4", "h200_pair"};
    const char *algos[] = {"ring", "direct"};
    for (int coll = AR_COLL_REDUCESCATTER; coll <= AR_COLL_ALLGATHER; coll++)
        for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
            ar_topo_t *t = topo(specs[s]);
            const int P = t->nranks;
            const uint64_t counts[] = {1, 7, (uint64_t)(P > 1 ? P - 1 : 1), (uint64_t)P + 1, 1001};
            for (size_t a = 0; a < 2; a++) {
                for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
                    build_coll_ok(algos[a], (ar_coll_t)coll, t, counts[c], (ar_dtype_t)(c % 3), 0, 1);
                build_coll_ok(algos[a], (ar_coll_t)coll, t, 1001, AR_BF16, 3, 1);
                /* many chunks a lane: the pipeline's groups */
                ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
                o.coll = (ar_coll_t)coll, o.channels = 2, o.chunk_bytes = 64;
                ar_plan_t *p = NULL;
                ar_error_t e;
                ck_assert_msg(ar_algo_build(algos[a], t, 4093, AR_FP32, &o, &p, &e) == AR_OK, "%s", e.message);
                ck_assert_msg(ar_plan_verify(p, &e) == AR_OK, "%s %s on %s, chunked: %s", algos[a],
                              ar_coll_name((ar_coll_t)coll), specs[s], e.message);
                ar_plan_free(p);
            }
            ar_topo_free(t);
        }
}
END_TEST

/* Three checked executions of p on ref: every rank's OUT equal to the float64 reference. */
static void assert_ref_exact(const ar_topo_t *t, const ar_plan_t *p, const char *algo, const char *spec) {
    ar_run_opts_t ro = AR_RUN_OPTS_DEFAULT;
    ro.check = 1;
    ro.iters = 3;
    ar_result_t res;
    ar_error_t e;
    memset(&res, 0, sizeof res);
    ck_assert_msg(ar_backend_run("ref", t, p, &ro, &res, &e) == AR_OK, "%s", e.message);
    ck_assert_msg(res.checked && res.check_ok && res.wrong == 0, "%s on %s: %s", algo, spec, res.check_msg);
    ar_result_free(&res);
}

/* The verifier holds a plan to its collective: each plan checked as another fails, saying
 * why; an algorithm asked for a collective it does not build says which do. */
/* matmul-allreduce with each algorithm: its allreduce laid out once per partition, the
 * product's partitions overlapped; verified, and on ref equal to the float64 sum of the
 * ranks' products. Multi-hop topologies and several ranks a device too. */
START_TEST(test_fused_plans) {
    static const struct { const char *spec; int ranks; } topos[] = {{"full:4", 4}, {"ring_1d:5", 5}, {"full:2", 4}};
    static const char *const algos[] = {"ring", "1stage", "2stage", "torus2d", "mesh2d", "center_root", "naive"};
    for (size_t ti = 0; ti < sizeof topos / sizeof *topos; ti++) {
        ar_topo_t *t = topo(topos[ti].spec);
        ar_error_t e;
        if (t->nranks != topos[ti].ranks) ck_assert_int_eq(ar_topo_place_blocks(t, topos[ti].ranks, &e), AR_OK);
        for (size_t ai = 0; ai < sizeof algos / sizeof *algos; ai++)
            for (int parts = 1; parts <= 4; parts *= 2)
                for (int dt = 0; dt < 2; dt++) {
                    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
                    o.coll = AR_COLL_MATMUL_ALLREDUCE;
                    o.gemm = (ar_gemm_t){12, 10, 33};
                    o.partitions = parts;
                    o.channels = dt ? 2 : 0;
                    ar_plan_t *p = NULL;
                    const ar_dtype_t dtype = dt ? AR_FP32 : AR_BF16;
                    const int rc = ar_algo_build(algos[ai], t, 120, dtype, &o, &p, &e);
                    if (rc == AR_EUNFIT) continue; /* torus2d, mesh2d: a grid of these ranks */
                    ck_assert_msg(rc == AR_OK, "%s on %s: %s", algos[ai], topos[ti].spec, e.message);
                    ck_assert_int_eq(p->coll, AR_COLL_MATMUL_ALLREDUCE);
                    ck_assert_uint_eq(ar_plan_buf_elems(p, 0, AR_BUF_IN), 12 * 33 + 33 * 10);
                    ck_assert_int_eq(p->partitions, parts);
                    ck_assert_msg(ar_plan_verify(p, &e) == AR_OK, "%s on %s, %d partitions: %s", algos[ai],
                                  topos[ti].spec, parts, e.message);
                    /* one product per partition per rank */
                    uint32_t computes = 0;
                    for (uint32_t i = 0; i < p->nops; i++) computes += p->ops[i].code == AR_OP_COMPUTE;
                    ck_assert_uint_eq(computes, (uint32_t)(parts * t->nranks));
                    assert_ref_exact(t, p, algos[ai], topos[ti].spec);
                    ar_plan_free(p);
                }
        ar_topo_free(t);
    }
}
END_TEST

/* allgather-matmul with each algorithm that gathers: A's rows gathered into SCRATCH, each
 * rank's multiplied by this rank's B as they arrive (one product a rank); verified, and on ref
 * equal to the float64 product, several executions back to back. Without its arrival WAITs the
 * plan races; without the WAITs for the products of the execution before, the next gather
 * overwrites rows a product may still read. */
START_TEST(test_gather_plans) {
    static const struct { const char *spec; int ranks; } topos[] = {{"full:4", 4}, {"ring_1d:5", 5}, {"full:2", 4}};
    static const char *const algos[] = {"ring", "direct"};
    for (size_t ti = 0; ti < sizeof topos / sizeof *topos; ti++) {
        ar_topo_t *t = topo(topos[ti].spec);
        ar_error_t e;
        if (t->nranks != topos[ti].ranks) ck_assert_int_eq(ar_topo_place_blocks(t, topos[ti].ranks, &e), AR_OK);
        for (size_t ai = 0; ai < sizeof algos / sizeof *algos; ai++)
            for (int dt = 0; dt < 2; dt++) {
                ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
                o.coll = AR_COLL_ALLGATHER_MATMUL;
                o.gemm = (ar_gemm_t){60, 10, 33};
                o.channels = dt ? 2 : 0;
                ar_plan_t *p = NULL;
                const ar_dtype_t dtype = dt ? AR_FP32 : AR_BF16;
                ck_assert_msg(ar_algo_build(algos[ai], t, 600, dtype, &o, &p, &e) == AR_OK, "%s on %s: %s", algos[ai],
                              topos[ti].spec, e.message);
                ck_assert_int_eq(p->coll, AR_COLL_ALLGATHER_MATMUL);
                ck_assert_uint_eq(ar_plan_buf_elems(p, 0, AR_BUF_IN), 60 * 33 + 33 * 10);
                ck_assert_msg(ar_plan_verify(p, &e) == AR_OK, "%s on %s: %s", algos[ai], topos[ti].spec, e.message);
                /* one product per rank's rows per rank, each of 60 / P rows */
                uint32_t computes = 0;
                for (uint32_t i = 0; i < p->nops; i++)
                    if (p->ops[i].code == AR_OP_COMPUTE) {
                        uint64_t m, n, k;
                        ar_op_gemm(&p->ops[i], &m, &n, &k);
                        ck_assert_uint_eq(m, 60 / (uint64_t)t->nranks);
                        computes++;
                    }
                ck_assert_uint_eq(computes, (uint32_t)(t->nranks * t->nranks));
                assert_ref_exact(t, p, algos[ai], topos[ti].spec);
                /* each guard taken out in turn: an arrival WAIT (count > 0), then a WAIT for the
                 * products before (count 0) */
                for (int guard = 0; guard < 2; guard++) {
                    ar_op_t *w = NULL;
                    for (uint32_t i = 0; i < p->nops && !w; i++)
                        if (p->ops[i].code == AR_OP_WAIT && (p->ops[i].count > 0) == (guard == 0) &&
                            p->ops[i].flag < (uint32_t)(t->nranks + t->nranks * t->nranks))
                            w = &p->ops[i];
                    ck_assert_ptr_nonnull(w);
                    const ar_op_t keep = *w;
                    w->count = 0, w->back = 1; /* met by the execution before */
                    ck_assert_msg(ar_plan_verify(p, &e) == AR_EPLAN, "%s on %s: guard %d removed, still verified",
                                  algos[ai], topos[ti].spec, guard);
                    *w = keep;
                }
                ar_plan_free(p);
            }
        ar_topo_free(t);
    }
    /* M must split evenly over the ranks; one partition a rank */
    ar_topo_t *t = topo("full:4");
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
    o.coll = AR_COLL_ALLGATHER_MATMUL;
    o.gemm = (ar_gemm_t){6, 10, 3};
    ar_plan_t *p = NULL;
    ar_error_t e;
    ck_assert_int_eq(ar_algo_build("ring", t, 60, AR_FP32, &o, &p, &e), AR_EUNFIT);
    ck_assert_msg(strstr(e.message, "M = 6 rows do not split evenly over 4 ranks"), "%s", e.message);
    o.gemm = (ar_gemm_t){8, 10, 3};
    o.partitions = 2;
    ck_assert_int_eq(ar_algo_build("ring", t, 80, AR_FP32, &o, &p, &e), AR_EUNFIT);
    ck_assert_msg(strstr(e.message, "one partition a rank"), "%s", e.message);
    o.partitions = 0;
    ck_assert_int_eq(ar_algo_build("2stage", t, 80, AR_FP32, &o, &p, &e), AR_EUNFIT);
    ck_assert_msg(strstr(e.message, "computes no allgather-matmul"), "%s", e.message);
    ar_topo_free(t);
}
END_TEST

/* The verifier refuses what a product does not compute: a left operand off a row, a product
 * in a plan with no GEMM, a product's operands read by a COPY. */
START_TEST(test_fused_verify_refuses) {
    ar_topo_t *t = topo("full:2");
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
    o.coll = AR_COLL_MATMUL_ALLREDUCE;
    o.gemm = (ar_gemm_t){8, 6, 5};
    o.partitions = 2;
    ar_plan_t *p = NULL;
    ar_error_t e;
    ck_assert_int_eq(ar_algo_build("ring", t, 48, AR_FP32, &o, &p, &e), AR_OK);
    ck_assert_int_eq(ar_plan_verify(p, &e), AR_OK);
    ar_op_t *c = NULL;
    for (uint32_t i = 0; i < p->nops && !c; i++)
        if (p->ops[i].code == AR_OP_COMPUTE) c = &p->ops[i];
    ck_assert_ptr_nonnull(c);
    p->srcs[c->src].off += 1; /* a row shifted by one element */
    ck_assert_int_eq(ar_plan_verify(p, &e), AR_EPLAN);
    ck_assert_msg(strstr(e.message, "not at a row"), "%s", e.message);
    p->srcs[c->src].off -= 1;
    p->srcs[c->src + 1].off -= 1; /* B one element early: A's last element */
    ck_assert_int_eq(ar_plan_verify(p, &e), AR_EPLAN);
    ck_assert_msg(strstr(e.message, "right operand is not rank"), "%s", e.message);
    p->srcs[c->src + 1].off += 1;
    p->coll = AR_COLL_ALLREDUCE;
    ck_assert_int_eq(ar_plan_verify(p, &e), AR_EPLAN);
    ck_assert_msg(strstr(e.message, "product in a plan whose GEMM"), "%s", e.message);
    ar_plan_free(p);
    /* a COPY of a product's operand into OUT: its IN is only a product's */
    p = NULL;
    ck_assert_int_eq(ar_plan_new("hand", 2, 1, 48, AR_FP32, &p), AR_OK);
    p->coll = AR_COLL_MATMUL_ALLREDUCE;
    p->gemm = o.gemm;
    p->in_elems = 8 * 5 + 5 * 6;
    for (int r = 0; r < 2; r++) ck_assert_int_eq(ar_plan_copy(p, r, 0, ar_addr(r, AR_BUF_OUT, 0), ar_addr(r, AR_BUF_IN, 0), 48), AR_OK);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    ck_assert_int_eq(ar_plan_verify(p, &e), AR_EPLAN);
    ck_assert_msg(strstr(e.message, "which only a COMPUTE reads"), "%s", e.message);
    ar_plan_free(p);
    /* M not divided by the partitions, and no product given */
    o.partitions = 3;
    ck_assert_int_eq(ar_algo_build("ring", t, 48, AR_FP32, &o, &p, &e), AR_EUNFIT);
    ck_assert_msg(strstr(e.message, "3 partitions do not divide M = 8"), "%s", e.message);
    o.gemm = (ar_gemm_t){0, 0, 0};
    ck_assert_int_eq(ar_algo_build("ring", t, 48, AR_FP32, &o, &p, &e), AR_EINVAL);
    ck_assert_msg(strstr(e.message, "needs its product's M, N and K"), "%s", e.message);
    ar_topo_free(t);
}
END_TEST

START_TEST(test_coll_verify_refuses) {
    ar_topo_t *t = topo("ring_1d:4");
    static const struct { const char *algo; ar_coll_t built, as; const char *why; } cases[] = {
        {"ring", AR_COLL_REDUCESCATTER, AR_COLL_ALLREDUCE, "holds no value"},
        {"ring", AR_COLL_ALLGATHER, AR_COLL_REDUCESCATTER, "misses the contribution"},
        {"ring", AR_COLL_ALLREDUCE, AR_COLL_ALLGATHER, "outside its shard"},
        {"direct", AR_COLL_REDUCESCATTER, AR_COLL_ALLGATHER, "outside its shard"},
        {"direct", AR_COLL_ALLGATHER, AR_COLL_ALLREDUCE, "misses the contribution"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        o.coll = cases[i].built;
        ar_plan_t *p = NULL;
        ar_error_t e;
        ck_assert_msg(ar_algo_build(cases[i].algo, t, 1000, AR_FP32, &o, &p, &e) == AR_OK, "%s", e.message);
        ck_assert_int_eq(ar_plan_verify(p, &e), AR_OK);
        p->coll = cases[i].as;
        ck_assert_int_eq(ar_plan_verify(p, &e), AR_EPLAN);
        ck_assert_msg(strstr(e.message, cases[i].why), "%s %s as %s: \"%s\" lacks \"%s\"", cases[i].algo,
                      ar_coll_name(cases[i].built), ar_coll_name(cases[i].as), e.message, cases[i].why);
        ar_plan_free(p);
    }
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
    ar_plan_t *p = NULL;
    ar_error_t e;
    ck_assert_int_eq(ar_algo_build("direct", t, 1000, AR_FP32, &o, &p, &e), AR_EUNFIT);
    ck_assert_msg(strstr(e.message, "direct computes no allreduce (ring, torus2d"), "%s", e.message);
    o.coll = AR_COLL_ALLGATHER;
    ck_assert_int_eq(ar_algo_build("2stage", t, 1000, AR_FP32, &o, &p, &e), AR_EUNFIT);
    ck_assert_msg(strstr(e.message, "2stage computes no allgather (ring, direct do)"), "%s", e.message);
    ck_assert_ptr_null(p);
    ar_topo_free(t);
}
END_TEST

/* Longest chain of dependent remote ops: a critical-path step count over the plan's
 * SIGNAL/WAIT edges, each COPY/REDUCE one step. */
static double critical_steps(const ar_plan_t *p) {
    /* greedy execution assigning times: op time = max(channel time, signal times) + 1 */
    int nch = p->nranks * p->nchannels;
    double *tch = calloc(nch, sizeof *tch);
    uint32_t *pc = calloc(nch, sizeof *pc);
    size_t nf = ar_plan_flag_slots(p);
    double **sig = calloc(nf, sizeof *sig);
    uint64_t *ns = calloc(nf, sizeof *ns);
    for (size_t f = 0; f < nf; f++) sig[f] = calloc(p->per_epoch[f] + 1, sizeof(double));
    int progress = 1;
    while (progress) {
        progress = 0;
        for (int ch = 0; ch < nch; ch++) {
            const ar_chan_t *c = &p->chans[ch];
            while (pc[ch] < c->nops) {
                const ar_op_t *op = &p->ops[c->first + pc[ch]];
                int r = ch / p->nchannels;
                if (op->code == AR_OP_WAIT) {
                    size_t f = ar_plan_flag(p, r, op->flag);
                    if (ns[f] < op->count) break;
                    /* the count-th signal by arrival time */
                    double tm = 0;
                    for (uint64_t i = 0; i < ns[f]; i++) {
                        int before = 0;
                        for (uint64_t j = 0; j < ns[f]; j++) before += sig[f][j] < sig[f][i];
                        if ((uint64_t)before < op->count && sig[f][i] > tm) tm = sig[f][i];
                    }
                    if (tm > tch[ch]) tch[ch] = tm;
                } else if (op->code == AR_OP_SIGNAL) {
                    size_t f = ar_plan_flag(p, op->dst.rank, op->flag);
                    sig[f][ns[f]++] = tch[ch];
                } else {
                    tch[ch] += 1;
                }
                pc[ch]++;
                progress = 1;
            }
        }
    }
    double m = 0;
    for (int ch = 0; ch < nch; ch++) if (tch[ch] > m) m = tch[ch];
    for (size_t f = 0; f < nf; f++) free(sig[f]);
    free(sig); free(ns); free(tch); free(pc);
    return m;
}

START_TEST(test_center_root_beats_corner) {
    const char *specs[] = {"torus_2d:5x3", "mesh_2d:5x3", "mesh_2d:3x3", "torus_2d:4x4"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        ar_topo_t *t = topo(specs[i]);
        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
        o.channels = 1;
        ar_plan_t *pc = NULL, *pk = NULL;
        ar_error_t e;
        uint64_t count = 1 << 16;
        ck_assert_int_eq(ar_algo_build("center_root", t, count, AR_BF16, &o, &pc, &e), AR_OK);
        o.root = 0; /* the corner */
        ck_assert_int_eq(ar_algo_build("center_root", t, count, AR_BF16, &o, &pk, &e), AR_OK);
        double sc = critical_steps(pc), sk = critical_steps(pk);
        int mesh = t->kind == AR_TOPO_MESH_2D;
        /* on a torus every node is a centre: equal; on a mesh the centre wins */
        if (mesh) ck_assert_msg(sc < sk, "%s: centre %g steps, corner %g", specs[i], sc, sk);
        else ck_assert_msg(sc <= sk, "%s: centre %g steps, corner %g", specs[i], sc, sk);
        if (ar_backend_find("analytic")) {
            ar_run_opts_t ro = AR_RUN_OPTS_DEFAULT;
            ar_result_t rc_, rk_;
            memset(&rc_, 0, sizeof rc_);
            memset(&rk_, 0, sizeof rk_);
            ck_assert_int_eq(ar_backend_run("analytic", t, pc, &ro, &rc_, &e), AR_OK);
            ck_assert_int_eq(ar_backend_run("analytic", t, pk, &ro, &rk_, &e), AR_OK);
            if (mesh)
                ck_assert_msg(rc_.time_s < rk_.time_s, "%s: centre %g s, corner %g s", specs[i],
                              rc_.time_s, rk_.time_s);
            else
                ck_assert_msg(rc_.time_s <= rk_.time_s * (1 + 1e-9), "%s: centre %g s, corner %g s",
                              specs[i], rc_.time_s, rk_.time_s);
            ar_result_free(&rc_);
            ar_result_free(&rk_);
        }
        ar_plan_free(pc);
        ar_plan_free(pk);
        ar_topo_free(t);
    }
}
END_TEST

/* --algo auto: 1stage up to 4 MB a rank with 2 ranks (to 1 MB at the model's channels),
 * 2stage past it, the host-staging
 * naive without P2P; channels shrink so several ranks per GPU stay resident (128 blocks).
 * On 4 GPUs 1stage to 1 MB, 2stage, then from 64 MB ring at the model's defaults
 * (channels 0), but 2stage where ranks share GPUs. */
START_TEST(test_algo_auto) {
    const char *a;
    int ch;
    ar_algo_auto(2, 2, 8192, 1, &a, &ch);
    ck_assert_str_eq(a, "1stage");
    ck_assert_int_eq(ch, 0); /* the model's, up to 1 MB */
    ar_algo_auto(2, 2, 2u << 20, 1, &a, &ch);
    ck_assert_str_eq(a, "1stage");
    ck_assert_int_eq(ch, 128);
    ar_algo_auto(2, 2, 4u << 20, 1, &a, &ch);
    ck_assert_str_eq(a, "1stage");
    ck_assert_int_eq(ch, 128);
    ar_algo_auto(2, 2, 8u << 20, 1, &a, &ch);
    ck_assert_str_eq(a, "2stage");
    ar_algo_auto(8, 2, 1u << 30, 1, &a, &ch);
    ck_assert_str_eq(a, "2stage");
    ck_assert_int_le(ch * 4, 128);
    ar_algo_auto(4, 4, 1u << 20, 1, &a, &ch);
    ck_assert_str_eq(a, "1stage");
    ck_assert_int_eq(ch, 64);
    ar_algo_auto(4, 4, 2u << 20, 1, &a, &ch);
    ck_assert_str_eq(a, "2stage");
    ar_algo_auto(4, 4, 32u << 20, 1, &a, &ch);
    ck_assert_str_eq(a, "2stage");
    ar_algo_auto(4, 4, 64u << 20, 1, &a, &ch);
    ck_assert_str_eq(a, "ring");
    ck_assert_int_eq(ch, 0);
    ar_algo_auto(8, 4, 64u << 20, 1, &a, &ch);
    ck_assert_str_eq(a, "2stage");
    ck_assert_int_gt(ch, 0);
    ar_algo_auto(2, 2, 8192, 0, &a, &ch);
    ck_assert_str_eq(a, "naive");
    ck_assert_ptr_nonnull(ar_algo_find(a));
}
END_TEST

Suite *suite_algos(void) {
    Suite *s = suite_create("algos");
    TCase *tc;
    tc = tcase_create("ar_algo_build");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_algo_fits);
    tcase_add_test(tc, test_algo_chunked);
    tcase_add_test(tc, test_algo_shots_pipelined);
    tcase_add_test(tc, test_algo_push_signal_order);
    tcase_add_test(tc, test_algo_oneshot_deferred_ack);
    tcase_add_test(tc, test_algo_oneshot_slots);
    tcase_add_test(tc, test_algo_cuts_whole_vectors);
    tcase_add_test(tc, test_algo_pipe_lanes_alike);
    tcase_add_test(tc, test_algo_operands_aligned);
    tcase_add_test(tc, test_algo_refuse);
    tcase_add_test(tc, test_ring_routed_step);
    tcase_add_test(tc, test_twoshot_pulls);
    tcase_add_test(tc, test_algo_sizing);
    suite_add_tcase(s, tc);
    tc = tcase_create("ar_algo_auto");
    tcase_add_test(tc, test_algo_auto);
    suite_add_tcase(s, tc);
    tc = tcase_create("ar_algo_find");
    tcase_add_test(tc, test_algo_find);
    tcase_add_test(tc, test_coll_fits);
    tcase_add_test(tc, test_coll_verify_refuses);
    tcase_add_test(tc, test_fused_plans);
    tcase_add_test(tc, test_gather_plans);
    tcase_add_test(tc, test_fused_verify_refuses);
    suite_add_tcase(s, tc);
    tc = tcase_create("center_root");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_center_root_beats_corner);
    suite_add_tcase(s, tc);
    return s;
}
