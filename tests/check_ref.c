#include "tests/suites.h"

Suite *suite_ref(void) {
    Suite *s = suite_create("ref");
    return s;
}
