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
#include "dp/settings.h"

static const char *const usage_predict =
    "driple predict GRAPH|--grouped FILE (--inspector M | --setting ID | --gpu NAME\n"
    "       " CMD_CLUSTER_USAGE ")\n"
    "       [--settings FILE] [--gpus FILE] [--batch N] [--exported-batch N] [--groups K]\n"
    "       [--seed S] [--weights FILE] [--epoch-samples N] [--price USD_PER_GPU_HOUR] [--json]\n"
    "  A setting not in the list (an id or the options) takes the list's inspector for the same\n"
    "  cluster, else the user inspector directory's file (the explorer saves a transfer there).";

int cmd_predict(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, "predict")) return 1;
    int rc = 2;
    struct dp_grouped *g = NULL;
    struct dp_inspector *insp = NULL;
    char *unknown = NULL;
    char ipath[PATH_MAX + 64] = "", setting_id[DP_NAME_MAX] = "";
    int workers = 0;
    const char *grouped = cli_value(&c, "--grouped");
    const char *insp_arg = cli_value(&c, "--inspector");
    const char *setting = cli_value(&c, "--setting");
    const char *settings_file = cli_value(&c, "--settings");
    const char *weights = cli_value(&c, "--weights");
    int64_t batch = 0, groups = DP_DEFAULT_GROUPS, seed = DP_DEFAULT_SEED;
    double epoch_samples = 1281167, price = NAN;
    struct dp_import_opts io;
    struct cmd_cluster cl;
    struct dp_setting st;
    bool json = cli_flag(&c, "--json");
    if (!cmd_import_opts(&c, &io) || !cmd_cluster_opts(&c, &cl) ||
        !cli_int(&c, "--batch", 1, INT64_C(1) << 30, &batch) ||
        !cli_int(&c, "--groups", 1, 100000, &groups) ||
        !cli_int(&c, "--seed", INT64_MIN + 1, INT64_MAX, &seed) ||
        !cli_double(&c, "--epoch-samples", 0, 1e15, &epoch_samples) ||
        !cli_double(&c, "--price", 0, 1e9, &price) || c.bad)
        goto done;
    const char *graph = cli_positional(&c, 0);
    if (!cli_check_unused(&c)) goto done;
    bool by_cluster = cmd_cluster_given(&cl) || cl.precision;
    if ((insp_arg != NULL) + (setting != NULL) + by_cluster != 1) {
        rc = cli_usage("predict", usage_predict,
                       "give one of --inspector M, --setting ID or --gpu NAME ... --network NET");
        goto done;
    }
    struct dp_error err = {0};
    rc = 1;
    if (!insp_arg) {
        if ((rc = cmd_setting_resolve(setting, &cl, settings_file, "predict", usage_predict, &st,
                                      ipath, sizeof ipath)))
            goto done;
        snprintf(setting_id, sizeof setting_id, "%s", st.id);
        workers = st.workers;
    } else {
        snprintf(ipath, sizeof ipath, "%s", insp_arg);
    }
    double params;
    if ((rc = cmd_load_grouped(graph, grouped, &io, batch, groups, seed, weights, "predict",
                         usage_predict, &g, &unknown, &params)))
        goto done;
    rc = 1;
    dp_blas_threads(1); /* one prediction's GEMMs are small: threads only add overhead */
    if (dp_inspector_load(ipath, &insp, &err)) { cli_fail(&err); goto done; }
    if (!setting_id[0]) snprintf(setting_id, sizeof setting_id, "%s", dp_inspector_setting(insp));
    float raw[DP_N_OUTPUTS];
    double m[DP_N_OUTPUTS], d[DP_N_DERIVED];
    if (dp_inspector_predict(insp, g, raw, m, &err)) {
        dp_error_prefix(&err, graph ? graph : grouped); /* the engine names the graph */
        cli_fail(&err);
        goto done;
    }
    if (insp_arg) workers = cmd_setting_workers(settings_file, setting_id);
    struct dp_derive_in facts;
    dp_derive_in_init(&facts);
    facts.batch = g->batch;
    facts.workers = workers;
    facts.params = params;
    facts.epoch_samples = epoch_samples;
    facts.price_per_gpu_hour = price;
    dp_derive(m, &facts, d);
    if (json) {
        struct dp_jw *w = dp_jw_new();
        dp_jw_str(w, "graph", g->graph);
        if (g->batch > 0) dp_jw_int(w, "batch", g->batch);
        else dp_jw_null(w, "batch");
        dp_jw_int(w, "n_groups", g->n_groups);
        dp_jw_str(w, "setting", setting_id[0] ? setting_id : NULL);
        dp_jw_str(w, "inspector", ipath);
        dp_jw_str(w, "data", dp_inspector_provenance(insp)->data);
        dp_jw_outputs(w, "metrics", m);
        dp_jw_object(w, "units");
        dp_jw_str(w, "idle", "ms");
        dp_jw_str(w, "active", "ms");
        for (int o = DP_STAT_PEAK; o < DP_N_OUTPUTS; o += DP_N_STATS)
            dp_jw_str(w, dp_outputs[o].name, dp_outputs[o].unit);
        dp_jw_end(w);
        cmd_jw_raw(w, "raw", raw);
        dp_jw_derived(w, "derived", d, &facts);
        dp_jw_formulas(w, "formulas");
        if (unknown) dp_jw_str(w, "unknown_op_types", unknown);
        rc = cmd_json_emit(w);
        goto done;
    }
    printf("graph %s  batch %lld  groups %d  setting %s\ninspector %s (%s%s%s)\n\n", g->graph,
           (long long)g->batch, g->n_groups, setting_id[0] ? setting_id : "(none)", ipath,
           dp_inspector_provenance(insp)->origin, dp_inspector_provenance(insp)->data[0] ? ", " : "",
           dp_inspector_provenance(insp)->data);
    printf("%-14s %12s %12s %12s\n", "resource", "idle ms", "active ms", "peak");
    for (int r = 0; r < DP_N_RESOURCES; r++)
        printf("%-14s %12.4g %12.4g %12.4g %s\n", dp_resource_name(r), m[DP_OUTPUT(r, DP_STAT_IDLE)],
               m[DP_OUTPUT(r, DP_STAT_ACTIVE)], m[DP_OUTPUT(r, DP_STAT_PEAK)], dp_resource_unit(r));
    printf("\niteration %.4g ms   throughput %.4g samples/s%s   mean GPU util %.3g%%\n",
           d[DP_D_ITERATION_MS], d[DP_D_THROUGHPUT], workers > 0 ? "" : " per worker",
           d[DP_D_MEAN_GPU_UTIL]);
    if (isfinite(d[DP_D_NET_MB_PER_ITER]))
        printf("network per iteration %.4g MB per worker (2 x %.0f parameters x 4 B)\n",
               d[DP_D_NET_MB_PER_ITER], params);
    if (isfinite(d[DP_D_EPOCH_S])) printf("epoch (%.0f samples) %.4g s", epoch_samples, d[DP_D_EPOCH_S]);
    if (isfinite(d[DP_D_EPOCH_COST])) printf("   cost %.4g USD", d[DP_D_EPOCH_COST]);
    printf("\n\n");
    cmd_print_formulas();
    if (unknown) printf("unknown op types (weight 0): %s\n", unknown);
    rc = 0;
done:
    free(unknown);
    dp_inspector_free(insp);
    dp_grouped_free(g);
    cli_done(&c);
    return rc;
}
