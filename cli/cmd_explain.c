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
#include "dp/json_out.h"
#include "dp/metrics.h"
#include "dp/render.h"
#include "dp/session.h"
#include "dp/settings.h"

static const char usage_explain[] =
    "driple explain GRAPH|--grouped FILE (--inspector M | --setting ID | --gpu NAME\n"
    "       " CMD_CLUSTER_USAGE ")\n"
    "       [--settings FILE] [--gpus FILE]\n"
    "       [--metric NAME] [--method grad|occlusion] [--batch N] [--exported-batch N]\n"
    "       [--groups K] [--seed S] [--weights FILE] [--top N] [--threads N]\n"
    "       [--layout auto|dot|sfdp|neato] [--json] [--svg FILE | --png FILE | --dot FILE]\n"
    "  metrics: the 12 outputs (gpu_util.active, net_rx.peak, ...) or iteration_time\n"
    "  (= gpu_util.idle + gpu_util.active, ms). Importance = |attribution| / sum of |attribution|:\n"
    "  grad: sum over the 3 features of d metric / d feature x feature; occlusion: metric minus\n"
    "  the metric with the group's features zeroed. An op type's share: each group's importance\n"
    "  spread over its ops by their share of the group's features (see dp/explain.h).\n"
    "  --svg/--png/--dot -: the drawing alone on stdout.";

static const char usage_bench[] =
    "driple bench explain [GRAPH [--exported-batch N]|--grouped FILE] [--inspector M]\n"
    "       [--groups K] [--repeat N] [--threads N] [--json]   (no graph: a synthetic K-group\n"
    "       graph, default 100; no inspector: the published GCN architecture with seeded random\n"
    "       weights)";

/* ---- small helpers ---- */

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

static void jw_types(struct dp_jw *w, const char *key, const struct dp_explain_type *t, int n) {
    dp_jw_array(w, key);
    for (int i = 0; i < n; i++) {
        dp_jw_object(w, NULL);
        dp_jw_str(w, "op", t[i].op);
        dp_jw_int(w, "n_ops", t[i].n_ops);
        dp_jw_num(w, "importance", t[i].importance);
        dp_jw_end(w);
    }
    dp_jw_end(w);
}

/* The --json document; 0, or 1 after saying why it could not be written. */
/* Group gr's ops (bookkeeping folded into the layers they feed) as {"name", "op", "share"}. */
static void jw_ops(struct dp_jw *w, const struct dp_explain_group *gr,
                   const struct dp_graph *graph) {
    dp_jw_array(w, "layer_ops");
    for (int j = 0; graph && j < gr->n_ops; j++) {
        const struct dp_node *nd = dp_graph_node(graph, (size_t)gr->ops[j]);
        dp_jw_object(w, NULL);
        dp_jw_str(w, "name", nd->name);
        dp_jw_str(w, "op", nd->op);
        dp_jw_num(w, "share", gr->op_share[j]);
        dp_jw_end(w);
    }
    dp_jw_end(w);
}

static int print_json(const struct dp_grouped *g, const struct dp_graph *graph,
                      const struct dp_explain *e, int n_feat, const char *graph_path,
                      const struct dp_prediction *p, const char *setting_id,
                      const char *render_fmt, const char *render_file, const char *unknown) {
    struct dp_jw *w = dp_jw_new();
    dp_jw_str(w, "graph", g->graph);
    dp_jw_str(w, "file", graph_path);
    dp_jw_int(w, "batch", g->batch);
    dp_jw_int(w, "n_groups", g->n_groups);
    dp_jw_str(w, "inspector", p->from.path);
    dp_jw_str(w, "source", dp_pred_source_name(p->from.source));
    dp_jw_str(w, "inspector_setting", p->from.setting_id[0] ? p->from.setting_id : NULL);
    dp_jw_str(w, "setting", setting_id[0] ? setting_id : NULL);
    dp_jw_str(w, "metric", dp_metric_name(e->metric));
    dp_jw_str(w, "unit", dp_metric_unit(e->metric));
    dp_jw_num(w, "value", e->value);
    if (e->metric == DP_METRIC_ITERATION)
        dp_jw_str(w, "metric_formula", p->from.source == DP_SOURCE_SETTING_AWARE
                                           ? "predicted directly by the setting-aware inspector"
                                           : "gpu_util.idle + gpu_util.active");
    dp_jw_str(w, "method", dp_explain_method_name(e->method));
    dp_jw_str(w, "importance_formula",
              e->method == DP_EXPLAIN_GRAD
                  ? "|sum_f d metric/d x_f * x_f| / sum over groups"
                  : "|metric - metric with the group's features zeroed| / sum over groups");
    dp_jw_bool(w, "all_zero", all_zero(e));
    if (unknown) dp_jw_str(w, "unknown_op_types", unknown);
    if (render_file) {
        dp_jw_object(w, "rendered");
        dp_jw_str(w, "format", render_fmt);
        dp_jw_str(w, "file", render_file);
        dp_jw_end(w);
    }
    dp_jw_array(w, "groups");
    for (int r = 0; r < e->n_groups; r++) {
        int i = e->order[r];
        const struct dp_explain_group *gr = &e->groups[i];
        int ops = gr->n_ops > 0 ? gr->n_ops : (int)lround(g->x[i * DP_N_FEATURES + 1]);
        dp_jw_object(w, NULL);
        dp_jw_int(w, "id", i);
        dp_jw_int(w, "rank", gr->rank + 1);
        dp_jw_num(w, "importance", gr->importance);
        dp_jw_num(w, "attribution", gr->attribution);
        dp_jw_array(w, "features"); /* the published three, then any cost features */
        for (int k = 0; k < n_feat; k++) dp_jw_num(w, NULL, dp_grouped_feat(g, i, k));
        dp_jw_end(w);
        if (e->method == DP_EXPLAIN_GRAD) {
            dp_jw_array(w, "feature_attribution");
            for (int k = 0; k < n_feat; k++) dp_jw_num(w, NULL, gr->feat_attr[k]);
            dp_jw_end(w);
        }
        dp_jw_int(w, "ops", ops);
        jw_types(w, "op_types", gr->types, gr->n_types);
        jw_ops(w, gr, graph);
        dp_jw_array(w, "members");
        if (g->member_start)
            for (int j = g->member_start[i]; j < g->member_start[i + 1]; j++)
                dp_jw_str(w, NULL, g->members[j]);
        dp_jw_end(w);
        dp_jw_end(w);
    }
    dp_jw_end(w);
    jw_types(w, "op_types", e->types, e->n_types);
    return cmd_json_emit(w);
}

/* The inspector's full name as predict prints it: its file, source and the setting it was
 * made for when another. */
static void print_inspector(const struct dp_prediction *p, const char *setting_id) {
    printf("inspector %s (%s", p->from.path, dp_pred_source_name(p->from.source));
    if (p->from.setting_id[0] && strcmp(p->from.setting_id, setting_id))
        printf(", made for %s", p->from.setting_id);
    printf("%s%s)\n", p->data[0] ? ", " : "", p->data);
}

static void print_text(const struct dp_grouped *g, const struct dp_graph *graph,
                       const struct dp_explain *e, const struct dp_prediction *p,
                       const char *setting_id, bool reads_cost, int top) {
    printf("%s: %d groups, batch %lld; setting %s\n", g->graph ? g->graph : "graph",
           g->n_groups, (long long)g->batch, setting_id[0] ? setting_id : "(none)");
    print_inspector(p, setting_id);
    bool sa = p->from.source == DP_SOURCE_SETTING_AWARE;
    printf("%s = %.4g %s%s (the value predict prints); importance by %s\n",
           dp_metric_name(e->metric), e->value, dp_metric_unit(e->metric),
           e->metric == DP_METRIC_ITERATION && !sa ? " (gpu_util.idle + gpu_util.active)" : "",
           e->method == DP_EXPLAIN_GRAD
               ? (reads_cost ? "gradient x input (the three features and the three cost features)"
                             : "gradient x input")
               : sa ? "occlusion through the setting-aware inspector (features zeroed)"
                    : "occlusion (features zeroed)");
    printf("\n rank  group  importance   effect (%s)   ops  top op types; top layer op\n",
           dp_metric_unit(e->metric));
    for (int r = 0; r < e->n_groups && r < top; r++) {
        int i = e->order[r];
        const struct dp_explain_group *gr = &e->groups[i];
        int ops = gr->n_ops > 0 ? gr->n_ops : (int)lround(g->x[i * DP_N_FEATURES + 1]);
        printf(" %4d  g%-5d %9.1f%%  %+13.4g  %5d ", r + 1, i, 100.0 * gr->importance,
               gr->attribution, ops);
        for (int t = 0; t < gr->n_types && t < 3; t++)
            printf(" %s(%d)", gr->types[t].op, gr->types[t].n_ops);
        if (graph && gr->n_ops > 0) printf("; %s", dp_graph_node(graph, (size_t)gr->ops[0])->name);
        printf("\n");
    }
    if (e->n_groups > top) printf("  ... %d more groups (--top N, --json)\n", e->n_groups - top);
    if (all_zero(e))
        printf("note: every attribution is 0: the inspector's %s does not change with any group's "
               "features here (saturated, e.g. raw features far outside its training range)\n",
               dp_metric_name(e->metric));
    if (e->n_types > 0) {
        printf("\n %-36s   ops  share of %s (constants, variables and bookkeeping ops folded "
               "into the layers they feed)\n", "op type", dp_metric_name(e->metric));
        for (int t = 0; t < e->n_types && t < top; t++)
            printf(" %-36s %5d  %6.1f%%\n", e->types[t].op, e->types[t].n_ops,
                   100.0 * e->types[t].importance);
        if (!all_zero(e))
            printf("\n%s ops carry %.1f%% of the importance for %s.\n", e->types[0].op,
                   100.0 * e->types[0].importance, dp_metric_name(e->metric));
    }
}

/* ---- driple explain ---- */

static const struct cli_opt explain_opts[] = {
    {"--metric", "NAME", "gpu_util.active", 0, 0,
     "the metric explained (an output name or iteration_time)", NULL},
    {"--method", "grad|occlusion", "grad", 0, 0, "gradient x input, or occlusion per group", NULL},
    {"--layout", "auto|dot|sfdp|neato", "auto", 0, 0, "the drawing's Graphviz layout", NULL},
    {"--svg", "FILE", NULL, 0, 0, "draw the grouped graph as SVG (-: stdout)", NULL},
    {"--png", "FILE", NULL, 0, 0, "draw it as PNG", NULL},
    {"--dot", "FILE", NULL, 0, 0, "write it as Graphviz DOT", NULL},
    {"--top", "N", "10", 1, 1000000, "groups and op types listed", NULL},
    {"--threads", "N", "the engine's", 0, 64, "threads (0: the engine's default)", NULL},
    {"--json", NULL, NULL, 0, 0, "print the importances as JSON", NULL},
    CLI_MORE(cmd_what_if_table),
    CLI_END,
};
const struct cli_spec cmd_explain_spec = {
    "explain", "which groups and op types drive a prediction", usage_explain, explain_opts,
    list_metrics};

int cmd_explain(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_explain_spec)) return c.rc;
    int rc = 2;
    struct dp_error err = {0};
    struct dp_session *ss = NULL;
    struct dp_explain *e = NULL;

    struct cmd_what_if wi;
    cmd_what_if_opts(&c, &wi);
    const char *grouped_path = wi.grouped;
    const char *metric_name = cli_value(&c, "--metric");
    const char *method_name = cli_value(&c, "--method");
    const char *layout_name = cli_value(&c, "--layout");
    const char *svg = cli_value(&c, "--svg");
    const char *png = cli_value(&c, "--png");
    const char *dot = cli_value(&c, "--dot");
    bool json = cli_flag(&c, "--json");
    int64_t top = 10, threads = 0;
    cli_int(&c, "--top", 1, 1000000, &top);
    cli_int(&c, "--threads", 0, 64, &threads);
    const char *graph_path = grouped_path ? NULL : cli_positional(&c, 0);
    if (c.bad || !cli_check_unused(&c)) goto done;

    if (!graph_path && !grouped_path) {
        rc = cli_usage("explain", usage_explain, "missing GRAPH (or --grouped FILE)");
        goto done;
    }
    if (grouped_path && (wi.batch || wi.io.exported_batch)) {
        /* A grouped file's features are fixed: saying so beats ignoring the option. */
        rc = cli_usage("explain", usage_explain,
                       "--batch and --exported-batch need a GRAPH (a grouped file's features are fixed)");
        goto done;
    }
    if ((wi.settings || wi.cl.gpus) && wi.inspector) {
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
    if (json && ((svg && !strcmp(svg, "-")) || (png && !strcmp(png, "-")) ||
                 (dot && !strcmp(dot, "-")))) {
        rc = cli_usage("explain", usage_explain, "--json and a drawing to \"-\" would both go to "
                       "stdout");
        goto done;
    }
    /* The inspector first: a missing one is the commonest mistake and costs nothing to find. */
    struct dp_setting st;
    int i_insp;
    bool have_setting;
    if ((rc = cmd_what_if_inspector(&wi, "explain", usage_explain, &ss, &i_insp, &st,
                                    &have_setting)) ||
        (rc = cmd_session_workload(ss, graph_path, grouped_path, &wi.io, wi.batch, wi.groups,
                                   wi.seed, "explain", usage_explain)))
        goto done;
    /* the setting named, or the one the inspector was made for */
    const char *setting_id = wi.inspector
                                 ? dp_inspector_setting(dp_session_inspector(ss, i_insp)) : st.id;
    rc = 1;
    const struct dp_grouped *g = dp_session_grouped(ss);
    const struct dp_graph *graph = dp_session_graph(ss);
    const char *unknown = dp_session_unknown_ops(ss);
    const char *input = graph_path ? graph_path : grouped_path;
    /* the number explained is the one predict prints, through the inspector that predicts it */
    struct dp_prediction p;
    if (dp_session_explain(ss, have_setting ? &st : NULL, i_insp, 0, metric, method, (int)threads,
                           &e, &p, &err) != DP_OK)
        goto fail;
    if (p.from.source == DP_SOURCE_SETTING_AWARE && method_name && method == DP_EXPLAIN_GRAD)
        fprintf(stderr, "driple: explain: note: the setting-aware inspector (%s) gives no "
                        "gradients: importance by occlusion through it\n", p.from.path);
    const char *render_file = svg ? svg : png ? png : dot;
    enum dp_render_format fmt = svg ? DP_RENDER_SVG : png ? DP_RENDER_PNG : DP_RENDER_DOT;
    if (render_file) {
        struct dp_render_opts ro = {.layout = layout};
        if (dp_render_file(g, e, &ro, fmt, render_file, &err) != DP_OK) goto fail;
    }
    const struct dp_inspector *insp = p.from.source == DP_SOURCE_SETTING_AWARE
                                          ? dp_sa_body(dp_session_sa(ss))
                                          : dp_session_inspector(ss, p.from.inspector);
    const int n_feat = dp_model_arch(dp_inspector_model(insp))->n_feat;
    if (render_file && !strcmp(render_file, "-")) { /* the drawing is the output, alone */
        rc = 0;
        goto done;
    }
    if (json) {
        rc = print_json(g, graph, e, n_feat, input, &p, setting_id, dp_render_format_name(fmt),
                        render_file, unknown);
        goto done;
    }
    print_text(g, graph, e, &p, setting_id, n_feat > DP_N_FEATURES, (int)top);
    if (render_file) printf("\nwrote %s (%s)\n", render_file, dp_render_format_name(fmt));
    if (unknown) fprintf(stderr, "driple: explain: note: op types without a weight: %s\n", unknown);
    rc = 0;
    goto done;
fail:
    rc = cli_fail(&err);
done:
    dp_explain_free(e);
    dp_session_free(ss);
    cli_done(&c);
    return rc;
}

/* ---- driple bench explain ---- */

static const struct cli_opt bench_explain_opts[] = {
    {"--grouped", "FILE", NULL, 0, 0, "a grouped graph instead of GRAPH", NULL},
    {"--inspector", "M", "the published GCN, random weights", 0, 0, "the inspector", NULL},
    {"--groups", "K", CLI_STR(DP_DEFAULT_GROUPS), 1, 100000, "groups (of GRAPH, or synthetic)",
     NULL},
    {"--repeat", "N", "5", 1, 1000, "timed runs", NULL},
    {"--threads", "N", "the engine's", 0, 64, "threads (0: the engine's default)", NULL},
    {"--json", NULL, NULL, 0, 0, "print the figures as JSON", NULL},
    CLI_MORE(cmd_import_table),
    CLI_END,
};
const struct cli_spec cmd_bench_explain_spec = {
    "bench explain", "times explain's attributions", usage_bench, bench_explain_opts, NULL};

int bench_explain(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_bench_explain_spec)) return c.rc;
    int rc = 2;
    struct dp_error err = {0};
    struct dp_session *ss = NULL;
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
    if ((rc = cmd_session_open(NULL, NULL, NULL, "none", &ss))) goto done;
    if (grouped_path || graph_path) {
        if ((rc = cmd_session_workload(ss, graph_path, grouped_path, &io, 0, k, DP_DEFAULT_SEED,
                                       "bench explain", usage_bench)))
            goto done;
    } else if (dp_session_set_grouped(ss, cmd_synthetic_grouped((int)k, 1), "synthetic", &err)) {
        goto fail;
    }
    rc = 1;
    const struct dp_grouped *g = dp_session_grouped(ss);

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
        struct dp_jw *jw = dp_jw_new();
        dp_jw_str(jw, "bench", "explain");
        dp_jw_str(jw, "graph", graph_path ? graph_path : grouped_path ? grouped_path : "synthetic");
        dp_jw_int(jw, "groups", g->n_groups);
        dp_jw_int(jw, "edges", g->n_edges);
        dp_jw_int(jw, "layers", dp_arch_n_layers(arch, g->n_groups));
        dp_jw_str(jw, "model", model_desc);
        dp_jw_fixed(jw, "grad_ms", grad_ms, 3);
        dp_jw_fixed(jw, "occlusion_ms", occl_ms, 3);
        dp_jw_int(jw, "occlusion_threads", used);
        dp_jw_int(jw, "repeat", repeat);
        dp_jw_object(jw, "targets");
        dp_jw_num(jw, "grad_ms", 50);
        dp_jw_num(jw, "occlusion_ms", 1000);
        dp_jw_end(jw);
        if ((rc = cmd_json_emit(jw))) goto done;
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
    dp_session_free(ss);
    cli_done(&c);
    return rc;
}
