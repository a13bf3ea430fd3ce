/* cmd_record.c: placeholder until its owner lands it. */
#include "cli.h"
#include "cmd.h"

int cmd_record(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("record", "driple help", "not implemented yet");
}

int cmd_dataset_add(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("dataset_add", "driple help", "not implemented yet");
}

