/* session_json.c: a session's predictions and simulations as JSON members (dp/session.h), the
 * same in `predict --json`, `compare --json` and the explorer's export. */
#include "dp/json_out.h"
#include "dp/session.h"

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
        return;
    }
    dp_jw_str(w, "data", p->data);
    dp_jw_outputs(w, "metrics", p->m);
    dp_jw_array(w, "raw");
    for (int o = 0; o < DP_N_OUTPUTS; o++) dp_jw_float(w, NULL, p->raw[o]);
    dp_jw_end(w);
    dp_jw_array(w, "clamped");
    for (int o = 0; o < DP_N_OUTPUTS; o++)
        if (p->clamped & (1u << o)) dp_jw_str(w, NULL, dp_outputs[o].name);
    dp_jw_end(w);
    dp_jw_derived(w, "derived", p->d, &p->facts);
}

void dp_jw_simulation(struct dp_jw *w, const char *key, const struct dp_simulation *sim) {
    if (!sim->ok) {
        dp_jw_null(w, key);
        return;
    }
    dp_jw_object(w, key);
    dp_jw_outputs(w, "metrics", sim->m);
    dp_jw_derived(w, "derived", sim->d, &sim->facts);
    dp_jw_num(w, "memory_gb", sim->memory_gb);
    dp_jw_bool(w, "oom", sim->oom);
    dp_jw_end(w);
}
