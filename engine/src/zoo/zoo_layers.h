/* zoo_layers.h: the layers the zoo's models and the architecture generator (gen_*.c) share, so a
 * generated transformer or LSTM is built op for op as the zoo's are (private to engine/src/zoo).
 * Each returns a tensor id of the builder (tfgraph/tfgraph.h), or -1 once it failed. */
#ifndef DP_ZOO_LAYERS_H
#define DP_ZOO_LAYERS_H

#include <stdbool.h>
#include <stdint.h>

#include "dp/zoo.h"
#include "dp/zoo_gen.h"
#include "tfgraph/tfgraph.h"

/* Builds the training graph `name` (framework "tensorflow", batch o->batch) from the forward
 * builder fwd(b, ctx) and the shared training expansion (gradients, optimizer, costs): the body of
 * dp_zoo_build and dp_gen_build. Checks batch, optimizer and precision (DP_ERR_INVALID naming
 * the model); a new graph owned by the caller in *out. */
enum dp_status zoo_build_graph(const char *name, const struct dp_zoo_opts *o,
                               int (*fwd)(struct zb *b, const void *ctx), const void *ctx,
                               struct dp_graph **out, struct dp_error *err);

/* An NHWC image batch [B, side, side, 3] from the input pipeline (transposed to NCHW on the GPU
 * when the layout is NCHW); *labels [B] (int32). */
int zoo_image_input(struct zb *b, int64_t side, int *labels);
/* The mask of the spatial axes of 4-D activations in the builder's layout (for zb_reduce). */
unsigned zoo_spatial_mask(const struct zb *b);
/* x reshaped to [B, the product of its other dimensions] (AlexNet's and VGG's classifier input). */
int zoo_flatten(struct zb *b, int x);
/* Global average pooling (Mean over the spatial axes), dropout when > 0, a dense layer of
 * `classes` outputs ("fc") and the softmax cross-entropy loss against labels: the scalar loss. */
int zoo_gap_head(struct zb *b, int x, int labels, double dropout, int classes);
/* Token ids [B, seq] (int32) from the input pipeline; *labels [B, seq]. */
int zoo_token_input(struct zb *b, int64_t seq, int *labels);
/* Multi-head attention of queries from xq over keys and values from xkv ([B, T, d]; heads must
 * divide d) in scope `name`. fused: one projection to 3d split in three (GPT-2's c_attn), else
 * query/key/value; output projection "output" (or "c_proj" when fused). mask: added to the
 * scores (-1: none). drop > 0: dropout on the attention probabilities. */
int zoo_attention(struct zb *b, const char *name, int xq, int xkv, int heads, int mask,
                  bool fused, double drop);
/* Position-wise feed-forward: dense to `inner` (ReLU, or the tanh GELU when gelu), dropout (ReLU
 * only, when drop > 0), dense back to the input width, in scope `name`. */
int zoo_ffn(struct zb *b, const char *name, int x, int inner, bool gelu, double drop);
/* A causal mask [1, 1, t, t] to add to attention scores. */
int zoo_causal_mask(struct zb *b, int64_t t);
/* In scope `name`: rows `ids` of the embedding `table` scaled by sqrt(d), plus the sinusoidal
 * position encoding of t positions of width d (a constant), then dropout 0.1. */
int zoo_embed_sinusoid(struct zb *b, const char *name, int table, int ids, int64_t t, int64_t d);
/* One recurrent layer statically unrolled over steps[0..n) (TF1's static_rnn), in scope
 * "cell_<layer>": an LSTM cell (kernel [in + hidden, 4 hidden], bias [4 hidden]; gates i, j, f
 * (+ forget bias), o) or a GRU cell (gates/kernel [in + hidden, 2 hidden] + bias, candidate/
 * kernel [in + hidden, hidden] + bias), zero initial state. steps[t] is replaced by the layer's
 * output at step t. Returns the last output. */
int zoo_rnn_layer(struct zb *b, int layer, int *steps, int n, int64_t hidden, bool gru);

/* The generator's activation act applied to x (swish as x * Sigmoid(x)). */
int zoo_gen_act(struct zb *b, enum dp_gen_act act, int x);

#endif
