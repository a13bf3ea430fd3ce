/* onnx_map.c: ONNX operators onto the training-graph builder (TensorFlow op names, NCHW), each
 * with the gradient rule the builder records: making initializers into variables or constants,
 * element-wise and comparison ops, Where, matrix products (MatMul of any rank, Gemm, Einsum),
 * normalisations, softmax on any axis, dropout, reductions, onnxruntime's fused Attention, and
 * the dispatch. Data movement is in onnx_move.c, convolutions and pooling in onnx_window.c,
 * recurrent layers in onnx_rnn.c. An op no file knows is kept with its inferred (or value_info)
 * shape, a generic cost and a generic gradient, counted once per type for the caller's notes. */
#include "onnx_impl.h"

#include <stdio.h>
#include <string.h>

/* --- element-wise ---------------------------------------------------------------------------- */

static const struct { const char *onnx, *tf; } unary_ops[] = {
    {"Relu", "Relu"}, {"Sigmoid", "Sigmoid"}, {"Tanh", "Tanh"}, {"Exp", "Exp"}, {"Log", "Log"},
    {"Sqrt", "Sqrt"}, {"Neg", "Neg"}, {"Erf", "Erf"}, {"Softplus", "Softplus"}, {"Elu", "Elu"},
    {"LeakyRelu", "LeakyRelu"}, {"Identity", "Identity"}, {"Abs", "Abs"},
    {"Reciprocal", "Reciprocal"}, {"Sin", "Sin"}, {"Cos", "Cos"}, {"Selu", "Selu"},
    {"HardSigmoid", "HardSigmoid"}, {"HardSwish", "HardSwish"}, {"Softsign", "Softsign"},
    {"Mish", "Mish"}, {"Celu", "Celu"}, {"Floor", "Floor"}, {"Ceil", "Ceil"}, {"Sign", "Sign"},
    {"Round", "Round"}, {"ThresholdedRelu", "ThresholdedRelu"}, {"Gelu", "Gelu"},
};

static bool map_unary(struct imp *im, const char *tf) {
    int x = onnx_in_t(im, 0);
    if (x < 0) return false;
    onnx_scope(im);
    int y = !strcmp(tf, "Gelu") ? zb_gelu(im->b, x) : zb_unary(im->b, tf, x);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

/* Clip: Relu6 for [0, 6], Relu for [0, inf), else ClipByValue; bounds from attributes
 * (opset < 11) or constant inputs. */
static bool map_clip(struct imp *im) {
    const struct o_attr *mn = onnx_attr(im->node, "min"), *mx = onnx_attr(im->node, "max");
    struct oval *lo = onnx_in(im, 1), *hi = onnx_in(im, 2);
    double a = mn ? (double)mn->f : lo && lo->n_fold == 1 && lo->fv ? lo->fv[0] : -1;
    double c = mx ? (double)mx->f : hi && hi->n_fold == 1 && hi->fv ? hi->fv[0] : -1;
    bool has_lo = mn || (lo && lo->n_fold == 1), has_hi = mx || (hi && hi->n_fold == 1);
    const char *tf = has_lo && a == 0 && has_hi && c == 6 ? "Relu6"
                     : has_lo && a == 0 && !has_hi       ? "Relu"
                                                          : "ClipByValue";
    return map_unary(im, tf);
}

static const struct { const char *onnx, *tf; } binary_ops[] = {
    {"Add", "AddV2"}, {"Sub", "Sub"}, {"Mul", "Mul"}, {"Div", "RealDiv"}, {"Pow", "Pow"},
    {"Max", "Maximum"}, {"Min", "Minimum"}, {"Sum", "AddV2"}, {"Mean", "AddV2"},
    {"PRelu", "PRelu"}, {"Mod", "FloorMod"},
};

/* Binary ops with NumPy broadcasting; Sum, Max, Min and Mean take any number of inputs. */
static bool map_binary(struct imp *im, const char *tf) {
    const struct o_node *n = im->node;
    int xs[64], k = 0;
    for (int i = 0; i < n->n_in && k < 64; i++) { /* variables first, outside the scope */
        if (!*n->in[i]) continue;
        if ((xs[k] = onnx_in_t(im, i)) < 0) return false;
        k++;
    }
    if (k == 0) return onnx_fail(im, DP_ERR_INVALID, "no inputs") == 0;
    onnx_scope(im);
    int y = xs[0];
    for (int i = 1; i < k; i++) y = zb_binary(im->b, tf, y, xs[i]);
    if (!strcmp(n->op, "Mean") && k > 1) /* the sum times 1 / n */
        y = zb_binary(im->b, "Mul", y, zb_const(im->b, "scale", 0, NULL, zb_dtype(im->b, y)));
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

/* Comparisons and logic: boolean outputs, no gradient. */
static bool map_compare(struct imp *im, const char *tf) {
    const struct o_node *n = im->node;
    int xs[3], k = 0;
    struct sym out[DP_MAX_DIMS], tmp[DP_MAX_DIMS];
    int no = -1;
    for (int i = 0; i < n->n_in && k < 3; i++) {
        struct oval *v = onnx_in(im, i);
        if (!v || (xs[k] = onnx_tensor(im, v)) < 0) return false;
        if (no < 0) {
            no = v->n_dims;
            memcpy(out, v->dims, sizeof out);
        } else if (!onnx_broadcast(out, no, v->dims, v->n_dims, tmp, &no)) {
            return onnx_fail(im, DP_ERR_SHAPE, "operand shapes do not broadcast") == 0;
        } else {
            memcpy(out, tmp, sizeof out);
        }
        k++;
    }
    int64_t dims[DP_MAX_DIMS];
    for (int d = 0; d < no; d++) dims[d] = sym_to_dim(out[d]);
    onnx_scope(im);
    int y = zb_opaque(im->b, tf, xs, k, no, dims, DP_DTYPE_BOOL);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

static bool map_where(struct imp *im) {
    int c = onnx_in_t(im, 0), x = onnx_in_t(im, 1), y = onnx_in_t(im, 2);
    if (c < 0 || x < 0 || y < 0) return false;
    onnx_scope(im);
    int r = zb_select(im->b, c, x, y);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, r);
}

static bool map_cast(struct imp *im) {
    const struct o_attr *to = onnx_attr(im->node, "to");
    enum dp_dtype dt = to ? onnx_dtype(to->i) : DP_DTYPE_F32;
    int x = onnx_in_t(im, 0);
    if (x < 0) return false;
    onnx_scope(im);
    int y = zb_cast(im->b, x, dt == DP_DTYPE_UNKNOWN ? DP_DTYPE_F32 : dt);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

/* --- products ------------------------------------------------------------------------------- */

static bool map_matmul(struct imp *im, bool gemm) {
    const struct o_node *n = im->node;
    bool ta = gemm && onnx_attr(n, "transA") && onnx_attr(n, "transA")->i;
    bool tb = gemm && onnx_attr(n, "transB") && onnx_attr(n, "transB")->i;
    int a = onnx_in_t(im, 0), w;
    if (a < 0) return false;
    struct oval *bv = onnx_in(im, 1);
    if (!bv) return onnx_fail(im, DP_ERR_INVALID, "needs 2 inputs") == 0;
    /* A 2-D weight is stored the way the product reads it ([K, N]), as TF's dense layers do. */
    if (bv->tensor < 0 && bv->kind == W_PARAM && bv->n_dims == 2) {
        int64_t wd[2] = {sym_to_dim(bv->dims[tb ? 1 : 0]), sym_to_dim(bv->dims[tb ? 0 : 1])};
        w = onnx_weight_as(im, bv, 2, wd);
        tb = false;
    } else {
        w = onnx_tensor(im, bv);
    }
    if (w < 0) return false;
    int ra = zb_rank(im->b, a), rb = zb_rank(im->b, w);
    if (ra < 1 || rb < 1) return onnx_fail(im, DP_ERR_SHAPE, "matrix product of unknown or "
                                           "scalar operands") == 0;
    onnx_scope(im);
    /* 1-D operands: a row or a column vector, the added dimension removed after (NumPy). */
    int64_t d2[DP_MAX_DIMS];
    if (ra == 1) {
        d2[0] = 1;
        d2[1] = zb_dim(im->b, a, 0);
        a = zb_reshape(im->b, a, 2, d2);
    }
    if (rb == 1) {
        d2[0] = zb_dim(im->b, w, 0);
        d2[1] = 1;
        w = zb_reshape(im->b, w, 2, d2);
    }
    int y = zb_matmul(im->b, a, w, ta, tb);
    if ((ra == 1 || rb == 1) && y >= 0) {
        int r = zb_rank(im->b, y), k = 0;
        for (int d = 0; d < r; d++)
            if (!((ra == 1 && d == r - 2) || (rb == 1 && d == r - 1)))
                d2[k++] = zb_dim(im->b, y, d);
        y = zb_reshape(im->b, y, k, d2);
    }
    if (gemm && n->n_in > 2 && *n->in[2]) {
        int c = onnx_in_t(im, 2);
        if (c >= 0 && zb_rank(im->b, c) == 1) y = zb_bias_add(im->b, y, c);
        else if (c >= 0) y = zb_binary(im->b, "AddV2", y, c);
    }
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

/* Einsum: the output shape from the subscripts; costed as its contraction (cost.c). */
static bool map_einsum(struct imp *im) {
    const struct o_attr *eq = onnx_attr(im->node, "equation");
    const struct o_node *n = im->node;
    if (!eq || !eq->s || n->n_in < 1 || n->n_in > 2)
        return onnx_fail(im, DP_ERR_UNSUPPORTED, "einsum of %d operands", n->n_in) == 0;
    char e[256];
    size_t k = 0;
    for (const char *p = eq->s; *p && k + 1 < sizeof e; p++)
        if (*p != ' ') e[k++] = *p;
    e[k] = '\0';
    const char *arrow = strstr(e, "->");
    if (!arrow || strstr(e, "..."))
        return onnx_fail(im, DP_ERR_UNSUPPORTED, "einsum '%s' (needs an explicit output and no "
                         "ellipsis)", eq->s) == 0;
    int64_t size[128];
    for (int c = 0; c < 128; c++) size[c] = -3;
    const char *p = e;
    int xs[2];
    for (int i = 0; i < n->n_in; i++) {
        struct oval *v = onnx_in(im, i);
        if (!v || (xs[i] = onnx_tensor(im, v)) < 0) return false;
        int d = 0;
        for (; *p && *p != ',' && *p != '-'; p++, d++) {
            if (d >= v->n_dims || (unsigned char)*p >= 128)
                return onnx_fail(im, DP_ERR_SHAPE, "einsum '%s' does not fit its operands",
                                 eq->s) == 0;
            int64_t dim = sym_to_dim(v->dims[d]);
            int64_t *sz = &size[(unsigned char)*p];
            if (*sz == -3 || *sz == 1) *sz = dim; /* first seen, or broadcast from 1 */
        }
        if (d != v->n_dims)
            return onnx_fail(im, DP_ERR_SHAPE, "einsum '%s' does not fit its operands", eq->s) == 0;
        if (*p == ',') p++;
    }
    int64_t dims[DP_MAX_DIMS];
    int nd = 0;
    for (p = arrow + 2; *p; p++) {
        if (nd >= DP_MAX_DIMS || (unsigned char)*p >= 128 || size[(unsigned char)*p] == -3)
            return onnx_fail(im, DP_ERR_SHAPE, "einsum '%s': output subscript '%c'", eq->s,
                             *p) == 0;
        dims[nd++] = size[(unsigned char)*p];
    }
    onnx_scope(im);
    int y = zb_einsum(im->b, e, xs[0], n->n_in > 1 ? xs[1] : -1, nd, dims);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

/* --- normalisation and softmax -------------------------------------------------------------- */

static bool map_batch_norm(struct imp *im) {
    int x = onnx_in_t(im, 0), g = onnx_in_t(im, 1), be = onnx_in_t(im, 2);
    int m = onnx_in_t(im, 3), v = onnx_in_t(im, 4);
    if (x < 0 || g < 0 || be < 0 || m < 0 || v < 0) return false;
    onnx_scope(im);
    int y = zb_batch_norm(im->b, x, g, be, m, v);
    zb_pop(im->b);
    if (!onnx_set_tensor(im, 0, y)) return false;
    /* Training mode's further outputs (running mean and variance): the statistics. */
    for (int k = 1; k < im->node->n_out && k <= 2; k++)
        if (!onnx_set_tensor(im, k, k == 1 ? m : v)) return false;
    return true;
}

static bool map_layer_norm(struct imp *im) {
    int x = onnx_in_t(im, 0), g = onnx_in_t(im, 1);
    if (x < 0 || g < 0) return false;
    int r = zb_rank(im->b, x);
    const struct o_attr *ax = onnx_attr(im->node, "axis");
    int64_t axis = ax ? ax->i : -1;
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r)
        return onnx_fail(im, DP_ERR_INVALID, "layer norm axis %lld of rank %d",
                         (long long)(ax ? ax->i : -1), r) == 0;
    int be = onnx_in(im, 2) ? onnx_in_t(im, 2) : -1;
    onnx_scope(im);
    if (be < 0 && !im->d->st)
        be = zb_const(im->b, "zero_bias", zb_rank(im->b, g), zb_dims(im->b, g), zb_dtype(im->b, g));
    int y = zb_layer_norm_with(im->b, x, g, be, r - (int)axis);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

/* Softmax and LogSoftmax on any axis: opset 13 normalises one axis (moved last by a transpose
 * when it is not), earlier opsets everything from `axis` on (a 2-D reshape). */
static bool map_softmax(struct imp *im, bool log) {
    int x = onnx_in_t(im, 0);
    if (x < 0) return false;
    int r = zb_rank(im->b, x);
    const struct o_attr *ax = onnx_attr(im->node, "axis");
    bool v13 = im->m->opset == 0 || im->m->opset >= 13;
    int64_t axis = ax ? ax->i : v13 ? -1 : 1;
    if (axis < 0) axis += r;
    if (r < 1 || axis < 0 || axis >= r)
        return onnx_fail(im, DP_ERR_INVALID, "softmax axis %lld of rank %d",
                         (long long)(ax ? ax->i : -1), r) == 0;
    int logits = x, y;
    onnx_scope(im);
    if (axis == r - 1) {
        y = zb_softmax(im->b, x);
    } else if (v13) {
        int perm[DP_MAX_DIMS];
        for (int d = 0; d < r; d++) perm[d] = d;
        perm[axis] = r - 1;
        perm[r - 1] = (int)axis;
        y = zb_transpose(im->b, zb_softmax(im->b, zb_transpose(im->b, x, perm)), perm);
        logits = -1;
    } else {
        /* coerced to [product of the dims before axis, product of the rest] */
        int64_t flat[2], xdims[DP_MAX_DIMS];
        memcpy(xdims, zb_dims(im->b, x), sizeof(int64_t) * (size_t)r);
        struct oval part = {.n_dims = (int)axis};
        for (int d = 0; d < axis; d++) part.dims[d] = sym_of_dim(xdims[d]);
        flat[0] = sym_to_dim(onnx_numel_sym(&part));
        part.n_dims = r - (int)axis;
        for (int d = (int)axis; d < r; d++) part.dims[d - axis] = sym_of_dim(xdims[d]);
        flat[1] = sym_to_dim(onnx_numel_sym(&part));
        y = zb_reshape(im->b, zb_softmax(im->b, zb_reshape(im->b, x, 2, flat)), r, xdims);
        logits = -1;
    }
    if (log) y = zb_unary(im->b, "Log", y);
    zb_pop(im->b);
    if (!onnx_set_tensor(im, 0, y)) return false;
    struct oval *v = onnx_val(im, im->node->out[0], false);
    if (v && logits >= 0) v->softmax_of = logits;
    return true;
}

static bool map_dropout(struct imp *im) {
    const struct o_node *n = im->node;
    int x = onnx_in_t(im, 0);
    if (x < 0) return false;
    const struct o_attr *ra = onnx_attr(n, "ratio");
    struct oval *rv = onnx_in(im, 1), *tm = onnx_in(im, 2);
    double rate = ra ? (double)ra->f : rv && rv->n_fold == 1 && rv->fv ? rv->fv[0] : 0.5;
    /* opset 12: training_mode is an input; false (or absent) means an inference copy */
    bool training = !tm ? im->m->opset < 12 && !onnx_attr(n, "is_test")
                        : tm->n_fold == 1 && tm->iv && tm->iv[0].known && tm->iv[0].c;
    if (tm && tm->n_fold < 0) training = true;
    onnx_scope(im);
    int y = training ? zb_dropout(im->b, x, rate) : zb_unary(im->b, "Identity", x);
    int mask = -1;
    if (n->n_out > 1 && *n->out[1] && y >= 0)
        mask = zb_opaque(im->b, "Cast", &y, 1, zb_rank(im->b, y), zb_dims(im->b, y), DP_DTYPE_BOOL);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y) && (mask < 0 || onnx_set_tensor(im, 1, mask));
}

static bool map_reduce(struct imp *im) {
    const struct o_node *n = im->node;
    static const struct { const char *onnx, *tf; } ops[] = {
        {"ReduceMean", "Mean"}, {"ReduceSum", "Sum"}, {"ReduceMax", "Max"},
        {"ReduceMin", "Min"}, {"ReduceProd", "Prod"},
    };
    const char *tf = NULL;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(n->op, ops[i].onnx)) tf = ops[i].tf;
    struct oval *xv = onnx_in(im, 0);
    int x = onnx_in_t(im, 0);
    if (x < 0 || !tf) return false;
    int64_t axes[DP_MAX_DIMS];
    int na;
    bool given;
    if (!onnx_axes(im, "axes", 1, axes, &na, &given))
        return onnx_fail(im, DP_ERR_UNSUPPORTED, "reduction axes computed at run time") == 0;
    unsigned mask = 0;
    const struct o_attr *noop = onnx_attr(n, "noop_with_empty_axes");
    if (!given || na == 0) {
        if (noop && noop->i) return map_unary(im, "Identity");
        mask = (1u << xv->n_dims) - 1;
    } else if (!onnx_axes_mask(im, axes, na, xv->n_dims, &mask)) {
        return false;
    }
    const struct o_attr *kd = onnx_attr(n, "keepdims");
    onnx_scope(im);
    int y = zb_reduce(im->b, tf, x, mask, !kd || kd->i);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

static bool map_global_pool(struct imp *im) {
    int x = onnx_in_t(im, 0);
    if (x < 0) return false;
    int r = zb_rank(im->b, x);
    if (r < 3) return onnx_fail(im, DP_ERR_SHAPE, "global pooling of a rank-%d tensor", r) == 0;
    onnx_scope(im);
    unsigned mask = ((1u << r) - 1) & ~3u; /* every axis after N and C */
    int y = zb_reduce(im->b, im->node->op[6] == 'A' ? "Mean" : "Max", x, mask, true);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

/* com.microsoft Attention, as onnxruntime's transformer optimizer fuses self-attention: input
 * [B, S, Hin], weights [Hin, 3 H] (q, k, v), bias [3 H], num_heads; unrolled into the products,
 * scaling, (causal mask,) softmax and products torch.nn.MultiheadAttention exports. */
static bool map_ms_attention(struct imp *im) {
    const struct o_attr *nh = onnx_attr(im->node, "num_heads");
    const struct o_attr *uni = onnx_attr(im->node, "unidirectional");
    int x = onnx_in_t(im, 0), w = onnx_in_t(im, 1);
    if (x < 0 || w < 0) return false;
    int64_t heads = nh ? nh->i : 0, hid = zb_dim(im->b, w, -1) / 3;
    if (zb_rank(im->b, x) != 3 || zb_rank(im->b, w) != 2 || heads < 1 || hid < 1 ||
        hid % heads || zb_dim(im->b, w, -1) != 3 * hid)
        return onnx_fail(im, DP_ERR_SHAPE, "attention of %lld heads over weights [%lld, %lld]",
                         (long long)heads, (long long)zb_dim(im->b, w, 0),
                         (long long)zb_dim(im->b, w, -1)) == 0;
    int bias = onnx_in(im, 2) ? onnx_in_t(im, 2) : -1;
    struct zb *b = im->b;
    int64_t batch = zb_dim(b, x, 0), seq = zb_dim(b, x, 1), d = hid / heads;
    int64_t split[4] = {batch, seq, heads, d}, merged[3] = {batch, seq, hid};
    int perm[4] = {0, 2, 1, 3}, qkv[3];
    onnx_scope(im);
    int y = zb_matmul(b, x, w, false, false);
    if (bias >= 0) y = zb_bias_add(b, y, bias);
    zb_split(b, y, 3, 2, qkv);
    for (int k = 0; k < 3; k++) qkv[k] = zb_transpose(b, zb_reshape(b, qkv[k], 4, split), perm);
    int s = zb_matmul(b, qkv[0], qkv[1], false, true);
    s = zb_binary(b, "Mul", s, zb_const(b, "scale", 0, NULL, zb_dtype(b, s)));
    if (uni && uni->i) {
        int64_t mask[2] = {seq, seq};
        s = zb_binary(b, "AddV2", s, zb_const(b, "causal_mask", 2, mask, zb_dtype(b, s)));
    }
    y = zb_matmul(b, zb_softmax(b, s), qkv[2], false, false);
    y = zb_reshape(b, zb_transpose(b, y, perm), 3, merged);
    zb_pop(b);
    return onnx_set_tensor(im, 0, y);
}

/* --- dispatch ------------------------------------------------------------------------------- */

static const struct { const char *onnx, *tf; } compare_ops[] = {
    {"Equal", "Equal"}, {"Less", "Less"}, {"Greater", "Greater"}, {"LessOrEqual", "LessEqual"},
    {"GreaterOrEqual", "GreaterEqual"}, {"And", "LogicalAnd"}, {"Or", "LogicalOr"},
    {"Xor", "LogicalXor"}, {"Not", "LogicalNot"}, {"IsNaN", "IsNan"}, {"IsInf", "IsInf"},
};

bool onnx_map(struct imp *im) {
    const struct o_node *n = im->node;
    const char *op = n->op;
    if (n->n_out < 1 || !*n->out[0])
        return onnx_fail(im, DP_ERR_INVALID, "node without an output") == 0;
    if (!strcmp(n->domain, "com.microsoft") && !strcmp(op, "Attention"))
        return map_ms_attention(im);
    if (*n->domain && strcmp(n->domain, "ai.onnx")) return onnx_map_generic(im, true);
    for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++)
        if (!strcmp(op, unary_ops[i].onnx)) return map_unary(im, unary_ops[i].tf);
    for (size_t i = 0; i < sizeof binary_ops / sizeof binary_ops[0]; i++)
        if (!strcmp(op, binary_ops[i].onnx)) return map_binary(im, binary_ops[i].tf);
    for (size_t i = 0; i < sizeof compare_ops / sizeof compare_ops[0]; i++)
        if (!strcmp(op, compare_ops[i].onnx)) return map_compare(im, compare_ops[i].tf);
    if (!strcmp(op, "Clip")) return map_clip(im);
    if (!strcmp(op, "Where")) return map_where(im);
    if (!strcmp(op, "Cast") || !strcmp(op, "CastLike")) return map_cast(im);
    if (!strcmp(op, "MatMul") || !strcmp(op, "Gemm")) return map_matmul(im, op[0] == 'G');
    if (!strcmp(op, "Einsum")) return map_einsum(im);
    if (!strcmp(op, "Conv") || !strcmp(op, "ConvTranspose")) return onnx_map_conv(im);
    if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool")) return onnx_map_pool(im);
    if (!strcmp(op, "GlobalAveragePool") || !strcmp(op, "GlobalMaxPool"))
        return map_global_pool(im);
    if (!strcmp(op, "BatchNormalization")) return map_batch_norm(im);
    if (!strcmp(op, "LayerNormalization")) return map_layer_norm(im);
    if (!strcmp(op, "Softmax") || !strcmp(op, "LogSoftmax")) return map_softmax(im, op[0] == 'L');
    if (!strcmp(op, "Dropout")) return map_dropout(im);
    if (!strncmp(op, "Reduce", 6) && strcmp(op, "ReduceL1") && strcmp(op, "ReduceL2") &&
        strcmp(op, "ReduceLogSumExp") && strcmp(op, "ReduceSumSquare") &&
        strcmp(op, "ReduceLogSum"))
        return map_reduce(im);
    if (!strcmp(op, "Reshape")) return onnx_map_reshape(im);
    if (!strcmp(op, "Flatten")) return onnx_map_flatten(im);
    if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze"))
        return onnx_map_squeeze(im, op[0] == 'U');
    if (!strcmp(op, "Transpose")) return onnx_map_transpose(im);
    if (!strcmp(op, "Concat")) return onnx_map_concat(im);
    if (!strcmp(op, "Split")) return onnx_map_split(im);
    if (!strcmp(op, "Slice")) return onnx_map_slice(im);
    if (!strcmp(op, "Gather")) return onnx_map_gather(im);
    if (!strcmp(op, "Expand") || !strcmp(op, "Tile")) return onnx_map_expand(im, op[0] == 'T');
    if (!strcmp(op, "Pad")) return onnx_map_pad(im);
    if (!strcmp(op, "Resize") || !strcmp(op, "Upsample")) return onnx_map_resize(im);
    if (!strcmp(op, "ConstantOfShape") || !strcmp(op, "Range"))
        return onnx_map_fill(im, op[0] == 'R');
    if (!strcmp(op, "LSTM") || !strcmp(op, "GRU") || !strcmp(op, "RNN")) return onnx_map_rnn(im);
    /* Shape bookkeeping whose contents could not be folded: kept as it is, not counted. */
    if (!strcmp(op, "Shape") || !strcmp(op, "Size")) return onnx_map_generic(im, false);
    return onnx_map_generic(im, true);
}
