/* Topologies: builders, routing and rank queries.
 *
 * SPECs (ar_topo_build; ar_topo_open in load.c resolves names):
 *   ring_1d:N     N devices in a ring, device i linked to i+1 mod N
 *   torus_2d:WxH  W columns (x) by H rows (y), device (x,y) is node y*W+x, links to the
 *                 x and y neighbours with wrap-around
 *   mesh_2d:WxH   the same grid without wrap-around
 *   full:N        every pair of the N devices linked directly
 *   switch:N      N devices, each linked to one switch node "sw0"
 * Devices are named d0..d(N-1). Every link is one bundle of the model's first link
 * kind with count 1, except where the wrap-around link and the direct link join the
 * same pair (a ring or torus side of 2): one bundle of count 2; and on full and switch,
 * whose bundles carry the model's `lanes` of that kind (switch: all of a device's,
 * full: split evenly among its N-1 peers, at least one each). 2x3 is not 3x2:
 * grid_w and grid_h keep what was asked.
 *
 * Default model when none is given: accel_tcm for ring_1d, torus_2d and mesh_2d (the
 * accelerator grids they describe), h200_sxm for full and switch (GPU boards).
 * ar_topo_build takes ownership of the model it is given, also on failure.
 *
 * Routing (topo_finish, run after every build or load): each node's distance to each
 * other comes from the builders' geometry for their kinds (ring, torus and mesh
 * distances, one hop on full, two through the switch), and from a BFS per destination,
 * kept in all-pairs tables, for any other shape; the next hop is the neighbour one step
 * closer with the lowest node index, over the lowest-index link to it, except on the
 * builders' rings and tori: a torus's X first, then Y, each the shorter way and forwards
 * when both ways are as short, the same seen from every device. Deterministic, shortest. Devices and switches both forward. A topology where some node cannot reach another is an
 * error naming that node. ar_topo_route also returns -1 when the route has more hops
 * than the caller's arrays hold (max).
 *
 * The YAML format is described at the top of topologies/load.c and in
 * topologies/README.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arsim/util.h"
#include "topologies/internal.h"

static const char *const kind_names[] = {"custom", "ring_1d", "torus_2d", "mesh_2d", "full",
                                         "switch"};

const char *ar_topo_kind_name(ar_topo_kind_t k) {
    return (unsigned)k < sizeof kind_names / sizeof kind_names[0] ? kind_names[k] : "?";
}

const char *ar__topo_default_model(ar_topo_kind_t k) {
    return (k == AR_TOPO_RING_1D || k == AR_TOPO_TORUS_2D || k == AR_TOPO_MESH_2D) ? "accel_tcm"
                                                                                  : "h200_sxm";
}

void ar_topo_free(ar_topo_t *t) {
    if (!t) return;
    AR_FREE_EACH(t->nodes, t->links, t->placement, t->adj_start, t->adj_nbr, t->adj_link, t->next_hop, t->next_link,
                 t->hops, t->bound_cache, t->tune_cache, t->symmetry_cache);
    ar_topo_free(t->cycle_view);
    ar_model_free(t->model);
    free(t);
}

int ar__topo_new(int ndevices, int nswitches, ar_topo_t **out, ar_error_t *err) {
    *out = NULL;
    if (ndevices < 1) return AR_ERR(err, AR_ETOPO, "devices: at least one device is needed");
    if ((long)ndevices + nswitches > AR__TOPO_MAX_NODES)
        return AR_ERR(err, AR_ELIMIT, "devices: more than %d nodes", AR__TOPO_MAX_NODES);
    ar_topo_t *t = calloc(1, sizeof *t);
    if (!t) return AR_ERR(err, AR_ENOMEM, "out of memory");
    t->nnodes = ndevices + nswitches;
    t->ndevices = ndevices;
    t->nodes = calloc((size_t)t->nnodes, sizeof *t->nodes);
    if (!t->nodes) { free(t); return AR_ERR(err, AR_ENOMEM, "out of memory"); }
    for (int i = 0; i < t->nnodes; i++) {
        t->nodes[i].is_switch = i >= ndevices;
        if (i < ndevices) snprintf(t->nodes[i].name, AR_NAME_MAX, "d%d", i);
        else snprintf(t->nodes[i].name, AR_NAME_MAX, "sw%d", i - ndevices);
    }
    *out = t;
    return AR_OK;
}

int ar__topo_add_link(ar_topo_t *t, int a, int b, int kind, int count, int merge) {
    if (merge)
        for (int i = 0; i < t->nlinks; i++) {
            ar_link_t *l = &t->links[i];
            if (l->kind == kind && ((l->a == a && l->b == b) || (l->a == b && l->b == a))) {
                l->count += count;
                return AR_OK;
            }
        }
    if ((t->nlinks & (t->nlinks - 1)) == 0) { /* grow at powers of two */
        int cap = t->nlinks ? t->nlinks * 2 : 4;
        ar_link_t *nl = realloc(t->links, (size_t)cap * sizeof *nl);
        if (!nl) return AR_ENOMEM;
        t->links = nl;
    }
    t->links[t->nlinks++] = (ar_link_t){.a = a, .b = b, .kind = kind, .count = count};
    return AR_OK;
}

/* Adjacency in CSR form, each node's neighbours sorted by (neighbour, link). */
typedef struct adj_s {
    int *start;  /* nnodes + 1 */
    int *nbr, *link;
} adj_t;

static int cmp_pair(const void *x, const void *y) {
    const int *a = x, *b = y;
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    return (a[1] > b[1]) - (a[1] < b[1]);
}

static int adj_build(const ar_topo_t *t, adj_t *g) {
    int n = t->nnodes;
    g->start = calloc((size_t)n + 1, sizeof(int));
    g->nbr = malloc(sizeof(int) * (size_t)(2 * t->nlinks + 1));
    g->link = malloc(sizeof(int) * (size_t)(2 * t->nlinks + 1));
    int *pairs = malloc(sizeof(int) * 2 * (size_t)(2 * t->nlinks + 1));
    if (!g->start || !g->nbr || !g->link || !pairs) { free(pairs); return AR_ENOMEM; }
    for (int i = 0; i < t->nlinks; i++) {
        g->start[t->links[i].a + 1]++;
        g->start[t->links[i].b + 1]++;
    }
    for (int i = 0; i < n; i++) g->start[i + 1] += g->start[i];
    int *fill = calloc((size_t)n, sizeof(int));
    if (!fill) { free(pairs); return AR_ENOMEM; }
    for (int i = 0; i < t->nlinks; i++) {
        int a = t->links[i].a, b = t->links[i].b;
        int pa = g->start[a] + fill[a]++, pb = g->start[b] + fill[b]++;
        pairs[2 * pa] = b; pairs[2 * pa + 1] = i;
        pairs[2 * pb] = a; pairs[2 * pb + 1] = i;
    }
    for (int v = 0; v < n; v++)
        qsort(pairs + 2 * g->start[v], (size_t)(g->start[v + 1] - g->start[v]), 2 * sizeof(int),
              cmp_pair);
    for (int k = 0; k < g->start[n]; k++) { g->nbr[k] = pairs[2 * k]; g->link[k] = pairs[2 * k + 1]; }
    free(fill);
    free(pairs);
    return AR_OK;
}

static void adj_free(adj_t *g) { free(g->start); free(g->nbr); free(g->link); }

/* Routing runs one BFS per node: nnodes x (nnodes + 2 nlinks) steps. Beyond this a
 * dense topology (full:1024 has 523776 links) takes seconds to minutes to open;
 * refuse it instead. Grids and switches stay far below (switch:2047: 1.3e7). */
#define AR__TOPO_MAX_ROUTE_STEPS (1L << 27)

/* The builders' kinds: their geometry gives every distance, no tables needed. */
static int geometric(const ar_topo_t *t) {
    return t->kind == AR_TOPO_RING_1D || t->kind == AR_TOPO_TORUS_2D || t->kind == AR_TOPO_MESH_2D ||
           t->kind == AR_TOPO_FULL || t->kind == AR_TOPO_SWITCH;
}

int ar__topo_finish(ar_topo_t *t, int *bad_node, ar_error_t *err) {
    int n = t->nnodes, rc = AR_OK;
    if (bad_node) *bad_node = -1;
    const int tables = !geometric(t);
    if (tables && (long)n * ((long)n + 2L * t->nlinks) > AR__TOPO_MAX_ROUTE_STEPS)
        return AR_ERR(err, AR_ELIMIT,
                      "too large to route: %d nodes and %d links (nodes x (nodes + 2 x links) "
                      "must not exceed %ld)", n, t->nlinks, AR__TOPO_MAX_ROUTE_STEPS);
    t->one_kind = t->nlinks > 0 ? 1 + t->links[0].kind : 0;
    for (int i = 0; i < t->nlinks; i++) {
        const ar_link_t *l = &t->links[i];
        if (l->a < 0 || l->a >= n || l->b < 0 || l->b >= n || l->a == l->b || l->count < 1 ||
            l->kind < 0 || l->kind >= t->model->nlinks)
            return AR_ERR(err, AR_ETOPO, "links[%d]: invalid link", i);
        if (1 + l->kind != t->one_kind) t->one_kind = 0;
    }
    AR_FREE_EACH(t->next_hop, t->next_link, t->hops, t->adj_start, t->adj_nbr, t->adj_link);
    t->next_hop = t->next_link = t->hops = t->adj_start = t->adj_nbr = t->adj_link = NULL;
    adj_t g = {0};
    int *queue = NULL;
    if (adj_build(t, &g) != AR_OK) {
        adj_free(&g);
        return AR_ERR(err, AR_ENOMEM, "out of memory");
    }
    t->adj_start = g.start, t->adj_nbr = g.nbr, t->adj_link = g.link; /* the topology's now; g reads them */
    if (!tables) goto placement;
    size_t nn = (size_t)n * (size_t)n;
    t->next_hop = malloc(nn * sizeof(int));
    t->next_link = malloc(nn * sizeof(int));
    t->hops = malloc(nn * sizeof(int));
    queue = malloc((size_t)n * sizeof(int));
    if (!t->next_hop || !t->next_link || !t->hops || !queue) {
        rc = AR_ERR(err, AR_ENOMEM, "out of memory");
        goto out;
    }
    for (int j = 0; j < n; j++) {
        /* dist to j, stored in column j of hops */
        for (int i = 0; i < n; i++) t->hops[(size_t)i * n + j] = -1;
        t->hops[(size_t)j * n + j] = 0;
        int head = 0, tail = 0;
        queue[tail++] = j;
        while (head < tail) {
            int v = queue[head++];
            int dv = t->hops[(size_t)v * n + j];
            for (int k = g.start[v]; k < g.start[v + 1]; k++) {
                int u = g.nbr[k];
                if (t->hops[(size_t)u * n + j] < 0) {
                    t->hops[(size_t)u * n + j] = dv + 1;
                    queue[tail++] = u;
                }
            }
        }
        for (int i = 0; i < n; i++) {
            size_t ij = (size_t)i * n + j;
            int di = t->hops[ij];
            if (di < 0) {
                if (bad_node) *bad_node = i < j ? j : i;
                int who = i < j ? j : i, other = i < j ? i : j;
                rc = AR_ERR(err, AR_ETOPO, "topology is disconnected: %s '%s' cannot reach '%s'",
                            t->nodes[who].is_switch ? "switch" : "device", t->nodes[who].name,
                            t->nodes[other].name);
                goto out;
            }
            t->next_hop[ij] = i;
            t->next_link[ij] = -1;
            if (i == j) continue;
            /* neighbours are sorted by index: the first one closer to j wins */
            for (int k = g.start[i]; k < g.start[i + 1]; k++) {
                int u = g.nbr[k];
                if (t->hops[(size_t)u * n + j] == di - 1) {
                    t->next_hop[ij] = u;
                    t->next_link[ij] = g.link[k];
                    break;
                }
            }
        }
    }
placement:
    if (!t->placement) {
        t->placement = malloc((size_t)t->ndevices * sizeof(int));
        if (!t->placement) { rc = AR_ERR(err, AR_ENOMEM, "out of memory"); goto out; }
        for (int r = 0; r < t->ndevices; r++) t->placement[r] = r;
        t->nranks = t->ndevices;
    }
out:
    free(queue);
    return rc;
}

int ar_topo_place_blocks(ar_topo_t *t, int nranks, ar_error_t *err) {
    if (nranks < 1 || nranks > AR__TOPO_MAX_RANKS)
        return AR_ERR(err, AR_ETOPO, "ranks: must be between 1 and %d, got %d",
                      AR__TOPO_MAX_RANKS, nranks);
    if (nranks % t->ndevices != 0)
        return AR_ERR(err, AR_ETOPO,
                      "ranks: %d ranks do not divide evenly over %d devices (ranks that work: %d, %d, %d, ... "
                      "any multiple of %d)",
                      nranks, t->ndevices, t->ndevices, 2 * t->ndevices, 3 * t->ndevices, t->ndevices);
    int *p = malloc((size_t)nranks * sizeof(int));
    if (!p) return AR_ERR(err, AR_ENOMEM, "out of memory");
    int per = nranks / t->ndevices;
    for (int r = 0; r < nranks; r++) p[r] = r / per;
    free(t->placement);
    t->placement = p;
    t->nranks = nranks;
    ar_topo_free(t->cycle_view); /* a ring of its ranks: made again for these */
    t->cycle_view = NULL;
    t->cycle_view_tried = 0;
    return AR_OK;
}

int ar_topo_rank_device(const ar_topo_t *t, int rank) {
    return rank >= 0 && rank < t->nranks ? t->placement[rank] : -1;
}

int ar_topo_ranks_per_device(const ar_topo_t *t, int *on) {
    int most = 0;
    for (int d = 0; d < t->ndevices; d++) on[d] = 0;
    for (int r = 0; r < t->nranks; r++)
        if (++on[t->placement[r]] > most) most = on[t->placement[r]];
    return most;
}

static int ring_dist(int a, int b, int n) {
    const int d = a > b ? a - b : b - a;
    return d < n - d ? d : n - d;
}

int ar_topo_hops(const ar_topo_t *t, int a, int b) {
    if (a < 0 || b < 0 || a >= t->nnodes || b >= t->nnodes) return -1;
    if (t->hops) return t->hops[(size_t)a * t->nnodes + b];
    if (a == b) return 0;
    const int w = t->grid_w;
    switch (t->kind) {
    case AR_TOPO_RING_1D: return ring_dist(a, b, t->ndevices);
    case AR_TOPO_TORUS_2D: return ring_dist(a % w, b % w, w) + ring_dist(a / w, b / w, t->grid_h);
    case AR_TOPO_MESH_2D: return abs(a % w - b % w) + abs(a / w - b / w);
    case AR_TOPO_FULL: return 1;
    case AR_TOPO_SWITCH: return a >= t->ndevices || b >= t->ndevices ? 1 : 2;
    default: return -1;
    }
}

int ar_topo_diameter(const ar_topo_t *t) {
    const int nd = t->ndevices, w = t->grid_w, h = t->grid_h;
    if (nd < 2) return 0;
    if (!t->hops) {
        switch (t->kind) {
        case AR_TOPO_RING_1D: return nd / 2;
        case AR_TOPO_TORUS_2D: return w / 2 + h / 2;
        case AR_TOPO_MESH_2D: return (w - 1) + (h - 1);
        case AR_TOPO_FULL: return 1;
        case AR_TOPO_SWITCH: return 2;
        default: break;
        }
    }
    int most = 0;
    for (int i = 0; i < nd; i++)
        for (int j = 0; j < nd; j++) {
            const int d = ar_topo_hops(t, i, j);
            if (d > most) most = d;
        }
    return most;
}

int ar_topo_rank_hops(const ar_topo_t *t, int ra, int rb) {
    int a = ar_topo_rank_device(t, ra), b = ar_topo_rank_device(t, rb);
    if (a < 0 || b < 0) return -1;
    return ar_topo_hops(t, a, b);
}

int ar_topo_hub_switch(const ar_topo_t *t) {
    for (int sw = t->ndevices; sw < t->nnodes; sw++) {
        if (!t->nodes[sw].is_switch) continue;
        int all = 1;
        for (int r = 0; r < t->nranks && all; r++) {
            const int d = t->placement[r];
            if (r > 0 && d == t->placement[r - 1]) continue; /* its device, just seen */
            int linked = 0;
            for (int e = t->adj_start[d]; e < t->adj_start[d + 1] && !linked; e++) linked = t->adj_nbr[e] == sw;
            all = linked;
        }
        if (all) return sw;
    }
    return -1;
}

const char *ar_topo_netreduce_unfit(const ar_topo_t *t) {
    if (!(t->model && t->model->switch_reduce > 0))
        return "in-network reduction needs switches that reduce (model key switch_reduce: 1)";
    if (ar_topo_hub_switch(t) < 0) return "in-network reduction needs a switch linked to every device that holds a rank";
    return NULL;
}

/* The first of node v's edges to node b (its lowest link), -1 where none: a binary search of
 * v's sorted neighbours (a switch has one per device: search, not scan). */
static int adj_find(const ar_topo_t *t, int v, int b) {
    int lo = t->adj_start[v], hi = t->adj_start[v + 1];
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (t->adj_nbr[mid] < b) lo = mid + 1;
        else hi = mid;
    }
    return lo < t->adj_start[v + 1] && t->adj_nbr[lo] == b ? lo : -1;
}

int ar_topo_rank_adjacent(const ar_topo_t *t, int ra, int rb) {
    int a = ar_topo_rank_device(t, ra), b = ar_topo_rank_device(t, rb);
    if (a < 0 || b < 0) return 0;
    if (a == b) return 1;
    if (ar_topo_hops(t, a, b) == 1) return 1;
    if (t->nnodes == t->ndevices) return 0; /* no switches: only a direct link will do */
    /* Through one switch, the common case, without a search's state. */
    for (int e = t->adj_start[a]; e < t->adj_start[a + 1]; e++)
        if (t->nodes[t->adj_nbr[e]].is_switch && adj_find(t, t->adj_nbr[e], b) >= 0) return 1;
    /* Search from a through switch nodes only; b must be a neighbour of a reached switch.
     * Each node's neighbours once, b looked up among them (a switch of thousands of
     * devices: a search over every link per node cost a ring's P pairs P x links). */
    int n = t->nnodes, found = 0;
    char seen_stack[256];
    char *seen = n <= 256 ? seen_stack : calloc((size_t)n, 1);
    int qstack[256];
    int *queue = n <= 256 ? qstack : malloc((size_t)n * sizeof(int));
    if (!seen || !queue) {
        if (seen != seen_stack) free(seen);
        if (queue != qstack) free(queue);
        return 0;
    }
    memset(seen, 0, (size_t)n);
    int head = 0, tail = 0;
    queue[tail++] = a;
    seen[a] = 1;
    while (head < tail && !found) {
        const int v = queue[head++];
        if (v != a && adj_find(t, v, b) >= 0) {
            found = 1;
            break;
        }
        for (int e = t->adj_start[v]; e < t->adj_start[v + 1]; e++) {
            const int u = t->adj_nbr[e];
            if (!seen[u] && t->nodes[u].is_switch) {
                seen[u] = 1;
                queue[tail++] = u;
            }
        }
    }
    if (seen != seen_stack) free(seen);
    if (queue != qstack) free(queue);
    return found;
}

/* One step round a ring of n from a towards b: +1 or -1 along the shorter way, +1 where both
 * are as short (halfway round). */
static int ring_step(int a, int b, int n) {
    const int ahead = ((b - a) % n + n) % n;
    return ahead <= n - ahead ? 1 : -1;
}

/* The next node from cur towards dst on a builder's ring or torus: a torus's X first, then
 * Y, each the shorter way round and forwards on a tie. Unlike the lowest-index rule, every
 * rotation of the ring and translation of the torus maps these routes onto each other, so a
 * plan of one rank may stand for all (docs/SIM.md, "Symmetry"). */
static int grid_next(const ar_topo_t *t, int cur, int dst) {
    if (t->kind == AR_TOPO_RING_1D) {
        const int n = t->ndevices;
        return (cur + ring_step(cur, dst, n) + n) % n;
    }
    const int w = t->grid_w, h = t->grid_h, x = cur % w, y = cur / w;
    if (x != dst % w) return y * w + (x + ring_step(x, dst % w, w) + w) % w;
    return ((y + ring_step(y, dst / w, h) + h) % h) * w + x;
}

/* One axis of grid_route: from coordinate *c to c_to round a ring of n, the links of line
 * `line` (link index first + line x n + c joins c and c + 1, the builder's numbering). */
static int axis_route(int *c, int c_to, int n, int first, int line, int *links, int *dirs) {
    int k = 0;
    if (*c == c_to) return 0;
    const int s = ring_step(*c, c_to, n), base = first + line * n;
    for (int x = *c; x != c_to; k++) {
        const int next = s > 0 ? (x + 1 == n ? 0 : x + 1) : (x == 0 ? n - 1 : x - 1);
        links[k] = base + (s > 0 ? x : next);
        dirs[k] = s;
        x = next;
    }
    *c = c_to;
    return k;
}

/* grid_next's route, hop for hop, from the builder's link numbering rather than a search at
 * each hop: a ring's link i joins i and i + 1; a torus's x links come row by row, then its y
 * links column by column. Only where no side is 2 (whose wrap merges two links into one). */
static int grid_route(const ar_topo_t *t, int from, int to, int *links, int *dirs) {
    const int ring = t->kind == AR_TOPO_RING_1D;
    const int w = ring ? t->ndevices : t->grid_w, h = ring ? 1 : t->grid_h;
    int x = from % w, y = from / w;
    const int n = axis_route(&x, to % w, w, 0, y, links, dirs);
    return n + axis_route(&y, to / w, h, w * h, x, links + n, dirs + n);
}

int ar_topo_route(const ar_topo_t *t, int dev_from, int dev_to, int *links, int *dirs, int max) {
    int n = t->nnodes;
    if (dev_from < 0 || dev_from >= n || dev_to < 0 || dev_to >= n) return -1;
    int h = ar_topo_hops(t, dev_from, dev_to);
    if (h < 0 || h > max) return -1;
    if (ar_topo_routes_translate(t)) return grid_route(t, dev_from, dev_to, links, dirs);
    int cur = dev_from;
    for (int k = 0; k < h; k++) {
        int l = -1, next = -1;
        if (t->next_link) {
            const size_t ij = (size_t)cur * n + dev_to;
            l = t->next_link[ij], next = t->next_hop[ij];
        } else if (k == h - 1) { /* the last hop: to dev_to itself, its first link in cur's sorted list */
            const int e = adj_find(t, cur, dev_to);
            if (e < 0) return -1;
            next = dev_to, l = t->adj_link[e];
        } else if (t->kind == AR_TOPO_RING_1D || t->kind == AR_TOPO_TORUS_2D) {
            next = grid_next(t, cur, dev_to);
            const int e = adj_find(t, cur, next);
            if (e < 0) return -1;
            l = t->adj_link[e];
        } else { /* the tables' rule: the first neighbour, by (node, link), one hop closer */
            for (int e = t->adj_start[cur]; e < t->adj_start[cur + 1] && next < 0; e++)
                if (ar_topo_hops(t, t->adj_nbr[e], dev_to) == h - k - 1) next = t->adj_nbr[e], l = t->adj_link[e];
            if (next < 0) return -1;
        }
        links[k] = l;
        dirs[k] = t->links[l].a == cur ? +1 : -1;
        cur = next;
    }
    return h;
}

int ar_topo_forwarder(const ar_topo_t *t, int link, int dir) {
    const int node = dir > 0 ? t->links[link].b : t->links[link].a;
    return node < t->ndevices ? node : -1;
}

/* ---- translations ---- */

/* Whether every link between two devices is of one kind and count, and so is every link
 * between a device and a switch: what makes any grid's shifts map links onto links where
 * every device meets every other (full, switch). */
static int links_alike(const ar_topo_t *t) {
    for (int l = 1; l < t->nlinks; l++)
        if (t->links[l].kind != t->links[0].kind || t->links[l].count != t->links[0].count) return 0;
    return 1;
}

int ar_topo_translatable(const ar_topo_t *t, int w) {
    if (t->kind != AR_TOPO_RING_1D && t->kind != AR_TOPO_TORUS_2D && t->kind != AR_TOPO_FULL &&
        t->kind != AR_TOPO_SWITCH)
        return 0;
    if (t->ndevices < 2 || t->nranks != t->ndevices) return 0;
    for (int r = 0; r < t->nranks; r++)
        if (t->placement[r] != r) return 0;
    if (w < 0) /* rotations by -w: a torus's by whole rows */
        return -w < t->ndevices && t->ndevices % -w == 0 && (t->kind != AR_TOPO_TORUS_2D || -w % t->grid_w == 0);
    const int sw = ar_topo_shift_width(t, w);
    if (sw == ar_topo_shift_width(t, 0)) return 1;
    return (t->kind == AR_TOPO_FULL || t->kind == AR_TOPO_SWITCH) && sw > 0 && t->ndevices % sw == 0 &&
           links_alike(t);
}

int ar_topo_fold_links(const ar_topo_t *t, int w, int *slot) {
    if (!ar_topo_translatable(t, w)) return AR_EINVAL;
    for (int l = 0; l < t->nlinks; l++)
        for (int d = 0; d < 2; d++) {
            const int u = d ? t->links[l].b : t->links[l].a, v = d ? t->links[l].a : t->links[l].b;
            const int base = u < t->ndevices ? u : v < t->ndevices ? v : 0;
            const int fu = ar_topo_translate(t, w, base, u), fv = ar_topo_translate(t, w, base, v);
            const int e = adj_find(t, fu, fv);
            if (e < 0) return AR_EINVAL;
            const int fl = t->adj_link[e];
            slot[2 * l + d] = 2 * fl + (t->links[fl].a != fu);
        }
    return AR_OK;
}

int ar_topo_routes_translate(const ar_topo_t *t) {
    if (t->kind == AR_TOPO_RING_1D) return t->ndevices >= 3;
    return t->kind == AR_TOPO_TORUS_2D && t->grid_w >= 3 && t->grid_h >= 3;
}

/* ---- builders ---- */

static int parse_int(const char *s, const char **end, long *out) {
    char *e;
    if (*s < '0' || *s > '9') return -1;
    long v = strtol(s, &e, 10);
    if (v > AR__TOPO_MAX_NODES * 4L) v = AR__TOPO_MAX_NODES * 4L; /* caught by the limit */
    *out = v;
    *end = e;
    return 0;
}

int ar__topo_parse_spec(const char *spec, ar_topo_kind_t *kind, int *w, int *h, ar_error_t *err) {
    const char *colon = strchr(spec, ':');
    if (!colon) return AR_ERR(err, AR_ETOPO, "topology: '%s' is not a SPEC", spec);
    size_t klen = (size_t)(colon - spec);
    int k = -1;
    for (int i = 1; i < (int)(sizeof kind_names / sizeof kind_names[0]); i++)
        if (strlen(kind_names[i]) == klen && strncmp(spec, kind_names[i], klen) == 0) k = i;
    if (k < 0)
        return AR_ERR(err, AR_ETOPO, "topology: unknown builder '%.*s' in '%s' (ring_1d:N, "
                      "torus_2d:WxH, mesh_2d:WxH, full:N, switch:N)", (int)klen, spec, spec);
    const char *p = colon + 1, *e;
    long a, b = 1;
    if (k == AR_TOPO_TORUS_2D || k == AR_TOPO_MESH_2D) {
        if (parse_int(p, &e, &a) || (*e != 'x' && *e != 'X') || parse_int(e + 1, &e, &b) || *e)
            return AR_ERR(err, AR_ETOPO, "topology: '%s': expected %s:WxH", spec, kind_names[k]);
        if (a < 1 || b < 1)
            return AR_ERR(err, AR_ETOPO, "topology: '%s': grid side must be at least 1", spec);
    } else {
        if (parse_int(p, &e, &a) || *e)
            return AR_ERR(err, AR_ETOPO, "topology: '%s': expected %s:N", spec, kind_names[k]);
        if (a < 1)
            return AR_ERR(err, AR_ETOPO, "topology: '%s': N must be at least 1", spec);
    }
    if (a * b > AR__TOPO_MAX_NODES - 1)
        return AR_ERR(err, AR_ELIMIT, "topology: '%s': more than %d devices", spec,
                      AR__TOPO_MAX_NODES - 1);
    *kind = (ar_topo_kind_t)k;
    *w = (int)a;
    *h = (int)b;
    return AR_OK;
}

int ar__topo_build_kind(ar_topo_kind_t kind, int w, int h, ar_model_t *model, int link_kind,
                        int count, ar_topo_t **out, ar_error_t *err) {
    *out = NULL;
    int rc;
    if (w < 1 || h < 1) {
        ar_model_free(model);
        return AR_ERR(err, AR_ETOPO, "%s: grid side must be at least 1", ar_topo_kind_name(kind));
    }
    int grid = kind == AR_TOPO_TORUS_2D || kind == AR_TOPO_MESH_2D;
    int ndev = grid ? w * h : w;
    /* A full graph's links grow as ndev^2: refuse what routing would refuse before
     * building them (full:8192 would be 33 million links). */
    if (kind == AR_TOPO_FULL &&
        (long)ndev * ((long)ndev + (long)ndev * (ndev - 1)) > AR__TOPO_MAX_ROUTE_STEPS) {
        ar_model_free(model);
        return AR_ERR(err, AR_ELIMIT,
                      "full:%d: too large to route: %ld links (nodes x (nodes + 2 x links) must "
                      "not exceed %ld)", ndev, (long)ndev * (ndev - 1) / 2, AR__TOPO_MAX_ROUTE_STEPS);
    }
    ar_topo_t *t;
    if ((rc = ar__topo_new(ndev, kind == AR_TOPO_SWITCH ? 1 : 0, &t, err)) != AR_OK) {
        ar_model_free(model);
        return rc;
    }
    t->model = model;
    t->kind = kind;
    if (grid) { t->grid_w = w; t->grid_h = h; }
    int lk = link_kind, c = count;
    switch (kind) {
    case AR_TOPO_RING_1D:
        /* a ring of two closes on its one link: the only length whose wrap repeats a pair */
        for (int i = 0; i < ndev && ndev > 1 && rc == AR_OK; i++)
            rc = ar__topo_add_link(t, i, (i + 1) % ndev, lk, c, ndev == 2);
        break;
    case AR_TOPO_TORUS_2D:
    case AR_TOPO_MESH_2D: {
        int wrap = kind == AR_TOPO_TORUS_2D;
        for (int y = 0; y < h && rc == AR_OK; y++) /* x links, row by row */
            for (int x = 0; x < w && rc == AR_OK; x++)
                if (x + 1 < w || (wrap && w > 1))
                    rc = ar__topo_add_link(t, y * w + x, y * w + (x + 1) % w, lk, c, w == 2);
        for (int x = 0; x < w && rc == AR_OK; x++) /* y links, column by column */
            for (int y = 0; y < h && rc == AR_OK; y++)
                if (y + 1 < h || (wrap && h > 1))
                    rc = ar__topo_add_link(t, y * w + x, ((y + 1) % h) * w + x, lk, c, h == 2);
        break;
    }
    case AR_TOPO_FULL:
        for (int i = 0; i < ndev && rc == AR_OK; i++)
            for (int j = i + 1; j < ndev && rc == AR_OK; j++) rc = ar__topo_add_link(t, i, j, lk, c, 0);
        break;
    case AR_TOPO_SWITCH:
        for (int i = 0; i < ndev && rc == AR_OK; i++) rc = ar__topo_add_link(t, i, ndev, lk, c, 0);
        break;
    default:
        rc = AR_EINVAL;
    }
    if (rc != AR_OK) {
        ar_topo_free(t);
        return AR_ERR(err, rc, "%s", ar_strerror(rc));
    }
    if ((rc = ar__topo_finish(t, NULL, err)) != AR_OK) {
        ar_topo_free(t);
        return rc;
    }
    *out = t;
    return AR_OK;
}

int ar_topo_build(const char *spec, ar_model_t *model, ar_topo_t **out, ar_error_t *err) {
    *out = NULL;
    ar_topo_kind_t kind;
    int w, h, rc;
    if ((rc = ar__topo_parse_spec(spec, &kind, &w, &h, err)) != AR_OK) {
        ar_model_free(model);
        return rc;
    }
    if (!model) AR_TRY(ar_model_load(ar__topo_default_model(kind), &model, err));
    /* A board's devices reach each other over the lanes the model gives them: all into the
     * switch, or split among the peers of a full graph. Grids and rings link neighbours with
     * one bundle each. */
    const int lanes = model->nlinks > 0 && model->links[0].lanes >= 1 ? (int)model->links[0].lanes : 1;
    const int count = kind == AR_TOPO_SWITCH ? lanes
                    : kind == AR_TOPO_FULL && w > 1 ? (lanes / (w - 1) > 1 ? lanes / (w - 1) : 1) : 1;
    ar_topo_t *t;
    AR_TRY(ar__topo_build_kind(kind, w, h, model, 0, count, &t, err));
    snprintf(t->name, sizeof t->name, "%s", spec);
    *out = t;
    return AR_OK;
}

int ar__topo_is_spec(const char *s) {
    const char *colon = strchr(s, ':');
    if (!colon) return 0;
    for (int i = 1; i < (int)(sizeof kind_names / sizeof kind_names[0]); i++)
        if (strlen(kind_names[i]) == (size_t)(colon - s) && !strncmp(s, kind_names[i], (size_t)(colon - s)))
            return 1;
    return 0;
}

/* The one bundle joining devices a and b (-1: none; -2: more than one): a's neighbours are
 * sorted, so a second bundle to b sits right after the first. */
static int only_bundle(const ar_topo_t *t, int a, int b) {
    const int e = adj_find(t, a, b);
    if (e < 0) return -1;
    return e + 1 < t->adj_start[a + 1] && t->adj_nbr[e + 1] == b ? -2 : t->adj_link[e];
}

int ar_topo_cycle(const ar_topo_t *t, const int *order, ar_topo_t **out, ar_error_t *err) {
    *out = NULL;
    const int nd = t->ndevices;
    if (nd < 3 || !t->adj_start || !t->model) return AR_ERR(err, AR_EUNFIT, "a cycle needs 3 devices or more");
    int kind = -1, count = 0;
    for (int i = 0; i < nd; i++) {
        const int l = only_bundle(t, order[i], order[(i + 1) % nd]);
        if (l < 0) return AR_ERR(err, AR_EUNFIT, "devices %d and %d are not joined by one bundle", order[i], order[(i + 1) % nd]);
        if (i == 0) kind = t->links[l].kind, count = t->links[l].count;
        if (t->links[l].kind != kind || t->links[l].count != count)
            return AR_ERR(err, AR_EUNFIT, "the cycle's links differ");
    }
    int *on = malloc((size_t)nd * sizeof *on);
    if (!on) return AR_ERR(err, AR_ENOMEM, "out of memory");
    const int most = ar_topo_ranks_per_device(t, on);
    int alike = 1;
    for (int d = 0; d < nd; d++) alike &= on[d] == most;
    free(on);
    if (!alike) return AR_ERR(err, AR_EUNFIT, "its devices hold different numbers of ranks");
    ar_model_t *m;
    if (ar_model_copy(t->model, &m) != AR_OK) return AR_ERR(err, AR_ENOMEM, "out of memory");
    ar_topo_t *v;
    AR_TRY(ar__topo_build_kind(AR_TOPO_RING_1D, nd, 1, m, kind, count, &v, err));
    for (int i = 0; i < nd; i++) memcpy(v->nodes[i].name, t->nodes[order[i]].name, sizeof v->nodes[i].name);
    memcpy(v->name, t->name, sizeof v->name);
    const int rc = ar_topo_place_blocks(v, t->nranks, err);
    if (rc != AR_OK) {
        ar_topo_free(v);
        return rc;
    }
    *out = v;
    return AR_OK;
}
