/* arsim: the cost of one op, from the model's terms. The analytic backend sums
 * these along the critical path; the sim backend builds the same resources in
 * SimGrid and lets them contend. Written once here so the two agree.
 *
 * For a COPY/REDUCE executed by rank e on device D of B = n * dtype bytes:
 *   - every source on another device is a pull: B on each link of the route,
 *     B read from that device's memory; on D itself, B read locally;
 *     the host buffer (naive) is reached over the host link;
 *   - the destination likewise (a push when remote);
 *   lat    = memory latency of the buffer level + link latency of the longest route a
 *            source (or the host) is reached over; the route latency of a destination on
 *            another device or on the host is no part of the op (stores are posted) but of
 *            when its stores land (a COPY to the host takes 1.05 us on the GPUs at 8 KB and
 *            the SIGNAL after it 1.7, the fence waiting for them);
 *            + host groups x (host_link_lat_ns - hbm lat_ns): each later group of a
 *            REDUCE's sources with a host source waits the host's latency before its
 *            bytes stream (ar_cost_host_rounds_s; probe x-hchainN)
 *            + cold_lat_ns x the share of the coldest local source that has left the L2
 *            (ar_cost_warm_t in cost/internal.h: none while its device has moved at most
 *            l2_hit_bytes since an op touched those bytes, all from l2_miss_bytes, linear
 *            between; a REDUCE of 8 KB in one ring plan took 1.32 us on the GPUs with 12 MB
 *            of buffers per GPU and 1.68 with 48 MB)
 *   link   = max over link directions (and the host link) of bytes / (count * bw),
 *            and the executing device's pulled + pushed bytes / link_issue_gbps (the
 *            sim shares that among every op the device's channels issue)
 *   memory = max over devices of (reads + writes) / ar_cost_mem_gbps (the level's one
 *            shared bandwidth, as the sim's memory link), each byte weighed by the rate of
 *            its kind, read or write (ar_cost_mem_weight); in HBM with a model that tracks
 *            warmth only the share the L2 no longer holds (the warmth below) reaches it, and
 *            every byte crosses the L2 in front of it (ar_cost_l2_weight): the longer of
 *            the two
 *   chan   = what one channel (an executor block) can move, ar_cost_chan_s below:
 *            its loads of every kind add up (an executor step issues the loads of
 *            its sources together and waits for all of them), its stores overlap
 *            them: max(loads, pushed / chan_write_gbps, host-written / host_chan_write_gbps)
 *            loads = max(local / chan_local_read_gbps + pulled / (inflight / read latency)
 *                        + host-read, (groups - 1) x reduce_group_ns)
 *            (local at chan_local_read_push_gbps when the destination is on another
 *            device: its peer stores slow its loads, x-reducepush; the share of local
 *            bytes the L2 no longer holds, in sixteenths, slower by chan_local_read_gbps /
 *            chan_local_read_cold_gbps, and slower still by 1 + n x m x cold rate /
 *            chan_cold_crowd_gbps, n the device's other channels whose op in progress
 *            loads such lines, m the bytes this op moves through the memory itself, its
 *            cold loads and local stores, per byte it loads);
 *            host-read: a host source at host_chan_read_gbps, two host sources of one
 *            group together at host_chan_read_pair_gbps; groups: the executor loads a
 *            REDUCE's sources two at a time, and each group after the first is one
 *            more round of loads however few its bytes: reduce_group_ns (a group with a
 *            host source waits the host's latency too: lat above)
 *   move   = max(link, memory, chan)    -- a streamed op runs at its bottleneck; chan
 *            counts as memory when its local loads are its largest part, else link
 *   reduce = (k - 1) * B / reduce_gbps  -- additions, per channel
 *   over   = op_overhead_ns             -- the executor's own cost per data op (sync term),
 *            + reduce_op_ns for a REDUCE (x-rchainN: a REDUCE costs more than a COPY even
 *            in one group of loads), + op_misalign_ns when a pointer of the op is not 16-byte aligned at its
 *            start or end (its scalar head or tail, ar_op_misaligned)
 *   total  = lat + move + reduce + over
 * A COMPUTE (m x N x K, on the executing rank's device) multiplies at the device's matrix
 * units and reads a and b and writes dst once from its memory:
 *   lat    = gemm_overhead_ns                          (compute term)
 *   move   = max(product, bytes / ar_cost_mem_gbps)  (compute or memory)
 *            product = 2 m N K / (ar_cost_gemm_flops x u / gemm_units), u = gemm_units - h,
 *            h the plan's channels on the device that compute no product (each holds a unit
 *            while the plan runs; one unit at least left; 1 without gemm_units); h = 0 for
 *            a channel's first product where every such channel starts after a product
 *            (ar_plan_products_first_alone: it holds no unit before). With a tile
 *            (gemm_tile_rows x gemm_tile_cols): whole waves of tiles over the u units,
 *            ceil(ceil(m / tr) ceil(N / tc) / u) x 2 tr tc K / (ar_cost_gemm_flops /
 *            gemm_units), the least over the tile and its halvings in rows, columns or both
 *   total  = lat + move
 * Products on one device share its matrix units (AR_RES_TENSOR, in equal shares or max-min);
 * their bytes are not shared with the channels' memory traffic.
 * A WAIT costs wait_overhead_ns (sync term) after its flag reaches the count, or at
 * once when it already has (also for a WAIT one execution back, which polls too).
 * A SIGNAL becomes visible at its target signal_lat after it is issued (plus one
 * link latency per hop beyond the first; signal_lat_local_ns when the target is on
 * the sender's device). Its release fence waits, on the sender's
 * clock before the issue (sync term), for the channel's peer stores since its previous
 * SIGNAL (COPY/REDUCE with the destination on another device; link term for that part) to land at
 * chan_write_land_gbps: land = max(max(land, op start + op lat + store lat) + bytes /
 * that rate, op end + store lat) for each such op. A SIGNAL's own flag update lands signal_release_ns after its issue
 * (signal_release_remote_ns when the flag is on another device; land = max(land,
 * issue + that)), so the channel's next SIGNAL waits
 * for it too, unless it is released with it: the executor releases a run of SIGNALs to
 * distinct flags (within its window of AR_EXEC_WINDOW_OPS staged ops, after a data op that
 * touched no host memory) at once, one thread each: the run's release takes
 * signal_together_ns more for every SIGNAL of it after the first (their fences queue in
 * part), and all its flags are issued when that is done. The release takes signal_fence_ns at least, and signal_release_chan_ns x
 * log2(n) more while n channels of its device have their latest op reaching another device
 * (itself among them when its own flag is there; ar_cost_release_floor_s). Probe x-ringsN:
 * rounds of SIGNAL and WAIT across the link slow down with the log of the channels that
 * cross, as much with 24 channels of one rank as with 4 ranks of 24 on a GPU of which one
 * rank's 24 cross; the executor's timelines: a SIGNAL inside a GPU takes 0.8 us while none
 * of its blocks work across (torus2d's row phase) and 1.2-1.5 us while one rank's 16-24
 * channels push across (ring). A SIGNAL right after another SIGNAL takes the fence alone.
 * fence = max(0, land - clock, floor). Without these
 * keys (0) a SIGNAL costs the sender nothing.
 * A channel ends once its peer stores have landed (a kernel's writes are visible
 * when it completes; link term). One execution starts after launch_ns; channel b of a device (counted as the
 * executor lays out its blocks: rank by rank, channel by channel, empty channels
 * left out) starts b x launch_block_ns later still (launch term). */
#ifndef ARSIM_COST_H
#define ARSIM_COST_H

#include "arsim/backend.h"

typedef struct ar_cost_warm_s ar_cost_warm_t; /* cost/internal.h */
/* Whether the model charges an op by which bytes of a buffer it touches, not only by where
 * its ranks sit: bytes another op touched lately are warm (cold_lat_ns, with an SRAM level
 * to hold them). A plan of one rank (arsim/plan.h) stands for the others' then only where
 * it says where in rank 0's buffers their ops fall (ar_plan_t.mirror_off). */
int ar_cost_tracks_warmth(const ar_model_t *m);
/* A byte of memory level `buffer` as the memory's one link (ar_cost_mem_gbps) counts it:
 * read (write 0) or written at the level's own rate for that. Where the L2 stands in front
 * of the memory (ar_cost_l2_fronts) only its share the L2 no longer holds (cold) reaches
 * the memory; elsewhere every byte does. 1 for a level whose read and write rates are
 * equal, cold 1. */
double ar_cost_mem_weight(const ar_model_t *m, ar_mem_t buffer, int write, double cold);
/* Whether the L2 is a resource of its own in front of level `buffer`: HBM under a model
 * that tracks warmth. Every byte then crosses the L2 at its rates (ar_cost_l2_weight, on
 * a link of ar_cost_l2_gbps), and only the lines it no longer holds cross the memory: a
 * load that misses is fetched, a store to such a line allocates it without a fetch and
 * the line it displaces is written back. The two work side by side, so an op takes the
 * longer of its bytes' times on each, not their sum. */
int ar_cost_l2_fronts(const ar_model_t *m, ar_mem_t buffer);
/* The L2's link: sram's rates, never below HBM's (whose measured bytes crossed it). */
double ar_cost_l2_gbps(const ar_model_t *m);
/* A byte read (write 0) or written as the L2's link counts it; 0 where it fronts nothing. */
double ar_cost_l2_weight(const ar_model_t *m, ar_mem_t buffer, int write);
/* Whether any byte counts other than 1 there (the sim then weighs its memory links). */
int ar_cost_mem_weighted(const ar_model_t *m, ar_mem_t buffer);
/* The share of a line the L2 no longer holds when its device last touched it d bytes
 * ago (l2_hit_bytes, l2_miss_bytes); 1 off HBM or without warmth. */
double ar_cost_l2_cold(const ar_model_t *m, ar_mem_t buffer, double d);
typedef struct ar_cost_cross_s ar_cost_cross_t;

typedef struct ar_op_cost_s {
    double lat_s;
    double store_lat_s; /* route latency of a peer destination: its stores land this much
                         * after they leave (not part of total_s) */
    double link_s;     /* link and channel bounds */
    double memory_s;
    double move_s;     /* max(link_s, memory_s) */
    ar_term_t move_term, lat_term;
    double reduce_s;
    double total_s;
    double bytes;      /* B */
    double overhead_s; /* op_overhead_ns; part of total_s, charged to AR_TERM_SYNC */
    int remote;        /* touches another device or the host */
    double chan_s;     /* the chan term alone (ar_cost_chan_s; 0 when no key bounds a channel) */
    int chan_mem;      /* ... led by local loads: a memory term */
    int loads_cold;    /* loads lines of its device the L2 no longer holds (ar_cost_warm_t.loading) */
} ar_op_cost_t;

/* What one op puts on one shared resource: a link direction (link, dir), or a device's
 * memory, host link, link issue, matrix units or L2 (ar_cost_l2_fronts); link = the device,
 * dir 0; a COMPUTE's amount is its multiply-adds x 2, not bytes. The sim backend shares each
 * among what runs at once (max-min), the analytic one in equal shares; breakdowns
 * count the links. */
typedef enum ar_res_e { AR_RES_LINK = 0, AR_RES_MEMORY, AR_RES_HOST, AR_RES_ISSUE, AR_RES_TENSOR, AR_RES_L2 } ar_res_t;
typedef struct ar_op_traffic_s {
    ar_res_t res;
    int link, dir;
    double bytes;
} ar_op_traffic_t;

/* Room for the resources one op of t can put traffic on (ar_cost_op's max_traffic): a route's
 * link directions, each device's memory and L2, and the executing device's own. */
static inline int ar_cost_max_traffic(const ar_topo_t *t) { return 2 * t->nlinks + 2 * t->ndevices + 4; }
/* Cost of op (executed by rank exec_rank) with buffers in memory level `buffer`; warm (may
 * be NULL: all warm) says which of its local bytes are cold. traffic (may be NULL) receives
 * up to max_traffic resources: the link directions first, then each device's memory
 * (reads + writes) and its L2 where that fronts it, the executing device's host link (both
 * directions share it) and its link issue (with link_issue_gbps); *ntraffic their count. */
int ar_cost_op(const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op, int exec_rank,
               ar_mem_t buffer, ar_op_cost_t *c, ar_op_traffic_t *traffic, int max_traffic,
               int *ntraffic, const ar_cost_warm_t *warm);
/* A device's matrix units for products of dtype (the model's gemm_tflops, gemm_fp32_tflops
 * for fp32): multiply-adds x 2 per second; 0 when the model has no rate. */
double ar_cost_gemm_flops(const ar_model_t *m, ar_dtype_t dt);
/* The matrix units' part of a product of rows x N x K at `rate` (multiply-adds x 2 a second,
 * the device's all together) on `units` of its gemm_units: in waves of tiles where the model
 * has tiles (above). Inversely proportional to rate: calibrate reads the rate off a measured
 * time through it. */
double ar_cost_gemm_seconds(const ar_model_t *m, double rate, double units, uint64_t rows, uint64_t N, uint64_t K);
/* One device's memory level as one shared bandwidth that its reads and writes cross
 * together: the harmonic mean of read_gbps and write_gbps (read_gbps when equal). An
 * op's memory term is (reads + writes) / this on each device it touches. On 2 x H200,
 * 96 blocks per GPU REDUCEing two local sources beyond L2 loaded 2576-2591 GB/s
 * (validate/results/block_rates.csv): this rule gives 2586, reads / read + writes /
 * write 2670; COPYs (as many reads as writes) 1913-1920 against 1939 for both. */
double ar_cost_mem_gbps(const ar_mem_level_t *lvl);
/* Capacity check: the plan's buffers (IN+OUT+SCRATCH per rank, summed per device) fit
 * the chosen level; AR_ELIMIT naming the level and both sizes otherwise. */
int ar_cost_check_capacity(const ar_topo_t *t, const ar_plan_t *p, ar_mem_t buffer,
                           ar_error_t *err);
/* ... from the bytes of one rank's buffers (every rank's alike) */
int ar_cost_check_rank_bytes(const ar_topo_t *t, double per_rank, ar_mem_t buffer, ar_error_t *err);

/* ---- the channel clock (cost/clock.c): when each op of a channel may start ----
 * The one place the sequencing rules above live. A timing backend owns the order in
 * which it visits channels and how long an op's bytes take to stream (the analytic
 * backend: the op's own bottleneck; the sim backend: its share under contention, from
 * SimGrid); the clock does the rest. For each channel, in program order:
 *   COPY/REDUCE: ar_clock_op_begin (its cost at the channel's clock), then, once its
 *                bytes have streamed, ar_clock_op_end;
 *   SIGNAL:      ar_clock_signal, which says when it arrives at its target;
 *   WAIT:        ar_clock_wait once its flag reached the count;
 * then ar_clock_chan_end; ar_clock_result gives the execution's time and terms. */
typedef struct ar_chan_clock_s {
    /* When the channel's next op may start, after the launch: base + ahead. base is the
     * backend's own time when it last settled the channel (SimGrid's clock after an op's
     * communication; 0 for the analytic walk), ahead what the channel has spent on its own
     * since (overheads, reductions, fences): kept apart so that every backend adds the
     * same small times in the same order, whatever its clock reads. */
    double base, ahead;
    double terms[AR_NTERM];  /* the critical path that set t, by term; sums to t */
    int stored;              /* peer stores since the channel's last SIGNAL */
    double land;             /* when those have landed */
    double sig_land;         /* when the last SIGNAL's flag update completes */
    double sig_arrive;       /* when the last SIGNAL to another device arrived (ordered links) */
    int host_data;           /* its latest COPY/REDUCE touched host memory */
    uint32_t run_left;       /* SIGNALs still to come of the run released with its latest */
    int loading;             /* its op in progress loads lines the L2 no longer holds */
} ar_chan_clock_t;

typedef struct ar_clock_s {
    const ar_topo_t *topo;
    const ar_plan_t *plan;
    ar_mem_t buffer;
    ar_chan_clock_t *ch;     /* per channel (rank x nchannels + c) */
    ar_cost_cross_t *cross;  /* whose latest op crosses to another device (release floors) */
    ar_cost_warm_t *warm;    /* which bytes each device touched lately (cold_lat_ns) */
} ar_clock_t;

/* Every channel at its start (launch stagger). AR_OK or AR_ENOMEM. */
int ar_clock_init(ar_clock_t *c, const ar_topo_t *t, const ar_plan_t *p, ar_mem_t buffer);
void ar_clock_free(ar_clock_t *c);
/* B bytes of an operand at a (read, or written: write 1), before its op begins, as the
 * memory's link counts them (ar_cost_mem_weight, with their warmth); B on the host. */
double ar_clock_mem_bytes(const ar_clock_t *c, const ar_addr_t *a, int write, double B);
/* COPY/REDUCE `op` of channel gi starts at the channel's clock: its cost (ar_cost_op;
 * traffic, max_traffic, ntraffic as there, may be NULL). */
int ar_clock_op_begin(ar_clock_t *c, int gi, const ar_op_t *op, ar_op_cost_t *cost, ar_op_traffic_t *traffic,
                      int max_traffic, int *ntraffic);
/* ... and ended: it started at `start`; its bytes had streamed at `streamed_at` (< 0: at
 * the op's own bottleneck, cost->move_s after its latency, and its additions too); its
 * additions ended at `reduced_at` (< 0: cost->reduce_s later, on the channel's own core).
 * The channel's clock moves past the executor's overhead. */
void ar_clock_op_end(ar_clock_t *c, int gi, const ar_op_t *op, const ar_op_cost_t *cost, double start,
                     double streamed_at, double reduced_at);
/* SIGNAL `op` (index pc of its channel) at the channel's clock: its release, then its
 * issue. Returns when it arrives at its target; arrival_terms gets the path it carries. */
double ar_clock_signal(ar_clock_t *c, int gi, uint32_t pc, const ar_op_t *op, double arrival_terms[AR_NTERM]);
/* The channel passes a WAIT at `passed` (its clock, or later when it had to wait), the
 * backend's own time being `base` (< 0: the flag was there, the clock goes on as it was). When a SIGNAL released it (arrival_terms not NULL)
 * after the channel reached the WAIT (arrival_t later than its clock), that SIGNAL's
 * path becomes the channel's. */
void ar_clock_wait(ar_clock_t *c, int gi, double base, double passed, double arrival_t, const double *arrival_terms);
/* When channel gi's next op may start. */
static inline double ar_clock_now(const ar_clock_t *c, int gi) { return c->ch[gi].base + c->ch[gi].ahead; }
/* Channel gi has run its last op: it ends once its peer stores have landed. */
void ar_clock_chan_end(ar_clock_t *c, int gi);
/* time_s, terms_s and cycles of the execution: launch + the latest channel's end. */
void ar_clock_result(const ar_clock_t *c, ar_result_t *res);

#endif
