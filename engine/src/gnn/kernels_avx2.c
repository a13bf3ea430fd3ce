/* kernels_avx2.c: the AVX2 level: kernels_impl.h compiled for AVX2 + FMA (6 x 16 register
 * blocks of the product: 12 ymm accumulators). Compiled in every x86-64 build with a target
 * attribute; run only where the CPU has AVX2 and FMA (kernels.c). */
#include "kernels.h"

#ifdef DP_KN_X86
#define KN_TABLE dp_kn_avx2
#define KN_LEVEL DP_KN_AVX2
#define KN_TARGET "avx2,fma"
#define KN_VEC 8
#define KN_NV 2
#include "kernels_impl.h"
#endif
