/* Status codes and the error record. */
#include <stdio.h>
#include <string.h>
#include "arsim/error.h"
#include "arsim/types.h"

const char *ar_strerror(int code) {
    switch (code) {
    case AR_OK: return "ok";
#define AR__ERR_STR(name, val, msg) case AR_##name: return msg;
        AR_ERRNO_MAP(AR__ERR_STR)
#undef AR__ERR_STR
    default: return "unknown error";
    }
}

int ar_error_vset(ar_error_t *err, int code, const char *file, int line, int column,
                  const char *fmt, va_list ap) {
    if (!err) return code;
    err->code = code;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    err->line = line;
    err->column = column;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    return code;
}

int ar_error_set(ar_error_t *err, int code, const char *file, int line, int column,
                 const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ar_error_vset(err, code, file, line, column, fmt, ap);
    va_end(ap);
    return code;
}

void ar_error_clear(ar_error_t *err) {
    if (err) memset(err, 0, sizeof *err);
}

const char *ar_error_format(const ar_error_t *err, char *buf, unsigned long len) {
    const char *msg = err->message[0] ? err->message : ar_strerror(err->code);
    if (err->file[0] && err->line > 0)
        snprintf(buf, len, "%s:%d:%d: %s", err->file, err->line, err->column, msg);
    else if (err->file[0])
        snprintf(buf, len, "%s: %s", err->file, msg);
    else
        snprintf(buf, len, "%s", msg);
    return buf;
}

int ar_capacity_err(ar_error_t *err, const char *level, double need, const char *what, double have,
                    const char *fix) {
    char n[32], h[32];
    ar_bytes_human(need, n, sizeof n);
    ar_bytes_human(have, h, sizeof h);
    if (strcmp(n, h) == 0) { /* too close for 3 digits: the bytes themselves */
        snprintf(n, sizeof n, "%.0f bytes", need);
        snprintf(h, sizeof h, "%.0f bytes", have);
    }
    return ar_error_set(err, AR_ELIMIT, NULL, 0, 0, "%s: needs %s (%s), holds %s; %s", level, n, what, h, fix);
}
