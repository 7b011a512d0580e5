/* hw: calibration micro-benchmarks (see validate/calib.h).
 *
 * Every benchmark is a small kernel of its own; none runs an allreduce or the
 * plan executor, so no allreduce timing ever reaches the fitted model. The
 * per-block benchmarks use the executor's load shape (threads per block and
 * 16-byte loads in flight per thread, from the options), because the model's
 * per-channel terms describe one executor block.
 *
 * Times: CUDA events around kernels for bandwidths and launches (median of
 * repeats), %globaltimer inside one thread for latencies. Every spin loop has a
 * time limit, so a benchmark that cannot complete ends with an error instead of
 * hanging the GPU. */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <vector>

extern "C" {
#include "arsim/error.h"
}
#include "hw/loads.cuh"
#include "validate/calib.h"
#include "arsim/util.h"

typedef unsigned long long u64;

#define CK(call)                                                                        \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            rc = ar_error_set(err, AR_EDEVICE, NULL, 0, 0, "cuda: %s: %s (%s:%d)", #call, \
                              cudaGetErrorString(e_), "validate/calib.cu", __LINE__);         \
            goto out;                                                                   \
        }                                                                               \
    } while (0)

#define TRY(expr)                      \
    do {                               \
        rc = (expr);                   \
        if (rc != AR_OK) goto out;     \
    } while (0)

static const u64 SPIN_LIMIT_NS = 2000000000ull; /* 2 s */

__device__ __forceinline__ u64 gtimer() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ void st_release(u64 *p, u64 v) {
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* ---- kernels ---- */

/* Ping-pong between two single threads: the initiator bumps the peer's flag and
 * waits for its own; the responder waits, then bumps. mine is local memory, peer
 * is the other side's flag (peer GPU memory, or another address of this GPU). */
__device__ void pingpong(u64 *mine, u64 *peer, int iters, int initiator, u64 *out, int *fail) {
    u64 t0 = gtimer();
    for (int i = 1; i <= iters; i++) {
        if (initiator) st_release(peer, (u64)i);
        u64 ts = gtimer();
        unsigned polls = 0;
        while (ld_acquire(mine) < (u64)i) {
            if ((++polls & 1023) == 0 && gtimer() - ts > SPIN_LIMIT_NS) { *fail = 1; return; }
        }
        if (!initiator) st_release(peer, (u64)i);
    }
    *out = gtimer() - t0;
}

__global__ void k_pingpong(u64 *mine, u64 *peer, int iters, int initiator, u64 *out, int *fail) {
    if (threadIdx.x == 0) pingpong(mine, peer, iters, initiator, out, fail);
}

/* Two blocks of one GPU: block 0 starts, block 1 answers. */
__global__ void k_pingpong_local(u64 *f, int iters, u64 *out, int *fail) {
    if (threadIdx.x) return;
    int b = blockIdx.x;
    pingpong(&f[b * 32], &f[(1 - b) * 32], iters, b == 0, &out[b], fail);
}

__global__ void k_empty() {}

/* The executor's launch shape: programmatic dependent launch, so the next kernel
 * starts while this one runs and waits in griddepcontrol.wait for its completion. */
__global__ void k_empty_pdl() {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
}

static cudaError_t launch_pdl(int blocks, int threads, cudaStream_t s) {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = dim3((unsigned)blocks);
    cfg.blockDim = dim3((unsigned)threads);
    cfg.stream = s;
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, k_empty_pdl);
}


/* Block b streams its own contiguous slice (like one executor block on one op),
 * threads striding by blockDim, U 16-byte loads in flight per thread; SYS: with
 * ld_sys instead of __ldcg. */
template <int U, bool SYS>
__global__ void k_read(const uint4 *__restrict__ src, size_t n16, uint4 *sink) {
    size_t per = (n16 + gridDim.x - 1) / gridDim.x;
    size_t lo = (size_t)blockIdx.x * per, hi = min(n16, lo + per);
    uint4 acc = make_uint4(0, 0, 0, 0);
    size_t i = lo + threadIdx.x, step = (size_t)blockDim.x;
    for (; i + (U - 1) * step < hi; i += U * step) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = SYS ? ld_sys(&src[i + u * step]) : __ldcg(&src[i + u * step]);
#pragma unroll
        for (int u = 0; u < U; u++) { acc.x ^= v[u].x; acc.y ^= v[u].y; acc.z ^= v[u].z; acc.w ^= v[u].w; }
    }
    for (; i < hi; i += step) { uint4 v = SYS ? ld_sys(&src[i]) : __ldcg(&src[i]); acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w; }
    if (acc.x == 0x9e3779b9u && acc.y == 0x7f4a7c15u) sink[0] = acc; /* keeps the loads */
}

/* k_read's pass over its slice, `reps` times in one launch: after the first pass the
 * slice is resident in L2 (__ldcg skips L1), and one launch per pass would time the
 * launches instead. COPY: each pass also stores what it loaded into dst (one pass: HBM's
 * copy rate; more: both buffers resident in L2, where the executor's ops read and write at
 * once). */
template <int U, bool COPY>
__global__ void k_pass_reps(uint4 *__restrict__ dst, const uint4 *__restrict__ src, size_t n16, int reps,
                            uint4 *sink) {
    size_t per = (n16 + gridDim.x - 1) / gridDim.x;
    size_t lo = (size_t)blockIdx.x * per, hi = min(n16, lo + per);
    size_t step = (size_t)blockDim.x;
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (int r = 0; r < reps; r++) {
        size_t i = lo + threadIdx.x;
        for (; i + (U - 1) * step < hi; i += U * step) {
            uint4 v[U];
#pragma unroll
            for (int u = 0; u < U; u++) v[u] = __ldcg(&src[i + u * step]);
#pragma unroll
            for (int u = 0; u < U; u++) {
                if (COPY) dst[i + u * step] = v[u];
                else { acc.x ^= v[u].x; acc.y ^= v[u].y; acc.z ^= v[u].z; acc.w ^= v[u].w; }
            }
        }
        for (; i < hi; i += step) {
            uint4 v = __ldcg(&src[i]);
            if (COPY) dst[i] = v;
            else { acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w; }
        }
    }
    if (!COPY && acc.x == 0x9e3779b9u && acc.y == 0x7f4a7c15u) sink[0] = acc; /* keeps the loads */
}

/* The same for stores: a slice rewritten `reps` times stays dirty in L2. */
__global__ void k_write_reps(uint4 *__restrict__ dst, size_t n16, int reps) {
    size_t per = (n16 + gridDim.x - 1) / gridDim.x;
    size_t lo = (size_t)blockIdx.x * per, hi = min(n16, lo + per);
    size_t step = (size_t)blockDim.x;
    for (int r = 0; r < reps; r++)
        for (size_t i = lo + threadIdx.x; i < hi; i += step) dst[i] = make_uint4((unsigned)i, (unsigned)r, 1u, 2u);
}

template <int U>
__global__ void k_write(uint4 *__restrict__ dst, size_t n16) {
    size_t per = (n16 + gridDim.x - 1) / gridDim.x;
    size_t lo = (size_t)blockIdx.x * per, hi = min(n16, lo + per);
    size_t step = (size_t)blockDim.x;
    for (size_t i = lo + threadIdx.x; i < hi; i += step)
        dst[i] = make_uint4((unsigned)i, (unsigned)(i >> 32), 1u, 2u);
}

/* dst = a + b over one block's slice, `reps` times (data stays in L2).
 * MODE 0: bf16 sum in float32, rounded once; 1: fp32 sum; 2: xor (no arithmetic). */
__device__ __forceinline__ uint4 add_bf16(uint4 a, uint4 b) {
    uint4 r;
    const __nv_bfloat162 *x = (const __nv_bfloat162 *)&a, *y = (const __nv_bfloat162 *)&b;
    __nv_bfloat162 *z = (__nv_bfloat162 *)&r;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        float2 fx = __bfloat1622float2(x[j]), fy = __bfloat1622float2(y[j]);
        z[j] = __float22bfloat162_rn(make_float2(fx.x + fy.x, fx.y + fy.y));
    }
    return r;
}
__device__ __forceinline__ uint4 add_f32(uint4 a, uint4 b) {
    return make_uint4(__float_as_uint(__uint_as_float(a.x) + __uint_as_float(b.x)),
                      __float_as_uint(__uint_as_float(a.y) + __uint_as_float(b.y)),
                      __float_as_uint(__uint_as_float(a.z) + __uint_as_float(b.z)),
                      __float_as_uint(__uint_as_float(a.w) + __uint_as_float(b.w)));
}

template <int MODE, int U>
__global__ void k_reduce2(uint4 *dst, const uint4 *a, const uint4 *b, size_t n16, int reps) {
    size_t step = (size_t)blockDim.x;
    for (int r = 0; r < reps; r++) {
        size_t i = threadIdx.x;
        for (; i + (U - 1) * step < n16; i += U * step) {
            uint4 va[U], vb[U];
#pragma unroll
            for (int u = 0; u < U; u++) { va[u] = __ldcg(&a[i + u * step]); vb[u] = __ldcg(&b[i + u * step]); }
#pragma unroll
            for (int u = 0; u < U; u++) {
                uint4 o;
                if (MODE == 0) o = add_bf16(va[u], vb[u]);
                else if (MODE == 1) o = add_f32(va[u], vb[u]);
                else o = make_uint4(va[u].x ^ vb[u].x, va[u].y ^ vb[u].y, va[u].z ^ vb[u].z, va[u].w ^ vb[u].w);
                dst[i + u * step] = o;
            }
        }
        __syncthreads();
    }
}

/* One thread follows a chain of indices from slot `from`; ns per dependent load, and
 * where it stopped (the next run goes on from there). */
__global__ void k_chase(const u64 *chain, u64 from, int steps, u64 *out) {
    if (threadIdx.x || blockIdx.x) return;
    u64 j = from;
    for (int i = 0; i < 64; i++) j = ld_volatile(&chain[j]); /* warm the TLB a little */
    u64 t0 = gtimer();
    for (int i = 0; i < steps; i++) j = ld_volatile(&chain[j]);
    u64 t1 = gtimer();
    out[0] = t1 - t0;
    out[1] = j;
}

/* ---- host helpers ---- */

static double median(std::vector<double> v) { return ar_median(v.data(), v.size()); }

static void note(const ar_calib_opts_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const ar_calib_opts_t *o, const char *fmt, ...) {
    if (o->quiet) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("calibrate: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

typedef void (*launch_fn)(int blocks, int threads, cudaStream_t s, void *ctx);

/* Median over reps of one timed launch (after one warm-up), ms. */
static int time_ms(int dev, launch_fn fn, int blocks, int threads, void *ctx, int reps, double *ms,
                   ar_error_t *err) {
    int rc = AR_OK;
    cudaEvent_t e0 = NULL, e1 = NULL;
    std::vector<double> t;
    CK(cudaSetDevice(dev));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    fn(blocks, threads, 0, ctx);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    for (int r = 0; r < reps; r++) {
        CK(cudaEventRecord(e0, 0));
        fn(blocks, threads, 0, ctx);
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        float f;
        CK(cudaEventElapsedTime(&f, e0, e1));
        t.push_back(f);
    }
    *ms = median(t);
out:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    return rc;
}

struct rw_ctx {
    int unroll;
    void *dst;
    const void *src;
    size_t n16;
    uint4 *sink;
};

/* Loads in flight per thread: the executor's shapes (hw/exec.cu: COPY 2 x UNROLL = 6,
 * REDUCE KGROUP x UNROLL = 6) and powers of two. */
#define BY_UNROLL(u, CALL)                          \
    switch (u) {                                    \
    case 1: { constexpr int U = 1; CALL; } break;   \
    case 2: { constexpr int U = 2; CALL; } break;   \
    case 3: { constexpr int U = 3; CALL; } break;   \
    case 4: { constexpr int U = 4; CALL; } break;   \
    case 6: { constexpr int U = 6; CALL; } break;   \
    default: { constexpr int U = 8; CALL; } break;  \
    }

static void launch_read(int blocks, int threads, cudaStream_t s, void *p) {
    rw_ctx *c = (rw_ctx *)p;
    const uint4 *src = (const uint4 *)c->src;
    BY_UNROLL(c->unroll, (k_read<U, false><<<blocks, threads, 0, s>>>(src, c->n16, c->sink)));
}
static void launch_read_sys(int blocks, int threads, cudaStream_t s, void *p) {
    rw_ctx *c = (rw_ctx *)p;
    const uint4 *src = (const uint4 *)c->src;
    BY_UNROLL(c->unroll, (k_read<U, true><<<blocks, threads, 0, s>>>(src, c->n16, c->sink)));
}
static void launch_write(int blocks, int threads, cudaStream_t s, void *p) {
    rw_ctx *c = (rw_ctx *)p;
    k_write<1><<<blocks, threads, 0, s>>>((uint4 *)c->dst, c->n16);
}
static void launch_copy(int blocks, int threads, cudaStream_t s, void *p) {
    rw_ctx *c = (rw_ctx *)p;
    BY_UNROLL(c->unroll, (k_pass_reps<U, true><<<blocks, threads, 0, s>>>((uint4 *)c->dst, (const uint4 *)c->src, c->n16, 1,
                                                                          c->sink)));
}

struct reps_ctx {
    rw_ctx rw;
    int reps;
};
template <bool COPY> static void launch_pass_reps(int blocks, int threads, cudaStream_t s, void *p) {
    reps_ctx *c = (reps_ctx *)p;
    BY_UNROLL(c->rw.unroll, (k_pass_reps<U, COPY><<<blocks, threads, 0, s>>>((uint4 *)c->rw.dst, (const uint4 *)c->rw.src,
                                                                             c->rw.n16, c->reps, c->rw.sink)));
}
static void launch_read_reps(int blocks, int threads, cudaStream_t s, void *p) {
    launch_pass_reps<false>(blocks, threads, s, p);
}
static void launch_copy_reps(int blocks, int threads, cudaStream_t s, void *p) {
    launch_pass_reps<true>(blocks, threads, s, p);
}
static void launch_write_reps(int blocks, int threads, cudaStream_t s, void *p) {
    reps_ctx *c = (reps_ctx *)p;
    k_write_reps<<<blocks, threads, 0, s>>>((uint4 *)c->rw.dst, c->rw.n16, c->reps);
}

/* GB/s of `fn` over an L2-resident buffer of n16 16-byte lines: the difference of a
 * launch of many passes and one of few, so the launch itself cancels. */
static int l2_gbps(int dev, launch_fn fn, int blocks, int threads, rw_ctx rw, int reps, double *gbps,
                   ar_error_t *err) {
    const int few = 10, many = 110;
    reps_ctx a = {rw, few}, b = {rw, many};
    double ms_a, ms_b;
    int rc = time_ms(dev, fn, blocks, threads, &a, reps, &ms_a, err);
    if (rc == AR_OK) rc = time_ms(dev, fn, blocks, threads, &b, reps, &ms_b, err);
    if (rc != AR_OK) return rc;
    *gbps = ms_b > ms_a ? (double)(many - few) * (double)rw.n16 * 16 / ((ms_b - ms_a) * 1e-3) / 1e9 : 0;
    return AR_OK;
}

struct red_ctx {
    int mode, unroll, reps;
    uint4 *dst;
    const uint4 *a, *b;
    size_t n16;
};
template <int M>
static void launch_red_m(int blocks, int threads, cudaStream_t s, red_ctx *c) {
    /* k sources x U each: the executor keeps UNROLL = U / 2 vectors per source in flight. */
    BY_UNROLL(c->unroll, (k_reduce2<M, (U + 1) / 2><<<blocks, threads, 0, s>>>(c->dst, c->a, c->b, c->n16, c->reps)));
}
static void launch_red(int blocks, int threads, cudaStream_t s, void *p) {
    red_ctx *c = (red_ctx *)p;
    if (c->mode == 0) launch_red_m<0>(blocks, threads, s, c);
    else if (c->mode == 1) launch_red_m<1>(blocks, threads, s, c);
    else launch_red_m<2>(blocks, threads, s, c);
}

/* A random cyclic chain over `slots` slots `stride_bytes` apart, in host memory,
 * indices in u64 elements. */
static std::vector<u64> make_chain(size_t bytes, size_t stride_bytes) {
    size_t slots = bytes / stride_bytes, st = stride_bytes / sizeof(u64);
    std::vector<u64> order(slots), chain(bytes / sizeof(u64), 0);
    for (size_t i = 0; i < slots; i++) order[i] = i;
    unsigned long long x = 88172645463325252ull;
    for (size_t i = slots - 1; i > 0; i--) { /* Fisher-Yates, xorshift */
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        std::swap(order[i], order[x % (i + 1)]);
    }
    for (size_t i = 0; i < slots; i++) chain[order[i] * st] = order[(i + 1) % slots] * st;
    return chain;
}

/* ns per dependent load, chain placed at dchain (device-visible): the median of 7 runs,
 * each going on where the one before stopped, so a chain longer than the runs' steps
 * never meets a line twice (a run that started over would find its lines in L2). */
static int chase(int dev, const u64 *dchain, int steps, double *ns, ar_error_t *err) {
    int rc = AR_OK;
    u64 *dout = NULL, hout[2];
    std::vector<double> t;
    CK(cudaSetDevice(dev));
    CK(cudaMalloc(&dout, 2 * sizeof(u64)));
    hout[1] = 0;
    for (int r = 0; r < 7; r++) {
        k_chase<<<1, 1>>>(dchain, hout[1], steps, dout);
        CK(cudaGetLastError());
        CK(cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost));
        t.push_back((double)hout[0] / steps);
    }
    *ns = median(t);
out:
    if (dout) cudaFree(dout);
    return rc;
}

/* The L2's reach: for footprints around its capacity, every 128-byte line once per pass in
 * random order (one load each), ns per load on the second pass, when a line was last touched
 * one footprint ago. chain has room for the largest footprint. */
static int l2_reach(int dev, u64 *chain, ar_calib_t *c, ar_error_t *err) {
    int rc = AR_OK;
    u64 *dout = NULL, hout[2] = {0, 0};
    CK(cudaSetDevice(dev));
    CK(cudaMalloc(&dout, 2 * sizeof(u64)));
    c->l2_reach_n = 0;
    for (int i = 0; i < AR_CALIB_L2_REACH_POINTS; i++) {
        const double frac = 0.1 + 0.05 * i;
        const size_t bytes = (size_t)(frac * c->l2_bytes) / 128 * 128;
        std::vector<u64> ch = make_chain(bytes, 128);
        const int slots = (int)(bytes / 128);
        CK(cudaMemcpy(chain, ch.data(), bytes, cudaMemcpyHostToDevice));
        k_chase<<<1, 1>>>(chain, 0, slots, dout); /* the first pass brings the lines it can keep */
        CK(cudaGetLastError());
        CK(cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost));
        k_chase<<<1, 1>>>(chain, hout[1], slots, dout);
        CK(cudaGetLastError());
        CK(cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost));
        c->l2_reach_frac[i] = frac;
        c->l2_reach_ns[i] = (double)hout[0] / slots;
        c->l2_reach_n = i + 1;
    }
out:
    if (dout) cudaFree(dout);
    return rc;
}

static int enable_peer(int a, int b, ar_error_t *err) {
    int can = 0, rc = AR_OK;
    CK(cudaDeviceCanAccessPeer(&can, a, b));
    if (!can)
        return AR_ERR(err, AR_EDEVICE, "GPU %d cannot access GPU %d (no peer access)", a, b);
    CK(cudaSetDevice(a));
    {
        cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();
        else CK(e);
    }
out:
    return rc;
}

/* Ping-pong between (dev_a, flag fa) and (dev_b, flag fb); ns per round trip. */
static int pingpong_rtt(int da, int db, u64 *fa, u64 *fb, int iters, double *rtt_ns, ar_error_t *err) {
    int rc = AR_OK;
    u64 *oa = NULL, *ob = NULL;
    int *fail = NULL, hfail = 0;
    u64 hout = 0;
    CK(cudaHostAlloc(&fail, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
    *fail = 0;
    CK(cudaSetDevice(da));
    CK(cudaMemset(fa, 0, sizeof(u64)));
    CK(cudaMalloc(&oa, sizeof(u64)));
    CK(cudaDeviceSynchronize());
    CK(cudaSetDevice(db));
    CK(cudaMemset(fb, 0, sizeof(u64)));
    CK(cudaMalloc(&ob, sizeof(u64)));
    CK(cudaDeviceSynchronize());
    /* The responder first, so the initiator never waits for a launch. */
    k_pingpong<<<1, 32>>>(fb, fa, iters, 0, ob, fail);
    CK(cudaGetLastError());
    CK(cudaSetDevice(da));
    k_pingpong<<<1, 32>>>(fa, fb, iters, 1, oa, fail);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaSetDevice(db));
    CK(cudaDeviceSynchronize());
    hfail = *(volatile int *)fail;
    if (hfail) {
        rc = AR_ERR(err, AR_ETIMEOUT, "flag ping-pong between GPU %d and %d did not complete "
                                      "within %.0f s", da, db, SPIN_LIMIT_NS * 1e-9);
        goto out;
    }
    CK(cudaSetDevice(da));
    CK(cudaMemcpy(&hout, oa, sizeof hout, cudaMemcpyDeviceToHost));
    *rtt_ns = (double)hout / iters;
out:
    if (oa) { cudaSetDevice(da); cudaFree(oa); }
    if (ob) { cudaSetDevice(db); cudaFree(ob); }
    if (fail) cudaFreeHost(fail);
    return rc;
}

/* use_graph: 0 stream, 1 graph, 2 graph of PDL launches. */
static int launch_overhead(int dev, int blocks, int threads, int use_graph, double *ns, ar_error_t *err) {
    const int N = 2000;
    int rc = AR_OK;
    cudaStream_t s = NULL;
    cudaGraph_t g = NULL;
    cudaGraphExec_t ge = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    std::vector<double> t;
    CK(cudaSetDevice(dev));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    if (use_graph) {
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < N; i++) {
            if (use_graph == 2) CK(launch_pdl(blocks, threads, s));
            else k_empty<<<blocks, threads, 0, s>>>();
        }
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&ge, g, 0));
        CK(cudaGraphLaunch(ge, s));
    } else {
        for (int i = 0; i < N; i++) k_empty<<<blocks, threads, 0, s>>>();
    }
    CK(cudaStreamSynchronize(s));
    for (int r = 0; r < 5; r++) {
        CK(cudaEventRecord(e0, s));
        if (use_graph) CK(cudaGraphLaunch(ge, s));
        else for (int i = 0; i < N; i++) k_empty<<<blocks, threads, 0, s>>>();
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float f;
        CK(cudaEventElapsedTime(&f, e0, e1));
        t.push_back(f * 1e6 / N);
    }
    CK(cudaGetLastError());
    *ns = median(t);
out:
    if (ge) cudaGraphExecDestroy(ge);
    if (g) cudaGraphDestroy(g);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (s) cudaStreamDestroy(s);
    return rc;
}

/* Both GPUs stream at once (a reads b's memory and b reads a's, or both write);
 * GB/s each way (the slower of the two). */
static int bidir(int da, int db, void *buf_a, void *buf_b, size_t bytes,
                 int blocks, int threads, int unroll, int write, uint4 *sink_a, uint4 *sink_b,
                 int reps, double *gbps, ar_error_t *err) {
    int rc = AR_OK;
    cudaEvent_t ea0 = NULL, ea1 = NULL, eb0 = NULL, eb1 = NULL;
    cudaStream_t sa = NULL, sb = NULL;
    std::vector<double> t;
    rw_ctx ca = {unroll, buf_b, buf_b, bytes / 16, sink_a};
    rw_ctx cb = {unroll, buf_a, buf_a, bytes / 16, sink_b};
    CK(cudaSetDevice(da));
    CK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
    CK(cudaEventCreate(&ea0));
    CK(cudaEventCreate(&ea1));
    CK(cudaSetDevice(db));
    CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
    CK(cudaEventCreate(&eb0));
    CK(cudaEventCreate(&eb1));
    for (int r = 0; r <= reps; r++) {
        CK(cudaSetDevice(da));
        CK(cudaEventRecord(ea0, sa));
        (write ? launch_write : launch_read)(blocks, threads, sa, &ca);
        CK(cudaEventRecord(ea1, sa));
        CK(cudaSetDevice(db));
        CK(cudaEventRecord(eb0, sb));
        (write ? launch_write : launch_read)(blocks, threads, sb, &cb);
        CK(cudaEventRecord(eb1, sb));
        CK(cudaEventSynchronize(eb1));
        CK(cudaSetDevice(da));
        CK(cudaEventSynchronize(ea1));
        CK(cudaGetLastError());
        float fa, fb;
        CK(cudaEventElapsedTime(&fa, ea0, ea1));
        CK(cudaEventElapsedTime(&fb, eb0, eb1));
        if (r > 0) t.push_back(bytes / (std::max(fa, fb) * 1e-3) / 1e9);
    }
    *gbps = median(t);
out:
    if (ea0) cudaEventDestroy(ea0);
    if (ea1) cudaEventDestroy(ea1);
    if (eb0) cudaEventDestroy(eb0);
    if (eb1) cudaEventDestroy(eb1);
    if (sa) cudaStreamDestroy(sa);
    if (sb) cudaStreamDestroy(sb);
    return rc;
}

extern "C" int ar_calib_device_info(char *buf, unsigned long len, ar_error_t *err) {
    int n = 0, drv = 0, rt = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0)
        return AR_ERR(err, AR_EDEVICE, "no CUDA GPU found (%s)",
                      e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    cudaDeviceProp p;
    if ((e = cudaGetDeviceProperties(&p, 0)) != cudaSuccess)
        return AR_ERR(err, AR_EDEVICE, "cuda: %s", cudaGetErrorString(e));
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    snprintf(buf, len, "%d x %.100s (%d SMs, %.0f GiB), CUDA driver %d.%d, runtime %d.%d", n, p.name,
             p.multiProcessorCount, p.totalGlobalMem / 1073741824.0, drv / 1000, (drv % 1000) / 10,
             rt / 1000, (rt % 1000) / 10);
    return AR_OK;
}

extern "C" int ar_calib_nvlinks(const int *gpus, int n) {
    enum { MAX = 64 };
    char bus[MAX][32];
    const char *ids[MAX];
    if (n > MAX) return -1;
    for (int i = 0; i < n; i++) {
        if (cudaDeviceGetPCIBusId(bus[i], sizeof bus[i], gpus[i]) != cudaSuccess) return -1;
        ids[i] = bus[i];
    }
    return ar_nvml_nvlinks_up(ids, n);
}

extern "C" int ar_calib_run(const ar_calib_opts_t *opts, ar_calib_t *c, ar_error_t *err) {
    const ar_calib_opts_t defaults = AR_CALIB_OPTS_DEFAULT;
    ar_calib_opts_t o = opts ? *opts : defaults;
    int rc = AR_OK, n = 0;
    const int d0 = o.dev0, d1 = o.dev1, T = o.threads;
    const size_t BIG = (size_t)1 << 30;   /* peer and HBM buffers */
    void *peer1 = NULL, *peer0 = NULL, *loc0 = NULL, *loc0b = NULL;
    uint4 *sink0 = NULL, *sink1 = NULL;
    u64 *flags0 = NULL, *flags1 = NULL, *chain_d = NULL, *chain_p = NULL, *chain_l2 = NULL, *chain_c = NULL;
    u64 *chain_h = NULL, *chain_hd = NULL;
    void *host = NULL, *host_d = NULL;
    uint4 *ra = NULL, *rb = NULL, *rd = NULL;
    double t_start = ar_now_s();
    cudaDeviceProp p0, p1;

    memset(c, 0, sizeof *c);
    if (o.threads <= 0) o.threads = 512;
    if (o.unroll != 1 && o.unroll != 2 && o.unroll != 3 && o.unroll != 4 && o.unroll != 6 && o.unroll != 8)
        return AR_ERR(err, AR_EINVAL, "--unroll must be 1, 2, 3, 4, 6 or 8 (got %d)", o.unroll);
    if (o.reps < 1) o.reps = 1;
    c->threads = o.threads;
    c->unroll = o.unroll;
    {
        cudaError_t e = cudaGetDeviceCount(&n);
        if (e != cudaSuccess || n == 0)
            return AR_ERR(err, AR_EDEVICE, "no CUDA GPU found (%s); calibration needs one GPU, "
                                           "or two with peer access for the link terms", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    }
    c->ngpus = n;
    const int pair = d1 >= 0;
    if (d0 < 0 || d0 >= n || (pair && (d1 >= n || d0 == d1)))
        return pair ? AR_ERR(err, AR_EDEVICE, "needs two distinct GPUs (asked for %d and %d, %d visible)", d0, d1, n)
                    : AR_ERR(err, AR_EDEVICE, "no GPU %d (%d visible)", d0, n);
    c->gpus_used = pair ? 2 : 1;
    CK(cudaGetDeviceProperties(&p0, d0));
    if (pair) CK(cudaGetDeviceProperties(&p1, d1));
    {
        int khz = 0;
        CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, d0));
        c->clock_ghz = khz * 1e-6;
    }
    c->nsm = p0.multiProcessorCount;
    c->hbm_capacity_bytes = (double)p0.totalGlobalMem;
    c->l2_bytes = (double)p0.l2CacheSize;
    if (pair)
        snprintf(c->device, sizeof c->device, "%.100s (GPU %d) + %.100s (GPU %d)", p0.name, d0, p1.name, d1);
    else
        snprintf(c->device, sizeof c->device, "%.100s (GPU %d)", p0.name, d0);
    ar_utc_date(c->date, sizeof c->date);
    ar_nvml_driver_version(c->driver, sizeof c->driver);
    {
        int rt = 0;
        cudaRuntimeGetVersion(&rt);
        snprintf(c->runtime, sizeof c->runtime, "%d.%d", rt / 1000, (rt % 1000) / 10);
        const int used[2] = {d0, d1};
        c->nvlinks_up = ar_calib_nvlinks(used, pair ? 2 : 1);
    }
    if (pair) {
        TRY(enable_peer(d0, d1, err));
        TRY(enable_peer(d1, d0, err));
    }
    note(&o, "%s, %d SMs, %.2f GHz, %d threads x %d loads in flight per block%s", c->device, c->nsm,
         c->clock_ghz, T, o.unroll, pair ? "" : "; one GPU: nothing across a link is measured");

    if (pair) {
        CK(cudaSetDevice(d1));
        CK(cudaMalloc(&peer1, BIG));
        CK(cudaMemset(peer1, 1, BIG));
        CK(cudaMalloc(&flags1, 4096));
        CK(cudaMalloc(&sink1, 64));
    }
    CK(cudaSetDevice(d0));
    if (pair) {
        CK(cudaMalloc(&peer0, BIG));
        CK(cudaMemset(peer0, 1, BIG));
    }
    CK(cudaMalloc(&loc0, BIG));
    CK(cudaMalloc(&loc0b, BIG));
    CK(cudaMemset(loc0b, 3, BIG));
    CK(cudaMalloc(&flags0, 4096));
    CK(cudaMalloc(&sink0, 64));
    CK(cudaDeviceSynchronize());

    /* 1. flag latency: the median of several runs, since this is the first thing
     * timed and the clocks of an idle GPU take a while to rise */
    {
        const int runs = 7, iters = 20000;
        double rtt = 0;
        std::vector<double> rtts, local;
        if (pair) {
            TRY(pingpong_rtt(d0, d1, flags0, flags1, 200, &rtt, err)); /* warm-up */
            for (int r = 0; r < runs; r++) {
                TRY(pingpong_rtt(d0, d1, flags0, flags1, iters, &rtt, err));
                rtts.push_back(rtt);
            }
            c->flag_rtt_ns = median(rtts);
            c->flag_oneway_ns = c->flag_rtt_ns / 2;
        }
        int *fail = NULL;
        u64 *out = NULL, hout[2] = {0, 0};
        CK(cudaSetDevice(d0));
        CK(cudaHostAlloc(&fail, sizeof(int), cudaHostAllocMapped));
        *fail = 0;
        CK(cudaMalloc(&out, 2 * sizeof(u64)));
        int f = 0;
        for (int r = 0; r < runs && !f; r++) {
            CK(cudaMemset(flags0, 0, 4096));
            k_pingpong_local<<<2, 32>>>(flags0, iters, out, fail);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(hout, out, sizeof hout, cudaMemcpyDeviceToHost));
            f = *(volatile int *)fail;
            local.push_back((double)hout[0] / iters / 2);
        }
        cudaFree(out);
        cudaFreeHost(fail);
        if (f) { rc = AR_ERR(err, AR_ETIMEOUT, "local flag ping-pong did not complete"); goto out; }
        c->flag_local_oneway_ns = median(local);
        if (pair)
            note(&o, "flag: round trip %.0f ns over the link (one way %.0f ns), one way inside a GPU %.0f ns "
                     "(medians of %d runs; link round trips %.0f to %.0f ns)",
                 c->flag_rtt_ns, c->flag_oneway_ns, c->flag_local_oneway_ns, runs,
                 *std::min_element(rtts.begin(), rtts.end()), *std::max_element(rtts.begin(), rtts.end()));
        else
            note(&o, "flag: one way inside a GPU %.0f ns (median of %d runs)", c->flag_local_oneway_ns, runs);
    }

    /* 2. launch overhead */
    TRY(launch_overhead(d0, 1, T, 0, &c->launch_stream_ns, err));
    TRY(launch_overhead(d0, 1, T, 1, &c->launch_graph_ns, err));
    TRY(launch_overhead(d0, c->nsm, T, 1, &c->launch_graph_wide_ns, err));
    TRY(launch_overhead(d0, 16, T, 2, &c->launch_graph_pdl_ns, err));
    TRY(launch_overhead(d0, 1, T, 2, &c->launch_graph_pdl_1_ns, err));
    TRY(launch_overhead(d0, c->nsm, T, 2, &c->launch_graph_pdl_wide_ns, err));
    note(&o, "launch: stream %.0f ns, graph %.0f ns, graph with %d blocks %.0f ns; graph with programmatic "
         "dependent launch: 1 block %.0f ns, 16 blocks %.0f ns, %d blocks %.0f ns", c->launch_stream_ns,
         c->launch_graph_ns, c->nsm, c->launch_graph_wide_ns, c->launch_graph_pdl_1_ns, c->launch_graph_pdl_ns,
         c->nsm, c->launch_graph_pdl_wide_ns);

    /* 3. peer bandwidth vs blocks (dev0's blocks on dev1's memory) */
    if (pair) {
        int pts[] = {1, 2, 4, 8, 16, 32, 64, c->nsm / 2, c->nsm, 2 * c->nsm};
        int np = (int)(sizeof pts / sizeof pts[0]);
        for (int i = 0; i < np && c->npoints < AR_CALIB_MAX_POINTS; i++) {
            int B = pts[i];
            if (c->npoints && B <= c->blocks[c->npoints - 1]) continue;
            size_t bytes = std::min(BIG, std::max((size_t)64 << 20, (size_t)B * (16u << 20)));
            rw_ctx rc_ = {o.unroll, peer1, peer1, bytes / 16, sink0};
            double ms_r, ms_w;
            TRY(time_ms(d0, launch_read, B, T, &rc_, o.reps, &ms_r, err));
            TRY(time_ms(d0, launch_write, B, T, &rc_, o.reps, &ms_w, err));
            c->blocks[c->npoints] = B;
            c->peer_read_gbps[c->npoints] = bytes / (ms_r * 1e-3) / 1e9;
            c->peer_write_gbps[c->npoints] = bytes / (ms_w * 1e-3) / 1e9;
            note(&o, "peer: %4d blocks read %6.1f GB/s, write %6.1f GB/s", B, c->peer_read_gbps[c->npoints],
                 c->peer_write_gbps[c->npoints]);
            c->npoints++;
        }
        /* Per-block rate: least squares through the origin over the points up to 8
         * blocks, where the link is far from full. */
        double sxx = 0, sxr = 0, sxw = 0;
        for (int i = 0; i < c->npoints; i++) {
            if (c->blocks[i] > 8) continue;
            sxx += (double)c->blocks[i] * c->blocks[i];
            sxr += c->blocks[i] * c->peer_read_gbps[i];
            sxw += c->blocks[i] * c->peer_write_gbps[i];
        }
        c->peer_read_block_gbps = sxr / sxx;
        c->peer_write_block_gbps = sxw / sxx;
        for (int i = 0; i < c->npoints; i++) {
            c->peer_read_max_gbps = std::max(c->peer_read_max_gbps, c->peer_read_gbps[i]);
            c->peer_write_max_gbps = std::max(c->peer_write_max_gbps, c->peer_write_gbps[i]);
        }
        /* Both ways at once, at the block counts an allreduce runs (its channels) and up
         * to two per SM: the link's ceiling is the most any of them moved (more blocks
         * than the link needs contend for it and move less). */
        const int bidir_blocks[] = {32, 64, c->nsm, 2 * c->nsm};
        for (int i = 0; i < 4; i++) {
            if (i && bidir_blocks[i] <= bidir_blocks[i - 1]) continue;
            double r, w;
            TRY(bidir(d0, d1, peer0, peer1, BIG, bidir_blocks[i], T, o.unroll, 0, sink0, sink1, o.reps, &r, err));
            TRY(bidir(d0, d1, peer0, peer1, BIG, bidir_blocks[i], T, o.unroll, 1, sink0, sink1, o.reps, &w, err));
            note(&o, "peer: both ways at once, %d blocks each: read %.1f, write %.1f GB/s each way", bidir_blocks[i], r, w);
            if (r > c->peer_read_bidir_gbps) c->peer_read_bidir_gbps = r, c->bidir_blocks[0] = bidir_blocks[i];
            if (w > c->peer_write_bidir_gbps) c->peer_write_bidir_gbps = w, c->bidir_blocks[1] = bidir_blocks[i];
        }
        note(&o, "peer: per block read %.2f GB/s, write %.2f GB/s; both ways at once: read %.1f (%d blocks), write %.1f "
                 "(%d blocks) GB/s each way",
             c->peer_read_block_gbps, c->peer_write_block_gbps, c->peer_read_bidir_gbps, c->bidir_blocks[0],
             c->peer_write_bidir_gbps, c->bidir_blocks[1]);
    }

    /* 4. latencies: pointer chase */
    {
        std::vector<u64> ch = make_chain((size_t)256 << 20, 64 << 10); /* 4096 slots, 64 KB apart */
        size_t chb = ch.size() * sizeof(u64);
        if (pair) {
            CK(cudaSetDevice(d1));
            CK(cudaMalloc(&chain_p, chb));
            CK(cudaMemcpy(chain_p, ch.data(), chb, cudaMemcpyHostToDevice));
        }
        CK(cudaSetDevice(d0));
        CK(cudaMalloc(&chain_d, chb));
        CK(cudaMemcpy(chain_d, ch.data(), chb, cudaMemcpyHostToDevice));
        if (pair) TRY(chase(d0, chain_p, 2000, &c->peer_read_lat_ns, err));
        TRY(chase(d0, chain_d, 2000, &c->local_read_lat_ns, err));
        std::vector<u64> cl = make_chain((size_t)4 << 20, 4096); /* 4 MB: stays in L2 */
        CK(cudaMalloc(&chain_l2, cl.size() * sizeof(u64)));
        CK(cudaMemcpy(chain_l2, cl.data(), cl.size() * sizeof(u64), cudaMemcpyHostToDevice));
        TRY(chase(d0, chain_l2, 4000, &c->l2_read_lat_ns, err));
        /* The 256 MB chain above touches 4096 lines, which stay in L2 after one pass: what an
         * op sees on data its device touched lately. This one touches a million lines (128 MB
         * of them, beyond any L2 here) in random order: what an op waits for data that left L2. */
        std::vector<u64> cc = make_chain((size_t)256 << 20, 256);
        CK(cudaMalloc(&chain_c, cc.size() * sizeof(u64)));
        CK(cudaMemcpy(chain_c, cc.data(), cc.size() * sizeof(u64), cudaMemcpyHostToDevice));
        TRY(chase(d0, chain_c, 2000, &c->cold_read_lat_ns, err));
        if (cc.size() * sizeof(u64) >= (size_t)(2.0 * c->l2_bytes)) TRY(l2_reach(d0, chain_c, c, err));
        std::vector<u64> chh = make_chain((size_t)64 << 20, 16 << 10);
        CK(cudaHostAlloc(&chain_h, chh.size() * sizeof(u64), cudaHostAllocMapped | cudaHostAllocPortable));
        memcpy(chain_h, chh.data(), chh.size() * sizeof(u64));
        CK(cudaHostGetDevicePointer((void **)&chain_hd, chain_h, 0));
        TRY(chase(d0, chain_hd, 1000, &c->host_read_lat_ns, err));
        note(&o, "latency: peer read %.0f ns, HBM %.0f ns (lines in L2), %.0f ns (beyond L2), L2 %.0f ns, host %.0f ns",
             c->peer_read_lat_ns, c->local_read_lat_ns, c->cold_read_lat_ns, c->l2_read_lat_ns, c->host_read_lat_ns);
    }

    /* 5. local memory bandwidth (all SMs, 4 blocks each, 4 loads in flight) */
    {
        int B = 4 * c->nsm;
        rw_ctx r = {4, loc0, loc0b, BIG / 16, sink0};
        double ms;
        TRY(time_ms(d0, launch_read, B, T, &r, o.reps, &ms, err));
        c->hbm_read_gbps = BIG / (ms * 1e-3) / 1e9;
        TRY(time_ms(d0, launch_write, B, T, &r, o.reps, &ms, err));
        c->hbm_write_gbps = BIG / (ms * 1e-3) / 1e9;
        TRY(time_ms(d0, launch_copy, B, T, &r, o.reps, &ms, err));
        c->hbm_copy_gbps = 2.0 * BIG / (ms * 1e-3) / 1e9;
        size_t l2b = std::min((size_t)(c->l2_bytes / 4), (size_t)8 << 20) & ~(size_t)4095;
        rw_ctx rl = {4, loc0, loc0b, l2b / 16, sink0};
        TRY(l2_gbps(d0, launch_read_reps, B, T, rl, o.reps, &c->l2_read_gbps, err));
        TRY(l2_gbps(d0, launch_write_reps, B, T, rl, o.reps, &c->l2_write_gbps, err));
        TRY(l2_gbps(d0, launch_copy_reps, B, T, rl, o.reps, &c->l2_copy_gbps, err));
        c->l2_copy_gbps *= 2; /* a line read and a line written a copied line */
        static const double sweep[AR_CALIB_L2_SWEEP_POINTS] = {0.25, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0};
        for (int i = 0; i < AR_CALIB_L2_SWEEP_POINTS; i++) {
            size_t fb = (size_t)(sweep[i] * (double)c->l2_bytes) & ~(size_t)4095;
            rw_ctx rs = {4, loc0, loc0b, fb / 16, sink0}, cs = {4, loc0, loc0b, fb / 32, sink0};
            c->l2_sweep_frac[i] = sweep[i];
            TRY(l2_gbps(d0, launch_read_reps, B, T, rs, o.reps, &c->l2_sweep_read_gbps[i], err));
            TRY(l2_gbps(d0, launch_copy_reps, B, T, cs, o.reps, &c->l2_sweep_copy_gbps[i], err));
            c->l2_sweep_copy_gbps[i] *= 2;
            c->l2_sweep_n = i + 1;
            note(&o, "L2 sweep: footprint %.2f x L2 (%.1f MB): re-read %.0f GB/s, copy %.0f GB/s (read+write)", sweep[i],
                 fb / 1e6, c->l2_sweep_read_gbps[i], c->l2_sweep_copy_gbps[i]);
        }
        note(&o,
             "HBM: read %.0f GB/s, write %.0f GB/s, copy %.0f GB/s (read+write); L2 read %.0f GB/s, write %.0f GB/s, "
             "copy %.0f GB/s (read+write)",
             c->hbm_read_gbps, c->hbm_write_gbps, c->hbm_copy_gbps, c->l2_read_gbps, c->l2_write_gbps, c->l2_copy_gbps);
    }

    /* 6. reduction throughput of one block, k = 2, data resident in L2 */
    {
        size_t rb_bytes = (size_t)2 << 20;
        int reps = 64;
        CK(cudaSetDevice(d0));
        CK(cudaMalloc(&ra, rb_bytes));
        CK(cudaMalloc(&rb, rb_bytes));
        CK(cudaMalloc(&rd, rb_bytes));
        CK(cudaMemset(ra, 0x3f, rb_bytes));
        CK(cudaMemset(rb, 0x3e, rb_bytes));
        double ms[3];
        for (int m = 0; m < 3; m++) {
            red_ctx x = {m, o.unroll, reps, rd, ra, rb, rb_bytes / 16};
            TRY(time_ms(d0, launch_red, 1, T, &x, o.reps, &ms[m], err));
        }
        double out_bytes = (double)rb_bytes * reps;
        c->reduce_block_gbps_bf16 = out_bytes / (ms[0] * 1e-3) / 1e9;
        c->reduce_block_gbps_fp32 = out_bytes / (ms[1] * 1e-3) / 1e9;
        c->xor_block_gbps_bf16 = out_bytes / (ms[2] * 1e-3) / 1e9;
        /* The additions alone: what a REDUCE costs beyond moving its bytes. A
         * difference within the noise means the arithmetic hides under the loads. */
        double d_bf = ms[0] - ms[2], d_f = ms[1] - ms[2];
        c->reduce_extra_gbps_bf16 = d_bf > 0.01 * ms[2] ? out_bytes / (d_bf * 1e-3) / 1e9 : 0;
        c->reduce_extra_gbps_fp32 = d_f > 0.01 * ms[2] ? out_bytes / (d_f * 1e-3) / 1e9 : 0;
        note(&o, "reduce, one block: bf16 %.1f GB/s, fp32 %.1f GB/s, no-arithmetic %.1f GB/s (output bytes)",
             c->reduce_block_gbps_bf16, c->reduce_block_gbps_fp32, c->xor_block_gbps_bf16);
    }

    /* 7. host staging: kernel loads/stores on mapped pinned memory */
    {
        size_t hb = (size_t)256 << 20;
        CK(cudaHostAlloc(&host, hb, cudaHostAllocMapped | cudaHostAllocPortable));
        memset(host, 1, hb);
        CK(cudaHostGetDevicePointer(&host_d, host, 0));
        rw_ctx r = {4, host_d, host_d, hb / 16, sink0};
        double ms;
        TRY(time_ms(d0, launch_read, c->nsm, T, &r, std::min(o.reps, 3), &ms, err));
        c->host_read_gbps = hb / (ms * 1e-3) / 1e9;
        TRY(time_ms(d0, launch_write, c->nsm, T, &r, std::min(o.reps, 3), &ms, err));
        c->host_write_gbps = hb / (ms * 1e-3) / 1e9;
        /* One block (one executor channel), the executor's loads of host memory
         * (ld.relaxed.sys, 16 bytes, unroll in flight per thread): 64 MB each way. */
        rw_ctx r1 = {o.unroll, host_d, host_d, ((size_t)64 << 20) / 16, sink0};
        TRY(time_ms(d0, launch_read_sys, 1, T, &r1, std::min(o.reps, 3), &ms, err));
        c->host_read_block_gbps = (64 << 20) / (ms * 1e-3) / 1e9;
        TRY(time_ms(d0, launch_write, 1, T, &r1, std::min(o.reps, 3), &ms, err));
        c->host_write_block_gbps = (64 << 20) / (ms * 1e-3) / 1e9;
        note(&o, "host: read %.1f GB/s, write %.1f GB/s (all SMs); one block: read %.1f, write %.1f GB/s",
             c->host_read_gbps, c->host_write_gbps, c->host_read_block_gbps, c->host_write_block_gbps);
    }
    c->wall_s = ar_now_s() - t_start;

out:
    cudaSetDevice(d0);
    if (peer0) cudaFree(peer0);
    if (loc0) cudaFree(loc0);
    if (loc0b) cudaFree(loc0b);
    if (flags0) cudaFree(flags0);
    if (sink0) cudaFree(sink0);
    if (chain_d) cudaFree(chain_d);
    if (chain_l2) cudaFree(chain_l2);
    if (chain_c) cudaFree(chain_c);
    if (ra) cudaFree(ra);
    if (rb) cudaFree(rb);
    if (rd) cudaFree(rd);
    if (chain_h) cudaFreeHost(chain_h);
    if (host) cudaFreeHost(host);
    if (d1 >= 0) cudaSetDevice(d1);
    if (peer1) cudaFree(peer1);
    if (flags1) cudaFree(flags1);
    if (sink1) cudaFree(sink1);
    if (chain_p) cudaFree(chain_p);
    return rc;
}
