/* gen_cnn.c: generated CNNs: a stem, stages of one block kind each (plain, residual, bottleneck,
 * inverted residual, depthwise separable, grouped, dense; squeeze-excite optional), global
 * average pooling (or AlexNet's and VGG's flattened map and two wide layers) and a classifier.
 * Conv + BN layers come from the zoo's builder, so the ops are those of the zoo's ResNets,
 * MobileNets and DenseNets; a folded CNN has a bias where BN was (an eval-mode export's graph). */
#include <stdio.h>

#include "zoo/gen_impl.h"

static int channels(const struct zb *b, int x) { return (int)zb_dim(b, x, zb_caxis(b)); }

/* What a CNN's blocks share: its activation and whether BN is folded. */
struct cnn_kind {
    enum dp_gen_act act;
    bool bn;
};

static int conv_bn(struct zb *b, struct cnn_kind ck, const char *name, int x, int cout, int k,
                   int stride) {
    return zb_conv_layer(b, name, x, cout, k, stride, true, ck.bn, NULL);
}

static int conv_bn_act(struct zb *b, struct cnn_kind ck, const char *name, int x, int cout, int k,
                       int stride) {
    return zoo_gen_act(b, ck.act, conv_bn(b, ck, name, x, cout, k, stride));
}

/* BN of x's channels, or (folded) a bias. */
static int norm(struct zb *b, struct cnn_kind ck, const char *name, int x) {
    if (ck.bn) return zb_bn_layer(b, name, x, NULL);
    int64_t c = zb_dim(b, x, zb_caxis(b));
    zb_push(b, "%s", name);
    int y = zb_bias_add(b, x, zb_variable(b, "bias", 1, &c, "zeros", true));
    zb_pop(b);
    return y;
}

/* A depthwise k x k convolution and its BN (or bias) and activation. */
static int dwconv_act(struct zb *b, struct cnn_kind ck, const char *name, int x, int k,
                      int stride) {
    if (ck.bn) return zoo_gen_act(b, ck.act, zb_dwconv_layer(b, name, x, k, stride, NULL));
    zb_push(b, "%s", name);
    int64_t wd[4] = {k, k, channels(b, x), 1};
    int w = zb_variable(b, "depthwise_kernel", 4, wd, "normal", true);
    int y = norm(b, ck, "bias", zb_conv(b, x, w, stride, NULL, true));
    zb_pop(b);
    return zoo_gen_act(b, ck.act, y);
}

/* Squeeze-excite: the channel means through a bottleneck of c/4 (at least 8) channels and a
 * sigmoid scale the input per channel. */
static int squeeze_excite(struct zb *b, int x) {
    int c = channels(b, x), r = c / 4 < 8 ? 8 : c / 4;
    zb_push(b, "se");
    int s = zb_reduce(b, "Mean", x, zoo_spatial_mask(b), true);
    s = zb_conv_layer(b, "reduce", s, r, 1, 1, true, false, "Relu");
    s = zb_unary(b, "Sigmoid", zb_conv_layer(b, "expand", s, c, 1, 1, true, false, NULL));
    int y = zb_binary(b, "Mul", x, s);
    zb_pop(b);
    return y;
}

/* A k x k convolution split into `groups` along the channels (no bias), concatenated, then BN. */
static int grouped_conv(struct zb *b, struct cnn_kind ck, const char *name, int x, int cout, int k,
                        int stride, int groups) {
    int parts[8], outs[8];
    int64_t cin = channels(b, x);
    zb_push(b, "%s", name);
    zb_split(b, x, groups, zb_caxis(b), parts);
    for (int g = 0; g < groups; g++) {
        zb_push(b, "group_%d", g);
        int64_t wd[4] = {k, k, cin / groups, cout / groups};
        int w = zb_variable(b, "kernel", 4, wd, "normal", true);
        outs[g] = zb_conv(b, parts[g], w, stride, NULL, false);
        zb_pop(b);
    }
    int y = norm(b, ck, "BatchNorm", zb_concat(b, outs, groups, zb_caxis(b)));
    zb_pop(b);
    return y;
}

/* The shortcut of a residual block: x, or a 1 x 1 conv + BN when the shape changes. */
static int shortcut(struct zb *b, struct cnn_kind ck, int x, int cout, int stride) {
    return stride != 1 || channels(b, x) != cout ? conv_bn(b, ck, "shortcut", x, cout, 1, stride)
                                                 : x;
}

static int block(struct zb *b, const struct dp_gen_stage *st, int x, int stride,
                 struct cnn_kind ck) {
    enum dp_gen_act act = ck.act;
    int w = st->width, k = st->kernel, y;
    switch (st->block) {
    case DP_GEN_PLAIN: return conv_bn_act(b, ck, "conv", x, w, k, stride);
    case DP_GEN_RESIDUAL: {
        int sc = shortcut(b, ck, x, w, stride);
        y = conv_bn_act(b, ck, "conv1", x, w, k, stride);
        y = conv_bn(b, ck, "conv2", y, w, k, 1);
        if (st->se) y = squeeze_excite(b, y);
        return zoo_gen_act(b, act, zb_binary(b, "AddV2", y, sc));
    }
    case DP_GEN_BOTTLENECK:
    case DP_GEN_GROUPED: {
        int sc = shortcut(b, ck, x, w, stride);
        y = conv_bn_act(b, ck, "conv1", x, st->inner, 1, 1);
        y = st->block == DP_GEN_GROUPED
                ? zoo_gen_act(b, act,
                              grouped_conv(b, ck, "conv2", y, st->inner, k, stride, st->groups))
                : conv_bn_act(b, ck, "conv2", y, st->inner, k, stride);
        y = conv_bn(b, ck, "conv3", y, w, 1, 1);
        if (st->se) y = squeeze_excite(b, y);
        return zoo_gen_act(b, act, zb_binary(b, "AddV2", y, sc));
    }
    case DP_GEN_INVERTED: {
        int cin = channels(b, x);
        y = st->expand != 1 ? conv_bn_act(b, ck, "expand", x, cin * st->expand, 1, 1) : x;
        y = dwconv_act(b, ck, "depthwise", y, k, stride);
        if (st->se) y = squeeze_excite(b, y);
        y = conv_bn(b, ck, "project", y, w, 1, 1);
        return stride == 1 && cin == w ? zb_binary(b, "AddV2", y, x) : y;
    }
    case DP_GEN_SEPARABLE:
        y = dwconv_act(b, ck, "depthwise", x, k, stride);
        return conv_bn_act(b, ck, "pointwise", y, w, 1, 1);
    case DP_GEN_DENSE: {
        y = ck.bn ? zb_bn_layer(b, "bn1", x, NULL) : x;
        y = zb_conv_layer(b, "conv1", zoo_gen_act(b, act, y), 4 * w, 1, 1, true, false, NULL);
        y = zoo_gen_act(b, act, ck.bn ? zb_bn_layer(b, "bn2", y, NULL) : y);
        y = zb_conv_layer(b, "conv2", y, w, k, 1, true, false, NULL);
        int xs[2] = {x, y};
        return zb_concat(b, xs, 2, zb_caxis(b));
    }
    default: return zb_fail(b, DP_ERR_INVALID, "unknown block kind %d", (int)st->block);
    }
}

/* DenseNet's transition: BN (none when folded), act, a 1 x 1 conv to half the channels (at
 * least 8), 2 x 2 average pooling. */
static int transition(struct zb *b, int x, struct cnn_kind ck) {
    int c = channels(b, x) / 2;
    zb_push(b, "transition");
    x = zoo_gen_act(b, ck.act, ck.bn ? zb_bn_layer(b, "bn", x, NULL) : x);
    x = zb_conv_layer(b, "conv", x, c < 8 ? 8 : c, 1, 1, true, false, NULL);
    x = zb_pool(b, "AvgPool", x, 2, 2, NULL);
    zb_pop(b);
    return x;
}

int zoo_gen_cnn(struct zb *b, const struct dp_gen_cnn *c) {
    int labels;
    int x = zoo_image_input(b, c->input, &labels);
    zb_push(b, "cnn");
    struct cnn_kind ck = {c->act, !c->folded};
    x = conv_bn_act(b, ck, "stem", x, c->stem_width, c->stem_kernel, c->stem_stride);
    if (c->stem_pool) x = zb_pool(b, "MaxPool", x, 3, 2, NULL);
    for (int s = 0; s < c->n_stages; s++) {
        const struct dp_gen_stage *st = &c->stage[s];
        zb_push(b, "stage%d", s + 1);
        int stride = st->stride;
        if (stride == 2 && (st->pool || st->block == DP_GEN_DENSE)) {
            x = st->pool ? zb_pool(b, "MaxPool", x, 2, 2, NULL) : transition(b, x, ck);
            stride = 1;
        }
        for (int r = 0; r < st->depth; r++) {
            zb_push(b, "block%d", r + 1);
            x = block(b, st, x, r == 0 ? stride : 1, ck);
            zb_pop(b);
        }
        zb_pop(b);
    }
    zb_push(b, "logits");
    if (c->flat_pool > 0) {
        static const int64_t valid[4] = {0, 0, 0, 0};
        if (c->flat_pool > 1) x = zb_pool(b, "AvgPool", x, c->flat_pool, c->flat_pool, valid);
        x = zoo_flatten(b, x);
    } else {
        x = zb_reduce(b, "Mean", x, zoo_spatial_mask(b), false);
    }
    zb_pop(b);
    if (c->flat_pool > 0) {
        x = zoo_gen_act(b, c->act, zb_dense(b, "hidden0", x, c->head_width, NULL));
        if (c->dropout > 0) x = zb_dropout(b, x, c->dropout);
    }
    if (c->head_width > 0)
        x = zoo_gen_act(b, c->act, zb_dense(b, "hidden", x, c->head_width, NULL));
    if (c->dropout > 0) x = zb_dropout(b, x, c->dropout);
    int y = zb_dense(b, "fc", x, c->classes, NULL);
    int loss = zb_xent_loss(b, y, labels, false);
    zb_pop(b);
    return loss;
}
