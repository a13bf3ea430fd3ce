/* model.c: the inspector network as data: the parameter table with PyTorch state_dict names,
 * seeded PyTorch-like initialisation, and the public predict / embed / head / input-gradient
 * entry points, which run on the fast batched engine (model_fast.c) for every layer type (the
 * autograd tape under tests/tape/ is the cross-check the tests compare it with). The
 * architecture's names, checks and rules are in arch.c. */
#include "dp/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "model_impl.h"

/* ---- parameter table ---- */

enum init_kind { INIT_ZERO, INIT_UNIFORM_FANIN, INIT_UNIFORM_HIDDEN, INIT_GLOROT };

struct init_spec {
    enum init_kind kind;
    double         bound_arg; /* fan_in or hidden or fan_in + fan_out */
};

static int add_param(struct dp_model *m, struct init_spec *spec, struct init_spec s, bool head,
                     bool last, const char *name, int n_dims, int64_t d0, int64_t d1) {
    DP_ASSERT(m->n_params < DP_MODEL_MAX_PARAMS);
    struct dp_model_param *p = &m->p[m->n_params];
    snprintf(p->name, sizeof p->name, "%s", name);
    p->n_dims = n_dims;
    p->shape[0] = d0;
    p->shape[1] = n_dims > 1 ? d1 : 0;
    p->size = (size_t)d0 * (size_t)(n_dims > 1 ? d1 : 1);
    p->off = m->n_data;
    p->head = head;
    p->last = last;
    m->n_data += (p->size + 15) & ~(size_t)15; /* 64-byte aligned tensors */
    spec[m->n_params] = s;
    return m->n_params++;
}

static void init_conv_idx(struct dp_conv_idx *c) {
    memset(c, 0xff, sizeof *c); /* every index -1 */
}

/* Registers every parameter of the architecture in a fixed order (PyTorch's for GCN/GIN). */
static void build_table(struct dp_model *m, struct init_spec *spec) {
    const struct dp_arch *a = &m->arch;
    const int H = a->hidden;
    char nm[96];
    for (int k = 0; k < 2; k++) {
        struct dp_conv_idx *c = &m->conv[k];
        init_conv_idx(c);
        const int in = k == 0 ? a->n_feat : H;
        const bool last = k == 1;
        c->in = in;
        switch (a->layer) {
        case DP_LAYER_GCN:
            snprintf(nm, sizeof nm, "conv_layers.%d.W", k);
            c->W = add_param(m, spec, (struct init_spec){INIT_GLOROT, in + H}, false, last, nm, 2,
                             in, H);
            snprintf(nm, sizeof nm, "conv_layers.%d.b", k);
            c->b = add_param(m, spec, (struct init_spec){INIT_ZERO, 0}, false, last, nm, 1, H, 0);
            break;
        case DP_LAYER_GIN: {
            const int mid = in > H ? in : H;
            snprintf(nm, sizeof nm, "conv_layers.%d.epsilon", k);
            c->eps = add_param(m, spec, (struct init_spec){INIT_ZERO, 0}, false, last, nm, 1, 1, 0);
            for (int f = 0; f < 2; f++) {
                const int fi = f == 0 ? in : mid, fo = f == 0 ? mid : H;
                snprintf(nm, sizeof nm,
                         "conv_layers.%d.post_transformation.fully_connected.%d.linear.weight", k, f);
                c->fc_w[f] = add_param(m, spec, (struct init_spec){INIT_UNIFORM_FANIN, fi}, false,
                                       last, nm, 2, fo, fi);
                snprintf(nm, sizeof nm,
                         "conv_layers.%d.post_transformation.fully_connected.%d.linear.bias", k, f);
                c->fc_b[f] = add_param(m, spec, (struct init_spec){INIT_UNIFORM_FANIN, fi}, false,
                                       last, nm, 1, fo, 0);
            }
            break;
        }
        case DP_LAYER_GAT: {
            const int F = H / a->heads;
            snprintf(nm, sizeof nm, "conv_layers.%d.W", k);
            c->W = add_param(m, spec, (struct init_spec){INIT_GLOROT, in + H}, false, last, nm, 2,
                             in, H);
            snprintf(nm, sizeof nm, "conv_layers.%d.att_src", k);
            c->att_src = add_param(m, spec, (struct init_spec){INIT_GLOROT, 1 + F}, false, last,
                                   nm, 2, a->heads, F);
            snprintf(nm, sizeof nm, "conv_layers.%d.att_dst", k);
            c->att_dst = add_param(m, spec, (struct init_spec){INIT_GLOROT, 1 + F}, false, last,
                                   nm, 2, a->heads, F);
            snprintf(nm, sizeof nm, "conv_layers.%d.b", k);
            c->b = add_param(m, spec, (struct init_spec){INIT_ZERO, 0}, false, last, nm, 1, H, 0);
            break;
        }
        case DP_LAYER_MPNN: {
            const int F = H / a->towers;
            for (int t = 0; t < a->towers; t++) {
                snprintf(nm, sizeof nm, "conv_layers.%d.towers.%d.pre.linear.weight", k, t);
                c->pre_w[t] = add_param(m, spec, (struct init_spec){INIT_UNIFORM_FANIN, 2 * in},
                                        false, last, nm, 2, F, 2 * in);
                snprintf(nm, sizeof nm, "conv_layers.%d.towers.%d.pre.linear.bias", k, t);
                c->pre_b[t] = add_param(m, spec, (struct init_spec){INIT_UNIFORM_FANIN, 2 * in},
                                        false, last, nm, 1, F, 0);
                snprintf(nm, sizeof nm, "conv_layers.%d.towers.%d.post.linear.weight", k, t);
                c->post_w[t] = add_param(m, spec, (struct init_spec){INIT_UNIFORM_FANIN, in + F},
                                         false, last, nm, 2, F, in + F);
                snprintf(nm, sizeof nm, "conv_layers.%d.towers.%d.post.linear.bias", k, t);
                c->post_b[t] = add_param(m, spec, (struct init_spec){INIT_UNIFORM_FANIN, in + F},
                                         false, last, nm, 1, F, 0);
            }
            snprintf(nm, sizeof nm, "conv_layers.%d.lin.linear.weight", k);
            c->lin_w = add_param(m, spec, (struct init_spec){INIT_UNIFORM_FANIN, H}, false, last,
                                 nm, 2, H, H);
            snprintf(nm, sizeof nm, "conv_layers.%d.lin.linear.bias", k);
            c->lin_b = add_param(m, spec, (struct init_spec){INIT_UNIFORM_FANIN, H}, false, last,
                                 nm, 1, H, 0);
            break;
        }
        default: break;
        }
    }
    m->gru_wih = m->gru_whh = m->gru_bih = m->gru_bhh = -1;
    if (a->gru) {
        struct init_spec g = {INIT_UNIFORM_HIDDEN, H};
        m->gru_wih = add_param(m, spec, g, false, true, "gru.gru.weight_ih_l0", 2, 3 * H, H);
        m->gru_whh = add_param(m, spec, g, false, true, "gru.gru.weight_hh_l0", 2, 3 * H, H);
        m->gru_bih = add_param(m, spec, g, false, true, "gru.gru.bias_ih_l0", 1, 3 * H, 0);
        m->gru_bhh = add_param(m, spec, g, false, true, "gru.gru.bias_hh_l0", 1, 3 * H, 0);
    }
    struct init_spec l = {INIT_UNIFORM_HIDDEN, H};
    m->s2s_wih = add_param(m, spec, l, false, false, "graph_read_out.set2set.lstm.weight_ih_l0", 2,
                           4 * H, 2 * H);
    m->s2s_whh = add_param(m, spec, l, false, false, "graph_read_out.set2set.lstm.weight_hh_l0", 2,
                           4 * H, H);
    m->s2s_bih = add_param(m, spec, l, false, false, "graph_read_out.set2set.lstm.bias_ih_l0", 1,
                           4 * H, 0);
    m->s2s_bhh = add_param(m, spec, l, false, false, "graph_read_out.set2set.lstm.bias_hh_l0", 1,
                           4 * H, 0);
    const int dims[4] = {2 * H, H, H, a->n_out};
    for (int k = 0; k < 3; k++) {
        struct init_spec s = {INIT_UNIFORM_FANIN, dims[k]};
        snprintf(nm, sizeof nm, "graph_read_out.mlp.fully_connected.%d.linear.weight", k);
        m->mlp_w[k] = add_param(m, spec, s, true, false, nm, 2, dims[k + 1], dims[k]);
        snprintf(nm, sizeof nm, "graph_read_out.mlp.fully_connected.%d.linear.bias", k);
        m->mlp_b[k] = add_param(m, spec, s, true, false, nm, 1, dims[k + 1], 0);
    }
}

size_t dp_arch_n_weights(const struct dp_arch *a) {
    if (dp_arch_check(a, NULL)) return 0;
    struct dp_model m = {.arch = *a};
    struct init_spec spec[DP_MODEL_MAX_PARAMS];
    build_table(&m, spec);
    size_t n = 0;
    for (int i = 0; i < m.n_params; i++) n += m.p[i].size;
    return n;
}

enum dp_status dp_model_init(const struct dp_arch *a, uint64_t seed, struct dp_model **out,
                             struct dp_error *err) {
    enum dp_status st = dp_arch_check(a, err);
    if (st) return st;
    struct dp_model *m = calloc(1, sizeof *m);
    if (!m) return dp_error_set(err, DP_ERR_NOMEM, "model: out of memory");
    m->arch = *a;
    struct init_spec spec[DP_MODEL_MAX_PARAMS];
    build_table(m, spec);
    m->data = aligned_alloc(64, (m->n_data + 16) * sizeof *m->data);
    if (!m->data) {
        free(m);
        return dp_error_set(err, DP_ERR_NOMEM, "model: out of memory");
    }
    memset(m->data, 0, (m->n_data + 16) * sizeof *m->data);
    uint64_t s = seed ^ 0x5eed5eed12345678ull;
    for (int i = 0; i < m->n_params; i++) {
        double bound = 0;
        switch (spec[i].kind) {
        case INIT_ZERO: bound = 0; break;
        case INIT_UNIFORM_FANIN:
        case INIT_UNIFORM_HIDDEN: bound = 1.0 / sqrt(spec[i].bound_arg); break;
        case INIT_GLOROT: bound = sqrt(6.0 / spec[i].bound_arg); break;
        }
        float *d = dp_model_pdata(m, i);
        for (size_t k = 0; k < m->p[i].size; k++)
            d[k] = bound > 0 ? (float)((2 * dp_rng_uniform(&s) - 1) * bound) : 0.0f;
    }
    *out = m;
    return DP_OK;
}

void dp_model_free(struct dp_model *m) {
    if (!m) return;
    free(m->data);
    free(m);
}

struct dp_model *dp_model_clone(const struct dp_model *m) {
    struct dp_model *c = malloc(sizeof *c);
    if (!c) return NULL;
    *c = *m;
    c->data = aligned_alloc(64, (m->n_data + 16) * sizeof *c->data);
    if (!c->data) {
        free(c);
        return NULL;
    }
    memcpy(c->data, m->data, (m->n_data + 16) * sizeof *c->data);
    return c;
}

const struct dp_arch *dp_model_arch(const struct dp_model *m) { return &m->arch; }

int dp_model_n_params(const struct dp_model *m) { return m->n_params; }

void dp_model_param(const struct dp_model *m, int i, struct dp_param *out) {
    DP_ASSERT(i >= 0 && i < m->n_params);
    const struct dp_model_param *p = &m->p[i];
    out->name = p->name;
    out->n_dims = p->n_dims;
    for (int d = 0; d < 4; d++) out->shape[d] = d < p->n_dims ? p->shape[d] : 0;
    out->size = p->size;
    out->data = m->data + p->off;
}

int dp_model_find_param(const struct dp_model *m, const char *name) {
    for (int i = 0; name && i < m->n_params; i++)
        if (!strcmp(m->p[i].name, name)) return i;
    return -1;
}

enum dp_status dp_model_set_param(struct dp_model *m, const char *name, int n_dims,
                                  const int64_t *shape, const float *data, struct dp_error *err) {
    int i = dp_model_find_param(m, name);
    if (i < 0) return dp_error_set(err, DP_ERR_NOT_FOUND, "parameter %s: not in a %s model", name,
                                   dp_layer_name(m->arch.layer));
    const struct dp_model_param *p = &m->p[i];
    bool same = n_dims == p->n_dims;
    for (int d = 0; same && d < n_dims; d++) same = shape[d] == p->shape[d];
    if (!same) {
        char got[64] = "", want[64] = "";
        for (int d = 0; d < n_dims && d < 4; d++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? ", " : "",
                     (long long)shape[d]);
        for (int d = 0; d < p->n_dims; d++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", d ? ", " : "",
                     (long long)p->shape[d]);
        return dp_error_set(err, DP_ERR_SHAPE, "parameter %s: shape [%s], expected [%s]", name,
                            got, want);
    }
    for (size_t k = 0; k < p->size; k++)
        if (!isfinite(data[k]))
            return dp_error_set(err, DP_ERR_INVALID, "parameter %s: element %zu is not finite",
                                name, k);
    memcpy(m->data + p->off, data, p->size * sizeof *data);
    return DP_OK;
}

/* ---- single-graph entry points ---- */

static enum dp_status check_graph(const struct dp_model *m, const struct dp_grouped *g,
                                  struct dp_error *err) {
    if (!g || g->n_groups < 1)
        return dp_error_set(err, DP_ERR_SHAPE, "%s: a graph needs at least one group",
                            g && g->graph ? g->graph : "graph");
    if (m->arch.n_feat > DP_N_FEATURES && !g->cost)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: the inspector reads the cost features (flops, bytes, "
                            "param_bytes), which this grouped graph lacks",
                            g->graph ? g->graph : "graph");
    for (int e = 0; e < g->n_edges; e++) {
        int i = g->edges[2 * e], j = g->edges[2 * e + 1];
        if (i < 0 || j < 0 || i >= g->n_groups || j >= g->n_groups || i == j)
            return dp_error_set(err, DP_ERR_INVALID, "%s: edge %d (%d, %d) out of range",
                                g->graph ? g->graph : "graph", e, i, j);
    }
    for (int k = 0; k < g->n_groups * m->arch.n_feat; k++)
        if (!isfinite(dp_grouped_feat(g, k / m->arch.n_feat, k % m->arch.n_feat)))
            return dp_error_set(err, DP_ERR_INVALID, "%s: group %d feature %d is not finite",
                                g->graph ? g->graph : "graph", k / m->arch.n_feat,
                                k % m->arch.n_feat);
    return DP_OK;
}

/* One graph through the fast engine: emb and/or out. */
static enum dp_status fast_one(const struct dp_model *m, const struct dp_grouped *g, float *emb,
                               float *out, struct dp_error *err) {
    struct dp_fx_batch b;
    struct dp_fx_work *w = dp_fx_thread_work();
    if (!w) return dp_error_set(err, DP_ERR_NOMEM, "predict: out of memory");
    const struct dp_grouped *gs[1] = {g};
    enum dp_status st = dp_fx_batch_build(m, gs, 1, &b, err);
    if (st) return st;
    st = dp_fx_forward(m, &b, w, false, emb, out, err);
    dp_fx_thread_work_done(w);
    dp_fx_batch_free(&b);
    return st;
}

enum dp_status dp_model_predict(const struct dp_model *m, const struct dp_grouped *g,
                                float out[DP_N_OUTPUTS], struct dp_error *err) {
    enum dp_status st = check_graph(m, g, err);
    if (st) return st;
    return fast_one(m, g, NULL, out, err);
}

int dp_model_embed_size(const struct dp_model *m) { return 2 * m->arch.hidden; }

enum dp_status dp_model_embed(const struct dp_model *m, const struct dp_grouped *g, float *emb,
                              struct dp_error *err) {
    enum dp_status st = check_graph(m, g, err);
    if (st) return st;
    return fast_one(m, g, emb, NULL, err);
}

/* n graphs through dp_fx_run into emb and/or out, each checked as the single calls check it. */
static enum dp_status run_many(const struct dp_model *m, const struct dp_grouped *const *g, int n,
                               float *emb, float *out, struct dp_error *err) {
    if (n < 1) return dp_error_set(err, DP_ERR_INVALID, "batch: no graphs");
    for (int i = 0; i < n; i++) {
        enum dp_status st = check_graph(m, g[i], err);
        if (st) return st;
    }
    struct dp_fx_job job = {.graphs = g, .n = n, .emb = emb, .out = out};
    return dp_fx_run(m, &job, err);
}

enum dp_status dp_model_predict_batch(const struct dp_model *m, const struct dp_grouped *const *g,
                                      int n, float *out, struct dp_error *err) {
    return run_many(m, g, n, NULL, out, err);
}

enum dp_status dp_model_embed_batch(const struct dp_model *m, const struct dp_grouped *const *g,
                                    int n, float *emb, struct dp_error *err) {
    return run_many(m, g, n, emb, NULL, err);
}

enum dp_status dp_model_head_batch(const struct dp_model *m, const float *emb, int n,
                                   float *out) {
    float *act = malloc(dp_fx_head_act_size(m, n > 0 ? n : 1) * sizeof *act);
    if (!act) return DP_ERR_NOMEM;
    if (n > 0) dp_fx_head(m, n, emb, out, act);
    free(act);
    return DP_OK;
}

void dp_model_head(const struct dp_model *m, const float *emb, float out[DP_N_OUTPUTS]) {
    float act[4 * 4096 + 64];
    DP_ASSERT(dp_fx_head_act_size(m, 1) <= sizeof act / sizeof act[0]);
    dp_fx_head(m, 1, emb, out, act);
}

enum dp_status dp_model_input_grad(const struct dp_model *m, const struct dp_grouped *g,
                                   const float w[DP_N_OUTPUTS], double *grad,
                                   float out[DP_N_OUTPUTS], struct dp_error *err) {
    enum dp_status st = check_graph(m, g, err);
    if (st) return st;
    const int N = g->n_groups, F = m->arch.n_feat;
    float *dx = calloc((size_t)N * F, sizeof *dx);
    if (!dx) return dp_error_set(err, DP_ERR_NOMEM, "input_grad: out of memory");
    float o[DP_N_OUTPUTS];
    struct dp_fx_batch b;
    struct dp_fx_work *wk = dp_fx_thread_work();
    const struct dp_grouped *gs[1] = {g};
    st = wk ? dp_fx_batch_build(m, gs, 1, &b, err)
            : dp_error_set(err, DP_ERR_NOMEM, "input_grad: out of memory");
    if (!st) {
        st = dp_fx_forward(m, &b, wk, true, NULL, o, err);
        if (!st) st = dp_fx_backward(m, &b, wk, w, NULL, true, dx, err);
        dp_fx_thread_work_done(wk);
        dp_fx_batch_free(&b);
    }
    if (!st) {
        for (int i = 0; i < N; i++)
            for (int f = 0; f < F; f++)
                grad[i * F + f] =
                    dx[i * F + f] * dp_arch_feat_deriv(&m->arch, f, dp_grouped_feat(g, i, f));
        if (out) memcpy(out, o, sizeof o);
    }
    free(dx);
    return st;
}
