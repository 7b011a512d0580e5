/* validate: calibration micro-benchmarks for `arsim calibrate --backend cuda`.
 *
 * Each number below comes from one small benchmark on two peer GPUs (dev0,
 * dev1); none runs an allreduce. validate/calib_yaml.c turns them into a model
 * file. Without CUDA (validate/none.c) or without a GPU, ar_calib_run returns
 * AR_ENOTSUP / AR_EDEVICE with a message saying so. */
#ifndef ARSIM_VALIDATE_CALIB_H
#define ARSIM_VALIDATE_CALIB_H


/* The executor's host loads at the host link's rate (host_link_gbps): x-hostpair on this
 * many channels a rank, at these bytes a rank; enough to fill a GPU's link many times over */
#define HOSTLINK_CHANNELS 16
#define HOSTLINK_LO (16 << 20)
#define HOSTLINK_HI (64 << 20)

#include "arsim/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AR_CALIB_MAX_POINTS 16

typedef struct ar_calib_opts_s {
    int dev0, dev1;        /* the two GPUs (default 0 and 1); dev1 < 0: dev0 alone, every
                            * benchmark but those across a link */
    int threads;           /* threads per block, as the executor uses (default 512) */
    int unroll;            /* 16-byte loads in flight per thread (1, 2, 3, 4, 6 or 8; default 6,
                            * the executor's: hw/exec.cu keeps 2 x UNROLL vectors in flight) */
    int reps;              /* repeats per point; the median is kept (default 5) */
    int quiet;             /* no progress lines on stderr */
} ar_calib_opts_t;

#define AR_CALIB_OPTS_DEFAULT {0, 1, 512, 6, 5, 0}

/* Footprints of the L2-reach chase: 0.1 .. 2.0 x the L2, in steps of 0.05. */
#define AR_CALIB_L2_REACH_POINTS 39
#define AR_CALIB_L2_SWEEP_POINTS 12

typedef struct ar_calib_s {
    char device[256];          /* "NVIDIA H200 x2 (NV18?)" as the driver names them */
    char date[64];             /* UTC, ISO 8601 */
    char driver[96];           /* the NVIDIA driver's version (NVML), "" when unknown */
    char runtime[16];          /* the CUDA runtime's version, "13.0" */
    int ngpus;                 /* GPUs visible */
    int gpus_used;             /* 2, or 1 when only dev0 was measured (no link terms) */
    int threads, unroll;       /* the load shape used for the per-block benchmarks */
    int nsm;                   /* multiprocessors of dev0 */
    double clock_ghz;          /* dev0 max SM clock */
    double hbm_capacity_bytes;
    double l2_bytes;
    int nvlinks_up;            /* NVLink links of dev0 that are up (NVML); -1 unknown */

    /* flag ping-pong, st.release.sys / ld.acquire.sys, one thread each side */
    double flag_rtt_ns;        /* dev0 -> dev1 -> dev0 */
    double flag_oneway_ns;     /* rtt / 2 */
    double flag_local_oneway_ns; /* two blocks of one GPU */
    /* launch overhead, empty kernel, back-to-back */
    double launch_stream_ns;   /* <<<1, threads>>> on a stream */
    double launch_graph_ns;    /* same kernel as nodes of one CUDA graph */
    double launch_graph_wide_ns; /* graph node of a full-width grid (nsm blocks) */
    double launch_graph_pdl_ns;  /* graph of programmatic dependent launches (the executor's way), 16 blocks */
    double launch_graph_pdl_1_ns;    /* same, 1 block */
    double launch_graph_pdl_wide_ns; /* same, nsm blocks */
    /* peer bandwidth (dev0's blocks reading/writing dev1's memory) vs block count */
    int npoints;
    int blocks[AR_CALIB_MAX_POINTS];
    double peer_read_gbps[AR_CALIB_MAX_POINTS];
    double peer_write_gbps[AR_CALIB_MAX_POINTS];
    double peer_read_block_gbps;  /* slope of the read curve at few blocks (per block) */
    double peer_write_block_gbps; /* same for writes */
    double peer_read_max_gbps, peer_write_max_gbps; /* one direction, most blocks */
    double peer_read_bidir_gbps, peer_write_bidir_gbps; /* both GPUs at once, each way: the most of
                                                         * 32, 64, nsm and 2 nsm blocks per GPU */
    int bidir_blocks[2];       /* the block counts that gave them (read, write) */
    /* dependent-load latencies (pointer chase, one thread) */
    double peer_read_lat_ns;
    double local_read_lat_ns;  /* 4096 lines 64 KB apart: after the first pass they live in L2 */
    double l2_read_lat_ns;
    double cold_read_lat_ns;   /* a million lines 256 B apart (128 MB of lines): beyond L2 */
    /* the L2's reach: a chase over every 128-byte line of a footprint in random order, ns per
     * load on the second pass, footprints l2_reach_frac x l2_bytes (0 points: not measured) */
    int l2_reach_n;
    double l2_reach_frac[AR_CALIB_L2_REACH_POINTS];
    double l2_reach_ns[AR_CALIB_L2_REACH_POINTS];
    double host_read_lat_ns;
    /* local memory */
    double hbm_read_gbps, hbm_write_gbps, hbm_copy_gbps; /* copy: read + write bytes */
    double l2_read_gbps;       /* all blocks re-reading an L2-resident buffer, one launch */
    double l2_write_gbps;      /* the same rewriting it (0: not measured) */
    /* all blocks re-reading, and copying, footprints l2_sweep_frac x l2_bytes (read + write
     * bytes for the copy: half the footprint each way); 0 points: not measured */
    int l2_sweep_n;
    double l2_sweep_frac[AR_CALIB_L2_SWEEP_POINTS];
    double l2_sweep_read_gbps[AR_CALIB_L2_SWEEP_POINTS];
    double l2_sweep_copy_gbps[AR_CALIB_L2_SWEEP_POINTS];
    double l2_copy_gbps;       /* the same copying one resident buffer into another, read + write bytes (0: not
                                * measured) */
    /* reduction, one block, L2-resident data, bf16 and fp32, k = 2 */
    double reduce_block_gbps_bf16; /* output bytes/s of a summing block */
    double reduce_block_gbps_fp32;
    double xor_block_gbps_bf16;    /* same loads and stores, no arithmetic */
    double reduce_extra_gbps_bf16; /* B / (t_sum - t_xor): the additions alone */
    double reduce_extra_gbps_fp32;
    /* host staging (mapped pinned memory, kernel loads/stores, all blocks) */
    double host_read_gbps, host_write_gbps;
    double wall_s;             /* time the whole calibration took */
    /* cuBLASLt's products alone (ar_calib_exec's gemm probes, one rank on dev0): the time of one
     * product (CUDA graphs of many, median of repeats) of each shape, M x N x K: a product of
     * one tile in bf16 (its fixed cost), a large one in bf16 and a large one in fp32 (the
     * matrix units' rates) */
    int gemm_done;             /* 1 once all three gave a time */
    uint64_t gemm_shape[3][3];
    ar_dtype_t gemm_dtype[3];
    double gemm_us[3];
    /* host staging by one block (the executor's per-channel rate on mapped pinned memory) */
    double host_read_block_gbps, host_write_block_gbps;
    /* The executor's own costs: probe plans run by the cuda backend's timing path
     * (algorithms/probes.c, ar_calib_exec). Times per execution, us; N ops per probe. */
    int exec_done;             /* 1 once ar_calib_exec has filled these */
    int exec_n_lo, exec_n_hi;  /* the two chain lengths */
    double exec_op_bytes;      /* bytes of each chained COPY */
    double exec_chain_us[2];   /* x-chainN, N = lo, hi */
    double exec_sigs_us[2];    /* x-sigsN */
    double exec_waits_us[2];   /* x-waitsN */
    double exec_rsigs_us[2];   /* x-rsigsN: the SIGNALs go to the other GPU's rank */
    double exec_op_ns;         /* slope of x-chain: one local COPY in the executor */
    double exec_wait_ns;       /* (x-waits - x-sigs) / (N - 1) at N = hi: one WAIT whose flag is there */
    /* x-storesig at two sizes: one channel per rank stores its IN into the next rank's
     * SCRATCH, then SIGNALs (its release fence waits for the stores to land) and WAITs. */
    int land_done;             /* 1 once both sizes gave a time */
    double land_bytes[2];      /* bytes per rank, small and large */
    double land_us[2];         /* time per execution, us */
    double land_gbps;          /* (bytes[1] - bytes[0]) / (us[1] - us[0]): chan_write_land_gbps */
    /* x-reduce and x-local at two sizes, one channel per GPU: its loads from its own GPU. */
    int local_done;            /* 1 once both probes gave a slope */
    double local_bytes[2];     /* bytes per rank (the output), small and large */
    double local_reduce_us[2]; /* x-reduce: REDUCE OUT <- IN + SCRATCH, time per execution */
    double local_copy_us[2];   /* x-local: COPY OUT <- IN */
    double local_read_gbps;    /* 2 (bytes[1] - bytes[0]) / (reduce_us[1] - reduce_us[0]): chan_local_read_gbps */
    double local_copy_read_gbps; /* the same read off x-local (one source): a cross-check */
    int local_fp32_done;       /* x-reduce of fp32 elements at the same sizes gave a slope */
    double local_fp32_us[2];
    double local_read_fp32_gbps; /* its loads: chan_local_read_fp32_gbps */
    /* x-reduce again at two sizes far beyond the L2: the same loads from HBM. */
    int cold_done;             /* 1 once both sizes gave a time */
    double cold_bytes[2];      /* bytes per rank (the output), small and large */
    double cold_reduce_us[2];  /* time per execution, us */
    double cold_read_gbps;     /* 2 (bytes[1] - bytes[0]) / (us[1] - us[0]): chan_local_read_cold_gbps */
    /* ... and with crowd_channels channels on the GPU, each a share: how the others slow
     * one. The cold x-reduce above ran crowd_alone on it (one a rank; on one GPU both
     * ranks are there). */
    int crowd_done;            /* 1 once both sizes gave a time */
    int crowd_alone, crowd_channels;
    double crowd_reduce_us[2];
    double crowd_read_gbps;    /* one channel's share: 2 (bytes[1] - bytes[0]) / (channels a rank) / (us[1] - us[0]) */
    double crowd_gbps;         /* chan_cold_crowd_gbps: ar_calib_crowd_gbps */
    /* x-ringsN at N = exec_n_lo, exec_n_hi, one channel: every rank SIGNALs the next and
     * WAITs for the previous, N rounds. With 2 ranks (one per GPU) every hop crosses
     * the link; with 4 (two per GPU) the hops alternate inside a GPU and across. */
    int rings_done;            /* 1 once both placements gave a slope */
    double rings_us[2][2];     /* [2 ranks, 4 ranks][N = lo, hi], time per execution */
    double ring_hop_ns[2];     /* one hop's round (SIGNAL to the WAIT that sees it, and the
                                * WAIT itself): [0] across the link, slope of the 2-rank
                                * probe; [1] inside a GPU, 2 x the 4-rank slope - [0] */
    int rings_channels;        /* the same 2-rank probe on this many channels (0: not run) */
    double rings_chan_us[2];   /* its times, N = lo, hi */
    double ring_chan_hop_ns;   /* its slope: a hop across when the rank has that many channels */
    /* x-spairsN at N = lo, hi, one channel: a local 16-byte COPY and a SIGNAL, N times. */
    int fence_done;            /* 1 once it gave a slope above x-chainN's */
    double fence_us[2];        /* time per execution, us */
    double fence_ns;           /* slope - exec_op_ns: what the SIGNAL adds (signal_fence_ns) */
    int together_done;         /* 1 once x-fanN rose faster than x-spairsN */
    double together_us[2];     /* x-fanN's time per execution, us */
    double together_ns;        /* each further SIGNAL of a run (signal_together_ns) */
    /* x-pairsN [0] and x-mpairsN [1] at N = lo, hi, 64 KB, one channel, 2 ranks. */
    int misalign_done;
    double misalign_us[2][2];
    double misalign_ns;        /* the slope difference: op_misalign_ns */
    /* x-rchainN at N = lo, hi on 4 ranks: REDUCEs of group_srcs local sources, 16 bytes. */
    int group_done;            /* 1 once it gave a slope above x-chainN's */
    int group_srcs;            /* sources per REDUCE (5: three groups of loads) */
    double group_us[2];        /* time per execution, us */
    double group_ns;           /* one further group (reduce_group_ns): the 5-source slope less
                                * the 3-source one, or (5-source slope - exec_op_ns) / 2
                                * without the latter */
    /* The same on 2 ranks: REDUCEs of 3 local sources, two groups of loads. */
    int red3_done;             /* 1 once it gave a slope (and group_done) */
    double red3_us[2];         /* time per execution, us */
    double reduce_op_ns;       /* 3-source slope - exec_op_ns - group_ns: what a REDUCE costs
                                * over a COPY beyond its groups (reduce_op_ns) */
    /* x-pullpush1 at two sizes: one GPU pulling and pushing at once. */
    int issue_done;            /* 1 once both sizes gave a time */
    double issue_us[2];        /* time per execution, us, at 64 and 256 MB per rank */
    double issue_gbps;         /* 2 x byte difference / time difference: link_issue_gbps */
    /* x-reducepush at 1 and 8 MB: one channel REDUCEs two local sources into the peer. */
    int push_done;
    double push_us[2];
    double push_gbps;          /* 2 x byte difference / time difference: chan_local_read_push_gbps */
    /* x-hostpair at 1 and 8 MB: one channel REDUCEs two host sources, loaded together. */
    int hostpair_done;
    double hostpair_us[2];
    double hostpair_gbps;      /* 2 x byte difference / time difference: host_chan_read_pair_gbps */
    int hostlink_done;         /* x-hostpair, HOSTLINK_CHANNELS a rank, HOSTLINK_LO and _HI bytes */
    int hostlink_per_device;   /* ranks on each GPU, each loading two host slots */
    double hostlink_us[2];
    double hostlink_gbps;      /* a GPU's host loads, the executor's way, many channels: host_link_gbps */
} ar_calib_t;

/* The GPUs this machine has, in words ("2 x NVIDIA H200 (driver 570.86)"). AR_EDEVICE
 * when there is none, AR_ENOTSUP in a build without CUDA. */
int ar_calib_device_info(char *buf, unsigned long len, ar_error_t *err);

/* The shipped model of the GPU kind ar_calib_device_info names ("h100_sxm", "h200_sxm"), or
 * NULL where none is of its kind. */
const char *ar_calib_board_model(const char *device);

/* The model a run on this machine's GPUs takes on topology `spec` where none was asked:
 * the shipped model of the GPUs' kind on a board the builders lay out (full:N, switch:N),
 * whose own default is one kind's (h200_sxm); NULL otherwise (a file's topology keeps its
 * own model, as does a machine without a GPU of a shipped kind). */
const char *ar_calib_gpu_model(const char *spec);

/* Run every benchmark: those across the link only when opts->dev1 >= 0. AR_EDEVICE when
 * a GPU asked for is not there or two have no peer access; AR_ENOTSUP in a build
 * without CUDA. */
int ar_calib_run(const ar_calib_opts_t *opts, ar_calib_t *out, ar_error_t *err);

/* The executor's own costs per op: probe plans (x-chainN, x-sigsN, x-waitsN) through
 * the cuda backend's timing path on topology t (one rank per GPU); fills the exec_*
 * fields of c. Never an allreduce. AR_ENOTSUP in a build without CUDA. */
struct ar_topo_s;
int ar_calib_exec(const struct ar_topo_s *t, ar_calib_t *c, int quiet, ar_error_t *err);

/* NVML, opened at run time (validate/nvml.c): the driver's version (0, or -1 when NVML
 * is not there), and the NVLink links up on the GPUs at these PCI bus ids, the least of
 * them (-1 unknown). */
int ar_nvml_driver_version(char *buf, unsigned long len);
int ar_nvml_nvlinks_up(const char *const *pci_bus_ids, int ngpus);

/* NVLink links up on every GPU of gpus[0..n) (the least of them; -1 when NVML cannot
 * say), as rows and models record what they ran on: "NV18". AR_ENOTSUP without CUDA. */
int ar_calib_nvlinks(const int *gpus, int n);

/* chan_cold_crowd_gbps from one channel's cold load rate with a and with b channels
 * loading on its GPU (r_a, r_b GB/s; a < b): with k = 1.5 r0 / X (an x-reduce moves 1.5
 * bytes through the memory per byte loaded), r_n = r0 / (1 + (n - 1) k), so
 * k = (r_a / r_b - 1) / ((b - 1) - (r_a / r_b) (a - 1)) and X = 1.5 r_a (1 + (a - 1) k) / k.
 * 0 when r_b is no slower. */
double ar_calib_crowd_gbps(int a, double r_a, int b, double r_b);
/* "128x256x64 bf16 2.260 us, ..." of the products' shapes and times (gemm_done), into buf. */
const char *ar_calib_gemm_times(const ar_calib_t *c, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
