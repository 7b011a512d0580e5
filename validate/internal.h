/* validate: reference data, CSV reading, and the comparison of a model with
 * measurements. Internal to arsim (the CLI and the tests use it).
 *
 * The reference data are versioned files, validate/refs/NAME.csv, with the columns
 *   source,system,topology,algorithm,dtype,bytes,buffer_kind,latency_us,provenance
 * in any order (the header names them); lines starting with '#' are comments.
 * A field a source does not give (the FSIM reference names no size) is left
 * empty and read as unknown; source, system, topology, latency_us and
 * provenance are required. Every error names file:line:column and the field. */
#ifndef ARSIM_VALIDATE_INTERNAL_H
#define ARSIM_VALIDATE_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include "arsim/arsim.h"
#include "arsim/csv.h"
#include "validate/calib.h"

/* ---- Reference rows ---- */

typedef struct ar_ref_s {
    char source[96];
    char system[96];
    char topology[128];
    char algorithm[32];     /* "" when unknown */
    int has_dtype;
    ar_dtype_t dtype;
    uint64_t bytes;         /* 0 when unknown */
    int has_buffer;
    ar_mem_t buffer;
    double latency_us;      /* > 0 */
    char provenance[512];
    char file[256];         /* where the row came from */
    int line;
} ar_ref_t;

typedef struct ar_refs_s {
    ar_ref_t *rows;
    int n, cap;
} ar_refs_t;

/* Append the rows of one file. Errors: AR_EIO, AR_EPARSE with file:line:col: field: why. */
int ar_validate_refs_load(const char *path, ar_refs_t *refs, ar_error_t *err);
int ar_validate_refs_load_string(const char *text, const char *label, ar_refs_t *refs,
                                 ar_error_t *err);
/* Every *.csv in dir, in name order. */
int ar_validate_refs_load_dir(const char *dir, ar_refs_t *refs, ar_error_t *err);
void ar_validate_refs_free(ar_refs_t *refs);
/* The directory of the shipped reference files (validate/refs of the data directory). */
const char *ar_validate_refs_dir(void);

/* ---- Measured / predicted rows (the sweep CSV columns) ---- */

typedef struct ar_vrow_s {
    char backend[16];
    char topology[128];
    char model[128];
    int nranks;
    char algo[32];
    ar_dtype_t dtype;
    ar_mem_t buffer;
    uint64_t bytes, count;
    int channels;
    uint64_t chunk_bytes;
    double time_us;
    char check[16];
    int nvlinks;            /* links_detected "NVn": n, the NVLink links up on each GPU; -1 unknown or
                             * not recorded (a model's row, or a file from before the column) */
    int line;
} ar_vrow_t;

typedef struct ar_vrows_s {
    ar_vrow_t *rows;
    int n, cap;
    char device[256];       /* "# device: ..." comment of a measured file, if any */
    char date[64];          /* "# date: ..." */
} ar_vrows_t;

/* Read a CSV written by `arsim sweep`/`bench`/`validate --measure-only` (the columns of
 * ar_row_csv_columns; extra columns ignored, missing ones an error). */
int ar_validate_rows_load(const char *path, ar_vrows_t *rows, ar_error_t *err);
void ar_validate_rows_free(ar_vrows_t *rows);

/* ---- Measuring on the GPUs (validate/measure.c) ---- */

#define AR_MEASURE_MAX_SIZES 64
typedef struct ar_measure_s {
    const char *topology;       /* SPEC, shipped name or file */
    const char *model;          /* replacing the topology's (NULL: its own) */
    const int *placements;      /* ranks per device to measure (NULL, 0: 1, 2, 4) */
    int nplacements;
    const char *algos;          /* comma list of algorithm names */
    const uint64_t *sizes;      /* bytes per rank, rounded up to whole elements */
    int nsizes;
    int counts;                 /* 1: sizes are element counts instead */
    const ar_dtype_t *dtypes;
    int ndtypes;
    int channels, iters, check, quiet;
    double timeout_s;           /* a WAIT never met */
    double time_limit_s;        /* stop measuring after (0: none); the rows so far stay */
} ar_measure_t;
/* Measure every case of o: rows as CSV into csv (may be NULL) and into keep (may be NULL),
 * the bench's table on stderr unless quiet. AR_ENOTSUP in a build without the cuda backend. */
int ar_validate_measure(const ar_measure_t *o, FILE *csv, ar_vrows_t *keep, ar_error_t *err);

/* ---- Model against measurements and references (validate/compare.c) ---- */

typedef struct ar_compare_s {
    const char *backend;        /* the predicting backend */
    const char *model;          /* model file replacing every topology's */
    const char *measured_name;  /* where the measured rows came from, for the records */
    FILE *csv;                  /* one row per measured row: measured, predicted, error, terms */
    FILE *summary[2];           /* markdown summaries (median and max |error|); each may be NULL */
    FILE *notes;                /* rows that could not be predicted, and why */
    int allow_partial;          /* 0: a row that cannot be predicted fails the comparison */
} ar_compare_t;
int ar_validate_compare(const ar_compare_t *c, const ar_vrows_t *meas, ar_error_t *err);

typedef struct ar_refs_compare_s {
    const char *backend, *model; /* the predicting backend; a model replacing the references' (may be NULL) */
    const char *dir;             /* reference files */
    const ar_vrows_t *meas;      /* measurements to set beside them (may be empty) */
    const char *meas_name;
    FILE *csv;                   /* may be NULL */
    FILE *table, *notes;         /* a person's table; problems with single rows */
} ar_refs_compare_t;
/* AR_OK, or the first error; rows that could not be predicted are said on notes and
 * counted in *bad. */
int ar_validate_refs_compare(const ar_refs_compare_t *c, int *bad, ar_error_t *err);

/* ---- Error statistics ---- */

/* Signed error of a prediction, percent of the measurement. */
static inline double ar_validate_err_pct(double measured, double predicted) {
    return (predicted - measured) / measured * 100.0;
}
/* Median of n values (copies and sorts; 0 when n == 0). */
double ar_validate_median(const double *v, int n);

/* ---- Calibration -> model file (validate/calib_yaml.c) ---- */

typedef struct ar_calib_fit_s {
    const char *name;       /* the model's name */
    const char *link_from;  /* link ceiling from "split" (pushes, and pulls their own: NULL says
                             * it too), "read", "write" or "mean" (one ceiling for both) */
    int nvlink_count;       /* links between the two GPUs (0: 18, NV18) */
    int launch_wide;        /* launch_ns from a full-width grid instead of one block */
    const ar_model_t *base; /* one GPU: the link terms come from this model, marked assumed */
} ar_calib_fit_t;

/* Write the model YAML. AR_EMODEL (nothing written) when a benchmark gave no
 * positive value. */
int ar_validate_calib_write(FILE *f, const ar_calib_t *c, const ar_calib_fit_t *fit,
                            ar_error_t *err);
/* Where c's L2-reach curve leaves the L2's latency (*hit) and reaches memory's (*miss), in
 * bytes (l2_hit_bytes, l2_miss_bytes); both 0 when it was not measured or shows no L2. */
void ar_calib_l2_reach(const ar_calib_t *c, double *hit, double *miss);
/* The L2's reach for bandwidth (l2_bw_hit_bytes, l2_bw_miss_bytes) from the re-read sweep;
 * both 0 when it was not measured or shows no L2. *top_gbps (may be NULL): the sweep's
 * fastest re-read. */
void ar_calib_l2_bw_reach(const ar_calib_t *c, double *hit, double *miss, double *top_gbps);

#endif
