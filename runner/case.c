/* One case from its plan to its row (arsim/case.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "arsim/arsim.h"
#include "arsim/bound.h"
#include "arsim/case.h"

/* ---- default channels: the count of least predicted time, kept with the topology ---- */

typedef struct tune_key_s {
    const ar_algo_t *algo;
    const ar_model_t *model;
    uint64_t count, chunk_bytes;
    int dtype, buffer, root, grid_w, grid_h, slots;
} tune_key_t;

typedef struct tune_cache_s { /* one allocation, grown by realloc */
    int n, cap;
    struct { tune_key_t key; int channels; } e[];
} tune_cache_t;

static int tune_find(const ar_topo_t *t, const tune_key_t *k) {
    const tune_cache_t *tc = t->tune_cache;
    for (int i = 0; tc && i < tc->n; i++)
        if (!memcmp(&tc->e[i].key, k, sizeof *k)) return tc->e[i].channels;
    return 0;
}

static void tune_keep(const ar_topo_t *t, const tune_key_t *k, int channels) {
    tune_cache_t *tc = t->tune_cache;
    if (!tc || tc->n == tc->cap) {
        const int cap = tc ? 2 * tc->cap : 16;
        tune_cache_t *g = realloc(tc, sizeof *g + (size_t)cap * sizeof g->e[0]);
        if (!g) return; /* not kept: found again next time */
        if (!tc) g->n = 0;
        g->cap = cap;
        ((ar_topo_t *)t)->tune_cache = tc = g; /* a cache of what t already determines */
    }
    memset(&tc->e[tc->n].key, 0, sizeof tc->e[tc->n].key);
    tc->e[tc->n].key = *k;
    tc->e[tc->n++].channels = channels;
}

int ar_case_default_channels(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt,
                             const ar_algo_opts_t *o, ar_mem_t buffer, int *channels, ar_error_t *err) {
    *channels = 0;
    const ar_algo_t *a = ar_algo_find(algo);
    if (!a || a->probe || !t->model || count == 0) return AR_OK; /* the build says what is wrong */
    const uint64_t most = AR_CASE_TUNE_MAX_BYTES / ar_dtype_size(dt);
    tune_key_t key;
    memset(&key, 0, sizeof key); /* compared whole, padding included */
    key = (tune_key_t){.algo = a, .model = t->model, .count = count < most ? count : most,
                       .chunk_bytes = o->chunk_bytes, .dtype = dt, .buffer = buffer, .root = o->root,
                       .grid_w = o->grid_w, .grid_h = o->grid_h, .slots = o->slots};
    if ((*channels = tune_find(t, &key)) > 0) return AR_OK;
    ar_run_opts_t run = AR_RUN_OPTS_DEFAULT;
    run.buffer = buffer;
    double best = INFINITY;
    int best_k = 0;
    for (int k = 1; k <= a->max_channels && (uint64_t)k <= key.count; k *= 2) {
        ar_algo_opts_t ko = *o;
        ko.channels = k;
        ar_plan_t *p = NULL;
        ar_error_t e;
        ar_error_clear(&e);
        int rc = ar_algo_build(algo, t, key.count, dt, &ko, &p, &e);
        if (rc != AR_OK) {
            if (k == 1 && rc != AR_ELIMIT) return ar_error_set(err, rc, e.file[0] ? e.file : NULL, e.line, e.column,
                                                               "%s", e.message);
            continue; /* more channels than a plan may hold: the fewer ones stand */
        }
        ar_result_t res;
        rc = ar_backend_run("analytic", t, p, &run, &res, &e);
        ar_plan_free(p);
        ar_result_free(&res);
        /* more channels only for a real gain (AR_CASE_TUNE_GAIN): fewer hold fewer of the
         * device's engines, and a count that wins by noise would jump from size to size */
        if (rc == AR_OK && res.time_s < best * (1 - AR_CASE_TUNE_GAIN)) best = res.time_s, best_k = k;
    }
    if (best_k > 0) tune_keep(t, &key, best_k);
    *channels = best_k; /* 0 when no count ran (a buffer too small): the algorithm's own */
    return AR_OK;
}

int ar_case_plan(const ar_case_t *c, ar_case_out_t *out, ar_error_t *err) {
    memset(out, 0, sizeof *out);
    out->stage = AR_CASE_BUILD;
    const ar_algo_t *a = ar_algo_find(c->algo);
    ar_algo_opts_t opts = c->algo_opts;
    if (opts.channels == 0)
        AR_TRY(ar_case_default_channels(c->topo, c->algo, c->count, c->dtype, &c->algo_opts, c->run.buffer,
                                        &opts.channels, err));
    AR_TRY(ar_algo_build(c->algo, c->topo, c->count, c->dtype, &opts, &out->plan, err));
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
