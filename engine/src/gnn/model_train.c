/* model_train.c: training the inspector network: MSE loss over a batch, gradients from the fast
 * engine (graphs of equal layer and step count run as one stacked batch), and
 * PyTorch's Adam with L2 weight decay added to the gradient. Modes: every parameter, the head only
 * (the published transfer learning), or the head plus the reused layer and the GRU.
 * Threads: a batch's sub-batches are shared out among the threads of one region (pool.h), each
 * with its own work buffers and gradient sums, added up in thread order afterwards (so that a
 * step's result depends on the thread count only through float rounding). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp/compute.h"
#include "model_impl.h"
#include "pool.h"

#define TRAIN_THREADS 64 /* at most, as the pool */

/* Graphs per stacked sub-batch (gradients accumulate over sub-batches): small enough that a
 * sub-batch's activations stay in cache; 4 measured fastest on 100-group graphs (425 ms of CPU per
 * 32-graph step against 458 for 1 and 552 for 64). */
#ifndef TRAIN_CHUNK
#define TRAIN_CHUNK 4
#endif

void dp_adam_default(struct dp_adam_opts *o) {
    o->lr = 0.003f;
    o->beta1 = 0.9f;
    o->beta2 = 0.999f;
    o->eps = 1e-8f;
    o->weight_decay = 1e-6f;
}

struct dp_trainer {
    struct dp_model    *m;
    enum dp_train_mode  mode;
    struct dp_adam_opts o;
    bool                trainable[DP_MODEL_MAX_PARAMS];
    bool                has_grad[DP_MODEL_MAX_PARAMS];
    float              *grad, *mom, *var; /* n_data each, same offsets as the model */
    long                steps;
    struct dp_fx_work   work[TRAIN_THREADS];  /* one per thread */
    float              *tgrad[TRAIN_THREADS]; /* threads 1..: their gradient sums (n_data) */
};

enum dp_status dp_trainer_init(struct dp_model *m, enum dp_train_mode mode,
                               const struct dp_adam_opts *o, struct dp_trainer **out,
                               struct dp_error *err) {
    if ((unsigned)mode >= DP_TRAIN_MODE_COUNT)
        return dp_error_set(err, DP_ERR_INVALID, "trainer: unknown mode %d", mode);
    if (!(o->lr > 0) || !(o->beta1 >= 0 && o->beta1 < 1) || !(o->beta2 >= 0 && o->beta2 < 1) ||
        !(o->eps > 0) || !(o->weight_decay >= 0))
        return dp_error_set(err, DP_ERR_INVALID, "trainer: Adam options out of range");
    struct dp_trainer *t = calloc(1, sizeof *t);
    if (!t) return dp_error_set(err, DP_ERR_NOMEM, "trainer: out of memory");
    t->m = m;
    t->mode = mode;
    t->o = *o;
    const size_t n = m->n_data + 16;
    t->grad = calloc(n, sizeof *t->grad);
    t->mom = calloc(n, sizeof *t->mom);
    t->var = calloc(n, sizeof *t->var);
    if (!t->grad || !t->mom || !t->var) {
        dp_trainer_free(t);
        return dp_error_set(err, DP_ERR_NOMEM, "trainer: out of memory");
    }
    for (int i = 0; i < m->n_params; i++) {
        const struct dp_model_param *p = &m->p[i];
        t->trainable[i] = mode == DP_TRAIN_FULL || p->head || (mode == DP_TRAIN_HEAD_LAST && p->last);
    }
    *out = t;
    return DP_OK;
}

void dp_trainer_free(struct dp_trainer *t) {
    if (!t) return;
    for (int k = 0; k < TRAIN_THREADS; k++) {
        dp_fx_work_free(&t->work[k]);
        free(t->tgrad[k]);
    }
    free(t->grad);
    free(t->mom);
    free(t->var);
    free(t);
}

const float *dp_trainer_grad(const struct dp_trainer *t, int i) {
    if (i < 0 || i >= t->m->n_params || !t->trainable[i]) return NULL;
    return t->grad + t->m->p[i].off;
}

/* torch.optim.Adam (1.13, single tensor): L2 decay into the gradient, bias-corrected moments. */
static void adam_step(struct dp_trainer *t) {
    const struct dp_adam_opts *o = &t->o;
    t->steps++;
    const double bc1 = 1.0 - pow(o->beta1, (double)t->steps);
    const double bc2 = 1.0 - pow(o->beta2, (double)t->steps);
    const float step_size = (float)(o->lr / bc1), bc2_sqrt = (float)sqrt(bc2);
    for (int i = 0; i < t->m->n_params; i++) {
        if (!t->trainable[i] || !t->has_grad[i]) continue; /* PyTorch skips grad None */
        const struct dp_model_param *p = &t->m->p[i];
        float *w = t->m->data + p->off, *g = t->grad + p->off;
        float *m1 = t->mom + p->off, *m2 = t->var + p->off;
        for (size_t k = 0; k < p->size; k++) {
            float gk = g[k] + o->weight_decay * w[k];
            m1[k] += (gk - m1[k]) * (1.0f - o->beta1);
            m2[k] = m2[k] * o->beta2 + (1.0f - o->beta2) * gk * gk;
            float denom = sqrtf(m2[k]) / bc2_sqrt + o->eps;
            w[k] -= step_size * (m1[k] / denom);
        }
    }
}

static int cmp_key(const void *a, const void *b) {
    const long *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* One batch over the threads of a region: graphs sorted by size (order: index pairs), cut into
 * sub-batches of equal-sized graphs (sub: first position, count). */
struct batch_run {
    const struct dp_model            *m;
    const struct dp_grouped *const   *graphs;
    const float                      *targets;
    const long                       *order;
    const int                        *sub;
    int                               n_sub;
    double                            scale;
    bool                              body;
    float *const                     *grads;  /* thread 0's table, NULL entries: none */
    float *const                     *tbuf;   /* thread k's gradient buffer (k >= 1) */
    struct dp_fx_work                *work;   /* one per thread */
    double                            loss[TRAIN_THREADS];
    enum dp_status                    st[TRAIN_THREADS];
    struct dp_error                   err[TRAIN_THREADS];
};

/* A thread's sub-batches: forward, loss, and (with gradients) backward into its own sums. */
static void batch_region(void *ctx, int tid, int nt, struct dp_pool_region *reg) {
    (void)reg;
    struct batch_run *r = ctx;
    const struct dp_model *m = r->m;
    const int O = m->arch.n_out;
    int s0, s1;
    dp_pool_share(r->n_sub, tid, nt, &s0, &s1);
    float *grads[DP_MODEL_MAX_PARAMS];
    bool any = false;
    for (int i = 0; i < m->n_params; i++) {
        grads[i] = !r->grads || !r->grads[i] ? NULL
                   : tid == 0               ? r->grads[i]
                                            : r->tbuf[tid] + m->p[i].off;
        any |= grads[i] != NULL;
    }
    if (tid > 0 && any) memset(r->tbuf[tid], 0, m->n_data * sizeof *r->tbuf[tid]);
    int most = 1;
    for (int c = s0; c < s1; c++) most = r->sub[2 * c + 1] > most ? r->sub[2 * c + 1] : most;
    float *out = malloc((size_t)most * O * 2 * sizeof *out), *dout = out + (size_t)most * O;
    float *emb = malloc((size_t)most * 2 * m->arch.hidden * sizeof *emb);
    float *act = malloc(dp_fx_head_act_size(m, most) * sizeof *act);
    const struct dp_grouped **sub = malloc((size_t)most * sizeof *sub);
    double sum = 0;
    enum dp_status st = DP_OK;
    if (!out || !emb || !act || !sub) st = dp_error_set(&r->err[tid], DP_ERR_NOMEM, "train: out of memory");
    for (int c = s0; c < s1 && !st; c++) {
        const int first = r->sub[2 * c], B = r->sub[2 * c + 1];
        for (int k = 0; k < B; k++) sub[k] = r->graphs[r->order[2 * (first + k) + 1]];
        struct dp_fx_batch b;
        if ((st = dp_fx_batch_build(m, sub, B, &b, &r->err[tid]))) break;
        /* head-only gradients need no saved body: keep the embeddings, redo the head */
        const bool save = any && r->body;
        st = dp_fx_forward(m, &b, &r->work[tid], save, emb, out, &r->err[tid]);
        if (!st) {
            for (int k = 0; k < B; k++) {
                const int gi = (int)r->order[2 * (first + k) + 1];
                for (int o = 0; o < O; o++) {
                    double d = (double)out[k * O + o] - r->targets[(size_t)gi * O + o];
                    sum += d * d;
                    dout[k * O + o] = (float)(r->scale * d);
                }
            }
            if (save) {
                st = dp_fx_backward(m, &b, &r->work[tid], dout, grads, r->body, NULL,
                                    &r->err[tid]);
            } else if (any) {
                dp_fx_head(m, B, emb, out, act);
                if (dp_fx_head_backward(m, B, emb, act, dout, grads, NULL))
                    st = dp_error_set(&r->err[tid], DP_ERR_NOMEM, "train: out of memory");
            }
        }
        dp_fx_batch_free(&b);
    }
    free(out);
    free(emb);
    free(act);
    free(sub);
    r->loss[tid] = sum;
    r->st[tid] = st;
}

/* Loss and (when grads != NULL) gradients over n graphs, on up to dp_threads() threads; work
 * holds a work buffer per thread and tbuf (when grads != NULL) a gradient buffer for each thread
 * but the first. dout scale: 2 / (n x n_out). */
static enum dp_status run_batch(const struct dp_model *m, struct dp_fx_work *work,
                                float *const *tbuf, const struct dp_grouped *const *graphs,
                                int n, const float *targets, float *const *grads, bool body,
                                double *loss, struct dp_error *err) {
    const int O = m->arch.n_out;
    enum dp_status st = DP_OK;
    long *order = malloc((size_t)n * 2 * sizeof *order);
    int *sub = malloc((size_t)n * 2 * sizeof *sub);
    if (!order || !sub) {
        st = dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (!graphs[i] || graphs[i]->n_groups < 1) {
            st = dp_error_set(err, DP_ERR_SHAPE, "train: graph %d has no groups", i);
            goto done;
        }
        /* key: the graph's size decides its layer and step counts */
        order[2 * i] = (long)graphs[i]->n_groups * 4096L * 4096L + i;
        order[2 * i + 1] = i;
    }
    qsort(order, (size_t)n, 2 * sizeof *order, cmp_key);
    int n_sub = 0;
    for (int i = 0, j; i < n; i = j) {
        j = i + 1;
        const int ni = graphs[order[2 * i + 1]]->n_groups;
        /* fewer graphs per sub-batch when their saved activations would pass ~256 MB */
        const double per_graph = 8.0 * dp_arch_n_layers(&m->arch, ni) * ni * m->arch.hidden;
        int cap = (int)(64e6 / (per_graph > 1 ? per_graph : 1));
        cap = cap < 1 ? 1 : cap > TRAIN_CHUNK ? TRAIN_CHUNK : cap;
        while (j < n && j - i < cap && graphs[order[2 * j + 1]]->n_groups == ni) j++;
        sub[2 * n_sub] = i;
        sub[2 * n_sub + 1] = j - i;
        n_sub++;
    }
    struct batch_run *r = calloc(1, sizeof *r);
    if (!r) {
        st = dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
        goto done;
    }
    *r = (struct batch_run){.m = m, .graphs = graphs, .targets = targets, .order = order,
                            .sub = sub, .n_sub = n_sub, .scale = 2.0 / ((double)n * O),
                            .body = body, .grads = grads, .tbuf = tbuf, .work = work};
    /* one thread per sub-batch at most; with a single one, its forward splits rows instead */
    const int want = n_sub < dp_threads() ? n_sub : dp_threads();
    dp_pool_run(want, batch_region, r);
    double sum = 0;
    for (int k = 0; k < want; k++) {
        if (r->st[k] && !st) {
            st = r->st[k];
            if (err) *err = r->err[k];
        }
        sum += r->loss[k];
        if (k > 0 && grads && !r->st[k])
            for (int i = 0; i < m->n_params; i++)
                if (grads[i])
                    for (size_t q = 0; q < m->p[i].size; q++)
                        grads[i][q] += tbuf[k][m->p[i].off + q];
    }
    free(r);
    if (!st) *loss = sum / ((double)n * O);
done:
    free(order);
    free(sub);
    return st;
}

/* Gradient buffers for threads 1 .. dp_threads() - 1 (kept across steps). */
static enum dp_status thread_grads(struct dp_trainer *t, struct dp_error *err) {
    const int nt = dp_threads() < TRAIN_THREADS ? dp_threads() : TRAIN_THREADS;
    for (int k = 1; k < nt; k++)
        if (!t->tgrad[k] && !(t->tgrad[k] = malloc((t->m->n_data + 16) * sizeof *t->tgrad[k])))
            return dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
    return DP_OK;
}

static void grad_table(struct dp_trainer *t, float **grads, bool head_only) {
    for (int i = 0; i < t->m->n_params; i++) {
        bool on = t->trainable[i] && (!head_only || t->m->p[i].head);
        grads[i] = on ? t->grad + t->m->p[i].off : NULL;
        t->has_grad[i] = on;
    }
    memset(t->grad, 0, t->m->n_data * sizeof *t->grad);
}

enum dp_status dp_trainer_step(struct dp_trainer *t, const struct dp_grouped *const *graphs,
                               int n, const float *targets, bool step, float *loss,
                               struct dp_error *err) {
    if (n < 1) return dp_error_set(err, DP_ERR_INVALID, "train: empty batch");
    float *grads[DP_MODEL_MAX_PARAMS];
    grad_table(t, grads, false);
    bool body = false;
    for (int i = 0; i < t->m->n_params; i++) body |= grads[i] && !t->m->p[i].head;
    double l = 0;
    enum dp_status st = thread_grads(t, err);
    if (!st) st = run_batch(t->m, t->work, t->tgrad, graphs, n, targets, grads, body, &l, err);
    if (st) return st;
    if (loss) *loss = (float)l;
    if (step) adam_step(t);
    return DP_OK;
}

enum dp_status dp_trainer_step_head(struct dp_trainer *t, const float *emb, int n,
                                    const float *targets, bool step, float *loss,
                                    struct dp_error *err) {
    const struct dp_model *m = t->m;
    const int O = m->arch.n_out;
    if (n < 1) return dp_error_set(err, DP_ERR_INVALID, "train: empty batch");
    float *grads[DP_MODEL_MAX_PARAMS];
    grad_table(t, grads, true);
    float *act = malloc(dp_fx_head_act_size(m, n) * sizeof *act);
    float *out = malloc((size_t)n * O * 2 * sizeof *out);
    if (!act || !out) {
        free(act);
        free(out);
        return dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
    }
    float *dout = out + (size_t)n * O;
    dp_fx_head(m, n, emb, out, act);
    double sum = 0;
    const double scale = 2.0 / ((double)n * O);
    for (size_t k = 0; k < (size_t)n * O; k++) {
        double d = (double)out[k] - targets[k];
        sum += d * d;
        dout[k] = (float)(scale * d);
    }
    enum dp_status st = dp_fx_head_backward(m, n, emb, act, dout, grads, NULL);
    free(act);
    free(out);
    if (st) return dp_error_set(err, st, "train: out of memory");
    if (loss) *loss = (float)(sum / ((double)n * O));
    if (step) adam_step(t);
    return DP_OK;
}

enum dp_status dp_model_loss(const struct dp_model *m, const struct dp_grouped *const *graphs,
                             int n, const float *targets, float *loss, struct dp_error *err) {
    if (n < 1) return dp_error_set(err, DP_ERR_INVALID, "loss: no graphs");
    struct dp_fx_work *w = calloc(TRAIN_THREADS, sizeof *w);
    if (!w) return dp_error_set(err, DP_ERR_NOMEM, "loss: out of memory");
    double l = 0;
    enum dp_status st = run_batch(m, w, NULL, graphs, n, targets, NULL, false, &l, err);
    for (int k = 0; k < TRAIN_THREADS; k++) dp_fx_work_free(&w[k]);
    free(w);
    if (!st) *loss = (float)l;
    return st;
}
