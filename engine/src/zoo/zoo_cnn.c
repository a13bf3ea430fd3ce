/* zoo_cnn.c: the image classifiers of the zoo (ImageNet, 1000 classes), written with the
 * builder's layers: AlexNet, VGG-11/13/16/19, ResNet-18/34/50/101/152 (v1.5) and Wide
 * ResNet-50-2, Inception-v3 and -v4, GoogLeNet, MobileNet-v1/v2 at several width multipliers,
 * DenseNet-121/169/201, SqueezeNet 1.0/1.1. Architectures follow their papers (Keras and
 * torchvision layouts); each returns the scalar training loss. The size variants of a family
 * share one parametric builder, so the zoo teaches how size and shape drive the labels. */
#include <stdio.h>
#include <string.h>

#include "zoo_models.h"
#include "zoo/zoo_layers.h"

#define CLASSES 1000

static const int64_t VALID[4] = {0, 0, 0, 0};

/* Fully connected classifier of AlexNet and VGG: fc 4096 (dropout) fc 4096 (dropout) fc. */
static int fc_head(struct zb *b, int x, int labels) {
    x = zoo_flatten(b, x);
    x = zb_dropout(b, zb_dense(b, "fc6", x, 4096, "Relu"), 0.5);
    x = zb_dropout(b, zb_dense(b, "fc7", x, 4096, "Relu"), 0.5);
    int y = zb_dense(b, "fc8", x, CLASSES, NULL);
    return zb_xent_loss(b, y, labels, false);
}

int zoo_alexnet(struct zb *b, int64_t input) {
    int labels;
    int x = zoo_image_input(b, input, &labels);
    zb_push(b, "alexnet");
    int64_t p2[4] = {2, 2, 2, 2};
    zb_push(b, "conv1");
    int64_t cin = 3, wd[4] = {11, 11, cin, 64}, c64 = 64;
    int w = zb_variable(b, "kernel", 4, wd, "normal", true);
    x = zb_conv(b, x, w, 4, p2, false);
    x = zb_unary(b, "Relu", zb_bias_add(b, x, zb_variable(b, "bias", 1, &c64, "zeros", true)));
    zb_pop(b);
    x = zb_pool(b, "MaxPool", x, 3, 2, VALID);
    x = zb_conv_layer(b, "conv2", x, 192, 5, 1, true, false, "Relu");
    x = zb_pool(b, "MaxPool", x, 3, 2, VALID);
    x = zb_conv_layer(b, "conv3", x, 384, 3, 1, true, false, "Relu");
    x = zb_conv_layer(b, "conv4", x, 256, 3, 1, true, false, "Relu");
    x = zb_conv_layer(b, "conv5", x, 256, 3, 1, true, false, "Relu");
    x = zb_pool(b, "MaxPool", x, 3, 2, VALID);
    int loss = fc_head(b, x, labels);
    zb_pop(b);
    return loss;
}

static int vgg(struct zb *b, int64_t input, const int *reps, const char *name) {
    static const int widths[5] = {64, 128, 256, 512, 512};
    int labels;
    int x = zoo_image_input(b, input, &labels);
    zb_push(b, "%s", name);
    for (int s = 0; s < 5; s++) {
        zb_push(b, "conv%d", s + 1);
        for (int r = 0; r < reps[s]; r++) {
            char nm[32];
            snprintf(nm, sizeof nm, "conv%d_%d", s + 1, r + 1);
            x = zb_conv_layer(b, nm, x, widths[s], 3, 1, true, false, "Relu");
        }
        zb_pop(b);
        x = zb_pool(b, "MaxPool", x, 2, 2, VALID);
    }
    int loss = fc_head(b, x, labels);
    zb_pop(b);
    return loss;
}

int zoo_vgg11(struct zb *b, int64_t input) {
    static const int reps[5] = {1, 1, 2, 2, 2};
    return vgg(b, input, reps, "vgg11");
}

int zoo_vgg13(struct zb *b, int64_t input) {
    static const int reps[5] = {2, 2, 2, 2, 2};
    return vgg(b, input, reps, "vgg13");
}

int zoo_vgg16(struct zb *b, int64_t input) {
    static const int reps[5] = {2, 2, 3, 3, 3};
    return vgg(b, input, reps, "vgg16");
}

int zoo_vgg19(struct zb *b, int64_t input) {
    static const int reps[5] = {2, 2, 4, 4, 4};
    return vgg(b, input, reps, "vgg19");
}

/* ResNet v1.5 bottleneck: 1x1, 3x3 (strided), 1x1 to 4 x filters, projection shortcut when
 * needed; the two inner convs have `inner` channels (filters, or twice that in Wide ResNet). */
static int bottleneck(struct zb *b, const char *name, int x, int filters, int inner, int stride,
                      bool project) {
    zb_push(b, "%s", name);
    int sc = project ? zb_conv_layer(b, "shortcut", x, 4 * filters, 1, stride, true, true, NULL)
                     : x;
    int y = zb_conv_layer(b, "conv1", x, inner, 1, 1, true, true, "Relu");
    y = zb_conv_layer(b, "conv2", y, inner, 3, stride, true, true, "Relu");
    y = zb_conv_layer(b, "conv3", y, 4 * filters, 1, 1, true, true, NULL);
    y = zb_unary(b, "Relu", zb_binary(b, "AddV2", y, sc));
    zb_pop(b);
    return y;
}

/* ResNet basic block (ResNet-18/34): two 3x3 convs, projection when the shape changes. */
static int basic_block(struct zb *b, const char *name, int x, int filters, int stride,
                       bool project) {
    zb_push(b, "%s", name);
    int sc = project ? zb_conv_layer(b, "shortcut", x, filters, 1, stride, true, true, NULL) : x;
    int y = zb_conv_layer(b, "conv1", x, filters, 3, stride, true, true, "Relu");
    y = zb_conv_layer(b, "conv2", y, filters, 3, 1, true, true, NULL);
    y = zb_unary(b, "Relu", zb_binary(b, "AddV2", y, sc));
    zb_pop(b);
    return y;
}

/* widen: the bottleneck's inner width over its base width (1, or 2 for Wide ResNet-50-2). */
static int resnet(struct zb *b, int64_t input, const int *blocks, const char *name, int widen) {
    bool basic = !strcmp(name, "resnet18") || !strcmp(name, "resnet34");
    int labels;
    int x = zoo_image_input(b, input, &labels);
    zb_push(b, "%s", name);
    x = zb_conv_layer(b, "conv1", x, 64, 7, 2, true, true, "Relu");
    x = zb_pool(b, "MaxPool", x, 3, 2, NULL);
    for (int s = 0; s < 4; s++) {
        for (int k = 0; k < blocks[s]; k++) {
            char nm[48]; /* room for two full ints: -Wformat-truncation at -O1 */
            snprintf(nm, sizeof nm, "block%d/unit%d", s + 1, k + 1);
            int stride = k == 0 && s > 0 ? 2 : 1;
            x = basic ? basic_block(b, nm, x, 64 << s, stride, k == 0 && s > 0)
                      : bottleneck(b, nm, x, 64 << s, widen * (64 << s), stride, k == 0);
        }
    }
    int loss = zoo_gap_head(b, x, labels, 0, CLASSES);
    zb_pop(b);
    return loss;
}

int zoo_resnet18(struct zb *b, int64_t input) {
    static const int blocks[4] = {2, 2, 2, 2};
    return resnet(b, input, blocks, "resnet18", 1);
}

int zoo_resnet34(struct zb *b, int64_t input) {
    static const int blocks[4] = {3, 4, 6, 3};
    return resnet(b, input, blocks, "resnet34", 1);
}

int zoo_resnet50(struct zb *b, int64_t input) {
    static const int blocks[4] = {3, 4, 6, 3};
    return resnet(b, input, blocks, "resnet50", 1);
}

int zoo_resnet101(struct zb *b, int64_t input) {
    static const int blocks[4] = {3, 4, 23, 3};
    return resnet(b, input, blocks, "resnet101", 1);
}

int zoo_resnet152(struct zb *b, int64_t input) {
    static const int blocks[4] = {3, 8, 36, 3};
    return resnet(b, input, blocks, "resnet152", 1);
}

int zoo_wide_resnet50_2(struct zb *b, int64_t input) {
    static const int blocks[4] = {3, 4, 6, 3};
    return resnet(b, input, blocks, "wide_resnet50_2", 2);
}

/* Inception-v3 (Keras layout): conv + BN + ReLU units. */
static int cbr(struct zb *b, const char *name, int x, int c, int kh, int kw, int stride,
               bool valid) {
    return zb_conv_layer2(b, name, x, c, kh, kw, stride, !valid, true, "Relu");
}

static int concat4(struct zb *b, int a, int c, int d, int e) {
    int xs[4] = {a, c, d, e};
    return zb_concat(b, xs, e >= 0 ? 4 : 3, zb_caxis(b));
}

static int inc_a(struct zb *b, const char *name, int x, int pool_features) {
    zb_push(b, "%s", name);
    int b1 = cbr(b, "branch1x1", x, 64, 1, 1, 1, false);
    int b5 = cbr(b, "branch5x5_1", x, 48, 1, 1, 1, false);
    b5 = cbr(b, "branch5x5_2", b5, 64, 5, 5, 1, false);
    int b3 = cbr(b, "branch3x3dbl_1", x, 64, 1, 1, 1, false);
    b3 = cbr(b, "branch3x3dbl_2", b3, 96, 3, 3, 1, false);
    b3 = cbr(b, "branch3x3dbl_3", b3, 96, 3, 3, 1, false);
    int bp = zb_pool(b, "AvgPool", x, 3, 1, NULL);
    bp = cbr(b, "branch_pool", bp, pool_features, 1, 1, 1, false);
    int y = concat4(b, b1, b5, b3, bp);
    zb_pop(b);
    return y;
}

static int inc_c(struct zb *b, const char *name, int x, int c7) {
    zb_push(b, "%s", name);
    int b1 = cbr(b, "branch1x1", x, 192, 1, 1, 1, false);
    int b7 = cbr(b, "branch7x7_1", x, c7, 1, 1, 1, false);
    b7 = cbr(b, "branch7x7_2", b7, c7, 1, 7, 1, false);
    b7 = cbr(b, "branch7x7_3", b7, 192, 7, 1, 1, false);
    int bd = cbr(b, "branch7x7dbl_1", x, c7, 1, 1, 1, false);
    bd = cbr(b, "branch7x7dbl_2", bd, c7, 7, 1, 1, false);
    bd = cbr(b, "branch7x7dbl_3", bd, c7, 1, 7, 1, false);
    bd = cbr(b, "branch7x7dbl_4", bd, c7, 7, 1, 1, false);
    bd = cbr(b, "branch7x7dbl_5", bd, 192, 1, 7, 1, false);
    int bp = zb_pool(b, "AvgPool", x, 3, 1, NULL);
    bp = cbr(b, "branch_pool", bp, 192, 1, 1, 1, false);
    int y = concat4(b, b1, b7, bd, bp);
    zb_pop(b);
    return y;
}

static int inc_e(struct zb *b, const char *name, int x) {
    zb_push(b, "%s", name);
    int b1 = cbr(b, "branch1x1", x, 320, 1, 1, 1, false);
    int b3 = cbr(b, "branch3x3_1", x, 384, 1, 1, 1, false);
    int b3a = cbr(b, "branch3x3_2a", b3, 384, 1, 3, 1, false);
    int b3b = cbr(b, "branch3x3_2b", b3, 384, 3, 1, 1, false);
    int xs[2] = {b3a, b3b};
    b3 = zb_concat(b, xs, 2, zb_caxis(b));
    int bd = cbr(b, "branch3x3dbl_1", x, 448, 1, 1, 1, false);
    bd = cbr(b, "branch3x3dbl_2", bd, 384, 3, 3, 1, false);
    int bda = cbr(b, "branch3x3dbl_3a", bd, 384, 1, 3, 1, false);
    int bdb = cbr(b, "branch3x3dbl_3b", bd, 384, 3, 1, 1, false);
    int ys[2] = {bda, bdb};
    bd = zb_concat(b, ys, 2, zb_caxis(b));
    int bp = zb_pool(b, "AvgPool", x, 3, 1, NULL);
    bp = cbr(b, "branch_pool", bp, 192, 1, 1, 1, false);
    int y = concat4(b, b1, b3, bd, bp);
    zb_pop(b);
    return y;
}

int zoo_inception3(struct zb *b, int64_t input) {
    int labels;
    int x = zoo_image_input(b, input, &labels);
    zb_push(b, "inception_v3");
    x = cbr(b, "conv1", x, 32, 3, 3, 2, true);
    x = cbr(b, "conv2", x, 32, 3, 3, 1, true);
    x = cbr(b, "conv3", x, 64, 3, 3, 1, false);
    x = zb_pool(b, "MaxPool", x, 3, 2, VALID);
    x = cbr(b, "conv4", x, 80, 1, 1, 1, true);
    x = cbr(b, "conv5", x, 192, 3, 3, 1, true);
    x = zb_pool(b, "MaxPool", x, 3, 2, VALID);
    x = inc_a(b, "mixed0", x, 32);
    x = inc_a(b, "mixed1", x, 64);
    x = inc_a(b, "mixed2", x, 64);
    zb_push(b, "mixed3");
    int b3 = cbr(b, "branch3x3", x, 384, 3, 3, 2, true);
    int bd = cbr(b, "branch3x3dbl_1", x, 64, 1, 1, 1, false);
    bd = cbr(b, "branch3x3dbl_2", bd, 96, 3, 3, 1, false);
    bd = cbr(b, "branch3x3dbl_3", bd, 96, 3, 3, 2, true);
    int bp = zb_pool(b, "MaxPool", x, 3, 2, VALID);
    x = concat4(b, b3, bd, bp, -1);
    zb_pop(b);
    x = inc_c(b, "mixed4", x, 128);
    x = inc_c(b, "mixed5", x, 160);
    x = inc_c(b, "mixed6", x, 160);
    x = inc_c(b, "mixed7", x, 192);
    zb_push(b, "mixed8");
    b3 = cbr(b, "branch3x3_1", x, 192, 1, 1, 1, false);
    b3 = cbr(b, "branch3x3_2", b3, 320, 3, 3, 2, true);
    int b7 = cbr(b, "branch7x7x3_1", x, 192, 1, 1, 1, false);
    b7 = cbr(b, "branch7x7x3_2", b7, 192, 1, 7, 1, false);
    b7 = cbr(b, "branch7x7x3_3", b7, 192, 7, 1, 1, false);
    b7 = cbr(b, "branch7x7x3_4", b7, 192, 3, 3, 2, true);
    bp = zb_pool(b, "MaxPool", x, 3, 2, VALID);
    x = concat4(b, b3, b7, bp, -1);
    zb_pop(b);
    x = inc_e(b, "mixed9", x);
    x = inc_e(b, "mixed10", x);
    int loss = zoo_gap_head(b, x, labels, 0, CLASSES);
    zb_pop(b);
    return loss;
}

/* Inception-v4 as tf_cnn_benchmarks builds it (models/inception_model.py: conv + BN + ReLU
 * units, no auxiliary head): the stem, 4 A blocks, reduction A, 7 B blocks, reduction B, 3 C
 * blocks, global average pooling. */
static int concat_n(struct zb *b, const int *xs, int n) { return zb_concat(b, xs, n, zb_caxis(b)); }

static int inc4_a(struct zb *b, const char *name, int x) {
    zb_push(b, "%s", name);
    int c[4];
    c[0] = cbr(b, "branch_pool", zb_pool(b, "AvgPool", x, 3, 1, NULL), 96, 1, 1, 1, false);
    c[1] = cbr(b, "branch1x1", x, 96, 1, 1, 1, false);
    c[2] = cbr(b, "branch3x3_2", cbr(b, "branch3x3_1", x, 64, 1, 1, 1, false), 96, 3, 3, 1, false);
    int d = cbr(b, "branch3x3dbl_1", x, 64, 1, 1, 1, false);
    d = cbr(b, "branch3x3dbl_2", d, 96, 3, 3, 1, false);
    c[3] = cbr(b, "branch3x3dbl_3", d, 96, 3, 3, 1, false);
    int y = concat_n(b, c, 4);
    zb_pop(b);
    return y;
}

static int inc4_b(struct zb *b, const char *name, int x) {
    zb_push(b, "%s", name);
    int c[4];
    c[0] = cbr(b, "branch_pool", zb_pool(b, "AvgPool", x, 3, 1, NULL), 128, 1, 1, 1, false);
    c[1] = cbr(b, "branch1x1", x, 384, 1, 1, 1, false);
    int s = cbr(b, "branch7x7_1", x, 192, 1, 1, 1, false);
    s = cbr(b, "branch7x7_2", s, 224, 1, 7, 1, false);
    c[2] = cbr(b, "branch7x7_3", s, 256, 7, 1, 1, false);
    int d = cbr(b, "branch7x7dbl_1", x, 192, 1, 1, 1, false);
    d = cbr(b, "branch7x7dbl_2", d, 192, 1, 7, 1, false);
    d = cbr(b, "branch7x7dbl_3", d, 224, 7, 1, 1, false);
    d = cbr(b, "branch7x7dbl_4", d, 224, 1, 7, 1, false);
    c[3] = cbr(b, "branch7x7dbl_5", d, 256, 7, 1, 1, false);
    int y = concat_n(b, c, 4);
    zb_pop(b);
    return y;
}

static int inc4_c(struct zb *b, const char *name, int x) {
    zb_push(b, "%s", name);
    int c[6];
    c[0] = cbr(b, "branch_pool", zb_pool(b, "AvgPool", x, 3, 1, NULL), 256, 1, 1, 1, false);
    c[1] = cbr(b, "branch1x1", x, 256, 1, 1, 1, false);
    int s = cbr(b, "branch3x3_1", x, 384, 1, 1, 1, false);
    c[2] = cbr(b, "branch3x3_2a", s, 256, 1, 3, 1, false);
    c[3] = cbr(b, "branch3x3_2b", s, 256, 3, 1, 1, false);
    int d = cbr(b, "branch3x3dbl_1", x, 384, 1, 1, 1, false);
    d = cbr(b, "branch3x3dbl_2", d, 448, 1, 3, 1, false);
    d = cbr(b, "branch3x3dbl_3", d, 512, 3, 1, 1, false);
    c[4] = cbr(b, "branch3x3dbl_4a", d, 256, 3, 1, 1, false);
    c[5] = cbr(b, "branch3x3dbl_4b", d, 256, 1, 3, 1, false);
    int y = concat_n(b, c, 6);
    zb_pop(b);
    return y;
}

int zoo_inception4(struct zb *b, int64_t input) {
    int labels, c[3];
    int x = zoo_image_input(b, input, &labels);
    zb_push(b, "inception_v4");
    x = cbr(b, "conv1", x, 32, 3, 3, 2, true);
    x = cbr(b, "conv2", x, 32, 3, 3, 1, true);
    x = cbr(b, "conv3", x, 64, 3, 3, 1, false);
    zb_push(b, "stem_a");
    c[0] = zb_pool(b, "MaxPool", x, 3, 2, VALID);
    c[1] = cbr(b, "conv", x, 96, 3, 3, 2, true);
    x = concat_n(b, c, 2);
    zb_pop(b);
    zb_push(b, "stem_b");
    c[0] = cbr(b, "conv_2", cbr(b, "conv_1", x, 64, 1, 1, 1, false), 96, 3, 3, 1, true);
    int s = cbr(b, "conv7_1", x, 64, 1, 1, 1, false);
    s = cbr(b, "conv7_2", s, 64, 7, 1, 1, false);
    s = cbr(b, "conv7_3", s, 64, 1, 7, 1, false);
    c[1] = cbr(b, "conv7_4", s, 96, 3, 3, 1, true);
    x = concat_n(b, c, 2);
    zb_pop(b);
    zb_push(b, "stem_c");
    c[0] = cbr(b, "conv", x, 192, 3, 3, 2, true);
    c[1] = zb_pool(b, "MaxPool", x, 3, 2, VALID);
    x = concat_n(b, c, 2);
    zb_pop(b);
    char nm[32];
    for (int i = 0; i < 4; i++) {
        snprintf(nm, sizeof nm, "block_a%d", i);
        x = inc4_a(b, nm, x);
    }
    zb_push(b, "reduction_a");
    c[0] = zb_pool(b, "MaxPool", x, 3, 2, VALID);
    c[1] = cbr(b, "branch3x3", x, 384, 3, 3, 2, true);
    s = cbr(b, "branch3x3dbl_1", x, 192, 1, 1, 1, false);
    s = cbr(b, "branch3x3dbl_2", s, 224, 3, 3, 1, false);
    c[2] = cbr(b, "branch3x3dbl_3", s, 256, 3, 3, 2, true);
    x = concat_n(b, c, 3);
    zb_pop(b);
    for (int i = 0; i < 7; i++) {
        snprintf(nm, sizeof nm, "block_b%d", i);
        x = inc4_b(b, nm, x);
    }
    zb_push(b, "reduction_b");
    c[0] = zb_pool(b, "MaxPool", x, 3, 2, VALID);
    c[1] = cbr(b, "branch3x3_2", cbr(b, "branch3x3_1", x, 192, 1, 1, 1, false), 192, 3, 3, 2,
               true);
    s = cbr(b, "branch7x7x3_1", x, 256, 1, 1, 1, false);
    s = cbr(b, "branch7x7x3_2", s, 256, 1, 7, 1, false);
    s = cbr(b, "branch7x7x3_3", s, 320, 7, 1, 1, false);
    c[2] = cbr(b, "branch7x7x3_4", s, 320, 3, 3, 2, true);
    x = concat_n(b, c, 3);
    zb_pop(b);
    for (int i = 0; i < 3; i++) {
        snprintf(nm, sizeof nm, "block_c%d", i);
        x = inc4_c(b, nm, x);
    }
    int loss = zoo_gap_head(b, x, labels, 0.2, CLASSES);
    zb_pop(b);
    return loss;
}

/* GoogLeNet (Inception v1): conv + bias + ReLU, LRN in the stem, no auxiliary heads. */
static int inc_v1(struct zb *b, const char *name, int x, int c1, int c3r, int c3, int c5r, int c5,
                  int pp) {
    zb_push(b, "%s", name);
    int b1 = zb_conv_layer(b, "branch1x1", x, c1, 1, 1, true, false, "Relu");
    int b3 = zb_conv_layer(b, "branch3x3_reduce", x, c3r, 1, 1, true, false, "Relu");
    b3 = zb_conv_layer(b, "branch3x3", b3, c3, 3, 1, true, false, "Relu");
    int b5 = zb_conv_layer(b, "branch5x5_reduce", x, c5r, 1, 1, true, false, "Relu");
    b5 = zb_conv_layer(b, "branch5x5", b5, c5, 5, 1, true, false, "Relu");
    int bp = zb_pool(b, "MaxPool", x, 3, 1, NULL);
    bp = zb_conv_layer(b, "pool_proj", bp, pp, 1, 1, true, false, "Relu");
    int y = concat4(b, b1, b3, b5, bp);
    zb_pop(b);
    return y;
}

int zoo_googlenet(struct zb *b, int64_t input) {
    int labels;
    int x = zoo_image_input(b, input, &labels);
    zb_push(b, "googlenet");
    x = zb_conv_layer(b, "conv1", x, 64, 7, 2, true, false, "Relu");
    x = zb_unary(b, "LRN", zb_pool(b, "MaxPool", x, 3, 2, NULL));
    x = zb_conv_layer(b, "conv2_reduce", x, 64, 1, 1, true, false, "Relu");
    x = zb_conv_layer(b, "conv2", x, 192, 3, 1, true, false, "Relu");
    x = zb_pool(b, "MaxPool", zb_unary(b, "LRN", x), 3, 2, NULL);
    x = inc_v1(b, "inception_3a", x, 64, 96, 128, 16, 32, 32);
    x = inc_v1(b, "inception_3b", x, 128, 128, 192, 32, 96, 64);
    x = zb_pool(b, "MaxPool", x, 3, 2, NULL);
    x = inc_v1(b, "inception_4a", x, 192, 96, 208, 16, 48, 64);
    x = inc_v1(b, "inception_4b", x, 160, 112, 224, 24, 64, 64);
    x = inc_v1(b, "inception_4c", x, 128, 128, 256, 24, 64, 64);
    x = inc_v1(b, "inception_4d", x, 112, 144, 288, 32, 64, 64);
    x = inc_v1(b, "inception_4e", x, 256, 160, 320, 32, 128, 128);
    x = zb_pool(b, "MaxPool", x, 3, 2, NULL);
    x = inc_v1(b, "inception_5a", x, 256, 160, 320, 32, 128, 128);
    x = inc_v1(b, "inception_5b", x, 384, 192, 384, 48, 128, 128);
    int loss = zoo_gap_head(b, x, labels, 0.4, CLASSES);
    zb_pop(b);
    return loss;
}

/* Keras' channel rounding under a width multiplier: to a multiple of 8, never below 90%. */
static int divisible8(double v) {
    int n = (int)(v + 4) / 8 * 8;
    if (n < 8) n = 8;
    return n < 0.9 * v ? n + 8 : n;
}

/* MobileNet-v1 (Keras): a strided 3x3 conv, then 13 depthwise-separable blocks (depthwise 3x3,
 * pointwise 1x1, each with BN and ReLU6); alpha scales every width. */
static int mobilenet_v1(struct zb *b, int64_t input, double alpha, const char *name) {
    static const int cfg[13][2] = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},
                                   {512, 2}, {512, 1}, {512, 1}, {512, 1}, {512, 1},
                                   {512, 1}, {1024, 2}, {1024, 1}};
    int labels;
    int x = zoo_image_input(b, input, &labels);
    zb_push(b, "%s", name);
    x = zb_conv_layer(b, "conv1", x, (int)(32 * alpha), 3, 2, true, true, "Relu6");
    for (int i = 0; i < 13; i++) {
        zb_push(b, "conv_block_%d", i + 1);
        x = zb_dwconv_layer(b, "depthwise", x, 3, cfg[i][1], "Relu6");
        x = zb_conv_layer(b, "pointwise", x, (int)(cfg[i][0] * alpha), 1, 1, true, true, "Relu6");
        zb_pop(b);
    }
    int loss = zoo_gap_head(b, x, labels, 1e-3, CLASSES);
    zb_pop(b);
    return loss;
}

int zoo_mobilenet_v1(struct zb *b, int64_t input) {
    return mobilenet_v1(b, input, 1.0, "mobilenet_v1");
}

int zoo_mobilenet_v1_050(struct zb *b, int64_t input) {
    return mobilenet_v1(b, input, 0.5, "mobilenet_v1_050");
}

/* MobileNet-v2 (Keras): alpha scales every width but the last conv's below 1. */
static int mobilenet_v2(struct zb *b, int64_t input, double alpha, const char *name) {
    static const int cfg[7][4] = {{1, 16, 1, 1},  {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                  {6, 96, 3, 1},  {6, 160, 3, 2}, {6, 320, 1, 1}};
    int labels;
    int x = zoo_image_input(b, input, &labels);
    zb_push(b, "%s", name);
    x = zb_conv_layer(b, "Conv", x, divisible8(32 * alpha), 3, 2, true, true, "Relu6");
    int id = 0;
    for (int s = 0; s < 7; s++) {
        int cout = divisible8(cfg[s][1] * alpha);
        for (int r = 0; r < cfg[s][2]; r++, id++) {
            int stride = r == 0 ? cfg[s][3] : 1;
            int64_t cin = zb_dim(b, x, zb_caxis(b));
            zb_push(b, "expanded_conv_%d", id);
            int y = x;
            if (cfg[s][0] != 1)
                y = zb_conv_layer(b, "expand", y, (int)cin * cfg[s][0], 1, 1, true, true, "Relu6");
            y = zb_dwconv_layer(b, "depthwise", y, 3, stride, "Relu6");
            y = zb_conv_layer(b, "project", y, cout, 1, 1, true, true, NULL);
            if (stride == 1 && cin == cout) y = zb_binary(b, "AddV2", y, x);
            zb_pop(b);
            x = y;
        }
    }
    x = zb_conv_layer(b, "Conv_1", x, alpha > 1 ? divisible8(1280 * alpha) : 1280, 1, 1, true,
                      true, "Relu6");
    int loss = zoo_gap_head(b, x, labels, 0, CLASSES);
    zb_pop(b);
    return loss;
}

int zoo_mobilenet_v2(struct zb *b, int64_t input) {
    return mobilenet_v2(b, input, 1.0, "mobilenet_v2");
}

int zoo_mobilenet_v2_050(struct zb *b, int64_t input) {
    return mobilenet_v2(b, input, 0.5, "mobilenet_v2_050");
}

int zoo_mobilenet_v2_140(struct zb *b, int64_t input) {
    return mobilenet_v2(b, input, 1.4, "mobilenet_v2_140");
}

static int densenet(struct zb *b, int64_t input, const int *blocks, const char *name) {
    const int growth = 32;
    int labels;
    int x = zoo_image_input(b, input, &labels);
    zb_push(b, "%s", name);
    x = zb_conv_layer(b, "conv1", x, 64, 7, 2, true, true, "Relu");
    x = zb_pool(b, "MaxPool", x, 3, 2, NULL);
    for (int s = 0; s < 4; s++) {
        for (int k = 0; k < blocks[s]; k++) {
            zb_push(b, "conv%d_block%d", s + 2, k + 1);
            int y = zb_bn_layer(b, "bn1", x, "Relu");
            y = zb_conv_layer(b, "conv1", y, 4 * growth, 1, 1, true, false, NULL);
            y = zb_bn_layer(b, "bn2", y, "Relu");
            y = zb_conv_layer(b, "conv2", y, growth, 3, 1, true, false, NULL);
            int xs[2] = {x, y};
            x = zb_concat(b, xs, 2, zb_caxis(b));
            zb_pop(b);
        }
        if (s < 3) {
            zb_push(b, "pool%d", s + 2);
            int64_t c = zb_dim(b, x, zb_caxis(b));
            x = zb_bn_layer(b, "bn", x, "Relu");
            x = zb_conv_layer(b, "conv", x, (int)c / 2, 1, 1, true, false, NULL);
            x = zb_pool(b, "AvgPool", x, 2, 2, VALID);
            zb_pop(b);
        }
    }
    x = zb_bn_layer(b, "bn", x, "Relu");
    int loss = zoo_gap_head(b, x, labels, 0, CLASSES);
    zb_pop(b);
    return loss;
}

int zoo_densenet121(struct zb *b, int64_t input) {
    static const int blocks[4] = {6, 12, 24, 16};
    return densenet(b, input, blocks, "densenet121");
}

int zoo_densenet169(struct zb *b, int64_t input) {
    static const int blocks[4] = {6, 12, 32, 32};
    return densenet(b, input, blocks, "densenet169");
}

int zoo_densenet201(struct zb *b, int64_t input) {
    static const int blocks[4] = {6, 12, 48, 32};
    return densenet(b, input, blocks, "densenet201");
}

static int fire(struct zb *b, const char *name, int x, int s, int e) {
    zb_push(b, "%s", name);
    int sq = zb_conv_layer(b, "squeeze1x1", x, s, 1, 1, true, false, "Relu");
    int e1 = zb_conv_layer(b, "expand1x1", sq, e, 1, 1, true, false, "Relu");
    int e3 = zb_conv_layer(b, "expand3x3", sq, e, 3, 1, true, false, "Relu");
    int xs[2] = {e1, e3};
    int y = zb_concat(b, xs, 2, zb_caxis(b));
    zb_pop(b);
    return y;
}

/* torchvision's max pooling with ceil_mode: a last window that runs past the end of x's side
 * counts (padded at the bottom and right, with windows that start inside). */
static int ceil_pool(struct zb *b, int x, int k, int stride) {
    int64_t h = zb_dim(b, x, zb_caxis(b) == 1 ? 2 : 1), out = (h - k + stride - 1) / stride + 1;
    int64_t extra = (out - 1) * stride + k - h, pads[4] = {0, extra, 0, extra};
    return zb_pool(b, "MaxPool", x, k, stride, pads);
}

/* SqueezeNet: 1.0 (a 7x7 stem of 96, pooling after fire4 and fire8) or 1.1 (a 3x3 stem of 64,
 * pooling after fire3 and fire5: the same fires at 2.4x fewer FLOPs); torchvision's pooling
 * rounds up (at 224 px: 1.0's second pooling gives 27 x 27, not 26). */
static int squeezenet(struct zb *b, int64_t input, bool v11) {
    static const int fires[8][2] = {{16, 64},  {16, 64},  {32, 128}, {32, 128},
                                    {48, 192}, {48, 192}, {64, 256}, {64, 256}};
    int labels;
    int x = zoo_image_input(b, input, &labels);
    zb_push(b, "%s", v11 ? "squeezenet1_1" : "squeezenet");
    x = zb_conv_layer(b, "conv1", x, v11 ? 64 : 96, v11 ? 3 : 7, 2, false, false, "Relu");
    x = ceil_pool(b, x, 3, 2);
    for (int i = 0; i < 8; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "fire%d", i + 2);
        x = fire(b, nm, x, fires[i][0], fires[i][1]);
        if (i == (v11 ? 1 : 2) || i == (v11 ? 3 : 6)) x = ceil_pool(b, x, 3, 2);
    }
    x = zb_dropout(b, x, 0.5);
    x = zb_conv_layer(b, "conv10", x, CLASSES, 1, 1, true, false, "Relu");
    zb_push(b, "logits");
    x = zb_reduce(b, "Mean", x, zoo_spatial_mask(b), false);
    zb_pop(b);
    int loss = zb_xent_loss(b, x, labels, false);
    zb_pop(b);
    return loss;
}

int zoo_squeezenet(struct zb *b, int64_t input) { return squeezenet(b, input, false); }
int zoo_squeezenet1_1(struct zb *b, int64_t input) { return squeezenet(b, input, true); }
