/* session_explain.c: which groups drive the number the session predicts for a setting,
 * through the inspector that predicts it (dp_session_resolve): the setting-aware inspector by
 * occlusion, a per-setting one by its gradients or occlusion; the value explained is the
 * prediction's own. */
#include "session_impl.h"

#include <math.h>
#include <stdio.h>

enum dp_status dp_session_explain_sa(struct dp_session *ss, const struct dp_setting *s,
                                     struct dp_explain_sa *out, struct dp_error *err) {
    if (!ss->sa || !ss->graph)
        return dp_error_set(err, DP_ERR_INVALID, "session: no setting-aware inspector or no graph");
    const struct dp_gpu *gpu = dp_gpu_find(ss->cat, s->gpu);
    if (!gpu) return dp_error_set(err, DP_ERR_NOT_FOUND, "GPU %s is not in the catalog", s->gpu);
    enum dp_status st = dp_profile_graph(ss->graph, ss->batch, &out->profile, err);
    if (st) {
        dp_error_prefix(err, ss->path);
        return st;
    }
    out->sa = ss->sa;
    out->setting = *s;
    out->gpu = *gpu;
    return DP_OK;
}

double dp_prediction_metric(const struct dp_prediction *p, int metric) {
    if (!p->ok) return NAN;
    if (metric >= 0 && metric < DP_N_OUTPUTS) return p->m[metric];
    return metric == DP_METRIC_ITERATION ? p->d[DP_D_ITERATION_MS] : NAN;
}

enum dp_status dp_session_explain(struct dp_session *ss, const struct dp_setting *s, int i,
                                  unsigned flags, int metric, enum dp_explain_method method,
                                  int n_threads, struct dp_explain **out,
                                  struct dp_prediction *pred, struct dp_error *err) {
    if (metric < 0 || metric >= DP_N_METRICS)
        return dp_error_set(err, DP_ERR_INVALID, "explain: metric %d out of range [0, %d)", metric,
                            DP_N_METRICS);
    enum dp_status st = i >= 0 ? dp_session_predict_with(ss, i, s, pred, err)
                               : dp_session_predict(ss, s, flags, pred, err);
    if (st) return st;
    if (!pred->ok)
        return dp_error_set(err, DP_ERR_NOT_FOUND, "%s", pred->note[0] ? pred->note
                                                                     : "no inspector to explain");
    struct dp_explain *e = NULL;
    if (pred->from.source == DP_SOURCE_SETTING_AWARE) {
        struct dp_explain_sa in;
        if (!(st = dp_session_explain_sa(ss, s, &in, err)))
            st = dp_explain_compute_sa(&in, ss->grouped, metric, &e, err);
    } else {
        st = dp_explain_compute_inspector(ss->insps[pred->from.inspector].insp, ss->grouped,
                                          metric, method, n_threads, &e, err);
    }
    if (!st && ss->graph && ss->grouped->member_start)
        st = dp_explain_drill(e, ss->grouped, ss->graph, ss->weights, err);
    if (st) {
        dp_error_prefix(err, ss->path);
        dp_explain_free(e);
        return st;
    }
    /* the number explained is the number predicted (a per-setting inspector's outputs read 0
     * where they dip below it) */
    e->value = dp_prediction_metric(pred, metric);
    *out = e;
    return DP_OK;
}
