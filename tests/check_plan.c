/* plan: the verifier on hand-built plans, correct and broken. */
#include <string.h>
#include "arsim/arsim.h"
#include "tests/suites.h"

#define N 10
#define IN(r, o) ar_addr((r), AR_BUF_IN, (o))
#define OUT(r, o) ar_addr((r), AR_BUF_OUT, (o))
#define SCR(r, o) ar_addr((r), AR_BUF_SCRATCH, (o))

/* Verify and expect failure with a message containing each of the given pieces. */
static void expect_fail(ar_plan_t *p, const char *const *pieces) {
    ar_error_t e;
    ar_error_clear(&e);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    int rc = ar_plan_verify(p, &e);
    ck_assert_msg(rc == AR_EPLAN, "verify returned %d (%s), want AR_EPLAN", rc, e.message);
    for (int i = 0; pieces[i]; i++)
        ck_assert_msg(strstr(e.message, pieces[i]), "message \"%s\" lacks \"%s\"", e.message,
                      pieces[i]);
    ar_plan_free(p);
}

static void expect_ok(ar_plan_t *p) {
    ar_error_t e;
    ar_error_clear(&e);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    int rc = ar_plan_verify(p, &e);
    ck_assert_msg(rc == AR_OK, "verify: %s", e.message);
    ar_plan_free(p);
}

/* Every rank pulls every peer's IN and reduces locally: no flags needed. */
static ar_plan_t *pull_plan(int P, int dup_rank, int skip_rank) {
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("pull", P, 1, N, AR_FP32, &p), AR_OK);
    for (int r = 0; r < P; r++) {
        ar_addr_t s[8];
        int k = 0;
        for (int q = 0; q < P; q++)
            if (q != skip_rank) s[k++] = IN(q, 0);
        if (dup_rank >= 0) s[k++] = IN(dup_rank, 0);
        ck_assert_int_eq(ar_plan_reduce(p, r, 0, OUT(r, 0), s, (uint32_t)k, N), AR_OK);
    }
    return p;
}

/* Two ranks push their IN into the peer's SCRATCH, signal (flag 0), wait, reduce,
 * then acknowledge (flag 1) so the next execution's push comes after the read. */
enum { OMIT_NONE, OMIT_WAIT_DATA, OMIT_ACK, SIGNAL_EARLY, WAIT_FIRST };
static ar_plan_t *push_plan(int variant) {
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("push", 2, 1, N, AR_BF16, &p), AR_OK);
    p->scratch_elems = N;
    for (int r = 0; r < 2; r++) {
        int q = 1 - r;
        if (variant == WAIT_FIRST) ar_plan_wait(p, r, 0, 0, 1);
        if (variant == SIGNAL_EARLY && r == 1) ar_plan_signal(p, r, 0, q, 0);
        ar_plan_copy(p, r, 0, SCR(q, 0), IN(r, 0), N);
        if (!(variant == SIGNAL_EARLY && r == 1)) ar_plan_signal(p, r, 0, q, 0);
        if (variant != OMIT_WAIT_DATA && variant != WAIT_FIRST) ar_plan_wait(p, r, 0, 0, 1);
        ar_addr_t s[2] = {IN(r, 0), SCR(r, 0)};
        ar_plan_reduce(p, r, 0, OUT(r, 0), s, 2, N);
        if (variant != OMIT_ACK) {
            ar_plan_signal(p, r, 0, q, 1);
            ar_plan_wait(p, r, 0, 1, 1);
        }
    }
    return p;
}

/* Ranks 1..P-1 push to rank 0's SCRATCH slots and signal one shared flag; rank 0
 * waits for all, reduces, pushes the result to every OUT, then releases each. */
static ar_plan_t *gather_plan(int P, int no_release_rank) {
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("gather", P, 1, N, AR_FP16, &p), AR_OK);
    p->scratch_elems = (uint64_t)N * P;
    for (int r = 1; r < P; r++) {
        ar_plan_copy(p, r, 0, SCR(0, (uint64_t)r * N), IN(r, 0), N);
        ar_plan_signal(p, r, 0, 0, 0);
        if (r != no_release_rank) ar_plan_wait(p, r, 0, 1, 1);
    }
    ar_plan_wait(p, 0, 0, 0, (uint64_t)P - 1);
    ar_addr_t s[8];
    s[0] = IN(0, 0);
    for (int r = 1; r < P; r++) s[r] = SCR(0, (uint64_t)r * N);
    ar_plan_reduce(p, 0, 0, OUT(0, 0), s, (uint32_t)P, N);
    for (int r = 1; r < P; r++) {
        ar_plan_copy(p, 0, 0, OUT(r, 0), OUT(0, 0), N);
        ar_plan_signal(p, 0, 0, r, 1);
    }
    return p;
}

/* The chunk rows report: the largest COPY or REDUCE, in bytes; a plan's root is -1 until
 * its algorithm names one. */
START_TEST(test_chunk_bytes) {
    ar_plan_t *p = NULL;
    ck_assert_int_eq(ar_plan_new("t", 2, 2, 100, AR_FP32, &p), AR_OK);
    ck_assert_int_eq(p->root, -1);
    ar_addr_t s[2] = {ar_addr(0, AR_BUF_IN, 0), ar_addr(1, AR_BUF_IN, 0)};
    ck_assert_int_eq(ar_plan_copy(p, 1, 0, ar_addr(1, AR_BUF_OUT, 0), ar_addr(1, AR_BUF_IN, 0), 10), AR_OK);
    ck_assert_int_eq(ar_plan_reduce(p, 0, 1, ar_addr(0, AR_BUF_OUT, 0), s, 2, 30), AR_OK);
    ck_assert_int_eq(ar_plan_signal(p, 0, 0, 1, 0), AR_OK);
    ck_assert_int_eq(ar_plan_wait(p, 1, 1, 0, 1), AR_OK);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    ck_assert_uint_eq(ar_plan_chunk_bytes(p), 30 * 4);
    ar_plan_free(p);
}
END_TEST

START_TEST(test_verify_ok) {
    for (int P = 1; P <= 5; P++) expect_ok(pull_plan(P, -1, -1));
    expect_ok(push_plan(OMIT_NONE));
    for (int P = 2; P <= 5; P++) expect_ok(gather_plan(P, -1));
}
END_TEST

START_TEST(test_verify_missing) {
    const char *m[] = {"rank 0 OUT[0]", "misses the contribution of rank 2", NULL};
    expect_fail(pull_plan(3, -1, 2), m);
}
END_TEST

START_TEST(test_verify_double) {
    const char *m[] = {"rank 0 OUT[0]", "contribution of rank 1 2 times",
                       "last written by rank 0 chan 0 op 0 (REDUCE)", NULL};
    expect_fail(pull_plan(3, 1, -1), m);
}
END_TEST

START_TEST(test_verify_deadlock) {
    const char *m[] = {"deadlock in execution 1", "rank 0 chan 0 op 0 (WAIT)", "2 channels stuck",
                       NULL};
    expect_fail(push_plan(WAIT_FIRST), m);
    /* a WAIT for more than the plan ever sends */
    ar_plan_t *p = pull_plan(2, -1, -1);
    ar_plan_signal(p, 1, 0, 0, 0);
    ar_plan_wait(p, 0, 0, 0, 2);
    const char *m2[] = {"deadlock", "rank 0 chan 0 op 1 (WAIT)", "only 1 SIGNALs", NULL};
    expect_fail(p, m2);
}
END_TEST

START_TEST(test_verify_poison) {
    /* rank 0 reduces its SCRATCH before rank 1 has pushed (greedy runs rank 0 first) */
    const char *m[] = {"rank 0 chan 0 op 2 (REDUCE)", "reads r0.SCRATCH[0]", "no value yet", NULL};
    expect_fail(push_plan(OMIT_WAIT_DATA), m);
}
END_TEST

START_TEST(test_verify_race) {
    /* rank 1 signals before its push: the data may arrive after rank 0's read */
    const char *m[] = {"race:", "rank 0 chan 0 op 3 (REDUCE)", "r0.SCRATCH[0]",
                       "written by rank 1 chan 0 op 1 (COPY)", NULL};
    expect_fail(push_plan(SIGNAL_EARLY), m);
    /* two channels of one rank write the same OUT range */
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("t", 1, 2, N, AR_FP32, &p), AR_OK);
    ar_plan_copy(p, 0, 0, OUT(0, 0), IN(0, 0), N);
    ar_plan_copy(p, 0, 1, OUT(0, 4), IN(0, 4), 2);
    const char *m2[] = {"race:", "rank 0 chan 1 op 0 (COPY)", "writes r0.OUT[4]",
                        "written by rank 0 chan 0 op 0 (COPY)", NULL};
    expect_fail(p, m2);
    /* the same with a flag between them passes */
    ck_assert_int_eq(ar_plan_new("t", 1, 2, N, AR_FP32, &p), AR_OK);
    ar_plan_copy(p, 0, 0, OUT(0, 0), IN(0, 0), N);
    ar_plan_signal(p, 0, 0, 0, 0);
    ar_plan_wait(p, 0, 1, 0, 1);
    ar_plan_copy(p, 0, 1, OUT(0, 4), IN(0, 4), 2);
    ar_plan_signal(p, 0, 1, 0, 1);
    ar_plan_wait(p, 0, 0, 1, 1);
    expect_ok(p);
}
END_TEST

/* A buffer cut into hundreds of segments, written in a scattered order (each copy splits
 * a segment far from the last, merges fill the holes): verified, and a race on one late
 * element among them still named. */
static ar_plan_t *scattered_plan(int flag_between) {
    const uint64_t n = 1000, stride = 7919; /* coprime with n: every element once */
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("scattered", 1, 2, n, AR_FP32, &p), AR_OK);
    for (uint64_t i = 0; i < n; i++) ar_plan_copy(p, 0, 0, OUT(0, i * stride % n), IN(0, i * stride % n), 1);
    if (flag_between) {
        ar_plan_signal(p, 0, 0, 0, 0);
        ar_plan_wait(p, 0, 1, 0, 1);
    }
    ar_plan_copy(p, 0, 1, OUT(0, 997), IN(0, 997), 1);
    if (flag_between) {
        ar_plan_signal(p, 0, 1, 0, 1);
        ar_plan_wait(p, 0, 0, 1, 1);
    }
    return p;
}

START_TEST(test_verify_scattered) {
    expect_ok(scattered_plan(1));
    const char *m[] = {"race:", "r0.OUT[997]", "rank 0 chan 0 op 963 (COPY)", "rank 0 chan 1 op 0 (COPY)", NULL};
    expect_fail(scattered_plan(0), m);
}
END_TEST

START_TEST(test_verify_cross_epoch) {
    /* without the acknowledgement, the next execution's push overwrites SCRATCH
     * while the peer may still be reducing it */
    const char *m[] = {"race between executions", "of execution 2 writes r1.SCRATCH[0]",
                       "read by rank 1 chan 0 op 3 (REDUCE) of execution 1", NULL};
    expect_fail(push_plan(OMIT_ACK), m);
    /* one rank of three skips its release, which is also what tells it its result
     * has arrived */
    const char *m2[] = {"rank 2 OUT[0] may still be in flight", NULL};
    expect_fail(gather_plan(3, 2), m2);
}
END_TEST

/* Rank 0 pushes its IN into rank 1's SCRATCH (a parity slot when `parity`) and
 * signals flag 0; rank 1 waits and reduces. Rank 0 reads rank 1's IN directly, so
 * nothing holds it back: only an acknowledgement (rank 1 signals flag 1 after
 * its reduction; rank 0 WAITs for it `back` executions back at the start, none
 * when back < 0) keeps its next push off a slot rank 1 may still be reading. */
static ar_plan_t *slots_plan(int parity, int back, uint64_t scratch, uint64_t parity_elems) {
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("slots", 2, 1, N, AR_BF16, &p), AR_OK);
    p->scratch_elems = scratch;
    p->parity_elems = parity_elems;
    ar_addr_t slot = parity ? ar_addr_parity(1, AR_BUF_SCRATCH, 0) : SCR(1, 0);
    if (back >= 0) ck_assert_int_eq(ar_plan_wait_back(p, 0, 0, 1, (uint32_t)back, 0), AR_OK);
    ar_plan_copy(p, 0, 0, slot, IN(0, 0), N);
    ar_plan_signal(p, 0, 0, 1, 0);
    ar_addr_t s0[2] = {IN(0, 0), IN(1, 0)};
    ar_plan_reduce(p, 0, 0, OUT(0, 0), s0, 2, N);
    ar_plan_wait(p, 1, 0, 0, 1);
    ar_addr_t s1[2] = {IN(1, 0), slot};
    ar_plan_reduce(p, 1, 0, OUT(1, 0), s1, 2, N);
    if (back >= 0) ar_plan_signal(p, 1, 0, 0, 1);
    return p;
}

START_TEST(test_verify_parity_slots) {
    /* two slots, acknowledgement of the execution before last: safe */
    expect_ok(slots_plan(1, 1, 2 * N, N));
    /* two slots, previous execution's acknowledgement: safe too (stricter) */
    expect_ok(slots_plan(1, 0, 2 * N, N));
    /* one slot, previous execution's acknowledgement: safe */
    expect_ok(slots_plan(0, 0, N, 0));
    /* one slot with the acknowledgement of the execution before last: execution 2
     * overwrites what execution 1 may still be reading */
    const char *m[] = {"race between executions", "rank 0 chan 0 op 1 (COPY) of execution 2 writes r1.SCRATCH[0]",
                       "read by rank 1 chan 0 op 1 (REDUCE) of execution 1", NULL};
    expect_fail(slots_plan(0, 1, N, 0), m);
    /* parity addresses whose slots coincide (offset 0) are one slot */
    const char *m0[] = {"race between executions", "of execution 2 writes r1.SCRATCH[0]", NULL};
    expect_fail(slots_plan(1, 1, 2 * N, 0), m0);
    /* two slots and no acknowledgement: executions 1 and 2 use different slots, only
     * execution 3 meets execution 1 in slot 0, which is why three are verified */
    const char *m3[] = {"race between executions", "of execution 3 writes r1.SCRATCH[0]",
                        "of execution 1", NULL};
    expect_fail(slots_plan(1, -1, 2 * N, N), m3);
    /* the odd executions' slot must fit the buffer */
    const char *mb[] = {"out of bounds", "r1.SCRATCH[10..20)", "odd executions' slot", "holds 19", NULL};
    expect_fail(slots_plan(1, 1, 2 * N - 1, N), mb);
    /* slots that overlap are one slot where they overlap */
    const char *mo[] = {"race between executions", "of execution 2 writes r1.SCRATCH[5]", NULL};
    expect_fail(slots_plan(1, 1, 2 * N - 5, N - 5), mo);
    /* a WAIT two executions back is refused by the emitter */
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("t", 2, 1, N, AR_FP32, &p), AR_OK);
    ck_assert_int_eq(ar_plan_wait_back(p, 0, 0, 0, 2, 0), AR_EINVAL);
    ar_plan_free(p);
    /* unknown address flags are refused */
    p = slots_plan(1, 1, 2 * N, N);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    for (uint32_t i = 0; i < p->nops; i++)
        if (p->ops[i].code == AR_OP_COPY) p->ops[i].dst.buf |= 0x400u;
    ar_error_t e;
    ar_error_clear(&e);
    ck_assert_int_eq(ar_plan_verify(p, &e), AR_EPLAN);
    ck_assert_msg(strstr(e.message, "address flags 0x400 unknown"), "%s", e.message);
    ar_plan_free(p);
}
END_TEST

START_TEST(test_verify_flag_bound) {
    /* Ranks 1 and 2 both signal rank 0's flag 0 once per execution; rank 0 waits for 2
     * and reads what rank 1 wrote before its signal (rank 2's input it pulls). If rank 2
     * runs free between executions, its next execution's signal can complete the WAIT
     * before rank 1 has signalled at all. No data race shows it: only the bound. */
    for (int variant = 0; variant < 2; variant++) {
        ar_plan_t *p;
        ck_assert_int_eq(ar_plan_new("t", 3, 1, N, AR_FP32, &p), AR_OK);
        p->scratch_elems = N;
        ar_plan_copy(p, 1, 0, SCR(0, 0), IN(1, 0), N);
        ar_plan_signal(p, 1, 0, 0, 0);
        ar_plan_wait(p, 1, 0, 1, 1);
        ar_plan_signal(p, 2, 0, 0, 0);
        ar_addr_t s2[3] = {IN(0, 0), IN(1, 0), IN(2, 0)};
        ar_plan_reduce(p, 2, 0, OUT(2, 0), s2, 3, N);
        if (variant == 0) ar_plan_wait(p, 2, 0, 1, 1);
        ar_plan_wait(p, 0, 0, 0, 2);
        ar_addr_t s[3] = {IN(0, 0), SCR(0, 0), IN(2, 0)};
        ar_plan_reduce(p, 0, 0, OUT(0, 0), s, 3, N);
        ar_plan_copy(p, 0, 0, OUT(1, 0), OUT(0, 0), N);
        ar_plan_signal(p, 0, 0, 1, 1);
        if (variant == 0) ar_plan_signal(p, 0, 0, 2, 1);
        if (variant == 0) {
            expect_ok(p);
        } else {
            const char *m[] = {"race between executions", "rank 0 chan 0 op 0 (WAIT)",
                               "may count rank 2 chan 0 op 0 (SIGNAL) of the next execution",
                               NULL};
            expect_fail(p, m);
        }
    }
}
END_TEST

START_TEST(test_verify_unwaited_out) {
    /* rank 0 computes the sum and pushes it into rank 1's OUT, but rank 1 never waits */
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("t", 2, 1, N, AR_FP32, &p), AR_OK);
    ar_addr_t s[2] = {IN(0, 0), IN(1, 0)};
    ar_plan_reduce(p, 0, 0, OUT(0, 0), s, 2, N);
    ar_plan_copy(p, 0, 0, OUT(1, 0), OUT(0, 0), N);
    const char *m[] = {"rank 1 OUT[0] may still be in flight when rank 1 finishes execution 1",
                       "last written by rank 0 chan 0 op 1 (COPY)", NULL};
    expect_fail(p, m);
}
END_TEST

START_TEST(test_verify_bounds) {
    ar_plan_t *p = pull_plan(2, -1, -1);
    ar_plan_copy(p, 1, 0, OUT(1, 8), IN(1, 8), 3);
    const char *m[] = {"rank 1 chan 0 op 1 (COPY)", "out of bounds", "source r1.IN[8..11)",
                       "holds 10 elements", NULL};
    expect_fail(p, m);
    p = pull_plan(2, -1, -1);
    ar_plan_copy(p, 0, 0, SCR(0, 0), IN(0, 0), 1); /* no scratch declared */
    const char *m2[] = {"rank 0 chan 0 op 1 (COPY)", "out of bounds", "holds 0 elements", NULL};
    expect_fail(p, m2);
    /* REDUCE with partially overlapping source and destination */
    ck_assert_int_eq(ar_plan_new("t", 1, 1, N, AR_FP32, &p), AR_OK);
    ar_plan_copy(p, 0, 0, OUT(0, 0), IN(0, 0), N);
    ar_addr_t s[2] = {OUT(0, 1), IN(0, 0)};
    ar_plan_reduce(p, 0, 0, OUT(0, 0), s, 2, 4);
    const char *m3[] = {"rank 0 chan 0 op 1 (REDUCE)", "overlaps the destination", NULL};
    expect_fail(p, m3);
}
END_TEST

START_TEST(test_verify_write_in) {
    ar_plan_t *p = pull_plan(2, -1, -1);
    ar_plan_copy(p, 1, 0, IN(0, 2), OUT(1, 2), 3);
    const char *m[] = {"rank 1 chan 0 op 1 (COPY)", "writes r0.IN[2..5)", "read-only", NULL};
    expect_fail(p, m);
}
END_TEST

START_TEST(test_verify_mixed_elements) {
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("t", 2, 1, N, AR_FP32, &p), AR_OK);
    ar_addr_t s[2] = {IN(0, 0), IN(1, 1)};
    ar_plan_reduce(p, 0, 0, OUT(0, 0), s, 2, N - 1);
    const char *m[] = {"rank 0 chan 0 op 0 (REDUCE)", "adds element 1 (source 1) to element 0",
                       NULL};
    expect_fail(p, m);
}
END_TEST

/* Scale: a chunked ring-like relay of 16 ranks x 4000 elements verifies quickly. */
START_TEST(test_verify_scale) {
    const int P = 16;
    const uint64_t n = 4001, chunk = 97;
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("relay", P, 1, n, AR_FP32, &p), AR_OK);
    p->scratch_elems = n;
    /* reduce down the line 0 -> P-1 in chunks, then broadcast back */
    for (uint64_t o = 0; o < n; o += chunk) {
        uint64_t k = n - o < chunk ? n - o : chunk;
        for (int r = 0; r < P; r++) {
            if (r == 0) {
                ar_plan_copy(p, 0, 0, SCR(1, o), IN(0, o), k);
            } else {
                ar_plan_wait(p, r, 0, 0, o / chunk + 1);
                ar_addr_t s[2] = {SCR(r, o), IN(r, o)};
                if (r < P - 1) ar_plan_reduce(p, r, 0, SCR(r + 1, o), s, 2, k);
                else ar_plan_reduce(p, r, 0, OUT(r, o), s, 2, k);
            }
            if (r < P - 1) ar_plan_signal(p, r, 0, r + 1, 0);
        }
    }
    for (uint64_t o = 0; o < n; o += chunk) {
        uint64_t k = n - o < chunk ? n - o : chunk;
        for (int r = P - 1; r > 0; r--) {
            if (r < P - 1) ar_plan_wait(p, r, 0, 1, o / chunk + 1);
            ar_plan_copy(p, r, 0, OUT(r - 1, o), OUT(r, o), k);
            ar_plan_signal(p, r, 0, r - 1, 1);
        }
        ar_plan_wait(p, 0, 0, 1, o / chunk + 1);
    }
    /* the next execution's pushes into SCRATCH must follow this one's reads */
    for (int r = 1; r < P; r++) ar_plan_signal(p, r, 0, r - 1, 2);
    for (int r = 0; r < P - 1; r++) ar_plan_wait(p, r, 0, 2, 1);
    expect_ok(p);
}
END_TEST

Suite *suite_plan(void) {
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("ar_plan_verify");
    tcase_add_test(tc, test_verify_ok);
    tcase_add_test(tc, test_chunk_bytes);
    tcase_add_test(tc, test_verify_missing);
    tcase_add_test(tc, test_verify_double);
    tcase_add_test(tc, test_verify_deadlock);
    tcase_add_test(tc, test_verify_poison);
    tcase_add_test(tc, test_verify_race);
    tcase_add_test(tc, test_verify_cross_epoch);
    tcase_add_test(tc, test_verify_scattered);
    tcase_add_test(tc, test_verify_flag_bound);
    tcase_add_test(tc, test_verify_parity_slots);
    tcase_add_test(tc, test_verify_unwaited_out);
    tcase_add_test(tc, test_verify_bounds);
    tcase_add_test(tc, test_verify_write_in);
    tcase_add_test(tc, test_verify_mixed_elements);
    tcase_add_test(tc, test_verify_scale);
    suite_add_tcase(s, tc);
    return s;
}
