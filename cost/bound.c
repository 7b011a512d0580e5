/* The physical bound of an allreduce (arsim/bound.h: the formulas and why each holds). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "arsim/bound.h"
#include "arsim/cost.h"
#include "arsim/util.h"

/* Past this many devices the cut term is left out (0): any cut gives a valid bound, the
 * narrowest only a tighter one, and finding it costs a max-flow per device. */
#define CUT_MAX_DEVICES 2048

/* What depends on the topology alone, computed once per way (device links only, and with
 * the host's staging links) and kept with it (t->bound_cache: two of these). */
typedef struct topo_figs_s {
    int max_hops;
    double far_ns;          /* the farthest devices: hops x lat_min, or over the host if sooner */
    double lat_min_ns;      /* the lowest latency of a first hop (a link, or the host link) */
    double inject_gbps;     /* the narrowest device's links, one direction */
    double inject_sum_gbps; /* every device's links added up, one direction */
    double cut_gbps;        /* the global minimum cut between devices, one direction */
} topo_figs_t;

/* ---- the minimum cut: max-flow (Dinic) from device 0 to each other device ---- */

typedef struct flow_s {
    int n, m;
    int *head, *next, *to, *level, *it, *queue;
    double *cap;
} flow_t;

/* The host is one more node (index nnodes), linked to every device at half the model's
 * host_link_gbps each way: the staging link is one bandwidth both directions share. */
static double host_gbps_each_way(const ar_topo_t *t) { return t->model->host_link_gbps / 2; }

/* The host link's bandwidth each way in this way of counting: 0 when only device links count. */
static double host_gbps(const ar_topo_t *t, int via_host) { return via_host ? host_gbps_each_way(t) : 0; }

static int flow_init(flow_t *f, const ar_topo_t *t) {
    memset(f, 0, sizeof *f);
    f->n = t->nnodes + 1;
    const int m = 2 * (t->nlinks + t->ndevices); /* each link an arc and its residual */
    f->head = malloc(sizeof(int) * (size_t)f->n);
    f->level = malloc(sizeof(int) * (size_t)f->n);
    f->it = malloc(sizeof(int) * (size_t)f->n);
    f->queue = malloc(sizeof(int) * (size_t)f->n);
    f->next = malloc(sizeof(int) * (size_t)(m ? m : 1));
    f->to = malloc(sizeof(int) * (size_t)(m ? m : 1));
    f->cap = malloc(sizeof(double) * (size_t)(m ? m : 1));
    if (!f->head || !f->level || !f->it || !f->queue || !f->next || !f->to || !f->cap) return AR_ENOMEM;
    return AR_OK;
}

static void flow_free(flow_t *f) {
    AR_FREE_EACH(f->head, f->level, f->it, f->queue, f->next, f->to, f->cap);
}

/* The links as a flow network, every capacity full again. An undirected link of
 * capacity c is two arcs of capacity c, each the other's residual. */
static void flow_reset(flow_t *f, const ar_topo_t *t, int via_host) {
    for (int i = 0; i < f->n; i++) f->head[i] = -1;
    f->m = 0;
    for (int i = 0; i < t->nlinks + t->ndevices; i++) {
        const int host = i >= t->nlinks;
        const double c = host ? host_gbps(t, via_host) : ar_topo_link_gbps(t, i);
        const int a = host ? i - t->nlinks : t->links[i].a, b = host ? t->nnodes : t->links[i].b;
        f->to[f->m] = b, f->cap[f->m] = c, f->next[f->m] = f->head[a], f->head[a] = f->m++;
        f->to[f->m] = a, f->cap[f->m] = c, f->next[f->m] = f->head[b], f->head[b] = f->m++;
    }
}

static int flow_levels(flow_t *f, int s, int sink, double eps) {
    for (int i = 0; i < f->n; i++) f->level[i] = -1;
    int qh = 0, qt = 0;
    f->level[s] = 0;
    f->queue[qt++] = s;
    while (qh < qt) {
        const int v = f->queue[qh++];
        for (int e = f->head[v]; e >= 0; e = f->next[e])
            if (f->cap[e] > eps && f->level[f->to[e]] < 0) {
                f->level[f->to[e]] = f->level[v] + 1;
                f->queue[qt++] = f->to[e];
            }
    }
    return f->level[sink] >= 0;
}

static double flow_push(flow_t *f, int v, int sink, double want, double eps) {
    if (v == sink) return want;
    for (; f->it[v] >= 0; f->it[v] = f->next[f->it[v]]) {
        const int e = f->it[v], w = f->to[e];
        if (f->cap[e] <= eps || f->level[w] != f->level[v] + 1) continue;
        const double got = flow_push(f, w, sink, want < f->cap[e] ? want : f->cap[e], eps);
        if (got > eps) {
            f->cap[e] -= got;
            f->cap[e ^ 1] += got;
            return got;
        }
    }
    return 0;
}

static double max_flow(flow_t *f, const ar_topo_t *t, int via_host, int s, int sink, double eps) {
    flow_reset(f, t, via_host);
    double total = 0;
    while (flow_levels(f, s, sink, eps)) {
        memcpy(f->it, f->head, sizeof(int) * (size_t)f->n);
        double got;
        while ((got = flow_push(f, s, sink, INFINITY, eps)) > eps) total += got;
    }
    return total;
}

static int min_cut_gbps(const ar_topo_t *t, int via_host, double *out) {
    *out = 0;
    if (t->ndevices < 2 || t->ndevices > CUT_MAX_DEVICES) return AR_OK;
    flow_t f;
    int rc = flow_init(&f, t);
    if (rc == AR_OK) {
        double total = host_gbps(t, via_host) * t->ndevices;
        for (int i = 0; i < t->nlinks; i++) total += ar_topo_link_gbps(t, i);
        const double eps = 1e-12 * (total > 0 ? total : 1);
        double best = INFINITY;
        for (int d = 1; d < t->ndevices; d++) {
            const double c = max_flow(&f, t, via_host, 0, d, eps);
            if (c < best) best = c;
        }
        *out = isfinite(best) ? best : 0;
    }
    flow_free(&f);
    return rc;
}

static int topo_figs(const ar_topo_t *t, int via_host, const topo_figs_t **out) {
    topo_figs_t *both = t->bound_cache;
    if (!both) {
        if (!(both = calloc(2, sizeof *both))) return AR_ENOMEM;
        for (int w = 0; w < 2; w++) both[w].max_hops = -1; /* not computed yet */
        ((ar_topo_t *)t)->bound_cache = both; /* a cache of what t already determines */
    }
    topo_figs_t *g = &both[via_host ? 1 : 0];
    *out = g;
    if (g->max_hops >= 0) return AR_OK;
    g->max_hops = ar_topo_diameter(t);
    g->lat_min_ns = INFINITY;
    for (int i = 0; i < t->nlinks; i++) {
        const int k = t->links[i].kind;
        if (k >= 0 && k < t->model->nlinks && t->model->links[k].lat_ns < g->lat_min_ns)
            g->lat_min_ns = t->model->links[k].lat_ns;
    }
    if (!isfinite(g->lat_min_ns)) g->lat_min_ns = 0;
    g->far_ns = g->max_hops * g->lat_min_ns;
    const double host_lat = t->model->host_link_lat_ns;
    if (via_host && t->model->host_link_gbps > 0) {
        if (2 * host_lat < g->far_ns) g->far_ns = 2 * host_lat;
        if (host_lat < g->lat_min_ns || t->nlinks == 0) g->lat_min_ns = host_lat;
    }
    /* each device's links, in one pass over the links (switches' entries unused) */
    double *bw = malloc(sizeof *bw * (size_t)t->nnodes);
    if (!bw) {
        g->max_hops = -1;
        return AR_ENOMEM;
    }
    for (int n = 0; n < t->nnodes; n++) bw[n] = host_gbps(t, via_host);
    for (int i = 0; i < t->nlinks; i++) {
        const ar_link_t *l = &t->links[i];
        bw[l->a] += ar_topo_link_gbps(t, i);
        if (l->b != l->a) bw[l->b] += ar_topo_link_gbps(t, i);
    }
    g->inject_gbps = INFINITY;
    g->inject_sum_gbps = 0;
    for (int d = 0; d < t->ndevices; d++) {
        if (bw[d] < g->inject_gbps) g->inject_gbps = bw[d];
        g->inject_sum_gbps += bw[d];
    }
    free(bw);
    if (!isfinite(g->inject_gbps)) g->inject_gbps = 0;
    const int rc = min_cut_gbps(t, via_host, &g->cut_gbps);
    if (rc != AR_OK) g->max_hops = -1;
    return rc;
}

int ar_bound(const ar_topo_t *t, uint64_t bytes_per_rank, ar_mem_t buffer, int via_host, ar_bound_t *b,
             ar_error_t *err) {
    return ar_bound_coll(t, AR_COLL_ALLREDUCE, bytes_per_rank, buffer, via_host, b, err);
}

int ar_bound_coll(const ar_topo_t *t, ar_coll_t coll, uint64_t bytes_per_rank, ar_mem_t buffer, int via_host,
                  ar_bound_t *b, ar_error_t *err) {
    memset(b, 0, sizeof *b);
    const ar_model_t *m = t->model;
    if (!m) return AR_ERR(err, AR_EINVAL, "bound: topology %s has no model", t->name);
    const ar_mem_level_t *lvl = &m->mem[buffer];
    if (!lvl->present)
        return AR_ERR(err, AR_EINVAL, "model %s has no %s level (--buffer)", m->name, ar_mem_name(buffer));
    const topo_figs_t *g;
    if (topo_figs(t, via_host, &g) != AR_OK) return AR_ERR(err, AR_ENOMEM, "bound: out of memory");
    const double S = (double)bytes_per_rank, D = t->ndevices;
    b->max_hops = g->max_hops;
    b->inject_gbps = g->inject_gbps;
    b->inject_sum_gbps = g->inject_sum_gbps;
    b->cut_gbps = g->cut_gbps;
    b->memory_gbps = ar_cost_mem_gbps(lvl);
    b->launch_s = m->launch_ns * 1e-9;
    b->latency_s = t->ndevices > 1 ? g->far_ns * 1e-9 : 0;
    if (D > 1 && g->inject_gbps > 0) {
        /* switches that add: partial sums meet in the network, no gossip among devices */
        const int adding = m->switch_reduce > 0 && t->nnodes > t->ndevices && coll != AR_COLL_ALLGATHER;
        const int half = coll != AR_COLL_ALLREDUCE; /* one of its two halves */
        const double one = (half ? (D - 1) / D : 1) * S / (g->inject_gbps * 1e9);
        const double all = adding ? 0 : (half ? 1 : 2) * (D - 1) * S / (g->inject_sum_gbps * 1e9);
        b->injection_s = g->lat_min_ns * 1e-9 + (one > all ? one : all);
    }
    if (D > 1 && g->cut_gbps > 0)
        b->cut_s = g->lat_min_ns * 1e-9 + (coll == AR_COLL_ALLREDUCE ? S : S / 2) / (g->cut_gbps * 1e9);
    /* the most ranks on one device: the placement, counted in one pass */
    int *on = malloc((size_t)t->ndevices * sizeof *on);
    if (!on) return AR_ERR(err, AR_ENOMEM, "bound: out of memory");
    const int most = ar_topo_ranks_per_device(t, on);
    free(on);
    /* per rank, it reads its vector and writes its result at least (a reduce-scatter's
     * result is its shard, an all-gather reads only its own) */
    const double rd = (coll == AR_COLL_ALLGATHER ? 1.0 / t->nranks : 1.0) * most * S;
    const double wr = (coll == AR_COLL_REDUCESCATTER ? 1.0 / t->nranks : 1.0) * most * S;
    /* each byte is touched first one execution after its last touch, at least these bytes
     * ago: the L2 may still hold a share of them */
    const double cold = ar_cost_l2_cold(m, buffer, rd + wr);
    b->memory_s = (rd * ar_cost_mem_weight(m, buffer, 0, cold) + wr * ar_cost_mem_weight(m, buffer, 1, cold)) /
                  (b->memory_gbps * 1e9);
    if (ar_cost_l2_fronts(m, buffer)) { /* every byte crosses the L2 in front of it too */
        const double l2_s = (rd * ar_cost_l2_weight(m, buffer, 0) + wr * ar_cost_l2_weight(m, buffer, 1)) /
                            (ar_cost_l2_gbps(m) * 1e9);
        if (l2_s > b->memory_s) b->memory_s = l2_s;
    }
    const struct { const char *name; double s; } terms[] = {
        {"latency", b->latency_s}, {"injection", b->injection_s}, {"cut", b->cut_s}, {"memory", b->memory_s},
    };
    double top = 0;
    b->binding = "latency";
    for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++)
        if (terms[i].s > top) top = terms[i].s, b->binding = terms[i].name;
    b->time_s = b->launch_s + top;
    return AR_OK;
}

int ar_bound_fused(const ar_topo_t *t, ar_coll_t coll, ar_gemm_t g, ar_dtype_t dtype, uint64_t bytes_per_rank,
                   ar_mem_t buffer, int via_host, ar_bound_t *b, ar_error_t *err) {
    /* the collective a fused op moves: its product's allreduce, or the all-gather of A (M x K) */
    const uint64_t moved = coll == AR_COLL_ALLGATHER_MATMUL ? g.m * g.k * ar_dtype_size(dtype) : bytes_per_rank;
    AR_TRY(ar_bound_coll(t, ar_coll_inner(coll), moved, buffer, via_host, b, err));
    const double rate = t->model ? ar_cost_gemm_flops(t->model, dtype) : 0;
    if (!ar_coll_fused(coll) || !(rate > 0)) return AR_OK;
    int *on = malloc((size_t)t->ndevices * sizeof *on);
    if (!on) return AR_ERR(err, AR_ENOMEM, "bound: out of memory");
    const int most = ar_topo_ranks_per_device(t, on);
    free(on);
    b->compute_s = most * 2.0 * (double)g.m * (double)g.n * (double)g.k / rate;
    if (b->launch_s + b->compute_s > b->time_s) {
        b->time_s = b->launch_s + b->compute_s;
        b->binding = "compute";
    }
    return AR_OK;
}

/* The links alone of ranks [lo, hi)'s ops: the time the most loaded link direction needs for
 * the bytes they put on it; *chain (where not NULL), the longest of rank lo's channels run
 * one op after another, each at its own cost (ar_bound_own_chain), found in the same pass:
 * an op's cost walks its route, 8192 hops halfway round ring_1d:16384. Past `limit` seconds
 * (0: none) either stops there, as a floor found so far: 2stage's rank 0 on that ring reaches
 * every peer, 98299 ops, 3 s to count all. */
static double links_alone(const ar_topo_t *t, const ar_plan_t *p, ar_mem_t buffer, int lo, int hi, double *chain,
                          double limit) {
    const int max_traffic = ar_cost_max_traffic(t);
    ar_op_traffic_t *traffic = malloc((size_t)max_traffic * sizeof *traffic);
    double *bytes = calloc((size_t)2 * t->nlinks + 1, sizeof *bytes);
    double most = traffic && bytes ? 0 : INFINITY, longest = 0;
    const double past = limit > 0 ? limit : INFINITY;
    for (int r = lo; r < hi && isfinite(most) && !(most > past) && !(longest > past); r++)
        for (int c = 0; c < p->nchannels && !(most > past) && !(longest > past); c++) {
            const ar_chan_t *ch = ar_plan_chan(p, r, c);
            double sum = 0;
            for (uint32_t i = 0; i < ch->nops && !(most > past) && !(sum > past); i++) {
                const ar_op_t *op = &p->ops[ch->first + i];
                const int timed = chain && r == lo && op->code != AR_OP_WAIT && op->code != AR_OP_SIGNAL;
                if (!ar_op_moves_data(op) && !timed) continue;
                ar_op_cost_t cost;
                int n = 0;
                if (ar_cost_op(t, p, op, r, buffer, &cost, traffic, max_traffic, &n, NULL) != AR_OK) continue;
                if (timed) sum += cost.lat_s + cost.move_s;
                for (int k = 0; k < n; k++) {
                    if (traffic[k].res != AR_RES_LINK) continue;
                    const int l = 2 * traffic[k].link + (traffic[k].dir < 0);
                    const double gbps = ar_topo_link_gbps(t, traffic[k].link);
                    bytes[l] += traffic[k].bytes;
                    if (gbps > 0 && bytes[l] / (gbps * 1e9) > most) most = bytes[l] / (gbps * 1e9);
                }
            }
            if (sum > longest) longest = sum;
        }
    if (chain) *chain = traffic && bytes ? longest : INFINITY;
    free(traffic);
    free(bytes);
    return most;
}

double ar_bound_plan_links(const ar_topo_t *t, const ar_plan_t *p, ar_mem_t buffer) {
    return p->only_rank >= 0 ? 0 : links_alone(t, p, buffer, 0, p->nranks, NULL, 0);
}

double ar_bound_own_links(const ar_topo_t *t, const ar_plan_t *p, ar_mem_t buffer) {
    const int lo = ar_plan_first_kept(p);
    return links_alone(t, p, buffer, lo, lo + ar_plan_kept_ranks(p), NULL, 0);
}

double ar_bound_own_chain(const ar_topo_t *t, const ar_plan_t *p, ar_mem_t buffer) {
    const int lo = ar_plan_first_kept(p);
    double chain;
    links_alone(t, p, buffer, lo, lo + 1, &chain, 0);
    return chain;
}

double ar_bound_own_floor(const ar_topo_t *t, const ar_plan_t *p, ar_mem_t buffer, double limit) {
    const int lo = ar_plan_first_kept(p);
    double chain;
    const double links = links_alone(t, p, buffer, lo, lo + ar_plan_kept_ranks(p), &chain, limit);
    return links > chain ? links : chain;
}
