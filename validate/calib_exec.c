/* validate: the executor's own cost per op, from probe plans (hw/probe.c) run by the
 * cuda backend's timing path (`arsim bench`: a CUDA graph of many executions, median
 * of repeats), one rank per GPU. No allreduce: each probe is a chain of one kind of
 * op on a GPU's own memory and flags.
 *
 *   x-chainN   N local COPYs of 16 bytes on one channel. The slope over N is what one
 *              data op costs in the executor; minus what the model already charges a
 *              local op of that size (the memory latency and its bytes), it is
 *              op_overhead_ns (validate/calib_yaml.c).
 *   x-sigsN    one channel SIGNALs its own rank N times, another WAITs once for all.
 *   x-waitsN   the same, and the waiting channel WAITs N times: from the second on the
 *              flag is there, so (x-waitsN - x-sigsN) / (N - 1) is one WAIT by itself:
 *              wait_overhead_ns. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw/bench.h"
#include "validate/internal.h"

#define N_LO 2
#define N_HI 34
#define OP_BYTES 16

int ar_calib_exec(const ar_topo_t *t, ar_calib_t *c, int quiet, ar_error_t *err) {
    const char *names[6] = {"x-chain2", "x-chain34", "x-sigs2", "x-sigs34", "x-waits2", "x-waits34"};
    double us[6];
    for (int i = 0; i < 6; i++) us[i] = NAN;
    FILE *csv = tmpfile(), *table = tmpfile();
    if (!csv || !table) {
        if (csv) fclose(csv);
        if (table) fclose(table);
        return AR_ERR(err, AR_EIO, "calibrate: cannot create a temporary file");
    }
    const uint64_t sizes[1] = {OP_BYTES};
    ar_hw_bench_opts_t o;
    memset(&o, 0, sizeof o);
    o.algos = "x-chain2,x-chain34,x-sigs2,x-sigs34,x-waits2,x-waits34";
    o.sizes = sizes;
    o.nsizes = 1;
    o.dtype = AR_BF16;
    o.iters = 200;
    o.repeats = 15;
    o.timeout_s = 5;
    o.csv = csv;
    int wrong = 0;
    int rc = ar_hw_bench(t, &o, table, &wrong, err);
    if (rc == AR_OK) {
        char line[1024];
        rewind(csv);
        while (fgets(line, sizeof line, csv)) {
            /* size_bytes,count,dtype,algo,channels,nranks,ngpus,time_us,... */
            char *f[8];
            int nf = 0;
            for (char *save = NULL, *tok = strtok_r(line, ",", &save); tok && nf < 8;
                 tok = strtok_r(NULL, ",", &save))
                f[nf++] = tok;
            if (nf < 8) continue;
            for (int i = 0; i < 6; i++)
                if (!strcmp(f[3], names[i])) us[i] = strtod(f[7], NULL);
        }
        for (int i = 0; i < 6 && rc == AR_OK; i++)
            if (!(us[i] > 0)) {
                char msg[256] = "";
                rewind(table);
                while (fgets(msg, sizeof msg, table))
                    if (strstr(msg, names[i])) break;
                msg[strcspn(msg, "\n")] = 0;
                rc = AR_ERR(err, AR_EDEVICE, "calibrate: probe plan %s gave no time%s%s", names[i],
                            msg[0] ? ": " : "", msg);
            }
    }
    fclose(csv);
    fclose(table);
    if (rc != AR_OK) return rc;
    c->exec_n_lo = N_LO;
    c->exec_n_hi = N_HI;
    c->exec_op_bytes = OP_BYTES;
    for (int k = 0; k < 2; k++) {
        c->exec_chain_us[k] = us[k];
        c->exec_sigs_us[k] = us[2 + k];
        c->exec_waits_us[k] = us[4 + k];
    }
    c->exec_op_ns = (us[1] - us[0]) * 1e3 / (N_HI - N_LO);
    c->exec_wait_ns = (us[5] - us[3]) * 1e3 / (N_HI - 1);
    c->exec_done = 1;
    if (!quiet)
        fprintf(stderr,
                "calibrate: executor: x-chain %d/%d ops %.2f/%.2f us (%.0f ns per local COPY of %d bytes); "
                "x-sigs %.2f/%.2f us, x-waits %.2f/%.2f us (%.0f ns per WAIT)\n",
                N_LO, N_HI, us[0], us[1], c->exec_op_ns, OP_BYTES, us[2], us[3], us[4], us[5],
                c->exec_wait_ns);
    return AR_OK;
}
