/* validate: calibration in a build without CUDA: every entry point says so. */
#include "validate/internal.h"

int ar_calib_device_info(char *buf, unsigned long len, ar_error_t *err) {
    if (len) buf[0] = 0;
    return AR_ERR(err, AR_ENOTSUP, "this build has no cuda backend (configure found no nvcc; "
                                   "use --with-cuda=DIR)");
}

int ar_calib_run(const ar_calib_opts_t *opts, ar_calib_t *out, ar_error_t *err) {
    (void)opts;
    (void)out;
    return AR_ERR(err, AR_ENOTSUP, "this build has no cuda backend (configure found no nvcc; "
                                   "use --with-cuda=DIR), so it cannot run the calibration "
                                   "micro-benchmarks");
}

int ar_calib_exec(const struct ar_topo_s *t, ar_calib_t *c, int quiet, ar_error_t *err) {
    (void)t;
    (void)c;
    (void)quiet;
    return AR_ERR(err, AR_ENOTSUP, "this build has no cuda backend, so it cannot run the "
                                   "executor's probe plans");
}
