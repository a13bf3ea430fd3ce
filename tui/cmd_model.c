/* cmd_model.c: placeholder until its owner lands it. */
#include "cli.h"
#include "cmd.h"

int cmd_train(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("train", "driple help", "not implemented yet");
}

int cmd_transfer(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("transfer", "driple help", "not implemented yet");
}

int cmd_predict(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("predict", "driple help", "not implemented yet");
}

int cmd_compare(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("compare", "driple help", "not implemented yet");
}

int cmd_inspector(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("inspector", "driple help", "not implemented yet");
}

