/* cmd_zoo.c: placeholder until its owner lands it. */
#include "cli.h"
#include "cmd.h"

int cmd_zoo(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("zoo", "driple help", "not implemented yet");
}

