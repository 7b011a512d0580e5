/* ref backend and the backend registry: exact op semantics on hand-made plans,
 * the float64 check, deadlock detection, epochs, and (once the algorithms exist)
 * every algorithm x dtype on a few topologies. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "arsim/arsim.h"
#include "arsim/check.h"
#include "backends/internal.h"
#include "tests/suites.h"

/* A 2-rank pull allreduce of n elements: rank r reduces its half (r = 0 the first
 * n/2, r = 1 the rest) from both INs into its OUT, signals the peer, waits for the
 * peer's half and pulls it from the peer's OUT, then a closing barrier. `drop`
 * elements at the end of rank 0's pull are left out (a broken plan). */
static ar_plan_t *pull2(uint64_t n, ar_dtype_t dt, uint64_t drop) {
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("pull2", 2, 1, n, dt, &p), AR_OK);
    uint64_t h = n / 2;
    for (int r = 0; r < 2; r++) {
        int q = 1 - r;
        uint64_t off = r ? h : 0, len = r ? n - h : h;
        uint64_t qoff = q ? h : 0, qlen = q ? n - h : h;
        ar_addr_t src[2] = {ar_addr(0, AR_BUF_IN, off), ar_addr(1, AR_BUF_IN, off)};
        ck_assert_int_eq(ar_plan_reduce(p, r, 0, ar_addr(r, AR_BUF_OUT, off), src, 2, len), AR_OK);
        ck_assert_int_eq(ar_plan_signal(p, r, 0, q, 0), AR_OK);
        ck_assert_int_eq(ar_plan_wait(p, r, 0, 0, 1), AR_OK);
        ck_assert_int_eq(ar_plan_copy(p, r, 0, ar_addr(r, AR_BUF_OUT, qoff),
                                      ar_addr(q, AR_BUF_OUT, qoff), r == 0 ? qlen - drop : qlen),
                         AR_OK);
        ck_assert_int_eq(ar_plan_signal(p, r, 0, q, 1), AR_OK);
        ck_assert_int_eq(ar_plan_wait(p, r, 0, 1, 1), AR_OK);
    }
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    return p;
}

typedef struct bufs_s {
    void *in[8], *out[8];
} bufs_t;

static void bufs_alloc(bufs_t *b, int nranks, uint64_t n, ar_dtype_t dt, unsigned long seed) {
    for (int r = 0; r < nranks; r++) {
        b->in[r] = calloc(n, ar_dtype_size(dt));
        b->out[r] = calloc(n, ar_dtype_size(dt));
        ck_assert_ptr_nonnull(b->in[r]);
        ar_gen_fill(dt, seed, r, b->in[r], n);
    }
}

static void bufs_free(bufs_t *b, int nranks) {
    for (int r = 0; r < nranks; r++) {
        free(b->in[r]);
        free(b->out[r]);
    }
}

/* --- ar__ref_exec: exact semantics --- */

START_TEST(test_pull2_exact) {
    static const ar_dtype_t dts[] = {AR_BF16, AR_FP16, AR_FP32};
    const uint64_t n = 37; /* odd: unequal halves */
    ar_dtype_t dt = dts[_i];
    ar_plan_t *p = pull2(n, dt, 0);
    bufs_t b;
    bufs_alloc(&b, 2, n, dt, 7);
    ar_result_t res;
    memset(&res, 0, sizeof res);
    ar_error_t err;
    ck_assert_int_eq(ar__ref_exec(p, 1, (const void *const *)b.in, b.out, 1, &res, &err), AR_OK);
    ck_assert_int_eq(res.checked, 1);
    ck_assert_msg(res.check_ok, "check failed: %s", res.check_msg);
    ck_assert_uint_eq(res.ops_executed, p->nops);
    /* Exactly in0 + in1 in float32, rounded once, on both ranks. */
    unsigned char want[4];
    for (uint64_t i = 0; i < n; i++) {
        float s = (float)ar_elem_load(b.in[0], dt, i) + (float)ar_elem_load(b.in[1], dt, i);
        ar_elem_store(want, dt, 0, s);
        for (int r = 0; r < 2; r++)
            ck_assert_msg(memcmp((char *)b.out[r] + i * ar_dtype_size(dt), want,
                                 ar_dtype_size(dt)) == 0,
                          "%s rank %d element %d: %g != %g", ar_dtype_name(dt), r, (int)i,
                          ar_elem_load(b.out[r], dt, i), ar_elem_load(want, dt, 0));
    }
    ck_assert(res.max_rel_err <= ar_dtype_tolerance(dt, 2));
    bufs_free(&b, 2);
    ar_plan_free(p);
}
END_TEST

/* Inputs are uniform in [-1, 1], exactly the dtype's values, and differ by rank and seed. */
START_TEST(test_fill_inputs) {
    float a[1000], b[1000], c[1000];
    uint16_t h[1000];
    ar_gen_fill(AR_FP32, 1, 0, a, 1000);
    ar_gen_fill(AR_FP32, 1, 1, b, 1000);
    ar_gen_fill(AR_FP32, 2, 0, c, 1000);
    double lo = 1, hi = -1;
    int diff_rank = 0, diff_seed = 0;
    for (int i = 0; i < 1000; i++) {
        ck_assert(a[i] >= -1.0f && a[i] <= 1.0f);
        lo = fmin(lo, a[i]);
        hi = fmax(hi, a[i]);
        diff_rank += a[i] != b[i];
        diff_seed += a[i] != c[i];
    }
    ck_assert(lo < -0.9 && hi > 0.9);
    ck_assert_int_gt(diff_rank, 990);
    ck_assert_int_gt(diff_seed, 990);
    ar_gen_fill(AR_BF16, 1, 0, h, 1000);
    for (int i = 0; i < 1000; i++) {
        float v = ar_bf16_to_f32(h[i]);
        ck_assert(v >= -1.0f && v <= 1.0f);
        ck_assert_uint_eq(ar_f32_to_bf16(v), h[i]); /* representable: round trip */
    }
}
END_TEST

/* One REDUCE of three sources into rank 0's OUT; returns rank 0's OUT[0] as float. */
static float reduce3(ar_dtype_t dt, float x0, float x1, float x2) {
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("r3", 3, 1, 1, dt, &p), AR_OK);
    ar_addr_t src[3] = {ar_addr(0, AR_BUF_IN, 0), ar_addr(1, AR_BUF_IN, 0),
                        ar_addr(2, AR_BUF_IN, 0)};
    ck_assert_int_eq(ar_plan_reduce(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), src, 3, 1), AR_OK);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    unsigned char in[3][4], out[4];
    ar_elem_store(in[0], dt, 0, x0);
    ar_elem_store(in[1], dt, 0, x1);
    ar_elem_store(in[2], dt, 0, x2);
    const void *ins[3] = {in[0], in[1], in[2]};
    void *outs[3] = {out, NULL, NULL};
    ar_error_t err;
    ck_assert_int_eq(ar__ref_exec(p, 1, ins, outs, 0, NULL, &err), AR_OK);
    ar_plan_free(p);
    return (float)ar_elem_load(out, dt, 0);
}

/* REDUCE sums in float32 and rounds once. Rounding after every addition would lose
 * both small terms (each is a tie that goes to even); summing in float64 would keep
 * fp32's two 2^-24 terms that float32 loses. */
START_TEST(test_reduce_rounding) {
    ck_assert_float_eq(reduce3(AR_BF16, 1.0f, 0x1p-8f, 0x1p-8f), 1.0f + 0x1p-7f);
    ck_assert_float_eq(reduce3(AR_FP16, 1.0f, 0x1p-11f, 0x1p-11f), 1.0f + 0x1p-10f);
    ck_assert_float_eq(reduce3(AR_FP32, 1.0f, 0x1p-24f, 0x1p-24f), 1.0f);
    /* Order is the source order: (2^-24 + 2^-24) + 1 keeps them. */
    ck_assert_float_eq(reduce3(AR_FP32, 0x1p-24f, 0x1p-24f, 1.0f), 1.0f + 0x1p-23f);
    /* One rounding to the dtype at the end: 1 + 3*2^-9 -> bf16 1 + 2^-7 (nearest). */
    ck_assert_float_eq(reduce3(AR_BF16, 1.0f, 0x1p-8f, 0x1p-9f), 1.0f + 0x1p-7f);
    /* Overflow to infinity in fp16 is what the dtype does. */
    ck_assert(isinf(reduce3(AR_FP16, 60000.0f, 60000.0f, 0.0f)));
}
END_TEST

/* The check counts the elements it finds wrong (a row's #wrong), over every rank:
 * rank 1 gets only the first 3 of 7 elements of the sum. */
START_TEST(test_check_counts_wrong) {
    ar_plan_t *p;
    const uint64_t n = 7;
    ck_assert_int_eq(ar_plan_new("short", 2, 1, n, AR_FP32, &p), AR_OK);
    ar_addr_t src[2] = {ar_addr(0, AR_BUF_IN, 0), ar_addr(1, AR_BUF_IN, 0)};
    ck_assert_int_eq(ar_plan_reduce(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), src, 2, n), AR_OK);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(1, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_OUT, 0), 3), AR_OK);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    bufs_t b;
    bufs_alloc(&b, 2, n, AR_FP32, 3);
    for (uint64_t i = 0; i < n; i++) ar_elem_store(b.out[1], AR_FP32, i, NAN);
    ar_result_t res;
    ar_error_t err;
    ck_assert_int_eq(ar__ref_exec(p, 1, (const void *const *)b.in, b.out, 1, &res, &err), AR_OK);
    ck_assert_int_eq(res.checked, 1);
    ck_assert_int_eq(res.check_ok, 0);
    ck_assert_uint_eq(res.wrong, n - 3);
    ck_assert_ptr_nonnull(strstr(res.check_msg, "rank 1 element 3"));
    bufs_free(&b, 2);
    ar_plan_free(p);
}
END_TEST

/* A COPY is bit-exact, including a REDUCE whose destination is one of its sources. */
START_TEST(test_copy_inplace) {
    ar_plan_t *p;
    const uint64_t n = 5;
    ck_assert_int_eq(ar_plan_new("inplace", 2, 1, n, AR_BF16, &p), AR_OK);
    p->scratch_elems = n;
    /* SCRATCH0 = IN0; SCRATCH0 = SCRATCH0 + IN1 (in place); OUT0 = SCRATCH0; OUT1 = OUT0. */
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_SCRATCH, 0), ar_addr(0, AR_BUF_IN, 0), n), AR_OK);
    ar_addr_t src[2] = {ar_addr(0, AR_BUF_SCRATCH, 0), ar_addr(1, AR_BUF_IN, 0)};
    ck_assert_int_eq(ar_plan_reduce(p, 0, 0, ar_addr(0, AR_BUF_SCRATCH, 0), src, 2, n), AR_OK);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_SCRATCH, 0), n), AR_OK);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(1, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_OUT, 0), n), AR_OK);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    bufs_t b;
    bufs_alloc(&b, 2, n, AR_BF16, 3);
    ar_result_t res;
    ar_error_t err;
    ck_assert_int_eq(ar__ref_exec(p, 2, (const void *const *)b.in, b.out, 1, &res, &err), AR_OK);
    ck_assert_msg(res.check_ok, "%s", res.check_msg);
    ck_assert_uint_eq(res.ops_executed, 2 * p->nops);
    ck_assert(memcmp(b.out[0], b.out[1], n * 2) == 0);
    for (uint64_t i = 0; i < n; i++)
        ck_assert_float_eq((float)ar_elem_load(b.out[0], AR_BF16, i),
                           ar_bf16_to_f32(ar_f32_to_bf16((float)ar_elem_load(b.in[0], AR_BF16, i) +
                                                         (float)ar_elem_load(b.in[1], AR_BF16, i))));
    bufs_free(&b, 2);
    ar_plan_free(p);
}
END_TEST

/* NETREDUCE: rank r sums block r of every rank's IN inside the switch and the sum lands
 * in every rank's OUT; a start handshake (each rank tells every other it has begun) orders
 * an execution's writes into a peer's OUT after the peer's previous execution ended.
 * Verified, and the values against float32 sums rounded once; in place (dst == src)
 * too. A NETREDUCE naming another rank's buffer is refused. */
static ar_plan_t *netreduce_plan(int P, uint64_t blk, int inplace) {
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("net", P, 1, (uint64_t)P * blk, AR_BF16, &p), AR_OK);
    for (int r = 0; r < P; r++) {
        for (int q = 0; q < P; q++)
            if (q != r) ck_assert_int_eq(ar_plan_signal(p, r, 0, q, 0), AR_OK);
        ck_assert_int_eq(ar_plan_wait(p, r, 0, 0, (uint64_t)P - 1), AR_OK);
        const uint64_t off = (uint64_t)r * blk;
        if (inplace)
            ck_assert_int_eq(
                ar_plan_copy(p, r, 0, ar_addr(r, AR_BUF_OUT, 0), ar_addr(r, AR_BUF_IN, 0), (uint64_t)P * blk), AR_OK);
        const ar_addr_t dst = ar_addr(r, AR_BUF_OUT, off);
        ck_assert_int_eq(ar_plan_netreduce(p, r, 0, dst, inplace ? dst : ar_addr(r, AR_BUF_IN, off), blk), AR_OK);
        for (int q = 0; q < P; q++)
            if (q != r) ck_assert_int_eq(ar_plan_signal(p, r, 0, q, 1), AR_OK);
        ck_assert_int_eq(ar_plan_wait(p, r, 0, 1, (uint64_t)P - 1), AR_OK);
    }
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    return p;
}

START_TEST(test_netreduce) {
    const int P = 3;
    const uint64_t blk = 5, n = (uint64_t)P * blk;
    ar_error_t err;
    ar_plan_t *p = netreduce_plan(P, blk, 0);
    ck_assert_msg(ar_plan_verify(p, &err) == AR_OK, "%s", err.message);
    bufs_t b;
    bufs_alloc(&b, P, n, AR_BF16, 7);
    ar_result_t res;
    ck_assert_int_eq(ar__ref_exec(p, 2, (const void *const *)b.in, b.out, 1, &res, &err), AR_OK);
    ck_assert_msg(res.check_ok, "%s", res.check_msg);
    for (int q = 0; q < P; q++)
        for (uint64_t i = 0; i < n; i++) {
            float want = 0;
            for (int r = 0; r < P; r++) want += (float)ar_elem_load(b.in[r], AR_BF16, i);
            ck_assert_float_eq((float)ar_elem_load(b.out[q], AR_BF16, i), ar_bf16_to_f32(ar_f32_to_bf16(want)));
        }
    bufs_free(&b, P);
    ar_plan_free(p);
    /* in place: every rank copies its input into OUT before its own NETREDUCE, but nothing
     * orders that copy before the other ranks' NETREDUCEs read it */
    p = netreduce_plan(P, blk, 1);
    ck_assert_int_eq(ar_plan_verify(p, &err), AR_EPLAN);
    ck_assert_msg(strstr(err.message, "(NETREDUCE)") && strstr(err.message, "reads r0.OUT"), "%s", err.message);
    ar_plan_free(p);
    ck_assert_int_eq(ar_plan_new("net", 2, 1, 4, AR_BF16, &p), AR_OK);
    ck_assert_int_eq(ar_plan_netreduce(p, 0, 0, ar_addr(1, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), 4), AR_EINVAL);
    ar_plan_free(p);
}
END_TEST

/* --- the check --- */

START_TEST(test_unwritten_fails) {
    const uint64_t n = 10;
    ar_plan_t *p = pull2(n, AR_FP32, 1); /* rank 0 never writes OUT[9] */
    bufs_t b;
    bufs_alloc(&b, 2, n, AR_FP32, 1);
    ar_result_t res;
    ar_error_t err;
    ck_assert_int_eq(ar__ref_exec(p, 1, (const void *const *)b.in, b.out, 1, &res, &err), AR_OK);
    ck_assert_int_eq(res.checked, 1);
    ck_assert_int_eq(res.check_ok, 0);
    ck_assert(isinf(res.max_rel_err));
    ck_assert_msg(strstr(res.check_msg, "rank 0 element 9: got nan, want ") != NULL, "%s",
                  res.check_msg);
    ck_assert(isnan(((float *)b.out[0])[9])); /* poisoned, never written */
    bufs_free(&b, 2);
    ar_plan_free(p);
}
END_TEST

/* ar__ref_check directly: tolerance relative to the sum of magnitudes; NaN and
 * infinity never pass; the first mismatch is reported with got and want. */
START_TEST(test_check_tolerance) {
    float in0[3] = {1.0f, 0.5f, 0.0f}, in1[3] = {-1.0f, 0.25f, 0.0f};
    float out0[3] = {0.0f, 0.75f, 0.0f}, out1[3] = {0.0f, 0.75f, 0.0f};
    const void *in[2] = {in0, in1};
    const void *out[2] = {out0, out1};
    ar_result_t res;
    memset(&res, 0, sizeof res);
    ck_assert_int_eq(ar__ref_check(AR_FP32, AR_COLL_ALLREDUCE, NULL, 2, 3, in, out, &res), 1);
    ck_assert(res.max_rel_err == 0);
    /* Cancellation: want 0 from 1 + -1: an error of 2^-24 relative to |1|+|-1| passes. */
    out1[0] = 0x1p-24f;
    memset(&res, 0, sizeof res);
    ck_assert_int_eq(ar__ref_check(AR_FP32, AR_COLL_ALLREDUCE, NULL, 2, 3, in, out, &res), 1);
    ck_assert(fabs(res.max_rel_err - 0x1p-25) < 1e-12);
    /* Off by 1e-4 relative: fails at fp32, with the element named. */
    out1[1] = 0.75f * (1 + 1e-4f);
    memset(&res, 0, sizeof res);
    ck_assert_int_eq(ar__ref_check(AR_FP32, AR_COLL_ALLREDUCE, NULL, 2, 3, in, out, &res), 0);
    ck_assert_msg(strncmp(res.check_msg, "rank 1 element 1: got 0.7500", 28) == 0, "%s",
                  res.check_msg);
    ck_assert_msg(strstr(res.check_msg, "want 0.75 (rel err 0.0001 > tol") != NULL, "%s",
                  res.check_msg);
    out1[1] = 0.75f;
    /* All-zero inputs: only an exact 0 passes. */
    out0[2] = 1e-30f;
    memset(&res, 0, sizeof res);
    ck_assert_int_eq(ar__ref_check(AR_FP32, AR_COLL_ALLREDUCE, NULL, 2, 3, in, out, &res), 0);
    out0[2] = INFINITY;
    memset(&res, 0, sizeof res);
    ck_assert_int_eq(ar__ref_check(AR_FP32, AR_COLL_ALLREDUCE, NULL, 2, 3, in, out, &res), 0);
    out0[2] = NAN;
    memset(&res, 0, sizeof res);
    ck_assert_int_eq(ar__ref_check(AR_FP32, AR_COLL_ALLREDUCE, NULL, 2, 3, in, out, &res), 0);
    ck_assert_msg(strstr(res.check_msg, "rank 0 element 2: got nan") != NULL, "%s", res.check_msg);
}
END_TEST

/* The check of a reduce-scatter compares the rank's shard alone (2 ranks, 5 elements:
 * shards [0, 3) and [3, 5)); of an all-gather, each element with its owner's input. */
START_TEST(test_check_collectives) {
    float in0[5] = {1, 2, 3, 4, 5}, in1[5] = {10, 20, 30, 40, 50};
    float rs0[5] = {11, 22, 33, -7, -7}, rs1[5] = {-7, -7, -7, 44, 55};
    float ag[5] = {1, 2, 3, 40, 50};
    const void *in[2] = {in0, in1};
    const void *rs[2] = {rs0, rs1}, *agv[2] = {ag, ag};
    ar_result_t res;
    memset(&res, 0, sizeof res);
    ck_assert_int_eq(ar__ref_check(AR_FP32, AR_COLL_REDUCESCATTER, NULL, 2, 5, in, rs, &res), 1);
    ck_assert_uint_eq(res.wrong, 0);
    memset(&res, 0, sizeof res);
    ck_assert_int_eq(ar__ref_check(AR_FP32, AR_COLL_ALLREDUCE, NULL, 2, 5, in, rs, &res), 0);
    rs1[3] = 45;
    memset(&res, 0, sizeof res);
    ck_assert_int_eq(ar__ref_check(AR_FP32, AR_COLL_REDUCESCATTER, NULL, 2, 5, in, rs, &res), 0);
    ck_assert_uint_eq(res.wrong, 1);
    ck_assert_msg(strncmp(res.check_msg, "rank 1 element 3: got 45, want 44", 33) == 0, "%s", res.check_msg);
    memset(&res, 0, sizeof res);
    ck_assert_int_eq(ar__ref_check(AR_FP32, AR_COLL_ALLGATHER, NULL, 2, 5, in, agv, &res), 1);
    ag[2] = 33;
    memset(&res, 0, sizeof res);
    ck_assert_int_eq(ar__ref_check(AR_FP32, AR_COLL_ALLGATHER, NULL, 2, 5, in, agv, &res), 0);
    ck_assert_uint_eq(res.wrong, 2); /* element 2 on both ranks */
    ck_assert_msg(strncmp(res.check_msg, "rank 0 element 2: got 33, want 3", 32) == 0, "%s", res.check_msg);
}
END_TEST

/* --- deadlocks and malformed plans --- */

START_TEST(test_deadlock) {
    ar_plan_t *p;
    ar_error_t err;
    /* Both ranks wait before they signal. */
    ck_assert_int_eq(ar_plan_new("dl", 2, 2, 4, AR_FP32, &p), AR_OK);
    for (int r = 0; r < 2; r++) {
        ck_assert_int_eq(ar_plan_wait(p, r, 1, 3, 1), AR_OK);
        ck_assert_int_eq(ar_plan_signal(p, r, 1, 1 - r, 3), AR_OK);
        ck_assert_int_eq(ar_plan_copy(p, r, 0, ar_addr(r, AR_BUF_OUT, 0), ar_addr(r, AR_BUF_IN, 0), 4), AR_OK);
    }
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    bufs_t b;
    bufs_alloc(&b, 2, 4, AR_FP32, 1);
    ck_assert_int_eq(ar__ref_exec(p, 1, (const void *const *)b.in, b.out, 1, NULL, &err), AR_EPLAN);
    ck_assert_msg(strstr(err.message, "rank 0 channel 1 op 0 waits for flag 3 to reach 1 but it has 0") != NULL,
                  "%s", err.message);
    ar_plan_free(p);

    /* Waiting for more SIGNALs than the plan sends (2 of 1): the first execution
     * already blocks, on rank 1. */
    p = pull2(4, AR_FP32, 0);
    for (uint32_t i = 0; i < p->nops; i++)
        if (p->ops[i].code == AR_OP_WAIT && i >= ar_plan_chan(p, 1, 0)->first && p->ops[i].flag == 1)
            p->ops[i].count = 2;
    ck_assert_int_eq(ar__ref_exec(p, 3, (const void *const *)b.in, b.out, 1, NULL, &err), AR_EPLAN);
    ck_assert_msg(strstr(err.message, "deadlock in execution 0: rank 1 channel 0 op 5 waits for flag 1 to reach 2 but it has 1") != NULL,
                  "%s", err.message);
    ar_plan_free(p);
    bufs_free(&b, 2);
}
END_TEST

START_TEST(test_malformed) {
    ar_plan_t *p;
    ar_error_t err;
    ck_assert_int_eq(ar_plan_new("bad", 2, 1, 4, AR_FP32, &p), AR_OK);
    ck_assert_int_eq(ar_plan_copy(p, 1, 0, ar_addr(1, AR_BUF_OUT, 2), ar_addr(0, AR_BUF_IN, 0), 3), AR_OK);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    ck_assert_int_eq(ar__backend_check_plan(p, NULL, &err), AR_EPLAN);
    ck_assert_str_eq(err.message, "rank 1 channel 0 op 0: range out of bounds");
    p->ops[0].dst = ar_addr(1, AR_BUF_IN, 0);
    ck_assert_int_eq(ar__backend_check_plan(p, NULL, &err), AR_EPLAN);
    ck_assert_str_eq(err.message, "rank 1 channel 0 op 0: writes IN");
    p->ops[0].dst = ar_addr(1, AR_BUF_SCRATCH, 0); /* no scratch in this plan */
    ck_assert_int_eq(ar__backend_check_plan(p, NULL, &err), AR_EPLAN);
    ck_assert_str_eq(err.message, "rank 1 channel 0 op 0: range out of bounds");
    p->ops[0].dst = ar_addr(2, AR_BUF_OUT, 0);
    ck_assert_int_eq(ar__backend_check_plan(p, NULL, &err), AR_EPLAN);
    ck_assert_str_eq(err.message, "rank 1 channel 0 op 0: no such rank");
    p->ops[0].dst = ar_addr(AR_RANK_HOST, 0, 0); /* no host buffer either */
    ck_assert_int_eq(ar__backend_check_plan(p, NULL, &err), AR_EPLAN);
    ck_assert_str_eq(err.message, "rank 1 channel 0 op 0: host range out of bounds");
    p->ops[0].dst = ar_addr(1, AR_BUF_OUT, 0);
    ck_assert_int_eq(ar__backend_check_plan(p, NULL, &err), AR_OK);
    /* the backend refuses it through the registry too */
    p->ops[0].n = 5;
    ar_result_t res;
    ck_assert_int_eq(ar_backend_run("ref", NULL, p, NULL, &res, &err), AR_EPLAN);
    ar_plan_free(p);
}
END_TEST

/* --- epochs: repeated executions give the same answer ---
 * Every execution starts from poisoned OUT/SCRATCH, and rank 0 runs first in each
 * round: were a WAIT's count not offset by the epoch (e * per_epoch + count), rank 0
 * would pass its WAIT at once in the second execution and pull rank 1's poisoned
 * half, so the check (and the comparison with one execution) would fail. */

START_TEST(test_iterations) {
    const uint64_t n = 33;
    ar_plan_t *p = pull2(n, AR_BF16, 0);
    bufs_t one, five;
    bufs_alloc(&one, 2, n, AR_BF16, 11);
    bufs_alloc(&five, 2, n, AR_BF16, 11);
    ar_result_t res;
    ar_error_t err;
    ck_assert_int_eq(ar__ref_exec(p, 1, (const void *const *)one.in, one.out, 1, &res, &err), AR_OK);
    ck_assert(res.check_ok);
    ck_assert_int_eq(ar__ref_exec(p, 5, (const void *const *)five.in, five.out, 1, &res, &err), AR_OK);
    ck_assert_msg(res.check_ok, "%s", res.check_msg);
    ck_assert_uint_eq(res.ops_executed, 5 * p->nops);
    for (int r = 0; r < 2; r++) ck_assert(memcmp(one.out[r], five.out[r], n * 2) == 0);
    bufs_free(&one, 2);
    bufs_free(&five, 2);
    ar_plan_free(p);
}
END_TEST

/* --- the registry and the backend through it --- */

START_TEST(test_registry) {
    ck_assert_ptr_eq(ar_backend_find("ref"), &ar_ref_backend);
    ck_assert_ptr_eq(ar_backend_find("analytic"), &ar_analytic_backend);
    ck_assert_ptr_null(ar_backend_find("nope"));
    ck_assert_ptr_null(ar_backend_find(NULL));
    int n = 0;
    for (const ar_backend_ops_t *const *b = ar_backend_all(); *b; b++, n++) {
        ck_assert_ptr_eq(ar_backend_find((*b)->name), *b);
        ck_assert_ptr_nonnull((*b)->execute);
        ck_assert(((*b)->open == NULL) == ((*b)->close == NULL)); /* both, or the registry's plain ones */
        ck_assert((*b)->caps != 0);
        ck_assert_int_eq(ar_backend_known_missing((*b)->name), 0);
    }
    ck_assert_int_ge(n, 2);
    /* sim and cuda are either built or known to be missing, never both or neither. */
    ck_assert_int_ne(ar_backend_find("sim") != NULL, ar_backend_known_missing("sim"));
    ck_assert_int_ne(ar_backend_find("cuda") != NULL, ar_backend_known_missing("cuda"));
    ck_assert_int_eq(ar_backend_known_missing("nope"), 0);
    ar_error_t err;
    ar_result_t res;
    ck_assert_int_eq(ar_backend_run("nope", NULL, NULL, NULL, &res, &err), AR_EINVAL);
    ck_assert_str_eq(err.message, "unknown backend 'nope' (ref, analytic, sim, cuda)");
    if (ar_backend_known_missing("cuda")) {
        ck_assert_int_eq(ar_backend_run("cuda", NULL, NULL, NULL, &res, &err), AR_ENOTSUP);
        ck_assert(strstr(err.message, "backend 'cuda' is not in this build") == err.message);
    }
}
END_TEST

START_TEST(test_bandwidth) {
    ck_assert_double_eq_tol(ar_algbw_gbps(1000000000ull, 0.5), 2.0, 1e-12);
    ck_assert_double_eq_tol(ar_busbw_gbps(1000000000ull, 0.5, 4), 3.0, 1e-12);
    ck_assert_double_eq_tol(ar_busbw_gbps(1000000000ull, 0.5, 2), 2.0, 1e-12);
    ck_assert_double_eq(ar_busbw_gbps(1000000000ull, 0.5, 1), 0.0);
    ck_assert_double_eq(ar_algbw_gbps(1000, 0.0), 0.0);
    ar_result_t r;
    memset(&r, 0, sizeof r);
    r.links = calloc(4, sizeof *r.links);
    r.nlinks = 4;
    ar_result_free(&r);
    ck_assert_ptr_null(r.links);
    ck_assert_int_eq(r.nlinks, 0);
}
END_TEST

/* The backend on its own inputs: fresh per seed, every execution checked. */
START_TEST(test_backend_run) {
    ar_plan_t *p = pull2(1001, AR_BF16, 0);
    ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
    o.check = 1;
    o.iters = 3;
    ar_result_t res;
    ar_error_t err;
    ck_assert_int_eq(ar_backend_run("ref", NULL, p, &o, &res, &err), AR_OK);
    ck_assert_int_eq(res.checked, 1);
    ck_assert_msg(res.check_ok, "%s", res.check_msg);
    ck_assert(res.max_rel_err > 0); /* bf16 rounding shows */
    ck_assert(res.max_rel_err <= ar_dtype_tolerance(AR_BF16, 2));
    ck_assert_uint_eq(res.ops_executed, 3 * p->nops);
    ck_assert(res.time_s == 0);
    o.check = 0;
    ck_assert_int_eq(ar_backend_run("ref", NULL, p, &o, &res, &err), AR_OK);
    ck_assert_int_eq(res.checked, 0);
    ar_plan_free(p);
    p = pull2(1001, AR_BF16, 3);
    o.check = 1;
    ck_assert_int_eq(ar_backend_run("ref", NULL, p, &o, &res, &err), AR_OK);
    ck_assert_int_eq(res.check_ok, 0);
    ck_assert_msg(strstr(res.check_msg, "rank 0 element 998: got nan") != NULL, "%s", res.check_msg);
    /* Too large for host memory: refused before allocating. 2 ranks x 3 buffers x 1001 x 2 bytes. */
    setenv("ARSIM_REF_MAX_BYTES", "12011", 1);
    ck_assert_int_eq(ar_backend_run("ref", NULL, p, &o, &res, &err), AR_ELIMIT);
    ck_assert_str_eq(err.message, "host memory for ref (half the machine's, or ARSIM_REF_MAX_BYTES): needs "
                                  "12012 bytes (every rank's input, output, scratch and a copy of its input), "
                                  "holds 12011 bytes; a smaller --size or fewer --ranks");
    /* the one capacity format, in human units where they tell the sizes apart */
    ar_capacity_err(&err, "hbm of gpu0", 3.0 * (1u << 30), "input and output of 1 rank", 141e9, "fix");
    ck_assert_str_eq(err.message, "hbm of gpu0: needs 3 GiB (input and output of 1 rank), holds 141 GB; fix");
    setenv("ARSIM_REF_MAX_BYTES", "12012", 1);
    ck_assert_int_eq(ar_backend_run("ref", NULL, p, &o, &res, &err), AR_OK);
    unsetenv("ARSIM_REF_MAX_BYTES");
    ar_plan_free(p);
}
END_TEST


/* --- every algorithm x dtype on a few topologies --- */

/* Topologies of every shape the algorithms meet: one rank, two (a doubled link),
 * odd and prime rings, both orientations of a torus, meshes with a snake ring
 * (2x3) and without (3x3, a line), all-pairs and a switch. Every algorithm runs on
 * every one (non-neighbours reached through other devices) but innet, which needs a
 * switch that adds. */
static const char *const ALGO_TOPOS[] = {
    "ring_1d:1", "ring_1d:2", "ring_1d:3", "ring_1d:5", "torus_2d:2x3", "torus_2d:3x2",
    "torus_2d:3x3", "mesh_2d:2x3", "mesh_2d:3x3", "mesh_2d:1x4", "full:4", "switch:5",
    "ring_1d:13", "torus_2d:5x3",
};
#define N_ALGO_TOPOS (int)(sizeof ALGO_TOPOS / sizeof ALGO_TOPOS[0])

START_TEST(test_all_algorithms) {
    /* Counts: one element, a few (fewer than ranks on most), and a tail-heavy one. */
    static const uint64_t counts[] = {1, 7, 1031};
    int ran[16] = {0}, nalgo = 0, nrun = 0;
    for (const ar_algo_t *const *a = ar_algo_all(); *a; a++) nalgo++;
    ck_assert_int_le(nalgo, 16);
    for (int ti = 0; ti < N_ALGO_TOPOS; ti++) {
        ar_topo_t *t;
        ar_error_t err;
        ck_assert_msg(ar_topo_open(ALGO_TOPOS[ti], NULL, &t, &err) == AR_OK, "%s: %s",
                      ALGO_TOPOS[ti], err.message);
        /* the switch adds (in-network reduction) so that innet runs too; the others never
         * ask it to */
        if (t->kind == AR_TOPO_SWITCH) t->model->switch_reduce = 1;
        int ai = 0;
        for (const ar_algo_t *const *a = ar_algo_all(); *a; a++, ai++)
            for (int dt = 0; dt < AR_NDTYPE; dt++)
                for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
                    /* default options, and a small chunk with 3 channels for pipelining */
                    for (int variant = 0; variant < 2; variant++) {
                        ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
                        /* one that builds no allreduce: its collectives, one a variant */
                        if (!ar_algo_computes(*a, AR_COLL_ALLREDUCE))
                            o.coll = variant ? AR_COLL_ALLGATHER : AR_COLL_REDUCESCATTER;
                        if (variant) {
                            o.channels = 3;
                            o.chunk_bytes = 64;
                        }
                        ar_plan_t *p;
                        int rc = ar_algo_build((*a)->name, t, counts[ci], (ar_dtype_t)dt, &o, &p, &err);
                        if (rc == AR_EUNFIT && !strcmp((*a)->name, "innet") && t->kind != AR_TOPO_SWITCH) break;
                        ck_assert_msg(rc == AR_OK, "%s on %s: %s", (*a)->name, ALGO_TOPOS[ti],
                                      err.message);
                        ar_run_opts_t ro = AR_RUN_OPTS_DEFAULT;
                        ro.check = 1;
                        ro.iters = 2;
                        ro.seed = 100 + ti;
                        ar_result_t res;
                        rc = ar_backend_run("ref", t, p, &ro, &res, &err);
                        ck_assert_msg(rc == AR_OK, "%s on %s, %s count %d: %s", (*a)->name,
                                      ALGO_TOPOS[ti], ar_dtype_name((ar_dtype_t)dt),
                                      (int)counts[ci], err.message);
                        ck_assert_msg(res.checked && res.check_ok, "%s on %s, %s count %d: %s",
                                      (*a)->name, ALGO_TOPOS[ti], ar_dtype_name((ar_dtype_t)dt),
                                      (int)counts[ci], res.check_msg);
                        ck_assert_uint_eq(res.ops_executed, 2ull * p->nops);
                        ran[ai]++;
                        nrun++;
                        ar_plan_free(p);
                    }
                }
        ar_topo_free(t);
    }
    /* Every algorithm ran somewhere. */
    int ai = 0;
    for (const ar_algo_t *const *a = ar_algo_all(); *a; a++, ai++)
        ck_assert_msg(ran[ai] > 0, "%s never fitted a test topology", (*a)->name);
    ck_assert_int_gt(nrun, 100);
}
END_TEST

/* The check is not vacuous on real plans: drop one op that writes OUT from an
 * algorithm's plan and the run must fail, naming a rank and an element. */
START_TEST(test_algorithm_broken) {
    ar_topo_t *t;
    ar_error_t err;
    ck_assert_int_eq(ar_topo_open("ring_1d:4", NULL, &t, &err), AR_OK);
    ar_plan_t *p;
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
    ck_assert_int_eq(ar_algo_build("ring", t, 1000, AR_BF16, &o, &p, &err), AR_OK);
    /* the last COPY into a remote OUT becomes a copy of zero length... */
    for (uint32_t i = p->nops; i-- > 0;)
        if (p->ops[i].code == AR_OP_COPY && p->ops[i].dst.buf == AR_BUF_OUT) {
            p->ops[i].n = 0;
            break;
        }
    ar_run_opts_t ro = AR_RUN_OPTS_DEFAULT;
    ro.check = 1;
    ar_result_t res;
    ck_assert_int_eq(ar_backend_run("ref", t, p, &ro, &res, &err), AR_OK);
    ck_assert_int_eq(res.check_ok, 0);
    ck_assert_msg(strstr(res.check_msg, ": got nan, want ") != NULL, "%s", res.check_msg);
    ar_plan_free(p);
    ar_topo_free(t);
}
END_TEST

Suite *suite_ref(void) {
    Suite *s = suite_create("ref");
    TCase *tc;
    tc = tcase_create("ar__ref_exec");
    tcase_add_loop_test(tc, test_pull2_exact, 0, 3);
    tcase_add_test(tc, test_reduce_rounding);
    tcase_add_test(tc, test_copy_inplace);
    tcase_add_test(tc, test_netreduce);
    tcase_add_test(tc, test_check_counts_wrong);
    tcase_add_test(tc, test_unwritten_fails);
    tcase_add_test(tc, test_deadlock);
    tcase_add_test(tc, test_iterations);
    suite_add_tcase(s, tc);
    tc = tcase_create("ar__ref_fill_inputs"); tcase_add_test(tc, test_fill_inputs); suite_add_tcase(s, tc);
    tc = tcase_create("ar__ref_check"); tcase_add_test(tc, test_check_tolerance);
    tcase_add_test(tc, test_check_collectives); suite_add_tcase(s, tc);
    tc = tcase_create("ar__backend_check_plan"); tcase_add_test(tc, test_malformed); suite_add_tcase(s, tc);
    tc = tcase_create("ar_backend_find"); tcase_add_test(tc, test_registry); suite_add_tcase(s, tc);
    tc = tcase_create("ar_busbw_gbps"); tcase_add_test(tc, test_bandwidth); suite_add_tcase(s, tc);
    tc = tcase_create("ar_backend_run"); tcase_add_test(tc, test_backend_run); suite_add_tcase(s, tc);
    tc = tcase_create("ref_algorithms");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_all_algorithms);
    tcase_add_test(tc, test_algorithm_broken);
    suite_add_tcase(s, tc);
    return s;
}
