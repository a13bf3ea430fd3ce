/* cmd_train.c: `driple train`: an inspector from scratch on a dataset (recipe driple-c or the
 * paper's), with a progress bar; Ctrl-C keeps the best so far. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "train_run.h"
#include "dp/dataset.h"
#include "dp/inspector.h"
#include "dp/json_out.h"
#include "dp/train.h"

static const char usage_train[] =
    "driple train --dataset D.json -o M.json [--recipe driple-c|paper] [--layer gcn|gin|gat|mpnn]\n"
    "       [--hidden 64] [--epochs N] [--patience P] [--seed 1] [--features raw|log]\n"
    "       [--target max|range|log] [--split random|models] [--minibatch 32] [--lr L]\n"
    "       [--lr-decay F --lr-plateau E] [--weight-decay 1e-6] [--rule half|n|log2|fixed]\n"
    "       [--layers N] [--max-layers N] [--cost-features] [--restarts 1] [--json]\n"
    "  --cost-features: the network also reads each group's FLOPs, bytes and parameter bytes\n"
    "    (a dataset built with `driple dataset build --cost-features`).\n"
    "  --restarts K: train K initialisations on the one split (--seed) and keep the one with\n"
    "    the lowest mean validation MAPE (1 to 16; the test part never chooses).\n"
    "  --recipe driple-c (default): log features, at most 2 layers, log-normalised targets,\n"
    "    lr 0.01 halved after each 10 epochs without progress, 300 epochs, patience 40\n"
    "    (notes/accuracy.md).\n"
    "  --recipe paper: the published recipe (raw features, layers = max(1, N/2), targets =\n"
    "    label / training max, constant lr 0.003, 200 epochs, patience 20). Options after it\n"
    "    override.\n"
    "  --split models: hold out whole model families (every size variant of a zoo architecture\n"
    "    together: `driple zoo list --json` gives the family), not single models.\n"
    "  Errors: MAPE over labels >= 1 (ms, %, MB/s), RMSE in the output's unit, R2 = 1 - SSE/SS.";

static const struct cli_opt train_opts[] = {
    {"--dataset", "D.json", NULL, 0, 0, "the dataset trained on (needed)", NULL},
    {"-o", "M.json", NULL, 0, 0, "the inspector written (needed)", NULL},
    {"--out", "M.json", NULL, 0, 0, "the same as -o", NULL},
    {"--layer", "gcn|gin|gat|mpnn", "gcn", 0, 0, "the graph layer", NULL},
    {"--features", "raw|log", "log (paper: raw)", 0, 0, "the features' transform", NULL},
    {"--rule", "half|n|log2|fixed", "half", 0, 0, "layers from the graph's size", NULL},
    {"--layers", "N", "the rule's", 1, 100000, "layers (with --rule fixed)", NULL},
    {"--max-layers", "N", "2 (paper: no limit, 0)", 0, 100000, "layers at most", NULL},
    {"--restarts", "K", "1", 1, DP_TRAIN_MAX_RESTARTS,
     "initialisations trained, the best on validation kept", NULL},
    {"--cost-features", NULL, NULL, 0, 0, "also read each group's FLOPs and bytes", NULL},
    {"--json", NULL, NULL, 0, 0, "print the result as JSON", NULL},
    CLI_MORE(run_train_table),
    CLI_END,
};
const struct cli_spec cmd_train_spec = {
    "train", "a per-setting inspector trained from scratch (train --sweep: the setting-aware one)",
    usage_train, train_opts, NULL};

int cmd_train(int argc, char **argv) {
    for (int i = 0; i < argc; i++) /* the setting-aware inspector: cmd_sa.c */
        if (!strncmp(argv[i], "--sweep", 7) && (!argv[i][7] || argv[i][7] == '='))
            return cmd_train_sa(argc, argv);
    struct run_cmd r;
    if (!run_init(&r, argc, argv, &cmd_train_spec)) return r.c.rc;
    int rc = 2;
    if (!run_recipe_opts(&r)) goto done;
    const char *dataset = cli_value(&r.c, "--dataset");
    const char *out = cli_value(&r.c, "-o");
    const char *layer = cli_value(&r.c, "--layer");
    const char *feat = cli_value(&r.c, "--features");
    const char *rule = cli_value(&r.c, "--rule");
    int64_t n_layers = 0, max_layers = r.o.max_layers, restarts = r.o.restarts;
    bool json = cli_flag(&r.c, "--json");
    if (cli_flag(&r.c, "--cost-features")) r.o.n_feat = DP_N_FEATURES_MAX;
    if (!out) out = cli_value(&r.c, "--out");
    if (!cli_int(&r.c, "--layers", 1, 100000, &n_layers) ||
        !cli_int(&r.c, "--max-layers", 0, 100000, &max_layers) ||
        !cli_int(&r.c, "--restarts", 1, DP_TRAIN_MAX_RESTARTS, &restarts))
        goto done;
    r.o.restarts = (int)restarts;
    r.o.n_layers = (int)n_layers;
    r.o.max_layers = (int)max_layers;
    if (rule && !dp_layer_rule_parse(rule, &r.o.rule)) {
        rc = cli_usage("train", usage_train, "--rule: '%s' is not half, n, log2 or fixed", rule);
        goto done;
    }
    if (n_layers > 0 && !rule) r.o.rule = DP_RULE_FIXED;
    if (!run_train_opts(&r)) goto done;
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
    run_watch_start(&r);
    enum dp_status st = dp_train(&r.ds, &r.o, &r.insp, &r.res, &err);
    run_watch_stop(&r);
    if (st) { cli_fail(&err); goto done; }
    if (dp_inspector_save(r.insp, out, NULL, NULL, &err)) { cli_fail(&err); goto done; }
    const struct dp_train_opts *o = &r.o;
    if (json) {
        struct dp_jw *w = run_jw_head(&r, out, "dataset", dataset);
        dp_jw_str(w, "layer", dp_layer_name(o->layer));
        dp_jw_str(w, "features", dp_feat_name(o->feat));
        dp_jw_int(w, "n_feat", o->n_feat);
        dp_jw_str(w, "recipe", dp_recipe_name(r.recipe));
        dp_jw_str(w, "target", dp_target_name(o->target));
        dp_jw_str(w, "split", dp_split_name(o->split));
        dp_jw_int(w, "kept_restart", r.res.kept + 1);
        dp_jw_array(w, "restarts");
        for (int k = 0; k < r.res.n_restarts; k++) {
            const struct dp_train_restart *t = &r.res.restart[k];
            dp_jw_object(w, NULL);
            dp_jw_int(w, "init", k + 1);
            dp_jw_int(w, "epochs", t->epochs_run);
            dp_jw_int(w, "best_epoch", t->best_epoch);
            dp_jw_num(w, "val_mape_mean", t->val_mape);
            dp_jw_num(w, "test_mape_mean", t->test_mape);
            dp_jw_end(w);
        }
        dp_jw_end(w);
        run_jw_result(w, "scratch", r.insp, &r.res);
        rc = cmd_json_emit(w);
        goto done;
    }
    printf("%s%s: %s (recipe %s, %s features, %s targets) on %s (%s split, %d/%d/%d samples, "
           "%s labels), %d epochs (best %d), %.2f s\n",
           run_cancelled_note(&r.res), out, dp_layer_name(o->layer), dp_recipe_name(r.recipe),
           dp_feat_name(o->feat), dp_target_name(o->target),
           r.ds.setting[0] ? r.ds.setting : dataset, dp_split_name(o->split),
           r.res.split.n_train, r.res.split.n_val, r.res.split.n_test,
           dp_dataset_data_kind(&r.ds), r.res.epochs_run, r.res.best_epoch, r.res.seconds);
    if (r.res.n_restarts > 1)
        for (int k = 0; k < r.res.n_restarts; k++)
            printf("init %d: %d epochs (best %d), mean MAPE val %.2f%% test %.2f%%%s\n", k + 1,
                   r.res.restart[k].epochs_run,
                   r.res.restart[k].best_epoch, r.res.restart[k].val_mape,
                   r.res.restart[k].test_mape, k == r.res.kept ? " (kept: lowest val)" : "");
    run_print_eval(stdout, dp_inspector_provenance(r.insp));
    rc = 0;
done:
    run_free(&r);
    return rc;
}
