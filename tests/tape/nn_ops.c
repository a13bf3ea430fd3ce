/* nn_ops.c: the tape's context (an arena of blocks owning every tensor) and the op builders,
 * which check shapes, record the op and its sources and allocate the result, computing nothing.
 * Kernels are in nn_forward.c, gradients in nn_backward.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"
#include "dp/status.h"
#include "nn_impl.h"

static const char *const op_names[] = {
    "none",    "matmul",  "add",     "add_bias",    "mul",      "sigmoid",  "tanh",
    "relu",    "leaky_relu", "agg_gcn", "agg_gin",  "softmax_seg", "concat", "slice",
    "gat",     "gather",  "scatter_add", "lstm",    "gru",      "seg_dot",  "seg_wsum",
    "mse",
};
_Static_assert(sizeof op_names / sizeof op_names[0] == DP_OP_COUNT, "update op_names");
_Static_assert(DP_OP_COUNT == 22, "update op_names, nn_forward.c and nn_backward.c");

const char *dp_op_name(enum dp_op op) {
    return (unsigned)op < DP_OP_COUNT ? op_names[op] : "?";
}

struct block {
    struct block *next;
    size_t        size, used;
    _Alignas(64) unsigned char mem[];
};

struct dp_ctx *dp_ctx_init(size_t block_bytes) {
    struct dp_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return NULL;
    ctx->block_bytes = block_bytes < 4096 ? 4096 : block_bytes;
    return ctx;
}

void dp_ctx_free(struct dp_ctx *ctx) {
    if (!ctx) return;
    for (struct block *b = ctx->blocks, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(ctx->nodes);
    free(ctx);
}

bool dp_ctx_failed(const struct dp_ctx *ctx) { return ctx->failed; }

void *dp_nn_alloc(struct dp_ctx *ctx, size_t bytes) {
    bytes = (bytes + 63) & ~(size_t)63;
    if (!bytes) bytes = 64;
    struct block *b = ctx->blocks;
    if (!b || b->size - b->used < bytes) {
        size_t size = bytes > ctx->block_bytes ? bytes : ctx->block_bytes;
        b = aligned_alloc(64, (sizeof *b + size + 63) & ~(size_t)63);
        if (!b) {
            ctx->failed = true;
            return NULL;
        }
        b->size = size;
        b->used = 0;
        b->next = ctx->blocks;
        ctx->blocks = b;
    }
    void *p = b->mem + b->used;
    b->used += bytes;
    memset(p, 0, bytes);
    return p;
}

/* A fresh tensor of rows x cols with zeroed data, appended to the recording. On allocation
 * failure the context is marked failed and a static 1 x 1 stand-in keeps callers safe. */
static struct dp_tensor *new_node(struct dp_ctx *ctx, enum dp_op op, int rows, int cols,
                                  float *borrowed) {
    DP_ASSERT(rows >= 0 && cols >= 0);
    struct dp_tensor *t = dp_nn_alloc(ctx, sizeof *t);
    float *d = borrowed ? borrowed
                        : dp_nn_alloc(ctx, (size_t)rows * (size_t)cols * sizeof(float));
    if (ctx->n_nodes == ctx->cap_nodes) {
        int cap = ctx->cap_nodes ? 2 * ctx->cap_nodes : 256;
        struct dp_tensor **n = realloc(ctx->nodes, (size_t)cap * sizeof *n);
        if (n) {
            ctx->nodes = n;
            ctx->cap_nodes = cap;
        } else {
            ctx->failed = true;
        }
    }
    if (!t || !d || ctx->failed) {
        ctx->failed = true;
        memset(&ctx->dummy, 0, sizeof ctx->dummy);
        ctx->dummy.rows = ctx->dummy.cols = 1;
        ctx->dummy.data = ctx->dummy_data;
        ctx->dummy.computed = true;
        return &ctx->dummy;
    }
    t->op = op;
    t->rows = rows;
    t->cols = cols;
    t->data = d;
    t->computed = op == DP_OP_NONE;
    ctx->nodes[ctx->n_nodes++] = t;
    return t;
}

static struct dp_tensor *unary(struct dp_ctx *ctx, enum dp_op op, struct dp_tensor *a, int rows,
                               int cols) {
    struct dp_tensor *t = new_node(ctx, op, rows, cols, NULL);
    if (t == &ctx->dummy) return t;
    t->src[0] = a;
    t->requires_grad = a->requires_grad;
    return t;
}

static struct dp_tensor *binary(struct dp_ctx *ctx, enum dp_op op, struct dp_tensor *a,
                                struct dp_tensor *b, int rows, int cols) {
    struct dp_tensor *t = unary(ctx, op, a, rows, cols);
    if (t == &ctx->dummy) return t;
    t->src[1] = b;
    t->requires_grad = a->requires_grad || b->requires_grad;
    return t;
}

struct dp_tensor *dp_tensor_new(struct dp_ctx *ctx, int rows, int cols) {
    return new_node(ctx, DP_OP_NONE, rows, cols, NULL);
}

struct dp_tensor *dp_tensor_wrap(struct dp_ctx *ctx, int rows, int cols, float *data,
                                 bool requires_grad) {
    struct dp_tensor *t = new_node(ctx, DP_OP_NONE, rows, cols, data);
    if (t != &ctx->dummy) t->requires_grad = requires_grad;
    return t;
}

struct dp_tensor *dp_matmul(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *b,
                            bool tb) {
    DP_ASSERT(a->cols == (tb ? b->cols : b->rows));
    struct dp_tensor *t = binary(ctx, DP_OP_MATMUL, a, b, a->rows, tb ? b->rows : b->cols);
    t->iparam[0] = tb;
    return t;
}

struct dp_tensor *dp_add(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *b) {
    DP_ASSERT(a->rows == b->rows && a->cols == b->cols);
    return binary(ctx, DP_OP_ADD, a, b, a->rows, a->cols);
}

struct dp_tensor *dp_add_bias(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *b) {
    DP_ASSERT((size_t)b->rows * b->cols == (size_t)a->cols);
    return binary(ctx, DP_OP_ADD_BIAS, a, b, a->rows, a->cols);
}

struct dp_tensor *dp_mul(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *b) {
    DP_ASSERT(a->rows == b->rows && a->cols == b->cols);
    return binary(ctx, DP_OP_MUL, a, b, a->rows, a->cols);
}

struct dp_tensor *dp_sigmoid(struct dp_ctx *ctx, struct dp_tensor *a) {
    return unary(ctx, DP_OP_SIGMOID, a, a->rows, a->cols);
}
struct dp_tensor *dp_tanh(struct dp_ctx *ctx, struct dp_tensor *a) {
    return unary(ctx, DP_OP_TANH, a, a->rows, a->cols);
}
struct dp_tensor *dp_relu(struct dp_ctx *ctx, struct dp_tensor *a) {
    return unary(ctx, DP_OP_RELU, a, a->rows, a->cols);
}
struct dp_tensor *dp_leaky_relu(struct dp_ctx *ctx, struct dp_tensor *a, float slope) {
    struct dp_tensor *t = unary(ctx, DP_OP_LEAKY_RELU, a, a->rows, a->cols);
    t->fparam = slope;
    return t;
}

struct dp_tensor *dp_agg_gcn(struct dp_ctx *ctx, struct dp_tensor *a, const struct dp_nn_adj *adj) {
    DP_ASSERT(adj && adj->n == a->rows && adj->val && adj->self);
    struct dp_tensor *t = unary(ctx, DP_OP_AGG_GCN, a, a->rows, a->cols);
    t->adj = adj;
    return t;
}

struct dp_tensor *dp_agg_gin(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *eps,
                             const struct dp_nn_adj *adj) {
    DP_ASSERT(adj && adj->n == a->rows && eps->rows * eps->cols == 1);
    struct dp_tensor *t = binary(ctx, DP_OP_AGG_GIN, a, eps, a->rows, a->cols);
    t->adj = adj;
    return t;
}

struct dp_tensor *dp_softmax_seg(struct dp_ctx *ctx, struct dp_tensor *a,
                                 const struct dp_nn_seg *seg) {
    DP_ASSERT(a->cols == 1 && seg && seg->off[seg->n] == a->rows);
    struct dp_tensor *t = unary(ctx, DP_OP_SOFTMAX_SEG, a, a->rows, 1);
    t->seg = seg;
    return t;
}

struct dp_tensor *dp_concat(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *b) {
    DP_ASSERT(a->rows == b->rows);
    return binary(ctx, DP_OP_CONCAT, a, b, a->rows, a->cols + b->cols);
}

struct dp_tensor *dp_slice(struct dp_ctx *ctx, struct dp_tensor *a, int col0, int cols) {
    DP_ASSERT(col0 >= 0 && cols >= 0 && col0 + cols <= a->cols);
    struct dp_tensor *t = unary(ctx, DP_OP_SLICE, a, a->rows, cols);
    t->iparam[0] = col0;
    return t;
}

size_t dp_nn_gat_scratch(const struct dp_nn_adj *adj, int heads) {
    int maxcnt = 1; /* entries of the longest row, self loop included */
    for (int i = 0; i < adj->n; i++)
        if (adj->row_ptr[i + 1] - adj->row_ptr[i] + 1 > maxcnt)
            maxcnt = adj->row_ptr[i + 1] - adj->row_ptr[i] + 1;
    return (size_t)adj->n * (size_t)heads * 2 + (size_t)maxcnt;
}

struct dp_tensor *dp_gat(struct dp_ctx *ctx, struct dp_tensor *wh, struct dp_tensor *att_src,
                         struct dp_tensor *att_dst, const struct dp_nn_adj *adj) {
    const int heads = att_src->rows, F = att_src->cols;
    DP_ASSERT(adj && adj->n == wh->rows && wh->cols == heads * F);
    DP_ASSERT(att_dst->rows == heads && att_dst->cols == F);
    struct dp_tensor *t = binary(ctx, DP_OP_GAT, wh, att_src, wh->rows, wh->cols);
    if (t == &ctx->dummy) return t;
    t->src[2] = att_dst;
    t->requires_grad |= att_dst->requires_grad;
    t->adj = adj;
    /* per (row entry incl. self, head): pre-activation score and attention weight; then the
     * kernels' scratch (dp_nn_gat_scratch), allocated here because kernels have no error path */
    const size_t entries = (size_t)adj->row_ptr[adj->n] + (size_t)adj->n;
    t->aux = dp_nn_alloc(ctx, (2 * entries * (size_t)heads + dp_nn_gat_scratch(adj, heads)) *
                                  sizeof(float));
    return t;
}

struct dp_tensor *dp_gather(struct dp_ctx *ctx, struct dp_tensor *a, const int *index, int n) {
    for (int i = 0; i < n; i++) DP_ASSERT(index[i] >= 0 && index[i] < a->rows);
    struct dp_tensor *t = unary(ctx, DP_OP_GATHER, a, n, a->cols);
    t->index = index;
    return t;
}

struct dp_tensor *dp_scatter_add(struct dp_ctx *ctx, struct dp_tensor *a, const int *index,
                                 int n_out) {
    for (int i = 0; i < a->rows; i++) DP_ASSERT(index[i] >= 0 && index[i] < n_out);
    struct dp_tensor *t = unary(ctx, DP_OP_SCATTER_ADD, a, n_out, a->cols);
    t->index = index;
    t->iparam[0] = n_out;
    return t;
}

struct dp_tensor *dp_lstm(struct dp_ctx *ctx, struct dp_tensor *gates, struct dp_tensor *c) {
    DP_ASSERT(gates->rows == c->rows && gates->cols == 4 * c->cols);
    return binary(ctx, DP_OP_LSTM, gates, c, c->rows, 2 * c->cols);
}

struct dp_tensor *dp_gru(struct dp_ctx *ctx, struct dp_tensor *gi, struct dp_tensor *gh,
                         struct dp_tensor *h) {
    DP_ASSERT(gi->rows == h->rows && gh->rows == h->rows);
    DP_ASSERT(gi->cols == 3 * h->cols && gh->cols == 3 * h->cols);
    struct dp_tensor *t = binary(ctx, DP_OP_GRU, gi, gh, h->rows, h->cols);
    if (t == &ctx->dummy) return t;
    t->src[2] = h;
    t->requires_grad |= h->requires_grad;
    return t;
}

struct dp_tensor *dp_seg_dot(struct dp_ctx *ctx, struct dp_tensor *x, struct dp_tensor *q,
                             const struct dp_nn_seg *seg) {
    DP_ASSERT(seg && seg->off[seg->n] == x->rows && q->rows == seg->n && q->cols == x->cols);
    struct dp_tensor *t = binary(ctx, DP_OP_SEG_DOT, x, q, x->rows, 1);
    t->seg = seg;
    return t;
}

struct dp_tensor *dp_seg_wsum(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *x,
                              const struct dp_nn_seg *seg) {
    DP_ASSERT(seg && seg->off[seg->n] == x->rows && a->rows == x->rows && a->cols == 1);
    struct dp_tensor *t = binary(ctx, DP_OP_SEG_WSUM, a, x, seg->n, x->cols);
    t->seg = seg;
    return t;
}

struct dp_tensor *dp_mse(struct dp_ctx *ctx, struct dp_tensor *a, struct dp_tensor *target) {
    DP_ASSERT(a->rows == target->rows && a->cols == target->cols);
    struct dp_tensor *t = binary(ctx, DP_OP_MSE, a, target, 1, 1);
    t->requires_grad = a->requires_grad;
    return t;
}
