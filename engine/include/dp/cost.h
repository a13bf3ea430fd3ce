/* cost.h: per-op cost from op type, shapes and attributes, for any graph (zoo-built or imported):
 * floating-point operations (a multiply-add counts 2) and bytes moved (inputs read + output
 * written, at the dtype's size), for convolutions, matmuls, element-wise ops, pooling, batch
 * norm, softmax, their gradients and the optimizer updates, each op type's rule read from the op
 * registry (dp/ops.h); the op's phase in a training step and the model's parameter count. */
#ifndef DP_COST_H
#define DP_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/graph.h"
#include "dp/ops.h" /* enum dp_op_class, the registry */

/* Where an op sits in a training step (TensorFlow naming conventions, so it also reads real
 * exported graphs): INIT = variable initializers (attr phase=init: run once, not per step),
 * INPUT = the input pipeline, BACKWARD = "gradients/..." (and loss-scale unscaling), UPDATE =
 * optimizer Apply*, Assign/AssignSub/AssignAdd (moving averages, global step), else FORWARD. */
enum dp_op_phase {
    DP_PHASE_INIT, DP_PHASE_INPUT, DP_PHASE_FORWARD, DP_PHASE_BACKWARD, DP_PHASE_UPDATE,
    DP_PHASE_COUNT
};
enum dp_op_phase dp_node_phase(const struct dp_node *n);
/* "init", "input", "forward", "backward", "update". */
const char *dp_op_phase_name(enum dp_op_phase p);

/* Hand formulas (also used by dp_cost_node): a 2-D convolution producing n x oh x ow x cout from
 * cin channels with a kh x kw kernel = 2*n*oh*ow*cout*cin*kh*kw; a product of m x k by k x n =
 * 2*m*n*k. */
double dp_cost_conv2d_flops(int64_t n, int64_t oh, int64_t ow, int64_t cin, int64_t cout,
                            int64_t kh, int64_t kw);
double dp_cost_matmul_flops(int64_t m, int64_t n, int64_t k);

/* FLOPs and bytes of node i at batch size `batch` (DP_DIM_BATCH dims take this value), from its
 * op type, its output shape, its inputs' shapes and attrs (ksize for pooling). Per training
 * step: ops with attr phase=init (variable initializers) cost 0. Unknown shapes give 0. The
 * matmul rule is 2 x |A| x N (A the first operand, N the output's last dim), which equals
 * 2 x M x N x K for plain, transposed, batched and "x of any rank times a matrix" products.
 * Never fails. */
void dp_cost_node(const struct dp_graph *g, size_t i, int64_t batch, double *flops,
                  double *bytes);
/* Sets flops/bytes of every node at `batch` (<= 0: the graph's batch, else 32): all nodes when
 * overwrite, else only those whose flops or bytes are unknown (< 0). */
void dp_cost_fill(struct dp_graph *g, int64_t batch, bool overwrite);
/* Total FLOPs of the graph at `batch` (every node through dp_cost_node). */
double dp_cost_total_flops(const struct dp_graph *g, int64_t batch);

/* Parameter count: the sum of `params` over nodes, skipping those with attr trainable=false
 * when trainable_only (batch-norm moving statistics). Optimizer slots carry no params. */
int64_t dp_graph_param_count(const struct dp_graph *g, bool trainable_only);

#endif
