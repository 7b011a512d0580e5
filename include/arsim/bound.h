/* arsim: the physical bound of an allreduce on a topology (cost/bound.c): no algorithm
 * on any backend may finish sooner. Every row carries it (bound_us) and its share of the
 * row's time (efficiency = bound / time); `arsim bound` prints its terms.
 *
 * For S bytes per rank, D devices, q_d ranks on device d, the model's links and the
 * buffers' memory level, the bound is
 *
 *   launch + max(latency, injection, cut, memory)
 *
 *   launch    the model's launch_ns: every execution starts so
 *   latency   the farthest pair of devices: hops x the lowest link latency, or two host
 *             link latencies if sooner (information from every rank must reach every rank)
 *   injection lat_min + max(S / B_min, 2(D-1) S / (B_1 + ... + B_D)), B_d device d's link
 *             bandwidth per direction (all its links), B_min the narrowest's. Whatever the
 *             algorithm, once a device's ranks have combined their vectors it must send one
 *             value per element (the others need its contribution) and receive one (it needs
 *             theirs); and over all devices at least 2(D-1) values per element cross between
 *             devices (one-way gossip among D nodes takes 2D-2 calls; a switch or host that
 *             forwards without adding is only wire), which all the devices' links together
 *             carry. Where every device has the same links the second is 2(D-1)/D x S / B_d,
 *             the reduce-scatter + all-gather bound; where they differ (a mesh's corners, a
 *             line's ends) a device with fewer links may send less than 2(D-1)/D of the vector
 *             while its neighbours send more. Nothing arrives before one hop's latency.
 *   cut       lat_min + S / C, C the narrowest cut's bandwidth per direction between two
 *             groups of devices (the global minimum cut, switches on either side): each
 *             side needs one value per element from the other
 *   memory    max over devices of 2 q_d S / M, M the level's shared bandwidth (the
 *             harmonic mean of read and write, ar_cost_mem_gbps): each rank reads its
 *             input and writes its output at least once
 *
 * The links are the devices' own; a plan that stages through the host (via_host) may use
 * the host as one more node, linked to every device by its staging link (the model's
 * host_link_gbps, one bandwidth both directions share: half of it each way in B_d and C),
 * so its bound counts those links too. With one device the link terms are 0.
 *
 * Switches that add (the model's switch_reduce, on a topology with a switch) void the
 * gossip count: partial sums may meet inside the network, so the injection term is
 * lat_min + S / B_min alone (each device still sends its contribution once and receives
 * the result once); the cut, latency and memory terms hold as they are. */
#ifndef ARSIM_BOUND_H
#define ARSIM_BOUND_H

#include <stdint.h>
#include "arsim/plan.h"
#include "arsim/topo.h"

typedef struct ar_bound_s {
    double time_s;         /* launch + the largest term */
    double launch_s, latency_s, injection_s, cut_s, memory_s;
    double compute_s;      /* a fused op's product (ar_bound_fused); 0 otherwise */
    const char *binding;   /* "latency", "injection", "cut", "memory" or "compute": the largest term */
    int max_hops;          /* between the farthest devices */
    double inject_gbps;    /* the narrowest device's link bandwidth per direction */
    double inject_sum_gbps; /* every device's link bandwidth per direction, added up */
    double cut_gbps;       /* the narrowest cut's, per direction (0 with one device) */
    double memory_gbps;    /* the level's shared bandwidth per device */
} ar_bound_t;

/* The bound for bytes_per_rank with buffers in `buffer`, over the devices' links, and the
 * host's staging links too when via_host. AR_OK, or AR_EINVAL when the model has no such
 * level. The topology-wide parts (hops, cut) are computed once per topology and kept with it. */
int ar_bound(const ar_topo_t *t, uint64_t bytes_per_rank, ar_mem_t buffer, int via_host, ar_bound_t *out,
             ar_error_t *err);
/* The same for a collective (arsim/plan.h), bytes_per_rank the whole vector's. A
 * reduce-scatter or all-gather is half an allreduce's traffic: a device sends (it holds
 * contributions to the others' shards, reduce-scatter) or receives (the others' shards,
 * all-gather) (D-1)/D of the vector, (D-1) S cross between devices in all, each side of a
 * cut needs S/2 at least from the other, and a rank reads or writes its whole vector once
 * and its shard once: injection lat_min + max((D-1)/D S / B_min, (D-1) S / (B_1 + ... +
 * B_D)) (switches that add void the second for a reduce-scatter), cut lat_min + S / 2C,
 * memory (1 + 1/P) q_d S / M. Latency and launch as above. */
int ar_bound_coll(const ar_topo_t *t, ar_coll_t coll, uint64_t bytes_per_rank, ar_mem_t buffer, int via_host,
                  ar_bound_t *out, ar_error_t *err);
/* The same for any collective, a fused one (arsim/plan.h) too, bytes_per_rank its output:
 * the bound of the collective it moves (its product's allreduce, or the all-gather of A's
 * M x K elements), and the product's, compute = q_d x 2 M N K / the device's matrix
 * rate (ar_cost_gemm_flops; the ranks of a device share its units), whichever is larger:
 * launch + max(latency, injection, cut, memory, compute). Perfect overlap reaches the larger
 * of the two, never less. */
int ar_bound_fused(const ar_topo_t *t, ar_coll_t coll, ar_gemm_t gemm, ar_dtype_t dtype, uint64_t bytes_per_rank,
                   ar_mem_t buffer, int via_host, ar_bound_t *out, ar_error_t *err);

/* A floor under any run of plan p (every rank's ops) from its links alone: the most time
 * any link direction needs for the bytes p's ops put on it at its rate, seconds; every
 * timing backend shares a link's rate among what crosses it, so none predicts less. One
 * pass over the ops' routes, no run: what a search asks before timing a plan it may not
 * need (a star of 16383 children on one switch port under h200_sxm: 51 ms at 1 MB, known
 * without the run's seconds). 0 for a plan of one rank or a row, whose other ranks' bytes
 * it lacks; INFINITY where out of memory. */
double ar_bound_plan_links(const ar_topo_t *t, const ar_plan_t *p, ar_mem_t buffer);
/* The same for the ranks p holds, their ops alone (a plan of one rank or a row: its own bytes,
 * not its translates'): a floor of the whole plan's, whose other ranks only add bytes to the
 * links, found at one rank's cost (auto, before it builds a plan of millions of ops). */
double ar_bound_own_links(const ar_topo_t *t, const ar_plan_t *p, ar_mem_t buffer);
/* A floor of the analytic walk's time for plan p from one rank's channels alone (the first
 * rank p holds): the longest of them, its ops one after another, each at its own latency and
 * its bytes at its own rate, every byte warm, nothing shared, no WAIT held. Where latency
 * rules the links' floor is near 0 and this one is not (torus2d laid over ring_1d:16384 at
 * 8 KB, each column's step 128 hops: rank 0's chain alone, not its 8 M ops of every rank). */
double ar_bound_own_chain(const ar_topo_t *t, const ar_plan_t *p, ar_mem_t buffer);
/* The larger of the two (ar_bound_own_links, ar_bound_own_chain), in one pass over the ops;
 * past `limit` seconds (0: none), a floor past it found so far (a search asks whether a plan
 * may beat the best it has, not by how much it cannot). */
double ar_bound_own_floor(const ar_topo_t *t, const ar_plan_t *p, ar_mem_t buffer, double limit);

#endif
