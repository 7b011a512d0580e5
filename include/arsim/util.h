/* arsim: small helpers every room uses (common/util.c). */
#ifndef ARSIM_UTIL_H
#define ARSIM_UTIL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on a monotonic clock: for wall times and progress, never for results. */
double ar_now_s(void);
/* The current UTC time as 2026-11-25T19:26:54Z. */
void ar_utc_date(char *buf, size_t len);
/* Room for element n of the array *arrayp (elements of elem bytes, *cap of them): when
 * n == *cap the array doubles (16 elements first). AR_OK, or AR_ENOMEM with the array as
 * it was. */
int ar_grow(void *arrayp, size_t *cap, size_t n, size_t elem);
/* The path of a data folder (model, topologies, validate/refs ...) under the data
 * directory: ARSIM_DATADIR when set (arsim's --data-dir sets it); else, for an installed
 * arsim, the installed one (pkgdatadir); else the build's source tree (falling back to the
 * other of the two when the first has no topologies/). */
const char *ar_data_path(const char *sub, char *buf, size_t len);
/* The names (without .yaml) of the YAML files in the data folder sub ("model",
 * "topologies"), sorted, NULL-terminated: what `arsim list` shows and a name finds.
 * Read once per process; an empty list when the folder cannot be read. */
const char *const *ar_data_names(const char *sub);
/* Whether path names a directory (following symlinks). */
int ar_is_dir(const char *path);
/* free() each of the n pointers: for a struct's owned arrays, released together. */
void ar_free_each(void *const *p, size_t n);
#define AR_FREE_EACH(...) ar_free_each((void *const[]){__VA_ARGS__}, sizeof((void *[]){__VA_ARGS__}) / sizeof(void *))
/* n zeroed elements of size bytes whose pages cost nothing until touched (fresh pages
 * from the system from AR_ZEROED_PAGES_MIN bytes on; calloc below): for arrays sized for
 * every rank of which a plan of one rank writes its own part alone. NULL when out of
 * memory; freed by ar_zeroed_free with the same n and size. */
#define AR_ZEROED_PAGES_MIN ((size_t)1 << 20)
void *ar_zeroed(size_t n, size_t size);
void ar_zeroed_free(void *p, size_t n, size_t size);
/* A count for people: 950, 12.3k, 4.5M, 1.2G (powers of 1000); returns buf. */
const char *ar_count_format(double n, char *buf, size_t len);
/* The median of v[0..n) (0 when n is 0), the mean of the middle two for even n; v is
 * sorted in place. */
double ar_median(double *v, size_t n);

#ifdef __cplusplus
}
#endif
#endif
