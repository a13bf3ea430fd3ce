/* train_run.c: what train, transfer and inspector share (train_run.h). */
#include "train_run.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dp/clock.h"
#include "dp/json_out.h"
#include "dp/metrics.h"



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

void run_print_eval(FILE *f, const struct dp_provenance *p) {
    fprintf(f, "%-22s %9s %11s %8s   %9s %11s %8s\n", "output", "val MAPE%", "val RMSE", "val R2",
            "test MAPE%", "test RMSE", "test R2");
    for (int o = 0; o < DP_N_OUTPUTS; o++)
        fprintf(f, "%-22s %9.3g %11.4g %8.3f   %9.3g %11.4g %8.3f\n", dp_outputs[o].name,
                p->val.mape[o], p->val.rmse[o], p->val.r2[o], p->test.mape[o], p->test.rmse[o],
                p->test.r2[o]);
    fprintf(f, "MAPE: mean |pred - label| / |label| over labels >= %g (ms, %%, MB/s); RMSE in the "
            "output's unit; R2 = 1 - SSE / SS about the labels' mean (nan: labels constant)\n",
            DP_MAPE_FLOOR);
}

void run_jw_eval(struct dp_jw *w, const char *key, const struct dp_eval *e) {
    const char *names[3] = {"mape", "rmse", "r2"};
    const double *vals[3] = {e->mape, e->rmse, e->r2};
    dp_jw_object(w, key);
    for (int k = 0; k < 3; k++) {
        dp_jw_array(w, names[k]);
        for (int o = 0; o < DP_N_OUTPUTS; o++) dp_jw_num(w, NULL, vals[k][o]);
        dp_jw_end(w);
    }
    dp_jw_end(w);
}

void run_jw_result(struct dp_jw *w, const char *label, const struct dp_inspector *insp,
                   const struct dp_train_result *r) {
    const struct dp_provenance *p = dp_inspector_provenance(insp);
    dp_jw_object(w, label);
    dp_jw_str(w, "origin", p->origin);
    dp_jw_str(w, "mode", p->mode);
    dp_jw_fixed(w, "seconds", r->seconds, 6);
    dp_jw_fixed(w, "embed_seconds", r->embed_seconds, 6);
    dp_jw_int(w, "epochs", r->epochs_run);
    dp_jw_int(w, "best_epoch", r->best_epoch);
    dp_jw_bool(w, "cancelled", r->cancelled);
    dp_jw_num(w, "first_train_loss", r->first_train_loss);
    dp_jw_num(w, "best_val_loss", r->best_val_loss);
    dp_jw_num(w, "mape_floor", DP_MAPE_FLOOR);
    dp_jw_int(w, "n_train", r->split.n_train);
    dp_jw_int(w, "n_val", r->split.n_val);
    dp_jw_int(w, "n_test", r->split.n_test);
    dp_jw_num(w, "test_mape_mean", dp_mape_mean(p->test.mape));
    run_jw_eval(w, "val", &p->val);
    run_jw_eval(w, "test", &p->test);
    dp_jw_end(w);
}


const struct cli_opt run_train_table[] = {
    {"--recipe", "driple-c|paper", "driple-c", 0, 0,
     "the training recipe (its defaults; options after it override)", NULL},
    {"--split", "random|models", "random", 0, 0,
     "validation/test split: random, or whole model families held out", NULL},
    {"--target", "max|range|log|base", "log (paper: max; transfer: base)", 0, 0,
     "how the labels are normalised (base: the base's kind, refitted; transfer only)", NULL},
    {"--epochs", "N", "300 (paper: 200)", 1, 1000000, "epochs at most", NULL},
    {"--patience", "P", "40 (paper: 20)", 0, 1000000,
     "epochs without progress before stopping", NULL},
    {"--seed", "S", "1", 0, (double)INT64_MAX, "the split's and initialisation's seed", NULL},
    {"--minibatch", "N", "32", 1, 100000, "graphs per step", NULL},
    {"--hidden", "N", "64", 1, 4096, "hidden units per layer", NULL},
    {"--lr", "L", "0.01 (paper: 0.003)", 1e-9, 10, "the learning rate", NULL},
    {"--lr-decay", "F", "0.5 (paper: 1)", 1e-6, 1, "the learning rate's factor after a plateau",
     NULL},
    {"--lr-plateau", "E", "10 (paper: 0, never)", 0, 1000000,
     "epochs without progress before the decay", NULL},
    {"--weight-decay", "W", "1e-6", 0, 10, "Adam's weight decay", NULL},
    CLI_END,
};

bool run_init(struct run_cmd *r, int argc, char **argv, const struct cli_spec *spec) {
    memset(r, 0, sizeof *r);
    if (!cli_init(&r->c, argc, argv, spec)) return false;
    r->cmd = spec->cmd;
    r->usage = spec->usage;
    dp_dataset_init(&r->ds, NULL);
    return true;
}

void run_free(struct run_cmd *r) {
    dp_train_result_free(&r->res);
    dp_inspector_free(r->insp);
    dp_dataset_free(&r->ds);
    cli_done(&r->c);
}

bool run_recipe_opts(struct run_cmd *r) {
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

bool run_train_opts(struct run_cmd *r) {
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

void run_watch_start(struct run_cmd *r) {
    r->ps = (struct progress_state){isatty(2) != 0, false, 0};
    r->o.progress = on_progress;
    r->o.ud = &r->ps;
    r->o.cancel = cli_cancel_watch();
}

void run_watch_stop(struct run_cmd *r) {
    cli_cancel_unwatch();
    if (r->ps.tty) fputc('\n', stderr); /* end the bar's line */
}

/* The --json document of train and transfer, opened with the inspector written, where it came
 * from (src_key "dataset" or "base": src) and the dataset's setting; NULL when out of memory. */
struct dp_jw *run_jw_head(const struct run_cmd *r, const char *out, const char *src_key,
                                 const char *src) {
    struct dp_jw *w = dp_jw_new();
    dp_jw_str(w, "inspector", out);
    dp_jw_str(w, src_key, src);
    dp_jw_str(w, "setting", r->ds.setting);
    return w;
}

/* The text summary's opening words when Ctrl-C stopped the run. */
const char *run_cancelled_note(const struct dp_train_result *res) {
    return res->cancelled ? "interrupted, kept the best so far; " : "";
}



void run_jw_sa_outputs(struct dp_jw *w, const struct dp_sa_eval *e) {
    dp_jw_array(w, "outputs");
    for (int k = 0; k < DP_SA_N_OUT; k++) {
        dp_jw_object(w, NULL);
        dp_jw_str(w, "name", dp_sa_output_name(k));
        dp_jw_num(w, "mape", e->mape[k]);
        dp_jw_num(w, "r2", e->r2[k]);
        dp_jw_num(w, "coverage", e->coverage[k]);
        dp_jw_end(w);
    }
    dp_jw_end(w);
}
