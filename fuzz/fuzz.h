/* fuzz: shared helpers for the fuzz targets.
 *
 * Each target defines LLVMFuzzerTestOneInput. Built with clang and
 * -fsanitize=fuzzer it is a libFuzzer binary (`make fuzz`); built with the
 * ordinary compiler and fuzz/replay.c it is a replay driver that feeds every
 * committed corpus file to the same function (`make check`).
 *
 * A target never returns quietly from something wrong: a broken invariant
 * (an error without a message, a status that is not one of ours) aborts, so
 * the fuzzer records it as a crash. */
#ifndef ARSIM_FUZZ_FUZZ_H
#define ARSIM_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arsim/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond)                                                        \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__,      \
                    __LINE__, #cond);                                            \
            abort();                                                             \
        }                                                                        \
    } while (0)

/* The input as a NUL-terminated string (caller frees). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    if (!s) abort();
    if (size) memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* A failed call must say what failed: one of our status codes, recorded in err
 * with a message. (A message may quote a scalar holding a newline; the CLI folds
 * it onto one line, and fuzz/opts.c checks that contract.) */
static inline void fuzz_check_error(int rc, const ar_error_t *err) {
    FUZZ_ASSERT(rc < 0 && rc >= AR_ELIMIT);
    FUZZ_ASSERT(err->code == rc);
    FUZZ_ASSERT(err->message[0] != '\0');
}

#endif
