/* arsim: status codes and the error record every fallible call fills. */
#ifndef ARSIM_ERROR_H
#define ARSIM_ERROR_H

#include <stdarg.h>

/* One list, expanded into the enum and into ar_strerror(). */
#define AR_ERRNO_MAP(X)                                                     \
    X(EINVAL,   -1, "invalid argument")                                     \
    X(ENOMEM,   -2, "out of memory")                                        \
    X(EIO,      -3, "cannot read or write file")                            \
    X(EPARSE,   -4, "malformed input")                                      \
    X(ETOPO,    -5, "invalid topology")                                     \
    X(EMODEL,   -6, "invalid hardware model")                               \
    X(EUNFIT,   -7, "algorithm does not fit the topology")                  \
    X(EPLAN,    -8, "plan failed verification")                             \
    X(ENOTSUP,  -9, "not supported by this backend or build")               \
    X(EDEVICE,  -10, "device error")                                        \
    X(ETIMEOUT, -11, "timed out")                                           \
    X(ECHECK,   -12, "result check failed")                                 \
    X(ELIMIT,   -13, "limit exceeded")

typedef enum ar_status_e {
    AR_OK = 0,
#define AR__ERR_ENUM(name, val, msg) AR_##name = (val),
    AR_ERRNO_MAP(AR__ERR_ENUM)
#undef AR__ERR_ENUM
} ar_status_t;

/* Where and what. file/line/column are 0/"" when the error has no location;
 * line and column are 1-based when present. */
typedef struct ar_error_s {
    int code;
    char file[256];
    int line;
    int column;
    char message[256];
} ar_error_t;

const char *ar_strerror(int code);

/* Fill err (may be NULL) and return code. The one setter. */
int ar_error_set(ar_error_t *err, int code, const char *file, int line, int column,
                 const char *fmt, ...) __attribute__((format(printf, 6, 7)));
int ar_error_vset(ar_error_t *err, int code, const char *file, int line, int column,
                  const char *fmt, va_list ap);
/* Shorthand with no location. */
#define AR_ERR(err, code, ...) ar_error_set((err), (code), NULL, 0, 0, __VA_ARGS__)

void ar_error_clear(ar_error_t *err);

/* The one form of "does not fit in memory" (AR_ELIMIT): "LEVEL: needs NEED (WHAT), holds
 * HAVE; FIX", the sizes in human units: "hbm of gpu0: needs 172 GB (input and output of
 * 1 rank), holds 80 GiB; a smaller --size, fewer --ranks per device or another --buffer". */
#define AR_CAPACITY_FIX "a smaller --size, fewer --ranks per device or another --buffer"
int ar_capacity_err(ar_error_t *err, const char *level, double need, const char *what, double have,
                    const char *fix);

/* Render "file:line:col: message" (or just the message) into buf. */
const char *ar_error_format(const ar_error_t *err, char *buf, unsigned long len);

#define AR_TRY(expr)                                                        \
    do {                                                                    \
        int ar__rc = (expr);                                                \
        if (ar__rc != AR_OK) return ar__rc;                                 \
    } while (0)

#define AR_TRY_GOTO(expr, rcvar, label)                                     \
    do {                                                                    \
        (rcvar) = (expr);                                                   \
        if ((rcvar) != AR_OK) goto label;                                   \
    } while (0)

#endif
