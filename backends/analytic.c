/* The analytic backend: the critical path of one plan execution, fast.
 *
 * A discrete-event walk over the channel clock of arsim/cost.h (cost/clock.c), which
 * holds every sequencing rule and the critical path by term; this file only decides
 * the order in which channels move and how fast their bytes stream: events in time
 * order, so a WAIT holds its channel until the count-th SIGNAL to *arrive* at that
 * flag. A COPY/REDUCE is a flow from its first byte (its latency after its issue) until
 * its bytes have crossed every resource it uses (ar_cost_op's traffic: link directions,
 * device memories, host links, link issue). Flows share resources max-min fairly, as
 * SimGrid shares them in the sim backend: whenever a flow begins or ends, the rates of
 * all that stream are filled again (every flow rises at one rate, in bytes/s of its op,
 * until a resource it uses is full or its own bottleneck, ar_cost_op's move_s, is
 * reached). So a flow that joins a busy link slows those already on it, and a flow held
 * at a busy link elsewhere leaves the rest of its other links to others; what only the
 * sim backend adds is SimGrid's own numerics.
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

/* ---- a binary heap of events, ordered by (time, sequence) ---- */

enum { EV_READY, EV_ARRIVE };

typedef struct event_s {
    double t;
    uint64_t seq;
    int kind;
    int chan;                  /* EV_READY: global channel index */
    int rank;                  /* EV_ARRIVE: target rank and flag */
    uint32_t flag;
    double terms[AR_NTERM];    /* EV_ARRIVE: the sender's path + signal latency */
} event_t;

typedef struct heap_s {
    event_t *ev;
    size_t n, cap;
    uint64_t seq;
} heap_t;

static int ev_less(const event_t *a, const event_t *b) {
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static int heap_push(heap_t *h, event_t e) {
    if (ar_grow(&h->ev, &h->cap, h->n, sizeof *h->ev) != AR_OK) return AR_ENOMEM;
    e.seq = h->seq++;
    size_t i = h->n++;
    while (i > 0 && ev_less(&e, &h->ev[(i - 1) / 2])) {
        h->ev[i] = h->ev[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->ev[i] = e;
    return AR_OK;
}

static event_t heap_pop(heap_t *h) {
    event_t top = h->ev[0], last = h->ev[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && ev_less(&h->ev[c + 1], &h->ev[c])) c++;
        if (!ev_less(&h->ev[c], &last)) break;
        h->ev[i] = h->ev[c];
        i = c;
    }
    if (h->n) h->ev[i] = last;
    return top;
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

/* One resource a flow uses: its slot (resource_slot) and its bytes per byte of the op. */
typedef struct use_s {
    int slot;
    double per;
} use_t;

/* The COPY/REDUCE a channel has in flight (a channel has one at most): from `from` (its
 * first byte) its `left` bytes stream at `rate`, bytes/s of the op, no faster than `cap`
 * (its own bottleneck: bytes / move_s). */
typedef struct flow_s {
    const ar_op_t *op;
    ar_op_cost_t cost;
    double start, from, left, rate, cap;
    double end; /* at its rate since the fill: when its last byte crosses */
    int state;  /* FLOW_* */
    use_t *use;
    size_t nuse, cap_use;
} flow_t;

enum { FLOW_IDLE, FLOW_WAITING, FLOW_STREAMING };

typedef struct walk_s {
    const ar_topo_t *t;
    const ar_plan_t *p;
    int breakdown;
    ar_mem_t buffer;
    ar_clock_t clk;           /* the channel clock (cost.h): every channel's time and path */
    chan_state_t *ch;
    uint64_t *flags;          /* nranks * nflags: arrivals so far */
    heap_t heap;
    linkacc_t *links;         /* 2 * nlinks: index link * 2 + (dir < 0) */
    ar_op_traffic_t *traffic;
    int max_traffic;
    flow_t *flow;             /* per channel */
    int *active;              /* the channels with a flow in flight */
    size_t nactive;
    double now;               /* the flows' rates were filled at now, their bytes left counted then */
    int stale;                /* a flow began or ended since: fill again */
    double next_end, next_from; /* after the fill: the first flow to end, the first to begin */
    double *cap, *weight;     /* per resource slot: its rate, the weight of the flows across it */
    uint64_t ops;
} walk_t;

/* Channel gi goes on once every event before its clock has happened. */
static int requeue(walk_t *w, int gi, ar_error_t *err) {
    event_t e = {.t = ar_clock_now(&w->clk, gi), .kind = EV_READY, .chan = gi};
    if (heap_push(&w->heap, e) != AR_OK) return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
    return AR_OK;
}

/* The slot of a resource and its rate in bytes/s (-1: no rate bounds it): link
 * directions, then per device its memory, host link and link issue. */
static int resource_slot(const walk_t *w, const ar_op_traffic_t *r, double *cap) {
    const ar_topo_t *t = w->t;
    const ar_model_t *m = t->model;
    const int L = 2 * t->nlinks, D = t->ndevices;
    switch (r->res) {
    case AR_RES_LINK: *cap = ar_topo_link_gbps(t, r->link) * 1e9; return r->link * 2 + (r->dir < 0);
    case AR_RES_MEMORY: *cap = ar_cost_mem_gbps(&m->mem[w->buffer]) * 1e9; return L + r->link;
    case AR_RES_HOST: *cap = m->host_link_gbps * 1e9; return L + D + r->link;
    case AR_RES_ISSUE: *cap = m->link_issue_gbps * 1e9; return *cap > 0 ? L + 2 * D + r->link : -1;
    }
    return -1;
}

/* Close to: a within a relative hair of b, the rounding of the sums below. */
static int near_or_below(double a, double b) { return a <= b + 1e-12 * fabs(b); }

/* The flows stream until t. */
static void stream_until(walk_t *w, double t) {
    if (t <= w->now) return;
    for (size_t a = 0; a < w->nactive; a++) {
        flow_t *f = &w->flow[w->active[a]];
        if (f->state == FLOW_STREAMING && f->rate < INFINITY) f->left -= f->rate * (t - w->now);
    }
    w->now = t;
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
    f->left = f->cost.bytes > 0 ? f->cost.bytes : 0;
    f->cap = f->cost.move_s > 0 ? f->cost.bytes / f->cost.move_s : INFINITY;
    f->rate = 0;
    f->state = FLOW_WAITING;
    f->nuse = 0;
    for (int i = 0; i < ntraffic && f->left > 0; i++) {
        double cap;
        const int slot = resource_slot(w, &w->traffic[i], &cap);
        if (slot < 0 || !(cap > 0) || w->traffic[i].bytes <= 0) continue;
        if (ar_grow(&f->use, &f->cap_use, f->nuse, sizeof *f->use) != AR_OK)
            return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
        w->cap[slot] = cap;
        f->use[f->nuse++] = (use_t){slot, w->traffic[i].bytes / f->cost.bytes};
    }
    w->active[w->nactive++] = gi;
    /* It changes the rates once its first byte moves; until then it only waits. */
    if (near_or_below(f->from, f->start) && f->left > 0) {
        stream_until(w, f->start);
        w->stale = 1;
    } else if (f->from < w->next_from) {
        w->next_from = f->from;
    }
    return AR_OK;
}

/* The rates of the flows at w->now: each resource is shared among the flows that stream
 * across it in proportion to what each puts on it (their bytes per byte of their op), and a
 * flow streams at its tightest share, no faster than its own bottleneck. No resource ever
 * carries more than its rate; a share a flow held elsewhere leaves unused is not handed on
 * (SimGrid's max-min fill would), which the sim backend's rows show to cost little, and
 * keeps a change local to the resources of the flows that begin or end. A flow before its
 * first byte waits. */
static void fill(walk_t *w) {
    for (size_t a = 0; a < w->nactive; a++) {
        const flow_t *f = &w->flow[w->active[a]];
        for (size_t i = 0; i < f->nuse; i++) w->weight[f->use[i].slot] = 0;
    }
    for (size_t a = 0; a < w->nactive; a++) {
        flow_t *f = &w->flow[w->active[a]];
        f->state = near_or_below(f->from, w->now) ? FLOW_STREAMING : FLOW_WAITING;
        if (f->state == FLOW_STREAMING)
            for (size_t i = 0; i < f->nuse; i++) w->weight[f->use[i].slot] += f->use[i].per;
    }
    for (size_t a = 0; a < w->nactive; a++) {
        flow_t *f = &w->flow[w->active[a]];
        f->rate = 0;
        if (f->state != FLOW_STREAMING) continue;
        f->rate = f->cap;
        for (size_t i = 0; i < f->nuse; i++) {
            const int s = f->use[i].slot;
            if (w->cap[s] / w->weight[s] < f->rate) f->rate = w->cap[s] / w->weight[s];
        }
    }
    w->stale = 0;
}

/* When the next flow begins or ends (INFINITY: none is in flight). */
static double next_change(walk_t *w) {
    if (w->stale) {
        fill(w);
        w->next_end = w->next_from = INFINITY;
        for (size_t a = 0; a < w->nactive; a++) {
            const flow_t *f = &w->flow[w->active[a]];
            if (f->state == FLOW_WAITING) {
                if (f->from < w->next_from) w->next_from = f->from;
                continue;
            }
            flow_t *g = &w->flow[w->active[a]];
            g->end = f->left <= 0 || f->rate == INFINITY ? w->now
                     : f->rate > 0                         ? w->now + f->left / f->rate
                                                           : INFINITY;
            if (g->end < w->next_end) w->next_end = g->end;
        }
    }
    return w->next_end < w->next_from ? w->next_end : w->next_from;
}

/* At `t` (next_change): the flows that begin change every rate; the flows whose bytes have
 * all crossed end, and their channels go on. */
static int change(walk_t *w, double t, ar_error_t *err) {
    stream_until(w, t);
    w->stale = 1;
    for (size_t a = 0; a < w->nactive;) {
        const int gi = w->active[a];
        flow_t *f = &w->flow[gi];
        const int done = f->state != FLOW_WAITING && near_or_below(f->end, t);
        if (!done) {
            a++;
            continue;
        }
        w->active[a] = w->active[--w->nactive];
        f->state = FLOW_IDLE;
        for (size_t i = 0; w->breakdown && i < f->nuse; i++) {
            if (f->use[i].slot >= 2 * w->t->nlinks) continue;
            linkacc_t *l = &w->links[f->use[i].slot];
            l->bytes += f->use[i].per * f->cost.bytes;
            if (t > f->from && span_add(l, f->from, t) != AR_OK)
                return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
        }
        const double own = f->from + f->cost.move_s;
        /* unhindered, the clock's own rule (and its exact sums) */
        ar_clock_op_end(&w->clk, gi, f->op, &f->cost, f->start, near_or_below(t, own) ? -1 : t, -1);
        w->ch[gi].pc++;
        w->ops++;
        AR_TRY(requeue(w, gi, err));
    }
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
            if (!op->back && w->flags[(size_t)rank * p->nflags + op->flag] < op->count) {
                c->waiting = 1;
                return AR_OK;
            }
            ar_clock_wait(&w->clk, gi, -1, before, before, NULL);
            break;
        case AR_OP_SIGNAL: {
            event_t e = {.kind = EV_ARRIVE, .rank = op->dst.rank, .flag = op->flag};
            e.t = ar_clock_signal(&w->clk, gi, c->pc, op, e.terms);
            if (heap_push(&w->heap, e) != AR_OK) return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
            break;
        }
        default: /* a flow: change() moves the channel on once its bytes have crossed */
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
    uint64_t have = ++w->flags[(size_t)e->rank * p->nflags + e->flag];
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

    int nch = p->nranks * p->nchannels, rc = AR_OK;
    walk_t w;
    memset(&w, 0, sizeof w);
    w.t = t;
    w.p = p;
    w.breakdown = opts->breakdown;
    w.ch = calloc((size_t)nch, sizeof *w.ch);
    w.flags = calloc((size_t)p->nranks * p->nflags, sizeof *w.flags);
    const int clk_rc = ar_clock_init(&w.clk, t, p, opts->buffer);
    w.buffer = opts->buffer;
    w.next_end = w.next_from = INFINITY;
    w.max_traffic = 2 * t->nlinks + t->ndevices + 3;
    w.traffic = calloc((size_t)w.max_traffic, sizeof *w.traffic);
    const size_t nslots = (size_t)2 * t->nlinks + 3 * (size_t)t->ndevices;
    w.cap = calloc(nslots, sizeof *w.cap);
    w.weight = calloc(nslots, sizeof *w.weight);
    w.flow = calloc((size_t)nch, sizeof *w.flow);
    w.active = calloc((size_t)nch, sizeof *w.active);
    if (w.breakdown) w.links = calloc((size_t)2 * t->nlinks + 1, sizeof *w.links);
    if (!w.ch || !w.flags || clk_rc != AR_OK || !w.traffic || !w.cap || !w.weight || !w.flow ||
        !w.active || (w.breakdown && !w.links)) {
        rc = AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
        goto out;
    }

    ar_progress_t pg;
    ar_progress_start(&pg, opts, p->nops);
    for (int gi = 0; gi < nch; gi++) AR_TRY_GOTO(advance(&w, gi, err), rc, out);
    for (;;) {
        const double next = next_change(&w);
        if (w.heap.n && w.heap.ev[0].t < next) {
            event_t e = heap_pop(&w.heap);
            ar_progress_tick(&pg, e.t, w.ops);
            if (e.kind == EV_READY) AR_TRY_GOTO(advance(&w, e.chan, err), rc, out);
            else AR_TRY_GOTO(arrive(&w, &e, err), rc, out);
        } else if (next < INFINITY) {
            AR_TRY_GOTO(change(&w, next, err), rc, out);
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
                        w.flags[(size_t)rank * p->nflags + op->flag]);
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
    free(w.traffic);
    free(w.cap);
    free(w.weight);
    for (int gi = 0; w.flow && gi < nch; gi++) free(w.flow[gi].use);
    free(w.flow);
    free(w.active);
    free(w.ch);
    free(w.flags);
    ar_clock_free(&w.clk);
    free(w.heap.ev);
    res->sim_wall_s = ar_now_s() - t0;
    return rc;
}

/* Beside the plan: each channel's clock, state and flow, each flag's, each resource's rate. */
static double analytic_run_bytes(const ar_topo_t *t, const ar_plan_size_t *s) {
    return 512.0 * s->nranks * s->nchannels + 16.0 * s->nranks * s->nflags + 64.0 * t->nlinks +
           24.0 * (2.0 * t->nlinks + 3.0 * t->ndevices);
}

const ar_backend_ops_t ar_analytic_backend = {
    .name = "analytic", .caps = AR_BACKEND_MODEL, .fits = ar__backend_model_fits, .execute = analytic_execute,
    .run_bytes = analytic_run_bytes,
    .summary = "critical path from the model's per-op costs, channels sharing what they use; sim's fast estimate",
};
