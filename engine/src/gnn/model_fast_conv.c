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

size_t dp_fx_gat_scratch(const struct dp_model *m, const struct dp_fx_batch *b) {
    const size_t M = (size_t)b->n_nodes, entries = (size_t)b->row_ptr[M] + M;
    return (5 * M + entries) * (size_t)m->arch.heads; /* dp_fx_gat_backward's */
}

size_t dp_fx_gat_fwd_scratch(const struct dp_model *m, const struct dp_fx_batch *b) {
    const size_t M = (size_t)b->n_nodes, entries = (size_t)b->row_ptr[M] + M;
    return (4 * M + entries) * (size_t)m->arch.heads;
}

void dp_fx_gat_scores(const struct dp_model *m, int c, int i0, int i1, const float *wh, int ldw,
                      float *s, float *d) {
    const struct dp_kn_table *K = dp_kn();
    const struct dp_conv_idx *cv = &m->conv[c];
    const int heads = m->arch.heads, F = m->arch.hidden / heads;
    const float *as = dp_model_pdata(m, cv->att_src), *ad = dp_model_pdata(m, cv->att_dst);
    for (int j = i0; j < i1; j++)
        K->gat_scores(heads, F, wh + (size_t)j * ldw, as, ad, s + (size_t)j * heads,
                      d + (size_t)j * heads);
}

/* The attention weights of rows [i0, i1) from the scores s, d into e: node i's block of heads
 * rows of (1 + degree) weights at (row_ptr[i] + i) heads (entry 0 the self loop, then the CSR
 * neighbours: the tape's order). */
static void gat_attention(const struct dp_kn_table *K, const struct dp_fx_batch *b, int heads,
                          int i0, int i1, const float *s, const float *d, float *e) {
    /* LeakyReLU scores less the row's maximum, all exponentials at once, then the softmax */
    for (int i = i0; i < i1; i++) {
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
    const size_t e0 = (size_t)(b->row_ptr[i0] + i0) * heads;
    K->exp_all((size_t)(b->row_ptr[i1] + i1) * heads - e0, e + e0);
    for (int i = i0; i < i1; i++) {
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

void dp_fx_gat_rows(const struct dp_model *m, const struct dp_fx_batch *b, int i0, int i1,
                    const float *wh, int ldw, const float *s, const float *d, float *e, float *y) {
    const struct dp_kn_table *K = dp_kn();
    const int H = m->arch.hidden, heads = m->arch.heads, F = H / heads;
    gat_attention(K, b, heads, i0, i1, s, d, e);
    for (int i = i0; i < i1; i++) {
        const int p0 = b->row_ptr[i], cnt = b->row_ptr[i + 1] - p0 + 1;
        float *yi = y + (size_t)i * H;
        memset(yi, 0, (size_t)H * sizeof *yi);
        K->gat_row(heads, F, cnt, e + (size_t)(p0 + i) * heads, b->col + p0, i, wh, ldw, yi);
    }
}

void dp_fx_gat_backward(const struct dp_model *m, const struct dp_fx_batch *b, int c,
                        const float *wh, int ldw, const float *dy, float *dwh, int ldd,
                        float *const *grads, float *scr) {
    const struct dp_kn_table *K = dp_kn();
    const struct dp_conv_idx *cv = &m->conv[c];
    const int M = b->n_nodes, H = m->arch.hidden, heads = m->arch.heads, F = H / heads;
    const float *as = dp_model_pdata(m, cv->att_src), *ad = dp_model_pdata(m, cv->att_dst);
    dp_fx_gat_scores(m, c, 0, M, wh, ldw, scr, scr + (size_t)M * heads);
    gat_attention(K, b, heads, 0, M, scr, scr + (size_t)M * heads, scr + (size_t)2 * M * heads);
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
        K->gat_back_row(heads, F, cnt, ei, b->col + p0, i, wh, ldw, dy + (size_t)i * H, dwh, ldd,
                        da);
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

void dp_fx_mpnn(const struct dp_model *m, const struct dp_fx_batch *b, int c, int i0, int i1,
                const float *P, int ldp, const float *pack, float *y, float *agg, float *u) {
    const struct dp_kn_table *K = dp_kn();
    const struct dp_conv_idx *cv = &m->conv[c];
    const int H = m->arch.hidden, T = m->arch.towers, Ft = H / T, k = cv->in, R = i1 - i0;
    const float *bpre = pack + (size_t)k * ldp, *bpost = bpre + H;
    /* agg_i = sum over neighbours j of relu(pre [x_i | x_j] + b) = relu(A_i + B_j + b) */
    memset(agg + (size_t)i0 * H, 0, (size_t)R * H * sizeof *agg);
    for (int i = i0; i < i1; i++) {
        const float *ai = P + (size_t)i * ldp;
        for (int p = b->row_ptr[i]; p < b->row_ptr[i + 1]; p++)
            K->relu_sum(H, ai, P + (size_t)b->col[p] * ldp + H, bpre, agg + (size_t)i * H);
    }
    /* u = post [x | agg] + b: the node half from P, the aggregate half tower by tower */
    for (int i = i0; i < i1; i++)
        for (int j = 0; j < H; j++)
            u[(size_t)i * H + j] = P[(size_t)i * ldp + 2 * H + j] + bpost[j];
    for (int t = 0; t < T; t++) {
        const float *post = dp_model_pdata(m, cv->post_w[t]);
        K->gemm(false, true, R, Ft, Ft, agg + (size_t)i0 * H + t * Ft, H, post + k, k + Ft, 1.0f,
                u + (size_t)i0 * H + t * Ft, H);
    }
    /* the towers' mixing linear (its bias and activation are the caller's) */
    K->gemm(false, true, R, H, H, u + (size_t)i0 * H, H, dp_model_pdata(m, cv->lin_w), H, 0.0f,
            y + (size_t)i0 * H, H);
}

void dp_fx_mpnn_backward(const struct dp_model *m, const struct dp_fx_batch *b, int c,
                         const float *in, int ldin, const float *pack, const float *agg,
                         const float *u, const float *dy, float *dP, int ldp,
                         float *const *grads, float *scr) {
    const struct dp_kn_table *K = dp_kn();
    const struct dp_conv_idx *cv = &m->conv[c];
    const int M = b->n_nodes, H = m->arch.hidden, T = m->arch.towers, Ft = H / T, k = cv->in;
    const float *bpre = pack + (size_t)k * ldp;
#define GRAD(i) (grads ? grads[i] : NULL)
    /* y = u W_lin^T (+ b): du = dy W_lin into the node half of dP (d post's node half) */
    if (GRAD(cv->lin_w)) K->gemm(true, false, H, H, M, dy, H, u, H, 1.0f, GRAD(cv->lin_w), H);
    float *du = dP + 2 * H, *dagg = scr, *AB = scr + (size_t)M * H;
    K->gemm(false, false, M, H, H, dy, H, dp_model_pdata(m, cv->lin_w), H, 0.0f, du, ldp);
    for (int t = 0; t < T; t++) {
        const float *post = dp_model_pdata(m, cv->post_w[t]);
        float *gp = GRAD(cv->post_w[t]), *gb = GRAD(cv->post_b[t]);
        if (gp) K->gemm(true, false, Ft, Ft, M, du + t * Ft, ldp, agg + t * Ft, H, 1.0f, gp + k,
                           k + Ft);
        if (gb)
            for (int i = 0; i < M; i++)
                for (int f = 0; f < Ft; f++) gb[f] += du[(size_t)i * ldp + t * Ft + f];
        K->gemm(false, false, M, Ft, Ft, du + t * Ft, ldp, post + k, k + Ft, 0.0f,
                   dagg + t * Ft, H);
    }
    /* messages: relu(A_i + B_j + b) with [A | B] recomputed from the input */
    K->gemm(false, false, M, 2 * H, k, in, ldin, pack, ldp, 0.0f, AB, 2 * H);
    for (int i = 0; i < M; i++) memset(dP + (size_t)i * ldp, 0, (size_t)2 * H * sizeof *dP);
    for (int i = 0; i < M; i++) {
        const float *ai = AB + (size_t)i * 2 * H, *dg = dagg + (size_t)i * H;
        float *dA = dP + (size_t)i * ldp;
        for (int p = b->row_ptr[i]; p < b->row_ptr[i + 1]; p++) {
            const int j = b->col[p];
            K->relu_back(H, ai, AB + (size_t)j * 2 * H + H, bpre, dg, dA,
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
