/* zoo_layers.c: layers shared by the zoo's models and the architecture generator: image and token
 * inputs, the global-average-pooling classifier, multi-head attention, the feed-forward block, the
 * causal mask and unrolled LSTM/GRU layers (zoo_layers.h). */
#include "zoo/zoo_layers.h"

int zoo_image_input(struct zb *b, int64_t side, int *labels) {
    int64_t d[4] = {DP_DIM_BATCH, side, side, 3}, l[1] = {DP_DIM_BATCH};
    return zb_input(b, 4, d, DP_DTYPE_F32, 1, l, labels, true);
}

unsigned zoo_spatial_mask(const struct zb *b) { return zb_nchw(b) ? 0xcu : 0x6u; }

int zoo_flatten(struct zb *b, int x) {
    int64_t n = 1;
    for (int d = 1; d < zb_rank(b, x); d++) n *= zb_dim(b, x, d);
    int64_t dims[2] = {DP_DIM_BATCH, n};
    zb_push(b, "flatten");
    int y = zb_reshape(b, x, 2, dims);
    zb_pop(b);
    return y;
}

int zoo_gap_head(struct zb *b, int x, int labels, double dropout, int classes) {
    zb_push(b, "logits");
    x = zb_reduce(b, "Mean", x, zoo_spatial_mask(b), false);
    if (dropout > 0) x = zb_dropout(b, x, dropout);
    zb_pop(b);
    int y = zb_dense(b, "fc", x, classes, NULL);
    return zb_xent_loss(b, y, labels, false);
}

int zoo_token_input(struct zb *b, int64_t seq, int *labels) {
    int64_t d[2] = {DP_DIM_BATCH, seq};
    return zb_input(b, 2, d, DP_DTYPE_I32, 2, d, labels, false);
}

int zoo_attention(struct zb *b, const char *name, int xq, int xkv, int heads, int mask,
                  bool fused, double drop) {
    zb_push(b, "%s", name);
    int64_t d = zb_dim(b, xq, -1), tq = zb_dim(b, xq, 1), tk = zb_dim(b, xkv, 1), dk = d / heads;
    int q, k, v;
    if (fused) {
        int parts[3];
        zb_split(b, zb_dense(b, "c_attn", xq, 3 * (int)d, NULL), 3, -1, parts);
        q = parts[0], k = parts[1], v = parts[2];
    } else {
        q = zb_dense(b, "query", xq, (int)d, NULL);
        k = zb_dense(b, "key", xkv, (int)d, NULL);
        v = zb_dense(b, "value", xkv, (int)d, NULL);
    }
    static const int perm[4] = {0, 2, 1, 3};
    int64_t qd[4] = {DP_DIM_BATCH, tq, heads, dk}, kd[4] = {DP_DIM_BATCH, tk, heads, dk};
    q = zb_transpose(b, zb_reshape(b, q, 4, qd), perm);
    k = zb_transpose(b, zb_reshape(b, k, 4, kd), perm);
    v = zb_transpose(b, zb_reshape(b, v, 4, kd), perm);
    int s = zb_matmul(b, q, k, false, true);
    s = zb_binary(b, "Mul", s, zb_const(b, "scale", 0, NULL, zb_compute_dtype(b)));
    if (mask >= 0) s = zb_binary(b, "AddV2", s, mask);
    int p = zb_softmax(b, s);
    if (drop > 0) p = zb_dropout(b, p, drop);
    int c = zb_transpose(b, zb_matmul(b, p, v, false, false), perm);
    int64_t cd[3] = {DP_DIM_BATCH, tq, d};
    c = zb_reshape(b, c, 3, cd);
    int y = zb_dense(b, fused ? "c_proj" : "output", c, (int)d, NULL);
    zb_pop(b);
    return y;
}

int zoo_ffn(struct zb *b, const char *name, int x, int inner, bool gelu, double drop) {
    zb_push(b, "%s", name);
    int64_t d = zb_dim(b, x, -1);
    int h = zb_dense(b, "intermediate", x, inner, gelu ? NULL : "Relu");
    if (gelu) h = zb_gelu(b, h);
    if (drop > 0 && !gelu) h = zb_dropout(b, h, drop);
    int y = zb_dense(b, "output", h, (int)d, NULL);
    zb_pop(b);
    return y;
}

int zoo_causal_mask(struct zb *b, int64_t t) {
    int64_t md[4] = {1, 1, t, t};
    return zb_const(b, "causal_mask", 4, md, zb_compute_dtype(b));
}

int zoo_embed_sinusoid(struct zb *b, const char *name, int table, int ids, int64_t t,
                          int64_t d) {
    zb_push(b, "%s", name);
    int x = zb_gather(b, table, ids);
    x = zb_binary(b, "Mul", x, zb_const(b, "sqrt_depth", 0, NULL, zb_compute_dtype(b)));
    int64_t pd[2] = {t, d};
    x = zb_binary(b, "AddV2", x, zb_const(b, "position_encoding", 2, pd, zb_compute_dtype(b)));
    x = zb_dropout(b, x, 0.1);
    zb_pop(b);
    return x;
}

/* One LSTM step: z = [x, h] W + b split into i, j, f, o; c = c f + i j; h = tanh(c) o. */
static int lstm_step(struct zb *b, int x, int *h, int *c, int w, int bias) {
    int xs[2] = {x, *h}, gates[4];
    int z = zb_bias_add(b, zb_matmul(b, zb_concat(b, xs, 2, 1), w, false, false), bias);
    zb_split(b, z, 4, 1, gates);
    int i = zb_unary(b, "Sigmoid", gates[0]);
    int j = zb_unary(b, "Tanh", gates[1]);
    int f = zb_unary(b, "Sigmoid", zb_binary(b, "AddV2", gates[2],
                                             zb_const(b, "forget_bias", 0, NULL,
                                                      zb_compute_dtype(b))));
    int o = zb_unary(b, "Sigmoid", gates[3]);
    *c = zb_binary(b, "AddV2", zb_binary(b, "Mul", *c, f), zb_binary(b, "Mul", i, j));
    *h = zb_binary(b, "Mul", zb_unary(b, "Tanh", *c), o);
    return *h;
}

/* One GRU step (TF1's GRUCell): r, u = sigmoid([x, h] Wg + bg); c = tanh([x, r h] Wc + bc);
 * h = u h + (1 - u) c. */
static int gru_step(struct zb *b, int x, int *h, int wg, int bg, int wc, int bc) {
    int xs[2] = {x, *h}, gates[2];
    int z = zb_bias_add(b, zb_matmul(b, zb_concat(b, xs, 2, 1), wg, false, false), bg);
    zb_split(b, zb_unary(b, "Sigmoid", z), 2, 1, gates);
    int rh[2] = {x, zb_binary(b, "Mul", gates[0], *h)};
    int cand = zb_unary(b, "Tanh", zb_bias_add(b, zb_matmul(b, zb_concat(b, rh, 2, 1), wc, false,
                                                            false), bc));
    int keep = zb_binary(b, "Mul", gates[1], *h);
    int one = zb_const(b, "one", 0, NULL, zb_compute_dtype(b));
    int take = zb_binary(b, "Mul", zb_binary(b, "Sub", one, gates[1]), cand);
    *h = zb_binary(b, "AddV2", keep, take);
    return *h;
}

int zoo_rnn_layer(struct zb *b, int layer, int *steps, int n, int64_t hidden, bool gru) {
    if (n < 1) return zb_fail(b, DP_ERR_INVALID, "%s: recurrent layer of %d steps", "rnn", n);
    int64_t in = zb_dim(b, steps[0], -1), hd[2] = {DP_DIM_BATCH, hidden};
    zb_push(b, "cell_%d", layer);
    int w, bias, wc = -1, bc = -1;
    if (gru) {
        int64_t wd[2] = {in + hidden, 2 * hidden}, bd = 2 * hidden;
        int64_t cd[2] = {in + hidden, hidden}, cb = hidden;
        zb_push(b, "gates");
        w = zb_variable(b, "kernel", 2, wd, "normal", true);
        bias = zb_variable(b, "bias", 1, &bd, "ones", true);
        zb_pop(b);
        zb_push(b, "candidate");
        wc = zb_variable(b, "kernel", 2, cd, "normal", true);
        bc = zb_variable(b, "bias", 1, &cb, "zeros", true);
        zb_pop(b);
    } else {
        int64_t wd[2] = {in + hidden, 4 * hidden}, bd = 4 * hidden;
        w = zb_variable(b, "kernel", 2, wd, "normal", true);
        bias = zb_variable(b, "bias", 1, &bd, "zeros", true);
    }
    int h = zb_const(b, "zeros", 2, hd, zb_compute_dtype(b));
    int c = gru ? -1 : zb_const(b, "zeros_1", 2, hd, zb_compute_dtype(b));
    for (int t = 0; t < n; t++) {
        zb_push(b, "step_%d", t);
        steps[t] = gru ? gru_step(b, steps[t], &h, w, bias, wc, bc)
                       : lstm_step(b, steps[t], &h, &c, w, bias);
        zb_pop(b);
    }
    zb_pop(b);
    return h;
}

int zoo_gen_act(struct zb *b, enum dp_gen_act act, int x) {
    if (act == DP_GEN_SWISH) {
        zb_push(b, "swish");
        int y = zb_binary(b, "Mul", x, zb_unary(b, "Sigmoid", x));
        zb_pop(b);
        return y;
    }
    return zb_unary(b, act == DP_GEN_RELU6 ? "Relu6" : "Relu", x);
}

