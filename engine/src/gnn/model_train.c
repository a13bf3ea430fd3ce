/* model_train.c: training the inspector network: MSE loss over a batch, gradients from the fast
 * engine (graphs of equal layer and step count run as one stacked batch), and
 * PyTorch's Adam with L2 weight decay added to the gradient. Modes: every parameter, the head only
 * (the published transfer learning), or the head plus the reused layer and the GRU. Batches run
 * through dp_fx_run (model_batch.c): on any number of threads, with the same result. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"

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
    float              *sgrad;   /* each sub-batch's gradient sums (dp_fx_run) */
    int                 n_sgrad; /* sub-batches sgrad holds */
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
    struct dp_fx_job job = {.graphs = graphs, .n = n, .targets = targets, .grads = grads,
                            .body = body, .sgrad = &t->sgrad, .n_sgrad = &t->n_sgrad};
    enum dp_status st = dp_fx_run(t->m, &job, err);
    if (st) return st;
    if (loss) *loss = (float)job.loss;
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
    struct dp_fx_job job = {.graphs = graphs, .n = n, .targets = targets};
    enum dp_status st = dp_fx_run(m, &job, err);
    if (!st) *loss = (float)job.loss;
    return st;
}
