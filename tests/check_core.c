/* core: errors, dtypes, sizes, plan building. */
#include <math.h>
#include <string.h>
#include "arsim/arsim.h"
#include "tests/suites.h"

START_TEST(test_strerror) {
    ck_assert_str_eq(ar_strerror(AR_OK), "ok");
    ck_assert_str_eq(ar_strerror(AR_ETOPO), "invalid topology");
    ar_error_t e;
    char buf[300];
    ck_assert_int_eq(ar_error_set(&e, AR_EPARSE, "t.yaml", 3, 7, "links: %s", "bad"), AR_EPARSE);
    ck_assert_str_eq(ar_error_format(&e, buf, sizeof buf), "t.yaml:3:7: links: bad");
}
END_TEST

START_TEST(test_size_parse) {
    uint64_t b;
    ar_error_t e;
    ck_assert_int_eq(ar_size_parse("8K", &b, &e), AR_OK);
    ck_assert_uint_eq(b, 8192);
    ck_assert_int_eq(ar_size_parse("1G", &b, &e), AR_OK);
    ck_assert_uint_eq(b, 1ull << 30);
    ck_assert_int_eq(ar_size_parse("1000", &b, &e), AR_OK);
    ck_assert_uint_eq(b, 1000);
    ck_assert_int_eq(ar_size_parse("0", &b, &e), AR_EINVAL);
    ck_assert_int_eq(ar_size_parse("-4K", &b, &e), AR_EINVAL);
    ck_assert_int_eq(ar_size_parse("4X", &b, &e), AR_EINVAL);
    ck_assert_int_eq(ar_size_parse("99999999999999999999", &b, &e), AR_ELIMIT);
    ck_assert_int_eq(ar_size_parse("17179869184G", &b, &e), AR_ELIMIT);
    uint64_t s[64];
    int n;
    ck_assert_int_eq(ar_size_range_parse("8K:1M", s, 64, &n, &e), AR_OK);
    ck_assert_int_eq(n, 8);
    ck_assert_uint_eq(s[7], 1 << 20);
    ck_assert_int_eq(ar_size_range_parse("1M:8K", s, 64, &n, &e), AR_EINVAL);
}
END_TEST

START_TEST(test_dtype_round) {
    ck_assert_float_eq(ar_bf16_to_f32(ar_f32_to_bf16(1.0f)), 1.0f);
    /* 1 + 2^-8 is halfway between two bf16 values: ties go to even (1.0). */
    ck_assert_float_eq(ar_bf16_to_f32(ar_f32_to_bf16(1.0f + 0x1p-8f)), 1.0f);
    ck_assert_float_eq(ar_bf16_to_f32(ar_f32_to_bf16(1.0f + 0x1p-7f)), 1.0f + 0x1p-7f);
    ck_assert_float_eq(ar_fp16_to_f32(ar_f32_to_fp16(-2.5f)), -2.5f);
    ck_assert_float_eq(ar_fp16_to_f32(ar_f32_to_fp16(1.0f + 0x1p-11f)), 1.0f);
    ck_assert_float_eq(ar_fp16_to_f32(ar_f32_to_fp16(0x1p-24f)), 0x1p-24f);
    ck_assert(isinf(ar_fp16_to_f32(ar_f32_to_fp16(70000.0f))));
    ar_dtype_t t;
    ck_assert_int_eq(ar_dtype_parse("bf16", &t), AR_OK);
    ck_assert_int_eq(t, AR_BF16);
    ck_assert_int_eq(ar_dtype_parse("int8", &t), AR_EINVAL);
}
END_TEST

START_TEST(test_plan_build) {
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("t", 2, 2, 10, AR_FP32, &p), AR_OK);
    ar_addr_t srcs[2] = {ar_addr(1, AR_BUF_IN, 0), ar_addr(0, AR_BUF_IN, 0)};
    ck_assert_int_eq(ar_plan_reduce(p, 0, 1, ar_addr(0, AR_BUF_OUT, 0), srcs, 2, 10), AR_OK);
    ck_assert_int_eq(ar_plan_signal(p, 0, 1, 1, 3), AR_OK);
    ck_assert_int_eq(ar_plan_wait(p, 1, 0, 3, 1), AR_OK);
    ck_assert_int_eq(ar_plan_copy(p, 0, 0, ar_addr(0, AR_BUF_OUT, 0), ar_addr(0, AR_BUF_IN, 0), 1), AR_OK);
    ck_assert_int_eq(ar_plan_signal(p, 5, 0, 1, 0), AR_EINVAL);
    ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    ck_assert_uint_eq(p->nops, 4);
    ck_assert_uint_eq(p->nflags, 4);
    /* flags are each rank's own: rank 1's four (up to the 3 named), rank 0 names none */
    ck_assert_uint_eq(ar_plan_rank_flags(p, 0), 0);
    ck_assert_uint_eq(ar_plan_rank_flags(p, 1), 4);
    ck_assert_uint_eq(ar_plan_flag_slots(p), 4);
    ck_assert_uint_eq(p->per_epoch[ar_plan_flag(p, 1, 3)], 1);
    /* channel order: (0,0) then (0,1) then (1,0) */
    ck_assert_uint_eq(ar_plan_chan(p, 0, 0)->nops, 1);
    ck_assert_uint_eq(ar_plan_chan(p, 0, 1)->first, 1);
    ck_assert_uint_eq(p->ops[1].code, AR_OP_REDUCE);
    ck_assert_int_eq(p->srcs[p->ops[1].src + 1].rank, 0);
    ar_plan_free(p);
}
END_TEST

Suite *suite_core(void) {
    Suite *s = suite_create("core");
    TCase *tc;
    tc = tcase_create("ar_strerror"); tcase_add_test(tc, test_strerror); suite_add_tcase(s, tc);
    tc = tcase_create("ar_size_parse"); tcase_add_test(tc, test_size_parse); suite_add_tcase(s, tc);
    tc = tcase_create("ar_dtype"); tcase_add_test(tc, test_dtype_round); suite_add_tcase(s, tc);
    tc = tcase_create("ar_plan_build"); tcase_add_test(tc, test_plan_build); suite_add_tcase(s, tc);
    return s;
}
