/* kernels.c: the kernel level (CPU detection, $DRIPLE_KERNELS, dp_kernels_set) and the portable
 * level: kernels_impl.h compiled for the baseline target (6 x 8 register blocks of 4-float
 * vectors). */
#include "kernels.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dp/compute.h"

#define KN_TABLE dp_kn_portable
#define KN_LEVEL DP_KN_PORTABLE
#define KN_VEC 4 /* what every target has (SSE2, NEON) */
#define KN_NV 2
#include "kernels_impl.h"

static const char *const level_names[] = {"portable", "avx2", "avx512"};
_Static_assert(sizeof level_names / sizeof level_names[0] == DP_KN_LEVEL_COUNT,
               "update level_names");

const char *dp_kn_level_name(enum dp_kn_level l) {
    return (unsigned)l < DP_KN_LEVEL_COUNT ? level_names[l] : "?";
}

/* The best level of this build and CPU. */
static enum dp_kn_level best_level(void) {
#ifdef DP_KN_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return DP_KN_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return DP_KN_AVX2;
#endif
    return DP_KN_PORTABLE;
}

const struct dp_kn_table *dp_kn_table_of(enum dp_kn_level l) {
    if ((unsigned)l >= DP_KN_LEVEL_COUNT || l > best_level()) return NULL;
#ifdef DP_KN_X86
    if (l == DP_KN_AVX512) return &dp_kn_avx512;
    if (l == DP_KN_AVX2) return &dp_kn_avx2;
#endif
    return &dp_kn_portable;
}

static int parse_level(const char *s) {
    for (int l = 0; s && l < DP_KN_LEVEL_COUNT; l++)
        if (!strcmp(s, level_names[l])) return l;
    return -1;
}

/* -1 until first use; then the level in effect (set once, or by dp_kernels_set). */
static atomic_int current = -1;

const struct dp_kn_table *dp_kn(void) {
    int l = atomic_load_explicit(&current, memory_order_relaxed);
    if (l < 0) {
        const int best = (int)best_level(), want = parse_level(getenv("DRIPLE_KERNELS"));
        l = want >= 0 && want < best ? want : best;
        atomic_store_explicit(&current, l, memory_order_relaxed);
    }
    return dp_kn_table_of((enum dp_kn_level)l);
}

void dp_kn_gemm(bool ta, bool tb, int m, int n, int k, const float *a, int lda, const float *b,
                int ldb, float beta, float *c, int ldc) {
    dp_kn()->gemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

const char *dp_kernels(void) { return dp_kn_level_name(dp_kn()->level); }

bool dp_kernels_set(const char *name) {
    const int best = (int)best_level();
    if (!name || !strcmp(name, "auto")) {
        atomic_store_explicit(&current, best, memory_order_relaxed);
        return true;
    }
    const int l = parse_level(name);
    if (l < 0) return false;
    atomic_store_explicit(&current, l < best ? l : best, memory_order_relaxed);
    return true;
}
