/* The plan verifier: symbolic execution of a plan (see arsim/plan.h).
 *
 * Values. Every element of OUT, SCRATCH and HOST holds either nothing
 * (poison) or a symbolic value: the element index j it belongs to and a vector
 * of contribution counts, one per (execution, rank), i.e. how many times
 * IN[j] of that rank in that execution was summed into it. Reading IN yields
 * the unit vector of (current execution, rank). Buffers are kept as sorted
 * lists of segments with one value per segment (element index affine in the
 * position), so cost grows with the number of ops, not elements.
 *
 * Schedule. Flags only grow, so a greedy execution that gets stuck is stuck
 * under every schedule: running every channel as far as it goes, again and
 * again, proves that every WAIT is satisfied or finds the deadlock.
 *
 * Ordering. Each channel carries a vector clock; a SIGNAL snapshots the
 * sender's clock, a WAIT joins the snapshots it is guaranteed to follow. A
 * WAIT for cumulative count C on a flag fed by several channels is only
 * guaranteed to follow sender X's (C - others)-th signal, where others is the
 * most the other senders can have sent by then: (e + 1) * (total - m_X) in
 * execution e, with m_X X's signals per execution and total their sum. That
 * bound is an assumption (no sender runs an execution ahead) and is checked
 * afterwards: sender Y's first signal of the next execution must come after
 * the WAIT. Each buffer segment remembers its last write and the reads since
 * (FastTrack); an access not ordered after them is a race. With no races the
 * final values do not depend on the schedule, so the one greedy schedule
 * tells what every schedule computes.
 *
 * Executions. Backends run the plan again and again with no barrier between
 * executions (flags count across executions), so three executions are run back
 * to back, the later ones' WAITs offset by per_epoch (less one execution for a
 * WAIT with back 1), and checked for races across the boundaries and for the
 * contributions at the end of each. Three, so that executions e and e + 2 meet
 * in the same slot of an epoch-parity address (AR_ADDR_PARITY): every address is
 * taken at its execution's parity before it is read or written. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arsim/plan.h"
#include "arsim/util.h"

#define NONE UINT32_MAX
#define NEPOCH 3
/* Snapshot memory above which the plan is declared too large to verify. */
#define MAX_SNAP_BYTES ((size_t)1 << 30)

typedef struct acc_s {
    uint32_t ch, clk;
} acc_t;

typedef struct seg_s {
    uint64_t start;
    int64_t base;       /* element index at start (vec != 0) */
    uint32_t vec;       /* interned contribution vector; 0 = no value */
    uint32_t wch, wclk; /* last write (NONE when never written) */
    uint32_t rset, rlen; /* reads since the last write, in the read arena */
} seg_t;

/* A buffer's segments in order, held in blocks of at most SEG_BLOCK: a split or a merge
 * moves at most one block's segments, so an access costs the same in a buffer cut into a
 * few segments and in one cut into 100000 (16-byte chunks of a large plan). */
#define SEG_BLOCK 64

typedef struct blk_s {
    uint32_t n, cap;
    seg_t s[];
} blk_t;

typedef struct space_s {
    blk_t **b;
    uint64_t *first; /* each block's first start, searched without touching the blocks */
    uint32_t nb;
    size_t capb, capf;
    uint64_t size;
} space_t;

typedef struct cur_s { /* a segment: the j-th of block b; b == nb past the last */
    uint32_t b, j;
} cur_t;

typedef struct piece_s {
    uint64_t len;
    int64_t base;
    uint32_t vec;
} piece_t;

typedef struct sender_s {
    uint32_t flag;   /* the target rank's flag's counter (ar_plan_flag) */
    uint32_t ch;     /* sending channel */
    uint64_t m;      /* signals per execution */
    uint64_t sent;   /* cumulative */
    size_t snap0;    /* first snapshot slot */
} sender_t;

typedef struct xcheck_s {  /* a WAIT whose guarantee relied on the bound */
    uint32_t ch, clk, flag;
    uint32_t only;  /* the one sender it acquired from, or NONE for several */
} xcheck_t;

typedef struct vs_s {
    const ar_plan_t *p;
    ar_error_t *err;
    int P, nch;
    size_t V;  /* vector length: NEPOCH * P */
    /* interned vectors */
    uint8_t *vecs;
    uint32_t nvec, capvec;
    uint32_t *htab;
    uint32_t hcap;
    uint32_t *unit; /* [epoch * P + rank] */
    /* read sets */
    acc_t *ra;
    size_t nra, capra;
    /* buffers: OUT r -> 2r, SCRATCH r -> 2r+1, HOST -> 2P */
    space_t *sp;
    int nsp;
    /* channels */
    uint32_t *vc; /* nch * nch */
    uint32_t *pc;
    /* flags */
    uint64_t *arrived;
    sender_t *snd;
    uint32_t nsnd;
    uint32_t *flag_first, *flag_n; /* senders of each flag, contiguous in snd */
    uint32_t *op_sender;           /* SIGNAL op -> sender index */
    uint32_t *snap;
    xcheck_t *xc;
    size_t nxc, capxc;
    /* scratch lists */
    piece_t *pc_src[2], *pc_out;
    size_t cap_src[2], cap_out;
    piece_t **red;       /* per source pieces for REDUCE */
    size_t *red_n, *red_cap;
} vs_t;

static const char *const buf_names[] = {"IN", "OUT", "SCRATCH"};

/* ---------- messages ---------- */

static const char *fmt_addr(char *b, size_t len, ar_addr_t a, uint64_t n) {
    if (a.rank == AR_RANK_HOST)
        snprintf(b, len, "host[%" PRIu64 "..%" PRIu64 ")", a.off, a.off + n);
    else
        snprintf(b, len, "r%d.%s[%" PRIu64 "..%" PRIu64 ")", (int)a.rank,
                 a.buf < AR_NBUF ? buf_names[a.buf] : "?", a.off, a.off + n);
    return b;
}

static const char *fmt_elem(char *b, size_t len, int space, int P, uint64_t e) {
    if (space == 2 * P)
        snprintf(b, len, "host[%" PRIu64 "]", e);
    else
        snprintf(b, len, "r%d.%s[%" PRIu64 "]", space / 2, space % 2 ? "SCRATCH" : "OUT", e);
    return b;
}

/* "rank R chan C op I (NAME)" of a channel and op index. */
static const char *fmt_op(const vs_t *v, char *b, size_t len, uint32_t ch, uint32_t i) {
    const ar_plan_t *p = v->p;
    const ar_chan_t *c = &p->chans[ch];
    const char *name = i < c->nops ? ar_op_name(p->ops[c->first + i].code) : "?";
    snprintf(b, len, "rank %u chan %u op %u (%s)", ch / (uint32_t)p->nchannels,
             ch % (uint32_t)p->nchannels, i, name);
    return b;
}

/* The op behind an access (channel, clock), with its execution when it differs. */
static const char *fmt_acc(const vs_t *v, char *b, size_t len, uint32_t ch, uint32_t clk) {
    uint32_t n = v->p->chans[ch].nops;
    char o[96];
    uint32_t e = (clk - 1) / n, i = (clk - 1) % n;
    fmt_op(v, o, sizeof o, ch, i);
    snprintf(b, len, "%s of execution %u", o, e + 1);
    return b;
}

/* ---------- vectors ---------- */

static uint32_t vhash(const uint8_t *x, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ x[i]) * 16777619u;
    return h;
}

static int vec_rehash(vs_t *v) {
    uint32_t nc = v->hcap ? v->hcap * 2 : 1024;
    uint32_t *t = malloc((size_t)nc * sizeof *t);
    if (!t) return AR_ENOMEM;
    memset(t, 0xff, (size_t)nc * sizeof *t);
    for (uint32_t id = 1; id < v->nvec; id++) {
        uint32_t h = vhash(v->vecs + (size_t)id * v->V, v->V) & (nc - 1);
        while (t[h] != NONE) h = (h + 1) & (nc - 1);
        t[h] = id;
    }
    free(v->htab);
    v->htab = t;
    v->hcap = nc;
    return AR_OK;
}

/* Intern x (V bytes); *id receives its id (never 0). */
static int vec_intern(vs_t *v, const uint8_t *x, uint32_t *id) {
    if ((v->nvec + 1) * 2 > v->hcap) AR_TRY(vec_rehash(v));
    uint32_t h = vhash(x, v->V) & (v->hcap - 1);
    while (v->htab[h] != NONE) {
        if (!memcmp(v->vecs + (size_t)v->htab[h] * v->V, x, v->V)) {
            *id = v->htab[h];
            return AR_OK;
        }
        h = (h + 1) & (v->hcap - 1);
    }
    if (v->nvec == v->capvec) {
        uint32_t nc = v->capvec * 2;
        uint8_t *nv = realloc(v->vecs, (size_t)nc * v->V);
        if (!nv) return AR_ENOMEM;
        v->vecs = nv;
        v->capvec = nc;
    }
    memcpy(v->vecs + (size_t)v->nvec * v->V, x, v->V);
    v->htab[h] = v->nvec;
    *id = v->nvec++;
    return AR_OK;
}

/* ---------- segments ---------- */

static blk_t *blk_new(uint32_t cap) {
    blk_t *k = malloc(sizeof *k + cap * sizeof k->s[0]);
    if (k) {
        k->n = 0;
        k->cap = cap;
    }
    return k;
}

/* Block k, holding at least one segment, enters as the at-th. */
static int blk_insert(space_t *s, uint32_t at, blk_t *k) {
    if (ar_grow(&s->b, &s->capb, s->nb, sizeof *s->b) != AR_OK ||
        ar_grow(&s->first, &s->capf, s->nb, sizeof *s->first) != AR_OK) {
        free(k);
        return AR_ENOMEM;
    }
    memmove(s->b + at + 1, s->b + at, (s->nb - at) * sizeof *s->b);
    memmove(s->first + at + 1, s->first + at, (s->nb - at) * sizeof *s->first);
    s->b[at] = k;
    s->first[at] = k->s[0].start;
    s->nb++;
    return AR_OK;
}

static int space_init(space_t *s, uint64_t size) {
    *s = (space_t){.size = size};
    if (!size) return AR_OK;
    blk_t *k = blk_new(4);
    if (!k) return AR_ENOMEM;
    k->s[k->n++] = (seg_t){0, 0, 0, NONE, 0, 0, 0};
    return blk_insert(s, 0, k);
}

static void space_free(space_t *s) {
    for (uint32_t k = 0; k < s->nb; k++) free(s->b[k]);
    free(s->b);
    free(s->first);
}

static seg_t *seg_at(const space_t *s, cur_t c) {
    return &s->b[c.b]->s[c.j];
}

static int cur_valid(const space_t *s, cur_t c) {
    return c.b < s->nb;
}

static cur_t cur_first(void) {
    return (cur_t){0, 0};
}

static cur_t cur_next(const space_t *s, cur_t c) {
    return ++c.j < s->b[c.b]->n ? c : (cur_t){c.b + 1, 0};
}

/* The segment before c; 0 when c is the first. */
static int cur_prev(const space_t *s, cur_t *c) {
    if (c->j) c->j--;
    else if (c->b) *c = (cur_t){c->b - 1, s->b[c->b - 1]->n - 1};
    else return 0;
    return 1;
}

static uint64_t seg_end(const space_t *s, cur_t c) {
    c = cur_next(s, c);
    return cur_valid(s, c) ? seg_at(s, c)->start : s->size;
}

/* The segment holding element x < size. */
static cur_t space_find(const space_t *s, uint64_t x) {
    uint32_t lo = 0, hi = s->nb; /* last block starting at or before x */
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (s->first[mid] <= x) lo = mid;
        else hi = mid;
    }
    const blk_t *k = s->b[lo];
    uint32_t l = 0, h = k->n;
    while (h - l > 1) {
        uint32_t mid = (l + h) / 2;
        if (k->s[mid].start <= x) l = mid;
        else h = mid;
    }
    return (cur_t){lo, l};
}

/* Replace the segment at c with g. */
static void seg_set(space_t *s, cur_t c, seg_t g) {
    s->b[c.b]->s[c.j] = g;
    if (!c.j) s->first[c.b] = g.start;
}

/* Insert g before c (c past the last: at the end); *c becomes the new segment. A full block
 * is halved, which moves block pointers, so cursors other than *c are stale afterwards. */
static int seg_insert(space_t *s, cur_t *c, seg_t g) {
    if (!cur_valid(s, *c)) {
        if (!s->nb) { /* a space of size 0 holds no block; a write there is out of bounds */
            blk_t *k = blk_new(4);
            if (!k) return AR_ENOMEM;
            k->s[k->n++] = g;
            *c = (cur_t){0, 0};
            return blk_insert(s, 0, k);
        }
        *c = (cur_t){s->nb - 1, s->b[s->nb - 1]->n};
    }
    blk_t *k = s->b[c->b];
    if (k->n == SEG_BLOCK) {
        blk_t *hi = blk_new(SEG_BLOCK);
        if (!hi) return AR_ENOMEM;
        const uint32_t half = k->n / 2;
        hi->n = k->n - half;
        memcpy(hi->s, k->s + half, hi->n * sizeof k->s[0]);
        k->n = half;
        AR_TRY(blk_insert(s, c->b + 1, hi));
        if (c->j > half) *c = (cur_t){c->b + 1, c->j - half};
        k = s->b[c->b];
    }
    if (k->n == k->cap) {
        uint32_t nc = 2 * k->cap < SEG_BLOCK ? 2 * k->cap : SEG_BLOCK;
        blk_t *nk = realloc(k, sizeof *nk + nc * sizeof nk->s[0]);
        if (!nk) return AR_ENOMEM;
        nk->cap = nc;
        s->b[c->b] = k = nk;
    }
    memmove(k->s + c->j + 1, k->s + c->j, (k->n - c->j) * sizeof k->s[0]);
    k->n++;
    seg_set(s, *c, g);
    return AR_OK;
}

/* Remove the segment at c; c then holds the one after it. */
static cur_t seg_remove(space_t *s, cur_t c) {
    blk_t *k = s->b[c.b];
    memmove(k->s + c.j, k->s + c.j + 1, (k->n - c.j - 1) * sizeof k->s[0]);
    if (--k->n) {
        s->first[c.b] = k->s[0].start;
        return c.j < k->n ? c : (cur_t){c.b + 1, 0};
    }
    free(k);
    memmove(s->b + c.b, s->b + c.b + 1, (s->nb - c.b - 1) * sizeof *s->b);
    memmove(s->first + c.b, s->first + c.b + 1, (s->nb - c.b - 1) * sizeof *s->first);
    s->nb--;
    return (cur_t){c.b, 0};
}

/* The segment that starts at x, splitting one if needed; past the last for x == size. */
static int space_split(space_t *s, uint64_t x, cur_t *at) {
    if (x >= s->size) {
        *at = (cur_t){s->nb, 0};
        return AR_OK;
    }
    cur_t c = space_find(s, x);
    seg_t t = *seg_at(s, c);
    if (t.start != x) {
        if (t.vec) t.base += (int64_t)(x - t.start);
        t.start = x;
        c.j++;
        AR_TRY(seg_insert(s, &c, t));
    }
    *at = c;
    return AR_OK;
}

/* Split at x0 and x1; *c0 is then the segment starting at x0. */
static int space_split2(space_t *s, uint64_t x0, uint64_t x1, cur_t *c0) {
    cur_t c1;
    AR_TRY(space_split(s, x1, &c1));
    return space_split(s, x0, c0); /* last: a split may halve a block under c1 */
}

static int seg_mergeable(const seg_t *a, const seg_t *b) {
    if (a->vec != b->vec || a->wch != b->wch || a->wclk != b->wclk || a->rlen != b->rlen) return 0;
    if (a->rlen && a->rset != b->rset) return 0;
    return !a->vec || a->base + (int64_t)(b->start - a->start) == b->base;
}

/* Merge equal neighbours from the segment before the one holding x0 to the first one
 * starting after x1. */
static void space_compact(space_t *s, uint64_t x0, uint64_t x1) {
    if (x0 >= s->size) return;
    cur_t w = space_find(s, x0);
    cur_prev(s, &w);
    for (;;) {
        cur_t i = cur_next(s, w);
        if (!cur_valid(s, i)) return;
        const int last = seg_at(s, i)->start > x1;
        if (seg_mergeable(seg_at(s, w), seg_at(s, i))) seg_remove(s, i); /* w stays: it is before i */
        else w = i;
        if (last) return;
    }
}

/* ---------- accesses ---------- */

static inline int hb(const vs_t *v, uint32_t ch, acc_t a) {
    return a.ch == ch || a.clk <= v->vc[(size_t)ch * v->nch + a.ch];
}

/* What an unordered access a is to one of execution e: a race within e, or with a
 * neighbouring execution. */
static const char *race_kind(const vs_t *v, acc_t a, int e) {
    return (a.clk - 1) / v->p->chans[a.ch].nops != (uint32_t)e ? "race between executions" : "race";
}

static int space_of(const vs_t *v, ar_addr_t a) {
    return a.rank == AR_RANK_HOST ? 2 * v->P : 2 * a.rank + (a.buf == AR_BUF_SCRATCH);
}

static int push_piece(piece_t **arr, size_t *n, size_t *cap, piece_t x) {
    if (*n && (*arr)[*n - 1].vec == x.vec && x.vec &&
        (*arr)[*n - 1].base + (int64_t)(*arr)[*n - 1].len == x.base) {
        (*arr)[*n - 1].len += x.len;
        return AR_OK;
    }
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        piece_t *na = realloc(*arr, nc * sizeof *na);
        if (!na) return AR_ENOMEM;
        *arr = na;
        *cap = nc;
    }
    (*arr)[(*n)++] = x;
    return AR_OK;
}

static int ra_reserve(vs_t *v, size_t k) {
    if (v->nra + k <= v->capra) return AR_OK;
    size_t nc = v->capra ? v->capra : 1024;
    while (nc < v->nra + k) nc *= 2;
    acc_t *na = realloc(v->ra, nc * sizeof *na);
    if (!na) return AR_ENOMEM;
    v->ra = na;
    v->capra = nc;
    return AR_OK;
}

/* Read [a.off, a.off+n) by channel ch at execution e: race check against the last
 * write, no poison, record the read; pieces appended to out. */
static int do_read(vs_t *v, uint32_t ch, int e, uint32_t op_i, int srci, ar_addr_t a, uint64_t n,
                   piece_t **out, size_t *nout, size_t *capout) {
    char b1[96], b2[128], b3[64];
    if (a.rank != AR_RANK_HOST && a.buf == AR_BUF_IN) {
        uint64_t lo = 0, len = ar_plan_buf_elems(v->p, a.rank, AR_BUF_IN);
        const uint64_t a_elems = v->p->gemm.m * v->p->gemm.k;
        if (v->p->coll == AR_COLL_ALLGATHER) ar_coll_shard(v->p->count, v->P, a.rank, &lo, &len);
        /* all-gather + matmul: the rank's rows of A, or its B */
        if (v->p->coll == AR_COLL_ALLGATHER_MATMUL && a.off < a_elems) ar_coll_shard(a_elems, v->P, a.rank, &lo, &len);
        if (a.off < lo || a.off + n > lo + len)
            return AR_ERR(v->err, AR_EPLAN,
                          "%s of execution %d reads IN[%" PRIu64 "..%" PRIu64 ") of rank %d (source %d), "
                          "outside its shard [%" PRIu64 "..%" PRIu64 "): an allgather's input is only its shard",
                          fmt_op(v, b1, sizeof b1, ch, op_i), e + 1, a.off, a.off + n, a.rank, srci, lo, lo + len);
        piece_t x = {n, (int64_t)a.off, v->unit[e * v->P + a.rank]};
        return push_piece(out, nout, capout, x);
    }
    int si = space_of(v, a);
    space_t *s = &v->sp[si];
    const uint64_t end = a.off + n;
    cur_t i;
    AR_TRY(space_split2(s, a.off, end, &i));
    uint32_t clk = v->vc[(size_t)ch * v->nch + ch];
    uint32_t single = NONE; /* read set holding only this read, made on first use */
    for (; cur_valid(s, i) && seg_at(s, i)->start < end; i = cur_next(s, i)) {
        seg_t *g = seg_at(s, i);
        if (g->wch != NONE && !hb(v, ch, (acc_t){g->wch, g->wclk})) {
            const char *kind = race_kind(v, (acc_t){g->wch, g->wclk}, e);
            return AR_ERR(v->err, AR_EPLAN,
                          "%s: %s of execution %d reads %s (source %d), written by %s with no "
                          "SIGNAL/WAIT ordering them",
                          kind, fmt_op(v, b1, sizeof b1, ch, op_i), e + 1,
                          fmt_elem(b3, sizeof b3, si, v->P, g->start), srci,
                          fmt_acc(v, b2, sizeof b2, g->wch, g->wclk));
        }
        if (!g->vec)
            return AR_ERR(v->err, AR_EPLAN,
                          "%s of execution %d reads %s (source %d), which holds no value yet",
                          fmt_op(v, b1, sizeof b1, ch, op_i), e + 1,
                          fmt_elem(b3, sizeof b3, si, v->P, g->start), srci);
        piece_t x = {seg_end(s, i) - g->start, g->base, g->vec};
        AR_TRY(push_piece(out, nout, capout, x));
        /* new read set: the old reads not ordered before this one, plus this one */
        uint32_t keep = 0;
        for (uint32_t r = 0; r < g->rlen; r++)
            if (!hb(v, ch, v->ra[g->rset + r])) keep++;
        if (!keep) {
            if (single == NONE) {
                AR_TRY(ra_reserve(v, 1));
                single = (uint32_t)v->nra;
                v->ra[v->nra++] = (acc_t){ch, clk};
            }
            g->rset = single;
            g->rlen = 1;
            continue;
        }
        AR_TRY(ra_reserve(v, keep + 1));
        uint32_t at = (uint32_t)v->nra;
        for (uint32_t r = 0; r < g->rlen; r++)
            if (!hb(v, ch, v->ra[g->rset + r])) v->ra[v->nra++] = v->ra[g->rset + r];
        v->ra[v->nra++] = (acc_t){ch, clk};
        g->rset = at;
        g->rlen = keep + 1;
    }
    space_compact(s, a.off, end);
    return AR_OK;
}

/* Write pieces over [a.off, a.off + total) by channel ch: race check against the last
 * write and the reads since, then replace. */
static int do_write(vs_t *v, uint32_t ch, int e, uint32_t op_i, ar_addr_t a, const piece_t *pcs,
                    size_t npcs) {
    char b1[96], b2[128], b3[64];
    int si = space_of(v, a);
    space_t *s = &v->sp[si];
    uint64_t n = 0;
    for (size_t k = 0; k < npcs; k++) n += pcs[k].len;
    const uint64_t end = a.off + n;
    cur_t c0;
    AR_TRY(space_split2(s, a.off, end, &c0));
    uint32_t clk = v->vc[(size_t)ch * v->nch + ch];
    for (cur_t i = c0; cur_valid(s, i) && seg_at(s, i)->start < end; i = cur_next(s, i)) {
        const seg_t *g = seg_at(s, i);
        acc_t other = {NONE, 0};
        const char *what = NULL;
        if (g->wch != NONE && !hb(v, ch, (acc_t){g->wch, g->wclk})) {
            other = (acc_t){g->wch, g->wclk};
            what = "written";
        }
        for (uint32_t r = 0; !what && r < g->rlen; r++)
            if (!hb(v, ch, v->ra[g->rset + r])) {
                other = v->ra[g->rset + r];
                what = "read";
            }
        if (what) {
            const char *kind = race_kind(v, other, e);
            return AR_ERR(v->err, AR_EPLAN,
                          "%s: %s of execution %d writes %s, %s by %s with no SIGNAL/WAIT "
                          "ordering them",
                          kind, fmt_op(v, b1, sizeof b1, ch, op_i), e + 1,
                          fmt_elem(b3, sizeof b3, si, v->P, g->start), what,
                          fmt_acc(v, b2, sizeof b2, other.ch, other.clk));
        }
    }
    /* the pieces take the place of the segments in [a.off, end): overwritten in order, the
     * rest inserted or removed */
    cur_t c = c0;
    uint64_t at = a.off;
    for (size_t k = 0; k < npcs; k++) {
        const seg_t g = {at, pcs[k].base, pcs[k].vec, ch, clk, 0, 0};
        if (cur_valid(s, c) && seg_at(s, c)->start < end) seg_set(s, c, g);
        else AR_TRY(seg_insert(s, &c, g));
        c = cur_next(s, c);
        at += pcs[k].len;
    }
    while (cur_valid(s, c) && seg_at(s, c)->start < end) c = seg_remove(s, c);
    space_compact(s, a.off, end);
    return AR_OK;
}

/* ---------- ops ---------- */

/* Source j of a REDUCE or NETREDUCE (the latter's src on rank j). */
static ar_addr_t source(const ar_plan_t *p, const ar_op_t *op, uint32_t j) {
    if (op->code != AR_OP_NETREDUCE) return p->srcs[op->src + j];
    ar_addr_t a = p->srcs[op->src];
    a.rank = (int32_t)j;
    return a;
}

static int exec_data(vs_t *v, uint32_t ch, int e, uint32_t op_i, const ar_op_t *op) {
    const ar_plan_t *p = v->p;
    char b1[96];
    if (op->n == 0) return AR_OK;
    const ar_addr_t dst = ar_addr_at(p, op->dst, (uint64_t)e);
    /* a fused op's IN holds its product's operands, which only a COMPUTE reads; an all-gather +
     * matmul's all-gather reads A's rows too */
    for (uint32_t j = 0; ar_coll_fused(p->coll) && j < op->nsrc; j++) {
        const ar_addr_t *a = &p->srcs[op->src + j];
        if (a->rank == AR_RANK_HOST || ar_addr_buf(*a) != AR_BUF_IN) continue;
        if (p->coll == AR_COLL_ALLGATHER_MATMUL && a->off + op->n <= p->gemm.m * p->gemm.k) continue;
        return AR_ERR(v->err, AR_EPLAN, "%s reads IN (source %u): a %s's IN holds its product's operands, "
                      "which only a COMPUTE reads%s", fmt_op(v, b1, sizeof b1, ch, op_i), j, ar_coll_name(p->coll),
                      p->coll == AR_COLL_ALLGATHER_MATMUL ? " (and its all-gather A's rows)" : "");
    }
    if (op->code == AR_OP_COPY) {
        size_t n = 0;
        AR_TRY(do_read(v, ch, e, op_i, 0, ar_addr_at(p, p->srcs[op->src], (uint64_t)e), op->n, &v->pc_src[0],
                       &n, &v->cap_src[0]));
        return do_write(v, ch, e, op_i, dst, v->pc_src[0], n);
    }
    uint32_t k = op->code == AR_OP_NETREDUCE ? (uint32_t)p->nranks : op->nsrc;
    for (uint32_t j = 0; j < k; j++) {
        v->red_n[j] = 0;
        AR_TRY(do_read(v, ch, e, op_i, (int)j, ar_addr_at(p, source(p, op, j), (uint64_t)e), op->n, &v->red[j],
                       &v->red_n[j], &v->red_cap[j]));
    }
    /* walk the k piece lists together */
    size_t nout = 0;
    uint8_t *sum = malloc(v->V);
    size_t *idx = calloc(k, sizeof *idx);
    uint64_t *used = calloc(k, sizeof *used); /* consumed of the current piece */
    int rc = (sum && idx && used) ? AR_OK : AR_ENOMEM;
    uint64_t pos = 0;
    while (rc == AR_OK && pos < op->n) {
        uint64_t step = UINT64_MAX;
        for (uint32_t j = 0; j < k; j++) {
            uint64_t left = v->red[j][idx[j]].len - used[j];
            if (left < step) step = left;
        }
        int64_t elem = v->red[0][idx[0]].base + (int64_t)used[0];
        memset(sum, 0, v->V);
        for (uint32_t j = 0; j < k && rc == AR_OK; j++) {
            const piece_t *x = &v->red[j][idx[j]];
            int64_t ej = x->base + (int64_t)used[j];
            if (ej != elem) {
                rc = AR_ERR(v->err, AR_EPLAN,
                            "%s adds element %" PRId64 " (source %u) to element %" PRId64
                            " (source 0) at %s[+%" PRIu64 "]",
                            fmt_op(v, b1, sizeof b1, ch, op_i), ej, j, elem,
                            source(p, op, j).rank == AR_RANK_HOST
                                ? "host"
                                : buf_names[ar_addr_buf(source(p, op, j)) % AR_NBUF],
                            pos);
                break;
            }
            const uint8_t *xv = v->vecs + (size_t)x->vec * v->V;
            for (size_t t = 0; t < v->V; t++) {
                unsigned s2 = (unsigned)sum[t] + xv[t];
                sum[t] = s2 > 255 ? 255 : (uint8_t)s2;
            }
        }
        if (rc != AR_OK) break;
        uint32_t id;
        rc = vec_intern(v, sum, &id);
        if (rc != AR_OK) break;
        rc = push_piece(&v->pc_out, &nout, &v->cap_out, (piece_t){step, elem, id});
        for (uint32_t j = 0; j < k; j++) {
            used[j] += step;
            if (used[j] == v->red[j][idx[j]].len) {
                idx[j]++;
                used[j] = 0;
            }
        }
        pos += step;
    }
    free(sum);
    free(idx);
    free(used);
    AR_TRY(rc);
    if (op->code != AR_OP_NETREDUCE) return do_write(v, ch, e, op_i, dst, v->pc_out, nout);
    for (int q = 0; q < v->P; q++) { /* the sum lands on every rank, written by this channel */
        ar_addr_t d = dst;
        d.rank = q;
        AR_TRY(do_write(v, ch, e, op_i, d, v->pc_out, nout));
    }
    return AR_OK;
}

/* A COMPUTE: its left operand must hold m whole rows of the product's left matrix in order
 * (elements row*K.. of the executing rank's A), its right operand its own B (IN at
 * M*K); the tile written is then rows row0.. of the executing rank's product: elements
 * row0*N.. of its contribution, as IN is for a plain allreduce. */
static int exec_compute(vs_t *v, uint32_t ch, int e, uint32_t op_i, const ar_op_t *op) {
    const ar_plan_t *p = v->p;
    char b1[96];
    const int r = (int)(ch / (uint32_t)p->nchannels);
    uint64_t m, N, K;
    ar_op_gemm(op, &m, &N, &K);
    fmt_op(v, b1, sizeof b1, ch, op_i);
    if (!ar_coll_fused(p->coll) || N != p->gemm.n || K != p->gemm.k)
        return AR_ERR(v->err, AR_EPLAN, "%s: a %" PRIu64 " x %" PRIu64 " product in a plan whose GEMM is %" PRIu64
                      " x %" PRIu64 " (%s)", b1, N, K, p->gemm.n, p->gemm.k, ar_coll_name(p->coll));
    size_t na = 0, nb = 0;
    AR_TRY(do_read(v, ch, e, op_i, 0, ar_addr_at(p, p->srcs[op->src], (uint64_t)e), m * K, &v->pc_src[0], &na,
                   &v->cap_src[0]));
    AR_TRY(do_read(v, ch, e, op_i, 1, ar_addr_at(p, p->srcs[op->src + 1], (uint64_t)e), K * N, &v->pc_src[1], &nb,
                   &v->cap_src[1]));
    const int64_t a0 = v->pc_src[0][0].base;
    if (a0 < 0 || (uint64_t)a0 % K || (uint64_t)a0 / K + m > p->gemm.m)
        return AR_ERR(v->err, AR_EPLAN, "%s: its left operand starts at element %" PRId64
                      ", not at a row of the %" PRIu64 " x %" PRIu64 " left matrix", b1, a0, p->gemm.m, K);
    /* whose rows: a matmul-allreduce's left matrix is the rank's own A; an all-gather +
     * matmul's rows are each the rank's that holds them, one rank's in one product */
    int owner = r;
    if (p->coll == AR_COLL_ALLGATHER_MATMUL) {
        owner = ar_coll_shard_owner(p->gemm.m, v->P, (uint64_t)a0 / K);
        const int last = ar_coll_shard_owner(p->gemm.m, v->P, (uint64_t)a0 / K + m - 1);
        if (last != owner)
            return AR_ERR(v->err, AR_EPLAN, "%s: its rows %" PRIu64 "..%" PRIu64 " are held by ranks %d and %d: an "
                          "all-gather + matmul multiplies one rank's rows at a time", b1, (uint64_t)a0 / K,
                          (uint64_t)a0 / K + m, owner, last);
    }
    int64_t at = a0;
    for (size_t i = 0; i < na; i++) {
        const piece_t *x = &v->pc_src[0][i];
        const uint64_t row = (uint64_t)at / K;
        if (x->base != at || x->vec != v->unit[e * v->P + owner])
            return AR_ERR(v->err, AR_EPLAN, "%s: its left operand's row %" PRIu64 " is not row %" PRIu64
                          " of rank %d's left matrix as it was input in execution %d", b1, row, row, owner, e + 1);
        at += (int64_t)x->len;
    }
    const int64_t b0 = (int64_t)(p->gemm.m * p->gemm.k);
    at = b0;
    for (size_t i = 0; i < nb; i++) {
        const piece_t *x = &v->pc_src[1][i];
        if (x->base != at || x->vec != v->unit[e * v->P + r])
            return AR_ERR(v->err, AR_EPLAN, "%s: its right operand is not rank %d's B (IN[%" PRId64 "..) as input in "
                          "execution %d)", b1, r, b0, e + 1);
        at += (int64_t)x->len;
    }
    const piece_t out = {m * N, (int64_t)((uint64_t)a0 / K * N), v->unit[e * v->P + owner]};
    return do_write(v, ch, e, op_i, ar_addr_at(p, op->dst, (uint64_t)e), &out, 1);
}

/* Static checks of one op: bounds, k, flags, IN read-only, overlaps. They run for every op,
 * so the op's name is formatted only at a fault. */
#define THIS_OP fmt_op(v, b1, sizeof b1, ch, i)
static int check_static(vs_t *v, uint32_t ch, uint32_t i, const ar_op_t *op) {
    const ar_plan_t *p = v->p;
    char b1[96], b2[64];
    if (op->code >= AR_NOPCODE)
        return AR_ERR(v->err, AR_EPLAN, "rank %u chan %u op %u: unknown opcode %u",
                      ch / (uint32_t)p->nchannels, ch % (uint32_t)p->nchannels, i, op->code);
    if (op->code == AR_OP_SIGNAL) {
        if (op->dst.rank < 0 || op->dst.rank >= p->nranks)
            return AR_ERR(v->err, AR_EPLAN, "%s: target rank %d out of range (%d ranks)", THIS_OP,
                          (int)op->dst.rank, p->nranks);
        if (op->flag >= ar_plan_rank_flags(p, op->dst.rank))
            return AR_ERR(v->err, AR_EPLAN, "%s: flag %u out of range (rank %d has %u flags)", THIS_OP, op->flag,
                          (int)op->dst.rank, ar_plan_rank_flags(p, op->dst.rank));
        return AR_OK;
    }
    if (op->code == AR_OP_WAIT) {
        uint32_t r = ch / (uint32_t)p->nchannels;
        if (op->flag >= ar_plan_rank_flags(p, (int)r))
            return AR_ERR(v->err, AR_EPLAN, "%s: flag %u out of range (rank %u has %u flags)", THIS_OP, op->flag,
                          r, ar_plan_rank_flags(p, (int)r));
        if (op->back > 1)
            return AR_ERR(v->err, AR_EPLAN, "%s: WAIT %u executions back, at most 1", THIS_OP, op->back);
        uint64_t pe = p->per_epoch[ar_plan_flag(p, (int)r, op->flag)];
        if (op->count > pe)
            return AR_ERR(v->err, AR_EPLAN,
                          "deadlock: %s waits for count %" PRIu64 " on flag %u but the plan sends "
                          "only %" PRIu64 " SIGNALs to it per execution",
                          THIS_OP, op->count, op->flag, pe);
        return AR_OK;
    }
    if ((op->code == AR_OP_COPY || op->code == AR_OP_NETREDUCE) && op->nsrc != 1)
        return AR_ERR(v->err, AR_EPLAN, "%s: %s with %u sources", THIS_OP, ar_op_name(op->code), op->nsrc);
    if (op->code == AR_OP_COMPUTE && (op->nsrc != 2 || op->flag == 0 || op->count == 0))
        return AR_ERR(v->err, AR_EPLAN, "%s: COMPUTE with %u sources, %u columns, inner %" PRIu64 " (want 2, >= 1, >= 1)",
                      THIS_OP, op->nsrc, op->flag, op->count);
    if (op->code == AR_OP_COMPUTE && (uint64_t)op->src + 2 <= p->nsrcs &&
        (op->dst.rank != (int32_t)(ch / (uint32_t)p->nchannels) ||
         p->srcs[op->src].rank != (int32_t)(ch / (uint32_t)p->nchannels) ||
         p->srcs[op->src + 1].rank != (int32_t)(ch / (uint32_t)p->nchannels)))
        return AR_ERR(v->err, AR_EPLAN, "%s: COMPUTE names another rank's buffer (a product runs on its own device)",
                      THIS_OP);
    if (op->code == AR_OP_NETREDUCE && op->nsrc == 1 && (uint64_t)op->src < p->nsrcs &&
        (op->dst.rank != (int32_t)(ch / (uint32_t)p->nchannels) ||
         p->srcs[op->src].rank != (int32_t)(ch / (uint32_t)p->nchannels)))
        return AR_ERR(v->err, AR_EPLAN, "%s: NETREDUCE names another rank's buffer (it names its own: every rank's)",
                      THIS_OP);
    if (op->code == AR_OP_REDUCE && (op->nsrc < 2 || op->nsrc > (uint32_t)p->nranks + 1))
        return AR_ERR(v->err, AR_EPLAN, "%s: k = %u sources, want 2..%d", THIS_OP, op->nsrc,
                      p->nranks + 1);
    if ((uint64_t)op->src + op->nsrc > p->nsrcs)
        return AR_ERR(v->err, AR_EPLAN, "%s: source list out of range", THIS_OP);
    for (uint32_t s = 0; s <= op->nsrc; s++) {
        const ar_addr_t *a = ar_op_operand(p, op, s);
        const char *role = s == op->nsrc ? "destination" : "source";
        if (a->rank != AR_RANK_HOST && (a->rank < 0 || a->rank >= p->nranks))
            return AR_ERR(v->err, AR_EPLAN, "%s: %s rank %d out of range (%d ranks)", THIS_OP, role,
                          (int)a->rank, p->nranks);
        if (a->buf & ~(AR_ADDR_BUF_MASK | AR_ADDR_PARITY))
            return AR_ERR(v->err, AR_EPLAN, "%s: %s address flags 0x%x unknown", THIS_OP, role,
                          a->buf & ~(AR_ADDR_BUF_MASK | AR_ADDR_PARITY));
        if (a->rank != AR_RANK_HOST && ar_addr_buf(*a) >= AR_NBUF)
            return AR_ERR(v->err, AR_EPLAN, "%s: %s buffer %u unknown", THIS_OP, role, (unsigned)ar_addr_buf(*a));
        uint64_t size = ar_plan_buf_elems(p, a->rank, ar_addr_buf(*a)), n = ar_op_operand_elems(op, s);
        for (uint64_t par = 0; par < 2; par++) { /* both slots of a parity address */
            ar_addr_t x = ar_addr_at(p, *a, par);
            if (n > size || x.off < a->off || x.off > size - n)
                return AR_ERR(v->err, AR_EPLAN,
                              "%s: out of bounds: %s %s%s, buffer holds %" PRIu64 " elements", THIS_OP, role,
                              fmt_addr(b2, sizeof b2, x, n), par ? " (odd executions' slot)" : "",
                              size);
        }
    }
    if (op->dst.rank != AR_RANK_HOST && ar_addr_buf(op->dst) == AR_BUF_IN)
        return AR_ERR(v->err, AR_EPLAN, "%s: writes %s, but IN is read-only", THIS_OP,
                      fmt_addr(b2, sizeof b2, ar_addr_at(p, op->dst, 0), op->n));
    const uint64_t nd = ar_op_operand_elems(op, op->nsrc);
    for (uint64_t par = 0; par < 2; par++) {
        const ar_addr_t d = ar_addr_at(p, op->dst, par);
        for (uint32_t s = 0; s < op->nsrc; s++) {
            const ar_addr_t a = ar_addr_at(p, p->srcs[op->src + s], par);
            const uint64_t na = ar_op_operand_elems(op, s);
            if (space_of(v, a) != space_of(v, d) || (a.rank != AR_RANK_HOST && a.buf == AR_BUF_IN)) continue;
            if (a.off + na <= d.off || d.off + nd <= a.off) continue;
            if (op->code != AR_OP_COPY && op->code != AR_OP_COMPUTE && a.off == d.off) continue;
            return AR_ERR(v->err, AR_EPLAN, "%s: source %u %s overlaps the destination", THIS_OP, s,
                          fmt_addr(b2, sizeof b2, a, na));
        }
    }
    return AR_OK;
}
#undef THIS_OP

static int exec_signal(vs_t *v, uint32_t ch, const ar_op_t *op, uint32_t opidx) {
    sender_t *x = &v->snd[v->op_sender[opidx]];
    memcpy(v->snap + x->snap0 + (size_t)x->sent * v->nch, v->vc + (size_t)ch * v->nch,
           (size_t)v->nch * sizeof *v->snap);
    x->sent++;
    v->arrived[ar_plan_flag(v->p, op->dst.rank, op->flag)]++;
    return AR_OK;
}

static int exec_wait(vs_t *v, uint32_t ch, int e, const ar_op_t *op) {
    const ar_plan_t *p = v->p;
    uint32_t r = ch / (uint32_t)p->nchannels;
    size_t f = ar_plan_flag(p, (int)r, op->flag);
    uint64_t total = p->per_epoch[f];
    if ((uint32_t)e < op->back) return AR_OK; /* passes at once: nothing to follow */
    uint64_t want = (uint64_t)(e - (int)op->back) * total + op->count;
    uint32_t *mine = v->vc + (size_t)ch * v->nch;
    uint32_t nacq = 0, last = NONE;
    for (uint32_t k = 0; k < v->flag_n[f]; k++) {
        sender_t *x = &v->snd[v->flag_first[f] + k];
        uint64_t others = (uint64_t)(e + 1) * (total - x->m);
        if (want <= others) continue;
        uint64_t g = want - others; /* X's g-th signal, cumulative, 1-based */
        if (g > x->sent) /* cannot happen when the arrivals respect the bound */
            return AR_ERR(v->err, AR_EPLAN, "internal: WAIT satisfied before its sender signalled");
        const uint32_t *s = v->snap + x->snap0 + (size_t)(g - 1) * v->nch;
        for (int c = 0; c < v->nch; c++)
            if (s[c] > mine[c]) mine[c] = s[c];
        nacq++;
        last = v->flag_first[f] + k;
    }
    if (nacq && v->flag_n[f] > 1 && e == 0) {
        if (ar_grow(&v->xc, &v->capxc, v->nxc, sizeof *v->xc) != AR_OK) return AR_ENOMEM;
        v->xc[v->nxc++] = (xcheck_t){ch, mine[ch], f, nacq == 1 ? last : NONE};
    }
    return AR_OK;
}

/* After both executions: every sender of a multi-sender flag sends its next
 * execution's first signal only after each WAIT that relied on the bound. */
static int check_bounds(vs_t *v) {
    char b1[96], b2[96];
    for (size_t i = 0; i < v->nxc; i++) {
        const xcheck_t *w = &v->xc[i];
        for (uint32_t k = 0; k < v->flag_n[w->flag]; k++) {
            uint32_t yi = v->flag_first[w->flag] + k;
            if (yi == w->only) continue;
            const sender_t *y = &v->snd[yi];
            const uint32_t *s = v->snap + y->snap0 + (size_t)y->m * v->nch;
            if (s[w->ch] >= w->clk) continue;
            const ar_chan_t *wc = &v->p->chans[w->ch];
            const ar_chan_t *yc = &v->p->chans[y->ch];
            uint32_t yop = 0; /* the first SIGNAL of y to this flag */
            for (uint32_t j = 0; j < yc->nops; j++)
                if (v->p->ops[yc->first + j].code == AR_OP_SIGNAL &&
                    v->op_sender[yc->first + j] == yi) {
                    yop = j;
                    break;
                }
            (void)wc;
            return AR_ERR(v->err, AR_EPLAN,
                          "race between executions: %s (flag %u, several senders) may count "
                          "%s of the next execution instead of this one's",
                          fmt_op(v, b1, sizeof b1, w->ch, (w->clk - 1) % wc->nops),
                          (uint32_t)(w->flag - ar_plan_flag(v->p, (int)(w->ch / (uint32_t)v->p->nchannels), 0)),
                          fmt_op(v, b2, sizeof b2, y->ch, yop));
        }
    }
    return AR_OK;
}

/* " (last written by OP)" of a segment, or "": formatted only for a fault's message. */
static const char *last_writer(const vs_t *v, const seg_t *g, char *by, size_t len) {
    char b2[128];
    by[0] = 0;
    if (g->wch != NONE) snprintf(by, len, " (last written by %s)", fmt_acc(v, b2, sizeof b2, g->wch, g->wclk));
    return by;
}

/* Every OUT element the collective defines holds exactly one contribution of every rank
 * of execution e (allreduce; reduce-scatter on the rank's shard), or of the rank whose
 * shard holds it (allgather). */
static int check_out(vs_t *v, int e) {
    char by[160];
    const ar_coll_t coll = v->p->coll;
    for (int r = 0; r < v->P; r++) {
        const space_t *s = &v->sp[2 * r];
        uint64_t lo, len;
        ar_coll_shard(v->p->count, v->P, r, &lo, &len);
        for (cur_t i = cur_first(); cur_valid(s, i); i = cur_next(s, i)) {
            const seg_t *g = seg_at(s, i);
            const uint64_t end = seg_end(s, i);
            /* a segment holds one value: one element of it checks them all */
            if (coll == AR_COLL_REDUCESCATTER && (end <= lo || g->start >= lo + len)) continue;
            int from = -1; /* allgather: the only rank whose contribution it may hold */
            if (coll == AR_COLL_ALLGATHER || coll == AR_COLL_ALLGATHER_MATMUL) { /* the latter: by rows */
                from = ar_coll_shard_owner(v->p->count, v->P, g->start);
                const int last = ar_coll_shard_owner(v->p->count, v->P, end - 1);
                if (last != from)
                    return AR_ERR(v->err, AR_EPLAN,
                                  "rank %d OUT[%" PRIu64 "..%" PRIu64 ") holds one value across the shards of "
                                  "ranks %d and %d at the end of execution %d",
                                  r, g->start, end, from, last, e + 1);
            }
#define BY last_writer(v, g, by, sizeof by)
            if (!g->vec)
                return AR_ERR(v->err, AR_EPLAN,
                              "rank %d OUT[%" PRIu64 "] holds no value at the end of execution %d",
                              r, g->start, e + 1);
            /* the owner must know its result is there: some channel of rank r ends
             * after the last write (program order or a WAIT) */
            int seen = 0;
            for (int c = 0; c < v->p->nchannels && !seen; c++) {
                uint32_t ch = (uint32_t)(r * v->p->nchannels + c);
                seen = g->wch == ch || v->vc[(size_t)ch * v->nch + g->wch] >= g->wclk;
            }
            if (!seen)
                return AR_ERR(v->err, AR_EPLAN,
                              "rank %d OUT[%" PRIu64 "] may still be in flight when rank %d "
                              "finishes execution %d: no WAIT of rank %d follows its write%s",
                              r, g->start, r, e + 1, r, BY);
            if (g->base != (int64_t)g->start)
                return AR_ERR(v->err, AR_EPLAN,
                              "rank %d OUT[%" PRIu64 "] holds element %" PRId64 "%s", r, g->start,
                              g->base, BY);
            const uint8_t *x = v->vecs + (size_t)g->vec * v->V;
            for (int q = 0; q < v->P; q++) {
                for (int f = 0; f < NEPOCH; f++) {
                    unsigned c = x[f * v->P + q];
                    if (from >= 0 && q != from && c)
                        return AR_ERR(v->err, AR_EPLAN,
                                      "rank %d OUT[%" PRIu64 "] holds the contribution of rank %d, "
                                      "where rank %d's shard is (allgather) at the end of execution %d%s",
                                      r, g->start, q, from, e + 1, BY);
                    if (from >= 0 && q != from) continue;
                    if (f == e && c == 0)
                        return AR_ERR(v->err, AR_EPLAN,
                                      "rank %d OUT[%" PRIu64 "] misses the contribution of rank "
                                      "%d at the end of execution %d%s",
                                      r, g->start, q, e + 1, BY);
                    if (f == e && c > 1)
                        return AR_ERR(v->err, AR_EPLAN,
                                      "rank %d OUT[%" PRIu64 "] holds the contribution of rank %d "
                                      "%u times at the end of execution %d%s",
                                      r, g->start, q, c, e + 1, BY);
                    if (f != e && c)
                        return AR_ERR(v->err, AR_EPLAN,
                                      "rank %d OUT[%" PRIu64 "] holds rank %d's contribution from "
                                      "execution %d at the end of execution %d%s",
                                      r, g->start, q, f + 1, e + 1, BY);
                }
            }
        }
    }
    return AR_OK;
}
#undef BY

static int cmp_sender(const void *a, const void *b) {
    const sender_t *x = a, *y = b;
    if (x->flag != y->flag) return x->flag < y->flag ? -1 : 1;
    return x->ch < y->ch ? -1 : x->ch > y->ch;
}

static int setup(vs_t *v) {
    const ar_plan_t *p = v->p;
    v->P = p->nranks;
    v->nch = p->nranks * p->nchannels;
    v->V = (size_t)NEPOCH * v->P;
    v->capvec = 64;
    v->vecs = calloc(v->capvec, v->V);
    v->unit = calloc((size_t)NEPOCH * v->P, sizeof *v->unit);
    v->nsp = 2 * v->P + 1;
    v->sp = calloc(v->nsp, sizeof *v->sp);
    v->vc = calloc((size_t)v->nch * v->nch, sizeof *v->vc);
    v->pc = calloc(v->nch, sizeof *v->pc);
    size_t nf = ar_plan_flag_slots(p);
    v->arrived = calloc(nf, sizeof *v->arrived);
    v->flag_first = calloc(nf, sizeof *v->flag_first);
    v->flag_n = calloc(nf, sizeof *v->flag_n);
    v->op_sender = malloc((p->nops ? p->nops : 1) * sizeof *v->op_sender);
    uint32_t kmax = (uint32_t)p->nranks + 1;
    v->red = calloc(kmax, sizeof *v->red);
    v->red_n = calloc(kmax, sizeof *v->red_n);
    v->red_cap = calloc(kmax, sizeof *v->red_cap);
    if (!v->vecs || !v->unit || !v->sp || !v->vc || !v->pc || !v->arrived || !v->flag_first ||
        !v->flag_n || !v->op_sender || !v->red || !v->red_n || !v->red_cap)
        return AR_ENOMEM;
    v->nvec = 1; /* id 0: no value */
    uint8_t *u = calloc(1, v->V);
    if (!u) return AR_ENOMEM;
    for (size_t t = 0; t < v->V; t++) {
        u[t] = 1;
        int rc = vec_intern(v, u, &v->unit[t]);
        u[t] = 0;
        if (rc != AR_OK) {
            free(u);
            return rc;
        }
    }
    free(u);
    for (int r = 0; r < v->P; r++) {
        AR_TRY(space_init(&v->sp[2 * r], p->count));
        AR_TRY(space_init(&v->sp[2 * r + 1], p->scratch_elems));
    }
    AR_TRY(space_init(&v->sp[2 * v->P], p->host_elems));

    /* senders per flag */
    uint32_t nsig = 0;
    for (uint32_t i = 0; i < p->nops; i++) nsig += p->ops[i].code == AR_OP_SIGNAL;
    sender_t *all = malloc((nsig ? nsig : 1) * sizeof *all);
    if (!all) return AR_ENOMEM;
    uint32_t k = 0;
    for (int ch = 0; ch < v->nch; ch++) {
        const ar_chan_t *c = &p->chans[ch];
        for (uint32_t j = 0; j < c->nops; j++) {
            const ar_op_t *op = &p->ops[c->first + j];
            if (op->code == AR_OP_SIGNAL)
                all[k++] = (sender_t){(uint32_t)ar_plan_flag(p, op->dst.rank, op->flag), (uint32_t)ch,
                                      1, 0, 0};
        }
    }
    qsort(all, nsig, sizeof *all, cmp_sender);
    v->snd = all;
    v->nsnd = 0;
    for (uint32_t i = 0; i < nsig; i++) {
        if (v->nsnd && all[v->nsnd - 1].flag == all[i].flag && all[v->nsnd - 1].ch == all[i].ch) {
            all[v->nsnd - 1].m++;
            continue;
        }
        all[v->nsnd++] = all[i];
    }
    size_t slots = 0;
    for (uint32_t i = 0; i < v->nsnd; i++) {
        sender_t *x = &v->snd[i];
        if (!v->flag_n[x->flag]) v->flag_first[x->flag] = i;
        v->flag_n[x->flag]++;
        x->snap0 = slots * v->nch;
        slots += NEPOCH * x->m;
    }
    if (slots && (size_t)v->nch * sizeof(uint32_t) > MAX_SNAP_BYTES / slots)
        return AR_ERR(v->err, AR_ELIMIT,
                      "plan too large to verify: %zu SIGNALs x %d channels of vector clocks",
                      slots, v->nch);
    v->snap = malloc((slots ? slots : 1) * v->nch * sizeof *v->snap);
    if (!v->snap) return AR_ENOMEM;
    for (int ch = 0; ch < v->nch; ch++) {
        const ar_chan_t *c = &p->chans[ch];
        for (uint32_t j = 0; j < c->nops; j++) {
            const ar_op_t *op = &p->ops[c->first + j];
            if (op->code != AR_OP_SIGNAL) continue;
            sender_t key = {(uint32_t)ar_plan_flag(p, op->dst.rank, op->flag), (uint32_t)ch, 0, 0, 0};
            sender_t *x = bsearch(&key, v->snd, v->nsnd, sizeof key, cmp_sender);
            v->op_sender[c->first + j] = (uint32_t)(x - v->snd);
        }
    }
    return AR_OK;
}

static void teardown(vs_t *v) {
    free(v->vecs);
    free(v->htab);
    free(v->unit);
    free(v->ra);
    if (v->sp)
        for (int i = 0; i < v->nsp; i++) space_free(&v->sp[i]);
    AR_FREE_EACH(v->sp, v->vc, v->pc, v->arrived, v->snd, v->flag_first, v->flag_n, v->op_sender, v->snap, v->xc,
                 v->pc_src[0], v->pc_src[1]);
    free(v->pc_out);
    if (v->red)
        for (int j = 0; j <= v->P; j++) free(v->red[j]);
    free(v->red);
    free(v->red_n);
    free(v->red_cap);
}

static int run(vs_t *v) {
    const ar_plan_t *p = v->p;
    char b1[96];
    v->P = p->nranks;
    v->nch = p->nranks * p->nchannels;
    for (int ch = 0; ch < v->nch; ch++) {
        const ar_chan_t *c = &p->chans[ch];
        if ((uint64_t)c->first + c->nops > p->nops)
            return AR_ERR(v->err, AR_EPLAN, "rank %d chan %d: op range out of the plan",
                          ch / p->nchannels, ch % p->nchannels);
        for (uint32_t j = 0; j < c->nops; j++)
            AR_TRY(check_static(v, (uint32_t)ch, j, &p->ops[c->first + j]));
    }
    AR_TRY(setup(v));
    for (int e = 0; e < NEPOCH; e++) {
        memset(v->pc, 0, (size_t)v->nch * sizeof *v->pc);
        int progress = 1;
        while (progress) {
            progress = 0;
            for (int ch = 0; ch < v->nch; ch++) {
                const ar_chan_t *c = &p->chans[ch];
                while (v->pc[ch] < c->nops) {
                    uint32_t oi = c->first + v->pc[ch];
                    const ar_op_t *op = &p->ops[oi];
                    if (op->code == AR_OP_WAIT) {
                        size_t f = ar_plan_flag(p, ch / p->nchannels, op->flag);
                        if ((uint32_t)e >= op->back &&
                            v->arrived[f] < (uint64_t)(e - (int)op->back) * p->per_epoch[f] + op->count)
                            break;
                    }
                    v->vc[(size_t)ch * v->nch + ch]++;
                    switch (op->code) {
                    case AR_OP_COPY:
                    case AR_OP_REDUCE:
                    case AR_OP_NETREDUCE: AR_TRY(exec_data(v, (uint32_t)ch, e, v->pc[ch], op)); break;
                    case AR_OP_COMPUTE: AR_TRY(exec_compute(v, (uint32_t)ch, e, v->pc[ch], op)); break;
                    case AR_OP_SIGNAL: AR_TRY(exec_signal(v, (uint32_t)ch, op, oi)); break;
                    case AR_OP_WAIT: AR_TRY(exec_wait(v, (uint32_t)ch, e, op)); break;
                    }
                    v->pc[ch]++;
                    progress = 1;
                }
            }
        }
        int stuck = 0, first = -1;
        for (int ch = 0; ch < v->nch; ch++)
            if (v->pc[ch] < p->chans[ch].nops) {
                stuck++;
                if (first < 0) first = ch;
            }
        if (stuck) {
            const ar_op_t *op = &p->ops[p->chans[first].first + v->pc[first]];
            size_t f = ar_plan_flag(p, first / p->nchannels, op->flag);
            return AR_ERR(v->err, AR_EPLAN,
                          "deadlock in execution %d: %s waits for flag %u to reach %" PRIu64
                          " but it stops at %" PRIu64 " (%d channels stuck)",
                          e + 1, fmt_op(v, b1, sizeof b1, (uint32_t)first, v->pc[first]), op->flag,
                          op->count, v->arrived[f] - (uint64_t)e * p->per_epoch[f], stuck);
        }
        AR_TRY(check_out(v, e));
    }
    return check_bounds(v);
}

int ar_plan_verify(const ar_plan_t *p, ar_error_t *err) {
    if (!p || p->build || !p->chans || !p->per_epoch)
        return AR_ERR(err, AR_EINVAL, "plan not finished (call ar_plan_finish)");
    if (p->only_rank >= 0)
        return AR_ERR(err, AR_EINVAL, "a plan of rank %d's ops alone holds no other rank's to verify", p->only_rank);
    vs_t v;
    memset(&v, 0, sizeof v);
    v.p = p;
    v.err = err;
    int rc = run(&v);
    if (rc == AR_ENOMEM) AR_ERR(err, AR_ENOMEM, "out of memory while verifying the plan");
    teardown(&v);
    return rc;
}
