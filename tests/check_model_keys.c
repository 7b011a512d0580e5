/* Adding a model key is one line of the key table: this program adds one (through the
 * table's AR_MODEL_EXTRA_KEYS hook, compiling the model module with it) and sees it held
 * in the model, parsed with its range checked, written by the calibration writer's
 * ar_model_write and listed by ar_model_keys. */
#define AR_MODEL_EXTRA_KEYS(X) X(ROOT, test_term_ns, "ns", 0, 1, 5000, "a term this test adds in one line")
#include "model/model.c"

#include <check.h>
#include <stdlib.h>

static const char base[] =
    "clock_ghz: 1\n"
    "memory:\n"
    "  tcm: {present: false}\n"
    "  sram: {capacity_bytes: 1e6, read_gbps: 100, write_gbps: 100, lat_ns: 10}\n"
    "  hbm: {capacity_bytes: 1e9, read_gbps: 10, write_gbps: 10, lat_ns: 100}\n"
    "links:\n"
    "  - {name: wire, bw_gbps: 10, lat_ns: 100}\n"
    "reduce_gbps: 100\nchan_inflight_bytes: 8192\nchan_read_lat_ns: 1000\nchan_write_gbps: 20\n"
    "signal_lat_ns: 1000\nlaunch_ns: 1000\nhost_link_gbps: 10\nhost_link_lat_ns: 1000\n";

static int load(const char *extra, ar_model_t **m, ar_error_t *e) {
    char yaml[2048];
    snprintf(yaml, sizeof yaml, "%s%s", base, extra);
    ar_error_clear(e);
    return ar_model_load_string(yaml, "t.yaml", m, e);
}

START_TEST(test_added_key) {
    ar_model_t *m = NULL;
    ar_error_t e;
    /* held and parsed */
    ck_assert_int_eq(load("test_term_ns: 7\n", &m, &e), AR_OK);
    ck_assert_double_eq(m->test_term_ns, 7);
    /* written, and read back the same */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_int_eq(ar_model_write(f, m, NULL, NULL, NULL), AR_OK);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "\ntest_term_ns: 7\n"));
    ar_model_t *back = NULL;
    ck_assert_int_eq(ar_model_load_string(text, "back.yaml", &back, &e), AR_OK);
    ck_assert_double_eq(back->test_term_ns, 7);
    ck_assert_double_eq(back->links[0].bw_gbps, 10);
    ar_model_free(back);
    free(text);
    ar_model_free(m);
    /* optional: 0 when absent */
    ck_assert_int_eq(load("", &m, &e), AR_OK);
    ck_assert_double_eq(m->test_term_ns, 0);
    ar_model_free(m);
    /* its range, from the table */
    ck_assert_int_eq(load("test_term_ns: 9000\n", &m, &e), AR_EMODEL);
    ck_assert_ptr_nonnull(strstr(e.message, "test_term_ns"));
    ck_assert_ptr_nonnull(strstr(e.message, "out of range: 1 to 5000 ns"));
    /* listed */
    const ar_model_key_t *k = ar_model_key_find("test_term_ns");
    ck_assert_ptr_nonnull(k);
    ck_assert_str_eq(k->unit, "ns");
    ck_assert_str_eq(k->meaning, "a term this test adds in one line");
    int n;
    ck_assert_ptr_eq(&ar_model_keys(&n)[n - 1], k);
}
END_TEST

int main(void) {
    Suite *s = suite_create("model_keys");
    TCase *tc = tcase_create("ar_model_keys");
    tcase_add_test(tc, test_added_key);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
