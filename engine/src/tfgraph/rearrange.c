/* rearrange.c: the builder's ops that move data without arithmetic: concatenation, splits,
 * stacking, reshape, transpose, embedding lookups, slices and the general rearranging copy
 * (zb_copy: strided slices, padding, tiling, broadcasting, gathers, resizing), each with the
 * gradient TensorFlow emits for it. */
#include "tfgraph_impl.h"

#include <string.h>

/* The sum of two dimensions along a concatenated axis (batch multiples add up). */
static int64_t dim_add(int64_t a, int64_t c) {
    if (a >= 0 && c >= 0) return a + c;
    int64_t ka = zb_batch_multiple(a), kc = zb_batch_multiple(c);
    return ka && kc ? ZB_DIM_BATCH_TIMES(ka + kc) : DP_DIM_UNKNOWN;
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
        dims[axis] = i ? dim_add(dims[axis], Y.dims[axis]) : Y.dims[axis];
    }
    int ins[MAX_FAN];
    memcpy(ins, xs, (size_t)n * sizeof *ins);
    int64_t one = 1;
    ins[n] = zb_const(b, "axis", 0, &one, DP_DTYPE_I32);
    int ti;
    int y = zb_fwd(b, K_CONCAT, "concat", "ConcatV2", ins, n + 1, X.n_dims, dims, X.dt, &ti);
    if (ti >= 0) {
        b->tape[ti].n_in = n; /* the axis constant needs no gradient */
        b->tape[ti].ia[0] = axis;
    }
    return y;
}

/* Split (equal parts, sizes NULL), SplitV (sizes given) or Unpack (unstack) of x along axis. */
static int split_like(struct zb *b, int x, int n, const int64_t *sizes, int axis, int *outs,
                      bool unstack) {
    if (b->st || x < 0) return -1;
    const struct tensor X = b->t[x];
    if (axis < 0) axis += X.n_dims;
    if (axis < 0 || axis >= X.n_dims || n < 1 || n > MAX_FAN)
        return zb_fail(b, DP_ERR_SHAPE, "%s: split axis or count", b->scope);
    int64_t dims[DP_MAX_DIMS];
    int nd = 0, at = -1;
    for (int d = 0; d < X.n_dims; d++) {
        if (d != axis) dims[nd++] = X.dims[d];
        else if (!unstack) at = nd++;
    }
    int64_t total = 0;
    for (int i = 0; sizes && i < n; i++) {
        if (sizes[i] < 0 || sizes[i] > ZB_MAX_DIM)
            return zb_fail(b, DP_ERR_SHAPE, "%s: split size %lld", b->scope, (long long)sizes[i]);
        total += sizes[i];
    }
    if (sizes && X.dims[axis] >= 0 && total != X.dims[axis])
        return zb_fail(b, DP_ERR_SHAPE, "%s: split sizes add up to %lld, not %lld", b->scope,
                       (long long)total, (long long)X.dims[axis]);
    /* an equal split of a batch multiple k x batch: k / n x batch when n divides k */
    int64_t k = zb_batch_multiple(X.dims[axis]), part = X.dims[axis];
    if (X.dims[axis] > 0) part = X.dims[axis] / n;
    else if (k >= 1) part = k % n ? DP_DIM_UNKNOWN : ZB_DIM_BATCH_TIMES(k / n);
    if (at >= 0) dims[at] = sizes ? sizes[0] : part;
    const char *op = unstack ? "Unpack" : sizes ? "SplitV" : "Split";
    int ti;
    int y = zb_fwd(b, unstack ? K_UNSTACK : K_SPLIT, unstack ? "unstack" : "split", op, &x, 1, nd,
                   dims, X.dt, &ti);
    if (y < 0) return -1;
    zb_set_attr(b, b->t[y].node, unstack ? "num" : "num_split", "%d", n);
    outs[0] = y;
    for (int i = 1; i < n; i++) {
        if (at >= 0 && sizes) dims[at] = sizes[i];
        outs[i] = zb_new_tensor(b, b->t[y].node, nd, dims, X.dt, b->t[y].grad);
        zb_tape_add_out(b, ti, outs[i]);
    }
    if (ti >= 0) b->tape[ti].ia[0] = axis;
    return y;
}

int zb_split(struct zb *b, int x, int n, int axis, int *outs) {
    return split_like(b, x, n, NULL, axis, outs, false);
}

int zb_split_sizes(struct zb *b, int x, int n, const int64_t *sizes, int axis, int *outs) {
    return split_like(b, x, n, sizes, axis, outs, false);
}

int zb_unstack(struct zb *b, int x, int n, int axis, int *outs) {
    return split_like(b, x, n, NULL, axis, outs, true);
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
    int y = zb_fwd(b, K_STACK, "stack", "Pack", xs, n, nd, dims, X.dt, &ti);
    if (ti >= 0) b->tape[ti].ia[0] = axis;
    return y;
}

int zb_reshape(struct zb *b, int x, int n_dims, const int64_t *dims) {
    if (b->st || x < 0) return -1;
    int64_t nd = n_dims;
    int s = zb_const(b, "shape", 1, &nd, DP_DTYPE_I32);
    int ins[2] = {x, s}, ti;
    int y = zb_fwd(b, K_RESHAPE, "Reshape", "Reshape", ins, 2, n_dims, dims, b->t[x].dt, &ti);
    if (ti >= 0) b->tape[ti].n_in = 1;
    return y;
}

int zb_transpose(struct zb *b, int x, const int *perm) {
    if (b->st || x < 0) return -1;
    const struct tensor X = b->t[x];
    int64_t dims[DP_MAX_DIMS], nd = X.n_dims;
    if (nd < 0) return zb_fail(b, DP_ERR_SHAPE, "%s: transpose of an unknown shape", b->scope);
    for (int d = 0; d < X.n_dims; d++) {
        if (perm[d] < 0 || perm[d] >= X.n_dims)
            return zb_fail(b, DP_ERR_SHAPE, "%s: transpose permutation", b->scope);
        dims[d] = X.dims[perm[d]];
    }
    int p = zb_const(b, "perm", 1, &nd, DP_DTYPE_I32);
    int ins[2] = {x, p}, ti;
    int y = zb_fwd(b, K_TRANSPOSE, "transpose", "Transpose", ins, 2, X.n_dims, dims, X.dt, &ti);
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
    int y = zb_fwd(b, K_GATHER, "GatherV2", "GatherV2", ins, 3, I.n_dims + 1, dims, T.dt, &ti);
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
    int y = zb_fwd(b, K_SLICE, "strided_slice", "StridedSlice", ins, 2, X.n_dims, dims, X.dt, &ti);
    if (ti >= 0) b->tape[ti].n_in = 1;
    return y;
}


int zb_copy(struct zb *b, const char *op, int x, const int *extra, int n_extra, int n_dims,
            const int64_t *dims) {
    if (b->st || x < 0) return -1;
    if (n_extra < 0 || n_extra >= MAX_FAN)
        return zb_fail(b, DP_ERR_UNSUPPORTED, "%s: %s with %d inputs", b->scope, op, n_extra);
    int ins[MAX_FAN], ti;
    ins[0] = x;
    for (int i = 0; i < n_extra; i++) ins[1 + i] = extra[i];
    int y = zb_fwd(b, K_COPY, op, op, ins, 1 + n_extra, n_dims, dims, b->t[x].dt, &ti);
    if (ti >= 0) b->tape[ti].n_in = 1; /* indices, sizes and paddings take no gradient */
    return y;
}
