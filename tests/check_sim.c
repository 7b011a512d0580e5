#include "tests/suites.h"

Suite *suite_sim(void) {
    Suite *s = suite_create("sim");
    return s;
}
