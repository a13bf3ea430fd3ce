/* kernels.c: the kernel level and the product backend (CPU detection, $DRIPLE_KERNELS,
 * dp_kernels_set, the per-shape pick of auto) and the portable level: kernels_impl.h compiled for the baseline target (6 x 8 register blocks of 4-float
 * vectors). */
#include "kernels.h"

#include <pthread.h>
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

static const char *const backend_names[] = {"own", "openblas", "auto"};
_Static_assert(sizeof backend_names / sizeof backend_names[0] == DP_KN_BACKEND_COUNT,
               "update backend_names");
#define KN_ALLOWED "auto, own, openblas, portable, avx2, avx512"

/* The level and backend a name asks for: "auto" (auto, best), "own", "openblas" (the best
 * level), or a level's name (own at that level, lowered to the best there is). false: unknown. */
static bool parse_name(const char *name, int *level, int *backend) {
    const int best = (int)best_level();
    *level = best;
    if (!strcmp(name, "auto")) *backend = DP_KN_AUTO;
    else if (!strcmp(name, "own")) *backend = DP_KN_OWN;
    else if (!strcmp(name, "openblas")) *backend = DP_KN_OPENBLAS;
    else {
        const int l = parse_level(name);
        if (l < 0) return false;
        *level = l < best ? l : best;
        *backend = DP_KN_OWN;
    }
    return true;
}

/* The level and backend in effect, and auto's cells for that level: set once by init_once
 * ($DRIPLE_KERNELS and the measured table), then by dp_kernels_set. */
static atomic_int current = -1, backend = DP_KN_AUTO;
static _Atomic(const char *) cells_now;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct dp_error init_err; /* what init_once refused, for dp_kernels_init */
static bool blas_asked;          /* openblas was asked for (by name) in a build without it */

static void set_state(int level, int be) {
    blas_asked = be == DP_KN_OPENBLAS && !dp_kn_blas_info();
    atomic_store_explicit(&backend, dp_kn_blas_info() ? be : DP_KN_OWN, memory_order_relaxed);
    atomic_store_explicit(&current, level, memory_order_relaxed);
    atomic_store_explicit(&cells_now, dp_kn_table_cells((enum dp_kn_level)level),
                          memory_order_release);
}

static void init_once(void) {
    const char *env = getenv("DRIPLE_KERNELS");
    /* the default is own: auto measured slower on 2 threads here (notes/kernels.md) */
    int level = (int)best_level(), be = DP_KN_OWN;
    if (env && *env && !parse_name(env, &level, &be)) {
        dp_error_set(&init_err, DP_ERR_INVALID, "DRIPLE_KERNELS: unknown value '%s' (allowed: "
                     KN_ALLOWED ")", env);
        level = (int)best_level(); /* the engine goes on with the default; the CLI refuses */
        be = DP_KN_OWN;
    }
    struct dp_error err = {0};
    if (dp_kn_table_load(&err) && !init_err.status) init_err = err;
    set_state(level, be);
}

enum dp_status dp_kernels_init(struct dp_error *err) {
    pthread_once(&once, init_once);
    if (init_err.status && err) *err = init_err;
    return init_err.status;
}

const struct dp_kn_table *dp_kn(void) {
    int l = atomic_load_explicit(&current, memory_order_relaxed);
    if (l < 0) {
        pthread_once(&once, init_once);
        l = atomic_load_explicit(&current, memory_order_relaxed);
    }
    return dp_kn_table_of((enum dp_kn_level)l);
}

enum dp_kn_backend dp_kn_pick(bool ta, bool tb, int m, int n, int k) {
    const int be = atomic_load_explicit(&backend, memory_order_relaxed);
    if (be != DP_KN_AUTO) return (enum dp_kn_backend)be;
    const char *cells = atomic_load_explicit(&cells_now, memory_order_acquire);
    return cells[dp_kn_cell(ta, tb, m, n, k)] == 'b' ? DP_KN_OPENBLAS : DP_KN_OWN;
}

const char *dp_kn_cells(void) {
    dp_kn();
    return atomic_load_explicit(&cells_now, memory_order_acquire);
}

void dp_kn_cells_changed(void) {
    dp_kn();
    atomic_store_explicit(&cells_now,
                          dp_kn_table_cells((enum dp_kn_level)atomic_load(&current)),
                          memory_order_release);
}

void dp_kn_gemm(bool ta, bool tb, int m, int n, int k, const float *a, int lda, const float *b,
                int ldb, float beta, float *c, int ldc) {
    dp_kn()->gemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

const char *dp_kernels(void) { return dp_kn_level_name(dp_kn()->level); }

const char *dp_kernels_backend(void) {
    dp_kn();
    return backend_names[atomic_load_explicit(&backend, memory_order_relaxed)];
}

const char *dp_kernels_note(void) {
    dp_kn();
    if (dp_kn_blas_info()) return NULL;
    return blas_asked ? "OpenBLAS asked for, but this build has none (made with OPENBLAS=0): "
                        "own kernels for every product"
                      : "OpenBLAS: not in this build (made with OPENBLAS=0): own kernels for "
                        "every product";
}

const char *dp_kernels_openblas(void) { return dp_kn_blas_info(); }

bool dp_kernels_set(const char *name) {
    int level, be;
    if (!parse_name(name ? name : "own", &level, &be)) return false;
    pthread_once(&once, init_once); /* so that a later first use does not read the environment */
    set_state(level, be);
    return true;
}
