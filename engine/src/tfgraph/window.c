/* window.c: the builder's window ops: 2-D and 3-D convolutions (grouped, depthwise in 2-D,
 * dilated, strided, with explicit or SAME padding), transposed convolutions, and 2-D or 3-D
 * pooling (ceil mode included). Each computes its output size the way TensorFlow and ONNX define
 * it and records its TensorFlow attributes (ksize, strides, dilations, padding, data_format). */
#include "tfgraph_impl.h"

#include <stdio.h>
#include <string.h>

/* The output size along one spatial axis. in <= 0 (unknown) stays as it is. */
static int64_t window_out(int64_t in, const struct zb_window *w, int axis) {
    if (in <= 0) return in;
    int64_t s = w->stride[axis];
    if (w->same) return (in + s - 1) / s;
    int64_t span = in + w->pad[2 * axis] + w->pad[2 * axis + 1] -
                   ((w->k[axis] - 1) * w->dilation[axis] + 1);
    if (span < 0) return 0;
    int64_t out = (w->ceil_mode ? (span + s - 1) / s : span / s) + 1;
    /* ceil mode: the last window must start inside the input or its leading padding */
    if (w->ceil_mode && (out - 1) * s >= in + w->pad[2 * axis]) out--;
    return out;
}

/* "[1, 1, a, b]" (NCHW) or "[1, a, b, 1]" (NHWC) for the spatial values v[0..n). */
static void spatial_list(const struct zb *b, const int64_t *v, int n, char *out, size_t len) {
    size_t k = (size_t)snprintf(out, len, "[1%s", b->opts.nchw ? ", 1" : "");
    for (int i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(out + k, len - k, ", %lld", (long long)v[i]);
    if (k < len) snprintf(out + k, len - k, "%s]", b->opts.nchw ? "" : ", 1");
}

static void set_window_attrs(struct zb *b, int node, const struct zb_window *w, bool pool) {
    char list[160];
    if (pool) {
        spatial_list(b, w->k, w->n, list, sizeof list);
        zb_set_attr(b, node, "ksize", "%s", list);
    }
    spatial_list(b, w->stride, w->n, list, sizeof list);
    zb_set_attr(b, node, "strides", "%s", list);
    bool dilated = false, zero = true;
    for (int i = 0; i < w->n; i++) {
        dilated |= w->dilation[i] != 1;
        zero &= !w->pad[2 * i] && !w->pad[2 * i + 1];
    }
    if (dilated) {
        spatial_list(b, w->dilation, w->n, list, sizeof list);
        zb_set_attr(b, node, "dilations", "%s", list);
    }
    if (w->same) {
        zb_set_attr(b, node, "padding", "SAME");
    } else if (zero) {
        zb_set_attr(b, node, "padding", "VALID");
    } else {
        zb_set_attr(b, node, "padding", "EXPLICIT");
        size_t k = (size_t)snprintf(list, sizeof list, "[");
        for (int i = 0; i < 2 * w->n && k < sizeof list; i++)
            k += (size_t)snprintf(list + k, sizeof list - k, "%s%lld", i ? ", " : "",
                                  (long long)w->pad[i]);
        zb_set_attr(b, node, "explicit_paddings", "%s]", list);
    }
    if (w->n == 3) zb_set_attr(b, node, "data_format", b->opts.nchw ? "NCDHW" : "NDHWC");
    else zb_set_attr(b, node, "data_format", b->opts.nchw ? "NCHW" : "NHWC");
}

static bool window_ok(struct zb *b, const struct zb_window *w) {
    if (w->n < 2 || w->n > 3) {
        zb_fail(b, DP_ERR_UNSUPPORTED, "%s: a window over %d axes", b->scope, w->n);
        return false;
    }
    for (int i = 0; i < w->n; i++)
        if (w->k[i] < 1 || w->k[i] > 4096 || w->stride[i] < 1 || w->stride[i] > 4096 ||
            w->dilation[i] < 1 || w->dilation[i] > 4096 || w->pad[2 * i] < 0 ||
            w->pad[2 * i] > 4096 || w->pad[2 * i + 1] < 0 || w->pad[2 * i + 1] > 4096) {
            zb_fail(b, DP_ERR_INVALID, "%s: window (kernel, stride, dilation or padding) out of "
                    "range [0, 4096]", b->scope);
            return false;
        }
    return true;
}

/* The output dims of a window op over X: the spatial sizes from the window, the rest copied. */
static bool window_dims(struct zb *b, const struct tensor *X, const struct zb_window *w,
                        int64_t *dims) {
    int first = b->opts.nchw ? 2 : 1;
    memcpy(dims, X->dims, sizeof X->dims);
    for (int i = 0; i < w->n; i++) {
        dims[first + i] = window_out(X->dims[first + i], w, i);
        if (dims[first + i] == 0) {
            zb_fail(b, DP_ERR_INVALID, "%s: the input is too small for this layer (side %lld, "
                    "window %lld)", b->scope, (long long)X->dims[first + i], (long long)w->k[i]);
            return false;
        }
    }
    return true;
}

int zb_conv_window(struct zb *b, int x, int w, const struct zb_window *win, bool depthwise) {
    if (b->st || x < 0 || w < 0 || !window_ok(b, win)) return -1;
    const struct tensor X = b->t[x], W = b->t[w];
    int r = win->n + 2;
    if (X.n_dims != r || W.n_dims != r || (depthwise && r != 4))
        return zb_fail(b, DP_ERR_SHAPE, "%s: %d-D convolution needs %d-D input and filter%s",
                       b->scope, win->n, r, depthwise ? " (depthwise: 2-D only)" : "");
    int c = zb_caxis(b);
    int64_t in = W.dims[r - 2], out = W.dims[r - 1];
    /* A filter [kh, kw, cin / groups, cout] ([kd, kh, kw, ...] for Conv3D) convolves groups of
     * channels (TF's Conv2D does when the input has a multiple of the filter's input depth). */
    if (X.dims[c] > 0 && in > 0 &&
        (X.dims[c] % in || (!depthwise && out % (X.dims[c] / in)) ||
         (depthwise && X.dims[c] != in)))
        return zb_fail(b, DP_ERR_SHAPE, "%s: input has %lld channels, the filter expects %lld%s",
                       b->scope, (long long)X.dims[c], (long long)in,
                       depthwise ? "" : " per group");
    int64_t dims[DP_MAX_DIMS];
    if (!window_dims(b, &X, win, dims)) return -1;
    dims[c] = depthwise ? in * out : out;
    int ins[2] = {x, w};
    const char *op = depthwise ? "DepthwiseConv2dNative" : r == 5 ? "Conv3D" : "Conv2D";
    int y = zb_fwd(b, depthwise ? K_DWCONV : K_CONV, op, op, ins, 2, r, dims, X.dt, NULL);
    if (y >= 0) set_window_attrs(b, b->t[y].node, win, false);
    return y;
}

int zb_conv(struct zb *b, int x, int w, int stride, const int64_t *pads, bool depthwise) {
    if (b->st || w < 0) return -1;
    struct zb_window win = {2, {b->t[w].dims[0], b->t[w].dims[1], 1}, {stride, stride, 1},
                            {1, 1, 1}, {0}, !pads, false};
    if (pads) memcpy(win.pad, pads, 4 * sizeof *pads);
    return zb_conv_window(b, x, w, &win, depthwise);
}

int zb_conv_transpose(struct zb *b, int x, int w, const struct zb_window *win,
                      const int64_t *out_spatial, int64_t groups) {
    if (b->st || x < 0 || w < 0 || !window_ok(b, win)) return -1;
    const struct tensor X = b->t[x], W = b->t[w];
    int r = win->n + 2;
    if (X.n_dims != r || W.n_dims != r || groups < 1 || groups > ZB_MAX_DIM)
        return zb_fail(b, DP_ERR_SHAPE, "%s: %d-D transposed convolution needs %d-D input and "
                       "filter", b->scope, win->n, r);
    int c = b->opts.nchw ? 1 : r - 1, first = b->opts.nchw ? 2 : 1;
    if (X.dims[c] > 0 && W.dims[r - 1] > 0 && X.dims[c] != W.dims[r - 1])
        return zb_fail(b, DP_ERR_SHAPE, "%s: input has %lld channels, the filter expects %lld",
                       b->scope, (long long)X.dims[c], (long long)W.dims[r - 1]);
    if (W.dims[r - 2] < 1 || W.dims[r - 2] > ZB_MAX_DIM / groups)
        return zb_fail(b, DP_ERR_SHAPE, "%s: transposed convolution of %lld groups of %lld "
                       "output channels", b->scope, (long long)groups, (long long)W.dims[r - 2]);
    int64_t dims[DP_MAX_DIMS], rank = r;
    memcpy(dims, X.dims, sizeof dims);
    dims[c] = W.dims[r - 2] * groups;
    for (int i = 0; i < win->n; i++) {
        if (out_spatial[i] < 1 || out_spatial[i] > ZB_MAX_DIM)
            return zb_fail(b, DP_ERR_INVALID, "%s: transposed convolution output side %lld",
                           b->scope, (long long)out_spatial[i]);
        dims[first + i] = out_spatial[i];
    }
    /* TensorFlow's conv2d_transpose / conv3d_transpose: the input gradient of the convolution
     * from y to x. */
    int sizes = zb_const(b, "output_shape", 1, &rank, DP_DTYPE_I32);
    int ins[3] = {sizes, w, x};
    int y = zb_fwd(b, K_CONVT, r == 5 ? "conv3d_transpose" : "conv2d_transpose",
                   r == 5 ? "Conv3DBackpropInputV2" : "Conv2DBackpropInput", ins, 3, r, dims,
                   X.dt, NULL);
    if (y >= 0) set_window_attrs(b, b->t[y].node, win, false);
    return y;
}

int zb_pool_window(struct zb *b, const char *op, int x, const struct zb_window *win) {
    if (b->st || x < 0 || !window_ok(b, win)) return -1;
    const struct tensor X = b->t[x];
    if (X.n_dims != win->n + 2)
        return zb_fail(b, DP_ERR_SHAPE, "%s: %d-D pooling needs a %d-D input (rank %d)",
                       b->scope, win->n, win->n + 2, X.n_dims);
    int64_t dims[DP_MAX_DIMS];
    if (!window_dims(b, &X, win, dims)) return -1;
    char name[32];
    snprintf(name, sizeof name, "%s%s", op, win->n == 3 ? "3D" : "");
    int y = zb_fwd(b, K_POOL, name, name, &x, 1, X.n_dims, dims, X.dt, NULL);
    if (y >= 0) set_window_attrs(b, b->t[y].node, win, true);
    return y;
}

int zb_pool(struct zb *b, const char *op, int x, int k, int stride, const int64_t *pads) {
    struct zb_window win = {2, {k, k, 1}, {stride, stride, 1}, {1, 1, 1}, {0}, !pads, false};
    if (pads) memcpy(win.pad, pads, 4 * sizeof *pads);
    return zb_pool_window(b, op, x, &win);
}
