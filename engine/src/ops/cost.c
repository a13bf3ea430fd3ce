/* cost.c: per-op FLOPs and bytes from op type, shapes and attributes. Convolutions and matrix
 * products use the exact multiply-add count (x2); element-wise ops a small per-element count;
 * bytes are the inputs read plus the output written. Optimizer updates are costed from the
 * variable's size (their gradient input may be a multi-output op's first output). */
#include "dp/cost.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct op_info {
    const char      *op;
    enum dp_op_class cls;
    double           per_elem; /* FLOPs per output element (element-wise and reductions) */
};

/* Ops not listed are element-wise at 1 FLOP per element. */
static const struct op_info ops[] = {
    {"VariableV2", DP_OPCLASS_NONE, 0}, {"VarHandleOp", DP_OPCLASS_NONE, 0},
    {"Variable", DP_OPCLASS_NONE, 0}, {"Const", DP_OPCLASS_NONE, 0},
    {"Identity", DP_OPCLASS_NONE, 0}, {"NoOp", DP_OPCLASS_NONE, 0},
    {"Placeholder", DP_OPCLASS_NONE, 0}, {"Shape", DP_OPCLASS_NONE, 0},
    {"ShapeN", DP_OPCLASS_NONE, 0}, {"Reshape", DP_OPCLASS_NONE, 0},
    {"ExpandDims", DP_OPCLASS_NONE, 0}, {"Squeeze", DP_OPCLASS_NONE, 0},
    {"ConcatOffset", DP_OPCLASS_NONE, 0}, {"BroadcastGradientArgs", DP_OPCLASS_NONE, 0},
    {"Assign", DP_OPCLASS_NONE, 0}, {"ReadVariableOp", DP_OPCLASS_NONE, 0},
    {"StopGradient", DP_OPCLASS_NONE, 0}, {"Size", DP_OPCLASS_NONE, 0},
    {"Rank", DP_OPCLASS_NONE, 0},
    {"Conv2D", DP_OPCLASS_MATMUL, 0}, {"Conv2DBackpropInput", DP_OPCLASS_MATMUL, 0},
    {"Conv2DBackpropFilter", DP_OPCLASS_MATMUL, 0},
    {"DepthwiseConv2dNative", DP_OPCLASS_MATMUL, 0},
    {"DepthwiseConv2dNativeBackpropInput", DP_OPCLASS_MATMUL, 0},
    {"DepthwiseConv2dNativeBackpropFilter", DP_OPCLASS_MATMUL, 0},
    {"MatMul", DP_OPCLASS_MATMUL, 0}, {"BatchMatMul", DP_OPCLASS_MATMUL, 0},
    {"BatchMatMulV2", DP_OPCLASS_MATMUL, 0}, {"Einsum", DP_OPCLASS_MATMUL, 0},
    {"Sigmoid", DP_OPCLASS_ELEMWISE, 4}, {"Tanh", DP_OPCLASS_ELEMWISE, 4},
    {"Exp", DP_OPCLASS_ELEMWISE, 4}, {"Log", DP_OPCLASS_ELEMWISE, 4},
    {"Erf", DP_OPCLASS_ELEMWISE, 4}, {"Pow", DP_OPCLASS_ELEMWISE, 4},
    {"Rsqrt", DP_OPCLASS_ELEMWISE, 2}, {"Sqrt", DP_OPCLASS_ELEMWISE, 2},
    {"Softplus", DP_OPCLASS_ELEMWISE, 4}, {"Elu", DP_OPCLASS_ELEMWISE, 4},
    {"SigmoidGrad", DP_OPCLASS_ELEMWISE, 3}, {"TanhGrad", DP_OPCLASS_ELEMWISE, 3},
    {"RsqrtGrad", DP_OPCLASS_ELEMWISE, 4}, {"SqrtGrad", DP_OPCLASS_ELEMWISE, 3},
    {"SquaredDifference", DP_OPCLASS_ELEMWISE, 2}, {"Cast", DP_OPCLASS_ELEMWISE, 0},
    {"LRN", DP_OPCLASS_REDUCE, 10}, {"LRNGrad", DP_OPCLASS_REDUCE, 15},
    {"FusedBatchNorm", DP_OPCLASS_REDUCE, 8}, {"FusedBatchNormV2", DP_OPCLASS_REDUCE, 8},
    {"FusedBatchNormV3", DP_OPCLASS_REDUCE, 8},
    {"FusedBatchNormGrad", DP_OPCLASS_REDUCE, 12},
    {"FusedBatchNormGradV2", DP_OPCLASS_REDUCE, 12},
    {"FusedBatchNormGradV3", DP_OPCLASS_REDUCE, 12},
    {"Softmax", DP_OPCLASS_REDUCE, 5}, {"LogSoftmax", DP_OPCLASS_REDUCE, 5},
    {"SoftmaxCrossEntropyWithLogits", DP_OPCLASS_REDUCE, 0},
    {"SparseSoftmaxCrossEntropyWithLogits", DP_OPCLASS_REDUCE, 0},
    {"MaxPool", DP_OPCLASS_REDUCE, 0}, {"AvgPool", DP_OPCLASS_REDUCE, 0},
    {"MaxPoolGrad", DP_OPCLASS_REDUCE, 0}, {"AvgPoolGrad", DP_OPCLASS_REDUCE, 0},
    {"Mean", DP_OPCLASS_REDUCE, 0}, {"Sum", DP_OPCLASS_REDUCE, 0}, {"Max", DP_OPCLASS_REDUCE, 0},
    {"Min", DP_OPCLASS_REDUCE, 0}, {"Prod", DP_OPCLASS_REDUCE, 0},
    {"BiasAddGrad", DP_OPCLASS_REDUCE, 0}, {"L2Loss", DP_OPCLASS_REDUCE, 0},
    {"ApplyGradientDescent", DP_OPCLASS_OPTIMIZER, 2}, {"ApplyMomentum", DP_OPCLASS_OPTIMIZER, 4},
    {"ApplyAdam", DP_OPCLASS_OPTIMIZER, 12},
    {"ResourceApplyGradientDescent", DP_OPCLASS_OPTIMIZER, 2},
    {"ResourceApplyMomentum", DP_OPCLASS_OPTIMIZER, 4},
    {"ResourceApplyAdam", DP_OPCLASS_OPTIMIZER, 12}, {"ApplyRMSProp", DP_OPCLASS_OPTIMIZER, 8},
    {"ApplyAdagrad", DP_OPCLASS_OPTIMIZER, 5},
    {"ConcatV2", DP_OPCLASS_MEMORY, 0}, {"Concat", DP_OPCLASS_MEMORY, 0},
    {"Split", DP_OPCLASS_MEMORY, 0}, {"SplitV", DP_OPCLASS_MEMORY, 0},
    {"Slice", DP_OPCLASS_MEMORY, 0}, {"StridedSlice", DP_OPCLASS_MEMORY, 0},
    {"Transpose", DP_OPCLASS_MEMORY, 0}, {"GatherV2", DP_OPCLASS_MEMORY, 0},
    {"Gather", DP_OPCLASS_MEMORY, 0}, {"Tile", DP_OPCLASS_MEMORY, 0}, {"Pad", DP_OPCLASS_MEMORY, 0},
    {"Pack", DP_OPCLASS_MEMORY, 0}, {"Unpack", DP_OPCLASS_MEMORY, 0},
    {"UnsortedSegmentSum", DP_OPCLASS_MEMORY, 1}, {"OneHot", DP_OPCLASS_MEMORY, 0},
    {"ZerosLike", DP_OPCLASS_MEMORY, 0}, {"Fill", DP_OPCLASS_MEMORY, 0},
    {"BroadcastTo", DP_OPCLASS_MEMORY, 0}, {"Copy", DP_OPCLASS_MEMORY, 0},
    {"_Send", DP_OPCLASS_MEMORY, 0}, {"_Recv", DP_OPCLASS_MEMORY, 0},
    {"IteratorV2", DP_OPCLASS_INPUT, 0}, {"IteratorGetNext", DP_OPCLASS_INPUT, 0},
    {"MakeIterator", DP_OPCLASS_INPUT, 0}, {"QueueDequeueManyV2", DP_OPCLASS_INPUT, 0},
    {"RandomUniform", DP_OPCLASS_ELEMWISE, 1}, {"TruncatedNormal", DP_OPCLASS_ELEMWISE, 2},
};

static const struct op_info *find_op(const char *op) {
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(ops[i].op, op)) return &ops[i];
    return NULL;
}

enum dp_op_class dp_op_class(const char *op) {
    const struct op_info *o = op ? find_op(op) : NULL;
    if (o) return o->cls;
    if (op && (!strncmp(op, "Apply", 5) || !strncmp(op, "ResourceApply", 13)))
        return DP_OPCLASS_OPTIMIZER;
    return DP_OPCLASS_ELEMWISE;
}

const char *dp_op_class_name(enum dp_op_class c) {
    static const char *const names[] = {"none", "matmul", "elementwise", "reduce", "optimizer",
                                        "memory", "input"};
    _Static_assert(sizeof names / sizeof names[0] == DP_OPCLASS_COUNT, "update names");
    return (unsigned)c < DP_OPCLASS_COUNT ? names[c] : "none";
}

enum dp_op_phase dp_node_phase(const struct dp_node *n) {
    const char *phase = dp_node_attr(n, "phase");
    if (phase && !strcmp(phase, "init")) return DP_PHASE_INIT;
    enum dp_op_class cls = dp_op_class(n->op);
    if (cls == DP_OPCLASS_INPUT) return DP_PHASE_INPUT;
    if (!strncmp(n->name, "gradients/", 10) || strstr(n->name, "/gradients/") ||
        !strncmp(n->name, "loss_scale/unscale/", 19))
        return DP_PHASE_BACKWARD;
    if (cls == DP_OPCLASS_OPTIMIZER || !strcmp(n->op, "Assign") || !strcmp(n->op, "AssignSub") ||
        !strcmp(n->op, "AssignAdd") || !strcmp(n->op, "AssignVariableOp") ||
        !strcmp(n->op, "AssignSubVariableOp") || !strcmp(n->op, "AssignAddVariableOp"))
        return DP_PHASE_UPDATE;
    return DP_PHASE_FORWARD;
}

const char *dp_op_phase_name(enum dp_op_phase p) {
    static const char *const names[] = {"init", "input", "forward", "backward", "update"};
    _Static_assert(sizeof names / sizeof names[0] == DP_PHASE_COUNT, "update names");
    return (unsigned)p < DP_PHASE_COUNT ? names[p] : "forward";
}

double dp_cost_conv2d_flops(int64_t n, int64_t oh, int64_t ow, int64_t cin, int64_t cout,
                            int64_t kh, int64_t kw) {
    return 2.0 * (double)n * (double)oh * (double)ow * (double)cout * (double)cin * (double)kh *
           (double)kw;
}

double dp_cost_matmul_flops(int64_t m, int64_t n, int64_t k) {
    return 2.0 * (double)m * (double)n * (double)k;
}

static double dim_at(const struct dp_node *n, int d, int64_t batch) {
    if (d < 0) d += n->n_dims;
    if (n->n_dims < 0 || d < 0 || d >= n->n_dims) return 0;
    int64_t v = n->dims[d] == DP_DIM_BATCH ? batch : n->dims[d];
    return v > 0 ? (double)v : 0;
}

static int elem_size(const struct dp_node *n) {
    int s = dp_dtype_size(n->dtype);
    return s > 0 ? s : n->dtype == DP_DTYPE_UNKNOWN ? 4 : 0;
}

/* Product of the integers in an attribute value ("[1, 3, 3, 1]" -> 9); 1 when absent. */
static double attr_product(const struct dp_node *n, const char *key) {
    const char *v = dp_node_attr(n, key);
    if (!v) return 1;
    double p = 1;
    int found = 0;
    while (*v) {
        if (*v >= '0' && *v <= '9') {
            char *end;
            long x = strtol(v, &end, 10);
            if (x > 0) p *= (double)x;
            found = 1;
            v = end;
        } else v++;
    }
    return found ? p : 1;
}

/* Copies that read no more than they write. */
static bool reads_at_most_out(const char *op) {
    return strcmp(op, "Split") && strcmp(op, "SplitV") && strcmp(op, "Unpack") &&
           strcmp(op, "UnsortedSegmentSum");
}

static const struct dp_node *input(const struct dp_graph *g, const struct dp_node *n, int k) {
    return k < n->n_inputs ? dp_graph_node(g, (size_t)n->inputs[k]) : NULL;
}

static double size_of(const struct dp_node *n, int64_t batch) {
    return n ? dp_node_tensor_size(n, batch) : 0;
}

void dp_cost_node(const struct dp_graph *g, size_t i, int64_t batch, double *flops,
                  double *bytes) {
    const struct dp_node *n = dp_graph_node(g, i);
    const struct op_info *info = find_op(n->op);
    enum dp_op_class cls = dp_op_class(n->op);
    double out = dp_node_tensor_size(n, batch);
    double f = 0, by = 0;
    const char *phase = dp_node_attr(n, "phase");
    if (phase && !strcmp(phase, "init")) { /* runs once at session start, not per step */
        *flops = 0;
        *bytes = 0;
        return;
    }
    if (cls == DP_OPCLASS_NONE || cls == DP_OPCLASS_INPUT) {
        *flops = 0;
        *bytes = cls == DP_OPCLASS_INPUT ? out * elem_size(n) : 0;
        return;
    }
    if (cls == DP_OPCLASS_OPTIMIZER) {
        /* Reads the variable, its slots and the gradient; writes the variable and slots. */
        int slots = strstr(n->op, "Adam") ? 2 : strstr(n->op, "Momentum") ? 1 : 0;
        *flops = out * (info ? info->per_elem : 4);
        *bytes = out * 4.0 * (3 + 2 * slots);
        return;
    }
    for (int k = 0; k < n->n_inputs; k++) {
        const struct dp_node *in = input(g, n, k);
        if (!strcmp(in->op, "Const")) continue;
        double s = size_of(in, batch);
        /* An element-wise op reads no more than it writes (broadcasting only shrinks inputs),
         * nor does a copy (slice, gather, one-hot, tile, pad): a larger input is a multi-output
         * op (IteratorGetNext, FusedBatchNormV3) whose first output is not the one read. */
        if (s > out && (cls == DP_OPCLASS_ELEMWISE ||
                        (cls == DP_OPCLASS_MEMORY && reads_at_most_out(n->op))))
            s = out;
        by += s * elem_size(in);
    }
    by += out * elem_size(n);
    const char *op = n->op;
    if (strstr(op, "FusedBatchNormGrad") && n->n_inputs >= 2) /* dy and x; not the reserve */
        by = (size_of(input(g, n, 0), batch) + size_of(input(g, n, 1), batch) + out) *
             elem_size(n);
    if (!strcmp(op, "Conv2D") || !strcmp(op, "Conv2DBackpropInput")) {
        const struct dp_node *w = input(g, n, 1);
        const struct dp_node *dy = !strcmp(op, "Conv2D") ? n : input(g, n, 2);
        if (w && w->n_dims == 4)
            f = 2.0 * size_of(dy, batch) * dim_at(w, 0, batch) * dim_at(w, 1, batch) *
                dim_at(w, 2, batch);
    } else if (!strcmp(op, "Conv2DBackpropFilter")) {
        const struct dp_node *dy = input(g, n, 2);
        if (n->n_dims == 4)
            f = 2.0 * size_of(dy, batch) * dim_at(n, 0, batch) * dim_at(n, 1, batch) *
                dim_at(n, 2, batch);
    } else if (!strcmp(op, "DepthwiseConv2dNative") ||
               !strcmp(op, "DepthwiseConv2dNativeBackpropInput")) {
        const struct dp_node *w = input(g, n, 1);
        const struct dp_node *dy = !strcmp(op, "DepthwiseConv2dNative") ? n : input(g, n, 2);
        if (w && w->n_dims == 4)
            f = 2.0 * size_of(dy, batch) * dim_at(w, 0, batch) * dim_at(w, 1, batch);
    } else if (!strcmp(op, "DepthwiseConv2dNativeBackpropFilter")) {
        const struct dp_node *dy = input(g, n, 2);
        if (n->n_dims == 4)
            f = 2.0 * size_of(dy, batch) * dim_at(n, 0, batch) * dim_at(n, 1, batch);
    } else if (!strcmp(op, "MatMul") || !strcmp(op, "BatchMatMul") ||
               !strcmp(op, "BatchMatMulV2")) {
        /* C = A.B holds |C| x K products; with A unbroadcast, |C| x K = |A| x N. */
        const struct dp_node *a = input(g, n, 0), *c = input(g, n, 1);
        if (a && c && c->n_dims > a->n_dims) { /* A broadcast: |C| x K = |B| x M */
            f = 2.0 * size_of(c, batch) * dim_at(n, -2, batch);
        } else if (a) {
            f = 2.0 * size_of(a, batch) * dim_at(n, -1, batch);
        }
    } else if (!strcmp(op, "MaxPool") || !strcmp(op, "AvgPool")) {
        f = out * attr_product(n, "ksize");
    } else if (!strcmp(op, "MaxPoolGrad")) {
        f = size_of(input(g, n, 2), batch) * attr_product(n, "ksize");
    } else if (!strcmp(op, "AvgPoolGrad")) {
        f = size_of(input(g, n, 1), batch) * attr_product(n, "ksize");
    } else if (!strcmp(op, "SoftmaxCrossEntropyWithLogits") ||
               !strcmp(op, "SparseSoftmaxCrossEntropyWithLogits")) {
        f = 6.0 * size_of(input(g, n, 0), batch);
    } else if (!strcmp(op, "Mean") || !strcmp(op, "Sum") || !strcmp(op, "Max") ||
               !strcmp(op, "Min") || !strcmp(op, "Prod") || !strcmp(op, "BiasAddGrad") ||
               !strcmp(op, "L2Loss")) {
        f = size_of(input(g, n, 0), batch);
    } else if (!strcmp(op, "AddN")) {
        f = out * (n->n_inputs > 1 ? n->n_inputs - 1 : 1);
    } else if (!strcmp(op, "FusedBatchNormGradV3") || !strcmp(op, "FusedBatchNormGradV2") ||
               !strcmp(op, "FusedBatchNormGrad")) {
        f = 12.0 * size_of(input(g, n, 1), batch);
    } else {
        f = out * (info ? info->per_elem : 1);
    }
    *flops = f;
    *bytes = by;
}

void dp_cost_fill(struct dp_graph *g, int64_t batch, bool overwrite) {
    if (batch <= 0) batch = dp_graph_batch(g) > 0 ? dp_graph_batch(g) : 32;
    size_t n = dp_graph_n_nodes(g);
    for (size_t i = 0; i < n; i++) {
        const struct dp_node *nd = dp_graph_node(g, i);
        if (!overwrite && nd->flops >= 0 && nd->bytes >= 0) continue;
        double f, by;
        dp_cost_node(g, i, batch, &f, &by);
        dp_graph_set_cost(g, (int)i, f, by, nd->params);
    }
}

double dp_cost_total_flops(const struct dp_graph *g, int64_t batch) {
    double total = 0;
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
        double f, by;
        dp_cost_node(g, i, batch, &f, &by);
        total += f;
    }
    return total;
}

int64_t dp_graph_param_count(const struct dp_graph *g, bool trainable_only) {
    int64_t total = 0;
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) {
        const struct dp_node *n = dp_graph_node(g, i);
        if (n->params <= 0) continue;
        const char *t = dp_node_attr(n, "trainable");
        if (trainable_only && t && !strcmp(t, "false")) continue;
        /* a file may give each node up to 2^53: saturate rather than overflow int64_t */
        if (n->params > INT64_MAX - total) return INT64_MAX;
        total += n->params;
    }
    return total;
}
