/* train.c: the training recipes around the network's Adam trainer (dp/model.h): seeded
 * splits (random or holding out whole model families), targets (labels scaled by their training
 * maximum as published, min-max normalised, or the same on log1p), an optional learning-rate
 * decay on plateau, mini-batches, early stopping on validation loss keeping the best parameters,
 * cancellation that keeps the best so far, per-output MAPE/RMSE/R², and transfer learning
 * (head-only on embeddings computed once, or head plus the last graph layer). */
#include "dp/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/rng.h"
#include "dataset_impl.h"
#include "train_impl.h"
#include "dp/clock.h"
#include "dp/zoo.h" /* dp_zoo_family: hold-out groups */
#include "dp/zoo_gen.h"

static const char *const split_names[DP_SPLIT_COUNT] = {"random", "hold-out-models"};

const char *dp_split_name(enum dp_split_kind k) {
    return k >= 0 && k < DP_SPLIT_COUNT ? split_names[k] : "?";
}

bool dp_split_parse(const char *s, enum dp_split_kind *out) {
    if (!strcmp(s, "random")) { *out = DP_SPLIT_RANDOM; return true; }
    if (!strcmp(s, "models") || !strcmp(s, "hold-out-models")) { *out = DP_SPLIT_MODELS; return true; }
    return false;
}

static const char *const target_names[DP_TARGET_COUNT] = {"max", "range", "log", "base"};
static const char *const recipe_names[DP_RECIPE_COUNT] = {"paper", "driple-c"};

const char *dp_target_name(enum dp_target t) {
    return t >= 0 && t < DP_TARGET_COUNT ? target_names[t] : "?";
}

bool dp_target_parse(const char *s, enum dp_target *out) {
    for (int t = 0; t < DP_TARGET_COUNT; t++)
        if (!strcmp(s, target_names[t])) {
            *out = (enum dp_target)t;
            return true;
        }
    return false;
}

const char *dp_recipe_name(enum dp_recipe r) {
    return r >= 0 && r < DP_RECIPE_COUNT ? recipe_names[r] : "?";
}

bool dp_recipe_parse(const char *s, enum dp_recipe *out) {
    for (int r = 0; r < DP_RECIPE_COUNT; r++)
        if (!strcmp(s, recipe_names[r])) {
            *out = (enum dp_recipe)r;
            return true;
        }
    return false;
}

void dp_train_opts_recipe(struct dp_train_opts *o, enum dp_recipe r) {
    dp_train_opts_default(o);
    if (r != DP_RECIPE_DRIPLE_C) return;
    o->feat = DP_FEAT_LOG;
    o->max_layers = 2;
    o->target = DP_TARGET_LOG;
    o->epochs = 300;
    o->patience = 40;
    o->lr_decay = 0.5;
    o->lr_plateau = 10;
    o->adam.lr = 0.01f;
}

void dp_train_opts_default(struct dp_train_opts *o) {
    memset(o, 0, sizeof *o);
    o->layer = DP_LAYER_GCN;
    o->hidden = 64;
    o->n_feat = DP_N_FEATURES;
    o->feat = DP_FEAT_RAW;
    o->rule = DP_RULE_HALF;
    o->epochs = 200;
    o->patience = 20;
    o->batch = 32;
    o->seed = 1;
    o->restarts = 1;
    o->split = DP_SPLIT_RANDOM;
    o->val_frac = 0.2;
    o->test_frac = 0.2;
    dp_adam_default(&o->adam);
    o->mode = DP_TRAIN_HEAD;
    o->target = DP_TARGET_MAX;
    o->lr_decay = 1.0;
    o->lr_plateau = 0;
}

void dp_split_free(struct dp_split *s) {
    if (!s) return;
    free(s->train);
    free(s->val);
    free(s->test);
    memset(s, 0, sizeof *s);
}

void dp_train_result_free(struct dp_train_result *r) {
    if (r) dp_split_free(&r->split);
}

void dp_shuffle(int *a, int n, uint64_t *rng) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(dp_rng_next(rng) % (uint64_t)(i + 1));
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* What hold-out-models keeps together: the model's zoo family (resnet18 .. wide_resnet50_2 are
 * one), or the model (graph) name outside the zoo. A held-out ResNet-50 with a ResNet-101 in
 * training would test interpolation between sizes of a known architecture, not a new one. */
static const char *model_key(const struct dp_sample *s) {
    return dp_zoo_family(s->model && s->model[0] ? s->model : s->graph ? s->graph : "");
}

/* A generated architecture (dp/zoo_gen.h) is training material: holding out families holds out
 * the zoo's (and users') models, never the generator's corpus. */
static bool generated(const struct dp_sample *s) { return dp_gen_is_generated(s->model); }

enum dp_status dp_family_parts(const char *const *keys, int n, double val_frac, double test_frac,
                               uint64_t seed, int *part, int *n_families, struct dp_error *err) {
    /* Distinct families in name order (not the items': every setting's dataset must give the
     * same assignment, so that a transfer holds out what its base never saw), then shuffled with
     * the seed; whole families go to test, then val, by their number. */
    int *fam = malloc(((size_t)n + 1) * sizeof *fam), nf = 0;
    if (!fam) return dp_error_set(err, DP_ERR_NOMEM, "split: out of memory");
    for (int i = 0; i < n; i++) {
        part[i] = 0;
        if (!keys[i]) continue;
        int at = nf;
        bool seen = false;
        for (int m = 0; m < nf && !seen; m++) {
            int c = strcmp(keys[fam[m]], keys[i]);
            seen = c == 0;
            if (c > 0 && at == nf) at = m;
        }
        if (seen) continue;
        memmove(fam + at + 1, fam + at, (size_t)(nf - at) * sizeof *fam);
        fam[at] = i;
        nf++;
    }
    *n_families = nf;
    if (nf >= 3) {
        uint64_t rng = seed;
        dp_shuffle(fam, nf, &rng);
        int f_test = (int)lround(test_frac * nf), f_val = (int)lround(val_frac * nf);
        if (test_frac > 0 && f_test < 1) f_test = 1;
        if (val_frac > 0 && f_val < 1) f_val = 1;
        while (f_test + f_val >= nf) { /* the last family always trains */
            if (f_test >= f_val) f_test--;
            else f_val--;
        }
        for (int m = 0; m < nf; m++) {
            int p = m < f_test ? 2 : m < f_test + f_val ? 1 : 0;
            for (int i = 0; i < n; i++)
                if (keys[i] && !strcmp(keys[i], keys[fam[m]])) part[i] = p;
        }
    }
    free(fam);
    return DP_OK;
}

enum dp_status dp_split_make(const struct dp_dataset *ds, enum dp_split_kind kind, double val_frac,
                             double test_frac, uint64_t seed, struct dp_split *out,
                             struct dp_error *err) {
    memset(out, 0, sizeof *out);
    if (!(val_frac >= 0 && test_frac >= 0 && val_frac + test_frac < 1))
        return dp_error_set(err, DP_ERR_INVALID, "split: fractions %g + %g must be in [0, 1)",
                            val_frac, test_frac);
    int n = 0;
    int *idx = malloc(((size_t)ds->n_samples + 1) * sizeof *idx);
    int *part = malloc(((size_t)ds->n_samples + 1) * sizeof *part); /* 0 train, 1 val, 2 test */
    enum dp_status st = DP_OK;
    if (!idx || !part) { st = dp_error_set(err, DP_ERR_NOMEM, "split: out of memory"); goto done; }
    for (int i = 0; i < ds->n_samples; i++)
        if (dp_dataset_sample_trainable(&ds->samples[i])) idx[n++] = i;
    if (n < 1) {
        st = dp_error_set(err, DP_ERR_INVALID,
                          "dataset '%s': no trainable sample (each needs a grouped graph and 12 labels)",
                          ds->setting);
        goto done;
    }
    if (kind == DP_SPLIT_RANDOM) {
        uint64_t rng = seed;
        dp_shuffle(idx, n, &rng);
        int n_test = (int)lround(test_frac * n), n_val = (int)lround(val_frac * n);
        while (n_test + n_val >= n && (n_test > 0 || n_val > 0)) {
            if (n_test >= n_val && n_test > 0) n_test--;
            else n_val--;
        }
        for (int i = 0; i < n; i++) part[i] = i < n_test ? 2 : i < n_test + n_val ? 1 : 0;
    } else {
        const char **keys = malloc(((size_t)n + 1) * sizeof *keys);
        if (!keys) {
            st = dp_error_set(err, DP_ERR_NOMEM, "split: out of memory");
            goto done;
        }
        for (int i = 0; i < n; i++)
            keys[i] = generated(&ds->samples[idx[i]]) ? NULL : model_key(&ds->samples[idx[i]]);
        int n_models = 0;
        st = dp_family_parts(keys, n, val_frac, test_frac, seed, part, &n_models, err);
        free(keys);
        if (st) goto done;
        if (n_models < 3) {
            st = dp_error_set(err, DP_ERR_INVALID, "dataset '%s': holding out models needs at "
                              "least 3 model families, it has %d", ds->setting, n_models);
            goto done;
        }
    }
    int counts[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) counts[part[i]]++;
    out->train = malloc(((size_t)counts[0] + 1) * sizeof *out->train);
    out->val = malloc(((size_t)counts[1] + 1) * sizeof *out->val);
    out->test = malloc(((size_t)counts[2] + 1) * sizeof *out->test);
    if (!out->train || !out->val || !out->test) {
        st = dp_error_set(err, DP_ERR_NOMEM, "split: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (part[i] == 0) out->train[out->n_train++] = idx[i];
        else if (part[i] == 1) out->val[out->n_val++] = idx[i];
        else out->test[out->n_test++] = idx[i];
    }
    qsort(out->train, (size_t)out->n_train, sizeof *out->train, cmp_int);
    qsort(out->val, (size_t)out->n_val, sizeof *out->val, cmp_int);
    qsort(out->test, (size_t)out->n_test, sizeof *out->test, cmp_int);
    if (out->n_train < 1) {
        st = dp_error_set(err, DP_ERR_INVALID, "dataset '%s': the split leaves no training sample",
                          ds->setting);
        goto done;
    }
done:
    free(idx);
    free(part);
    if (st) dp_split_free(out);
    return st;
}

/* ---- evaluation ---- */

static void eval_preds(const struct dp_dataset *ds, const int *idx, int n, const double *pred,
                       struct dp_eval *e) {
    for (int o = 0; o < DP_N_OUTPUTS; o++) {
        double se = 0, ape = 0, mean = 0, tot = 0;
        int n_ape = 0;
        for (int i = 0; i < n; i++) mean += ds->samples[idx[i]].labels[o];
        mean = n ? mean / n : 0;
        for (int i = 0; i < n; i++) {
            double y = ds->samples[idx[i]].labels[o], p = pred[(size_t)i * DP_N_OUTPUTS + o];
            se += (p - y) * (p - y);
            tot += (y - mean) * (y - mean);
            if (fabs(y) >= DP_MAPE_FLOOR) { ape += fabs(p - y) / fabs(y); n_ape++; }
        }
        e->rmse[o] = n ? sqrt(se / n) : NAN;
        e->mape[o] = n_ape ? 100.0 * ape / n_ape : NAN;
        /* Labels equal up to float noise (a network peak at the link's capacity for every job)
         * have no variance to explain: R2 would be 1 - SSE / ~0, so it is NaN there. */
        e->r2[o] = n && tot > 1e-12 * n * mean * mean && tot > 0 ? 1.0 - se / tot : NAN;
    }
}

enum dp_status dp_evaluate(const struct dp_inspector *insp, const struct dp_dataset *ds,
                           const int *idx, int n, struct dp_eval *out, struct dp_error *err) {
    double *pred = malloc(((size_t)n + 1) * DP_N_OUTPUTS * sizeof *pred);
    if (!pred) return dp_error_set(err, DP_ERR_NOMEM, "evaluate: out of memory");
    for (int i = 0; i < n; i++) {
        const struct dp_sample *s = &ds->samples[idx[i]];
        if (!s->grouped) {
            free(pred);
            return dp_error_set(err, DP_ERR_INVALID, "evaluate: sample %d has no grouped graph", idx[i]);
        }
        enum dp_status st = dp_inspector_predict(insp, s->grouped, NULL, pred + (size_t)i * DP_N_OUTPUTS, err);
        if (st) { free(pred); return st; }
    }
    eval_preds(ds, idx, n, pred, out);
    free(pred);
    return DP_OK;
}

/* ---- the training loop ---- */

static double now_s(void) { return dp_clock_ms() / 1e3; }

static void copy_params(struct dp_model *dst, const struct dp_model *src) {
    for (int i = 0; i < dp_model_n_params(src); i++) {
        struct dp_param a, b;
        dp_model_param(src, i, &a);
        dp_model_param(dst, i, &b);
        memcpy(b.data, a.data, a.size * sizeof *a.data);
    }
}

struct loop {
    struct dp_model        *m;
    const struct dp_dataset *ds;
    const struct dp_split   *split;
    const struct dp_train_opts *o;
    enum dp_train_mode      mode;
    const float            *targets;   /* ds->n_samples x 12, scaled */
    const float            *emb;       /* head mode: ds->n_samples x E, else NULL */
    int                     E;
    double                  t0;
    uint64_t                seed;      /* the batch order's */
};

/* MSE of the model on samples idx (scaled targets), from embeddings in head mode. */
static enum dp_status loss_on(const struct loop *L, const int *idx, int n, double *loss,
                              struct dp_error *err) {
    if (n == 0) { *loss = NAN; return DP_OK; }
    if (L->emb) {
        double s = 0;
        for (int i = 0; i < n; i++) {
            float out[DP_N_OUTPUTS];
            dp_model_head(L->m, L->emb + (size_t)idx[i] * L->E, out);
            for (int o = 0; o < DP_N_OUTPUTS; o++) {
                double d = (double)out[o] - L->targets[(size_t)idx[i] * DP_N_OUTPUTS + o];
                s += d * d;
            }
        }
        *loss = s / ((double)n * DP_N_OUTPUTS);
        return DP_OK;
    }
    const struct dp_grouped **g = malloc((size_t)n * sizeof *g);
    float *t = malloc((size_t)n * DP_N_OUTPUTS * sizeof *t);
    enum dp_status st = DP_OK;
    if (!g || !t) st = dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
    /* In chunks, so that memory stays bounded on large validation sets. */
    double sum = 0;
    for (int i0 = 0; !st && i0 < n; i0 += 64) {
        int k = n - i0 < 64 ? n - i0 : 64;
        for (int i = 0; i < k; i++) {
            g[i] = L->ds->samples[idx[i0 + i]].grouped;
            memcpy(t + (size_t)i * DP_N_OUTPUTS, L->targets + (size_t)idx[i0 + i] * DP_N_OUTPUTS,
                   DP_N_OUTPUTS * sizeof *t);
        }
        float l = 0;
        st = dp_model_loss(L->m, g, k, t, &l, err);
        sum += (double)l * k;
    }
    free(g);
    free(t);
    *loss = sum / n;
    return st;
}

static enum dp_status run_loop(const struct loop *L, struct dp_train_result *res,
                               struct dp_error *err) {
    const struct dp_train_opts *o = L->o;
    const struct dp_split *sp = L->split;
    struct dp_trainer *tr = NULL;
    struct dp_model *best = NULL;
    int B = o->batch > 0 ? o->batch : 32;
    int *order = malloc(((size_t)sp->n_train + 1) * sizeof *order);
    const struct dp_grouped **g = malloc((size_t)B * sizeof *g);
    float *t = malloc((size_t)B * DP_N_OUTPUTS * sizeof *t);
    float *e = L->emb ? malloc((size_t)B * (size_t)L->E * sizeof *e) : NULL;
    enum dp_status st = DP_OK;
    if (!order || !g || !t || (L->emb && !e)) { st = dp_error_set(err, DP_ERR_NOMEM, "train: out of memory"); goto done; }
    if ((st = dp_trainer_init(L->m, L->mode, &o->adam, &tr, err))) goto done;
    if (!(best = dp_model_clone(L->m))) { st = dp_error_set(err, DP_ERR_NOMEM, "train: out of memory"); goto done; }
    memcpy(order, sp->train, (size_t)sp->n_train * sizeof *order);
    uint64_t rng = L->seed ^ UINT64_C(0x5DEECE66D);
    int n_batches = (sp->n_train + B - 1) / B, bad = 0;
    float lr = o->adam.lr;
    res->best_val_loss = INFINITY;
    res->best_epoch = 0;
    res->first_train_loss = NAN;
    for (int epoch = 1; epoch <= o->epochs; epoch++) {
        dp_shuffle(order, sp->n_train, &rng);
        double sum = 0;
        int seen = 0, done_batches = 0;
        for (int b = 0; b < n_batches; b++) {
            int k = sp->n_train - b * B < B ? sp->n_train - b * B : B;
            for (int i = 0; i < k; i++) {
                int s = order[b * B + i];
                memcpy(t + (size_t)i * DP_N_OUTPUTS, L->targets + (size_t)s * DP_N_OUTPUTS,
                       DP_N_OUTPUTS * sizeof *t);
                if (L->emb) memcpy(e + (size_t)i * L->E, L->emb + (size_t)s * L->E, (size_t)L->E * sizeof *e);
                else g[i] = L->ds->samples[s].grouped;
            }
            float l = 0;
            st = L->emb ? dp_trainer_step_head(tr, e, k, t, true, &l, err)
                        : dp_trainer_step(tr, g, k, t, true, &l, err);
            if (st) goto done;
            sum += (double)l * k;
            seen += k;
            done_batches++;
            if (o->progress) {
                struct dp_train_progress p = {epoch, o->epochs, b + 1, n_batches, sum / seen,
                                              NAN, res->best_val_loss, res->best_epoch,
                                              now_s() - L->t0, false};
                o->progress(&p, o->ud);
            }
            if (o->cancel && *o->cancel) break;
        }
        double train_loss = sum / (seen ? seen : 1);
        if (epoch == 1) res->first_train_loss = train_loss;
        res->last_train_loss = train_loss;
        res->epochs_run = epoch;
        double val = NAN;
        if (sp->n_val > 0) {
            if ((st = loss_on(L, sp->val, sp->n_val, &val, err))) goto done;
        } else {
            val = train_loss; /* no validation set: the training loss decides */
        }
        if (!isfinite(val)) val = INFINITY;
        if (val < res->best_val_loss) {
            res->best_val_loss = val;
            res->best_epoch = epoch;
            copy_params(best, L->m);
            bad = 0;
        } else {
            bad++;
            if (o->lr_plateau > 0 && o->lr_decay > 0 && o->lr_decay < 1 &&
                bad % o->lr_plateau == 0) {
                /* Go on from the best parameters at the smaller rate with fresh Adam moments: after
                 * a loss spike (lr 0.01 on a large dataset) the run otherwise spends its patience
                 * climbing back and stops worse than it was. */
                struct dp_adam_opts a = o->adam;
                lr = a.lr = (float)(lr * o->lr_decay);
                copy_params(L->m, best);
                dp_trainer_free(tr);
                tr = NULL;
                if ((st = dp_trainer_init(L->m, L->mode, &a, &tr, err))) goto done;
            }
        }
        if (o->progress) {
            struct dp_train_progress p = {epoch, o->epochs, done_batches, n_batches, train_loss, val,
                                          res->best_val_loss, res->best_epoch, now_s() - L->t0, true};
            o->progress(&p, o->ud);
        }
        if (o->cancel && *o->cancel) { res->cancelled = true; break; }
        if (o->patience > 0 && bad >= o->patience) break;
    }
    if (res->best_epoch > 0) copy_params(L->m, best);
done:
    dp_trainer_free(tr);
    dp_model_free(best);
    free(order);
    free(g);
    free(t);
    free(e);
    return st;
}

enum dp_target dp_target_of(const struct dp_inspector *insp) {
    const struct dp_output_meta *m = dp_inspector_output(insp, 0);
    if (m->transform == DP_OUT_LOG) return DP_TARGET_LOG;
    return m->offset != 0 || m->span != 1 ? DP_TARGET_RANGE : DP_TARGET_MAX;
}

/* Fits each output's transform (kind `kind`) on the training labels, stores it in insp, and
 * returns the targets of every sample (untrainable rows stay 0). */
static enum dp_status make_targets(struct dp_inspector *insp, const struct dp_dataset *ds,
                                   const struct dp_split *sp, enum dp_target kind, float **out,
                                   struct dp_error *err) {
    *out = NULL;
    for (int o = 0; o < DP_N_OUTPUTS; o++) {
        double mx = 0, lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < sp->n_train; i++) {
            double y = ds->samples[sp->train[i]].labels[o];
            if (fabs(y) > mx) mx = fabs(y);
            double v = kind == DP_TARGET_LOG ? log1p(y > 0 ? y : 0) : y;
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
        double w = hi - lo;
        if (!(w > 1e-9 * (1 + fabs(hi)))) w = fabs(hi) > 0 ? fabs(hi) : 1.0; /* constant labels */
        lo -= 0.1 * w;
        enum dp_status st;
        if (kind == DP_TARGET_LOG)
            st = dp_inspector_set_transform(insp, o, DP_OUT_LOG, 1.0, lo, w);
        else if (kind == DP_TARGET_RANGE)
            st = dp_inspector_set_transform(insp, o, DP_OUT_LINEAR, 1.0, lo, w);
        else
            st = dp_inspector_set_transform(insp, o, DP_OUT_LINEAR, mx > 0 ? mx : 1.0, 0.0, 1.0);
        if (st)
            return dp_error_set(err, DP_ERR_INVALID,
                                "train: output %s: labels give no usable %s transform",
                                dp_outputs[o].name, dp_target_name(kind));
    }
    float *t = calloc((size_t)ds->n_samples * DP_N_OUTPUTS + 1, sizeof *t);
    if (!t) return dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
    for (int i = 0; i < ds->n_samples; i++)
        if (dp_dataset_sample_trainable(&ds->samples[i]))
            for (int o = 0; o < DP_N_OUTPUTS; o++)
                t[(size_t)i * DP_N_OUTPUTS + o] =
                    (float)dp_inspector_target(insp, o, ds->samples[i].labels[o]);
    *out = t;
    return DP_OK;
}

static void fill_provenance(struct dp_inspector *insp, const struct dp_dataset *ds,
                            const struct dp_train_opts *o, const struct dp_train_result *r,
                            const char *origin, const char *mode) {
    struct dp_provenance *p = dp_inspector_provenance_mut(insp);
    snprintf(p->origin, sizeof p->origin, "%s", origin);
    snprintf(p->mode, sizeof p->mode, "%s", mode);
    snprintf(p->data, sizeof p->data, "%s", dp_dataset_data_kind(ds));
    snprintf(p->split, sizeof p->split, "%s", dp_split_name(o->split));
    p->epochs = r->epochs_run;
    p->seconds = r->seconds;
    p->n_train = r->split.n_train;
    p->n_val = r->split.n_val;
    p->n_test = r->split.n_test;
}

static enum dp_status finish_eval(struct dp_inspector *insp, const struct dp_dataset *ds,
                                  const struct dp_split *sp, const float *emb, int E,
                                  struct dp_error *err) {
    struct dp_provenance *p = dp_inspector_provenance_mut(insp);
    if (!emb) {
        enum dp_status st;
        if ((st = dp_evaluate(insp, ds, sp->val, sp->n_val, &p->val, err)) ||
            (st = dp_evaluate(insp, ds, sp->test, sp->n_test, &p->test, err)))
            return st;
        return DP_OK;
    }
    /* Head mode: predictions from the cached embeddings. */
    const int *sets[2] = {sp->val, sp->test};
    int ns[2] = {sp->n_val, sp->n_test};
    struct dp_eval *outs[2] = {&p->val, &p->test};
    for (int k = 0; k < 2; k++) {
        double *pred = malloc(((size_t)ns[k] + 1) * DP_N_OUTPUTS * sizeof *pred);
        if (!pred) return dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
        for (int i = 0; i < ns[k]; i++) {
            float out[DP_N_OUTPUTS];
            dp_model_head(dp_inspector_model(insp), emb + (size_t)sets[k][i] * E, out);
            for (int o = 0; o < DP_N_OUTPUTS; o++)
                pred[(size_t)i * DP_N_OUTPUTS + o] = dp_inspector_metric(insp, o, out[o]);
        }
        eval_preds(ds, sets[k], ns[k], pred, outs[k]);
        free(pred);
    }
    return DP_OK;
}

/* A network reading n_feat features needs the cost features in every sample: DP_ERR_INVALID
 * naming the first sample without them and the option that adds them. */
static enum dp_status need_cost(const struct dp_dataset *ds, int n_feat, const char *who,
                                struct dp_error *err) {
    if (n_feat > DP_N_FEATURES)
        for (int i = 0; i < ds->n_samples; i++)
            if (ds->samples[i].grouped && !ds->samples[i].grouped->cost)
                return dp_error_set(err, DP_ERR_INVALID,
                                    "%s: sample %d (%s) has no cost features (flops, bytes, "
                                    "param_bytes): build the dataset with --cost-features", who, i,
                                    ds->samples[i].model ? ds->samples[i].model : "?");
    return DP_OK;
}

double dp_mape_mean(const double *mape) {
    double s = 0;
    int n = 0;
    for (int o = 0; o < DP_N_OUTPUTS; o++)
        if (isfinite(mape[o])) { s += mape[o]; n++; }
    return n ? s / n : NAN;
}

uint64_t dp_train_restart_seed(uint64_t seed, int r) {
    return seed + (uint64_t)r * UINT64_C(0x9E3779B97F4A7C15); /* 2^64 / golden ratio */
}

/* Initialisation r (0-based) of dp_train: a network of architecture a seeded with
 * dp_train_restart_seed(o->seed, r), trained on sp and evaluated on its validation and test
 * parts (the provenance's val and test). res gets the loop's figures, not the split. */
static enum dp_status train_one(const struct dp_dataset *ds, const struct dp_train_opts *o,
                                const struct dp_arch *a, const struct dp_split *sp, int r,
                                double t0, struct dp_inspector **out, struct dp_train_result *res,
                                struct dp_error *err) {
    struct dp_model *m = NULL;
    struct dp_inspector *insp = NULL;
    float *targets = NULL;
    uint64_t seed = dp_train_restart_seed(o->seed, r);
    enum dp_status st = dp_model_init(a, seed, &m, err);
    if (st) goto done;
    st = dp_inspector_init(m, &insp, err);
    m = NULL;
    if (st) goto done;
    if ((st = make_targets(insp, ds, sp, o->target, &targets, err))) goto done;
    if ((st = dp_inspector_set_setting(insp, ds->setting))) {
        st = dp_error_set(err, st, "train: setting id '%s' too long", ds->setting);
        goto done;
    }
    struct loop L = {dp_inspector_model_mut(insp), ds, sp, o, DP_TRAIN_FULL, targets, NULL, 0, t0,
                     seed};
    if ((st = run_loop(&L, res, err))) goto done;
    st = finish_eval(insp, ds, sp, NULL, 0, err);
done:
    free(targets);
    dp_model_free(m);
    if (st) dp_inspector_free(insp);
    else *out = insp;
    return st;
}

/* Whether validation MAPE v beats the kept one's: a finite figure beats NaN. */
static bool better(double v, double kept) { return isfinite(v) && !(v >= kept); }

enum dp_status dp_train(const struct dp_dataset *ds, const struct dp_train_opts *o,
                        struct dp_inspector **out, struct dp_train_result *res_out,
                        struct dp_error *err) {
    struct dp_train_result res;
    memset(&res, 0, sizeof res);
    struct dp_inspector *insp = NULL, *cand = NULL;
    double t0 = now_s();
    if (o->target < 0 || o->target >= DP_TARGET_BASE)
        return dp_error_set(err, DP_ERR_INVALID, "train: target must be max, range or log");
    if (o->n_feat != DP_N_FEATURES && o->n_feat != DP_N_FEATURES_MAX)
        return dp_error_set(err, DP_ERR_INVALID, "train: n_feat %d (expected %d or %d)", o->n_feat,
                            DP_N_FEATURES, DP_N_FEATURES_MAX);
    if (o->restarts < 1 || o->restarts > DP_TRAIN_MAX_RESTARTS)
        return dp_error_set(err, DP_ERR_INVALID, "train: restarts %d (expected 1 to %d)",
                            o->restarts, DP_TRAIN_MAX_RESTARTS);
    enum dp_status st = need_cost(ds, o->n_feat, "train", err);
    if (st) return st;
    st = dp_split_make(ds, o->split, o->val_frac, o->test_frac, o->seed, &res.split, err);
    if (st) return st;
    if (o->restarts > 1 && res.split.n_val < 1) {
        st = dp_error_set(err, DP_ERR_INVALID, "dataset '%s': %d restarts need a validation part "
                          "to choose by, the split has none", ds->setting, o->restarts);
        goto fail;
    }
    struct dp_arch a;
    dp_arch_default(&a);
    a.layer = o->layer;
    a.hidden = o->hidden > 0 ? o->hidden : 64;
    a.n_feat = o->n_feat;
    a.feat = o->feat;
    a.rule = o->rule;
    if (o->n_layers > 0) a.n_layers = o->n_layers;
    a.max_layers = o->max_layers;
    if (a.feat == DP_FEAT_LOG) {
        /* Standardise log1p(feature) with the training groups' mean and deviation. */
        for (int f = 0; f < a.n_feat; f++) {
            double s = 0, s2 = 0;
            long cnt = 0;
            for (int i = 0; i < res.split.n_train; i++) {
                const struct dp_grouped *g = ds->samples[res.split.train[i]].grouped;
                for (int r = 0; r < g->n_groups; r++) {
                    double v = log1p(dp_grouped_feat(g, r, f));
                    s += v;
                    s2 += v * v;
                    cnt++;
                }
            }
            double mean = cnt ? s / cnt : 0, var = cnt ? s2 / cnt - mean * mean : 1;
            a.feat_mean[f] = mean;
            a.feat_std[f] = var > 1e-12 ? sqrt(var) : 1.0;
        }
    }
    for (int r = 0; r < o->restarts; r++) {
        struct dp_train_result one;
        memset(&one, 0, sizeof one);
        if ((st = train_one(ds, o, &a, &res.split, r, t0, &cand, &one, err))) goto fail;
        const struct dp_provenance *p = dp_inspector_provenance(cand);
        res.restart[r] = (struct dp_train_restart){dp_train_restart_seed(o->seed, r),
                                                   one.epochs_run, one.best_epoch,
                                                   dp_mape_mean(p->val.mape),
                                                   dp_mape_mean(p->test.mape)};
        res.n_restarts = r + 1;
        if (!insp || better(res.restart[r].val_mape, res.restart[res.kept].val_mape)) {
            dp_inspector_free(insp);
            insp = cand;
            res.kept = r;
            res.epochs_run = one.epochs_run;
            res.best_epoch = one.best_epoch;
            res.first_train_loss = one.first_train_loss;
            res.last_train_loss = one.last_train_loss;
            res.best_val_loss = one.best_val_loss;
        } else {
            dp_inspector_free(cand);
        }
        cand = NULL;
        if (one.cancelled) { res.cancelled = true; break; }
    }
    res.seconds = now_s() - t0;
    fill_provenance(insp, ds, o, &res, "scratch", "full");
    *out = insp;
    if (res_out) *res_out = res;
    else dp_train_result_free(&res);
    return DP_OK;
fail:
    dp_inspector_free(cand);
    dp_inspector_free(insp);
    dp_train_result_free(&res);
    return st;
}

/* ---- the embedding cache (transfer, head mode) ---- */

/* Embeds every trainable sample in one batched call (the engine shares the graphs among its
 * threads). */
static enum dp_status embed_all(const struct dp_model *m, const struct dp_dataset *ds, float *emb,
                                int E, struct dp_error *err) {
    const struct dp_grouped **gs = malloc(((size_t)ds->n_samples + 1) * sizeof *gs);
    int *at = malloc(((size_t)ds->n_samples + 1) * sizeof *at);
    float *got = malloc(((size_t)ds->n_samples * E + 1) * sizeof *got);
    enum dp_status st = DP_OK;
    if (!gs || !at || !got) {
        st = dp_error_set(err, DP_ERR_NOMEM, "transfer: out of memory");
        goto done;
    }
    int n = 0;
    for (int i = 0; i < ds->n_samples; i++)
        if (dp_dataset_sample_trainable(&ds->samples[i])) {
            gs[n] = ds->samples[i].grouped;
            at[n++] = i;
        }
    if (n > 0 && (st = dp_model_embed_batch(m, gs, n, got, err))) goto done;
    for (int k = 0; k < n; k++)
        memcpy(emb + (size_t)at[k] * E, got + (size_t)k * E, (size_t)E * sizeof *emb);
done:
    free(gs);
    free(at);
    free(got);
    return st;
}

enum dp_status dp_transfer(const struct dp_inspector *base, const struct dp_dataset *ds,
                           const struct dp_train_opts *o, struct dp_inspector **out,
                           struct dp_train_result *res_out, struct dp_error *err) {
    struct dp_train_result res;
    memset(&res, 0, sizeof res);
    struct dp_inspector *insp = NULL;
    float *targets = NULL, *emb = NULL;
    double t0 = now_s();
    if (o->mode != DP_TRAIN_HEAD && o->mode != DP_TRAIN_HEAD_LAST)
        return dp_error_set(err, DP_ERR_INVALID, "transfer: mode must be head or head+last");
    if (o->restarts > 1)
        return dp_error_set(err, DP_ERR_INVALID, "transfer: %d restarts: a transfer starts from "
                            "the base's parameters, it has no initialisation to vary", o->restarts);
    if (o->target < 0 || o->target >= DP_TARGET_COUNT)
        return dp_error_set(err, DP_ERR_INVALID, "transfer: unknown target kind %d", (int)o->target);
    enum dp_target kind = o->target == DP_TARGET_BASE ? dp_target_of(base) : o->target;
    enum dp_status st =
        need_cost(ds, dp_model_arch(dp_inspector_model(base))->n_feat, "transfer", err);
    if (st) return st;
    st = dp_split_make(ds, o->split, o->val_frac, o->test_frac, o->seed, &res.split, err);
    if (st) return st;
    struct dp_model *m = dp_model_clone(dp_inspector_model(base));
    if (!m) { st = dp_error_set(err, DP_ERR_NOMEM, "transfer: out of memory"); goto fail; }
    if ((st = dp_inspector_init(m, &insp, err))) goto fail;
    if ((st = make_targets(insp, ds, &res.split, kind, &targets, err))) goto fail;
    if ((st = dp_inspector_set_setting(insp, ds->setting))) {
        st = dp_error_set(err, st, "transfer: setting id '%s' too long", ds->setting);
        goto fail;
    }
    int E = dp_model_embed_size(dp_inspector_model(insp));
    if (o->mode == DP_TRAIN_HEAD) {
        /* The body is frozen: one embedding per sample serves every epoch. */
        double te = now_s();
        if (!(emb = calloc((size_t)ds->n_samples * (size_t)E + 1, sizeof *emb))) {
            st = dp_error_set(err, DP_ERR_NOMEM, "transfer: out of memory");
            goto fail;
        }
        if ((st = embed_all(dp_inspector_model(insp), ds, emb, E, err))) goto fail;
        res.embed_seconds = now_s() - te;
    }
    struct loop L = {dp_inspector_model_mut(insp), ds, &res.split, o, o->mode, targets, emb, E, t0,
                     o->seed};
    if ((st = run_loop(&L, &res, err))) goto fail;
    res.seconds = now_s() - t0;
    fill_provenance(insp, ds, o, &res, "transfer", o->mode == DP_TRAIN_HEAD ? "head" : "head+last");
    struct dp_provenance *pv = dp_inspector_provenance_mut(insp);
    snprintf(pv->base_id, sizeof pv->base_id, "%s", dp_inspector_setting(base));
    if ((st = finish_eval(insp, ds, &res.split, emb, E, err))) goto fail;
    free(targets);
    free(emb);
    *out = insp;
    if (res_out) *res_out = res;
    else dp_train_result_free(&res);
    return DP_OK;
fail:
    free(targets);
    free(emb);
    dp_inspector_free(insp);
    dp_train_result_free(&res);
    return st;
}
