/* cmd_explore.c: `driple explore`: the explorer's options; the explorer itself is tui/. */
#include <stdio.h>
#include <string.h>

#include "dp/settings.h"
#include "../tui/explore.h"
#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"

#define EXPLORE_USAGE                                                                             \
    "driple explore [GRAPH] [--settings FILE] [--gpus FILE] [--batch N] [--exported-batch N]\n" \
    "       [--setting ID | --gpu NAME " CMD_CLUSTER_USAGE "]\n"                                 \
    "       [--setting-aware FILE|none] [--no-color]"

static void explore_more(FILE *f) {
    fprintf(f, "The explorer: predictions for a what-if cluster setting, live. GRAPH: driple-graph/1\n"
               "JSON, a TensorFlow .pbtxt or an .onnx file (default: samples/graphs/resnet50.json).\n"
               "Keys: ? in the explorer lists them all. NO_COLOR (or --no-color) turns colours off.\n");
}

static const struct cli_opt explore_opts[] = {
    {"--setting", "ID", "the list's first", 0, 0, "the setting to open at", NULL},
    {"--settings", "FILE", "assets/settings/default.json", 0, 0, "the setting list", NULL},
    {"--op-weights", "FILE", "assets/op_weights.json", 0, 0, "the op-type weights", NULL},
    {"--setting-aware", "FILE|none", "the shipped one", 0, 0,
     "the setting-aware inspector (none: the list's per-setting ones)", NULL},
    {"--batch", "N", "the graph's", 1, (double)DP_BATCH_MAX, "the batch size to open at", NULL},
    {"--no-color", NULL, NULL, 0, 0, "no colours (as NO_COLOR does)", NULL},
    {"--bench-seq", "KEYS", NULL, 0, 0, "benchmarks: the keys to replay, without a terminal",
     NULL},
    {"--bench-keys", "N", NULL, 1, 1000000, "benchmarks: replay --bench-seq N times", NULL},
    {"--rows", "N", CLI_STR(LAYOUT_MIN_ROWS), LAYOUT_MIN_ROWS, 1000,
     "benchmarks: the screen's rows", NULL},
    {"--cols", "N", CLI_STR(LAYOUT_MIN_COLS), LAYOUT_MIN_COLS, 1000,
     "benchmarks: the screen's columns", NULL},
    {"--json", NULL, NULL, 0, 0, "benchmarks: the figures as JSON", NULL},
    CLI_MORE(cmd_import_table),
    CLI_MORE(cmd_cluster_table),
    CLI_END,
};
const struct cli_spec cmd_explore_spec = {
    "explore", "the interactive explorer (driple GRAPH opens it too)", EXPLORE_USAGE,
    explore_opts, explore_more};

int cmd_explore(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, &cmd_explore_spec)) return c.rc;
    struct tui_opts o = {0};
    struct dp_import_opts io;
    int64_t batch = 0, bench = 0, rows = 24, cols = 80;
    struct cmd_cluster cl;
    const char *setting = cli_value(&c, "--setting");
    bool cluster_ok = cmd_cluster_opts(&c, &cl);
    o.app.settings = cli_value(&c, "--settings");
    o.app.gpus = cl.gpus;
    o.app.weights = cli_value(&c, "--op-weights");
    const char *sa = cli_value(&c, "--setting-aware");
    o.app.sa = sa && !strcmp(sa, "none") ? "" : sa;
    o.bench_seq = cli_value(&c, "--bench-seq");
    o.no_color = cli_flag(&c, "--no-color");
    o.json = cli_flag(&c, "--json");
    cmd_import_opts(&c, &io);
    cli_int(&c, "--batch", 1, DP_BATCH_MAX, &batch);
    cli_int(&c, "--bench-keys", 1, 1000000, &bench);
    cli_int(&c, "--rows", LAYOUT_MIN_ROWS, 1000, &rows);
    cli_int(&c, "--cols", LAYOUT_MIN_COLS, 1000, &cols);
    o.app.graph = cli_positional(&c, 0);
    o.app.batch = batch;
    o.app.exported_batch = io.exported_batch;
    if (!cluster_ok || !cli_check_unused(&c)) {
        cli_done(&c);
        return cli_usage("explore", EXPLORE_USAGE, "bad arguments");
    }
    /* the setting to open at: an id as given (the explorer finds it as --setting does
     * everywhere), or the cluster options' setting by its id, which names it */
    bool by_cluster = cmd_cluster_given(&cl) || cmd_cluster_modified(&cl);
    char id[DP_ID_MAX];
    if (setting && by_cluster) {
        cli_done(&c);
        return cli_usage("explore", EXPLORE_USAGE, "give --setting ID or --gpu NAME ..., not both");
    }
    if (by_cluster) {
        struct dp_gpu_catalog *cat = NULL;
        struct dp_error err = {0};
        struct dp_setting s;
        int rc;
        if (dp_gpu_catalog_load_default(cl.gpus, &cat, &err) != DP_OK) {
            cli_done(&c);
            return cli_fail(&err);
        }
        rc = cmd_cluster_setting(&cl, cat, "explore", EXPLORE_USAGE, &s);
        dp_gpu_catalog_free(cat);
        if (rc) {
            cli_done(&c);
            return rc;
        }
        snprintf(id, sizeof id, "%s", s.id);
        setting = id;
    }
    o.app.setting = setting;
    cli_done(&c);
    o.bench_keys = (long)bench;
    o.rows = (int)rows;
    o.cols = (int)cols;
    cli_signals_also(tui_restore_terminal); /* every other ending signal gives the tty back */
    return tui_explore(&o);
}
