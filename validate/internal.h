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
/* The directory of the shipped reference files (ARSIM_DATADIR/validate/refs). */
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
    const char *link_from;  /* link ceiling from "read", "write" or "mean" (NULL: mean) */
    int nvlink_count;       /* links between the two GPUs (0: 18, NV18) */
    int launch_wide;        /* launch_ns from a full-width grid instead of one block */
} ar_calib_fit_t;

/* Write the model YAML. AR_EMODEL (nothing written) when a benchmark gave no
 * positive value. */
int ar_validate_calib_write(FILE *f, const ar_calib_t *c, const ar_calib_fit_t *fit,
                            ar_error_t *err);

#endif
