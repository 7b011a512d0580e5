/* mesh2d: a W x H grid without wrap-around links, neighbour links only. Where a
 * side is even (or the grid has at most 2 devices) a snake ring through every
 * device runs the ring algorithm; otherwise (odd x odd, or a line) a snake path
 * runs two pipelined chains per lane, half the data reduced towards each end
 * and broadcast back, so both directions of every link carry data. */
#include <stdlib.h>
#include "algorithms/internal.h"

static int check_order(const ar_topo_t *t, const int *ord, int n, int cycle, int W, int H,
                       ar_error_t *err) {
    for (int i = 0; i + 1 < n + (cycle ? 1 : 0); i++) {
        int a = ord[i], b = ord[(i + 1) % n];
        if (!ar_topo_rank_adjacent(t, a, b))
            return AR_ERR(err, AR_EUNFIT,
                          "mesh2d: ranks %d and %d are not neighbours on %s (snake %s of the %dx%d "
                          "grid)",
                          a, b, t->name, cycle ? "ring" : "path", W, H);
    }
    return AR_OK;
}

int ar__build_mesh2d(const ar_topo_t *t, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                     ar_plan_t **out, ar_error_t *err) {
    int P = t->nranks, W, H;
    int *rank_at = malloc((size_t)P * sizeof *rank_at), *ord = malloc((size_t)P * sizeof *ord);
    int *rev = malloc((size_t)P * sizeof *rev), *par = malloc((size_t)P * 2 * sizeof *par);
    uint64_t *nrecv = calloc((size_t)P, sizeof *nrecv);
    ar_plan_t *p = NULL;
    ar__tree_t tr[2] = {{0}, {0}};
    if (!rank_at || !ord || !rev || !par || !nrecv) {
        free(rank_at); free(ord); free(rev); free(par); free(nrecv);
        return AR_ERR(err, AR_ENOMEM, "mesh2d: out of memory");
    }
    int rc = ar__grid("mesh2d", t, o, 0, &W, &H, rank_at, err);
    /* a ring (or two chains) over every rank: per lane, each rank a step per other rank */
    if (rc == AR_OK) rc = ar__plan_fits("mesh2d", P, (uint64_t)ar__lanes(t, o, count, dt, AR__MAX_LANES_MESH2D) * (uint64_t)P * (uint64_t)(P - 1), err);
    int cycle = 0;
    if (rc == AR_OK) {
        cycle = ar__snake_cycle(W, H, ord);
        if (!cycle) ar__snake_path(W, H, ord);
        for (int i = 0; i < P; i++) ord[i] = rank_at[ord[i]];
        rc = check_order(t, ord, P, cycle, W, H, err);
    }
    int lanes = ar__lanes(t, o, count, dt, AR__MAX_LANES_MESH2D);
    if (rc == AR_OK) {
        if (cycle) {
            rc = ar_plan_new("mesh2d", P, lanes, count, dt, &p);
            if (rc == AR_OK) p->scratch_elems = count;
            for (int i = 0; i < P; i++) rev[i] = ord[(P - i) % P];
            for (int c = 0; c < lanes && rc == AR_OK; c++) {
                uint64_t lo, len;
                ar__split(0, count, lanes, c, &lo, &len);
                for (int i = 0; i < P; i++) nrecv[i] = 0;
                ar__ring_t r = {p, P, (c % 2 && P > 2) ? rev : ord, c, 2u * c, 2u * c + 1, 0,
                                nrecv, 0};
                uint64_t group = ar__chunk_elems(o, len, dt, P) * (uint64_t)P;
                for (uint64_t g = lo; g < lo + len && rc == AR_OK; g += group) {
                    uint64_t ge = lo + len - g < group ? lo + len : g + group;
                    rc = ar__ring_rs(&r, g, ge, AR_BUF_IN);
                    if (rc == AR_OK) rc = ar__ring_ag(&r, g, ge);
                }
                if (rc == AR_OK) rc = ar__ring_end(&r);
            }
        } else {
            /* two chains on the path: tree 0 rooted at the last rank (parents point
             * forward), tree 1 at the first; each lane: 4 channels */
            for (int i = 0; i < P; i++) {
                par[ord[i]] = i + 1 < P ? ord[i + 1] : -1;
                par[P + ord[i]] = i > 0 ? ord[i - 1] : -1;
            }
            uint32_t nf = ar__tree_nflags(1);
            rc = ar_plan_new("mesh2d", P, 4 * lanes, count, dt, &p);
            if (rc == AR_OK) p->scratch_elems = count;
            for (int c = 0; c < lanes && rc == AR_OK; c++) {
                uint64_t lo, len;
                ar__split(0, count, lanes, c, &lo, &len);
                for (int h = 0; h < 2 && rc == AR_OK; h++) {
                    uint64_t ho, hl;
                    ar__split(lo, lo + len, 2, h, &ho, &hl);
                    tr[h] = (ar__tree_t){p, P, par + h * P, ord[h ? 0 : P - 1], 1, 4 * c + 2 * h,
                                         4 * c + 2 * h + 1, (uint32_t)(2 * c + h) * nf, 0, 0,
                                         NULL, NULL, NULL};
                    rc = ar__tree_init(&tr[h]);
                    if (rc == AR_OK)
                        rc = ar__tree_run(&tr[h], ho, ho + hl, ar__chunk_elems(o, hl, dt, 1));
                    ar__tree_fini(&tr[h]);
                }
            }
        }
    }
    if (rc == AR_OK) rc = ar_plan_finish(p);
    free(rank_at); free(ord); free(rev); free(par); free(nrecv);
    if (rc != AR_OK) {
        ar_plan_free(p);
        if (rc == AR_ENOMEM || rc == AR_ELIMIT) AR_ERR(err, rc, "mesh2d: %s", ar_plan_strerror(rc));
        return rc;
    }
    *out = p;
    return AR_OK;
}
