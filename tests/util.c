/* Shared test helpers. */
#include <stdio.h>
#include "tests/suites.h"

const char *test_path(const char *rel) {
    static char buf[8][1024];
    static int slot;
    char *b = buf[slot++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", ARSIM_DATADIR, rel);
    return b;
}
