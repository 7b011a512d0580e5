/* The algorithm registry (arsim/algo.h). */
#include <stdlib.h>
#include <string.h>
#include "algorithms/internal.h"
#include "arsim/cost.h"
#include "arsim/util.h"

/* name, alias, builder, one line for `arsim list algos` */
#define ALGO(n, a, fn, lanes, what) {.name = n, .alias = a, .build = fn, .max_channels = lanes, .summary = what}
/* an algorithm whose lanes take its peers in turn (ar__peer) */
#define ALGO_PEERS(n, a, fn, lanes, what)                                                              \
    {.name = n, .alias = a, .build = fn, .max_channels = lanes, .summary = what, .lane_period = ar__peer_period, \
     .one_rank = 1}
#define RS_AG ((1u << AR_COLL_REDUCESCATTER) | (1u << AR_COLL_ALLGATHER))
static const ar_algo_t table[] = {
    {.name = "ring", .build = ar__build_ring, .max_channels = AR__MAX_LANES_RING, .colls = RS_AG, .one_rank = 1,
     .cycle_only = 1,
     .summary = "reduce-scatter + all-gather around a ring of neighbours, pipelined, both directions"},
    {.name = "torus2d", .build = ar__build_torus2d, .max_channels = AR__MAX_LANES_TORUS2D, .one_rank = 1,
     .summary = "2D torus: reduce-scatter along X, allreduce along Y, all-gather along X, and Y first too"},
    ALGO("mesh2d", NULL, ar__build_mesh2d, AR__MAX_LANES_MESH2D,
         "2D mesh, neighbour links only: each block reduced up a tree to its owner, X or Y first, broadcast back"),
    ALGO_PEERS("1stage", "oneshot", ar__build_oneshot, AR__MAX_LANES_ONESHOT,
         "every rank pushes its input to every peer and reduces locally"),
    ALGO_PEERS("2stage", "twoshot", ar__build_twoshot, AR__MAX_LANES_TWOSHOT,
         "reduce-scatter (rank r reduces slice r from all peers) then all-gather"),
    {.name = "center_root", .build = ar__build_center_root, .max_channels = AR__MAX_LANES_CENTER_ROOT,
     .takes_root = 1, .summary = "reduce up a shortest-path tree rooted at the centre, broadcast down, pipelined"},
    {.name = "naive", .build = ar__build_naive, .max_channels = AR__MAX_LANES_NAIVE, .via_host = 1, .one_rank = 1,
     .summary = "no P2P: stage through host memory"},
    {.name = "innet", .build = ar__build_innet, .max_channels = AR__MAX_LANES_INNET, .one_rank = 1,
     .summary = "in-network reduction: each rank's block summed inside the switch, the sum sent to every rank "
                "(a model whose switches reduce; simulators only)"},
    {.name = "direct", .build = ar__build_direct, .max_channels = AR__MAX_LANES_DIRECT,
     .colls = RS_AG | AR_ALGO_NO_ALLREDUCE, .lane_period = ar__peer_period, .one_rank = 1,
     .summary = "reduce-scatter or all-gather only: every rank sends each peer its shard at once"},
};
#undef ALGO
#undef ALGO_PEERS
#undef RS_AG

static const ar_algo_t *const algos[] = {&table[0], &table[1], &table[2], &table[3], &table[4],
                                         &table[5], &table[6], &table[7], &table[8], NULL};

int ar_algo_computes(const ar_algo_t *a, ar_coll_t coll) {
    if (a->chooser) return 1;
    /* a fused collective: the algorithm's allreduce or all-gather, laid out with the products (fused.c) */
    coll = ar_coll_inner(coll);
    if (coll == AR_COLL_ALLREDUCE) return !(a->colls & AR_ALGO_NO_ALLREDUCE);
    return (unsigned)coll < AR_NCOLL && ((a->colls >> coll) & 1u);
}

const ar_algo_t *const *ar_algo_all(void) { return algos; }

void ar_algo_names(const ar_coll_t *computing, char *buf, size_t len) {
    buf[0] = 0;
    for (int i = 0; algos[i]; i++)
        if (!computing || ar_algo_computes(algos[i], *computing)) {
            strncat(buf, buf[0] ? ", " : "", len - strlen(buf) - 1);
            strncat(buf, algos[i]->name, len - strlen(buf) - 1);
        }
}

/* --algo auto: chosen per case by the runner, never built itself */
static int build_auto(const ar_topo_t *t, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o, ar_plan_t **out,
                      ar_error_t *err) {
    (void)t, (void)count, (void)dt, (void)o;
    *out = NULL;
    return AR_ERR(err, AR_EINVAL, "auto: chosen per case by the runner (ar_case_plan), not built itself");
}
static const ar_algo_t auto_algo = {.name = "auto", .build = build_auto, .chooser = 1, .max_channels = 128,
                                    .summary = "the algorithm and channels of least predicted time, per case"};

const ar_algo_t *ar_algo_auto_entry(void) { return &auto_algo; }

const ar_algo_t *ar_algo_find(const char *name) {
    if (!name) return NULL;
    if (!strcmp(name, "auto")) return &auto_algo;
    for (int i = 0; algos[i]; i++)
        if (!strcmp(algos[i]->name, name) || (algos[i]->alias && !strcmp(algos[i]->alias, name)))
            return algos[i];
    return ar__probe_find(name);
}

/* a's plan, counted first, then written where it lies: no per-channel arrays grown by
 * doubling and copied, which held about two and a half times the plan at once */
static int build_in_place(const ar_algo_t *a, const ar_topo_t *topo, uint64_t count, ar_dtype_t dtype,
                          const ar_algo_opts_t *opts, ar_plan_t **out, ar_error_t *err) {
    *out = NULL;
    if (opts->sizing) return a->build(topo, count, dtype, opts, out, err);
    ar_plan_size_t size;
    memset(&size, 0, sizeof size);
    size.keep_layout = 1;
    size.max_ops = opts->max_ops;
    ar_algo_opts_t k = *opts;
    k.sizing = &size;
    int rc = a->build(topo, count, dtype, &k, out, err);
    ar_plan_free(*out);
    *out = NULL;
    if (size.over)
        rc = AR_ERR(err, AR_ELIMIT, "%s: more than %llu ops", a->name, (unsigned long long)opts->max_ops);
    if (rc == AR_OK && !size.chan_ops) rc = AR_ERR(err, AR_ENOMEM, "%s: out of memory", a->name);
    if (rc == AR_OK) {
        k.sizing = NULL;
        k.layout = &size;
        rc = a->build(topo, count, dtype, &k, out, err);
    }
    ar_plan_size_free(&size);
    return rc;
}

/* Routes as translates: a route from device 0 (or the device standing for k's orbit) and a
 * route from device k that the translation taking k there should map onto each other. A
 * built ring's or torus's routes do (topologies/topo.c); full's and switch's are one or two
 * hops; but a plan of one rank stands for the others only where every route it takes does,
 * so it is checked. Each offset (where the far end sits seen from
 * the near one) is compared once per orbit. */
typedef struct route_check_s {
    const ar_topo_t *t;
    int w;                  /* the translations (ar_plan_shifts) */
    int *fold;              /* ar_topo_fold_links */
    int *h0, *d0, *h1, *d1; /* two routes, ar_topo_diameter hops at most */
    unsigned char *seen;    /* per orbit's device and offset: 1 checked alike, 2 differs */
    int alike;              /* every route is its translate's (ar_topo_routes_translate) */
} route_check_t;

static void route_check_free(route_check_t *c) {
    AR_FREE_EACH(c->fold, c->h0, c->d0, c->h1, c->d1, c->seen);
    memset(c, 0, sizeof *c);
}

/* Orbits under the translations w names, times devices: route_check_t.seen's size. */
static size_t route_seen_size(const ar_topo_t *t, int w) { return (size_t)(w < 0 ? -w : 1) * t->ndevices; }

static int route_check_init(route_check_t *c, const ar_topo_t *t, int w) {
    memset(c, 0, sizeof *c);
    c->t = t;
    c->w = w;
    c->alike = ar_topo_routes_translate(t);
    const size_t hops = (size_t)ar_topo_diameter(t) + 1;
    c->fold = malloc((size_t)2 * t->nlinks * sizeof *c->fold + 1);
    c->h0 = malloc(hops * sizeof(int)), c->d0 = malloc(hops * sizeof(int));
    c->h1 = malloc(hops * sizeof(int)), c->d1 = malloc(hops * sizeof(int));
    c->seen = calloc(route_seen_size(t, w), 1);
    if (!c->fold || !c->h0 || !c->d0 || !c->h1 || !c->d1 || !c->seen || ar_topo_fold_links(t, w, c->fold) != AR_OK) {
        route_check_free(c);
        return 0;
    }
    return 1;
}

/* Whether the route from device k to device to is the translate of the one from the device
 * standing for k's orbit to the same offset, hop for hop (each link direction of the same
 * orbit). */
static int route_alike(route_check_t *c, int k, int to) {
    if (c->alike) return 1; /* by construction, and tests/check_topo.c walks them */
    const ar_topo_t *t = c->t;
    const int k0 = ar_topo_orbit_device(t, c->w, k), off = ar_topo_translate(t, c->w, k, to);
    unsigned char *seen = &c->seen[(size_t)k0 * t->ndevices + off];
    if (!*seen) {
        const int max = ar_topo_diameter(t) + 1;
        const int n0 = ar_topo_route(t, k0, off, c->h0, c->d0, max), n1 = ar_topo_route(t, k, to, c->h1, c->d1, max);
        int alike = n0 == n1 && n0 >= 0;
        for (int h = 0; h < n0 && alike; h++)
            alike = c->fold[2 * c->h0[h] + (c->d0[h] < 0)] == c->fold[2 * c->h1[h] + (c->d1[h] < 0)];
        *seen = alike ? 1 : 2;
    }
    return *seen == 1;
}

/* Whether rank k's plan (b, of rank k alone) is the ops in a of the rank standing for k's
 * orbit (rank 0, or k % S in a plan of a row) moved by the translation that takes that rank to
 * k, op for op, and its routes that rank's moved alike: what a plan of one rank or a row
 * stands for (arsim/plan.h). Offsets may differ (each rank has its own part of the vector),
 * not whether an op starts or ends off a vector (ar_op_misaligned), which the model charges:
 * parts of 2 bytes each (torus2d on ring_1d:16384 at 32 KB) are misaligned wherever they
 * lie. The routes too where with_routes: the probes' check, which says whether the plan
 * stands; the mirror plans' compares ops alone. */
static int translates(route_check_t *rc, const ar_plan_t *a, const ar_plan_t *b, int k, int with_routes) {
    const ar_topo_t *t = rc->t;
    const int routes = with_routes && !rc->alike;
    if (a->nchannels != b->nchannels || a->nflags != b->nflags || a->scratch_elems != b->scratch_elems ||
        a->host_elems != b->host_elems || (a->only_span == 1 && a->nops != b->nops) || a->shift_w != b->shift_w)
        return 0;
    if (routes) memset(rc->seen, 0, route_seen_size(t, rc->w));
    const int k0 = ar_topo_orbit_device(t, rc->w, k);
    /* shortest paths tie, where they do, between the farthest devices (halfway round a ring):
     * the farthest rank b reaches is checked first, before a walk of every op up to it */
    int far = -1, far_hops = 0;
    for (uint32_t i = 0; i < b->nops && routes; i++) {
        const ar_op_t *y = &b->ops[i];
        const int signal = y->code == AR_OP_SIGNAL || y->code == AR_OP_WAIT;
        for (uint32_t s = 0; s <= (signal ? 0 : y->nsrc); s++) {
            const int r = signal ? y->dst.rank : ar_op_operand(b, y, s)->rank;
            const int h = r >= 0 && r < t->ndevices ? ar_topo_hops(t, k, r) : 0;
            if (h > far_hops) far = r, far_hops = h;
        }
    }
    if (far >= 0 && !route_alike(rc, k, far)) return 0;
    for (int c = 0; c < a->nchannels; c++) {
        const ar_chan_t *ca = ar_plan_chan(a, k0, c), *cb = ar_plan_chan(b, k, c);
        if (ca->nops != cb->nops) return 0;
        for (uint32_t i = 0; i < ca->nops; i++) {
            const ar_op_t *x = &a->ops[ca->first + i], *y = &b->ops[cb->first + i];
            if (x->code != y->code || x->back != y->back || x->nsrc != y->nsrc || x->n != y->n ||
                x->flag != y->flag || x->count != y->count)
                return 0;
            if (ar_op_misaligned(a, x) != ar_op_misaligned(b, y)) return 0;
            if (x->code == AR_OP_SIGNAL || x->code == AR_OP_WAIT) {
                if (ar_topo_translate(t, rc->w, k, y->dst.rank) != x->dst.rank ||
                    (routes && !route_alike(rc, k, y->dst.rank)))
                    return 0;
                continue;
            }
            for (uint32_t s = 0; s <= x->nsrc; s++) {
                const ar_addr_t *u = ar_op_operand(a, x, s), *v = ar_op_operand(b, y, s);
                if (u->buf != v->buf) return 0;
                const int host = u->rank == AR_RANK_HOST;
                if (host != (v->rank == AR_RANK_HOST)) return 0;
                if (!host && (ar_topo_translate(t, rc->w, k, v->rank) != u->rank || (routes && !route_alike(rc, k, v->rank))))
                    return 0;
            }
        }
    }
    return 1;
}

/* The ranks rank 0's plan is compared with: neighbours both ways, and ranks across the
 * grid whose shifts are the translations (a torus's next row, its far side); for a plan of a
 * row of S ranks (shifts -S), ranks of other rows: the next row's first, the last row's last,
 * one halfway, the next row's last. */
static int symmetry_probes(const ar_topo_t *t, int shifts, int *k) {
    const int P = t->nranks, sw = ar_topo_shift_width(t, shifts), w = sw < P ? sw : 1;
    const int S = shifts < 0 ? -shifts : 1; /* the plan's own ranks, [0, S), are no probes */
    const int want[AR_ALGO_SYMMETRY_PROBES] = {shifts < 0 ? S : 1, P - 1, (P / 2 + (shifts < 0 ? S : w) / 2) % P,
                                               shifts < 0 ? (2 * S - 1) % P : (w > 1 ? w : P / 3) % P};
    int n = 0;
    for (int i = 0; i < AR_ALGO_SYMMETRY_PROBES; i++) {
        int seen = want[i] < S;
        for (int j = 0; j < n && !seen; j++) seen = k[j] == want[i];
        if (!seen) k[n++] = want[i];
    }
    return n;
}

/* Each operand of kept rank r's data ops in p on a rank q that p does not keep, handed to f
 * with its channel c, op index i in the channel and operand s, and m, the rank the translation
 * taking q to the rank standing for its orbit takes r to (rank -q where p is rank 0's alone; in
 * a plan of a row, r's rank in the row as far before r as q's row is after p's): m's op i
 * touches that rank where r's touches q, at its own offset. Stops where f returns 0; whether
 * it never did. */
typedef int (*foreign_fn)(void *ctx, int c, uint32_t i, uint32_t s, const ar_addr_t *u, int m);
static int each_foreign_operand(const ar_topo_t *t, int w, const ar_plan_t *p, int r, foreign_fn f, void *ctx) {
    for (int c = 0; c < p->nchannels; c++) {
        const ar_chan_t *ch = ar_plan_chan(p, r, c);
        for (uint32_t i = 0; i < ch->nops; i++) {
            const ar_op_t *op = &p->ops[ch->first + i];
            if (op->code == AR_OP_SIGNAL || op->code == AR_OP_WAIT) continue;
            for (uint32_t s = 0; s <= op->nsrc; s++) {
                const ar_addr_t *u = ar_op_operand(p, op, s);
                if (u->rank < 0 || ar_plan_keeps_rank(p, u->rank)) continue;
                if (!f(ctx, c, i, s, u, ar_topo_translate(t, w, u->rank, r))) return 0;
            }
        }
    }
    return 1;
}

typedef struct need_s {
    unsigned char *need;
    uint64_t n;
} need_t;

static int mark_need(void *ctx, int c, uint32_t i, uint32_t s, const ar_addr_t *u, int m) {
    (void)c, (void)i, (void)s, (void)u;
    need_t *x = ctx;
    if (!x->need[m]) x->need[m] = 1, x->n++;
    return 1;
}

/* The ranks whose own plans say where the translates of p's ops touch p's ranks
 * (each_foreign_operand's m), marked in need (one per device); how many. */
static uint64_t mirror_ranks(const ar_topo_t *t, int w, const ar_plan_t *p, unsigned char *need) {
    need_t x = {need, 0};
    for (int r = p->only_rank; r < p->only_rank + p->only_span; r++) each_foreign_operand(t, w, p, r, mark_need, &x);
    return x.n;
}

typedef struct mirror_walk_s {
    const ar_plan_t *p, *pm; /* the plan and rank m's own */
    int m, check;
    uint64_t *mirror;
} mirror_walk_t;

static int mirror_take(void *ctx, int c, uint32_t i, uint32_t s, const ar_addr_t *u, int m) {
    const mirror_walk_t *x = ctx;
    if (m != x->m) return 1;
    uint64_t *at = &x->mirror[ar_plan_operand_index(x->p, u)];
    const uint64_t off = ar_op_operand(x->pm, &x->pm->ops[ar_plan_chan(x->pm, m, c)->first + i], s)->off;
    if (!x->check) *at = off;
    return *at == off;
}

/* Walks rank m's own plan pm beside p's rank r standing for m's orbit: where r's operand is on
 * the rank q whose translate takes r to m, m's is on q's orbit's rank, at the offset it holds
 * in pm. Writes that offset into mirror (check 0), or says whether mirror already holds it. */
static int mirror_walk(const route_check_t *rc, const ar_plan_t *p, const ar_plan_t *pm, int m, uint64_t *mirror,
                       int check) {
    mirror_walk_t x = {p, pm, m, check, mirror};
    return each_foreign_operand(rc->t, rc->w, p, ar_topo_orbit_device(rc->t, rc->w, m), mirror_take, &x);
}

/* Rank m's own plan, checked op for op as the probes are (translates; its routes left to the
 * probes), walked beside p's (mirror_walk). */
static int mirror_of_rank(const ar_algo_t *a, const ar_topo_t *t, uint64_t count, ar_dtype_t dtype,
                          const ar_algo_opts_t *o, route_check_t *rc, int m, ar_plan_t *p, uint64_t *mirror, int check) {
    ar_algo_opts_t k = *o;
    k.one_span = 0;
    k.one_rank = m + 1;
    ar_error_t e;
    ar_error_clear(&e);
    ar_plan_t *pm = NULL;
    const int ok = build_in_place(a, t, count, dtype, &k, &pm, &e) == AR_OK && translates(rc, p, pm, m, 0) &&
                   mirror_walk(rc, p, pm, m, mirror, check);
    ar_plan_free(pm);
    return ok;
}

typedef struct lattice_s {
    const ar_plan_t *p, *step[2]; /* rank 0's plan and those one step along x and y, or NULL */
    int at[2];                    /* those steps' ranks */
    const unsigned char *need;
    int w; /* the grid's width */
    uint64_t *mirror;
} lattice_t;

static int lattice_guess(void *ctx, int c, uint32_t i, uint32_t s, const ar_addr_t *u, int m) {
    const lattice_t *x = ctx;
    if (!x->need[m]) return 1;
    const int64_t len = (int64_t)ar_plan_buf_elems(x->p, 0, ar_addr_buf(*u)), moves[2] = {m % x->w, m / x->w};
    int64_t off = (int64_t)u->off;
    for (int d = 0; d < 2; d++) {
        const ar_plan_t *q = x->step[d];
        if (!q) continue;
        const ar_op_t *y = &q->ops[ar_plan_chan(q, x->at[d], c)->first + i];
        off += moves[d] * ((int64_t)ar_op_operand(q, y, s)->off - (int64_t)u->off);
    }
    off = len > 0 ? off % len : off;
    x->mirror[ar_plan_operand_index(x->p, u)] = (uint64_t)(off < 0 ? off + len : off);
    return 1;
}

/* Where each rank's offsets are its place on the grid of translations times a stride, modulo
 * the buffer (a slice or a slot per rank, rotated): the mirror offsets guessed from rank 0's
 * plan and those of its neighbours along the grid (ranks 1 and w, w its width), and the
 * guess checked on the plans of MIRROR_SAMPLE ranks of need spread over it. The plans of a
 * row (only_span > 1) are not guessed. Whether the guess held: the mirror offsets at the
 * cost of a dozen plans of one rank where there are thousands. */
#define MIRROR_SAMPLE 8
static int mirror_lattice(const ar_algo_t *a, const ar_topo_t *t, uint64_t count, ar_dtype_t dtype,
                          const ar_algo_opts_t *o, route_check_t *rc, const unsigned char *need, uint64_t nneed,
                          ar_plan_t *p, uint64_t *mirror) {
    const int nd = t->ndevices, w = ar_topo_shift_width(t, rc->w), h = nd / w;
    if (p->only_span != 1 || rc->w < 0 || nneed <= MIRROR_SAMPLE + 2) return 0;
    ar_algo_opts_t k = *o;
    k.one_span = 0;
    ar_error_t e;
    ar_error_clear(&e);
    ar_plan_t *step[2] = {NULL, NULL}; /* the plans of ranks one step along x (1) and y (w) */
    const int at[2] = {w > 1 ? 1 : -1, h > 1 ? w : -1};
    int ok = 1;
    for (int d = 0; d < 2 && ok; d++) {
        if (at[d] < 0) continue;
        k.one_rank = at[d] + 1;
        ok = build_in_place(a, t, count, dtype, &k, &step[d], &e) == AR_OK && translates(rc, p, step[d], at[d], 0);
    }
    lattice_t x = {p, {step[0], step[1]}, {at[0], at[1]}, need, w, mirror};
    if (ok) each_foreign_operand(t, rc->w, p, 0, lattice_guess, &x);
    ar_plan_free(step[0]);
    ar_plan_free(step[1]);
    /* the check: ranks of need at spread places, the last included */
    uint64_t j = 0, next = 0, taken = 0;
    for (int m = 0; m < nd && ok; m++) {
        if (!need[m]) continue;
        if (j++ != next) continue;
        ok = mirror_of_rank(a, t, count, dtype, o, rc, m, p, mirror, 1);
        taken++;
        next = taken * (nneed - 1) / (MIRROR_SAMPLE - 1);
    }
    return ok;
}

/* p->mirror_off (plan.h) for the ranks of need (mirror_ranks, nneed of them): guessed and
 * checked (mirror_lattice), else found from each one's plan where exact (their work within
 * AR_ALGO_MIRROR_MAX_WORK). */
static int mirror_offsets(const ar_algo_t *a, const ar_topo_t *t, uint64_t count, ar_dtype_t dtype,
                          const ar_algo_opts_t *o, route_check_t *rc, const unsigned char *need, uint64_t nneed,
                          int exact, ar_plan_t *p) {
    const size_t nopd = (size_t)p->nsrcs + p->nops;
    uint64_t *mirror = malloc(nopd * sizeof *mirror + 1);
    int ok = mirror != NULL;
    if (ok && !mirror_lattice(a, t, count, dtype, o, rc, need, nneed, p, mirror)) {
        ok = exact;
        for (int m = 0; ok && m < t->ndevices; m++)
            if (need[m]) ok = mirror_of_rank(a, t, count, dtype, o, rc, m, p, mirror, 0);
    }
    if (ok) p->mirror_off = mirror;
    else free(mirror);
    return ok;
}

/* ---- verdicts: whether rank 0's plan stood for every rank's, kept with the topology ---- */

/* What a verdict depends on besides the topology: the algorithm, its model (what the builders
 * read off it, and whether it tracks warmth) and the options a plan is built at. Not the
 * sizing, the layout or max_ops, which change how a plan is counted, not which plan it is. */
typedef struct verdict_key_s {
    const ar_algo_t *algo;
    const ar_model_t *model;
    uint64_t count, chunk_bytes;
    ar_gemm_t gemm;
    int dtype, channels, root, grid_w, grid_h, slots, buffer, coll, partitions;
} verdict_key_t;

/* Whether rank 0's plan stood for every rank's, and on which translations (ar_plan_shifts);
 * mirrors: where it was not tried for the warmth's mirror offsets, the ops they would walk
 * (over AR_ALGO_MIRROR_MAX_WORK), else 0. */
typedef struct verdict_s {
    verdict_key_t key;
    int stands, shifts;
    uint64_t mirrors;
} verdict_t;

typedef struct verdict_cache_s { /* one allocation, grown by realloc */
    int n, cap;
    verdict_t e[];
} verdict_cache_t;

static verdict_key_t verdict_key(const ar_algo_t *a, const ar_topo_t *t, uint64_t count, ar_dtype_t dtype,
                                 const ar_algo_opts_t *o) {
    verdict_key_t k;
    memset(&k, 0, sizeof k); /* compared whole, padding included */
    k.algo = a, k.model = t->model, k.count = count, k.chunk_bytes = o->chunk_bytes, k.gemm = o->gemm;
    k.dtype = dtype, k.channels = o->channels, k.root = o->root, k.grid_w = o->grid_w, k.grid_h = o->grid_h;
    k.slots = o->slots, k.buffer = o->buffer, k.coll = o->coll, k.partitions = o->partitions;
    return k;
}

/* The verdict kept for k, or NULL */
static const verdict_t *verdict_find(const ar_topo_t *t, const verdict_key_t *k) {
    const verdict_cache_t *vc = t->symmetry_cache;
    for (int i = 0; vc && i < vc->n; i++)
        if (!memcmp(&vc->e[i].key, k, sizeof *k)) return &vc->e[i];
    return NULL;
}

static void verdict_keep(const ar_topo_t *t, const verdict_t *v) {
    verdict_cache_t *vc = t->symmetry_cache;
    if (!vc || vc->n == vc->cap) {
        const int cap = vc ? 2 * vc->cap : 16;
        verdict_cache_t *g = realloc(vc, sizeof *g + (size_t)cap * sizeof g->e[0]);
        if (!g) return; /* not kept: checked again next time */
        if (!vc) g->n = 0;
        g->cap = cap;
        ((ar_topo_t *)t)->symmetry_cache = vc = g; /* a cache of what t already determines */
    }
    vc->e[vc->n++] = *v;
}

/* How rank0_plan finds the translations: from the plan (RANK0_PROBED: its grid's, or its rows'
 * where the topology has only those), as *shifts says without probes (RANK0_KEPT: a verdict
 * kept), or as *shifts says, a row whose probes are compared rank by rank before it is built
 * (RANK0_ROW: where rank 0 alone did not stand; row_probes_hold). */
enum { RANK0_KEPT, RANK0_PROBED, RANK0_ROW };

/* Whether probe rank q's plan, built alone at k's options, is the translate of the ops in ref
 * of the rank standing for q (translates, routes too); *built, whether its build succeeded. */
static int probe_holds(const ar_algo_t *a, const ar_topo_t *topo, uint64_t count, ar_dtype_t dtype, ar_algo_opts_t *k,
                       route_check_t *rc, const ar_plan_t *ref, int q, int *built) {
    ar_plan_t *plan = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    k->one_rank = q + 1;
    *built = build_in_place(a, topo, count, dtype, k, &plan, &e) == AR_OK;
    const int ok = *built && translates(rc, ref, plan, q, 1);
    ar_plan_free(plan);
    return ok;
}

/* Whether the probes of a plan of a row (shifts -S) hold, each compared with the rank of the
 * first row in its column, that rank built alone: a row that does not stand is found at a few
 * ranks' cost, before the row's ops are built (S ranks' worth: 6 M ops for torus2d on 128 x 128
 * at 10^9 bytes in 4 lanes, whose lanes' orders differ and no row stands). *built, whether
 * every build succeeded. */
static int row_probes_hold(const ar_algo_t *a, const ar_topo_t *topo, uint64_t count, ar_dtype_t dtype,
                           const ar_algo_opts_t *opts, int shifts, int *built) {
    route_check_t rc;
    *built = 1;
    if (!route_check_init(&rc, topo, shifts)) return 0;
    int probe[AR_ALGO_SYMMETRY_PROBES];
    const int n = symmetry_probes(topo, shifts, probe);
    ar_algo_opts_t k = *opts;
    k.sizing = NULL;
    k.one_span = 0;
    ar_error_t e;
    ar_error_clear(&e);
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        ar_plan_t *first = NULL;
        k.one_rank = ar_topo_orbit_device(topo, shifts, probe[i]) + 1;
        *built = build_in_place(a, topo, count, dtype, &k, &first, &e) == AR_OK;
        ok = *built && probe_holds(a, topo, count, dtype, &k, &rc, first, probe[i], built);
        ar_plan_free(first);
    }
    route_check_free(&rc);
    return ok;
}

/* Rank 0's plan (or its row's, shifts < 0) built, and under a model that tracks warmth its
 * mirror offsets found; probed (above): the probes built and compared first. NULL where it
 * does not stand for every rank's; *decided then says whether that is a verdict (a plan not a
 * translate, mirrors past their budget: *mirrors, their work) or a build that failed (out of
 * memory, max_ops). */
static ar_plan_t *rank0_plan(const ar_algo_t *a, const ar_topo_t *topo, uint64_t count, ar_dtype_t dtype,
                             const ar_algo_opts_t *opts, int probed, int *shifts, int *decided, uint64_t *mirrors) {
    ar_algo_opts_t k = *opts;
    ar_error_t e;
    ar_error_clear(&e);
    ar_plan_t *p = NULL;
    k.sizing = NULL;
    k.one_rank = 1;
    k.one_span = *shifts < 0 ? -*shifts : 0;
    *decided = 0;
    *mirrors = 0;
    if (probed == RANK0_ROW && !row_probes_hold(a, topo, count, dtype, opts, *shifts, decided)) return NULL;
    /* a build that fails (past max_ops, out of memory) is no verdict, though the probes held */
    if (build_in_place(a, topo, count, dtype, &k, &p, &e) != AR_OK) return *decided = 0, NULL;
    if (probed == RANK0_PROBED) {
        *shifts = p->shift_w;
        if (!ar_topo_translatable(topo, *shifts) && *shifts > 0 && ar_topo_translatable(topo, -*shifts)) {
            /* its grid's rows shift onto themselves, its columns do not: rank 0's row for all */
            ar_plan_free(p);
            p = NULL;
            k.one_span = *shifts;
            *shifts = -*shifts;
            if (build_in_place(a, topo, count, dtype, &k, &p, &e) != AR_OK) return *decided = 0, NULL;
        }
    }
    k.one_span = 0;
    /* a model that tracks warmth needs where the other ranks' ops touch the plan's (mirror_offsets):
     * a plan of each rank rank 0's reach, walked beside rank 0's, whose cost is known here,
     * before the probes are built, which cost as much again */
    const int warmth = ar_cost_tracks_warmth(topo->model);
    unsigned char *peer = warmth ? calloc((size_t)topo->ndevices, 1) : NULL;
    route_check_t rc;
    if (warmth && !peer) {
        ar_plan_free(p);
        return NULL;
    }
    const uint64_t nneed = warmth && ar_topo_translatable(topo, *shifts) ? mirror_ranks(topo, *shifts, p, peer) : 0;
    const uint64_t work = nneed * (uint64_t)p->nops / (uint64_t)ar_plan_kept_ranks(p);
    if (!ar_topo_translatable(topo, *shifts) || !route_check_init(&rc, topo, *shifts)) {
        *decided = 1;
        free(peer);
        ar_plan_free(p);
        return NULL;
    }
    int probe[AR_ALGO_SYMMETRY_PROBES];
    /* (a row's probes were compared before it was built) */
    const int n = probed == RANK0_PROBED ? symmetry_probes(topo, *shifts, probe) : 0;
    int built = 1;
    for (int i = 0; i < n && p; i++)
        if (!probe_holds(a, topo, count, dtype, &k, &rc, p, probe[i], &built)) {
            ar_plan_free(p);
            p = NULL;
        }
    const int exact = work <= AR_ALGO_MIRROR_MAX_WORK;
    if (p && warmth && !mirror_offsets(a, topo, count, dtype, &k, &rc, peer, nneed, exact, p)) {
        ar_plan_free(p);
        p = NULL;
        if (!exact) *mirrors = work;
    }
    *decided = built;
    free(peer);
    route_check_free(&rc);
    return p;
}

/* Under AR_SYMMETRY_AUTO, whether every rank's plan is small enough to run as it is. */
static int small_for_all(const ar_algo_t *a, const ar_topo_t *topo, uint64_t count, ar_dtype_t dtype,
                         const ar_algo_opts_t *opts) {
    if (opts->symmetry != AR_SYMMETRY_AUTO) return 0;
    ar_algo_opts_t k = *opts;
    ar_error_t e;
    ar_error_clear(&e);
    ar_plan_t *p = NULL;
    ar_plan_size_t size;
    memset(&size, 0, sizeof size);
    size.max_ops = AR_ALGO_ONE_RANK_MIN_OPS / (uint64_t)topo->nranks + 1;
    k.one_rank = 1;
    k.sizing = &size;
    const int rc = a->build(topo, count, dtype, &k, &p, &e);
    ar_plan_free(p);
    ar_plan_size_free(&size);
    return rc == AR_OK && !size.over && size.ops * (uint64_t)topo->nranks < AR_ALGO_ONE_RANK_MIN_OPS;
}

/* Rank 0's plan alone, where it stands for every rank's (opts->symmetry, algo.h), or the plan
 * of rank 0's row where its grid lies on a topology that has only its rows' shifts (a plan of a
 * row, arsim/plan.h), into *out (counted into opts->sizing where that is set); AR_EUNFIT where
 * every rank's is to be built. Whether it stands is kept with the topology: a case's defaults,
 * memory check and run build one plan several times, whose probes need building once. */
static int rank0_alone(const ar_algo_t *a, const ar_topo_t *topo, uint64_t count, ar_dtype_t dtype,
                       const ar_algo_opts_t *opts, ar_plan_t **out, ar_error_t *err) {
    if (!a->one_rank || !ar_topo_translatable(topo, 0) || small_for_all(a, topo, count, dtype, opts))
        return AR_EUNFIT;
    const verdict_key_t key = verdict_key(a, topo, count, dtype, opts);
    const verdict_t *kept = verdict_find(topo, &key);
    int decided;
    ar_plan_t *p = NULL;
    if (opts->sizing && opts->sizing->max_ops && !kept) {
        /* a count that stops at max_ops: where rank 0's own ops pass it, so does any plan that
         * holds them, and whether rank 0's stand for all (its plan and the probes' built in
         * full) is not asked */
        const ar_plan_size_t asked = *opts->sizing;
        ar_algo_opts_t k = *opts;
        k.one_rank = 1;
        const int rc = a->build(topo, count, dtype, &k, out, err);
        if (opts->sizing->over) return rc;
        ar_plan_free(*out);
        *out = NULL;
        ar_plan_size_free(opts->sizing);
        *opts->sizing = asked;
    }
    verdict_t v = {.key = key};
    if (kept) {
        v = *kept;
        if (v.stands && !opts->sizing) p = rank0_plan(a, topo, count, dtype, opts, RANK0_KEPT, &v.shifts, &decided, &v.mirrors);
    } else {
        p = rank0_plan(a, topo, count, dtype, opts, RANK0_PROBED, &v.shifts, &decided, &v.mirrors);
        /* Rank 0 alone does not stand, its grid's rows may: a torus2d whose rows' allreduce
         * splits each row's block over more ranks than it has elements, or on cuts of other
         * alignments, gives each rank of a row its own ops, but every row the same */
        const int w = v.shifts;
        if (!p && decided && w > 0 && w < topo->nranks && ar_topo_translatable(topo, w) &&
            ar_topo_translatable(topo, -w)) {
            v.shifts = -w;
            p = rank0_plan(a, topo, count, dtype, opts, RANK0_ROW, &v.shifts, &decided, &v.mirrors);
            if (!p) v.shifts = w;
        }
        v.stands = p != NULL;
        if (p || decided) verdict_keep(topo, &v);
    }
    const int stands = v.stands, shifts = v.shifts;
    if (stands && opts->sizing) { /* counted as rank 0's alone, or its row's */
        ar_plan_free(p);
        ar_algo_opts_t k = *opts;
        k.one_rank = 1;
        k.one_span = shifts < 0 ? -shifts : 0;
        return a->build(topo, count, dtype, &k, out, err);
    }
    *out = p;
    return p ? AR_OK : AR_EUNFIT;
}

int ar_algo_rank0_stands(const char *name, const ar_topo_t *topo, uint64_t count, ar_dtype_t dtype,
                         const ar_algo_opts_t *opts) {
    const ar_algo_t *a = ar_algo_find(name);
    if (!a || a->probe || a->chooser || !opts || opts->symmetry == AR_SYMMETRY_OFF || ar_coll_fused(opts->coll) ||
        !a->one_rank || !ar_topo_translatable(topo, 0) || count == 0)
        return 0;
    ar_algo_opts_t k = *opts;
    k.sizing = NULL;
    k.symmetry = AR_SYMMETRY_ON; /* the verdict, whatever every rank's plan would hold */
    /* a verdict kept is the answer, no plan built for it (rank 0's, with its mirror offsets
     * under a model that tracks warmth: 1stage on switch:16384, a second each), but where
     * the plan may pass max_ops, whose build then says it does not stand */
    const verdict_key_t key = verdict_key(a, topo, count, dtype, &k);
    const verdict_t *kept = verdict_find(topo, &key);
    if (kept && (!kept->stands || !k.max_ops)) return kept->stands;
    ar_plan_t *p = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    const int rc = rank0_alone(a, topo, count, dtype, &k, &p, &e);
    ar_plan_free(p);
    return rc == AR_OK;
}

/* The ring_1d along t's ring of ranks (ar_algo_topology), or NULL where it has none that
 * is not a translate of itself already, or where its rotations would not let rank 0's ops
 * stand for all (ranks that share a device: every rank's ops, on t as on it). */
static ar_topo_t *cycle_view(const ar_topo_t *t) {
    const int P = t->nranks;
    if (P != t->ndevices || P < 3) return NULL;
    int *ord = malloc((size_t)P * sizeof *ord), *dev = malloc((size_t)P * sizeof *dev);
    ar_topo_t *v = NULL;
    if (ord && dev && ar__find_ring(t, ord) == 1 && !(ar_topo_translatable(t, 0) && ar__ring_translates(t, ord))) {
        for (int j = 0; j < P; j++) dev[j] = ar_topo_rank_device(t, ord[j]);
        ar_error_t e;
        ar_error_clear(&e);
        if (ar_topo_cycle(t, dev, &v, &e) != AR_OK) v = NULL;
    }
    free(ord);
    free(dev);
    return v;
}

const ar_topo_t *ar_algo_topology(const ar_algo_t *a, const ar_topo_t *t, const ar_algo_opts_t *o) {
    if (!a || !a->cycle_only || !t || !o || o->symmetry == AR_SYMMETRY_OFF || o->one_rank) return t;
    if (!t->cycle_view_tried) { /* what t already determines, kept with it */
        ar_topo_t *w = (ar_topo_t *)t;
        w->cycle_view = cycle_view(t);
        w->cycle_view_tried = 1;
    }
    return t->cycle_view ? t->cycle_view : t;
}

int ar_algo_build(const char *name, const ar_topo_t *topo, uint64_t count, ar_dtype_t dtype,
                  const ar_algo_opts_t *opts, ar_plan_t **out, ar_error_t *err) {
    const ar_algo_t *a = ar_algo_find(name);
    if (!a) {
        char list[256];
        ar_algo_names(NULL, list, sizeof list);
        return AR_ERR(err, AR_EINVAL, "unknown algorithm '%s' (%s)", name ? name : "", list);
    }
    if (count == 0) return AR_ERR(err, AR_EINVAL, "%s: count must be at least 1", a->name);
    if (a->probe) /* the channels as asked: a probe has no default of its own */
        return ar__probe_build(name, topo->nranks, count, dtype, opts ? opts->channels : 1, out, err);
    if ((unsigned)dtype >= AR_NDTYPE) return AR_ERR(err, AR_EINVAL, "%s: unknown dtype", a->name);
    ar_algo_opts_t def = AR_ALGO_OPTS_DEFAULT;
    *out = NULL;
    if (opts && opts->channels > a->max_channels)
        return AR_ERR(err, AR_EUNFIT, "%s takes at most %d channels (asked %d)", a->name, a->max_channels,
                      opts->channels);
    if (!opts) opts = &def;
    if (!ar_algo_computes(a, opts->coll)) {
        char list[256];
        ar_algo_names(&opts->coll, list, sizeof list);
        return AR_ERR(err, AR_EUNFIT, "%s computes no %s (%s do)", a->name, ar_coll_name(opts->coll), list);
    }
    if (ar_coll_fused(opts->coll)) return ar__fused_build(a, topo, count, dtype, opts, out, err);
    if (opts->symmetry != AR_SYMMETRY_OFF && !opts->one_rank) {
        const int rc = rank0_alone(a, topo, count, dtype, opts, out, err);
        if (rc != AR_EUNFIT) return rc;
    }
    const int rc = build_in_place(a, topo, count, dtype, opts, out, err);
    const verdict_key_t key = verdict_key(a, topo, count, dtype, opts);
    const verdict_t *v = rc == AR_ELIMIT && opts->symmetry != AR_SYMMETRY_OFF ? verdict_find(topo, &key) : NULL;
    if (v && v->mirrors) /* the way past it is the model's warmth, not the plan's size */
        return AR_ERR(err, rc,
                      "%s: %d ranks' plan is over a plan's most, and rank 0's is not tried for all under %s's "
                      "L2 warmth (its mirror offsets: no stride per rank gives them, and each rank's plan walks "
                      "%.2g ops, over %u): --set cold_lat_ns=0 drops the warmth, or fewer ranks",
                      a->name, topo->nranks, topo->model ? topo->model->name : "the model", (double)v->mirrors,
                      (unsigned)AR_ALGO_MIRROR_MAX_WORK);
    return rc;
}
