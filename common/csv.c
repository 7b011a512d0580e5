/* The one CSV module (arsim/csv.h): a reader (RFC 4180 subset) that remembers where
 * each field starts, so that every later check can say file:line:column, and the
 * writers of every CSV arsim produces. Lines that start with '#' are comments; blank
 * lines are skipped. A quoted field may hold commas and doubled quotes, not newlines
 * (none of our files need them). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <math.h>
#include "arsim/arsim.h"
#include "arsim/csv.h"

#define CSV_MAX_FILE_BYTES (16u << 20)

static int add_row(ar_csv_t *c, char **fields, int *cols, int line) {
    if (c->nrows == c->cap) {
        int cap = c->cap ? 2 * c->cap : 32;
        char ***r = realloc(c->rows, (size_t)cap * sizeof *r);
        if (!r) return AR_ENOMEM;
        c->rows = r;
        int *l = realloc(c->lines, (size_t)cap * sizeof *l);
        if (!l) return AR_ENOMEM;
        c->lines = l;
        int **cc = realloc(c->cols, (size_t)cap * sizeof *cc);
        if (!cc) return AR_ENOMEM;
        c->cols = cc;
        c->cap = cap;
    }
    c->rows[c->nrows] = fields;
    c->cols[c->nrows] = cols;
    c->lines[c->nrows] = line;
    c->nrows++;
    return AR_OK;
}

static void free_fields(char **f, int n) {
    if (!f) return;
    for (int i = 0; i < n; i++) free(f[i]);
    free(f);
}

/* Split one line (without its newline) into fields. */
static int split(const char *label, int lineno, const char *s, size_t len, char ***out,
                 int **outcols, int *nout, ar_error_t *err) {
    char **f = NULL;
    int *cols = NULL;
    int n = 0, cap = 0;
    size_t i = 0;
    char *buf = malloc(len + 1);
    if (!buf) return AR_ENOMEM;
    for (;;) {
        size_t start = i, k = 0;
        if (i < len && s[i] == '"') {
            i++;
            for (;;) {
                if (i >= len) {
                    free(buf);
                    free_fields(f, n);
                    free(cols);
                    return ar_error_set(err, AR_EPARSE, label, lineno, (int)start + 1,
                                        "unterminated quoted field");
                }
                if (s[i] == '"') {
                    if (i + 1 < len && s[i + 1] == '"') { buf[k++] = '"'; i += 2; continue; }
                    i++;
                    break;
                }
                buf[k++] = s[i++];
            }
            if (i < len && s[i] != ',') {
                free(buf);
                free_fields(f, n);
                free(cols);
                return ar_error_set(err, AR_EPARSE, label, lineno, (int)i + 1,
                                    "text after a closing quote (expected ',')");
            }
        } else {
            while (i < len && s[i] != ',') {
                if (s[i] == '"') {
                    free(buf);
                    free_fields(f, n);
                    free(cols);
                    return ar_error_set(err, AR_EPARSE, label, lineno, (int)i + 1,
                                        "quote inside an unquoted field");
                }
                buf[k++] = s[i++];
            }
            /* Trim spaces around unquoted fields. */
            while (k > 0 && (buf[k - 1] == ' ' || buf[k - 1] == '\t' || buf[k - 1] == '\r')) k--;
            size_t lead = 0;
            while (lead < k && (buf[lead] == ' ' || buf[lead] == '\t')) lead++;
            memmove(buf, buf + lead, k - lead);
            k -= lead;
        }
        buf[k] = 0;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nf = realloc(f, (size_t)cap * sizeof *nf);
            int *nc = nf ? realloc(cols, (size_t)cap * sizeof *nc) : NULL;
            if (!nf || !nc) { free(buf); free_fields(nf ? nf : f, n); free(nc ? nc : cols); return AR_ENOMEM; }
            f = nf;
            cols = nc;
        }
        f[n] = strdup(buf);
        if (!f[n]) { free(buf); free_fields(f, n); free(cols); return AR_ENOMEM; }
        cols[n] = (int)start + 1;
        n++;
        if (i >= len) break;
        i++; /* the comma */
    }
    free(buf);
    *out = f;
    *outcols = cols;
    *nout = n;
    return AR_OK;
}

int ar_csv_load_string(const char *text, const char *label, ar_csv_t **out, ar_error_t *err) {
    *out = NULL;
    ar_csv_t *c = calloc(1, sizeof *c);
    if (!c) return AR_ENOMEM;
    snprintf(c->path, sizeof c->path, "%s", label ? label : "<string>");
    int rc = AR_OK, lineno = 0;
    const char *p = text;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        lineno++;
        size_t l = len;
        while (l > 0 && p[l - 1] == '\r') l--;
        size_t b = 0;
        while (b < l && (p[b] == ' ' || p[b] == '\t')) b++;
        if (b < l && p[b] == '#') {
            const size_t skip = b + 1 + (b + 1 < l && p[b + 1] == ' ');
            char **nc = realloc(c->comments, (size_t)(c->ncomments + 1) * sizeof *nc);
            if (!nc || !(nc[c->ncomments] = strndup(p + skip, l - skip))) {
                if (nc) c->comments = nc;
                rc = AR_ENOMEM;
                goto fail;
            }
            c->comments = nc;
            c->ncomments++;
        } else if (b < l) {
            char **f = NULL;
            int *cols = NULL, n = 0;
            rc = split(c->path, lineno, p, l, &f, &cols, &n, err);
            if (rc) goto fail;
            if (!c->names) {
                c->names = f;
                c->ncols = n;
                free(cols);
                for (int i = 0; i < n; i++) {
                    if (!f[i][0]) {
                        rc = ar_error_set(err, AR_EPARSE, c->path, lineno, 1,
                                          "header: column %d has no name", i + 1);
                        goto fail;
                    }
                    for (int j = 0; j < i; j++)
                        if (strcmp(f[i], f[j]) == 0) {
                            rc = ar_error_set(err, AR_EPARSE, c->path, lineno, 1,
                                              "header: column '%s' appears twice", f[i]);
                            goto fail;
                        }
                }
            } else {
                if (n != c->ncols) {
                    int col = n > c->ncols ? cols[c->ncols] : (int)l + 1;
                    free_fields(f, n);
                    free(cols);
                    rc = ar_error_set(err, AR_EPARSE, c->path, lineno, col,
                                      "%d fields, the header has %d", n, c->ncols);
                    goto fail;
                }
                rc = add_row(c, f, cols, lineno);
                if (rc) { free_fields(f, n); free(cols); goto fail; }
            }
        }
        p += len;
        if (*p == '\n') p++;
    }
    if (!c->names) {
        rc = ar_error_set(err, AR_EPARSE, c->path, 0, 0, "no header line");
        goto fail;
    }
    *out = c;
    return AR_OK;
fail:
    if (rc == AR_ENOMEM) AR_ERR(err, AR_ENOMEM, "%s: out of memory", c->path);
    ar_csv_free(c);
    return rc;
}

int ar_csv_load(const char *path, ar_csv_t **out, ar_error_t *err) {
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return ar_error_set(err, AR_EIO, path, 0, 0, "cannot open: %s", strerror(errno));
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    if (!buf) { fclose(f); return AR_ENOMEM; }
    for (;;) {
        if (len + 1 >= cap) {
            if (cap >= CSV_MAX_FILE_BYTES) {
                free(buf);
                fclose(f);
                return ar_error_set(err, AR_ELIMIT, path, 0, 0, "larger than %u bytes",
                                    CSV_MAX_FILE_BYTES);
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) { free(buf); fclose(f); return AR_ENOMEM; }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + len, 1, cap - len - 1, f);
        len += r;
        if (r == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) { free(buf); return ar_error_set(err, AR_EIO, path, 0, 0, "read error"); }
    buf[len] = 0;
    if (memchr(buf, 0, len)) {
        free(buf);
        return ar_error_set(err, AR_EPARSE, path, 0, 0, "binary data (a NUL byte) in a CSV file");
    }
    int rc = ar_csv_load_string(buf, path, out, err);
    free(buf);
    return rc;
}

void ar_csv_free(ar_csv_t *c) {
    if (!c) return;
    for (int r = 0; r < c->nrows; r++) {
        free_fields(c->rows[r], c->ncols);
        free(c->cols[r]);
    }
    free(c->rows);
    free(c->cols);
    free(c->lines);
    free_fields(c->names, c->ncols);
    free_fields(c->comments, c->ncomments);
    free(c);
}

int ar_csv_col(const ar_csv_t *c, const char *name) {
    for (int i = 0; i < c->ncols; i++)
        if (strcmp(c->names[i], name) == 0) return i;
    return -1;
}

void ar_csv_put(FILE *f, const char *s) {
    if (!s) s = "";
    size_t n = strlen(s);
    int quote = n > 0 && (s[0] == ' ' || s[n - 1] == ' ');
    for (const char *p = s; *p && !quote; p++)
        if (*p == ',' || *p == '"' || *p == '\n' || *p == '\r' || *p == '#') quote = 1;
    if (!quote) { fputs(s, f); return; }
    fputc('"', f);
    for (const char *p = s; *p; p++) {
        if (*p == '"') fputc('"', f);
        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
    }
    fputc('"', f);
}

int ar_csv_each(FILE *f, const char *label, int (*row)(const ar_csv_line_t *l, void *ctx), void *ctx,
                long *good_bytes, ar_error_t *err) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long pos = 0, good = 0;
    int lineno = 0, rc = AR_OK;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        pos += len;
        if (line[len - 1] != '\n') break; /* torn: not a row */
        line[--len] = 0;
        while (len && line[len - 1] == '\r') line[--len] = 0;
        size_t b = 0;
        while (b < (size_t)len && (line[b] == ' ' || line[b] == '\t')) b++;
        if (b < (size_t)len && line[b] != '#') {
            ar_csv_line_t l = {.line = lineno, .text = line};
            int *cols = NULL;
            rc = split(label, lineno, line, (size_t)len, &l.fields, &cols, &l.nfields, err);
            if (rc == AR_ENOMEM) AR_ERR(err, AR_ENOMEM, "%s: out of memory", label);
            if (rc) break;
            free(cols);
            rc = row(&l, ctx);
            free_fields(l.fields, l.nfields);
            if (rc) break;
        }
        good = pos;
    }
    free(line);
    if (good_bytes) *good_bytes = good;
    return rc;
}

const char *const ar_row_csv_columns =
    "backend,topology,model,nranks,op,gemm,algo,dtype,redop,root,buffer,bytes,count,channels,chunk_bytes,"
    "time_us,algbw_gbps,busbw_gbps,wrong,bound_us,efficiency,link_us,memory_us,reduce_us,sync_us,launch_us,compute_us,"
    "cycles,check,"
    "links_detected,sim_wall_s";

void ar_row_csv_header(FILE *f) { fprintf(f, "%s\n", ar_row_csv_columns); }

void ar_row_csv(FILE *f, const ar_row_t *r) {
    const ar_result_t *res = r->res;
    double t = res->time_s;
    ar_csv_put(f, r->backend); fputc(',', f);
    ar_csv_put(f, r->topology); fputc(',', f);
    ar_csv_put(f, r->model); fputc(',', f);
    fprintf(f, "%d,%s,", r->nranks, ar_coll_name(r->coll));
    char gemm[96];
    ar_row_gemm(r, gemm, sizeof gemm);
    fprintf(f, "%s,", gemm);
    ar_csv_put(f, r->algo); fputc(',', f);
    fprintf(f, "%s,%s,%d,%s,%" PRIu64 ",%" PRIu64 ",%d,%" PRIu64 ",", ar_dtype_name(r->dtype), ar_row_redop(r), r->root,
            ar_mem_name(r->buffer), r->bytes, r->count, r->channels, r->chunk_bytes);
    fprintf(f, "%.6f,%.6f,%.6f,", t * 1e6, ar_algbw_gbps(r->bytes, t),
            ar_busbw_coll_gbps(r->coll, r->bytes, t, r->nranks));
    if (res->checked) fprintf(f, "%" PRIu64, res->wrong);
    fputc(',', f);
    if (r->bound_s > 0) fprintf(f, "%.6f", r->bound_s * 1e6);
    fputc(',', f);
    const double eff = ar_row_efficiency(r);
    if (isfinite(eff)) fprintf(f, "%.6f", eff);
    fputc(',', f);
    for (int k = 0; k < AR_NTERM; k++) fprintf(f, "%.6f,", res->terms_s[k] * 1e6);
    fprintf(f, "%.0f,", res->cycles);
    ar_csv_put(f, r->check); fputc(',', f);
    ar_csv_put(f, r->links_detected); fputc(',', f);
    fprintf(f, "%.6f\n", res->sim_wall_s);
}
