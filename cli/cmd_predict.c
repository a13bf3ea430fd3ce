/* cmd_predict.c: `driple predict`: one graph through one inspector (named, or found for a
 * setting: an id or the cluster options), with the derived figures and their formulas. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/coarsen.h"
#include "dp/inspector.h"
#include "dp/json_out.h"
#include "dp/metrics.h"
#include "dp/session.h"
#include "dp/settings.h"

static const char usage_predict[] =
    "driple predict GRAPH|--grouped FILE (--inspector M | --setting ID | --gpu NAME\n"
    "       " CMD_CLUSTER_USAGE ")\n"
    "       [--settings FILE] [--gpus FILE] [--batch N] [--exported-batch N] [--groups K]\n"
    "       [--seed S] [--weights FILE] " CMD_ECONOMICS_USAGE "\n"
    "       [--setting-aware FILE|none] [--json]\n"
    "  A setting is predicted by the setting-aware inspector (the shipped one, or FILE) unless the\n"
    "  user inspector directory holds a file for its cluster (the explorer saves a transfer\n"
    "  there); without one (none, or a --grouped workload) by the list's inspector for the same\n"
    "  cluster, else the user directory's file. The setting-aware inspector gives an 80%\n"
    "  interval, iteration_ms and memory_gb predicted directly, and says when the graph is out\n"
    "  of its training distribution.";

/* The prediction for people: the outputs, their interval, the derived figures and the
 * formulas. */
static void print_text(const struct dp_session *ss, const struct dp_prediction *p,
                       const struct dp_simulation *sim, const struct dp_setting *s,
                       const char *setting_id) {
    const struct dp_grouped *g = dp_session_grouped(ss);
    double params = dp_session_params(ss);
    printf("graph %s  batch %lld  groups %d  setting %s\ninspector %s (%s%s%s)\n\n", g->graph,
           (long long)g->batch, g->n_groups, setting_id[0] ? setting_id : "(none)", p->from.path,
           p->origin, p->data[0] ? ", " : "", p->data);
    printf("%-14s %12s %12s %12s\n", "resource", "idle ms", "active ms", "peak");
    for (int r = 0; r < DP_N_RESOURCES; r++)
        printf("%-14s %12.4g %12.4g %12.4g %s\n", dp_resource_name(r), p->m[DP_OUTPUT(r, DP_STAT_IDLE)],
               p->m[DP_OUTPUT(r, DP_STAT_ACTIVE)], p->m[DP_OUTPUT(r, DP_STAT_PEAK)],
               dp_resource_unit(r));
    if (p->has_interval) {
        printf("80%% interval:\n");
        for (int r = 0; r < DP_N_RESOURCES; r++) {
            printf("%-14s", dp_resource_name(r));
            for (int k = 0; k < DP_N_STATS; k++)
                printf(" %5.4g..%-6.4g", p->lo[DP_OUTPUT(r, k)], p->hi[DP_OUTPUT(r, k)]);
            printf("\n");
        }
    }
    for (int o = 0; o < DP_SA_N_OUT; o++)
        if (p->clamped & (1u << o))
            printf("%s came out of its physical range: read at its bound\n", dp_sa_output_name(o));
    const double *d = p->d;
    printf("\niteration %.4g ms", d[DP_D_ITERATION_MS]);
    if (isfinite(p->d_lo[DP_D_ITERATION_MS]))
        printf(" (%.4g..%.4g)", p->d_lo[DP_D_ITERATION_MS], p->d_hi[DP_D_ITERATION_MS]);
    printf("   throughput %.4g samples/s%s", d[DP_D_THROUGHPUT],
           p->facts.workers > 0 ? "" : " per worker");
    if (isfinite(p->d_lo[DP_D_THROUGHPUT]))
        printf(" (%.4g..%.4g)", p->d_lo[DP_D_THROUGHPUT], p->d_hi[DP_D_THROUGHPUT]);
    printf("   mean GPU util %.3g%%\n", d[DP_D_MEAN_GPU_UTIL]);
    cmd_text_bursts("", p->m, d[DP_D_ITERATION_MS]);
    if (sim->ok) cmd_text_bursts("simulated: ", sim->m, sim->d[DP_D_ITERATION_MS]);
    if (p->from.source == DP_SOURCE_SETTING_AWARE)
        printf("GPU memory %.3g GB (%.3g..%.3g)%s\n", d[DP_D_MEMORY_GB], p->d_lo[DP_D_MEMORY_GB],
               p->d_hi[DP_D_MEMORY_GB], p->oom ? ": more than the GPU holds (out of memory)" : "");
    if (p->ood)
        printf("out of distribution: this graph is unlike every graph the inspector learnt from "
               "(distance %.2f x the threshold); treat these numbers as a guess\n", p->ood_score);
    if (sim->ok && sim->oom)
        printf("OUT OF GPU MEMORY: %.3g GB per worker (simulated footprint) > the GPU's %.3g GB\n",
               sim->memory_gb, sim->gpu_memory_gb);
    else if (sim->ok)
        printf("GPU memory %.3g GB per worker (simulated footprint) of the GPU's %.3g GB: fits\n",
               sim->memory_gb, sim->gpu_memory_gb);
    else
        printf("GPU memory unknown: %s\n", sim->note);
    if (isfinite(d[DP_D_NET_MB_PER_ITER]) && s && s->sync == DP_SYNC_ALLREDUCE)
        printf("network per iteration %.4g MB per worker (all-reduce of %.0f parameters, NCCL's "
               "ring over %d workers on %d machine(s): 2 (W-1)/W x the gradient bytes when the "
               "machines are full)\n", d[DP_D_NET_MB_PER_ITER], params, s->workers, s->machines);
    else if (isfinite(d[DP_D_NET_MB_PER_ITER]))
        printf("network per iteration %.4g MB per worker (2 x %.0f parameters x 4 B)\n",
               d[DP_D_NET_MB_PER_ITER], params);
    const char *epoch_what;
    double epoch_n = dp_session_epoch_samples(ss, &epoch_what);
    if (isfinite(d[DP_D_EPOCH_S]))
        printf("epoch (%.0f samples: %s) %.4g s", epoch_n, epoch_what, d[DP_D_EPOCH_S]);
    if (isfinite(d[DP_D_EPOCH_COST]))
        printf("   cost %.4g USD at $%.4g per GPU-hour\nprice: %s", d[DP_D_EPOCH_COST],
               p->facts.price_per_gpu_hour, p->facts.price_source);
    else if (isfinite(d[DP_D_EPOCH_S]))
        printf("   cost unknown: %s (--price sets one)",
               p->facts.price_source ? p->facts.price_source : "no price");
    printf("\n\n");
    if (p->from.source == DP_SOURCE_SETTING_AWARE)
        printf("iteration_ms and memory_gb are predicted directly by the setting-aware inspector;"
               " the figures that follow from them use the formulas below\n");
    cmd_print_formulas();
}

static const struct cli_opt predict_opts[] = {
    {"--json", NULL, NULL, 0, 0, "print the prediction as JSON", NULL},
    CLI_MORE(cmd_what_if_table),
    CLI_MORE(cmd_economics_table),
    CLI_END,
};
const struct cli_spec cmd_predict_spec = {
    "predict", "the 12 metrics and the derived figures of one graph at one setting",
    usage_predict, predict_opts, NULL};

int cmd_predict(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_predict_spec)) return c.rc;
    int rc = 2;
    struct dp_session *ss = NULL;
    struct cmd_what_if wi;
    double epoch_samples = NAN, price = NAN; /* NaN: the family default */
    bool json = cli_flag(&c, "--json");
    if (!cmd_what_if_opts(&c, &wi) || !cmd_economics_opts(&c, &epoch_samples, &price) || c.bad)
        goto done;
    const char *graph = cli_positional(&c, 0);
    if (!cli_check_unused(&c)) goto done;
    /* The inspector first: a missing one is the commonest mistake and costs nothing to find. */
    struct dp_setting st; /* the setting predicted for (its workers) */
    struct dp_error err = {0};
    int insp;
    bool have_setting;
    if ((rc = cmd_what_if_inspector(&wi, "predict", usage_predict, &ss, &insp, &st, &have_setting)) ||
        (rc = cmd_session_workload(ss, graph, wi.grouped, &wi.io, wi.batch, wi.groups, wi.seed,
                                   "predict", usage_predict)))
        goto done;
    const struct dp_setting *for_setting = have_setting ? &st : NULL;
    rc = 1;
    dp_session_set_economics(ss, epoch_samples, price);
    struct dp_prediction p;
    if (insp >= 0 ? dp_session_predict_with(ss, insp, for_setting, &p, &err)
                  : dp_session_predict(ss, for_setting, 0, &p, &err)) {
        cli_fail(&err);
        goto done;
    }
    if (!p.ok) {
        fprintf(stderr, "driple: %s\n", p.note);
        goto done;
    }
    /* the memory footprint and whether it fits: the simulator's (the inspector's outputs do not
     * say), for a known setting of a graph (not a grouped file) */
    struct dp_simulation sim = {0};
    bool pending;
    if (for_setting && dp_session_graph(ss)) {
        if (dp_session_simulate(ss, for_setting, false, &sim, &pending, &err)) {
            cli_fail(&err);
            goto done;
        }
        dp_prediction_use_simulation(&p, &sim);
    } else {
        snprintf(sim.note, sizeof sim.note, "%s", for_setting ? "no graph to simulate (a grouped file)"
                                                               : "no setting to simulate");
    }
    const struct dp_grouped *g = dp_session_grouped(ss);
    const char *setting_id = for_setting ? for_setting->id : p.from.setting_id;
    const char *unknown = dp_session_unknown_ops(ss);
    if (json) {
        struct dp_jw *w = dp_jw_new();
        dp_jw_str(w, "graph", g->graph);
        if (g->batch > 0) dp_jw_int(w, "batch", g->batch);
        else dp_jw_null(w, "batch");
        dp_jw_int(w, "n_groups", g->n_groups);
        dp_jw_str(w, "setting", setting_id[0] ? setting_id : NULL);
        dp_jw_prediction(w, &p);
        dp_jw_simulation(w, "simulated", &sim);
        dp_jw_object(w, "units");
        dp_jw_str(w, "idle", "ms");
        dp_jw_str(w, "active", "ms");
        for (int o = DP_STAT_PEAK; o < DP_N_OUTPUTS; o += DP_N_STATS)
            dp_jw_str(w, dp_outputs[o].name, dp_outputs[o].unit);
        dp_jw_end(w);
        dp_jw_formulas(w, "formulas");
        if (unknown) dp_jw_str(w, "unknown_op_types", unknown);
        rc = cmd_json_emit(w);
        goto done;
    }
    print_text(ss, &p, &sim, for_setting, setting_id);
    if (unknown) printf("unknown op types (weight 0): %s\n", unknown);
    rc = 0;
done:
    dp_session_free(ss);
    cli_done(&c);
    return rc;
}
