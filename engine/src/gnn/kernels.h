/* kernels.h: the inspector network's compute kernels (private to gnn/): dense products and
 * branch-free float activations that the compiler can vectorise (a Cephes-style expf: Cody-Waite
 * range reduction, degree-6 polynomial, 2^n through the exponent bits; about 2 ulp, inputs
 * clamped to [-87, 88]). */
#ifndef DP_GNN_KERNELS_H
#define DP_GNN_KERNELS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

static inline float dp_expf(float x) {
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    /* n = round(x / ln 2) by the 1.5 * 2^23 trick (no floorf call, vectorises) */
    float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = x - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    union { int32_t i; float f; } s; /* a union (not memcpy) keeps the loop vectorisable */
    s.i = ((int32_t)n + 127) << 23;
    return p * s.f;
}

static inline float dp_sigmoidf(float x) { return 1.0f / (1.0f + dp_expf(-x)); }
static inline float dp_tanhf(float x) { return 1.0f - 2.0f / (1.0f + dp_expf(2.0f * x)); }

/* Element-wise kernels are compiled for AVX-512, AVX2+FMA and baseline x86-64 and picked at load
 * time (GCC function multi-versioning); elsewhere they are plain C. Their inner loops run over
 * fixed blocks of DP_VBLOCK floats so that -O2's cheap vectoriser takes them. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define DP_SIMD __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define DP_SIMD
#endif
#define DP_VBLOCK 16

/* C = op(A) op(B) + beta C, row-major, op = transpose when ta / tb; m, n or k may be 0. */
void dp_kn_gemm(bool ta, bool tb, int m, int n, int k, const float *a, int lda, const float *b,
                int ldb, float beta, float *c, int ldc);

#endif
