/* The analytic backend: the contention-free critical path of one plan execution,
 * built from the per-op costs of arsim/cost.h.
 *
 * A discrete-event walk: every channel has a clock; a COPY/REDUCE advances it by
 * the op's cost (ar_cost_op: latency + max(link, memory) + reduce); a SIGNAL costs
 * its sender nothing and arrives at the target ar_cost_signal_s later; a WAIT
 * holds the channel until the count-th SIGNAL to *arrive* at that flag (events are
 * handled in time order, so arrival order is time order). Channels never slow each
 * other down: two ops sharing a link both run at full rate (the sim backend is
 * where they contend). One execution takes launch + the latest channel finish.
 *
 * The critical path is split by term: each channel carries the terms of the path
 * that set its clock; a COPY/REDUCE adds its latency (link when it leaves the
 * device, memory otherwise), its move time (link or memory, whichever bound it)
 * and its reduce time; a WAIT that had to block takes over the path of the SIGNAL
 * that released it plus the signal latency (sync). The executor's own costs (a data
 * op's op_overhead_ns, a WAIT's wait_overhead_ns) are sync too. So terms_s sums to time_s.
 *
 * Flags count up across executions, and without contention every execution is the
 * same, so one execution (epoch 0) is walked whatever opts->iters says. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backends/internal.h"

typedef struct analytic_s {
    ar_backend_t base; /* first: the registry sees an ar_backend_t */
} analytic_t;

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
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 64;
        event_t *p = realloc(h->ev, nc * sizeof *p);
        if (!p) return AR_ENOMEM;
        h->ev = p;
        h->cap = nc;
    }
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
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 16;
        span_t *p = realloc(l->spans, nc * sizeof *p);
        if (!p) return AR_ENOMEM;
        l->spans = p;
        l->cap = nc;
    }
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
    int stored;               /* remote stores since the last SIGNAL (its fence waits) */
    double land;              /* when those stores have landed (chan_write_land_gbps) */
    double sig_land;          /* when the last SIGNAL's flag update completes */
    int waiting;              /* blocked on the WAIT at pc */
    double clock;
    double terms[AR_NTERM];   /* the path that set clock; sums to clock */
} chan_state_t;

typedef struct walk_s {
    const ar_topo_t *t;
    const ar_plan_t *p;
    ar_mem_t buffer;
    int breakdown;
    chan_state_t *ch;
    uint64_t *flags;          /* nranks * nflags: arrivals so far */
    ar_cost_cross_t cross;    /* whose latest op crosses to another device (a release's floor) */
    ar_cost_warm_t warm;      /* which pages each device touched lately (cold_lat_ns) */
    heap_t heap;
    linkacc_t *links;         /* 2 * nlinks: index link * 2 + (dir < 0) */
    ar_op_traffic_t *traffic;
    int max_traffic;
    uint64_t ops;
} walk_t;

static int run_op(walk_t *w, int gi, const ar_op_t *op, ar_error_t *err) {
    chan_state_t *c = &w->ch[gi];
    int rank = gi / w->p->nchannels;
    ar_op_cost_t cost;
    int ntraffic = 0;
    int rc = ar_cost_op(w->t, w->p, op, rank, w->buffer, &cost, w->breakdown ? w->traffic : NULL,
                        w->max_traffic, &ntraffic, &w->warm);
    if (rc != AR_OK) return AR_ERR(err, rc, "analytic: cost of rank %d op %u", rank, c->pc);
    ar_cost_warm_touch(&w->warm, w->t, w->p, op);
    ar_cost_cross_set(&w->cross, gi, ar_cost_op_crosses(w->t, w->p, op, rank), c->clock);
    for (int i = 0; i < ntraffic; i++) {
        linkacc_t *l = &w->links[w->traffic[i].link * 2 + (w->traffic[i].dir < 0)];
        l->bytes += w->traffic[i].bytes;
        double a = c->clock + cost.lat_s;
        if (cost.move_s > 0 && span_add(l, a, a + cost.move_s) != AR_OK)
            return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
    }
    c->terms[cost.lat_term] += cost.lat_s;
    c->terms[cost.move_term] += cost.move_s;
    c->terms[AR_TERM_REDUCE] += cost.reduce_s;
    c->terms[AR_TERM_SYNC] += cost.overhead_s;
    c->clock += cost.total_s;
    if (ar_cost_op_remote_store(w->t, op, rank)) {
        double first = c->clock - cost.total_s + cost.lat_s + cost.store_lat_s;
        c->land = ar_cost_land_after(w->t, c->stored, c->land, first, c->clock, cost.store_lat_s, cost.bytes);
        c->stored = 1;
    }
    return AR_OK;
}

/* A passed WAIT's own cost (wait_overhead_ns, sync term); the channel goes on once every
 * event before its new clock has happened. */
static int wait_overhead(walk_t *w, int gi, ar_error_t *err) {
    chan_state_t *c = &w->ch[gi];
    double ws = ar_cost_wait_s(w->t);
    c->clock += ws;
    c->terms[AR_TERM_SYNC] += ws;
    event_t e = {.t = c->clock, .kind = EV_READY, .chan = gi};
    if (heap_push(&w->heap, e) != AR_OK) return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
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
        switch (op->code) {
        case AR_OP_WAIT:
            /* epoch 0: a WAIT back 1 (or count 0) looks at no SIGNAL of this execution */
            if (!op->back && w->flags[(size_t)rank * p->nflags + op->flag] < op->count) {
                c->waiting = 1;
                return AR_OK;
            }
            if (ar_cost_wait_s(w->t) > 0) { /* the executor's own cost of a WAIT */
                c->pc++;
                w->ops++;
                return wait_overhead(w, gi, err);
            }
            break;
        case AR_OP_SIGNAL: {
            /* The release fence waits for the channel's peer stores to land
             * (chan_write_land_gbps), its previous SIGNAL's release, and takes the
             * rank's release floor at least. */
            double fence, landing;
            ar_cost_cross_set(&w->cross, gi, ar_cost_op_crosses(w->t, p, op, rank), c->clock);
            const double floor = ar_cost_release_floor_s(w->t, p, &w->cross, gi, c->pc, c->clock);
            ar_cost_release_wait(c->stored, c->land, c->sig_land, floor, c->clock, &fence, &landing);
            c->stored = 0;
            c->clock += fence;
            c->terms[AR_TERM_LINK] += landing;
            c->terms[AR_TERM_SYNC] += fence - landing;
            /* its own flag update completes later; the next SIGNAL waits for it */
            c->sig_land = c->clock + ar_cost_signal_issue_s(w->t, rank, op->dst.rank);
            event_t e = {.t = c->clock + ar_cost_signal_s(w->t, rank, op->dst.rank),
                         .kind = EV_ARRIVE, .rank = op->dst.rank, .flag = op->flag};
            memcpy(e.terms, c->terms, sizeof e.terms);
            e.terms[AR_TERM_SYNC] += e.t - c->clock;
            if (heap_push(&w->heap, e) != AR_OK)
                return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
            if (fence > 0) { /* let every event before the new clock happen first */
                c->pc++;
                w->ops++;
                event_t r = {.t = c->clock, .kind = EV_READY, .chan = gi};
                if (heap_push(&w->heap, r) != AR_OK)
                    return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
                return AR_OK;
            }
            break;
        }
        default:
            AR_TRY(run_op(w, gi, op, err));
            c->pc++;
            w->ops++;
            /* Later ops may WAIT: let every event before the new clock happen first. */
            event_t e = {.t = c->clock, .kind = EV_READY, .chan = gi};
            if (heap_push(&w->heap, e) != AR_OK)
                return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
            return AR_OK;
        }
        c->pc++;
        w->ops++;
    }
    /* The execution ends once the channel's peer stores have landed (cost.h) */
    if (c->stored && c->land > c->clock) {
        c->terms[AR_TERM_LINK] += c->land - c->clock;
        c->clock = c->land;
    }
    c->stored = 0;
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
        /* Released by this SIGNAL: its path is now the channel's path. */
        cs->waiting = 0;
        cs->clock = e->t;
        memcpy(cs->terms, e->terms, sizeof cs->terms);
        cs->pc++;
        w->ops++;
        if (ar_cost_wait_s(w->t) > 0) AR_TRY(wait_overhead(w, gi, err));
        else AR_TRY(advance(w, gi, err));
    }
    return AR_OK;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int analytic_execute(ar_backend_t *be, const ar_plan_t *p, const ar_run_opts_t *opts,
                            ar_result_t *res, ar_error_t *err) {
    double t0 = now_s();
    const ar_topo_t *t = be->topo;
    memset(res, 0, sizeof *res);
    AR_TRY(ar__backend_check_plan(p, t, err));
    AR_TRY(ar_cost_check_capacity(t, p, opts->buffer, err));

    int nch = p->nranks * p->nchannels, rc = AR_OK;
    walk_t w;
    memset(&w, 0, sizeof w);
    w.t = t;
    w.p = p;
    w.buffer = opts->buffer;
    w.breakdown = opts->breakdown;
    w.ch = calloc((size_t)nch, sizeof *w.ch);
    w.flags = calloc((size_t)p->nranks * p->nflags, sizeof *w.flags);
    const int cross_rc = ar_cost_cross_init(&w.cross, t, p);
    const int warm_rc = ar_cost_warm_init(&w.warm, t, p);
    w.max_traffic = 2 * t->nlinks + 1;
    if (w.breakdown) {
        w.links = calloc((size_t)2 * t->nlinks + 1, sizeof *w.links);
        w.traffic = calloc((size_t)w.max_traffic, sizeof *w.traffic);
    }
    if (!w.ch || !w.flags || cross_rc != AR_OK || warm_rc != AR_OK || (w.breakdown && (!w.links || !w.traffic))) {
        rc = AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
        goto out;
    }

    /* Channels start staggered as the executor's blocks do (launch term). */
    {
        double *start = malloc((size_t)nch * sizeof *start);
        if (!start || ar_cost_chan_starts(t, p, start) != AR_OK) {
            free(start);
            rc = AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
            goto out;
        }
        for (int gi = 0; gi < nch; gi++) {
            w.ch[gi].clock = start[gi];
            w.ch[gi].terms[AR_TERM_LAUNCH] = start[gi];
        }
        free(start);
    }
    for (int gi = 0; gi < nch; gi++) AR_TRY_GOTO(advance(&w, gi, err), rc, out);
    while (w.heap.n) {
        event_t e = heap_pop(&w.heap);
        if (e.kind == EV_READY) AR_TRY_GOTO(advance(&w, e.chan, err), rc, out);
        else AR_TRY_GOTO(arrive(&w, &e, err), rc, out);
    }

    int last = -1;
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
        if (last < 0 || c->clock > w.ch[last].clock) last = gi;
    }
    double launch = ar_cost_launch_s(t);
    if (last >= 0) memcpy(res->terms_s, w.ch[last].terms, sizeof res->terms_s);
    res->terms_s[AR_TERM_LAUNCH] += launch;
    res->time_s = launch + (last >= 0 ? w.ch[last].clock : 0);
    res->cycles = res->time_s * t->model->clock_ghz * 1e9;
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
                const ar_link_t *lk = &t->links[l];
                double cap = lk->count * t->model->links[lk->kind].bw_gbps * 1e9;
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
    free(w.ch);
    free(w.flags);
    ar_cost_cross_free(&w.cross);
    ar_cost_warm_free(&w.warm);
    free(w.heap.ev);
    res->sim_wall_s = now_s() - t0;
    return rc;
}

static int analytic_open(const ar_topo_t *topo, ar_backend_t **out, ar_error_t *err) {
    if (!topo || !topo->model)
        return AR_ERR(err, AR_EINVAL, "analytic: needs a topology with a model");
    analytic_t *be = calloc(1, sizeof *be);
    if (!be) return AR_ERR(err, AR_ENOMEM, "analytic: out of memory");
    be->base.ops = &ar_analytic_backend;
    be->base.topo = topo;
    *out = &be->base;
    return AR_OK;
}

static void analytic_close(ar_backend_t *be) { free(be); }

const ar_backend_ops_t ar_analytic_backend = {
    .name = "analytic",
    .summary = "contention-free critical path from the model's per-op costs",
    .open = analytic_open,
    .execute = analytic_execute,
    .close = analytic_close,
};
