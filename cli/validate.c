/* arsim calibrate / validate.
 *
 *   arsim calibrate --backend cuda -o MODEL.yaml
 *       micro-benchmarks on two GPUs (validate/calib.cu) -> a model file; no allreduce is timed.
 *   arsim validate --refs
 *       every reference row (validate/refs/NAME.csv) beside the model's prediction, and
 *       beside a measurement where validate/results holds one, with the ratios.
 *   arsim validate --measure-only -o measured.csv
 *       every algorithm x size x placement on the cuda backend (the GPU machine has no
 *       SimGrid, so measuring and predicting are split).
 *   arsim validate --measured measured.csv --model MODEL.yaml
 *       predict every measured row with the sim backend on the calibrated model; CSV of
 *       measured, predicted, error %, and a summary (median and max |error|).
 *   arsim validate --model MODEL.yaml   (a build with both cuda and sim)
 *       measure and predict in one go. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "config.h"
#include "cli/internal.h"
#include "cli/opts.h"
#include "validate/internal.h"
#include "validate/bench.h"
#include "arsim/util.h"

/* ------------------------------------------------------------------ helpers */

static int file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *predict_backend(const char *asked) { return asked ? asked : ar_backend_default(); }

/* 1 when the backend is built and has every one of caps. */
static int backend_can(const char *name, unsigned caps) {
    const ar_backend_ops_t *b = ar_backend_find(name);
    return b && (b->caps & caps) == caps;
}

/* Split "1,2,4" into ints in [lo, hi]. */
static int parse_int_list(const char *s, int *out, int max, int *n, long lo, long hi) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long v;
        if (*n >= max || ar_cli_parse_int(tok, lo, hi, &v) != AR_OK) return AR_EINVAL;
        out[(*n)++] = (int)v;
    }
    return *n ? AR_OK : AR_EINVAL;
}

/* ------------------------------------------------------------------ calibrate */

enum { C_OUT = 1000, C_GPUS, C_THREADS, C_UNROLL, C_REPS, C_LINK_FROM, C_NAME, C_LAUNCH_WIDE, C_RAW };

typedef struct cal_ctx_s {
    const char *out, *name, *link_from, *raw;
    int gpus[2], threads, unroll, reps, launch_wide;
} cal_ctx_t;

static int cal_handle(int val, const char *arg, void *p) {
    cal_ctx_t *c = p;
    long v;
    switch (val) {
    case 'o': case C_OUT: c->out = arg; return 0;
    case C_NAME: c->name = arg; return 0;
    case C_GPUS: {
        int n;
        if (parse_int_list(arg, c->gpus, 2, &n, 0, 63) || n != 2 || c->gpus[0] == c->gpus[1])
            return ar_cli_fail("calibrate", "--gpus '%s': expected two distinct GPU indices, e.g. 0,1", arg);
        return 0;
    }
    case C_THREADS:
        if (ar_cli_parse_int(arg, 32, 1024, &v) || v % 32)
            return ar_cli_fail("calibrate", "--threads '%s': expected a multiple of 32 in 32..1024", arg);
        c->threads = (int)v;
        return 0;
    case C_UNROLL:
        if (ar_cli_parse_int(arg, 1, 8, &v) || v == 5 || v == 7)
            return ar_cli_fail("calibrate", "--unroll '%s': expected 1, 2, 3, 4, 6 or 8", arg);
        c->unroll = (int)v;
        return 0;
    case C_REPS:
        if (ar_cli_parse_int(arg, 1, 1000, &v))
            return ar_cli_fail("calibrate", "--reps '%s': expected 1..1000", arg);
        c->reps = (int)v;
        return 0;
    case C_LINK_FROM:
        if (strcmp(arg, "read") && strcmp(arg, "write") && strcmp(arg, "mean"))
            return ar_cli_fail("calibrate", "--link-from '%s': expected read, write or mean", arg);
        c->link_from = arg;
        return 0;
    case C_LAUNCH_WIDE: c->launch_wide = 1; return 0;
    case C_RAW: c->raw = arg; return 0;
    }
    return 2;
}

/* Links between the topology's first two devices (NV18 on h200_pair). */
static int pair_links(const ar_topo_t *t) {
    for (int i = 0; i < t->nlinks; i++)
        if ((t->links[i].a == 0 && t->links[i].b == 1) || (t->links[i].a == 1 && t->links[i].b == 0))
            return t->links[i].count;
    return 0;
}

int ar_cli_calibrate(int argc, char **argv) {
    static const struct option lo[] = {
        {"out", required_argument, NULL, C_OUT},
        {"gpus", required_argument, NULL, C_GPUS},
        {"threads", required_argument, NULL, C_THREADS},
        {"unroll", required_argument, NULL, C_UNROLL},
        {"reps", required_argument, NULL, C_REPS},
        {"link-from", required_argument, NULL, C_LINK_FROM},
        {"name", required_argument, NULL, C_NAME},
        {"launch-wide", no_argument, NULL, C_LAUNCH_WIDE},
        {"raw", required_argument, NULL, C_RAW},
        {0, 0, 0, 0},
    };
    cal_ctx_t cx = {NULL, NULL, NULL, NULL, {0, 1}, 512, 6, 5, 0};
    ar_cli_extra_t extra = {
        lo, "o:", cal_handle, &cx,
        "calibrate options:\n"
        "  -o, --out FILE         write the model here (required)\n"
        "  --name NAME            the model's name (default: the file's base name)\n"
        "  --gpus A,B             the two GPUs to measure between (default 0,1)\n"
        "  --threads N            threads per block, as the executor uses (default 512)\n"
        "  --unroll N             16-byte loads in flight per thread (default 6, the executor's)\n"
        "  --reps N               repeats per point, median kept (default 5)\n"
        "  --link-from read|write|mean  which two-way streaming ceiling sets the link bandwidth\n"
        "  --launch-wide          launch_ns from kernels of one block per SM (default 16 blocks)\n"
        "  --raw FILE             also write the peer bandwidth curves (CSV: blocks, read, write)\n"
        "  --topology T           where the link count of the pair comes from (default h200_pair)\n"
        "Micro-benchmarks only: flag latency, launch overhead, peer read/write bandwidth\n"
        "against block count, local memory bandwidth and latency, reduction throughput,\n"
        "host staging (all SMs and one block), and the executor's own cost per op (probe\n"
        "plans x-chainN, x-sigsN, x-waitsN). No allreduce is timed. Needs two GPUs with\n"
        "peer access.\n",
    };
    ar_cli_opts_t o;
    int rc = ar_cli_opts_parse("calibrate", argc, argv, AR_CLI_NO_SIZE, &extra, &o);
    if (rc == AR_CLI_HELP) { ar_cli_opts_free(&o); return 0; }
    if (rc) { ar_cli_opts_free(&o); return rc; }
    ar_topo_t *t = NULL;
    FILE *f = NULL;
    char *tmp = NULL;
    if (o.backend_given && (o.nbackends != 1 || !backend_can(o.backends[0], AR_BACKEND_HARDWARE))) {
        rc = ar_cli_fail("calibrate", "--backend %s: calibration runs micro-benchmarks on the cuda "
                                      "backend only (--backend cuda)", o.backends[0]);
        goto out;
    }
    if (!cx.out) {
        rc = ar_cli_fail("calibrate", "no output file: use -o MODEL.yaml");
        goto out;
    }
    char name[AR_NAME_MAX];
    if (cx.name) {
        snprintf(name, sizeof name, "%s", cx.name);
    } else {
        const char *b = strrchr(cx.out, '/');
        b = b ? b + 1 : cx.out;
        snprintf(name, sizeof name, "%s", b);
        char *dot = strrchr(name, '.');
        if (dot && dot != name) *dot = 0;
    }
    rc = ar_cli_topo_open(&o, o.ntopos && strcmp(o.topos[0], AR_CLI_DEFAULT_TOPOLOGY) ? o.topos[0]
                                                                                      : "h200_pair", &t);
    if (rc) goto out;
    ar_calib_opts_t copts = AR_CALIB_OPTS_DEFAULT;
    copts.dev0 = cx.gpus[0];
    copts.dev1 = cx.gpus[1];
    copts.threads = cx.threads;
    copts.unroll = cx.unroll;
    copts.reps = cx.reps;
    copts.quiet = o.quiet;
    ar_calib_t cal;
    ar_error_t err;
    ar_error_clear(&err);
    if (ar_calib_run(&copts, &cal, &err) != AR_OK) {
        rc = ar_cli_fail_err("calibrate", &err);
        goto out;
    }
    /* The executor's own cost per op: probe plans on the pair, one rank per GPU. */
    if (t->nranks == 2 && t->placement[0] != t->placement[1] &&
        ar_calib_exec(t, &cal, o.quiet, &err) != AR_OK) {
        rc = ar_cli_fail_err("calibrate", &err);
        goto out;
    }
    /* Write to a temporary name, then rename: a half-written model never exists. */
    size_t tl = strlen(cx.out) + 8;
    tmp = malloc(tl);
    if (!tmp) { rc = ar_cli_fail("calibrate", "out of memory"); goto out; }
    snprintf(tmp, tl, "%s.tmp", cx.out);
    f = fopen(tmp, "w");
    if (!f) {
        rc = ar_cli_fail("calibrate", "-o '%s': cannot write: %s", cx.out, strerror(errno));
        goto out;
    }
    ar_calib_fit_t fit = {name, cx.link_from, pair_links(t), cx.launch_wide};
    if (ar_validate_calib_write(f, &cal, &fit, &err) != AR_OK) {
        fclose(f);
        f = NULL;
        unlink(tmp);
        rc = ar_cli_fail_err("calibrate", &err);
        goto out;
    }
    if (fclose(f) != 0) {
        f = NULL;
        unlink(tmp);
        rc = ar_cli_fail("calibrate", "-o '%s': write failed: %s", cx.out, strerror(errno));
        goto out;
    }
    f = NULL;
    /* The file must load as a model, or it is no use to anyone. */
    ar_model_t *m = NULL;
    if (ar_model_load(tmp, &m, &err) != AR_OK) {
        char buf[600];
        rc = ar_cli_fail("calibrate", "internal error: the written model does not load: %s",
                         ar_error_format(&err, buf, sizeof buf));
        goto out;
    }
    ar_model_free(m);
    if (rename(tmp, cx.out) != 0) {
        rc = ar_cli_fail("calibrate", "-o '%s': %s", cx.out, strerror(errno));
        goto out;
    }
    if (cx.raw) {
        FILE *rf = fopen(cx.raw, "w");
        if (!rf) {
            rc = ar_cli_fail("calibrate", "--raw '%s': cannot write: %s", cx.raw, strerror(errno));
            goto out;
        }
        fprintf(rf, "# arsim calibrate: peer bandwidth against blocks (one direction, %d threads x %d "
                    "16-byte loads per thread)\n# device: %s\n# date: %s\n", cal.threads, cal.unroll,
                cal.device, cal.date);
        fprintf(rf, "blocks,peer_read_gbps,peer_write_gbps\n");
        for (int i = 0; i < cal.npoints; i++)
            fprintf(rf, "%d,%.3f,%.3f\n", cal.blocks[i], cal.peer_read_gbps[i], cal.peer_write_gbps[i]);
        fclose(rf);
    }
    if (!o.quiet) fprintf(stderr, "calibrate: wrote %s (%.1f s of benchmarks)\n", cx.out, cal.wall_s);
    rc = 0;
out:
    if (f) fclose(f);
    free(tmp);
    ar_topo_free(t);
    ar_cli_opts_free(&o);
    return rc;
}

/* ------------------------------------------------------------------ validate */

enum {
    V_REFS = 1100, V_REFS_DIR, V_MEASURE_ONLY, V_MEASURED, V_OUT, V_SUMMARY, V_PLACEMENTS,
    V_TIME_LIMIT, V_PREDICT_BACKEND,
};

typedef struct val_ctx_s {
    int refs, measure_only;
    const char *refs_dir, *measured, *out, *summary, *pbackend;
    int placements[8], nplacements;
    double time_limit_s;
} val_ctx_t;

static int val_handle(int val, const char *arg, void *p) {
    val_ctx_t *c = p;
    double d;
    switch (val) {
    case V_REFS: c->refs = 1; return 0;
    case V_REFS_DIR: c->refs_dir = arg; c->refs = 1; return 0;
    case V_MEASURE_ONLY: c->measure_only = 1; return 0;
    case V_MEASURED: c->measured = arg; return 0;
    case 'o': case V_OUT: c->out = arg; return 0;
    case V_SUMMARY: c->summary = arg; return 0;
    case V_PLACEMENTS:
        if (parse_int_list(arg, c->placements, 8, &c->nplacements, 1, 64))
            return ar_cli_fail("validate", "--placements '%s': expected ranks per device, e.g. 1,2,4", arg);
        return 0;
    case V_TIME_LIMIT:
        if (ar_cli_parse_double(arg, 1, 1e6, &d))
            return ar_cli_fail("validate", "--time-limit '%s': expected seconds", arg);
        c->time_limit_s = d;
        return 0;
    case V_PREDICT_BACKEND:
        if (!backend_can(arg, AR_BACKEND_MODEL)) {
            char which[128];
            ar_backend_names_with(AR_BACKEND_MODEL, which, sizeof which);
            return ar_cli_fail("validate", "--predict-with '%s': expected a backend that predicts, %s", arg, which);
        }
        c->pbackend = arg;
        return 0;
    }
    return 2;
}

/* ---- measuring (cuda) ---- */

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
        .count = b->count, .channels = b->channels, .chunk_bytes = 0, .res = &res,
        .check = b->wrong < 0 ? "" : b->wrong ? "FAIL" : "ok",
    };
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
        nrow.check = "";
        nrow.res = &nres;
        if (m->csv) ar_row_csv(m->csv, &nrow);
        keep_row(m->keep, &nrow);
    }
    if (m->csv) fflush(m->csv);
}

static int measure(ar_cli_opts_t *o, val_ctx_t *cx, FILE *csv, ar_vrows_t *keep) {
    const char *spec = o->ntopos && strcmp(o->topos[0], AR_CLI_DEFAULT_TOPOLOGY) ? o->topos[0] : "h200_pair";
    char device[256], date[64];
    ar_error_t err;
    ar_error_clear(&err);
    if (ar_calib_device_info(device, sizeof device, &err) != AR_OK) {
        if (err.code == AR_ENOTSUP) /* no cuda backend in this build (validate/none.c) */
            return ar_cli_fail("validate", "cannot measure here: %s; measure on a GPU machine "
                                           "with --measure-only -o measured.csv and compare here with "
                                           "--measured FILE", err.message);
        return ar_cli_fail_err("validate", &err);
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
    int placements[8] = {1, 2, 4}, np = 3;
    if (cx->nplacements) { memcpy(placements, cx->placements, sizeof placements); np = cx->nplacements; }
    /* Every algorithm asked for (all by default, naive included). */
    char algos[1024] = "";
    for (int i = 0; i < o->nalgos; i++)
        snprintf(algos + strlen(algos), sizeof algos - strlen(algos), "%s%s", i ? "," : "", o->algos[i]->name);
    uint64_t sizes[AR_CLI_MAX_SIZES];
    int nsizes = ar_cli_nsizes(o);
    double t0 = ar_now_s();
    int rc = 0, nrows = 0;
    for (int ip = 0; ip < np && rc == 0; ip++) {
        if (cx->time_limit_s > 0 && ar_now_s() - t0 > cx->time_limit_s) {
            if (csv)
                fprintf(csv, "# stopped: --time-limit %.0f s reached before %d ranks per device\n",
                        cx->time_limit_s, placements[ip]);
            fprintf(stderr, "validate: --time-limit %.0f s reached; %d rows measured\n", cx->time_limit_s, nrows);
            break;
        }
        for (int id = 0; id < o->ndtypes && rc == 0; id++) {
            ar_dtype_t dt = o->dtypes[id];
            for (int is = 0; is < nsizes; is++) {
                uint64_t count;
                ar_cli_size_at(o, is, dt, &sizes[is], &count);
            }
            ar_topo_t *t = NULL;
            if ((rc = ar_cli_topo_open(o, spec, &t))) break;
            int nranks = placements[ip] * t->ndevices;
            if (nranks != t->nranks && ar_topo_place_blocks(t, nranks, &err) != AR_OK) {
                ar_topo_free(t);
                rc = ar_cli_fail_err("validate", &err);
                break;
            }
            ar_hw_bench_opts_t bo = {
                .algos = algos, .sizes = sizes, .nsizes = nsizes, .dtype = dt, .channels = o->channels[0],
                .iters = o->iters > 1 ? o->iters : 0, .repeats = 0, .check = o->check,
                .nccl = placements[ip] == 1, .force_host = 0, .timeout_s = o->timeout_s,
            };
            measured_t mx = {.csv = csv, .keep = keep, .t = t, .spec = spec, .quiet = o->quiet};
            const ar_bench_sink_t sink = {.row = measured_row, .note = measured_note, .ctx = &mx};
            int wrong = 0;
            if (ar_hw_bench(t, &bo, &sink, &wrong, &err) != AR_OK) rc = ar_cli_fail_err("validate", &err);
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

/* ---- predicting ---- */

typedef struct topo_cache_s {
    char spec[128];
    int nranks;
    ar_topo_t *t;
} topo_cache_t;

static ar_topo_t *cached_topo(topo_cache_t *c, int *n, int max, const char *spec, const char *model,
                              int nranks, ar_error_t *err) {
    for (int i = 0; i < *n; i++)
        if (!strcmp(c[i].spec, spec) && c[i].nranks == nranks) return c[i].t;
    if (*n >= max) { AR_ERR(err, AR_ELIMIT, "too many topologies"); return NULL; }
    ar_topo_t *t = NULL;
    if (ar_topo_open(spec, model, &t, err) != AR_OK) return NULL;
    if (nranks > 0 && nranks != t->nranks && ar_topo_place_blocks(t, nranks, err) != AR_OK) {
        ar_topo_free(t);
        return NULL;
    }
    snprintf(c[*n].spec, sizeof c[*n].spec, "%s", spec);
    c[*n].nranks = nranks;
    c[*n].t = t;
    (*n)++;
    return t;
}

/* Predict one configuration. */
static int predict(const char *backend, ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt,
                   ar_mem_t buffer, int channels, uint64_t chunk, ar_result_t *res, int *plan_channels,
                   ar_error_t *err) {
    ar_case_t c = {
        .backend = backend, .topo = t, .topology = t->name, .algo = algo, .count = count, .dtype = dt,
        .algo_opts = AR_ALGO_OPTS_DEFAULT, .run = AR_RUN_OPTS_DEFAULT, .verify = 0,
    };
    c.algo_opts.channels = channels;
    c.algo_opts.chunk_bytes = chunk;
    c.run.buffer = buffer;
    ar_case_out_t co;
    const int rc = ar_case_run(&c, &co, err);
    if (plan_channels && co.plan) *plan_channels = co.plan->nchannels;
    *res = co.res;
    co.res.links = NULL; /* now res's */
    ar_case_out_free(&co);
    return rc;
}

typedef struct stat_s {
    char key[40];
    double *abs;
    int n, cap;
} stat_t;

static void stat_add(stat_t *s, int *ns, int max, const char *key, double v) {
    int i;
    for (i = 0; i < *ns; i++)
        if (!strcmp(s[i].key, key)) break;
    if (i == *ns) {
        if (*ns >= max) return;
        memset(&s[i], 0, sizeof s[i]);
        snprintf(s[i].key, sizeof s[i].key, "%s", key);
        (*ns)++;
    }
    if (s[i].n == s[i].cap) {
        int cap = s[i].cap ? 2 * s[i].cap : 32;
        double *nv = realloc(s[i].abs, (size_t)cap * sizeof *nv);
        if (!nv) return;
        s[i].abs = nv;
        s[i].cap = cap;
    }
    s[i].abs[s[i].n++] = fabs(v);
}

static void stat_line(FILE *f, const stat_t *s) {
    double mx = 0;
    for (int i = 0; i < s->n; i++) mx = fmax(mx, s->abs[i]);
    fprintf(f, "| %-22s | %5d | %8.2f | %8.2f |\n", s->key, s->n, ar_validate_median(s->abs, s->n), mx);
}

/* The channels option that rebuilds the measured plan: 0 (the default) when it already
 * gives m->channels, else the option value among a few candidates that does. */
static int plan_channels_for(const ar_topo_t *t, const ar_vrow_t *m, int *opt, ar_error_t *err) {
    int cand[] = {0, m->channels, m->channels / 2, m->channels * 2};
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        if (i > 0 && cand[i] <= 0) continue;
        ar_algo_opts_t ao = AR_ALGO_OPTS_DEFAULT;
        ao.channels = cand[i];
        ao.chunk_bytes = m->chunk_bytes;
        ar_plan_t *plan = NULL;
        int rc = ar_algo_build(m->algo, t, m->count, m->dtype, &ao, &plan, err);
        if (rc != AR_OK) {
            if (i == 0) return rc;
            continue;
        }
        int n = plan->nchannels;
        ar_plan_free(plan);
        if (n == m->channels || m->channels == 0) {
            *opt = cand[i];
            return AR_OK;
        }
    }
    *opt = 0;
    return AR_OK; /* none matches: the default, and the caller says so */
}

static int compare(ar_cli_opts_t *o, val_ctx_t *cx, const ar_vrows_t *meas, const char *meas_name) {
    const char *backend = predict_backend(cx->pbackend);
    if (!ar_backend_find(backend))
        return ar_cli_fail("validate", "--predict-with %s: not in this build", backend);
    const char *model = o->model;
    if (!model)
        return ar_cli_fail("validate", "no model to predict with: use --model MODEL.yaml (the file "
                                       "`arsim calibrate` wrote)");
    FILE *csv = stdout;
    if (cx->out && !(csv = fopen(cx->out, "w")))
        return ar_cli_fail("validate", "-o '%s': cannot write: %s", cx->out, strerror(errno));
    char date[64];
    ar_utc_date(date, sizeof date);
    fprintf(csv, "# arsim %s validate: measured (cuda) vs predicted (%s on model %s)\n", PACKAGE_VERSION,
            backend, model);
    fprintf(csv, "# measured: %s\n# device: %s\n# measured on: %s\n# predicted on: %s\n", meas_name,
            meas->device[0] ? meas->device : "unknown", meas->date[0] ? meas->date : "unknown", date);
    fputs("topology,nranks,ranks_per_device,algo,dtype,buffer,bytes,count,channels,chunk_bytes,"
          "measured_us,predicted_us,error_pct,link_us,memory_us,reduce_us,sync_us,launch_us,"
          "predict_backend,model\n", csv);
    topo_cache_t cache[32];
    int ncache = 0, rc = 0, nok = 0;
    stat_t by_algo[32], by_place[16], all[1];
    int nalgo = 0, nplace = 0, nall = 0;
    char model_name[AR_NAME_MAX] = "";
    double t0 = ar_now_s();
    for (int i = 0; i < meas->n; i++) {
        const ar_vrow_t *m = &meas->rows[i];
        ar_error_t err;
        ar_error_clear(&err);
        ar_topo_t *t = cached_topo(cache, &ncache, 32, m->topology, model, m->nranks, &err);
        if (!t) {
            rc = ar_cli_fail_err("validate", &err);
            goto out;
        }
        snprintf(model_name, sizeof model_name, "%s", t->model->name);
        ar_result_t res;
        int pch = 0;
        /* The measured row holds the plan's channel count; the algorithm's option may mean
         * something else (ring counts both directions). Rebuild with the default first, and
         * ask for the measured count only when the default plan differs. */
        int prc = plan_channels_for(t, m, &pch, &err);
        if (prc == AR_OK)
            prc = predict(backend, t, m->algo, m->count, m->dtype, m->buffer, pch, m->chunk_bytes, &res, &pch, &err);
        else
            memset(&res, 0, sizeof res);
        if (prc != AR_OK) {
            char buf[600];
            fprintf(stderr, "validate: %s:%d: %s %d ranks %" PRIu64 " B: cannot predict: %s\n", meas_name,
                    m->line, m->algo, m->nranks, m->bytes, ar_error_format(&err, buf, sizeof buf));
            ar_result_free(&res);
            continue;
        }
        if (pch != m->channels)
            fprintf(stderr, "validate: %s:%d: the rebuilt plan has %d channels, the measured one %d\n",
                    meas_name, m->line, pch, m->channels);
        double pred_us = res.time_s * 1e6, e = ar_validate_err_pct(m->time_us, pred_us);
        int rpd = t->ndevices ? m->nranks / t->ndevices : 1;
        fprintf(csv, "%s,%d,%d,%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%d,%" PRIu64 ",%.3f,%.3f,%.2f,%.3f,%.3f,%.3f,%.3f,%.3f,%s,%s\n",
                m->topology, m->nranks, rpd, m->algo, ar_dtype_name(m->dtype), ar_mem_name(m->buffer),
                m->bytes, m->count, m->channels, m->chunk_bytes, m->time_us, pred_us, e,
                res.terms_s[AR_TERM_LINK] * 1e6, res.terms_s[AR_TERM_MEMORY] * 1e6,
                res.terms_s[AR_TERM_REDUCE] * 1e6, res.terms_s[AR_TERM_SYNC] * 1e6,
                res.terms_s[AR_TERM_LAUNCH] * 1e6, backend, t->model->name);
        ar_result_free(&res);
        char key[40];
        stat_add(by_algo, &nalgo, 32, m->algo, e);
        snprintf(key, sizeof key, "%d rank%s per device", rpd, rpd == 1 ? "" : "s");
        stat_add(by_place, &nplace, 16, key, e);
        stat_add(all, &nall, 1, "all rows", e);
        nok++;
    }
    if (csv != stdout) { fclose(csv); csv = NULL; }
    {
        FILE *sf = stdout;
        FILE *files[2] = {stdout, NULL};
        if (cx->summary && !(files[1] = fopen(cx->summary, "w")))
            fprintf(stderr, "validate: --summary '%s': cannot write: %s\n", cx->summary, strerror(errno));
        for (int k = 0; k < 2; k++) {
            sf = files[k];
            if (!sf || (k == 0 && cx->out == NULL)) continue;
            fprintf(sf, "# Model vs measured allreduce: summary\n\n");
            fprintf(sf, "- measured: `%s`, on %s, %s\n", meas_name, meas->device[0] ? meas->device : "unknown device",
                    meas->date[0] ? meas->date : "date unknown");
            fprintf(sf, "- predicted: backend `%s` on model `%s` (`%s`), %s\n", backend, model_name, model, date);
            fprintf(sf, "- rows compared: %d of %d (prediction wall time %.1f s)\n", nok, meas->n, ar_now_s() - t0);
            fprintf(sf, "- error = (predicted - measured) / measured; |error| in percent\n\n");
            fprintf(sf, "| %-22s | %5s | %8s | %8s |\n", "algorithm", "rows", "median", "max");
            fprintf(sf, "|------------------------|-------|----------|----------|\n");
            for (int a = 0; a < nalgo; a++) stat_line(sf, &by_algo[a]);
            for (int a = 0; a < nplace; a++) stat_line(sf, &by_place[a]);
            if (nall) stat_line(sf, &all[0]);
            if (nall) {
                double mx = 0;
                for (int j = 0; j < all[0].n; j++) mx = fmax(mx, all[0].abs[j]);
                double med = ar_validate_median(all[0].abs, all[0].n);
                fprintf(sf, "\nTarget (median |error| <= 5%%, max <= 15%%): median %.2f%% %s, max %.2f%% %s\n",
                        med, med <= 5 ? "met" : "NOT met", mx, mx <= 15 ? "met" : "NOT met");
            }
        }
        if (files[1]) fclose(files[1]);
    }
out:
    if (csv && csv != stdout) fclose(csv);
    for (int i = 0; i < ncache; i++) ar_topo_free(cache[i].t);
    for (int i = 0; i < nalgo; i++) free(by_algo[i].abs);
    for (int i = 0; i < nplace; i++) free(by_place[i].abs);
    for (int i = 0; i < nall; i++) free(all[i].abs);
    return rc;
}

/* ---- references ---- */

/* How a reference's topology name maps onto what arsim can simulate. */
static const struct {
    const char *name, *spec, *model, *note;
} ref_topos[] = {
    {"h100_pair", "h200_pair", "h100_sxm", "h200_pair topology (2 GPUs, NV18) on the h100_sxm model"},
    {"single_device", "torus_2d_3x2", "accel_tcm",
     "FSIM's single device: its 6 compute units as the earlier harness's 6-device torus_2d 3x2, accel_tcm model"},
};

static int refs_run(ar_cli_opts_t *o, val_ctx_t *cx) {
    ar_refs_t refs = {0};
    ar_error_t err;
    ar_error_clear(&err);
    const char *dir = cx->refs_dir ? cx->refs_dir : ar_validate_refs_dir();
    if (ar_validate_refs_load_dir(dir, &refs, &err) != AR_OK) return ar_cli_fail_err("validate", &err);
    const char *backend = predict_backend(cx->pbackend);
    /* Measurements to set beside the references: --measured, else the committed ones. */
    ar_vrows_t meas = {0};
    char mpath[1100];
    const char *env = getenv("ARSIM_DATADIR");
    if (cx->measured) snprintf(mpath, sizeof mpath, "%s", cx->measured);
    else snprintf(mpath, sizeof mpath, "%s/validate/results/measured.csv", env && env[0] ? env : ARSIM_DATADIR);
    if (file_exists(mpath) && ar_validate_rows_load(mpath, &meas, &err) != AR_OK) {
        ar_validate_refs_free(&refs);
        return ar_cli_fail_err("validate", &err);
    }
    FILE *csv = NULL;
    if (cx->out && !(csv = fopen(cx->out, "w"))) {
        ar_validate_refs_free(&refs);
        ar_validate_rows_free(&meas);
        return ar_cli_fail("validate", "-o '%s': cannot write: %s", cx->out, strerror(errno));
    }
    if (csv) {
        fprintf(csv, "# arsim %s validate --refs: references (%s) beside the model (%s backend)%s%s\n",
                PACKAGE_VERSION, dir, backend, meas.n ? " and measurements from " : "", meas.n ? mpath : "");
        fputs("source,system,topology,algorithm,dtype,bytes,buffer_kind,ref_us,model_topology,model,"
              "model_algo,model_us,model_over_ref,measured_us,measured_over_ref,measured_device,note\n", csv);
    }
    printf("# arsim validate --refs: %d reference rows from %s; model predictions with the %s backend\n",
           refs.n, dir, backend);
    if (meas.n) printf("# measurements from %s (%s, %s)\n", mpath, meas.device, meas.date);
    printf("%-26s %-11s %6s %6s %12s %12s %9s %12s %9s\n", "source", "model algo", "size", "dtype", "ref(us)",
           "model(us)", "model/ref", "measured(us)", "meas/ref");
    int rc = 0;
    for (int i = 0; i < refs.n; i++) {
        const ar_ref_t *r = &refs.rows[i];
        char note[512] = "";
        const char *spec = r->topology, *model = o->model;
        for (size_t k = 0; k < sizeof ref_topos / sizeof ref_topos[0]; k++)
            if (!strcmp(r->topology, ref_topos[k].name)) {
                spec = ref_topos[k].spec;
                if (!model) model = ref_topos[k].model;
                snprintf(note, sizeof note, "%s", ref_topos[k].note);
            }
        ar_dtype_t dt = r->has_dtype ? r->dtype : AR_FP32;
        ar_mem_t buf = r->has_buffer ? r->buffer : AR_MEM_HBM;
        uint64_t bytes = r->bytes;
        if (!r->has_dtype) strncat(note, "; dtype not given: fp32", sizeof note - strlen(note) - 1);
        if (!bytes) {
            bytes = 49152 * ar_dtype_size(dt);
            strncat(note, "; size not given: n_elem 49152, the largest of the earlier harness's sweep",
                    sizeof note - strlen(note) - 1);
        }
        if (!r->has_buffer) strncat(note, "; buffer kind not given: hbm", sizeof note - strlen(note) - 1);
        ar_topo_t *t = NULL;
        if (ar_topo_open(spec, model, &t, &err) != AR_OK) {
            char b[600];
            fprintf(stderr, "validate: %s:%d: topology '%s': %s\n", r->file, r->line, r->topology,
                    ar_error_format(&err, b, sizeof b));
            rc = 2;
            continue;
        }
        uint64_t count = bytes / ar_dtype_size(dt);
        /* Which of our algorithms: the named one; for multimem (never run on the GPUs) our
         * 2stage; for NCCL or none named, the fastest that fits. */
        const char *algos[32];
        int na = 0;
        if (r->algorithm[0] && ar_algo_find(r->algorithm)) {
            algos[na++] = r->algorithm;
        } else if (!strcmp(r->algorithm, "multimem")) {
            algos[na++] = "2stage";
            strncat(note, "; multimem compared with 2stage", sizeof note - strlen(note) - 1);
        } else {
            for (const ar_algo_t *const *a = ar_algo_all(); *a && na < 32; a++) algos[na++] = (*a)->name;
            strncat(note, "; model: fastest arsim algorithm that fits", sizeof note - strlen(note) - 1);
        }
        double best = INFINITY;
        const char *best_algo = "";
        for (int a = 0; a < na; a++) {
            ar_result_t res;
            ar_error_t e2;
            ar_error_clear(&e2);
            if (predict(backend, t, algos[a], count, dt, buf, 0, 0, &res, NULL, &e2) == AR_OK &&
                res.time_s * 1e6 < best) {
                best = res.time_s * 1e6;
                best_algo = ar_algo_find(algos[a])->name;
            }
            ar_result_free(&res);
        }
        double meas_us = 0;
        for (int k = 0; k < meas.n; k++) {
            const ar_vrow_t *m = &meas.rows[k];
            /* NCCL references beside NCCL measured here; others beside our algorithm. */
            int is_nccl = !strcmp(r->algorithm, "nccl");
            if (!strcmp(m->topology, t->name) && m->nranks == t->nranks && m->dtype == dt &&
                m->bytes == bytes && m->buffer == buf &&
                (is_nccl ? !strcmp(m->backend, "nccl")
                         : !strcmp(m->backend, "cuda") && !strcmp(m->algo, best_algo)))
                meas_us = m->time_us;
        }
        char sz[32], ms[32] = "-", mr[32] = "-", mo[32] = "-";
        ar_size_format(bytes, sz, sizeof sz);
        if (meas_us > 0) {
            snprintf(ms, sizeof ms, "%.2f", meas_us);
            snprintf(mr, sizeof mr, "%.4f", meas_us / r->latency_us);
        }
        if (isfinite(best)) snprintf(mo, sizeof mo, "%.4f", best / r->latency_us);
        printf("%-26.26s %-11.11s %6s %6s %12.2f %12.2f %9s %12s %9s\n", r->source, best_algo, sz,
               ar_dtype_name(dt), r->latency_us, isfinite(best) ? best : NAN, mo, ms, mr);
        if (csv) {
            char bb[32];
            snprintf(bb, sizeof bb, "%" PRIu64, r->bytes);
            ar_csv_put(csv, r->source); fputc(',', csv);
            ar_csv_put(csv, r->system); fputc(',', csv);
            ar_csv_put(csv, r->topology); fputc(',', csv);
            ar_csv_put(csv, r->algorithm); fputc(',', csv);
            fprintf(csv, "%s,%s,%s,%.3f,", r->has_dtype ? ar_dtype_name(r->dtype) : "", r->bytes ? bb : "",
                    r->has_buffer ? ar_mem_name(r->buffer) : "", r->latency_us);
            fprintf(csv, "%s,%s,%s,", t->name[0] ? t->name : spec, t->model->name, best_algo);
            if (isfinite(best)) fprintf(csv, "%.3f,%s,", best, mo); else fputs(",,", csv);
            if (meas_us > 0) fprintf(csv, "%.3f,%s,", meas_us, mr); else fputs(",,", csv);
            ar_csv_put(csv, meas_us > 0 ? meas.device : ""); fputc(',', csv);
            ar_csv_put(csv, note[0] == ';' ? note + 2 : note);
            fputc('\n', csv);
        }
        if (note[0]) printf("#   %s\n", note[0] == ';' ? note + 2 : note);
        ar_topo_free(t);
    }
    if (csv) fclose(csv);
    ar_validate_refs_free(&refs);
    ar_validate_rows_free(&meas);
    return rc;
}

int ar_cli_validate(int argc, char **argv) {
    static const struct option lo[] = {
        {"refs", no_argument, NULL, V_REFS},
        {"refs-dir", required_argument, NULL, V_REFS_DIR},
        {"measure-only", no_argument, NULL, V_MEASURE_ONLY},
        {"measured", required_argument, NULL, V_MEASURED},
        {"out", required_argument, NULL, V_OUT},
        {"summary", required_argument, NULL, V_SUMMARY},
        {"placements", required_argument, NULL, V_PLACEMENTS},
        {"time-limit", required_argument, NULL, V_TIME_LIMIT},
        {"predict-with", required_argument, NULL, V_PREDICT_BACKEND},
        {0, 0, 0, 0},
    };
    val_ctx_t cx;
    memset(&cx, 0, sizeof cx);
    ar_cli_extra_t extra = {
        lo, "o:", val_handle, &cx,
        "validate options:\n"
        "  --refs                 compare the model with every reference in validate/refs\n"
        "  --refs-dir DIR         reference files from DIR (implies --refs)\n"
        "  --measure-only         measure on the cuda backend only; write the rows (-o FILE)\n"
        "  --measured FILE        compare these measured rows with the model (--model)\n"
        "  -o, --out FILE         CSV output\n"
        "  --summary FILE         the summary (median and max |error|) as markdown\n"
        "  --placements LIST      ranks per device to measure (default 1,2,4)\n"
        "  --time-limit S         stop measuring after S seconds (rows so far are kept)\n"
        "  --predict-with B       sim (default when built) or analytic\n"
        "Measuring uses --topology (default h200_pair), all algorithms, sizes 8K..1G, bf16.\n",
    };
    ar_cli_opts_t o;
    int rc = ar_cli_opts_parse("validate", argc, argv, 0, &extra, &o);
    if (rc == AR_CLI_HELP) { ar_cli_opts_free(&o); return 0; }
    if (rc) { ar_cli_opts_free(&o); return rc; }
    if (cx.refs) {
        rc = refs_run(&o, &cx);
    } else if (cx.measure_only) {
        FILE *f = stdout;
        if (cx.out && !(f = fopen(cx.out, "w"))) {
            rc = ar_cli_fail("validate", "-o '%s': cannot write: %s", cx.out, strerror(errno));
        } else {
            rc = measure(&o, &cx, f, NULL);
            if (f != stdout) fclose(f);
        }
    } else if (cx.measured) {
        ar_vrows_t meas = {0};
        ar_error_t err;
        ar_error_clear(&err);
        if (ar_validate_rows_load(cx.measured, &meas, &err) != AR_OK) {
            rc = ar_cli_fail_err("validate", &err);
        } else {
            /* Only hardware rows are measurements. */
            int k = 0;
            for (int i = 0; i < meas.n; i++)
                if (!strcmp(meas.rows[i].backend, "cuda")) meas.rows[k++] = meas.rows[i];
            meas.n = k;
            if (!k) rc = ar_cli_fail("validate", "%s: no rows measured on the cuda backend", cx.measured);
            else rc = compare(&o, &cx, &meas, cx.measured);
        }
        ar_validate_rows_free(&meas);
    } else {
        /* Both sides in one process: needs cuda and a predicting backend in this build. */
        if (!ar_backend_with(AR_BACKEND_HARDWARE)) {
            rc = ar_cli_fail("validate", "this build has no cuda backend: measure on a GPU machine "
                                         "(arsim validate --measure-only -o measured.csv), then compare "
                                         "here (arsim validate --measured measured.csv --model MODEL.yaml); "
                                         "or compare with references: arsim validate --refs");
        } else {
            /* The measured rows stay in memory, handed from measuring to comparing. */
            ar_vrows_t meas = {0};
            rc = measure(&o, &cx, NULL, &meas);
            if (!rc) rc = compare(&o, &cx, &meas, "measured in this run");
            ar_validate_rows_free(&meas);
        }
    }
    ar_cli_opts_free(&o);
    return rc;
}
