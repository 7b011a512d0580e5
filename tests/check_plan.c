#include "tests/suites.h"

Suite *suite_plan(void) {
    Suite *s = suite_create("plan");
    return s;
}
