/* zoo.h: training graphs of well-known models, built the way TensorFlow 1 shows them: an input
 * pipeline on the CPU (IteratorGetNext), forward ops with shapes (batch dim symbolic), the
 * gradient op of each forward op, an optimizer update per variable, variables and their reads,
 * device strings and per-op FLOPs/bytes (dp/cost.h). Synthetic: generated, not exported from TF. */
#ifndef DP_ZOO_H
#define DP_ZOO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/graph.h"
#include "dp/optimizer.h"
#include "dp/settings.h" /* enum dp_precision */

struct dp_zoo_opts {
    int64_t           batch;     /* exported batch (shapes keep it symbolic); 0 = model default */
    int64_t           input;     /* image side (CNNs) or sequence length; 0 = model default */
    enum dp_optimizer optimizer; /* update ops per variable */
    enum dp_precision precision; /* fp32, or mixed: fp16 compute, fp32 variables, loss scaling */
    bool              nchw;      /* CNN activations in NCHW (data_format attr) instead of NHWC */
};

/* Defaults: batch 0 (model default), input 0 (model default), momentum, fp32, NHWC. */
void dp_zoo_opts_default(struct dp_zoo_opts *opts);

struct dp_zoo_info {
    const char *name;          /* "resnet50" */
    const char *family;        /* "resnet": the size/width variants of one architecture share it
                                  (hold-out splits keep a family together, dp/train.h) */
    const char *description;   /* one line */
    const char *input_kind;    /* "image" (input = side in pixels) or "sequence" (input = tokens) */
    int64_t     default_batch;
    int64_t     default_input;
    int64_t     min_input;     /* smallest input the architecture accepts */
    int64_t     max_input;
    int         token_streams; /* token sequences of `input` tokens per sample (tokens/s =
                                  samples/s x token_streams x input): 0 for images, 1 for
                                  language models and BERT, 2 for translation (source and
                                  target) */
};

/* Number of models and the i-th one (i < dp_zoo_count()); static storage. */
size_t dp_zoo_count(void);
const struct dp_zoo_info *dp_zoo_info(size_t i);
/* The model called name, or NULL. */
const struct dp_zoo_info *dp_zoo_find(const char *name);
/* The family of model `name` ("resnet" for "wide_resnet50_2"); a name outside the zoo is its own
 * family (returns name itself). NULL-safe: NULL gives "". */
const char *dp_zoo_family(const char *name);

/* Builds the training graph of model `name` (opts may be NULL: defaults). Returns a new graph
 * owned by the caller (free with dp_graph_free), framework "tensorflow", batch = the exported
 * batch, flops/bytes filled at that batch. DP_ERR_NOT_FOUND for an unknown model, DP_ERR_INVALID
 * for an input size or batch out of range; the message names the model and the value. */
enum dp_status dp_zoo_build(const char *name, const struct dp_zoo_opts *opts,
                            struct dp_graph **out, struct dp_error *err);

#endif
