/* nn_forward.c: the tape's forward kernels, one case per op (the engine's dense products,
 * gnn/kernels.h, which tests check on their own), and dp_nn_forward, which runs them in
 * recording order. */
#include <math.h>
#include <string.h>

#include "dp/status.h"
#include "gnn/kernels.h"
#include "nn_impl.h"

void dp_nn_aggregate(const struct dp_tensor *t, const float *x, float *o, bool add) {
    const struct dp_nn_adj *adj = t->adj;
    const int w = t->cols;
    const bool gcn = t->op == DP_OP_AGG_GCN;
    const float selfc = gcn ? 0.0f : 1.0f + t->src[1]->data[0]; /* GIN: 1 + epsilon */
    for (int i = 0; i < t->rows; i++) {
        const float s = gcn ? adj->self[i] : selfc;
        float *oi = o + (size_t)i * w;
        const float *xi = x + (size_t)i * w;
        for (int j = 0; j < w; j++) oi[j] = (add ? oi[j] : 0.0f) + s * xi[j];
        for (int p = adj->row_ptr[i]; p < adj->row_ptr[i + 1]; p++) {
            const float v = gcn ? adj->val[p] : 1.0f;
            const float *xp = x + (size_t)adj->col[p] * w;
            for (int j = 0; j < w; j++) oi[j] += v * xp[j];
        }
    }
}

static float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

/* GAT scores of row i: entry 0 is the self loop, then the CSR neighbours. */
static int gat_entry_node(const struct dp_nn_adj *adj, int i, int k) {
    return k == 0 ? i : adj->col[adj->row_ptr[i] + k - 1];
}

static void forward_gat(struct dp_tensor *t) {
    const struct dp_tensor *wh = t->src[0], *as = t->src[1], *ad = t->src[2];
    const struct dp_nn_adj *adj = t->adj;
    const int n = wh->rows, heads = as->rows, F = as->cols, HF = wh->cols;
    const size_t entries = (size_t)adj->row_ptr[n] + (size_t)n;
    float *pre = t->aux, *alpha = t->aux + entries * heads;
    float *s = alpha + entries * heads, *d = s + (size_t)n * heads; /* dp_nn_gat_scratch */
    for (int j = 0; j < n; j++)
        for (int h = 0; h < heads; h++) {
            float x = 0, y = 0;
            for (int f = 0; f < F; f++) {
                x += wh->data[(size_t)j * HF + h * F + f] * as->data[h * F + f];
                y += wh->data[(size_t)j * HF + h * F + f] * ad->data[h * F + f];
            }
            s[(size_t)j * heads + h] = x;
            d[(size_t)j * heads + h] = y;
        }
    memset(t->data, 0, (size_t)n * HF * sizeof *t->data);
    for (int i = 0; i < n; i++) {
        const int cnt = adj->row_ptr[i + 1] - adj->row_ptr[i] + 1;
        const size_t base = (size_t)adj->row_ptr[i] + (size_t)i;
        for (int h = 0; h < heads; h++) {
            float mx = -INFINITY;
            for (int k = 0; k < cnt; k++) {
                int j = gat_entry_node(adj, i, k);
                float p = s[(size_t)j * heads + h] + d[(size_t)i * heads + h];
                pre[(base + k) * heads + h] = p;
                float e = p > 0 ? p : 0.2f * p;
                alpha[(base + k) * heads + h] = e;
                if (e > mx) mx = e;
            }
            float sum = 0;
            for (int k = 0; k < cnt; k++) {
                float *a = &alpha[(base + k) * heads + h];
                *a = expf(*a - mx);
                sum += *a;
            }
            for (int k = 0; k < cnt; k++) {
                float a = alpha[(base + k) * heads + h] /= sum;
                int j = gat_entry_node(adj, i, k);
                for (int f = 0; f < F; f++)
                    t->data[(size_t)i * HF + h * F + f] += a * wh->data[(size_t)j * HF + h * F + f];
            }
        }
    }
}

/* The forward kernel of one node: computes t->data from its sources. */
static void forward_node(struct dp_tensor *t) {
    struct dp_tensor *a = t->src[0], *b = t->src[1], *c = t->src[2];
    const size_t n = (size_t)t->rows * t->cols;
    float *o = t->data;
    switch (t->op) {
    case DP_OP_NONE: break;
    case DP_OP_MATMUL: {
        const int m = a->rows, k = a->cols, nn = t->cols;
        const int lda = a->cols, ldb = b->cols, ldc = t->cols;
        dp_kn_gemm(false, t->iparam[0], m, nn, k, a->data, lda, b->data, ldb, 0.0f, o, ldc);
        break;
    }
    case DP_OP_ADD:
        for (size_t i = 0; i < n; i++) o[i] = a->data[i] + b->data[i];
        break;
    case DP_OP_ADD_BIAS:
        for (int r = 0; r < t->rows; r++)
            for (int j = 0; j < t->cols; j++)
                o[(size_t)r * t->cols + j] = a->data[(size_t)r * t->cols + j] + b->data[j];
        break;
    case DP_OP_MUL:
        for (size_t i = 0; i < n; i++) o[i] = a->data[i] * b->data[i];
        break;
    case DP_OP_SIGMOID:
        for (size_t i = 0; i < n; i++) o[i] = sigm(a->data[i]);
        break;
    case DP_OP_TANH:
        for (size_t i = 0; i < n; i++) o[i] = tanhf(a->data[i]);
        break;
    case DP_OP_RELU:
        for (size_t i = 0; i < n; i++) o[i] = a->data[i] > 0 ? a->data[i] : 0.0f;
        break;
    case DP_OP_LEAKY_RELU:
        for (size_t i = 0; i < n; i++) o[i] = a->data[i] > 0 ? a->data[i] : t->fparam * a->data[i];
        break;
    case DP_OP_AGG_GCN:
    case DP_OP_AGG_GIN:
        dp_nn_aggregate(t, a->data, o, false);
        break;
    case DP_OP_SOFTMAX_SEG:
        for (int s = 0; s < t->seg->n; s++) {
            const int i0 = t->seg->off[s], i1 = t->seg->off[s + 1];
            float mx = -INFINITY, sum = 0;
            for (int i = i0; i < i1; i++) mx = a->data[i] > mx ? a->data[i] : mx;
            for (int i = i0; i < i1; i++) sum += (o[i] = expf(a->data[i] - mx));
            for (int i = i0; i < i1; i++) o[i] /= sum;
        }
        break;
    case DP_OP_CONCAT:
        for (int r = 0; r < t->rows; r++) {
            memcpy(o + (size_t)r * t->cols, a->data + (size_t)r * a->cols,
                   (size_t)a->cols * sizeof *o);
            memcpy(o + (size_t)r * t->cols + a->cols, b->data + (size_t)r * b->cols,
                   (size_t)b->cols * sizeof *o);
        }
        break;
    case DP_OP_SLICE:
        for (int r = 0; r < t->rows; r++)
            memcpy(o + (size_t)r * t->cols, a->data + (size_t)r * a->cols + t->iparam[0],
                   (size_t)t->cols * sizeof *o);
        break;
    case DP_OP_GAT: forward_gat(t); break;
    case DP_OP_GATHER:
        for (int r = 0; r < t->rows; r++)
            memcpy(o + (size_t)r * t->cols, a->data + (size_t)t->index[r] * a->cols,
                   (size_t)t->cols * sizeof *o);
        break;
    case DP_OP_SCATTER_ADD:
        memset(o, 0, n * sizeof *o);
        for (int r = 0; r < a->rows; r++)
            for (int j = 0; j < t->cols; j++)
                o[(size_t)t->index[r] * t->cols + j] += a->data[(size_t)r * a->cols + j];
        break;
    case DP_OP_LSTM: {
        const int H = b->cols;
        for (int r = 0; r < t->rows; r++) {
            const float *g = a->data + (size_t)r * 4 * H, *cp = b->data + (size_t)r * H;
            float *h = o + (size_t)r * 2 * H, *cn = h + H;
            for (int j = 0; j < H; j++) {
                float ig = sigm(g[j]), fg = sigm(g[H + j]), gg = tanhf(g[2 * H + j]);
                float og = sigm(g[3 * H + j]);
                cn[j] = fg * cp[j] + ig * gg;
                h[j] = og * tanhf(cn[j]);
            }
        }
        break;
    }
    case DP_OP_GRU: {
        const int H = t->cols;
        for (int r = 0; r < t->rows; r++) {
            const float *gi = a->data + (size_t)r * 3 * H, *gh = b->data + (size_t)r * 3 * H;
            const float *h = c->data + (size_t)r * H;
            for (int j = 0; j < H; j++) {
                float rv = sigm(gi[j] + gh[j]), zv = sigm(gi[H + j] + gh[H + j]);
                float nv = tanhf(gi[2 * H + j] + rv * gh[2 * H + j]);
                o[(size_t)r * H + j] = (1.0f - zv) * nv + zv * h[j];
            }
        }
        break;
    }
    case DP_OP_SEG_DOT:
        for (int s = 0; s < t->seg->n; s++)
            for (int i = t->seg->off[s]; i < t->seg->off[s + 1]; i++) {
                float e = 0;
                for (int j = 0; j < a->cols; j++)
                    e += a->data[(size_t)i * a->cols + j] * b->data[(size_t)s * b->cols + j];
                o[i] = e;
            }
        break;
    case DP_OP_SEG_WSUM:
        memset(o, 0, n * sizeof *o);
        for (int s = 0; s < t->seg->n; s++)
            for (int i = t->seg->off[s]; i < t->seg->off[s + 1]; i++)
                for (int j = 0; j < t->cols; j++)
                    o[(size_t)s * t->cols + j] += a->data[i] * b->data[(size_t)i * t->cols + j];
        break;
    case DP_OP_MSE: {
        const size_t m = (size_t)a->rows * a->cols;
        double sum = 0;
        for (size_t i = 0; i < m; i++) {
            double d = (double)a->data[i] - b->data[i];
            sum += d * d;
        }
        o[0] = (float)(sum / (double)(m ? m : 1));
        break;
    }
    case DP_OP_COUNT: DP_ASSERT(!"bad op"); break;
    }
    t->computed = true;
}

void dp_nn_forward(struct dp_ctx *ctx) {
    if (ctx->failed) return;
    for (int i = 0; i < ctx->n_nodes; i++)
        if (!ctx->nodes[i]->computed) forward_node(ctx->nodes[i]);
}

void dp_nn_invalidate(struct dp_ctx *ctx) {
    for (int i = 0; i < ctx->n_nodes; i++)
        if (ctx->nodes[i]->op != DP_OP_NONE) ctx->nodes[i]->computed = false;
}
