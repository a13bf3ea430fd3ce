/* inspector.c: an inspector is a model plus what it predicts for: output names, units, label
 * scales and transforms (dp_inspector_metric: scale x raw as published, or a normalised log),
 * the setting, and its provenance. Prediction and the body key (equal for inspectors sharing a
 * GNN body, so embeddings can be shared) live here; the file format is in inspector_json.c. */
#include "dp/inspector.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/torch.h"
#include "inspector_impl.h"

bool dp_param_is_head(const char *name) {
    return strncmp(name, "graph_read_out.mlp.", 19) == 0;
}

#define LOG_EXP_CAP 80.0 /* expm1(80) ~ 5.5e34: finite, and far beyond any label */

static const char *const transform_names[DP_OUT_TRANSFORM_COUNT] = {"linear", "log"};

const char *dp_out_transform_name(enum dp_out_transform t) {
    return t >= 0 && t < DP_OUT_TRANSFORM_COUNT ? transform_names[t] : "?";
}

bool dp_out_transform_parse(const char *s, enum dp_out_transform *out) {
    for (int t = 0; t < DP_OUT_TRANSFORM_COUNT; t++)
        if (!strcmp(s, transform_names[t])) {
            *out = (enum dp_out_transform)t;
            return true;
        }
    return false;
}

static void eval_nan(struct dp_eval *e) {
    for (int o = 0; o < DP_N_OUTPUTS; o++) e->mape[o] = e->rmse[o] = e->r2[o] = NAN;
}

enum dp_status dp_inspector_init(struct dp_model *m, struct dp_inspector **out, struct dp_error *err) {
    if (!m) return dp_error_set(err, DP_ERR_INVALID, "inspector: no model");
    struct dp_inspector *insp = calloc(1, sizeof *insp);
    if (!insp) {
        dp_model_free(m);
        return dp_error_set(err, DP_ERR_NOMEM, "inspector: out of memory");
    }
    insp->model = m;
    for (int o = 0; o < DP_N_OUTPUTS; o++) {
        snprintf(insp->out[o].name, sizeof insp->out[o].name, "%s", dp_outputs[o].name);
        snprintf(insp->out[o].unit, sizeof insp->out[o].unit, "%s", dp_outputs[o].unit);
        insp->out[o].scale = 1.0;
        insp->out[o].transform = DP_OUT_LINEAR;
        insp->out[o].offset = 0.0;
        insp->out[o].span = 1.0;
    }
    snprintf(insp->prov.origin, sizeof insp->prov.origin, "scratch");
    snprintf(insp->prov.mode, sizeof insp->prov.mode, "full");
    eval_nan(&insp->prov.val);
    eval_nan(&insp->prov.test);
    insp->key_stale = true;
    *out = insp;
    return DP_OK;
}

void dp_inspector_free(struct dp_inspector *insp) {
    if (!insp) return;
    dp_model_free(insp->model);
    free(insp);
}

const struct dp_model *dp_inspector_model(const struct dp_inspector *insp) { return insp->model; }

struct dp_model *dp_inspector_model_mut(struct dp_inspector *insp) {
    insp->key_stale = true; /* the caller may change parameters */
    return insp->model;
}

const struct dp_output_meta *dp_inspector_output(const struct dp_inspector *insp, int o) {
    return o >= 0 && o < DP_N_OUTPUTS ? &insp->out[o] : NULL;
}

void dp_inspector_set_scale(struct dp_inspector *insp, int o, double scale) {
    if (o >= 0 && o < DP_N_OUTPUTS) insp->out[o].scale = scale;
}

enum dp_status dp_inspector_set_transform(struct dp_inspector *insp, int o,
                                          enum dp_out_transform t, double scale, double offset,
                                          double span) {
    if (o < 0 || o >= DP_N_OUTPUTS || t < 0 || t >= DP_OUT_TRANSFORM_COUNT ||
        !(isfinite(scale) && scale > 0) || !isfinite(offset) || !(isfinite(span) && span > 0))
        return DP_ERR_INVALID;
    insp->out[o].transform = t;
    insp->out[o].scale = scale;
    insp->out[o].offset = offset;
    insp->out[o].span = span;
    return DP_OK;
}

double dp_inspector_metric(const struct dp_inspector *insp, int o, double raw) {
    const struct dp_output_meta *m = &insp->out[o];
    double z = m->offset + m->span * raw;
    if (m->transform == DP_OUT_LOG) return m->scale * expm1(z < LOG_EXP_CAP ? z : LOG_EXP_CAP);
    return m->scale * z;
}

double dp_inspector_metric_slope(const struct dp_inspector *insp, int o, double raw) {
    const struct dp_output_meta *m = &insp->out[o];
    double z = m->offset + m->span * raw;
    if (m->transform == DP_OUT_LOG) return m->scale * m->span * exp(z < LOG_EXP_CAP ? z : LOG_EXP_CAP);
    return m->scale * m->span;
}

double dp_inspector_target(const struct dp_inspector *insp, int o, double label) {
    const struct dp_output_meta *m = &insp->out[o];
    double v = label / m->scale;
    if (m->transform == DP_OUT_LOG) v = log1p(v > 0 ? v : 0);
    return (v - m->offset) / m->span;
}

const char *dp_inspector_setting(const struct dp_inspector *insp) { return insp->setting; }

enum dp_status dp_inspector_set_setting(struct dp_inspector *insp, const char *id) {
    if (!id) id = "";
    if (strlen(id) >= sizeof insp->setting)
        return DP_ERR_INVALID; /* ids are short ("V100-P1w2ho-PCIe") */
    snprintf(insp->setting, sizeof insp->setting, "%s", id);
    return DP_OK;
}

const struct dp_provenance *dp_inspector_provenance(const struct dp_inspector *insp) {
    return &insp->prov;
}

struct dp_provenance *dp_inspector_provenance_mut(struct dp_inspector *insp) { return &insp->prov; }

/* FNV-1a, 64-bit: enough to tell bodies apart (not a security hash). */
static uint64_t fnv(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= UINT64_C(1099511628211);
    }
    return h;
}

void dp_inspector_refresh_key(struct dp_inspector *insp) {
    const struct dp_arch *a = dp_model_arch(insp->model);
    uint64_t h = UINT64_C(14695981039346656037);
    int ints[] = {(int)a->layer, a->n_feat, a->hidden, (int)a->rule, a->n_layers, a->max_layers,
                  a->gru, a->heads, a->towers, a->set2set_steps, (int)a->feat};
    h = fnv(h, ints, sizeof ints);
    /* Only the features in use: published inspectors keep their keys. */
    h = fnv(h, a->feat_mean, (size_t)a->n_feat * sizeof a->feat_mean[0]);
    h = fnv(h, a->feat_std, (size_t)a->n_feat * sizeof a->feat_std[0]);
    int n = dp_model_n_params(insp->model);
    for (int i = 0; i < n; i++) {
        struct dp_param p;
        dp_model_param(insp->model, i, &p);
        if (dp_param_is_head(p.name)) continue;
        h = fnv(h, p.name, strlen(p.name) + 1);
        h = fnv(h, p.data, p.size * sizeof *p.data);
    }
    snprintf(insp->body_key, sizeof insp->body_key, "%016llx", (unsigned long long)h);
    insp->key_stale = false;
}

const char *dp_inspector_body_key(const struct dp_inspector *insp) {
    /* Computed once after each change of the parameters (load, training). The cast is the one
     * place a const inspector is written: a cache of a pure function of its contents. */
    if (insp->key_stale) dp_inspector_refresh_key((struct dp_inspector *)(uintptr_t)insp);
    return insp->body_key;
}

enum dp_status dp_inspector_predict(const struct dp_inspector *insp, const struct dp_grouped *g,
                                    float raw[DP_N_OUTPUTS], double metrics[DP_N_OUTPUTS],
                                    struct dp_error *err) {
    float r[DP_N_OUTPUTS];
    enum dp_status st = dp_model_predict(insp->model, g, r, err);
    if (st) return st;
    for (int o = 0; o < DP_N_OUTPUTS; o++)
        if (!isfinite(r[o]))
            return dp_error_set(err, DP_ERR_INVALID,
                                "%s: prediction of %s is not finite (features far outside the "
                                "training range?)", g->graph, insp->out[o].name);
    double m[DP_N_OUTPUTS];
    for (int o = 0; o < DP_N_OUTPUTS; o++) {
        m[o] = dp_inspector_metric(insp, o, r[o]);
        /* a finite raw value times an absurd scale from a corrupt file overflows */
        if (!isfinite(m[o]))
            return dp_error_set(err, DP_ERR_INVALID,
                                "%s: %s (raw %g) maps to a non-finite value (scale %g: corrupt "
                                "inspector?)", g->graph, insp->out[o].name, (double)r[o],
                                insp->out[o].scale);
    }
    for (int o = 0; o < DP_N_OUTPUTS; o++) {
        if (raw) raw[o] = r[o];
        if (metrics) metrics[o] = m[o];
    }
    return DP_OK;
}

enum dp_status dp_inspector_import_torch(const char *path, const struct dp_arch *arch,
                                         struct dp_inspector **out, struct dp_error *err) {
    struct dp_torch_state ts = {0, NULL};
    struct dp_model *m = NULL;
    struct dp_inspector *insp = NULL;
    bool *seen = NULL;
    enum dp_status st = dp_torch_load(path, &ts, err);
    if (st) return st;
    if ((st = dp_model_init(arch, 0, &m, err))) {
        dp_error_prefix(err, path);
        goto fail;
    }
    int n = dp_model_n_params(m);
    if (!(seen = calloc((size_t)n + 1, sizeof *seen))) {
        st = dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    for (int i = 0; i < ts.n_tensors; i++) {
        const struct dp_torch_tensor *t = &ts.tensors[i];
        int idx = dp_model_find_param(m, t->name);
        if (idx < 0) {
            if (!strncmp(t->name, "conv_layers.2.", 14)) continue;
            st = dp_error_set(err, DP_ERR_NOT_FOUND, "%s: tensor '%s' is not a parameter of a %s model",
                              path, t->name, dp_layer_name(arch->layer));
            goto fail;
        }
        if (seen[idx]) {
            st = dp_error_set(err, DP_ERR_INVALID, "%s: tensor '%s' appears twice", path, t->name);
            goto fail;
        }
        struct dp_param p;
        dp_model_param(m, idx, &p);
        bool match = p.n_dims == t->n_dims && p.size == t->size;
        for (int d = 0; match && d < p.n_dims; d++) match = p.shape[d] == t->shape[d];
        if (!match) {
            char want[64] = "", got[64] = "";
            size_t u = 0;
            for (int d = 0; d < p.n_dims && u < sizeof want; d++)
                u += (size_t)snprintf(want + u, sizeof want - u, "%s%lld", d ? ", " : "", (long long)p.shape[d]);
            u = 0;
            for (int d = 0; d < t->n_dims && u < sizeof got; d++)
                u += (size_t)snprintf(got + u, sizeof got - u, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
            st = dp_error_set(err, DP_ERR_SHAPE, "%s: tensor '%s' has shape [%s], the %s model needs [%s]",
                              path, t->name, got, dp_layer_name(arch->layer), want);
            goto fail;
        }
        for (size_t k = 0; k < t->size; k++)
            if (!isfinite(t->data[k]) || fabsf(t->data[k]) > 1e6f) {
                st = dp_error_set(err, DP_ERR_INVALID,
                                  "%s: tensor '%s' element %zu is %g (not finite, or beyond 1e6: corrupt?)",
                                  path, t->name, k, (double)t->data[k]);
                goto fail;
            }
        memcpy(p.data, t->data, t->size * sizeof *t->data);
        seen[idx] = true;
    }
    for (int i = 0; i < n; i++)
        if (!seen[i]) {
            struct dp_param p;
            dp_model_param(m, i, &p);
            st = dp_error_set(err, DP_ERR_NOT_FOUND, "%s: the checkpoint lacks '%s' (is --layer right?)",
                              path, p.name);
            goto fail;
        }
    st = dp_inspector_init(m, &insp, err);
    m = NULL;
    if (st) goto fail;
    snprintf(insp->prov.origin, sizeof insp->prov.origin, "imported");
    snprintf(insp->prov.data, sizeof insp->prov.data, "published");
    snprintf(insp->prov.mode, sizeof insp->prov.mode, "full");
    dp_inspector_refresh_key(insp);
    free(seen);
    dp_torch_state_free(&ts);
    *out = insp;
    return DP_OK;
fail:
    free(seen);
    dp_model_free(m);
    dp_torch_state_free(&ts);
    return st;
}
