/* sa_train.c: training the setting-aware inspector (dp_sa_train in dp/train.h) over a sweep:
 * the body embeds every graph once (one batched call), each row becomes one normalised input (embedding,
 * profile, setting, physical ratios), the split picks test and validation rows (random graphs,
 * whole zoo families, whole GPUs or whole networks), every ensemble member trains with Adam and
 * early stopping, the validation rows calibrate the 80% interval and the training graphs make the
 * reference for the out-of-distribution flag; the test rows are evaluated (MAPE, R^2, coverage). */
#include "dp/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "dp/clock.h"
#include "dp/names.h"
#include "dp/zoo.h"
#include "dp/zoo_gen.h"
#include "train_impl.h"

#define NO DP_SA_N_OUT
#define MAX_REF 512
/* The least standard deviation of an input after the embedding (logs of totals and ratios,
 * flags): an input nearly constant over the training rows would otherwise turn a physically
 * small change into many deviations. The FLOPs of memory-class ops (scatter-adds) are 0.0085
 * +- 0.02 log-GFLOP over sweep sw3; Swin-T's 0.4 GFLOP (the gradients of Gather-based
 * slicing) then read as 17 deviations and its iteration time as 8x the simulator's (notes/
 * accuracy.md, experiment S). */
#define SD_FLOOR 0.5
/* The robust loss's Huber threshold, in deviations of the standardised log target: nearly the
 * absolute error, as MAPE is (experiments J). */
#define HUBER 0.1

/* The batch-pair term's weight against the rows' loss: every run with it predicted fewer
 * batch doublings slower than the simulator says (0-2 of 49 against 3-6 without), and 0.3 kept
 * the held-out GPUs' and networks' errors within their seed-to-seed spread where 1 cost the
 * networks 3 points of iteration time (notes/accuracy.md, experiments N). */
#define PAIR_WEIGHT 0.3

static const char *const split_names[DP_SA_SPLIT_COUNT] = {"random", "families", "gpus",
                                                           "networks"};

const char *dp_sa_split_name(enum dp_sa_split k) {
    return (unsigned)k < DP_SA_SPLIT_COUNT ? split_names[k] : "?";
}

bool dp_sa_split_parse(const char *s, enum dp_sa_split *out) {
    for (int k = 0; s && k < DP_SA_SPLIT_COUNT; k++)
        if (!strcmp(s, split_names[k])) {
            *out = (enum dp_sa_split)k;
            return true;
        }
    return false;
}

void dp_sa_train_opts_default(struct dp_sa_train_opts *o) {
    memset(o, 0, sizeof *o);
    o->arch = (struct dp_sa_arch){256, 128, 5};
    o->epochs = 150;
    o->patience = 20;
    o->batch = 256;
    o->lr = 0.003f;
    o->weight_decay = 1e-5f;
    o->lr_decay = 0.5;
    o->lr_plateau = 6;
    o->pair_weight = PAIR_WEIGHT;
    o->split = DP_SA_SPLIT_RANDOM;
    o->val_frac = 0.2;
    o->test_frac = 0.2;
    o->seed = 1;
}

/* ---- embeddings, one per graph, in one batched call (the engine shares the graphs among its
 * threads: dp/compute.h) ---- */

static enum dp_status embed_graphs(const struct dp_model *m, const struct dp_sweep *sw, float *emb,
                                   struct dp_error *err) {
    const struct dp_grouped **gs = malloc(((size_t)sw->n_graphs + 1) * sizeof *gs);
    if (!gs) return dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
    for (int i = 0; i < sw->n_graphs; i++) gs[i] = sw->graphs[i].grouped;
    enum dp_status st = sw->n_graphs > 0 ? dp_model_embed_batch(m, gs, sw->n_graphs, emb, err)
                                         : DP_OK;
    free(gs);
    return st;
}

/* ---- the split ---- */

/* part[r] for each kept row (0 train, 1 val, 2 test); the held-out names into held. */
static enum dp_status split_rows(const struct dp_sweep *sw, const int *rows, int n,
                                 const struct dp_sa_train_opts *o, int *part, char *held,
                                 size_t held_n, struct dp_error *err) {
    held[0] = '\0';
    if (o->split == DP_SA_SPLIT_GPUS || o->split == DP_SA_SPLIT_NETWORKS) {
        if (!o->test_held || !*o->test_held)
            return dp_error_set(err, DP_ERR_INVALID, "train: holding out %s needs the names to "
                                "test on", dp_sa_split_name(o->split));
        snprintf(held, held_n, "%s", o->test_held);
        int n_test = 0;
        for (int i = 0; i < n; i++) {
            const struct dp_setting *s = &sw->rows[rows[i]].setting;
            const char *name = o->split == DP_SA_SPLIT_GPUS ? s->gpu : dp_network_name(s->network);
            part[i] = dp_name_in_list(o->test_held, name) ? 2 : dp_name_in_list(o->val_held, name) ? 1 : 0;
            n_test += part[i] == 2;
        }
        if (!n_test)
            return dp_error_set(err, DP_ERR_INVALID, "train: no row of the sweep on %s",
                                o->test_held);
        return DP_OK;
    }
    /* Per graph, then per row. */
    int ng = sw->n_graphs, *gpart = malloc(((size_t)ng + 1) * sizeof *gpart);
    if (!gpart) return dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
    enum dp_status st = DP_OK;
    if (o->split == DP_SA_SPLIT_RANDOM) {
        int *order = malloc(((size_t)ng + 1) * sizeof *order);
        if (!order) {
            free(gpart);
            return dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
        }
        for (int g = 0; g < ng; g++) order[g] = g;
        uint64_t rng = o->seed;
        dp_shuffle(order, ng, &rng);
        int n_test = (int)lround(o->test_frac * ng), n_val = (int)lround(o->val_frac * ng);
        for (int k = 0; k < ng; k++) gpart[order[k]] = k < n_test ? 2 : k < n_test + n_val ? 1 : 0;
        free(order);
    } else {
        const char **keys = malloc(((size_t)ng + 1) * sizeof *keys);
        int nf = 0;
        if (!keys) {
            free(gpart);
            return dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
        }
        for (int g = 0; g < ng; g++)
            keys[g] = dp_gen_is_generated(sw->graphs[g].model) ? NULL
                                                               : dp_zoo_family(sw->graphs[g].model);
        st = dp_family_parts(keys, ng, o->val_frac, o->test_frac, o->seed, gpart, &nf, err);
        if (!st && nf < 3)
            st = dp_error_set(err, DP_ERR_INVALID, "train: holding out families needs at least "
                              "3 of them, the sweep has %d", nf);
        /* The held-out families, for the record. */
        for (int g = 0; !st && g < ng; g++) {
            if (gpart[g] != 2) continue;
            bool seen = false;
            for (int h = 0; h < g && !seen; h++) seen = gpart[h] == 2 && !strcmp(keys[h], keys[g]);
            if (!seen) {
                size_t len = strlen(held);
                snprintf(held + len, held_n - len, "%s%s", len ? ", " : "", keys[g]);
            }
        }
        free(keys);
    }
    for (int i = 0; !st && i < n; i++) part[i] = gpart[sw->rows[rows[i]].graph];
    free(gpart);
    return st;
}

/* ---- one member ---- */

struct data {
    const float *x, *t;     /* kept rows x n_in, x NO (targets) */
    int          nin;
    const int   *train, *val;
    int          n_train, n_val;
    const int   *pairs;     /* n_pairs x 2 kept rows: one graph at two batch sizes */
    int          n_pairs;
};

/* Member m's (m < 0: the ensemble's) mean squared error over rows idx[0..n) and the targets
 * present (a NaN target is missing); NaN when none. x and y: scratch of 1024 rows. */
static double rows_loss(const struct dp_sa_inspector *sa, int m, const struct data *d,
                        const int *idx, int n, float *x, float *y) {
    double s = 0;
    size_t present = 0;
    enum { CH = 1024 };
    for (int i0 = 0; i0 < n; i0 += CH) {
        int b = n - i0 < CH ? n - i0 : CH;
        for (int i = 0; i < b; i++)
            memcpy(x + (size_t)i * d->nin, d->x + (size_t)idx[i0 + i] * d->nin,
                   (size_t)d->nin * sizeof *x);
        dp_sa_head(sa, m, x, b, y, NULL);
        for (int i = 0; i < b; i++)
            for (int o = 0; o < NO; o++) {
                double t = d->t[(size_t)idx[i0 + i] * NO + o], e = y[(size_t)i * NO + o] - t;
                if (!isfinite(t)) continue;
                s += e * e;
                present++;
            }
    }
    return present ? s / (double)present : NAN;
}

static enum dp_status train_member(struct dp_sa_inspector *sa, int m, const struct data *d,
                                   const struct dp_sa_train_opts *o, const struct dp_sa_loss *loss,
                                   int *epochs_run, struct dp_error *err) {
    int B = o->batch > 0 ? o->batch : 256, nin = d->nin;
    /* Pairs per step beside the B rows: an eighth of B, drawn with replacement (a quarter
     * validated alike and cost 40% more CPU per epoch; experiments N). */
    bool paired = loss && loss->pair[DP_SA_ITERATION] > 0 && d->n_pairs > 0;
    int P = paired ? (B / 8 > 1 ? B / 8 : 1) : 0;
    int rows_max = B + 2 * P;
    size_t psz = dp_sa_member_size(sa);
    int *order = malloc(((size_t)d->n_train + 1) * sizeof *order);
    float *xb = malloc((size_t)(rows_max > 1024 ? rows_max : 1024) * nin * sizeof *xb);
    float *tb = malloc((size_t)rows_max * NO * sizeof *tb);
    float *yv = malloc((size_t)1024 * NO * sizeof *yv);
    float *best = malloc(psz * sizeof *best);
    struct dp_sa_trainer *tr = NULL;
    enum dp_status st = DP_OK;
    if (!order || !xb || !tb || !yv || !best) {
        st = dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
        goto done;
    }
    float lr = o->lr;
    if ((st = dp_sa_trainer_init(sa, m, lr, o->weight_decay, loss, &tr, err))) goto done;
    memcpy(order, d->train, (size_t)d->n_train * sizeof *order);
    memcpy(best, dp_sa_member(sa, m), psz * sizeof *best);
    uint64_t rng = o->seed * 7919u + (uint64_t)m * 104729u + 1;
    /* The starting parameters compete too: fine-tuning (dp_sa_tune) keeps the base's head when
     * no epoch validates better. */
    double best_val = rows_loss(sa, m, d, d->val, d->n_val, xb, yv), t0 = dp_clock_ms();
    if (!isfinite(best_val)) best_val = INFINITY;
    int bad = 0, best_epoch = 0, epoch;
    for (epoch = 1; epoch <= o->epochs; epoch++) {
        dp_shuffle(order, d->n_train, &rng);
        double sum = 0;
        for (int b0 = 0; b0 < d->n_train; b0 += B) {
            int k = d->n_train - b0 < B ? d->n_train - b0 : B;
            for (int i = 0, pr = 0; i < k + 2 * P; i++) {
                if (i >= k && (i - k) % 2 == 0) {
                    pr = (int)(dp_rng_uniform(&rng) * d->n_pairs);
                    if (pr >= d->n_pairs) pr = d->n_pairs - 1;
                }
                int r = i < k ? order[b0 + i] : d->pairs[2 * pr + (i - k) % 2];
                memcpy(xb + (size_t)i * nin, d->x + (size_t)r * nin, (size_t)nin * sizeof *xb);
                memcpy(tb + (size_t)i * NO, d->t + (size_t)r * NO, NO * sizeof *tb);
            }
            float l = 0;
            if ((st = dp_sa_trainer_step(tr, xb, tb, k + 2 * P, P, true, &l, err))) goto done;
            sum += (double)l * k;
        }
        double v = d->n_val ? rows_loss(sa, m, d, d->val, d->n_val, xb, yv) : NAN;
        if (!isfinite(v)) v = sum / d->n_train; /* no validation rows: the training loss */
        if (v < best_val) {
            best_val = v;
            best_epoch = epoch;
            memcpy(best, dp_sa_member(sa, m), psz * sizeof *best);
            bad = 0;
        } else if (++bad % (o->lr_plateau > 0 ? o->lr_plateau : o->epochs + 1) == 0 &&
                   o->lr_decay > 0 && o->lr_decay < 1) {
            /* Go on from the best parameters at the smaller rate with fresh Adam moments. */
            lr *= (float)o->lr_decay;
            memcpy(dp_sa_member(sa, m), best, psz * sizeof *best);
            dp_sa_trainer_free(tr);
            tr = NULL;
            if ((st = dp_sa_trainer_init(sa, m, lr, o->weight_decay, loss, &tr, err))) goto done;
        }
        if (o->progress) {
            struct dp_train_progress p = {epoch, o->epochs, 1, 1, sum / d->n_train, v, best_val,
                                          best_epoch, (dp_clock_ms() - t0) / 1e3, true};
            o->progress(m, &p, o->ud);
        }
        if ((o->patience > 0 && bad >= o->patience) || (o->cancel && *o->cancel)) break;
    }
    *epochs_run = epoch > o->epochs ? o->epochs : epoch;
    memcpy(dp_sa_member(sa, m), best, psz * sizeof *best);
done:
    dp_sa_trainer_free(tr);
    free(order);
    free(xb);
    free(tb);
    free(yv);
    free(best);
    return st;
}

/* ---- calibration, OOD reference, evaluation ---- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The p-quantile of v[0..n) (sorted in place); NaN when n is 0. */
static double quantile(double *v, int n, double p) {
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int k = (int)ceil(p * n) - 1;
    return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

/* Ensemble mean and spread for rows idx. */
static void ensemble(const struct dp_sa_inspector *sa, const struct data *d, const int *idx,
                     int n, float *mu, float *sp) {
    float *x = malloc((size_t)(n > 0 ? n : 1) * d->nin * sizeof *x);
    if (!x) {
        for (size_t i = 0; i < (size_t)n * NO; i++) mu[i] = sp[i] = NAN;
        return;
    }
    for (int i = 0; i < n; i++)
        memcpy(x + (size_t)i * d->nin, d->x + (size_t)idx[i] * d->nin, (size_t)d->nin * sizeof *x);
    dp_sa_head(sa, -1, x, n, mu, sp);
    free(x);
}

static enum dp_status calibrate(struct dp_sa_inspector *sa, const struct data *d,
                                struct dp_error *err) {
    int n = d->n_val;
    double q[NO], s0[NO];
    float *mu = malloc(((size_t)n + 1) * NO * sizeof *mu), *sp = malloc(((size_t)n + 1) * NO * sizeof *sp);
    double *v = malloc(((size_t)n + 1) * sizeof *v);
    if (!mu || !sp || !v) {
        free(mu);
        free(sp);
        free(v);
        return dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
    }
    ensemble(sa, d, d->val, n, mu, sp);
    dp_sa_calibration(sa, q, s0);
    for (int o = 0; o < NO; o++) {
        /* s0: the median spread, so that a row whose members agree by chance still gets a
         * width of the typical error; q: the 80th percentile of |error| / (spread + s0), over
         * the rows with this label (an output no row has keeps its calibration). */
        int k = 0;
        for (int i = 0; i < n; i++)
            if (isfinite(d->t[(size_t)d->val[i] * NO + o])) v[k++] = sp[(size_t)i * NO + o];
        if (!k) continue;
        s0[o] = quantile(v, k, 0.5);
        if (!(s0[o] > 1e-6)) s0[o] = 1e-6;
        k = 0;
        for (int i = 0; i < n; i++) {
            double t = d->t[(size_t)d->val[i] * NO + o];
            if (isfinite(t))
                v[k++] = fabs(mu[(size_t)i * NO + o] - t) / (sp[(size_t)i * NO + o] + s0[o]);
        }
        q[o] = quantile(v, k, 0.8);
    }
    dp_sa_set_calibration(sa, q, s0);
    free(mu);
    free(sp);
    free(v);
    return DP_OK;
}

/* Reference points: up to MAX_REF training graphs; threshold: the 99th percentile of the other
 * training graphs' distance to the nearest reference. */
static enum dp_status ood_reference(struct dp_sa_inspector *sa, const float *gx, const bool *in_train,
                                    int ng, uint64_t seed, struct dp_error *err) {
    int dims = dp_sa_ood_dims(sa), n_tr = 0;
    int *tr = malloc(((size_t)ng + 1) * sizeof *tr);
    if (!tr) return dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
    for (int g = 0; g < ng; g++)
        if (in_train[g]) tr[n_tr++] = g;
    uint64_t rng = seed ^ UINT64_C(0xA5A5A5A5);
    dp_shuffle(tr, n_tr, &rng);
    int n_ref = n_tr < MAX_REF ? n_tr : MAX_REF;
    float *pts = malloc(((size_t)n_ref + 1) * dims * sizeof *pts);
    double *dist = malloc(((size_t)n_tr + 1) * sizeof *dist);
    enum dp_status st = DP_OK;
    if (!pts || !dist) {
        st = dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
        goto done;
    }
    for (int i = 0; i < n_ref; i++)
        memcpy(pts + (size_t)i * dims, gx + (size_t)tr[i] * dims, (size_t)dims * sizeof *pts);
    if ((st = dp_sa_set_ood(sa, pts, n_ref, 0, err))) goto done;
    int n_rest = 0;
    for (int i = n_ref; i < n_tr; i++) dist[n_rest++] = dp_sa_ood_distance(sa, gx + (size_t)tr[i] * dims);
    /* Few training graphs: each against the others. */
    if (n_rest < 20)
        for (int i = 0; i < n_ref; i++) {
            double best = INFINITY;
            for (int j = 0; j < n_ref; j++) {
                if (i == j) continue;
                double s = 0;
                for (int k = 0; k < dims; k++) {
                    double e = pts[(size_t)i * dims + k] - pts[(size_t)j * dims + k];
                    s += e * e;
                }
                if (s < best) best = s;
            }
            if (isfinite(best)) dist[n_rest++] = sqrt(best / dims);
        }
    double thr = quantile(dist, n_rest, 0.99);
    st = dp_sa_set_ood(sa, pts, n_ref, isfinite(thr) && thr > 0 ? thr : 1.0, err);
done:
    free(tr);
    free(pts);
    free(dist);
    return st;
}

static void evaluate(const struct dp_sa_inspector *sa, const struct data *d, const int *idx, int n,
                     const double *labels, struct dp_sa_eval *e) {
    e->n_rows = n;
    float *mu = malloc(((size_t)n + 1) * NO * sizeof *mu), *sp = malloc(((size_t)n + 1) * NO * sizeof *sp);
    for (int o = 0; o < NO; o++) e->mape[o] = e->r2[o] = e->coverage[o] = NAN;
    if (!mu || !sp || !n) {
        free(mu);
        free(sp);
        return;
    }
    ensemble(sa, d, idx, n, mu, sp);
    double qq[NO], ss[NO];
    dp_sa_calibration(sa, qq, ss);
    for (int o = 0; o < NO; o++) {
        /* Over the rows with this label (a measured sample may lack some: NaN). */
        double ape = 0, mean = 0, se = 0, tot = 0;
        int n_ape = 0, inside = 0, np = 0;
        for (int i = 0; i < n; i++) np += isfinite(labels[(size_t)idx[i] * NO + o]) != 0;
        if (!np) continue;
        for (int i = 0; i < n; i++)
            if (isfinite(labels[(size_t)idx[i] * NO + o]))
                mean += labels[(size_t)idx[i] * NO + o] / np;
        for (int i = 0; i < n; i++) {
            double y = labels[(size_t)idx[i] * NO + o], t = mu[(size_t)i * NO + o];
            if (!isfinite(y)) continue;
            double p = dp_sa_label(sa, o, t), half = qq[o] * (sp[(size_t)i * NO + o] + ss[o]);
            se += (p - y) * (p - y);
            tot += (y - mean) * (y - mean);
            if (fabs(y) >= DP_MAPE_FLOOR) {
                ape += fabs(p - y) / fabs(y);
                n_ape++;
            }
            inside += fabs(d->t[(size_t)idx[i] * NO + o] - t) <= half;
        }
        e->mape[o] = n_ape ? 100 * ape / n_ape : NAN;
        e->r2[o] = tot > 1e-12 * np * mean * mean && tot > 0 ? 1 - se / tot : NAN;
        e->coverage[o] = 100.0 * inside / np;
    }
    free(mu);
    free(sp);
}

/* ---- the whole ---- */

enum dp_status dp_sa_train(const struct dp_sweep *sw, const struct dp_gpu_catalog *cat,
                           struct dp_inspector *body, const struct dp_sa_train_opts *o,
                           struct dp_sa_inspector **out, struct dp_error *err) {
    double t0 = dp_clock_ms();
    struct dp_sa_inspector *sa = NULL;
    enum dp_status st = dp_sa_init(body, &o->arch, o->seed, &sa, err);
    if (st) return st;
    int E = dp_model_embed_size(dp_inspector_model(dp_sa_body(sa)));
    int nin = dp_sa_input_size(sa), dims = dp_sa_ood_dims(sa), ng = sw->n_graphs;
    float *emb = malloc(((size_t)ng + 1) * E * sizeof *emb), *x = NULL, *t = NULL, *gx = NULL;
    int *rows = malloc(((size_t)sw->n_rows + 1) * sizeof *rows), *part = NULL, n = 0;
    int *pairs = NULL, n_pairs = 0;
    int *sets[3] = {NULL, NULL, NULL}, ns[3] = {0, 0, 0};
    double *raw = malloc((size_t)nin * sizeof *raw), *labels = NULL;
    double *mean = calloc((size_t)nin, sizeof *mean), *sd = calloc((size_t)nin, sizeof *sd);
    bool *graph_train = calloc((size_t)ng + 1, sizeof *graph_train);
    if (!emb || !rows || !raw || !mean || !sd || !graph_train) goto oom;
    if ((st = embed_graphs(dp_inspector_model(dp_sa_body(sa)), sw, emb, err))) goto fail;
    for (int r = 0; r < sw->n_rows; r++) {
        const struct dp_sweep_row *row = &sw->rows[r];
        const struct dp_gpu *g = dp_gpu_find(cat, row->setting.gpu);
        if (row->oom || !g || !(g->fp32_tflops > 0) || !(g->memory_gb > 0) ||
            !(g->bandwidth_gbps > 0))
            continue;
        rows[n++] = r;
    }
    if (!n) {
        st = dp_error_set(err, DP_ERR_INVALID, "train: the sweep has no row that fits its GPU");
        goto fail;
    }
    if (!(part = malloc((size_t)n * sizeof *part)) || !(x = malloc((size_t)n * nin * sizeof *x)) ||
        !(t = malloc((size_t)n * NO * sizeof *t)) || !(labels = malloc((size_t)n * NO * sizeof *labels)) ||
        !(gx = malloc(((size_t)ng + 1) * dims * sizeof *gx)))
        goto oom;
    struct dp_sa_eval *ev = &dp_sa_provenance_mut(sa)->evals[0];
    if ((st = split_rows(sw, rows, n, o, part, ev->held, sizeof ev->held, err))) goto fail;
    for (int k = 0; k < 3; k++)
        if (!(sets[k] = malloc(((size_t)n + 1) * sizeof *sets[k]))) goto oom;
    for (int i = 0; i < n; i++) sets[part[i]][ns[part[i]]++] = i;
    if (!ns[0]) {
        st = dp_error_set(err, DP_ERR_INVALID, "train: the split leaves no training row");
        goto fail;
    }
    /* Normalisation from the training rows: inputs, and log1p of the labels. */
    double tmean[NO] = {0}, tsd[NO] = {0};
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < ns[0]; i++) {
            const struct dp_sweep_row *row = &sw->rows[rows[sets[0][i]]];
            const struct dp_sweep_graph *sg = &sw->graphs[row->graph];
            dp_sa_raw_input(sa, emb + (size_t)row->graph * E, &sg->profile, &row->setting,
                            dp_gpu_find(cat, row->setting.gpu), raw);
            double y[NO];
            memcpy(y, row->labels, DP_N_OUTPUTS * sizeof *y);
            y[DP_SA_ITERATION] = row->iteration_ms;
            y[DP_SA_MEMORY] = row->memory_gb;
            for (int k = 0; k < nin; k++) {
                if (pass == 0) mean[k] += raw[k] / ns[0];
                else sd[k] += (raw[k] - mean[k]) * (raw[k] - mean[k]) / ns[0];
            }
            for (int k = 0; k < NO; k++) {
                double v = log1p(y[k] > 0 ? y[k] : 0);
                if (pass == 0) tmean[k] += v / ns[0];
                else tsd[k] += (v - tmean[k]) * (v - tmean[k]) / ns[0];
            }
        }
    for (int k = 0; k < nin; k++)
        sd[k] = !(sd[k] > 1e-12) ? 1 : k < E ? sqrt(sd[k]) : fmax(sqrt(sd[k]), SD_FLOOR);
    for (int k = 0; k < NO; k++) tsd[k] = tsd[k] > 1e-12 ? sqrt(tsd[k]) : 1;
    dp_sa_set_norm(sa, mean, sd, tmean, tsd);
    for (int i = 0; i < n; i++) {
        const struct dp_sweep_row *row = &sw->rows[rows[i]];
        const struct dp_sweep_graph *sg = &sw->graphs[row->graph];
        dp_sa_raw_input(sa, emb + (size_t)row->graph * E, &sg->profile, &row->setting,
                        dp_gpu_find(cat, row->setting.gpu), raw);
        dp_sa_normalize(sa, raw, x + (size_t)i * nin);
        double *y = labels + (size_t)i * NO;
        memcpy(y, row->labels, DP_N_OUTPUTS * sizeof *y);
        y[DP_SA_ITERATION] = row->iteration_ms;
        y[DP_SA_MEMORY] = row->memory_gb;
        for (int k = 0; k < NO; k++) t[(size_t)i * NO + k] = (float)dp_sa_target(sa, k, y[k]);
        if (part[i] == 0) graph_train[row->graph] = true;
    }
    /* The graph part of the normalised input, per graph. */
    for (int g = 0; g < ng; g++) {
        for (int k = 0; k < E; k++) raw[k] = emb[(size_t)g * E + k];
        dp_profile_vector(&sw->graphs[g].profile, raw + E);
        for (int k = 0; k < dims; k++) gx[(size_t)g * dims + k] = (float)((raw[k] - mean[k]) / sd[k]);
    }
    if (o->pair_weight > 0 &&
        (st = dp_sweep_batch_pairs(sw, rows, sets[0], ns[0], &pairs, &n_pairs, err)))
        goto fail;
    struct data d = {x, t, nin, sets[0], sets[1], ns[0], ns[1], pairs, n_pairs};
    /* The standardised targets weigh every output alike, so an output whose labels spread over
     * decades (a burst duration) counts for less of the relative error MAPE measures than its
     * spread says; the robust loss weighs each by its spread in log units. */
    struct dp_sa_loss loss = {.huber = o->plain_loss ? 0 : HUBER};
    double mean_sd = 0;
    for (int k = 0; k < NO; k++) mean_sd += tsd[k] / NO;
    for (int k = 0; k < NO; k++) loss.weight[k] = o->plain_loss ? 1 : tsd[k] / mean_sd;
    /* The batch pairs on the iteration time only: on every output they cost accuracy
     * everywhere (experiments N). */
    loss.pair[DP_SA_ITERATION] = o->pair_weight;
    int max_epochs = 0;
    for (int m = 0; m < o->arch.members; m++) {
        int ep = 0;
        if ((st = train_member(sa, m, &d, o, &loss, &ep, err))) goto fail;
        if (ep > max_epochs) max_epochs = ep;
        if (o->cancel && *o->cancel) break;
    }
    if ((st = calibrate(sa, &d, err)) || (st = ood_reference(sa, gx, graph_train, ng, o->seed, err)))
        goto fail;
    struct dp_sa_provenance *p = dp_sa_provenance_mut(sa);
    snprintf(p->data, sizeof p->data, "%s", sw->source.kind);
    snprintf(p->split, sizeof p->split, "%s", dp_sa_split_name(o->split));
    p->epochs = max_epochs;
    p->n_train = ns[0];
    p->n_val = ns[1];
    p->n_test = ns[2];
    p->n_graphs = ng;
    p->n_evals = 1;
    snprintf(ev->name, sizeof ev->name, "%s", dp_sa_split_name(o->split));
    evaluate(sa, &d, sets[2], ns[2], labels, ev);
    p->seconds = (dp_clock_ms() - t0) / 1e3;
    *out = sa;
    sa = NULL;
    goto done;
oom:
    st = dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
fail:
done:
    dp_sa_free(sa);
    free(emb);
    free(rows);
    free(raw);
    free(mean);
    free(sd);
    free(graph_train);
    free(part);
    free(x);
    free(t);
    free(gx);
    free(labels);
    free(pairs);
    for (int k = 0; k < 3; k++) free(sets[k]);
    return st;
}

/* ---- one setting's samples: fine-tuning and evaluation ---- */

void dp_sa_tune_opts_default(struct dp_sa_tune_opts *o) {
    memset(o, 0, sizeof *o);
    o->epochs = 300;
    o->patience = 30;
    o->batch = 16;
    o->lr = 1e-3f;
    o->weight_decay = 1e-5f;
    o->val_frac = 0.3;
    o->seed = 1;
}

/* A dataset's samples as the head reads them on one setting: normalised inputs x, targets t
 * and labels (NaN: missing), n rows (one per sample with a label). */
struct samples {
    struct dp_setting s;
    float  *x, *t;
    double *labels;
    int     n, nin;
};

static void samples_free(struct samples *sm) {
    free(sm->x);
    free(sm->t);
    free(sm->labels);
    memset(sm, 0, sizeof *sm);
}

/* The setting (setting, else the dataset's), checked against the dataset's and the catalog;
 * every sample checked (grouped graph, profile, the body's features), embedded and normalised. */
static enum dp_status samples_make(const struct dp_sa_inspector *sa, const struct dp_dataset *ds,
                                   const struct dp_gpu_catalog *cat, const char *setting,
                                   struct samples *sm, struct dp_error *err) {
    memset(sm, 0, sizeof *sm);
    const char *id = setting && *setting ? setting : ds->setting;
    if (!*id)
        return dp_error_set(err, DP_ERR_INVALID, "the dataset names no setting: say which");
    enum dp_status st = dp_setting_parse_id(id, cat, &sm->s, err);
    if (st) return st;
    if (*ds->setting && id != ds->setting) {
        struct dp_setting d;
        struct dp_error e2 = {0};
        if (dp_setting_parse_id(ds->setting, cat, &d, &e2) || strcmp(d.id, sm->s.id))
            return dp_error_set(err, DP_ERR_INVALID, "the dataset is for setting '%s', not '%s': "
                                "its labels were measured or simulated there", ds->setting,
                                sm->s.id);
    }
    const struct dp_gpu *gpu = dp_gpu_find(cat, sm->s.gpu);
    if (!gpu || !(gpu->fp32_tflops > 0) || !(gpu->memory_gb > 0) || !(gpu->bandwidth_gbps > 0))
        return dp_error_set(err, DP_ERR_INVALID, "GPU %s: its FP32 rate, memory or bandwidth is "
                            "unknown (the setting-aware head reads them)", sm->s.gpu);
    if (!ds->n_samples) return dp_error_set(err, DP_ERR_INVALID, "the dataset has no samples");
    const struct dp_model *body = dp_inspector_model(dp_sa_body(sa));
    bool cost = dp_model_arch(body)->n_feat > DP_N_FEATURES;
    for (int i = 0; i < ds->n_samples; i++) {
        const struct dp_sample *smp = &ds->samples[i];
        const char *what = !smp->grouped ? "no grouped graph"
                           : !smp->has_profile ? "no profile (the whole-graph numbers the "
                                                 "setting-aware head reads; samples of this "
                                                 "driple's dataset add, build and extract "
                                                 "have it)"
                           : cost && !smp->grouped->cost ? "no cost features (the body reads "
                                                           "them)"
                                                         : NULL;
        if (what)
            return dp_error_set(err, DP_ERR_INVALID, "sample %d (%s): %s", i,
                                smp->model ? smp->model : smp->graph ? smp->graph : "?", what);
    }
    int E = dp_model_embed_size(body), N = ds->n_samples, nin = dp_sa_input_size(sa);
    const struct dp_grouped **gs = malloc((size_t)N * sizeof *gs);
    float *emb = malloc((size_t)N * E * sizeof *emb);
    double *raw = malloc((size_t)nin * sizeof *raw);
    sm->nin = nin;
    sm->x = malloc((size_t)N * nin * sizeof *sm->x);
    sm->t = malloc((size_t)N * NO * sizeof *sm->t);
    sm->labels = malloc((size_t)N * NO * sizeof *sm->labels);
    if (!gs || !emb || !raw || !sm->x || !sm->t || !sm->labels) {
        st = dp_error_set(err, DP_ERR_NOMEM, "setting-aware inspector: out of memory");
        goto done;
    }
    for (int i = 0; i < N; i++) gs[i] = ds->samples[i].grouped;
    if ((st = dp_model_embed_batch(body, gs, N, emb, err))) goto done;
    for (int i = 0; i < N; i++) {
        const struct dp_sample *smp = &ds->samples[i];
        double *y = sm->labels + (size_t)sm->n * NO;
        bool any = false;
        for (int o = 0; o < DP_N_OUTPUTS; o++) y[o] = smp->labels[o];
        /* 0 is "unknown" for these two (dp/dataset.h). */
        y[DP_SA_ITERATION] = smp->iteration_ms > 0 ? smp->iteration_ms : NAN;
        y[DP_SA_MEMORY] = smp->memory_gb > 0 ? smp->memory_gb : NAN;
        for (int o = 0; o < NO; o++) {
            sm->t[(size_t)sm->n * NO + o] = isfinite(y[o]) ? (float)dp_sa_target(sa, o, y[o]) : NAN;
            any = any || isfinite(y[o]);
        }
        if (!any) continue;
        dp_sa_raw_input(sa, emb + (size_t)i * E, &smp->profile, &sm->s, gpu, raw);
        dp_sa_normalize(sa, raw, sm->x + (size_t)sm->n * nin);
        sm->n++;
    }
    if (!sm->n) st = dp_error_set(err, DP_ERR_INVALID, "no sample of the dataset has a label");
done:
    free(gs);
    free(emb);
    free(raw);
    if (st) samples_free(sm);
    return st;
}

enum dp_status dp_sa_evaluate(const struct dp_sa_inspector *sa, const struct dp_dataset *ds,
                              const struct dp_gpu_catalog *cat, const char *setting,
                              struct dp_sa_eval *out, struct dp_error *err) {
    struct samples sm;
    enum dp_status st = samples_make(sa, ds, cat, setting, &sm, err);
    if (st) return st;
    int *idx = malloc((size_t)sm.n * sizeof *idx);
    if (!idx) {
        samples_free(&sm);
        return dp_error_set(err, DP_ERR_NOMEM, "setting-aware inspector: out of memory");
    }
    for (int i = 0; i < sm.n; i++) idx[i] = i;
    struct data d = {sm.x, sm.t, sm.nin, NULL, NULL, 0, 0, NULL, 0};
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "dataset");
    snprintf(out->held, sizeof out->held, "%s", sm.s.id);
    evaluate(sa, &d, idx, sm.n, sm.labels, out);
    free(idx);
    samples_free(&sm);
    return DP_OK;
}

enum dp_status dp_sa_tune(struct dp_sa_inspector *sa, const struct dp_dataset *ds,
                          const struct dp_gpu_catalog *cat, const char *setting,
                          const struct dp_sa_tune_opts *o, struct dp_sa_tune_result *res,
                          struct dp_error *err) {
    double t0 = dp_clock_ms();
    struct samples sm;
    enum dp_status st = samples_make(sa, ds, cat, setting, &sm, err);
    if (st) return st;
    int n = sm.n, *order = malloc((size_t)n * sizeof *order);
    float *keep = NULL, *xs = malloc((size_t)1024 * sm.nin * sizeof *xs);
    float *ys = malloc((size_t)1024 * NO * sizeof *ys);
    if (!order || !xs || !ys) {
        st = dp_error_set(err, DP_ERR_NOMEM, "setting-aware inspector: out of memory");
        goto done;
    }
    /* A seeded share validates (early stopping, the interval's calibration); one sample alone
     * trains and keeps the base's interval. */
    for (int i = 0; i < n; i++) order[i] = i;
    uint64_t rng = o->seed;
    dp_shuffle(order, n, &rng);
    int n_val = n < 2 ? 0 : (int)lround(o->val_frac * n);
    if (n >= 2 && n_val < 1) n_val = 1;
    if (n_val > n - 1) n_val = n - 1;
    struct data d = {sm.x, sm.t, sm.nin, order + n_val, order, n - n_val, n_val, NULL, 0};
    /* What a failure puts back: the heads, the calibration, the provenance. */
    size_t nw = dp_sa_member_size(sa) * (size_t)dp_sa_arch(sa)->members;
    if (!(keep = malloc(nw * sizeof *keep))) {
        st = dp_error_set(err, DP_ERR_NOMEM, "setting-aware inspector: out of memory");
        goto done;
    }
    memcpy(keep, dp_sa_member(sa, 0), nw * sizeof *keep);
    double q[NO], s0[NO];
    dp_sa_calibration(sa, q, s0);
    struct dp_sa_tuning *tu = &dp_sa_provenance_mut(sa)->tuned, prev = *tu;
    memset(tu, 0, sizeof *tu);
    evaluate(sa, &d, d.val, n_val, sm.labels, &tu->before);
    res->train_loss_before = rows_loss(sa, -1, &d, d.train, d.n_train, xs, ys);
    struct dp_sa_train_opts to;
    dp_sa_train_opts_default(&to);
    to.epochs = o->epochs;
    to.patience = o->patience;
    to.batch = o->batch;
    to.lr = o->lr;
    to.weight_decay = o->weight_decay;
    to.seed = o->seed;
    to.cancel = o->cancel;
    to.progress = o->progress;
    to.ud = o->ud;
    for (int m = 0; m < dp_sa_arch(sa)->members && !st; m++) {
        int ep = 0;
        st = train_member(sa, m, &d, &to, NULL, &ep, err);
        if (ep > tu->epochs) tu->epochs = ep;
        if (o->cancel && *o->cancel) break;
    }
    if (!st && n_val) st = calibrate(sa, &d, err);
    if (st) {
        memcpy(dp_sa_member(sa, 0), keep, nw * sizeof *keep);
        dp_sa_set_calibration(sa, q, s0);
        *tu = prev;
        goto done;
    }
    res->train_loss_after = rows_loss(sa, -1, &d, d.train, d.n_train, xs, ys);
    evaluate(sa, &d, d.val, n_val, sm.labels, &tu->after);
    snprintf(tu->before.name, sizeof tu->before.name, "validation, base");
    snprintf(tu->after.name, sizeof tu->after.name, "validation, tuned");
    snprintf(tu->setting, sizeof tu->setting, "%s", sm.s.id);
    snprintf(tu->data, sizeof tu->data, "%s", dp_dataset_data_kind(ds));
    tu->n_train = d.n_train;
    tu->n_val = n_val;
    tu->seconds = (dp_clock_ms() - t0) / 1e3;
done:
    free(keep);
    free(order);
    free(xs);
    free(ys);
    samples_free(&sm);
    return st;
}
