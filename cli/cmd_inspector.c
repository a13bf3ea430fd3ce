/* cmd_inspector.c: `driple inspector info | import-torch | import-json | eval`: inspector files,
 * the published checkpoints, and an inspector's (per-setting or setting-aware) error on a
 * dataset. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "train_run.h"
#include "dp/clock.h"
#include "dp/dataset.h"
#include "dp/inspector.h"
#include "dp/json_out.h"
#include "dp/metrics.h"
#include "dp/sa.h"
#include "dp/train.h"

static const char usage_inspector[] =
    "driple inspector info M.json [--json]\n"
    "       inspector import-torch FILE.pkl [--layer gcn] [--setting ID] -o M.json\n"
    "       inspector import-json W.json [--setting ID] -o M.json\n"
    "       inspector eval M.json --dataset D.json [--gpus-file FILE] [--json]\n"
    "         (MAPE/RMSE/R2 on every trainable sample; a setting-aware M.json: MAPE/R2 and the\n"
    "         80% interval's coverage of its 14 outputs on the dataset's setting)";

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
        struct dp_jw *w = dp_jw_new();
        dp_jw_str(w, "file", path);
        dp_jw_str(w, "setting", dp_inspector_setting(insp));
        dp_jw_object(w, "architecture");
        dp_jw_str(w, "layer", dp_layer_name(a->layer));
        dp_jw_int(w, "hidden", a->hidden);
        dp_jw_int(w, "n_feat", a->n_feat);
        dp_jw_int(w, "n_out", a->n_out);
        dp_jw_str(w, "rule", dp_layer_rule_name(a->rule));
        dp_jw_bool(w, "gru", a->gru);
        dp_jw_str(w, "features", dp_feat_name(a->feat));
        dp_jw_str(w, "readout", "set2set");
        dp_jw_end(w);
        dp_jw_int(w, "n_params", dp_model_n_params(m));
        dp_jw_int(w, "n_weights", (int64_t)n_weights);
        dp_jw_str(w, "body_key", dp_inspector_body_key(insp));
        dp_jw_array(w, "outputs");
        for (int o = 0; o < DP_N_OUTPUTS; o++) {
            const struct dp_output_meta *om = dp_inspector_output(insp, o);
            dp_jw_object(w, NULL);
            dp_jw_str(w, "name", om->name);
            dp_jw_str(w, "unit", om->unit);
            dp_jw_num(w, "scale", om->scale);
            dp_jw_str(w, "transform", dp_out_transform_name(om->transform));
            dp_jw_num(w, "offset", om->offset);
            dp_jw_num(w, "span", om->span);
            dp_jw_end(w);
        }
        dp_jw_end(w);
        dp_jw_object(w, "training");
        dp_jw_str(w, "origin", p->origin);
        dp_jw_str(w, "base", p->base);
        dp_jw_str(w, "base_id", p->base_id);
        dp_jw_str(w, "mode", p->mode);
        dp_jw_str(w, "data", p->data);
        dp_jw_str(w, "split", p->split);
        dp_jw_int(w, "epochs", p->epochs);
        dp_jw_num(w, "seconds", p->seconds);
        dp_jw_int(w, "n_train", p->n_train);
        dp_jw_int(w, "n_val", p->n_val);
        dp_jw_int(w, "n_test", p->n_test);
        run_jw_eval(w, "val", &p->val);
        run_jw_eval(w, "test", &p->test);
        dp_jw_end(w);
        dp_inspector_free(insp);
        return cmd_json_emit(w);
    }
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
        run_print_eval(stdout, p);
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

/* A setting-aware inspector on a dataset of one setting: 14 outputs and the interval. */
static int sa_eval(const char *path, const char *dataset, const char *gpus_file, bool json) {
    struct dp_gpu_catalog *cat = NULL;
    struct dp_sa_inspector *sa = NULL;
    struct dp_dataset ds;
    struct dp_sa_eval e;
    struct dp_error err = {0};
    int rc = 0;
    dp_dataset_init(&ds, NULL);
    if (dp_gpu_catalog_load_default(gpus_file, &cat, &err) || dp_sa_load(path, &sa, &err) ||
        dp_dataset_load_json(dataset, &ds, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (dp_sa_evaluate(sa, &ds, cat, NULL, &e, &err)) {
        dp_error_prefix(&err, dataset);
        rc = cli_fail(&err);
        goto done;
    }
    const struct dp_sa_tuning *tu = &dp_sa_provenance(sa)->tuned;
    if (json) {
        struct dp_jw *w = dp_jw_new();
        dp_jw_str(w, "inspector", path);
        dp_jw_str(w, "kind", "setting-aware");
        dp_jw_str(w, "tuned_for", tu->setting);
        dp_jw_str(w, "dataset", dataset);
        dp_jw_str(w, "setting", e.held);
        dp_jw_int(w, "n_samples", e.n_rows);
        run_jw_sa_outputs(w, &e);
        dp_jw_num(w, "mape_mean", dp_mape_mean(e.mape));
        rc = cmd_json_emit(w);
        goto done;
    }
    printf("%s (setting-aware%s%s) on %s (%d samples, setting %s)\n", path,
           tu->setting[0] ? ", fine-tuned for " : "", tu->setting, dataset, e.n_rows, e.held);
    printf("%-22s %9s %8s %12s\n", "output", "MAPE%", "R2", "in 80% %");
    for (int k = 0; k < DP_SA_N_OUT; k++)
        printf("%-22s %9.3g %8.3f %12.1f\n", dp_sa_output_name(k), e.mape[k], e.r2[k],
               e.coverage[k]);
    printf("12 metrics mean MAPE %.3g%% (labels >= %g: ms, %%, MB/s); a label a sample lacks is "
           "left out\n", dp_mape_mean(e.mape), DP_MAPE_FLOOR);
done:
    dp_sa_free(sa);
    dp_dataset_free(&ds);
    dp_gpu_catalog_free(cat);
    return rc;
}

static int inspector_eval(struct cli *c) {
    bool json = cli_flag(c, "--json");
    const char *dataset = cli_value(c, "--dataset"), *gpus_file = cli_value(c, "--gpus-file");
    if (c->bad) return 2;
    const char *path = cli_positional(c, 0);
    if (!cli_check_unused(c)) return 2;
    if (!path || !dataset) return cli_usage("inspector eval", usage_inspector, "needs M.json and --dataset D.json");
    if (dp_sa_file(path)) return sa_eval(path, dataset, gpus_file, json);
    if (gpus_file)
        return cli_usage("inspector eval", usage_inspector, "--gpus-file: only for a "
                         "setting-aware inspector");
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
        struct dp_jw *w = dp_jw_new();
        dp_jw_str(w, "inspector", path);
        dp_jw_str(w, "dataset", dataset);
        dp_jw_str(w, "setting", ds.setting);
        dp_jw_str(w, "inspector_setting", dp_inspector_setting(insp));
        dp_jw_int(w, "n_samples", n);
        dp_jw_fixed(w, "seconds", secs, 6);
        dp_jw_num(w, "mape_floor", DP_MAPE_FLOOR);
        dp_jw_num(w, "mape_mean", dp_mape_mean(p.test.mape));
        run_jw_eval(w, "eval", &p.test);
        rc = cmd_json_emit(w);
        goto done;
    }
    printf("%s on %s (%d samples, setting %s; inspector trained for %s), %.2f s\n", path, dataset,
           n, ds.setting, dp_inspector_setting(insp), secs);
    printf("%-22s %9s %11s %8s\n", "output", "MAPE%", "RMSE", "R2");
    for (int o = 0; o < DP_N_OUTPUTS; o++)
        printf("%-22s %9.3g %11.4g %8.3f\n", dp_outputs[o].name, p.test.mape[o], p.test.rmse[o],
               p.test.r2[o]);
    printf("mean MAPE %.3g%% (MAPE over labels >= %g: ms, %%, MB/s; R2 = 1 - SSE / SS about "
           "the mean, nan for constant labels)\n", dp_mape_mean(p.test.mape), DP_MAPE_FLOOR);
    rc = 0;
done:
    free(idx);
    dp_dataset_free(&ds);
    dp_inspector_free(insp);
    return rc;
}

static const struct cli_opt info_opts[] = {
    {"--json", NULL, NULL, 0, 0, "print it as JSON", NULL},
    CLI_END,
};
static const struct cli_opt import_opts[] = {
    {"-o", "M.json", NULL, 0, 0, "the inspector written (needed)", NULL},
    {"--out", "M.json", NULL, 0, 0, "the same as -o", NULL},
    {"--layer", "gcn|gin|gat|mpnn", "gcn", 0, 0, "the checkpoint's graph layer", NULL},
    {"--setting", "ID", NULL, 0, 0, "the setting it was trained for", NULL},
    CLI_END,
};
static const struct cli_opt eval_opts[] = {
    {"--dataset", "D.json", NULL, 0, 0, "the dataset evaluated on (needed)", NULL},
    {"--gpus-file", "FILE", "assets/gpus.json", 0, 0,
     "the GPU catalog (a setting-aware inspector only)", NULL},
    {"--json", NULL, NULL, 0, 0, "print the errors as JSON", NULL},
    CLI_END,
};
const struct cli_spec cmd_inspector_info_spec = {
    "inspector info", "an inspector file: its setting, architecture, provenance and errors",
    usage_inspector, info_opts, NULL};
const struct cli_spec cmd_inspector_import_torch_spec = {
    "inspector import-torch", "a published PyTorch checkpoint as an inspector file",
    usage_inspector, import_opts, NULL};
const struct cli_spec cmd_inspector_import_json_spec = {
    "inspector import-json", "weights exported as JSON as an inspector file", usage_inspector,
    import_opts, NULL};
const struct cli_spec cmd_inspector_eval_spec = {
    "inspector eval", "an inspector's errors (MAPE, RMSE, R2) on a dataset", usage_inspector,
    eval_opts, NULL};

int cmd_inspector(int argc, char **argv) {
    if (argc < 1) return cli_usage("inspector", usage_inspector, "needs a subcommand");
    const char *sub = argv[0];
    const struct cli_spec *spec = !strcmp(sub, "info")           ? &cmd_inspector_info_spec
                                  : !strcmp(sub, "import-torch") ? &cmd_inspector_import_torch_spec
                                  : !strcmp(sub, "import-json")  ? &cmd_inspector_import_json_spec
                                  : !strcmp(sub, "eval")         ? &cmd_inspector_eval_spec
                                                                 : NULL;
    if (!spec) return cli_usage("inspector", usage_inspector, "unknown subcommand '%s'", sub);
    struct cli c;
    if (!cli_init(&c, argc - 1, argv + 1, spec)) return c.rc;
    int rc = spec == &cmd_inspector_info_spec     ? inspector_info(&c)
             : spec == &cmd_inspector_eval_spec   ? inspector_eval(&c)
                                                  : inspector_import(&c, spec == &cmd_inspector_import_torch_spec);
    cli_done(&c);
    return rc;
}
