/* cmd_dataset.c: placeholder until its owner lands it. */
#include "cli.h"
#include "cmd.h"

int cmd_dataset(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("dataset", "driple help", "not implemented yet");
}

