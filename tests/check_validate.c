/* validate/: the CSV reader, reference files, measured rows, statistics, the
 * calibration -> model writer, and the calibrate / validate commands' refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests/suites.h"
#include "validate/bench.h"
#include "validate/internal.h"

static const char *HDR = "source,system,topology,algorithm,dtype,bytes,buffer_kind,latency_us,provenance\n";

static char *tmpfile_with(const char *text) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/arsim-check-validate-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* ---- bench's rows: nccl-tests' columns, and nothing where nothing was measured ---- */

/* ar_bench_csv_row's line for r (free it). */
static char *bench_csv_row(const ar_bench_row_t *r) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ar_bench_csv_row(f, r);
    fclose(f);
    return buf;
}

START_TEST(bench_rows_format) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    const ar_bench_row_t r = {.bytes = 8192, .count = 4096, .dtype = AR_BF16, .algo = "auto:1stage/2", .channels = 2,
                              .chunk_bytes = 4096, .root = -1, .nranks = 2, .ngpus = 2, .time_s = 5e-6, .wrong = -1,
                              .nccl_s = NAN, .device = "GPU", .links_detected = "NV18"};
    ar_bench_csv_header(f);
    ar_bench_csv_row(f, &r);
    ar_bench_row_t r2 = r;
    r2.wrong = 0;
    r2.nccl_s = 1e-5;
    ar_bench_csv_row(f, &r2);
    ar_bench_table_header(f);
    ar_bench_table_row(f, &r);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "size_bytes,count,dtype,redop,root,algo,channels,chunk_bytes,"));
    ck_assert_ptr_nonnull(strstr(buf, "8192,4096,bf16,sum,-1,auto:1stage/2,2,4096,2,2,5.0000,1.638,1.638,,,,,GPU,NV18,allreduce,\n"));
    ck_assert_ptr_nonnull(strstr(buf, "8192,4096,bf16,sum,-1,auto:1stage/2,2,4096,2,2,5.0000,1.638,1.638,0,10.0000,0.819,2.0000,GPU,NV18,allreduce,\n"));
    ck_assert_ptr_nonnull(strstr(buf, "redop"));
    ck_assert_ptr_nonnull(strstr(buf, "#wrong"));
    ck_assert_ptr_nonnull(strstr(buf, "  N/A"));
    free(buf);
    /* an all-gather: no reduction, busbw (p-1)/p */
    ar_bench_row_t r3 = r;
    r3.coll = AR_COLL_ALLGATHER;
    buf = bench_csv_row(&r3);
    ck_assert_str_eq(buf, "8192,4096,bf16,none,-1,auto:1stage/2,2,4096,2,2,5.0000,1.638,0.819,,,,,GPU,NV18,allgather,\n");
    free(buf);
    /* a fused op: its product and partitions, as run's gemm column */
    ar_bench_row_t r4 = r;
    r4.coll = AR_COLL_MATMUL_ALLREDUCE;
    r4.gemm = (ar_gemm_t){2, 2048, 1024};
    r4.partitions = 2;
    buf = bench_csv_row(&r4);
    ck_assert_msg(strstr(buf, ",GPU,NV18,matmul-allreduce,2x2048x1024/2\n"), "%s", buf);
    free(buf);
}
END_TEST

/* ---- ar_csv_load_string ---- */

START_TEST(csv_fields_quotes_comments) {
    ar_csv_t *c = NULL;
    ar_error_t err;
    ar_error_clear(&err);
    const char *text = "# a comment\n"
                       "a,b,c\n"
                       "\n"
                       "1, two ,\"x, \"\"y\"\"\"\n"
                       "  # indented comment\n"
                       "4,,6\r\n";
    ck_assert_int_eq(ar_csv_load_string(text, "t.csv", &c, &err), AR_OK);
    ck_assert_int_eq(c->ncols, 3);
    ck_assert_int_eq(c->nrows, 2);
    ck_assert_str_eq(c->rows[0][1], "two");
    ck_assert_str_eq(c->rows[0][2], "x, \"y\"");
    ck_assert_int_eq(c->lines[0], 4);
    ck_assert_int_eq(c->cols[0][2], 9);
    ck_assert_str_eq(c->rows[1][1], "");
    ck_assert_str_eq(c->rows[1][2], "6");
    ck_assert_int_eq(c->lines[1], 6);
    ck_assert_int_eq(ar_csv_col(c, "c"), 2);
    ck_assert_int_eq(ar_csv_col(c, "d"), -1);
    ar_csv_free(c);
}
END_TEST

START_TEST(csv_errors_have_line_and_column) {
    ar_csv_t *c = NULL;
    ar_error_t err;
    char buf[512];
    ar_error_clear(&err);
    ck_assert_int_eq(ar_csv_load_string("a,b\n1,2\n3,4,5\n", "x.csv", &c, &err), AR_EPARSE);
    ck_assert_ptr_null(c);
    ar_error_format(&err, buf, sizeof buf);
    ck_assert_str_eq(buf, "x.csv:3:5: 3 fields, the header has 2");
    ar_error_clear(&err);
    ck_assert_int_eq(ar_csv_load_string("a,b\n1,\"open\n", "y.csv", &c, &err), AR_EPARSE);
    ar_error_format(&err, buf, sizeof buf);
    ck_assert_str_eq(buf, "y.csv:2:3: unterminated quoted field");
    ar_error_clear(&err);
    ck_assert_int_eq(ar_csv_load_string("# only a comment\n", "z.csv", &c, &err), AR_EPARSE);
    ck_assert_str_eq(err.message, "no header line");
    ar_error_clear(&err);
    ck_assert_int_eq(ar_csv_load_string("a,a\n", "d.csv", &c, &err), AR_EPARSE);
    ck_assert_str_eq(err.message, "header: column 'a' appears twice");
    ar_error_clear(&err);
    ck_assert_int_eq(ar_csv_load("/nonexistent/refs.csv", &c, &err), AR_EIO);
    ck_assert_str_eq(err.file, "/nonexistent/refs.csv");
}
END_TEST

/* ---- ar_validate_refs_load_string ---- */

START_TEST(refs_good_rows_and_unknowns) {
    ar_refs_t refs = {0};
    ar_error_t err;
    ar_error_clear(&err);
    char text[1024];
    snprintf(text, sizeof text, "%s%s%s", HDR,
             "A,sys,h100_pair,2stage,bf16,67108864,hbm,21610,\"seed, row 1\"\n",
             "B,sys,single_device,,,,,366,p\n");
    ck_assert_int_eq(ar_validate_refs_load_string(text, "r.csv", &refs, &err), AR_OK);
    ck_assert_int_eq(refs.n, 2);
    ck_assert_str_eq(refs.rows[0].algorithm, "2stage");
    ck_assert_int_eq(refs.rows[0].has_dtype, 1);
    ck_assert_int_eq(refs.rows[0].dtype, AR_BF16);
    ck_assert_uint_eq(refs.rows[0].bytes, 67108864u);
    ck_assert_int_eq(refs.rows[0].buffer, AR_MEM_HBM);
    ck_assert_double_eq(refs.rows[0].latency_us, 21610);
    ck_assert_str_eq(refs.rows[0].provenance, "seed, row 1");
    ck_assert_int_eq(refs.rows[0].line, 2);
    ck_assert_int_eq(refs.rows[1].has_dtype, 0);
    ck_assert_int_eq(refs.rows[1].has_buffer, 0);
    ck_assert_uint_eq(refs.rows[1].bytes, 0);
    ck_assert_str_eq(refs.rows[1].algorithm, "");
    ar_validate_refs_free(&refs);
}
END_TEST

START_TEST(refs_bad_rows_name_file_line_col_field) {
    static const struct { const char *row, *want; } cases[] = {
        {"A,s,t,ring,bf17,8,hbm,1,p\n", "r.csv:2:12: dtype: unknown dtype 'bf17' (bf16, fp16, fp32)"},
        {"A,s,t,ring,bf16,-8,hbm,1,p\n", "r.csv:2:17: bytes: '-8' is not a positive whole number of bytes"},
        {"A,s,t,ring,bf16,0,hbm,1,p\n", "r.csv:2:17: bytes: '0' is not a positive whole number of bytes"},
        {"A,s,t,ring,bf16,8,dram,1,p\n", "r.csv:2:19: buffer_kind: unknown buffer kind 'dram' (tcm, sram, hbm)"},
        {"A,s,t,ring,bf16,8,hbm,nan,p\n", "r.csv:2:23: latency_us: 'nan' is not a positive finite number of us"},
        {"A,s,t,ring,bf16,8,hbm,0,p\n", "r.csv:2:23: latency_us: '0' is not a positive finite number of us"},
        {"A,s,t,ring,bf16,8,hbm,12us,p\n", "r.csv:2:23: latency_us: '12us' is not a positive finite number of us"},
        {"A,s,t,ring,bf16,8,hbm,1,\n", "r.csv:2:25: provenance: required, but empty"},
        {",s,t,ring,bf16,8,hbm,1,p\n", "r.csv:2:1: source: required, but empty"},
        {"A,s,t,ring,bf16,8,hbm,1\n", "r.csv:2:24: 8 fields, the header has 9"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ar_refs_t refs = {0};
        ar_error_t err;
        ar_error_clear(&err);
        char text[512], buf[512];
        snprintf(text, sizeof text, "%s%s", HDR, cases[i].row);
        ck_assert_int_eq(ar_validate_refs_load_string(text, "r.csv", &refs, &err), AR_EPARSE);
        ck_assert_str_eq(ar_error_format(&err, buf, sizeof buf), cases[i].want);
        ar_validate_refs_free(&refs);
    }
    /* Header problems. */
    ar_refs_t refs = {0};
    ar_error_t err;
    ar_error_clear(&err);
    ck_assert_int_eq(ar_validate_refs_load_string("source,system\nA,B\n", "h.csv", &refs, &err), AR_EPARSE);
    ck_assert_ptr_nonnull(strstr(err.message, "column 'topology' is missing"));
    ar_error_clear(&err);
    ck_assert_int_eq(ar_validate_refs_load_string(
                         "source,system,topology,algorithm,dtype,bytes,buffer_kind,latency_us,provenance,extra\n",
                         "h.csv", &refs, &err), AR_EPARSE);
    ck_assert_str_eq(err.message, "header: unknown column 'extra'");
    ar_validate_refs_free(&refs);
}
END_TEST

/* ---- ar_validate_refs_load_dir: the shipped reference files ---- */

START_TEST(refs_shipped_values) {
    ar_refs_t refs = {0};
    ar_error_t err;
    ar_error_clear(&err);
    ck_assert_int_eq(ar_validate_refs_load_dir(test_path("validate/refs"), &refs, &err), AR_OK);
    int fsim = 0, h100 = 0;
    double sum_h100 = 0;
    for (int i = 0; i < refs.n; i++) {
        const ar_ref_t *r = &refs.rows[i];
        ck_assert(r->provenance[0]);
        if (!strcmp(r->source, "FSIM")) {
            fsim++;
            ck_assert_double_eq(r->latency_us, 366);
            ck_assert_str_eq(r->topology, "single_device");
            ck_assert_uint_eq(r->bytes, 0); /* the source gives no size */
        }
        if (!strcmp(r->topology, "h100_pair")) {
            h100++;
            sum_h100 += r->latency_us;
            /* 3.1 GB/s = bytes / latency with MB = MiB (seeds/000) */
            double gbps = r->bytes / (r->latency_us * 1e-6) / 1e9;
            ck_assert(gbps > 3.10 && gbps < 3.11);
        }
    }
    ck_assert_int_eq(fsim, 1);
    ck_assert_int_eq(h100, 6);
    ck_assert_double_eq_tol(sum_h100, 21610 + 43220 + 86400 + 172770 + 86390 + 86410, 1e-6);
    ar_validate_refs_free(&refs);
    ar_error_clear(&err);
    ck_assert_int_eq(ar_validate_refs_load_dir("/nonexistent-dir", &refs, &err), AR_EIO);
}
END_TEST

/* ---- ar_validate_rows_load ---- */

START_TEST(rows_sweep_csv) {
    const char *text =
        "# device: 2 x TestGPU\n# date: 2026-01-01T00:00:00Z\n"
        "backend,topology,model,nranks,algo,dtype,buffer,bytes,count,channels,chunk_bytes,time_us,"
        "algbw_gbps,busbw_gbps,link_us,memory_us,reduce_us,sync_us,launch_us,cycles,check,sim_wall_s\n"
        "cuda,h200_pair,h200_sxm,2,ring,bf16,hbm,8192,4096,1,0,5.25,1,1,0,0,0,0,0,0,ok,0\n"
        "nccl,h200_pair,h200_sxm,2,nccl,bf16,hbm,8192,4096,0,0,10.3,1,1,0,0,0,0,0,0,,0\n";
    char *p = tmpfile_with(text);
    ar_vrows_t rows = {0};
    ar_error_t err;
    ar_error_clear(&err);
    ck_assert_int_eq(ar_validate_rows_load(p, &rows, &err), AR_OK);
    ck_assert_int_eq(rows.n, 2);
    ck_assert_str_eq(rows.rows[0].algo, "ring");
    ck_assert_double_eq(rows.rows[0].time_us, 5.25);
    ck_assert_uint_eq(rows.rows[0].count, 4096);
    ck_assert_str_eq(rows.rows[1].backend, "nccl");
    ck_assert_str_eq(rows.device, "2 x TestGPU");
    ck_assert_str_eq(rows.date, "2026-01-01T00:00:00Z");
    ar_validate_rows_free(&rows);
    unlink(p);
    p = tmpfile_with("backend,topology,model,nranks,algo,dtype,buffer,bytes,count,channels,chunk_bytes,time_us,check\n"
                     "cuda,t,m,2,ring,bf16,hbm,8192,4096,1,0,-3,ok\n");
    ar_error_clear(&err);
    ck_assert_int_eq(ar_validate_rows_load(p, &rows, &err), AR_EPARSE);
    ck_assert_int_eq(err.line, 2);
    ck_assert_str_eq(err.message, "time_us: '-3' is not a positive time in us");
    ar_validate_rows_free(&rows);
    unlink(p);
}
END_TEST

/* ---- ar_validate_median ---- */

START_TEST(median_values) {
    double a[] = {5, 1, 3}, b[] = {4, 1, 3, 2};
    ck_assert_double_eq(ar_validate_median(a, 3), 3);
    ck_assert_double_eq(ar_validate_median(b, 4), 2.5);
    ck_assert_double_eq(ar_validate_median(a, 0), 0);
    ck_assert_double_eq(ar_validate_err_pct(100, 105), 5);
    ck_assert_double_eq(ar_validate_err_pct(100, 90), -10);
}
END_TEST

/* Writes c as a model file at path (ar_validate_calib_write) and loads it back. */
static ar_model_t *calib_reload(const char *path, const ar_calib_t *c, const ar_calib_fit_t *fit) {
    ar_error_t err;
    ar_error_clear(&err);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(ar_validate_calib_write(f, c, fit, &err), AR_OK);
    fclose(f);
    ar_model_t *m = NULL;
    ck_assert_msg(ar_model_load(path, &m, &err) == AR_OK, "%s", err.message);
    return m;
}

/* ---- ar_validate_calib_write ---- */

static ar_calib_t fake_calib(void) {
    ar_calib_t c;
    memset(&c, 0, sizeof c);
    snprintf(c.device, sizeof c.device, "TestGPU (GPU 0) + TestGPU (GPU 1)");
    snprintf(c.date, sizeof c.date, "2026-01-01T00:00:00Z");
    c.threads = 512; c.unroll = 1; c.nsm = 132;
    c.clock_ghz = 1.98; c.hbm_capacity_bytes = 150e9; c.l2_bytes = 52428800;
    c.flag_rtt_ns = 2400; c.flag_oneway_ns = 1200; c.flag_local_oneway_ns = 700;
    c.launch_stream_ns = 2500; c.launch_graph_ns = 600; c.launch_graph_wide_ns = 900;
    c.launch_graph_pdl_ns = 650; c.launch_graph_pdl_1_ns = 640; c.launch_graph_pdl_wide_ns = 950;
    c.npoints = 2; c.blocks[0] = 1; c.blocks[1] = 8;
    c.peer_read_gbps[0] = 7.5; c.peer_read_gbps[1] = 60;
    c.peer_write_gbps[0] = 20; c.peer_write_gbps[1] = 160;
    c.peer_read_block_gbps = 7.5; c.peer_write_block_gbps = 20;
    c.peer_read_bidir_gbps = 330; c.peer_write_bidir_gbps = 366;
    c.peer_read_lat_ns = 1100; c.local_read_lat_ns = 600; c.l2_read_lat_ns = 200; c.host_read_lat_ns = 1800;
    c.hbm_read_gbps = 4300; c.hbm_write_gbps = 4100; c.hbm_copy_gbps = 4000; c.l2_read_gbps = 9000;
    c.reduce_block_gbps_bf16 = 60; c.xor_block_gbps_bf16 = 60; c.reduce_extra_gbps_bf16 = 0;
    c.host_read_gbps = 40; c.host_write_gbps = 50;
    c.host_read_block_gbps = 17.5; c.host_write_block_gbps = 30.5;
    c.exec_done = 1; c.exec_n_lo = 2; c.exec_n_hi = 34; c.exec_op_bytes = 16;
    c.exec_chain_us[0] = 4; c.exec_chain_us[1] = 4 + 32 * 1.4;
    c.exec_sigs_us[0] = 3; c.exec_sigs_us[1] = 7; c.exec_waits_us[0] = 3.5; c.exec_waits_us[1] = 40;
    c.exec_op_ns = 1400; c.exec_wait_ns = (40.0 - 7.0) * 1e3 / 33;
    c.land_done = 1; c.land_bytes[0] = 65536; c.land_bytes[1] = 1048576;
    c.land_us[0] = 8; c.land_us[1] = 8 + 983040 / 12e3; /* 12 GB/s */
    c.land_gbps = 12;
    c.exec_rsigs_us[0] = 3.5; c.exec_rsigs_us[1] = 3.5 + 32 * 0.9;
    c.local_done = 1; c.local_bytes[0] = 1 << 20; c.local_bytes[1] = 8 << 20;
    c.local_reduce_us[0] = 40; c.local_reduce_us[1] = 40 + 2 * 7340032 / 50e3; /* 50 GB/s of loads */
    c.local_fp32_done = 1; c.local_fp32_us[0] = 30; c.local_fp32_us[1] = 30 + 2 * 7340032 / 65e3; /* fp32: 65 */
    c.local_copy_us[0] = 20; c.local_copy_us[1] = 20 + 7340032 / 48e3;
    c.local_read_gbps = 50; c.local_copy_read_gbps = 48; c.local_read_fp32_gbps = 65;
    c.cold_done = 1; c.cold_bytes[0] = 64 << 20; c.cold_bytes[1] = 256 << 20;
    c.cold_reduce_us[0] = 3000; c.cold_reduce_us[1] = 3000 + 2 * 201326592 / 40e3; /* 40 GB/s from HBM */
    c.cold_read_gbps = 40;
    /* 24 channels at 32 GB/s each: 23 x 1.5 x 40 / (40 / 32 - 1) = 5520 GB/s of demand */
    c.crowd_done = 1; c.crowd_alone = 1; c.crowd_channels = 24; c.crowd_read_gbps = 32;
    c.crowd_reduce_us[0] = 100; c.crowd_reduce_us[1] = 100 + 2 * 201326592 / 24 / 32e3;
    c.crowd_gbps = ar_calib_crowd_gbps(1, 40, 24, 32);
    return c;
}

/* c written by calibrate's writer under the model name `name` to a fresh file (its path into
 * path, for the caller to unlink), and loaded back. */
static ar_model_t *written_model(const ar_calib_t *c, const char *name, char path[64]) {
    snprintf(path, 64, "/tmp/arsim-check-calib-XXXXXX.yaml");
    int fd = mkstemps(path, 5);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ar_error_t err;
    ar_error_clear(&err);
    ar_calib_fit_t fit = {name, NULL, 18, 0, NULL};
    ck_assert_int_eq(ar_validate_calib_write(f, c, &fit, &err), AR_OK);
    fclose(f);
    ar_model_t *m = NULL;
    char buf[600];
    const int rc = ar_model_load(path, &m, &err);
    ck_assert_msg(rc == AR_OK, "%s", ar_error_format(&err, buf, sizeof buf));
    return m;
}

START_TEST(calib_write_loads_as_model) {
    ar_calib_t c = fake_calib();
    char path[64];
    ar_model_t *m = written_model(&c, "h200_test", path);
    ar_error_t err;
    ar_error_clear(&err);
    ar_calib_fit_t fit = {"h200_test", NULL, 18, 0, NULL};
    FILE *f;
    ck_assert_str_eq(m->name, "h200_test");
    int k = ar_model_link_kind(m, "nvlink4");
    ck_assert_int_ge(k, 0);
    ck_assert_double_eq_tol(m->links[k].bw_gbps, 366.0 / 18, 1e-3); /* pushes */
    ck_assert_double_eq_tol(m->links[k].pull_gbps, 330.0 / 18, 1e-3); /* pulls */
    ck_assert_double_eq_tol(m->links[k].lat_ns, 500, 1e-9);         /* 1100 - 600 */
    ck_assert_double_eq_tol(m->chan_inflight_bytes, 7.5 * 1100, 1); /* Little's law */
    ck_assert_double_eq_tol(m->chan_read_lat_ns, 1100, 1e-9);
    ck_assert_double_eq_tol(m->chan_write_gbps, 20, 1e-9);
    ck_assert_double_eq_tol(m->signal_lat_ns, 1200, 1e-9);
    ck_assert_double_eq_tol(m->signal_lat_local_ns, 700, 1e-9);
    ck_assert_double_eq_tol(m->launch_ns, 650, 1e-9);
    ck_assert_double_eq_tol(m->launch_block_ns, (950 - 640) / 131.0, 0.01); /* 132 blocks vs 1 */
    ck_assert_double_eq_tol(m->reduce_gbps, 100000, 1e-9);         /* additions hidden */
    ck_assert_double_eq_tol(m->mem[AR_MEM_HBM].read_gbps, 4300, 1e-9);
    ck_assert_double_eq_tol(m->mem[AR_MEM_HBM].lat_ns, 600, 1e-9);
    ck_assert_double_eq_tol(m->host_link_gbps, 40, 1e-9);
    ck_assert_int_eq(m->mem[AR_MEM_TCM].present, 0);
    /* the executor's own costs: chain slope minus what a 16-byte local op already costs */
    ck_assert_double_eq_tol(m->op_overhead_ns, 1400 - (600 + 16 * (1 / 4300.0 + 1 / 4100.0)), 1);
    ck_assert_double_eq_tol(m->wait_overhead_ns, (40.0 - 7.0) * 1e3 / 33, 1);
    ck_assert_double_eq_tol(m->host_chan_read_gbps, 17.5, 1e-9);
    ck_assert_double_eq_tol(m->host_chan_write_gbps, 30.5, 1e-9);
    ck_assert_double_eq_tol(m->signal_release_ns, (7.0 - 3.0) * 1e3 / 32, 1); /* x-sigs slope */
    ck_assert_double_eq_tol(m->chan_write_land_gbps, 12, 0.01);             /* x-storesig */
    ck_assert_double_eq_tol(m->signal_release_remote_ns, 900, 1);          /* x-rsigs slope */
    ck_assert_double_eq_tol(m->chan_local_read_gbps, 50, 0.05);             /* x-reduce */
    ck_assert_double_eq_tol(m->chan_local_read_fp32_gbps, 65, 0.05);        /* x-reduce of fp32 */
    ck_assert_double_eq_tol(m->chan_local_read_cold_gbps, 40, 0.05);        /* x-reduce beyond the L2 */
    ck_assert_double_eq_tol(m->chan_cold_crowd_gbps, 5520, 0.5);           /* ... on 24 channels */
    ck_assert_double_eq_tol(m->cold_lat_ns, 0, 1e-9); /* no chase beyond L2: no key */
    ar_model_free(m);
    /* Every value line names where it came from. */
    f = fopen(path, "r");
    char line[512];
    int values = 0, sourced = 0;
    while (fgets(line, sizeof line, f)) {
        const char *p = line + strspn(line, " ");
        if (!strncmp(line, "calibration:", 12)) break; /* where, when and what was assumed: below */
        if (*p == '#' || !strchr(line, ':') || strstr(line, "name:") || strstr(line, "description:") ||
            line[strlen(line) - 2] == ':')
            continue;
        values++;
        sourced += strstr(line, "# measured:") || strstr(line, "# assumed:");
    }
    fclose(f);
    ck_assert_int_gt(values, 15);
    ck_assert_int_eq(values, sourced);
    /* The calibration block reads back: where, and the keys no benchmark measured. */
    ck_assert_int_eq(ar_model_load(path, &m, &err), AR_OK);
    ck_assert_int_eq(m->calib.gpus, 2);
    ck_assert_str_eq(m->calib.device, "TestGPU (GPU 0) + TestGPU (GPU 1)");
    ck_assert_str_eq(m->calib.date, "2026-01-01T00:00:00Z");
    int nk;
    const ar_model_key_t *keys = ar_model_keys(&nk);
    const int ki_write = (int)(ar_model_key_find("write_gbps") - keys);
    const int ki_read = (int)(ar_model_key_find("read_gbps") - keys);
    const int ki_clock = (int)(ar_model_key_find("clock_ghz") - keys);
    ck_assert(m->calib.assumed[ki_write] >> AR_MEM_SRAM & 1);  /* "assumed: same as the measured L2 read" */
    ck_assert(!(m->calib.assumed[ki_read] >> AR_MEM_HBM & 1)); /* measured */
    ck_assert(!(m->calib.assumed[ki_clock] & 1));
    ar_model_free(m);
    unlink(path);

    /* A benchmark that produced nothing writes no model. */
    c.peer_read_block_gbps = 0;
    f = fopen("/dev/null", "w");
    ar_error_clear(&err);
    ck_assert_int_eq(ar_validate_calib_write(f, &c, &fit, &err), AR_EMODEL);
    fclose(f);
    /* The link rule. */
    c = fake_calib();
    fit.link_from = "write";
    char mp[] = "/tmp/arsim-check-calib2-XXXXXX.yaml";
    int fd = mkstemps(mp, 5);
    f = fdopen(fd, "w");
    ck_assert_int_eq(ar_validate_calib_write(f, &c, &fit, &err), AR_OK);
    fclose(f);
    ck_assert_int_eq(ar_model_load(mp, &m, &err), AR_OK);
    ck_assert_double_eq_tol(m->links[ar_model_link_kind(m, "nvlink4")].bw_gbps, 366.0 / 18, 1e-3);
    ck_assert_double_eq_tol(m->links[ar_model_link_kind(m, "nvlink4")].pull_gbps, 0, 1e-9); /* one ceiling */
    ar_model_free(m);
    /* With x-rings (the executor's own hops), the signal latencies are its hops less
     * wait_overhead_ns (1000 ns here), not the ping-pong's. */
    c.rings_done = 1;
    c.rings_us[0][0] = 5; c.rings_us[0][1] = 5 + 32 * 1.6; /* 1600 ns per hop across */
    c.rings_us[1][0] = 5; c.rings_us[1][1] = 5 + 32 * 1.5; /* (1600 + 1400) / 2 */
    c.ring_hop_ns[0] = 1600; c.ring_hop_ns[1] = 1400;
    c.rings_channels = 24; c.ring_chan_hop_ns = 1600 + 100 * log2(24.0); /* 100 ns x log2(24) longer */
    c.group_done = 1; c.group_srcs = 5; c.group_us[0] = 4; c.group_us[1] = 4 + 32 * (1.4 + 2 * 0.55);
    c.group_ns = 550; /* (slope 2500 ns - x-chain 1400 ns) / 2 */
    c.issue_done = 1; c.issue_us[0] = 300; c.issue_us[1] = 300 + 2 * 201.326592 / 0.5; /* 500 GB/s */
    c.issue_gbps = 500;
    c.hostpair_done = 1; c.hostpair_us[0] = 100; c.hostpair_us[1] = 100 + 2 * 7.340032 / 0.022; /* 22 GB/s */
    c.hostpair_gbps = 22;
    fit.link_from = NULL;
    m = calib_reload(mp, &c, &fit);
    ck_assert_double_eq_tol(m->signal_lat_ns, 600, 0.5);
    ck_assert_double_eq_tol(m->signal_lat_local_ns, 400, 0.5);
    ck_assert_double_eq_tol(m->signal_release_chan_ns, 100, 0.5);
    ck_assert_double_eq_tol(m->reduce_group_ns, 550, 0.5);
    ck_assert_double_eq_tol(m->link_issue_gbps, 500, 0.05);
    ck_assert_double_eq_tol(m->host_chan_read_pair_gbps, 22, 0.05);
    ck_assert_double_eq_tol(m->signal_fence_ns, 0, 1e-9);
    ck_assert_double_eq_tol(m->signal_together_ns, 0, 1e-9);
    ck_assert_double_eq_tol(m->chan_local_read_push_gbps, 0, 1e-9);
    ck_assert_double_eq_tol(m->op_misalign_ns, 0, 1e-9);
    const double host_bench = m->host_link_gbps;
    ar_model_free(m);
    /* With x-spairs (a local COPY and a SIGNAL: 1400 + 300 ns per pair) the fence is
     * 300 ns and the hops are that much shorter. */
    c.fence_done = 1; c.fence_us[0] = 4; c.fence_us[1] = 4 + 32 * 1.7;
    c.fence_ns = 300;
    c.push_done = 1; c.push_us[0] = 50; c.push_us[1] = 50 + 2 * 7.340032 / 0.044; /* 44 GB/s */
    c.push_gbps = 44;
    c.misalign_done = 1; c.misalign_us[0][0] = 7; c.misalign_us[0][1] = 7 + 32 * 2.5; /* x-pairs */
    c.misalign_us[1][0] = 7.5; c.misalign_us[1][1] = 7.5 + 32 * 2.8;                /* 300 ns more */
    c.misalign_ns = 300;
    /* x-fanN: 7 more SIGNALs in each round's run, 190 ns each over x-spairsN */
    c.together_done = 1; c.together_us[0] = 4.5; c.together_us[1] = 4.5 + 32 * (1.7 + 7 * 0.19);
    c.together_ns = 190;
    /* the executor's host loads on many channels set the host link, not the host benchmark's */
    c.hostlink_done = 1; c.hostlink_per_device = 2; c.hostlink_gbps = host_bench + 3.5;
    c.hostlink_us[0] = 10; c.hostlink_us[1] = 10 + 4 * 50.331648 / (host_bench + 3.5);
    m = calib_reload(mp, &c, &fit);
    ck_assert_double_eq_tol(m->host_link_gbps, host_bench + 3.5, 0.05);
    ck_assert_double_eq_tol(m->signal_together_ns, 190, 0.5);
    ck_assert_double_eq_tol(m->signal_fence_ns, 300, 0.5);
    ck_assert_double_eq_tol(m->signal_lat_ns, 300, 0.5);
    ck_assert_double_eq_tol(m->signal_lat_local_ns, 100, 0.5);
    ck_assert_double_eq_tol(m->chan_local_read_push_gbps, 44, 0.05);
    ck_assert_double_eq_tol(m->op_misalign_ns, 300, 0.5);
    ck_assert_double_eq_tol(m->reduce_group_ns, 550, 0.5);
    ck_assert_double_eq_tol(m->reduce_op_ns, 0, 1e-9);
    ar_model_free(m);
    /* With the 3-source chain as well (1400 + 200 + 450 ns per op: a COPY, the REDUCE's own
     * 200, one further group of 450), the group is the two chains' difference and the
     * REDUCE's own cost what is left over the COPY. */
    c.group_us[1] = 4 + 32 * (1.4 + 0.2 + 2 * 0.45);
    c.group_ns = 450;
    c.red3_done = 1; c.red3_us[0] = 3; c.red3_us[1] = 3 + 32 * (1.4 + 0.2 + 0.45);
    c.reduce_op_ns = 200;
    c.cold_read_lat_ns = 1000; /* beyond L2, against 600 within it */
    /* The L2-reach curve (footprint / L2 0.1 .. 2.0): 100 ns to 0.3, 300 from 1.15 on, between
     * rising with a plateau at 250 (the far partition's hits). 5% of the 200 ns span: the
     * last point at or under 110 ns is 0.30, the first from which all are at least 290 is 1.15. */
    c.l2_reach_n = AR_CALIB_L2_REACH_POINTS;
    for (int i = 0; i < c.l2_reach_n; i++) {
        const double x = 0.1 + 0.05 * i;
        c.l2_reach_frac[i] = x;
        c.l2_reach_ns[i] = x <= 0.301 ? 100 + 20 * x : x < 0.5 ? 200 : x < 0.95 ? 250 : x < 1.149 ? 280 : 300;
    }
    /* The re-read sweep (footprint / L2): the L2's rate, 8000 GB/s (7000 at the smallest
     * footprint), to 0.9; 5400 at 1.0, 4700 at 1.25, 4400 at 1.5 against memory's 4000
     * (hbm_read_gbps, the fake's). 15% of the 4000 GB/s gap: at least 7400 up to 0.9 (the
     * hit reach), at most 4600 from 1.5 (the miss reach). And an L2 copy of 6000 GB/s. */
    static const double sweep_x[] = {0.25, 0.5, 0.9, 1.0, 1.25, 1.5, 2.0};
    static const double sweep_r[] = {7000, 8000, 7900, 5400, 4700, 4400, 4200};
    c.hbm_read_gbps = 4000;
    c.l2_sweep_n = 7;
    for (int i = 0; i < c.l2_sweep_n; i++) {
        c.l2_sweep_frac[i] = sweep_x[i];
        c.l2_sweep_read_gbps[i] = sweep_r[i];
        c.l2_sweep_copy_gbps[i] = 6000;
    }
    c.l2_copy_gbps = 6000;
    m = calib_reload(mp, &c, &fit);
    ck_assert_double_eq_tol(m->l2_bw_hit_bytes, round(0.9 * c.l2_bytes), 0.5);
    ck_assert_double_eq_tol(m->l2_bw_miss_bytes, round(1.5 * c.l2_bytes), 0.5);
    ck_assert_double_eq_tol(m->mem[AR_MEM_SRAM].copy_gbps, 6000, 0.5);
    ck_assert_double_eq_tol(m->mem[AR_MEM_HBM].copy_gbps, 0, 1e-9);
    ck_assert_double_eq_tol(m->reduce_group_ns, 450, 0.5);
    ck_assert_double_eq_tol(m->reduce_op_ns, 200, 0.5);
    ck_assert_double_eq_tol(m->cold_lat_ns, 400, 0.5);
    ck_assert_double_eq_tol(m->l2_hit_bytes, round(0.30 * c.l2_bytes), 0.5);
    ck_assert_double_eq_tol(m->l2_miss_bytes, round(1.15 * c.l2_bytes), 0.5);
    ck_assert_double_eq_tol(m->mem[AR_MEM_HBM].lat_ns, 600, 1e-9);
    ar_model_free(m);
    unlink(mp);
}
END_TEST

/* One GPU: every term but the link's measured there; the link's taken from a base model
 * and marked assumed, so the model is complete and says what it assumed. */
START_TEST(calib_write_one_gpu) {
    ar_calib_t c = fake_calib();
    c.gpus_used = 1;
    snprintf(c.device, sizeof c.device, "TestGPU (GPU 0)");
    c.npoints = 0;
    c.peer_read_block_gbps = c.peer_write_block_gbps = c.peer_read_bidir_gbps = c.peer_write_bidir_gbps = 0;
    c.peer_read_lat_ns = c.flag_rtt_ns = c.flag_oneway_ns = 0;
    c.land_done = 0;
    c.rings_done = 1; /* both ranks on the GPU: every hop inside it */
    c.ring_hop_ns[0] = c.ring_hop_ns[1] = 1400;
    ar_error_t err;
    ar_error_clear(&err);
    ar_calib_fit_t fit = {"one_gpu", NULL, 0, 0, NULL};
    FILE *f = fopen("/dev/null", "w");
    ck_assert_int_eq(ar_validate_calib_write(f, &c, &fit, &err), AR_EMODEL); /* no base: no link terms */
    fclose(f);
    ar_model_t *base = NULL;
    ck_assert_int_eq(ar_model_load("h100_sxm", &base, &err), AR_OK);
    fit.base = base;
    char mp[] = "/tmp/arsim-check-calib1-XXXXXX.yaml";
    int fd = mkstemps(mp, 5);
    close(fd);
    ar_model_t *m = calib_reload(mp, &c, &fit);
    const int kb = ar_model_link_kind(m, "nvlink4"), bb = ar_model_link_kind(base, "nvlink4");
    ck_assert_double_eq(m->links[kb].bw_gbps, base->links[bb].bw_gbps);
    ck_assert_double_eq(m->links[kb].lanes, base->links[bb].lanes);
    ck_assert_double_eq(m->chan_read_lat_ns, base->chan_read_lat_ns);
    ck_assert_double_eq(m->signal_lat_ns, base->signal_lat_ns);
    ck_assert_double_eq_tol(m->signal_lat_local_ns, 1400 - (40.0 - 7.0) * 1e3 / 33, 0.5); /* measured: hop - wait */
    {
        /* and says the hop was the 2 ranks' on the GPU, not hops alternating across a link */
        FILE *y = fopen(mp, "r");
        char line[512];
        int said = 0;
        ck_assert_ptr_nonnull(y);
        while (fgets(line, sizeof line, y))
            if (!strncmp(line, "signal_lat_local_ns:", 20)) {
                ck_assert_msg(strstr(line, "2 ranks on the GPU") && !strstr(line, "alternating"), "%s", line);
                said = 1;
            }
        fclose(y);
        ck_assert(said);
    }
    ck_assert_double_eq_tol(m->mem[AR_MEM_HBM].read_gbps, 4300, 1e-9);
    ck_assert_int_eq(m->calib.gpus, 1);
    int n;
    const ar_model_key_t *keys = ar_model_keys(&n);
    for (int i = 0; i < n; i++) {
        const int assumed = (int)(m->calib.assumed[i] & 1);
        if (!strcmp(keys[i].name, "signal_lat_ns") || !strcmp(keys[i].name, "chan_read_lat_ns") ||
            !strcmp(keys[i].name, "bw_gbps") || !strcmp(keys[i].name, "link_issue_gbps"))
            ck_assert_msg(assumed, "%s should be marked assumed", keys[i].name);
        if (!strcmp(keys[i].name, "signal_lat_local_ns") || !strcmp(keys[i].name, "launch_ns") ||
            !strcmp(keys[i].name, "op_overhead_ns"))
            ck_assert_msg(!assumed, "%s was measured", keys[i].name);
    }
    ar_model_free(m);
    ar_model_free(base);
    unlink(mp);
}
END_TEST

/* A calibration block naming a key the model does not have is refused, naming it. */
/* The product keys read back what made the products' times: times built from a rate, an fp32
 * rate and a fixed cost through the model's waves of tiles (one 128 x 256 tile, two large
 * products) give those three back, gemm_units the SMs, and none of them assumed. */
START_TEST(calib_gemm_from_products) {
    ar_calib_t c = fake_calib();
    ar_model_t waves;
    memset(&waves, 0, sizeof waves);
    waves.gemm_units = 132, waves.gemm_tile_rows = 128, waves.gemm_tile_cols = 256;
    const uint64_t shapes[3][3] = {{128, 256, 64}, {8192, 8192, 8192}, {4096, 4096, 4096}};
    const double rates[3] = {700e12, 700e12, 50e12}, over = 1500e-9;
    const ar_dtype_t dtypes[3] = {AR_BF16, AR_BF16, AR_FP32};
    for (int i = 0; i < 3; i++) {
        memcpy(c.gemm_shape[i], shapes[i], sizeof c.gemm_shape[i]);
        c.gemm_dtype[i] = dtypes[i];
        c.gemm_us[i] = (over + ar_cost_gemm_seconds(&waves, rates[i], 132, shapes[i][0], shapes[i][1], shapes[i][2])) * 1e6;
    }
    c.gemm_done = 1;
    char path[64];
    ar_model_t *m = written_model(&c, "gemm_test", path);
    ck_assert_double_eq_tol(m->gemm_tflops, 700, 0.5);
    ck_assert_double_eq_tol(m->gemm_fp32_tflops, 50, 0.05);
    ck_assert_double_eq_tol(m->gemm_overhead_ns, 1500, 0.5);
    ck_assert_double_eq(m->gemm_units, 132);
    int nk;
    const ar_model_key_t *keys = ar_model_keys(&nk);
    const char *measured[] = {"gemm_tflops", "gemm_fp32_tflops", "gemm_overhead_ns", "gemm_units"};
    for (int i = 0; i < 4; i++) ck_assert_msg(!(m->calib.assumed[ar_model_key_find(measured[i]) - keys] & 1), "%s", measured[i]);
    ck_assert(m->calib.assumed[ar_model_key_find("gemm_tile_rows") - keys] & 1);
    ar_model_free(m);
    unlink(path);
    /* without the products the keys stay out: no product in the model */
    c.gemm_done = 0;
    m = written_model(&c, "gemm_test", path);
    ck_assert_double_eq(m->gemm_tflops, 0);
    ar_model_free(m);
    unlink(path);
}
END_TEST

START_TEST(calib_block_unknown_key) {
    const char *yaml = "name: t\nclock_ghz: 1\nmemory:\n  tcm: {present: false}\n  sram: {present: false}\n"
                       "  hbm: {capacity_bytes: 1000, read_gbps: 10, write_gbps: 10, lat_ns: 100}\n"
                       "links:\n  - {name: l, bw_gbps: 1, lat_ns: 1}\n"
                       "reduce_gbps: 1\nchan_inflight_bytes: 1\nchan_read_lat_ns: 1\nchan_write_gbps: 1\n"
                       "signal_lat_ns: 1\nlaunch_ns: 1\nhost_link_gbps: 1\nhost_link_lat_ns: 1\n"
                       "calibration:\n  device: d\n  driver: v\n  runtime: '13.0'\n  date: x\n  gpus: 2\n"
                       "  assumed: [memory.hbm.lat_ns, links.l.nope]\n";
    ar_model_t *m = NULL;
    ar_error_t err;
    ar_error_clear(&err);
    char buf[600];
    int rc = ar_model_load_string(yaml, "t.yaml", &m, &err);
    ck_assert_msg(rc == AR_EPARSE, "rc %d: %s", rc, ar_error_format(&err, buf, sizeof buf));
    ck_assert_msg(strstr(err.message, "links.l.nope"), "%s", err.message);
    /* without the stray key it loads, and the mark is there */
    char good[2048];
    snprintf(good, sizeof good, "%.*s]\n", (int)(strstr(yaml, ", links.l.nope") - yaml), yaml);
    rc = ar_model_load_string(good, "t.yaml", &m, &err);
    ck_assert_msg(rc == AR_OK, "%s", ar_error_format(&err, buf, sizeof buf));
    const ar_model_key_t *k = NULL;
    int n;
    const ar_model_key_t *keys = ar_model_keys(&n);
    for (int i = 0; i < n; i++)
        if (keys[i].section == AR_MK_LEVEL && !strcmp(keys[i].name, "lat_ns")) k = &keys[i];
    ck_assert(m->calib.assumed[k - keys] >> AR_MEM_HBM & 1);
    ck_assert_int_eq(m->calib.gpus, 2);
    ar_model_free(m);
}
END_TEST

/* ---- ar_calib_run without a GPU ---- */

START_TEST(calib_run_without_gpu) {
    char dev[256];
    ar_error_t err;
    ar_error_clear(&err);
    if (ar_calib_device_info(dev, sizeof dev, &err) == AR_OK) return; /* a GPU machine: nothing to refuse */
    ck_assert(err.code == AR_ENOTSUP || err.code == AR_EDEVICE);
    ar_calib_t c;
    ar_error_clear(&err);
    int rc = ar_calib_run(NULL, &c, &err);
    ck_assert(rc == AR_ENOTSUP || rc == AR_EDEVICE);
    ck_assert(err.message[0]);
}
END_TEST

/* ---- the model a run on the GPUs takes ---- */

/* A GPU's kind names its shipped model; a board the builders lay out takes the model of the
 * machine's GPUs, where there are some of a shipped kind; a grid or a file keeps its own. */
START_TEST(calib_gpu_model_by_kind) {
    ck_assert_str_eq(ar_calib_board_model("1 x NVIDIA H100 80GB HBM3 (132 SMs, 79 GiB), CUDA driver 13.0"), "h100_sxm");
    ck_assert_str_eq(ar_calib_board_model("2 x NVIDIA H200 (132 SMs, 140 GiB)"), "h200_sxm");
    ck_assert_ptr_null(ar_calib_board_model("1 x NVIDIA A100-SXM4-80GB"));
    ck_assert_ptr_null(ar_calib_gpu_model("torus_2d:4x4"));
    ck_assert_ptr_null(ar_calib_gpu_model("hgx_h100_8"));
    ck_assert_ptr_null(ar_calib_gpu_model(NULL));
    char dev[256];
    ar_error_t err;
    ar_error_clear(&err);
    const char *want = ar_calib_device_info(dev, sizeof dev, &err) == AR_OK ? ar_calib_board_model(dev) : NULL;
    for (int i = 0; i < 2; i++) {
        const char *got = ar_calib_gpu_model(i ? "switch:4" : "full:2");
        if (want) ck_assert_str_eq(got, want);
        else ck_assert_ptr_null(got);
    }
}
END_TEST

/* ---- the commands (the built binary) ---- */

/* Names of this process's own (two test runs at once must not share files). */
static const char *own_path(const char *name) {
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "/tmp/arsim-check-%ld-%s", (long)getpid(), name);
    return buf[k];
}

static int run_status(const char *args, char *err_out, size_t len) {
    char cmd[2048];
    const char *errf = own_path("validate.err");
    snprintf(cmd, sizeof cmd, "cd /tmp && %s/arsim %s 2>%s >/dev/null", ARSIM_BUILDDIR, args, errf);
    int st = system(cmd);
    FILE *f = fopen(errf, "r");
    size_t n = f ? fread(err_out, 1, len - 1, f) : 0;
    err_out[n] = 0;
    if (f) fclose(f);
    unlink(errf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

START_TEST(cli_calibrate_and_validate_refusals) {
    char e[4096], dev[256];
    ar_error_t err;
    int gpu = ar_calib_device_info(dev, sizeof dev, &err) == AR_OK;
    if (!gpu) {
        ck_assert_int_eq(run_status("calibrate --backend cuda -o /tmp/arsim-never.yaml", e, sizeof e), 2);
        ck_assert_int_eq(lines(e), 1);
        ck_assert_ptr_nonnull(strstr(e, "arsim calibrate: "));
        ck_assert_int_ne(access("/tmp/arsim-never.yaml", F_OK), 0);
    }
    ck_assert_int_eq(run_status("calibrate --backend sim -o /tmp/x.yaml", e, sizeof e), 2);
    ck_assert_ptr_nonnull(strstr(e, "cuda backend only"));
    ck_assert_int_eq(run_status("calibrate", e, sizeof e), 2);
    ck_assert_ptr_nonnull(strstr(e, "-o MODEL.yaml"));
    ck_assert_int_eq(run_status("validate --measured /nonexistent.csv --model h200_sxm", e, sizeof e), 2);
    ck_assert_int_eq(lines(e), 1);
    ck_assert_ptr_nonnull(strstr(e, "/nonexistent.csv"));
    char *bad = tmpfile_with("backend,topology,model,nranks,algo,dtype,buffer,bytes,count,channels,chunk_bytes,time_us,check\n"
                             "cuda,h200_pair,m,2,ring,bf16,hbm,8192,4096,1,0,5,ok\n"
                             "cuda,h200_pair,m,two,ring,bf16,hbm,8192,4096,1,0,5,ok\n");
    char args[512];
    snprintf(args, sizeof args, "validate --measured %s --model h200_sxm", bad);
    ck_assert_int_eq(run_status(args, e, sizeof e), 2);
    ck_assert_int_eq(lines(e), 1);
    char want[256];
    snprintf(want, sizeof want, "%s:3:", bad);
    ck_assert_ptr_nonnull(strstr(e, want));
    ck_assert_ptr_nonnull(strstr(e, "nranks"));
    unlink(bad);
    ck_assert_int_eq(run_status("validate --refs-dir /nonexistent-refs", e, sizeof e), 2);
    ck_assert_int_eq(lines(e), 1);
}
END_TEST

/* validate --refs on the shipped files: every row gets a model value and the ratio. */
START_TEST(cli_validate_refs) {
    char e[4096];
    const char *out = own_path("refs.csv");
    char args[256];
    snprintf(args, sizeof args, "validate --refs --predict-with analytic -o %s", out);
    ck_assert_int_eq(run_status(args, e, sizeof e), 0);
    ar_csv_t *c = NULL;
    ar_error_t err;
    ar_error_clear(&err);
    ck_assert_int_eq(ar_csv_load(out, &c, &err), AR_OK);
    ck_assert_int_ge(c->nrows, 11);
    int ref = ar_csv_col(c, "ref_us"), mod = ar_csv_col(c, "model_us"), ratio = ar_csv_col(c, "model_over_ref");
    ck_assert_int_ge(ratio, 0);
    for (int r = 0; r < c->nrows; r++) {
        double rv = atof(c->rows[r][ref]), mv = atof(c->rows[r][mod]), q = atof(c->rows[r][ratio]);
        ck_assert_msg(mv > 0, "row %d has no model value", r);
        ck_assert_double_eq_tol(q, mv / rv, 1e-3 * q + 1e-4);
    }
    ar_csv_free(c);
    unlink(out);
}
END_TEST

/* chan_cold_crowd_gbps from two channel counts: one channel per GPU at 40 GB/s against 24
 * at 32 gives 23 x 1.5 x 40 / (40 / 32 - 1); rates made by the model's own law
 * (r_n = r0 / (1 + (n - 1) 1.5 r0 / X), X = 10000, r0 = 45) at 2 and 48 channels give X
 * back; a crowd no slower gives none. */
START_TEST(calib_crowd_from_two_counts) {
    ck_assert_double_eq_tol(ar_calib_crowd_gbps(1, 40, 24, 32), 23 * 1.5 * 40 / (40.0 / 32 - 1), 1e-9);
    const double X = 10000, r0 = 45, k = 1.5 * r0 / X;
    ck_assert_double_eq_tol(ar_calib_crowd_gbps(2, r0 / (1 + k), 48, r0 / (1 + 47 * k)), X, 1e-6);
    ck_assert_double_eq(ar_calib_crowd_gbps(1, 40, 24, 40), 0);
    ck_assert_double_eq(ar_calib_crowd_gbps(1, 40, 24, 41), 0);
}
END_TEST

Suite *suite_validate(void) {
    Suite *s = suite_create("validate");
    struct { const char *name; const TTest *fn; } cases[] = {
        {"ar_csv_load_string", csv_fields_quotes_comments},
        {"ar_csv_load_string errors", csv_errors_have_line_and_column},
        {"ar_validate_refs_load_string", refs_good_rows_and_unknowns},
        {"ar_validate_refs_load_string errors", refs_bad_rows_name_file_line_col_field},
        {"ar_validate_refs_load_dir", refs_shipped_values},
        {"ar_validate_rows_load", rows_sweep_csv},
        {"ar_validate_median", median_values},
        {"ar_validate_calib_write", calib_write_loads_as_model},
        {"ar_validate_calib_write one GPU", calib_write_one_gpu},
        {"ar_calib_crowd_gbps", calib_crowd_from_two_counts},
        {"model calibration block", calib_block_unknown_key},
        {"ar_validate_calib_write products", calib_gemm_from_products},
        {"ar_calib_run", calib_run_without_gpu},
        {"ar_calib_gpu_model", calib_gpu_model_by_kind},
        {"arsim calibrate/validate refusals", cli_calibrate_and_validate_refusals},
        {"arsim validate --refs", cli_validate_refs},
        {"ar_bench_csv_row", bench_rows_format},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, cases[i].fn);
        suite_add_tcase(s, tc);
    }
    return s;
}
