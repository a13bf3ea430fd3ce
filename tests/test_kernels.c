/* test_kernels.c: the inspector network's kernels (gnn/kernels.h) at every level this CPU has
 * (portable C, AVX2, AVX-512): the dense product in all four transpose cases over shapes with
 * tails in every dimension, strides and betas, against a float64 reference; the sparse
 * aggregation, the GRU and LSTM cells and their backward passes, softmax, the transpose and the
 * row reductions against scalar references; every other kernel against the portable level. The
 * product again on OpenBLAS and on auto (the backend of each shape from its table), the same
 * cases and tolerance. Also the level and backend selection (dp/compute.h, $DRIPLE_KERNELS),
 * auto's shape classes and its table file, and the thread pool (gnn/pool.h): regions, barriers,
 * shares, and a nested region running alone. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dp/clock.h"
#include "dp/compute.h"
#include "gnn/kernels.h"
#include "gnn/pool.h"
#include "test.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float frand(void) { /* uniform in [-1, 1) */
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 40) / (double)(1ull << 23) - 1.0);
}
static float *rand_vec(size_t n) {
    float *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = frand();
    return v;
}

/* test_rel_err of two float vectors */
static double rel_f(const float *a, const float *b, size_t n) {
    double *bd = malloc((n ? n : 1) * sizeof *bd);
    for (size_t i = 0; i < n; i++) bd[i] = b[i];
    const double e = test_rel_err(a, bd, n);
    free(bd);
    return e;
}

/* ---- the dense product ---- */

static double worst_gemm;
static bool via_own; /* K->gemm_own (this level's own product), else K->gemm (the backend's) */

static void one_gemm(const struct dp_kn_table *K, bool ta, bool tb, int m, int n, int k,
                     float beta) {
    const int pad = 3; /* leading dimensions larger than the rows, to catch stride mistakes */
    const int lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
    float *a = rand_vec((size_t)(ta ? k : m) * lda), *b = rand_vec((size_t)(tb ? n : k) * ldb);
    float *c = rand_vec((size_t)m * ldc);
    double *ref = malloc(((size_t)m * ldc + 1) * sizeof *ref);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < ldc; j++) {
            double s = j < n ? beta * (double)c[(size_t)i * ldc + j] : c[(size_t)i * ldc + j];
            for (int p = 0; j < n && p < k; p++)
                s += (double)(ta ? a[(size_t)p * lda + i] : a[(size_t)i * lda + p]) *
                     (tb ? b[(size_t)j * ldb + p] : b[(size_t)p * ldb + j]);
            ref[(size_t)i * ldc + j] = s; /* the padding columns must stay as they were */
        }
    (via_own ? K->gemm_own : K->gemm)(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
    const double e = test_rel_err(c, ref, (size_t)m * ldc) / (k > 1 ? sqrt((double)k) : 1);
    if (!(e < 1e-6))
        fprintf(stderr, "%s gemm (%s) ta %d tb %d m %d n %d k %d beta %g: rel err %.3g\n",
                dp_kn_level_name(K->level), via_own ? "own" : dp_kernels_backend(), ta, tb, m, n,
                k, beta, e);
    CHECK(e < 1e-6);
    if (e > worst_gemm) worst_gemm = e;
    free(a);
    free(b);
    free(c);
    free(ref);
}

static void test_gemm(const struct dp_kn_table *K, bool own) {
    via_own = own;
    /* rows around the 6-row block, columns around the 8, 16 and 64-column vectors and blocks,
     * depths around the 128-deep blocks; the published model's shapes */
    static const int ms[] = {1, 5, 6, 7, 13, 50, 100};
    static const int ns[] = {1, 7, 12, 16, 17, 63, 64, 65, 129, 192, 256};
    static const int ks[] = {0, 1, 3, 64, 129};
    worst_gemm = 0;
    for (int t = 0; t < 4; t++)
        for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++)
            for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++)
                for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
                    const float beta = (mi + ni + ki) % 3 == 0 ? 0.0f : (ki % 2 ? 1.0f : 0.5f);
                    one_gemm(K, t & 1, t & 2, ms[mi], ns[ni], ks[ki], beta);
                }
    /* beta 0 never reads C: NaN there must not leak */
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {NAN, NAN, NAN, NAN};
    (own ? K->gemm_own : K->gemm)(false, false, 2, 2, 2, a, 2, b, 2, 0.0f, c, 2);
    CHECK(c[0] == 1 && c[1] == 2 && c[2] == 3 && c[3] == 4);
    printf("  %s: gemm (%s), %zu cases (4 transposes): worst rel err / sqrt(k) %.2g\n",
           dp_kn_level_name(K->level), own ? "own" : dp_kernels_backend(),
           4 * sizeof ms / sizeof *ms * sizeof ns / sizeof *ns * sizeof ks / sizeof *ks,
           worst_gemm);
}

/* ---- the sparse aggregation ---- */

static void test_spmm(const struct dp_kn_table *K) {
    /* 7 nodes: a star around 0 plus 3-4, 5-6; width 37 (two blocks and a tail), strides */
    static const int edges[][2] = {{0, 1}, {0, 2}, {0, 3}, {3, 4}, {5, 6}, {0, 6}};
    enum { N = 7, W = 37, LDI = 41, LDO = 39 };
    int row_ptr[N + 1] = {0}, col[24], fill[N];
    for (size_t e = 0; e < sizeof edges / sizeof *edges; e++) {
        row_ptr[edges[e][0] + 1]++;
        row_ptr[edges[e][1] + 1]++;
    }
    for (int i = 0; i < N; i++) row_ptr[i + 1] += row_ptr[i];
    memcpy(fill, row_ptr, sizeof fill);
    for (size_t e = 0; e < sizeof edges / sizeof *edges; e++) {
        col[fill[edges[e][0]]++] = edges[e][1];
        col[fill[edges[e][1]]++] = edges[e][0];
    }
    float *val = rand_vec(24), *self = rand_vec(N), *in = rand_vec((size_t)N * LDI);
    float out[N * LDO];
    double ref[N * LDO];
    for (int use_val = 0; use_val < 2; use_val++) {
        for (int i = 0; i < N; i++)
            for (int c = 0; c < LDO; c++) {
                double s = c < W ? (use_val ? self[i] : 1.5) * (double)in[i * LDI + c] : -7;
                for (int p = row_ptr[i]; c < W && p < row_ptr[i + 1]; p++)
                    s += (use_val ? val[p] : 1.0) * in[col[p] * LDI + c];
                ref[i * LDO + c] = s;
            }
        for (int i = 0; i < N * LDO; i++) out[i] = -7;
        /* two calls over row ranges, as two threads make them */
        K->spmm(0, 3, row_ptr, col, use_val ? val : NULL, use_val ? self : NULL, 1.5f, W, in, LDI,
                out, LDO);
        K->spmm(3, N, row_ptr, col, use_val ? val : NULL, use_val ? self : NULL, 1.5f, W, in, LDI,
                out, LDO);
        CHECK(test_rel_err(out, ref, N * LDO) < 1e-6);
    }
    free(val);
    free(self);
    free(in);
}

/* ---- cells ---- */

static double sig(double x) { return 1.0 / (1.0 + exp(-x)); }

static void test_gru(const struct dp_kn_table *K, int H) {
    enum { R = 5 };
    const int ldgi = 4 * H + 1, ldgh = 3 * H + 2;
    float *gi = rand_vec((size_t)R * ldgi), *gh = rand_vec((size_t)R * ldgh);
    float *bih = rand_vec(3 * (size_t)H), *bhh = rand_vec(3 * (size_t)H);
    float *y = rand_vec((size_t)R * H), *xo = calloc((size_t)R * H, sizeof *xo);
    float *xo2 = calloc((size_t)R * H, sizeof *xo2), *sv = calloc((size_t)4 * R * H, sizeof *sv);
    double *ref = malloc((size_t)5 * R * H * sizeof *ref);
    const size_t RH = (size_t)R * H;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < H; j++) {
            const float *a = gi + (size_t)i * ldgi, *h = gh + (size_t)i * ldgh;
            const double r = sig((double)a[j] + bih[j] + h[j] + bhh[j]);
            const double z = sig((double)a[H + j] + bih[H + j] + h[H + j] + bhh[H + j]);
            const double g = (double)h[2 * H + j] + bhh[2 * H + j];
            const double n = tanh((double)a[2 * H + j] + bih[2 * H + j] + r * g);
            const size_t q = (size_t)i * H + j;
            ref[q] = (1 - z) * n + z * y[q];
            ref[RH + q] = r;
            ref[2 * RH + q] = z;
            ref[3 * RH + q] = n;
            ref[4 * RH + q] = g;
        }
    K->gru(R, H, gi, ldgi, gh, ldgh, bih, bhh, y, xo, sv, sv + RH, sv + 2 * RH, sv + 3 * RH);
    K->gru(R, H, gi, ldgi, gh, ldgh, bih, bhh, y, xo2, NULL, NULL, NULL, NULL);
    CHECK(test_rel_err(xo, ref, RH) < 1e-5);
    CHECK(test_rel_err(sv, ref + RH, 4 * RH) < 1e-5);
    CHECK(!memcmp(xo, xo2, RH * sizeof *xo)); /* saving changes nothing */
    /* backward: d/dy, d/dgates of sum(ds . x') against the chain rule in double */
    float *ds = rand_vec(RH), *dy = calloc(RH, sizeof *dy);
    float *dgi = calloc((size_t)R * ldgi, sizeof *dgi), *dgh = calloc((size_t)R * ldgh, sizeof *dgh);
    K->gru_back(R, H, ds, y, sv, sv + RH, sv + 2 * RH, sv + 3 * RH, dy, dgi, ldgi, dgh, ldgh);
    double e = 0;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < H; j++) {
            const size_t q = (size_t)i * H + j;
            const double r = ref[RH + q], z = ref[2 * RH + q], n = ref[3 * RH + q];
            const double g = ref[4 * RH + q], d = ds[q];
            const double dn = d * (1 - z) * (1 - n * n), dr = dn * g * r * (1 - r);
            const double dz = d * (y[q] - n) * z * (1 - z);
            const float *a = dgi + (size_t)i * ldgi, *h = dgh + (size_t)i * ldgh;
            const double got[7] = {dy[q], a[j], a[H + j], a[2 * H + j], h[j], h[H + j], h[2 * H + j]};
            const double want[7] = {d * z, dr, dz, dn, dr, dz, dn * r};
            for (int k = 0; k < 7; k++) e = fmax(e, fabs(got[k] - want[k]));
        }
    CHECK(e < 1e-5);
    free(gi), free(gh), free(bih), free(bhh), free(y), free(xo), free(xo2), free(sv), free(ref);
    free(ds), free(dy), free(dgi), free(dgh);
}

static void test_lstm(const struct dp_kn_table *K, int H) {
    float *g = rand_vec(4 * (size_t)H), *cprev = rand_vec((size_t)H);
    float *act = calloc(4 * (size_t)H, sizeof *act), *c = calloc((size_t)H, sizeof *c);
    float *th = calloc((size_t)H, sizeof *th), *h = calloc((size_t)H, sizeof *h);
    for (int first = 0; first < 2; first++) {
        const float *cp = first ? NULL : cprev;
        K->lstm(H, g, cp, act, c, th, h);
        double e = 0;
        for (int j = 0; j < H; j++) {
            const double i = sig(g[j]), f = sig(g[H + j]), gg = tanh(g[2 * H + j]);
            const double o = sig(g[3 * H + j]), cv = f * (cp ? cp[j] : 0) + i * gg;
            e = fmax(e, fabs(act[j] - i) + fabs(act[H + j] - f) + fabs(act[2 * H + j] - gg) +
                            fabs(act[3 * H + j] - o) + fabs(c[j] - cv) + fabs(th[j] - tanh(cv)) +
                            fabs(h[j] - o * tanh(cv)));
        }
        CHECK(e < 1e-5);
        /* backward against central differences of sum(wh . h + wc . c) in the pre-activations */
        float *wh = rand_vec((size_t)H), *wc = rand_vec((size_t)H);
        float *dc = malloc((size_t)H * sizeof *dc), *dg = calloc(4 * (size_t)H, sizeof *dg);
        memcpy(dc, wc, (size_t)H * sizeof *dc);
        K->lstm_back(H, act, th, cp, wh, dc, dg);
        double ed = 0, edc = 0;
        for (int q = 0; q < 4 * H; q++) {
            const int j = q % H;
            double fpm[2];
            for (int s = 0; s < 2; s++) {
                double x[4];
                for (int k = 0; k < 4; k++) x[k] = g[k * H + j] + (k * H + j == q ? (s ? -1e-4 : 1e-4) : 0);
                const double cv = sig(x[1]) * (cp ? cp[j] : 0) + sig(x[0]) * tanh(x[2]);
                fpm[s] = wh[j] * sig(x[3]) * tanh(cv) + wc[j] * cv;
            }
            ed = fmax(ed, fabs(dg[q] - (fpm[0] - fpm[1]) / 2e-4));
        }
        for (int j = 0; j < H; j++) { /* the cell gradient passed back: d/dcprev = dct f */
            const double cv = sig(g[H + j]) * (cp ? cp[j] : 0) + sig(g[j]) * tanh(g[2 * H + j]);
            const double dct = wc[j] + wh[j] * sig(g[3 * H + j]) * (1 - tanh(cv) * tanh(cv));
            edc = fmax(edc, fabs(dc[j] - dct * sig(g[H + j])));
        }
        CHECK(ed < 1e-3);
        CHECK(edc < 1e-5);
        free(wh), free(wc), free(dc), free(dg);
    }
    free(g), free(cprev), free(act), free(c), free(th), free(h);
}

/* dot_rows and sum_rows over n rows of w: four rows and four-vector groups, then the rest. */
static void rows_case(const struct dp_kn_table *K, int n, int w, float beta) {
    const int lda = w + 3;
    float *a = rand_vec((size_t)n * lda), *x = rand_vec((size_t)w), *xn = rand_vec((size_t)n);
    float *y = rand_vec((size_t)w), *yn = malloc((size_t)n * sizeof *yn);
    double *ref = malloc((size_t)w * sizeof *ref), *refn = malloc((size_t)n * sizeof *refn);
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int c = 0; c < w; c++) s += (double)a[i * lda + c] * x[c];
        refn[i] = s;
    }
    K->dot_rows(n, w, a, lda, x, yn);
    CHECK(test_rel_err(yn, refn, (size_t)n) < 1e-6);
    for (int c = 0; c < w; c++) {
        double s = beta * (double)y[c];
        for (int i = 0; i < n; i++) s += (double)xn[i] * a[i * lda + c];
        ref[c] = s;
    }
    K->sum_rows(n, w, a, lda, xn, beta, y);
    CHECK(test_rel_err(y, ref, (size_t)w) < 1e-6);
    free(a), free(x), free(xn), free(y), free(yn), free(ref), free(refn);
}

static void test_rows(const struct dp_kn_table *K) {
    enum { N = 11, W = 37, LDA = 40 };
    rows_case(K, N, W, 0.5f);
    rows_case(K, 100, 64, 0.0f); /* Set2Set's shapes */
    rows_case(K, 7, 101, 1.0f);
    float *a = rand_vec((size_t)N * LDA), *x = rand_vec(W), *xn = rand_vec(N);
    float e[N];
    double sum = 0, se[N];
    for (int i = 0; i < N; i++) sum += exp(e[i] = 20 * xn[i]);
    for (int i = 0; i < N; i++) se[i] = exp(e[i]) / sum;
    K->softmax(N, e);
    CHECK(test_rel_err(e, se, N) < 1e-6);
    /* transpose: 37 x 11 (tiles and tails) with strides */
    float *tr = malloc((size_t)W * 13 * sizeof *tr);
    for (int i = 0; i < W * 13; i++) tr[i] = -5;
    K->transpose(N, W, a, LDA, tr, 13);
    int bad = 0;
    for (int j = 0; j < W; j++)
        for (int i = 0; i < 13; i++)
            bad += tr[j * 13 + i] != (i < N ? a[i * LDA + j] : -5.0f);
    CHECK(bad == 0);
    free(tr);
    float one = 3; /* one value: weight 1 */
    K->softmax(1, &one);
    CHECK(one == 1);
    free(a), free(x), free(xn);
}

/* Kernels without a reference of their own here (the model tests cover their formulas): every
 * level against the portable one. */
static void test_vs_portable(const struct dp_kn_table *K) {
    const struct dp_kn_table *P = dp_kn_table_of(DP_KN_PORTABLE);
    enum { R = 6, N = 53, LD = 57, HEADS = 3, F = 18, CNT = 4 };
    float *y = rand_vec((size_t)R * LD), *y2 = malloc((size_t)R * LD * sizeof *y2);
    float *b = rand_vec(N);
    memcpy(y2, y, (size_t)R * LD * sizeof *y);
    K->bias_act(R, N, b, y, LD, 0.01f);
    P->bias_act(R, N, b, y2, LD, 0.01f);
    CHECK(rel_f(y, y2, (size_t)R * LD) < 1e-6);
    float *dy = rand_vec((size_t)R * LD), *dy2 = malloc((size_t)R * LD * sizeof *dy2);
    memcpy(dy2, dy, (size_t)R * LD * sizeof *dy);
    K->act_back((size_t)R * LD, y, dy, 0.2f);
    P->act_back((size_t)R * LD, y, dy2, 0.2f);
    CHECK(rel_f(dy, dy2, (size_t)R * LD) < 1e-6);
    /* SiLU after a bias, against double precision; z is a + b itself */
    float *sa = rand_vec((size_t)R * N), *sz = malloc((size_t)R * N * sizeof *sz);
    float *sv = malloc((size_t)R * N * sizeof *sv);
    double *sref = malloc((size_t)R * N * sizeof *sref);
    for (int i = 0; i < R * N; i++) {
        sa[i] *= 30; /* both tails of the sigmoid */
        sv[i] = sa[i] + b[i % N];
        sref[i] = (double)sv[i] / (1 + exp(-(double)sv[i]));
    }
    K->bias_silu(R, N, b, sa, sz);
    CHECK(test_rel_err(sa, sref, (size_t)R * N) < 1e-5 && !memcmp(sz, sv, (size_t)R * N * sizeof *sz));
    free(sa), free(sz), free(sv), free(sref);
    float cs[N] = {0}, cs2[N] = {0};
    K->colsum(R, N, dy, LD, cs);
    P->colsum(R, N, dy, LD, cs2);
    CHECK(rel_f(cs, cs2, N) < 1e-6);
    float ex[N], ex2[N];
    for (int i = 0; i < N; i++) ex[i] = ex2[i] = 100 * b[i]; /* past the clamps too */
    K->exp_all(N, ex);
    P->exp_all(N, ex2);
    double ee = 0;
    for (int i = 0; i < N; i++) ee = fmax(ee, fabs(ex[i] - ex2[i]) / fabs(ex2[i]));
    CHECK(ee < 1e-6);
    /* GAT: node 2 of a 5-node graph with 3 neighbours, 3 heads of 18 (a block and a tail) */
    const int col[CNT - 1] = {0, 4, 1};
    float *wh = rand_vec((size_t)5 * HEADS * F + 3), *att = rand_vec((size_t)HEADS * CNT);
    float *as = rand_vec((size_t)HEADS * F), *ad = rand_vec((size_t)HEADS * F);
    float gy[HEADS * F] = {0}, gy2[HEADS * F] = {0}, s[HEADS], d[HEADS], s2[HEADS], d2[HEADS];
    K->gat_row(HEADS, F, CNT, att, col, 2, wh, HEADS * F, gy);
    P->gat_row(HEADS, F, CNT, att, col, 2, wh, HEADS * F, gy2);
    CHECK(rel_f(gy, gy2, HEADS * F) < 1e-6);
    K->gat_scores(HEADS, F, wh, as, ad, s, d);
    P->gat_scores(HEADS, F, wh, as, ad, s2, d2);
    CHECK(rel_f(s, s2, HEADS) < 1e-6 && rel_f(d, d2, HEADS) < 1e-6);
    float *dwh = calloc((size_t)5 * HEADS * F, sizeof *dwh), *dwh2 = calloc((size_t)5 * HEADS * F, sizeof *dwh2);
    float da[HEADS * CNT], da2[HEADS * CNT];
    K->gat_back_row(HEADS, F, CNT, att, col, 2, wh, HEADS * F, gy, dwh, HEADS * F, da);
    P->gat_back_row(HEADS, F, CNT, att, col, 2, wh, HEADS * F, gy, dwh2, HEADS * F, da2);
    CHECK(rel_f(dwh, dwh2, (size_t)5 * HEADS * F) < 1e-6 && rel_f(da, da2, HEADS * CNT) < 1e-6);
    /* MPNN messages */
    float o[N] = {0}, o2[N] = {0}, g1[N] = {0}, g2[N] = {0}, h1[N] = {0}, h2[N] = {0};
    K->relu_sum(N, y, dy, b, o);
    P->relu_sum(N, y, dy, b, o2);
    CHECK(rel_f(o, o2, N) < 1e-6);
    K->relu_back(N, y, dy, b, ex2, g1, h1);
    P->relu_back(N, y, dy, b, ex2, g2, h2);
    CHECK(rel_f(g1, g2, N) < 1e-6 && rel_f(h1, h2, N) < 1e-6);
    free(y), free(y2), free(b), free(dy), free(dy2), free(wh), free(att), free(as), free(ad);
    free(dwh), free(dwh2);
}

/* ---- level selection ---- */

static void test_levels(void) {
    CHECK(dp_kn_table_of(DP_KN_PORTABLE) != NULL);
    CHECK(dp_kn_table_of(DP_KN_LEVEL_COUNT) == NULL);
    CHECK(!strcmp(dp_kn_level_name(DP_KN_AVX2), "avx2"));
    CHECK(!strcmp(dp_kn_level_name(DP_KN_LEVEL_COUNT), "?"));
    CHECK(dp_kernels_set("portable"));
    CHECK(!strcmp(dp_kernels(), "portable") && dp_kn()->level == DP_KN_PORTABLE);
    const char *before = dp_kernels();
    CHECK(!dp_kernels_set("sse9")); /* unknown: nothing changes */
    CHECK(!strcmp(dp_kernels(), before));
    CHECK(dp_kernels_set("avx512")); /* lowered to the best this CPU has */
    const enum dp_kn_level best = dp_kn()->level;
    CHECK(dp_kn_table_of(best) != NULL && (best == DP_KN_AVX512 || !dp_kn_table_of(DP_KN_AVX512)));
    CHECK(dp_kernels_set(NULL) && dp_kn()->level == best);
    printf("  best level on this CPU: %s\n", dp_kn_level_name(best));
}

/* ---- the product backends and auto's table ---- */

static void test_backends(void) {
    const bool blas = dp_kernels_openblas() != NULL;
    CHECK(dp_kernels_set("own") && !strcmp(dp_kernels_backend(), "own"));
    CHECK(dp_kn_pick(false, false, 400, 400, 400) == DP_KN_OWN);
    CHECK(dp_kernels_set("openblas"));
    CHECK(!strcmp(dp_kernels_backend(), blas ? "openblas" : "own"));
    CHECK(dp_kn_pick(true, true, 1, 1, 1) == (blas ? DP_KN_OPENBLAS : DP_KN_OWN));
    /* without OpenBLAS the note says so, with it there is none */
    CHECK(blas == (dp_kernels_note() == NULL));
    CHECK(dp_kernels_set("portable") && !strcmp(dp_kernels(), "portable") &&
          !strcmp(dp_kernels_backend(), "own"));
    const char *before = dp_kernels_backend();
    CHECK(!dp_kernels_set("blas") && !dp_kernels_set("")); /* unknown: nothing changes */
    CHECK(!strcmp(dp_kernels_backend(), before) && !strcmp(dp_kernels(), "portable"));
    CHECK(dp_kernels_set("auto") && !strcmp(dp_kernels_backend(), blas ? "auto" : "own"));
    /* classes: <= 4, <= 16, <= 64, <= 256, more */
    static const int dims[] = {1, 4, 5, 16, 17, 64, 65, 256, 257, 100000};
    static const int classes[] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4};
    for (int i = 0; i < 10; i++) CHECK(dp_kn_class(dims[i]) == classes[i]);
    for (int c = 0; c < DP_KN_CLASSES; c++) CHECK(dp_kn_class(dp_kn_class_dim(c)) == c);
    CHECK(dp_kn_cell(false, false, 1, 1, 1) == 0);
    CHECK(dp_kn_cell(true, false, 5, 17, 257) == ((2 * 5 + 1) * 5 + 2) * 5 + 4);
    CHECK(dp_kn_cell(true, true, 9999, 9999, 9999) == DP_KN_CELLS - 1);
    /* auto follows its table cell by cell */
    const char *cells = dp_kn_cells();
    CHECK(strlen(cells) == DP_KN_CELLS && strspn(cells, "ob") == DP_KN_CELLS);
    int agree = 0;
    for (int cell = 0; cell < DP_KN_CELLS; cell++) {
        const int kc = cell % 5, nc = cell / 5 % 5, mc = cell / 25 % 5, t = cell / 125;
        const enum dp_kn_backend want = blas && cells[cell] == 'b' ? DP_KN_OPENBLAS : DP_KN_OWN;
        agree += dp_kn_pick(t >= 2, t % 2, dp_kn_class_dim(mc), dp_kn_class_dim(nc),
                            dp_kn_class_dim(kc)) == want;
    }
    CHECK(agree == DP_KN_CELLS);
    printf("  backends: OpenBLAS %s; auto's table: %s\n", blas ? dp_kernels_openblas() : "absent",
           dp_kernels_table());
}

/* A table file (DRIPLE_KERNELS_TABLE) with the given cpu and cells; returns its path. */
static const char *table_file(const char *name, const char *cpu, const char *cell_nn) {
    static char text[2048];
    char row[126];
    memset(row, 'b', 125);
    row[125] = '\0';
    snprintf(text, sizeof text, "{\"format\": \"driple-kernels/1\", \"cpu\": \"%s\", \"level\": "
             "\"%s\", \"openblas\": \"%s\", \"cells\": {\"nn\": \"%s\", \"nt\": \"%s\", "
             "\"tn\": \"%s\", \"tt\": \"%s\"}}", cpu, dp_kernels(), dp_kernels_openblas(),
             cell_nn ? cell_nn : row, row, row, row);
    const char *p = write_tmp(name, text);
    setenv("DRIPLE_KERNELS_TABLE", p, 1);
    return p;
}

static void test_table_file(void) {
    if (!dp_kernels_openblas()) return; /* a table is only read beside OpenBLAS */
    CHECK(dp_kernels_set("auto"));
    char path[1100];
    setenv("DRIPLE_KERNELS_TABLE", "/x/kernels.json", 1);
    CHECK(dp_kernels_table_path(path, sizeof path) && !strcmp(path, "/x/kernels.json"));
    unsetenv("DRIPLE_KERNELS_TABLE");
    setenv("XDG_DATA_HOME", "/data", 1);
    CHECK(dp_kernels_table_path(path, sizeof path) &&
          !strcmp(path, "/data/driple/kernels.json"));
    setenv("XDG_DATA_HOME", "relative", 1); /* invalid by the XDG spec: ignored */
    setenv("HOME", "/home/u", 1);
    CHECK(dp_kernels_table_path(path, sizeof path) &&
          !strcmp(path, "/home/u/.local/share/driple/kernels.json"));
    struct dp_error err = {0};
    /* malformed: refused, naming the file and the member */
    const char *p = table_file("k_bad.json", dp_kernels_cpu(), "ob");
    CHECK(dp_kn_table_load(&err) == DP_ERR_INVALID);
    CHECK_CONTAINS(err.msg, p);
    CHECK_CONTAINS(err.msg, "$.cells.nn: expected 125 characters");
    table_file("k_syntax.json", dp_kernels_cpu(), "\" oops");
    CHECK(dp_kn_table_load(&err) == DP_ERR_PARSE);
    /* measured on another CPU: set aside, said so */
    p = table_file("k_other.json", "Some Other CPU", NULL);
    CHECK(dp_kn_table_load(&err) == DP_OK);
    CHECK_CONTAINS(dp_kernels_table(), "measured on Some Other CPU");
    CHECK(dp_kn_pick(false, false, 4, 4, 4) == (dp_kn_cells()[0] == 'b' ? DP_KN_OPENBLAS
                                                                        : DP_KN_OWN));
    /* this CPU's: every cell 'b', so auto sends every shape to OpenBLAS */
    p = table_file("k_here.json", dp_kernels_cpu(), NULL);
    CHECK(dp_kn_table_load(&err) == DP_OK);
    dp_kn_cells_changed();
    CHECK_CONTAINS(dp_kernels_table(), "measured on this CPU");
    CHECK(dp_kn_pick(false, true, 12, 256, 64) == DP_KN_OPENBLAS);
    CHECK(dp_kn_pick(true, false, 1000, 1000, 1000) == DP_KN_OPENBLAS);
    /* the product under that table: still right */
    test_gemm(dp_kn(), false);
    unsetenv("DRIPLE_KERNELS_TABLE");
}

/* ---- the thread pool ---- */

/* Three phases over 64 items: each item written once per phase, each phase seeing every item of
 * the one before done; the threads that took part counted. */
struct pool_job {
    atomic_int items[64], bad, took[8];
    int        nt_seen;
};

static void pool_fn(void *ctx, int tid, int nt, struct dp_pool_region *r) {
    struct pool_job *j = ctx;
    struct dp_pool_cursor cur;
    dp_pool_cursor_init(&cur, tid, nt);
    for (int ph = 0; ph < 3; ph++) {
        dp_pool_phase(r, &cur, 64);
        for (int it; (it = dp_pool_next(r, &cur)) >= 0;) {
            if (atomic_fetch_add(&j->items[it], 1) != ph) atomic_fetch_add(&j->bad, 1);
            atomic_fetch_add(&j->took[tid], 1);
            const double t0 = dp_clock_ms(); /* ~20 us: long enough for a worker to join */
            while (dp_clock_ms() - t0 < 0.02) continue;
        }
        dp_pool_phase_wait(r, &cur);
        for (int i = 0; i < 64; i++) /* the whole phase is done (a late thread may see more) */
            if (atomic_load(&j->items[i]) < ph + 1) atomic_fetch_add(&j->bad, 1);
    }
    if (tid == 0) j->nt_seen = nt;
}

static void nested_fn(void *ctx, int tid, int nt, struct dp_pool_region *r) {
    struct pool_job *j = ctx;
    (void)r;
    if (tid == 0) {
        static struct pool_job inner; /* zeroed: static storage */
        dp_pool_run(4, pool_fn, &inner); /* the pool is busy: runs on this thread alone */
        j->nt_seen = inner.nt_seen * 100 + nt;
        if (atomic_load(&inner.bad) || atomic_load(&inner.took[0]) != 3 * 64)
            atomic_fetch_add(&j->bad, 1);
    }
}

static void test_pool(void) {
    static struct pool_job j; /* atomics zeroed by static storage, then by hand */
    int joined = 0;
    for (int want = 1; want <= 4; want++)
        for (int rep = 0; rep < 20; rep++) { /* back to back, as predictions come */
            for (int i = 0; i < 64; i++) atomic_store(&j.items[i], 0);
            for (int t = 0; t < 8; t++) atomic_store(&j.took[t], 0);
            atomic_store(&j.bad, 0);
            dp_threads_set(3);
            dp_pool_run(want, pool_fn, &j);
            const int nt = want < 3 ? want : 3;
            int took = 0;
            for (int t = 0; t < 8; t++) took += atomic_load(&j.took[t]);
            int helped = 0;
            for (int t = 1; t < 8; t++) helped |= atomic_load(&j.took[t]) > 0;
            joined += helped;
            CHECK(j.nt_seen == nt && took == 3 * 64 && atomic_load(&j.bad) == 0);
        }
    printf("  pool: workers took items in %d of 60 regions that could have them\n", joined);
    static struct pool_job n;
    dp_pool_run(2, nested_fn, &n);
    CHECK(n.nt_seen == 102 && atomic_load(&n.bad) == 0);
    CHECK(dp_threads_set(0) == 3); /* < 1 changes nothing */
    CHECK(dp_threads_set(1000) == 64);
}

int main(void) {
    struct dp_error err = {0};
    CHECK(dp_kernels_init(&err) == DP_OK); /* run with DRIPLE_KERNELS unset or valid */
    test_levels();
    for (int l = 0; l < DP_KN_LEVEL_COUNT; l++) {
        const struct dp_kn_table *K = dp_kn_table_of((enum dp_kn_level)l);
        if (!K) {
            printf("  %s: not on this CPU\n", dp_kn_level_name((enum dp_kn_level)l));
            continue;
        }
        CHECK(K->level == (enum dp_kn_level)l);
        test_gemm(K, true);
        test_spmm(K);
        test_gru(K, 64);
        test_gru(K, 20); /* a block and a tail */
        test_lstm(K, 64);
        test_lstm(K, 7);
        test_rows(K);
        test_vs_portable(K);
    }
    /* the product through the backends, at the best level: OpenBLAS for every shape, then auto */
    test_backends();
    CHECK(dp_kernels_set("openblas"));
    test_gemm(dp_kn(), false);
    CHECK(dp_kernels_set("auto"));
    test_gemm(dp_kn(), false);
    test_table_file();
    test_pool();
    TEST_MAIN_END();
}
