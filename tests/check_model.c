/* hardware models: the shipped files, the loader and its errors. */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arsim/arsim.h"
#include "tests/suites.h"

static ar_model_t *load(const char *name) {
    ar_model_t *m = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    int rc = ar_model_load(name, &m, &e);
    char buf[512];
    ck_assert_msg(rc == AR_OK, "%s: %s", name, ar_error_format(&e, buf, sizeof buf));
    return m;
}

static void check_sane(const ar_model_t *m) {
    ck_assert(m->clock_ghz > 0 && isfinite(m->clock_ghz));
    int present = 0;
    for (int l = 0; l < AR_NMEM; l++) {
        const ar_mem_level_t *v = &m->mem[l];
        if (!v->present) {
            ck_assert(v->capacity_bytes == 0 && v->read_gbps == 0);
            continue;
        }
        present++;
        ck_assert(v->capacity_bytes > 0 && v->read_gbps > 0 && v->write_gbps > 0 && v->lat_ns > 0);
    }
    ck_assert_int_ge(present, 1);
    ck_assert_int_ge(m->nlinks, 2);
    for (int i = 0; i < m->nlinks; i++)
        ck_assert(m->links[i].bw_gbps > 0 && m->links[i].lat_ns > 0);
    ck_assert_int_ge(ar_model_link_kind(m, "pcie5"), 0);
    double v[] = {m->reduce_gbps, m->chan_inflight_bytes, m->chan_read_lat_ns, m->chan_write_gbps,
                  m->signal_lat_ns, m->launch_ns, m->host_link_gbps, m->host_link_lat_ns};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) ck_assert(v[i] > 0 && isfinite(v[i]));
}

START_TEST(test_shipped) {
    const char *const *names = ar_model_shipped();
    int n = 0;
    for (; names[n]; n++) {
        ar_model_t *m = load(names[n]);
        ck_assert_str_eq(m->name, names[n]);
        ck_assert_ptr_nonnull(strstr(m->path, "model/"));
        check_sane(m);
        ar_model_free(m);
    }
    ck_assert_int_eq(n, 3);

    /* The GPU models are calibrations on two GPUs of their kind (arsim calibrate): they say
     * so, and their values are a Hopper GPU's (NV18 of ~18-27 GB/s a lane each way, HBM of
     * some TB/s, microsecond flags). */
    static const char *const gpus[][2] = {{"h200_sxm", "H200"}, {"h100_sxm", "H100"}};
    for (int g = 0; g < 2; g++) {
        ar_model_t *m = load(gpus[g][0]);
        ck_assert_int_eq(m->calib.gpus, 2);
        ck_assert_msg(strstr(m->calib.device, gpus[g][1]), "%s: calibrated on %s", gpus[g][0], m->calib.device);
        ck_assert(m->calib.date[0] && m->calib.driver[0]);
        ck_assert(!m->mem[AR_MEM_TCM].present);
        ck_assert(m->mem[AR_MEM_SRAM].present && m->mem[AR_MEM_HBM].present);
        ck_assert(m->mem[AR_MEM_HBM].read_gbps > 2000 && m->mem[AR_MEM_HBM].read_gbps < 5000);
        ck_assert_int_eq(ar_model_link_kind(m, "nvlink4"), 0);
        ck_assert_double_eq(m->links[0].lanes, 18);
        ck_assert(m->links[0].bw_gbps > 15 && m->links[0].bw_gbps < 27);
        ck_assert(m->signal_lat_ns > 100 && m->signal_lat_ns < 3000);
        ck_assert(m->launch_ns > 100 && m->launch_ns < 3000);
        /* Little's law: bytes in flight over the round trip */
        ck_assert_double_eq_tol(ar_model_chan_read_gbps(m), m->chan_inflight_bytes / m->chan_read_lat_ns, 1e-12);
        ck_assert(m->mem[AR_MEM_HBM].capacity_bytes > (g ? 70e9 : 130e9));
        ar_model_free(m);
    }
    ar_model_t *m;

    m = load("accel_tcm");
    for (int l = 0; l < AR_NMEM; l++) ck_assert(m->mem[l].present);
    /* tcm faster and smaller than sram, sram than hbm */
    for (int l = 0; l + 1 < AR_NMEM; l++) {
        ck_assert(m->mem[l].lat_ns < m->mem[l + 1].lat_ns);
        ck_assert(m->mem[l].read_gbps > m->mem[l + 1].read_gbps);
        ck_assert(m->mem[l].capacity_bytes < m->mem[l + 1].capacity_bytes);
    }
    ck_assert_int_eq(ar_model_link_kind(m, "mesh_link"), 0);
    ck_assert_int_eq(ar_model_link_kind(m, "nvlink4"), -1);
    ar_model_free(m);

    /* by path */
    char path[1200];
    snprintf(path, sizeof path, "%s/h100_sxm.yaml", ar_model_dir());
    m = load(path);
    ck_assert_str_eq(m->name, "h100_sxm");
    ar_model_free(m);
}
END_TEST

/* Every number in a shipped model file carries a comment saying where it comes from. */
START_TEST(test_shipped_sources) {
    regex_t num, src;
    ck_assert_int_eq(regcomp(&num, "^[^#]*:[[:space:]]*[-+0-9.][0-9.eE+-]*[[:space:]]*(#|$)",
                             REG_EXTENDED), 0);
    ck_assert_int_eq(regcomp(&src, "#.*(datasheet|measured|assumed)", REG_EXTENDED), 0);
    for (const char *const *n = ar_model_shipped(); *n; n++) {
        char path[1200], line[512];
        snprintf(path, sizeof path, "%s/%s.yaml", ar_model_dir(), *n);
        FILE *f = fopen(path, "r");
        ck_assert_ptr_nonnull(f);
        int numbers = 0, lineno = 0;
        while (fgets(line, sizeof line, f)) {
            lineno++;
            if (!strncmp(line, "calibration:", 12)) break; /* where the values came from, not values */
            if (regexec(&num, line, 0, NULL, 0) != 0) continue;
            numbers++;
            ck_assert_msg(regexec(&src, line, 0, NULL, 0) == 0, "%s:%d: number without a source: %s",
                          path, lineno, line);
        }
        fclose(f);
        ck_assert_int_ge(numbers, 20);
    }
    regfree(&num);
    regfree(&src);
}
END_TEST

START_TEST(test_load_small) {
    ar_model_t *m = load(test_path("tests/data/model_small.yaml"));
    ck_assert_str_eq(m->name, "small");
    ck_assert_double_eq(m->clock_ghz, 2);
    ck_assert_double_eq(m->mem[AR_MEM_SRAM].write_gbps, 500);
    ck_assert_double_eq(m->mem[AR_MEM_HBM].capacity_bytes, 1073741824.0);
    ck_assert_int_eq(m->nlinks, 2);
    ck_assert_int_eq(ar_model_link_kind(m, "fat"), 1);
    ck_assert_double_eq(m->links[1].lat_ns, 500);
    ck_assert_double_eq(m->host_link_lat_ns, 4000);
    ck_assert_double_eq(ar_model_chan_read_gbps(m), 2.048);
    ar_model_free(m);
}
END_TEST

/* A valid model with one line replaced. */
static const char *base_lines[] = {
    "name: t",                                                                  /* 1 */
    "clock_ghz: 1",                                                             /* 2 */
    "memory:",                                                                  /* 3 */
    "  tcm: {present: false}",                                                  /* 4 */
    "  sram: {capacity_bytes: 1e6, read_gbps: 10, write_gbps: 10, lat_ns: 5}",  /* 5 */
    "  hbm: {capacity_bytes: 1e9, read_gbps: 1, write_gbps: 1, lat_ns: 50}",    /* 6 */
    "links:",                                                                   /* 7 */
    "  - {name: wire, bw_gbps: 10, lat_ns: 100}",                               /* 8 */
    "reduce_gbps: 100",                                                         /* 9 */
    "chan_inflight_bytes: 4096",                                                /* 10 */
    "chan_read_lat_ns: 1000",                                                   /* 11 */
    "chan_write_gbps: 5",                                                       /* 12 */
    "signal_lat_ns: 500",                                                       /* 13 */
    "launch_ns: 1000",                                                          /* 14 */
    "host_link_gbps: 10",                                                       /* 15 */
    "host_link_lat_ns: 1000",                                                   /* 16 */
};
#define NBASE ((int)(sizeof base_lines / sizeof base_lines[0]))

static int load_with(int lineno, const char *repl, ar_model_t **m, ar_error_t *e) {
    static char buf[4096];
    size_t used = 0;
    for (int i = 1; i <= NBASE; i++) {
        const char *l = i == lineno ? repl : base_lines[i - 1];
        if (l) used += (size_t)snprintf(buf + used, sizeof buf - used, "%s\n", l);
    }
    ar_error_clear(e);
    return ar_model_load_string(buf, "m.yaml", m, e);
}

static void expect_err(int lineno, const char *repl, int code, int line, const char *field,
                       const char *why) {
    ar_model_t *m = (ar_model_t *)1;
    ar_error_t e;
    int rc = load_with(lineno, repl, &m, &e);
    char buf[512];
    ar_error_format(&e, buf, sizeof buf);
    ck_assert_msg(rc == code, "line %d '%s': want %s got %s: %s", lineno, repl, ar_strerror(code),
                  ar_strerror(rc), buf);
    ck_assert_ptr_null(m);
    ck_assert_str_eq(e.file, "m.yaml");
    ck_assert_msg(e.line == line, "want line %d: %s", line, buf);
    ck_assert_int_ge(e.column, 1);
    ck_assert_msg(strncmp(e.message, field, strlen(field)) == 0 && e.message[strlen(field)] == ':',
                  "want field %s: %s", field, buf);
    if (why) ck_assert_msg(strstr(e.message, why) != NULL, "want '%s': %s", why, buf);
}

START_TEST(test_load_errors) {
    ar_model_t *m;
    ar_error_t e;
    ck_assert_int_eq(load_with(0, NULL, &m, &e), AR_OK); /* the base is valid */
    ck_assert_str_eq(m->name, "t");
    ar_model_free(m);
    ck_assert_int_eq(load_with(1, NULL, &m, &e), AR_OK); /* name defaults to the label */
    ck_assert_str_eq(m->name, "m");
    /* the executor's own costs are optional: absent means none */
    ck_assert_double_eq(m->op_overhead_ns, 0);
    ck_assert_double_eq(m->wait_overhead_ns, 0);
    ck_assert_double_eq(m->host_chan_read_gbps, 0);
    ck_assert_double_eq(m->host_chan_write_gbps, 0);
    ar_model_free(m);
    ck_assert_int_eq(load_with(16, "host_link_lat_ns: 1000\nop_overhead_ns: 700\nwait_overhead_ns: 0\n"
                                   "host_chan_read_gbps: 18.5\nhost_chan_write_gbps: 0",
                               &m, &e), AR_OK);
    ck_assert_double_eq(m->op_overhead_ns, 700);
    ck_assert_double_eq(m->wait_overhead_ns, 0);
    ck_assert_double_eq(m->host_chan_read_gbps, 18.5);
    ck_assert_double_eq(m->host_chan_write_gbps, 0);
    ar_model_free(m);
    expect_err(16, "host_link_lat_ns: 1000\nop_overhead_ns: -5", AR_EMODEL, 17, "op_overhead_ns", ">= 0");
    expect_err(16, "host_link_lat_ns: 1000\nwait_overhead_ns: .inf", AR_EMODEL, 17, "wait_overhead_ns", ">= 0");
    expect_err(16, "host_link_lat_ns: 1000\nhost_chan_read_gbps: fast", AR_EPARSE, 17, "host_chan_read_gbps", NULL);

    /* unknown keys */
    expect_err(9, "reduce_gbs: 100", AR_EPARSE, 9, "reduce_gbs", "unknown key");
    expect_err(8, "  - {name: wire, bw_gbps: 10, lat_ns: 100, jitter_ns: 3}", AR_EPARSE, 8,
               "links[0].jitter_ns", "unknown key");
    expect_err(5, "  sram: {capacity_bytes: 1e6, read_gbps: 10, write_gbps: 10, lat_ns: 5, ways: 4}",
               AR_EPARSE, 5, "memory.sram.ways", "unknown key");
    expect_err(4, "  l3: {present: false}", AR_EPARSE, 4, "memory.l3", "unknown key");
    /* wrong types */
    expect_err(2, "clock_ghz: fast", AR_EPARSE, 2, "clock_ghz", "expected a number");
    expect_err(2, "clock_ghz: \"1.5\"", AR_EPARSE, 2, "clock_ghz", "string");
    expect_err(2, "clock_ghz: [1]", AR_EPARSE, 2, "clock_ghz", "scalar");
    expect_err(4, "  tcm: 4", AR_EPARSE, 4, "memory.tcm", "expected a mapping");
    expect_err(4, "  tcm: {present: maybe}", AR_EPARSE, 4, "memory.tcm.present", "true or false");
    expect_err(8, "  - [wire, 10, 100]", AR_EPARSE, 8, "links[0]", "expected a mapping, found a sequence");
    /* zero, negative, NaN, inf bandwidths and latencies */
    expect_err(8, "  - {name: wire, bw_gbps: 0, lat_ns: 100}", AR_EMODEL, 8, "links[0].bw_gbps",
               "positive finite");
    expect_err(8, "  - {name: wire, bw_gbps: -3, lat_ns: 100}", AR_EMODEL, 8, "links[0].bw_gbps",
               "-3");
    expect_err(8, "  - {name: wire, bw_gbps: .nan, lat_ns: 100}", AR_EMODEL, 8, "links[0].bw_gbps",
               NULL);
    expect_err(8, "  - {name: wire, bw_gbps: 10, lat_ns: .inf}", AR_EMODEL, 8, "links[0].lat_ns",
               NULL);
    expect_err(9, "reduce_gbps: nan", AR_EMODEL, 9, "reduce_gbps", NULL);
    expect_err(13, "signal_lat_ns: -1", AR_EMODEL, 13, "signal_lat_ns", NULL);
    expect_err(15, "host_link_gbps: 0", AR_EMODEL, 15, "host_link_gbps", NULL);
    expect_err(6, "  hbm: {capacity_bytes: 1e9, read_gbps: 0, write_gbps: 1, lat_ns: 50}", AR_EMODEL,
               6, "memory.hbm.read_gbps", NULL);
    expect_err(5, "  sram: {capacity_bytes: 1e6, read_gbps: 10, write_gbps: 10, lat_ns: -.inf}",
               AR_EMODEL, 5, "memory.sram.lat_ns", NULL);
    expect_err(2, "clock_ghz: 1e999", AR_EMODEL, 2, "clock_ghz", NULL);
    /* missing fields, duplicates, contradictions */
    expect_err(16, NULL, AR_EPARSE, 1, "host_link_lat_ns", "missing");
    expect_err(5, "  sram: {capacity_bytes: 1e6, read_gbps: 10, lat_ns: 5}", AR_EPARSE, 5,
               "memory.sram.write_gbps", "missing");
    expect_err(4, NULL, AR_EPARSE, 4, "memory.tcm", "missing");
    expect_err(8, "  - {name: wire, bw_gbps: 10, lat_ns: 100}\n  - {name: wire, bw_gbps: 1, lat_ns: 1}",
               AR_EMODEL, 9, "links[1].name", "duplicate link kind");
    expect_err(4, "  tcm: {present: false, lat_ns: 3}", AR_EPARSE, 4, "memory.tcm", NULL);
    expect_err(8, "  []", AR_EMODEL, 8, "links", "between 1 and");
    expect_err(8, NULL, AR_EPARSE, 7, "links", "expected a sequence, found a scalar");
    expect_err(10, "clock_ghz: 2", AR_EPARSE, 10, "clock_ghz", "duplicate key");
    expect_err(9, "reduce_gbps: 100\nl2_hit_bytes: 5e7\nl2_miss_bytes: 4e7", AR_EMODEL, 10, "l2_hit_bytes",
               "must not exceed l2_miss_bytes");
    expect_err(9, "reduce_gbps: 100\nl2_bw_hit_bytes: 5e7\nl2_bw_miss_bytes: 4e7", AR_EMODEL, 10, "l2_bw_hit_bytes",
               "must not exceed l2_bw_miss_bytes");
    /* a copy at twice the read rate would make a byte written free */
    expect_err(5, "  sram: {capacity_bytes: 1e6, read_gbps: 10, write_gbps: 10, copy_gbps: 20, lat_ns: 5}", AR_EMODEL, 5,
               "memory.sram.copy_gbps", "must be below twice read_gbps");
    /* an absent level is fine; no level at all is not */
    ck_assert_int_eq(load_with(6, "  hbm: {present: false}", &m, &e), AR_OK);
    ck_assert(!m->mem[AR_MEM_HBM].present);
    ck_assert(m->mem[AR_MEM_SRAM].present);
    ar_model_free(m);
    char none[2048] = "";
    for (int i = 0; i < NBASE; i++) {
        const char *l = i == 4 ? "  sram: {present: false}" : i == 5 ? "  hbm: {present: false}"
                                                                     : base_lines[i];
        strcat(none, l);
        strcat(none, "\n");
    }
    ck_assert_int_eq(ar_model_load_string(none, "m.yaml", &m, &e), AR_EMODEL);
    ck_assert_int_eq(e.line, 4);
    ck_assert_str_eq(e.message, "memory: no level is present");
}
END_TEST

START_TEST(test_load_unknown) {
    ar_model_t *m = (ar_model_t *)1;
    ar_error_t e;
    ck_assert_int_eq(ar_model_load("h999_sxm", &m, &e), AR_EMODEL);
    ck_assert_ptr_null(m);
    ck_assert_ptr_nonnull(strstr(e.message, "h999_sxm"));
    ck_assert_int_eq(ar_model_load("/nonexistent/m.yaml", &m, &e), AR_EIO);
    ck_assert_str_eq(e.file, "/nonexistent/m.yaml");
    ck_assert_int_eq(ar_model_load(test_path("tests/data/model_bad_bw.yaml"), &m, &e), AR_EMODEL);
    ck_assert_int_eq(e.line, 8);
    ck_assert_int_eq(e.column, 27);
    ck_assert_ptr_nonnull(strstr(e.file, "model_bad_bw.yaml"));
    ck_assert_int_eq(ar_model_load_string("", "e.yaml", &m, &e), AR_EPARSE);
    ck_assert_int_eq(ar_model_load_string("clock_ghz: [", "e.yaml", &m, &e), AR_EPARSE);
    ck_assert_int_eq(e.line, 2);
    ck_assert_int_eq(ar_model_load_string("- 1\n- 2\n", "e.yaml", &m, &e), AR_EPARSE);
}
END_TEST

Suite *suite_model(void) {
    Suite *s = suite_create("model");
    TCase *tc;
    tc = tcase_create("ar_model_shipped"); tcase_add_test(tc, test_shipped); suite_add_tcase(s, tc);
    tc = tcase_create("ar_model_sources"); tcase_add_test(tc, test_shipped_sources); suite_add_tcase(s, tc);
    tc = tcase_create("ar_model_load"); tcase_add_test(tc, test_load_small); suite_add_tcase(s, tc);
    tc = tcase_create("ar_model_load_errors"); tcase_add_test(tc, test_load_errors); suite_add_tcase(s, tc);
    tc = tcase_create("ar_model_load_unknown"); tcase_add_test(tc, test_load_unknown); suite_add_tcase(s, tc);
    return s;
}
