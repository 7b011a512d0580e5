#include "tests/suites.h"

Suite *suite_algos(void) {
    Suite *s = suite_create("algos");
    return s;
}
