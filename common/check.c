/* The inputs and the float64 check (arsim/check.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include "arsim/arsim.h"
#include "arsim/check.h"

void ar_gen_fill(ar_dtype_t dtype, uint64_t seed, int rank, void *buf, uint64_t count) {
    for (uint64_t i = 0; i < count; i++) ar_elem_store(buf, dtype, i, ar_gen_value(seed, rank, i));
}

/* Input q's element i as stored in the dtype. */
static double input(ar_dtype_t dtype, const ar_check_inputs_t *in, int q, uint64_t i) {
    if (in->in) return ar_elem_load(in->in[q], dtype, i);
    const float v = ar_gen_value(in->seed, q, i);
    switch (dtype) {
    case AR_BF16: return ar_bf16_to_f32(ar_f32_to_bf16(v));
    case AR_FP16: return ar_fp16_to_f32(ar_f32_to_fp16(v));
    default: return v;
    }
}

int ar_check_out(ar_dtype_t dtype, ar_coll_t coll, int nranks, uint64_t count, const ar_check_inputs_t *inputs,
                 int rank, const void *out, ar_result_t *res) {
    const int fused = ar_coll_fused(coll), gathered = coll == AR_COLL_ALLGATHER_MATMUL;
    const ar_gemm_t g = inputs->gemm;
    /* a product: one rounding to the dtype, the float32 sums' K roundings; then the allreduce's */
    const double tol = gathered ? ar_dtype_tolerance(dtype, 1) + (double)g.k * 0x1p-24
                       : fused  ? ar_dtype_tolerance(dtype, nranks + 1) + (double)g.k * 0x1p-24
                                : ar_dtype_tolerance(dtype, nranks);
    int ok = 1;
    uint64_t wrong = 0;
    double max_err = 0;
    char msg[sizeof res->check_msg] = "";
    uint64_t lo = 0, len = count; /* the elements the collective defines on this rank */
    if (coll == AR_COLL_REDUCESCATTER) ar_coll_shard(count, nranks, rank, &lo, &len);
    int owner = 0;
    uint64_t own_lo = 0, own_len = 0; /* allgather: the shard being gathered at i */
    for (uint64_t i = lo; i < lo + len; i++) {
        double want = 0, mag = 0;
        if (coll == AR_COLL_ALLGATHER) {
            while (i >= own_lo + own_len) ar_coll_shard(count, nranks, owner++, &own_lo, &own_len);
            want = input(dtype, inputs, owner - 1, i);
            mag = fabs(want);
        } else if (gathered) { /* row i / N of A, from the rank holding it, times column i % N of this rank's B */
            const uint64_t row = i / g.n, col = i % g.n, b0 = g.m * g.k;
            const int q = ar_coll_shard_owner(g.m, nranks, row);
            for (uint64_t l = 0; l < g.k; l++) {
                const double ab = input(dtype, inputs, q, row * g.k + l) * input(dtype, inputs, rank, b0 + l * g.n + col);
                want += ab;
                mag += fabs(ab);
            }
        } else if (fused) { /* row i / N of every A_q times column i % N of its B_q */
            const uint64_t row = i / g.n, col = i % g.n, b0 = g.m * g.k;
            for (int q = 0; q < nranks; q++)
                for (uint64_t l = 0; l < g.k; l++) {
                    const double ab = input(dtype, inputs, q, row * g.k + l) * input(dtype, inputs, q, b0 + l * g.n + col);
                    want += ab;
                    mag += fabs(ab);
                }
        } else
            for (int q = 0; q < nranks; q++) {
                const double v = input(dtype, inputs, q, i);
                want += v;
                mag += fabs(v);
            }
        const double got = ar_elem_load(out, dtype, i);
        double rel;
        if (!isfinite(got)) rel = INFINITY;
        else if (mag > 0) rel = fabs(got - want) / mag;
        else rel = got == want ? 0 : INFINITY;
        if (rel > max_err) max_err = rel;
        if (!(rel <= tol)) wrong++;
        if (!(rel <= tol) && ok) {
            ok = 0;
            snprintf(msg, sizeof msg, "rank %d element %" PRIu64 ": got %.9g, want %.9g (rel err %.3g > tol %.3g)",
                     rank, i, got, want, rel, tol);
        }
    }
    if (res) {
        /* Several checks into one result keep the first failure and the worst error. */
        if (!res->checked || res->check_ok) {
            res->check_ok = ok;
            if (!ok) snprintf(res->check_msg, sizeof res->check_msg, "%s", msg);
        }
        if (!res->checked || max_err > res->max_rel_err) res->max_rel_err = max_err;
        res->wrong = (res->checked ? res->wrong : 0) + wrong;
        res->checked = 1;
    }
    return ok;
}
