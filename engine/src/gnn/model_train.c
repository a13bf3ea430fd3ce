/* model_train.c: training the inspector network: MSE loss over a batch, gradients from the fast
 * engine (graphs of equal layer and step count run as one stacked batch), and
 * PyTorch's Adam with L2 weight decay added to the gradient. Modes: every parameter, the head only
 * (the published transfer learning), or the head plus the reused layer and the GRU.
 * Threads: a batch's sub-batches are the items of one phase of a region (pool.h), taken by
 * whichever thread runs, each with its own work buffer; every sub-batch's loss and gradients go
 * to its own sums, added up in sub-batch order afterwards, so that a step's result is the same
 * on any number of threads. */
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
    float              *sgrad;                /* each sub-batch's gradient sums (n_data each) */
    int                 n_sgrad;              /* sub-batches sgrad holds */
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
    for (int k = 0; k < TRAIN_THREADS; k++) dp_fx_work_free(&t->work[k]);
    free(t->sgrad);
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
    float *const                     *grads;  /* which parameters get gradients (NULL: none) */
    float                            *sgrad;  /* sub-batch c's gradient sums at c n_data */
    struct dp_fx_work                *work;   /* one per thread */
    double                           *loss;   /* per sub-batch */
    enum dp_status                   *st;     /* per sub-batch */
    struct dp_error                  *err;    /* per sub-batch */
};

/* Sub-batch c: forward, loss and (with gradients) backward into its own sums. */
static void one_sub(struct batch_run *r, int c, struct dp_fx_work *work) {
    const struct dp_model *m = r->m;
    const int O = m->arch.n_out, first = r->sub[2 * c], B = r->sub[2 * c + 1];
    float *grads[DP_MODEL_MAX_PARAMS];
    bool any = false;
    float *gbuf = r->grads ? r->sgrad + (size_t)c * m->n_data : NULL;
    for (int i = 0; i < m->n_params; i++) {
        grads[i] = r->grads && r->grads[i] ? gbuf + m->p[i].off : NULL;
        any |= grads[i] != NULL;
    }
    if (any) memset(gbuf, 0, m->n_data * sizeof *gbuf);
    float *out = malloc((size_t)B * O * 2 * sizeof *out), *dout = out ? out + (size_t)B * O : NULL;
    float *emb = malloc((size_t)B * 2 * m->arch.hidden * sizeof *emb);
    float *act = malloc(dp_fx_head_act_size(m, B) * sizeof *act);
    const struct dp_grouped **sub = malloc((size_t)B * sizeof *sub);
    double sum = 0;
    enum dp_status st = DP_OK;
    struct dp_fx_batch b;
    memset(&b, 0, sizeof b);
    if (!out || !emb || !act || !sub) {
        st = dp_error_set(&r->err[c], DP_ERR_NOMEM, "train: out of memory");
        goto done;
    }
    for (int k = 0; k < B; k++) sub[k] = r->graphs[r->order[2 * (first + k) + 1]];
    if ((st = dp_fx_batch_build(m, sub, B, &b, &r->err[c]))) goto done;
    /* head-only gradients need no saved body: keep the embeddings, redo the head */
    const bool save = any && r->body;
    if ((st = dp_fx_forward(m, &b, work, save, emb, out, &r->err[c]))) goto done;
    for (int k = 0; k < B; k++) {
        const int gi = (int)r->order[2 * (first + k) + 1];
        for (int o = 0; o < O; o++) {
            double d = (double)out[k * O + o] - r->targets[(size_t)gi * O + o];
            sum += d * d;
            dout[k * O + o] = (float)(r->scale * d);
        }
    }
    if (save) {
        st = dp_fx_backward(m, &b, work, dout, grads, r->body, NULL, &r->err[c]);
    } else if (any) {
        dp_fx_head(m, B, emb, out, act);
        if (dp_fx_head_backward(m, B, emb, act, dout, grads, NULL))
            st = dp_error_set(&r->err[c], DP_ERR_NOMEM, "train: out of memory");
    }
done:
    dp_fx_batch_free(&b);
    free(out);
    free(emb);
    free(act);
    free(sub);
    r->loss[c] = sum;
    r->st[c] = st;
}

static void batch_region(void *ctx, int tid, int nt, struct dp_pool_region *reg) {
    (void)nt;
    struct batch_run *r = ctx;
    struct dp_pool_cursor cur = {0, 0, -1};
    dp_pool_phase(reg, &cur, r->n_sub);
    for (int c; (c = dp_pool_next(reg, &cur)) >= 0;) one_sub(r, c, &r->work[tid]);
    dp_pool_phase_wait(reg, &cur);
}

/* Sub-batches of equal-sized graphs, at most TRAIN_CHUNK each (fewer when their saved
 * activations would pass ~256 MB), in order (sorted by size, then index): first position and
 * count of each into sub; returns how many. */
static int cut_batch(const struct dp_model *m, const struct dp_grouped *const *graphs, int n,
                     const long *order, int *sub) {
    int n_sub = 0;
    for (int i = 0, j; i < n; i = j) {
        j = i + 1;
        const int ni = graphs[order[2 * i + 1]]->n_groups;
        const double per_graph = 8.0 * dp_arch_n_layers(&m->arch, ni) * ni * m->arch.hidden;
        int cap = (int)(64e6 / (per_graph > 1 ? per_graph : 1));
        cap = cap < 1 ? 1 : cap > TRAIN_CHUNK ? TRAIN_CHUNK : cap;
        while (j < n && j - i < cap && graphs[order[2 * j + 1]]->n_groups == ni) j++;
        sub[2 * n_sub] = i;
        sub[2 * n_sub + 1] = j - i;
        n_sub++;
    }
    return n_sub;
}

/* Loss and (when grads != NULL) gradients over n graphs, on up to dp_threads() threads; work
 * holds a work buffer per thread, *sgrad (grown as needed, *n_sgrad sub-batches) the
 * sub-batches' gradient sums. dout scale: 2 / (n x n_out). */
static enum dp_status run_batch(const struct dp_model *m, struct dp_fx_work *work, float **sgrad,
                                int *n_sgrad, const struct dp_grouped *const *graphs, int n,
                                const float *targets, float *const *grads, bool body,
                                double *loss, struct dp_error *err) {
    const int O = m->arch.n_out;
    enum dp_status st = DP_OK;
    long *order = malloc((size_t)n * 2 * sizeof *order);
    int *sub = malloc((size_t)n * 2 * sizeof *sub);
    double *subloss = malloc((size_t)n * sizeof *subloss);
    enum dp_status *subst = malloc((size_t)n * sizeof *subst);
    struct dp_error *suberr = calloc((size_t)n, sizeof *suberr);
    if (!order || !sub || !subloss || !subst || !suberr) {
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
    const int n_sub = cut_batch(m, graphs, n, order, sub);
    if (grads && *n_sgrad < n_sub) {
        float *g = realloc(*sgrad, (size_t)n_sub * m->n_data * sizeof *g);
        if (!g) {
            st = dp_error_set(err, DP_ERR_NOMEM, "train: out of memory");
            goto done;
        }
        *sgrad = g;
        *n_sgrad = n_sub;
    }
    struct batch_run r = {.m = m, .graphs = graphs, .targets = targets, .order = order,
                          .sub = sub, .n_sub = n_sub, .scale = 2.0 / ((double)n * O),
                          .body = body, .grads = grads, .sgrad = grads ? *sgrad : NULL,
                          .work = work, .loss = subloss, .st = subst, .err = suberr};
    /* one thread per sub-batch at most; with a single one, its forward splits rows instead */
    dp_pool_run(n_sub < TRAIN_THREADS ? n_sub : TRAIN_THREADS, batch_region, &r);
    double sum = 0;
    for (int c = 0; c < n_sub; c++) {
        if (subst[c] && !st) {
            st = subst[c];
            if (err) *err = suberr[c];
        }
        sum += subloss[c];
        const float *gc = grads ? *sgrad + (size_t)c * m->n_data : NULL;
        for (int i = 0; gc && i < m->n_params; i++)
            if (grads[i])
                for (size_t q = 0; q < m->p[i].size; q++) grads[i][q] += gc[m->p[i].off + q];
    }
    if (!st) *loss = sum / ((double)n * O);
done:
    free(order);
    free(sub);
    free(subloss);
    free(subst);
    free(suberr);
    return st;
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
    enum dp_status st = run_batch(t->m, t->work, &t->sgrad, &t->n_sgrad, graphs, n, targets,
                                  grads, body, &l, err);
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
    enum dp_status st = run_batch(m, w, NULL, NULL, graphs, n, targets, NULL, false, &l, err);
    for (int k = 0; k < TRAIN_THREADS; k++) dp_fx_work_free(&w[k]);
    free(w);
    if (!st) *loss = (float)l;
    return st;
}
