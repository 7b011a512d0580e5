/* The algorithm registry (arsim/algo.h). */
#include <string.h>
#include "algorithms/internal.h"

static const ar_algo_t algo_ring = {
    .name = "ring", .alias = NULL, .build = ar__build_ring,
    .summary = "reduce-scatter + all-gather around a ring of neighbours, pipelined, both directions"};
static const ar_algo_t algo_torus2d = {
    .name = "torus2d", .alias = NULL, .build = ar__build_torus2d,
    .summary = "2D torus: reduce-scatter along X, allreduce along Y, all-gather along X"};
static const ar_algo_t algo_mesh2d = {
    .name = "mesh2d", .alias = NULL, .build = ar__build_mesh2d,
    .summary = "2D mesh, neighbour links only: snake ring, or pipelined chains on a snake path"};
static const ar_algo_t algo_oneshot = {
    .name = "1stage", .alias = "oneshot", .build = ar__build_oneshot,
    .summary = "every rank pushes its input to every peer and reduces locally"};
static const ar_algo_t algo_twoshot = {
    .name = "2stage", .alias = "twoshot", .build = ar__build_twoshot,
    .summary = "reduce-scatter (rank r reduces slice r from all peers) then all-gather"};
static const ar_algo_t algo_center_root = {
    .name = "center_root", .alias = NULL, .build = ar__build_center_root,
    .summary = "reduce up a shortest-path tree rooted at the centre, broadcast down, pipelined"};
static const ar_algo_t algo_naive = {
    .name = "naive", .alias = NULL, .build = ar__build_naive,
    .summary = "no P2P: stage through host memory"};

static const ar_algo_t *const algos[] = {&algo_ring, &algo_torus2d, &algo_mesh2d, &algo_oneshot,
                                         &algo_twoshot, &algo_center_root, &algo_naive, NULL};

const ar_algo_t *const *ar_algo_all(void) { return algos; }

const ar_algo_t *ar_algo_find(const char *name) {
    if (!name) return NULL;
    for (int i = 0; algos[i]; i++)
        if (!strcmp(algos[i]->name, name) || (algos[i]->alias && !strcmp(algos[i]->alias, name)))
            return algos[i];
    return ar__probe_find(name);
}

int ar_algo_build(const char *name, const ar_topo_t *topo, uint64_t count, ar_dtype_t dtype,
                  const ar_algo_opts_t *opts, ar_plan_t **out, ar_error_t *err) {
    const ar_algo_t *a = ar_algo_find(name);
    if (!a) {
        char list[256] = "";
        for (int i = 0; algos[i]; i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, algos[i]->name, sizeof list - strlen(list) - 1);
        }
        return AR_ERR(err, AR_EINVAL, "unknown algorithm '%s' (%s)", name ? name : "", list);
    }
    if (count == 0) return AR_ERR(err, AR_EINVAL, "%s: count must be at least 1", a->name);
    if (a->probe) /* the channels as asked: a probe has no default of its own */
        return ar__probe_build(name, topo->nranks, count, dtype, opts ? opts->channels : 1, out, err);
    if ((unsigned)dtype >= AR_NDTYPE) return AR_ERR(err, AR_EINVAL, "%s: unknown dtype", a->name);
    ar_algo_opts_t def = AR_ALGO_OPTS_DEFAULT;
    *out = NULL;
    return a->build(topo, count, dtype, opts ? opts : &def, out, err);
}
