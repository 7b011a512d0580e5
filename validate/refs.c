/* validate: reference rows (validate/refs/NAME.csv) and measured/predicted rows
 * (the sweep CSV), read into typed records with file:line:col errors. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "validate/internal.h"

static const char *const ref_columns[] = {
    "source", "system", "topology", "algorithm", "dtype", "bytes", "buffer_kind", "latency_us",
    "provenance", NULL,
};

/* Fields a reference must give; the others may be empty (unknown). */
static int ref_required(const char *name) {
    return !strcmp(name, "source") || !strcmp(name, "system") || !strcmp(name, "topology") ||
           !strcmp(name, "latency_us") || !strcmp(name, "provenance");
}

static int field_err(const ar_csv_t *c, int r, int col, ar_error_t *err, const char *fmt,
                     const char *field, const char *value) {
    return ar_error_set(err, AR_EPARSE, c->path, c->lines[r], c->cols[r][col], fmt, field, value);
}

/* A finite number > 0. */
static int parse_pos(const char *s, double *out) {
    double v;
    if (ar_parse_double(s, &v) != AR_OK || v <= 0) return AR_EINVAL;
    *out = v;
    return AR_OK;
}

static int parse_u64(const char *s, uint64_t *out) { return ar_parse_u64(s, out, NULL); }

static int copy_field(char *dst, size_t cap, const ar_csv_t *c, int r, int col, const char *name,
                      ar_error_t *err) {
    const char *v = c->rows[r][col];
    if (strlen(v) >= cap)
        return ar_error_set(err, AR_EPARSE, c->path, c->lines[r], c->cols[r][col],
                            "%s: longer than %zu characters", name, cap - 1);
    memcpy(dst, v, strlen(v) + 1);
    return AR_OK;
}

static int refs_from_csv(ar_csv_t *c, ar_refs_t *refs, ar_error_t *err) {
    int idx[9];
    for (int i = 0; ref_columns[i]; i++) {
        idx[i] = ar_csv_col(c, ref_columns[i]);
        if (idx[i] < 0)
            return ar_error_set(err, AR_EPARSE, c->path, 0, 0,
                                "header: column '%s' is missing (need %s)", ref_columns[i],
                                "source,system,topology,algorithm,dtype,bytes,buffer_kind,"
                                "latency_us,provenance");
    }
    for (int i = 0; i < c->ncols; i++) {
        int known = 0;
        for (int j = 0; ref_columns[j]; j++) known |= !strcmp(c->names[i], ref_columns[j]);
        if (!known)
            return ar_error_set(err, AR_EPARSE, c->path, 0, 0, "header: unknown column '%s'",
                                c->names[i]);
    }
    for (int r = 0; r < c->nrows; r++) {
        for (int i = 0; ref_columns[i]; i++)
            if (ref_required(ref_columns[i]) && !c->rows[r][idx[i]][0])
                return field_err(c, r, idx[i], err, "%s: required, but empty%s", ref_columns[i], "");
        if (refs->n == refs->cap) {
            int cap = refs->cap ? 2 * refs->cap : 16;
            ar_ref_t *nr = realloc(refs->rows, (size_t)cap * sizeof *nr);
            if (!nr) return AR_ERR(err, AR_ENOMEM, "out of memory");
            refs->rows = nr;
            refs->cap = cap;
        }
        ar_ref_t *x = &refs->rows[refs->n];
        memset(x, 0, sizeof *x);
        snprintf(x->file, sizeof x->file, "%s", c->path);
        x->line = c->lines[r];
        AR_TRY(copy_field(x->source, sizeof x->source, c, r, idx[0], "source", err));
        AR_TRY(copy_field(x->system, sizeof x->system, c, r, idx[1], "system", err));
        AR_TRY(copy_field(x->topology, sizeof x->topology, c, r, idx[2], "topology", err));
        AR_TRY(copy_field(x->algorithm, sizeof x->algorithm, c, r, idx[3], "algorithm", err));
        /* dtype, bytes and buffer kind may be left empty: not given */
        const char *v = c->rows[r][idx[4]];
        if (v[0] && ar_dtype_parse(v, &x->dtype) != AR_OK)
            return field_err(c, r, idx[4], err, "%s: unknown dtype '%s' (bf16, fp16, fp32)", "dtype", v);
        x->has_dtype = v[0] != 0;
        v = c->rows[r][idx[5]];
        if (v[0] && (parse_u64(v, &x->bytes) != AR_OK || x->bytes == 0))
            return field_err(c, r, idx[5], err, "%s: '%s' is not a positive whole number of bytes", "bytes", v);
        v = c->rows[r][idx[6]];
        if (v[0] && ar_mem_parse(v, &x->buffer) != AR_OK)
            return field_err(c, r, idx[6], err, "%s: unknown buffer kind '%s' (tcm, sram, hbm)", "buffer_kind", v);
        x->has_buffer = v[0] != 0;
        v = c->rows[r][idx[7]];
        if (parse_pos(v, &x->latency_us) != AR_OK)
            return field_err(c, r, idx[7], err, "%s: '%s' is not a positive finite number of us",
                             "latency_us", v);
        AR_TRY(copy_field(x->provenance, sizeof x->provenance, c, r, idx[8], "provenance", err));
        refs->n++;
    }
    return AR_OK;
}

int ar_validate_refs_load(const char *path, ar_refs_t *refs, ar_error_t *err) {
    ar_csv_t *c;
    AR_TRY(ar_csv_load(path, &c, err));
    int rc = refs_from_csv(c, refs, err);
    ar_csv_free(c);
    return rc;
}

int ar_validate_refs_load_string(const char *text, const char *label, ar_refs_t *refs,
                                 ar_error_t *err) {
    ar_csv_t *c;
    AR_TRY(ar_csv_load_string(text, label, &c, err));
    int rc = refs_from_csv(c, refs, err);
    ar_csv_free(c);
    return rc;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int ar_validate_refs_load_dir(const char *dir, ar_refs_t *refs, ar_error_t *err) {
    DIR *d = opendir(dir);
    if (!d) return ar_error_set(err, AR_EIO, dir, 0, 0, "cannot open directory: %s", strerror(errno));
    char **names = NULL;
    int n = 0, cap = 0, rc = AR_OK;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".csv") || e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            char **nn = realloc(names, (size_t)cap * sizeof *nn);
            if (!nn) { rc = AR_ENOMEM; break; }
            names = nn;
        }
        if (!(names[n] = strdup(e->d_name))) { rc = AR_ENOMEM; break; }
        n++;
    }
    closedir(d);
    if (rc == AR_OK) {
        qsort(names, (size_t)n, sizeof *names, cmp_str);
        for (int i = 0; i < n && rc == AR_OK; i++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            rc = ar_validate_refs_load(path, refs, err);
        }
        if (rc == AR_OK && n == 0)
            rc = ar_error_set(err, AR_EIO, dir, 0, 0, "no reference files (*.csv) there");
    } else {
        AR_ERR(err, rc, "out of memory");
    }
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc;
}

void ar_validate_refs_free(ar_refs_t *refs) {
    free(refs->rows);
    memset(refs, 0, sizeof *refs);
}

const char *ar_validate_refs_dir(void) {
    static char buf[1024];
    return ar_data_path("validate/refs", buf, sizeof buf);
}

/* ---- sweep-shaped rows ---- */

static const char *const row_columns[] = {
    "backend", "topology", "model", "nranks", "algo", "dtype", "buffer", "bytes", "count",
    "channels", "chunk_bytes", "time_us", "check", NULL,
};

/* The "# device: ..." and "# date: ..." comments of a measured file. */
static void grab_comment(const ar_csv_t *c, ar_vrows_t *rows) {
    for (int i = 0; i < c->ncomments; i++) {
        const char *line = c->comments[i];
        if (!strncmp(line, "device: ", 8))
            snprintf(rows->device, sizeof rows->device, "%.*s", (int)sizeof rows->device - 1, line + 8);
        if (!strncmp(line, "date: ", 6))
            snprintf(rows->date, sizeof rows->date, "%.*s", (int)sizeof rows->date - 1, line + 6);
    }
}

int ar_validate_rows_load(const char *path, ar_vrows_t *rows, ar_error_t *err) {
    ar_csv_t *c;
    AR_TRY(ar_csv_load(path, &c, err));
    int idx[16], rc = AR_OK;
    for (int i = 0; row_columns[i]; i++) {
        idx[i] = ar_csv_col(c, row_columns[i]);
        if (idx[i] < 0) {
            rc = ar_error_set(err, AR_EPARSE, c->path, 0, 0, "header: column '%s' is missing",
                              row_columns[i]);
            goto out;
        }
    }
    const int links_col = ar_csv_col(c, "links_detected"); /* optional: files before it lack it */
    for (int r = 0; r < c->nrows; r++) {
        if (rows->n == rows->cap) {
            int cap = rows->cap ? 2 * rows->cap : 64;
            ar_vrow_t *nr = realloc(rows->rows, (size_t)cap * sizeof *nr);
            if (!nr) { rc = AR_ERR(err, AR_ENOMEM, "out of memory"); goto out; }
            rows->rows = nr;
            rows->cap = cap;
        }
        ar_vrow_t *x = &rows->rows[rows->n];
        memset(x, 0, sizeof *x);
        x->line = c->lines[r];
        char **f = c->rows[r];
        uint64_t u;
        double d;
        AR_TRY_GOTO(copy_field(x->backend, sizeof x->backend, c, r, idx[0], "backend", err), rc, out);
        AR_TRY_GOTO(copy_field(x->topology, sizeof x->topology, c, r, idx[1], "topology", err), rc, out);
        AR_TRY_GOTO(copy_field(x->model, sizeof x->model, c, r, idx[2], "model", err), rc, out);
        if (parse_u64(f[idx[3]], &u) || u == 0 || u > 1000000) {
            rc = field_err(c, r, idx[3], err, "%s: '%s' is not a rank count", "nranks", f[idx[3]]);
            goto out;
        }
        x->nranks = (int)u;
        AR_TRY_GOTO(copy_field(x->algo, sizeof x->algo, c, r, idx[4], "algo", err), rc, out);
        if (ar_dtype_parse(f[idx[5]], &x->dtype)) {
            rc = field_err(c, r, idx[5], err, "%s: unknown dtype '%s'", "dtype", f[idx[5]]);
            goto out;
        }
        if (ar_mem_parse(f[idx[6]], &x->buffer)) {
            rc = field_err(c, r, idx[6], err, "%s: unknown buffer kind '%s'", "buffer", f[idx[6]]);
            goto out;
        }
        if (parse_u64(f[idx[7]], &x->bytes) || x->bytes == 0) {
            rc = field_err(c, r, idx[7], err, "%s: '%s' is not a byte count", "bytes", f[idx[7]]);
            goto out;
        }
        if (parse_u64(f[idx[8]], &x->count) || x->count == 0) {
            rc = field_err(c, r, idx[8], err, "%s: '%s' is not an element count", "count", f[idx[8]]);
            goto out;
        }
        if (parse_u64(f[idx[9]], &u) || u > 100000) {
            rc = field_err(c, r, idx[9], err, "%s: '%s' is not a channel count", "channels", f[idx[9]]);
            goto out;
        }
        x->channels = (int)u;
        if (parse_u64(f[idx[10]], &x->chunk_bytes)) {
            rc = field_err(c, r, idx[10], err, "%s: '%s' is not a byte count", "chunk_bytes", f[idx[10]]);
            goto out;
        }
        if (parse_pos(f[idx[11]], &d)) {
            rc = field_err(c, r, idx[11], err, "%s: '%s' is not a positive time in us", "time_us", f[idx[11]]);
            goto out;
        }
        x->time_us = d;
        AR_TRY_GOTO(copy_field(x->check, sizeof x->check, c, r, idx[12], "check", err), rc, out);
        x->nvlinks = -1;
        const char *nv = links_col >= 0 ? f[links_col] : "";
        if (!strncmp(nv, "NV", 2) && !parse_u64(nv + 2, &u) && u <= 64) x->nvlinks = (int)u;
        else if (nv[0] && strcmp(nv, "unknown")) {
            rc = field_err(c, r, links_col, err, "%s: '%s' is not NVn (the NVLink links up on each GPU) or unknown",
                           "links_detected", nv);
            goto out;
        }
        rows->n++;
    }
    grab_comment(c, rows);
out:
    ar_csv_free(c);
    return rc;
}

void ar_validate_rows_free(ar_vrows_t *rows) {
    free(rows->rows);
    memset(rows, 0, sizeof *rows);
}

double ar_validate_median(const double *v, int n) {
    if (n <= 0) return 0;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s) return NAN;
    memcpy(s, v, (size_t)n * sizeof *s);
    const double m = ar_median(s, (size_t)n); /* v stays as it was */
    free(s);
    return m;
}
