/* main.c: the `driple` entry point: the command table (every command, its sub-commands and their
 * option tables), dispatch, help (`driple help CMD` is `driple CMD --help`), --version, and the
 * generated man page and completion. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "dp/compute.h"
#include "dp/status.h"
#include "version.h" /* DRIPLE_VERSION, written by the Makefile from VERSION and git describe */

#define LEAF(spec) (const struct cmd_sub[]){{"", &(spec)}, {NULL, NULL}}

static const struct cmd_entry commands[] = {
    {"explore",   cmd_explore,   "[GRAPH] [--settings FILE] [--batch N] [--exported-batch N] "
                                 "[--no-color]   the explorer", LEAF(cmd_explore_spec)},
    {"graph",     cmd_graph,     "info|import|coarsen|weights ...   inspect, convert, coarsen",
     (const struct cmd_sub[]){{"info", &cmd_graph_info_spec}, {"import", &cmd_graph_import_spec},
                              {"coarsen", &cmd_graph_coarsen_spec},
                              {"weights", &cmd_graph_weights_spec}, {NULL, NULL}}},
    {"zoo",       cmd_zoo,       "list | build MODEL [--batch N] -o FILE   training graphs of known models",
     (const struct cmd_sub[]){{"list", &cmd_zoo_list_spec}, {"build", &cmd_zoo_build_spec},
                              {"generate", &cmd_zoo_generate_spec}, {NULL, NULL}}},
    {"simulate",  cmd_simulate,  "GRAPH --setting ID | --gpu ... [--json]   training simulation (PS or all-reduce)",
     LEAF(cmd_simulate_spec)},
    {"trace",     cmd_trace,     "extract TRACE.csv [--net NET.csv] [--json]   labels from traces",
     (const struct cmd_sub[]){{"extract", &cmd_trace_extract_spec}, {NULL, NULL}}},
    {"calibrate", cmd_calibrate, "[--json] [--rows]   simulator vs 834 published runs, leave-one-GPU-out",
     LEAF(cmd_calibrate_spec)},
    {"dataset",   cmd_dataset,   "build | eval | add ...   datasets of graphs and labels",
     (const struct cmd_sub[]){{"build", &cmd_dataset_build_spec}, {"add", &cmd_dataset_add_spec},
                              {"sweep", &cmd_dataset_sweep_spec},
                              {"extract", &cmd_dataset_extract_spec},
                              {"eval", &cmd_inspector_eval_spec}, {NULL, NULL}}},
    {"train",     cmd_train,     "--dataset D.json -o M.json ...   train an inspector",
     (const struct cmd_sub[]){{"", &cmd_train_spec}, {"--sweep SWEEP.json", &cmd_train_sa_spec},
                              {NULL, NULL}}},
    {"transfer",  cmd_transfer,  "--from BASE.json|SA.json --dataset D.json -o M.json   transfer, fine-tuning",
     (const struct cmd_sub[]){{"", &cmd_transfer_spec}, {"--setting ID", &cmd_transfer_sa_spec},
                              {NULL, NULL}}},
    {"predict",   cmd_predict,   "GRAPH|--grouped FILE --inspector M|--setting ID|--gpu ... [--json]",
     LEAF(cmd_predict_spec)},
    {"compare",   cmd_compare,   "GRAPH [--settings FILE] [--setting ID|--gpu ...] [--json]   every setting side by side",
     LEAF(cmd_compare_spec)},
    {"explain",   cmd_explain,   "GRAPH --inspector M|--setting ID|--gpu ... [--metric NAME] [--svg FILE]",
     LEAF(cmd_explain_spec)},
    {"inspector", cmd_inspector, "info|import-torch|import-json|eval ...   inspector model files",
     (const struct cmd_sub[]){{"info", &cmd_inspector_info_spec},
                              {"import-torch", &cmd_inspector_import_torch_spec},
                              {"import-json", &cmd_inspector_import_json_spec},
                              {"eval", &cmd_inspector_eval_spec}, {NULL, NULL}}},
    {"record",    cmd_record,    "[-o PREFIX] -- COMMAND ...   measure a training job's traces",
     LEAF(cmd_record_spec)},
    {"plan",      cmd_plan,      "MODEL --gpus N --gpu NAME [--json]   plan LLM training: tp x pp x dp x ZeRO x recompute",
     LEAF(cmd_plan_spec)},
    {"bench",     cmd_bench,     "predict|embed|train|transfer|kernels|coarsen|explain|compare ... --json   benchmarks",
     (const struct cmd_sub[]){{"predict", &cmd_bench_predict_spec},
                              {"embed", &cmd_bench_embed_spec},
                              {"kernels", &cmd_bench_kernels_spec},
                              {"train", &cmd_bench_train_spec},
                              {"transfer", &cmd_bench_transfer_spec},
                              {"coarsen", &cmd_bench_coarsen_spec},
                              {"explain", &cmd_bench_explain_spec},
                              {"compare", &cmd_bench_compare_spec}, {NULL, NULL}}},
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static const struct cmd_entry *find(const char *name) {
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(name, commands[i].name)) return &commands[i];
    return NULL;
}

static bool is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

/* `driple help CMD [SUB]`: the same as `driple CMD [SUB] --help`. */
static int help_of(int argc, char **argv) {
    if (argc < 1) {
        help_usage(commands, N_COMMANDS, stdout);
        return 0;
    }
    const struct cmd_entry *e = find(argv[0]);
    if (!e) {
        fprintf(stderr, "driple: help: unknown command '%s'\n\n", argv[0]);
        help_usage(commands, N_COMMANDS, stderr);
        return 2;
    }
    if (help_is_group(e) && argc < 2) {
        help_group(e, stdout);
        return 0;
    }
    static char help_word[] = "--help";
    char *args[3] = {argc > 1 ? argv[1] : help_word, help_word, NULL};
    return e->fn(argc > 1 ? 2 : 1, args);
}

/* The version and how this build computes: the product backends, the CPU and its kernel level. */
static void print_version(void) {
    const char *blas = dp_kernels_openblas(), *note = dp_kernels_note();
    printf("driple %s\n", DRIPLE_VERSION);
    printf("kernels: %s level on %s; products: %s (DRIPLE_KERNELS: %s)\n", dp_kernels(),
           dp_kernels_cpu(), dp_kernels_backend(), DP_KERNELS_ALLOWED);
    printf("openblas: %s\n", blas ? blas : "none");
    if (note) printf("note: %s\n", note);
    printf("auto's table: %s\n", dp_kernels_table());
}

int main(int argc, char **argv) {
    cli_signals_install();
    if (argc < 2) return cmd_explore(0, argv + 1);
    const char *name = argv[1];
    if (!strcmp(name, "help")) return help_of(argc - 2, argv + 2);
    if (is_help(name)) {
        help_usage(commands, N_COMMANDS, stdout);
        return 0;
    }
    /* $DRIPLE_KERNELS and the kernel table, read before any command computes with them */
    struct dp_error err = {0};
    if (dp_kernels_init(&err)) {
        fprintf(stderr, "driple: %s\n", err.msg);
        return err.status == DP_ERR_INVALID && !strncmp(err.msg, "DRIPLE_KERNELS", 14) ? 2 : 1;
    }
    if (!strcmp(name, "--version")) {
        print_version();
        return 0;
    }
    if (!strcmp(name, "--man")) {
        help_man(commands, N_COMMANDS, DRIPLE_VERSION);
        return 0;
    }
    if (!strcmp(name, "--completion")) {
        if (argc != 3 || strcmp(argv[2], "bash")) {
            fprintf(stderr, "driple: --completion: expected 'bash'\n");
            return 2;
        }
        help_completion_bash(commands, N_COMMANDS);
        return 0;
    }
    if (!strcmp(name, "--options-dump")) {
        help_dump(commands, N_COMMANDS);
        return 0;
    }
    const struct cmd_entry *e = find(name);
    if (e) {
        if (help_is_group(e) && argc > 2 && is_help(argv[2])) {
            help_group(e, stdout);
            return 0;
        }
        return e->fn(argc - 2, argv + 2);
    }
    /* `driple GRAPH [options]` opens the explorer on that graph; a name that looks like a file
     * (a path or an extension) but is not there is the explorer's to report, as it is for
     * `driple explore` */
    if (name[0] == '-' || access(name, R_OK) == 0 || strchr(name, '/') || strchr(name, '.'))
        return cmd_explore(argc - 1, argv + 1);
    fprintf(stderr, "driple: unknown command '%s'\n\n", name);
    help_usage(commands, N_COMMANDS, stderr);
    return 2;
}
