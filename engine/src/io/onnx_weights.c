/* onnx_weights.c: which tensors stored in an ONNX file (initializers, Constant nodes' values,
 * wherever the exporter put them) are the model's trained parameters, which are buffers
 * (stored, in memory, never trained nor all-reduced) and which are plain constants, each by a
 * named rule that `graph info --tensors` shows. Gradients are traced back from the outputs
 * first: a float tensor they reach is a parameter unless a buffer rule says otherwise. */
#include "onnx_impl.h"

#include <stdlib.h>
#include <string.h>

/* Inputs of node n that gradients flow into from its outputs (indices, shapes, masks and
 * conditions take none). */
static bool diff_input(const struct o_node *n, int k) {
    static const char *const none[] = {"Shape", "Size", "ConstantOfShape", "Range", "NonZero",
                                       "Equal", "Less", "Greater", "LessOrEqual",
                                       "GreaterOrEqual", "Not", "And", "Or", "Xor", "ArgMax",
                                       "ArgMin", "IsNaN", "IsInf", "RandomNormalLike",
                                       "RandomUniformLike", "EyeLike", "Bernoulli"};
    static const char *const first[] = {"Reshape", "Slice", "Gather", "GatherElements",
                                        "GatherND", "Expand", "Tile", "Unsqueeze", "Squeeze",
                                        "Resize", "Upsample", "Pad", "Dropout", "Clip", "TopK",
                                        "Split", "CumSum", "Trilu", "ReduceMean", "ReduceSum",
                                        "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2",
                                        "ReduceLogSumExp", "OneHot"};
    const char *op = n->op;
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        if (!strcmp(op, none[i])) return false;
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
        if (!strcmp(op, first[i])) return k == 0;
    if (!strcmp(op, "Where")) return k == 1 || k == 2;
    if (!strcmp(op, "BatchNormalization")) return k <= 2;
    if (!strcmp(op, "LSTM") || !strcmp(op, "GRU") || !strcmp(op, "RNN")) return k != 4;
    if (!strcmp(op, "Cast")) {
        const struct o_attr *to = onnx_attr(n, "to");
        return to && dp_dtype_is_float(onnx_dtype(to->i));
    }
    return true;
}

/* Marks the values gradients reach from the graph's outputs, and batch norms' running
 * statistics. */
static void mark_diff(struct imp *im, const int *order) {
    const struct o_graph *g = im->g;
    for (int i = 0; i < g->n_outputs; i++) {
        struct oval *v = onnx_val(im, g->outputs[i].name, false);
        if (v) v->diff = true;
    }
    for (int j = g->n_nodes - 1; j >= 0; j--) {
        const struct o_node *n = &g->nodes[order[j]];
        bool any = false;
        for (int k = 0; k < n->n_out && !any; k++) {
            struct oval *v = onnx_val(im, n->out[k], false);
            any = v && v->diff;
        }
        for (int k = 0; k < n->n_in; k++) {
            struct oval *v = onnx_val(im, n->in[k], false);
            if (!v) continue;
            if (any && diff_input(n, k)) v->diff = true;
            if (!strcmp(n->op, "BatchNormalization") && (k == 3 || k == 4)) v->stat = true;
        }
    }
}

/* The nodes reading each value: a list per value slot (head[slot], then next[edge]). */
struct uses {
    int *head, *next, *node;
};

static bool op_in(const char *op, const char *const *set) {
    for (; *set; set++)
        if (!strcmp(op, *set)) return true;
    return false;
}

/* Ops a mask or a frequency table passes through unchanged in kind: reshapes, casts, scalings,
 * sums. */
static const char *const pass_ops[] = {"Unsqueeze", "Squeeze", "Reshape", "Expand", "Cast",
                                       "Identity", "Slice", "Transpose", "Tile", "Mul", "Div",
                                       "Neg", "Add", "Sub", NULL};

/* True when every path from v to the loss ends in one of `ends` after only `through` ops (at
 * most `budget` nodes visited in all: a path that does not end so soon is a parameter's). */
static bool only_reaches(struct imp *im, const struct uses *u, const struct oval *v,
                         const char *const *through, const char *const *ends, int *budget) {
    const struct o_graph *g = im->g;
    bool any = false;
    for (int e = u->head[v - im->vals]; e >= 0; e = u->next[e]) {
        const struct o_node *n = &g->nodes[u->node[e]];
        if (--*budget < 0) return false;
        any = true;
        if (op_in(n->op, ends)) continue;
        if (!op_in(n->op, through) || n->n_out < 1) return false;
        const struct oval *o = onnx_val(im, n->out[0], false);
        if (!o || !o->diff) continue; /* no gradient from there: no training either */
        for (int i = 0; i < g->n_outputs; i++)
            if (!strcmp(g->outputs[i].name, o->name)) return false;
        if (!only_reaches(im, u, o, through, ends, budget)) return false;
    }
    return any;
}

/* The rule for a stored float tensor that gradients reach: a parameter unless it is an
 * attention mask (square in its last two dimensions, only added to the scores a Softmax reads)
 * or a rotary-embedding frequency table (one dimension, only read into Sin / Cos). */
static void classify_diff(struct imp *im, const struct uses *u, struct oval *v) {
    static const char *const softmax[] = {"Softmax", "LogSoftmax", NULL};
    static const char *const trig[] = {"Sin", "Cos", NULL};
    static const char *const freq_ops[] = {"Unsqueeze", "Reshape", "Expand", "Cast", "Identity",
                                           "Mul", "MatMul", "Einsum", "Concat", "Transpose",
                                           NULL};
    int budget = 256;
    if (v->n_dims >= 2 && sym_same(v->dims[v->n_dims - 1], v->dims[v->n_dims - 2]) &&
        only_reaches(im, u, v, pass_ops, softmax, &budget)) {
        v->kind = W_BUFFER;
        v->rule = "buffer: an attention mask (square, only added to the scores a Softmax reads)";
        return;
    }
    budget = 256;
    if (v->n_dims == 1 && only_reaches(im, u, v, freq_ops, trig, &budget)) {
        v->kind = W_BUFFER;
        v->rule = "buffer: a rotary-embedding frequency table (only read into Sin / Cos)";
        return;
    }
    v->kind = W_PARAM;
    v->rule = v->copy ? "parameter: an Identity of a stored tensor (an exporter's deduplicated "
                        "copy of an equal-valued parameter)"
            : v->src == SRC_CONST ? "parameter: a float Constant node gradients reach (an "
                                    "exporter's folded weight)"
                                  : "parameter: a float initializer gradients reach";
}

static void classify(struct imp *im, const struct uses *u, struct oval *v) {
    double numel = 1;
    for (int d = 0; d < v->n_dims; d++) numel *= v->dims[d].known ? (double)v->dims[d].c : 1;
    v->numel = numel;
    if (!dp_dtype_is_float(v->dtype == DP_DTYPE_UNKNOWN ? DP_DTYPE_F32 : v->dtype)) {
        v->kind = W_CONST;
        v->rule = "constant: an integer or boolean tensor (indices, shapes, masks)";
    } else if (v->stat) {
        v->kind = W_BUFFER;
        v->rule = "buffer: a batch norm's running statistic (input 3 or 4)";
    } else if (numel <= 1) {
        v->kind = W_CONST;
        v->rule = "constant: a float scalar (a scale, an epsilon, a fill value)";
    } else if (!v->diff) {
        v->kind = W_BUFFER;
        v->rule = "buffer: a float tensor no gradient reaches (read by comparisons, conditions, "
                  "shapes)";
    } else {
        classify_diff(im, u, v);
    }
}

bool onnx_classify(struct imp *im, const int *order) {
    const struct o_graph *g = im->g;
    mark_diff(im, order);
    size_t n_edges = 0;
    for (int i = 0; i < g->n_nodes; i++) n_edges += (size_t)g->nodes[i].n_in;
    struct uses u = {malloc(im->cap * sizeof *u.head), malloc((n_edges + 1) * sizeof *u.next),
                     malloc((n_edges + 1) * sizeof *u.node)};
    bool ok = u.head && u.next && u.node;
    if (!ok) {
        pb_oom(im->d);
        goto done;
    }
    for (size_t s = 0; s < im->cap; s++) u.head[s] = -1;
    size_t e = 0; /* pushed in reverse, so each list is in file order */
    for (int i = g->n_nodes - 1; i >= 0; i--)
        for (int k = g->nodes[i].n_in - 1; k >= 0; k--) {
            struct oval *v = onnx_val(im, g->nodes[i].in[k], false);
            if (!v) continue;
            u.node[e] = i;
            u.next[e] = u.head[v - im->vals];
            u.head[v - im->vals] = (int)e++;
        }
    for (size_t s = 0; s < im->cap; s++) {
        struct oval *v = &im->vals[s];
        if (v->name && (v->src == SRC_INIT || v->src == SRC_CONST) && v->defined)
            classify(im, &u, v);
    }
done:
    free(u.head);
    free(u.next);
    free(u.node);
    return ok;
}
