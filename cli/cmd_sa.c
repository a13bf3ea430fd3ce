/* cmd_sa.c: `driple train --sweep SWEEP.json --body BASE.json -o SA.json`: trains the
 * setting-aware inspector (dp/sa.h) on a sweep (dp/sweep.h) over a per-setting inspector's
 * frozen GNN body, and reports its error on the split's test rows (per output MAPE, R^2 and the
 * coverage of the 80% interval); `driple transfer --from SA.json --dataset D.json`: fine-tunes
 * one for a setting from its samples (dp_sa_tune). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "dp/json_out.h"
#include "dp/train.h"
#include "train_run.h"

#define TRAIN_SA_USAGE                                                                          \
    "driple train --sweep SWEEP.json --body BASE.json -o SA.json\n"                               \
    "       [--split random|families|gpus|networks] [--test-held a,b] [--val-held c,d]\n"         \
    "       [--members K] [--hidden1 N] [--hidden2 N] [--epochs N] [--patience N]\n"              \
    "       [--minibatch N] [--lr X] [--weight-decay X] [--plain-loss] [--pair-weight W]\n"       \
    "       [--seed S] [--gpus-file FILE] [--json]\n"                                          \
    "  the setting-aware inspector: the body's GNN embedding (frozen; BASE.json is a per-setting\n"\
    "  inspector) and the graph's profile and the setting feed an ensemble of K MLP heads (5)\n"  \
    "  predicting the 12 metrics, iteration_ms and memory_gb. --split holds out random graphs,\n" \
    "  whole zoo families, or the rows of the GPUs / networks of --test-held (validated on\n"     \
    "  --val-held). The loss weighs each output by its labels' spread (log units) with a\n"    \
    "  Huber threshold; --plain-loss: the squared error of every output alike. --pair-weight\n"  \
    "  (0.3; 0: none) adds the error of how the iteration time moves between batch sizes of one\n"\
    "  graph on one setting, so a larger batch is not predicted slower per sample where the\n"    \
    "  simulator is faster. Labels are those of the sweep (simulated)."

static void on_epoch(int member, const struct dp_train_progress *p, void *ud) {
    (void)ud;
    fprintf(stderr, "\rmember %d: epoch %d/%d, train loss %.4f, val loss %.4f (best %.4f at %d)  ",
            member + 1, p->epoch, p->epochs, p->train_loss, p->val_loss, p->best_val_loss,
            p->best_epoch);
}

static double median_of(const double *v, int n) {
    double w[DP_SA_N_OUT];
    int k = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) w[k++] = v[i];
    if (!k) return NAN;
    qsort(w, (size_t)k, sizeof *w, cmd_cmp_double);
    return k % 2 ? w[k / 2] : (w[k / 2 - 1] + w[k / 2]) / 2;
}

/* The optimiser's options both commands take (--epochs --patience --minibatch --seed --lr
 * --weight-decay), read over the defaults in the fields given; a bad value sets c->bad. */
static void optim_options(struct cli *c, int *epochs, int *patience, int *batch, uint64_t *seed,
                          float *lr, float *wd) {
    int64_t e = *epochs, p = *patience, b = *batch, s = (int64_t)*seed;
    double l = *lr, w = *wd;
    cli_int(c, "--epochs", 1, 1000000, &e);
    cli_int(c, "--patience", 0, 1000000, &p);
    cli_int(c, "--minibatch", 1, 100000, &b);
    cli_int(c, "--seed", 0, INT64_MAX, &s);
    cli_double(c, "--lr", 1e-9, 10, &l);
    cli_double(c, "--weight-decay", 0, 10, &w);
    *epochs = (int)e;
    *patience = (int)p;
    *batch = (int)b;
    *seed = (uint64_t)s;
    *lr = (float)l;
    *wd = (float)w;
}

/* The six rows optim_options reads are in both tables, each with its command's defaults. */
static const struct cli_opt train_sa_opts[] = {
    {"--sweep", "SWEEP.json", NULL, 0, 0, "the sweep trained on (needed)", NULL},
    {"--body", "BASE.json", NULL, 0, 0, "the per-setting inspector whose embedding is read",
     NULL},
    {"-o", "SA.json", NULL, 0, 0, "the setting-aware inspector written (needed)", NULL},
    {"--split", "random|families|gpus|networks", "random", 0, 0, "what the test part holds out",
     NULL},
    {"--test-held", "a,b", NULL, 0, 0, "the held-out families, GPUs or networks (test)", NULL},
    {"--val-held", "c,d", NULL, 0, 0, "the same for validation", NULL},
    {"--members", "K", "5", 1, DP_SA_MAX_MEMBERS, "ensemble members", NULL},
    {"--hidden1", "N", "256", 1, 4096, "the first hidden layer's units", NULL},
    {"--hidden2", "N", "128", 1, 4096, "the second hidden layer's units", NULL},
    {"--pair-weight", "W", "0.3", 0, 1000, "the pairwise ranking loss's weight", NULL},
    {"--plain-loss", NULL, NULL, 0, 0, "no pairwise loss", NULL},
    {"--epochs", "N", "150", 1, 1000000, "epochs at most", NULL},
    {"--patience", "N", "20", 0, 1000000, "epochs without progress before stopping", NULL},
    {"--minibatch", "N", "256", 1, 100000, "rows per step", NULL},
    {"--seed", "S", "1", 0, (double)INT64_MAX, "the seed", NULL},
    {"--lr", "X", "0.003", 1e-9, 10, "the learning rate", NULL},
    {"--weight-decay", "X", "1e-5", 0, 10, "Adam's weight decay", NULL},
    {"--gpus-file", "FILE", "assets/gpus.json", 0, 0, "the GPU catalog", NULL},
    {"--json", NULL, NULL, 0, 0, "print the result as JSON", NULL},
    CLI_END,
};
const struct cli_spec cmd_train_sa_spec = {
    "train --sweep", "the setting-aware inspector, trained on a sweep", TRAIN_SA_USAGE,
    train_sa_opts, NULL};

int cmd_train_sa(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_train_sa_spec)) return c.rc;
    struct dp_sa_train_opts o;
    dp_sa_train_opts_default(&o);
    const char *sweep = cli_value(&c, "--sweep"), *body_path = cli_value(&c, "--body");
    const char *out = cli_value(&c, "-o"), *split = cli_value(&c, "--split");
    const char *gpus_file = cli_value(&c, "--gpus-file");
    o.test_held = cli_value(&c, "--test-held");
    o.val_held = cli_value(&c, "--val-held");
    bool json = cli_flag(&c, "--json");
    o.plain_loss = cli_flag(&c, "--plain-loss");
    int64_t members = o.arch.members, h1 = o.arch.hidden1, h2 = o.arch.hidden2;
    cli_int(&c, "--members", 1, DP_SA_MAX_MEMBERS, &members);
    cli_int(&c, "--hidden1", 1, 4096, &h1);
    cli_int(&c, "--hidden2", 1, 4096, &h2);
    cli_double(&c, "--pair-weight", 0, 1000, &o.pair_weight);
    optim_options(&c, &o.epochs, &o.patience, &o.batch, &o.seed, &o.lr, &o.weight_decay);
    int rc = 0;
    if (c.bad || !cli_check_unused(&c)) {
        rc = cli_usage("train", TRAIN_SA_USAGE, "bad arguments");
        goto done;
    }
    if (!sweep || !body_path || !out) {
        rc = cli_usage("train", TRAIN_SA_USAGE, "missing %s",
                       !sweep ? "--sweep FILE" : !body_path ? "--body FILE" : "-o FILE");
        goto done;
    }
    if (split && !dp_sa_split_parse(split, &o.split)) {
        rc = cli_usage("train", TRAIN_SA_USAGE, "--split: '%s' is not random, families, gpus or "
                       "networks", split);
        goto done;
    }
    o.arch = (struct dp_sa_arch){(int)h1, (int)h2, (int)members};
    if (!json && isatty(2)) o.progress = on_epoch;
    struct dp_gpu_catalog *cat = NULL;
    struct dp_inspector *body = NULL;
    struct dp_sa_inspector *sa = NULL;
    struct dp_sweep sw;
    memset(&sw, 0, sizeof sw);
    struct dp_error err = {0};
    if (dp_gpu_catalog_load_default(gpus_file, &cat, &err) ||
        dp_sweep_load(sweep, cat, &sw, &err) || dp_inspector_load(body_path, &body, &err)) {
        rc = cli_fail(&err);
        goto free_all;
    }
    o.cancel = cli_cancel_watch();
    enum dp_status st = dp_sa_train(&sw, cat, body, &o, &sa, &err);
    cli_cancel_unwatch();
    if (o.progress) fputc('\n', stderr);
    if (st || dp_sa_save(sa, out, body_path, &err)) {
        rc = cli_fail(&err);
        goto free_all;
    }
    const struct dp_sa_provenance *p = dp_sa_provenance(sa);
    const struct dp_sa_eval *e = &p->evals[0];
    if (json) {
        struct dp_jw *w = dp_jw_new();
        dp_jw_str(w, "inspector", out);
        dp_jw_str(w, "sweep", sweep);
        dp_jw_str(w, "data", p->data);
        dp_jw_str(w, "split", e->name);
        dp_jw_str(w, "held", e->held);
        dp_jw_num(w, "seconds", p->seconds);
        dp_jw_int(w, "epochs", p->epochs);
        dp_jw_int(w, "n_train", p->n_train);
        dp_jw_int(w, "n_val", p->n_val);
        dp_jw_int(w, "n_test", p->n_test);
        run_jw_sa_outputs(w, e);
        dp_jw_num(w, "test_mape_mean", dp_mape_mean(e->mape));
        dp_jw_num(w, "test_mape_median", median_of(e->mape, DP_N_OUTPUTS));
        dp_jw_num(w, "coverage_median", median_of(e->coverage, DP_SA_N_OUT));
        rc = cmd_json_emit(w);
    } else {
        printf("%s: setting-aware inspector, %d members, %s split%s%s, %d/%d/%d rows (train/val/"
               "test), %.1f s, labels %s\n", out, o.arch.members, e->name, *e->held ? " holding out " : "",
               e->held, p->n_train, p->n_val, p->n_test, p->seconds, p->data);
        printf("%-22s %9s %7s %9s\n", "output", "MAPE %", "R^2", "in 80% %");
        for (int k = 0; k < DP_SA_N_OUT; k++)
            printf("%-22s %9.1f %7.3f %9.1f\n", dp_sa_output_name(k), e->mape[k], e->r2[k],
                   e->coverage[k]);
        printf("12 metrics: mean MAPE %.1f%%, median %.1f%%; iteration %.1f%%; memory %.1f%%; "
               "median coverage of the 80%% interval %.1f%%\n",
               dp_mape_mean(e->mape), median_of(e->mape, DP_N_OUTPUTS),
               e->mape[DP_SA_ITERATION], e->mape[DP_SA_MEMORY],
               median_of(e->coverage, DP_SA_N_OUT));
    }
free_all:
    dp_sa_free(sa);
    dp_sweep_free(&sw);
    dp_gpu_catalog_free(cat);
done:
    cli_done(&c);
    return rc;
}

/* ---- driple transfer --from SA.json: fine-tuned for one setting ---- */

#define TRANSFER_SA_USAGE                                                                       \
    "driple transfer --from SA.json --dataset D.json -o M.json [--setting ID]\n"                  \
    "       [--epochs 300] [--patience 30] [--minibatch 16] [--lr 0.001] [--weight-decay 1e-5]\n" \
    "       [--val-frac 0.3] [--seed 1] [--gpus-file FILE] [--json]\n"                             \
    "  fine-tunes a setting-aware inspector for one setting (the dataset's; --setting, when\n"    \
    "  given, must name the same) from its samples (`driple record` traces added with `driple\n" \
    "  dataset add`, or simulated: `driple dataset build` or `extract`): every ensemble\n"     \
    "  member's head learns, the body and the normalisation stay, early stopping on a held-out\n"\
    "  share (--val-frac) that then recalibrates the 80% interval. M.json is a setting-aware\n" \
    "  inspector: predict, compare and explore read it with --setting-aware M.json."

static void print_eval_pair(const struct dp_sa_eval *b, const struct dp_sa_eval *a) {
    printf("%-22s %12s %12s %14s %14s\n", "output", "base MAPE %", "tuned MAPE %", "base in 80% %",
           "tuned in 80% %");
    for (int k = 0; k < DP_SA_N_OUT; k++)
        printf("%-22s %12.1f %12.1f %14.1f %14.1f\n", dp_sa_output_name(k), b->mape[k], a->mape[k],
               b->coverage[k], a->coverage[k]);
    printf("12 metrics mean MAPE %.1f%% -> %.1f%%; iteration %.1f%% -> %.1f%%; memory %.1f%% -> "
           "%.1f%%\n", dp_mape_mean(b->mape), dp_mape_mean(a->mape), b->mape[DP_SA_ITERATION],
           a->mape[DP_SA_ITERATION], b->mape[DP_SA_MEMORY], a->mape[DP_SA_MEMORY]);
}

static void jw_sa_eval(struct dp_jw *w, const char *key, const struct dp_sa_eval *e) {
    dp_jw_object(w, key);
    dp_jw_int(w, "n", e->n_rows);
    run_jw_sa_outputs(w, e);
    dp_jw_num(w, "mape_mean", dp_mape_mean(e->mape));
    dp_jw_end(w);
}

static const struct cli_opt transfer_sa_opts[] = {
    {"--from", "SA.json", NULL, 0, 0, "the setting-aware inspector (needed)", NULL},
    {"--dataset", "D.json", NULL, 0, 0, "the setting's samples (needed)", NULL},
    {"-o", "M.json", NULL, 0, 0, "the fine-tuned inspector written (needed)", NULL},
    {"--out", "M.json", NULL, 0, 0, "the same as -o", NULL},
    {"--setting", "ID", "the dataset's", 0, 0, "the setting (must be the dataset's)", NULL},
    {"--epochs", "N", "300", 1, 1000000, "epochs at most", NULL},
    {"--patience", "N", "30", 0, 1000000, "epochs without progress before stopping", NULL},
    {"--minibatch", "N", "16", 1, 100000, "rows per step", NULL},
    {"--seed", "S", "1", 0, (double)INT64_MAX, "the seed", NULL},
    {"--lr", "X", "0.001", 1e-9, 10, "the learning rate", NULL},
    {"--weight-decay", "X", "1e-5", 0, 10, "Adam's weight decay", NULL},
    {"--val-frac", "F", "0.3", 0, 0.9, "the samples kept for validation", NULL},
    {"--gpus-file", "FILE", "assets/gpus.json", 0, 0, "the GPU catalog", NULL},
    {"--json", NULL, NULL, 0, 0, "print the result as JSON", NULL},
    CLI_END,
};
const struct cli_spec cmd_transfer_sa_spec = {
    "transfer --from SA.json", "a setting-aware inspector fine-tuned for one setting",
    TRANSFER_SA_USAGE, transfer_sa_opts, NULL};

int cmd_transfer_sa(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_transfer_sa_spec)) return c.rc;
    struct dp_sa_tune_opts o;
    dp_sa_tune_opts_default(&o);
    const char *from = cli_value(&c, "--from"), *dataset = cli_value(&c, "--dataset");
    const char *out = cli_value(&c, "-o"), *setting = cli_value(&c, "--setting");
    const char *gpus_file = cli_value(&c, "--gpus-file");
    if (!out) out = cli_value(&c, "--out");
    bool json = cli_flag(&c, "--json");
    optim_options(&c, &o.epochs, &o.patience, &o.batch, &o.seed, &o.lr, &o.weight_decay);
    cli_double(&c, "--val-frac", 0, 0.9, &o.val_frac);
    int rc = 0;
    struct dp_gpu_catalog *cat = NULL;
    struct dp_sa_inspector *sa = NULL;
    struct dp_dataset ds;
    dp_dataset_init(&ds, NULL);
    if (c.bad || !cli_check_unused(&c)) {
        rc = cli_usage("transfer", TRANSFER_SA_USAGE, "bad arguments (options of a per-setting "
                       "transfer, such as --mode or --recipe, do not apply here)");
        goto done;
    }
    if (!from || !dataset || !out) {
        rc = cli_usage("transfer", TRANSFER_SA_USAGE, "needs --from SA.json, --dataset D.json and "
                       "-o M.json");
        goto done;
    }
    if (!json && isatty(2)) o.progress = on_epoch;
    struct dp_error err = {0};
    struct dp_sa_tune_result res = {0, 0};
    if (dp_sa_load(from, &sa, &err)) {
        bool unreadable = err.status == DP_ERR_IO;
        rc = cli_fail(&err);
        if (!unreadable) /* a file read, but not a setting-aware inspector */
            fprintf(stderr, "driple: transfer: --setting fine-tunes a setting-aware inspector; "
                            "a per-setting inspector transfers without it\n");
        goto done;
    }
    if (dp_gpu_catalog_load_default(gpus_file, &cat, &err) ||
        dp_dataset_load_json(dataset, &ds, &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    o.cancel = cli_cancel_watch();
    enum dp_status st = dp_sa_tune(sa, &ds, cat, setting, &o, &res, &err);
    cli_cancel_unwatch();
    if (o.progress) fputc('\n', stderr);
    if (st) {
        dp_error_prefix(&err, dataset);
        rc = cli_fail(&err);
        goto done;
    }
    struct dp_sa_tuning *tu = &dp_sa_provenance_mut(sa)->tuned;
    snprintf(tu->dataset, sizeof tu->dataset, "%s", dataset);
    snprintf(tu->base, sizeof tu->base, "%s", from);
    if (dp_sa_save(sa, out, dp_sa_body_path(sa), &err)) {
        rc = cli_fail(&err);
        goto done;
    }
    if (json) {
        struct dp_jw *w = dp_jw_new();
        dp_jw_str(w, "inspector", out);
        dp_jw_str(w, "base", from);
        dp_jw_str(w, "dataset", dataset);
        dp_jw_str(w, "setting", tu->setting);
        dp_jw_str(w, "data", tu->data);
        dp_jw_int(w, "n_train", tu->n_train);
        dp_jw_int(w, "n_val", tu->n_val);
        dp_jw_int(w, "epochs", tu->epochs);
        dp_jw_num(w, "seconds", tu->seconds);
        dp_jw_num(w, "train_loss_before", res.train_loss_before);
        dp_jw_num(w, "train_loss_after", res.train_loss_after);
        dp_jw_bool(w, "interval_recalibrated", tu->n_val > 0);
        jw_sa_eval(w, "val_before", &tu->before);
        jw_sa_eval(w, "val_after", &tu->after);
        rc = cmd_json_emit(w);
        goto done;
    }
    printf("%s%s: %s fine-tuned for %s on %d %s samples of %s (%d validate), %d epochs, %.2f s; "
           "training loss %.4f -> %.4f\n", cli_cancelled() ? "(cancelled: the best so far) " : "",
           out, from, tu->setting, tu->n_train + tu->n_val, tu->data, dataset, tu->n_val,
           tu->epochs, tu->seconds, res.train_loss_before, res.train_loss_after);
    if (tu->n_val) {
        printf("on the %d validation samples (the 80%% interval recalibrated on them):\n",
               tu->n_val);
        print_eval_pair(&tu->before, &tu->after);
    } else {
        printf("one sample: no validation, the interval is the base's\n");
    }
done:
    dp_sa_free(sa);
    dp_dataset_free(&ds);
    dp_gpu_catalog_free(cat);
    cli_done(&c);
    return rc;
}
