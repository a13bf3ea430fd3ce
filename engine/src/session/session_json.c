/* session_json.c: a session's predictions and simulations as JSON members (dp/session.h), the
 * same in `predict --json`, `compare --json` and the explorer's export: a setting-aware
 * prediction adds its 80% interval and its OOD and out-of-memory flags. */
#include <math.h>

#include "dp/json_out.h"
#include "dp/session.h"

/* An interval as member key of w: [lo, hi]. */
static void jw_interval(struct dp_jw *w, const char *key, double lo, double hi) {
    dp_jw_array(w, key);
    dp_jw_num(w, NULL, lo);
    dp_jw_num(w, NULL, hi);
    dp_jw_end(w);
}

void dp_jw_prediction(struct dp_jw *w, const struct dp_prediction *p) {
    dp_jw_str(w, "source", dp_pred_source_name(p->from.source));
    dp_jw_str(w, "inspector", p->from.path[0] ? p->from.path : NULL);
    dp_jw_str(w, "inspector_setting", p->from.setting_id[0] ? p->from.setting_id : NULL);
    if (!p->ok) {
        dp_jw_null(w, "data");
        dp_jw_null(w, "metrics");
        dp_jw_null(w, "raw");
        dp_jw_null(w, "clamped");
        dp_jw_null(w, "derived");
        dp_jw_null(w, "interval");
        dp_jw_null(w, "ood");
        dp_jw_null(w, "ood_score");
        dp_jw_null(w, "oom");
        return;
    }
    dp_jw_str(w, "data", p->data);
    dp_jw_outputs(w, "metrics", p->m);
    dp_jw_array(w, "raw");
    for (int o = 0; o < DP_N_OUTPUTS; o++) dp_jw_float(w, NULL, p->raw[o]);
    dp_jw_end(w);
    dp_jw_array(w, "clamped");
    for (int o = 0; o < DP_SA_N_OUT; o++)
        if (p->clamped & (1u << o)) dp_jw_str(w, NULL, dp_sa_output_name(o));
    dp_jw_end(w);
    dp_jw_derived(w, "derived", p->d, &p->facts);
    dp_jw_bursts(w, "bursts", p->m, p->d[DP_D_ITERATION_MS]);
    if (!p->has_interval) {
        dp_jw_null(w, "interval");
    } else {
        dp_jw_object(w, "interval");
        dp_jw_num(w, "level", 0.8);
        dp_jw_object(w, "metrics");
        for (int r = 0; r < DP_N_RESOURCES; r++) {
            dp_jw_object(w, dp_resource_name((enum dp_resource)r));
            for (int k = 0; k < DP_N_STATS; k++) {
                int o = DP_OUTPUT(r, k);
                jw_interval(w, dp_outputs[o].stat, p->lo[o], p->hi[o]);
            }
            dp_jw_end(w);
        }
        dp_jw_end(w);
        dp_jw_object(w, "derived");
        for (int k = 0; k < DP_N_DERIVED; k++)
            if (isfinite(p->d_lo[k]))
                jw_interval(w, dp_derived_figures[k].key, p->d_lo[k], p->d_hi[k]);
        dp_jw_end(w);
        dp_jw_end(w);
    }
    if (p->from.source == DP_SOURCE_SETTING_AWARE) {
        dp_jw_bool(w, "ood", p->ood);
        dp_jw_num(w, "ood_score", p->ood_score);
        dp_jw_bool(w, "oom", p->oom);
    } else {
        dp_jw_null(w, "ood");
        dp_jw_null(w, "ood_score");
        dp_jw_null(w, "oom");
    }
}

void dp_jw_simulation(struct dp_jw *w, const char *key, const struct dp_simulation *sim) {
    if (!sim->ok) {
        dp_jw_null(w, key);
        return;
    }
    dp_jw_object(w, key);
    dp_jw_outputs(w, "metrics", sim->m);
    dp_jw_derived(w, "derived", sim->d, &sim->facts);
    dp_jw_bursts(w, "bursts", sim->m, sim->d[DP_D_ITERATION_MS]);
    dp_jw_num(w, "memory_gb", sim->memory_gb);
    dp_jw_bool(w, "oom", sim->oom);
    dp_jw_end(w);
}
