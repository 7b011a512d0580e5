/* Shared building blocks of the algorithms: range splitting, defaults, the
 * push ring and the pipelined tree, rings and grids found on a topology. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "arsim/util.h"
#include "algorithms/internal.h"

/* Where part b of [lo, hi) in n parts starts: the exact cut (ar_coll_shard's) moved to the
 * nearest multiple of grain elements of the whole vector. */
static uint64_t split_at(uint64_t lo, uint64_t hi, int n, int b, uint64_t grain) {
    if (b <= 0) return lo;
    if (b >= n) return hi;
    uint64_t at, len;
    ar_coll_shard(hi - lo, n, b, &at, &len);
    at += lo;
    return grain > 1 ? (at + grain / 2) / grain * grain : at;
}

uint64_t ar_algo_split_grain(uint64_t each) {
    /* Cuts on whole lines of 64 elements (128 bytes of bf16, 256 of fp32) where every part
     * holds 64 of them: an op streaming from a 128-byte line runs about 19% faster on a GPU
     * than one starting a sector into it (docs/PERFORMANCE.md, "Cuts on whole lines"), and
     * a cut within half a line of the exact one moves a part's length by 1.6% at most.
     * Shorter parts: on blocks of 16 elements (whole 32-byte sectors of bf16) where every
     * part holds 8 of them, else on 8-element vectors (16 bytes of bf16) where it holds 8 of
     * those: an op starting there has no scalar head (an odd count's cuts fell mid-vector:
     * 5-12% slower at 16 M elements). */
    return each >= 64 * AR__SPLIT_LINE ? AR__SPLIT_LINE
           : each >= 8 * AR__SPLIT_BLOCK ? AR__SPLIT_BLOCK
           : each >= 8 * AR__SPLIT_VEC  ? AR__SPLIT_VEC
                                        : 1;
}

void ar__split(uint64_t lo, uint64_t hi, int n, int b, uint64_t *off, uint64_t *len) {
    const uint64_t grain = ar_algo_split_grain(n > 0 ? (hi - lo) / (uint64_t)n : 0);
    *off = split_at(lo, hi, n, b, grain);
    *len = split_at(lo, hi, n, b + 1, grain) - *off;
}

/* Bandwidth of the fattest neighbour link bundle, GB/s one way. */
static double link_gbps(const ar_topo_t *t) {
    double best = 0;
    for (int i = 0; i < t->nlinks; i++) {
        double bw = ar_topo_link_gbps(t, i);
        if (bw > best) best = bw;
    }
    return best;
}

int ar__lanes(const ar_topo_t *t, const ar_algo_opts_t *o, uint64_t count, ar_dtype_t dt,
              int max_lanes) {
    int n;
    if (o && o->channels > 0) {
        n = o->channels;
    } else {
        /* Little's law per channel: pushes are posted stores at chan_write_gbps; reads
         * would be inflight / latency. Enough channels to fill one link for large
         * messages; about one per 64 KB below that, since small ones are latency-bound. */
        double chan = t->model->chan_write_gbps;
        double rd = ar_model_chan_read_gbps(t->model);
        if (rd > chan) chan = rd;
        double lb = link_gbps(t);
        int fill = chan > 0 && lb > 0 ? (int)ceil(lb / chan) : 1;
        if (fill > 32) fill = 32;
        uint64_t bytes = count * ar_dtype_size(dt);
        uint64_t by_size = bytes / (64 * 1024);
        n = by_size < (uint64_t)fill ? (int)by_size : fill;
        if (n < 1) n = 1;
    }
    if (n > max_lanes) n = max_lanes;
    if ((uint64_t)n > count) n = (int)count;
    return n < 1 ? 1 : n;
}

uint64_t ar__slot_stride(uint64_t count, ar_dtype_t dt) {
    const uint64_t v = AR__SLOT_ALIGN_BYTES / ar_dtype_size(dt);
    return (count + v - 1) / v * v;
}

uint64_t ar__chunk_elems(const ar_algo_opts_t *o, uint64_t lane_elems, ar_dtype_t dt, int pieces) {
    uint64_t es = ar_dtype_size(dt);
    uint64_t c;
    if (o && o->chunk_bytes) {
        c = o->chunk_bytes / es;
    } else {
        /* About 4 pipeline steps per piece of the lane, between 8 KB and 512 KB, in whole
         * lines of the cuts (ar__split) so that the pieces start on them too. */
        uint64_t per = lane_elems / (uint64_t)(pieces > 0 ? pieces : 1) / 4 / AR__SPLIT_LINE * AR__SPLIT_LINE;
        uint64_t lo = 8192 / es, hi = 524288 / es;
        c = per < lo ? lo : per > hi ? hi : per;
    }
    return c ? c : 1;
}

/* ---------- ring ---------- */

static int mod(int a, int n) { return ((a % n) + n) % n; }

/* The ring positions whose ops the plan keeps, [*first, *last): every one, or in a plan of
 * one rank or a row (arsim/plan.h) the positions of its ranks, none where the ring does not
 * pass them (or every one where they lie apart on it: the emitters drop the rest). A
 * position's own count of WAITs (nrecv) is all it keeps of the others: the rest need not
 * run. */
static void ring_span(ar__ring_t *r, int *first, int *last) {
    if (!r->span_first1) { /* found once per ring: a torus asks for each of its rings per chunk */
        int f = 0, l = r->n;
        if (r->p->only_rank >= 0) {
            int kept = 0;
            f = r->n, l = 0;
            for (int i = 0; i < r->n; i++)
                if (ar_plan_keeps_rank(r->p, r->ranks[i])) {
                    if (i < f) f = i;
                    l = i + 1, kept++;
                }
            if (kept && kept != l - f) f = 0, l = r->n;
            if (!kept) f = 0, l = 0;
        }
        r->span_first1 = f + 1, r->span_last = l;
    }
    *first = r->span_first1 - 1, *last = r->span_last;
}

int ar__ring_rs(ar__ring_t *r, uint64_t lo, uint64_t hi, ar_buf_t src) {
    ar_plan_t *p = r->p;
    int n = r->n;
    if (n == 1) {
        if (src != AR_BUF_OUT)
            EMIT(ar_plan_copy(p, r->ranks[0], r->chan, ar_addr(r->ranks[0], AR_BUF_OUT, lo),
                              ar_addr(r->ranks[0], src, lo), hi - lo));
        return AR_OK;
    }
    uint64_t off, len;
    int i0, i1;
    ring_span(r, &i0, &i1);
    if (i0 >= i1) return AR_OK;
    for (int s = 0; s < n - 1; s++)
        for (int i = i0; i < i1; i++) {
            int me = r->ranks[i], nx = r->ranks[(i + 1) % n];
            ar__split(lo, hi, n, mod(i - s, n), &off, &len);
            ar_addr_t dst = ar_addr(nx, AR_BUF_SCRATCH, r->scr_base + off);
            if (s == 0) {
                EMIT(ar_plan_copy(p, me, r->chan, dst, ar_addr(me, src, off), len));
            } else {
                EMIT(ar_plan_wait(p, me, r->chan, r->fdata, ++r->nrecv[i]));
                ar_addr_t sv[2] = {ar_addr(me, AR_BUF_SCRATCH, r->scr_base + off),
                                   ar_addr(me, src, off)};
                EMIT(ar_plan_reduce(p, me, r->chan, dst, sv, 2, len));
            }
            EMIT(ar_plan_signal(p, me, r->chan, nx, r->fdata));
        }
    for (int i = i0; i < i1; i++) {
        int me = r->ranks[i];
        ar__split(lo, hi, n, (i + 1) % n, &off, &len);
        EMIT(ar_plan_wait(p, me, r->chan, r->fdata, ++r->nrecv[i]));
        ar_addr_t sv[2] = {ar_addr(me, AR_BUF_SCRATCH, r->scr_base + off), ar_addr(me, src, off)};
        EMIT(ar_plan_reduce(p, me, r->chan, ar_addr(me, AR_BUF_OUT, off), sv, 2, len));
    }
    return AR_OK;
}

int ar__ring_ag(ar__ring_t *r, uint64_t lo, uint64_t hi) {
    ar_plan_t *p = r->p;
    int n = r->n;
    if (n == 1) return AR_OK;
    uint64_t off, len;
    int i0, i1;
    ring_span(r, &i0, &i1);
    if (i0 >= i1) { /* no position kept: only the count of acknowledgements moves */
        r->nack++;
        return AR_OK;
    }
    for (int t = 0; t < n - 1; t++)
        for (int i = i0; i < i1; i++) {
            int me = r->ranks[i], nx = r->ranks[(i + 1) % n];
            ar__split(lo, hi, n, mod(i + 1 - t, n), &off, &len);
            if (t > 0) EMIT(ar_plan_wait(p, me, r->chan, r->fdata, ++r->nrecv[i]));
            EMIT(ar_plan_copy(p, me, r->chan, ar_addr(nx, AR_BUF_OUT, off),
                              ar_addr(me, AR_BUF_OUT, off), len));
            EMIT(ar_plan_signal(p, me, r->chan, nx, r->fdata));
        }
    /* Everything pushed to a position has been read by it now: acknowledge. */
    for (int i = i0; i < i1; i++)
        EMIT(ar_plan_signal(p, r->ranks[i], r->chan, r->ranks[mod(i - 1, n)], r->fack));
    r->nack++;
    for (int i = i0; i < i1; i++)
        EMIT(ar_plan_wait(p, r->ranks[i], r->chan, r->fdata, ++r->nrecv[i]));
    return AR_OK;
}

/* Part idx of a pass over [lo, hi): the idx-th of n near-equal parts, or, where the ring
 * has a part table, the elements [lo, hi) of part idx's own range. */
static void ring_part(const ar__ring_t *r, uint64_t lo, uint64_t hi, int idx, uint64_t *off, uint64_t *len) {
    if (!r->part_lo) {
        ar__split(lo, hi, r->n, idx, off, len);
        return;
    }
    const uint64_t pl = r->part_len[idx], a = lo < pl ? lo : pl, b = hi < pl ? hi : pl;
    *off = r->part_lo[idx] + a;
    *len = b - a;
}

/* Stage k of a ring pass over [lo, hi) at position i: stages 0 .. n-2 reduce-scatter,
 * n-1 the last reduction and the all-gather's first push, n .. 2n-3 the all-gather,
 * 2n-2 the acknowledgement and the last push's arrival. Every stage but the first waits
 * for one push from the previous position, every stage but the last sends one: a
 * position's k-th wait is for its predecessor's k-th push as long as both emit their
 * stages in the same order. */
static int ring_stage(ar__ring_t *r, uint64_t lo, uint64_t hi, ar_buf_t src, int i, int k) {
    ar_plan_t *p = r->p;
    const int n = r->n, me = r->ranks[i], nx = r->ranks[(i + 1) % n];
    uint64_t off, len;
    if (k == 2 * n - 2) {
        EMIT(ar_plan_signal(p, me, r->chan, r->ranks[mod(i - 1, n)], r->fack));
        return ar_plan_wait(p, me, r->chan, r->fdata, ++r->nrecv[i]);
    }
    if (k > 0) EMIT(ar_plan_wait(p, me, r->chan, r->fdata, ++r->nrecv[i]));
    if (k < n - 1) {
        ring_part(r, lo, hi, mod(i - k, n), &off, &len);
        ar_addr_t dst = ar_addr(nx, AR_BUF_SCRATCH, r->scr_base + off);
        if (k == 0) {
            EMIT(ar_plan_copy(p, me, r->chan, dst, ar_addr(me, src, off), len));
        } else {
            ar_addr_t sv[2] = {ar_addr(me, AR_BUF_SCRATCH, r->scr_base + off), ar_addr(me, src, off)};
            EMIT(ar_plan_reduce(p, me, r->chan, dst, sv, 2, len));
        }
    } else {
        const int t = k - (n - 1);
        ring_part(r, lo, hi, mod(i + 1 - t, n), &off, &len);
        if (t == 0) {
            ar_addr_t sv[2] = {ar_addr(me, AR_BUF_SCRATCH, r->scr_base + off), ar_addr(me, src, off)};
            EMIT(ar_plan_reduce(p, me, r->chan, ar_addr(me, AR_BUF_OUT, off), sv, 2, len));
        }
        EMIT(ar_plan_copy(p, me, r->chan, ar_addr(nx, AR_BUF_OUT, off), ar_addr(me, AR_BUF_OUT, off), len));
    }
    return ar_plan_signal(p, me, r->chan, nx, r->fdata);
}

int ar__ring_pipe(ar__ring_t *r, uint64_t lo, uint64_t hi, uint64_t group, ar_buf_t src) {
    const int n = r->n;
    if (hi <= lo) return AR_OK;
    if (n == 1) {
        AR_TRY(ar__ring_rs(r, lo, hi, src));
        return ar__ring_ag(r, lo, hi);
    }
    const uint64_t G = (hi - lo - 1) / group + 1, K = 2u * (uint64_t)n - 1;
    int i0, i1;
    ring_span(r, &i0, &i1);
    for (uint64_t d = 0; d < K + G - 1; d++)
        for (uint64_t g = d >= K ? d - K + 1 : 0; g < G && g <= d; g++) {
            const uint64_t glo = lo + g * group, ghi = hi - glo < group ? hi : glo + group;
            for (int i = i0; i < i1; i++) AR_TRY(ring_stage(r, glo, ghi, src, i, (int)(d - g)));
            if (d - g == K - 1) r->nack++;
        }
    return AR_OK;
}

/* Stage k (0 .. n-1) of a reduce-scatter or all-gather pass at position i: the
 * allreduce's stages 0 .. n-2 then the last reduction into OUT and an acknowledgement
 * (the pushes into my SCRATCH are read), or my part from IN into my OUT and on, then its
 * stages n .. 2n-2. */
static int ring_coll_stage(ar__ring_t *r, uint64_t lo, uint64_t hi, int i, int k) {
    ar_plan_t *p = r->p;
    const int n = r->n, me = r->ranks[i], nx = r->ranks[(i + 1) % n];
    uint64_t off, len;
    if (r->coll == AR_COLL_REDUCESCATTER) {
        if (k < n - 1) return ring_stage(r, lo, hi, AR_BUF_IN, i, k);
        EMIT(ar_plan_wait(p, me, r->chan, r->fdata, ++r->nrecv[i]));
        ring_part(r, lo, hi, (i + 1) % n, &off, &len);
        ar_addr_t sv[2] = {ar_addr(me, AR_BUF_SCRATCH, r->scr_base + off), ar_addr(me, AR_BUF_IN, off)};
        EMIT(ar_plan_reduce(p, me, r->chan, ar_addr(me, AR_BUF_OUT, off), sv, 2, len));
        return ar_plan_signal(p, me, r->chan, r->ranks[mod(i - 1, n)], r->fack);
    }
    if (k > 0) return ring_stage(r, lo, hi, AR_BUF_IN, i, k + n - 1);
    ring_part(r, lo, hi, (i + 1) % n, &off, &len);
    EMIT(ar_plan_copy(p, me, r->chan, ar_addr(me, AR_BUF_OUT, off), ar_addr(me, AR_BUF_IN, off), len));
    EMIT(ar_plan_copy(p, me, r->chan, ar_addr(nx, AR_BUF_OUT, off), ar_addr(me, AR_BUF_IN, off), len));
    return ar_plan_signal(p, me, r->chan, nx, r->fdata);
}

int ar__ring_coll_pipe(ar__ring_t *r, uint64_t chunk) {
    const int n = r->n;
    uint64_t most = 0;
    for (int k = 0; k < n; k++) most = r->part_len[k] > most ? r->part_len[k] : most;
    if (!most) return AR_OK;
    if (n == 1) /* the one rank's part is the whole: IN to OUT */
        return ar_plan_copy(r->p, r->ranks[0], r->chan, ar_addr(r->ranks[0], AR_BUF_OUT, r->part_lo[0]),
                            ar_addr(r->ranks[0], AR_BUF_IN, r->part_lo[0]), r->part_len[0]);
    const uint64_t G = (most - 1) / chunk + 1, K = (uint64_t)n;
    int i0, i1;
    ring_span(r, &i0, &i1);
    for (uint64_t d = 0; d < K + G - 1; d++)
        for (uint64_t g = d >= K ? d - K + 1 : 0; g < G && g <= d; g++) {
            for (int i = i0; i < i1; i++) AR_TRY(ring_coll_stage(r, g * chunk, (g + 1) * chunk, i, (int)(d - g)));
            if (d - g == K - 1) r->nack++;
        }
    return AR_OK;
}

int ar__ring_end(ar__ring_t *r) {
    if (r->n == 1 || !r->nack) return AR_OK;
    int i0, i1;
    ring_span(r, &i0, &i1);
    for (int i = i0; i < i1; i++) EMIT(ar_plan_wait(r->p, r->ranks[i], r->chan, r->fack, r->nack));
    return AR_OK;
}

/* ---------- tree ---------- */

/* Rank v's flags of the tree, from tree_flag0: RED slot j (one per child slot), ACKR, two
 * unused, BC, ACKB slot j. Child slots: maxdeg on every rank, or (rank_regions) v's own
 * children, in the lane's region of v's flags: a rank's flags then grow with its children,
 * not the widest rank's (a root of thousands of children among leaves). */
uint32_t ar__tree_nflags(int maxdeg) { return 2u * (uint32_t)maxdeg + 4u; }
static int tree_slots(const ar__tree_t *t, int v) { return t->rank_regions ? t->nchild[v] : t->maxdeg; }
static uint32_t tree_flag0(const ar__tree_t *t, int v) {
    return t->fbase + (t->rank_regions ? t->lane * ar__tree_nflags(t->nchild[v]) : 0);
}
#define F_RED(t, v, j) (tree_flag0(t, v) + (uint32_t)(j))
#define F_ACKR(t, v) (tree_flag0(t, v) + (uint32_t)tree_slots(t, v))
#define F_BC(t, v) (F_ACKR(t, v) + 2)
#define F_ACKB(t, v, j) (F_ACKR(t, v) + 4 + (uint32_t)(j))

int ar__tree_init(ar__tree_t *t) {
    t->nchild = calloc((size_t)t->P, sizeof *t->nchild);
    t->slot = calloc((size_t)t->P, sizeof *t->slot);
    t->child = calloc((size_t)t->P, sizeof *t->child);
    int *all = malloc((size_t)(t->P > 0 ? t->P : 1) * sizeof *all); /* every rank's children, side by side */
    if (!t->nchild || !t->slot || !t->child || !all) {
        free(all);
        return AR_ENOMEM;
    }
    for (int v = 0; v < t->P; v++)
        if (t->parent[v] >= 0) t->nchild[t->parent[v]]++;
    for (int v = 0, at = 0; v < t->P; v++) {
        t->child[v] = all + at;
        at += t->nchild[v];
        t->nchild[v] = 0;
    }
    for (int v = 0; v < t->P; v++)
        if (t->parent[v] >= 0) {
            int u = t->parent[v];
            t->slot[v] = t->nchild[u];
            t->child[u][t->nchild[u]++] = v;
        }
    t->nchunks = 0;
    return AR_OK;
}

void ar__tree_fini(ar__tree_t *t) {
    if (t->child) free(t->child[0]); /* the one array of every rank's children */
    free(t->child);
    free(t->nchild);
    free(t->slot);
    t->child = NULL;
    t->nchild = t->slot = NULL;
}

/* Where rank v keeps child slot j of element x. */
static uint64_t tree_slot(const ar__tree_t *t, int v, int j, uint64_t x) {
    if (t->slot_at) return t->slot_at[v] + (uint64_t)j * t->slot_len + (x - t->slot_lo);
    return t->scr_base + (uint64_t)j * ar__slot_stride(t->p->count, t->p->dtype) + x;
}

int ar__tree_reduce_rank(ar__tree_t *t, int v, uint64_t off, uint64_t len, uint64_t k, ar_addr_t *sv) {
    ar_plan_t *p = t->p;
    const int m = t->nchild[v];
    for (int j = 0; j < m; j++) EMIT(ar_plan_wait(p, v, t->cred, F_RED(t, v, j), k));
    sv[0] = ar_addr(v, AR_BUF_IN, off);
    for (int j = 0; j < m; j++) sv[j + 1] = ar_addr(v, AR_BUF_SCRATCH, tree_slot(t, v, j, off));
    if (v == t->root) {
        EMIT(ar_plan_reduce(p, v, t->cred, ar_addr(v, AR_BUF_OUT, off), sv, (uint32_t)m + 1, len));
    } else {
        const int u = t->parent[v];
        ar_addr_t dst = ar_addr(u, AR_BUF_SCRATCH, tree_slot(t, u, t->slot[v], off));
        EMIT(ar_plan_reduce(p, v, t->cred, dst, sv, (uint32_t)m + 1, len));
        EMIT(ar_plan_signal(p, v, t->cred, u, F_RED(t, u, t->slot[v])));
    }
    /* the root's result is ready: its children may pull it */
    for (int j = 0; v == t->root && j < m; j++) EMIT(ar_plan_signal(p, v, t->cred, t->child[v][j], F_BC(t, t->child[v][j])));
    return AR_OK;
}

/* Broadcast down: every child pulls from its parent's OUT as soon as it is ready
 * (children of one parent pull in parallel) and tells its own children. */
int ar__tree_bcast_rank(ar__tree_t *t, int v, uint64_t off, uint64_t len, uint64_t k) {
    ar_plan_t *p = t->p;
    if (v == t->root) return AR_OK;
    const int u = t->parent[v];
    EMIT(ar_plan_wait(p, v, t->cbc, F_BC(t, v), k));
    EMIT(ar_plan_copy(p, v, t->cbc, ar_addr(v, AR_BUF_OUT, off), ar_addr(u, AR_BUF_OUT, off), len));
    for (int j = 0; j < t->nchild[v]; j++) EMIT(ar_plan_signal(p, v, t->cbc, t->child[v][j], F_BC(t, t->child[v][j])));
    return AR_OK;
}

int ar__tree_chunk(ar__tree_t *t, uint64_t off, uint64_t len) {
    const uint64_t k = ++t->nchunks;
    ar_addr_t *sv = malloc(((size_t)t->maxdeg + 1) * sizeof *sv);
    if (!sv) return AR_ENOMEM;
    int rc = AR_OK;
    for (int v = 0; v < t->P && rc == AR_OK; v++) rc = ar__tree_reduce_rank(t, v, off, len, k, sv);
    for (int v = 0; v < t->P && rc == AR_OK; v++) rc = ar__tree_bcast_rank(t, v, off, len, k);
    free(sv);
    return rc;
}

/* Once per execution, after the last chunk: a parent tells its children it has reduced
 * everything they pushed (their slots are free for the next execution), a child tells its
 * parent it has pulled everything (the parent's OUT may be written again); a channel's
 * ops run in order, so one signal after its last chunk covers them all. */
int ar__tree_end_signals(ar__tree_t *t) {
    ar_plan_t *p = t->p;
    if (!t->nchunks) return AR_OK;
    for (int v = 0; v < t->P; v++) {
        for (int j = 0; j < t->nchild[v]; j++) EMIT(ar_plan_signal(p, v, t->cred, t->child[v][j], F_ACKR(t, t->child[v][j])));
        if (v != t->root) EMIT(ar_plan_signal(p, v, t->cbc, t->parent[v], F_ACKB(t, t->parent[v], t->slot[v])));
    }
    return AR_OK;
}

int ar__tree_end_waits(ar__tree_t *t) {
    ar_plan_t *p = t->p;
    if (!t->nchunks) return AR_OK;
    for (int v = 0; v < t->P; v++) {
        if (v != t->root) EMIT(ar_plan_wait(p, v, t->cred, F_ACKR(t, v), 1));
        /* whoever writes v's OUT waits until every child has pulled it */
        const int ch = v == t->root ? t->cred : t->cbc;
        for (int j = 0; j < t->nchild[v]; j++) EMIT(ar_plan_wait(p, v, ch, F_ACKB(t, v, j), 1));
    }
    return AR_OK;
}

int ar__tree_end(ar__tree_t *t) {
    AR_TRY(ar__tree_end_signals(t));
    return ar__tree_end_waits(t);
}

int ar__tree_run(ar__tree_t *t, uint64_t lo, uint64_t hi, uint64_t chunk) {
    for (uint64_t o = lo; o < hi; o += chunk) AR_TRY(ar__tree_chunk(t, o, hi - o < chunk ? hi - o : chunk));
    return ar__tree_end(t);
}

/* ---------- graphs ---------- */

/* Ranks are neighbours when their devices are (ar_topo_rank_adjacent looks at devices
 * only), so the rank graph is the graph of the devices that hold ranks, each device's
 * ranks a clique: walks over it cost devices squared, not ranks squared. */
typedef struct rgraph_s {
    int nd;            /* devices that hold ranks */
    int *dev;          /* per rank: its index among those devices */
    int *rfirst, *rank; /* device i's ranks, ascending: rank[rfirst[i] .. rfirst[i + 1]) */
    int *nfirst, *nbr; /* device i's neighbours: nbr[nfirst[i] .. nfirst[i + 1]) */
} rgraph_t;

static int cmp_int(const void *x, const void *y) {
    const int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

static void rgraph_free(rgraph_t *g) {
    AR_FREE_EACH(g->dev, g->rfirst, g->rank, g->nfirst, g->nbr);
    memset(g, 0, sizeof *g);
}

/* The devices one link, or a path through switches alone, away from device home (what
 * ar_topo_rank_adjacent calls adjacent), each once into found: as idx[d] where idx is given
 * (devices with idx[d] < 0 left out), else as d. mark and queue hold nnodes each; mark[v] ==
 * stamp means v was reached in this walk. Returns how many were found. */
static int near_devices(const ar_topo_t *t, int home, int *mark, int stamp, int *queue, const int *idx,
                        int *found) {
    int n = 0, head = 0, tail = 0;
    mark[home] = stamp;
    queue[tail++] = home;
    while (head < tail) {
        const int u = queue[head++];
        for (int k = t->adj_start[u]; k < t->adj_start[u + 1]; k++) {
            const int v = t->adj_nbr[k];
            if (mark[v] == stamp) continue;
            mark[v] = stamp;
            if (v >= t->ndevices) queue[tail++] = v; /* a switch: on through it */
            else if (!idx) found[n++] = v;
            else if (idx[v] >= 0) found[n++] = idx[v];
        }
    }
    return n;
}

/* g's devices and their ranks (dev, rfirst, rank; no neighbours), idx[d] device d's index
 * among them (-1: it holds none) and rep[i] device i's first rank, each D long. */
static int rgraph_ranks(rgraph_t *g, const ar_topo_t *t, int *idx, int *rep) {
    const int P = t->nranks, D = t->ndevices;
    memset(g, 0, sizeof *g);
    g->dev = malloc((size_t)P * sizeof *g->dev);
    g->rank = malloc((size_t)P * sizeof *g->rank);
    int rc = idx && rep && g->dev && g->rank ? AR_OK : AR_ENOMEM;
    for (int d = 0; rc == AR_OK && d < D; d++) idx[d] = -1;
    for (int r = 0; rc == AR_OK && r < P; r++) {
        const int d = ar_topo_rank_device(t, r);
        if (idx[d] < 0) {
            rep[g->nd] = r; /* its first rank stands for the device */
            idx[d] = g->nd++;
        }
        g->dev[r] = idx[d];
    }
    if (rc == AR_OK) {
        g->rfirst = calloc((size_t)g->nd + 1, sizeof *g->rfirst);
        g->nfirst = calloc((size_t)g->nd + 1, sizeof *g->nfirst);
        if (!g->rfirst || !g->nfirst) rc = AR_ENOMEM;
    }
    if (rc == AR_OK) { /* ranks by device, ascending (a counting sort keeps rank order) */
        for (int r = 0; r < P; r++) g->rfirst[g->dev[r] + 1]++;
        for (int i = 0; i < g->nd; i++) g->rfirst[i + 1] += g->rfirst[i];
        int *next = malloc((size_t)g->nd * sizeof *next);
        if (!next) rc = AR_ENOMEM;
        for (int i = 0; next && i < g->nd; i++) next[i] = g->rfirst[i];
        for (int r = 0; next && r < P; r++) g->rank[next[g->dev[r]]++] = r;
        free(next);
    }
    if (rc != AR_OK) rgraph_free(g);
    return rc;
}

static int rgraph_init(rgraph_t *g, const ar_topo_t *t) {
    const int D = t->ndevices;
    memset(g, 0, sizeof *g);
    int *idx = malloc((size_t)D * sizeof *idx), *rep = malloc((size_t)D * sizeof *rep);
    int rc = rgraph_ranks(g, t, idx, rep);
    /* Device i's neighbours as ar_topo_rank_adjacent has them (a link, or a path through
     * switches only), read off the topology's adjacency from the device's node outward
     * through switches: a walk of each device's surroundings, not a test of every pair. */
    int *mark = NULL, *queue = NULL, *found = NULL;
    if (rc == AR_OK) {
        mark = malloc((size_t)t->nnodes * sizeof *mark);
        queue = malloc((size_t)t->nnodes * sizeof *queue);
        found = malloc((size_t)g->nd * sizeof *found);
        if (!mark || !queue || !found) rc = AR_ENOMEM;
        for (int v = 0; rc == AR_OK && v < t->nnodes; v++) mark[v] = -1;
    }
    for (int pass = 0; rc == AR_OK && pass < 2; pass++) { /* count, then fill, the neighbours */
        for (int i = 0; i < g->nd; i++) {
            const int n = near_devices(t, ar_topo_rank_device(t, rep[i]), mark, pass * g->nd + i, queue, idx, found);
            if (!pass) {
                g->nfirst[i + 1] = g->nfirst[i] + n;
                continue;
            }
            int ascending = 1; /* (through one switch they come ascending already) */
            for (int x = 1; x < n && ascending; x++) ascending = found[x - 1] < found[x];
            if (!ascending) qsort(found, (size_t)n, sizeof *found, cmp_int); /* as a scan of every pair gave them */
            memcpy(g->nbr + g->nfirst[i], found, (size_t)n * sizeof *found);
        }
        if (!pass && !(g->nbr = malloc((size_t)(g->nfirst[g->nd] ? g->nfirst[g->nd] : 1) * sizeof *g->nbr)))
            rc = AR_ENOMEM;
    }
    AR_FREE_EACH(mark, queue, found);
    free(idx);
    free(rep);
    if (rc != AR_OK) rgraph_free(g);
    return rc;
}

int ar__bfs(const ar_topo_t *t, int src, int *dist, int *parent) {
    /* As a scan of every rank per popped rank would do it: each popped rank adopts every
     * rank adjacent to it not reached yet, in rank order. A device's ranks are all reached
     * at once, so each device is taken once; and a switch is walked through once: the
     * devices behind it are all taken by the first rank that reaches it (a switch of N
     * devices would otherwise be N^2 neighbours). */
    const int P = t->nranks, D = t->ndevices;
    rgraph_t g;
    int *idx = malloc((size_t)D * sizeof *idx), *rep = malloc((size_t)D * sizeof *rep);
    if (rgraph_ranks(&g, t, idx, rep) != AR_OK) {
        AR_FREE_EACH(idx, rep);
        return -2;
    }
    int *q = malloc((size_t)P * sizeof *q), *batch = malloc((size_t)P * sizeof *batch);
    int *walk = malloc((size_t)t->nnodes * sizeof *walk), *found = malloc((size_t)t->nnodes * sizeof *found);
    char *taken = calloc((size_t)g.nd, 1), *through = calloc((size_t)t->nnodes, 1);
    int ecc = 0, n = 0;
    if (!q || !batch || !walk || !found || !taken || !through) {
        n = -1;
        goto out;
    }
    for (int v = 0; v < P; v++) dist[v] = -1, parent[v] = -1;
    dist[src] = 0;
    q[n++] = src;
    for (int h = 0; h < n; h++) {
        const int u = q[h], home = ar_topo_rank_device(t, u);
        /* its own device, then the devices one link or a path through switches not walked
         * through yet away */
        int nf = 0, head = 0, tail = 0;
        found[nf++] = g.dev[u];
        walk[tail++] = home;
        while (head < tail) {
            const int x = walk[head++];
            for (int k = t->adj_start[x]; k < t->adj_start[x + 1]; k++) {
                const int v = t->adj_nbr[k];
                if (v >= D) {
                    if (!through[v]) through[v] = 1, walk[tail++] = v;
                } else if (idx[v] >= 0 && !taken[idx[v]]) {
                    found[nf++] = idx[v];
                }
            }
        }
        int nb = 0;
        for (int k = 0; k < nf; k++) {
            const int b = found[k];
            if (taken[b]) continue;
            taken[b] = 1;
            for (int j = g.rfirst[b]; j < g.rfirst[b + 1]; j++)
                if (dist[g.rank[j]] < 0) batch[nb++] = g.rank[j];
        }
        qsort(batch, (size_t)nb, sizeof *batch, cmp_int); /* in rank order, as the scan would find them */
        for (int x = 0; x < nb; x++) {
            const int v = batch[x];
            dist[v] = dist[u] + 1;
            parent[v] = u;
            if (dist[v] > ecc) ecc = dist[v];
            q[n++] = v;
        }
    }
out:
    AR_FREE_EACH(q, batch, walk, found, taken, through, idx, rep);
    rgraph_free(&g);
    return n == P ? ecc : -1;
}

int ar__center_rank(const ar_topo_t *t) {
    /* A rank's eccentricity is its device's over the other devices that hold ranks, or 1
     * when only its device's other ranks are there: one walk per device, not per rank. */
    const int P = t->nranks;
    /* every device holds ranks: the builders' geometry decides, before the rank graph (a
     * clique of devices squared on a switch) is built */
    char *held = calloc((size_t)t->ndevices, 1);
    if (!held) return -2;
    int nheld = 0;
    for (int r = 0; r < P; r++) {
        const int d = ar_topo_rank_device(t, r);
        nheld += !held[d];
        held[d] = 1;
    }
    free(held);
    if (nheld == t->ndevices && nheld > 1) {
        const int w = t->grid_w, h = t->grid_h;
        switch (t->kind) {
        case AR_TOPO_RING_1D: case AR_TOPO_TORUS_2D: case AR_TOPO_FULL: case AR_TOPO_SWITCH:
            return 0; /* every device alike: the lowest rank */
        case AR_TOPO_MESH_2D: {
            int root = 0, least = -1;
            for (int v = 0; v < P; v++) {
                const int d = ar_topo_rank_device(t, v), x = d % w, y = d / w;
                const int e = (x > w - 1 - x ? x : w - 1 - x) + (y > h - 1 - y ? y : h - 1 - y);
                if (least < 0 || e < least) least = e, root = v;
            }
            return root;
        }
        default: break;
        }
    }
    rgraph_t g;
    if (rgraph_init(&g, t) != AR_OK) return -2;
    int *dd = malloc((size_t)g.nd * sizeof *dd), *q = malloc((size_t)g.nd * sizeof *q),
        *ecc = malloc((size_t)g.nd * sizeof *ecc);
    int root = -2;
    if (!dd || !q || !ecc) goto out;
    for (int s = 0; s < g.nd; s++) {
        for (int i = 0; i < g.nd; i++) dd[i] = -1;
        int n = 0, e = 0;
        dd[s] = 0;
        q[n++] = s;
        for (int h = 0; h < n; h++)
            for (int k = g.nfirst[q[h]]; k < g.nfirst[q[h] + 1]; k++)
                if (dd[g.nbr[k]] < 0) {
                    dd[g.nbr[k]] = dd[q[h]] + 1;
                    if (dd[g.nbr[k]] > e) e = dd[g.nbr[k]];
                    q[n++] = g.nbr[k];
                }
        if (n < g.nd) {
            root = -1;
            goto out;
        }
        const int own = g.rfirst[s + 1] - g.rfirst[s] > 1; /* its device's other ranks: 1 hop */
        ecc[s] = e > own ? e : own;
    }
    root = 0;
    for (int v = 1; v < P; v++)
        if (ecc[g.dev[v]] < ecc[g.dev[root]]) root = v;
out:
    free(dd);
    free(q);
    free(ecc);
    rgraph_free(&g);
    return root;
}

int ar__snake_cycle(int W, int H, int *o) {
    int n = 0;
    if (W * H <= 2) {
        for (int i = 0; i < W * H; i++) o[i] = i;
        return 1;
    }
    /* Rows with an even row count (or, transposed, columns), else whichever way makes
     * the one jump (W - 1 or H - 1 hops, from the last row's end back to column 0)
     * shorter: a line (W or H of 1) is its own order, with the jump back closing it. */
    const int rows = H % 2 == 0 || (W % 2 && W <= H);
    if (rows) {
        /* row 0 left to right, rows 1..H-1 snake over columns 1..W-1, back up column 0 */
        for (int x = 0; x < W; x++) o[n++] = x;
        for (int y = 1; y < H; y++)
            for (int k = 0; k < W - 1; k++) o[n++] = y * W + (y % 2 ? W - 1 - k : 1 + k);
        for (int y = H - 1; y >= 1; y--) o[n++] = y * W;
    } else { /* the same, transposed */
        for (int y = 0; y < H; y++) o[n++] = y * W;
        for (int x = 1; x < W; x++)
            for (int k = 0; k < H - 1; k++) o[n++] = (x % 2 ? H - 1 - k : 1 + k) * W + x;
        for (int x = W - 1; x >= 1; x--) o[n++] = x;
    }
    return W >= 2 && H >= 2 && (rows ? H % 2 == 0 : W % 2 == 0);
}

static int ring_ok(const ar_topo_t *t, const int *o, int n) {
    for (int i = 0; i < n; i++)
        if (!ar_topo_rank_adjacent(t, o[i], o[(i + 1) % n])) return 0;
    return 1;
}

/* Depth-first search for a Hamiltonian cycle through rank 0, neighbours with fewest
 * free neighbours first (Warnsdorff), at most `budget` steps. Iterative: the depth is the
 * rank count, which no call stack should follow. cand[d * CAND ..] holds depth d's
 * candidates in the order tried, at[d] the next to try, n[d] their count. */
#define CAND 64
static int ham(const ar_topo_t *t, const char *adj, int *o, char *used, long budget) {
    const int P = t->nranks;
    int *cand = malloc((size_t)P * CAND * sizeof *cand), *at = calloc((size_t)P, sizeof *at),
        *n = calloc((size_t)P, sizeof *n);
    int found = 0, depth = 1;
    if (!cand || !at || !n) goto out;
    for (;;) {
        if (depth == P) {
            if (adj[(size_t)o[P - 1] * P + o[0]]) {
                found = 1;
                break;
            }
            depth--; /* the last rank does not close the cycle: back */
            used[o[depth]] = 0;
            continue;
        }
        if (at[depth] == 0 && n[depth] == 0) { /* first visit: this depth's candidates */
            if (--budget < 0) break;
            const int u = o[depth - 1];
            int *c = cand + (size_t)depth * CAND, deg[CAND], nc = 0;
            for (int v = 0; v < P && nc < CAND; v++)
                if (!used[v] && adj[(size_t)u * P + v]) {
                    int d = 0;
                    for (int w = 0; w < P; w++) d += !used[w] && adj[(size_t)v * P + w];
                    c[nc] = v;
                    deg[nc++] = d;
                }
            for (int x = 1; x < nc; x++)
                for (int y = x; y > 0 && deg[y] < deg[y - 1]; y--) {
                    int z = c[y]; c[y] = c[y - 1]; c[y - 1] = z;
                    z = deg[y]; deg[y] = deg[y - 1]; deg[y - 1] = z;
                }
            n[depth] = nc;
        } else if (at[depth] > 0) {
            used[o[depth]] = 0; /* the candidate tried last led nowhere */
        }
        if (at[depth] == n[depth]) { /* none left here: back */
            at[depth] = n[depth] = 0;
            if (--depth == 0) break;
            continue;
        }
        o[depth] = cand[(size_t)depth * CAND + at[depth]++];
        used[o[depth]] = 1;
        depth++;
    }
out:
    free(cand);
    free(at);
    free(n);
    return found;
}

/* Ranks device by device along a cycle of the devices (the snake of a grid, else their
 * order), a device's ranks in rank order: a ring of neighbours whenever that device
 * cycle is one, whatever the ranks per device. 1 when it is a ring, 0 when it is not
 * (o holds it all the same: a grid's snake jumps once), AR_ENOMEM. */
static int device_ring(const ar_topo_t *t, int *o) {
    const int P = t->nranks, D = t->ndevices;
    int *dev = malloc((size_t)D * sizeof *dev), *first = calloc((size_t)D + 1, sizeof *first);
    int ok = AR_ENOMEM;
    if (!dev || !first) goto out;
    if (t->grid_w > 0 && t->grid_h > 0 && t->grid_w * t->grid_h == D) {
        ar__snake_cycle(t->grid_w, t->grid_h, dev);
    } else {
        for (int d = 0; d < D; d++) dev[d] = d;
    }
    /* counting sort of the ranks by device, then out in the cycle's order */
    for (int r = 0; r < P; r++) first[t->placement[r] + 1]++;
    for (int d = 0; d < D; d++) first[d + 1] += first[d];
    int *by_dev = malloc((size_t)P * sizeof *by_dev), *next = malloc((size_t)D * sizeof *next);
    if (!by_dev || !next) {
        free(by_dev);
        free(next);
        goto out;
    }
    memcpy(next, first, (size_t)D * sizeof *next);
    for (int r = 0; r < P; r++) by_dev[next[t->placement[r]]++] = r;
    int k = 0;
    for (int i = 0; i < D; i++)
        for (int j = first[dev[i]]; j < first[dev[i] + 1]; j++) o[k++] = by_dev[j];
    ok = ring_ok(t, o, P);
    free(by_dev);
    free(next);
out:
    free(dev);
    free(first);
    return ok;
}

/* The search over every pair keeps a P x P table: beyond this many ranks it is not tried. */
#define HAM_MAX_RANKS 4096

int ar__find_ring(const ar_topo_t *t, int *o) {
    int P = t->nranks, adjacent = 1;
    for (int i = 0; i < P; i++) o[i] = i;
    for (int i = 0; i < P && adjacent; i++) adjacent = ar_topo_rank_adjacent(t, i, (i + 1) % P);
    if (adjacent) return 1;
    /* the devices' cycle (a grid's snake), their ranks side by side */
    const int dr = device_ring(t, o);
    if (dr != 0) return dr;
    const int odd_mesh = t->kind == AR_TOPO_MESH_2D && t->grid_w * t->grid_h == P && (P % 2); /* bipartite, odd: none */
    if (odd_mesh || P > HAM_MAX_RANKS) return 0;
    char *adj = malloc((size_t)P * P), *used = calloc((size_t)P, 1);
    int *found_o = malloc((size_t)P * sizeof *found_o);
    if (!adj || !used || !found_o) {
        AR_FREE_EACH(adj, used, found_o);
        return AR_ENOMEM;
    }
    for (int a = 0; a < P; a++)
        for (int b = 0; b < P; b++) adj[(size_t)a * P + b] = a != b && ar_topo_rank_adjacent(t, a, b);
    found_o[0] = 0;
    used[0] = 1;
    int found = ham(t, adj, found_o, used, 200000);
    if (found) memcpy(o, found_o, (size_t)P * sizeof *o); /* else o keeps the devices' order */
    AR_FREE_EACH(adj, used, found_o);
    return found;
}

int ar__ring_translates(const ar_topo_t *t, const int *ord) {
    const int P = t->nranks, step = ar_topo_translate(t, 0, ord[0], ord[1]);
    for (int i = 1; i < P; i++)
        if (ar_topo_translate(t, 0, ord[i], ord[(i + 1) % P]) != step) return 0;
    return 1;
}

/* The topology's own grid when it is one with a rank on every device: rank_at filled
 * from the placement. 0 otherwise. */
static int own_grid(const ar_topo_t *t, int *rank_at) {
    const int P = t->nranks;
    if ((t->kind != AR_TOPO_TORUS_2D && t->kind != AR_TOPO_MESH_2D) || P != t->grid_w * t->grid_h) return 0;
    for (int r = 0; r < P; r++) rank_at[r] = -1;
    for (int r = 0; r < P; r++) {
        const int d = t->placement[r];
        if (d < 0 || d >= P || rank_at[d] >= 0) return 0;
        rank_at[d] = r;
    }
    return 1;
}

int ar__grid(const char *algo, const ar_topo_t *t, const ar_algo_opts_t *o, int *W, int *H, int *rank_at,
             ar_error_t *err) {
    int P = t->nranks;
    int w = 0, h = 0;
    if (own_grid(t, rank_at)) {
        w = t->grid_w;
        h = t->grid_h;
    } else {
        if (o && o->grid_w > 0 && o->grid_h > 0) {
            w = o->grid_w;
            h = o->grid_h;
            if (w * h != P)
                return AR_ERR(err, AR_EUNFIT, "%s: grid %dx%d does not hold the %d ranks of %s", algo,
                              w, h, P, t->name);
        } else {
            for (h = (int)sqrt((double)P); h > 1 && P % h; h--) {
            }
            if (h < 1) h = 1;
            w = P / h;
        }
        for (int r = 0; r < P; r++) rank_at[r] = r;
    }
    *W = w;
    *H = h;
    return AR_OK;
}

int ar__plan_new(const ar_algo_opts_t *o, const char *algo, int nranks, int nchannels, uint64_t count,
                 ar_dtype_t dtype, ar_plan_t **out) {
    AR_TRY(ar_plan_new(algo, nranks, nchannels, count, dtype, out));
    if (o) (*out)->coll = o->coll;
    if (o && o->one_rank) ar_plan_only_rank(*out, o->one_rank - 1, o->one_span);
    if (o && o->sizing) ar_plan_sizing(*out, o->sizing);
    else if (o && o->layout) {
        const int rc = ar_plan_layout(*out, o->layout);
        if (rc != AR_OK) {
            ar_plan_free(*out);
            *out = NULL;
            return rc;
        }
    }
    return AR_OK;
}

int ar__plan_fits(const ar_algo_opts_t *o, const char *algo, int nranks, uint64_t srcs, ar_error_t *err) {
    if (o && o->one_rank && nranks > 0) /* a plan of one rank or a row holds those ranks' */
        srcs = srcs / (uint64_t)nranks * (uint64_t)(o->one_span > 1 ? o->one_span : 1);
    if (srcs <= AR_PLAN_MAX_SRCS) return AR_OK;
    return AR_ERR(err, AR_ELIMIT,
                  "%s: %d ranks need at least %llu source addresses here, more than a plan may hold (%u): "
                  "fewer ranks, a larger --chunk, or an algorithm whose plan grows slower with the ranks",
                  algo, nranks, (unsigned long long)srcs, (unsigned)AR_PLAN_MAX_SRCS);
}

int ar__signal_each_copy(uint64_t copy_bytes) { return copy_bytes > AR__SIGNAL_BATCH_MAX_BYTES; }

ar__peers_t ar__peers(const ar_topo_t *t) {
    ar__peers_t g = {t->nranks, t->nranks};
    if (t->kind == AR_TOPO_TORUS_2D && ar_topo_translatable(t, 0)) g.W = t->grid_w;
    return g;
}

int ar__peer_at(ar__peers_t g, int r, int d) { return ar_grid_add(g.P, g.W, r, d); }

int ar__peer_offset(ar__peers_t g, int from, int to) { return ar_grid_sub(g.P, g.W, from, to); }

int ar__peer(ar__peers_t g, int r, int c, int k) { return g.P < 2 ? r : ar__peer_at(g, r, 1 + (k - 1 + c) % (g.P - 1)); }

int ar__peer_period(const ar_topo_t *t) { return t->nranks > 2 ? t->nranks - 1 : 1; }

int ar__signal_peers(ar_plan_t *p, int r, int c, uint32_t flag) {
    for (int k = 1; k < p->nranks; k++) AR_TRY(ar_plan_signal(p, r, c, (r + k) % p->nranks, flag));
    return AR_OK;
}

/* e elements rounded up to whole lines, as ar__split cuts: each chunk of a lane then starts
 * where its first did */
static uint64_t lines_up(uint64_t e) { return (e + AR__SPLIT_LINE - 1) / AR__SPLIT_LINE * AR__SPLIT_LINE; }

void ar__pipe_lane(const ar_algo_opts_t *o, uint64_t count, ar_dtype_t dt, int lanes, int c,
                   uint64_t *lo, uint64_t *len, uint64_t *chunk, uint64_t *nchunks) {
    ar__split(0, count, lanes, c, lo, len);
    const uint64_t es = ar_dtype_size(dt);
    /* Every lane pipelined alike, from the mean lane: lanes cut on lines differ by a line, and
     * the pipelining threshold between them would leave one lane whole and chunk the others
     * (16777259 elements on 16 lanes: 1048555 to 1048640 elements, the last just under 2 MB) */
    const uint64_t mean = lanes > 0 ? count / (uint64_t)lanes : count;
    if (o && o->chunk_bytes) {
        *chunk = o->chunk_bytes / es ? o->chunk_bytes / es : 1; /* the chunk asked */
    } else if (mean * es < AR__PIPE_MIN_BYTES) {
        /* One piece while a lane is small: every chunk costs a SIGNAL, whose release waits
         * until the chunk's remote stores have landed, and a WAIT; on 2 x H200 32 KB chunks
         * made 32-64 MB 10-15% slower than one piece, while 2 MB lanes in 16 chunks made
         * 256 MB 5% faster. */
        *chunk = *len ? *len : 1;
    } else {
        /* From 2 MB a lane about 16 steps of 128 KB to 512 KB, so the last chunk's reduction,
         * which nothing overlaps, is short: the mean lane's number of such steps, this lane
         * cut into as many on lines (a lane a line longer takes no extra chunk of one line). */
        uint64_t step = mean * es / 16;
        if (step < 128 * 1024) step = 128 * 1024;
        if (step > 512 * 1024) step = 512 * 1024;
        step = lines_up(step / es);
        uint64_t n = (mean + step / 2) / step;
        if (n == 0) n = 1;
        const uint64_t c = lines_up((*len + n - 1) / n);
        *chunk = c ? c : 1;
    }
    *nchunks = *len ? (*len + *chunk - 1) / *chunk : 0;
}

uint64_t ar__piece_len(uint64_t len, uint64_t chunk, uint64_t i) {
    return len - i * chunk < chunk ? len - i * chunk : chunk;
}

uint32_t ar__peer_flag(ar__peers_t g, uint32_t base, int from, int to) {
    return base + (uint32_t)ar__peer_offset(g, from, to);
}

int ar__signal_peer_flags(ar_plan_t *p, ar__peers_t g, int r, int c, uint32_t base) {
    for (int k = 1; k < g.P; k++) {
        const int q = ar__peer_at(g, r, k);
        AR_TRY(ar_plan_signal(p, r, c, q, ar__peer_flag(g, base, r, q)));
    }
    return AR_OK;
}

int ar__wait_peer_flags(ar_plan_t *p, ar__peers_t g, int r, int c, uint32_t base, uint64_t count, int prev) {
    for (int k = 1; k < g.P; k++) {
        const uint32_t f = ar__peer_flag(g, base, ar__peer_at(g, r, k), r);
        AR_TRY(prev ? ar_plan_wait_prev(p, r, c, f) : ar_plan_wait(p, r, c, f, count));
    }
    return AR_OK;
}

int ar__reduce_peers(ar_plan_t *p, ar__peers_t g, int r, int c, ar_addr_t (*slot)(int, ar_buf_t, uint64_t),
                     uint64_t stride, uint64_t at, uint64_t off, uint64_t n, uint32_t fbase, uint64_t nwait,
                     ar_addr_t *sv) {
    int P = p->nranks;
    AR_TRY(ar__wait_peer_flags(p, g, r, c, fbase, nwait, 0));
    int k = 0;
    sv[k++] = ar_addr(r, AR_BUF_IN, off);
    for (int q = 0; q < P; q++)
        if (q != r) sv[k++] = slot(r, AR_BUF_SCRATCH, (uint64_t)q * stride + at);
    return ar_plan_reduce(p, r, c, ar_addr(r, AR_BUF_OUT, off), sv, (uint32_t)k, n);
}

int ar__plan_done(ar_plan_t *p, int rc, const char *algo, ar_plan_t **out, ar_error_t *err) {
    if (rc == AR_OK) rc = ar_plan_finish(p);
    if (rc == AR_ELIMIT && p->limit) {
        const int n = p->nranks, ch = p->nchannels;
        const char *what = p->limit;
        const unsigned long long most = (unsigned long long)p->limit_most;
        ar_plan_free(p);
        return AR_ERR(err, rc,
                      "%s on %d ranks, %d channels: the plan needs more than %llu %s, a plan's most: fewer ranks "
                      "or --channels, a larger --chunk, or an algorithm whose plan grows slower with the ranks",
                      algo, n, ch, most, what);
    }
    if (rc != AR_OK) {
        ar_plan_free(p);
        return AR_ERR(err, rc, "%s: cannot build the plan: %s", algo, ar_plan_strerror(rc));
    }
    *out = p;
    return AR_OK;
}
