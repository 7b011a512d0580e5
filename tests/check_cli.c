/* The arsim command, run as a user runs it: the built binary, its exit status,
 * its stdout and its stderr. Bad input must end in status 2 and exactly one
 * line on stderr naming the thing that is wrong. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/suites.h"

#define MAX_OUT (1 << 20)

typedef struct cmd_result_s {
    int status;      /* exit status, or 128 + signal */
    char out[MAX_OUT];
    char err[16384];
} cmd_result_t;

static cmd_result_t R; /* one per test process (Check forks each test) */

/* Run ARSIM_BUILDDIR/arsim with the NULL-terminated arguments; 60 s at most. */
static cmd_result_t *arsim(const char *arg0, ...) {
    tu_run_t r = {.out = R.out, .out_cap = sizeof R.out, .err = R.err, .err_cap = sizeof R.err};
    va_list ap;
    va_start(ap, arg0);
    tu_run_arsimv(&r, 60, arg0, ap);
    va_end(ap);
    R.status = r.status;
    return &R;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* Status 2, one line on stderr, naming every one of the given words. */
#define assert_bad_input(r, ...)                                                        \
    do {                                                                                \
        const char *const want_[] = {__VA_ARGS__, NULL};                                \
        ck_assert_msg((r)->status == 2, "exit status %d, want 2; stderr: %s", (r)->status, \
                      (r)->err);                                                        \
        ck_assert_msg(count_lines((r)->err) == 1 && (r)->err[strlen((r)->err) - 1] == '\n', \
                      "want exactly one line on stderr, got: [%s]", (r)->err);          \
        for (int w_ = 0; want_[w_]; w_++)                                               \
            ck_assert_msg(strstr((r)->err, want_[w_]), "stderr [%s] does not name '%s'",  \
                          (r)->err, want_[w_]);                                         \
        ck_assert_msg(!strstr((r)->err, "Segmentation") && !strstr((r)->err, "Abort"),    \
                      "crash: %s", (r)->err);                                           \
    } while (0)

/* ---- the option parser -------------------------------------------------------- */

START_TEST(test_unknown_flag) {
    cmd_result_t *r = arsim("run", "--frobnicate", NULL);
    assert_bad_input(r, "--frobnicate", "unknown option");
    r = arsim("run", "--size", NULL); /* a value missing */
    assert_bad_input(r, "--size", "needs a value");
    r = arsim("run", "stray", NULL);
    assert_bad_input(r, "stray");
    r = arsim("frobnicate", NULL);
    assert_bad_input(r, "frobnicate", "unknown command");
    r = arsim("list", "nothing", NULL);
    assert_bad_input(r, "nothing");
}
END_TEST

START_TEST(test_unknown_algo) {
    cmd_result_t *r = arsim("run", "--backend", "analytic", "--algo", "ring,nosuch", NULL);
    assert_bad_input(r, "--algo", "nosuch", "unknown algorithm");
    r = arsim("run", "--backend", "warp", NULL);
    assert_bad_input(r, "--backend", "warp");
}
END_TEST

START_TEST(test_algo_unfit) {
    /* In-network reduction needs a switch that adds; a ring of 5 has none. */
    cmd_result_t *r = arsim("run", "--backend", "analytic", "--topology", "ring_1d:5", "--algo",
                            "innet", "--size", "8K", NULL);
    assert_bad_input(r, "innet", "ring_1d:5");
    /* Per-dimension rings on a mesh without wrap-around: routed, not refused. */
    r = arsim("run", "--backend", "analytic", "--topology", "mesh_2d:3x3", "--algo", "torus2d",
              "--size", "8K", "-q", NULL);
    ck_assert_msg(r->status == 0, "exit %d: %s", r->status, r->err);
    ck_assert_ptr_nonnull(strstr(r->out, " torus2d "));
}
END_TEST

START_TEST(test_count_zero) {
    cmd_result_t *r = arsim("run", "--backend", "analytic", "--count", "0", NULL);
    assert_bad_input(r, "--count", "'0'");
    r = arsim("run", "--backend", "analytic", "--count", "-3", NULL);
    assert_bad_input(r, "--count", "-3");
    r = arsim("run", "--backend", "analytic", "--count", "12abc", NULL);
    assert_bad_input(r, "--count", "12abc");
}
END_TEST

START_TEST(test_unknown_dtype) {
    cmd_result_t *r = arsim("run", "--backend", "analytic", "--dtype", "fp8", NULL);
    assert_bad_input(r, "--dtype", "fp8");
    r = arsim("run", "--backend", "analytic", "--buffer", "l3", NULL);
    assert_bad_input(r, "--buffer", "l3");
}
END_TEST

START_TEST(test_bad_size) {
    cmd_result_t *r = arsim("run", "--backend", "analytic", "--size", "0", NULL);
    assert_bad_input(r, "--size", "'0'");
    r = arsim("run", "--backend", "analytic", "--size", "12Q", NULL);
    assert_bad_input(r, "--size", "12Q");
    r = arsim("run", "--backend", "analytic", "--size", "banana", NULL);
    assert_bad_input(r, "--size", "banana");
    r = arsim("run", "--backend", "analytic", "--size", "99999999999999999999999", NULL);
    assert_bad_input(r, "--size", "99999999999999999999999");
    r = arsim("run", "--backend", "analytic", "--size", "17179869184G", NULL); /* 2^64 bytes */
    assert_bad_input(r, "--size", "17179869184G");
    r = arsim("run", "--backend", "analytic", "--size", "1M:8K", NULL);
    assert_bad_input(r, "--size", "1M:8K");
    r = arsim("run", "--backend", "analytic", "--chunk", "0", NULL);
    assert_bad_input(r, "--chunk", "'0'");
    r = arsim("run", "--backend", "analytic", "--channels", "0", NULL);
    assert_bad_input(r, "--channels", "'0'");
    r = arsim("run", "--backend", "analytic", "--iters", "x", NULL);
    assert_bad_input(r, "--iters", "'x'");
}
END_TEST

/* ---- topologies ---------------------------------------------------------------- */

START_TEST(test_unreadable_topology) {
    const char *path = "/nonexistent-dir/no-such-topology.yaml";
    cmd_result_t *r = arsim("run", "--backend", "analytic", "--topology", path, NULL);
    assert_bad_input(r, path);
    r = arsim("topo", "check", path, NULL);
    assert_bad_input(r, path);
    /* A directory is not a readable topology file either. */
    r = arsim("topo", "check", "/", NULL);
    ck_assert_int_eq(r->status, 2);
    ck_assert_int_eq(count_lines(r->err), 1);
}
END_TEST

/* Bad topology files, one per kind of mistake: status 2, one line naming the file,
 * the line and column of the mistake, and the field. Written here, so that the
 * expected line is next to the text. */
static const struct {
    const char *name;
    const char *text;
    int line;            /* of the mistake; 0: any */
    const char *what;    /* the field or value the message must name */
    const char *in;      /* the message names this file (default: name) */
} bad_topos[] = {
    {"unknown_key.yaml", "model: accel_tcm\ndevices: 2\ncolour: blue\nlinks:\n  - {a: d0, b: d1}\n",
     3, "colour", NULL},
    {"wrong_type.yaml", "model: accel_tcm\ndevices: 2\nlinks: 7\n", 3, "links", NULL},
    {"nan_bw.yaml", "model: ./nan_model.yaml\ndevices: 2\nlinks:\n  - {a: d0, b: d1}\n",
     4, "bw_gbps", "nan_model.yaml"},
    {"neg_bw.yaml", "model: ./neg_model.yaml\ndevices: 2\nlinks:\n  - {a: d0, b: d1}\n",
     4, "bw_gbps", "neg_model.yaml"},
    {"zero_bw.yaml", "model: ./zero_model.yaml\ndevices: 2\nlinks:\n  - {a: d0, b: d1}\n",
     4, "bw_gbps", "zero_model.yaml"},
    {"link_kind.yaml", "model: accel_tcm\ndevices: 2\nlinks:\n  - {a: d0, b: d1, kind: warp_drive}\n",
     4, "warp_drive", NULL},
    {"disconnected.yaml", "model: accel_tcm\ndevices: [a, b, c]\nlinks:\n  - {a: a, b: b}\n",
     0, "disconnected", NULL},
    {"duplicate.yaml", "model: accel_tcm\ndevices: [a, b, a]\nlinks:\n  - {a: a, b: b}\n",
     2, "duplicate", NULL},
    {"placement.yaml",
     "model: accel_tcm\ndevices: [a, b]\nlinks:\n  - {a: a, b: b}\nranks: 2\nplacement: [a, c]\n",
     6, "placement", NULL},
};

/* A model with one link bandwidth (line 4 holds it). */
static void write_model(const char *dir, const char *name, const char *bw) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "name: %s\nclock_ghz: 1\nmemory:\n  tcm: {present: false}\n"
            "  sram: {present: false}\n"
            "  hbm: {capacity_bytes: 1073741824, read_gbps: 100, write_gbps: 100, lat_ns: 100}\n"
            "links:\n  - {name: wire, bw_gbps: %s, lat_ns: 1000}\n"
            "reduce_gbps: 200\nchan_inflight_bytes: 4096\nchan_read_lat_ns: 2000\n"
            "chan_write_gbps: 5\nsignal_lat_ns: 700\nlaunch_ns: 3000\nhost_link_gbps: 8\n"
            "host_link_lat_ns: 4000\n", name, bw);
    fclose(f);
}

START_TEST(test_bad_topology_file) {
    char dir[] = "/tmp/arsim-topo-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    write_model(dir, "nan_model.yaml", "nan");
    write_model(dir, "neg_model.yaml", "-5");
    write_model(dir, "zero_model.yaml", "0");
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, bad_topos[_i].name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(bad_topos[_i].text, f);
    fclose(f);
    const char *named = bad_topos[_i].in ? bad_topos[_i].in : bad_topos[_i].name;
    int want_line = bad_topos[_i].line;
    if (bad_topos[_i].in) want_line = 8; /* the model's bw_gbps line */

    for (int via_run = 0; via_run < 2; via_run++) {
        cmd_result_t *r = via_run
            ? arsim("run", "--backend", "analytic", "--topology", path, "--algo", "ring", "--size",
                    "8K", NULL)
            : arsim("topo", "check", path, NULL);
        assert_bad_input(r, named, bad_topos[_i].what);
        /* "...FILE:LINE:COL: ..." */
        const char *p = strstr(r->err, named);
        int line = 0, col = 0;
        ck_assert_msg(sscanf(p + strlen(named), ":%d:%d:", &line, &col) == 2 && line > 0 && col > 0,
                      "no line:column in [%s]", r->err);
        if (want_line) ck_assert_msg(line == want_line, "line %d, want %d: %s", line, want_line, r->err);
    }
    const char *files[] = {"nan_model.yaml", "neg_model.yaml", "zero_model.yaml", bad_topos[_i].name};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}
END_TEST

/* The bad files the topology module keeps in tests/data. */
START_TEST(test_bad_topology_data) {
    /* file, and the file the message must name (the model file it refers to is the bad one) */
    const char *files[][2] = {{"topo_disconnected.yaml", "topo_disconnected.yaml"},
                              {"topo_bad_model.yaml", "model_bad_bw.yaml"}};
    for (int i = 0; i < 2; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "tests/data/%s", files[i][0]);
        cmd_result_t *r = arsim("topo", "check", test_path(rel), NULL);
        assert_bad_input(r, files[i][1]);
    }
}
END_TEST

START_TEST(test_grid_side_zero) {
    cmd_result_t *r = arsim("topo", "check", "torus_2d:0x3", NULL);
    assert_bad_input(r, "torus_2d:0x3");
    r = arsim("run", "--backend", "analytic", "--topology", "mesh_2d:3x0", NULL);
    assert_bad_input(r, "mesh_2d:3x0");
    r = arsim("topo", "show", "ring_1d:0", NULL);
    assert_bad_input(r, "ring_1d:0");
    /* --ranks not a multiple of the devices. */
    r = arsim("run", "--backend", "analytic", "--topology", "ring_1d:4", "--ranks", "6", NULL);
    assert_bad_input(r, "--ranks");
}
END_TEST

START_TEST(test_topo_show_check) {
    cmd_result_t *r = arsim("topo", "show", "torus_2d:2x3", NULL);
    ck_assert_msg(r->status == 0, "%s", r->err);
    ck_assert_ptr_nonnull(strstr(r->out, "devices   6"));
    ck_assert_ptr_nonnull(strstr(r->out, "ranks     6"));
    ck_assert_ptr_nonnull(strstr(r->out, "2 wide x 3 high"));
    /* A 2x3 torus: farthest devices are 1 + 1 hops apart. */
    ck_assert_ptr_nonnull(strstr(r->out, "diameter  2 hops"));
    r = arsim("topo", "show", "ring_1d:8", NULL);
    ck_assert_int_eq(r->status, 0);
    ck_assert_ptr_nonnull(strstr(r->out, "diameter  4 hops"));
    r = arsim("topo", "check", "torus_2d:4x4", NULL);
    ck_assert_msg(r->status == 0, "%s", r->err);
    ck_assert_ptr_nonnull(strstr(r->out, "ok (16 devices"));
    /* Several ranks per device. */
    r = arsim("topo", "show", "ring_1d:4", "--ranks", "8", NULL);
    ck_assert_msg(r->status == 0, "%s", r->err);
    ck_assert_ptr_nonnull(strstr(r->out, "ranks     8"));
}
END_TEST

/* ---- good runs ---------------------------------------------------------------- */

START_TEST(test_table_shape) {
    cmd_result_t *r = arsim("run", "--backend", "analytic", "--topology", "ring_1d:4", "--algo",
                            "ring", "--size", "8K:32K", NULL);
    ck_assert_msg(r->status == 0, "exit %d: %s", r->status, r->err);
    /* The header names topology, model, backend and buffer, then the columns. */
    ck_assert_ptr_nonnull(strstr(r->out, "# topology "));
    ck_assert_ptr_nonnull(strstr(r->out, "backend analytic"));
    ck_assert_ptr_nonnull(strstr(r->out, "buffer hbm"));
    ck_assert_ptr_nonnull(strstr(r->out, "# model "));
    char *save = NULL, *line;
    int rows = 0, header = 0;
    unsigned long long want_bytes[] = {8192, 16384, 32768};
    for (line = strtok_r(r->out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#') {
            /* nccl-tests' names, in its order, arsim's own between root and time */
            char a[14][32];
            if (sscanf(line, "#%31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s", a[0], a[1],
                       a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13]) == 14 &&
                strcmp(a[0], "size") == 0) {
                const char *want[14] = {"size", "count", "type", "redop", "root", "algo", "chan",
                                        "chunk", "time", "algbw", "busbw", "#wrong", "bound", "eff"};
                for (int i = 0; i < 14; i++) ck_assert_str_eq(a[i], want[i]);
                header = 1;
            }
            continue;
        }
        unsigned long long bytes, count;
        char type[16], algo[32], redop[8], chunk[16], wrong[8], extra[8];
        int root, chan;
        double t_us, algbw, busbw, bound_us, eff;
        int nf = sscanf(line, "%llu %llu %15s %7s %d %31s %d %15s %lf %lf %lf %7s %lf %lf %7s", &bytes, &count, type,
                        redop, &root, algo, &chan, chunk, &t_us, &algbw, &busbw, wrong, &bound_us, &eff, extra);
        ck_assert_msg(nf == 14, "row [%s] has %d fields, want 14", line, nf);
        /* the bound is below the time, and eff is their ratio in percent: printed to 0.1
         * (0.05 of rounding) beside a ratio of two figures each rounded to 0.005 */
        ck_assert(bound_us > 0 && bound_us <= t_us);
        ck_assert_double_eq_tol(eff, 100.0 * bound_us / t_us, 0.05 + eff * (0.005 / bound_us + 0.005 / t_us) + 1e-9);
        ck_assert_int_lt(rows, 3);
        ck_assert_uint_eq(bytes, want_bytes[rows]);
        ck_assert_uint_eq(count, bytes / 2);
        ck_assert_str_eq(type, "bf16");
        ck_assert_str_eq(redop, "sum");
        ck_assert_int_eq(root, -1);  /* ring has no root */
        ck_assert_str_eq(algo, "ring");
        ck_assert_int_ge(chan, 1);
        ck_assert_str_ne(chunk, "0"); /* the value the plan used, never "default" */
        ck_assert_str_eq(wrong, "N/A"); /* no check ran */
        ck_assert(t_us > 0);
        /* algbw = bytes / time (GB/s = 1e9 B/s), busbw = algbw * 2(p-1)/p, p = 4. */
        ck_assert_double_eq_tol(algbw, bytes / (t_us * 1e-6) / 1e9, 0.01 + algbw * 1e-3);
        ck_assert_double_eq_tol(busbw, algbw * 1.5, 0.01 + busbw * 1e-3);
        rows++;
    }
    ck_assert_msg(header, "no column header");
    ck_assert_int_eq(rows, 3);
}
END_TEST

START_TEST(test_check_pass) {
    /* Every algorithm that fits a ring of 5 (odd, prime), an element count with a tail. */
    cmd_result_t *r = arsim("run", "--backend", "ref", "--topology", "ring_1d:5", "--algo", "all",
                            "--count", "1001", "--dtype", "fp16", "--check", "--verify", NULL);
    ck_assert_msg(r->status == 0, "exit %d: %s", r->status, r->err);
    int rows = 0;
    char *save = NULL;
    for (char *line = strtok_r(r->out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#') continue;
        char wrong[16] = "";
        unsigned long long bytes, count;
        char type[16], redop[8], algo[32], chunk[16];
        int root, chan;
        double t, a, b;
        ck_assert_int_eq(sscanf(line, "%llu %llu %15s %7s %d %31s %d %15s %lf %lf %lf %15s", &bytes, &count, type,
                                redop, &root, algo, &chan, chunk, &t, &a, &b, wrong), 12);
        ck_assert_uint_eq(count, 1001);
        ck_assert_str_eq(wrong, "0");
        /* center_root names its root: the centre of a ring of 5 is every rank, the lowest wins */
        ck_assert_int_eq(root, strcmp(algo, "center_root") == 0 ? 0 : -1);
        rows++;
    }
    ck_assert_int_ge(rows, 1);
    /* --check on a backend that cannot check is a usage error. */
    r = arsim("run", "--backend", "analytic", "--check", "--size", "8K", NULL);
    assert_bad_input(r, "--check", "analytic");
}
END_TEST

START_TEST(test_csv_json) {
    char dir[] = "/tmp/arsim-cli-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char csv[128], json[128];
    snprintf(csv, sizeof csv, "%s/out.csv", dir);
    snprintf(json, sizeof json, "%s/out.json", dir);
    cmd_result_t *r = arsim("run", "--backend", "analytic", "--topology", "ring_1d:4", "--algo", "ring",
                            "--size", "8K,1M", "--csv", csv, "--json", json, "--breakdown", NULL);
    ck_assert_msg(r->status == 0, "exit %d: %s", r->status, r->err);
    ck_assert_ptr_nonnull(strstr(r->out, "critical path by term"));
    FILE *f = fopen(csv, "r");
    ck_assert_ptr_nonnull(f);
    char line[2048];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line,
        "backend,topology,model,nranks,op,gemm,algo,dtype,redop,root,buffer,bytes,count,channels,chunk_bytes,"
        "time_us,algbw_gbps,busbw_gbps,wrong,bound_us,efficiency,link_us,memory_us,reduce_us,sync_us,launch_us,"
        "compute_us,cycles,check,links_detected,sim_wall_s\n");
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        int commas = 0;
        for (char *p = line; *p; p++) commas += *p == ',';
        ck_assert_int_eq(commas, 30);
        ck_assert_ptr_nonnull(strstr(line, "analytic,"));
        ck_assert_ptr_nonnull(strstr(line, ",4,allreduce,,ring,bf16,sum,-1,hbm,"));
        rows++;
    }
    fclose(f);
    ck_assert_int_eq(rows, 2);
    f = fopen(json, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(R.out, 1, sizeof R.out - 1, f);
    R.out[n] = 0;
    fclose(f);
    ck_assert_int_eq(R.out[0], '[');
    ck_assert_ptr_nonnull(strstr(R.out, "\"bytes\": 1048576"));
    ck_assert_ptr_nonnull(strstr(R.out, "\"op\": \"allreduce\", \"gemm\": null, \"algo\": \"ring\""));
    ck_assert_ptr_nonnull(strstr(R.out, "\"busbw_gbps\": "));
    unlink(csv);
    unlink(json);
    rmdir(dir);
    /* An unwritable output file. */
    r = arsim("run", "--backend", "analytic", "--topology", "ring_1d:4", "--csv",
              "/nonexistent-dir/x.csv", NULL);
    assert_bad_input(r, "--csv", "/nonexistent-dir/x.csv");
}
END_TEST

START_TEST(test_list_help_version) {
    cmd_result_t *r = arsim("list", "algos", NULL);
    ck_assert_int_eq(r->status, 0);
    const char *names[] = {"ring", "torus2d", "mesh2d", "1stage", "2stage", "center_root", "naive"};
    for (int i = 0; i < 7; i++) ck_assert_msg(strstr(r->out, names[i]), "list algos lacks %s", names[i]);
    ck_assert_msg(strstr(r->out, "\nring         -         ar,rs,ag  "), "list algos: ring's ops:\n%s", r->out);
    ck_assert_msg(!strstr(r->out, "null"), "list algos prints a missing name:\n%s", r->out);
    r = arsim("list", "backends", NULL);
    ck_assert_int_eq(r->status, 0);
    ck_assert_ptr_nonnull(strstr(r->out, "ref"));
    ck_assert_ptr_nonnull(strstr(r->out, "analytic"));
    r = arsim("list", "topologies", NULL);
    ck_assert_int_eq(r->status, 0);
    ck_assert_ptr_nonnull(strstr(r->out, "torus_2d_4x4"));
    r = arsim("list", "models", NULL);
    ck_assert_int_eq(r->status, 0);
    ck_assert_ptr_nonnull(strstr(r->out, "h100_sxm"));
    r = arsim("--version", NULL);
    ck_assert_int_eq(r->status, 0);
    ck_assert_ptr_nonnull(strstr(r->out, "arsim "));
    r = arsim("--help", NULL);
    ck_assert_int_eq(r->status, 0);
    ck_assert_ptr_nonnull(strstr(r->out, "usage: arsim"));
    r = arsim("run", "--help", NULL);
    ck_assert_int_eq(r->status, 0);
    ck_assert_ptr_nonnull(strstr(r->out, "--topology"));
}
END_TEST

START_TEST(test_study_fallback_skips_unfit) {
    /* The default study's machinery on a small case: every algorithm, unfit ones named
     * on stderr, the others in the table. */
    cmd_result_t *r = arsim("--backend", "analytic", "--topology", "ring_1d:5", "--size", "8K",
                            "-q", NULL);
    ck_assert_msg(r->status == 0, "exit %d: %s", r->status, r->err);
    ck_assert_ptr_nonnull(strstr(r->out, "# default study"));
    ck_assert_ptr_nonnull(strstr(r->err, "innet does not fit"));
    ck_assert_ptr_nonnull(strstr(r->out, " ring "));
    ck_assert_ptr_nonnull(strstr(r->out, " 1stage ")); /* its peers reached through the ring */
}
END_TEST

START_TEST(test_all_goes_on_past_limit) {
    /* --algo all: an algorithm over a limit (1stage's scratch, 32 x 1 GB, past the model's
     * 32 GiB) is named with the limit on stderr, and the algorithms after it still run. */
    cmd_result_t *r = arsim("run", "--backend", "analytic", "--topology", "ring_1d:32", "--size", "1G", "--channels",
                            "1", "--chunk", "64M", "-q", NULL);
    ck_assert_msg(r->status == 0, "exit %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, "1stage on ring_1d:32 from 1G on: hbm of d0: needs 34 GiB"), "%s", r->err);
    ck_assert_ptr_null(strstr(r->out, " 1stage "));
    ck_assert_ptr_nonnull(strstr(r->out, " 2stage "));
    ck_assert_ptr_nonnull(strstr(r->out, " naive "));
}
END_TEST

START_TEST(test_defaults_searched_note) {
    /* Defaults found where the plans are smallest (one piece a lane) are said so on stderr,
     * with what asks for others; not under -q, nor where the channels are asked. */
    cmd_result_t *r = arsim("run", "--backend", "analytic", "--topology", "torus_2d:16x16", "--algo", "torus2d",
                            "--size", "64M", NULL);
    ck_assert_msg(r->status == 0, "exit %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, "torus2d at 67108864 B: its channels were searched at one piece a lane") &&
                      strstr(r->err, "--channels and --chunk ask for others"),
                  "%s", r->err);
    r = arsim("run", "--backend", "analytic", "--topology", "torus_2d:16x16", "--algo", "torus2d", "--size", "64M", "-q",
              NULL);
    ck_assert_msg(r->status == 0 && !r->err[0], "exit %d, stderr under -q: %s", r->status, r->err);
    r = arsim("run", "--backend", "analytic", "--topology", "torus_2d:16x16", "--algo", "torus2d", "--size", "64M",
              "--channels", "4", NULL);
    ck_assert_msg(r->status == 0 && !strstr(r->err, "searched"), "exit %d: %s", r->status, r->err);
}
END_TEST

Suite *suite_cli(void) {
    Suite *s = suite_create("cli");
    struct { const char *name; const TTest *t; } cases[] = {
        {"unknown_flag", test_unknown_flag},
        {"unknown_algo", test_unknown_algo},
        {"algo_unfit", test_algo_unfit},
        {"all_goes_on_past_limit", test_all_goes_on_past_limit},
        {"defaults_searched_note", test_defaults_searched_note},
        {"count_zero", test_count_zero},
        {"unknown_dtype", test_unknown_dtype},
        {"bad_size", test_bad_size},
        {"unreadable_topology", test_unreadable_topology},
        {"grid_side_zero", test_grid_side_zero},
        {"topo_show_check", test_topo_show_check},
        {"table_shape", test_table_shape},
        {"check_pass", test_check_pass},
        {"csv_json", test_csv_json},
        {"list_help_version", test_list_help_version},
        {"study", test_study_fallback_skips_unfit},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, cases[i].t);
        suite_add_tcase(s, tc);
    }
    TCase *tc = tcase_create("bad_topology_data");
    tcase_add_test(tc, test_bad_topology_data);
    suite_add_tcase(s, tc);
    tc = tcase_create("bad_topology_file");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_bad_topology_file, 0, (int)(sizeof bad_topos / sizeof bad_topos[0]));
    suite_add_tcase(s, tc);
    return s;
}
