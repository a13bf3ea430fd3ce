/* nn.h: a small ggml-style autograd tape for the inspector's layers. A context (arena) owns every
 * tensor made from it; builders only record an op and its sources and allocate the result;
 * dp_nn_forward computes every recorded tensor in order, dp_nn_backward runs reverse-mode
 * autodiff over the recording. Tensors are 2-D row-major float32 (rows x cols). No global state:
 * one context per thread. Parameters are wrapped (borrowed), so they live apart from the arena.
 *
 *   struct dp_ctx *ctx = dp_ctx_init(1 << 20);
 *   struct dp_tensor *x = dp_tensor_new(ctx, n, 3), *w = dp_tensor_wrap(ctx, 3, 64, W, true);
 *   struct dp_tensor *y = dp_leaky_relu(ctx, dp_agg_gcn(ctx, dp_matmul(ctx, x, w, false), &adj), 0.01f);
 *   struct dp_tensor *loss = dp_mse(ctx, dp_sum_rows(...), target);
 *   dp_nn_forward(ctx); dp_nn_backward(ctx, loss, NULL);  // w->grad now holds dloss/dW
 *   dp_ctx_free(ctx);
 */
#ifndef DP_NN_H
#define DP_NN_H

#include <stdbool.h>
#include <stddef.h>

enum dp_op {
    DP_OP_NONE,        /* a leaf: input or parameter */
    DP_OP_MATMUL,      /* a (m x k) . b (k x n), or a . b^T when iparam[0] (b is n x k) */
    DP_OP_ADD,         /* a + b, same shape */
    DP_OP_ADD_BIAS,    /* a (m x n) + b (1 x n) on every row */
    DP_OP_MUL,         /* a * b element-wise */
    DP_OP_SIGMOID,
    DP_OP_TANH,
    DP_OP_RELU,
    DP_OP_LEAKY_RELU,  /* slope fparam */
    DP_OP_AGG_GCN,     /* D^-1/2 (A + I) D^-1/2 . a (adjacency borrowed) */
    DP_OP_AGG_GIN,     /* (A + (1 + eps) I) . a, eps = b (1 x 1) */
    DP_OP_SOFTMAX_SEG, /* softmax of a column vector within each segment (graph) */
    DP_OP_CONCAT,      /* [a | b] along columns */
    DP_OP_SLICE,       /* columns [iparam[0], iparam[0] + cols) of a */
    DP_OP_GAT,         /* multi-head graph attention: a = W h (n x heads F), b = att_src,
                          c = att_dst (heads x F); LeakyReLU(0.2) scores, softmax over
                          neighbours and self; out n x heads F */
    DP_OP_GATHER,      /* rows of a picked by index[] (n_index rows) */
    DP_OP_SCATTER_ADD, /* out (iparam[0] rows) row index[r] += a row r: sum aggregation */
    DP_OP_LSTM,        /* gates a (B x 4H: i f g o pre-activations), cell b (B x H) -> [h | c] */
    DP_OP_GRU,         /* input gates a, hidden gates b (B x 3H: r z n, biases included),
                          hidden c (B x H) -> (1 - z) n + z c, n = tanh(a_n + r b_n) */
    DP_OP_SEG_DOT,     /* e_i = a_i . b_seg(i): a (n x F), b (segments x F) -> n x 1 */
    DP_OP_SEG_WSUM,    /* r_s = sum_{i in s} a_i b_i: a (n x 1), b (n x F) -> segments x F */
    DP_OP_MSE,         /* mean of (a - b)^2 over every element -> 1 x 1 (no gradient into b) */
    DP_OP_COUNT
};

/* "matmul", ... ; "?" out of range. */
const char *dp_op_name(enum dp_op op);

/* A borrowed CSR adjacency without self loops (symmetric), plus the GCN normalisation. */
struct dp_nn_adj {
    int          n;
    const int   *row_ptr, *col;  /* n + 1, row_ptr[n] */
    const float *val;            /* GCN: 1/sqrt(d_i d_j) per entry, d = 1 + degree */
    const float *self;           /* GCN: 1/d_i */
};
/* Segments (graphs) over the rows: segment s holds rows off[s] .. off[s+1]-1. */
struct dp_nn_seg {
    int        n;
    const int *off;
};

struct dp_tensor {
    enum dp_op        op;
    int               rows, cols;
    float            *data;     /* rows x cols */
    float            *grad;     /* allocated by dp_nn_backward when requires_grad */
    struct dp_tensor *src[3];
    int               iparam[2];
    float             fparam;
    const struct dp_nn_adj *adj;  /* borrowed */
    const struct dp_nn_seg *seg;  /* borrowed */
    const int        *index;      /* borrowed: GATHER / SCATTER_ADD */
    float            *aux;        /* op-saved values (GAT scores) */
    bool              requires_grad;
    bool              computed;
};

struct dp_ctx;

/* A context whose arena grows in blocks of about block_bytes. NULL when out of memory. */
struct dp_ctx *dp_ctx_init(size_t block_bytes);
/* Frees every tensor of the context; NULL-safe. */
void dp_ctx_free(struct dp_ctx *ctx);
/* True when an allocation failed since init: results are then meaningless (builders return a
 * 1 x 1 dummy instead of NULL so that composition never crashes). */
bool dp_ctx_failed(const struct dp_ctx *ctx);

/* Leaves. dp_tensor_new: zeroed, owned by ctx. dp_tensor_wrap: borrows data (must outlive ctx). */
struct dp_tensor *dp_tensor_new(struct dp_ctx *ctx, int rows, int cols);
struct dp_tensor *dp_tensor_wrap(struct dp_ctx *ctx, int rows, int cols, float *data,
                                 bool requires_grad);

/* Builders: record an op, check shapes (DP_ASSERT), allocate the result; compute nothing. */
struct dp_tensor *dp_matmul(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *b, bool tb);
struct dp_tensor *dp_add(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *b);
struct dp_tensor *dp_add_bias(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *b);
struct dp_tensor *dp_mul(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *b);
struct dp_tensor *dp_sigmoid(struct dp_ctx *ctx, struct dp_tensor *a);
struct dp_tensor *dp_tanh(struct dp_ctx *ctx, struct dp_tensor *a);
struct dp_tensor *dp_relu(struct dp_ctx *ctx, struct dp_tensor *a);
struct dp_tensor *dp_leaky_relu(struct dp_ctx *ctx, struct dp_tensor *a, float slope);
struct dp_tensor *dp_agg_gcn(struct dp_ctx *ctx, struct dp_tensor *a, const struct dp_nn_adj *adj);
struct dp_tensor *dp_agg_gin(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *eps,
                             const struct dp_nn_adj *adj);
struct dp_tensor *dp_softmax_seg(struct dp_ctx *ctx, struct dp_tensor *a,
                                 const struct dp_nn_seg *seg);
struct dp_tensor *dp_concat(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *b);
struct dp_tensor *dp_slice(struct dp_ctx *ctx, struct dp_tensor *a, int col0, int cols);
struct dp_tensor *dp_gat(struct dp_ctx *ctx, struct dp_tensor *wh, struct dp_tensor *att_src,
                         struct dp_tensor *att_dst, const struct dp_nn_adj *adj);
struct dp_tensor *dp_gather(struct dp_ctx *ctx, struct dp_tensor *a, const int *index, int n);
struct dp_tensor *dp_scatter_add(struct dp_ctx *ctx, struct dp_tensor *a, const int *index,
                                 int n_out);
struct dp_tensor *dp_lstm(struct dp_ctx *ctx, struct dp_tensor *gates, struct dp_tensor *c);
struct dp_tensor *dp_gru(struct dp_ctx *ctx, struct dp_tensor *gi, struct dp_tensor *gh,
                         struct dp_tensor *h);
struct dp_tensor *dp_seg_dot(struct dp_ctx *ctx, struct dp_tensor *x, struct dp_tensor *q,
                             const struct dp_nn_seg *seg);
struct dp_tensor *dp_seg_wsum(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *x,
                              const struct dp_nn_seg *seg);
struct dp_tensor *dp_mse(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *target);

/* Computes every recorded tensor not yet computed, in recording order (leaves are inputs). */
void dp_nn_forward(struct dp_ctx *ctx);
/* Marks every op tensor as not computed (after a leaf's data changed); dp_nn_forward redoes them. */
void dp_nn_invalidate(struct dp_ctx *ctx);
/* Reverse-mode autodiff from root: root's gradient is seed (root's size floats) or all ones when
 * seed is NULL; every tensor that requires grad gets ->grad (zeroed first, then accumulated). */
void dp_nn_backward(struct dp_ctx *ctx, struct dp_tensor *root, const float *seed);

#endif
