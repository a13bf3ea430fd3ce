/* model_impl.h: the private layout of struct dp_model (parameter table and the index of each
 * parameter's role) and the fast batched engine shared by model.c, model_fast.c, model_train.c
 * and model_json.c. Dependencies point one way: arch.c and kernels.c at the bottom, then the
 * fast engine (model_fast*.c), then the model's entry points, training and loaders. */
#ifndef DP_MODEL_IMPL_H
#define DP_MODEL_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "dp/model.h"

#define DP_MODEL_MAX_PARAMS 96
#define DP_MODEL_MAX_TOWERS 8
/* the largest table: two MPNN layers of 4 tensors per tower and 2 more, GRU 4, Set2Set 4, MLP 6 */
_Static_assert(2 * (4 * DP_MODEL_MAX_TOWERS + 2) + 14 <= DP_MODEL_MAX_PARAMS,
               "DP_MODEL_MAX_PARAMS too small for DP_MODEL_MAX_TOWERS");

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

/* Feature transform of one raw value of feature column f (arch.c), and its derivative d
 * transformed / d raw at raw (for gradients with respect to the raw input). */
float  dp_arch_feat(const struct dp_arch *a, int f, double raw);
double dp_arch_feat_deriv(const struct dp_arch *a, int f, double raw);

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
    const float *pack[2]; /* the forward's packed transforms of each conv (the backward's too) */
};

/* Frees the batch's arrays (not b itself) and zeroes it; safe on a zeroed or freed batch. */
void dp_fx_batch_free(struct dp_fx_batch *b);
/* Builds the batch (graphs must share n_layers and steps under m's arch). */
enum dp_status dp_fx_batch_build(const struct dp_model *m, const struct dp_grouped *const *g,
                                 int n, struct dp_fx_batch *b, struct dp_error *err);
void dp_fx_work_free(struct dp_fx_work *w);
/* The calling thread's own work buffer, kept between calls (so that a prediction does not fault
 * its pages in again) and freed when the thread exits; NULL when out of memory. Give it back
 * with dp_fx_thread_work_done after each use: it frees buffers too large to keep. */
struct dp_fx_work *dp_fx_thread_work(void);
void dp_fx_thread_work_done(struct dp_fx_work *w);
/* Forward over the batch: emb (B x 2H) and out (B x n_out) may be NULL. With save, keeps what
 * the backward needs in w. Splits the batch's rows over up to dp_threads() threads (pool.h). */
enum dp_status dp_fx_forward(const struct dp_model *m, const struct dp_fx_batch *b,
                             struct dp_fx_work *w, bool save, float *emb, float *out,
                             struct dp_error *err);
/* Backward of sum(dout . out) after a saved forward: adds parameter gradients into grads[i]
 * (NULL entries are skipped; `body` false stops after the head), and writes d/d transformed
 * features (n_nodes x n_feat) into dx when not NULL. */
enum dp_status dp_fx_backward(const struct dp_model *m, const struct dp_fx_batch *b,
                              struct dp_fx_work *w, const float *dout, float *const *grads,
                              bool body, float *dx, struct dp_error *err);
/* Many graphs in one call (model_batch.c), stacked a few of equal size at a time, the stacks
 * shared among up to dp_threads() threads; the same results on any number of threads. */
struct dp_fx_job {
    const struct dp_grouped *const *graphs;
    int                             n;
    float                          *emb, *out; /* n x 2H, n x n_out (callers' order); or NULL */
    const float                    *targets;   /* n x n_out: the MSE loss, or NULL */
    float *const                   *grads;     /* with targets: add d loss / d parameter i into
                                                  grads[i] (NULL entries, or NULL: none) */
    bool                            body;      /* grads reach the body (else the head only) */
    float                         **sgrad;     /* with grads: the sub-batches' sums (grown) */
    int                            *n_sgrad;   /* sub-batches *sgrad holds */
    double                          loss;      /* out: the MSE over n x n_out */
};
/* Runs job over m; DP_ERR_SHAPE / INVALID for a graph the batch cannot take (naming its index
 * or file), DP_ERR_NOMEM. */
enum dp_status dp_fx_run(const struct dp_model *m, struct dp_fx_job *job, struct dp_error *err);

/* Head only: out = head(emb) for B rows; with grads, backward of sum(dout . out) too. */
void dp_fx_head(const struct dp_model *m, int B, const float *emb, float *out, float *act);
enum dp_status dp_fx_head_backward(const struct dp_model *m, int B, const float *emb,
                                   const float *act, const float *dout, float *const *grads,
                                   float *demb); /* DP_ERR_NOMEM only */
/* Floats of head activations for B rows. */
size_t dp_fx_head_act_size(const struct dp_model *m, int B);

/* ---- GAT and MPNN layers of the fast engine (model_fast_conv.c) ----
 * P = in [transforms] is one GEMM over the stacked nodes; these layers continue from it, and
 * their backward writes dP (the gradient of P, stride ldp) for the caller's weight GEMMs. */
/* Columns of P: the layer's input transforms (GCN, GAT: H; MPNN: 3H), then the GRU's 3H. */
int dp_fx_pack_width(const struct dp_model *m);
/* Floats of scratch dp_fx_gat_backward needs for batch b, and of the forward's scratch: s and d
 * (M x heads each) twice (layers alternate), then the attention weights. */
size_t dp_fx_gat_scratch(const struct dp_model *m, const struct dp_fx_batch *b);
size_t dp_fx_gat_fwd_scratch(const struct dp_model *m, const struct dp_fx_batch *b);
/* Each node's source and destination attention scores of conv c for rows [i0, i1): s_jh =
 * wh_jh . att_src_h, d_jh = wh_jh . att_dst_h (wh = in W, stride ldw; s, d: M x heads). */
void dp_fx_gat_scores(const struct dp_model *m, int c, int i0, int i1, const float *wh, int ldw,
                      float *s, float *d);
/* Rows [i0, i1) of a GAT layer's attention over wh into y (n_nodes x H, before bias and
 * activation), from every node's scores s, d (dp_fx_gat_scores); e holds the rows' attention
 * weights (node i's heads x (1 + degree) block at (row_ptr[i] + i) heads). */
void dp_fx_gat_rows(const struct dp_model *m, const struct dp_fx_batch *b, int i0, int i1,
                    const float *wh, int ldw, const float *s, const float *d, float *e, float *y);
/* Backward of dp_fx_gat from dy (n_nodes x H, after the activation's backward): d wh into dwh
 * (stride ldd, overwritten); adds the attention vectors' gradients into grads (may be NULL). */
void dp_fx_gat_backward(const struct dp_model *m, const struct dp_fx_batch *b, int c,
                        const float *wh, int ldw, const float *dy, float *dwh, int ldd,
                        float *const *grads, float *scr);
/* Floats of dp_fx_mpnn_pack's output for any conv of m. */
size_t dp_fx_mpnn_pack_size(const struct dp_model *m);
/* Packs conv c's transforms of its input (in_width x dp_fx_pack_width): [pre (receiver half) |
 * pre (sender half) | post (node half) | W_ih^T with the GRU], then the pre and post biases. */
void dp_fx_mpnn_pack(const struct dp_model *m, int c, float *out);
/* Rows [i0, i1) of the towers, aggregation and mixing linear of conv c from P = in pack (stride
 * ldp; every row's, the messages reading neighbours) into y (n_nodes x H, before the mixing bias
 * and activation); agg (the summed messages) and u (the towers' outputs), n_nodes x H each, are
 * kept for the backward. */
void dp_fx_mpnn(const struct dp_model *m, const struct dp_fx_batch *b, int c, int i0, int i1,
                const float *P, int ldp, const float *pack, float *y, float *agg, float *u);
/* Backward of dp_fx_mpnn from dy (after the activation's backward): writes dP's first 3H
 * columns, adds the mixing, post (aggregate half) and both bias gradients into grads (may be
 * NULL); scr holds 3 n_nodes x H floats. */
void dp_fx_mpnn_backward(const struct dp_model *m, const struct dp_fx_batch *b, int c,
                         const float *in, int ldin, const float *pack, const float *agg,
                         const float *u, const float *dy, float *dP, int ldp,
                         float *const *grads, float *scr);
/* Adds conv c's fused weight gradient dW (in_width x dp_fx_pack_width) into the pre, post (node
 * half) and W_ih gradients (NULL entries skipped). */
void dp_fx_mpnn_unpack(const struct dp_model *m, int c, const float *dW, float *const *grads);

#endif
