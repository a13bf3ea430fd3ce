/* arch.c: the inspector network's architecture as values: layer, rule and feature-transform
 * names, the published defaults, checks, the layer-count rules and the input feature transform.
 * The bottom of gnn/: the fast engine and the model both read it. */
#include <math.h>
#include <string.h>

#include "model_impl.h"

static const char *const layer_names[] = {"gcn", "gin", "gat", "mpnn"};
_Static_assert(sizeof layer_names / sizeof layer_names[0] == DP_LAYER_COUNT, "update layer_names");
static const char *const rule_names[] = {"half", "n", "log2", "fixed"};
_Static_assert(sizeof rule_names / sizeof rule_names[0] == DP_RULE_COUNT, "update rule_names");
static const char *const feat_names[] = {"raw", "log"};
_Static_assert(sizeof feat_names / sizeof feat_names[0] == DP_FEAT_COUNT, "update feat_names");

static int find_name(const char *const *names, int n, const char *s) {
    for (int i = 0; s && i < n; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

const char *dp_layer_name(enum dp_layer l) {
    return (unsigned)l < DP_LAYER_COUNT ? layer_names[l] : "?";
}
bool dp_layer_parse(const char *s, enum dp_layer *out) {
    int i = find_name(layer_names, DP_LAYER_COUNT, s);
    if (i < 0) return false;
    *out = (enum dp_layer)i;
    return true;
}
const char *dp_layer_rule_name(enum dp_layer_rule r) {
    return (unsigned)r < DP_RULE_COUNT ? rule_names[r] : "?";
}
bool dp_layer_rule_parse(const char *s, enum dp_layer_rule *out) {
    int i = find_name(rule_names, DP_RULE_COUNT, s);
    if (i < 0) return false;
    *out = (enum dp_layer_rule)i;
    return true;
}
const char *dp_feat_name(enum dp_feat f) {
    return (unsigned)f < DP_FEAT_COUNT ? feat_names[f] : "?";
}
bool dp_feat_parse(const char *s, enum dp_feat *out) {
    int i = find_name(feat_names, DP_FEAT_COUNT, s);
    if (i < 0) return false;
    *out = (enum dp_feat)i;
    return true;
}

void dp_arch_default(struct dp_arch *a) {
    memset(a, 0, sizeof *a);
    a->layer = DP_LAYER_GCN;
    a->n_feat = DP_N_FEATURES;
    a->hidden = 64;
    a->n_out = DP_N_OUTPUTS;
    a->rule = DP_RULE_HALF;
    a->n_layers = 1;
    a->max_layers = 0;
    a->gru = true;
    a->heads = 4;
    a->towers = 4;
    a->set2set_steps = 0;
    a->feat = DP_FEAT_RAW;
    for (int f = 0; f < DP_N_FEATURES_MAX; f++) {
        a->feat_mean[f] = 0;
        a->feat_std[f] = 1;
    }
}

enum dp_status dp_arch_check(const struct dp_arch *a, struct dp_error *err) {
    if ((unsigned)a->layer >= DP_LAYER_COUNT)
        return dp_error_set(err, DP_ERR_INVALID, "arch: layer: unknown layer type %d", a->layer);
    if (a->n_feat != DP_N_FEATURES && a->n_feat != DP_N_FEATURES_MAX)
        return dp_error_set(err, DP_ERR_INVALID, "arch: n_feat: %d, expected %d or %d", a->n_feat,
                            DP_N_FEATURES, DP_N_FEATURES_MAX);
    if (a->hidden < a->n_feat || a->hidden > 4096)
        return dp_error_set(err, DP_ERR_INVALID, "arch: hidden: %d not in [%d, 4096]", a->hidden,
                            a->n_feat);
    if (a->n_out != DP_N_OUTPUTS)
        return dp_error_set(err, DP_ERR_INVALID, "arch: n_out: %d, expected %d", a->n_out,
                            DP_N_OUTPUTS);
    if ((unsigned)a->rule >= DP_RULE_COUNT)
        return dp_error_set(err, DP_ERR_INVALID, "arch: rule: unknown layer rule %d", a->rule);
    if (a->rule == DP_RULE_FIXED && (a->n_layers < 1 || a->n_layers > 100000))
        return dp_error_set(err, DP_ERR_INVALID, "arch: n_layers: %d not in [1, 100000]",
                            a->n_layers);
    if (a->max_layers < 0)
        return dp_error_set(err, DP_ERR_INVALID, "arch: max_layers: %d < 0", a->max_layers);
    if (a->set2set_steps < 0)
        return dp_error_set(err, DP_ERR_INVALID, "arch: set2set_steps: %d < 0",
                            a->set2set_steps);
    if (a->layer == DP_LAYER_GAT && (a->heads < 1 || a->hidden % a->heads))
        return dp_error_set(err, DP_ERR_INVALID, "arch: heads: %d does not divide hidden %d",
                            a->heads, a->hidden);
    if (a->layer == DP_LAYER_MPNN &&
        (a->towers < 1 || a->towers > DP_MODEL_MAX_TOWERS || a->hidden % a->towers))
        return dp_error_set(err, DP_ERR_INVALID,
                            "arch: towers: %d not in [1, %d] or does not divide hidden %d",
                            a->towers, DP_MODEL_MAX_TOWERS, a->hidden);
    if ((unsigned)a->feat >= DP_FEAT_COUNT)
        return dp_error_set(err, DP_ERR_INVALID, "arch: feat: unknown feature transform %d",
                            a->feat);
    for (int f = 0; f < a->n_feat; f++)
        if (!isfinite(a->feat_mean[f]) || !isfinite(a->feat_std[f]) || !(a->feat_std[f] > 0))
            return dp_error_set(err, DP_ERR_INVALID,
                                "arch: feat_mean/feat_std[%d]: not finite or std <= 0", f);
    return DP_OK;
}

int dp_arch_n_layers(const struct dp_arch *a, int n_groups) {
    int n = n_groups < 1 ? 1 : n_groups, l;
    switch (a->rule) {
    case DP_RULE_HALF: l = n / 2; break;
    case DP_RULE_N: l = n; break;
    case DP_RULE_LOG2: l = 0; while ((1 << (l + 1)) <= n && l < 30) l++; break;
    case DP_RULE_FIXED: l = a->n_layers; break;
    default: l = 1; break;
    }
    if (l < 1) l = 1;
    if (a->max_layers > 0 && l > a->max_layers) l = a->max_layers;
    return l;
}

float dp_arch_feat(const struct dp_arch *a, int f, double raw) {
    if (a->feat == DP_FEAT_LOG)
        return (float)((log1p(raw > 0 ? raw : 0) - a->feat_mean[f]) / a->feat_std[f]);
    return (float)raw;
}

double dp_arch_feat_deriv(const struct dp_arch *a, int f, double raw) {
    if (a->feat == DP_FEAT_LOG) return 1.0 / ((1.0 + (raw > 0 ? raw : 0)) * a->feat_std[f]);
    return 1.0;
}
