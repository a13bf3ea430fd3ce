/* cmd_explain.c: placeholder until its owner lands it. */
#include "cli.h"
#include "cmd.h"

int cmd_explain(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("explain", "driple help", "not implemented yet");
}

int bench_explain(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("bench_explain", "driple help", "not implemented yet");
}
