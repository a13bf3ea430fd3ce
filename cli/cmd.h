/* cmd.h: the `driple` subcommands. Each takes the arguments after its own name and returns the
 * process exit status (0 ok, 1 error, 2 usage). One file per command: cmd_<command>.c (a
 * command's subcommands live with it). */
#ifndef DRIPLE_CMD_H
#define DRIPLE_CMD_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"

int cmd_explore(int argc, char **argv);   /* cmd_explore.c: the ncurses explorer */
int cmd_graph(int argc, char **argv);     /* cmd_graph.c: info | import | coarsen | weights */
int cmd_zoo(int argc, char **argv);       /* cmd_zoo.c: list | build */
int cmd_simulate(int argc, char **argv);  /* cmd_simulate.c */
int cmd_trace(int argc, char **argv);     /* cmd_trace.c: extract */
int cmd_calibrate(int argc, char **argv); /* cmd_calibrate.c */
int cmd_dataset(int argc, char **argv);   /* cmd_dataset.c: build | eval | add | sweep | extract */
int cmd_dataset_sweep(int argc, char **argv);   /* cmd_sweep.c: dataset sweep */
int cmd_dataset_extract(int argc, char **argv); /* cmd_sweep.c: dataset extract */
int cmd_dataset_build(int argc, char **argv); /* cmd_dataset_build.c: dataset build */
int cmd_train(int argc, char **argv);     /* cmd_train.c */
int cmd_train_sa(int argc, char **argv);  /* cmd_sa.c: train --sweep (setting-aware) */
int cmd_transfer(int argc, char **argv);  /* cmd_transfer.c */
int cmd_transfer_sa(int argc, char **argv); /* cmd_sa.c: transfer --from SA.json (fine-tuning) */
int cmd_predict(int argc, char **argv);   /* cmd_predict.c */
int cmd_compare(int argc, char **argv);   /* cmd_compare.c */
int cmd_inspector(int argc, char **argv); /* cmd_inspector.c: info | import-* | eval */
int cmd_bench(int argc, char **argv);     /* cmd_bench.c: predict | train | transfer | coarsen */
int cmd_explain(int argc, char **argv);   /* cmd_explain.c */
int cmd_record(int argc, char **argv);    /* cmd_record.c */
int cmd_plan(int argc, char **argv);      /* cmd_plan.c: the LLM training planner */
int bench_coarsen(int argc, char **argv); /* cmd_graph.c: `driple bench coarsen` */
int bench_explain(int argc, char **argv); /* cmd_explain.c: `driple bench explain` */
int bench_compare(int argc, char **argv); /* cmd_compare.c: `driple bench compare` */


/* Each command's option table, as its cli_init reads it (the tables are static in the command's
 * file, next to the code that reads them). main.c's command table lists them all for `driple
 * help`, the man page and the completion. */
extern const struct cli_spec cmd_explore_spec, cmd_simulate_spec, cmd_calibrate_spec,
    cmd_predict_spec, cmd_compare_spec, cmd_explain_spec, cmd_record_spec;
extern const struct cli_spec cmd_graph_info_spec, cmd_graph_import_spec, cmd_graph_coarsen_spec,
    cmd_graph_weights_spec;
extern const struct cli_spec cmd_zoo_list_spec, cmd_zoo_build_spec, cmd_zoo_generate_spec;
extern const struct cli_spec cmd_trace_extract_spec;
extern const struct cli_spec cmd_dataset_build_spec, cmd_dataset_add_spec,
    cmd_dataset_sweep_spec, cmd_dataset_extract_spec;
extern const struct cli_spec cmd_train_spec, cmd_train_sa_spec, cmd_transfer_spec,
    cmd_transfer_sa_spec;
extern const struct cli_spec cmd_inspector_info_spec, cmd_inspector_import_torch_spec,
    cmd_inspector_import_json_spec, cmd_inspector_eval_spec;
extern const struct cli_spec cmd_bench_predict_spec, cmd_bench_train_spec,
    cmd_bench_transfer_spec, cmd_bench_coarsen_spec, cmd_bench_explain_spec,
    cmd_bench_compare_spec, cmd_bench_embed_spec, cmd_bench_kernels_spec, cmd_plan_spec;

/* ---- the command table and what is generated from it (cmd_help.c) ---- */
/* One way in to a spec: the words after the command name that reach it ("info" for `graph
 * info`; "" for a command without sub-commands; "--sweep FILE" for a variant an option
 * selects). */
struct cmd_sub {
    const char            *words;
    const struct cli_spec *spec;
};
struct cmd_entry {
    const char           *name;
    int (*fn)(int argc, char **argv);
    const char           *help; /* one line for the command list */
    const struct cmd_sub *subs; /* ended by {NULL, NULL} */
};
/* True when e has sub-commands (its first way in is a word, not "" or an option). */
bool help_is_group(const struct cmd_entry *e);
/* The list of commands (driple --help). */
void help_usage(const struct cmd_entry *cmds, size_t n, FILE *f);
/* A command with sub-commands: its sub-commands and their summaries (driple graph --help). */
void help_group(const struct cmd_entry *e, FILE *f);
/* The man page driple.1 (roff) of every command's table on stdout. */
void help_man(const struct cmd_entry *cmds, size_t n, const char *version);
/* A bash completion script for every command's table on stdout. */
void help_completion_bash(const struct cmd_entry *cmds, size_t n);
/* Every table row as "words<TAB>option<TAB>value<TAB>default<TAB>lo<TAB>hi" for the tests
 * (driple --options-dump; a command without options gets one line with an empty option). */
void help_dump(const struct cmd_entry *cmds, size_t n);

#endif
