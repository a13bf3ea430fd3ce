/* nn_impl.h: the tape context's private layout and the helpers shared by nn_ops.c,
 * nn_forward.c and nn_backward.c. */
#ifndef DP_NN_IMPL_H
#define DP_NN_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "nn.h"

struct block;

struct dp_ctx {
    struct block      *blocks;    /* newest first */
    size_t             block_bytes;
    struct dp_tensor **nodes;     /* in recording order (a topological order) */
    int                n_nodes, cap_nodes;
    bool               failed;
    struct dp_tensor   dummy;     /* returned after an allocation failure */
    float              dummy_data[1];
};

/* Zeroed, 64-byte aligned memory owned by ctx; NULL (and ctx marked failed) when out of memory. */
void *dp_nn_alloc(struct dp_ctx *ctx, size_t bytes);

/* Floats of scratch the GAT kernels need after the scores in t->aux (forward: 2 n heads for the
 * per-node source and destination terms; backward: those gradients plus one row's entries). */
size_t dp_nn_gat_scratch(const struct dp_nn_adj *adj, int heads);

/* The GCN or GIN aggregation of node t (DP_OP_AGG_*) applied to x (rows x cols), written to o,
 * or added into o when add: the forward of t, and (the matrix being symmetric) its backward. */
void dp_nn_aggregate(const struct dp_tensor *t, const float *x, float *o, bool add);

#endif
