/* Over 800 lines on purpose: each forward step and its hand-written backward stay in one file,
 * so that a change to one shows its mirror in the other (GAT and MPNN: model_fast_conv.c). */
/* model_fast.c: the fast engine of the inspector network (GCN, GIN, GAT or MPNN layers, GRU
 * update, Set2Set, MLP head): no tape, hand-written backward, every dense transform one product
 * (kernels.h) over the stacked nodes of a batch of graphs (block-diagonal CSR adjacency). A
 * layer's input transforms and the GRU input gates of the same state share one product
 * ([W | W_ih^T] packed once per pass). The GAT and MPNN layers themselves are in
 * model_fast_conv.c.
 * Threads (pool.h): the forward pass splits the batch's rows among the threads of one region,
 * with one barrier per layer (a layer's row-local transforms, the barrier, then the aggregation
 * over neighbours and the row-local rest: the GRU too); Set2Set then splits the graphs into one
 * run per thread (each step's gates one product over a run). Layers alternate between two
 * buffers of transforms, so that a thread starting the next layer never overwrites rows another
 * is still aggregating. The backward pass runs on one thread (training
 * splits its graphs, model_train.c). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dp/compute.h"
#include "kernels.h"
#include "model_impl.h"
#include "pool.h"

#define LEAKY_SLOPE 0.01f
/* A graph aggregates densely (one GEMM) when it has at least DENSE_MIN_NODES groups and at least
 * 1/DENSE_FRACTION of its adjacency is filled. */
#ifndef DENSE_FRACTION
#define DENSE_FRACTION 8
#endif
#define DENSE_MIN_NODES 16

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

/* Rows [i0, i1) of out = S in with S = diag(self, or selfc) + the adjacency (values val, or 1),
 * graph by graph: CSR rows for sparse graphs, one product with the dense block for dense ones.
 * in has stride ldi, out stride ldo, width w. S is symmetric, so this is also its transpose. */
static void csr_agg(const struct dp_kn_table *K, const struct dp_fx_batch *b, const float *val,
                    const float *self, float selfc, int w, const float *in, int ldi, float *out,
                    int ldo, int i0, int i1) {
    for (int k = b->graph_of[i0]; k < b->n_graphs && b->node_off[k] < i1; k++) {
        const int o = b->node_off[k], nk = b->node_off[k + 1] - o;
        const int r0 = i0 > o ? i0 : o, r1 = i1 < o + nk ? i1 : o + nk;
        if (b->dense_off[k] < 0) {
            K->spmm(r0, r1, b->row_ptr, b->col, val, self, selfc, w, in, ldi, out, ldo);
            continue;
        }
        for (int i = r0; i < r1; i++) {
            const float s = self ? self[i] : selfc;
            for (int c = 0; c < w; c++) out[(size_t)i * ldo + c] = s * in[(size_t)i * ldi + c];
        }
        const float *A = (val ? b->dense_gcn : b->dense_one) + b->dense_off[k];
        K->gemm(false, false, r1 - r0, w, nk, A + (size_t)(r0 - o) * nk, nk, in + (size_t)o * ldi,
                ldi, 1.0f, out + (size_t)r0 * ldo, ldo);
    }
}

/* ---- work buffer ---- */

void dp_fx_work_free(struct dp_fx_work *w) {
    if (!w) return;
    free(w->buf);
    free(w->bbuf);
    memset(w, 0, sizeof *w);
}

static pthread_key_t work_key;
static pthread_once_t work_once = PTHREAD_ONCE_INIT;
static bool work_key_ok;

static void work_destroy(void *p) {
    dp_fx_work_free(p);
    free(p);
}

static void work_key_init(void) { work_key_ok = !pthread_key_create(&work_key, work_destroy); }

struct dp_fx_work *dp_fx_thread_work(void) {
    pthread_once(&work_once, work_key_init);
    if (!work_key_ok) return NULL;
    struct dp_fx_work *w = pthread_getspecific(work_key);
    if (!w && (w = calloc(1, sizeof *w)) && pthread_setspecific(work_key, w)) {
        free(w);
        w = NULL;
    }
    return w;
}

/* A thread keeps up to this many floats of work buffers between calls (64 MB: a training
 * step's saved activations of a few hundred groups); larger ones are one-offs. */
#define KEEP_FLOATS ((size_t)16 << 20)

void dp_fx_thread_work_done(struct dp_fx_work *w) {
    if (w && w->cap + w->bcap > KEEP_FLOATS) dp_fx_work_free(w);
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

/* Layout of the work buffer for a batch. The scratch tmp holds two buffers of P (M x p_w: a
 * layer's packed input transforms; layers alternate), GH (gh floats: the GRU's hidden gates,
 * then a GAT layer's scratch), Set2Set's gates (B x 4H) and the packed weights (pack floats:
 * each conv's [transform | W_ih^T], W_hh^T, W_ih^T, Set2Set's [W_ih | W_hh]^T and its bias). */
struct fx_layout {
    size_t states, save, s2s, emb, head, tmp, total;
    size_t s2s_step; /* floats per Set2Set step */
    size_t p_w, gh, conv_pack;
};

static size_t max_size(size_t a, size_t b) { return a > b ? a : b; }
static size_t round16(size_t n) { return (n + 15) & ~(size_t)15; }

static struct fx_layout layout(const struct dp_model *m, const struct dp_fx_batch *b, bool save) {
    const size_t H = (size_t)m->arch.hidden, M = (size_t)b->n_nodes, B = (size_t)b->n_graphs;
    const size_t L = (size_t)b->n_layers, T = (size_t)b->steps;
    struct fx_layout l;
    size_t at = 0;
#define TAKE(field, n) (l.field = at, at += round16(n))
    TAKE(states, (save ? L : 2) * M * H);
    TAKE(save, (save ? L : 1) * (size_t)n_slots(m) * M * H);
    l.s2s_step = B * 3 * H + B * 4 * H + B * H + B * H + M;
    TAKE(s2s, (save ? T + 1 : 2) * l.s2s_step);
    TAKE(emb, B * 2 * H);
    TAKE(head, dp_fx_head_act_size(m, (int)B));
    l.p_w = (size_t)dp_fx_pack_width(m);
    l.gh = M * 3 * H;
    if (m->arch.layer == DP_LAYER_GAT) l.gh += dp_fx_gat_fwd_scratch(m, b);
    /* a conv's packed transforms: MPNN's (with biases) or [W | W_ih^T] (in x 4H) */
    l.conv_pack = round16(max_size(dp_fx_mpnn_pack_size(m), H * 4 * H));
    TAKE(tmp, 2 * round16(M * l.p_w) + round16(l.gh) + round16(B * 4 * H) + 2 * l.conv_pack +
                  2 * round16(H * 3 * H) + round16(3 * H * 4 * H) + round16(4 * H));
#undef TAKE
    l.total = at;
    return l;
}

/* ---- head ---- */

void dp_fx_head(const struct dp_model *m, int B, const float *emb, float *out, float *act) {
    const struct dp_kn_table *K = dp_kn();
    const int H = m->arch.hidden, O = m->arch.n_out;
    float *z1 = act, *z2 = act + (size_t)B * H, *zo = act + (size_t)2 * B * H;
    const int din[3] = {2 * H, H, H}, dout[3] = {H, H, O};
    const float *in[3] = {emb, z1, z2};
    float *res[3] = {z1, z2, zo};
    for (int k = 0; k < 3; k++) {
        const float *W = dp_model_pdata(m, m->mlp_w[k]), *bb = dp_model_pdata(m, m->mlp_b[k]);
        K->gemm(false, true, B, dout[k], din[k], in[k], din[k], W, din[k], 0.0f, res[k], dout[k]);
        if (k < 2) K->bias_act(B, dout[k], bb, res[k], dout[k], 0.0f);
        else K->bias_act(B, dout[k], bb, res[k], dout[k], 1.0f); /* identity: + b */
    }
    for (size_t i = 0; i < (size_t)B * O; i++) out[i] = zo[i] > 0 ? zo[i] : LEAKY_SLOPE * zo[i];
}

enum dp_status dp_fx_head_backward(const struct dp_model *m, int B, const float *emb,
                                   const float *act, const float *dout, float *const *grads,
                                   float *demb) {
    const struct dp_kn_table *K = dp_kn();
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
            K->gemm(true, false, dd[k], din[k], B, dr, dd[k], in[k], din[k], 1.0f,
                    grads[m->mlp_w[k]], din[k]);
        if (grads && grads[m->mlp_b[k]]) K->colsum(B, dd[k], dr, dd[k], grads[m->mlp_b[k]]);
        if (k > 0) {
            float *dprev = dres[k - 1];
            const float *prev = in[k];
            K->gemm(false, false, B, din[k], dd[k], dr, dd[k], W, din[k], 0.0f, dprev, din[k]);
            K->act_back((size_t)B * din[k], prev, dprev, 0.0f);
        } else if (demb) {
            K->gemm(false, false, B, din[0], dd[0], dr, dd[0], W, din[0], 0.0f, demb, din[0]);
        }
    }
    free(d);
    return DP_OK;
}

/* ---- forward ---- */

/* One forward pass: what every thread of its region reads. */
struct fx_pass {
    const struct dp_model    *m;
    const struct dp_fx_batch *b;
    struct dp_fx_work        *w;
    const struct dp_kn_table *K;
    struct fx_layout          lo;
    bool                      save;
    float *P[2];        /* the layers' transforms, alternating (M x p_w each) */
    float *GH;          /* M x 3H */
    float *gat;         /* GAT: s, d (M x heads each) twice, then the attention weights */
    float *G;           /* Set2Set gates, B x 4H */
    float *cp[2];       /* conv c's packed transforms */
    float *whhT, *wihT; /* H x 3H */
    float *wlT, *bl;    /* Set2Set: [W_ih,q + W_hh | W_ih,r]^T (2H x 4H; H x 4H more of
                           scratch), b_ih + b_hh */
};

/* The weights every layer or step reads, packed once per pass: transposes, and each conv's
 * transform beside the GRU's input weights. */
static void pack_weights(struct fx_pass *f) {
    const struct dp_model *m = f->m;
    const int H = m->arch.hidden, G4 = 4 * H, I3 = 3 * H;
    const struct dp_kn_table *K = f->K;
    if (m->arch.gru) {
        K->transpose(I3, H, dp_model_pdata(m, m->gru_whh), H, f->whhT, I3);
        K->transpose(I3, H, dp_model_pdata(m, m->gru_wih), H, f->wihT, I3);
    }
    for (int c = 0; c < 2; c++) {
        const int k = m->conv[c].in;
        if (m->arch.layer == DP_LAYER_MPNN) {
            dp_fx_mpnn_pack(m, c, f->cp[c]);
        } else if (m->arch.gru && m->arch.layer != DP_LAYER_GIN) {
            const float *W = dp_model_pdata(m, m->conv[c].W);
            for (int r = 0; r < k; r++) {
                memcpy(f->cp[c] + (size_t)r * G4, W + (size_t)r * H, (size_t)H * sizeof *W);
                memcpy(f->cp[c] + (size_t)r * G4 + H, f->wihT + (size_t)r * I3,
                       (size_t)I3 * sizeof *W);
            }
        }
    }
    const float *sih = dp_model_pdata(m, m->s2s_wih), *shh = dp_model_pdata(m, m->s2s_whh);
    const float *sbi = dp_model_pdata(m, m->s2s_bih), *sbh = dp_model_pdata(m, m->s2s_bhh);
    /* Set2Set's LSTM reads [q, r] and its hidden state, which is q again: one product of [q, r]
     * with [W_ih,q + W_hh | W_ih,r]^T (a third less to read per step than [q, r, q]) */
    float *whh = f->wlT + (size_t)2 * H * G4;
    K->transpose(G4, 2 * H, sih, 2 * H, f->wlT, G4);
    K->transpose(G4, H, shh, H, whh, G4);
    for (size_t q = 0; q < (size_t)H * G4; q++) f->wlT[q] += whh[q];
    for (int r = 0; r < G4; r++) f->bl[r] = sbi[r] + sbh[r];
}

/* Set2Set over graphs [g0, g1) of the batch: every step of each graph is its own (no thread
 * shares a graph). Step t reads inp_t from its slot (zeros at t = 0) and writes inp_{t+1} to the
 * next; the final [q, r] lands in w->emb. */
static void set2set(const struct fx_pass *f, int g0, int g1) {
    const struct dp_kn_table *K = f->K;
    const struct dp_fx_batch *b = f->b;
    const struct dp_fx_work *w = f->w;
    const int H = f->m->arch.hidden, B = b->n_graphs, T = b->steps, L = b->n_layers;
    const int G4 = 4 * H, I3 = 3 * H, ng = g1 - g0;
    const size_t MH = (size_t)b->n_nodes * H, step = f->lo.s2s_step;
    const float *E = w->states + (size_t)(f->save ? L - 1 : (L - 1) % 2) * MH;
    if (ng <= 0) return;
#define SLOT(t) (w->s2s + (size_t)(f->save ? (t) : (t) % 2) * step)
    for (int t = 0; t < T; t++) {
        float *st = SLOT(t), *nx = SLOT(t + 1);
        float *inp = st, *act = st + (size_t)B * I3, *cc = act + (size_t)B * G4;
        float *tc = cc + (size_t)B * H, *att = tc + (size_t)B * H;
        const float *cprev = t == 0 ? NULL : SLOT(t - 1) + (size_t)B * (I3 + G4);
        if (t == 0) memset(inp + (size_t)g0 * I3, 0, (size_t)ng * I3 * sizeof *inp);
        float *G = f->G + (size_t)g0 * G4;
        K->gemm(false, false, ng, G4, 2 * H, inp + (size_t)g0 * I3, I3, f->wlT, G4, 0.0f, G, G4);
        K->bias_act(ng, G4, f->bl, G, G4, 1.0f); /* slope 1: the bias alone */
        for (int i = g0; i < g1; i++) {
            float *q = nx + (size_t)i * I3; /* next input: [h, r, h] */
            K->lstm(H, f->G + (size_t)i * G4, cprev ? cprev + (size_t)i * H : NULL,
                    act + (size_t)i * G4, cc + (size_t)i * H, tc + (size_t)i * H, q);
            memcpy(q + 2 * H, q, (size_t)H * sizeof *q);
            /* attention over graph i's nodes: e = E q, a = softmax(e), r = sum a_j E_j */
            const int n0 = b->node_off[i], nn = b->node_off[i + 1] - n0;
            float *e = att + n0;
            const float *En = E + (size_t)n0 * H;
            K->dot_rows(nn, H, En, H, q, e);
            K->softmax(nn, e);
            K->sum_rows(nn, H, En, H, e, 0.0f, q + H);
        }
    }
    const float *fin = SLOT(T);
#undef SLOT
    for (int i = g0; i < g1; i++)
        memcpy(w->emb + (size_t)i * 2 * H, fin + (size_t)i * I3, (size_t)2 * H * sizeof *w->emb);
}

/* Layer l's row-local transforms of rows [r0, r1) of its input into P (the layer's buffer of
 * the two): [transform | W_ih^T] products, GAT's attention scores. */
static void transforms(const struct fx_pass *f, int l, int r0, int r1) {
    const struct dp_model *m = f->m;
    const struct dp_arch *a = &m->arch;
    const struct dp_kn_table *K = f->K;
    const struct dp_fx_work *w = f->w;
    const int H = a->hidden, M = f->b->n_nodes, c = l == 0 ? 0 : 1, R = r1 - r0;
    const struct dp_conv_idx *cv = &m->conv[c];
    const int k = cv->in, ldin = l == 0 ? a->n_feat : H, ldp = (int)f->lo.p_w;
    const float *in = l == 0 ? f->b->x
                             : w->states + (size_t)(f->save ? l - 1 : (l - 1) % 2) * M * H;
    const float *ir = in + (size_t)r0 * ldin;
    float *P = f->P[l % 2] + (size_t)r0 * ldp;
    switch (a->layer) {
    case DP_LAYER_GCN:
    case DP_LAYER_GAT:
        K->gemm(false, false, R, ldp, k, ir, ldin, a->gru ? f->cp[c] : dp_model_pdata(m, cv->W),
                ldp, 0.0f, P, ldp);
        if (a->layer == DP_LAYER_GAT) {
            float *s = f->gat + (size_t)(l % 2) * 2 * M * a->heads, *d = s + (size_t)M * a->heads;
            dp_fx_gat_scores(m, c, r0, r1, f->P[l % 2], ldp, s, d);
        }
        break;
    case DP_LAYER_MPNN: K->gemm(false, false, R, ldp, k, ir, ldin, f->cp[c], ldp, 0.0f, P, ldp); break;
    default: /* GIN: the GRU's input gates from the (zero-padded) previous state */
        if (a->gru) K->gemm(false, false, R, 3 * H, k, ir, ldin, f->wihT, 3 * H, 0.0f, P, ldp);
        break;
    }
}

/* The rest of layer l for rows [r0, r1): the aggregation over neighbours (reading every row of
 * the layer's transforms, or for GIN of its input), the layer's own transforms, the GRU. */
static void layer_rows(const struct fx_pass *f, int l, int r0, int r1) {
    const struct dp_model *m = f->m;
    const struct dp_fx_batch *b = f->b;
    const struct dp_kn_table *K = f->K;
    const struct dp_arch *a = &m->arch;
    const struct dp_fx_work *w = f->w;
    const int H = a->hidden, M = b->n_nodes, S = w->slots, c = l == 0 ? 0 : 1, R = r1 - r0;
    const bool save = f->save;
    const size_t MH = (size_t)M * H;
    const struct dp_conv_idx *cv = &m->conv[c];
    const int k = cv->in, ldin = l == 0 ? a->n_feat : H, ldp = (int)f->lo.p_w;
    const float *in = l == 0 ? b->x : w->states + (size_t)(save ? l - 1 : (l - 1) % 2) * MH;
    float *xo = w->states + (size_t)(save ? l : l % 2) * MH;
    float *sv = w->save + (size_t)(save ? l : 0) * S * MH;
    float *y = sv, *yr = y + (size_t)r0 * H;
    const float *P = f->P[l % 2];
    const float *gi = P + (size_t)r0 * ldp + H;
    switch (a->layer) {
    case DP_LAYER_GCN:
        csr_agg(K, b, b->gcn_val, b->gcn_self, 0.0f, H, P, ldp, y, H, r0, r1);
        K->bias_act(R, H, dp_model_pdata(m, cv->b), yr, H, LEAKY_SLOPE);
        break;
    case DP_LAYER_GAT: {
        const float *s = f->gat + (size_t)(l % 2) * 2 * M * a->heads, *d = s + (size_t)M * a->heads;
        dp_fx_gat_rows(m, b, r0, r1, P, ldp, s, d, f->gat + (size_t)4 * M * a->heads, y);
        if (save) /* wh, for the backward */
            for (int i = r0; i < r1; i++)
                memcpy(sv + 5 * MH + (size_t)i * H, P + (size_t)i * ldp, (size_t)H * sizeof *sv);
        K->bias_act(R, H, dp_model_pdata(m, cv->b), yr, H, LEAKY_SLOPE);
        break;
    }
    case DP_LAYER_MPNN:
        dp_fx_mpnn(m, b, c, r0, r1, P, ldp, f->cp[c], y, sv + 5 * MH, sv + 6 * MH);
        K->bias_act(R, H, dp_model_pdata(m, cv->lin_b), yr, H, LEAKY_SLOPE);
        gi = P + (size_t)r0 * ldp + 3 * H;
        break;
    default: {
        /* GIN: y = relu(relu(((1+eps) in + A in) W0^T + b0) W1^T + b1) */
        const float eps = *dp_model_pdata(m, cv->eps);
        float *agg = sv + 5 * MH, *h1 = sv + 6 * MH;
        const int mid = (int)m->p[cv->fc_w[0]].shape[0];
        csr_agg(K, b, NULL, NULL, 1.0f + eps, k, in, ldin, agg, k, r0, r1);
        K->gemm(false, true, R, mid, k, agg + (size_t)r0 * k, k, dp_model_pdata(m, cv->fc_w[0]),
                k, 0.0f, h1 + (size_t)r0 * mid, mid);
        K->bias_act(R, mid, dp_model_pdata(m, cv->fc_b[0]), h1 + (size_t)r0 * mid, mid, 0.0f);
        K->gemm(false, true, R, H, mid, h1 + (size_t)r0 * mid, mid,
                dp_model_pdata(m, cv->fc_w[1]), mid, 0.0f, yr, H);
        K->bias_act(R, H, dp_model_pdata(m, cv->fc_b[1]), yr, H, 0.0f);
        gi = P + (size_t)r0 * ldp;
        break;
    }
    }
    if (a->gru) {
        float *gh = f->GH + (size_t)r0 * 3 * H;
        const size_t q = (size_t)r0 * H;
        K->gemm(false, false, R, 3 * H, H, yr, H, f->whhT, 3 * H, 0.0f, gh, 3 * H);
        K->gru(R, H, gi, ldp, gh, 3 * H, dp_model_pdata(m, m->gru_bih),
               dp_model_pdata(m, m->gru_bhh), yr, xo + q, save ? sv + MH + q : NULL,
               sv + 2 * MH + q, sv + 3 * MH + q, sv + 4 * MH + q);
    } else {
        memcpy(xo + (size_t)r0 * H, yr, (size_t)R * H * sizeof *xo);
    }
}

/* Rows per work item of a phase: two of the product's 6-row blocks. */
#define FX_ROWS 12

/* One thread of the pass: phase 0, layer 0's transforms; phase l + 1, layer l (then layer
 * l + 1's transforms of the same rows); the last phase, Set2Set, a run of graphs per thread.
 * Items of FX_ROWS rows are taken as they come (pool.h); each row's arithmetic is the same
 * whoever does it, so the outputs do not depend on the thread count. */
static void forward_region(void *ctx, int tid, int nt, struct dp_pool_region *reg) {
    const struct fx_pass *f = ctx;
    const int M = f->b->n_nodes, L = f->b->n_layers, items = (M + FX_ROWS - 1) / FX_ROWS;
    struct dp_pool_cursor cur;
    dp_pool_cursor_init(&cur, tid, nt);
    for (int l = -1; l < L; l++) {
        dp_pool_phase(reg, &cur, items);
        for (int it; (it = dp_pool_next(reg, &cur)) >= 0;) {
            const int r0 = it * FX_ROWS, r1 = r0 + FX_ROWS < M ? r0 + FX_ROWS : M;
            if (l >= 0) layer_rows(f, l, r0, r1);
            if (l + 1 < L) transforms(f, l + 1, r0, r1);
        }
        dp_pool_phase_wait(reg, &cur);
    }
    /* Set2Set: a run of graphs per thread, each step's gates one product over the run */
    const int B = f->b->n_graphs, runs = nt < B ? nt : B;
    dp_pool_phase(reg, &cur, runs);
    for (int k; (k = dp_pool_next(reg, &cur)) >= 0;)
        set2set(f, (int)((long)k * B / runs), (int)((long)(k + 1) * B / runs));
    dp_pool_phase_wait(reg, &cur);
}

enum dp_status dp_fx_forward(const struct dp_model *m, const struct dp_fx_batch *b,
                             struct dp_fx_work *w, bool save, float *emb, float *out,
                             struct dp_error *err) {
    const int H = m->arch.hidden, M = b->n_nodes, B = b->n_graphs;
    struct fx_pass f = {.m = m, .b = b, .w = w, .K = dp_kn(), .lo = layout(m, b, save),
                        .save = save};
    const struct fx_layout *lo = &f.lo;
    if (w->cap < lo->total) {
        free(w->buf);
        w->buf = aligned_alloc(64, lo->total * sizeof *w->buf);
        w->cap = w->buf ? lo->total : 0;
        if (!w->buf) return dp_error_set(err, DP_ERR_NOMEM, "forward: out of memory");
    }
    w->states = w->buf + lo->states;
    w->save = w->buf + lo->save;
    w->s2s = w->buf + lo->s2s;
    w->emb = w->buf + lo->emb;
    w->head = w->buf + lo->head;
    w->tmp = w->buf + lo->tmp;
    w->slots = n_slots(m);
    w->saved = save;
    float *t = w->tmp;
#define CARVE(p, n) (p = t, t += round16(n))
    CARVE(f.P[0], (size_t)M * lo->p_w);
    CARVE(f.P[1], (size_t)M * lo->p_w);
    CARVE(f.GH, lo->gh);
    f.gat = f.GH + (size_t)M * 3 * H;
    CARVE(f.G, (size_t)B * 4 * H);
    CARVE(f.cp[0], lo->conv_pack);
    CARVE(f.cp[1], lo->conv_pack);
    CARVE(f.whhT, (size_t)H * 3 * H);
    CARVE(f.wihT, (size_t)H * 3 * H);
    CARVE(f.wlT, (size_t)3 * H * 4 * H);
    CARVE(f.bl, (size_t)4 * H);
#undef CARVE
    w->pack[0] = f.cp[0];
    w->pack[1] = f.cp[1];
    pack_weights(&f);
    dp_pool_run(dp_threads(), forward_region, &f);
    if (emb) memcpy(emb, w->emb, (size_t)B * 2 * H * sizeof *emb);
    if (out || save) dp_fx_head(m, B, w->emb, out ? out : f.G, w->head);
    return DP_OK;
}

/* ---- backward ---- */

enum dp_status dp_fx_backward(const struct dp_model *m, const struct dp_fx_batch *b,
                              struct dp_fx_work *w, const float *dout, float *const *grads,
                              bool body, float *dx, struct dp_error *err) {
    DP_ASSERT(w->saved);
    const struct dp_kn_table *K = dp_kn();
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
                  + 2 * (size_t)M + 2 * (size_t)H            /* a rank-2 product's operands */
                  + (size_t)T * B * 2 * H    /* every step's [q, r] */
                  + conv_scr + 64;
    if (w->bcap < need) {
        free(w->bbuf);
        w->bbuf = malloc(need * sizeof *w->bbuf);
        w->bcap = w->bbuf ? need : 0;
    }
    if (!w->bbuf) return dp_error_set(err, DP_ERR_NOMEM, "backward: out of memory");
    float *scr = w->bbuf;
    float *dS = scr, *dP = dS + MH, *dGH = dP + (size_t)M * pw, *dy = dGH + (size_t)M * 3 * H;
    float *dsin = dy + MH, *dGall = dsin + MH, *dq = dGall + (size_t)T * B * G4;
    float *dhrec = dq + (size_t)B * I3, *dc = dhrec + (size_t)B * H;
    float *dWl = dc + (size_t)B * H, *dbl = dWl + (size_t)G4 * I3;
    float *dWc0 = dbl + G4, *dWc1 = dWc0 + (size_t)H * pw;
    float *demb = dWc1 + (size_t)H * pw, *dh = demb + (size_t)B * 2 * H;
    float *da = dh + (size_t)B * H, *qr = da + M + 1 + 2 * (size_t)M + 2 * (size_t)H;
    float *cscr = qr + (size_t)T * B * 2 * H;
    /* zeroed: what is added into before it is written (dE, the recurrent gradients of the last
     * step, the bias and fused weight gradients, a GAT or MPNN layer's scratch); the rest is
     * written first (a memset of it all was a pass over every step's gate gradients) */
    memset(dS, 0, MH * sizeof *dS);
    memset(dhrec, 0, (size_t)2 * B * H * sizeof *dhrec); /* dhrec, dc */
    memset(dbl, 0, (G4 + 2 * (size_t)H * pw) * sizeof *dbl); /* dbl, dWc0, dWc1 */
    memset(cscr, 0, (conv_scr + 64) * sizeof *cscr);

    if (dp_fx_head_backward(m, B, w->emb, w->head, dout, grads, demb))
        return dp_error_set(err, DP_ERR_NOMEM, "backward: out of memory");
    if (!body && !dx) return DP_OK;

    /* ---- Set2Set backward ---- */
    const float *E = w->states + (size_t)(L - 1) * MH;
    for (int i = 0; i < B; i++) memcpy(dq + (size_t)i * I3, demb + (size_t)i * 2 * H,
                                       (size_t)2 * H * sizeof *dq);
    for (int t = T - 1; t >= 0; t--) {
        float *st = w->s2s + (size_t)t * lo.s2s_step;
        float *act = st + (size_t)B * I3, *cc = act + (size_t)B * G4;
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
            const int n0 = b->node_off[i], nn = b->node_off[i + 1] - n0;
            const float *En = E + (size_t)n0 * H, *ai = att + n0;
            float *dEn = dS + (size_t)n0 * H, *dai = da + n0;
            /* dE_j += a_j dr + de_j q: one rank-2 product of [a | de] (2 x nn) and [dr; q] */
            float *ade = da + M + 1, *drq = ade + 2 * (size_t)nn, *q = drq + H;
            memcpy(drq, dqi + H, (size_t)H * sizeof *drq);
            for (int j = 0; j < H; j++) q[j] = ac[3 * H + j] * th[j];
            K->dot_rows(nn, H, En, H, drq, dai);
            float s = 0;
            for (int j = 0; j < nn; j++) s += ai[j] * dai[j];
            for (int j = 0; j < nn; j++) dai[j] = ai[j] * (dai[j] - s); /* de_j */
            K->sum_rows(nn, H, En, H, dai, 1.0f, dhi);
            memcpy(ade, ai, (size_t)nn * sizeof *ade);
            memcpy(ade + nn, dai, (size_t)nn * sizeof *ade);
            K->gemm(true, false, nn, H, 2, ade, nn, drq, H, 1.0f, dEn, H);
            /* LSTM cell backward */
            K->lstm_back(H, ac, th, cprev ? cprev + (size_t)i * H : NULL, dhi, dc + (size_t)i * H,
                         dG + (size_t)i * G4);
        }
        /* the previous step's q* and h gradients: dG [W_ih | W_hh] */
        if (t > 0) {
            /* W_l = [W_ih | W_hh]: dq*_{t-1} = dG W_ih, dh_{t-1} = dG W_hh */
            const float *sih = dp_model_pdata(m, m->s2s_wih), *shh = dp_model_pdata(m, m->s2s_whh);
            K->gemm(false, false, B, 2 * H, G4, dG, G4, sih, 2 * H, 0.0f, dq, I3);
            K->gemm(false, false, B, H, G4, dG, G4, shh, H, 0.0f, dhrec, H);
        }
    }
    /* parameter gradients of the LSTM over all steps at once: every step's input [q, r] gathered
     * into rows (the slots are strided), one product with every step's gate gradients; the
     * hidden state is q again, so W_hh's gradient is the q columns' */
    {
        float *gw = GRAD(m->s2s_wih), *gh = GRAD(m->s2s_whh);
        if (gw || gh) {
            for (int t = 0; t < T; t++)
                for (int i = 0; i < B; i++)
                    memcpy(qr + ((size_t)t * B + i) * 2 * H,
                           w->s2s + (size_t)t * lo.s2s_step + (size_t)i * I3,
                           (size_t)2 * H * sizeof *qr);
            K->gemm(true, false, G4, 2 * H, T * B, dGall, G4, qr, 2 * H, 0.0f, dWl, 2 * H);
            for (int r = 0; r < G4; r++) {
                const float *dr = dWl + (size_t)r * 2 * H;
                if (gw)
                    for (int c = 0; c < 2 * H; c++) gw[(size_t)r * 2 * H + c] += dr[c];
                if (gh)
                    for (int c = 0; c < H; c++) gh[(size_t)r * H + c] += dr[c];
            }
        }
        K->colsum(T * B, G4, dGall, G4, dbl);
        if (GRAD(m->s2s_bih)) for (int r = 0; r < G4; r++) GRAD(m->s2s_bih)[r] += dbl[r];
        if (GRAD(m->s2s_bhh)) for (int r = 0; r < G4; r++) GRAD(m->s2s_bhh)[r] += dbl[r];
    }

    /* ---- body backward ---- */
    const float *wih = dp_model_pdata(m, m->gru_wih), *whh = dp_model_pdata(m, m->gru_whh);
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
            K->gru_back(M, H, dS, y, sr, sz, sn, sg, dy, dGI, ldp, dGH, 3 * H);
            if (GRAD(m->gru_whh)) K->gemm(true, false, 3 * H, H, M, dGH, 3 * H, y, H, 1.0f,
                                             GRAD(m->gru_whh), H);
            if (GRAD(m->gru_bhh)) K->colsum(M, 3 * H, dGH, 3 * H, GRAD(m->gru_bhh));
            if (GRAD(m->gru_bih)) K->colsum(M, 3 * H, dGI, ldp, GRAD(m->gru_bih));
            K->gemm(false, false, M, H, 3 * H, dGH, 3 * H, whh, H, 1.0f, dy, H);
        } else {
            memcpy(dy, dS, MH * sizeof *dy);
        }
        float *dnext = l == 0 ? NULL : dS; /* gradient w.r.t. this layer's input state */
        if (!gin) {
            /* leaky ReLU, bias, then the layer into dP (GCN: the aggregation, Â symmetric) */
            K->act_back(MH, y, dy, LEAKY_SLOPE);
            const int bias = mpnn ? cv->lin_b : cv->b; /* the layer's output bias */
            if (GRAD(bias)) K->colsum(M, H, dy, H, GRAD(bias));
            if (a->layer == DP_LAYER_GCN)
                csr_agg(K, b, b->gcn_val, b->gcn_self, 0.0f, H, dy, H, dP, ldp, 0, M);
            else if (a->layer == DP_LAYER_GAT)
                dp_fx_gat_backward(m, b, c, sv + 5 * MH, H, dy, dP, ldp, grads, cscr);
            else
                dp_fx_mpnn_backward(m, b, c, in, ldin, w->pack[c], sv + 5 * MH,
                                    sv + 6 * MH, dy, dP, ldp, grads, cscr);
            /* dWcat += in^T dP ; d in = dP Wcat^T */
            float *dWc = l == 0 ? dWc0 : dWc1;
            if (grads) K->gemm(true, false, k, ldp, M, in, ldin, dP, ldp, 1.0f, dWc, ldp);
            const float *wcat = gru || mpnn ? w->pack[c] : dp_model_pdata(m, cv->W);
            float *dst = l == 0 ? (dx ? dx : NULL) : dsin;
            if (dst) K->gemm(false, true, M, k, ldp, dP, ldp, wcat, ldp, 0.0f, dst, k);
        } else {
            const float eps = *dp_model_pdata(m, cv->eps);
            const float *agg = sv + 5 * MH, *h1 = sv + 6 * MH;
            const int mid = (int)m->p[cv->fc_w[0]].shape[0];
            const float *W0 = dp_model_pdata(m, cv->fc_w[0]), *W1 = dp_model_pdata(m, cv->fc_w[1]);
            K->act_back(MH, y, dy, 0.0f);
            if (GRAD(cv->fc_w[1])) K->gemm(true, false, H, mid, M, dy, H, h1, mid, 1.0f,
                                              GRAD(cv->fc_w[1]), mid);
            if (GRAD(cv->fc_b[1])) K->colsum(M, H, dy, H, GRAD(cv->fc_b[1]));
            float *dh1 = dGH; /* free now: M x mid <= M x 3H */
            K->gemm(false, false, M, mid, H, dy, H, W1, mid, 0.0f, dh1, mid);
            K->act_back((size_t)M * mid, h1, dh1, 0.0f);
            if (GRAD(cv->fc_w[0])) K->gemm(true, false, mid, k, M, dh1, mid, agg, k, 1.0f,
                                              GRAD(cv->fc_w[0]), k);
            if (GRAD(cv->fc_b[0])) K->colsum(M, mid, dh1, mid, GRAD(cv->fc_b[0]));
            float *dagg = dy; /* M x k */
            K->gemm(false, false, M, k, mid, dh1, mid, W0, k, 0.0f, dagg, k);
            if (GRAD(cv->eps)) {
                double s = 0;
                for (int i = 0; i < M; i++)
                    for (int j = 0; j < k; j++)
                        s += (double)dagg[(size_t)i * k + j] * in[(size_t)i * ldin + j];
                GRAD(cv->eps)[0] += (float)s;
            }
            float *dst = l == 0 ? dx : dsin;
            if (dst) {
                csr_agg(K, b, NULL, NULL, 1.0f + eps, k, dagg, k, dst, k, 0, M);
                if (gru) {
                    if (GRAD(m->gru_wih))
                        K->gemm(true, false, 3 * H, k, M, dGI, ldp, in, ldin, 1.0f,
                                   GRAD(m->gru_wih), H);
                    K->gemm(false, false, M, k, 3 * H, dGI, ldp, wih, H, 1.0f, dst, k);
                }
            } else if (gru && GRAD(m->gru_wih)) {
                K->gemm(true, false, 3 * H, k, M, dGI, ldp, in, ldin, 1.0f, GRAD(m->gru_wih), H);
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
