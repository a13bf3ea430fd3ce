/* cmd_explore.c: `driple explore`: the explorer's options; the explorer itself is tui/. */
#include <stdio.h>

#include "../tui/explore.h"
#include "cli.h"
#include "cmd.h"
#include "cmd_util.h"

#define EXPLORE_USAGE                                                                             \
    "driple explore [GRAPH] [--settings FILE] [--gpus FILE] [--batch N] [--exported-batch N]\n" \
    "       [--no-color]"

int cmd_explore(int argc, char **argv) {
    struct cli c;
    if (!cli_init(&c, argc, argv, "explore")) return 1;
    struct tui_opts o = {0};
    struct dp_import_opts io;
    int64_t batch = 0, bench = 0, rows = 24, cols = 80;
    if (cli_flag(&c, "--help") || cli_flag(&c, "-h")) {
        cli_done(&c);
        printf("usage: %s\n\n"
               "The explorer: predictions for a what-if cluster setting, live. GRAPH: driple-graph/1\n"
               "JSON, a TensorFlow .pbtxt or an .onnx file (default: samples/graphs/resnet50.json).\n"
               "Keys: ? in the explorer lists them all. NO_COLOR (or --no-color) turns colours off.\n",
               EXPLORE_USAGE);
        return 0;
    }
    o.app.settings = cli_value(&c, "--settings");
    o.app.gpus = cli_value(&c, "--gpus");
    o.app.weights = cli_value(&c, "--op-weights");
    o.bench_seq = cli_value(&c, "--bench-seq");
    o.no_color = cli_flag(&c, "--no-color");
    o.json = cli_flag(&c, "--json");
    cmd_import_opts(&c, &io);
    cli_int(&c, "--batch", 1, 65536, &batch);
    cli_int(&c, "--bench-keys", 1, 1000000, &bench);
    cli_int(&c, "--rows", LAYOUT_MIN_ROWS, 1000, &rows);
    cli_int(&c, "--cols", LAYOUT_MIN_COLS, 1000, &cols);
    o.app.graph = cli_positional(&c, 0);
    o.app.batch = batch;
    o.app.exported_batch = io.exported_batch;
    if (!cli_check_unused(&c)) {
        cli_done(&c);
        return cli_usage("explore", EXPLORE_USAGE, "bad arguments");
    }
    cli_done(&c);
    o.bench_keys = (long)bench;
    o.rows = (int)rows;
    o.cols = (int)cols;
    cli_signals_also(tui_restore_terminal); /* every other ending signal gives the tty back */
    return tui_explore(&o);
}
