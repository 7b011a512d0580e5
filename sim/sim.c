/* The sim backend: SimGrid timing with contention (see engine.cpp for the model).
 *
 * SimGrid holds one engine per process, configured once and never torn down, so
 * every execution runs in a child process: the child builds the platform, runs
 * the plan and sends the result back through a pipe; the parent never touches
 * SimGrid. A fork costs about a millisecond, and a crash or abort inside SimGrid
 * becomes an error here instead of taking the caller down. ARSIM_SIM_NOFORK=1 runs
 * in this process instead (once per process; for debuggers). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "backends/internal.h"
#include "sim/internal.h"
#include "arsim/util.h"

/* All n bytes through read or write (io), across short transfers and signals. */
static int xfer_all(ssize_t (*io)(int, void *, size_t), int fd, void *buf, size_t n) {
    char *p = buf;
    while (n > 0) {
        ssize_t k = io(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}
static ssize_t write_io(int fd, void *buf, size_t n) { return write(fd, buf, n); }
static int write_all(int fd, const void *buf, size_t n) { return xfer_all(write_io, fd, (void *)buf, n); }
static int read_all(int fd, void *buf, size_t n) { return xfer_all(read, fd, buf, n); }

/* What the child sends: status, error, result, then nlinks link stats. */
typedef struct reply_s {
    int rc;
    ar_error_t err;
    ar_result_t res;
} reply_t;

/* The child's progress goes to the stderr it was started with, not SimGrid's log file:
 * fd 2 points there while the caller's callback writes. */
typedef struct child_progress_s {
    const ar_run_opts_t *caller;
    int err_fd, log_fd;
} child_progress_t;

static void child_progress(void *ctx, double sim_s, uint64_t ops, uint64_t total_ops, double wall_s) {
    const child_progress_t *cp = ctx;
    fflush(stderr);
    dup2(cp->err_fd, 2);
    cp->caller->progress(cp->caller->progress_ctx, sim_s, ops, total_ops, wall_s);
    fflush(stderr);
    dup2(cp->log_fd, 2);
}

static void child(int fd, const ar_topo_t *t, const ar_plan_t *p, const ar_run_opts_t *o) {
    reply_t rep;
    memset(&rep, 0, sizeof rep);
    rep.rc = ar__sim_engine_run(t, p, o, &rep.res, &rep.err);
    ar_link_stat_t *links = rep.res.links;
    if (rep.rc != AR_OK) rep.res.nlinks = 0;
    rep.res.links = NULL;
    int bad = write_all(fd, &rep, sizeof rep) ||
              (rep.res.nlinks > 0 &&
               write_all(fd, links, (size_t)rep.res.nlinks * sizeof *links));
    close(fd);
    /* _exit: nothing of SimGrid's to tear down, no stdio buffers of the parent's. */
    _exit(bad ? 3 : 0);
}

/* The last line SimGrid wrote (into the child's stderr file), for an error. */
static void last_line(FILE *f, char *buf, size_t len) {
    buf[0] = 0;
    if (!f) return;
    char line[512];
    rewind(f);
    while (fgets(line, sizeof line, f))
        if (line[0] != '\n') {
            size_t n = strlen(line) < len - 1 ? strlen(line) : len - 1;
            memcpy(buf, line, n);
            buf[n] = 0;
        }
    size_t n = strlen(buf);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = 0;
}

int ar__sim_trace(void) {
    const char *v = getenv("ARSIM_SIM_TRACE");
    return v && strcmp(v, "1") == 0;
}

static int run_forked(const ar_topo_t *t, const ar_plan_t *p, const ar_run_opts_t *o,
                      ar_result_t *res, ar_error_t *err) {
    int fds[2];
    if (pipe(fds) != 0) return AR_ERR(err, AR_EIO, "sim: pipe: %s", strerror(errno));
    /* SimGrid's own messages (a deadlock it detects, an assertion) go to a file the
     * parent reads only when the child fails; a deadlock is reported here with its
     * rank, channel and op instead. A trace's lines go to the user's stderr. */
    FILE *log = ar__sim_trace() ? NULL : tmpfile();
    fflush(NULL);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        if (log) fclose(log);
        return AR_ERR(err, AR_ENOMEM, "sim: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        /* A simulation goes with the process that waits for it (a sweep's worker stopped
         * on SIGINT, a run killed): nobody would read what it finds. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        close(fds[0]);
        ar_run_opts_t co = *o;
        child_progress_t cp = {o, o->progress && log ? dup(2) : -1, log ? fileno(log) : -1};
        if (log) dup2(fileno(log), 2);
        if (cp.err_fd >= 0 && cp.log_fd >= 0) co.progress = child_progress, co.progress_ctx = &cp;
        else co.progress = NULL;
        child(fds[1], t, p, &co);
    }
    close(fds[1]);
    reply_t rep;
    int rc = AR_OK;
    int got = read_all(fds[0], &rep, sizeof rep) == 0;
    ar_link_stat_t *links = NULL;
    if (got && rep.rc == AR_OK && rep.res.nlinks > 0) {
        links = calloc((size_t)rep.res.nlinks, sizeof *links);
        if (!links || read_all(fds[0], links, (size_t)rep.res.nlinks * sizeof *links) != 0)
            got = 0;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!got) {
        free(links);
        char why[200];
        last_line(log, why, sizeof why);
        if (log) fclose(log);
        if (WIFSIGNALED(status))
            return AR_ERR(err, AR_EINVAL, "sim: the simulator died (signal %d: %s)%s%s",
                          WTERMSIG(status), strsignal(WTERMSIG(status)), why[0] ? ": " : "", why);
        return AR_ERR(err, AR_EINVAL, "sim: the simulator exited (status %d) without a result%s%s",
                      WIFEXITED(status) ? WEXITSTATUS(status) : -1, why[0] ? ": " : "", why);
    }
    if (log) fclose(log);
    if (rep.rc != AR_OK) {
        if (err) *err = rep.err;
        return rep.rc;
    }
    *res = rep.res;
    res->links = links;
    return rc;
}

static int sim_execute(ar_backend_t *be, const ar_plan_t *p, const ar_run_opts_t *opts,
                       ar_result_t *res, ar_error_t *err) {
    double t0 = ar_now_s();
    const ar_topo_t *t = be->topo;
    ar_run_opts_t def = AR_RUN_OPTS_DEFAULT;
    if (!opts) opts = &def;
    memset(res, 0, sizeof *res);
    AR_TRY(ar__backend_check_plan(p, t, err));
    if ((unsigned)opts->buffer >= AR_NMEM)
        return AR_ERR(err, AR_EINVAL, "sim: no such memory level %d", (int)opts->buffer);
    AR_TRY(ar_cost_check_capacity(t, p, opts->buffer, err));
    int rc;
    const char *nofork = getenv("ARSIM_SIM_NOFORK");
    if (nofork && strcmp(nofork, "1") == 0) rc = ar__sim_engine_run(t, p, opts, res, err);
    else rc = run_forked(t, p, opts, res, err);
    res->sim_wall_s = ar_now_s() - t0;
    /* The engine gave the moment it was ready on the monotonic clock, which the child shares. */
    res->start_s = res->start_s > t0 ? res->start_s - t0 : 0;
    return rc;
}

int ar__sim_guard_pages(long actors) {
    long max_maps = 65530;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f) {
        if (fscanf(f, "%ld", &max_maps) != 1) max_maps = 65530;
        fclose(f);
    }
    return 2 * actors + 8192 <= max_maps; /* two mappings an actor, and room for the rest */
}

/* Beside the plan, which the child shares with its parent: SimGrid itself, and per channel
 * a host, a link, a mailbox and an actor (about 16 KB measured, plus its whole stack where it
 * has no guard page), per flag its state, per SIGNAL its arrival. */
static double sim_run_bytes(const ar_topo_t *t, const ar_plan_size_t *s) {
    /* an actor, its host and stack per channel with ops; a channel's state for every one */
    const double chans = (double)s->run_chans, busy = (double)s->busy_chans;
    const double per_actor = 16384.0 + (ar__sim_guard_pages((long)busy) ? 0 : AR__SIM_STACK_KIB * 1024.0);
    return 8e6 + 2048.0 * t->nlinks + 256.0 * chans + busy * per_actor + 64.0 * (double)s->flag_slots +
           16.0 * (double)s->signals;
}

const ar_backend_ops_t ar_sim_backend = {
    .name = "sim", .caps = AR_BACKEND_MODEL | AR_BACKEND_CONTENTION, .fits = ar__backend_model_fits,
    .admits = ar__backend_model_admits, .execute = sim_execute,
    .run_bytes = sim_run_bytes,
    .summary = "SimGrid: links, memory levels and channels as shared resources (contention)",
};
