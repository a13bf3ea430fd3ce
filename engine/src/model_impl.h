/* model_impl.h: the private layout of struct dp_model (parameter table and the index of each
 * parameter's role) and the fast batched engine shared by model.c, model_fast.c, model_train.c
 * and model_json.c. Only nn/model files include this (and BLAS). */
#ifndef DP_MODEL_IMPL_H
#define DP_MODEL_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "dp/model.h"

#define DP_MODEL_MAX_PARAMS 64
#define DP_MODEL_MAX_TOWERS 8

struct dp_model_param {
    char    name[96];
    int     n_dims;
    int64_t shape[4];
    size_t  size;
    size_t  off;   /* into dp_model.data */
    bool    head;  /* part of the MLP head (trainable in DP_TRAIN_HEAD) */
    bool    last;  /* the reused middle layer or the GRU (trainable in DP_TRAIN_HEAD_LAST) */
};

/* Parameter indices of one graph layer (-1 where the layer type has no such tensor). */
struct dp_conv_idx {
    int W, b;                  /* GCN: W (in, out), b (out); GAT: W (in, out), b */
    int eps, fc_w[2], fc_b[2]; /* GIN: epsilon, post_transformation MLP (out, in) */
    int att_src, att_dst;      /* GAT: (heads, out/heads) */
    int pre_w[DP_MODEL_MAX_TOWERS], pre_b[DP_MODEL_MAX_TOWERS];   /* MPNN towers */
    int post_w[DP_MODEL_MAX_TOWERS], post_b[DP_MODEL_MAX_TOWERS];
    int lin_w, lin_b;          /* MPNN: tower mixing linear */
    int in;                    /* input width of this layer */
};

struct dp_model {
    struct dp_arch         arch;
    int                    n_params;
    struct dp_model_param  p[DP_MODEL_MAX_PARAMS];
    float                 *data;
    size_t                 n_data;
    struct dp_conv_idx     conv[2];
    int gru_wih, gru_whh, gru_bih, gru_bhh;     /* -1 without GRU */
    int s2s_wih, s2s_whh, s2s_bih, s2s_bhh;
    int mlp_w[3], mlp_b[3];
};

static inline float *dp_model_pdata(const struct dp_model *m, int i) {
    return i < 0 ? NULL : m->data + m->p[i].off;
}

/* Feature transform of one raw value of feature column f. */
float dp_model_feat(const struct dp_model *m, int f, double raw);

/* ---- the fast batched engine (model_fast.c) ----
 * A batch stacks graphs of equal layer count and Set2Set steps: their nodes are concatenated and
 * the (normalised) adjacency is one block-diagonal CSR matrix, so every dense transform is one
 * GEMM over all nodes of all graphs. */
struct dp_fx_batch {
    int    n_graphs, n_nodes, n_layers, steps;
    int   *node_off;     /* n_graphs + 1 */
    int   *graph_of;     /* n_nodes: graph index of each node */
    int   *row_ptr;      /* n_nodes + 1: neighbours (no self loops) */
    int   *col;
    float *gcn_val;      /* D^-1/2 A D^-1/2 values of the CSR entries */
    float *gcn_self;     /* n_nodes: 1 / d_i */
    float *x;            /* n_nodes x n_feat, after the feature transform */
    const double *const *raw; /* borrowed per graph: g->x */
    /* Dense graphs aggregate with one GEMM: per graph, offset of its n x n off-diagonal block in
     * dense_gcn (GCN values) and dense_one (0/1), or -1 for a sparse graph (CSR rows). */
    long  *dense_off;
    float *dense_gcn, *dense_one;
};

/* Scratch and saved activations of one forward (and backward) pass; reusable across calls. */
struct dp_fx_work {
    float *buf;
    size_t cap;          /* floats */
    /* views into buf, set by dp_fx_forward */
    float *states;       /* (L+1) x M x H (state 0 = padded input unused) */
    float *save;         /* L x slots x M x H */
    float *s2s;          /* Set2Set saved per step */
    float *emb;          /* B x 2H */
    float *head;         /* head activations */
    float *tmp;          /* scratch */
    int    slots;
    bool   saved;
    float *bbuf;         /* backward scratch */
    size_t bcap;
};

/* Frees the batch's arrays (not b itself) and zeroes it; safe on a zeroed or freed batch. */
void dp_fx_batch_free(struct dp_fx_batch *b);
/* Builds the batch (graphs must share n_layers and steps under m's arch). */
enum dp_status dp_fx_batch_build(const struct dp_model *m, const struct dp_grouped *const *g,
                                 int n, struct dp_fx_batch *b, struct dp_error *err);
void dp_fx_work_free(struct dp_fx_work *w);
/* Forward over the batch: emb (B x 2H) and out (B x n_out) may be NULL. With save, keeps what
 * the backward needs in w. from_emb: skip the body and run only the head on emb. */
enum dp_status dp_fx_forward(const struct dp_model *m, const struct dp_fx_batch *b,
                             struct dp_fx_work *w, bool save, float *emb, float *out,
                             struct dp_error *err);
/* Backward of sum(dout . out) after a saved forward: adds parameter gradients into grads[i]
 * (NULL entries are skipped; `body` false stops after the head), and writes d/d transformed
 * features (n_nodes x n_feat) into dx when not NULL. */
enum dp_status dp_fx_backward(const struct dp_model *m, const struct dp_fx_batch *b,
                              struct dp_fx_work *w, const float *dout, float *const *grads,
                              bool body, float *dx, struct dp_error *err);
/* Head only: out = head(emb) for B rows; with grads, backward of sum(dout . out) too. */
void dp_fx_head(const struct dp_model *m, int B, const float *emb, float *out, float *act);
enum dp_status dp_fx_head_backward(const struct dp_model *m, int B, const float *emb,
                                   const float *act, const float *dout, float *const *grads,
                                   float *demb); /* DP_ERR_NOMEM only */
/* Floats of head activations for B rows. */
size_t dp_fx_head_act_size(const struct dp_model *m, int B);

/* Whether a model runs on the fast engine (GCN, GIN) or on the autograd tape (GAT, MPNN). */
bool dp_model_is_fast(const struct dp_model *m);

#endif
