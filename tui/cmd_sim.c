/* cmd_sim.c: placeholder until its owner lands it. */
#include "cli.h"
#include "cmd.h"

int cmd_simulate(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("simulate", "driple help", "not implemented yet");
}

int cmd_trace(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("trace", "driple help", "not implemented yet");
}

int cmd_calibrate(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_usage("calibrate", "driple help", "not implemented yet");
}

