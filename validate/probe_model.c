/* validate/probe_model: the model's time for the executor's probe plans (hw/probe.c),
 * to set beside what `arsim bench --backend cuda --algo x-...` measures: which
 * mechanism of the model is off, without any allreduce (docs/VALIDATION.md).
 *
 *   validate/probe_model MODEL TOPOLOGY RANKS PROBE CHANNELS BYTES[,BYTES...] [BACKEND]
 *
 * BYTES per rank, bf16, with an optional K, M or G suffix; BACKEND sim (default) or
 * analytic. Prints one line per size: probe, topology, ranks, channels, bytes, us. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arsim/backend.h"
#include "arsim/model.h"
#include "arsim/topo.h"
#include "hw/probe.h"

static int fail(const char *fmt, const char *a, const char *b) {
    fprintf(stderr, "probe_model: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return 2;
}

/* "64K" -> 65536; 0 when it is not a positive size. */
static unsigned long long parse_bytes(const char *s) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || v == 0) return 0;
    unsigned long long mul = *end == 'K' ? 1ull << 10 : *end == 'M' ? 1ull << 20 : *end == 'G' ? 1ull << 30 : 1;
    if (mul > 1) end++;
    if (*end || v > ~0ull / mul) return 0;
    return v * mul;
}

int main(int argc, char **argv) {
    if (argc < 7 || argc > 8)
        return fail("usage: probe_model MODEL TOPOLOGY RANKS PROBE CHANNELS BYTES[,BYTES...] [sim|analytic]%s%s", "", "");
    const char *backend = argc == 8 ? argv[7] : "sim";
    ar_error_t e;
    ar_error_clear(&e);
    char msg[512];
    ar_topo_t *t = NULL;
    if (ar_topo_open(argv[2], argv[1], &t, &e) != AR_OK)
        return fail("%s%s", ar_error_format(&e, msg, sizeof msg), "");
    char *end;
    long nranks = strtol(argv[3], &end, 10), channels = strtol(argv[5], NULL, 10);
    int rc = 0;
    if (*end || nranks < 1 || nranks > 64) rc = fail("RANKS '%s': want 1 to 64%s", argv[3], "");
    else if (nranks != t->nranks && ar_topo_place_blocks(t, (int)nranks, &e) != AR_OK)
        rc = fail("%s%s", ar_error_format(&e, msg, sizeof msg), "");
    char *sizes = strdup(argv[6]);
    for (char *save = NULL, *tok = strtok_r(sizes, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        unsigned long long bytes = parse_bytes(tok);
        if (!bytes || bytes % 2) {
            rc = fail("BYTES '%s': want a positive even byte count (K, M, G suffixes)%s", tok, "");
            break;
        }
        ar_plan_t *p = NULL;
        ar_run_opts_t o = AR_RUN_OPTS_DEFAULT;
        ar_result_t r;
        if (ar__probe_build(argv[4], (int)nranks, bytes / 2, AR_BF16, (int)channels, &p, &e) != AR_OK ||
            ar_backend_run(backend, t, p, &o, &r, &e) != AR_OK) {
            rc = fail("%s%s", ar_error_format(&e, msg, sizeof msg), "");
        } else {
            printf("%s %s %ld %ld %llu %.3f\n", argv[4], argv[2], nranks, channels, bytes, r.time_s * 1e6);
            fflush(stdout);
        }
        ar_plan_free(p);
    }
    free(sizes);
    ar_topo_free(t);
    return rc;
}
