/* cmd_bench.c: placeholder until its owner lands it. */
#include "cli.h"
#include "cmd.h"

int cmd_bench(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("bench", "driple help", "not implemented yet");
}

