/* zoo_gen.h: a seeded generator of training graphs that covers the space of architectures, not
 * just the zoo's 11 families: CNNs (random stages, widths, kernels, strides and block kinds:
 * plain, residual, bottleneck, inverted residual, depthwise separable, grouped, dense, with or
 * without squeeze-excite), transformers (encoder, decoder, encoder-decoder, vision, Swin-like
 * window attention), recurrent models (LSTM, GRU), MLPs and MLP-Mixers. An architecture is a
 * small description drawn from a seed and an index (the same pair gives the same architecture on
 * any machine); it is built through the zoo's training-graph builder (gradients, optimizer,
 * costs) like a zoo model. Its name, "gen-<kind>-s<seed>-<index>", is enough to draw it again.
 * Synthetic, never exported. */
#ifndef DP_ZOO_GEN_H
#define DP_ZOO_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/graph.h"
#include "dp/status.h"
#include "dp/zoo.h"

enum dp_gen_kind {
    DP_GEN_CNN, DP_GEN_TRANSFORMER, DP_GEN_RNN, DP_GEN_MLP, DP_GEN_MIXER, DP_GEN_KIND_COUNT
};
/* "cnn", "transformer", "rnn", "mlp", "mixer"; the parser returns false (out untouched) for
 * another name. */
const char *dp_gen_kind_name(enum dp_gen_kind k);
bool        dp_gen_kind_parse(const char *s, enum dp_gen_kind *out);

/* CNN block kinds. SEPARABLE: depthwise k x k then pointwise 1 x 1 (MobileNet-v1); GROUPED: a
 * bottleneck whose k x k conv is split into `groups` convolutions (ResNeXt, as TF1 wrote it);
 * DENSE: DenseNet layers (BN-act-1x1-BN-act-kxk, concatenated), `width` = growth rate. */
enum dp_gen_block {
    DP_GEN_PLAIN, DP_GEN_RESIDUAL, DP_GEN_BOTTLENECK, DP_GEN_INVERTED, DP_GEN_SEPARABLE,
    DP_GEN_GROUPED, DP_GEN_DENSE, DP_GEN_BLOCK_COUNT
};
const char *dp_gen_block_name(enum dp_gen_block k); /* "plain", "residual", ... */

/* Activations of the CNNs, MLPs and recurrent-free models: ReLU, ReLU6, swish (x sigmoid(x)). */
enum dp_gen_act { DP_GEN_RELU, DP_GEN_RELU6, DP_GEN_SWISH, DP_GEN_ACT_COUNT };

#define DP_GEN_MAX_STAGES 5
#define DP_GEN_MAX_LAYERS 8

struct dp_gen_stage {
    enum dp_gen_block block;
    int  depth;   /* blocks in the stage (dense: layers) */
    int  width;   /* output channels (dense: growth rate) */
    int  kernel;  /* 3, 5 or 7 */
    int  stride;  /* 1 or 2: the first block's (dense: a transition that halves the channels
                     and average-pools 2 x 2 before the stage) */
    bool pool;    /* plain: downsample with a 2 x 2 max pool before the stage, not a stride */
    int  inner;   /* bottleneck, grouped: the width of the inner convolutions (a multiple of
                     groups) */
    int  expand;  /* inverted: the expansion ratio (1: no expanding 1 x 1) */
    int  groups;  /* grouped: 2, 4 or 8 */
    bool se;      /* squeeze-excite (reduction 4, at least 8 channels) before the residual add */
};

struct dp_gen_cnn {
    int64_t input;              /* image side */
    int     stem_width, stem_kernel, stem_stride;
    bool    stem_pool;          /* 3 x 3 / 2 max pool after the stem */
    int     n_stages;
    struct dp_gen_stage stage[DP_GEN_MAX_STAGES];
    enum dp_gen_act act;
    int     head_width;         /* > 0: a hidden dense layer (with act) before the classifier
                                   (two of them with flat_pool) */
    double  dropout;            /* before the classifier; 0 = none */
    int     classes;
    bool    folded;             /* no batch norm: a bias on every convolution instead, as an
                                   eval-mode export folds it (DenseNet's pre-activation BN
                                   and SE are left out / kept as they are) */
    int     flat_pool;          /* > 0: AlexNet's and VGG's classifier: the last feature map
                                   average-pooled flat_pool x flat_pool (VALID; 1: as it is) to
                                   flat_side x flat_side, flattened, two hidden dense layers of
                                   head_width; 0: global average pooling */
    int     flat_side;
};

enum dp_gen_variant { DP_GEN_ENCODER, DP_GEN_DECODER, DP_GEN_ENCDEC, DP_GEN_VISION, DP_GEN_SWIN };

struct dp_gen_transformer {
    enum dp_gen_variant variant; /* BERT-like, GPT-like (causal, tied LM head), translation
                                    (sinusoidal positions, cross-attention), ViT-like,
                                    Swin-like (window attention, hierarchical stages) */
    int     enc_layers, dec_layers;
    int     d_model, heads, inner; /* inner: the feed-forward width */
    int64_t seq;                /* tokens; vision: the image side */
    int     patch;              /* vision: patch side (divides seq) */
    int     vocab;              /* token models */
    bool    pre_norm;           /* LayerNorm before each sub-block (and once at the end) */
    bool    gelu;               /* GELU feed-forward, else ReLU */
    bool    fused_qkv;          /* one projection to 3d (GPT-2's c_attn) */
    int     classes;            /* encoder, vision: > 0 a classifier (encoder: on the first
                                   token, tanh pooler); encoder 0: a tied masked-LM head */
    /* Swin-like, as torchvision's Swin v1 exports it: d_model, heads and inner are the first
     * stage's (each later stage merges 2 x 2 patches and doubles all three); pre-norm, GELU;
     * attention over window x window tokens, shifted by half a window in every second block
     * (a roll, and a mask on the scores); q, k and v gathered from one projection and the
     * relative-position bias gathered from its table (enc_layers: the blocks in all). */
    int     window;
    int     stages;
    int     stage_layers[DP_GEN_MAX_STAGES];
};

struct dp_gen_rnn {
    bool    gru;                /* else LSTM */
    int     layers, hidden, embed, vocab;
    int64_t seq;                /* unrolled steps */
    int     classes;            /* 0: a language model (every step to the vocabulary); > 0:
                                   classify the last step */
};

struct dp_gen_mlp {
    int64_t input;              /* features */
    int     layers;             /* hidden layers */
    int     width[DP_GEN_MAX_LAYERS];
    bool    layer_norm;         /* after each hidden layer's activation */
    double  dropout;            /* after each hidden layer; 0 = none */
    enum dp_gen_act act;
    int     classes;
};

struct dp_gen_mixer {
    int64_t input;              /* image side */
    int     patch, d, layers, token_mlp, channel_mlp, classes;
};

struct dp_gen_arch {
    enum dp_gen_kind kind;
    char     name[64];          /* "gen-cnn-s1-42" */
    uint64_t seed;
    int64_t  index;
    int64_t  batch;             /* a usual batch for a model of this size (the exported one) */
    union {
        struct dp_gen_cnn         cnn;
        struct dp_gen_transformer tf;
        struct dp_gen_rnn         rnn;
        struct dp_gen_mlp         mlp;
        struct dp_gen_mixer       mixer;
    } u;
};

/* Draws architecture `index` (>= 0) of the corpus of `seed`: its kind is drawn too (about 40%
 * CNNs, 25% transformers, 10% each of the rest) unless kind < DP_GEN_KIND_COUNT, which forces
 * it (the same draws otherwise, so forcing a kind reproduces the corpus's models of that kind).
 * Never fails; out is filled completely. */
void dp_gen_sample(uint64_t seed, int64_t index, int kind, struct dp_gen_arch *out);
/* The same from a name "gen-<kind>-s<seed>-<index>"; false for any other string. */
bool dp_gen_parse_name(const char *name, struct dp_gen_arch *out);
/* True when name is a generated model's name (what dp_gen_parse_name accepts). */
bool dp_gen_is_generated(const char *name);
/* The trainable parameter count of a, in closed form from the description alone (the tests
 * check it against the built graph's dp_graph_param_count(g, true)). */
int64_t dp_gen_params(const struct dp_gen_arch *a);
/* One line describing a ("cnn 224px: stem 32 k7/2+pool; bottleneck 3x64 ... ; 1000 classes").
 * Writes at most n bytes. */
void dp_gen_describe(const struct dp_gen_arch *a, char *buf, size_t n);

/* Builds a's training graph like dp_zoo_build builds a zoo model (opts may be NULL: defaults;
 * opts->input is ignored: the input size is part of a; batch 0 = a->batch). Returns a new graph
 * owned by the caller (dp_graph_free), named a->name, flops and bytes filled at the batch.
 * DP_ERR_INVALID for a description the builder refuses (named), DP_ERR_NOMEM. */
enum dp_status dp_gen_build(const struct dp_gen_arch *a, const struct dp_zoo_opts *opts,
                            struct dp_graph **out, struct dp_error *err);

#endif
