/* arsim validate: the command line of validate/ (measure.c, compare.c, refs.c).
 *
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

/* ------------------------------------------------------------------ calibrate */

/* ------------------------------------------------------------------ validate */

enum {
    V_REFS = 1100, V_REFS_DIR, V_MEASURE_ONLY, V_MEASURED, V_OUT, V_SUMMARY, V_PLACEMENTS,
    V_TIME_LIMIT, V_PREDICT_BACKEND, V_ALLOW_PARTIAL,
};

typedef struct val_ctx_s {
    int refs, measure_only, allow_partial;
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
    case V_ALLOW_PARTIAL: c->allow_partial = 1; return 0;
    case V_MEASURED: c->measured = arg; return 0;
    case 'o': case V_OUT: c->out = arg; return ar_cli_check_path("validate", "-o", arg);
    case V_SUMMARY: c->summary = arg; return ar_cli_check_path("validate", "--summary", arg);
    case V_PLACEMENTS:
        if (ar_cli_parse_int_list(arg, c->placements, 8, &c->nplacements, 1, 64))
            return ar_cli_fail("validate", "--placements '%s': expected ranks per device, e.g. 1,2,4", arg);
        return 0;
    case V_TIME_LIMIT:
        if (ar_cli_parse_double(arg, 1, 1e6, &d))
            return ar_cli_fail("validate", "--time-limit '%s': expected seconds", arg);
        c->time_limit_s = d;
        return 0;
    case V_PREDICT_BACKEND:
        if (!ar_cli_backend_can(arg, AR_BACKEND_MODEL)) {
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






/* ---- predicting ---- */









/* ---- references ---- */



/* The measuring selectors: the topology (default h200_pair), every algorithm asked
 * for, the sizes, dtypes and run control of the command line. */
static int measure(const ar_cli_opts_t *o, const val_ctx_t *cx, FILE *csv, ar_vrows_t *keep) {
    char algos[1024] = "";
    for (int i = 0; i < o->nalgos; i++)
        snprintf(algos + strlen(algos), sizeof algos - strlen(algos), "%s%s", i ? "," : "", o->algo_names[i]);
    uint64_t sizes[AR_MEASURE_MAX_SIZES];
    int nsizes = ar_cli_nsizes(o);
    if (nsizes > AR_MEASURE_MAX_SIZES) nsizes = AR_MEASURE_MAX_SIZES;
    for (int i = 0; i < nsizes; i++) sizes[i] = o->ncounts > 0 ? o->counts[i] : o->sizes[i];
    const ar_measure_t m = {
        .topology = o->ntopos && strcmp(o->topos[0], AR_CLI_DEFAULT_TOPOLOGY) ? o->topos[0] : "h200_pair",
        .model = o->model, .placements = cx->placements, .nplacements = cx->nplacements, .algos = algos,
        .sizes = sizes, .nsizes = nsizes, .counts = o->ncounts > 0, .dtypes = o->dtypes, .ndtypes = o->ndtypes, .channels = o->channels[0],
        .iters = o->iters, .check = o->check, .quiet = o->quiet, .timeout_s = o->timeout_s,
        .time_limit_s = cx->time_limit_s,
    };
    ar_error_t err;
    ar_error_clear(&err);
    return ar_validate_measure(&m, csv, keep, &err) == AR_OK ? 0 : ar_cli_fail_err("validate", &err);
}

/* Measured rows against the model: the CSV on -o (else stdout), the summary on stdout
 * when -o is given and on --summary. */
static int compare(const ar_cli_opts_t *o, const val_ctx_t *cx, const ar_vrows_t *meas, const char *meas_name) {
    ar_out_t csv = {0}, summary = {0};
    int rc = ar_cli_out_open("validate", "-o", cx->out ? cx->out : "-", &csv);
    if (!rc && cx->summary && cx->out && ar_out_same(cx->out, cx->summary))
        rc = ar_cli_fail("validate", "-o and --summary name the same file '%s'", cx->out);
    if (!rc && cx->summary) rc = ar_cli_out_open("validate", "--summary", cx->summary, &summary);
    if (rc) {
        ar_out_abort(&csv);
        return rc;
    }
    const ar_compare_t c = {
        .backend = predict_backend(cx->pbackend), .model = o->model, .measured_name = meas_name, .csv = csv.f,
        .summary = {cx->out ? stdout : NULL, summary.f}, .notes = stderr, .allow_partial = cx->allow_partial,
    };
    ar_error_t err;
    ar_error_clear(&err);
    rc = ar_validate_compare(&c, meas, &err) == AR_OK ? 0 : ar_cli_fail_err("validate", &err);
    rc = ar_cli_out_close("validate", &summary, rc);
    return ar_cli_out_close("validate", &csv, rc);
}

/* References beside the model, and beside the measurements of --measured (else the
 * committed ones). */
static int refs_run(const ar_cli_opts_t *o, const val_ctx_t *cx) {
    char mpath[1100];
    if (cx->measured) snprintf(mpath, sizeof mpath, "%s", cx->measured);
    else ar_data_path("validate/results/measured.csv", mpath, sizeof mpath);
    ar_vrows_t meas = {0};
    ar_error_t err;
    ar_error_clear(&err);
    if (file_exists(mpath) && ar_validate_rows_load(mpath, &meas, &err) != AR_OK) return ar_cli_fail_err("validate", &err);
    ar_out_t out = {0};
    if (cx->out && ar_cli_out_open("validate", "-o", cx->out, &out)) {
        ar_validate_rows_free(&meas);
        return 2;
    }
    FILE *csv = out.f;
    const ar_refs_compare_t c = {
        .backend = predict_backend(cx->pbackend), .model = o->model,
        .dir = cx->refs_dir ? cx->refs_dir : ar_validate_refs_dir(), .meas = &meas, .meas_name = mpath, .csv = csv,
        .table = stdout, .notes = stderr,
    };
    int bad = 0, rc = ar_validate_refs_compare(&c, &bad, &err) == AR_OK ? (bad ? 2 : 0) : ar_cli_fail_err("validate", &err);
    rc = ar_cli_out_close("validate", &out, rc);
    ar_validate_rows_free(&meas);
    return rc;
}

int ar_cli_validate(int argc, char **argv) {
    static const struct option lo[] = {
        {"refs", no_argument, NULL, V_REFS}, {"refs-dir", required_argument, NULL, V_REFS_DIR},
        {"measure-only", no_argument, NULL, V_MEASURE_ONLY}, {"measured", required_argument, NULL, V_MEASURED},
        {"out", required_argument, NULL, V_OUT}, {"summary", required_argument, NULL, V_SUMMARY},
        {"placements", required_argument, NULL, V_PLACEMENTS}, {"time-limit", required_argument, NULL, V_TIME_LIMIT},
        {"predict-with", required_argument, NULL, V_PREDICT_BACKEND},
        {"allow-partial", no_argument, NULL, V_ALLOW_PARTIAL},
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
        "  --summary FILE         the summary (median and max |error|, the five worst rows by\n"
        "                         term) as markdown (also printed)\n"
        "  --placements LIST      ranks per device to measure (default 1,2,4)\n"
        "  --time-limit S         stop measuring after S seconds (rows so far are kept)\n"
        "  --predict-with B       sim (default when built) or analytic\n"
        "  --allow-partial        compare the rows that can be when some cannot (default: exit 2 naming them)\n"
        "  --topology FILE|SPEC   what is measured or predicted (default h200_pair)\n"
        "Measuring takes --algo, --size or --count, --dtype, --channels, --iters, --check and\n"
        "--timeout as run does; predicting takes --model.\n",
        AR_CLI_O(TOPOLOGY) | AR_CLI_O(MODEL) | AR_CLI_O(ALGO) | AR_CLI_O(SIZE) | AR_CLI_O(COUNT) |
            AR_CLI_O(DTYPE) | AR_CLI_O(CHANNELS) | AR_CLI_O(ITERS) | AR_CLI_O(CHECK) | AR_CLI_O(TIMEOUT) |
            AR_CLI_O(QUIET),
        AR_CLI_O(TOPOLOGY),
    };
    ar_cli_opts_t o;
    int rc = ar_cli_opts_parse("validate", argc, argv, 0, &extra, &o);
    if (rc == AR_CLI_HELP) { ar_cli_opts_free(&o); return 0; }
    if (rc) { ar_cli_opts_free(&o); return rc; }
    /* Comparing reads only the model; measuring reads the rest. */
    const unsigned compare_reads = AR_CLI_O(MODEL) | AR_CLI_O(QUIET);
    if ((cx.refs || (cx.measured && !cx.measure_only)) && (o.seen & ~compare_reads)) {
        rc = ar_cli_fail("validate", "%s compares and measures nothing: --topology, --algo, --size, --count, "
                         "--dtype, --channels, --iters, --check and --timeout are for measuring",
                         cx.refs ? "--refs" : "--measured");
        ar_cli_opts_free(&o);
        return rc;
    }
    if (o.model) { /* a bad --model said once, before any file is read */
        ar_model_t *m = NULL;
        ar_error_t merr;
        ar_error_clear(&merr);
        if (ar_model_load(o.model, &m, &merr) != AR_OK) {
            rc = ar_cli_fail_err("validate", &merr);
            ar_cli_opts_free(&o);
            return rc;
        }
        ar_model_free(m);
    }
    if (cx.refs) {
        rc = refs_run(&o, &cx);
    } else if (cx.measure_only) {
        ar_out_t f = {0};
        rc = ar_cli_out_open("validate", "-o", cx.out ? cx.out : "-", &f);
        if (!rc) {
            rc = measure(&o, &cx, f.f, NULL);
            const int wrc = ar_cli_out_close("validate", &f, 0); /* the rows measured are kept */
            if (!rc) rc = wrc;
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
