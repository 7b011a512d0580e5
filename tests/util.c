/* Shared test helpers. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "arsim/arsim.h"
#include "tests/suites.h"

const char *test_path(const char *rel) {
    static char buf[8][1024];
    static int slot;
    char *b = buf[slot++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", ARSIM_SRCDIR, rel);
    return b;
}

/* Keep what fits of k bytes in buf (cap bytes, one kept for the NUL). */
static void keep(char *buf, size_t cap, size_t *len, const char *tmp, size_t k) {
    if (!buf || cap == 0) return;
    size_t take = k < cap - 1 - *len ? k : cap - 1 - *len;
    memcpy(buf + *len, tmp, take);
    *len += take;
}

void tu_run_arsimv(tu_run_t *r, unsigned alarm_s, const char *arg0, va_list ap) {
    const char *argv[64];
    char bin[1024];
    snprintf(bin, sizeof bin, "%s/arsim", ARSIM_BUILDDIR);
    int n = 0;
    argv[n++] = bin;
    for (const char *a = arg0; a && n < 63; a = va_arg(ap, const char *)) argv[n++] = a;
    argv[n] = NULL;

    int po[2], pe[2];
    ck_assert_int_eq(pipe(po), 0);
    ck_assert_int_eq(pipe(pe), 0);
    double t0 = ar_now_s();
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]); close(po[1]); close(pe[0]); close(pe[1]);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        alarm(alarm_s); /* never hang the suite: SIGALRM survives exec */
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    size_t no = 0, ne = 0;
    r->nout = 0;
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char tmp[4096];
            ssize_t k = read(fds[i].fd, tmp, sizeof tmp);
            if (k <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
                continue;
            }
            if (i == 0) {
                r->nout += (size_t)k;
                keep(r->out, r->out_cap, &no, tmp, (size_t)k);
            } else {
                keep(r->err, r->err_cap, &ne, tmp, (size_t)k);
            }
        }
    }
    if (r->out && r->out_cap) r->out[no] = 0;
    if (r->err && r->err_cap) r->err[ne] = 0;
    int st;
    pid_t w;
    while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR) {}
    ck_assert_int_eq(w, pid);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r->secs = ar_now_s() - t0;
}

ar_topo_t *tu_topo_open(const char *spec, const char *model) {
    ar_topo_t *t = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    int rc = ar_topo_open(spec, model, &t, &e);
    ck_assert_msg(rc == AR_OK, "%s: %s", spec, e.message);
    return t;
}

ar_plan_t *tu_plan_new(int nranks, int nch, uint64_t count) {
    ar_plan_t *p;
    ck_assert_int_eq(ar_plan_new("hand", nranks, nch, count, AR_FP32, &p), AR_OK);
    return p;
}

void tu_run_checked(const char *backend, const ar_topo_t *t, ar_plan_t *p, const ar_run_opts_t *o,
                      ar_result_t *res, double sum_rel_tol) {
    ar_error_t err;
    if (p->build) ck_assert_int_eq(ar_plan_finish(p), AR_OK);
    int rc = ar_backend_run(backend, t, p, o, res, &err);
    ck_assert_msg(rc == AR_OK, "%s: %s", backend, err.message);
    double sum = 0;
    for (int k = 0; k < AR_NTERM; k++) {
        ck_assert(res->terms_s[k] >= 0);
        sum += res->terms_s[k];
    }
    ck_assert_double_eq_tol(sum, res->time_s, sum_rel_tol * res->time_s);
}

int tu_links_carrying(const ar_result_t *r, double bytes) {
    int n = 0;
    for (int i = 0; i < r->nlinks; i++)
        if (r->links[i].bytes > 0) {
            ck_assert_double_eq_tol(r->links[i].bytes, bytes, 1e-9 * bytes);
            n++;
        }
    return n;
}
