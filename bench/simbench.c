/* The model backends' own speed at scale: ring and torus2d allreduce at 16 .. 16384 devices
 * (one channel, one chunk) on the sim and analytic backends, each run in a fresh process:
 * its wall time, the plan ops it simulated per wall second, and its peak memory (getrusage:
 * the largest of the run's process and the simulator's child). `make bench` runs it; the
 * table is markdown, for docs/PERFORMANCE.md, and --csv writes the rows for
 * plots/scaling.py (the scaling figure).
 *
 *   simbench [--max-ops N] [--only ring|torus2d] [--backends sim,analytic,..] [--sizes 16,64,...]
 *            [--bare PATH] [--csv FILE]
 *
 * A row whose plan would exceed --max-ops (default 40M; a ring's op count grows as
 * p^2) is skipped with the count it would have had. With --bare (bench/bare_torus, a bare
 * SimGrid program of torus2d's pattern under the sim backend's network model), a second table
 * sets each sim torus2d row beside it: wall time and peak memory per simulated communication,
 * and their ratios, both timed from their engine's start (arsim's start_s left out, the whole
 * run's ratio beside it), a short run the best of three alternating with the bare program's
 * (the CSV gets the bare program's rows as backend "bare-simgrid"). A backend named B+symmetry runs rank 0's ops
 * for every rank's (--symmetry on, docs/SIM.md "Symmetry"): its COPY/REDUCE ops are those it
 * stands for, every rank's, so that its cost per communication compares with the others'. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "arsim/arsim.h"

/* The comparison with the bare program: a run shorter than this is repeated, alternating
 * with the bare program's (itself repeated while it is as short), and the best of each kept
 * (the machines are noisy: at 4096 devices, every rank's ops, 10 s a run, the ratio of one
 * run each moved from 1.1x to 1.9x from one call to the next). */
#define REPEAT_UNDER_S 20.0
#define REPEATS 3

typedef struct row_s {
    int ok;
    double ops, data_ops;
    double open_s, build_s, sim_wall_s, start_s, total_s;
    double peak_kb;
    double time_us;
    char err[256];
} row_t;

static void spec_for(const char *algo, int n, char *buf, size_t len) {
    if (strcmp(algo, "ring") == 0) {
        snprintf(buf, len, "ring_1d:%d", n);
    } else {
        int w = (int)lround(sqrt((double)n));
        snprintf(buf, len, "torus_2d:%dx%d", w, n / w);
    }
}

/* In a child process: open, build, simulate; the row goes back through fd. */
static void measure(const char *backend_name, const char *algo, const char *spec, uint64_t bytes, int fd) {
    char backend[32];
    snprintf(backend, sizeof backend, "%s", backend_name);
    char *sym = strstr(backend, "+symmetry");
    if (sym) *sym = 0;
    row_t r;
    memset(&r, 0, sizeof r);
    ar_error_t err;
    ar_error_clear(&err);
    double t0 = ar_now_s();
    ar_topo_t *t = NULL;
    ar_plan_t *p = NULL;
    if (ar_topo_open(spec, NULL, &t, &err) != AR_OK) goto fail;
    r.open_s = ar_now_s() - t0;
    ar_algo_opts_t o = AR_ALGO_OPTS_DEFAULT;
    o.channels = 1;
    o.chunk_bytes = bytes; /* one chunk */
    o.symmetry = sym ? AR_SYMMETRY_ON : AR_SYMMETRY_OFF;
    double t1 = ar_now_s();
    if (ar_algo_build(algo, t, bytes / 2, AR_BF16, &o, &p, &err) != AR_OK) goto fail;
    r.build_s = ar_now_s() - t1;
    for (uint32_t i = 0; i < p->nops; i++)
        r.data_ops += p->ops[i].code == AR_OP_COPY || p->ops[i].code == AR_OP_REDUCE;
    if (p->only_rank >= 0) /* the communications it stands for */
        r.data_ops *= (double)p->nranks / ar_plan_kept_ranks(p);
    ar_run_opts_t ro = AR_RUN_OPTS_DEFAULT;
    ar_result_t res;
    if (ar_backend_run(backend, t, p, &ro, &res, &err) != AR_OK) goto fail;
    r.ok = 1;
    r.ops = (double)res.ops_executed;
    r.sim_wall_s = res.sim_wall_s;
    r.start_s = res.start_s;
    r.time_us = res.time_s * 1e6;
    r.total_s = ar_now_s() - t0;
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    r.peak_kb = self.ru_maxrss > kids.ru_maxrss ? self.ru_maxrss : kids.ru_maxrss;
    goto out;
fail:
    ar_error_format(&err, r.err, sizeof r.err);
out:
    if (write(fd, &r, sizeof r) != (ssize_t)sizeof r) _exit(3);
    _exit(0);
}

/* The bare SimGrid program on the same torus: its line "bare W H comms N wall_s T peak_kb M
 * simulated_us U", or 0 when it did not run. */
static int run_bare(const char *bare, const char *spec, uint64_t bytes, double *comms, double *wall, double *peak_kb,
                    double *sim_us) {
    int w, h;
    if (sscanf(spec, "torus_2d:%dx%d", &w, &h) != 2) return 0;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' %d %d %llu 2>/dev/null", bare, w, h, (unsigned long long)bytes);
    FILE *f = popen(cmd, "r");
    if (!f) return 0;
    int ok = fscanf(f, "bare %*d %*d comms %lf wall_s %lf peak_kb %lf simulated_us %lf", comms, wall, peak_kb, sim_us) == 4;
    return pclose(f) == 0 && ok;
}

/* One row, measured in a child process: 0, or -1 with r->err set (or "the run died"). */
static int run_row(const char *backend, const char *algo, const char *spec, uint64_t bytes, row_t *r) {
    memset(r, 0, sizeof *r);
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(r->err, sizeof r->err, "pipe failed");
        return -1;
    }
    fflush(NULL); /* nothing buffered for the child to write again */
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        measure(backend, algo, spec, bytes, fds[1]);
    }
    close(fds[1]);
    ssize_t got = pid > 0 ? read(fds[0], r, sizeof *r) : -1;
    close(fds[0]);
    int st = 0;
    if (pid > 0) waitpid(pid, &st, 0);
    if (got != (ssize_t)sizeof *r) snprintf(r->err, sizeof r->err, "the run died");
    return got == (ssize_t)sizeof *r && r->ok ? 0 : -1;
}

static void csv_row(FILE *f, const char *backend, const char *algo, int n, const char *spec, double ops, double wall_s,
                    double peak_kb, double sim_us) {
    if (f) fprintf(f, "%s,%s,%d,%s,%.0f,%.4f,%.1f,%.4f\n", backend, algo, n, spec, ops, wall_s, peak_kb / 1024.0, sim_us);
}

int main(int argc, char **argv) {
    double max_ops = 40e6;
    const char *only = NULL, *bare = NULL, *csv = NULL;
    struct { int n; char spec[64]; const char *backend; row_t r; double bare[4]; int bare_runs; } tor[32];
    int ntor = 0;
    int sizes[16] = {16, 64, 256, 1024, 4096, 16384}, nsizes = 6;
    const char *backends[4] = {"sim", "analytic", "sim+symmetry", "analytic+symmetry"};
    int nbackends = 4;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--max-ops") == 0 && i + 1 < argc) {
            max_ops = atof(argv[++i]);
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--bare") == 0 && i + 1 < argc) {
            bare = argv[++i];
        } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv = argv[++i];
        } else if (strcmp(argv[i], "--backends") == 0 && i + 1 < argc) {
            nbackends = 0;
            for (char *s = strtok(argv[++i], ","); s && nbackends < 4; s = strtok(NULL, ","))
                backends[nbackends++] = s;
        } else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            nsizes = 0;
            for (char *s = strtok(argv[++i], ","); s && nsizes < 16; s = strtok(NULL, ","))
                sizes[nsizes++] = atoi(s);
        } else {
            fprintf(stderr, "usage: simbench [--max-ops N] [--only ring|torus2d] [--backends sim,analytic,sim+symmetry,..] "
                            "[--sizes 16,64,..] [--bare PATH] [--csv FILE]\n");
            return 2;
        }
    }
    FILE *cf = NULL;
    if (csv) {
        if (!(cf = fopen(csv, "w"))) {
            fprintf(stderr, "simbench: cannot write %s\n", csv);
            return 2;
        }
        fprintf(cf, "backend,algo,devices,topology,ops,wall_s,peak_mb,simulated_us\n");
    }
    const char *algos[] = {"ring", "torus2d"};
    const uint64_t bytes = 1 << 20;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    printf("Model backends' speed: allreduce of 1 MiB bf16 per rank, 1 channel, 1 chunk, model accel_tcm,\n"
           "one process per row on %ld CPU%s (wall = the backend's own, peak = largest RSS).\n\n",
           ncpu, ncpu == 1 ? "" : "s");
    printf("| backend | algo | devices | topology | plan ops | COPY/REDUCE ops | wall (s) | ops / wall s "
           "| peak memory (MB) | simulated time (us) |\n");
    printf("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    fflush(stdout);
    int failed = 0;
    for (int b = 0; b < nbackends; b++)
        for (int a = 0; a < 2; a++) {
            if (only && strcmp(only, algos[a]) != 0) continue;
            double prev_ops = 0;
            int prev_n = 0;
            for (int k = 0; k < nsizes; k++) {
                int n = sizes[k];
                char spec[64];
                spec_for(algos[a], n, spec, sizeof spec);
                /* A ring's ops grow as n^2, a torus's as n^1.5: extrapolate from the last row. */
                if (prev_ops > 0) {
                    double expo = strcmp(algos[a], "ring") == 0 ? 2.0 : 1.5;
                    double est = prev_ops * pow((double)n / prev_n, expo);
                    if (est > max_ops) {
                        printf("| %s | %s | %d | %s | ~%.3g | | not run: over --max-ops %.3g | | | |\n", backends[b],
                               algos[a], n, spec, est, max_ops);
                        fflush(stdout);
                        continue;
                    }
                }
                row_t r;
                if (run_row(backends[b], algos[a], spec, bytes, &r) != 0) {
                    printf("| %s | %s | %d | %s | | | failed: %s | | | |\n", backends[b], algos[a], n, spec, r.err);
                    failed = 1;
                    continue;
                }
                printf("| %s | %s | %d | %s | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f |\n", backends[b], algos[a], n,
                       spec, r.ops, r.data_ops, r.sim_wall_s, r.ops / r.sim_wall_s, r.peak_kb / 1024.0, r.time_us);
                csv_row(cf, backends[b], algos[a], n, spec, r.data_ops, r.sim_wall_s, r.peak_kb, r.time_us);
                fflush(stdout);
                prev_ops = r.ops;
                prev_n = n;
                if (a == 1 && strncmp(backends[b], "sim", 3) == 0 && ntor < 32) {
                    tor[ntor].n = n, tor[ntor].r = r, tor[ntor].backend = backends[b], tor[ntor].bare_runs = 0;
                    snprintf(tor[ntor++].spec, sizeof tor[0].spec, "%s", spec);
                }
            }
        }
    if (bare && ntor) {
        printf("\nBeside a bare SimGrid program of the same pattern (bench/bare_torus: one actor per device,\n"
               "one communication per ring step along X then Y on a torus zone, nothing else), per simulated\n"
               "communication (arsim: its COPY/REDUCE ops). Both are timed from their engine's start to the\n"
               "end: the bare program's clock starts once its engine is constructed, arsim's once its\n"
               "simulator's process is forked and its engine set up (start, which the whole run adds).\n"
               "A run under %.0f s is repeated, alternating with the bare program, best of %d each.\n\n",
               REPEAT_UNDER_S, REPEATS);
        printf("| arsim | devices | arsim comms | bare comms | arsim wall us/comm | bare wall us/comm | time ratio "
               "| arsim start (ms) | whole-run time ratio | arsim KB/comm | bare KB/comm | memory ratio "
               "| simulated us arsim / bare |\n");
        printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (int k = 0; k < ntor; k++) {
            row_t r = tor[k].r;
            double sim_s = r.sim_wall_s - r.start_s;
            int j = 0; /* the bare program's runs are kept per size */
            while (j < k && tor[j].n != tor[k].n) j++;
            const int reps = r.sim_wall_s < REPEAT_UNDER_S ? REPEATS : 1;
            for (int i = 0; i < reps; i++) {
                /* the bare program too, while it is short */
                if (tor[j].bare_runs == 0 || (tor[j].bare_runs < reps && tor[j].bare[1] < REPEAT_UNDER_S)) {
                    double got[4];
                    if (run_bare(bare, tor[k].spec, bytes, &got[0], &got[1], &got[2], &got[3])) {
                        if (tor[j].bare_runs++ == 0) memcpy(tor[j].bare, got, sizeof got);
                        tor[j].bare[1] = fmin(tor[j].bare[1], got[1]);
                        tor[j].bare[2] = fmin(tor[j].bare[2], got[2]);
                    }
                }
                row_t again;
                if (i > 0 && run_row(tor[k].backend, "torus2d", tor[k].spec, bytes, &again) == 0) {
                    sim_s = fmin(sim_s, again.sim_wall_s - again.start_s);
                    r.sim_wall_s = fmin(r.sim_wall_s, again.sim_wall_s);
                    r.start_s = fmin(r.start_s, again.start_s);
                    r.peak_kb = fmin(r.peak_kb, again.peak_kb);
                }
            }
            if (tor[j].bare_runs == 0) {
                printf("| %s | %d | %.0f | the bare program did not run | | | | | | | | | |\n", tor[k].backend,
                       tor[k].n, r.data_ops);
                continue;
            }
            const double comms = tor[j].bare[0], wall = tor[j].bare[1], peak = tor[j].bare[2], sim_us = tor[j].bare[3];
            if (j == k)
                csv_row(cf, "bare-simgrid", "torus2d", tor[k].n, tor[k].spec, comms, wall, peak, sim_us);
            const double at = 1e6 * sim_s / r.data_ops, bt = 1e6 * wall / comms;
            const double whole = 1e6 * r.sim_wall_s / r.data_ops;
            const double am = r.peak_kb / r.data_ops, bm = peak / comms;
            printf("| %s | %d | %.0f | %.0f | %.2f | %.2f | %.2f | %.1f | %.2f | %.3f | %.3f | %.2f | %.2f / %.2f |\n",
                   tor[k].backend, tor[k].n, r.data_ops, comms, at, bt, at / bt, 1e3 * r.start_s, whole / bt, am, bm,
                   am / bm, r.time_us, sim_us);
            fflush(stdout);
        }
    }
    if (cf && fclose(cf) != 0) {
        fprintf(stderr, "simbench: writing %s failed\n", csv);
        failed = 1;
    }
    return failed;
}
