/* cmd_graph.c: placeholder until its owner lands it. */
#include "cli.h"
#include "cmd.h"

int cmd_graph(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("graph", "driple help", "not implemented yet");
}

int bench_coarsen(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("bench_coarsen", "driple help", "not implemented yet");
}
