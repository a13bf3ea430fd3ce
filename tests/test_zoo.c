/* test_zoo.c: the model zoo and the cost formulas: every model builds, op counts in range, every
 * GPU op has a shape, gradients mirror the forward ops, FLOPs of known layers by hand, parameter
 * counts of known models, determinism, and the options (optimizer, precision, batch, layout). */
#include <stdio.h>
#include <string.h>

#include "dp/cost.h"
#include "dp/graph_io.h"
#include "dp/zoo.h"
#include "graph_check.h"
#include "test.h"

static struct dp_graph *build(const char *name, enum dp_optimizer opt, enum dp_precision prec,
                              int64_t batch, int64_t input) {
    struct dp_zoo_opts o;
    dp_zoo_opts_default(&o);
    o.optimizer = opt;
    o.precision = prec;
    o.batch = batch;
    o.input = input;
    struct dp_graph *g = NULL;
    struct dp_error err = {0};
    if (dp_zoo_build(name, &o, &g, &err)) fprintf(stderr, "build %s: %s\n", name, err.msg);
    return g;
}

static int count_op(const struct dp_graph *g, const char *op) {
    int n = 0;
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) n += !strcmp(dp_graph_node(g, i)->op, op);
    return n;
}

static const struct dp_node *node(const struct dp_graph *g, const char *name) {
    int i = dp_graph_find(g, name);
    if (i < 0) fprintf(stderr, "no node '%s'\n", name);
    return i < 0 ? NULL : dp_graph_node(g, (size_t)i);
}

static void test_all_models(void) {
    /* Node counts of the order of a real TF training graph. */
    static const struct { const char *name; size_t lo, hi; } ranges[] = {
        {"alexnet", 150, 2000},     {"vgg16", 300, 3000},        {"vgg19", 350, 3500},
        {"resnet50", 1500, 20000},  {"resnet101", 3000, 40000},  {"resnet152", 4500, 60000},
        {"inception3", 2500, 40000}, {"googlenet", 800, 15000},  {"mobilenet_v2", 1200, 20000},
        {"densenet121", 4000, 60000}, {"squeezenet", 400, 6000}, {"lstm_lm", 1000, 30000},
        {"transformer_base", 3000, 60000}, {"bert_base", 2500, 50000}, {"gpt2_small", 2000, 50000},
        {"resnet18", 700, 10000},   {"resnet34", 1200, 15000},   {"bert_large", 5000, 90000},
        {"gpt2_medium", 4000, 90000},
        {"vgg11", 250, 2500},       {"vgg13", 280, 2800},        {"wide_resnet50_2", 1500, 20000},
        {"mobilenet_v1", 700, 12000}, {"mobilenet_v1_050", 700, 12000},
        {"mobilenet_v2_050", 1200, 20000}, {"mobilenet_v2_140", 1200, 20000},
        {"densenet169", 5500, 80000}, {"densenet201", 6500, 95000},
        {"squeezenet1_1", 400, 6000}, {"lstm_lm_small", 600, 20000},
        {"lstm_lm_large", 1000, 30000}, {"transformer_big", 3000, 60000},
        {"bert_tiny", 500, 12000},  {"bert_mini", 900, 20000},   {"bert_small", 900, 20000},
        {"bert_medium", 1600, 35000}, {"distilgpt2", 1000, 25000}, {"gpt2_large", 6000, 120000},
        {"inception4", 4000, 60000}, {"bert_base_squad", 2500, 50000},
        {"bert_large_squad", 5000, 90000}, {"gnmt", 3000, 60000},
        {"transformer_xl_base", 3000, 60000},
    };
    CHECK(dp_zoo_count() == sizeof ranges / sizeof ranges[0]);
    for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++) {
        CHECK(dp_zoo_find(ranges[k].name) != NULL);
        struct dp_graph *g = build(ranges[k].name, DP_OPT_MOMENTUM, DP_PREC_FP32, 0, 0);
        CHECK(g != NULL);
        if (!g) continue;
        size_t n = dp_graph_n_nodes(g);
        if (n < ranges[k].lo || n > ranges[k].hi)
            fprintf(stderr, "%s: %zu nodes, expected [%zu, %zu]\n", ranges[k].name, n,
                    ranges[k].lo, ranges[k].hi);
        CHECK(n >= ranges[k].lo && n <= ranges[k].hi);
        /* Every GPU op but NoOp has a shape; every input is a valid node; the input pipeline
         * is on the CPU; flops and bytes are filled. */
        struct graph_check gc = graph_check(g);
        CHECK(gc.unshaped == 0 && gc.bad_inputs == 0 && gc.uncosted == 0);
        CHECK(gc.cpu_iter == 1);
        CHECK(count_op(g, "ApplyMomentum") > 0);
        CHECK(dp_graph_find(g, "train_op") >= 0);
        CHECK(!strcmp(dp_graph_framework(g), "tensorflow"));
        dp_graph_free(g);
    }
}

static void test_gradients_mirror_forward(void) {
    struct dp_graph *g = build("resnet50", DP_OPT_MOMENTUM, DP_PREC_FP32, 32, 224);
    if (!g) { CHECK(0); return; }
    int conv = count_op(g, "Conv2D");
    CHECK(conv == 53);
    CHECK(count_op(g, "Conv2DBackpropFilter") == conv);
    CHECK(count_op(g, "Conv2DBackpropInput") == conv - 1); /* not into the images */
    CHECK(count_op(g, "FusedBatchNormGradV3") == count_op(g, "FusedBatchNormV3"));
    CHECK(count_op(g, "ReluGrad") == count_op(g, "Relu"));
    CHECK(count_op(g, "MaxPoolGrad") == 1);
    CHECK(count_op(g, "SoftmaxCrossEntropyWithLogits") == 1);
    CHECK(count_op(g, "AddN") >= 16); /* residual fan-outs */
    CHECK(count_op(g, "BiasAddGrad") == 1);
    CHECK(count_op(g, "ApplyMomentum") == 53 + 2 * 53 + 2); /* kernels, gamma/beta, fc */
    CHECK(count_op(g, "AssignSub") == 2 * 53);              /* BN moving averages */

    /* FLOPs of known layers, by hand: 3x3 conv 64->64 on 56x56 at batch 32. */
    const struct dp_node *c = node(g, "resnet50/block1/unit1/conv2/Conv2D");
    CHECK(c && c->n_dims == 4 && c->dims[0] == DP_DIM_BATCH && c->dims[1] == 56 &&
          c->dims[3] == 64);
    if (c) CHECK_NEAR(c->flops, 2.0 * 32 * 56 * 56 * 64 * 64 * 9, 1);
    CHECK_NEAR(dp_cost_conv2d_flops(32, 56, 56, 64, 64, 3, 3), 2.0 * 32 * 56 * 56 * 64 * 64 * 9, 1);
    c = node(g, "gradients/resnet50/block1/unit1/conv2/Conv2D_grad/Conv2DBackpropFilter");
    if (c) CHECK_NEAR(c->flops, 2.0 * 32 * 56 * 56 * 64 * 64 * 9, 1);
    c = node(g, "gradients/resnet50/block1/unit1/conv2/Conv2D_grad/Conv2DBackpropInput");
    if (c) CHECK_NEAR(c->flops, 2.0 * 32 * 56 * 56 * 64 * 64 * 9, 1);
    /* The 7x7/2 stem: 224 -> 112, 3 -> 64 channels. */
    c = node(g, "resnet50/conv1/Conv2D");
    if (c) CHECK_NEAR(c->flops, 2.0 * 32 * 112 * 112 * 64 * 3 * 49, 1);
    /* fc 2048 -> 1000. */
    c = node(g, "resnet50/fc/MatMul");
    if (c) CHECK_NEAR(c->flops, dp_cost_matmul_flops(32, 1000, 2048), 1);
    c = node(g, "gradients/resnet50/fc/MatMul_grad/MatMul_1");
    if (c) CHECK(c->n_dims == 2 && c->dims[0] == 2048 && c->dims[1] == 1000);
    if (c) CHECK_NEAR(c->flops, dp_cost_matmul_flops(2048, 1000, 32), 1);
    /* Phases: the backward pass costs about twice the forward one. */
    double ph[DP_PHASE_COUNT] = {0};
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++)
        ph[dp_node_phase(dp_graph_node(g, i))] += dp_graph_node(g, i)->flops;
    CHECK(ph[DP_PHASE_INIT] == 0 && ph[DP_PHASE_FORWARD] > 0);
    CHECK(ph[DP_PHASE_BACKWARD] > 1.8 * ph[DP_PHASE_FORWARD] &&
          ph[DP_PHASE_BACKWARD] < 2.2 * ph[DP_PHASE_FORWARD]);
    CHECK(dp_node_phase(node(g, "resnet50/conv1/kernel/Assign")) == DP_PHASE_INIT);
    CHECK(dp_node_phase(node(g, "IteratorGetNext")) == DP_PHASE_INPUT);
    CHECK(dp_node_phase(node(g, "resnet50/conv1/BatchNorm/AssignMovingAvg/AssignSub")) ==
          DP_PHASE_UPDATE);
    CHECK(dp_node_phase(node(g, "Momentum/update_resnet50/fc/bias/ApplyMomentum")) ==
          DP_PHASE_UPDATE);
    CHECK(!strcmp(dp_op_phase_name(DP_PHASE_BACKWARD), "backward"));
    /* The forward pass of ResNet-50 is ~4.1 GMACs per 224x224 image; training ~3x. */
    double per_image = dp_cost_total_flops(g, 1);
    CHECK(per_image > 3 * 2 * 3.8e9 && per_image < 3 * 2 * 4.4e9);
    /* FLOPs scale with the batch. */
    CHECK_NEAR(dp_cost_total_flops(g, 64) / dp_cost_total_flops(g, 32), 2.0, 0.01);
    dp_graph_free(g);
    /* SqueezeNet's forward convolutions at 224 x 224 are torchvision's (its pooling rounds up:
     * 1.0 818.9 M MACs, 1.1 349.2 M, counted with torch 1.13 forward hooks). */
    static const struct { const char *name; double macs; } sq[] = {{"squeezenet", 818.924576e6},
                                                                    {"squeezenet1_1", 349.151936e6}};
    for (int k = 0; k < 2; k++) {
        g = build(sq[k].name, DP_OPT_MOMENTUM, DP_PREC_FP32, 8, 224);
        double macs = 0;
        for (size_t i = 0; g && i < dp_graph_n_nodes(g); i++) {
            const struct dp_node *n = dp_graph_node(g, i);
            if (!strcmp(n->op, "Conv2D") && dp_node_phase(n) == DP_PHASE_FORWARD)
                macs += n->flops / 2 / 8;
        }
        CHECK_NEAR(macs, sq[k].macs, 1e-6 * sq[k].macs);
        dp_graph_free(g);
    }
}

static void test_params(void) {
    static const struct { const char *name; double want, tol; bool trainable; } known[] = {
        {"resnet50", 25.557e6, 0.02, true},   {"vgg16", 138.357544e6, 0.001, true},
        {"vgg19", 143.667240e6, 0.001, true}, {"alexnet", 61.1e6, 0.02, true},
        {"bert_base", 110e6, 0.03, true},     {"gpt2_small", 124.439808e6, 0.001, true},
        {"mobilenet_v2", 3.5e6, 0.03, true},  {"densenet121", 7.98e6, 0.03, true},
        {"squeezenet", 1.248e6, 0.02, true},  {"inception3", 23.8e6, 0.03, true},
        {"resnet101", 44.5e6, 0.02, true},    {"resnet152", 60.2e6, 0.02, true},
        {"lstm_lm", 19.8e6, 0.03, true},      {"resnet18", 11.689512e6, 0.001, true},
        {"resnet34", 21.797672e6, 0.001, true}, {"bert_large", 335e6, 0.03, true},
        {"gpt2_medium", 354.823168e6, 0.001, true},
        /* The size variants (torchvision, Keras with BN statistics: trainable false, the BERT
         * miniatures' README, Zaremba et al.'s PTB large, Hugging Face's distilgpt2). */
        {"vgg11", 132.863336e6, 0.001, true}, {"vgg13", 133.047848e6, 0.001, true},
        {"wide_resnet50_2", 68.883240e6, 0.001, true}, {"mobilenet_v1", 4.253864e6, 0.001, false},
        {"mobilenet_v1_050", 1.342536e6, 0.001, false},
        {"mobilenet_v2_050", 1.987224e6, 0.001, false},
        {"mobilenet_v2_140", 6.156712e6, 0.001, false}, {"densenet169", 14.149480e6, 0.03, true},
        {"densenet201", 20.013928e6, 0.03, true}, {"squeezenet1_1", 1.235496e6, 0.001, true},
        {"lstm_lm_large", 66e6, 0.01, true},  {"bert_tiny", 4.4e6, 0.03, true},
        {"bert_mini", 11.3e6, 0.03, true},    {"bert_small", 29.1e6, 0.03, true},
        {"bert_medium", 41.7e6, 0.03, true},  {"distilgpt2", 81.912576e6, 0.001, true},
        {"gpt2_large", 774.030080e6, 0.001, true},
        /* The published runs' models: TF-slim's inception_v4 (1001 classes: 42.68M); Hugging
         * Face's BertForQuestionAnswering (bert-base/large-uncased: 108,893,186 and
         * 334,094,338); DeepLearningExamples' GNMT v2 (4+4 layers of 1024, vocabulary 32,320,
         * two LSTM biases as PyTorch keeps them), counted by hand from their modules, and
         * Transformer-XL base as the published runs' logs print it (#params 191,948,759:
         * vocabulary 267,735, one softmax tied to the embedding, adaptive=False). */
        {"inception4", 42.68e6, 0.003, true}, {"bert_base_squad", 108.893186e6, 1e-6, true},
        {"bert_large_squad", 334.094338e6, 1e-6, true}, {"gnmt", 160.671297e6, 1e-6, true},
        {"transformer_xl_base", 191.948759e6, 1e-9, true},
    };
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        struct dp_graph *g = build(known[k].name, DP_OPT_SGD, DP_PREC_FP32, 8, 0);
        if (!g) { CHECK(0); continue; }
        double p = (double)dp_graph_param_count(g, known[k].trainable);
        if (fabs(p / known[k].want - 1) > known[k].tol)
            fprintf(stderr, "%s: %.0f params, expected %.0f\n", known[k].name, p, known[k].want);
        CHECK(fabs(p / known[k].want - 1) <= known[k].tol);
        /* Optimizer slots carry no params: Adam gives the same count. */
        struct dp_graph *a = build(known[k].name, DP_OPT_ADAM, DP_PREC_FP32, 8, 0);
        CHECK(a && dp_graph_param_count(a, false) == dp_graph_param_count(g, false));
        dp_graph_free(a);
        dp_graph_free(g);
    }
    /* By hand where no paper gives a count: PTB small (embedding, 2 LSTM cells of 200 units,
     * softmax). */
    struct dp_graph *s = build("lstm_lm_small", DP_OPT_SGD, DP_PREC_FP32, 8, 0);
    CHECK(s && dp_graph_param_count(s, true) ==
                   10000 * 200 + 2 * (400 * 800 + 800) + 200 * 10000 + 10000);
    dp_graph_free(s);
    /* BN moving statistics are variables but not trainable. */
    struct dp_graph *g = build("resnet50", DP_OPT_SGD, DP_PREC_FP32, 8, 0);
    if (g) CHECK(dp_graph_param_count(g, false) > dp_graph_param_count(g, true));
    dp_graph_free(g);
}

static void test_known_layers_transformer(void) {
    struct dp_graph *g = build("bert_base", DP_OPT_ADAM, DP_PREC_FP32, 16, 128);
    if (!g) { CHECK(0); return; }
    const struct dp_node *q = node(g, "bert/encoder/layer_0/attention/self/query/MatMul");
    CHECK(q && q->n_dims == 3 && q->dims[0] == DP_DIM_BATCH && q->dims[1] == 128 &&
          q->dims[2] == 768);
    if (q) CHECK_NEAR(q->flops, dp_cost_matmul_flops(16 * 128, 768, 768), 1);
    /* Attention scores: [B, 12, 128, 128] = Q.K^T over 64 dims per head. */
    const struct dp_node *s = node(g, "bert/encoder/layer_0/attention/self/BatchMatMulV2");
    CHECK(s && s->n_dims == 4 && s->dims[1] == 12 && s->dims[2] == 128 && s->dims[3] == 128);
    if (s) CHECK_NEAR(s->flops, 2.0 * 16 * 12 * 128 * 128 * 64, 1);
    CHECK(count_op(g, "ApplyAdam") > 190);
    CHECK(dp_graph_find(g, "beta1_power") >= 0 && dp_graph_find(g, "beta2_power") >= 0);
    CHECK(count_op(g, "Softmax") == 12 && count_op(g, "TanhGrad") >= 12);
    dp_graph_free(g);
    /* GPT-2: a causal model with a tied output layer: 2 x B x T x 768 x 50257. */
    g = build("gpt2_small", DP_OPT_SGD, DP_PREC_FP32, 4, 256);
    if (!g) { CHECK(0); return; }
    const struct dp_node *l = node(g, "model/MatMul");
    CHECK(l && l->n_dims == 3 && l->dims[2] == 50257);
    if (l) CHECK_NEAR(l->flops, dp_cost_matmul_flops(4 * 256, 50257, 768), 1);
    CHECK(count_op(g, "UnsortedSegmentSum") == 2); /* wte and wpe lookups */
    dp_graph_free(g);
    /* LSTM: one MatMul per step and layer plus the softmax layer. */
    g = build("lstm_lm", DP_OPT_SGD, DP_PREC_FP32, 20, 35);
    if (g) CHECK(count_op(g, "MatMul") == 2 * 35 * 3 + 3);
    if (g) CHECK(count_op(g, "SigmoidGrad") == 2 * 35 * 3);
    dp_graph_free(g);
}

static char *save_to_string(const struct dp_graph *g, const char *path, size_t *len) {
    struct dp_error err = {0};
    if (dp_graph_save_json(g, path, &err)) {
        fprintf(stderr, "save: %s\n", err.msg);
        return NULL;
    }
    return test_slurp(path, len);
}

static void test_determinism_and_roundtrip(void) {
    struct dp_graph *a = build("inception3", DP_OPT_MOMENTUM, DP_PREC_FP32, 32, 0);
    struct dp_graph *b = build("inception3", DP_OPT_MOMENTUM, DP_PREC_FP32, 32, 0);
    if (!a || !b) { CHECK(0); dp_graph_free(a); dp_graph_free(b); return; }
    size_t la = 0, lb = 0;
    const char *pa = test_path("test_zoo_a.json"), *pb = test_path("test_zoo_b.json");
    char *sa = save_to_string(a, pa, &la);
    char *sb = save_to_string(b, pb, &lb);
    CHECK(sa && sb && la == lb && !memcmp(sa, sb, la));
    /* Written and read back: every input resolves, nothing dropped. */
    struct dp_graph *r = NULL;
    size_t dropped = 99;
    struct dp_error err = {0};
    CHECK(dp_graph_load_json(pa, &r, &dropped, &err) == DP_OK);
    CHECK(r && dropped == 0 && dp_graph_n_nodes(r) == dp_graph_n_nodes(a));
    if (r) {
        const struct dp_node *x = node(r, "inception_v3/mixed0/branch5x5_2/Conv2D");
        const struct dp_node *y = node(a, "inception_v3/mixed0/branch5x5_2/Conv2D");
        CHECK(x && y && x->flops == y->flops && x->n_inputs == 2);
    }
    dp_graph_free(r);
    free(sa);
    free(sb);
    remove(pa);
    remove(pb);
    dp_graph_free(a);
    dp_graph_free(b);
}

static void test_options(void) {
    struct dp_graph *s = build("vgg16", DP_OPT_SGD, DP_PREC_FP32, 16, 0);
    struct dp_graph *m = build("vgg16", DP_OPT_MOMENTUM, DP_PREC_FP32, 16, 0);
    struct dp_graph *a = build("vgg16", DP_OPT_ADAM, DP_PREC_FP32, 16, 0);
    struct dp_graph *x = build("vgg16", DP_OPT_SGD, DP_PREC_MIXED, 16, 0);
    if (!s || !m || !a || !x) { CHECK(0); goto done; }
    CHECK(count_op(s, "ApplyGradientDescent") == 32 && count_op(s, "ApplyMomentum") == 0);
    CHECK(count_op(m, "ApplyMomentum") == 32 && count_op(m, "ApplyGradientDescent") == 0);
    CHECK(count_op(a, "ApplyAdam") == 32);
    /* Slots: one per variable for momentum, two for Adam, plus Adam's two beta powers. */
    CHECK(count_op(m, "VariableV2") == count_op(s, "VariableV2") + 32);
    CHECK(count_op(a, "VariableV2") == count_op(s, "VariableV2") + 2 * 32 + 2);
    CHECK(dp_graph_n_nodes(s) < dp_graph_n_nodes(m) && dp_graph_n_nodes(m) < dp_graph_n_nodes(a));
    /* Mixed precision: fp16 compute, casts of the weights, fp32 variables, loss scaling. */
    const struct dp_node *c = node(x, "vgg16/conv1/conv1_1/Conv2D");
    CHECK(c && c->dtype == DP_DTYPE_F16);
    const struct dp_node *v = node(x, "vgg16/conv1/conv1_1/kernel");
    CHECK(v && v->dtype == DP_DTYPE_F32);
    CHECK(count_op(x, "Cast") > 2 * 32);
    CHECK(dp_graph_find(x, "loss_scale/scale") >= 0);
    const struct dp_node *c32 = node(s, "vgg16/conv1/conv1_1/Conv2D");
    if (c && c32) CHECK(c->bytes < 0.6 * c32->bytes && c->flops == c32->flops);
    /* Batch and input size. */
    struct dp_graph *b64 = build("vgg16", DP_OPT_SGD, DP_PREC_FP32, 64, 0);
    const struct dp_node *c64 = b64 ? node(b64, "vgg16/conv1/conv1_1/Conv2D") : NULL;
    CHECK(b64 && dp_graph_batch(b64) == 64 && c64 && c32);
    if (c64 && c32) CHECK_NEAR(c64->flops, 4 * c32->flops, 1);
    dp_graph_free(b64);
    struct dp_graph *small = build("resnet50", DP_OPT_SGD, DP_PREC_FP32, 8, 128);
    const struct dp_node *stem = small ? node(small, "resnet50/conv1/Conv2D") : NULL;
    CHECK(stem && stem->dims[1] == 64 && stem->dims[2] == 64);
    dp_graph_free(small);
    /* NCHW: same FLOPs, channels second. */
    struct dp_zoo_opts o;
    dp_zoo_opts_default(&o);
    o.nchw = true;
    o.batch = 8;
    struct dp_graph *nchw = NULL, *nhwc = build("resnet50", DP_OPT_MOMENTUM, DP_PREC_FP32, 8, 0);
    CHECK(dp_zoo_build("resnet50", &o, &nchw, NULL) == DP_OK);
    if (nchw && nhwc) {
        CHECK_NEAR(dp_cost_total_flops(nchw, 8) / dp_cost_total_flops(nhwc, 8), 1.0, 0.01);
        const struct dp_node *k = node(nchw, "resnet50/conv1/Conv2D");
        CHECK(k && k->dims[1] == 64 && k->dims[2] == 112);
        CHECK(k && !strcmp(dp_node_attr(k, "data_format"), "NCHW"));
    }
    dp_graph_free(nchw);
    dp_graph_free(nhwc);
done:
    dp_graph_free(s);
    dp_graph_free(m);
    dp_graph_free(a);
    dp_graph_free(x);
}

static void test_errors(void) {
    struct dp_graph *g = NULL;
    struct dp_error err = {0};
    CHECK(dp_zoo_build("resnet5", NULL, &g, &err) == DP_ERR_NOT_FOUND && !g);
    CHECK_CONTAINS(err.msg, "unknown model 'resnet5'");
    struct dp_zoo_opts o;
    dp_zoo_opts_default(&o);
    o.input = 16;
    CHECK(dp_zoo_build("vgg16", &o, &g, &err) == DP_ERR_INVALID && !g);
    CHECK_CONTAINS(err.msg, "vgg16: input size 16 out of range");
    o.input = 2000;
    CHECK(dp_zoo_build("gpt2_small", &o, &g, &err) == DP_ERR_INVALID && !g);
    CHECK_CONTAINS(err.msg, "sequence length 2000");
    o.input = 0;
    o.batch = -3;
    CHECK(dp_zoo_build("alexnet", &o, &g, &err) == DP_ERR_INVALID && !g);
    enum dp_optimizer opt;
    CHECK(dp_optimizer_parse("adam", &opt) && opt == DP_OPT_ADAM);
    CHECK(!dp_optimizer_parse("rmsprop", &opt));
    CHECK(!strcmp(dp_optimizer_name(DP_OPT_MOMENTUM), "momentum"));
}

/* The cost formulas on a hand-made graph (as an importer would produce it). */
static void test_cost_formulas(void) {
    struct dp_graph *g = dp_graph_init("hand");
    const char *gpu = "/device:GPU:0";
    int64_t xd[4] = {DP_DIM_BATCH, 28, 28, 16}, wd[4] = {5, 5, 16, 32};
    int64_t yd[4] = {DP_DIM_BATCH, 28, 28, 32};
    int64_t pd[4] = {DP_DIM_BATCH, 14, 14, 32}, ad[2] = {DP_DIM_BATCH, 6272}, bd[2] = {6272, 10};
    int64_t od[2] = {DP_DIM_BATCH, 10};
    int x, w, y, r, p, fl, fw, mm, sm, ap;
    dp_graph_add_node(g, "x", "Placeholder", gpu, 4, xd, DP_DTYPE_F32, &x, NULL);
    dp_graph_add_node(g, "w", "VariableV2", gpu, 4, wd, DP_DTYPE_F32, &w, NULL);
    dp_graph_add_node(g, "y", "Conv2D", gpu, 4, yd, DP_DTYPE_F32, &y, NULL);
    dp_graph_add_input(g, y, x, false, NULL);
    dp_graph_add_input(g, y, w, false, NULL);
    dp_graph_add_node(g, "r", "Relu", gpu, 4, yd, DP_DTYPE_F32, &r, NULL);
    dp_graph_add_input(g, r, y, false, NULL);
    dp_graph_add_node(g, "p", "MaxPool", gpu, 4, pd, DP_DTYPE_F32, &p, NULL);
    dp_graph_set_attr(g, p, "ksize", "[1, 2, 2, 1]");
    dp_graph_add_input(g, p, r, false, NULL);
    dp_graph_add_node(g, "flat", "Reshape", gpu, 2, ad, DP_DTYPE_F32, &fl, NULL);
    dp_graph_add_input(g, fl, p, false, NULL);
    dp_graph_add_node(g, "fw", "VariableV2", gpu, 2, bd, DP_DTYPE_F32, &fw, NULL);
    dp_graph_add_node(g, "mm", "MatMul", gpu, 2, od, DP_DTYPE_F32, &mm, NULL);
    dp_graph_add_input(g, mm, fl, false, NULL);
    dp_graph_add_input(g, mm, fw, false, NULL);
    dp_graph_add_node(g, "sm", "Softmax", gpu, 2, od, DP_DTYPE_F32, &sm, NULL);
    dp_graph_add_input(g, sm, mm, false, NULL);
    dp_graph_add_node(g, "ap", "ApplyAdam", gpu, 2, bd, DP_DTYPE_F32, &ap, NULL);
    dp_graph_add_input(g, ap, fw, false, NULL);
    dp_cost_fill(g, 8, false);
    const struct dp_node *n = dp_graph_node(g, (size_t)y);
    CHECK_NEAR(n->flops, dp_cost_conv2d_flops(8, 28, 28, 16, 32, 5, 5), 1);
    CHECK_NEAR(n->bytes, 4.0 * (8 * 28 * 28 * 16 + 5 * 5 * 16 * 32 + 8 * 28 * 28 * 32), 1);
    CHECK_NEAR(dp_graph_node(g, (size_t)r)->flops, 8.0 * 28 * 28 * 32, 1);
    CHECK_NEAR(dp_graph_node(g, (size_t)p)->flops, 8.0 * 14 * 14 * 32 * 4, 1);
    CHECK_NEAR(dp_graph_node(g, (size_t)fl)->flops, 0, 0);
    CHECK_NEAR(dp_graph_node(g, (size_t)mm)->flops, dp_cost_matmul_flops(8, 10, 6272), 1);
    CHECK_NEAR(dp_graph_node(g, (size_t)sm)->flops, 5.0 * 8 * 10, 1);
    CHECK_NEAR(dp_graph_node(g, (size_t)ap)->bytes, 6272.0 * 10 * 4 * 7, 1);
    CHECK(dp_op_class("Conv2DBackpropFilter") == DP_OPCLASS_MATMUL);
    CHECK(dp_op_class("ApplyMomentum") == DP_OPCLASS_OPTIMIZER);
    CHECK(dp_op_class("ResourceApplyFoo") == DP_OPCLASS_OPTIMIZER);
    CHECK(dp_op_class("VariableV2") == DP_OPCLASS_NONE);
    CHECK(dp_op_class("ConcatV2") == DP_OPCLASS_MEMORY);
    CHECK(dp_op_class("FusedBatchNormGradV3") == DP_OPCLASS_REDUCE);
    CHECK(dp_op_class("SomethingNew") == DP_OPCLASS_ELEMWISE);
    CHECK(!strcmp(dp_op_class_name(DP_OPCLASS_MATMUL), "matmul"));
    /* Known costs are kept unless overwritten. */
    dp_graph_set_cost(g, r, 123, 456, 0);
    dp_cost_fill(g, 8, false);
    CHECK_NEAR(dp_graph_node(g, (size_t)r)->flops, 123, 0);
    dp_cost_fill(g, 8, true);
    CHECK_NEAR(dp_graph_node(g, (size_t)r)->flops, 8.0 * 28 * 28 * 32, 1);
    dp_graph_free(g);
}

/* Parameter counts from a file (up to 2^53 a node) saturate instead of overflowing int64_t. */
static void test_param_count_saturates(void) {
    struct dp_graph *g = dp_graph_init("huge");
    int64_t d[1] = {1};
    for (int i = 0; i < 1100; i++) {
        char name[16];
        int idx;
        snprintf(name, sizeof name, "v%d", i);
        CHECK(dp_graph_add_node(g, name, "VariableV2", "/device:GPU:0", 1, d, DP_DTYPE_F32, &idx,
                                NULL) == DP_OK);
        dp_graph_set_cost(g, idx, 0, 0, INT64_C(1) << 53);
    }
    CHECK(dp_graph_param_count(g, false) == INT64_MAX);
    dp_graph_free(g);
}

int main(void) {
    test_param_count_saturates();
    test_all_models();
    test_gradients_mirror_forward();
    test_params();
    test_known_layers_transformer();
    test_determinism_and_roundtrip();
    test_options();
    test_errors();
    test_cost_formulas();
    TEST_MAIN_END();
}
