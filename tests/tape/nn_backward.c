/* nn_backward.c: reverse-mode autodiff over the tape: one case per op adding the node's gradient
 * into its sources' gradients, and dp_nn_backward, which allocates the gradient buffers and walks
 * the recording backwards. */
#include <math.h>
#include <string.h>

#include "dp/status.h"
#include "gnn/kernels.h"
#include "nn_impl.h"

static float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

/* The gradient buffer of a source, or NULL when it needs none. */
static float *g_of(const struct dp_tensor *s) {
    return s && s->requires_grad ? s->grad : NULL;
}

static void backward_gat(struct dp_tensor *t) {
    const struct dp_tensor *wh = t->src[0], *as = t->src[1], *ad = t->src[2];
    const struct dp_nn_adj *adj = t->adj;
    const int n = wh->rows, heads = as->rows, F = as->cols, HF = wh->cols;
    const size_t entries = (size_t)adj->row_ptr[n] + (size_t)n;
    const float *pre = t->aux, *alpha = t->aux + entries * heads;
    float *gw = g_of(wh), *gs = g_of(as), *gd = g_of(ad);
    float *ds = t->aux + 2 * entries * heads; /* dp_nn_gat_scratch, shared with the forward */
    float *dd = ds + (size_t)n * heads, *dal = dd + (size_t)n * heads;
    memset(ds, 0, (size_t)n * heads * 2 * sizeof *ds);
    const float *dy = t->grad;
    for (int i = 0; i < n; i++) {
        const int cnt = adj->row_ptr[i + 1] - adj->row_ptr[i] + 1;
        const size_t base = (size_t)adj->row_ptr[i] + (size_t)i;
        for (int h = 0; h < heads; h++) {
            const float *dyi = dy + (size_t)i * HF + h * F;
            float sum = 0;
            for (int k = 0; k < cnt; k++) {
                const int j = k == 0 ? i : adj->col[adj->row_ptr[i] + k - 1];
                const float *whj = wh->data + (size_t)j * HF + h * F;
                const float a = alpha[(base + k) * heads + h];
                float da = 0;
                for (int f = 0; f < F; f++) da += dyi[f] * whj[f];
                dal[k] = da;
                sum += a * da;
                if (gw)
                    for (int f = 0; f < F; f++) gw[(size_t)j * HF + h * F + f] += a * dyi[f];
            }
            for (int k = 0; k < cnt; k++) {
                const int j = k == 0 ? i : adj->col[adj->row_ptr[i] + k - 1];
                const float a = alpha[(base + k) * heads + h], p = pre[(base + k) * heads + h];
                const float de = a * (dal[k] - sum) * (p > 0 ? 1.0f : 0.2f);
                ds[(size_t)j * heads + h] += de;
                dd[(size_t)i * heads + h] += de;
            }
        }
    }
    for (int j = 0; j < n; j++)
        for (int h = 0; h < heads; h++) {
            const float sj = ds[(size_t)j * heads + h], dj = dd[(size_t)j * heads + h];
            for (int f = 0; f < F; f++) {
                const float w = wh->data[(size_t)j * HF + h * F + f];
                if (gw)
                    gw[(size_t)j * HF + h * F + f] += sj * as->data[h * F + f] +
                                                      dj * ad->data[h * F + f];
                if (gs) gs[h * F + f] += sj * w;
                if (gd) gd[h * F + f] += dj * w;
            }
        }
}

/* The backward of one node: adds into its sources' grad buffers (NULL for sources that need
 * none). */
static void backward_node(struct dp_tensor *t) {
    struct dp_tensor *a = t->src[0], *b = t->src[1], *c = t->src[2];
    float *ga = g_of(a), *gb = g_of(b), *gc = g_of(c);
    const float *dy = t->grad, *y = t->data;
    const size_t n = (size_t)t->rows * t->cols;
    switch (t->op) {
    case DP_OP_NONE: break;
    case DP_OP_MATMUL: {
        /* y = a b (b: k x n) or a b^T (b: n x k) */
        const int m = a->rows, k = a->cols, nn = t->cols;
        if (ga) {
            if (t->iparam[0]) dp_kn_gemm(false, false, m, k, nn, dy, nn, b->data, k, 1.0f, ga, k);
            else dp_kn_gemm(false, true, m, k, nn, dy, nn, b->data, nn, 1.0f, ga, k);
        }
        if (gb) {
            if (t->iparam[0]) dp_kn_gemm(true, false, nn, k, m, dy, nn, a->data, k, 1.0f, gb, k);
            else dp_kn_gemm(true, false, k, nn, m, a->data, k, dy, nn, 1.0f, gb, nn);
        }
        break;
    }
    case DP_OP_ADD:
        for (size_t i = 0; i < n; i++) {
            if (ga) ga[i] += dy[i];
            if (gb) gb[i] += dy[i];
        }
        break;
    case DP_OP_ADD_BIAS:
        for (int r = 0; r < t->rows; r++)
            for (int j = 0; j < t->cols; j++) {
                const float d = dy[(size_t)r * t->cols + j];
                if (ga) ga[(size_t)r * t->cols + j] += d;
                if (gb) gb[j] += d;
            }
        break;
    case DP_OP_MUL:
        for (size_t i = 0; i < n; i++) {
            if (ga) ga[i] += dy[i] * b->data[i];
            if (gb) gb[i] += dy[i] * a->data[i];
        }
        break;
    case DP_OP_SIGMOID:
        if (ga) for (size_t i = 0; i < n; i++) ga[i] += dy[i] * y[i] * (1.0f - y[i]);
        break;
    case DP_OP_TANH:
        if (ga) for (size_t i = 0; i < n; i++) ga[i] += dy[i] * (1.0f - y[i] * y[i]);
        break;
    case DP_OP_RELU:
        if (ga) for (size_t i = 0; i < n; i++) ga[i] += a->data[i] > 0 ? dy[i] : 0.0f;
        break;
    case DP_OP_LEAKY_RELU:
        if (ga) for (size_t i = 0; i < n; i++) ga[i] += a->data[i] > 0 ? dy[i] : t->fparam * dy[i];
        break;
    case DP_OP_AGG_GCN:
    case DP_OP_AGG_GIN: {
        /* the aggregation matrix is symmetric: the gradient is the same aggregation of dy */
        if (ga) dp_nn_aggregate(t, dy, ga, true);
        if (t->op == DP_OP_AGG_GIN && gb) {
            double s = 0;
            for (size_t i = 0; i < n; i++) s += (double)dy[i] * a->data[i];
            gb[0] += (float)s;
        }
        break;
    }
    case DP_OP_SOFTMAX_SEG:
        if (ga)
            for (int s = 0; s < t->seg->n; s++) {
                float dot = 0;
                for (int i = t->seg->off[s]; i < t->seg->off[s + 1]; i++) dot += y[i] * dy[i];
                for (int i = t->seg->off[s]; i < t->seg->off[s + 1]; i++)
                    ga[i] += y[i] * (dy[i] - dot);
            }
        break;
    case DP_OP_CONCAT:
        for (int r = 0; r < t->rows; r++) {
            if (ga)
                for (int j = 0; j < a->cols; j++)
                    ga[(size_t)r * a->cols + j] += dy[(size_t)r * t->cols + j];
            if (gb)
                for (int j = 0; j < b->cols; j++)
                    gb[(size_t)r * b->cols + j] += dy[(size_t)r * t->cols + a->cols + j];
        }
        break;
    case DP_OP_SLICE:
        if (ga)
            for (int r = 0; r < t->rows; r++)
                for (int j = 0; j < t->cols; j++)
                    ga[(size_t)r * a->cols + t->iparam[0] + j] += dy[(size_t)r * t->cols + j];
        break;
    case DP_OP_GAT: backward_gat(t); break;
    case DP_OP_GATHER:
        if (ga)
            for (int r = 0; r < t->rows; r++)
                for (int j = 0; j < t->cols; j++)
                    ga[(size_t)t->index[r] * a->cols + j] += dy[(size_t)r * t->cols + j];
        break;
    case DP_OP_SCATTER_ADD:
        if (ga)
            for (int r = 0; r < a->rows; r++)
                for (int j = 0; j < t->cols; j++)
                    ga[(size_t)r * a->cols + j] += dy[(size_t)t->index[r] * t->cols + j];
        break;
    case DP_OP_LSTM: {
        const int H = b->cols;
        for (int r = 0; r < t->rows; r++) {
            const float *g = a->data + (size_t)r * 4 * H, *cp = b->data + (size_t)r * H;
            const float *cn = y + (size_t)r * 2 * H + H;
            const float *dh = dy + (size_t)r * 2 * H, *dcn = dh + H;
            for (int j = 0; j < H; j++) {
                float ig = sigm(g[j]), fg = sigm(g[H + j]), gg = tanhf(g[2 * H + j]);
                float og = sigm(g[3 * H + j]), tc = tanhf(cn[j]);
                float dct = dcn[j] + dh[j] * og * (1.0f - tc * tc);
                if (ga) {
                    float *d = ga + (size_t)r * 4 * H;
                    d[j] += dct * gg * ig * (1.0f - ig);
                    d[H + j] += dct * cp[j] * fg * (1.0f - fg);
                    d[2 * H + j] += dct * ig * (1.0f - gg * gg);
                    d[3 * H + j] += dh[j] * tc * og * (1.0f - og);
                }
                if (gb) gb[(size_t)r * H + j] += dct * fg;
            }
        }
        break;
    }
    case DP_OP_GRU: {
        const int H = t->cols;
        for (int r = 0; r < t->rows; r++) {
            const float *gi = a->data + (size_t)r * 3 * H, *gh = b->data + (size_t)r * 3 * H;
            const float *h = c->data + (size_t)r * H, *d = dy + (size_t)r * H;
            for (int j = 0; j < H; j++) {
                float rv = sigm(gi[j] + gh[j]), zv = sigm(gi[H + j] + gh[H + j]);
                float nv = tanhf(gi[2 * H + j] + rv * gh[2 * H + j]);
                float dan = d[j] * (1.0f - zv) * (1.0f - nv * nv);
                float dar = dan * gh[2 * H + j] * rv * (1.0f - rv);
                float daz = d[j] * (h[j] - nv) * zv * (1.0f - zv);
                if (ga) {
                    float *o = ga + (size_t)r * 3 * H;
                    o[j] += dar;
                    o[H + j] += daz;
                    o[2 * H + j] += dan;
                }
                if (gb) {
                    float *o = gb + (size_t)r * 3 * H;
                    o[j] += dar;
                    o[H + j] += daz;
                    o[2 * H + j] += dan * rv;
                }
                if (gc) gc[(size_t)r * H + j] += d[j] * zv;
            }
        }
        break;
    }
    case DP_OP_SEG_DOT:
        for (int s = 0; s < t->seg->n; s++)
            for (int i = t->seg->off[s]; i < t->seg->off[s + 1]; i++)
                for (int j = 0; j < a->cols; j++) {
                    if (ga) ga[(size_t)i * a->cols + j] += dy[i] * b->data[(size_t)s * b->cols + j];
                    if (gb) gb[(size_t)s * b->cols + j] += dy[i] * a->data[(size_t)i * a->cols + j];
                }
        break;
    case DP_OP_SEG_WSUM:
        for (int s = 0; s < t->seg->n; s++)
            for (int i = t->seg->off[s]; i < t->seg->off[s + 1]; i++)
                for (int j = 0; j < t->cols; j++) {
                    const float d = dy[(size_t)s * t->cols + j];
                    if (ga) ga[i] += d * b->data[(size_t)i * t->cols + j];
                    if (gb) gb[(size_t)i * t->cols + j] += d * a->data[i];
                }
        break;
    case DP_OP_MSE: {
        const size_t m = (size_t)a->rows * a->cols;
        const float k = 2.0f * dy[0] / (float)(m ? m : 1);
        if (ga) for (size_t i = 0; i < m; i++) ga[i] += k * (a->data[i] - b->data[i]);
        break;
    }
    case DP_OP_COUNT: DP_ASSERT(!"bad op"); break;
    }
}

void dp_nn_backward(struct dp_ctx *ctx, struct dp_tensor *root, const float *seed) {
    if (ctx->failed) return;
    for (int i = 0; i < ctx->n_nodes; i++) {
        struct dp_tensor *t = ctx->nodes[i];
        if (!t->requires_grad && t != root) continue;
        const size_t bytes = (size_t)t->rows * t->cols * sizeof(float);
        if (!t->grad && !(t->grad = dp_nn_alloc(ctx, bytes))) return;
        memset(t->grad, 0, bytes);
    }
    const size_t n = (size_t)root->rows * root->cols;
    for (size_t i = 0; i < n; i++) root->grad[i] = seed ? seed[i] : 1.0f;
    int r = ctx->n_nodes - 1;
    while (r >= 0 && ctx->nodes[r] != root) r--;
    for (; r >= 0; r--) {
        struct dp_tensor *t = ctx->nodes[r];
        if (t->requires_grad && t->op != DP_OP_NONE) backward_node(t);
    }
}
