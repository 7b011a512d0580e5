/* arsim: small shared vocabulary: element types, memory levels, size parsing. */
#ifndef ARSIM_TYPES_H
#define ARSIM_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include "arsim/error.h"

typedef enum ar_dtype_e { AR_BF16 = 0, AR_FP16 = 1, AR_FP32 = 2, AR_NDTYPE } ar_dtype_t;

/* Memory levels of a device, fastest first. */
typedef enum ar_mem_e { AR_MEM_TCM = 0, AR_MEM_SRAM = 1, AR_MEM_HBM = 2, AR_NMEM } ar_mem_t;

size_t ar_dtype_size(ar_dtype_t t);
/* The vector the GPU executor moves (16 bytes): an op whose pointers sit on it moves whole
 * vectors; one off it takes a scalar head or tail, which the model charges (op_misalign_ns).
 * Plans cut on it, and the defaults round odd counts to it. */
#define AR_VEC_BYTES 16u
static inline uint64_t ar_vec_elems(ar_dtype_t t) { return AR_VEC_BYTES / ar_dtype_size(t); }
const char *ar_dtype_name(ar_dtype_t t);
int ar_dtype_parse(const char *s, ar_dtype_t *out); /* AR_OK or AR_EINVAL */
/* The one number reader of every flag and file: the number starts at once (no space, no
 * '+'), nothing follows it, and it is finite. *end (may be NULL) receives where it stopped
 * instead of refusing what follows (for a size's suffix). AR_OK or AR_EINVAL (ERANGE too). */
int ar_parse_u64(const char *s, uint64_t *out, const char **end);
int ar_parse_long(const char *s, long *out);
int ar_parse_double(const char *s, double *out);
/* 1 when s may name a topology or a model: printable, no space, comma, quote or '#' (a
 * name is a field of every result row; such characters would split or comment it). */
int ar_name_ok(const char *s);
/* Relative tolerance of a sum of k terms at this dtype, against a float64 reference. */
double ar_dtype_tolerance(ar_dtype_t t, int k);

const char *ar_mem_name(ar_mem_t m);
int ar_mem_parse(const char *s, ar_mem_t *out);

/* "8K", "1M", "3G", "4096" (powers of 1024). Rejects 0, negatives, junk, overflow. */
int ar_size_parse(const char *s, uint64_t *bytes, ar_error_t *err);
/* "A:B" doubling sweep or a single size; fills up to max entries. */
int ar_size_range_parse(const char *s, uint64_t *sizes, int max, int *n, ar_error_t *err);
/* Human form: 8K, 1M, 1G, 1536 (exact when a suffix divides evenly). */
const char *ar_size_format(uint64_t bytes, char *buf, size_t len);
/* For people: bytes as "32 GiB" where a whole number of KiB..TiB, else "141 GB" (3
 * significant digits); a rate in GB/s as "478.1 GB/s" or "10 TB/s"; nanoseconds as "300 ns"
 * or "1.5 us". */
const char *ar_bytes_human(double bytes, char *buf, size_t len);
const char *ar_rate_human(double gbps, char *buf, size_t len);
const char *ar_ns_human(double ns, char *buf, size_t len);

/* Conversions between the host's float and the storage formats (round to nearest even). */
float ar_bf16_to_f32(uint16_t v);
uint16_t ar_f32_to_bf16(float f);
float ar_fp16_to_f32(uint16_t v);
uint16_t ar_f32_to_fp16(float f);
/* Element i of a typed buffer, as double; and store a float into it. */
double ar_elem_load(const void *buf, ar_dtype_t t, uint64_t i);
void ar_elem_store(void *buf, ar_dtype_t t, uint64_t i, float v);

#endif
