/* backends: shared between the registry and the ref/analytic backends, and used
 * by their tests; not part of the public surface. */
#ifndef ARSIM_BACKENDS_INTERNAL_H
#define ARSIM_BACKENDS_INTERNAL_H

#include "arsim/arsim.h"

extern const ar_backend_ops_t ar_ref_backend;
extern const ar_backend_ops_t ar_analytic_backend;

/* Structural check every backend runs before trusting a plan's indices: the plan is
 * finished, every address is in bounds (rank, buffer, off + n), nothing writes IN,
 * 1 <= nsrc (COPY: exactly 1), sources lie inside plan->srcs, flags within their rank's, SIGNAL
 * targets exist, and (when topo is not NULL) the topology has a device for every rank.
 * AR_EPLAN naming rank, channel, op index and the fault. Cheap: O(ops + sources). */
int ar__backend_check_plan(const ar_plan_t *plan, const ar_topo_t *topo, ar_error_t *err);

/* The fits of the model-timed backends (arsim/backend.h): the buffers of the busiest
 * device, input and output, in the model's memory level. */
int ar__backend_model_fits(const ar_topo_t *topo, uint64_t bytes_per_rank, ar_mem_t buffer, ar_error_t *err);
/* The admits of the model-timed backends: where the model's channels hold a device's units
 * (gemm_units, a GPU's SMs: one executor block each), no device runs more channels than it
 * has units, as the hardware could not keep them all running at once (the cuda backend's
 * own check). A plan of one rank counts its channels for every rank. */
int ar__backend_model_admits(const ar_topo_t *topo, const ar_plan_t *plan, ar_error_t *err);

/* ---- ref: execute a plan on host memory with real data ---- */

/* Executes `plan` `nexec` times (epochs 0..nexec-1) on host buffers. in[r] holds
 * plan->count elements of plan->dtype for rank r and is copied into rank r's IN.
 * Before every execution OUT, SCRATCH and the host buffer are filled with NaN.
 * When check is set, every execution's OUTs are compared with the float64 sum of
 * the inputs into res (checked, check_ok, max_rel_err, check_msg: the first
 * failing execution is the one reported; the worst error over all). res (may be
 * NULL) also receives ops_executed, the total over the executions. After the last
 * execution rank r's OUT is copied to out[r] when out and out[r] are not NULL.
 * Returns AR_EPLAN on a deadlock (naming execution, rank, channel, op and flag) or
 * a malformed plan, AR_ENOMEM, else AR_OK: a failed check is not an error here. */
int ar__ref_exec(const ar_plan_t *plan, int nexec, const void *const *in, void *const *out,
                 int check, ar_result_t *res, ar_error_t *err);

/* ar_check_out (arsim/check.h) for every rank's out[r] against the inputs in[] (of a fused
 * collective's product gemm; NULL for none): the
 * check the ref backend runs after each execution. Returns 1 when every element passes. */
int ar__ref_check(ar_dtype_t dtype, ar_coll_t coll, const ar_gemm_t *gemm, int nranks, uint64_t count, const void *const *in,
                  const void *const *out, ar_result_t *res);

#endif
