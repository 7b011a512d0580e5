/* The cost of one op from the model's terms (see arsim/cost.h for the formulas). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "arsim/util.h"
#include "cost/internal.h"

#define MAX_ROUTE 256

/* A route between two devices (ar_topo_route): on the stack up to MAX_ROUTE hops, on the
 * heap beyond (half a ring of thousands), so that no hop of a long route goes uncharged.
 * n: the hop count, -1 when unreachable (or out of memory). Free with route_free. */
typedef struct route_s {
    int links_s[MAX_ROUTE], dirs_s[MAX_ROUTE];
    int *links, *dirs;
    int n;
} route_t;

static int route_get(route_t *r, const ar_topo_t *t, int from, int to) {
    r->links = r->links_s;
    r->dirs = r->dirs_s;
    r->n = ar_topo_route(t, from, to, r->links, r->dirs, MAX_ROUTE);
    const int h = r->n < 0 ? ar_topo_hops(t, from, to) : -1;
    if (h > MAX_ROUTE) {
        r->links = malloc((size_t)h * sizeof *r->links);
        r->dirs = malloc((size_t)h * sizeof *r->dirs);
        r->n = r->links && r->dirs ? ar_topo_route(t, from, to, r->links, r->dirs, h) : -1;
    }
    return r->n;
}

static void route_free(route_t *r) {
    if (r->links != r->links_s) free(r->links);
    if (r->dirs != r->dirs_s) free(r->dirs);
}

const char *ar_term_name(ar_term_t t) {
    static const char *const names[AR_NTERM] = {"link", "memory", "reduce", "sync", "launch", "compute"};
    return (unsigned)t < AR_NTERM ? names[t] : "?";
}

int ar_cost_addr_device(const ar_topo_t *t, const ar_addr_t *a) {
    return a->rank == AR_RANK_HOST ? -1 : t->placement[a->rank];
}

/* Where each key sits in a list (key -> place), by open addressing: kept once the list
 * outgrows a scan, as a route of many hops adds an entry per hop. */
typedef struct key_index_s {
    struct key_place_s { int key, place; } *e; /* place -1: empty */
    unsigned mask;                              /* capacity - 1, a power of two; 0: none kept */
    int n;
} key_index_t;

#define KEY_INDEX_FROM 16 /* list length from which a list is indexed */

static unsigned key_hash(int key) { return (unsigned)key * 2654435761u; }

/* The place of key, or -1. */
static int key_find(const key_index_t *x, int key) {
    for (unsigned h = key_hash(key) & x->mask;; h = (h + 1) & x->mask) {
        if (x->e[h].place < 0) return -1;
        if (x->e[h].key == key) return x->e[h].place;
    }
}

/* Key at place: 0, or -1 out of memory (the index is then dropped: lists are scanned). */
static int key_put(key_index_t *x, int key, int place) {
    if (2 * (unsigned)(x->n + 1) > x->mask + 1) { /* past half full: twice the room */
        const unsigned cap = x->mask ? 2 * (x->mask + 1) : 64;
        struct key_place_s *old = x->e, *e = malloc(cap * sizeof *e);
        if (!e) return -1;
        for (unsigned i = 0; i < cap; i++) e[i].place = -1;
        const unsigned was = x->mask ? x->mask + 1 : 0;
        x->e = e, x->mask = cap - 1, x->n = 0;
        for (unsigned i = 0; i < was; i++)
            if (old[i].place >= 0) key_put(x, old[i].key, old[i].place);
        free(old);
    }
    unsigned h = key_hash(key) & x->mask;
    while (x->e[h].place >= 0) h = (h + 1) & x->mask;
    x->e[h].key = key, x->e[h].place = place;
    x->n++;
    return 0;
}

static void key_index_free(key_index_t *x) {
    free(x->e);
    memset(x, 0, sizeof *x);
}

typedef struct acc_s {
    /* Bytes each device's memory serves for this op: its own sources and destination,
     * and what it forwards on a route through it. A short list, grown on the heap past
     * the stack's. */
    struct acc_mem_s { int dev; double rd, wr, l2; } *mem; /* l2: weighted as its link counts them */
    int ndev, capmem;
    ar_op_traffic_t *traffic;
    int ntraffic, max_traffic;
    double link_s;      /* bottleneck over link directions seen so far */
    double lat_s;
    int overflow;
    int fresh; /* what is added now is in neither list yet (one route's hops, acc_route): not looked for */
    /* a byte a device forwards, stored and loaded again at once: what it weighs on the
     * memory (each way) and on the L2's link (both ways) */
    double fwd_mem, fwd_l2;
    /* Bytes per link direction this op crosses, summed over its sources (two pulls over
     * one link share it): a list, since an op crosses few of a topology's links (indexed
     * once a long route makes it long, lb_at). */
    struct { int slot, traffic; double bytes; } lb_stack[64], *lb; /* traffic: its entry there, or -1 */
    int nlb, caplb;
    key_index_t lb_at, mem_at;      /* lb by slot, mem by device, once long (key_index_t) */
    struct acc_mem_s mem_stack[64]; /* the first of `mem` (past the zeroed part, as lb_stack) */
} acc_t;

static void acc_init(acc_t *a, ar_op_traffic_t *traffic, int max_traffic) {
    memset(a, 0, offsetof(acc_t, lb_stack));
    a->mem = a->mem_stack;
    a->capmem = (int)(sizeof a->mem_stack / sizeof a->mem_stack[0]);
    a->traffic = traffic;
    a->max_traffic = traffic ? max_traffic : 0;
    a->fwd_mem = 1;
    a->lb = a->lb_stack;
    a->nlb = 0;
    a->caplb = (int)(sizeof a->lb_stack / sizeof a->lb_stack[0]);
    memset(&a->lb_at, 0, sizeof a->lb_at);
    memset(&a->mem_at, 0, sizeof a->mem_at);
}

static void acc_fini(acc_t *a) {
    if (a->lb != a->lb_stack) free(a->lb);
    if (a->mem != a->mem_stack) free(a->mem);
    key_index_free(&a->lb_at);
    key_index_free(&a->mem_at);
}

/* The place of key in a list of n whose i-th key is key_of(list, i): by its index once the
 * list is KEY_INDEX_FROM long (built then), else by a scan; -1 where it is not there. */
static int list_find(key_index_t *x, int n, int key, int (*key_of)(const acc_t *, int), const acc_t *a) {
    if (n >= KEY_INDEX_FROM && !x->mask) {
        for (int i = 0; i < n; i++)
            if (key_put(x, key_of(a, i), i) != 0) {
                key_index_free(x);
                break;
            }
    }
    if (x->mask) return key_find(x, key);
    for (int i = 0; i < n; i++)
        if (key_of(a, i) == key) return i;
    return -1;
}

/* A new entry at place i of an indexed list: indexed too (or the index dropped). */
static void list_added(key_index_t *x, int key, int i) {
    if (x->mask && key_put(x, key, i) != 0) key_index_free(x);
}

static int lb_key(const acc_t *a, int i) { return a->lb[i].slot; }
static int mem_key(const acc_t *a, int i) { return a->mem[i].dev; }

/* The entry of link direction `slot` (link x 2 + reverse), -1 when the list cannot grow. */
static int acc_link_entry(acc_t *a, int slot) {
    const int i = a->fresh ? -1 : list_find(&a->lb_at, a->nlb, slot, lb_key, a);
    if (i >= 0) return i;
    if (a->nlb == a->caplb) {
        const int cap = 2 * a->caplb;
        void *g = a->lb == a->lb_stack ? malloc((size_t)cap * sizeof *a->lb) : realloc(a->lb, (size_t)cap * sizeof *a->lb);
        if (!g) return -1;
        if (a->lb == a->lb_stack) memcpy(g, a->lb_stack, sizeof a->lb_stack);
        a->lb = g;
        a->caplb = cap;
    }
    a->lb[a->nlb].slot = slot;
    a->lb[a->nlb].traffic = -1;
    a->lb[a->nlb].bytes = 0;
    list_added(&a->lb_at, slot, a->nlb);
    return a->nlb++;
}

static void acc_mem(acc_t *a, int dev, double rd, double wr, double l2) {
    const int at = a->fresh ? -1 : list_find(&a->mem_at, a->ndev, dev, mem_key, a);
    if (at >= 0) {
        a->mem[at].rd += rd;
        a->mem[at].wr += wr;
        a->mem[at].l2 += l2;
        return;
    }
    if (a->ndev == a->capmem) {
        const int cap = 2 * a->capmem;
        void *g = a->mem == a->mem_stack ? malloc((size_t)cap * sizeof *a->mem)
                                         : realloc(a->mem, (size_t)cap * sizeof *a->mem);
        if (!g) { /* no room to tell it apart: the first device carries it (never less time) */
            a->mem[0].rd += rd;
            a->mem[0].wr += wr;
            a->mem[0].l2 += l2;
            a->overflow = 1;
            return;
        }
        if (a->mem == a->mem_stack) memcpy(g, a->mem_stack, sizeof a->mem_stack);
        a->mem = g;
        a->capmem = cap;
    }
    a->mem[a->ndev].dev = dev;
    a->mem[a->ndev].rd = rd;
    a->mem[a->ndev].wr = wr;
    a->mem[a->ndev].l2 = l2;
    list_added(&a->mem_at, dev, a->ndev);
    a->ndev++;
}

/* bytes on link l in direction dir: its busy time and the op's traffic there. */
static void acc_link(acc_t *a, const ar_topo_t *t, int l, int dir, double bytes) {
    const int e = acc_link_entry(a, l * 2 + (dir < 0));
    if (e < 0) {
        a->overflow = 1;
        return;
    }
    a->lb[e].bytes += bytes;
    const double s = a->lb[e].bytes / (ar_topo_link_gbps(t, l) * 1e9);
    if (s > a->link_s) a->link_s = s;
    if (a->lb[e].traffic >= 0) {
        a->traffic[a->lb[e].traffic].bytes += bytes;
        return;
    }
    if (a->traffic && a->ntraffic < a->max_traffic) {
        a->lb[e].traffic = a->ntraffic;
        a->traffic[a->ntraffic].res = AR_RES_LINK;
        a->traffic[a->ntraffic].link = l;
        a->traffic[a->ntraffic].dir = dir;
        a->traffic[a->ntraffic++].bytes = bytes;
    } else {
        a->overflow = 1;
    }
}

/* Traffic on each hop of the route from device `from` to device `to`. Per-link
 * bytes are summed across the op's sources (two pulls over one link share it). A
 * device the route passes through stores the bytes and loads them again to send them
 * on (ar_topo_forwarder): its memory serves them twice, and they arrive a memory
 * latency (fwd_lat) later; a switch forwards in the network. pull: `to` loads them. */
static void acc_route(acc_t *a, const ar_topo_t *t, int from, int to, double bytes, int pull, double fwd_lat,
                      double *hop_lat) {
    route_t rt;
    const int n = route_get(&rt, t, from, to);
    const int *links = rt.links, *dirs = rt.dirs;
    double lat = 0;
    for (int h = 0; h < n; h++) {
        const ar_link_t *l = &t->links[links[h]];
        const ar_link_kind_t *k = &t->model->links[l->kind];
        const int via = h + 1 < n ? ar_topo_forwarder(t, links[h], dirs[h]) : -1;
        if (via >= 0) {
            acc_mem(a, via, bytes * a->fwd_mem, bytes * a->fwd_mem, bytes * a->fwd_l2);
            lat += fwd_lat;
        }
        acc_link(a, t, links[h], dirs[h], bytes);
        const double requests = pull ? ar_model_pull_request_share(k) : 0; /* they cross the other way */
        if (requests > 0) acc_link(a, t, links[h], -dirs[h], bytes * requests);
        lat += k->lat_ns * 1e-9;
    }
    *hop_lat = lat;
    route_free(&rt);
}

static void add_traffic(acc_t *a, ar_res_t res, int link, int dir, double bytes) {
    if (!a->traffic) return;
    if (a->ntraffic == a->max_traffic) {
        a->overflow = 1;
        return;
    }
    a->traffic[a->ntraffic++] = (ar_op_traffic_t){res, link, dir, bytes};
}

/* The device at the hub's edge e where that edge is its route's (the first of the hub's links
 * to it) and it holds ranks; -1 otherwise. */
static int hub_route_device(const ar_topo_t *t, int hub, int e, const int *ranks_on) {
    const int d = t->adj_nbr[e];
    if (d >= t->ndevices || (e > t->adj_start[hub] && t->adj_nbr[e - 1] == d) || !ranks_on[d]) return -1;
    return d;
}

/* A NETREDUCE (plan.h): every device holding k ranks sends k x B up its link to the hub
 * switch and receives k x B back (the sum, once per rank), its memory serving k x B of
 * loads and k x B of stores; the switch adds at the links' rate. The executing channel
 * takes in the sum and issues its stores, as a pull and a push of B would. A device's
 * link to the hub is its route's: the first of the hub's links to it (ar_topo_route). */
static int netreduce_cost(const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op, int exec_rank,
                          ar_mem_t buffer, ar_op_cost_t *c, ar_op_traffic_t *traffic, int max_traffic,
                          int *ntraffic) {
    const ar_model_t *m = t->model;
    const int hub = ar_topo_hub_switch(t);
    if (hub < 0) return AR_EINVAL; /* the backends' plan check refuses such a plan first */
    int *ranks_on = malloc((size_t)t->ndevices * sizeof *ranks_on);
    if (!ranks_on) return AR_ENOMEM;
    ar_topo_ranks_per_device(t, ranks_on);
    acc_t a;
    acc_init(&a, traffic, max_traffic);
    const double B = (double)op->n * (double)ar_dtype_size(p->dtype);
    double hop_lat = 0;
    for (int e = t->adj_start[hub]; e < t->adj_start[hub + 1]; e++) {
        const int d = hub_route_device(t, hub, e, ranks_on), l = t->adj_link[e];
        if (d < 0) continue;
        const ar_link_t *lk = &t->links[l];
        const int k = ranks_on[d];
        const int up = lk->a == d ? 1 : -1;
        const double s = k * B / (ar_topo_link_gbps(t, l) * 1e9);
        if (s > a.link_s) a.link_s = s;
        add_traffic(&a, AR_RES_LINK, l, up, k * B);
        add_traffic(&a, AR_RES_LINK, l, -up, k * B);
        const double lat = m->links[lk->kind].lat_ns * 1e-9;
        if (lat > hop_lat) hop_lat = lat;
    }
    /* each device's memory once, in the same order (a list searched per device would cost
     * devices squared an op) */
    const double mem_bw = ar_cost_mem_gbps(&m->mem[buffer]) * 1e9;
    for (int e = t->adj_start[hub]; e < t->adj_start[hub + 1]; e++) {
        const int d = hub_route_device(t, hub, e, ranks_on);
        if (d < 0) continue;
        const double served = 2.0 * ranks_on[d] * B, s = served / mem_bw;
        if (s > c->memory_s) c->memory_s = s;
        add_traffic(&a, AR_RES_MEMORY, d, 0, served);
    }
    ar_chan_bytes_t cb;
    ar_cost_chan_bytes(t, p, op, exec_rank, NULL, &cb);
    c->link_s = a.link_s;
    c->chan_s = ar_cost_chan_s(m, &cb, &c->chan_mem);
    if (c->chan_s > c->link_s) c->link_s = c->chan_s;
    c->bytes = B;
    c->remote = 1;
    c->lat_s = m->mem[buffer].lat_ns * 1e-9 + hop_lat; /* the sources reach the switch */
    c->store_lat_s = hop_lat;                          /* and the sum lands this much later */
    c->lat_term = AR_TERM_LINK;
    c->move_term = c->link_s >= c->memory_s ? AR_TERM_LINK : AR_TERM_MEMORY;
    c->move_s = c->link_s >= c->memory_s ? c->link_s : c->memory_s;
    c->overhead_s = ar_cost_op_overhead_s(t, p, op);
    c->total_s = c->lat_s + c->move_s + c->overhead_s;
    if (ntraffic) *ntraffic = a.ntraffic;
    free(ranks_on);
    acc_fini(&a);
    return AR_OK;
}

double ar_cost_gemm_flops(const ar_model_t *m, ar_dtype_t dt) {
    const double tf = dt == AR_FP32 && m->gemm_fp32_tflops > 0 ? m->gemm_fp32_tflops : m->gemm_tflops;
    return tf * 1e12;
}

/* A product's multiply-adds over `units` of the device's gemm_units: in whole waves of
 * tiles, each tile at the rate of one unit; the largest tile or one halved in rows,
 * columns or both, whichever takes least (a library picks its tile so). Without a tile or
 * units, the rate spread evenly over the units. */
double ar_cost_gemm_seconds(const ar_model_t *m, double rate, double units, uint64_t rows, uint64_t N, uint64_t K) {
    const double flops = 2.0 * (double)rows * (double)N * (double)K;
    if (!(m->gemm_units > 0) || !(m->gemm_tile_rows >= 1) || !(m->gemm_tile_cols >= 1))
        return flops / (rate * (m->gemm_units > 0 ? units / m->gemm_units : 1));
    const double unit_rate = rate / m->gemm_units;
    double best = INFINITY;
    for (int half = 0; half < 4; half++) {
        const double tr = floor(m->gemm_tile_rows / (half & 1 ? 2 : 1)), tc = floor(m->gemm_tile_cols / (half & 2 ? 2 : 1));
        if (tr < 1 || tc < 1) continue;
        const double tiles = ceil((double)rows / tr) * ceil((double)N / tc);
        const double waves = ceil(tiles / units);
        const double s = waves * 2.0 * tr * tc * (double)K / unit_rate;
        if (s < best) best = s;
    }
    return best;
}

/* A COMPUTE: its amount (c->bytes) is its multiply-adds x 2, streamed through the device's
 * matrix units. */
static int compute_cost(const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op, int exec_rank, ar_mem_t buffer,
                        ar_op_cost_t *c, ar_op_traffic_t *traffic, int max_traffic, int *ntraffic) {
    const ar_model_t *m = t->model;
    const double rate = ar_cost_gemm_flops(m, p->dtype);
    if (!(rate > 0)) return AR_EINVAL;
    uint64_t rows, N, K;
    ar_op_gemm(op, &rows, &N, &K);
    const double flops = 2.0 * (double)rows * (double)N * (double)K;
    const double bytes = ((double)rows * K + (double)K * N + (double)rows * N) * (double)ar_dtype_size(p->dtype);
    /* the units the device's other channels hold leave the products fewer; none where the
     * first products run before any such channel starts */
    double units = m->gemm_units;
    if (m->gemm_units > 0) {
        const int dev = t->placement[exec_rank];
        int held = 0;
        if (!(ar_plan_first_compute(p, op) && ar_plan_products_first_alone(p, t->placement, dev)))
            for (int r = 0; r < p->nranks; r++)
                for (int ci = 0; t->placement[r] == dev && ci < p->nchannels; ci++) {
                    const ar_chan_t *ch = ar_plan_chan(p, r, ci);
                    held += ch->nops > 0 && !ch->computes;
                }
        units = fmax(1, floor(m->gemm_units) - held);
    }
    const double comp = ar_cost_gemm_seconds(m, rate, units, rows, N, K), mem = bytes / (ar_cost_mem_gbps(&m->mem[buffer]) * 1e9);
    c->bytes = flops;
    c->memory_s = mem;
    c->move_s = comp >= mem ? comp : mem;
    c->move_term = comp >= mem ? AR_TERM_COMPUTE : AR_TERM_MEMORY;
    c->lat_s = m->gemm_overhead_ns * 1e-9;
    c->lat_term = AR_TERM_COMPUTE;
    c->total_s = c->lat_s + c->move_s;
    if (traffic && max_traffic > 0) {
        traffic[0] = (ar_op_traffic_t){AR_RES_TENSOR, t->placement[exec_rank], 0, flops};
        if (ntraffic) *ntraffic = 1;
    }
    return AR_OK;
}

int ar_cost_op(const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op, int exec_rank,
               ar_mem_t buffer, ar_op_cost_t *c, ar_op_traffic_t *traffic, int max_traffic,
               int *ntraffic, const ar_cost_warm_t *warm) {
    const ar_model_t *m = t->model;
    memset(c, 0, sizeof *c);
    if (ntraffic) *ntraffic = 0;
    if (op->code == AR_OP_COMPUTE) return compute_cost(t, p, op, exec_rank, buffer, c, traffic, max_traffic, ntraffic);
    if (op->code == AR_OP_NETREDUCE) return netreduce_cost(t, p, op, exec_rank, buffer, c, traffic, max_traffic, ntraffic);
    if (op->code != AR_OP_COPY && op->code != AR_OP_REDUCE) return AR_OK;

    acc_t a;
    acc_init(&a, traffic, max_traffic);
    const int l2_fronts = ar_cost_l2_fronts(m, buffer);
    /* what a byte read (0) or written (1) weighs on the L2's link: 0 where it fronts nothing */
    const double l2_w[2] = {ar_cost_l2_weight(m, buffer, 0), ar_cost_l2_weight(m, buffer, 1)};
    if (l2_fronts) {
        a.fwd_mem = 0;
        a.fwd_l2 = l2_w[0] + l2_w[1];
    }
    double B = (double)op->n * (double)ar_dtype_size(p->dtype);
    int edev = t->placement[exec_rank];
    const ar_mem_level_t *lvl = &m->mem[buffer];
    double mem_lat = lvl->lat_ns * 1e-9;
    double max_hop_lat = 0;
    /* An op with one operand on another device crosses one route, whose links and forwarding
     * devices are all distinct and apart from the op's own devices: added without a search
     * (a route halfway round ring_1d:16384 is 8192 of each). */
    int remote = 0;
    for (uint32_t s = 0; s <= op->nsrc; s++) {
        const int d = ar_cost_addr_device(t, ar_op_operand(p, op, s));
        remote += d >= 0 && d != edev;
    }

    for (uint32_t s = 0; s <= op->nsrc; s++) {
        /* s < nsrc: a source (read); s == nsrc: the destination (write). */
        int is_dst = s == op->nsrc;
        const ar_addr_t *ad = ar_op_operand(p, op, s);
        int dev = ar_cost_addr_device(t, ad);
        if (dev < 0) { /* host staging buffer over the host link (bytes: cb below) */
            double hl = m->host_link_lat_ns * 1e-9;
            if (is_dst) c->store_lat_s = hl; /* posted like a peer's: they land this much later */
            else if (hl > max_hop_lat) max_hop_lat = hl;
            continue;
        }
        const double hb = ar_cost_operand_mem_bytes(m, buffer, warm, p, ad, dev, is_dst, B);
        acc_mem(&a, dev, is_dst ? 0 : hb, is_dst ? hb : 0, B * l2_w[is_dst]);
        if (dev == edev) continue;
        double hop_lat = 0;
        a.fresh = remote == 1;
        if (is_dst) acc_route(&a, t, edev, dev, B, 0, mem_lat, &hop_lat);
        else acc_route(&a, t, dev, edev, B, 1, mem_lat, &hop_lat);
        a.fresh = 0;
        if (is_dst) c->store_lat_s = hop_lat; /* posted: the stores land this much later */
        else if (hop_lat > max_hop_lat) max_hop_lat = hop_lat;
        c->remote = 1;
    }
    ar_chan_bytes_t cb;
    ar_cost_chan_bytes(t, p, op, exec_rank, warm, &cb);
    const double host_bytes = cb.host_rd + cb.host_wr;
    if (host_bytes > 0) {
        double s = host_bytes / (m->host_link_gbps * 1e9);
        if (s > a.link_s) a.link_s = s;
        c->remote = 1;
    }
    c->link_s = a.link_s;
    if (m->link_issue_gbps > 0 && cb.peer_rd + cb.peer_wr > 0) {
        double s = (cb.peer_rd + cb.peer_wr) / (m->link_issue_gbps * 1e9);
        if (s > c->link_s) c->link_s = s;
    }
    /* a device's memory and the L2 in front of it work side by side: the longer of the two */
    const double mem_bw = ar_cost_mem_gbps(lvl) * 1e9, l2_bw = ar_cost_l2_gbps(m) * 1e9;
    for (int i = 0; i < a.ndev; i++) {
        double s = (a.mem[i].rd + a.mem[i].wr) / mem_bw;
        if (l2_fronts && a.mem[i].l2 / l2_bw > s) s = a.mem[i].l2 / l2_bw;
        if (s > c->memory_s) c->memory_s = s;
    }
    /* the device-wide resources after the links (what the L2 still holds never reaches memory) */
    for (int i = 0; a.traffic && i < a.ndev; i++) {
        const double bytes = a.mem[i].rd + a.mem[i].wr;
        if ((bytes > 0 || !l2_fronts) && a.ntraffic < a.max_traffic)
            a.traffic[a.ntraffic++] = (ar_op_traffic_t){AR_RES_MEMORY, a.mem[i].dev, 0, bytes};
        if (l2_fronts && a.mem[i].l2 > 0 && a.ntraffic < a.max_traffic)
            a.traffic[a.ntraffic++] = (ar_op_traffic_t){AR_RES_L2, a.mem[i].dev, 0, a.mem[i].l2};
    }
    if (a.traffic && host_bytes > 0 && a.ntraffic < a.max_traffic)
        a.traffic[a.ntraffic++] = (ar_op_traffic_t){AR_RES_HOST, edev, 0, host_bytes};
    if (a.traffic && m->link_issue_gbps > 0 && cb.peer_rd + cb.peer_wr > 0 && a.ntraffic < a.max_traffic)
        a.traffic[a.ntraffic++] = (ar_op_traffic_t){AR_RES_ISSUE, edev, 0, cb.peer_rd + cb.peer_wr};
    c->chan_s = ar_cost_chan_s(m, &cb, &c->chan_mem);
    c->loads_cold = cb.local_rd_cold > 0;
    if (c->chan_mem && c->chan_s > c->memory_s) c->memory_s = c->chan_s;
    if (!c->chan_mem && c->chan_s > c->link_s) c->link_s = c->chan_s;
    c->bytes = B;
    c->lat_s = mem_lat + max_hop_lat + ar_cost_host_rounds_s(m, &cb) + ar_cost_cold_lat_s(m, &cb);
    c->lat_term = c->remote ? AR_TERM_LINK : AR_TERM_MEMORY;
    if (c->link_s >= c->memory_s) {
        c->move_s = c->link_s;
        c->move_term = AR_TERM_LINK;
    } else {
        c->move_s = c->memory_s;
        c->move_term = AR_TERM_MEMORY;
    }
    if (op->code == AR_OP_REDUCE) c->reduce_s = (op->nsrc - 1) * B / (m->reduce_gbps * 1e9);
    c->overhead_s = ar_cost_op_overhead_s(t, p, op);
    c->total_s = c->lat_s + c->move_s + c->reduce_s + c->overhead_s;
    if (ntraffic) *ntraffic = a.ntraffic;
    acc_fini(&a);
    return AR_OK;
}

void ar_cost_chan_bytes(const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op, int exec_rank,
                        const ar_cost_warm_t *warm, ar_chan_bytes_t *b) {
    memset(b, 0, sizeof *b);
    if (op->code == AR_OP_NETREDUCE) { /* the sum comes in, the stores go out: a pull and a push */
        b->peer_rd = b->peer_wr = (double)op->n * (double)ar_dtype_size(p->dtype);
        b->src_groups = 1;
        return;
    }
    if (op->code != AR_OP_COPY && op->code != AR_OP_REDUCE) return;
    b->src_groups = (int)((op->nsrc + 1) / 2);
    b->reduce_fp32 = op->code == AR_OP_REDUCE && p->dtype == AR_FP32;
    double B = (double)op->n * (double)ar_dtype_size(p->dtype);
    int edev = t->placement[exec_rank];
    double local_wr = 0;
    for (uint32_t s = 0; s <= op->nsrc; s++) {
        int is_dst = s == op->nsrc;
        int dev = ar_cost_addr_device(t, ar_op_operand(p, op, s));
        /* the source loaded together with this one (the executor's groups of two) */
        uint32_t mate = s ^ 1u;
        int paired = !is_dst && mate < op->nsrc && p->srcs[op->src + mate].rank == AR_RANK_HOST;
        if (dev < 0 && paired) b->host_rd_paired += B;
        /* a later group with a host source: its round waits for the host (count it once) */
        if (!is_dst && dev < 0 && s >= 2 && (s % 2 == 0 || p->srcs[op->src + s - 1].rank != AR_RANK_HOST))
            b->host_groups++;
        if (is_dst) {
            if (dev < 0) b->host_wr += B;
            else if (dev != edev) b->peer_wr += B;
            else local_wr = B;
        } else {
            if (dev < 0) b->host_rd += B;
            else if (dev != edev) b->peer_rd += B;
            else {
                b->local_rd += B;
                /* the share of its lines the L2 no longer holds; the coldest sets the op's wait.
                 * The load rate takes it in sixteenths: a channel's rate that changed with every
                 * op would cost the sim a bandwidth update each (switch:512 2stage 64 MB, h200_sxm:
                 * 31 s against 24), for at most 0.5% of the op's load time. */
                const double miss = warm && warm->miss > 0 ? ar_cost_warm_cold(warm, p, ar_op_operand(p, op, s), dev, B) : 0;
                b->local_rd_cold += B * round(miss * 16) / 16;
                if (miss > b->cold_share) b->cold_share = miss;
            }
        }
    }
    if (b->local_rd_cold > 0 && warm && warm->loading)
        b->crowd = warm->loading[edev] * (b->local_rd_cold + local_wr) / b->local_rd;
}

double ar_cost_chan_s(const ar_model_t *m, const ar_chan_bytes_t *b, int *mem_term) {
    /* an op whose stores cross to another device loads its local sources slower */
    double local_gbps = b->peer_wr > 0 && m->chan_local_read_push_gbps > 0 ? m->chan_local_read_push_gbps
                                                                            : m->chan_local_read_gbps;
    /* the probes' REDUCEs are bf16: an fp32 one's arithmetic per byte is less */
    if (b->reduce_fp32 && m->chan_local_read_fp32_gbps > 0 && m->chan_local_read_gbps > 0)
        local_gbps *= m->chan_local_read_fp32_gbps / m->chan_local_read_gbps;
    /* lines the L2 no longer holds come slower to a channel whose loads in flight are
     * bounded: their rate scales by chan_local_read_cold_gbps / chan_local_read_gbps, and
     * falls as the device's other channels load its memory too, each load waiting longer
     * as the demand grows (chan_cold_crowd_gbps; one H200 block's x-reduce from HBM: 45.9
     * GB/s alone, 43.9 beside 7 others, 39.8 beside 23, 35.2 beside 47). The others are
     * those whose op was in progress when this one began: its rate is set once. */
    double local = 0;
    if (b->local_rd > 0 && local_gbps > 0) {
        const double cold_gbps = m->chan_local_read_cold_gbps > 0 && m->chan_local_read_gbps > 0
                                     ? local_gbps * m->chan_local_read_cold_gbps / m->chan_local_read_gbps
                                     : local_gbps;
        const double crowd = m->chan_cold_crowd_gbps > 0 ? 1 + b->crowd * cold_gbps / m->chan_cold_crowd_gbps : 1;
        local = (b->local_rd - b->local_rd_cold) / (local_gbps * 1e9) + b->local_rd_cold * crowd / (cold_gbps * 1e9);
    }
    double pull_gbps = ar_model_chan_read_gbps(m);
    double pull = b->peer_rd > 0 && pull_gbps > 0 ? b->peer_rd / (pull_gbps * 1e9) : 0;
    double host = 0;
    if (b->host_rd > 0 && m->host_chan_read_gbps > 0) {
        const double pair_gbps = m->host_chan_read_pair_gbps > 0 ? m->host_chan_read_pair_gbps : m->host_chan_read_gbps;
        host = (b->host_rd - b->host_rd_paired) / (m->host_chan_read_gbps * 1e9) +
               b->host_rd_paired / (pair_gbps * 1e9);
    }
    double loads = local + pull + host;
    /* each further group of sources is at least one more round of loads (a round with a
     * host source also waits the host's latency: ar_cost_host_rounds_s, part of the op's
     * latency) */
    const double groups = b->src_groups > 1 ? (b->src_groups - 1) * m->reduce_group_ns * 1e-9 : 0;
    if (groups > loads) loads = groups;
    double push = b->peer_wr > 0 && m->chan_write_gbps > 0 ? b->peer_wr / (m->chan_write_gbps * 1e9) : 0;
    double hostw = b->host_wr > 0 && m->host_chan_write_gbps > 0
                       ? b->host_wr / (m->host_chan_write_gbps * 1e9) : 0;
    double stores = push > hostw ? push : hostw;
    if (mem_term) *mem_term = loads >= stores && local >= pull && local >= host && (local > 0 || groups > 0);
    return loads > stores ? loads : stores;
}

/* A level's rate for a byte written among reads: its write rate, or what a copy's written
 * byte adds to its read (copy_gbps: the L2 serves loads and stores together faster than
 * one after the other). */
static double level_write_gbps(const ar_mem_level_t *lvl) {
    if (!(lvl->copy_gbps > 0) || !(lvl->read_gbps > 0)) return lvl->write_gbps;
    const double per_byte = 2.0 / lvl->copy_gbps - 1.0 / lvl->read_gbps;
    return per_byte > 0 ? 1.0 / per_byte : lvl->write_gbps;
}

double ar_cost_mem_gbps(const ar_mem_level_t *lvl) {
    const double wr = level_write_gbps(lvl);
    if (lvl->read_gbps == wr) return lvl->read_gbps;
    return 2.0 / (1.0 / lvl->read_gbps + 1.0 / wr);
}

double ar_cost_cold_lat_s(const ar_model_t *m, const ar_chan_bytes_t *b) {
    return m->cold_lat_ns * 1e-9 * b->cold_share;
}

double ar_cost_host_rounds_s(const ar_model_t *m, const ar_chan_bytes_t *b) {
    const double round = m->host_link_lat_ns > m->mem[AR_MEM_HBM].lat_ns ? m->host_link_lat_ns - m->mem[AR_MEM_HBM].lat_ns
                                                                          : 0;
    return b->host_groups * round * 1e-9;
}

/* s and the link latencies of the route from device a to b, its first `skip` hops left out.
 * Where every link is of one kind, its hop count gives them (routes are shortest paths): no
 * walk of a route of 8192 hops, halfway round ring_1d:16384, for each SIGNAL to a peer. */
static double route_lat_s(const ar_topo_t *t, int a, int b, int skip, double s) {
    const ar_link_kind_t *kinds = t->model->links;
    if (t->one_kind) {
        const int n = ar_topo_hops(t, a, b);
        if (n >= skip) return s + (n - skip) * (kinds[t->one_kind - 1].lat_ns * 1e-9);
    }
    route_t rt;
    const int n = route_get(&rt, t, a, b);
    for (int h = skip; h < n; h++) s += kinds[t->links[rt.links[h]].kind].lat_ns * 1e-9;
    route_free(&rt);
    return s;
}

double ar_cost_signal_s(const ar_topo_t *t, int from_rank, int to_rank) {
    const ar_model_t *m = t->model;
    int a = t->placement[from_rank], b = t->placement[to_rank];
    double s = m->signal_lat_ns * 1e-9;
    if (a == b) return m->signal_lat_local_ns > 0 ? m->signal_lat_local_ns * 1e-9 : s;
    return route_lat_s(t, a, b, 1, s);
}

double ar_cost_route_lat_s(const ar_topo_t *t, int from_rank, int to_rank) {
    const int a = t->placement[from_rank], b = t->placement[to_rank];
    return a == b ? 0 : route_lat_s(t, a, b, 0, 0);
}

double ar_cost_launch_s(const ar_topo_t *t) { return t->model->launch_ns * 1e-9; }

int ar_cost_chan_starts(const ar_topo_t *t, const ar_plan_t *p, double *start) {
    /* blocks laid out so far on each device; counted in one pass, ranks in order */
    int *next = calloc((size_t)t->ndevices, sizeof(int));
    if (!next) return AR_ENOMEM;
    double step = t->model->launch_block_ns * 1e-9;
    const int nranks = ar_plan_run_chans(p) / p->nchannels;
    for (int r = 0; r < nranks; r++)
        for (int c = 0; c < p->nchannels; c++) {
            int gi = r * p->nchannels + c;
            start[gi] = p->chans[gi].nops ? next[t->placement[r]]++ * step : 0;
        }
    free(next);
    return AR_OK;
}

double ar_cost_wait_s(const ar_topo_t *t) { return t->model->wait_overhead_ns * 1e-9; }

double ar_cost_land_s(const ar_topo_t *t, double bytes) {
    double g = t->model->chan_write_land_gbps;
    return g > 0 ? bytes / (g * 1e9) : 0;
}

double ar_cost_signal_issue_s(const ar_topo_t *t, int from_rank, int to_rank) {
    const ar_model_t *m = t->model;
    int remote = t->placement[from_rank] != t->placement[to_rank];
    return (remote && m->signal_release_remote_ns > 0 ? m->signal_release_remote_ns : m->signal_release_ns) * 1e-9;
}

double ar_cost_land_after(const ar_topo_t *t, int stored, double land, double first, double end,
                          double store_lat, double bytes) {
    if (!stored || land < first) land = first;
    land += ar_cost_land_s(t, bytes);
    return land > end + store_lat ? land : end + store_lat;
}

void ar_cost_release_wait(int stored, double land, double sig_land, double floor, double now, double *fence,
                          double *landing) {
    double ready = stored && land > sig_land ? land : sig_land;
    if (now + floor > ready) ready = now + floor;
    *fence = ready > now ? ready - now : 0;
    *landing = stored && land > now ? land - now : 0;
}

double ar_cost_op_overhead_s(const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op) {
    const ar_model_t *m = t->model;
    return (m->op_overhead_ns + (op->code == AR_OP_REDUCE ? m->reduce_op_ns : 0) +
            (ar_op_misaligned(p, op) ? m->op_misalign_ns : 0)) * 1e-9;
}

double ar_cost_release_floor_s(const ar_topo_t *t, const ar_plan_t *p, const ar_cost_cross_t *x, int gi, uint32_t pc,
                               double at) {
    const double fence = t->model->signal_fence_ns * 1e-9, ns = t->model->signal_release_chan_ns;
    const ar_chan_t *c = &p->chans[gi];
    if (!(ns > 0) || (pc > 0 && p->ops[c->first + pc - 1].code == AR_OP_SIGNAL)) return fence;
    const int across = ar_cost_cross_count(x, t->placement[gi / p->nchannels], at);
    return fence + (across > 1 ? ns * 1e-9 * log2((double)across) : 0);
}

int ar_cost_cross_init(ar_cost_cross_t *x, const ar_topo_t *t, const ar_plan_t *p) {
    const int nch = ar_plan_run_chans(p), nranks = nch / p->nchannels;
    x->now = calloc((size_t)nch, sizeof *x->now);
    x->before = calloc((size_t)nch, sizeof *x->before);
    x->since = calloc((size_t)nch, sizeof *x->since);
    x->dev_first = calloc((size_t)t->ndevices + 1, sizeof *x->dev_first);
    x->dev_chans = malloc((size_t)nch * sizeof *x->dev_chans);
    if (!x->now || !x->before || !x->since || !x->dev_first || !x->dev_chans) {
        ar_cost_cross_free(x);
        return AR_ENOMEM;
    }
    /* a device's channels side by side, so a count walks only them */
    for (int r = 0; r < nranks; r++) x->dev_first[t->placement[r] + 1] += p->nchannels;
    for (int d = 0; d < t->ndevices; d++) x->dev_first[d + 1] += x->dev_first[d];
    /* ranks ascending within each device: one pass, each rank's channels at its device's cursor */
    int *at = malloc((size_t)t->ndevices * sizeof *at);
    if (!at) {
        ar_cost_cross_free(x);
        return AR_ENOMEM;
    }
    for (int d = 0; d < t->ndevices; d++) at[d] = x->dev_first[d];
    for (int r = 0; r < nranks; r++)
        for (int c = 0; c < p->nchannels; c++) x->dev_chans[at[t->placement[r]]++] = r * p->nchannels + c;
    free(at);
    return AR_OK;
}

void ar_cost_cross_free(ar_cost_cross_t *x) {
    AR_FREE_EACH(x->now, x->before, x->since, x->dev_first, x->dev_chans);
    memset(x, 0, sizeof *x);
}

void ar_cost_cross_set(ar_cost_cross_t *x, int gi, int crosses, double t) {
    if (x->now[gi] == crosses) return;
    if (x->since[gi] <= t) x->before[gi] = x->now[gi];
    x->now[gi] = crosses;
    x->since[gi] = t;
}

int ar_cost_cross_count(const ar_cost_cross_t *x, int device, double at) {
    int n = 0;
    for (int i = x->dev_first[device]; i < x->dev_first[device + 1]; i++) {
        const int gi = x->dev_chans[i];
        n += x->since[gi] <= at * (1 + 1e-12) ? x->now[gi] : x->before[gi];
    }
    return n;
}

int ar_cost_op_crosses(const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op, int exec_rank) {
    const int e = t->placement[exec_rank];
    if (op->code == AR_OP_SIGNAL) return t->placement[op->dst.rank] != e;
    if (op->code == AR_OP_NETREDUCE) return 1; /* every rank's device, through the switch */
    if (op->code != AR_OP_COPY && op->code != AR_OP_REDUCE) return 0;
    for (uint32_t s = 0; s <= op->nsrc; s++) {
        const int d = ar_cost_addr_device(t, ar_op_operand(p, op, s));
        if (d >= 0 && d != e) return 1;
    }
    return 0;
}

int ar_cost_op_remote_store(const ar_topo_t *t, const ar_op_t *op, int exec_rank) {
    if (op->code == AR_OP_NETREDUCE) return 1; /* the sum is stored on every rank */
    if (op->code != AR_OP_COPY && op->code != AR_OP_REDUCE) return 0;
    int d = ar_cost_addr_device(t, &op->dst);
    return d != t->placement[exec_rank]; /* another device, or the host (-1) */
}

int ar_cost_check_capacity(const ar_topo_t *t, const ar_plan_t *p, ar_mem_t buffer,
                           ar_error_t *err) {
    const double per_rank = (double)(ar_plan_buf_elems(p, 0, AR_BUF_IN) + p->count + p->scratch_elems) *
                            ar_dtype_size(p->dtype);
    return ar_cost_check_rank_bytes(t, per_rank, buffer, err);
}

int ar_cost_check_rank_bytes(const ar_topo_t *t, double per_rank, ar_mem_t buffer, ar_error_t *err) {
    const ar_mem_level_t *lvl = &t->model->mem[buffer];
    if (!lvl->present)
        return AR_ERR(err, AR_EINVAL, "model %s has no %s level (--buffer)", t->model->name,
                      ar_mem_name(buffer));
    int *on = malloc((size_t)t->ndevices * sizeof *on);
    if (!on) return AR_ERR(err, AR_ENOMEM, "out of memory");
    ar_topo_ranks_per_device(t, on);
    for (int d = 0; d < t->ndevices; d++) {
        int nr = on[d];
        double need = per_rank * nr;
        if (need > lvl->capacity_bytes) {
            char level[96], what[96];
            snprintf(level, sizeof level, "%s of %s", ar_mem_name(buffer), t->nodes[d].name);
            snprintf(what, sizeof what, "input, output and scratch of %d rank%s", nr, nr == 1 ? "" : "s");
            free(on);
            return ar_capacity_err(err, level, need, what, lvl->capacity_bytes, AR_CAPACITY_FIX);
        }
    }
    free(on);
    return AR_OK;
}

/* At most this many pages over all buffers: page bytes grow with the plan instead. */
#define WARM_MAX_PAGES (4u << 20)
#define WARM_MIN_PAGE 4096.0

int ar_cost_tracks_warmth(const ar_model_t *m) {
    return m && m->cold_lat_ns > 0 && m->mem[AR_MEM_SRAM].capacity_bytes > 0;
}

/* The L2's reach: a line last touched at most *hit bytes ago is there, one touched more
 * than *miss bytes ago is not. */
static void l2_reach(const ar_model_t *m, double *hit, double *miss) {
    const double cap = m->mem[AR_MEM_SRAM].capacity_bytes;
    *hit = m->l2_hit_bytes > 0 ? m->l2_hit_bytes : cap;
    *miss = m->l2_miss_bytes > 0 ? m->l2_miss_bytes : cap;
    if (*hit > *miss) *hit = *miss;
}

/* The same for bandwidth: lines whose bytes the L2 still serves at its rates. A chase of
 * dependent loads sees the far half of the L2 as slower from about half its capacity on;
 * streams of loads in flight see the whole L2 at its rate (one H200: re-reads at 8.5 TB/s
 * up to 0.9 x the L2, near memory's 4.3 from 1.25 x). */
static void l2_bw_reach(const ar_model_t *m, double *hit, double *miss) {
    l2_reach(m, hit, miss);
    if (m->l2_bw_hit_bytes > 0) *hit = m->l2_bw_hit_bytes;
    if (m->l2_bw_miss_bytes > 0) *miss = m->l2_bw_miss_bytes;
    if (*hit > *miss) *hit = *miss;
}

static double miss_share(double hit, double miss, double d) {
    if (d > miss) return 1;
    if (d <= hit) return 0;
    return (d - hit) / (miss - hit);
}

int ar_cost_l2_fronts(const ar_model_t *m, ar_mem_t buffer) {
    const ar_mem_level_t *l2 = &m->mem[AR_MEM_SRAM];
    return buffer == AR_MEM_HBM && ar_cost_tracks_warmth(m) && l2->read_gbps > 0 && l2->write_gbps > 0;
}

/* The L2's rate for a byte read or written: sram's, and never below HBM's, whose measured
 * bytes all crossed the L2 (a model calibrated before the L2 was timed in one launch of many
 * passes has an sram rate below memory's). */
static double l2_rate(const ar_model_t *m, int write) {
    const ar_mem_level_t *l2 = &m->mem[AR_MEM_SRAM], *hbm = &m->mem[AR_MEM_HBM];
    const double own = write ? level_write_gbps(l2) : l2->read_gbps, mem = write ? level_write_gbps(hbm) : hbm->read_gbps;
    return own > mem ? own : mem;
}

double ar_cost_l2_gbps(const ar_model_t *m) {
    const double rd = l2_rate(m, 0), wr = l2_rate(m, 1);
    return rd == wr ? rd : 2.0 / (1.0 / rd + 1.0 / wr);
}

double ar_cost_l2_weight(const ar_model_t *m, ar_mem_t buffer, int write) {
    if (!ar_cost_l2_fronts(m, buffer)) return 0;
    return ar_cost_l2_gbps(m) / l2_rate(m, write);
}

/* The memory's one link runs at ar_cost_mem_gbps(level), its reads and writes together;
 * a byte counts on it by the time its own kind takes, at the level's read or write rate.
 * Where the L2 fronts the level, what it still holds (1 - cold) never reaches the memory. */
double ar_cost_mem_weight(const ar_model_t *m, ar_mem_t buffer, int write, double cold) {
    const ar_mem_level_t *lvl = &m->mem[buffer];
    const double one = ar_cost_mem_gbps(lvl), own = write ? level_write_gbps(lvl) : lvl->read_gbps;
    if (!(one > 0) || !(own > 0)) return 1;
    return (ar_cost_l2_fronts(m, buffer) ? cold : 1) * one / own;
}

int ar_cost_mem_weighted(const ar_model_t *m, ar_mem_t buffer) {
    return ar_cost_mem_weight(m, buffer, 0, 1) != 1 || ar_cost_mem_weight(m, buffer, 1, 1) != 1 ||
           ar_cost_mem_weight(m, buffer, 0, 0) != ar_cost_mem_weight(m, buffer, 0, 1) ||
           ar_cost_mem_weight(m, buffer, 1, 0) != ar_cost_mem_weight(m, buffer, 1, 1) ||
           ar_cost_l2_fronts(m, buffer);
}

double ar_cost_l2_cold(const ar_model_t *m, ar_mem_t buffer, double d) {
    if (buffer != AR_MEM_HBM || !ar_cost_tracks_warmth(m)) return 1;
    double hit, miss;
    l2_bw_reach(m, &hit, &miss);
    return miss_share(hit, miss, d);
}

static ar_addr_t warm_place(const ar_cost_warm_t *w, const ar_plan_t *p, const ar_addr_t *a, int *dev);
static void warm_span(const ar_cost_warm_t *w, const ar_plan_t *p, const ar_addr_t *a, double B, int *bi,
                      uint64_t *j0, uint64_t *j1);

int ar_cost_warm_init(ar_cost_warm_t *w, const ar_topo_t *t, const ar_plan_t *p) {
    memset(w, 0, sizeof *w);
    const ar_model_t *m = t->model;
    if (!ar_cost_tracks_warmth(m)) return AR_OK;
    const double es = (double)ar_dtype_size(p->dtype);
    /* rank 0's ops and buffers, or its row's, for all (ar_plan_t.mirror_off) */
    const int one = p->only_rank >= 0;
    const int nranks = one ? ar_plan_kept_ranks(p) : p->nranks;
    if (one) w->topo = t, w->shifts = ar_plan_shifts(p);
    double *traffic = calloc((size_t)t->ndevices, sizeof *traffic);
    w->nbufs = nranks * AR_NBUF;
    w->clock = calloc((size_t)t->ndevices, sizeof *w->clock);
    w->stamp = calloc((size_t)w->nbufs, sizeof *w->stamp);
    w->page = calloc((size_t)w->nbufs, sizeof *w->page);
    w->npage = calloc((size_t)w->nbufs, sizeof *w->npage);
    w->loading = calloc((size_t)t->ndevices, sizeof *w->loading);
    if (!traffic || !w->clock || !w->stamp || !w->page || !w->npage || !w->loading) goto nomem;
    /* pages as fine as every rank's buffers would get: a plan of one rank predicts what
     * every rank's does */
    const uint64_t all = (uint64_t)p->nranks * AR_NBUF;
    const uint64_t per_buf = WARM_MAX_PAGES / all > 0 ? WARM_MAX_PAGES / all : 1;
    for (int r = 0; r < nranks; r++)
        for (int b = 0; b < AR_NBUF; b++) {
            const int i = r * AR_NBUF + b;
            const double bytes = (double)ar_plan_buf_elems(p, r, (ar_buf_t)b) * es;
            double page = bytes / (double)per_buf;
            if (page < WARM_MIN_PAGE) page = WARM_MIN_PAGE;
            w->page[i] = page;
            w->npage[i] = (uint64_t)ceil(bytes / page) + 1;
            w->stamp[i] = calloc(w->npage[i], sizeof **w->stamp);
            if (!w->stamp[i]) goto nomem;
        }
    /* One execution's traffic per device: how long ago the previous one touched each page
     * (the plan's ops on any device: their translates onto the device standing for its orbit
     * touch that as much) ... or fewer: every byte between two touches of a line is in the
     * lines the plan touches (marked here), and the L2 holds lines, not touches (its reach
     * was measured touching each line once). An address with epoch parity touches its other
     * slot the next execution: a line of it comes back two executions later, both slots
     * touched meanwhile. */
    w->footprint = calloc((size_t)t->ndevices, sizeof *w->footprint);
    if (!w->footprint) goto nomem;
    for (uint32_t i = 0; i < p->nops; i++) {
        const ar_op_t *op = &p->ops[i];
        if (op->code != AR_OP_COPY && op->code != AR_OP_REDUCE) continue;
        const double B = (double)op->n * es;
        for (uint32_t s = 0; s <= op->nsrc; s++) {
            const ar_addr_t *a = ar_op_operand(p, op, s);
            int d = ar_cost_addr_device(t, a);
            if (d < 0) continue;
            ar_addr_t at = warm_place(w, p, a, &d); /* d: the device standing for its orbit */
            traffic[d] += B;
            for (int slot = 0; slot < ((at.buf & AR_ADDR_PARITY) ? 2 : 1); slot++, at.off += p->parity_elems) {
                int bi;
                uint64_t j0, j1;
                warm_span(w, p, &at, B, &bi, &j0, &j1);
                for (uint64_t j = j0; j <= j1; j++) w->stamp[bi][j] = 1;
            }
        }
    }
    for (int r = 0; r < nranks; r++)
        for (int b = 0; b < AR_NBUF; b++) {
            const int i = r * AR_NBUF + b;
            double touched = 0;
            for (uint64_t j = 0; j < w->npage[i]; j++) touched += w->stamp[i][j];
            const double bytes = (double)ar_plan_buf_elems(p, r, (ar_buf_t)b) * es, at_most = touched * w->page[i];
            w->footprint[t->placement[r]] += at_most < bytes ? at_most : bytes;
        }
    for (int d = 0; d < t->ndevices; d++)
        if (w->footprint[d] < traffic[d]) traffic[d] = w->footprint[d];
    for (int r = 0; r < nranks; r++)
        for (int b = 0; b < AR_NBUF; b++) {
            const int i = r * AR_NBUF + b;
            for (uint64_t j = 0; j < w->npage[i]; j++) w->stamp[i][j] = -traffic[t->placement[r]];
        }
    l2_reach(m, &w->hit, &w->miss);
    l2_bw_reach(m, &w->bw_hit, &w->bw_miss);
    free(traffic);
    return AR_OK;
nomem:
    free(traffic);
    ar_cost_warm_free(w);
    return AR_ENOMEM;
}

void ar_cost_warm_free(ar_cost_warm_t *w) {
    for (int i = 0; w->stamp && i < w->nbufs; i++) free(w->stamp[i]);
    AR_FREE_EACH(w->stamp, w->clock, w->footprint, w->page, w->npage, w->loading);
    memset(w, 0, sizeof *w);
}

/* Where warmth keeps operand a (of p, as ar_op_operand gives it), on device *dev: itself, or
 * in a plan of rank 0 alone or its row (w->topo) its stand-in on the plan's rank of its orbit,
 * whose device stands for the orbit's: an op reaching a rank q the plan does not keep stands
 * for the translate that reaches q's stand-in at the same moment, at its own offset
 * (ar_plan_t.mirror_off). */
static ar_addr_t warm_place(const ar_cost_warm_t *w, const ar_plan_t *p, const ar_addr_t *a, int *dev) {
    if (!w->topo) return *a;
    ar_addr_t at = *a;
    *dev = ar_topo_orbit_device(w->topo, w->shifts, *dev);
    if (!ar_plan_keeps_rank(p, a->rank)) {
        at.off = p->mirror_off[ar_plan_operand_index(p, a)];
        at.rank = ar_topo_orbit_device(w->topo, w->shifts, a->rank);
    }
    return at;
}

/* The pages [*j0, *j1] of buffer *bi that bytes [off, off + B) of a cover. */
static void warm_span(const ar_cost_warm_t *w, const ar_plan_t *p, const ar_addr_t *a, double B, int *bi,
                      uint64_t *j0, uint64_t *j1) {
    *bi = a->rank * AR_NBUF + (int)ar_addr_buf(*a);
    const double lo = (double)a->off * (double)ar_dtype_size(p->dtype);
    *j0 = (uint64_t)(lo / w->page[*bi]);
    *j1 = (uint64_t)((lo + (B > 0 ? B - 1 : 0)) / w->page[*bi]);
    if (*j1 >= w->npage[*bi]) *j1 = w->npage[*bi] - 1;
    if (*j0 > *j1) *j0 = *j1;
}

/* The share of bytes [a, a + B) on device dev that has left the L2 by the reach [hit, miss]:
 * the mean over its pages. */
static double warm_span_miss(const ar_cost_warm_t *w, double hit, double miss_at, const ar_plan_t *p,
                             const ar_addr_t *a, int dev, double B) {
    int bi;
    uint64_t j0, j1;
    double miss = 0;
    const ar_addr_t at = warm_place(w, p, a, &dev);
    warm_span(w, p, &at, B, &bi, &j0, &j1);
    const double furthest = w->footprint[dev];
    for (uint64_t j = j0; j <= j1; j++) {
        const double d = w->clock[dev] - w->stamp[bi][j];
        miss += miss_share(hit, miss_at, d < furthest ? d : furthest);
    }
    return miss / (double)(j1 - j0 + 1);
}

double ar_cost_warm_cold(const ar_cost_warm_t *w, const ar_plan_t *p, const ar_addr_t *a, int dev, double B) {
    return w == NULL || w->miss <= 0 ? 1 : warm_span_miss(w, w->hit, w->miss, p, a, dev, B);
}

double ar_cost_warm_cold_bw(const ar_cost_warm_t *w, const ar_plan_t *p, const ar_addr_t *a, int dev, double B) {
    return w == NULL || w->miss <= 0 ? 1 : warm_span_miss(w, w->bw_hit, w->bw_miss, p, a, dev, B);
}

double ar_cost_operand_mem_bytes(const ar_model_t *m, ar_mem_t buffer, const ar_cost_warm_t *w, const ar_plan_t *p,
                                 const ar_addr_t *a, int dev, int write, double B) {
    const double cold = buffer == AR_MEM_HBM ? ar_cost_warm_cold_bw(w, p, a, dev, B) : 1;
    return B * ar_cost_mem_weight(m, buffer, write, cold);
}

void ar_cost_warm_touch(ar_cost_warm_t *w, const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op) {
    if (w->miss <= 0 || (op->code != AR_OP_COPY && op->code != AR_OP_REDUCE)) return;
    const double B = (double)op->n * (double)ar_dtype_size(p->dtype);
    for (uint32_t s = 0; s <= op->nsrc; s++) {
        const ar_addr_t *a = ar_op_operand(p, op, s);
        int d = ar_cost_addr_device(t, a);
        if (d < 0) continue;
        const ar_addr_t at = warm_place(w, p, a, &d);
        w->clock[d] += B;
        int bi;
        uint64_t j0, j1;
        warm_span(w, p, &at, B, &bi, &j0, &j1);
        for (uint64_t j = j0; j <= j1; j++) w->stamp[bi][j] = w->clock[d];
    }
}
