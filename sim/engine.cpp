/* sim: the SimGrid engine behind the sim backend (the one C++ file; sim.c is the
 * C side). SimGrid 3.32's C API cannot build a platform, so this file builds it
 * through the S4U NetZone API and runs one plan execution on it.
 *
 * The platform (one NetZone; its routes come from the topology's own routing,
 * walked per op: no O(n^2) table inside SimGrid):
 *   - every link bundle is a split-duplex pair of SimGrid links (the two directions
 *     do not share), bandwidth count x the kind's bandwidth, the kind's latency;
 *   - every device's memory, at the level chosen for the run (tcm, sram, hbm), is one
 *     SHARED link of the level's bandwidth and latency: every byte read or written
 *     there crosses it, so concurrent readers and writers share it; in HBM under a
 *     model that tracks warmth a second SHARED link, the L2 in front of it, carries
 *     every byte, and the memory's only those the L2 no longer holds;
 *   - every channel (rank, c) is a host of its device running one actor; its CPU
 *     computes at the model's per-channel reduction rate; one private link bounds
 *     what the channel itself can move (so few channels cannot fill a link), its
 *     bandwidth set for each op to B / ar_cost_chan_s (cost.h: its loads of every
 *     kind add up, its stores overlap them);
 *   - the host staging buffer (naive) sits behind one SHARED host link per device;
 *   - with link_issue_gbps, every device has one more SHARED link of that bandwidth,
 *     crossed by every pull and push its channels issue.
 * Network model CM02 (sim/netmodel.hpp), bandwidth factor 1, no cross-traffic, a huge
 * TCP gamma (in 3.32 a gamma of 0 bounds every flow to zero).
 *
 * An op (COPY/REDUCE of B bytes by channel ch on device E) is ONE SimGrid
 * communication whose route is every resource the op touches, as many times as it
 * touches it: a source on device S adds S's memory and the links from S to E; the
 * destination likewise; ch's private link once. SimGrid's max-min system adds
 * repeated consumptions, so the op streams at the rate of its tightest resource:
 * alone, lat + max over resources of bytes / bandwidth, exactly arsim/cost.h's
 * lat + max(link, memory, chan); with others, at its max-min share. Its latency is the longest of its sources' and destination's
 * (memory latency + link latencies on the route; ar_cost_op). A REDUCE then computes
 * (k - 1) x B on the channel's core. SIGNAL/WAIT follow plan.h: a SIGNAL is visible
 * at its target ar_cost_signal_s after issue; a WAIT ends at the count-th arrival,
 * in time order.
 *
 * Two liberties keep this fast and fair, neither changing a result:
 *   - CM02 weighs a flow's share by its route latency (TCP's RTT unfairness). Every
 *     op reports the same latency to SimGrid and a per-op latency factor turns it
 *     into the op's own, so links are shared max-min fairly.
 *   - A channel's clock may run ahead of SimGrid's (the clock's `ahead`, cost.h): a
 *     reduction on its own core, the executor's own costs, a WAIT whose releasing
 *     SIGNAL nothing can beat any more move the channel's clock without a SimGrid
 *     activity; its next op starts that much later (added to the op's latency).
 *     ARSIM_SIM_EXEC=1 runs reductions as SimGrid execs instead; the tests show both
 *     agree.
 *
 * When each op may start, what it costs beyond its streaming and the critical path by
 * term come from the channel clock (cost/clock.c), as for the analytic backend: this
 * file supplies only what SimGrid decides, how fast each op's bytes stream beside the
 * others'. ARSIM_SIM_TRACE=1 prints every op. */
#include <simgrid/s4u.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "sim/internal.h"
#include "sim/netmodel.hpp"
extern "C" {
#include "arsim/out.h"
}

namespace sg4 = simgrid::s4u;
namespace skr = simgrid::kernel::routing;

namespace {

enum ResKind { RES_NET = 0, RES_MEM, RES_CHAN, RES_HOST /* a shared link outside the topology's */,
               RES_CLOC /* a channel's bound led by local loads: a memory term */,
               RES_L2 /* the L2 in front of a memory (ar_cost_l2_fronts) */ };

struct Resource {
    sg4::Link *link = nullptr;
    simgrid::kernel::resource::StandardLinkImpl *impl = nullptr;
    double bw = 0;   /* bytes/s */
    int kind = RES_NET;
};

struct Arrival {
    double t;
    double terms[AR_NTERM];
};

/* A flag's arrivals in time order. Where its WAITs count up on one channel (counts_up), those
 * before the one a WAIT took are returned once none can come before them any more: each
 * later WAIT needs that many or more, and the n-th in time order is found as before. A flag
 * of a large plan then holds the few arrivals ahead of its reader, not every SIGNAL. */
struct FlagState {
    std::vector<Arrival> arr;  /* arrivals from the (dropped + 1)-th on, sorted by t */
    uint64_t dropped = 0;      /* arrivals before arr[0], returned */
    bool one_sender = false;   /* one channel SIGNALs it: arrivals come in issue order */
    bool counts_up = false;    /* one channel WAITs for it, each WAIT's count at least the last's */
    std::vector<int> waiters;  /* channels blocked on this flag */
    uint64_t count() const { return dropped + arr.size(); }
    const Arrival &nth(uint64_t n) const { return arr[(size_t)(n - 1 - dropped)]; } /* n > dropped */
};

struct Span {
    double a, b;
};

struct ChanState {
    uint32_t pc = 0;
    bool done = false;
    sg4::ActorPtr actor;    /* resumed when a WAIT of this channel may be satisfied */
    bool asleep = false;    /* suspended in a WAIT (only then is a wake-up passed on) */
    uint64_t need = 0;      /* the WAIT it is blocked in: arrivals it needs */
    double wake_at = -1;    /* a wake-up is scheduled then (-1: none) */
    int *got = nullptr; /* where an op's (unused) payload lands */
    std::vector<Span> stamps; /* ARSIM_SIM_TIMELINE: each op's start and end on the channel's clock */
};

/* Per-channel scratch, reused op after op. */
struct OpScratch {
    std::vector<int> route;                     /* resources of every flow, in order */
    std::vector<int> weight;                    /* crossings of each, as route */
    std::vector<int> req;                       /* link directions a pull's requests cross */
    std::vector<std::pair<int, int>> load;      /* resource -> traversals, this op */
    std::vector<simgrid::kernel::resource::StandardLinkImpl *> links;
    std::vector<ar_op_traffic_t> traffic;       /* a NETREDUCE's resources (ar_cost_op) */
};

struct Sim;

/* The smallest link weight w (up to 64) that gives every link kind's request share
 * (ar_model_pull_request_share) as a whole count of crossings within 1% (else the closest
 * found); req[kind] the counts, 0 for a kind whose pulls take its full rate. */
static void net_weights(const ar_model_t *m, int *w, std::vector<int> &req) {
    req.assign((size_t)m->nlinks, 0);
    *w = 1;
    double best = 1e300;
    for (int cand = 1; cand <= 64 && best > 0.01; cand++) {
        double worst = 0;
        for (int k = 0; k < m->nlinks; k++) {
            const double share = ar_model_pull_request_share(&m->links[k]);
            if (share > 0) worst = std::max(worst, std::fabs(std::round(cand * share) / cand - share) / share);
        }
        if (worst < best) {
            best = worst;
            *w = cand;
        }
    }
    for (int k = 0; k < m->nlinks; k++) req[(size_t)k] = (int)std::lround(*w * ar_model_pull_request_share(&m->links[k]));
}

/* The one NetZone. Every op is one SimGrid communication from its channel's host
 * to itself; its route is the op's resources, which the channel posts here just
 * before starting it (SimGrid asks for the route when it handles the start, after
 * every actor of this round has run: hence one slot per channel, found by host).
 * A resource an op crosses k times is listed k times: SimGrid's max-min system
 * adds the consumptions, so it carries k x the op's rate. */
class ArZone : public skr::NetZoneImpl {
public:
    struct Pending {
        const std::vector<simgrid::kernel::resource::StandardLinkImpl *> *links = nullptr;
        double lat = 0;
    };
    std::vector<int> np2chan;      /* netpoint id -> channel */
    std::vector<Pending> pending;  /* per channel */
    explicit ArZone(const std::string &name) : skr::NetZoneImpl(name) {}
    void get_local_route(const skr::NetPoint *src, const skr::NetPoint *, skr::Route *into,
                         double *latency) override {
        unsigned long id = src->id();
        int gi = id < np2chan.size() ? np2chan[id] : -1;
        if (gi < 0 || !pending[gi].links)
            throw std::runtime_error("arsim: a route was asked for outside an op");
        into->link_list_.insert(into->link_list_.end(), pending[gi].links->begin(),
                                pending[gi].links->end());
        /* CM02 weighs a flow's share by its route latency (TCP's RTT unfairness):
         * every op reports the same 1 s, so links are shared max-min fairly, and
         * the latency factor (lat_factor) scales it to the op's own latency. */
        *latency += 1.0;
    }
    /* The latency factor of the op starting on channel host src. */
    double lat_factor(const sg4::Host *src) const {
        unsigned long id = src->get_netpoint()->id();
        int gi = id < np2chan.size() ? np2chan[id] : -1;
        return gi >= 0 ? pending[gi].lat : 1.0;
    }
};

struct Sim {
    const ar_topo_t *t;
    const ar_plan_t *p;
    const ar_run_opts_t *o;
    const ar_model_t *m;
    ArZone *zone;
    int ndev, nch;
    /* endpoints of a flow: MEM(d) = d, CHAN(gi) = ndev + gi, HOST = ndev + nch */
    int ep_host;
    std::vector<sg4::Host *> chan_hosts;
    std::vector<sg4::Mailbox *> mbox;  /* per channel: its ops' communications */
    /* resources: net 2*l+(dir<0), mem per device, host link per device, one bound per channel,
     * issue bound per device, matrix units per device */
    int base_mem, base_host, base_chan, base_issue, base_tensor, base_l2;
    /* The channel clock (cost.h): every channel's time, path and landing stores. A
     * channel's clock may run ahead of SimGrid's (its own core's reduction, a WAIT
     * whose SIGNAL nothing can beat any more, the executor's own costs): whatever it
     * does next starts then (ahead() below). */
    ar_clock_t clk = {};
    ~Sim() { ar_clock_free(&clk); }
    double ahead(int gi) const { return clk.ch[gi].ahead; }
    std::vector<Resource> res;
    std::vector<double> res_bytes;
    std::vector<std::vector<Span>> spans; /* breakdown: net resources only */
    std::vector<ChanState> ch;
    std::vector<FlagState> flags;
    std::vector<int> hop_links, hop_dirs;
    /* A plan of one rank or a row (plan.h): each link direction's orbit (ar_topo_fold_links),
     * and every device's own resources are those of the device standing for its orbit under
     * the translations it stands on (ar_plan_shifts). Empty otherwise. */
    std::vector<int> fold;
    int shifts = 0;
    int net_res(int slot) const { return fold.empty() ? slot : fold[(size_t)slot]; }
    int dev_res(int dev) const { return fold.empty() ? dev : ar_topo_orbit_device(t, shifts, dev); }
    /* Weights on the links: SimGrid charges a flow once per time a link is on its route, so
     * a link's capacity is net_weight x its bandwidth and a flow crosses it net_weight
     * times; a pull's requests cross the reverse direction req_weight[kind] times
     * (pull_gbps: about net_weight x (bw_gbps / pull_gbps - 1)). 1 and none without pulls
     * of their own rate. */
    int net_weight = 1;
    std::vector<int> req_weight;
    /* The same for the memories: capacity mem_weight x ar_cost_mem_gbps, and an operand
     * crosses it mem_weight x its weight times (ar_clock_mem_bytes: reads and writes at
     * their own rates, bytes the L2 still holds at its), to 1/mem_weight. 1 where every
     * byte weighs 1. Where the L2 fronts the memory, each has its link, weighed alike: a
     * byte crosses the L2's at its rates (ar_cost_l2_weight) and the memory's only for the
     * share the L2 no longer holds, none at all when it holds every line. */
    int mem_weight = 1;
    bool l2_fronts = false;
    int l2_crossings[2] = {0, 0}; /* a byte read (0) or written (1) on the L2's link, set once */
    /* How often a flow crosses resource r for each time its route lists it. */
    int crossings(int r) const {
        return res[r].kind == RES_NET ? net_weight : res[r].kind == RES_MEM || res[r].kind == RES_L2 ? mem_weight : 1;
    }
    uint64_t ops = 0;
    ar_progress_t progress{};  /* opts->progress, about twice a second */
    bool trace = false;       /* ARSIM_SIM_TRACE=1: every op on stderr */
    bool exec_reduce = false; /* ARSIM_SIM_EXEC=1: reductions as SimGrid execs */
    const char *timeline = nullptr; /* ARSIM_SIM_TIMELINE=FILE: every op's start and end */
    double chan_speed = 0;    /* a channel core's speed, bytes/s */
    double min_signal_s = 0;  /* no SIGNAL arrives sooner after its issue */
    int fail = 0;
    char fail_msg[256] = "";

    /* Resources of a flow from endpoint a to endpoint b, appended to out; returns the
     * count, or -1 when there is no route. */
    int route(int a, int b, std::vector<int> &out, std::vector<int> &req) {
        size_t start = out.size();
        auto net = [&](int from, int to, bool pull) -> bool {
            if (from == to) return true;
            int n = ar_topo_route(t, from, to, hop_links.data(), hop_dirs.data(), t->nnodes);
            if (n < 0) return false;
            for (int h = 0; h < n; h++) {
                out.push_back(net_res(hop_links[h] * 2 + (hop_dirs[h] < 0)));
                if (pull && req_weight[(size_t)t->links[hop_links[h]].kind] > 0)
                    req.push_back(net_res(hop_links[h] * 2 + (hop_dirs[h] >= 0)));
                /* a device it passes through stores and loads it again (cost.c's acc_route) */
                const int via = h + 1 < n ? ar_topo_forwarder(t, hop_links[h], hop_dirs[h]) : -1;
                if (via >= 0) out.insert(out.end(), 2, (l2_fronts ? base_l2 : base_mem) + dev_res(via));
            }
            return true;
        };
        if (a < ndev && b >= ndev && b < ep_host) { /* memory -> channel: a read */
            int gi = b - ndev, e = t->placement[gi / p->nchannels];
            out.push_back(base_mem + dev_res(a));
            if (l2_fronts) out.push_back(base_l2 + dev_res(a));
            if (a != e) {
                if (!net(a, e, true)) return -1;
                if (res[base_issue + e].link) out.push_back(base_issue + dev_res(e));
            }
        } else if (a >= ndev && a < ep_host && b < ndev) { /* channel -> memory: a write */
            int gi = a - ndev, e = t->placement[gi / p->nchannels];
            if (b != e) {
                if (!net(e, b, false)) return -1;
                if (res[base_issue + e].link) out.push_back(base_issue + dev_res(e));
            }
            out.push_back(base_mem + dev_res(b));
            if (l2_fronts) out.push_back(base_l2 + dev_res(b));
        } else if ((a == ep_host && b >= ndev && b < ep_host) ||
                   (a >= ndev && a < ep_host && b == ep_host)) { /* host staging */
            int gi = (a == ep_host ? b : a) - ndev;
            out.push_back(base_host + dev_res(t->placement[gi / p->nchannels]));
        } else {
            return -1;
        }
        return (int)(out.size() - start);
    }

    void set_fail(const char *fmt, int r, int c, uint32_t i) {
        if (!fail) {
            fail = 1;
            snprintf(fail_msg, sizeof fail_msg, fmt, r, c, i);
        }
    }

    int addr_ep(const ar_addr_t &a) const {
        return a.rank == AR_RANK_HOST ? ep_host : t->placement[a.rank];
    }

    void data_op(int gi, const ar_op_t *op, OpScratch &s);
    void signal_op(int gi, const ar_op_t *op);
    void wait_op(int gi, const ar_op_t *op);
    void wake_at(int gi, double T);
    void actor(int gi);
};

int payload_dummy;

void Sim::data_op(int gi, const ar_op_t *op, OpScratch &s) {
    ChanState &cs = ch[gi];
    s.route.clear();
    s.weight.clear();
    s.req.clear();
    s.load.clear();
    int rank = gi / p->nchannels;
    int self = ndev + gi;

    /* The op's every resource: a flow from each source's memory to this channel, one
     * from this channel to the destination's; a NETREDUCE's are those the cost model
     * lists (every device's memory and hub link, both ways, as often as it has ranks). */
    ar_op_cost_t cost;
    const double t0 = ar_clock_now(&clk, gi);
    if (op->code == AR_OP_COMPUTE) { /* multiply-adds through the device's matrix units */
        if (ar_clock_op_begin(&clk, gi, op, &cost, nullptr, 0, nullptr) != AR_OK) {
            set_fail("rank %d channel %d op %u: the model has no rate for a product (gemm_tflops)", rank,
                     gi % p->nchannels, cs.pc);
            return;
        }
        s.route.push_back(base_tensor + dev_res(t->placement[rank]));
    }
    if (op->code == AR_OP_NETREDUCE) {
        s.traffic.resize((size_t)2 * t->nlinks + t->ndevices + 1);
        int nt = 0;
        if (ar_clock_op_begin(&clk, gi, op, &cost, s.traffic.data(), (int)s.traffic.size(), &nt) != AR_OK) {
            set_fail("rank %d channel %d op %u: out of memory", rank, gi % p->nchannels, cs.pc);
            return;
        }
        for (int i = 0; i < nt && cost.bytes > 0; i++) {
            const ar_op_traffic_t &x = s.traffic[(size_t)i];
            const int r = x.res == AR_RES_LINK ? net_res(x.link * 2 + (x.dir < 0))
                                               : (x.res == AR_RES_L2 ? base_l2 : base_mem) + dev_res(x.link);
            for (long k = std::lround(x.bytes / cost.bytes); k > 0; k--) s.route.push_back(r);
        }
    }
    for (size_t k = 0; k < s.route.size(); k++) s.weight.push_back(crossings(s.route[k]));
    const double opB = (double)op->n * (double)ar_dtype_size(p->dtype);
    for (uint32_t i = 0; i <= op->nsrc && op->code != AR_OP_NETREDUCE && op->code != AR_OP_COMPUTE; i++) {
        const bool dst = i == op->nsrc;
        const ar_addr_t *a = ar_op_operand(p, op, i);
        const int ep = addr_ep(*a);
        if (route(dst ? self : ep, dst ? ep : self, s.route, s.req) < 0) {
            set_fail(dst ? "rank %d channel %d op %u: no route to the destination"
                         : "rank %d channel %d op %u: no route from a source",
                     rank, gi % p->nchannels, cs.pc);
            return;
        }
        /* the operand's memory: its share still in the L2 crosses it fewer times */
        const int mem_w = mem_weight > 1 && opB > 0
                              ? std::max(l2_fronts ? 0 : 1,
                                         (int)std::lround(mem_weight * ar_clock_mem_bytes(&clk, a, dst, opB) / opB))
                              : mem_weight;
        for (size_t k = s.weight.size(); k < s.route.size(); k++) {
            const int kind = res[s.route[k]].kind;
            s.weight.push_back(kind == RES_MEM ? mem_w : kind == RES_L2 ? l2_crossings[dst] : crossings(s.route[k]));
        }
    }
    /* Its cost from the model (latency, overhead, which term its bytes belong to); SimGrid
     * decides only how fast its bytes stream beside everything else. */
    if (op->code != AR_OP_NETREDUCE && op->code != AR_OP_COMPUTE &&
        ar_clock_op_begin(&clk, gi, op, &cost, nullptr, 0, nullptr) != AR_OK) {
        set_fail("rank %d channel %d op %u: out of memory", rank, gi % p->nchannels, cs.pc);
        return;
    }
    const double B = cost.bytes;
    /* The channel's own bound, once: its link carries the op at B / chan_s at most (a
     * product at its own bottleneck, the units' rate or its bytes'). */
    Resource &R = res[base_chan + gi];
    const double own_s = op->code == AR_OP_COMPUTE ? cost.move_s : cost.chan_s;
    if (own_s > 0 && B > 0) {
        double bw = B / own_s;
        if (bw != R.bw) {
            R.link->set_bandwidth(bw);
            R.bw = bw;
        }
        R.kind = cost.chan_mem ? RES_CLOC : RES_CHAN;
        s.load.emplace_back(base_chan + gi, 1);
    }
    auto load = [&](int r, int w) {
        for (auto &pr : s.load)
            if (pr.first == r) {
                pr.second += w;
                return;
            }
        s.load.emplace_back(r, w);
    };
    for (size_t k = 0; k < s.route.size(); k++) load(s.route[k], s.weight[k]);
    for (int r : s.req) load(r, req_weight[(size_t)t->links[r / 2].kind]);
    for (const auto &pr : s.load) res_bytes[pr.first] += pr.second * B / crossings(pr.first);

    double t1;
    if (B > 0) {
        /* Repeats of a resource go next to each other: SimGrid folds a repeat into
         * the element it just added. */
        s.links.clear();
        for (const auto &pr : s.load)
            for (int k = 0; k < pr.second; k++) s.links.push_back(res[pr.first].impl);
        /* Receive first, then send, on the channel's own mailbox: the two match at
         * once and the communication is the issuing actor's own (a detached one, as
         * Comm::sendto makes, joins SimGrid's global list: O(live communications)
         * per op), and nothing of it outlives the op. The channel's clock may be
         * ahead of SimGrid's: the communication waits that much longer first. */
        sg4::Mailbox *mb = mbox[gi];
        sg4::CommPtr rcv = mb->get_async<int>(&cs.got);
        zone->pending[gi].links = &s.links;
        zone->pending[gi].lat = ahead(gi) + cost.lat_s;
        sg4::CommPtr snd = mb->put_async(&payload_dummy, (uint64_t)llround(B));
        snd->wait();
        zone->pending[gi].links = nullptr;
        t1 = sg4::Engine::get_clock();
        if (trace) {
            fprintf(stderr, "op gi=%d B=%g lat=%g t0=%g dt=%g route:", gi, B, cost.lat_s, t0 * 1e6,
                    (t1 - t0) * 1e6);
            for (const auto &pr : s.load)
                fprintf(stderr, " %s x%d", res[pr.first].link->get_cname(), pr.second);
            fprintf(stderr, "\n");
        }
        if (o->breakdown)
            for (int r : s.route)
                if (res[r].kind == RES_NET) spans[r].push_back(Span{t0 + cost.lat_s, t1});
    } else {
        t1 = -1; /* nothing to stream: the op's latency passes on the channel's clock */
    }
    /* The channel's core is its own: its additions take exactly cost.reduce_s, charged
     * to the channel's clock instead of costing SimGrid an activity (ARSIM_SIM_EXEC=1
     * runs them as one; the tests compare both). */
    double reduced = -1;
    if (exec_reduce && op->code == AR_OP_REDUCE && B > 0 && op->nsrc > 1) {
        sg4::this_actor::execute((double)(op->nsrc - 1) * B);
        reduced = sg4::Engine::get_clock();
    }
    ar_clock_op_end(&clk, gi, op, &cost, t0, t1, reduced);
}

/* Wake channel gi (suspended in a WAIT) at time T, unless it is woken earlier anyway.
 * A kernel timer resumes it: a blocked channel costs SimGrid no activity. A timer
 * that fires when the channel is not asleep in a WAIT (an earlier one woke it) does
 * nothing, and a WAIT looks again after every wake-up. */
void Sim::wake_at(int gi, double T) {
    ChanState &cs = ch[gi];
    if (cs.wake_at >= 0 && cs.wake_at <= T) return;
    cs.wake_at = T;
    ChanState *c = &cs;
    simgrid::kernel::timer::Timer::set(T, [c]() {
        if (c->asleep) c->actor->resume();
    });
}

void Sim::signal_op(int gi, const ar_op_t *op) {
    Arrival a;
    a.t = ar_clock_signal(&clk, gi, ch[gi].pc, op, a.terms);
    FlagState &f = flags[ar_plan_flag(p, ar_plan_signal_rank(p, op), op->flag)];
    /* arrivals mostly come in time order: the end without a search (of a cold list) */
    auto it = f.arr.empty() || f.arr.back().t <= a.t
                  ? f.arr.end()
                  : std::upper_bound(f.arr.begin(), f.arr.end(), a.t,
                                     [](double x, const Arrival &y) { return x < y.t; });
    f.arr.insert(it, a);
    for (int w : f.waiters)
        if (f.count() >= ch[w].need) wake_at(w, f.nth(ch[w].need).t);
}

/* The count-th arrival at the flag, in time order. Arrivals are known when their
 * SIGNAL is issued, never earlier than min_signal_s from now. Once the count-th
 * arrival known so far cannot be beaten (it is within that, or one channel alone
 * signals the flag, so arrivals come in its program order) the channel's clock
 * simply moves there; otherwise the channel blocks until then, and every new SIGNAL
 * to the flag (which may arrive earlier) moves the wake-up. */
void Sim::wait_op(int gi, const ar_op_t *op) {
    ChanState &cs = ch[gi];
    int rank = gi / p->nchannels;
    uint64_t need = op->count;
    /* One execution, epoch 0: a WAIT one execution back (or count 0) looks at no
     * SIGNAL of this one (plan.h). */
    const double t_enter = ar_clock_now(&clk, gi);
    if (need == 0 || op->back) {
        ar_clock_wait(&clk, gi, -1, t_enter, t_enter, nullptr);
        return;
    }
    FlagState &f = flags[ar_plan_flag(p, rank, op->flag)];
    double clock = t_enter;
    bool blocked = false;
    for (;;) {
        double now = sg4::Engine::get_clock();
        clock = std::max(clock, now);
        double T = f.count() >= need ? f.nth(need).t : -1;
        if (T >= 0 && T <= clock + 1e-12 * std::max(1e-9, clock)) break;
        if (T >= 0 && (f.one_sender || T <= now + min_signal_s)) {
            clock = T;
            break;
        }
        if (!blocked) {
            f.waiters.push_back(gi);
            cs.need = need;
            blocked = true;
        }
        /* A clock ahead of SimGrid's: look again then at the latest. */
        double at = T >= 0 ? T : (clock > now ? clock : -1);
        if (T >= 0 && clock > now) at = std::min(T, clock);
        if (at >= 0) wake_at(gi, at);
        cs.asleep = true;
        sg4::this_actor::suspend();
        cs.asleep = false;
        cs.wake_at = -1;
    }
    if (blocked) f.waiters.erase(std::find(f.waiters.begin(), f.waiters.end(), gi));
    const Arrival &a = f.nth(need);
    const double now = sg4::Engine::get_clock();
    ar_clock_wait(&clk, gi, now, clock, a.t, a.terms);
    /* Those before it: no later WAIT needs them, and no SIGNAL still to come arrives before
     * them (one sender's come in order; any other's no sooner than min_signal_s from now). */
    if (f.counts_up && need - 1 > f.dropped && (f.one_sender || f.nth(need - 1).t <= now + min_signal_s)) {
        f.arr.erase(f.arr.begin(), f.arr.begin() + (std::ptrdiff_t)(need - 1 - f.dropped));
        f.dropped = need - 1;
    }
}

void Sim::actor(int gi) {
    const ar_chan_t *c = &p->chans[gi];
    ChanState &cs = ch[gi];
    OpScratch s;
    for (cs.pc = 0; cs.pc < c->nops && !fail; cs.pc++) {
        const ar_op_t *op = &p->ops[c->first + cs.pc];
        const double began = ar_clock_now(&clk, gi);
        switch (op->code) {
        case AR_OP_COPY:
        case AR_OP_REDUCE:
        case AR_OP_NETREDUCE:
        case AR_OP_COMPUTE: data_op(gi, op, s); break;
        case AR_OP_SIGNAL: signal_op(gi, op); break;
        case AR_OP_WAIT: wait_op(gi, op); break;
        default: break;
        }
        if (timeline) cs.stamps.push_back(Span{began, ar_clock_now(&clk, gi)});
        ar_progress_tick(&progress, sg4::Engine::get_clock(), ++ops);
    }
    if (!fail) {
        cs.done = true;
        ar_clock_chan_end(&clk, gi);
    }
}

double span_union(std::vector<Span> &v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end(), [](const Span &x, const Span &y) { return x.a < y.a; });
    double total = 0, a = v[0].a, b = v[0].b;
    for (size_t i = 1; i < v.size(); i++) {
        if (v[i].a > b) {
            total += b - a;
            a = v[i].a;
            b = v[i].b;
        } else if (v[i].b > b) {
            b = v[i].b;
        }
    }
    return total + (b - a);
}

sg4::Link *make_link(ArZone *z, const std::string &name, double bw, double lat) {
    return z->create_link(name, std::vector<double>{bw})
        ->set_sharing_policy(sg4::Link::SharingPolicy::SHARED)
        ->set_latency(lat)
        ->seal();
}

} // namespace

extern "C" int ar__sim_engine_run(const ar_topo_t *t, const ar_plan_t *p, const ar_run_opts_t *o,
                                  ar_result_t *r, ar_error_t *err) {
    try {
        Sim s;
        s.t = t;
        s.p = p;
        s.o = o;
        ar_progress_start(&s.progress, o, p->nops);
        s.m = t->model;
        s.ndev = t->ndevices;
        s.nch = ar_plan_run_chans(p);
        s.ep_host = s.ndev + s.nch;
        const ar_mem_level_t *lvl = &s.m->mem[o->buffer];
        s.trace = ar__sim_trace();
        const char *ex = getenv("ARSIM_SIM_EXEC");
        s.exec_reduce = ex && strcmp(ex, "1") == 0;
        const char *tl = o->timeline ? o->timeline : getenv("ARSIM_SIM_TIMELINE");
        s.timeline = tl && *tl ? tl : nullptr;
        s.chan_speed = s.m->reduce_gbps * 1e9;
        s.min_signal_s = s.m->signal_lat_ns * 1e-9 * (1 - 1e-9);
        if (s.m->signal_lat_local_ns > 0)
            s.min_signal_s = std::min(s.min_signal_s, s.m->signal_lat_local_ns * 1e-9 * (1 - 1e-9));
        s.hop_links.resize((size_t)t->nnodes + 1);
        s.hop_dirs.resize((size_t)t->nnodes + 1);

        xbt_log_control_set("root.thresh:critical");
        int argc = 1;
        char arg0[] = "arsim";
        char *argv[] = {arg0, nullptr};
        sg4::Engine e(&argc, argv);
        ar__sim_network_model(e); /* each op's latency factor is set below (lat_factor) */
        e.set_config("contexts/stack-size:" + std::to_string(AR__SIM_STACK_KIB));
        {
            long actors = 0;
            for (int gi = 0; gi < s.nch; gi++) actors += p->chans[gi].nops > 0;
            if (!ar__sim_guard_pages(actors)) e.set_config("contexts/guard-size:0");
        }

        r->start_s = ar_now_s(); /* sim.c makes it the time taken to get here */
        auto *z = new ArZone("arsim");
        s.zone = z;

        s.base_mem = 2 * t->nlinks;
        s.base_host = s.base_mem + s.ndev;
        s.base_chan = s.base_host + s.ndev;
        s.base_issue = s.base_chan + s.nch;
        s.base_tensor = s.base_issue + s.ndev;
        s.base_l2 = s.base_tensor + s.ndev;
        s.res.resize((size_t)s.base_l2 + s.ndev);
        net_weights(s.m, &s.net_weight, s.req_weight);
        if (p->only_rank >= 0) {
            s.fold.resize((size_t)2 * t->nlinks);
            s.shifts = ar_plan_shifts(p);
            if (ar_topo_fold_links(t, s.shifts, s.fold.data()) != AR_OK)
                return AR_ERR(err, AR_EPLAN, "sim: %s has no translations for a plan of one rank", t->name);
        }
        for (int l = 0; l < t->nlinks; l++) {
            const ar_link_t *lk = &t->links[l];
            const ar_link_kind_t *k = &s.m->links[lk->kind];
            double bw = ar_topo_link_gbps(t, l) * 1e9, lat = k->lat_ns * 1e-9;
            auto *sd = z->get_iface()->create_split_duplex_link("l" + std::to_string(l), bw * s.net_weight);
            sd->set_latency(lat)->seal();
            sg4::Link *dirs[2] = {sd->get_link_up(), sd->get_link_down()};
            for (int d = 0; d < 2; d++) {
                Resource &R = s.res[2 * l + d];
                R.link = dirs[d];
                R.bw = bw;
                R.kind = RES_NET;
            }
        }
        /* One link per memory carries reads and writes together (ar_cost_mem_gbps). */
        const double mem_bw = ar_cost_mem_gbps(lvl) * 1e9;
        if (ar_cost_mem_weighted(s.m, o->buffer)) s.mem_weight = 16; /* weights to 1/16 (1/8 errs up to 6%) */
        s.l2_fronts = ar_cost_l2_fronts(s.m, o->buffer);
        for (int w = 0; s.l2_fronts && w < 2; w++)
            s.l2_crossings[w] = std::max(1, (int)std::lround(s.mem_weight * ar_cost_l2_weight(s.m, o->buffer, w)));
        for (int d = 0; d < s.ndev; d++) {
            Resource &R = s.res[s.base_mem + d];
            R.bw = mem_bw;
            R.kind = RES_MEM;
            R.link = make_link(z, "mem" + std::to_string(d), R.bw * s.mem_weight, lvl->lat_ns * 1e-9);
            if (s.l2_fronts) {
                Resource &C = s.res[s.base_l2 + d];
                C.bw = ar_cost_l2_gbps(s.m) * 1e9;
                C.kind = RES_L2;
                C.link = make_link(z, "l2_" + std::to_string(d), C.bw * s.mem_weight, 0);
            }
            if (p->host_elems > 0) { /* only plans staged through the host cross it */
                Resource &H = s.res[s.base_host + d];
                H.bw = s.m->host_link_gbps * 1e9;
                H.kind = RES_HOST;
                H.link = make_link(z, "pcie" + std::to_string(d), H.bw, s.m->host_link_lat_ns * 1e-9);
            }
            const double flops = ar_cost_gemm_flops(s.m, p->dtype);
            if (flops > 0) { /* products on one device share its matrix units */
                Resource &T = s.res[s.base_tensor + d];
                T.bw = flops;
                T.kind = RES_HOST; /* outside the topology's links */
                T.link = make_link(z, "tensor" + std::to_string(d), T.bw, 0);
            }
            if (s.m->link_issue_gbps > 0) {
                Resource &I = s.res[s.base_issue + d];
                I.bw = s.m->link_issue_gbps * 1e9;
                I.kind = RES_HOST; /* a link term, not one of the topology's links */
                I.link = make_link(z, "issue" + std::to_string(d), I.bw, 0);
            }
        }
        /* Each channel is a host of its device: its actor runs there, its CPU is the
         * model's per-channel reduction rate, and its private link bounds what it
         * moves (its bandwidth is set op by op). */
        if (ar_clock_init(&s.clk, t, p, o->buffer) != AR_OK) return AR_ERR(err, AR_ENOMEM, "sim: out of memory");
        s.ch.resize((size_t)s.nch);
        s.mbox.assign((size_t)s.nch, nullptr);
        s.chan_hosts.assign((size_t)s.nch, nullptr);
        z->pending.resize((size_t)s.nch);
        for (int gi = 0; gi < s.nch; gi++) {
            if (p->chans[gi].nops == 0) continue;
            int rank = gi / p->nchannels;
            std::string nm = std::string(t->nodes[t->placement[rank]].name) + ".r" +
                             std::to_string(rank) + ".c" + std::to_string(gi % p->nchannels);
            Resource &Rc = s.res[s.base_chan + gi];
            Rc.bw = 1e9;
            Rc.kind = RES_CHAN;
            Rc.link = make_link(z, nm + ".chan", Rc.bw, 0);
            s.chan_hosts[gi] = z->create_host(nm, std::vector<double>{s.m->reduce_gbps * 1e9})->seal();
            unsigned long id = s.chan_hosts[gi]->get_netpoint()->id();
            if (z->np2chan.size() <= id) z->np2chan.resize(id + 1, -1);
            z->np2chan[id] = gi;
            s.mbox[gi] = sg4::Mailbox::by_name(nm);
        }
        for (auto &R : s.res)
            if (R.link) R.impl = R.link->get_impl();
        z->seal();
        z->get_iface()->get_network_model()->set_lat_factor_cb(
            [z](double, const sg4::Host *src, const sg4::Host *, const std::vector<sg4::Link *> &,
                const std::unordered_set<sg4::NetZone *> &) { return z->lat_factor(src); });

        s.res_bytes.assign(s.res.size(), 0.0);
        if (o->breakdown) s.spans.resize((size_t)2 * t->nlinks);
        s.flags.resize(ar_plan_flag_slots(p));
        {
            /* -2 none, -1 several (or, for a waiter, counts that go down) */
            std::vector<int> sender(s.flags.size(), -2), waiter(s.flags.size(), -2);
            std::vector<uint64_t> last(s.flags.size(), 0);
            for (int gi = 0; gi < s.nch; gi++) {
                const ar_chan_t *c = &p->chans[gi];
                for (uint32_t i = 0; i < c->nops; i++) {
                    const ar_op_t *op = &p->ops[c->first + i];
                    if (op->code == AR_OP_SIGNAL) {
                        int &x = sender[ar_plan_flag(p, ar_plan_signal_rank(p, op), op->flag)];
                        x = x == -2 || x == gi ? gi : -1;
                    } else if (op->code == AR_OP_WAIT && op->count > 0 && !op->back) { /* one that reads arrivals */
                        const size_t f = ar_plan_flag(p, gi / p->nchannels, op->flag);
                        waiter[f] = (waiter[f] == -2 || waiter[f] == gi) && op->count >= last[f] ? gi : -1;
                        last[f] = op->count;
                    }
                }
            }
            for (size_t i = 0; i < s.flags.size(); i++) {
                FlagState &f = s.flags[i];
                f.one_sender = sender[i] >= 0;
                f.counts_up = waiter[i] >= 0;
                /* every arrival kept: room for all at once, else grown as they come */
                if (!f.counts_up) f.arr.reserve(p->per_epoch[i]);
            }
        }

        Sim *sp = &s;
        for (int gi = 0; gi < s.nch; gi++) {
            if (p->chans[gi].nops == 0) continue;
            s.ch[gi].actor = sg4::Actor::create(s.mbox[gi]->get_name(), s.chan_hosts[gi],
                                                [sp, gi]() { sp->actor(gi); });
        }
        e.run();

        if (s.fail) return AR_ERR(err, AR_EPLAN, "sim: %s", s.fail_msg);
        /* The cuda backend's timeline format (ARSIM_CUDA_TIMELINE), on the model's clocks: the
         * two can be set side by side op by op. */
        if (s.timeline) {
            ar_out_t out;
            char label[160];
            snprintf(label, sizeof label, "--timeline %s", s.timeline);
            if (ar_out_open(&out, label, s.timeline, err) != AR_OK) return err->code;
            FILE *f = out.f;
            ar_timeline_header(f);
            for (int gi = 0; gi < s.nch; gi++) {
                const int r = gi / p->nchannels;
                for (size_t i = 0; i < s.ch[gi].stamps.size(); i++)
                    ar_timeline_row(f, t->placement[r], r, gi % p->nchannels, (uint32_t)i,
                                    &p->ops[p->chans[gi].first + i], s.ch[gi].stamps[i].a * 1e9,
                                    s.ch[gi].stamps[i].b * 1e9);
            }
            if (ar_out_close(&out, err) != AR_OK) return err->code;
        }
        for (int gi = 0; gi < s.nch; gi++) {
            const ChanState &c = s.ch[gi];
            if (p->chans[gi].nops == 0 || c.done) continue;
            const ar_op_t *op = &p->ops[p->chans[gi].first + c.pc];
            return AR_ERR(err, AR_EPLAN,
                          "deadlock: rank %d channel %d op %u waits for flag %u to reach %llu but "
                          "only %llu SIGNALs arrive",
                          gi / p->nchannels, gi % p->nchannels, c.pc, op->flag, (unsigned long long)op->count,
                          (unsigned long long)s.flags[ar_plan_flag(p, gi / p->nchannels, op->flag)].count());
        }
        ar_clock_result(&s.clk, r);
        r->ops_executed = s.ops;
        if (o->breakdown) {
            r->links = (ar_link_stat_t *)calloc((size_t)2 * t->nlinks + 1, sizeof *r->links);
            if (!r->links) return AR_ERR(err, AR_ENOMEM, "sim: out of memory");
            for (int l = 0; l < t->nlinks; l++)
                for (int d = 0; d < 2; d++) {
                    ar_link_stat_t *st = &r->links[r->nlinks++];
                    double cap = s.res[2 * l + d].bw;
                    st->link = l;
                    st->dir = d ? -1 : 1;
                    st->bytes = s.res_bytes[2 * l + d];
                    st->busy_s = span_union(s.spans[2 * l + d]);
                    st->util = r->time_s > 0 && cap > 0 ? st->bytes / (cap * r->time_s) : 0;
                }
        }
        return AR_OK;
    } catch (const std::exception &ex) {
        return AR_ERR(err, AR_EINVAL, "sim: SimGrid: %s", ex.what());
    }
}
