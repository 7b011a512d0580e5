/* arsim: topologies. Devices (accelerators), switches, links, and the ranks
 * placed on devices. Built from a SPEC ("torus_2d:4x4") or loaded from YAML. */
#ifndef ARSIM_TOPO_H
#define ARSIM_TOPO_H

#include "arsim/model.h"

typedef enum ar_topo_kind_e {
    AR_TOPO_CUSTOM = 0, AR_TOPO_RING_1D, AR_TOPO_TORUS_2D, AR_TOPO_MESH_2D,
    AR_TOPO_FULL, AR_TOPO_SWITCH
} ar_topo_kind_t;

typedef struct ar_node_s {
    char name[AR_NAME_MAX];
    int is_switch;   /* switches forward traffic, hold no ranks */
} ar_node_t;

/* One bundle of `count` parallel links of one kind between nodes a and b,
 * full duplex: each direction has count * kind.bw_gbps of its own. */
typedef struct ar_link_s {
    int a, b;       /* node indices */
    int kind;       /* index into model->links */
    int count;
} ar_link_t;

typedef struct ar_topo_s {
    char name[AR_NAME_MAX];
    char path[512];
    ar_topo_kind_t kind;
    int grid_w, grid_h;   /* torus_2d / mesh_2d: device (x,y) is node y*w + x; else 0 */
    ar_node_t *nodes;     /* devices first (indices 0..ndevices-1), then switches */
    int nnodes, ndevices;
    ar_link_t *links;
    int nlinks;
    int nranks;
    int *placement;       /* rank -> device index; identity by default */
    ar_model_t *model;    /* owned */
    /* Routing, filled by ar_topo_finish. Shortest path, lowest index on ties. Each node's
     * links in CSR form, sorted by (neighbour, link): adj_link[adj_start[i] ..
     * adj_start[i + 1]) and the neighbour at the other end, adj_nbr. Distances
     * (ar_topo_hops) come from the builders' geometry for their kinds (ring, torus, mesh,
     * full, switch); a topology of another shape keeps all-pairs tables: next hop (node
     * index) from node i towards node j, the link used for that hop, the hop count (NULL
     * for the builders' kinds: three ints per pair of nodes was most of a large grid's
     * memory). */
    int *adj_start, *adj_nbr, *adj_link;
    int *next_hop;        /* nnodes * nnodes, or NULL */
    int *next_link;       /* nnodes * nnodes, index into links, or NULL */
    int *hops;            /* nnodes * nnodes, or NULL */
    int one_kind;         /* 1 + the link kind every link has (a route's latency is then its hop
                             count's, ar_topo_hops); 0 where they differ */
    void *bound_cache;    /* arsim/bound.h's figures of this topology, made on first use (one
                             plain allocation, freed with the topology) */
    void *tune_cache;     /* arsim/case.h's default channel counts found on it (the same) */
    void *symmetry_cache; /* arsim/algo.h's verdicts on rank 0's plans standing for all on it (the same) */
    struct ar_topo_s *cycle_view; /* the ring of its devices some algorithms are timed on
                                     (ar_algo_topology), made on first use, freed with it */
    int cycle_view_tried;         /* 1 once asked: cycle_view NULL then says it has none */
} ar_topo_t;

/* SPEC (ring_1d:N, torus_2d:WxH, mesh_2d:WxH, full:N, switch:N), a shipped name
 * (topologies/<name>.yaml), or a path. model_override (may be NULL) replaces the
 * topology's own model. */
int ar_topo_open(const char *spec_or_path, const char *model_override, ar_topo_t **out,
                 ar_error_t *err);
int ar_topo_build(const char *spec, ar_model_t *model, ar_topo_t **out, ar_error_t *err);
int ar_topo_load(const char *path, const char *model_override, ar_topo_t **out, ar_error_t *err);
int ar_topo_load_string(const char *yaml, const char *label, const char *model_override,
                        ar_topo_t **out, ar_error_t *err);
void ar_topo_free(ar_topo_t *t);

/* Place nranks ranks on the devices in contiguous blocks (ranks 0..k-1 on device 0 ...).
 * nranks must be a multiple of ndevices. */
int ar_topo_place_blocks(ar_topo_t *t, int nranks, ar_error_t *err);

/* Link bundle `link`'s bandwidth in GB/s, one direction: its count x its kind's bw_gbps
 * (0 for a kind the model lacks). Every rate, bound and breakdown of a link uses this. */
static inline double ar_topo_link_gbps(const ar_topo_t *t, int link) {
    const ar_link_t *l = &t->links[link];
    return l->kind >= 0 && l->kind < t->model->nlinks ? l->count * t->model->links[l->kind].bw_gbps : 0;
}

/* Queries used by algorithms. */
int ar_topo_rank_device(const ar_topo_t *t, int rank);
/* Each device's rank count into on[0 .. ndevices), in one pass over the ranks; returns the
 * most any device holds. */
int ar_topo_ranks_per_device(const ar_topo_t *t, int *on);
/* Device hops between the devices of two ranks (0 when they share a device; a path
 * through a switch counts the switch hops, so device-switch-device is 2). */
int ar_topo_rank_hops(const ar_topo_t *t, int ra, int rb);
/* True when data between the two ranks' devices crosses no other device: same device,
 * a direct link, or a path through switches only. */
int ar_topo_rank_adjacent(const ar_topo_t *t, int ra, int rb);
/* Hops of a shortest path between nodes a and b (0 when a == b). */
int ar_topo_hops(const ar_topo_t *t, int a, int b);
/* The most hops between two devices (0 with one device). */
int ar_topo_diameter(const ar_topo_t *t);
/* The switch linked directly to every device that holds a rank (the lowest-numbered
 * such node), or -1: where in-network reduction (NETREDUCE) can sum every rank's data. */
int ar_topo_hub_switch(const ar_topo_t *t);
/* Why NETREDUCE cannot run on t (no hub switch, or a model whose switches do not
 * reduce), or NULL when it can. */
const char *ar_topo_netreduce_unfit(const ar_topo_t *t);
/* The route between two devices as link indices (and direction: +1 a->b, -1 b->a);
 * returns the hop count, or -1 when unreachable. */
int ar_topo_route(const ar_topo_t *t, int dev_from, int dev_to, int *links, int *dirs, int max);
/* The node a route's hop over `link` in direction `dir` reaches, when that node is a
 * device: data routed on from there is stored and loaded again by that device's memory
 * (the cost of forwarding through a device). -1 for a switch, which forwards in the
 * network. */
int ar_topo_forwarder(const ar_topo_t *t, int link, int dir);

/* Translations: the shifts of a grid of the devices, w wide (device d in column d % w of
 * row d / w), that map the topology's links onto its links and every device onto device 0
 * by exactly one of them. A plan that they map onto itself runs alike on every rank, so the
 * timing backends can run one rank's ops for all (arsim/plan.h, "A plan of one rank").
 * A ring_1d has those of its N x 1 grid (its rotations), a torus_2d those of its own grid
 * (along both axes); full and switch, where every device meets every other alike, those of
 * any grid that holds their devices (a switch stays where it is). w = 0 names the
 * topology's own grid (full and switch: N x 1).
 * w < 0 names fewer: the rotations by whole rows of -w devices (d -> d + k(-w), mod N), which
 * map device d onto d % -w; a ring has them for any -w dividing N, a torus_2d for whole rows
 * of its grid, full and switch for any -w dividing N. They are what a grid of ranks laid over
 * a ring keeps (its rows' shifts), and what a plan of the first -w ranks stands on (plan.h).
 * Whether t has the translations named by w, each rank on its own device: */
int ar_topo_translatable(const ar_topo_t *t, int w);
/* The width of the grid meant by w: w itself, or for w = 0 the topology's own (a torus's
 * grid_w, else its devices); for w < 0 (rotations by rows) the devices. */
static inline int ar_topo_shift_width(const ar_topo_t *t, int w) {
    return w > 0 ? w : w == 0 && t->kind == AR_TOPO_TORUS_2D ? t->grid_w : t->ndevices;
}
/* Points 0 .. n-1 of a grid w wide (point d at column d % w of row d / w; w divides n), each
 * axis round its own ring: the point a + b, and the point a - b (where a sits seen from b). */
static inline int ar_grid_add(int n, int w, int a, int b) {
    const int h = n / w;
    return ((a / w + b / w) % h) * w + (a % w + b % w) % w;
}
static inline int ar_grid_sub(int n, int w, int a, int b) {
    const int h = n / w;
    return ((a / w - b / w + h) % h) * w + (a % w - b % w + w) % w;
}
/* Node `node` under the translation named by w that moves device `base` to the device
 * standing for its orbit: device 0, or for w < 0 base % -w. */
static inline int ar_topo_translate(const ar_topo_t *t, int w, int base, int node) {
    const int nd = t->ndevices;
    if (node < 0 || node >= nd) return node;
    if (w < 0) return (node - (base - base % -w) + nd) % nd;
    return ar_grid_sub(nd, ar_topo_shift_width(t, w), node, base);
}
/* The device standing for device d's orbit under the translations named by w (above). */
static inline int ar_topo_orbit_device(const ar_topo_t *t, int w, int d) { return ar_topo_translate(t, w, d, d); }
/* For each link direction (slot link x 2 + (dir < 0)), the one of its orbit under the
 * translations named by w that leaves or enters the device standing for its device's orbit
 * (links between switches: itself): slot[2 * nlinks]. AR_EINVAL where t does not have them. */
int ar_topo_fold_links(const ar_topo_t *t, int w, int *slot);
/* Whether every translation t has maps each route onto the route between the moved ends by
 * construction: a built ring of 3 devices or more, a built torus whose sides are 3 or more
 * (X first, then Y, the shorter way, forwards on a tie; no two links join one pair). Elsewhere
 * a caller that needs it compares the routes. */
int ar_topo_routes_translate(const ar_topo_t *t);

/* The ring_1d of t's devices in `order` (each device once), device i of it t's device
 * order[i], named alike, whose link i is t's one bundle between order[i] and order[i + 1]
 * (cyclically): every such pair joined directly by exactly one bundle, all of one kind and
 * count, and every device holding as many ranks, placed on it in blocks (its rank j on its
 * device j / k). An algorithm whose ranks meet only along that cycle, k ranks a device in
 * its order, moves the same bytes over the same links and memories on it as on t: the
 * ring's rotations, which t may not have (a snake over a torus is no translate of itself),
 * then let rank 0's ops stand for all. It has t's model (a copy) and name. AR_EUNFIT where
 * order is no such cycle (fewer than 3 devices, a pair not joined or joined twice, links
 * that differ, ranks per device that differ). */
int ar_topo_cycle(const ar_topo_t *t, const int *order, ar_topo_t **out, ar_error_t *err);

/* Names of the shipped topology files, NULL-terminated. */
const char *const *ar_topo_shipped(void);
const char *ar_topo_dir(void);
const char *ar_topo_kind_name(ar_topo_kind_t k);

#endif
