/* cmd_model.c: the inspector commands: `driple predict` and `driple compare` (a graph through one
 * inspector, or through every setting's, sharing one GNN pass per body), `driple train` and
 * `driple transfer` (progress bar, Ctrl-C keeps the best), and `driple inspector info |
 * import-torch | import-json` (model files and the published checkpoint). */
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/clock.h"
#include "dp/coarsen.h"
#include "dp/dataset.h"
#include "dp/graph_io.h"
#include "dp/inspector.h"
#include "dp/settings.h"
#include "dp/train.h"

static const char *const usage_predict =
    "driple predict GRAPH|--grouped FILE (--inspector M | --setting ID | --gpu NAME --ps N\n"
    "       --workers N --network NET [--placement homo|hetero] [--precision fp32|mixed])\n"
    "       [--settings FILE] [--gpus FILE] [--batch N] [--exported-batch N] [--groups K]\n"
    "       [--seed S] [--weights FILE] [--epoch-samples N] [--price USD_PER_GPU_HOUR] [--json]\n"
    "  A setting not in the list (an id or the options) takes the list's inspector for the same\n"
    "  cluster, else the user inspector directory's file (the explorer saves a transfer there).";
static const char *const usage_compare =
    "driple compare GRAPH|--grouped FILE [--settings FILE] [--batch N] [--exported-batch N]\n"
    "       [--groups K] [--seed S] [--weights FILE] [--json]\n"
    "       [--setting ID | --gpu NAME --ps N --workers N --network NET [--placement P]\n"
    "        [--precision fp32|mixed] [--gpus FILE]]   (one more row: a setting not in the list,\n"
    "        with its inspector found as predict finds it)";
static const char *const usage_train =
    "driple train --dataset D.json -o M.json [--recipe driple-c|paper] [--layer gcn|gin|gat|mpnn]\n"
    "       [--hidden 64] [--epochs N] [--patience P] [--seed 1] [--features raw|log]\n"
    "       [--target max|range|log] [--split random|models] [--minibatch 32] [--lr L]\n"
    "       [--lr-decay F --lr-plateau E] [--weight-decay 1e-6] [--rule half|n|log2|fixed]\n"
    "       [--layers N] [--max-layers N] [--cost-features] [--json]\n"
    "  --cost-features: the network also reads each group's FLOPs, bytes and parameter bytes\n"
    "    (a dataset built with `driple dataset build --cost-features`).\n"
    "  --recipe driple-c (default): log features, at most 2 layers, log-normalised targets,\n"
    "    lr 0.01 halved after each 10 epochs without progress, 300 epochs, patience 40\n"
    "    (notes/accuracy.md).\n"
    "  --recipe paper: the published recipe (raw features, layers = max(1, N/2), targets =\n"
    "    label / training max, constant lr 0.003, 200 epochs, patience 20). Options after it\n"
    "    override.\n"
    "  --split models: hold out whole model families (every size variant of a zoo architecture\n"
    "    together: `driple zoo list --json` gives the family), not single models.\n"
    "  Errors: MAPE over labels >= 1 (ms, %, MB/s), RMSE in the output's unit, R2 = 1 - SSE/SS.";
static const char *const usage_transfer =
    "driple transfer --from BASE.json --dataset D.json -o M.json [--mode head|head+last]\n"
    "       [--recipe driple-c|paper] [--target base|max|range|log] [--epochs N] [--patience P]\n"
    "       [--seed 1] [--split random|models] [--minibatch 32] [--lr L]\n"
    "       [--lr-decay F --lr-plateau E] [--weight-decay 1e-6] [--vs-scratch] [--json]\n"
    "  --target base (default): the base's kind of output transform, refitted on the new labels.";
static const char *const usage_inspector =
    "driple inspector info M.json [--json]\n"
    "       inspector import-torch FILE.pkl [--layer gcn] [--setting ID] -o M.json\n"
    "       inspector import-json W.json [--setting ID] -o M.json\n"
    "       inspector eval M.json --dataset D.json [--json]   (MAPE/RMSE/R2 on every trainable sample)";

/* ---- output helpers ---- */

static const char *const group_names[4] = {"gpu_mem_util", "gpu_util", "net_rx", "net_tx"};
static const char *const field_names[3] = {"idle", "active", "peak"};

/* The default setting list, found as every shipped file is (dp_asset_path: $DRIPLE_ASSETS,
 * ./assets, next to the binary); when none is readable, assets/settings/default.json, whose
 * load then fails naming it. */
static const char *default_settings(char *buf, size_t n) {
    if (!dp_asset_path("settings/default.json", buf, n))
        snprintf(buf, n, "assets/settings/default.json");
    return buf;
}

/* The grouped graph of GRAPH (read with io, coarsened, features at `batch`) or of --grouped
 * FILE; *params: GRAPH's parameter count (the sum over its variables), NaN for a grouped file,
 * which does not keep it. */
static int load_input(const char *graph_path, const char *grouped_path,
                      const struct dp_import_opts *io, int64_t batch, int64_t groups, int64_t seed,
                      const char *weights, const char *cmd, const char *usage,
                      struct dp_grouped **out, char **unknown, double *params) {
    struct dp_error err = {0};
    *unknown = NULL;
    *params = NAN;
    if (!!graph_path == !!grouped_path)
        return cli_usage(cmd, usage, "give one GRAPH or --grouped FILE");
    if (grouped_path) {
        if (batch > 0)
            return cli_usage(cmd, usage, "--batch needs a GRAPH (a grouped file's features are fixed)");
        if (io->exported_batch > 0)
            return cli_usage(cmd, usage, "--exported-batch needs a GRAPH (not --grouped FILE)");
        if (dp_grouped_load_json(grouped_path, out, &err)) return cli_fail(&err);
        return 0;
    }
    struct dp_graph *g = NULL;
    struct dp_op_weights *w = NULL;
    if (dp_graph_load(graph_path, io, &g, &err)) return cli_fail(&err);
    *params = 0;
    for (size_t i = 0; i < dp_graph_n_nodes(g); i++) *params += (double)dp_graph_node(g, i)->params;
    if (dp_op_weights_load_default(weights, &w, &err)) {
        dp_graph_free(g);
        return cli_fail(&err);
    }
    struct dp_coarsen_opts opts = {(int)groups, seed, 0};
    enum dp_status st = dp_graph_group(g, &opts, w, batch, out, unknown, &err);
    dp_op_weights_free(w);
    dp_graph_free(g);
    if (st) dp_error_prefix(&err, graph_path); /* the engine names the graph; name the file */
    return st ? cli_fail(&err) : 0;
}

/* Derived figures from the 12 metrics and the graph (formulas printed beside them). */
struct derived {
    double iteration_ms, throughput, gpu_util_mean, gpu_mem_util_mean;
    double params, net_mb; /* NaN for a grouped file */
    double epoch_s, epoch_cost;
    int    workers;   /* 0: unknown (throughput is per worker) */
};

/* params: the graph's parameter count (NaN: unknown). A worker moves 2 x params x 4 B per
 * iteration under PS training: every variable pulled, every gradient pushed, fp32 on the wire
 * at either precision (sim.c shards variables at 4 B each). */
static void derive(const double *m, int64_t batch, int workers, double params,
                   double epoch_samples, double price, struct derived *d) {
    memset(d, 0, sizeof *d);
    d->workers = workers;
    d->params = params;
    d->net_mb = 2.0 * params * 4.0 / 1e6;
    d->iteration_ms = m[3] + m[4];
    int w = workers > 0 ? workers : 1;
    d->throughput = d->iteration_ms > 0 && batch > 0 ? (double)batch * w * 1000.0 / d->iteration_ms : NAN;
    d->gpu_util_mean = m[3] + m[4] > 0 ? m[5] * m[4] / (m[3] + m[4]) : NAN;
    d->gpu_mem_util_mean = m[0] + m[1] > 0 ? m[2] * m[1] / (m[0] + m[1]) : NAN;
    d->epoch_s = epoch_samples > 0 && d->throughput > 0 ? epoch_samples / d->throughput : NAN;
    d->epoch_cost = price > 0 && isfinite(d->epoch_s) ? d->epoch_s / 3600.0 * w * price : NAN;
}

static const char *const derived_help =
    "  iteration_ms     = gpu_util.idle + gpu_util.active (one compute burst and one gap per iteration)\n"
    "  throughput       = batch x workers x 1000 / iteration_ms  (samples/s; per worker when the\n"
    "                     setting's worker count is unknown)\n"
    "  gpu_util_mean    = gpu_util.peak x active / (idle + active)   (%, likewise gpu_mem_util_mean)\n"
    "  net_mb_per_iter  = 2 x parameters x 4 B / 1e6  (one worker under PS training: it pulls\n"
    "                     every variable and pushes every gradient, fp32 on the wire at either\n"
    "                     precision, as the simulator sends them; exact, from the graph)\n"
    "  epoch_s          = epoch samples / throughput; epoch_cost = epoch_s / 3600 x workers x price\n";

static void print_metrics_json(FILE *f, const double *m) {
    fputc('{', f);
    for (int r = 0; r < 4; r++) {
        fprintf(f, "%s\"%s\": {", r ? ", " : "", group_names[r]);
        for (int k = 0; k < 3; k++) {
            fprintf(f, "%s\"%s\": ", k ? ", " : "", field_names[k]);
            cmd_json_num(f, m[3 * r + k]);
        }
        fputc('}', f);
    }
    fputc('}', f);
}

static void print_derived_json(FILE *f, const struct derived *d) {
    fprintf(f, "{\"iteration_ms\": ");
    cmd_json_num(f, d->iteration_ms);
    fprintf(f, ", \"throughput\": ");
    cmd_json_num(f, d->throughput);
    fprintf(f, ", \"workers\": ");
    if (d->workers > 0) fprintf(f, "%d", d->workers);
    else fputs("null", f);
    fprintf(f, ", \"gpu_util_mean\": ");
    cmd_json_num(f, d->gpu_util_mean);
    fprintf(f, ", \"gpu_mem_util_mean\": ");
    cmd_json_num(f, d->gpu_mem_util_mean);
    fprintf(f, ", \"parameters\": ");
    cmd_json_num(f, d->params);
    fprintf(f, ", \"net_mb_per_iter\": ");
    cmd_json_num(f, d->net_mb);
    fprintf(f, ", \"epoch_s\": ");
    cmd_json_num(f, d->epoch_s);
    fprintf(f, ", \"epoch_cost\": ");
    cmd_json_num(f, d->epoch_cost);
    fprintf(f, ", \"formulas\": {\"iteration_ms\": \"gpu_util.idle + gpu_util.active\", "
               "\"throughput\": \"batch * workers * 1000 / iteration_ms\", "
               "\"gpu_util_mean\": \"gpu_util.peak * gpu_util.active / (gpu_util.idle + gpu_util.active)\", "
               "\"gpu_mem_util_mean\": \"gpu_mem_util.peak * gpu_mem_util.active / (gpu_mem_util.idle + gpu_mem_util.active)\", "
               "\"net_mb_per_iter\": \"2 * parameters * 4 / 1e6 (one worker: every variable "
               "pulled, every gradient pushed, fp32 on the wire)\", "
               "\"epoch_s\": \"epoch_samples / throughput\", "
               "\"epoch_cost\": \"epoch_s / 3600 * workers * price\"}}");
}

/* Finds a setting's worker count in the list at `file` (NULL: default list); 0 when unknown. */
static int setting_workers(const char *file, const char *id) {
    if (!id || !id[0]) return 0;
    char buf[PATH_MAX + 64];
    struct dp_settings *list = NULL;
    struct dp_error err = {0};
    if (dp_settings_load(file ? file : default_settings(buf, sizeof buf), NULL, &list, &err)) return 0;
    const struct dp_setting *s = dp_settings_find(list, id);
    int w = s ? s->workers : 0;
    dp_settings_free(list);
    return w;
}

/* ---- predict ---- */

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
    double epoch_samples = 1281167, price = 0;
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
    if ((rc = load_input(graph, grouped, &io, batch, groups, seed, weights, "predict",
                         usage_predict, &g, &unknown, &params)))
        goto done;
    rc = 1;
    if (dp_inspector_load(ipath, &insp, &err)) { cli_fail(&err); goto done; }
    if (!setting_id[0]) snprintf(setting_id, sizeof setting_id, "%s", dp_inspector_setting(insp));
    float raw[DP_N_OUTPUTS];
    double m[DP_N_OUTPUTS];
    if (dp_inspector_predict(insp, g, raw, m, &err)) {
        dp_error_prefix(&err, graph ? graph : grouped); /* the engine names the graph */
        cli_fail(&err);
        goto done;
    }
    if (insp_arg) workers = setting_workers(settings_file, setting_id);
    struct derived d;
    derive(m, g->batch, workers, params, epoch_samples, price, &d);
    if (json) {
        FILE *f = stdout;
        fprintf(f, "{\"graph\": ");
        cmd_json_str(f, g->graph);
        fprintf(f, ", \"batch\": ");
        if (g->batch > 0) fprintf(f, "%lld", (long long)g->batch);
        else fputs("null", f);
        fprintf(f, ", \"n_groups\": %d, \"setting\": ", g->n_groups);
        if (setting_id[0]) cmd_json_str(f, setting_id);
        else fputs("null", f);
        fprintf(f, ", \"inspector\": ");
        cmd_json_str(f, ipath);
        fprintf(f, ", \"data\": ");
        cmd_json_str(f, dp_inspector_provenance(insp)->data);
        fprintf(f, ",\n \"metrics\": ");
        print_metrics_json(f, m);
        fprintf(f, ",\n \"units\": {\"idle\": \"ms\", \"active\": \"ms\", \"gpu_mem_util.peak\": \"%%\", "
                   "\"gpu_util.peak\": \"%%\", \"net_rx.peak\": \"MB/s\", \"net_tx.peak\": \"MB/s\"}");
        fprintf(f, ",\n \"raw\": [");
        for (int o = 0; o < DP_N_OUTPUTS; o++) {
            if (o) fputs(", ", f);
            cmd_json_num(f, raw[o]);
        }
        fprintf(f, "],\n \"derived\": ");
        print_derived_json(f, &d);
        if (unknown) {
            fprintf(f, ",\n \"unknown_op_types\": ");
            cmd_json_str(f, unknown);
        }
        fprintf(f, "}\n");
    } else {
        printf("graph %s  batch %lld  groups %d  setting %s\ninspector %s (%s%s%s)\n\n", g->graph,
               (long long)g->batch, g->n_groups, setting_id[0] ? setting_id : "(none)", ipath,
               dp_inspector_provenance(insp)->origin, dp_inspector_provenance(insp)->data[0] ? ", " : "",
               dp_inspector_provenance(insp)->data);
        printf("%-14s %12s %12s %12s\n", "resource", "idle ms", "active ms", "peak");
        for (int r = 0; r < 4; r++)
            printf("%-14s %12.4g %12.4g %12.4g %s\n", group_names[r], m[3 * r], m[3 * r + 1],
                   m[3 * r + 2], r < 2 ? "%" : "MB/s");
        printf("\niteration %.4g ms   throughput %.4g samples/s%s   mean GPU util %.3g%%\n",
               d.iteration_ms, d.throughput, workers > 0 ? "" : " per worker", d.gpu_util_mean);
        if (isfinite(d.net_mb))
            printf("network per iteration %.4g MB per worker (2 x %.0f parameters x 4 B)\n",
                   d.net_mb, d.params);
        if (isfinite(d.epoch_s)) printf("epoch (%.0f samples) %.4g s", epoch_samples, d.epoch_s);
        if (isfinite(d.epoch_cost)) printf("   cost %.4g USD", d.epoch_cost);
        printf("\n\nformulas:\n%s", derived_help);
        if (unknown) printf("unknown op types (weight 0): %s\n", unknown);
    }
    rc = 0;
done:
    free(unknown);
    dp_inspector_free(insp);
    dp_grouped_free(g);
    cli_done(&c);
    return rc;
}

/* ---- compare ---- */

struct body_cache {
    char   key[40];
    float *emb;
};

int cmd_compare(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, "compare")) return 1;
    int rc = 2;
    struct dp_grouped *g = NULL;
    struct dp_settings *list = NULL;
    struct body_cache *cache = NULL;
    int n_cache = 0;
    char *unknown = NULL, sbuf[PATH_MAX + 64];
    const char *grouped = cli_value(&c, "--grouped");
    const char *settings_file = cli_value(&c, "--settings");
    const char *weights = cli_value(&c, "--weights");
    const char *setting = cli_value(&c, "--setting");
    int64_t batch = 0, groups = DP_DEFAULT_GROUPS, seed = DP_DEFAULT_SEED;
    struct dp_import_opts io;
    struct cmd_cluster cl;
    bool json = cli_flag(&c, "--json");
    if (!cmd_import_opts(&c, &io) || !cmd_cluster_opts(&c, &cl) ||
        !cli_int(&c, "--batch", 1, INT64_C(1) << 30, &batch) ||
        !cli_int(&c, "--groups", 1, 100000, &groups) ||
        !cli_int(&c, "--seed", INT64_MIN + 1, INT64_MAX, &seed) || c.bad)
        goto done;
    const char *graph = cli_positional(&c, 0);
    if (!cli_check_unused(&c)) goto done;
    bool by_cluster = cmd_cluster_given(&cl) || cl.precision;
    if (setting && by_cluster) {
        rc = cli_usage("compare", usage_compare, "give --setting ID or --gpu NAME ..., not both");
        goto done;
    }
    struct dp_error err = {0};
    const char *file = settings_file ? settings_file : default_settings(sbuf, sizeof sbuf);
    rc = 1;
    if (dp_settings_load(file, NULL, &list, &err)) { cli_fail(&err); goto done; }
    /* The extra row: the named setting, unless the list has it already. */
    struct dp_setting extra;
    int n_rows = list->n_settings;
    if (setting || by_cluster) {
        if ((rc = cmd_setting_resolve(setting, &cl, file, "compare", usage_compare, &extra,
                                      extra.inspector, sizeof extra.inspector)))
            goto done;
        rc = 1;
        bool listed = false;
        for (int i = 0; i < list->n_settings && !listed; i++) {
            const struct dp_setting *e = &list->settings[i];
            listed = !strcmp(e->id, extra.id) && !strcmp(e->gpu, extra.gpu) &&
                     !strcmp(e->inspector, extra.inspector);
        }
        if (!listed) n_rows++;
    }
    double params;
    if ((rc = load_input(graph, grouped, &io, batch, groups, seed, weights, "compare",
                         usage_compare, &g, &unknown, &params)))
        goto done;
    rc = 1;
    if (!(cache = calloc((size_t)n_rows + 1, sizeof *cache))) {
        dp_error_set(&err, DP_ERR_NOMEM, "compare: out of memory");
        cli_fail(&err);
        goto done;
    }
    double t0 = dp_clock_ms();
    int n_ok = 0, n_gnn = 0;
    if (json) {
        printf("{\"graph\": ");
        cmd_json_str(stdout, g->graph);
        printf(", \"batch\": ");
        if (g->batch > 0) printf("%lld", (long long)g->batch);
        else printf("null");
        printf(", \"settings_file\": ");
        cmd_json_str(stdout, file);
        printf(", \"settings\": [");
    } else {
        printf("graph %s  batch %lld  groups %d  settings %s\n\n", g->graph, (long long)g->batch,
               g->n_groups, file);
        printf("%-28s %10s %12s %9s %9s %10s %10s  %s\n", "setting", "iter ms", "samples/s",
               "GPU act", "GPU peak", "RX MB/s", "TX MB/s", "inspector");
    }
    for (int i = 0; i < n_rows; i++) {
        const struct dp_setting *s = i < list->n_settings ? &list->settings[i] : &extra;
        struct dp_inspector *insp = NULL;
        const char *why = NULL;
        char whybuf[600];
        double m[DP_N_OUTPUTS];
        float raw[DP_N_OUTPUTS];
        if (!s->inspector[0]) why = "no inspector";
        else if (access(s->inspector, R_OK) != 0) why = "inspector file missing";
        else if (dp_inspector_load(s->inspector, &insp, &err)) {
            snprintf(whybuf, sizeof whybuf, "%s", err.msg);
            why = whybuf;
        }
        if (insp) {
            /* One GNN pass per distinct body; each inspector then runs only its head. */
            const struct dp_model *mod = dp_inspector_model(insp);
            const char *key = dp_inspector_body_key(insp);
            float *emb = NULL;
            for (int k = 0; k < n_cache && !emb; k++)
                if (!strcmp(cache[k].key, key)) emb = cache[k].emb;
            if (!emb) {
                emb = malloc((size_t)dp_model_embed_size(mod) * sizeof *emb);
                if (emb && dp_model_embed(mod, g, emb, &err) == DP_OK) {
                    snprintf(cache[n_cache].key, sizeof cache[n_cache].key, "%s", key);
                    cache[n_cache++].emb = emb;
                    n_gnn++;
                } else {
                    snprintf(whybuf, sizeof whybuf, "%s", emb ? err.msg : "out of memory");
                    free(emb);
                    emb = NULL;
                    why = whybuf;
                }
            }
            if (emb) {
                dp_model_head(mod, emb, raw);
                for (int o = 0; o < DP_N_OUTPUTS; o++) {
                    m[o] = dp_inspector_metric(insp, o, raw[o]);
                    if (!why && !(isfinite(raw[o]) && isfinite(m[o]))) {
                        snprintf(whybuf, sizeof whybuf, "%s: prediction of %s is not finite",
                                 s->inspector, dp_output_names[o]);
                        why = whybuf;
                    }
                }
                n_ok += !why;
            }
        }
        struct derived d;
        if (!why) derive(m, g->batch, s->workers, params, 0, 0, &d);
        if (json) {
            printf("%s\n  {\"id\": ", i ? "," : "");
            cmd_json_str(stdout, s->id);
            printf(", \"gpu\": ");
            cmd_json_str(stdout, s->gpu);
            printf(", \"workers\": %d, \"ps\": %d, \"inspector\": ", s->workers, s->ps);
            if (s->inspector[0]) cmd_json_str(stdout, s->inspector);
            else printf("null");
            if (why) {
                printf(", \"error\": ");
                cmd_json_str(stdout, why);
                printf(", \"metrics\": null}");
            } else {
                printf(", \"data\": ");
                cmd_json_str(stdout, dp_inspector_provenance(insp)->data);
                printf(", \"metrics\": ");
                print_metrics_json(stdout, m);
                printf(", \"raw\": [");
                for (int o = 0; o < DP_N_OUTPUTS; o++) {
                    if (o) printf(", ");
                    cmd_json_num(stdout, raw[o]);
                }
                printf("], \"derived\": ");
                print_derived_json(stdout, &d);
                printf("}");
            }
        } else if (why) {
            printf("%-28s %10s %12s %9s %9s %10s %10s  (%s)\n", s->id, "-", "-", "-", "-", "-", "-", why);
        } else {
            printf("%-28s %10.4g %12.4g %9.4g %9.4g %10.4g %10.4g  %s\n", s->id, d.iteration_ms,
                   d.throughput, m[4], m[5], m[8], m[11], s->inspector);
        }
        dp_inspector_free(insp);
    }
    double ms = dp_clock_ms() - t0;
    if (json) {
        printf("\n ], \"n_predicted\": %d, \"gnn_passes\": %d, \"ms\": ", n_ok, n_gnn);
        cmd_json_num(stdout, ms);
        printf(", \"parameters\": ");
        cmd_json_num(stdout, params);
        printf(", \"net_mb_per_iter\": ");
        cmd_json_num(stdout, 2.0 * params * 4.0 / 1e6);
        printf(", \"formulas\": {\"iteration_ms\": \"gpu_util.idle + gpu_util.active\", "
               "\"throughput\": \"batch * workers * 1000 / iteration_ms\", "
               "\"net_mb_per_iter\": \"2 * parameters * 4 / 1e6 (one worker, every setting: "
               "every variable pulled, every gradient pushed, fp32 on the wire)\"}}\n");
    } else {
        printf("\n%d of %d settings predicted with %d GNN pass%s (shared bodies) in %.1f ms.\n"
               "GPU act = gpu_util.active (ms), GPU peak = gpu_util.peak (%%); "
               "iter ms = gpu_util.idle + gpu_util.active; samples/s = batch x workers x 1000 / iter ms.\n",
               n_ok, n_rows, n_gnn, n_gnn == 1 ? "" : "es", ms);
        if (isfinite(params))
            printf("net per iter = 2 x %.0f parameters x 4 B = %.4g MB per worker in every setting "
                   "(every variable pulled, every gradient pushed, fp32 on the wire).\n",
                   params, 2.0 * params * 4.0 / 1e6);
    }
    rc = 0;
    if (n_ok == 0) { /* a table of dashes is no answer: say so in the exit status */
        dp_error_set(&err, DP_ERR_NOT_FOUND, "%s: no setting could be predicted (see the reasons above)",
                     file);
        rc = cli_fail(&err);
    }
done:
    for (int k = 0; k < n_cache; k++) free(cache[k].emb);
    free(cache);
    free(unknown);
    dp_settings_free(list);
    dp_grouped_free(g);
    cli_done(&c);
    return rc;
}

/* ---- train and transfer ---- */

static atomic_int interrupted; /* lock-free, so a signal handler may set it */
static void on_sigint(int sig) {
    (void)sig;
    interrupted = 1;
    signal(SIGINT, SIG_DFL); /* a second Ctrl-C ends the process */
}

struct progress_state {
    bool   tty, quiet;
    double last_draw; /* dp_clock_ms() of the last redraw */
};

static void fmt_time(double s, char *buf, size_t n) {
    if (!isfinite(s) || s < 0) snprintf(buf, n, "?");
    else if (s < 60) snprintf(buf, n, "%.0fs", s);
    else if (s < 3600) snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

static void on_progress(const struct dp_train_progress *p, void *ud) {
    struct progress_state *ps = ud;
    if (ps->quiet) return;
    double done = (p->epoch - 1) + (double)p->batch / (p->n_batches ? p->n_batches : 1);
    double eta = done > 0 ? p->elapsed_s / done * (p->epochs - done) : NAN;
    char eta_s[16], el_s[16];
    fmt_time(eta, eta_s, sizeof eta_s);
    fmt_time(p->elapsed_s, el_s, sizeof el_s);
    if (ps->tty) {
        double t = dp_clock_ms();
        if (!p->epoch_end && t - ps->last_draw < 100) return;
        ps->last_draw = t;
        int width = 24, fill = (int)(width * (double)p->batch / (p->n_batches ? p->n_batches : 1));
        char bar[32];
        for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
        bar[width] = '\0';
        fprintf(stderr, "\r\033[Kepoch %d/%d [%s] %d/%d loss %.5f", p->epoch, p->epochs, bar,
                p->batch, p->n_batches, p->train_loss);
        if (isfinite(p->val_loss)) fprintf(stderr, " val %.5f", p->val_loss);
        if (p->best_epoch > 0) fprintf(stderr, " best %.5f@%d", p->best_val_loss, p->best_epoch);
        fprintf(stderr, " %s ETA<=%s", el_s, eta_s);
        fflush(stderr);
    } else if (p->epoch_end) {
        fprintf(stderr, "epoch %d/%d loss %.6f val %.6f best %.6f@%d elapsed %s\n", p->epoch,
                p->epochs, p->train_loss, p->val_loss, p->best_val_loss, p->best_epoch, el_s);
    }
}

static void print_eval_table(FILE *f, const struct dp_provenance *p) {
    fprintf(f, "%-22s %9s %11s %8s   %9s %11s %8s\n", "output", "val MAPE%", "val RMSE", "val R2",
            "test MAPE%", "test RMSE", "test R2");
    for (int o = 0; o < DP_N_OUTPUTS; o++)
        fprintf(f, "%-22s %9.3g %11.4g %8.3f   %9.3g %11.4g %8.3f\n", dp_output_names[o],
                p->val.mape[o], p->val.rmse[o], p->val.r2[o], p->test.mape[o], p->test.rmse[o],
                p->test.r2[o]);
    fprintf(f, "MAPE: mean |pred - label| / |label| over labels >= %g (ms, %%, MB/s); RMSE in the "
            "output's unit; R2 = 1 - SSE / SS about the labels' mean (nan: labels constant)\n",
            DP_MAPE_FLOOR);
}

static double mean_finite(const double *v) {
    double s = 0;
    int n = 0;
    for (int o = 0; o < DP_N_OUTPUTS; o++)
        if (isfinite(v[o])) { s += v[o]; n++; }
    return n ? s / n : NAN;
}

static void print_eval_json(FILE *f, const char *key, const struct dp_eval *e) {
    const char *names[3] = {"mape", "rmse", "r2"};
    const double *vals[3] = {e->mape, e->rmse, e->r2};
    fprintf(f, "\"%s\": {", key);
    for (int k = 0; k < 3; k++) {
        fprintf(f, "%s\"%s\": [", k ? ", " : "", names[k]);
        for (int o = 0; o < DP_N_OUTPUTS; o++) {
            if (o) fputs(", ", f);
            cmd_json_num(f, vals[k][o]);
        }
        fputc(']', f);
    }
    fputc('}', f);
}

static void print_run_json(FILE *f, const char *label, const struct dp_inspector *insp,
                           const struct dp_train_result *r) {
    const struct dp_provenance *p = dp_inspector_provenance(insp);
    fprintf(f, "\"%s\": {\"origin\": ", label);
    cmd_json_str(f, p->origin);
    fprintf(f, ", \"mode\": ");
    cmd_json_str(f, p->mode);
    fprintf(f, ", \"seconds\": ");
    cmd_json_num(f, r->seconds);
    fprintf(f, ", \"embed_seconds\": ");
    cmd_json_num(f, r->embed_seconds);
    fprintf(f, ", \"epochs\": %d, \"best_epoch\": %d, \"cancelled\": %s, \"first_train_loss\": ",
            r->epochs_run, r->best_epoch, r->cancelled ? "true" : "false");
    cmd_json_num(f, r->first_train_loss);
    fprintf(f, ", \"best_val_loss\": ");
    cmd_json_num(f, r->best_val_loss);
    fprintf(f, ", \"mape_floor\": %g", DP_MAPE_FLOOR);
    fprintf(f, ", \"n_train\": %d, \"n_val\": %d, \"n_test\": %d, \"test_mape_mean\": ",
            r->split.n_train, r->split.n_val, r->split.n_test);
    cmd_json_num(f, mean_finite(p->test.mape));
    fprintf(f, ", ");
    print_eval_json(f, "val", &p->val);
    fprintf(f, ", ");
    print_eval_json(f, "test", &p->test);
    fputc('}', f);
}

/* The state train and transfer share: the command line, the training options (the recipe's
 * defaults, then the options given), the dataset, the trained inspector and its result, and the
 * progress bar and Ctrl-C handler that watch the run. run_init sets it up; run_free releases it,
 * whichever step failed. */
struct run_cmd {
    struct cli             c;
    const char            *cmd, *usage; /* for usage messages */
    struct dp_train_opts   o;
    enum dp_recipe         recipe;
    struct dp_dataset      ds;
    struct dp_inspector   *insp; /* the inspector trained (train) or transferred (transfer) */
    struct dp_train_result res;
    struct progress_state  ps;
    void (*old_sigint)(int);
};

/* Wraps argv for `cmd` (usage: its usage text); false, with nothing to free, when out of memory. */
static bool run_init(struct run_cmd *r, int argc, char **argv, const char *cmd, const char *usage) {
    memset(r, 0, sizeof *r);
    if (!cli_init(&r->c, argc, argv, cmd)) return false;
    r->cmd = cmd;
    r->usage = usage;
    dp_dataset_init(&r->ds, NULL);
    return true;
}

static void run_free(struct run_cmd *r) {
    dp_train_result_free(&r->res);
    dp_inspector_free(r->insp);
    dp_dataset_free(&r->ds);
    cli_done(&r->c);
}

/* The recipe's defaults (--recipe, default driple-c) into r->o; the other options override them,
 * so query it first. False, with the message printed and c.bad set, on an unknown recipe. */
static bool recipe_opts(struct run_cmd *r) {
    const char *recipe = cli_value(&r->c, "--recipe");
    r->recipe = DP_RECIPE_DRIPLE_C;
    if (recipe && !dp_recipe_parse(recipe, &r->recipe)) {
        cli_usage(r->cmd, r->usage, "--recipe: '%s' is not driple-c or paper", recipe);
        r->c.bad = true;
        return false;
    }
    dp_train_opts_recipe(&r->o, r->recipe);
    return true;
}

/* The options train and transfer share (epochs, patience, seed, minibatch, hidden, lr and its
 * decay, weight decay, split, target) over r->o's defaults, then the check that every argument
 * was used: query it after the command's own options. False, with the message printed, when
 * any option was bad (exit status 2). */
static bool train_opts(struct run_cmd *r) {
    struct cli *c = &r->c;
    struct dp_train_opts *o = &r->o;
    int64_t epochs = o->epochs, patience = o->patience, seed = (int64_t)o->seed, mb = o->batch,
            hidden = o->hidden, plateau = o->lr_plateau;
    double lr = o->adam.lr, decay = o->lr_decay, wd = o->adam.weight_decay;
    const char *split = cli_value(c, "--split");
    const char *target = cli_value(c, "--target");
    if (!cli_int(c, "--epochs", 1, 1000000, &epochs) || !cli_int(c, "--patience", 0, 1000000, &patience) ||
        !cli_int(c, "--seed", 0, INT64_MAX, &seed) || !cli_int(c, "--minibatch", 1, 100000, &mb) ||
        !cli_int(c, "--hidden", 1, 4096, &hidden) || !cli_double(c, "--lr", 1e-9, 10, &lr) ||
        !cli_double(c, "--lr-decay", 1e-6, 1, &decay) ||
        !cli_int(c, "--lr-plateau", 0, 1000000, &plateau) ||
        !cli_double(c, "--weight-decay", 0, 10, &wd))
        return false;
    if (split && !dp_split_parse(split, &o->split)) {
        cli_usage(r->cmd, r->usage, "--split: '%s' is not random or models", split);
        c->bad = true;
        return false;
    }
    if (target && !dp_target_parse(target, &o->target)) {
        cli_usage(r->cmd, r->usage, "--target: '%s' is not max, range, log or base", target);
        c->bad = true;
        return false;
    }
    o->lr_decay = decay;
    o->lr_plateau = (int)plateau;
    o->adam.weight_decay = (float)wd;
    o->epochs = (int)epochs;
    o->patience = (int)patience;
    o->seed = (uint64_t)seed;
    o->batch = (int)mb;
    o->hidden = (int)hidden;
    o->adam.lr = (float)lr;
    /* an earlier query whose value was missing (cli_value) set c->bad without failing here */
    return !c->bad && cli_check_unused(c);
}

/* Before the run: progress on stderr (a bar on a terminal, a line per epoch otherwise) and Ctrl-C
 * to stop it keeping the best model so far. watch_stop undoes both. */
static void watch_start(struct run_cmd *r) {
    r->ps = (struct progress_state){isatty(2) != 0, false, 0};
    r->o.progress = on_progress;
    r->o.ud = &r->ps;
    r->o.cancel = &interrupted;
    interrupted = 0;
    r->old_sigint = signal(SIGINT, on_sigint);
}

static void watch_stop(struct run_cmd *r) {
    signal(SIGINT, r->old_sigint);
    if (r->ps.tty) fputc('\n', stderr); /* end the bar's line */
}

/* Opens the --json object of train and transfer: the inspector written, where it came from
 * (src_key "dataset" or "base": src) and the dataset's setting, ending in ", " for the rest. */
static void print_run_head_json(const struct run_cmd *r, const char *out, const char *src_key,
                                const char *src) {
    printf("{\"inspector\": ");
    cmd_json_str(stdout, out);
    printf(", \"%s\": ", src_key);
    cmd_json_str(stdout, src);
    printf(", \"setting\": ");
    cmd_json_str(stdout, r->ds.setting);
    printf(", ");
}

/* The text summary's opening words when Ctrl-C stopped the run. */
static const char *cancelled_note(const struct dp_train_result *res) {
    return res->cancelled ? "interrupted, kept the best so far; " : "";
}

int cmd_train(int argc, char **argv) {
    struct run_cmd r;
    if (!run_init(&r, argc, argv, "train", usage_train)) return 1;
    int rc = 2;
    if (!recipe_opts(&r)) goto done;
    const char *dataset = cli_value(&r.c, "--dataset");
    const char *out = cli_value(&r.c, "-o");
    const char *layer = cli_value(&r.c, "--layer");
    const char *feat = cli_value(&r.c, "--features");
    const char *rule = cli_value(&r.c, "--rule");
    int64_t n_layers = 0, max_layers = r.o.max_layers;
    bool json = cli_flag(&r.c, "--json");
    if (cli_flag(&r.c, "--cost-features")) r.o.n_feat = DP_N_FEATURES_MAX;
    if (!out) out = cli_value(&r.c, "--out");
    if (!cli_int(&r.c, "--layers", 1, 100000, &n_layers) ||
        !cli_int(&r.c, "--max-layers", 0, 100000, &max_layers))
        goto done;
    r.o.n_layers = (int)n_layers;
    r.o.max_layers = (int)max_layers;
    if (rule && !dp_layer_rule_parse(rule, &r.o.rule)) {
        rc = cli_usage("train", usage_train, "--rule: '%s' is not half, n, log2 or fixed", rule);
        goto done;
    }
    if (n_layers > 0 && !rule) r.o.rule = DP_RULE_FIXED;
    if (!train_opts(&r)) goto done;
    if (!dataset || !out) {
        rc = cli_usage("train", usage_train, "needs --dataset D.json and -o M.json");
        goto done;
    }
    if (r.o.target == DP_TARGET_BASE) {
        rc = cli_usage("train", usage_train, "--target base is for transfer (there is no base)");
        goto done;
    }
    if (layer && !dp_layer_parse(layer, &r.o.layer)) {
        rc = cli_usage("train", usage_train, "--layer: '%s' is not gcn, gin, gat or mpnn", layer);
        goto done;
    }
    if (feat && !dp_feat_parse(feat, &r.o.feat)) {
        rc = cli_usage("train", usage_train, "--features: '%s' is not raw or log", feat);
        goto done;
    }
    rc = 1;
    struct dp_error err = {0};
    if (dp_dataset_load_json(dataset, &r.ds, &err)) { cli_fail(&err); goto done; }
    watch_start(&r);
    enum dp_status st = dp_train(&r.ds, &r.o, &r.insp, &r.res, &err);
    watch_stop(&r);
    if (st) { cli_fail(&err); goto done; }
    if (dp_inspector_save(r.insp, out, NULL, NULL, &err)) { cli_fail(&err); goto done; }
    const struct dp_train_opts *o = &r.o;
    if (json) {
        print_run_head_json(&r, out, "dataset", dataset);
        printf("\"layer\": ");
        cmd_json_str(stdout, dp_layer_name(o->layer));
        printf(", \"features\": ");
        cmd_json_str(stdout, dp_feat_name(o->feat));
        printf(", \"n_feat\": %d, \"recipe\": ", o->n_feat);
        cmd_json_str(stdout, dp_recipe_name(r.recipe));
        printf(", \"target\": ");
        cmd_json_str(stdout, dp_target_name(o->target));
        printf(", \"split\": ");
        cmd_json_str(stdout, dp_split_name(o->split));
        printf(", ");
        print_run_json(stdout, "scratch", r.insp, &r.res);
        printf("}\n");
    } else {
        printf("%s%s: %s (recipe %s, %s features, %s targets) on %s (%s split, %d/%d/%d samples, "
               "%s labels), %d epochs (best %d), %.2f s\n",
               cancelled_note(&r.res), out, dp_layer_name(o->layer), dp_recipe_name(r.recipe),
               dp_feat_name(o->feat), dp_target_name(o->target),
               r.ds.setting[0] ? r.ds.setting : dataset, dp_split_name(o->split),
               r.res.split.n_train, r.res.split.n_val, r.res.split.n_test,
               dp_dataset_data_kind(&r.ds), r.res.epochs_run, r.res.best_epoch, r.res.seconds);
        print_eval_table(stdout, dp_inspector_provenance(r.insp));
    }
    rc = 0;
done:
    run_free(&r);
    return rc;
}

int cmd_transfer(int argc, char **argv) {
    struct run_cmd r;
    if (!run_init(&r, argc, argv, "transfer", usage_transfer)) return 1;
    int rc = 2;
    struct dp_inspector *base = NULL, *scratch = NULL;
    struct dp_train_result sres;
    memset(&sres, 0, sizeof sres);
    if (!recipe_opts(&r)) goto done;
    r.o.target = DP_TARGET_BASE;
    const char *from = cli_value(&r.c, "--from");
    const char *dataset = cli_value(&r.c, "--dataset");
    const char *out = cli_value(&r.c, "-o");
    const char *mode = cli_value(&r.c, "--mode");
    bool json = cli_flag(&r.c, "--json"), vs = cli_flag(&r.c, "--vs-scratch");
    if (!out) out = cli_value(&r.c, "--out");
    if (!train_opts(&r)) goto done;
    if (!from || !dataset || !out) {
        rc = cli_usage("transfer", usage_transfer, "needs --from BASE.json, --dataset D.json and -o M.json");
        goto done;
    }
    if (mode && !strcmp(mode, "head")) r.o.mode = DP_TRAIN_HEAD;
    else if (mode && (!strcmp(mode, "head+last") || !strcmp(mode, "head-last")))
        r.o.mode = DP_TRAIN_HEAD_LAST;
    else if (mode) {
        rc = cli_usage("transfer", usage_transfer, "--mode: '%s' is not head or head+last", mode);
        goto done;
    }
    rc = 1;
    struct dp_error err = {0};
    if (dp_inspector_load(from, &base, &err)) { cli_fail(&err); goto done; }
    if (dp_dataset_load_json(dataset, &r.ds, &err)) { cli_fail(&err); goto done; }
    watch_start(&r);
    enum dp_status st = dp_transfer(base, &r.ds, &r.o, &r.insp, &r.res, &err);
    if (!st && vs && !interrupted) {
        /* From scratch on the same data and split, with the base's architecture. */
        const struct dp_arch *a = dp_model_arch(dp_inspector_model(base));
        struct dp_train_opts so = r.o;
        so.layer = a->layer;
        so.hidden = a->hidden;
        so.feat = a->feat;
        so.rule = a->rule;
        so.n_layers = a->n_layers;
        so.max_layers = a->max_layers;
        if (so.target == DP_TARGET_BASE) so.target = dp_target_of(base);
        if (!r.ps.tty) fprintf(stderr, "from scratch, for comparison:\n");
        st = dp_train(&r.ds, &so, &scratch, &sres, &err);
    }
    watch_stop(&r);
    if (st) { cli_fail(&err); goto done; }
    if (dp_inspector_save(r.insp, out, base, from, &err)) { cli_fail(&err); goto done; }
    const struct dp_train_result *res = &r.res;
    if (json) {
        print_run_head_json(&r, out, "base", from);
        print_run_json(stdout, "transfer", r.insp, res);
        if (scratch) {
            printf(", ");
            print_run_json(stdout, "scratch", scratch, &sres);
            printf(", \"speedup\": ");
            cmd_json_num(stdout, res->seconds > 0 ? sres.seconds / res->seconds : NAN);
        }
        printf("}\n");
    } else {
        printf("%s%s: transferred from %s (%s mode) to %s: %d epochs (best %d), %.3f s "
               "(embeddings %.3f s)\n", cancelled_note(res),
               out, from, dp_inspector_provenance(r.insp)->mode,
               r.ds.setting[0] ? r.ds.setting : dataset, res->epochs_run, res->best_epoch,
               res->seconds, res->embed_seconds);
        print_eval_table(stdout, dp_inspector_provenance(r.insp));
        if (scratch)
            printf("\nfrom scratch on the same split: %.3f s, %d epochs, mean test MAPE %.3g%% "
                   "(transfer: %.3g%%); transfer is %.1fx faster\n", sres.seconds, sres.epochs_run,
                   mean_finite(dp_inspector_provenance(scratch)->test.mape),
                   mean_finite(dp_inspector_provenance(r.insp)->test.mape),
                   res->seconds > 0 ? sres.seconds / res->seconds : NAN);
    }
    rc = 0;
done:
    dp_train_result_free(&sres);
    dp_inspector_free(scratch);
    dp_inspector_free(base);
    run_free(&r);
    return rc;
}

/* ---- inspector info | import-torch | import-json ---- */

static int inspector_info(struct cli *c) {
    bool json = cli_flag(c, "--json");
    const char *path = cli_positional(c, 0);
    if (!cli_check_unused(c)) return 2;
    if (!path) return cli_usage("inspector info", usage_inspector, "needs M.json");
    struct dp_inspector *insp = NULL;
    struct dp_error err = {0};
    if (dp_inspector_load(path, &insp, &err)) return cli_fail(&err);
    const struct dp_model *m = dp_inspector_model(insp);
    const struct dp_arch *a = dp_model_arch(m);
    const struct dp_provenance *p = dp_inspector_provenance(insp);
    size_t n_weights = 0;
    for (int i = 0; i < dp_model_n_params(m); i++) {
        struct dp_param q;
        dp_model_param(m, i, &q);
        n_weights += q.size;
    }
    if (json) {
        FILE *f = stdout;
        fprintf(f, "{\"file\": ");
        cmd_json_str(f, path);
        fprintf(f, ", \"setting\": ");
        cmd_json_str(f, dp_inspector_setting(insp));
        fprintf(f, ", \"architecture\": {\"layer\": ");
        cmd_json_str(f, dp_layer_name(a->layer));
        fprintf(f, ", \"hidden\": %d, \"n_feat\": %d, \"n_out\": %d, \"rule\": ", a->hidden, a->n_feat, a->n_out);
        cmd_json_str(f, dp_layer_rule_name(a->rule));
        fprintf(f, ", \"gru\": %s, \"features\": ", a->gru ? "true" : "false");
        cmd_json_str(f, dp_feat_name(a->feat));
        fprintf(f, ", \"readout\": \"set2set\"}, \"n_params\": %d, \"n_weights\": %zu, \"body_key\": ",
                dp_model_n_params(m), n_weights);
        cmd_json_str(f, dp_inspector_body_key(insp));
        fprintf(f, ", \"outputs\": [");
        for (int o = 0; o < DP_N_OUTPUTS; o++) {
            const struct dp_output_meta *om = dp_inspector_output(insp, o);
            fprintf(f, "%s{\"name\": ", o ? ", " : "");
            cmd_json_str(f, om->name);
            fprintf(f, ", \"unit\": ");
            cmd_json_str(f, om->unit);
            fprintf(f, ", \"scale\": ");
            cmd_json_num(f, om->scale);
            fprintf(f, ", \"transform\": ");
            cmd_json_str(f, dp_out_transform_name(om->transform));
            fprintf(f, ", \"offset\": ");
            cmd_json_num(f, om->offset);
            fprintf(f, ", \"span\": ");
            cmd_json_num(f, om->span);
            fputc('}', f);
        }
        fprintf(f, "], \"training\": {\"origin\": ");
        cmd_json_str(f, p->origin);
        fprintf(f, ", \"base\": ");
        cmd_json_str(f, p->base);
        fprintf(f, ", \"base_id\": ");
        cmd_json_str(f, p->base_id);
        fprintf(f, ", \"mode\": ");
        cmd_json_str(f, p->mode);
        fprintf(f, ", \"data\": ");
        cmd_json_str(f, p->data);
        fprintf(f, ", \"split\": ");
        cmd_json_str(f, p->split);
        fprintf(f, ", \"epochs\": %d, \"seconds\": ", p->epochs);
        cmd_json_num(f, p->seconds);
        fprintf(f, ", \"n_train\": %d, \"n_val\": %d, \"n_test\": %d, ", p->n_train, p->n_val, p->n_test);
        print_eval_json(f, "val", &p->val);
        fprintf(f, ", ");
        print_eval_json(f, "test", &p->test);
        fprintf(f, "}}\n");
    } else {
        printf("%s: inspector for setting %s\n", path, dp_inspector_setting(insp)[0] ? dp_inspector_setting(insp) : "(none)");
        printf("architecture: %s, hidden %d, %d features (%s), layers rule %s, GRU %s, Set2Set, MLP 3\n",
               dp_layer_name(a->layer), a->hidden, a->n_feat, dp_feat_name(a->feat),
               dp_layer_rule_name(a->rule), a->gru ? "yes" : "no");
        printf("parameters: %d tensors, %zu weights; body key %s\n", dp_model_n_params(m), n_weights,
               dp_inspector_body_key(insp));
        printf("origin: %s%s%s%s%s, mode %s, data %s, split %s, %d epochs, %.2f s, %d/%d/%d samples\n",
               p->origin, p->base[0] ? " from " : "", p->base, p->base_id[0] ? " / " : "", p->base_id,
               p->mode, p->data[0] ? p->data : "?", p->split[0] ? p->split : "-", p->epochs, p->seconds,
               p->n_train, p->n_val, p->n_test);
        printf("\n%-22s %6s %12s %9s %10s %10s\n", "output", "unit", "scale", "transform", "offset",
               "span");
        for (int o = 0; o < DP_N_OUTPUTS; o++) {
            const struct dp_output_meta *om = dp_inspector_output(insp, o);
            printf("%-22s %6s %12.6g %9s %10.4g %10.4g\n", om->name, om->unit, om->scale,
                   dp_out_transform_name(om->transform), om->offset, om->span);
        }
        if (p->n_val > 0 || p->n_test > 0) {
            printf("\n");
            print_eval_table(stdout, p);
        }
    }
    dp_inspector_free(insp);
    return 0;
}

static int inspector_import(struct cli *c, bool torch) {
    const char *cmd = torch ? "inspector import-torch" : "inspector import-json";
    const char *out = cli_value(c, "-o");
    if (!out) out = cli_value(c, "--out");
    const char *layer = cli_value(c, "--layer");
    const char *setting = cli_value(c, "--setting");
    if (c->bad) return 2;
    const char *in = cli_positional(c, 0);
    if (!cli_check_unused(c)) return 2;
    if (!in || !out) return cli_usage(cmd, usage_inspector, "needs an input file and -o M.json");
    struct dp_arch a;
    dp_arch_default(&a);
    if (layer && !torch) return cli_usage(cmd, usage_inspector, "--layer: the JSON names its architecture");
    if (layer && !dp_layer_parse(layer, &a.layer))
        return cli_usage(cmd, usage_inspector, "--layer: '%s' is not gcn, gin, gat or mpnn", layer);
    struct dp_inspector *insp = NULL;
    struct dp_error err = {0};
    if (torch) {
        if (dp_inspector_import_torch(in, &a, &insp, &err)) return cli_fail(&err);
    } else {
        struct dp_model *m = NULL;
        if (dp_model_load_torch_json_new(in, &m, &err)) return cli_fail(&err);
        if (dp_inspector_init(m, &insp, &err)) return cli_fail(&err);
        struct dp_provenance *prov = dp_inspector_provenance_mut(insp);
        snprintf(prov->origin, sizeof prov->origin, "imported");
    }
    if (setting && dp_inspector_set_setting(insp, setting)) {
        dp_inspector_free(insp);
        return cli_usage(cmd, usage_inspector, "--setting: id too long");
    }
    int rc = 0;
    if (dp_inspector_save(insp, out, NULL, NULL, &err)) rc = cli_fail(&err);
    else
        printf("%s: %s inspector imported from %s (scales 1: outputs are the normalised values)\n",
               out, dp_layer_name(dp_model_arch(dp_inspector_model(insp))->layer), in);
    dp_inspector_free(insp);
    return rc;
}

static int inspector_eval(struct cli *c) {
    bool json = cli_flag(c, "--json");
    const char *dataset = cli_value(c, "--dataset");
    if (c->bad) return 2;
    const char *path = cli_positional(c, 0);
    if (!cli_check_unused(c)) return 2;
    if (!path || !dataset) return cli_usage("inspector eval", usage_inspector, "needs M.json and --dataset D.json");
    struct dp_inspector *insp = NULL;
    struct dp_dataset ds;
    struct dp_error err = {0};
    int rc = 1, n = 0, *idx = NULL;
    dp_dataset_init(&ds, NULL);
    if (dp_inspector_load(path, &insp, &err) || dp_dataset_load_json(dataset, &ds, &err)) {
        cli_fail(&err);
        goto done;
    }
    if (!(idx = malloc(((size_t)ds.n_samples + 1) * sizeof *idx))) goto done;
    for (int i = 0; i < ds.n_samples; i++) {
        const struct dp_sample *s = &ds.samples[i];
        bool ok = s->grouped != NULL;
        for (int o = 0; ok && o < DP_N_OUTPUTS; o++) ok = isfinite(s->labels[o]);
        if (ok) idx[n++] = i;
    }
    if (n == 0) {
        dp_error_set(&err, DP_ERR_INVALID, "%s: no sample with a grouped graph and 12 labels", dataset);
        cli_fail(&err);
        goto done;
    }
    struct dp_provenance p;
    memset(&p, 0, sizeof p);
    double t0 = dp_clock_ms();
    if (dp_evaluate(insp, &ds, idx, n, &p.test, &err)) { cli_fail(&err); goto done; }
    double secs = (dp_clock_ms() - t0) / 1e3;
    if (json) {
        printf("{\"inspector\": ");
        cmd_json_str(stdout, path);
        printf(", \"dataset\": ");
        cmd_json_str(stdout, dataset);
        printf(", \"setting\": ");
        cmd_json_str(stdout, ds.setting);
        printf(", \"inspector_setting\": ");
        cmd_json_str(stdout, dp_inspector_setting(insp));
        printf(", \"n_samples\": %d, \"seconds\": ", n);
        cmd_json_num(stdout, secs);
        printf(", \"mape_floor\": %g, \"mape_mean\": ", DP_MAPE_FLOOR);
        cmd_json_num(stdout, mean_finite(p.test.mape));
        printf(", ");
        print_eval_json(stdout, "eval", &p.test);
        printf("}\n");
    } else {
        printf("%s on %s (%d samples, setting %s; inspector trained for %s), %.2f s\n", path, dataset,
               n, ds.setting, dp_inspector_setting(insp), secs);
        printf("%-22s %9s %11s %8s\n", "output", "MAPE%", "RMSE", "R2");
        for (int o = 0; o < DP_N_OUTPUTS; o++)
            printf("%-22s %9.3g %11.4g %8.3f\n", dp_output_names[o], p.test.mape[o], p.test.rmse[o],
                   p.test.r2[o]);
        printf("mean MAPE %.3g%% (MAPE over labels >= %g: ms, %%, MB/s; R2 = 1 - SSE / SS about "
               "the mean, nan for constant labels)\n", mean_finite(p.test.mape), DP_MAPE_FLOOR);
    }
    rc = 0;
done:
    free(idx);
    dp_dataset_free(&ds);
    dp_inspector_free(insp);
    return rc;
}

int cmd_inspector(int argc, char **argv) {
    if (argc < 1) return cli_usage("inspector", usage_inspector, "needs a subcommand");
    const char *sub = argv[0];
    struct cli c;
    char name[48];
    snprintf(name, sizeof name, "inspector %s", sub);
    if (!cli_init(&c, argc - 1, argv + 1, name)) return 1;
    int rc;
    if (!strcmp(sub, "info")) rc = inspector_info(&c);
    else if (!strcmp(sub, "import-torch")) rc = inspector_import(&c, true);
    else if (!strcmp(sub, "import-json")) rc = inspector_import(&c, false);
    else if (!strcmp(sub, "eval")) rc = inspector_eval(&c);
    else rc = cli_usage("inspector", usage_inspector, "unknown subcommand '%s'", sub);
    cli_done(&c);
    return rc;
}
