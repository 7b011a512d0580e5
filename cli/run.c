/* arsim run, and the default study (arsim with no arguments).
 *
 * For every backend, topology, buffer level, dtype, channel count, chunk,
 * algorithm and size selected: build the plan, verify it when that is cheap
 * (or always with --verify), run it on the backend and print one row of the
 * nccl-tests-shaped table, flushed as soon as it is known. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config.h"
#include "arsim/out.h"
#include "cli/internal.h"
#include "cli/opts.h"

/* The verifier's cost grows with the ops (not the elements) times the vector
 * clock of every channel; below this it takes well under a second and runs unasked. */

typedef struct run_state_s {
    const char *cmd;
    const char *who;            /* "arsim run" or "arsim": prefix of notes on stderr */
    ar_cli_opts_t *o;
    int study;                  /* the default study: say what it is in the header */
    ar_out_t csv, json;         /* --csv, --json (f NULL when not asked) */
    FILE *table;                /* the table: stdout, or stderr when a file goes there (-) */
    int json_rows;
    int write_failed;           /* said once; the outputs keep their whole rows */
    int progress;               /* stderr is a terminal */
    char running[96];           /* the case running now: "[3/18] ring 1M" */
    int done, total;
    int rows;                   /* rows printed */
    int check_failed;
    int failed;                 /* a run failed in a study that went on: the exit status */
    const char *timeline;       /* --timeline FILE (cuda) */
} run_state_t;

/* A row's line in each output asked for, checked: 0, or 1 after naming the file (a
 * write failed: what was computed before it is whole on disk). */
static int write_row(run_state_t *s, const ar_row_t *row) {
    ar_error_t err;
    if (s->csv.f) {
        ar_row_csv(s->csv.f, row);
        if (ar_out_flush(&s->csv, &err) != AR_OK) return (ar_cli_fail_err(s->cmd, &err), 1);
    }
    if (s->json.f) {
        ar_cli_json_row(s->json.f, row, s->json_rows == 0);
        s->json_rows++;
        if (ar_out_flush(&s->json, &err) != AR_OK) return (ar_cli_fail_err(s->cmd, &err), 1);
    }
    return 0;
}

static void progress(run_state_t *s, const char *algo, uint64_t bytes) {
    if (!s->progress) return;
    char sz[32];
    snprintf(s->running, sizeof s->running, "[%d/%d] %s %s", s->done + 1, s->total, algo,
             ar_size_format(bytes, sz, sizeof sz));
    fprintf(stderr, "\r%s ...\033[K", s->running);
    fflush(stderr);
}

/* A long run's own progress (ar_run_opts_t.progress), on the case's line: the time
 * simulated so far, the ops done, and the wall time left were the rest as fast. */
static void run_progress(void *ctx, double sim_s, uint64_t ops, uint64_t total_ops, double wall_s) {
    const run_state_t *s = ctx;
    char left[32] = "", done[16], all[16];
    if (ops > 0 && ops < total_ops)
        snprintf(left, sizeof left, ", ~%.0f s left", wall_s * (double)(total_ops - ops) / (double)ops);
    fprintf(stderr, "\r%s: simulated %.1f us, %s of %s ops (%.0f%%)%s\033[K", s->running, sim_s * 1e6,
            ar_count_format(ops, done, sizeof done), ar_count_format(total_ops, all, sizeof all),
            total_ops ? 100.0 * (double)ops / (double)total_ops : 100.0, left);
    fflush(stderr);
}

static void progress_clear(run_state_t *s) {
    if (!s->progress) return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
}

/* Checks before a plan is built (building one for an impossible case can itself take
 * long): the job's bytes must fit 64 bits, the buffers the chosen memory level
 * (the backend checks again with the plan's scratch), and the ref backend's
 * buffers host memory. Returns 0, 2 (reported), or PRE_SKIP when this size and
 * larger ones do not fit but smaller ones may (a note on stderr when sizes > 1). */
#define PRE_SKIP 3
static int precheck(run_state_t *s, const char *backend, const ar_topo_t *t, const char *spec,
                    ar_mem_t buffer, uint64_t bytes, const char *sz, int nsizes) {
    uint64_t n = (uint64_t)(t->nranks > 0 ? t->nranks : 1);
    if (bytes > UINT64_MAX / 4 / n)
        return ar_cli_fail(s->cmd, "%s bytes per rank on %s: %" PRIu64 " ranks x %" PRIu64
                           " bytes (input and output) overflows 64 bits", sz, spec, n, bytes);
    char msg[512] = "";
    const ar_backend_ops_t *ops = ar_backend_find(backend);
    ar_error_t err;
    ar_error_clear(&err);
    const int frc = ops && ops->fits ? ops->fits(t, bytes, buffer, &err) : AR_OK;
    if (frc == AR_ELIMIT)
        snprintf(msg, sizeof msg, "backend %s, %s per rank on %s: %s", backend, sz, spec, err.message);
    else if (frc != AR_OK)
        return ar_cli_fail(s->cmd, "backend %s on %s: %s", backend, spec, err.message);
    if (!msg[0]) return AR_CLI_OK;
    if (nsizes > 1) {
        fprintf(stderr, "%s: %s from here on: %s\n", s->who, sz, msg);
        fflush(stderr);
        return PRE_SKIP;
    }
    return ar_cli_fail(s->cmd, "%s", msg);
}


static void header(run_state_t *s, const char *backend, const ar_topo_t *t, const char *spec,
                   ar_mem_t buffer, int channels, uint64_t chunk) {
    FILE *f = s->table;
    char ch[32] = "default", ck[32] = "default";
    if (channels > 0) snprintf(ch, sizeof ch, "%d", channels);
    if (chunk > 0) ar_size_format(chunk, ck, sizeof ck);
    const ar_coll_t coll = s->o->coll;
    if (ar_coll_fused(coll))
        fprintf(f, "# arsim %s: %s (sum), N = %" PRIu64 ", K = %" PRIu64 "\n", PACKAGE_VERSION, ar_coll_name(coll),
                s->o->gemm_n, s->o->gemm_k);
    else
        fprintf(f, "# arsim %s: %s (%s)\n", PACKAGE_VERSION, ar_coll_name(coll), coll == AR_COLL_ALLGATHER ? "none" : "sum");
    if (s->study) {
        const ar_cli_opts_t *o = s->o;
        char lo[32], hi[32], sizes[96];
        if (o->ncounts > 0)
            snprintf(sizes, sizeof sizes, "%d element count%s", o->ncounts, o->ncounts == 1 ? "" : "s");
        else if (o->nsizes == 1)
            snprintf(sizes, sizeof sizes, "size %s", ar_size_format(o->sizes[0], lo, sizeof lo));
        else
            snprintf(sizes, sizeof sizes, "sizes %s..%s", ar_size_format(o->sizes[0], lo, sizeof lo),
                     ar_size_format(o->sizes[o->nsizes - 1], hi, sizeof hi));
        fprintf(f, "# default study: every algorithm that fits %s, %s per rank%s\n", spec, sizes,
                strcmp(spec, AR_CLI_DEFAULT_TOPOLOGY) == 0
                    ? " (a 4x4 torus: 1stage and 2stage reach non-neighbours through other devices; innet needs a switch that adds)" : "");
    }
    fprintf(f, "# topology %s (%s", t->name[0] ? t->name : spec, ar_topo_kind_name(t->kind));
    if (t->grid_w > 0) fprintf(f, " %dx%d", t->grid_w, t->grid_h);
    fprintf(f, ", %d devices, %d links, %d ranks)\n", t->ndevices, t->nlinks, t->nranks);
    fprintf(f, "# model %s, backend %s, buffer %s, channels %s, chunk %s\n",
            t->model ? t->model->name : "?", backend, ar_mem_name(buffer), ch, ck);
    fprintf(f, "#\n");
    ar_cli_table_header(f);
    fflush(f);
}

/* One (backend, topology) pair: every buffer, dtype, channels, chunk, algo, size. */
static int run_topo(run_state_t *s, const char *backend, const char *spec) {
    ar_cli_opts_t *o = s->o;
    ar_topo_t *t = NULL;
    int rc = ar_cli_topo_open(o, spec, &t);
    if (rc) return rc;
    ar_error_t berr;
    ar_error_clear(&berr);
    if (ar_backend_check(backend, t, &berr) != AR_OK) {
        ar_topo_free(t);
        return ar_cli_fail_err(s->cmd, &berr);
    }
    int nsizes = ar_cli_nsizes(o);
    if (o->root_all && t->nranks > AR_CLI_MAX_ROOTS) {
        ar_topo_free(t);
        return ar_cli_fail(s->cmd, "--root all on %s: %d ranks, more roots than a run takes (%d)", spec, t->nranks,
                           AR_CLI_MAX_ROOTS);
    }
    int *unfit = calloc((size_t)o->nalgos, sizeof *unfit);
    if (!unfit) { ar_topo_free(t); return ar_cli_fail(s->cmd, "out of memory"); }
    rc = AR_CLI_OK;

    for (int ib = 0; ib < o->nbuffers; ib++)
    for (int ic = 0; ic < o->nchannels; ic++)
    for (int ik = 0; ik < o->nchunks; ik++) {
        ar_mem_t buffer = o->buffers[ib];
        int header_due = 1; /* printed with the group's first row: no empty table before an error */
        for (int id = 0; id < o->ndtypes; id++)
        for (int ia = 0; ia < o->nalgos; ia++) {
            const char *aname = o->algo_names[ia];
            int roots[AR_CLI_MAX_ROOTS];
            const int nr = ar_cli_roots(o, t, o->algos[ia], roots, AR_CLI_MAX_ROOTS);
            s->total += (nr - 1) * nsizes; /* the total counted one root an algorithm */
            for (int ir = 0; ir < nr; ir++) {
            if (unfit[ia]) { s->done += nsizes; continue; }
            for (int is = 0; is < nsizes; is++) {
                ar_dtype_t dt = o->dtypes[id];
                uint64_t bytes, count;
                ar_cli_size_at(o, is, dt, &bytes, &count);
                char sz[32];
                ar_size_format(bytes, sz, sizeof sz);
                int pre = precheck(s, backend, t, spec, buffer, bytes, sz, nsizes);
                if (pre == PRE_SKIP) {
                    /* Sizes ascend in a range; skip the rest of this algorithm's. */
                    s->done += nsizes - is;
                    break;
                }
                if (pre) { rc = pre; goto out; }
                progress(s, aname, bytes);
                ar_case_t c = {
                    .backend = backend, .topo = t, .topology = t->name[0] ? t->name : spec, .algo = aname,
                    .count = count, .dtype = dt, .algo_opts = AR_ALGO_OPTS_DEFAULT,
                    .run = ar_cli_run_opts(o, buffer), .verify = o->verify, .max_mem = o->max_mem,
                };
                c.algo_opts.channels = o->channels[ic];
                c.algo_opts.chunk_bytes = o->chunks[ik];
                c.algo_opts.root = roots[ir];
                c.algo_opts.symmetry = o->symmetry;
                ar_cli_case_coll(o, count, &c.algo_opts);
                c.run.breakdown = o->breakdown;
                c.run.timeline = s->timeline;
                if (s->progress) c.run.progress = run_progress, c.run.progress_ctx = s;
                ar_error_t err;
                ar_error_clear(&err);
                ar_case_out_t co;
                int brc = ar_case_plan(&c, &co, &err);
                if (brc == AR_EUNFIT && o->algo_all) {
                    /* Not fatal in a study: say why and go on with the others. */
                    char buf[512];
                    progress_clear(s);
                    fprintf(stderr, "%s: %s does not fit %s: %s\n", s->who, aname, spec,
                            ar_cli_unprefixed(ar_error_format(&err, buf, sizeof buf), aname));
                    fflush(stderr);
                    ar_case_out_free(&co);
                    unfit[ia] = 1;
                    s->done += nsizes - is;
                    break;
                }
                if (brc == AR_ELIMIT && o->algo_all) {
                    /* Over a limit (the memory it would take, a plan's most): the others may
                     * fit, and a larger size would not either. Said, and the study goes on. */
                    char buf[512];
                    progress_clear(s);
                    fprintf(stderr, "%s: %s on %s from %s on: %s\n", s->who, aname, spec, sz,
                            ar_cli_unprefixed(ar_error_format(&err, buf, sizeof buf), aname));
                    fflush(stderr);
                    ar_case_out_free(&co);
                    s->done += nsizes - is;
                    break;
                }
                if (brc != AR_OK) {
                    char buf[512];
                    progress_clear(s);
                    const char *why = ar_cli_unprefixed(ar_error_format(&err, buf, sizeof buf), aname);
                    if (brc == AR_EUNFIT)
                        rc = ar_cli_fail(s->cmd, "%s does not fit %s: %s", aname, spec, why);
                    else
                        rc = ar_cli_fail(s->cmd, "%s on %s, %s %s: %s", aname, spec, sz, ar_dtype_name(dt), why);
                    if (co.stage == AR_CASE_VERIFY && brc == AR_EPLAN) rc = 1; /* a wrong plan, not bad input */
                    ar_case_out_free(&co);
                    goto out;
                }
                if (o->dump_plan) {
                    progress_clear(s);
                    fprintf(s->table, "# plan %s, %s %s, %d ranks\n", aname, sz, ar_dtype_name(dt), co.plan->nranks);
                    ar_plan_dump(co.plan, s->table);
                    fflush(s->table);
                }
                int xrc = ar_case_execute(&c, &co, &err);
                progress_clear(s);
                if (xrc == AR_ELIMIT && nsizes > 1) {
                    /* Larger sizes will not fit either: note it and go on. */
                    char buf[512];
                    fprintf(stderr, "%s: %s from %s on: %s\n", s->who, aname, sz,
                            ar_error_format(&err, buf, sizeof buf));
                    fflush(stderr);
                    ar_case_out_free(&co);
                    s->done += nsizes - is;
                    break;
                }
                if (xrc != AR_OK) {
                    char buf[512];
                    rc = ar_cli_fail(s->cmd, "%s on %s, %s %s, backend %s: %s", aname, spec, sz,
                                     ar_dtype_name(dt), backend, ar_error_format(&err, buf, sizeof buf));
                    if (xrc == AR_ECHECK) rc = 1;
                    ar_case_out_free(&co);
                    if (o->algo_all && xrc != AR_ENOTSUP) {
                        /* A study goes on with the other algorithms; the status says it failed. */
                        s->failed = rc;
                        rc = AR_CLI_OK;
                        s->done += nsizes - is;
                        break;
                    }
                    goto out;
                }
                if (co.even_hi && !o->quiet) {
                    /* the row's time is of the even count above (AR_CASE_EVEN_SPAN) */
                    const double ds = ar_dtype_size(dt);
                    fprintf(stderr,
                            "%s: %s at %" PRIu64 " B: timed at %" PRIu64 " B, whose ranks' parts are even (%s "
                            "ops for all); %" PRIu64 " B takes %.2f%% %s\n",
                            s->who, aname, bytes, (uint64_t)(co.even_hi * ds),
                            co.plan && co.plan->only_span > 1 ? "a row's" : "rank 0's", (uint64_t)(co.even_lo * ds),
                            100 * fabs(1 - co.even_lo_s / co.res.time_s), co.even_lo_s <= co.res.time_s ? "less" : "more");
                    fflush(stderr);
                }
                if (co.defaults_fewest && !o->quiet) {
                    fprintf(stderr,
                            "%s: %s at %" PRIu64 " B: its channels were searched at one piece a lane, where its "
                            "plans hold the fewest ops: at its own chunk they pass the %llu ops the search of the "
                            "defaults times (every rank's ops where rank 0's cannot stand for all); --channels and "
                            "--chunk ask for others\n",
                            s->who, aname, bytes, (unsigned long long)AR_CASE_TUNE_MAX_OPS);
                    fflush(stderr);
                }
                if (co.auto_untimed[0] && !o->quiet) {
                    fprintf(stderr,
                            "%s: auto at %" PRIu64 " B: %s not timed, each plan past what auto times (every "
                            "rank's ops past %llu, or --max-mem); named, each is timed alone or says why\n",
                            s->who, bytes, co.auto_untimed, (unsigned long long)AR_CASE_CHOOSE_MAX_OPS);
                    fflush(stderr);
                }
                const ar_row_t row = co.row;
                const ar_result_t res = co.res;
                if (header_due) header(s, backend, t, spec, buffer, o->channels[ic], o->chunks[ik]);
                header_due = 0;
                ar_cli_table_row(s->table, &row);
                if (o->breakdown) ar_cli_breakdown(s->table, t, &res);
                fflush(s->table);
                if (write_row(s, &row)) {
                    ar_case_out_free(&co);
                    s->write_failed = 1;
                    rc = 1;
                    goto out;
                }
                s->rows++;
                s->done++;
                if (res.checked && !res.check_ok) {
                    fprintf(stderr, "%s: check failed: %s %s %s on %s: %s\n", s->who,
                            aname, sz, ar_dtype_name(dt), spec,
                            res.check_msg[0] ? res.check_msg : "output differs from the float64 reference");
                    fflush(stderr);
                    s->check_failed = 1;
                }
                ar_case_out_free(&co);
            }
            }
        }
    }
out:
    progress_clear(s);
    free(unfit);
    ar_topo_free(t);
    return rc;
}

enum { O_TIMELINE = 1000 };

typedef struct run_extra_s {
    const char *cmd;
    const char *timeline;
} run_extra_t;

static int run_handle(int val, const char *arg, void *ctx) {
    run_extra_t *x = ctx;
    if (val != O_TIMELINE) return 2;
    if (ar_cli_check_path(x->cmd, "--timeline", arg)) return 2;
    x->timeline = arg;
    return 0;
}

static int run_main(const char *cmd, int argc, char **argv, int study) {
    static const struct option longopts[] = {{"timeline", required_argument, NULL, O_TIMELINE}, {0, 0, 0, 0}};
    run_extra_t x = {.cmd = cmd};
    const ar_cli_extra_t extra = {
        longopts, NULL, run_handle, &x,
        "  --timeline FILE        cuda, sim: when each op of the last execution started and ended,\n"
        "                         on the GPUs' clocks or the simulator's (CSV: gpu, rank, chan, op,\n"
        "                         code, target, start_ns, end_ns; rewritten after every execution;\n"
        "                         scripts/timeline-compare.py sets the two side by side)\n",
        0, 0,
    };
    ar_cli_opts_t o;
    int rc = ar_cli_opts_parse(cmd, argc, argv, 0, &extra, &o);
    if (rc == AR_CLI_HELP) { ar_cli_opts_free(&o); return 0; }
    if (rc) { ar_cli_opts_free(&o); return rc; }

    run_state_t s = {.cmd = cmd, .who = study ? "arsim" : "arsim run", .o = &o, .study = study, .timeline = x.timeline};
    if (x.timeline && strcmp(o.backends[0], "cuda") && strcmp(o.backends[0], "sim"))
        rc = ar_cli_fail(cmd, "--timeline needs --backend cuda (the GPUs' clocks) or sim (the simulator's), not %s "
                              "(--breakdown splits its time by term)", o.backends[0]);
    const char *twin = !x.timeline                                   ? NULL
                       : o.csv && ar_out_same(o.csv, x.timeline)   ? "csv"
                       : o.json && ar_out_same(o.json, x.timeline) ? "json"
                                                                   : NULL;
    if (!rc && twin) rc = ar_cli_fail(cmd, "--timeline names the same file as --%s ('%s')", twin, x.timeline);
    if (!rc && x.timeline) {
        /* written after each execution: a path that cannot be is said now (a regular file
         * or a new one; a device or FIFO is written in place, and opening one may block) */
        struct stat st;
        ar_out_t probe;
        if (stat(x.timeline, &st) != 0 || S_ISREG(st.st_mode)) {
            rc = ar_cli_out_open(cmd, "--timeline", x.timeline, &probe);
            if (!rc) ar_out_abort(&probe);
        }
    }
    if (rc) { ar_cli_opts_free(&o); return rc; }
    s.progress = !o.quiet && isatty(STDERR_FILENO);
    if (!(o.seen & AR_CLI_O(BACKEND)) && !ar_backend_with(AR_BACKEND_MODEL | AR_BACKEND_CONTENTION))
        fprintf(stderr, "%s: this build has no sim backend (SimGrid); using the %s backend\n", s.who,
                ar_backend_default());
    if ((rc = ar_cli_check_backends(&o)) != AR_CLI_OK) goto out;
    s.table = stdout;
    if (o.csv && o.json && ar_out_same(o.csv, o.json)) {
        rc = ar_cli_fail(cmd, "--csv and --json name the same file '%s'", o.csv);
        goto out;
    }
    if (o.csv && (rc = ar_cli_out_open(cmd, "--csv", o.csv, &s.csv))) goto out;
    if (o.json && (rc = ar_cli_out_open(cmd, "--json", o.json, &s.json))) goto out;
    if (s.csv.f == stdout || s.json.f == stdout) s.table = stderr; /* the file is on stdout */
    if (s.csv.f) ar_row_csv_header(s.csv.f);
    if (s.json.f) ar_cli_json_begin(s.json.f);
    s.total = o.nbackends * o.ntopos * o.nbuffers * o.nchannels * o.nchunks * o.ndtypes *
              o.nalgos * ar_cli_nsizes(&o);

    for (int b = 0; b < o.nbackends && !rc; b++)
        for (int t = 0; t < o.ntopos && !rc; t++) {
            if (b || t) fputc('\n', s.table);
            rc = run_topo(&s, o.backends[b], o.topos[t]);
        }
    if (!rc && s.failed) rc = s.failed;
    if (!rc && s.rows == 0) rc = ar_cli_fail(cmd, "no algorithm fits the selected topology");
    if (!rc && s.check_failed) rc = 1;
out:
    {
        ar_error_t err;
        if (s.json.f) {
            ar_cli_json_end(s.json.f);
            if (ar_out_close(&s.json, &err) != AR_OK && !s.write_failed) rc = (ar_cli_fail_err(cmd, &err), 1);
        }
        if (s.csv.f && ar_out_close(&s.csv, &err) != AR_OK && !s.write_failed) rc = (ar_cli_fail_err(cmd, &err), 1);
    }
    ar_cli_opts_free(&o);
    return rc;
}

int ar_cli_run(int argc, char **argv) { return run_main("run", argc, argv, 0); }

/* `arsim` alone: the default study. Options may follow (arsim --backend analytic). */
int ar_cli_study(int argc, char **argv) { return run_main("", argc, argv, 1); }
