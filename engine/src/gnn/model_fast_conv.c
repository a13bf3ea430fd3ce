/* model_fast_conv.c: the GAT and MPNN graph layers of the fast engine (model_fast.c), forward
 * and hand-written backward: they continue from the layer's input transforms (one GEMM over the
 * stacked nodes, P) over the batch's block-diagonal CSR adjacency, visiting neighbours in the
 * autograd tape's order (tests/tape/), so that both paths agree to float rounding.
 * MPNN's message pre-transform of [x_i | x_j] is split into x_i and x_j halves, computed once
 * per node instead of once per edge. */
#include <math.h>
#include <string.h>

#include "model_impl.h"
#include "kernels.h"

#define GAT_SLOPE 0.2f /* LeakyReLU of the attention scores (PyG's GATConv) */

int dp_fx_pack_width(const struct dp_model *m) {
    const int H = m->arch.hidden, gi = m->arch.gru ? 3 * H : 0;
    return (m->arch.layer == DP_LAYER_MPNN ? 3 * H : H) + gi;
}

/* ---- GAT ---- */

/* e[k] = exp(e[k]) for n entries, vectorised. */
DP_SIMD
static void exp_all(size_t n, float *restrict e) {
    const size_t nb = n - n % DP_VBLOCK;
    for (size_t k0 = 0; k0 < nb; k0 += DP_VBLOCK)
        for (int k = 0; k < DP_VBLOCK; k++) e[k0 + k] = dp_expf(e[k0 + k]);
    for (size_t k = nb; k < n; k++) e[k] = dp_expf(e[k]);
}

/* y_i = sum over node i's entries k (node j) of a_hk wh_j, each head h over its F columns; a is
 * heads rows of cnt weights; in entry order, as the tape sums. */
DP_SIMD
static void gat_row(int heads, int F, int cnt, const float *restrict a, const int *restrict col,
                    int i, const float *restrict wh, int ldw, float *restrict y) {
    const int fb = F - F % DP_VBLOCK;
    for (int k = 0; k < cnt; k++) {
        const float *w = wh + (size_t)(k == 0 ? i : col[k - 1]) * ldw;
        for (int h = 0; h < heads; h++) {
            const float ak = a[(size_t)h * cnt + k];
            const float *wf = w + h * F;
            float *yf = y + h * F;
            for (int f0 = 0; f0 < fb; f0 += DP_VBLOCK)
                for (int f = 0; f < DP_VBLOCK; f++) yf[f0 + f] += ak * wf[f0 + f];
            for (int f = fb; f < F; f++) yf[f] += ak * wf[f];
        }
    }
}

/* s_jh = wh_jh . as_h and d_jh = wh_jh . ad_h for one node j, every head (F columns each). */
DP_SIMD
static void gat_scores(int heads, int F, const float *restrict w, const float *restrict as,
                       const float *restrict ad, float *restrict s, float *restrict d) {
    const int fb = F - F % DP_VBLOCK;
    for (int h = 0; h < heads; h++) {
        const float *wf = w + h * F, *af = as + h * F, *df = ad + h * F;
        float px[DP_VBLOCK] = {0}, pz[DP_VBLOCK] = {0}, x = 0, z = 0;
        for (int f0 = 0; f0 < fb; f0 += DP_VBLOCK)
            for (int f = 0; f < DP_VBLOCK; f++) {
                px[f] += wf[f0 + f] * af[f0 + f];
                pz[f] += wf[f0 + f] * df[f0 + f];
            }
        for (int f = 0; f < DP_VBLOCK; f++) {
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

/* Backward of gat_row for node i: d wh_j += a_hk dy_h (each entry k, node j, head h) and
 * da[h cnt + k] = dy_h . wh_jh. */
DP_SIMD
static void gat_back_row(int heads, int F, int cnt, const float *restrict a,
                         const int *restrict col, int i, const float *restrict wh, int ldw,
                         const float *restrict dy, float *restrict dwh, int ldd,
                         float *restrict da) {
    const int fb = F - F % DP_VBLOCK;
    for (int k = 0; k < cnt; k++) {
        const int j = k == 0 ? i : col[k - 1];
        const float *w = wh + (size_t)j * ldw;
        float *dw = dwh + (size_t)j * ldd;
        for (int h = 0; h < heads; h++) {
            const float ak = a[(size_t)h * cnt + k], *wf = w + h * F, *df = dy + h * F;
            float *dwf = dw + h * F, pr[DP_VBLOCK] = {0}, dot = 0;
            for (int f0 = 0; f0 < fb; f0 += DP_VBLOCK)
                for (int f = 0; f < DP_VBLOCK; f++) {
                    dwf[f0 + f] += ak * df[f0 + f];
                    pr[f] += df[f0 + f] * wf[f0 + f];
                }
            for (int f = 0; f < DP_VBLOCK; f++) dot += pr[f];
            for (int f = fb; f < F; f++) {
                dwf[f] += ak * df[f];
                dot += df[f] * wf[f];
            }
            da[(size_t)h * cnt + k] = dot;
        }
    }
}

size_t dp_fx_gat_scratch(const struct dp_model *m, const struct dp_fx_batch *b) {
    const size_t M = (size_t)b->n_nodes, entries = (size_t)b->row_ptr[M] + M;
    return (5 * M + entries) * (size_t)m->arch.heads; /* dp_fx_gat_backward's */
}

/* The attention weights of conv c over wh (stride ldw) into scr: s, d (each node's source and
 * destination scores, M x heads), then e: node i's block of heads rows of (1 + degree) weights
 * at (row_ptr[i] + i) heads (entry 0 the self loop, then the CSR neighbours: the tape's order). */
static void gat_attention(const struct dp_model *m, const struct dp_fx_batch *b, int c,
                          const float *wh, int ldw, float *scr) {
    const struct dp_conv_idx *cv = &m->conv[c];
    const int M = b->n_nodes, H = m->arch.hidden, heads = m->arch.heads, F = H / heads;
    const float *as = dp_model_pdata(m, cv->att_src), *ad = dp_model_pdata(m, cv->att_dst);
    float *s = scr, *d = s + (size_t)M * heads, *e = d + (size_t)M * heads;
    for (int j = 0; j < M; j++)
        gat_scores(heads, F, wh + (size_t)j * ldw, as, ad, s + (size_t)j * heads,
                   d + (size_t)j * heads);
    /* LeakyReLU scores less the row's maximum, all exponentials at once, then the softmax */
    for (int i = 0; i < M; i++) {
        const int p0 = b->row_ptr[i], cnt = b->row_ptr[i + 1] - p0 + 1;
        float *ei = e + (size_t)(p0 + i) * heads;
        for (int h = 0; h < heads; h++) {
            const float di = d[(size_t)i * heads + h];
            float *eh = ei + (size_t)h * cnt, mx = -INFINITY;
            for (int k = 0; k < cnt; k++) {
                const int j = k == 0 ? i : b->col[p0 + k - 1];
                const float p = s[(size_t)j * heads + h] + di, q = GAT_SLOPE * p;
                eh[k] = p > q ? p : q; /* LeakyReLU as a max: no branch */
                mx = eh[k] > mx ? eh[k] : mx;
            }
            for (int k = 0; k < cnt; k++) eh[k] -= mx;
        }
    }
    exp_all((size_t)(b->row_ptr[M] + M) * heads, e);
    for (int i = 0; i < M; i++) {
        const int p0 = b->row_ptr[i], cnt = b->row_ptr[i + 1] - p0 + 1;
        float *ei = e + (size_t)(p0 + i) * heads;
        for (int h = 0; h < heads; h++) {
            float *eh = ei + (size_t)h * cnt, sum = 0;
            for (int k = 0; k < cnt; k++) sum += eh[k];
            const float inv = 1.0f / sum;
            for (int k = 0; k < cnt; k++) eh[k] *= inv;
        }
    }
}

void dp_fx_gat(const struct dp_model *m, const struct dp_fx_batch *b, int c, const float *wh,
               int ldw, float *y, float *scr) {
    const int M = b->n_nodes, H = m->arch.hidden, heads = m->arch.heads, F = H / heads;
    gat_attention(m, b, c, wh, ldw, scr);
    const float *e = scr + (size_t)2 * M * heads;
    for (int i = 0; i < M; i++) {
        const int p0 = b->row_ptr[i], cnt = b->row_ptr[i + 1] - p0 + 1;
        float *yi = y + (size_t)i * H;
        memset(yi, 0, (size_t)H * sizeof *yi);
        gat_row(heads, F, cnt, e + (size_t)(p0 + i) * heads, b->col + p0, i, wh, ldw, yi);
    }
}

void dp_fx_gat_backward(const struct dp_model *m, const struct dp_fx_batch *b, int c,
                        const float *wh, int ldw, const float *dy, float *dwh, int ldd,
                        float *const *grads, float *scr) {
    const struct dp_conv_idx *cv = &m->conv[c];
    const int M = b->n_nodes, H = m->arch.hidden, heads = m->arch.heads, F = H / heads;
    const float *as = dp_model_pdata(m, cv->att_src), *ad = dp_model_pdata(m, cv->att_dst);
    gat_attention(m, b, c, wh, ldw, scr);
    const size_t entries = (size_t)b->row_ptr[M] + (size_t)M;
    const float *s = scr, *d = s + (size_t)M * heads, *e = d + (size_t)M * heads;
    float *ds = scr + (size_t)2 * M * heads + entries * heads, *dd = ds + (size_t)M * heads;
    float *da = dd + (size_t)M * heads; /* node i's heads x cnt dot products */
    memset(ds, 0, (size_t)2 * M * heads * sizeof *ds);
    for (int i = 0; i < M; i++) memset(dwh + (size_t)i * ldd, 0, (size_t)H * sizeof *dwh);
    for (int i = 0; i < M; i++) {
        const int p0 = b->row_ptr[i], cnt = b->row_ptr[i + 1] - p0 + 1;
        const float *ei = e + (size_t)(p0 + i) * heads;
        /* out_i = sum_k a_k wh_j: d wh_j += a_k dy_i and da_k = dy_i . wh_j; then the softmax
         * (de_k = a_k (da_k - sum a da)) and the LeakyReLU into the scores */
        gat_back_row(heads, F, cnt, ei, b->col + p0, i, wh, ldw, dy + (size_t)i * H, dwh, ldd, da);
        for (int h = 0; h < heads; h++) {
            const float *a = ei + (size_t)h * cnt, *dah = da + (size_t)h * cnt;
            float sa = 0;
            for (int k = 0; k < cnt; k++) sa += a[k] * dah[k];
            const float di = d[(size_t)i * heads + h];
            for (int k = 0; k < cnt; k++) {
                const int j = k == 0 ? i : b->col[p0 + k - 1];
                const float p = s[(size_t)j * heads + h] + di;
                const float dp = a[k] * (dah[k] - sa) * (p > 0 ? 1.0f : GAT_SLOPE);
                ds[(size_t)j * heads + h] += dp;
                dd[(size_t)i * heads + h] += dp;
            }
        }
    }
    /* s_j = wh_j . att_src and d_j = wh_j . att_dst, per head */
    float *gs = grads ? grads[cv->att_src] : NULL, *gd = grads ? grads[cv->att_dst] : NULL;
    for (int j = 0; j < M; j++)
        for (int h = 0; h < heads; h++) {
            const float sj = ds[(size_t)j * heads + h], dj = dd[(size_t)j * heads + h];
            const float *w = wh + (size_t)j * ldw + h * F;
            float *dw = dwh + (size_t)j * ldd + h * F;
            for (int f = 0; f < F; f++) dw[f] += sj * as[h * F + f] + dj * ad[h * F + f];
            if (gs)
                for (int f = 0; f < F; f++) gs[h * F + f] += sj * w[f];
            if (gd)
                for (int f = 0; f < F; f++) gd[h * F + f] += dj * w[f];
        }
}

/* ---- MPNN ---- */

/* o += relu(a + x + bias), one row of w: one edge's message of every tower. */
DP_SIMD
static void relu_sum_row(int w, const float *restrict a, const float *restrict x,
                         const float *restrict bias, float *restrict o) {
    const int wb = w - w % DP_VBLOCK;
    for (int c0 = 0; c0 < wb; c0 += DP_VBLOCK)
        for (int c = 0; c < DP_VBLOCK; c++) {
            const float v = a[c0 + c] + x[c0 + c] + bias[c0 + c];
            o[c0 + c] += v > 0 ? v : 0.0f;
        }
    for (int c = wb; c < w; c++) {
        const float v = a[c] + x[c] + bias[c];
        o[c] += v > 0 ? v : 0.0f;
    }
}

/* Backward of relu_sum_row: where a + x + bias > 0, da += dg and dx += dg. */
DP_SIMD
static void relu_back_row(int w, const float *restrict a, const float *restrict x,
                          const float *restrict bias, const float *restrict dg,
                          float *restrict da, float *restrict dx) {
    const int wb = w - w % DP_VBLOCK;
    /* dg is loaded unconditionally, so that the select vectorises */
    for (int c0 = 0; c0 < wb; c0 += DP_VBLOCK)
        for (int c = 0; c < DP_VBLOCK; c++) {
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

size_t dp_fx_mpnn_pack_size(const struct dp_model *m) {
    const size_t H = (size_t)m->arch.hidden;
    return H * (size_t)dp_fx_pack_width(m) + 2 * H;
}

void dp_fx_mpnn_pack(const struct dp_model *m, int c, float *out) {
    const struct dp_conv_idx *cv = &m->conv[c];
    const int H = m->arch.hidden, T = m->arch.towers, Ft = H / T, k = cv->in;
    const int pw = dp_fx_pack_width(m);
    const float *wih = dp_model_pdata(m, m->gru_wih);
    float *bias = out + (size_t)k * pw;
    for (int t = 0; t < T; t++) {
        /* pre (Ft x 2k) splits into the receiver's half and the sender's half; post (Ft x k+Ft)
         * into the node's own half and the block-diagonal aggregate half (kept in the model) */
        const float *pre = dp_model_pdata(m, cv->pre_w[t]);
        const float *post = dp_model_pdata(m, cv->post_w[t]);
        for (int r = 0; r < k; r++)
            for (int f = 0; f < Ft; f++) {
                float *o = out + (size_t)r * pw + t * Ft + f;
                o[0] = pre[(size_t)f * 2 * k + r];
                o[H] = pre[(size_t)f * 2 * k + k + r];
                o[2 * H] = post[(size_t)f * (k + Ft) + r];
            }
        memcpy(bias + t * Ft, dp_model_pdata(m, cv->pre_b[t]), (size_t)Ft * sizeof *bias);
        memcpy(bias + H + t * Ft, dp_model_pdata(m, cv->post_b[t]), (size_t)Ft * sizeof *bias);
    }
    if (m->arch.gru)
        for (int r = 0; r < k; r++)
            for (int j = 0; j < 3 * H; j++)
                out[(size_t)r * pw + 3 * H + j] = wih[(size_t)j * H + r];
}

void dp_fx_mpnn(const struct dp_model *m, const struct dp_fx_batch *b, int c, const float *P,
                int ldp, const float *pack, float *y, float *agg, float *u) {
    const struct dp_conv_idx *cv = &m->conv[c];
    const int M = b->n_nodes, H = m->arch.hidden, T = m->arch.towers, Ft = H / T, k = cv->in;
    const float *bpre = pack + (size_t)k * ldp, *bpost = bpre + H;
    /* agg_i = sum over neighbours j of relu(pre [x_i | x_j] + b) = relu(A_i + B_j + b) */
    memset(agg, 0, (size_t)M * H * sizeof *agg);
    for (int i = 0; i < M; i++) {
        const float *ai = P + (size_t)i * ldp;
        for (int p = b->row_ptr[i]; p < b->row_ptr[i + 1]; p++)
            relu_sum_row(H, ai, P + (size_t)b->col[p] * ldp + H, bpre, agg + (size_t)i * H);
    }
    /* u = post [x | agg] + b: the node half from P, the aggregate half tower by tower */
    for (int i = 0; i < M; i++)
        for (int j = 0; j < H; j++)
            u[(size_t)i * H + j] = P[(size_t)i * ldp + 2 * H + j] + bpost[j];
    for (int t = 0; t < T; t++) {
        const float *post = dp_model_pdata(m, cv->post_w[t]);
        dp_kn_gemm(false, true, M, Ft, Ft, agg + t * Ft, H, post + k, k + Ft, 1.0f, u + t * Ft, H);
    }
    /* the towers' mixing linear (its bias and activation are the caller's) */
    dp_kn_gemm(false, true, M, H, H, u, H, dp_model_pdata(m, cv->lin_w), H, 0.0f, y, H);
}

void dp_fx_mpnn_backward(const struct dp_model *m, const struct dp_fx_batch *b, int c,
                         const float *in, int ldin, const float *pack, const float *agg,
                         const float *u, const float *dy, float *dP, int ldp,
                         float *const *grads, float *scr) {
    const struct dp_conv_idx *cv = &m->conv[c];
    const int M = b->n_nodes, H = m->arch.hidden, T = m->arch.towers, Ft = H / T, k = cv->in;
    const float *bpre = pack + (size_t)k * ldp;
#define GRAD(i) (grads ? grads[i] : NULL)
    /* y = u W_lin^T (+ b): du = dy W_lin into the node half of dP (d post's node half) */
    if (GRAD(cv->lin_w)) dp_kn_gemm(true, false, H, H, M, dy, H, u, H, 1.0f, GRAD(cv->lin_w), H);
    float *du = dP + 2 * H, *dagg = scr, *AB = scr + (size_t)M * H;
    dp_kn_gemm(false, false, M, H, H, dy, H, dp_model_pdata(m, cv->lin_w), H, 0.0f, du, ldp);
    for (int t = 0; t < T; t++) {
        const float *post = dp_model_pdata(m, cv->post_w[t]);
        float *gp = GRAD(cv->post_w[t]), *gb = GRAD(cv->post_b[t]);
        if (gp) dp_kn_gemm(true, false, Ft, Ft, M, du + t * Ft, ldp, agg + t * Ft, H, 1.0f, gp + k,
                           k + Ft);
        if (gb)
            for (int i = 0; i < M; i++)
                for (int f = 0; f < Ft; f++) gb[f] += du[(size_t)i * ldp + t * Ft + f];
        dp_kn_gemm(false, false, M, Ft, Ft, du + t * Ft, ldp, post + k, k + Ft, 0.0f,
                   dagg + t * Ft, H);
    }
    /* messages: relu(A_i + B_j + b) with [A | B] recomputed from the input */
    dp_kn_gemm(false, false, M, 2 * H, k, in, ldin, pack, ldp, 0.0f, AB, 2 * H);
    for (int i = 0; i < M; i++) memset(dP + (size_t)i * ldp, 0, (size_t)2 * H * sizeof *dP);
    for (int i = 0; i < M; i++) {
        const float *ai = AB + (size_t)i * 2 * H, *dg = dagg + (size_t)i * H;
        float *dA = dP + (size_t)i * ldp;
        for (int p = b->row_ptr[i]; p < b->row_ptr[i + 1]; p++) {
            const int j = b->col[p];
            relu_back_row(H, ai, AB + (size_t)j * 2 * H + H, bpre, dg, dA,
                          dP + (size_t)j * ldp + H);
        }
    }
    /* d pre bias = the column sums of dA (every message of node i adds the same) */
    for (int t = 0; t < T; t++) {
        float *gb = GRAD(cv->pre_b[t]);
        if (gb)
            for (int i = 0; i < M; i++)
                for (int f = 0; f < Ft; f++) gb[f] += dP[(size_t)i * ldp + t * Ft + f];
    }
#undef GRAD
}

void dp_fx_mpnn_unpack(const struct dp_model *m, int c, const float *dW, float *const *grads) {
    const struct dp_conv_idx *cv = &m->conv[c];
    const int H = m->arch.hidden, T = m->arch.towers, Ft = H / T, k = cv->in;
    const int pw = dp_fx_pack_width(m);
    for (int t = 0; t < T; t++) {
        float *pre = grads[cv->pre_w[t]], *post = grads[cv->post_w[t]];
        for (int r = 0; r < k; r++)
            for (int f = 0; f < Ft; f++) {
                const float *g = dW + (size_t)r * pw + t * Ft + f;
                if (pre) {
                    pre[(size_t)f * 2 * k + r] += g[0];
                    pre[(size_t)f * 2 * k + k + r] += g[H];
                }
                if (post) post[(size_t)f * (k + Ft) + r] += g[2 * H];
            }
    }
    float *gi = m->arch.gru ? grads[m->gru_wih] : NULL;
    if (gi)
        for (int r = 0; r < k; r++)
            for (int j = 0; j < 3 * H; j++) gi[(size_t)j * H + r] += dW[(size_t)r * pw + 3 * H + j];
}
