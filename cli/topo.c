/* arsim topo show|check FILE|SPEC [--model M] [--ranks N] */
#include <stdio.h>
#include <string.h>
#include "config.h"
#include "cli/internal.h"
#include "cli/opts.h"

static void show(const ar_topo_t *t, const char *spec) {
    const ar_model_t *m = t->model;
    printf("topology  %s (%s", t->name[0] ? t->name : spec, ar_topo_kind_name(t->kind));
    if (t->grid_w > 0) printf(", %d wide x %d high", t->grid_w, t->grid_h);
    printf(")\n");
    if (t->path[0]) printf("file      %s\n", t->path);
    printf("model     %s%s%s\n", m ? m->name : "?", m && m->path[0] ? "  " : "", m && m->path[0] ? m->path : "");
    if (m) {
        printf("          clock %.3g GHz\n", m->clock_ghz);
        for (int l = 0; l < AR_NMEM; l++)
            if (m->mem[l].present) {
                char cap[32], rd[32], wr[32], lat[32];
                printf("          %-5s %9s  read %-11s write %-11s latency %s\n", ar_mem_name((ar_mem_t)l),
                       ar_bytes_human(m->mem[l].capacity_bytes, cap, sizeof cap),
                       ar_rate_human(m->mem[l].read_gbps, rd, sizeof rd),
                       ar_rate_human(m->mem[l].write_gbps, wr, sizeof wr), ar_ns_human(m->mem[l].lat_ns, lat, sizeof lat));
            }
    }
    int nsw = t->nnodes - t->ndevices;
    printf("devices   %d", t->ndevices);
    if (nsw) printf(" (+ %d switch%s)", nsw, nsw == 1 ? "" : "es");
    printf(":");
    for (int i = 0; i < t->nnodes; i++) printf(" %s%s", t->nodes[i].name, t->nodes[i].is_switch ? "*" : "");
    printf("\n");
    printf("links     %d\n", t->nlinks);
    for (int i = 0; i < t->nlinks; i++) {
        const ar_link_t *l = &t->links[i];
        const ar_link_kind_t *k = m && l->kind >= 0 && l->kind < m->nlinks ? &m->links[l->kind] : NULL;
        char bw[32], lat[32];
        printf("  %4d  %-10s <-> %-10s %-12s x%-3d %11s per direction, %s\n", i, t->nodes[l->a].name,
               t->nodes[l->b].name, k ? k->name : "?", l->count, ar_rate_human(ar_topo_link_gbps(t, i), bw, sizeof bw),
               ar_ns_human(k ? k->lat_ns : 0.0, lat, sizeof lat));
    }
    printf("ranks     %d\n", t->nranks);
    printf("placement");
    for (int r = 0; r < t->nranks; r++) {
        int d = ar_topo_rank_device(t, r);
        printf(" %d->%s", r, d >= 0 && d < t->nnodes ? t->nodes[d].name : "?");
    }
    printf("\n");
    const int diam = ar_topo_diameter(t); /* a loaded topology is connected */
    printf("diameter  %d hop%s between devices\n", diam, diam == 1 ? "" : "s");
}

int ar_cli_topo(int argc, char **argv) {
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: arsim topo show FILE|SPEC [--model FILE|NAME] [--ranks N]\n"
               "       arsim topo check FILE|SPEC [--model FILE|NAME]\n");
        return 0;
    }
    if (argc < 2) return ar_cli_fail("topo", "show or check? (arsim topo show|check FILE|SPEC)");
    const char *sub = argv[1];
    int is_show = strcmp(sub, "show") == 0, is_check = strcmp(sub, "check") == 0;
    if (!is_show && !is_check)
        return ar_cli_fail("topo", "'%s': unknown subcommand (show, check)", sub);
    char cmd[16];
    snprintf(cmd, sizeof cmd, "topo %s", sub);
    /* The shared parser takes --model and --ranks; the FILE|SPEC is the one positional. */
    const char *spec = NULL;
    char *rest[64];
    int nrest = 0;
    rest[nrest++] = argv[1];
    for (int i = 2; i < argc; i++) {
        if (nrest >= 62) return ar_cli_fail(cmd, "too many arguments");
        if (strcmp(argv[i], "--model") == 0 || strcmp(argv[i], "--ranks") == 0) {
            rest[nrest++] = argv[i];
            if (i + 1 < argc) rest[nrest++] = argv[++i];
        } else if (argv[i][0] == '-' || spec) {
            rest[nrest++] = argv[i];
        } else {
            spec = argv[i];
        }
    }
    rest[nrest] = NULL;
    ar_cli_opts_t o;
    const ar_cli_extra_t extra = {.takes = AR_CLI_O(MODEL) | AR_CLI_O(RANKS)};
    int rc = ar_cli_opts_parse(cmd, nrest, rest, AR_CLI_NO_SIZE, &extra, &o);
    if (rc == AR_CLI_HELP) { ar_cli_opts_free(&o); return 0; }
    if (rc) { ar_cli_opts_free(&o); return rc; }
    if (!spec) { ar_cli_opts_free(&o); return ar_cli_fail(cmd, "which topology? (FILE or SPEC)"); }
    ar_topo_t *t = NULL;
    rc = ar_cli_topo_open(&o, spec, &t);
    if (rc == 0) {
        if (is_show) show(t, spec);
        else printf("%s: ok (%d devices, %d links, %d ranks, model %s)\n", spec, t->ndevices,
                    t->nlinks, t->nranks, t->model ? t->model->name : "?");
        ar_topo_free(t);
    }
    ar_cli_opts_free(&o);
    return rc;
}
