/* onnx_window.c: ONNX's window operators onto the builder: Conv (1-D to 3-D, any group count,
 * depthwise when every channel of a 1-D or 2-D one is its own group, dilated, strided, explicit
 * or automatic padding), ConvTranspose (TF's conv2d_transpose, conv3d_transpose for 3-D),
 * MaxPool and AveragePool over 1 to 3 spatial axes with ceil mode. Weights become HWIO (DHWIO)
 * variables, the layout TensorFlow's kernels read; 1-D ops run as 2-D ones of height 1, as TF's
 * conv1d does. */
#include "onnx_impl.h"

#include <string.h>

/* The ONNX window attributes for `spatial` axes (1 or 2 widened to the builder's 2, or 3) with
 * the kernel k[] given; false (node failed) on values out of range. */
static bool window(struct imp *im, int spatial, const int64_t *k, struct zb_window *w) {
    const struct o_node *n = im->node;
    const struct o_attr *st = onnx_attr(n, "strides"), *dl = onnx_attr(n, "dilations");
    const struct o_attr *pd = onnx_attr(n, "pads"), *ap = onnx_attr(n, "auto_pad");
    const struct o_attr *cm = onnx_attr(n, "ceil_mode");
    int off = spatial == 1 ? 1 : 0; /* a 1-D window is the second axis of a 2-D one */
    memset(w, 0, sizeof *w);
    w->n = spatial == 1 ? 2 : spatial;
    for (int i = 0; i < w->n; i++) {
        w->k[i] = 1;
        w->stride[i] = 1;
        w->dilation[i] = 1;
    }
    if ((st && st->n_ints != spatial) || (dl && dl->n_ints != spatial) ||
        (pd && pd->n_ints != 2 * spatial))
        return onnx_fail(im, DP_ERR_INVALID, "window attributes for %d spatial axes expected",
                         spatial) == 0;
    for (int i = 0; i < spatial; i++) {
        w->k[off + i] = k[i];
        if (st) w->stride[off + i] = st->ints[i];
        if (dl) w->dilation[off + i] = dl->ints[i];
        if (pd) { /* ONNX: [x1_begin, x2_begin, ..., x1_end, x2_end] */
            w->pad[2 * (off + i)] = pd->ints[i];
            w->pad[2 * (off + i) + 1] = pd->ints[spatial + i];
        }
    }
    w->same = ap && ap->s && !strncmp(ap->s, "SAME", 4);
    w->ceil_mode = cm && cm->i;
    return true;
}

/* x of rank 3 ([N, C, L]) as [N, C, 1, L]. */
static int widen(struct imp *im, int x) {
    int64_t d[4] = {zb_dim(im->b, x, 0), zb_dim(im->b, x, 1), 1, zb_dim(im->b, x, 2)};
    return zb_reshape(im->b, x, 4, d);
}

/* y of rank 4 ([N, C, 1, L]) back to [N, C, L]. */
static int narrow(struct imp *im, int y) {
    if (y < 0) return y;
    int64_t d[3] = {zb_dim(im->b, y, 0), zb_dim(im->b, y, 1), zb_dim(im->b, y, 3)};
    return zb_reshape(im->b, y, 3, d);
}

/* The filter in TF's layout: an initializer is made so directly; a computed one is transposed
 * (OIHW -> HWIO, OIDHW -> DHWIO; ConvTranspose's IOHW -> HWOI). hwio: the layout wanted (4 dims,
 * 5 for a 3-D window). */
static int filter(struct imp *im, struct oval *wv, int spatial, const int64_t *hwio) {
    int rank = spatial == 3 ? 5 : 4;
    int t = onnx_weight_as(im, wv, rank, hwio);
    if (t != -2) return t;
    if ((t = onnx_tensor(im, wv)) < 0) return -1;
    if (spatial == 1) { /* [O, I, k] -> [O, I, 1, k] */
        int64_t d[4] = {zb_dim(im->b, t, 0), zb_dim(im->b, t, 1), 1, zb_dim(im->b, t, 2)};
        t = zb_reshape(im->b, t, 4, d);
    }
    int perm4[4] = {2, 3, 1, 0}, perm5[5] = {2, 3, 4, 1, 0};
    t = zb_transpose(im->b, t, rank == 5 ? perm5 : perm4);
    return zb_reshape(im->b, t, rank, hwio);
}

/* The dims of a filter in TF's layout: the window (a 1-D one as 1 x k), then the two channel
 * dimensions given (HWIO, DHWIO; HWOI, DHWOI for a transposed convolution). */
static void filter_dims(int spatial, const int64_t *k, int64_t c0, int64_t c1, int64_t *d) {
    int n = 0;
    if (spatial == 1) d[n++] = 1;
    for (int i = 0; i < spatial; i++) d[n++] = k[i];
    d[n++] = c0;
    d[n] = c1;
}

bool onnx_map_conv(struct imp *im) {
    const struct o_node *n = im->node;
    bool transpose = !strcmp(n->op, "ConvTranspose");
    struct oval *xv = onnx_in(im, 0), *wv = onnx_in(im, 1);
    if (!xv || !wv || xv->n_dims < 3 || wv->n_dims != xv->n_dims)
        return onnx_fail(im, DP_ERR_SHAPE, "convolution needs an input and a filter of the same "
                         "rank (3 to 5)") == 0;
    int spatial = xv->n_dims - 2;
    int64_t wd[5], k[3];
    for (int d = 0; d < wv->n_dims; d++) {
        wd[d] = sym_to_dim(wv->dims[d]);
        if (wd[d] < 1)
            return onnx_fail(im, DP_ERR_SHAPE, "filter dimension %d is not known", d) == 0;
    }
    for (int i = 0; i < spatial; i++) k[i] = wd[2 + i];
    const struct o_attr *ks = onnx_attr(n, "kernel_shape"), *ga = onnx_attr(n, "group");
    if (ks && (ks->n_ints != spatial || memcmp(ks->ints, k, sizeof(int64_t) * (size_t)spatial)))
        return onnx_fail(im, DP_ERR_SHAPE, "kernel_shape disagrees with the filter") == 0;
    int64_t group = ga ? ga->i : 1;
    struct zb_window win;
    if (group < 1 || group > ZB_MAX_DIM)
        return onnx_fail(im, DP_ERR_INVALID, "group %lld", (long long)group) == 0;
    if (!window(im, spatial, k, &win)) return false;
    int x = onnx_in_t(im, 0);
    if (x < 0) return false;
    int64_t cin = sym_to_dim(xv->dims[1]);
    int y;
    if (!transpose) {
        bool depthwise = group > 1 && group == cin && wd[1] == 1 && spatial < 3;
        if (cin > 0 && cin != wd[1] * group)
            return onnx_fail(im, DP_ERR_SHAPE, "%lld input channels for a filter of %lld x %lld "
                             "groups", (long long)cin, (long long)wd[1], (long long)group) == 0;
        int64_t hwio[5];
        filter_dims(spatial, k, depthwise ? group : wd[1], depthwise ? wd[0] / group : wd[0],
                    hwio);
        int wt = filter(im, wv, spatial, hwio);
        int bias = n->n_in > 2 && *n->in[2] ? onnx_in_t(im, 2) : -1;
        if (wt < 0 || im->d->st) return false;
        onnx_scope(im);
        y = zb_conv_window(im->b, spatial == 1 ? widen(im, x) : x, wt, &win, depthwise);
        if (bias >= 0) y = zb_bias_add(im->b, y, bias);
    } else {
        const struct o_attr *op = onnx_attr(n, "output_padding");
        const struct o_attr *os = onnx_attr(n, "output_shape");
        if (cin > 0 && cin != wd[0])
            return onnx_fail(im, DP_ERR_SHAPE, "%lld input channels for a filter of %lld",
                             (long long)cin, (long long)wd[0]) == 0;
        if (wd[0] % group)
            return onnx_fail(im, DP_ERR_INVALID, "group %lld does not divide the %lld input "
                             "channels", (long long)group, (long long)wd[0]) == 0;
        if (op && op->n_ints != spatial)
            return onnx_fail(im, DP_ERR_INVALID, "output_padding for %d spatial axes expected",
                             spatial) == 0;
        for (int i = 0; op && i < spatial; i++)
            if (op->ints[i] < 0 || op->ints[i] > 4096)
                return onnx_fail(im, DP_ERR_INVALID, "output_padding %lld out of range [0, 4096]",
                                 (long long)op->ints[i]) == 0;
        /* The ONNX rule per axis: stride x (in - 1) + output_padding + (k - 1) x dilation + 1
         * - pads; in x stride with automatic padding; output_shape when given. */
        int64_t out[3], xd[3] = {1, 1, 1};
        for (int i = 0; i < spatial; i++) xd[spatial == 1 ? 1 : i] = sym_to_dim(xv->dims[2 + i]);
        for (int i = 0; i < win.n; i++) {
            int a = spatial == 1 ? i - 1 : i; /* the ONNX axis, -1 for the added one */
            if (a < 0) {
                out[i] = 1;
            } else if (os && os->n_ints >= spatial) {
                out[i] = os->ints[os->n_ints - spatial + a];
            } else if (xd[i] < 1) {
                return onnx_fail(im, DP_ERR_SHAPE, "transposed convolution of an unknown "
                                 "side") == 0;
            } else if (win.same) {
                out[i] = xd[i] * win.stride[i];
            } else {
                out[i] = win.stride[i] * (xd[i] - 1) + (op ? op->ints[a] : 0) +
                         (win.k[i] - 1) * win.dilation[i] + 1 - win.pad[2 * i] - win.pad[2 * i + 1];
            }
        }
        int64_t hwoi[5];
        filter_dims(spatial, k, wd[1], wd[0], hwoi);
        int wt = filter(im, wv, spatial, hwoi);
        int bias = n->n_in > 2 && *n->in[2] ? onnx_in_t(im, 2) : -1;
        if (wt < 0 || im->d->st) return false;
        onnx_scope(im);
        y = zb_conv_transpose(im->b, spatial == 1 ? widen(im, x) : x, wt, &win, out, group);
        if (bias >= 0) y = zb_bias_add(im->b, y, bias);
    }
    if (spatial == 1) y = narrow(im, y);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y);
}

bool onnx_map_pool(struct imp *im) {
    const struct o_node *n = im->node;
    struct oval *xv = onnx_in(im, 0);
    const struct o_attr *ks = onnx_attr(n, "kernel_shape");
    if (!xv || xv->n_dims < 3 || xv->n_dims > 5)
        return onnx_fail(im, DP_ERR_SHAPE, "pooling needs an input of rank 3 to 5 (has %d)",
                         xv ? xv->n_dims : -1) == 0;
    int spatial = xv->n_dims - 2;
    if (!ks || ks->n_ints != spatial)
        return onnx_fail(im, DP_ERR_INVALID, "kernel_shape for %d spatial axes expected",
                         spatial) == 0;
    struct zb_window win;
    if (!window(im, spatial, ks->ints, &win)) return false;
    int x = onnx_in_t(im, 0);
    if (x < 0) return false;
    onnx_scope(im);
    int y = zb_pool_window(im->b, n->op[0] == 'M' ? "MaxPool" : "AvgPool",
                           spatial == 1 ? widen(im, x) : x, &win);
    if (spatial == 1) y = narrow(im, y);
    int idx = -1;
    if (n->n_out > 1 && *n->out[1] && y >= 0) /* MaxPool's indices */
        idx = zb_opaque(im->b, "ArgMax", &y, 1, zb_rank(im->b, y), zb_dims(im->b, y),
                        DP_DTYPE_I64);
    zb_pop(im->b);
    return onnx_set_tensor(im, 0, y) && (idx < 0 || onnx_set_tensor(im, 1, idx));
}
