/* arsim: output files written safely (common/out.c), for every file a command writes
 * whole (run --csv/--json, sweep --json, merge -o, bench --csv, validate -o/--summary,
 * calibrate -o/--raw):
 *   - "-" is standard output;
 *   - a device, a FIFO or a socket is written in place (it is never replaced);
 *   - a regular file, or a new one, is written to a temporary file in its own directory
 *     and renamed over it when complete, with the permissions the file had (new: as the
 *     umask says); a symlink's target is what gets written, the link stays;
 *   - every write, flush and close is checked: a failure names the file and the reason
 *     (no space, file too large, I/O error), and the target is left as it was. */
#ifndef ARSIM_OUT_H
#define ARSIM_OUT_H

#include <stdio.h>
#include "arsim/error.h"

typedef struct ar_out_s {
    FILE *f;              /* write here */
    char path[4096];      /* the file written: the given path, a symlink resolved */
    char tmp[4160];       /* the temporary renamed over path at close; "" when in place */
    char label[160];      /* how messages name it, e.g. "--json out.json" */
    long whole;           /* bytes written and flushed by the last good ar_out_flush */
    int failed;           /* errno of the first failed write (0: none) */
} ar_out_t;

/* Open `path` for `label` (the option and path, for messages). AR_EIO naming it when it
 * cannot be written. */
int ar_out_open(ar_out_t *o, const char *label, const char *path, ar_error_t *err);
/* After a row: everything written so far handed to the system, or AR_EIO (path, reason). */
int ar_out_flush(ar_out_t *o, ar_error_t *err);
/* Flush, close, and put the file in place. AR_EIO naming the file and the reason; then the
 * temporary is removed and the target left as it was. After a failed ar_out_flush the rows
 * whole before it are put in place (the file cut where the last good flush left it) and
 * AR_EIO says so again. */
int ar_out_close(ar_out_t *o, ar_error_t *err);
/* Give up: close, remove the temporary, leave the target as it was. */
void ar_out_abort(ar_out_t *o);
/* 1 when two output paths name the same file (links followed; "-" equals only "-"). */
int ar_out_same(const char *a, const char *b);

#endif
