/* arsim: the one CSV module (common/csv.c): it reads every CSV arsim accepts (sweep
 * results to resume or merge, measured rows, reference files) and writes every CSV it
 * produces. RFC 4180: quoted fields, "" inside quotes, no line break inside a field;
 * lines starting with '#' are comments, blank lines are skipped. */
#ifndef ARSIM_CSV_H
#define ARSIM_CSV_H

#include <stdio.h>
#include "arsim/case.h"

/* ---- reading a whole file ---- */

typedef struct ar_csv_s {
    char path[256];
    char **names;        /* header columns */
    int ncols;
    char ***rows;        /* rows[r][c], NUL-terminated, never NULL */
    int *lines;          /* file line of each row (1-based) */
    int **cols;          /* cols[r][c]: 1-based column (character) where field c starts */
    int nrows, cap;
    char **comments;     /* the comment lines, without their '#' and the space after it */
    int ncomments;
} ar_csv_t;

/* Read a whole file (up to 16 MB). AR_EIO when unreadable, AR_EPARSE (file:line:col)
 * when a row has the wrong number of fields, an unterminated quote, or the header is
 * missing. */
int ar_csv_load(const char *path, ar_csv_t **out, ar_error_t *err);
/* Same, from text (label names it in messages). */
int ar_csv_load_string(const char *text, const char *label, ar_csv_t **out, ar_error_t *err);
void ar_csv_free(ar_csv_t *c);
/* Column index by name, or -1. */
int ar_csv_col(const ar_csv_t *c, const char *name);

/* ---- reading line by line, any size ---- */

/* One line that is not a comment or blank: its fields, and its text as written. */
typedef struct ar_csv_line_s {
    char **fields;
    int nfields;
    int line;            /* 1-based */
    const char *text;    /* without the line break */
} ar_csv_line_t;
/* Calls row() for every complete line of f (the header first) until it returns
 * non-zero (returned). A last line without its line break (a write cut short) is not
 * delivered; *good_bytes (may be NULL) is where the complete lines end. AR_EPARSE
 * (label:line:col) for a malformed line. */
int ar_csv_each(FILE *f, const char *label, int (*row)(const ar_csv_line_t *l, void *ctx), void *ctx,
                long *good_bytes, ar_error_t *err);

/* ---- writing ---- */

/* One field: quoted when it holds a comma, a quote, '#', a line break or a leading or
 * trailing space (line breaks become spaces). */
void ar_csv_put(FILE *f, const char *s);
/* arsim's result rows (run --csv, sweep, validate --measure-only), columns in this order:
 * backend,topology,model,nranks,op,gemm,algo,dtype,redop,root,buffer,bytes,count,channels,chunk_bytes,
 * time_us,algbw_gbps,busbw_gbps,wrong,bound_us,efficiency,link_us,memory_us,reduce_us,sync_us,
 * launch_us,compute_us,cycles,check,links_detected,sim_wall_s. The first 15 name the case (what
 * `sweep --resume` keys on); gemm is a fused op's product, MxNxK/PARTITIONS (empty for a plain
 * collective); channels and chunk_bytes are the values the plan used; wrong is empty when no
 * check ran. */
extern const char *const ar_row_csv_columns;
void ar_row_csv_header(FILE *f);
void ar_row_csv(FILE *f, const ar_row_t *r);

#endif
