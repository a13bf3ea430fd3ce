/* sample.c: simulate-then-sample, the one way a simulated dataset sample is made (the
 * explorer's transfer, `driple dataset build`): the simulator's labels, marked simulated. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dp/session.h"

void dp_sample_mark_simulated(struct dp_sample *out, const struct dp_setting *s,
                              const char *where) {
    snprintf(out->job.precision, sizeof out->job.precision, "%s", dp_precision_name(s->precision));
    snprintf(out->job.gpu, sizeof out->job.gpu, "%.*s", (int)sizeof out->job.gpu - 1, s->gpu);
    snprintf(out->source.kind, sizeof out->source.kind, "simulated");
    snprintf(out->source.where, sizeof out->source.where, "%s", where);
}

enum dp_status dp_sample_simulate(const struct dp_graph *g, const struct dp_setting *s,
                                  const struct dp_gpu *gpu, const struct dp_sim_opts *o,
                                  const char *where, struct dp_sample *out, bool *fits,
                                  struct dp_error *err) {
    struct dp_sim_result r;
    memset(&r, 0, sizeof r);
    enum dp_status st = dp_simulate(g, s, gpu, o, &r, err);
    if (st) {
        dp_sim_result_free(&r);
        return st;
    }
    *fits = !r.oom;
    for (int q = 0; q < DP_N_OUTPUTS; q++) {
        out->labels[q] = r.labels[q];
        *fits = *fits && isfinite(r.labels[q]);
    }
    out->batch = r.batch;
    out->iteration_ms = r.iteration_ms;
    out->memory_gb = r.memory_gb;
    dp_sim_result_free(&r);
    dp_sample_mark_simulated(out, s, where);
    return DP_OK;
}
