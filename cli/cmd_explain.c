/* cmd_explain.c: `driple explain`: which groups (and which op types) drive one predicted metric,
 * as a ranked table, JSON, or a Graphviz rendering (SVG, PNG, DOT); and `driple bench explain`,
 * the timing of gradient and occlusion importance on a 100-group graph. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/clock.h"
#include "dp/coarsen.h"
#include "dp/explain.h"
#include "dp/graph_io.h"
#include "dp/inspector.h"
#include "dp/render.h"
#include "dp/settings.h"

static const char *const usage_explain =
    "driple explain GRAPH|--grouped FILE (--inspector M | --setting ID | --gpu NAME --ps N\n"
    "       --workers N --network NET [--placement homo|hetero] [--precision fp32|mixed])\n"
    "       [--settings FILE] [--gpus FILE]\n"
    "       [--metric NAME] [--method grad|occlusion] [--batch N] [--exported-batch N]\n"
    "       [--groups K] [--seed S] [--weights FILE] [--top N] [--threads N]\n"
    "       [--layout auto|dot|sfdp|neato] [--json] [--svg FILE | --png FILE | --dot FILE]\n"
    "  metrics: the 12 outputs (gpu_util.active, net_rx.peak, ...) or iteration_time\n"
    "  (= gpu_util.idle + gpu_util.active, ms). Importance = |attribution| / sum of |attribution|:\n"
    "  grad: sum over the 3 features of d metric / d feature x feature; occlusion: metric minus\n"
    "  the metric with the group's features zeroed. An op type's share: each group's importance\n"
    "  spread over its ops by their share of the group's features (see dp/explain.h).";

static const char *const usage_bench =
    "driple bench explain [GRAPH [--exported-batch N]|--grouped FILE] [--inspector M]\n"
    "       [--groups K] [--repeat N] [--threads N] [--json]   (no graph: a synthetic K-group\n"
    "       graph, default 100; no inspector: the published GCN architecture with seeded random\n"
    "       weights)";

/* ---- small helpers ---- */

/* The grouped graph to explain: read from grouped_path, or graph_path (read with io) coarsened
 * into k groups (op weights from weights_path or the shipped ones; *graph and *w are kept for the
 * drill-down; *unknown, when not NULL, lists op types without a weight). All outputs are owned by
 * the caller, also on failure. */
static enum dp_status load_grouped(const char *graph_path, const char *grouped_path,
                                   const struct dp_import_opts *io, const char *weights_path,
                                   int k, int64_t seed, int64_t batch, struct dp_graph **graph,
                                   struct dp_op_weights **w, struct dp_grouped **g,
                                   char **unknown, struct dp_error *err) {
    if (grouped_path) return dp_grouped_load_json(grouped_path, g, err);
    enum dp_status st = dp_graph_load(graph_path, io, graph, err);
    if (st == DP_OK) st = dp_op_weights_load_default(weights_path, w, err);
    if (st != DP_OK) return st;
    struct dp_coarsen_opts co = {.k = k, .seed = seed};
    if ((st = dp_graph_group(*graph, &co, *w, batch, g, unknown, err)) != DP_OK)
        dp_error_prefix(err, graph_path);
    return st;
}

static void list_metrics(FILE *f) {
    fprintf(f, "known metrics:");
    for (int m = 0; m < DP_N_METRICS; m++) fprintf(f, " %s", dp_metric_name(m));
    fprintf(f, "\n");
}

/* ---- output ---- */

static bool all_zero(const struct dp_explain *e) {
    for (int i = 0; i < e->n_groups; i++)
        if (e->groups[i].attribution != 0.0) return false;
    return true;
}

static void print_types_json(FILE *f, const struct dp_explain_type *t, int n) {
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s{\"op\": ", i ? ", " : "");
        cmd_json_str(f, t[i].op);
        fprintf(f, ", \"n_ops\": %d, \"importance\": ", t[i].n_ops);
        cmd_json_num(f, t[i].importance);
        fputc('}', f);
    }
    fputc(']', f);
}

static void print_json(const struct dp_grouped *g, const struct dp_explain *e, int n_feat,
                       const char *graph_path, const char *insp_path, const char *setting_id,
                       const char *render_fmt, const char *render_file, const char *unknown) {
    FILE *f = stdout;
    fprintf(f, "{\"graph\": ");
    cmd_json_str(f, g->graph);
    fprintf(f, ", \"file\": ");
    cmd_json_str(f, graph_path);
    fprintf(f, ", \"batch\": %lld, \"n_groups\": %d, \"inspector\": ", (long long)g->batch,
            g->n_groups);
    cmd_json_str(f, insp_path);
    fprintf(f, ", \"setting\": ");
    if (setting_id[0]) cmd_json_str(f, setting_id);
    else fputs("null", f);
    fprintf(f, ",\n \"metric\": ");
    cmd_json_str(f, dp_metric_name(e->metric));
    fprintf(f, ", \"unit\": ");
    cmd_json_str(f, dp_metric_unit(e->metric));
    fprintf(f, ", \"value\": ");
    cmd_json_num(f, e->value);
    if (e->metric == DP_METRIC_ITERATION)
        fprintf(f, ", \"metric_formula\": \"gpu_util.idle + gpu_util.active\"");
    fprintf(f, ", \"method\": ");
    cmd_json_str(f, dp_explain_method_name(e->method));
    fprintf(f, ",\n \"importance_formula\": ");
    cmd_json_str(f, e->method == DP_EXPLAIN_GRAD
                    ? "|sum_f d metric/d x_f * x_f| / sum over groups"
                    : "|metric - metric with the group's features zeroed| / sum over groups");
    fprintf(f, ", \"all_zero\": %s", all_zero(e) ? "true" : "false");
    if (unknown) {
        fprintf(f, ", \"unknown_op_types\": ");
        cmd_json_str(f, unknown);
    }
    if (render_file) {
        fprintf(f, ", \"rendered\": {\"format\": ");
        cmd_json_str(f, render_fmt);
        fprintf(f, ", \"file\": ");
        cmd_json_str(f, render_file);
        fputc('}', f);
    }
    fprintf(f, ",\n \"groups\": [");
    for (int r = 0; r < e->n_groups; r++) {
        int i = e->order[r];
        const struct dp_explain_group *gr = &e->groups[i];
        int ops = gr->n_ops > 0 ? gr->n_ops : (int)lround(g->x[i * DP_N_FEATURES + 1]);
        fprintf(f, "%s\n  {\"id\": %d, \"rank\": %d, \"importance\": ", r ? "," : "", i,
                gr->rank + 1);
        cmd_json_num(f, gr->importance);
        fprintf(f, ", \"attribution\": ");
        cmd_json_num(f, gr->attribution);
        fprintf(f, ", \"features\": [");
        for (int k = 0; k < n_feat; k++) { /* the published three, then any cost features */
            if (k) fputs(", ", f);
            cmd_json_num(f, dp_grouped_feat(g, i, k));
        }
        fputc(']', f);
        if (e->method == DP_EXPLAIN_GRAD) {
            fprintf(f, ", \"feature_attribution\": [");
            for (int k = 0; k < n_feat; k++) {
                if (k) fputs(", ", f);
                cmd_json_num(f, gr->feat_attr[k]);
            }
            fputc(']', f);
        }
        fprintf(f, ", \"ops\": %d, \"op_types\": ", ops);
        print_types_json(f, gr->types, gr->n_types);
        fprintf(f, ", \"members\": [");
        if (g->member_start)
            for (int j = g->member_start[i]; j < g->member_start[i + 1]; j++) {
                if (j > g->member_start[i]) fputs(", ", f);
                cmd_json_str(f, g->members[j]);
            }
        fputs("]}", f);
    }
    fprintf(f, "],\n \"op_types\": ");
    print_types_json(f, e->types, e->n_types);
    fprintf(f, "}\n");
}

static void print_text(const struct dp_grouped *g, const struct dp_explain *e,
                       const char *insp_path, const char *setting_id, bool reads_cost, int top) {
    printf("%s: %d groups, batch %lld; inspector %s%s%s%s\n", g->graph ? g->graph : "graph",
           g->n_groups, (long long)g->batch, insp_path, setting_id[0] ? " (setting " : "",
           setting_id, setting_id[0] ? ")" : "");
    printf("%s = %.6g %s%s; importance by %s\n", dp_metric_name(e->metric), e->value,
           dp_metric_unit(e->metric),
           e->metric == DP_METRIC_ITERATION ? " (gpu_util.idle + gpu_util.active)" : "",
           e->method == DP_EXPLAIN_GRAD
               ? (reads_cost ? "gradient x input (the three features and the three cost features)"
                             : "gradient x input")
               : "occlusion (features zeroed)");
    printf("\n rank  group  importance   effect (%s)   ops  top op types\n",
           dp_metric_unit(e->metric));
    for (int r = 0; r < e->n_groups && r < top; r++) {
        int i = e->order[r];
        const struct dp_explain_group *gr = &e->groups[i];
        int ops = gr->n_ops > 0 ? gr->n_ops : (int)lround(g->x[i * DP_N_FEATURES + 1]);
        printf(" %4d  g%-5d %9.1f%%  %+13.4g  %5d ", r + 1, i, 100.0 * gr->importance,
               gr->attribution, ops);
        for (int t = 0; t < gr->n_types && t < 3; t++)
            printf(" %s(%d)", gr->types[t].op, gr->types[t].n_ops);
        printf("\n");
    }
    if (e->n_groups > top) printf("  ... %d more groups (--top N, --json)\n", e->n_groups - top);
    if (all_zero(e))
        printf("note: every attribution is 0: the inspector's %s does not change with any group's "
               "features here (saturated, e.g. raw features far outside its training range)\n",
               dp_metric_name(e->metric));
    if (e->n_types > 0) {
        printf("\n %-36s   ops  share of %s\n", "op type", dp_metric_name(e->metric));
        for (int t = 0; t < e->n_types && t < top; t++)
            printf(" %-36s %5d  %6.1f%%\n", e->types[t].op, e->types[t].n_ops,
                   100.0 * e->types[t].importance);
        if (!all_zero(e))
            printf("\n%s ops carry %.1f%% of the importance for %s.\n", e->types[0].op,
                   100.0 * e->types[0].importance, dp_metric_name(e->metric));
    }
}

/* ---- driple explain ---- */

int cmd_explain(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, "explain")) return 1;
    int rc = 2;
    struct dp_error err = {0};
    struct dp_graph *graph = NULL;
    struct dp_grouped *g = NULL;
    struct dp_op_weights *w = NULL;
    struct dp_inspector *insp = NULL;
    struct dp_explain *e = NULL;
    char *unknown = NULL;

    if (cli_flag(&c, "--help") || cli_flag(&c, "-h")) {
        printf("usage: %s\n", usage_explain);
        list_metrics(stdout);
        rc = 0;
        goto done;
    }
    const char *grouped_path = cli_value(&c, "--grouped");
    const char *insp_opt = cli_value(&c, "--inspector");
    const char *setting = cli_value(&c, "--setting");
    const char *settings_file = cli_value(&c, "--settings");
    const char *metric_name = cli_value(&c, "--metric");
    const char *method_name = cli_value(&c, "--method");
    const char *weights_path = cli_value(&c, "--weights");
    const char *layout_name = cli_value(&c, "--layout");
    const char *svg = cli_value(&c, "--svg");
    const char *png = cli_value(&c, "--png");
    const char *dot = cli_value(&c, "--dot");
    bool json = cli_flag(&c, "--json");
    int64_t batch = 0, k = DP_DEFAULT_GROUPS, seed = DP_DEFAULT_SEED, top = 10, threads = 0;
    struct dp_import_opts io;
    cmd_import_opts(&c, &io);
    cli_int(&c, "--batch", 1, 1 << 24, &batch);
    cli_int(&c, "--groups", 1, 100000, &k);
    cli_int(&c, "--seed", INT64_MIN, INT64_MAX, &seed);
    cli_int(&c, "--top", 1, 1000000, &top);
    cli_int(&c, "--threads", 0, 64, &threads);
    struct cmd_cluster cl;
    cmd_cluster_opts(&c, &cl);
    const char *graph_path = grouped_path ? NULL : cli_positional(&c, 0);
    if (c.bad || !cli_check_unused(&c)) goto done;

    if (!graph_path && !grouped_path) {
        rc = cli_usage("explain", usage_explain, "missing GRAPH (or --grouped FILE)");
        goto done;
    }
    if (grouped_path && (batch || io.exported_batch)) {
        /* A grouped file's features are fixed: saying so beats ignoring the option. */
        rc = cli_usage("explain", usage_explain,
                       "--batch and --exported-batch need a GRAPH (a grouped file's features are fixed)");
        goto done;
    }
    bool by_cluster = cmd_cluster_given(&cl) || cl.precision;
    if ((insp_opt != NULL) + (setting != NULL) + by_cluster != 1) {
        rc = cli_usage("explain", usage_explain,
                       "give exactly one of --inspector M, --setting ID and --gpu NAME ... "
                       "--network NET");
        goto done;
    }
    if ((settings_file || cl.gpus) && insp_opt) {
        rc = cli_usage("explain", usage_explain,
                       "--settings and --gpus need --setting ID or --gpu NAME ...");
        goto done;
    }
    int metric = 4; /* gpu_util.active */
    if (metric_name && (metric = dp_metric_find(metric_name)) < 0) {
        list_metrics(stderr);
        rc = cli_usage("explain", usage_explain, "unknown metric '%s'", metric_name);
        goto done;
    }
    enum dp_explain_method method = DP_EXPLAIN_GRAD;
    if (method_name && !dp_explain_method_parse(method_name, &method)) {
        rc = cli_usage("explain", usage_explain, "unknown method '%s' (grad or occlusion)",
                       method_name);
        goto done;
    }
    enum dp_render_layout_engine layout = DP_LAYOUT_AUTO;
    if (layout_name && !dp_render_layout_parse(layout_name, &layout)) {
        rc = cli_usage("explain", usage_explain, "unknown layout '%s' (auto, dot, sfdp, neato)",
                       layout_name);
        goto done;
    }
    if ((svg != NULL) + (png != NULL) + (dot != NULL) > 1) {
        rc = cli_usage("explain", usage_explain, "give one of --svg, --png and --dot");
        goto done;
    }
    rc = 1;

    /* The inspector first: a missing one is the commonest mistake and costs nothing to find. */
    char insp_path[PATH_MAX + 64], setting_id[DP_NAME_MAX] = "";
    if (insp_opt) {
        snprintf(insp_path, sizeof insp_path, "%s", insp_opt);
    } else {
        struct dp_setting st;
        if ((rc = cmd_setting_resolve(setting, &cl, settings_file, "explain", usage_explain, &st,
                                      insp_path, sizeof insp_path)))
            goto done;
        rc = 1;
        snprintf(setting_id, sizeof setting_id, "%s", st.id);
    }
    if (dp_inspector_load(insp_path, &insp, &err) != DP_OK) goto fail;
    if (!setting_id[0]) snprintf(setting_id, sizeof setting_id, "%s", dp_inspector_setting(insp));

    if (load_grouped(graph_path, grouped_path, &io, weights_path, (int)k, seed, batch, &graph, &w,
                     &g, &unknown, &err) != DP_OK)
        goto fail;

    /* The engine names the group; the file is ours to add. */
    const char *input = graph_path ? graph_path : grouped_path;
    if (dp_explain_compute_inspector(insp, g, metric, method, (int)threads, &e, &err) != DP_OK ||
        (graph && g->member_start && dp_explain_drill(e, g, graph, w, &err) != DP_OK)) {
        dp_error_prefix(&err, input);
        goto fail;
    }

    const char *render_file = svg ? svg : png ? png : dot;
    enum dp_render_format fmt = svg ? DP_RENDER_SVG : png ? DP_RENDER_PNG : DP_RENDER_DOT;
    if (render_file) {
        struct dp_render_opts ro = {.layout = layout};
        if (dp_render_file(g, e, &ro, fmt, render_file, &err) != DP_OK) goto fail;
    }
    const int n_feat = dp_model_arch(dp_inspector_model(insp))->n_feat;
    if (json)
        print_json(g, e, n_feat, input, insp_path, setting_id, dp_render_format_name(fmt),
                   render_file, unknown);
    else {
        print_text(g, e, insp_path, setting_id, n_feat > DP_N_FEATURES, (int)top);
        if (render_file) printf("\nwrote %s (%s)\n", render_file, dp_render_format_name(fmt));
        if (unknown)
            fprintf(stderr, "driple: explain: note: op types without a weight: %s\n", unknown);
    }
    rc = 0;
    goto done;
fail:
    rc = cli_fail(&err);
done:
    free(unknown);
    dp_explain_free(e);
    dp_inspector_free(insp);
    dp_op_weights_free(w);
    dp_grouped_free(g);
    dp_graph_free(graph);
    cli_done(&c);
    return rc;
}

/* ---- driple bench explain ---- */

int bench_explain(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, "bench explain")) return 1;
    int rc = 2;
    struct dp_error err = {0};
    struct dp_graph *graph = NULL;
    struct dp_grouped *g = NULL;
    struct dp_op_weights *w = NULL;
    struct dp_inspector *insp = NULL;
    struct dp_model *model = NULL;
    const char *grouped_path = cli_value(&c, "--grouped");
    const char *insp_opt = cli_value(&c, "--inspector");
    bool json = cli_flag(&c, "--json");
    int64_t k = DP_DEFAULT_GROUPS, repeat = 5, threads = 0;
    struct dp_import_opts io;
    cmd_import_opts(&c, &io);
    cli_int(&c, "--groups", 1, 100000, &k);
    cli_int(&c, "--repeat", 1, 1000, &repeat);
    cli_int(&c, "--threads", 0, 64, &threads);
    const char *graph_path = grouped_path ? NULL : cli_positional(&c, 0);
    if (!cli_check_unused(&c)) {
        fprintf(stderr, "usage: %s\n", usage_bench);
        goto done;
    }
    rc = 1;
    const struct dp_model *m;
    const char *model_desc;
    if (insp_opt) {
        if (dp_inspector_load(insp_opt, &insp, &err) != DP_OK) goto fail;
        m = dp_inspector_model(insp);
        model_desc = insp_opt;
    } else {
        struct dp_arch a;
        dp_arch_default(&a);
        if (dp_model_init(&a, 42, &model, &err) != DP_OK) goto fail;
        m = model;
        model_desc = "published GCN architecture, seeded random weights";
    }
    if (grouped_path || graph_path) {
        if (load_grouped(graph_path, grouped_path, &io, NULL, (int)k, DP_DEFAULT_SEED, 0, &graph,
                         &w, &g, NULL, &err) != DP_OK)
            goto fail;
    } else if (!(g = cmd_synthetic_grouped((int)k, 1))) {
        dp_error_set(&err, DP_ERR_NOMEM, "bench explain: out of memory");
        goto fail;
    }

    double *t = calloc((size_t)repeat, sizeof *t);
    if (!t) {
        dp_error_set(&err, DP_ERR_NOMEM, "bench explain: out of memory");
        goto fail;
    }
    /* One untimed warm-up, then the median of `repeat` runs for grad; occlusion costs one
     * prediction per group, so it runs min(repeat, 3) times. */
    struct dp_explain *e = NULL;
    enum dp_status st = dp_explain_compute(m, NULL, g, 4, DP_EXPLAIN_GRAD, 1, &e, &err);
    dp_explain_free(e);
    for (int r = 0; st == DP_OK && r < repeat; r++) {
        double t0 = dp_clock_ms();
        st = dp_explain_compute(m, NULL, g, 4, DP_EXPLAIN_GRAD, 1, &e, &err);
        t[r] = dp_clock_ms() - t0;
        dp_explain_free(e);
        e = NULL;
    }
    qsort(t, (size_t)repeat, sizeof *t, cmd_cmp_double);
    double grad_ms = t[repeat / 2];
    int occl_rep = repeat < 3 ? (int)repeat : 3;
    for (int r = 0; st == DP_OK && r < occl_rep; r++) {
        double t0 = dp_clock_ms();
        st = dp_explain_compute(m, NULL, g, 4, DP_EXPLAIN_OCCLUSION, (int)threads, &e, &err);
        t[r] = dp_clock_ms() - t0;
        dp_explain_free(e);
        e = NULL;
    }
    qsort(t, (size_t)occl_rep, sizeof *t, cmd_cmp_double);
    double occl_ms = t[occl_rep / 2];
    free(t);
    if (st != DP_OK) goto fail;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int used = threads > 0 ? (int)threads : (int)(cpus < 1 ? 1 : cpus > 8 ? 8 : cpus);
    if (used > g->n_groups) used = g->n_groups;
    const struct dp_arch *arch = dp_model_arch(m);
    if (json) {
        printf("{\"bench\": \"explain\", \"graph\": ");
        cmd_json_str(stdout, graph_path ? graph_path : grouped_path ? grouped_path : "synthetic");
        printf(", \"groups\": %d, \"edges\": %d, \"layers\": %d, \"model\": ", g->n_groups,
               g->n_edges, dp_arch_n_layers(arch, g->n_groups));
        cmd_json_str(stdout, model_desc);
        printf(", \"grad_ms\": %.3f, \"occlusion_ms\": %.3f, \"occlusion_threads\": %d, "
               "\"repeat\": %d, \"targets\": {\"grad_ms\": 50, \"occlusion_ms\": 1000}}\n",
               grad_ms, occl_ms, used, (int)repeat);
    } else {
        printf("explain on %d groups (%d layers, %s):\n", g->n_groups,
               dp_arch_n_layers(arch, g->n_groups), model_desc);
        printf("  grad       %9.2f ms  (median of %d; target < 50 ms)\n", grad_ms, (int)repeat);
        printf("  occlusion  %9.2f ms  (%d threads, median of %d; target < 1000 ms)\n", occl_ms,
               used, occl_rep);
    }
    rc = 0;
    goto done;
fail:
    rc = cli_fail(&err);
done:
    dp_model_free(model);
    dp_inspector_free(insp);
    dp_op_weights_free(w);
    dp_grouped_free(g);
    dp_graph_free(graph);
    cli_done(&c);
    return rc;
}
