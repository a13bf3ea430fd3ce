/* cmd.h: the `driple` subcommands. Each takes the arguments after its own name and returns the
 * process exit status (0 ok, 1 error, 2 usage). One file per command: cmd_<command>.c (a
 * command's subcommands live with it). */
#ifndef DRIPLE_CMD_H
#define DRIPLE_CMD_H

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

#endif
