/* kernels.h: the inspector network's compute kernels (private to gnn/): dense products, the
 * sparse aggregation, the GRU and LSTM cells and the element-wise loops of every layer type,
 * each compiled for AVX-512, AVX2+FMA and portable C in one build (kernels_avx512.c,
 * kernels_avx2.c, kernels.c) and picked at run time: the best level the CPU supports, lowered by
 * $DRIPLE_KERNELS or dp_kernels_set (dp/compute.h). The dense product has a second backend,
 * OpenBLAS (kernels_blas.c, absent from a build made with OPENBLAS=0): each product runs on the
 * backend in effect, or with auto on whichever a per-CPU table of shape classes says is faster
 * (kernels_json.c).
 *
 * Callers take the table once per pass (const struct dp_kn_table *K = dp_kn();) and call
 * K->gemm(...). Kernels work on row ranges, so that threads split rows among themselves; none
 * allocates, and all are reentrant. Also here: branch-free float activations that the compiler
 * vectorises (a Cephes-style expf: Cody-Waite range reduction, degree-6 polynomial, 2^n through
 * the exponent bits; about 2 ulp, inputs clamped to [-87, 88]). */
#ifndef DP_GNN_KERNELS_H
#define DP_GNN_KERNELS_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dp/status.h"

enum dp_kn_level { DP_KN_PORTABLE, DP_KN_AVX2, DP_KN_AVX512, DP_KN_LEVEL_COUNT };

/* Who computes a dense product: driple's own kernels, OpenBLAS, or per shape (auto). */
enum dp_kn_backend { DP_KN_OWN, DP_KN_OPENBLAS, DP_KN_AUTO, DP_KN_BACKEND_COUNT };

struct dp_kn_table {
    enum dp_kn_level level;
    /* C = op(A) op(B) + beta C, row-major (A m x k after op, B k x n after op); m, n or k may be
     * 0. beta 0 never reads C. On the backend in effect (dp_kn_pick). */
    void (*gemm)(bool ta, bool tb, int m, int n, int k, const float *a, int lda, const float *b,
                 int ldb, float beta, float *c, int ldc);
    /* The same product on this level's own kernels, whatever the backend. */
    void (*gemm_own)(bool ta, bool tb, int m, int n, int k, const float *a, int lda,
                     const float *b, int ldb, float beta, float *c, int ldc);
    /* Rows i0 <= i < i1 of out = S in: out_i = s_i in_i + sum_{p in row i} v_p in_{col[p]}, with
     * s_i = self[i] (self NULL: selfc) and v_p = val[p] (val NULL: 1); width w, strides ldi,
     * ldo. In CSR order, so that results do not depend on how rows are split. */
    void (*spmm)(int i0, int i1, const int *row_ptr, const int *col, const float *val,
                 const float *self, float selfc, int w, const float *in, int ldi, float *out,
                 int ldo);
    /* y_i = act(y_i + b) for rows of n (stride ldy); act = LeakyReLU(slope), slope 0: ReLU. */
    void (*bias_act)(int rows, int n, const float *b, float *y, int ldy, float slope);
    /* a_i = silu(a_i + b) for rows of n (contiguous), z_i = a_i + b first when z is not NULL
     * (the setting-aware head's hidden layers). */
    void (*bias_silu)(int rows, int n, const float *b, float *a, float *z);
    /* dy[k] *= act'(y[k]) for n entries (act as above; y and its input share their sign). */
    void (*act_back)(size_t n, const float *y, float *dy, float slope);
    /* out[j] += sum over rows of a[i][j] (bias gradients); a has stride lda. */
    void (*colsum)(int rows, int n, const float *a, int lda, float *out);
    /* GRU update of rows (PyTorch gates r, z, n): input gates gi (stride ldgi, no bias), hidden
     * gates gh (stride ldgh, no bias), hidden y (stride H) -> xo (stride H); r, z, n and the
     * hidden n gate (with its bias) are saved (stride H) unless r is NULL. */
    void (*gru)(int rows, int H, const float *gi, int ldgi, const float *gh, int ldgh,
                const float *bih, const float *bhh, const float *y, float *xo, float *r, float *z,
                float *n, float *g);
    /* GRU backward of rows from dx' (ds) and the saved y, r, z, n, g (stride H each): dy = ds z
     * (the direct path, stride H), the input-gate gradients into dgi (stride lddgi) and the
     * hidden-gate gradients into dgh (stride lddgh). */
    void (*gru_back)(int rows, int H, const float *ds, const float *y, const float *r,
                     const float *z, const float *n, const float *g, float *dy, float *dgi,
                     int lddgi, float *dgh, int lddgh);
    /* One LSTM cell (gates i f g o) of H units from pre-activations g (4H): act gets the four
     * activations, c the cell (cprev NULL: zero), th tanh(c), h the output. */
    void (*lstm)(int H, const float *g, const float *cprev, float *act, float *c, float *th,
                 float *h);
    /* Its backward: from dh and dc (in: the next step's cell gradient; out: this cell's) to the
     * pre-activation gradients dg (4H). */
    void (*lstm_back)(int H, const float *act, const float *th, const float *cprev,
                      const float *dh, float *dc, float *dg);
    /* y_i = a_i . x for n rows of w (stride lda). */
    void (*dot_rows)(int n, int w, const float *a, int lda, const float *x, float *y);
    /* y (w) = beta y + sum_i x_i a_i over n rows of w (stride lda). */
    void (*sum_rows)(int n, int w, const float *a, int lda, const float *x, float beta,
                     float *y);
    /* dst (cols x rows, stride ldd) = src^T (src rows x cols, stride lds), in cache-sized tiles. */
    void (*transpose)(int rows, int cols, const float *src, int lds, float *dst, int ldd);
    /* In place softmax of n values; returns nothing (n >= 1). */
    void (*softmax)(int n, float *e);
    /* e[k] = exp(e[k]) for n entries. */
    void (*exp_all)(size_t n, float *e);
    /* GAT (model_fast_conv.c): y_i += sum over node i's cnt entries k (node j: i for k = 0, then
     * col[k - 1]) of a_hk wh_j, each head h over its F columns (a: heads rows of cnt). */
    void (*gat_row)(int heads, int F, int cnt, const float *a, const int *col, int i,
                    const float *wh, int ldw, float *y);
    /* s_h = w_h . as_h and d_h = w_h . ad_h for one node, every head (F columns each). */
    void (*gat_scores)(int heads, int F, const float *w, const float *as, const float *ad,
                       float *s, float *d);
    /* Backward of gat_row for node i: d wh_j += a_hk dy_h and da[h cnt + k] = dy_h . wh_jh. */
    void (*gat_back_row)(int heads, int F, int cnt, const float *a, const int *col, int i,
                         const float *wh, int ldw, const float *dy, float *dwh, int ldd,
                         float *da);
    /* MPNN: o += relu(a + x + bias), w columns (one edge's message of every tower). */
    void (*relu_sum)(int w, const float *a, const float *x, const float *bias, float *o);
    /* Its backward: where a + x + bias > 0, da += dg and dx += dg. */
    void (*relu_back)(int w, const float *a, const float *x, const float *bias, const float *dg,
                      float *da, float *dx);
};

/* The table of the level in effect (never NULL). */
const struct dp_kn_table *dp_kn(void);
/* dp_kn()->gemm: the product at the level in effect, for one call. */
void dp_kn_gemm(bool ta, bool tb, int m, int n, int k, const float *a, int lda, const float *b,
                int ldb, float beta, float *c, int ldc);
/* The table of one level, or NULL when this build or CPU lacks it (tests compare levels). */
const struct dp_kn_table *dp_kn_table_of(enum dp_kn_level l);
/* "portable", "avx2", "avx512"; "?" out of range. */
const char *dp_kn_level_name(enum dp_kn_level l);

/* The backend that computes one product of this shape (never DP_KN_AUTO): the backend in effect,
 * or with auto the table's choice for the shape's class; always own where OpenBLAS is absent. */
enum dp_kn_backend dp_kn_pick(bool ta, bool tb, int m, int n, int k);
/* The product on OpenBLAS (cblas_sgemm, one thread: driple's pool owns the cores), for m, n, k
 * >= 1. Returns false, computing nothing, in a build without OpenBLAS. */
bool dp_kn_blas_gemm(bool ta, bool tb, int m, int n, int k, const float *a, int lda,
                     const float *b, int ldb, float beta, float *c, int ldc);
/* OpenBLAS's configuration and core ("OpenBLAS 0.3.21 ... | Haswell"), or NULL without it. */
const char *dp_kn_blas_info(void);

/* ---- auto's table (kernels_json.c) ---- */

/* Shape classes of each of m, n, k: <= 4, <= 16, <= 64, <= 256, more (a typical member of each:
 * dp_kn_class_dim); the table holds, per transpose case (ta, tb) and class triple, 'o' (own) or
 * 'b' (OpenBLAS). */
#define DP_KN_CLASSES 5
#define DP_KN_CELLS (4 * DP_KN_CLASSES * DP_KN_CLASSES * DP_KN_CLASSES)
int dp_kn_class(int d);
int dp_kn_class_dim(int cls);
/* The cell of one shape: ((2 ta + tb) C + class m) C + class n) C + class k, C = DP_KN_CLASSES. */
int dp_kn_cell(bool ta, bool tb, int m, int n, int k);
/* The cells in effect for auto at the level in effect (a built-in default, or the measured table
 * kernels.json read by dp_kernels_init); DP_KN_CELLS characters. */
const char *dp_kn_cells(void);
/* The cells for one level: the measured table's where it was measured at that level, else the
 * built-in default. */
const char *dp_kn_table_cells(enum dp_kn_level l);
/* Reads the measured table (dp_kernels_table_path) when there is one; a file measured on another
 * CPU, level or OpenBLAS is set aside (dp_kernels_table says so). Fails naming the file when it
 * is malformed. Called once, by the first use of the kernels. */
enum dp_status dp_kn_table_load(struct dp_error *err);
/* Re-reads dp_kn_table_cells for the level in effect (after a new table was measured). */
void dp_kn_cells_changed(void);

/* The per-level tables (NULL-free: each level's file defines its own). */
extern const struct dp_kn_table dp_kn_portable;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DP_KN_X86 1
extern const struct dp_kn_table dp_kn_avx2, dp_kn_avx512;
#endif

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
    /* 2^n from the exponent bits; unsigned arithmetic (n + 127 >= 1 after the clamp), so that
     * no shift or overflow check of a sanitizer build stops the loop vectorising; a union (not
     * memcpy) for the same reason */
    union { uint32_t i; float f; } s;
    s.i = ((uint32_t)(int32_t)n + 127u) << 23;
    return p * s.f;
}

static inline float dp_sigmoidf(float x) { return 1.0f / (1.0f + dp_expf(-x)); }
static inline float dp_tanhf(float x) { return 1.0f - 2.0f / (1.0f + dp_expf(2.0f * x)); }

/* Element-wise loops run over fixed blocks of DP_VBLOCK floats so that -O2's cheap vectoriser
 * takes them at every level. */
#define DP_VBLOCK 16

#endif
