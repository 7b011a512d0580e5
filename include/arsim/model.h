/* arsim: hardware models. Loaded from model/<name>.yaml.
 *
 * A model names the terms from which every op's time is built. All values are
 * stored in SI-friendly units (bytes, GB/s = 1e9 bytes/s, ns, GHz); the clock
 * turns them into cycles for reporting. */
#ifndef ARSIM_MODEL_H
#define ARSIM_MODEL_H

#include "arsim/types.h"

#define AR_NAME_MAX 64

typedef struct ar_mem_level_s {
    int present;           /* 0 when the device has no such level */
    double capacity_bytes; /* per device */
    double read_gbps;      /* per device, all readers together */
    double write_gbps;
    double lat_ns;         /* access latency from the device's own cores */
} ar_mem_level_t;

typedef struct ar_link_kind_s {
    char name[AR_NAME_MAX]; /* "nvlink4", "pcie5", "mesh_link" ... */
    double bw_gbps;         /* one link, one direction */
    double lat_ns;          /* one hop, one way */
} ar_link_kind_t;

typedef struct ar_model_s {
    char name[AR_NAME_MAX];
    char path[512];              /* file it came from ("" for built-in) */
    double clock_ghz;            /* device clock: ns -> cycles */
    ar_mem_level_t mem[AR_NMEM]; /* tcm, sram, hbm */
    ar_link_kind_t *links;       /* link kinds this model defines */
    int nlinks;
    double reduce_gbps;          /* reduction throughput: bytes of output per second, per channel */
    /* Per-channel limits (one channel = one thread block / one actor). */
    double chan_inflight_bytes;  /* bytes a channel keeps in flight on remote reads */
    double chan_read_lat_ns;     /* remote read round trip seen by a channel */
    double chan_write_gbps;      /* posted remote stores: per-channel rate */
    double signal_lat_ns;        /* SIGNAL to visible at the waiter, one way */
    double signal_lat_local_ns;  /* the same when both are on one device (optional, 0 =
                                  * signal_lat_ns) */
    double launch_ns;            /* starting one plan execution */
    double launch_block_ns;      /* the blocks of a launch do not start together: channel b
                                  * of a device (in rank, then channel order, empty ones
                                  * left out) starts b x this after its first (optional, 0) */
    double link_issue_gbps;      /* what one device's channels move over links per second, pulls
                                  * and pushes together whatever the directions: a device that
                                  * pulls and pushes at once does not get both directions' full
                                  * rate (optional, 0 = only the links bound it) */
    double host_link_gbps;       /* device <-> host staging (naive), one direction */
    double host_link_lat_ns;
    /* The executor's own costs per op, beyond moving bytes (optional keys, 0 when absent).
     * A channel pays them on its own clock; they belong to the sync term. */
    double op_overhead_ns;       /* per COPY/REDUCE: issue, pipeline fill/drain, the block
                                  * barrier that orders it before the channel's next op */
    double wait_overhead_ns;     /* per WAIT: from the flag reaching its count (or at once if
                                  * it already has) until the channel's next op starts */
    /* Per-channel host staging rates (optional, 0 = only host_link_gbps bounds a channel). */
    double host_chan_read_gbps;  /* one channel loading from the host buffer */
    double host_chan_write_gbps; /* one channel storing to the host buffer */
    double host_chan_read_pair_gbps; /* one channel loading two host sources that the executor
                                  * loads together (a REDUCE's sources go two at a time): both
                                  * streams' bytes per second (optional, 0 = host_chan_read_gbps) */
    /* A SIGNAL's release fence waits for the channel's earlier peer stores to land. */
    double chan_write_land_gbps; /* rate at which one channel's peer stores (COPY/REDUCE with
                                  * the destination on another device) land: a SIGNAL waits,
                                  * on the sender's clock before it is issued (sync term),
                                  * until those since the channel's previous SIGNAL have
                                  * landed, each op's from its start plus its latency
                                  * (optional, 0 = they land as fast as they are issued:
                                  * issuing a SIGNAL costs the sender nothing) */
    double signal_release_ns;    /* a SIGNAL's flag update (red.release.sys) completes this
                                  * long after its issue; the channel's next SIGNAL, whose
                                  * release waits for every earlier write, is issued no
                                  * earlier (sender's clock, sync term). Back-to-back
                                  * SIGNALs cost this much each (optional, 0) */
    double signal_release_remote_ns; /* the same for a SIGNAL whose flag is on another
                                  * device (the update crosses a link before it completes;
                                  * optional, 0 = signal_release_ns) */
    double signal_release_chan_ns; /* releases slow down with the channels that cross: while n
                                  * channels of a device have their latest op reaching another
                                  * device, a SIGNAL there is issued no sooner than this x
                                  * log2(n) after its channel reaches it (sender's clock, sync
                                  * term; the fence alone right after another SIGNAL),
                                  * overlapping its wait for stores to land and for its
                                  * previous SIGNAL (optional, 0) */
    double signal_fence_ns;      /* a SIGNAL's release fence (red.release.sys) takes this long
                                  * at least, with no write of the channel outstanding: a
                                  * local COPY followed by a SIGNAL costs this much more than
                                  * the COPY (probe x-spairsN). Added to the
                                  * signal_release_chan_ns floor; signal_lat_ns and
                                  * signal_lat_local_ns are what a hop takes beyond it
                                  * (optional, 0) */
    double reduce_group_ns;      /* the executor loads a REDUCE's sources two at a time: each
                                  * group after the first keeps the channel at least this long
                                  * (one more round of loads), however few its bytes (optional, 0) */
    double reduce_op_ns;         /* a REDUCE costs the executor this much more than a COPY of the
                                  * same bytes, added to op_overhead_ns (its accumulate-and-convert
                                  * path; x-rchainN on 3 and 5 sources against x-chainN; optional, 0) */
    double cold_lat_ns;          /* a COPY/REDUCE loading bytes its device has not touched within
                                  * the L2's capacity (sram capacity_bytes) of its traffic waits this
                                  * much longer for its first loads: a pointer chase beyond L2
                                  * against one within it (optional, 0) */
    double op_misalign_ns;       /* a COPY/REDUCE with a pointer not 16-byte aligned at its start
                                  * or end costs this more (the executor's scalar head and tail;
                                  * probes x-mpairsN against x-pairsN; optional, 0) */
    double chan_local_read_push_gbps; /* the same for an op whose destination is on another
                                  * device: its peer stores slow its local loads (optional,
                                  * 0 = chan_local_read_gbps) */
    double chan_local_read_gbps; /* bytes one channel loads from its own device's memory per
                                  * second, the sources of an op summed (a block keeps few
                                  * loads in flight, each a round trip; its stores are
                                  * posted): a per-channel memory bound (optional, 0 = only
                                  * the device's memory bounds a channel) */
} ar_model_t;

/* name: a shipped model ("h100_sxm", "h200_sxm", "accel_tcm") or a path to a YAML file. */
int ar_model_load(const char *name_or_path, ar_model_t **out, ar_error_t *err);
int ar_model_load_string(const char *yaml, const char *label, ar_model_t **out, ar_error_t *err);
void ar_model_free(ar_model_t *m);
/* Index of a link kind by name, or -1. */
int ar_model_link_kind(const ar_model_t *m, const char *name);
/* Names of the shipped models, NULL-terminated. */
const char *const *ar_model_shipped(void);
/* Directory searched for shipped models (ARSIM_DATADIR env, else the build's). */
const char *ar_model_dir(void);

/* Per-channel rate bound on remote reads: inflight bytes over read latency, GB/s. */
double ar_model_chan_read_gbps(const ar_model_t *m);

#endif
