/* hw: the executor's loads, one definition for the executor (hw/exec.cu) and for the
 * calibration that measures it (validate/calib.cu): GPU memory through L2 only
 * (__ldcg), host memory with sys-scope relaxed loads (ld.relaxed.sys). */
#ifndef ARSIM_HW_LOADS_CUH
#define ARSIM_HW_LOADS_CUH

#include <stdint.h>

__device__ __forceinline__ uint4 ld_sys(const uint4 *p) {
    uint4 v;
    asm volatile("ld.relaxed.sys.global.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
    return v;
}
/* A scalar load by one PTX instruction (reg: the operand's register class). */
#define AR_HW_LOAD(name, T, insn, reg)                                                      \
    __device__ __forceinline__ T name(const T *p) {                                         \
        T v;                                                                                \
        asm volatile(insn " %0, [%1];" : "=" reg(v) : "l"(p) : "memory");                   \
        return v;                                                                           \
    }
AR_HW_LOAD(ld_sys, uint32_t, "ld.relaxed.sys.global.u32", "r")
AR_HW_LOAD(ld_sys, uint16_t, "ld.relaxed.sys.global.u16", "h")
/* Flags: an acquire across the system, and a load that bypasses every cache. */
AR_HW_LOAD(ld_acquire, unsigned long long, "ld.acquire.sys.global.u64", "l")
AR_HW_LOAD(ld_volatile, unsigned long long, "ld.volatile.global.u64", "l")

template <typename T> __device__ __forceinline__ T ld_l2(const T *p) { return __ldcg(p); }
template <> __device__ __forceinline__ uint16_t ld_l2(const uint16_t *p) {
    return __ldcg((const unsigned short *)p);
}

/* A load as the executor issues it: SYS for host memory. */
template <bool SYS, typename T> __device__ __forceinline__ T ld(const T *p) { return SYS ? ld_sys(p) : ld_l2(p); }

#endif
