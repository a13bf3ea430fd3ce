/* cmd_explore.c: placeholder until its owner lands it. */
#include "cli.h"
#include "cmd.h"

int cmd_explore(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("explore", "driple help", "not implemented yet");
}

