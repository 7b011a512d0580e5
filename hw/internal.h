/* hw: the cuda backend's internals, shared between the host side (hw/cuda.c,
 * plain C against the CUDA runtime) and the plan-executor kernel (hw/exec.cu).
 *
 * At prepare time the plan is lowered to a device form: every address becomes a
 * raw pointer (peer GPUs through unified addressing and peer access, the HOST
 * buffer through mapped pinned memory), every WAIT carries its per-epoch count,
 * every SIGNAL the address of the target rank's flag. The kernel then only
 * interprets: it never looks at ranks, buffers or algorithms. */
#ifndef ARSIM_HW_INTERNAL_H
#define ARSIM_HW_INTERNAL_H

#include <stdint.h>
#include "arsim/gen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One lowered op (opcodes as ar_opcode_t). */
typedef struct ar__dop_s {
    uint32_t code;       /* ar_opcode_t, | AR__DOP_SYS when an address is in host memory */
    uint32_t nsrc;       /* COPY 1, REDUCE k; WAIT: flag slots to sum (see below) */
    uint64_t n;          /* elements */
    void *dst;           /* COPY/REDUCE: destination; SIGNAL: the target flag (uint64_t);
                          * WAIT: the executing rank's own flag (uint64_t) */
    uint64_t src;        /* COPY/REDUCE: index of the first source pointer;
                          * WAIT: distance between flag slots, in uint64_t */
    uint64_t count;      /* WAIT: count - back * per_epoch, as int64_t (plan.h: the target is
                          * (epoch - back) * per_epoch + count, passed at once when <= 0);
                          * COPY/REDUCE with AR__DOP_PAR: the parity offset in bytes */
    uint64_t per_epoch;  /* WAIT: SIGNALs the flag receives per execution */
} ar__dop_t;

/* Data op touching host memory: loads are sys-scope (another GPU may have
 * written the line since this GPU last cached it). */
#define AR__DOP_SYS 0x100u
#define AR__DOP_CODE(c) ((c) & 0xffu)
/* Data op with an epoch-parity address (arsim/plan.h): such pointers are tagged
 * in bit 0 (element pointers are at least 2-byte aligned) and point at the even
 * executions' slot; odd epochs add `count` bytes. */
#define AR__DOP_PAR 0x200u

/* Flags. With peer access, flag f of rank r is one uint64_t in r's GPU memory and
 * a SIGNAL is one system-scope atomic add over NVLink. Without peer access (or
 * forced host staging) flags live in mapped pinned host memory, where x86 PCIe
 * hosts give no system-scope atomics: each flag then has one slot per channel
 * that signals it, a SIGNAL (marked AR__DOP_SYS) bumps its channel's own slot with
 * a release store, and a WAIT sums the slots. */

/* One thread block = one (rank, channel) with at least one op. */
typedef struct ar__dblock_s {
    uint32_t first;      /* first op in the GPU's op array */
    uint32_t nops;
    uint32_t src_first;  /* this block's source pointers: srcs[src_first, src_first + nsrcs) */
    uint32_t nsrcs;
} ar__dblock_t;

/* Kernel parameters, by value (so a captured graph replays them unchanged:
 * everything that changes between executions lives in device memory). */
typedef struct ar__kargs_s {
    const ar__dop_t *ops;
    void *const *srcs;
    const ar__dblock_t *blocks;
    uint64_t *epochs;         /* per block: executions completed (device memory) */
    volatile int *abort_word; /* mapped pinned host memory shared by every GPU: 0 ok,
                               * else AR__ABORT_* (first failure wins) */
    uint64_t timeout_ns;      /* a WAIT spinning longer ends the run */
    int nblocks;
    /* Diagnostics (ARSIM_CUDA_TIMELINE, hw/cuda.c): NULL, or nops + nblocks slots of
     * %globaltimer: when each op of the last execution ended, then when each block
     * started it. */
    uint64_t *stamps;
    uint32_t nops;
    /* A run of SIGNALs to distinct flags (not host slots) released together, one thread
     * each (the default), else one after another by one thread (ARSIM_CUDA_SIGNALS=serial). */
    int signals_together;
} ar__kargs_t;

#define AR__ABORT_TIMEOUT 1

#define AR__THREADS 512      /* threads per block */

/* Launch the executor for one GPU on a stream (cudaStream_t as void *).
 * dtype is ar_dtype_t. Returns a cudaError_t. */
int ar__exec_launch(const ar__kargs_t *a, int dtype, void *stream);
/* Fill n elements of dtype at dst with the generator's values for (seed, rank):
 * ar_gen_value (arsim/gen.h), rounded once to the dtype. */
int ar__fill_launch(void *dst, uint64_t n, int dtype, uint64_t seed, int rank, void *stream);
/* Blocks of the executor one multiprocessor can hold at once (cudaError_t on
 * failure as a negative number). */
int ar__exec_max_blocks_per_sm(int dtype, int *out);

#ifdef __cplusplus
}
#endif

#endif
