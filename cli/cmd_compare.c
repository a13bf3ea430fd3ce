/* cmd_compare.c: `driple compare`: one graph through every setting's inspector side by side,
 * one GNN pass per distinct body (each inspector then runs only its MLP head). */
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
#include "dp/inspector.h"
#include "dp/json_out.h"
#include "dp/metrics.h"
#include "dp/settings.h"

static const char *const usage_compare =
    "driple compare GRAPH|--grouped FILE [--settings FILE] [--batch N] [--exported-batch N]\n"
    "       [--groups K] [--seed S] [--weights FILE] [--json]\n"
    "       [--setting ID | --gpu NAME " CMD_CLUSTER_USAGE "\n"
    "       [--gpus FILE]]   (one more row: a setting not in the list, with its inspector found\n"
    "       as predict finds it)";

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
    struct dp_jw *w = NULL;
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
    const char *file = settings_file ? settings_file : cmd_default_settings(sbuf, sizeof sbuf);
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
    if ((rc = cmd_load_grouped(graph, grouped, &io, batch, groups, seed, weights, "compare",
                         usage_compare, &g, &unknown, &params)))
        goto done;
    rc = 1;
    dp_blas_threads(1);
    if (!(cache = calloc((size_t)n_rows + 1, sizeof *cache)) || (json && !(w = dp_jw_new()))) {
        dp_error_set(&err, DP_ERR_NOMEM, "compare: out of memory");
        cli_fail(&err);
        goto done;
    }
    double t0 = dp_clock_ms();
    int n_ok = 0, n_gnn = 0;
    if (json) {
        dp_jw_str(w, "graph", g->graph);
        if (g->batch > 0) dp_jw_int(w, "batch", g->batch);
        else dp_jw_null(w, "batch");
        dp_jw_str(w, "settings_file", file);
        dp_jw_array(w, "settings");
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
        double m[DP_N_OUTPUTS], d[DP_N_DERIVED];
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
                                 s->inspector, dp_outputs[o].name);
                        why = whybuf;
                    }
                }
                n_ok += !why;
            }
        }
        struct dp_derive_in facts;
        dp_derive_in_init(&facts);
        facts.batch = g->batch;
        facts.workers = s->workers;
        facts.params = params;
        if (!why) dp_derive(m, &facts, d);
        if (json) {
            dp_jw_object(w, NULL);
            dp_jw_str(w, "id", s->id);
            dp_jw_str(w, "gpu", s->gpu);
            dp_jw_int(w, "workers", s->workers);
            dp_jw_int(w, "ps", s->ps);
            dp_jw_str(w, "inspector", s->inspector[0] ? s->inspector : NULL);
            if (why) {
                dp_jw_str(w, "error", why);
                dp_jw_null(w, "metrics");
            } else {
                dp_jw_str(w, "data", dp_inspector_provenance(insp)->data);
                dp_jw_outputs(w, "metrics", m);
                cmd_jw_raw(w, "raw", raw);
                dp_jw_derived(w, "derived", d, &facts);
            }
            dp_jw_end(w);
        } else if (why) {
            printf("%-28s %10s %12s %9s %9s %10s %10s  (%s)\n", s->id, "-", "-", "-", "-", "-", "-", why);
        } else {
            printf("%-28s %10.4g %12.4g %9.4g %9.4g %10.4g %10.4g  %s\n", s->id,
                   d[DP_D_ITERATION_MS], d[DP_D_THROUGHPUT], m[DP_OUT_GPU_UTIL_ACTIVE],
                   m[DP_OUT_GPU_UTIL_PEAK], m[DP_OUT_NET_RX_PEAK], m[DP_OUT_NET_TX_PEAK],
                   s->inspector);
        }
        dp_inspector_free(insp);
    }
    double ms = dp_clock_ms() - t0;
    double net_mb = 2.0 * params * 4.0 / 1e6;
    if (json) {
        dp_jw_end(w);
        dp_jw_int(w, "n_predicted", n_ok);
        dp_jw_int(w, "gnn_passes", n_gnn);
        dp_jw_num(w, "ms", ms);
        dp_jw_num(w, "parameters", params);
        dp_jw_num(w, "net_mb_per_iter", net_mb);
        dp_jw_formulas(w, "formulas");
        rc = cmd_json_emit(w);
        w = NULL;
        if (rc) goto done;
    } else {
        printf("\n%d of %d settings predicted with %d GNN pass%s (shared bodies) in %.1f ms.\n"
               "GPU act = gpu_util.active (ms), GPU peak = gpu_util.peak (%%); "
               "iter ms = gpu_util.idle + gpu_util.active; samples/s = batch x workers x 1000 / iter ms.\n",
               n_ok, n_rows, n_gnn, n_gnn == 1 ? "" : "es", ms);
        if (isfinite(params))
            printf("net per iter = 2 x %.0f parameters x 4 B = %.4g MB per worker in every setting "
                   "(every variable pulled, every gradient pushed, fp32 on the wire).\n",
                   params, net_mb);
    }
    rc = 0;
    if (n_ok == 0) { /* a table of dashes is no answer: say so in the exit status */
        dp_error_set(&err, DP_ERR_NOT_FOUND, "%s: no setting could be predicted (see the reasons above)",
                     file);
        rc = cli_fail(&err);
    }
done:
    dp_jw_free(w);
    for (int k = 0; k < n_cache; k++) free(cache[k].emb);
    free(cache);
    free(unknown);
    dp_settings_free(list);
    dp_grouped_free(g);
    cli_done(&c);
    return rc;
}
