/* center_root: reduce along a shortest-path spanning tree rooted at a rank of
 * least eccentricity (lowest index on ties; opts->root overrides), broadcast back
 * down, pipelined in chunks; each lane has a reduce and a broadcast channel. */
#include <stdlib.h>
#include "algorithms/internal.h"

int ar__build_center_root(const ar_topo_t *t, uint64_t count, ar_dtype_t dt,
                          const ar_algo_opts_t *o, ar_plan_t **out, ar_error_t *err) {
    int P = t->nranks;
    int *dist = malloc((size_t)P * sizeof *dist), *par = malloc((size_t)P * sizeof *par);
    ar_plan_t *p = NULL;
    int rc = dist && par ? AR_OK : AR_ENOMEM;
    int root = -1;
    if (rc == AR_OK && o && o->root >= 0) {
        if (o->root >= P)
            rc = AR_ERR(err, AR_EINVAL, "center_root: root %d out of range (%d ranks)", o->root, P);
        else
            root = o->root;
    }
    if (rc == AR_OK && root < 0) {
        root = ar__center_rank(t);
        if (root == -2) rc = AR_ENOMEM;
        else if (root < 0) rc = AR_ERR(err, AR_EUNFIT, "center_root: %s is not connected", t->name);
    }
    int lanes = ar__lanes(t, o, count, dt, AR__MAX_LANES_CENTER_ROOT);
    if (rc == AR_OK && ar__bfs(t, root, dist, par) < 0)
        rc = AR_ERR(err, AR_EUNFIT, "center_root: %s is not connected", t->name);
    int maxdeg = 1;
    if (rc == AR_OK) {
        int *deg = calloc((size_t)P, sizeof *deg);
        if (!deg) rc = AR_ENOMEM;
        for (int v = 0; v < P && deg; v++)
            if (par[v] >= 0 && ++deg[par[v]] > maxdeg) maxdeg = deg[par[v]];
        free(deg);
    }
    if (rc == AR_OK) rc = ar__plan_new(o, "center_root", P, 2 * lanes, count, dt, &p);
    if (rc == AR_OK) {
        p->scratch_elems = (uint64_t)maxdeg * ar__slot_stride(count, dt);
        p->root = root;
    }
    for (int c = 0; c < lanes && rc == AR_OK; c++) {
        uint64_t lo, len;
        ar__split(0, count, lanes, c, &lo, &len);
        ar__tree_t tr = {p, P, par, root, maxdeg, 2 * c, 2 * c + 1, 0, 0, 0,
                         NULL, NULL, NULL, NULL, 0, 0, 1, (uint32_t)c};
        rc = ar__tree_init(&tr);
        if (rc == AR_OK) rc = ar__tree_run(&tr, lo, lo + len, ar__chunk_elems(o, len, dt, 1));
        ar__tree_fini(&tr);
    }
    if (rc == AR_OK) rc = ar_plan_finish(p);
    free(dist);
    free(par);
    if (rc != AR_OK) {
        ar_plan_free(p);
        if (rc == AR_ENOMEM || (rc == AR_ELIMIT && !err->message[0])) AR_ERR(err, rc, "center_root: %s", ar_plan_strerror(rc));
        return rc;
    }
    *out = p;
    return AR_OK;
}
