/* zoo.c: the model zoo's registry (names, defaults, input ranges) and dp_zoo_build(), which runs
 * a model's forward builder and the shared training expansion (gradients, optimizer, costs). */
#include "dp/zoo.h"

#include <string.h>

#include "zoo_models.h"
#include "zoo/zoo_layers.h"

struct entry {
    struct dp_zoo_info info;
    int (*build)(struct zb *b, int64_t input);
};

static const struct entry models[] = {
    {{"alexnet", "alexnet", "AlexNet (5 conv + 3 fc, 61M params)", "image", 128, 224, 64, 1024, 0},
     zoo_alexnet},
    {{"vgg16", "vgg", "VGG-16 (13 conv + 3 fc, 138M params)", "image", 32, 224, 32, 1024, 0},
     zoo_vgg16},
    {{"vgg19", "vgg", "VGG-19 (16 conv + 3 fc, 144M params)", "image", 32, 224, 32, 1024, 0},
     zoo_vgg19},
    {{"resnet50", "resnet", "ResNet-50 v1.5 (bottleneck, batch norm, 25.6M params)", "image", 64,
      224, 32, 1024, 0}, zoo_resnet50},
    {{"resnet101", "resnet", "ResNet-101 v1.5 (44.5M params)", "image", 64, 224, 32, 1024, 0},
     zoo_resnet101},
    {{"resnet152", "resnet", "ResNet-152 v1.5 (60.2M params)", "image", 64, 224, 32, 1024, 0},
     zoo_resnet152},
    {{"resnet18", "resnet", "ResNet-18 (basic blocks, 11.7M params)", "image", 64, 224, 32, 1024, 0},
     zoo_resnet18},
    {{"resnet34", "resnet", "ResNet-34 (basic blocks, 21.8M params)", "image", 64, 224, 32, 1024, 0},
     zoo_resnet34},
    {{"inception3", "inception", "Inception-v3 (factorised convs, 23.8M params)", "image", 64, 299,
      75, 1024, 0}, zoo_inception3},
    {{"googlenet", "inception", "GoogLeNet / Inception-v1 (LRN, 7M params)", "image", 64, 224, 32,
      1024, 0}, zoo_googlenet},
    {{"mobilenet_v2", "mobilenet", "MobileNet-v2 (inverted residuals, depthwise, 3.5M params)",
      "image", 64, 224, 32, 1024, 0}, zoo_mobilenet_v2},
    {{"densenet121", "densenet", "DenseNet-121 (dense blocks, 8M params)", "image", 32, 224, 32,
      1024, 0}, zoo_densenet121},
    {{"squeezenet", "squeezenet", "SqueezeNet 1.0 (fire modules, 1.2M params)", "image", 64, 224,
      64, 1024, 0}, zoo_squeezenet},
    {{"lstm_lm", "lstm", "2-layer LSTM language model, PTB medium (650 units, 20M params)",
      "sequence", 20, 35, 1, 512, 1}, zoo_lstm_lm},
    {{"transformer_base", "transformer", "Transformer-base translation (OpenNMT, 6+6 layers, "
      "d=512)", "sequence", 32, 64, 1, 512, 2}, zoo_transformer_base},
    {{"bert_base", "bert", "BERT-base pre-training (12 layers, d=768, 110M params)", "sequence",
      32, 128, 2, 512, 1}, zoo_bert_base},
    {{"bert_large", "bert", "BERT-large pre-training (24 layers, d=1024, 335M params)",
      "sequence", 16, 128, 2, 512, 1}, zoo_bert_large},
    {{"gpt2_small", "gpt2", "GPT-2 small (12 layers, d=768, 124M params)", "sequence", 8, 1024, 1,
      1024, 1}, zoo_gpt2_small},
    {{"gpt2_medium", "gpt2", "GPT-2 medium (24 layers, d=1024, 355M params)", "sequence", 4, 1024,
      1, 1024, 1}, zoo_gpt2_medium},
    /* Size and width variants of the families above: what the inspectors learn from. */
    {{"vgg11", "vgg", "VGG-11 (8 conv + 3 fc, 133M params)", "image", 32, 224, 32, 1024, 0},
     zoo_vgg11},
    {{"vgg13", "vgg", "VGG-13 (10 conv + 3 fc, 133M params)", "image", 32, 224, 32, 1024, 0},
     zoo_vgg13},
    {{"wide_resnet50_2", "resnet", "Wide ResNet-50-2 (bottlenecks twice as wide, 68.9M params)",
      "image", 32, 224, 32, 1024, 0}, zoo_wide_resnet50_2},
    {{"mobilenet_v1", "mobilenet", "MobileNet-v1 (depthwise separable, 4.2M params)", "image", 64,
      224, 32, 1024, 0}, zoo_mobilenet_v1},
    {{"mobilenet_v1_050", "mobilenet", "MobileNet-v1 0.5 (half width, 1.3M params)", "image", 64,
      224, 32, 1024, 0}, zoo_mobilenet_v1_050},
    {{"mobilenet_v2_050", "mobilenet", "MobileNet-v2 0.5 (half width, 2.0M params)", "image", 64,
      224, 32, 1024, 0}, zoo_mobilenet_v2_050},
    {{"mobilenet_v2_140", "mobilenet", "MobileNet-v2 1.4 (1.4x width, 6.2M params)", "image", 64,
      224, 32, 1024, 0}, zoo_mobilenet_v2_140},
    {{"densenet169", "densenet", "DenseNet-169 (dense blocks, 14.1M params)", "image", 32, 224,
      32, 1024, 0}, zoo_densenet169},
    {{"densenet201", "densenet", "DenseNet-201 (dense blocks, 20.0M params)", "image", 32, 224,
      32, 1024, 0}, zoo_densenet201},
    {{"squeezenet1_1", "squeezenet", "SqueezeNet 1.1 (3x3 stem, earlier pooling, 1.2M params)",
      "image", 64, 224, 64, 1024, 0}, zoo_squeezenet1_1},
    {{"lstm_lm_small", "lstm", "2-layer LSTM language model, PTB small (200 units, 4.7M params)",
      "sequence", 20, 20, 1, 512, 1}, zoo_lstm_lm_small},
    {{"lstm_lm_large", "lstm", "2-layer LSTM language model, PTB large (1500 units, 66M params)",
      "sequence", 20, 35, 1, 512, 1}, zoo_lstm_lm_large},
    {{"transformer_big", "transformer", "Transformer-big translation (OpenNMT, 6+6 layers, "
      "d=1024)", "sequence", 16, 64, 1, 512, 2}, zoo_transformer_big},
    {{"bert_tiny", "bert", "BERT-Tiny pre-training (2 layers, d=128, 4.4M params)", "sequence",
      32, 128, 2, 512, 1}, zoo_bert_tiny},
    {{"bert_mini", "bert", "BERT-Mini pre-training (4 layers, d=256, 11.3M params)", "sequence",
      32, 128, 2, 512, 1}, zoo_bert_mini},
    {{"bert_small", "bert", "BERT-Small pre-training (4 layers, d=512, 29.1M params)", "sequence",
      32, 128, 2, 512, 1}, zoo_bert_small},
    {{"bert_medium", "bert", "BERT-Medium pre-training (8 layers, d=512, 41.7M params)",
      "sequence", 32, 128, 2, 512, 1}, zoo_bert_medium},
    {{"distilgpt2", "gpt2", "DistilGPT-2 (6 layers, d=768, 82M params)", "sequence", 8, 1024, 1,
      1024, 1}, zoo_distilgpt2},
    {{"gpt2_large", "gpt2", "GPT-2 large (36 layers, d=1280, 774M params)", "sequence", 4, 1024,
      1, 1024, 1}, zoo_gpt2_large},
    /* The models of the published runs the simulator is calibrated on (../shared/calibration). */
    {{"inception4", "inception", "Inception-v4 (tf_cnn_benchmarks layout, 42.7M params)", "image",
      32, 299, 75, 1024, 0}, zoo_inception4},
    {{"bert_base_squad", "bert", "BERT-base SQuAD fine-tuning (span head, 108.9M params)",
      "sequence", 16, 384, 2, 512, 1}, zoo_bert_base_squad},
    {{"bert_large_squad", "bert", "BERT-large SQuAD fine-tuning (span head, 334.1M params)",
      "sequence", 8, 384, 2, 512, 1}, zoo_bert_large_squad},
    {{"gnmt", "gnmt", "GNMT v2 (DeepLearningExamples: 4+4 LSTM layers of 1024, attention, "
      "160.7M params)", "sequence", 128, 25, 1, 512, 2}, zoo_gnmt},
    {{"transformer_xl_base", "transformer_xl", "Transformer-XL base (WikiText-103: 16 layers, "
      "d=512, memory 192, full softmax, 192M params)", "sequence", 16, 192, 1, 320, 1},
     zoo_transformer_xl_base},
};

#define N_MODELS (sizeof models / sizeof models[0])

void dp_zoo_opts_default(struct dp_zoo_opts *opts) {
    memset(opts, 0, sizeof *opts);
    opts->optimizer = DP_OPT_MOMENTUM;
    opts->precision = DP_PREC_FP32;
}

size_t dp_zoo_count(void) { return N_MODELS; }

const struct dp_zoo_info *dp_zoo_info(size_t i) { return i < N_MODELS ? &models[i].info : NULL; }

const struct dp_zoo_info *dp_zoo_find(const char *name) {
    for (size_t i = 0; name && i < N_MODELS; i++)
        if (!strcmp(models[i].info.name, name)) return &models[i].info;
    return NULL;
}

const char *dp_zoo_family(const char *name) {
    const struct dp_zoo_info *m = dp_zoo_find(name);
    return m ? m->family : name ? name : "";
}

/* A zoo model's builder and its input size, for zoo_build_graph. */
struct run {
    const struct entry *e;
    int64_t             input;
};

static int run_entry(struct zb *b, const void *ctx) {
    const struct run *r = ctx;
    return r->e->build(b, r->input);
}

enum dp_status dp_zoo_build(const char *name, const struct dp_zoo_opts *opts,
                            struct dp_graph **out, struct dp_error *err) {
    const struct entry *e = NULL;
    for (size_t i = 0; name && i < N_MODELS; i++)
        if (!strcmp(models[i].info.name, name)) e = &models[i];
    if (!e) return dp_error_set(err, DP_ERR_NOT_FOUND, "zoo: unknown model '%s' (see 'driple zoo "
                                "list')", name ? name : "");
    struct dp_zoo_opts o;
    if (opts) o = *opts;
    else dp_zoo_opts_default(&o);
    if (o.batch == 0) o.batch = e->info.default_batch;
    if (o.input == 0) o.input = e->info.default_input;
    if (o.input < e->info.min_input || o.input > e->info.max_input)
        return dp_error_set(err, DP_ERR_INVALID, "zoo: %s: %s %lld out of range [%lld, %lld]",
                            name, strcmp(e->info.input_kind, "image") ? "sequence length"
                                                                       : "input size",
                            (long long)o.input, (long long)e->info.min_input,
                            (long long)e->info.max_input);
    return zoo_build_graph(name, &o, run_entry, &(struct run){e, o.input}, out, err);
}

enum dp_status zoo_build_graph(const char *name, const struct dp_zoo_opts *o,
                               int (*fwd)(struct zb *b, const void *ctx), const void *ctx,
                               struct dp_graph **out, struct dp_error *err) {
    if (o->batch < 1 || o->batch > DP_BATCH_MAX)
        return dp_error_set(err, DP_ERR_INVALID, "zoo: %s: batch %lld out of range [1, %lld]",
                            name, (long long)o->batch, (long long)DP_BATCH_MAX);
    if ((unsigned)o->optimizer >= DP_OPT_COUNT || (o->precision != DP_PREC_FP32 &&
                                                   o->precision != DP_PREC_MIXED))
        return dp_error_set(err, DP_ERR_INVALID, "zoo: %s: bad optimizer or precision", name);

    enum dp_status st;
    struct zb *b = NULL;
    struct zb_opts bo = {o->optimizer, o->precision, o->nchw};
    struct dp_graph *g = dp_graph_init(name);
    if (!g || dp_graph_set_framework(g, "tensorflow") ||
        dp_graph_set_batch(g, o->batch, "driple zoo build --batch") || !(b = zb_init(g, &bo))) {
        st = dp_error_set(err, DP_ERR_NOMEM, "zoo: %s: out of memory", name);
        goto fail;
    }
    int loss = fwd(b, ctx);
    st = zb_finish(b, loss, err);
    if (st) {
        dp_error_prefix(err, "zoo");
        goto fail;
    }
    zb_free(b);
    *out = g;
    return DP_OK;
fail:
    zb_free(b);
    dp_graph_free(g);
    return st;
}
