/* sa_inspector.c: the setting-aware inspector (dp/sa.h): an ensemble of MLP heads (SiLU, two
 * hidden layers) over [graph embedding, profile, setting, physical ratios], each predicting the
 * 12 metrics, the iteration time and the memory footprint as standardised log1p values; the
 * ensemble's mean is the prediction, its spread (calibrated) the interval. Predictions are
 * clamped to their physical range and the graph's distance to the training graphs flags what
 * is out of distribution. Also the Adam trainer of one member. */
#include "sa_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "dp/metrics.h"
#include "kernels.h"

const char *dp_sa_output_name(int o) {
    if (o >= 0 && o < DP_N_OUTPUTS) return dp_outputs[o].name;
    if (o == DP_SA_ITERATION) return dp_derived_figures[DP_D_ITERATION_MS].key;
    return o == DP_SA_MEMORY ? dp_derived_figures[DP_D_MEMORY_GB].key : "?";
}

const char *dp_sa_output_unit(int o) {
    if (o >= 0 && o < DP_N_OUTPUTS) return dp_outputs[o].unit;
    if (o == DP_SA_ITERATION) return dp_derived_figures[DP_D_ITERATION_MS].unit;
    return o == DP_SA_MEMORY ? dp_derived_figures[DP_D_MEMORY_GB].unit : "?";
}

#define H1(sa) ((sa)->arch.hidden1)
#define H2(sa) ((sa)->arch.hidden2)
#define NO DP_SA_N_OUT

size_t dp_sa_member_floats(int n_in, int h1, int h2) {
    return (size_t)n_in * h1 + h1 + (size_t)h1 * h2 + h2 + (size_t)h2 * NO + NO;
}

/* Views of member m's parameters. */
struct params {
    float *w1, *b1, *w2, *b2, *w3, *b3;
};

static struct params member(const struct dp_sa_inspector *sa, int m) {
    struct params p;
    p.w1 = sa->w + (size_t)m * sa->per_member;
    p.b1 = p.w1 + (size_t)sa->n_in * H1(sa);
    p.w2 = p.b1 + H1(sa);
    p.b2 = p.w2 + (size_t)H1(sa) * H2(sa);
    p.w3 = p.b2 + H2(sa);
    p.b3 = p.w3 + (size_t)H2(sa) * NO;
    return p;
}

enum dp_status dp_sa_arch_check(const struct dp_sa_arch *a, struct dp_error *err) {
    if (a->hidden1 < 1 || a->hidden1 > 4096 || a->hidden2 < 1 || a->hidden2 > 4096)
        return dp_error_set(err, DP_ERR_INVALID, "setting-aware head: hidden widths %d, %d not "
                            "in [1, 4096]", a->hidden1, a->hidden2);
    if (a->members < 1 || a->members > DP_SA_MAX_MEMBERS)
        return dp_error_set(err, DP_ERR_INVALID, "setting-aware head: %d members not in [1, %d]",
                            a->members, DP_SA_MAX_MEMBERS);
    return DP_OK;
}

void dp_sa_free(struct dp_sa_inspector *sa) {
    if (!sa) return;
    dp_inspector_free(sa->body);
    free(sa->w);
    free(sa->in_mean);
    free(sa->in_std);
    free(sa->ref);
    free(sa);
}

enum dp_status dp_sa_init(struct dp_inspector *body, const struct dp_sa_arch *a, uint64_t seed,
                          struct dp_sa_inspector **out, struct dp_error *err) {
    enum dp_status st = dp_sa_arch_check(a, err);
    struct dp_sa_inspector *sa = NULL;
    if (st) goto fail;
    if (!(sa = calloc(1, sizeof *sa))) goto oom;
    sa->body = body;
    body = NULL;
    sa->arch = *a;
    sa->n_emb = dp_model_embed_size(dp_inspector_model(sa->body));
    sa->n_in = sa->n_emb + DP_PROFILE_N + DP_SA_SETTING_N + DP_SA_CROSS_N + DP_SA_BURST_N +
               DP_SA_PLACE_N;
    sa->per_member = dp_sa_member_floats(sa->n_in, a->hidden1, a->hidden2);
    if (!(sa->w = malloc(sa->per_member * a->members * sizeof *sa->w)) ||
        !(sa->in_mean = calloc((size_t)sa->n_in, sizeof *sa->in_mean)) ||
        !(sa->in_std = malloc((size_t)sa->n_in * sizeof *sa->in_std)))
        goto oom;
    for (int i = 0; i < sa->n_in; i++) sa->in_std[i] = 1;
    for (int o = 0; o < NO; o++) {
        sa->out_mean[o] = 0;
        sa->out_std[o] = 1;
        sa->q[o] = 1.2816;
        sa->s0[o] = 1e-6;
    }
    /* PyTorch's Linear initialisation: uniform in +-1/sqrt(fan_in), weights and biases. */
    uint64_t s = seed * UINT64_C(0x2545F4914F6CDD1D) + 7;
    for (int m = 0; m < a->members; m++) {
        struct params p = member(sa, m);
        struct { float *w; size_t n; int fan_in; } blocks[] = {
            {p.w1, (size_t)sa->n_in * a->hidden1 + a->hidden1, sa->n_in},
            {p.w2, (size_t)a->hidden1 * a->hidden2 + a->hidden2, a->hidden1},
            {p.w3, (size_t)a->hidden2 * NO + NO, a->hidden2},
        };
        for (int k = 0; k < 3; k++) {
            float bound = 1.0f / sqrtf((float)blocks[k].fan_in);
            for (size_t i = 0; i < blocks[k].n; i++)
                blocks[k].w[i] = (float)((2 * dp_rng_uniform(&s) - 1) * bound);
        }
    }
    snprintf(sa->prov.data, sizeof sa->prov.data, "simulated");
    *out = sa;
    return DP_OK;
oom:
    st = dp_error_set(err, DP_ERR_NOMEM, "setting-aware inspector: out of memory");
fail:
    dp_inspector_free(body);
    dp_sa_free(sa);
    return st;
}

const struct dp_inspector *dp_sa_body(const struct dp_sa_inspector *sa) { return sa->body; }
const struct dp_sa_arch *dp_sa_arch(const struct dp_sa_inspector *sa) { return &sa->arch; }
const struct dp_sa_provenance *dp_sa_provenance(const struct dp_sa_inspector *sa) {
    return &sa->prov;
}
struct dp_sa_provenance *dp_sa_provenance_mut(struct dp_sa_inspector *sa) { return &sa->prov; }
const char *dp_sa_body_path(const struct dp_sa_inspector *sa) { return sa->body_path; }
int dp_sa_input_size(const struct dp_sa_inspector *sa) { return sa->n_in; }
int dp_sa_ood_dims(const struct dp_sa_inspector *sa) { return sa->n_emb + DP_PROFILE_N; }
size_t dp_sa_member_size(const struct dp_sa_inspector *sa) { return sa->per_member; }
float *dp_sa_member(struct dp_sa_inspector *sa, int m) { return sa->w + (size_t)m * sa->per_member; }

void dp_sa_raw_input(const struct dp_sa_inspector *sa, const float *emb,
                     const struct dp_profile *p, const struct dp_setting *s,
                     const struct dp_gpu *g, double *x) {
    for (int i = 0; i < sa->n_emb; i++) x[i] = emb[i];
    x += sa->n_emb;
    struct dp_profile at;
    dp_sa_profile_at(p, s, &at);
    dp_profile_vector(&at, x);
    dp_sa_setting_vector(s, g, x + DP_PROFILE_N);
    dp_sa_cross_vector(&at, s, g, sa->legacy, x + DP_PROFILE_N + DP_SA_SETTING_N);
    x += DP_PROFILE_N + DP_SA_SETTING_N + DP_SA_CROSS_N;
    bool burst = !(sa->legacy & DP_SA_LEGACY_NO_BURST);
    bool place = !(sa->legacy & DP_SA_LEGACY_NO_PLACE);
    if (burst || place)
        dp_sa_burst_place(&at, s, g, burst ? x : NULL,
                          place ? x + (burst ? DP_SA_BURST_N : 0) : NULL);
}

void dp_sa_set_norm(struct dp_sa_inspector *sa, const double *in_mean, const double *in_std,
                    const double *out_mean, const double *out_std) {
    memcpy(sa->in_mean, in_mean, (size_t)sa->n_in * sizeof *in_mean);
    memcpy(sa->in_std, in_std, (size_t)sa->n_in * sizeof *in_std);
    memcpy(sa->out_mean, out_mean, sizeof sa->out_mean);
    memcpy(sa->out_std, out_std, sizeof sa->out_std);
}

void dp_sa_normalize(const struct dp_sa_inspector *sa, const double *raw, float *x) {
    for (int i = 0; i < sa->n_in; i++) x[i] = (float)((raw[i] - sa->in_mean[i]) / sa->in_std[i]);
}

double dp_sa_target(const struct dp_sa_inspector *sa, int o, double label) {
    return (log1p(label > 0 ? label : 0) - sa->out_mean[o]) / sa->out_std[o];
}

double dp_sa_label(const struct dp_sa_inspector *sa, int o, double target) {
    double t = target * sa->out_std[o] + sa->out_mean[o];
    return expm1(t < 80 ? t : 80);
}

void dp_sa_set_calibration(struct dp_sa_inspector *sa, const double *q, const double *s0) {
    memcpy(sa->q, q, sizeof sa->q);
    memcpy(sa->s0, s0, sizeof sa->s0);
}

void dp_sa_calibration(const struct dp_sa_inspector *sa, double *q, double *s0) {
    memcpy(q, sa->q, sizeof sa->q);
    memcpy(s0, sa->s0, sizeof sa->s0);
}

enum dp_status dp_sa_set_ood(struct dp_sa_inspector *sa, const float *points, int n,
                             double threshold, struct dp_error *err) {
    size_t dims = (size_t)dp_sa_ood_dims(sa);
    float *r = n > 0 ? malloc((size_t)n * dims * sizeof *r) : NULL;
    if (n > 0 && !r) return dp_error_set(err, DP_ERR_NOMEM, "setting-aware inspector: out of memory");
    if (n > 0) memcpy(r, points, (size_t)n * dims * sizeof *r);
    free(sa->ref);
    sa->ref = r;
    sa->n_ref = n;
    sa->ood_threshold = threshold;
    return DP_OK;
}

double dp_sa_ood_distance(const struct dp_sa_inspector *sa, const float *graph_part) {
    int dims = dp_sa_ood_dims(sa);
    double best = INFINITY;
    for (int r = 0; r < sa->n_ref; r++) {
        const float *p = sa->ref + (size_t)r * dims;
        double d = 0;
        for (int k = 0; k < dims && d < best; k++) d += (double)(p[k] - graph_part[k]) * (p[k] - graph_part[k]);
        if (d < best) best = d;
    }
    return sa->n_ref ? sqrt(best / dims) : 0;
}

/* ---- the head ---- */

/* Member m's forward: y (B x NO); with save (B x 2 (h1 + h2)), the pre-activations and
 * activations of both hidden layers for the backward. */
static void forward(const struct dp_sa_inspector *sa, int m, const float *x, int B, float *y,
                    float *a1, float *a2, float *z1, float *z2) {
    struct params p = member(sa, m);
    int h1 = H1(sa), h2 = H2(sa);
    dp_kn_gemm(false, false, B, h1, sa->n_in, x, sa->n_in, p.w1, h1, 0.0f, a1, h1);
    dp_kn()->bias_silu(B, h1, p.b1, a1, z1);
    dp_kn_gemm(false, false, B, h2, h1, a1, h1, p.w2, h2, 0.0f, a2, h2);
    dp_kn()->bias_silu(B, h2, p.b2, a2, z2);
    dp_kn_gemm(false, false, B, NO, h2, a2, h2, p.w3, NO, 0.0f, y, NO);
    for (int i = 0; i < B; i++)
        for (int o = 0; o < NO; o++) y[(size_t)i * NO + o] += p.b3[o];
}

void dp_sa_head(const struct dp_sa_inspector *sa, int m, const float *x, int B, float *y,
                float *spread) {
    int h1 = H1(sa), h2 = H2(sa);
    /* Rows in chunks so the scratch stays small. */
    enum { CHUNK = 256 };
    float *a1 = malloc((size_t)CHUNK * (h1 + h2 + NO) * sizeof *a1);
    if (!a1) { /* out of memory: report nothing rather than garbage */
        for (size_t i = 0; i < (size_t)B * NO; i++) y[i] = NAN;
        return;
    }
    float *a2 = a1 + (size_t)CHUNK * h1, *ym = a2 + (size_t)CHUNK * h2;
    for (int i0 = 0; i0 < B; i0 += CHUNK) {
        int b = B - i0 < CHUNK ? B - i0 : CHUNK;
        const float *xb = x + (size_t)i0 * sa->n_in;
        float *yb = y + (size_t)i0 * NO, *sb = spread ? spread + (size_t)i0 * NO : NULL;
        if (m >= 0) {
            forward(sa, m, xb, b, yb, a1, a2, NULL, NULL);
            continue;
        }
        int K = sa->arch.members;
        for (size_t i = 0; i < (size_t)b * NO; i++) {
            yb[i] = 0;
            if (sb) sb[i] = 0;
        }
        for (int k = 0; k < K; k++) {
            forward(sa, k, xb, b, ym, a1, a2, NULL, NULL);
            for (size_t i = 0; i < (size_t)b * NO; i++) {
                yb[i] += ym[i] / K;
                if (sb) sb[i] += ym[i] * ym[i] / K;
            }
        }
        if (sb)
            for (size_t i = 0; i < (size_t)b * NO; i++) {
                float var = sb[i] - yb[i] * yb[i];
                sb[i] = var > 0 ? sqrtf(var) : 0;
            }
    }
    free(a1);
}

/* ---- graphs and predictions ---- */

enum dp_status dp_sa_graph_init(const struct dp_sa_inspector *sa, const struct dp_grouped *g,
                                const float *given, const struct dp_profile *p,
                                struct dp_sa_graph *out, struct dp_error *err) {
    memset(out, 0, sizeof *out);
    int dims = dp_sa_ood_dims(sa);
    float *emb = malloc((size_t)sa->n_emb * sizeof *emb);
    double *raw = malloc((size_t)dims * sizeof *raw);
    float *x = malloc((size_t)dims * sizeof *x);
    enum dp_status st = DP_OK;
    if (!emb || !raw || !x) {
        st = dp_error_set(err, DP_ERR_NOMEM, "setting-aware inspector: out of memory");
        goto done;
    }
    if (given) memcpy(emb, given, (size_t)sa->n_emb * sizeof *emb);
    else if ((st = dp_model_embed(dp_inspector_model(sa->body), g, emb, err))) goto done;
    for (int i = 0; i < sa->n_emb; i++) raw[i] = emb[i];
    dp_profile_vector(p, raw + sa->n_emb);
    for (int i = 0; i < dims; i++) x[i] = (float)((raw[i] - sa->in_mean[i]) / sa->in_std[i]);
    out->emb = emb;
    emb = NULL;
    out->profile = *p;
    out->ood_score = sa->ood_threshold > 0 ? dp_sa_ood_distance(sa, x) / sa->ood_threshold : 0;
done:
    free(emb);
    free(raw);
    free(x);
    return st;
}

void dp_sa_graph_free(struct dp_sa_graph *g) {
    if (!g) return;
    free(g->emb);
    memset(g, 0, sizeof *g);
}

/* The physical range of output o on setting s with GPU g: [lo, hi]. */
static void physical_range(int o, const struct dp_setting *s, const struct dp_gpu *g, double *lo,
                           double *hi) {
    (void)g;
    *lo = 1e-3; /* durations, iteration time and memory are > 0 */
    *hi = INFINITY;
    if (o == 2 || o == 5) { /* utilisation peaks, % */
        *lo = 0;
        *hi = 100;
    } else if (o == 8 || o == 11) { /* network peaks, MB/s: within the link's line rate */
        *lo = 0;
        *hi = dp_network_bandwidth_gbps(s->network) * 1e3;
    }
}

static double clampd(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

enum dp_status dp_sa_predict(const struct dp_sa_inspector *sa, const struct dp_sa_graph *g,
                             const struct dp_setting *settings, const struct dp_gpu *const *gpus,
                             int n, struct dp_sa_prediction *out, struct dp_error *err) {
    if (n <= 0) return DP_OK;
    for (int i = 0; i < n; i++) {
        const struct dp_gpu *gpu = gpus[i];
        if (!gpu || !(gpu->fp32_tflops > 0) || !(gpu->memory_gb > 0) || !(gpu->bandwidth_gbps > 0))
            return dp_error_set(err, DP_ERR_INVALID, "setting-aware inspector: GPU %s: its FP32 "
                                "rate, memory or bandwidth is unknown (the head reads them)",
                                gpu ? gpu->name : settings[i].gpu);
    }
    size_t nin = (size_t)sa->n_in;
    double *raw = malloc(nin * sizeof *raw);
    float *x = calloc((size_t)n * nin, sizeof *x);
    float *y = malloc((size_t)n * NO * sizeof *y), *sp = malloc((size_t)n * NO * sizeof *sp);
    enum dp_status st = DP_OK;
    if (!raw || !x || !y || !sp) {
        st = dp_error_set(err, DP_ERR_NOMEM, "setting-aware inspector: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        dp_sa_raw_input(sa, g->emb, &g->profile, &settings[i], gpus[i], raw);
        dp_sa_normalize(sa, raw, x + (size_t)i * nin);
    }
    dp_sa_head(sa, -1, x, n, y, sp);
    for (int i = 0; i < n; i++) {
        struct dp_sa_prediction *p = &out[i];
        for (int o = 0; o < NO; o++) {
            double t = y[(size_t)i * NO + o], s = sp[(size_t)i * NO + o];
            if (!isfinite(t)) {
                st = dp_error_set(err, DP_ERR_INVALID, "setting-aware inspector: %s: %s is not "
                                  "finite", settings[i].id, dp_sa_output_name(o));
                goto done;
            }
            double half = sa->q[o] * (s + sa->s0[o]);
            double v = dp_sa_label(sa, o, t), lo, hi;
            physical_range(o, &settings[i], gpus[i], &lo, &hi);
            p->value[o] = clampd(v, lo, hi);
            p->clamped[o] = p->value[o] != v;
            p->lo[o] = clampd(dp_sa_label(sa, o, t - half), lo, hi);
            p->hi[o] = clampd(dp_sa_label(sa, o, t + half), lo, hi);
        }
        p->ood_score = g->ood_score;
        p->ood = g->ood_score > 1;
        double mem = gpus[i]->memory_gb / (gpus[i]->devices > 1 ? gpus[i]->devices : 1);
        p->oom = p->value[DP_SA_MEMORY] > mem;
    }
done:
    free(raw);
    free(x);
    free(y);
    free(sp);
    return st;
}

/* ---- the trainer: Adam on one member ---- */

struct dp_sa_trainer {
    struct dp_sa_inspector *sa;
    int    member, t, cap;
    float  lr, wd;
    struct dp_sa_loss loss;
    float *g, *m1, *m2;   /* per_member each */
    float *buf;           /* activations and their gradients for cap rows */
};

enum dp_status dp_sa_trainer_init(struct dp_sa_inspector *sa, int member, float lr,
                                  float weight_decay, const struct dp_sa_loss *loss,
                                  struct dp_sa_trainer **out, struct dp_error *err) {
    struct dp_sa_trainer *t = calloc(1, sizeof *t);
    size_t n = sa->per_member;
    if (!t || !(t->g = calloc(n, sizeof *t->g)) || !(t->m1 = calloc(n, sizeof *t->m1)) ||
        !(t->m2 = calloc(n, sizeof *t->m2))) {
        dp_sa_trainer_free(t);
        return dp_error_set(err, DP_ERR_NOMEM, "setting-aware trainer: out of memory");
    }
    t->sa = sa;
    t->member = member;
    t->lr = lr;
    t->wd = weight_decay;
    if (loss) t->loss = *loss;
    else
        for (int o = 0; o < NO; o++) t->loss.weight[o] = 1;
    *out = t;
    return DP_OK;
}

void dp_sa_trainer_free(struct dp_sa_trainer *t) {
    if (!t) return;
    free(t->g);
    free(t->m1);
    free(t->m2);
    free(t->buf);
    free(t);
}

/* d silu(z) / dz = s (1 + z (1 - s)), s = sigmoid(z). */
static void silu_backward(float *da, const float *z, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float s = 1.0f / (1.0f + dp_expf(-z[i]));
        da[i] *= s * (1.0f + z[i] * (1.0f - s));
    }
}

enum dp_status dp_sa_trainer_step(struct dp_sa_trainer *t, const float *x, const float *tg,
                                  int B, int n_pairs, bool step, float *loss,
                                  struct dp_error *err) {
    struct dp_sa_inspector *sa = t->sa;
    int h1 = H1(sa), h2 = H2(sa), nin = sa->n_in;
    if (B > t->cap) {
        float *b = realloc(t->buf, (size_t)B * (3 * (size_t)h1 + 3 * h2 + 2 * NO) * sizeof *b);
        if (!b) return dp_error_set(err, DP_ERR_NOMEM, "setting-aware trainer: out of memory");
        t->buf = b;
        t->cap = B;
    }
    float *a1 = t->buf, *z1 = a1 + (size_t)B * h1, *d1 = z1 + (size_t)B * h1;
    float *a2 = d1 + (size_t)B * h1, *z2 = a2 + (size_t)B * h2, *d2 = z2 + (size_t)B * h2;
    float *y = d2 + (size_t)B * h2, *dy = y + (size_t)B * NO;
    forward(sa, t->member, x, B, y, a1, a2, z1, z2);
    double l = 0;
    size_t present = 0, n_rows = (size_t)B - 2 * (size_t)n_pairs;
    for (size_t i = 0; i < n_rows * NO; i++) present += isfinite(tg[i]) != 0;
    float scale = present ? 2.0f / (float)present : 0;
    float hub = (float)t->loss.huber;
    for (size_t i = 0; i < n_rows * NO; i++) {
        float d = isfinite(tg[i]) ? y[i] - tg[i] : 0, g = d;
        l += (double)d * d;
        if (hub > 0 && fabsf(d) > hub) g = d > 0 ? hub : -hub;
        dy[i] = scale * (float)t->loss.weight[i % NO] * g;
    }
    /* The pairs: the error of the predicted difference, on both rows. */
    for (int p = 0; p < n_pairs; p++) {
        size_t a = (n_rows + 2 * (size_t)p) * NO, b = a + NO;
        for (int o = 0; o < NO; o++) {
            float e = 0;
            if (t->loss.pair[o] > 0 && isfinite(tg[a + o]) && isfinite(tg[b + o]))
                e = (y[b + o] - y[a + o]) - (tg[b + o] - tg[a + o]);
            float g = 2.0f * (float)t->loss.pair[o] * e / (float)n_pairs;
            dy[b + o] = g;
            dy[a + o] = -g;
        }
    }
    *loss = present ? (float)(l / (double)present) : 0;
    if (!step) return DP_OK;
    struct params p = member(sa, t->member), gp;
    {
        struct dp_sa_inspector view = *sa; /* the gradient buffer laid out as member 0 */
        view.w = t->g;
        gp = member(&view, 0);
    }
    /* Layer 3, then back through the two SiLU layers. */
    dp_kn_gemm(true, false, h2, NO, B, a2, h2, dy, NO, 0.0f, gp.w3, NO);
    for (int o = 0; o < NO; o++) {
        float s = 0;
        for (int i = 0; i < B; i++) s += dy[(size_t)i * NO + o];
        gp.b3[o] = s;
    }
    dp_kn_gemm(false, true, B, h2, NO, dy, NO, p.w3, NO, 0.0f, d2, h2);
    silu_backward(d2, z2, (size_t)B * h2);
    dp_kn_gemm(true, false, h1, h2, B, a1, h1, d2, h2, 0.0f, gp.w2, h2);
    for (int j = 0; j < h2; j++) {
        float s = 0;
        for (int i = 0; i < B; i++) s += d2[(size_t)i * h2 + j];
        gp.b2[j] = s;
    }
    dp_kn_gemm(false, true, B, h1, h2, d2, h2, p.w2, h2, 0.0f, d1, h1);
    silu_backward(d1, z1, (size_t)B * h1);
    dp_kn_gemm(true, false, nin, h1, B, x, nin, d1, h1, 0.0f, gp.w1, h1);
    for (int j = 0; j < h1; j++) {
        float s = 0;
        for (int i = 0; i < B; i++) s += d1[(size_t)i * h1 + j];
        gp.b1[j] = s;
    }
    /* Adam, weight decay as L2 on the gradient (torch.optim.Adam). */
    t->t++;
    const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    float c1 = 1.0f - powf(b1, (float)t->t), c2 = 1.0f - powf(b2, (float)t->t);
    float *w = p.w1;
    for (size_t i = 0; i < sa->per_member; i++) {
        float g = t->g[i] + t->wd * w[i];
        t->m1[i] = b1 * t->m1[i] + (1 - b1) * g;
        t->m2[i] = b2 * t->m2[i] + (1 - b2) * g * g;
        w[i] -= t->lr * (t->m1[i] / c1) / (sqrtf(t->m2[i] / c2) + eps);
    }
    return DP_OK;
}
