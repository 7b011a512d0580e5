/* hw: the plan-executor kernel. One launch per GPU per execution; one thread
 * block per (rank, channel) placed on that GPU; each block interprets its
 * channel's lowered ops in order (see hw/internal.h).
 *
 * Data ops move 16-byte vectors when every pointer of the op has the same
 * alignment within 16 bytes (a scalar head and tail around them, loaded before
 * the vectors and stored after), and fall back to element-wise otherwise. Loads bypass L1 (ld.global.cg): a peer may have
 * rewritten the data since an earlier execution. Reductions sum in fp32 and
 * round once.
 *
 * SIGNAL: bar.sync (the channel's earlier writes are done), then one thread
 * does red.release.sys.add on the target flag (in host mode, a release store to
 * the channel's own slot of it: see hw/internal.h). A run of SIGNALs to distinct
 * device flags within one window of staged ops, after a data op that touched no host
 * memory, is released at once, thread k the k-th
 * (docs/PERFORMANCE.md, "SIGNALs released together"; ARSIM_CUDA_SIGNALS=serial: one
 * after another by one thread). WAIT: one thread spins on
 * ld.acquire.sys until the flag reaches (epoch - back) * per_epoch + count, then
 * bar.sync. Epoch-parity addresses (arsim/plan.h) come as pointers tagged in
 * bit 0; an op holding one adds the plan's parity offset to them in odd epochs. The epoch is per block, kept in device memory, so a captured graph
 * replays correctly. A spinning thread checks the %globaltimer against a
 * deadline and a shared abort word; past the deadline it raises the abort word
 * and the whole launch unwinds, leaving the GPU usable. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include "arsim/plan.h"
#include "hw/internal.h"
#include "hw/loads.cuh"

namespace {

enum { OP_COPY = 0, OP_REDUCE = 1, OP_SIGNAL = 2, OP_WAIT = 3 };
enum { DT_BF16 = 0, DT_FP16 = 1, DT_FP32 = 2 };

constexpr int WIN_OPS = AR_EXEC_WINDOW_OPS; /* ops staged in shared memory at a time */
constexpr int WIN_SRCS = 256; /* source pointers staged in shared memory */
constexpr int UNROLL = 3;     /* vectors per thread per source in flight (no spills at 128 registers) */
constexpr int KGROUP = 2;     /* sources loaded together */

__device__ __forceinline__ uint64_t gtimer() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ uint64_t ld_acquire_sys(const uint64_t *p) {
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void red_release_sys(uint64_t *p, uint64_t v) {
    asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/* A flag slot this thread alone writes (host mode): no atomic needed. */
__device__ __forceinline__ void bump_release_sys(uint64_t *p) {
    uint64_t v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v + 1) : "memory");
}

/* Per-dtype element handling: storage type, vector width, conversions. */
template <int DT> struct Elt;
template <> struct Elt<DT_BF16> {
    typedef uint16_t raw;
    static constexpr int VEC = 8;
    static __device__ __forceinline__ float to_f(raw r) { return __bfloat162float(__ushort_as_bfloat16(r)); }
    static __device__ __forceinline__ raw from_f(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};
template <> struct Elt<DT_FP16> {
    typedef uint16_t raw;
    static constexpr int VEC = 8;
    static __device__ __forceinline__ float to_f(raw r) { return __half2float(__ushort_as_half(r)); }
    static __device__ __forceinline__ raw from_f(float f) { return __half_as_ushort(__float2half_rn(f)); }
};
template <> struct Elt<DT_FP32> {
    typedef uint32_t raw;
    static constexpr int VEC = 4;
    static __device__ __forceinline__ float to_f(raw r) { return __uint_as_float(r); }
    static __device__ __forceinline__ raw from_f(float f) { return __float_as_uint(f); }
};

template <int DT, bool SYS> __device__ __forceinline__ typename Elt<DT>::raw ld_elt(const void *p) {
    if (sizeof(typename Elt<DT>::raw) == 2) return (typename Elt<DT>::raw)ld<SYS>((const uint16_t *)p);
    return (typename Elt<DT>::raw)ld<SYS>((const uint32_t *)p);
}

/* acc[0..VEC) (+)= the elements of v. */
template <int DT> __device__ __forceinline__ void vec_acc(float *acc, uint4 v, bool first) {
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
    if (DT == DT_FP32) {
#pragma unroll
        for (int i = 0; i < 4; i++) acc[i] = first ? __uint_as_float(w[i]) : acc[i] + __uint_as_float(w[i]);
    } else {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            float lo = Elt<DT>::to_f((uint16_t)(w[i] & 0xffffu));
            float hi = Elt<DT>::to_f((uint16_t)(w[i] >> 16));
            acc[2 * i] = first ? lo : acc[2 * i] + lo;
            acc[2 * i + 1] = first ? hi : acc[2 * i + 1] + hi;
        }
    }
}
template <int DT> __device__ __forceinline__ uint4 vec_pack(const float *acc) {
    uint32_t w[4];
    if (DT == DT_FP32) {
#pragma unroll
        for (int i = 0; i < 4; i++) w[i] = __float_as_uint(acc[i]);
    } else {
#pragma unroll
        for (int i = 0; i < 4; i++)
            w[i] = (uint32_t)Elt<DT>::from_f(acc[2 * i]) | ((uint32_t)Elt<DT>::from_f(acc[2 * i + 1]) << 16);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

/* An epoch-parity pointer (bit 0 set at prepare time, hw/internal.h): the
 * untagged pointer plus par bytes (0 in even executions). */
template <bool PAR> __device__ __forceinline__ void *fixp(void *p, uint64_t par) {
    if (!PAR) return p;
    const uintptr_t u = (uintptr_t)p;
    return (void *)((u & ~(uintptr_t)1) + ((u & 1) ? par : 0));
}

/* Element i of a COPY (k == 1) or REDUCE of k sources, by one thread. */
template <int DT, bool SYS, bool PAR>
__device__ __forceinline__ void elem_op(typename Elt<DT>::raw *dst, void *const *src_, uint64_t par, int k,
                                        uint64_t i) {
    typedef typename Elt<DT>::raw raw;
    if (k == 1) {
        dst[i] = ld_elt<DT, SYS>((const raw *)fixp<PAR>(src_[0], par) + i);
        return;
    }
    float acc = 0.f;
    for (int j = 0; j < k; j++) acc += Elt<DT>::to_f(ld_elt<DT, SYS>((const raw *)fixp<PAR>(src_[j], par) + i));
    dst[i] = Elt<DT>::from_f(acc);
}

template <int DT, bool SYS, bool PAR>
__device__ __forceinline__ void vec_op(typename Elt<DT>::raw *dst_, void *const *src_, uint64_t par, int k,
                                       uint64_t head, uint64_t nvec);

/* COPY / REDUCE over n elements by the whole block. */
template <int DT, bool SYS, bool PAR>
__device__ void data_op(const ar__dop_t &op, void *const *src_, uint64_t par) {
    typedef typename Elt<DT>::raw raw;
    constexpr int VEC = Elt<DT>::VEC;
    const int k = (int)op.nsrc;
    const uint64_t n = op.n;
    raw *dst = (raw *)fixp<PAR>(op.dst, par);
#define src(j) fixp<PAR>(src_[j], par)
    const int tid = threadIdx.x, nth = blockDim.x;

    const uintptr_t mis = (uintptr_t)dst & 15;
    bool same = true;
    for (int j = 0; j < k; j++) same &= (((uintptr_t)src(j) & 15) == mis);

    if (!same) { /* element-wise: pointers disagree on alignment */
        for (uint64_t i = tid; i < n; i += nth) {
            elem_op<DT, SYS, PAR>(dst, src_, par, k, i);
        }
        return;
    }

    /* Whole vectors, the common case (plans cut on them where they can: ar__split): straight
     * to the vector loop, none of the head-and-tail bookkeeping below (which cost every op
     * about 130 ns on H200, probe x-pairs34: docs/PERFORMANCE.md). */
    if (!mis && n % VEC == 0) {
        vec_op<DT, SYS, PAR>(dst, src_, par, k, 0, n / VEC);
        return;
    }
    uint64_t head = mis ? (16 - mis) / sizeof(raw) : 0;
    if (head > n) head = n;
    const uint64_t nvec = (n - head) / VEC;
    const uint64_t tail_at = head + nvec * VEC;

    /* Scalar head and tail: fewer than VEC elements each, one per thread. Their
     * loads are issued here and consumed after the vectors, so a remote load's
     * latency hides under the vector loop instead of adding to the op's (the last
     * op of an odd count has a tail; a plan cut off whole vectors, every op a head
     * and tail). More sources than PRE: loaded and stored here. They go to the
     * block's last threads, which an op of fewer vectors than threads leaves without
     * one: its tail then costs no thread a second round of loads and stores (one H200,
     * x-pairs at 1001 elements: 79 ns an op less; docs/PERFORMANCE.md, "An op's tail
     * on idle threads"). */
    constexpr int PRE = 3;
    uint64_t si = UINT64_MAX;
    {
        const uint64_t ntail = n - tail_at, first = (uint64_t)nth - head - ntail, u = (uint64_t)tid - first;
        if ((uint64_t)tid >= first) si = u < head ? u : tail_at + (u - head);
    }
    const bool pre = si != UINT64_MAX && k <= PRE;
    raw pv[PRE];
    if (pre) {
#pragma unroll
        for (int j = 0; j < PRE; j++)
            if (j < k) pv[j] = ld_elt<DT, SYS>((const raw *)src(j) + si);
    } else if (si != UINT64_MAX) {
        elem_op<DT, SYS, PAR>(dst, src_, par, k, si);
    }
    if (nvec) vec_op<DT, SYS, PAR>(dst + head, src_, par, k, head, nvec);
    if (pre) {
        if (k == 1) {
            dst[si] = pv[0];
        } else {
            float acc = 0.f;
#pragma unroll
            for (int j = 0; j < PRE; j++)
                if (j < k) acc += Elt<DT>::to_f(pv[j]);
            dst[si] = Elt<DT>::from_f(acc);
        }
    }
}

/* The whole vectors of a COPY (k == 1) or REDUCE: nvec 16-byte vectors at dst_,
 * from each source's element head on. */
template <int DT, bool SYS, bool PAR>
__device__ __forceinline__ void vec_op(typename Elt<DT>::raw *dst_, void *const *src_, uint64_t par, int k,
                                       uint64_t head, uint64_t nvec) {
    typedef typename Elt<DT>::raw raw;
    constexpr int VEC = Elt<DT>::VEC;
    const int tid = threadIdx.x, nth = blockDim.x;
    uint4 *vdst = (uint4 *)dst_;
    if (k == 1) {
        const uint4 *s = (const uint4 *)((const raw *)src(0) + head);
        constexpr int U = 2 * UNROLL;
        for (uint64_t base = tid; base < nvec; base += (uint64_t)U * nth) {
            uint4 v[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                uint64_t idx = base + (uint64_t)u * nth;
                if (idx < nvec) v[u] = ld<SYS>(s + idx);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                uint64_t idx = base + (uint64_t)u * nth;
                if (idx < nvec) vdst[idx] = v[u];
            }
        }
        return;
    }

    for (uint64_t base = tid; base < nvec; base += (uint64_t)UNROLL * nth) {
        float acc[UNROLL][VEC];
        for (int j0 = 0; j0 < k; j0 += KGROUP) {
            uint4 v[KGROUP][UNROLL];
#pragma unroll
            for (int j = 0; j < KGROUP; j++)
#pragma unroll
                for (int u = 0; u < UNROLL; u++) {
                    uint64_t idx = base + (uint64_t)u * nth;
                    if (j0 + j < k && idx < nvec)
                        v[j][u] = ld<SYS>((const uint4 *)((const raw *)src(j0 + j) + head) + idx);
                }
#pragma unroll
            for (int j = 0; j < KGROUP; j++)
#pragma unroll
                for (int u = 0; u < UNROLL; u++) {
                    uint64_t idx = base + (uint64_t)u * nth;
                    if (j0 + j < k && idx < nvec) vec_acc<DT>(acc[u], v[j][u], j0 + j == 0);
                }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            uint64_t idx = base + (uint64_t)u * nth;
            if (idx < nvec) vdst[idx] = vec_pack<DT>(acc[u]);
        }
    }
}
#undef src

template <int DT>
__global__ void __launch_bounds__(AR__THREADS, 1) exec_kernel(const ar__kargs_t a) {
    __shared__ ar__dop_t sops[WIN_OPS];
    __shared__ void *ssrcs[WIN_SRCS];
    __shared__ uint64_t s_epoch, s_deadline;
    __shared__ int s_abort;
    __shared__ uint32_t s_src_base, s_src_n, s_cursor;

    /* Programmatic dependent launch: the next execution on this stream may start
     * now and stage its (unchanging) ops while this one runs; it touches no data,
     * flag or epoch before griddepcontrol.wait, which returns once this grid has
     * completed and its writes are visible. A launch without the attribute
     * passes griddepcontrol.wait at once. */
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    const ar__dblock_t blk = a.blocks[blockIdx.x];
    const int tid = threadIdx.x;

    bool host_data = false; /* the channel's latest COPY/REDUCE touched host memory */
    for (uint32_t w = 0; w < blk.nops; w += WIN_OPS) {
        const uint32_t wn = blk.nops - w < (uint32_t)WIN_OPS ? blk.nops - w : (uint32_t)WIN_OPS;
        if (w) __syncthreads(); /* the previous window is done with the staging arrays */
        if (tid < (int)wn) sops[tid] = a.ops[blk.first + w + tid];
        /* This window's source pointers: a block's ops keep their sources in
         * order, so they start where the previous window's ended. */
        {
            const uint32_t base = w == 0 ? blk.src_first : s_cursor;
            const uint32_t left = blk.src_first + blk.nsrcs - base;
            const uint32_t sn = left < (uint32_t)WIN_SRCS ? left : (uint32_t)WIN_SRCS;
            if (tid < (int)sn) ssrcs[tid] = a.srcs[base + tid];
            if (tid == 0) {
                s_src_base = base;
                s_src_n = sn;
            }
        }
        __syncthreads();
        if (tid == 0) { /* where the next window's sources start */
            uint32_t c = s_src_base;
            for (uint32_t i = 0; i < wn; i++) {
                uint32_t code = AR__DOP_CODE(sops[i].code);
                if (code == OP_COPY || code == OP_REDUCE) c = (uint32_t)sops[i].src + sops[i].nsrc;
            }
            s_cursor = c;
        }
        if (w == 0) {
            asm volatile("griddepcontrol.wait;" ::: "memory");
            if (tid == 0) {
                if (a.stamps) a.stamps[a.nops + blockIdx.x] = gtimer();
                s_epoch = a.epochs[blockIdx.x];
                s_deadline = gtimer() + a.timeout_ns;
                s_abort = 0;
            }
            __syncthreads();
        }
        for (uint32_t i = 0; i < wn; i++) {
            const ar__dop_t &op = sops[i];
            const uint32_t code = AR__DOP_CODE(op.code);
            if (code == OP_COPY || code == OP_REDUCE) {
                host_data = (op.code & AR__DOP_SYS) != 0;
                void *const *src = (op.src >= s_src_base && op.src + op.nsrc <= s_src_base + s_src_n)
                                       ? &ssrcs[op.src - s_src_base]
                                       : &a.srcs[op.src];
                if (op.code & AR__DOP_PAR) {
                    const uint64_t par = (s_epoch & 1) ? op.count : 0;
                    if (op.code & AR__DOP_SYS) data_op<DT, true, true>(op, src, par);
                    else data_op<DT, false, true>(op, src, par);
                } else if (op.code & AR__DOP_SYS) {
                    data_op<DT, true, false>(op, src, 0);
                } else {
                    data_op<DT, false, false>(op, src, 0);
                }
                __syncthreads(); /* program order: the next op may read these writes */
            } else if (code == OP_SIGNAL) {
                /* The bar.sync after the last data op ordered every thread's writes
                 * before this release (cumulativity), whichever thread issues it. */
                uint32_t run = 1;
                if (a.signals_together && !(op.code & AR__DOP_SYS) && !host_data) {
                    /* the SIGNALs that follow, to flags none of the run has: each its own
                     * thread, so their releases overlap (not after host stores, which
                     * each release would wait for over the host link: naive at 1 MB, 8
                     * ranks on one H100, 2.2x slower so) */
                    while (i + run < wn && run < (uint32_t)blockDim.x && AR__DOP_CODE(sops[i + run].code) == OP_SIGNAL &&
                           !(sops[i + run].code & AR__DOP_SYS)) {
                        bool seen = false;
                        for (uint32_t k = 0; k < run; k++) seen = seen || sops[i + k].dst == sops[i + run].dst;
                        if (seen) break;
                        run++;
                    }
                }
                if (run > 1) {
                    if (tid < (int)run) red_release_sys((uint64_t *)sops[i + tid].dst, 1);
                    if (a.stamps && tid == 0)
                        for (uint32_t k = 0; k + 1 < run; k++) a.stamps[blk.first + w + i + k] = gtimer();
                    i += run - 1;
                } else if (tid == 0) {
                    if (op.code & AR__DOP_SYS) bump_release_sys((uint64_t *)op.dst);
                    else red_release_sys((uint64_t *)op.dst, 1);
                }
            } else if (code == OP_WAIT) {
                if (tid == 0) {
                    /* count holds count - back * per_epoch (signed): a WAIT back 1
                     * in the first execution has a target <= 0 and passes */
                    const int64_t target = (int64_t)(s_epoch * op.per_epoch) + (int64_t)op.count;
                    const uint64_t *f = (const uint64_t *)op.dst;
                    for (uint32_t spins = 1;; spins++) {
                        uint64_t sum = 0;
                        if (target <= 0) break;
                        for (uint32_t s = 0; s < op.nsrc; s++) sum += ld_acquire_sys(f + s * op.src);
                        if ((int64_t)sum >= target) break;
                        if ((spins & 1023u) == 0) {
                            if (*a.abort_word || gtimer() > s_deadline) {
                                *a.abort_word = AR__ABORT_TIMEOUT;
                                __threadfence_system();
                                s_abort = 1;
                                break;
                            }
                        }
                    }
                }
                __syncthreads();
                if (s_abort) return; /* epoch not advanced: the host resets after a timeout */
            }
            if (a.stamps && tid == 0) a.stamps[blk.first + w + i] = gtimer();
        }
    }
    if (tid == 0) a.epochs[blockIdx.x] = s_epoch + 1;
}

template <int DT> __global__ void fill_kernel(typename Elt<DT>::raw *dst, uint64_t n, uint64_t seed, int rank) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        dst[i] = Elt<DT>::from_f(ar_gen_value(seed, rank, i));
}

} /* namespace */

extern "C" int ar__exec_launch(const ar__kargs_t *a, int dtype, void *stream) {
    if (a->nblocks <= 0) return cudaSuccess;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = dim3((unsigned)a->nblocks);
    cfg.blockDim = dim3(AR__THREADS);
    cfg.stream = (cudaStream_t)stream;
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = getenv("ARSIM_CUDA_NO_PDL") ? 0 : 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    cudaError_t e;
    switch (dtype) {
    case DT_BF16: e = cudaLaunchKernelEx(&cfg, exec_kernel<DT_BF16>, *a); break;
    case DT_FP16: e = cudaLaunchKernelEx(&cfg, exec_kernel<DT_FP16>, *a); break;
    case DT_FP32: e = cudaLaunchKernelEx(&cfg, exec_kernel<DT_FP32>, *a); break;
    default: return cudaErrorInvalidValue;
    }
    return e != cudaSuccess ? e : cudaGetLastError();
}

extern "C" int ar__fill_launch(void *dst, uint64_t n, int dtype, uint64_t seed, int rank, void *stream) {
    cudaStream_t s = (cudaStream_t)stream;
    uint64_t want = (n + 255) / 256;
    unsigned grid = want > 4096 ? 4096u : (unsigned)(want ? want : 1);
    switch (dtype) {
    case DT_BF16: fill_kernel<DT_BF16><<<grid, 256, 0, s>>>((uint16_t *)dst, n, seed, rank); break;
    case DT_FP16: fill_kernel<DT_FP16><<<grid, 256, 0, s>>>((uint16_t *)dst, n, seed, rank); break;
    case DT_FP32: fill_kernel<DT_FP32><<<grid, 256, 0, s>>>((uint32_t *)dst, n, seed, rank); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" int ar__exec_max_blocks_per_sm(int dtype, int *out) {
    cudaError_t e;
    switch (dtype) {
    case DT_BF16: e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(out, exec_kernel<DT_BF16>, AR__THREADS, 0); break;
    case DT_FP16: e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(out, exec_kernel<DT_FP16>, AR__THREADS, 0); break;
    case DT_FP32: e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(out, exec_kernel<DT_FP32>, AR__THREADS, 0); break;
    default: return cudaErrorInvalidValue;
    }
    return e;
}
