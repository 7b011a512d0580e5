/* fuzz: the topology loader (ar_topo_load_string), and the routing it builds.
 * Input: the bytes of a topology YAML document. */
#include "fuzz/fuzz.h"
#include "arsim/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_cstr(data, size);
    ar_topo_t *t = NULL;
    ar_error_t err;
    ar_error_clear(&err);
    int rc = ar_topo_load_string(text, "fuzz.yaml", NULL, &t, &err);
    if (rc != AR_OK) {
        fuzz_check_error(rc, &err);
        FUZZ_ASSERT(t == NULL);
        free(text);
        return 0;
    }
    /* A topology that loads is one the rest of arsim may use: check its shape
     * and walk a bounded sample of its routes. */
    FUZZ_ASSERT(t != NULL && t->model != NULL);
    FUZZ_ASSERT(t->ndevices >= 1 && t->ndevices <= t->nnodes && t->nranks >= 1);
    for (int r = 0; r < t->nranks; r++) {
        int d = ar_topo_rank_device(t, r);
        FUZZ_ASSERT(d >= 0 && d < t->ndevices);
    }
    for (int l = 0; l < t->nlinks; l++) {
        FUZZ_ASSERT(t->links[l].a >= 0 && t->links[l].a < t->nnodes);
        FUZZ_ASSERT(t->links[l].b >= 0 && t->links[l].b < t->nnodes);
        FUZZ_ASSERT(t->links[l].kind >= 0 && t->links[l].kind < t->model->nlinks);
        FUZZ_ASSERT(t->links[l].count >= 1);
    }
    enum { MAXHOP = 64 };
    int links[MAXHOP], dirs[MAXHOP];
    int nd = t->ndevices < 16 ? t->ndevices : 16;
    for (int a = 0; a < nd; a++)
        for (int b = 0; b < nd; b++) {
            int h = ar_topo_route(t, a, b, links, dirs, MAXHOP);
            FUZZ_ASSERT(h >= -1);
            for (int i = 0; i < h && i < MAXHOP; i++)
                FUZZ_ASSERT(links[i] >= 0 && links[i] < t->nlinks && (dirs[i] == 1 || dirs[i] == -1));
        }
    int nr = t->nranks < 16 ? t->nranks : 16;
    for (int a = 0; a < nr; a++)
        for (int b = 0; b < nr; b++) {
            FUZZ_ASSERT(ar_topo_rank_hops(t, a, b) >= 0 || !ar_topo_rank_adjacent(t, a, b));
        }
    /* A large grid (thousands of nodes) is valid but takes 0.1-0.3 s to route
     * under the sanitizers. Returning -1 asks libFuzzer not to keep it in the
     * corpus, where its mutations drag the executions per second down tenfold
     * while adding nothing to the parser's coverage. (libFuzzer honours -1 from
     * LLVM 16 on; clang 14's keeps such inputs, and a million executions take
     * about 8 minutes instead of 1.) The size limits themselves are tested in
     * fuzz/check_limits.c. */
    int big = t->nnodes > 256;
    ar_topo_free(t);
    free(text);
    return big ? -1 : 0;
}
