#include "tests/suites.h"

Suite *suite_model(void) {
    Suite *s = suite_create("model");
    return s;
}
