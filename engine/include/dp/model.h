/* model.h: the inspector network (Driple's GNN): graph layers (GCN, GIN, GAT, MPNN/PNA) with a
 * GRU update after each, Set2Set readout and an MLP head predicting the 12 metrics. Parameters
 * carry PyTorch's state_dict names so published checkpoints map one to one. A model is immutable
 * during prediction: two threads may predict with one model at once. */
#ifndef DP_MODEL_H
#define DP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp/grouped.h"
#include "dp/metrics.h" /* DP_N_OUTPUTS outputs in Driple's order */
#include "dp/status.h"

/* Graph layers (k = 0 for layer 0, 1 for every later layer; y is the layer's output):
 *  GCN  y = LeakyReLU_0.01(Â (x W) + b), Â = D^-1/2 (A + I) D^-1/2      conv_layers.k.{W, b}
 *  GIN  y = ReLU(ReLU(((A + (1 + eps) I) x) W0^T + b0) W1^T + b1)
 *       conv_layers.k.{epsilon, post_transformation.fully_connected.{0,1}.linear.{weight,bias}}
 *  GAT  heads over W x, scores LeakyReLU_0.2(a_src.Wx_j + a_dst.Wx_i), softmax over neighbours and
 *       self, heads concatenated, y = LeakyReLU_0.01(. + b)   conv_layers.k.{W, att_src, att_dst, b}
 *  MPNN per tower t: m_ij = ReLU(pre_t [x_i | x_j]), M_i = sum_j m_ij, u_i = post_t [x_i | M_i];
 *       y = LeakyReLU_0.01(lin [u^1 | ... | u^T])
 *       conv_layers.k.towers.t.{pre, post}.linear.{weight, bias}, conv_layers.k.lin.linear.*
 * All four run on a hand-written fast engine: GCN and GIN with published parity; GAT and MPNN,
 * whose names and semantics are ours (no reference), checked against the autograd tape of the
 * tests (tests/tape/). */
enum dp_layer { DP_LAYER_GCN, DP_LAYER_GIN, DP_LAYER_GAT, DP_LAYER_MPNN, DP_LAYER_COUNT };
/* How many graph layers for N groups: max(1, N/2) (published), N, log2 N, or a fixed count.
 * Layer 0 is its own; every later layer reuses the middle layer (published behaviour). */
enum dp_layer_rule { DP_RULE_HALF, DP_RULE_N, DP_RULE_LOG2, DP_RULE_FIXED, DP_RULE_COUNT };
/* Input features: raw (paper) or log1p then standardised with stored mean/std. */
enum dp_feat { DP_FEAT_RAW, DP_FEAT_LOG, DP_FEAT_COUNT };

/* Names of the enums below and their parsers (false, *out untouched, for an unknown name). */
const char *dp_layer_name(enum dp_layer l);          /* "gcn" */
bool        dp_layer_parse(const char *s, enum dp_layer *out);
const char *dp_layer_rule_name(enum dp_layer_rule r); /* "half", "n", "log2", "fixed" */
bool        dp_layer_rule_parse(const char *s, enum dp_layer_rule *out);
const char *dp_feat_name(enum dp_feat f);             /* "raw", "log" */
bool        dp_feat_parse(const char *s, enum dp_feat *out);

struct dp_arch {
    enum dp_layer      layer;
    int                n_feat;     /* 3 (published) or DP_N_FEATURES_MAX (with the cost features) */
    int                hidden;     /* 64 */
    int                n_out;      /* 12 */
    enum dp_layer_rule rule;
    int                n_layers;   /* for DP_RULE_FIXED */
    int                max_layers; /* cap on the rule's count (0: none) */
    bool               gru;
    int                heads;      /* GAT heads */
    int                towers;     /* MPNN/PNA towers */
    int                set2set_steps; /* 0: N (published) */
    enum dp_feat       feat;
    double             feat_mean[DP_N_FEATURES_MAX], feat_std[DP_N_FEATURES_MAX]; /* for DP_FEAT_LOG;
                                                                      first n_feat used */
};

/* The published GCN inspector's architecture. */
void dp_arch_default(struct dp_arch *a);
/* Checks an architecture's fields; DP_ERR_INVALID naming the field. */
enum dp_status dp_arch_check(const struct dp_arch *a, struct dp_error *err);
/* The weights (float32 values) a model of architecture a holds, counted without allocating
 * them; 0 when a fails dp_arch_check. */
size_t dp_arch_n_weights(const struct dp_arch *a);
/* Layers used for a graph of n groups. */
int dp_arch_n_layers(const struct dp_arch *a, int n_groups);

struct dp_model;

/* A model with parameters initialised as PyTorch would (seeded). Owned by the caller. */
enum dp_status dp_model_init(const struct dp_arch *a, uint64_t seed, struct dp_model **out,
                             struct dp_error *err);
void dp_model_free(struct dp_model *m);
struct dp_model *dp_model_clone(const struct dp_model *m);
const struct dp_arch *dp_model_arch(const struct dp_model *m);

/* Parameters, by index in a fixed order, or by PyTorch name. The data pointer is the model's
 * own storage (row-major, PyTorch layout): writable through a non-const model. */
struct dp_param {
    const char *name;
    int         n_dims;
    int64_t     shape[4];
    size_t      size;
    float      *data;
};
/* The parameter count, and parameter i (0 <= i < count) described into *out (borrowed views). */
int  dp_model_n_params(const struct dp_model *m);
void dp_model_param(const struct dp_model *m, int i, struct dp_param *out);
int  dp_model_find_param(const struct dp_model *m, const char *name); /* -1 if absent */
/* Copies data into the named parameter; DP_ERR_NOT_FOUND / DP_ERR_SHAPE on mismatch, DP_ERR_INVALID
 * on a non-finite value. */
enum dp_status dp_model_set_param(struct dp_model *m, const char *name, int n_dims,
                                  const int64_t *shape, const float *data, struct dp_error *err);

/* Reads parameters in the reference JSON form ({params: {name: {shape, data}}}, PyTorch names,
 * row-major) into m. Every parameter of m must be present and every entry must be one of m's;
 * shape mismatches, non-finite values and malformed JSON fail naming the file and JSON path, and
 * leave m untouched. */
enum dp_status dp_model_load_torch_json(struct dp_model *m, const char *path,
                                        struct dp_error *err);
/* The same, building the architecture from the file: its "architecture" object (layer, nfeat,
 * hidden, outputs, gru) when present, otherwise inferred from the parameter names and shapes
 * (published defaults for the rest: layer rule half, Set2Set steps N, raw features). The new
 * model is owned by the caller (dp_model_free). */
enum dp_status dp_model_load_torch_json_new(const char *path, struct dp_model **out,
                                            struct dp_error *err);

/* The 12 raw outputs (before label scaling) for one grouped graph. About 5 ms of one core for
 * the published GCN on 100 groups. Graphs with no group, edges out of range or non-finite
 * features fail (DP_ERR_SHAPE / DP_ERR_INVALID) naming the graph. */
enum dp_status dp_model_predict(const struct dp_model *m, const struct dp_grouped *g,
                                float out[DP_N_OUTPUTS], struct dp_error *err);
/* Graph embedding (the Set2Set output, dp_model_embed_size floats): everything but the head.
 * Inspectors that share a body share embeddings. */
int            dp_model_embed_size(const struct dp_model *m);
enum dp_status dp_model_embed(const struct dp_model *m, const struct dp_grouped *g, float *emb,
                              struct dp_error *err);
void           dp_model_head(const struct dp_model *m, const float *emb, float out[DP_N_OUTPUTS]);

/* The same for n graphs in one call (out: n x DP_N_OUTPUTS, emb: n x dp_model_embed_size, in
 * the graphs' order): graphs of equal size run stacked a few at a time, the stacks shared among
 * dp_threads() threads (dp/compute.h). Values equal n single calls'. The first graph that fails
 * the single call's checks fails the call, named; DP_ERR_NOMEM. */
enum dp_status dp_model_predict_batch(const struct dp_model *m, const struct dp_grouped *const *g,
                                      int n, float *out, struct dp_error *err);
enum dp_status dp_model_embed_batch(const struct dp_model *m, const struct dp_grouped *const *g,
                                    int n, float *emb, struct dp_error *err);
/* The head over n embeddings (emb: n x dp_model_embed_size; out: n x DP_N_OUTPUTS) in one pass:
 * one graph's cached embedding under many settings, or many graphs'. DP_ERR_NOMEM only. */
enum dp_status dp_model_head_batch(const struct dp_model *m, const float *emb, int n, float *out);

/* Gradient of sum_o w[o] * out[o] with respect to every feature m reads (grad: n_groups x
 * arch.n_feat, row-major: the three published features, then the cost features when n_feat is 6;
 * after the feature transform is undone, i.e. d/d raw feature), through the whole network. out
 * may be NULL. */
enum dp_status dp_model_input_grad(const struct dp_model *m, const struct dp_grouped *g,
                                   const float w[DP_N_OUTPUTS], double *grad,
                                   float out[DP_N_OUTPUTS], struct dp_error *err);


/* ---- training ---- */
enum dp_train_mode {
    DP_TRAIN_FULL,      /* every parameter */
    DP_TRAIN_HEAD,      /* the published transfer: only the MLP head learns */
    DP_TRAIN_HEAD_LAST, /* head plus the reused middle graph layer and the GRU */
    DP_TRAIN_MODE_COUNT
};
struct dp_adam_opts {
    float lr, beta1, beta2, eps, weight_decay; /* 0.003, 0.9, 0.999, 1e-8, 1e-6 */
};
/* Fills o with the defaults listed above (those of the published training). */
void dp_adam_default(struct dp_adam_opts *o);

struct dp_trainer;
/* Adam state for m (borrows m; m must outlive the trainer). */
enum dp_status dp_trainer_init(struct dp_model *m, enum dp_train_mode mode,
                               const struct dp_adam_opts *o, struct dp_trainer **out,
                               struct dp_error *err);
void dp_trainer_free(struct dp_trainer *t);
/* MSE over n graphs x 12 against targets (n x 12, already scaled), its gradient, then one Adam
 * step (weight decay added to the gradient as L2, as torch.optim.Adam; parameters without a
 * gradient in this mode are not touched). *loss gets the loss before the step. With step = false
 * only the loss and gradients are computed. Graphs may differ in size: equal-sized ones run
 * stacked, a few at a time. About 0.45 s of one core for 32 graphs of 100 groups (published GCN). */
enum dp_status dp_trainer_step(struct dp_trainer *t, const struct dp_grouped *const *graphs,
                               int n, const float *targets, bool step, float *loss,
                               struct dp_error *err);
/* The same on cached embeddings (n x embed_size): head-only training (DP_TRAIN_HEAD). */
enum dp_status dp_trainer_step_head(struct dp_trainer *t, const float *emb, int n,
                                    const float *targets, bool step, float *loss,
                                    struct dp_error *err);
/* The gradient of parameter i from the last step (NULL if not trainable in this mode). */
const float *dp_trainer_grad(const struct dp_trainer *t, int i);
/* Mean squared error of the model on n graphs (no gradients). */
enum dp_status dp_model_loss(const struct dp_model *m, const struct dp_grouped *const *graphs,
                             int n, const float *targets, float *loss, struct dp_error *err);

#endif
