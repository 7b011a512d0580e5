/* ring: reduce-scatter then all-gather around a ring of neighbours, 2(p-1) steps
 * per chunk group, pipelined over groups; lanes alternate direction so both
 * directions of every link carry data. As a reduce-scatter or all-gather of the ranks'
 * shards, one of the two halves, p-1 steps. */
#include <stdlib.h>
#include "algorithms/internal.h"

int ar__build_ring(const ar_topo_t *t, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                   ar_plan_t **out, ar_error_t *err) {
    int P = t->nranks;
    int lanes = ar__lanes(t, o, count, dt, AR__MAX_LANES_RING);
    /* each rank, per lane and chunk group: P-1 REDUCEs of two sources and P-1 COPYs at least */
    {
        const uint64_t len = count / (uint64_t)lanes, group = ar__chunk_elems(o, len ? len : 1, dt, P) * (uint64_t)P;
        const uint64_t groups = len / (group ? group : 1) + 1;
        AR_TRY(ar__plan_fits(o, "ring", P, (uint64_t)lanes * groups * (uint64_t)P * 3u * (uint64_t)(P - 1), err));
    }
    int *ord = malloc((size_t)P * sizeof *ord), *rev = malloc((size_t)P * sizeof *rev);
    uint64_t *nrecv = calloc((size_t)P, sizeof *nrecv);
    ar_plan_t *p = NULL;
    int rc = (ord && rev && nrecv) ? AR_OK : AR_ENOMEM;
    if (rc == AR_OK) {
        const int f = ar__find_ring(t, ord); /* not a ring of neighbours: its other steps are routed */
        if (f < 0) rc = f;
    }
    /* A plan of one rank stands for the others only where every step of the ring is the same
     * translation (not a snake over a torus): said here, before a plan is built to compare. */
    if (rc == AR_OK && o && o->one_rank && P > 1 && !ar__ring_translates(t, ord))
        rc = AR_ERR(err, AR_EUNFIT, "ring: its steps are not one translation: no plan of one rank");
    if (rc == AR_OK) rc = ar__plan_new(o, "ring", P, lanes, count, dt, &p);
    if (rc == AR_OK) {
        p->scratch_elems = count;
        for (int i = 0; i < P; i++) rev[i] = ord[(P - i) % P];
    }
    const ar_coll_t coll = o ? o->coll : AR_COLL_ALLREDUCE;
    uint64_t *part = coll != AR_COLL_ALLREDUCE ? malloc(2 * (size_t)P * sizeof *part) : NULL;
    if (coll != AR_COLL_ALLREDUCE && !part && rc == AR_OK) rc = AR_ENOMEM;
    /* reduce-scatter, all-gather: lane c takes its share of every rank's shard, the part
     * of the rank at the ring position before the one it ends at (ar__ring_coll_pipe) */
    for (int c = 0; c < lanes && rc == AR_OK && part; c++) {
        const int *pos = (c % 2 && P > 2) ? rev : ord;
        uint64_t total = 0;
        for (int k = 0; k < P; k++) {
            uint64_t slo, slen;
            ar_coll_shard(count, P, pos[(k + P - 1) % P], &slo, &slen);
            ar__split(slo, slo + slen, lanes, c, &part[k], &part[P + k]);
            total += part[P + k];
        }
        for (int i = 0; i < P; i++) nrecv[i] = 0;
        ar__ring_t r = {p, P, pos, c, 2u * c, 2u * c + 1, 0, nrecv, 0, coll, part, part + P, 0, 0};
        rc = ar__ring_coll_pipe(&r, ar__chunk_elems(o, total ? total : 1, dt, P));
        if (rc == AR_OK) rc = ar__ring_end(&r);
    }
    for (int c = 0; c < lanes && rc == AR_OK && !part; c++) {
        uint64_t lo, len;
        ar__split(0, count, lanes, c, &lo, &len);
        for (int i = 0; i < P; i++) nrecv[i] = 0;
        ar__ring_t r = {p, P, (c % 2 && P > 2) ? rev : ord, c, 2u * c, 2u * c + 1, 0, nrecv, 0, AR_COLL_ALLREDUCE, NULL, NULL, 0, 0};
        uint64_t chunk = ar__chunk_elems(o, len, dt, P);
        uint64_t group = chunk * (uint64_t)P;
        rc = ar__ring_pipe(&r, lo, lo + len, group, AR_BUF_IN);
        if (rc == AR_OK) rc = ar__ring_end(&r);
    }
    if (rc == AR_OK) rc = ar_plan_finish(p);
    free(part);
    free(ord);
    free(rev);
    free(nrecv);
    if (rc != AR_OK) {
        ar_plan_free(p);
        if (rc == AR_ENOMEM || rc == AR_ELIMIT) AR_ERR(err, rc, "ring: %s", ar_plan_strerror(rc));
        return rc;
    }
    *out = p;
    return AR_OK;
}
