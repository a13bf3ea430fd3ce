/* model_tape.c: the inspector network composed from autograd-tape ops (nn.h), one graph per tape:
 * GCN, GIN, GAT (multi-head attention, LeakyReLU(0.2) scores over neighbours and self) and MPNN
 * (PNA-style towers: per-edge pre-transform of [x_i | x_j], sum aggregation, post-transform of
 * [x_i | m_i], a mixing linear), each followed by the shared GRU, then Set2Set and the MLP head.
 * Every layer type runs on the fast engine (model_fast.c); tests check it against this. */
#include <stdlib.h>
#include <string.h>

#include "nn.h"
#include "gnn/model_impl.h"
#include "model_tape.h"

#define LEAKY_SLOPE 0.01f

struct tape {
    struct dp_ctx      *ctx;
    struct dp_fx_batch  b;       /* one graph: CSR adjacency, GCN values, transformed x */
    struct dp_nn_adj    adj;
    struct dp_nn_seg    seg;
    int                 seg_off[2];
    int                *edge_dst, *edge_src; /* directed edges (CSR order) for MPNN */
    struct dp_tensor   *x, *emb, *out;
    struct dp_tensor   *p[DP_MODEL_MAX_PARAMS];
};

static void tape_free(struct tape *t) {
    dp_ctx_free(t->ctx);
    dp_fx_batch_free(&t->b);
    free(t->edge_dst);
    free(t->edge_src);
}

/* Wraps parameter i (1-D as 1 x n). */
static struct dp_tensor *param(struct tape *t, const struct dp_model *m, int i, bool grad) {
    if (i < 0) return NULL;
    const struct dp_model_param *p = &m->p[i];
    int rows = p->n_dims > 1 ? (int)p->shape[0] : 1;
    int cols = p->n_dims > 1 ? (int)(p->size / (size_t)rows) : (int)p->size;
    return t->p[i] = dp_tensor_wrap(t->ctx, rows, cols, dp_model_pdata(m, i), grad);
}

static struct dp_tensor *linear_t(struct dp_ctx *c, struct dp_tensor *x, struct dp_tensor *w,
                                  struct dp_tensor *b) {
    return dp_add_bias(c, dp_matmul(c, x, w, true), b);
}

/* One graph layer (conv index k) on input h of width kin: returns y (n x H). */
static struct dp_tensor *conv(struct tape *t, const struct dp_model *m, int k,
                              struct dp_tensor *h) {
    struct dp_ctx *c = t->ctx;
    const struct dp_conv_idx *cv = &m->conv[k];
    const int n = t->b.n_nodes;
    switch (m->arch.layer) {
    case DP_LAYER_GCN: {
        struct dp_tensor *u = dp_matmul(c, h, t->p[cv->W], false);
        return dp_leaky_relu(c, dp_add_bias(c, dp_agg_gcn(c, u, &t->adj), t->p[cv->b]),
                             LEAKY_SLOPE);
    }
    case DP_LAYER_GIN: {
        struct dp_tensor *agg = dp_agg_gin(c, h, t->p[cv->eps], &t->adj);
        struct dp_tensor *h1 = dp_relu(c, linear_t(c, agg, t->p[cv->fc_w[0]], t->p[cv->fc_b[0]]));
        return dp_relu(c, linear_t(c, h1, t->p[cv->fc_w[1]], t->p[cv->fc_b[1]]));
    }
    case DP_LAYER_GAT: {
        struct dp_tensor *wh = dp_matmul(c, h, t->p[cv->W], false);
        struct dp_tensor *att = dp_gat(c, wh, t->p[cv->att_src], t->p[cv->att_dst], &t->adj);
        return dp_leaky_relu(c, dp_add_bias(c, att, t->p[cv->b]), LEAKY_SLOPE);
    }
    case DP_LAYER_MPNN: {
        const int e2 = t->b.row_ptr[n];
        struct dp_tensor *msg_in = dp_concat(c, dp_gather(c, h, t->edge_dst, e2),
                                             dp_gather(c, h, t->edge_src, e2));
        struct dp_tensor *cat = NULL;
        for (int tw = 0; tw < m->arch.towers; tw++) {
            struct dp_tensor *msg =
                dp_relu(c, linear_t(c, msg_in, t->p[cv->pre_w[tw]], t->p[cv->pre_b[tw]]));
            struct dp_tensor *agg = dp_scatter_add(c, msg, t->edge_dst, n);
            struct dp_tensor *u = linear_t(c, dp_concat(c, h, agg), t->p[cv->post_w[tw]],
                                           t->p[cv->post_b[tw]]);
            cat = cat ? dp_concat(c, cat, u) : u;
        }
        return dp_leaky_relu(c, linear_t(c, cat, t->p[cv->lin_w], t->p[cv->lin_b]), LEAKY_SLOPE);
    }
    default: return NULL;
    }
}

/* Records the whole network for graph g. grads: which parameters need gradients (NULL: none). */
static enum dp_status tape_build(const struct dp_model *m, const struct dp_grouped *g,
                                 float *const *grads, bool grad_x, struct tape *t,
                                 struct dp_error *err) {
    memset(t, 0, sizeof *t);
    const struct dp_grouped *gs[1] = {g};
    enum dp_status st = dp_fx_batch_build(m, gs, 1, &t->b, err);
    if (st) return st;
    const int n = t->b.n_nodes, H = m->arch.hidden, F = m->arch.n_feat;
    t->adj = (struct dp_nn_adj){n, t->b.row_ptr, t->b.col, t->b.gcn_val, t->b.gcn_self};
    t->seg_off[0] = 0;
    t->seg_off[1] = n;
    t->seg = (struct dp_nn_seg){1, t->seg_off};
    const int e2 = t->b.row_ptr[n];
    t->edge_dst = malloc(((size_t)e2 + 1) * sizeof *t->edge_dst);
    t->edge_src = malloc(((size_t)e2 + 1) * sizeof *t->edge_src);
    t->ctx = dp_ctx_init((size_t)1 << 22);
    if (!t->edge_dst || !t->edge_src || !t->ctx) {
        tape_free(t);
        return dp_error_set(err, DP_ERR_NOMEM, "model: out of memory");
    }
    for (int i = 0; i < n; i++)
        for (int p = t->b.row_ptr[i]; p < t->b.row_ptr[i + 1]; p++) {
            t->edge_dst[p] = i;
            t->edge_src[p] = t->b.col[p];
        }
    struct dp_ctx *c = t->ctx;
    for (int i = 0; i < m->n_params; i++) param(t, m, i, grads && grads[i]);
    t->x = dp_tensor_wrap(c, n, F, t->b.x, grad_x);

    const int L = t->b.n_layers;
    struct dp_tensor *state = t->x;
    for (int l = 0; l < L; l++) {
        const int k = l == 0 ? 0 : 1;
        struct dp_tensor *y = conv(t, m, k, state);
        if (m->arch.gru) {
            /* GRU(input = previous state, zero-padded; hidden = conv output) */
            struct dp_tensor *wih = t->p[m->gru_wih];
            if (state->cols < H) wih = dp_slice(c, wih, 0, state->cols);
            struct dp_tensor *gi = linear_t(c, state, wih, t->p[m->gru_bih]);
            struct dp_tensor *gh = linear_t(c, y, t->p[m->gru_whh], t->p[m->gru_bhh]);
            state = dp_gru(c, gi, gh, y);
        } else {
            state = y;
        }
    }
    /* Set2Set */
    struct dp_tensor *E = state;
    struct dp_tensor *qstar = dp_tensor_new(c, 1, 2 * H), *h = dp_tensor_new(c, 1, H);
    struct dp_tensor *cell = dp_tensor_new(c, 1, H);
    const int T = t->b.steps;
    for (int s = 0; s < T; s++) {
        struct dp_tensor *gates = dp_add(c, linear_t(c, qstar, t->p[m->s2s_wih], t->p[m->s2s_bih]),
                                         linear_t(c, h, t->p[m->s2s_whh], t->p[m->s2s_bhh]));
        struct dp_tensor *hc = dp_lstm(c, gates, cell);
        h = dp_slice(c, hc, 0, H);
        cell = dp_slice(c, hc, H, H);
        struct dp_tensor *a = dp_softmax_seg(c, dp_seg_dot(c, E, h, &t->seg), &t->seg);
        qstar = dp_concat(c, h, dp_seg_wsum(c, a, E, &t->seg));
    }
    t->emb = qstar;
    struct dp_tensor *z = qstar;
    for (int k = 0; k < 3; k++) {
        z = linear_t(c, z, t->p[m->mlp_w[k]], t->p[m->mlp_b[k]]);
        z = k < 2 ? dp_relu(c, z) : dp_leaky_relu(c, z, LEAKY_SLOPE);
    }
    t->out = z;
    if (dp_ctx_failed(c)) {
        tape_free(t);
        return dp_error_set(err, DP_ERR_NOMEM, "model: out of memory");
    }
    dp_nn_forward(c);
    return DP_OK;
}

enum dp_status dp_tape_predict(const struct dp_model *m, const struct dp_grouped *g, float *emb,
                               float *out, struct dp_error *err) {
    struct tape t;
    enum dp_status st = tape_build(m, g, NULL, false, &t, err);
    if (st) return st;
    if (emb) memcpy(emb, t.emb->data, (size_t)2 * m->arch.hidden * sizeof *emb);
    if (out) memcpy(out, t.out->data, (size_t)m->arch.n_out * sizeof *out);
    tape_free(&t);
    return DP_OK;
}

enum dp_status dp_tape_input_grad(const struct dp_model *m, const struct dp_grouped *g,
                                  const float *w, float *dx, float *out, struct dp_error *err) {
    struct tape t;
    enum dp_status st = tape_build(m, g, NULL, true, &t, err);
    if (st) return st;
    dp_nn_backward(t.ctx, t.out, w);
    if (dp_ctx_failed(t.ctx)) {
        tape_free(&t);
        return dp_error_set(err, DP_ERR_NOMEM, "model: out of memory");
    }
    memcpy(dx, t.x->grad, (size_t)t.b.n_nodes * m->arch.n_feat * sizeof *dx);
    if (out) memcpy(out, t.out->data, (size_t)m->arch.n_out * sizeof *out);
    tape_free(&t);
    return DP_OK;
}

enum dp_status dp_tape_grad(const struct dp_model *m, const struct dp_grouped *g, float *out,
                            const float *dout, const float *target, float scale,
                            float *const *grads, struct dp_error *err) {
    struct tape t;
    const bool back = grads && (dout || target);
    enum dp_status st = tape_build(m, g, back ? grads : NULL, false, &t, err);
    if (st) return st;
    const int O = m->arch.n_out;
    if (out) memcpy(out, t.out->data, (size_t)O * sizeof *out);
    if (back) {
        float d[64];
        DP_ASSERT(O <= 64);
        for (int o = 0; o < O; o++) d[o] = dout ? dout[o] : scale * (t.out->data[o] - target[o]);
        dp_nn_backward(t.ctx, t.out, d);
        if (dp_ctx_failed(t.ctx)) {
            tape_free(&t);
            return dp_error_set(err, DP_ERR_NOMEM, "model: out of memory");
        }
        for (int i = 0; i < m->n_params; i++) {
            if (!grads[i] || !t.p[i]->grad) continue;
            for (size_t k = 0; k < m->p[i].size; k++) grads[i][k] += t.p[i]->grad[k];
        }
    }
    tape_free(&t);
    return DP_OK;
}
