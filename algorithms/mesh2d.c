/* mesh2d: a W x H grid without wrap-around links, neighbour links only.
 *
 * Every rank owns one block of the vector; each block is reduced up a spanning tree
 * rooted at its owner whose edges go along one dimension and then the other, and
 * broadcast back down the same tree. Half of the blocks reduce along X first (rows
 * towards the owner's column, then that column towards the owner), the other half Y
 * first. Over all the trees every link direction of a row carries each X-first block
 * once and each Y-first block only where its column meets the owner's row, so a W x H
 * mesh's links carry S/2 + S/(2H) (rows) and S/2 + S/(2W) (columns): 5/8 S on 4x4, the
 * bound of the mesh's links (2(D-1) S over all of them), where a ring through every
 * device would carry 2(D-1)/D S over a corner's two links. On a line (W or H is 1) the
 * two orders are one. The trees of a lane share its two channels (reduce, broadcast):
 * every rank emits their chunks in the same order, so a tree waits only on itself. */
#include <stdlib.h>
#include "algorithms/internal.h"

/* The most children a rank has in any tree: a root inside the grid, one on each side. */
#define MAXDEG 4

/* One rank's chunk of one tree, with the keys that order a rank's chunks: children
 * reduce a chunk before their parent (deeper first), parents broadcast it before their
 * children (shallower first), round by round. Every rank orders by the same keys, so
 * each waits only on chunks its neighbours emit earlier in theirs: no cycle, and the
 * trees' chunks flow through the grid as a pipeline instead of one tree at a time. */
typedef struct task_s {
    uint64_t reduce_key, bcast_key;
    int order; /* among chunks of equal key */
    int tree;
    uint64_t round;
} task_t;

static int by_key(uint64_t a, uint64_t b, int ta, int tb) {
    return a != b ? (a < b ? -1 : 1) : (ta > tb) - (ta < tb);
}
static int by_reduce(const void *x, const void *y) {
    const task_t *a = x, *b = y;
    return by_key(a->reduce_key, b->reduce_key, a->order, b->order);
}
static int by_bcast(const void *x, const void *y) {
    const task_t *a = x, *b = y;
    return by_key(a->bcast_key, b->bcast_key, a->order, b->order);
}

/* Grid point one step from a towards b along one coordinate. */
static int toward(int a, int b) { return a < b ? a + 1 : a > b ? a - 1 : a; }

/* Parents of the tree rooted at grid point (x0, y0), in ranks: along X first (x_first)
 * or Y first. A tree edge between ranks whose devices are not linked is routed. */
static void grid_tree(int W, int H, const int *rank_at, int x0, int y0, int x_first, int *par) {
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int px = x, py = y;
            if (x_first ? x != x0 : y == y0) px = toward(x, x0);
            else py = toward(y, y0);
            const int v = rank_at[y * W + x];
            par[v] = px == x && py == y ? -1 : rank_at[py * W + px];
        }
}

int ar__build_mesh2d(const ar_topo_t *t, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                     ar_plan_t **out, ar_error_t *err) {
    const int P = t->nranks;
    int W, H;
    int *rank_at = malloc((size_t)P * sizeof *rank_at);
    if (!rank_at) return AR_ERR(err, AR_ENOMEM, "mesh2d: out of memory");
    int rc = ar__grid("mesh2d", t, o, &W, &H, rank_at, err);
    const int orders = W > 1 && H > 1 ? 2 : 1, ntrees = orders * P, lanes = ar__lanes(t, o, count, dt, AR__MAX_LANES_MESH2D);
    const uint32_t nf = ar__tree_nflags(MAXDEG);
    const int dmax = W - 1 + H - 1; /* the deepest any tree goes */
    /* per lane and tree, every rank but the root reduces at least one source into its
     * parent and copies the result back */
    if (rc == AR_OK) rc = ar__plan_fits(o, "mesh2d", P, (uint64_t)lanes * (uint64_t)ntrees * (uint64_t)(P - 1) * 3u, err);
    int *par = rc == AR_OK ? malloc((size_t)ntrees * (size_t)P * sizeof *par) : NULL;
    ar__tree_t *tr = rc == AR_OK ? calloc((size_t)ntrees, sizeof *tr) : NULL;
    task_t *task = NULL; /* one rank's chunks of one lane */
    uint64_t *slot_at = rc == AR_OK ? malloc((size_t)ntrees * (size_t)P * sizeof *slot_at) : NULL;
    uint64_t *used = rc == AR_OK ? calloc((size_t)P, sizeof *used) : NULL; /* SCRATCH per rank */
    ar_addr_t sv[MAXDEG + 1];
    if (rc == AR_OK && (!par || !tr || !slot_at || !used)) rc = AR_ERR(err, AR_ENOMEM, "mesh2d: out of memory");
    for (int k = 0; k < ntrees && rc == AR_OK; k++)
        grid_tree(W, H, rank_at, (k % P) % W, (k % P) / W, k < P, par + (size_t)k * P);
    ar_plan_t *p = NULL;
    const int told = rc != AR_OK; /* err already says why */
    if (rc == AR_OK) rc = ar__plan_new(o, "mesh2d", P, 2 * lanes, count, dt, &p);
    if (rc == AR_OK) p->shift_w = W; /* rows of W ranks: their grid's shifts map it onto itself */
    for (int c = 0; c < lanes && rc == AR_OK; c++) {
        uint64_t lo, len;
        ar__split(0, count, lanes, c, &lo, &len);
        /* tree k reduces block k of the lane, owned by grid point k % P */
        uint64_t most = 0;
        for (int k = 0; k < ntrees && rc == AR_OK; k++) {
            uint64_t bo, bl;
            ar__split(lo, lo + len, ntrees, k, &bo, &bl);
            if (bl > most) most = bl;
            /* each rank's SCRATCH holds, tree after tree, a block for each of its children,
             * element x of a slot at the same alignment as IN's x (ar__slot_stride) */
            const uint64_t sl = ar__slot_stride(bl, dt), vec = ar__slot_stride(1, dt);
            tr[k] = (ar__tree_t){p, P, par + (size_t)k * P, rank_at[k % P], MAXDEG, 2 * c, 2 * c + 1,
                                 ((uint32_t)c * (uint32_t)ntrees + (uint32_t)k) * nf, 0, 0, NULL, NULL, NULL,
                                 slot_at + (size_t)k * P, bo, sl, 0, 0};
            rc = ar__tree_init(&tr[k]);
            for (int v = 0; v < P && rc == AR_OK; v++) {
                uint64_t at = used[v] + (bo + vec - used[v] % vec) % vec;
                slot_at[(size_t)k * P + v] = at;
                used[v] = at + (uint64_t)tr[k].nchild[v] * sl;
            }
        }
        const uint64_t chunk = ar__chunk_elems(o, most, dt, 1), rounds = most ? (most - 1) / chunk + 1 : 0;
        task_t *grown = rc == AR_OK ? realloc(task, (size_t)(rounds ? rounds : 1) * (size_t)ntrees * sizeof *task) : NULL;
        if (rc == AR_OK && !grown) rc = AR_ENOMEM;
        if (grown) task = grown;
        for (int g = 0; g < P && rc == AR_OK; g++) {
            const int v = rank_at[g];
            size_t n = 0;
            for (uint64_t i = 0; i < rounds; i++)
                for (int k = 0; k < ntrees; k++) {
                    uint64_t bo, bl;
                    ar__split(lo, lo + len, ntrees, k, &bo, &bl);
                    if (i * chunk >= bl) continue;
                    const int r = k % P, depth = abs(g % W - r % W) + abs(g / W - r / W);
                    task[n++] = (task_t){i * (uint64_t)(dmax + 1) + (uint64_t)(dmax - depth),
                                         i * (uint64_t)(dmax + 1) + (uint64_t)depth,
                                         (k + c * ntrees / lanes) % ntrees, k, i};
                }
            for (int bc = 0; bc < 2 && rc == AR_OK; bc++) {
                qsort(task, n, sizeof *task, bc ? by_bcast : by_reduce);
                for (size_t q = 0; q < n && rc == AR_OK; q++) {
                    uint64_t bo, bl;
                    const int k = task[q].tree;
                    ar__split(lo, lo + len, ntrees, k, &bo, &bl);
                    const uint64_t at = task[q].round * chunk, cl = bl - at < chunk ? bl - at : chunk;
                    rc = bc ? ar__tree_bcast_rank(&tr[k], v, bo + at, cl, task[q].round + 1)
                            : ar__tree_reduce_rank(&tr[k], v, bo + at, cl, task[q].round + 1, sv);
                }
            }
        }
        for (int k = 0; k < ntrees; k++) {
            uint64_t bo, bl;
            ar__split(lo, lo + len, ntrees, k, &bo, &bl);
            tr[k].nchunks = bl ? (bl - 1) / chunk + 1 : 0;
        }
        for (int k = 0; k < ntrees && rc == AR_OK; k++) rc = ar__tree_end_signals(&tr[k]);
        for (int k = 0; k < ntrees && rc == AR_OK; k++) rc = ar__tree_end_waits(&tr[k]);
        for (int k = 0; k < ntrees; k++) ar__tree_fini(&tr[k]);
    }
    if (rc == AR_OK)
        for (int v = 0; v < P; v++)
            if (used[v] > p->scratch_elems) p->scratch_elems = used[v];
    free(rank_at);
    free(par);
    free(tr);
    free(task);
    free(slot_at);
    free(used);
    if (told) {
        ar_plan_free(p);
        return rc;
    }
    return ar__plan_done(p, rc, "mesh2d", out, err);
}
