/* forward.c: the builder's forward primitives: each appends a TensorFlow op with its output
 * shape (NumPy broadcasting, windows, matrix products) and records it on the tape with what its
 * gradient rule needs (gradients.c). */
#include "tfgraph_impl.h"

#include <stdio.h>
#include <string.h>

/* --- shapes ------------------------------------------------------------------------------ */

bool tg_same_dims(const struct tensor *a, const struct tensor *c) {
    if (a->n_dims != c->n_dims) return false;
    for (int d = 0; d < a->n_dims; d++)
        if (a->dims[d] != c->dims[d]) return false;
    return true;
}

static int64_t bcast_dim(int64_t a, int64_t c, bool *ok) {
    if (a == c) return a;
    if (a == 1) return c;
    if (c == 1) return a;
    if (a == DP_DIM_UNKNOWN || c == DP_DIM_UNKNOWN) return DP_DIM_UNKNOWN;
    *ok = false;
    return a;
}

/* NumPy broadcasting of x and y into out; false when they do not fit. */
static bool broadcast(const struct tensor *x, const struct tensor *y, int *n, int64_t *out) {
    int r = x->n_dims > y->n_dims ? x->n_dims : y->n_dims;
    bool ok = true;
    for (int i = 0; i < r; i++) {
        int dx = x->n_dims - r + i, dy = y->n_dims - r + i;
        int64_t a = dx >= 0 ? x->dims[dx] : 1, c = dy >= 0 ? y->dims[dy] : 1;
        out[i] = bcast_dim(a, c, &ok);
    }
    *n = r;
    return ok;
}

/* Output side of a window op: SAME (pads NULL) or explicit pads. */
static int64_t window_out(int64_t in, int64_t k, int stride, const int64_t *pads, int axis) {
    if (in <= 0) return in;
    if (!pads) return (in + stride - 1) / stride;
    int64_t v = in + pads[2 * axis] + pads[2 * axis + 1] - k;
    return v < 0 ? 0 : v / stride + 1;
}

static void set_window_attrs(struct zb *b, int node, int kh, int kw, int stride,
                             const int64_t *pads, bool pool) {
    bool nchw = b->opts.nchw;
    if (pool) {
        if (nchw) tg_set_attr(b, node, "ksize", "[1, 1, %d, %d]", kh, kw);
        else tg_set_attr(b, node, "ksize", "[1, %d, %d, 1]", kh, kw);
    }
    if (nchw) tg_set_attr(b, node, "strides", "[1, 1, %d, %d]", stride, stride);
    else tg_set_attr(b, node, "strides", "[1, %d, %d, 1]", stride, stride);
    bool zero = pads && !pads[0] && !pads[1] && !pads[2] && !pads[3];
    if (!pads) tg_set_attr(b, node, "padding", "SAME");
    else if (zero) tg_set_attr(b, node, "padding", "VALID");
    else {
        tg_set_attr(b, node, "padding", "EXPLICIT");
        tg_set_attr(b, node, "explicit_paddings", "[%lld, %lld, %lld, %lld]", (long long)pads[0],
                 (long long)pads[1], (long long)pads[2], (long long)pads[3]);
    }
    tg_set_attr(b, node, "data_format", nchw ? "NCHW" : "NHWC");
}

/* --- forward primitives ------------------------------------------------------------------- */

int zb_conv(struct zb *b, int x, int w, int stride, const int64_t *pads, bool depthwise) {
    if (b->st || x < 0 || w < 0) return -1;
    const struct tensor X = b->t[x], W = b->t[w];
    if (X.n_dims != 4 || W.n_dims != 4)
        return zb_fail(b, DP_ERR_SHAPE, "%s: convolution needs 4-D input and filter", b->scope);
    int c = zb_caxis(b), h = b->opts.nchw ? 2 : 1;
    if (X.dims[c] > 0 && W.dims[2] > 0 && X.dims[c] != W.dims[2])
        return zb_fail(b, DP_ERR_SHAPE, "%s: input has %lld channels, filter expects %lld",
                       b->scope, (long long)X.dims[c], (long long)W.dims[2]);
    int64_t dims[4];
    memcpy(dims, X.dims, sizeof dims);
    dims[h] = window_out(X.dims[h], W.dims[0], stride, pads, 0);
    dims[h + 1] = window_out(X.dims[h + 1], W.dims[1], stride, pads, 1);
    dims[c] = depthwise ? W.dims[2] * W.dims[3] : W.dims[3];
    if (dims[h] == 0 || dims[h + 1] == 0)
        return zb_fail(b, DP_ERR_INVALID, "%s: the input is too small for this layer (%lldx%lld)",
                       b->scope, (long long)X.dims[h], (long long)X.dims[h + 1]);
    int ins[2] = {x, w};
    const char *op = depthwise ? "DepthwiseConv2dNative" : "Conv2D";
    int y = tg_fwd(b, depthwise ? K_DWCONV : K_CONV, op, op, ins, 2, 4, dims, X.dt, NULL);
    if (y >= 0) set_window_attrs(b, b->t[y].node, (int)W.dims[0], (int)W.dims[1], stride, pads,
                                 false);
    return y;
}

int zb_bias_add(struct zb *b, int x, int bias) {
    if (b->st || x < 0 || bias < 0) return -1;
    int ins[2] = {x, bias};
    int y = tg_fwd(b, K_BIAS, "BiasAdd", "BiasAdd", ins, 2, b->t[x].n_dims, b->t[x].dims, b->t[x].dt,
                NULL);
    if (y >= 0 && b->t[x].n_dims == 4) tg_set_attr(b, b->t[y].node, "data_format",
                                                 b->opts.nchw ? "NCHW" : "NHWC");
    return y;
}

int zb_batch_norm(struct zb *b, int x, int gamma, int beta, int mean, int var) {
    if (b->st || x < 0 || gamma < 0 || beta < 0) return -1;
    int ins[3] = {x, gamma, beta};
    int y = tg_fwd(b, K_BN, "FusedBatchNormV3", "FusedBatchNormV3", ins, 3, b->t[x].n_dims,
                b->t[x].dims, b->t[x].dt, NULL);
    if (y < 0) return -1;
    int node = b->t[y].node;
    tg_set_attr(b, node, "is_training", "true");
    tg_set_attr(b, node, "data_format", b->opts.nchw ? "NCHW" : "NHWC");
    /* The moving averages: AssignMovingAvg = AssignSub(v, (v - batch_stat) * (1 - decay)). */
    int64_t c = b->t[gamma].dims[0];
    int stats[2] = {mean, var};
    const char *names[2] = {"AssignMovingAvg", "AssignMovingAvg_1"};
    for (int k = 0; k < 2; k++) {
        /* Only a variable's read (Identity of a VariableV2) gets a moving-average update. */
        if (stats[k] < 0) continue;
        const struct dp_node *sn = dp_graph_node(b->g, (size_t)b->t[stats[k]].node);
        if (strcmp(sn->op, "Identity") || sn->n_inputs < 1 ||
            strcmp(dp_graph_node(b->g, (size_t)sn->inputs[0])->op, "VariableV2"))
            continue;
        int batch_stat = tg_new_tensor(b, node, 1, &c, DP_DTYPE_F32, false);
        zb_push(b, "%s", names[k]);
        int s_in[2] = {stats[k], batch_stat};
        char full[NAME_MAX_LEN];
        tg_scoped(b, "sub", full, sizeof full);
        int s = tg_emit(b, full, "Sub", GPU_DEV, s_in, 2, 1, &c, DP_DTYPE_F32);
        int dec = zb_const(b, "decay", 0, NULL, DP_DTYPE_F32);
        int m_in[2] = {s, dec};
        tg_scoped(b, "mul", full, sizeof full);
        int m = tg_emit(b, full, "Mul", GPU_DEV, m_in, 2, 1, &c, DP_DTYPE_F32);
        tg_scoped(b, "AssignSub", full, sizeof full);
        /* AssignSub writes the variable itself: its input is the VariableV2 node. */
        int vnode = dp_graph_node(b->g, (size_t)b->t[stats[k]].node)->inputs[0];
        int a = tg_add_node(b, full, "AssignSub", GPU_DEV, 1, &c, DP_DTYPE_F32, &vnode, 1);
        if (a >= 0 && m >= 0) {
            struct dp_error e = {0};
            if (dp_graph_add_input(b->g, a, b->t[m].node, false, &e))
                zb_fail(b, e.status, "%s", e.msg);
        }
        zb_pop(b);
        if (a >= 0 && tg_grow(b, (void **)&b->updates, b->n_updates, &b->cap_updates,
                           sizeof *b->updates))
            b->updates[b->n_updates++] = a;
    }
    return y;
}

int zb_unary(struct zb *b, const char *op, int x) {
    if (b->st || x < 0) return -1;
    int y = tg_fwd(b, K_UNARY, op, op, &x, 1, b->t[x].n_dims, b->t[x].dims, b->t[x].dt, NULL);
    if (y >= 0 && !strcmp(op, "LRN")) {
        tg_set_attr(b, b->t[y].node, "depth_radius", "5");
    }
    return y;
}

int zb_cast(struct zb *b, int x, enum dp_dtype dt) {
    if (b->st || x < 0) return -1;
    int y = tg_fwd(b, K_CAST, "Cast", "Cast", &x, 1, b->t[x].n_dims, b->t[x].dims, dt, NULL);
    if (y >= 0) tg_set_attr(b, b->t[y].node, "DstT", "%s", dp_dtype_name(dt));
    return y;
}

int zb_binary(struct zb *b, const char *op, int x, int y) {
    if (b->st || x < 0 || y < 0) return -1;
    int n;
    int64_t dims[DP_MAX_DIMS];
    if (!broadcast(&b->t[x], &b->t[y], &n, dims))
        return zb_fail(b, DP_ERR_SHAPE, "%s/%s: operand shapes do not broadcast", b->scope, op);
    int ins[2] = {x, y};
    enum dp_dtype dt = b->t[x].n_dims >= b->t[y].n_dims ? b->t[x].dt : b->t[y].dt;
    return tg_fwd(b, K_BINARY, op, op, ins, 2, n, dims, dt, NULL);
}

/* Output shape of a (batch) matrix product; false when the operands do not fit. */
static bool matmul_shape(const struct tensor *X, const struct tensor *Y, bool tx, bool ty, int *n,
                         int64_t *dims) {
    if (X->n_dims < 2 || Y->n_dims < 2) return false;
    int64_t m = X->dims[X->n_dims - (tx ? 1 : 2)], kx = X->dims[X->n_dims - (tx ? 2 : 1)];
    int64_t ky = Y->dims[Y->n_dims - (ty ? 1 : 2)], nn = Y->dims[Y->n_dims - (ty ? 2 : 1)];
    if (kx > 0 && ky > 0 && kx != ky) return false;
    if (Y->n_dims == 2) { /* x of any rank times a matrix: contract the last dim */
        if (tx && X->n_dims > 2) return false;
        *n = X->n_dims;
        for (int d = 0; d < X->n_dims - 2; d++) dims[d] = X->dims[d];
        dims[X->n_dims - 2] = m;
        dims[X->n_dims - 1] = nn;
        return true;
    }
    struct tensor bx = *X, by = *Y;
    bx.n_dims -= 2;
    by.n_dims -= 2;
    if (!broadcast(&bx, &by, n, dims)) return false;
    dims[(*n)++] = m;
    dims[(*n)++] = nn;
    return *n <= DP_MAX_DIMS;
}

void tg_matmul_attrs(struct zb *b, int node, bool batch, bool tx, bool ty) {
    tg_set_attr(b, node, batch ? "adj_x" : "transpose_a", tx ? "true" : "false");
    tg_set_attr(b, node, batch ? "adj_y" : "transpose_b", ty ? "true" : "false");
}

int zb_matmul(struct zb *b, int x, int y, bool tx, bool ty) {
    if (b->st || x < 0 || y < 0) return -1;
    int n;
    int64_t dims[DP_MAX_DIMS];
    if (!matmul_shape(&b->t[x], &b->t[y], tx, ty, &n, dims))
        return zb_fail(b, DP_ERR_SHAPE, "%s: matrix product of incompatible shapes", b->scope);
    bool batch = b->t[y].n_dims > 2;
    const char *op = batch ? "BatchMatMulV2" : "MatMul";
    int ins[2] = {x, y}, ti;
    int out = tg_fwd(b, K_MATMUL, op, op, ins, 2, n, dims, b->t[x].dt, &ti);
    if (out >= 0) tg_matmul_attrs(b, b->t[out].node, batch, tx, ty);
    if (ti >= 0) {
        b->tape[ti].ia[0] = tx;
        b->tape[ti].ia[1] = ty;
    }
    return out;
}

int zb_pool(struct zb *b, const char *op, int x, int k, int stride, const int64_t *pads) {
    if (b->st || x < 0) return -1;
    const struct tensor X = b->t[x];
    if (X.n_dims != 4) return zb_fail(b, DP_ERR_SHAPE, "%s: pooling needs a 4-D input", b->scope);
    int h = b->opts.nchw ? 2 : 1;
    int64_t dims[4];
    memcpy(dims, X.dims, sizeof dims);
    dims[h] = window_out(X.dims[h], k, stride, pads, 0);
    dims[h + 1] = window_out(X.dims[h + 1], k, stride, pads, 1);
    if (dims[h] == 0 || dims[h + 1] == 0)
        return zb_fail(b, DP_ERR_INVALID, "%s: the input is too small for this layer (%lldx%lld)",
                       b->scope, (long long)X.dims[h], (long long)X.dims[h + 1]);
    int y = tg_fwd(b, K_POOL, op, op, &x, 1, 4, dims, X.dt, NULL);
    if (y >= 0) set_window_attrs(b, b->t[y].node, k, k, stride, pads, true);
    return y;
}

int zb_reduce(struct zb *b, const char *op, int x, unsigned mask, bool keepdims) {
    if (b->st || x < 0) return -1;
    const struct tensor X = b->t[x];
    int64_t dims[DP_MAX_DIMS], naxes = 0;
    int n = 0;
    for (int d = 0; d < X.n_dims; d++) {
        if (mask & (1u << d)) {
            naxes++;
            if (keepdims) dims[n++] = 1;
        } else dims[n++] = X.dims[d];
    }
    int ax = zb_const(b, "reduction_indices", 1, &naxes, DP_DTYPE_I32);
    int ins[2] = {x, ax}, ti;
    int y = tg_fwd(b, K_REDUCE, op, op, ins, 2, n, dims, X.dt, &ti);
    if (y >= 0) tg_set_attr(b, b->t[y].node, "keep_dims", keepdims ? "true" : "false");
    if (ti >= 0) {
        b->tape[ti].ia[0] = (int)mask;
        b->tape[ti].ia[1] = keepdims;
    }
    return y;
}

int zb_softmax(struct zb *b, int x) {
    if (b->st || x < 0) return -1;
    return tg_fwd(b, K_SOFTMAX, "Softmax", "Softmax", &x, 1, b->t[x].n_dims, b->t[x].dims,
               b->t[x].dt, NULL);
}

int zb_concat(struct zb *b, const int *xs, int n, int axis) {
    if (b->st) return -1;
    if (n < 1 || n >= MAX_FAN)
        return zb_fail(b, DP_ERR_UNSUPPORTED, "%s: concat of %d", b->scope, n);
    for (int i = 0; i < n; i++)
        if (xs[i] < 0) return -1;
    const struct tensor X = b->t[xs[0]];
    if (axis < 0) axis += X.n_dims;
    if (axis < 0 || axis >= X.n_dims) return zb_fail(b, DP_ERR_SHAPE, "%s: concat axis", b->scope);
    int64_t dims[DP_MAX_DIMS];
    memcpy(dims, X.dims, sizeof dims);
    dims[axis] = 0;
    for (int i = 0; i < n; i++) {
        const struct tensor Y = b->t[xs[i]];
        if (Y.n_dims != X.n_dims)
            return zb_fail(b, DP_ERR_SHAPE, "%s: concat of tensors of different ranks", b->scope);
        for (int d = 0; d < X.n_dims; d++)
            if (d != axis && Y.dims[d] != X.dims[d] && Y.dims[d] > 0 && X.dims[d] > 0)
                return zb_fail(b, DP_ERR_SHAPE, "%s: concat of mismatched shapes", b->scope);
        if (dims[axis] >= 0) dims[axis] = Y.dims[axis] >= 0 ? dims[axis] + Y.dims[axis]
                                                              : Y.dims[axis];
    }
    int ins[MAX_FAN];
    memcpy(ins, xs, (size_t)n * sizeof *ins);
    int64_t one = 1;
    ins[n] = zb_const(b, "axis", 0, &one, DP_DTYPE_I32);
    int ti;
    int y = tg_fwd(b, K_CONCAT, "concat", "ConcatV2", ins, n + 1, X.n_dims, dims, X.dt, &ti);
    if (ti >= 0) {
        b->tape[ti].n_in = n; /* the axis constant needs no gradient */
        b->tape[ti].ia[0] = axis;
    }
    return y;
}

static int split_like(struct zb *b, int x, int n, int axis, int *outs, bool unstack) {
    if (b->st || x < 0) return -1;
    const struct tensor X = b->t[x];
    if (axis < 0) axis += X.n_dims;
    if (axis < 0 || axis >= X.n_dims || n < 1 || n > MAX_FAN)
        return zb_fail(b, DP_ERR_SHAPE, "%s: split axis or count", b->scope);
    int64_t dims[DP_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < X.n_dims; d++) {
        if (d != axis) dims[nd++] = X.dims[d];
        else if (!unstack) dims[nd++] = X.dims[d] > 0 ? X.dims[d] / n : X.dims[d];
    }
    const char *op = unstack ? "Unpack" : "Split";
    int ti;
    int y = tg_fwd(b, unstack ? K_UNSTACK : K_SPLIT, unstack ? "unstack" : "split", op, &x, 1, nd,
                dims, X.dt, &ti);
    if (y < 0) return -1;
    tg_set_attr(b, b->t[y].node, unstack ? "num" : "num_split", "%d", n);
    outs[0] = y;
    for (int i = 1; i < n; i++) {
        outs[i] = tg_new_tensor(b, b->t[y].node, nd, dims, X.dt, b->t[y].grad);
        tg_tape_add_out(b, ti, outs[i]);
    }
    if (ti >= 0) b->tape[ti].ia[0] = axis;
    return y;
}

int zb_split(struct zb *b, int x, int n, int axis, int *outs) {
    return split_like(b, x, n, axis, outs, false);
}

int zb_unstack(struct zb *b, int x, int n, int axis, int *outs) {
    return split_like(b, x, n, axis, outs, true);
}

int zb_stack(struct zb *b, const int *xs, int n, int axis) {
    if (b->st) return -1;
    if (n < 1 || n > MAX_FAN) return zb_fail(b, DP_ERR_UNSUPPORTED, "%s: stack of %d", b->scope, n);
    const struct tensor X = b->t[xs[0]];
    int64_t dims[DP_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d <= X.n_dims; d++) {
        if (d == axis) dims[nd++] = n;
        if (d < X.n_dims) dims[nd++] = X.dims[d];
    }
    int ti;
    int y = tg_fwd(b, K_STACK, "stack", "Pack", xs, n, nd, dims, X.dt, &ti);
    if (ti >= 0) b->tape[ti].ia[0] = axis;
    return y;
}

int zb_reshape(struct zb *b, int x, int n_dims, const int64_t *dims) {
    if (b->st || x < 0) return -1;
    int64_t nd = n_dims;
    int s = zb_const(b, "shape", 1, &nd, DP_DTYPE_I32);
    int ins[2] = {x, s}, ti;
    int y = tg_fwd(b, K_RESHAPE, "Reshape", "Reshape", ins, 2, n_dims, dims, b->t[x].dt, &ti);
    if (ti >= 0) b->tape[ti].n_in = 1;
    return y;
}

int zb_transpose(struct zb *b, int x, const int *perm) {
    if (b->st || x < 0) return -1;
    const struct tensor X = b->t[x];
    int64_t dims[DP_MAX_DIMS], nd = X.n_dims;
    if (nd > 4) return zb_fail(b, DP_ERR_UNSUPPORTED, "%s: transpose of rank %d", b->scope,
                               X.n_dims);
    for (int d = 0; d < X.n_dims; d++) {
        if (perm[d] < 0 || perm[d] >= X.n_dims)
            return zb_fail(b, DP_ERR_SHAPE, "%s: transpose permutation", b->scope);
        dims[d] = X.dims[perm[d]];
    }
    int p = zb_const(b, "perm", 1, &nd, DP_DTYPE_I32);
    int ins[2] = {x, p}, ti;
    int y = tg_fwd(b, K_TRANSPOSE, "transpose", "Transpose", ins, 2, X.n_dims, dims, X.dt, &ti);
    if (ti >= 0) {
        b->tape[ti].n_in = 1;
        for (int d = 0; d < X.n_dims; d++) b->tape[ti].ia[d] = perm[d];
    }
    return y;
}

int zb_gather(struct zb *b, int table, int ids) {
    if (b->st || table < 0 || ids < 0) return -1;
    const struct tensor T = b->t[table], I = b->t[ids];
    if (T.n_dims != 2 || I.n_dims < 0 || I.n_dims + 1 > DP_MAX_DIMS)
        return zb_fail(b, DP_ERR_SHAPE, "%s: gather needs a 2-D table", b->scope);
    int64_t dims[DP_MAX_DIMS];
    memcpy(dims, I.dims, sizeof(int64_t) * (size_t)I.n_dims);
    dims[I.n_dims] = T.dims[1];
    int64_t zero = 0;
    int ax = zb_const(b, "axis", 0, &zero, DP_DTYPE_I32);
    int ins[3] = {table, ids, ax}, ti;
    int y = tg_fwd(b, K_GATHER, "GatherV2", "GatherV2", ins, 3, I.n_dims + 1, dims, T.dt, &ti);
    if (ti >= 0) b->tape[ti].n_in = 2;
    return y;
}

int zb_slice(struct zb *b, int x, int axis, int64_t start, int64_t len) {
    if (b->st || x < 0) return -1;
    const struct tensor X = b->t[x];
    if (axis < 0) axis += X.n_dims;
    if (axis < 0 || axis >= X.n_dims || start < 0 || len < 0 ||
        (X.dims[axis] >= 0 && start + len > X.dims[axis]))
        return zb_fail(b, DP_ERR_SHAPE, "%s: slice out of range", b->scope);
    int64_t dims[DP_MAX_DIMS], nd = X.n_dims;
    memcpy(dims, X.dims, sizeof dims);
    dims[axis] = len;
    int be = zb_const(b, "stack", 1, &nd, DP_DTYPE_I32);
    int ins[2] = {x, be}, ti;
    int y = tg_fwd(b, K_SLICE, "strided_slice", "StridedSlice", ins, 2, X.n_dims, dims, X.dt, &ti);
    if (ti >= 0) b->tape[ti].n_in = 1;
    return y;
}

int zb_dropout(struct zb *b, int x, double rate) {
    if (b->st || x < 0) return -1;
    zb_push(b, "dropout");
    const struct tensor X = b->t[x];
    int n = X.n_dims;
    int64_t dims[DP_MAX_DIMS], nd = n;
    memcpy(dims, X.dims, sizeof dims);
    enum dp_dtype dt = X.dt;
    int shape = zb_const(b, "Shape", 1, &nd, DP_DTYPE_I32);
    int r = zb_opaque(b, "RandomUniform", &shape, 1, n, dims, dt);
    int rate_c = tg_scalar(b, "rate");
    int ge_in[2] = {r, rate_c};
    int mask = zb_opaque(b, "GreaterEqual", ge_in, 2, n, dims, DP_DTYPE_BOOL);
    int maskf = zb_opaque(b, "Cast", &mask, 1, n, dims, dt);
    int y = zb_binary(b, "Mul", x, tg_scalar(b, "truediv"));
    y = zb_binary(b, "Mul", y, maskf);
    if (y >= 0) tg_set_attr(b, b->t[y].node, "rate", "%g", rate);
    zb_pop(b);
    return y;
}

int zb_opaque(struct zb *b, const char *op, const int *xs, int n, int n_dims,
              const int64_t *dims, enum dp_dtype dt) {
    char full[NAME_MAX_LEN];
    tg_scoped(b, op, full, sizeof full);
    int y = tg_emit(b, full, op, GPU_DEV, xs, n, n_dims, dims, dt);
    if (y >= 0) b->t[y].grad = false;
    return y;
}

int zb_xent_loss(struct zb *b, int logits, int labels, bool sparse) {
    if (b->st || logits < 0 || labels < 0) return -1;
    zb_push(b, "loss");
    if (b->t[logits].dt != DP_DTYPE_F32) logits = zb_cast(b, logits, DP_DTYPE_F32);
    if (b->st) return -1;
    const struct tensor L = b->t[logits];
    if (L.n_dims < 1) return zb_fail(b, DP_ERR_SHAPE, "%s: logits of unknown shape", b->scope);
    int64_t rows[DP_MAX_DIMS];
    int nr = L.n_dims - 1;
    memcpy(rows, L.dims, sizeof rows);
    int lab = labels;
    if (!sparse) {
        int64_t depth = L.dims[nr];
        int d = zb_const(b, "depth", 0, &depth, DP_DTYPE_I32);
        int ins[2] = {labels, d};
        lab = zb_opaque(b, "OneHot", ins, 2, L.n_dims, L.dims, DP_DTYPE_F32);
    }
    const char *op = sparse ? "SparseSoftmaxCrossEntropyWithLogits"
                            : "SoftmaxCrossEntropyWithLogits";
    int ins[2] = {logits, lab}, ti;
    int per = tg_fwd(b, K_XENT, op, op, ins, 2, nr, rows, DP_DTYPE_F32, &ti);
    if (ti >= 0) {
        /* Output 1 is the backprop (softmax - labels), shaped like the logits. */
        int bp = tg_new_tensor(b, b->t[per].node, L.n_dims, L.dims, DP_DTYPE_F32, false);
        b->tape[ti].ia[0] = bp;
    }
    unsigned mask = (1u << nr) - 1;
    int loss = zb_reduce(b, "Mean", per, mask, false);
    zb_pop(b);
    return loss;
}
