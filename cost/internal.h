/* cost/: what the clock and the cost terms share, not part of the public surface
 * (arsim/cost.h holds the formulas and what a backend calls). */
#ifndef ARSIM_COST_INTERNAL_H
#define ARSIM_COST_INTERNAL_H

#include "arsim/cost.h"

/* Bytes one channel moves in one COPY/REDUCE, by kind of access. */
typedef struct ar_chan_bytes_s {
    double local_rd; /* loaded from the executing rank's own device */
    double local_rd_cold; /* the part of local_rd the L2 is expected to miss (ar_cost_warm_t) */
    double peer_rd;  /* loaded from another device (pulled) */
    double host_rd;  /* loaded from the host staging buffer */
    double host_rd_paired; /* the part of host_rd whose source shares its executor group
                            * (two sources loaded together) with another host source */
    double peer_wr;  /* stored to another device (pushed) */
    double host_wr;  /* stored to the host staging buffer */
    int src_groups;  /* the executor's groups of two sources (COPY 1, REDUCE of k: k / 2 up) */
    int reduce_fp32; /* a REDUCE of fp32 elements: local loads at chan_local_read_fp32_gbps's share */
    int host_groups; /* those after the first with a host source: each a round of host loads */
    double cold_share; /* of the local source that misses the L2 most, the expected share of
                        * its lines that miss (ar_cost_warm_t): 0 all warm .. 1 all cold */
    double crowd;      /* with such loads: the device's other channels loading lines the L2 no
                        * longer holds (ar_cost_warm_t.loading), each taken to move what this op
                        * does: x the bytes this op moves through the memory itself (its cold
                        * loads, its local stores) per local byte loaded */
} ar_chan_bytes_t;

/* The bytes of op (executed by exec_rank) by kind; all 0 for SIGNAL/WAIT. warm (may be NULL)
 * sets local_rd_cold, cold_share and crowd. */
void ar_cost_chan_bytes(const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op, int exec_rank,
                        const ar_cost_warm_t *warm, ar_chan_bytes_t *b);
/* Seconds an op with cold local loads waits for its first ones: cold_lat_ns x cold_share (the
 * op's sources load together, so the coldest one sets the wait). */
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
/* Seconds from a SIGNAL's issue by `from_rank` until it is visible on `to_rank`. */
double ar_cost_signal_s(const ar_topo_t *t, int from_rank, int to_rank);
/* The link latencies on the route between two ranks' devices (0 on one device). */
double ar_cost_route_lat_s(const ar_topo_t *t, int from_rank, int to_rank);
double ar_cost_launch_s(const ar_topo_t *t);
/* start[gi] (nranks x nchannels entries): seconds after the launch channel gi starts.
 * AR_OK or AR_ENOMEM. */
int ar_cost_chan_starts(const ar_topo_t *t, const ar_plan_t *p, double *start);
/* Seconds a WAIT adds after its flag reached the count (the model's wait_overhead_ns). */
double ar_cost_wait_s(const ar_topo_t *t);
/* The executor's own cost of a COPY/REDUCE: op_overhead_ns, reduce_op_ns more for a REDUCE,
 * and op_misalign_ns more when the op is misaligned (the `over` term above). */
double ar_cost_op_overhead_s(const ar_topo_t *t, const ar_plan_t *p, const ar_op_t *op);
/* Which channels' latest op crosses to another device (ar_cost_op_crosses), and since when:
 * what a release's floor counts on its device. A backend sets a channel's state as each of
 * its ops starts and counts a device's crossing channels as of a time; a channel whose
 * state was set later than that counts as it was before (the sim runs a channel's clock
 * ahead of others'). */
struct ar_cost_cross_s {
    int *now, *before; /* per channel (rank x nchannels + c) */
    double *since;
    int *dev_first, *dev_chans; /* device d's channels: dev_chans[dev_first[d] .. dev_first[d + 1]) */
};
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
 * its memory has served (loads and stores of every op touching it). A line last touched d
 * bytes ago comes back at the L2's latency up to d = l2_hit_bytes and from memory from
 * l2_miss_bytes on (both measured: a pointer chase over footprints around the L2's capacity;
 * on the H100/H200 the far L2 partition's hits fall between), and an op waits that share of
 * cold_lat_ns, growing linearly between the two; without them, all of it past the L2's
 * capacity. The L2 holds lines, not touches: between two touches of a line no more bytes
 * can have come in than the device's buffers hold, so a line is never further back than
 * that footprint, however often the others were touched meanwhile. One execution is taken
 * to follow another: at the start every page was touched one execution's traffic ago (at
 * most the footprint), so a plan whose footprint per device fits the L2 stays warm.
 * Off (nothing allocated) without cold_lat_ns. */
struct ar_cost_warm_s {
    double hit, miss; /* bytes: l2_hit_bytes, l2_miss_bytes (hit == miss: a step); miss 0 = off */
    double bw_hit, bw_miss; /* the same for bandwidth: l2_bw_hit_bytes, l2_bw_miss_bytes */
    double *clock;    /* per device */
    double *footprint; /* per device: its buffers' bytes, the furthest back a line can be */
    double **stamp;   /* per (rank, buffer): per page, the device's clock when last touched */
    double *page;     /* per (rank, buffer): page bytes */
    uint64_t *npage;  /* per (rank, buffer) */
    int nbufs;
    int *loading;     /* per device: its channels whose op in progress loads lines the L2 no
                       * longer holds (the clock counts them as ops begin and end) */
    const ar_topo_t *topo; /* a plan of rank 0 alone or of rank 0's row (ar_plan_t.mirror_off):
                            * its topology, else NULL. The plan's ranks' buffers and devices'
                            * clocks then stand for those of every rank and device of their
                            * orbits under the translations shifts names (ar_plan_shifts). */
    int shifts;
};
int ar_cost_warm_init(ar_cost_warm_t *w, const ar_topo_t *t, const ar_plan_t *p); /* AR_OK or AR_ENOMEM */
void ar_cost_warm_free(ar_cost_warm_t *w);
/* The share of bytes [a, a + B) on device dev that has left the L2 (1 when w is off): by
 * the L2's reach for latency (a channel's loads wait on it), and for bandwidth (the
 * memory's bytes). */
double ar_cost_warm_cold(const ar_cost_warm_t *w, const ar_plan_t *p, const ar_addr_t *a, int dev, double B);
double ar_cost_warm_cold_bw(const ar_cost_warm_t *w, const ar_plan_t *p, const ar_addr_t *a, int dev, double B);
/* B bytes of operand a (on device dev; written: write 1) in the time of the memory's one
 * link: ar_cost_mem_weight at their warmth (w may be NULL: cold). */
double ar_cost_operand_mem_bytes(const ar_model_t *m, ar_mem_t buffer, const ar_cost_warm_t *w, const ar_plan_t *p,
                                 const ar_addr_t *a, int dev, int write, double B);
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


#endif
