/* train_run.h: what the training commands share: a run's state (options from a recipe and the
 * command line, dataset, result), its progress bar and Ctrl-C handling, and how an inspector's
 * errors (MAPE, RMSE, R2 per output) and a run are reported in text and JSON (train, transfer,
 * inspector info and eval). */
#ifndef DRIPLE_TRAIN_RUN_H
#define DRIPLE_TRAIN_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "dp/dataset.h"
#include "dp/inspector.h"
#include "dp/train.h"

struct dp_jw;

struct progress_state {
    bool   tty, quiet;
    double last_draw; /* dp_clock_ms() of the last redraw */
};

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
};


/* Wraps argv for the command of spec (cli_init); false, with r->c.rc the exit status and
 * nothing to free, when the command should end at once (--help, an unknown option, out of
 * memory). */
bool run_init(struct run_cmd *r, int argc, char **argv, const struct cli_spec *spec);
/* The table fragment of the options run_recipe_opts and run_train_opts read. */
extern const struct cli_opt run_train_table[];
/* Frees what the run holds, whichever step failed. */
void run_free(struct run_cmd *r);
/* The recipe's defaults (--recipe, default driple-c) into r->o; the other options override them,
 * so query it first. False, with the message printed and c.bad set, on an unknown recipe. */
bool run_recipe_opts(struct run_cmd *r);
/* The options train and transfer share (epochs, patience, seed, minibatch, hidden, lr and its
 * decay, weight decay, split, target) over r->o's defaults, then the check that every argument
 * was used: query it after the command's own options. False, with the message printed, when
 * any option was bad (exit status 2). */
bool run_train_opts(struct run_cmd *r);
/* Before the run: progress on stderr (a bar on a terminal, a line per epoch otherwise) and Ctrl-C
 * to stop it keeping the best model so far. run_watch_stop undoes both. */
void run_watch_start(struct run_cmd *r);
void run_watch_stop(struct run_cmd *r);
/* The text summary's opening words when Ctrl-C stopped the run ("" otherwise). */
const char *run_cancelled_note(const struct dp_train_result *res);

/* The validation and test errors of p as a table. */
void run_print_eval(FILE *f, const struct dp_provenance *p);
/* e as JSON member key: {"mape": [12], "rmse": [12], "r2": [12]}. */
void run_jw_eval(struct dp_jw *w, const char *key, const struct dp_eval *e);
/* A setting-aware evaluation as "outputs": [{name, mape, r2, coverage}] of its 14 outputs. */
void run_jw_sa_outputs(struct dp_jw *w, const struct dp_sa_eval *e);
/* A run's result as JSON member label: origin, mode, time, epochs, losses, split, errors. */
void run_jw_result(struct dp_jw *w, const char *label, const struct dp_inspector *insp,
                   const struct dp_train_result *r);
/* The --json document of train and transfer, opened with the inspector written, where it came
 * from (src_key "dataset" or "base": src) and the dataset's setting; NULL when out of memory. */
struct dp_jw *run_jw_head(const struct run_cmd *r, const char *out, const char *src_key,
                          const char *src);

#endif
