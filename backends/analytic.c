/* The analytic backend: the critical path of one plan execution, fast.
 *
 * A discrete-event walk over the channel clock of arsim/cost.h (cost/clock.c), which
 * holds every sequencing rule and the critical path by term; this file only decides
 * the order in which channels move: events in time order, so a WAIT holds its channel
 * until the count-th SIGNAL to *arrive* at that flag. A COPY/REDUCE streams at its own
 * bottleneck (ar_cost_op), and no faster than the resources it uses (link directions,
 * device memories, host links, link issue) can carry it after what they already carry:
 * each keeps a backlog, when the bytes given to it so far will have crossed at its full
 * rate. An op issued is held until its first byte moves (its latency after its issue),
 * and every op other channels issue before that moment joins its batch; then the ops of
 * the batch that use one resource share it fairly (processor sharing: an op of b bytes
 * among ops of b_j ends sum_j min(b_j, b) / rate after the backlog), and the backlog grows
 * by all their bytes. Channels in step stay in step, as in the sim backend, where SimGrid
 * shares every resource among what runs at once, even when their starts differ by less
 * than an op's latency (blocks of a launch start launch_block_ns apart): resolved at the
 * moment of issue instead, the first of them would take the resource first and the rest
 * queue behind it, which pipelines channels that in fact move together. No op of a batch
 * ends before the batch is resolved, so no channel goes on in the past.
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

enum { EV_READY, EV_ARRIVE, EV_RESOLVE };

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

/* A COPY/REDUCE issued, waiting for the rest of its batch (the ops issued at its moment). */
typedef struct pending_s {
    int gi;
    const ar_op_t *op;
    ar_op_cost_t cost;
    double start, streamed;
} pending_t;

/* One resource one pending op uses: its backlog slot, rate and bytes; end: when the op's
 * bytes have crossed it. */
typedef struct use_s {
    int slot, pend;
    double cap, bytes, end;
} use_t;

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
    double *backlog;          /* per resource (backlog_slot): when the bytes given so far have crossed */
    ar_op_traffic_t *traffic;
    int max_traffic;
    pending_t *pend;          /* the batch being issued */
    size_t npend, cap_pend;
    use_t *use;               /* the batch's resources, every op's */
    size_t nuse, cap_use;
    uint64_t ops;
} walk_t;

/* Channel gi goes on once every event before its clock has happened. */
static int requeue(walk_t *w, int gi, ar_error_t *err) {
    event_t e = {.t = ar_clock_now(&w->clk, gi), .kind = EV_READY, .chan = gi};
    if (heap_push(&w->heap, e) != AR_OK) return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
    return AR_OK;
}

/* The backlog slot of a resource and its rate in bytes/s (-1: no rate bounds it): link
 * directions, then per device its memory, host link and link issue. */
static int backlog_slot(const walk_t *w, const ar_op_traffic_t *r, double *cap) {
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

/* A COPY/REDUCE issued by channel gi: its cost, and the resources it uses, held for its
 * batch (resolve, at the same moment once every channel has issued). */
static int run_op(walk_t *w, int gi, const ar_op_t *op, ar_error_t *err) {
    int ntraffic = 0;
    if (ar_grow(&w->pend, &w->cap_pend, w->npend, sizeof *w->pend) != AR_OK)
        return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
    pending_t *pd = &w->pend[w->npend];
    pd->gi = gi;
    pd->op = op;
    pd->start = ar_clock_now(&w->clk, gi);
    if (ar_clock_op_begin(&w->clk, gi, op, &pd->cost, w->traffic, w->max_traffic, &ntraffic) != AR_OK)
        return AR_ERR(err, AR_ENOMEM, "analytic: cost of rank %d op %u", gi / w->p->nchannels, w->ch[gi].pc);
    pd->streamed = pd->start + pd->cost.lat_s + pd->cost.move_s; /* its own bottleneck */
    for (int i = 0; i < ntraffic; i++) {
        double cap;
        const int slot = backlog_slot(w, &w->traffic[i], &cap);
        if (slot < 0 || w->traffic[i].bytes <= 0) continue;
        if (ar_grow(&w->use, &w->cap_use, w->nuse, sizeof *w->use) != AR_OK)
            return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
        w->use[w->nuse++] = (use_t){slot, (int)w->npend, cap, w->traffic[i].bytes, 0};
    }
    if (w->npend++ == 0) { /* the first of its batch: resolve once the moment its first byte moves has
                            * come, so every op issued before then shares the resources with it */
        event_t e = {.t = pd->start + pd->cost.lat_s, .kind = EV_RESOLVE};
        if (heap_push(&w->heap, e) != AR_OK) return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
    }
    return AR_OK;
}

static int use_cmp(const void *x, const void *y) {
    const use_t *a = x, *b = y;
    if (a->slot != b->slot) return a->slot < b->slot ? -1 : 1;
    return a->bytes < b->bytes ? -1 : a->bytes > b->bytes;
}

/* The batch: per resource, its ops share it fairly after its backlog; each op has streamed
 * once every resource has carried its bytes (and not before its own bottleneck allows). */
static int resolve(walk_t *w, double now, ar_error_t *err) {
    qsort(w->use, w->nuse, sizeof *w->use, use_cmp);
    for (size_t g = 0; g < w->nuse;) {
        size_t e = g;
        double first = INFINITY;
        while (e < w->nuse && w->use[e].slot == w->use[g].slot) {
            const pending_t *pd = &w->pend[w->use[e].pend];
            const double a = pd->start + pd->cost.lat_s;
            if (a < first) first = a;
            e++;
        }
        double *free_at = &w->backlog[w->use[g].slot];
        const double base = *free_at > first ? *free_at : first, cap = w->use[g].cap;
        double before = 0; /* the bytes of the smaller ops of the group, all crossed */
        for (size_t i = g; i < e; i++) {
            use_t *u = &w->use[i];
            u->end = base + (before + (double)(e - i) * u->bytes) / cap;
            before += u->bytes;
        }
        *free_at = base + before / cap;
        g = e;
    }
    for (size_t i = 0; i < w->nuse; i++) {
        pending_t *pd = &w->pend[w->use[i].pend];
        if (w->use[i].end > pd->streamed) pd->streamed = w->use[i].end;
    }
    for (size_t k = 0; k < w->npend; k++)
        if (w->pend[k].streamed < now) w->pend[k].streamed = now;
    /* breakdowns: each link direction's bytes and the spans it carried them (link slots
     * come first, numbered as w->links) */
    for (size_t i = 0; w->breakdown && i < w->nuse; i++) {
        const use_t *u = &w->use[i];
        if (u->slot >= 2 * w->t->nlinks) continue;
        const pending_t *pd = &w->pend[u->pend];
        const double a = pd->start + pd->cost.lat_s;
        linkacc_t *l = &w->links[u->slot];
        l->bytes += u->bytes;
        if (pd->streamed > a && span_add(l, a, pd->streamed) != AR_OK)
            return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
    }
    for (size_t k = 0; k < w->npend; k++) {
        pending_t *pd = &w->pend[k];
        const double own = pd->start + pd->cost.lat_s + pd->cost.move_s;
        /* unhindered, the clock's own rule (and its exact sums) */
        ar_clock_op_end(&w->clk, pd->gi, pd->op, &pd->cost, pd->start, pd->streamed > own ? pd->streamed : -1, -1);
        w->ch[pd->gi].pc++;
        w->ops++;
        AR_TRY(requeue(w, pd->gi, err));
    }
    w->npend = w->nuse = 0;
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
        default: /* held for its batch: resolve() moves the channel on */
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
    w.max_traffic = 2 * t->nlinks + t->ndevices + 3;
    w.traffic = calloc((size_t)w.max_traffic, sizeof *w.traffic);
    w.backlog = calloc((size_t)2 * t->nlinks + 3 * (size_t)t->ndevices, sizeof *w.backlog);
    if (w.breakdown) w.links = calloc((size_t)2 * t->nlinks + 1, sizeof *w.links);
    if (!w.ch || !w.flags || clk_rc != AR_OK || !w.traffic || !w.backlog || (w.breakdown && !w.links)) {
        rc = AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
        goto out;
    }

    ar_progress_t pg;
    ar_progress_start(&pg, opts, p->nops);
    for (int gi = 0; gi < nch; gi++) AR_TRY_GOTO(advance(&w, gi, err), rc, out);
    while (w.heap.n) {
        event_t e = heap_pop(&w.heap);
        ar_progress_tick(&pg, e.t, w.ops);
        if (e.kind == EV_READY) AR_TRY_GOTO(advance(&w, e.chan, err), rc, out);
        else if (e.kind == EV_RESOLVE) AR_TRY_GOTO(resolve(&w, e.t, err), rc, out);
        else AR_TRY_GOTO(arrive(&w, &e, err), rc, out);
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
    free(w.backlog);
    free(w.pend);
    free(w.use);
    free(w.ch);
    free(w.flags);
    ar_clock_free(&w.clk);
    free(w.heap.ev);
    res->sim_wall_s = ar_now_s() - t0;
    return rc;
}

/* Beside the plan: each channel's clock and state, each flag's, each link direction's backlog. */
static double analytic_run_bytes(const ar_topo_t *t, const ar_plan_size_t *s) {
    return 256.0 * s->nranks * s->nchannels + 16.0 * s->nranks * s->nflags + 64.0 * t->nlinks;
}

const ar_backend_ops_t ar_analytic_backend = {
    .name = "analytic", .caps = AR_BACKEND_MODEL, .fits = ar__backend_model_fits, .execute = analytic_execute,
    .run_bytes = analytic_run_bytes,
    .summary = "critical path from the model's per-op costs, channels sharing what they use; sim's fast estimate",
};
