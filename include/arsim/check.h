/* arsim: the inputs of a data-moving backend and the float64 check of its outputs
 * (common/check.c): written once, used by ref and cuda. */
#ifndef ARSIM_CHECK_H
#define ARSIM_CHECK_H

#include "arsim/backend.h"
#include "arsim/gen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* count elements of rank's input at seed (arsim/gen.h), rounded to dtype, into buf. */
void ar_gen_fill(ar_dtype_t dtype, uint64_t seed, int rank, void *buf, uint64_t count);

/* What a check sums: the inputs in[0..nranks) in host memory, or (in NULL) the
 * generator's values at seed. */
typedef struct ar_check_inputs_s {
    const void *const *in;
    uint64_t seed;
    ar_gemm_t gemm; /* a fused collective's product (arsim/plan.h): the inputs are its operands */
} ar_check_inputs_t;

/* Compares rank's output (count elements of dtype in host memory) with what the
 * collective defines there (arsim/plan.h): the float64 sum of the inputs (allreduce; on
 * the rank's shard alone, reduce-scatter), the input of the rank whose shard holds the
 * element (allgather), or the float64 sum of every rank's product (matmul-allreduce),
 * relative to the sum of their magnitudes (of every term a_il b_lj for a product), at
 * ar_dtype_tolerance(dtype, nranks) (a product adds one rounding to the dtype and its
 * float32 accumulation, K x 2^-24); a NaN or infinity never passes. Into res: checked, check_ok and check_msg of
 * the first failure over every call ("rank R element I: got G, want W (rel err E > tol
 * T)"), max_rel_err the worst, wrong the elements that fail. Returns 1 when every element passes. */
int ar_check_out(ar_dtype_t dtype, ar_coll_t coll, int nranks, uint64_t count, const ar_check_inputs_t *inputs,
                 int rank, const void *out, ar_result_t *res);

#ifdef __cplusplus
}
#endif
#endif
