/* layers.c: layers composed from the builder's primitives, as TF1 code writes them: conv +
 * batch norm (or bias) + activation, dense, layer norm, GELU. The zoo's models use them. */
#include "tfgraph_impl.h"

/* --- layers -------------------------------------------------------------------------------- */

static int conv_layer(struct zb *b, const char *name, int x, int cout, int kh, int kw,
                      int stride, bool same, bool bn, const char *act, bool depthwise) {
    if (b->st || x < 0) return -1;
    zb_push(b, "%s", name);
    int64_t cin = zb_dim(b, x, zb_caxis(b));
    int64_t wd[4] = {kh, kw, cin, depthwise ? 1 : cout};
    int w = zb_variable(b, depthwise ? "depthwise_kernel" : "kernel", 4, wd, "normal", true);
    int64_t zp[4] = {0, 0, 0, 0};
    int y = zb_conv(b, x, w, stride, same ? NULL : zp, depthwise);
    int64_t c = depthwise ? cin : cout;
    if (bn) {
        zb_push(b, "BatchNorm");
        int gm = zb_new_var(b, "gamma", 1, &c, "ones", true, false, false, NULL);
        int bt = zb_new_var(b, "beta", 1, &c, "zeros", true, false, false, NULL);
        int mm = zb_new_var(b, "moving_mean", 1, &c, "zeros", false, false, false, NULL);
        int mv = zb_new_var(b, "moving_variance", 1, &c, "ones", false, false, false, NULL);
        y = zb_batch_norm(b, y, gm, bt, mm, mv);
        zb_pop(b);
    } else {
        y = zb_bias_add(b, y, zb_variable(b, "bias", 1, &c, "zeros", true));
    }
    if (act) y = zb_unary(b, act, y);
    zb_pop(b);
    return y;
}

int zb_conv_layer(struct zb *b, const char *name, int x, int cout, int k, int stride, bool same,
                  bool bn, const char *act) {
    return conv_layer(b, name, x, cout, k, k, stride, same, bn, act, false);
}

int zb_conv_layer2(struct zb *b, const char *name, int x, int cout, int kh, int kw, int stride,
                   bool same, bool bn, const char *act) {
    return conv_layer(b, name, x, cout, kh, kw, stride, same, bn, act, false);
}

int zb_dwconv_layer(struct zb *b, const char *name, int x, int k, int stride, const char *act) {
    return conv_layer(b, name, x, 0, k, k, stride, true, true, act, true);
}

int zb_bn_layer(struct zb *b, const char *name, int x, const char *act) {
    if (b->st || x < 0) return -1;
    zb_push(b, "%s", name);
    int64_t c = zb_dim(b, x, b->t[x].n_dims == 4 ? zb_caxis(b) : -1);
    int gm = zb_new_var(b, "gamma", 1, &c, "ones", true, false, false, NULL);
    int bt = zb_new_var(b, "beta", 1, &c, "zeros", true, false, false, NULL);
    int mm = zb_new_var(b, "moving_mean", 1, &c, "zeros", false, false, false, NULL);
    int mv = zb_new_var(b, "moving_variance", 1, &c, "ones", false, false, false, NULL);
    int y = zb_batch_norm(b, x, gm, bt, mm, mv);
    if (act) y = zb_unary(b, act, y);
    zb_pop(b);
    return y;
}

int zb_dense(struct zb *b, const char *name, int x, int units, const char *act) {
    if (b->st || x < 0) return -1;
    zb_push(b, "%s", name);
    int64_t wd[2] = {zb_dim(b, x, -1), units}, u = units;
    int w = zb_variable(b, "kernel", 2, wd, "normal", true);
    int y = zb_matmul(b, x, w, false, false);
    y = zb_bias_add(b, y, zb_variable(b, "bias", 1, &u, "zeros", true));
    if (act) y = zb_unary(b, act, y);
    zb_pop(b);
    return y;
}

int zb_layer_norm_with(struct zb *b, int x, int gamma, int beta, int n_axes) {
    if (b->st || x < 0 || gamma < 0 || beta < 0) return -1;
    int r = zb_rank(b, x);
    if (r < 1 || n_axes < 1 || n_axes > r)
        return zb_fail(b, DP_ERR_SHAPE, "%s: layer norm over %d axes of a tensor of rank %d",
                       b->scope, n_axes, r);
    unsigned last = ((1u << n_axes) - 1) << (r - n_axes);
    zb_push(b, "moments");
    int mean = zb_reduce(b, "Mean", x, last, true);
    int sq = zb_binary(b, "SquaredDifference", x, mean);
    int var = zb_reduce(b, "Mean", sq, last, true);
    zb_pop(b);
    zb_push(b, "batchnorm");
    int rs = zb_unary(b, "Rsqrt", zb_binary(b, "AddV2", var, zb_scalar(b, "add/y")));
    int s = zb_binary(b, "Mul", rs, gamma);
    int xm = zb_binary(b, "Mul", x, s);
    int mm = zb_binary(b, "Mul", mean, s);
    int sh = zb_binary(b, "Sub", beta, mm);
    int y = zb_binary(b, "AddV2", xm, sh);
    zb_pop(b);
    return y;
}

int zb_layer_norm(struct zb *b, const char *name, int x) {
    if (b->st || x < 0) return -1;
    if (zb_rank(b, x) < 1)
        return zb_fail(b, DP_ERR_SHAPE, "%s/%s: layer norm of a tensor of unknown shape",
                       b->scope, name);
    zb_push(b, "%s", name);
    int64_t d = zb_dim(b, x, -1);
    int gamma = zb_variable(b, "gamma", 1, &d, "ones", true);
    int beta = zb_variable(b, "beta", 1, &d, "zeros", true);
    int y = zb_layer_norm_with(b, x, gamma, beta, 1);
    zb_pop(b);
    return y;
}

int zb_gelu(struct zb *b, int x) {
    if (b->st || x < 0) return -1;
    zb_push(b, "gelu");
    int p = zb_binary(b, "Pow", x, zb_scalar(b, "Pow/y"));
    int m = zb_binary(b, "Mul", zb_scalar(b, "mul/x"), p);
    int a = zb_binary(b, "AddV2", x, m);
    int m2 = zb_binary(b, "Mul", zb_scalar(b, "mul_1/x"), a);
    int t = zb_unary(b, "Tanh", m2);
    int a2 = zb_binary(b, "AddV2", zb_scalar(b, "add_1/x"), t);
    int cdf = zb_binary(b, "Mul", zb_scalar(b, "mul_2/x"), a2);
    int y = zb_binary(b, "Mul", x, cdf);
    zb_pop(b);
    return y;
}
