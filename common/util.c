/* Small helpers (arsim/util.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arsim/error.h"
#include <time.h>
#include "arsim/util.h"

double ar_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ar_utc_date(char *buf, size_t len) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    if (!strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) && len) buf[0] = 0;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double ar_median(double *v, size_t n) {
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int ar_grow(void *arrayp, size_t *cap, size_t n, size_t elem) {
    if (n < *cap) return AR_OK;
    const size_t nc = *cap ? 2 * *cap : 16;
    void *p = realloc(*(void **)arrayp, nc * elem);
    if (!p) return AR_ENOMEM;
    *(void **)arrayp = p;
    *cap = nc;
    return AR_OK;
}

const char *ar_data_path(const char *sub, char *buf, size_t len) {
    const char *env = getenv("ARSIM_DATADIR");
    snprintf(buf, len, "%s/%s", env && env[0] ? env : ARSIM_DATADIR, sub);
    return buf;
}

void ar_free_each(void *const *p, size_t n) {
    for (size_t i = 0; i < n; i++) free(p[i]);
}
