/* forward.c: the builder's arithmetic forward primitives (bias, batch norm, element-wise,
 * casts, selection, matrix products, einsum, reductions, softmax, dropout, the loss): each
 * appends a TensorFlow op with its output shape (NumPy broadcasting, matrix products) and
 * records it on the tape with what its gradient rule needs (gradients.c). Window ops are in
 * window.c, data movement in rearrange.c. */
#include "tfgraph_impl.h"

#include <stdio.h>
#include <string.h>

#include "dp/ops.h"

/* --- shapes ------------------------------------------------------------------------------ */

bool zb_same_dims(const struct tensor *a, const struct tensor *c) {
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

bool zb_broadcast(const struct tensor *x, const struct tensor *y, int *n, int64_t *out) {
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

/* --- forward primitives ------------------------------------------------------------------- */

int zb_bias_add(struct zb *b, int x, int bias) {
    if (b->st || x < 0 || bias < 0) return -1;
    int ins[2] = {x, bias};
    int y = zb_fwd(b, K_BIAS, "BiasAdd", "BiasAdd", ins, 2, b->t[x].n_dims, b->t[x].dims,
                   b->t[x].dt, NULL);
    if (y >= 0 && b->t[x].n_dims == 4) zb_set_attr(b, b->t[y].node, "data_format",
                                                 b->opts.nchw ? "NCHW" : "NHWC");
    return y;
}

/* Tensor t is a variable's read (the Identity of its VariableV2, zb_new_var). */
static bool is_variable_read(const struct zb *b, int t) {
    for (int i = 0; i < b->n_vars; i++)
        if (b->t[b->vars[i].read].node == b->t[t].node) return true;
    return false;
}

int zb_batch_norm(struct zb *b, int x, int gamma, int beta, int mean, int var) {
    if (b->st || x < 0 || gamma < 0 || beta < 0) return -1;
    int ins[3] = {x, gamma, beta};
    int y = zb_fwd(b, K_BN, "FusedBatchNormV3", "FusedBatchNormV3", ins, 3, b->t[x].n_dims,
                b->t[x].dims, b->t[x].dt, NULL);
    if (y < 0) return -1;
    int node = b->t[y].node;
    zb_set_attr(b, node, "is_training", "true");
    zb_set_attr(b, node, "data_format", b->opts.nchw ? "NCHW" : "NHWC");
    /* The moving averages: AssignMovingAvg = AssignSub(v, (v - batch_stat) * (1 - decay)). */
    int64_t c = b->t[gamma].dims[0];
    int stats[2] = {mean, var};
    const char *names[2] = {"AssignMovingAvg", "AssignMovingAvg_1"};
    for (int k = 0; k < 2; k++) {
        /* Only a variable's read (Identity of a VariableV2) gets a moving-average update. */
        if (stats[k] < 0 || !is_variable_read(b, stats[k])) continue;
        int batch_stat = zb_new_tensor(b, node, 1, &c, DP_DTYPE_F32, false);
        zb_push(b, "%s", names[k]);
        int s_in[2] = {stats[k], batch_stat};
        char full[NAME_MAX_LEN];
        zb_scoped(b, "sub", full, sizeof full);
        int s = zb_emit(b, full, "Sub", GPU_DEV, s_in, 2, 1, &c, DP_DTYPE_F32);
        int dec = zb_const(b, "decay", 0, NULL, DP_DTYPE_F32);
        int m_in[2] = {s, dec};
        zb_scoped(b, "mul", full, sizeof full);
        int m = zb_emit(b, full, "Mul", GPU_DEV, m_in, 2, 1, &c, DP_DTYPE_F32);
        zb_scoped(b, "AssignSub", full, sizeof full);
        /* AssignSub writes the variable itself: its input is the VariableV2 node. */
        int vnode = dp_graph_node(b->g, (size_t)b->t[stats[k]].node)->inputs[0];
        int a = zb_add_node(b, full, "AssignSub", GPU_DEV, 1, &c, DP_DTYPE_F32, &vnode, 1);
        if (a >= 0 && m >= 0) {
            struct dp_error e = {0};
            if (dp_graph_add_input(b->g, a, b->t[m].node, false, &e))
                zb_fail(b, e.status, "%s", e.msg);
        }
        zb_pop(b);
        if (a >= 0 && zb_grow(b, (void **)&b->updates, b->n_updates, &b->cap_updates,
                           sizeof *b->updates))
            b->updates[b->n_updates++] = a;
    }
    return y;
}

int zb_unary(struct zb *b, const char *op, int x) {
    if (b->st || x < 0) return -1;
    int y = zb_fwd(b, K_UNARY, op, op, &x, 1, b->t[x].n_dims, b->t[x].dims, b->t[x].dt, NULL);
    if (y >= 0 && dp_op_grad(op) == DP_OPGRAD_LRN) { /* LRN */
        zb_set_attr(b, b->t[y].node, "depth_radius", "5");
    }
    return y;
}

int zb_cast(struct zb *b, int x, enum dp_dtype dt) {
    if (b->st || x < 0) return -1;
    /* integers and booleans carry no gradient */
    const struct tensor X = b->t[x];
    int y = dp_dtype_is_float(dt) ? zb_fwd(b, K_CAST, "Cast", "Cast", &x, 1, X.n_dims, X.dims, dt,
                                           NULL)
                                  : zb_opaque(b, "Cast", &x, 1, X.n_dims, X.dims, dt);
    if (y >= 0) zb_set_attr(b, b->t[y].node, "DstT", "%s", dp_dtype_name(dt));
    return y;
}

int zb_select(struct zb *b, int cond, int x, int y) {
    if (b->st || cond < 0 || x < 0 || y < 0) return -1;
    int n, m;
    int64_t xy[DP_MAX_DIMS], dims[DP_MAX_DIMS];
    struct tensor t = b->t[x];
    if (!zb_broadcast(&b->t[x], &b->t[y], &n, xy))
        return zb_fail(b, DP_ERR_SHAPE, "%s/SelectV2: operand shapes do not broadcast", b->scope);
    t.n_dims = n;
    memcpy(t.dims, xy, sizeof xy);
    if (!zb_broadcast(&b->t[cond], &t, &m, dims))
        return zb_fail(b, DP_ERR_SHAPE, "%s/SelectV2: the condition does not broadcast",
                       b->scope);
    int ins[3] = {cond, x, y};
    return zb_fwd(b, K_SELECT, "SelectV2", "SelectV2", ins, 3, m, dims, b->t[x].dt, NULL);
}

int zb_binary(struct zb *b, const char *op, int x, int y) {
    if (b->st || x < 0 || y < 0) return -1;
    int n;
    int64_t dims[DP_MAX_DIMS];
    if (!zb_broadcast(&b->t[x], &b->t[y], &n, dims))
        return zb_fail(b, DP_ERR_SHAPE, "%s/%s: operand shapes do not broadcast", b->scope, op);
    int ins[2] = {x, y};
    enum dp_dtype dt = b->t[x].n_dims >= b->t[y].n_dims ? b->t[x].dt : b->t[y].dt;
    return zb_fwd(b, K_BINARY, op, op, ins, 2, n, dims, dt, NULL);
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
    if (!zb_broadcast(&bx, &by, n, dims)) return false;
    dims[(*n)++] = m;
    dims[(*n)++] = nn;
    return *n <= DP_MAX_DIMS;
}

void zb_matmul_attrs(struct zb *b, int node, bool batch, bool tx, bool ty) {
    zb_set_attr(b, node, batch ? "adj_x" : "transpose_a", tx ? "true" : "false");
    zb_set_attr(b, node, batch ? "adj_y" : "transpose_b", ty ? "true" : "false");
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
    int out = zb_fwd(b, K_MATMUL, op, op, ins, 2, n, dims, b->t[x].dt, &ti);
    if (out >= 0) zb_matmul_attrs(b, b->t[out].node, batch, tx, ty);
    if (ti >= 0) {
        b->tape[ti].ia[0] = tx;
        b->tape[ti].ia[1] = ty;
    }
    return out;
}

int zb_einsum(struct zb *b, const char *equation, int x, int y, int n_dims, const int64_t *dims) {
    if (b->st || x < 0 || (y < 0 && y != -1)) return -1;
    if (!equation || !strstr(equation, "->") || strlen(equation) > 200)
        return zb_fail(b, DP_ERR_UNSUPPORTED, "%s: einsum needs an explicit output (\"...->...\")",
                       b->scope);
    int ins[2] = {x, y};
    int t = zb_fwd(b, K_EINSUM, "einsum", "Einsum", ins, y < 0 ? 1 : 2, n_dims, dims, b->t[x].dt,
                   NULL);
    if (t >= 0) zb_set_attr(b, b->t[t].node, "equation", "%s", equation);
    return t;
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
    int y = zb_fwd(b, K_REDUCE, op, op, ins, 2, n, dims, X.dt, &ti);
    if (y >= 0) zb_set_attr(b, b->t[y].node, "keep_dims", keepdims ? "true" : "false");
    if (ti >= 0) {
        b->tape[ti].ia[0] = (int)mask;
        b->tape[ti].ia[1] = keepdims;
    }
    return y;
}

int zb_softmax(struct zb *b, int x) {
    if (b->st || x < 0) return -1;
    return zb_fwd(b, K_SOFTMAX, "Softmax", "Softmax", &x, 1, b->t[x].n_dims, b->t[x].dims,
               b->t[x].dt, NULL);
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
    int rate_c = zb_scalar(b, "rate");
    int ge_in[2] = {r, rate_c};
    int mask = zb_opaque(b, "GreaterEqual", ge_in, 2, n, dims, DP_DTYPE_BOOL);
    int maskf = zb_opaque(b, "Cast", &mask, 1, n, dims, dt);
    int y = zb_binary(b, "Mul", x, zb_scalar(b, "truediv"));
    y = zb_binary(b, "Mul", y, maskf);
    if (y >= 0) zb_set_attr(b, b->t[y].node, "rate", "%g", rate);
    zb_pop(b);
    return y;
}

int zb_opaque(struct zb *b, const char *op, const int *xs, int n, int n_dims,
              const int64_t *dims, enum dp_dtype dt) {
    char full[NAME_MAX_LEN];
    zb_scoped(b, op, full, sizeof full);
    int y = zb_emit(b, full, op, GPU_DEV, xs, n, n_dims, dims, dt);
    if (y >= 0) b->t[y].grad = false;
    return y;
}

int zb_generic(struct zb *b, const char *op, const int *xs, int n, int n_dims,
               const int64_t *dims, enum dp_dtype dt) {
    if (!dp_dtype_is_float(dt)) return zb_opaque(b, op, xs, n, n_dims, dims, dt);
    return zb_fwd(b, K_GENERIC, op, op, xs, n, n_dims, dims, dt, NULL);
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
    int per = zb_fwd(b, K_XENT, op, op, ins, 2, nr, rows, DP_DTYPE_F32, &ti);
    if (ti >= 0) {
        /* Output 1 is the backprop (softmax - labels), shaped like the logits. */
        int bp = zb_new_tensor(b, b->t[per].node, L.n_dims, L.dims, DP_DTYPE_F32, false);
        b->tape[ti].ia[0] = bp;
    }
    unsigned mask = (1u << nr) - 1;
    int loss = zb_reduce(b, "Mean", per, mask, false);
    zb_pop(b);
    return loss;
}
