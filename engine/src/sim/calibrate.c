/* calibrate.c: the simulator against the published rows: predictions (the simulation keys
 * spread over threads), the fit of the free constants (a pattern search on the mean |log
 * ratio| within physical bounds) and leave-one-GPU-out cross-validation. */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "sim/calib_impl.h"

#define CALIB_MAX_THREADS 16

struct predict_job {
    struct dp_calib               *c;
    const struct dp_sim_constants *k;
    const unsigned char           *want; /* per key; NULL: all */
    int                            pass, from, step;
    enum dp_status                 st;
    struct dp_error                err;
};

/* Pass 0: the compute profiles of the wanted keys' classes (each class by the thread of its
 * first key); pass 1: the keys. */
static void *predict_run(void *arg) {
    struct predict_job *j = arg;
    struct dp_calib *c = j->c;
    struct dp_sim_opts o;
    dp_sim_opts_default(&o);
    o.constants = j->k;
    o.min_run_ms = 1;
    o.throughput_only = true;
    for (int i = j->from; i < c->n_keys && !j->st; i += j->step) {
        struct calib_key *key = &c->keys[i];
        o.system = key->system;
        if ((j->want && !j->want[i]) || j->pass == 0) {
            if (j->pass == 0 && (!j->want || j->want[i]) && c->prof_owner[key->prof] == i)
                j->st = sim_profiles_init(c->work[key->work].w, &key->setting, key->gpu, j->k,
                                          &c->prof[key->prof], &j->err);
            continue;
        }
        struct dp_sim_result r;
        j->st = sim_run(c->work[key->work].w, &key->setting, key->gpu, &o, &c->prof[key->prof],
                        &r, &j->err);
        if (j->st) break;
        key->throughput = r.throughput;
        key->memory_gb = r.memory_gb;
        key->oom = r.oom;
        dp_sim_result_free(&r);
    }
    return NULL;
}

/* Simulates the keys marked in want (NULL: all) on up to `threads` threads. */
static enum dp_status predict_keys(struct dp_calib *c, const struct dp_sim_constants *k,
                                   const unsigned char *want, int threads,
                                   struct dp_error *err) {
    struct predict_job jobs[CALIB_MAX_THREADS];
    pthread_t tid[CALIB_MAX_THREADS];
    bool started[CALIB_MAX_THREADS] = {false};
    if (threads < 1) threads = 1;
    if (threads > CALIB_MAX_THREADS) threads = CALIB_MAX_THREADS;
    enum dp_status st = DP_OK;
    for (int i = 0; i < c->n_prof; i++) c->prof_owner[i] = -1;
    for (int i = 0; i < c->n_keys; i++)
        if ((!want || want[i]) && c->prof_owner[c->keys[i].prof] < 0)
            c->prof_owner[c->keys[i].prof] = i;
    for (int pass = 0; pass < 2 && !st; pass++) {
        for (int t = 0; t < threads; t++) {
            jobs[t] = (struct predict_job){c, k, want, pass, t, threads, DP_OK, {0}};
            started[t] = t > 0 && !pthread_create(&tid[t], NULL, predict_run, &jobs[t]);
        }
        for (int t = 1; t < threads; t++) /* a thread that did not start: its share runs here */
            if (!started[t]) predict_run(&jobs[t]);
        predict_run(&jobs[0]);
        for (int t = 0; t < threads; t++) {
            if (started[t]) pthread_join(tid[t], NULL);
            if (jobs[t].st && !st) {
                st = jobs[t].st;
                if (err) *err = jobs[t].err;
            }
        }
    }
    return st;
}

/* A row's prediction in its table's unit, from its key's samples/s. */
static double row_value(const struct dp_calib *c, const struct dp_calib_row *r) {
    double v = c->keys[r->key].throughput * r->replicas;
    return r->tokens > 0 ? v * r->tokens : v;
}

enum dp_status dp_calib_predict(struct dp_calib *c, const struct dp_sim_constants *k,
                                int threads, struct dp_error *err) {
    struct dp_sim_constants def;
    if (!k) {
        dp_sim_constants_default(&def);
        k = &def;
    }
    enum dp_status st = predict_keys(c, k, NULL, threads, err);
    if (st) return st;
    for (int i = 0; i < c->n; i++) {
        struct dp_calib_row *r = &c->rows[i];
        r->predicted = row_value(c, r);
        r->memory_gb = c->keys[r->key].memory_gb;
        r->oom = c->keys[r->key].oom;
    }
    return DP_OK;
}

/* --- the fit --- */

/* The fitted constants, their physical bounds, and whether they move on a log scale; then a
 * generation's scale when the fitted rows hold a GPU of it. Winograd's bound is the
 * multiplications F(4x4, 3x3) saves (36 for 144), the tile cuDNN's non-fused Winograd kernels
 * use; its transforms' traffic keeps the real speed-up below that. */
struct axis_def {
    size_t off;
    double lo, hi;
    bool   log;
};
static const struct axis_def base_axes[] = {
    {offsetof(struct dp_sim_constants, eff_cuda), 0.1, 1.0, false},
    {offsetof(struct dp_sim_constants, eff_tensor), 0.05, 1.0, false},
    {offsetof(struct dp_sim_constants, eff_tensor_mm), 0.05, 1.0, false},
    {offsetof(struct dp_sim_constants, winograd), 1.0, 4.0, false},
    {offsetof(struct dp_sim_constants, tc_unaligned), 0.05, 1.0, true},
    {offsetof(struct dp_sim_constants, eff_mem), 0.2, 1.0, false},
    {offsetof(struct dp_sim_constants, gap_us), 0.5, 30.0, true},
    {offsetof(struct dp_sim_constants, host_tf_us), 1.0, 100.0, true},
    {offsetof(struct dp_sim_constants, host_pt_us), 1.0, 100.0, true},
    {offsetof(struct dp_sim_constants, fuse_tf), 0.0, 1.0, false},
    {offsetof(struct dp_sim_constants, fuse_pt), 0.0, 1.0, false},
    {offsetof(struct dp_sim_constants, net_eff), 0.2, 1.0, false},
};
#define N_BASE_AXES ((int)(sizeof base_axes / sizeof base_axes[0]))
#define MAX_AXES    (N_BASE_AXES + DP_GEN_COUNT)

struct fit_ctx {
    struct dp_calib *c;
    const bool      *use;
    unsigned char   *want;
    int              threads;
    int              n_axes;
    struct axis_def  axes[MAX_AXES];
};

static double *axis(const struct fit_ctx *f, struct dp_sim_constants *k, int a) {
    return (double *)((char *)k + f->axes[a].off);
}

/* Axis a's position in [0, 1] and back. */
static double to_unit(const struct fit_ctx *f, int a, double v) {
    const struct axis_def *x = &f->axes[a];
    if (x->log) return log(v / x->lo) / log(x->hi / x->lo);
    return (v - x->lo) / (x->hi - x->lo);
}
static double from_unit(const struct fit_ctx *f, int a, double u) {
    const struct axis_def *x = &f->axes[a];
    if (u < 0) u = 0;
    if (u > 1) u = 1;
    if (x->log) return x->lo * pow(x->hi / x->lo, u);
    return x->lo + u * (x->hi - x->lo);
}

/* The axes of a fit over the used rows: the base ones, and the scale of every generation
 * with a GPU among them. A generation's scale stands for its cuDNN / cuBLAS kernels on every
 * GPU of it, so one GPU's rows fit it as well as several (leave-one-GPU-out then measures it
 * on a generation's other GPU: left without the P100, Pascal's scale comes from the GTX 1080
 * Ti's rows instead of Volta's, LOGO median 16.8% -> 15.2%); a GPU alone in its generation is
 * predicted left out from the nearest generation's. */
static void set_axes(struct fit_ctx *f) {
    f->n_axes = 0;
    for (int a = 0; a < N_BASE_AXES; a++) f->axes[f->n_axes++] = base_axes[a];
    for (int g = 1; g < DP_GEN_COUNT; g++) {
        bool seen = false;
        for (int i = 0; i < f->c->n && !seen; i++) {
            const struct dp_calib_row *r = &f->c->rows[i];
            seen = (!f->use || f->use[i]) && (int)dp_gpu_generation(f->c->keys[r->key].gpu) == g;
        }
        if (seen)
            f->axes[f->n_axes++] = (struct axis_def){
                offsetof(struct dp_sim_constants, gen_scale) + (size_t)g * sizeof(double), 0.3,
                3.0, true};
    }
}

/* A generation the fit has no axis for gets the scale of the nearest fitted generation (the
 * earlier one on a tie): cuDNN's and cuBLAS's kernels for a generation grow out of the previous
 * one's, so Kepler's are most like Pascal's and Hopper's most like Ampere's. An unknown
 * generation gets the geometric mean of the fitted scales; 1 when none is fitted. */
static void unfitted_scales(const struct fit_ctx *f, struct dp_sim_constants *k) {
    bool fitted[DP_GEN_COUNT] = {false};
    double sum = 0;
    int n = 0;
    for (int a = N_BASE_AXES; a < f->n_axes; a++) {
        int g = (int)((f->axes[a].off - offsetof(struct dp_sim_constants, gen_scale)) /
                      sizeof(double));
        fitted[g] = true;
        sum += log(k->gen_scale[g]);
        n++;
    }
    for (int g = 0; g < DP_GEN_COUNT; g++) {
        if (fitted[g]) continue;
        k->gen_scale[g] = n ? exp(sum / n) : 1.0;
        for (int d = 1; g != DP_GEN_UNKNOWN && d < DP_GEN_COUNT; d++) {
            int near = g - d > DP_GEN_UNKNOWN && fitted[g - d] ? g - d
                       : g + d < DP_GEN_COUNT && fitted[g + d] ? g + d
                                                                : -1;
            if (near < 0) continue;
            k->gen_scale[g] = k->gen_scale[near];
            break;
        }
    }
}

/* The mean |log(predicted / measured)| over the used rows at constants k (its unfitted
 * generations' scales set first). */
static enum dp_status objective(struct fit_ctx *f, struct dp_sim_constants *k, double *out,
                                struct dp_error *err) {
    unfitted_scales(f, k);
    enum dp_status st = predict_keys(f->c, k, f->want, f->threads, err);
    if (st) return st;
    double sum = 0;
    int n = 0;
    for (int i = 0; i < f->c->n; i++) {
        if (f->use && !f->use[i]) continue;
        const struct dp_calib_row *r = &f->c->rows[i];
        sum += fabs(log(row_value(f->c, r) / r->measured));
        n++;
    }
    *out = n ? sum / n : 0;
    return DP_OK;
}

/* Compass search from *k: each axis has its own step (unit scale), tried both ways; a step
 * that improves the objective is kept and doubled, one that does not is halved; it stops when
 * every step is below 1/128 of its range. */
static enum dp_status search(struct fit_ctx *f, struct dp_sim_constants *k, double step0,
                             double *best, struct dp_error *err) {
    double step[MAX_AXES];
    for (int a = 0; a < f->n_axes; a++) step[a] = step0;
    enum dp_status st = objective(f, k, best, err);
    for (bool active = true; active && !st;) {
        active = false;
        for (int a = 0; a < f->n_axes && !st; a++) {
            if (step[a] < 1.0 / 128) continue;
            active = true;
            bool moved = false;
            for (int dir = -1; dir <= 1 && !st && !moved; dir += 2) {
                struct dp_sim_constants t = *k;
                double u = to_unit(f, a, *axis(f, k, a)) + dir * step[a];
                if (u < -1e-9 || u > 1 + 1e-9) continue;
                *axis(f, &t, a) = from_unit(f, a, u);
                double e;
                if ((st = objective(f, &t, &e, err))) break;
                if (e < *best - 1e-9) {
                    *best = e;
                    *k = t;
                    moved = true;
                }
            }
            step[a] = moved ? (step[a] * 2 > 0.5 ? 0.5 : step[a] * 2) : step[a] / 2;
        }
    }
    if (!st) unfitted_scales(f, k);
    return st;
}

static enum dp_status fit(struct dp_calib *c, const bool *use, struct dp_sim_constants *k,
                          double step, double *obj, int threads, struct dp_error *err) {
    struct fit_ctx f = {c, use, calloc((size_t)c->n_keys + 1, 1), threads, 0, {{0}}};
    if (!f.want) return dp_error_set(err, DP_ERR_NOMEM, "calibrate: out of memory");
    set_axes(&f);
    for (int i = 0; i < c->n; i++)
        if (!use || use[i]) f.want[c->rows[i].key] = 1;
    double best = 0;
    enum dp_status st = search(&f, k, step, &best, err);
    free(f.want);
    if (obj) *obj = best;
    return st;
}

enum dp_status dp_calib_fit(struct dp_calib *c, const bool *use, struct dp_sim_constants *k,
                            double *objective_out, int threads, struct dp_error *err) {
    enum dp_status st = fit(c, use, k, 0.25, objective_out, threads, err);
    return st ? st : dp_calib_predict(c, k, threads, err);
}

/* The group a row falls in for a hold-out. */
static const char *held_group(const struct dp_calib *c, const struct dp_calib_row *r,
                              enum dp_calib_holdout by) {
    if (by == DP_HOLD_SYSTEM) return r->system;
    if (by == DP_HOLD_GPU) return r->catalog;
    return dp_gpu_gen_name(dp_gpu_generation(dp_gpu_find(c->cat, r->catalog)));
}

static double *held_value(struct dp_calib_row *r, enum dp_calib_holdout by) {
    return by == DP_HOLD_GPU ? &r->predicted_logo
           : by == DP_HOLD_GENERATION ? &r->predicted_logen
                                      : &r->predicted_loso;
}

/* Fits from *all without each group's rows and predicts them. */
static enum dp_status hold_out(struct dp_calib *c, enum dp_calib_holdout by,
                               const struct dp_sim_constants *all, int threads,
                               struct dp_error *err) {
    bool *use = malloc(((size_t)c->n + 1) * sizeof *use);
    if (!use) return dp_error_set(err, DP_ERR_NOMEM, "calibrate: out of memory");
    enum dp_status st = DP_OK;
    for (int i = 0; i < c->n && !st; i++) {
        const char *grp = held_group(c, &c->rows[i], by);
        bool done = false;
        for (int j = 0; j < i && !done; j++) done = !strcmp(held_group(c, &c->rows[j], by), grp);
        if (done) continue;
        for (int j = 0; j < c->n; j++) use[j] = strcmp(held_group(c, &c->rows[j], by), grp) != 0;
        struct dp_sim_constants k = *all;
        if ((st = fit(c, use, &k, 0.0625, NULL, threads, err))) break;
        if ((st = dp_calib_predict(c, &k, threads, err))) break;
        for (int j = 0; j < c->n; j++)
            if (!use[j]) *held_value(&c->rows[j], by) = c->rows[j].predicted;
    }
    free(use);
    return st;
}

enum dp_status dp_calib_holdout(struct dp_calib *c, enum dp_calib_holdout by,
                                const struct dp_sim_constants *start, int threads,
                                struct dp_error *err) {
    struct dp_sim_constants all = *start;
    enum dp_status st = fit(c, NULL, &all, 0.25, NULL, threads, err);
    if (!st) st = hold_out(c, by, &all, threads, err);
    return st ? st : dp_calib_predict(c, start, threads, err);
}

enum dp_status dp_calib_logo(struct dp_calib *c, const struct dp_sim_constants *start,
                             struct dp_sim_constants *fitted, int threads,
                             struct dp_error *err) {
    struct dp_sim_constants all = *start;
    enum dp_status st = fit(c, NULL, &all, 0.25, NULL, threads, err);
    if (!st) st = hold_out(c, DP_HOLD_GPU, &all, threads, err);
    if (st) return st;
    *fitted = all;
    return dp_calib_predict(c, &all, threads, err);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (linear between order statistics) of n sorted values. */
static double quantile(const double *v, int n, double q) {
    if (n <= 0) return NAN;
    double pos = q * (n - 1);
    int lo = (int)floor(pos);
    if (lo >= n - 1) return v[n - 1];
    return v[lo] + (pos - lo) * (v[lo + 1] - v[lo]);
}

/* which: -1 the predictions, else a hold-out's. */
static void stats(const struct dp_calib *c, const bool *use, int which,
                  struct dp_calib_stats *out) {
    memset(out, 0, sizeof *out);
    double *ab = malloc(((size_t)c->n + 1) * sizeof *ab);
    double *sg = malloc(((size_t)c->n + 1) * sizeof *sg);
    int n = 0;
    double sum = 0;
    for (int i = 0; ab && sg && i < c->n; i++) {
        if (use && !use[i]) continue;
        struct dp_calib_row *r = &c->rows[i];
        double p = which < 0 ? r->predicted : *held_value(r, (enum dp_calib_holdout)which);
        sg[n] = (p / r->measured - 1) * 100;
        ab[n] = fabs(sg[n]);
        sum += fabs(log(p / r->measured));
        n++;
    }
    out->n = n;
    if (n && ab && sg) {
        qsort(ab, (size_t)n, sizeof *ab, cmp_double);
        qsort(sg, (size_t)n, sizeof *sg, cmp_double);
        out->median = quantile(ab, n, 0.5);
        out->p90 = quantile(ab, n, 0.9);
        out->worst = ab[n - 1];
        out->median_signed = quantile(sg, n, 0.5);
        out->mean_abs_log = sum / n;
    } else {
        out->median = out->p90 = out->worst = out->median_signed = out->mean_abs_log = NAN;
    }
    free(ab);
    free(sg);
}

void dp_calib_stats(const struct dp_calib *c, const bool *use, bool logo,
                    struct dp_calib_stats *out) {
    stats(c, use, logo ? DP_HOLD_GPU : -1, out);
}

void dp_calib_stats_held(const struct dp_calib *c, const bool *use, enum dp_calib_holdout by,
                         struct dp_calib_stats *out) {
    stats(c, use, (int)by, out);
}
