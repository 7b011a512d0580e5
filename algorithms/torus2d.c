/* torus2d: on a W x H torus, per chunk group: reduce-scatter along the X ring of
 * each row, allreduce (ring) of the held block along the Y ring of each column,
 * all-gather along X; or the same with Y first. Lanes alternate the ring directions
 * and the dimension that goes first, so every link direction carries a first phase. */
#include <stdlib.h>
#include "algorithms/internal.h"

/* The place along a line of n of ring position i, the ring going forwards (d 0) or
 * backwards (d 1): in order, or (folded) out on the even places and back on the odd ones
 * (n = 5: 0, 2, 4, 3, 1). ring_pos is its inverse. */
static int ring_place(int i, int n, int d, int folded) {
    if (d) i = (n - i) % n;
    if (!folded) return i;
    return i < (n + 1) / 2 ? 2 * i : 2 * (n - 1 - i) + 1;
}
static int ring_pos(int x, int n, int d, int folded) {
    const int i = !folded ? x : x % 2 == 0 ? x / 2 : n - 1 - (x - 1) / 2;
    return d ? (n - i) % n : i;
}

int ar__build_torus2d(const ar_topo_t *t, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                      ar_plan_t **out, ar_error_t *err) {
    int P = t->nranks, W, H;
    int *rank_at = malloc((size_t)P * sizeof *rank_at);
    int *rows = malloc((size_t)P * 2 * sizeof *rows), *cols = malloc((size_t)P * 2 * sizeof *cols);
    uint64_t *nrecv = calloc((size_t)P * 2, sizeof *nrecv);
    ar_plan_t *p = NULL;
    if (!rank_at || !rows || !cols || !nrecv) {
        free(rank_at); free(rows); free(cols); free(nrecv);
        return AR_ERR(err, AR_ENOMEM, "torus2d: out of memory");
    }
    int rc = ar__grid("torus2d", t, o, &W, &H, rank_at, err);
    int lanes = ar__lanes(t, o, count, dt, AR__MAX_LANES_TORUS2D);
    /* each rank, per lane: a ring over its row (reduce-scatter, all-gather) and its column */
    if (rc == AR_OK)
        rc = ar__plan_fits(o, "torus2d", P, (uint64_t)lanes * (uint64_t)P * 3u * (uint64_t)(W - 1 + H - 1), err);
    if (rc == AR_OK) rc = ar__plan_new(o, "torus2d", P, lanes, count, dt, &p);
    if (rc == AR_OK) p->shift_w = W; /* rows of W ranks: their grid's shifts map it onto itself */
    const uint64_t stride = ar__slot_stride(count, dt); /* the second dimension's rings from here */
    if (rc == AR_OK) p->scratch_elems = 2 * stride;
    /* rows[dir][y*W + i]: rank at ring position i of row y; cols likewise. A mesh's row
     * is a line: its ring goes out on the even places and back on the odd ones, no hop
     * longer than two links and every link direction carrying one, where the ring in
     * order would come back from the far end in one hop across the whole line. */
    const int line = t->kind == AR_TOPO_MESH_2D;
    for (int d = 0; d < 2 && rc == AR_OK; d++) {
        for (int y = 0; y < H; y++)
            for (int i = 0; i < W; i++)
                rows[d * P + y * W + i] = rank_at[y * W + ring_place(i, W, d, line)];
        for (int x = 0; x < W; x++)
            for (int i = 0; i < H; i++)
                cols[d * P + x * H + i] = rank_at[ring_place(i, H, d, line) * W + x];
    }
    /* Both orders on a torus or a mesh, whose two dimensions are links of their own: the
     * first phase's bulk then loads both alike (mesh_2d_2x3 at 64 MB, accel_tcm: 750 us
     * against 1213 with rows first alone). Rows first alone where the grid is laid over
     * other links: along a ring the columns' rings cross the rows' links (both orders put
     * the bulk on the far rings too: 1.35x the time on ring_1d_8 at 1 MB), and on full or
     * switch the GPUs' plans keep the order they were measured with. But a square grid on a
     * switch goes columns first on every lane: that is rows first transposed, the same plan
     * but for which of the switch's alike devices is which (the same times), and its rows
     * stand for all where a row's allreduce cuts parts finer than 16 bytes (switch:16384 at
     * 8 KB: a row's 65 K ops, not every rank's 8.3 M). Along a ring the columns go first too
     * where a lane holds fewer elements than there are ranks: the columns' allreduce would
     * cut each block finer than an element a rank, so rows differ by position and every
     * rank's ops are timed, where rows first gains nothing, the time being the steps'
     * latencies over the same routes either way (ring_1d:16384 at 8 KB: 8930 us columns
     * first, a row's ops timed in 0.3 s, against 8937 us and 22 s). */
    const int mix = (t->kind == AR_TOPO_TORUS_2D || t->kind == AR_TOPO_MESH_2D) && W > 1 && H > 1;
    const int transposed = t->kind == AR_TOPO_SWITCH && W == H && W > 1;
    const int ring_tiny_first = t->kind == AR_TOPO_RING_1D && W > 1 && H > 1;
    for (int c = 0; c < lanes && rc == AR_OK; c++) {
        /* lanes take the four ways in turn: each ring direction, columns first or rows
         * first (where both are taken: mix), so that with four lanes or more every link
         * direction of both dimensions carries a first phase's bulk. Columns first on the
         * first two lanes: where a row's allreduce of its block splits it unevenly over the
         * row (fewer elements than ranks), every row still runs the same ops, and a row's
         * stand for all (a plan of a row, arsim/plan.h). On a mesh the order turns first:
         * a folded ring loads both directions of its line's links, and so does the
         * ring the other way, so a second lane in the other direction shares every link
         * the first loads, where one in the other order loads the other dimension's
         * (mesh_2d:64x64 at 64 MB, two lanes in one piece a lane: 1609 us the other
         * direction, 1318 the other order) */
        uint64_t lo, len;
        ar__split(0, count, lanes, c, &lo, &len);
        const int d = line ? (c / 2) % 2 : c % 2;
        const int yx = line ? !(c % 2) : mix ? !((c / 2) % 2) : transposed || (ring_tiny_first && len < (uint64_t)P);
        for (int i = 0; i < 2 * P; i++) nrecv[i] = 0;
        ar__ring_t rx[H > 0 ? H : 1], ry[W > 0 ? W : 1];
        for (int y = 0; y < H; y++)
            rx[y] = (ar__ring_t){p, W, rows + d * P + y * W, c, 4u * c, 4u * c + 1, 0,
                                 nrecv + y * W, 0, AR_COLL_ALLREDUCE, NULL, NULL, 0, 0};
        for (int x = 0; x < W; x++)
            ry[x] = (ar__ring_t){p, H, cols + d * P + x * H, c, 4u * c + 2, 4u * c + 3, stride,
                                 nrecv + P + x * H, 0, AR_COLL_ALLREDUCE, NULL, NULL, 0, 0};
        /* first: the rings of the dimension reduce-scattered first (nf of them, n1 long),
         * second: those of the other (the allreduce of the block each rank holds) */
        ar__ring_t *first = yx ? ry : rx, *second = yx ? rx : ry;
        const int nf = yx ? W : H, n1 = yx ? H : W, ns = yx ? H : W;
        uint64_t chunk = ar__chunk_elems(o, len, dt, W + H);
        uint64_t group = chunk * (uint64_t)n1;
        for (uint64_t g = lo; g < lo + len && rc == AR_OK; g += group) {
            uint64_t ge = lo + len - g < group ? lo + len : g + group;
            for (int f = 0; f < nf && rc == AR_OK; f++) rc = ar__ring_rs(&first[f], g, ge, AR_BUF_IN);
            /* second ring j holds block (pos(j) + 1) % n1 of the first rings' split, pos(j)
             * its ranks' position along the first rings */
            for (int j = 0; j < ns && rc == AR_OK; j++) {
                const int pos = ring_pos(j, n1, d, line);
                uint64_t bo, bl;
                ar__split(g, ge, n1, (pos + 1) % n1, &bo, &bl);
                rc = ar__ring_rs(&second[j], bo, bo + bl, AR_BUF_OUT);
                if (rc == AR_OK) rc = ar__ring_ag(&second[j], bo, bo + bl);
            }
            for (int f = 0; f < nf && rc == AR_OK; f++) rc = ar__ring_ag(&first[f], g, ge);
        }
        for (int y = 0; y < H && rc == AR_OK; y++) rc = ar__ring_end(&rx[y]);
        for (int x = 0; x < W && rc == AR_OK; x++) rc = ar__ring_end(&ry[x]);
    }
    if (rc == AR_OK) rc = ar_plan_finish(p);
    free(rank_at); free(rows); free(cols); free(nrecv);
    if (rc != AR_OK) {
        ar_plan_free(p);
        if (rc == AR_ENOMEM || rc == AR_ELIMIT) AR_ERR(err, rc, "torus2d: %s", ar_plan_strerror(rc));
        return rc;
    }
    *out = p;
    return AR_OK;
}
