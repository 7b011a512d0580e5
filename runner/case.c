/* One case from its plan to its row (arsim/case.h). */
#include <math.h>
#include <string.h>
#include "arsim/arsim.h"
#include "arsim/bound.h"
#include "arsim/case.h"

int ar_case_plan(const ar_case_t *c, ar_case_out_t *out, ar_error_t *err) {
    memset(out, 0, sizeof *out);
    out->stage = AR_CASE_BUILD;
    const ar_algo_t *a = ar_algo_find(c->algo);
    AR_TRY(ar_algo_build(c->algo, c->topo, c->count, c->dtype, &c->algo_opts, &out->plan, err));
    const ar_plan_t *p = out->plan;
    out->stage = AR_CASE_VERIFY;
    const int cheap = (uint64_t)p->nops * (uint64_t)p->nranks * (uint64_t)p->nchannels <= AR_CASE_VERIFY_MAX_WORK;
    /* a probe computes no allreduce: nothing to verify it against */
    if (a && !a->probe && (c->verify == 1 || (c->verify == -1 && cheap))) {
        ar_error_t v;
        ar_error_clear(&v);
        if (ar_plan_verify(p, &v) != AR_OK)
            return ar_error_set(err, AR_EPLAN, v.file[0] ? v.file : NULL, v.line, v.column,
                                "plan failed verification: %s", v.message);
    }
    out->stage = AR_CASE_RUN;
    const ar_topo_t *t = c->topo;
    out->row = (ar_row_t){
        .backend = c->backend, .topology = c->topology, .model = t->model ? t->model->name : "",
        .algo = c->algo, .nranks = p->nranks, .dtype = c->dtype, .buffer = c->run.buffer,
        .bytes = c->count * ar_dtype_size(c->dtype), .count = c->count, .root = p->root,
        .channels = p->nchannels, .chunk_bytes = ar_plan_chunk_bytes(p), .res = &out->res, .check = "",
    };
    ar_bound_t b;
    ar_error_t berr;
    ar_error_clear(&berr);
    if (ar_bound(t, out->row.bytes, c->run.buffer, p->host_elems > 0, &b, &berr) == AR_OK) out->row.bound_s = b.time_s;
    return AR_OK;
}

double ar_row_efficiency(const ar_row_t *r) {
    const double t = r->res ? r->res->time_s : 0;
    return t > 0 && r->bound_s > 0 ? r->bound_s / t : NAN;
}

int ar_case_execute(const ar_case_t *c, ar_case_out_t *out, ar_error_t *err) {
    AR_TRY(ar_backend_run(c->backend, c->topo, out->plan, &c->run, &out->res, err));
    if (out->res.checked) out->row.check = out->res.check_ok ? "ok" : "FAIL";
    out->stage = AR_CASE_DONE;
    return AR_OK;
}

int ar_case_run(const ar_case_t *c, ar_case_out_t *out, ar_error_t *err) {
    AR_TRY(ar_case_plan(c, out, err));
    return ar_case_execute(c, out, err);
}

void ar_case_out_free(ar_case_out_t *out) {
    ar_result_free(&out->res);
    ar_plan_free(out->plan);
    out->plan = NULL;
}
