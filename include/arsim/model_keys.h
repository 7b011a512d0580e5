/* arsim: every key of a hardware model, declared once.
 *
 * X(section, key, unit, required, min, max, meaning)
 *   section   ROOT (a top-level key), LEVEL (under memory.tcm|sram|hbm), LINK (under
 *             each entry of links)
 *   key       the YAML key, and the name of the double that holds it (ar_model_t,
 *             ar_mem_level_t or ar_link_kind_t): values stay in the unit their name
 *             carries (lat_ns in ns, bw_gbps in GB/s = 1e9 bytes/s)
 *   unit      ns, GB/s, GHz, TFLOP/s, bytes, lanes, units or flag (ar_model_unit_si turns each
 *             into SI; a count or a flag is 1)
 *   required  1: the key must be there and positive; 0: optional, 0 when absent
 *             (the term is left out: what 0 means is said in `meaning`)
 *   min, max  the accepted range, in the key's unit (an optional key may also be 0)
 *   meaning   one line for `arsim model keys` and docs/REFERENCE.md
 *
 * From this one list come the fields of the model (arsim/model.h), the loader's
 * parsing and range checks (model/model.c), the writer `arsim calibrate` uses
 * (ar_model_write), `arsim model keys` and the key reference in the docs. Adding a
 * term: one X line here, the cost that uses it (cost/), a test. */
#ifndef ARSIM_MODEL_KEYS_H
#define ARSIM_MODEL_KEYS_H

/* Bounds: a time up to one second, a rate up to 10 PB/s, a capacity up to 1 PB. */
#define AR_MK_MAX_NS 1e9
#define AR_MK_MAX_GBPS 1e7
#define AR_MK_MAX_BYTES 1e15

#define AR_MODEL_KEYS(X)                                                                                       \
    X(ROOT, clock_ghz, "GHz", 1, 1e-3, 1e3, "device clock: turns times into cycles for reporting")           \
    X(LEVEL, capacity_bytes, "bytes", 1, 1, AR_MK_MAX_BYTES, "bytes the level holds per device")              \
    X(LEVEL, read_gbps, "GB/s", 1, 1e-3, AR_MK_MAX_GBPS,                                                      \
      "the level's read bandwidth per device, all readers together (reads and writes share one "             \
      "bandwidth: a byte read takes 1/read_gbps of it, a byte written 1/write_gbps; with cold_lat_ns sram "   \
      "is the L2 in front of HBM, which every HBM byte crosses at sram's rates (never below HBM's) and "     \
      "only those the L2 no longer holds at HBM's, the two side by side)")                                     \
    X(LEVEL, write_gbps, "GB/s", 1, 1e-3, AR_MK_MAX_GBPS, "the level's write bandwidth per device")           \
    X(LEVEL, copy_gbps, "GB/s", 0, 1e-3, AR_MK_MAX_GBPS,                                                      \
      "reads and writes together: a copy's read plus written bytes per second, its lines resident; a byte "  \
      "written among reads then takes 2/copy_gbps - 1/read_gbps of the bandwidth (below 2 x read_gbps; 0: "  \
      "1/write_gbps, reads and writes add)")                                                                  \
    X(LEVEL, lat_ns, "ns", 1, 1e-3, AR_MK_MAX_NS, "access latency from the device's own cores")              \
    X(LINK, bw_gbps, "GB/s", 1, 1e-3, AR_MK_MAX_GBPS, "one link of this kind, one direction")                 \
    X(LINK, lat_ns, "ns", 1, 1e-3, AR_MK_MAX_NS, "one hop over such a link, one way")                         \
    X(LINK, pull_gbps, "GB/s", 0, 1e-3, AR_MK_MAX_GBPS,                                                       \
      "the same for bytes the far side loads (a pull: its read requests share the link with the data, so "  \
      "it carries less of them than of stores); 0: bw_gbps")                                                  \
    X(LINK, lanes, "lanes", 0, 1, 4096,                                                                       \
      "links of this kind one device has (the first kind, in built topologies): switch:N joins each "         \
      "device to the switch with all of them, full:N splits them evenly among a device's N-1 peers, at "      \
      "least one each (0: one)")                                                                              \
    X(ROOT, reduce_gbps, "GB/s", 1, 1e-3, AR_MK_MAX_GBPS, "one channel's additions: bytes of output per second") \
    X(ROOT, chan_inflight_bytes, "bytes", 1, 1, 1e9,                                                          \
      "bytes one channel keeps in flight on remote reads (with chan_read_lat_ns, Little's law)")              \
    X(ROOT, chan_read_lat_ns, "ns", 1, 1e-3, AR_MK_MAX_NS, "a remote read's round trip as one channel sees it") \
    X(ROOT, chan_write_gbps, "GB/s", 1, 1e-3, AR_MK_MAX_GBPS, "one channel's posted remote stores")           \
    X(ROOT, signal_lat_ns, "ns", 1, 1e-3, AR_MK_MAX_NS, "a SIGNAL until it is visible at the waiter, one hop") \
    X(ROOT, signal_lat_local_ns, "ns", 0, 1e-3, AR_MK_MAX_NS,                                                 \
      "the same when both are on one device (0: signal_lat_ns)")                                              \
    X(ROOT, launch_ns, "ns", 1, 1e-3, AR_MK_MAX_NS, "starting one plan execution")                            \
    X(ROOT, launch_block_ns, "ns", 0, 1e-6, AR_MK_MAX_NS,                                                     \
      "each executor block of a launch starts this much after the one before it on its device (0: together)") \
    X(ROOT, link_issue_gbps, "GB/s", 0, 1e-3, AR_MK_MAX_GBPS,                                                 \
      "what one device's channels pull and push over all its links together (0: only the links bound it)")    \
    X(ROOT, host_link_gbps, "GB/s", 1, 1e-3, AR_MK_MAX_GBPS, "device <-> host staging (naive), one direction") \
    X(ROOT, host_link_lat_ns, "ns", 1, 1e-3, AR_MK_MAX_NS, "device <-> host staging, one way")                \
    X(ROOT, op_overhead_ns, "ns", 0, 1e-3, AR_MK_MAX_NS,                                                      \
      "the executor's own cost per COPY/REDUCE: issue, pipeline fill and drain, the barrier after it (0: none)") \
    X(ROOT, wait_overhead_ns, "ns", 0, 1e-3, AR_MK_MAX_NS,                                                    \
      "the executor's own cost per WAIT after its flag reached the count (0: none)")                          \
    X(ROOT, host_chan_read_gbps, "GB/s", 0, 1e-3, AR_MK_MAX_GBPS,                                             \
      "one channel loading host memory (0: only host_link_gbps bounds it)")                                   \
    X(ROOT, host_chan_write_gbps, "GB/s", 0, 1e-3, AR_MK_MAX_GBPS,                                            \
      "one channel storing to host memory (0: only host_link_gbps bounds it)")                                \
    X(ROOT, host_chan_read_pair_gbps, "GB/s", 0, 1e-3, AR_MK_MAX_GBPS,                                        \
      "one channel loading two host sources of one executor group at once, both streams (0: host_chan_read_gbps)") \
    X(ROOT, chan_write_land_gbps, "GB/s", 0, 1e-3, AR_MK_MAX_GBPS,                                            \
      "rate at which one channel's peer stores land; a SIGNAL's release waits for them (0: as issued)")       \
    X(ROOT, signal_release_ns, "ns", 0, 1e-3, AR_MK_MAX_NS,                                                   \
      "a SIGNAL's flag update completes this long after its issue; the channel's next SIGNAL waits, unless released with it (0: none)") \
    X(ROOT, signal_release_remote_ns, "ns", 0, 1e-3, AR_MK_MAX_NS,                                            \
      "the same for a flag on another device (0: signal_release_ns)")                                         \
    X(ROOT, signal_release_chan_ns, "ns", 0, 1e-3, AR_MK_MAX_NS,                                              \
      "a release takes this x log2(n) more, n its device's channels whose latest op crosses (0: none)")       \
    X(ROOT, signal_fence_ns, "ns", 0, 1e-3, AR_MK_MAX_NS,                                                     \
      "a SIGNAL's release fence takes at least this, nothing outstanding (0: none)")                          \
    X(ROOT, signal_together_ns, "ns", 0, 1e-3, AR_MK_MAX_NS,                                                  \
      "each SIGNAL released with the one before it (a run to distinct flags, one thread each) keeps its "     \
      "channel this much longer: the run's release fences queue, and all its flags go out when the whole "    \
      "release is done (0: a run costs its first release)")                                                    \
    X(ROOT, chan_local_read_gbps, "GB/s", 0, 1e-3, AR_MK_MAX_GBPS,                                            \
      "one channel's loads from its own device's memory, an op's sources summed (0: only the memory bounds it)") \
    X(ROOT, chan_local_read_fp32_gbps, "GB/s", 0, 1e-3, AR_MK_MAX_GBPS,                                        \
      "chan_local_read_gbps for a REDUCE of fp32 elements (the executor converts and adds each element "      \
      "of a source; fp32 has half as many a byte, none to convert); its push and cold rates scale alike "     \
      "(0: as chan_local_read_gbps)")                                                                         \
    X(ROOT, chan_local_read_push_gbps, "GB/s", 0, 1e-3, AR_MK_MAX_GBPS,                                       \
      "the same for an op whose destination is on another device (0: chan_local_read_gbps)")                  \
    X(ROOT, chan_local_read_cold_gbps, "GB/s", 0, 1e-3, AR_MK_MAX_GBPS,                                       \
      "chan_local_read_gbps for the lines the L2 no longer holds (a model that tracks warmth; the push "      \
      "rate scales alike; 0: chan_local_read_gbps)")                                                          \
    X(ROOT, chan_cold_crowd_gbps, "GB/s", 0, 1e-3, AR_MK_MAX_GBPS,                                            \
      "a device's demand on its memory (its other channels loading lines the L2 no longer holds, each at "    \
      "its own rate) at which a channel's such loads take twice as long (0: none)")                          \
    X(ROOT, op_misalign_ns, "ns", 0, 1e-3, AR_MK_MAX_NS,                                                      \
      "a COPY/REDUCE with a pointer off a 16-byte line costs this more (0: none)")                            \
    X(ROOT, reduce_group_ns, "ns", 0, 1e-3, AR_MK_MAX_NS,                                                     \
      "each group of two sources of a REDUCE after the first keeps its channel at least this long (0: none)") \
    X(ROOT, reduce_op_ns, "ns", 0, 1e-3, AR_MK_MAX_NS,                                                        \
      "a REDUCE costs the executor this more than a COPY of the same bytes (0: none)")                        \
    X(ROOT, cold_lat_ns, "ns", 0, 1e-3, AR_MK_MAX_NS,                                                         \
      "an op loading bytes its device has touched l2_miss_bytes ago or longer waits this more (0: none)")   \
    X(ROOT, l2_hit_bytes, "bytes", 0, 1, AR_MK_MAX_BYTES,                                                      \
      "bytes a device may move between two touches of a line that the L2 still returns at its own "         \
      "latency; from there to l2_miss_bytes an op waits a growing share of cold_lat_ns (0: the L2's "         \
      "capacity, sram capacity_bytes)")                                                                        \
    X(ROOT, l2_miss_bytes, "bytes", 0, 1, AR_MK_MAX_BYTES,                                                     \
      "bytes moved between two touches of a line after which it comes from memory (all of cold_lat_ns; "     \
      "0: the L2's capacity, a step)")                                                                         \
    X(ROOT, l2_bw_hit_bytes, "bytes", 0, 1, AR_MK_MAX_BYTES,                                                   \
      "bytes a device may move between two touches of a line whose bytes the L2 still serves at its own "    \
      "bandwidth (they cross only the L2, at sram's rates; from there to l2_bw_miss_bytes a growing share "  \
      "crosses memory too; 0: l2_hit_bytes)")                                                                  \
    X(ROOT, l2_bw_miss_bytes, "bytes", 0, 1, AR_MK_MAX_BYTES,                                                  \
      "bytes moved between two touches of a line after which all its bytes cross memory (read, or written "   \
      "back when the store that allocated it displaces another; 0: l2_miss_bytes)")                            \
    X(ROOT, link_ordered, "flag", 0, 1, 1,                                                                    \
      "1: links deliver a channel's stores and its next flag in order, so a SIGNAL after stores needs no "    \
      "fence and arrives as they land, one link latency per message (0: the release waits for the stores "   \
      "to land, then the flag crosses: two)")                                                                 \
    X(ROOT, switch_reduce, "flag", 0, 1, 1,                                                                   \
      "1: a switch linked to every device sums what the devices send it and returns the sum to each, at the " \
      "links' rate (in-network reduction, as NVLink SHARP): the NETREDUCE op, algorithm innet (0: switches "  \
      "only forward)")                                                                                        \
    X(ROOT, gemm_tflops, "TFLOP/s", 0, 1e-6, 1e6,                                                             \
      "a matrix product (COMPUTE) of bf16 or fp16, summed in float32: multiply-adds x 2 per second on one "   \
      "device, all its products together (0: the model runs no product)")                                     \
    X(ROOT, gemm_fp32_tflops, "TFLOP/s", 0, 1e-6, 1e6, "the same for fp32 (0: gemm_tflops)")                 \
    X(ROOT, gemm_overhead_ns, "ns", 0, 1e-3, AR_MK_MAX_NS,                                                    \
      "a COMPUTE's fixed cost besides its multiply-adds and bytes: launch, tile setup, the tail (0: none)")    \
    X(ROOT, gemm_units, "units", 0, 1, 1e6,                                                                   \
      "the units a product spreads over (a GPU's SMs); each channel of the plan on the device that computes "  \
      "no product holds one while the plan runs, except during the first products where every such channel " \
      "starts after one, so products get gemm_tflops x the units left over all; the defaults put no more "   \
      "channels on a device than it has units (0: channels take none)")                                       \
    X(ROOT, gemm_tile_rows, "elements", 0, 1, 65536,                                                          \
      "rows of a product's output one unit computes at a time (its largest tile): a product runs in whole "   \
      "waves of tiles over the units it has, each tile at gemm_tflops / gemm_units, with tiles of half the "  \
      "rows, columns or both where that takes less time (0: no waves, the rate spread evenly)")              \
    X(ROOT, gemm_tile_cols, "elements", 0, 1, 65536, "columns of that tile (0: no waves)")                  \
    AR_MODEL_EXTRA_KEYS(X)

/* A build may add keys here (tests/check_model_keys does): -DAR_MODEL_EXTRA_KEYS(X)=... */
#ifndef AR_MODEL_EXTRA_KEYS
#define AR_MODEL_EXTRA_KEYS(X)
#endif

#endif
