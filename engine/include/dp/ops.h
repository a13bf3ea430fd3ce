/* ops.h: what driple knows about each op type, in one registry (engine/src/ops/registry.c, one
 * row per TensorFlow op type; importers map their ops onto these names): the class that bounds
 * it on a GPU, its cost rule (dp/cost.h), whether its output aliases its input, whether it is a
 * variable, a constant, an input-pipeline output or a state update, its optimizer slots and
 * whether cuDNN may run it with Winograd. Op types the registry does not list are element-wise
 * at one FLOP per output element. The op-type weight table (the third group feature) is a
 * loaded asset: dp_op_weight() in dp/coarsen.h. */
#ifndef DP_OPS_H
#define DP_OPS_H

#include <stdbool.h>

#include "dp/graph.h"

/* What bounds an op on a GPU, for the simulator's efficiency per class. */
enum dp_op_class {
    DP_OPCLASS_NONE,      /* no kernel: variables, constants, NoOp, shape bookkeeping */
    DP_OPCLASS_MATMUL,    /* convolutions and matrix products (tensor-core bound) */
    DP_OPCLASS_ELEMWISE,  /* element-wise, activation, their grads, casts (memory bound) */
    DP_OPCLASS_REDUCE,    /* pooling, batch/layer norm, softmax, reductions (memory bound) */
    DP_OPCLASS_OPTIMIZER, /* Apply* updates */
    DP_OPCLASS_MEMORY,    /* copies: concat, slice, transpose, gather, tile, pad */
    DP_OPCLASS_INPUT,     /* the input pipeline (IteratorGetNext, ...) */
    DP_OPCLASS_COUNT
};

/* The class of a TensorFlow-style op type; Apply* and ResourceApply* types the registry does not
 * list are DP_OPCLASS_OPTIMIZER, other unknown types DP_OPCLASS_ELEMWISE. NULL-safe. */
enum dp_op_class dp_op_class(const char *op);
/* "none", "matmul", "elementwise", "reduce", "optimizer", "memory", "input". */
const char *dp_op_class_name(enum dp_op_class c);

/* A variable (VariableV2, VarHandleOp, ...): holds parameters or optimizer state. */
bool dp_op_is_variable(const char *op);
/* A constant (Const). */
bool dp_op_is_constant(const char *op);
/* Its output is its first input under another name, no copy (Identity, Reshape, Squeeze, ...). */
bool dp_op_is_alias(const char *op);
/* An output of the input pipeline whose first dimension is the batch (IteratorGetNext, queue
 * dequeues). */
bool dp_op_is_input_pipeline(const char *op);
/* Writes a variable in place (Assign, AssignSub, AssignVariableOp, ...): the update phase. */
bool dp_op_is_update(const char *op);
/* A copy that may read more than it writes (Split, Unpack, UnsortedSegmentSum): its input is not
 * capped at the output's size in the byte count. */
bool dp_op_reads_more(const char *op);
/* Optimizer slots per variable an update op keeps (ApplyMomentum 1, ApplyAdam 2,
 * ApplyCenteredRMSProp 3); 0 for every op that is not an optimizer update. */
int dp_op_optimizer_slots(const char *op);
/* How the training-graph builder differentiates an op: engine/src/tfgraph/gradients.c keeps one
 * backward function per rule. DP_OPGRAD_DEFAULT leaves it to the forward primitive's own rule
 * (an element-wise op: "<op>Grad" of dy and x; a binary op: dy to x, nothing to y). */
enum dp_op_grad {
    DP_OPGRAD_DEFAULT,
    DP_OPGRAD_GRAD_DY_Y,    /* "<op>Grad"(dy, y): Relu, Relu6, Elu */
    DP_OPGRAD_GRAD_Y_DY,    /* "<op>Grad"(y, dy): Sigmoid, Tanh, Rsqrt, Sqrt */
    DP_OPGRAD_LRN,          /* LRNGrad(dy, x, y) (and LRN's forward depth_radius) */
    DP_OPGRAD_NEG,          /* Neg(dy) */
    DP_OPGRAD_EXP,          /* dy x y */
    DP_OPGRAD_LOG,          /* dy x 1 / x */
    DP_OPGRAD_SQUARE,       /* dy x 2x */
    DP_OPGRAD_ERF,          /* dy x exp(-x^2) */
    DP_OPGRAD_IDENTITY,     /* dy itself */
    DP_OPGRAD_ADD,          /* AddV2: dy to both */
    DP_OPGRAD_SUB,          /* dy, -dy */
    DP_OPGRAD_MUL,          /* dy y, x dy */
    DP_OPGRAD_DIV,          /* RealDiv: dy / y, dy x (-x / y / y) */
    DP_OPGRAD_SQUARED_DIFF, /* 2 (x - y) dy and its negation */
    DP_OPGRAD_MAXMIN,       /* Maximum, Minimum: dy where selected, through SelectV2 */
    DP_OPGRAD_POW,          /* dy x y x^(y - 1) to x */
    DP_OPGRAD_MEAN,         /* a reduction whose gradient is divided by the count */
    DP_OPGRAD_MAXPOOL,      /* "<op>Grad"(x, y, dy); other pools "<op>Grad"(shape, dy) */
    DP_OPGRAD_COUNT
};
/* The gradient rule of op type `op`; DP_OPGRAD_DEFAULT for types the registry does not list.
 * NULL-safe. */
enum dp_op_grad dp_op_grad(const char *op);
/* The op TensorFlow emits as the gradient of rearranging copy `op` (StridedSlice:
 * StridedSliceGrad, Slice: Pad, Tile: Sum, GatherV2: UnsortedSegmentSum, ...), shaped like the
 * copy's input; "Identity" for a type with none listed. NULL-safe. Static storage. */
const char *dp_op_copy_grad(const char *op);
/* True when cuDNN may run node n of g with Winograd: a 3x3 convolution (forward, or either
 * gradient) of stride 1. */
bool dp_op_winograd_eligible(const struct dp_graph *g, const struct dp_node *n);

#endif
