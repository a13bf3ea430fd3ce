/* registry.c: the op registry, one row per TensorFlow op type: class, cost rule, per-element
 * FLOPs, flags (variable, constant, alias, input pipeline, update, Winograd) and optimizer slots.
 * Every other part of the engine asks here (dp/ops.h) instead of comparing op names itself. */
#include "registry.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "core/hash.h"

#define ROWG(op, cls, rule, pe, fl, sl, gr, cg)                                                  \
    {op, DP_OPCLASS_##cls, RULE_##rule, pe, fl, sl, DP_OPGRAD_##gr, cg}
#define ROW(op, cls, rule, pe, fl, sl) ROWG(op, cls, rule, pe, fl, sl, DEFAULT, NULL)
#define NONE_(op, fl) ROW(op, NONE, PER_ELEM, 0, fl, 0)
#define ELEM(op, pe) ROW(op, ELEMWISE, PER_ELEM, pe, 0, 0)
#define ELEMG(op, pe, gr) ROWG(op, ELEMWISE, PER_ELEM, pe, 0, 0, gr, NULL)
#define RED(op, rule, pe) ROW(op, REDUCE, rule, pe, 0, 0)
#define REDG(op, rule, pe, gr) ROWG(op, REDUCE, rule, pe, 0, 0, gr, NULL)
#define MEM(op, fl) ROW(op, MEMORY, PER_ELEM, 0, fl, 0)
#define MEMG(op, fl, cg) ROWG(op, MEMORY, PER_ELEM, 0, fl, 0, DEFAULT, cg)
#define OPT(op, pe, sl) ROW(op, OPTIMIZER, PER_ELEM, pe, 0, sl)

static const struct op_def rows[] = {
    /* no kernel */
    NONE_("VariableV2", OPF_VARIABLE), NONE_("VariableV1", OPF_VARIABLE),
    NONE_("Variable", OPF_VARIABLE), NONE_("VarHandleOp", OPF_VARIABLE),
    NONE_("Const", OPF_CONST), ROWG("Identity", NONE, PER_ELEM, 0, OPF_ALIAS, 0, IDENTITY, NULL),
    NONE_("NoOp", 0),
    NONE_("Placeholder", 0), NONE_("Shape", 0), NONE_("ShapeN", 0), NONE_("Reshape", OPF_ALIAS),
    NONE_("ExpandDims", OPF_ALIAS), NONE_("Squeeze", OPF_ALIAS), NONE_("ConcatOffset", 0),
    NONE_("BroadcastGradientArgs", 0), NONE_("Assign", OPF_UPDATE), NONE_("ReadVariableOp", 0),
    NONE_("StopGradient", OPF_ALIAS), NONE_("Size", 0), NONE_("Rank", 0),
    /* copies that keep the element-wise cost but alias for memory */
    ROW("Snapshot", ELEMWISE, PER_ELEM, 1, OPF_ALIAS, 0),
    ROW("PreventGradient", ELEMWISE, PER_ELEM, 1, OPF_ALIAS, 0),
    /* state updates outside the optimizer (moving averages, the global step) */
    ROW("AssignSub", ELEMWISE, PER_ELEM, 1, OPF_UPDATE, 0),
    ROW("AssignAdd", ELEMWISE, PER_ELEM, 1, OPF_UPDATE, 0),
    ROW("AssignVariableOp", ELEMWISE, PER_ELEM, 1, OPF_UPDATE, 0),
    ROW("AssignSubVariableOp", ELEMWISE, PER_ELEM, 1, OPF_UPDATE, 0),
    ROW("AssignAddVariableOp", ELEMWISE, PER_ELEM, 1, OPF_UPDATE, 0),
    /* convolutions and products */
    ROW("Conv2D", MATMUL, CONV, 0, OPF_WINOGRAD, 0),
    ROW("Conv2DBackpropInput", MATMUL, CONV_BP_INPUT, 0, OPF_WINOGRAD, 0),
    ROW("Conv2DBackpropFilter", MATMUL, CONV_BP_FILTER, 0, OPF_WINOGRAD, 0),
    ROW("Conv3D", MATMUL, CONV, 0, 0, 0),
    ROW("Conv3DBackpropInputV2", MATMUL, CONV_BP_INPUT, 0, 0, 0),
    ROW("Conv3DBackpropFilterV2", MATMUL, CONV_BP_FILTER, 0, 0, 0),
    ROW("DepthwiseConv2dNative", MATMUL, DWCONV, 0, 0, 0),
    ROW("DepthwiseConv2dNativeBackpropInput", MATMUL, DWCONV_BP_INPUT, 0, 0, 0),
    ROW("DepthwiseConv2dNativeBackpropFilter", MATMUL, DWCONV_BP_FILTER, 0, 0, 0),
    ROW("MatMul", MATMUL, MATMUL, 0, 0, 0), ROW("BatchMatMul", MATMUL, MATMUL, 0, 0, 0),
    ROW("BatchMatMulV2", MATMUL, MATMUL, 0, 0, 0), ROW("Einsum", MATMUL, EINSUM, 0, 0, 0),
    /* element-wise with more than one FLOP per element (others default to one), and those of one
     * whose gradient has a rule of its own */
    ELEMG("Sigmoid", 4, GRAD_Y_DY), ELEMG("Tanh", 4, GRAD_Y_DY), ELEMG("Exp", 4, EXP),
    ELEMG("Log", 4, LOG), ELEMG("Erf", 4, ERF), ELEMG("Pow", 4, POW),
    ELEMG("Rsqrt", 2, GRAD_Y_DY), ELEMG("Sqrt", 2, GRAD_Y_DY), ELEM("Softplus", 4),
    ELEMG("Elu", 4, GRAD_DY_Y), ELEMG("Relu", 1, GRAD_DY_Y), ELEMG("Relu6", 1, GRAD_DY_Y),
    ELEMG("Neg", 1, NEG), ELEMG("Square", 1, SQUARE), ELEMG("AddV2", 1, ADD),
    ELEMG("Sub", 1, SUB), ELEMG("Mul", 1, MUL), ELEMG("RealDiv", 1, DIV),
    ELEMG("Maximum", 1, MAXMIN), ELEMG("Minimum", 1, MAXMIN),
    ELEM("SigmoidGrad", 3), ELEM("TanhGrad", 3), ELEM("RsqrtGrad", 4), ELEM("SqrtGrad", 3),
    ELEMG("SquaredDifference", 2, SQUARED_DIFF), ELEM("Cast", 0), ELEM("RandomUniform", 1),
    ELEM("TruncatedNormal", 2), ROW("AddN", ELEMWISE, ADDN, 1, 0, 0),
    /* reductions, normalisations, pooling */
    REDG("LRN", PER_ELEM, 10, LRN), RED("LRNGrad", PER_ELEM, 15),
    RED("FusedBatchNorm", PER_ELEM, 8),
    RED("FusedBatchNormV2", PER_ELEM, 8), RED("FusedBatchNormV3", PER_ELEM, 8),
    RED("FusedBatchNormGrad", BN_GRAD, 12), RED("FusedBatchNormGradV2", BN_GRAD, 12),
    RED("FusedBatchNormGradV3", BN_GRAD, 12), RED("Softmax", PER_ELEM, 5),
    RED("LogSoftmax", PER_ELEM, 5), RED("SoftmaxCrossEntropyWithLogits", XENT, 0),
    RED("SparseSoftmaxCrossEntropyWithLogits", XENT, 0), REDG("MaxPool", POOL, 0, MAXPOOL),
    RED("AvgPool", POOL, 0), RED("MaxPoolGrad", MAXPOOL_GRAD, 0),
    RED("AvgPoolGrad", AVGPOOL_GRAD, 0), REDG("MaxPool3D", POOL, 0, MAXPOOL),
    RED("AvgPool3D", POOL, 0),
    RED("MaxPool3DGrad", MAXPOOL_GRAD, 0), RED("AvgPool3DGrad", AVGPOOL_GRAD, 0),
    REDG("Mean", REDUCE, 0, MEAN), RED("Sum", REDUCE, 0),
    RED("Max", REDUCE, 0), RED("Min", REDUCE, 0), RED("Prod", REDUCE, 0),
    RED("BiasAddGrad", REDUCE, 0), RED("L2Loss", REDUCE, 0),
    /* optimizer updates (ResourceApply* and SparseApply* read the ApplyX row) */
    OPT("ApplyGradientDescent", 2, 0), OPT("ApplyProximalGradientDescent", 3, 0),
    OPT("ApplyMomentum", 4, 1), OPT("ApplyKerasMomentum", 4, 1), OPT("ApplyAdagrad", 5, 1),
    OPT("ApplyAdagradV2", 5, 1), OPT("ApplyProximalAdagrad", 6, 1), OPT("ApplyAdagradDA", 6, 2),
    OPT("ApplyAdam", 12, 2), OPT("ApplyAdaMax", 10, 2), OPT("ApplyAdamWithAmsgrad", 14, 3),
    OPT("ApplyRMSProp", 8, 2), OPT("ApplyCenteredRMSProp", 10, 3), OPT("ApplyAdadelta", 10, 2),
    OPT("ApplyFtrl", 12, 2), OPT("ApplyFtrlV2", 12, 2),
    /* copies (with the gradient op TensorFlow emits for the rearranging ones) */
    MEM("ConcatV2", 0), MEM("Concat", 0), MEM("Split", OPF_READS_MORE),
    MEM("SplitV", OPF_READS_MORE), MEMG("Slice", 0, "Pad"),
    MEMG("StridedSlice", 0, "StridedSliceGrad"), MEM("Transpose", 0),
    MEMG("GatherV2", 0, "UnsortedSegmentSum"), MEM("Gather", 0), MEMG("Tile", 0, "Sum"),
    MEMG("Pad", 0, "Slice"), MEM("Pack", 0), MEM("Unpack", OPF_READS_MORE),
    ROW("UnsortedSegmentSum", MEMORY, PER_ELEM, 1, OPF_READS_MORE, 0),
    MEM("OneHot", 0), MEM("ZerosLike", 0), MEM("Fill", 0), MEMG("BroadcastTo", 0, "Sum"),
    MEM("Copy", 0), MEM("_Send", 0), MEM("_Recv", 0), MEMG("PadV2", 0, "Slice"),
    MEMG("MirrorPad", 0, "MirrorPadGrad"), MEM("MirrorPadGrad", OPF_READS_MORE),
    MEMG("ResizeNearestNeighbor", 0, "ResizeNearestNeighborGrad"),
    MEM("ResizeNearestNeighborGrad", OPF_READS_MORE),
    ROWG("ResizeBilinear", MEMORY, PER_ELEM, 4, 0, 0, DEFAULT, "ResizeBilinearGrad"),
    ROW("ResizeBilinearGrad", MEMORY, PER_ELEM, 4, OPF_READS_MORE, 0),
    /* costed as the unlisted element-wise default; listed for its gradient op */
    ROWG("ResizeBicubic", ELEMWISE, PER_ELEM, 1, 0, 0, DEFAULT, "ResizeBicubicGrad"),
    /* the input pipeline */
    ROW("IteratorV2", INPUT, PER_ELEM, 0, 0, 0), ROW("MakeIterator", INPUT, PER_ELEM, 0, 0, 0),
    ROW("IteratorGetNext", INPUT, PER_ELEM, 0, OPF_PIPELINE, 0),
    ROW("IteratorGetNextSync", INPUT, PER_ELEM, 0, OPF_PIPELINE, 0),
    ROW("QueueDequeueManyV2", INPUT, PER_ELEM, 0, OPF_PIPELINE, 0),
    ROW("QueueDequeueUpToV2", INPUT, PER_ELEM, 0, OPF_PIPELINE, 0),
};

#define N_ROWS    (sizeof rows / sizeof rows[0])
#define N_INDEX   512 /* a power of two above twice the rows */
_Static_assert(2 * N_ROWS < N_INDEX, "grow N_INDEX");

static short index_[N_INDEX]; /* row + 1; 0 = empty */
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static void build_index(void) {
    for (size_t r = 0; r < N_ROWS; r++) {
        size_t h = dp_hash_str(rows[r].op) & (N_INDEX - 1);
        while (index_[h]) h = (h + 1) & (N_INDEX - 1);
        index_[h] = (short)(r + 1);
    }
}

static const struct op_def *lookup(const char *op) {
    pthread_once(&index_once, build_index);
    for (size_t h = dp_hash_str(op) & (N_INDEX - 1); index_[h]; h = (h + 1) & (N_INDEX - 1))
        if (!strcmp(rows[index_[h] - 1].op, op)) return &rows[index_[h] - 1];
    return NULL;
}

const struct op_def *ops_find(const char *op) {
    if (!op) return NULL;
    const struct op_def *d = lookup(op);
    if (d) return d;
    /* ResourceApplyAdam, SparseApplyAdam, ResourceSparseApplyAdam: the ApplyAdam row */
    const char *p = op;
    if (!strncmp(p, "Resource", 8)) p += 8;
    if (!strncmp(p, "Sparse", 6)) p += 6;
    return p != op && !strncmp(p, "Apply", 5) ? lookup(p) : NULL;
}

enum dp_op_class dp_op_class(const char *op) {
    const struct op_def *d = ops_find(op);
    if (d) return d->cls;
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

static bool has(const char *op, unsigned flag) {
    const struct op_def *d = ops_find(op);
    return d && (d->flags & flag);
}

bool dp_op_is_variable(const char *op) { return has(op, OPF_VARIABLE); }
bool dp_op_is_constant(const char *op) { return has(op, OPF_CONST); }
bool dp_op_is_alias(const char *op) { return has(op, OPF_ALIAS); }
bool dp_op_is_input_pipeline(const char *op) { return has(op, OPF_PIPELINE); }
bool dp_op_is_update(const char *op) { return has(op, OPF_UPDATE); }
bool dp_op_reads_more(const char *op) { return has(op, OPF_READS_MORE); }

int dp_op_optimizer_slots(const char *op) {
    const struct op_def *d = ops_find(op);
    if (d) return d->slots;
    if (dp_op_class(op) != DP_OPCLASS_OPTIMIZER) return 0;
    /* An update the registry does not list: its slots from the algorithm's name. */
    if (strstr(op, "CenteredRMSProp")) return 3;
    if (strstr(op, "Adam") || strstr(op, "RMSProp") || strstr(op, "Adadelta") ||
        strstr(op, "Ftrl"))
        return 2;
    return strstr(op, "Momentum") || strstr(op, "Adagrad") ? 1 : 0;
}

enum dp_op_grad dp_op_grad(const char *op) {
    const struct op_def *d = ops_find(op);
    return d ? d->grad : DP_OPGRAD_DEFAULT;
}

const char *dp_op_copy_grad(const char *op) {
    const struct op_def *d = ops_find(op);
    return d && d->copy_grad ? d->copy_grad : "Identity";
}

bool dp_op_winograd_eligible(const struct dp_graph *g, const struct dp_node *n) {
    const struct op_def *d = ops_find(n->op);
    if (!d || !(d->flags & OPF_WINOGRAD)) return false;
    /* The filter: input 1 of the forward op and of the input gradient; the filter gradient's
     * own output. */
    const struct dp_node *filt = n;
    if (d->rule != RULE_CONV_BP_FILTER) {
        if (n->n_inputs < 2) return false;
        filt = dp_graph_node(g, (size_t)n->inputs[1]);
    }
    if (filt->n_dims != 4 || filt->dims[0] != 3 || filt->dims[1] != 3) return false;
    const char *st = dp_node_attr(n, "strides");
    if (!st) return true;
    for (const char *p = st; *p; p++)
        if (*p >= '2' && *p <= '9') return false;
    return true;
}
