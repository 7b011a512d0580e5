/* The algorithm registry (arsim/algo.h). */
#include <string.h>
#include "algorithms/internal.h"

/* name, alias, builder, one line for `arsim list algos` */
#define ALGO(n, a, fn, lanes, what) {.name = n, .alias = a, .build = fn, .max_channels = lanes, .summary = what}
/* an algorithm whose lanes take its peers in turn (ar__peer) */
#define ALGO_PEERS(n, a, fn, lanes, what)                                                              \
    {.name = n, .alias = a, .build = fn, .max_channels = lanes, .summary = what, .lane_period = ar__peer_period}
#define RS_AG ((1u << AR_COLL_REDUCESCATTER) | (1u << AR_COLL_ALLGATHER))
static const ar_algo_t table[] = {
    {.name = "ring", .build = ar__build_ring, .max_channels = AR__MAX_LANES_RING, .colls = RS_AG,
     .summary = "reduce-scatter + all-gather around a ring of neighbours, pipelined, both directions"},
    ALGO("torus2d", NULL, ar__build_torus2d, AR__MAX_LANES_TORUS2D,
         "2D torus: reduce-scatter along X, allreduce along Y, all-gather along X, and Y first too"),
    ALGO("mesh2d", NULL, ar__build_mesh2d, AR__MAX_LANES_MESH2D,
         "2D mesh, neighbour links only: each block reduced up a tree to its owner, X or Y first, broadcast back"),
    ALGO_PEERS("1stage", "oneshot", ar__build_oneshot, AR__MAX_LANES_ONESHOT,
         "every rank pushes its input to every peer and reduces locally"),
    ALGO_PEERS("2stage", "twoshot", ar__build_twoshot, AR__MAX_LANES_TWOSHOT,
         "reduce-scatter (rank r reduces slice r from all peers) then all-gather"),
    {.name = "center_root", .build = ar__build_center_root, .max_channels = AR__MAX_LANES_CENTER_ROOT,
     .takes_root = 1, .summary = "reduce up a shortest-path tree rooted at the centre, broadcast down, pipelined"},
    {.name = "naive", .build = ar__build_naive, .max_channels = AR__MAX_LANES_NAIVE, .via_host = 1,
     .summary = "no P2P: stage through host memory"},
    ALGO("innet", NULL, ar__build_innet, AR__MAX_LANES_INNET,
         "in-network reduction: each rank's block summed inside the switch, the sum sent to every rank "
         "(a model whose switches reduce; simulators only)"),
    {.name = "direct", .build = ar__build_direct, .max_channels = AR__MAX_LANES_DIRECT,
     .colls = RS_AG | AR_ALGO_NO_ALLREDUCE, .lane_period = ar__peer_period,
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
    if (opts->sizing) return a->build(topo, count, dtype, opts, out, err);
    /* counted first, then written where it lies: no per-channel arrays grown by doubling and
     * copied, which held about two and a half times the plan at once */
    ar_plan_size_t size;
    memset(&size, 0, sizeof size);
    size.keep_layout = 1;
    ar_algo_opts_t k = *opts;
    k.sizing = &size;
    int rc = a->build(topo, count, dtype, &k, out, err);
    ar_plan_free(*out);
    *out = NULL;
    if (rc == AR_OK && !size.chan_ops) rc = AR_ERR(err, AR_ENOMEM, "%s: out of memory", a->name);
    if (rc == AR_OK) {
        k.sizing = NULL;
        k.layout = &size;
        rc = a->build(topo, count, dtype, &k, out, err);
    }
    ar_plan_size_free(&size);
    return rc;
}
