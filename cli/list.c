/* arsim list algos|probes|topologies|models|backends */
#include <stdio.h>
#include <string.h>
#include "config.h"
#include "cli/internal.h"
#include "cli/opts.h"

/* The collectives an algorithm computes, by their initials: "ar,rs,ag". The fused ops are
 * left out: each runs an algorithm of the collective inside it (matmul-allreduce an ar one,
 * allgather-matmul an ag one), as the header says. */
static void ops_of(const ar_algo_t *a, char *buf, size_t len) {
    static const char *const initials[AR_NCOLL] = {"ar", "rs", "ag"};
    buf[0] = 0;
    for (int c = 0; c < AR_NCOLL; c++)
        if (!ar_coll_fused((ar_coll_t)c) && ar_algo_computes(a, (ar_coll_t)c))
            snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "," : "", initials[c]);
}

static int list_algos(void) {
    char ops[16];
    printf("# ops (--op): ar allreduce, rs reducescatter, ag allgather; matmul-allreduce runs an ar\n"
           "# algorithm, allgather-matmul an ag one\n");
    printf("%-12s %-9s %-9s %s\n", "# name", "alias", "ops", "idea");
    for (const ar_algo_t *const *a = ar_algo_all(); a && *a; a++) {
        ops_of(*a, ops, sizeof ops);
        printf("%-12s %-9s %-9s %s\n", (*a)->name, (*a)->alias ? (*a)->alias : "-", ops,
               (*a)->summary ? (*a)->summary : "");
    }
    const ar_algo_t *au = ar_algo_auto_entry();
    ops_of(au, ops, sizeof ops);
    printf("%-12s %-9s %-9s %s\n", au->name, "-", ops, au->summary);
    return 0;
}

static int list_probes(void) {
    printf("%-15s %s\n", "# probe plan", "what it measures (N: a count 1..60, as in x-chain34)");
    for (int i = 0; i < ar_algo_probe_count(); i++)
        printf("%-15s %s\n", ar_algo_probe(i)->name, ar_algo_probe(i)->summary);
    return 0;
}

static int list_topologies(void) {
    printf("# shipped topologies (%s):\n", ar_topo_dir());
    for (const char *const *n = ar_topo_shipped(); n && *n; n++) printf("%s\n", *n);
    printf("# builders (SPEC): ring_1d:N  torus_2d:WxH  mesh_2d:WxH  full:N  switch:N\n");
    return 0;
}

static int list_models(void) {
    printf("# shipped hardware models (%s):\n", ar_model_dir());
    for (const char *const *n = ar_model_shipped(); n && *n; n++) printf("%s\n", *n);
    return 0;
}

static int list_backends(void) {
    printf("%-10s %-8s %s\n", "# name", "built", "what it does");
    for (const ar_backend_ops_t *const *b = ar_backend_all(); b && *b; b++)
        printf("%-10s %-8s %s\n", (*b)->name, "yes", (*b)->summary ? (*b)->summary : "");
    static const char *const all[] = {"ref", "analytic", "sim", "cuda"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (ar_backend_known_missing(all[i]))
            printf("%-10s %-8s %s\n", all[i], "no", "left out of this build (see ./configure's summary)");
    return 0;
}

int ar_cli_list(int argc, char **argv) {
    static const struct { const char *what; int (*fn)(void); } whats[] = {
        {"algos", list_algos}, {"algorithms", list_algos}, {"probes", list_probes}, {"topologies", list_topologies},
        {"topos", list_topologies}, {"models", list_models}, {"backends", list_backends},
    };
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: arsim list algos|probes|topologies|models|backends\n");
        return 0;
    }
    if (argc < 2) return ar_cli_fail("list", "what to list? (algos, probes, topologies, models, backends)");
    if (argc > 2) return ar_cli_fail("list", "unexpected argument '%s'", argv[2]);
    for (size_t i = 0; i < sizeof whats / sizeof whats[0]; i++)
        if (strcmp(argv[1], whats[i].what) == 0) return whats[i].fn();
    return ar_cli_fail("list", "'%s': unknown list (algos, probes, topologies, models, backends)", argv[1]);
}
