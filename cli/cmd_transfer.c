/* cmd_transfer.c: `driple transfer`: an inspector adapted to a new setting from a base (head
 * only, or head and the last graph layer), optionally against training from scratch; from a
 * setting-aware inspector, fine-tuned for one setting (cmd_sa.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"
#include "train_run.h"
#include "dp/dataset.h"
#include "dp/inspector.h"
#include "dp/json_out.h"
#include "dp/sa.h"
#include "dp/train.h"

static const char usage_transfer[] =
    "driple transfer --from BASE.json --dataset D.json -o M.json [--mode head|head+last]\n"
    "       [--recipe driple-c|paper] [--target base|max|range|log] [--epochs N] [--patience P]\n"
    "       [--seed 1] [--split random|models] [--minibatch 32] [--lr L]\n"
    "       [--lr-decay F --lr-plateau E] [--weight-decay 1e-6] [--vs-scratch] [--json]\n"
    "  --target base (default): the base's kind of output transform, refitted on the new labels.\n"
    "driple transfer --from SA.json --dataset D.json -o M.json [--setting ID] [--epochs 300]\n"
    "       [--patience 30] [--minibatch 16] [--lr 0.001] [--weight-decay 1e-5]\n"
    "       [--val-frac 0.3] [--seed 1] [--gpus-file FILE] [--json]\n"
    "  a setting-aware inspector fine-tuned for the dataset's setting (its heads).";

/* A setting-aware base (or --setting) is fine-tuned by cmd_sa.c. */
static bool setting_aware(int argc, char **argv) {
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--setting") || !strncmp(argv[i], "--setting=", 10)) return true;
        const char *v = !strcmp(argv[i], "--from") && i + 1 < argc ? argv[i + 1]
                        : !strncmp(argv[i], "--from=", 7) ? argv[i] + 7 : NULL;
        if (v && dp_sa_file(v)) return true;
    }
    return false;
}

static const struct cli_opt transfer_opts[] = {
    {"--from", "BASE.json", NULL, 0, 0, "the base inspector (needed)", NULL},
    {"--dataset", "D.json", NULL, 0, 0, "the new setting's dataset (needed)", NULL},
    {"-o", "M.json", NULL, 0, 0, "the inspector written (needed)", NULL},
    {"--out", "M.json", NULL, 0, 0, "the same as -o", NULL},
    {"--mode", "head|head+last", "head", 0, 0, "what is retrained", NULL},
    {"--vs-scratch", NULL, NULL, 0, 0, "also train from scratch, to compare", NULL},
    {"--json", NULL, NULL, 0, 0, "print the result as JSON", NULL},
    CLI_MORE(run_train_table),
    CLI_END,
};
const struct cli_spec cmd_transfer_spec = {
    "transfer", "an inspector adapted to a new setting from a base (--from SA.json: fine-tuned)",
    usage_transfer, transfer_opts, NULL};

int cmd_transfer(int argc, char **argv) {
    if (setting_aware(argc, argv)) return cmd_transfer_sa(argc, argv);
    struct run_cmd r;
    if (!run_init(&r, argc, argv, &cmd_transfer_spec)) return r.c.rc;
    int rc = 2;
    struct dp_inspector *base = NULL, *scratch = NULL;
    struct dp_train_result sres;
    memset(&sres, 0, sizeof sres);
    if (!run_recipe_opts(&r)) goto done;
    r.o.target = DP_TARGET_BASE;
    const char *from = cli_value(&r.c, "--from");
    const char *dataset = cli_value(&r.c, "--dataset");
    const char *out = cli_value(&r.c, "-o");
    const char *mode = cli_value(&r.c, "--mode");
    bool json = cli_flag(&r.c, "--json"), vs = cli_flag(&r.c, "--vs-scratch");
    if (!out) out = cli_value(&r.c, "--out");
    if (!run_train_opts(&r)) goto done;
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
    run_watch_start(&r);
    enum dp_status st = dp_transfer(base, &r.ds, &r.o, &r.insp, &r.res, &err);
    if (!st && vs && !cli_cancelled()) {
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
    run_watch_stop(&r);
    if (st) { cli_fail(&err); goto done; }
    if (dp_inspector_save(r.insp, out, base, from, &err)) { cli_fail(&err); goto done; }
    const struct dp_train_result *res = &r.res;
    if (json) {
        struct dp_jw *w = run_jw_head(&r, out, "base", from);
        run_jw_result(w, "transfer", r.insp, res);
        if (scratch) {
            run_jw_result(w, "scratch", scratch, &sres);
            dp_jw_num(w, "speedup", res->seconds > 0 ? sres.seconds / res->seconds : NAN);
        }
        rc = cmd_json_emit(w);
        goto done;
    }
    printf("%s%s: transferred from %s (%s mode) to %s: %d epochs (best %d), %.3f s "
           "(embeddings %.3f s)\n", run_cancelled_note(res),
           out, from, dp_inspector_provenance(r.insp)->mode,
           r.ds.setting[0] ? r.ds.setting : dataset, res->epochs_run, res->best_epoch,
           res->seconds, res->embed_seconds);
    run_print_eval(stdout, dp_inspector_provenance(r.insp));
    if (scratch)
        printf("\nfrom scratch on the same split: %.3f s, %d epochs, mean test MAPE %.3g%% "
               "(transfer: %.3g%%); transfer is %.1fx faster\n", sres.seconds, sres.epochs_run,
               dp_mape_mean(dp_inspector_provenance(scratch)->test.mape),
               dp_mape_mean(dp_inspector_provenance(r.insp)->test.mape),
               res->seconds > 0 ? sres.seconds / res->seconds : NAN);
    rc = 0;
done:
    dp_train_result_free(&sres);
    dp_inspector_free(scratch);
    dp_inspector_free(base);
    run_free(&r);
    return rc;
}
