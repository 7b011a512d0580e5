/* arsim: the input generator, one for every backend that moves real data (ref on the
 * host, cuda on the GPUs, inside its fill kernel): identical on host and device. A
 * value is uniform in [-1, 1) with 24 significant bits, so exactly a float; rounding
 * it to the dtype is then the same round-to-nearest-even on both sides, and a check
 * can regenerate any element from (seed, rank, index) alone. */
#ifndef ARSIM_GEN_H
#define ARSIM_GEN_H

#include <stdint.h>

#ifdef __CUDACC__
#define AR_GEN_FN __host__ __device__ __forceinline__
#else
#define AR_GEN_FN static inline
#endif

AR_GEN_FN uint64_t ar_gen_mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

AR_GEN_FN float ar_gen_value(uint64_t seed, int rank, uint64_t i) {
    uint64_t h = ar_gen_mix64(ar_gen_mix64(seed * 0x100000001b3ull + (uint64_t)rank) ^ i);
    return (float)(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

#endif
