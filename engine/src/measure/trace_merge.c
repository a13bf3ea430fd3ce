/* trace_merge.c: one sample's traces from several files (a GPU trace and a network trace, or a
 * simulator trace), read and merged into one dp_trace (dp_trace_read_merged, trace.h). */
#include <stdio.h>
#include <string.h>

#include "dp/trace.h"

enum dp_status dp_trace_read_merged(const char *const *paths, int n, struct dp_trace *t,
                                    struct dp_error *err) {
    const char *owner[DP_SERIES_COUNT] = {0};
    enum dp_status st = DP_OK;
    int n_simulated = 0;
    /* each file on its own first, so that two traces of one resource are reported as such, not
     * as samples going back in time */
    for (int i = 0; i < n && st == DP_OK; i++) {
        struct dp_trace *one = dp_trace_init("measured");
        if (!one) return dp_error_set(err, DP_ERR_NOMEM, "%s: out of memory", paths[i]);
        st = dp_trace_read_any(paths[i], one, err);
        bool any = false;
        for (int k = 0; k < DP_SERIES_COUNT && st == DP_OK; k++) {
            const struct dp_series *s = &one->s[k];
            if (s->n == 0) continue;
            any = true;
            if (owner[k]) {
                st = dp_error_set(err, DP_ERR_INVALID,
                                  "%s: a second trace of %s (first: %s); give one GPU trace and "
                                  "one network trace per sample",
                                  paths[i], dp_series_name((enum dp_series_kind)k), owner[k]);
                break;
            }
            owner[k] = paths[i];
            for (size_t j = 0; j < s->n && st == DP_OK; j++)
                st = dp_trace_push(t, (enum dp_series_kind)k, s->t_ms[j], s->v[j], err);
        }
        if (st == DP_OK && !any) st = dp_error_set(err, DP_ERR_INVALID, "%s: no samples", paths[i]);
        n_simulated += !strcmp(one->source, "simulated");
        dp_trace_free(one);
    }
    if (st == DP_OK && n_simulated > 0 && n_simulated < n)
        return dp_error_set(err, DP_ERR_INVALID,
                            "%s: mixes simulated and measured traces in one sample", paths[0]);
    snprintf(t->source, sizeof t->source, "%s", n_simulated ? "simulated" : "measured");
    return st;
}
