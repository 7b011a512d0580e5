#include "tests/suites.h"

Suite *suite_topo(void) {
    Suite *s = suite_create("topo");
    return s;
}
