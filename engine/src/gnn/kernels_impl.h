/* kernels_impl.h: the kernels of kernels.h written once, in vectorisable C and GCC vector
 * extensions, included by each level's file after it has set its target (kernels.c: portable;
 * kernels_avx2.c, kernels_avx512.c), which defines before the include:
 *   KN_TABLE  the name of the table to define (dp_kn_avx2, ...)
 *   KN_LEVEL  its enum dp_kn_level
 *   KN_TARGET the target attribute its functions get ("avx2,fma"; none: the baseline)
 *   KN_VEC    floats per vector register at this level (4, 8, 16)
 *   KN_NV     vectors per row of the product's register block (KN_MR rows x KN_NV vectors of
 *             accumulators must fit the level's registers)
 * Every function here is static: each level's file holds its own copy, compiled for its target. */
#ifndef KN_TABLE
#error "define KN_TABLE, KN_LEVEL, KN_VEC and KN_NV before including kernels_impl.h"
#endif

#ifdef KN_TARGET /* every function below, for the level's instruction set */
#define KN_DO_PRAGMA(...) _Pragma(#__VA_ARGS__)
#define KN_PRAGMA(...) KN_DO_PRAGMA(__VA_ARGS__) /* expands KN_TARGET first */
#if defined(__clang__)
KN_PRAGMA(clang attribute push(__attribute__((target(KN_TARGET))), apply_to = function))
#else
KN_PRAGMA(GCC push_options)
KN_PRAGMA(GCC target(KN_TARGET))
#endif
#endif

#define VB DP_VBLOCK

/* ---- dense products ---- */

/* Blocks of the packed B^T and of the depth (so that a column strip of B stays in L1). */
#define KN_KC 128
#define KN_NC 128
#define KN_TILE 16 /* transpose tiles: 16 lines read, 16 written */

#define KN_MR 6                 /* rows of a register block */
#define KN_NR (KN_VEC * KN_NV)  /* its columns */
/* one vector register; loads and stores through it need only float alignment */
typedef float kn_vf __attribute__((vector_size(KN_VEC * sizeof(float)), aligned(4), may_alias));

/* C (mr x nv vectors, the first nr columns stored) = sum_p A(i, p) B(p, :) + beta C over k, A(i,
 * p) at a[i rs + p cs], B's rows nv vectors wide (stride ldb). mr and nv are constants at each
 * call (the switches in gemm_core), so that the accumulators live in registers; a * b + c
 * contracts to an FMA where the level has one. */
static inline __attribute__((always_inline)) void
kn_block(const int mr, const int nv, int nr, int k, const float *a, size_t rs, size_t cs,
         const float *b, size_t ldb, float *c, size_t ldc, float beta) {
    kn_vf acc[KN_MR][KN_NV];
#pragma GCC unroll 8
    for (int i = 0; i < mr; i++)
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++) acc[i][v] = (kn_vf){0};
    for (int p = 0; p < k; p++) {
        const float *bp = b + (size_t)p * ldb, *ap = a + (size_t)p * cs;
        kn_vf bv[KN_NV];
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++) bv[v] = *(const kn_vf *)(bp + KN_VEC * v);
#pragma GCC unroll 8
        for (int i = 0; i < mr; i++) {
            const float av = ap[i * rs];
#pragma GCC unroll 8
            for (int v = 0; v < nv; v++) acc[i][v] += av * bv[v];
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < mr; i++)
#pragma GCC unroll 8
        for (int v = 0; v < nv; v++) {
            float *cp = c + i * ldc + KN_VEC * v;
            kn_vf r = acc[i][v]; /* a copy: the partial store below takes its address */
            if (KN_VEC * (v + 1) <= nr) {
                if (beta != 0) r += beta * *(kn_vf *)cp;
                *(kn_vf *)cp = r;
            } else { /* the strip's last, partial vector */
                float t[KN_VEC];
                memcpy(t, &r, sizeof t);
                for (int j = 0; j < nr - KN_VEC * v; j++)
                    cp[j] = beta != 0 ? t[j] + beta * cp[j] : t[j];
            }
        }
}

/* Rows i0 .. m of one column strip, nv vectors wide (a constant). */
static inline __attribute__((always_inline)) void
kn_strip(const int nv, int nr, int m, int k, const float *a, size_t rs, size_t cs, const float *b,
         size_t ldb, float *c, size_t ldc, float beta) {
    for (int i0 = 0; i0 < m; i0 += KN_MR) {
        const float *ai = a + i0 * rs;
        float *ci = c + (size_t)i0 * ldc;
#define KN_CALL(r) kn_block(r, nv, nr, k, ai, rs, cs, b, ldb, ci, ldc, beta)
        _Static_assert(KN_MR == 6, "one case per row count below");
        switch (m - i0 < KN_MR ? m - i0 : KN_MR) {
        case 1: KN_CALL(1); break;
        case 2: KN_CALL(2); break;
        case 3: KN_CALL(3); break;
        case 4: KN_CALL(4); break;
        case 5: KN_CALL(5); break;
        default: KN_CALL(6); break;
        }
#undef KN_CALL
    }
}

/* One row of C (a vector times B: Set2Set's and the heads' products of a single graph):
 * columns in strips of KN_ROWV vectors, so that as many independent accumulators hide the FMA
 * latency that a register block of one row cannot (kn_block's arithmetic, column by column).
 * Returns the columns done (whole strips); the caller does the rest. */
#define KN_ROWV 8
static int gemm_row(int n, int k, const float *a, size_t cs, const float *b, size_t ldb,
                    float beta, float *c) {
    const int w = KN_ROWV * KN_VEC, full = n - n % w;
    for (int j0 = 0; j0 < full; j0 += w) {
        kn_vf acc[KN_ROWV];
#pragma GCC unroll 8
        for (int v = 0; v < KN_ROWV; v++) acc[v] = (kn_vf){0};
        for (int p = 0; p < k; p++) {
            const float av = a[(size_t)p * cs], *bp = b + (size_t)p * ldb + j0;
#pragma GCC unroll 8
            for (int v = 0; v < KN_ROWV; v++) acc[v] += av * *(const kn_vf *)(bp + KN_VEC * v);
        }
#pragma GCC unroll 8
        for (int v = 0; v < KN_ROWV; v++) {
            float *cp = c + j0 + KN_VEC * v;
            kn_vf r = acc[v];
            if (beta != 0) r += beta * *(kn_vf *)cp;
            *(kn_vf *)cp = r;
        }
    }
    return full;
}
#undef KN_ROWV

/* C = op(A) B + beta C for B not transposed, k <= KN_KC: column strips of KN_NR (B's strip stays
 * in L1 over the rows); a partial last strip is copied out, zero-padded to whole vectors, so
 * that every vector load stays inside B. */
static void gemm_core(bool ta, int m, int n, int k, const float *a, int lda, const float *b,
                      int ldb, float beta, float *c, int ldc) {
    const size_t rs = ta ? 1 : (size_t)lda, cs = ta ? (size_t)lda : 1;
    if (m == 1) {
        const int done = gemm_row(n, k, a, cs, b, (size_t)ldb, beta, c);
        b += done;
        c += done;
        n -= done;
        if (n == 0) return;
    }
    const int full = n - n % KN_NR;
    for (int j0 = 0; j0 < full; j0 += KN_NR)
        kn_strip(KN_NV, KN_NR, m, k, a, rs, cs, b + j0, (size_t)ldb, c + j0, (size_t)ldc, beta);
    if (full == n) return;
    const int nr = n - full, nv = (nr + KN_VEC - 1) / KN_VEC, w = nv * KN_VEC;
    float pad[KN_KC * KN_NR];
    for (int p = 0; p < k; p++) {
        memcpy(pad + (size_t)p * w, b + (size_t)p * ldb + full, (size_t)nr * sizeof *pad);
        memset(pad + (size_t)p * w + nr, 0, (size_t)(w - nr) * sizeof *pad);
    }
    _Static_assert(KN_NV <= 4, "one case per vector count below");
    switch (nv) {
#define KN_TAIL(v) kn_strip(v, nr, m, k, a, rs, cs, pad, (size_t)w, c + full, (size_t)ldc, beta)
    case 1: KN_TAIL(1); break;
#if KN_NV > 2
    case 2: KN_TAIL(2); break;
    case 3: KN_TAIL(3); break;
#elif KN_NV > 1
    case 2: KN_TAIL(2); break;
#endif
    default: KN_TAIL(KN_NV); break;
#undef KN_TAIL
    }
}

static void transpose(int rows, int cols, const float *src, int lds, float *dst, int ldd) {
    for (int i0 = 0; i0 < rows; i0 += KN_TILE)
        for (int j0 = 0; j0 < cols; j0 += KN_TILE) {
            const int i1 = i0 + KN_TILE < rows ? i0 + KN_TILE : rows;
            const int j1 = j0 + KN_TILE < cols ? j0 + KN_TILE : cols;
            for (int j = j0; j < j1; j++)
                for (int i = i0; i < i1; i++) dst[(size_t)j * ldd + i] = src[(size_t)i * lds + j];
        }
}

static void gemm(bool ta, bool tb, int m, int n, int k, const float *a, int lda, const float *b,
                 int ldb, float beta, float *c, int ldc) {
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) c[(size_t)i * ldc + j] *= beta;
        return;
    }
    /* column p0 of op(A) */
#define A_AT(p0) (ta ? a + (size_t)(p0) * lda : a + (p0))
    if (!tb) {
        for (int p0 = 0; p0 < k; p0 += KN_KC) {
            const int kc = k - p0 < KN_KC ? k - p0 : KN_KC;
            gemm_core(ta, m, n, kc, A_AT(p0), lda, b + (size_t)p0 * ldb, ldb, p0 ? 1.0f : beta,
                      c, ldc);
        }
        return;
    }
    /* B^T: pack blocks of B (n x k as stored) into kc x nc row-major panels */
    float pack[KN_KC * KN_NC];
    for (int j0 = 0; j0 < n; j0 += KN_NC) {
        const int nc = n - j0 < KN_NC ? n - j0 : KN_NC;
        for (int p0 = 0; p0 < k; p0 += KN_KC) {
            const int kc = k - p0 < KN_KC ? k - p0 : KN_KC;
            transpose(nc, kc, b + (size_t)j0 * ldb + p0, ldb, pack, nc);
            gemm_core(ta, m, nc, kc, A_AT(p0), lda, pack, nc, p0 ? 1.0f : beta, c + j0, ldc);
        }
    }
#undef A_AT
}

/* The product on the backend that dp_kn_pick chooses for its shape. */
static void gemm_pick(bool ta, bool tb, int m, int n, int k, const float *a, int lda,
                      const float *b, int ldb, float beta, float *c, int ldc) {
    if (m > 0 && n > 0 && k > 0 && dp_kn_pick(ta, tb, m, n, k) == DP_KN_OPENBLAS &&
        dp_kn_blas_gemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc))
        return;
    gemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

/* ---- sparse aggregation ---- */

/* Four blocks of VB columns per pass: four independent sums per neighbour, so that the FMA
 * latency of one chain does not serialise the row. */
#define SPMM_W (4 * VB)

static void spmm(int i0, int i1, const int *row_ptr, const int *col, const float *val,
                 const float *self, float selfc, int w, const float *in, int ldi, float *out,
                 int ldo) {
    const int w4 = w - w % SPMM_W, wb = w - w % VB;
    for (int i = i0; i < i1; i++) {
        const float s = self ? self[i] : selfc;
        const float *xi = in + (size_t)i * ldi;
        float *o = out + (size_t)i * ldo;
        const int p0 = row_ptr[i], p1 = row_ptr[i + 1];
        /* blocks of columns, their sums held in registers over the neighbours */
        for (int c0 = 0; c0 < w4; c0 += SPMM_W) {
            float a0[VB], a1[VB], a2[VB], a3[VB];
            for (int c = 0; c < VB; c++) {
                a0[c] = s * xi[c0 + c];
                a1[c] = s * xi[c0 + VB + c];
                a2[c] = s * xi[c0 + 2 * VB + c];
                a3[c] = s * xi[c0 + 3 * VB + c];
            }
            for (int p = p0; p < p1; p++) {
                const float v = val ? val[p] : 1.0f;
                const float *restrict xj = in + (size_t)col[p] * ldi + c0;
                for (int c = 0; c < VB; c++) {
                    a0[c] += v * xj[c];
                    a1[c] += v * xj[VB + c];
                    a2[c] += v * xj[2 * VB + c];
                    a3[c] += v * xj[3 * VB + c];
                }
            }
            for (int c = 0; c < VB; c++) {
                o[c0 + c] = a0[c];
                o[c0 + VB + c] = a1[c];
                o[c0 + 2 * VB + c] = a2[c];
                o[c0 + 3 * VB + c] = a3[c];
            }
        }
        for (int c0 = w4; c0 < wb; c0 += VB) {
            float acc[VB];
            for (int c = 0; c < VB; c++) acc[c] = s * xi[c0 + c];
            for (int p = p0; p < p1; p++) {
                const float v = val ? val[p] : 1.0f;
                const float *restrict xj = in + (size_t)col[p] * ldi + c0;
                for (int c = 0; c < VB; c++) acc[c] += v * xj[c];
            }
            for (int c = 0; c < VB; c++) o[c0 + c] = acc[c];
        }
        for (int c = wb; c < w; c++) {
            float acc = s * xi[c];
            for (int p = p0; p < p1; p++) acc += (val ? val[p] : 1.0f) * in[(size_t)col[p] * ldi + c];
            o[c] = acc;
        }
    }
}

/* ---- element-wise ---- */

static void bias_act(int rows, int n, const float *b, float *y, int ldy, float slope) {
    const int nb = n - n % VB;
    for (int i = 0; i < rows; i++) {
        float *restrict yi = y + (size_t)i * ldy;
        for (int c0 = 0; c0 < nb; c0 += VB)
            for (int c = 0; c < VB; c++) {
                const float v = yi[c0 + c] + b[c0 + c];
                yi[c0 + c] = v > 0 ? v : slope * v;
            }
        for (int c = nb; c < n; c++) {
            const float v = yi[c] + b[c];
            yi[c] = v > 0 ? v : slope * v;
        }
    }
}

/* SiLU, z / (1 + e^-z), as the setting-aware head has always computed it. */
#define KN_SILU(v) ((v) / (1.0f + dp_expf(-(v))))

static void bias_silu(int rows, int n, const float *restrict b, float *restrict a,
                      float *restrict z) {
    const int nb = n - n % VB;
    for (int i = 0; i < rows; i++) {
        float *restrict ai = a + (size_t)i * n, *restrict zi = z ? z + (size_t)i * n : NULL;
        if (zi)
            for (int c0 = 0; c0 < nb; c0 += VB)
                for (int c = 0; c < VB; c++) zi[c0 + c] = ai[c0 + c] + b[c0 + c];
        for (int c0 = 0; c0 < nb; c0 += VB)
            for (int c = 0; c < VB; c++) {
                const float v = ai[c0 + c] + b[c0 + c];
                ai[c0 + c] = KN_SILU(v);
            }
        for (int c = nb; c < n; c++) {
            const float v = ai[c] + b[c];
            if (zi) zi[c] = v;
            ai[c] = KN_SILU(v);
        }
    }
}
#undef KN_SILU

static void act_back(size_t n, const float *restrict y, float *restrict dy, float slope) {
    const size_t nb = n - n % VB;
    for (size_t c0 = 0; c0 < nb; c0 += VB)
        for (int c = 0; c < VB; c++) dy[c0 + c] *= y[c0 + c] > 0 ? 1.0f : slope;
    for (size_t c = nb; c < n; c++) dy[c] *= y[c] > 0 ? 1.0f : slope;
}

static void colsum(int rows, int n, const float *a, int lda, float *out) {
    const int n4 = n - n % SPMM_W, nb = n - n % VB;
    for (int c0 = 0; c0 < n4; c0 += SPMM_W) {
        float a0[VB], a1[VB], a2[VB], a3[VB];
        for (int c = 0; c < VB; c++) {
            a0[c] = out[c0 + c];
            a1[c] = out[c0 + VB + c];
            a2[c] = out[c0 + 2 * VB + c];
            a3[c] = out[c0 + 3 * VB + c];
        }
        for (int i = 0; i < rows; i++) {
            const float *restrict ai = a + (size_t)i * lda + c0;
            for (int c = 0; c < VB; c++) {
                a0[c] += ai[c];
                a1[c] += ai[VB + c];
                a2[c] += ai[2 * VB + c];
                a3[c] += ai[3 * VB + c];
            }
        }
        for (int c = 0; c < VB; c++) {
            out[c0 + c] = a0[c];
            out[c0 + VB + c] = a1[c];
            out[c0 + 2 * VB + c] = a2[c];
            out[c0 + 3 * VB + c] = a3[c];
        }
    }
    for (int c0 = n4; c0 < nb; c0 += VB) {
        float acc[VB];
        for (int c = 0; c < VB; c++) acc[c] = out[c0 + c];
        for (int i = 0; i < rows; i++) {
            const float *restrict ai = a + (size_t)i * lda + c0;
            for (int c = 0; c < VB; c++) acc[c] += ai[c];
        }
        for (int c = 0; c < VB; c++) out[c0 + c] = acc[c];
    }
    for (int c = nb; c < n; c++)
        for (int i = 0; i < rows; i++) out[c] += a[(size_t)i * lda + c];
}

/* One row of the GRU; SAVE(j) stores what the backward needs, or nothing. */
#define GRU_ROW(SAVE)                                                                            \
    do {                                                                                         \
        for (int j0 = 0; j0 < hb; j0 += VB)                                                      \
            for (int jj = 0; jj < VB; jj++) GRU_FWD(j0 + jj, SAVE);                              \
        for (int j = hb; j < H; j++) GRU_FWD(j, SAVE);                                           \
    } while (0)
#define GRU_FWD(j, SAVE)                                                                         \
    do {                                                                                         \
        const float rv = dp_sigmoidf(a[j] + bih[j] + h[j] + bhh[j]);                             \
        const float zv = dp_sigmoidf(a[H + j] + bih[H + j] + h[H + j] + bhh[H + j]);             \
        const float gn = h[2 * H + j] + bhh[2 * H + j];                                          \
        const float nv = dp_tanhf(a[2 * H + j] + bih[2 * H + j] + rv * gn);                      \
        o[j] = (1.0f - zv) * nv + zv * y[j];                                                     \
        SAVE(j);                                                                                 \
    } while (0)
#define GRU_SAVE(j) (r[j] = rv, z[j] = zv, n[j] = nv, g[j] = gn)
#define GRU_NOSAVE(j) ((void)0)

static void gru_row_save(int H, const float *restrict a, const float *restrict h,
                         const float *restrict bih, const float *restrict bhh,
                         const float *restrict y, float *restrict o, float *restrict r,
                         float *restrict z, float *restrict n, float *restrict g) {
    const int hb = H - H % VB;
    GRU_ROW(GRU_SAVE);
}

static void gru_row(int H, const float *restrict a, const float *restrict h,
                    const float *restrict bih, const float *restrict bhh,
                    const float *restrict y, float *restrict o) {
    const int hb = H - H % VB;
    GRU_ROW(GRU_NOSAVE);
}
#undef GRU_ROW
#undef GRU_FWD
#undef GRU_SAVE
#undef GRU_NOSAVE

static void gru(int rows, int H, const float *gi, int ldgi, const float *gh, int ldgh,
                const float *bih, const float *bhh, const float *y, float *xo, float *r, float *z,
                float *n, float *g) {
    for (int i = 0; i < rows; i++) {
        const size_t q = (size_t)i * H;
        if (r)
            gru_row_save(H, gi + (size_t)i * ldgi, gh + (size_t)i * ldgh, bih, bhh, y + q,
                         xo + q, r + q, z + q, n + q, g + q);
        else
            gru_row(H, gi + (size_t)i * ldgi, gh + (size_t)i * ldgh, bih, bhh, y + q, xo + q);
    }
}

/* Each block is its own restrict pointer so that the stores vectorise. */
static inline void gru_back_row(int H, const float *restrict ds, const float *restrict y,
                                const float *restrict r, const float *restrict z,
                                const float *restrict n, const float *restrict g,
                                float *restrict dy, float *restrict ir, float *restrict iz,
                                float *restrict in, float *restrict hr, float *restrict hz,
                                float *restrict hn) {
    const int hb = H - H % VB;
#define GRU_BACK(j)                                                                              \
    do {                                                                                         \
        float dsv = ds[j], zv = z[j], nv = n[j], rv = r[j];                                      \
        dy[j] = dsv * zv;                                                                        \
        float dan = dsv * (1.0f - zv) * (1.0f - nv * nv);                                       \
        float dar = dan * g[j] * rv * (1.0f - rv);                                               \
        float daz = dsv * (y[j] - nv) * zv * (1.0f - zv);                                        \
        ir[j] = dar;                                                                             \
        iz[j] = daz;                                                                             \
        in[j] = dan;                                                                             \
        hr[j] = dar;                                                                             \
        hz[j] = daz;                                                                             \
        hn[j] = dan * rv;                                                                        \
    } while (0)
    for (int j0 = 0; j0 < hb; j0 += VB)
        for (int jj = 0; jj < VB; jj++) GRU_BACK(j0 + jj);
    for (int j = hb; j < H; j++) GRU_BACK(j);
#undef GRU_BACK
}

static void gru_back(int rows, int H, const float *ds, const float *y, const float *r,
                     const float *z, const float *n, const float *g, float *dy, float *dgi,
                     int lddgi, float *dgh, int lddgh) {
    for (int i = 0; i < rows; i++) {
        const size_t q = (size_t)i * H;
        float *gi = dgi + (size_t)i * lddgi, *gh = dgh + (size_t)i * lddgh;
        gru_back_row(H, ds + q, y + q, r + q, z + q, n + q, g + q, dy + q, gi, gi + H, gi + 2 * H,
                     gh, gh + H, gh + 2 * H);
    }
}

static void lstm(int H, const float *restrict g, const float *restrict cprev,
                 float *restrict act, float *restrict c, float *restrict th, float *restrict h) {
    const int hb = H - H % VB;
#define LSTM_FWD(j, CP)                                                                          \
    do {                                                                                         \
        const float ig = dp_sigmoidf(g[j]), fg = dp_sigmoidf(g[H + j]);                          \
        const float gg = dp_tanhf(g[2 * H + j]), og = dp_sigmoidf(g[3 * H + j]);                 \
        act[j] = ig;                                                                             \
        act[H + j] = fg;                                                                         \
        act[2 * H + j] = gg;                                                                     \
        act[3 * H + j] = og;                                                                     \
        const float cv = fg * (CP) + ig * gg;                                                    \
        const float t = dp_tanhf(cv);                                                            \
        c[j] = cv;                                                                               \
        th[j] = t;                                                                               \
        h[j] = og * t;                                                                           \
    } while (0)
    /* the first step has no previous cell: its own loop, so that neither has a branch */
    if (cprev) {
        for (int j0 = 0; j0 < hb; j0 += VB)
            for (int jj = 0; jj < VB; jj++) LSTM_FWD(j0 + jj, cprev[j0 + jj]);
        for (int j = hb; j < H; j++) LSTM_FWD(j, cprev[j]);
    } else {
        for (int j0 = 0; j0 < hb; j0 += VB)
            for (int jj = 0; jj < VB; jj++) LSTM_FWD(j0 + jj, 0.0f);
        for (int j = hb; j < H; j++) LSTM_FWD(j, 0.0f);
    }
#undef LSTM_FWD
}

static void lstm_back(int H, const float *restrict act, const float *restrict th,
                      const float *restrict cprev, const float *restrict dh, float *restrict dc,
                      float *restrict dg) {
    const int hb = H - H % VB;
#define LSTM_BACK(j, CP)                                                                         \
    do {                                                                                         \
        const float ig = act[j], fg = act[H + j], gg = act[2 * H + j], og = act[3 * H + j];      \
        const float dct = dc[j] + dh[j] * og * (1.0f - th[j] * th[j]);                           \
        dg[j] = dct * gg * ig * (1.0f - ig);                                                     \
        dg[H + j] = dct * (CP) * fg * (1.0f - fg);                                               \
        dg[2 * H + j] = dct * ig * (1.0f - gg * gg);                                             \
        dg[3 * H + j] = dh[j] * th[j] * og * (1.0f - og);                                        \
        dc[j] = dct * fg;                                                                        \
    } while (0)
    if (cprev) {
        for (int j0 = 0; j0 < hb; j0 += VB)
            for (int jj = 0; jj < VB; jj++) LSTM_BACK(j0 + jj, cprev[j0 + jj]);
        for (int j = hb; j < H; j++) LSTM_BACK(j, cprev[j]);
    } else {
        for (int j0 = 0; j0 < hb; j0 += VB)
            for (int jj = 0; jj < VB; jj++) LSTM_BACK(j0 + jj, 0.0f);
        for (int j = hb; j < H; j++) LSTM_BACK(j, 0.0f);
    }
#undef LSTM_BACK
}

/* The sum of a block's VB partial sums, pairwise (halves added until one is left): a tree of
 * vector adds, where a running sum would be VB dependent scalar adds. */
static inline float kn_hsum(float *acc) {
#pragma GCC unroll 8
    for (int h = VB / 2; h >= 1; h /= 2)
        for (int c = 0; c < h; c++) acc[c] += acc[c + h];
    return acc[0];
}

/* Four rows at a time: four independent chains of FMAs (one row's is as long as its vectors). */
static void dot_rows(int n, int w, const float *a, int lda, const float *x, float *y) {
    const int wb = w - w % VB, n4 = n - n % 4;
    for (int i = 0; i < n4; i += 4) {
        const float *restrict a0 = a + (size_t)i * lda, *restrict a1 = a0 + lda;
        const float *restrict a2 = a1 + lda, *restrict a3 = a2 + lda;
        float c0[VB] = {0}, c1[VB] = {0}, c2[VB] = {0}, c3[VB] = {0};
        for (int j0 = 0; j0 < wb; j0 += VB)
            for (int c = 0; c < VB; c++) {
                const float xv = x[j0 + c];
                c0[c] += a0[j0 + c] * xv;
                c1[c] += a1[j0 + c] * xv;
                c2[c] += a2[j0 + c] * xv;
                c3[c] += a3[j0 + c] * xv;
            }
        float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (int c = wb; c < w; c++) {
            s0 += a0[c] * x[c];
            s1 += a1[c] * x[c];
            s2 += a2[c] * x[c];
            s3 += a3[c] * x[c];
        }
        y[i] = s0 + kn_hsum(c0);
        y[i + 1] = s1 + kn_hsum(c1);
        y[i + 2] = s2 + kn_hsum(c2);
        y[i + 3] = s3 + kn_hsum(c3);
    }
    for (int i = n4; i < n; i++) {
        const float *restrict ai = a + (size_t)i * lda;
        float acc[VB] = {0}, s = 0;
        for (int c0 = 0; c0 < wb; c0 += VB)
            for (int c = 0; c < VB; c++) acc[c] += ai[c0 + c] * x[c0 + c];
        for (int c = wb; c < w; c++) s += ai[c] * x[c];
        y[i] = s + kn_hsum(acc);
    }
}

/* Columns in groups of four vectors, rows inside: four independent chains over the rows. */
static void sum_rows(int n, int w, const float *a, int lda, const float *x, float beta,
                     float *y) {
    const int w4 = w - w % SPMM_W, wb = w - w % VB;
    for (int c0 = 0; c0 < w4; c0 += SPMM_W) {
        float a0[VB], a1[VB], a2[VB], a3[VB];
        for (int c = 0; c < VB; c++) {
            a0[c] = beta == 0 ? 0.0f : beta * y[c0 + c];
            a1[c] = beta == 0 ? 0.0f : beta * y[c0 + VB + c];
            a2[c] = beta == 0 ? 0.0f : beta * y[c0 + 2 * VB + c];
            a3[c] = beta == 0 ? 0.0f : beta * y[c0 + 3 * VB + c];
        }
        for (int i = 0; i < n; i++) {
            const float *restrict ai = a + (size_t)i * lda + c0;
            const float xi = x[i];
            for (int c = 0; c < VB; c++) {
                a0[c] += xi * ai[c];
                a1[c] += xi * ai[VB + c];
                a2[c] += xi * ai[2 * VB + c];
                a3[c] += xi * ai[3 * VB + c];
            }
        }
        for (int c = 0; c < VB; c++) {
            y[c0 + c] = a0[c];
            y[c0 + VB + c] = a1[c];
            y[c0 + 2 * VB + c] = a2[c];
            y[c0 + 3 * VB + c] = a3[c];
        }
    }
    for (int c0 = w4; c0 < wb; c0 += VB) {
        float acc[VB];
        for (int c = 0; c < VB; c++) acc[c] = beta == 0 ? 0.0f : beta * y[c0 + c];
        for (int i = 0; i < n; i++) {
            const float *restrict ai = a + (size_t)i * lda + c0;
            const float xi = x[i];
            for (int c = 0; c < VB; c++) acc[c] += xi * ai[c];
        }
        for (int c = 0; c < VB; c++) y[c0 + c] = acc[c];
    }
    for (int c = wb; c < w; c++) {
        float acc = beta == 0 ? 0.0f : beta * y[c];
        for (int i = 0; i < n; i++) acc += x[i] * a[(size_t)i * lda + c];
        y[c] = acc;
    }
}

static void exp_all(size_t n, float *restrict e) {
    const size_t nb = n - n % VB;
    for (size_t k0 = 0; k0 < nb; k0 += VB)
        for (int k = 0; k < VB; k++) e[k0 + k] = dp_expf(e[k0 + k]);
    for (size_t k = nb; k < n; k++) e[k] = dp_expf(e[k]);
}

static void softmax(int n, float *e) {
    float mx = e[0];
    for (int j = 1; j < n; j++) mx = e[j] > mx ? e[j] : mx;
    for (int j = 0; j < n; j++) e[j] -= mx;
    exp_all((size_t)n, e);
    float sum = 0;
    for (int j = 0; j < n; j++) sum += e[j];
    const float inv = 1.0f / sum;
    for (int j = 0; j < n; j++) e[j] *= inv;
}

/* ---- GAT and MPNN rows ---- */

static void gat_row(int heads, int F, int cnt, const float *restrict a, const int *restrict col,
                    int i, const float *restrict wh, int ldw, float *restrict y) {
    const int fb = F - F % VB;
    for (int k = 0; k < cnt; k++) {
        const float *w = wh + (size_t)(k == 0 ? i : col[k - 1]) * ldw;
        for (int h = 0; h < heads; h++) {
            const float ak = a[(size_t)h * cnt + k];
            const float *wf = w + h * F;
            float *yf = y + h * F;
            for (int f0 = 0; f0 < fb; f0 += VB)
                for (int f = 0; f < VB; f++) yf[f0 + f] += ak * wf[f0 + f];
            for (int f = fb; f < F; f++) yf[f] += ak * wf[f];
        }
    }
}

static void gat_scores(int heads, int F, const float *restrict w, const float *restrict as,
                       const float *restrict ad, float *restrict s, float *restrict d) {
    const int fb = F - F % VB;
    for (int h = 0; h < heads; h++) {
        const float *wf = w + h * F, *af = as + h * F, *df = ad + h * F;
        float px[VB] = {0}, pz[VB] = {0}, x = 0, z = 0;
        for (int f0 = 0; f0 < fb; f0 += VB)
            for (int f = 0; f < VB; f++) {
                px[f] += wf[f0 + f] * af[f0 + f];
                pz[f] += wf[f0 + f] * df[f0 + f];
            }
        for (int f = 0; f < VB; f++) {
            x += px[f];
            z += pz[f];
        }
        for (int f = fb; f < F; f++) {
            x += wf[f] * af[f];
            z += wf[f] * df[f];
        }
        s[h] = x;
        d[h] = z;
    }
}

static void gat_back_row(int heads, int F, int cnt, const float *restrict a,
                         const int *restrict col, int i, const float *restrict wh, int ldw,
                         const float *restrict dy, float *restrict dwh, int ldd,
                         float *restrict da) {
    const int fb = F - F % VB;
    for (int k = 0; k < cnt; k++) {
        const int j = k == 0 ? i : col[k - 1];
        const float *w = wh + (size_t)j * ldw;
        float *dw = dwh + (size_t)j * ldd;
        for (int h = 0; h < heads; h++) {
            const float ak = a[(size_t)h * cnt + k], *wf = w + h * F, *df = dy + h * F;
            float *dwf = dw + h * F, pr[VB] = {0}, dot = 0;
            for (int f0 = 0; f0 < fb; f0 += VB)
                for (int f = 0; f < VB; f++) {
                    dwf[f0 + f] += ak * df[f0 + f];
                    pr[f] += df[f0 + f] * wf[f0 + f];
                }
            for (int f = 0; f < VB; f++) dot += pr[f];
            for (int f = fb; f < F; f++) {
                dwf[f] += ak * df[f];
                dot += df[f] * wf[f];
            }
            da[(size_t)h * cnt + k] = dot;
        }
    }
}

static void relu_sum(int w, const float *restrict a, const float *restrict x,
                     const float *restrict bias, float *restrict o) {
    const int wb = w - w % VB;
    for (int c0 = 0; c0 < wb; c0 += VB)
        for (int c = 0; c < VB; c++) {
            const float v = a[c0 + c] + x[c0 + c] + bias[c0 + c];
            o[c0 + c] += v > 0 ? v : 0.0f;
        }
    for (int c = wb; c < w; c++) {
        const float v = a[c] + x[c] + bias[c];
        o[c] += v > 0 ? v : 0.0f;
    }
}

static void relu_back(int w, const float *restrict a, const float *restrict x,
                      const float *restrict bias, const float *restrict dg, float *restrict da,
                      float *restrict dx) {
    const int wb = w - w % VB;
    /* dg is loaded unconditionally, so that the select vectorises */
    for (int c0 = 0; c0 < wb; c0 += VB)
        for (int c = 0; c < VB; c++) {
            const float v = a[c0 + c] + x[c0 + c] + bias[c0 + c], d = dg[c0 + c];
            const float g = v > 0 ? d : 0.0f;
            da[c0 + c] += g;
            dx[c0 + c] += g;
        }
    for (int c = wb; c < w; c++) {
        const float v = a[c] + x[c] + bias[c], d = dg[c];
        const float g = v > 0 ? d : 0.0f;
        da[c] += g;
        dx[c] += g;
    }
}

const struct dp_kn_table KN_TABLE = {
    .level = KN_LEVEL,
    .gemm = gemm_pick,
    .gemm_own = gemm,
    .spmm = spmm,
    .bias_act = bias_act,
    .bias_silu = bias_silu,
    .act_back = act_back,
    .colsum = colsum,
    .gru = gru,
    .gru_back = gru_back,
    .lstm = lstm,
    .lstm_back = lstm_back,
    .dot_rows = dot_rows,
    .sum_rows = sum_rows,
    .transpose = transpose,
    .softmax = softmax,
    .exp_all = exp_all,
    .gat_row = gat_row,
    .gat_scores = gat_scores,
    .gat_back_row = gat_back_row,
    .relu_sum = relu_sum,
    .relu_back = relu_back,
};

#undef VB

#ifdef KN_TARGET
#if defined(__clang__)
KN_PRAGMA(clang attribute pop)
#else
KN_PRAGMA(GCC pop_options)
#endif
#endif
