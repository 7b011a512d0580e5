/* fuzz: the hardware model loader (ar_model_load_string).
 * Input: the bytes of a model YAML document. */
#include <math.h>
#include "fuzz/fuzz.h"
#include "arsim/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_cstr(data, size);
    ar_model_t *m = NULL;
    ar_error_t err;
    ar_error_clear(&err);
    int rc = ar_model_load_string(text, "fuzz.yaml", &m, &err);
    if (rc != AR_OK) {
        fuzz_check_error(rc, &err);
        FUZZ_ASSERT(m == NULL);
        free(text);
        return 0;
    }
    /* A model that loads gives every op a finite, non-negative cost. */
    FUZZ_ASSERT(m != NULL);
    FUZZ_ASSERT(isfinite(m->clock_ghz) && m->clock_ghz > 0);
    FUZZ_ASSERT(m->nlinks >= 0);
    for (int i = 0; i < m->nlinks; i++) {
        FUZZ_ASSERT(isfinite(m->links[i].bw_gbps) && m->links[i].bw_gbps > 0);
        FUZZ_ASSERT(isfinite(m->links[i].lat_ns) && m->links[i].lat_ns >= 0);
        FUZZ_ASSERT(ar_model_link_kind(m, m->links[i].name) >= 0);
    }
    for (int k = 0; k < AR_NMEM; k++) {
        if (!m->mem[k].present) continue;
        FUZZ_ASSERT(isfinite(m->mem[k].read_gbps) && m->mem[k].read_gbps > 0);
        FUZZ_ASSERT(isfinite(m->mem[k].write_gbps) && m->mem[k].write_gbps > 0);
    }
    double g = ar_model_chan_read_gbps(m);
    FUZZ_ASSERT(!isnan(g) && g >= 0);
    ar_model_free(m);
    free(text);
    return 0;
}
