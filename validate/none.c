/* validate: the entry points of validate/bench.h and validate/calib.h in a build without the
 * cuda backend (configure found no nvcc, or --with-cuda=no). Each says so with
 * AR_ENOTSUP, so callers need no #ifdef HAVE_CUDA of their own. */
#include "validate/bench.h"
#include "validate/calib.h"

#define NO_CUDA "the cuda backend is not in this build (configure found no nvcc; use --with-cuda=DIR)"

/* ---- validate/bench.h ---- */

int ar_hw_bench_available(ar_error_t *err) { return AR_ERR(err, AR_ENOTSUP, NO_CUDA); }

int ar_hw_bench(const ar_topo_t *topo, const ar_hw_bench_opts_t *o, const ar_bench_sink_t *sink, int *wrong,
                ar_error_t *err) {
    (void)topo;
    (void)o;
    (void)sink;
    if (wrong) *wrong = 0;
    return AR_ERR(err, AR_ENOTSUP, NO_CUDA);
}

int ar_hw_gpu_count(void) { return 0; }


/* ---- validate/calib.h ---- */

int ar_calib_device_info(char *buf, unsigned long len, ar_error_t *err) {
    if (len) buf[0] = 0;
    return AR_ERR(err, AR_ENOTSUP, NO_CUDA);
}

int ar_calib_nvlinks(const int *gpus, int n) {
    (void)gpus;
    (void)n;
    return -1;
}

int ar_calib_run(const ar_calib_opts_t *opts, ar_calib_t *out, ar_error_t *err) {
    (void)opts;
    (void)out;
    return AR_ERR(err, AR_ENOTSUP, NO_CUDA ", so it cannot run the calibration micro-benchmarks");
}

int ar_calib_exec(const struct ar_topo_s *t, ar_calib_t *c, int quiet, ar_error_t *err) {
    (void)t;
    (void)c;
    (void)quiet;
    return AR_ERR(err, AR_ENOTSUP, NO_CUDA ", so it cannot run the executor's probe plans");
}
