/* Limits that stop nonsense before it costs: oversized files, YAML aliases that
 * expand without bound, nesting, files that are not files, topologies and rank
 * counts beyond what arsim handles, byte counts that overflow. Each must end in
 * a clear error (a status and a message naming the limit), fast; through the
 * command line, in status 2 and one line on stderr.
 *
 * Its own Check program (fuzz/check_limits), run by `make check`. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "config.h"
#include "arsim/arsim.h"
#include "common/yamlutil.h"     /* AR__Y_MAX_FILE_BYTES */
#include "topologies/internal.h" /* AR__TOPO_MAX_NODES, AR__TOPO_MAX_RANKS */
#include "tests/suites.h"         /* tu_run_arsimv */

/* ---- helpers ---------------------------------------------------------------- */

static char tmpdir[256];

static void setup(void) {
    snprintf(tmpdir, sizeof tmpdir, "%s/arsim-limits-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", tmpdir);
}

static const char *tmp_path(const char *name) {
    static char buf[4][512];
    static int slot;
    char *b = buf[slot++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s", tmpdir, name);
    return b;
}

static void write_file(const char *path, const char *text, size_t len) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* A valid YAML document of at least `bytes` bytes: a comment block, then a topology. */
static char *big_yaml(size_t bytes) {
    const char *tail = "builder:\n  ring_1d: {n: 4}\n";
    char *s = malloc(bytes + 128);
    ck_assert_ptr_nonnull(s);
    size_t at = 0;
    while (at < bytes) {
        size_t k = bytes - at < 80 ? bytes - at : 80;
        memset(s + at, ' ', k);
        s[at] = '#';
        s[at + k - 1] = '\n';
        at += k;
    }
    strcpy(s + at, tail);
    return s;
}

/* The classic "billion laughs": 9 levels, each a sequence of 9 aliases of the
 * previous one; 9^9 (387 million) scalars once expanded, 1 KB on disk. */
static char *laughs_yaml(const char *prefix) {
    static char buf[4096];
    size_t at = (size_t)snprintf(buf, sizeof buf, "%sl0: &l0 lol\n", prefix);
    for (int i = 1; i <= 9; i++) {
        at += (size_t)snprintf(buf + at, sizeof buf - at, "l%d: &l%d [", i, i);
        for (int j = 0; j < 9; j++)
            at += (size_t)snprintf(buf + at, sizeof buf - at, "%s*l%d", j ? ", " : "", i - 1);
        at += (size_t)snprintf(buf + at, sizeof buf - at, "]\n");
    }
    return buf;
}

/* The built arsim, run with the NULL-terminated arguments: exit status, stderr. */
typedef struct cli_s {
    int status;
    char err[8192];
    size_t nout;
    double secs;
} cli_t;

static cli_t C;

static cli_t *arsim(const char *arg0, ...) {
    memset(&C, 0, sizeof C);
    tu_run_t r = {.err = C.err, .err_cap = sizeof C.err};
    va_list ap;
    va_start(ap, arg0);
    tu_run_arsimv(&r, 30, arg0, ap);
    va_end(ap);
    C.status = r.status;
    C.nout = r.nout;
    C.secs = r.secs;
    return &C;
}

/* Status 2, one line on stderr holding `what`, within `secs` seconds. */
static void expect_bad_input(const cli_t *r, const char *what, double secs) {
    ck_assert_msg(r->status == 2, "exit status %d, stderr: %s", r->status, r->err);
    size_t len = strlen(r->err);
    ck_assert_msg(len > 0 && r->err[len - 1] == '\n' && strchr(r->err, '\n') == r->err + len - 1,
                  "not one line on stderr: '%s'", r->err);
    ck_assert_msg(strncmp(r->err, "arsim", 5) == 0, "stderr: %s", r->err);
    ck_assert_msg(strstr(r->err, what) != NULL, "stderr lacks '%s': %s", what, r->err);
    ck_assert_msg(r->secs < secs, "took %.2f s (limit %.1f s): %s", r->secs, secs, r->err);
}

static void expect_err(int rc, const ar_error_t *err, int code, const char *what) {
    ck_assert_msg(rc == code, "status %d (%s), wanted %d: %s", rc, ar_strerror(rc), code,
                  err->message);
    ck_assert_int_eq(err->code, code);
    ck_assert_msg(strstr(err->message, what) != NULL, "message lacks '%s': %s", what, err->message);
}

/* ---- files beyond a sane size ------------------------------------------------ */

START_TEST(test_file_too_large) {
    /* Just over the limit: refused before parsing, from a file and from a string. */
    size_t n = (size_t)AR__Y_MAX_FILE_BYTES + 1;
    char *text = big_yaml(n);
    const char *path = tmp_path("big.yaml");
    write_file(path, text, strlen(text));
    ar_error_t err;
    ar_topo_t *t = NULL;
    ar_model_t *m = NULL;
    double t0 = ar_now_s();
    ar_error_clear(&err);
    expect_err(ar_topo_load(path, NULL, &t, &err), &err, AR_ELIMIT, "larger than");
    ck_assert_ptr_null(t);
    ck_assert_str_eq(err.file, path);
    ar_error_clear(&err);
    expect_err(ar_model_load(path, &m, &err), &err, AR_ELIMIT, "larger than");
    ck_assert_ptr_null(m);
    ar_error_clear(&err);
    expect_err(ar_topo_load_string(text, "big.yaml", NULL, &t, &err), &err, AR_ELIMIT,
               "larger than");
    ar_error_clear(&err);
    expect_err(ar_model_load_string(text, "big.yaml", &m, &err), &err, AR_ELIMIT, "larger than");
    ck_assert_msg(ar_now_s() - t0 < 1.0, "refusing took %.2f s", ar_now_s() - t0);
    /* The same document under the limit loads: the limit is on size, not content. */
    free(text);
    text = big_yaml((size_t)AR__Y_MAX_FILE_BYTES - 4096);
    ar_error_clear(&err);
    ck_assert_msg(ar_topo_load_string(text, "ok.yaml", NULL, &t, &err) == AR_OK, "%s", err.message);
    ck_assert_int_eq(t->ndevices, 4);
    ar_topo_free(t);
    free(text);
    /* Through the command line. */
    expect_bad_input(arsim("topo", "check", path, NULL), "larger than", 5);
    expect_bad_input(arsim("run", "--backend", "analytic", "--topology", path, NULL), "larger than", 5);
}
END_TEST

/* Files that are not regular files are refused, never read (a FIFO would
 * block, /dev/zero never ends). */
START_TEST(test_not_a_file) {
    ar_error_t err;
    ar_topo_t *t = NULL;
    ar_model_t *m = NULL;
    const char *fifo = tmp_path("fifo.yaml");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    const char *paths[] = {"/dev/zero", tmpdir, fifo};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        ar_error_clear(&err);
        expect_err(ar_topo_load(paths[i], NULL, &t, &err), &err, AR_EIO, "not a regular file");
        ar_error_clear(&err);
        expect_err(ar_model_load(paths[i], &m, &err), &err, AR_EIO, "not a regular file");
    }
    expect_bad_input(arsim("topo", "check", fifo, NULL), "not a regular file", 5);
    expect_bad_input(arsim("run", "--backend", "analytic", "--model", "/dev/zero", NULL),
                     "not a regular file", 5);
}
END_TEST

/* ---- YAML that expands without bound ----------------------------------------- */

START_TEST(test_billion_laughs) {
    ar_error_t err;
    ar_topo_t *t = NULL;
    ar_model_t *m = NULL;
    double t0 = ar_now_s();
    ar_error_clear(&err);
    expect_err(ar_topo_load_string(laughs_yaml(""), "laughs.yaml", NULL, &t, &err), &err,
               AR_ELIMIT, "aliases expand");
    ck_assert_ptr_null(t);
    ck_assert_str_eq(err.file, "laughs.yaml");
    ck_assert_int_gt(err.line, 1); /* points at the alias that crossed the limit */
    ar_error_clear(&err);
    expect_err(ar_model_load_string(laughs_yaml("name: x\n"), "laughs.yaml", &m, &err), &err,
               AR_ELIMIT, "aliases expand");
    ck_assert_ptr_null(m);
    ck_assert_msg(ar_now_s() - t0 < 1.0, "refusing took %.2f s", ar_now_s() - t0);

    const char *path = tmp_path("laughs.yaml");
    const char *text = laughs_yaml("");
    write_file(path, text, strlen(text));
    expect_bad_input(arsim("topo", "check", path, NULL), "aliases expand", 5);
}
END_TEST

/* Aliases as people use them (a repeated link spec) still work. */
START_TEST(test_aliases_in_bounds) {
    const char *yaml =
        "model: h200_sxm\n"
        "devices: [g0, g1, g2]\n"
        "links:\n"
        "  - &nv {a: g0, b: g1, kind: nvlink4, count: 18}\n"
        "  - {a: g1, b: g2, kind: nvlink4, count: 18}\n";
    ar_error_t err;
    ar_error_clear(&err);
    ar_topo_t *t = NULL;
    ck_assert_msg(ar_topo_load_string(yaml, "alias.yaml", NULL, &t, &err) == AR_OK, "%s",
                  err.message);
    ck_assert_int_eq(t->nlinks, 2);
    ck_assert_int_eq(t->links[0].count, 18);
    ar_topo_free(t);
}
END_TEST

START_TEST(test_deep_nesting) {
    /* 100000 nested flow sequences: refused at the depth limit, no stack overflow. */
    size_t n = 100000;
    char *s = malloc(2 * n + 16);
    ck_assert_ptr_nonnull(s);
    memcpy(s, "devices: ", 9);
    memset(s + 9, '[', n);
    memset(s + 9 + n, ']', n);
    s[9 + 2 * n] = '\0';
    ar_error_t err;
    ar_error_clear(&err);
    ar_topo_t *t = NULL;
    int rc = ar_topo_load_string(s, "deep.yaml", NULL, &t, &err);
    ck_assert_msg(rc == AR_ELIMIT || rc == AR_EPARSE, "status %d: %s", rc, err.message);
    ck_assert_msg(strstr(err.message, "deeper") || strstr(err.message, "depth") ||
                  strstr(err.message, "nest"), "%s", err.message);
    free(s);
}
END_TEST

START_TEST(test_too_many_nodes) {
    /* 300000 scalars in 600 KB, well under the size limit, over the node limit. */
    size_t n = 300000;
    char *s = malloc(3 * n + 32);
    ck_assert_ptr_nonnull(s);
    size_t at = (size_t)sprintf(s, "devices: [");
    for (size_t i = 0; i < n; i++) {
        s[at++] = 'd';
        s[at++] = ',';
    }
    s[at - 1] = ']';
    s[at] = '\0';
    ar_error_t err;
    ar_error_clear(&err);
    ar_topo_t *t = NULL;
    double t0 = ar_now_s();
    expect_err(ar_topo_load_string(s, "many.yaml", NULL, &t, &err), &err, AR_ELIMIT, "more than");
    ck_assert_msg(ar_now_s() - t0 < 2.0, "refusing took %.2f s", ar_now_s() - t0);
    free(s);
}
END_TEST

/* ---- topologies and ranks beyond what arsim handles ----------------------------- */

START_TEST(test_topology_too_big) {
    const char *specs[] = {"torus_2d:100000x100000", "mesh_2d:4096x4096", "ring_1d:1000000",
                           "full:100000", "switch:1000000", "ring_1d:99999999999999999999",
                           "torus_2d:65536x65536", "full:1024", "full:2047"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        ar_error_t err;
        ar_error_clear(&err);
        ar_topo_t *t = NULL;
        double t0 = ar_now_s();
        int rc = ar_topo_open(specs[i], NULL, &t, &err);
        ck_assert_msg(rc == AR_ELIMIT || rc == AR_EINVAL, "%s: status %d: %s", specs[i], rc,
                      err.message);
        ck_assert_msg(err.message[0], "%s: no message", specs[i]);
        ck_assert_ptr_null(t);
        ck_assert_msg(ar_now_s() - t0 < 1.0, "%s: refusing took %.2f s", specs[i], ar_now_s() - t0);
    }
    /* A YAML file listing too many devices (as a count). */
    ar_error_t err;
    ar_error_clear(&err);
    ar_topo_t *t = NULL;
    int rc = ar_topo_load_string("devices: 1000000\n", "count.yaml", NULL, &t, &err);
    ck_assert_msg(rc == AR_ELIMIT || rc == AR_ETOPO, "status %d: %s", rc, err.message);
    ck_assert_msg(strstr(err.message, "65536") != NULL, "message lacks the limit: %s", err.message);
    ck_assert_int_eq(err.line, 1);
    expect_bad_input(arsim("topo", "show", "torus_2d:100000x100000", NULL), "more than", 5);
}
END_TEST

/* The largest topology arsim accepts is still one it can open quickly: its
 * routing tables are nnodes^2, and a full graph has nnodes^2/2 links. */
START_TEST(test_largest_topology_is_cheap) {
    char spec[64];
    const char *kinds[] = {"full", "ring_1d", "switch"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        /* Find the largest N accepted by halving down from the node limit. */
        for (int n = AR__TOPO_MAX_NODES; n >= 2; n /= 2) {
            snprintf(spec, sizeof spec, "%s:%d", kinds[k], n);
            ar_error_t err;
            ar_error_clear(&err);
            ar_topo_t *t = NULL;
            double t0 = ar_now_s();
            int rc = ar_topo_open(spec, NULL, &t, &err);
            double dt = ar_now_s() - t0;
            ck_assert_msg(dt < 5.0, "%s: opening took %.1f s", spec, dt);
            if (rc == AR_OK) {
                ar_topo_free(t);
                break;
            }
            ck_assert_msg(rc == AR_ELIMIT, "%s: status %d: %s", spec, rc, err.message);
        }
    }
}
END_TEST

START_TEST(test_too_many_ranks) {
    ar_error_t err;
    ar_error_clear(&err);
    ar_topo_t *t = NULL;
    ck_assert_int_eq(ar_topo_open("ring_1d:4", NULL, &t, &err), AR_OK);
    ar_error_clear(&err);
    int rc = ar_topo_place_blocks(t, AR__TOPO_MAX_RANKS + 4, &err);
    ck_assert_msg(rc == AR_ELIMIT || rc == AR_ETOPO, "status %d: %s", rc, err.message);
    ck_assert_msg(strstr(err.message, "65536") != NULL, "message lacks the limit: %s", err.message);
    ar_topo_free(t);
    /* Placement list longer than the limit. */
    size_t n = (size_t)AR__TOPO_MAX_RANKS + 1;
    char *s = malloc(4 * n + 64);
    ck_assert_ptr_nonnull(s);
    size_t at = (size_t)sprintf(s, "devices: [a, b]\nplacement: [");
    for (size_t i = 0; i < n; i++) at += (size_t)sprintf(s + at, "a,");
    s[at - 1] = ']';
    s[at++] = '\n';
    s[at] = '\0';
    ar_error_clear(&err);
    rc = ar_topo_load_string(s, "ranks.yaml", NULL, &t, &err);
    ck_assert_msg(rc == AR_ELIMIT || rc == AR_ETOPO, "status %d: %s", rc, err.message);
    ck_assert_msg(strstr(err.message, "rank") != NULL, "%s", err.message);
    ck_assert_ptr_null(t);
    free(s);
    expect_bad_input(arsim("run", "--backend", "analytic", "--topology", "ring_1d:4", "--ranks",
                           "1048577", NULL), "--ranks", 5);
    expect_bad_input(arsim("run", "--backend", "analytic", "--topology", "ring_1d:4", "--ranks",
                           "262144", NULL), "ranks", 5);
}
END_TEST

/* More ranks (or bytes) than a backend can hold: refused before allocation, with
 * the reason, not an out-of-memory kill. The ref backend keeps every rank's
 * buffers in host memory. */
START_TEST(test_backend_capacity) {
    expect_bad_input(arsim("run", "--backend", "ref", "--topology", "full:8", "--ranks", "65536",
                           "--algo", "1stage", "--size", "1G", NULL), "ref", 10);
    expect_bad_input(arsim("run", "--backend", "ref", "--topology", "ring_1d:4", "--algo", "ring",
                           "--size", "1T", NULL), "ref", 10);
}
END_TEST

/* ---- byte counts that overflow -------------------------------------------------- */

START_TEST(test_size_overflow) {
    uint64_t b;
    ar_error_t err;
    ar_error_clear(&err);
    expect_err(ar_size_parse("17179869184G", &b, &err), &err, AR_ELIMIT, "overflows");
    ar_error_clear(&err);
    expect_err(ar_size_parse("16777216T", &b, &err), &err, AR_ELIMIT, "overflows");
    ar_error_clear(&err);
    expect_err(ar_size_parse("18446744073709551616", &b, &err), &err, AR_ELIMIT, "too large");
    ar_error_clear(&err);
    ck_assert_int_eq(ar_size_parse("16777215T", &b, &err), AR_OK);
    ck_assert_uint_eq(b, 16777215ull << 40);

    expect_bad_input(arsim("run", "--size", "17179869184G", NULL), "overflows", 5);
    expect_bad_input(arsim("run", "--count", "18446744073709551616", NULL), "too large", 5);
    /* count * dtype: 2^62 fp32 elements are 2^64 bytes. */
    expect_bad_input(arsim("run", "--backend", "analytic", "--count", "4611686018427387904",
                           "--dtype", "fp32", NULL), "too large", 5);
}
END_TEST

/* size * ranks: each rank's bytes fit 64 bits, all ranks' together do not. */
START_TEST(test_total_bytes_overflow) {
    expect_bad_input(arsim("run", "--backend", "analytic", "--topology", "ring_1d:8", "--algo",
                           "ring", "--count", "2305843009213693951", "--dtype", "fp32", NULL),
                     "bytes", 10);
    expect_bad_input(arsim("run", "--backend", "analytic", "--topology", "ring_1d:4", "--algo",
                           "ring", "--size", "16777215T", NULL), "bytes", 10);
}
END_TEST

static Suite *suite_limits(void) {
    Suite *s = suite_create("limits");
    struct { const char *name; const TTest *fn; } cases[] = {
        {"file_too_large", test_file_too_large},
        {"not_a_file", test_not_a_file},
        {"billion_laughs", test_billion_laughs},
        {"aliases_in_bounds", test_aliases_in_bounds},
        {"deep_nesting", test_deep_nesting},
        {"too_many_nodes", test_too_many_nodes},
        {"topology_too_big", test_topology_too_big},
        {"largest_topology_is_cheap", test_largest_topology_is_cheap},
        {"too_many_ranks", test_too_many_ranks},
        {"backend_capacity", test_backend_capacity},
        {"size_overflow", test_size_overflow},
        {"total_bytes_overflow", test_total_bytes_overflow},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, cases[i].fn);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(suite_limits());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
