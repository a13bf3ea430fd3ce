/* main.c: the `driple` entry point: dispatches to a subcommand, or opens the explorer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"

#define DRIPLE_VERSION "0.1.0"

static const struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"explore",   cmd_explore,   "[GRAPH] [--settings FILE] [--batch N] [--exported-batch N] "
                                 "[--no-color]   the explorer"},
    {"graph",     cmd_graph,     "info|import|coarsen|weights ...   inspect, convert, coarsen"},
    {"zoo",       cmd_zoo,       "list | build MODEL [--batch N] -o FILE   training graphs of known models"},
    {"simulate",  cmd_simulate,  "GRAPH --setting ID | --gpu ... [--json]   training simulation (PS or all-reduce)"},
    {"trace",     cmd_trace,     "extract TRACE.csv [--net NET.csv] [--json]   labels from traces"},
    {"calibrate", cmd_calibrate, "[--json] [--rows]   simulator vs 834 published runs, leave-one-GPU-out"},
    {"dataset",   cmd_dataset,   "build | eval | add ...   datasets of graphs and labels"},
    {"train",     cmd_train,     "--dataset D.json -o M.json ...   train an inspector"},
    {"transfer",  cmd_transfer,  "--from BASE.json|SA.json --dataset D.json -o M.json   transfer, fine-tuning"},
    {"predict",   cmd_predict,   "GRAPH|--grouped FILE --inspector M|--setting ID|--gpu ... [--json]"},
    {"compare",   cmd_compare,   "GRAPH [--settings FILE] [--setting ID|--gpu ...] [--json]   every setting side by side"},
    {"explain",   cmd_explain,   "GRAPH --inspector M|--setting ID|--gpu ... [--metric NAME] [--svg FILE]"},
    {"inspector", cmd_inspector, "info|import-torch|import-json ...   inspector model files"},
    {"record",    cmd_record,    "[-o PREFIX] -- COMMAND ...   measure a training job's traces"},
    {"plan",      cmd_plan,      "MODEL --gpus N --gpu NAME [--json]   plan LLM training: tp x pp x dp x ZeRO x recompute"},
    {"bench",     cmd_bench,     "predict|train|transfer|coarsen ... --json   benchmarks"},
};

static void usage(FILE *f) {
    fprintf(f, "driple %s: predicts how a distributed training job uses GPUs and the network.\n\n"
               "usage: driple [COMMAND] [ARGS...]   (no command: the explorer on a sample)\n\n",
            DRIPLE_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nErrors go to stderr as 'driple: <file>:<where>: <what>' with a non-zero exit.\n");
}

int main(int argc, char **argv) {
    cli_signals_install();
    if (argc < 2) return cmd_explore(0, argv + 1);
    const char *name = argv[1];
    if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(name, "--version")) {
        printf("driple %s\n", DRIPLE_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(name, commands[i].name)) return commands[i].fn(argc - 2, argv + 2);
    /* `driple GRAPH [options]` opens the explorer on that graph; a name that looks like a file
     * (a path or an extension) but is not there is the explorer's to report, as it is for
     * `driple explore` */
    if (name[0] == '-' || access(name, R_OK) == 0 || strchr(name, '/') || strchr(name, '.'))
        return cmd_explore(argc - 1, argv + 1);
    fprintf(stderr, "driple: unknown command '%s'\n\n", name);
    usage(stderr);
    return 2;
}
