/* kernels_avx512.c: the AVX-512 level: kernels_impl.h compiled for AVX-512F (6 x 64 register
 * blocks of the product: 24 zmm accumulators). Compiled in every x86-64 build with a target
 * attribute; run only where the CPU has AVX-512F (kernels.c). */
#include "kernels.h"

#ifdef DP_KN_X86
#define KN_TABLE dp_kn_avx512
#define KN_LEVEL DP_KN_AVX512
#define KN_TARGET "avx512f,avx2,fma"
#define KN_VEC 16
#define KN_NV 4
#include "kernels_impl.h"
#endif
