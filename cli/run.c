/* arsim run, and the default study (arsim with no arguments).
 *
 * For every backend, topology, buffer level, dtype, channel count, chunk,
 * algorithm and size selected: build the plan, verify it when that is cheap
 * (or always with --verify), run it on the backend and print one row of the
 * nccl-tests-shaped table, flushed as soon as it is known. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "config.h"
#include "cli/internal.h"
#include "cli/opts.h"

/* The verifier's cost grows with the ops (not the elements) times the vector
 * clock of every channel; below this it takes well under a second and runs unasked. */
#define VERIFY_MAX_WORK ((uint64_t)1 << 24)   /* nops * nranks * nchannels */

typedef struct run_state_s {
    const char *cmd;
    const char *who;            /* "arsim run" or "arsim": prefix of notes on stderr */
    ar_cli_opts_t *o;
    int study;                  /* the default study: say what it is in the header */
    FILE *csv, *json;
    int json_rows;
    int progress;               /* stderr is a terminal */
    int done, total;
    int rows;                   /* rows printed */
    int check_failed;
    int failed;                 /* a run failed in a study that went on: the exit status */
} run_state_t;

static int open_out(const char *cmd, const char *flag, const char *path, FILE **f) {
    *f = fopen(path, "w");
    if (!*f) return ar_cli_fail(cmd, "%s '%s': cannot write: %s", flag, path, strerror(errno));
    return AR_CLI_OK;
}

static void progress(run_state_t *s, const char *algo, uint64_t bytes) {
    if (!s->progress) return;
    char sz[32];
    fprintf(stderr, "\r[%d/%d] %s %s ...\033[K", s->done + 1, s->total, algo,
            ar_size_format(bytes, sz, sizeof sz));
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
    if (strcmp(backend, "ref") == 0) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        double have = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
        double need = 2.0 * (double)n * (double)bytes; /* IN and OUT of every rank */
        if (have > 0 && need > have)
            snprintf(msg, sizeof msg, "backend ref: %s on %s needs %.4g GB of host memory for the "
                     "buffers of %" PRIu64 " ranks; this machine has %.4g GB",
                     sz, spec, need / 1e9, n, have / 1e9);
    } else if (t->model) {
        const ar_mem_level_t *m = &t->model->mem[buffer];
        if (!m->present)
            return ar_cli_fail(s->cmd, "--buffer %s: model %s has no %s level", ar_mem_name(buffer),
                               t->model->name, ar_mem_name(buffer));
        int maxper = 0;
        for (int d = 0; d < t->ndevices; d++) {
            int k = 0;
            for (int r = 0; r < t->nranks; r++) k += ar_topo_rank_device(t, r) == d;
            if (k > maxper) maxper = k;
        }
        double need = 2.0 * (double)bytes * maxper;
        if (need > m->capacity_bytes)
            snprintf(msg, sizeof msg, "backend %s: %s per rank needs %.4g GB of %s per device "
                     "(input and output of %d rank%s), model %s has %.4g GB", backend, sz,
                     need / 1e9, ar_mem_name(buffer), maxper, maxper == 1 ? "" : "s",
                     t->model->name, m->capacity_bytes / 1e9);
    }
    if (!msg[0]) return AR_CLI_OK;
    if (nsizes > 1) {
        fprintf(stderr, "%s: %s from here on: %s\n", s->who, sz, msg);
        fflush(stderr);
        return PRE_SKIP;
    }
    return ar_cli_fail(s->cmd, "%s", msg);
}

/* An algorithm's message without its own "name: " prefix (the CLI names it already). */
static const char *unprefixed(const char *msg, const char *name) {
    size_t n = strlen(name);
    return strncmp(msg, name, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ' ? msg + n + 2 : msg;
}

static int backend_checks(const char *b) { return strcmp(b, "ref") == 0 || strcmp(b, "cuda") == 0; }

static void header(run_state_t *s, const char *backend, const ar_topo_t *t, const char *spec,
                   ar_mem_t buffer, int channels, uint64_t chunk) {
    FILE *f = stdout;
    char ch[32] = "default", ck[32] = "default";
    if (channels > 0) snprintf(ch, sizeof ch, "%d", channels);
    if (chunk > 0) ar_size_format(chunk, ck, sizeof ck);
    fprintf(f, "# arsim %s: allreduce (sum)\n", PACKAGE_VERSION);
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
                    ? " (a 4x4 torus: every ring, grid and tree algorithm fits it; 1stage and 2stage need every pair linked)" : "");
    }
    fprintf(f, "# topology %s (%s", t->name[0] ? t->name : spec, ar_topo_kind_name(t->kind));
    if (t->grid_w > 0) fprintf(f, " %dx%d", t->grid_w, t->grid_h);
    fprintf(f, ", %d devices, %d links, %d ranks)\n", t->ndevices, t->nlinks, t->nranks);
    fprintf(f, "# model %s, backend %s, buffer %s, channels %s, chunk %s\n",
            t->model ? t->model->name : "?", backend, ar_mem_name(buffer), ch, ck);
    fprintf(f, "#\n");
    ar_cli_table_header(f, s->o->check);
    fflush(f);
}

/* One (backend, topology) pair: every buffer, dtype, channels, chunk, algo, size. */
static int run_topo(run_state_t *s, const char *backend, const char *spec) {
    ar_cli_opts_t *o = s->o;
    ar_topo_t *t = NULL;
    int rc = ar_cli_topo_open(o, spec, &t);
    if (rc) return rc;
    int nsizes = ar_cli_nsizes(o);
    int *unfit = calloc((size_t)o->nalgos, sizeof *unfit);
    if (!unfit) { ar_topo_free(t); return ar_cli_fail(s->cmd, "out of memory"); }
    rc = AR_CLI_OK;

    for (int ib = 0; ib < o->nbuffers; ib++)
    for (int ic = 0; ic < o->nchannels; ic++)
    for (int ik = 0; ik < o->nchunks; ik++) {
        ar_mem_t buffer = o->buffers[ib];
        header(s, backend, t, spec, buffer, o->channels[ic], o->chunks[ik]);
        for (int id = 0; id < o->ndtypes; id++)
        for (int ia = 0; ia < o->nalgos; ia++) {
            const char *aname = o->algo_names[ia];
            if (unfit[ia]) { s->done += nsizes; continue; }
            for (int is = 0; is < nsizes; is++) {
                ar_dtype_t dt = o->dtypes[id];
                uint64_t bytes, count;
                ar_cli_size_at(o, is, dt, &bytes, &count);
                char sz[32];
                ar_size_format(bytes, sz, sizeof sz);
                ar_algo_opts_t aopts = AR_ALGO_OPTS_DEFAULT;
                aopts.channels = o->channels[ic];
                aopts.chunk_bytes = o->chunks[ik];
                aopts.root = o->root;
                ar_error_t err;
                ar_error_clear(&err);
                ar_plan_t *plan = NULL;
                int pre = precheck(s, backend, t, spec, buffer, bytes, sz, nsizes);
                if (pre == PRE_SKIP) {
                    /* Sizes ascend in a range; skip the rest of this algorithm's. */
                    s->done += nsizes - is;
                    break;
                }
                if (pre) { rc = pre; goto out; }
                progress(s, aname, bytes);
                int brc = ar_algo_build(aname, t, count, dt, &aopts, &plan, &err);
                if (brc == AR_EUNFIT && o->algo_all) {
                    /* Not fatal in a study: say why and go on with the others. */
                    char buf[512];
                    progress_clear(s);
                    fprintf(stderr, "%s: %s does not fit %s: %s\n", s->who, aname, spec,
                            unprefixed(ar_error_format(&err, buf, sizeof buf), aname));
                    fflush(stderr);
                    unfit[ia] = 1;
                    s->done += nsizes - is;
                    break;
                }
                if (brc != AR_OK) {
                    char buf[512];
                    progress_clear(s);
                    const char *why = unprefixed(ar_error_format(&err, buf, sizeof buf), aname);
                    if (brc == AR_EUNFIT)
                        rc = ar_cli_fail(s->cmd, "%s does not fit %s: %s", aname, spec, why);
                    else
                        rc = ar_cli_fail(s->cmd, "%s on %s, %s %s: %s", aname, spec, sz,
                                         ar_dtype_name(dt), why);
                    goto out;
                }
                if (o->dump_plan) {
                    progress_clear(s);
                    printf("# plan %s, %s %s, %d ranks\n", aname, sz, ar_dtype_name(dt), plan->nranks);
                    ar_plan_dump(plan, stdout);
                    fflush(stdout);
                }
                int cheap = (uint64_t)plan->nops * (uint64_t)plan->nranks *
                            (uint64_t)plan->nchannels <= VERIFY_MAX_WORK;
                /* a probe computes no allreduce: nothing to verify it against */
                if (!o->algos[ia]->probe && (o->verify == 1 || (o->verify == -1 && cheap))) {
                    if (ar_plan_verify(plan, &err) != AR_OK) {
                        char buf[512];
                        progress_clear(s);
                        ar_cli_fail(s->cmd, "%s on %s, %s %s: plan failed verification: %s",
                                    aname, spec, sz, ar_dtype_name(dt),
                                    ar_error_format(&err, buf, sizeof buf));
                        ar_plan_free(plan);
                        rc = 1;
                        goto out;
                    }
                }
                ar_run_opts_t ropts = ar_cli_run_opts(o, buffer);
                ropts.breakdown = o->breakdown;
                ar_result_t res;
                memset(&res, 0, sizeof res);
                int xrc = ar_backend_run(backend, t, plan, &ropts, &res, &err);
                progress_clear(s);
                if (xrc == AR_ELIMIT && nsizes > 1) {
                    /* Larger sizes will not fit either: note it and go on. */
                    char buf[512];
                    fprintf(stderr, "%s: %s from %s on: %s\n", s->who, aname, sz,
                            ar_error_format(&err, buf, sizeof buf));
                    fflush(stderr);
                    ar_result_free(&res);
                    ar_plan_free(plan);
                    s->done += nsizes - is;
                    break;
                }
                if (xrc != AR_OK) {
                    char buf[512];
                    rc = ar_cli_fail(s->cmd, "%s on %s, %s %s, backend %s: %s", aname, spec, sz,
                                     ar_dtype_name(dt), backend, ar_error_format(&err, buf, sizeof buf));
                    if (xrc == AR_ECHECK) rc = 1;
                    ar_result_free(&res);
                    ar_plan_free(plan);
                    if (o->algo_all && xrc != AR_ENOTSUP) {
                        /* A study goes on with the other algorithms; the status says it failed. */
                        s->failed = rc;
                        rc = AR_CLI_OK;
                        s->done += nsizes - is;
                        break;
                    }
                    goto out;
                }
                const char *check = "";
                if (res.checked) check = res.check_ok ? "ok" : "FAIL";
                ar_cli_row_t row = {
                    .backend = backend, .topology = t->name[0] ? t->name : spec,
                    .model = t->model ? t->model->name : "", .algo = aname,
                    .nranks = plan->nranks, .dtype = dt, .buffer = buffer, .bytes = bytes,
                    .count = count, .channels = plan->nchannels, .chunk_bytes = o->chunks[ik],
                    .res = &res, .check = check,
                };
                ar_cli_table_row(stdout, &row, o->check);
                if (o->breakdown) ar_cli_breakdown(stdout, t, &res);
                fflush(stdout);
                if (s->csv) { ar_cli_csv_row(s->csv, &row); fflush(s->csv); }
                if (s->json) { ar_cli_json_row(s->json, &row, s->json_rows == 0); s->json_rows++; fflush(s->json); }
                s->rows++;
                s->done++;
                if (res.checked && !res.check_ok) {
                    fprintf(stderr, "%s: check failed: %s %s %s on %s: %s\n", s->who,
                            aname, sz, ar_dtype_name(dt), spec,
                            res.check_msg[0] ? res.check_msg : "output differs from the float64 reference");
                    fflush(stderr);
                    s->check_failed = 1;
                }
                ar_result_free(&res);
                ar_plan_free(plan);
            }
        }
    }
out:
    progress_clear(s);
    free(unfit);
    ar_topo_free(t);
    return rc;
}

static int run_main(const char *cmd, int argc, char **argv, int study) {
    ar_cli_opts_t o;
    int rc = ar_cli_opts_parse(cmd, argc, argv, 0, NULL, &o);
    if (rc == AR_CLI_HELP) { ar_cli_opts_free(&o); return 0; }
    if (rc) { ar_cli_opts_free(&o); return rc; }

    run_state_t s = {.cmd = cmd, .who = study ? "arsim" : "arsim run", .o = &o, .study = study};
    s.progress = !o.quiet && isatty(STDERR_FILENO);
    if (!o.backend_given && !ar_backend_find("sim"))
        fprintf(stderr, "%s: this build has no sim backend (SimGrid); using the analytic backend\n", s.who);
    for (int i = 0; i < o.nbackends; i++)
        if (o.check && !backend_checks(o.backends[i])) {
            rc = ar_cli_fail(cmd, "--check needs the ref or cuda backend (not '%s')", o.backends[i]);
            goto out;
        }
    if (o.csv && (rc = open_out(cmd, "--csv", o.csv, &s.csv))) goto out;
    if (o.json && (rc = open_out(cmd, "--json", o.json, &s.json))) goto out;
    if (s.csv) ar_cli_csv_header(s.csv);
    if (s.json) ar_cli_json_begin(s.json);
    s.total = o.nbackends * o.ntopos * o.nbuffers * o.nchannels * o.nchunks * o.ndtypes *
              o.nalgos * ar_cli_nsizes(&o);

    for (int b = 0; b < o.nbackends && !rc; b++)
        for (int t = 0; t < o.ntopos && !rc; t++) {
            if (b || t) putchar('\n');
            rc = run_topo(&s, o.backends[b], o.topos[t]);
        }
    if (!rc && s.failed) rc = s.failed;
    if (!rc && s.rows == 0) rc = ar_cli_fail(cmd, "no algorithm fits the selected topology");
    if (!rc && s.check_failed) rc = 1;
out:
    if (s.json) { ar_cli_json_end(s.json); fclose(s.json); }
    if (s.csv) fclose(s.csv);
    ar_cli_opts_free(&o);
    return rc;
}

int ar_cli_run(int argc, char **argv) { return run_main("run", argc, argv, 0); }

/* `arsim` alone: the default study. Options may follow (arsim --backend analytic). */
int ar_cli_study(int argc, char **argv) { return run_main("", argc, argv, 1); }
