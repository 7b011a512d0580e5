/* The choice behind `--algo auto` (arsim/algo.h). */
#include "algorithms/internal.h"

/* --algo auto: the algorithm and channel count by size and rank count. A policy
 * over plans, so it lives with them; its thresholds come from the channel sweeps
 * of the cuda backend on 2 x H200 (scripts/gpu-tune.sh,
 * scripts/gpu-perf.sh, docs/PERFORMANCE.md). With one rank per GPU on two GPUs,
 * 1stage and 2stage move the same bytes over the link (S each way); 1stage needs
 * one flag round per execution (up to 4 MB a rank it pushes into SCRATCH slots by
 * execution parity and needs no acknowledgement at all) where 2stage needs two,
 * but reduces all S locally: 1stage up to 4 MB,
 * with channels growing with size until the links are full (one block pushes
 * about 20 GB/s), then 2stage: 128 channels to 16 MB, 96 from 32 to 128 MB (one
 * piece a lane; 32 KB chunks were slower there), 128 from 256 MB, where the lanes
 * reach 2 MB and are pipelined in 16 chunks. With more ranks 1stage sends (P-1) x S per rank:
 * 1stage while latency dominates, then 2stage. Channels are per rank, so they
 * shrink with ranks per GPU to stay resident (132 blocks per GPU).
 * Round 3 sweep (out/gpu-final/perf/sweep.txt, 2026-11-22): at 4 MB 1stage with
 * two slots, 128 channels, 18.57 us against 2stage/128 19.46 (auto runs 19.55,
 * 19.51), so 1stage now reaches 4 MB (the two-slot limit in oneshot.c). Left as
 * they were, the differences being within run-to-run noise: 8 MB 1stage:2slot/128
 * 31.60 against 2stage/128 31.78-31.81 (and two slots there would double SCRATCH
 * past its limit); 16 MB 2stage/96 54.68, /128 54.39, /112 58.51 (keep 128);
 * 1 MB 1stage/64 8.41 against /128 8.59 (keep 64). Up to 1 MB the model's channels are
 * taken now (below).
 * Four GPUs (one rank each; docs/PERFORMANCE.md, 4 x H100 and 4 x H200, 2026-11-26 and
 * -27): 1stage to 1 MB (at 512 KB 1stage/64-128 took 14.0-16.7 us where 2stage/64 took
 * 17.5-23.9), 2stage to 32 MB, then ring at the model's defaults (128 channels): from
 * 64 MB it ran 1-9% faster than 2stage/96-128 (4 x H200: 591.7 us at 128 MB against
 * 653.1, 4597 at 1 GB against 4767). Where ranks share GPUs, 2stage throughout (bench takes
 * the model's choice there instead, validate/bench.c). */
void ar_algo_auto(int nranks, int ngpus, uint64_t bytes, int p2p, const char **algo, int *channels) {
    if (!p2p) {
        *algo = "naive";
        *channels = 0;
        return;
    }
    int ch;
    if (nranks == 2 && bytes <= (1u << 20)) {
        /* the model's channels (arsim/case.h), twice the table's below 256 KB: since whole
         * vectors skip the head-and-tail bookkeeping, 4.89 us at 16 KB against the table's
         * 5.19, 5.13 at 64 KB against 5.37 (2 x H200, 2026-11-28 12:43 UTC) */
        *algo = "1stage";
        *channels = 0;
        return;
    }
    if (nranks <= 1 || (nranks == 2 && bytes <= (4u << 20))) {
        *algo = "1stage";
        ch = bytes <= 16 * 1024 ? 2 : bytes <= 32 * 1024 ? 4 : bytes <= 64 * 1024 ? 8 : bytes <= 128 * 1024 ? 16
           : bytes <= 512 * 1024 ? 32 : bytes <= (1u << 20) ? 64 : 128;
    } else if (nranks > 2 && bytes <= (1u << 20)) {
        *algo = "1stage";
        ch = bytes <= 16 * 1024 ? 2 : bytes <= 32 * 1024 ? 4 : bytes <= 128 * 1024 ? 8 : bytes <= 256 * 1024 ? 16 : 64;
    } else if (nranks > 2 && nranks == ngpus && bytes >= (64u << 20)) {
        *algo = "ring";
        *channels = 0; /* the model's: 128 at these sizes on 4 GPUs */
        return;
    } else {
        *algo = "2stage";
        if (nranks == 2) ch = bytes <= (16u << 20) ? 128 : bytes <= (128u << 20) ? 96 : 128;
        else ch = bytes <= (8u << 20) ? 64 : bytes <= (128u << 20) ? 96 : 128;
    }
    int per_gpu = ngpus > 0 ? (nranks + ngpus - 1) / ngpus : nranks;
    while (ch > 1 && ch * per_gpu > 128) ch /= 2;
    *channels = ch;
}
