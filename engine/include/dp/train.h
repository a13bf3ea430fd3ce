/* train.h: training an inspector on a dataset (the paper's recipe: a seeded 60/20/20 split,
 * batches of 32 graphs, Adam lr 0.003 and weight decay 1e-6, MSE on labels divided by their
 * training maximum, early stopping on validation loss keeping the best), a split that holds out
 * whole models, per-output MAPE/RMSE/R², and transfer learning from a base inspector (head only,
 * on embeddings computed once, or head plus the last graph layer). */
#ifndef DP_TRAIN_H
#define DP_TRAIN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "dp/dataset.h"
#include "dp/inspector.h"
#include "dp/model.h"

enum dp_split_kind { DP_SPLIT_RANDOM, DP_SPLIT_MODELS, DP_SPLIT_COUNT };
const char *dp_split_name(enum dp_split_kind k);          /* "random", "hold-out-models" */
bool        dp_split_parse(const char *s, enum dp_split_kind *out); /* also "models" */

/* Indices into ds->samples (trainable samples only: a grouped graph and 12 finite labels). */
struct dp_split {
    int  n_train, n_val, n_test;
    int *train, *val, *test;
};

/* Splits ds's trainable samples: random (seeded shuffle; val and test get round(frac x n)) or
 * holding out whole models (a model's samples all land in one part; models are shuffled with the
 * seed and given to test, then val, until each holds its fraction of the samples). The same seed
 * gives the same split. DP_ERR_INVALID with fewer than 1 trainable sample, or for hold-out-models
 * with fewer than 3 distinct models. Free with dp_split_free. */
enum dp_status dp_split_make(const struct dp_dataset *ds, enum dp_split_kind kind, double val_frac,
                             double test_frac, uint64_t seed, struct dp_split *out,
                             struct dp_error *err);
void dp_split_free(struct dp_split *s);

/* Progress, reported after every batch (epoch_end false) and every epoch (epoch_end true). */
struct dp_train_progress {
    int    epoch, epochs;        /* 1-based epoch, the maximum */
    int    batch, n_batches;     /* 1-based batch within the epoch */
    double train_loss;           /* mean over this epoch's batches so far */
    double val_loss;             /* after the epoch (NaN before the first) */
    double best_val_loss;
    int    best_epoch;
    double elapsed_s;
    bool   epoch_end;
};

struct dp_train_opts {
    enum dp_layer       layer;      /* DP_LAYER_GCN */
    int                 hidden;     /* 64 */
    enum dp_feat        feat;       /* DP_FEAT_RAW (paper) or DP_FEAT_LOG */
    enum dp_layer_rule  rule;       /* DP_RULE_HALF (paper): layers for N groups */
    int                 n_layers;   /* for DP_RULE_FIXED */
    int                 max_layers; /* cap on the rule's count, 0 = none (paper) */
    int                 epochs;     /* maximum, 200 */
    int                 patience;   /* epochs without a better validation loss before stopping, 20 */
    int                 batch;      /* graphs per step, 32 */
    uint64_t            seed;       /* split, initialisation and shuffling, 1 */
    enum dp_split_kind  split;
    double              val_frac, test_frac; /* 0.2, 0.2 */
    struct dp_adam_opts adam;       /* dp_adam_default */
    enum dp_train_mode  mode;       /* transfer: DP_TRAIN_HEAD or DP_TRAIN_HEAD_LAST */
    /* Polled after every batch: when it becomes non-zero (a SIGINT handler sets it) training stops
     * and keeps the best model so far. May be NULL. */
    volatile sig_atomic_t *cancel;
    void (*progress)(const struct dp_train_progress *p, void *ud); /* may be NULL */
    void *ud;
};
void dp_train_opts_default(struct dp_train_opts *o);

struct dp_train_result {
    int    epochs_run, best_epoch;
    double first_train_loss, last_train_loss, best_val_loss;
    double seconds;              /* wall time of the training (embedding cache included) */
    double embed_seconds;        /* transfer, head mode: the one-off embedding pass */
    bool   cancelled;
    struct dp_split split;       /* owned: free with dp_split_free (dp_train_result_free) */
};
void dp_train_result_free(struct dp_train_result *r);

/* Trains a new inspector from scratch on ds. Output scales are the training-label maxima; the
 * provenance (origin "scratch", data kind, split, epochs, seconds, sizes, val/test errors) is
 * filled. *out is owned by the caller. res may be NULL. DP_ERR_CANCELLED is never returned: a
 * cancelled run returns DP_OK with res->cancelled. */
enum dp_status dp_train(const struct dp_dataset *ds, const struct dp_train_opts *o,
                        struct dp_inspector **out, struct dp_train_result *res,
                        struct dp_error *err);
/* Transfers base to ds's setting (o->mode DP_TRAIN_HEAD: only the MLP head learns, on embeddings
 * computed once; DP_TRAIN_HEAD_LAST: the head plus the middle layer and GRU). Scales are the new
 * training maxima; provenance origin "transfer", base_id = base's setting. layer/hidden/feat of
 * o are ignored (the base's are kept). */
enum dp_status dp_transfer(const struct dp_inspector *base, const struct dp_dataset *ds,
                           const struct dp_train_opts *o, struct dp_inspector **out,
                           struct dp_train_result *res, struct dp_error *err);

/* Per-output MAPE (%, over labels != 0), RMSE and R² (NaN when the labels are constant) of the
 * inspector's scaled predictions on samples idx[0..n) of ds. */
enum dp_status dp_evaluate(const struct dp_inspector *insp, const struct dp_dataset *ds,
                           const int *idx, int n, struct dp_eval *out, struct dp_error *err);

#endif
