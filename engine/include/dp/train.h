/* train.h: training an inspector on a dataset (the paper's recipe: a seeded 60/20/20 split,
 * batches of 32 graphs, Adam lr 0.003 and weight decay 1e-6, MSE on labels divided by their
 * training maximum, early stopping on validation loss keeping the best; and this project's
 * "driple-c" recipe, which learns: log features and targets, few layers), a split that holds out
 * whole model families, per-output MAPE/RMSE/R², and transfer learning from a base inspector
 * (head only, on embeddings computed once, or head plus the last graph layer). */
#ifndef DP_TRAIN_H
#define DP_TRAIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dp/dataset.h"
#include "dp/inspector.h"
#include "dp/model.h"
#include "dp/sa.h"
#include "dp/sweep.h"

enum dp_split_kind { DP_SPLIT_RANDOM, DP_SPLIT_MODELS, DP_SPLIT_COUNT };
const char *dp_split_name(enum dp_split_kind k);          /* "random", "hold-out-models" */
bool        dp_split_parse(const char *s, enum dp_split_kind *out); /* also "models" */

/* Indices into ds->samples (trainable samples only: a grouped graph and 12 finite labels). */
struct dp_split {
    int  n_train, n_val, n_test;
    int *train, *val, *test;
};

/* Splits ds's trainable samples: random (seeded shuffle; val and test get round(frac x n)) or
 * holding out whole model families (the samples of a family all land in one part). A family is
 * dp_zoo_family() of the sample's model (graph name when it has none): every size variant of a
 * zoo architecture (resnet18 .. wide_resnet50_2) is one, a model outside the zoo is its own.
 * The families, in name order, are shuffled with the seed; the first round(test_frac x F) (at
 * least 1) are test, the next round(val_frac x F) (at least 1) val, the rest (at least 1)
 * train, so datasets of other settings holding the same families split the same way. Samples of
 * generated architectures (dp_gen_is_generated) are training material: they are always in
 * train and not counted as families, so adding them leaves the held-out families as they were.
 * The same seed gives the same split. DP_ERR_INVALID with fewer than 1 trainable sample, or for
 * hold-out-models with fewer than 3 families. Free with dp_split_free. */
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

/* What the network learns for each output (the inspector stores the mapping back, see
 * enum dp_out_transform in dp/inspector.h); the published head ends in a LeakyReLU, so every
 * kind keeps the training targets >= 0:
 *   MAX   label / training maximum (the paper; linear);
 *   RANGE (label - lo) / (hi - lo) (linear, min-max over the training labels, lo lowered by a
 *         tenth of the range so that smaller labels stay reachable);
 *   LOG   the same on log1p(label / 1 unit): relative errors count alike across the two to three
 *         decades that durations span; below 1 unit (ms, %, MB/s) the error is absolute;
 *   BASE  transfer only: the base inspector's kind (LOG if its outputs are log, RANGE if they
 *         are shifted, else MAX). */
enum dp_target { DP_TARGET_MAX, DP_TARGET_RANGE, DP_TARGET_LOG, DP_TARGET_BASE, DP_TARGET_COUNT };
const char *dp_target_name(enum dp_target t);                  /* "max", "range", "log", "base" */
bool        dp_target_parse(const char *s, enum dp_target *out);

/* The kind of target an inspector's outputs were trained on (what DP_TARGET_BASE resolves to). */
enum dp_target dp_target_of(const struct dp_inspector *insp);

/* Labels whose magnitude is below this (1 ms, 1 %, 1 MB/s) are left out of MAPE: an idle gap of
 * 0.2 ms predicted as 0.6 ms is 200% off yet immaterial, and such labels would dominate the mean.
 * RMSE and R² use every label. */
#define DP_MAPE_FLOOR 1.0

/* Named sets of options. PAPER: the published recipe (dp_train_opts_default). DRIPLE_C: this
 * project's (notes/accuracy.md): log features, at most 2 graph layers, log-normalised targets,
 * Adam lr 0.01 halved after each 10 epochs without a better validation loss (going on from the
 * best parameters), 300 epochs at most, patience 40 (the rest as the paper). */
enum dp_recipe { DP_RECIPE_PAPER, DP_RECIPE_DRIPLE_C, DP_RECIPE_COUNT };
const char *dp_recipe_name(enum dp_recipe r);                  /* "paper", "driple-c" */
bool        dp_recipe_parse(const char *s, enum dp_recipe *out);

struct dp_train_opts {
    enum dp_layer       layer;      /* DP_LAYER_GCN */
    int                 hidden;     /* 64 */
    int                 n_feat;     /* input features: DP_N_FEATURES (paper) or DP_N_FEATURES_MAX
                                       (with the cost features; every trainable sample's grouped
                                       graph must have them) */
    enum dp_feat        feat;       /* DP_FEAT_RAW (paper) or DP_FEAT_LOG */
    enum dp_layer_rule  rule;       /* DP_RULE_HALF (paper): layers for N groups */
    int                 n_layers;   /* for DP_RULE_FIXED */
    int                 max_layers; /* cap on the rule's count, 0 = none (paper) */
    int                 epochs;     /* maximum, 200 */
    int                 patience;   /* epochs without a better validation loss before stopping, 20 */
    int                 batch;      /* graphs per step, 32 */
    uint64_t            seed;       /* split, initialisation and shuffling, 1 */
    int                 restarts;   /* from scratch: initialisations trained on the one split
                                       (1..DP_TRAIN_MAX_RESTARTS, 1); the one with the lowest
                                       mean validation MAPE is kept (dp_train) */
    enum dp_split_kind  split;
    double              val_frac, test_frac; /* 0.2, 0.2 */
    struct dp_adam_opts adam;       /* dp_adam_default */
    enum dp_target      target;     /* DP_TARGET_MAX (paper) */
    double              lr_decay;   /* multiply lr by this after lr_plateau epochs without a
                                       better validation loss, and go on from the best
                                       parameters with fresh Adam moments; 1 = constant (paper) */
    int                 lr_plateau; /* 0 = never */
    enum dp_train_mode  mode;       /* transfer: DP_TRAIN_HEAD or DP_TRAIN_HEAD_LAST */
    /* Polled after every batch: when it becomes non-zero (a SIGINT handler or another thread sets
     * it; atomic, so both are defined behaviour) training stops and keeps the best model so far.
     * May be NULL. */
    atomic_int *cancel;
    void (*progress)(const struct dp_train_progress *p, void *ud); /* may be NULL */
    void *ud;
};
/* The paper's recipe (the values in the comments above). */
void dp_train_opts_default(struct dp_train_opts *o);
/* The defaults of a recipe (callbacks, cancel flag and seed are reset too). */
void dp_train_opts_recipe(struct dp_train_opts *o, enum dp_recipe r);

/* The most initialisations dp_train tries (dp_train_opts.restarts). */
#define DP_TRAIN_MAX_RESTARTS 16

/* One initialisation of dp_train: its seed (dp_train_restart_seed), epochs, and the mean MAPE
 * over the outputs on the validation part (what selects) and on the test part (reported only). */
struct dp_train_restart {
    uint64_t seed;
    int      epochs_run, best_epoch;
    double   val_mape, test_mape;
};

struct dp_train_result {
    int    epochs_run, best_epoch;
    double first_train_loss, last_train_loss, best_val_loss;
    double seconds;              /* wall time of the training (embedding cache included) */
    double embed_seconds;        /* transfer, head mode: the one-off embedding pass */
    bool   cancelled;
    struct dp_split split;       /* owned: free with dp_split_free (dp_train_result_free) */
    int    n_restarts, kept;     /* dp_train: initialisations trained, the 0-based one kept */
    struct dp_train_restart restart[DP_TRAIN_MAX_RESTARTS];
};
void dp_train_result_free(struct dp_train_result *r);

/* The mean of the finite values of mape[0..DP_N_OUTPUTS) (NaN when none is): how an
 * inspector's errors read as one figure. */
double dp_mape_mean(const double *mape);

/* The seed of initialisation r (0-based) of dp_train on a split seeded with `seed`: the seed
 * itself for r = 0 (one restart trains as before restarts existed), a fixed stride from it
 * otherwise. */
uint64_t dp_train_restart_seed(uint64_t seed, int r);

/* Trains a new inspector from scratch on ds. Output transforms follow o->target (fitted on the
 * training labels; DP_TARGET_BASE is invalid here); the
 * provenance (origin "scratch", data kind, split, epochs, seconds, sizes, val/test errors) is
 * filled. With o->restarts K > 1, K networks train on the same split (o->seed), initialisation
 * and batch order seeded with dp_train_restart_seed(o->seed, r); the one with the lowest mean
 * validation MAPE (dp_mape_mean; the first on a tie) is kept, the test part never selects.
 * res->restart lists each; res's epochs and losses are the kept one's, its seconds all of them.
 * DP_ERR_INVALID for K outside 1..DP_TRAIN_MAX_RESTARTS. *out is owned by the caller. res may be
 * NULL. DP_ERR_CANCELLED is never returned: a cancelled run returns DP_OK with res->cancelled
 * (the best initialisation so far, the interrupted one's best epoch included). */
enum dp_status dp_train(const struct dp_dataset *ds, const struct dp_train_opts *o,
                        struct dp_inspector **out, struct dp_train_result *res,
                        struct dp_error *err);
/* Transfers base to ds's setting (o->mode DP_TRAIN_HEAD: only the MLP head learns, on embeddings
 * computed once; DP_TRAIN_HEAD_LAST: the head plus the middle layer and GRU). Output transforms
 * follow o->target, fitted on the new training labels; provenance origin "transfer", base_id =
 * base's setting. layer/hidden/n_feat/feat of o are ignored (the base's are kept); restarts
 * above 1 are refused (DP_ERR_INVALID: a transfer starts from the base's parameters). */
enum dp_status dp_transfer(const struct dp_inspector *base, const struct dp_dataset *ds,
                           const struct dp_train_opts *o, struct dp_inspector **out,
                           struct dp_train_result *res, struct dp_error *err);

/* Per-output MAPE (%, mean of |pred - label| / |label| over labels with |label| >= DP_MAPE_FLOOR;
 * NaN when none), RMSE (in the output's unit) and R² (1 - SSE / SS about the labels' mean; NaN when
 * the labels are constant, i.e. their variance is below 1e-12 x their squared mean) of the inspector's predictions (dp_inspector_metric) on samples
 * idx[0..n) of ds. */
enum dp_status dp_evaluate(const struct dp_inspector *insp, const struct dp_dataset *ds,
                           const int *idx, int n, struct dp_eval *out, struct dp_error *err);

/* ---- the setting-aware inspector (dp/sa.h) over a sweep (dp/sweep.h) ---- */

/* Which rows test and validate: RANDOM over the sweep's graphs (val_frac, test_frac of them);
 * FAMILIES whole zoo families (dp_split_make's hold-out of models; generated graphs train);
 * GPUS and NETWORKS the rows of the GPUs or networks named in `test_held` (test) and `val_held`
 * (validation), every graph training on the rest. */
enum dp_sa_split { DP_SA_SPLIT_RANDOM, DP_SA_SPLIT_FAMILIES, DP_SA_SPLIT_GPUS,
                   DP_SA_SPLIT_NETWORKS, DP_SA_SPLIT_COUNT };
const char *dp_sa_split_name(enum dp_sa_split k); /* "random", "families", "gpus", "networks" */
bool dp_sa_split_parse(const char *s, enum dp_sa_split *out);

struct dp_sa_train_opts {
    struct dp_sa_arch  arch;         /* 256, 128, 5 members */
    int                epochs;       /* per member, 150 */
    int                patience;     /* 20 */
    int                batch;        /* rows per step, 256 */
    float              lr;           /* Adam, 0.003 */
    float              weight_decay; /* 1e-5 */
    double             lr_decay;     /* x 0.5 after lr_plateau (6) epochs without a better val
                                        loss, going on from the best parameters */
    int                lr_plateau;
    enum dp_sa_split   split;
    bool               plain_loss;   /* false: each output's error weighted by its labels' spread
                                        (log units) over the mean spread, Huber beyond 0.1
                                        deviation (notes/accuracy.md, experiments J); true: the
                                        squared error of every output alike */
    double             pair_weight;  /* the loss's batch-pair term on the iteration time
                                        (dp_sa_loss.pair; 0.3, 0: none), over the pairs of
                                        training rows of one graph (model, optimizer,
                                        precision) on one setting at consecutive batch sizes */
    const char        *test_held, *val_held; /* GPUS / NETWORKS: comma lists of names */
    double             val_frac, test_frac;  /* RANDOM / FAMILIES: 0.2, 0.2 */
    uint64_t           seed;         /* 1 */
    atomic_int        *cancel;       /* may be NULL: stops after the current epoch */
    void (*progress)(int member, const struct dp_train_progress *p, void *ud);
    void              *ud;
};
void dp_sa_train_opts_default(struct dp_sa_train_opts *o);

/* Trains a setting-aware inspector on sw over body (a per-setting inspector whose GNN body is
 * frozen and embeds every graph once; taken over, also on failure). Rows whose footprint
 * exceeds their GPU are left out. Each member trains on the split's training rows with its own
 * seed and early stopping on the validation rows; the validation rows then calibrate the 80%
 * interval (the spread scaled so 80% of them fall inside) and the training graphs make the OOD
 * reference. The test rows give prov.evals[0] (coverage included). *out owned by the caller. */
enum dp_status dp_sa_train(const struct dp_sweep *sw, const struct dp_gpu_catalog *cat,
                           struct dp_inspector *body, const struct dp_sa_train_opts *o,
                           struct dp_sa_inspector **out, struct dp_error *err);

/* ---- the setting-aware inspector and one setting's samples (a user's own cluster) ---- */

struct dp_sa_tune_opts {
    int          epochs;       /* per member, 300 */
    int          patience;     /* 30 */
    int          batch;        /* samples per step, 16 */
    float        lr;           /* Adam, 1e-3 (x 0.5 after 6 epochs without progress) */
    float        weight_decay; /* 1e-5 */
    double       val_frac;     /* 0.3 of the samples validate (at least one of two or more) */
    uint64_t     seed;         /* the split and the shuffling, 1 */
    atomic_int  *cancel;       /* may be NULL: stops after the current epoch */
    void (*progress)(int member, const struct dp_train_progress *p, void *ud);
    void        *ud;
};
void dp_sa_tune_opts_default(struct dp_sa_tune_opts *o);

struct dp_sa_tune_result {
    double train_loss_before, train_loss_after; /* the ensemble's MSE (target units) on the
                                                   training samples */
};

/* Fine-tunes sa for one setting from ds's samples (measured with `driple record`, or simulated):
 * the setting is `setting` (an id of cat's GPUs) or, NULL or "", the dataset's; a dataset naming
 * another setting is refused. Every sample needs a grouped graph, its profile and the body's
 * features (DP_ERR_INVALID naming the first that lacks one; also for an empty dataset, a GPU
 * the head cannot read, or no label at all). A seeded share (o->val_frac) validates; each
 * ensemble member's head (all three layers; the body, the normalisation and the OOD reference
 * stay) trains with Adam from the base's parameters, keeping the epoch with the best validation
 * loss (the base's own included); the validation samples then recalibrate the 80% interval.
 * Missing labels (NaN; iteration and memory 0) are left out of the loss. Fills
 * prov.tuned (dataset and base stay "": the caller names them). On failure sa is as before. */
enum dp_status dp_sa_tune(struct dp_sa_inspector *sa, const struct dp_dataset *ds,
                          const struct dp_gpu_catalog *cat, const char *setting,
                          const struct dp_sa_tune_opts *o, struct dp_sa_tune_result *res,
                          struct dp_error *err);

/* sa's error on every sample of ds with a label, on `setting` (or the dataset's, checked as
 * dp_sa_tune does): per output MAPE, R^2 and the 80% interval's coverage over the labels
 * present; out->name "dataset", out->held the setting id. Fails as dp_sa_tune. */
enum dp_status dp_sa_evaluate(const struct dp_sa_inspector *sa, const struct dp_dataset *ds,
                              const struct dp_gpu_catalog *cat, const char *setting,
                              struct dp_sa_eval *out, struct dp_error *err);

#endif
