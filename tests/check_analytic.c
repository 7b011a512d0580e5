#include "tests/suites.h"

Suite *suite_analytic(void) {
    Suite *s = suite_create("analytic");
    return s;
}
