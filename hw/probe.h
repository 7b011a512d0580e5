/* hw: probe plans (see hw/probe.c): executor measurements and test fixtures. */
#ifndef ARSIM_HW_PROBE_H
#define ARSIM_HW_PROBE_H
#include "arsim/arsim.h"
/* name: x-oneshot, x-pushshot or x-twoshot. */
int ar__probe_build(const char *name, int nranks, uint64_t count, ar_dtype_t dtype, int channels, ar_plan_t **out,
                    ar_error_t *err);
#endif
