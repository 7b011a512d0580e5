/* The analytic backend: the critical path of one plan execution, fast.
 *
 * A discrete-event walk over the channel clock of arsim/cost.h (cost/clock.c), which
 * holds every sequencing rule and the critical path by term; this file only decides
 * the order in which channels move and how fast their bytes stream: events in time
 * order, so a WAIT holds its channel until the count-th SIGNAL to *arrive* at that
 * flag. A COPY/REDUCE is a flow from its first byte (its latency after its issue) until
 * its bytes have crossed every resource it uses (ar_cost_op's traffic: link directions,
 * device memories, host links, link issue). Channels that share a resource share its
 * rate: each resource gives every flow across it the same share, its rate over the summed
 * bytes per op byte of those flows, and a flow streams at the tightest share among its
 * resources, no faster than its own bottleneck (ar_cost_op's move_s). A share a flow held
 * at a tighter resource leaves unused is not handed on, as SimGrid's max-min fill in the
 * sim backend would: this keeps every change local to the resources of the flow that
 * begins or ends, and costs little against sim (tests/analytic_vs_sim.py). Each resource
 * keeps a virtual clock of the bytes a flow at its share has moved, so a flow it binds
 * ends at a fixed tag on that clock however often the share changes: a flow beginning or
 * ending moves one event per resource, not one per flow.
 *
 * Flags count up across executions, and without contention every execution is the
 * same, so one execution (epoch 0) is walked whatever opts->iters says. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backends/internal.h"
#include "arsim/util.h"

/* ---- an indexed binary heap: ids ordered by key (ties by id), each id's place in pos[id]
 * (-1: absent), so that an id's key can move without leaving a stale entry. Each entry
 * holds its key, so that ordering reads the heap alone. ---- */

typedef struct ih_ent_s {
    double key;
    int id;
} ih_ent_t;

typedef struct iheap_s {
    ih_ent_t *e;
    size_t n, cap;
} iheap_t;

static int ih_before(ih_ent_t a, ih_ent_t b) { return a.key < b.key || (a.key == b.key && a.id < b.id); }

static void ih_place(iheap_t *h, int *pos, size_t i, ih_ent_t x) {
    h->e[i] = x;
    pos[x.id] = (int)i;
}

static void ih_up(iheap_t *h, int *pos, size_t i) {
    const ih_ent_t x = h->e[i];
    while (i > 0 && ih_before(x, h->e[(i - 1) / 2])) {
        ih_place(h, pos, i, h->e[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    ih_place(h, pos, i, x);
}

static void ih_down(iheap_t *h, int *pos, size_t i) {
    const ih_ent_t x = h->e[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && ih_before(h->e[c + 1], h->e[c])) c++;
        if (!ih_before(h->e[c], x)) break;
        ih_place(h, pos, i, h->e[c]);
        i = c;
    }
    ih_place(h, pos, i, x);
}

/* id enters at key[id], or moves there. */
static int ih_set(iheap_t *h, const double *key, int *pos, int id) {
    if (pos[id] < 0) {
        if (ar_grow(&h->e, &h->cap, h->n, sizeof *h->e) != AR_OK) return AR_ENOMEM;
        ih_place(h, pos, h->n++, (ih_ent_t){key[id], id});
    } else {
        h->e[pos[id]].key = key[id];
    }
    ih_up(h, pos, (size_t)pos[id]);
    ih_down(h, pos, (size_t)pos[id]);
    return AR_OK;
}

static void ih_remove(iheap_t *h, int *pos, int id) {
    const size_t i = (size_t)pos[id];
    pos[id] = -1;
    const ih_ent_t last = h->e[--h->n];
    if (i == h->n) return;
    ih_place(h, pos, i, last);
    ih_up(h, pos, i);
    ih_down(h, pos, (size_t)pos[last.id]);
}

/* ---- the channels' events in time order, equal times in the order they came ----
 * Most events fall at a moment another pending event already holds (every rank taking the
 * same step at once), so they are kept per distinct moment, each moment's in arrival order
 * (a bucket), and only the moments are ordered: an indexed heap of buckets by time (above),
 * and a hash from a time to its bucket. Popping walks a bucket's events in the order they were
 * stored, which a heap of single events, scattered over a pool, did not. */

enum { EV_READY, EV_ARRIVE };

typedef struct event_s {
    double t;
    int kind;
    int chan;                  /* EV_READY: global channel index */
    int rank;                  /* EV_ARRIVE: target rank and flag */
    uint32_t flag;
    double terms[AR_NTERM];    /* EV_ARRIVE: the sender's path + signal latency */
} event_t;

/* A bucket's events lie in blocks of QUEUE_BLOCK, chained in arrival order; a block whose
 * events are all popped is free for any bucket, so the queue holds about the events pending. */
#define QUEUE_BLOCK 32

typedef struct block_s {
    event_t ev[QUEUE_BLOCK];
    int next; /* the bucket's next block, or -1 */
} block_t;

typedef struct bucket_s {
    int first, last;  /* its blocks: popped from first[head], pushed to last[tail] */
    int head, tail;
    int next;         /* the next bucket in its hash chain, or -1 */
} bucket_t;

typedef struct queue_s {
    bucket_t *b;
    size_t nb, cap_b;
    int *spare;      /* free buckets */
    size_t nspare, cap_spare;
    block_t *blk;
    size_t nblk, cap_blk;
    int free_blk;    /* free blocks, chained by next, or -1 */
    iheap_t order;   /* the live buckets by time (no two share one) */
    double *at;      /* per bucket: its moment */
    int *pos;        /* per bucket: its place in order, or -1 */
    size_t cap_at, cap_pos;
    int *chain;      /* per hash value: the first live bucket of that value, or -1 */
    unsigned hbits;  /* the hash has 2^hbits values */
    int last;        /* the bucket last pushed to, or -1 */
} queue_t;

/* A free block, or -1 out of memory. */
static int queue_block(queue_t *q) {
    int k = q->free_blk;
    if (k >= 0) {
        q->free_blk = q->blk[k].next;
    } else {
        if (ar_grow(&q->blk, &q->cap_blk, q->nblk, sizeof *q->blk) != AR_OK) return -1;
        k = (int)q->nblk++;
    }
    q->blk[k].next = -1;
    return k;
}

static size_t queue_hash(const queue_t *q, double t) {
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    return (size_t)((bits * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - q->hbits));
}

/* The hash twice as wide: its chains rebuilt from the live buckets. */
static int queue_rehash(queue_t *q) {
    const unsigned hbits = q->hbits ? q->hbits + 1 : 10;
    int *chain = malloc(((size_t)1 << hbits) * sizeof *chain);
    if (!chain) return AR_ENOMEM;
    free(q->chain);
    q->chain = chain;
    q->hbits = hbits;
    for (size_t i = 0; i < (size_t)1 << hbits; i++) chain[i] = -1;
    for (size_t i = 0; i < q->order.n; i++) {
        const int b = q->order.e[i].id;
        const size_t h = queue_hash(q, q->at[b]);
        q->b[b].next = chain[h];
        chain[h] = b;
    }
    return AR_OK;
}

/* The live bucket of moment t, or a new one: entered in the heap and the hash. */
static int queue_bucket(queue_t *q, double t, int *id) {
    if (q->last >= 0 && q->at[q->last] == t && q->b[q->last].first >= 0) return *id = q->last, AR_OK;
    if (q->chain) /* the previous pushes missed: look t up */
        for (int i = q->chain[queue_hash(q, t)]; i >= 0; i = q->b[i].next)
            if (q->at[i] == t) return *id = q->last = i, AR_OK;
    if (q->order.n + 1 > ((size_t)1 << q->hbits) / 2 && queue_rehash(q) != AR_OK) return AR_ENOMEM;
    int b;
    if (q->nspare) {
        b = q->spare[--q->nspare];
    } else {
        if (ar_grow(&q->b, &q->cap_b, q->nb, sizeof *q->b) != AR_OK ||
            ar_grow(&q->spare, &q->cap_spare, q->nb, sizeof *q->spare) != AR_OK ||
            ar_grow(&q->at, &q->cap_at, q->nb, sizeof *q->at) != AR_OK ||
            ar_grow(&q->pos, &q->cap_pos, q->nb, sizeof *q->pos) != AR_OK)
            return AR_ENOMEM;
        b = (int)q->nb++;
        memset(&q->b[b], 0, sizeof q->b[b]);
        q->pos[b] = -1;
    }
    bucket_t *k = &q->b[b];
    q->at[b] = t;
    k->first = k->last = queue_block(q);
    k->head = k->tail = 0;
    if (k->first < 0) {
        q->spare[q->nspare++] = b;
        return AR_ENOMEM;
    }
    if (ih_set(&q->order, q->at, q->pos, b) != AR_OK) {
        q->blk[k->first].next = q->free_blk;
        q->free_blk = k->first;
        k->first = -1;
        q->spare[q->nspare++] = b;
        return AR_ENOMEM;
    }
    const size_t h = queue_hash(q, t);
    q->b[b].next = q->chain[h];
    q->chain[h] = b;
    *id = q->last = b;
    return AR_OK;
}

static int queue_push(queue_t *q, const event_t *e) {
    int id;
    if (queue_bucket(q, e->t + 0.0 /* -0 is +0's moment */, &id) != AR_OK) return AR_ENOMEM;
    if (q->b[id].tail == QUEUE_BLOCK) {
        const int k = queue_block(q); /* may move the blocks */
        if (k < 0) return AR_ENOMEM;
        q->blk[q->b[id].last].next = k;
        q->b[id].last = k;
        q->b[id].tail = 0;
    }
    bucket_t *b = &q->b[id];
    q->blk[b->last].ev[b->tail++] = *e;
    return AR_OK;
}

/* The time of the first event (INFINITY: none). */
static double queue_first(const queue_t *q) { return q->order.n ? q->order.e[0].key : INFINITY; }

/* The first event, out of the queue; its bucket, emptied, leaves the heap and the hash. */
static event_t queue_pop(queue_t *q) {
    const int id = q->order.e[0].id;
    bucket_t *b = &q->b[id];
    const event_t e = q->blk[b->first].ev[b->head++];
    if (b->first == b->last ? b->head < b->tail : b->head < QUEUE_BLOCK) return e;
    const int done = b->first;
    b->first = q->blk[done].next;
    b->head = 0;
    q->blk[done].next = q->free_blk;
    q->free_blk = done;
    if (b->first >= 0) return e;
    int *link = &q->chain[queue_hash(q, q->at[id])];
    while (*link != id) link = &q->b[*link].next;
    *link = b->next;
    q->spare[q->nspare++] = id;
    ih_remove(&q->order, q->pos, id);
    return e;
}

static void queue_free(queue_t *q) {
    AR_FREE_EACH(q->b, q->spare, q->blk, q->order.e, q->at, q->pos, q->chain);
}

/* ---- per link direction: bytes and the intervals it carried data ---- */

typedef struct span_s {
    double a, b;
} span_t;

typedef struct linkacc_s {
    double bytes;
    span_t *spans;
    size_t n, cap;
} linkacc_t;

static int span_add(linkacc_t *l, double a, double b) {
    if (ar_grow(&l->spans, &l->cap, l->n, sizeof *l->spans) != AR_OK) return AR_ENOMEM;
    l->spans[l->n].a = a;
    l->spans[l->n++].b = b;
    return AR_OK;
}

static int span_cmp(const void *x, const void *y) {
    const span_t *a = x, *b = y;
    return a->a < b->a ? -1 : a->a > b->a;
}

/* Length of the union of the spans. */
static double span_union(linkacc_t *l) {
    if (!l->n) return 0;
    qsort(l->spans, l->n, sizeof *l->spans, span_cmp);
    double total = 0, a = l->spans[0].a, b = l->spans[0].b;
    for (size_t i = 1; i < l->n; i++) {
        if (l->spans[i].a > b) {
            total += b - a;
            a = l->spans[i].a;
            b = l->spans[i].b;
        } else if (l->spans[i].b > b) {
            b = l->spans[i].b;
        }
    }
    return total + (b - a);
}

/* ---- the walk ---- */

typedef struct chan_state_s {
    uint32_t pc;
    int waiting;              /* blocked on the WAIT at pc */
} chan_state_t;

/* One resource a flow uses: its slot (resource_slot), its bytes per byte of the op, and
 * where the flow stands in the slot's list while it streams. */
typedef struct use_s {
    int slot;
    double per;
    size_t pos;
    int listed; /* the flow's binding is among this resource's binders (slot_t) */
} use_t;

/* The COPY/REDUCE a channel has in flight (a channel has one at most): from `from` (its
 * first byte) it streams at the share of the resource that binds it (`bind`, the tightest
 * of those it uses), or at `cap`, its own bottleneck (bytes / move_s), where none is
 * tighter (bind -1). Bound by a resource, its last byte crosses when that resource's
 * virtual clock reaches the flow's tag; bound by itself, `left` bytes were left at `since`. */
typedef struct flow_s {
    const ar_op_t *op;
    ar_op_cost_t cost;
    double start, from, left, since, cap;
    int streaming;
    int bind;
    uint64_t mark;
    use_t *use;
    size_t nuse, cap_use;
} flow_t;

/* A flow on a resource: its channel and which of its uses. */
typedef struct member_s {
    int gi;
    int ui;
} member_t;

/* How many bindings a resource lists for the flows on it that it does not bind: those flows
 * are mostly bound by one or two resources (a device's link or memory that they all share). */
#define BINDERS 4

/* A resource: its rate, the summed weight of the flows streaming across it (their bytes on
 * it per byte of their op) and those flows. Each streams at no more than its share, cap /
 * weight bytes of op per second. vclock counts the bytes a flow held to that share has
 * moved (as of vtime), so a flow it binds ends when vclock reaches the flow's tag whatever
 * the share does meanwhile: a change of share moves one event, the resource's next end,
 * not one per flow. */
typedef struct slot_s {
    /* what every flow beginning or ending on it reads and writes first, in one cache line */
    uint64_t mark;  /* touched at this moment */
    uint64_t dirty; /* its next end to be placed again at this moment */
    double cap, weight, share, before, vclock, vtime;
    member_t *m;
    size_t n, capm;
    /* Which flows on it may stream faster than its share: those it does not bind whose
     * binding is listed among its binders stream at that binding's share; the others at no
     * more than `most` (an upper bound). Its share falling below either, those flows are
     * bound again. */
    double most;
    struct { int slot, n; } binder[BINDERS];
    int nbinders;
    /* Whether a rise of its share may free a flow it binds: none of them has another
     * resource, or its own bottleneck, tighter than `least` (a lower bound: a resource whose
     * share falls lowers the `least` of each binding it lists), unless one of them has a
     * resource that does not list this one (`unlisted` of them). A resource shared by
     * thousands of flows rises without looking at each. */
    double least;
    int unlisted;
    iheap_t bound;  /* the flows it binds, by tag */
} slot_t;

typedef struct walk_s {
    const ar_topo_t *t;
    const ar_plan_t *p;
    int breakdown;
    ar_mem_t buffer;
    ar_clock_t clk;           /* the channel clock (cost.h): every channel's time and path */
    chan_state_t *ch;
    uint64_t *flags;          /* per flag counter (ar_plan_flag): arrivals so far */
    queue_t queue;            /* the channels' events */
    /* The flows' events, one per id at most: a resource's next end (id: its slot), a
     * channel's flow's first byte, or its end where no resource binds it (nslots + channel). */
    iheap_t events;
    double *ekey;
    int *epos;
    int nslots;
    double *tag;              /* per channel: its flow's tag in the heap of the resource binding it */
    int *tpos;
    linkacc_t *links;         /* 2 * nlinks: index link * 2 + (dir < 0) */
    ar_op_traffic_t *traffic;
    int max_traffic;
    flow_t *flow;             /* per channel */
    slot_t *slot;             /* per resource slot (resource_slot) */
    int *touched, *dirty;     /* slots whose weight changed, whose next end moved, at this moment */
    size_t ntouched, ndirty;
    int *begun;               /* channels whose flow began at this moment */
    int *scratch;             /* per channel: a copy of a resource's bound flows */
    size_t nbegun;
    int *use_pos;             /* per slot: 1 + its place in the use list of the op being begun, else 0 */
    int *fold;                /* a plan of one rank or a row: each link slot's orbit (ar_topo_fold_links); else NULL */
    int shifts;               /* ... the translations it stands on (ar_plan_shifts) */
    uint64_t epoch;           /* marks slots and flows seen at this moment */
    uint64_t ops;
} walk_t;

/* Channel gi goes on once every event before its clock has happened. */
static int requeue(walk_t *w, int gi, ar_error_t *err) {
    event_t e = {.t = ar_clock_now(&w->clk, gi), .kind = EV_READY, .chan = gi};
    if (queue_push(&w->queue, &e) != AR_OK) return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
    return AR_OK;
}

/* The slot of a resource and its rate in bytes/s, or multiply-adds x 2 per second for
 * matrix units (-1: no rate bounds it): link directions, then per device its memory, host
 * link, link issue, matrix units and L2. */
static int resource_slot(const walk_t *w, const ar_op_traffic_t *r, double *cap) {
    const ar_topo_t *t = w->t;
    const ar_model_t *m = t->model;
    const int L = 2 * t->nlinks, D = t->ndevices;
    /* a plan of one rank or a row: every device's own resources are those of the device
     * standing for its orbit, by translation */
    if (r->res == AR_RES_LINK) {
        *cap = ar_topo_link_gbps(t, r->link) * 1e9;
        return w->fold ? w->fold[r->link * 2 + (r->dir < 0)] : r->link * 2 + (r->dir < 0);
    }
    const int dev = w->fold ? ar_topo_orbit_device(t, w->shifts, r->link) : r->link;
    switch (r->res) {
    case AR_RES_LINK: break;
    case AR_RES_MEMORY: *cap = ar_cost_mem_gbps(&m->mem[w->buffer]) * 1e9; return L + dev;
    case AR_RES_HOST: *cap = m->host_link_gbps * 1e9; return L + D + dev;
    case AR_RES_ISSUE: *cap = m->link_issue_gbps * 1e9; return *cap > 0 ? L + 2 * D + dev : -1;
    case AR_RES_TENSOR: *cap = ar_cost_gemm_flops(m, w->p->dtype); return *cap > 0 ? L + 3 * D + dev : -1;
    case AR_RES_L2: *cap = ar_cost_l2_gbps(m) * 1e9; return L + 4 * D + dev;
    }
    return -1;
}

/* Close to: a within a relative hair of b, the rounding of the sums below. */
static int near_or_below(double a, double b) { return a <= b + 1e-12 * fabs(b); }

static int oom(ar_error_t *err) { return AR_ERR(err, AR_ENOMEM, "analytic: out of memory"); }

/* Resource s's virtual clock brought to t at its share since vtime. */
static void slot_sync(slot_t *s, double t) {
    if (!(t > s->vtime)) return;
    if (s->share < INFINITY) s->vclock += s->share * (t - s->vtime);
    s->vtime = t;
}

/* Resource s's next end is to be placed again once this moment's changes are made. */
static void slot_dirty(walk_t *w, int s) {
    if (w->slot[s].dirty == w->epoch) return;
    w->slot[s].dirty = w->epoch;
    w->dirty[w->ndirty++] = s;
}

/* Resource s's weight is about to change at t: its clock is brought there first. */
static void touch(walk_t *w, int s, double t) {
    slot_t *sl = &w->slot[s];
    if (sl->mark == w->epoch) return;
    sl->mark = w->epoch;
    slot_sync(sl, t);
    sl->before = sl->share;
    w->touched[w->ntouched++] = s;
    slot_dirty(w, s);
}

static int place_event(walk_t *w, int id, double t) {
    w->ekey[id] = t;
    return ih_set(&w->events, w->ekey, w->epos, id) == AR_OK ? AR_OK : AR_ENOMEM;
}

static void drop_event(walk_t *w, int id) {
    if (w->epos[id] >= 0) ih_remove(&w->events, w->epos, id);
}

/* Resource s's next end: its first tag at its share, or none. */
static int place_slot(walk_t *w, int s) {
    const slot_t *sl = &w->slot[s];
    if (!sl->bound.n) {
        drop_event(w, s);
        return AR_OK;
    }
    return place_event(w, s, sl->vtime + (sl->bound.e[0].key - sl->vclock) / sl->share);
}

/* Bytes/s of the op that flow gi streams at now. */
static double flow_rate(const walk_t *w, const flow_t *f) { return f->bind >= 0 ? w->slot[f->bind].share : f->cap; }

/* Bytes of its op that flow gi has still to move at t. */
static double flow_left(walk_t *w, int gi, double t) {
    const flow_t *f = &w->flow[gi];
    if (f->bind >= 0) {
        slot_t *s = &w->slot[f->bind];
        slot_sync(s, t);
        return w->tag[gi] - s->vclock;
    }
    return f->cap < INFINITY ? f->left - f->cap * (t - f->since) : 0;
}

/* Flow f streams at `rate` now: the resources it uses that do not list its binding learn so. */
static void raise_most(walk_t *w, const flow_t *f, double rate) {
    for (size_t i = 0; i < f->nuse; i++) {
        slot_t *s = &w->slot[f->use[i].slot];
        if (f->use[i].slot != f->bind && !f->use[i].listed && s->most < rate) s->most = rate;
    }
}

/* The tightest of flow f's own bottleneck and its resources other than its binding. */
static double other_rate(const walk_t *w, const flow_t *f) {
    double rate = f->cap;
    for (size_t i = 0; i < f->nuse; i++)
        if (f->use[i].slot != f->bind && w->slot[f->use[i].slot].share < rate) rate = w->slot[f->use[i].slot].share;
    return rate;
}

/* Resource s lists b as the binding of one more flow on it, where it has room. */
static int binder_add(slot_t *s, int b) {
    for (int k = 0; k < s->nbinders; k++)
        if (s->binder[k].slot == b) return ++s->binder[k].n, 1;
    if (s->nbinders == BINDERS) return 0;
    s->binder[s->nbinders].slot = b;
    s->binder[s->nbinders++].n = 1;
    return 1;
}

static void binder_drop(slot_t *s, int b) {
    for (int k = 0; k < s->nbinders; k++)
        if (s->binder[k].slot == b) {
            if (!--s->binder[k].n) s->binder[k] = s->binder[--s->nbinders];
            return;
        }
}

/* The fastest a flow on resource s that s does not bind may stream (an upper bound). */
static double slot_most(const walk_t *w, const slot_t *s) {
    double most = s->most;
    for (int k = 0; k < s->nbinders; k++)
        if (w->slot[s->binder[k].slot].share > most) most = w->slot[s->binder[k].slot].share;
    return most;
}

/* Resource s's share fell: a flow on it bound elsewhere may find s tighter than the rest. */
static void slot_fell(walk_t *w, const slot_t *s) {
    for (int k = 0; k < s->nbinders; k++) {
        slot_t *b = &w->slot[s->binder[k].slot];
        if (s->share < b->least) b->least = s->share;
    }
}

/* The resource of the tightest share among flow f's (the first of equals), or -1 where its
 * own bottleneck is tighter; *rate, that share. */
static int tightest(const walk_t *w, const flow_t *f, double *rate) {
    int bind = -1;
    *rate = f->cap;
    for (size_t i = 0; i < f->nuse; i++) {
        const double share = w->slot[f->use[i].slot].share;
        if (share < *rate) *rate = share, bind = f->use[i].slot;
    }
    return bind;
}

/* Flow gi, `left` bytes to go at t, bound by `bind` (tightest) at `rate`. */
static int bind_flow(walk_t *w, int gi, double t, double left, int bind, double rate) {
    flow_t *f = &w->flow[gi];
    f->bind = bind;
    for (size_t i = 0; i < f->nuse; i++) {
        f->use[i].listed = bind >= 0 && f->use[i].slot != bind && binder_add(&w->slot[f->use[i].slot], bind);
        if (bind >= 0 && f->use[i].slot != bind && !f->use[i].listed) w->slot[bind].unlisted++;
    }
    raise_most(w, f, rate);
    if (f->bind < 0) {
        f->left = left;
        f->since = t;
        return place_event(w, w->nslots + gi, left <= 0 || f->cap == INFINITY ? t : t + left / f->cap);
    }
    slot_t *s = &w->slot[f->bind];
    const double other = other_rate(w, f);
    if (other < s->least) s->least = other;
    slot_sync(s, t);
    w->tag[gi] = s->vclock + left;
    slot_dirty(w, f->bind);
    return ih_set(&s->bound, w->tag, w->tpos, gi) == AR_OK ? AR_OK : AR_ENOMEM;
}

static void unbind_flow(walk_t *w, int gi) {
    const flow_t *f = &w->flow[gi];
    if (f->bind < 0) {
        drop_event(w, w->nslots + gi);
        return;
    }
    slot_t *s = &w->slot[f->bind];
    for (size_t i = 0; i < f->nuse; i++) {
        if (f->use[i].slot == f->bind) continue;
        if (f->use[i].listed) binder_drop(&w->slot[f->use[i].slot], f->bind);
        else s->unlisted--;
    }
    ih_remove(&s->bound, w->tpos, gi);
    if (!s->bound.n) s->least = INFINITY;
    slot_dirty(w, f->bind);
}

/* Flow gi at t: its rate, and its binding where another resource is now tighter. */
static int rebind(walk_t *w, int gi, double t) {
    flow_t *f = &w->flow[gi];
    double rate;
    const int bind = tightest(w, f, &rate);
    if (!(rate < flow_rate(w, f))) { /* its binding holds */
        raise_most(w, f, rate);
        return AR_OK;
    }
    const double left = flow_left(w, gi, t);
    unbind_flow(w, gi);
    return bind_flow(w, gi, t, left, bind, rate);
}

/* A COPY/REDUCE issued by channel gi: a flow from its first byte. */
static int run_op(walk_t *w, int gi, const ar_op_t *op, ar_error_t *err) {
    int ntraffic = 0;
    flow_t *f = &w->flow[gi];
    f->op = op;
    f->start = ar_clock_now(&w->clk, gi);
    if (ar_clock_op_begin(&w->clk, gi, op, &f->cost, w->traffic, w->max_traffic, &ntraffic) != AR_OK)
        return AR_ERR(err, AR_ENOMEM, "analytic: cost of rank %d op %u", gi / w->p->nchannels, w->ch[gi].pc);
    f->from = f->start + f->cost.lat_s;
    f->cap = f->cost.move_s > 0 ? f->cost.bytes / f->cost.move_s : INFINITY;
    f->nuse = 0;
    for (int i = 0; i < ntraffic && f->cost.bytes > 0; i++) {
        double cap;
        const int slot = resource_slot(w, &w->traffic[i], &cap);
        if (slot < 0 || !(cap > 0) || w->traffic[i].bytes <= 0) continue;
        const double per = w->traffic[i].bytes / f->cost.bytes;
        if (w->use_pos[slot]) { /* two resources of one orbit, or a route's hops: one slot */
            f->use[w->use_pos[slot] - 1].per += per;
            continue;
        }
        if (ar_grow(&f->use, &f->cap_use, f->nuse, sizeof *f->use) != AR_OK) return oom(err);
        w->slot[slot].cap = cap;
        f->use[f->nuse++] = (use_t){slot, per, 0, 0};
        w->use_pos[slot] = (int)f->nuse;
    }
    for (size_t u = 0; u < f->nuse; u++) w->use_pos[f->use[u].slot] = 0;
    if (place_event(w, w->nslots + gi, f->from) != AR_OK) return oom(err);
    return AR_OK;
}

/* Flow gi streams from t: its weight joins its resources'. It is bound once every weight of
 * this moment is in. */
static int begin_flow(walk_t *w, int gi, double t, ar_error_t *err) {
    flow_t *f = &w->flow[gi];
    f->streaming = 1;
    f->mark = w->epoch;
    for (size_t i = 0; i < f->nuse; i++) {
        slot_t *s = &w->slot[f->use[i].slot];
        touch(w, f->use[i].slot, t);
        if (ar_grow(&s->m, &s->capm, s->n, sizeof *s->m) != AR_OK) return oom(err);
        f->use[i].pos = s->n;
        s->m[s->n++] = (member_t){gi, (int)i};
        s->weight += f->use[i].per;
        s->share = s->cap / s->weight;
        slot_fell(w, s);
    }
    w->begun[w->nbegun++] = gi;
    return AR_OK;
}

/* Flow gi's last byte crossed at t: its weight leaves its resources, its channel goes on. */
static int end_flow(walk_t *w, int gi, double t, ar_error_t *err) {
    flow_t *f = &w->flow[gi];
    unbind_flow(w, gi);
    f->streaming = 0;
    for (size_t i = 0; i < f->nuse; i++) {
        slot_t *s = &w->slot[f->use[i].slot];
        touch(w, f->use[i].slot, t);
        const member_t last = s->m[--s->n];
        if (f->use[i].pos < s->n) {
            s->m[f->use[i].pos] = last;
            w->flow[last.gi].use[last.ui].pos = f->use[i].pos;
        }
        s->weight = s->n ? s->weight - f->use[i].per : 0;
        s->share = s->n ? s->cap / s->weight : INFINITY;
        if (w->breakdown && f->use[i].slot < 2 * w->t->nlinks) {
            linkacc_t *l = &w->links[f->use[i].slot];
            l->bytes += f->use[i].per * f->cost.bytes;
            if (t > f->from && span_add(l, f->from, t) != AR_OK) return oom(err);
        }
    }
    const double own = f->from + f->cost.move_s;
    /* unhindered, the clock's own rule (and its exact sums) */
    ar_clock_op_end(&w->clk, gi, f->op, &f->cost, f->start, near_or_below(t, own) ? -1 : t, -1);
    w->ch[gi].pc++;
    w->ops++;
    return requeue(w, gi, err);
}

/* Every flow that begins or ends at t; then, the weights all in, the binding of every flow
 * whose tightest resource may have changed: a resource whose share rose may no longer bind
 * its flows, one whose share fell below a flow's rate now binds it. */
static int flows_at(walk_t *w, double t, ar_error_t *err) {
    w->epoch++;
    w->ntouched = w->ndirty = w->nbegun = 0;
    while (w->events.n && near_or_below(w->events.e[0].key, t)) {
        const int id = w->events.e[0].id;
        ih_remove(&w->events, w->epos, id);
        if (id >= w->nslots) {
            const int gi = id - w->nslots;
            AR_TRY(w->flow[gi].streaming ? end_flow(w, gi, t, err) : begin_flow(w, gi, t, err));
            continue;
        }
        slot_t *s = &w->slot[id];
        slot_dirty(w, id);
        slot_sync(s, t);
        while (s->bound.n) {
            const int gi = s->bound.e[0].id;
            if (!near_or_below(s->vtime + (w->tag[gi] - s->vclock) / s->share, t)) break;
            AR_TRY(end_flow(w, gi, t, err));
        }
    }
    for (size_t k = 0; k < w->ntouched; k++) {
        const int id = w->touched[k];
        slot_t *s = &w->slot[id];
        if (s->share > s->before) {
            if (!s->unlisted && !(s->least < s->share)) continue; /* every flow it binds keeps it */
            /* Its flows are faster here: each may now be bound elsewhere (and leave the
             * heap, so it is read from a copy). */
            size_t n = 0;
            double least = INFINITY;
            for (size_t j = 0; j < s->bound.n; j++) {
                const flow_t *f = &w->flow[s->bound.e[j].id];
                if (f->mark != w->epoch) w->scratch[n++] = s->bound.e[j].id;
                else least = fmin(least, other_rate(w, f));
            }
            for (size_t j = 0; j < n; j++) {
                const flow_t *f = &w->flow[w->scratch[j]];
                w->flow[w->scratch[j]].mark = w->epoch;
                if (rebind(w, w->scratch[j], t) != AR_OK) return oom(err);
                if (f->bind == id) least = fmin(least, other_rate(w, f));
            }
            s->least = least;
        } else if (s->share < slot_most(w, s)) {
            /* Slower here: the flows it does not bind that were faster now are bound by
             * it, or by something tighter still. */
            double most = 0;
            for (size_t j = 0; j < s->n; j++) {
                const int gi = s->m[j].gi;
                flow_t *f = &w->flow[gi];
                if (f->bind == id) continue;
                if (f->mark != w->epoch && s->share < flow_rate(w, f)) {
                    f->mark = w->epoch;
                    if (rebind(w, gi, t) != AR_OK) return oom(err);
                }
                if (f->bind != id && !f->use[s->m[j].ui].listed && flow_rate(w, f) > most) most = flow_rate(w, f);
            }
            s->most = most;
        }
    }
    for (size_t k = 0; k < w->nbegun; k++) {
        const int gi = w->begun[k];
        double rate;
        const int bind = tightest(w, &w->flow[gi], &rate);
        if (bind_flow(w, gi, t, w->flow[gi].cost.bytes > 0 ? w->flow[gi].cost.bytes : 0, bind, rate) != AR_OK)
            return oom(err);
    }
    for (size_t k = 0; k < w->ndirty; k++)
        if (place_slot(w, w->dirty[k]) != AR_OK) return oom(err);
    return AR_OK;
}

/* Run channel gi from its clock until it issues a timed op, blocks, or ends. */
static int advance(walk_t *w, int gi, ar_error_t *err) {
    const ar_plan_t *p = w->p;
    const ar_chan_t *chan = &p->chans[gi];
    chan_state_t *c = &w->ch[gi];
    int rank = gi / p->nchannels;
    while (c->pc < chan->nops) {
        const ar_op_t *op = &p->ops[chan->first + c->pc];
        const double before = ar_clock_now(&w->clk, gi);
        switch (op->code) {
        case AR_OP_WAIT:
            /* epoch 0: a WAIT back 1 (or count 0) looks at no SIGNAL of this execution */
            if (!op->back && w->flags[ar_plan_flag(p, rank, op->flag)] < op->count) {
                c->waiting = 1;
                return AR_OK;
            }
            ar_clock_wait(&w->clk, gi, -1, before, before, NULL);
            break;
        case AR_OP_SIGNAL: {
            event_t e = {.kind = EV_ARRIVE, .rank = ar_plan_signal_rank(p, op), .flag = op->flag};
            e.t = ar_clock_signal(&w->clk, gi, c->pc, op, e.terms);
            if (queue_push(&w->queue, &e) != AR_OK) return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
            break;
        }
        default: /* a flow: end_flow() moves the channel on once its bytes have crossed */
            return run_op(w, gi, op, err);
        }
        c->pc++;
        w->ops++;
        /* Time passed: later ops may WAIT, so let every event before the new clock happen first. */
        if (ar_clock_now(&w->clk, gi) > before) return requeue(w, gi, err);
    }
    ar_clock_chan_end(&w->clk, gi);
    return AR_OK;
}

static int arrive(walk_t *w, const event_t *e, ar_error_t *err) {
    const ar_plan_t *p = w->p;
    uint64_t have = ++w->flags[ar_plan_flag(p, e->rank, e->flag)];
    for (int c = 0; c < p->nchannels; c++) {
        int gi = e->rank * p->nchannels + c;
        chan_state_t *cs = &w->ch[gi];
        if (!cs->waiting) continue;
        const ar_op_t *op = &p->ops[p->chans[gi].first + cs->pc];
        if (op->flag != e->flag || op->count > have) continue;
        /* Released by this SIGNAL. */
        cs->waiting = 0;
        const double before = ar_clock_now(&w->clk, gi);
        ar_clock_wait(&w->clk, gi, 0, e->t, e->t, e->terms);
        cs->pc++;
        w->ops++;
        if (ar_clock_now(&w->clk, gi) > before) AR_TRY(requeue(w, gi, err));
        else AR_TRY(advance(w, gi, err));
    }
    return AR_OK;
}

static int analytic_execute(ar_backend_t *be, const ar_plan_t *p, const ar_run_opts_t *opts,
                            ar_result_t *res, ar_error_t *err) {
    double t0 = ar_now_s();
    const ar_topo_t *t = be->topo;
    memset(res, 0, sizeof *res);
    AR_TRY(ar__backend_check_plan(p, t, err));
    AR_TRY(ar_cost_check_capacity(t, p, opts->buffer, err));

    int nch = ar_plan_run_chans(p), rc = AR_OK;
    walk_t w;
    memset(&w, 0, sizeof w);
    w.queue.last = w.queue.free_blk = -1;
    w.t = t;
    w.p = p;
    w.breakdown = opts->breakdown;
    w.ch = calloc((size_t)nch, sizeof *w.ch);
    w.flags = calloc(ar_plan_flag_slots(p), sizeof *w.flags);
    const int clk_rc = ar_clock_init(&w.clk, t, p, opts->buffer);
    w.buffer = opts->buffer;
    w.max_traffic = ar_cost_max_traffic(t);
    w.traffic = calloc((size_t)w.max_traffic, sizeof *w.traffic);
    const size_t nslots = (size_t)2 * t->nlinks + 5 * (size_t)t->ndevices;
    w.slot = calloc(nslots, sizeof *w.slot);
    w.touched = calloc(nslots, sizeof *w.touched);
    w.use_pos = calloc(nslots, sizeof *w.use_pos);
    w.dirty = calloc(nslots, sizeof *w.dirty);
    w.flow = calloc((size_t)nch, sizeof *w.flow);
    w.begun = calloc((size_t)nch, sizeof *w.begun);
    w.scratch = calloc((size_t)nch, sizeof *w.scratch);
    w.nslots = (int)nslots;
    w.ekey = calloc(nslots + (size_t)nch, sizeof *w.ekey);
    w.epos = malloc((nslots + (size_t)nch) * sizeof *w.epos);
    w.tag = calloc((size_t)nch, sizeof *w.tag);
    w.tpos = malloc((size_t)nch * sizeof *w.tpos);
    if (w.breakdown) w.links = calloc((size_t)2 * t->nlinks + 1, sizeof *w.links);
    if (p->only_rank >= 0) {
        w.fold = malloc((size_t)2 * t->nlinks * sizeof *w.fold + 1);
        w.shifts = ar_plan_shifts(p);
        if (w.fold && ar_topo_fold_links(t, w.shifts, w.fold) != AR_OK) {
            rc = AR_ERR(err, AR_EPLAN, "analytic: %s has no translations for a plan of one rank", t->name);
            goto out;
        }
    }
    if (!w.ch || !w.flags || clk_rc != AR_OK || !w.traffic || !w.slot || !w.touched || !w.use_pos || !w.dirty || !w.flow ||
        !w.begun || !w.scratch || !w.ekey || !w.epos || !w.tag || !w.tpos || (w.breakdown && !w.links) ||
        (p->only_rank >= 0 && !w.fold)) {
        rc = AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
        goto out;
    }
    for (size_t k = 0; k < nslots + (size_t)nch; k++) w.epos[k] = -1;
    for (int gi = 0; gi < nch; gi++) w.tpos[gi] = -1;
    for (size_t k = 0; k < nslots; k++) w.slot[k].share = w.slot[k].least = INFINITY;

    ar_progress_t pg;
    ar_progress_start(&pg, opts, p->nops);
    for (int gi = 0; gi < nch; gi++) AR_TRY_GOTO(advance(&w, gi, err), rc, out);
    /* a channel's clock at an event is a floor of the execution's time (its launch comes on top) */
    const double stop_at = opts->stop_past_s > 0 ? opts->stop_past_s : INFINITY;
    for (;;) {
        const double next_flow = w.events.n ? w.events.e[0].key : INFINITY;
        if (queue_first(&w.queue) < next_flow) {
            event_t e = queue_pop(&w.queue);
            if (e.kind == EV_READY && e.t > stop_at) {
                memset(res, 0, sizeof *res);
                res->time_s = INFINITY;
                res->ops_executed = w.ops;
                goto out;
            }
            ar_progress_tick(&pg, e.t, w.ops);
            if (e.kind == EV_READY) AR_TRY_GOTO(advance(&w, e.chan, err), rc, out);
            else AR_TRY_GOTO(arrive(&w, &e, err), rc, out);
        } else if (w.events.n) {
            AR_TRY_GOTO(flows_at(&w, next_flow, err), rc, out);
        } else {
            break;
        }
    }

    for (int gi = 0; gi < nch; gi++) {
        const chan_state_t *c = &w.ch[gi];
        if (c->pc < p->chans[gi].nops) {
            int rank = gi / p->nchannels;
            const ar_op_t *op = &p->ops[p->chans[gi].first + c->pc];
            rc = AR_ERR(err, AR_EPLAN,
                        "deadlock: rank %d channel %d op %u waits for flag %u to reach %" PRIu64
                        " but only %" PRIu64 " SIGNALs arrive",
                        rank, gi % p->nchannels, c->pc, op->flag, op->count,
                        w.flags[ar_plan_flag(p, rank, op->flag)]);
            goto out;
        }
    }
    ar_clock_result(&w.clk, res);
    res->ops_executed = w.ops;

    if (w.breakdown) {
        res->links = calloc((size_t)2 * t->nlinks + 1, sizeof *res->links);
        if (!res->links) {
            rc = AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
            goto out;
        }
        for (int l = 0; l < t->nlinks; l++)
            for (int d = 0; d < 2; d++) {
                ar_link_stat_t *s = &res->links[res->nlinks++];
                linkacc_t *acc = &w.links[l * 2 + d];
                double cap = ar_topo_link_gbps(t, l) * 1e9;
                s->link = l;
                s->dir = d ? -1 : 1;
                s->bytes = acc->bytes;
                s->busy_s = span_union(acc);
                s->util = res->time_s > 0 && cap > 0 ? acc->bytes / (cap * res->time_s) : 0;
            }
    }
out:
    if (w.links)
        for (int l = 0; l < 2 * t->nlinks + 1; l++) free(w.links[l].spans);
    free(w.links);
    free(w.fold);
    free(w.traffic);
    for (size_t k = 0; w.slot && k < nslots; k++) {
        free(w.slot[k].m);
        free(w.slot[k].bound.e);
    }
    free(w.slot);
    free(w.touched);
    free(w.use_pos);
    free(w.dirty);
    free(w.begun);
    free(w.scratch);
    free(w.ekey);
    free(w.epos);
    free(w.tag);
    free(w.tpos);
    free(w.events.e);
    for (int gi = 0; w.flow && gi < nch; gi++) free(w.flow[gi].use);
    free(w.flow);
    free(w.ch);
    free(w.flags);
    ar_clock_free(&w.clk);
    queue_free(&w.queue);
    res->sim_wall_s = ar_now_s() - t0;
    return rc;
}

/* Beside the plan: each channel's clock, state and flow, each flag's, each resource's rate. */
static double analytic_run_bytes(const ar_topo_t *t, const ar_plan_size_t *s) {
    return 512.0 * (double)s->run_chans + 16.0 * (double)s->flag_slots + 64.0 * t->nlinks +
           24.0 * (2.0 * t->nlinks + 3.0 * t->ndevices);
}

const ar_backend_ops_t ar_analytic_backend = {
    .name = "analytic", .caps = AR_BACKEND_MODEL, .fits = ar__backend_model_fits, .admits = ar__backend_model_admits,
    .execute = analytic_execute,
    .run_bytes = analytic_run_bytes,
    .summary = "critical path from the model's per-op costs, channels sharing what they use; sim's fast estimate",
};
