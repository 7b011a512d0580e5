/* arsim calibrate --backend cuda -o MODEL.yaml: micro-benchmarks on two GPUs
 * (validate/calib.cu, and the executor's probe plans: validate/calib_exec.c) into a model
 * file (validate/calib_yaml.c, every key through the model's key table); no allreduce is
 * timed. This file parses the command line and writes the files. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/internal.h"
#include "cli/opts.h"
#include "validate/bench.h"
#include "validate/internal.h"

enum { C_OUT = 1000, C_GPUS, C_THREADS, C_UNROLL, C_REPS, C_LINK_FROM, C_NAME, C_LAUNCH_WIDE, C_RAW, C_BASE };

typedef struct cal_ctx_s {
    const char *out, *name, *link_from, *raw, *base;
    int gpus[2], ngpus, threads, unroll, reps, launch_wide; /* ngpus 0: as the machine has (two if it can) */
} cal_ctx_t;

static int cal_handle(int val, const char *arg, void *p) {
    cal_ctx_t *c = p;
    long v;
    switch (val) {
    case 'o': case C_OUT: c->out = arg; return ar_cli_check_path("calibrate", "-o", arg);
    case C_NAME:
        if (!ar_name_ok(arg) || strlen(arg) >= AR_NAME_MAX)
            return ar_cli_fail("calibrate", "--name '%s': a model name is 1-63 printable characters without "
                                            "spaces, commas, quotes or '#'", arg);
        c->name = arg;
        return 0;
    case C_GPUS: {
        int n;
        if (ar_cli_parse_int_list(arg, c->gpus, 2, &n, 0, 63) || n < 1 || n > 2 || (n == 2 && c->gpus[0] == c->gpus[1]))
            return ar_cli_fail("calibrate", "--gpus '%s': expected one GPU index or two distinct ones, e.g. 0 or 0,1",
                               arg);
        c->ngpus = n;
        return 0;
    }
    case C_BASE: c->base = arg; return 0;
    case C_THREADS:
        if (ar_cli_parse_int(arg, 32, 1024, &v) || v % 32)
            return ar_cli_fail("calibrate", "--threads '%s': expected a multiple of 32 in 32..1024", arg);
        c->threads = (int)v;
        return 0;
    case C_UNROLL:
        if (ar_cli_parse_int(arg, 1, 8, &v) || v == 5 || v == 7)
            return ar_cli_fail("calibrate", "--unroll '%s': expected 1, 2, 3, 4, 6 or 8", arg);
        c->unroll = (int)v;
        return 0;
    case C_REPS:
        if (ar_cli_parse_int(arg, 1, 1000, &v))
            return ar_cli_fail("calibrate", "--reps '%s': expected 1..1000", arg);
        c->reps = (int)v;
        return 0;
    case C_LINK_FROM:
        if (strcmp(arg, "split") && strcmp(arg, "read") && strcmp(arg, "write") && strcmp(arg, "mean"))
            return ar_cli_fail("calibrate", "--link-from '%s': expected split, read, write or mean", arg);
        c->link_from = arg;
        return 0;
    case C_LAUNCH_WIDE: c->launch_wide = 1; return 0;
    case C_RAW: c->raw = arg; return ar_cli_check_path("calibrate", "--raw", arg);
    }
    return 2;
}

/* Links between the topology's first two devices (NV18 on h200_pair). */
static int pair_links(const ar_topo_t *t) {
    for (int i = 0; i < t->nlinks; i++)
        if ((t->links[i].a == 0 && t->links[i].b == 1) || (t->links[i].a == 1 && t->links[i].b == 0))
            return t->links[i].count;
    return 0;
}

int ar_cli_calibrate(int argc, char **argv) {
    static const struct option lo[] = {
        {"out", required_argument, NULL, C_OUT}, {"gpus", required_argument, NULL, C_GPUS},
        {"threads", required_argument, NULL, C_THREADS}, {"unroll", required_argument, NULL, C_UNROLL},
        {"reps", required_argument, NULL, C_REPS}, {"link-from", required_argument, NULL, C_LINK_FROM},
        {"name", required_argument, NULL, C_NAME}, {"launch-wide", no_argument, NULL, C_LAUNCH_WIDE},
        {"raw", required_argument, NULL, C_RAW}, {"base", required_argument, NULL, C_BASE},
        {0, 0, 0, 0},
    };
    cal_ctx_t cx = {NULL, NULL, NULL, NULL, NULL, {0, 1}, 0, 512, 6, 5, 0};
    ar_cli_extra_t extra = {
        lo, "o:", cal_handle, &cx,
        "calibrate options:\n"
        "  -o, --out FILE         write the model here (required)\n"
        "  --name NAME            the model's name (default: the file's base name)\n"
        "  --gpus A[,B]           the GPUs to measure: two for every term, one for all but\n"
        "                         the link terms (default 0,1, or 0 on a machine of one GPU)\n"
        "  --base MODEL           one GPU: the model the link terms are taken from, marked\n"
        "                         assumed (default: h100_sxm or h200_sxm, by the GPU's name)\n"
        "  --threads N            threads per block, as the executor uses (default 512)\n"
        "  --unroll N             16-byte loads in flight per thread (default 6, the executor's)\n"
        "  --reps N               repeats per point, median kept (default 5)\n"
        "  --link-from split|read|write|mean  which two-way streaming ceilings set the link bandwidth:\n"
        "                         split (default) pushes bw_gbps and pulls pull_gbps, the\n"
        "                         others one ceiling for both\n"
        "  --launch-wide          launch_ns from kernels of one block per SM (default 16 blocks)\n"
        "  --raw FILE             also write the peer bandwidth curves (CSV: blocks, read, write)\n"
        "  --topology T           where the link count of the pair comes from (default h200_pair)\n"
        "  --backend cuda         the backend it measures on (the default; the only one)\n"
        "  -q, --quiet            no progress notes\n"
        "Micro-benchmarks only: flag latency, launch overhead, peer read/write bandwidth\n"
        "against block count, local memory bandwidth and latency, reduction throughput,\n"
        "host staging (all SMs and one block), the executor's own cost per op (probe\n"
        "plans x-chainN, x-sigsN, x-waitsN), and cuBLASLt's products alone (the matrix\n"
        "units' rates and a product's fixed cost). No allreduce is timed. Two GPUs with peer\n"
        "access measure every term; one GPU (its ranks on it) every term but the link's.\n"
        "The file's `calibration:` block names the device, driver, runtime and date, and\n"
        "the keys no benchmark measured (arsim model show lists them).\n",
        AR_CLI_O(BACKEND) | AR_CLI_O(TOPOLOGY) | AR_CLI_O(QUIET),
        AR_CLI_O(BACKEND) | AR_CLI_O(TOPOLOGY) | AR_CLI_O(QUIET),
    };
    ar_cli_opts_t o;
    int rc = ar_cli_opts_parse("calibrate", argc, argv, AR_CLI_NO_SIZE, &extra, &o);
    if (rc == AR_CLI_HELP) { ar_cli_opts_free(&o); return 0; }
    if (rc) { ar_cli_opts_free(&o); return rc; }
    ar_topo_t *t = NULL;
    if ((o.seen & AR_CLI_O(BACKEND)) && (o.nbackends != 1 || !ar_cli_backend_can(o.backends[0], AR_BACKEND_HARDWARE))) {
        rc = ar_cli_fail("calibrate", "--backend %s: calibration runs micro-benchmarks on the cuda "
                                      "backend only (--backend cuda)", o.backends[0]);
        goto out;
    }
    if (!cx.out) {
        rc = ar_cli_fail("calibrate", "no output file: use -o MODEL.yaml");
        goto out;
    }
    char name[AR_NAME_MAX];
    if (cx.name) {
        snprintf(name, sizeof name, "%s", cx.name);
    } else {
        const char *b = strrchr(cx.out, '/');
        b = b ? b + 1 : cx.out;
        snprintf(name, sizeof name, "%s", b);
        char *dot = strrchr(name, '.');
        if (dot && dot != name) *dot = 0;
    }
    if (!cx.ngpus) cx.ngpus = ar_hw_gpu_count() == 1 ? 1 : 2;
    ar_model_t *base = NULL;
    ar_error_t err;
    ar_error_clear(&err);
    if (cx.base && cx.ngpus == 2) {
        rc = ar_cli_fail("calibrate", "--base %s: two GPUs measure the link terms themselves; --base is for one "
                                      "(--gpus A)", cx.base);
        goto out;
    }
    if (cx.base && ar_model_load(cx.base, &base, &err) != AR_OK) {
        rc = ar_cli_fail_err("calibrate", &err);
        goto out;
    }
    /* Two GPUs: the pair's topology (its link count); one: every rank on that GPU. */
    rc = cx.ngpus == 1 ? ar_cli_topo_open(&o, "full:1", &t)
                       : ar_cli_topo_open(&o, o.ntopos && strcmp(o.topos[0], AR_CLI_DEFAULT_TOPOLOGY) ? o.topos[0]
                                                                                                    : "h200_pair", &t);
    if (rc) goto out;
    if (cx.ngpus == 1 && ar_topo_place_blocks(t, 2, &err) != AR_OK) {
        rc = ar_cli_fail_err("calibrate", &err);
        goto out;
    }
    ar_calib_opts_t copts = AR_CALIB_OPTS_DEFAULT;
    copts.dev0 = cx.gpus[0];
    copts.dev1 = cx.ngpus == 2 ? cx.gpus[1] : -1;
    copts.threads = cx.threads;
    copts.unroll = cx.unroll;
    copts.reps = cx.reps;
    copts.quiet = o.quiet;
    ar_calib_t cal;
    if (ar_calib_run(&copts, &cal, &err) != AR_OK) {
        rc = ar_cli_fail_err("calibrate", &err);
        goto out;
    }
    /* The executor's own cost per op: probe plans on the pair, one rank per GPU (on one
     * GPU, both ranks on it). */
    if (t->nranks == 2 && (cx.ngpus == 1 || t->placement[0] != t->placement[1]) &&
        ar_calib_exec(t, &cal, o.quiet, &err) != AR_OK) {
        rc = ar_cli_fail_err("calibrate", &err);
        goto out;
    }
    if (cx.ngpus == 1 && !base) {
        const char *kind = ar_calib_board_model(cal.device);
        if (!kind) {
            rc = ar_cli_fail("calibrate", "one GPU (%s) measures no link terms and no shipped model is of its kind: "
                                          "give --base MODEL to take them from", cal.device);
            goto out;
        }
        if (ar_model_load(kind, &base, &err) != AR_OK) {
            rc = ar_cli_fail_err("calibrate", &err);
            goto out;
        }
    }
    /* Through a temporary renamed into place (arsim/out.h): a half-written model never exists. */
    if (cx.raw && ar_out_same(cx.out, cx.raw)) {
        rc = ar_cli_fail("calibrate", "-o and --raw name the same file '%s'", cx.out);
        goto out;
    }
    ar_out_t mo = {0};
    if ((rc = ar_cli_out_open("calibrate", "-o", cx.out, &mo))) goto out;
    ar_calib_fit_t fit = {name, cx.link_from, cx.ngpus == 2 ? pair_links(t) : 0, cx.launch_wide, base};
    if (ar_validate_calib_write(mo.f, &cal, &fit, &err) != AR_OK || ar_out_flush(&mo, &err) != AR_OK) {
        ar_out_abort(&mo);
        rc = ar_cli_fail_err("calibrate", &err);
        goto out;
    }
    /* The file must load as a model, or it is no use to anyone. */
    ar_model_t *m = NULL;
    if (mo.tmp[0] && ar_model_load(mo.tmp, &m, &err) != AR_OK) {
        char buf[600];
        ar_out_abort(&mo);
        rc = ar_cli_fail("calibrate", "internal error: the written model does not load: %s",
                         ar_error_format(&err, buf, sizeof buf));
        goto out;
    }
    ar_model_free(m);
    if ((rc = ar_cli_out_close("calibrate", &mo, 0))) goto out;
    if (cx.raw) {
        ar_out_t ro = {0};
        if ((rc = ar_cli_out_open("calibrate", "--raw", cx.raw, &ro))) goto out;
        fprintf(ro.f, "# arsim calibrate: peer bandwidth against blocks (one direction, %d threads x %d "
                      "16-byte loads per thread)\n# device: %s\n# date: %s\n", cal.threads, cal.unroll,
                cal.device, cal.date);
        fprintf(ro.f, "blocks,peer_read_gbps,peer_write_gbps\n");
        for (int i = 0; i < cal.npoints; i++)
            fprintf(ro.f, "%d,%.3f,%.3f\n", cal.blocks[i], cal.peer_read_gbps[i], cal.peer_write_gbps[i]);
        if ((rc = ar_cli_out_close("calibrate", &ro, 0))) goto out;
    }
    if (!o.quiet) fprintf(stderr, "calibrate: wrote %s (%.1f s of benchmarks)\n", cx.out, cal.wall_s);
    rc = 0;
out:
    ar_model_free(base);
    ar_topo_free(t);
    ar_cli_opts_free(&o);
    return rc;
}

