/* validate: measuring allreduce on the GPUs for comparison with the model: every
 * algorithm asked for at every size and placement, through `arsim bench`'s timing path,
 * NCCL beside it (one rank per GPU). The bench's rows arrive through a callback and
 * become sweep-shaped rows: written as CSV (when asked) and kept in memory. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "validate/bench.h"
#include "validate/internal.h"

/* Append one row to keep (may be NULL). */
static void keep_row(ar_vrows_t *keep, const ar_row_t *r) {
    if (!keep) return;
    if (keep->n == keep->cap) {
        int cap = keep->cap ? 2 * keep->cap : 64;
        ar_vrow_t *nr = realloc(keep->rows, (size_t)cap * sizeof *nr);
        if (!nr) return;
        keep->rows = nr;
        keep->cap = cap;
    }
    ar_vrow_t *v = &keep->rows[keep->n++];
    memset(v, 0, sizeof *v);
    snprintf(v->backend, sizeof v->backend, "%s", r->backend);
    snprintf(v->topology, sizeof v->topology, "%s", r->topology);
    snprintf(v->model, sizeof v->model, "%s", r->model);
    snprintf(v->algo, sizeof v->algo, "%s", r->algo);
    v->nranks = r->nranks;
    v->dtype = r->dtype;
    v->buffer = r->buffer;
    v->bytes = r->bytes;
    v->count = r->count;
    v->channels = r->channels;
    v->chunk_bytes = r->chunk_bytes;
    v->time_us = r->res->time_s * 1e6;
    snprintf(v->check, sizeof v->check, "%s", r->check);
}

/* Every algorithm, every size, every placement, through the timing path of `arsim
 * bench` (CUDA graphs of many executions, median of repeats), with NCCL beside it
 * where one rank per GPU lets it run. The bench's own CSV is turned into sweep-shaped
 * rows: backend cuda for ours, backend nccl for NCCL. */
/* The bench's rows as they come, into sweep-shaped rows (CSV and kept): ours as backend
 * cuda, NCCL's once per size as backend nccl; the table on stderr unless quiet. */
typedef struct measured_s {
    FILE *csv;
    ar_vrows_t *keep;
    const ar_topo_t *t;
    const char *spec;
    int quiet, rows;
    uint64_t last_nccl;
} measured_t;

static void measured_note(const char *line, void *ctx) {
    const measured_t *m = ctx;
    if (!m->quiet) fprintf(stderr, "# %s\n", line);
}

static void measured_row(const ar_bench_row_t *b, void *ctx) {
    measured_t *m = ctx;
    if (!m->quiet) ar_bench_table_row(stderr, b);
    const ar_topo_t *t = m->t;
    ar_result_t res;
    memset(&res, 0, sizeof res);
    res.time_s = b->time_s;
    res.cycles = t->model ? res.time_s * t->model->clock_ghz * 1e9 : 0;
    ar_row_t row = {
        .backend = "cuda", .topology = t->name[0] ? t->name : m->spec, .model = t->model ? t->model->name : "",
        .algo = b->algo, .nranks = t->nranks, .dtype = b->dtype, .buffer = AR_MEM_HBM, .bytes = b->bytes,
        .count = b->count, .root = b->root,
        .channels = b->channels, .chunk_bytes = b->chunk_bytes, .res = &res,
        .check = b->wrong < 0 ? "" : b->wrong ? "FAIL" : "ok", .links_detected = b->links_detected,
    };
    ar_bound_t bound;
    ar_error_t berr;
    ar_error_clear(&berr);
    const ar_algo_t *a = ar_algo_find(b->algo);
    if (ar_bound(t, b->bytes, AR_MEM_HBM, a && a->via_host, &bound, &berr) == AR_OK) row.bound_s = bound.time_s;
    if (m->csv) ar_row_csv(m->csv, &row);
    keep_row(m->keep, &row);
    m->rows++;
    if (!isnan(b->nccl_s) && b->bytes != m->last_nccl) {
        m->last_nccl = b->bytes;
        ar_result_t nres;
        memset(&nres, 0, sizeof nres);
        nres.time_s = b->nccl_s;
        nres.cycles = t->model ? nres.time_s * t->model->clock_ghz * 1e9 : 0;
        ar_row_t nrow = row;
        nrow.backend = "nccl";
        nrow.algo = "nccl";
        nrow.channels = 0;
        nrow.chunk_bytes = 0;
        nrow.root = -1;
        nrow.check = "";
        nrow.res = &nres;
        if (m->csv) ar_row_csv(m->csv, &nrow);
        keep_row(m->keep, &nrow);
    }
    if (m->csv) fflush(m->csv);
}

int ar_validate_measure(const ar_measure_t *o, FILE *csv, ar_vrows_t *keep, ar_error_t *err) {
    const char *spec = o->topology;
    char device[256], date[64];
    if (ar_calib_device_info(device, sizeof device, err) != AR_OK) {
        if (err->code == AR_ENOTSUP) { /* no cuda backend in this build (validate/none.c) */
            char why[sizeof err->message];
            snprintf(why, sizeof why, "%s", err->message);
            return AR_ERR(err, AR_ENOTSUP, "cannot measure here: %s; measure on a GPU machine with --measure-only "
                                           "-o measured.csv and compare here with --measured FILE", why);
        }
        return err->code;
    }
    ar_utc_date(date, sizeof date);
    if (csv) {
        fprintf(csv, "# arsim %s validate --measure-only: allreduce measured on the cuda backend "
                     "(timing path of arsim bench: CUDA graphs, median of repeats)\n", PACKAGE_VERSION);
        fprintf(csv, "# device: %s\n# date: %s\n", device, date);
        ar_row_csv_header(csv);
        fflush(csv);
    }
    if (!o->quiet) fprintf(stderr, "validate: measuring on %s\n", device);
    static const int default_placements[] = {1, 2, 4};
    const int *placements = o->nplacements ? o->placements : default_placements;
    const int np = o->nplacements ? o->nplacements : 3;
    uint64_t sizes[AR_MEASURE_MAX_SIZES];
    const int nsizes = o->nsizes < AR_MEASURE_MAX_SIZES ? o->nsizes : AR_MEASURE_MAX_SIZES;
    /* the GPUs' own kind's model on a board, where none was asked (ar_calib_gpu_model) */
    const char *model = o->model ? o->model : ar_calib_gpu_model(spec);
    double t0 = ar_now_s();
    int rc = AR_OK, nrows = 0;
    for (int ip = 0; ip < np && rc == AR_OK; ip++) {
        if (o->time_limit_s > 0 && ar_now_s() - t0 > o->time_limit_s) {
            if (csv)
                fprintf(csv, "# stopped: --time-limit %.0f s reached before %d ranks per device\n",
                        o->time_limit_s, placements[ip]);
            fprintf(stderr, "validate: --time-limit %.0f s reached; %d rows measured\n", o->time_limit_s, nrows);
            break;
        }
        for (int id = 0; id < o->ndtypes && rc == AR_OK; id++) {
            ar_dtype_t dt = o->dtypes[id];
            /* a size that is not a whole number of elements is rounded up to one */
            const size_t es = ar_dtype_size(dt);
            for (int is = 0; is < nsizes; is++) sizes[is] = o->counts ? o->sizes[is] * es : (o->sizes[is] + es - 1) / es * es;
            ar_topo_t *t = NULL;
            if ((rc = ar_topo_open(spec, model, &t, err)) != AR_OK) break;
            int nranks = placements[ip] * t->ndevices;
            if (nranks != t->nranks && (rc = ar_topo_place_blocks(t, nranks, err)) != AR_OK) {
                ar_topo_free(t);
                break;
            }
            ar_hw_bench_opts_t bo = {
                .algos = o->algos, .sizes = sizes, .nsizes = nsizes, .dtype = dt, .channels = o->channels,
                .iters = o->iters > 1 ? o->iters : 0, .repeats = 0, .check = o->check,
                .nccl = placements[ip] == 1, .force_host = 0, .timeout_s = o->timeout_s,
            };
            measured_t mx = {.csv = csv, .keep = keep, .t = t, .spec = spec, .quiet = o->quiet};
            const ar_bench_sink_t sink = {.row = measured_row, .note = measured_note, .ctx = &mx};
            int wrong = 0;
            rc = ar_hw_bench(t, &bo, &sink, &wrong, err);
            nrows += mx.rows;
            ar_topo_free(t);
            if (wrong) fprintf(stderr, "validate: %d measured rows failed their check\n", wrong);
        }
    }
    if (keep) {
        snprintf(keep->device, sizeof keep->device, "%s", device);
        snprintf(keep->date, sizeof keep->date, "%s", date);
    }
    if (!o->quiet) fprintf(stderr, "validate: %d rows measured in %.0f s\n", nrows, ar_now_s() - t0);
    return rc;
}
