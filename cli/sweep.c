/* arsim sweep / merge: studies as CSV rows that survive interruption.
 *
 * A sweep is the product of its selectors (backends x topologies x buffers x
 * channels x chunks x dtypes x algorithms x sizes), numbered in that order; --shard
 * I/N keeps the runs whose number is I modulo N, so N machines (a Slurm array, GNU
 * parallel) each run a share and `arsim merge` joins the CSVs. --jobs N runs N
 * worker processes that take the next run from a shared counter and send each
 * finished row to the parent, the only writer of the CSV: every row is written
 * whole and flushed as it finishes, so an interrupted sweep keeps every finished row
 * intact, and --resume runs only the rows the CSV lacks (a torn last line is cut).
 * The JSON (--json) is written at the end from the whole CSV. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "arsim/out.h"
#include "cli/internal.h"
#include "cli/opts.h"
#include "arsim/util.h"

#define NKEY 15        /* leading CSV columns that name a run: backend .. chunk_bytes */
#define MSG_MAX 4000   /* one worker message, written atomically (< PIPE_BUF) */

/* The key of a CSV row: its first NKEY fields as written (up to the NKEY-th comma
 * outside quotes). */
static char *row_key(const char *line) {
    int commas = 0, inq = 0;
    const char *p = line;
    for (; *p; p++) {
        if (*p == '"') inq = !inq;
        else if (*p == ',' && !inq && ++commas == NKEY) break;
    }
    return strndup(line, (size_t)(p - line));
}

typedef struct keyset_s {
    char **keys;
    size_t n, cap;
    int sorted;
} keyset_t;

static int keyset_add(keyset_t *k, char *key) {
    if (k->n == k->cap) {
        size_t nc = k->cap ? 2 * k->cap : 256;
        char **p = realloc(k->keys, nc * sizeof *p);
        if (!p) return -1;
        k->keys = p;
        k->cap = nc;
    }
    k->keys[k->n++] = key;
    k->sorted = 0;
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int keyset_has(keyset_t *k, const char *key) {
    if (!k->n) return 0;
    if (!k->sorted) {
        qsort(k->keys, k->n, sizeof *k->keys, cmp_str);
        k->sorted = 1;
    }
    return bsearch(&key, k->keys, k->n, sizeof *k->keys, cmp_str) != NULL;
}

static void keyset_free(keyset_t *k) {
    for (size_t i = 0; i < k->n; i++) free(k->keys[i]);
    free(k->keys);
}

/* Reads a CSV of ours (arsim/csv.h): checks the header and every row's field count,
 * calls row(l) for every complete row. A last line without its line break (a write cut
 * short) is not a row; *good_bytes is where the complete rows end. Returns 0, or 2
 * after one line on stderr. */
typedef struct read_s {
    const char *cmd, *path;
    int (*row)(const ar_csv_line_t *l, void *ctx);
    void *ctx;
    int ncols, header_seen;
} read_t;

static int read_line(const ar_csv_line_t *l, void *vctx) {
    read_t *r = vctx;
    if (!r->header_seen) {
        r->header_seen = 1;
        if (strcmp(l->text, ar_row_csv_columns) != 0)
            return ar_cli_fail(r->cmd, "%s:%d: the header is not this arsim's result columns (%s)", r->path,
                               l->line, ar_row_csv_columns);
        r->ncols = l->nfields;
        return 0;
    }
    if (l->nfields != r->ncols)
        return ar_cli_fail(r->cmd, "%s:%d: %d fields, the header has %d", r->path, l->line, l->nfields, r->ncols);
    return r->row(l, r->ctx);
}

static int csv_read(const char *cmd, const char *path, int (*row)(const ar_csv_line_t *l, void *ctx), void *ctx,
                    long *good_bytes) {
    FILE *f = fopen(path, "r");
    if (!f) return ar_cli_fail(cmd, "%s: %s", path, strerror(errno));
    read_t r = {.cmd = cmd, .path = path, .row = row, .ctx = ctx};
    ar_error_t err;
    ar_error_clear(&err);
    int rc = ar_csv_each(f, path, read_line, &r, good_bytes, &err);
    fclose(f);
    if (rc < 0) return ar_cli_fail_err(cmd, &err);
    return rc;
}

/* ---- JSON from the CSV ---- */

static int is_string_column(int i) {
    /* backend, topology, model, algo, dtype, buffer, check */
    return i == 0 || i == 1 || i == 2 || i == 4 || i == 5 || i == 6 || i == 20;
}

typedef struct json_ctx_s {
    FILE *f;
    char *cols[32];
    int ncols;
    int rows;
} json_ctx_t;

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static int json_row(const ar_csv_line_t *l, void *vctx) {
    json_ctx_t *j = vctx;
    char *const *fields = l->fields;
    const int n = l->nfields;
    fputs(j->rows++ ? ",\n  {" : "  {", j->f);
    for (int i = 0; i < n && i < j->ncols; i++) {
        fprintf(j->f, "%s\"%s\": ", i ? ", " : "", j->cols[i]);
        char *end;
        if (is_string_column(i)) {
            json_string(j->f, fields[i]);
        } else {
            double v = strtod(fields[i], &end);
            if (*fields[i] && !*end && v == v) fputs(fields[i], j->f);
            else fputs("null", j->f);
        }
    }
    fputc('}', j->f);
    return 0;
}

static int write_json(const char *cmd, const char *csv, const char *path) {
    ar_out_t out;
    ar_error_t err;
    char label[160];
    snprintf(label, sizeof label, "--json %s", path);
    if (ar_out_open(&out, label, path, &err) != AR_OK) return ar_cli_fail_err(cmd, &err);
    FILE *f = out.f;
    json_ctx_t j = {.f = f};
    char header[512];
    snprintf(header, sizeof header, "%s", ar_row_csv_columns);
    for (char *save = NULL, *c = strtok_r(header, ",", &save); c && j.ncols < 32; c = strtok_r(NULL, ",", &save))
        j.cols[j.ncols++] = c;
    fputs("[\n", f);
    int rc = csv_read(cmd, csv, json_row, &j, NULL);
    fputs(j.rows ? "\n]\n" : "]\n", f);
    if (rc) ar_out_abort(&out);
    else if (ar_out_close(&out, &err) != AR_OK) rc = (ar_cli_fail_err(cmd, &err), 1);
    return rc;
}

/* ---- the runs ---- */

typedef struct sweep_s {
    const char *cmd;
    ar_cli_opts_t o;
    const char *out;       /* --out */
    long jobs;             /* --jobs */
    long shard_i, shard_n; /* --shard I/N */
    int resume;
    int nsizes;
    long total;            /* runs in the whole product */
    int nroots;            /* the root dimension: --root's list, or every rank of the largest topology */
    ar_topo_t **topos;     /* opened once, before the workers fork */
    keyset_t done;         /* --resume: keys already in the CSV */
    int lockfd;            /* the lock on --out: the parent's alone (-1: none) */
    struct inflight_s *inflight; /* worker j's at 1 + j, the parent's (a lost case run again) at 0 */
} sweep_t;

/* How far the run a worker is on has gone (ar_run_opts_t.progress), in memory the
 * workers and the simulator's processes share with the parent, for the bar. */
typedef struct inflight_s {
    volatile uint64_t ops, total;
} inflight_t;

static void inflight_note(void *ctx, double sim_s, uint64_t ops, uint64_t total_ops, double wall_s) {
    inflight_t *f = ctx;
    (void)sim_s, (void)wall_s;
    f->total = total_ops;
    f->ops = ops;
}

typedef struct run_idx_s {
    int b, t, buf, ch, ck, d, a, r, s;
} run_idx_t;

static run_idx_t decode(const sweep_t *w, long i) {
    const ar_cli_opts_t *o = &w->o;
    run_idx_t r;
    r.s = (int)(i % w->nsizes); i /= w->nsizes;
    r.r = (int)(i % w->nroots); i /= w->nroots;
    r.a = (int)(i % o->nalgos); i /= o->nalgos;
    r.d = (int)(i % o->ndtypes); i /= o->ndtypes;
    r.ck = (int)(i % o->nchunks); i /= o->nchunks;
    r.ch = (int)(i % o->nchannels); i /= o->nchannels;
    r.buf = (int)(i % o->nbuffers); i /= o->nbuffers;
    r.t = (int)(i % o->ntopos); i /= o->ntopos;
    r.b = (int)i;
    return r;
}

/* What one run produced: a message kind and text. */
enum { MSG_ROW = 'R', MSG_CHECK_FAIL = 'C', MSG_SKIP = 'S', MSG_FAIL = 'F', MSG_HAVE = 'H',
       MSG_NONE = 'N' /* no such run: a root beyond what the algorithm or topology has */ };

/* A row as its CSV line (with the line break), malloc'd. */
static char *row_line(const ar_row_t *row) {
    char *line = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&line, &len);
    if (!f) return NULL;
    ar_row_csv(f, row);
    fclose(f);
    return line;
}

/* Runs number i; writes "<kind> <text>" into msg. */
static void run_one(sweep_t *w, long i, int slot, char *msg, size_t len) {
    const ar_cli_opts_t *o = &w->o;
    run_idx_t x = decode(w, i);
    const char *backend = o->backends[x.b], *spec = o->topos[x.t];
    const ar_topo_t *t = w->topos[x.t];
    const char *aname = o->algo_names[x.a];
    int roots[AR_CLI_MAX_ROOTS];
    if (x.r >= ar_cli_roots(o, t, o->algos[x.a], roots, AR_CLI_MAX_ROOTS)) {
        snprintf(msg, len, "%c", MSG_NONE);
        return;
    }
    ar_dtype_t dt = o->dtypes[x.d];
    ar_mem_t buffer = o->buffers[x.buf];
    uint64_t bytes, count;
    ar_cli_size_at(o, x.s, dt, &bytes, &count);
    char sz[32], ebuf[512];
    ar_size_format(bytes, sz, sizeof sz);
    /* what the backend cannot hold is said before a plan is built (building one can be long) */
    const ar_backend_ops_t *ops = ar_backend_find(backend);
    ar_error_t ferr;
    ar_error_clear(&ferr);
    if (ops && ops->fits && ops->fits(t, bytes, buffer, &ferr) != AR_OK) {
        snprintf(msg, len, "%c %s on %s, %s %s, %s, backend %s: %s per rank %s", MSG_SKIP, aname, spec, sz,
                 ar_dtype_name(dt), ar_mem_name(buffer), backend, sz, ferr.message);
        return;
    }
    ar_case_t c = {
        .backend = backend, .topo = t, .topology = t->name[0] ? t->name : spec, .algo = aname,
        .count = count, .dtype = dt, .algo_opts = AR_ALGO_OPTS_DEFAULT, .run = ar_cli_run_opts(o, buffer),
        .verify = o->verify, .max_mem = o->max_mem,
    };
    c.algo_opts.channels = o->channels[x.ch];
    c.algo_opts.chunk_bytes = o->chunks[x.ck];
    c.algo_opts.root = roots[x.r];
    c.algo_opts.symmetry = o->symmetry;
    ar_cli_case_coll(o, count, &c.algo_opts);
    inflight_t *note = w->inflight ? &w->inflight[slot] : NULL;
    if (note) c.run.progress = inflight_note, c.run.progress_ctx = note;
    ar_error_t err;
    ar_error_clear(&err);
    ar_case_out_t co;
    int rc = ar_case_plan(&c, &co, &err);
    if (rc == AR_EUNFIT) {
        snprintf(msg, len, "%c %s does not fit %s: %s", MSG_SKIP, aname, spec,
                 ar_cli_unprefixed(ar_error_format(&err, ebuf, sizeof ebuf), aname));
        ar_case_out_free(&co);
        return;
    }
    /* The row's key (its inputs), to skip what the CSV already holds. */
    if (rc == AR_OK && w->resume) {
        char *line = row_line(&co.row);
        char *key = line ? row_key(line) : NULL;
        int have = key && keyset_has(&w->done, key);
        free(key);
        free(line);
        if (have) {
            snprintf(msg, len, "%c", MSG_HAVE);
            ar_case_out_free(&co);
            return;
        }
    }
    const int planned = rc == AR_OK; /* a plan refused (memory, verification) is a failed row */
    if (planned) rc = ar_case_execute(&c, &co, &err);
    if (note) note->total = 0;
    if (rc == AR_OK) {
        char *line = row_line(&co.row);
        snprintf(msg, len, "%c %s", co.res.checked && !co.res.check_ok ? MSG_CHECK_FAIL : MSG_ROW,
                 line ? line : "");
        free(line);
    } else {
        snprintf(msg, len, "%c %s on %s, %s %s, %s, backend %s: %s",
                 rc == AR_ELIMIT && (planned || co.stage == AR_CASE_RUN) ? MSG_SKIP : MSG_FAIL, aname, spec, sz,
                 ar_dtype_name(dt),
                 ar_mem_name(buffer), backend, ar_cli_unprefixed(ar_error_format(&err, ebuf, sizeof ebuf), aname));
    }
    ar_case_out_free(&co);
}

/* ---- the parent: the CSV's one writer, the progress bar ---- */

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { interrupted = sig; }

typedef struct parent_s {
    sweep_t *w;
    FILE *csv;
    long todo, finished, rows, skipped, failed, have;
    int check_failed;
    int write_errno;    /* the CSV could not be written: the sweep stops (whole rows stay) */
    long whole;         /* where the CSV's last whole row ends */
    long relaunched;    /* cases a dead worker lost, run again by the parent */
    int bar;
    double t0;
    char **notes; /* distinct skip notes already printed */
    int nnotes;
} parent_t;

static void bar_clear(parent_t *p) {
    if (p->bar) fputs("\r\033[K", stderr);
}

static void bar_draw(parent_t *p) {
    if (!p->bar) return;
    /* the runs in flight count by the share of their ops done */
    const sweep_t *w = p->w;
    double done = (double)p->finished, ops = 0, total = 0;
    for (long j = 0; w->inflight && j <= w->jobs; j++) {
        const uint64_t n = w->inflight[j].total, k = w->inflight[j].ops;
        if (n > 0 && k <= n) done += (double)k / (double)n, ops += (double)k, total += (double)n;
    }
    int width = 30, fill = p->todo ? (int)(width * done / (double)p->todo) : width;
    if (fill > width) fill = width;
    double el = ar_now_s() - p->t0;
    double eta = done > 0 ? el * ((double)p->todo - done) / done : 0;
    char running[64] = "", a[16], b[16];
    if (total > 0)
        snprintf(running, sizeof running, ", running %s of %s ops", ar_count_format(ops, a, sizeof a),
                 ar_count_format(total, b, sizeof b));
    fprintf(stderr, "\r[%.*s%*s] %ld/%ld runs, %ld rows, %.0fs, eta %.0fs%s\033[K", fill,
            "##############################", width - fill, "", p->finished, p->todo, p->rows, el, eta, running);
    fflush(stderr);
}

static void note_once(parent_t *p, const char *text) {
    for (int i = 0; i < p->nnotes; i++)
        if (strcmp(p->notes[i], text) == 0) return;
    char **n = realloc(p->notes, (size_t)(p->nnotes + 1) * sizeof *n);
    if (n) {
        p->notes = n;
        p->notes[p->nnotes++] = strdup(text);
    }
    if (!p->w->o.quiet) {
        bar_clear(p);
        fprintf(stderr, "arsim %s: %s\n", p->w->cmd, text);
    }
}

static void handle(parent_t *p, const char *msg) {
    p->finished++;
    switch (msg[0]) {
    case MSG_ROW:
    case MSG_CHECK_FAIL:
        if (p->write_errno) break;
        errno = 0;
        if (fputs(msg + 2, p->csv) < 0 || fflush(p->csv) != 0) {
            p->write_errno = errno ? errno : EIO;
            interrupted = SIGTERM; /* stop the workers: nothing more can be kept */
            break;
        }
        p->whole = ftell(p->csv);
        p->rows++;
        if (msg[0] == MSG_CHECK_FAIL) {
            p->check_failed = 1;
            bar_clear(p);
            fprintf(stderr, "arsim %s: check failed: %s", p->w->cmd, msg + 2);
        }
        break;
    case MSG_HAVE: p->have++; break;
    case MSG_NONE: break;
    case MSG_SKIP: {
        /* Say once per algorithm and topology (unfit) or per row family (too big). */
        p->skipped++;
        note_once(p, msg + 2);
        break;
    }
    default:
        p->failed++;
        bar_clear(p);
        fprintf(stderr, "arsim %s: %s\n", p->w->cmd, msg + 2);
        break;
    }
    bar_draw(p);
}

static int mine(const sweep_t *w, long i) { return i % w->shard_n == w->shard_i; }

/* --jobs N: N workers take runs from a shared counter and write one message per run
 * into a pipe (atomically: each is shorter than PIPE_BUF), "CASE MESSAGE". */
static int run_workers(parent_t *p) {
    sweep_t *w = p->w;
    /* next[0]: the next case; next[1 + j]: the case worker j is running (-1: none), so
     * that the case of a worker that dies (the OOM killer, a crash) is not lost */
    const size_t shared = (size_t)(w->jobs + 1) * sizeof(long);
    long *next = mmap(NULL, shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (next == MAP_FAILED) return ar_cli_fail(w->cmd, "mmap: %s", strerror(errno));
    for (long j = 0; j <= w->jobs; j++) next[j] = j ? -1 : 0;
    int fds[2];
    if (pipe(fds) != 0) return ar_cli_fail(w->cmd, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t *pids = calloc((size_t)w->jobs, sizeof *pids);
    int nkids = 0;
    const pid_t parent = getpid();
    for (long j = 0; j < w->jobs; j++) {
        pid_t pid = fork();
        if (pid < 0) break;
        if (pid == 0) {
            close(fds[0]);
            /* The lock is the parent's: a worker left running after its parent was killed
             * must not hold it against the --resume that follows. Nor run on: it goes
             * with the parent. */
            if (w->lockfd >= 0) close(w->lockfd);
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) _exit(0); /* the parent died before the line above */
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            char msg[MSG_MAX];
            for (;;) {
                long i = __atomic_fetch_add(next, 1, __ATOMIC_SEQ_CST);
                if (i >= w->total) break;
                if (!mine(w, i)) continue;
                __atomic_store_n(&next[1 + j], i, __ATOMIC_SEQ_CST);
                const int k0 = snprintf(msg, 32, "%ld ", i);
                run_one(w, i, (int)j + 1, msg + k0, sizeof msg - 1 - (size_t)k0);
                size_t n = strlen(msg);
                for (size_t k = 0; k < n; k++)
                    if (msg[k] == '\n' && k != n - 1) msg[k] = ' ';
                if (n == 0 || msg[n - 1] != '\n') msg[n++] = '\n';
                if (write(fds[1], msg, n) != (ssize_t)n) _exit(3);
                __atomic_store_n(&next[1 + j], -1, __ATOMIC_SEQ_CST);
            }
            _exit(0);
        }
        pids[nkids++] = pid;
    }
    close(fds[1]);
    if (nkids == 0) {
        close(fds[0]);
        free(pids);
        return ar_cli_fail(w->cmd, "fork: %s", strerror(errno));
    }
    /* Split the stream into messages (each ends with a line break). A worker killed
     * after its message went out but before it said so in next[] has its case here:
     * `got` keeps it from running twice. */
    char buf[2 * MSG_MAX], *line = malloc(MSG_MAX + 2);
    unsigned char *got = calloc((size_t)w->total, 1);
    if (!line || !got) {
        free(line);
        free(got);
        close(fds[0]);
        for (int k = 0; k < nkids; k++) kill(pids[k], SIGTERM);
        for (int k = 0; k < nkids; k++) waitpid(pids[k], NULL, 0);
        free(pids);
        munmap(next, shared);
        return ar_cli_fail(w->cmd, "out of memory");
    }
    size_t have = 0;
    for (;;) {
        /* twice a second without a message, the bar shows how the runs in flight go */
        struct pollfd pf = {fds[0], POLLIN, 0};
        const int ready = p->bar ? poll(&pf, 1, 500) : 1;
        if (ready == 0) {
            bar_draw(p);
            continue;
        }
        /* a signal interrupts the poll or the read alike */
        ssize_t r = ready < 0 && errno == EINTR ? -1 : read(fds[0], buf + have, sizeof buf - have - 1);
        if (r < 0 && errno == EINTR) {
            if (interrupted) break;
            continue;
        }
        if (r <= 0) break;
        have += (size_t)r;
        char *start = buf, *nl;
        while ((nl = memchr(start, '\n', have - (size_t)(start - buf)))) {
            char *body = start;
            const long idx = strtol(start, &body, 10);
            if (*body == ' ') body++;
            if (idx >= 0 && idx < w->total) got[idx] = 1;
            size_t n = (size_t)(nl - body);
            memcpy(line, body, n);
            line[n] = 0;
            /* a row keeps its line break for the CSV */
            if (line[0] == MSG_ROW || line[0] == MSG_CHECK_FAIL) {
                line[n] = '\n';
                line[n + 1] = 0;
            }
            handle(p, line);
            start = nl + 1;
        }
        have -= (size_t)(start - buf);
        memmove(buf, start, have);
        if (interrupted) break;
    }
    close(fds[0]);
    if (interrupted)
        for (int k = 0; k < nkids; k++) kill(pids[k], SIGTERM);
    int rc = 0;
    for (int k = 0; k < nkids; k++) {
        int st = 0;
        while (waitpid(pids[k], &st, 0) < 0 && errno == EINTR) {}
        const long lost = next[1 + k];
        if (interrupted || (WIFEXITED(st) && WEXITSTATUS(st) == 0 && lost < 0)) continue;
        bar_clear(p);
        if (WIFSIGNALED(st))
            fprintf(stderr, "arsim %s: worker %d (pid %ld) was killed by signal %d", w->cmd, k, (long)pids[k],
                    WTERMSIG(st));
        else
            fprintf(stderr, "arsim %s: worker %d (pid %ld) ended with status %d", w->cmd, k, (long)pids[k],
                    WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        if (lost < 0 || got[lost]) {
            fprintf(stderr, "; no case was lost\n");
            continue;
        }
        /* its case, once more, here */
        char msg[MSG_MAX + 2];
        fprintf(stderr, "; its case %ld of %ld runs again here\n", lost + 1, w->total);
        run_one(w, lost, 0, msg, MSG_MAX);
        if (msg[0] == MSG_ROW || msg[0] == MSG_CHECK_FAIL) {
            size_t n = strlen(msg);
            if (msg[n - 1] != '\n') strcat(msg, "\n");
        }
        handle(p, msg);
        p->relaunched++;
    }
    free(line);
    free(got);
    free(pids);
    munmap(next, shared);
    return rc;
}

static int add_done(const ar_csv_line_t *l, void *ctx) {
    sweep_t *w = ctx;
    char *key = row_key(l->text);
    if (!key || keyset_add(&w->done, key) != 0) {
        free(key);
        return ar_cli_fail(w->cmd, "out of memory");
    }
    return 0;
}

static int sweep_opt(int val, const char *arg, void *ctx) {
    sweep_t *w = ctx;
    switch (val) {
    case 1000: w->out = arg; return ar_cli_check_path(w->cmd, "--out", arg);
    case 1001:
        if (ar_cli_parse_int(arg, 1, 1024, &w->jobs) != AR_OK)
            return ar_cli_fail(w->cmd, "--jobs '%s': want a number of processes from 1 to 1024", arg);
        return 0;
    case 1002: {
        char *slash = strchr(arg, '/');
        char ibuf[32];
        if (!slash || (size_t)(slash - arg) >= sizeof ibuf)
            return ar_cli_fail(w->cmd, "--shard '%s': want I/N (0 <= I < N)", arg);
        memcpy(ibuf, arg, (size_t)(slash - arg));
        ibuf[slash - arg] = 0;
        if (ar_cli_parse_int(slash + 1, 1, 1000000, &w->shard_n) != AR_OK ||
            ar_cli_parse_int(ibuf, 0, w->shard_n - 1, &w->shard_i) != AR_OK)
            return ar_cli_fail(w->cmd, "--shard '%s': want I/N with 0 <= I < N", arg);
        return 0;
    }
    case 1003: w->resume = 1; return 0;
    }
    return 2;
}

static const struct option sweep_longopts[] = {
    {"out", required_argument, NULL, 1000},
    {"jobs", required_argument, NULL, 1001},
    {"shard", required_argument, NULL, 1002},
    {"resume", no_argument, NULL, 1003},
    {NULL, 0, NULL, 0},
};

static const char sweep_usage[] =
    "sweep (every selector takes a comma-separated list; the runs are their product):\n"
    "  --out FILE.csv         the rows, one per run, each flushed as it finishes (required)\n"
    "  --json FILE            also write every row of the CSV as JSON at the end\n"
    "  --jobs N               N worker processes (default 1)\n"
    "  --shard I/N            run only the runs numbered I modulo N (0 <= I < N); join the\n"
    "                         shares with 'arsim merge'\n"
    "  --resume               keep FILE.csv and run only the rows it lacks\n";

int ar_cli_sweep(int argc, char **argv) {
    sweep_t w;
    memset(&w, 0, sizeof w);
    w.cmd = "sweep";
    w.jobs = 1;
    w.lockfd = -1;
    w.shard_n = 1;
    ar_cli_extra_t extra = {sweep_longopts, NULL, sweep_opt, &w, sweep_usage,
                            AR_CLI_ALL_OPTS & ~(AR_CLI_O(CSV) | AR_CLI_O(BREAKDOWN) | AR_CLI_O(DUMP_PLAN)),
                            AR_CLI_O(JSON)};
    int rc = ar_cli_opts_parse("sweep", argc, argv, AR_CLI_LISTS, &extra, &w.o);
    if (rc == AR_CLI_HELP) { ar_cli_opts_free(&w.o); return 0; }
    if (rc) { ar_cli_opts_free(&w.o); return rc; }
    ar_cli_opts_t *o = &w.o;
    parent_t p;
    memset(&p, 0, sizeof p);
    p.w = &w;
    int lockfd = -1;
    if (!w.out) { rc = ar_cli_fail(w.cmd, "--out FILE.csv is required"); goto out; }
    if ((rc = ar_cli_check_backends(o)) != AR_CLI_OK) goto out;
    w.nsizes = ar_cli_nsizes(o);
    w.total = (long)o->nbackends * o->ntopos * o->nbuffers * o->nchannels * o->nchunks *
              o->ndtypes * o->nalgos * w.nsizes;
    for (int b = 0; b < o->nbackends; b++)
        if (!ar_backend_find(o->backends[b])) {
            rc = ar_cli_fail(w.cmd, "--backend '%s' is not in this build", o->backends[b]);
            goto out;
        }
    w.topos = calloc((size_t)o->ntopos, sizeof *w.topos);
    if (!w.topos) { rc = ar_cli_fail(w.cmd, "out of memory"); goto out; }
    for (int t = 0; t < o->ntopos; t++)
        if ((rc = ar_cli_topo_open(o, o->topos[t], &w.topos[t])) != 0) goto out;
    /* the root dimension: --root's ranks, or every rank of the largest topology */
    w.nroots = o->root_all ? 0 : o->nroots;
    for (int t = 0; o->root_all && t < o->ntopos; t++)
        if (w.topos[t]->nranks > w.nroots) w.nroots = w.topos[t]->nranks;
    if (w.nroots > AR_CLI_MAX_ROOTS) {
        rc = ar_cli_fail(w.cmd, "--root all: %d ranks, more roots than a sweep takes (%d)", w.nroots, AR_CLI_MAX_ROOTS);
        goto out;
    }
    w.total *= w.nroots;

    if (o->json && ar_out_same(w.out, o->json)) {
        rc = ar_cli_fail(w.cmd, "--out and --json name the same file '%s'", w.out);
        goto out;
    }
    const int to_stdout = !strcmp(w.out, "-");
    if (to_stdout && o->json) {
        rc = ar_cli_fail(w.cmd, "--json needs --out FILE.csv (the JSON is made from the CSV file)");
        goto out;
    }
    if (to_stdout && w.resume) {
        rc = ar_cli_fail(w.cmd, "--resume needs --out FILE.csv (standard output holds no rows to go on from)");
        goto out;
    }
    /* One sweep writes a CSV at a time: an exclusive lock, held to the end. */
    lockfd = to_stdout ? dup(STDOUT_FILENO) : open(w.out, O_RDWR | O_CREAT, 0666);
    if (lockfd < 0) {
        rc = ar_cli_fail(w.cmd, "--out %s: %s", w.out, strerror(errno));
        goto out;
    }
    w.lockfd = lockfd;
    if (!to_stdout && flock(lockfd, LOCK_EX | LOCK_NB) != 0) {
        rc = errno == EWOULDBLOCK ? ar_cli_fail(w.cmd, "--out %s: another sweep is writing it", w.out)
                                  : ar_cli_fail(w.cmd, "--out %s: cannot lock: %s", w.out, strerror(errno));
        goto out;
    }
    /* The CSV: new, or (--resume) the rows it holds, its torn last line cut. */
    struct stat st;
    int exists = stat(w.out, &st) == 0 && st.st_size > 0;
    if (w.resume && exists) {
        long good = 0;
        if ((rc = csv_read(w.cmd, w.out, add_done, &w, &good)) != 0) goto out;
        if (good < st.st_size && truncate(w.out, good) != 0) {
            rc = ar_cli_fail(w.cmd, "%s: %s", w.out, strerror(errno));
            goto out;
        }
        p.csv = fopen(w.out, good > 0 ? "a" : "w");
        if (p.csv && good == 0) ar_row_csv_header(p.csv);
    } else {
        p.csv = to_stdout ? fdopen(dup(STDOUT_FILENO), "w") : fopen(w.out, "w");
        if (p.csv) ar_row_csv_header(p.csv);
    }
    if (!p.csv) { rc = ar_cli_fail(w.cmd, "--out %s: %s", w.out, strerror(errno)); goto out; }
    errno = 0;
    if (fflush(p.csv) != 0) {
        rc = ar_cli_fail(w.cmd, "--out %s: write failed: %s", w.out, strerror(errno ? errno : EIO));
        rc = 1;
        goto out;
    }
    p.whole = ftell(p.csv);

    for (long i = 0; i < w.total; i++) p.todo += mine(&w, i);
    p.bar = !o->quiet && isatty(STDERR_FILENO);
    p.t0 = ar_now_s();
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    /* the runs in flight, shared with the workers (and the simulator's processes) */
    if (p.bar) {
        void *m = mmap(NULL, (size_t)(w.jobs + 1) * sizeof *w.inflight, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED) w.inflight = m;
    }
    bar_draw(&p);
    /* Even one job runs in a worker: the parent, which only writes rows, stops at once on
     * SIGINT or SIGTERM and takes the case in flight with it, however long that case is. */
    rc = run_workers(&p);
    if (w.inflight) munmap(w.inflight, (size_t)(w.jobs + 1) * sizeof *w.inflight);
    w.inflight = NULL;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    bar_clear(&p);
    errno = 0;
    if (fclose(p.csv) != 0 && !p.write_errno) p.write_errno = errno ? errno : EIO;
    p.csv = NULL;
    if (p.write_errno) { /* every whole row already written stays; --resume goes on from them */
        struct stat ost;
        if (p.whole > 0 && stat(w.out, &ost) == 0 && S_ISREG(ost.st_mode) && ost.st_size > p.whole &&
            truncate(w.out, p.whole) != 0) {} /* a torn last row: --resume would cut it too */
        ar_cli_fail(w.cmd, "--out %s: write failed: %s; %ld whole rows kept", w.out, strerror(p.write_errno), p.rows);
        rc = 1;
    }
    if (!p.write_errno && (!o->quiet || interrupted))
        fprintf(stderr, "arsim %s: %ld rows written to %s%s%s (%ld already there, %ld skipped, %ld failed) in %.1f s\n",
                w.cmd, p.rows, w.out, interrupted ? "; interrupted after " : "",
                interrupted ? "a signal, --resume finishes it" : "", p.have, p.skipped, p.failed,
                ar_now_s() - p.t0);
    if (!rc && o->json) rc = write_json(w.cmd, w.out, o->json);
    if (!rc && p.relaunched)
        fprintf(stderr, "arsim %s: %ld case%s of dead workers ran again here\n", w.cmd, p.relaunched,
                p.relaunched == 1 ? "" : "s");
    if (!rc && interrupted) rc = 128 + interrupted;
    if (!rc && p.failed) rc = 2;
    if (!rc && p.rows == 0 && p.have == 0 && p.skipped > 0) rc = 2; /* nothing fits: said above, case by case */
    if (!rc && p.check_failed) rc = 1;
out:
    if (lockfd >= 0) close(lockfd);
    for (int i = 0; i < p.nnotes; i++) free(p.notes[i]);
    free(p.notes);
    if (p.csv) fclose(p.csv);
    if (w.topos)
        for (int t = 0; t < o->ntopos; t++) ar_topo_free(w.topos[t]);
    free(w.topos);
    keyset_free(&w.done);
    ar_cli_opts_free(o);
    return rc;
}

/* ---- merge ---- */

typedef struct merge_s {
    FILE *out;
    keyset_t seen;
    long rows, dups;
} merge_t;

static int merge_row(const ar_csv_line_t *l, void *ctx) {
    merge_t *m = ctx;
    char *key = row_key(l->text);
    if (!key) return ar_cli_fail("merge", "out of memory");
    if (keyset_has(&m->seen, key)) {
        m->dups++;
        free(key);
        return 0;
    }
    keyset_add(&m->seen, key);
    fprintf(m->out, "%s\n", l->text);
    m->rows++;
    return 0;
}

int ar_cli_merge(int argc, char **argv) {
    const char *out = NULL;
    const char **in = argc > 1 ? malloc((size_t)argc * sizeof *in) : NULL; /* any number of inputs */
    int nin = 0;
    if (argc > 1 && !in) return ar_cli_fail("merge", "out of memory");
    int rc = -1;
    for (int i = 1; i < argc && rc < 0; i++) {
        if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--out") == 0) {
            if (i + 1 >= argc) rc = ar_cli_fail("merge", "%s needs a file", argv[i]);
            else if (ar_cli_check_path("merge", "-o", argv[i + 1])) rc = 2;
            else out = argv[++i];
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: arsim merge FILE.csv... -o FILE.csv\n"
                   "  joins the CSVs of sweep shards: one header, every row once (the first\n"
                   "  of equal runs), torn last lines dropped\n");
            rc = 0;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            rc = ar_cli_fail("merge", "unknown option '%s'", argv[i]);
        } else {
            in[nin++] = argv[i];
        }
    }
    if (rc >= 0) {
        free(in);
        return rc;
    }
    rc = 0;
    if (!out) rc = ar_cli_fail("merge", "-o FILE.csv is required");
    else if (nin == 0) rc = ar_cli_fail("merge", "no input CSV");
    for (int i = 0; i < nin && !rc; i++)
        if (ar_out_same(in[i], out)) rc = ar_cli_fail("merge", "-o %s: it is also an input", out);
    if (rc) {
        free(in);
        return rc;
    }
    merge_t m;
    memset(&m, 0, sizeof m);
    ar_out_t o;
    ar_error_t err;
    char label[160];
    snprintf(label, sizeof label, "-o %s", out);
    if (ar_out_open(&o, label, out, &err) != AR_OK) {
        free(in);
        return ar_cli_fail_err("merge", &err);
    }
    m.out = o.f;
    ar_row_csv_header(m.out);
    for (int i = 0; i < nin && !rc; i++) rc = csv_read("merge", in[i], merge_row, &m, NULL);
    if (rc) ar_out_abort(&o);
    else if (ar_out_close(&o, &err) != AR_OK) rc = (ar_cli_fail_err("merge", &err), 1);
    if (!rc)
        fprintf(stderr, "arsim merge: %ld rows from %d files into %s (%ld duplicates dropped)\n", m.rows,
                nin, out, m.dups);
    keyset_free(&m.seen);
    free(in);
    return rc;
}
