/* The channel clock (arsim/cost.h): when each op of a channel may start, for every
 * timing backend. A backend walks the plan in its own way (the analytic backend by
 * events in time order, the sim backend as SimGrid actors) and tells the clock what
 * happened; the clock applies the sequencing rules of cost.h:
 *   - an op starts when its channel's previous op ended (launch stagger first);
 *   - a COPY/REDUCE ends after its latency, its streaming time (the backend's: the
 *     cost's bottleneck alone, or SimGrid's share under contention), its reduction and
 *     the executor's own overhead; its peer stores land later (chan_write_land_gbps);
 *   - a SIGNAL waits for its release (those stores, its previous SIGNAL, the floor),
 *     then arrives at its target a signal latency later, carrying the sender's path;
 *   - a WAIT passes when its flag reached the count, taking over the path of the
 *     SIGNAL that released it, then costs wait_overhead_ns;
 *   - a channel ends once its peer stores have landed.
 * Every channel carries the critical path that set its clock, by term, so the terms
 * of the last channel sum to the execution's time. */
#include <stdlib.h>
#include <string.h>
#include "cost/internal.h"

int ar_clock_init(ar_clock_t *c, const ar_topo_t *t, const ar_plan_t *p, ar_mem_t buffer) {
    memset(c, 0, sizeof *c);
    c->topo = t;
    c->plan = p;
    c->buffer = buffer;
    const int nch = ar_plan_run_chans(p);
    c->ch = calloc((size_t)nch, sizeof *c->ch);
    c->cross = calloc(1, sizeof *c->cross);
    c->warm = calloc(1, sizeof *c->warm);
    double *start = malloc((size_t)nch * sizeof *start);
    if (!c->ch || !c->cross || !c->warm || !start || ar_cost_cross_init(c->cross, t, p) != AR_OK ||
        ar_cost_warm_init(c->warm, t, p) != AR_OK || ar_cost_chan_starts(t, p, start) != AR_OK) {
        free(start);
        ar_clock_free(c);
        return AR_ENOMEM;
    }
    /* Channels start staggered as the executor's blocks do (launch term). */
    for (int gi = 0; gi < nch; gi++) {
        c->ch[gi].ahead = start[gi];
        c->ch[gi].terms[AR_TERM_LAUNCH] = start[gi];
    }
    free(start);
    return AR_OK;
}

void ar_clock_free(ar_clock_t *c) {
    free(c->ch);
    if (c->cross) ar_cost_cross_free(c->cross);
    if (c->warm) ar_cost_warm_free(c->warm);
    free(c->cross);
    free(c->warm);
    memset(c, 0, sizeof *c);
}

double ar_clock_mem_bytes(const ar_clock_t *c, const ar_addr_t *a, int write, double B) {
    if (a->rank == AR_RANK_HOST) return B;
    return ar_cost_operand_mem_bytes(c->topo->model, c->buffer, c->warm, c->plan, a, ar_cost_addr_device(c->topo, a),
                                     write, B);
}

int ar_clock_op_begin(ar_clock_t *c, int gi, const ar_op_t *op, ar_op_cost_t *cost, ar_op_traffic_t *traffic,
                      int max_traffic, int *ntraffic) {
    const int rank = gi / c->plan->nchannels;
    AR_TRY(ar_cost_op(c->topo, c->plan, op, rank, c->buffer, cost, traffic, max_traffic, ntraffic, c->warm));
    ar_cost_warm_touch(c->warm, c->topo, c->plan, op);
    ar_cost_cross_set(c->cross, gi, ar_cost_op_crosses(c->topo, c->plan, op, rank), ar_clock_now(c, gi));
    ar_chan_clock_t *ch = &c->ch[gi];
    ch->loading = cost->loads_cold && c->warm->loading;
    if (ch->loading) c->warm->loading[c->topo->placement[rank]]++;
    ch->host_data = 0;
    for (uint32_t s = 0; s <= op->nsrc && !ch->host_data; s++)
        ch->host_data = ar_op_operand(c->plan, op, s)->rank == AR_RANK_HOST;
    return AR_OK;
}

void ar_clock_op_end(ar_clock_t *c, int gi, const ar_op_t *op, const ar_op_cost_t *cost, double start,
                     double streamed_at, double reduced_at) {
    ar_chan_clock_t *ch = &c->ch[gi];
    if (ch->loading) c->warm->loading[c->topo->placement[gi / c->plan->nchannels]]--;
    ch->loading = 0;
    ch->terms[cost->lat_term] += cost->lat_s;
    if (streamed_at < 0) { /* at its own bottleneck */
        ch->terms[cost->move_term] += cost->move_s;
        ch->terms[AR_TERM_REDUCE] += cost->reduce_s;
        ch->ahead += cost->total_s;
    } else {
        ch->terms[cost->move_term] += (streamed_at - start) - cost->lat_s;
        if (reduced_at < 0) { /* the additions on the channel's own core, on its clock */
            ch->terms[AR_TERM_REDUCE] += cost->reduce_s;
            ch->base = streamed_at;
            ch->ahead = cost->reduce_s;
        } else {
            ch->terms[AR_TERM_REDUCE] += reduced_at - streamed_at;
            ch->base = reduced_at;
            ch->ahead = 0;
        }
        ch->ahead += cost->overhead_s;
    }
    ch->terms[AR_TERM_SYNC] += cost->overhead_s;
    if (ar_cost_op_remote_store(c->topo, op, gi / c->plan->nchannels)) {
        const double first = start + cost->lat_s + cost->store_lat_s;
        ch->land = ar_cost_land_after(c->topo, ch->stored, ch->land, first, ar_clock_now(c, gi), cost->store_lat_s,
                                      cost->bytes);
        ch->stored = 1;
    }
}

/* How many SIGNALs the executor releases at once from the SIGNAL at pc, the first of its run:
 * a run of SIGNALs to distinct flags, within one window of AR_EXEC_WINDOW_OPS staged ops,
 * after a data op that touched no host memory, goes out together, one thread each
 * (hw/exec.cu). */
static uint32_t run_length(const ar_plan_t *p, const ar_chan_clock_t *ch, int gi, uint32_t pc) {
    const ar_op_t *ops = &p->ops[p->chans[gi].first];
    const uint32_t nops = p->chans[gi].nops;
    uint32_t n = 1;
    while (!ch->host_data && pc + n < nops && (pc + n) % AR_EXEC_WINDOW_OPS != 0 && ops[pc + n].code == AR_OP_SIGNAL) {
        int seen = 0; /* a flag the run already has starts another run, as in the executor */
        for (uint32_t j = pc; j < pc + n && !seen; j++)
            seen = ops[j].dst.rank == ops[pc + n].dst.rank && ops[j].flag == ops[pc + n].flag;
        if (seen) break;
        n++;
    }
    return n;
}

double ar_clock_signal(ar_clock_t *c, int gi, uint32_t pc, const ar_op_t *op, double arrival_terms[AR_NTERM]) {
    const ar_topo_t *t = c->topo;
    const int rank = gi / c->plan->nchannels;
    ar_chan_clock_t *ch = &c->ch[gi];
    /* The release fence waits for the channel's peer stores to land, its previous
     * SIGNAL's flag update, and takes the device's release floor at least. */
    double fence, landing;
    const double reached = ar_clock_now(c, gi);
    ar_cost_cross_set(c->cross, gi, ar_cost_op_crosses(t, c->plan, op, rank), reached);
    const double floor = ar_cost_release_floor_s(t, c->plan, c->cross, gi, pc, reached);
    /* Links that deliver in order carry a flag to another device as one more store, behind
     * the channel's stores and its earlier flags: no fence for them; it arrives a crossing
     * after its issue, not before the last of those has. */
    const int behind = t->model->link_ordered > 0 &&
                       t->placement[rank] != t->placement[op->dst.rank];
    const double after = ch->stored && ch->land > ch->sig_arrive ? ch->land : ch->sig_arrive;
    /* A run released at once: its first SIGNAL's release takes the fence, and each further
     * one signal_together_ns more (their fences queue in part); every flag of the run is
     * issued when the whole release is done, the run's others at no further cost. */
    const int together = ch->run_left > 0;
    if (!together) {
        ar_cost_release_wait(ch->stored && !behind, ch->land, ch->sig_land, floor, reached, &fence, &landing);
        ch->stored = 0;
        const uint32_t run = run_length(c->plan, ch, gi, pc);
        const double queued = (run - 1) * t->model->signal_together_ns * 1e-9;
        ch->run_left = run - 1;
        ch->ahead += fence + queued;
        ch->terms[AR_TERM_LINK] += landing;
        ch->terms[AR_TERM_SYNC] += fence - landing + queued;
    } else {
        ch->run_left--;
    }
    /* its own flag update completes later; the channel's next SIGNAL waits for it */
    const double issued = ar_clock_now(c, gi);
    if (!together) ch->sig_land = issued + ar_cost_signal_issue_s(t, rank, op->dst.rank);
    memcpy(arrival_terms, ch->terms, sizeof ch->terms);
    if (behind) {
        double arrive = issued + ar_cost_route_lat_s(t, rank, op->dst.rank);
        if (after > arrive) arrive = after;
        ch->sig_arrive = arrive;
        arrival_terms[AR_TERM_LINK] += arrive - issued;
        return arrive;
    }
    const double lat = ar_cost_signal_s(t, rank, op->dst.rank);
    arrival_terms[AR_TERM_SYNC] += lat;
    return issued + lat;
}

void ar_clock_wait(ar_clock_t *c, int gi, double base, double passed, double arrival_t, const double *arrival_terms) {
    ar_chan_clock_t *ch = &c->ch[gi];
    /* Released by a SIGNAL that arrived after the channel reached its WAIT: that
     * SIGNAL's path is now the channel's. */
    if (arrival_terms && arrival_t > ar_clock_now(c, gi)) memcpy(ch->terms, arrival_terms, sizeof ch->terms);
    if (base >= 0) { /* settled anew by the backend */
        ch->base = base;
        ch->ahead = passed > base ? passed - base : 0;
    }
    const double ws = ar_cost_wait_s(c->topo);
    ch->ahead += ws;
    ch->terms[AR_TERM_SYNC] += ws;
}

void ar_clock_chan_end(ar_clock_t *c, int gi) {
    ar_chan_clock_t *ch = &c->ch[gi];
    /* A kernel's writes are visible when it completes (link term). */
    const double end = ar_clock_now(c, gi);
    if (ch->stored && ch->land > end) {
        ch->terms[AR_TERM_LINK] += ch->land - end;
        ch->base = ch->land;
        ch->ahead = 0;
    }
    ch->stored = 0;
}

void ar_clock_result(const ar_clock_t *c, ar_result_t *res) {
    const ar_plan_t *p = c->plan;
    int last = -1;
    for (int gi = 0; gi < ar_plan_run_chans(p); gi++)
        if (p->chans[gi].nops && (last < 0 || ar_clock_now(c, gi) > ar_clock_now(c, last))) last = gi;
    const double launch = ar_cost_launch_s(c->topo);
    if (last >= 0) memcpy(res->terms_s, c->ch[last].terms, sizeof res->terms_s);
    res->terms_s[AR_TERM_LAUNCH] += launch;
    res->time_s = launch + (last >= 0 ? ar_clock_now(c, last) : 0);
    res->cycles = res->time_s * c->topo->model->clock_ghz * 1e9;
}
