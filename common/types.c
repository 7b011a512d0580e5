/* Element types, memory levels, sizes. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "arsim/types.h"

static const char *const dtype_names[AR_NDTYPE] = {"bf16", "fp16", "fp32"};
static const char *const mem_names[AR_NMEM] = {"tcm", "sram", "hbm"};

size_t ar_dtype_size(ar_dtype_t t) { return t == AR_FP32 ? 4 : 2; }
const char *ar_dtype_name(ar_dtype_t t) { return (unsigned)t < AR_NDTYPE ? dtype_names[t] : "?"; }

int ar_dtype_parse(const char *s, ar_dtype_t *out) {
    static const struct { const char *name; ar_dtype_t t; } alias[] = {
        {"bf16", AR_BF16}, {"bfloat16", AR_BF16}, {"fp16", AR_FP16}, {"half", AR_FP16},
        {"float16", AR_FP16}, {"fp32", AR_FP32}, {"float", AR_FP32}, {"float32", AR_FP32},
    };
    for (size_t i = 0; s && i < sizeof alias / sizeof alias[0]; i++)
        if (strcasecmp(s, alias[i].name) == 0) { *out = alias[i].t; return AR_OK; }
    return AR_EINVAL;
}

/* Each rounding of a partial sum costs up to half an ulp of the dtype; a chain of k-1
 * roundings (a ring) grows the bound linearly. Inputs are O(1) of mixed sign, so the
 * bound is taken relative to the sum of magnitudes (see the ref backend). */
double ar_dtype_tolerance(ar_dtype_t t, int k) {
    double eps = t == AR_BF16 ? 0x1p-8 : t == AR_FP16 ? 0x1p-11 : 0x1p-24;
    if (k < 1) k = 1;
    return eps * (k + 1);
}

const char *ar_mem_name(ar_mem_t m) { return (unsigned)m < AR_NMEM ? mem_names[m] : "?"; }

int ar_mem_parse(const char *s, ar_mem_t *out) {
    for (int i = 0; s && i < AR_NMEM; i++)
        if (strcasecmp(s, mem_names[i]) == 0) { *out = (ar_mem_t)i; return AR_OK; }
    return AR_EINVAL;
}

int ar_parse_u64(const char *s, uint64_t *out, const char **end) {
    if (!s || *s < '0' || *s > '9') return AR_EINVAL;
    char *e;
    errno = 0;
    const unsigned long long v = strtoull(s, &e, 10);
    if (errno == ERANGE || (!end && *e)) return AR_EINVAL;
    if (end) *end = e;
    *out = v;
    return AR_OK;
}

int ar_parse_long(const char *s, long *out) {
    if (!s || !((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9'))) return AR_EINVAL;
    char *e;
    errno = 0;
    const long v = strtol(s, &e, 10);
    if (errno == ERANGE || *e) return AR_EINVAL;
    *out = v;
    return AR_OK;
}

int ar_parse_double(const char *s, double *out) {
    if (!s || !((*s >= '0' && *s <= '9') || *s == '.' || (*s == '-' && (s[1] == '.' || (s[1] >= '0' && s[1] <= '9')))))
        return AR_EINVAL;
    char *e;
    errno = 0;
    const double v = strtod(s, &e);
    if (errno == ERANGE || *e || !isfinite(v)) return AR_EINVAL;
    *out = v;
    return AR_OK;
}

int ar_name_ok(const char *s) {
    if (!s || !*s) return 0;
    for (; *s; s++)
        if (*s <= ' ' || *s > '~' || *s == ',' || *s == '"' || *s == '#') return 0;
    return 1;
}

int ar_size_parse(const char *s, uint64_t *bytes, ar_error_t *err) {
    if (!s || !*s) return AR_ERR(err, AR_EINVAL, "size is empty");
    const char *p = s;
    if (*p == '-' || *p == '+') return AR_ERR(err, AR_EINVAL, "size '%s' must be a positive number of bytes", s);
    const char *end;
    uint64_t v;
    if (*p < '0' || *p > '9') return AR_ERR(err, AR_EINVAL, "size '%s' is not a number", s); /* no leading space */
    if (ar_parse_u64(p, &v, &end) != AR_OK) return AR_ERR(err, AR_ELIMIT, "size '%s' is too large", s);
    unsigned shift = 0;
    if (*end) {
        switch (*end) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        case 't': case 'T': shift = 40; break;
        default: return AR_ERR(err, AR_EINVAL, "size '%s': unknown suffix '%s' (use K, M, G or T)", s, end);
        }
        end++;
        if (*end) return AR_ERR(err, AR_EINVAL, "size '%s': trailing characters '%s' (the suffixes are K, M, G and T)", s, end);
    }
    if (v == 0) return AR_ERR(err, AR_EINVAL, "size '%s' must be greater than 0", s);
    if (shift && v > (UINT64_MAX >> shift)) return AR_ERR(err, AR_ELIMIT, "size '%s' overflows 64 bits", s);
    *bytes = (uint64_t)v << shift;
    return AR_OK;
}

int ar_size_range_parse(const char *s, uint64_t *sizes, int max, int *n, ar_error_t *err) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s ? s : "");
    char *colon = strchr(buf, ':');
    uint64_t lo, hi;
    if (colon) *colon = 0;
    AR_TRY(ar_size_parse(buf, &lo, err));
    hi = lo;
    if (colon) AR_TRY(ar_size_parse(colon + 1, &hi, err));
    if (hi < lo) return AR_ERR(err, AR_EINVAL, "size range '%s': end is below start", s);
    int k = 0;
    for (uint64_t v = lo; v <= hi; v *= 2) {
        if (k == max) return AR_ERR(err, AR_ELIMIT, "size range '%s' has more than %d sizes", s, max);
        sizes[k++] = v;
        if (v > UINT64_MAX / 2) break;
    }
    *n = k;
    return AR_OK;
}

const char *ar_size_format(uint64_t b, char *buf, size_t len) {
    static const char suf[] = "KMGT";
    int i = -1;
    while (i < 3 && b >= 1024 && b % 1024 == 0) { b /= 1024; i++; }
    if (i < 0) snprintf(buf, len, "%" PRIu64, b);
    else snprintf(buf, len, "%" PRIu64 "%c", b, suf[i]);
    return buf;
}

const char *ar_bytes_human(double b, char *buf, size_t len) {
    static const char *const bin[] = {"KiB", "MiB", "GiB", "TiB"};
    static const char *const dec[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    int i = -1;
    double v = b;
    while (i < 3 && v >= 1024 && fmod(v, 1024) == 0) { v /= 1024; i++; }
    if (i >= 0 && v < 1024) {
        snprintf(buf, len, "%.0f %s", v, bin[i]);
        return buf;
    }
    for (i = 0, v = b; i < 5 && fabs(v) >= 1000; i++) v /= 1000;
    snprintf(buf, len, "%.3g %s", v, dec[i]);
    return buf;
}

const char *ar_rate_human(double gbps, char *buf, size_t len) {
    if (fabs(gbps) >= 1000) snprintf(buf, len, "%.4g TB/s", gbps / 1000);
    else snprintf(buf, len, "%.4g GB/s", gbps);
    return buf;
}

const char *ar_ns_human(double ns, char *buf, size_t len) {
    if (fabs(ns) >= 1e6) snprintf(buf, len, "%.4g ms", ns / 1e6);
    else if (fabs(ns) >= 1e3) snprintf(buf, len, "%.4g us", ns / 1e3);
    else snprintf(buf, len, "%.4g ns", ns);
    return buf;
}

float ar_bf16_to_f32(uint16_t v) {
    uint32_t u = (uint32_t)v << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t ar_f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
    return (uint16_t)(u >> 16);
}

float ar_fp16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    float f;
    if (exp == 0) {
        f = ldexpf((float)man, -24);
        return sign ? -f : f;
    }
    uint32_t u;
    if (exp == 31) u = sign | 0x7f800000u | (man << 13);
    else u = sign | ((exp + 112u) << 23) | (man << 13);
    memcpy(&f, &u, 4);
    return f;
}

uint16_t ar_f32_to_fp16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    float a = fabsf(f);
    if (isnan(f)) return sign | 0x7e00u;
    if (a >= 65520.0f) return sign | 0x7c00u; /* rounds to infinity */
    if (a < 0x1p-14f) {                      /* subnormal: units of 2^-24 */
        return sign | (uint16_t)lrintf(a * 0x1p24f);
    }
    int e;
    float m = frexpf(a, &e);                 /* a = m * 2^e, m in [0.5, 1) */
    uint32_t man = (uint32_t)lrintf(m * 2048.0f); /* 11 bits incl. implicit one */
    if (man == 2048) { man = 1024; e++; }
    uint32_t exp = (uint32_t)(e - 1 + 15);
    if (exp >= 31) return sign | 0x7c00u;
    return sign | (uint16_t)((exp << 10) | (man & 0x3ffu));
}

double ar_elem_load(const void *buf, ar_dtype_t t, uint64_t i) {
    switch (t) {
    case AR_BF16: return ar_bf16_to_f32(((const uint16_t *)buf)[i]);
    case AR_FP16: return ar_fp16_to_f32(((const uint16_t *)buf)[i]);
    default: return ((const float *)buf)[i];
    }
}

void ar_elem_store(void *buf, ar_dtype_t t, uint64_t i, float v) {
    switch (t) {
    case AR_BF16: ((uint16_t *)buf)[i] = ar_f32_to_bf16(v); break;
    case AR_FP16: ((uint16_t *)buf)[i] = ar_f32_to_fp16(v); break;
    default: ((float *)buf)[i] = v; break;
    }
}
