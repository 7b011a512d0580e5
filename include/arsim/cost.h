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
 *            + cold_lat_ns when a local source has left the L2 (ar_cost_warm_t below: its
 *            device has moved more than the L2's capacity since an op touched those bytes;
 *            a REDUCE of 8 KB in one ring plan took 1.32 us on the GPUs with 12 MB of buffers
 *            per GPU and 1.68 with 48 MB)
 *   link   = max over link directions (and the host link) of bytes / (count * bw),
 *            and the executing device's pulled + pushed bytes / link_issue_gbps (the
 *            sim shares that among every op the device's channels issue)
 *   memory = max over devices of (reads + writes) / ar_cost_mem_gbps (the level's one
 *            shared bandwidth, as the sim's memory link)
 *   chan   = what one channel (an executor block) can move, ar_cost_chan_s below:
 *            its loads of every kind add up (an executor step issues the loads of
 *            its sources together and waits for all of them), its stores overlap
 *            them: max(loads, pushed / chan_write_gbps, host-written / host_chan_write_gbps)
 *            loads = max(local / chan_local_read_gbps + pulled / (inflight / read latency)
 *                        + host-read, (groups - 1) x reduce_group_ns)
 *            (local at chan_local_read_push_gbps when the destination is on another
 *            device: its peer stores slow its loads, x-reducepush);
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
 *            start or end (its scalar head or tail, ar_cost_op_misaligned)
 *   total  = lat + move + reduce + over
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
 * for it too. The release takes signal_fence_ns at least, and signal_release_chan_ns x
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

typedef struct ar_cost_warm_s ar_cost_warm_t; /* below */

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
} ar_op_cost_t;

/* Traffic of one op on one link direction (for breakdowns and for sim). */
typedef struct ar_op_traffic_s {
    int link, dir;
    double bytes;
} ar_op_traffic_t;

/* Bytes one channel moves in one COPY/REDUCE, by kind of access. */
typedef struct ar_chan_bytes_s {
    double local_rd; /* loaded from the executing rank's own device */
    double peer_rd;  /* loaded from another device (pulled) */
    double host_rd;  /* loaded from the host staging buffer */
    double host_rd_paired; /* the part of host_rd whose source shares its executor group
                            * (two sources loaded together) with another host source */
    double peer_wr;  /* stored to another device (pushed) */
    double host_wr;  /* stored to the host staging buffer */
    int src_groups;  /* the executor's groups of two sources (COPY 1, REDUCE of k: k / 2 up) */
    int host_groups; /* those after the first with a host source: each a round of host loads */
    double local_cold; /* the part of local_rd its device has not touched lately (ar_cost_warm_t) */
} ar_chan_bytes_t;

/* The bytes of op (executed by exec_rank) by kind; all 0 for SIGNAL/WAIT. warm (may be NULL)
 * sets local_cold. */
void ar_cost_chan_bytes(const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op, int exec_rank,
                        const ar_cost_warm_t *warm, ar_chan_bytes_t *b);
/* One device's memory level as one shared bandwidth that its reads and writes cross
 * together: the harmonic mean of read_gbps and write_gbps (read_gbps when equal). An
 * op's memory term is (reads + writes) / this on each device it touches. On 2 x H200,
 * 96 blocks per GPU REDUCEing two local sources beyond L2 loaded 2576-2591 GB/s
 * (validate/results/block_rates.csv): this rule gives 2586, reads / read + writes /
 * write 2670; COPYs (as many reads as writes) 1913-1920 against 1939 for both. */
double ar_cost_mem_gbps(const ar_mem_level_t *lvl);
/* Seconds an op with cold local loads waits for its first ones (cold_lat_ns; 0 when none). */
double ar_cost_cold_lat_s(const ar_model_t *m, const ar_chan_bytes_t *b);
/* Seconds one channel alone needs to move b (the chan term above); 0 when the model
 * bounds none of them per channel. *mem_term (may be NULL) is set when the local
 * loads are its largest part. */
double ar_cost_chan_s(const ar_model_t *m, const ar_chan_bytes_t *b, int *mem_term);

/* Seconds the later groups of a REDUCE's sources with a host source wait for the host
 * (host_link_lat_ns - HBM's latency each, probe x-hchainN): part of the op's latency, as
 * each such round's bytes stream only after it (naive with 4 ranks per GPU: a REDUCE of
 * seven host slots took 9.2-12.5 us on the GPUs, 8.3 with the rounds overlapping its
 * bytes). */
double ar_cost_host_rounds_s(const ar_model_t *m, const ar_chan_bytes_t *b);
/* Cost of op (executed by rank exec_rank) with buffers in memory level `buffer`; warm (may
 * be NULL: all warm) says which of its local bytes are cold. traffic (may be NULL) receives
 * up to max_traffic link directions; *ntraffic their count. */
int ar_cost_op(const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op, int exec_rank,
               ar_mem_t buffer, ar_op_cost_t *c, ar_op_traffic_t *traffic, int max_traffic,
               int *ntraffic, const ar_cost_warm_t *warm);
/* Seconds from a SIGNAL's issue by `from_rank` until it is visible on `to_rank`. */
double ar_cost_signal_s(const ar_topo_t *t, int from_rank, int to_rank);
double ar_cost_launch_s(const ar_topo_t *t);
/* start[gi] (nranks x nchannels entries): seconds after the launch channel gi starts.
 * AR_OK or AR_ENOMEM. */
int ar_cost_chan_starts(const ar_topo_t *t, const ar_plan_t *p, double *start);
/* Seconds a WAIT adds after its flag reached the count (the model's wait_overhead_ns). */
double ar_cost_wait_s(const ar_topo_t *t);
/* 1 when a COPY/REDUCE of p has a pointer not 16-byte aligned at its start or end (the
 * executor moves that head or tail element by element). */
int ar_cost_op_misaligned(const ar_plan_t *p, const ar_op_t *op);
/* The executor's own cost of a COPY/REDUCE: op_overhead_ns, reduce_op_ns more for a REDUCE,
 * and op_misalign_ns more when the op is misaligned (the `over` term above). */
double ar_cost_op_overhead_s(const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op);
/* Which channels' latest op crosses to another device (ar_cost_op_crosses), and since when:
 * what a release's floor counts on its device. A backend sets a channel's state as each of
 * its ops starts and counts a device's crossing channels as of a time; a channel whose
 * state was set later than that counts as it was before (the sim runs a channel's clock
 * ahead of others'). */
typedef struct ar_cost_cross_s {
    int *now, *before; /* per channel (rank x nchannels + c) */
    double *since;
    int *dev_first, *dev_chans; /* device d's channels: dev_chans[dev_first[d] .. dev_first[d + 1]) */
} ar_cost_cross_t;
int ar_cost_cross_init(ar_cost_cross_t *x, const ar_topo_t *t, const ar_plan_t *p); /* AR_OK or AR_ENOMEM */
void ar_cost_cross_free(ar_cost_cross_t *x);
void ar_cost_cross_set(ar_cost_cross_t *x, int gi, int crosses, double t);
int ar_cost_cross_count(const ar_cost_cross_t *x, int device, double at);
/* The least the release of channel gi's SIGNAL at op index pc takes at time `at`:
 * signal_fence_ns, and signal_release_chan_ns x log2(n) more, n the channels of its device
 * whose latest op crosses to another device (itself among them when its flag is there);
 * a SIGNAL right after another SIGNAL takes the fence alone. Set gi's state for this
 * SIGNAL first. */
double ar_cost_release_floor_s(const ar_topo_t *t, const ar_plan_t *p, const ar_cost_cross_t *x, int gi, uint32_t pc,
                               double at);
/* Which bytes of each device's memory were touched lately: a device's clock counts the bytes
 * its memory has served (loads and stores of every op touching it), and a page of a rank's
 * buffer is warm while fewer than the L2's capacity (the sram level's capacity_bytes) have
 * passed since an op last touched it. One execution is taken to follow another: at the start
 * every page was touched one execution's traffic ago, so a plan whose traffic per device fits
 * the L2 starts warm. Off (nothing allocated) without cold_lat_ns. */
struct ar_cost_warm_s {
    double cap;       /* bytes; 0 = off */
    double *clock;    /* per device */
    double **stamp;   /* per (rank, buffer): per page, the device's clock when last touched */
    double *page;     /* per (rank, buffer): page bytes */
    uint64_t *npage;  /* per (rank, buffer) */
    int nbufs;
};
int ar_cost_warm_init(ar_cost_warm_t *w, const ar_topo_t *t, const ar_plan_t *p); /* AR_OK or AR_ENOMEM */
void ar_cost_warm_free(ar_cost_warm_t *w);
/* Bytes of op's sources on exec_rank's own device that are cold now (0 when w is off). */
double ar_cost_warm_cold_bytes(const ar_cost_warm_t *w, const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op,
                               int exec_rank);
/* op's sources and destination are touched now: each backend calls it once per COPY/REDUCE,
 * as the op starts, after costing it. */
void ar_cost_warm_touch(ar_cost_warm_t *w, const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op);
/* 1 when op, executed by exec_rank, reaches another device: a COPY/REDUCE with a source or
 * its destination there (the host is not a device), a SIGNAL to a flag there. */
int ar_cost_op_crosses(const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op, int exec_rank);
/* 1 when op is a COPY/REDUCE executed by exec_rank whose destination is on another
 * device or on the host: posted stores the next SIGNAL's fence waits for. */
int ar_cost_op_remote_store(const ar_topo_t *t, const ar_op_t *op, int exec_rank);
/* Seconds one channel's remote stores of `bytes` take to land (0 when the model has
 * no chan_write_land_gbps). */
double ar_cost_land_s(const ar_topo_t *t, double bytes);
/* When the channel's peer stores have landed after one more op storing `bytes` to a
 * peer: its first bytes land at `first` (op start + lat + store lat), after the earlier
 * ones (land, when `stored`), at chan_write_land_gbps, and its last no sooner than
 * `end` + store_lat (the formula above). */
double ar_cost_land_after(const ar_topo_t *t, int stored, double land, double first, double end,
                          double store_lat, double bytes);
/* A SIGNAL's release at `now`: *fence is how long it waits for the channel's peer stores
 * (land, when `stored`), its previous SIGNAL (sig_land) and the rank's floor; *landing
 * the part of that spent on the stores (link term; the rest is sync). */
void ar_cost_release_wait(int stored, double land, double sig_land, double floor, double now, double *fence,
                          double *landing);
/* Seconds after its issue a SIGNAL from from_rank to to_rank's flag completes its
 * update (signal_release_ns, or signal_release_remote_ns across devices): the
 * channel's next SIGNAL is issued no earlier. */
double ar_cost_signal_issue_s(const ar_topo_t *t, int from_rank, int to_rank);
/* Device of an address: the rank's device, or -1 for the host. */
int ar_cost_addr_device(const ar_topo_t *t, const ar_addr_t *a);
/* Capacity check: the plan's buffers (IN+OUT+SCRATCH per rank, summed per device) fit
 * the chosen level; AR_ELIMIT naming the level and both sizes otherwise. */
int ar_cost_check_capacity(const ar_topo_t *t, const ar_plan_t *p, ar_mem_t buffer,
                           ar_error_t *err);

#endif
