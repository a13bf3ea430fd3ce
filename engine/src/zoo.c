/* zoo.c: the model zoo's registry (names, defaults, input ranges) and dp_zoo_build(), which runs
 * a model's forward builder and the shared training expansion (gradients, optimizer, costs). */
#include "dp/zoo.h"

#include <string.h>

#include "zoo_builder.h"

struct entry {
    struct dp_zoo_info info;
    int (*build)(struct zb *b, int64_t input);
};

static const struct entry models[] = {
    {{"alexnet", "AlexNet (5 conv + 3 fc, 61M params)", "image", 128, 224, 64, 1024}, zoo_alexnet},
    {{"vgg16", "VGG-16 (13 conv + 3 fc, 138M params)", "image", 32, 224, 32, 1024}, zoo_vgg16},
    {{"vgg19", "VGG-19 (16 conv + 3 fc, 144M params)", "image", 32, 224, 32, 1024}, zoo_vgg19},
    {{"resnet50", "ResNet-50 v1.5 (bottleneck, batch norm, 25.6M params)", "image", 64, 224, 32,
      1024}, zoo_resnet50},
    {{"resnet101", "ResNet-101 v1.5 (44.5M params)", "image", 64, 224, 32, 1024}, zoo_resnet101},
    {{"resnet152", "ResNet-152 v1.5 (60.2M params)", "image", 64, 224, 32, 1024}, zoo_resnet152},
    {{"resnet18", "ResNet-18 (basic blocks, 11.7M params)", "image", 64, 224, 32, 1024},
     zoo_resnet18},
    {{"resnet34", "ResNet-34 (basic blocks, 21.8M params)", "image", 64, 224, 32, 1024},
     zoo_resnet34},
    {{"inception3", "Inception-v3 (factorised convs, 23.8M params)", "image", 64, 299, 75, 1024},
     zoo_inception3},
    {{"googlenet", "GoogLeNet / Inception-v1 (LRN, 7M params)", "image", 64, 224, 32, 1024},
     zoo_googlenet},
    {{"mobilenet_v2", "MobileNet-v2 (inverted residuals, depthwise, 3.5M params)", "image", 64,
      224, 32, 1024}, zoo_mobilenet_v2},
    {{"densenet121", "DenseNet-121 (dense blocks, 8M params)", "image", 32, 224, 32, 1024},
     zoo_densenet121},
    {{"squeezenet", "SqueezeNet 1.0 (fire modules, 1.2M params)", "image", 64, 224, 64, 1024},
     zoo_squeezenet},
    {{"lstm_lm", "2-layer LSTM language model, PTB medium (650 units, 20M params)", "sequence",
      20, 35, 1, 512}, zoo_lstm_lm},
    {{"transformer_base", "Transformer-base translation (OpenNMT, 6+6 layers, d=512)", "sequence",
      32, 64, 1, 512}, zoo_transformer_base},
    {{"bert_base", "BERT-base pre-training (12 layers, d=768, 110M params)", "sequence", 32, 128,
      2, 512}, zoo_bert_base},
    {{"bert_large", "BERT-large pre-training (24 layers, d=1024, 335M params)", "sequence", 16,
      128, 2, 512}, zoo_bert_large},
    {{"gpt2_small", "GPT-2 small (12 layers, d=768, 124M params)", "sequence", 8, 1024, 1, 1024},
     zoo_gpt2_small},
    {{"gpt2_medium", "GPT-2 medium (24 layers, d=1024, 355M params)", "sequence", 4, 1024, 1,
      1024}, zoo_gpt2_medium},
};

#define N_MODELS (sizeof models / sizeof models[0])

const char *dp_optimizer_name(enum dp_optimizer o) {
    static const char *const names[] = {"sgd", "momentum", "adam"};
    _Static_assert(sizeof names / sizeof names[0] == DP_OPT_COUNT, "update names");
    return (unsigned)o < DP_OPT_COUNT ? names[o] : "sgd";
}

bool dp_optimizer_parse(const char *s, enum dp_optimizer *out) {
    for (int i = 0; s && i < DP_OPT_COUNT; i++)
        if (!strcmp(s, dp_optimizer_name((enum dp_optimizer)i))) {
            *out = (enum dp_optimizer)i;
            return true;
        }
    return false;
}

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
    if (o.batch < 1 || o.batch > 1 << 20)
        return dp_error_set(err, DP_ERR_INVALID, "zoo: %s: batch %lld out of range [1, %d]", name,
                            (long long)o.batch, 1 << 20);
    if (o.input < e->info.min_input || o.input > e->info.max_input)
        return dp_error_set(err, DP_ERR_INVALID, "zoo: %s: %s %lld out of range [%lld, %lld]",
                            name, strcmp(e->info.input_kind, "image") ? "sequence length"
                                                                       : "input size",
                            (long long)o.input, (long long)e->info.min_input,
                            (long long)e->info.max_input);
    if ((unsigned)o.optimizer >= DP_OPT_COUNT || (o.precision != DP_PREC_FP32 &&
                                                  o.precision != DP_PREC_MIXED))
        return dp_error_set(err, DP_ERR_INVALID, "zoo: %s: bad optimizer or precision", name);

    enum dp_status st;
    struct zb *b = NULL;
    struct dp_graph *g = dp_graph_init(name);
    if (!g || dp_graph_set_framework(g, "tensorflow") ||
        dp_graph_set_batch(g, o.batch, "driple zoo build --batch") || !(b = zb_init(g, &o))) {
        st = dp_error_set(err, DP_ERR_NOMEM, "zoo: %s: out of memory", name);
        goto fail;
    }
    int loss = e->build(b, o.input);
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
