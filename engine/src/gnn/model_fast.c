/* Over 800 lines on purpose: each forward step and its hand-written backward stay in one file,
 * so that a change to one shows its mirror in the other (GAT and MPNN: model_fast_conv.c). */
/* model_fast.c: the fast engine of the inspector network (GCN, GIN, GAT or MPNN layers, GRU
 * update, Set2Set, MLP head): no tape, hand-written backward, every dense transform one
 * cblas_sgemm over the stacked nodes of a batch of graphs (block-diagonal CSR adjacency). A layer's
 * input transforms and the GRU input gates of the same state share one GEMM ([W | W_ih^T] packed
 * per call). The GAT and MPNN layers themselves are in model_fast_conv.c.
 * BLAS threads: this file never changes OpenBLAS's thread count (a process-wide setting). */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"
#include "kernels.h"

#define LEAKY_SLOPE 0.01f
/* A graph aggregates densely (one GEMM) when it has at least DENSE_MIN_NODES groups and at least
 * 1/DENSE_FRACTION of its adjacency is filled. */
#ifndef DENSE_FRACTION
#define DENSE_FRACTION 8
#endif
#define DENSE_MIN_NODES 16

/* o = s x (w floats) and o += v x: the rows of the sparse aggregation. */
DP_SIMD
static void row_scale(int w, float s, const float *restrict x, float *restrict o) {
    const int wb = w - w % DP_VBLOCK;
    for (int c0 = 0; c0 < wb; c0 += DP_VBLOCK)
        for (int c = 0; c < DP_VBLOCK; c++) o[c0 + c] = s * x[c0 + c];
    for (int c = wb; c < w; c++) o[c] = s * x[c];
}
DP_SIMD
static void row_axpy(int w, float v, const float *restrict x, float *restrict o) {
    const int wb = w - w % DP_VBLOCK;
    for (int c0 = 0; c0 < wb; c0 += DP_VBLOCK)
        for (int c = 0; c < DP_VBLOCK; c++) o[c0 + c] += v * x[c0 + c];
    for (int c = wb; c < w; c++) o[c] += v * x[c];
}

/* out[j] += sum_i a[i][j] (bias gradients) */
static void colsum_add(int m, int n, const float *a, int lda, float *out) {
    for (int i = 0; i < m; i++) row_axpy(n, 1.0f, a + (size_t)i * lda, out);
}

/* y = act(y + b) with act = LeakyReLU(slope) (slope 0: ReLU), one row of n. */
DP_SIMD
static void bias_act_row(int n, const float *restrict b, float *restrict y, float slope) {
    const int nb = n - n % DP_VBLOCK;
    for (int c0 = 0; c0 < nb; c0 += DP_VBLOCK)
        for (int c = 0; c < DP_VBLOCK; c++) {
            float v = y[c0 + c] + b[c0 + c];
            y[c0 + c] = v > 0 ? v : slope * v;
        }
    for (int c = nb; c < n; c++) {
        float v = y[c] + b[c];
        y[c] = v > 0 ? v : slope * v;
    }
}

/* dy *= act'(y) for act = LeakyReLU(slope) (y and its pre-activation share their sign). */
DP_SIMD
static void act_back(size_t n, const float *restrict y, float *restrict dy, float slope) {
    const size_t nb = n - n % DP_VBLOCK;
    for (size_t c0 = 0; c0 < nb; c0 += DP_VBLOCK)
        for (int c = 0; c < DP_VBLOCK; c++) dy[c0 + c] *= y[c0 + c] > 0 ? 1.0f : slope;
    for (size_t c = nb; c < n; c++) dy[c] *= y[c] > 0 ? 1.0f : slope;
}

/* GRU backward of one row: from dx' (ds) and the saved y, r, z, n, ghn to dy (= ds z, the direct
 * path), the input-gate gradients (ir, iz, in) and the hidden-gate gradients (hr, hz, hn). Each
 * block is its own restrict pointer so that the stores vectorise. */
DP_SIMD
static void gru_back_row(int H, const float *restrict ds, const float *restrict y,
                         const float *restrict r, const float *restrict z,
                         const float *restrict n, const float *restrict g, float *restrict dy,
                         float *restrict ir, float *restrict iz, float *restrict in,
                         float *restrict hr, float *restrict hz, float *restrict hn) {
    const int hb = H - H % DP_VBLOCK;
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
    for (int j0 = 0; j0 < hb; j0 += DP_VBLOCK)
        for (int jj = 0; jj < DP_VBLOCK; jj++) GRU_BACK(j0 + jj);
    for (int j = hb; j < H; j++) GRU_BACK(j);
#undef GRU_BACK
}

/* ---- batch ---- */

void dp_fx_batch_free(struct dp_fx_batch *b) {
    if (!b) return;
    free(b->node_off);
    free(b->graph_of);
    free(b->row_ptr);
    free(b->col);
    free(b->gcn_val);
    free(b->gcn_self);
    free(b->x);
    free(b->dense_off);
    free(b->dense_gcn);
    free(b->dense_one);
    memset(b, 0, sizeof *b);
}

/* About 1 s of one core for a width-64 inspector (the published rules reach it near 6,700
 * groups; 100 groups cost 15,000). */
#define FX_MAX_WORK 6.7e7

static int graph_steps(const struct dp_model *m, int n) {
    return m->arch.set2set_steps > 0 ? m->arch.set2set_steps : n;
}

enum dp_status dp_fx_batch_build(const struct dp_model *m, const struct dp_grouped *const *g,
                                 int n, struct dp_fx_batch *b, struct dp_error *err) {
    memset(b, 0, sizeof *b);
    const int F = m->arch.n_feat;
    if (n < 1) return dp_error_set(err, DP_ERR_INVALID, "batch: no graphs");
    b->n_graphs = n;
    b->n_layers = dp_arch_n_layers(&m->arch, g[0]->n_groups);
    b->steps = graph_steps(m, g[0]->n_groups);
    /* Layers and Set2Set steps may grow with the group count (published: N/2 and N), so a graph's
     * cost can grow as N^2: refuse what would run for seconds to hours instead of hanging. */
    const double work = (double)(b->n_layers + b->steps) * g[0]->n_groups;
    if (work > FX_MAX_WORK)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: %d groups need %d graph layers and %d Set2Set steps under this "
                            "inspector's rules (more than %.0e layer-or-step x group passes); "
                            "inspectors learn from graphs coarsened to about 100 groups "
                            "(`--groups`)", g[0]->graph ? g[0]->graph : "graph", g[0]->n_groups,
                            b->n_layers, b->steps, FX_MAX_WORK);
    long total = 0, nnz = 0;
    for (int k = 0; k < n; k++) {
        if (g[k]->n_groups < 1)
            return dp_error_set(err, DP_ERR_SHAPE, "batch: graph %d has no groups", k);
        if (F > DP_N_FEATURES && !g[k]->cost)
            return dp_error_set(err, DP_ERR_INVALID,
                                "batch: graph %d (%s) lacks the cost features this inspector "
                                "reads (build the dataset with --cost-features)", k,
                                g[k]->graph ? g[k]->graph : "graph");
        if (dp_arch_n_layers(&m->arch, g[k]->n_groups) != b->n_layers ||
            graph_steps(m, g[k]->n_groups) != b->steps)
            return dp_error_set(err, DP_ERR_SHAPE,
                                "batch: graph %d (%d groups) needs another layer or step count "
                                "than graph 0 (%d groups)", k, g[k]->n_groups, g[0]->n_groups);
        total += g[k]->n_groups;
        nnz += 2L * g[k]->n_edges;
    }
    if (total > 100000000L || nnz > 1000000000L)
        return dp_error_set(err, DP_ERR_INVALID, "batch: too large (%ld nodes)", total);
    const int M = (int)total;
    b->n_nodes = M;
    b->node_off = malloc((size_t)(n + 1) * sizeof *b->node_off);
    b->graph_of = malloc((size_t)M * sizeof *b->graph_of);
    b->row_ptr = calloc((size_t)M + 1, sizeof *b->row_ptr);
    b->col = malloc((size_t)(nnz + 1) * sizeof *b->col);
    b->gcn_val = malloc((size_t)(nnz + 1) * sizeof *b->gcn_val);
    b->gcn_self = malloc((size_t)M * sizeof *b->gcn_self);
    b->x = malloc((size_t)M * F * sizeof *b->x);
    int *fill = malloc((size_t)M * sizeof *fill);
    if (!b->node_off || !b->graph_of || !b->row_ptr || !b->col || !b->gcn_val || !b->gcn_self ||
        !b->x || !fill) {
        free(fill);
        dp_fx_batch_free(b);
        return dp_error_set(err, DP_ERR_NOMEM, "batch: out of memory");
    }
    int off = 0;
    for (int k = 0; k < n; k++) {
        b->node_off[k] = off;
        const struct dp_grouped *gk = g[k];
        for (int i = 0; i < gk->n_groups; i++) {
            b->graph_of[off + i] = k;
            for (int f = 0; f < F; f++)
                b->x[(size_t)(off + i) * F + f] = dp_arch_feat(&m->arch, f, dp_grouped_feat(gk, i, f));
        }
        for (int e = 0; e < gk->n_edges; e++) {
            b->row_ptr[off + gk->edges[2 * e] + 1]++;
            b->row_ptr[off + gk->edges[2 * e + 1] + 1]++;
        }
        off += gk->n_groups;
    }
    b->node_off[n] = off;
    for (int i = 0; i < M; i++) b->row_ptr[i + 1] += b->row_ptr[i];
    memcpy(fill, b->row_ptr, (size_t)M * sizeof *fill);
    for (int k = 0; k < n; k++) {
        const struct dp_grouped *gk = g[k];
        const int o = b->node_off[k];
        for (int e = 0; e < gk->n_edges; e++) {
            int i = o + gk->edges[2 * e], j = o + gk->edges[2 * e + 1];
            b->col[fill[i]++] = j;
            b->col[fill[j]++] = i;
        }
    }
    free(fill);
    /* GCN normalisation: d_i = 1 + degree (self loop included). */
    for (int i = 0; i < M; i++) {
        float di = (float)(1 + b->row_ptr[i + 1] - b->row_ptr[i]);
        b->gcn_self[i] = 1.0f / di;
    }
    for (int i = 0; i < M; i++) {
        float di = (float)(1 + b->row_ptr[i + 1] - b->row_ptr[i]);
        for (int p = b->row_ptr[i]; p < b->row_ptr[i + 1]; p++) {
            int j = b->col[p];
            float dj = (float)(1 + b->row_ptr[j + 1] - b->row_ptr[j]);
            b->gcn_val[p] = 1.0f / sqrtf(di * dj);
        }
    }
    /* dense blocks for graphs whose adjacency is at least 1/DENSE_FRACTION full */
    long dense_total = 0;
    b->dense_off = malloc((size_t)n * sizeof *b->dense_off);
    if (!b->dense_off) goto nomem;
    for (int k = 0; k < n; k++) {
        const long nk = b->node_off[k + 1] - b->node_off[k];
        const long ek = b->row_ptr[b->node_off[k + 1]] - b->row_ptr[b->node_off[k]];
        b->dense_off[k] = nk >= DENSE_MIN_NODES && ek * DENSE_FRACTION >= nk * nk ? dense_total : -1;
        if (b->dense_off[k] >= 0) dense_total += nk * nk;
    }
    if (dense_total > 0) {
        b->dense_gcn = calloc((size_t)dense_total, sizeof *b->dense_gcn);
        b->dense_one = calloc((size_t)dense_total, sizeof *b->dense_one);
        if (!b->dense_gcn || !b->dense_one) goto nomem;
        for (int k = 0; k < n; k++) {
            if (b->dense_off[k] < 0) continue;
            const int o = b->node_off[k], nk = b->node_off[k + 1] - o;
            float *dg = b->dense_gcn + b->dense_off[k], *d1 = b->dense_one + b->dense_off[k];
            for (int i = o; i < o + nk; i++)
                for (int p = b->row_ptr[i]; p < b->row_ptr[i + 1]; p++) {
                    dg[(size_t)(i - o) * nk + (b->col[p] - o)] = b->gcn_val[p];
                    d1[(size_t)(i - o) * nk + (b->col[p] - o)] = 1.0f;
                }
        }
    }
    return DP_OK;
nomem:
    dp_fx_batch_free(b);
    return dp_error_set(err, DP_ERR_NOMEM, "batch: out of memory");
}

/* out_i = self_i * in_i + sum_j val_ij in_j (val NULL: 1; self NULL: selfc), graph by graph:
 * CSR rows for sparse graphs, one GEMM with the dense block for dense ones. in has stride ldi,
 * out stride ldo, width w. The matrix is symmetric, so this is also its transpose. */
static void csr_agg(const struct dp_fx_batch *b, const float *val, const float *self, float selfc,
                    int w, const float *in, int ldi, float *out, int ldo) {
    for (int k = 0; k < b->n_graphs; k++) {
        const int i0 = b->node_off[k], i1 = b->node_off[k + 1];
        for (int i = i0; i < i1; i++)
            row_scale(w, self ? self[i] : selfc, in + (size_t)i * ldi, out + (size_t)i * ldo);
        if (b->dense_off[k] >= 0) {
            const int nk = i1 - i0, lda = nk;
            const float *A = (val ? b->dense_gcn : b->dense_one) + b->dense_off[k];
            dp_kn_gemm(false, false, nk, w, nk, A, lda, in + (size_t)i0 * ldi, ldi, 1.0f,
                       out + (size_t)i0 * ldo, ldo);
            continue;
        }
        for (int i = i0; i < i1; i++) {
            float *o = out + (size_t)i * ldo;
            for (int p = b->row_ptr[i]; p < b->row_ptr[i + 1]; p++)
                row_axpy(w, val ? val[p] : 1.0f, in + (size_t)b->col[p] * ldi, o);
        }
    }
}

/* ---- work buffer ---- */

void dp_fx_work_free(struct dp_fx_work *w) {
    if (!w) return;
    free(w->buf);
    free(w->bbuf);
    memset(w, 0, sizeof *w);
}

/* Saved M x H blocks per layer: y, r, z, n, ghn; then GIN: agg, h1; GAT: wh; MPNN: agg, u. */
static int n_slots(const struct dp_model *m) {
    switch (m->arch.layer) {
    case DP_LAYER_GIN:
    case DP_LAYER_MPNN: return 7;
    case DP_LAYER_GAT: return 6;
    default: return 5;
    }
}

size_t dp_fx_head_act_size(const struct dp_model *m, int B) {
    return (size_t)B * (2 * (size_t)m->arch.hidden + (size_t)m->arch.n_out);
}

/* Layout of the work buffer for a batch. The scratch tmp holds P (M x p_w: a layer's packed
 * input transforms), GH (gh floats: the GRU's hidden gates, or a GAT or MPNN layer's scratch
 * before them), Set2Set's gates and the packed weights (pack floats). */
struct fx_layout {
    size_t states, save, s2s, emb, head, tmp, total;
    size_t s2s_step; /* floats per Set2Set step */
    size_t p_w, gh, pack;
};

static size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

static struct fx_layout layout(const struct dp_model *m, const struct dp_fx_batch *b, bool save) {
    const size_t H = (size_t)m->arch.hidden, M = (size_t)b->n_nodes, B = (size_t)b->n_graphs;
    const size_t L = (size_t)b->n_layers, T = (size_t)b->steps;
    struct fx_layout l;
    size_t at = 0;
#define TAKE(field, n) (l.field = at, at += (((n) + 15) & ~(size_t)15))
    TAKE(states, (save ? L : 2) * M * H);
    TAKE(save, (save ? L : 1) * (size_t)n_slots(m) * M * H);
    l.s2s_step = B * 3 * H + B * 4 * H + B * H + B * H + M;
    TAKE(s2s, (save ? T + 1 : 2) * l.s2s_step);
    TAKE(emb, B * 2 * H);
    TAKE(head, dp_fx_head_act_size(m, (int)B));
    l.p_w = max_size(4 * H, (size_t)dp_fx_pack_width(m));
    l.gh = M * 3 * H;
    if (m->arch.layer == DP_LAYER_GAT) l.gh = max_size(l.gh, dp_fx_gat_scratch(m, b));
    l.pack = 4 * H * 3 * H + 4 * H;
    if (m->arch.layer == DP_LAYER_MPNN) l.pack = max_size(l.pack, dp_fx_mpnn_pack_size(m));
    TAKE(tmp, M * l.p_w + l.gh + B * 4 * H + l.pack);
#undef TAKE
    l.total = at;
    return l;
}

/* ---- GRU ---- */

/* One row of the GRU update: x' from input gates a (+bih), hidden gates h (+bhh) and hidden y;
 * r, z, n and ghn saved for the backward. */
DP_SIMD
static void gru_row(int H, const float *restrict a, const float *restrict h,
                    const float *restrict bih, const float *restrict bhh, const float *restrict y,
                    float *restrict o, float *restrict r, float *restrict z, float *restrict n,
                    float *restrict g) {
    const int hb = H - H % DP_VBLOCK;
#define GRU_FWD(j)                                                                               \
    do {                                                                                         \
        float rv = dp_sigmoidf(a[j] + bih[j] + h[j] + bhh[j]);                                   \
        float zv = dp_sigmoidf(a[H + j] + bih[H + j] + h[H + j] + bhh[H + j]);                   \
        float gn = h[2 * H + j] + bhh[2 * H + j];                                                \
        float nv = dp_tanhf(a[2 * H + j] + bih[2 * H + j] + rv * gn);                            \
        o[j] = (1.0f - zv) * nv + zv * y[j];                                                     \
        r[j] = rv;                                                                               \
        z[j] = zv;                                                                               \
        n[j] = nv;                                                                               \
        g[j] = gn;                                                                               \
    } while (0)
    /* fixed-width blocks for the vectoriser (as in gru_back_row), then the tail */
    for (int j0 = 0; j0 < hb; j0 += DP_VBLOCK)
        for (int jj = 0; jj < DP_VBLOCK; jj++) GRU_FWD(j0 + jj);
    for (int j = hb; j < H; j++) GRU_FWD(j);
#undef GRU_FWD
}

/* x' = GRU(...) over M rows: gi has stride ldgi, gh stride 3H; r, z, n, ghn are M x H. */
static void gru_gates(int M, int H, const float *gi, int ldgi, const float *gh, const float *bih,
                      const float *bhh, const float *y, float *xo, float *sr, float *sz, float *sn,
                      float *sg) {
    for (int i = 0; i < M; i++) {
        const size_t q = (size_t)i * H;
        gru_row(H, gi + (size_t)i * ldgi, gh + (size_t)i * 3 * H, bih, bhh, y + q, xo + q, sr + q,
                sz + q, sn + q, sg + q);
    }
}

/* ---- head ---- */

void dp_fx_head(const struct dp_model *m, int B, const float *emb, float *out, float *act) {
    const int H = m->arch.hidden, O = m->arch.n_out;
    float *z1 = act, *z2 = act + (size_t)B * H, *zo = act + (size_t)2 * B * H;
    const int din[3] = {2 * H, H, H}, dout[3] = {H, H, O};
    const float *in[3] = {emb, z1, z2};
    float *res[3] = {z1, z2, zo};
    for (int k = 0; k < 3; k++) {
        const float *W = dp_model_pdata(m, m->mlp_w[k]), *bb = dp_model_pdata(m, m->mlp_b[k]);
        float *r = res[k];
        for (int i = 0; i < B; i++) memcpy(r + (size_t)i * dout[k], bb, (size_t)dout[k] * sizeof *r);
        dp_kn_gemm(false, true, B, dout[k], din[k], in[k], din[k], W, din[k], 1.0f, r, dout[k]);
        if (k < 2)
            for (size_t i = 0; i < (size_t)B * dout[k]; i++) r[i] = r[i] > 0 ? r[i] : 0.0f;
    }
    for (size_t i = 0; i < (size_t)B * O; i++) out[i] = zo[i] > 0 ? zo[i] : LEAKY_SLOPE * zo[i];
}

enum dp_status dp_fx_head_backward(const struct dp_model *m, int B, const float *emb,
                                   const float *act, const float *dout, float *const *grads,
                                   float *demb) {
    const int H = m->arch.hidden, O = m->arch.n_out;
    const float *z1 = act, *z2 = act + (size_t)B * H, *zo = act + (size_t)2 * B * H;
    float *d = malloc(((size_t)B * (O + 2 * H)) * sizeof *d);
    if (!d) return DP_ERR_NOMEM;
    float *dzo = d, *dz2 = d + (size_t)B * O, *dz1 = dz2 + (size_t)B * H;
    for (size_t i = 0; i < (size_t)B * O; i++) dzo[i] = dout[i] * (zo[i] > 0 ? 1.0f : LEAKY_SLOPE);
    const int din[3] = {2 * H, H, H}, dd[3] = {H, H, O};
    const float *in[3] = {emb, z1, z2};
    float *dres[3] = {dz1, dz2, dzo};
    for (int k = 2; k >= 0; k--) {
        float *dr = dres[k];
        const float *W = dp_model_pdata(m, m->mlp_w[k]);
        if (grads && grads[m->mlp_w[k]])
            dp_kn_gemm(true, false, dd[k], din[k], B, dr, dd[k], in[k], din[k], 1.0f,
                       grads[m->mlp_w[k]], din[k]);
        if (grads && grads[m->mlp_b[k]]) colsum_add(B, dd[k], dr, dd[k], grads[m->mlp_b[k]]);
        if (k > 0) {
            float *dprev = dres[k - 1];
            const float *prev = in[k];
            dp_kn_gemm(false, false, B, din[k], dd[k], dr, dd[k], W, din[k], 0.0f, dprev, din[k]);
            for (size_t i = 0; i < (size_t)B * din[k]; i++)
                if (!(prev[i] > 0)) dprev[i] = 0.0f;
        } else if (demb) {
            dp_kn_gemm(false, false, B, din[0], dd[0], dr, dd[0], W, din[0], 0.0f, demb, din[0]);
        }
    }
    free(d);
    return DP_OK;
}

/* ---- forward ---- */

/* Packs [W (k x H) | W_ih[:, :k]^T (k x 3H)] into out (k x 4H). */
static void pack_gcn(int k, int H, const float *W, const float *wih, float *out) {
    for (int c = 0; c < k; c++) {
        memcpy(out + (size_t)c * 4 * H, W + (size_t)c * H, (size_t)H * sizeof *out);
        for (int j = 0; j < 3 * H; j++) out[(size_t)c * 4 * H + H + j] = wih[(size_t)j * H + c];
    }
}

enum dp_status dp_fx_forward(const struct dp_model *m, const struct dp_fx_batch *b,
                             struct dp_fx_work *w, bool save, float *emb, float *out,
                             struct dp_error *err) {
    const struct dp_arch *a = &m->arch;
    const int H = a->hidden, F = a->n_feat, M = b->n_nodes, B = b->n_graphs;
    const int L = b->n_layers, T = b->steps, S = n_slots(m);
    const bool gru = a->gru;
    struct fx_layout lo = layout(m, b, save);
    if (w->cap < lo.total) {
        free(w->buf);
        w->buf = aligned_alloc(64, lo.total * sizeof *w->buf);
        w->cap = w->buf ? lo.total : 0;
        if (!w->buf) return dp_error_set(err, DP_ERR_NOMEM, "forward: out of memory");
    }
    w->states = w->buf + lo.states;
    w->save = w->buf + lo.save;
    w->s2s = w->buf + lo.s2s;
    w->emb = w->buf + lo.emb;
    w->head = w->buf + lo.head;
    w->tmp = w->buf + lo.tmp;
    w->slots = S;
    w->saved = save;
    const size_t MH = (size_t)M * H;
    float *P = w->tmp;                        /* M x p_w */
    float *GH = P + (size_t)M * lo.p_w;       /* gh floats */
    float *wpack = GH + lo.gh + (size_t)B * 4 * H; /* 4H x 3H, or a layer's packed weights */
    const float *wih = dp_model_pdata(m, m->gru_wih), *whh = dp_model_pdata(m, m->gru_whh);
    const float *bih = dp_model_pdata(m, m->gru_bih), *bhh = dp_model_pdata(m, m->gru_bhh);

    /* ---- body ---- */
    for (int l = 0; l < L; l++) {
        const int c = l == 0 ? 0 : 1;
        const struct dp_conv_idx *cv = &m->conv[c];
        const int k = cv->in;
        const float *in = l == 0 ? b->x : w->states + (size_t)(save ? l - 1 : (l - 1) % 2) * MH;
        const int ldin = l == 0 ? F : H;
        float *xo = w->states + (size_t)(save ? l : l % 2) * MH;
        float *sv = w->save + (size_t)(save ? l : 0) * S * MH;
        float *y = sv, *sr = sv + MH, *sz = sv + 2 * MH, *sn = sv + 3 * MH, *sg = sv + 4 * MH;
        const float *gi = NULL;
        int ldgi = 0;
        if (a->layer == DP_LAYER_GCN || a->layer == DP_LAYER_GAT) {
            /* P = in [W | W_ih^T]: the layer's transform and the GRU input gates in one GEMM. */
            const int ldp = gru ? 4 * H : H;
            const float *W = dp_model_pdata(m, cv->W), *bb = dp_model_pdata(m, cv->b);
            if (gru) {
                if (l <= 1) pack_gcn(k, H, W, wih, wpack);
                dp_kn_gemm(false, false, M, ldp, k, in, ldin, wpack, ldp, 0.0f, P, ldp);
            } else {
                dp_kn_gemm(false, false, M, H, k, in, ldin, W, H, 0.0f, P, ldp);
            }
            if (a->layer == DP_LAYER_GCN) {
                csr_agg(b, b->gcn_val, b->gcn_self, 0.0f, H, P, ldp, y, H);
            } else {
                dp_fx_gat(m, b, c, P, ldp, y, GH);
                if (save) /* wh, for the backward */
                    for (int i = 0; i < M; i++)
                        memcpy(sv + 5 * MH + (size_t)i * H, P + (size_t)i * ldp,
                               (size_t)H * sizeof *sv);
            }
            for (int i = 0; i < M; i++) bias_act_row(H, bb, y + (size_t)i * H, LEAKY_SLOPE);
            gi = P + H;
            ldgi = ldp;
        } else if (a->layer == DP_LAYER_MPNN) {
            /* P = in [pre (both halves) | post (node half) | W_ih^T] in one GEMM */
            const int ldp = dp_fx_pack_width(m);
            if (l <= 1) dp_fx_mpnn_pack(m, c, wpack);
            dp_kn_gemm(false, false, M, ldp, k, in, ldin, wpack, ldp, 0.0f, P, ldp);
            dp_fx_mpnn(m, b, c, P, ldp, wpack, y, sv + 5 * MH, sv + 6 * MH);
            const float *bb = dp_model_pdata(m, cv->lin_b);
            for (int i = 0; i < M; i++) bias_act_row(H, bb, y + (size_t)i * H, LEAKY_SLOPE);
            gi = P + 3 * H;
            ldgi = ldp;
        } else {
            /* GIN: y = relu(relu(((1+eps) in + A in) W0^T + b0) W1^T + b1). */
            const float eps = *dp_model_pdata(m, cv->eps);
            float *agg = sv + 5 * MH, *h1 = sv + 6 * MH;
            const int mid = (int)m->p[cv->fc_w[0]].shape[0];
            csr_agg(b, NULL, NULL, 1.0f + eps, k, in, ldin, agg, k);
            const float *W0 = dp_model_pdata(m, cv->fc_w[0]), *b0 = dp_model_pdata(m, cv->fc_b[0]);
            const float *W1 = dp_model_pdata(m, cv->fc_w[1]), *b1 = dp_model_pdata(m, cv->fc_b[1]);
            dp_kn_gemm(false, true, M, mid, k, agg, k, W0, k, 0.0f, h1, mid);
            for (int i = 0; i < M; i++) bias_act_row(mid, b0, h1 + (size_t)i * mid, 0.0f);
            dp_kn_gemm(false, true, M, H, mid, h1, mid, W1, mid, 0.0f, y, H);
            for (int i = 0; i < M; i++) bias_act_row(H, b1, y + (size_t)i * H, 0.0f);
            if (gru) {
                /* input gates from the (zero-padded) previous state: W_ih[:, :k] */
                dp_kn_gemm(false, true, M, 3 * H, k, in, ldin, wih, H, 0.0f, P, 3 * H);
                gi = P;
                ldgi = 3 * H;
            }
        }
        if (gru) {
            dp_kn_gemm(false, true, M, 3 * H, H, y, H, whh, H, 0.0f, GH, 3 * H);
            gru_gates(M, H, gi, ldgi, GH, bih, bhh, y, xo, sr, sz, sn, sg);
        } else {
            memcpy(xo, y, MH * sizeof *xo);
        }
    }
    const float *E = w->states + (size_t)(save ? L - 1 : (L - 1) % 2) * MH;

    /* ---- Set2Set ---- */
    const int G4 = 4 * H, I3 = 3 * H;
    float *wl = wpack; /* [W_ih | W_hh] (4H x 3H) */
    float *bl = wl + (size_t)G4 * I3;
    const float *sih = dp_model_pdata(m, m->s2s_wih), *shh = dp_model_pdata(m, m->s2s_whh);
    const float *sbi = dp_model_pdata(m, m->s2s_bih), *sbh = dp_model_pdata(m, m->s2s_bhh);
    for (int r = 0; r < G4; r++) {
        memcpy(wl + (size_t)r * I3, sih + (size_t)r * 2 * H, (size_t)2 * H * sizeof *wl);
        memcpy(wl + (size_t)r * I3 + 2 * H, shh + (size_t)r * H, (size_t)H * sizeof *wl);
        bl[r] = sbi[r] + sbh[r];
    }
    float *G = GH; /* B x 4H pre-activations */
    for (int t = 0; t < T; t++) {
        /* step t reads inp_t from its slot (zeros at t = 0) and writes inp_{t+1} to the next */
        float *st = w->s2s + (size_t)(save ? t : t % 2) * lo.s2s_step;
        float *nx = w->s2s + (size_t)(save ? t + 1 : (t + 1) % 2) * lo.s2s_step;
        float *inp = st, *act = st + (size_t)B * I3, *cc = act + (size_t)B * G4;
        float *tc = cc + (size_t)B * H, *att = tc + (size_t)B * H;
        float *ninp = nx, *nact = nx + (size_t)B * I3, *ncc = nact + (size_t)B * G4;
        (void)ncc;
        if (t == 0) memset(st, 0, lo.s2s_step * sizeof *st);
        const float *cprev = t == 0 ? NULL : w->s2s + (size_t)(save ? t - 1 : (t - 1) % 2) *
                                                              lo.s2s_step + (size_t)B * (I3 + G4);
        for (int i = 0; i < B; i++) memcpy(G + (size_t)i * G4, bl, (size_t)G4 * sizeof *G);
        dp_kn_gemm(false, true, B, G4, I3, inp, I3, wl, I3, 1.0f, G, G4);
        for (int i = 0; i < B; i++) {
            const float *g = G + (size_t)i * G4;
            float *ac = act + (size_t)i * G4, *c = cc + (size_t)i * H, *th = tc + (size_t)i * H;
            float *q = ninp + (size_t)i * I3; /* next input: [h, r, h] */
            for (int j = 0; j < H; j++) {
                float ig = dp_sigmoidf(g[j]), fg = dp_sigmoidf(g[H + j]);
                float gg = dp_tanhf(g[2 * H + j]), og = dp_sigmoidf(g[3 * H + j]);
                ac[j] = ig;
                ac[H + j] = fg;
                ac[2 * H + j] = gg;
                ac[3 * H + j] = og;
                float cv = fg * (cprev ? cprev[(size_t)i * H + j] : 0.0f) + ig * gg;
                c[j] = cv;
                th[j] = dp_tanhf(cv);
                q[j] = og * th[j];
                q[2 * H + j] = q[j];
            }
            /* attention over graph i's nodes */
            const int n0 = b->node_off[i], nn = b->node_off[i + 1] - n0;
            float *e = att + n0;
            const float *En = E + (size_t)n0 * H;
            cblas_sgemv(CblasRowMajor, CblasNoTrans, nn, H, 1.0f, En, H, q, 1, 0.0f, e, 1);
            float mx = e[0];
            for (int j = 1; j < nn; j++) mx = e[j] > mx ? e[j] : mx;
            float sum = 0;
            for (int j = 0; j < nn; j++) sum += (e[j] = expf(e[j] - mx));
            const float inv = 1.0f / sum;
            for (int j = 0; j < nn; j++) e[j] *= inv;
            cblas_sgemv(CblasRowMajor, CblasTrans, nn, H, 1.0f, En, H, e, 1, 0.0f, q + H, 1);
        }
    }
    float *fin = w->s2s + (size_t)(save ? T : T % 2) * lo.s2s_step;
    for (int i = 0; i < B; i++)
        memcpy(w->emb + (size_t)i * 2 * H, fin + (size_t)i * I3, (size_t)2 * H * sizeof *w->emb);
    if (emb) memcpy(emb, w->emb, (size_t)B * 2 * H * sizeof *emb);
    if (out || save) {
        float *o = out ? out : w->tmp;
        dp_fx_head(m, B, w->emb, o, w->head);
    }
    return DP_OK;
}

/* ---- backward ---- */

enum dp_status dp_fx_backward(const struct dp_model *m, const struct dp_fx_batch *b,
                              struct dp_fx_work *w, const float *dout, float *const *grads,
                              bool body, float *dx, struct dp_error *err) {
    DP_ASSERT(w->saved);
    const struct dp_arch *a = &m->arch;
    const int H = a->hidden, F = a->n_feat, M = b->n_nodes, B = b->n_graphs;
    const int L = b->n_layers, T = b->steps, S = w->slots;
    const bool gru = a->gru, gin = a->layer == DP_LAYER_GIN, mpnn = a->layer == DP_LAYER_MPNN;
    const size_t MH = (size_t)M * H;
    const int G4 = 4 * H, I3 = 3 * H;
    struct fx_layout lo = layout(m, b, true);
    const size_t pw = lo.p_w; /* columns of dP and of the fused weight gradients */
    size_t conv_scr = 0;      /* a GAT or MPNN layer's backward scratch */
    if (a->layer == DP_LAYER_GAT) conv_scr = dp_fx_gat_scratch(m, b);
    if (mpnn) conv_scr = 3 * MH;
#define GRAD(i) ((grads && (i) >= 0) ? grads[i] : NULL)

    /* all scratch in one buffer kept in w across steps (no page faults per training step) */
    size_t need = MH                    /* dE / dS */
                  + (size_t)M * pw      /* dP (GCN, GAT, MPNN) or dGI (GIN) */
                  + (size_t)M * 3 * H   /* dGH */
                  + MH + MH             /* dy, dsin */
                  + (size_t)T * B * G4  /* dG of every Set2Set step */
                  + (size_t)B * (I3 + 2 * H) /* dinp, dh, dc */
                  + (size_t)G4 * I3 + G4     /* dWl, dbl */
                  + 2 * (size_t)H * pw       /* dWcat0, dWcat1 */
                  + (size_t)B * 2 * H        /* demb */
                  + (size_t)B * H + (size_t)M + 1            /* dh, da */
                  + (size_t)(F + H) * pw + 4 * (size_t)H     /* packed weights */
                  + conv_scr + 64;
    if (w->bcap < need) {
        free(w->bbuf);
        w->bbuf = malloc(need * sizeof *w->bbuf);
        w->bcap = w->bbuf ? need : 0;
    }
    if (!w->bbuf) return dp_error_set(err, DP_ERR_NOMEM, "backward: out of memory");
    float *scr = w->bbuf;
    memset(scr, 0, need * sizeof *scr);
    float *dS = scr, *dP = dS + MH, *dGH = dP + (size_t)M * pw, *dy = dGH + (size_t)M * 3 * H;
    float *dsin = dy + MH, *dGall = dsin + MH, *dq = dGall + (size_t)T * B * G4;
    float *dhrec = dq + (size_t)B * I3, *dc = dhrec + (size_t)B * H;
    float *dWl = dc + (size_t)B * H, *dbl = dWl + (size_t)G4 * I3;
    float *dWc0 = dbl + G4, *dWc1 = dWc0 + (size_t)H * pw;
    float *demb = dWc1 + (size_t)H * pw, *dh = demb + (size_t)B * 2 * H;
    float *da = dh + (size_t)B * H, *wpack0 = da + M + 1;
    float *wpack1 = wpack0 + (size_t)F * pw + 2 * H, *cscr = wpack1 + (size_t)H * pw + 2 * H;

    if (dp_fx_head_backward(m, B, w->emb, w->head, dout, grads, demb))
        return dp_error_set(err, DP_ERR_NOMEM, "backward: out of memory");
    if (!body && !dx) return DP_OK;

    /* ---- Set2Set backward ---- */
    const float *E = w->states + (size_t)(L - 1) * MH;
    for (int i = 0; i < B; i++) memcpy(dq + (size_t)i * I3, demb + (size_t)i * 2 * H,
                                       (size_t)2 * H * sizeof *dq);
    for (int t = T - 1; t >= 0; t--) {
        float *st = w->s2s + (size_t)t * lo.s2s_step;
        float *inp = st, *act = st + (size_t)B * I3, *cc = act + (size_t)B * G4;
        float *tc = cc + (size_t)B * H, *att = tc + (size_t)B * H;
        const float *cprev = t == 0 ? NULL : w->s2s + (size_t)(t - 1) * lo.s2s_step +
                                                 (size_t)B * (I3 + G4);
        float *dG = dGall + (size_t)t * B * G4;
        for (int i = 0; i < B; i++) {
            const float *ac = act + (size_t)i * G4, *th = tc + (size_t)i * H;
            float *dhi = dh + (size_t)i * H;
            const float *dqi = dq + (size_t)i * I3;
            for (int j = 0; j < H; j++) dhi[j] = dqi[j] + dhrec[(size_t)i * H + j];
            /* attention backward: r = sum a_j E_j, a = softmax(E q) */
            const float *dr = dqi + H;
            float q[4096];
            for (int j = 0; j < H; j++) q[j] = ac[3 * H + j] * th[j];
            const int n0 = b->node_off[i], nn = b->node_off[i + 1] - n0;
            const float *En = E + (size_t)n0 * H, *ai = att + n0;
            float *dEn = dS + (size_t)n0 * H, *dai = da + n0;
            cblas_sgemv(CblasRowMajor, CblasNoTrans, nn, H, 1.0f, En, H, dr, 1, 0.0f, dai, 1);
            float s = 0;
            for (int j = 0; j < nn; j++) s += ai[j] * dai[j];
            for (int j = 0; j < nn; j++) dai[j] = ai[j] * (dai[j] - s); /* de_j */
            cblas_sgemv(CblasRowMajor, CblasTrans, nn, H, 1.0f, En, H, dai, 1, 1.0f, dhi, 1);
            /* dE_j += a_j dr + de_j q */
            cblas_sger(CblasRowMajor, nn, H, 1.0f, ai, 1, dr, 1, dEn, H);
            cblas_sger(CblasRowMajor, nn, H, 1.0f, dai, 1, q, 1, dEn, H);
            /* LSTM cell backward */
            float *dg = dG + (size_t)i * G4, *dci = dc + (size_t)i * H;
            const float *ci = cprev ? cprev + (size_t)i * H : NULL;
            for (int j = 0; j < H; j++) {
                float ig = ac[j], fg = ac[H + j], gg = ac[2 * H + j], og = ac[3 * H + j];
                float dct = dci[j] + dhi[j] * og * (1.0f - th[j] * th[j]);
                float dov = dhi[j] * th[j];
                dg[j] = dct * gg * ig * (1.0f - ig);
                dg[H + j] = (ci ? dct * ci[j] : 0.0f) * fg * (1.0f - fg);
                dg[2 * H + j] = dct * ig * (1.0f - gg * gg);
                dg[3 * H + j] = dov * og * (1.0f - og);
                dci[j] = dct * fg;
            }
        }
        /* the previous step's q* and h gradients: dG [W_ih | W_hh] */
        (void)inp;
        if (t > 0) {
            /* W_l = [W_ih | W_hh]: dq*_{t-1} = dG W_ih, dh_{t-1} = dG W_hh */
            const float *sih = dp_model_pdata(m, m->s2s_wih), *shh = dp_model_pdata(m, m->s2s_whh);
            dp_kn_gemm(false, false, B, 2 * H, G4, dG, G4, sih, 2 * H, 0.0f, dq, I3);
            dp_kn_gemm(false, false, B, H, G4, dG, G4, shh, H, 0.0f, dhrec, H);
        }
    }
    /* parameter gradients of the LSTM over all steps at once */
    {
        const float *inp0 = w->s2s; /* step slots are strided by s2s_step; gather per step */
        float *gw = GRAD(m->s2s_wih), *gh = GRAD(m->s2s_whh);
        if (gw || gh) {
            for (int t = 0; t < T; t++) {
                const float *inp = inp0 + (size_t)t * lo.s2s_step;
                dp_kn_gemm(true, false, G4, I3, B, dGall + (size_t)t * B * G4, G4, inp, I3, 1.0f,
                           dWl, I3);
            }
            for (int r = 0; r < G4; r++) {
                if (gw)
                    for (int c = 0; c < 2 * H; c++) gw[(size_t)r * 2 * H + c] += dWl[(size_t)r * I3 + c];
                if (gh)
                    for (int c = 0; c < H; c++) gh[(size_t)r * H + c] += dWl[(size_t)r * I3 + 2 * H + c];
            }
        }
        colsum_add(T * B, G4, dGall, G4, dbl);
        if (GRAD(m->s2s_bih)) for (int r = 0; r < G4; r++) GRAD(m->s2s_bih)[r] += dbl[r];
        if (GRAD(m->s2s_bhh)) for (int r = 0; r < G4; r++) GRAD(m->s2s_bhh)[r] += dbl[r];
    }

    /* ---- body backward ---- */
    const float *wih = dp_model_pdata(m, m->gru_wih), *whh = dp_model_pdata(m, m->gru_whh);
    if (mpnn) {
        dp_fx_mpnn_pack(m, 0, wpack0);
        dp_fx_mpnn_pack(m, 1, wpack1);
    } else if (!gin && gru) {
        pack_gcn(F, H, dp_model_pdata(m, m->conv[0].W), wih, wpack0);
        pack_gcn(H, H, dp_model_pdata(m, m->conv[1].W), wih, wpack1);
    }
    for (int l = L - 1; l >= 0; l--) {
        const int c = l == 0 ? 0 : 1;
        const struct dp_conv_idx *cv = &m->conv[c];
        const int k = cv->in;
        const float *in = l == 0 ? b->x : w->states + (size_t)(l - 1) * MH;
        const int ldin = l == 0 ? F : H;
        const float *sv = w->save + (size_t)l * S * MH;
        const float *y = sv, *sr = sv + MH, *sz = sv + 2 * MH, *sn = sv + 3 * MH, *sg = sv + 4 * MH;
        /* GRU backward: dS -> dy, dGI (into dP at column offset), dGH */
        const int ldp = gin ? 3 * H : mpnn ? dp_fx_pack_width(m) : (gru ? 4 * H : H);
        float *dGI = gin ? dP : dP + (mpnn ? 3 * H : H);
        if (gru) {
            for (int i = 0; i < M; i++) {
                const size_t q = (size_t)i * H;
                float *gi = dGI + (size_t)i * ldp, *gh = dGH + (size_t)i * 3 * H;
                gru_back_row(H, dS + q, y + q, sr + q, sz + q, sn + q, sg + q, dy + q, gi,
                             gi + H, gi + 2 * H, gh, gh + H, gh + 2 * H);
            }
            if (GRAD(m->gru_whh)) dp_kn_gemm(true, false, 3 * H, H, M, dGH, 3 * H, y, H, 1.0f,
                                             GRAD(m->gru_whh), H);
            if (GRAD(m->gru_bhh)) colsum_add(M, 3 * H, dGH, 3 * H, GRAD(m->gru_bhh));
            if (GRAD(m->gru_bih)) colsum_add(M, 3 * H, dGI, ldp, GRAD(m->gru_bih));
            dp_kn_gemm(false, false, M, H, 3 * H, dGH, 3 * H, whh, H, 1.0f, dy, H);
        } else {
            memcpy(dy, dS, MH * sizeof *dy);
        }
        float *dnext = l == 0 ? NULL : dS; /* gradient w.r.t. this layer's input state */
        if (!gin) {
            /* leaky ReLU, bias, then the layer into dP (GCN: the aggregation, Â symmetric) */
            act_back(MH, y, dy, LEAKY_SLOPE);
            const int bias = mpnn ? cv->lin_b : cv->b; /* the layer's output bias */
            if (GRAD(bias)) colsum_add(M, H, dy, H, GRAD(bias));
            if (a->layer == DP_LAYER_GCN)
                csr_agg(b, b->gcn_val, b->gcn_self, 0.0f, H, dy, H, dP, ldp);
            else if (a->layer == DP_LAYER_GAT)
                dp_fx_gat_backward(m, b, c, sv + 5 * MH, H, dy, dP, ldp, grads, cscr);
            else
                dp_fx_mpnn_backward(m, b, c, in, ldin, l == 0 ? wpack0 : wpack1, sv + 5 * MH,
                                    sv + 6 * MH, dy, dP, ldp, grads, cscr);
            /* dWcat += in^T dP ; d in = dP Wcat^T */
            float *dWc = l == 0 ? dWc0 : dWc1;
            if (grads) dp_kn_gemm(true, false, k, ldp, M, in, ldin, dP, ldp, 1.0f, dWc, ldp);
            const float *wcat = gru || mpnn ? (l == 0 ? wpack0 : wpack1) : dp_model_pdata(m, cv->W);
            float *dst = l == 0 ? (dx ? dx : NULL) : dsin;
            if (dst) dp_kn_gemm(false, true, M, k, ldp, dP, ldp, wcat, ldp, 0.0f, dst, k);
        } else {
            const float eps = *dp_model_pdata(m, cv->eps);
            const float *agg = sv + 5 * MH, *h1 = sv + 6 * MH;
            const int mid = (int)m->p[cv->fc_w[0]].shape[0];
            const float *W0 = dp_model_pdata(m, cv->fc_w[0]), *W1 = dp_model_pdata(m, cv->fc_w[1]);
            act_back(MH, y, dy, 0.0f);
            if (GRAD(cv->fc_w[1])) dp_kn_gemm(true, false, H, mid, M, dy, H, h1, mid, 1.0f,
                                              GRAD(cv->fc_w[1]), mid);
            if (GRAD(cv->fc_b[1])) colsum_add(M, H, dy, H, GRAD(cv->fc_b[1]));
            float *dh1 = dGH; /* free now: M x mid <= M x 3H */
            dp_kn_gemm(false, false, M, mid, H, dy, H, W1, mid, 0.0f, dh1, mid);
            act_back((size_t)M * mid, h1, dh1, 0.0f);
            if (GRAD(cv->fc_w[0])) dp_kn_gemm(true, false, mid, k, M, dh1, mid, agg, k, 1.0f,
                                              GRAD(cv->fc_w[0]), k);
            if (GRAD(cv->fc_b[0])) colsum_add(M, mid, dh1, mid, GRAD(cv->fc_b[0]));
            float *dagg = dy; /* M x k */
            dp_kn_gemm(false, false, M, k, mid, dh1, mid, W0, k, 0.0f, dagg, k);
            if (GRAD(cv->eps)) {
                double s = 0;
                for (int i = 0; i < M; i++)
                    for (int j = 0; j < k; j++)
                        s += (double)dagg[(size_t)i * k + j] * in[(size_t)i * ldin + j];
                GRAD(cv->eps)[0] += (float)s;
            }
            float *dst = l == 0 ? dx : dsin;
            if (dst) {
                csr_agg(b, NULL, NULL, 1.0f + eps, k, dagg, k, dst, k);
                if (gru) {
                    if (GRAD(m->gru_wih))
                        dp_kn_gemm(true, false, 3 * H, k, M, dGI, ldp, in, ldin, 1.0f,
                                   GRAD(m->gru_wih), H);
                    dp_kn_gemm(false, false, M, k, 3 * H, dGI, ldp, wih, H, 1.0f, dst, k);
                }
            } else if (gru && GRAD(m->gru_wih)) {
                dp_kn_gemm(true, false, 3 * H, k, M, dGI, ldp, in, ldin, 1.0f, GRAD(m->gru_wih), H);
            }
        }
        if (dnext) memcpy(dS, dsin, MH * sizeof *dS);
    }
    /* unpack the fused weight gradients */
    if (mpnn && grads) {
        dp_fx_mpnn_unpack(m, 0, dWc0, grads);
        dp_fx_mpnn_unpack(m, 1, dWc1, grads);
    } else if (!gin && grads) {
        for (int c = 0; c < 2; c++) {
            const int k = m->conv[c].in, ldp = gru ? 4 * H : H;
            const float *dWc = c == 0 ? dWc0 : dWc1;
            float *gW = GRAD(m->conv[c].W), *gI = GRAD(m->gru_wih);
            for (int r = 0; r < k; r++) {
                if (gW)
                    for (int j = 0; j < H; j++) gW[(size_t)r * H + j] += dWc[(size_t)r * ldp + j];
                if (gru && gI)
                    for (int j = 0; j < 3 * H; j++)
                        gI[(size_t)j * H + r] += dWc[(size_t)r * ldp + H + j];
            }
        }
    }
#undef GRAD
    return DP_OK;
}
